"""Chapter 02: Sparse Polyak step sizes for high-dimensional estimation (Qiao and Maros, NeurIPS 2025).

Iterative hard thresholding (IHT) for sparse M-estimation, min f(theta) subject to
||theta||_0 <= s~, with three step-size rules:

* **Sparse Polyak** (the paper's method, our reconstruction of its formula): the Polyak gap
  f(theta_t) - f_hat divided by the squared norm of the *hard-thresholded* gradient
  H_{s_g}(grad f(theta_t)), which estimates the smoothness along sparse directions only;
* **Polyak** (baseline): the same gap over the full squared gradient norm, which estimates the
  global smoothness and therefore shrinks like n/d when d >> n;
* **constant 1/L** (baseline): L = lambda_max(X^T X / n), the global smoothness constant.

Every method has the ``scipy.optimize.minimize`` shape (``fun, x0, jac``) and returns a
:class:`~optbook.core.Result` whose :class:`~optbook.core.Trace` logs the objective, gradient
norm, step size and, as extras, the estimation error ||theta_t - theta*|| (when theta* is
known), the Polyak gap and the curvature estimate 1/(2 eta_t).
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import plotly.graph_objects as go
from scipy.linalg import eigvalsh
from scipy.optimize import minimize
from scipy.special import expit

from ..claims import Measured, claim
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
    check_vector,
    loglog_slope,
    thin_indices,
)
from ..viz import SliderStep, base_layout, color_for, phase_layout, slider_figure
from ..viz.convergence import Phase
from ..widgets import Explorer, Slider

Fun = Callable[[np.ndarray], float]
Jac = Callable[[np.ndarray], np.ndarray]
RULES = ("sparse_polyak", "polyak", "constant")
#: Legend names used in the chapter (the text names the rules the same way).
RULE_NAMES = {"sparse_polyak": "Sparse Polyak", "polyak": "Polyak", "constant": "constant 1/L"}
#: Stop when f(theta_t) exceeds this multiple of max(f(theta_0), 1): the run diverged.
DIVERGENCE_FACTOR = 1e10


# --------------------------------------------------------------------------- hard thresholding


def hard_threshold(v: np.ndarray, k: int) -> np.ndarray:
    """H_k(v): keep the k entries of largest magnitude and zero the rest (ties: lowest index).

    This is the Euclidean projection onto {u : ||u||_0 <= k}. O(d) via ``np.partition``.
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
        """Logistic maximum likelihood restricted to ``support`` (scipy's Newton-CG, to 1e-10)."""
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


def _sparse_signal(d: int, s: int, rng: np.random.Generator, scale: float) -> np.ndarray:
    theta = np.zeros(d)
    support = rng.choice(d, size=s, replace=False)
    theta[support] = scale * rng.choice([-1.0, 1.0], size=s)
    return theta


def make_sparse_regression(n: int = 200, d: int = 2000, s: int = 5, sigma: float = 0.5,
                           rng: RngLike = None) -> SparseLeastSquares:
    """Synthetic sparse linear regression: X_ij ~ N(0, 1), theta* = +-1 on s random coordinates,
    y = X theta* + sigma * eps (the card's setting)."""
    n, d = check_int(n, "n", minimum=1), check_int(d, "d", minimum=1)
    s = check_int(s, "s", minimum=1)
    if s > d:
        raise ValueError(f"s must be <= d, got s={s}, d={d}")
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
    n, d = check_int(n, "n", minimum=1), check_int(d, "d", minimum=1)
    s = check_int(s, "s", minimum=1)
    if s > d:
        raise ValueError(f"s must be <= d, got s={s}, d={d}")
    norm = check_positive(norm, "norm")
    rng = as_rng(rng)
    X = rng.standard_normal((n, d))
    theta = _sparse_signal(d, s, rng, norm / np.sqrt(s))
    y = np.where(rng.random(n) < expit(X @ theta), 1.0, -1.0)
    return SparseLogistic(X, y, theta, name=f"sparse logistic (n={n}, d={d}, s={s})")


