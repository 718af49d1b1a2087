"""The plotly renderer used while the book is built.

Inside a kernel, plotly >= 6 emits only ``application/vnd.plotly.v1+json``, which myst-nb drops:
the figure would silently vanish from the HTML. During the build (``OPTBOOK_BUILD=1``) each figure
is therefore written as an HTML ``<figure>`` that any reader can use:

- the figure's title becomes its ``<figcaption>`` under the plot (where a phone has room for it),
  and the plot carries a text alternative saying what it shows (:mod:`optbook.viz.labels`);
- its slider becomes a native range input (keyboard, touch, screen readers) that drives the
  figure's frames;
- the data travel as JSON (``<script type="application/json">``), made compact
  (:mod:`optbook.viz.compact`), without plotly.js and without the shared template: the page's
  figure script (``_assets/optbook-figures.js``) loads the smallest plotly bundle the page needs,
  deferred, draws each figure as it nears the screen, and adapts it to the width and the colour
  theme.

Outside the build nothing is changed, so Colab and JupyterLab keep their own renderers.
"""
from __future__ import annotations

import functools
import hashlib
import html
import itertools
import json
import os

import plotly.io as pio
from plotly.io.base_renderers import MimetypeRenderer
from plotly.utils import PlotlyJSONEncoder

from .compact import compact_figure
from .labels import caption, describe, plain, pretty, pretty_figure, sanitize

BUILD_ENV = "OPTBOOK_BUILD"
#: The toolbar shows on hover, without the cloud upload and the lasso/box selections that the
#: book's figures have no use for.
CONFIG = {
    "responsive": True, "displaylogo": False, "displayModeBar": "hover", "showSendToCloud": False,
    "showEditInChartStudio": False, "showLink": False, "plotlyServerURL": "",
    "modeBarButtonsToRemove": ["sendDataToCloud", "lasso2d", "select2d", "editInChartStudio"],
}
#: Templates the page's figure script supplies (written once per book, not once per figure).
SHARED_TEMPLATES = ("plotly_white",)
_counter = itertools.count(1)


def building_book() -> bool:
    """True while ``make book`` executes the chapters."""
    return os.environ.get(BUILD_ENV, "") not in ("", "0")


@functools.lru_cache(maxsize=None)
def _template_json(name: str) -> str:
    return json.dumps(pio.templates[name].to_plotly_json(), sort_keys=True)


def template_payload() -> dict:
    """The shared templates, for the page's figure script."""
    return {name: json.loads(_template_json(name)) for name in SHARED_TEMPLATES}


def _native_sliders(layout: dict) -> list[dict]:
    """plotly's sliders as plain data for the page's range inputs (label, active, steps)."""
    out = []
    for s in layout.get("sliders") or []:
        prefix = ((s.get("currentvalue") or {}).get("prefix") or "").strip().rstrip(":=").strip()
        steps = [{"label": str(st.get("label", "")), "method": st.get("method", "animate"),
                  "args": st.get("args") or []} for st in s.get("steps") or []]
        if steps:
            out.append({"label": prefix, "active": int(s.get("active") or 0), "steps": steps})
    return out


def _slider_html(fig_id: str, k: int, slider: dict) -> str:
    steps, active = slider["steps"], min(slider["active"], len(slider["steps"]) - 1)
    sid = f"{fig_id}-s{k}"
    labels = [html.escape(plain(pretty(st["label"]))) for st in steps]
    label = sanitize(pretty(slider["label"])) or "position"
    n = len(labels)
    ticks = "".join(
        f'<span class="{"first" if i == 0 else "last" if i == n - 1 else "mid"}" style="--at:{i / max(n - 1, 1):.4f}">{lab}</span>'
        for i, lab in enumerate(labels))
    density = " many" if n > 12 else " some" if n > 5 else ""
    return (
        f'<div class="optbook-slider"><label for="{sid}"><span class="optbook-slider-name">{label}</span>'
        f' <output id="{sid}-value" for="{sid}">{labels[active]}</output></label>'
        f'<input type="range" id="{sid}" data-slider="{k}" min="0" max="{len(steps) - 1}" step="1" '
        f'value="{active}" aria-valuetext="{labels[active]}">'
        f'<div class="optbook-slider-ticks{density}" aria-hidden="true">{ticks}</div></div>'
    )


