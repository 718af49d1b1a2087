"""Chapter 09: l_inf Lewis weights, the WLS oracle, MWU-IRLS certificates, baselines, QSC trust region."""
import numpy as np
import pytest
import scipy.linalg

from optbook.geometry import linf_regression as ch


def _design(n=200, d=4, coherent=True, seed=0):
    return ch.make_linf_problem(n, d, coherent=coherent, rng=seed)


# --------------------------------------------------------------------------- Lewis weights


def test_lewis_weights_definition():
    A, _ = _design(300, 5)
    lw = ch.lewis_weights(A, kappa_target=1 + 1e-7)
    assert abs(lw.w.sum() - 5) < 1e-8
    lev = ch._leverages(A, lw.w)
    assert lev.max() <= 1 + 1e-7
    # equality wherever the weight is not negligible (complementary slackness)
    big = lw.w > 1e-3
    assert np.allclose(lev[big], 1.0, atol=1e-4)
    # log det increases monotonically along the iteration: kappa history ends at the target
    assert lw.kappa_history[-1] == pytest.approx(lw.kappa)


def test_lewis_weights_closed_form_duplicated_identity():
    A = np.vstack([np.eye(3), np.eye(3)])
    lw = ch.lewis_weights(A)
    assert np.allclose(lw.w, 0.5)
    assert lw.iterations == 0


def test_lewis_weights_invariance_and_permutation():
    A, _ = _design(120, 3, seed=1)
    R = np.array([[2.0, 1.0, 0.0], [0.0, 1.0, -3.0], [1.0, 0.0, 1.0]])
    w = ch.lewis_weights(A, kappa_target=1 + 1e-5).w
    assert np.allclose(ch.lewis_weights(A @ R, kappa_target=1 + 1e-5).w, w, atol=1e-7)
    perm = np.random.default_rng(0).permutation(120)
    assert np.allclose(ch.lewis_weights(A[perm], kappa_target=1 + 1e-5).w, w[perm], atol=1e-9)


def test_john_containment():
    A, _ = _design(150, 3, seed=2)
    lw = ch.lewis_weights(A, kappa_target=1 + 1e-6)
    M = (A.T * lw.w) @ A
    Y = np.random.default_rng(3).standard_normal((3, 500))
    inf2 = np.max(np.abs(A @ Y), axis=0) ** 2
    quad = np.einsum("ij,ij->j", Y, M @ Y)
    assert np.all(inf2 <= lw.kappa * quad * (1 + 1e-9))
    assert np.all(quad <= 3 * inf2 * (1 + 1e-9))


def test_overestimates_have_leverage_at_most_one():
    A, _ = _design(400, 6, seed=4)
    lw = ch.lewis_weights(A, kappa_target=2.0)
    assert lw.kappa <= 2.0
    assert ch._leverages(A, lw.tau).max() <= 1 + 1e-9
    assert lw.total == pytest.approx(lw.kappa * 6)


# --------------------------------------------------------------------------- WLS oracle


def test_wls_matches_lstsq():
    A, b = _design(80, 4, seed=5)
    p = np.random.default_rng(6).random(80)
    s = np.sqrt(p)
    ref = np.linalg.lstsq(A * s[:, None], b * s, rcond=None)[0]
    assert np.allclose(ch.wls(A, b, p), ref, atol=1e-10)


def test_wls_with_constraints_matches_null_space():
    A, b = _design(60, 5, seed=7)
    rng = np.random.default_rng(8)
    N, v = rng.standard_normal((2, 5)), rng.standard_normal(2)
    p = rng.random(60)
    x = ch.wls(A, b, p, N, v)
    assert np.linalg.norm(N @ x - v) <= 1e-9
    x0 = np.linalg.lstsq(N, v, rcond=None)[0]
    Z = scipy.linalg.null_space(N)
    s = np.sqrt(p)
    z = np.linalg.lstsq((A @ Z) * s[:, None], (b - A @ x0) * s, rcond=None)[0]
    assert np.allclose(x, x0 + Z @ z, atol=1e-8)


# --------------------------------------------------------------------------- MWU-IRLS


