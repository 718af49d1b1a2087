"""Tests for chapter 14 (uniform wrappers: boosting for DR-submodular online optimization)."""
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


def test_boost_constants_closed_form():
    c0, c1 = uw.boost_constants(1.0)
    assert c0 == pytest.approx(1 - np.exp(-1))
    assert c1 == pytest.approx(np.exp(-1))
    for g in (0.3, 1.0, 2.5):
        c0, c1 = uw.boost_constants(g)
        assert c0 == pytest.approx(integrate.quad(lambda z: np.exp(g * (z - 1)), 0, 1)[0])
        assert c1 == pytest.approx(integrate.quad(lambda z: z * np.exp(g * (z - 1)), 0, 1)[0])


def test_sampler_matches_density_ks():
    z = uw.sample_boost_z(1.0, 20000, rng=0)
    c0, _ = uw.boost_constants(1.0)
    cdf = lambda s: (np.exp(1.0 * (s - 1)) - np.exp(-1.0)) / (1.0 * c0)  # noqa: E731
    assert stats.kstest(z, cdf).pvalue > 0.01
    assert integrate.quad(lambda s: uw.boost_density(s, 1.7), 0, 1)[0] == pytest.approx(1.0)


def test_class_checks_of_random_quadratic():
    rng = np.random.default_rng(0)
    F = uw.random_dr_quadratic(4, rng)
    assert F.is_dr_submodular()
    X = _random_points_in_K(4, 500, rng)
    assert np.all(F.jac(X) >= 0)  # monotone on K
    assert F.fun(np.zeros(8)) == 0.0


