"""Chapter 07: MAP estimation with denoisers (Pesme, Meanti, Arbel and Mairal, NeurIPS 2025).

Plug-and-play methods need the proximal operator of a negative log-prior,

    prox_{-tau log p}(y) = argmin_x  1/2 ||x - y||^2 - tau log p(x),

and replace it by a denoiser. The paper shows that averaging an MMSE denoiser's output with y,
while the noise level falls on the schedule alpha_k = 1/(k+2), sigma_k^2 = tau/(k+1), *is*
gradient descent with step 1/L_{sigma_k} on the smoothed objectives
F_sigma(x) = 1/2 ||y - x||^2 - tau log p_sigma(x) (p_sigma = p * N(0, sigma^2 I)), and converges
to the prox at rate O(log k / k) whatever the conditioning of the prior (Theorem 1).

This module is what a user imports: priors with exact MMSE denoisers (Gaussian and Laplace in
closed form, separable priors such as log-cosh by quadrature), the averaging scheme, its
baselines (naive and accelerated gradient descent on F, fixed-sigma plug-and-play averaging),
inexact denoisers, and the Theorem-1 bound. The book's experiments, figures and claims live in
:mod:`optbook.classical.denoiser_prox_chapter`.
"""
from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable

import numpy as np
from scipy.special import log_ndtr, logsumexp

from ..core import (
    RngLike,
    Result,
    Trace,
    as_rng,
    check_choice,
    check_in_range,
    check_int,
    check_positive,
    check_real,
    check_spd,
    check_vector,
    random_orthogonal,
)

Denoiser = Callable[[np.ndarray, float], np.ndarray]
Score = Callable[[np.ndarray], np.ndarray]

# --------------------------------------------------------------------------- priors


def _check_points(x, dim: int, name: str = "x") -> np.ndarray:
    """A finite float array whose last axis has length ``dim`` (batched evaluation points)."""
    try:
        x = np.asarray(x, dtype=float)
    except (TypeError, ValueError) as err:
        raise ValueError(f"{name} must be an array of numbers") from err
    if x.ndim == 0 or x.shape[-1] != dim or x.size == 0:
        raise ValueError(f"{name} must be a non-empty array with last axis {dim}, got shape {x.shape}")
    if not np.all(np.isfinite(x)):
        raise ValueError(f"{name} must be finite (found NaN or inf)")
    return x


class Prior(ABC):
    """A log-concave prior p on R^dim with its MMSE denoiser, score and proximal operator.

    Subclasses implement ``log_density(x, sigma)`` (log p_sigma, batched over leading axes),
    ``denoise(z, sigma)`` (MMSE_sigma), ``score(x)`` (grad log p) and ``prox(y, tau)``.
    ``lipschitz`` is L, the smoothness of -log p (inf when nonsmooth); ``third_derivative_bound``
    is M in Theorem 1: sup_x of the Frobenius norm of the third-derivative tensor of log p
    (0 for a Gaussian, inf when it does not exist).
    """

    dim: int
    lipschitz: float
    third_derivative_bound: float
    name: str = "prior"

    def _z(self, z, name: str = "z") -> np.ndarray:
        return check_vector(z, name, self.dim)

    @abstractmethod
    def log_density(self, x: np.ndarray, sigma: float = 0.0) -> np.ndarray:
        """log p_sigma(x), p_sigma = p * N(0, sigma^2 I); x of shape (..., dim)."""

    @abstractmethod
    def denoise(self, z: np.ndarray, sigma: float) -> np.ndarray:
        """The MMSE denoiser E[X | X + sigma eps = z] (identity at sigma = 0)."""

    @abstractmethod
    def score(self, x: np.ndarray) -> np.ndarray:
        """grad log p(x)."""

    @abstractmethod
    def prox(self, y: np.ndarray, tau: float) -> np.ndarray:
        """prox_{-tau log p}(y), the target of the averaging scheme."""

    def smoothed_score(self, x: np.ndarray, sigma: float) -> np.ndarray:
        """grad log p_sigma(x) by Tweedie's formula, (MMSE_sigma(x) - x) / sigma^2."""
        x = self._z(x, "x")
        sigma = check_positive(sigma, "sigma", allow_zero=True)
        if sigma == 0.0:
            return self.score(x)
        return (self.denoise(x, sigma) - x) / sigma**2


