"""Tests for chapter 11: the Birkhoff extension (score-ordered decomposition, rounding, BE-FW)."""
import math

import numpy as np
import pytest
import torch
from scipy.optimize import quadratic_assignment

from optbook.geometry import birkhoff as be


def _ds(n, seed, kind="sinkhorn"):
    return be.random_doubly_stochastic(n, seed, kind=kind, n_perms=5)


# --- the decomposition ---------------------------------------------------------------------
@pytest.mark.parametrize("n,seed,kind", [(3, 0, "sinkhorn"), (5, 1, "sinkhorn"), (8, 2, "sinkhorn"),
                                         (6, 3, "mixture"), (8, 4, "mixture")])
def test_decomposition_reconstructs_A(n, seed, kind):
    A = _ds(n, seed, kind)
    dec = be.birkhoff_decomposition(A, be.score_matrix(n, rng=seed))
    assert np.abs(dec.matrix() - A).max() <= 1e-9
    assert abs(dec.alphas.sum() - 1) <= 1e-9
    assert (dec.alphas > 0).all()
    assert len(dec) <= (n - 1) ** 2 + 1
    for p in dec.perms:  # every term is a permutation
        assert sorted(p) == list(range(n))


def test_decomposition_follows_the_score_order():
    """Brute force (n = 4): walk all 24 permutations in decreasing score, subtract the min."""
    n, g = 4, np.random.default_rng(5)
    A, S = _ds(n, 5), be.score_matrix(n, rng=g)
    perms = be.all_permutations(n)
    order = np.argsort(-S[np.arange(n), perms].sum(axis=1))
    B, ref = A.copy(), []
    for p in perms[order]:
        a = max(B[np.arange(n), p].min(), 0.0)
        if a > 1e-12:
            B[np.arange(n), p] -= a
            ref.append((a, tuple(p)))
    dec = be.birkhoff_decomposition(A, S)
    assert [tuple(p) for p in dec.perms] == [p for _, p in ref]
    np.testing.assert_allclose(dec.alphas, [a for a, _ in ref], atol=1e-12)


def test_vertex_is_exact():
    g = np.random.default_rng(0)
    q = be.qap_instance(6, g)
    for _ in range(5):
        p = g.permutation(6)
        dec = be.birkhoff_decomposition(be.perm_matrix(p), be.score_matrix(6, rng=g))
        assert len(dec) == 1 and dec.alphas[0] == pytest.approx(1.0) and np.array_equal(dec.perms[0], p)
        assert be.birkhoff_extension(q, be.perm_matrix(p), be.score_matrix(6, rng=g)) == pytest.approx(q(p))


def test_linear_objective_extends_to_the_inner_product():
    g = np.random.default_rng(1)
    C = g.standard_normal((7, 7))
    lin = be.LinearAssignment(C)
    for s in range(5):
        A = _ds(7, 10 + s)
        assert be.birkhoff_extension(lin, A, be.score_matrix(7, rng=g)) == pytest.approx(np.sum(C * A), abs=1e-9)


def test_truncation_is_a_prefix_and_normalised():
    A, S = _ds(6, 7), be.score_matrix(6, rng=7)
    q = be.qap_instance(6, 7)
    full = be.birkhoff_decomposition(A, S)
    dec = be.birkhoff_decomposition(A, S, k=3)
    np.testing.assert_array_equal(dec.perms, full.perms[:3])
    expected = full.alphas[:3] @ q(full.perms[:3]) / full.alphas[:3].sum()
    assert be.birkhoff_extension(q, A, S, k=3) == pytest.approx(expected)


def test_rounding_guarantee_full_and_truncated():
    g = np.random.default_rng(3)
    q = be.qap_instance(7, g)
    for i in range(40):
        A = _ds(7, 100 + i, "sinkhorn" if i % 2 else "mixture")
        S = be.score_matrix(7, rng=g)
        for k in (None, 1, 3, 5):
            _, v = be.round_birkhoff(q, A, S, k)
            assert v <= be.birkhoff_extension(q, A, S, k) + 1e-12


@pytest.mark.parametrize("n", [2, 3, 4, 5, 6])
def test_scores_are_identifying(n):
    perms = be.all_permutations(n)
    assert len(perms) == math.factorial(n)
    for S in (be.score_matrix(n, rng=n), be.score_matrix(n, "gaussian", rng=n), be.score_matrix(n, "power")):
        scores = S[np.arange(n), perms].sum(axis=1)
        assert len(np.unique(scores)) == len(perms)


def test_warm_score_puts_P0_first():
    g = np.random.default_rng(4)
    p0 = g.permutation(6)
    S = be.warm_score(p0, g)
    perms = be.all_permutations(6)
    assert np.array_equal(perms[np.argmax(S[np.arange(6), perms].sum(axis=1))], p0)


