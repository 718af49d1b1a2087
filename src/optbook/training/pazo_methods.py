"""Chapter 16: PaZO, preconditioned zeroth-order optimization (NeurIPS 2025): the methods.

Zeroth-order (ZO) methods train from function values only: two forward passes along a random
direction give a gradient estimate (SPSA, the engine of MeZO). On an ill-conditioned loss that
estimate is very noisy. PaZO preconditions the *perturbation*: PSPSA draws it as H^{-alpha} u,
and the paper shows that alpha = 1/2 is the order that gives the ideal rate. The practical PaZO
replaces the unknown H by a moving average of a diagonal Hessian estimate built from three
forward passes per step, and accelerates the update with momentum (our reading, see :func:`pazo`).

What is here (numpy, ``scipy``-shaped, and ``torch.optim``):

* :func:`pspsa` - the theoretical PaZO (PSPSA with an oracle H and order alpha).
* :func:`pazo` - the practical PaZO (diagonal curvature EMA, three evaluations per step, momentum);
  :func:`hizoo` is the same update without momentum (HiZOO, Zhao et al. 2024).
* :func:`zo_sgd` (MeZO's update, with optional momentum) and :func:`zo_adam` - the baselines.
* :class:`MeZO`, :class:`PaZO`, :class:`HiZOO`, :class:`ZOAdam` - the same methods as
  ``torch.optim.Optimizer`` subclasses that take a closure returning the loss and use forward
  passes only, regenerating the random direction from a seed (the MeZO memory trick).
* Exact expectations on quadratics (:func:`one_step_expected_objective`,
  :func:`expected_objective`, :func:`expected_iterations`).

The experiments, claims and figures of the chapter are in :mod:`optbook.training.pazo_chapter`.
The practical estimator and every default are reconstructions (the card in
``shared/papers/16-pazo.md`` explains which parts are verified).
"""
from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

import numpy as np
import torch

from ..core import (
    Result,
    RngLike,
    Trace,
    as_rng,
    check_in_range,
    check_int,
    check_positive,
    check_spd,
    check_vector,
)

Fun = Callable[[np.ndarray], float]

#: Stop a run whose objective grew by this factor over f(x0): the step is unstable.
DIVERGENCE_FACTOR = 1e12


# --------------------------------------------------------------------------- estimators


def preconditioner(H: np.ndarray, alpha: float) -> np.ndarray:
    """P = H^{-alpha} for a symmetric positive-definite H (the paper's preconditioner of order
    alpha; "order -1/2" in the abstract is P = H^{-1/2})."""
    H = check_spd(H, "H")
    alpha = check_in_range(alpha, "alpha", -2.0, 2.0, closed=(True, True))
    w, V = np.linalg.eigh(H)
    return (V * w ** (-alpha)) @ V.T


def spsa_estimate(fun: Fun, x: np.ndarray, v: np.ndarray, eps: float) -> tuple[np.ndarray, float, float]:
    """Two-point (central-difference) SPSA estimate along the direction v.

    Returns ``(g_hat, f_plus, f_minus)`` with g_hat = (f(x + eps v) - f(x - eps v)) / (2 eps) * v.
    With v = P u this is the PSPSA estimator; its mean on a quadratic is P P^T grad f.
    """
    x = check_vector(x, "x")
    v = check_vector(v, "v", x.size)
    eps = check_positive(eps, "eps")
    fp, fm = float(fun(x + eps * v)), float(fun(x - eps * v))
    return (fp - fm) / (2.0 * eps) * v, fp, fm


def diagonal_hessian_estimate(f0: float, fp: float, fm: float, u: np.ndarray, D: np.ndarray,
                              eps: float) -> np.ndarray:
    """HiZOO-style diagonal curvature estimate from the three values f(x), f(x +- eps p),
    p = D^{-1/2} u (the "three forward passes" of practical PaZO):

        h_i = (f+ + f- - 2 f0) / (2 eps^2) * (u_i^2 - 1) * D_i,

    unbiased for H_ii on a quadratic, for any fixed positive D.
    """
    u = check_vector(u, "u")
    D = check_vector(D, "D", u.size)
    if np.any(D <= 0):
        raise ValueError("D must be strictly positive")
    eps = check_positive(eps, "eps")
    for name, val in (("f0", f0), ("fp", fp), ("fm", fm)):
        if not np.isfinite(val):
            raise ValueError(f"{name} must be finite, got {val}")
    return (fp + fm - 2.0 * f0) / (2.0 * eps * eps) * (u * u - 1.0) * D


# --------------------------------------------------------------------------- numpy methods


def _common(x0, eps, eta, momentum, f_target, maxiter, callback=None):
    x = check_vector(x0, "x0").copy()
    eps = check_positive(eps, "eps")
    if eta is not None:
        eta = check_positive(eta, "eta")
    momentum = check_in_range(momentum, "momentum", 0.0, 1.0, closed=(True, False))
    if callback is not None and not callable(callback):
        raise ValueError("callback must be callable")
    if f_target is not None and not (isinstance(f_target, (int, float)) and np.isfinite(f_target)):
        raise ValueError(f"f_target must be a finite number or None, got {f_target!r}")
    maxiter = check_int(maxiter, "maxiter", minimum=0)
    return x, eps, eta, momentum, f_target, maxiter