class GaussianPrior(Prior):
    """p = N(mean, cov): denoiser, smoothed density and prox in closed form (M = 0).

    MMSE_sigma(z) = m + cov (cov + sigma^2 I)^{-1} (z - m), prox_{-tau log p}(y) =
    m + cov (cov + tau I)^{-1} (y - m); computed in the eigenbasis of cov. The prox is the
    denoiser at sigma^2 = tau: for a Gaussian one denoiser call gives the answer exactly.
    """

    name = "Gaussian"

    def __init__(self, mean: np.ndarray, cov: np.ndarray):
        self.mean = check_vector(mean, "mean")
        self.dim = self.mean.size
        self.cov = check_spd(cov, "cov", self.dim)
        self.eig, self.U = np.linalg.eigh(self.cov)
        self.lipschitz = float(1.0 / self.eig[0])
        self.third_derivative_bound = 0.0
        self.condition_number = float(self.eig[-1] / self.eig[0])

    def _shrink(self, v: np.ndarray, factor: np.ndarray) -> np.ndarray:
        return self.mean + ((v - self.mean) @ self.U * factor) @ self.U.T

    def log_density(self, x, sigma: float = 0.0) -> np.ndarray:
        x = _check_points(x, self.dim)
        var = self.eig + check_positive(sigma, "sigma", allow_zero=True) ** 2
        c = (x - self.mean) @ self.U
        return -0.5 * np.sum(c * c / var, axis=-1) - 0.5 * np.sum(np.log(2 * np.pi * var))

    def denoise(self, z, sigma: float) -> np.ndarray:
        z = self._z(z)
        s2 = check_positive(sigma, "sigma", allow_zero=True) ** 2
        return self._shrink(z, self.eig / (self.eig + s2))

    def score(self, x) -> np.ndarray:
        x = self._z(x, "x")
        return -((x - self.mean) @ self.U / self.eig) @ self.U.T

    def prox(self, y, tau: float) -> np.ndarray:
        return self.smoothed_prox(y, tau, 0.0)

    def smoothed_prox(self, y, tau: float, sigma: float) -> np.ndarray:
        """argmin of F_sigma, i.e. prox of -tau log p_sigma (p_sigma = N(m, cov + sigma^2 I))."""
        y = self._z(y, "y")
        tau = check_positive(tau, "tau")
        var = self.eig + check_positive(sigma, "sigma", allow_zero=True) ** 2
        return self._shrink(y, var / (var + tau))


def anisotropic_gaussian(kappa: float) -> GaussianPrior:
    """The paper's 2-D test prior N(0, diag(1, 1/kappa)): -log p is kappa-smooth and 1-convex."""
    kappa = check_in_range(kappa, "kappa", 1.0, np.inf, closed=(True, False))
    return GaussianPrior(np.zeros(2), np.diag([1.0, 1.0 / kappa]))


def random_gaussian_prior(dim: int, *, max_log10_kappa: float = 4.0, rng: RngLike = None) -> GaussianPrior:
    """N(m, U diag(e) U^T) with U random orthogonal, e log-uniform in [10^-a, 1] (a =
    ``max_log10_kappa``, the largest possible log10 condition number) and m ~ N(0, I)."""
    dim = check_int(dim, "dim", minimum=1)
    a = check_in_range(max_log10_kappa, "max_log10_kappa", 0.0, 12.0, closed=(True, True))
    gen = as_rng(rng)
    eig = 10.0 ** gen.uniform(-a, 0.0, size=dim)
    U = random_orthogonal(dim, gen)
    cov = (U * eig) @ U.T
    return GaussianPrior(gen.standard_normal(dim), 0.5 * (cov + cov.T))


def _solve_increasing(g: Callable[[np.ndarray], np.ndarray], start: np.ndarray) -> np.ndarray:
    """Roots of a coordinate-wise increasing g, all coordinates at once: bracket by doubling
    from ``start``, then bisect to machine precision (g' >= 1 here, so the root is unique)."""
    width = np.ones_like(start)
    lo, hi = start - width, start + width
    for _ in range(200):
        low_bad, high_bad = g(lo) > 0, g(hi) < 0
        if not (low_bad.any() or high_bad.any()):
            break
        width = np.where(low_bad | high_bad, 2 * width, width)
        lo, hi = np.where(low_bad, lo - width, lo), np.where(high_bad, hi + width, hi)
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if np.all((mid <= lo) | (mid >= hi)):  # no float left between the ends
            break
        neg = g(mid) < 0
        lo, hi = np.where(neg, mid, lo), np.where(neg, hi, mid)
    return np.where(np.abs(g(lo)) <= np.abs(g(hi)), lo, hi)


