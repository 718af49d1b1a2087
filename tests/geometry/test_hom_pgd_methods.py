"""Tests for chapter 10's methods (Hom-PGD): the gauge map, its inverse and VJP, the method and its
baselines (PGD with exact projection, Frank-Wolfe in three variants, the quadratic penalty)."""
import subprocess
import sys

import numpy as np
import pytest
import torch
from scipy.optimize import linprog, minimize

from optbook.geometry import hom_pgd_methods as H


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


def facet_target(K):
    """y just outside the facet whose foot point (from x0) lies deepest inside the others, and that
    foot point, which is then the projection of y (one active constraint)."""
    feet = K.x0 + (K.slack / np.linalg.norm(K.A, axis=1) ** 2)[:, None] * K.A
    vals = K.constraint_values(feet)
    vals[np.arange(len(feet)), np.arange(len(feet))] = -np.inf
    j = int(np.argmin(vals.max(axis=1)))
    return feet[j] + 0.5 * K.A[j] / np.linalg.norm(K.A[j]), feet[j]


def test_methods_module_does_not_pull_plotly():
    out = subprocess.run([sys.executable, "-c", "import sys, optbook.geometry.hom_pgd_methods; print('plotly' in sys.modules)"],
                         capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


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


def test_quadratic_gauge_keeps_its_digits_when_the_centre_hugs_the_boundary():
    """Centre 1e-9 inside a unit ball, ray towards the far side: the textbook root (b + root)/2s
    cancels to about 7 digits; the conjugate form is exact. Exit time 2 - delta."""
    delta = 1e-9
    K = H.GaugeSet(balls=[(np.array([1.0 - delta, 0.0]), 1.0)], center=np.zeros(2))
    assert K.gauge(np.array([1.0, 0.0])) == pytest.approx(1.0 / (2.0 - delta), rel=1e-14)
    assert K.gauge(np.array([-1.0, 0.0])) == pytest.approx(1.0 / delta, rel=1e-6)
    g = K.gauge_grad(np.array([1.0, 0.3]))
    e = 1e-7
    fd = [(K.gauge(np.array([1.0, 0.3]) + e * v) - K.gauge(np.array([1.0, 0.3]) - e * v)) / (2 * e) for v in np.eye(2)]
    assert np.allclose(g, fd, rtol=1e-6, atol=1e-9)


def test_rescaled_constraints_give_the_same_map(poly):
    z = np.random.default_rng(8).standard_normal(poly.n)
    z *= 0.7 / np.linalg.norm(z)
    x = poly.psi(z)
    for c in (1e-6, 1e6):
        K = H.GaugeSet(c * poly.A, c * poly.b, lower=poly.lower, upper=poly.upper, center=poly.x0)
        assert np.allclose(K.psi(z), x, rtol=1e-13, atol=1e-14)


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
    fun, jac = H.quadratic_objective(y)
    x_init = x0 + np.array([0.3, 0.2, -0.1])
    res = H.hom_pgd(fun, x_init, jac, K=K, eta=0.1, stop="grad_norm", tol=1e-300, maxiter=30)
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


def test_hom_pgd_on_one_facet_reaches_the_projection_with_feasible_iterates(poly):
    y, x_star = facet_target(poly)
    M, h = poly.polytope()
    x_ref, _ = H.project_polytope(y, M, h)
    assert np.allclose(x_ref, x_star, atol=1e-6)
    fun, jac = H.quadratic_objective(y)
    res = H.hom_pgd(fun, poly.x0, jac, K=poly, eta=1.0, f_star=fun(x_star), tol=1e-12, maxiter=500, rng=0)
    assert res.success and np.linalg.norm(res.x - x_star) < 1e-5
    assert res.trace["violation"].max() <= 1e-12
    # The gradient mapping, not grad h, is the stationarity measure at a solution on the sphere.
    assert res.trace.grad_norm[-1] < 1e-4 < np.linalg.norm(poly.vjp(res.z, jac(res.x)))
    by_map = H.hom_pgd(fun, poly.x0, jac, K=poly, eta=1.0, stop="grad_norm", tol=1e-10, maxiter=500, rng=0)
    assert by_map.success and np.linalg.norm(by_map.x - x_star) < 1e-6


def test_hom_pgd_with_many_active_constraints_stays_feasible_and_makes_progress(poly):
    y = 5.0 * np.random.default_rng(9).standard_normal(poly.n) / np.sqrt(poly.n)
    M, h = poly.polytope()
    x_star, _ = H.project_polytope(y, M, h, tol=1e-14, maxiter=50000)
    assert np.sum(M @ x_star - h > -1e-7) >= 5  # a corner: several constraints active
    fun, jac = H.quadratic_objective(y)
    f_star = fun(x_star)
    x_init = poly.x0 + 1e-3
    res = H.hom_pgd(fun, x_init, jac, K=poly, eta=0.03, momentum=0.9, step_rule="adaptive", decay=0.99,
                    f_star=f_star, tol=1e-12, maxiter=400)
    assert res.trace["violation"].max() <= 1e-12
    gaps = res.trace["gap"]
    assert gaps.min() <= 0.1 * gaps[0]  # progress, even where the rate is lost
    assert np.all(gaps >= -1e-12)        # never below the certified optimum


def test_step_rules():
    K = H.GaugeSet(np.eye(2), np.ones(2), lower=-np.ones(2))
    fun, jac = H.quadratic_objective(np.array([3.0, 0.5]))
    dim = H.hom_pgd(fun, np.zeros(2), jac, K=K, eta=0.4, step_rule="diminish", min_eta=0.05, stop="grad_norm",
                    tol=1e-300, maxiter=100, rng=0)
    k = np.arange(100)
    assert np.allclose(dim.trace.step_size[:-1], np.maximum(0.4 / np.sqrt(k + 1), 0.05))
    fun, jac = H.quadratic_objective(np.array([0.3, -0.2]), np.diag([1.0, 0.1]))  # x* inside: overshoots
    ada = H.hom_pgd(fun, np.zeros(2), jac, K=K, eta=5.0, momentum=0.9, step_rule="adaptive", decay=0.5,
                    stop="grad_norm", tol=1e-300, maxiter=60, rng=0)
    steps, f = ada.trace.step_size[:-1], ada.trace.objective
    rises = np.flatnonzero(np.diff(f)[:-1] > 0)  # the last step's rise acts after it
    assert rises.size and np.all(np.diff(steps) <= 0)  # halved after each rise, never raised
    assert steps[-1] == pytest.approx(5.0 * 0.5 ** rises.size)


def test_hom_pgd_is_deterministic_under_a_seed(poly):
    y, _ = facet_target(poly)
    fun, jac = H.quadratic_objective(y)
    a = H.hom_pgd(fun, poly.x0, jac, K=poly, stop="grad_norm", tol=1e-8, maxiter=50, rng=7)
    b = H.hom_pgd(fun, poly.x0, jac, K=poly, stop="grad_norm", tol=1e-8, maxiter=50, rng=7)
    assert np.array_equal(a.iterates, b.iterates)


def test_baselines_reach_the_projection(poly):
    y, x_star = facet_target(poly)
    fun, jac = H.quadratic_objective(y)
    f_star = fun(x_star)
    pgd = H.pgd_projection(fun, poly.x0, jac, K=poly, eta=0.5, f_star=f_star, tol=1e-10, maxiter=100)
    assert pgd.success and np.linalg.norm(pgd.x - x_star) < 1e-4
    pen = H.quadratic_penalty(fun, poly.x0, jac, K=poly, f_star=f_star, maxiter=200)
    assert pen.trace["violation"].max() > 1e-6  # the penalty path leaves K
    assert abs(pen.trace["gap"][-1]) < 1e-2


@pytest.mark.parametrize("variant, step", [("vanilla", "open-loop"), ("vanilla", "line-search"),
                                           ("away", "line-search"), ("away", "short"),
                                           ("pairwise", "line-search"), ("pairwise", "short")])
def test_frank_wolfe_variants_keep_their_active_set_and_bound_the_gap(poly, variant, step):
    y, x_star = facet_target(poly)
    Q = np.diag(np.linspace(0.2, 1.0, poly.n))
    fun, jac = H.quadratic_objective(y, Q)
    M, h = poly.polytope()
    C = np.linalg.cholesky(Q)
    w, _ = H.project_polytope(C.T @ y, np.linalg.solve(C, M.T).T, h, tol=1e-14, maxiter=50000)
    f_star = fun(np.linalg.solve(C.T, w))
    res = H.frank_wolfe(fun, poly.x0, jac, K=poly, variant=variant, step=step, L=1.0, f_star=f_star, tol=1e-300,
                        maxiter=250)
    assert np.allclose(res.weights @ res.atoms, res.x, atol=1e-10)  # x is the convex combination
    assert np.all(res.weights > 0) and res.weights.sum() == pytest.approx(1.0)
    assert res.trace["violation"].max() <= 1e-9
    gaps = res.trace["gap"]
    assert np.all(res.trace["fw_gap"] >= gaps - 1e-9)  # the FW gap bounds f - f* (convex f)
    if step != "open-loop":
        assert np.all(np.diff(res.trace.objective) <= 1e-12)  # exact or short steps never go uphill
    if variant != "vanilla" and step == "line-search":
        assert gaps[-1] <= 1e-8 * gaps[0]  # linear rate on a polytope
    if variant == "vanilla":
        assert gaps[-1] > 1e-6 * gaps[0]   # sublinear: x* is not a vertex


def test_linear_oracle_is_warm_started_highs_and_agrees_with_linprog(poly, monkeypatch):
    M, h = poly.polytope()
    oracle = H.LinearOracle(M, h)
    assert oracle._highs is not None  # highspy is installed here (cvxpy brings it)
    G = np.random.default_rng(4).standard_normal((20, poly.n))
    for g in G:
        s, failure = oracle(g)
        ref = linprog(g, A_ub=M, b_ub=h, bounds=(None, None), method="highs")
        assert failure == "" and g @ s == pytest.approx(ref.fun, abs=1e-9) and np.max(M @ s - h) <= 1e-9
    assert oracle.calls == len(G)
    # HiGHS prints a banner from C++ once per process, on the first solver object: a fresh process
    # shows that it never reaches stdout (a notebook would show it).
    out = subprocess.run([sys.executable, "-c", "import numpy as np; from optbook.geometry.hom_pgd_methods import "
                          "LinearOracle as O; print(O(np.eye(2), np.ones(2))(-np.ones(2))[0])"],
                         capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[1. 1.]"
    monkeypatch.setitem(sys.modules, "highspy", None)  # without highspy: a fresh linprog per call
    fallback = H.LinearOracle(M, h)
    assert fallback._highs is None
    s, failure = fallback(G[0])
    assert failure == "" and G[0] @ s == pytest.approx(linprog(G[0], A_ub=M, b_ub=h, bounds=(None, None)).fun)


def test_frank_wolfe_line_search_is_exact_on_a_quadratic(poly):
    fun, jac = H.quadratic_objective(np.full(poly.n, 2.0), np.diag(np.linspace(0.1, 1.0, poly.n)))
    x = poly.x0.copy()
    d = -jac(x)
    gam, _ = H._fw_line_search(jac, x, d, float(jac(x) @ d), 1e6)
    assert gam == pytest.approx(-(jac(x) @ d) / (d @ np.diag(np.linspace(0.1, 1.0, poly.n)) @ d), rel=1e-12)


def test_project_polytope_kkt_and_rank_deficient_rows():
    rng = np.random.default_rng(0)
    M, h = rng.standard_normal((15, 5)), rng.uniform(0.5, 1.0, 15)
    y = 3 * rng.standard_normal(5)
    x, lam = H.project_polytope(y, M, h)
    assert np.all(M @ x - h <= 1e-8) and np.all(lam >= 0)
    assert np.abs(lam * (M @ x - h)).max() < 1e-8
    ref = minimize(lambda v: 0.5 * np.sum((v - y) ** 2), np.zeros(5), jac=lambda v: v - y, method="SLSQP",
                   constraints=[{"type": "ineq", "fun": lambda v: h - M @ v, "jac": lambda v: -M}],
                   options={"ftol": 1e-14, "maxiter": 500})
    assert np.allclose(x, ref.x, atol=1e-6)
    # Every row twice and a scaled copy: the active set is rank-deficient, the projection unchanged.
    M2, h2 = np.vstack([M, M, 1e3 * M]), np.concatenate([h, h, 1e3 * h])
    x2, lam2 = H.project_polytope(y, M2, h2)
    assert np.allclose(x2, x, atol=1e-7) and np.all(lam2 >= 0)


def test_objective_errors_are_named():
    K = H.GaugeSet(np.eye(2), np.ones(2), lower=-np.ones(2))
    fun, jac = H.quadratic_objective(np.array([2.0, 0.0]))
    with pytest.raises(ValueError, match="jac must return an array of shape"):
        H.hom_pgd(fun, np.zeros(2), lambda x: np.zeros(3), K=K, stop="grad_norm")
    with pytest.raises(ValueError, match="non-finite"):
        H.hom_pgd(lambda x: np.nan, np.zeros(2), jac, K=K, stop="grad_norm")
    with pytest.raises(ValueError, match="non-finite"):
        H.frank_wolfe(fun, np.zeros(2), lambda x: np.full(2, np.inf), K=K, stop="grad_norm")


@pytest.mark.parametrize("call, match", [
    (lambda K, f, j: H.hom_pgd(f, np.array([3.0, 0.0]), j, K=K, stop="grad_norm"), "x0 must lie in K"),
    (lambda K, f, j: H.hom_pgd(f, np.zeros(3), j, K=K, stop="grad_norm"), "x0 must have length"),
    (lambda K, f, j: H.hom_pgd(f, np.array([np.nan, 0.0]), j, K=K, stop="grad_norm"), "x0 must be finite"),
    (lambda K, f, j: H.hom_pgd(f, np.zeros(2), j, K=K, eta=0.0, stop="grad_norm"), "eta"),
    (lambda K, f, j: H.hom_pgd(f, np.zeros(2), j, K=K, eta=np.inf, stop="grad_norm"), "eta"),
    (lambda K, f, j: H.hom_pgd(f, np.zeros(2), j, K=K, momentum=1.0, stop="grad_norm"), "momentum"),
    (lambda K, f, j: H.hom_pgd(f, np.zeros(2), j, K=K, step_rule="armijo", stop="grad_norm"), "step_rule"),
    (lambda K, f, j: H.hom_pgd(f, np.zeros(2), j, K=K, decay=0.0, stop="grad_norm"), "decay"),
    (lambda K, f, j: H.hom_pgd(f, np.zeros(2), j, K=K, min_eta=-1.0, stop="grad_norm"), "min_eta"),
    (lambda K, f, j: H.hom_pgd(f, np.zeros(2), j, K=K, tol=0.0, stop="grad_norm"), "tol"),
    (lambda K, f, j: H.hom_pgd(f, np.zeros(2), j, K=K, tol=np.nan, stop="grad_norm"), "tol"),
    (lambda K, f, j: H.hom_pgd(f, np.zeros(2), j, K=K, maxiter=-1, stop="grad_norm"), "maxiter"),
    (lambda K, f, j: H.hom_pgd(f, np.zeros(2), j, K=K, maxiter=2.5, stop="grad_norm"), "maxiter"),
    (lambda K, f, j: H.hom_pgd(f, np.zeros(2), j, K=K), "f_star"),
    (lambda K, f, j: H.hom_pgd(f, np.zeros(2), j, K=K, f_star=np.inf), "f_star"),
    (lambda K, f, j: H.hom_pgd(f, np.zeros(2), j, K=K, stop="objective", f_star=0.0), "stop"),
    (lambda K, f, j: H.hom_pgd(1.0, np.zeros(2), j, K=K, stop="grad_norm"), "callable"),
    (lambda K, f, j: H.pgd_projection(f, np.zeros(2), j, K="square", stop="grad_norm"), "K must be a GaugeSet"),
    (lambda K, f, j: H.pgd_projection(f, np.zeros(2), j, K=K, tol=-1.0, stop="grad_norm"), "tol"),
    (lambda K, f, j: H.frank_wolfe(f, np.zeros(2), j, K=K, maxiter=-1, stop="grad_norm"), "maxiter"),
    (lambda K, f, j: H.frank_wolfe(f, np.zeros(2), j, K=K, variant="fully-corrective", stop="grad_norm"), "variant"),
    (lambda K, f, j: H.frank_wolfe(f, np.zeros(2), j, K=K, step="armijo", stop="grad_norm"), "step"),
    (lambda K, f, j: H.frank_wolfe(f, np.zeros(2), j, K=K, variant="away", stop="grad_norm"), "open-loop"),
    (lambda K, f, j: H.frank_wolfe(f, np.zeros(2), j, K=K, step="short", stop="grad_norm"), "needs L"),
    (lambda K, f, j: H.frank_wolfe(f, np.zeros(2), j, K=K, step="short", L=0.0, stop="grad_norm"), "L"),
    (lambda K, f, j: H.quadratic_penalty(f, np.zeros(2), j, K=K, growth=0.5, stop="grad_norm"), "growth"),
    (lambda K, f, j: H.quadratic_penalty(f, np.zeros(2), j, K=K, every=0, stop="grad_norm"), "every"),
    (lambda K, f, j: H.pgd_projection(f, np.zeros(2), j, K=H.GaugeSet(balls=[(np.zeros(2), 1.0)],
                                                                       center=np.zeros(2)), stop="grad_norm"),
     "not a polytope"),
    (lambda K, f, j: K.vjp(np.zeros(2), np.ones(2)), "nonzero"),
    (lambda K, f, j: K.vjp(np.ones(3), np.ones(2)), "z must have length"),
    (lambda K, f, j: K.vjp(np.ones(2), np.array([np.nan, 1.0])), "g must be finite"),
    (lambda K, f, j: K.gauges(np.ones((4, 3))), "Y must have shape"),
    (lambda K, f, j: K.gauges(np.array([[np.inf, 0.0]])), "Y must be finite"),
    (lambda K, f, j: K.gauges(np.zeros((0, 2))), "Y must have shape"),
    (lambda K, f, j: K.psi(np.ones((2, 2, 2))), "Z must have shape"),
    (lambda K, f, j: K.psi_inv([np.nan, 0.0]), "X must be finite"),
    (lambda K, f, j: K.constraint_values("abc"), "X must be an array of numbers"),
    (lambda K, f, j: K.max_violation(np.ones(5)), "x must have length"),
    (lambda K, f, j: K.gauge_grad(np.ones(1)), "y must have length"),
    (lambda K, f, j: H.project_polytope(np.zeros(2), np.eye(2), np.ones(2), tol=0.0), "tol"),
    (lambda K, f, j: H.project_polytope(np.zeros(2), np.eye(2), np.ones(2), maxiter=0), "maxiter"),
    (lambda K, f, j: H.project_polytope(np.zeros(2), np.eye(2), np.ones(3)), "h must have length"),
    (lambda K, f, j: H.project_polytope(np.zeros(3), np.eye(2), np.ones(2)), "y must have length"),
    (lambda K, f, j: H.project_polytope(np.zeros(2), np.eye(2), np.ones(2), lam0=np.ones(3)), "lam0"),
    (lambda K, f, j: H.chebyshev_center(np.eye(2), np.ones(2), lower=[np.nan, 0.0]), "lower"),
    (lambda K, f, j: H.chebyshev_center(np.eye(2), np.ones(2), upper=[1.0]), "upper"),
    (lambda K, f, j: H.random_polytope(0, 3), "n must be"),
    (lambda K, f, j: H.random_polytope(3, -1), "m must be"),
    (lambda K, f, j: H.quadratic_objective([np.nan]), "y must be finite"),
    (lambda K, f, j: H.quadratic_objective(np.zeros(2), np.ones((2, 3))), "Q must be square"),
    (lambda K, f, j: H.quadratic_objective(np.zeros(2), np.array([[1.0, 2.0], [0.0, 1.0]])), "symmetric"),
])
def test_bad_arguments_are_named(call, match):
    K = H.GaugeSet(np.eye(2), np.ones(2), lower=-np.ones(2))
    fun, jac = H.quadratic_objective(np.array([2.0, 0.0]))
    with pytest.raises(ValueError, match=match):
        call(K, fun, jac)


def test_bad_sets_are_named():
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
    with pytest.raises(ValueError, match="beta"):
        H.GaugeSet(quadratics=[(np.eye(2), np.zeros(2), np.nan)], lower=-np.ones(2), upper=np.ones(2),
                   center=np.zeros(2))
    with pytest.raises(ValueError, match="lower must be < upper"):
        H.GaugeSet(lower=np.ones(2), upper=np.ones(2))
    with pytest.raises(ValueError, match="lower must be a length-2"):
        H.GaugeSet(A, b, lower=[np.nan, 0.0])
    with pytest.raises(ValueError, match="at least one constraint"):
        H.GaugeSet()