def _first_value(fun: Fun, x: np.ndarray) -> float:
    f = float(fun(x))
    if not np.isfinite(f):
        raise ValueError("fun must be finite at x0")
    return f


def _run(method: str, fun: Fun, x: np.ndarray, step: Callable, *, f_target, maxiter, evals_per_step,
         monitor_counts: bool, eta: float, meta: dict, callback=None) -> Result:
    """Shared loop: record f(x_t), stop on f_target, divergence or maxiter.

    ``step(x, f) -> x_next`` performs one update. When ``monitor_counts`` the value f(x_t) is one
    of the method's own evaluations (practical PaZO needs it anyway); otherwise it is a free
    monitoring value, not charged to ``nfev``.
    """
    trace = Trace(method, meta=meta)
    f = _first_value(fun, x)
    f0 = f
    nfev = 1 if monitor_counts else 0
    message, success = "maximum number of iterations reached", False
    for t in range(maxiter + 1):
        trace.record(objective=f, step_size=eta, fevals=nfev)
        if callback is not None:
            callback(np.array(x))
        if f_target is not None and f <= f_target:
            message, success = "target objective reached", True
            break
        if not np.isfinite(f) or f > DIVERGENCE_FACTOR * max(abs(f0), 1e-300):
            message = "diverged: the objective blew up (step size too large for this estimator)"
            break
        if t == maxiter:
            break
        x = step(x, f)
        nfev += evals_per_step
        f = float(fun(x))
    return Result(x=x, fun=f, nit=len(trace) - 1, nfev=nfev, success=success, message=message,
                  trace=trace)


def pspsa_step_size(H: np.ndarray, alpha: float) -> float:
    """The step eta = 1 / (tr B + 2 lambda_max(B)), B = P H P = H^{1 - 2 alpha}: the largest step
    for which our one-step bound guarantees descent in expectation (for alpha = 1/2, 1/(d + 2))."""
    b = _b_eigs(np.linalg.eigvalsh(check_spd(H, "H")), alpha)
    return float(1.0 / (b.sum() + 2.0 * b.max()))


def contraction_bound(H: np.ndarray, alpha: float) -> float:
    """rho(alpha) = 1 - lambda_min(B) / (tr B + 2 lambda_max(B)) with B = H^{1 - 2 alpha}: the
    expected per-step contraction of f guaranteed at the step :func:`pspsa_step_size`. Equals
    1 - 1/(d + 2) at alpha = 1/2, and is larger for every other alpha unless H is a multiple of I."""
    b = _b_eigs(np.linalg.eigvalsh(check_spd(H, "H")), alpha)
    return float(1.0 - b.min() / (b.sum() + 2.0 * b.max()))


def _b_eigs(h_eigs: np.ndarray, alpha: float) -> np.ndarray:
    alpha = check_in_range(alpha, "alpha", -2.0, 2.0, closed=(True, True))
    return h_eigs ** (1.0 - 2.0 * alpha)


def pspsa(
    fun: Fun,
    x0: np.ndarray,
    H: np.ndarray,
    *,
    alpha: float = 0.5,
    eps: float = 1e-4,
    eta: float | None = None,
    momentum: float = 0.0,
    f_target: float | None = None,
    maxiter: int = 10000,
    rng: RngLike = None,
    callback: Callable[[np.ndarray], None] | None = None,
    method_name: str | None = None,
) -> Result:
    """Theoretical PaZO: preconditioned SPSA with an oracle preconditioner P = H^{-alpha}.

    Each step draws u ~ N(0, I), forms v = P u, the PSPSA estimate
    g_hat = (f(x + eps v) - f(x - eps v)) / (2 eps) v (two evaluations), and moves
    m <- momentum m + g_hat, x <- x - eta m. On a quadratic E g_hat = H^{-2 alpha} grad f, so
    alpha = 1/2 steps along the Newton direction on average and whitens the noise.

    Parameters
    ----------
    fun : callable
        Objective f (values only).
    x0 : array
        Start.
    H : array
        Symmetric positive-definite curvature matrix (the oracle; the Hessian on a quadratic).
    alpha : float
        Order of the preconditioner, in [-2, 2]; the paper's optimum is 1/2.
    eps : float
        Smoothing (finite-difference) radius.
    eta : float, optional
        Step size; default :func:`pspsa_step_size` times (1 - momentum).
    momentum : float
        Heavy-ball coefficient in [0, 1); 0 is plain PSPSA. The paper's "acceleration" is not
        specified in the sources we had: momentum is our reconstruction.
    f_target : float, optional
        Stop once f(x_t) <= f_target (f(x_t) is monitored, not charged to ``nfev``).
    maxiter : int
        Maximum number of steps.
    rng : Generator, int or None
        Source of the directions u.
    callback : callable, optional
        Called with a copy of every iterate x_t.

    Returns
    -------
    Result
        ``x, fun, nit, nfev`` (2 per step), ``success, message, trace``; the trace has
        ``objective``, ``step_size`` and ``fevals``.
    """
    x, eps, eta, momentum, f_target, maxiter = _common(x0, eps, eta, momentum, f_target, maxiter, callback)
    H = check_spd(H, "H", x.size)
    alpha = check_in_range(alpha, "alpha", -2.0, 2.0, closed=(True, True))
    gen = as_rng(rng)
    P = preconditioner(H, alpha)
    if eta is None:
        eta = pspsa_step_size(H, alpha) * (1.0 - momentum)
    m = np.zeros_like(x)

    def step(x, f):
        nonlocal m
        v = P @ gen.standard_normal(x.size)
        g, _, _ = spsa_estimate(fun, x, v, eps)
        m = momentum * m + g
        return x - eta * m

    name = method_name or f"PSPSA (alpha = {alpha:g})"
    return _run(name, fun, x, step, f_target=f_target, maxiter=maxiter, evals_per_step=2,
                monitor_counts=False, eta=eta, callback=callback, meta=dict(alpha=alpha, eps=eps, momentum=momentum))


