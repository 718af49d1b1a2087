"""Chapter 09's methods: l_inf Lewis weights, the WLS oracle, MWU-IRLS and its certificates, the
exchange phase, the baselines, the QSC trust region; hard designs and bad input. (The chapter's
experiments, figures and claims are tested in test_linf_regression_chapter.py.)"""
import subprocess
import sys

import numpy as np
import pytest
import scipy.linalg
import scipy.sparse

from optbook.geometry import linf_regression as L


def _design(n=200, d=4, coherent=True, seed=0):
    return L.make_linf_problem(n, d, coherent=coherent, rng=seed)


def _same_span_pair(n=2000, seed=0, delta=1e-8):
    """A design whose second column is the first plus delta times noise, and a well-scaled design
    with the same column space (the noise itself in place of the second column)."""
    A, b = _design(n, 10, seed=seed)
    g = np.random.default_rng(seed + 1).standard_normal(n)
    near, clean = A.copy(), A.copy()
    near[:, 1] = A[:, 0] + delta * g
    clean[:, 1] = g
    return near, clean, b


def test_the_method_does_not_pull_plotly():
    code = ("import sys; import optbook.geometry.linf_regression; "
            "assert 'plotly' not in sys.modules, 'plotly imported'")
    subprocess.run([sys.executable, "-c", code], check=True)


# --------------------------------------------------------------------------- Lewis weights


def test_lewis_weights_definition():
    A, _ = _design(300, 5)
    lw = L.lewis_weights(A, kappa_target=1 + 1e-7)
    assert abs(lw.w.sum() - 5) < 1e-8
    lev = L._leverages(A, lw.w)
    assert lev.max() <= 1 + 1e-7
    big = lw.w > 1e-3  # complementary slackness: leverage 1 wherever the weight is not negligible
    assert np.allclose(lev[big], 1.0, atol=1e-4)
    assert lw.kappa_history[-1] == pytest.approx(lw.kappa) and lw.solves == lw.iterations + 1


def test_lewis_weights_closed_form_duplicated_identity():
    lw = L.lewis_weights(np.vstack([np.eye(3), np.eye(3)]))
    assert np.allclose(lw.w, 0.5) and lw.iterations == 0


def test_lewis_weights_invariance_and_permutation():
    A, _ = _design(120, 3, seed=1)
    R = np.array([[2.0, 1.0, 0.0], [0.0, 1.0, -3.0], [1.0, 0.0, 1.0]])
    w = L.lewis_weights(A, kappa_target=1 + 1e-5).w
    assert np.allclose(L.lewis_weights(A @ R, kappa_target=1 + 1e-5).w, w, atol=1e-7)
    assert np.allclose(L.lewis_weights(1e9 * A, kappa_target=1 + 1e-5).w, w, atol=1e-9)
    perm = np.random.default_rng(0).permutation(120)
    assert np.allclose(L.lewis_weights(A[perm], kappa_target=1 + 1e-5).w, w[perm], atol=1e-9)


def test_lewis_weights_of_dependent_and_collinear_columns():
    """Lewis weights live on the column space: a dependent column changes nothing (no LinAlgError),
    and a nearly collinear pair is a well-defined 2-D subspace."""
    A, _ = _design(150, 3, seed=5)
    w = L.lewis_weights(A, kappa_target=1 + 1e-6).w
    dup = L.lewis_weights(np.column_stack([A, A[:, 0] - 2 * A[:, 2]]), kappa_target=1 + 1e-6)
    assert np.allclose(dup.w, w, atol=1e-7) and dup.w.sum() == pytest.approx(3.0)
    near, clean, _ = _same_span_pair(300)
    assert np.allclose(L.lewis_weights(near, kappa_target=1 + 1e-6).w,
                       L.lewis_weights(clean, kappa_target=1 + 1e-6).w, atol=1e-5)
    assert L.leverage_scores(near).sum() == pytest.approx(10.0)


