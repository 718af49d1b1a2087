"""Chapter 12: iDB-PD for semi-infinite min-max, its baselines, problems and figures."""
import numpy as np
import pytest
from scipy.optimize import minimize

from optbook.core import fd_gradient
from optbook.geometry import semi_infinite as si


# --------------------------------------------------------------------------- the direction QP

def test_closed_form_direction_matches_slsqp():
    rng = np.random.default_rng(0)
    for _ in range(100):
        n = int(rng.integers(2, 6))
        g, a, c = rng.standard_normal(n), rng.standard_normal(n), float(rng.standard_normal())
        d, lam = si.barrier_direction(g, a, c, delta=0.0)
        res = minimize(lambda z: np.sum((z + g) ** 2), -g, jac=lambda z: 2 * (z + g), method="SLSQP",
                       constraints=[dict(type="ineq", fun=lambda z: -(a @ z + c), jac=lambda z: -a)],
                       options=dict(ftol=1e-15, maxiter=200))
        assert np.allclose(d, res.x, atol=1e-7)
        assert a @ d + c <= 1e-10
        if lam > 0:
            assert abs(a @ d + c) <= 1e-10
        # KKT: d + g + lam a = 0 and lam >= 0
        assert lam >= 0 and np.allclose(d + g + lam * a, 0, atol=1e-12)


def test_inactive_constraint_gives_steepest_descent():
    g, a = np.array([1.0, 2.0]), np.array([1.0, 0.0])
    d, lam = si.barrier_direction(g, a, -5.0)  # a^T(-g) + c = -6 <= 0
    assert lam == 0.0 and np.array_equal(d, -g)
    d, lam = si.barrier_direction(g, np.zeros(2), 3.0)  # flat constraint
    assert lam == 0.0 and np.array_equal(d, -g)


def test_lambda_cap_and_scaling():
    g, a = np.array([1.0, 0.0]), np.array([-1.0, 0.0])
    _, lam = si.barrier_direction(g, a, 10.0, lam_max=2.0)
    assert lam == 2.0
    # rescaling psi by s rescales lambda by 1/s but not d (with c scaled likewise)
    g, a, c = np.array([0.3, -1.0]), np.array([0.5, 0.8]), 0.7
    d1, l1 = si.barrier_direction(g, a, c, delta=0.0)
    d2, l2 = si.barrier_direction(g, 4 * a, 4 * c, delta=0.0)
    assert np.allclose(d1, d2) and np.isclose(l1, 4 * l2)


# --------------------------------------------------------------------------- projections

def test_small_simplex_projection_matches_the_core_one():
    rng = np.random.default_rng(5)
    for _ in range(300):
        v = rng.standard_normal(int(rng.integers(1, 6))) * 10 ** rng.uniform(-3, 16)
        assert np.allclose(si._simplex_1d(v), si.project_simplex(v), atol=1e-12)
    p = si._simplex_1d(np.array([1e16, 1e16 + 2.0, 0.0]))   # shifted first: no loss of precision
    assert np.allclose(p, [0.0, 1.0, 0.0])


def test_simplex_projection_matches_qp():
    rng = np.random.default_rng(1)
    for _ in range(30):
        v = 2 * rng.standard_normal(4)
        p = si.project_simplex(v)
        res = minimize(lambda z: np.sum((z - v) ** 2), np.full(4, 0.25), method="SLSQP",
                       constraints=[dict(type="eq", fun=lambda z: z.sum() - 1)], bounds=[(0, None)] * 4,
                       options=dict(ftol=1e-14))
        assert np.allclose(p, res.x, atol=1e-6)
        assert p.min() >= 0 and np.isclose(p.sum(), 1)


def test_ball_projection():
    assert np.allclose(si.project_ball(np.array([3.0, 4.0]), 1.0), [0.6, 0.8])
    v = np.array([0.1, -0.2])
    assert np.array_equal(si.project_ball(v, 1.0), v)


# --------------------------------------------------------------------------- problems

@pytest.fixture(scope="module")
def multitask():
    return si.robust_multitask_problem(n_samples=40)