def zo_sgd(
    fun: Fun,
    x0: np.ndarray,
    *,
    eta: float,
    eps: float = 1e-4,
    momentum: float = 0.0,
    f_target: float | None = None,
    maxiter: int = 10000,
    rng: RngLike = None,
    callback: Callable[[np.ndarray], None] | None = None,
    method_name: str = "ZO-SGD (MeZO)",
) -> Result:
    """ZO-SGD, the update of MeZO: x <- x - eta (f(x + eps u) - f(x - eps u)) / (2 eps) u with
    u ~ N(0, I); with ``momentum`` > 0, heavy ball on that estimate. Two evaluations per step.
    Same arguments and result as :func:`pspsa` (it is PSPSA with P = I)."""
    x, eps, eta, momentum, f_target, maxiter = _common(x0, eps, eta, momentum, f_target, maxiter, callback)
    if eta is None:
        raise ValueError("eta must be given")
    gen = as_rng(rng)
    m = np.zeros_like(x)

    def step(x, f):
        nonlocal m
        g, _, _ = spsa_estimate(fun, x, gen.standard_normal(x.size), eps)
        m = momentum * m + g
        return x - eta * m

    return _run(method_name, fun, x, step, f_target=f_target, maxiter=maxiter, evals_per_step=2,
                monitor_counts=False, eta=eta, callback=callback, meta=dict(eps=eps, momentum=momentum))


def zo_adam(
    fun: Fun,
    x0: np.ndarray,
    *,
    eta: float,
    eps: float = 1e-4,
    betas: tuple[float, float] = (0.9, 0.999),
    adam_eps: float = 1e-8,
    f_target: float | None = None,
    maxiter: int = 10000,
    rng: RngLike = None,
    callback: Callable[[np.ndarray], None] | None = None,
    method_name: str = "ZO-Adam",
) -> Result:
    """Adam applied to the SPSA estimate g_hat (two evaluations per step):
    m <- b1 m + (1 - b1) g, v <- b2 v + (1 - b2) g^2, x <- x - eta m_hat / (sqrt(v_hat) + adam_eps),
    with the usual bias corrections m_hat = m / (1 - b1^t), v_hat = v / (1 - b2^t)."""
    x, eps, eta, _, f_target, maxiter = _common(x0, eps, eta, 0.0, f_target, maxiter, callback)
    if eta is None:
        raise ValueError("eta must be given")
    if len(betas) != 2:
        raise ValueError(f"betas must be a pair, got {betas!r}")
    b1 = check_in_range(betas[0], "betas[0]", 0.0, 1.0, closed=(True, False))
    b2 = check_in_range(betas[1], "betas[1]", 0.0, 1.0, closed=(True, False))
    adam_eps = check_positive(adam_eps, "adam_eps")
    gen = as_rng(rng)
    m, v, t = np.zeros_like(x), np.zeros_like(x), 0

    def step(x, f):
        nonlocal m, v, t
        t += 1
        g, _, _ = spsa_estimate(fun, x, gen.standard_normal(x.size), eps)
        m = b1 * m + (1 - b1) * g
        v = b2 * v + (1 - b2) * g * g
        return x - eta * (m / (1 - b1 ** t)) / (np.sqrt(v / (1 - b2 ** t)) + adam_eps)

    return _run(method_name, fun, x, step, f_target=f_target, maxiter=maxiter, evals_per_step=2,
                monitor_counts=False, eta=eta, callback=callback, meta=dict(eps=eps, betas=(b1, b2)))


