"""Chapter 32's experiment design: the same grid size for every controller, held-out days."""
import numpy as np

from optbook.decisions import cooling_chapter as ch
from optbook.decisions import cooling_control as cc


def test_every_controller_has_the_same_grid_and_held_out_days():
    assert {len(next(iter(g.values()))) for g in ch.GRIDS.values()} == {3}
    train, tune, claim = set(ch.TRAIN_DAYS), set(ch.TUNING_DAYS), set(ch.CLAIM_DAYS)
    assert not (train & tune) and not (train & claim) and not (tune & claim) and len(claim) >= 5


def test_tuned_controllers_and_evaluation_in_fast_mode():
    t = ch.tunings(True)
    assert set(t) == set(ch.GRIDS) and all(x.size == 3 for x in t.values())
    rule, rnd = ch.evaluate("rule", True), ch.evaluate("random", True)
    assert rule["energy"].shape == (3,) and np.all(rule["energy"] > 0)
    assert np.median(rnd["violation"]) > 100 * max(np.median(rule["violation"]), 1.0)  # the control overheats


def test_tree_figure_draws_a_full_binary_tree():
    fig = ch.tree_figure(2)
    nodes = [x for x in fig.data[1].x if x is not None]
    assert len(nodes) == ch.tree(2).ct_tree.tree_.node_count and len(nodes) <= 7
    assert isinstance(ch.controllers(True)["learned (CEM)"], cc.SharedLinearPolicy)
