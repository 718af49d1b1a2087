"""Chapter 29's core: finite mean-field games, exploitability, RMD, APP and the baselines."""
import itertools

import numpy as np
import pytest
from scipy.optimize import minimize

from optbook.decisions import mean_field as mf


def tiny_game(seed=0, congestion=0.5):
    """|S| = |A| = 2, H = 2, random transitions, rewards and coupling."""
    rng = np.random.default_rng(seed)
    P = rng.dirichlet(np.ones(2), size=(2, 2))
    C = rng.normal(size=(2, 2))
    return mf.FiniteMFG(P, np.array([0.6, 0.4]), rng.normal(size=(2, 2, 2)), coupling=C, congestion=congestion)


@pytest.mark.parametrize("game", [mf.rps_game(), mf.beach_bar(), mf.beach_bar(variant="skew"), tiny_game()])
def test_mean_field_conserves_mass_and_stays_non_negative(game):
    pi = mf.random_policy(game, 3, batch=4)
    mu = mf.mean_field(game, pi)
    assert mu.shape == (4, game.horizon, game.num_states)
    assert np.all(mu >= 0) and np.allclose(mu.sum(-1), 1.0, atol=1e-12)
    assert np.allclose(mu[:, 0], game.mu0)


def test_exploitability_is_zero_at_the_rps_equilibrium_and_positive_elsewhere():
    g = mf.rps_game()
    eq = mf.rps_equilibrium()
    M = mf.RPS_B - mf.RPS_B.T
    assert np.allclose(M @ eq, 0) and np.all(eq > 0) and np.isclose(eq.sum(), 1)
    pi = mf.uniform_policy(g)
    pi[0, 0] = eq
    assert mf.exploitability(g, pi) < 1e-14
    others = mf.random_policy(g, 0, batch=50)
    e = mf.exploitability(g, others)
    assert np.all(e >= 0) and np.all(e > 1e-6)
    # a pure strategy is beaten by its counter: exploitability = max_x (M e_a)_x
    pi[0, 0] = [1.0, 0.0, 0.0]
    assert mf.exploitability(g, pi) == pytest.approx(np.max(M[:, 0]))


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_best_response_matches_brute_force_over_deterministic_policies(seed):
    g = tiny_game(seed)
    pi = mf.random_policy(g, seed)
    mu = mf.mean_field(g, pi)
    br, Vstar = mf.best_response(g, mu)
    best = -np.inf
    for choice in itertools.product(range(2), repeat=4):  # (h, x) -> a
        det = np.zeros(g.shape)
        det[[0, 0, 1, 1], [0, 1, 0, 1], list(choice)] = 1.0
        _, V = mf.evaluate(g, det, mu)
        best = max(best, V[0] @ g.mu0)
    assert Vstar[0] @ g.mu0 == pytest.approx(best, abs=1e-12)
    _, Vbr = mf.evaluate(g, br, mu)
    assert Vbr[0] @ g.mu0 == pytest.approx(best, abs=1e-12)
    assert mf.exploitability(g, pi) == pytest.approx(best - mf.evaluate(g, pi, mu)[1][0] @ g.mu0, abs=1e-12)


@pytest.mark.parametrize("seed", range(4))
def test_rmd_closed_form_is_the_numerical_maximiser(seed):
    rng = np.random.default_rng(seed)
    q, pi, sigma = rng.normal(size=4) * 2, rng.dirichlet(np.ones(4)), rng.dirichlet(np.ones(4))
    eta, lam = 0.7, 0.4

    def neg(z):
        p = np.exp(z - z.max())
        p /= p.sum()
        return -(eta * q @ p - eta * lam * p @ np.log(p / sigma) - p @ np.log(p / pi))

    z = minimize(neg, np.zeros(4), method="BFGS", options=dict(gtol=1e-10)).x
    p_num = np.exp(z - z.max()) / np.exp(z - z.max()).sum()
    assert np.allclose(mf.rmd_update(q, pi, sigma, lam, eta), p_num, atol=1e-5)


def test_rmd_with_zero_regularisation_is_mirror_descent():
    g = mf.beach_bar(size=7, horizon=4)
    pi, sigma = mf.random_policy(g, 0), mf.random_policy(g, 1)
    Q, _ = mf.evaluate(g, pi, mf.mean_field(g, pi))
    md = pi * np.exp(0.3 * Q)
    md /= md.sum(-1, keepdims=True)
    assert np.allclose(mf.rmd_step(g, pi, sigma, 0.0, 0.3), md, atol=1e-13)


