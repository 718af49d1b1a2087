"""Chapter 09: l_inf regression with Lewis weights (Ene, Nguyen and Vladu, NeurIPS 2025).

The problem is overdetermined Chebyshev (l_inf) regression, min_{Nx = v} ||Ax - b||_inf, with
A of shape (n, d), n >> d, and optional equality constraints N x = v. The paper solves it with a
lightweight IRLS scheme (iteratively reweighted least squares driven by multiplicative weights)
whose "regularising" floor is spread along l_inf Lewis weights, so that the number of linear
system solves depends on d instead of n; it then uses the solver as the oracle of a trust-region
method for quasi-self-concordant (QSC) objectives.

This module holds the methods a reader imports (the book's experiments, figures and claims are in
:mod:`optbook.geometry.linf_regression_chapter`; the paper's body was not available, see the
chapter for what is reconstructed):

* :func:`lewis_weights` -- l_inf Lewis weights (the D-optimal design / John ellipsoid weights)
  by the classical multiplicative (Titterington) iteration, and their overestimates tau.
* :func:`wls` -- the weighted least-squares oracle with optional equality constraints, the one
  "linear system solve" that every cost in this chapter counts.
* :func:`mwu_irls` -- the Lewis-floored (or uniform-floored) MWU-IRLS with certified lower and
  upper bounds L_t <= OPT <= U_t, stopping when U_t <= (1 + eps) L_t; below eps = 1e-3 it hands
  over to :func:`linf_exchange`, an exact row-generation phase with the same certificate.
* Baselines: :func:`lawson_irls` (Lawson's classical IRLS), :func:`linf_lp` (exact LP with
  HiGHS), :func:`linf_cvxpy` (cvxpy, the Python counterpart of the CVX tool the paper compares
  with) and :func:`softmax_newton` (smooth soft-max surrogate + damped Newton).
* :func:`qsc_trust_region` -- the QSC trust-region outer loop on logistic regression, with the
  l_inf-box subproblem solved by ADMM (:func:`box_trust_region_step`); baselines
  :func:`damped_newton` and :func:`gradient_descent`.

Every l_inf solver first reduces the problem to an orthonormal basis Q of the residual's column
space (constraints eliminated by a null-space basis of N, columns equilibrated, dependent
directions dropped by an SVD rank test). The l_inf problem, the Lewis weights and the IRLS
iterates depend on A only through that column space, so the reduction changes no answer in exact
arithmetic; it makes every later solve well conditioned, and it lets rank-deficient and nearly
collinear designs through.
"""
from __future__ import annotations

import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.linalg
import scipy.sparse
from scipy.linalg import lapack
from scipy.optimize import linprog
from scipy.special import expit, logsumexp

from ..core import Result, Trace, as_rng, check_choice, check_in_range, check_int, check_matrix, check_positive, check_vector
from ..core.validate import RngLike

#: Below this accuracy the multiplicative-weights phase of :func:`mwu_irls` (whose cost grows like
#: 1/eps^2) hands over to the exact exchange phase, by default.
POLISH_BELOW = 1e-3
#: The accuracy the multiplicative-weights phase runs to before such a hand-over.
POLISH_FROM = 1e-2
LP_METHODS = ("highs", "highs-ds", "highs-ipm")
#: cvxpy solvers for the LP (HiGHS through cvxpy's own interface prints a banner; SCIPY reaches it quietly).
CVXPY_SOLVERS = ("CLARABEL", "SCIPY")

# --------------------------------------------------------------------------- the reduction


@dataclass(frozen=True)
class _Reduced:
    """The problem on an orthonormal basis: r(x) = Q y - c for x = x0 + T y (every feasible x)."""

    Q: np.ndarray
    c: np.ndarray
    x0: np.ndarray
    T: np.ndarray

    @property
    def rank(self) -> int:
        return self.Q.shape[1]

    def x(self, y: np.ndarray) -> np.ndarray:
        return self.x0 + self.T @ y

    def residual(self, y: np.ndarray) -> np.ndarray:
        return self.Q @ y - self.c


