"""Chapter 08: perturbation bounds for low-rank inverse approximations (Tran and Vishnoi, NeurIPS 2025).

For a symmetric positive-definite matrix A with eigenvalues lambda_1 >= ... >= lambda_n > 0, the
best rank-p approximation of A^{-1} (Eckart-Young-Mirsky) keeps the p *smallest* eigenvalues of A:
A_p^{-1} = sum_{i > n-p} lambda_i^{-1} u_i u_i^T. We only see A~ = A + E. This module computes the
true error ||(A~^{-1})_p - A_p^{-1}|| (spectral norm), the paper's Theorem 2.1 bound with its gap
condition, the classical "EYM-N" bound (Neumann + Eckart-Young-Mirsky), the exact first-order
(Daleckii-Krein) term and its O(np) version for Gaussian noise, the contour-integral representation
of A_p^{-1} evaluated with the trapezoidal rule, and the noise models of the experiments. The
book's experiments, figures and claims are in :mod:`optbook.classical.lowrank_inverse_chapter`.

Conventions: eigenvalues in the paper's order (descending), so lambda_n is the smallest,
lambda_{n-p+1} the largest kept one and lambda_{n-p} the first dropped one; the truncation gap is
delta_{n-p} = lambda_{n-p} - lambda_{n-p+1}. Spectral norms throughout. The noise generators take
the norm ||E|| they should have; the chapter's noise level is eps = ||E|| / lambda_n.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np
import scipy.linalg
import scipy.linalg.lapack

from ..core import Trace, as_rng, check_in_range, check_int, check_matrix, check_positive, check_vector
from ..core.problems import random_orthogonal
from ..core.validate import RngLike

# --------------------------------------------------------------------------- matrices and checks


def check_symmetric(a: Any, name: str, dim: int | None = None) -> np.ndarray:
    """A finite, square, symmetric matrix (returned symmetrised)."""
    arr = check_matrix(a, name, shape=(dim, dim), square=True)
    scale = max(1.0, float(np.max(np.abs(arr))))
    if not np.allclose(arr, arr.T, rtol=1e-10, atol=1e-12 * scale):
        raise ValueError(f"{name} must be symmetric")
    return 0.5 * (arr + arr.T)


def _check_p(p: Any, n: int) -> int:
    p = check_int(p, "p", minimum=1)
    if p > n:
        raise ValueError(f"p must be <= n = {n}, got {p}")
    return p


@dataclass(frozen=True)
class SymmetricMatrix:
    """A symmetric matrix together with its eigendecomposition, eigenvalues in descending order.

    ``eigvals[i]`` is lambda_{i+1} of the paper and ``eigvecs[:, i]`` is u_{i+1}, so
    ``eigvals[-1]`` is lambda_n. Build it with :meth:`from_matrix`, :meth:`from_spectrum` or
    :meth:`diagonal`.
    """

    eigvals: np.ndarray
    eigvecs: np.ndarray

    def __post_init__(self) -> None:
        lam = check_vector(self.eigvals, "eigvals")
        vec = check_matrix(self.eigvecs, "eigvecs", shape=(lam.size, lam.size))
        if np.any(np.diff(lam) > 0):
            raise ValueError("eigvals must be sorted in descending order")
        object.__setattr__(self, "eigvals", lam)
        object.__setattr__(self, "eigvecs", vec)

    @classmethod
    def from_matrix(cls, a: Any, name: str = "A") -> SymmetricMatrix:
        """Eigendecomposition of a symmetric matrix (dense ``eigh``)."""
        arr = check_symmetric(a, name)
        w, v = np.linalg.eigh(arr)
        return cls(w[::-1].copy(), v[:, ::-1].copy())

    @classmethod
    def from_spectrum(cls, eigvals: Any, rng: RngLike = None) -> SymmetricMatrix:
        """Q diag(eigvals) Q^T with Q a Haar-random orthogonal matrix (eigvals sorted descending)."""
        lam = np.sort(check_vector(eigvals, "eigvals"))[::-1].copy()
        return cls(lam, random_orthogonal(lam.size, as_rng(rng)))

    @classmethod
    def diagonal(cls, eigvals: Any) -> SymmetricMatrix:
        """diag(eigvals) (eigvals sorted descending), eigenvectors the coordinate axes. Every
        quantity of the chapter is invariant under A -> Q A Q^T, E -> Q E Q^T, and Wigner noise is
        orthogonally invariant in law, so with Wigner noise a diagonal A is as good as a rotated one."""
        lam = np.sort(check_vector(eigvals, "eigvals"))[::-1].copy()
        return cls(lam, np.eye(lam.size))

    @property
    def n(self) -> int:
        return int(self.eigvals.size)

    @cached_property
    def matrix(self) -> np.ndarray:
        """The dense matrix U diag(lambda) U^T (computed once)."""
        m = (self.eigvecs * self.eigvals) @ self.eigvecs.T
        return 0.5 * (m + m.T)

    def bottom_basis(self, p: int) -> np.ndarray:
        """U_p: the eigenvectors of the p eigenvalues of smallest modulus (the low-curvature ones)."""
        p = _check_p(p, self.n)
        return self.eigvecs[:, np.argsort(np.abs(self.eigvals), kind="stable")[:p]]


def _as_sym(a: Any, name: str = "A") -> SymmetricMatrix:
    return a if isinstance(a, SymmetricMatrix) else SymmetricMatrix.from_matrix(a, name)


def _check_pd(sym: SymmetricMatrix, name: str = "A") -> None:
    if not sym.eigvals[-1] > 0:
        raise ValueError(f"{name} must be positive definite (smallest eigenvalue {sym.eigvals[-1]:.3g})")


def spectral_norm(a: Any, name: str = "E") -> float:
    """||a||_2 of a symmetric matrix: the largest |eigenvalue|."""
    return float(np.max(np.abs(np.linalg.eigvalsh(check_symmetric(a, name)))))


# --------------------------------------------------------------------------- the truncated inverse


def best_rank_inverse(a: Any, p: int) -> np.ndarray:
    """A_p^{-1}: the best rank-p approximation of A^{-1} in spectral (and Frobenius) norm.

    Keeps the p eigenpairs of the symmetric nonsingular matrix A with the smallest |lambda| (the
    largest |1/lambda|), A_p^{-1} = U_p Lambda_p^{-1} U_p^T. For positive-definite A these are the
    p smallest eigenvalues, the low-curvature directions.

    Raises ``ValueError`` when A is singular or when |lambda| ties at the cut, where the best
    rank-p approximation is not unique.
    """
    sym = _as_sym(a)
    p = _check_p(p, sym.n)
    mod = np.abs(sym.eigvals)
    order = np.argsort(mod, kind="stable")
    scale = float(mod.max()) if mod.max() > 0 else 1.0
    if mod[order[0]] <= 1e-14 * scale:
        raise ValueError("A must be nonsingular (an eigenvalue is zero to working precision)")
    if p < sym.n and mod[order[p]] - mod[order[p - 1]] <= 1e-12 * scale:
        raise ValueError("A_p^{-1} is not unique: |lambda| ties at the truncation point (no gap at p)")
    keep = order[:p]
    u = sym.eigvecs[:, keep]
    out = (u / sym.eigvals[keep]) @ u.T
    return 0.5 * (out + out.T)


@dataclass(frozen=True)
class Cut:
    """The spectral quantities Theorem 2.1 uses, read off the eigenvalues of a positive-definite A.

    Build it with :func:`spectral_cut` (from a matrix) or :meth:`from_eigvals` (from the spectrum
    alone, which is all the bounds need: this is how the chapter evaluates them at n = 64000).
    """

    lam_n: float          # smallest eigenvalue lambda_n
    lam_keep: float       # lambda_{n-p+1}, largest kept eigenvalue
    lam_drop: float       # lambda_{n-p}, first dropped eigenvalue (inf when p = n)
    gap: float            # delta_{n-p} = lambda_{n-p} - lambda_{n-p+1} (inf when p = n)
    p: int
    n: int

    @classmethod
    def from_eigvals(cls, eigvals: Any, p: int) -> Cut:
        """The cut at p of the positive spectrum ``eigvals`` (any order)."""
        lam = np.sort(check_vector(eigvals, "eigvals"))[::-1]
        n = lam.size
        p = _check_p(p, n)
        if not lam[-1] > 0:
            raise ValueError(f"eigvals must be positive (A positive definite), smallest is {lam[-1]:.3g}")
        lam_drop = float(lam[n - p - 1]) if p < n else np.inf
        return cls(float(lam[-1]), float(lam[n - p]), lam_drop, lam_drop - float(lam[n - p]), p, n)


def spectral_cut(a: Any, p: int) -> Cut:
    """lambda_n, lambda_{n-p+1}, lambda_{n-p} and delta_{n-p} of a positive-definite A (a matrix, a
    :class:`SymmetricMatrix`, or a :class:`Cut`, returned as is when its p matches)."""
    if isinstance(a, Cut):
        p = _check_p(p, a.n)
        if p != a.p:
            raise ValueError(f"p = {p} does not match the cut's p = {a.p}")
        return a
    sym = _as_sym(a)
    _check_pd(sym)
    return Cut.from_eigvals(sym.eigvals, p)


def gap_condition(a: Any, norm_e: float, p: int) -> bool:
    """Theorem 2.1's assumption 4 ||E|| <= min(lambda_n, delta_{n-p})."""
    cut = spectral_cut(a, p)
    norm_e = check_positive(norm_e, "norm_e", allow_zero=True)
    return bool(4.0 * norm_e <= min(cut.lam_n, cut.gap))