def test_john_containment():
    A, _ = _design(150, 3, seed=2)
    lw = L.lewis_weights(A, kappa_target=1 + 1e-6)
    M = (A.T * lw.w) @ A
    Y = np.random.default_rng(3).standard_normal((3, 500))
    inf2 = np.max(np.abs(A @ Y), axis=0) ** 2
    quad = np.einsum("ij,ij->j", Y, M @ Y)
    assert np.all(inf2 <= lw.kappa * quad * (1 + 1e-9))
    assert np.all(quad <= 3 * inf2 * (1 + 1e-9))


def test_overestimates_have_leverage_at_most_one():
    A, _ = _design(400, 6, seed=4)
    lw = L.lewis_weights(A, kappa_target=2.0)
    assert lw.kappa <= 2.0
    assert L._leverages(A, lw.tau).max() <= 1 + 1e-9
    assert lw.total == pytest.approx(lw.kappa * 6)


def test_leverage_scores_are_the_hat_matrix_diagonal():
    A, _ = _design(60, 4, seed=6)
    H = A @ np.linalg.solve(A.T @ A, A.T)
    assert np.allclose(L.leverage_scores(A), np.diag(H), atol=1e-12)


# --------------------------------------------------------------------------- WLS oracle


def test_wls_matches_lstsq():
    A, b = _design(80, 4, seed=5)
    p = np.random.default_rng(6).random(80)
    s = np.sqrt(p)
    ref = np.linalg.lstsq(A * s[:, None], b * s, rcond=None)[0]
    assert np.allclose(L.wls(A, b, p), ref, atol=1e-10)
    Q, R = np.linalg.qr(A)
    assert np.allclose(L._wls_q(Q, b, p), R @ ref, atol=1e-9)  # the solver's QR oracle on a basis


def test_wls_with_constraints_matches_null_space():
    A, b = _design(60, 5, seed=7)
    rng = np.random.default_rng(8)
    N, v = rng.standard_normal((2, 5)), rng.standard_normal(2)
    p = rng.random(60)
    x = L.wls(A, b, p, N, v)
    assert np.linalg.norm(N @ x - v) <= 1e-9
    x0 = np.linalg.lstsq(N, v, rcond=None)[0]
    Z = scipy.linalg.null_space(N)
    s = np.sqrt(p)
    z = np.linalg.lstsq((A @ Z) * s[:, None], (b - A @ x0) * s, rcond=None)[0]
    assert np.allclose(x, x0 + Z @ z, atol=1e-8)


def test_wls_rank_deficient_returns_the_minimum_norm_fit():
    A, b = _design(50, 3, seed=9)
    B = np.column_stack([A, A[:, 0]])
    p = np.random.default_rng(1).random(50)
    p[:5] = 0.0  # zero weights are allowed
    x = L.wls(B, b, p)
    s = np.sqrt(p)
    ref = np.linalg.lstsq(B * s[:, None], b * s, rcond=None)[0]  # minimum norm
    assert np.allclose(x, ref, atol=1e-9)


# --------------------------------------------------------------------------- MWU-IRLS


def test_closed_form_one_dimension():
    b = np.random.default_rng(9).standard_normal(50) * 3
    A = np.ones((50, 1))
    opt = (b.max() - b.min()) / 2
    res = L.mwu_irls(A, b, eps=0.01)
    assert res.success and opt <= res.fun <= 1.01 * opt and res.lower <= opt + 1e-12
    lp = L.linf_lp(A, b)
    assert lp.fun == pytest.approx(opt, rel=1e-9)
    assert lp.x[0] == pytest.approx((b.max() + b.min()) / 2, abs=1e-8)


