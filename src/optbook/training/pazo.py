"""Chapter 16: PaZO, preconditioned zeroth-order optimization (NeurIPS 2025).

Zeroth-order (ZO) methods train from function values only: two forward passes along a random
direction give a gradient estimate (SPSA, the engine of MeZO). On an ill-conditioned loss that
estimate is very noisy. PaZO preconditions the *perturbation*: PSPSA draws it as H^{-alpha} u,
and the paper shows that alpha = 1/2 is the order that gives the ideal rate. The practical PaZO
replaces the unknown H by a moving average of a diagonal Hessian estimate built from three
forward passes per step.

What is here:

* :func:`pspsa` - the theoretical PaZO (PSPSA with an oracle H and order alpha), numpy,
  ``scipy``-shaped, with optional heavy-ball momentum (our reading of "accelerated").
* :func:`pazo` - the practical PaZO (diagonal curvature EMA, three evaluations per step).
* :func:`zo_sgd` (MeZO's update, with optional momentum) and :func:`zo_adam` - the baselines.
* :class:`PaZO` and :class:`MeZO` - the same practical methods as ``torch.optim.Optimizer``
  subclasses that take a closure returning the loss and use forward passes only, regenerating
  the random direction from a stored seed (the MeZO memory trick).
* Exact expectations on quadratics (:func:`one_step_expected_objective`,
  :func:`expected_objective`, :func:`expected_iterations`) used to draw the iterations-vs-alpha
  curve instantly and to test the Monte-Carlo runs.

The practical estimator and every default are reconstructions (the card in
``shared/papers/16-pazo.md`` explains which parts are verified): the diagonal estimate is the
HiZOO-style one, unbiased for diag H on quadratics.
"""
from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import plotly.graph_objects as go
import torch
from plotly.subplots import make_subplots