def figure_spec(fig_dict: dict) -> tuple[dict, list[dict]]:
    """The JSON the page draws (data, layout, frames, config) and the sliders taken out of it."""
    fig = pretty_figure(compact_figure(fig_dict))
    layout = dict(fig.get("layout") or {})
    sliders = _native_sliders(layout)
    margin = dict(layout.get("margin") or {})
    if layout.pop("title", None) and margin.get("t"):
        margin["t"] = max(40, margin["t"] - 45)  # the title's room (see style.base_layout)
    if layout.pop("sliders", None) and margin.get("b"):
        margin["b"] = max(50, margin["b"] - 50)  # plotly's slider's room
    if margin:
        layout["margin"] = margin
    spec = {"data": fig["data"], "layout": layout, "config": CONFIG}
    template = layout.get("template")
    if template is not None:
        name = next((n for n in SHARED_TEMPLATES if json.dumps(template, sort_keys=True) == _template_json(n)), None)
        if name:
            del layout["template"]
            spec["template"] = name
    if fig.get("frames"):
        spec["frames"] = fig["frames"]
    if sliders:
        spec["sliders"] = [{"label": s["label"], "active": s["active"],
                            "labels": [plain(pretty(st["label"])) for st in s["steps"]],
                            "steps": [{"method": st["method"], "args": st["args"]} for st in s["steps"]]}
                           for s in sliders]
    return spec, sliders


def _types(fig: dict) -> list[str]:
    types = {t.get("type") or "scatter" for t in fig.get("data") or []}
    for f in fig.get("frames") or []:
        types |= {t.get("type") for t in f.get("data") or [] if t.get("type")}
    return sorted(types)


def figure_html(fig_dict: dict) -> str:
    """The ``<figure>`` for one plotly figure dict (see the module's docstring)."""
    spec, sliders = figure_spec(fig_dict)
    payload = json.dumps(spec, separators=(",", ":"), cls=PlotlyJSONEncoder)
    # Inside <script>, "</" would end the element early; "<\/" is the same JSON string.
    payload = payload.replace("</", "<\\/").replace("<!--", "<\\!--")
    fig_id = f"optbook-fig-{next(_counter)}-{hashlib.sha1(payload.encode()).hexdigest()[:8]}"
    height = int((spec["layout"].get("height") or 450))
    alt = describe(fig_dict, [{"label": s["label"], "steps": s["steps"]} for s in sliders])
    return (
        f'<figure class="optbook-figure" id="{fig_id}-figure" data-types="{" ".join(_types(fig_dict))}">'
        f'<div class="optbook-plot plotly-graph-div" id="{fig_id}" role="img" aria-label="{html.escape(alt)}" '
        f'style="height:{height}px"></div>'
        + "".join(_slider_html(fig_id, k, s) for k, s in enumerate(sliders))
        + f'<figcaption id="{fig_id}-caption">{caption(fig_dict, sliders)}</figcaption>'
        f'<script type="application/json" class="optbook-figure-spec">{payload}</script></figure>'
    )


class BookRenderer(MimetypeRenderer):
    """A figure as HTML relying on the page's figure script (about 1 KB plus data)."""

    def to_mimebundle(self, fig_dict):
        return {"text/html": figure_html(fig_dict)}


def use_book_renderer_if_building() -> None:
    """Register the ``"book"`` renderer and make it the default, during the build only."""
    if building_book():
        pio.renderers["book"] = BookRenderer()
        pio.renderers.default = "book"