# --------------------------------------------------------------------------- the bounds


def theorem21_terms(a: Any, norm_e: float, p: int, *, check: bool = True) -> tuple[float, float]:
    """The two terms of Theorem 2.1: (4 ||E|| / lambda_n^2, 5 ||E|| / (lambda_{n-p} delta_{n-p})).

    ``a`` is a positive-definite matrix, its :class:`SymmetricMatrix` or its :class:`Cut`. The
    first term is the sensitivity of the full inverse (Neumann), the second the rotation of the
    kept subspace at the cut; for p = n the second is 0. With ``check`` (default) the gap
    condition 4 ||E|| <= min(lambda_n, delta_{n-p}) is enforced with a ``ValueError``; with
    ``check=False`` the formula is evaluated anyway (it is then no longer a guarantee).
    """
    cut = spectral_cut(a, p)
    norm_e = check_positive(norm_e, "norm_e", allow_zero=True)
    if check and not 4.0 * norm_e <= min(cut.lam_n, cut.gap):
        raise ValueError(
            f"gap condition 4||E|| <= min(lambda_n, delta_(n-p)) fails: 4||E|| = {4 * norm_e:.4g}, "
            f"lambda_n = {cut.lam_n:.4g}, delta_(n-p) = {cut.gap:.4g}; Theorem 2.1 does not apply")
    first = 4.0 * norm_e / cut.lam_n**2
    second = 0.0 if not np.isfinite(cut.lam_drop) else 5.0 * norm_e / (cut.lam_drop * cut.gap)
    return float(first), float(second)


