"""MaxUCB and the max K-armed baselines (chapter 30): index arithmetic, initialisation, replay."""
import math

import numpy as np
import pytest
from sklearn.preprocessing import MinMaxScaler

from optbook.core.bandits import UCB1
from optbook.decisions import maxucb as mu


def feed(policy, pairs):
    for arm, reward in pairs:
        policy.update(arm, reward)
    return policy


def test_scaling_matches_sklearn_minmaxscaler():
    y = np.array([-0.3, -0.05, -0.9, -0.41, -0.2])
    ref = MinMaxScaler(feature_range=(0.01, 0.99)).fit_transform(y.reshape(-1, 1))[:, 0]
    assert mu.minmax_scale(y, y.min(), y.max()) == pytest.approx(ref, abs=1e-15)
    assert mu.minmax_scale(y, y.min(), y.max()) == pytest.approx(0.01 + 0.98 * (y - y.min()) / (y.max() - y.min()))
    # zero range: every reward maps to 0.01, as sklearn does, and no NaN appears
    const = np.full(4, -0.2)
    ref0 = MinMaxScaler(feature_range=(0.01, 0.99)).fit_transform(const.reshape(-1, 1))[:, 0]
    assert mu.minmax_scale(const, -0.2, -0.2) == pytest.approx(ref0) and np.allclose(ref0, 0.01)


def test_index_by_hand():
    p = feed(mu.MaxUCB(3, alpha=0.5), [(0, -0.3), (1, -0.1), (2, -0.5), (0, -0.2), (0, -0.25)])
    # t counts from 1 and grows once per observation: 5 observations -> t = 6
    lo, hi = -0.5, -0.1
    scaled_max = 0.01 + 0.98 * (np.array([-0.2, -0.1, -0.5]) - lo) / (hi - lo)
    expected = scaled_max + (0.5 * math.log(6) / np.array([3, 1, 1])) ** 2
    assert np.max(np.abs(p.index() - expected)) <= 1e-12
    assert p.select() == int(np.argmax(expected))


def test_constant_rewards_give_no_nan():
    p = feed(mu.MaxUCB(2, alpha=0.5), [(0, 0.4), (1, 0.4), (0, 0.4)])
    idx = p.index()
    assert np.isfinite(idx).all()
    assert idx == pytest.approx(0.01 + (0.5 * math.log(4) / np.array([2, 1])) ** 2)


def test_initialisation_is_round_robin_and_first_index_uses_t_k_plus_1():
    k = 4
    p = mu.MaxUCB(k, alpha=1.0)
    first = []
    for a in range(k):
        first.append(p.select())
        p.update(first[-1], -0.1 * a)
    assert first == list(range(k))
    assert p.index() - mu.minmax_scale(-0.1 * np.arange(k), -0.3, 0.0) == pytest.approx(np.full(k, math.log(k + 1) ** 2))


def test_alpha_zero_is_greedy_on_the_max_and_finds_deterministic_arms():
    losses = np.repeat(np.array([[0.3], [0.1], [0.2]]), 10, axis=1)  # deterministic arms, arm 1 best
    out = mu.replay(mu.MaxUCB(3, alpha=0.0), losses, 10)
    assert out.arms.tolist() == [0, 1, 2] + [1] * 7


def test_mean_statistic_is_the_empirical_mean():
    p = feed(mu.MaxUCB(2, alpha=0.0, statistic="mean"), [(0, 0.0), (0, 1.0), (1, 0.6)])
    assert p.index() == pytest.approx(mu.minmax_scale(np.array([0.5, 0.6]), 0.0, 1.0))
    # the max-based index prefers arm 0 (max 1.0), the mean-based one arm 1 (mean 0.6)
    q = feed(mu.MaxUCB(2, alpha=0.0), [(0, 0.0), (0, 1.0), (1, 0.6)])
    assert q.select() == 0 and p.select() == 1


def test_round_robin_cycles():
    out = mu.replay(mu.RoundRobin(3), np.zeros((3, 4)), 9)
    assert out.arms.tolist() == [0, 1, 2] * 3


def test_threshold_ascent_index_by_hand():
    p = feed(mu.ThresholdAscent(2, s=2, delta=0.1, horizon=10), [(0, 0.1), (1, 0.9), (0, 0.5), (1, 0.2)])
    a = math.log(2 * 2 * 10 / 0.1)
    # threshold = 2nd largest reward = 0.5: arm 0 has 1 of 2 above, arm 1 has 1 of 2
    assert p.a == pytest.approx(a)
    assert p.select() == 0  # equal frequencies and counts: tie to the lowest index
    p.update(0, 0.95)  # threshold is now 0.9: arm 0 has 1 of 3, arm 1 has 1 of 2
    n, S = np.array([3.0, 2.0]), np.array([1.0, 1.0])
    ucb = S / n + (a + np.sqrt(2 * n * (S / n) * a + a * a)) / n
    assert p.select() == int(np.argmax(ucb)) == 1


