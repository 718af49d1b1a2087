"""Euclidean projections onto simple sets, vectorised over batches."""
from __future__ import annotations

import numpy as np

from .validate import check_positive


def project_simplex(y, axis: int = -1) -> np.ndarray:
    """Euclidean projection onto the probability simplex {p >= 0, sum p = 1} along ``axis``
    (every other axis is a batch), by the sort-based rule p = max(y - tau, 0) with tau chosen
    so that the coordinates sum to one (Held, Wolfe and Crowder)."""
    try:
        y = np.asarray(y, dtype=float)
    except (TypeError, ValueError) as err:
        raise ValueError("y must be an array of numbers") from err
    if y.size == 0 or y.ndim == 0:
        raise ValueError(f"y must be a non-empty array, got shape {y.shape}")
    if not np.all(np.isfinite(y)):
        raise ValueError("y must be finite (found NaN or inf)")
    ym = np.moveaxis(y, axis, 0)
    # The projection commutes with a shift (tau moves with it): subtract the largest entry first,
    # so the cumulative sums start near 0 and keep their precision for entries like 1e16.
    ym = ym - ym.max(axis=0, keepdims=True)
    d = ym.shape[0]
    s = -np.sort(-ym, axis=0)
    css = np.cumsum(s, axis=0) - 1.0
    r = np.arange(1, d + 1).reshape((d,) + (1,) * (ym.ndim - 1))
    rho = (s - css / r > 0).sum(axis=0) - 1  # the condition holds on a prefix of sorted coordinates
    tau = np.take_along_axis(css, rho[None], axis=0)[0] / (rho + 1)
    return np.moveaxis(np.maximum(ym - tau, 0.0), 0, axis)


def project_ball(x, radius: float = 1.0) -> np.ndarray:
    """Euclidean projection onto the ball {||x|| <= radius} (x returned as is when inside)."""
    x = np.asarray(x, dtype=float)
    radius = check_positive(radius, "radius")
    if not np.all(np.isfinite(x)):
        raise ValueError("x must be finite (found NaN or inf)")
    norm = float(np.linalg.norm(x))
    return x if norm <= radius else x * (radius / norm)
