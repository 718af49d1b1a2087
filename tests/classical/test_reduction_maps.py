"""Tests of chapter 03: reduction mappings, reduced objectives and their curvature."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from optbook.classical import reduction_maps as rm
from optbook.core import fd_gradient, fd_hessian


def rel(a, b):
    return float(np.linalg.norm(np.asarray(a) - np.asarray(b)) / max(1e-300, np.linalg.norm(b)))


@pytest.fixture(scope="module")
def quad():
    H, b = rm.random_block_quadratic(12, 4, rng=7)
    prob, red = rm.block_quadratic(H, b, 4)
    return H, b, prob, red


@pytest.fixture(scope="module")
def mf():
    prob, x0, U0 = rm.make_factorization(8, 6, 2, rng=3)
    return prob, x0, U0, prob.varpro()


# --------------------------------------------------------------------------- gradients


def test_envelope_gradient_matches_finite_differences(quad, mf):
    _, _, prob, red = quad
    F = rm.ReducedObjective(prob.fun, prob.jac, red)
    assert F.gradient == "envelope"
    x1 = np.random.default_rng(0).standard_normal(4)
    assert rel(F.jac(x1), fd_gradient(F.fun, x1)) <= 1e-6
    mprob, x0, _, mred = mf
    G = rm.ReducedObjective(mprob.fun, mprob.jac, mred)
    u = x0[: mred.n1]
    assert rel(G.jac(u), fd_gradient(G.fun, u)) <= 1e-6


def test_chain_rule_equals_envelope_for_argmin_and_matches_fd_otherwise(quad):
    _, _, prob, red = quad
    x1 = np.random.default_rng(1).standard_normal(4)
    env = rm.ReducedObjective(prob.fun, prob.jac, red, gradient="envelope").jac(x1)
    chain = rm.ReducedObjective(prob.fun, prob.jac, red, gradient="chain").jac(x1)
    assert np.allclose(env, chain, rtol=1e-10, atol=1e-12)
    # A nonlinear, non-argmin reduction: only the full chain rule is right.
    n2 = red.n2
    A = np.random.default_rng(2).standard_normal((n2, 4)) / 4
    nl = rm.ReductionMap(psi=lambda z: np.sin(A @ z), n1=4, n2=n2,
                         dpsi=lambda z: np.cos(A @ z)[:, None] * A, name="sine")
    F = rm.ReducedObjective(prob.fun, prob.jac, nl)
    assert F.gradient == "chain"
    assert rel(F.jac(x1), fd_gradient(F.fun, x1)) <= 1e-6
    assert rel(nl.dpsi_matrix(x1), fd_hessian_like(lambda z: np.sin(A @ z), x1)) <= 1e-6


def fd_hessian_like(fun, x, h=1e-6):
    """Central-difference Jacobian of a vector function."""
    return np.column_stack([(fun(x + h * e) - fun(x - h * e)) / (2 * h) for e in np.eye(x.size)])


def test_varpro_jacobian_matches_finite_differences(mf):
    prob, x0, _, red = mf
    u = x0[: red.n1]
    assert rel(red.dpsi_matrix(u), fd_hessian_like(red.x2, u)) <= 1e-6


def test_matrix_factorisation_hessian_is_exact(mf):
    prob, x0, _, _ = mf
    assert rel(prob.hess(x0), fd_hessian(prob.jac, x0)) <= 1e-7
    assert rel(prob.jac(x0), fd_gradient(prob.fun, x0)) <= 1e-7


# --------------------------------------------------------------------------- quadratic facts


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000), n1=st.integers(1, 7))
def test_schur_complement_facts(seed, n1):
    H, _ = rm.random_block_quadratic(8, n1, rng=seed)
    S = rm.schur_complement(H, n1)
    assert np.allclose(np.linalg.inv(S), np.linalg.inv(H)[:n1, :n1], rtol=1e-7, atol=1e-9)
    eH, e11, eS = (np.linalg.eigvalsh(M) for M in (H, H[:n1, :n1], S))
    tol = 1e-10 * eH[-1]
    assert eS[-1] <= e11[-1] + tol <= eH[-1] + 2 * tol
    assert eS[0] >= eH[0] - tol
    assert eS[-1] / eS[0] <= eH[-1] / eH[0] * (1 + 1e-9)
    # S <= H11 in the Loewner order
    assert np.linalg.eigvalsh(H[:n1, :n1] - S)[0] >= -tol


def test_orthonormal_lift_and_pullback_interlacing(quad):
    H, _, _, red = quad
    x1 = np.zeros(4)
    J = red.jacobian(x1)
    Q = rm.orthonormal_lift(J)
    assert np.allclose(Q.T @ Q, np.eye(4), atol=1e-12)
    S = rm.schur_complement(H, 4)
    P = rm.metric_normalised(S, red.metric(x1))
    assert np.allclose(P, Q.T @ H @ Q, atol=1e-10)   # at any point: affine reduction, grad_2 f = 0 on the graph
    eP, eH = np.linalg.eigvalsh(P), np.linalg.eigvalsh(H)
    n, k = H.shape[0], 4
    for i in range(k):    # Cauchy interlacing: lambda_i(H) <= lambda_i(P) <= lambda_{i+n-k}(H)
        assert eH[i] - 1e-10 <= eP[i] <= eH[i + n - k] + 1e-10


def test_reduced_hessian_of_quadratic_is_JtHJ_and_the_schur_complement(quad):
    H, _, prob, red = quad
    x1 = np.random.default_rng(3).standard_normal(4)
    F = rm.ReducedObjective(prob.fun, prob.jac, red)
    J = red.jacobian(x1)
    assert np.allclose(J.T @ H @ J, rm.schur_complement(H, 4), atol=1e-10)
    assert rel(F.hess(x1), J.T @ H @ J) <= 1e-6
    assert np.allclose(F.pullback_hess(x1), rm.metric_normalised(J.T @ H @ J, red.metric(x1)), atol=1e-5)


def test_metric_dominates_identity(mf):
    prob, x0, _, red = mf
    G = red.metric(x0[: red.n1])
    assert np.allclose(G, G.T)
    assert np.linalg.eigvalsh(G - np.eye(red.n1))[0] >= -1e-12


# --------------------------------------------------------------------------- graph and argmin


def test_lifted_iterates_lie_on_the_graph_and_F_is_a_lower_envelope(quad):
    _, _, prob, red = quad
    x1 = np.random.default_rng(4).standard_normal(4)
    res = rm.reduced_gradient_descent(prob.fun, x1, prob.jac, red, step=0.05, maxiter=20, f_star=prob.f_star)
    for xl in res.lifted:
        assert red.graph_distance(xl) <= 1e-12
    assert np.allclose(res.x_full, red.lift(res.x))
    F = rm.ReducedObjective(prob.fun, prob.jac, red)
    g = np.random.default_rng(5)
    for _ in range(20):
        x2 = red.x2(x1) + g.standard_normal(red.n2)
        assert F.fun(x1) <= prob.fun(np.concatenate([x1, x2])) + 1e-12


def test_bias_elimination_is_centred_least_squares():
    X, y = rm.bias_data(3.0, 0.5, n=30)
    prob = rm.LeastSquaresWithBias(X, y)
    red = prob.reduction()
    F = rm.ReducedObjective(prob.fun, prob.jac, red)
    Xc, yc = X - X.mean(0), y - y.mean()
    for w in (np.array([-1.0]), np.array([0.7]), np.array([2.0])):
        assert np.isclose(F.fun(w), 0.5 * np.mean((Xc @ w - yc) ** 2), rtol=1e-12)
    H = prob.hess(np.zeros(2))
    assert np.allclose(H, [[0.25 + 9.0, 3.0], [3.0, 1.0]])          # [[v + xbar^2, xbar], [xbar, 1]]
    x_star = np.linalg.lstsq(prob.A, y, rcond=None)[0]
    assert np.allclose(x_star, [2.0, -1.0])                          # the data are built for it


def test_toy_reduced_objective_depends_only_on_the_angle():
    prob, red = rm.toy_problem()
    F = rm.ReducedObjective(prob.fun, prob.jac, red)
    y = rm.TOY_Y
    for theta in (0.3, 1.0, 2.5):
        u = np.array([np.cos(theta), np.sin(theta)])
        expect = 0.5 * (y @ y) * np.sin(theta - np.arctan2(y[1], y[0])) ** 2
        assert np.isclose(F.fun(u), expect, atol=1e-12)
        assert np.isclose(F.fun(3.7 * u), expect, atol=1e-12)


# --------------------------------------------------------------------------- matrix factorisation


def test_varpro_objective_closed_form_and_GL_invariance(mf):
    prob, x0, _, red = mf
    F = rm.ReducedObjective(prob.fun, prob.jac, red)
    u = x0[: red.n1]
    U = u.reshape(prob.m, prob.r)
    P = U @ np.linalg.pinv(U)
    assert np.isclose(F.fun(u), 0.5 * np.linalg.norm(prob.Y - P @ prob.Y) ** 2, rtol=1e-10)
    G = np.random.default_rng(9).standard_normal((prob.r, prob.r)) + 2 * np.eye(prob.r)
    assert np.isclose(F.fun((U @ G).ravel()), F.fun(u), rtol=1e-9)


def test_reduced_gd_recovers_the_matrix(mf):
    prob, x0, _, red = mf
    res = rm.reduced_gradient_descent(prob.fun, x0[: red.n1], prob.jac, red, step=0.05, tol=1e-20,
                                      maxiter=5000)
    assert res.success
    U, V = prob.split(res.x_full)
    assert np.max(np.abs(U @ V.T - prob.Y)) <= 1e-8
    als = rm.alternating_least_squares(prob, x0[: red.n1].reshape(prob.m, prob.r), tol=1e-20, maxiter=5000)
    U, V = prob.split(als.x)
    assert als.success and np.max(np.abs(U @ V.T - prob.Y)) <= 1e-8
    assert np.all(np.diff(als.trace.objective) <= 1e-12)     # alternating minimisation is monotone


def test_pullback_reduced_gd_converges(mf):
    prob, x0, _, red = mf
    res = rm.reduced_gradient_descent(prob.fun, x0[: red.n1], prob.jac, red, step=0.05, tol=1e-16,
                                      maxiter=5000, metric="pullback")
    assert res.success and res.trace.method == "reduced GD (pullback metric)"


def test_spectra_at_a_minimiser_have_the_orbit_as_kernel():
    s = rm.factorization_spectra(0)
    assert s["f"].n_zero == 9 and s["F_pullback"].n_zero == 9      # dim GL(3) = 9
    assert s["F_pullback"].beta <= s["f"].beta * (1 + 1e-6)


# --------------------------------------------------------------------------- methods


def test_closed_form_iterations_match_library_gd(quad):
    H, b, prob, red = quad
    x0 = np.random.default_rng(6).standard_normal(12)
    beta = np.linalg.eigvalsh(H)[-1]
    res = rm.gradient_descent(prob.fun, x0, prob.jac, step=1 / beta, tol=1e-8, f_star=prob.f_star,
                              maxiter=100000)
    assert res.success
    assert res.nit == rm.quadratic_gd_iterations(H, x0 - prob.x_star, 1 / beta, 1e-8)
    assert np.all(np.diff(res.trace.objective) <= 1e-12)           # monotone with step 1/beta
    assert rm.quadratic_gd_iterations(H, x0 - prob.x_star, 2.5 / beta, 1e-8, maxiter=2000) is None


def test_gradient_descent_flags_divergence(quad):
    H, b, prob, red = quad
    beta = np.linalg.eigvalsh(H)[-1]
    res = rm.gradient_descent(prob.fun, np.ones(12), prob.jac, step=3 / beta, f_star=prob.f_star)
    assert res.diverged and not res.success


def test_curvature_constants_count_the_kernel():
    Q = np.linalg.qr(np.random.default_rng(0).standard_normal((6, 6)))[0]
    H = Q @ np.diag([0, 0, 1e-12, 0.5, 2.0, 10.0]) @ Q.T
    c = rm.curvature_constants(H)
    assert c.n_zero == 3 and np.isclose(c.mu, 0.5) and np.isclose(c.beta, 10.0) and np.isclose(c.kappa, 20.0)
    with pytest.raises(ValueError, match="negative"):
        rm.curvature_constants(np.diag([-1.0, 1.0]))


def test_determinism():
    a, b = rm.random_block_quadratic(10, 3, rng=5), rm.random_block_quadratic(10, 3, rng=5)
    assert np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1])
    p1, x1, _ = rm.make_factorization(rng=11)
    p2, x2, _ = rm.make_factorization(rng=11)
    assert np.array_equal(p1.Y, p2.Y) and np.array_equal(x1, x2)


# --------------------------------------------------------------------------- figures and explorers


def test_figures_and_explorers():
    assert rm.interlacing_spectra(0.0, 4)["kappa"]["H11 (freeze x2)"] == pytest.approx(
        rm.interlacing_spectra(0.0, 4)["kappa"]["S (reduced, Euclidean)"])
    for fig, n_frames in ((rm.bias_slider_figure(), len(rm.BIAS_XBARS)),
                          (rm.toy_slider_figure(), len(rm.TOY_STEPS)),
                          (rm.interlacing_slider_figure(), len(rm.COUPLINGS))):
        assert len(fig.frames) == n_frames and fig.layout.sliders
    for ex in (rm.EXPLORER_BIAS, rm.EXPLORER_TOY, rm.EXPLORER_INTERLACING):
        assert len(ex.render().data) >= 3
    # the kappa of f grows with the feature mean, the reduced one stays 1
    kap = [rm.bias_experiment(xb, 1.0)["kappa_f"] for xb in rm.BIAS_XBARS]
    assert np.all(np.diff(kap) > 0) and kap[-1] > 100


# --------------------------------------------------------------------------- bad input


def test_bad_inputs(quad, mf):
    H, b, prob, red = quad
    mprob, x0, _, mred = mf
    with pytest.raises(ValueError, match="psi"):
        rm.ReductionMap(psi=3, n1=1, n2=1)
    with pytest.raises(ValueError, match="n1"):
        rm.ReductionMap(psi=lambda z: z, n1=0, n2=1)
    with pytest.raises(ValueError, match="x1"):
        red.lift(np.ones(3))
    with pytest.raises(ValueError, match="x1"):
        red.lift(np.array([1.0, np.nan, 0.0, 0.0]))
    with pytest.raises(ValueError, match="dpsi"):
        rm.ReductionMap(psi=lambda z: z, n1=2, n2=2).jacobian(np.ones(2))
    with pytest.raises(ValueError, match="psi"):
        rm.ReductionMap(psi=lambda z: np.ones(3), n1=2, n2=2).lift(np.ones(2))
    with pytest.raises(ValueError, match="envelope"):
        rm.ReducedObjective(prob.fun, prob.jac, rm.ReductionMap(psi=lambda z: z, n1=6, n2=6), gradient="envelope")
    with pytest.raises(ValueError, match="gradient"):
        rm.ReducedObjective(prob.fun, prob.jac, red, gradient="magic")
    with pytest.raises(ValueError, match="reduction"):
        rm.ReducedObjective(prob.fun, prob.jac, "red")
    with pytest.raises(ValueError, match="step"):
        rm.gradient_descent(prob.fun, np.ones(12), prob.jac, step=0.0)
    with pytest.raises(ValueError, match="step"):
        rm.reduced_gradient_descent(prob.fun, np.ones(4), prob.jac, red, step=-1.0)
    with pytest.raises(ValueError, match="x0"):
        rm.gradient_descent(prob.fun, np.full(12, np.inf), prob.jac, step=0.1)
    with pytest.raises(ValueError, match="x0"):
        rm.reduced_gradient_descent(prob.fun, np.ones(5), prob.jac, red, step=0.1)
    with pytest.raises(ValueError, match="metric"):
        rm.reduced_gradient_descent(prob.fun, np.ones(4), prob.jac, red, step=0.1, metric="fisher")
    with pytest.raises(ValueError, match="f_star"):
        rm.gradient_descent(prob.fun, np.ones(12), prob.jac, step=0.1, f_star=None)
    with pytest.raises(ValueError, match="f_star"):
        rm.gradient_descent(prob.fun, np.ones(12), prob.jac, step=0.1, f_star=np.nan)
    with pytest.raises(ValueError, match="tol"):
        rm.gradient_descent(prob.fun, np.ones(12), prob.jac, step=0.1, tol=0)
    with pytest.raises(ValueError, match="maxiter"):
        rm.gradient_descent(prob.fun, np.ones(12), prob.jac, step=0.1, maxiter=-1)
    with pytest.raises(ValueError, match="blowup"):
        rm.gradient_descent(prob.fun, np.ones(12), prob.jac, step=0.1, blowup=0.5)
    with pytest.raises(ValueError, match="H"):
        rm.schur_complement(-np.eye(4), 2)
    with pytest.raises(ValueError, match="n1"):
        rm.schur_complement(np.eye(4), 4)
    with pytest.raises(ValueError, match="b"):
        rm.block_quadratic(np.eye(4), np.ones(3), 2)
    with pytest.raises(ValueError, match="ridge"):
        rm.random_block_quadratic(10, 3, ridge=0)
    with pytest.raises(ValueError, match="y"):
        rm.LeastSquaresWithBias(np.ones((5, 1)), np.ones(4))
    with pytest.raises(ValueError, match="spread"):
        rm.bias_data(1.0, 0.0)
    with pytest.raises(ValueError, match="r"):
        rm.MatrixFactorization(np.ones((3, 2)), 3)
    with pytest.raises(ValueError, match="Y"):
        rm.MatrixFactorization(np.array([[1.0, np.nan]]), 1)
    with pytest.raises(ValueError, match="rank deficient"):
        mred.lift(np.zeros(mred.n1))
    with pytest.raises(ValueError, match="U0"):
        rm.alternating_least_squares(mprob, np.ones((2, 2)))
    with pytest.raises(ValueError, match="metric"):
        rm.metric_normalised(np.eye(2), -np.eye(2))
    with pytest.raises(ValueError, match="J"):
        rm.orthonormal_lift(np.ones((2, 3)))
    with pytest.raises(ValueError, match="rel_tol"):
        rm.curvature_constants(np.eye(2), rel_tol=2.0)
    with pytest.raises(ValueError, match="coupling"):
        rm.interlacing_spectra(1.0, 3)
    with pytest.raises(ValueError, match="e0"):
        rm.quadratic_gd_iterations(np.eye(2), np.ones(3), 0.1, 1e-8)