@pytest.mark.parametrize("floor", ["lewis", "uniform"])
@pytest.mark.parametrize("constrained", [False, True])
def test_certificates_sandwich_and_width_bound(floor, constrained):
    A, b = _design(400, 6, coherent=True, seed=10)
    N = v = None
    if constrained:
        rng = np.random.default_rng(11)
        N, v = rng.standard_normal((2, 6)), rng.standard_normal(2)
    opt = L.linf_lp(A, b, N, v).fun
    res = L.mwu_irls(A, b, N, v, eps=0.05, floor=floor)
    assert res.success
    assert np.all(res.trace["lower"] <= opt * (1 + 1e-9))
    assert np.all(res.trace.objective >= opt * (1 - 1e-9))
    assert res.fun <= 1.05 * res.lower + 1e-12 and res.fun <= 1.05 * opt
    assert np.all(res.trace["rho"] <= res.width_bound)  # a theorem: must never fail
    assert res.width_bound == pytest.approx(L.width_bound(res.floor_budget, 0.05))
    assert np.all(np.diff(res.trace.objective) <= 0) and np.all(np.diff(res.trace["lower"]) >= 0)
    assert np.max(np.abs(A @ res.x - b)) == pytest.approx(res.fun, rel=1e-10)
    if constrained:
        assert np.linalg.norm(N @ res.x - v) <= 1e-8


def test_floor_budgets():
    """The Lewis floor's budget is kappa * d <= 2d whatever n; the uniform one is n * max leverage."""
    A, b = _design(2000, 10, coherent=True, seed=13)
    lew, uni = L.mwu_irls(A, b, floor="lewis"), L.mwu_irls(A, b, floor="uniform")
    assert lew.floor_budget <= 2 * 10 + 1e-9
    assert uni.floor_budget == pytest.approx(2000 * L.leverage_scores(A).max(), rel=1e-9)
    assert lew.width_bound <= 0.1 * uni.width_bound
    # a custom floor: the leverage scores themselves
    lev = L.mwu_irls(A, b, floor=L.leverage_scores(A))
    assert lev.success and lev.lewis_solves == 0
    # a floor on fewer rows than columns bounds nothing, but the certificate still stops the run
    thin = np.zeros(2000)
    thin[:3] = 1.0
    res = L.mwu_irls(A, b, floor=thin, eps=0.05)
    assert res.success and res.floor_budget == np.inf and res.width_bound == np.inf


def test_theory_step_also_certifies():
    A, b = _design(150, 3, seed=12)
    res = L.mwu_irls(A, b, eps=0.1, eta=0.05, maxiter=5000)
    assert res.success and res.fun <= 1.1 * L.linf_lp(A, b).fun


def test_determinism_and_callback():
    A, b = _design(300, 4, seed=14)
    seen = []
    r1 = L.mwu_irls(A, b, callback=lambda x, p: seen.append((x.copy(), p.sum())))
    r2 = L.mwu_irls(A, b)
    assert np.array_equal(r1.x, r2.x) and r1.nit == r2.nit == len(seen)
    assert all(s == pytest.approx(1.0) for _, s in seen)
    A2, b2 = L.make_linf_problem(300, 4, coherent=True, rng=14)
    assert np.array_equal(A, A2) and np.array_equal(b, b2)


def test_rescaled_problems_give_the_same_run():
    """l_inf regression is invariant under A -> c A R, b -> c b: the same iterations, OPT times c."""
    A, b = _design(500, 5, seed=15)
    R = np.triu(np.random.default_rng(2).standard_normal((5, 5))) + 3 * np.eye(5)
    base = L.mwu_irls(A, b, eps=0.02)
    for c in (1e-8, 1e8):
        res = L.mwu_irls(c * A @ R, c * b, eps=0.02)
        assert res.nit == base.nit
        assert res.fun == pytest.approx(c * base.fun, rel=1e-8) and res.lower == pytest.approx(c * base.lower, rel=1e-8)
        assert L.linf_lp(c * A @ R, c * b).fun == pytest.approx(c * L.linf_lp(A, b).fun, rel=1e-8)


@pytest.mark.parametrize("coherent", [False, True])
@pytest.mark.parametrize("seed", [0, 2])
def test_accuracy_1e6_when_asked(coherent, seed):
    """The multiplicative-weights phase alone stalls near 1e-5 here; the exchange phase certifies 1e-6."""
    A, b = _design(2000, 10, coherent=coherent, seed=seed)
    opt = L.linf_lp(A, b).fun
    res = L.mwu_irls(A, b, eps=1e-6)
    assert res.success and res.exchange_rounds >= 1
    assert res.lower <= opt * (1 + 1e-12) and opt * (1 - 1e-12) <= res.fun <= (1 + 1e-6) * res.lower
    assert np.all(res.trace["lower"] <= opt * (1 + 1e-12))
    plain = L.mwu_irls(A, b, eps=1e-6, polish=False, maxiter=300)
    assert not plain.success


