"""Chapter 07: MAP estimation with denoisers (Pesme, Meanti, Arbel and Mairal, NeurIPS 2025).

Plug-and-play methods need the proximal operator of a negative log-prior,

    prox_{-tau log p}(y) = argmin_x  1/2 ||x - y||^2 - tau log p(x),

and replace it by a denoiser. The paper shows that averaging an MMSE denoiser's output with y,
while the noise level falls on the schedule alpha_k = 1/(k+2), sigma_k^2 = tau/(k+1), *is*
gradient descent with step 1/L_{sigma_k} on the smoothed objectives
F_sigma(x) = 1/2 ||y - x||^2 - tau log p_sigma(x) (p_sigma = p * N(0, sigma^2 I)), and converges
to the prox at rate O(log k / k) whatever the conditioning of the prior (Theorem 1).

This module holds priors with exact MMSE denoisers (Gaussian, Laplace in closed form; separable
priors such as log-cosh by quadrature), the averaging scheme and its broken-schedule variants,
naive gradient descent on F, the Theorem-1 bound, the cached experiments the chapter plots, its
figure builders and live explorers, and the registered claims.
"""
from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from functools import lru_cache

import numpy as np
import plotly.graph_objects as go
from scipy.optimize import brentq
from scipy.special import log_ndtr, logsumexp

from ..claims import Measured, claim
from ..core import (
    RngLike,
    Result,
    Trace,
    as_rng,
    check_in_range,
    check_int,
    check_positive,
    check_spd,
    check_vector,
    loglog_slope,
    random_orthogonal,
    thin_indices,
)
from ..viz import Phase, SliderStep, base_layout, color_for, landscape_figure, phase_layout, slider_figure
from ..widgets import Explorer, Slider

Denoiser = Callable[[np.ndarray, float], np.ndarray]
Score = Callable[[np.ndarray], np.ndarray]

# --------------------------------------------------------------------------- priors