class SeparableQuadraturePrior(Prior):
    """p(x) = prod_i q_i(x_i) for 1-D log-concave densities q_i, denoised by quadrature.

    MMSE_sigma(z)_i = sum_g x_g q_i(x_g) phi((z_i - x_g)/sigma) / sum_g q_i(x_g) phi((z_i - x_g)/sigma)
    on a uniform grid x_g shared by the coordinates, with log-sum-exp weights (no underflow at
    small sigma). The trapezoid rule is spectrally accurate here as long as the grid step is
    below sigma and below the length scale of q_i; a denoiser call with 0 < sigma < step, or at
    a point outside the grid, raises a ValueError.

    Parameters
    ----------
    log_q, dlog_q : callables
        Unnormalised log q_i and its derivative, acting elementwise on arrays whose last axis
        indexes the coordinates (a function of a scalar, broadcast, is the same q for all).
    dim : int
    grid : (low, high, n)
        The quadrature grid; it must cover the prior and every point the denoiser is asked about.
    lipschitz, third_derivative_bound : float
        sup |(log q_i)''| and M = sup_x of the Frobenius norm of the third-derivative tensor of
        log p (diagonal here: the root-sum-square over coordinates of sup |(log q_i)'''|).
    """

    name = "separable (quadrature)"

    def __init__(self, log_q: Callable[[np.ndarray], np.ndarray], dlog_q: Callable[[np.ndarray], np.ndarray],
                 dim: int, *, grid: tuple[float, float, int] = (-8.0, 8.0, 16001),
                 lipschitz: float = np.inf, third_derivative_bound: float = np.inf):
        if not (callable(log_q) and callable(dlog_q)):
            raise ValueError("log_q and dlog_q must be callable")
        self.dim = check_int(dim, "dim", minimum=1)
        if not isinstance(grid, (tuple, list)) or len(grid) != 3:
            raise ValueError("grid must be (low, high, n)")
        lo, hi = check_real(grid[0], "grid[0] (low)"), check_real(grid[1], "grid[1] (high)")
        n = check_int(grid[2], "grid[2] (number of points)", minimum=11)
        if not lo < hi:
            raise ValueError(f"grid must have low < high, got {grid[:2]}")
        self.nodes = np.linspace(lo, hi, n)
        self.step = float(self.nodes[1] - self.nodes[0])
        self.log_q, self.dlog_q = log_q, dlog_q
        lq = np.asarray(log_q(self.nodes[:, None] * np.ones(self.dim)), dtype=float)
        if lq.shape != (n, self.dim) or not np.all(np.isfinite(lq)):
            raise ValueError("log_q must return finite values of its argument's shape")
        lq = lq.T  # (dim, n): row i holds log q_i on the grid
        self.log_norm = logsumexp(lq, axis=1) + np.log(self.step)  # log of the integral of q_i
        self.log_weights = lq - self.log_norm[:, None] + np.log(self.step)  # log(q_i(x_g) h / Z_i)
        self.lipschitz = check_positive(lipschitz, "lipschitz") if np.isfinite(lipschitz) else np.inf
        self.third_derivative_bound = (check_positive(third_derivative_bound, "third_derivative_bound",
                                                      allow_zero=True)
                                       if np.isfinite(third_derivative_bound) else np.inf)

    def _check_sigma(self, sigma: float) -> float:
        sigma = check_positive(sigma, "sigma", allow_zero=True)
        if 0.0 < sigma < self.step:
            raise ValueError(f"sigma={sigma:.3g} is below the quadrature grid step {self.step:.3g}; "
                             "refine the grid")
        return sigma

    def _check_inside(self, z: np.ndarray, name: str) -> None:
        if np.any(z < self.nodes[0]) or np.any(z > self.nodes[-1]):
            raise ValueError(f"{name} has entries outside the quadrature grid "
                             f"[{self.nodes[0]:g}, {self.nodes[-1]:g}]; widen it")

    def log_density(self, x, sigma: float = 0.0) -> np.ndarray:
        x = _check_points(x, self.dim)
        sigma = self._check_sigma(sigma)
        if sigma == 0.0:
            return np.sum(np.asarray(self.log_q(x), dtype=float) - self.log_norm, axis=-1)
        self._check_inside(x, "x")
        d = x[..., None] - self.nodes
        lw = self.log_weights - 0.5 * (d / sigma) ** 2 - 0.5 * np.log(2 * np.pi * sigma**2)
        return np.sum(logsumexp(lw, axis=-1), axis=-1)

    def denoise(self, z, sigma: float) -> np.ndarray:
        z = self._z(z)
        sigma = self._check_sigma(sigma)
        if sigma == 0.0:
            return z
        self._check_inside(z, "z")
        lw = self.log_weights - 0.5 * ((z[:, None] - self.nodes) / sigma) ** 2
        lw -= lw.max(axis=1, keepdims=True)
        w = np.exp(lw)
        return (w @ self.nodes) / w.sum(axis=1)

    def score(self, x) -> np.ndarray:
        return np.asarray(self.dlog_q(self._z(x, "x")), dtype=float) * np.ones(self.dim)

    def prox(self, y, tau: float) -> np.ndarray:
        """Coordinate-wise root of x - y_i - tau (log q_i)'(x) = 0 (vectorised bisection)."""
        y = self._z(y, "y")
        tau = check_positive(tau, "tau")
        return _solve_increasing(lambda x: x - y - tau * self.score(x), y.copy())

    def sample(self, size: int, rng: RngLike = None) -> np.ndarray:
        """``size`` draws from p, shape (size, dim), by inverting each coordinate's CDF on the grid."""
        size = check_int(size, "size", minimum=1)
        w = np.exp(self.log_weights)
        cdf = np.concatenate([np.zeros((self.dim, 1)), np.cumsum(0.5 * (w[:, 1:] + w[:, :-1]), axis=1)], axis=1)
        cdf /= cdf[:, -1:]
        u = as_rng(rng).uniform(size=(size, self.dim))
        # One interpolation for all coordinates: shift row i of the (increasing) CDF by 2i.
        shift = 2.0 * np.arange(self.dim)
        flat = np.interp((u + shift).ravel(), (cdf + shift[:, None]).ravel(), np.tile(self.nodes, self.dim))
        return flat.reshape(size, self.dim)


