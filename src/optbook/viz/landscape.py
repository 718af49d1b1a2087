"""Two-dimensional loss landscapes (contour or surface) with the iterates' paths on top."""
from __future__ import annotations

from collections.abc import Callable, Mapping

import numpy as np
import plotly.graph_objects as go

from .style import base_layout, line_style


def grid_values(fun: Callable[[np.ndarray], float], xlim: tuple[float, float],
                ylim: tuple[float, float], n: int = 70, *,
                vectorized: bool = False) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Evaluate ``fun`` on an n x n grid; returns xs, ys, Z[y, x]. ``fun`` takes a 2-vector, or
    with ``vectorized`` an (m, 2) array of points, returning m values (e.g. ``Problem.fun_many``;
    much faster, for live explorers)."""
    if n < 2:
        raise ValueError(f"n must be >= 2, got {n}")
    for name, lim in (("xlim", xlim), ("ylim", ylim)):
        if len(lim) != 2 or not lim[0] < lim[1]:
            raise ValueError(f"{name} must be (low, high) with low < high, got {lim}")
    xs, ys = np.linspace(*xlim, n), np.linspace(*ylim, n)
    if vectorized:
        X, Y = np.meshgrid(xs, ys)
        Z = np.asarray(fun(np.column_stack([X.ravel(), Y.ravel()])), dtype=float).reshape(n, n)
    else:
        Z = np.array([[fun(np.array([x, y])) for x in xs] for y in ys])
    return xs, ys, Z


def path_traces(paths: Mapping[str, np.ndarray], start_index: int = 0, z_of=None) -> list:
    """One line per path (k x 2 array of iterates), its start marked by a circle."""
    out = []
    for i, (name, pts) in enumerate(paths.items()):
        pts = np.asarray(pts, dtype=float)
        if pts.ndim != 2 or pts.shape[1] != 2:
            raise ValueError(f"path {name!r} must be a k x 2 array, got shape {pts.shape}")
        style = line_style(start_index + i, width=2.5)
        color = style["line"]["color"]
        if z_of is None:
            out.append(go.Scatter(x=pts[:, 0], y=pts[:, 1], mode="lines+markers", name=name, **style))
        else:
            out.append(go.Scatter3d(x=pts[:, 0], y=pts[:, 1], z=[z_of(p) for p in pts], name=name,
                                    mode="lines+markers", line=dict(color=color, width=5),
                                    marker=dict(size=3)))
    return out


def landscape_traces(xs, ys, Z, *, log_levels: bool = False, kind: str = "contour",
                     colorbar_title: str = "f") -> list:
    """The contour (or surface) trace of a grid; ``log_levels`` colours by log10(f - min f)."""
    Zp = np.log10(Z - np.nanmin(Z) + 1e-12) if log_levels else Z
    title = f"log10({colorbar_title} - min)" if log_levels else colorbar_title
    if kind == "contour":
        return [go.Contour(x=xs, y=ys, z=Zp, colorscale="Viridis", ncontours=30, showlegend=False,
                           colorbar=dict(title=dict(text=title, side="right")), opacity=0.9,
                           contours=dict(showlines=True), line=dict(width=0.5))]
    if kind == "surface":
        return [go.Surface(x=xs, y=ys, z=Zp, colorscale="Viridis", showscale=True, opacity=0.9,
                           colorbar=dict(title=dict(text=title, side="right")))]
    raise ValueError(f"kind must be 'contour' or 'surface', got {kind!r}")


def landscape_figure(
    fun: Callable[[np.ndarray], float] | None,
    xlim: tuple[float, float],
    ylim: tuple[float, float],
    paths: Mapping[str, np.ndarray] | None = None,
    *,
    values: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None,
    kind: str = "contour",
    log_levels: bool = False,
    n: int = 70,
    title: str | None = None,
    xaxis_title: str = "x<sub>1</sub>",
    yaxis_title: str = "x<sub>2</sub>",
    height: int = 500,
) -> go.Figure:
    """Contour or surface of a 2-D objective with method paths drawn over it.

    Give either ``fun`` (evaluated on an n x n grid) or precomputed ``values=(xs, ys, Z)``.
    """
    if values is None:
        if fun is None:
            raise ValueError("give fun or values")
        values = grid_values(fun, xlim, ylim, n)
    xs, ys, Z = values
    data = landscape_traces(xs, ys, Z, log_levels=log_levels, kind=kind)
    if paths:
        if kind == "surface":
            def z_of(p):  # nearest grid value, lifted slightly so the path stays visible
                zz = Z[np.abs(ys - p[1]).argmin(), np.abs(xs - p[0]).argmin()]
                zz = np.log10(zz - np.nanmin(Z) + 1e-12) if log_levels else zz
                return zz + 0.01 * (np.nanmax(Z) - np.nanmin(Z))
            data += path_traces(paths, z_of=z_of)
        else:
            data += path_traces(paths)
    fig = go.Figure(data)
    base_layout(fig, title=title, xaxis_title=xaxis_title, yaxis_title=yaxis_title, height=height)
    if kind == "contour":
        fig.update_xaxes(range=list(xlim))
        fig.update_yaxes(range=list(ylim))
    else:
        fig.update_layout(scene=dict(xaxis_title=xaxis_title, yaxis_title=yaxis_title, zaxis_title="f"))
    return fig
