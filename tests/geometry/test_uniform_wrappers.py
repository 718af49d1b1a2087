"""Tests for chapter 14's methods: the boosting wrapper W^{M0}, zeroth-order OGA and ZO-FTRL."""
import subprocess
import sys

import numpy as np
import pytest
from scipy import integrate, stats
from scipy.optimize import minimize

from optbook.geometry import uniform_wrappers as uw


def _random_points_in_K(m, n, rng):
    """n points of the product of m triangles (uniform in each triangle)."""
    u = rng.random((n, m, 2))
    flip = u.sum(axis=-1) > 1
    u[flip] = 1 - u[flip]
    return u.reshape(n, 2 * m)


# --------------------------------------------------------------------------- the boosting law


def test_boost_constants_closed_form_and_small_gamma():
    c0, c1 = uw.boost_constants(1.0)
    assert c0 == pytest.approx(1 - np.exp(-1)) and c1 == pytest.approx(np.exp(-1))
    for g in (1e-4, 0.3, 1.0, 2.5, 40.0):
        c0, c1 = uw.boost_constants(g)
        assert c0 == pytest.approx(integrate.quad(lambda z: np.exp(g * (z - 1)), 0, 1)[0], rel=1e-10)
        assert c1 == pytest.approx(integrate.quad(lambda z: z * np.exp(g * (z - 1)), 0, 1)[0], rel=1e-10)
    # Without the series, (g + expm1(-g))/g^2 loses every digit here; the limit is 1/2.
    assert uw.boost_constants(1e-9)[1] == pytest.approx(0.5, rel=1e-8)


def test_sampler_matches_density_and_is_sound_at_the_extremes():
    for g in (0.3, 1.0, 3.0):
        z = uw.sample_boost_z(g, 20000, rng=0)
        c0, _ = uw.boost_constants(g)
        assert stats.kstest(z, lambda s: (np.exp(g * (s - 1)) - np.exp(-g)) / (g * c0)).pvalue > 0.01
        assert integrate.quad(lambda s: uw.boost_density(s, g), 0, 1)[0] == pytest.approx(1.0)
    # gamma -> 0: the law tends to the uniform one; gamma large: a point mass at 1.
    assert stats.kstest(uw.sample_boost_z(1e-12, 20000, rng=1), "uniform").pvalue > 0.01
    z = uw.sample_boost_z(800.0, 1000, rng=2)
    assert np.all(np.isfinite(z)) and np.all(z > 0.95) and np.all(z <= 1)
    assert np.all(uw.sample_boost_z(1.0, 10000, rng=3) > 0)  # the wrapper divides by z


def test_wrapped_gradient_closed_form_quadrature_monte_carlo_and_fd():
    rng = np.random.default_rng(1)
    F = uw.random_dr_quadratic(3, rng)
    x = _random_points_in_K(3, 1, rng)[0]
    for g in (0.5, 1.0, 3.0):
        np.testing.assert_allclose(uw.boosted_gradient(F.jac, x, g), F.surrogate_jac(x, g), rtol=1e-10)
    mc = uw.boosted_gradient(F.jac, x, 1.0, method="monte_carlo", n=100000, rng=2)
    np.testing.assert_allclose(mc, F.surrogate_jac(x, 1.0), rtol=1e-2)
    # The surrogate's gradient is the wrapped gradient (finite differences), and the surrogate is
    # E_z[f(z x)/z] (quadrature over the boosting law).
    e = 1e-6 * np.eye(6)
    fd = np.array([(F.surrogate(x + ei, 1.3) - F.surrogate(x - ei, 1.3)) / 2e-6 for ei in e])
    np.testing.assert_allclose(fd, F.surrogate_jac(x, 1.3), rtol=1e-6, atol=1e-8)
    direct = integrate.quad(lambda z: uw.boost_density(z, 1.3) * F.fun(z * x) / z, 0, 1)[0]
    assert F.surrogate(x, 1.3) == pytest.approx(direct, rel=1e-8)


def test_class_checks_of_random_quadratic():
    rng = np.random.default_rng(0)
    F = uw.random_dr_quadratic(4, rng)
    assert F.is_dr_submodular()
    assert np.all(F.jac(_random_points_in_K(4, 500, rng)) >= 0)  # monotone on K
    assert F.fun(np.zeros(8)) == 0.0