def _log_cosh(u: np.ndarray) -> np.ndarray:
    a = np.abs(u)
    return a + np.log1p(np.exp(-2.0 * a)) - np.log(2.0)


#: max over u of |d^3/du^3 log cosh u| = |2 sech^2 u tanh u|, reached where tanh^2 u = 1/3.
LOGCOSH_THIRD = 4.0 / (3.0 * np.sqrt(3.0))


class LogCoshPrior(SeparableQuadraturePrior):
    """p(x) proportional to prod_i exp(-b_i log cosh(x_i / c_i)): smooth, log-concave, with
    curvature b_i / c_i^2 at 0 (so L = max_i b_i / c_i^2) and Laplace-like tails of slope b_i / c_i.

    ``b`` and ``c`` are scalars or arrays of length ``dim``; unequal scales c_i make the prior
    anisotropic. b = 1 gives the hyperbolic-secant density with scale c. The third derivative of
    log q_i is at most m_i = (b_i / c_i^3) 4/(3 sqrt 3), so M = sqrt(sum_i m_i^2). The grid step
    must be at most min(c) / 2 for the quadrature to resolve the narrowest coordinate.
    """

    name = "log-cosh"

    def __init__(self, b=4.0, c=0.1, dim: int = 3, *, grid: tuple[float, float, int] = (-8.0, 8.0, 16001)):
        dim = check_int(dim, "dim", minimum=1)
        self.b = self._per_coordinate(b, "b", dim)
        self.c = self._per_coordinate(c, "c", dim)
        m3 = self.b / self.c**3 * LOGCOSH_THIRD
        b_, c_ = self.b, self.c
        super().__init__(lambda x: -b_ * _log_cosh(np.asarray(x) / c_),
                         lambda x: -(b_ / c_) * np.tanh(np.asarray(x) / c_),
                         dim, grid=grid, lipschitz=float(np.max(self.b / self.c**2)),
                         third_derivative_bound=float(np.sqrt(np.sum(m3**2))))
        if self.step > self.c.min() / 2 * (1 + 1e-9):
            raise ValueError(f"grid step {self.step:.3g} is too coarse for the scale c = {self.c.min():.3g}; "
                             "use a step <= min(c)/2")
        self.curvatures = self.b / self.c**2

    @staticmethod
    def _per_coordinate(value, name: str, dim: int) -> np.ndarray:
        arr = np.array(value, dtype=float) if np.ndim(value) else np.full(dim, check_positive(value, name))
        if arr.shape != (dim,):
            raise ValueError(f"{name} must be a positive scalar or an array of length {dim}, got shape {arr.shape}")
        if not (np.all(np.isfinite(arr)) and np.all(arr > 0)):
            raise ValueError(f"{name} must be finite and > 0")
        return arr