def theorem21_bound(a: Any, norm_e: float, p: int, *, check: bool = True) -> float:
    """Theorem 2.1 of the paper: ||(A~^{-1})_p - A_p^{-1}|| <= 4||E||/lambda_n^2 + 5||E||/(lambda_{n-p} delta_{n-p})
    whenever 4 ||E|| <= min(lambda_n, delta_{n-p}) (``ValueError`` otherwise, unless ``check=False``)."""
    return float(sum(theorem21_terms(a, norm_e, p, check=check)))


def neumann_bound(a: Any, norm_e: float) -> float:
    """Classical full-inverse bound ||A~^{-1} - A^{-1}|| <= ||E|| / (lambda_n (lambda_n - ||E||)),
    valid for ||E|| < lambda_n (``ValueError`` otherwise). ``a`` may also be a :class:`Cut`."""
    lam_n = a.lam_n if isinstance(a, Cut) else spectral_cut(a, 1).lam_n
    norm_e = check_positive(norm_e, "norm_e", allow_zero=True)
    if not norm_e < lam_n:
        raise ValueError(f"norm_e must be < lambda_n = {lam_n:.4g} for the Neumann bound, got {norm_e:.4g}")
    return norm_e / (lam_n * (lam_n - norm_e))


def eymn_bound(a: Any, norm_e: float, p: int, *, lam_noisy_drop: float | None = None) -> float:
    """The classical baseline "EYM-N": Neumann plus Eckart-Young-Mirsky by the triangle inequality,
    ||E||/(lambda_n(lambda_n - ||E||)) + 1/lambda~_{n-p} + 1/lambda_{n-p} (our reconstruction).

    ``lam_noisy_drop`` is lambda~_{n-p} of A~ = A + E when known; otherwise Weyl's lower bound
    lambda_{n-p} - ||E|| is used (which makes the bound a little larger). For p = n only the
    Neumann term remains. The two truncation terms do not vanish as E -> 0.
    """
    cut = spectral_cut(a, p)
    first = neumann_bound(cut, norm_e)
    if not np.isfinite(cut.lam_drop):
        return first
    if lam_noisy_drop is None:
        lam_noisy_drop = cut.lam_drop - norm_e
    lam_noisy_drop = check_positive(lam_noisy_drop, "lam_noisy_drop")
    return float(first + 1.0 / lam_noisy_drop + 1.0 / cut.lam_drop)


