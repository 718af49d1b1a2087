"""Tests of chapter 20's experiments and figures (the algorithms: test_bandit_schedulers.py)."""
import pytest

from optbook.training import bandit_schedulers_chapter as ch


def test_regret_table_shape_and_ucb1_reduction():
    t = ch.regret_table((0,), horizon=400, period=100, c_grid=(0.1, 0.2), gamma=1.0, methods=("UCB1", "D-UCB"))
    assert set(t) == {"UCB1", "D-UCB"} and set(t["UCB1"]) == {0.1, 0.2}
    assert t["UCB1"] == pytest.approx(t["D-UCB"])  # gamma = 1 is UCB1
    with pytest.raises(ValueError):
        ch.regret_table((0,), horizon=100, c_grid=(-0.1,))
    for kwargs, name in ((dict(window=2.5), "window"), (dict(gamma=float("nan")), "gamma"),
                         (dict(horizon=2.5), "horizon"), (dict(methods=("UCB2",)), "methods")):
        with pytest.raises(ValueError, match=name):
            ch.regret_table((0,), **kwargs)


def test_oracle_credits_point_where_they_say():
    rec = ch.oracle_credits("recipe")
    best = dict(zip(ch.AGENT_KEYS, ch._key(ch.static_tuning().best)))
    for k in ch.AGENT_KEYS:
        assert sum(rec[k]) == 1.0 and rec[k][ch.MENUS[k].index(best[k])] == 1.0
    with pytest.raises(ValueError, match="kind"):
        ch.oracle_credits("perfect")


def test_horizon_rule_is_what_the_claim_states():
    assert ch.GAMMA == pytest.approx(0.935, abs=5e-4) and ch.C_UCB == pytest.approx(0.43, abs=5e-3)


def test_static_grid_sizes():
    full, fast = ch.static_grid(), ch.static_grid(fast=True)
    assert len(full["opt"]) * len(full["loss"]) * len(full["lrs"]) == 12
    assert len(fast["opt"]) * len(fast["loss"]) * len(fast["lrs"]) == 3


def test_figures_build():
    fig = ch.playground_figure(gamma=0.95, c=0.2, eps=0.05, window=100)
    assert len(fig.data) == 4 and len(fig.layout.shapes) == 5
    assert len(ch.playground_slider_figure().frames) == len(ch.GAMMA_GRID)
