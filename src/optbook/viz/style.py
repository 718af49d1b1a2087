"""One look for every figure: template, fonts, colours by method name."""
from __future__ import annotations

import plotly.graph_objects as go

PALETTE = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf", "#8c564b", "#e377c2",
           "#7f7f7f", "#bcbd22")
PHASE_COLORS = ("#fde0c5", "#d4ecd9", "#d6e4f5", "#eadcf2")
DASHES = ("solid", "dash", "dot", "dashdot", "longdash")


def color_for(index: int) -> str:
    return PALETTE[index % len(PALETTE)]


def base_layout(fig: go.Figure, *, title: str | None = None, xaxis_title: str | None = None,
                yaxis_title: str | None = None, height: int = 430, logy: bool = False,
                logx: bool = False) -> go.Figure:
    """Apply the book's layout: white template, readable fonts, legend above the plot."""
    fig.update_layout(
        template="plotly_white", height=height, font=dict(size=13),
        # Title at the very top, legend (up to two rows) between it and the plot.
        title=dict(text=title, x=0.01, xanchor="left", y=0.98, yanchor="top") if title else None,
        legend=dict(orientation="h", yanchor="bottom", y=1.02, x=0, xanchor="left"),
        margin=dict(l=70, r=20, t=115 if title else 70, b=60),
        hovermode="closest",
    )
    fig.update_xaxes(title_text=xaxis_title, type="log" if logx else None, showline=True,
                     linecolor="#888", mirror=True, exponentformat="power")
    fig.update_yaxes(title_text=yaxis_title, type="log" if logy else None, showline=True,
                     linecolor="#888", mirror=True, exponentformat="power")
    return fig