def test_boosted_gradient_closed_form_vs_quadrature_and_monte_carlo():
    rng = np.random.default_rng(1)
    F = uw.random_dr_quadratic(3, rng)
    x = _random_points_in_K(3, 1, rng)[0]
    for g in (0.5, 1.0, 3.0):
        exact = F.boosted_jac(x, g)
        np.testing.assert_allclose(uw.boosted_gradient(F.jac, x, g, method="quadrature"), exact, rtol=1e-10)
    mc = uw.boosted_gradient(F.jac, x, 1.0, method="monte_carlo", n=100000, rng=2)
    np.testing.assert_allclose(mc, F.boosted_jac(x, 1.0), rtol=1e-2)
    # The surrogate's gradient is the boosted gradient (finite differences).
    e = 1e-6 * np.eye(6)
    fd = np.array([(F.surrogate(x + ei, 1.3) - F.surrogate(x - ei, 1.3)) / 2e-6 for ei in e])
    np.testing.assert_allclose(fd, F.boosted_jac(x, 1.3), rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("gamma", [0.5, 1.0])
def test_key_inequality_on_random_pairs(gamma):
    rng = np.random.default_rng(3)
    F = uw.random_dr_quadratic(3, rng)
    X, Y = _random_points_in_K(3, 10000, rng), _random_points_in_K(3, 10000, rng)
    lhs = np.einsum("ij,ij->i", Y - X, F.boosted_jac(X, gamma))
    rhs = (1 - np.exp(-gamma)) * F.fun(Y) - F.fun(X)
    assert np.all(lhs >= rhs - 1e-10)


def test_plain_gradient_fails_the_key_inequality_on_the_gadget():
    G = uw.make_gadget([0.6])
    x, y = np.array([1.0, 0.0]), np.array([0.0, 1.0])
    # Concavity-type inequality with ratio 1 - 1/e fails for grad F at the bad vertex ...
    assert (y - x) @ G.jac(x) < uw.ALPHA_BOOST * G.fun(y) - G.fun(x)
    # ... and holds for the boosted gradient, with equality here: the gadget is a tight case.
    lhs, rhs = (y - x) @ G.boosted_jac(x, 1.0), uw.ALPHA_BOOST * G.fun(y) - G.fun(x)
    assert lhs >= rhs - 1e-12
    assert lhs == pytest.approx(rhs)


def test_two_point_estimator_is_unbiased_for_quadratics():
    G = uw.random_gadget(3, rng=0)
    x = uw.gadget_start(G, 0.05, rng=1)
    x0 = np.tile(x, (4000, 1))
    rng = np.random.default_rng(5)
    u = rng.standard_normal((4000, 6))
    u /= np.linalg.norm(u, axis=1, keepdims=True)
    diff = G.fun(x0 + 0.05 * u) - G.fun(x0 - 0.05 * u)
    run_grads = 6 / 0.1 * diff[:, None] * u
    np.testing.assert_allclose(run_grads.mean(axis=0), G.jac(x), atol=0.1)


def test_projection_against_scipy_qp():
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


def test_gadget_facts_and_comparator():
    G = uw.make_gadget([0.6, 0.58])
    assert G.fun(G.best_vertex()) == pytest.approx(G.opt)
    assert G.fun(G.bad_vertex()) == pytest.approx(1.18)
    plain = uw.ascent_path(0.6, None, steps=300)
    boosted = uw.ascent_path(0.6, 1.0, steps=300)
    np.testing.assert_allclose(plain[-1], [1.0, 0.0], atol=1e-3)
    np.testing.assert_allclose(boosted[-1], [0.0, 1.0], atol=1e-3)
    assert uw.escape_threshold(1.0) == pytest.approx(1 - np.exp(-1))
    # Exact comparator vs a brute-force grid over the triangles.
    rng = np.random.default_rng(0)
    S = rng.normal(0, 3, 4)
    s = np.linspace(0, 1, 201)
    P = np.array([(i, j) for i in s for j in s if i + j <= 1 + 1e-12])
    brute = sum(np.max(10 * (P[:, 1] + a * P[:, 0] * (1 - P[:, 1])) + P @ S[2 * k:2 * k + 2])
                for k, a in enumerate(G.a))
    assert G.max_linear_tilt(10.0, S) == pytest.approx(brute, abs=1e-9)


def test_online_runs_feasible_deterministic_and_separate():
    G = uw.random_gadget(4, rng=0)
    x0 = uw.gadget_start(G, 0.01, rng=1)
    kw = dict(T=400, eta=0.02, delta=0.01, noise=0.1, directions="frame", rng=3)
    a = uw.online_gradient_ascent(G, x0, method="boosted_zo", **kw)
    b = uw.online_gradient_ascent(G, x0, method="boosted_zo", **kw)
    np.testing.assert_array_equal(a.trace.objective, b.trace.objective)
    p = uw.online_gradient_ascent(G, x0, method="plain_zo", **{**kw, "T": 1500})
    w = uw.online_gradient_ascent(G, x0, method="boosted_zo", **{**kw, "T": 1500})
    assert p.ratio < uw.ALPHA_BOOST < 0.9 < w.ratio
    assert w.trace["regret_per_round"][-1] <= 0 < p.trace["regret_per_round"][-1]
    # Plain ZO iterates stay in K_delta, so its queries x +- delta u stay in K.
    run = uw.simulate_online(G, x0, method="plain_zo", T=50, eta=0.05, delta=0.01, noise=0.0, rng=0)
    assert np.all(run["x"] >= 0.01 - 1e-12)
    bandit = uw.online_gradient_ascent(G, x0, method="boosted_zo", feedback="bandit", T=200, eta=1e-4, rng=0)
    assert np.all(np.isfinite(bandit.trace.objective))


def test_continuous_greedy_reaches_one_minus_one_over_e():
    G = uw.random_gadget(5, rng=1)
    res = uw.continuous_greedy(G, 50)
    assert res.fun >= uw.ALPHA_BOOST * G.opt
    F = uw.random_dr_quadratic(3, rng=2)
    assert uw.continuous_greedy(F, 50).fun > 0


def test_bad_inputs():
    G = uw.make_gadget([0.6])
    x0 = uw.gadget_start(G, 0.01, rng=0)
    with pytest.raises(ValueError, match="gamma"):
        uw.boost_constants(0.0)
    with pytest.raises(ValueError, match="gamma"):
        uw.sample_boost_z(-1.0, 3)
    with pytest.raises(ValueError, match="a must"):
        uw.make_gadget([1.2])
    with pytest.raises(ValueError, match="H"):
        uw.DRQuadratic(np.ones(2), np.ones((3, 3)))
    with pytest.raises(ValueError, match="h"):
        uw.DRQuadratic([np.nan, 1.0], np.zeros((2, 2)))
    with pytest.raises(ValueError, match="x must"):
        uw.project_triangles(np.ones(3))
    with pytest.raises(ValueError, match="delta"):
        uw.project_triangles(np.ones(2), 0.5)
    with pytest.raises(ValueError, match="x0"):
        uw.online_gradient_ascent(G, np.ones(3))
    with pytest.raises(ValueError, match="x0"):
        uw.online_gradient_ascent(G, np.array([1.0, 0.0]))  # not in K_delta
    with pytest.raises(ValueError, match="eta"):
        uw.online_gradient_ascent(G, x0, eta=-1.0)
    with pytest.raises(ValueError, match="method"):
        uw.online_gradient_ascent(G, x0, method="newton")
    with pytest.raises(ValueError, match="noise"):
        uw.online_gradient_ascent(G, x0, noise=np.inf)
    with pytest.raises(ValueError, match="directions"):
        uw.online_gradient_ascent(G, x0, directions=0)
    with pytest.raises(ValueError, match="bandit"):
        uw.online_gradient_ascent(G, x0, method="boosted_fo", feedback="bandit")
    with pytest.raises(ValueError, match="problem"):
        uw.online_gradient_ascent(uw.random_dr_quadratic(1, rng=0), np.zeros(2))
    with pytest.raises(ValueError, match="alpha"):
        uw.alpha_regret({"reward": np.zeros((1, 2)), "best": np.zeros((1, 2))}, 1.5)
    with pytest.raises(ValueError, match="eta"):
        uw.regret_explorer_figure(eta=0.3)
    with pytest.raises(ValueError, match="gamma"):
        uw.gadget_explorer_figure(gamma=7.0)
