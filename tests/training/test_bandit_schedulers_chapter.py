"""Tests of chapter 20's experiments and figures (the algorithms: test_bandit_schedulers.py)."""
import pytest

from optbook.training import bandit_schedulers_chapter as ch


def test_regret_table_shape_and_ucb1_reduction():
    t = ch.regret_table((0,), horizon=400, period=100, c_grid=(0.1, 0.2), gamma=1.0, methods=("UCB1", "D-UCB"))
    assert set(t) == {"UCB1", "D-UCB"} and set(t["UCB1"]) == {0.1, 0.2}
    assert t["UCB1"] == pytest.approx(t["D-UCB"])  # gamma = 1 is UCB1
    with pytest.raises(ValueError):
        ch.regret_table((0,), horizon=100, c_grid=(-0.1,))


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
