"""Line searches along a descent direction d from x: Armijo backtracking, weak Wolfe by
safeguarded bracketing (interpolation or bisection), and strong Wolfe (scipy's implementation of More and Thuente's zoom).

Each returns a :class:`LineSearchResult` carrying the new function value and, when it was
computed, the new gradient, so the caller never evaluates the same point twice.
"""
from __future__ import annotations

import warnings
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from scipy.optimize import line_search as _scipy_line_search

from .validate import check_in_range, check_int, check_positive, check_vector

Fun = Callable[[np.ndarray], float]
_ROUNDOFF = 4 * np.finfo(float).eps
Jac = Callable[[np.ndarray], np.ndarray]


@dataclass
class LineSearchResult:
    """Outcome of a line search: the accepted step and what was evaluated there."""

    step: float
    fun: float
    jac: np.ndarray | None
    nfev: int
    njev: int
    success: bool


def _start(x, d, g, f0, fun):
    x = check_vector(x, "x")
    d = check_vector(d, "d", x.size)
    g = check_vector(g, "g", x.size)
    slope = float(g @ d)
    if not slope < 0:
        raise ValueError(f"d must be a descent direction (g^T d < 0), got g^T d = {slope:.3g}")
    f0 = float(fun(x)) if f0 is None else float(f0)
    return x, d, slope, f0


def armijo_backtracking(
    fun: Fun,
    x: np.ndarray,
    d: np.ndarray,
    g: np.ndarray,
    f0: float | None = None,
    *,
    eta0: float = 1.0,
    c1: float = 1e-4,
    shrink: float = 0.5,
    max_evals: int = 60,
) -> LineSearchResult:
    """Backtrack eta <- shrink * eta from ``eta0`` until f(x + eta d) <= f(x) + c1 eta g^T d."""
    eta = check_positive(eta0, "eta0")
    c1 = check_in_range(c1, "c1", 0.0, 1.0)
    shrink = check_in_range(shrink, "shrink", 0.0, 1.0)
    max_evals = check_int(max_evals, "max_evals", minimum=1)
    x, d, slope, f0 = _start(x, d, g, f0, fun)
    for k in range(1, max_evals + 1):
        f_new = float(fun(x + eta * d))
        if f_new <= f0 + c1 * eta * slope:
            return LineSearchResult(eta, f_new, None, k, 0, True)
        eta *= shrink
    return LineSearchResult(eta / shrink, f_new, None, max_evals, 0, False)


def _next_trial(lo, f_lo, d_lo, hi, f_hi, prev, interpolate: bool) -> float:
    """The next trial step of the weak-Wolfe search, from the bracket [lo, hi] (hi = inf while no
    step has failed Armijo), the value f and slope d of phi at lo, the value at hi, and the
    previous lower end (its step, slope) for extrapolation.

    Bisection halves the bracket or doubles lo. Interpolation takes the minimiser of the
    quadratic matching phi(lo), phi'(lo), phi(hi) inside the bracket, kept at least 1e-3 of the
    bracket from lo and 0.1 from hi; before an upper end exists it extrapolates by the secant of
    phi' between the last two lower ends, between 2x and 20x lo. Both use only values and slopes
    along the line, so the search stays affine invariant.
    """
    if np.isfinite(hi):
        mid = 0.5 * (lo + hi)
        if not interpolate:
            return mid
        w = hi - lo
        curv = (f_hi - f_lo - d_lo * w) / (w * w)  # > 0 whenever Armijo failed at hi (c1 < c2)
        if not (np.isfinite(curv) and curv > 0):
            return mid
        return float(np.clip(lo - d_lo / (2.0 * curv), lo + 1e-3 * w, hi - 0.1 * w))
    if not interpolate or prev is None:
        return 2.0 * lo
    lo_prev, d_prev = prev
    rise = d_lo - d_prev
    if not (np.isfinite(rise) and rise > 0):
        return 2.0 * lo
    return float(np.clip(lo - d_lo * (lo - lo_prev) / rise, 2.0 * lo, 20.0 * lo))


