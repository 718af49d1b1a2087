"""Figures on the web page: palette, compact frames, labels, captions and text alternatives, the
book renderer's HTML, and the book's Sphinx extension (explorer cells, chapter map)."""
import base64
import json
import re
import sys
from pathlib import Path

import numpy as np
import plotly.graph_objects as go
import pytest
from plotly.subplots import make_subplots

from optbook.core import Trace
from optbook.viz import SliderStep, convergence_figure, slider_figure
from optbook.viz.compact import compact_figure, decode_array, encode_array
from optbook.viz.labels import caption, describe, pretty, sanitize
from optbook.viz.renderer import CONFIG, figure_html, figure_spec
from optbook.viz.style import (BACKGROUNDS, DASHES, LEGACY_COLORS, MARKERS, PALETTE, PALETTE_DARK,
                               contrast_ratio, line_style)

ROOT = Path(__file__).resolve().parents[2]


# ---------- palette ----------

def _lab_seen_by(color: str, cvd: str) -> np.ndarray:
    """CIELAB of a colour as seen with a colour-vision deficiency (Machado et al. 2009, severity 1)."""
    machado = {
        "normal": np.eye(3),
        "deutan": np.array([[0.367322, 0.860646, -0.227968], [0.280085, 0.672501, 0.047413],
                            [-0.011820, 0.042940, 0.968881]]),
        "protan": np.array([[0.152286, 1.052583, -0.204868], [0.114503, 0.786281, 0.099216],
                            [-0.003882, -0.048116, 1.051998]]),
    }
    srgb = np.array([int(color[i:i + 2], 16) / 255 for i in (1, 3, 5)])
    lin = np.where(srgb <= 0.04045, srgb / 12.92, ((srgb + 0.055) / 1.055) ** 2.4)
    lin = np.clip(machado[cvd] @ lin, 0, 1)
    xyz = np.array([[0.4124, 0.3576, 0.1805], [0.2126, 0.7152, 0.0722], [0.0193, 0.1192, 0.9505]]) @ lin
    xyz /= np.array([0.95047, 1.0, 1.08883])
    f = np.where(xyz > 0.008856, np.cbrt(xyz), 7.787 * xyz + 16 / 116)
    return np.array([116 * f[1] - 16, 500 * (f[0] - f[1]), 200 * (f[1] - f[2])])


@pytest.mark.parametrize("palette, background", [(PALETTE, BACKGROUNDS["light"]), (PALETTE_DARK, BACKGROUNDS["dark"])])
def test_every_line_colour_has_3_to_1_contrast_with_its_page(palette, background):
    ratios = [contrast_ratio(c, background) for c in palette]
    assert min(ratios) >= 3.0, dict(zip(palette, np.round(ratios, 2)))


@pytest.mark.parametrize("palette", [PALETTE, PALETTE_DARK])
@pytest.mark.parametrize("cvd", ["normal", "deutan", "protan"])
def test_first_six_colours_stay_apart_for_colour_blind_readers(palette, cvd):
    labs = [_lab_seen_by(c, cvd) for c in palette[:6]]
    gaps = [np.linalg.norm(a - b) for i, a in enumerate(labs) for b in labs[i + 1:]]
    assert min(gaps) > 10.0  # CIE76 distance; about 2.3 is a just-noticeable difference


def test_each_method_gets_its_own_dash_and_marker():
    styles = [line_style(i) for i in range(len(PALETTE))]
    assert len({s["line"]["dash"] for s in styles}) == len(PALETTE) == len(DASHES) == len(MARKERS)
    assert len({s["marker"]["symbol"] for s in styles}) == len(PALETTE)
    assert len(PALETTE) == len(PALETTE_DARK)
    assert set(LEGACY_COLORS.values()) <= set(PALETTE)


def test_convergence_lines_differ_by_more_than_colour():
    trs = []
    for name in "ABC":
        tr = Trace(name)
        for v in np.geomspace(1, 1e-6, 100):
            tr.record(objective=v)
        trs.append(tr)
    fig = convergence_figure(trs)
    assert len({t.line.dash for t in fig.data}) == 3 and len({t.marker.symbol for t in fig.data}) == 3
    assert all(t.marker.maxdisplayed for t in fig.data)  # markers spaced along long lines


# ---------- compact frames ----------

def test_float_arrays_become_float32_within_float32_precision():
    x = np.linspace(0, 1, 200)
    enc = encode_array(x)
    assert enc["dtype"] == "f4" and len(base64.b64decode(enc["bdata"])) == 4 * x.size
    np.testing.assert_allclose(decode_array(enc), x, rtol=1e-7)
    wide = np.array([1e-300, 1.0, 2.0] * 5)  # beyond float32: kept exact
    assert encode_array(wide)["dtype"] == "f8"
    ints = np.arange(300)
    assert encode_array(ints)["dtype"] in ("i2", "u2") and np.array_equal(decode_array(encode_array(ints)), ints)
    z = np.arange(12.0).reshape(3, 4)
    assert decode_array(encode_array(z)).shape == (3, 4)
    assert decode_array(["a", "b"]) is None and decode_array([]) is None