def test_closed_form_one_dimension():
    b = np.random.default_rng(9).standard_normal(50) * 3
    A = np.ones((50, 1))
    opt = (b.max() - b.min()) / 2
    res = ch.mwu_irls(A, b, eps=0.01)
    assert res.success and opt <= res.fun <= 1.01 * opt and res.lower <= opt + 1e-12
    lp = ch.linf_lp(A, b)
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
    opt = ch.linf_lp(A, b, N, v).fun
    res = ch.mwu_irls(A, b, N, v, eps=0.05, floor=floor)
    assert res.success
    assert np.all(res.trace["lower"] <= opt * (1 + 1e-9))
    assert np.all(res.trace.objective >= opt * (1 - 1e-9))
    assert res.fun <= 1.05 * res.lower + 1e-12 and res.fun <= 1.05 * opt
    assert np.all(res.trace["rho"] <= res.width_bound)  # a theorem: must never fail
    assert np.all(np.diff(res.trace.objective) <= 0) and np.all(np.diff(res.trace["lower"]) >= 0)
    if constrained:
        assert np.linalg.norm(N @ res.x - v) <= 1e-8


def test_theory_step_also_certifies():
    A, b = _design(150, 3, seed=12)
    res = ch.mwu_irls(A, b, eps=0.1, eta=0.05, maxiter=5000)
    assert res.success and res.fun <= 1.1 * ch.linf_lp(A, b).fun


def test_lewis_width_bound_below_uniform_on_coherent():
    A, b = _design(2000, 10, coherent=True, seed=13)
    lew, uni = ch.mwu_irls(A, b, floor="lewis"), ch.mwu_irls(A, b, floor="uniform")
    assert lew.width_bound <= 0.1 * uni.width_bound
    assert lew.width_bound <= ch.width_bound(2 * 10, 0.05) + 1e-9


def test_determinism():
    A, b = _design(300, 4, seed=14)
    r1, r2 = ch.mwu_irls(A, b), ch.mwu_irls(A, b)
    assert np.array_equal(r1.x, r2.x) and r1.nit == r2.nit
    A2, b2 = ch.make_linf_problem(300, 4, coherent=True, rng=14)
    assert np.array_equal(A, A2) and np.array_equal(b, b2)


def test_lawson_and_softmax_baselines():
    A, b = _design(300, 4, coherent=False, seed=15)
    opt = ch.linf_lp(A, b).fun
    law = ch.lawson_irls(A, b, eps=0.01)
    assert law.success and opt * (1 - 1e-9) <= law.fun <= 1.01 * opt and law.lower <= opt * (1 + 1e-9)
    mu = 0.05
    sm = ch.softmax_newton(A, b, mu=mu)
    assert sm.success
    assert opt <= sm.fun + 1e-9 and sm.smoothed <= opt + mu * np.log(2 * 300) + 1e-8
    assert sm.smoothed >= opt - 1e-9


def test_scipy_lp_matches_brute_force_on_tiny_case():
    rng = np.random.default_rng(16)
    A = np.column_stack([rng.uniform(0, 1, 4), np.ones(4)])
    b = rng.standard_normal(4)
    lp = ch.linf_lp(A, b)
    g = np.linspace(-10, 10, 801)
    X, Y = np.meshgrid(g, g)
    vals = np.max(np.abs(A[:, :1, None] * X[None] + A[:, 1:, None] * Y[None] - b[:, None, None]), axis=0)
    assert lp.fun <= vals.min() + 1e-12 and lp.fun >= vals.min() - 0.05


# --------------------------------------------------------------------------- QSC


def test_logistic_is_quasi_self_concordant():
    t = np.linspace(-30, 30, 2001)
    _, f2, f3 = ch.logistic_loss_derivatives(t)
    assert np.all(np.abs(f3) <= 1.0 * f2 + 1e-15)
    h = 1e-5
    fd = (ch.logistic_loss_derivatives(t + h)[1] - ch.logistic_loss_derivatives(t - h)[1]) / (2 * h)
    assert np.allclose(fd, f3, atol=1e-8)