@pytest.mark.parametrize("gamma", [0.5, 1.0])
def test_lemma_2_on_random_pairs(gamma):
    """(1 - e^-gamma) f(y) - f(x) <= (1 - e^-gamma)/gamma <grad F(x), y - x>."""
    rng = np.random.default_rng(3)
    F = uw.random_dr_quadratic(3, rng)
    X, Y = _random_points_in_K(3, 10000, rng), _random_points_in_K(3, 10000, rng)
    alpha = -np.expm1(-gamma)
    lhs = alpha * F.fun(Y) - F.fun(X)
    rhs = alpha / gamma * np.einsum("ij,ij->i", Y - X, F.surrogate_jac(X, gamma))
    assert np.all(lhs <= rhs + 1e-10)


def test_gadget_is_tight_and_plain_gradient_fails_the_inequality():
    G = uw.make_gadget([0.6])
    x, y = np.array([1.0, 0.0]), np.array([0.0, 1.0])
    target = uw.ALPHA_BOOST * G.fun(y) - G.fun(x)
    assert (y - x) @ G.jac(x) < target  # concavity-type inequality fails for grad f ...
    c0, _ = uw.boost_constants(1.0)
    assert c0 * (y - x) @ G.surrogate_jac(x) == pytest.approx(target, abs=1e-15)  # ... tight for grad F
    assert G.fun(G.best_vertex()) == G.opt == 1.0 and G.fun(G.bad_vertex()) == pytest.approx(0.6)
    np.testing.assert_allclose(G.fun(np.ones((3, 2)) * 0.3), uw.DRQuadratic(G.h, G.H).fun(np.ones((3, 2)) * 0.3))


# --------------------------------------------------------------------------- estimators


def test_wrapped_estimates_are_unbiased_for_the_wrapped_gradient():
    """Two-point and one-point spherical estimates through the wrapper (query z y, answer y/z)
    average to grad F = E_z[grad f(z x)] (exact for quadratics, whatever delta)."""
    G = uw.make_gadget([0.55, 0.6])
    x = np.array([0.5, 0.3, 0.2, 0.6])
    n, rng = 400000, np.random.default_rng(5)
    u = rng.standard_normal((n, 4))
    u /= np.linalg.norm(u, axis=1, keepdims=True)
    z = uw.sample_boost_z(1.0, (n, 1), rng)
    d, delta = 4, 0.05
    two = d / (2 * delta) * ((G.fun(z * (x + delta * u)) - G.fun(z * (x - delta * u))) / z[:, 0])[:, None] * u
    np.testing.assert_allclose(two.mean(axis=0), G.surrogate_jac(x), atol=0.01)
    one = d / delta * (G.fun(z * (x + delta * u)) / z[:, 0])[:, None] * u
    np.testing.assert_allclose(one.mean(axis=0), G.surrogate_jac(x), atol=0.15)


def test_dikin_estimate_is_unbiased_and_queries_stay_inside():
    G = uw.make_gadget([0.6])
    x = np.array([0.05, 0.9])  # near the face x1 + x2 = 1
    root, inv_root = uw.dikin_factors(x)
    n, rng = 400000, np.random.default_rng(6)
    v = rng.standard_normal((n, 2))
    v /= np.linalg.norm(v, axis=1, keepdims=True)
    y = x + 0.9 * v @ inv_root[0].T
    assert np.all(y > 0) and np.all(y.sum(axis=1) < 1)  # the Dikin ellipsoid lies in K
    o = (2 / 0.9) * G.fun(y)[:, None] * (v @ root[0].T)
    se = o.std(axis=0) / np.sqrt(n)
    assert np.all(np.abs(o.mean(axis=0) - G.jac(x)) < 5 * se)


def test_dikin_factors_are_square_roots_even_near_a_face():
    for x in (np.array([0.2, 0.3]), np.array([1e-9, 0.5]), np.array([0.5, 0.5 - 1e-9])):
        root, inv_root = uw.dikin_factors(x)
        s = 1 - x.sum()
        H = np.diag(1 / x ** 2) + np.ones((2, 2)) / s ** 2
        np.testing.assert_allclose(root[0] @ root[0], H, rtol=1e-9)
        np.testing.assert_allclose(inv_root[0], np.linalg.inv(root[0]), rtol=1e-8)


