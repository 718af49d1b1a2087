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
* :class:`EmulatedJordanOracle`: for large ``d``, shots drawn from the *exact* outcome
  distribution of Jordan's circuit for the local linearisation of ``f``, with Gaussian oracle
  noise (:func:`shot_distribution`), and their coordinate-wise median, charged
  :func:`median_repetitions` queries per call. This is a cost model, not a simulation of ``N**d``
  amplitudes: it assumes ``f`` is linear on the grid box.

Noise model (ours; the paper's exact error model was not available): the evaluation oracle
returns ``f(x_k) + sigma xi_k`` with ``xi_k ~ N(0, 1)`` independent per grid point and per query.
Phase noise is then ``s = 2 pi S sigma = 2 pi N sigma / (m ell)`` (:func:`phase_noise`), and the
outcome distribution averaged over the noise is exactly ``exp(-s^2) P_clean + (1 - exp(-s^2))``
times the uniform distribution.

Query convention used everywhere: **one query = one call of the phase oracle**
``|k> -> exp(2 pi i S f~(x_k)) |k>`` (one repetition of Jordan's circuit), and **one classical
evaluation** ``f~(x)`` for the classical baselines. Building the phase oracle from a binary
value oracle costs a constant factor more (compute and uncompute), which we do not count.

The outer loops (:func:`mirror_descent`, :func:`dual_averaging`, :func:`mirror_prox`,
:func:`zo_gradient_descent`, :func:`game_dynamics`) are exact classical methods driven by
whatever gradient oracle they are given. The book's experiments, figures and claims are in
:mod:`optbook.geometry.quantum_zo_chapter`.
"""
from __future__ import annotations

from collections.abc import Callable

import numpy as np
from scipy.optimize import linprog
from scipy.stats import binom

from ..core import Result, Trace, as_rng, check_choice, check_in_range, check_int, check_matrix
from ..core import check_positive, check_real, check_vector
from ..core.validate import RngLike

#: Probability that one shot of Jordan's algorithm lands on one of the two grid points nearest
#: to the true scaled gradient of a *linear* function, per coordinate (worst case: 8/pi^2).
P_ONE_CELL = 8.0 / np.pi ** 2
#: Largest number of amplitudes we agree to simulate (2**18 = 64**3).
MAX_AMPLITUDES = 2 ** 18

GradientOracle = Callable[[np.ndarray], np.ndarray]


def _check_callable(f, name: str) -> Callable:
    if not callable(f):
        raise ValueError(f"{name} must be callable")
    return f


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
    if (2 ** n_bits) ** x0.size > MAX_AMPLITUDES:
        raise ValueError(f"x0 and n_bits ask for (2**{n_bits})**{x0.size} grid points (limit {MAX_AMPLITUDES})")
    n = 2 ** n_bits
    offsets = ell * (np.arange(n) / n - 0.5)
    mesh = np.meshgrid(*([offsets] * x0.size), indexing="ij")
    return np.stack(mesh, axis=-1) + x0


def grid_values(f: Callable, x0: np.ndarray, ell: float, n_bits: int, *, vectorized: bool = False) -> np.ndarray:
    """``f`` on the Jordan grid, shape ``(N,)*d``; ``vectorized`` means ``f`` maps ``(n, d) -> (n,)``."""
    f = _check_callable(f, "f")
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
    if values.size == 0 or d > values.ndim or len(set(values.shape[values.ndim - d:])) != 1:
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
    n = check_int(n, "n", minimum=1)
    j = np.asarray(j)
    if j.size and (not np.issubdtype(j.dtype, np.integer) or j.min() < 0 or j.max() >= n):
        raise ValueError(f"j must hold integers in 0..{n - 1}")
    return np.where(j >= n // 2, j - n, j)


def phase_noise(sigma: float, m: float, ell: float, n_bits: int) -> float:
    """Standard deviation ``s = 2 pi S sigma = 2 pi N sigma / (m ell)`` of the phase error that
    oracle noise ``sigma`` causes in Jordan's circuit (``N = 2**n_bits``): finer resolution and
    smaller boxes amplify the same oracle noise."""
    sigma = check_positive(sigma, "sigma", allow_zero=True)
    m = check_positive(m, "m")
    ell = check_positive(ell, "ell")
    n_bits = check_int(n_bits, "n_bits", minimum=1)
    return 2 * np.pi * 2 ** n_bits * sigma / (m * ell)


def jordan_distribution(
    f: Callable, x0: np.ndarray, *, m: float, ell: float, n_bits: int, noise: float = 0.0,
    noise_draws: int | None = None, rng: RngLike = None, vectorized: bool = False,
) -> np.ndarray:
    """Outcome probabilities of one run of Jordan's algorithm, shape ``(N,)*d``, indexed by the raw
    register values ``j`` (use :func:`signed_index` and ``m j / N`` for the gradient estimate).

    With ``noise > 0`` the oracle returns ``f(x_k) + noise * xi_k``, ``xi_k ~ N(0, 1)`` independent
    per grid point and per query, and the result is the distribution of a single measured outcome,
    averaged over the noise: exactly ``exp(-s^2) P_clean + (1 - exp(-s^2)) / N^d`` with ``s`` the
    :func:`phase_noise` (``noise_draws=None``), or the Monte Carlo average over ``noise_draws``
    oracle realisations (the check of that formula).
    """
    x0, m, ell, n_bits, noise = _check_jordan_args(x0, m, ell, n_bits, noise)
    gen = as_rng(rng)
    vals = grid_values(f, x0, ell, n_bits, vectorized=vectorized)
    if noise == 0.0:
        return _probabilities(vals, m, ell, x0.size)
    if noise_draws is None:
        c2 = np.exp(-phase_noise(noise, m, ell, n_bits) ** 2)
        return c2 * _probabilities(vals, m, ell, x0.size) + (1 - c2) / vals.size
    noise_draws = check_int(noise_draws, "noise_draws", minimum=1)
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
    if (probs.ndim < 1 or probs.size == 0 or len(set(probs.shape)) != 1 or not np.all(np.isfinite(probs))
            or probs.min() < 0 or probs.sum() <= 0):
        raise ValueError("probs must be a non-negative finite array of shape (N,)*d with a positive sum")
    shots = check_int(shots, "shots", minimum=1)
    m = check_positive(m, "m")
    gen = as_rng(rng)
    n = probs.shape[0]
    j = gen.choice(probs.size, size=shots, p=probs.ravel() / probs.sum())
    idx = np.stack(np.unravel_index(j, probs.shape), axis=1)
    return m * signed_index(idx, n) / n


# --------------------------------------------------------------------------------------------
# The cost model for large d: exact single-shot statistics of a locally linear f
# --------------------------------------------------------------------------------------------

def shot_distribution(u: np.ndarray, n_bits: int) -> np.ndarray:
    """Noise-free outcome probabilities of Jordan's circuit for a *linear* ``f`` whose scaled
    gradient is ``u = N grad f / m``, shape ``(d, N)``: the state is then a product over
    coordinates, and register ``i`` reads ``j`` with the Fejer-kernel probability
    ``sin^2(pi (u_i - j)) / (N^2 sin^2(pi (u_i - j) / N))``, computed as the squared FFT of the
    plane wave ``exp(2 pi i k u_i / N) / sqrt(N)`` (the same convention as :func:`phase_probabilities`)."""
    u = check_vector(u, "u")
    n_bits = check_int(n_bits, "n_bits", minimum=1)
    n = 2 ** n_bits
    k = np.arange(n)
    phi = np.fft.fft(np.exp(2j * np.pi * np.outer(u, k) / n), axis=1) / n
    return phi.real ** 2 + phi.imag ** 2


def one_cell_probability(n_bits: int, phase_noise: float = 0.0) -> float:
    """Worst-case (over the fractional part of the scaled gradient) probability that one shot's
    coordinate lands on one of the two grid values nearest to the truth, with Gaussian phase noise
    of standard deviation ``phase_noise``: ``c 8/pi^2 + (1 - c) 2/N`` with ``c = exp(-s^2)`` (the
    coherent fraction; the rest of the probability is uniform over the grid)."""
    n_bits = check_int(n_bits, "n_bits", minimum=1)
    s = check_positive(phase_noise, "phase_noise", allow_zero=True)
    c = float(np.exp(-s * s))
    return c * P_ONE_CELL + (1 - c) * min(1.0, 2.0 / 2 ** n_bits)


def median_repetitions(d: int, delta: float, p: float = P_ONE_CELL) -> int:
    """Smallest odd ``r`` such that the coordinate-wise median of ``r`` Jordan runs is within one
    cell in *every* one of ``d`` coordinates with probability ``>= 1 - delta`` (union bound over
    coordinates; exact binomial tail ``P[Bin(r, p) <= (r-1)/2]`` per coordinate; ``p`` is the
    per-shot one-cell probability, :func:`one_cell_probability`). Grows like ``log(d/delta)``:
    the only place the dimension enters the quantum query count."""
    d = check_int(d, "d", minimum=1)
    delta = check_in_range(delta, "delta", 0.0, 1.0)
    p = check_in_range(p, "p", 0.5, 1.0, closed=(False, True))
    r = 1
    while d * binom.cdf((r - 1) // 2, r, p) > delta:
        r += 2
    return r


class EmulatedJordanOracle:
    """**Cost model** of a boosted Jordan gradient estimate from a noisy evaluation oracle, for
    dimensions too large to simulate.

    Each call draws ``repetitions`` shots from the exact single-shot outcome distribution of
    Jordan's circuit for the linearisation of ``f`` at ``x`` (gradient ``grad(x)``): with
    probability ``exp(-s^2)`` (``s`` the :func:`phase_noise` of ``sigma`` at ``n_bits`` and box
    ``ell``) every register follows its :func:`shot_distribution`, otherwise every register is
    uniform. It returns the coordinate-wise median ``m j / N`` and charges ``repetitions`` phase
    queries (counted in ``queries``). The default ``repetitions`` is :func:`median_repetitions` for
    the noisy :func:`one_cell_probability`; when the noise leaves that probability at or below 1/2,
    no number of repetitions can boost it and the constructor raises (pass ``repetitions`` to
    overrule). Curvature on the box and the cost of the phase oracle are not modelled.
    """

    def __init__(self, grad: GradientOracle, d: int, *, m: float, n_bits: int = 6, sigma: float = 0.0,
                 ell: float = 1e-2, delta: float = 0.01, repetitions: int | None = None, rng: RngLike = None):
        self.grad = _check_callable(grad, "grad")
        self.d = check_int(d, "d", minimum=1)
        self.m = check_positive(m, "m")
        self.n_bits = check_int(n_bits, "n_bits", minimum=1)
        if self.n_bits > 30:
            raise ValueError(f"n_bits must be at most 30, got {self.n_bits}")
        self.sigma = check_positive(sigma, "sigma", allow_zero=True)
        self.ell = check_positive(ell, "ell")
        self.delta = check_in_range(delta, "delta", 0.0, 1.0)
        self.phase_noise = phase_noise(self.sigma, self.m, self.ell, self.n_bits)
        self.coherence = float(np.exp(-self.phase_noise ** 2))
        self.p_cell = one_cell_probability(self.n_bits, self.phase_noise)
        if repetitions is None:
            if self.p_cell <= 0.5:
                raise ValueError(f"sigma = {self.sigma:.3g} gives phase noise {self.phase_noise:.3g} rad at n_bits = "
                                 f"{self.n_bits}: a shot is right with probability {self.p_cell:.3g} <= 1/2, so no "
                                 "median boosts it (use fewer bits, a larger ell, or pass repetitions)")
            repetitions = median_repetitions(self.d, self.delta, self.p_cell)
        self.per_call = check_int(repetitions, "repetitions", minimum=1)
        if self.per_call % 2 == 0:
            raise ValueError(f"repetitions must be odd (a well-defined median), got {self.per_call}")
        self.rng = as_rng(rng)
        self.queries = 0
        self.calls = 0

    @property
    def resolution(self) -> float:
        return self.m / 2 ** self.n_bits

    def __call__(self, x: np.ndarray) -> np.ndarray:
        g = np.asarray(self.grad(x), dtype=float)
        if g.shape != (self.d,) or not np.all(np.isfinite(g)):
            raise ValueError(f"grad must return a finite array of shape ({self.d},), got shape {g.shape}")
        if np.max(np.abs(g)) >= self.m / 2:
            raise ValueError(f"||grad||_inf = {np.max(np.abs(g)):.3g} breaks the bound m/2 = {self.m / 2:.3g}")
        n, r = 2 ** self.n_bits, self.per_call
        self.queries += r
        self.calls += 1
        gen = self.rng
        j = gen.integers(0, n, size=(r, self.d))              # incoherent shots: uniform registers
        coherent = gen.random(r) < self.coherence
        if coherent.any():
            # Inverse-CDF sampling of every register at once: row i's CDF, normalised to end at 1,
            # is shifted by i so that the rows concatenate into one increasing array.
            cdf = np.cumsum(shot_distribution(n * g / self.m, self.n_bits), axis=1)
            cdf = cdf / cdf[:, -1:] + np.arange(self.d)[:, None]
            draws = gen.random((int(coherent.sum()), self.d)) + np.arange(self.d)
            flat = np.searchsorted(cdf.ravel(), draws.ravel(), side="right").reshape(draws.shape)
            j[coherent] = np.minimum(flat - n * np.arange(self.d), n - 1)
        return self.m * np.median(signed_index(j, n), axis=0) / n


class CountedFunction:
    """Wraps an evaluation oracle ``f`` and counts its calls in ``calls`` (classical queries)."""

    def __init__(self, f: Callable[[np.ndarray], float]):
        self.f = _check_callable(f, "f")
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
    f = _check_callable(f, "f")
    x = check_vector(x, "x")
    mu = check_positive(mu, "mu")
    f0 = float(f(x)) if fx is None else float(fx)
    if not np.isfinite(f0):
        raise ValueError("fx (or f(x)) must be finite")
    return _two_point(f, x, mu, as_rng(rng), f0)


def _two_point(f: Callable, x: np.ndarray, mu: float, gen: np.random.Generator, f0: float) -> np.ndarray:
    u = gen.standard_normal(x.size)
    return (float(f(x + mu * u)) - f0) / mu * u


def coordinate_fd_gradient(f: Callable, x: np.ndarray, h: float) -> np.ndarray:
    """Central differences ``(f(x + h e_i) - f(x - h e_i)) / (2h)``: ``2d`` evaluations, exact on
    quadratics."""
    f = _check_callable(f, "f")
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
    y = x - eta * g
    norm = float(np.sqrt(y @ y))
    return y if norm <= radius else y * (radius / norm)


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


def _grad(jac, x: np.ndarray) -> np.ndarray:
    g = np.asarray(jac(x), dtype=float)
    if g.shape != x.shape or not np.isfinite(g).all():
        raise ValueError(f"jac must return a finite array of shape {x.shape}, got shape {g.shape}")
    return g


def _outer_loop(kind, fun, x0, jac, step, maxiter, geometry, radius, decay, f_star, tol, name, check_every=1):
    x0, step, maxiter, geometry, radius, decay = _check_outer(fun, x0, jac, step, maxiter, geometry,
                                                              radius, decay)
    check_every = check_int(check_every, "check_every", minimum=1)
    if f_star is not None:
        f_star = check_real(f_star, "f_star")
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
            g = _grad(jac, x)
            x_eval, x = x, _md_step(x, g, eta, geometry, radius)
        elif kind == "da":
            g = _grad(jac, x)
            g_sum += g
            x_eval = x
            x = _md_step(x0, g_sum, eta, geometry, radius)
        else:  # mirror prox (extragradient)
            g = _grad(jac, x)
            x_half = _md_step(x, g, eta, geometry, radius)
            g = _grad(jac, x_half)
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
    fun = _check_callable(fun, "fun")
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
                return _two_point(counted, x, mu, gen, counted(x))
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
        return float(np.abs(r, out=r).sum()) / self.n

    def jac(self, x: np.ndarray) -> np.ndarray:
        """A subgradient ``(1/n) B^T sign(Bx - c)``."""
        return self.B.T @ np.sign(self.B @ x - self.c) / self.n

    def _solve(self) -> tuple[np.ndarray, float]:
        # The LP dual of min (1/n) ||Bx - c||_1: max (1/n) c^T lam s.t. B^T lam = 0, |lam_i| <= 1
        # (n variables, d equalities: smaller than the primal's n + d variables and 2n rows). The
        # primal x is the multiplier of the equalities (up to sign and the factor n). The ball
        # constraint is inactive at x (checked below), so the LP is exact.
        n, d = self.n, self.d
        res = linprog(-self.c / n, A_eq=self.B.T, b_eq=np.zeros(d), bounds=(-1.0, 1.0), method="highs")
        if res.status != 0:
            raise RuntimeError(f"the LP for f* failed: {res.message}")
        f_dual = -float(res.fun)
        x = min((s * n * res.eqlin.marginals for s in (-1.0, 1.0)), key=self.fun)
        if abs(self.fun(x) - f_dual) > 1e-7 * max(1.0, f_dual):
            raise RuntimeError("the LP's primal and dual values disagree")
        if np.linalg.norm(x) > self.radius:
            raise ValueError("the unconstrained minimiser left the ball; enlarge radius")
        return x, self.fun(x)


def rps_game(eps: float = 0.3) -> np.ndarray:
    """Rock-paper-scissors with a perturbation (payoffs to the max player, in [-1, 1])."""
    eps = check_in_range(eps, "eps", 0.0, 1.0, closed=(True, True))
    A = np.array([[0.0, -1.0, 1.0], [1.0, 0.0, -1.0], [-1.0, 1.0, 0.0]])
    A[0, 1] += eps
    return A / np.max(np.abs(A))