from ..claims import Measured, claim
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
from ..viz import Phase, SliderStep, base_layout, color_for, convergence_traces, phase_layout, slider_figure
from ..core.threads import one_torch_thread
from ..widgets import Explorer, Slider

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
    momentum: float = 0.0,
    weight_decay: float = 0.0,
    f_target: float | None = None,
    maxiter: int = 10000,
    rng: RngLike = None,
    callback: Callable[[np.ndarray], None] | None = None,
    method_name: str = "PaZO (practical)",
) -> Result:
    """Practical PaZO (our reconstruction): PSPSA of order 1/2 with a learned diagonal curvature.

    State: D > 0, a moving average of |diag H| estimates. Each step, with u ~ N(0, I) and
    p = D^{-1/2} u, evaluates f0 = f(x), f+ = f(x + eps p), f- = f(x - eps p) (three evaluations)
    and sets

        g_hat = (f+ - f-) / (2 eps) p                          (PSPSA estimate with P = D^{-1/2})
        h_hat = (f+ + f- - 2 f0) / (2 eps^2) (u^2 - 1) D       (unbiased for diag H on quadratics)
        D <- (1 - beta) D + beta |h_hat|                        (absolute value inside the EMA)
        m <- momentum m + g_hat;  x <- x - eta (m + weight_decay x).

    Without momentum this is HiZOO's update. D stays strictly positive because beta < 1.

    Parameters
    ----------
    eta : float
        Step size; with an accurate D, 1/(d + 2) is the PSPSA step of order 1/2.
    beta : float
        EMA rate in [0, 1); 0 freezes D at D0 (then D0 = 1 gives ZO-SGD with one extra evaluation).
    D0 : float or array
        Initial curvature, positive; start at (or above) the largest curvature, since a small D0
        means huge first steps.
    momentum, weight_decay : float
        Heavy-ball coefficient in [0, 1) and decoupled L2 decay >= 0.

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


# --------------------------------------------------------------------------- torch optimizers


def _loss_value(closure: Callable[[], torch.Tensor | float]) -> float:
    value = closure()
    f = float(value.detach()) if isinstance(value, torch.Tensor) else float(value)
    return f


class _ZerothOrder(torch.optim.Optimizer):
    """Shared machinery: seeded directions, in-place perturbation, forward-pass counting."""

    def __init__(self, params, defaults: dict, seed: int | None):
        super().__init__(params, defaults)
        if seed is not None:
            check_int(seed, "seed")
        self._gen = torch.Generator()
        self._gen.manual_seed(seed if seed is not None else int(torch.seed() % 2 ** 62))
        self.forward_passes = 0

    def directions(self, seed: int) -> list[list[torch.Tensor]]:
        """The Gaussian directions u of every parameter, regenerated from ``seed`` (MeZO's trick:
        nothing but the seed is stored between the perturbation and the update)."""
        gen = torch.Generator().manual_seed(int(seed))
        return [[torch.randn(p.shape, generator=gen, dtype=p.dtype).to(p.device) for p in g["params"]]
                for g in self.param_groups]

    def _scaled(self, seed: int) -> list[list[torch.Tensor]]:
        """The perturbation p = scale * u of every parameter (scale from ``_scale``)."""
        us = self.directions(seed)
        return [[self._scale(p) * u for p, u in zip(g["params"], gu)] for g, gu in zip(self.param_groups, us)]

    def _scale(self, p: torch.Tensor) -> torch.Tensor | float:
        return 1.0

    def _shift(self, ps: list[list[torch.Tensor]], factor: float) -> None:
        for g, gp in zip(self.param_groups, ps):
            for p, d in zip(g["params"], gp):
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

    def _next_seed(self) -> int:
        return int(torch.randint(0, 2 ** 62, (1,), generator=self._gen))

    def _apply(self, group: dict, p: torch.Tensor, g_hat: torch.Tensor) -> None:
        """m <- momentum m + g_hat; p <- p - lr (m + weight_decay p)."""
        if group["momentum"]:
            buf = self.state[p].setdefault("momentum_buffer", torch.zeros_like(p))
            g_hat = buf.mul_(group["momentum"]).add_(g_hat)
        if group["weight_decay"]:
            g_hat = g_hat + group["weight_decay"] * p
        p.add_(g_hat, alpha=-group["lr"])


def _check_group_defaults(lr, eps, momentum, weight_decay) -> None:
    check_positive(lr, "lr")
    check_positive(eps, "eps")
    check_in_range(momentum, "momentum", 0.0, 1.0, closed=(True, False))
    check_positive(weight_decay, "weight_decay", allow_zero=True)


class MeZO(_ZerothOrder):
    """MeZO / ZO-SGD as a ``torch.optim.Optimizer``: two forward passes per step, no backward.

    ``step(closure)`` draws a seed, evaluates the loss at theta +- eps u (u ~ N(0, I) regenerated
    from the seed, never stored), and updates theta <- theta - lr (f+ - f-)/(2 eps) u (plus
    optional momentum and weight decay). The closure must return the loss and must not call
    ``backward``; it is evaluated under ``torch.no_grad``. ``step`` returns (f+ + f-)/2, the loss
    at theta up to O(eps^2). ``forward_passes`` counts closure calls.
    """

    def __init__(self, params, lr: float = 1e-3, eps: float = 1e-3, momentum: float = 0.0,
                 weight_decay: float = 0.0, seed: int | None = None):
        _check_group_defaults(lr, eps, momentum, weight_decay)
        super().__init__(params, dict(lr=lr, eps=eps, momentum=momentum, weight_decay=weight_decay), seed)

    @torch.no_grad()
    def step(self, closure):  # type: ignore[override]
        if closure is None:
            raise ValueError("closure must be given: zeroth-order steps re-evaluate the loss")
        seed = self._next_seed()
        fp, fm = self.probe(closure, seed)
        us = self.directions(seed)
        for group, gu in zip(self.param_groups, us):
            s = (fp - fm) / (2.0 * group["eps"])
            for p, u in zip(group["params"], gu):
                self._apply(group, p, s * u)
        return 0.5 * (fp + fm)


class PaZO(_ZerothOrder):
    """Practical PaZO as a ``torch.optim.Optimizer`` (three forward passes per step, no backward).

    Per parameter tensor it keeps ``state["D"]``, a positive moving average of |diag H| estimates.
    ``step(closure)`` evaluates f0 = f(theta) and f(theta +- eps p), p = D^{-1/2} u with u
    regenerated from a seed, then updates (see :func:`pazo`)

        g_hat = (f+ - f-)/(2 eps) p,   h_hat = (f+ + f- - 2 f0)/(2 eps^2) (u^2 - 1) D,
        D <- (1 - beta) D + beta |h_hat|,   m <- momentum m + g_hat,   theta <- theta - lr (m + wd theta).

    Returns f0. A non-finite loss raises ``ValueError`` with theta restored. Use float64 or a
    larger eps (>= 1e-3) in float32: the second difference f+ + f- - 2 f0 is pure round-off below.
    """

    def __init__(self, params, lr: float = 1e-3, eps: float = 1e-3, beta: float = 0.03, D0: float = 1.0,
                 momentum: float = 0.0, weight_decay: float = 0.0, seed: int | None = None):
        _check_group_defaults(lr, eps, momentum, weight_decay)
        check_in_range(beta, "beta", 0.0, 1.0, closed=(True, False))
        check_positive(D0, "D0")
        super().__init__(params, dict(lr=lr, eps=eps, beta=beta, D0=D0, momentum=momentum,
                                      weight_decay=weight_decay), seed)

    def curvature(self, p: torch.Tensor) -> torch.Tensor:
        """The current diagonal curvature D of parameter ``p`` (initialised to D0 on first use)."""
        state = self.state[p]
        if "D" not in state:
            group = next(g for g in self.param_groups if any(q is p for q in g["params"]))
            state["D"] = torch.full_like(p, group["D0"])
        return state["D"]

    def _scale(self, p: torch.Tensor) -> torch.Tensor:
        return self.curvature(p).rsqrt()

    @torch.no_grad()
    def step(self, closure):  # type: ignore[override]
        if closure is None:
            raise ValueError("closure must be given: zeroth-order steps re-evaluate the loss")
        seed = self._next_seed()
        f0 = self._evaluate(closure)
        fp, fm = self.probe(closure, seed)
        us = self.directions(seed)
        for group, gu in zip(self.param_groups, us):
            eps = group["eps"]
            s = (fp - fm) / (2.0 * eps)
            curv = (fp + fm - 2.0 * f0) / (2.0 * eps * eps)
            for p, u in zip(group["params"], gu):
                D = self.curvature(p)
                g_hat = s * u * D.rsqrt()
                h_hat = curv * (u * u - 1.0) * D
                D.mul_(1.0 - group["beta"]).add_(h_hat.abs(), alpha=group["beta"])
                self._apply(group, p, g_hat)
        return f0


# --------------------------------------------------------------------------- experiments


def ill_conditioned_quadratic(d: int = 20, log10_kappa: float = 3.0, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """The card's test problem: f(x) = sum_i lambda_i x_i^2 / 2 with lambda = logspace(0,
    log10_kappa, d) shuffled, started at x0 = 1. Returns (lambda, x0)."""
    d = check_int(d, "d", minimum=1)
    log10_kappa = check_in_range(log10_kappa, "log10_kappa", 0.0, 12.0, closed=(True, True))
    lam = np.random.default_rng(seed).permutation(np.logspace(0.0, log10_kappa, d))
    return lam, np.ones(d)


def quadratic_fun(lam: np.ndarray) -> Fun:
    """f(x) = sum_i lam_i x_i^2 / 2 (diagonal quadratic; values only)."""
    lam = check_vector(lam, "lam")
    if np.any(lam <= 0):
        raise ValueError("lam must be positive")
    return lambda x: 0.5 * float(x @ (lam * x))


ALPHAS = (0.0, 0.25, 0.5, 0.75, 1.0)


def order_sweep(alphas=ALPHAS, *, d: int = 20, log10_kappa: float = 3.0, seeds=(0, 1, 2),
                reduction: float = 1e-6, eps: float = 1e-4, maxiter: int = 400000) -> dict:
    """Iterations of PSPSA (Monte Carlo, every seed) to f <= reduction f(x0) for each order alpha,
    at the step :func:`pspsa_step_size`, next to the exact expected iterations."""
    lam, x0 = ill_conditioned_quadratic(d, log10_kappa)
    H, fun = np.diag(lam), quadratic_fun(lam)
    target = reduction * fun(x0)
    runs, iters = {}, {}
    for a in alphas:
        its = []
        for s in seeds:
            res = pspsa(fun, x0, H, alpha=a, eps=eps, f_target=target, maxiter=maxiter, rng=s)
            its.append(res.nit if res.success else np.inf)
            runs.setdefault(a, res)
        iters[a] = its
    expected = {a: expected_iterations(H, x0, a, reduction=reduction) for a in alphas}
    return {"alphas": tuple(alphas), "iters": iters, "median": {a: float(np.median(v)) for a, v in iters.items()},
            "expected": expected, "runs": runs, "lam": lam, "x0": x0}


STEP_MULTIPLIERS = (1.0, 2.0, 4.0, 8.0, 16.0)


def _median_evals(make: Callable[[float, int], Result], eta: float, seeds) -> float:
    return float(np.median([(r.nfev if r.success else np.inf) for r in (make(eta, s) for s in seeds)]))


def tuned_step(make: Callable[[float, int], Result], eta0: float, seeds, multipliers=STEP_MULTIPLIERS) -> float:
    """The step eta0 * m (m in ``multipliers``) with the fewest median evaluations over ``seeds``:
    the same small grid for every method, tuned on seeds kept apart from the measured ones."""
    evals = [_median_evals(make, eta0 * m, seeds) for m in multipliers]
    return float(eta0 * multipliers[int(np.argmin(evals))])


@lru_cache(maxsize=8)
def tuned_steps(d: int = 20, log10_kappa: float = 3.0, tune_seeds=(10, 11, 12), reduction: float = 1e-6,
                eps: float = 1e-4, beta: float = 0.03, maxiter: int = 200000) -> tuple[float, float]:
    """(PaZO step, ZO-SGD step) chosen by :func:`tuned_step` on the card's quadratic (cached: the
    chapter's convergence figure and the claim share them)."""
    lam, x0 = ill_conditioned_quadratic(d, log10_kappa)
    H, fun = np.diag(lam), quadratic_fun(lam)
    target = reduction * fun(x0)
    eta_pazo = tuned_step(lambda eta, s: pazo(fun, x0, eta=eta, eps=eps, beta=beta, D0=float(lam.max()),
                                               f_target=target, maxiter=maxiter, rng=s), 1.0 / (d + 2), tune_seeds)
    eta_sgd = tuned_step(lambda eta, s: zo_sgd(fun, x0, eta=eta, eps=eps, f_target=target, maxiter=maxiter, rng=s),
                         pspsa_step_size(H, 0.0), tune_seeds)
    return eta_pazo, eta_sgd