# --------------------------------------------------------------------------- first-order estimate


def first_order_term(a: Any, e: Any, p: int) -> np.ndarray:
    """The exact first-order change of A_p^{-1} in the direction E (Daleckii-Krein formula).

    With f(lambda) = 1/lambda on the kept eigenvalues and 0 on the dropped ones,
    L(E) = U (F o (U^T E U)) U^T, F_ij = (f(lambda_i) - f(lambda_j)) / (lambda_i - lambda_j) and
    F_ii = f'(lambda_i). Its kept-kept block is -A_p^{-1} E A_p^{-1}; the kept-dropped blocks are
    the rotation of the kept subspace (the Davis-Kahan effect). ``||L(E)||`` is the "what a
    practitioner would guess" estimate of the error: no guarantee, but exact as E -> 0.
    """
    sym = _as_sym(a)
    p = _check_p(p, sym.n)
    _check_pd(sym)
    e = check_symmetric(e, "E", sym.n)
    lam = sym.eigvals
    keep = np.zeros(sym.n, dtype=bool)
    keep[sym.n - p:] = True
    f = np.where(keep, 1.0 / lam, 0.0)
    dl = lam[:, None] - lam[None, :]
    same = np.abs(dl) <= 1e-12 * lam[0]
    both_keep = keep[:, None] & keep[None, :]
    with np.errstate(divide="ignore", invalid="ignore"):
        F = np.where(same, 0.0, (f[:, None] - f[None, :]) / np.where(same, 1.0, dl))
    deriv = -1.0 / (lam[:, None] * lam[None, :])  # divided difference of 1/x, exact also on ties
    F = np.where(both_keep, deriv, F)
    out = sym.eigvecs @ (F * (sym.eigvecs.T @ e @ sym.eigvecs)) @ sym.eigvecs.T
    return 0.5 * (out + out.T)