def _slider(n_frames=4, n=400):
    grid = np.linspace(0, 1, n)
    steps = [SliderStep(f"{k}", [go.Scatter(x=grid, y=np.sin(grid * (k + 1)), name="moving"),
                                 go.Scatter(x=grid, y=grid ** 2, name="fixed", line=dict(color="#1f77b4"))])
             for k in range(n_frames)]
    return slider_figure(steps, slider_label="frequency k", title="Waves, lambda_k = k")


def test_frames_keep_only_what_changes_and_the_page_shrinks():
    fig = _slider().to_dict()
    small = compact_figure(fig)
    for frame in small["frames"]:
        assert frame["traces"] == [0]  # the fixed trace is stated once, in the figure
        assert set(frame["data"][0]) == {"y"}  # the shared grid and style too
    before, after = len(json.dumps(fig, default=str)), len(json.dumps(small))
    assert after < before / 3, (before, after)
    assert small["data"][1]["line"]["color"] == LEGACY_COLORS["#1f77b4"]  # old default recoloured


def test_compacting_keeps_every_value_a_frame_shows():
    fig = _slider().to_dict()
    small = compact_figure(fig)
    for f_old, f_new in zip(fig["frames"], small["frames"]):
        for i, t in zip(f_new["traces"], f_new["data"]):
            np.testing.assert_allclose(decode_array(t["y"]), decode_array(f_old["data"][i]["y"]), rtol=1e-6)


# ---------- labels, captions, text alternatives ----------

@pytest.mark.parametrize("raw, expected", [
    ("lambda_{t+1}", "λ<sub>t+1</sub>"),
    ("x_{t+1}^2", "x<sub>t+1</sub><sup>2</sup>"),
    ("BFGS on g (B0 = A^T A)", "BFGS on g (B0 = A<sup>T</sup> A)"),
    ("gap f(x_t) - f*", "gap f(x<sub>t</sub>) - f*"),
    ("eta_k <= 1/sqrt k", "η<sub>k</sub> ≤ 1/√k"),
    ("log_levels stays", "log_levels stays"),
    ("sum_i r_i^2 and min_i E_i", "sum<sub>i</sub> r<sub>i</sub><sup>2</sup> and min<sub>i</sub> E<sub>i</sub>"),
    ("||A_p^{-1}||, rho^(-N), prox_(tau s)", "||A<sub>p</sub><sup>-1</sup>||, ρ<sup>-N</sup>, prox<sub>τ s</sub>"),
    ("x^{-1} and 10^-3", "x<sup>-1</sup> and 10<sup>-3</sup>"),
    ("<b>burn-in</b>", "<b>burn-in</b>"),
    ("beta", "β"),
    ("alphabet thetas etas", "alphabet thetas etas"),
    ("$\\lambda_t$", "$\\lambda_t$"),
    ("%{y:.2f}", "%{y:.2f}"),
    (None, None),
])
def test_pretty_labels(raw, expected):
    assert pretty(raw) == expected


def test_sanitize_keeps_text_tags_only():
    assert sanitize('a <b>b</b><script>x</script> <span style="c">d</span> x < 3') == "a <b>b</b>x d x &lt; 3"


def test_describe_says_what_a_figure_shows():
    fig = _slider().to_dict()
    fig["layout"]["xaxis"]["title"] = {"text": "time t"}
    fig["layout"]["yaxis"].update(title={"text": "signal"}, type="log")
    text = describe(fig, [{"label": "frequency k", "steps": [{"label": str(k)} for k in range(4)]}])
    assert text.startswith("Line chart of signal (log scale) against time t, showing moving and fixed.")
    assert "A slider sets frequency k (4 positions, from 0 to 3)." in text
    panels = make_subplots(rows=1, cols=2, subplot_titles=("left one", "right one"))
    panels.add_trace(go.Scatter(y=[1, 2], name="a"), 1, 1)
    panels.add_trace(go.Contour(z=[[1, 2], [3, 4]], colorbar=dict(title=dict(text="loss"))), 1, 2)
    text = describe(panels.to_dict())
    assert text.startswith("2 panels. Panel 1 (left one): line chart")
    assert "Panel 2 (right one): contour map of loss" in text


def test_caption_is_the_title_or_a_description():
    fig = _slider().to_dict()
    assert caption(fig) == "Waves, λ<sub>k</sub> = k"
    fig["layout"].pop("title")
    assert caption(fig).startswith("Line chart of ") and caption(fig).endswith(".")


# ---------- the renderer's HTML ----------

