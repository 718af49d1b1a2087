"""The race page's figure and table: every method of one problem class on one budget axis."""
from __future__ import annotations

import html

import numpy as np
import plotly.graph_objects as go

from ..race.engine import RaceResult, median_curve
from .convergence import LOG_FLOOR
from .style import base_layout, color_for, line_style
from .tables import _STYLE, RecordsTable, _row


def _rgba(hex_color: str, alpha: float) -> str:
    h = hex_color.lstrip("#")
    return f"rgba({int(h[0:2], 16)}, {int(h[2:4], 16)}, {int(h[4:6], 16)}, {alpha})"


def race_figure(result: RaceResult, *, height: int = 440) -> go.Figure:
    """Median score over the measured seeds against the budget spent, one line per method (in
    the order of the ranking), with the range over seeds as a band; log scale where the problem
    says so, scores at or below 1e-16 drawn at it."""
    if not isinstance(result, RaceResult):
        raise ValueError(f"result must be a RaceResult, got {type(result).__name__}")
    p = result.problem
    fig = go.Figure()
    for i, e in enumerate(result.ranking()):
        grid, med, lo, hi = median_curve(e.traces, p.budget)
        if p.logy:
            med, lo, hi = (np.maximum(v, LOG_FLOOR) for v in (med, lo, hi))
        color = color_for(i)
        fig.add_trace(go.Scatter(x=np.r_[grid, grid[::-1]], y=np.r_[hi, lo[::-1]], fill="toself", mode="lines",
                                 line=dict(width=0), fillcolor=_rgba(color, 0.1), hoverinfo="skip",
                                 showlegend=False, legendgroup=e.solver.name))
        name = f"{e.solver.name} (ch{e.solver.chapter})" if e.solver.chapter != "-" else e.solver.name
        fig.add_trace(go.Scatter(x=grid, y=med, mode="lines", name=name, **line_style(i),
                                 legendgroup=e.solver.name,
                                 hovertemplate=f"{name}<br>%{{x}} {p.unit}s<br>{p.metric} %{{y:.3g}}<extra></extra>"))
    base_layout(fig, title=f"{p.name}: median {p.metric} over {len(result.seeds)} seeds (band: range)",
                xaxis_title=f"budget spent ({p.unit}s)", yaxis_title=p.metric, logy=p.logy, height=height)
    return fig


class RaceTable:
    """The race's table: one row per method, best first (see :meth:`RaceResult.rows`); on a
    phone each row becomes a card, every cell led by its column's name."""

    def __init__(self, result: RaceResult):
        if not isinstance(result, RaceResult):
            raise ValueError(f"result must be a RaceResult, got {type(result).__name__}")
        self.rows = result.rows()

    def _repr_html_(self) -> str:
        head = list(self.rows[0])
        body = "".join(_row(head, [RecordsTable._cell(r[h]) for h in head]) for r in self.rows)   # _cell escapes
        header = '<tr class="optbook-head">' + "".join(f"<th>{html.escape(h)}</th>" for h in head) + "</tr>"
        return f'{_STYLE}<table class="optbook-claims optbook-cards">{header}{body}</table>'

    def __repr__(self) -> str:
        return "\n".join("  ".join(f"{k}={RecordsTable._cell(v)}" for k, v in r.items()) for r in self.rows)


def race_table(result: RaceResult) -> RaceTable:
    """The race's table for one problem class (see :class:`RaceTable`)."""
    return RaceTable(result)
