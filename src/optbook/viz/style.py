"""One look for every figure: template, fonts, and each method's colour, dash and marker.

The palette is Okabe and Ito's colour-blind-safe set, ordered so that the first six stay apart
under deuteranopia and protanopia, each colour darkened just enough to reach a 3:1 contrast
with the white page (``PALETTE``) or lightened for the dark theme (``PALETTE_DARK``, swapped in
by the book's figure script). Colour is never the only cue: the i-th method also gets the i-th
dash and marker, so two lines stay apart in greyscale too.
"""
from __future__ import annotations

import plotly.graph_objects as go

#: Light mode: blue, vermillion, bluish green, reddish purple, dark grey, sky blue, orange, olive.
PALETTE = ("#0072B2", "#D55E00", "#009E73", "#C870A1", "#4D4D4D", "#1C95D9", "#BB8100", "#978E0C")
#: Dark mode, the same hues in the same order (each at least 3:1 against the dark page).
PALETTE_DARK = ("#3A9AD9", "#E5702A", "#00B386", "#CC79A7", "#C8C8C8", "#56B4E9", "#E69F00", "#F0E442")
DASHES = ("solid", "dash", "dot", "dashdot", "longdash", "longdashdot", "6px,2px,1px,2px", "1px,4px")
MARKERS = ("circle", "square", "diamond", "triangle-up", "x", "cross", "star", "triangle-down")
#: Shading of named phases (light pastels; the figure script dims them in dark mode).
PHASE_COLORS = ("#fde0c5", "#d4ecd9", "#d6e4f5", "#eadcf2")
#: The page backgrounds the palettes are checked against (pydata-sphinx-theme's light and dark).
BACKGROUNDS = {"light": "#ffffff", "dark": "#14181e"}
#: plotly's former defaults (D3 "category10", which chapters may still name) -> this palette.
LEGACY_COLORS = dict(zip(
    ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#7f7f7f", "#17becf", "#ff7f0e", "#bcbd22",
     "#8c564b", "#e377c2"),
    PALETTE + (PALETTE[6], PALETTE[3])))


def color_for(index: int) -> str:
    return PALETTE[index % len(PALETTE)]


def dash_for(index: int) -> str:
    return DASHES[index % len(DASHES)]


def marker_for(index: int) -> str:
    return MARKERS[index % len(MARKERS)]


def line_style(index: int, width: float = 2.2) -> dict:
    """``line=`` and ``marker=`` settings of the index-th method: colour, dash and marker symbol."""
    return {"line": dict(color=color_for(index), dash=dash_for(index), width=width),
            "marker": dict(color=color_for(index), symbol=marker_for(index), size=6)}


def relative_luminance(color: str) -> float:
    """WCAG relative luminance of a ``#rrggbb`` colour."""
    h = color.lstrip("#")
    if len(h) != 6:
        raise ValueError(f"color must be #rrggbb, got {color!r}")
    channels = [int(h[i:i + 2], 16) / 255 for i in (0, 2, 4)]
    lin = [c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
    return 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]


def contrast_ratio(a: str, b: str) -> float:
    """WCAG contrast ratio of two ``#rrggbb`` colours (1 to 21)."""
    la, lb = sorted((relative_luminance(a), relative_luminance(b)))
    return (lb + 0.05) / (la + 0.05)


def base_layout(fig: go.Figure, *, title: str | None = None, xaxis_title: str | None = None,
                yaxis_title: str | None = None, height: int = 430, logy: bool = False,
                logx: bool = False) -> go.Figure:
    """Apply the book's layout: white template, readable fonts, legend above the plot.

    In the built book the title becomes the figure's caption under the plot (see
    :mod:`optbook.viz.renderer`); in a notebook it stays on top of the figure.
    """
    fig.update_layout(
        template="plotly_white", height=height, font=dict(size=13), colorway=list(PALETTE),
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
