"""The plotly renderer used while the book is built.

Inside a kernel, plotly >= 6 emits only ``application/vnd.plotly.v1+json``, which myst-nb drops:
the figure would silently vanish from the HTML. During the build (``OPTBOOK_BUILD=1``) figures are
therefore rendered as a bare ``<div>`` plus the script that fills it, without plotly.js (the page
loads it once from the book's ``_static/``) and without MathJax (the page has its own). Outside
the build nothing is changed, so Colab and JupyterLab keep their own renderers.
"""
from __future__ import annotations

import os

import plotly.io as pio
from plotly.io.base_renderers import HtmlRenderer

BUILD_ENV = "OPTBOOK_BUILD"


def building_book() -> bool:
    """True while ``make book`` executes the chapters."""
    return os.environ.get(BUILD_ENV, "") not in ("", "0")


class BookRenderer(HtmlRenderer):
    """A figure ``<div>`` (about 10 KB plus data) relying on the page's shared plotly.js."""

    def __init__(self) -> None:
        super().__init__(connected=False, full_html=False, global_init=False, include_plotlyjs=False,
                         config={"responsive": True, "displaylogo": False})

    def to_mimebundle(self, fig_dict):
        html = pio.to_html(
            fig_dict, config=self.config, auto_play=False, include_plotlyjs=False,
            include_mathjax=False, full_html=False, default_width="100%",
            default_height=fig_dict.get("layout", {}).get("height") or 450, validate=False,
        )
        return {"text/html": html}


def use_book_renderer_if_building() -> None:
    """Register the ``"book"`` renderer and make it the default, during the build only."""
    if building_book():
        pio.renderers["book"] = BookRenderer()
        pio.renderers.default = "book"