def test_barrier_leader_against_scipy_and_at_the_extremes():
    rng = np.random.default_rng(7)

    def objective(y, th):
        if y.min() <= 0 or y.sum() >= 1:
            return np.inf
        return -th @ y - np.log(y).sum() - np.log(1 - y.sum())

    for _ in range(10):
        th = rng.normal(0, 5, 2)
        x = uw.barrier_leader(th)
        ref = minimize(objective, np.array([1 / 3, 1 / 3]), args=(th,), method="Nelder-Mead",
                       options={"xatol": 1e-12, "fatol": 1e-14, "maxiter": 5000})
        np.testing.assert_allclose(x, ref.x, atol=1e-6)
    # Stationarity to the last digits, and interior even for huge theta; batches of blocks.
    for th in ([1e12, -3.0], [-1e12, -1e12 + 1.0], [5e15, 5e15], [0.0, 0.0]):
        x = uw.barrier_leader(np.array(th))
        s = 1 - x.sum()
        assert np.all(x > 0) and s > 0
    x = uw.barrier_leader(np.array([[0.3, -1.0, 50.0, 49.0]]))
    assert x.shape == (1, 4)
    x1, x2, s = uw._leader(np.array([50.0]), np.array([49.0]))
    np.testing.assert_allclose([-50 - 1 / x1[0] + 1 / s[0], -49 - 1 / x2[0] + 1 / s[0]], 0, atol=1e-9)
    np.testing.assert_allclose(x1 + x2 + s, 1.0, rtol=1e-14)


def test_newton_steps_of_the_leader_suffice():
    rng = np.random.default_rng(8)
    t1, t2 = (rng.standard_normal((200, 3)) * 10 ** rng.uniform(-3, 12, (200, 3)) for _ in range(2))
    a = uw._leader(t1, t2)
    steps = uw._LEADER_STEPS
    try:
        uw._LEADER_STEPS = 100
        b = uw._leader(t1, t2)
    finally:
        uw._LEADER_STEPS = steps
    for u, v in zip(a, b):
        np.testing.assert_allclose(u, v, rtol=1e-13)


def test_projection_against_scipy_qp_and_huge_entries():
    rng = np.random.default_rng(4)
    for delta in (0.0, 0.05):
        for _ in range(20):
            v = rng.normal(0.4, 1.0, 4)
            p = uw.project_triangles(v, delta)
            cons = [{"type": "ineq", "fun": lambda x: x - delta},
                    {"type": "ineq", "fun": lambda x: 1 - np.sqrt(2) * delta - x[:2].sum()},
                    {"type": "ineq", "fun": lambda x: 1 - np.sqrt(2) * delta - x[2:].sum()}]
            ref = minimize(lambda x: 0.5 * np.sum((x - v) ** 2), np.full(4, 0.1), jac=lambda x: x - v,
                           constraints=cons, method="SLSQP", options={"ftol": 1e-12})
            np.testing.assert_allclose(p, ref.x, atol=1e-6)
    np.testing.assert_allclose(uw.project_triangles([1e16, 1e16]), [0.5, 0.5])
    np.testing.assert_allclose(uw.project_triangles([1e16, 1e16 - 4.0]), [1.0, 0.0])  # x1 - x2 = 4 > 1
    np.testing.assert_allclose(uw.project_triangles([1e16, -1e16]), [1.0, 0.0])
    np.testing.assert_allclose(uw.project_triangles([-1e16, 3e16, 0.2, 0.3]), [0.0, 1.0, 0.2, 0.3])


# --------------------------------------------------------------------------- online runs