def anisotropic_logcosh(kappa: float, *, copies: int = 1, half_width: float = 10.0,
                        max_step: float = 0.015) -> LogCoshPrior:
    """The chapter's non-Gaussian test prior: hyperbolic-secant coordinates with scales
    (1, 1/sqrt(kappa)), so -log p has curvatures 1 and kappa at 0 (condition number kappa).

    ``copies`` stacks independent copies of the 2-D prior (dimension 2 * copies), which lets one
    run of a coordinate-wise method solve several problems at once. The quadrature grid spans
    [-half_width, half_width] with step min(max_step, c_min / 2); the default step serves noise
    levels down to sigma = 0.015 (k = 4000 of the paper's schedule with tau = 1) with a
    quadrature error near 1e-9.
    """
    kappa = check_in_range(kappa, "kappa", 1.0, 1e8, closed=(True, True))
    copies = check_int(copies, "copies", minimum=1)
    half_width = check_in_range(half_width, "half_width", 1.0, 100.0, closed=(True, True))
    max_step = check_in_range(max_step, "max_step", 0.0, 1.0, closed=(False, True))
    scales = np.tile([1.0, 1.0 / np.sqrt(kappa)], copies)
    step = min(max_step, scales.min() / 2)
    n = int(np.ceil(2 * half_width / step)) + 1
    return LogCoshPrior(1.0, scales, scales.size, grid=(-half_width, half_width, n))


class LaplacePrior(Prior):
    """p(x) = prod_i (lam/2) exp(-lam |x_i|): log-concave but nonsmooth (L = M = inf), the
    "assumption violated" case. The prox is soft-thresholding at tau*lam; the MMSE denoiser is
    closed form, MMSE_sigma(z) = z - sigma^2 lam tanh((A - B)/2) with
    A = -lam z + log Phi((z - lam sigma^2)/sigma), B = lam z + log Phi(-(z + lam sigma^2)/sigma).
    Round-off grows like eps (lam sigma)^4 / lam: accurate to ~1e-9 for lam sigma <= 100."""

    name = "Laplace"

    def __init__(self, lam: float = 1.0, dim: int = 2):
        self.lam = check_positive(lam, "lam")
        self.dim = check_int(dim, "dim", minimum=1)
        self.lipschitz = np.inf
        self.third_derivative_bound = np.inf

    def _ab(self, z: np.ndarray, sigma: float) -> tuple[np.ndarray, np.ndarray]:
        lam = self.lam
        return (-lam * z + log_ndtr((z - lam * sigma**2) / sigma),
                lam * z + log_ndtr(-(z + lam * sigma**2) / sigma))

    def log_density(self, x, sigma: float = 0.0) -> np.ndarray:
        x = _check_points(x, self.dim)
        sigma = check_positive(sigma, "sigma", allow_zero=True)
        base = np.log(self.lam / 2.0)
        if sigma == 0.0:
            return np.sum(base - self.lam * np.abs(x), axis=-1)
        A, B = self._ab(x, sigma)
        return np.sum(base + 0.5 * (self.lam * sigma) ** 2 + np.logaddexp(A, B), axis=-1)

    def denoise(self, z, sigma: float) -> np.ndarray:
        z = self._z(z)
        sigma = check_positive(sigma, "sigma", allow_zero=True)
        if sigma == 0.0:
            return z
        A, B = self._ab(z, sigma)
        return z - sigma**2 * self.lam * np.tanh(0.5 * (A - B))

    def score(self, x) -> np.ndarray:
        """The subgradient -lam sign(x) (0 at 0)."""
        return -self.lam * np.sign(self._z(x, "x"))

    def prox(self, y, tau: float) -> np.ndarray:
        y = self._z(y, "y")
        t = check_positive(tau, "tau") * self.lam
        return np.sign(y) * np.maximum(np.abs(y) - t, 0.0)


def smoothed_objective(prior: Prior, x: np.ndarray, y: np.ndarray, tau: float, sigma: float) -> np.ndarray:
    """F_sigma(x) = 1/2 ||y - x||^2 - tau log p_sigma(x), batched over the leading axes of x
    (F_0 = F, the proximal objective)."""
    if not isinstance(prior, Prior):
        raise ValueError(f"prior must be a Prior, got {type(prior).__name__}")
    y = check_vector(y, "y", prior.dim)
    tau = check_positive(tau, "tau")
    x = _check_points(x, prior.dim)
    return 0.5 * np.sum((x - y) ** 2, axis=-1) - tau * prior.log_density(x, sigma)


# --------------------------------------------------------------------------- denoisers as oracles


def unsmoothed_denoiser(score: Score) -> Denoiser:
    """z + sigma^2 grad log p(z): Tweedie's formula with the *unsmoothed* score in place of
    grad log p_sigma (the small-noise approximation of the MMSE denoiser).

    Averaging with it is gradient descent on F itself with steps alpha_k = 1/(k+2): the paper's
    step schedule without its smoothing. The chapter uses it as the negative control.
    """
    if not callable(score):
        raise ValueError("score must be callable (grad log p)")

    def denoiser(z: np.ndarray, sigma: float) -> np.ndarray:
        sigma = check_positive(sigma, "sigma", allow_zero=True)
        return z + sigma**2 * np.asarray(score(z), dtype=float)

    return denoiser


