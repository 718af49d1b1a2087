"""Tests for chapter 11's method: the score-ordered decomposition, the extension and its gradient,
rounding, Frank-Wolfe's oracle, the two BE optimisers and the baselines."""
import itertools
import math
import subprocess
import sys

import numpy as np
import pytest
import torch
from scipy.optimize import linear_sum_assignment, quadratic_assignment

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


def test_greedy_bottleneck_decomposition_is_exact():
    A = be.random_doubly_stochastic(5, 9)
    dec = be.bottleneck_decomposition(A)
    assert np.abs(dec.matrix() - A).max() <= 1e-9
    # each term is the bottleneck permutation: no permutation inside the residual has a larger minimum
    B = A.copy()
    for a, p in zip(dec.alphas, dec.perms):
        mins = B[np.arange(5), be.all_permutations(5)].min(axis=1)
        assert a == pytest.approx(mins.max())
        B[np.arange(5), p] -= a


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


# --- numerical soundness at the edges ----------------------------------------------------------
@pytest.mark.parametrize("scale,shift", [(1e300, 0.0), (1e-300, 0.0), (2.0 ** 40, 0.0), (1.0, 1e6)])
def test_decomposition_ignores_the_scale_of_the_score(scale, shift):
    """<S, P> orders permutations the same way after S -> scale S + shift: so must the decomposition
    (the score is mapped onto [0, 1] before the forbidden entries are scored below it)."""
    A, S = _ds(7, 3, "mixture"), be.score_matrix(7, rng=3)
    ref = be.birkhoff_decomposition(A, S)
    dec = be.birkhoff_decomposition(A, scale * S + shift)
    np.testing.assert_array_equal(dec.perms, ref.perms)
    np.testing.assert_allclose(dec.alphas, ref.alphas, rtol=0, atol=1e-15)


@pytest.mark.parametrize("scale", [1e16, 1e300, 1e-300])
def test_sinkhorn_is_scale_free_at_extreme_magnitudes(scale):
    M = np.exp(np.random.default_rng(1).standard_normal((6, 6)))
    A = be.sinkhorn(scale * M)
    np.testing.assert_allclose(A, be.sinkhorn(M), rtol=1e-12, atol=0)
    np.testing.assert_allclose(A.sum(0), 1, atol=1e-11)


def test_optimisers_are_invariant_to_rescaling_f():
    """Multiplying f by a power of two changes every number by an exact factor: the runs coincide.
    (The authors' optimiser is not invariant: its step lr / (1 + log(1 + ||G||)) sees the units of f.)"""
    q = be.qap_instance(7, 5)
    big = be.QAP(q.D, 2.0 ** 30 * q.F)
    for run in (lambda p: be.be_frank_wolfe(p, 7, maxiter=60, rng=2),
                lambda p: be.be_frank_wolfe(p, 7, maxiter=60, rng=2, tie_break="first"),
                lambda p: be.sinkhorn_gd(p, maxiter=60, rng=2)):
        a, b = run(q), run(big)
        np.testing.assert_array_equal(a.x, b.x)
        assert b.fun == 2.0 ** 30 * a.fun


# --- Frank-Wolfe's linear minimisation oracle --------------------------------------------------
def test_lmo_returns_a_minimiser_and_breaks_ties_at_random():
    n = 6
    G = np.zeros((n, n))
    G[0, 3], G[2, 1] = -1.0, -0.5  # a sparse gradient, as BE's is: many permutations tie
    best = G[np.arange(n), be.all_permutations(n)].sum(axis=1).min()
    first = be.assignment_lmo(G, tie_break="first")
    np.testing.assert_array_equal(first, linear_sum_assignment(G)[1])
    seen = set()
    for seed in range(40):
        p = be.assignment_lmo(G, seed)
        assert G[np.arange(n), p].sum() == best
        seen.add(tuple(p))
    assert len(seen) > 10  # the solver's fixed choice would give one
    assert sorted(be.assignment_lmo(np.zeros((n, n)), 0)) == list(range(n))


