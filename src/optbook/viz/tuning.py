"""The tuning panel: every method's grid search on one figure, so a reader can see that the
baselines got the same care as the method (claims protocol, design notes section 3)."""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from ..core.tuning import Tuning
from .style import base_layout, color_for, dash_for, marker_for


def tuning_figure(tunings: Sequence[Tuning], *, score_label: str, logy: bool = False,
                  title: str | None = None, height: int = 430) -> go.Figure:
    """Left: each method's score at every setting of its grid (the best one ringed; hover names
    the setting). Right: the best score found against the number of settings tried. The panel
    titles live in the axis titles, so the legend above the plot never covers them.

    Grids of different sizes are allowed but visible: the right panel's curves end at each
    method's budget. Without a ``title`` the figure is titled after ``score_label`` (the book shows
    the title as the figure's caption).
    """
    tunings = list(tunings)
    if title is None:
        title = f"Tuning on held-out seeds: {score_label} at every setting tried, and the best so far"
    if not tunings:
        raise ValueError("tunings must not be empty")
    for t in tunings:
        if not isinstance(t, Tuning):
            raise TypeError(f"tunings must be Tuning records, got {type(t).__name__}")
    fig = make_subplots(rows=1, cols=2, horizontal_spacing=0.14)
    n = len(tunings)
    for i, t in enumerate(tunings):
        color, dash, symbol = color_for(i), dash_for(i), marker_for(i)
        k = np.arange(1, t.size + 1)
        # Methods side by side within each setting's slot, so tied scores do not hide each other.
        kx = k + (0.3 * (i - (n - 1) / 2) / max(n - 1, 1) if n > 1 else 0.0)
        ys = np.where(np.isfinite(t.scores), t.scores, np.nan)
        fig.add_trace(go.Scatter(
            x=kx, y=ys, mode="markers", name=t.method, legendgroup=t.method, marker=dict(color=color, size=8, symbol=symbol),
            text=t.labels(), hovertemplate="%{text}<br>score %{y:.4g}<extra>" + t.method + "</extra>"), 1, 1)
        b = t.best_index
        fig.add_trace(go.Scatter(
            x=[kx[b]], y=[t.best_score], mode="markers", legendgroup=t.method, showlegend=False,
            marker=dict(color=color, size=16, symbol="circle-open", line=dict(width=2)),
            hovertemplate=f"best: {t.labels()[b]}<br>score %{{y:.4g}}<extra>{t.method}</extra>"), 1, 1)
        fig.add_trace(go.Scatter(
            x=k, y=t.best_so_far(), mode="lines+markers", line=dict(color=color, dash=dash, shape="hv"),
            marker=dict(color=color, symbol=symbol),
            legendgroup=t.method, showlegend=False, name=t.method,
            hovertemplate="after %{x} settings: %{y:.4g}<extra>" + t.method + "</extra>"), 1, 2)
    base_layout(fig, title=title, height=height, logy=logy)
    fig.update_xaxes(title_text="setting # (ring: best)", row=1, col=1)
    fig.update_xaxes(title_text="settings tried", row=1, col=2)
    most = max(t.size for t in tunings)
    fig.update_xaxes(tickmode="linear", tick0=1, dtick=max(1, int(np.ceil(most / 10))))  # whole settings only
    fig.update_yaxes(title_text=score_label, row=1, col=1, automargin=True)
    fig.update_yaxes(title_text="best so far", row=1, col=2, automargin=True)
    finite = np.concatenate([t.scores[np.isfinite(t.scores) & (t.scores > 0)] for t in tunings])
    if logy and finite.size and np.log10(finite.max() / finite.min()) <= 3:
        fig.update_yaxes(dtick="D2")  # a few decades: label 1, 2 and 5 of each, not every digit
    return fig
