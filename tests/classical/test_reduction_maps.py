"""Tests of chapter 03's method: reduction mappings, reduced objectives, their curvature, baselines."""
import numpy as np
import pytest
import scipy.linalg
from hypothesis import given, settings
from hypothesis import strategies as st

from optbook.classical import reduction_maps as rm
from optbook.core import fd_gradient, fd_hessian


def rel(a, b):
    return float(np.linalg.norm(np.asarray(a) - np.asarray(b)) / max(1e-300, np.linalg.norm(b)))


def fd_jacobian(fun, x, h=1e-6):
    """Central-difference Jacobian of a vector function."""
    return np.column_stack([(fun(x + h * e) - fun(x - h * e)) / (2 * h) for e in np.eye(x.size)])


@pytest.fixture(scope="module")
def quad():
    H, b = rm.random_block_quadratic(12, 4, rng=7)
    prob, red = rm.block_quadratic(H, b, 4)
    return H, b, prob, red


@pytest.fixture(scope="module")
def mf():
    prob, x0, U0 = rm.make_factorization(8, 6, 2, noise=0.2, rng=3)
    return prob, x0, U0, prob.varpro()


# --------------------------------------------------------------------------- gradients and Jacobians


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
    assert rel(nl.dpsi_matrix(x1), fd_jacobian(lambda z: np.sin(A @ z), x1)) <= 1e-6
    # and the envelope formula is wrong there: it drops D Psi^T grad_2 f
    wrong = prob.jac(nl.lift(x1))[:4]
    assert rel(wrong, F.jac(x1)) > 1e-3


def test_varpro_and_scalar_jacobians_match_finite_differences(mf):
    prob, x0, _, red = mf
    u = x0[: red.n1]
    assert rel(red.dpsi_matrix(u), fd_jacobian(red.x2, u)) <= 1e-6
    sred = prob.scalar_reduction()
    assert rel(sred.dpsi_matrix(u), fd_jacobian(sred.x2, u)) <= 1e-6
    F = rm.ReducedObjective(prob.fun, prob.jac, sred)
    assert F.gradient == "chain" and rel(F.jac(u), fd_gradient(F.fun, u)) <= 1e-6


def test_matrix_factorisation_derivatives_are_exact(mf):
    prob, x0, _, _ = mf
    assert rel(prob.hess(x0), fd_hessian(prob.jac, x0)) <= 1e-7
    assert rel(prob.jac(x0), fd_gradient(prob.fun, x0)) <= 1e-7


# --------------------------------------------------------------------------- quadratic facts and curvature


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
    assert np.linalg.eigvalsh(H[:n1, :n1] - S)[0] >= -tol     # S <= H11 in the Loewner order


def test_pullback_eigenvalues_are_those_of_the_orthonormal_compression(quad):
    H, _, _, red = quad
    x1 = np.zeros(4)
    J = red.jacobian(x1)
    Q = rm.orthonormal_lift(J)
    assert np.allclose(Q.T @ Q, np.eye(4), atol=1e-12)
    S = rm.schur_complement(H, 4)
    G = red.metric(x1)
    eP = rm.pullback_eigenvalues(S, G)
    assert np.allclose(eP, np.linalg.eigvalsh(Q.T @ H @ Q), rtol=1e-10)
    w, V = np.linalg.eigh(G)                                     # and of G^{-1/2} S G^{-1/2}
    root_inv = (V / np.sqrt(w)) @ V.T
    assert np.allclose(eP, np.linalg.eigvalsh(root_inv @ S @ root_inv), rtol=1e-10)
    eH, n = np.linalg.eigvalsh(H), H.shape[0]
    for i in range(4):    # Cauchy interlacing: lambda_i(H) <= lambda_i(P) <= lambda_{i+n-k}(H)
        assert eH[i] - 1e-10 <= eP[i] <= eH[i + n - 4] + 1e-10


def test_reduced_hessian_of_quadratic_is_JtHJ_and_the_schur_complement(quad):
    H, _, prob, red = quad
    x1 = np.random.default_rng(3).standard_normal(4)
    F = rm.ReducedObjective(prob.fun, prob.jac, red)
    J = red.jacobian(x1)
    assert np.allclose(F.hess_from_joint(x1, H), rm.schur_complement(H, 4), atol=1e-10)
    assert rel(F.hess(x1), J.T @ H @ J) <= 1e-6