def inexact_denoiser(denoiser: Denoiser, xi: float, dim: int, *, direction: np.ndarray | None = None,
                     error_in: str = "score", rng: RngLike = None) -> Denoiser:
    """A denoiser with an error of size ``xi``, for the paper's inexact-score extension.

    With ``error_in="score"`` the output is D_sigma(z) + sigma^2 xi e, i.e. the score
    (D_sigma(z) - z)/sigma^2 is off by xi e with ||e|| = 1: the setting of the paper's extension
    (score error at most xi). With ``error_in="output"`` it is D_sigma(z) + xi e: a denoiser
    error of fixed size, whose score error xi / sigma^2 grows as the noise level falls.
    ``direction`` fixes e (normalised; a systematic error); None draws a fresh uniformly random
    unit vector at every call from ``rng`` (a random error).
    """
    if not callable(denoiser):
        raise ValueError("denoiser must be callable as denoiser(z, sigma)")
    xi = check_positive(xi, "xi", allow_zero=True)
    dim = check_int(dim, "dim", minimum=1)
    error_in = check_choice(error_in, "error_in", ("score", "output"))
    fixed = None
    if direction is not None:
        fixed = check_vector(direction, "direction", dim)
        norm = np.linalg.norm(fixed)
        if norm == 0:
            raise ValueError("direction must be non-zero")
        fixed = fixed / norm
    gen = as_rng(rng)

    def noisy(z: np.ndarray, sigma: float) -> np.ndarray:
        if fixed is None:
            e = gen.standard_normal(dim)
            e /= np.linalg.norm(e)
        else:
            e = fixed
        scale = sigma**2 if error_in == "score" else 1.0
        return np.asarray(denoiser(z, sigma), dtype=float) + scale * xi * e

    return noisy


# --------------------------------------------------------------------------- the methods


def _iterate(step: Callable[[int, np.ndarray], np.ndarray], rows: Callable[[int], dict],
             x: np.ndarray, maxiter: int, x_star: np.ndarray | None, tol: float | None, callback,
             method: str, meta: dict) -> Result:
    """Run x_{k+1} = step(k, x_k) for k < maxiter, recording row k (``rows(k)`` plus
    ``error`` = ||x_k - x*|| when x* is known); shared by the methods. One oracle call a step."""
    maxiter = check_int(maxiter, "maxiter", minimum=0)
    if x_star is not None:
        x_star = check_vector(x_star, "x_star", x.size)
    if tol is not None:
        tol = check_positive(tol, "tol")
        if x_star is None:
            raise ValueError("tol needs x_star (the stopping rule is ||x_k - x*|| <= tol)")
    if callback is not None and not callable(callback):
        raise ValueError("callback must be callable")
    trace = Trace(method, meta=meta)
    iterates = [x.copy()]
    message = "ran maxiter iterations"
    for k in range(maxiter + 1):
        err = float(np.linalg.norm(x - x_star)) if x_star is not None else np.nan
        if k == maxiter:
            trace.record(error=err)
            break
        trace.record(error=err, **rows(k))
        if tol is not None and err <= tol:
            message = "||x_k - x*|| <= tol"
            break
        with np.errstate(over="ignore", invalid="ignore"):
            x_new = step(k, x)
        if x_new.shape != x.shape or not np.all(np.isfinite(x_new)):
            raise ValueError(f"the {method} step gave a non-finite value or shape {x_new.shape} at k={k}")
        x = x_new
        iterates.append(x.copy())
        if callback is not None:
            callback(x.copy())
    return Result(x=x, nit=len(iterates) - 1, nfev=len(iterates) - 1, success=True,
                  message=message, trace=trace, iterates=np.array(iterates))


def _start(y: np.ndarray, x0) -> np.ndarray:
    return y.copy() if x0 is None else check_vector(x0, "x0", y.size).copy()


def _averaging(denoiser: Denoiser, y: np.ndarray, x0, schedule: Callable[[int], tuple[float, float]],
               maxiter, x_star, tol, callback, method: str, meta: dict) -> Result:
    """x_{k+1} = (1 - alpha_k) D_{sigma_k}(x_k) + alpha_k y with (alpha_k, sigma_k^2) = schedule(k)."""
    if not callable(denoiser):
        raise ValueError("denoiser must be callable as denoiser(z, sigma)")
    x = _start(y, x0)

    def step(k, x):
        alpha, sigma2 = schedule(k)
        return (1.0 - alpha) * np.asarray(denoiser(x, np.sqrt(sigma2)), dtype=float) + alpha * y

    def rows(k):
        alpha, sigma2 = schedule(k)
        return {"step_size": alpha, "sigma": np.sqrt(sigma2)}

    return _iterate(step, rows, x, maxiter, x_star, tol, callback, method, meta)