def test_gradients_match_finite_differences(multitask):
    P = multitask
    rng = np.random.default_rng(2)
    x, w = rng.standard_normal(P.dim_x), 0.1 * rng.standard_normal(P.dim_w)
    y = si.project_simplex(rng.random(P.dim_y))
    assert np.allclose(P.grad_x_phi(x, y), fd_gradient(lambda z: P.phi(z, y), x), atol=1e-5)
    assert np.allclose(P.grad_y_phi(x, y), fd_gradient(lambda z: P.phi(x, z), y), atol=1e-5)
    assert np.allclose(P.grad_x_psi(x, w), fd_gradient(lambda z: P.psi(z, w), x), atol=1e-5)
    assert np.allclose(P.grad_w_psi(x, w), fd_gradient(lambda z: P.psi(x, z), w), atol=1e-5)
    T = si.toy_problem()
    xt, wt = np.array([0.4, -0.7]), np.array([0.37])
    assert np.allclose(T.grad_w_psi(xt, wt), fd_gradient(lambda z: T.psi(xt, z), wt), atol=1e-5)
    y3 = np.array([0.2, 0.5, 0.3])
    assert np.allclose(T.grad_x_phi(xt, y3), fd_gradient(lambda z: T.phi(z, y3), xt), atol=1e-5)
    assert np.allclose(T.grad_y_phi(xt, y3), fd_gradient(lambda z: T.phi(xt, z), y3), atol=1e-5)


def test_exact_inner_maxima(multitask):
    P = multitask
    rng = np.random.default_rng(3)
    x = rng.standard_normal(P.dim_x)
    r = P.data["radius"]
    # G(x) equals psi at the closed-form worst w and beats random points of the ball
    W = rng.standard_normal((500, P.dim_w))
    W = r * W / np.linalg.norm(W, axis=1, keepdims=True) * rng.random((500, 1)) ** 0.1
    assert P.G(x) >= max(P.psi(x, w) for w in W) - 1e-12
    assert np.isclose(P.G(x), P.data["robust_loss"](x) - P.data["tau"])
    # best_y maximizes phi(x, .) over the simplex
    y_star = P.best_y(x)
    Y = rng.dirichlet(np.ones(P.dim_y), 300)
    assert P.phi(x, y_star) >= max(P.phi(x, y) for y in Y) - 1e-12


def test_w_ascent_finds_closed_form_maximizer(multitask):
    P = multitask
    x = np.random.default_rng(4).standard_normal(P.dim_x)
    w_star = P.worst_w(x)
    w = 0.5 * w_star  # on the right side; ascent must reach the boundary point s r x/||x||
    for _ in range(200):
        w = P.proj_w(w + 1.0 * P.grad_w_psi(x, w))
    assert np.allclose(w, w_star, atol=1e-6)


def test_toy_worst_w_is_global():
    T = si.toy_problem()
    for x in (np.array([0.8, 0.5]), np.array([-0.2, 0.1]), np.array([1.5, -1.0])):
        dense = si.toy_values_on_grid(x[None], np.linspace(0, 1, 20001))[0].max()
        assert abs(T.G(x) - dense) < 1e-7


# --------------------------------------------------------------------------- reductions and KKT

def test_never_active_constraint_reduces_to_gda(multitask):
    P = multitask
    free = si.SemiInfiniteMinMax(
        P.dim_x, P.dim_y, 1, phi=P.phi, grad_x_phi=P.grad_x_phi, grad_y_phi=P.grad_y_phi,
        psi=lambda x, w: -1.0, grad_x_psi=lambda x, w: np.zeros(P.dim_x), grad_w_psi=lambda x, w: np.zeros(1),
        proj_y=P.proj_y, proj_w=lambda w: w, best_y=P.best_y, worst_w=lambda x: np.zeros(1),
        y0=P.y0, w0=np.zeros(1))
    x0 = np.ones(P.dim_x)
    res = si.idb_pd(free, x0, eta=0.02, sigma=0.5, inner_y=3, maxiter=40, record_path=True)
    x, y = x0.copy(), P.y0.copy()
    for _ in range(40):
        for _ in range(3):
            y = si.project_simplex(y + 0.5 * P.grad_y_phi(x, y))
        x = x - 0.02 * P.grad_x_phi(x, y)
    assert np.allclose(res.x, x, atol=1e-12)
    assert np.all(res.trace["lam"] == 0)
    gda = si.penalty_gda(free, x0, mu=0.0, eta=0.02, sigma=0.5, inner_y=3, maxiter=40)
    assert np.allclose(gda.x, x, atol=1e-12)