def pazo(
    fun: Fun,
    x0: np.ndarray,
    *,
    eta: float,
    eps: float = 1e-4,
    beta: float = 0.03,
    D0: float | np.ndarray = 1.0,
    momentum: float = 0.9,
    weight_decay: float = 0.0,
    f_target: float | None = None,
    maxiter: int = 10000,
    rng: RngLike = None,
    callback: Callable[[np.ndarray], None] | None = None,
    method_name: str = "PaZO",
) -> Result:
    """Practical PaZO (our reconstruction): PSPSA of order 1/2 with a learned diagonal curvature,
    accelerated by momentum.

    State: D > 0, a moving average of |diag H| estimates. Each step, with u ~ N(0, I) and
    p = D^{-1/2} u, evaluates f0 = f(x), f+ = f(x + eps p), f- = f(x - eps p) (three evaluations)
    and sets

        g_hat = (f+ - f-) / (2 eps) p                          (PSPSA estimate with P = D^{-1/2})
        h_hat = (f+ + f- - 2 f0) / (2 eps^2) (u^2 - 1) D       (unbiased for diag H on quadratics)
        D <- (1 - beta) D + beta |h_hat|                        (absolute value inside the EMA)
        m <- momentum m + g_hat;  x <- x - eta (m + weight_decay x).

    Without momentum this is HiZOO's update (:func:`hizoo`). The paper calls PaZO "accelerated" and
    says its practical version uses "a diagonal Hessian estimate and moving average technique";
    HiZOO already has both for the curvature, so we read the acceleration as a moving average of
    the preconditioned gradient estimate: heavy-ball momentum, as ``torch.optim.SGD`` writes it
    (an EMA m <- mu m + (1 - mu) g_hat is the same method with the step scaled by 1 - mu). This
    reading is a reconstruction. D stays strictly positive because beta < 1.

    Parameters
    ----------
    eta : float
        Step size; with an accurate D, 1/(d + 2) is the PSPSA step of order 1/2.
    beta : float
        EMA rate in [0, 1); 0 freezes D at D0 (then D0 = 1 gives ZO-SGD with one extra evaluation).
    D0 : float or array
        Initial curvature, positive; start at (or above) the largest curvature, since a small D0
        means huge first steps.
    momentum : float
        Heavy-ball coefficient in [0, 1) (the acceleration); 0 gives HiZOO.
    weight_decay : float
        Decoupled L2 decay >= 0.

    Returns
    -------
    Result
        As :func:`pspsa`, with ``nfev`` = 3 per step (+1 for f(x0)) and the final curvature ``D``.
    """
    x, eps, eta, momentum, f_target, maxiter = _common(x0, eps, eta, momentum, f_target, maxiter, callback)
    if eta is None:
        raise ValueError("eta must be given")
    beta = check_in_range(beta, "beta", 0.0, 1.0, closed=(True, False))
    weight_decay = check_positive(weight_decay, "weight_decay", allow_zero=True)
    D = np.full(x.size, check_positive(D0, "D0")) if np.isscalar(D0) else check_vector(D0, "D0", x.size).copy()
    if np.any(D <= 0):
        raise ValueError("D0 must be strictly positive")
    gen = as_rng(rng)
    m = np.zeros_like(x)

    def step(x, f0):
        nonlocal m, D
        u = gen.standard_normal(x.size)
        p = u / np.sqrt(D)
        g, fp, fm = spsa_estimate(fun, x, p, eps)
        h = diagonal_hessian_estimate(f0, fp, fm, u, D, eps)
        D = (1.0 - beta) * D + beta * np.abs(h)
        m = momentum * m + g
        return x - eta * (m + weight_decay * x)

    res = _run(method_name, fun, x, step, f_target=f_target, maxiter=maxiter, evals_per_step=3,
               monitor_counts=True, eta=eta, callback=callback,
               meta=dict(eps=eps, beta=beta, momentum=momentum, weight_decay=weight_decay))
    res["D"] = D
    return res


def hizoo(fun: Fun, x0: np.ndarray, *, eta: float, eps: float = 1e-4, beta: float = 0.03,
          D0: float | np.ndarray = 1.0, weight_decay: float = 0.0, f_target: float | None = None,
          maxiter: int = 10000, rng: RngLike = None, callback: Callable[[np.ndarray], None] | None = None,
          method_name: str = "HiZOO") -> Result:
    """HiZOO (Zhao et al., 2024): the diagonal-Hessian zeroth-order update, i.e. :func:`pazo` with
    momentum 0 (perturbation Sigma^{1/2} u with Sigma^{-1} = D, the EMA of |diag H| estimates)."""
    return pazo(fun, x0, eta=eta, eps=eps, beta=beta, D0=D0, momentum=0.0, weight_decay=weight_decay,
                f_target=f_target, maxiter=maxiter, rng=rng, callback=callback, method_name=method_name)


# --------------------------------------------------------------------------- exact expectations


