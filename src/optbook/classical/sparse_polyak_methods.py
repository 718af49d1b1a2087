"""Chapter 02: Sparse Polyak step sizes for high-dimensional estimation (Qiao and Maros, NeurIPS 2025).

Iterative hard thresholding (IHT) for sparse M-estimation, min f(theta) subject to
||theta||_0 <= s~, with three step-size rules:

* **Sparse Polyak** (the paper's method): the Polyak gap f(theta_t) - f_hat divided by the
  squared norm of the *hard-thresholded* gradient H_{s_g}(grad f(theta_t)), which estimates the
  smoothness along sparse directions only;
* **Polyak** (baseline): the same gap over the full squared gradient norm, which estimates the
  global smoothness and therefore shrinks like n/d when d >> n;
* **constant** (baseline): a fixed step, e.g. 1/L with L = lambda_max(X^T X / n).

This module holds what a user imports: the methods, the two losses, the curvature helpers. The
chapter's experiments, claims, figures and explorers live in
:mod:`optbook.classical.sparse_polyak_chapter` (so importing the method does not import plotly).

Every method has the ``scipy.optimize.minimize`` shape (``fun, x0, jac``) and returns a
:class:`~optbook.core.Result` whose :class:`~optbook.core.Trace` logs the objective, gradient
norm, step size and, as extras, the estimation error ||theta_t - theta*|| (when theta* is
known), the Polyak gap and the curvature estimate 1/(2 eta_t).
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from scipy.linalg import eigvalsh
from scipy.optimize import minimize
from scipy.special import expit

from ..core import (
    Problem,
    Result,
    RngLike,
    Trace,
    as_rng,
    check_choice,
    check_int,
    check_matrix,
    check_positive,
    check_real,
    check_vector,
)

Fun = Callable[[np.ndarray], float]
Jac = Callable[[np.ndarray], np.ndarray]
RULES = ("sparse_polyak", "polyak", "constant")
#: Legend names used in the chapter (the text names the rules the same way).
RULE_NAMES = {"sparse_polyak": "Sparse Polyak", "polyak": "Polyak", "constant": "constant step"}
#: Stop when f(theta_t) exceeds this multiple of max(f(theta_0), 1): the run diverged.
DIVERGENCE_FACTOR = 1e10


# --------------------------------------------------------------------------- hard thresholding


def hard_threshold(v: np.ndarray, k: int) -> np.ndarray:
    """H_k(v): keep the k entries of largest magnitude and zero the rest (ties: lowest index).

    This is the Euclidean projection onto {u : ||u||_0 <= k} (the paper's HT_k). O(d) via
    ``np.partition``.
    """
    v = check_vector(v, "v")
    k = check_int(k, "k", minimum=0)
    return v * _top_k_mask(v, k)


def _top_k_mask(v: np.ndarray, k: int) -> np.ndarray:
    d = v.size
    if k >= d:
        return np.ones(d, dtype=bool)
    if k == 0:
        return np.zeros(d, dtype=bool)
    a = np.abs(v)
    kth = np.partition(a, d - k)[d - k]  # the k-th largest magnitude
    keep = a > kth
    ties = np.flatnonzero(a == kth)[: k - int(keep.sum())]
    keep[ties] = True
    return keep


def _top_k_sq_norm(g: np.ndarray, k: int) -> float:
    """||H_k(g)||^2, the sum of the k largest g_i^2 (exactly g @ g when k >= d)."""
    if k >= g.size:
        return float(g @ g)
    g2 = g * g
    return float(np.sum(np.partition(g2, g.size - k)[g.size - k:]))


# --------------------------------------------------------------------------- problems


@dataclass(eq=False)
class SparseLeastSquares(Problem):
    """f(theta) = 1/(2n) ||y - X theta||^2, the paper's sparse linear regression loss.

    ``theta_star`` (the true sparse parameter) is optional and used only to measure errors.
    """

    X: np.ndarray
    y: np.ndarray
    theta_star: np.ndarray | None = None
    name: str = "sparse least squares"

    def __post_init__(self) -> None:
        self.X = check_matrix(self.X, "X")
        self.n, self.dim = self.X.shape
        self.y = check_vector(self.y, "y", self.n)
        if self.theta_star is not None:
            self.theta_star = check_vector(self.theta_star, "theta_star", self.dim)
        self._XT = np.ascontiguousarray(self.X.T)  # X^T r reads rows: faster when contiguous

    def residual(self, theta: np.ndarray) -> np.ndarray:
        """X theta - y, using only the nonzero columns when theta is sparse (IHT iterates are)."""
        return _sparse_matvec(self.X, self._x(theta)) - self.y

    def fun(self, theta: np.ndarray) -> float:
        r = self.residual(theta)
        return float(0.5 * (r @ r) / self.n)

    def jac(self, theta: np.ndarray) -> np.ndarray:
        return self._XT @ self.residual(theta) / self.n

    def hess(self, theta: np.ndarray) -> np.ndarray:
        self._x(theta)
        return self.X.T @ self.X / self.n

    def support_fit(self, support: np.ndarray) -> np.ndarray:
        """Least-squares fit restricted to ``support`` (the oracle estimator when it is the true support)."""
        support = _check_support(support, self.dim)
        theta = np.zeros(self.dim)
        theta[support] = np.linalg.lstsq(self.X[:, support], self.y, rcond=None)[0]
        return theta


@dataclass(eq=False)
class SparseLogistic(Problem):
    """f(theta) = 1/n sum_i log(1 + exp(-y_i x_i^T theta)), labels y_i in {-1, +1} (no penalty)."""

    X: np.ndarray
    y: np.ndarray
    theta_star: np.ndarray | None = None
    name: str = "sparse logistic regression"

    def __post_init__(self) -> None:
        self.X = check_matrix(self.X, "X")
        self.n, self.dim = self.X.shape
        self.y = check_vector(self.y, "y", self.n)
        if not np.all(np.isin(self.y, (-1.0, 1.0))):
            raise ValueError("y must contain only labels -1 and +1")
        if self.theta_star is not None:
            self.theta_star = check_vector(self.theta_star, "theta_star", self.dim)
        self._yx = self.y[:, None] * self.X
        self._yxT = np.ascontiguousarray(self._yx.T)

    def fun(self, theta: np.ndarray) -> float:
        return float(np.mean(np.logaddexp(0.0, -_sparse_matvec(self._yx, self._x(theta)))))

    def jac(self, theta: np.ndarray) -> np.ndarray:
        s = expit(-_sparse_matvec(self._yx, self._x(theta)))
        return -(self._yxT @ s) / self.n

    def hess(self, theta: np.ndarray) -> np.ndarray:
        p = expit(self._yx @ self._x(theta))
        return (self.X.T * (p * (1.0 - p))) @ self.X / self.n

    def support_fit(self, support: np.ndarray) -> np.ndarray:
        """Logistic maximum likelihood restricted to ``support`` (scipy's trust-exact, to 1e-10)."""
        support = _check_support(support, self.dim)
        sub = SparseLogistic(self.X[:, support], self.y)
        res = minimize(sub.fun, np.zeros(support.size), jac=sub.jac, hess=sub.hess,
                       method="trust-exact", options={"gtol": 1e-10, "maxiter": 200})
        theta = np.zeros(self.dim)
        theta[support] = res.x
        return theta


def _sparse_matvec(A: np.ndarray, theta: np.ndarray) -> np.ndarray:
    """A @ theta touching only the columns where theta is nonzero (when fewer than a quarter)."""
    nz = np.flatnonzero(theta)
    if 4 * nz.size >= theta.size:
        return A @ theta
    return A[:, nz] @ theta[nz]


def _check_support(support, dim: int) -> np.ndarray:
    idx = np.asarray(support)
    if idx.ndim != 1 or idx.size == 0 or not np.issubdtype(idx.dtype, np.integer):
        raise ValueError("support must be a non-empty 1-D array of integer indices")
    if idx.min() < 0 or idx.max() >= dim or np.unique(idx).size != idx.size:
        raise ValueError(f"support must hold distinct indices in [0, {dim})")
    return np.sort(idx)


def _check_sizes(n, d, s) -> tuple[int, int, int]:
    n, d, s = check_int(n, "n", minimum=1), check_int(d, "d", minimum=1), check_int(s, "s", minimum=1)
    if s > d:
        raise ValueError(f"s must be <= d, got s={s}, d={d}")
    return n, d, s


def _sparse_signal(d: int, s: int, rng: np.random.Generator, scale: float) -> np.ndarray:
    theta = np.zeros(d)
    support = rng.choice(d, size=s, replace=False)
    theta[support] = scale * rng.choice([-1.0, 1.0], size=s)
    return theta


def make_sparse_regression(n: int = 200, d: int = 2000, s: int = 5, sigma: float = 0.5,
                           rng: RngLike = None) -> SparseLeastSquares:
    """Synthetic sparse linear regression: X_ij ~ N(0, 1), theta* = +-1 on s random coordinates,
    y = X theta* + sigma * eps."""
    n, d, s = _check_sizes(n, d, s)
    sigma = check_positive(sigma, "sigma", allow_zero=True)
    rng = as_rng(rng)
    X = rng.standard_normal((n, d))
    theta = _sparse_signal(d, s, rng, 1.0)
    y = X @ theta + sigma * rng.standard_normal(n)
    return SparseLeastSquares(X, y, theta, name=f"sparse least squares (n={n}, d={d}, s={s})")


def make_sparse_logistic(n: int = 400, d: int = 2000, s: int = 5, norm: float = 3.0,
                         rng: RngLike = None) -> SparseLogistic:
    """Synthetic sparse logistic regression: X_ij ~ N(0, 1), theta* = +-norm/sqrt(s) on s random
    coordinates (so ||theta*|| = norm), y_i = +1 with probability sigmoid(x_i^T theta*), else -1."""
    n, d, s = _check_sizes(n, d, s)
    norm = check_positive(norm, "norm")
    rng = as_rng(rng)
    X = rng.standard_normal((n, d))
    theta = _sparse_signal(d, s, rng, norm / np.sqrt(s))
    y = np.where(rng.random(n) < expit(X @ theta), 1.0, -1.0)
    return SparseLogistic(X, y, theta, name=f"sparse logistic (n={n}, d={d}, s={s})")


def oracle_fit(problem: SparseLeastSquares | SparseLogistic) -> tuple[np.ndarray, float]:
    """The oracle estimator (the fit on the true support of theta*) and its loss."""
    if not isinstance(problem, (SparseLeastSquares, SparseLogistic)) or problem.theta_star is None:
        raise ValueError("problem must be a SparseLeastSquares or SparseLogistic with theta_star")
    theta = problem.support_fit(np.flatnonzero(problem.theta_star))
    return theta, problem.fun(theta)


def statistical_precision(sigma: float, s: int, n: int, d: int, factor: float = 2.0) -> float:
    """The target error factor * sigma * sqrt(s log d / n), the minimax rate up to the factor."""
    sigma = check_positive(sigma, "sigma")
    s, n, d = check_int(s, "s", minimum=1), check_int(n, "n", minimum=1), check_int(d, "d", minimum=2)
    factor = check_positive(factor, "factor")
    return float(factor * sigma * np.sqrt(s * np.log(d) / n))


# --------------------------------------------------------------------------- curvature


def global_smoothness(X: np.ndarray) -> float:
    """L = lambda_max(X^T X / n), from the smaller of the two Gram matrices."""
    X = check_matrix(X, "X")
    n, d = X.shape
    gram = X @ X.T if n <= d else X.T @ X
    return float(eigvalsh(gram / n, subset_by_index=[gram.shape[0] - 1, gram.shape[0] - 1])[0])


def marchenko_pastur_edge(n: int, d: int) -> float:
    """(1 + sqrt(d/n))^2, the limit of lambda_max(X^T X / n) for Gaussian X (Marchenko-Pastur)."""
    n, d = check_int(n, "n", minimum=1), check_int(d, "d", minimum=1)
    return float((1.0 + np.sqrt(d / n)) ** 2)


def restricted_smoothness(X: np.ndarray, k: int, n_supports: int = 50, rng: RngLike = None) -> float:
    """Heuristic L_k: max over ``n_supports`` random supports T with |T| = k of lambda_max(X_T^T X_T / n).

    A *lower* estimate of the restricted smoothness constant (the true one maximises over all
    supports, which is intractable).
    """
    X = check_matrix(X, "X")
    n, d = X.shape
    k = check_int(k, "k", minimum=1)
    if k > d:
        raise ValueError(f"k must be <= d = {d}, got {k}")
    n_supports = check_int(n_supports, "n_supports", minimum=1)
    rng = as_rng(rng)
    best = 0.0
    for _ in range(n_supports):
        XT = X[:, rng.choice(d, size=k, replace=False)]
        best = max(best, float(np.linalg.eigvalsh(XT.T @ XT / n)[-1]))
    return best


# --------------------------------------------------------------------------- the methods


def _check_callable(f, name: str) -> None:
    if not callable(f):
        raise ValueError(f"{name} must be callable, got {type(f).__name__}")


def _evaluate(fun: Fun, jac: Jac, x: np.ndarray) -> tuple[float, np.ndarray]:
    """f(x) and grad f(x), checked for type and shape at every iterate (not only at x0)."""
    f = np.asarray(fun(x), dtype=float)
    if f.shape != ():
        raise ValueError(f"fun must return a scalar, got an array of shape {f.shape}")
    g = np.asarray(jac(x), dtype=float)
    if g.shape != x.shape:
        raise ValueError(f"jac must return an array of shape {x.shape}, got {g.shape}")
    return float(f), g


def iht(
    fun: Fun,
    x0: np.ndarray,
    jac: Jac,
    *,
    sparsity: int,
    step: str = "sparse_polyak",
    f_hat: float | None = None,
    grad_sparsity: int | None = None,
    gamma: float = 1.0,
    eta: float | None = None,
    eta_max: float = np.inf,
    theta_star: np.ndarray | None = None,
    tol: float = 0.0,
    maxiter: int = 1000,
    callback: Callable[[np.ndarray], None] | None = None,
    method_name: str | None = None,
) -> Result:
    """Iterative hard thresholding theta_{t+1} = H_{s~}(theta_t - eta_t grad f(theta_t)).

    Parameters
    ----------
    fun, jac : callables
        The empirical loss f (the paper's (1/n) sum of losses) and its gradient.
    x0 : array
        Start (the paper starts at 0); it is projected onto the sparsity constraint first.
    sparsity : int
        Projection sparsity s~ (the paper's s, at least the true sparsity s*).
    step : {'sparse_polyak', 'polyak', 'constant'}
        'sparse_polyak': eta_t = gamma (f(theta_t) - f_hat) / ||H_{s_g}(grad f(theta_t))||^2 (the
        paper's Sparse Polyak step); 'polyak': the same with the full gradient norm;
        'constant': eta_t = ``eta`` (e.g. 1/L).
    f_hat : float, optional
        Estimate of the optimal value (the paper's f-hat); required by the Polyak rules. A lower
        bound such as 0 works for least squares. When f(theta_t) <= f_hat the gap has closed
        and the run stops.
    grad_sparsity : int, optional
        s_g, how many gradient entries the Sparse Polyak denominator keeps, 1 <= s_g <= d;
        default s~, as in the paper's HT_s(grad f) with the projection sparsity s. s_g = d is
        Polyak exactly. Only for step='sparse_polyak'.
    gamma : float
        Polyak's relaxation factor multiplying the Polyak-type steps (1 in the paper; a knob
        the chapter tunes for every rule alike).
    eta : float, optional
        The constant step (required by, and only for, step='constant').
    eta_max : float
        Cap on the Polyak-type steps (default no cap).
    theta_star : array, optional
        The true parameter: logs the error ||theta_t - theta*|| and, with ``tol`` > 0, stops
        when it is <= tol (iterations to statistical precision).
    tol : float
        Stopping tolerance on the error (needs ``theta_star``); 0 runs ``maxiter`` iterations.
    maxiter : int
        Iteration cap.

    Returns
    -------
    Result
        ``x, fun, jac, nit, success, message, trace, f_hat``. Row t of the trace holds theta_t
        and the step eta_t taken from it; extras ``error``, ``gap`` (f - f_hat),
        ``curvature`` (1/(2 eta_t) before gamma and the cap: the curvature the rule implicitly
        estimates), ``nnz``.
    """
    _check_callable(fun, "fun")
    _check_callable(jac, "jac")
    step = check_choice(step, "step", RULES)
    sparsity = check_int(sparsity, "sparsity", minimum=1)
    x = check_vector(x0, "x0")
    d = x.size
    if sparsity > d:
        raise ValueError(f"sparsity must be <= len(x0) = {d}, got {sparsity}")
    polyak_type = step != "constant"
    if polyak_type:
        if f_hat is None:
            raise ValueError(f"step={step!r} needs f_hat (an estimate of the optimal value)")
        f_hat = check_real(f_hat, "f_hat")
        if eta is not None:
            raise ValueError(f"eta is the constant step; step={step!r} takes gamma instead")
    else:
        if eta is None:
            raise ValueError("step='constant' needs eta (e.g. 1/L)")
        eta = check_positive(eta, "eta")
        if f_hat is not None:
            f_hat = check_real(f_hat, "f_hat")  # only logged, as the gap
    if grad_sparsity is not None and step != "sparse_polyak":
        raise ValueError(f"grad_sparsity applies to step='sparse_polyak' only, not {step!r}")
    if step == "sparse_polyak":
        s_g = sparsity if grad_sparsity is None else check_int(grad_sparsity, "grad_sparsity", minimum=1)
        if s_g > d:
            raise ValueError(f"grad_sparsity must be <= len(x0) = {d}, got {s_g}")
    else:
        s_g = d
    gamma = check_positive(gamma, "gamma")
    if isinstance(eta_max, bool) or not isinstance(eta_max, (int, float, np.floating)) or not eta_max > 0:
        raise ValueError(f"eta_max must be a positive number (inf allowed), got {eta_max!r}")
    if theta_star is not None:
        theta_star = check_vector(theta_star, "theta_star", d)
    tol = check_positive(tol, "tol", allow_zero=True)
    if tol > 0 and theta_star is None:
        raise ValueError("tol > 0 stops on ||theta_t - theta*|| and needs theta_star")
    maxiter = check_int(maxiter, "maxiter", minimum=0)
    if callback is not None:
        _check_callable(callback, "callback")

    trace = Trace(method_name or RULE_NAMES[step],
                  meta=dict(step=step, sparsity=sparsity, grad_sparsity=s_g, f_hat=f_hat, eta=eta, gamma=gamma))
    x = x * _top_k_mask(x, sparsity)
    f, g = _evaluate(fun, jac, x)
    if not (np.isfinite(f) and np.all(np.isfinite(g))):
        raise ValueError("fun and jac must be finite at x0")
    blow_up = DIVERGENCE_FACTOR * max(abs(f), 1.0)
    nfev = njev = 1
    message, success = "maximum number of iterations reached", False
    for t in range(maxiter + 1):
        gap = np.nan if f_hat is None else f - f_hat
        err = np.nan if theta_star is None else float(np.linalg.norm(x - theta_star))
        trace.record(objective=f, grad_norm=float(np.linalg.norm(g)), error=err, gap=gap,
                     nnz=float(np.count_nonzero(x)))
        if callback is not None:
            callback(np.array(x))
        if tol > 0 and err <= tol:
            message, success = "statistical precision reached (||theta_t - theta*|| <= tol)", True
            break
        if f > blow_up:
            message = "diverged: f(theta_t) grew by a factor 1e10"
            break
        if t == maxiter:
            break
        if step == "constant":
            eta_t, curvature = eta, 1.0 / (2.0 * eta)
        else:
            if gap <= 0:
                message, success = "Polyak gap closed: f(theta_t) <= f_hat", True
                break
            denom = _top_k_sq_norm(g, s_g)
            if denom == 0.0:
                message, success = "gradient is zero on the selected coordinates", True
                break
            curvature = denom / (2.0 * gap)
            eta_t = min(gamma * gap / denom, eta_max)
        trace.update_last(step_size=eta_t, curvature=curvature)
        z = x - eta_t * g
        x = z * _top_k_mask(z, sparsity)
        f, g = _evaluate(fun, jac, x)
        nfev, njev = nfev + 1, njev + 1
        if not (np.isfinite(f) and np.all(np.isfinite(g))):
            message = "diverged: f or its gradient is not finite"
            break
    return Result(x=x, fun=f, jac=g, nit=len(trace) - 1, nfev=nfev, njev=njev, success=success,
                  message=message, trace=trace, f_hat=f_hat)


def sparse_polyak(fun: Fun, x0: np.ndarray, jac: Jac, *, sparsity: int, f_hat: float,
                  grad_sparsity: int | None = None, **kwargs) -> Result:
    """Sparse Polyak (the paper's method): IHT with eta_t = (f - f_hat) / ||H_{s_g}(grad f)||^2.

    See :func:`iht` for every argument.
    """
    return iht(fun, x0, jac, sparsity=sparsity, step="sparse_polyak", f_hat=f_hat,
               grad_sparsity=grad_sparsity, **kwargs)


def polyak_iht(fun: Fun, x0: np.ndarray, jac: Jac, *, sparsity: int, f_hat: float, **kwargs) -> Result:
    """IHT with the classic Polyak step eta_t = (f - f_hat) / ||grad f||^2 (baseline)."""
    return iht(fun, x0, jac, sparsity=sparsity, step="polyak", f_hat=f_hat, **kwargs)


def constant_step_iht(fun: Fun, x0: np.ndarray, jac: Jac, *, sparsity: int, eta: float, **kwargs) -> Result:
    """IHT with a constant step eta, typically 1/L with L = lambda_max(X^T X / n) (baseline)."""
    return iht(fun, x0, jac, sparsity=sparsity, step="constant", eta=eta, **kwargs)
