"""A plotly figure that redraws in place: the canvas of the live explorers (:mod:`optbook.widgets`).

An anywidget holding the whole figure as plotly JSON; its front-end (``canvas.js``) redraws it
with ``Plotly.react`` on every change, which keeps the plot and updates what changed. Replacing the
figure in an ``ipywidgets.Output`` (plotly building a new plot each move) cost 300-550 ms a move in
JupyterLab for a 25-75 ms callback. Plotly's own ``FigureWidget`` (also an anywidget) syncs
deltas both ways; in our JupyterLab test about one move in fifty never reached the screen, and it
kept plotly's default 700 px width instead of the cell's. This widget sends the whole state each
time, so the last figure sent is the one drawn, and it follows the cell's width.

plotly.js travels with the widget (from the installed plotly package, no CDN): the notebook works
offline, at the cost of about 5 MB sent once per explorer shown.
"""
from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import anywidget
import plotly.graph_objects as go
import traitlets


@lru_cache(maxsize=1)
def _module() -> str:
    """The widget's ES module: plotly.js (it sets ``window.Plotly``), then ``canvas.js``."""
    from plotly.offline import get_plotlyjs

    return get_plotlyjs() + "\n" + (Path(__file__).with_name("canvas.js")).read_text()


class PlotlyCanvas(anywidget.AnyWidget):
    """A live figure: ``PlotlyCanvas(fig)`` shows ``fig``; ``canvas.draw(fig2)`` redraws it in place."""

    figure = traitlets.Unicode("{}").tag(sync=True)

    def __init__(self, fig: go.Figure) -> None:
        super().__init__(_esm=_module())
        self.draw(fig)

    def draw(self, fig: go.Figure) -> None:
        """Show ``fig`` (one message to the front-end, the whole figure)."""
        if not isinstance(fig, go.Figure):
            raise ValueError(f"fig must be a plotly.graph_objects.Figure, got {type(fig).__name__}")
        if fig.frames:
            raise ValueError("fig has animation frames; a live explorer's figure must be a single state")
        self.figure = fig.to_json()
