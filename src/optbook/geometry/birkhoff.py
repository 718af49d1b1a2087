"""Chapter 11: the Birkhoff extension (Nerem, Luo, Rafiey and Wang, NeurIPS 2025).

A function ``f`` on permutations is extended to the Birkhoff polytope (doubly stochastic
matrices) by a *score-ordered* Birkhoff decomposition: a score matrix ``S`` fixes an order of all
permutations (by ``<S, P>``), permutations are peeled off a doubly stochastic ``A`` in that order,
and ``F_S(A) = sum_l alpha_l f(P_l)``. The coefficients are continuous, piecewise-linear functions
of ``A``; rounding to the best permutation of the decomposition never increases ``f``.

This module holds the method (decomposition, extension, gradient, rounding, the two optimisers:
our Frank-Wolfe reconstruction and the authors' momentum Frank-Wolfe) and the baselines
(Sinkhorn relaxation, FAQ, 2-opt, random search). The book's experiments, figures and claims are
in :mod:`optbook.geometry.birkhoff_chapter`.

Conventions. A permutation is an integer array ``perm`` of length ``n`` with ``P[i, perm[i]] = 1``.
An objective ``fun`` takes an ``(m, n)`` integer array of permutations and returns ``m`` values
(:class:`QAP` and :class:`LinearAssignment` do; :func:`as_batch_objective` wraps a function of one
permutation). The QAP is ``f(P) = trace(D^T P F P^T) = sum_ij D_ij F_{perm[i], perm[j]}``, the
convention of ``scipy.optimize.quadratic_assignment(D, F)``. Budgets are counted in evaluations
of ``f`` (``nfev``): every permutation a method scores counts, repeats included.
"""
from __future__ import annotations

import itertools
import math
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from scipy.optimize import linear_sum_assignment, quadratic_assignment

from ..core import (
    Result,
    Trace,
    as_rng,
    check_choice,
    check_in_range,
    check_int,
    check_matrix,
    check_positive,
)
from ..core.validate import RngLike

BatchObjective = Callable[[np.ndarray], np.ndarray]
SCORES = ("uniform", "gaussian", "power")
TIE_BREAKS = ("random", "first")


# --------------------------------------------------------------------------------------------
# permutations, validation
# --------------------------------------------------------------------------------------------
def check_perm(perm, name: str, n: int | None = None) -> np.ndarray:
    """A permutation of ``0..n-1`` as an int array (``ValueError`` naming ``name`` otherwise)."""
    try:
        arr = np.asarray(perm)
    except (TypeError, ValueError) as err:
        raise ValueError(f"{name} must be a permutation (1-D integer array)") from err
    if arr.ndim != 1 or arr.size == 0 or not np.issubdtype(arr.dtype, np.integer):
        raise ValueError(f"{name} must be a 1-D integer array, got shape {arr.shape}, dtype {arr.dtype}")
    if n is not None and arr.size != n:
        raise ValueError(f"{name} must have length {n}, got {arr.size}")
    if not np.array_equal(np.sort(arr), np.arange(arr.size)):
        raise ValueError(f"{name} must be a permutation of 0..{arr.size - 1}")
    return arr.astype(np.int64)


def check_perms(perms, name: str, n: int) -> tuple[np.ndarray, bool]:
    """An ``(m, n)`` integer array whose rows are permutations of ``0..n-1`` (a single 1-D
    permutation is accepted too); returns the 2-D array and whether the input was 1-D."""
    arr = np.asarray(perms)
    single = arr.ndim == 1
    p = np.atleast_2d(arr)
    if p.ndim != 2 or p.shape[1] != n or p.shape[0] == 0 or not np.issubdtype(p.dtype, np.integer):
        raise ValueError(f"{name} must be an integer array of shape (m, {n}), got shape {arr.shape}, "
                         f"dtype {arr.dtype}")
    if not (np.sort(p, axis=1) == np.arange(n)).all():
        raise ValueError(f"{name} must hold permutations of 0..{n - 1} (one per row)")
    return p, single


def check_doubly_stochastic(A, name: str, n: int | None = None, atol: float = 1e-6) -> np.ndarray:
    """A finite, non-negative ``n x n`` matrix whose rows and columns sum to 1 (within ``atol``)."""
    arr = check_matrix(A, name, shape=(n, n) if n is not None else None, square=True)
    if arr.min() < -atol:
        raise ValueError(f"{name} must be non-negative, found entry {arr.min():.3g}")
    err = max(np.abs(arr.sum(0) - 1).max(), np.abs(arr.sum(1) - 1).max())
    if err > atol:
        raise ValueError(f"{name} must be doubly stochastic (row/column sums 1), max error {err:.3g}")
    return np.maximum(arr, 0.0)


def perm_matrix(perm) -> np.ndarray:
    """The permutation matrix ``P`` with ``P[i, perm[i]] = 1``."""
    return _perm_matrix(check_perm(perm, "perm"))


def _perm_matrix(perm: np.ndarray) -> np.ndarray:
    """:func:`perm_matrix` of a validated permutation (the optimisers' inner loop)."""
    P = np.zeros((perm.size, perm.size))
    P[np.arange(perm.size), perm] = 1.0
    return P


def all_permutations(n: int) -> np.ndarray:
    """All ``n!`` permutations of ``0..n-1`` as an ``(n!, n)`` array, lexicographic (n <= 9)."""
    n = check_int(n, "n", minimum=1)
    if n > 9:
        raise ValueError(f"n must be <= 9 for enumeration (n! rows), got {n}")
    return _all_perms(n)


@lru_cache(maxsize=10)
def _all_perms(n: int) -> np.ndarray:
    out = np.array(list(itertools.permutations(range(n))), dtype=np.int64)
    out.setflags(write=False)
    return out


