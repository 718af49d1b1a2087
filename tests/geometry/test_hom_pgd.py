"""Tests for chapter 10 (Hom-PGD): the gauge map, its inverse and VJP, the method and baselines."""
import numpy as np
import pytest
import torch

from optbook.geometry import hom_pgd as H


def bisection_exit(K, y, hi=1e6, iters=200):
    """Exit time of the ray x0 + t y from K by bisection on max_j g_j (reference for the gauge)."""
    lo = 0.0
    for _ in range(iters):
        mid = 0.5 * (lo + hi)
        if K.max_violation(K.x0 + mid * y) <= 0:
            lo = mid
        else:
            hi = mid
    return 0.5 * (lo + hi)


@pytest.fixture(scope="module")
def poly():
    return H.random_polytope(20, 60, rng=1)


@pytest.fixture(scope="module")
def curved():
    rng = np.random.default_rng(2)
    M = rng.standard_normal((4, 4))
    Q = M @ M.T + 0.5 * np.eye(4)
    return H.GaugeSet(rng.standard_normal((6, 4)), np.ones(6), lower=-2 * np.ones(4), upper=2 * np.ones(4),
                      balls=[(np.array([0.3, 0, 0, 0]), 1.5)], quadratics=[(Q, 0.1 * np.ones(4), 2.0)],
                      center=np.zeros(4))


def test_chebyshev_center_of_a_box():
    c, r = H.chebyshev_center(np.zeros((1, 2)), np.ones(1), lower=[0, 0], upper=[4, 2])
    assert np.allclose(c[1], 1.0) and r == pytest.approx(1.0)


@pytest.mark.parametrize("which", ["poly", "curved"])
def test_gauge_matches_bisection_and_is_homogeneous(which, request):
    K = request.getfixturevalue(which)
    rng = np.random.default_rng(0)
    for y in rng.standard_normal((5, K.n)):
        assert K.gauge(y) == pytest.approx(1.0 / bisection_exit(K, y), rel=1e-9)
        assert K.gauge(3.7 * y) == pytest.approx(3.7 * K.gauge(y), rel=1e-12)


def test_ball_and_quadratic_gauges_match_bisection_alone():
    rng = np.random.default_rng(5)
    ball = H.GaugeSet(balls=[(np.array([1.0, -0.5, 0.2]), 2.0)], center=np.array([0.8, 0.1, 0.0]))
    Q = np.diag([1.0, 3.0, 0.0])  # only semidefinite: the ball keeps K bounded
    quad = H.GaugeSet(balls=[(np.zeros(3), 3.0)], quadratics=[(Q, np.array([0.2, 0, 0]), 1.0)], center=np.zeros(3))
    for K in (ball, quad):
        for y in rng.standard_normal((4, 3)):
            assert K.gauge(y) == pytest.approx(1.0 / bisection_exit(K, y), rel=1e-9)


def test_intersection_gauge_is_max_of_gauges(curved):
    rng = np.random.default_rng(1)
    Y = rng.standard_normal((6, 4))
    parts = []
    for kw in (dict(A=curved.A, b=curved.b, lower=curved.lower, upper=curved.upper),
               dict(balls=[(np.array([0.3, 0, 0, 0]), 1.5)], lower=curved.lower, upper=curved.upper),
               dict(quadratics=[curved.quads[1]], lower=curved.lower, upper=curved.upper)):
        parts.append(H.GaugeSet(center=np.zeros(4), **kw).gauge(Y))
    assert np.allclose(curved.gauge(Y), np.max(parts, axis=0), rtol=1e-13)


@pytest.mark.parametrize("which", ["poly", "curved"])
def test_round_trips_boundary_and_centre(which, request):
    K = request.getfixturevalue(which)
    rng = np.random.default_rng(3)
    Z = rng.standard_normal((20, K.n))
    Z *= (rng.uniform(0.05, 1.0, 20) / np.linalg.norm(Z, axis=1))[:, None]
    X = K.psi(Z)
    assert np.abs(K.psi_inv(X) - Z).max() < 1e-10
    assert np.abs(K.psi(K.psi_inv(X)) - X).max() < 1e-10
    assert np.all(K.constraint_values(X).max(axis=1) < 0)  # ||z|| < 1: strictly feasible
    S = Z / np.linalg.norm(Z, axis=1, keepdims=True)
    assert np.abs(K.constraint_values(K.psi(S)).max(axis=1)).max() < 1e-10  # sphere -> boundary
    assert np.array_equal(K.psi(np.zeros(K.n)), K.x0)


