import importlib

import numpy as np
import plotly.graph_objects as go
import plotly.io as pio
import pytest

from optbook.claims import ClaimResult
from optbook.core import Trace, grid_search
from optbook.viz import (
    ChapterTable,
    IdentityTable,
    Phase,
    SliderStep,
    claim_table,
    convergence_figure,
    grid_values,
    glue,
    glue_claim,
    landscape_figure,
    margin_figure,
    phase_layout,
    records_table,
    slider_figure,
    tuning_figure,
)
from optbook.viz.renderer import BookRenderer, use_book_renderer_if_building


def _trace(name, values):
    tr = Trace(name)
    for v in values:
        tr.record(objective=v)
    return tr


def test_convergence_figure_gap_and_phases():
    fig = convergence_figure([_trace("A", [2.0, 1.5, 1.0]), _trace("B", [2.0, 1.0])], f_star=1.0,
                             phases=[Phase(0, 1, "linear"), Phase(1, 2, "fast")])
    assert [t.name for t in fig.data] == ["A", "B"]
    np.testing.assert_allclose(fig.data[0].y[:2], [1.0, 0.5])
    assert fig.data[0].y[2] > 0  # a zero gap is floored, not dropped, on a log axis
    assert fig.layout.yaxis.type == "log"
    assert [a.text for a in fig.layout.annotations] == ["<b>linear</b>", "<b>fast</b>"]
    assert len(fig.layout.shapes) == 2


def test_convergence_figure_bad_input():
    with pytest.raises(ValueError):
        convergence_figure([])
    with pytest.raises(TypeError):
        convergence_figure([np.arange(3)])
    with pytest.raises(ValueError):
        Phase(3, 1, "backwards")


def test_slider_figure_frames_and_fixed_axes():
    steps = [SliderStep(f"{k}", [go.Scatter(x=[0, 1], y=[1, 10 ** k])]) for k in range(3)]
    fig = slider_figure(steps, slider_label="k", active=1, logy=True)
    assert [f.name for f in fig.frames] == ["0", "1", "2"]
    assert fig.data[0].y == (1, 10)  # the active step is shown first
    assert list(fig.layout.sliders[0].steps[2].args[0]) == ["2"]
    lo, hi = fig.layout.yaxis.range  # fixed over all frames, log10 units
    assert lo < 0 < 2 < hi


def test_slider_figure_rejects_mismatched_steps():
    a = SliderStep("a", [go.Scatter(y=[1])])
    b = SliderStep("b", [go.Scatter(y=[1]), go.Scatter(y=[2])])
    with pytest.raises(ValueError, match="traces"):
        slider_figure([a, b], slider_label="s")
    with pytest.raises(ValueError, match="distinct"):
        slider_figure([a, SliderStep("a", [go.Scatter(y=[2])])], slider_label="s")
    with pytest.raises(ValueError, match="active"):
        slider_figure([a], slider_label="s", active=3)


def test_landscape_with_paths():
    fig = landscape_figure(lambda p: float(p @ p), (-1, 1), (-1, 1), {"GD": np.array([[1, 1], [0, 0]])}, n=10)
    assert fig.data[0].type == "contour" and fig.data[1].name == "GD"
    assert np.asarray(fig.data[0].z).shape == (10, 10)
    with pytest.raises(ValueError, match="k x 2"):
        landscape_figure(lambda p: 0.0, (-1, 1), (-1, 1), {"bad": np.zeros((3, 3))}, n=5)
    with pytest.raises(ValueError, match="xlim"):
        landscape_figure(lambda p: 0.0, (1, -1), (-1, 1), n=5)


def _result(name="x", holds=True, control_holds=False, kind="reproduction", **kw):
    return ClaimResult("01", name, "title", "expect", {"a": 1.23456}, holds, True, 0.1, True,
                       summary="a = 1.23", kind=kind, paper="the paper's claim", control="the control",
                       control_holds=control_holds if kind == "reproduction" else None, seeds=[0, 1, 2],
                       margin=0.5, control_margin=-0.4, **kw)


def test_tables_render_html():
    html = claim_table(_result())._repr_html_()
    assert "1.235" in html and "reproduces" in html and "optbook-good" in html
    assert "fails the criterion, as it must" in html and "the paper&#x27;s claim" in html
    assert 'data-label="verdict"' in html  # rows become labelled cards on a phone
    bad = _result(holds=False)
    assert "FAILS" in claim_table([bad])._repr_html_() and "optbook-bad" in claim_table([bad])._repr_html_()
    assert "CONTROL HOLDS" in claim_table(_result(control_holds=True))._repr_html_()
    assert "<td>2</td>" in records_table([{"n": 2}])._repr_html_()


def test_scoreboard_tables_and_margin_figure():
    rows = [_result("repro"), _result("ident", kind="identity"),
            ClaimResult("02", "old", "t2", "e", {"b": 1.0}, True, True, 0.1, True)]
    chapters = ChapterTable(rows, pages={"01": "part1/01-x.html"})._repr_html_()
    assert 'href="part1/01-x.html#does-the-claim-reproduce"' in chapters
    assert chapters.count("<tr>") == 2  # one row per chapter, identities left out
    assert "{" not in chapters.split("</style>")[1]  # no raw dicts
    idents = IdentityTable(rows)._repr_html_()
    assert idents.startswith("<style>") and "<details" in idents and "1 identity checks" in idents
    fig = margin_figure(rows)
    xs = [x for tr in fig.data for x in tr.x]
    assert xs == [0.5, -0.4]  # the claim's margin and its control's
    with pytest.raises(ValueError, match="no reproduction"):
        margin_figure([_result(kind="identity")])