def as_batch_objective(f: Callable[[np.ndarray], float]) -> BatchObjective:
    """Wrap a function of one permutation into the batch form ``fun(perms) -> values``."""
    if not callable(f):
        raise ValueError("f must be callable")

    def fun(perms: np.ndarray) -> np.ndarray:
        return np.array([float(f(p)) for p in np.atleast_2d(perms)])

    return fun


def _evaluate(fun: BatchObjective, perms: np.ndarray) -> np.ndarray:
    if isinstance(fun, (QAP, LinearAssignment)):  # our objectives: no need to re-check our permutations
        return fun._values(np.atleast_2d(perms))
    values = np.asarray(fun(np.atleast_2d(perms)), dtype=float).reshape(-1)
    if values.shape[0] != np.atleast_2d(perms).shape[0]:
        raise ValueError(f"fun must return one value per permutation, got {values.shape[0]} for "
                         f"{np.atleast_2d(perms).shape[0]}")
    if not np.isfinite(values).all():
        raise ValueError("fun returned a non-finite value")
    return values


def _check_fun(fun, n: int, what: str = "n") -> None:
    """``fun`` is callable and, when it knows its size (``fun.n``), permutes ``n`` items."""
    if not callable(fun):
        raise ValueError("fun must be callable (a batch objective fun(perms) -> values)")
    if getattr(fun, "n", n) != n:
        raise ValueError(f"{what} must match fun, which permutes {fun.n} items, got {n}")


def _check_fun_n(fun, n) -> int:
    n = check_int(n, "n", minimum=2)
    _check_fun(fun, n)
    return n


# --------------------------------------------------------------------------------------------
# objectives
# --------------------------------------------------------------------------------------------
class QAP:
    """Quadratic assignment ``f(P) = trace(D^T P F P^T) = sum_ij D_ij F_{perm[i], perm[j]}``.

    ``D`` is the "distance" and ``F`` the "flow" matrix (the paper's and scipy's convention). The
    *naive relaxation* ``f_hat(A) = trace(D^T A F A^T)`` is what Sinkhorn and FAQ minimise.
    """

    def __init__(self, D, F):
        self.D = check_matrix(D, "D", square=True)
        self.F = check_matrix(F, "F", shape=self.D.shape)
        self.n = self.D.shape[0]

    def __call__(self, perms) -> np.ndarray | float:
        p, single = check_perms(perms, "perms", self.n)
        vals = self._values(p)
        return float(vals[0]) if single else vals

    def _values(self, p: np.ndarray) -> np.ndarray:
        return (self.F[p[:, :, None], p[:, None, :]] * self.D).sum(axis=(1, 2))

    def _check_A(self, A) -> np.ndarray:
        return check_matrix(A, "A", shape=(self.n, self.n))

    def relaxed(self, A) -> float:
        """The naive relaxation ``trace(D^T A F A^T)``."""
        return _qap_relaxed(self, self._check_A(A))

    def relaxed_grad(self, A) -> np.ndarray:
        """Gradient of :meth:`relaxed`: ``D A F^T + D^T A F``."""
        return _qap_relaxed_grad(self, self._check_A(A))


def _qap_relaxed(q: QAP, A: np.ndarray) -> float:
    return float(np.sum(q.D * (A @ q.F @ A.T)))


def _qap_relaxed_grad(q: QAP, A: np.ndarray) -> np.ndarray:
    return q.D @ A @ q.F.T + q.D.T @ A @ q.F


class LinearAssignment:
    """Linear assignment ``f(P) = <C, P> = sum_i C[i, perm[i]]`` (its extension is ``<C, A>``)."""

    def __init__(self, C):
        self.C = check_matrix(C, "C", square=True)
        self.n = self.C.shape[0]

    def __call__(self, perms) -> np.ndarray | float:
        p, single = check_perms(perms, "perms", self.n)
        vals = self._values(p)
        return float(vals[0]) if single else vals

    def _values(self, p: np.ndarray) -> np.ndarray:
        return self.C[np.arange(self.n), p].sum(axis=1)


def qap_instance(n: int = 8, rng: RngLike = None) -> QAP:
    """A random QAP: ``D`` the distances of ``n`` uniform points in the unit square, ``F`` a random
    symmetric flow with entries U[0, 1] and zero diagonal (the card's CPU-scale instance)."""
    n = check_int(n, "n", minimum=2)
    g = as_rng(rng)
    pts = g.random((n, 2))
    D = np.linalg.norm(pts[:, None] - pts[None], axis=-1)
    F = np.triu(g.random((n, n)), 1)
    return QAP(D, F + F.T)


def tsp_qap(points) -> QAP:
    """The travelling-salesperson tour length as a QAP: ``D`` = city distances, ``F`` = the
    cyclic "next position" matrix (``F[a, a+1 mod n] = 1``); ``perm[i]`` is the tour position of
    city ``i``, and ``f`` is the length of the closed tour."""
    pts = check_matrix(points, "points", shape=(None, 2))
    n = pts.shape[0]
    if n < 3:
        raise ValueError(f"points must hold at least 3 cities, got {n}")
    D = np.linalg.norm(pts[:, None] - pts[None], axis=-1)
    F = np.zeros((n, n))
    F[np.arange(n), (np.arange(n) + 1) % n] = 1.0
    return QAP(D, F)


def brute_force(fun: BatchObjective, n: int, chunk: int = 8192) -> tuple[np.ndarray, float]:
    """Exact minimiser of ``fun`` over all ``n!`` permutations (vectorised, ``n <= 9``)."""
    perms = all_permutations(n)
    _check_fun(fun, n)
    chunk = check_int(chunk, "chunk", minimum=1)
    vals = np.concatenate([_evaluate(fun, perms[i:i + chunk]) for i in range(0, len(perms), chunk)])
    best = int(np.argmin(vals))
    return perms[best].copy(), float(vals[best])


