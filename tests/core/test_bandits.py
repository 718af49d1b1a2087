"""The shared bandit core (optbook.core.bandits): UCB1, epsilon-greedy, discounted and
sliding-window UCB, and the piecewise-stationary test bandit."""
import math

import numpy as np
import pytest

from optbook.core import bandits

def _reference_ucb1(means_seq, rewards, c):
    """A from-scratch UCB1 on a fixed reward table (rewards[t, a]), lowest-index ties."""
    K = rewards.shape[1]
    n, tot, arms = np.zeros(K), np.zeros(K), []
    for t in range(rewards.shape[0]):
        if (n == 0).any():
            a = int(np.flatnonzero(n == 0)[0])
        else:
            a = int(np.argmax(tot / n + c * np.sqrt(2 * math.log(t) / n)))
        arms.append(a)
        n[a] += 1
        tot[a] += rewards[t, a]
    return arms


@pytest.mark.parametrize("c", [0.1, 0.5])
def test_ducb_with_gamma_one_is_ucb1(c):
    rng = np.random.default_rng(0)
    rewards = rng.normal([0.3, 0.5, 0.45, 0.2], 0.2, size=(800, 4))
    d, u = bandits.DiscountedUCB(4, gamma=1.0, c=c, eps0=0.0), bandits.UCB1(4, c=c)
    seq_d, seq_u = [], []
    for t in range(800):
        a, b = d.select(), u.select()
        seq_d.append(a)
        seq_u.append(b)
        d.update(a, rewards[t, a])
        u.update(b, rewards[t, b])
    assert seq_d == seq_u
    assert seq_u == _reference_ucb1(None, rewards, c)


@pytest.mark.parametrize("make", [lambda: bandits.UCB1(5), lambda: bandits.DiscountedUCB(5, eps0=0.5, rng=0),
                                  lambda: bandits.SlidingWindowUCB(5, window=3), lambda: bandits.EpsilonGreedy(5, 0.9, rng=0)])
def test_every_arm_played_once_first(make):
    p = make()
    first = []
    for _ in range(5):
        a = p.select()
        first.append(a)
        p.update(a, 1.0 if a == 4 else 0.0)
    assert first == [0, 1, 2, 3, 4]


@pytest.mark.parametrize("make", [lambda: bandits.UCB1(3, c=0.2), lambda: bandits.DiscountedUCB(3, gamma=0.99, c=0.2),
                                  lambda: bandits.SlidingWindowUCB(3, window=200, c=0.2),
                                  lambda: bandits.EpsilonGreedy(3, eps=0.05, rng=1)])
def test_stationary_best_arm_dominates(make):
    means = np.tile([0.3, 0.7, 0.4], (2000, 1))
    tr = bandits.simulate_bandit(make(), means, noise=0.2, rng=3)
    assert np.mean(tr["arm"] == 1) >= 0.9


@pytest.mark.parametrize("gamma", [0.95, 0.98])
def test_discounted_ucb_tracks_a_change(gamma):
    pre, post = 1000, int(5 / (1 - gamma))
    means = np.vstack([np.tile([0.8, 0.3, 0.5], (pre, 1)), np.tile([0.3, 0.8, 0.5], (post, 1))])
    fracs = []
    for seed in range(3):
        tr = bandits.simulate_bandit(bandits.DiscountedUCB(3, gamma=gamma, c=0.2), means, noise=0.1, rng=seed)
        fracs.append(np.mean(tr["arm"][pre:] == 1))
    assert min(fracs) > 0.5
    # UCB1 keeps its stale belief much longer
    tr = bandits.simulate_bandit(bandits.UCB1(3, c=0.2), means, noise=0.1, rng=0)
    assert np.mean(tr["arm"][pre:] == 1) < min(fracs)


def test_sliding_window_statistics_match_brute_force():
    p = bandits.SlidingWindowUCB(3, window=7, c=0.3)
    rng = np.random.default_rng(4)
    hist = []
    for _ in range(40):
        a = p.select()
        r = float(rng.normal())
        p.update(a, r)
        hist.append((a, r))
    last = hist[-7:]
    for arm in range(3):
        rs = [r for a, r in last if a == arm]
        assert p.N[arm] == len(rs)
        assert p.S[arm] == pytest.approx(sum(rs), abs=1e-12)


def test_discounted_statistics_closed_form():
    p = bandits.DiscountedUCB(2, gamma=0.5, c=0.0)
    for a, r in [(0, 1.0), (1, 2.0), (0, 3.0)]:
        p.update(a, r)
    # N0 = 0.25 + 1, S0 = 0.25 * 1 + 3; N1 = 0.5, S1 = 1.0
    np.testing.assert_allclose(p.N, [1.25, 0.5])
    np.testing.assert_allclose(p.S, [3.25, 1.0])


def test_epsilon_schedule_and_determinism():
    p = bandits.DiscountedUCB(3, eps0=0.2, rho=0.9, eps_min=0.02)
    assert p.epsilon() == pytest.approx(0.2)
    p.t = 100
    assert p.epsilon() == pytest.approx(0.02)
    means = bandits.piecewise_means(4, 500, 100, rng=1)
    a = bandits.simulate_bandit(bandits.make_policy("D-UCB+eps", 4, rng=5), means, rng=6)
    b = bandits.simulate_bandit(bandits.make_policy("D-UCB+eps", 4, rng=5), means, rng=6)
    np.testing.assert_array_equal(a["arm"], b["arm"])


def test_regret_is_nondecreasing_and_random_is_worse():
    means = bandits.piecewise_means(5, 1500, 300, rng=2)
    tr = bandits.simulate_bandit(bandits.make_policy("D-UCB", 5, c=0.1), means, rng=0)
    assert np.all(np.diff(tr["regret"]) >= 0)
    rnd = bandits.simulate_bandit(bandits.make_policy("random", 5, rng=0), means, rng=0)
    assert tr["regret"][-1] < 0.5 * rnd["regret"][-1]


def test_piecewise_means_blocks():
    m = bandits.piecewise_means(3, 250, 100, rng=0)
    assert m.shape == (250, 3)
    assert np.all((m >= 0.2) & (m <= 0.8))
    assert np.all(m[0] == m[99]) and not np.all(m[99] == m[100])


@pytest.mark.parametrize("call", [
    lambda: bandits.UCB1(0), lambda: bandits.UCB1(3, c=-1), lambda: bandits.UCB1(3, c=float("nan")),
    lambda: bandits.DiscountedUCB(3, gamma=0.0), lambda: bandits.DiscountedUCB(3, gamma=1.5),
    lambda: bandits.DiscountedUCB(3, eps0=2.0), lambda: bandits.SlidingWindowUCB(3, window=0),
    lambda: bandits.EpsilonGreedy(3, eps=-0.1), lambda: bandits.UCB1(3).update(3, 1.0),
    lambda: bandits.UCB1(3).update(1, float("inf")), lambda: bandits.UCB1(3).update(1.5, 1.0),
    lambda: bandits.simulate_bandit(bandits.UCB1(3), np.zeros((10, 4))),
    lambda: bandits.simulate_bandit(bandits.UCB1(3), np.full((10, 3), np.nan)),
    lambda: bandits.simulate_bandit(bandits.UCB1(3), np.zeros((10, 3)), noise=-1),
    lambda: bandits.piecewise_means(3, 100, 0), lambda: bandits.make_policy("LinUCB", 3),
])
def test_bandit_bad_input(call):
    with pytest.raises(ValueError):
        call()