def test_continuity_along_segments():
    g = np.random.default_rng(8)
    q = be.qap_instance(5, g)
    S = be.score_matrix(5, rng=g)
    A0, A1 = _ds(5, 20), _ds(5, 21)
    h = 1e-4
    ts = np.arange(0, 1 + h / 2, h)[:2001]
    vals = np.array([be.birkhoff_extension(q, (1 - t) * A0 + t * A1, S) for t in ts])
    dA = h * np.abs(A1 - A0).max()
    L = 10 * np.abs(q(be.all_permutations(5))).max()
    assert np.abs(np.diff(vals)).max() <= L * dA


def test_greedy_bottleneck_decomposition_is_exact_but_jumps():
    d = be.continuity_data()
    A = be.random_doubly_stochastic(5, 9)
    dec = be.bottleneck_decomposition(A)
    assert np.abs(dec.matrix() - A).max() <= 1e-9
    # the figure's point: the score-ordered extension moves little per grid step, the greedy one jumps
    assert np.abs(np.diff(d["be"])).max() < 0.05 * np.abs(np.diff(d["greedy"])).max()


@pytest.mark.parametrize("k", [None, 4])
def test_gradient_matches_autograd_and_central_differences(k):
    g = np.random.default_rng(11)
    n = 6
    q = be.qap_instance(n, g)
    A, S = _ds(n, 30), be.score_matrix(n, rng=g)
    val, grad, _ = be.birkhoff_extension(q, A, S, k, return_grad=True)
    At = torch.tensor(A, requires_grad=True, dtype=torch.float64)
    Ft = be.extension_torch(q, At, S, k)
    Ft.backward()
    assert Ft.detach().item() == pytest.approx(val)
    np.testing.assert_allclose(grad, At.grad.numpy(), atol=1e-10)
    for _ in range(3):  # directions with zero row and column sums stay in the affine hull
        D = g.standard_normal((n, n))
        D -= D.mean(0, keepdims=True) + D.mean(1, keepdims=True) - D.mean()
        eps = 1e-7
        fd = (be.birkhoff_extension(q, A + eps * D, S, k) - be.birkhoff_extension(q, A - eps * D, S, k)) / (2 * eps)
        assert fd == pytest.approx(np.sum(grad * D), rel=1e-5, abs=1e-7)


def test_minimum_of_extension_is_the_optimum():
    g = np.random.default_rng(12)
    q = be.qap_instance(5, g)
    opt_perm, opt = be.brute_force(q, 5)
    S = be.score_matrix(5, rng=g)
    vals = [be.birkhoff_extension(q, _ds(5, 200 + i, "sinkhorn" if i % 2 else "mixture"), S) for i in range(150)]
    assert min(vals) >= opt - 1e-12
    assert be.birkhoff_extension(q, be.perm_matrix(opt_perm), S) == pytest.approx(opt)


def test_qap_matches_scipy_convention():
    q = be.qap_instance(7, 13)
    res = quadratic_assignment(q.D, q.F, method="faq", options=dict(rng=np.random.default_rng(0)))
    assert q(res.col_ind.astype(np.int64)) == pytest.approx(res.fun)
    P = be.perm_matrix(res.col_ind.astype(np.int64))
    assert q.relaxed(P) == pytest.approx(res.fun)


def test_relaxed_gradient_fd():
    q = be.qap_instance(5, 14)
    A, D = _ds(5, 1), np.random.default_rng(0).standard_normal((5, 5))
    eps = 1e-6
    fd = (q.relaxed(A + eps * D) - q.relaxed(A - eps * D)) / (2 * eps)
    assert fd == pytest.approx(np.sum(q.relaxed_grad(A) * D), rel=1e-6)


def test_tsp_qap_is_the_tour_length():
    pts = np.random.default_rng(15).random((6, 2))
    q = be.tsp_qap(pts)
    pos = np.random.default_rng(16).permutation(6)  # pos[i] = position of city i
    tour = np.argsort(pos)
    length = sum(np.linalg.norm(pts[tour[a]] - pts[tour[(a + 1) % 6]]) for a in range(6))
    assert q(pos) == pytest.approx(length)


def test_brute_force_against_loop():
    q = be.qap_instance(5, 17)
    perm, val = be.brute_force(q, 5)
    assert val == pytest.approx(min(q(p) for p in be.all_permutations(5)))
    assert q(perm) == pytest.approx(val)


def test_sinkhorn_is_doubly_stochastic():
    A = be.sinkhorn(np.random.default_rng(0).random((6, 6)) + 0.1)
    np.testing.assert_allclose(A.sum(0), 1, atol=1e-11)
    np.testing.assert_allclose(A.sum(1), 1, atol=1e-11)


# --- optimisers ------------------------------------------------------------------------------
def test_be_frank_wolfe_is_deterministic_and_consistent():
    q = be.qap_instance(6, 18)
    r1 = be.be_frank_wolfe(q, 6, maxiter=60, rng=1)
    r2 = be.be_frank_wolfe(q, 6, maxiter=60, rng=1)
    assert np.array_equal(r1.x, r2.x) and r1.fun == r2.fun
    assert q(r1.x) == pytest.approx(r1.fun)
    tr = r1.trace
    assert np.all(np.diff(tr["best"]) <= 0)  # incumbent never gets worse
    assert np.all(tr["rounded"] <= tr.objective + 1e-12)  # the rounding guarantee, every iterate
    assert r1.fun >= be.brute_force(q, 6)[1] - 1e-12
    np.testing.assert_allclose(r1.A.sum(0), 1, atol=1e-9)