def test_accuracy_with_constraints_and_exchange_alone():
    A, b = _design(1500, 8, seed=3)
    rng = np.random.default_rng(4)
    N, v = rng.standard_normal((3, 8)), rng.standard_normal(3)
    opt = L.linf_lp(A, b, N, v).fun
    res = L.mwu_irls(A, b, N, v, eps=1e-8)
    assert res.success and res.fun <= opt * (1 + 1e-8) and np.linalg.norm(N @ res.x - v) <= 1e-8
    ex = L.linf_exchange(A, b, N, v, eps=1e-10)
    assert ex.success and ex.fun == pytest.approx(opt, rel=1e-9) and ex.lower <= opt * (1 + 1e-12)
    assert L.linf_exchange(A, b, rows=np.arange(5)).success


def test_nearly_collinear_and_rank_deficient_designs():
    """The span of (a, a + 1e-8 g) is the span of (a, g): every solver must find that problem's
    optimum (HiGHS on the raw design returned the optimum without g, 5% too high)."""
    near, clean, b = _same_span_pair()
    opt = L.linf_lp(clean, b).fun
    without_g = L.linf_lp(np.delete(near, 1, axis=1), b).fun
    assert without_g > 1.01 * opt  # the direction g matters
    assert L.linf_lp(near, b).fun == pytest.approx(opt, rel=1e-5)
    res = L.mwu_irls(near, b, eps=0.01)
    assert res.success and opt * (1 - 1e-5) <= res.fun <= 1.01 * opt
    dep = np.column_stack([clean, clean[:, 2] + clean[:, 3]])
    for solver in (lambda: L.mwu_irls(dep, b, eps=0.01), lambda: L.lawson_irls(dep, b, eps=0.01)):
        out = solver()
        assert out.success and opt * (1 - 1e-9) <= out.fun <= 1.01 * opt
    assert L.linf_lp(dep, b).fun == pytest.approx(opt, rel=1e-9)
    assert L.linf_exchange(dep, b).fun == pytest.approx(opt, rel=1e-9)


def test_constraints_that_fix_the_residual_or_are_redundant():
    A, b = _design(40, 3, seed=16)
    x_fixed = np.array([1.0, -1.0, 2.0])
    res = L.mwu_irls(A, b, np.eye(3), x_fixed)
    assert res.success and np.allclose(res.x, x_fixed) and res.fun == pytest.approx(np.max(np.abs(A @ x_fixed - b)))
    N = np.array([[1.0, 0.0, 0.0], [2.0, 0.0, 0.0]])  # rank 1, consistent
    r = L.mwu_irls(A, b, N, np.array([1.0, 2.0]), eps=0.01)
    assert r.success and r.x[0] == pytest.approx(1.0)
    with pytest.raises(ValueError, match="no solution"):
        L.mwu_irls(A, b, N, np.array([1.0, 3.0]))


# --------------------------------------------------------------------------- baselines and references


def test_lp_dual_weights_make_the_lower_bound_tight():
    """The LP's dual weights are a probability vector on the active rows, and least squares with
    them attains OPT^2: the IRLS lower bound is exact at the optimal weights."""
    A, b = _design(300, 4, seed=17)
    lp = L.linf_lp(A, b)
    assert lp.dual.sum() == pytest.approx(1.0) and np.all(lp.dual >= 0)
    active = lp.dual > 1e-9
    assert np.allclose(np.abs(A[active] @ lp.x - b[active]), lp.fun, rtol=1e-7)
    x = L.wls(A, b, lp.dual)
    assert np.sqrt(lp.dual @ (A @ x - b) ** 2) == pytest.approx(lp.fun, rel=1e-7)