class Prior(ABC):
    """A log-concave prior p on R^dim with its MMSE denoiser, score and proximal operator.

    Subclasses implement ``log_density(x, sigma)`` (log p_sigma, batched over leading axes),
    ``denoise(z, sigma)`` (MMSE_sigma), ``score(x)`` (grad log p) and ``prox(y, tau)``.
    ``lipschitz`` is L, the smoothness of -log p (inf when nonsmooth); ``third_derivative_bound``
    is M in Theorem 1 (0 for a Gaussian, inf when it does not exist).
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
    m + cov (cov + tau I)^{-1} (y - m); computed in the eigenbasis of cov.
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
        x = np.asarray(x, dtype=float)
        if x.shape[-1:] != (self.dim,) or not np.all(np.isfinite(x)):
            raise ValueError(f"x must be a finite array with last axis {self.dim}, got shape {x.shape}")
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


class SeparableQuadraturePrior(Prior):
    """p(x) = prod_i q(x_i) for a 1-D log-concave density q, denoised by quadrature.

    MMSE_sigma(z)_i = sum_g x_g q(x_g) phi((z_i - x_g)/sigma) / sum_g q(x_g) phi((z_i - x_g)/sigma)
    on a uniform grid x_g, with log-sum-exp weights (no underflow at small sigma). The grid step
    must stay below sigma; a denoiser call with a smaller sigma > 0 raises a ValueError.

    Parameters
    ----------
    log_q, dlog_q : callables
        Unnormalised log q and its derivative, vectorised.
    dim : int
    grid : (low, high, n)
        The quadrature grid; it must cover the prior and every point the denoiser is asked about.
    lipschitz, third_derivative_bound : float
        sup |(log q)''| and sup of the Frobenius norm of the third-derivative tensor of log p.
    """

    name = "separable (quadrature)"

    def __init__(self, log_q: Callable[[np.ndarray], np.ndarray], dlog_q: Callable[[np.ndarray], np.ndarray],
                 dim: int, *, grid: tuple[float, float, int] = (-8.0, 8.0, 16001),
                 lipschitz: float = np.inf, third_derivative_bound: float = np.inf):
        if not (callable(log_q) and callable(dlog_q)):
            raise ValueError("log_q and dlog_q must be callable")
        self.dim = check_int(dim, "dim", minimum=1)
        if len(grid) != 3:
            raise ValueError("grid must be (low, high, n)")
        lo, hi = float(grid[0]), float(grid[1])
        n = check_int(grid[2], "grid[2] (number of points)", minimum=11)
        if not (np.isfinite(lo) and np.isfinite(hi) and lo < hi):
            raise ValueError(f"grid must have finite low < high, got {grid[:2]}")
        self.nodes = np.linspace(lo, hi, n)
        self.step = float(self.nodes[1] - self.nodes[0])
        self.log_q, self.dlog_q = log_q, dlog_q
        lq = np.asarray(log_q(self.nodes), dtype=float)
        if lq.shape != self.nodes.shape or not np.all(np.isfinite(lq)):
            raise ValueError("log_q must return finite values of the grid's shape")
        self.log_norm = float(logsumexp(lq) + np.log(self.step))  # log of the integral of q
        self.log_weights = lq - self.log_norm + np.log(self.step)  # log(q(x_g) h / Z)
        self.lipschitz = check_positive(lipschitz, "lipschitz") if np.isfinite(lipschitz) else np.inf
        self.third_derivative_bound = float(third_derivative_bound)

    def _check_sigma(self, sigma: float) -> float:
        sigma = check_positive(sigma, "sigma", allow_zero=True)
        if 0.0 < sigma < self.step:
            raise ValueError(f"sigma={sigma:.3g} is below the quadrature grid step {self.step:.3g}; "
                             "refine the grid")
        return sigma

    def log_density(self, x, sigma: float = 0.0) -> np.ndarray:
        x = np.asarray(x, dtype=float)
        if x.shape[-1:] != (self.dim,) or not np.all(np.isfinite(x)):
            raise ValueError(f"x must be a finite array with last axis {self.dim}, got shape {x.shape}")
        sigma = self._check_sigma(sigma)
        if sigma == 0.0:
            return np.sum(self.log_q(x) - self.log_norm, axis=-1)
        d = x[..., None] - self.nodes
        lw = self.log_weights - 0.5 * (d / sigma) ** 2 - 0.5 * np.log(2 * np.pi * sigma**2)
        return np.sum(logsumexp(lw, axis=-1), axis=-1)

    def denoise(self, z, sigma: float) -> np.ndarray:
        z = self._z(z)
        sigma = self._check_sigma(sigma)
        if sigma == 0.0:
            return z
        lw = self.log_weights - 0.5 * ((z[:, None] - self.nodes) / sigma) ** 2
        lw -= lw.max(axis=1, keepdims=True)
        w = np.exp(lw)
        return (w @ self.nodes) / w.sum(axis=1)

    def score(self, x) -> np.ndarray:
        return np.asarray(self.dlog_q(self._z(x, "x")), dtype=float)

    def prox(self, y, tau: float) -> np.ndarray:
        """Coordinate-wise root of x - y_i - tau (log q)'(x) = 0 (Brent's method, to 1e-14)."""
        y = self._z(y, "y")
        tau = check_positive(tau, "tau")
        out = np.empty_like(y)
        for i, yi in enumerate(y):
            g = lambda x, yi=yi: x - yi - tau * float(self.dlog_q(np.array(x)))  # noqa: E731
            lo, hi = yi - 1.0, yi + 1.0
            while g(lo) > 0:
                lo -= 2 * (hi - lo)
            while g(hi) < 0:
                hi += 2 * (hi - lo)
            out[i] = brentq(g, lo, hi, xtol=1e-15, rtol=4 * np.finfo(float).eps, maxiter=200)
        return out


def _log_cosh(u: np.ndarray) -> np.ndarray:
    a = np.abs(u)
    return a + np.log1p(np.exp(-2.0 * a)) - np.log(2.0)


class LogCoshPrior(SeparableQuadraturePrior):
    """p(x) proportional to prod_i exp(-b log cosh(x_i / c)): smooth, log-concave, L = b / c^2,
    Laplace-like tails; third derivative of log q bounded by (b / c^3) 4/(3 sqrt 3) per coordinate."""

    name = "log-cosh"

    def __init__(self, b: float = 4.0, c: float = 0.1, dim: int = 3, *,
                 grid: tuple[float, float, int] = (-8.0, 8.0, 16001)):
        self.b = check_positive(b, "b")
        self.c = check_positive(c, "c")
        dim = check_int(dim, "dim", minimum=1)
        m3 = self.b / self.c**3 * 4.0 / (3.0 * np.sqrt(3.0))
        super().__init__(lambda x: -self.b * _log_cosh(np.asarray(x) / self.c),
                         lambda x: -(self.b / self.c) * np.tanh(np.asarray(x) / self.c),
                         dim, grid=grid, lipschitz=self.b / self.c**2,
                         third_derivative_bound=m3 * np.sqrt(dim))


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
        x = np.asarray(x, dtype=float)
        if x.shape[-1:] != (self.dim,) or not np.all(np.isfinite(x)):
            raise ValueError(f"x must be a finite array with last axis {self.dim}, got shape {x.shape}")
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
    y = check_vector(y, "y", prior.dim)
    tau = check_positive(tau, "tau")
    x = np.asarray(x, dtype=float)
    return 0.5 * np.sum((x - y) ** 2, axis=-1) - tau * prior.log_density(x, sigma)


# --------------------------------------------------------------------------- the methods


def _iterate(step: Callable[[int, np.ndarray], np.ndarray], rows: Callable[[int], dict],
             x: np.ndarray, maxiter: int, x_star: np.ndarray | None, tol: float | None, callback,
             method: str, meta: dict) -> Result:
    """Run x_{k+1} = step(k, x_k) for k < maxiter, recording row k (``rows(k)`` plus
    ``error`` = ||x_k - x*|| when x* is known); shared by the three methods."""
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
        x_new = step(k, x)
        if x_new.shape != x.shape or not np.all(np.isfinite(x_new)):
            raise ValueError(f"the {method} step gave a non-finite value or shape {x_new.shape} at k={k}")
        x = x_new
        iterates.append(x.copy())
        if callback is not None:
            callback(x.copy())
    return Result(x=x, nit=len(iterates) - 1, nfev=len(iterates) - 1, success=True,
                  message=message, trace=trace, iterates=np.array(iterates))


def _averaging(denoiser: Denoiser, y: np.ndarray, x0, schedule: Callable[[int], tuple[float, float]],
               maxiter, x_star, tol, callback, method: str, meta: dict) -> Result:
    """x_{k+1} = (1 - alpha_k) D_{sigma_k}(x_k) + alpha_k y with (alpha_k, sigma_k^2) = schedule(k)."""
    if not callable(denoiser):
        raise ValueError("denoiser must be callable as denoiser(z, sigma)")
    x = y.copy() if x0 is None else check_vector(x0, "x0", y.size)

    def step(k, x):
        alpha, sigma2 = schedule(k)
        return (1.0 - alpha) * np.asarray(denoiser(x, np.sqrt(sigma2)), dtype=float) + alpha * y

    def rows(k):
        alpha, sigma2 = schedule(k)
        return {"step_size": alpha, "sigma": np.sqrt(sigma2)}

    return _iterate(step, rows, x, maxiter, x_star, tol, callback, method, meta)


def mmse_averaging(denoiser: Denoiser, y: np.ndarray, tau: float = 1.0, *, maxiter: int = 1000,
                   x0: np.ndarray | None = None, alpha_scale: float = 1.0, sigma_scale: float = 1.0,
                   x_star: np.ndarray | None = None, tol: float | None = None,
                   callback: Callable[[np.ndarray], None] | None = None,
                   method_name: str = "MMSE averaging") -> Result:
    """Denoiser averaging towards prox_{-tau log p}(y) (the paper's main algorithm).

    x_{k+1} = (1 - alpha_k) MMSE_{sigma_k}(x_k) + alpha_k y, with alpha_k = c/(k+2) and
    sigma_k^2 = s tau/(k+1). The paper's schedule is c = s = 1: then (1 - alpha_k) sigma_k^2 =
    alpha_k tau, and the step is exactly gradient descent on F_{sigma_k} with step 1/L_{sigma_k}.
    Other (c, s) break that identity (the chapter's schedule explorer).

    Parameters
    ----------
    denoiser : callable
        D(z, sigma), the MMSE denoiser of the prior at noise level sigma (e.g. ``prior.denoise``).
    y : array
        The point whose prox is sought (the noisy observation in denoising).
    tau : float
        The prox parameter tau > 0 (the only parameter of the paper's method).
    maxiter : int
        Number of steps K.
    x0 : array, optional
        Start; the paper's reading (our choice, see the chapter) is x0 = y, the default.
    alpha_scale, sigma_scale : float
        c in (0, 2] and s > 0 above (1, 1 is the paper's schedule).
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
    c = check_in_range(alpha_scale, "alpha_scale", 0.0, 2.0, closed=(False, True))
    s = check_positive(sigma_scale, "sigma_scale")
    meta = {"tau": tau, "alpha_scale": c, "sigma_scale": s}
    return _averaging(denoiser, y, x0, lambda k: (c / (k + 2.0), s * tau / (k + 1.0)), maxiter,
                           x_star, tol, callback, method_name, meta)


def fixed_sigma_averaging(denoiser: Denoiser, y: np.ndarray, *, sigma: float, alpha: float,
                          maxiter: int = 1000, x0: np.ndarray | None = None,
                          x_star: np.ndarray | None = None, tol: float | None = None,
                          callback: Callable[[np.ndarray], None] | None = None,
                          method_name: str = "fixed-sigma averaging") -> Result:
    """Plug-and-play baseline: x <- (1 - alpha) D_sigma(x) + alpha y with constant alpha, sigma.

    Its fixed point is prox_{-tau' log p_sigma}(y) with tau' = (1 - alpha) sigma^2 / alpha: the
    prox of the *smoothed* prior, so it is biased for any sigma > 0.
    """
    y = check_vector(y, "y")
    sigma = check_positive(sigma, "sigma")
    alpha = check_in_range(alpha, "alpha", 0.0, 1.0, closed=(False, True))
    meta = {"sigma": sigma, "alpha": alpha, "effective_tau": (1 - alpha) * sigma**2 / alpha}
    return _averaging(denoiser, y, x0, lambda k: (alpha, sigma**2), maxiter, x_star, tol,
                           callback, method_name, meta)


def gradient_descent_prox(score: Score, y: np.ndarray, tau: float, lipschitz: float, *,
                          maxiter: int = 1000, x0: np.ndarray | None = None,
                          x_star: np.ndarray | None = None, tol: float | None = None,
                          callback: Callable[[np.ndarray], None] | None = None,
                          method_name: str = "naive GD") -> Result:
    """Naive gradient descent on F(x) = 1/2||x - y||^2 - tau log p(x) (the paper's baseline).

    x <- x - ((x - y) - tau score(x)) / L_F with L_F = 1 + tau L, L the smoothness of -log p.
    Linear rate 1 - 1/L_F: it stalls for about L_F iterations when the prior is ill-conditioned.
    """
    if not callable(score):
        raise ValueError("score must be callable (grad log p)")
    y = check_vector(y, "y")
    tau = check_positive(tau, "tau")
    L = check_positive(lipschitz, "lipschitz")
    step = 1.0 / (1.0 + tau * L)
    x = y.copy() if x0 is None else check_vector(x0, "x0", y.size)

    def gd_step(k, x):
        return x - step * ((x - y) - tau * np.asarray(score(x), dtype=float))

    return _iterate(gd_step, lambda k: {"step_size": step}, x, maxiter, x_star, tol, callback,
                    method_name, {"tau": tau, "lipschitz": L})


def theorem1_bound(k, dist0: float, tau: float, M: float = 0.0, dim: int = 1) -> np.ndarray:
    """Theorem 1: ||x_k - prox(y)|| <= (ln k + 7)/(k + 1) (||y - prox(y)|| + tau^2 M sqrt(d)),
    for k >= 1 (M bounds the third derivatives of log p; M = 0 for a Gaussian)."""
    k = np.asarray(k, dtype=float)
    if k.size == 0 or not np.all(np.isfinite(k)) or np.any(k < 1):
        raise ValueError("k must be iteration numbers >= 1")
    dist0 = check_positive(dist0, "dist0", allow_zero=True)
    tau = check_positive(tau, "tau")
    M = check_positive(M, "M", allow_zero=True)
    dim = check_int(dim, "dim", minimum=1)
    return (np.log(k) + 7.0) / (k + 1.0) * (dist0 + tau**2 * M * np.sqrt(dim))


# --------------------------------------------------------------------------- experiments

Y2 = np.array([1.0, 1.0])  # the card's observation for the 2-D experiments


@lru_cache(maxsize=32)
def race_runs(kappa: float, maxiter: int = 2000, tau: float = 1.0) -> dict:
    """MMSE averaging and naive GD on N(0, diag(1, 1/kappa)) with y = (1, 1), and the
    Theorem-1 bound (M = 0). Cached: the race slider figure and its live twin share it."""
    prior = anisotropic_gaussian(kappa)
    x_star = prior.prox(Y2, tau)
    runs = {
        "MMSE averaging": mmse_averaging(prior.denoise, Y2, tau, maxiter=maxiter, x_star=x_star),
        "naive GD": gradient_descent_prox(prior.score, Y2, tau, prior.lipschitz, maxiter=maxiter,
                                          x_star=x_star),
    }
    k = np.arange(1, maxiter + 1)
    bound = theorem1_bound(k, float(np.linalg.norm(Y2 - x_star)), tau)
    return {"prior": prior, "x_star": x_star, "runs": runs, "k": k, "bound": bound, "tau": tau}


@lru_cache(maxsize=4)
def gaussian_race(kappa: float = 500.0, maxiter: int = 10000, tau: float = 1.0) -> dict:
    """:func:`race_runs` plus the plug-and-play baseline (fixed sigma^2 = tau, alpha = 1/2),
    whose limit is the prox of the smoothed prior (also returned, as ``pnp_limit``)."""
    out = dict(race_runs(kappa, maxiter, tau))
    prior = out["prior"]
    out["runs"] = {**out["runs"], "fixed-σ averaging": fixed_sigma_averaging(
        prior.denoise, Y2, sigma=np.sqrt(tau), alpha=0.5, maxiter=maxiter, x_star=out["x_star"],
        method_name="fixed-σ averaging")}
    out["pnp_limit"] = prior.smoothed_prox(Y2, tau, np.sqrt(tau))
    return out


@lru_cache(maxsize=64)
def schedule_run(alpha_scale: float, sigma_scale: float, kappa: float = 100.0, maxiter: int = 1000,
                 tau: float = 1.0) -> dict:
    """Averaging with alpha_k = c/(k+2), sigma_k^2 = s tau/(k+1) on the 2-D Gaussian, and the
    point it is predicted to reach: the prox with tau_eff = tau s / c (the limit of
    (1 - alpha_k) sigma_k^2 / alpha_k). Cached."""
    prior = anisotropic_gaussian(kappa)
    x_star = prior.prox(Y2, tau)
    res = mmse_averaging(prior.denoise, Y2, tau, maxiter=maxiter, alpha_scale=alpha_scale,
                         sigma_scale=sigma_scale, x_star=x_star)
    limit = prior.prox(Y2, tau * sigma_scale / alpha_scale)
    return {"result": res, "x_star": x_star, "predicted_bias": float(np.linalg.norm(limit - x_star))}


@lru_cache(maxsize=4)
def logcosh_run(maxiter: int = 1000, dim: int = 3, b: float = 4.0, c: float = 0.1, seed: int = 0,
                tau: float = 1.0) -> dict:
    """MMSE averaging (quadrature denoiser) and naive GD on the log-cosh prior, y ~ N(0, I)."""
    prior = LogCoshPrior(b, c, dim)
    y = np.random.default_rng(seed).standard_normal(dim)
    x_star = prior.prox(y, tau)
    avg = mmse_averaging(prior.denoise, y, tau, maxiter=maxiter, x_star=x_star)
    gd = gradient_descent_prox(prior.score, y, tau, prior.lipschitz, maxiter=maxiter, x_star=x_star)
    return {"prior": prior, "y": y, "x_star": x_star, "runs": {"MMSE averaging": avg, "naive GD": gd}}


@lru_cache(maxsize=4)
def laplace_run(maxiter: int = 3000, lam: float = 1.0, tau: float = 1.0) -> dict:
    """MMSE averaging on the Laplace prior (nonsmooth: Theorem 1 does not apply), y = (1.5, 0.5, 3)."""
    prior = LaplacePrior(lam, 3)
    y = np.array([1.5, 0.5, 3.0])
    x_star = prior.prox(y, tau)
    return {"prior": prior, "y": y, "x_star": x_star,
            "result": mmse_averaging(prior.denoise, y, tau, maxiter=maxiter, x_star=x_star)}


# --------------------------------------------------------------------------- figures + explorers

SIGMAS = (0.0, 0.05, 0.1, 0.2, 0.3, 0.5, 0.7, 1.0, 1.5, 2.0)
KAPPAS = (1.0, 10.0, 100.0, 500.0, 1000.0, 10000.0)
XLIM, YLIM = (-0.25, 1.25), (-0.35, 1.15)


@lru_cache(maxsize=64)
def _level_set_data(sigma: float, kappa: float, n: int = 70) -> dict:
    prior = anisotropic_gaussian(kappa)
    xs, ys = np.linspace(*XLIM, n), np.linspace(*YLIM, n)
    X = np.stack(np.meshgrid(xs, ys), axis=-1)
    Z = smoothed_objective(prior, X, Y2, 1.0, sigma)
    path = np.array([prior.smoothed_prox(Y2, 1.0, s) for s in np.linspace(0, 3, 61)])
    curv = 1.0 + 1.0 / (prior.eig + sigma**2)  # Hessian eigenvalues of F_sigma (tau = 1)
    return {"xs": xs, "ys": ys, "logZ": np.log10(Z - Z.min() + 1e-3).astype(np.float32),
            "min": prior.smoothed_prox(Y2, 1.0, sigma),
            "prox": prior.prox(Y2, 1.0), "path": path, "cond": float(curv.max() / curv.min())}


def level_set_traces(sigma: float, kappa: float = 500.0) -> list:
    """Contours of log10(F_sigma - min) for N(0, diag(1, 1/kappa)), y = (1, 1), tau = 1, with
    the minimiser of F_sigma, the path of minimisers over sigma, y and the true prox."""
    sigma = check_positive(sigma, "sigma", allow_zero=True)
    kappa = check_in_range(kappa, "kappa", 1.0, np.inf, closed=(True, False))
    d = _level_set_data(float(sigma), float(kappa))
    return [
        go.Contour(x=d["xs"], y=d["ys"], z=d["logZ"], colorscale="Viridis", showscale=True,
                   contours=dict(start=-2.5, end=2.5, size=0.25, coloring="heatmap", showlines=True),
                   line=dict(width=0.6), colorbar=dict(title=dict(text="log10(F_σ − min F_σ)", side="right")),
                   showlegend=False, hoverinfo="skip"),
        go.Scatter(x=d["path"][:, 0], y=d["path"][:, 1], mode="lines", name="minimiser of F_σ as σ varies",
                   line=dict(color="white", dash="dot", width=2)),
        go.Scatter(x=[Y2[0]], y=[Y2[1]], mode="markers", name="observation y",
                   marker=dict(symbol="x", size=12, color="black")),
        go.Scatter(x=[d["prox"][0]], y=[d["prox"][1]], mode="markers", name="prox (σ = 0 target)",
                   marker=dict(symbol="star", size=15, color=color_for(1), line=dict(color="white", width=1))),
        go.Scatter(x=[d["min"][0]], y=[d["min"][1]], mode="markers", name="minimiser of F_σ",
                   marker=dict(size=11, color=color_for(4), line=dict(color="white", width=1.5))),
    ]


def level_set_note(sigma: float, kappa: float = 500.0) -> dict:
    """Layout annotation giving the condition number of F_sigma (shown in each frame)."""
    d = _level_set_data(float(sigma), float(kappa))
    return {"annotations": [dict(x=0.5, y=0.01, xref="paper", yref="paper", xanchor="center", yanchor="bottom",
                                 showarrow=False, bgcolor="rgba(255,255,255,0.85)",
                                 text=f"σ = {sigma:g}: condition number of F_σ = {d['cond']:.1f}")]}


def _level_layout(fig: go.Figure, height: int = 520) -> go.Figure:
    base_layout(fig, xaxis_title="x<sub>1</sub> (well-determined direction)",
                yaxis_title="x<sub>2</sub> (stiff direction, prior variance 1/κ)", height=height)
    fig.update_xaxes(range=list(XLIM), autorange=False, constrain="domain")
    fig.update_yaxes(range=list(YLIM), autorange=False, scaleanchor="x", scaleratio=1, constrain="domain")
    return fig


def level_set_slider(kappa: float = 500.0, active: int = 2) -> go.Figure:
    """Static twin of ``EXPLORER_LEVELS``: one frame per sigma in ``SIGMAS``."""
    steps = [SliderStep(f"{s:g}", level_set_traces(s, kappa), level_set_note(s, kappa)) for s in SIGMAS]
    fig = slider_figure(steps, slider_label="noise level σ", active=active, fixed_axes=False, height=560)
    return _level_layout(fig, 560)


LEVEL_KAPPAS = (10.0, 100.0, 500.0, 1000.0)


@lru_cache(maxsize=1)
def _precompute_levels() -> int:
    for kp in LEVEL_KAPPAS:
        for sg in SIGMAS:
            _level_set_data(sg, kp)
    return len(LEVEL_KAPPAS) * len(SIGMAS)


def level_set_figure(sigma: float = 0.1, kappa: float = 500.0) -> go.Figure:
    """Live figure of ``EXPLORER_LEVELS`` (its first call precomputes the (sigma, kappa) grid)."""
    _precompute_levels()
    fig = go.Figure(level_set_traces(sigma, kappa))
    fig.update_layout(**level_set_note(sigma, kappa))
    return _level_layout(fig)


def _error_line(res: Result, name: str, color: str, dash: str = "solid", m: int = 200) -> go.Scatter:
    err = res.trace["error"]
    idx = thin_indices(err.size - 1, m, log=True) + 1  # k >= 1 on a log axis
    return go.Scatter(x=idx, y=np.maximum(err[idx], 1e-16), mode="lines", name=name,
                      line=dict(color=color, dash=dash, width=2.4))


def race_traces(kappa: float) -> list:
    """Error ||x_k - prox(y)|| of MMSE averaging and naive GD (kappa-conditioned Gaussian prior),
    the Theorem-1 envelope and a reference C/k line."""
    ex = race_runs(float(check_in_range(kappa, "kappa", 1.0, np.inf, closed=(True, False))))
    avg = ex["runs"]["MMSE averaging"]
    k = thin_indices(ex["k"].size, 60, log=True) + 1
    c0 = float(avg.trace["error"][1] * 2.0)
    return [
        _error_line(avg, "MMSE averaging", color_for(0)),
        _error_line(ex["runs"]["naive GD"], "naive GD (step 1/(1+τκ))", color_for(1)),
        go.Scatter(x=k, y=ex["bound"][k - 1], mode="lines", name="Theorem-1 bound",
                   line=dict(color="#555", dash="dash", width=1.8)),
        go.Scatter(x=k, y=c0 / (k + 1.0), mode="lines", name="reference 1/k",
                   line=dict(color="#999", dash="dot", width=1.5)),
    ]


RACE_AXES = dict(xaxis_title="iteration k (log scale)", yaxis_title="error ||x_k − prox(y)|| (log scale)")


def race_slider(active: int = 3) -> go.Figure:
    """Static twin of ``EXPLORER_RACE``: one frame per kappa in ``KAPPAS``."""
    steps = [SliderStep(f"{kp:g}", race_traces(kp)) for kp in KAPPAS]
    fig = slider_figure(steps, slider_label="prior condition number κ", active=active, logx=True, logy=True,
                        **RACE_AXES)
    fig.update_yaxes(range=[-16.5, 0.5])
    return fig


@lru_cache(maxsize=1)
def _precompute_race() -> int:
    """Run the whole kappa grid once (about a second), so that every later move is a cache hit."""
    for kp in KAPPAS:
        race_runs(kp)
    return len(KAPPAS)


@lru_cache(maxsize=1)
def _precompute_schedules() -> int:
    for c in SCALES:
        for s in SCALES:
            schedule_run(c, s)
    return len(SCALES) ** 2


def race_figure(kappa: float = 500.0) -> go.Figure:
    """Live figure of ``EXPLORER_RACE`` (its first call precomputes the kappa grid)."""
    _precompute_race()
    fig = base_layout(go.Figure(race_traces(kappa)), logx=True, logy=True, **RACE_AXES)
    fig.update_yaxes(range=[-16.5, 0.5])
    return fig


def crossover(err_a: np.ndarray, err_b: np.ndarray) -> int | None:
    """First k from which err_b <= err_a for good (None if never): where method b overtakes a."""
    err_a, err_b = np.asarray(err_a, dtype=float), np.asarray(err_b, dtype=float)
    if err_a.ndim != 1 or err_a.shape != err_b.shape or err_a.size == 0:
        raise ValueError("err_a and err_b must be non-empty 1-D arrays of the same length")
    ahead = err_b <= err_a
    if not ahead[-1]:
        return None
    behind = np.flatnonzero(~ahead)
    return int(behind[-1] + 1) if behind.size else 0


def watch_figure(kappa: float = 500.0, k_max: int = 3000) -> go.Figure:
    """Error of MMSE averaging, naive GD and fixed-sigma averaging on the kappa-conditioned
    Gaussian (linear k axis up to ``k_max``, log error axis), the Theorem-1 bound, and two phases:
    up to the measured crossover averaging is ahead, after it GD's linear rate wins."""
    ex = gaussian_race(float(kappa))
    k_max = check_int(k_max, "k_max", minimum=10)
    idx = np.unique(np.concatenate([np.arange(0, min(k_max, 60) + 1),
                                    np.linspace(0, k_max, 240).round().astype(int)]))
    data = []
    for i, (name, res) in enumerate(ex["runs"].items()):
        err = np.maximum(res.trace["error"][idx], 1e-16)
        data.append(go.Scatter(x=idx, y=err, mode="lines", name=name, line=dict(color=color_for(i), width=2.4)))
    kb = idx[idx >= 1]
    data.append(go.Scatter(x=kb, y=ex["bound"][kb - 1], mode="lines", name="Theorem-1 bound",
                           line=dict(color="#555", dash="dash", width=1.8)))
    fig = go.Figure(data)
    k_cross = crossover(ex["runs"]["MMSE averaging"].trace["error"], ex["runs"]["naive GD"].trace["error"])
    if k_cross is not None and k_cross < k_max:
        fig.update_layout(**phase_layout([Phase(0, k_cross, "averaging ahead: GD crawls"),
                                          Phase(k_cross, k_max, "GD's linear rate wins")]))
    base_layout(fig, xaxis_title="iteration k", yaxis_title="error ||x_k − prox(y)|| (log scale)", logy=True,
                height=450)
    fig.update_xaxes(range=[0, k_max])
    fig.update_yaxes(range=[-16.5, 0.5])
    return fig


@lru_cache(maxsize=2)
def _path_grid(kappa: float, n: int = 80) -> tuple:
    prior = anisotropic_gaussian(kappa)
    xs, ys = np.linspace(*XLIM, n), np.linspace(*YLIM, n)
    Z = smoothed_objective(prior, np.stack(np.meshgrid(xs, ys), axis=-1), Y2, 1.0, 0.0)
    return xs, ys, np.log10(Z - Z.min() + 1e-3).astype(np.float32)


def path_figure(kappa: float = 500.0, n_steps: int = 40) -> go.Figure:
    """The first ``n_steps`` iterates of MMSE averaging and naive GD over the contours of F."""
    ex = gaussian_race(float(kappa))
    n_steps = check_int(n_steps, "n_steps", minimum=1)
    fig = landscape_figure(None, XLIM, YLIM, values=_path_grid(float(kappa)), paths={
        name: ex["runs"][name].iterates[: n_steps + 1] for name in ("MMSE averaging", "naive GD")},
        xaxis_title="x<sub>1</sub>", yaxis_title="x<sub>2</sub> (stiff direction)", height=500)
    fig.data[0].update(colorbar=dict(title=dict(text="log10(F − min F)", side="right")))
    fig.add_trace(go.Scatter(x=[ex["x_star"][0]], y=[ex["x_star"][1]], mode="markers", name="prox(y)",
                             marker=dict(symbol="star", size=15, color=color_for(1),
                                         line=dict(color="white", width=1))))
    fig.update_xaxes(constrain="domain")
    fig.update_yaxes(scaleanchor="x", scaleratio=1, constrain="domain")
    return fig


def beyond_gaussian_figure(k_max_logcosh: int = 1000, k_max_laplace: int = 3000) -> go.Figure:
    """Error vs k (log-log) on the log-cosh prior (averaging and naive GD) and on the Laplace
    prior (averaging; nonsmooth, outside Theorem 1), with 1/k and 1/sqrt(k) reference lines."""
    lc, la = logcosh_run(k_max_logcosh), laplace_run(k_max_laplace)
    data = [
        _error_line(lc["runs"]["MMSE averaging"], "MMSE averaging, log-cosh prior (L = 400)", color_for(0)),
        _error_line(lc["runs"]["naive GD"], "naive GD, log-cosh prior", color_for(1)),
        _error_line(la["result"], "MMSE averaging, Laplace prior (nonsmooth)", color_for(3)),
    ]
    k = np.geomspace(1, k_max_laplace, 50)
    e_lc = lc["runs"]["MMSE averaging"].trace["error"]
    e_la = la["result"].trace["error"]
    data += [go.Scatter(x=k, y=2 * e_lc[1] / (k + 1), mode="lines", name="reference 1/k",
                        line=dict(color="#999", dash="dot", width=1.5)),
             go.Scatter(x=k, y=2 * e_la[1] * np.sqrt(2 / (k + 1)), mode="lines", name="reference 1/√k",
                        line=dict(color="#999", dash="dash", width=1.5))]
    fig = base_layout(go.Figure(data), logx=True, logy=True, height=450, **RACE_AXES)
    fig.update_yaxes(range=[-16.5, 1])
    return fig


SCHEDULES = {  # label -> (alpha_scale c, sigma_scale s)
    "paper (c=1, s=1)": (1.0, 1.0),
    "σ² halved (s=0.5)": (1.0, 0.5),
    "σ² doubled (s=2)": (1.0, 2.0),
    "α halved (c=0.5)": (0.5, 1.0),
    "both halved (c=s=0.5)": (0.5, 0.5),
    "α ×1.5 (c=1.5)": (1.5, 1.0),
}
SCALES = (0.25, 0.5, 1.0, 1.5, 2.0)


def schedule_traces(alpha_scale: float, sigma_scale: float) -> list:
    """Error of averaging with alpha_k = c/(k+2), sigma_k^2 = s tau/(k+1) against the paper's
    schedule, and the predicted floor ||prox_{tau s/c}(y) - prox_tau(y)|| (kappa = 100)."""
    ex = schedule_run(float(alpha_scale), float(sigma_scale))
    ref = schedule_run(1.0, 1.0)
    n = ex["result"].trace["error"].size - 1
    bias = max(ex["predicted_bias"], 1e-16)
    return [
        _error_line(ref["result"], "paper's schedule", "#999", "dot"),
        _error_line(ex["result"], f"c = {alpha_scale:g}, s = {sigma_scale:g}", color_for(0)),
        go.Scatter(x=[1, n], y=[bias, bias], mode="lines", name="predicted bias ||prox_(τs/c) − prox_τ||",
                   line=dict(color=color_for(1), dash="dash", width=1.8)),
    ]


SCHEDULE_AXES = dict(xaxis_title="iteration k (log scale)", yaxis_title="error ||x_k − prox(y)|| (log scale)")


def schedule_slider(active: int = 1) -> go.Figure:
    """Static twin of ``EXPLORER_SCHEDULE``: one frame per named schedule in ``SCHEDULES``."""
    steps = [SliderStep(lab, schedule_traces(c, s)) for lab, (c, s) in SCHEDULES.items()]
    fig = slider_figure(steps, slider_label="schedule", active=active, logx=True, logy=True, **SCHEDULE_AXES)
    fig.update_yaxes(range=[-4.0, 0.3])
    return fig


def schedule_figure(alpha_scale: float = 1.0, sigma_scale: float = 0.5) -> go.Figure:
    """Live figure of ``EXPLORER_SCHEDULE`` (its first call precomputes the (c, s) grid)."""
    _precompute_schedules()
    fig = base_layout(go.Figure(schedule_traces(alpha_scale, sigma_scale)), logx=True, logy=True,
                      **SCHEDULE_AXES)
    fig.update_yaxes(range=[-4.0, 0.3])
    return fig


EXPLORER_LEVELS = Explorer("07", "level_sets", level_set_figure, {
    "sigma": Slider("noise level σ", SIGMAS, 0.1),
    "kappa": Slider("prior condition number κ", LEVEL_KAPPAS, 500.0),
}, description="Level sets of the smoothed proximal objective F_σ")
EXPLORER_RACE = Explorer("07", "race", race_figure, {
    "kappa": Slider("prior condition number κ", KAPPAS, 500.0),
}, description="MMSE averaging against naive GD as the prior's conditioning worsens")
EXPLORER_SCHEDULE = Explorer("07", "schedule", schedule_figure, {
    "alpha_scale": Slider("α scale c", SCALES, 1.0),
    "sigma_scale": Slider("σ² scale s", SCALES, 0.5),
}, description="Breaking the identity (1 - α_k) σ_k² = α_k τ")


# --------------------------------------------------------------------------- claims


@claim("07", "MMSE averaging obeys the Theorem-1 bound on random Gaussian priors",
       expect="||x_k - prox(y)|| <= (ln k + 7)/(k+1) ||y - prox(y)|| for every k <= 10^4 on 20 random "
              "Gaussian priors (d <= 10, condition numbers up to 10^4)",
       name="theorem1_bound")
def claim_theorem1(fast: bool = False) -> Measured:
    K = 2000 if fast else 10000
    gen = np.random.default_rng(7)
    worst_ratio, violations, worst_kappa = 0.0, 0, 0.0
    for _ in range(20):
        d = int(gen.integers(2, 11))
        prior = random_gaussian_prior(d, max_log10_kappa=4.0, rng=gen)
        y = prior.mean + 3.0 * gen.standard_normal(d)
        tau = float(10.0 ** gen.uniform(-1, 1))
        x_star = prior.prox(y, tau)
        res = mmse_averaging(prior.denoise, y, tau, maxiter=K, x_star=x_star)
        err = res.trace["error"][1:]
        bound = theorem1_bound(np.arange(1, K + 1), float(np.linalg.norm(y - x_star)), tau)
        ratio = err / bound
        worst_ratio = max(worst_ratio, float(ratio.max()))
        violations += int(np.sum(ratio > 1.0))
        worst_kappa = max(worst_kappa, prior.condition_number)
    return Measured({"priors": 20, "k_max": K, "violations": violations, "max_error_over_bound": worst_ratio,
                     "largest_kappa": worst_kappa},
                    holds=violations == 0,
                    summary=f"{violations} violations; error/bound at most {worst_ratio:.3f}")


@claim("07", "MMSE averaging converges at rate 1/k, also for a non-Gaussian (log-cosh) prior",
       expect="fitted log-log slope of error vs k in [-1.1, -0.9] for the kappa = 500 Gaussian "
              "(k = 10..10^4) and the log-cosh prior with L = 400 (k = 10..10^3)",
       name="rate_one_over_k")
def claim_rate(fast: bool = False) -> Measured:
    Kg, Kl = (3000, 300) if fast else (10000, 1000)
    g = race_runs(500.0, maxiter=Kg)["runs"]["MMSE averaging"].trace["error"]
    lc = logcosh_run(maxiter=Kl)
    e = lc["runs"]["MMSE averaging"].trace["error"]
    kg, kl = np.arange(10, Kg + 1), np.arange(10, Kl + 1)
    slope_g, slope_l = loglog_slope(kg, g[kg]), loglog_slope(kl, e[kl])
    holds = all(-1.1 <= s <= -0.9 for s in (slope_g, slope_l))
    return Measured({"slope_gaussian": slope_g, "slope_logcosh": slope_l,
                     "logcosh_(k+2)err_at_10": 12 * e[10], "logcosh_(k+2)err_at_kmax": (Kl + 2) * e[Kl]},
                    holds=holds, summary=f"slopes {slope_g:.3f} (Gaussian), {slope_l:.3f} (log-cosh)",
                    details=lc)


@claim("07", "MMSE averaging does not care about the prior's conditioning; naive GD does",
       expect="at k = 100: GD error / averaging error >= 10 for kappa >= 10^3, and the averaging error "
              "varies <= 2x over kappa in {10, 10^2, 10^3, 10^4}",
       name="condition_independence")
def claim_condition(fast: bool = False) -> Measured:
    kappas = (10.0, 100.0, 1000.0, 10000.0)
    avg, gd = {}, {}
    for kp in kappas:
        ex = race_runs(kp, maxiter=100)
        avg[kp] = float(ex["runs"]["MMSE averaging"].trace["error"][100])
        gd[kp] = float(ex["runs"]["naive GD"].trace["error"][100])
    ratios = {kp: gd[kp] / avg[kp] for kp in kappas}
    spread = max(avg.values()) / min(avg.values())
    values = {f"avg_err_k100_kappa1e{int(np.log10(kp))}": avg[kp] for kp in kappas}
    values.update({f"gd_err_k100_kappa1e{int(np.log10(kp))}": gd[kp] for kp in kappas})
    values.update(min_ratio_kappa_ge_1e3=min(ratios[1000.0], ratios[10000.0]), avg_spread=spread)
    holds = values["min_ratio_kappa_ge_1e3"] >= 10.0 and spread <= 2.0
    return Measured(values, holds=holds,
                    summary=f"GD/averaging >= {values['min_ratio_kappa_ge_1e3']:.0f}x at kappa >= 1e3; "
                            f"averaging spread {spread:.2f}x")