def test_single_constraint_reduces_to_gong_liu():
    # |W| = 1 (W = {w0}) and phi independent of y: dynamic-barrier gradient descent.
    f = lambda x: np.sum((x - np.array([2.0, 1.0])) ** 2)  # noqa: E731
    gf = lambda x: 2 * (x - np.array([2.0, 1.0]))  # noqa: E731
    q = lambda x: x[0] ** 2 + 2 * x[1] ** 2 - 1  # noqa: E731
    gq = lambda x: np.array([2 * x[0], 4 * x[1]])  # noqa: E731
    P = si.SemiInfiniteMinMax(
        2, 0, 1, phi=lambda x, y: f(x), grad_x_phi=lambda x, y: gf(x), grad_y_phi=lambda x, y: np.zeros(0),
        psi=lambda x, w: q(x), grad_x_psi=lambda x, w: gq(x), grad_w_psi=lambda x, w: np.zeros(1),
        proj_y=lambda y: y, proj_w=lambda w: np.zeros(1), best_y=lambda x: np.zeros(0),
        worst_w=lambda x: np.zeros(1), y0=np.zeros(0), w0=np.zeros(1))
    for rho in si.RHOS:
        res = si.idb_pd(P, np.zeros(2) + 0.1, alpha=3.0, eta=0.03, rho=rho, maxiter=60)
        x = np.zeros(2) + 0.1
        for _ in range(60):
            a, qv = gq(x), q(x)
            c = 3.0 * (max(qv, 0.0) if rho == "plus" else qv)
            lam = max(0.0, (c - a @ gf(x)) / (a @ a + 1e-12))
            x = x - 0.03 * (gf(x) + lam * a)
        assert np.allclose(res.x, x, atol=1e-12)


@pytest.mark.parametrize("xt", [np.array([3.0, 4.0]), np.array([-1.0, 2.0, 2.0])])
def test_ball_toy_reaches_kkt_point(xt):
    P = si.ball_toy(xt)
    res = si.idb_pd(P, xt.copy(), eta=0.05, alpha=5.0, beta=1.0, maxiter=1500)
    nt = np.linalg.norm(xt)
    assert np.allclose(res.x, xt / nt, atol=1e-6)
    assert np.isclose(res.lam, 2 * (nt - 1), rtol=1e-4)
    assert res.trace["infeasibility"][-1] <= 1e-8


def test_rho_plus_stalls_inside_but_rho_value_reaches_the_boundary():
    # the fixed points of option A include interior points; option B's are KKT points
    xt = np.array([3.0, 4.0])
    P = si.ball_toy(xt)
    start = 0.2 * xt / np.linalg.norm(xt) + np.array([0.05, -0.05])
    a = si.idb_pd(P, start, rho="plus", maxiter=1500)
    b = si.idb_pd(P, start, rho="value", maxiter=1500)
    assert np.linalg.norm(b.x - xt / 5) < 1e-5
    assert np.linalg.norm(a.x) < 0.9 and a.trace["G"][-1] < -0.1


def test_monotone_feasibility_restoration_on_the_ball():
    # outside the ball, option A contracts psi by (1 - eta alpha) per step (exact inner max)
    P = si.ball_toy(np.array([3.0, 4.0]))
    res = si.idb_pd(P, np.array([3.0, 4.0]), eta=0.05, alpha=5.0, maxiter=30)
    G = res.trace["G"]
    pos = G[G > 1e-9]
    assert np.all(np.diff(pos) < 0)