def mmse_averaging(denoiser: Denoiser, y: np.ndarray, tau: float = 1.0, *, maxiter: int = 1000,
                   x0: np.ndarray | None = None, alpha_scale: float = 1.0, sigma_scale: float = 1.0,
                   offset: float = 2.0, x_star: np.ndarray | None = None, tol: float | None = None,
                   callback: Callable[[np.ndarray], None] | None = None,
                   method_name: str = "MMSE averaging") -> Result:
    """Denoiser averaging towards prox_{-tau log p}(y) (the paper's main algorithm).

    x_{k+1} = (1 - alpha_k) MMSE_{sigma_k}(x_k) + alpha_k y, with alpha_k = c/(k+k0) and
    sigma_k^2 = s tau/(k+k0-1). The paper's schedule is c = s = 1, k0 = 2. With c = s = 1 (any
    k0 > 1), (1 - alpha_k) sigma_k^2 = alpha_k tau, and the step is exactly gradient descent on
    F_{sigma_k} with step 1/L_{sigma_k}; k0 only shifts where the schedule starts (sigma_0^2 =
    tau/(k0-1)). Other (c, s) break that identity (the chapter's schedule explorer).

    Parameters
    ----------
    denoiser : callable
        D(z, sigma), the MMSE denoiser of the prior at noise level sigma (e.g. ``prior.denoise``).
    y : array
        The point whose prox is sought (the noisy observation in denoising).
    tau : float
        The prox parameter tau > 0 (the only parameter of the paper's method).
    maxiter : int
        Number of steps K, i.e. of denoiser calls.
    x0 : array, optional
        Start; the paper's reading (our choice, see the chapter) is x0 = y, the default.
    alpha_scale, sigma_scale : float
        c in (0, k0] and s > 0 above (1, 1 is the paper's schedule).
    offset : float
        k0 > 1 above (2 is the paper's schedule).
    x_star : array, optional
        The true prox; logs ``error`` = ||x_k - x*|| in the trace.
    tol : float, optional
        Stop once ||x_k - x*|| <= tol (needs x_star).

    Returns
    -------
    Result
        ``x, nit, nfev`` (denoiser calls), ``trace`` (series error, step_size = alpha_k, sigma),
        ``iterates`` ((nit+1) x d array).
    """
    y = check_vector(y, "y")
    tau = check_positive(tau, "tau")
    k0 = check_in_range(offset, "offset", 1.0, 1e6, closed=(False, True))
    c = check_in_range(alpha_scale, "alpha_scale", 0.0, k0, closed=(False, True))
    s = check_positive(sigma_scale, "sigma_scale")
    meta = {"tau": tau, "alpha_scale": c, "sigma_scale": s, "offset": k0}
    return _averaging(denoiser, y, x0, lambda k: (c / (k + k0), s * tau / (k + k0 - 1.0)), maxiter,
                      x_star, tol, callback, method_name, meta)


def fixed_sigma_averaging(denoiser: Denoiser, y: np.ndarray, *, sigma: float, alpha: float,
                          maxiter: int = 1000, x0: np.ndarray | None = None,
                          x_star: np.ndarray | None = None, tol: float | None = None,
                          callback: Callable[[np.ndarray], None] | None = None,
                          method_name: str = "fixed-sigma averaging") -> Result:
    """Plug-and-play baseline: x <- (1 - alpha) D_sigma(x) + alpha y with constant alpha, sigma.

    Its fixed point is prox_{-tau' log p_sigma}(y) with tau' = (1 - alpha) sigma^2 / alpha: the
    prox of the *smoothed* prior, so it is biased for any sigma > 0. With alpha = 1/L_sigma =
    sigma^2/(sigma^2 + tau) it is gradient descent on F_sigma with its textbook step (tau' = tau).
    """
    y = check_vector(y, "y")
    sigma = check_positive(sigma, "sigma")
    alpha = check_in_range(alpha, "alpha", 0.0, 1.0, closed=(False, True))
    meta = {"sigma": sigma, "alpha": alpha, "effective_tau": (1 - alpha) * sigma**2 / alpha}
    return _averaging(denoiser, y, x0, lambda k: (alpha, sigma**2), maxiter, x_star, tol,
                      callback, method_name, meta)