def test_app_with_one_inner_step_is_mirror_descent_with_a_smaller_step():
    g = mf.rps_game()
    pi0 = mf.random_policy(g, 5, batch=2)
    eta, lam = 0.2, 0.5
    a = mf.app(g, pi0, eta, lam, 1, 200)
    m = mf.mirror_descent(g, pi0, eta / (1 + eta * lam), 200)
    assert np.allclose(a.policy, m.policy, atol=1e-12)
    assert np.allclose(a.exploitability, m.exploitability, atol=1e-12)


def test_constant_q_and_reference_at_the_policy_is_a_fixed_point():
    rng = np.random.default_rng(0)
    pi = rng.dirichlet(np.ones(5), size=3)
    q = np.repeat(rng.normal(size=(3, 1)), 5, axis=1)
    assert np.allclose(mf.rmd_update(q, pi, pi, 0.8, 0.3), pi, atol=1e-14)


def test_rmd_fixed_point_has_zero_regularised_exploitability():
    g = mf.rps_game()
    sigma = mf.uniform_policy(g)
    run = mf.mirror_descent(g, mf.random_policy(g, 0), 0.2, 3000, lam=0.5)
    assert mf.regularized_exploitability(g, run.policy, 0.5, sigma) < 1e-10
    assert mf.regularized_exploitability(g, mf.random_policy(g, 1), 0.5, sigma) > 1e-3
    # ... but it is not the unregularised equilibrium: the bias of a fixed reference
    assert run.final > 1e-3


@pytest.mark.parametrize("game, strict", [(mf.rps_game(), False), (mf.beach_bar(variant="skew"), False),
                                          (mf.beach_bar(), True)])
def test_monotonicity(game, strict):
    rng = np.random.default_rng(0)
    for _ in range(20):
        mu = rng.dirichlet(np.ones(game.num_states), size=game.horizon)
        nu = rng.dirichlet(np.ones(game.num_states), size=game.horizon)
        s = game.monotonicity(mu, nu)
        assert s < -1e-6 if strict else abs(s) <= 1e-12


def test_batched_hyperparameters_equal_separate_runs():
    g = mf.rps_game()
    pi0 = mf.random_policy(g, 2, batch=3)
    etas, lams, taus = np.array([0.05, 0.1, 0.2]), np.array([0.5, 1.0, 0.3]), np.array([5, 20, 1])
    batch = mf.app(g, pi0, etas, lams, taus, 300, record_every=50)
    for i in range(3):
        one = mf.app(g, pi0[i], float(etas[i]), float(lams[i]), int(taus[i]), 300, record_every=50)
        assert np.allclose(batch.exploitability[:, i], one.exploitability, atol=1e-13)
    assert list(batch.iterations) == [0, 50, 100, 150, 200, 250, 300]


def test_app_converges_in_the_last_iterate_where_md_cycles():
    g = mf.rps_game()
    pi0 = mf.random_policy(g, 0, batch=3)
    assert np.all(mf.app(g, pi0, 0.1, 1.0, 20, 1500, record_every=1500).final < 1e-8)
    assert np.all(mf.mirror_descent(g, pi0, 0.1, 1500, record_every=1500).final > 0.1)


def test_fictitious_play_converges_only_on_average():
    g = mf.rps_game()
    run = mf.fictitious_play(g, mf.random_policy(g, 0), 2000, record_every=100)
    assert run.averaged_exploitability[-1] < 0.1 * run.averaged_exploitability[0]
    assert run.final > 1.0  # the last iterate is a pure best response
    mu = mf.mean_field(g, run.averaged_policy)
    assert mf.exploitability(g, run.averaged_policy) == pytest.approx(run.averaged_exploitability[-1])
    assert np.allclose(mu[1], run.averaged_policy[0, 0])


def test_strict_beach_bar_every_method_reaches_the_same_equilibrium():
    g = mf.beach_bar(size=7, horizon=4)
    pi0 = mf.random_policy(g, 0)
    md = mf.mirror_descent(g, pi0, 1.0, 1500)
    ap = mf.app(g, pi0, 1.0, 0.1, 10, 1500)
    fp = mf.fictitious_play(g, pi0, 1500, record_every=1500)
    assert md.final < 1e-10 and ap.final < 1e-10
    assert np.allclose(md.policy, ap.policy, atol=1e-4)
    assert fp.averaged_exploitability[-1] < 1e-2  # averaged FP is slow (order 1/t) but gets there
    assert np.allclose(mf.mean_field(g, fp.averaged_policy), mf.mean_field(g, md.policy), atol=0.05)