def weak_wolfe(
    fun: Fun,
    jac: Jac,
    x: np.ndarray,
    d: np.ndarray,
    g: np.ndarray,
    f0: float | None = None,
    *,
    c1: float = 0.1,
    c2: float = 0.9,
    eta0: float = 1.0,
    max_evals: int = 100,
    roundoff_guard: bool = True,
    interpolate: bool = True,
) -> LineSearchResult:
    """Weak Wolfe step by a safeguarded bracketing search, trying ``eta0`` (default the unit
    step) first.

    Accepts eta when both
    Armijo: f(x + eta d) <= f(x) + c1 eta g^T d, and
    curvature: grad f(x + eta d)^T d >= c2 g^T d
    hold. Armijo failing shrinks the bracket from above, curvature failing from below. The next
    trial is the bracket's midpoint (or twice the lower end while no upper end is known) with
    ``interpolate=False``; by default it is a safeguarded interpolation (quadratic inside the
    bracket, secant of the slope outside it) with a bisection whenever two trials in a row did
    not halve the bracket, which cuts the evaluations of the early, badly scaled iterations.
    Only function values and directional derivatives are used, so the search is affine
    invariant.

    With ``roundoff_guard``, a trial whose value differs from f(x) by less than the round-off of
    f is judged by the derivative form of Armijo instead, so the search still works when
    f - f* is near machine precision.
    """
    c1 = check_in_range(c1, "c1", 0.0, 0.5)
    c2 = check_in_range(c2, "c2", c1, 1.0)
    eta = check_positive(eta0, "eta0")
    max_evals = check_int(max_evals, "max_evals", minimum=1)
    x, d, slope, f0 = _start(x, d, g, f0, fun)
    lo, hi, f_lo, d_lo, f_hi, prev, njev = 0.0, np.inf, f0, slope, np.nan, None, 0
    widths = [np.inf, np.inf]  # bracket widths before the last two trials
    resolution = _ROUNDOFF * max(1.0, abs(f0))
    for k in range(1, max_evals + 1):
        tried, x_new = eta, x + eta * d
        f_new = float(fun(x_new))
        g_new = None
        armijo = f_new <= f0 + c1 * eta * slope  # False for nan or inf too
        if not armijo and roundoff_guard and abs(f_new - f0) <= resolution:
            # f cannot resolve the decrease any more (f - f* near machine precision): test Armijo
            # through its derivative form, phi'(eta) <= (2 c1 - 1) phi'(0), exact for quadratics
            # (Hager and Zhang's "approximate Wolfe" safeguard).
            g_new = np.asarray(jac(x_new), dtype=float)
            njev += 1
            armijo = g_new @ d <= (2 * c1 - 1) * slope
        if not armijo:
            hi, f_hi = eta, f_new
        else:
            if g_new is None:
                g_new = np.asarray(jac(x_new), dtype=float)
                njev += 1
            d_new = float(g_new @ d)
            if d_new >= c2 * slope:
                return LineSearchResult(eta, f_new, g_new, k, njev, True)
            prev, lo, f_lo, d_lo = (lo, d_lo), eta, f_new, d_new
        eta = _next_trial(lo, f_lo, d_lo, hi, f_hi, prev, interpolate)
        width = hi - lo
        if interpolate and np.isfinite(width) and width > 0.5 * widths[0]:
            eta = 0.5 * (lo + hi)  # interpolation is not shrinking the bracket: bisect
        widths = [widths[1], width]
    return LineSearchResult(tried, f_new, g_new, max_evals, njev, False)


def strong_wolfe(
    fun: Fun,
    jac: Jac,
    x: np.ndarray,
    d: np.ndarray,
    g: np.ndarray,
    f0: float | None = None,
    *,
    c1: float = 1e-4,
    c2: float = 0.9,
    max_evals: int = 50,
) -> LineSearchResult:
    """Strong Wolfe step (|grad f(x + eta d)^T d| <= c2 |g^T d|) via ``scipy.optimize.line_search``."""
    c1 = check_in_range(c1, "c1", 0.0, 0.5)
    c2 = check_in_range(c2, "c2", c1, 1.0)
    max_evals = check_int(max_evals, "max_evals", minimum=1)
    x, d, _, f0 = _start(x, d, g, f0, fun)
    with warnings.catch_warnings():  # scipy warns when it gives up; we report success=False
        warnings.simplefilter("ignore")
        eta, nfev, ngev, f_new, _, g_new = _scipy_line_search(
            fun, jac, x, d, gfk=g, old_fval=f0, c1=c1, c2=c2, maxiter=max_evals
        )
    if eta is None:
        return LineSearchResult(0.0, f0, None, nfev, ngev, False)
    g_new = None if g_new is None else np.asarray(g_new, dtype=float)
    return LineSearchResult(float(eta), float(f_new), g_new, nfev, ngev, True)
