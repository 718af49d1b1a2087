"""Chapter 31's experiment design: calibration of the surrogate, fair tuning, held-out tasks."""
import numpy as np

from optbook.decisions import freeze_thaw as ft
from optbook.decisions import freeze_thaw_chapter as ch


def test_surrogate_90_percent_bands_are_calibrated_on_held_out_tasks():
    assert 0.82 <= ch.coverage(ch.surrogate(), ch.TUNING_TASKS) <= 0.98
    # the bare kNN prior (no defensive particles, sharp likelihood, no jitter) is overconfident
    bare = ft.ParticleLC(ch.benchmark()["transfer"][:, :ch.K_PRIOR], ch.T, lik_sd=0.02)
    assert ch.coverage(bare, ch.TUNING_TASKS) < 0.75


def test_tasks_are_held_out_and_grids_have_one_size():
    groups = [set(ch.META_TRAIN), set(ch.TUNING_TASKS), set(ch.CLAIM_TASKS), {ch.DEMO_TASK}]
    assert sum(len(g) for g in groups) == len(set().union(*groups))
    assert len({len(next(iter(g.values()))) for g in ch.GRIDS.values()}) == 1
    assert len(ch.CLAIM_TASKS) >= 5


def test_cost_free_trajectories_are_shared_across_alpha():
    a = ch.run("random search", (("epochs", 10),), 0.2, ch.TUNING_TASKS[0])
    b = ch.run("random search", (("epochs", 10),), 0.4, ch.TUNING_TASKS[0])
    assert a is b and a.stop_budget == ch.BUDGET


def test_figures_build():
    for fig in (ch.utility_figure(0.4, 2.0), ch.freeze_thaw_figure(0.0), ch.fan_figure(5), ch.threshold_figure()):
        assert len(fig.data) >= 3
    d = ch.fan(3)
    assert d["gain"].shape == (ch.T - 3,) and np.all(d["gain"] >= 0)


def test_cfbo_stops_at_the_first_crossing_of_the_threshold():
    # the rule stops before the next epoch as soon as r_b >= F(p)^gamma, never later
    r = ch.run("CFBO", (("tau", 0.2),), 0.4, ch.DEMO_TASK)
    reg, rhs = np.array(r.log["r"]), np.array(r.log["rhs"])
    assert r.stopped and r.stop_budget < ch.BUDGET
    assert reg[-1] >= rhs[-1] and np.all(reg[:-1] < rhs[:-1])
    # and a fixed stop budget never beats the oracle: the truncated regret is >= 0
    assert ch._truncated_regret("random search", (("epochs", 10),), 0.4, ch.DEMO_TASK, 30) >= 0
