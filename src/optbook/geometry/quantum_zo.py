"""Quantum zeroth-order convex optimization: gradients from a phase oracle (chapter 15).

Augustino, Fontana, Herman, Kim, Watkins, Chakrabarti and Pistoia, *Fast Zeroth-Order Convex
Optimization with Quantum Gradient Methods* (NeurIPS 2025), feed quantum gradient estimates,
built from noisy function-evaluation oracles, into projected gradient descent, mirror descent,
dual averaging and mirror prox, and get zeroth-order query counts that grow only
polylogarithmically with the dimension ``d``.

Everything quantum here is **classically simulated** or **emulated under a labelled cost model**:

* :func:`jordan_distribution` / :func:`jordan_gradient`: an exact state-vector simulation
  (``N**d`` amplitudes, so ``d <= 3``) of Jordan's gradient-estimation algorithm with a noisy
  evaluation oracle, and the coordinate-wise median trick;
* :class:`EmulatedJordanOracle`: for large ``d``, the *output* of a successful median-of-``r``
  Jordan estimate (every coordinate within one grid cell ``m/N``), charged
  :func:`median_repetitions` queries per call. This is a cost model, not a simulation.

Query convention used everywhere: **one query = one call of the phase oracle**
``|k> -> exp(2 pi i S f~(x_k)) |k>`` (one repetition of Jordan's circuit), and **one classical
evaluation** ``f~(x)`` for the classical baselines. Building the phase oracle from a binary
value oracle costs a constant factor more (compute and uncompute), which we do not count.

The outer loops (:func:`mirror_descent`, :func:`dual_averaging`, :func:`mirror_prox`,
:func:`zo_gradient_descent`, :func:`game_dynamics`) are exact classical methods driven by
whatever gradient oracle they are given.
"""
from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache

import numpy as np
import plotly.graph_objects as go
from scipy.optimize import linprog
from scipy.stats import binom

from ..claims import Measured, claim
from ..core import Result, Trace, as_rng, check_choice, check_in_range, check_int, check_matrix
from ..core import check_positive, check_vector, project_ball
from ..core.validate import RngLike
from ..viz import Phase, SliderStep, base_layout, color_for, phase_layout, slider_figure
from ..widgets import Explorer, Slider

#: Probability that one shot of Jordan's algorithm lands on one of the two grid points nearest
#: to the true scaled gradient of a *linear* function, per coordinate (worst case: 8/pi^2).
P_ONE_CELL = 8.0 / np.pi ** 2
#: Largest number of amplitudes we agree to simulate (2**18 = 64**3).
MAX_AMPLITUDES = 2 ** 18

GradientOracle = Callable[[np.ndarray], np.ndarray]


# --------------------------------------------------------------------------------------------
# Jordan's algorithm, simulated exactly
# --------------------------------------------------------------------------------------------

def _check_jordan_args(x0, m, ell, n_bits, noise):
    x0 = check_vector(x0, "x0")
    m = check_positive(m, "m")
    ell = check_positive(ell, "ell")
    n_bits = check_int(n_bits, "n_bits", minimum=1)
    noise = check_positive(noise, "noise", allow_zero=True)
    if (2 ** n_bits) ** x0.size > MAX_AMPLITUDES:
        raise ValueError(f"x0 and n_bits ask for (2**{n_bits})**{x0.size} amplitudes; a state-vector "
                         f"simulation is limited to {MAX_AMPLITUDES} (use EmulatedJordanOracle)")
    return x0, m, ell, n_bits, noise


def jordan_grid(x0: np.ndarray, ell: float, n_bits: int) -> np.ndarray:
    """The evaluation points ``x_k = x0 + ell (k/N - 1/2)``, ``k in {0..N-1}^d``, ``N = 2**n_bits``.

    Returned with shape ``(N,)*d + (d,)`` (C order: the last grid axis is coordinate ``d-1``).
    """
    x0 = check_vector(x0, "x0")
    ell = check_positive(ell, "ell")
    n_bits = check_int(n_bits, "n_bits", minimum=1)
    n = 2 ** n_bits
    offsets = ell * (np.arange(n) / n - 0.5)
    mesh = np.meshgrid(*([offsets] * x0.size), indexing="ij")
    return np.stack(mesh, axis=-1) + x0


def grid_values(f: Callable, x0: np.ndarray, ell: float, n_bits: int, *, vectorized: bool = False) -> np.ndarray:
    """``f`` on the Jordan grid, shape ``(N,)*d``; ``vectorized`` means ``f`` maps ``(n, d) -> (n,)``."""
    pts = jordan_grid(x0, ell, n_bits)
    flat = pts.reshape(-1, pts.shape[-1])
    vals = np.asarray(f(flat), dtype=float) if vectorized else np.array([float(f(p)) for p in flat])
    if vals.shape != (flat.shape[0],):
        raise ValueError(f"f must return one value per grid point, got shape {vals.shape}")
    if not np.all(np.isfinite(vals)):
        raise ValueError("f must be finite on the Jordan grid")
    return vals.reshape(pts.shape[:-1])


def phase_probabilities(values: np.ndarray, m: float, ell: float, d: int | None = None) -> np.ndarray:
    """Measurement distribution of Jordan's circuit given oracle values on the grid.

    ``values`` has shape ``batch + (N,)*d`` (``d`` defaults to ``values.ndim``: no batch). The state
    after one phase query is ``psi[k] = N^{-d/2} exp(2 pi i S values[k])`` with ``S = N/(m ell)``;
    the inverse QFT on each register is numpy's forward FFT (kernel ``exp(-2 pi i j k/N)``), and
    the result is ``|phi[j]|^2``. The global phase (the value at the centre of the grid) is
    removed first, which changes no probability but keeps the phases accurate.
    """
    values = np.asarray(values, dtype=float)
    m = check_positive(m, "m")
    ell = check_positive(ell, "ell")
    d = values.ndim if d is None else check_int(d, "d", minimum=1)
    if d > values.ndim or len(set(values.shape[values.ndim - d:])) != 1:
        raise ValueError(f"values must end with {d} axes of equal length N, got shape {values.shape}")
    if not np.all(np.isfinite(values)):
        raise ValueError("values must be finite")
    return _probabilities(values, m, ell, d)