def test_lmo_never_trades_a_minimiser_for_a_tie():
    """A unique minimiser is returned whatever the noise, even when it wins by a hair."""
    n = 5
    C = np.random.default_rng(0).random((n, n))
    p0 = linear_sum_assignment(C)[1]
    vals = C[np.arange(n), be.all_permutations(n)].sum(axis=1)
    margin = np.sort(vals)[1] - np.sort(vals)[0]
    assert margin > 0
    for seed in range(20):
        np.testing.assert_array_equal(be.assignment_lmo(C, seed), p0)


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


@pytest.mark.parametrize("k", [1, 5])
def test_budgets_are_counted_in_evaluations(k):
    q = be.qap_instance(7, 3)
    calls = []

    def counted(perms):
        calls.append(len(perms))
        return q(perms)

    r = be.be_frank_wolfe(counted, 7, k=k, maxiter=10_000, max_evals=300, rng=0)
    assert r.nfev == sum(calls) and 300 <= r.nfev < 300 + k
    calls.clear()
    r = be.be_momentum_frank_wolfe(counted, 7, k=k, maxiter=10_000, max_evals=300, rng=0)
    assert r.nfev == sum(calls) and 300 <= r.nfev < 300 + 2 * 7  # dynamic k may grow past k
    assert be.two_opt(q, 7, max_evals=300, rng=0).nfev == 300
    assert be.random_search(q, 7, 300, rng=0).nfev == 300


def test_be_local_improvement_never_worse():
    for s in range(4):
        q = be.qap_instance(7, 40 + s)
        p0 = np.random.default_rng(s).permutation(7)
        r = be.be_frank_wolfe(q, 7, perm0=p0, maxiter=40, rng=s)
        assert r.fun <= q(p0) + 1e-12


@pytest.mark.parametrize("tie_break", ["random", "first"])
def test_be_solves_linear_assignment(tie_break):
    C = np.random.default_rng(19).random((6, 6))
    lin = be.LinearAssignment(C)
    for run in (be.be_frank_wolfe, be.be_momentum_frank_wolfe):
        r = run(lin, 6, maxiter=150, rng=0, tie_break=tie_break)
        assert r.fun == pytest.approx(be.brute_force(lin, 6)[1])


def test_momentum_frank_wolfe_is_deterministic_and_keeps_its_incumbent():
    q = be.qap_instance(7, 8)
    for period in (None, 5):
        a = be.be_momentum_frank_wolfe(q, 7, maxiter=120, period=period, rng=4)
        b = be.be_momentum_frank_wolfe(q, 7, maxiter=120, period=period, rng=4)
        assert np.array_equal(a.x, b.x) and a.fun == b.fun == pytest.approx(q(a.x))
        assert np.all(np.diff(a.trace["best"]) <= 0)
        assert np.all(a.trace["rounded"] <= a.trace.objective + 1e-9)  # the rounding guarantee


def test_dynamic_k_grows_when_the_extension_collapses():
    """A flat f makes F_S equal its best term at every step: their counter then grows k."""
    flat = be.as_batch_objective(lambda p: 1.0)
    r = be.be_momentum_frank_wolfe(flat, 6, k=2, maxiter=400, rng=0)
    assert r.trace["k"].max() > 2
    r = be.be_momentum_frank_wolfe(flat, 6, k=2, maxiter=400, rng=0, dynamic_k=False)
    assert r.trace["k"].max() <= 2


def test_two_opt_matches_scipy_from_the_same_start():
    """One descent of our black-box 2-opt visits the same swaps as scipy's method='2opt'."""
    for s in range(3):
        q = be.qap_instance(8, 60 + s)
        p0 = np.random.default_rng(s).permutation(8)
        ours = be.two_opt(q, 8, perm0=p0)
        ref = quadratic_assignment(q.D, q.F, method="2opt",
                                   options=dict(partial_guess=np.column_stack([np.arange(8), p0]),
                                                rng=np.random.default_rng(s)))  # never the global RNG
        np.testing.assert_array_equal(ours.x, ref.col_ind)
        # a local optimum: no swap improves
        swaps = np.repeat(ours.x[None], 28, axis=0)
        for r, (i, j) in enumerate(itertools.combinations(range(8), 2)):
            swaps[r, [i, j]] = swaps[r, [j, i]]
        assert q(swaps).min() >= ours.fun