def first_order_error_wigner(eigvals: Any, p: int, sigma: float = 1.0, rng: RngLike = None) -> float:
    """One draw of ||L(sigma W)||, the first-order error for Gaussian noise E = sigma W, from the
    spectrum alone in O(n p^2) time and O(n p) memory.

    W = (G + G^T)/sqrt(2) is orthogonally invariant in law, so in the eigenbasis of A its kept-kept
    block is a p x p Wigner matrix and its kept-dropped block has i.i.d. N(0, 1) entries, whatever
    the eigenvectors; the dropped-dropped block does not enter L. L(E) is then
    [[B, C], [C^T, 0]] with B_ij = -E_ij / (lambda_i lambda_j) and C_ij = E_ij / (lambda_i (lambda_i -
    lambda_j)), and its norm equals that of the 2p x 2p matrix built on the right singular vectors
    of C. The draw is *not* the same W as :func:`wigner_matrix`
    with the same seed; it has the same law. Accurate to O(||E|| / min(lambda_n, delta_{n-p})).
    """
    cut = Cut.from_eigvals(eigvals, p)  # validates eigvals and p
    if cut.p == cut.n:
        raise ValueError("p must be < n: with nothing dropped there is no rotation block")
    if not cut.gap > 0:
        raise ValueError("eigvals tie at the cut (delta_(n-p) = 0): A_p^{-1} is not unique")
    sigma = check_positive(sigma, "sigma")
    rng = as_rng(rng)
    lam = np.sort(np.asarray(eigvals, dtype=float))
    kept, dropped = lam[:p], lam[p:]
    g = rng.standard_normal((p, p))
    b = -sigma * (g + g.T) / np.sqrt(2.0) / np.outer(kept, kept)
    c = sigma * rng.standard_normal((p, dropped.size)) / (kept[:, None] * (kept[:, None] - dropped[None, :]))
    u, s, _ = np.linalg.svd(c, full_matrices=False)
    us = u * s
    small = np.block([[b, us], [us.T, np.zeros((us.shape[1], us.shape[1]))]])
    return float(np.max(np.abs(np.linalg.eigvalsh(small))))


def exact_error_wigner(eigvals: Any, p: int, sigma: float = 1.0, rng: RngLike = None) -> float:
    """One draw of the exact ||(A~^{-1})_p - A_p^{-1}|| for Gaussian noise E = sigma W, when the
    n - p dropped eigenvalues of A are all equal (the paper's synthetic spectrum), in O(n p^2).

    With the dropped block of A equal to c I, rotating the dropped coordinates changes neither A
    nor the error. Rotate them by the Householder tridiagonalisation of W's dropped-dropped block:
    in law E becomes [[W_KK, G], [G^T, T]] with G i.i.d. N(0, 1) and T the Dumitriu-Edelman
    tridiagonal model of a Wigner matrix (diagonal N(0, 2), off-diagonal chi_{m-1}, ..., chi_1).
    The p smallest eigenvalues mu of A~ then solve the p x p secular equation
    mu = k-th eigenvalue of Lambda_K + E_KK - G (c - mu + T)^{-1} G^T, a contraction in mu solved by
    fixed-point iteration with tridiagonal solves; their eigenvectors follow from the same solve.
    Same seed, same kept rows of W as :func:`first_order_error_wigner`, so the two can be
    compared draw by draw. ``ValueError`` when the noise is so large that a kept eigenvalue of A~
    may reach the dropped block (the reduction then no longer isolates the p smallest).
    """
    cut = Cut.from_eigvals(eigvals, p)  # validates eigvals and p
    if cut.p == cut.n:
        raise ValueError("p must be < n: with nothing dropped there is no rotation block")
    lam = np.sort(np.asarray(eigvals, dtype=float))
    kept, c = lam[:p], float(lam[p])
    if np.any(np.abs(lam[p:] - c) > 1e-12 * c):
        raise ValueError("eigvals: the n - p dropped eigenvalues must all be equal for the exact evaluator")
    if not cut.gap > 0:
        raise ValueError("eigvals tie at the cut (delta_(n-p) = 0): A_p^{-1} is not unique")
    sigma = check_positive(sigma, "sigma")
    rng = as_rng(rng)
    m = cut.n - p
    g = rng.standard_normal((p, p))
    e_kk = sigma * (g + g.T) / np.sqrt(2.0)
    coupling = sigma * rng.standard_normal((p, m))
    diag = sigma * rng.normal(0.0, np.sqrt(2.0), m)
    off = sigma * np.sqrt(rng.chisquare(np.arange(m - 1, 0, -1))) if m > 1 else np.zeros(0)
    # Gershgorin: every eigenvalue of the dropped block c I + T is above `floor`
    radius = np.abs(diag) + np.concatenate([[0.0], np.abs(off)]) + np.concatenate([np.abs(off), [0.0]])
    floor = c - float(radius.max())
    base = np.diag(kept) + e_kk

    def resolvent_times_coupling(mu: float) -> np.ndarray:  # (c - mu + T)^{-1} G^T, m x p
        if m == 1:
            return coupling.T / (diag + (c - mu))
        # c - mu + T is positive definite (mu < floor): LAPACK's tridiagonal Cholesky solver
        *_, x, info = scipy.linalg.lapack.dptsv(diag + (c - mu), off, coupling.T)
        if info != 0:
            raise RuntimeError(f"tridiagonal solve failed (LAPACK dptsv info = {info})")
        return x

    mus, vk, vd = np.empty(p), np.empty((p, p)), np.empty((m, p))
    start = np.linalg.eigvalsh(base)
    for k in range(p):
        mu = float(start[k])
        for _ in range(100):
            if not mu < floor:
                raise ValueError("sigma is too large for the exact evaluator: a kept eigenvalue of A~ "
                                 "may reach the dropped block")
            res = resolvent_times_coupling(mu)
            w, v = np.linalg.eigh(base - coupling @ res)
            converged = abs(w[k] - mu) <= 4 * np.finfo(float).eps * abs(mu)
            mu = float(w[k])
            if converged:
                break
        else:
            raise RuntimeError("the secular fixed-point iteration did not converge")
        x_k, x_d = v[:, k], -res @ v[:, k]
        scale = np.sqrt(x_k @ x_k + x_d @ x_d)
        mus[k], vk[:, k], vd[:, k] = mu, x_k / scale, x_d / scale
    if not (mus[0] > 0 and mus[-1] < floor):
        raise ValueError("sigma is too large for the exact evaluator: A~ is not positive definite, or a "
                         "kept eigenvalue may reach the dropped block")
    # The difference lives on the kept coordinates plus span(vd): a 2p x 2p problem.
    q, _ = np.linalg.qr(vd)
    vq = q.T @ vd
    top = (vk / mus) @ vk.T - np.diag(1.0 / kept)
    cross = (vk / mus) @ vq.T
    small = np.block([[top, cross], [cross.T, (vq / mus) @ vq.T]])
    return float(np.max(np.abs(np.linalg.eigvalsh(0.5 * (small + small.T)))))