def test_lp_gets_a_sparse_matrix(monkeypatch):
    A, b = _design(100, 3, seed=18)
    ref = L.linf_exchange(A, b, eps=1e-12).fun
    seen = []
    real = L.linprog

    def spy(*args, **kw):
        seen.append(kw["A_ub"])
        return real(*args, **kw)

    monkeypatch.setattr(L, "linprog", spy)
    for method in L.LP_METHODS:
        for presolve in (True, False):
            assert L.linf_lp(A, b, method=method, presolve=presolve).fun == pytest.approx(ref, rel=1e-8)
    assert len(seen) == 6 and all(scipy.sparse.issparse(m) for m in seen)


@pytest.mark.parametrize("solver", ["CLARABEL", "SCIPY"])
def test_cvxpy_matches_the_lp(solver):
    A, b = _design(300, 4, seed=19)
    rng = np.random.default_rng(20)
    N, v = rng.standard_normal((1, 4)), rng.standard_normal(1)
    res = L.linf_cvxpy(A, b, N, v, solver=solver)
    assert res.success and res.fun == pytest.approx(L.linf_lp(A, b, N, v).fun, rel=1e-6)
    loose = L.linf_cvxpy(A, b, tol_gap_abs=0.0, tol_gap_rel=1e-2, tol_feas=1e-2)
    assert loose.fun <= 1.02 * L.linf_lp(A, b).fun


def test_lawson_and_softmax_baselines():
    A, b = _design(300, 4, coherent=False, seed=15)
    opt = L.linf_lp(A, b).fun
    for power in (0.5, 1.0):  # larger powers can oscillate (the chapter's tuning grid shows it)
        law = L.lawson_irls(A, b, eps=0.01, power=power)
        assert law.success and opt * (1 - 1e-9) <= law.fun <= 1.01 * opt and law.lower <= opt * (1 + 1e-9)
    mu = 0.05
    sm = L.softmax_newton(A, b, mu=mu)
    assert sm.success
    assert opt <= sm.fun + 1e-9 and sm.smoothed <= opt + mu * np.log(2 * 300) + 1e-8
    assert sm.smoothed >= opt - 1e-9
    rng = np.random.default_rng(21)
    N, v = rng.standard_normal((1, 4)), rng.standard_normal(1)
    smc = L.softmax_newton(A, b, N, v, mu=mu)
    assert abs(N @ smc.x - v)[0] < 1e-9 and smc.fun <= L.linf_lp(A, b, N, v).fun + mu * np.log(600) + 1e-8


def test_scipy_lp_matches_brute_force_on_tiny_case():
    rng = np.random.default_rng(16)
    A = np.column_stack([rng.uniform(0, 1, 4), np.ones(4)])
    b = rng.standard_normal(4)
    lp = L.linf_lp(A, b)
    g = np.linspace(-10, 10, 801)
    X, Y = np.meshgrid(g, g)
    vals = np.max(np.abs(A[:, :1, None] * X[None] + A[:, 1:, None] * Y[None] - b[:, None, None]), axis=0)
    assert lp.fun <= vals.min() + 1e-12 and lp.fun >= vals.min() - 0.05


# --------------------------------------------------------------------------- QSC


def test_logistic_is_quasi_self_concordant():
    t = np.linspace(-30, 30, 2001)
    _, f2, f3 = L.logistic_loss_derivatives(t)
    assert np.all(np.abs(f3) <= 1.0 * f2 + 1e-15)
    h = 1e-5
    fd = (L.logistic_loss_derivatives(t + h)[1] - L.logistic_loss_derivatives(t - h)[1]) / (2 * h)
    assert np.allclose(fd, f3, atol=1e-8)
    assert np.all(np.isfinite(L.logistic_loss_derivatives(np.array([-1e300, 1e300]))[1]))