# --------------------------------------------------------------------------------------------
# scores, Sinkhorn
# --------------------------------------------------------------------------------------------
def score_matrix(n: int, kind: str = "uniform", rng: RngLike = None) -> np.ndarray:
    """An *identifying* score matrix ``S`` (distinct ``<S, P>`` for all permutations).

    ``uniform``/``gaussian``: i.i.d. entries (identifying with probability 1, the default);
    ``power``: ``S[i, j] = 2^(i + n j)`` (identifying exactly; float64 is exact only for n <= 7).
    """
    n = check_int(n, "n", minimum=1)
    kind = check_choice(kind, "kind", SCORES)
    if kind == "power":
        if n > 7:
            raise ValueError(f"n must be <= 7 for the 'power' score (float64 exactness), got {n}")
        i, j = np.indices((n, n))
        return np.exp2(i + n * j).astype(float)
    g = as_rng(rng)
    return g.random((n, n)) if kind == "uniform" else g.standard_normal((n, n))


def warm_score(perm0, rng: RngLike = None) -> np.ndarray:
    """The warm-start score ``S = P0 + Q / (2n)``, ``Q_ij ~ U[0, 1/n^2]``: ``P0`` comes first in
    the order (used for local improvement and the *dynamic score*)."""
    perm0 = check_perm(perm0, "perm0")
    n = perm0.size
    return perm_matrix(perm0) + as_rng(rng).random((n, n)) / (2 * n ** 3)


def sinkhorn(M, tol: float = 1e-12, maxiter: int = 10_000) -> np.ndarray:
    """Sinkhorn projection: alternately normalise rows and columns of a positive matrix until
    every row and column sum is within ``tol`` of 1 (Sinkhorn-Knopp).

    The result does not change when ``M`` is multiplied by a constant, so ``M`` is first divided
    by its largest entry: entries of 1e300 neither overflow the row sums nor lose precision."""
    A = check_matrix(M, "M", square=True)
    if A.min() <= 0:
        raise ValueError("M must have positive entries")
    tol = check_positive(tol, "tol")
    maxiter = check_int(maxiter, "maxiter", minimum=1)
    A = A / A.max()
    for _ in range(maxiter):
        A = A / A.sum(axis=1, keepdims=True)
        A = A / A.sum(axis=0, keepdims=True)
        if np.abs(A.sum(axis=1) - 1).max() <= tol:
            break
    return A


def _log_sinkhorn(Z: np.ndarray, iters: int) -> np.ndarray:
    """``log Sinkhorn(exp(Z))``, computed in the log domain (no underflow at small temperatures)."""
    for _ in range(iters):
        m = Z.max(axis=1, keepdims=True)
        Z = Z - (m + np.log(np.exp(Z - m).sum(axis=1, keepdims=True)))
        m = Z.max(axis=0, keepdims=True)
        Z = Z - (m + np.log(np.exp(Z - m).sum(axis=0, keepdims=True)))
    return Z


def random_doubly_stochastic(n: int, rng: RngLike = None, *, kind: str = "sinkhorn",
                             n_perms: int = 4) -> np.ndarray:
    """A random doubly stochastic matrix: Sinkhorn of ``exp(2 Z)`` (``kind='sinkhorn'``, dense) or
    a Dirichlet mixture of ``n_perms`` random permutations (``kind='mixture'``, sparse)."""
    n = check_int(n, "n", minimum=1)
    kind = check_choice(kind, "kind", ("sinkhorn", "mixture"))
    g = as_rng(rng)
    if kind == "sinkhorn":
        return sinkhorn(np.exp(2.0 * g.standard_normal((n, n))))
    n_perms = check_int(n_perms, "n_perms", minimum=1)
    w = g.dirichlet(np.ones(n_perms))
    return sum(wi * perm_matrix(g.permutation(n)) for wi in w)


# --------------------------------------------------------------------------------------------
# the score-ordered (continuous) Birkhoff decomposition and the extension
# --------------------------------------------------------------------------------------------
@dataclass
class BirkhoffDecomposition:
    """``A = sum_l alphas[l] P_l (+ residual)``: permutations ``perms[l]`` in decreasing score,
    and the entry ``pivots[l] = (i, j)`` at which ``alpha_l`` is the minimum of the residual."""

    alphas: np.ndarray
    perms: np.ndarray
    pivots: np.ndarray
    residual: np.ndarray
    values: np.ndarray | None = None

    def __len__(self) -> int:
        return len(self.alphas)

    def matrix(self) -> np.ndarray:
        """``sum_l alpha_l P_l``."""
        n = self.residual.shape[0]
        out = np.zeros((n, n))
        for a, p in zip(self.alphas, self.perms):
            out[np.arange(n), p] += a
        return out

    def alpha_gradients(self) -> np.ndarray:
        """``d alpha_l / d A`` for every term, shape ``(m, n, n)``, by the sparse recursion
        ``grad alpha_l = E_(i_l j_l) - sum_{m<l} P_m(i_l, j_l) grad alpha_m`` (valid where the
        permutations and pivots do not change, i.e. almost everywhere)."""
        m, n = len(self.alphas), self.residual.shape[0]
        G = np.zeros((m, n, n))
        for ell, (i, j) in enumerate(self.pivots):
            G[ell, i, j] = 1.0
            hit = self.perms[:ell, i] == j
            if hit.any():
                G[ell] -= G[:ell][hit].sum(axis=0)
        return G

    def gradient(self, weights) -> np.ndarray:
        """``sum_l weights[l] grad alpha_l`` without forming the ``alpha_gradients``: the recursion
        says ``grad alpha = L^-1 E`` with ``L`` unit lower-triangular, ``L[l, m] = P_m(i_l, j_l)``,
        so the sum is ``sum_l c_l E_(i_l j_l)`` with ``L^T c = weights``. It lives on the pivots:
        a matrix with one nonzero entry per term."""
        w = np.asarray(weights, dtype=float)
        m = len(self.alphas)
        if w.shape != (m,):
            raise ValueError(f"weights must have one entry per term ({m}), got shape {w.shape}")
        if not np.isfinite(w).all():
            raise ValueError("weights must be finite (found NaN or inf)")
        return self._gradient(w)

    def _gradient(self, w: np.ndarray) -> np.ndarray:
        """:meth:`gradient` for validated weights (the optimisers' inner loop)."""
        m, n = len(self.alphas), self.residual.shape[0]
        pi, pj = self.pivots[:, 0], self.pivots[:, 1]
        hits = self.perms[:, pi].T == pj[:, None]  # hits[l, q] = P_q(i_l, j_l)
        c = w.copy()
        for ell in range(m - 2, -1, -1):  # back substitution, L^T c = w
            c[ell] -= hits[ell + 1:, ell] @ c[ell + 1:]
        grad = np.zeros((n, n))
        grad[pi, pj] = c  # pivots are distinct: each leaves the support once used
        return grad