def _probabilities(values: np.ndarray, m: float, ell: float, d: int) -> np.ndarray:
    n = values.shape[-1]
    axes = tuple(range(values.ndim - d, values.ndim))
    centre = values[(...,) + (n // 2,) * d]
    scale = n / (m * ell)
    shifted = values - centre[(...,) + (None,) * d]
    psi = np.exp(2j * np.pi * scale * shifted) / n ** (d / 2)
    phi = np.fft.fftn(psi, axes=axes) / n ** (d / 2)
    return phi.real ** 2 + phi.imag ** 2


def signed_index(j: np.ndarray | int, n: int) -> np.ndarray:
    """Map measured register values ``j in {0..N-1}`` to ``[-N/2, N/2)`` (``j >= N/2`` -> ``j - N``)."""
    j = np.asarray(j)
    return np.where(j >= n // 2, j - n, j)


def jordan_distribution(
    f: Callable, x0: np.ndarray, *, m: float, ell: float, n_bits: int, noise: float = 0.0,
    noise_draws: int = 1, rng: RngLike = None, vectorized: bool = False,
) -> np.ndarray:
    """Outcome probabilities of one run of Jordan's algorithm, shape ``(N,)*d``, indexed by the raw
    register values ``j`` (use :func:`signed_index` and ``m j / N`` for the gradient estimate).

    With ``noise > 0`` the oracle returns ``f(x_k) + noise * xi_k``, ``xi_k ~ N(0, 1)`` independent
    per grid point and per query; the probabilities are then averaged over ``noise_draws`` oracle
    realisations (the distribution of a single measured outcome).
    """
    x0, m, ell, n_bits, noise = _check_jordan_args(x0, m, ell, n_bits, noise)
    noise_draws = check_int(noise_draws, "noise_draws", minimum=1)
    gen = as_rng(rng)
    vals = grid_values(f, x0, ell, n_bits, vectorized=vectorized)
    if noise == 0.0:
        return _probabilities(vals, m, ell, x0.size)
    noisy = vals + noise * gen.standard_normal((noise_draws,) + vals.shape)
    return _probabilities(noisy, m, ell, x0.size).mean(axis=0)


def jordan_gradient(
    f: Callable, x0: np.ndarray, *, m: float, ell: float, n_bits: int, repetitions: int = 1,
    noise: float = 0.0, shift_radius: float = 0.0, rng: RngLike = None, vectorized: bool = False,
) -> Result:
    """Jordan's quantum gradient estimate at ``x0`` from a noisy evaluation oracle, boosted by the
    coordinate-wise median of ``repetitions`` independent runs (Jordan 2005; the robust version of
    Gilyen, Arunachalam and Wiebe; the paper's "quantum gradient estimation" subroutine).

    Parameters
    ----------
    f : callable
        The evaluation oracle ``f(x) -> float`` (or ``(n, d) -> (n,)`` with ``vectorized``).
    x0 : array, shape (d,)
        Where the gradient is wanted; ``d <= 3`` or so (``N**d`` amplitudes are simulated).
    m : float
        Gradient bound: the algorithm assumes ``||grad f||_inf < m/2``; larger components wrap.
    ell : float
        Side of the grid box around ``x0``. Small enough that ``f`` is nearly linear on it, large
        enough that the phase scale ``S = N/(m ell)`` does not blow up the oracle noise.
    n_bits : int
        Bits per coordinate register; ``N = 2**n_bits`` grid points per side, resolution ``m/N``.
    repetitions : int
        Odd number of independent runs whose coordinate-wise median is returned.
    noise : float
        Standard deviation of the Gaussian noise of the evaluation oracle.
    shift_radius : float
        If positive, every run is made at ``x0 + shift_radius * u``, ``u`` uniform in the unit ball:
        the random shift ("smooth locally, then estimate") that makes the estimate an approximate
        subgradient of a nonsmooth convex ``f`` (our reconstruction of the paper's device).

    Returns
    -------
    Result
        ``x`` (the estimate ``g_hat``), ``samples`` (every run's estimate, shape ``(r, d)``),
        ``queries`` (phase-oracle calls, one per run) and ``resolution`` (``m/N``).
    """
    x0, m, ell, n_bits, noise = _check_jordan_args(x0, m, ell, n_bits, noise)
    repetitions = check_int(repetitions, "repetitions", minimum=1)
    if repetitions % 2 == 0:
        raise ValueError(f"repetitions must be odd (a well-defined median), got {repetitions}")
    shift_radius = check_positive(shift_radius, "shift_radius", allow_zero=True)
    gen = as_rng(rng)
    d, n = x0.size, 2 ** n_bits
    samples = np.empty((repetitions, d))
    clean = None if shift_radius > 0 else grid_values(f, x0, ell, n_bits, vectorized=vectorized)
    for r in range(repetitions):
        if shift_radius > 0:
            u = gen.standard_normal(d)
            u *= gen.random() ** (1.0 / d) / np.linalg.norm(u)
            vals = grid_values(f, x0 + shift_radius * u, ell, n_bits, vectorized=vectorized)
        else:
            vals = clean
        if noise > 0:
            vals = vals + noise * gen.standard_normal(vals.shape)
        probs = _probabilities(vals, m, ell, d).ravel()
        j = gen.choice(probs.size, p=probs / probs.sum())
        samples[r] = m * signed_index(np.array(np.unravel_index(j, (n,) * d)), n) / n
    g_hat = np.median(samples, axis=0)
    return Result(x=g_hat, samples=samples, queries=repetitions, nfev=repetitions, resolution=m / n,
                  success=True, message="median of Jordan estimates", nit=repetitions)


def sample_jordan(probs: np.ndarray, shots: int, m: float, rng: RngLike = None) -> np.ndarray:
    """``shots`` gradient estimates ``m j / N`` drawn from a distribution of :func:`jordan_distribution`."""
    probs = np.asarray(probs, dtype=float)
    if probs.ndim < 1 or len(set(probs.shape)) != 1 or not np.all(np.isfinite(probs)) or probs.min() < 0:
        raise ValueError("probs must be a non-negative finite array of shape (N,)*d")
    shots = check_int(shots, "shots", minimum=1)
    m = check_positive(m, "m")
    gen = as_rng(rng)
    n = probs.shape[0]
    j = gen.choice(probs.size, size=shots, p=probs.ravel() / probs.sum())
    idx = np.stack(np.unravel_index(j, probs.shape), axis=1)
    return m * signed_index(idx, n) / n


def median_repetitions(d: int, delta: float, p: float = P_ONE_CELL) -> int:
    """Smallest odd ``r`` such that the coordinate-wise median of ``r`` Jordan runs is within one
    cell in *every* one of ``d`` coordinates with probability ``>= 1 - delta`` (union bound over
    coordinates; exact binomial tail ``P[Bin(r, p) <= (r-1)/2]`` per coordinate). Grows like
    ``log(d/delta)``: the only place the dimension enters the quantum query count."""
    d = check_int(d, "d", minimum=1)
    delta = check_in_range(delta, "delta", 0.0, 1.0)
    p = check_in_range(p, "p", 0.5, 1.0, closed=(False, True))
    r = 1
    while d * binom.cdf((r - 1) // 2, r, p) > delta:
        r += 2
    return r


class EmulatedJordanOracle:
    """**Cost model** of a boosted Jordan gradient estimate, for dimensions too large to simulate.

    Each call returns ``g_hat`` with ``g_hat_i`` one of the two grid values ``m k/N`` bracketing
    ``grad_i(x)`` (chosen at random), so ``||g_hat - grad(x)||_inf <= m/N``: what a successful
    median of Jordan runs delivers. Each call is charged ``median_repetitions(d, delta)`` phase
    queries, counted in ``queries``. Nothing quantum is simulated.
    """

    def __init__(self, grad: GradientOracle, d: int, *, m: float, n_bits: int = 16, delta: float = 0.01,
                 rng: RngLike = None):
        if not callable(grad):
            raise ValueError("grad must be callable")
        self.grad = grad
        self.d = check_int(d, "d", minimum=1)
        self.m = check_positive(m, "m")
        self.n_bits = check_int(n_bits, "n_bits", minimum=1)
        self.delta = check_in_range(delta, "delta", 0.0, 1.0)
        self.rng = as_rng(rng)
        self.per_call = median_repetitions(self.d, self.delta)
        self.queries = 0
        self.calls = 0

    @property
    def resolution(self) -> float:
        return self.m / 2 ** self.n_bits

    def __call__(self, x: np.ndarray) -> np.ndarray:
        g = np.asarray(self.grad(x), dtype=float)
        if g.shape != (self.d,):
            raise ValueError(f"grad must return shape ({self.d},), got {g.shape}")
        if np.max(np.abs(g)) >= self.m / 2:
            raise ValueError(f"||grad||_inf = {np.max(np.abs(g)):.3g} breaks the bound m/2 = {self.m / 2:.3g}")
        h = self.resolution
        lo = np.floor(g / h)
        self.queries += self.per_call
        self.calls += 1
        return h * (lo + (self.rng.random(self.d) < 0.5))


class CountedFunction:
    """Wraps an evaluation oracle ``f`` and counts its calls in ``calls`` (classical queries)."""

    def __init__(self, f: Callable[[np.ndarray], float]):
        if not callable(f):
            raise ValueError("f must be callable")
        self.f = f
        self.calls = 0

    def __call__(self, x: np.ndarray) -> float:
        self.calls += 1
        return float(self.f(x))


# --------------------------------------------------------------------------------------------
# Classical zeroth-order estimators (the baselines)
# --------------------------------------------------------------------------------------------

def gaussian_smoothing_gradient(f: Callable, x: np.ndarray, mu: float, rng: RngLike = None,
                                fx: float | None = None) -> np.ndarray:
    """Nesterov-Spokoiny two-point estimator ``(f(x + mu u) - f(x))/mu * u``, ``u ~ N(0, I)``.

    Unbiased for the gradient of the Gaussian smoothing ``f_mu``; exactly unbiased for
    ``grad f`` on a quadratic. Two evaluations (one if ``fx = f(x)`` is passed).
    """
    x = check_vector(x, "x")
    mu = check_positive(mu, "mu")
    u = as_rng(rng).standard_normal(x.size)
    f0 = float(f(x)) if fx is None else float(fx)
    return (float(f(x + mu * u)) - f0) / mu * u


def coordinate_fd_gradient(f: Callable, x: np.ndarray, h: float) -> np.ndarray:
    """Central differences ``(f(x + h e_i) - f(x - h e_i)) / (2h)``: ``2d`` evaluations, exact on
    quadratics."""
    x = check_vector(x, "x")
    h = check_positive(h, "h")
    eye = h * np.eye(x.size)
    return np.array([(float(f(x + e)) - float(f(x - e))) / (2 * h) for e in eye])


# --------------------------------------------------------------------------------------------
# Mirror maps and the outer loops
# --------------------------------------------------------------------------------------------

def _md_step(x: np.ndarray, g: np.ndarray, eta: float, geometry: str, radius: float) -> np.ndarray:
    if geometry == "simplex":
        z = np.log(np.maximum(x, 1e-300)) - eta * g
        z -= z.max()
        w = np.exp(z)
        return w / w.sum()
    return project_ball(x - eta * g, radius)


def _check_outer(fun, x0, jac, step, maxiter, geometry, radius, decay):
    if not callable(fun):
        raise ValueError("fun must be callable")
    if not callable(jac):
        raise ValueError("jac must be a callable gradient oracle")
    geometry = check_choice(geometry, "geometry", ("simplex", "ball"))
    x0 = check_vector(x0, "x0")
    radius = check_positive(radius, "radius")
    if geometry == "simplex" and (x0.min() <= 0 or abs(x0.sum() - 1) > 1e-9):
        raise ValueError("x0 must lie in the relative interior of the simplex (positive, sums to 1)")
    if geometry == "ball" and np.linalg.norm(x0) > radius * (1 + 1e-12):
        raise ValueError(f"x0 must lie in the ball of radius {radius}")
    step = check_positive(step, "step")
    maxiter = check_int(maxiter, "maxiter", minimum=1)
    decay = check_choice(decay, "decay", ("sqrt", "constant"))
    return x0, step, maxiter, geometry, radius, decay


def _eta(step: float, k: int, decay: str) -> float:
    return step / np.sqrt(k + 1) if decay == "sqrt" else step


def _queries(jac) -> float:
    return float(getattr(jac, "queries", np.nan))


def _outer_loop(kind, fun, x0, jac, step, maxiter, geometry, radius, decay, f_star, tol, name, check_every=1):
    x0, step, maxiter, geometry, radius, decay = _check_outer(fun, x0, jac, step, maxiter, geometry,
                                                              radius, decay)
    check_every = check_int(check_every, "check_every", minimum=1)
    if tol is not None:
        tol = check_positive(tol, "tol")
        if f_star is None:
            raise ValueError("tol needs f_star (the stopping rule is f(x_avg) - f_star <= tol)")
    tr = Trace(name, meta={"geometry": geometry, "step": step, "decay": decay})
    x, x_sum, w_sum = x0.copy(), np.zeros_like(x0), 0.0
    g_sum = np.zeros_like(x0)
    x_avg = x0.copy()
    f_avg = float(fun(x_avg))
    tr.record(objective=f_avg, queries=_queries(jac), iteration=0)
    success = False
    for k in range(maxiter):
        eta = _eta(step, k, decay)
        if kind == "md":
            g = np.asarray(jac(x), dtype=float)
            x_eval, x = x, _md_step(x, g, eta, geometry, radius)
        elif kind == "da":
            g = np.asarray(jac(x), dtype=float)
            g_sum += g
            x_eval = x
            x = _md_step(x0, g_sum, eta, geometry, radius)
        else:  # mirror prox (extragradient)
            g = np.asarray(jac(x), dtype=float)
            x_half = _md_step(x, g, eta, geometry, radius)
            g = np.asarray(jac(x_half), dtype=float)
            x_eval, x = x_half, _md_step(x, g, eta, geometry, radius)
        x_sum += eta * x_eval
        w_sum += eta
        if (k + 1) % check_every and k + 1 < maxiter:
            continue
        x_avg = x_sum / w_sum
        f_avg = float(fun(x_avg))
        gap = f_avg - f_star if f_star is not None else np.nan
        tr.record(objective=f_avg, grad_norm=float(np.linalg.norm(g)), step_size=eta,
                  queries=_queries(jac), last=float(fun(x)), gap=gap, iteration=k + 1)
        if tol is not None and gap <= tol:
            success = True
            break
    return Result(x=x_avg, fun=f_avg, x_last=x, nit=k + 1, success=success, trace=tr,
                  queries=_queries(jac),
                  message="reached f - f* <= tol" if success else "maxiter reached")


def mirror_descent(fun: Callable, x0: np.ndarray, jac: GradientOracle, *, step: float = 0.5,
                   maxiter: int = 500, geometry: str = "ball", radius: float = 1.0, decay: str = "sqrt",
                   f_star: float | None = None, tol: float | None = None, name: str = "mirror descent",
                   check_every: int = 1) -> Result:
    """Mirror descent with (estimated) subgradients, returning the step-weighted average iterate.

    ``geometry="ball"``: Euclidean mirror map, i.e. projected (sub)gradient descent on
    ``{||x|| <= radius}``, ``x+ = Pi(x - eta g)``. ``geometry="simplex"``: entropic mirror map,
    ``x+_i ∝ x_i exp(-eta g_i)`` (multiplicative weights). Step ``eta_k = step/sqrt(k+1)`` (or
    constant). ``jac`` may be any gradient oracle: exact, :class:`EmulatedJordanOracle` (its
    ``queries`` are recorded in the trace) or a classical estimator. Stops when
    ``f(x_avg) - f_star <= tol`` if both are given (tested every ``check_every`` iterations).
    ``fun`` is only used to *record* progress.
    ("Quantum mirror descent" in the paper when ``jac`` is a quantum estimate.)
    """
    return _outer_loop("md", fun, x0, jac, step, maxiter, geometry, radius, decay, f_star, tol, name,
                       check_every)


def dual_averaging(fun: Callable, x0: np.ndarray, jac: GradientOracle, *, step: float = 0.5,
                   maxiter: int = 500, geometry: str = "ball", radius: float = 1.0, decay: str = "sqrt",
                   f_star: float | None = None, tol: float | None = None, name: str = "dual averaging") -> Result:
    """Nesterov's dual averaging: ``x_{k+1} = argmin <sum_s g_s, x> + h(x)/eta_k`` with the mirror map
    ``h`` of ``geometry`` (the paper's "quantum dual averaging" with estimated gradients)."""
    return _outer_loop("da", fun, x0, jac, step, maxiter, geometry, radius, decay, f_star, tol, name)


def mirror_prox(fun: Callable, x0: np.ndarray, jac: GradientOracle, *, step: float = 0.5,
                maxiter: int = 500, geometry: str = "ball", radius: float = 1.0, decay: str = "constant",
                f_star: float | None = None, tol: float | None = None, name: str = "mirror prox") -> Result:
    """Nemirovski's mirror prox (extragradient): ``x~ = MD(x_k, g(x_k))``, ``x_{k+1} = MD(x_k, g(x~))``,
    two oracle calls per iteration; averages the ``x~`` (the paper's "quantum mirror prox")."""
    return _outer_loop("mp", fun, x0, jac, step, maxiter, geometry, radius, decay, f_star, tol, name)


def zo_gradient_descent(fun: Callable, x0: np.ndarray, *, estimator: str = "gaussian", step: float = 0.1,
                        mu: float = 1e-4, maxiter: int = 1000, radius: float = 1.0, decay: str = "sqrt",
                        f_star: float | None = None, tol: float | None = None, rng: RngLike = None,
                        name: str | None = None, check_every: int = 1) -> Result:
    """Classical zeroth-order projected descent on ``{||x|| <= radius}`` (the baselines).

    ``estimator="gaussian"``: Nesterov-Spokoiny two-point estimate (2 evaluations per step);
    ``"coordinate"``: central differences (``2d`` evaluations per step). Every call of ``fun`` made
    by the *method* is counted as a query (``queries`` in the trace); the recording of
    ``f(x_avg)`` for the plots goes around the counter. ``check_every`` records (and tests the
    stopping rule) every that many iterations only, to keep long runs cheap.
    """
    estimator = check_choice(estimator, "estimator", ("gaussian", "coordinate"))
    mu = check_positive(mu, "mu")
    gen = as_rng(rng)
    counted = CountedFunction(fun)

    class _Oracle:
        @property
        def queries(self) -> int:
            return counted.calls

        def __call__(self, x):
            if estimator == "gaussian":
                return gaussian_smoothing_gradient(counted, x, mu, gen)
            return coordinate_fd_gradient(counted, x, mu)

    label = name or ("ZO-GD (Gaussian two-point)" if estimator == "gaussian" else "coordinate differences")
    return _outer_loop("md", fun, x0, _Oracle(), step, maxiter, "ball", radius, decay, f_star, tol, label,
                       check_every)


# --------------------------------------------------------------------------------------------
# Zero-sum games (the paper's white-box application, with estimated payoff gradients)
# --------------------------------------------------------------------------------------------

def game_value(A: np.ndarray) -> tuple[float, np.ndarray, np.ndarray]:
    """Value and optimal strategies of ``min_x max_y x^T A y`` over simplices (scipy HiGHS LP)."""
    A = check_matrix(A, "A")
    n, k = A.shape

    def solve(M):  # min_x t  s.t.  M^T x <= t, x in simplex
        rows, cols = M.shape
        c = np.r_[np.zeros(rows), 1.0]
        A_ub = np.c_[M.T, -np.ones(cols)]
        A_eq = np.r_[np.ones(rows), 0.0][None, :]
        res = linprog(c, A_ub=A_ub, b_ub=np.zeros(cols), A_eq=A_eq, b_eq=[1.0],
                      bounds=[(0, None)] * rows + [(None, None)], method="highs")
        return res.x[-1], res.x[:-1]

    v, x = solve(A)
    _, y = solve(-A.T)
    return float(v), x, y


def duality_gap(A: np.ndarray, x: np.ndarray, y: np.ndarray) -> float:
    """``max_j (A^T x)_j - min_i (A y)_i >= 0``, zero exactly at a Nash equilibrium (x, y mixed
    strategies of the row and column player of the n x k payoff matrix A)."""
    A = check_matrix(A, "A")
    x = check_vector(x, "x", A.shape[0])
    y = check_vector(y, "y", A.shape[1])
    return _duality_gap(A, x, y)


def _duality_gap(A: np.ndarray, x: np.ndarray, y: np.ndarray) -> float:
    return float(np.max(A.T @ x) - np.min(A @ y))


def game_dynamics(A: np.ndarray, *, method: str = "mwu", step: float = 0.1, maxiter: int = 500,
                  noise: float = 0.0, rng: RngLike = None) -> Result:
    """Simultaneous multiplicative weights (``"mwu"``, entropic mirror descent for both players) or
    entropic mirror prox (``"mirror_prox"``) on ``min_x max_y x^T A y``, ``A in [-1, 1]^{n x k}``.

    Gradients ``A y`` and ``A^T x`` are perturbed by ``e`` uniform in ``[-noise, noise]`` per entry,
    modelling a quantum estimate accurate to ``m/N = noise`` in the sup norm. Reports the averaged
    iterates and their duality gap per iteration; ``queries`` counts gradient-oracle calls.
    """
    A = check_matrix(A, "A")
    if np.max(np.abs(A)) > 1:
        raise ValueError("A must have entries in [-1, 1] (rescale the payoffs)")
    method = check_choice(method, "method", ("mwu", "mirror_prox"))
    step = check_positive(step, "step")
    maxiter = check_int(maxiter, "maxiter", minimum=1)
    noise = check_positive(noise, "noise", allow_zero=True)
    gen = as_rng(rng)
    n, k = A.shape
    x, y = np.full(n, 1.0 / n), np.full(k, 1.0 / k)
    xs, ys = np.zeros(n), np.zeros(k)
    calls = 0

    def grads(x, y):
        nonlocal calls
        calls += 2
        return (A @ y + noise * gen.uniform(-1, 1, n), -(A.T @ x) + noise * gen.uniform(-1, 1, k))

    tr = Trace("MWU" if method == "mwu" else "mirror prox", meta={"noise": noise, "step": step})
    xs_hist, ys_hist = [], []
    for t in range(maxiter):
        gx, gy = grads(x, y)
        if method == "mwu":
            xe, ye = x, y
            x, y = _md_step(x, gx, step, "simplex", 1.0), _md_step(y, gy, step, "simplex", 1.0)
        else:
            xe, ye = _md_step(x, gx, step, "simplex", 1.0), _md_step(y, gy, step, "simplex", 1.0)
            gx, gy = grads(xe, ye)
            x, y = _md_step(x, gx, step, "simplex", 1.0), _md_step(y, gy, step, "simplex", 1.0)
        xs += xe
        ys += ye
        xa, ya = xs / (t + 1), ys / (t + 1)
        xs_hist.append(xa)
        ys_hist.append(ya)
        tr.record(objective=float(np.max(A.T @ xa)), gap=_duality_gap(A, xa, ya), queries=calls,
                  step_size=step, last_gap=_duality_gap(A, x, y))
    return Result(x=xs / maxiter, y=ys / maxiter, nit=maxiter, trace=tr, queries=calls, success=True,
                  gap=_duality_gap(A, xs / maxiter, ys / maxiter), x_avg_path=np.array(xs_hist),
                  y_avg_path=np.array(ys_hist), message="maxiter reached")


# --------------------------------------------------------------------------------------------
# Experiments: the test problem of the query race
# --------------------------------------------------------------------------------------------

class L1Regression:
    """``f(x) = (1/n) ||B x - c||_1`` on ``{||x|| <= radius}`` with ``B ~ N(0, 1)^{n x d}``,
    ``c = B x_true + Laplace noise``, ``||x_true|| = 1``, ``n = max(n_min, n_per_dim * d)``: a nonsmooth convex
    problem whose geometry (Lipschitz constant ~1, distance ~1) does not change with ``d``.
    ``f_star`` comes from the LP reformulation solved by scipy's HiGHS."""

    def __init__(self, d: int, *, n_per_dim: int = 4, n_min: int = 16, noise: float = 0.1,
                 radius: float = 2.0, rng: RngLike = None):
        self.d = check_int(d, "d", minimum=1)
        n_per_dim = check_int(n_per_dim, "n_per_dim", minimum=1)
        noise = check_positive(noise, "noise", allow_zero=True)
        self.radius = check_positive(radius, "radius")
        gen = as_rng(rng)
        self.n = max(check_int(n_min, "n_min", minimum=1), n_per_dim * self.d)
        self.B = gen.standard_normal((self.n, self.d))
        x_true = gen.standard_normal(self.d)
        self.x_true = x_true / np.linalg.norm(x_true)
        self.c = self.B @ self.x_true + noise * gen.laplace(size=self.n)
        #: sup-norm bound on every subgradient, so m = 2 * bound + margin keeps Jordan in range.
        self.grad_bound = float(np.max(np.mean(np.abs(self.B), axis=0)))
        self.x_star, self.f_star = self._solve()

    def fun(self, x: np.ndarray) -> float:
        r = self.B @ x
        r -= self.c
        return float(np.abs(r).sum()) / self.n

    def jac(self, x: np.ndarray) -> np.ndarray:
        """A subgradient ``(1/n) B^T sign(Bx - c)``."""
        return self.B.T @ np.sign(self.B @ x - self.c) / self.n

    def _solve(self) -> tuple[np.ndarray, float]:
        # min (1/n) sum t  s.t. -t <= Bx - c <= t; the ball constraint is inactive for x_true
        # (checked below), so the LP is exact.
        n, d = self.n, self.d
        cost = np.r_[np.zeros(d), np.ones(n) / n]
        eye = np.eye(n)
        A_ub = np.block([[self.B, -eye], [-self.B, -eye]])
        b_ub = np.r_[self.c, -self.c]
        res = linprog(cost, A_ub=A_ub, b_ub=b_ub, bounds=[(None, None)] * d + [(0, None)] * n,
                      method="highs")
        x = res.x[:d]
        if np.linalg.norm(x) > self.radius:
            raise ValueError("the unconstrained minimiser left the ball; enlarge radius")
        return x, self.fun(x)


STEP_GRID = (1.0, 2.0, 4.0, 8.0, 16.0)   # multiples of the base step, tuned per method and d
DIMS = (4, 8, 16, 32, 64, 128)
TARGET = 0.05


#: Query budgets per run: generous multiples of what a well-tuned run needs at d = 128.
BUDGETS = {"quantum model": 20_000, "coordinate FD": 50_000, "ZO-GD": 150_000}


@lru_cache(maxsize=256)
def race_run(method: str, d: int, seed: int, step_mult: float, *, target: float = TARGET,
             budget: int | None = None) -> Result:
    """One run of the query race on :class:`L1Regression` (``d``, ``seed``), from ``x = 0``.

    ``method``: ``"quantum model"`` (projected subgradient descent with an
    :class:`EmulatedJordanOracle`, base step 0.5), ``"ZO-GD"`` (Gaussian two-point, base step
    ``0.5/d``, ``mu = 1e-4``) or ``"coordinate FD"`` (central differences, base step 0.5), all with
    steps ``base * step_mult / sqrt(k+1)``. Stops at ``f - f* <= target`` or after ``budget`` queries.
    Cached: the claim, the race figure and its live twin share these runs.
    """
    d = check_int(d, "d", minimum=1)
    target = check_positive(target, "target")
    method = check_choice(method, "method", ("quantum model", "ZO-GD", "coordinate FD"))
    budget = BUDGETS[method] if budget is None else check_int(budget, "budget", minimum=1)
    method = check_choice(method, "method", ("quantum model", "ZO-GD", "coordinate FD"))
    prob = _problem(d, seed)
    x0 = np.zeros(d)
    rng = np.random.default_rng(1000 + seed)
    if method == "quantum model":
        oracle = EmulatedJordanOracle(prob.jac, d, m=2 * prob.grad_bound + 1e-9 + 0.5, rng=rng)
        iters = max(1, budget // oracle.per_call)
        return mirror_descent(prob.fun, x0, oracle, step=0.5 * step_mult, maxiter=iters, geometry="ball",
                              radius=prob.radius, f_star=prob.f_star, tol=target, name=method)
    if method == "ZO-GD":
        return zo_gradient_descent(prob.fun, x0, estimator="gaussian", step=0.5 * step_mult / d,
                                   maxiter=max(1, budget // 2), radius=prob.radius, f_star=prob.f_star,
                                   tol=target, rng=rng, name=method, check_every=max(1, d // 8))
    return zo_gradient_descent(prob.fun, x0, estimator="coordinate", step=0.5 * step_mult,
                               maxiter=max(1, budget // (2 * d)), radius=prob.radius, f_star=prob.f_star,
                               tol=target, rng=rng, name=method)


@lru_cache(maxsize=64)
def _problem(d: int, seed: int) -> L1Regression:
    return L1Regression(d, rng=seed)


def queries_to_target(res: Result) -> float:
    """Queries spent when ``f(x_avg) - f* <= target`` first held (inf if never)."""
    return float(res.trace["queries"][-1]) if res.success else np.inf


@lru_cache(maxsize=64)
def tuned_step(method: str, d: int, seed: int = 0) -> float:
    """The multiplier in :data:`STEP_GRID` reaching the target in the fewest queries on ``seed``
    (runs that cannot beat the best so far are cut off at its query count)."""
    best, best_q = STEP_GRID[-1], np.inf
    for mult in STEP_GRID[::-1]:
        cap = int(min(BUDGETS[method], best_q)) if np.isfinite(best_q) else None
        qn = queries_to_target(race_run(method, d, seed, mult, budget=cap))
        if qn < best_q:
            best, best_q = mult, qn
    return best


def race_queries(method: str, d: int, seeds: int) -> np.ndarray:
    """Queries to the target for seeds ``0..seeds-1`` at the step tuned on seed 0."""
    mult = tuned_step(method, d)
    return np.array([queries_to_target(race_run(method, d, s, mult)) for s in range(seeds)])


# --------------------------------------------------------------------------------------------
# The Jordan test function (2-D quadratic) and its experiments
# --------------------------------------------------------------------------------------------

H0 = np.array([[2.0, 0.5], [0.5, 1.0]])
X0 = np.array([0.3, -0.2])
G0 = np.array([0.7, -0.45])          # the true gradient at X0 (||G0||_inf <= m/4 for m = 4)
M_BOUND = 4.0


def quadratic_oracle(curvature: float = 1.0) -> Callable[[np.ndarray], np.ndarray]:
    """Vectorised ``f(x) = 1/2 x^T (curvature H0) x + c^T x`` with ``grad f(X0) = G0`` whatever the
    curvature: maps ``(n, 2) -> (n,)``."""
    curvature = check_positive(curvature, "curvature", allow_zero=True)
    H = curvature * H0
    c = G0 - H @ X0
    return lambda X: 0.5 * np.einsum("ni,ij,nj->n", X, H, X) + X @ c


def curvature_threshold(n_bits: int, curvature: float = 1.0, m: float = M_BOUND) -> float:
    """The box side at which ``||H|| ell^2 = m ell / N``, i.e. the gradient changes by one grid cell
    ``m/N`` across the box (the card's "curvature matters" threshold)."""
    return m / (2 ** n_bits * curvature * float(np.linalg.eigvalsh(H0)[-1]))


def _shots(curvature: float, ell: float, n_bits: int, sigma: float, shots: int, rng) -> np.ndarray:
    """``shots`` single-run estimates, each with its own oracle-noise realisation."""
    vals = grid_values(quadratic_oracle(curvature), X0, ell, n_bits, vectorized=True)
    if sigma == 0:
        return sample_jordan(_probabilities(vals, M_BOUND, ell, 2), shots, M_BOUND, rng)
    out, n = [], 2 ** n_bits
    for start in range(0, shots, 500):
        k = min(500, shots - start)
        probs = _probabilities(vals + sigma * rng.standard_normal((k,) + vals.shape), M_BOUND, ell, 2)
        flat = probs.reshape(k, -1)
        cdf = np.cumsum(flat, axis=1)
        j = np.minimum((cdf < rng.random((k, 1)) * cdf[:, -1:]).sum(axis=1), flat.shape[1] - 1)
        out.append(M_BOUND * signed_index(np.stack(np.unravel_index(j, (n, n)), axis=1), n) / n)
    return np.concatenate(out)


def jordan_success(*, curvature: float = 1.0, ell: float = 1e-3, n_bits: int = 5, noise: float = 0.0,
                   shots: int = 2000, repetitions: int = 1, rng: RngLike = 0) -> dict[str, float]:
    """Frequencies with which estimates are within ``2m/N`` of ``G0``: per coordinate and jointly,
    for single shots or for the coordinate-wise median of ``repetitions`` shots. ``noise`` is the
    oracle's standard deviation in units of ``m ell / N``."""
    gen = as_rng(rng)
    n = 2 ** n_bits
    sigma = noise * M_BOUND * ell / n
    est = _shots(curvature, ell, n_bits, sigma, shots * repetitions, gen)
    est = np.median(est.reshape(shots, repetitions, 2), axis=1)
    ok = np.abs(est - G0) <= 2 * M_BOUND / n
    return {"coord1": float(ok[:, 0].mean()), "coord2": float(ok[:, 1].mean()), "joint": float(ok.all(axis=1).mean())}


@claim("15", "Simulated Jordan estimator: within 2m/N per shot, boosted by the median, broken by noise",
       expect="per-shot frequency within 2m/N >= 0.8 per coordinate; median of 7 jointly >= 0.99; "
              "with oracle noise sigma = m*ell/N jointly <= 0.5", name="jordan_estimator")
def claim_jordan_estimator(fast: bool = False) -> Measured:
    shots = 1000 if fast else 2000
    single = jordan_success(shots=shots, rng=1)
    boosted = jordan_success(shots=shots, repetitions=7, rng=2)
    noisy = jordan_success(shots=shots, noise=1.0, rng=3)
    holds = min(single["coord1"], single["coord2"]) >= 0.8 and boosted["joint"] >= 0.99 and noisy["joint"] <= 0.5
    values = {"single_coord1": single["coord1"], "single_coord2": single["coord2"],
              "single_joint": single["joint"], "median7_joint": boosted["joint"],
              "noisy_joint": noisy["joint"], "shots": shots}
    return Measured(values, holds=holds,
                    summary=f"d=2, N=32, m=4, ell=1e-3; {shots} shots per frequency",
                    details={"single": single, "boosted": boosted, "noisy": noisy})


CURVATURE_FACTORS = (0.25, 1.0, 2.0, 4.0, 8.0, 16.0, 32.0)


def curvature_sweep(factors=CURVATURE_FACTORS, shots: int = 2000, rng: RngLike = 4) -> list[dict]:
    """Joint single-shot success as the box grows past the curvature threshold (no noise)."""
    gen = as_rng(rng)
    thr = curvature_threshold(5)
    return [{"ell / threshold": fac, "ell": fac * thr,
             "joint success": jordan_success(ell=fac * thr, shots=shots, rng=gen)["joint"]} for fac in factors]


@claim("15", "Curvature: once the box passes the stated threshold the estimator fails (ell = 4x threshold)",
       expect="joint single-shot success <= 0.5 at ||H|| ell^2 = 4 m ell / N", reproduces=False,
       name="curvature_threshold")
def claim_curvature_threshold(fast: bool = False) -> Measured:
    shots = 1000 if fast else 2000
    factors = (1.0, 4.0) if fast else CURVATURE_FACTORS
    rows = curvature_sweep(factors, shots=shots)
    at4 = next(r["joint success"] for r in rows if r["ell / threshold"] == 4.0)
    values = {"joint_at_4x": at4, **{f"joint_at_{r['ell / threshold']:g}x": r["joint success"] for r in rows}}
    return Measured(values, holds=at4 <= 0.5,
                    summary="a centred quadratic blurs the peak symmetrically instead of moving it",
                    details=rows)


@claim("15", "Under the query cost model, classical ZO queries grow ~linearly in d, the quantum model's ~log d",
       expect="queries to f - f* <= 0.05 from d=4 to d=128: classical ZO-GD >= 10x, quantum model <= 2x",
       reproduces=False, name="query_scaling")
def claim_query_scaling(fast: bool = False) -> Measured:
    dims = (4, 128) if fast else DIMS
    zo_seeds = 3 if fast else 5
    table = {}
    for d in dims:
        table[d] = {"quantum model": float(np.median(race_queries("quantum model", d, QUANTUM_SEEDS))),
                    "ZO-GD": float(np.median(race_queries("ZO-GD", d, zo_seeds))),
                    "Q(d)": median_repetitions(d, 0.01)}
    q_ratio = table[128]["quantum model"] / table[4]["quantum model"]
    c_ratio = table[128]["ZO-GD"] / table[4]["ZO-GD"]
    iter_ratio = q_ratio * table[4]["Q(d)"] / table[128]["Q(d)"]
    values = {"zo_gd_ratio": c_ratio, "quantum_ratio": q_ratio, "quantum_iteration_ratio": iter_ratio,
              "Q4": table[4]["Q(d)"], "Q128": table[128]["Q(d)"],
              "zo_gd_queries_d128": table[128]["ZO-GD"], "quantum_queries_d128": table[128]["quantum model"]}
    return Measured(values, holds=c_ratio >= 10 and q_ratio <= 2,
                    summary=f"median over {QUANTUM_SEEDS} seeds (quantum model), {zo_seeds} (ZO-GD); "
                            "cost model, not a simulation", details=table)


QUANTUM_SEEDS = 9


# --------------------------------------------------------------------------------------------
# Figures and explorers
# --------------------------------------------------------------------------------------------

NOISE_LEVELS = (0.0, 0.1, 0.2, 0.3, 0.5, 1.0)
BOX_SIDES = (0.001, 0.03, 0.1, 0.3, 1.0)
BIT_CHOICES = (3, 4, 5, 6)
CURVATURES = (0.0, 1.0, 4.0, 16.0)


@lru_cache(maxsize=512)
def jordan_probs(n_bits: int, ell: float, curvature: float, noise: float) -> np.ndarray:
    """Outcome distribution on the test quadratic, centred (fftshift) so that axis index ``i``
    is the signed value ``i - N/2``; noise in units of ``m ell / N``, averaged over 48 draws."""
    n = 2 ** n_bits
    probs = jordan_distribution(quadratic_oracle(curvature), X0, m=M_BOUND, ell=ell, n_bits=n_bits,
                                noise=noise * M_BOUND * ell / n, noise_draws=48, rng=0, vectorized=True)
    return np.fft.fftshift(probs)


def jordan_traces(n_bits: int = 5, ell: float = 0.1, curvature: float = 1.0, noise: float = 0.0) -> list:
    """Heat map of P(g_hat) over the grid of possible estimates, and the true gradient."""
    n = 2 ** n_bits
    probs = jordan_probs(int(n_bits), float(ell), float(curvature), float(noise))
    axis = M_BOUND * (np.arange(n) - n // 2) / n
    return [
        go.Heatmap(x=axis, y=axis, z=probs.T, zmin=0, zmax=1, colorscale="Viridis",
                   colorbar=dict(title="probability"), name="P(estimate)",
                   hovertemplate="g1=%{x:.3f}<br>g2=%{y:.3f}<br>P=%{z:.3f}<extra></extra>"),
        go.Scatter(x=[G0[0]], y=[G0[1]], mode="markers", name="true gradient",
                   marker=dict(symbol="x-thin", size=16, line=dict(width=3, color="#d62728"))),
    ]


def _jordan_axes(fig: go.Figure) -> go.Figure:
    lim = [-M_BOUND / 2 - 0.1, M_BOUND / 2]
    fig.update_xaxes(range=lim, title_text="estimate of df/dx1 (m j1 / N)")
    fig.update_yaxes(range=lim, title_text="estimate of df/dx2 (m j2 / N)", scaleanchor="x")
    return fig


def jordan_figure(n_bits: int = 5, ell: float = 0.1, curvature: float = 1.0, noise: float = 0.0) -> go.Figure:
    """Live Jordan visualiser: the measurement distribution for one setting of the four knobs."""
    fig = go.Figure(jordan_traces(n_bits, ell, curvature, noise))
    base_layout(fig, height=520, title=f"N = {2 ** n_bits}, box {ell:g}, curvature {curvature:g}, "
                                       f"noise {noise:g} x m*ell/N")
    return _jordan_axes(fig)


def jordan_noise_slider_figure() -> go.Figure:
    """Static twin (noise): N = 32, box 1e-3, curvature 1, one frame per noise level."""
    steps = [SliderStep(f"{s:g}", jordan_traces(5, 0.001, 1.0, s)) for s in NOISE_LEVELS]
    fig = slider_figure(steps, slider_label="oracle noise sigma, in units of m*ell/N", active=0,
                        fixed_axes=False, height=560,
                        title="Jordan's measurement distribution: oracle noise scrambles the phases")
    return _jordan_axes(fig)


def jordan_box_slider_figure() -> go.Figure:
    """Static twin (box size): N = 32, curvature 1, no noise, one frame per box side."""
    steps = [SliderStep(f"{b:g}", jordan_traces(5, b, 1.0, 0.0)) for b in BOX_SIDES]
    fig = slider_figure(steps, slider_label="box side ell", active=0, fixed_axes=False, height=560,
                        title="A larger box lets curvature blur the peak")
    return _jordan_axes(fig)


EXPLORER_JORDAN = Explorer("15", "jordan", jordan_figure, {
    "n_bits": Slider("bits per coordinate (N = 2^bits)", BIT_CHOICES, 5, fmt="{:d}"),
    "ell": Slider("box side ell", BOX_SIDES, 0.1),
    "curvature": Slider("curvature (H = c H0)", CURVATURES, 1.0),
    "noise": Slider("noise sigma / (m ell / N)", NOISE_LEVELS, 0.0),
}, description="Jordan visualiser: measurement distribution on the grid of gradient estimates")


RACE_METHODS = ("quantum model", "coordinate FD", "ZO-GD")


@lru_cache(maxsize=1)
def race_curves() -> dict:
    """Seed-0 runs at the tuned steps for every d in :data:`DIMS` (computed once, then shared by the
    static race figure and its live twin)."""
    return {d: {meth: race_run(meth, d, 0, tuned_step(meth, d)).trace.thinned(200) for meth in RACE_METHODS}
            for d in DIMS}


def race_traces(d: int) -> list:
    """``f(x_avg) - f*`` against cumulative queries, one line per method, and the target line."""
    curves = race_curves()[int(d)]
    out = []
    for i, meth in enumerate(RACE_METHODS):
        tr = curves[meth]
        qs = np.maximum(tr["queries"], 1.0)
        out.append(go.Scatter(x=qs, y=np.maximum(tr["gap"], 1e-4), mode="lines", name=meth,
                              line=dict(color=color_for(i), width=2.4)))
    out.append(go.Scatter(x=[1, 2e5], y=[TARGET, TARGET], mode="lines", name="target f - f* = 0.05",
                          line=dict(color="#555", dash="dash", width=1.5)))
    return out


def race_phases(d: int) -> dict:
    """Shade the query ranges in which 1, 2, then 3 methods have reached the target."""
    ends = sorted((float(race_curves()[int(d)][m]["queries"][-1]), m) for m in RACE_METHODS)
    phases = [Phase(ends[0][0], ends[1][0], f"{ends[0][1]} done"),
              Phase(ends[1][0], ends[2][0], f"{ends[1][1]} done too")]
    return phase_layout(phases, logx=True)


def _race_axes(fig: go.Figure) -> go.Figure:
    fig.update_xaxes(type="log", range=[0, np.log10(2e5)], title_text="cumulative oracle queries (log)")
    fig.update_yaxes(type="log", range=[np.log10(0.02), np.log10(1.5)], title_text="f(x_avg) - f* (log)")
    return fig


def race_slider_figure() -> go.Figure:
    """Static twin of the query race: one frame per dimension d."""
    steps = [SliderStep(f"{d}", race_traces(d), race_phases(d)) for d in DIMS]
    fig = slider_figure(steps, slider_label="dimension d", active=3, fixed_axes=False, height=500,
                        title="The query race: zeroth-order queries to reach f - f* <= 0.05")
    return _race_axes(fig)


def race_figure(d: int = 32) -> go.Figure:
    """Live twin of the query race for one dimension."""
    fig = go.Figure(race_traces(d), layout=race_phases(d))
    base_layout(fig, height=500, title=f"d = {d}: queries to reach f - f* <= 0.05")
    return _race_axes(fig)


EXPLORER_RACE = Explorer("15", "race", race_figure, {"d": Slider("dimension d", DIMS, 32, fmt="{:d}")},
                         description="Query race: gap against cumulative queries")


def rps_game(eps: float = 0.3) -> np.ndarray:
    """Rock-paper-scissors with a perturbation (payoffs to the max player, in [-1, 1])."""
    eps = check_in_range(eps, "eps", 0.0, 1.0, closed=(True, True))
    A = np.array([[0.0, -1.0, 1.0], [1.0, 0.0, -1.0], [-1.0, 1.0, 0.0]])
    A[0, 1] += eps
    return A / np.max(np.abs(A))