def test_oga_runs_are_deterministic_feasible_and_reduce_to_plain():
    G = uw.make_gadget([0.58, 0.6])
    x0 = uw.project_triangles(np.tile(G.bad_vertex(), (3, 1)) + 1e-3, 0.01)
    kw = dict(T=300, eta=0.02, delta=0.01, noise=0.1)
    a = uw.zo_oga_runs(G, x0, wrapper=uw.BoostingWrapper(1.0), rng=3, **kw)
    b = uw.zo_oga_runs(G, x0, wrapper=uw.BoostingWrapper(1.0), rng=3, **kw)
    np.testing.assert_array_equal(a["value"], b["value"])
    # Iterates stay in K_delta, so every query x +- delta u (and z times it) lies in K.
    assert np.all(a["x"] >= 0.01 - 1e-12) and np.all(a["x"].reshape(3, 2, 2).sum(-1) <= 1 - np.sqrt(2) * 0.01 + 1e-12)
    # Reduction: as gamma grows the law of z collapses on 1 and W(A) becomes A, draw for draw.
    plain = uw.zo_oga_runs(G, x0, wrapper=uw.IdentityWrapper(), rng=3, **kw)
    near = uw.zo_oga_runs(G, x0, wrapper=uw.BoostingWrapper(1e9), rng=3, **kw)
    np.testing.assert_allclose(near["value"], plain["value"], atol=1e-6)
    for est in ("one_point", "first_order"):
        r = uw.zo_oga_runs(G, x0, estimator=est, wrapper=uw.BoostingWrapper(1.0), rng=0, **kw)
        assert np.all(np.isfinite(r["value"]))
    bandit = uw.zo_oga_runs(G, x0, estimator="one_point", feedback="bandit", block=5, rng=0,
                            **{**kw, "eta": 1e-4})
    assert np.all(np.isfinite(bandit["value"]))


def test_first_order_wrapped_ascent_escapes_the_trap_and_plain_does_not():
    G = uw.make_gadget([0.6])
    x0 = uw.project_triangles(G.bad_vertex() + 1e-3, 0.0)[None]
    kw = dict(T=2000, eta=0.05, delta=0.0, noise=0.0, estimator="first_order", rng=0)
    w = uw.zo_oga_runs(G, x0, wrapper=uw.BoostingWrapper(1.0), **kw)
    p = uw.zo_oga_runs(G, x0, wrapper=uw.IdentityWrapper(), **kw)
    assert w["value"][0, -1] > 0.95 > 0.61 > p["value"][0, -1]


def test_ftrl_runs_are_deterministic_interior_and_learn():
    G = uw.make_gadget([0.6])
    kw = dict(runs=4, T=3000, eta=0.03, delta=0.5, noise=0.1, wrapper=uw.BoostingWrapper(1.0))
    a = uw.zo_ftrl_runs(G, rng=1, **kw)
    np.testing.assert_array_equal(a["value"], uw.zo_ftrl_runs(G, rng=1, **kw)["value"])
    assert np.all(a["x"] > 0) and np.all(a["x"].sum(axis=1) < 1)
    assert a["value"][:, 0] == pytest.approx(G.fun(np.array([1 / 3, 1 / 3])))  # the analytic centre
    assert np.median(a["value"][:, -500:]) > a["value"][0, 0] + 0.2


def test_alpha_regret_and_online_ascent_result():
    value = np.array([[0.5, 0.7, 1.0]])
    np.testing.assert_allclose(uw.alpha_regret(value, 1.0, 0.5), [[0.0, -0.2, -0.7]])
    G = uw.make_gadget([0.6])
    x0 = uw.project_triangles(G.bad_vertex(), 1e-3)
    res = uw.online_ascent(G, x0, T=400, eta=0.05, delta=1e-3, rng=0)
    assert res.nit == 400 and len(res.trace) == 400 and 0 < res.ratio <= 1
    assert np.isfinite(res.trace["alpha_regret_per_round"]).all()


def test_continuous_greedy_reaches_one_minus_one_over_e():
    G = uw.make_gadget([0.55, 0.6, 0.62])
    assert uw.continuous_greedy(G, 50).fun >= uw.ALPHA_BOOST * G.opt
    assert uw.continuous_greedy(uw.random_dr_quadratic(3, rng=2), 50).fun > 0