def test_qomax_explores_in_turn_then_commits_to_the_best_median_of_batch_maxima():
    # rewards in pull order; arm 0: batch maxima 0.9 and 0.1 (median 0.5); arm 1: 0.6 and 0.6 (median 0.6)
    rewards = np.array([[0.9, 0.0, 0.1, 0.0, 0.0, 0.0], [0.6, 0.5, 0.6, 0.1, 0.0, 0.0]])
    p = mu.QoMaxETC(2, batches=2, batch_size=2)
    out = mu.replay(p, -rewards, 10)
    assert out.arms.tolist() == [0, 1] * 4 + [1, 1] and p.committed == 1
    # the arm with the larger single maximum (arm 0) loses: QoMax is robust to one lucky draw
    assert mu.replay(mu.MaxUCB(2, alpha=0.0), -rewards[:, [0, 1, 2, 3, 4, 5]], 6).arms[2] == 0


def test_max_median_order_statistic_without_exploration():
    p = feed(mu.MaxMedian(2, eps=0.0), [(0, 0.9), (1, 0.8), (0, 0.1)])
    # m = 1: arm 0 compares its 2nd largest (0.1), arm 1 its largest (0.8)
    assert p.select() == 1
    p.update(1, 0.0)  # equal counts: compare maxima
    assert p.select() == 0


def test_max_median_rounds_the_rank_up():
    # counts 4 and 3, m = 3: arm 0 compares its ceil(4/3) = 2nd largest (0.1), not its maximum
    p = feed(mu.MaxMedian(2, eps=0.0), [(0, 0.9), (0, 0.1), (0, 0.1), (0, 0.1), (1, 0.5), (1, 0.4), (1, 0.3)])
    assert p.select() == 1


def test_replay_returns_table_entries_in_order_and_refuses_an_exhausted_table():
    table = np.arange(12, dtype=float).reshape(3, 4) / 20
    out = mu.replay(mu.RoundRobin(3), table, 12)
    assert out.losses.tolist() == table.T.ravel().tolist()  # n-th pull of arm i -> table[i, n]
    assert np.all(np.diff(out.best_so_far) <= 0)
    assert out.pulls(3).tolist() == [4, 4, 4]
    with pytest.raises(ValueError, match="exhausted"):
        mu.replay(mu.RoundRobin(3), table, 13)


def test_ucb1_from_core_plays_on_the_replay_protocol():
    table = np.vstack([np.full(30, 0.5), np.full(30, 0.1)])
    out = mu.replay(UCB1(2, c=0.01), table, 30)
    assert np.count_nonzero(out.arms == 1) >= 25


def test_seeded_runs_repeat_exactly():
    table = np.random.default_rng(0).uniform(size=(4, 50))
    a = mu.replay(mu.MaxMedian(4, eps=5.0, rng=3), table, 50)
    b = mu.replay(mu.MaxMedian(4, eps=5.0, rng=3), table, 50)
    assert np.array_equal(a.arms, b.arms)


def test_bad_input_is_named():
    with pytest.raises(ValueError, match="alpha"):
        mu.MaxUCB(3, alpha=-1.0)
    with pytest.raises(ValueError, match="statistic"):
        mu.MaxUCB(3, statistic="median")
    with pytest.raises(ValueError, match="n_arms"):
        mu.MaxUCB(0)
    with pytest.raises(ValueError, match="s"):
        mu.ThresholdAscent(3, s=0)
    with pytest.raises(ValueError, match="delta"):
        mu.ThresholdAscent(3, delta=1.5)
    with pytest.raises(ValueError, match="batches"):
        mu.QoMaxETC(3, batches=0)
    with pytest.raises(ValueError, match="q"):
        mu.QoMaxETC(3, q=2.0)
    with pytest.raises(ValueError, match="eps"):
        mu.MaxMedian(3, eps=-1.0)
    with pytest.raises(ValueError, match="losses"):
        mu.replay(mu.RoundRobin(2), np.array([0.1, 0.2]))
    with pytest.raises(ValueError, match="finite"):
        mu.replay(mu.RoundRobin(2), np.array([[0.1, np.nan], [0.2, 0.3]]))
    with pytest.raises(ValueError, match="arms"):
        mu.replay(mu.RoundRobin(3), np.zeros((2, 5)))
    with pytest.raises(ValueError, match="horizon"):
        mu.replay(mu.RoundRobin(2), np.zeros((2, 5)), 0)
    with pytest.raises(ValueError, match="reward"):
        mu.MaxUCB(2).update(0, float("nan"))