def practical_comparison(*, d: int = 20, log10_kappa: float = 3.0, seeds=(0, 1, 2), tune_seeds=(10, 11, 12),
                         reduction: float = 1e-6, eps: float = 1e-4, beta: float = 0.03,
                         maxiter: int = 200000) -> dict:
    """Function evaluations to f <= reduction f(x0) on the card's quadratic.

    Practical PaZO (D0 = lambda_max, EMA rate beta) and ZO-SGD each get their best step from the
    grid {1, 2, 4, 8, 16} x (their theory step: 1/(d + 2) for PaZO, 1/(tr H + 2L) for ZO-SGD),
    tuned on ``tune_seeds`` and measured on ``seeds``. Also measured: both at their untuned theory
    steps (the card's setting) and the oracle PSPSA of order 1/2.
    """
    lam, x0 = ill_conditioned_quadratic(d, log10_kappa)
    H, fun = np.diag(lam), quadratic_fun(lam)
    target = reduction * fun(x0)

    def run_pazo(eta, s, name="PaZO (practical)"):
        return pazo(fun, x0, eta=eta, eps=eps, beta=beta, D0=float(lam.max()), f_target=target,
                    maxiter=maxiter, rng=s, method_name=name)

    def run_sgd(eta, s, name="ZO-SGD (MeZO)"):
        return zo_sgd(fun, x0, eta=eta, eps=eps, f_target=target, maxiter=maxiter, rng=s, method_name=name)

    eta_pazo0, eta_sgd0 = 1.0 / (d + 2), pspsa_step_size(H, 0.0)
    eta_pazo, eta_sgd = tuned_steps(d, log10_kappa, tuple(tune_seeds), reduction, eps, beta, maxiter)
    makers = {
        "PaZO (tuned step)": lambda s: run_pazo(eta_pazo, s, "PaZO (tuned step)"),
        "ZO-SGD (tuned step)": lambda s: run_sgd(eta_sgd, s, "ZO-SGD (tuned step)"),
        "PaZO (step 1/(d+2))": lambda s: run_pazo(eta_pazo0, s, "PaZO (step 1/(d+2))"),
        "ZO-SGD (step 1/(tr H + 2L))": lambda s: run_sgd(eta_sgd0, s, "ZO-SGD (step 1/(tr H + 2L))"),
        "PSPSA oracle (alpha = 1/2)": lambda s: pspsa(fun, x0, H, alpha=0.5, eps=eps, f_target=target,
                                                      maxiter=maxiter, rng=s, method_name="PSPSA oracle (alpha = 1/2)"),
    }
    runs, evals = {}, {}
    for name, make in makers.items():
        out = [make(s) for s in seeds]
        runs[name] = out[0]
        evals[name] = [r.nfev if r.success else np.inf for r in out]
    D = runs["PaZO (tuned step)"].D
    return {"runs": runs, "evals": evals, "median": {k: float(np.median(v)) for k, v in evals.items()},
            "eta": {"PaZO": eta_pazo, "ZO-SGD": eta_sgd, "PaZO theory": eta_pazo0, "ZO-SGD theory": eta_sgd0},
            "log_corr_D": float(np.corrcoef(np.log(D), np.log(lam))[0, 1]),
            "D_inflation": float(np.median(D / lam)), "lam": lam, "x0": x0}


