"""Convergence figures built from :class:`~optbook.core.Trace` objects, with named phases."""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import plotly.graph_objects as go

from ..core.trace import Trace
from .style import PHASE_COLORS, base_layout, line_style

#: Floor for log-scale plots of gaps (values at or below it are drawn at it).
LOG_FLOOR = 1e-16


@dataclass
class Phase:
    """A named stretch [start, end] of the x-axis, shaded on the plot ("linear phase", ...)."""

    start: float
    end: float
    label: str

    def __post_init__(self) -> None:
        if not (np.isfinite(self.start) and np.isfinite(self.end) and self.end >= self.start):
            raise ValueError(f"phase {self.label!r} needs finite start <= end, got {self.start}, {self.end}")


def phase_layout(phases: Sequence[Phase], *, logx: bool = False) -> dict:
    """Layout ``shapes`` and ``annotations`` shading each phase (usable in slider frames too).

    On a log x-axis (``logx``) plotly places shapes in data units but annotations in log10
    units, so the labels go to the log midpoints there (phases must then start above 0).
    """
    if logx and any(ph.start <= 0 for ph in phases):
        raise ValueError("phases on a log x-axis must start above 0")
    shapes, notes = [], []
    for k, ph in enumerate(phases):
        mid = 0.5 * (np.log10(ph.start) + np.log10(ph.end)) if logx else 0.5 * (ph.start + ph.end)
        shapes.append(dict(type="rect", xref="x", yref="paper", x0=ph.start, x1=ph.end, y0=0, y1=1,
                           fillcolor=PHASE_COLORS[k % len(PHASE_COLORS)], opacity=0.55, layer="below",
                           line_width=0))
        notes.append(dict(x=mid, y=1.0, xref="x", yref="paper", yanchor="top",
                          text=f"<b>{ph.label}</b>", showarrow=False, font=dict(size=12, color="#333")))
    return {"shapes": shapes, "annotations": notes}


def series_values(trace: Trace, y: str, f_star: float | None = None) -> np.ndarray:
    """Series ``y`` of a trace; ``objective`` minus ``f_star`` when ``f_star`` is given."""
    values = trace[y]
    if f_star is not None:
        if y != "objective":
            raise ValueError("f_star only applies to y='objective'")
        values = values - f_star
    return values


def convergence_traces(
    traces: Sequence[Trace],
    y: str = "objective",
    x: str = "iteration",
    *,
    f_star: float | None = None,
    logy: bool = True,
    start_index: int = 0,
    max_points: int = 300,
) -> list[go.Scatter]:
    """One line per trace, named after ``trace.method``; the i-th trace gets the i-th colour, dash
    and marker (on a long trace, a dozen markers spaced along the line). Long traces are thinned
    to ``max_points`` rows to keep the page light."""
    if not traces:
        raise ValueError("traces must not be empty")
    out = []
    for i, tr in enumerate(traces):
        if not isinstance(tr, Trace):
            raise TypeError(f"traces[{i}] must be a Trace, got {type(tr).__name__}")
        tr = tr.thinned(max_points)
        yv = series_values(tr, y, f_star)
        if logy:
            yv = np.where(np.isfinite(yv), np.maximum(np.abs(yv), LOG_FLOOR), np.nan)
        style = line_style(start_index + i)
        if len(tr) > 60:
            style["marker"]["maxdisplayed"] = 12
        out.append(go.Scatter(x=tr[x], y=yv, mode="lines+markers", name=tr.method, **style))
    return out


def convergence_figure(
    traces: Sequence[Trace],
    y: str = "objective",
    x: str = "iteration",
    *,
    f_star: float | None = None,
    logy: bool = True,
    logx: bool = False,
    phases: Sequence[Phase] = (),
    title: str | None = None,
    xaxis_title: str | None = None,
    yaxis_title: str | None = None,
    height: int = 430,
) -> go.Figure:
    """Convergence curves of several runs on one set of axes, phases shaded and named.

    With ``f_star`` the objective gap f(x_t) - f* is drawn (on a log scale by default).
    """
    fig = go.Figure(convergence_traces(traces, y, x, f_star=f_star, logy=logy))
    if phases:
        fig.update_layout(**phase_layout(phases, logx=logx))
    default_y = "f(x_t) - f*" if f_star is not None else y.replace("_", " ")
    return base_layout(fig, title=title, xaxis_title=xaxis_title or ("iteration t" if x == "iteration" else x),
                       yaxis_title=yaxis_title or default_y, height=height, logy=logy, logx=logx)
