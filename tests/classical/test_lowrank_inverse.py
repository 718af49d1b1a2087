"""Tests for chapter 08: low-rank inverse approximations under noise."""
from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from optbook.classical import lowrank_inverse as L
from optbook.classical import lowrank_inverse_chapter as ch


def _sym(n=30, seed=0, low=0.0, high=2.0):
    rng = np.random.default_rng(seed)
    return L.SymmetricMatrix.from_spectrum(10.0 ** rng.uniform(low, high, n), rng)


def test_the_method_does_not_pull_plotly():
    code = ("import sys; from optbook.classical.lowrank_inverse import theorem21_bound, compare_bounds; "
            "assert 'plotly' not in sys.modules, 'plotly imported'")
    subprocess.run([sys.executable, "-c", code], check=True)


# ----------------------------------------------------------------- best rank-p inverse


def test_rank_inverse_is_truncated_svd_of_inverse():
    sym = _sym()
    a = sym.matrix
    for p in (1, 4, 30):
        u, s, vt = np.linalg.svd(np.linalg.inv(a))
        ref = (u[:, :p] * s[:p]) @ vt[:p]
        got = L.best_rank_inverse(a, p)
        np.testing.assert_allclose(got, ref, atol=1e-10 * s[0])
        assert np.allclose(got, got.T)
        assert np.linalg.matrix_rank(got, tol=1e-9 * s[0]) == p


def test_truncation_error_is_one_over_lambda_n_minus_p():
    sym = _sym(seed=1)
    a = sym.matrix
    for p in (1, 5, 12):
        err = np.linalg.norm(np.linalg.inv(a) - L.best_rank_inverse(a, p), 2)
        assert err == pytest.approx(1.0 / L.spectral_cut(sym, p).lam_drop, rel=1e-9)


def test_rank_inverse_keeps_smallest_modulus_for_indefinite():
    q = np.linalg.qr(np.random.default_rng(2).standard_normal((5, 5)))[0]
    lam = np.array([-0.5, 1.0, 3.0, -4.0, 10.0])
    a = (q * lam) @ q.T
    got = L.best_rank_inverse(a, 2)
    ref = (q[:, :2] / lam[:2]) @ q[:, :2].T
    np.testing.assert_allclose(got, ref, atol=1e-12)


def test_eymn_optimality_against_random_rank_p():
    """No rank-p matrix is closer to A^{-1} than A_p^{-1} (Eckart-Young-Mirsky)."""
    sym = _sym(n=10, seed=3)
    inv = np.linalg.inv(sym.matrix)
    best = np.linalg.norm(inv - L.best_rank_inverse(sym, 3), 2)
    rng = np.random.default_rng(0)
    for _ in range(50):
        x = rng.standard_normal((10, 3))
        assert np.linalg.norm(inv - x @ x.T * rng.uniform(0, 2), 2) >= best - 1e-12


def test_cut_from_eigenvalues_alone_matches_the_matrix_path():
    sym = _sym(n=20, seed=4)
    for p in (1, 7, 20):
        assert L.Cut.from_eigvals(sym.eigvals[::-1], p) == L.spectral_cut(sym, p)
        dense = L.spectral_cut(sym.matrix, p)  # eigenvalues recomputed: equal up to round-off
        assert np.allclose([dense.lam_n, dense.lam_keep], [sym.eigvals[-1], sym.eigvals[-p]], rtol=1e-12)
    cut = L.Cut.from_eigvals(sym.eigvals, 7)
    assert L.theorem21_bound(cut, 1e-3, 7) == L.theorem21_bound(sym, 1e-3, 7)
    assert L.eymn_bound(cut, 1e-3, 7) == pytest.approx(L.eymn_bound(sym.matrix, 1e-3, 7), rel=1e-12)


# ----------------------------------------------------------------- contour integral


def test_contour_matches_eigh_well_separated():
    rng = np.random.default_rng(4)
    sym = L.SymmetricMatrix.from_spectrum(np.concatenate([np.full(50, 100.0), np.linspace(2, 1, 10)]), rng)
    exact = L.best_rank_inverse(sym, 10)
    got = L.contour_rank_inverse(sym, 10, 64)
    assert np.linalg.norm(got - exact, 2) / np.linalg.norm(exact, 2) < 1e-10