@claim("16", "PSPSA order sweep on an ill-conditioned quadratic: U-shape with its minimum at alpha = 1/2",
       expect="median iterations to f <= 1e-6 f(x0) decrease up to alpha = 1/2 and increase after, and "
              "iterations(1/2) <= 0.1 x iterations(0)", name="order_sweep")
def claim_order_sweep(fast: bool = False) -> Measured:
    """d = 20, lambda = logspace(0, 3, 20), x0 = 1, per-alpha step 1/(tr B + 2 lambda_max B)."""
    sw = order_sweep(seeds=(0,) if fast else (0, 1, 2))
    med = [sw["median"][a] for a in sw["alphas"]]
    k = int(np.argmin(med))
    u_shape = bool(all(np.diff(med[: k + 1]) < 0) and all(np.diff(med[k:]) > 0))
    ratio = sw["median"][0.5] / sw["median"][0.0]
    holds = sw["alphas"][k] == 0.5 and u_shape and ratio <= 0.1
    values = {f"iters(alpha={a:g})": sw["median"][a] for a in sw["alphas"]}
    values.update({"argmin alpha": sw["alphas"][k], "ratio 1/2 vs 0": ratio})
    return Measured(values, holds=holds,
                    summary=f"minimum at alpha={sw['alphas'][k]:g}, ratio {ratio:.3f}", details=sw)


