"""Chapter 30's experiment design: test beds, fair tuning, the official-loop reference, figures."""
import numpy as np
import pytest

from optbook.decisions import maxucb as mu
from optbook.decisions import maxucb_chapter as ch


def test_every_policy_has_a_grid_of_the_same_size_and_held_out_seeds():
    sizes = {name: int(np.prod([len(v) for v in grid.values()])) for name, grid in ch.GRIDS.items()}
    assert set(sizes.values()) == {8}, sizes
    assert not set(ch.TUNING_SEEDS) & set(ch.CLAIM_SEEDS) and len(ch.CLAIM_SEEDS) >= 5
    assert ch.SHOW_SEED not in ch.CLAIM_SEEDS


def test_synthetic_arms_are_bounded_reproducible_and_match_their_moments():
    a, b = ch.synthetic_losses(3, 1), ch.synthetic_losses(3, 1)
    assert a.shape == (8, ch.SYN_HORIZON) and np.array_equal(a, b)
    assert not np.array_equal(a, ch.synthetic_losses(3, 2))
    assert a.min() >= ch.SYN_BEST_LOSS and a.max() <= 1.0
    means, tops = ch.synthetic_moments()
    assert tops.max() == pytest.approx(1 - ch.SYN_BEST_LOSS) and int(np.argmax(tops)) == ch.SYN_BEST_ARM
    big = np.hstack([ch.synthetic_losses(0, r, 2000) for r in range(5)])
    assert 1 - big.mean(axis=1) == pytest.approx(means, abs=0.01)
    assert ch.best_mean_arm("synthetic") == 0 != ch.best_arm("synthetic")


def test_cash_trajectories_are_draws_from_each_arms_pool():
    pool = ch.CashPool(np.array([[0.1, 0.2, 0.3], [0.5, 0.6, 0.7]]), ((), ()))
    tab = ch.cash_losses(pool, 0, 0, 50)
    assert tab.shape == (2, 50)
    assert set(tab[0]) <= {0.1, 0.2, 0.3} and set(tab[1]) <= {0.5, 0.6, 0.7}
    assert np.array_equal(tab, ch.cash_losses(pool, 0, 0, 50)) and pool.best_loss == 0.1


def test_cash_pool_trains_real_models():
    pool = ch.cash_pool(2, 1)
    assert pool.losses.shape == (len(ch.CASH_ARMS), 2) and len(pool.configs) == len(ch.CASH_ARMS)
    assert np.all((pool.losses >= 0) & (pool.losses <= 1))
    assert pool.losses.min() < 0.2  # some model class learns digits
    with pytest.raises(ValueError, match="n_configs"):
        ch.cash_pool(0)


def test_runs_scores_by_hand():
    r = ch.Runs(np.array([[3.0, 2.0, 1.0, 0.0], [1.0, 1.0, 1.0, 1.0]]), np.array([[2, 2], [1, 3]]))
    assert r.final == pytest.approx(0.5)
    assert r.anytime == pytest.approx(np.mean([1.0, 0.0, 1.0, 1.0]))  # pulls after the first 2


def test_official_loop_reference_matches_our_policy():
    tab = ch.synthetic_losses(5, 0, 60)
    for alpha in (0.0, 0.5, 2.0):
        assert np.array_equal(ch.official_maxucb_arms(tab, alpha, 60), mu.replay(mu.MaxUCB(8, alpha=alpha), tab, 60).arms)


def test_mean_control_is_drawn_to_the_best_mean_arm():
    r = ch.run_policy("synthetic", "MaxUCB", {"alpha": 1.0, "statistic": "mean"}, 100, 4)
    m = ch.run_policy("synthetic", "MaxUCB", {"alpha": 1.0}, 100, 4)
    assert r.pulls[:, 0].mean() > r.pulls[:, 1].mean() and m.pulls[:, 1].mean() > m.pulls[:, 0].mean()
    assert m.final < r.final


def test_bad_arguments_are_named():
    with pytest.raises(ValueError, match="method"):
        ch.make_policy("EXP3", 3, 10, 0)
    with pytest.raises(ValueError, match="problem"):
        ch.run_policy("tabrepo", "MaxUCB", {}, 0, 1)
    with pytest.raises(ValueError, match="runs"):
        ch.run_policy("synthetic", "MaxUCB", {}, 0, 0)
    with pytest.raises(ValueError, match="horizon"):
        ch.synthetic_losses(0, 0, 0)


def test_figures_build_and_frames_cover_the_grids():
    assert len(ch.bonus_slider_figure().frames) == len(ch.ALPHAS)
    fig = ch.race_slider_figure(0.5)
    assert len(fig.frames) == len(ch.RACE_TIMES)
    snaps = ch.race(0.5)
    assert [s["t"] for s in snaps] == list(ch.RACE_TIMES)
    assert all(s["pulls"].sum() == s["t"] for s in snaps)
    assert np.all(np.diff([s["best"][1] for s in snaps]) >= 0)  # a maximum never decreases
    assert len(ch.race_figure(32, 1.0).data) == 4
    assert len(ch.synthetic_arms_figure().data) == 8
