"""Tests of chapter 15's experiments, figures and explorers (the methods: test_quantum_zo.py)."""
import subprocess
import sys

import numpy as np
import pytest

from optbook.geometry import quantum_zo as q
from optbook.geometry import quantum_zo_chapter as ch


def test_median_boosting_reduces_failures():
    fails = [1 - ch.jordan_success(ell=0.15, shots=600, repetitions=r, rng=5)["joint"] for r in (1, 3, 7)]
    assert fails[0] > fails[1] > fails[2]


def test_noise_destroys_the_estimate():
    assert ch.jordan_success(noise=1.0, shots=400, rng=1)["joint"] < 0.2
    assert ch.jordan_success(noise=0.0, shots=400, rng=1)["joint"] > 0.75


def test_sampled_success_matches_the_exact_probability():
    exact = ch.joint_success_exact(1e-3)
    sampled = ch.jordan_success(shots=4000, rng=0)["joint"]
    assert abs(sampled - exact) < 4 * np.sqrt(exact * (1 - exact) / 4000)
    # noise sigma = m ell / N: the coherent part is exp(-4 pi^2), the rest uniform; G0 lies between grid
    # values, so 4 x 4 of the 32 x 32 cells are within 2m/N of it
    assert ch.joint_success_exact(1e-3, noise=1.0) == pytest.approx(16 / 1024, abs=1e-6)


def test_curvature_success_declines_monotonically_past_four_times_the_rule_of_thumb():
    rows = ch.curvature_sweep((1.0, 4.0, 8.0, 12.0, 16.0, 32.0))
    p = [r["joint success"] for r in rows]
    assert all(b < a for a, b in zip(p[1:], p[2:]))           # strictly falling from 4x on
    assert abs(p[1] - p[0]) < 0.02 and p[1] > 0.8             # the rule of thumb is pessimistic ...
    assert p[3] < 0.5                                          # ... by a factor between 8 and 12


def test_race_runs_count_queries_by_their_conventions():
    d = 8
    qm = ch.race_run("quantum model", d, 0, 4.0)
    assert qm.success and qm.queries == qm.nit * ch.repetitions_for(d)
    ctrl = ch.race_run(ch.ONE_SHOT, d, 0, 4.0)
    assert ctrl.per_step == 1 and ctrl.queries == ctrl.nit                    # one shot, one query, per step
    big_q, big_ctrl = ch.race_run("quantum model", 32, 0, 4.0), ch.race_run(ch.ONE_SHOT, 32, 0, 4.0)
    assert np.median(big_ctrl.errors) > 3 * np.median(big_q.errors)          # the median is what cuts the error
    ex = ch.race_run("exact subgradient", d, 0, 4.0)
    assert ex.queries == ex.nit
    zo = ch.race_run("ZO-GD", d, 0, 2.0)
    assert zo.success and ch.queries_to_target(zo) == zo.trace["queries"][-1]
    assert ch.queries_to_target(ch.race_run("ZO-GD", d, 0, 2.0, budget=10)) == np.inf
    assert 0.02 < np.median(qm.errors) < 0.5                                  # a 6-bit estimate is not exact


def test_repetitions_grow_with_the_bits_until_none_suffices():
    rs = [ch.repetitions_for(64, b) for b in (4, 5, 6, 7)]
    assert rs == sorted(rs) and rs[-1] > 3 * rs[0]
    with pytest.raises(ValueError, match="n_bits = 8"):
        ch.repetitions_for(64, 8)


def test_tuning_with_cutoff_finds_the_brute_force_best():
    t = ch.race_tuning("exact subgradient", 4, (100, 101))
    full = [np.median([ch.queries_to_target(ch.race_run("exact subgradient", 4, s, m)) for s in (100, 101)])
            for m in ch.STEP_GRID]
    assert t.best["mult"] == ch.STEP_GRID[int(np.argmin(full))]
    assert not t.on_edge()


@pytest.mark.parametrize("method,dims", [("quantum model", (4, 8)), ("coordinate FD", (4, 8)), ("ZO-GD", (4,))])
def test_figure_steps_are_the_tuned_steps(method, dims):
    for d in dims:
        assert ch.RACE_STEPS[method][d] == ch.race_tuning(method, d).best["mult"]