@claim("16", "Practical PaZO (learned diagonal curvature) needs fewer evaluations than ZO-SGD",
       expect="median function evaluations to f <= 1e-6 f(x0), each method at its best step of the same grid: "
              "PaZO <= 0.6 x ZO-SGD", name="practical")
def claim_practical(fast: bool = False) -> Measured:
    """Same problem; PaZO with D0 = lambda_max, beta = 0.03, three evaluations per step; steps tuned
    on held-out seeds, medians over 3 (fast) or 6 (full) other seeds. The untuned ratios (the
    card's settings) are measured too."""
    cmp_ = practical_comparison(seeds=(0, 1, 2) if fast else tuple(range(6)), tune_seeds=(10, 11, 12))
    med = cmp_["median"]
    ratio = med["PaZO (tuned step)"] / med["ZO-SGD (tuned step)"]
    values = {"evals PaZO tuned": med["PaZO (tuned step)"], "evals ZO-SGD tuned": med["ZO-SGD (tuned step)"],
              "ratio tuned": ratio,
              "ratio untuned (1/(d+2) vs 1/(trH+2L))": med["PaZO (step 1/(d+2))"] / med["ZO-SGD (step 1/(tr H + 2L))"],
              "ratio PaZO 1/(d+2) vs tuned ZO-SGD": med["PaZO (step 1/(d+2))"] / med["ZO-SGD (tuned step)"],
              "evals oracle PSPSA 1/2": med["PSPSA oracle (alpha = 1/2)"],
              "log-corr(D, diag H)": cmp_["log_corr_D"]}
    return Measured(values, holds=ratio <= 0.6, summary=f"PaZO / ZO-SGD (both tuned) = {ratio:.2f}", details=cmp_)


# --------------------------------------------------------------------------- torch proxy


def badly_scaled_logistic(n: int = 400, d: int = 20, log10_scale: float = 2.0, seed: int = 0) -> dict:
    """Synthetic binary classification whose feature j has scale s_j = logspace(0, -log10_scale, d)
    and whose true weights are z_j / s_j (every feature matters equally): a loss whose Hessian
    diagonal spans 10^(2 log10_scale). Float64 tensors for train and test halves."""
    n = check_int(n, "n", minimum=2)
    d = check_int(d, "d", minimum=1)
    g = torch.Generator().manual_seed(check_int(seed, "seed"))
    s = torch.logspace(0.0, -float(log10_scale), d, dtype=torch.float64)
    w = torch.randn(d, generator=g, dtype=torch.float64) / s
    X = torch.randn(2 * n, d, generator=g, dtype=torch.float64) * s
    y = (torch.rand(2 * n, generator=g, dtype=torch.float64) < torch.sigmoid(X @ w)).to(torch.float64)
    return {"Xtr": X[:n], "ytr": y[:n], "Xte": X[n:], "yte": y[n:], "scales": s}


def _train_zo(make_opt, data: dict, budget: int, every: int) -> Trace:
    model = torch.nn.Linear(data["Xtr"].shape[1], 1, dtype=torch.float64)
    torch.nn.init.zeros_(model.weight)
    torch.nn.init.zeros_(model.bias)
    opt = make_opt(model.parameters())
    bce = torch.nn.functional.binary_cross_entropy_with_logits

    def closure():
        return bce(model(data["Xtr"]).squeeze(1), data["ytr"])

    trace = Trace(type(opt).__name__)
    with torch.no_grad():
        while True:
            if opt.forward_passes // every >= len(trace):
                test = float(bce(model(data["Xte"]).squeeze(1), data["yte"]))
                trace.record(objective=float(closure()), test_loss=test, forward_passes=opt.forward_passes)
            if opt.forward_passes >= budget:
                break
            opt.step(closure)
    return trace


@lru_cache(maxsize=8)
def finetune_proxy(budget: int = 3000, seed: int = 0, every: int = 60) -> dict:
    """Forward-pass-only training of a logistic model on badly scaled features (the chapter's
    proxy for ZO fine-tuning): MeZO and PaZO, each at the best learning rate of a small grid
    (chosen on the final training loss), compared by test loss at equal forward passes."""
    with one_torch_thread():  # tiny models: one thread is fastest
        return _finetune_proxy(budget, seed, every)