def test_determinism_and_counts():
    P = si.robust_multitask_problem(n_samples=40)
    r1 = si.idb_pd(P, np.zeros(P.dim_x), maxiter=50)
    r2 = si.idb_pd(P, np.zeros(P.dim_x), maxiter=50)
    assert np.array_equal(r1.x, r2.x)
    assert r1.grad_evals == 50 * (5 + 5 + 2)
    assert r1.trace["grad_evals"][-1] == r1.grad_evals
    # logging every 7 iterations changes nothing but the trace's rows (0, 7, ..., 49, 50)
    r3 = si.idb_pd(P, np.zeros(P.dim_x), maxiter=50, record_every=7)
    assert np.array_equal(r3.x, r1.x)
    assert list(r3.trace.iteration) == [0, 7, 14, 21, 28, 35, 42, 49, 50]
    assert np.array_equal(r3.trace["infeasibility"][-1:], r1.trace["infeasibility"][-1:])
    p = si.penalty_gda(P, np.zeros(P.dim_x), mu=30.0, eta=1e-3, inner_y=1, inner_w=1, maxiter=20)
    assert p.success
    assert p.grad_evals == 20 * (1 + 1 + 2)
    e1 = si.exchange_method(P, np.zeros(P.dim_x), rng=3)
    e2 = si.exchange_method(P, np.zeros(P.dim_x), rng=3)
    assert np.array_equal(e1.x, e2.x) and e1.grad_evals == e2.grad_evals > 0


def test_stopping_rule_uses_only_the_methods_own_estimates():
    # on the ball the inner max is exact, so at the stop the true measures are small too
    xt = np.array([3.0, 4.0])
    P = si.ball_toy(xt)
    full = si.idb_pd(P, xt.copy(), eta=0.05, alpha=5.0, maxiter=1500, record_every=1)
    stop = si.idb_pd(P, xt.copy(), eta=0.05, alpha=5.0, maxiter=1500, record_every=1, tol=1e-8)
    assert stop.message.startswith("converged") and 0 < stop.nit < 1500
    k = stop.nit
    assert np.allclose(stop.x, xt / 5, atol=1e-7) and stop.trace.iteration[-1] == k
    # the rule only decides when to quit: the trajectory is the same as without it
    assert np.array_equal(full.trace["G"][: k + 1], stop.trace["G"])
    prev = si.idb_pd(P, xt.copy(), eta=0.05, alpha=5.0, maxiter=k, record_every=k, tol=0.0)
    assert np.array_equal(prev.x, stop.x)
    assert stop.grad_evals == (k + 1) * (5 + 2)        # the evaluations of the deciding iteration count
    assert si.idb_pd(P, xt.copy(), eta=0.05, alpha=5.0, maxiter=k - 1, tol=1e-8).message == "iteration budget used"
    with pytest.raises(ValueError, match="tol"):
        si.idb_pd(P, xt.copy(), tol=-1.0)
    ex = si.exchange_method(P, np.zeros(2), max_rounds=1)
    assert ex.message == "max_rounds = 1 reached"


def test_methods_reach_the_reference_on_the_multitask_problem():
    P = si.robust_multitask_problem(n_samples=100, rng=1)
    ref = si.reference_solution(P, [P.data["x_free"], np.zeros(P.dim_x)])
    assert P.G(ref.x) <= 1e-8
    idb = si.idb_pd(P, np.zeros(P.dim_x), maxiter=1500)
    assert idb.trace["infeasibility"][-1] <= 1e-6
    assert abs(idb.fun - ref.fun) / ref.fun <= 1e-4
    ex = si.exchange_method(P, np.zeros(P.dim_x))
    assert abs(ex.fun - ref.fun) / ref.fun <= 1e-4
    free = si.penalty_gda(P, np.zeros(P.dim_x), mu=0.0, maxiter=1500)
    assert free.fun < ref.fun and free.trace["infeasibility"][-1] > 0.1


def test_penalty_violation_is_lambda_over_mu_on_the_ball():
    # min ||x - x_t||^2 + (mu/2)[||x|| - 1]_+^2: the fixed point has ||x|| - 1 = lam*/(mu + 2) exactly
    xt = np.array([3.0, 4.0])
    P = si.ball_toy(xt)
    for mu in (10.0, 100.0):
        res = si.penalty_gda(P, xt.copy(), mu=mu, eta=0.5 / (2 + mu), maxiter=2000, record_every=2000)
        viol = res.trace["infeasibility"][-1]
        assert np.isclose(viol, 8.0 / (mu + 2.0), rtol=1e-6)
        assert np.isclose(res.lam, mu * viol, rtol=1e-6)