# --------------------------------------------------------------------------- all of them at once


@dataclass(frozen=True)
class BoundComparison:
    """True error and its bounds for one (A, E, p)."""

    norm_e: float
    true_error: float
    bound: float            # Theorem 2.1 formula (a guarantee only when gap_ok)
    term_full: float        # 4 ||E|| / lambda_n^2
    term_cut: float         # 5 ||E|| / (lambda_{n-p} delta_{n-p})
    eymn: float             # EYM-N with the observed lambda~_{n-p} (nan when ||E|| >= lambda_n)
    first_order: float      # ||L(E)||, the Daleckii-Krein first-order estimate (nan if not asked)
    gap_ok: bool            # 4 ||E|| <= min(lambda_n, delta_{n-p})


def compare_bounds(a: Any, e: Any, p: int, *, first_order: bool = True) -> BoundComparison:
    """Compute ||(A~^{-1})_p - A_p^{-1}|| and every bound of the chapter for one (A, E, p).

    ``a`` is a positive-definite matrix or a :class:`SymmetricMatrix` (its eigendecomposition is
    then reused); ``e`` the symmetric noise E. Only the p + 1 smallest eigenpairs of A~ = A + E
    are computed (``scipy.linalg.eigh`` with ``subset_by_index``), and the norm of the rank-2p
    difference is taken on the span of both kept subspaces. If A~ is not positive definite
    (possible only outside the gap condition), the dense path of :func:`best_rank_inverse` is used.
    """
    sym = _as_sym(a)
    _check_pd(sym)
    p = _check_p(p, sym.n)
    e = check_symmetric(e, "E", sym.n)
    if not isinstance(first_order, (bool, np.bool_)):
        raise ValueError(f"first_order must be a bool, got {first_order!r}")
    n = sym.n
    norm_e = spectral_norm(e)
    a_tilde = sym.matrix + e
    w, v = scipy.linalg.eigh(a_tilde, subset_by_index=[0, min(p, n - 1)])
    lam_noisy_drop = float(w[p]) if p < n else None
    if w[0] > 0 and (p == n or w[p] - w[p - 1] > 1e-12 * abs(w[p])):
        u, lam = sym.eigvecs[:, n - p:], sym.eigvals[n - p:]
        ut, lamt = v[:, :p], w[:p]
        q, _ = np.linalg.qr(np.hstack([u, ut]))
        qu, qut = q.T @ u, q.T @ ut
        diff = (qut / lamt) @ qut.T - (qu / lam) @ qu.T
        true = float(np.max(np.abs(np.linalg.eigvalsh(0.5 * (diff + diff.T)))))
    else:
        diff = best_rank_inverse(a_tilde, p) - best_rank_inverse(sym, p)
        true = float(np.max(np.abs(np.linalg.eigvalsh(diff))))
    cut = spectral_cut(sym, p)
    t1, t2 = theorem21_terms(cut, norm_e, p, check=False)
    if norm_e < cut.lam_n and (lam_noisy_drop is None or lam_noisy_drop > 0):
        eym = eymn_bound(cut, norm_e, p, lam_noisy_drop=lam_noisy_drop)
    else:
        eym = np.nan
    fo = float(np.max(np.abs(np.linalg.eigvalsh(first_order_term(sym, e, p))))) if first_order else np.nan
    return BoundComparison(norm_e, true, t1 + t2, t1, t2, eym, fo, gap_condition(cut, norm_e, p))