def _finetune_proxy(budget: int, seed: int, every: int) -> dict:
    data = badly_scaled_logistic(seed=seed)
    grids = {"MeZO": (1.0, 3.0, 10.0), "PaZO": (0.1, 0.3, 1.0)}
    makers = {
        "MeZO": lambda lr: (lambda ps: MeZO(ps, lr=lr, eps=1e-3, seed=seed)),
        "PaZO": lambda lr: (lambda ps: PaZO(ps, lr=lr, eps=1e-3, beta=0.03, D0=0.25, seed=seed)),
    }
    best = {}
    for name, grid in grids.items():
        tried = {}
        for lr in grid:
            try:
                tried[lr] = _train_zo(makers[name](lr), data, budget, every)
            except ValueError:  # diverged to a non-finite loss at this learning rate
                continue
        lr = min(tried, key=lambda k: tried[k].objective[-1])
        tr = tried[lr]
        tr.method = f"{name} (lr = {lr:g})"
        best[name] = {"lr": lr, "trace": tr, "test_loss": float(tr["test_loss"][-1])}
    return best


# --------------------------------------------------------------------------- figures


def _ellipse_H(log10_kappa: float, angle: float = np.pi / 6) -> np.ndarray:
    c, s = np.cos(angle), np.sin(angle)
    R = np.array([[c, -s], [s, c]])
    return R @ np.diag([1.0, 10.0 ** log10_kappa]) @ R.T


@lru_cache(maxsize=128)
def ellipse_run(alpha: float, log10_kappa: float, steps: int = 60, seed: int = 0) -> dict:
    """PSPSA of order alpha on a rotated 2-D ellipse: trajectory, perturbation cloud P u, the
    bound rho(alpha) and the measured per-step contraction (f_T / f_0)^(1/T), median of 11 seeds."""
    H = _ellipse_H(log10_kappa)
    fun = lambda x: 0.5 * float(x @ H @ x)  # noqa: E731
    x0 = np.array([-1.6, 1.2])
    path: list[np.ndarray] = []
    res = pspsa(fun, x0, H, alpha=alpha, maxiter=steps, rng=seed, callback=path.append)
    P = preconditioner(H, alpha)
    cloud = P @ np.random.default_rng(99).standard_normal((2, 300))
    cloud *= 0.35 / np.sqrt(np.mean(np.sum(cloud ** 2, axis=0)))
    finals = [pspsa(fun, x0, H, alpha=alpha, maxiter=steps, rng=s).fun for s in range(1, 12)]
    f0 = fun(x0)
    measured = float(np.median(finals) / f0) ** (1.0 / steps)
    return {"path": np.array(path), "cloud": cloud, "rho": contraction_bound(H, alpha), "measured": measured,
            "H": H, "final": res.fun / f0}


ELLIPSE_KAPPAS = (0.0, 1.0, 2.0, 3.0)


def ellipse_traces(alpha: float, log10_kappa: float) -> tuple[list, dict]:
    """Contours of the 2-D ellipse, the perturbation cloud P u drawn around the start, and the
    PSPSA path; plus the layout note with the bound and the measured contraction."""
    run = ellipse_run(float(alpha), float(log10_kappa))
    H = run["H"]
    xs = np.linspace(-2.2, 2.2, 61)
    X, Y = np.meshgrid(xs, xs)
    Z = 0.5 * (H[0, 0] * X ** 2 + 2 * H[0, 1] * X * Y + H[1, 1] * Y ** 2)
    x0 = run["path"][0]
    traces = [
        go.Contour(x=xs, y=xs, z=np.log10(Z + 1e-3), colorscale="Blues", reversescale=True, showscale=False,
                   ncontours=18, contours=dict(coloring="lines"), line=dict(width=1), name="log10 f", showlegend=False),
        go.Scatter(x=x0[0] + run["cloud"][0], y=x0[1] + run["cloud"][1], mode="markers", name="perturbations P u",
                   marker=dict(size=4, color=color_for(1), opacity=0.45)),
        go.Scatter(x=run["path"][:, 0], y=run["path"][:, 1], mode="lines+markers", name="PSPSA path (60 steps)",
                   line=dict(color=color_for(0), width=2), marker=dict(size=4)),
    ]
    note = dict(x=0.01, y=0.01, xref="paper", yref="paper", xanchor="left", yanchor="bottom", showarrow=False,
                align="left", bgcolor="rgba(255,255,255,0.85)",
                text=(f"alpha = {alpha:g}, kappa = 1e{log10_kappa:g}<br>bound rho(alpha) = {run['rho']:.4f}"
                      f"<br>measured (f_60/f_0)^(1/60) = {run['measured']:.4f}"))
    return traces, {"annotations": [note]}


def _square_axes(fig: go.Figure) -> go.Figure:
    fig.update_xaxes(range=[-2.2, 2.2])
    fig.update_yaxes(range=[-2.2, 2.2], scaleanchor="x", scaleratio=1)
    return fig