def _gradient_setup(score, y, tau, lipschitz, step_scale):
    if not callable(score):
        raise ValueError("score must be callable (grad log p)")
    y = check_vector(y, "y")
    tau = check_positive(tau, "tau")
    L = check_positive(lipschitz, "lipschitz")
    step_scale = check_in_range(step_scale, "step_scale", 0.0, 1e6, closed=(False, True))
    return y, tau, L, step_scale / (1.0 + tau * L)


def gradient_descent_prox(score: Score, y: np.ndarray, tau: float, lipschitz: float, *,
                          step_scale: float = 1.0, maxiter: int = 1000, x0: np.ndarray | None = None,
                          x_star: np.ndarray | None = None, tol: float | None = None,
                          callback: Callable[[np.ndarray], None] | None = None,
                          method_name: str = "naive GD") -> Result:
    """Naive gradient descent on F(x) = 1/2||x - y||^2 - tau log p(x) (the paper's baseline).

    x <- x - h ((x - y) - tau score(x)) with h = step_scale / L_F, L_F = 1 + tau L and L the
    smoothness of -log p; step_scale = 1 is the textbook step. Linear rate 1 - 1/L_F: it stalls
    for about L_F iterations when the prior is ill-conditioned. One score call a step.
    """
    y, tau, L, h = _gradient_setup(score, y, tau, lipschitz, step_scale)

    def gd_step(k, x):
        return x - h * ((x - y) - tau * np.asarray(score(x), dtype=float))

    return _iterate(gd_step, lambda k: {"step_size": h}, _start(y, x0), maxiter, x_star, tol, callback,
                    method_name, {"tau": tau, "lipschitz": L, "step_scale": step_scale})


def accelerated_gradient_prox(score: Score, y: np.ndarray, tau: float, lipschitz: float, *,
                              step_scale: float = 1.0, momentum: float | None = None, maxiter: int = 1000,
                              x0: np.ndarray | None = None, x_star: np.ndarray | None = None,
                              tol: float | None = None, callback: Callable[[np.ndarray], None] | None = None,
                              method_name: str = "accelerated GD") -> Result:
    """Nesterov's accelerated gradient on F for a 1-strongly convex, L_F-smooth objective.

    v = x_k + beta (x_k - x_{k-1}), x_{k+1} = v - h ((v - y) - tau score(v)), with
    L_F = 1 + tau L, h = step_scale / L_F and, by default, the textbook momentum
    beta = (sqrt(L_F) - 1)/(sqrt(L_F) + 1); ``momentum`` in [0, 1) sets beta instead (a second
    knob to tune). Rate 1 - 1/sqrt(L_F): a stronger baseline than the paper's, not in the paper.
    One score call a step.
    """
    y, tau, L, h = _gradient_setup(score, y, tau, lipschitz, step_scale)
    if momentum is None:
        q = np.sqrt(1.0 + tau * L)
        beta = (q - 1.0) / (q + 1.0)
    else:
        beta = check_in_range(momentum, "momentum", 0.0, 1.0, closed=(True, False))
    previous = {"x": _start(y, x0)}

    def agd_step(k, x):
        v = x + beta * (x - previous["x"])
        previous["x"] = x
        return v - h * ((v - y) - tau * np.asarray(score(v), dtype=float))

    return _iterate(agd_step, lambda k: {"step_size": h}, previous["x"].copy(), maxiter, x_star, tol, callback,
                    method_name, {"tau": tau, "lipschitz": L, "step_scale": step_scale, "momentum": beta})


def theorem1_bound(k, dist0: float, tau: float, M: float = 0.0, dim: int = 1) -> np.ndarray:
    """Theorem 1: ||x_k - prox(y)|| <= (ln k + 7)/(k + 1) (||y - prox(y)|| + tau^2 M sqrt(d)),
    for k >= 1.

    ``M`` is the paper's constant, a bound on the Frobenius norm of the third-derivative tensor
    of log p (``Prior.third_derivative_bound``; 0 for a Gaussian); the sqrt(d) is the theorem's
    own factor, applied once here. For a separable prior the tensor is diagonal, so its
    Frobenius norm is the root-sum-square of the coordinates' bounds, which already grows like
    sqrt(d) when the coordinates are alike; that is the norm, not a second sqrt(d).
    """
    k = np.asarray(k, dtype=float)
    if k.size == 0 or not np.all(np.isfinite(k)) or np.any(k < 1):
        raise ValueError("k must be iteration numbers >= 1")
    dist0 = check_positive(dist0, "dist0", allow_zero=True)
    tau = check_positive(tau, "tau")
    M = check_positive(M, "M", allow_zero=True)
    dim = check_int(dim, "dim", minimum=1)
    return (np.log(k) + 7.0) / (k + 1.0) * (dist0 + tau**2 * M * np.sqrt(dim))