def test_trust_region_step_feasible_and_optimal():
    rng = np.random.default_rng(17)
    A = rng.standard_normal((30, 3))
    g = rng.standard_normal(3) * 10
    H = A.T @ A / 30
    D, _ = ch.box_trust_region_step(g, H, A, 0.2, iters=5000)
    assert np.max(np.abs(A @ D)) <= 0.2 + 1e-9
    # reference: scipy's SLSQP on the same QP
    from scipy.optimize import minimize
    cons = [{"type": "ineq", "fun": lambda x: 0.2 - A @ x}, {"type": "ineq", "fun": lambda x: 0.2 + A @ x}]
    ref = minimize(lambda x: g @ x + 0.5 * x @ H @ x, np.zeros(3), constraints=cons, method="SLSQP",
                   options=dict(ftol=1e-12, maxiter=500))
    val = g @ D + 0.5 * D @ H @ D
    assert val <= ref.fun + 1e-4 * abs(ref.fun)


def test_qsc_trust_region_reaches_newton_solution():
    A = ch.make_logistic_rows(150, 2, separation=2.0, rng=18)
    x0 = np.array([4.0, -4.0])
    tr, nt = ch.qsc_trust_region(A, x0), ch.damped_newton(A, x0)
    assert tr.success and nt.success
    assert tr.fun == pytest.approx(nt.fun, rel=1e-10)
    assert np.all(np.diff(tr.trace.objective) <= 1e-9)  # the model is trustworthy in the box
    assert np.nanmax(tr.trace.step_size) <= 1.0 + 1e-9


# --------------------------------------------------------------------------- bad input


def test_bad_input():
    A, b = _design(50, 3, seed=19)
    with pytest.raises(ValueError, match="A"):
        ch.mwu_irls(A[:2], b[:2])
    with pytest.raises(ValueError, match="full column rank"):
        ch.mwu_irls(np.column_stack([A[:, 0], A[:, 0]]), b)
    with pytest.raises(ValueError, match="b"):
        ch.mwu_irls(A, b[:-1])
    with pytest.raises(ValueError, match="b"):
        ch.mwu_irls(A, np.r_[b[:-1], np.nan])
    with pytest.raises(ValueError, match="eps"):
        ch.mwu_irls(A, b, eps=1.5)
    with pytest.raises(ValueError, match="eta"):
        ch.mwu_irls(A, b, eta=0)
    with pytest.raises(ValueError, match="floor"):
        ch.mwu_irls(A, b, floor="gaussian")
    with pytest.raises(ValueError, match="maxiter"):
        ch.lawson_irls(A, b, maxiter=0)
    with pytest.raises(ValueError, match="N and v"):
        ch.mwu_irls(A, b, N=np.ones((1, 3)))
    with pytest.raises(ValueError, match="N"):
        ch.linf_lp(A, b, N=np.ones((1, 4)), v=np.ones(1))
    with pytest.raises(ValueError, match="p"):
        ch.wls(A, b, -np.ones(50))
    with pytest.raises(ValueError, match="kappa_target"):
        ch.lewis_weights(A, kappa_target=0.5)
    with pytest.raises(ValueError, match="lewis"):
        ch.mwu_irls(A, b, lewis=ch.lewis_weights(A[:40]))
    with pytest.raises(ValueError, match="mu"):
        ch.softmax_newton(A, b, mu=-1)
    with pytest.raises(ValueError, match="radius"):
        ch.box_trust_region_step(np.ones(3), np.eye(3), A, 0.0)
    with pytest.raises(ValueError, match="x0"):
        ch.qsc_trust_region(A, np.ones(2))
    with pytest.raises(ValueError, match="alpha"):
        ch.john_figure(alpha=0.3)
    if not ch.cvxpy_available():
        with pytest.raises(ImportError, match="cvxpy"):
            ch.linf_cvxpy(A, b)


def test_explorers_render():
    assert len(ch.john_figure(0.5, 4).data) == 5
    fig = ch.line_fit_figure(3.0, 0.1, False, 2)
    assert len(fig.data) == 6
    assert len(ch.line_fit_slider_figure().frames) >= 3