def one_step_expected_objective(H: np.ndarray, x: np.ndarray, alpha: float, eta: float) -> float:
    """E f(x+) after one PSPSA step (no momentum) on f(x) = x^T H x / 2, with u ~ N(0, I):

        E f(x+) = f - eta s + eta^2 / 2 (s tr B + 2 a^T B a),  a = P grad f, s = |a|^2, B = P H P.

    The central difference is exact on quadratics, so eps does not enter.
    """
    H = check_spd(H, "H")
    x = check_vector(x, "x", H.shape[0])
    eta = check_positive(eta, "eta")
    P = preconditioner(H, alpha)
    a = P @ (H @ x)
    s = float(a @ a)
    B = P @ H @ P
    return float(0.5 * x @ H @ x - eta * s + 0.5 * eta ** 2 * (s * np.trace(B) + 2 * a @ B @ a))


@dataclass(frozen=True)
class _Moments:
    """Spectral form of the expected-objective recursion: E f_t = sum_k c_k mu_k^t."""

    coef: np.ndarray
    mu: np.ndarray

    def at(self, t: np.ndarray | float) -> np.ndarray:
        t = np.asarray(t, dtype=float)
        return np.sum(self.coef[:, None] * self.mu[:, None] ** t.ravel()[None, :], axis=0).reshape(t.shape)


def _moments(h_eigs: np.ndarray, y0: np.ndarray, alpha: float, eta: float) -> _Moments:
    # In H's eigenbasis, y_i = lambda_i E[x_i^2] obeys y+ = M y with the symmetric
    # M = diag(1 - 2 eta b + 2 eta^2 b^2) + eta^2 b b^T, b = eigenvalues of B; E f = sum(y) / 2.
    b = _b_eigs(h_eigs, alpha)
    M = np.diag(1.0 - 2.0 * eta * b + 2.0 * eta ** 2 * b * b) + eta ** 2 * np.outer(b, b)
    mu, V = np.linalg.eigh(M)
    return _Moments(0.5 * (V.sum(axis=0)) * (V.T @ y0), mu)