def test_reduced_hessian_on_the_varpro_graph_is_JtHJ(mf):
    """On the graph of an argmin reduction grad_2 f = 0, so hess F = J^T hess f J at any point, not
    only at a minimiser: finite differences of grad F agree."""
    prob, x0, _, red = mf
    u = x0[: red.n1]
    F = rm.ReducedObjective(prob.fun, prob.jac, red)
    exact = F.hess_from_joint(u, prob.hess(red.lift(u)))
    assert rel(F.hess(u), exact) <= 1e-5


def test_metric_dominates_identity(mf):
    prob, x0, _, red = mf
    G = red.metric(x0[: red.n1])
    assert np.allclose(G, G.T)
    assert np.linalg.eigvalsh(G - np.eye(red.n1))[0] >= -1e-12


def test_curvature_constants_count_the_kernel():
    Q = np.linalg.qr(np.random.default_rng(0).standard_normal((6, 6)))[0]
    H = Q @ np.diag([0, 0, 1e-12, 0.5, 2.0, 10.0]) @ Q.T
    c = rm.curvature_constants(H)
    assert c.n_zero == 3 and np.isclose(c.mu, 0.5) and np.isclose(c.beta, 10.0) and np.isclose(c.kappa, 20.0)
    G = np.diag([1.0, 2.0, 3.0, 4.0, 5.0, 6.0])
    cg = rm.curvature_constants(H, metric=G)
    assert np.allclose(cg.eigenvalues, scipy.linalg.eigh(H, G, eigvals_only=True))
    with pytest.raises(ValueError, match="negative"):
        rm.curvature_constants(np.diag([-1.0, 1.0]))


def test_morse_bott_condition_direction():
    """mu_F >= mu_f needs the tangent space of the solution set inside range J, not transversal
    to it: f(a, b) = 1/2 (a - b)^2 with a graph crossing S = {a = b} loses curvature, a graph that
    contains S keeps every nonzero curvature of f."""
    H = np.array([[1.0, -1.0], [-1.0, 1.0]])
    J = np.array([[1.0], [0.9]])                                 # transversal: range J misses (1, 1)
    mu = rm.pullback_eigenvalues(J.T @ H @ J, J.T @ J)[0]
    assert np.isclose(mu, 0.01 / 1.81) and mu < rm.curvature_constants(H).mu / 100
    # f(a, b, c) = 1/2 (a - b)^2 + c^2: S = {a = b, c = 0}; the graph of Psi(a, b) = 0 contains S.
    H3 = np.array([[1.0, -1.0, 0.0], [-1.0, 1.0, 0.0], [0.0, 0.0, 2.0]])
    J3 = np.vstack([np.eye(2), np.zeros((1, 2))])
    c3, cf = rm.curvature_constants(J3.T @ H3 @ J3, metric=J3.T @ J3), rm.curvature_constants(H3)
    assert c3.n_zero == cf.n_zero == 1 and c3.mu >= cf.mu - 1e-12 and c3.beta <= cf.beta + 1e-12


# --------------------------------------------------------------------------- graph, argmin and reduction tests


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


def test_reduced_gd_equals_gd_when_the_reduction_removes_nothing():
    """Reduction test: with f(x1, x2) = g(x1) + 1/2 ||x2||^2 the argmin reduction is Psi = 0, and
    reduced GD takes exactly gradient descent's steps on g."""
    A = np.diag([1.0, 3.0, 10.0])

    def f(x):
        return 0.5 * x[:3] @ A @ x[:3] + 0.5 * x[3:] @ x[3:]

    def df(x):
        return np.concatenate([A @ x[:3], x[3:]])

    red = rm.ReductionMap(psi=lambda z: np.zeros(2), n1=3, n2=2, dpsi=lambda z: np.zeros((2, 3)), argmin=True)
    x1 = np.array([1.0, -2.0, 0.5])
    a = rm.reduced_gradient_descent(f, x1, df, red, step=0.09, maxiter=30, tol=1e-300)
    b = rm.gradient_descent(lambda z: 0.5 * z @ A @ z, x1, lambda z: A @ z, step=0.09, maxiter=30, tol=1e-300)
    assert np.allclose(a.iterates, b.iterates, rtol=0, atol=1e-15)
    p = rm.reduced_gradient_descent(f, x1, df, red, step=0.09, maxiter=30, tol=1e-300, metric="pullback")
    assert np.allclose(p.iterates, b.iterates, rtol=0, atol=1e-15)          # G = I here


