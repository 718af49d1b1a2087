"""Rates read off measured curves: least-squares slopes on log scales."""
from __future__ import annotations

import numpy as np


def _points(x, y, name_x: str, name_y: str) -> tuple[np.ndarray, np.ndarray]:
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if x.ndim != 1 or x.shape != y.shape:
        raise ValueError(f"{name_x} and {name_y} must be 1-D arrays of the same length")
    return x, y


def loglog_slope(x, y) -> float:
    """Least-squares slope of log y against log x: the exponent a in y ~ C x^a.

    Points where x or y is not positive or not finite are left out (a zero error at the end of
    a run says nothing about the rate); at least two must remain.
    """
    x, y = _points(x, y, "x", "y")
    keep = (x > 0) & (y > 0) & np.isfinite(x) & np.isfinite(y)
    if keep.sum() < 2:
        raise ValueError("need at least two points with x > 0 and y > 0 to fit a slope")
    return float(np.polyfit(np.log(x[keep]), np.log(y[keep]), 1)[0])


def semilog_slope(x, y) -> float:
    """Least-squares slope of log y against x: the rate r in y ~ C exp(r x).

    Points where y is not positive or x, y are not finite are left out; at least two must remain.
    """
    x, y = _points(x, y, "x", "y")
    keep = (y > 0) & np.isfinite(x) & np.isfinite(y)
    if keep.sum() < 2:
        raise ValueError("need at least two points with y > 0 to fit a slope")
    return float(np.polyfit(x[keep], np.log(y[keep]), 1)[0])
