"""The contour-integral representation of the truncated inverse, evaluated by the trapezoidal rule.

A_p^{-1} = (1/2 pi i) oint_Gamma z^{-1} (zI - A)^{-1} dz, with Gamma a circle around the p smallest
eigenvalues of A that keeps the pole z = 0 of f(z) = 1/z and the dropped eigenvalues outside. The
paper uses this representation to prove Theorem 2.1; here it is also a way to compute A_p^{-1}
without an eigendecomposition, one complex linear solve per node.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ...core import Trace, check_int, check_vector
from .bounds import _as_sym, _check_p, best_rank_inverse, spectral_cut


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