@lru_cache(maxsize=1)
def _precompute_explorer_grids() -> None:
    """Fill the caches for every slider position of both explorers (about a second, once), so a
    live slider move only rebuilds the figure."""
    for k in ELLIPSE_KAPPAS:
        for a in ALPHAS:
            ellipse_run(a, k)
    for d in CURVE_DIMS:
        for k in CURVE_KAPPAS:
            alpha_curve(d, k)


def ellipse_figure(alpha: float = 0.5, log10_kappa: float = 2.0) -> go.Figure:
    """Live twin of the order slider: one (alpha, kappa)."""
    _precompute_explorer_grids()
    traces, layout = ellipse_traces(alpha, log10_kappa)
    fig = go.Figure(traces)
    fig.update_layout(**layout)
    base_layout(fig, xaxis_title="x<sub>1</sub>", yaxis_title="x<sub>2</sub>", height=520,
                title="PSPSA of order alpha: perturbation cloud and path")
    return _square_axes(fig)


def ellipse_slider_figure(log10_kappa: float = 2.0) -> go.Figure:
    """Static twin: one frame per alpha in 0, 1/4, ..., 1 at a fixed condition number."""
    steps = []
    for a in ALPHAS:
        traces, layout = ellipse_traces(a, log10_kappa)
        steps.append(SliderStep(f"{a:g}", traces, layout))
    fig = slider_figure(steps, slider_label="order alpha of the preconditioner H^-alpha", active=0,
                        fixed_axes=False, xaxis_title="x<sub>1</sub>", yaxis_title="x<sub>2</sub>", height=560,
                        title=f"Perturbation cloud and path on an ellipse with kappa = 1e{log10_kappa:g}")
    return _square_axes(fig)


CURVE_ALPHAS = np.round(np.linspace(0.0, 1.0, 21), 4)
CURVE_DIMS = (5, 10, 20, 50, 100)
CURVE_KAPPAS = (1.0, 2.0, 3.0, 4.0)


@lru_cache(maxsize=64)
def alpha_curve(d: int, log10_kappa: float, reduction: float = 1e-6) -> dict:
    """Exact expected iterations of PSPSA to E f <= reduction f(x0), and the iterations the bound
    rho(alpha) guarantees, on a fine alpha grid (card's quadratic with dimension d)."""
    lam, x0 = ill_conditioned_quadratic(int(d), float(log10_kappa))
    y0 = lam * x0 * x0
    exact, bound = [], []
    for a in CURVE_ALPHAS:
        b = _b_eigs(lam, a)
        eta = 1.0 / (b.sum() + 2 * b.max())
        exact.append(_iterations_from_spectrum(lam, y0, a, eta, reduction, 1e12))
        bound.append(np.log(reduction) / np.log1p(-b.min() * eta))
    return {"alpha": CURVE_ALPHAS, "exact": np.array(exact), "bound": np.array(bound)}


def alpha_curve_traces(d: int, log10_kappa: float) -> list:
    c = alpha_curve(int(d), float(log10_kappa))
    return [
        go.Scatter(x=c["alpha"], y=c["exact"], mode="lines+markers", name="exact E-iterations (PSPSA)",
                   line=dict(color=color_for(0), width=2.5)),
        go.Scatter(x=c["alpha"], y=c["bound"], mode="lines", name="guaranteed by rho(alpha)",
                   line=dict(color=color_for(1), dash="dash")),
        go.Scatter(x=[0.5, 0.5], y=[1.0, 1e12], mode="lines", name="alpha = 1/2",
                   line=dict(color="#888", dash="dot"), hoverinfo="skip"),
    ]


def alpha_curve_figure(d: int = 20, log10_kappa: float = 3.0) -> go.Figure:
    """Live twin of the iterations-vs-alpha curve for one (d, kappa)."""
    _precompute_explorer_grids()
    fig = go.Figure(alpha_curve_traces(d, log10_kappa))
    c = alpha_curve(int(d), float(log10_kappa))
    top = np.nanmax(c["bound"][np.isfinite(c["bound"])])
    base_layout(fig, logy=True, xaxis_title="order alpha of the preconditioner H^-alpha",
                yaxis_title="iterations to E f <= 1e-6 f(x0)", title=f"d = {d}, kappa = 1e{log10_kappa:g}")
    fig.update_yaxes(range=[np.log10(max(1.0, 0.5 * np.nanmin(c["exact"]))), np.log10(2 * top)])
    return fig


