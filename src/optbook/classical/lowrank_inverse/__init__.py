"""Chapter 08: perturbation bounds for low-rank inverse approximations (Tran and Vishnoi, NeurIPS 2025).

For a symmetric positive-definite matrix A with eigenvalues lambda_1 >= ... >= lambda_n > 0, the
best rank-p approximation of A^{-1} (Eckart-Young-Mirsky) keeps the p *smallest* eigenvalues of A:
A_p^{-1} = sum_{i > n-p} lambda_i^{-1} u_i u_i^T. We only see A~ = A + E. This package computes the
true error ||(A~^{-1})_p - A_p^{-1}|| (spectral norm), the paper's Theorem 2.1 bound with its gap
condition, the classical "EYM-N" bound (Neumann + Eckart-Young-Mirsky), the exact first-order
(Daleckii-Krein) term, the contour-integral representation of A_p^{-1} evaluated with the
trapezoidal rule, and the noise models of the experiments.

What a user imports lives here (numpy and scipy only):
``from optbook.classical.lowrank_inverse import theorem21_bound, compare_bounds``. The book's
experiments and claims are in :mod:`.experiments`, its plotly figures and explorers in
:mod:`.figures`.
"""
from .bounds import (
    BoundComparison,
    Cut,
    SymmetricMatrix,
    best_rank_inverse,
    check_symmetric,
    compare_bounds,
    eymn_bound,
    first_order_error_wigner,
    first_order_term,
    gap_condition,
    neumann_bound,
    spectral_cut,
    spectral_norm,
    theorem21_bound,
    theorem21_terms,
)
from .contour import contour_circle, contour_rank_inverse, contour_rate, quadrature_trace
from .noise import aligned_noise, mixed_noise, rank_one_noise, wigner_matrix, wigner_noise

__all__ = [
    "BoundComparison", "Cut", "SymmetricMatrix", "aligned_noise", "best_rank_inverse", "check_symmetric",
    "compare_bounds", "contour_circle", "contour_rank_inverse", "contour_rate", "eymn_bound",
    "first_order_error_wigner", "first_order_term", "gap_condition", "mixed_noise", "neumann_bound",
    "quadrature_trace", "rank_one_noise", "spectral_cut", "spectral_norm", "theorem21_bound", "theorem21_terms",
    "wigner_matrix", "wigner_noise",
]