def test_welsch_instance_is_nonconvex_with_correct_gradients():
    P = si.robust_multitask_problem(n_samples=40, loss="welsch", loss_scale=2.0)
    rng = np.random.default_rng(6)
    x, y = rng.standard_normal(P.dim_x), si.project_simplex(rng.random(P.dim_y))
    assert np.allclose(P.grad_x_phi(x, y), fd_gradient(lambda z: P.phi(z, y), x), atol=1e-5)
    assert np.allclose(P.grad_y_phi(x, y), fd_gradient(lambda z: P.phi(x, z), y), atol=1e-5)
    assert P.data["hess_min_eig"](np.zeros(P.dim_x)) < 0       # indefinite at the start
    sq = si.robust_multitask_problem(n_samples=40)
    assert sq.data["hess_min_eig"](np.zeros(sq.dim_x)) > 0      # the squared loss is convex
    # the Hessian's smallest eigenvalue agrees with finite differences of the gradient
    yb = P.best_y(x)
    H = np.array([fd_gradient(lambda z: P.grad_x_phi(z, yb)[i], x) for i in range(P.dim_x)])
    assert np.isclose(np.linalg.eigvalsh(0.5 * (H + H.T))[0], P.data["hess_min_eig"](x), atol=1e-4)


def test_measures_are_the_papers_three():
    xt = np.array([3.0, 4.0])
    P = si.ball_toy(xt)
    x = np.array([1.2, 0.0])
    m = P.measures(x, 0.5)
    assert np.isclose(m["infeasibility"], 0.2) and np.isclose(m["complementarity"], 0.1)
    assert np.isclose(m["stationarity"], np.linalg.norm(2 * (x - xt) + 0.5 * np.array([1.0, 0.0])))
    assert m["kkt"] == max(m["stationarity"], m["infeasibility"], m["complementarity"])


def test_restarts_rescue_a_pool_stuck_on_a_stale_local_maximum():
    # n = 60, seed 2: the warm-started w's sit on the end of the ball that stopped being the worst
    P = si.robust_multitask_problem(n_samples=60, rng=2)
    plain = si.idb_pd(P, np.zeros(P.dim_x), w0=np.zeros((2, P.dim_x)), maxiter=1500)
    fresh = si.idb_pd(P, np.zeros(P.dim_x), w0=np.zeros((2, P.dim_x)), restarts=1, rng=0, maxiter=1500)
    assert plain.trace["infeasibility"][-1] > 0.1
    assert fresh.trace["infeasibility"][-1] <= 1e-8


# --------------------------------------------------------------------------- bad input