def test_methods_module_does_not_pull_plotly():
    out = subprocess.run([sys.executable, "-c", "import sys, optbook.geometry.uniform_wrappers; "
                          "print('plotly' in sys.modules)"], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


# --------------------------------------------------------------------------- bad input


def test_bad_inputs_name_the_argument():
    G = uw.make_gadget([0.6])
    x0 = uw.project_triangles(G.bad_vertex(), 0.01)
    cases = [
        (lambda: uw.boost_constants(0.0), "gamma"), (lambda: uw.boost_constants(np.nan), "gamma"),
        (lambda: uw.sample_boost_z(-1.0, 3), "gamma"), (lambda: uw.boost_density([np.inf], 1.0), "z"),
        (lambda: uw.boosted_gradient(G.jac, [np.nan, 0.0]), "x"),
        (lambda: uw.boosted_gradient(G.jac, [0.1, 0.2], n=0), "n"),
        (lambda: uw.boosted_gradient(G.jac, [0.1, 0.2], method="simpson"), "method"),
        (lambda: uw.boosted_gradient(lambda x: np.ones(3), [0.1, 0.2]), "jac"),
        (lambda: uw.make_gadget([1.2]), "a"), (lambda: uw.make_gadget([]), "a"),
        (lambda: uw.DRQuadratic(np.ones(2), np.ones((3, 3))), "H"),
        (lambda: uw.DRQuadratic([np.nan, 1.0], np.zeros((2, 2))), "h"),
        (lambda: uw.DRQuadratic([1.0, 1.0], [[0.0, 1.0], [0.0, 0.0]]), "H"),
        (lambda: G.fun(np.ones(3)), "x"), (lambda: G.fun([np.nan, 0.0]), "x"),
        (lambda: G.surrogate_jac([0.1, np.inf]), "x"), (lambda: uw.random_dr_quadratic(0), "m"),
        (lambda: uw.sample_boost_z(1.0, -2), "size"), (lambda: uw.sample_boost_z(1.0, 2.5), "size"),
        (lambda: uw.project_triangles(np.ones(3)), "x"), (lambda: uw.project_triangles([np.nan, 0.0]), "x"),
        (lambda: uw.project_triangles(np.ones(2), 0.5), "delta"),
        (lambda: uw.barrier_leader([np.inf, 0.0]), "theta"), (lambda: uw.dikin_factors([0.7, 0.4]), "x"),
        (lambda: uw.zo_oga_runs(G, np.ones(3), T=5, eta=0.1, delta=0.01), "x0"),
        (lambda: uw.zo_oga_runs(G, [1.0, 0.0], T=5, eta=0.1, delta=0.01), "x0"),
        (lambda: uw.zo_oga_runs(G, x0, T=0, eta=0.1, delta=0.01), "T"),
        (lambda: uw.zo_oga_runs(G, x0, T=5, eta=-1.0, delta=0.01), "eta"),
        (lambda: uw.zo_oga_runs(G, x0, T=5, eta=[0.1, 0.2], delta=0.01), "eta"),
        (lambda: uw.zo_oga_runs(G, x0, T=5, eta=0.1, delta=0.5), "delta"),
        (lambda: uw.zo_oga_runs(G, x0, T=5, eta=0.1, delta=0.01, noise=np.inf), "noise"),
        (lambda: uw.zo_oga_runs(G, x0, T=5, eta=0.1, delta=0.01, estimator="newton"), "estimator"),
        (lambda: uw.zo_oga_runs(G, x0, T=5, eta=0.1, delta=0.01, feedback="bandit"), "bandit"),
        (lambda: uw.zo_oga_runs(G, x0, T=5, eta=0.1, delta=0.01, wrapper=None), "wrapper"),
        (lambda: uw.zo_oga_runs(uw.DRQuadratic([1.0], [[0.0]]), [0.1], T=5, eta=0.1, delta=0.01), "problem"),
        (lambda: uw.zo_ftrl_runs(G, runs=0, T=5, eta=0.1, delta=0.5), "runs"),
        (lambda: uw.zo_ftrl_runs(G, runs=1, T=5, eta=0.1, delta=1.5), "delta"),
        (lambda: uw.alpha_regret(np.zeros((1, 2)), 1.0, 1.5), "alpha"),
        (lambda: uw.alpha_regret(np.zeros(3), 1.0), "value"),
        (lambda: uw.alpha_regret(np.zeros((1, 2)), 0.0), "opt"),
        (lambda: uw.online_ascent(uw.random_dr_quadratic(1, rng=0), np.zeros(2)), "problem"),
        (lambda: uw.online_ascent(G, x0, eta=0.0), "eta"),
        (lambda: uw.continuous_greedy(G, 0), "n_steps"),
        (lambda: uw.BoostingWrapper(-1.0), "gamma"),
    ]
    for call, name in cases:
        with pytest.raises(ValueError, match=name):
            call()