def test_contour_converges_geometrically_at_predicted_rate():
    rng = np.random.default_rng(5)
    sym = L.SymmetricMatrix.from_spectrum(ch.synthetic_spectrum(60, 10), rng)
    rho = L.contour_rate(sym, 10)
    assert rho == pytest.approx(1.1, rel=1e-12)  # z = 0 is the nearest singularity: c/r = 330/300
    tr = L.quadrature_trace(sym, 10, nodes=(32, 64, 96, 128))
    slope = np.polyfit(tr.iteration, np.log(tr.objective), 1)[0]
    assert slope == pytest.approx(-np.log(rho), rel=0.1)
    assert L.quadrature_trace(sym, 10, nodes=(256,)).objective[0] < 1e-9


def test_contour_circle_encloses_exactly_the_kept_eigenvalues():
    sym = _sym(seed=6)
    for p in (1, 7, 30):
        c, r = L.contour_circle(sym, p)
        inside = np.abs(sym.eigvals - c) < r
        assert inside.sum() == p and np.all(inside[-p:])
        assert c - r > 0  # z = 0 outside


# ----------------------------------------------------------------- classical facts


@pytest.mark.parametrize("seed", range(5))
def test_weyl_and_neumann(seed):
    sym = _sym(seed=seed)
    e = L.wigner_noise(sym.n, 0.5 * sym.eigvals[-1], seed)
    lt = np.linalg.eigvalsh(sym.matrix + e)[::-1]
    assert np.max(np.abs(lt - sym.eigvals)) <= 0.5 * sym.eigvals[-1] * (1 + 1e-10)
    full = np.linalg.norm(np.linalg.inv(sym.matrix + e) - np.linalg.inv(sym.matrix), 2)
    assert full <= L.neumann_bound(sym, L.spectral_norm(e)) * (1 + 1e-10)


def test_wigner_norm_is_at_the_semicircle_edge():
    """The sqrt(n) experiment takes ||W|| = 2 sqrt(n); the measured norm agrees within 3%."""
    n = 500
    ratios = [L.spectral_norm(L.wigner_matrix(n, s), "W") / (2 * np.sqrt(n)) for s in range(3)]
    assert np.all(np.abs(np.array(ratios) - 1) < 0.03), ratios


# ----------------------------------------------------------------- Theorem 2.1


@pytest.mark.parametrize("seed", range(60))
def test_theorem21_holds_when_gap_condition_holds(seed):
    sym, e, p, kind = ch.random_instance(np.random.default_rng(1000 + seed))
    cmp = L.compare_bounds(sym, e, p)
    assert cmp.gap_ok, "random_instance must respect the gap condition"
    assert cmp.true_error <= cmp.bound
    assert cmp.true_error <= cmp.eymn