def birkhoff_decomposition(A, S, k: int | None = None, tol: float = 1e-12) -> BirkhoffDecomposition:
    """Score-induced Birkhoff decomposition of ``A`` (the paper's continuous Birkhoff
    decomposition), truncated to the first ``k`` nonzero terms when ``k`` is given.

    Every permutation in decreasing order of ``<S, P>`` takes ``alpha = min_i B[i, perm[i]]`` of
    the residual ``B`` (initially ``A``) and is subtracted; permutations meeting a zero entry get
    ``alpha = 0``, so the nonzero terms are found greedily: the next one is the highest-score
    permutation inside the support ``B > tol`` (Hungarian method, forbidden entries scored far
    below any allowed one). At most ``(n-1)^2 + 1`` terms.
    """
    A = check_matrix(A, "A", square=True)
    n = A.shape[0]
    S = check_matrix(S, "S", shape=(n, n))
    if A.min() < -1e-9:
        raise ValueError(f"A must be non-negative, found entry {A.min():.3g}")
    if k is not None:
        k = check_int(k, "k", minimum=1)
    tol = check_in_range(tol, "tol", 0.0, 1e-3, closed=(True, False))
    kmax = (n - 1) ** 2 + 1 if k is None else min(k, (n - 1) ** 2 + 1)
    return _decompose(A, S, kmax, tol)


def _decompose(A: np.ndarray, S: np.ndarray, kmax: int, tol: float) -> BirkhoffDecomposition:
    """:func:`birkhoff_decomposition` on validated input (the optimisers' inner loop)."""
    n = A.shape[0]
    # The order of <S, P> is unchanged by S -> (S - c) / s (s > 0): map S onto [0, 1] first, so
    # that a forbidden score of -(n + 1) is below every allowed permutation whatever the scale of
    # S (no overflow of n * spread for scores of 1e300, no absorption for scores around 1e16).
    lo, spread = float(S.min()), float(S.max() - S.min())
    Sn = (S - lo) / spread if spread > 0 else np.zeros_like(S)
    forbidden = -(n + 1.0)
    B = np.maximum(A, 0.0)
    C = np.where(B > tol, Sn, forbidden)  # scores, with the entries outside the support forbidden
    mass = total = B.sum() / n
    rows = np.arange(n)
    alphas, perms, pivots = [], [], []
    while len(alphas) < kmax and mass > tol * max(total, 1.0):
        _, perm = linear_sum_assignment(C, maximize=True)
        vals = B[rows, perm]
        i = int(vals.argmin())
        a = float(vals[i])
        if a <= tol:
            break  # no perfect matching left inside the support (round-off)
        vals -= a
        vals[i] = 0.0
        B[rows, perm] = vals
        gone = vals <= tol  # only entries of this permutation can leave the support
        C[rows[gone], perm[gone]] = forbidden
        mass -= a
        alphas.append(a)
        perms.append(perm)
        pivots.append((i, int(perm[i])))
    return BirkhoffDecomposition(np.array(alphas), np.array(perms, dtype=np.int64).reshape(-1, n),
                                 np.array(pivots, dtype=np.int64).reshape(-1, 2), B)


def _ext_from_dec(values: np.ndarray, dec: BirkhoffDecomposition, normalize: bool) -> float:
    s = dec.alphas.sum()
    val = float(dec.alphas @ values)
    return val / s if normalize else val


def _check_flag(value, name: str) -> bool:
    if not isinstance(value, (bool, np.bool_)):
        raise ValueError(f"{name} must be True or False, got {value!r}")
    return bool(value)


def birkhoff_extension(fun: BatchObjective, A, S, k: int | None = None, *, normalize: bool | None = None,
                       tol: float = 1e-12, return_grad: bool = False):
    """The Birkhoff extension ``F_S(A) = sum_l alpha_l f(P_l)`` (BE in the paper).

    With ``k`` the decomposition is truncated to ``k`` terms and, by default, normalised:
    ``F_S^(k)(A) = sum_{l<=k} alpha_l f(P_l) / sum_{l<=k} alpha_l`` (the authors' code).
    With ``return_grad`` returns ``(value, grad, decomposition)`` (the decomposition then carries
    ``values = f(P_l)``); the gradient holds the selected
    permutations fixed (they are piecewise constant in ``A``) and differentiates the ``alpha``'s,
    one element of the Clarke generalised gradient at kinks.
    """
    normalize = (k is not None) if normalize is None else _check_flag(normalize, "normalize")
    return_grad = _check_flag(return_grad, "return_grad")
    dec = birkhoff_decomposition(A, S, k, tol)
    _check_fun(fun, dec.residual.shape[0], "A's size")
    if len(dec) == 0:
        raise ValueError("A has no permutation in its support (is it doubly stochastic?)")
    values = _evaluate(fun, dec.perms)
    val = _ext_from_dec(values, dec, normalize)
    if not return_grad:
        return val
    weights = (values - val) / dec.alphas.sum() if normalize else values
    grad = dec.gradient(weights)
    dec.values = values
    return val, grad, dec