def test_bad_input_raises_value_error(multitask):
    P = multitask
    x0 = np.zeros(P.dim_x)
    with pytest.raises(ValueError, match="x0"):
        si.idb_pd(P, np.zeros(3))
    with pytest.raises(ValueError, match="x0"):
        si.idb_pd(P, np.full(P.dim_x, np.nan))
    with pytest.raises(ValueError, match="eta"):
        si.idb_pd(P, x0, eta=0.0)
    with pytest.raises(ValueError, match="alpha"):
        si.idb_pd(P, x0, alpha=-1.0)
    with pytest.raises(ValueError, match="rho"):
        si.idb_pd(P, x0, rho="max")
    with pytest.raises(ValueError, match="inner_w"):
        si.idb_pd(P, x0, inner_w=0)
    with pytest.raises(ValueError, match="w0"):
        si.idb_pd(P, x0, w0=np.zeros(3))
    with pytest.raises(ValueError, match="y0"):
        si.idb_pd(P, x0, y0=np.ones(5))
    with pytest.raises(ValueError, match="maxiter"):
        si.penalty_gda(P, x0, maxiter=0)
    with pytest.raises(ValueError, match="restarts"):
        si.idb_pd(P, x0, restarts=1)  # a pool of one cannot redraw
    with pytest.raises(ValueError, match="eta_decay"):
        si.idb_pd(P, x0, eta_decay=2.0)
    with pytest.raises(ValueError, match="mu"):
        si.penalty_gda(P, x0, mu=-1.0)
    with pytest.raises(ValueError, match="problem"):
        si.idb_pd("not a problem", x0)
    with pytest.raises(ValueError, match="max_rounds"):
        si.exchange_method(P, x0, max_rounds=0)
    with pytest.raises(ValueError, match="a "):
        si.barrier_direction(np.ones(2), np.ones(3), 0.0)
    with pytest.raises(ValueError, match="c "):
        si.barrier_direction(np.ones(2), np.ones(2), np.inf)
    with pytest.raises(ValueError, match="lam_max"):
        si.barrier_direction(np.ones(2), np.ones(2), 0.0, lam_max=0.0)
    with pytest.raises(ValueError, match="radius"):
        si.project_ball(np.ones(2), -1.0)
    with pytest.raises(ValueError, match="v "):
        si.project_simplex(np.array([[1.0, 2.0]]))
    with pytest.raises(ValueError, match="tau_frac"):
        si.robust_multitask_problem(tau_frac=1.5)
    with pytest.raises(ValueError, match="starts"):
        si.reference_solution(P, np.zeros((2, 3)))
    with pytest.raises(ValueError, match="starts"):
        si.reference_solution(P, np.zeros((0, P.dim_x)))
    with pytest.raises(ValueError, match="record_every"):
        si.idb_pd(P, x0, record_every=0)
    with pytest.raises(ValueError, match="record_every"):
        si.penalty_gda(P, x0, record_every=0)
    with pytest.raises(ValueError, match="restarts"):
        si.penalty_gda(P, x0, restarts=2)
    with pytest.raises(ValueError, match="sigma"):
        si.penalty_gda(P, x0, sigma=np.nan)
    with pytest.raises(ValueError, match="tol"):
        si.exchange_method(P, x0, tol=-1.0)
    with pytest.raises(ValueError, match="ascent_steps"):
        si.exchange_method(P, x0, ascent_steps=0)
    with pytest.raises(ValueError, match="n_starts"):
        si.exchange_method(P, x0, n_starts=-1)
    with pytest.raises(ValueError, match="loss"):
        si.robust_multitask_problem(loss="huber")
    with pytest.raises(ValueError, match="loss_scale"):
        si.robust_multitask_problem(loss="welsch", loss_scale=0.0)
    with pytest.raises(ValueError, match="n_samples"):
        si.robust_multitask_problem(n_samples=1)
    with pytest.raises(ValueError, match="radius"):
        si.robust_multitask_problem(radius=np.inf)
    with pytest.raises(ValueError, match="mu"):
        si.toy_problem(mu=0.0)
    with pytest.raises(ValueError, match="x_target"):
        si.ball_toy(np.array([np.nan, 1.0]))
    with pytest.raises(ValueError, match="X"):
        si.toy_values_on_grid(np.zeros((3, 3)))
    with pytest.raises(ValueError, match="w_grid"):
        si.toy_values_on_grid(np.zeros((3, 2)), np.array([np.nan]))
    with pytest.raises(ValueError, match="x"):
        P.G(np.zeros(3))
    with pytest.raises(ValueError, match="x"):
        P.Phi(np.full(P.dim_x, np.inf))
    with pytest.raises(ValueError, match="lam"):
        P.stationarity(x0, -1.0)
    with pytest.raises(ValueError, match="delta"):
        si.barrier_direction(np.ones(2), np.ones(2), 0.0, delta=-1.0)
    with pytest.raises(ValueError, match="g "):
        si.barrier_direction(np.array([np.nan, 1.0]), np.ones(2), 0.0)
    with pytest.raises(ValueError, match="dim_x"):
        si.SemiInfiniteMinMax(0, 0, 1, *([P.phi] * 10), y0=np.zeros(0), w0=np.zeros(1))
    with pytest.raises(ValueError, match="psi"):
        si.SemiInfiniteMinMax(2, 0, 1, *([P.phi] * 3), None, *([P.phi] * 6), y0=np.zeros(0), w0=np.zeros(1))