def test_ball_map_is_linear_and_hom_pgd_equals_scaled_pgd():
    x0, r = np.array([0.5, -1.0, 2.0]), 1.5
    K = H.GaugeSet(balls=[(x0, r)], center=x0)
    z = np.array([0.2, -0.4, 0.1])
    assert np.allclose(K.psi(z), x0 + r * z, atol=1e-14)
    y = np.array([4.0, 1.0, 0.0])
    fun, jac = H.distance_objective(y)
    x_init = x0 + np.array([0.3, 0.2, -0.1])
    res = H.hom_pgd(fun, x_init, jac, K=K, step_rule="constant", eta=0.1, stop="grad_norm", tol=1e-300,
                    maxiter=30)
    # h(z) = f(x0 + r z): latent PGD with step eta is PGD on x with step r^2 eta, onto the ball.
    x = x_init.copy()
    for k in range(31):
        assert np.allclose(res.iterates[k], x, atol=1e-12)
        x = x - r * r * 0.1 * (x - y)
        d = x - x0
        x = x0 + d * min(1.0, r / np.linalg.norm(d))


def torch_psi(K, z):
    zt = torch.tensor(z, dtype=torch.float64, requires_grad=True)
    As = torch.tensor(K.A / K.slack[:, None])
    gam = torch.cat([As @ zt, zt * torch.tensor(K._inv_up), -zt * torch.tensor(K._inv_lo)]).max()
    return zt, torch.tensor(K.x0) + zt * torch.linalg.norm(zt) / gam


def test_vjp_matches_torch_autograd_and_finite_differences(poly):
    rng = np.random.default_rng(4)
    for _ in range(5):
        z = rng.standard_normal(poly.n)
        z *= rng.uniform(0.2, 0.9) / np.linalg.norm(z)
        g = rng.standard_normal(poly.n)
        zt, xt = torch_psi(poly, z)
        (xt @ torch.tensor(g)).backward()
        auto = zt.grad.numpy()
        ours = poly.vjp(z, g)
        assert np.allclose(xt.detach().numpy(), poly.psi(z), atol=1e-14)
        assert np.linalg.norm(ours - auto) <= 1e-10 * np.linalg.norm(auto)
        e = 1e-6
        fd = np.array([(g @ (poly.psi(z + e * v) - poly.psi(z - e * v))) / (2 * e) for v in np.eye(poly.n)])
        assert np.linalg.norm(ours - fd) <= 1e-6 * np.linalg.norm(auto)


def test_vjp_on_curved_constraints_matches_finite_differences(curved):
    rng = np.random.default_rng(6)
    for _ in range(4):
        z = rng.standard_normal(4)
        z *= 0.7 / np.linalg.norm(z)
        g = rng.standard_normal(4)
        e = 1e-6
        fd = np.array([(g @ (curved.psi(z + e * v) - curved.psi(z - e * v))) / (2 * e) for v in np.eye(4)])
        assert np.allclose(curved.vjp(z, g), fd, rtol=1e-6, atol=1e-7)


def test_hom_pgd_benign_limit_is_the_projection_and_iterates_feasible(poly):
    y, x_star = H.benign_target(poly)
    M, h = poly.polytope()
    x_ref, _ = H.project_polytope(y, M, h)
    assert np.allclose(x_ref, x_star, atol=1e-6)
    fun, jac = H.distance_objective(y)
    res = H.hom_pgd(fun, poly.x0, jac, K=poly, f_star=fun(x_star), tol=1e-12, maxiter=500, rng=0)
    assert res.success
    assert np.linalg.norm(res.x - x_star) < 1e-5
    assert res.trace["violation"].max() <= 1e-12
    assert np.all(np.diff(res.trace.objective) <= 1e-13 * res.trace.objective[0])  # Armijo: monotone


def test_hom_pgd_degenerate_is_feasible_and_monotone(poly):
    y = 5.0 * np.random.default_rng(9).standard_normal(poly.n) / np.sqrt(poly.n)
    fun, jac = H.distance_objective(y)
    res = H.hom_pgd(fun, poly.x0 + 1e-3, jac, K=poly, stop="grad_norm", tol=1e-12, maxiter=200)
    assert res.trace["violation"].max() <= 1e-12
    assert np.all(np.diff(res.trace.objective) <= 1e-13 * res.trace.objective[0])


def test_hom_pgd_is_deterministic_under_a_seed(poly):
    y, _ = H.benign_target(poly)
    fun, jac = H.distance_objective(y)
    a = H.hom_pgd(fun, poly.x0, jac, K=poly, stop="grad_norm", tol=1e-8, maxiter=50, rng=7)
    b = H.hom_pgd(fun, poly.x0, jac, K=poly, stop="grad_norm", tol=1e-8, maxiter=50, rng=7)
    assert np.array_equal(a.iterates, b.iterates)


def test_baselines_reach_the_projection(poly):
    y, x_star = H.benign_target(poly)
    fun, jac = H.distance_objective(y)
    f_star = fun(x_star)
    pgd = H.pgd_projection(fun, poly.x0, jac, K=poly, eta=0.5, f_star=f_star, tol=1e-10, maxiter=100)
    assert pgd.success and np.linalg.norm(pgd.x - x_star) < 1e-4
    fw = H.frank_wolfe(fun, poly.x0, jac, K=poly, f_star=f_star, maxiter=30)
    assert fw.trace["violation"].max() <= 1e-9
    gaps = fw.trace["gap"]
    assert gaps[-1] < gaps[0] and np.all(fw.trace["fw_gap"][:-1] >= gaps[:-1] - 1e-9)  # FW gap bounds f - f*
    pen = H.quadratic_penalty(fun, poly.x0, jac, K=poly, f_star=f_star, maxiter=200)
    assert pen.trace["violation"].max() > 1e-6  # the penalty path leaves K
    assert abs(pen.trace["gap"][-1]) < 1e-2