def extension_torch(fun: BatchObjective, A, S, k: int | None = None, *, normalize: bool | None = None,
                    tol: float = 1e-12):
    """``F_S(A)`` as a differentiable torch scalar of a torch matrix ``A`` (for autograd and
    neural combinatorial optimisation): the permutations are chosen on ``A.detach()``, the
    ``alpha``'s are recomputed with torch ``min`` and subtractions."""
    import torch

    if not isinstance(A, torch.Tensor):
        raise ValueError("A must be a torch.Tensor")
    normalize = (k is not None) if normalize is None else _check_flag(normalize, "normalize")
    dec = birkhoff_decomposition(A.detach().cpu().numpy().astype(float), S, k, tol)
    _check_fun(fun, dec.residual.shape[0], "A's size")
    if len(dec) == 0:
        raise ValueError("A has no permutation in its support (is it doubly stochastic?)")
    values = torch.as_tensor(_evaluate(fun, dec.perms), dtype=A.dtype)
    n = A.shape[0]
    rows = torch.arange(n)
    B = A
    alphas = []
    for perm in dec.perms:
        p = torch.as_tensor(perm)
        a = B[rows, p].min()
        alphas.append(a)
        P = torch.zeros(n, n, dtype=A.dtype)
        P[rows, p] = 1.0
        B = B - a * P
    al = torch.stack(alphas)
    val = (al * values).sum()
    return val / al.sum() if normalize else val


def round_birkhoff(fun: BatchObjective, A, S, k: int | None = None, tol: float = 1e-12) -> tuple[np.ndarray, float]:
    """``round_S(A)``: the best permutation of the (truncated) decomposition, with its value.
    The rounding guarantee is ``f(round_S(A)) <= F_S(A)``."""
    dec = birkhoff_decomposition(A, S, k, tol)
    _check_fun(fun, dec.residual.shape[0], "A's size")
    if len(dec) == 0:
        raise ValueError("A has no permutation in its support (is it doubly stochastic?)")
    values = _evaluate(fun, dec.perms)
    best = int(np.argmin(values))
    return dec.perms[best].copy(), float(values[best])


def bottleneck_decomposition(A, k: int | None = None, tol: float = 1e-12) -> BirkhoffDecomposition:
    """The classical greedy Birkhoff decomposition (baseline for continuity): each step takes the
    *bottleneck* permutation, the one whose smallest residual entry is largest. The choice depends
    on ``A`` itself, so the coefficients jump."""
    A = check_matrix(A, "A", square=True)
    if A.min() < -1e-9:
        raise ValueError(f"A must be non-negative, found entry {A.min():.3g}")
    n = A.shape[0]
    kmax = (n - 1) ** 2 + 1 if k is None else check_int(k, "k", minimum=1)
    tol = check_in_range(tol, "tol", 0.0, 1e-3, closed=(True, False))
    B = np.maximum(A, 0.0)
    rows = np.arange(n)
    alphas, perms, pivots = [], [], []
    while len(alphas) < kmax and B.sum() / n > tol:
        levels = np.unique(B[B > tol])
        lo, hi, best = 0, len(levels) - 1, None
        while lo <= hi:  # binary search for the largest threshold with a perfect matching
            mid = (lo + hi) // 2
            mask = B >= levels[mid]
            r, c = linear_sum_assignment(mask.astype(float), maximize=True)
            if mask[r, c].all():
                best, lo = c, mid + 1
            else:
                hi = mid - 1
        if best is None:
            break
        vals = B[rows, best]
        i = int(np.argmin(vals))
        a = float(vals[i])
        B[rows, best] -= a
        B[rows[i], best[i]] = 0.0
        alphas.append(a)
        perms.append(best)
        pivots.append((i, int(best[i])))
    return BirkhoffDecomposition(np.array(alphas), np.array(perms, dtype=np.int64).reshape(-1, n),
                                 np.array(pivots, dtype=np.int64).reshape(-1, 2), B)


# --------------------------------------------------------------------------------------------
# Frank-Wolfe's linear minimisation oracle
# --------------------------------------------------------------------------------------------
def _lmo(G: np.ndarray, g: np.random.Generator | None) -> np.ndarray:
    """:func:`assignment_lmo` on validated input (``g`` None: the solver's own tie-breaking)."""
    _, first = linear_sum_assignment(G)
    if g is None:
        return first
    n = G.shape[0]
    scale = float(np.abs(G).max())
    if scale == 0.0:
        return g.permutation(n)  # every permutation is a minimiser
    _, perm = linear_sum_assignment(G + (1e-9 * scale) * g.random(G.shape))
    rows = np.arange(n)
    # Accept the perturbed answer only if it is a true minimiser (up to round-off): the noise may
    # choose among tied permutations, never trade a worse one for it.
    return perm if G[rows, perm].sum() <= G[rows, first].sum() + 1e-12 * n * scale else first


def assignment_lmo(G, rng: RngLike = None, *, tie_break: str = "random") -> np.ndarray:
    """Frank-Wolfe's linear minimisation over the Birkhoff polytope: a permutation minimising
    ``<G, P>`` (Hungarian method).

    The gradient of a truncated Birkhoff extension is sparse (one pivot entry per term), so many
    permutations tie. ``tie_break='first'`` returns the solver's fixed choice, which favours the
    same columns at every step; ``'random'`` returns a random minimiser (the one a perturbation
    of relative size 1e-9 selects, kept only if it is still a minimiser of ``G``)."""
    G = check_matrix(G, "G", square=True)
    tie_break = check_choice(tie_break, "tie_break", TIE_BREAKS)
    return _lmo(G, as_rng(rng) if tie_break == "random" else None)