def test_trust_region_step_feasible_and_optimal():
    rng = np.random.default_rng(17)
    A = rng.standard_normal((30, 3))
    g = rng.standard_normal(3) * 10
    H = A.T @ A / 30
    D, _ = L.box_trust_region_step(g, H, A, 0.2, iters=5000)
    assert np.max(np.abs(A @ D)) <= 0.2 + 1e-9
    from scipy.optimize import minimize
    cons = [{"type": "ineq", "fun": lambda x: 0.2 - A @ x}, {"type": "ineq", "fun": lambda x: 0.2 + A @ x}]
    ref = minimize(lambda x: g @ x + 0.5 * x @ H @ x, np.zeros(3), constraints=cons, method="SLSQP",
                   options=dict(ftol=1e-12, maxiter=500))
    val = g @ D + 0.5 * D @ H @ D
    assert val <= ref.fun + 1e-4 * abs(ref.fun)


def test_qsc_trust_region_reaches_newton_solution():
    A = L.make_logistic_rows(150, 2, separation=2.0, rng=18)
    x0 = np.array([4.0, -4.0])
    tr, nt = L.qsc_trust_region(A, x0), L.damped_newton(A, x0)
    assert tr.success and nt.success
    assert tr.fun == pytest.approx(nt.fun, rel=1e-10)
    assert np.all(np.diff(tr.trace.objective) <= 1e-9)  # the model is trustworthy in the box
    assert np.nanmax(tr.trace.step_size) <= 1.0 + 1e-9
    gd = L.gradient_descent(A, x0, maxiter=5000)
    assert gd.fun == pytest.approx(nt.fun, rel=1e-6)


# --------------------------------------------------------------------------- bad input


def test_bad_input_linf_solvers():
    A, b = _design(50, 3, seed=19)
    nan_A = A.copy()
    nan_A[0, 0] = np.nan
    for solver in (L.mwu_irls, L.lawson_irls, L.linf_lp, L.linf_exchange, L.linf_cvxpy,
                   lambda A, b, **kw: L.softmax_newton(A, b, mu=1.0, **kw), lambda A, b, **kw: L.wls(A, b, np.ones(len(b)), **kw)):
        with pytest.raises(ValueError, match="A"):
            solver(nan_A, b)
        with pytest.raises(ValueError, match="A"):
            solver(A[:, 0], b)
        with pytest.raises(ValueError, match="A"):
            solver(np.zeros((0, 3)), b)
        with pytest.raises(ValueError, match="b"):
            solver(A, b[:-1])
        with pytest.raises(ValueError, match="b"):
            solver(A, np.r_[b[:-1], np.inf])
        with pytest.raises(ValueError, match="N and v"):
            solver(A, b, N=np.ones((1, 3)))
        with pytest.raises(ValueError, match="N"):
            solver(A, b, N=np.ones((1, 4)), v=np.ones(1))
        with pytest.raises(ValueError, match="v"):
            solver(A, b, N=np.ones((1, 3)), v=np.ones(2))
    for eps in (0.0, 1.0, -1.0, np.nan, "0.1"):
        for solver in (L.mwu_irls, L.lawson_irls, L.linf_exchange):
            with pytest.raises(ValueError, match="eps"):
                solver(A, b, eps=eps)
    for maxiter in (0, 2.5, True):
        with pytest.raises(ValueError, match="maxiter"):
            L.mwu_irls(A, b, maxiter=maxiter)
        with pytest.raises(ValueError, match="maxiter"):
            L.lawson_irls(A, b, maxiter=maxiter)
        with pytest.raises(ValueError, match="maxiter"):
            L.softmax_newton(A, b, mu=1.0, maxiter=maxiter)
    with pytest.raises(ValueError, match="maxrounds"):
        L.linf_exchange(A, b, maxrounds=0)
    with pytest.raises(ValueError, match="rows"):
        L.linf_exchange(A, b, rows=np.array([0, 50]))
    with pytest.raises(ValueError, match="eta"):
        L.mwu_irls(A, b, eta=0)
    with pytest.raises(ValueError, match="floor"):
        L.mwu_irls(A, b, floor="gaussian")
    with pytest.raises(ValueError, match="floor"):
        L.mwu_irls(A, b, floor=-np.ones(50))
    with pytest.raises(ValueError, match="floor"):
        L.mwu_irls(A, b, floor=np.ones(49))
    with pytest.raises(ValueError, match="polish"):
        L.mwu_irls(A, b, polish="yes")
    with pytest.raises(ValueError, match="callback"):
        L.mwu_irls(A, b, callback=3)
    with pytest.raises(ValueError, match="power"):
        L.lawson_irls(A, b, power=0)
    with pytest.raises(ValueError, match="method"):
        L.linf_lp(A, b, method="simplex")
    with pytest.raises(ValueError, match="presolve"):
        L.linf_lp(A, b, presolve="no")
    with pytest.raises(ValueError, match="solver"):
        L.linf_cvxpy(A, b, solver="GUROBI")
    with pytest.raises(ValueError, match="mu"):
        L.softmax_newton(A, b, mu=-1)
    with pytest.raises(ValueError, match="tol"):
        L.softmax_newton(A, b, mu=1.0, tol=0)
    with pytest.raises(ValueError, match="p"):
        L.wls(A, b, -np.ones(50))
    with pytest.raises(ValueError, match="p"):
        L.wls(A, b, np.zeros(50))
    with pytest.raises(ValueError, match="total_floor"):
        L.width_bound(0.0, 0.1)
    with pytest.raises(ValueError, match="eps"):
        L.width_bound(1.0, 0.0)


