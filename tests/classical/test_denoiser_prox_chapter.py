"""Tests of chapter 07's experiments, figures and explorers (the method is tested in
test_denoiser_prox.py; the claims run in tests/test_claims.py)."""
import numpy as np
import pytest

from optbook.classical import denoiser_prox_chapter as ch
from optbook.core import Tuning


def test_stacked_problems_equal_separate_runs():
    """The experiments solve several seeds' problems in one stacked run: it must equal the
    separate runs, for every method."""
    both = ch.run_errors("naive GD", 1000.0, (0, 1), 50, 8.0)
    for j, s in enumerate((0, 1)):
        assert np.allclose(both[:, j], ch.run_errors("naive GD", 1000.0, (s,), 50, 8.0)[:, 0], atol=1e-12)
    both = ch.run_errors("MMSE averaging", 1000.0, (0, 1), 30)
    assert np.allclose(both[:, 1], ch.run_errors("MMSE averaging", 1000.0, (1,), 30)[:, 0], atol=1e-10)
    pb = ch.logcosh_problem(1000.0, (0, 1))
    assert pb["y"].shape == (4,) and np.allclose(ch.relative_errors(pb["y"][None], pb), 1.0)


def test_diverging_settings_score_nan_and_rank_last():
    assert ch.run_errors("naive GD", 10.0, (0,), 100, 128.0)[-1, 0] > 1e50  # step 128/L_F > 2/L_F
    assert np.all(np.isnan(ch.run_errors("naive GD", 10.0, (0,), 400, 128.0)))  # overflows: NaN
    t = ch.tune("naive GD", 10.0, (100,))
    assert isinstance(t, Tuning) and t.size == 9 and t.best["step_scale"] < 128.0
    assert all(ch.tune(m, 10.0, (100,)).size == 9 for m in ch.GRIDS)  # the same grid size for everyone
    # the sensitivity check tunes accelerated GD's step and momentum together: 9 x 9 settings
    two = ch.tune(ch.AGD_TWO_KNOBS, 1000.0, (100,))
    assert two.size == 81 and set(two.best) == {"step_scale", "momentum"}
    assert two.best["momentum"] in ch.AGD_MOMENTA and np.isfinite(two.best_score)


def test_inexact_sweep_and_control_separate():
    sw = ch.inexact_sweep((0,), xis=(0.1,), maxiter=300, kinds=("systematic", "output"))
    assert sw["ratio"]["systematic"][0, 0] <= 1.0 < 10.0 < sw["ratio"]["output"][0, 0]


def test_crossover():
    assert ch.crossover([1.0, 0.5, 0.3, 0.2], [2.0, 0.6, 0.1, 0.05]) == 2
    assert ch.crossover([1.0, 0.5], [2.0, 0.6]) is None
    assert ch.crossover([1.0, 0.5], [0.5, 0.1]) == 0


def test_figures_and_explorers():
    fig = ch.level_set_slider()
    assert len(fig.frames) == len(ch.SIGMAS) and fig.layout.sliders[0].active == 2
    # the minimiser marker moves with sigma (last trace of each frame)
    xs = [fr.data[-1].x[0] for fr in fig.frames]
    assert len(set(np.round(xs, 6))) == len(xs)
    live = ch.EXPLORER_SCHEDULE.render(alpha_scale=1.0, sigma_scale=1.0)
    assert len(live.data) == 3
    assert ch.schedule_run(1.0, 0.5)["predicted_bias"] > 0.05 > ch.schedule_run(1.0, 1.0)["predicted_bias"]
    race = ch.race_slider()
    assert len(race.frames) == len(ch.RACE_KAPPAS)
    # naive GD's curve (second trace) ends higher as kappa grows; averaging's barely moves
    gd_end = [fr.data[1].y[-1] for fr in race.frames]
    avg_end = [fr.data[0].y[-1] for fr in race.frames]
    assert gd_end[-1] > 1e3 * gd_end[1] and max(avg_end) < 3 * min(avg_end)
    watch = ch.watch_figure()
    assert len(watch.data) == 4 and len(watch.layout.shapes) == 3  # three named phases


def test_tuning_panel_shows_every_method_of_the_claim():
    from optbook import claims

    res = claims.run_claim("07.condition_independence", fast=True, with_control=False)
    fig = ch.tuning_panel(res, 1000.0)
    names = {tr.name for tr in fig.data if tr.showlegend is not False}
    assert names == set(ch.GRIDS)
    with pytest.raises(ValueError, match="kappa"):
        ch.tuning_panel(res, 5.0)


def test_bad_input_is_rejected():
    cases = [
        (lambda: ch.logcosh_problem(0.5, (0,)), "kappa"),
        (lambda: ch.logcosh_problem(10.0, ()), "seeds"),
        (lambda: ch.logcosh_problem(10.0, (-1,)), "seed"),
        (lambda: ch.run_errors("Adam", 10.0, (0,), 10), "method"),
        (lambda: ch.run_errors("naive GD", 10.0, (0,), 10, 1.0, 0.9), "momentum"),
        (lambda: ch.logcosh_problem(10.0, (0,), tau=-1.0), "tau"),
        (lambda: ch.tune("naive GD", 10.0, (100,), budget=0), "budget"),
        (lambda: ch.tune("Adam", 10.0, (100,)), "method"),
        (lambda: ch.inexact_sweep((0,), kinds=("bogus",)), "kinds"),

        (lambda: ch.watch_runs(500.0, 0, 5), "maxiter"),
        (lambda: ch.watch_runs(500.0, 0, 100, pnp_sigma2=0.0), "pnp_sigma2"),
        (lambda: ch.level_set_traces(-1.0), "sigma"),
        (lambda: ch.race_traces(0.1), "kappa"),
        (lambda: ch.crossover([1.0, 2.0], [1.0]), "err_a"),
        (lambda: ch.path_figure(n_steps=0), "n_steps"),
        (lambda: ch.watch_figure(k_max=3), "k_max"),
        (lambda: ch.tuning_panel("result"), "ClaimResult"),
    ]
    for make, word in cases:
        with pytest.raises(ValueError, match=word):
            make()