def test_tuning_panel():
    fast = grid_search("method", lambda seed, eta: (eta - 0.3) ** 2 + 0.01 * seed, {"eta": [0.1, 0.3, 1.0]}, [0, 1, 2])
    slow = grid_search("baseline", lambda seed, eta: float("nan") if eta > 0.5 else 1 - eta, {"eta": [0.1, 0.3, 1.0]}, [0, 1, 2])
    assert fast.best == {"eta": 0.3} and slow.best == {"eta": 0.3}
    np.testing.assert_allclose(slow.best_so_far(), [0.9, 0.7, 0.7])
    fig = tuning_figure([fast, slow], score_label="loss")
    assert len(fig.data) == 6 and fig.data[0].name == "method" and "eta=0.3" in fig.data[0].text[1]
    with pytest.raises(ValueError, match="must not be empty"):
        tuning_figure([], score_label="loss")


def test_glue_formats_and_is_a_no_op_outside_a_kernel():
    assert glue("ratio", 12.3456) == "12.35"
    assert glue("ratio", 12.3456, "{:.0f}") == "12"
    assert glue("n", 7) == "7"
    with pytest.raises(ValueError, match="without spaces"):
        glue("bad name", 1.0)
    names = glue_claim(_result(), formats={"a": "{:.1f}"})
    assert names["x.a"] == "1.2" and names["x.verdict"] == "reproduces" and names["x.control"] == "fails"
    assert names["x.seeds"] == "3" and names["x.control_summary"] == "-"
    with pytest.raises(ValueError, match="did not measure"):
        glue_claim(_result(), formats={"zzz": "{:g}"})


def test_glued_text_survives_myst_nb_reading_it_back(monkeypatch):
    """myst-nb's {glue:text} literal_evals the stored text/plain: "1.000" must not become "1.0"."""
    from myst_nb.core.variables import format_plain_text

    glue_module = importlib.import_module("optbook.viz.glue")   # optbook.viz.glue is also the function
    stored = {}
    monkeypatch.setattr(glue_module, "_myst_glue", lambda: lambda name, value, display: stored.update({name: value}))
    for k, (value, fmt) in enumerate(((1.0, "{:.3f}"), (2.5, "{:.2f}"), (0.004, "{:+.3f}"), ("reproduces", None))):
        text = glue_module.glue(f"k{k}", value, fmt)
        assert format_plain_text(repr(stored[f"k{k}"]), "s") == text


def test_book_renderer_emits_a_figure_without_plotly_js(monkeypatch):
    bundle = BookRenderer().to_mimebundle(go.Figure(go.Scatter(y=[1, 2])).to_dict())
    html = bundle["text/html"]
    assert list(bundle) == ["text/html"]
    assert "<figure" in html and 'class="optbook-plot plotly-graph-div"' in html and "<figcaption" in html
    assert "cdn.plot.ly" not in html and "mathjax" not in html.lower() and len(html) < 20_000
    monkeypatch.setenv("OPTBOOK_BUILD", "1")
    before = pio.renderers.default
    try:
        use_book_renderer_if_building()
        assert pio.renderers.default == "book"
    finally:
        pio.renderers.default = before


def test_phase_labels_on_a_log_axis_sit_at_log_midpoints():
    lay = phase_layout([Phase(1, 100, "a")], logx=True)
    assert lay["annotations"][0]["x"] == pytest.approx(1.0)
    assert lay["shapes"][0]["x0"] == 1 and lay["shapes"][0]["x1"] == 100
    with pytest.raises(ValueError, match="above 0"):
        phase_layout([Phase(0, 1, "a")], logx=True)


def test_long_traces_are_thinned():
    fig = convergence_figure([_trace("long", np.linspace(1, 2, 5000))], logy=False)
    assert len(fig.data[0].x) <= 302 and fig.data[0].x[-1] == 4999


def test_slider_fixes_each_subplot_axis_separately():
    steps = [SliderStep(f"{k}", [go.Scatter(x=[0, 1], y=[0, k]), go.Scatter(x=[0, 1], y=[0, 100 * k], xaxis="x2", yaxis="y2")])
             for k in (1, 2)]
    fig = slider_figure(steps, slider_label="k")
    assert fig.layout.yaxis.range[1] < 3 and 150 < fig.layout.yaxis2.range[1] < 250


def test_grid_values_vectorized_equals_pointwise():
    f = lambda p: float(p[0] ** 2 + 3 * p[1])  # noqa: E731
    fv = lambda P: P[:, 0] ** 2 + 3 * P[:, 1]  # noqa: E731
    a = grid_values(f, (-1, 1), (0, 2), n=7)
    b = grid_values(fv, (-1, 1), (0, 2), n=7, vectorized=True)
    np.testing.assert_allclose(a[2], b[2])


def test_glued_text_survives_myst_nb_literal_eval(monkeypatch):
    """myst-nb literal_evals the stored text/plain before pasting it ({glue:text}): what glue
    stores must come out exactly as formatted (trailing zeros, exponents, signs)."""
    from IPython.lib.pretty import pretty
    from myst_nb.core.variables import format_plain_text

    import importlib

    glue_module = importlib.import_module("optbook.viz.glue")  # the module, not the function
    stored = {}
    monkeypatch.setattr(glue_module, "_myst_glue", lambda: lambda name, obj, display: stored.update({name: obj}))
    for value, fmt, text in ((1.0, "{:.2f}", "1.00"), (1.8e-4, "{:.1e}", "1.8e-04"), (0.0, "{:.1f}", "0.0"),
                             ("reproduces", None, "reproduces"), (-0.9, "{:.2f}", "-0.90")):
        assert glue_module.glue("x", value, fmt) == text
        assert format_plain_text(pretty(stored["x"]), "") == text
