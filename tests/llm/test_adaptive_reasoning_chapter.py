"""Chapter 37's experiment layer: fair tuning budgets, the baselines' references, figures, bad input."""
from __future__ import annotations

import numpy as np
import pytest

from optbook.llm import adaptive_reasoning_chapter as ch


def test_every_trained_method_gets_the_same_grid_size():
    sizes = {m: int(np.prod([len(v) for v in ch.grid_for(m).values()])) for m in ch.TRAINED}
    assert set(sizes.values()) == {12}, sizes
    assert not set(ch.CLAIM_SEEDS) & set(ch.TUNING_SEEDS)


def test_references_and_untrained_baselines():
    long = ch.run_method("long-only", 0, 0.52)
    short = ch.run_method("short-only", 0, 0.52)
    merged = ch.run_method("merged", 0, 0.52, w_long=0.8)
    assert long["len_ratio"] == pytest.approx(1.0) and long["acc_drop"] == pytest.approx(0.0)
    assert short["acc"] < merged["acc"] < long["acc"] and short["length"] < merged["length"] < long["length"]
    # instance-only DPO never leaves the long style; group-only changes the routing
    inst = ch.run_method("instance-only DPO", 0, 0.52, beta=0.05, lr=100.0)
    assert np.all(inst["policy"].p_long() > 0.999) and inst["len_ratio"] < 0.75
    pairs = ch.pairs_for(0, 0.52, "instance-only DPO")
    assert np.all(pairs.level == 1) and np.all(pairs.w_style == 1)
    assert np.all(ch.pairs_for(0, 0.52, "group-only DPO").level == 0)


def test_share_of_easy_problems_sets_the_cut():
    lo, hi = ch.share_sweep(0.1), ch.share_sweep(0.7)
    cut = lambda r: 1 - r[ch.ADA][1] / r["long-only"][1]  # noqa: E731
    assert cut(hi) > cut(lo) + 0.2


def test_figures_have_a_frame_per_slider_value():
    assert len(ch.style_slider_figure().frames) == len(ch.SNAPSHOT_STEPS)
    assert len(ch.gain_figure(k=4).data) == 3


def test_bad_input():
    with pytest.raises(ValueError, match="method"):
        ch.run_method("best-of-n", 0, 0.52)
    with pytest.raises(ValueError, match="share"):
        ch.world(1.5)
    with pytest.raises(ValueError, match="seed"):
        ch.data(-1, 0.52)
    with pytest.raises(ValueError, match="k must"):
        ch.gain_figure(k=0)


def test_control_fails_on_length_not_on_a_self_comparison():
    ctrl = ch.claim_length_cut(fast=True, control=True)
    names = [c.key for c in ctrl.criteria]
    assert "len_vs_group" not in names  # 1 by construction for group-only itself
    assert ctrl.values["len_ratio"] > 0.5 and ctrl.values["acc_drop"] <= ch.ACC_TOL
    assert not ctrl.holds