def test_runs_are_deterministic_and_do_not_touch_global_rng():
    g = mf.rps_game()
    state = np.random.get_state()
    a = mf.app(g, mf.random_policy(g, 7), 0.1, 0.5, 10, 100).exploitability
    b = mf.app(g, mf.random_policy(g, 7), 0.1, 0.5, 10, 100).exploitability
    assert np.array_equal(a, b)
    assert np.array_equal(np.random.get_state()[1], state[1])


G = mf.rps_game()
PI = mf.uniform_policy(G)


@pytest.mark.parametrize("call, name", [
    (lambda: mf.app(G, PI, 0.0, 0.5, 10, 10), "eta"),
    (lambda: mf.app(G, PI, 0.1, -1.0, 10, 10), "lam"),
    (lambda: mf.app(G, PI, 0.1, 0.5, 0, 10), "tau"),
    (lambda: mf.app(G, PI, 0.1, 0.5, 10, 0), "iters"),
    (lambda: mf.app(G, PI, np.array([0.1, 0.2]), 0.5, 10, 10), "eta"),
    (lambda: mf.mirror_descent(G, PI, float("nan"), 10), "eta"),
    (lambda: mf.mirror_descent(G, PI[:1], 0.1, 10), "pi0"),
    (lambda: mf.mirror_descent(G, PI * 2, 0.1, 10), "pi0"),
    (lambda: mf.mirror_descent(G, np.full(G.shape, np.nan), 0.1, 10), "pi0"),
    (lambda: mf.mirror_descent(G, PI, 0.1, 10, record_every=0), "record_every"),
    (lambda: mf.damped_best_response(G, PI, 1.5, 10), "beta"),
    (lambda: mf.fictitious_play(G, PI, -1), "iters"),
    (lambda: mf.run_method(G, "SGD", PI, 10), "method"),
    (lambda: mf.exploitability(G, np.zeros((0, 2, 3, 3))), "pi"),
    (lambda: mf.rmd_step(G, PI, PI[:1], 0.5, 0.1), "sigma"),
    (lambda: mf.regularized_exploitability(G, PI, 0.0, PI), "lam"),
    (lambda: mf.evaluate(G, PI, mf.mean_field(G, PI), lam=0.5), "sigma"),
    (lambda: mf.best_response(G, np.zeros((3, 3))), "mu"),
    (lambda: mf.evaluate(G, PI, np.full((2, 3), np.nan)), "mu"),
    (lambda: mf.FiniteMFG(np.ones((2, 2, 2)), [0.5, 0.5], np.zeros((2, 2, 2))), "transition"),
    (lambda: mf.FiniteMFG(np.full((2, 2, 2), 0.5), [0.7, 0.7], np.zeros((2, 2, 2))), "mu0"),
    (lambda: mf.FiniteMFG(np.full((2, 2, 2), 0.5), [0.5, 0.5], np.zeros((2, 3, 2))), "base"),
    (lambda: mf.FiniteMFG(np.full((2, 2, 2), 0.5), [0.5, 0.5], np.zeros((2, 2, 2)), congestion=-1), "congestion"),
    (lambda: mf.beach_bar(variant="chaos"), "variant"),
    (lambda: mf.beach_bar(noise=0.6), "noise"),
    (lambda: mf.beach_bar(size=2), "size"),
    (lambda: mf.rps_game(scale=0), "scale"),
    (lambda: mf.random_policy(G, -1), "rng"),
])
def test_bad_input_names_the_argument(call, name):
    with pytest.raises(ValueError, match=name):
        call()


@pytest.mark.parametrize("variant", ["strict", "skew"])
def test_regularised_value_equals_the_forward_sum_of_rewards_and_kl_terms(variant):
    # V_0 . mu_0 from backward induction against the forward sum over the flow of
    # r_h(x, a, mu_h) - lam log(pi / sigma): catches a Q that drops the future steps' KL terms
    g = mf.beach_bar(size=5, horizon=4, variant=variant)
    pi, sigma, lam = mf.random_policy(g, 3), mf.random_policy(g, 4), 0.7
    mu = mf.mean_field(g, pi)
    _, V = mf.evaluate(g, pi, mu, lam, sigma)
    per_step = g.reward(mu) - lam * (np.log(pi) - np.log(sigma))
    forward = float(np.sum(mu[..., None] * pi * per_step))
    assert V[0] @ g.mu0 == pytest.approx(forward, rel=1e-12, abs=1e-12)