def oracle_fit(problem: SparseLeastSquares | SparseLogistic) -> tuple[np.ndarray, float]:
    """The oracle estimator (the fit on the true support of theta*) and its loss, our f_hat."""
    if not isinstance(problem, (SparseLeastSquares, SparseLogistic)) or problem.theta_star is None:
        raise ValueError("problem must be a SparseLeastSquares or SparseLogistic with theta_star")
    theta = problem.support_fit(np.flatnonzero(problem.theta_star))
    return theta, problem.fun(theta)


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
        T = rng.choice(d, size=k, replace=False)
        XT = X[:, T]
        best = max(best, float(np.linalg.eigvalsh(XT.T @ XT / n)[-1]))
    return best


# --------------------------------------------------------------------------- the methods


def iht(
    fun: Fun,
    x0: np.ndarray,
    jac: Jac,
    *,
    sparsity: int,
    step: str = "sparse_polyak",
    f_hat: float | None = None,
    grad_sparsity: int | None = None,
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
        Projection sparsity s~ (the paper's s-tilde, at least the true sparsity s).
    step : {'sparse_polyak', 'polyak', 'constant'}
        'sparse_polyak': eta_t = (f(theta_t) - f_hat) / ||H_{s_g}(grad f(theta_t))||^2 (the
        paper's Sparse Polyak step, our reconstruction); 'polyak': the same with the full
        gradient norm; 'constant': eta_t = ``eta`` (e.g. 1/L).
    f_hat : float, optional
        Estimate of the optimal value (the paper's f-hat); required by the Polyak rules. When
        f(theta_t) <= f_hat the gap has closed and the run stops (the card's safeguard).
    grad_sparsity : int, optional
        s_g, how many gradient entries the Sparse Polyak denominator keeps; default 2 s~ (the
        card's s~ + s, with the worst case s = s~). s_g >= d gives Polyak exactly.
    eta : float, optional
        The constant step (required when step='constant').
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
        ``curvature`` (1/(2 eta_t) before the cap: the curvature the rule implicitly
        estimates), ``nnz``.
    """
    step = check_choice(step, "step", RULES)
    sparsity = check_int(sparsity, "sparsity", minimum=1)
    x = check_vector(x0, "x0")
    d = x.size
    if sparsity > d:
        raise ValueError(f"sparsity must be <= len(x0) = {d}, got {sparsity}")
    if step != "constant" and f_hat is None:
        raise ValueError(f"step={step!r} needs f_hat (an estimate of the optimal value)")
    if f_hat is not None and not (isinstance(f_hat, (int, float, np.floating)) and np.isfinite(f_hat)):
        raise ValueError(f"f_hat must be a finite number, got {f_hat!r}")
    if step == "constant":
        if eta is None:
            raise ValueError("step='constant' needs eta (e.g. 1/L)")
        eta = check_positive(eta, "eta")
    s_g = d if step == "polyak" else 2 * sparsity if grad_sparsity is None else check_int(
        grad_sparsity, "grad_sparsity", minimum=1)
    if not (isinstance(eta_max, (int, float)) and not isinstance(eta_max, bool) and eta_max > 0):
        raise ValueError(f"eta_max must be a positive number (inf allowed), got {eta_max!r}")
    if theta_star is not None:
        theta_star = check_vector(theta_star, "theta_star", d)
    tol = check_positive(tol, "tol", allow_zero=True)
    if tol > 0 and theta_star is None:
        raise ValueError("tol > 0 stops on ||theta_t - theta*|| and needs theta_star")
    maxiter = check_int(maxiter, "maxiter", minimum=0)
    if callback is not None and not callable(callback):
        raise ValueError("callback must be callable")

    trace = Trace(method_name or RULE_NAMES[step],
                  meta=dict(step=step, sparsity=sparsity, grad_sparsity=s_g, f_hat=f_hat, eta=eta))
    x = x * _top_k_mask(x, sparsity)
    f, g = float(fun(x)), np.asarray(jac(x), dtype=float)
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
            eta_t = min(gap / denom, eta_max)
        trace.update_last(step_size=eta_t, curvature=curvature)
        z = x - eta_t * g
        x = z * _top_k_mask(z, sparsity)
        f, g = float(fun(x)), np.asarray(jac(x), dtype=float)
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


# --------------------------------------------------------------------------- the experiments


def statistical_precision(sigma: float, s: int, n: int, d: int, factor: float = 2.0) -> float:
    """The target error factor * sigma * sqrt(s log d / n), the minimax rate up to the factor."""
    sigma = check_positive(sigma, "sigma")
    s, n, d = check_int(s, "s", minimum=1), check_int(n, "n", minimum=1), check_int(d, "d", minimum=2)
    factor = check_positive(factor, "factor")
    return float(factor * sigma * np.sqrt(s * np.log(d) / n))


@lru_cache(maxsize=32)
def regression_setup(d: int, n: int = 200, s: int = 5, sigma: float = 0.5, seed: int = 0) -> dict:
    """One synthetic regression problem with its oracle fit, f_hat, target and L (cached)."""
    prob = make_sparse_regression(n, d, s, sigma, np.random.default_rng(check_int(seed, "seed")))
    theta_orc, f_hat = oracle_fit(prob)
    return {"problem": prob, "f_hat": f_hat, "target": statistical_precision(sigma, s, n, d),
            "L": global_smoothness(prob.X), "mp_edge": marchenko_pastur_edge(n, d),
            "oracle_error": float(np.linalg.norm(theta_orc - prob.theta_star))}


@lru_cache(maxsize=512)
def _run_rule(rule: str, d: int, n: int, s: int, sigma: float, seed: int, s_tilde: int, s_g: int,
              maxiter: int, stop_at_precision: bool) -> Result:
    setup = regression_setup(d, n, s, sigma, seed)
    prob = setup["problem"]
    common = dict(sparsity=s_tilde, theta_star=prob.theta_star, maxiter=maxiter, f_hat=setup["f_hat"],
                  tol=setup["target"] if stop_at_precision else 0.0)
    if rule == "constant":
        return iht(prob.fun, np.zeros(d), prob.jac, step="constant", eta=1.0 / setup["L"], **common)
    return iht(prob.fun, np.zeros(d), prob.jac, step=rule, grad_sparsity=s_g, **common)


def compare_rules(d: int, *, n: int = 200, s: int = 5, sigma: float = 0.5, seed: int = 0,
                  sparsity_factor: int = 2, grad_sparsity: int | None = None, maxiter: int = 3000,
                  stop_at_precision: bool = False, rules: tuple[str, ...] = RULES) -> dict:
    """Run IHT with each step rule on one synthetic regression problem (the card's check).

    f_hat is the oracle least-squares loss; the target is 2 sigma sqrt(s log d / n); s_g defaults
    to s~ + s. Each run is cached, so the claim, the chapter's static slider figures and the live
    explorers share them.

    Returns a dict with ``runs`` (Result per rule), ``iters`` (iterations to the target, None if
    never), ``target``, ``L`` (global smoothness), ``mp_edge``, ``oracle_error``, ``problem``.
    """
    for r in rules:
        check_choice(r, "rules", RULES)
    s_tilde = check_int(sparsity_factor, "sparsity_factor", minimum=1) * check_int(s, "s", minimum=1)
    s_g = s_tilde + s if grad_sparsity is None else check_int(grad_sparsity, "grad_sparsity", minimum=1)
    setup = regression_setup(d, n, s, sigma, seed)
    runs = {r: _run_rule(r, d, n, s, sigma, seed, s_tilde, s_g, check_int(maxiter, "maxiter"),
                         bool(stop_at_precision)) for r in rules}
    iters = {r: res.trace.first_below("error", setup["target"]) for r, res in runs.items()}
    return {**setup, "runs": runs, "iters": iters, "s_tilde": s_tilde, "s_g": s_g}


@lru_cache(maxsize=64)
def compare_rules_logistic(d: int, *, n: int = 400, s: int = 5, norm: float = 3.0, seed: int = 0,
                           sparsity_factor: int = 1, maxiter: int = 1500, eta_max: float = 50.0,
                           factor: float = 2.0) -> dict:
    """The logistic variant: Sparse Polyak and Polyak on sparse logistic regression (stopping at
    the target). f_hat is the oracle logistic fit's loss; the target error is ``factor`` times
    the oracle's own error ||theta_orc - theta*||, floored at 0.1 * ||theta*||. eta_max caps the
    early steps, where the gap is large (the card's pitfall). The default s~ = s (sparsity_factor
    1) is deliberate: with s~ = 2s the logistic loss of a 2s-sparse iterate reaches f_hat while its
    coefficients are still shrunk, the gap closes and the run stops far from theta*."""
    rng = np.random.default_rng(check_int(seed, "seed"))
    prob = make_sparse_logistic(n, d, s, norm, rng)
    theta_orc, f_hat = oracle_fit(prob)
    oracle_error = float(np.linalg.norm(theta_orc - prob.theta_star))
    target = max(factor * oracle_error, 0.1 * norm)
    s_tilde = sparsity_factor * s
    runs = {r: iht(prob.fun, np.zeros(d), prob.jac, step=r, f_hat=f_hat, sparsity=s_tilde,
                   grad_sparsity=s_tilde + s, eta_max=eta_max, theta_star=prob.theta_star,
                   tol=target, maxiter=maxiter)
            for r in ("sparse_polyak", "polyak")}
    iters = {r: res.trace.first_below("error", target) for r, res in runs.items()}
    return {"runs": runs, "iters": iters, "target": target, "oracle_error": oracle_error, "f_hat": f_hat}


# --------------------------------------------------------------------------- claims

CLAIM_DIMS = (500, 2000, 8000)


@claim("02", "Sparse Polyak's iteration count to statistical precision does not grow with d; Polyak's does",
       expect="n=200, d in {500, 2000, 8000}, median of seeds: Sparse Polyak max/min <= 3; "
              "Polyak / Sparse Polyak >= 10 at d=8000; log-log slope of Polyak iterations in d >= 0.6",
       name="rate_invariance")
def claim_rate_invariance(fast: bool = False) -> Measured:
    seeds = (0, 1) if fast else (0, 1, 2)
    cap = 3000
    med = {}
    for rule in ("sparse_polyak", "polyak"):
        med[rule] = []
        for d in CLAIM_DIMS:
            counts = []
            for seed in seeds:
                it = compare_rules(d, seed=seed, maxiter=cap, stop_at_precision=True, rules=(rule,))["iters"][rule]
                counts.append(cap if it is None else it)  # a lower bound when capped
            med[rule].append(float(np.median(counts)))
    sp, po = np.array(med["sparse_polyak"]), np.array(med["polyak"])
    sp_spread = float(sp.max() / max(sp.min(), 1.0))
    ratio = float(po[-1] / max(sp[-1], 1.0))
    slope = loglog_slope(CLAIM_DIMS, np.maximum(po, 1.0))
    values = {f"sparse_polyak_d{d}": v for d, v in zip(CLAIM_DIMS, sp)}
    values.update({f"polyak_d{d}": v for d, v in zip(CLAIM_DIMS, po)})
    values.update(sparse_polyak_spread=sp_spread, polyak_ratio_d8000=ratio, polyak_slope=slope)
    holds = sp_spread <= 3.0 and ratio >= 10.0 and slope >= 0.6
    return Measured(values, holds=holds,
                    summary=f"Sparse Polyak {sp.astype(int).tolist()}, Polyak {po.astype(int).tolist()} "
                            f"iterations; spread {sp_spread:.2f}, ratio {ratio:.1f}, slope {slope:.2f}",
                    details=med)


# --------------------------------------------------------------------------- figures and explorers

N_FIG = 200
#: The d/n grid of the dimension slider (n = 200, so d = 100 ... 8000; d = 500, 2000, 8000 are the claim's).
D_OVER_N = (0.5, 1.0, 2.5, 5.0, 10.0, 40.0)
#: The s_g grid of the threshold slider (d = 2000, s = 5, s~ = 10: s_g = s ... d).
SG_GRID = (5, 10, 15, 30, 60, 125, 250, 500, 1000, 2000)
SG_D = 2000
MAX_POINTS = 300


def _line(trace: Trace, y: str, name: str, color: str, **kw) -> go.Scatter:
    keep = thin_indices(len(trace), MAX_POINTS)
    x, v = trace.iteration[keep], trace[y][keep]
    return go.Scatter(x=x, y=v, mode="lines", name=name, line=dict(color=color, width=2.4, **kw))


def error_traces(runs: dict[str, Result], target: float, t_max: float) -> list[go.Scatter]:
    """||theta_t - theta*|| against t for each rule, and the statistical-precision line."""
    out = [_line(res.trace, "error", RULE_NAMES[r], color_for(RULES.index(r))) for r, res in runs.items()]
    out.append(go.Scatter(x=[0, t_max], y=[target, target], mode="lines", name="statistical precision",
                          line=dict(color="#555", dash="dot", width=1.5)))
    return out


@lru_cache(maxsize=None)
def d_sweep(seed: int = 0) -> dict:
    """Iterations to precision and curvatures over the D_OVER_N grid (n = 200; the claim's runs)."""
    rows = {k: [] for k in ("d", "L", "mp_edge", "restricted_L", "polyak_curvature", "sparse_curvature")}
    iters = {r: [] for r in RULES}
    for ratio in D_OVER_N:
        d = int(round(ratio * N_FIG))
        ex = compare_rules(d, seed=seed, maxiter=3000, stop_at_precision=True)
        rows["d"].append(d)
        rows["L"].append(ex["L"])
        rows["mp_edge"].append(ex["mp_edge"])
        rows["restricted_L"].append(restricted_smoothness(ex["problem"].X, 2 * ex["s_tilde"], rng=seed))
        rows["polyak_curvature"].append(float(np.nanmedian(ex["runs"]["polyak"].trace["curvature"])))
        rows["sparse_curvature"].append(float(np.nanmedian(ex["runs"]["sparse_polyak"].trace["curvature"])))
        for r in RULES:
            iters[r].append(ex["iters"][r])
    return {**{k: np.array(v, dtype=float) for k, v in rows.items()}, "iters": iters}


@lru_cache(maxsize=None)
def _d_step(ratio: float) -> SliderStep:
    sweep = d_sweep()
    d = int(round(ratio * N_FIG))
    ex = compare_rules(d, seed=0, maxiter=3000, stop_at_precision=True)
    t_max = max(len(r.trace) for r in compare_rules(int(D_OVER_N[-1] * N_FIG), seed=0, maxiter=3000,
                                                    stop_at_precision=True)["runs"].values())
    traces = error_traces(ex["runs"], ex["target"], t_max)
    x = np.array(D_OVER_N)
    right = [("global L = lambda_max(X^T X/n)", sweep["L"], "#444", "solid", "markers"),
             ("Marchenko-Pastur edge (1+sqrt(d/n))^2", (1 + np.sqrt(x)) ** 2, "#999", "dash", "lines"),
             ("Polyak's implicit curvature", sweep["polyak_curvature"], color_for(1), "solid", "lines+markers"),
             ("Sparse Polyak's implicit curvature", sweep["sparse_curvature"], color_for(0), "solid", "lines+markers"),
             ("restricted L_s (random supports)", sweep["restricted_L"], "#2ca02c", "dot", "lines+markers")]
    for name, y, color, dash, mode in right:
        traces.append(go.Scatter(x=x, y=y, mode=mode, name=name, xaxis="x2", yaxis="y2",
                                 line=dict(color=color, dash=dash, width=2), marker=dict(size=7),
                                 showlegend=True))
    traces.append(go.Scatter(x=[ratio, ratio], y=[0.5, 200], mode="lines", name="current d/n", xaxis="x2",
                             yaxis="y2", line=dict(color="#d62728", width=1, dash="dot"), showlegend=False))
    return SliderStep(label=f"{ratio:g}", traces=traces)


def _style_d_figure(fig: go.Figure) -> go.Figure:
    t_max = max(len(r.trace) for r in compare_rules(int(D_OVER_N[-1] * N_FIG), seed=0, maxiter=3000,
                                                    stop_at_precision=True)["runs"].values())
    fig.update_layout(
        xaxis=dict(domain=[0, 0.5], title_text="iteration t", range=[0, t_max]),
        yaxis=dict(type="log", title_text="error ||theta_t - theta*||", range=[-1.0, 0.45]),
        xaxis2=dict(domain=[0.62, 1], type="log", title_text="d / n", anchor="y2", showline=True,
                    linecolor="#888", mirror=True),
        yaxis2=dict(type="log", title_text="curvature (eigenvalue scale)", anchor="x2", range=[0, 2.1],
                    showline=True, linecolor="#888", mirror=True),
        legend=dict(font=dict(size=11)), margin=dict(t=130),
    )
    return fig


@lru_cache(maxsize=None)
def _explorer_layout(which: str) -> dict:
    """The live explorers' layout, styled once (restyling per move would cost ~50 ms)."""
    if which == "d":
        return _style_d_figure(base_layout(go.Figure(), height=560)).layout.to_plotly_json()
    return _style_sg_figure(base_layout(go.Figure(), height=520)).layout.to_plotly_json()


def d_slider_figure() -> go.Figure:
    """Static twin of :data:`EXPLORER_DIMENSION`: one frame per d/n on the D_OVER_N grid."""
    steps = [_d_step(r) for r in D_OVER_N]
    fig = slider_figure(steps, slider_label="d / n (n = 200)", active=D_OVER_N.index(10.0), fixed_axes=False,
                        height=560)
    return _style_d_figure(fig)


def d_explorer_figure(d_over_n: float = 10.0) -> go.Figure:
    """Live twin: the same traces for one d/n."""
    if d_over_n not in D_OVER_N:
        raise ValueError(f"d_over_n must be one of {D_OVER_N}, got {d_over_n!r}")
    return go.Figure(data=_d_step(d_over_n).traces, layout=_explorer_layout("d"))


@lru_cache(maxsize=None)
def threshold_run(s_g: int, maxiter: int = 120) -> dict:
    """Sparse Polyak with gradient threshold s_g at d = SG_D (seed 0), run for maxiter iterations."""
    return compare_rules(SG_D, seed=0, grad_sparsity=check_int(s_g, "s_g", minimum=1),
                         rules=("sparse_polyak",), maxiter=maxiter)


@lru_cache(maxsize=None)
def _sg_step(s_g: int) -> SliderStep:
    ex = threshold_run(s_g)
    ref_sp, ref_po = threshold_run(15), threshold_run(SG_D)
    traces = [
        _line(ref_po["runs"]["sparse_polyak"].trace, "error", "Polyak (s_g = d)", "#bbb", dash="dash"),
        _line(ref_sp["runs"]["sparse_polyak"].trace, "error", "Sparse Polyak (s_g = s~ + s = 15)", "#9ecae1",
              dash="dash"),
        _line(ex["runs"]["sparse_polyak"].trace, "error", "current s_g", color_for(0)),
        go.Scatter(x=[0, 120], y=[ex["target"]] * 2, mode="lines", name="statistical precision",
                   line=dict(color="#555", dash="dot", width=1.5)),
    ]
    its = [threshold_run(k)["iters"]["sparse_polyak"] for k in SG_GRID]
    floors = [float(np.min(threshold_run(k)["runs"]["sparse_polyak"].trace["error"])) for k in SG_GRID]
    traces += [
        go.Scatter(x=list(SG_GRID), y=[np.nan if i is None else i for i in its], mode="lines+markers",
                   name="iterations to precision", xaxis="x2", yaxis="y2", line=dict(color=color_for(0))),
        go.Scatter(x=list(SG_GRID), y=floors, mode="lines+markers", name="lowest error reached (right axis)",
                   xaxis="x2", yaxis="y3", line=dict(color=color_for(4), dash="dot")),
        go.Scatter(x=[s_g, s_g], y=[1, 1000], mode="lines", xaxis="x2", yaxis="y2", showlegend=False,
                   name="current s_g", line=dict(color="#d62728", width=1, dash="dot")),
    ]
    return SliderStep(label=str(s_g), traces=traces)


def _style_sg_figure(fig: go.Figure) -> go.Figure:
    fig.update_layout(
        xaxis=dict(domain=[0, 0.48], title_text="iteration t", range=[0, 120]),
        yaxis=dict(type="log", title_text="error ||theta_t - theta*||", range=[-0.75, 0.45]),
        xaxis2=dict(domain=[0.6, 0.92], type="log", title_text="gradient threshold s_g", anchor="y2",
                    showline=True, linecolor="#888", mirror=True),
        yaxis2=dict(type="log", title_text="iterations to precision", anchor="x2", range=[0, 2.6]),
        yaxis3=dict(title_text="lowest error", overlaying="y2", side="right", anchor="x2", range=[0.2, 0.45],
                    showgrid=False),
        legend=dict(font=dict(size=11)), margin=dict(t=110, r=60),
    )
    return fig


def threshold_slider_figure() -> go.Figure:
    """Static twin of :data:`EXPLORER_THRESHOLD`: one frame per s_g on SG_GRID."""
    steps = [_sg_step(k) for k in SG_GRID]
    fig = slider_figure(steps, slider_label="gradient threshold s_g (d = 2000)", active=SG_GRID.index(15),
                        fixed_axes=False, height=520)
    return _style_sg_figure(fig)


def threshold_explorer_figure(s_g: int = 15) -> go.Figure:
    """Live twin of the threshold slider."""
    if s_g not in SG_GRID:
        raise ValueError(f"s_g must be one of {SG_GRID}, got {s_g!r}")
    return go.Figure(data=_sg_step(s_g).traces, layout=_explorer_layout("sg"))


def watch_figures(d: int = 2000, maxiter: int = 250) -> tuple[go.Figure, go.Figure]:
    """The 'Watch it run' figures at one d: errors with phases, and the step sizes eta_t."""
    ex = compare_rules(d, seed=0, maxiter=maxiter)
    runs, it = ex["runs"], ex["iters"]
    fig = go.Figure(error_traces(runs, ex["target"], maxiter))
    t_sp, t_po = it["sparse_polyak"] or 0, it["polyak"] or maxiter
    fig.update_layout(**phase_layout([Phase(0, t_sp, "A"),
                                      Phase(t_sp, t_po, "B: Polyak and 1/L still above the target"),
                                      Phase(t_po, maxiter, "C: all below the target")]))
    base_layout(fig, xaxis_title="iteration t", yaxis_title="error ||theta_t - theta*||", logy=True, height=450)
    steps = go.Figure([_line(res.trace, "step_size", RULE_NAMES[r], color_for(RULES.index(r)))
                       for r, res in runs.items()])
    L_s = restricted_smoothness(ex["problem"].X, 2 * ex["s_tilde"], rng=0)
    for y, name, color in ((1 / (2 * ex["L"]), "1/(2L), global", "#444"),
                           (1 / (2 * L_s), "1/(2 L_s), restricted", "#2ca02c")):
        steps.add_trace(go.Scatter(x=[0, maxiter], y=[y, y], mode="lines", name=name,
                                   line=dict(color=color, dash="dot", width=1.5)))
    base_layout(steps, xaxis_title="iteration t", yaxis_title="step size eta_t", logy=True, height=420)
    return fig, steps


EXPLORER_DIMENSION = Explorer(
    "02", "dimension", d_explorer_figure,
    {"d_over_n": Slider("d / n (n = 200)", list(D_OVER_N), 10.0)},
    description="iterations to statistical precision and the curvature each rule sees, as d grows")
EXPLORER_THRESHOLD = Explorer(
    "02", "threshold", threshold_explorer_figure,
    {"s_g": Slider("gradient threshold s_g", list(SG_GRID), 15, fmt="{:d}")},
    description="from Sparse Polyak (small s_g) to Polyak (s_g = d)")