# --------------------------------------------------------------------------- contour integral


def contour_circle(a: Any, p: int) -> tuple[float, float]:
    """Centre c and radius r of the circle Gamma around the p smallest eigenvalues of A.

    c = (lambda_n + lambda_{n-p+1})/2, r = (lambda_{n-p+1} - lambda_n)/2 + min(lambda_n, delta_{n-p})/2:
    Gamma crosses the real axis half-way between lambda_n and 0 (or closer) and half-way into the
    gap, so it encloses exactly the kept eigenvalues and keeps z = 0 and lambda_{n-p} outside.
    """
    cut = spectral_cut(a, p)
    c = 0.5 * (cut.lam_n + cut.lam_keep)
    r = 0.5 * (cut.lam_keep - cut.lam_n) + 0.5 * min(cut.lam_n, cut.gap)
    return float(c), float(r)


def contour_rate(a: Any, p: int) -> float:
    """rho > 1 such that the trapezoidal rule on Gamma converges like rho^{-N}: the annulus of
    analyticity of the integrand is set by the singularity nearest the circle (z = 0, a kept
    eigenvalue inside, or lambda_{n-p} outside)."""
    sym = _as_sym(a)
    c, r = contour_circle(sym, p)
    d = np.abs(np.append(sym.eigvals, 0.0) - c)
    inside, outside = d[d < r], d[d > r]
    ratios = []
    if inside.size:
        ratios.append(r / inside.max())
    if outside.size:
        ratios.append(outside.min() / r)
    return float(min(ratios))