def _spectral_start(H: np.ndarray, x0: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    w, V = np.linalg.eigh(H)
    z = V.T @ x0
    return w, w * z * z


def expected_objective(H: np.ndarray, x0: np.ndarray, alpha: float, eta: float, t: Iterable[int]) -> np.ndarray:
    """Exact E f(x_t) of PSPSA (no momentum) on f = x^T H x / 2 from x0, at the iterations t."""
    H = check_spd(H, "H")
    x0 = check_vector(x0, "x0", H.shape[0])
    eta = check_positive(eta, "eta")
    t = np.asarray(list(t), dtype=float)
    if t.ndim != 1 or np.any(t < 0):
        raise ValueError("t must be a 1-D sequence of non-negative iterations")
    w, y0 = _spectral_start(H, x0)
    return _moments(w, y0, alpha, eta).at(t)


def _iterations_from_spectrum(w: np.ndarray, y0: np.ndarray, alpha: float, eta: float,
                              reduction: float, tmax: float) -> float:
    mom = _moments(w, y0, alpha, eta)
    if mom.mu.max() >= 1.0:
        return np.inf
    target = reduction * 0.5 * y0.sum()
    hi = 1.0
    while mom.at(hi) > target:
        hi *= 2.0
        if hi > tmax:
            return np.inf
    lo = hi / 2.0 if hi > 1.0 else 0.0
    while hi - lo > 1.0:  # E f_t is non-increasing at the stable steps used here: bisect
        mid = np.floor(0.5 * (lo + hi))
        lo, hi = (mid, hi) if mom.at(mid) > target else (lo, mid)
    return float(hi)


def expected_iterations(H: np.ndarray, x0: np.ndarray, alpha: float, eta: float | None = None, *,
                        reduction: float = 1e-6, tmax: float = 1e9) -> float:
    """First t with E f(x_t) <= reduction * f(x0) for PSPSA on f = x^T H x / 2 (exact; inf if the
    step is unstable or t would exceed tmax). Default step: :func:`pspsa_step_size`."""
    H = check_spd(H, "H")
    x0 = check_vector(x0, "x0", H.shape[0])
    reduction = check_in_range(reduction, "reduction", 0.0, 1.0)
    eta = pspsa_step_size(H, alpha) if eta is None else check_positive(eta, "eta")
    w, y0 = _spectral_start(H, x0)
    return _iterations_from_spectrum(w, y0, alpha, eta, reduction, tmax)


def best_fixed_step(H: np.ndarray, x0: np.ndarray, alpha: float = 0.0, *, reduction: float = 1e-6,
                    grid: int = 41) -> tuple[float, float]:
    """The fixed step that minimises :func:`expected_iterations` (searched on a log grid from 1/4
    to 16 times :func:`pspsa_step_size`). Returns ``(eta, iterations)``; alpha = 0 is ZO-SGD."""
    H = check_spd(H, "H")
    x0 = check_vector(x0, "x0", H.shape[0])
    grid = check_int(grid, "grid", minimum=3)
    w, y0 = _spectral_start(H, x0)
    eta0 = pspsa_step_size(H, alpha)
    etas = eta0 * np.geomspace(0.25, 16.0, grid)
    its = np.array([_iterations_from_spectrum(w, y0, alpha, e, reduction, 1e9) for e in etas])
    k = int(np.argmin(its))
    return float(etas[k]), float(its[k])



# --------------------------------------------------------------------------- test problems


def ill_conditioned_quadratic(d: int = 20, log10_kappa: float = 3.0, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """The card's test problem: f(x) = sum_i lambda_i x_i^2 / 2 with lambda = logspace(0,
    log10_kappa, d) shuffled, started at x0 = 1. Returns (lambda, x0)."""
    d = check_int(d, "d", minimum=1)
    log10_kappa = check_in_range(log10_kappa, "log10_kappa", 0.0, 12.0, closed=(True, True))
    seed = check_int(seed, "seed")
    lam = np.random.default_rng(seed).permutation(np.logspace(0.0, log10_kappa, d))
    return lam, np.ones(d)


def quadratic_fun(lam: np.ndarray) -> Fun:
    """f(x) = sum_i lam_i x_i^2 / 2 (diagonal quadratic; values only)."""
    lam = check_vector(lam, "lam")
    if np.any(lam <= 0):
        raise ValueError("lam must be positive")
    return lambda x: 0.5 * float(x @ (lam * x))


# --------------------------------------------------------------------------- torch optimizers


def _loss_value(closure: Callable[[], torch.Tensor | float]) -> float:
    value = closure()
    return float(value.detach()) if isinstance(value, torch.Tensor) else float(value)


def _fresh_seed() -> int:
    """A seed from the operating system's entropy (never from torch's or numpy's global RNG)."""
    return int(np.random.SeedSequence().entropy % 2 ** 62)


class _ZerothOrder(torch.optim.Optimizer):
    """Shared machinery: seeded directions, in-place perturbation, forward-pass counting.

    It behaves like a ``torch.optim`` optimizer: hyperparameters are validated per param group
    (``_check`` on the defaults merged with each group's overrides); a parameter with
    ``requires_grad=False`` (frozen) is neither perturbed nor updated; ``state_dict()`` carries
    the direction generator's state and the step and forward-pass counters, so a resume is
    bit-identical; torch's global random generator is never used.
    """

    def __init__(self, params, defaults: dict, seed: int | None):
        self._check(defaults)
        if seed is not None:
            check_int(seed, "seed", minimum=0)
        super().__init__(params, defaults)
        self._gen = torch.Generator()
        self._gen.manual_seed(_fresh_seed() if seed is None else int(seed))
        self.forward_passes = 0
        self.steps = 0

    @staticmethod
    def _check(hp: dict) -> None:
        """Validate one param group's hyperparameters (raise ValueError naming the bad one)."""
        check_positive(hp["lr"], "lr")
        check_positive(hp["eps"], "eps")
        check_positive(hp["weight_decay"], "weight_decay", allow_zero=True)

    def add_param_group(self, param_group: dict) -> None:
        self._check({**self.defaults, **{k: v for k, v in param_group.items() if k != "params"}})
        super().add_param_group(param_group)

    def state_dict(self) -> dict:
        sd = super().state_dict()
        sd["zeroth_order"] = {"generator": self._gen.get_state(), "forward_passes": self.forward_passes,
                              "steps": self.steps}
        return sd

    def load_state_dict(self, state_dict: dict) -> None:
        state_dict = dict(state_dict)
        zo = state_dict.pop("zeroth_order", None)
        if zo is None:
            raise ValueError("state_dict has no 'zeroth_order' entry (generator state and counters): "
                             "it was not saved by this optimizer")
        super().load_state_dict(state_dict)
        self._gen.set_state(zo["generator"].clone())
        self.forward_passes = int(zo["forward_passes"])
        self.steps = int(zo["steps"])

    def _active(self, group: dict) -> list[torch.Tensor]:
        return [p for p in group["params"] if p.requires_grad]

    def directions(self, seed: int) -> list[list[torch.Tensor]]:
        """The Gaussian directions u of every trainable parameter, regenerated from ``seed`` (MeZO's
        trick: nothing but the seed is stored between the perturbation and the update)."""
        gen = torch.Generator().manual_seed(int(seed))
        return [[torch.randn(p.shape, generator=gen, dtype=p.dtype).to(p.device) for p in self._active(g)]
                for g in self.param_groups]

    def _scaled(self, seed: int) -> list[list[torch.Tensor]]:
        """The perturbation p = scale * u of every trainable parameter (scale from ``_scale``)."""
        us = self.directions(seed)
        return [[self._scale(p, g) * u for p, u in zip(self._active(g), gu)] for g, gu in zip(self.param_groups, us)]

    def _scale(self, p: torch.Tensor, group: dict) -> torch.Tensor | float:
        return 1.0

    def _shift(self, ps: list[list[torch.Tensor]], factor: float) -> None:
        for g, gp in zip(self.param_groups, ps):
            for p, d in zip(self._active(g), gp):
                p.add_(d, alpha=factor * g["eps"])

    def _evaluate(self, closure, ps=None, factor: float = 0.0) -> float:
        """Forward pass at theta + factor * eps * p (restoring theta if the loss is not finite)."""
        f = _loss_value(closure)
        self.forward_passes += 1
        if not np.isfinite(f):
            if ps is not None and factor:
                self._shift(ps, -factor)
            raise ValueError(f"closure returned a non-finite loss ({f}); lower the step size or eps")
        return f

    @torch.no_grad()
    def probe(self, closure, seed: int) -> tuple[float, float]:
        """Return (f(theta + eps p), f(theta - eps p)) for the seeded direction, leaving theta as it
        was: perturb +eps, then -2 eps, then +eps back."""
        ps = self._scaled(seed)
        self._shift(ps, 1.0)
        fp = self._evaluate(closure, ps, 1.0)
        self._shift(ps, -2.0)
        fm = self._evaluate(closure, ps, -1.0)
        self._shift(ps, 1.0)
        return fp, fm

    def _next_seed(self, closure) -> int:
        if closure is None:
            raise ValueError("closure must be given: zeroth-order steps re-evaluate the loss")
        self.steps += 1
        return int(torch.randint(0, 2 ** 62, (1,), generator=self._gen))

    def _apply(self, group: dict, p: torch.Tensor, g_hat: torch.Tensor) -> None:
        """m <- momentum m + g_hat; p <- p - lr (m + weight_decay p)."""
        if group.get("momentum", 0.0):
            buf = self.state[p].setdefault("momentum_buffer", torch.zeros_like(p))
            g_hat = buf.mul_(group["momentum"]).add_(g_hat)
        if group["weight_decay"]:
            g_hat = g_hat + group["weight_decay"] * p
        p.add_(g_hat, alpha=-group["lr"])


class MeZO(_ZerothOrder):
    """MeZO / ZO-SGD as a ``torch.optim.Optimizer``: two forward passes per step, no backward.

    ``step(closure)`` draws a seed, evaluates the loss at theta +- eps u (u ~ N(0, I) regenerated
    from the seed, never stored), and updates theta <- theta - lr (f+ - f-)/(2 eps) u (plus
    optional momentum and weight decay). The closure must return the loss and must not call
    ``backward``; it is evaluated under ``torch.no_grad``. ``step`` returns (f+ + f-)/2, the loss
    at theta up to O(eps^2). ``forward_passes`` counts closure calls, ``steps`` the steps taken.
    ``seed=None`` draws a seed from the operating system.
    """

    def __init__(self, params, lr: float = 1e-3, eps: float = 1e-3, momentum: float = 0.0,
                 weight_decay: float = 0.0, seed: int | None = None):
        super().__init__(params, dict(lr=lr, eps=eps, momentum=momentum, weight_decay=weight_decay), seed)

    @staticmethod
    def _check(hp: dict) -> None:
        _ZerothOrder._check(hp)
        check_in_range(hp["momentum"], "momentum", 0.0, 1.0, closed=(True, False))

    @torch.no_grad()
    def step(self, closure):  # type: ignore[override]
        seed = self._next_seed(closure)
        fp, fm = self.probe(closure, seed)
        for group, gu in zip(self.param_groups, self.directions(seed)):
            s = (fp - fm) / (2.0 * group["eps"])
            for p, u in zip(self._active(group), gu):
                self._apply(group, p, s * u)
        return 0.5 * (fp + fm)


class PaZO(_ZerothOrder):
    """Practical PaZO as a ``torch.optim.Optimizer`` (three forward passes per step, no backward).

    Per parameter tensor it keeps ``state["D"]``, a positive moving average of |diag H| estimates,
    and with momentum ``state["momentum_buffer"]``. ``step(closure)`` evaluates f0 = f(theta) and
    f(theta +- eps p), p = D^{-1/2} u with u regenerated from a seed, then updates (see
    :func:`pazo`)

        g_hat = (f+ - f-)/(2 eps) p,   h_hat = (f+ + f- - 2 f0)/(2 eps^2) (u^2 - 1) D,
        D <- (1 - beta) D + beta |h_hat|,   m <- momentum m + g_hat,   theta <- theta - lr (m + wd theta).

    Returns f0. A non-finite loss raises ``ValueError`` with theta restored. Use float64 or a
    larger eps (>= 1e-3) in float32: the second difference f+ + f- - 2 f0 is pure round-off below.
    With ``momentum=0`` this is :class:`HiZOO`.
    """

    def __init__(self, params, lr: float = 1e-3, eps: float = 1e-3, beta: float = 0.03, D0: float = 1.0,
                 momentum: float = 0.9, weight_decay: float = 0.0, seed: int | None = None):
        super().__init__(params, dict(lr=lr, eps=eps, beta=beta, D0=D0, momentum=momentum,
                                      weight_decay=weight_decay), seed)

    @staticmethod
    def _check(hp: dict) -> None:
        _ZerothOrder._check(hp)
        check_in_range(hp["momentum"], "momentum", 0.0, 1.0, closed=(True, False))
        check_in_range(hp["beta"], "beta", 0.0, 1.0, closed=(True, False))
        check_positive(hp["D0"], "D0")

    def curvature(self, p: torch.Tensor, group: dict | None = None) -> torch.Tensor:
        """The current diagonal curvature D of parameter ``p`` (initialised to its group's D0)."""
        state = self.state[p]
        if "D" not in state:
            if group is None:
                group = next(g for g in self.param_groups if any(q is p for q in g["params"]))
            state["D"] = torch.full_like(p, group["D0"])
        return state["D"]

    def _scale(self, p: torch.Tensor, group: dict) -> torch.Tensor:
        return self.curvature(p, group).rsqrt()

    @torch.no_grad()
    def step(self, closure):  # type: ignore[override]
        seed = self._next_seed(closure)
        f0 = self._evaluate(closure)
        fp, fm = self.probe(closure, seed)
        for group, gu in zip(self.param_groups, self.directions(seed)):
            eps = group["eps"]
            s = (fp - fm) / (2.0 * eps)
            curv = (fp + fm - 2.0 * f0) / (2.0 * eps * eps)
            for p, u in zip(self._active(group), gu):
                D = self.curvature(p, group)
                g_hat = s * u * D.rsqrt()
                h_hat = curv * (u * u - 1.0) * D
                D.mul_(1.0 - group["beta"]).add_(h_hat.abs(), alpha=group["beta"])
                self._apply(group, p, g_hat)
        return f0


class HiZOO(PaZO):
    """HiZOO (Zhao et al., 2024) as a ``torch.optim.Optimizer``: :class:`PaZO` without momentum
    (a group that sets a non-zero momentum is refused)."""

    def __init__(self, params, lr: float = 1e-3, eps: float = 1e-3, beta: float = 0.03, D0: float = 1.0,
                 weight_decay: float = 0.0, seed: int | None = None):
        super().__init__(params, lr=lr, eps=eps, beta=beta, D0=D0, momentum=0.0, weight_decay=weight_decay,
                         seed=seed)

    @staticmethod
    def _check(hp: dict) -> None:
        PaZO._check(hp)
        if hp["momentum"] != 0.0:
            raise ValueError(f"momentum must be 0 for HiZOO (use PaZO for momentum), got {hp['momentum']!r}")


class ZOAdam(_ZerothOrder):
    """ZO-Adam as a ``torch.optim.Optimizer``: Adam driven by the two-point SPSA estimate
    g_hat = (f+ - f-)/(2 eps) u (two forward passes, no backward; see :func:`zo_adam`). Per
    parameter it keeps ``exp_avg``, ``exp_avg_sq`` and ``step``; ``weight_decay`` is L2 added to
    g_hat, as in ``torch.optim.Adam``. Returns (f+ + f-)/2."""

    def __init__(self, params, lr: float = 1e-3, eps: float = 1e-3, betas: tuple[float, float] = (0.9, 0.999),
                 adam_eps: float = 1e-8, weight_decay: float = 0.0, seed: int | None = None):
        super().__init__(params, dict(lr=lr, eps=eps, betas=betas, adam_eps=adam_eps, weight_decay=weight_decay),
                         seed)

    @staticmethod
    def _check(hp: dict) -> None:
        _ZerothOrder._check(hp)
        betas = hp["betas"]
        if not (isinstance(betas, (tuple, list)) and len(betas) == 2):
            raise ValueError(f"betas must be a pair, got {betas!r}")
        check_in_range(betas[0], "betas[0]", 0.0, 1.0, closed=(True, False))
        check_in_range(betas[1], "betas[1]", 0.0, 1.0, closed=(True, False))
        check_positive(hp["adam_eps"], "adam_eps")

    @torch.no_grad()
    def step(self, closure):  # type: ignore[override]
        seed = self._next_seed(closure)
        fp, fm = self.probe(closure, seed)
        for group, gu in zip(self.param_groups, self.directions(seed)):
            b1, b2 = group["betas"]
            s = (fp - fm) / (2.0 * group["eps"])
            for p, u in zip(self._active(group), gu):
                g = s * u
                if group["weight_decay"]:
                    g = g + group["weight_decay"] * p
                st = self.state[p]
                if "step" not in st:
                    st["step"], st["exp_avg"], st["exp_avg_sq"] = 0, torch.zeros_like(p), torch.zeros_like(p)
                st["step"] += 1
                st["exp_avg"].mul_(b1).add_(g, alpha=1 - b1)
                st["exp_avg_sq"].mul_(b2).addcmul_(g, g, value=1 - b2)
                denom = (st["exp_avg_sq"] / (1 - b2 ** st["step"])).sqrt_().add_(group["adam_eps"])
                p.addcdiv_(st["exp_avg"], denom, value=-group["lr"] / (1 - b1 ** st["step"]))
        return 0.5 * (fp + fm)