# --------------------------------------------------------------------------------------------
# optimisers: BE + Frank-Wolfe (our reconstruction) and the authors' momentum Frank-Wolfe
# --------------------------------------------------------------------------------------------
def _check_budget(maxiter, max_evals) -> tuple[int, int | None]:
    maxiter = check_int(maxiter, "maxiter", minimum=1)
    if max_evals is not None:
        max_evals = check_int(max_evals, "max_evals", minimum=1)
    return maxiter, max_evals


def be_frank_wolfe(fun: BatchObjective, n: int, *, k: int = 5, step: float = 0.2, maxiter: int = 300,
                   max_evals: int | None = None, score_period: int | None = 10, perm0=None, A0=None,
                   restart_mix: float = 0.5, tie_break: str = "random", rng: RngLike = None) -> Result:
    """Minimise ``f`` over permutations by Frank-Wolfe on the truncated Birkhoff extension
    ``F_S^(k)`` (the card's reconstruction of the paper's Algorithms 3-4: see the chapter).

    Each step: ``grad = grad F_S^(k)(A_t)``, linear minimisation ``P_t = argmin_P <grad, P>``
    (:func:`assignment_lmo`, ties broken as ``tie_break`` says), ``A_{t+1} = (1 - step) A_t +
    step P_t``; every decomposed permutation is a candidate, and the best one seen (``P_best``)
    is returned. *Dynamic score*: every ``score_period`` steps ``S`` is reset to the warm score
    of ``P_best`` and ``A`` restarts at ``(1 - restart_mix) P_best + restart_mix J / n``
    (``J`` = all ones). *Local improvement*: with ``perm0`` the first score favours ``perm0``, the
    start is ``(1 - restart_mix) P0 + restart_mix J / n`` and ``f(perm0)`` is the first incumbent,
    so the result is never worse than ``perm0``. Stops after ``maxiter`` steps or once
    ``max_evals`` evaluations of ``f`` are spent.

    The trace records ``objective`` = ``F_S^(k)(A_t)``, ``rounded`` = ``f(round_S(A_t))``,
    ``best`` (incumbent value) and ``n_evals`` (cumulative evaluations of ``f``).
    """
    n = _check_fun_n(fun, n)
    k = check_int(k, "k", minimum=1)
    step = check_in_range(step, "step", 0.0, 1.0, closed=(False, True))
    maxiter, max_evals = _check_budget(maxiter, max_evals)
    if score_period is not None:
        score_period = check_int(score_period, "score_period", minimum=1)
    restart_mix = check_in_range(restart_mix, "restart_mix", 0.0, 1.0, closed=(False, True))
    tie_break = check_choice(tie_break, "tie_break", TIE_BREAKS)
    g = as_rng(rng)
    lmo_rng = g if tie_break == "random" else None
    J = np.full((n, n), 1.0 / n)
    best_perm, best_val, n_evals = None, np.inf, 0
    if perm0 is not None:
        best_perm = check_perm(perm0, "perm0", n)
        best_val = float(_evaluate(fun, best_perm)[0])
        n_evals = 1
        S = warm_score(best_perm, g)
        A = (1 - restart_mix) * perm_matrix(best_perm) + restart_mix * J
    else:
        S = score_matrix(n, "uniform", g)
        A = J.copy()
    if A0 is not None:
        A = check_doubly_stochastic(A0, "A0", n)
    trace = Trace("BE + Frank-Wolfe" if perm0 is None else "BE from warm start",
                  meta=dict(k=k, step=step, score_period=score_period, n=n, tie_break=tie_break))
    rows = np.arange(n)
    t = 0
    while t < maxiter and (max_evals is None or n_evals < max_evals):
        if score_period is not None and t > 0 and t % score_period == 0 and best_perm is not None:
            S = warm_score(best_perm, g)
            A = (1 - restart_mix) * _perm_matrix(best_perm) + restart_mix * J
        dec = _decompose(A, S, k, 1e-12)
        values = _evaluate(fun, dec.perms)
        mass = dec.alphas.sum()
        val = float(dec.alphas @ values) / mass
        grad = dec._gradient((values - val) / mass)
        n_evals += len(dec)
        i = int(np.argmin(values))
        if values[i] < best_val:
            best_val, best_perm = float(values[i]), dec.perms[i].copy()
        trace.record(objective=val, grad_norm=float(np.linalg.norm(grad)), step_size=step,
                     rounded=float(values[i]), best=best_val, n_evals=n_evals)
        target = _lmo(grad, lmo_rng)
        A = (1 - step) * A
        A[rows, target] += step
        t += 1
    return Result(x=best_perm, fun=best_val, nit=t, nfev=n_evals, success=True,
                  message="budget reached", trace=trace, A=A)


def _random_doubly_stochastic_ipf(n: int, g: np.random.Generator, iters: int = 5) -> np.ndarray:
    """The authors' random start: U[0, 1] entries, columns then rows normalised ``iters`` times
    (their ``ipf``; five iterations leave it approximately doubly stochastic)."""
    W = g.random((n, n))
    for _ in range(iters):
        W = W / W.sum(axis=0, keepdims=True)
        W = W / W.sum(axis=1, keepdims=True)
    return W