def contour_rank_inverse(a: Any, p: int, n_nodes: int = 256) -> np.ndarray:
    """A_p^{-1} = (1/2 pi i) oint_Gamma z^{-1} (zI - A)^{-1} dz, by the N-point trapezoidal rule.

    The paper's representation of the truncated inverse (Section 3): with z_k = c + r e^{i theta_k},
    A_p^{-1} ~ (1/N) sum_k z_k^{-1} (z_k - c) (z_k I - A)^{-1}. Each node costs one complex linear
    solve; the eigendecomposition is not used. Converges like ``contour_rate(A, p)^(-N)``.
    """
    sym = _as_sym(a)
    p = _check_p(p, sym.n)
    n_nodes = check_int(n_nodes, "n_nodes", minimum=2)
    c, r = contour_circle(sym, p)
    a_mat = sym.matrix
    theta = 2.0 * np.pi * np.arange(n_nodes) / n_nodes
    z = c + r * np.exp(1j * theta)
    eye = np.eye(sym.n)
    acc = np.zeros((sym.n, sym.n), dtype=complex)
    for chunk in np.array_split(np.arange(n_nodes), max(1, n_nodes // 32)):
        zs = z[chunk]
        res = np.linalg.solve(zs[:, None, None] * eye - a_mat, np.broadcast_to(eye, (zs.size, sym.n, sym.n)))
        acc += np.tensordot((zs - c) / zs, res, axes=1)
    out = (acc / n_nodes).real
    return 0.5 * (out + out.T)


def quadrature_trace(a: Any, p: int, nodes: Any = (4, 8, 16, 32, 64, 96, 128, 192, 256, 320),
                     method: str = "trapezoid on Gamma") -> Trace:
    """Relative spectral error of :func:`contour_rank_inverse` against the ``eigh`` answer, one
    row per node count N (``iteration`` = N, ``objective`` = relative error, extra ``predicted`` =
    rho^{-N})."""
    sym = _as_sym(a)
    nodes = check_vector(nodes, "nodes")
    if np.any(nodes != np.round(nodes)) or np.any(nodes < 2):
        raise ValueError(f"nodes must be integers >= 2, got {nodes}")
    exact = best_rank_inverse(sym, p)
    norm = float(np.max(np.abs(np.linalg.eigvalsh(exact))))
    rho = contour_rate(sym, p)
    tr = Trace(method, meta={"rho": rho, "p": p, "n": sym.n})
    for n_nodes in nodes:
        approx = contour_rank_inverse(sym, p, int(n_nodes))
        err = float(np.max(np.abs(np.linalg.eigvalsh(approx - exact)))) / norm
        tr.record(iteration=int(n_nodes), objective=err, predicted=rho ** (-n_nodes))
    return tr


# --------------------------------------------------------------------------- noise models


def wigner_matrix(n: int, rng: RngLike = None) -> np.ndarray:
    """W = (G + G^T)/sqrt(2) with G an n x n standard Gaussian matrix: off-diagonal entries
    N(0, 1), diagonal N(0, 2), ||W|| ~ 2 sqrt(n) (the edge of the semicircle)."""
    n = check_int(n, "n", minimum=1)
    g = as_rng(rng).standard_normal((n, n))
    return (g + g.T) / np.sqrt(2.0)


def _normalised(m: np.ndarray, norm: float) -> np.ndarray:
    nrm = float(np.max(np.abs(np.linalg.eigvalsh(m))))
    return norm * m / nrm if nrm > 0 else m


def wigner_noise(n: int, norm: float, rng: RngLike = None) -> np.ndarray:
    """Isotropic noise E = norm W / ||W|| (so ||E|| = norm exactly)."""
    norm = check_positive(norm, "norm", allow_zero=True)
    return _normalised(wigner_matrix(n, rng), norm)


def aligned_noise(a: Any, p: int, norm: float, rng: RngLike = None) -> np.ndarray:
    """Noise only in the low-curvature subspace: E = norm U_p R U_p^T with R a random symmetric
    p x p matrix normalised to ||R|| = 1, so E spreads over the p kept directions."""
    sym = _as_sym(a)
    u = sym.bottom_basis(p)
    norm = check_positive(norm, "norm", allow_zero=True)
    r = _normalised(wigner_matrix(u.shape[1], rng), 1.0)
    return norm * (u @ r @ u.T)


def rank_one_noise(a: Any, norm: float) -> np.ndarray:
    """E = norm u_n u_n^T, all the noise on the direction of least curvature. Of the noise shapes
    here it moves A_p^{-1} the most: to first order by norm / lambda_n^2, the largest the kept
    block can move for a given ||E||."""
    sym = _as_sym(a)
    norm = check_positive(norm, "norm", allow_zero=True)
    u = sym.eigvecs[:, -1]
    return norm * np.outer(u, u)


def mixed_noise(a: Any, p: int, norm: float, phi: float, rng: RngLike = None) -> np.ndarray:
    """E = cos(phi) aligned + sin(phi) Wigner (each of norm 1), rescaled so that ||E|| = norm.

    ``phi`` in radians, 0 = all noise in the kept (low-curvature) subspace, pi/2 = isotropic.
    """
    sym = _as_sym(a)
    phi = check_in_range(phi, "phi", 0.0, np.pi / 2, closed=(True, True))
    norm = check_positive(norm, "norm", allow_zero=True)
    rng = as_rng(rng)
    mix = np.cos(phi) * aligned_noise(sym, p, 1.0, rng) + np.sin(phi) * wigner_noise(sym.n, 1.0, rng)
    return _normalised(mix, norm)