def test_bias_elimination_is_centred_least_squares():
    X, y, x_star = rm.bias_data(3.0, 0.5, spread=0.5, n=30, d=3, rng=1)
    assert np.allclose(X.mean(axis=0), 3.0)
    C = np.cov(X.T, bias=True)
    assert np.allclose(C, 0.25 * (0.5 * np.eye(3) + 0.5 * np.ones((3, 3))))
    prob = rm.LeastSquaresWithBias(X, y)
    assert np.allclose(prob.solution(), x_star)                  # the data are built for it
    red = prob.reduction()
    F = rm.ReducedObjective(prob.fun, prob.jac, red)
    Xc, yc = X - X.mean(0), y - y.mean()
    for w in np.random.default_rng(2).standard_normal((3, 3)):
        assert np.isclose(F.fun(w), 0.5 * np.mean((Xc @ w - yc) ** 2), rtol=1e-12)
    H = prob.hess(np.zeros(4))
    assert np.allclose(H[:3, :3], C + 9.0) and np.allclose(H[:3, 3], 3.0) and np.isclose(H[3, 3], 1.0)


@pytest.mark.parametrize("rho", [0.0, 0.6])
def test_bias_reduction_kappa_is_the_feature_covariance_kappa(rho):
    for xbar in (0.0, 2.0, 4.0):
        X, y, _ = rm.bias_data(xbar, rho, rng=5)
        prob = rm.LeastSquaresWithBias(X, y)
        J = prob.reduction().jacobian(np.zeros(2))
        HF = J.T @ prob.hess(np.zeros(3)) @ J
        assert np.isclose(rm.curvature_constants(HF).kappa, (1 + rho) / (1 - rho))


# --------------------------------------------------------------------------- matrix factorisation


def test_factorisation_problem_scaling_and_minimum():
    prob, x0, _ = rm.make_factorization(30, 20, 3, noise=0.3, rng=0)
    s = np.linalg.svd(prob.Y, compute_uv=False)
    assert np.isclose(s[0], 1.0) and s[3] > 0 and np.isclose(prob.f_star, 0.5 * np.sum(s[3:] ** 2))
    clean, _, _ = rm.make_factorization(30, 20, 3, noise=0.0, rng=0)
    assert np.linalg.matrix_rank(clean.Y, tol=1e-10) == 3 and clean.f_star < 1e-25
    x = prob.minimiser(np.random.default_rng(0).standard_normal((3, 3)))
    assert abs(prob.fun(x) - prob.f_star) <= 1e-13 and np.linalg.norm(prob.jac(x)) <= 1e-12
    assert np.allclose(np.linalg.svd(x0[:90].reshape(30, 3), compute_uv=False).max(), 0.6, atol=0.25)


def test_varpro_objective_closed_form_and_GL_invariance(mf):
    prob, x0, _, red = mf
    F = rm.ReducedObjective(prob.fun, prob.jac, red)
    u = x0[: red.n1]
    U = u.reshape(prob.m, prob.r)
    P = U @ np.linalg.pinv(U)
    assert np.isclose(F.fun(u), 0.5 * np.linalg.norm(prob.Y - P @ prob.Y) ** 2, rtol=1e-10)
    G = np.random.default_rng(9).standard_normal((prob.r, prob.r)) + 2 * np.eye(prob.r)
    assert np.isclose(F.fun((U @ G).ravel()), F.fun(u), rtol=1e-9)


def test_scalar_reduction_is_varpro_only_in_the_orthogonal_gauge(mf):
    prob, x0, _, red = mf
    sred = prob.scalar_reduction()
    assert not sred.argmin
    Q = np.linalg.qr(x0[: red.n1].reshape(prob.m, prob.r))[0] * 1.7
    assert np.allclose(sred.x2(Q.ravel()), red.x2(Q.ravel()))          # U^T U = 1.7^2 I
    u = x0[: red.n1]
    assert not np.allclose(sred.x2(u), red.x2(u), atol=1e-3)
    # On its graph at a minimiser only O(r) x scale survives as zero curvature: the graph meets
    # the GL(r) orbit in r(r-1)/2 + 1 dimensions, not r^2, so T S is not inside range J.
    big, _, _ = rm.make_factorization(12, 9, 3, noise=0.3, rng=4)
    x = big.minimiser()
    U = np.linalg.qr(big.split(x)[0])[0]
    s = big.scalar_reduction()
    xs = s.lift(U.ravel())
    assert abs(big.fun(xs) - big.f_star) <= 1e-12
    Hs = rm.ReducedObjective(big.fun, big.jac, s).hess_from_joint(U.ravel(), big.hess(xs))
    assert rm.curvature_constants(Hs, 1e-10).n_zero == 4 and rm.curvature_constants(big.hess(xs), 1e-10).n_zero == 9