def be_momentum_frank_wolfe(fun: BatchObjective, n: int, *, k: int = 5, lr: float = 0.1,
                            momentum: float = 0.9, period: int | None = None, jitter: float = 0.15,
                            dynamic_k: bool = True, tie_break: str = "first", maxiter: int = 300,
                            max_evals: int | None = None, rng: RngLike = None) -> Result:
    """The authors' optimiser for BE (their repository's ``qap/solve_qap_grad_be.py``, mode
    ``pgd+k+<k>``), reimplemented in numpy; the gradient is the same as their autograd one.

    State: a weight matrix ``W`` (``A = |W|``), a momentum buffer ``m`` and the score base
    ``P_best`` (at first a random doubly stochastic matrix, then the best permutation found).
    Each step:

    - the score is redrawn, ``S = (1 - jitter) P_best + jitter U[0, 1]``;
    - ``F_S^(k)(A)`` and its gradient ``G`` (truncated, normalised extension); the best of the
      ``k`` permutations is the step's candidate;
    - Frank-Wolfe with momentum: ``G`` is centred (row means, then column means removed),
      ``P = argmin <G, P>`` (:func:`assignment_lmo`; their code keeps the solver's tie-breaking,
      ``tie_break='first'``), ``m <- momentum m + s (P - W)`` with ``s = lr / (1 + log(1 +
      ||G||))``, ``W <- W + m``;
    - *dynamic score*: with ``period`` None, whenever the candidate beats the incumbent it
      becomes ``P_best`` and ``W`` restarts at a fresh random doubly stochastic matrix; with
      ``period = M`` this happens every ``M`` steps with the period's best candidate;
    - *dynamic k* (``dynamic_k``): while no improvement is found, ``k`` grows by 30% once the
      extension has collapsed onto its best term for long (their counter ``pt_en``), and falls
      back to its initial value when it spreads out.

    The repository stops on a wall-clock budget (4n seconds); here ``maxiter`` steps or
    ``max_evals`` evaluations of ``f``. Their decomposition also scores (and may return)
    permutations met after the mass is exhausted, with weight 0; ours stops there.
    """
    n = _check_fun_n(fun, n)
    k0 = check_int(k, "k", minimum=1)
    lr = check_positive(lr, "lr")
    momentum = check_in_range(momentum, "momentum", 0.0, 1.0, closed=(True, False))
    if period is not None:
        period = check_int(period, "period", minimum=1)
    jitter = check_in_range(jitter, "jitter", 0.0, 1.0, closed=(True, True))
    dynamic_k = _check_flag(dynamic_k, "dynamic_k")
    tie_break = check_choice(tie_break, "tie_break", TIE_BREAKS)
    maxiter, max_evals = _check_budget(maxiter, max_evals)
    g = as_rng(rng)
    lmo_rng = g if tie_break == "random" else None
    base = _random_doubly_stochastic_ipf(n, g)
    W = _random_doubly_stochastic_ipf(n, g)
    buf = np.zeros((n, n))
    k, pt_en = k0, 0.0
    best_val, best_perm = np.inf, None
    cand_val, cand_perm = np.inf, None
    n_evals, t, counter = 0, 0, 0
    trace = Trace("BE, authors' optimiser", meta=dict(k=k0, lr=lr, period=period, n=n, tie_break=tie_break))
    while t < maxiter and (max_evals is None or n_evals < max_evals):
        A = np.abs(W)
        S = (1 - jitter) * base + jitter * g.random((n, n))
        dec = _decompose(A, S, min(k, (n - 1) ** 2 + 1), 1e-12)
        if len(dec) == 0:  # momentum left no permutation inside |W|'s support: restart the point
            W, t = _random_doubly_stochastic_ipf(n, g), t + 1
            continue
        values = _evaluate(fun, dec.perms)
        n_evals += len(dec)
        mass = dec.alphas.sum()
        loss = float(dec.alphas @ values) / mass
        grad = dec._gradient((values - loss) / mass) * np.sign(W)
        i = int(np.argmin(values))
        tl, perm = float(values[i]), dec.perms[i].copy()
        if tl < cand_val:
            cand_val, cand_perm = tl, perm
        restart = False
        if period is None:
            if tl < best_val:
                best_val, best_perm, k, pt_en, restart = tl, perm, k0, 0.0, True
        else:
            counter += 1
            if counter >= period:
                if cand_val < best_val:
                    best_val, best_perm, k, pt_en = cand_val, cand_perm, k0, 0.0
                cand_val, counter, restart = np.inf, 0, True
        if restart:
            base = _perm_matrix(best_perm)
            W = _random_doubly_stochastic_ipf(n, g)
        if dynamic_k and tl >= best_val:  # their order: this also runs right after an improvement
            gap = abs(loss - tl) / (tl + 1e-3)
            pt_en += 0.01 if gap <= 0.005 else (-0.01 if gap >= 0.1 else 0.0)
            if pt_en >= 1 and k <= n:
                k, pt_en = int(k * 1.3) + 1, 0.0
            if pt_en <= -1 and k > k0:
                k, pt_en = k0, 0.0
        # Row then column means removed; sum / n is what ndarray.mean computes, bit for bit.
        G = grad - grad.sum(axis=1, keepdims=True) / n
        G = G - G.sum(axis=0, keepdims=True) / n
        flat = G.ravel()
        gnorm = math.sqrt(float(flat @ flat))  # np.linalg.norm's own formula, without its dispatch
        s = lr / (1 + np.log1p(gnorm))
        buf = momentum * buf + s * (_perm_matrix(_lmo(G, lmo_rng)) - W)
        W = W + buf
        trace.record(objective=loss, grad_norm=gnorm, step_size=s, rounded=tl,
                     best=min(best_val, cand_val), n_evals=n_evals, k=len(dec))
        t += 1
    best_val, best_perm = (best_val, best_perm) if best_val <= cand_val else (cand_val, cand_perm)
    return Result(x=best_perm, fun=float(best_val), nit=t, nfev=n_evals, success=True,
                  message="budget reached", trace=trace, A=np.abs(W))