def test_baselines_return_permutations():
    q = be.qap_instance(6, 20)
    opt = be.brute_force(q, 6)[1]
    for res in (be.sinkhorn_gd(q, maxiter=50, rng=0), be.faq(q, rng=0), be.two_opt(q, 6, rng=0),
                be.two_opt(q, 6, max_evals=200, rng=0), be.random_search(q, 6, 50, rng=0),
                be.be_momentum_frank_wolfe(q, 6, maxiter=30, rng=0)):
        assert sorted(res.x) == list(range(6))
        assert res.fun == pytest.approx(q(res.x)) and res.fun >= opt - 1e-12


def test_as_batch_objective():
    q = be.qap_instance(4, 21)
    f = be.as_batch_objective(lambda p: q(p))
    perms = be.all_permutations(4)
    np.testing.assert_allclose(f(perms), q(perms))


def test_method_module_does_not_import_plotly():
    code = "import sys, optbook.geometry.birkhoff; print('plotly' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


# --- bad input -------------------------------------------------------------------------------
def test_bad_input():
    q = be.qap_instance(4, 0)
    S = be.score_matrix(4, rng=0)
    A = _ds(4, 0)
    cases = [
        ("A", lambda: be.birkhoff_decomposition(np.ones((3, 4)), S)),
        ("A", lambda: be.birkhoff_decomposition(np.full((4, 4), np.nan), S)),
        ("A", lambda: be.birkhoff_decomposition(-A, S)),
        ("A", lambda: be.birkhoff_decomposition(np.zeros((0, 0)), S)),
        ("S", lambda: be.birkhoff_decomposition(A, np.ones((3, 3)))),
        ("S", lambda: be.birkhoff_decomposition(A, np.full((4, 4), np.inf))),
        ("k", lambda: be.birkhoff_decomposition(A, S, k=0)),
        ("tol", lambda: be.birkhoff_decomposition(A, S, tol=-1.0)),
        ("tol", lambda: be.birkhoff_decomposition(A, S, tol=np.nan)),
        ("A", lambda: be.bottleneck_decomposition(-A)),
        ("tol", lambda: be.bottleneck_decomposition(A, tol=1.0)),
        ("perm", lambda: be.perm_matrix([0, 0, 1])),
        ("perm", lambda: be.perm_matrix([])),
        ("perm0", lambda: be.warm_score([1, 2, 3], 0)),
        ("perms", lambda: q(np.array([[0, 1, 1, 2]]))),
        ("perms", lambda: q(np.array([[0, 1, 2]]))),
        ("perms", lambda: q(np.array([[0.0, 1.0, 2.0, 3.0]]))),
        ("perms", lambda: be.LinearAssignment(np.eye(4))(np.array([5, 1, 2, 3]))),
        ("A", lambda: q.relaxed(np.ones((3, 3)))),
        ("A", lambda: q.relaxed_grad(np.full((4, 4), np.nan))),
        ("kind", lambda: be.score_matrix(4, "cauchy")),
        ("n", lambda: be.score_matrix(8, "power")),
        ("n", lambda: be.all_permutations(10)),
        ("n", lambda: be.brute_force(q, 5)),
        ("M", lambda: be.sinkhorn(-np.ones((3, 3)))),
        ("tol", lambda: be.sinkhorn(np.ones((3, 3)), tol=0.0)),
        ("maxiter", lambda: be.sinkhorn(np.ones((3, 3)), maxiter=0)),
        ("kind", lambda: be.random_doubly_stochastic(4, 0, kind="uniform")),
        ("D", lambda: be.QAP(np.ones((3, 4)), np.ones((3, 4)))),
        ("F", lambda: be.QAP(np.ones((3, 3)), np.ones((4, 4)))),
        ("C", lambda: be.LinearAssignment(np.ones((2, 3)))),
        ("points", lambda: be.tsp_qap(np.ones((2, 2)))),
        ("G", lambda: be.assignment_lmo(np.ones((2, 3)))),
        ("tie_break", lambda: be.assignment_lmo(np.ones((3, 3)), tie_break="last")),
        ("step", lambda: be.be_frank_wolfe(q, 4, step=0.0)),
        ("k", lambda: be.be_frank_wolfe(q, 4, k=0)),
        ("maxiter", lambda: be.be_frank_wolfe(q, 4, maxiter=0)),
        ("max_evals", lambda: be.be_frank_wolfe(q, 4, max_evals=0)),
        ("score_period", lambda: be.be_frank_wolfe(q, 4, score_period=0)),
        ("restart_mix", lambda: be.be_frank_wolfe(q, 4, restart_mix=1.5)),
        ("tie_break", lambda: be.be_frank_wolfe(q, 4, tie_break="lexicographic")),
        ("perm0", lambda: be.be_frank_wolfe(q, 4, perm0=[0, 1, 2])),
        ("A0", lambda: be.be_frank_wolfe(q, 4, A0=np.ones((4, 4)))),
        ("fun", lambda: be.be_frank_wolfe(None, 4)),
        ("n", lambda: be.be_frank_wolfe(q, 5)),
        ("n", lambda: be.be_frank_wolfe(q, 1)),
        ("lr", lambda: be.be_momentum_frank_wolfe(q, 4, lr=0.0)),
        ("momentum", lambda: be.be_momentum_frank_wolfe(q, 4, momentum=1.0)),
        ("period", lambda: be.be_momentum_frank_wolfe(q, 4, period=0)),
        ("jitter", lambda: be.be_momentum_frank_wolfe(q, 4, jitter=1.5)),
        ("dynamic_k", lambda: be.be_momentum_frank_wolfe(q, 4, dynamic_k="yes")),
        ("max_evals", lambda: be.be_momentum_frank_wolfe(q, 4, max_evals=-1)),
        ("tau", lambda: be.sinkhorn_gd(q, tau=0.0)),
        ("lr", lambda: be.sinkhorn_gd(q, lr=np.inf)),
        ("sinkhorn_iters", lambda: be.sinkhorn_gd(q, sinkhorn_iters=0)),
        ("qap", lambda: be.sinkhorn_gd("not a qap")),
        ("qap", lambda: be.faq("not a qap")),
        ("max_evals", lambda: be.two_opt(q, 4, max_evals=0)),
        ("perm0", lambda: be.two_opt(q, 4, perm0=[0, 1, 2, 2])),
        ("n_evals", lambda: be.random_search(q, 4, 0)),
        ("fun", lambda: be.birkhoff_extension(lambda p: np.ones(1), A, S)),  # wrong number of values
        ("fun", lambda: be.birkhoff_extension(lambda p: np.full(len(p), np.nan), A, S)),
        ("fun", lambda: be.round_birkhoff("f", A, S)),
        ("A", lambda: be.birkhoff_extension(be.qap_instance(5, 0), A, S)),
        ("normalize", lambda: be.birkhoff_extension(q, A, S, normalize="yes")),
        ("A", lambda: be.extension_torch(q, A, S)),
        ("f", lambda: be.as_batch_objective(3)),
    ]
    for name, call in cases:
        with pytest.raises(ValueError, match=name):
            call()


def test_gradient_by_back_substitution_equals_the_recursion():
    g = np.random.default_rng(31)
    for n, kind in ((6, "sinkhorn"), (7, "mixture"), (8, "sinkhorn")):
        dec = be.birkhoff_decomposition(_ds(n, 40 + n, kind), be.score_matrix(n, rng=g))
        w = g.standard_normal(len(dec))
        np.testing.assert_allclose(dec.gradient(w), np.tensordot(w, dec.alpha_gradients(), axes=1), atol=1e-12)
        assert np.count_nonzero(dec.gradient(w)) <= len(dec)  # it lives on the pivots
    with pytest.raises(ValueError, match="weights"):
        dec.gradient(np.ones(len(dec) + 1))
    with pytest.raises(ValueError, match="weights"):
        dec.gradient(np.full(len(dec), np.nan))