def test_log_colour_scale_shows_the_noise_haze():
    heat = ch.jordan_traces(5, 0.001, 1.0, 0.3)[0]
    z = np.asarray(heat.z)
    assert heat.zmin == -4 and heat.zmax == 0
    # the haze is P ~ 1e-3 per cell: visible on the log scale, far above its floor
    assert np.median(z) > -3.5
    assert np.median(np.asarray(ch.jordan_traces(5, 0.001, 1.0, 0.0)[0].z)) < np.median(z)


def test_scaling_and_bit_figures_build():
    res = ch.claim_query_scaling(fast=True)
    fig = ch.scaling_figure(res.details)
    assert fig.layout.xaxis.type == "log" and len(fig.data) == 8
    its = fig.data[-1]
    assert "iterations" in its.name and list(its.y) == [np.median(res.details["table"][d]["iterations"]) for d in (8, 32)]
    rows = [{"bits": 3, "queries": np.inf, "Q(d)": 27}, {"bits": 5, "queries": 900.0, "Q(d)": 29},
            {"bits": 8, "queries": np.inf, "Q(d)": np.nan}]
    notes = [a.text for a in ch.bit_sweep_figure(rows).layout.annotations]
    assert len(notes) == 2 and "not" in notes[0] and "no Q(d)" in notes[1]


def test_explorers_answer_their_first_move_within_a_second():
    """The first move of each live explorer in a fresh process (caches empty) costs under 1 s of CPU."""
    code = ("import time; from optbook.geometry import quantum_zo_chapter as ch\n"
            "for e in (ch.EXPLORER_JORDAN, ch.EXPLORER_RACE):\n"
            "    t = time.process_time(); e.render(); print(time.process_time() - t)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    seconds = [float(v) for v in out.stdout.split()]
    assert len(seconds) == 2 and max(seconds) < 1.0, seconds


@pytest.mark.parametrize("explorer", [ch.EXPLORER_JORDAN, ch.EXPLORER_RACE], ids=lambda e: e.name)
def test_explorers_render_the_corners_of_their_controls(explorer):
    for values in ({k: c.values[0] for k, c in explorer.controls.items()},
                   {k: c.values[-1] for k, c in explorer.controls.items()}):
        assert len(explorer.render(**values).data) > 0


def test_bad_input():
    with pytest.raises(ValueError, match="method"):
        ch.race_run("adam", 4, 0, 1.0)
    with pytest.raises(ValueError, match="d"):
        ch.race_run("ZO-GD", 0, 0, 1.0)
    with pytest.raises(ValueError, match="step_mult"):
        ch.race_run("ZO-GD", 4, 0, -1.0)
    with pytest.raises(ValueError, match="budget"):
        ch.race_run("ZO-GD", 4, 0, 1.0, budget=0)
    with pytest.raises(ValueError, match="method"):
        ch.race_tuning("adam", 4)
    with pytest.raises(ValueError, match="d must be one of"):
        ch.race_figure(7)
    with pytest.raises(ValueError, match="n_bits"):
        ch.jordan_figure(n_bits=12)
    with pytest.raises(ValueError, match="noise"):
        ch.jordan_figure(noise=-0.1)
    with pytest.raises(ValueError, match="curvature"):
        ch.quadratic_oracle(-1.0)
    with pytest.raises(ValueError, match="factors"):
        ch.curvature_sweep(())
    with pytest.raises(ValueError, match="ell"):
        ch.joint_success_exact(0.0)
    with pytest.raises(ValueError, match="shots"):
        ch.jordan_success(shots=0)
    with pytest.raises(ValueError, match="n_bits"):
        ch.jordan_success(n_bits=12)
    with pytest.raises(ValueError, match="d"):
        ch.problem(0, 0)
    with pytest.raises(ValueError, match="prob"):
        ch.quantum_oracle("l1", np.random.default_rng(0))
    with pytest.raises(ValueError, match="res"):
        ch.queries_to_target(None)
    with pytest.raises(ValueError, match="details"):
        ch.scaling_figure({})
    with pytest.raises(ValueError, match="rows"):
        ch.bit_sweep_figure([])
    with pytest.raises(ValueError, match="seeds"):
        ch.bit_sweep(64, ())
    with pytest.raises(ValueError, match="ell"):
        ch.jordan_traces(5, -1.0)
    assert isinstance(ch.problem(4, 0), q.L1Regression)