# --------------------------------------------------------------------------------------------
# baselines
# --------------------------------------------------------------------------------------------
def sinkhorn_gd(qap: QAP, *, tau: float = 0.2, lr: float = 0.5, maxiter: int = 300,
                sinkhorn_iters: int = 5, rng: RngLike = None) -> Result:
    """Baseline: the Sinkhorn relaxation. ``A = Sinkhorn(exp(W / tau))`` minimises the naive
    relaxation ``trace(D^T A F A^T)`` by entropic mirror descent, ``W <- W - lr * grad_A / scale``
    with ``scale = n max|D| max|F|`` (the KL-projected gradient step on the Birkhoff polytope).
    Sinkhorn is run in the log domain, warm-started from the previous iterate (``Sinkhorn(exp(Z))``
    only depends on ``Z`` up to row and column constants, so ``log A_t`` can stand for ``W_t / tau``).
    Every iterate is rounded by the Hungarian method (``argmax_P <A, P>``) and the best rounded
    permutation is returned (one evaluation of ``f`` per step). There is no rounding guarantee,
    and unlike BE it needs the QAP's formula (its gradient), not only values of ``f``."""
    if not isinstance(qap, QAP):
        raise ValueError("qap must be a QAP")
    tau = check_positive(tau, "tau")
    lr = check_positive(lr, "lr")
    maxiter = check_int(maxiter, "maxiter", minimum=1)
    sinkhorn_iters = check_int(sinkhorn_iters, "sinkhorn_iters", minimum=1)
    n = qap.n
    g = as_rng(rng)
    Z = _log_sinkhorn(0.01 * g.standard_normal((n, n)) / tau, 50)
    scale = float(np.abs(qap.D).max() * np.abs(qap.F).max() * n) or 1.0
    trace = Trace("Sinkhorn-GD", meta=dict(tau=tau, lr=lr))
    best_val, best_perm = np.inf, None
    for t in range(maxiter):
        A = np.exp(Z)
        _, perm = linear_sum_assignment(A, maximize=True)
        val = float(qap._values(perm[None])[0])
        if val < best_val:
            best_val, best_perm = val, perm
        grad = _qap_relaxed_grad(qap, A)
        trace.record(objective=_qap_relaxed(qap, A), step_size=lr, rounded=val, best=best_val,
                     n_evals=t + 1)
        Z = _log_sinkhorn(Z - lr * grad / (scale * tau), sinkhorn_iters)
    return Result(x=np.asarray(best_perm, dtype=np.int64), fun=float(best_val), nit=maxiter, nfev=maxiter,
                  success=True, message="maximum number of iterations reached", trace=trace, A=np.exp(Z))


def faq(qap: QAP, rng: RngLike = None) -> Result:
    """Baseline: FAQ (Vogelstein et al.), Frank-Wolfe on the relaxed QAP, via
    ``scipy.optimize.quadratic_assignment(method='faq')``."""
    if not isinstance(qap, QAP):
        raise ValueError("qap must be a QAP")
    res = quadratic_assignment(qap.D, qap.F, method="faq", options=dict(rng=as_rng(rng)))
    perm = np.asarray(res.col_ind, dtype=np.int64)
    return Result(x=perm, fun=float(qap(perm)), nit=int(res.nit), success=True, message="FAQ", trace=None)


@lru_cache(maxsize=16)
def _swap_pairs(n: int) -> np.ndarray:
    return np.array(list(itertools.combinations(range(n), 2)), dtype=np.int64).reshape(-1, 2)


def two_opt(fun: BatchObjective, n: int, *, max_evals: int | None = None, perm0=None,
            rng: RngLike = None) -> Result:
    """Baseline: 2-opt (pairwise swaps) on a black-box ``f``, first improvement.

    From ``perm0`` (or a random permutation) the swaps ``(i, j)``, ``i < j``, are scanned in
    order and the first that lowers ``f`` is taken, until none does (a local optimum). With
    ``max_evals`` None that single descent is the result (scipy's ``method='2opt'`` and the
    paper's 2-opt baseline); with a budget, the search restarts from fresh random permutations
    until ``max_evals`` evaluations are spent (multi-start 2-opt). A scan is evaluated as one
    batch but counted only up to its first improvement, as a sequential scan would be."""
    n = _check_fun_n(fun, n)
    if max_evals is not None:
        max_evals = check_int(max_evals, "max_evals", minimum=1)
    g = as_rng(rng)
    pairs = _swap_pairs(n)
    idx = np.arange(len(pairs))
    cur = check_perm(perm0, "perm0", n) if perm0 is not None else g.permutation(n)
    best_val, best_perm, n_evals, descents = np.inf, None, 0, 0
    trace = Trace("2-opt")
    while True:
        val = float(_evaluate(fun, cur)[0])
        n_evals += 1
        descents += 1
        while max_evals is None or n_evals < max_evals:
            cand = np.repeat(cur[None], len(pairs), axis=0)
            cand[idx, pairs[:, 0]] = cur[pairs[:, 1]]
            cand[idx, pairs[:, 1]] = cur[pairs[:, 0]]
            if max_evals is not None:
                cand = cand[:max_evals - n_evals]
            vals = _evaluate(fun, cand)
            better = np.flatnonzero(vals < val)
            if better.size == 0:
                n_evals += len(cand)
                break
            j = int(better[0])
            n_evals += j + 1
            cur, val = cand[j], float(vals[j])
        if val < best_val:
            best_val, best_perm = val, cur.copy()
        trace.record(objective=val, best=best_val, n_evals=n_evals)
        if max_evals is None or n_evals >= max_evals:
            break
        cur = g.permutation(n)
    return Result(x=best_perm, fun=best_val, nit=descents, nfev=n_evals, success=True,
                  message="local optimum" if max_evals is None else "budget reached", trace=trace)


def random_search(fun: BatchObjective, n: int, n_evals: int = 300, rng: RngLike = None) -> Result:
    """Baseline: the best of ``n_evals`` uniformly random permutations."""
    n = _check_fun_n(fun, n)
    n_evals = check_int(n_evals, "n_evals", minimum=1)
    g = as_rng(rng)
    perms = np.argsort(g.random((n_evals, n)), axis=1)
    vals = _evaluate(fun, perms)
    i = int(np.argmin(vals))
    trace = Trace("random search")
    for v in np.minimum.accumulate(vals):
        trace.record(objective=v, best=v)
    return Result(x=perms[i], fun=float(vals[i]), nit=n_evals, nfev=n_evals, success=True,
                  message="random search", trace=trace)
