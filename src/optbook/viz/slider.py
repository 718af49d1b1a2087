"""Slider figures: the static twin of a widget.

A plotly figure whose frames are precomputed runs over a grid of one parameter; moving the
slider swaps the plotted data in the browser, with no kernel. The axes are fixed over the whole
grid so that the reader sees the curves move, not the axes.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import plotly.graph_objects as go

from .style import base_layout


@dataclass
class SliderStep:
    """One slider position: its label, the traces it shows, optional layout (shapes, notes)."""

    label: str
    traces: list
    layout: dict = field(default_factory=dict)


def frame_note(text: str) -> dict:
    """A slider frame's layout with its numbers as a note in the plot's top-left corner.

    The book shows a figure's title as its caption, which does not follow the slider: the numbers
    of the current position belong in the plot. Pass the result as a :class:`SliderStep`'s layout.
    """
    if not isinstance(text, str):
        raise ValueError(f"text must be a string, got {type(text).__name__}")
    return {"annotations": [dict(text=text, xref="x domain", yref="y domain", x=0.01, y=0.99, xanchor="left",
                                 yanchor="top", showarrow=False, align="left", font=dict(size=12),
                                 bgcolor="rgba(255,255,255,0.85)")]}


def _range(values: list[np.ndarray], log: bool, pad: float = 0.04) -> list[float] | None:
    flat = np.concatenate([np.asarray(v, dtype=float).ravel() for v in values]) if values else np.array([])
    flat = flat[np.isfinite(flat)]
    if log:
        flat = np.log10(flat[flat > 0])
    if flat.size == 0:
        return None
    lo, hi = float(flat.min()), float(flat.max())
    span = hi - lo if hi > lo else max(abs(hi), 1.0)
    return [lo - pad * span, hi + pad * span]


def slider_figure(
    steps: Sequence[SliderStep],
    *,
    slider_label: str,
    active: int = 0,
    logx: bool = False,
    logy: bool = False,
    fixed_axes: bool = True,
    title: str | None = None,
    xaxis_title: str | None = None,
    yaxis_title: str | None = None,
    height: int = 470,
) -> go.Figure:
    """A figure with one frame per step and a slider that animates between them.

    Every step must show the same number of traces (frames replace trace data in place).
    With ``fixed_axes`` each axis (subplot axes too) keeps one range over all steps; ``logx`` and
    ``logy`` then apply to every axis.
    """
    if not steps:
        raise ValueError("steps must not be empty")
    n = len(steps[0].traces)
    if n == 0:
        raise ValueError("each step needs at least one trace")
    for i, st in enumerate(steps):
        if len(st.traces) != n:
            raise ValueError(f"steps[{i}] has {len(st.traces)} traces, steps[0] has {n}")
    labels = [st.label for st in steps]
    if len(set(labels)) != len(labels):
        raise ValueError("step labels must be distinct (they name the frames)")
    if isinstance(active, bool) or not isinstance(active, (int, np.integer)) or not 0 <= active < len(steps):
        raise ValueError(f"active must index steps (0..{len(steps) - 1}), got {active}")

    fig = go.Figure(data=list(steps[active].traces),
                    frames=[go.Frame(name=st.label, data=list(st.traces), layout=st.layout or None)
                            for st in steps])
    if steps[active].layout:
        fig.update_layout(**steps[active].layout)
    base_layout(fig, title=title, xaxis_title=xaxis_title, yaxis_title=yaxis_title, height=height,
                logx=logx, logy=logy)
    if fixed_axes:
        # One range per axis over all frames; traces on subplot axes (x2, y2, ...) get their own.
        for kind, log, pad in (("x", logx, 0.02), ("y", logy, 0.04)):
            groups: dict[str, list] = {}
            for st in steps:
                for t in st.traces:
                    values = getattr(t, kind, None) if t.type == "scatter" else None
                    if values is not None:
                        groups.setdefault(getattr(t, f"{kind}axis") or kind, []).append(values)
            for ref, values in groups.items():
                rng = _range(values, log, pad=pad)
                if rng:
                    fig.update_layout({ref.replace(kind, f"{kind}axis", 1): dict(range=rng, autorange=False)})
    fig.update_layout(
        margin=dict(b=110),
        sliders=[dict(
            active=active, pad=dict(t=55, l=10, r=10), len=1.0, x=0,
            currentvalue=dict(prefix=f"{slider_label}: ", font=dict(size=14)),
            steps=[dict(label=lab, method="animate",
                        args=[[lab], dict(mode="immediate", frame=dict(duration=0, redraw=True),
                                          transition=dict(duration=0))])
                   for lab in labels],
        )],
    )
    return fig