def alpha_curve_slider_figure(d: int = 20) -> go.Figure:
    """Static twin: one frame per log10 kappa in 1..4 at dimension d."""
    steps = [SliderStep(f"{k:g}", alpha_curve_traces(d, k)) for k in CURVE_KAPPAS]
    fig = slider_figure(steps, slider_label="log10 kappa", active=2, logy=True, fixed_axes=False,
                        xaxis_title="order alpha of the preconditioner H^-alpha",
                        yaxis_title="iterations to E f <= 1e-6 f(x0)",
                        title=f"The U-shape in alpha (d = {d})")
    fig.update_yaxes(range=[1.5, 9.5])
    return fig


EXPLORER_ELLIPSE = Explorer("16", "ellipse", ellipse_figure, {
    "alpha": Slider("order alpha", [0.0, 0.25, 0.5, 0.75, 1.0], 0.0),
    "log10_kappa": Slider("log10 kappa", list(ELLIPSE_KAPPAS), 2.0),
}, description="Perturbation cloud and PSPSA path on a 2-D ellipse.")

EXPLORER_ALPHA_CURVE = Explorer("16", "alpha_curve", alpha_curve_figure, {
    "d": Slider("dimension d", list(CURVE_DIMS), 20),
    "log10_kappa": Slider("log10 kappa", list(CURVE_KAPPAS), 3.0),
}, description="Exact expected iterations of PSPSA versus the order alpha.")


# --------------------------------------------------------------------------- watch it run


@lru_cache(maxsize=4)
def watch_runs(seed: int = 0, d: int = 20, log10_kappa: float = 3.0) -> dict:
    """One seed of every method on the card's quadratic, to f <= 1e-6 f(x0), for the convergence
    figure against function evaluations (steps: the tuned ones of the claim; ZO-Adam's lr is the
    best of {1e-3, 3e-3, 1e-2} on this problem)."""
    lam, x0 = ill_conditioned_quadratic(d, log10_kappa)
    H, fun = np.diag(lam), quadratic_fun(lam)
    target = 1e-6 * fun(x0)
    eta_pazo, eta_sgd = tuned_steps(d, log10_kappa)
    kw = dict(f_target=target, maxiter=60000, rng=seed)
    runs = [
        pspsa(fun, x0, H, alpha=0.5, method_name="PSPSA oracle (alpha = 1/2)", **kw),
        pazo(fun, x0, eta=eta_pazo, D0=float(lam.max()), method_name="PaZO (tuned step)", **kw),
        pazo(fun, x0, eta=1.0 / (d + 2), D0=float(lam.max()), method_name="PaZO (step 1/(d+2))", **kw),
        zo_sgd(fun, x0, eta=eta_sgd, method_name="ZO-SGD (tuned step)", **kw),
        zo_sgd(fun, x0, eta=pspsa_step_size(H, 0.0), method_name="ZO-SGD (step 1/(tr H + 2L))", **kw),
        zo_adam(fun, x0, eta=1e-3, **kw),
    ]
    return {"runs": runs, "f0": fun(x0), "beta": 0.03}


def watch_figure(seed: int = 0) -> go.Figure:
    """f(x_t)/f(x0) against function evaluations, log-log, with the EMA warm-up shaded."""
    w = watch_runs(seed)
    traces = []
    for r in w["runs"]:
        tr = r.trace.thinned(300, log=True)
        data = tr.to_dict()
        data["fevals"] = [max(v, 1.0) for v in data["fevals"]]
        data["objective"] = [v / w["f0"] for v in data["objective"]]
        traces.append(Trace.from_dict(data))
    fig = go.Figure(convergence_traces(traces, "objective", "fevals"))
    end = max(float(r.trace["fevals"][-1]) for r in w["runs"])
    warm = 3 * 3 / w["beta"]
    fig.update_layout(**phase_layout([Phase(1, warm, "curvature warm-up"), Phase(warm, end, "linear phase")],
                                     logx=True))
    return base_layout(fig, logx=True, logy=True, xaxis_title="function evaluations (forward passes)",
                       yaxis_title="f(x_t) / f(x_0)", height=480,
                       title="d = 20, kappa = 1e3: every method to 1e-6")


# --------------------------------------------------------------------------- torch proxy figure


def proxy_figure(budget: int = 3000) -> go.Figure:
    """Test and training loss of MeZO and PaZO against forward passes (torch proxy)."""
    res = finetune_proxy(budget)
    fig = make_subplots(rows=1, cols=2, subplot_titles=("training loss", "test loss"))
    for i, (name, r) in enumerate(res.items()):
        tr = r["trace"]
        for col, key in ((1, "objective"), (2, "test_loss")):
            fig.add_trace(go.Scatter(x=tr["forward_passes"], y=tr[key], mode="lines", name=tr.method,
                                     showlegend=col == 1, line=dict(color=color_for(i), width=2.2)), row=1, col=col)
    base_layout(fig, logy=True, height=420, title="Forward passes only: logistic model on badly scaled features")
    fig.update_xaxes(title_text="forward passes")
    fig.update_yaxes(title_text="cross-entropy (nats)", col=1)
    return fig