@pytest.mark.parametrize("seed", range(6))
def test_rank_one_ratio_has_a_closed_form(seed):
    """E = ||E|| u_n u_n^T moves only lambda_n, so true = ||E|| / (lambda_n (lambda_n + ||E||)) and
    bound / true = (4 + 5 lambda_n^2 / (lambda_{n-p} delta)) (1 + ||E|| / lambda_n), on any spectrum."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(10, 40))
    p = int(rng.integers(1, n))
    sym = L.SymmetricMatrix.from_spectrum(10.0 ** rng.uniform(0, 2, n), rng)
    cut = L.spectral_cut(sym, p)
    norm = 0.2 * min(cut.lam_n, cut.gap)
    cmp = L.compare_bounds(sym, L.rank_one_noise(sym, norm), p)
    assert cmp.true_error == pytest.approx(norm / (cut.lam_n * (cut.lam_n + norm)), rel=1e-8)
    predicted = (4 + 5 * cut.lam_n**2 / (cut.lam_drop * cut.gap)) * (1 + norm / cut.lam_n)
    assert cmp.bound / cmp.true_error == pytest.approx(predicted, rel=1e-8)


@pytest.mark.parametrize("seed", range(5))
def test_rank_one_along_u_n_moves_the_inverse_more_than_noise_spread_over_the_kept_subspace(seed):
    """The chapter's correction: 'aligned' noise (spread over the kept subspace) is not the worst
    case; the same norm on u_n alone moves A_p^{-1} more."""
    sym = L.SymmetricMatrix.from_spectrum(ch.synthetic_spectrum(100, 10), seed)
    norm = 1e-2 * sym.eigvals[-1]
    spread = L.compare_bounds(sym, L.aligned_noise(sym, 10, norm, seed), 10, first_order=False)
    rank_one = L.compare_bounds(sym, L.rank_one_noise(sym, norm), 10, first_order=False)
    assert rank_one.true_error > spread.true_error
    assert rank_one.true_error == pytest.approx(norm / (sym.eigvals[-1] * (sym.eigvals[-1] + norm)), rel=1e-8)


def test_gap_condition_failure_raises_clear_error():
    sym = L.SymmetricMatrix.diagonal([10.0, 9.9, 1.0])  # delta_{n-p} = 0.1 for p = 2
    with pytest.raises(ValueError, match="gap condition"):
        L.theorem21_bound(sym, 0.1, 2)
    assert not L.gap_condition(sym, 0.1, 2)
    assert L.theorem21_bound(sym, 0.1, 2, check=False) > 0  # the formula alone, no guarantee
    assert L.gap_condition(sym, 0.02, 2)


def test_p_equals_n_leaves_only_the_neumann_term():
    sym = _sym(n=8, seed=7)
    t1, t2 = L.theorem21_terms(sym, 1e-3, 8)
    assert t2 == 0.0 and t1 == pytest.approx(4e-3 / sym.eigvals[-1] ** 2)
    assert L.eymn_bound(sym, 1e-3, 8) == pytest.approx(L.neumann_bound(sym, 1e-3))


def test_scaling_invariance():
    sym = _sym(n=20, seed=8)
    e = L.wigner_noise(20, 0.01 * sym.eigvals[-1], 8)
    base = L.compare_bounds(sym, e, 4)
    c = 7.5
    scaled = L.compare_bounds(L.SymmetricMatrix(c * sym.eigvals, sym.eigvecs), c * e, 4)
    for name in ("true_error", "bound", "eymn", "first_order"):
        assert getattr(scaled, name) == pytest.approx(getattr(base, name) / c, rel=1e-8)


def test_rotation_invariance_and_diagonal_shortcut():
    lam = ch.synthetic_spectrum(40, 5)
    rng = np.random.default_rng(9)
    rot = L.SymmetricMatrix.from_spectrum(lam, rng)
    diag = L.SymmetricMatrix.diagonal(lam)
    e = L.wigner_noise(40, 2.0, rng)
    q = rot.eigvecs
    a = L.compare_bounds(diag, e, 5)
    b = L.compare_bounds(rot, q @ e @ q.T, 5)
    assert a.true_error == pytest.approx(b.true_error, rel=1e-8)
    assert a.eymn == pytest.approx(b.eymn, rel=1e-10)


def test_true_error_matches_dense_computation():
    sym = _sym(n=25, seed=10)
    e = L.wigner_noise(25, 0.05 * sym.eigvals[-1], 10)
    for p in (1, 6, 25):
        dense = np.linalg.norm(L.best_rank_inverse(sym.matrix + e, p) - L.best_rank_inverse(sym, p), 2)
        assert L.compare_bounds(sym, e, p).true_error == pytest.approx(dense, rel=1e-9)


def test_eymn_does_not_vanish_but_bound_does():
    sym = L.SymmetricMatrix.from_spectrum(ch.synthetic_spectrum(40, 10), 12)
    small = L.compare_bounds(sym, L.wigner_noise(40, 1e-9, 12), 10)
    assert small.bound < 1e-9 and small.true_error < small.bound
    assert small.eymn == pytest.approx(2.0 / L.spectral_cut(sym, 10).lam_drop, rel=1e-6)


# ----------------------------------------------------------------- first-order estimates


def test_first_order_term_matches_finite_differences():
    sym = _sym(n=15, seed=11)
    e = L.wigner_noise(15, 1.0, 11)
    lin = L.first_order_term(sym, e, 5)
    t = 1e-6 * sym.eigvals[-1]
    fd = (L.best_rank_inverse(sym.matrix + t * e, 5) - L.best_rank_inverse(sym.matrix - t * e, 5)) / (2 * t)
    np.testing.assert_allclose(lin, fd, atol=1e-6 * np.abs(fd).max())
    kept = sym.eigvecs[:, -5:]
    inv_p = L.best_rank_inverse(sym, 5)
    np.testing.assert_allclose(kept.T @ lin @ kept, -kept.T @ inv_p @ e @ inv_p @ kept, atol=1e-10)


def test_o_np_first_order_estimate_is_the_dense_one_on_the_same_blocks():
    """first_order_error_wigner reduces ||L(E)|| to a 2p x 2p problem; rebuild its draw of the
    kept rows of W, put them in a full E (any dropped-dropped block) and compare with the dense L."""
    n, p, sigma, seed = 40, 4, 0.3, 5
    lam = ch.synthetic_spectrum(n, p)
    got = L.first_order_error_wigner(lam, p, sigma, seed)
    rng = np.random.default_rng(seed)
    g = rng.standard_normal((p, p))
    w_kk, w_kd = (g + g.T) / np.sqrt(2), rng.standard_normal((p, n - p))
    e = np.zeros((n, n))  # ascending order: kept indices first
    e[:p, :p], e[:p, p:], e[p:, :p] = w_kk, w_kd, w_kd.T
    e[p:, p:] = L.wigner_matrix(n - p, 1)  # does not enter L
    dense = L.first_order_term(L.SymmetricMatrix.diagonal(lam), sigma * e[::-1, ::-1], p)
    assert got == pytest.approx(np.max(np.abs(np.linalg.eigvalsh(dense))), rel=1e-10)


@pytest.mark.parametrize("n, p, sigma, seed", [(40, 4, 0.3, 5), (120, 10, 1.0, 1), (25, 24, 0.5, 3), (12, 11, 2.0, 0)])
def test_exact_error_wigner_is_the_dense_error_of_its_draw(n, p, sigma, seed):
    """Rebuild the evaluator's draw densely (kept rows of W, then the tridiagonal dropped block)
    and compare with dense eigh; the first-order estimate of the same seed is L of that E."""
    lam = ch.synthetic_spectrum(n, p)
    got = L.exact_error_wigner(lam, p, sigma, seed)
    rng = np.random.default_rng(seed)
    g = rng.standard_normal((p, p))
    w_kk, w_kd, m = (g + g.T) / np.sqrt(2), rng.standard_normal((p, n - p)), n - p
    diag = rng.normal(0.0, np.sqrt(2.0), m)
    off = np.sqrt(rng.chisquare(np.arange(m - 1, 0, -1))) if m > 1 else np.zeros(0)
    e = sigma * np.block([[w_kk, w_kd], [w_kd.T, np.diag(diag) + np.diag(off, 1) + np.diag(off, -1)]])
    cmp = L.compare_bounds(L.SymmetricMatrix.diagonal(lam), e[::-1, ::-1], p)  # descending order
    assert got == pytest.approx(cmp.true_error, rel=1e-10)
    assert L.first_order_error_wigner(lam, p, sigma, seed) == pytest.approx(cmp.first_order, rel=1e-10)


def test_first_order_estimate_is_the_exact_error_at_large_n():
    """The second-order remainder shrinks like n^{-1/2} on the synthetic spectrum: under 1% at
    n = 4000, under 0.3% at n = 64000 (same draws)."""
    for n, tol in ((4000, 0.01), (64000, 0.003)):
        lam = ch.synthetic_spectrum(n, 10)
        for seed in (0, 1):
            exact = L.exact_error_wigner(lam, 10, 1.0, seed)
            assert L.first_order_error_wigner(lam, 10, 1.0, seed) == pytest.approx(exact, rel=tol)


def test_noise_models_norms_and_alignment():
    sym = _sym(n=20, seed=13)
    assert L.spectral_norm(L.wigner_noise(20, 0.3, 1)) == pytest.approx(0.3)
    ea = L.aligned_noise(sym, 4, 0.3, 1)
    assert L.spectral_norm(ea) == pytest.approx(0.3)
    u = sym.bottom_basis(4)
    np.testing.assert_allclose(u @ u.T @ ea @ u @ u.T, ea, atol=1e-12)
    e1 = L.rank_one_noise(sym, 0.3)
    assert np.linalg.matrix_rank(e1) == 1 and L.spectral_norm(e1) == pytest.approx(0.3)
    for phi in (0.0, 0.7, np.pi / 2):
        assert L.spectral_norm(L.mixed_noise(sym, 4, 0.3, phi, 2)) == pytest.approx(0.3)


# ----------------------------------------------------------------- bad input

_BAD = [
    (lambda: L.best_rank_inverse(np.ones((3, 2)), 1), "A must be square"),
    (lambda: L.best_rank_inverse(np.array([[1.0, 2.0], [0.0, 1.0]]), 1), "A must be symmetric"),
    (lambda: L.best_rank_inverse(np.array([[np.nan, 0], [0, 1.0]]), 1), "A must be finite"),
    (lambda: L.best_rank_inverse(np.zeros((0, 0)), 1), "A must be a non-empty"),
    (lambda: L.best_rank_inverse(np.eye(3), 0), "p must be >= 1"),
    (lambda: L.best_rank_inverse(np.eye(3) * [1, 2, 3], 4), "p must be <= n"),
    (lambda: L.best_rank_inverse(np.diag([1.0, 0.0, 2.0]), 1), "nonsingular"),
    (lambda: L.best_rank_inverse(np.diag([1.0, 1.0, 2.0]), 1), "not unique"),
    (lambda: L.theorem21_bound(np.diag([1.0, -1.0, 2.0]), 0.1, 1), "positive definite"),
    (lambda: L.theorem21_bound(np.diag([1.0, 2.0]), -0.1, 1), "norm_e must be non-negative"),
    (lambda: L.theorem21_bound(np.diag([1.0, 2.0]), float("nan"), 1), "norm_e must be finite"),
    (lambda: L.theorem21_bound(np.diag([1.0, 2.0]), 1.5, 1.0), "p must be an integer"),
    (lambda: L.theorem21_bound(L.Cut.from_eigvals([1.0, 2.0], 1), 0.1, 2), "does not match"),
    (lambda: L.neumann_bound(np.diag([1.0, 2.0]), 1.0), "norm_e must be <"),
    (lambda: L.eymn_bound(np.diag([1.0, 2.0]), 0.1, 1, lam_noisy_drop=0.0), "lam_noisy_drop must be positive"),
    (lambda: L.gap_condition(np.diag([1.0, 2.0]), float("inf"), 1), "norm_e must be finite"),
    (lambda: L.compare_bounds(np.diag([1.0, 2.0]), np.eye(3), 1), "E must have shape"),
    (lambda: L.compare_bounds(np.diag([1.0, 2.0]), np.array([[0, 1.0], [0, 0]]), 1), "E must be symmetric"),
    (lambda: L.compare_bounds(np.diag([1.0, 2.0]), np.eye(2), 1, first_order="yes"), "first_order must be a bool"),
    (lambda: L.first_order_term(np.diag([1.0, 2.0]), np.full((2, 2), np.inf), 1), "E must be finite"),
    (lambda: L.first_order_error_wigner([1.0, np.nan, 3.0], 1), "eigvals must be finite"),
    (lambda: L.first_order_error_wigner([], 1), "eigvals must not be empty"),
    (lambda: L.first_order_error_wigner([1.0, 2.0], 2), "p must be < n"),
    (lambda: L.first_order_error_wigner([1.0, 1.0, 3.0], 1), "tie"),
    (lambda: L.first_order_error_wigner([1.0, 2.0, 3.0], 1, sigma=0.0), "sigma must be positive"),
    (lambda: L.exact_error_wigner([1.0, 2.0, 3.0], 1), "dropped eigenvalues must all be equal"),
    (lambda: L.exact_error_wigner([1.0, 2.0], 2), "p must be < n"),
    (lambda: L.exact_error_wigner([1.0, 2.0, 2.0], 1, sigma=float("nan")), "sigma must be finite"),
    (lambda: L.exact_error_wigner([1.0, 2.0, 2.0], 1, sigma=10.0), "sigma is too large"),
    (lambda: L.exact_error_wigner([1.0, 1.0, 1.0], 1), "tie"),
    (lambda: L.Cut.from_eigvals([-1.0, 2.0], 1), "eigvals must be positive"),
    (lambda: L.SymmetricMatrix(np.array([1.0, np.nan]), np.eye(2)), "eigvals must be finite"),
    (lambda: L.SymmetricMatrix(np.array([1.0, 2.0]), np.eye(2)), "descending"),
    (lambda: L.SymmetricMatrix(np.array([2.0, 1.0]), np.eye(3)), "eigvecs must have shape"),
    (lambda: L.SymmetricMatrix.from_spectrum([1.0, np.nan]), "eigvals must be finite"),
    (lambda: L.spectral_norm(np.ones((2, 3))), "E must be square"),
    (lambda: L.contour_rank_inverse(np.diag([1.0, 2.0]), 1, 1), "n_nodes must be >= 2"),
    (lambda: L.quadrature_trace(np.diag([1.0, 2.0]), 1, nodes=(4.5,)), "nodes must be integers"),
    (lambda: L.contour_rate(np.diag([1.0, 2.0]), 3), "p must be <= n"),
    (lambda: L.wigner_noise(0, 1.0), "n must be >= 1"),
    (lambda: L.wigner_noise(3, float("inf")), "norm must be finite"),
    (lambda: L.aligned_noise(np.diag([1.0, 2.0]), 1, -1.0), "norm must be non-negative"),
    (lambda: L.rank_one_noise(np.diag([1.0, 2.0]), float("nan")), "norm must be finite"),
    (lambda: L.mixed_noise(np.diag([1.0, 2.0]), 1, 0.1, 2.0), "phi must lie in"),
]


@pytest.mark.parametrize("call, match", _BAD, ids=[m for _, m in _BAD])
def test_bad_input_raises_value_error(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_bad_rng_type():
    with pytest.raises(TypeError, match="rng"):
        L.wigner_matrix(3, "seed")
