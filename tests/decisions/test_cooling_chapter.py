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


def test_tree_layout_places_every_node_once():
    t = ch.tree(2, True).ct_tree
    xs, ys = ch._tree_layout(t)
    assert len(xs) == t.tree_.node_count <= 7 and min(ys.values()) >= -2 and ys[0] == 0
    leaves = sorted(xs[n] for n in xs if t.tree_.children_left[n] == -1)
    n = len(leaves)
    assert np.allclose(leaves, (np.arange(n) + 0.5) / n)  # leaves spread evenly over [0, 1]
    assert isinstance(ch.controllers(True)["learned (CEM)"], cc.SharedLinearPolicy)