def test_book_figure_html_has_caption_alt_text_native_slider_and_no_plotly():
    html = figure_html(_slider().to_dict())
    assert html.startswith('<figure class="optbook-figure"') and html.endswith("</figure>")
    assert re.search(r'<figcaption id="[^"]+">Waves, λ<sub>k</sub> = k</figcaption>', html)
    assert re.search(r'role="img" aria-label="Line chart of [^"]+A slider sets frequency k', html)
    assert '<input type="range"' in html and 'min="0" max="3"' in html and 'aria-valuetext="0"' in html
    assert "Plotly.newPlot" not in html and "cdn" not in html
    spec = json.loads(re.search(r'<script type="application/json" class="optbook-figure-spec">(.*)</script>',
                                html).group(1))
    assert "title" not in spec["layout"] and "sliders" not in spec["layout"]  # moved into the page
    assert spec["template"] == "plotly_white" and "template" not in spec["layout"]
    assert spec["config"]["displaylogo"] is False and "lasso2d" in spec["config"]["modeBarButtonsToRemove"]
    assert spec["sliders"][0]["labels"] == ["0", "1", "2", "3"]
    assert data_types(html) == ["scatter"]


def data_types(html: str) -> list[str]:
    return re.search(r'data-types="([^"]*)"', html).group(1).split()


def test_script_end_tags_in_labels_cannot_break_the_page():
    fig = go.Figure(go.Scatter(y=[1, 2], name="</script><script>alert(1)</script>")).to_dict()
    html = figure_html(fig)
    assert html.count("</script>") == 1


def test_slider_margins_shrink_once_the_slider_leaves_plotly():
    spec, sliders = figure_spec(_slider().to_dict())
    assert spec["layout"]["margin"]["b"] <= 60 and len(sliders) == 1
    assert CONFIG["responsive"] is True


# ---------- the book's Sphinx extension ----------

@pytest.fixture(scope="module")
def ext():
    sys.path.insert(0, str(ROOT / "_ext"))
    try:
        import optbook_book
        yield optbook_book
    finally:
        sys.path.remove(str(ROOT / "_ext"))


@pytest.mark.parametrize("source, name", [
    ("ch.EXPLORER_CONDITIONING.show()", "conditioning"),
    ("# the live twin\nch.EXPLORER_PHASES.show()\n", "phases"),
    ("explorer.show()", ""),
    ("ch.EXPLORER.show();", ""),
    ("fig = ch.figure()\nch.EXPLORER.show()", None),
    ("fig.show()", None),
])
def test_explorer_cells_are_recognised(ext, source, name):
    assert ext.explorer_name(source) == name


def test_the_map_lists_every_planned_chapter_and_links_the_published(ext):
    import yaml

    plan = yaml.safe_load((ROOT / "book" / "plan.yml").read_text())
    numbers = [n for part in plan["parts"] for n in part["chapters"]]
    assert numbers == [f"{k:02d}" for k in range(1, plan["total"] + 1)]
    done = ext.published(yaml.safe_load((ROOT / "_toc.yml").read_text()))
    assert done and set(done) <= set(numbers)
    for num, doc in done.items():
        assert (ROOT / f"{doc}.md").exists() and Path(doc).name.startswith(num)


def test_the_page_theme_carries_the_style_palettes_and_template(ext, tmp_path):
    class App:
        outdir = str(tmp_path)

        class builder:
            format = "html"

    ext.write_theme(App, None)
    text = (tmp_path / "_static" / ext.THEME_FILE).read_text()
    theme = json.loads(text.split("window.OPTBOOK_THEME = ", 1)[1].rstrip().rstrip(";"))
    assert theme["palette"] == list(PALETTE) and theme["paletteDark"] == list(PALETTE_DARK)
    assert "layout" in theme["templates"]["plotly_white"]
    js = (ROOT / "_assets" / "optbook-figures.js").read_text()
    assert "plotly/plotly-cartesian.min.js" in js and "plotly/plotly.min.js" in js and "OPTBOOK_THEME" in js


def test_lines_told_apart_by_colour_alone_get_a_dash_each():
    from optbook.viz.compact import distinct_dashes

    fig = make_subplots(rows=1, cols=2)
    for col in (1, 2):
        for name, color in (("A", "#0072B2"), ("B", "#D55E00")):
            fig.add_trace(go.Scatter(y=[1, 2], name=name, legendgroup=name, line=dict(color=color),
                                     showlegend=col == 1), 1, col)
    fig.add_trace(go.Scatter(y=[1, 2], name="C", line=dict(dash="dot")), 1, 1)
    out = distinct_dashes(fig.to_dict())
    dashes = [(t["name"], t["line"].get("dash")) for t in out["data"]]
    assert dashes == [("A", "solid"), ("B", "dash"), ("A", "solid"), ("B", "dash"), ("C", "dot")]
    sweep = go.Figure([go.Scatter(y=[k, k + 1], name=f"eta={k}") for k in range(10)]).to_dict()
    assert distinct_dashes(sweep) == sweep  # a colour scale along a sweep is left alone


def test_an_untitled_figure_of_several_panels_is_captioned_by_its_panels():
    fig = make_subplots(rows=1, cols=2)
    fig.add_trace(go.Scatter(y=[1, 2], name="a"), 1, 1)
    fig.add_trace(go.Scatter(y=[1, 2], name="b"), 1, 2)
    fig.update_yaxes(title_text="loss", row=1, col=1)
    fig.update_xaxes(title_text="step", row=1, col=1)
    assert caption(fig.to_dict()) == "2 panels: loss against step; value against x."