def test_euclidean_and_pullback_spectra_coincide_at_a_noiseless_minimiser():
    """With Y exactly of rank r the residual vanishes at a minimiser and D Psi maps the normal
    directions to zero, so the metric changes nothing there (with noise it does)."""
    prob, _, _ = rm.make_factorization(10, 8, 2, noise=0.0, rng=1)
    x = prob.minimiser(np.random.default_rng(1).standard_normal((2, 2)))
    red = prob.varpro()
    u = x[: red.n1]
    HF = rm.ReducedObjective(prob.fun, prob.jac, red).hess_from_joint(u, prob.hess(x))
    e, p = np.linalg.eigvalsh(HF), rm.pullback_eigenvalues(HF, red.metric(u))
    assert np.allclose(e, p, rtol=1e-8, atol=1e-10 * e[-1])


def test_reduced_gd_alternating_gd_and_als_recover_the_best_approximation(mf):
    prob, x0, _, red = mf
    res = rm.reduced_gradient_descent(prob.fun, x0[: red.n1], prob.jac, red, step=0.5, tol=1e-12,
                                      f_star=prob.f_star, maxiter=5000)
    assert res.success and abs(prob.fun(res.x_full) - prob.f_star) <= 1e-12
    alt = rm.alternating_gradient_descent(prob, x0, step=0.5, tol=1e-12, maxiter=5000)
    assert alt.success and alt.trace.method == "alternating GD"
    assert np.all(np.diff(alt.trace.objective) <= 1e-12)     # small steps: monotone
    als = rm.alternating_least_squares(prob, x0[: red.n1].reshape(prob.m, prob.r), tol=1e-12, maxiter=5000)
    assert als.success and np.all(np.diff(als.trace.objective) <= 1e-12)   # alternating minimisation
    U, V = prob.split(als.x)
    assert abs(0.5 * np.sum((U @ V.T - prob.Y) ** 2) - prob.f_star) <= 1e-11


def test_pullback_reduced_gd_converges(mf):
    prob, x0, _, red = mf
    res = rm.reduced_gradient_descent(prob.fun, x0[: red.n1], prob.jac, red, step=0.5, tol=1e-14,
                                      f_star=prob.f_star, maxiter=5000, metric="pullback")
    assert res.success and res.trace.method == "reduced GD (pullback metric)"


def test_factorization_flops():
    f = rm.factorization_flops(30, 20, 3)
    assert f["joint GD"] == 3 * 1800
    assert f["reduced GD"] == 5400 + 2 * 30 * 9 + 2 * 20 * 9
    assert f["joint GD"] < f["reduced GD"] < 1.2 * f["joint GD"] < f["alternating GD"] < f["scalar reduction"]


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


def test_determinism():
    a, b = rm.random_block_quadratic(10, 3, rng=5), rm.random_block_quadratic(10, 3, rng=5)
    assert np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1])
    p1, x1, _ = rm.make_factorization(noise=0.3, rng=11)
    p2, x2, _ = rm.make_factorization(noise=0.3, rng=11)
    assert np.array_equal(p1.Y, p2.Y) and np.array_equal(x1, x2)
    X1, y1, _ = rm.bias_data(2.0, 0.3, rng=4)
    X2, y2, _ = rm.bias_data(2.0, 0.3, rng=4)
    assert np.array_equal(X1, X2) and np.array_equal(y1, y2)


# --------------------------------------------------------------------------- bad input

NAN, INF = float("nan"), float("inf")