def _range_basis(B: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Orthonormal basis U of range(B) and the map M with B (M y) = U y.

    Columns are scaled to unit norm first (l_inf regression is invariant under A -> A R), then an
    SVD keeps the singular values above max(shape) * machine epsilon * the largest: exactly
    dependent columns are dropped, nearly collinear ones kept as long as they are numerically
    independent.
    """
    n, k = B.shape
    norms = np.linalg.norm(B, axis=0)
    keep = np.flatnonzero(norms > 0)
    if keep.size == 0:
        return np.zeros((n, 0)), np.zeros((k, 0))
    Bs = B[:, keep] / norms[keep]
    U, s, Vt = np.linalg.svd(Bs, full_matrices=False)
    r = int(np.sum(s > s[0] * max(Bs.shape) * np.finfo(float).eps))
    M = np.zeros((k, r))
    M[keep] = (Vt[:r].T / s[:r]) / norms[keep][:, None]
    return U[:, :r], M


def _reduce(A: np.ndarray, b: np.ndarray, N: np.ndarray | None, v: np.ndarray | None) -> _Reduced:
    d = A.shape[1]
    if N is None:
        x0, Z = np.zeros(d), np.eye(d)
    else:
        U, s, Vt = np.linalg.svd(N, full_matrices=True)
        k = int(np.sum(s > s[0] * max(N.shape) * np.finfo(float).eps)) if s.size and s[0] > 0 else 0
        x0 = Vt[:k].T @ ((U[:, :k].T @ v) / s[:k])
        if np.linalg.norm(N @ x0 - v) > 1e-9 * max(1.0, float(np.linalg.norm(v))):
            raise ValueError("N x = v has no solution (v is not in the range of N)")
        Z = Vt[k:].T
    Q, M = _range_basis(A @ Z)
    return _Reduced(Q=Q, c=b - A @ x0, x0=x0, T=Z @ M)


def _check_problem(A: Any, b: Any, N: Any, v: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray | None, np.ndarray | None]:
    A = check_matrix(A, "A")
    b = check_vector(b, "b", A.shape[0])
    if N is None and v is None:
        return A, b, None, None
    if N is None or v is None:
        raise ValueError("N and v must be given together (equality constraints N x = v)")
    N = check_matrix(N, "N", shape=(None, A.shape[1]))
    v = check_vector(v, "v", N.shape[0])
    return A, b, N, v


def _check_eps(eps: Any) -> float:
    return check_in_range(eps, "eps", 0.0, 1.0)


# --------------------------------------------------------------------------- A. Lewis weights


@dataclass(frozen=True)
class LewisWeights:
    """l_inf Lewis weights ``w`` (sum = rank of A) and their overestimates ``tau = kappa * w``.

    ``kappa = max_i a_i^T (A^T W A)^{-1} a_i`` (>= 1, equal to 1 at the exact weights);
    ``iterations`` multiplicative updates were made; ``kappa_history`` records kappa at the
    start and after every update.
    """

    w: np.ndarray
    tau: np.ndarray
    kappa: float
    iterations: int
    kappa_history: np.ndarray

    @property
    def total(self) -> float:
        """S_tau, the sum of the overestimates (kappa * rank)."""
        return float(self.tau.sum())

    @property
    def solves(self) -> int:
        """Linear-system solves spent: one weighted factorisation per leverage evaluation."""
        return self.iterations + 1


def _leverages(Q: np.ndarray, w: np.ndarray) -> np.ndarray:
    """q_i^T (Q^T W Q)^{-1} q_i for every row, from the R factor of W^{1/2} Q (QR, no normal
    equations): the leverage is ||R^{-T} q_i||^2."""
    R = np.linalg.qr(Q * np.sqrt(w)[:, None], mode="r")
    Z = scipy.linalg.solve_triangular(R, Q.T, trans="T", check_finite=False)
    return np.einsum("ij,ij->j", Z, Z)


def _lewis(Q: np.ndarray, kappa_target: float, maxiter: int) -> LewisWeights:
    n, r = Q.shape
    w = np.full(n, r / n)
    lev = _leverages(Q, w)
    history = [float(lev.max())]
    it = 0
    while history[-1] > kappa_target and it < maxiter:
        w = w * lev
        w *= r / w.sum()  # exact in theory (sum_i w_i lev_i = r); re-normalised against round-off
        lev = _leverages(Q, w)
        history.append(float(lev.max()))
        it += 1
    kappa = history[-1]
    return LewisWeights(w=w, tau=kappa * w, kappa=kappa, iterations=it, kappa_history=np.array(history))


def lewis_weights(A: Any, *, kappa_target: float = 1.0 + 1e-6, maxiter: int = 20_000) -> LewisWeights:
    """l_inf Lewis weights of ``A`` by the multiplicative (Titterington) D-optimal-design iteration.

    Starting at w = (r/n) 1 (r the rank of A), repeat w_i <- w_i a_i^T (A^T W A)^{-1} a_i. The sum
    stays r and log det(A^T W A) increases; at the fixed point every row with w_i > 0 has leverage
    exactly 1 and no row has more, which is the definition of the l_inf Lewis weights (the
    paper's "Lewis weights"; geometrically, E = {y : sum_i w_i (a_i^T y)^2 <= 1} is the John
    ellipsoid of the polytope {y : ||A y||_inf <= 1}). The weights depend on A only through its
    column space, which is where they are computed (so dependent columns are harmless).

    The iteration stops as soon as kappa = max_i leverage <= ``kappa_target``; then
    tau = kappa * w are *overestimates* (a_i^T (A^T T A)^{-1} a_i <= 1 for all i, sum kappa r),
    which is all the solver needs. ``kappa_target = 2`` is the cheap setting the solver uses.
    """
    A = check_matrix(A, "A")
    kappa_target = check_in_range(kappa_target, "kappa_target", 1.0, np.inf)
    maxiter = check_int(maxiter, "maxiter", minimum=0)
    Q, _ = _range_basis(A)
    if Q.shape[1] == 0:
        raise ValueError("A must not be zero (its column space is empty)")
    return _lewis(Q, kappa_target, maxiter)


def leverage_scores(A: Any) -> np.ndarray:
    """Ordinary leverage scores a_i^T (A^T A)^+ a_i (they sum to the rank of A)."""
    Q, _ = _range_basis(check_matrix(A, "A"))
    return np.einsum("ij,ij->i", Q, Q)


# --------------------------------------------------------------------------- B. the WLS oracle


def _wls_q(Q: np.ndarray, c: np.ndarray, p: np.ndarray) -> np.ndarray:
    """argmin_y sum_i p_i (q_i^T y - c_i)^2 by Householder QR of P^{1/2} Q (LAPACK dgels); the
    minimum-norm SVD solver takes over if P^{1/2} Q is numerically rank deficient."""
    s = np.sqrt(p)
    M, rhs = Q * s[:, None], c * s
    _, y, info = lapack.dgels(M, rhs)
    y = y[: Q.shape[1]]
    if info != 0 or not np.all(np.isfinite(y)):
        y = scipy.linalg.lstsq(M, rhs, lapack_driver="gelsd", check_finite=False)[0]
    return y


def wls(A: Any, b: Any, p: Any, N: Any = None, v: Any = None) -> np.ndarray:
    """x(p) = argmin_{N x = v} sum_i p_i (a_i^T x - b_i)^2: one "linear system solve".

    Least squares on P^{1/2} Q by QR, where Q is an orthonormal basis of the residual's column
    space (the constraints eliminated by a null-space basis of N); the minimum-norm minimiser is
    returned when it is not unique (dependent columns, or zero weights).
    """
    A, b, N, v = _check_problem(A, b, N, v)
    p = check_vector(p, "p", A.shape[0])
    if np.any(p < 0) or not np.any(p > 0):
        raise ValueError("p must be non-negative with at least one positive entry")
    red = _reduce(A, b, N, v)
    if red.rank == 0:
        return red.x0
    s = np.sqrt(p)
    y = scipy.linalg.lstsq(red.Q * s[:, None], red.c * s, lapack_driver="gelsd", check_finite=False)[0]
    return red.x(y)


# --------------------------------------------------------------------------- C. MWU-IRLS


def width_bound(total_floor: float, eps: float) -> float:
    """Certified width (1 + sqrt(S / eps))^2 of a floor with leverage budget S (see the chapter)."""
    total_floor = check_positive(total_floor, "total_floor")
    eps = _check_eps(eps)
    return float((1.0 + np.sqrt(total_floor / eps)) ** 2)


def _floor_budget(Q: np.ndarray, tau: np.ndarray) -> float:
    """S = sum(tau) * max_i q_i^T (Q^T T Q)^{-1} q_i: the leverage budget of a floor along tau
    (kappa r for Lewis overestimates, n * max leverage for the uniform floor); infinite when the
    floor's support does not span the column space (then it bounds nothing)."""
    try:
        with np.errstate(all="ignore"):
            lev = _leverages(Q, tau)
    except np.linalg.LinAlgError:  # an exactly singular R factor
        return np.inf
    return float(tau.sum() * np.max(lev)) if np.all(np.isfinite(lev)) else np.inf


def mwu_irls(
    A: Any,
    b: Any,
    N: Any = None,
    v: Any = None,
    *,
    eps: float = 0.05,
    eta: float = 1.0,
    floor: str | np.ndarray = "lewis",
    maxiter: int = 5000,
    polish: bool | None = None,
    callback: Callable[[np.ndarray, np.ndarray], None] | None = None,
) -> Result:
    """(1 + eps)-approximate l_inf regression by multiplicative-weights IRLS with a floor.

    Each iteration solves one weighted least-squares problem (the oracle of :func:`wls`) with the
    floored weights p~ = (1 - eps) p + eps tau / S_tau. ``floor``: ``"lewis"`` (tau = l_inf Lewis
    weight overestimates, the paper's choice; their computation is counted in ``solves``),
    ``"uniform"`` (tau = 1, the Adil-Bullins-Sachdeva style floor) or an array tau >= 0 of length n.
    Certificates: L_t = max_s sqrt(sum p~_i r_i(x_s)^2) is a lower bound on OPT (weak duality of
    min_x sum p~ r^2 <= OPT^2), and U_t, the best l_inf residual seen at x_t or at the
    1/rho-weighted running average, is an upper bound. The run stops when U_t <= (1 + eps) L_t.
    Weights are updated p_i <- p_i exp(eta s_i / rho) with s_i = r_i^2 / U_t^2 and
    rho = max(1, max_i s_i) (the realised width), in log space.

    ``polish`` (default: when eps < 1e-3): the multiplicative-weights phase runs to accuracy
    max(eps, 1e-2) and, if that does not certify eps, hands its heaviest rows to
    :func:`linf_exchange`, which finishes exactly with the same kind of certificate.
    ``callback(x_t, p~_t)`` is called after every weighted solve.

    Returns a :class:`~optbook.core.Result` whose trace records ``upper`` (objective), ``lower``,
    ``rho`` and ``solves`` (cumulative: one for the reduction of A, the Lewis iterations, one per
    iteration) and whose extras are ``lower``, ``solves``, ``lewis_solves``, ``floor_budget`` (the
    floor's leverage budget S), ``width_bound`` (the certified bound (1 + sqrt(S/eps))^2 on every
    realised rho, a diagnostic), ``max_rho``, ``exchange_rounds`` and ``seconds``.
    """
    A, b, N, v = _check_problem(A, b, N, v)
    n = A.shape[0]
    eps = _check_eps(eps)
    eta = check_positive(eta, "eta")
    maxiter = check_int(maxiter, "maxiter", minimum=1)
    if polish is not None and not isinstance(polish, (bool, np.bool_)):
        raise ValueError(f"polish must be True, False or None, got {polish!r}")
    polish = eps < POLISH_BELOW if polish is None else bool(polish)
    if isinstance(floor, str):
        floor = check_choice(floor, "floor", ("lewis", "uniform"))
        tau = None
    else:
        tau = check_vector(floor, "floor", n)
        if np.any(tau < 0) or not tau.sum() > 0:
            raise ValueError("floor must be non-negative with a positive sum when given as an array")
        floor = "custom"
    if callback is not None and not callable(callback):
        raise ValueError("callback must be callable")
    t0 = time.perf_counter()
    red = _reduce(A, b, N, v)
    Q, c, r_dim = red.Q, red.c, red.rank
    tr = Trace(f"MWU-IRLS ({floor} floor)", meta=dict(n=n, rank=r_dim, eps=eps, eta=eta, floor=floor))
    if r_dim == 0:  # a single feasible residual: nothing to fit
        fun = float(np.max(np.abs(c)))
        tr.record(objective=fun, lower=fun, rho=1.0, solves=1)
        return Result(x=red.x0, fun=fun, lower=fun, nit=0, success=True, trace=tr, solves=1, lewis_solves=0,
                      floor_budget=0.0, width_bound=1.0, max_rho=1.0, exchange_rounds=0,
                      seconds=time.perf_counter() - t0, message="the constraints fix the residual")
    eps_mw = max(eps, POLISH_FROM) if polish else eps
    pre = 1  # the reduction: one factorisation of A
    if floor == "lewis":
        lw = _lewis(Q, 2.0, 1000)
        tau, pre = lw.tau, pre + lw.solves
    elif floor == "uniform":
        tau = np.ones(n)
    budget = _floor_budget(Q, tau)
    bound = float((1.0 + np.sqrt(budget / eps_mw)) ** 2)
    floor_p = tau / tau.sum()
    log_p = np.zeros(n)
    lower, upper = 0.0, np.inf
    y_best = np.zeros(r_dim)
    y_sum, r_sum, w_sum = np.zeros(r_dim), np.zeros(n), 0.0
    max_rho, success, pt = 1.0, False, floor_p
    for it in range(1, maxiter + 1):
        pt = (1.0 - eps_mw) * np.exp(log_p - logsumexp(log_p)) + eps_mw * floor_p
        y = _wls_q(Q, c, pt)
        r = Q @ y - c
        if callback is not None:
            callback(red.x(y), pt)
        lower = max(lower, float(np.sqrt(pt @ r**2)))
        r_inf = float(np.max(np.abs(r)))
        if r_inf < upper:
            upper, y_best = r_inf, y
        s = (r / upper) ** 2 if upper > 0 else np.zeros(n)
        rho = max(1.0, float(s.max()))
        max_rho = max(max_rho, float(s.max()))
        # the 1/rho-weighted average; its residual is the same average of residuals (r is affine)
        y_sum += y / rho
        r_sum += r / rho
        w_sum += 1.0 / rho
        avg_inf = float(np.max(np.abs(r_sum))) / w_sum
        if avg_inf < upper:
            upper, y_best = avg_inf, y_sum / w_sum
        tr.record(objective=upper, step_size=eta, lower=lower, rho=float(s.max()), solves=pre + it)
        if upper <= (1.0 + eps) * lower or (upper <= (1.0 + eps_mw) * lower and polish):
            success = upper <= (1.0 + eps) * lower
            break
        log_p = log_p + eta * s / rho
    rounds = 0
    if polish and not success:
        k = min(n, 2 * (r_dim + 1))
        start = np.union1d(np.argsort(-pt)[:k], np.argsort(-np.abs(red.residual(y_best)))[:k])
        ex = _exchange(red, eps, start, lower, upper, y_best, tr, pre + it)
        lower, upper, y_best, success, rounds = ex
    seconds = time.perf_counter() - t0
    message = ("certified (1+eps)-optimal: U <= (1+eps) L" if success
               else "maxiter reached before the certificate")
    solves = int(tr["solves"][-1])
    return Result(x=red.x(y_best), fun=upper, lower=lower, nit=it, success=success, message=message, trace=tr,
                  solves=solves, lewis_solves=pre - 1, floor_budget=budget, width_bound=bound, max_rho=max_rho,
                  exchange_rounds=rounds, seconds=seconds)


# --------------------------------------------------------------------------- the exchange phase


def _small_lp(Q: np.ndarray, c: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """min_y ||Q y - c||_inf over a few rows by HiGHS: the minimiser and the dual weights
    (a probability vector over the rows, zero off the active ones)."""
    m, r = Q.shape
    scale = max(float(np.max(np.abs(c))), 1e-300)  # O(1) data: HiGHS's tolerances are absolute
    ones = np.ones((m, 1))
    A_ub = np.block([[Q, -ones], [-Q, -ones]])
    cost = np.zeros(r + 1)
    cost[-1] = 1.0
    res = linprog(cost, A_ub=A_ub, b_ub=np.concatenate([c, -c]) / scale,
                  bounds=[(None, None)] * r + [(0, None)], method="highs-ds")
    if res.status != 0:
        raise RuntimeError(f"HiGHS failed on the exchange subproblem: {res.message}")
    dual = np.abs(res.ineqlin.marginals[:m]) + np.abs(res.ineqlin.marginals[m:])
    total = dual.sum()
    dual = dual / total if total > 0 else np.full(m, 1.0 / m)
    return res.x[:r] * scale, dual


def _exchange(red: _Reduced, eps: float, rows: np.ndarray, lower: float, upper: float, y_best: np.ndarray,
              tr: Trace, solves: int, maxrounds: int = 200) -> tuple[float, float, np.ndarray, bool, int]:
    """Row generation with certificates. Each round solves the LP on the working rows S; the
    LP's dual weights p (a probability vector on S, hence on all rows) give the lower bound
    sqrt(min_y sum p_i r_i(y)^2) <= OPT by the same weak duality as the IRLS (exact at the
    restricted optimum), the full residual of the LP's minimiser gives the upper bound, and the
    rows that the minimiser violates most join S."""
    Q, c = red.Q, red.c
    n, r_dim = Q.shape
    S = np.unique(rows)
    success, k = False, 0
    for k in range(1, maxrounds + 1):
        y_S, dual = _small_lp(Q[S], c[S])
        p = np.zeros(n)
        p[S] = dual
        act = np.flatnonzero(p > 0)
        sp = np.sqrt(p[act])
        y_p = scipy.linalg.lstsq(Q[act] * sp[:, None], c[act] * sp, lapack_driver="gelsd", check_finite=False)[0]
        lower = max(lower, float(np.sqrt(p[act] @ (Q[act] @ y_p - c[act]) ** 2)))
        res = Q @ y_S - c
        r_inf = float(np.max(np.abs(res)))
        if r_inf < upper:
            upper, y_best = r_inf, y_S
        solves += 1
        tr.record(objective=upper, lower=lower, rho=np.nan, solves=solves, exchange_round=k)
        if upper <= (1.0 + eps) * lower:
            success = True
            break
        order = np.argsort(-np.abs(res))
        out = order[~np.isin(order, S)][: r_dim + 1]  # the most violated rows not yet in S
        if out.size == 0:  # every row is in S already: the LP was the whole problem
            break
        S = np.union1d(S, out)
    return lower, upper, y_best, success, k


def linf_exchange(A: Any, b: Any, N: Any = None, v: Any = None, *, eps: float = 1e-9,
                  rows: Any = None, maxrounds: int = 200) -> Result:
    """Certified l_inf regression by row generation (the classical exchange idea): LP on a few rows,
    add the rows the answer violates, repeat; stop when U <= (1 + eps) L.

    ``rows`` is the starting working set (default: the 2(r + 1) largest residuals of the least
    squares fit, r the rank). Each round is one small HiGHS LP, one weighted least-squares solve
    on the LP's dual weights (the lower bound) and one pass over all rows (the upper bound).
    """
    A, b, N, v = _check_problem(A, b, N, v)
    n = A.shape[0]
    eps = _check_eps(eps)
    maxrounds = check_int(maxrounds, "maxrounds", minimum=1)
    t0 = time.perf_counter()
    red = _reduce(A, b, N, v)
    tr = Trace("exchange (row generation)", meta=dict(n=n, rank=red.rank, eps=eps))
    if red.rank == 0:
        fun = float(np.max(np.abs(red.c)))
        tr.record(objective=fun, lower=fun, solves=1)
        return Result(x=red.x0, fun=fun, lower=fun, nit=0, success=True, trace=tr, solves=1,
                      seconds=time.perf_counter() - t0, message="the constraints fix the residual")
    if rows is None:
        y_ls = _wls_q(red.Q, red.c, np.ones(n))
        start = np.argsort(-np.abs(red.residual(y_ls)))[: min(n, 2 * (red.rank + 1))]
    else:
        start = np.asarray(rows)
        if start.ndim != 1 or start.size == 0 or start.dtype.kind not in "iu" or start.min() < 0 or start.max() >= n:
            raise ValueError(f"rows must be a non-empty 1-D array of row indices in [0, {n})")
    lower, upper, y, success, rounds = _exchange(red, eps, start, 0.0, np.inf, np.zeros(red.rank), tr, 1, maxrounds)
    return Result(x=red.x(y), fun=upper, lower=lower, nit=rounds, success=success, trace=tr,
                  solves=int(tr["solves"][-1]), seconds=time.perf_counter() - t0,
                  message="certified (1+eps)-optimal" if success else "maxrounds reached before the certificate")


# --------------------------------------------------------------------------- baselines


def lawson_irls(A: Any, b: Any, N: Any = None, v: Any = None, *, eps: float = 0.05, power: float = 1.0,
                maxiter: int = 5000) -> Result:
    """Lawson's classical IRLS for Chebyshev fitting: x_k = WLS(w), w_i <- w_i |r_i|^power / sum_j (...).

    ``power = 1`` is Lawson's 1961 rule (Rice and Usow's 1968 variant raises |r_i| to a power).
    The same certificates apply: sqrt(sum_i w_i r_i(x_k)^2) <= OPT since w is a probability
    vector, and ||r(x_k)||_inf >= OPT; it stops when the best upper bound is within (1 + eps)
    of the best lower bound. ``solves`` counts the reduction of A as one.
    """
    A, b, N, v = _check_problem(A, b, N, v)
    n = A.shape[0]
    eps = _check_eps(eps)
    power = check_in_range(power, "power", 0.0, 10.0, closed=(False, True))
    maxiter = check_int(maxiter, "maxiter", minimum=1)
    t0 = time.perf_counter()
    red = _reduce(A, b, N, v)
    Q, c = red.Q, red.c
    tr = Trace("Lawson IRLS", meta=dict(n=n, eps=eps, power=power))
    log_w = np.zeros(n)
    lower, upper, y_best, success = 0.0, np.inf, np.zeros(red.rank), False
    for it in range(1, maxiter + 1):
        w = np.exp(log_w - logsumexp(log_w))
        y = _wls_q(Q, c, w) if red.rank else y_best
        r = Q @ y - c
        lower = max(lower, float(np.sqrt(w @ r**2)))
        r_inf = float(np.max(np.abs(r)))
        if r_inf < upper:
            upper, y_best = r_inf, y
        tr.record(objective=upper, lower=lower, solves=it + 1)
        if upper <= (1.0 + eps) * lower:
            success = True
            break
        # in log space: a weight that underflows stays a (tiny) positive number, never an exact 0
        log_w = log_w + power * np.log(np.maximum(np.abs(r), 1e-300 * max(r_inf, 1e-300)))
    message = "certified (1+eps)-optimal" if success else "maxiter reached before the certificate"
    return Result(x=red.x(y_best), fun=upper, lower=lower, nit=it, success=success, message=message, trace=tr,
                  solves=it + 1, seconds=time.perf_counter() - t0)


def linf_lp(A: Any, b: Any, N: Any = None, v: Any = None, *, method: str = "highs",
            presolve: bool = True) -> Result:
    """Exact l_inf regression as an LP, min t s.t. -t <= r(x) <= t, by HiGHS (``method`` one of
    'highs', 'highs-ds', 'highs-ipm'; ``presolve`` switches HiGHS's presolve).

    The LP is posed on the orthonormal basis of the residual's column space (constraints
    eliminated), with a sparse constraint matrix; on the raw design HiGHS's absolute tolerances
    can return a wrong optimum for nearly collinear columns. ``dual`` holds the optimal weights
    (a probability vector supported on the active rows).
    """
    A, b, N, v = _check_problem(A, b, N, v)
    method = check_choice(method, "method", LP_METHODS)
    if not isinstance(presolve, (bool, np.bool_)):
        raise ValueError(f"presolve must be a bool, got {presolve!r}")
    t0 = time.perf_counter()
    red = _reduce(A, b, N, v)
    Q, c = red.Q, red.c
    n, r_dim = Q.shape
    if r_dim == 0:
        fun = float(np.max(np.abs(c)))
        return Result(x=red.x0, fun=fun, success=True, message="the constraints fix the residual", nit=0,
                      dual=np.full(n, 1.0 / n), seconds=time.perf_counter() - t0)
    ones = scipy.sparse.csr_array(np.ones((n, 1)))
    Qs = scipy.sparse.csr_array(Q)
    A_ub = scipy.sparse.vstack([scipy.sparse.hstack([Qs, -ones]), scipy.sparse.hstack([-Qs, -ones])], format="csr")
    cost = np.zeros(r_dim + 1)
    cost[-1] = 1.0
    scale = max(float(np.max(np.abs(c))), 1e-300)  # O(1) data: HiGHS's tolerances are absolute
    res = linprog(cost, A_ub=A_ub, b_ub=np.concatenate([c, -c]) / scale,
                  bounds=[(None, None)] * r_dim + [(0, None)], method=method, options={"presolve": bool(presolve)})
    if res.status != 0:
        raise RuntimeError(f"HiGHS failed: {res.message}")
    y = res.x[:r_dim] * scale
    dual = np.abs(res.ineqlin.marginals[:n]) + np.abs(res.ineqlin.marginals[n:])
    return Result(x=red.x(y), fun=float(np.max(np.abs(red.residual(y)))), success=True, message=res.message,
                  nit=res.nit, dual=dual / dual.sum(), seconds=time.perf_counter() - t0)


def linf_cvxpy(A: Any, b: Any, N: Any = None, v: Any = None, *, solver: str = "CLARABEL",
               **solver_options: Any) -> Result:
    """min_{Nx=v} ||Ax - b||_inf modelled in cvxpy (the Python counterpart of CVX, which the paper
    compares with) on the design as given, and solved by ``solver``: 'CLARABEL' (cvxpy's default
    for LPs, an interior-point method like CVX's) or 'SCIPY' (HiGHS through scipy). Further
    keyword arguments go to the solver (tolerances, ``scipy_options``)."""
    import cvxpy as cp

    A, b, N, v = _check_problem(A, b, N, v)
    solver = check_choice(solver, "solver", CVXPY_SOLVERS)
    t0 = time.perf_counter()
    x = cp.Variable(A.shape[1])
    cons = [] if N is None else [N @ x == v]
    prob = cp.Problem(cp.Minimize(cp.norm(A @ x - b, "inf")), cons)
    with warnings.catch_warnings():
        # cvxpy's bound propagation multiplies infinite bounds by zero on the way (harmless)
        warnings.filterwarnings("ignore", category=RuntimeWarning, module=r"cvxpy\.")
        prob.solve(solver=solver, verbose=False, **solver_options)
    if x.value is None:
        raise RuntimeError(f"cvxpy ({solver}) returned no solution: {prob.status}")
    xv = np.asarray(x.value, dtype=float)
    return Result(x=xv, fun=float(np.max(np.abs(A @ xv - b))), success=prob.status == "optimal",
                  message=str(prob.status), seconds=time.perf_counter() - t0)


def softmax_newton(A: Any, b: Any, N: Any = None, v: Any = None, *, mu: float, tol: float = 1e-10,
                   maxiter: int = 500) -> Result:
    """Smoothing baseline: damped Newton on F_mu(x) = mu log sum_i (e^{r_i/mu} + e^{-r_i/mu}).

    F_mu is within mu log(2n) of ||r(x)||_inf; it is the log of sum_i 2 cosh(r_i / mu), a
    (1/mu)-quasi-self-concordant sum. Small mu makes F_mu nearly piecewise linear, where a
    cold Newton start stalls, so mu is reached by continuation (halving from ||r(x_LS)||_inf,
    warm-starting each stage). Each Newton step is one d x d solve; Armijo backtracking.
    """
    A, b, N, v = _check_problem(A, b, N, v)
    mu = check_positive(mu, "mu")
    tol = check_positive(tol, "tol")
    maxiter = check_int(maxiter, "maxiter", minimum=1)
    red = _reduce(A, b, N, v)
    Q, c = red.Q, red.c
    n = Q.shape[0]

    def parts(y, m):
        r = Q @ y - c
        z = np.concatenate([r, -r]) / m
        lse = logsumexp(z)
        return m * lse, np.exp(z - lse)

    t0 = time.perf_counter()
    y = Q.T @ c  # the least-squares fit on the orthonormal basis
    stage = max(mu, float(np.max(np.abs(Q @ y - c))))
    tr = Trace(f"soft-max + Newton (mu={mu:g})", meta=dict(mu=mu))
    it, success, f, dec = 0, False, np.nan, np.inf
    while it < maxiter:
        f, q = parts(y, stage)
        while it < maxiter:
            it += 1
            a = q[:n] - q[n:]  # d F / d r
            g = Q.T @ a
            H = (Q.T * ((q[:n] + q[n:]) / stage)) @ Q - np.outer(g, g) / stage
            step = -scipy.linalg.lstsq(H, g, cond=1e-12, check_finite=False)[0]
            dec = max(float(-g @ step), 0.0)  # Newton decrement^2 (>= 0 up to round-off)
            t = 1.0
            while True:
                f_new, q_new = parts(y + t * step, stage)
                if f_new <= f - 0.25 * t * dec or t < 1e-12:
                    break
                t *= 0.5
            if f_new <= f:
                y, f, q = y + t * step, f_new, q_new
            tr.record(objective=float(np.max(np.abs(Q @ y - c))), grad_norm=float(np.sqrt(dec)), step_size=t,
                      solves=it, smoothed=f, mu=stage)
            if dec / 2 <= tol * stage or t < 1e-12:
                break
        if stage <= mu:
            success = dec / 2 <= tol * stage
            break
        stage = max(mu, stage / 2)
    return Result(x=red.x(y), fun=float(np.max(np.abs(Q @ y - c))), nit=it, success=success, trace=tr, solves=it,
                  smoothed=f, seconds=time.perf_counter() - t0,
                  message="Newton decrement below tol" if success else "maxiter reached")


# --------------------------------------------------------------------------- D. QSC trust region


def logistic_loss_derivatives(t: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """f'(t), f''(t), f'''(t) of the logistic loss f(t) = log(1 + e^t) (1-quasi-self-concordant)."""
    t = np.asarray(t, dtype=float)
    if not np.all(np.isfinite(t)):
        raise ValueError("t must be finite (found NaN or inf)")
    s = expit(t)
    return s, s * (1 - s), s * (1 - s) * (1 - 2 * s)


def box_trust_region_step(g: Any, H: Any, A: Any, radius: float, *, beta: float | None = None,
                          iters: int = 300, tol: float = 1e-9) -> tuple[np.ndarray, int]:
    """argmin g^T D + 1/2 D^T H D subject to ||A D||_inf <= radius, by ADMM on y = A D.

    ADMM with scaled dual u: D <- (H + beta A^T A)^{-1} (beta A^T (y - u) - g), y <- clip(A D + u),
    u <- u + A D - y. The returned step is scaled back into the box exactly (so it is feasible),
    and the count of (prefactored) solves is returned with it. ``H`` must be symmetric positive
    semi-definite; the ADMM matrix gets a jitter relative to its trace, so a singular H + beta A^T A
    (dependent columns) still factorises.
    """
    A = check_matrix(A, "A")
    d = A.shape[1]
    g, H = check_vector(g, "g", d), check_matrix(H, "H", shape=(d, d))
    if not np.allclose(H, H.T, rtol=1e-10, atol=1e-12 * max(1.0, float(np.abs(H).max()))):
        raise ValueError("H must be symmetric")
    radius = check_positive(radius, "radius")
    iters = check_int(iters, "iters", minimum=1)
    tol = check_positive(tol, "tol")
    gram = A.T @ A
    if beta is None:
        beta = float(np.trace(H) / max(np.trace(gram), 1e-300)) + 1e-12
    beta = check_positive(beta, "beta")
    K = H + beta * gram
    try:
        fac = scipy.linalg.cho_factor(K + 1e-12 * max(np.trace(K) / d, 1e-300) * np.eye(d))
    except np.linalg.LinAlgError as err:
        raise ValueError("H must be positive semi-definite") from err
    y = np.zeros(A.shape[0])
    u = np.zeros_like(y)
    D = np.zeros(d)
    k = 0
    for k in range(1, iters + 1):
        D = scipy.linalg.cho_solve(fac, beta * (A.T @ (y - u)) - g)
        AD = A @ D
        y_new = np.clip(AD + u, -radius, radius)
        u += AD - y_new
        primal = np.linalg.norm(AD - y_new)
        dual = beta * np.linalg.norm(y_new - y)
        y = y_new
        if primal <= tol * (1 + np.linalg.norm(AD)) and dual <= tol * (1 + np.linalg.norm(g)):
            break
    worst = float(np.max(np.abs(A @ D)))
    if worst > radius:
        D = D * (radius / worst)
    return D, k


def _logistic_obj(A: np.ndarray, x: np.ndarray) -> float:
    return float(np.sum(np.logaddexp(0.0, A @ x)))


def qsc_trust_region(A: Any, x0: Any, *, M: float = 1.0, c: float = 1.0, tol: float = 1e-8,
                     maxiter: int = 100) -> Result:
    """QSC trust-region method for F(x) = sum_i f((A x)_i), f(t) = log(1 + e^t) (M = 1).

    At x_k: r = A x_k, g = A^T f'(r), H = A^T diag(f''(r)) A, and the step minimises the quadratic
    model over the residual box ||A D||_inf <= c / M, inside which QSC guarantees that the
    Hessian changes by at most e^{+-c} (so the model is trustworthy). Logistic regression with
    labels y and features Z is F with rows a_i = -y_i z_i. Each outer step records the ADMM
    solves it used (``solves``, cumulative).
    """
    A = check_matrix(A, "A")
    x = check_vector(x0, "x0", A.shape[1]).copy()
    M, c = check_positive(M, "M"), check_positive(c, "c")
    tol = check_positive(tol, "tol")
    maxiter = check_int(maxiter, "maxiter", minimum=1)
    tr = Trace("QSC trust region", meta=dict(M=M, c=c))
    solves, success, it = 0, False, 0
    for it in range(maxiter):
        d1, d2, _ = logistic_loss_derivatives(A @ x)
        g = A.T @ d1
        tr.record(objective=_logistic_obj(A, x), grad_norm=float(np.linalg.norm(g)), solves=solves)
        if np.linalg.norm(g) <= tol:
            success = True
            break
        H = (A.T * d2) @ A
        D, k = box_trust_region_step(g, H, A, c / M)
        solves += k
        x = x + D
        tr.update_last(step_size=float(np.max(np.abs(A @ D))))
    return Result(x=x, fun=_logistic_obj(A, x), nit=it, success=success, trace=tr, solves=solves,
                  message="gradient norm below tol" if success else "maxiter reached")


def damped_newton(A: Any, x0: Any, *, tol: float = 1e-8, maxiter: int = 100) -> Result:
    """Newton's method with Armijo backtracking on F(x) = sum_i log(1 + e^{(A x)_i})."""
    A = check_matrix(A, "A")
    x = check_vector(x0, "x0", A.shape[1]).copy()
    tol = check_positive(tol, "tol")
    maxiter = check_int(maxiter, "maxiter", minimum=1)
    tr = Trace("damped Newton")
    f, success, it = _logistic_obj(A, x), False, 0
    for it in range(maxiter):
        d1, d2, _ = logistic_loss_derivatives(A @ x)
        g = A.T @ d1
        tr.record(objective=f, grad_norm=float(np.linalg.norm(g)), solves=it)
        if np.linalg.norm(g) <= tol:
            success = True
            break
        H = (A.T * d2) @ A
        D = -scipy.linalg.lstsq(H, g, cond=1e-12, check_finite=False)[0]
        t = 1.0
        while _logistic_obj(A, x + t * D) > f + 0.25 * t * (g @ D) and t > 1e-12:
            t *= 0.5
        x = x + t * D
        f = _logistic_obj(A, x)
        tr.update_last(step_size=t)
    return Result(x=x, fun=f, nit=it, success=success, trace=tr, message="gradient norm below tol" if success else "maxiter reached")


def gradient_descent(A: Any, x0: Any, *, tol: float = 1e-8, maxiter: int = 2000) -> Result:
    """Gradient descent with step 1/L, L = ||A||_2^2 / 4 (the logistic loss has f'' <= 1/4)."""
    A = check_matrix(A, "A")
    x = check_vector(x0, "x0", A.shape[1]).copy()
    tol = check_positive(tol, "tol")
    maxiter = check_int(maxiter, "maxiter", minimum=1)
    norm = float(np.linalg.norm(A, 2))
    if norm == 0:
        raise ValueError("A must not be zero")
    step = 4.0 / norm**2
    tr = Trace("gradient descent")
    success, it = False, 0
    for it in range(maxiter):
        g = A.T @ logistic_loss_derivatives(A @ x)[0]
        tr.record(objective=_logistic_obj(A, x), grad_norm=float(np.linalg.norm(g)), step_size=step)
        if np.linalg.norm(g) <= tol:
            success = True
            break
        x = x - step * g
    return Result(x=x, fun=_logistic_obj(A, x), nit=it, success=success, trace=tr,
                  message="gradient norm below tol" if success else "maxiter reached")


# --------------------------------------------------------------------------- test problems


def make_linf_problem(n: int = 2000, d: int = 10, *, coherent: bool = False, pareto: float = 1.0,
                      outliers: float = 0.01, rng: RngLike = None) -> tuple[np.ndarray, np.ndarray]:
    """The card's design: Gaussian rows (``coherent`` multiplies each row by a Pareto(``pareto``)
    scale, so a few rows have leverage near 1), b = A x0 + U[-1, 1] noise, plus a fraction
    ``outliers`` of the rows shifted by +-20."""
    n, d = check_int(n, "n", minimum=1), check_int(d, "d", minimum=1)
    if n < d:
        raise ValueError(f"n must be >= d, got n={n}, d={d}")
    pareto = check_positive(pareto, "pareto")
    outliers = check_in_range(outliers, "outliers", 0.0, 1.0, closed=(True, True))
    rng = as_rng(rng)
    A = rng.standard_normal((n, d))
    if coherent:
        A *= (1.0 + rng.pareto(pareto, n))[:, None]
    x0 = rng.standard_normal(d)
    b = A @ x0 + rng.uniform(-1.0, 1.0, n)
    k = int(round(outliers * n))
    idx = rng.choice(n, k, replace=False)
    b[idx] += 20.0 * rng.choice([-1.0, 1.0], k)
    return A, b


def make_logistic_rows(n: int = 200, d: int = 2, *, separation: float = 1.5, rng: RngLike = None) -> np.ndarray:
    """Rows a_i = -y_i z_i of a two-class Gaussian logistic-regression problem (with intercept)."""
    n, d = check_int(n, "n", minimum=2), check_int(d, "d", minimum=1)
    separation = check_positive(separation, "separation", allow_zero=True)
    rng = as_rng(rng)
    y = np.where(rng.random(n) < 0.5, -1.0, 1.0)
    Z = rng.standard_normal((n, d)) + 0.5 * separation * y[:, None]
    Z = np.hstack([Z[:, : d - 1], np.ones((n, 1))]) if d > 1 else np.ones((n, 1))
    return -y[:, None] * Z