def test_be_local_improvement_never_worse():
    for s in range(4):
        q = be.qap_instance(7, 40 + s)
        p0 = np.random.default_rng(s).permutation(7)
        r = be.be_frank_wolfe(q, 7, perm0=p0, maxiter=40, rng=s)
        assert r.fun <= q(p0) + 1e-12


def test_be_solves_linear_assignment():
    C = np.random.default_rng(19).random((6, 6))
    lin = be.LinearAssignment(C)
    r = be.be_frank_wolfe(lin, 6, maxiter=100, rng=0)
    assert r.fun == pytest.approx(be.brute_force(lin, 6)[1])


def test_baselines_return_permutations():
    q = be.qap_instance(6, 20)
    opt = be.brute_force(q, 6)[1]
    for res in (be.sinkhorn_gd(q, maxiter=50, rng=0), be.faq(q, rng=0), be.two_opt(q, rng=0),
                be.random_search(q, 6, 50, rng=0)):
        assert sorted(res.x) == list(range(6))
        assert res.fun == pytest.approx(q(res.x)) and res.fun >= opt - 1e-12


def test_as_batch_objective():
    q = be.qap_instance(4, 21)
    f = be.as_batch_objective(lambda p: q(p))
    perms = be.all_permutations(4)
    np.testing.assert_allclose(f(perms), q(perms))


# --- bad input -------------------------------------------------------------------------------
def test_bad_input():
    q = be.qap_instance(4, 0)
    S = be.score_matrix(4, rng=0)
    A = _ds(4, 0)
    with pytest.raises(ValueError, match="A"):
        be.birkhoff_decomposition(np.ones((3, 4)), S)
    with pytest.raises(ValueError, match="A"):
        be.birkhoff_decomposition(np.full((4, 4), np.nan), S)
    with pytest.raises(ValueError, match="A"):
        be.birkhoff_decomposition(-A, S)
    with pytest.raises(ValueError, match="S"):
        be.birkhoff_decomposition(A, np.ones((3, 3)))
    with pytest.raises(ValueError, match="k"):
        be.birkhoff_decomposition(A, S, k=0)
    with pytest.raises(ValueError, match="tol"):
        be.birkhoff_decomposition(A, S, tol=-1.0)
    with pytest.raises(ValueError, match="perm"):
        be.perm_matrix([0, 0, 1])
    with pytest.raises(ValueError, match="perm0"):
        be.warm_score([1, 2, 3], 0)
    with pytest.raises(ValueError, match="kind"):
        be.score_matrix(4, "cauchy")
    with pytest.raises(ValueError, match="n"):
        be.score_matrix(8, "power")
    with pytest.raises(ValueError, match="n"):
        be.all_permutations(10)
    with pytest.raises(ValueError, match="M"):
        be.sinkhorn(-np.ones((3, 3)))
    with pytest.raises(ValueError, match="D"):
        be.QAP(np.ones((3, 4)), np.ones((3, 4)))
    with pytest.raises(ValueError, match="F"):
        be.QAP(np.ones((3, 3)), np.ones((4, 4)))
    with pytest.raises(ValueError, match="points"):
        be.tsp_qap(np.ones((2, 2)))
    with pytest.raises(ValueError, match="step"):
        be.be_frank_wolfe(q, 4, step=0.0)
    with pytest.raises(ValueError, match="k"):
        be.be_frank_wolfe(q, 4, k=0)
    with pytest.raises(ValueError, match="maxiter"):
        be.be_frank_wolfe(q, 4, maxiter=0)
    with pytest.raises(ValueError, match="score_period"):
        be.be_frank_wolfe(q, 4, score_period=0)
    with pytest.raises(ValueError, match="perm0"):
        be.be_frank_wolfe(q, 4, perm0=[0, 1, 2])
    with pytest.raises(ValueError, match="A0"):
        be.be_frank_wolfe(q, 4, A0=np.ones((4, 4)))
    with pytest.raises(ValueError, match="fun"):
        be.be_frank_wolfe(None, 4)
    with pytest.raises(ValueError, match="tau"):
        be.sinkhorn_gd(q, tau=0.0)
    with pytest.raises(ValueError, match="qap"):
        be.faq("not a qap")
    with pytest.raises(ValueError, match="n_evals"):
        be.random_search(q, 4, 0)
    with pytest.raises(ValueError, match="fun"):
        be.birkhoff_extension(lambda p: np.ones(1), A, S)  # wrong number of values
    with pytest.raises(ValueError, match="t"):
        be.continuity_figure(1.5)
    with pytest.raises(ValueError, match="k"):
        be.triangle_figure("random", 5)


def test_figures_build():
    assert len(be.continuity_slider_figure().frames) == len(be.T_GRID)
    assert len(be.triangle_slider_figure().frames) == 8
    assert len(be.trace_slider_figure().frames) == len(be.PERIODS)