def test_project_polytope_kkt():
    rng = np.random.default_rng(0)
    M, h = rng.standard_normal((15, 5)), rng.uniform(0.5, 1.0, 15)
    y = 3 * rng.standard_normal(5)
    x, lam = H.project_polytope(y, M, h)
    assert np.all(M @ x - h <= 1e-8) and np.all(lam >= 0)
    assert np.abs(lam * (M @ x - h)).max() < 1e-8
    from scipy.optimize import minimize
    ref = minimize(lambda v: 0.5 * np.sum((v - y) ** 2), np.zeros(5), jac=lambda v: v - y, method="SLSQP",
                   constraints=[{"type": "ineq", "fun": lambda v: h - M @ v, "jac": lambda v: -M}],
                   options={"ftol": 1e-14, "maxiter": 500})
    assert np.allclose(x, ref.x, atol=1e-6)


def test_bad_input():
    A, b = np.eye(2), np.ones(2)
    with pytest.raises(ValueError, match="A and b"):
        H.GaugeSet(A)
    with pytest.raises(ValueError, match="b must have length"):
        H.GaugeSet(A, np.ones(3), lower=-np.ones(2))
    with pytest.raises(ValueError, match="finite"):
        H.GaugeSet(np.array([[np.nan, 0], [0, 1]]), b, lower=-np.ones(2))
    with pytest.raises(ValueError, match="bounded"):
        H.GaugeSet(A, b, center=np.zeros(2))
    with pytest.raises(ValueError, match="strictly inside"):
        H.GaugeSet(A, b, lower=-np.ones(2), center=np.ones(2))
    with pytest.raises(ValueError, match="center"):
        H.GaugeSet(balls=[(np.zeros(2), 1.0)])
    with pytest.raises(ValueError, match="radius"):
        H.GaugeSet(balls=[(np.zeros(2), -1.0)], center=np.zeros(2))
    with pytest.raises(ValueError, match="positive semidefinite"):
        H.GaugeSet(quadratics=[(-np.eye(2), np.zeros(2), 1.0)], lower=-np.ones(2), upper=np.ones(2),
                   center=np.zeros(2))
    with pytest.raises(ValueError, match="lower must be < upper"):
        H.GaugeSet(lower=np.ones(2), upper=np.ones(2))
    K = H.regular_polygon(4)
    fun, jac = H.distance_objective(np.array([2.0, 0.0]))
    with pytest.raises(ValueError, match="x0 must lie in K"):
        H.hom_pgd(fun, np.array([3.0, 0.0]), jac, K=K, stop="grad_norm")
    with pytest.raises(ValueError, match="x0 must have length"):
        H.hom_pgd(fun, np.zeros(3), jac, K=K, stop="grad_norm")
    with pytest.raises(ValueError, match="eta"):
        H.hom_pgd(fun, np.zeros(2), jac, K=K, eta=0.0, stop="grad_norm")
    with pytest.raises(ValueError, match="momentum"):
        H.hom_pgd(fun, np.zeros(2), jac, K=K, step_rule="constant", momentum=1.0, stop="grad_norm")
    with pytest.raises(ValueError, match="momentum needs"):
        H.hom_pgd(fun, np.zeros(2), jac, K=K, momentum=0.5, stop="grad_norm")
    with pytest.raises(ValueError, match="step_rule"):
        H.hom_pgd(fun, np.zeros(2), jac, K=K, step_rule="wolfe", stop="grad_norm")
    with pytest.raises(ValueError, match="f_star"):
        H.hom_pgd(fun, np.zeros(2), jac, K=K)
    with pytest.raises(ValueError, match="K must be a GaugeSet"):
        H.pgd_projection(fun, np.zeros(2), jac, K="square", stop="grad_norm")
    with pytest.raises(ValueError, match="maxiter"):
        H.frank_wolfe(fun, np.zeros(2), jac, K=K, maxiter=-1, stop="grad_norm")
    with pytest.raises(ValueError, match="growth"):
        H.quadratic_penalty(fun, np.zeros(2), jac, K=K, growth=0.5, stop="grad_norm")
    with pytest.raises(ValueError, match="not a polytope"):
        H.pgd_projection(fun, np.zeros(2), jac, K=H.GaugeSet(balls=[(np.zeros(2), 1.0)], center=np.zeros(2)),
                         stop="grad_norm")
    with pytest.raises(ValueError, match="sides"):
        H.regular_polygon(2)
    with pytest.raises(ValueError, match="nonzero"):
        K.vjp(np.zeros(2), np.ones(2))
    with pytest.raises(ValueError, match="geometry"):
        H.benchmark("flat")