def _bad_calls():
    """(callable name, thunk, message the ValueError must contain) for every public callable."""
    H, b = rm.random_block_quadratic(6, 2, rng=0)
    prob, red = rm.block_quadratic(H, b, 2)
    mprob, x0, _ = rm.make_factorization(6, 5, 2, rng=0)
    f, df = prob.fun, prob.jac
    return [
        ("ReductionMap", lambda: rm.ReductionMap(psi=3, n1=1, n2=1), "psi"),
        ("ReductionMap", lambda: rm.ReductionMap(psi=lambda z: z, n1=0, n2=1), "n1"),
        ("ReductionMap", lambda: rm.ReductionMap(psi=lambda z: z, n1=1, n2=NAN), "n2"),
        ("ReductionMap", lambda: red.lift(np.array([1.0, NAN])), "x1"),
        ("ReductionMap", lambda: red.lift(np.ones(3)), "x1"),
        ("ReductionMap", lambda: red.lift(np.array([])), "x1"),
        ("ReductionMap", lambda: rm.ReductionMap(psi=lambda z: z, n1=2, n2=2).jacobian(np.ones(2)), "dpsi"),
        ("ReductionMap", lambda: rm.ReductionMap(psi=lambda z: np.ones(3), n1=2, n2=2).lift(np.ones(2)), "psi"),
        ("ReducedObjective", lambda: rm.ReducedObjective(f, df, red, gradient="magic"), "gradient"),
        ("ReducedObjective", lambda: rm.ReducedObjective(f, df, "red"), "reduction"),
        ("ReducedObjective", lambda: rm.ReducedObjective(3, df, red), "callable"),
        ("ReducedObjective", lambda: rm.ReducedObjective(f, df, rm.ReductionMap(psi=lambda z: z, n1=3, n2=3),
                                                         gradient="envelope"), "envelope"),
        ("ReducedObjective", lambda: rm.ReducedObjective(f, df, red).hess_from_joint(np.ones(2), np.ones((5, 5))),
         "hess_f"),
        ("pullback_eigenvalues", lambda: rm.pullback_eigenvalues(np.full((2, 2), NAN), np.eye(2)), "hess"),
        ("pullback_eigenvalues", lambda: rm.pullback_eigenvalues(np.eye(2), -np.eye(2)), "metric"),
        ("pullback_eigenvalues", lambda: rm.pullback_eigenvalues(np.eye(2), np.eye(3)), "metric"),
        ("pullback_eigenvalues", lambda: rm.pullback_eigenvalues(np.zeros((0, 0)), np.eye(2)), "hess"),
        ("orthonormal_lift", lambda: rm.orthonormal_lift(np.ones((2, 3))), "J"),
        ("orthonormal_lift", lambda: rm.orthonormal_lift(np.ones((3, 2))), "J"),
        ("orthonormal_lift", lambda: rm.orthonormal_lift(np.array([[INF], [1.0]])), "J"),
        ("curvature_constants", lambda: rm.curvature_constants(np.eye(2), rel_tol=2.0), "rel_tol"),
        ("curvature_constants", lambda: rm.curvature_constants(np.eye(2), rel_tol=NAN), "rel_tol"),
        ("curvature_constants", lambda: rm.curvature_constants(np.ones((2, 3))), "hess"),
        ("curvature_constants", lambda: rm.curvature_constants(np.eye(2), metric=np.eye(3)), "metric"),
        ("gradient_descent", lambda: rm.gradient_descent(f, np.ones(6), df, step=0.0), "step"),
        ("gradient_descent", lambda: rm.gradient_descent(f, np.ones(6), df, step=NAN), "step"),
        ("gradient_descent", lambda: rm.gradient_descent(f, np.full(6, INF), df, step=0.1), "x0"),
        ("gradient_descent", lambda: rm.gradient_descent(f, np.array([]), df, step=0.1), "x0"),
        ("gradient_descent", lambda: rm.gradient_descent(f, np.ones((2, 3)), df, step=0.1), "x0"),
        ("gradient_descent", lambda: rm.gradient_descent(f, np.ones(6), df, step=0.1, f_star=None), "f_star"),
        ("gradient_descent", lambda: rm.gradient_descent(f, np.ones(6), df, step=0.1, f_star=NAN), "f_star"),
        ("gradient_descent", lambda: rm.gradient_descent(f, np.ones(6), df, step=0.1, tol=0), "tol"),
        ("gradient_descent", lambda: rm.gradient_descent(f, np.ones(6), df, step=0.1, tol=INF), "tol"),
        ("gradient_descent", lambda: rm.gradient_descent(f, np.ones(6), df, step=0.1, maxiter=-1), "maxiter"),
        ("gradient_descent", lambda: rm.gradient_descent(f, np.ones(6), df, step=0.1, maxiter=2.5), "maxiter"),
        ("gradient_descent", lambda: rm.gradient_descent(f, np.ones(6), df, step=0.1, blowup=0.5), "blowup"),
        ("gradient_descent", lambda: rm.gradient_descent(f, np.ones(6), df, step=0.1, stop="f"), "stop"),
        ("gradient_descent", lambda: rm.gradient_descent(f, np.ones(6), df, step=0.1, callback=1), "callback"),
        ("reduced_gradient_descent", lambda: rm.reduced_gradient_descent(f, np.ones(2), df, red, step=-1.0), "step"),
        ("reduced_gradient_descent", lambda: rm.reduced_gradient_descent(f, np.ones(3), df, red, step=0.1), "x0"),
        ("reduced_gradient_descent", lambda: rm.reduced_gradient_descent(f, np.ones(2), df, red, step=0.1,
                                                                         metric="fisher"), "metric"),
        ("reduced_gradient_descent", lambda: rm.reduced_gradient_descent(f, np.ones(2), df, red, step=0.1,
                                                                         tol=NAN), "tol"),
        ("reduced_gradient_descent", lambda: rm.reduced_gradient_descent(f, np.ones(2), df, "red", step=0.1),
         "reduction"),
        ("schur_complement", lambda: rm.schur_complement(-np.eye(4), 2), "H"),
        ("schur_complement", lambda: rm.schur_complement(np.eye(4), 4), "n1"),
        ("schur_complement", lambda: rm.schur_complement(np.full((2, 2), NAN), 1), "H"),
        ("block_quadratic", lambda: rm.block_quadratic(np.eye(4), np.ones(3), 2), "b"),
        ("block_quadratic", lambda: rm.block_quadratic(np.eye(4), np.array([1.0, NAN, 0, 0]), 2), "b"),
        ("block_quadratic", lambda: rm.block_quadratic(np.eye(4), np.ones(4), 0), "n1"),
        ("random_block_quadratic", lambda: rm.random_block_quadratic(10, 3, ridge=0), "ridge"),
        ("random_block_quadratic", lambda: rm.random_block_quadratic(10, 3, ridge=NAN), "ridge"),
        ("random_block_quadratic", lambda: rm.random_block_quadratic(4, 4), "n1"),
        ("random_block_quadratic", lambda: rm.random_block_quadratic(1, 1), "n"),
        ("quadratic_gd_iterations", lambda: rm.quadratic_gd_iterations(np.eye(2), np.ones(3), 0.1, 1e-8), "e0"),
        ("quadratic_gd_iterations", lambda: rm.quadratic_gd_iterations(np.eye(2), np.ones(2), 0.0, 1e-8), "step"),
        ("quadratic_gd_iterations", lambda: rm.quadratic_gd_iterations(np.eye(2), np.ones(2), 0.1, NAN), "tol"),
        ("quadratic_gd_iterations", lambda: rm.quadratic_gd_iterations(np.eye(2), np.ones(2), 0.1, 1e-8, -1),
         "maxiter"),
        ("quadratic_gd_iterations", lambda: rm.quadratic_gd_iterations(-np.eye(2), np.ones(2), 0.1, 1e-8), "A"),
        ("quadratic_gd_iterations", lambda: rm.quadratic_gd_iterations(np.ones((2, 3)), np.ones(2), 0.1, 1e-8), "A"),
        ("gd_iterations_from_eig", lambda: rm.gd_iterations_from_eig(np.ones(2), np.ones(3), 0.1, 1e-8), "c"),
        ("gd_iterations_from_eig", lambda: rm.gd_iterations_from_eig(np.array([]), np.ones(0), 0.1, 1e-8), "lam"),
        ("gd_iterations_from_eig", lambda: rm.gd_iterations_from_eig(np.ones(2), np.ones(2), INF, 1e-8), "step"),
        ("LeastSquaresWithBias", lambda: rm.LeastSquaresWithBias(np.ones((5, 1)), np.ones(4)), "y"),
        ("LeastSquaresWithBias", lambda: rm.LeastSquaresWithBias(np.full((5, 1), NAN), np.ones(5)), "X"),
        ("LeastSquaresWithBias", lambda: rm.LeastSquaresWithBias(np.ones((1, 1)), np.ones(1)), "two rows"),
        ("LeastSquaresWithBias", lambda: rm.LeastSquaresWithBias(np.ones((0, 1)), np.ones(0)), "X"),
        ("bias_data", lambda: rm.bias_data(1.0, spread=0.0), "spread"),
        ("bias_data", lambda: rm.bias_data(NAN), "xbar"),
        ("bias_data", lambda: rm.bias_data(1.0, rho=1.0), "rho"),
        ("bias_data", lambda: rm.bias_data(1.0, rho=-0.6, d=3), "rho"),
        ("bias_data", lambda: rm.bias_data(1.0, n=3), "n"),
        ("bias_data", lambda: rm.bias_data(1.0, d=0), "d"),
        ("bias_data", lambda: rm.bias_data(1.0, noise=-1.0), "noise"),
        ("MatrixFactorization", lambda: rm.MatrixFactorization(np.ones((3, 2)), 3), "r"),
        ("MatrixFactorization", lambda: rm.MatrixFactorization(np.ones((3, 2)), 0), "r"),
        ("MatrixFactorization", lambda: rm.MatrixFactorization(np.array([[1.0, NAN]]), 1), "Y"),
        ("MatrixFactorization", lambda: rm.MatrixFactorization(np.ones((0, 2)), 1), "Y"),
        ("MatrixFactorization", lambda: mprob.minimiser(np.zeros((2, 2))), "G"),
        ("MatrixFactorization", lambda: mprob.minimiser(np.eye(3)), "G"),
        ("MatrixFactorization", lambda: rm.MatrixFactorization(np.eye(3), 1).minimiser(), "unique"),
        ("MatrixFactorization", lambda: mprob.varpro().lift(np.zeros(12)), "rank deficient"),
        ("MatrixFactorization", lambda: mprob.scalar_reduction().lift(np.zeros(12)), "nonzero"),
        ("MatrixFactorization", lambda: mprob.join(np.ones((5, 2)), np.ones((5, 2))), "U"),
        ("make_factorization", lambda: rm.make_factorization(noise=-1.0), "noise"),
        ("make_factorization", lambda: rm.make_factorization(init_scale=0.0), "init_scale"),
        ("make_factorization", lambda: rm.make_factorization(3, 2, 3), "r"),
        ("make_factorization", lambda: rm.make_factorization(NAN), "m"),
        ("alternating_least_squares", lambda: rm.alternating_least_squares(mprob, np.ones((2, 2))), "U0"),
        ("alternating_least_squares", lambda: rm.alternating_least_squares(mprob, x0[:12].reshape(6, 2), tol=0),
         "tol"),
        ("alternating_least_squares", lambda: rm.alternating_least_squares(mprob, x0[:12].reshape(6, 2),
                                                                           maxiter=-1), "maxiter"),
        ("alternating_least_squares", lambda: rm.alternating_least_squares(prob, np.ones((2, 2))), "problem"),
        ("alternating_gradient_descent", lambda: rm.alternating_gradient_descent(mprob, x0, step=NAN), "step"),
        ("alternating_gradient_descent", lambda: rm.alternating_gradient_descent(mprob, x0[:5], step=0.1), "x0"),
        ("alternating_gradient_descent", lambda: rm.alternating_gradient_descent(prob, x0, step=0.1), "problem"),
        ("alternating_gradient_descent", lambda: rm.alternating_gradient_descent(mprob, x0, step=0.1, f_star=INF),
         "f_star"),
        ("factorization_flops", lambda: rm.factorization_flops(0, 2, 1), "m"),
    ]


#: Public names that take no input to validate (records).
NO_INPUT = {"Curvature"}


def test_bad_inputs_raise_value_errors_naming_the_argument():
    for name, call, match in _bad_calls():
        with pytest.raises(ValueError, match=match):
            call()
        assert hasattr(rm, name)


def test_every_public_callable_is_checked_for_bad_input():
    """The table above covers each public callable of the module, so a new one cannot slip."""
    public = {n for n, o in vars(rm).items() if not n.startswith("_") and callable(o)
              and getattr(o, "__module__", None) == rm.__name__}
    covered = {name for name, _, _ in _bad_calls()} | NO_INPUT
    assert public - covered == set(), f"public callables without bad-input tests: {sorted(public - covered)}"