def test_bad_input_lewis_qsc_and_generators():
    A, b = _design(50, 3, seed=19)
    with pytest.raises(ValueError, match="kappa_target"):
        L.lewis_weights(A, kappa_target=0.5)
    with pytest.raises(ValueError, match="maxiter"):
        L.lewis_weights(A, maxiter=-1)
    with pytest.raises(ValueError, match="A"):
        L.lewis_weights(np.zeros((5, 2)))
    with pytest.raises(ValueError, match="A"):
        L.leverage_scores(np.ones(5))
    with pytest.raises(ValueError, match="radius"):
        L.box_trust_region_step(np.ones(3), np.eye(3), A, 0.0)
    with pytest.raises(ValueError, match="H"):
        L.box_trust_region_step(np.ones(3), np.triu(np.ones((3, 3))), A, 1.0)
    with pytest.raises(ValueError, match="beta"):
        L.box_trust_region_step(np.ones(3), np.eye(3), A, 1.0, beta=-1.0)
    with pytest.raises(ValueError, match="tol"):
        L.box_trust_region_step(np.ones(3), np.eye(3), A, 1.0, tol=np.nan)
    with pytest.raises(ValueError, match="iters"):
        L.box_trust_region_step(np.ones(3), np.eye(3), A, 1.0, iters=0)
    with pytest.raises(ValueError, match="g"):
        L.box_trust_region_step(np.ones(2), np.eye(3), A, 1.0)
    with pytest.raises(ValueError, match="x0"):
        L.qsc_trust_region(A, np.ones(2))
    for f in (L.qsc_trust_region, L.damped_newton, L.gradient_descent):
        with pytest.raises(ValueError, match="tol"):
            f(A, np.ones(3), tol=-1)
        with pytest.raises(ValueError, match="maxiter"):
            f(A, np.ones(3), maxiter=0)
        with pytest.raises(ValueError, match="A"):
            f(np.full((4, 3), np.nan), np.ones(3))
    with pytest.raises(ValueError, match="M"):
        L.qsc_trust_region(A, np.ones(3), M=0)
    with pytest.raises(ValueError, match="t"):
        L.logistic_loss_derivatives(np.array([np.nan]))
    with pytest.raises(ValueError, match="n"):
        L.make_linf_problem(5, 10)
    with pytest.raises(ValueError, match="pareto"):
        L.make_linf_problem(50, 3, pareto=0)
    with pytest.raises(ValueError, match="outliers"):
        L.make_linf_problem(50, 3, outliers=2)
    with pytest.raises(ValueError, match="separation"):
        L.make_logistic_rows(50, 2, separation=-1)
