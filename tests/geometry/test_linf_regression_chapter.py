"""Chapter 09's experiments, figures, explorers and claims' building blocks (the methods are tested
in test_linf_regression.py). Figures use the claims' fast settings, which test_claims runs anyway."""
import numpy as np
import pytest

from optbook.geometry import linf_regression as L
from optbook.geometry import linf_regression_chapter as ch


def test_floor_runs_count_every_solve():
    lew = ch.floor_run(0, "lewis", 4.0, True, ch.FLOOR_N_FAST)
    uni = ch.floor_run(0, "uniform", 4.0, True, ch.FLOOR_N_FAST)
    shuf = ch.floor_run(0, "shuffled", 4.0, True, ch.FLOOR_N_FAST)
    lw = ch.floor_instance(0, True, ch.FLOOR_N_FAST)[2]
    assert lew.solves == lew.nit + 1 + lew.lewis_solves and lew.lewis_solves == lw.solves
    assert uni.solves == uni.nit + 1
    assert shuf.solves == shuf.nit + 1 + lw.solves  # the shuffled floor pays what the real one pays
    assert lew.success and uni.success
    assert lew.floor_budget <= 2 * ch.FLOOR_D + 1e-9 < 10 * ch.FLOOR_D < uni.floor_budget
    # the same call is the same run (cached and deterministic)
    again = ch.floor_run.__wrapped__(0, "lewis", 4.0, True, ch.FLOOR_N_FAST)
    assert again.nit == lew.nit and np.array_equal(again.x, lew.x)


def test_floor_tuning_is_fair_and_held_out():
    tl, tu = ch.floor_tuning(ch.FLOOR_TUNING_SEEDS[:1], ch.FLOOR_N_FAST)
    assert tl.size == tu.size == len(ch.FLOOR_ETAS)
    assert set(tl.seeds).isdisjoint(ch.CLAIM_SEEDS) and tl.seeds == tu.seeds
    assert np.all(np.isfinite(tl.scores)) and np.all(tu.scores <= ch.FLOOR_CAP + 1)


def test_race_tuning_grids_have_the_same_size_and_held_out_seeds():
    tunings = ch.race_tuning(ch.RACE_TUNING_SEEDS[:1], ch.RACE_N_FAST)
    assert len({t.size for t in tunings}) == 1 and tunings[0].size == 4
    assert all(set(t.seeds).isdisjoint(ch.CLAIM_SEEDS) for t in tunings)
    for t in tunings:  # every method has a setting that reaches (1 + eps)
        assert np.isfinite(t.best_score)


def test_race_run_reports_accuracy_and_certificate():
    run = ch.race_run(ch.IRLS, (("eta", 1.0),), 0, 0.05, ch.RACE_N_FAST)
    assert run["ok"] and 0 <= run["accuracy"] <= 0.05 and run["cpu"] > 0 and run["solves"] >= 4
    exact = ch.race_run(ch.HIGHS, (("method", "highs-ds"), ("presolve", True)), 0, 0.05, ch.RACE_N_FAST)
    assert exact["ok"] and abs(exact["accuracy"]) < 1e-8
    capped = ch.race_run(ch.IRLS, (("eta", 1.0),), 0, 1e-4, ch.RACE_N_FAST)
    assert not capped["ok"] and capped["solves"] >= ch.RACE_CAP  # the cap stops the pure phase


def test_figures_build():
    assert len(ch.john_figure(0.5, 4).data) == 5
    assert len(ch.john_slider_figure().frames) == len(ch.JOHN_ALPHAS)
    assert len(ch.line_fit_figure(3.0, 0.1, False, 2).data) == 6
    assert len(ch.line_fit_slider_figure().frames) >= 3
    fig = ch.floor_figure(0, fast=True)
    assert len(fig.data) == 5 and len(fig.layout.shapes) == 2  # two runs twice, the eps line; two phases
    summary = ch.floor_summary(0, fast=True)
    assert int(summary["lewis_solves"]) < int(summary["uniform_solves"])
    assert len(ch.solves_vs_n_figure(ns=(500, 1000), seeds=(0, 1)).data) == 8
    fig = ch.tradeoff_figure(0, fast=True)
    assert len(fig.data) == 7
    assert len(ch.floor_tuning_figure(fast=True).data) == 9  # Lewis, uniform and the control's shuffled floor
    assert len(ch.race_tuning_figure(fast=True).data) == 12
    assert len(ch.qsc_figure().data) == 3


def test_figures_have_captions_and_slider_notes():
    figs = (ch.floor_figure(0, fast=True), ch.solves_vs_n_figure(ns=(500, 1000), seeds=(0,)),
            ch.tradeoff_figure(0, fast=True), ch.john_figure(), ch.john_slider_figure(),
            ch.line_fit_slider_figure(), ch.qsc_figure())
    assert all(f.layout.title.text for f in figs)  # the book shows the title as the caption
    # a slider's caption is fixed; each position's numbers travel with its frame as a note
    john = ch.john_slider_figure()
    assert all(f.layout.annotations and "κ" in f.layout.annotations[0].text and not f.layout.title.text
               for f in john.frames)


def test_line_fit_replays_the_solver():
    run = ch.line_fit_run(1.0, 0.05, True)
    assert len(run["rows"]) == run["nit"] == len(run["U"])
    A, y = run["A"], run["y"]
    for p, x in run["rows"]:
        assert p.sum() == pytest.approx(1.0)
        assert np.allclose(x, L.wls(A, y, p), atol=1e-8)  # each iterate is the weighted fit of its weights


def test_the_exchange_phase_reaches_below_the_pure_phase_on_the_tradeoff_curve():
    data = ch.tradeoff_runs(0, fast=True)
    pure = dict(data["curves"]["MWU-IRLS, Lewis floor (η = 1)"])
    polished = data["curves"]["MWU-IRLS + exchange phase (default below 10⁻³)"]
    assert all(r["ok"] and r["accuracy"] <= e for e, r in polished)
    assert pure[0.05]["ok"] and pure[0.05]["cpu"] < data["flat"][ch.CVXPY]["cpu"]
    assert data["irls_beats_highs_down_to"] in pure


def test_bad_input():
    with pytest.raises(ValueError, match="floor"):
        ch.floor_run(0, "gaussian", 1.0)
    with pytest.raises(ValueError, match="method"):
        ch.race_run("simplex", (), 0)
    with pytest.raises(ValueError, match="setting"):
        ch.race_run(ch.IRLS, (("power", 1.0),), 0)
    with pytest.raises(ValueError, match="setting"):
        ch.race_run(ch.IRLS, 3, 0)
    with pytest.raises(ValueError, match="alpha"):
        ch.john_data(-1.0)
    with pytest.raises(ValueError, match="alpha"):
        ch.john_figure(alpha=0.3)
    with pytest.raises(ValueError, match="iteration"):
        ch.john_figure(iteration=3)
    with pytest.raises(ValueError, match="eta"):
        ch.line_fit_figure(eta=0.5)
    with pytest.raises(ValueError, match="lewis"):
        ch.line_fit_figure(lewis="yes")
    with pytest.raises(ValueError, match="seed"):
        ch.floor_figure(seed=-1)
    with pytest.raises(ValueError, match="ns"):
        ch.solves_vs_n_figure(ns=(5,))
    with pytest.raises(ValueError, match="seeds"):
        ch.solves_vs_n_figure(seeds=())


def test_glue_formats_name_measured_values():
    """The notebook glues every claim with GLUE_FORMATS; a key the claim does not measure would
    stop the build."""
    from optbook import claims

    for c in claims.registered("09"):
        measured = claims.run_claim(c, fast=True, with_control=False).measured
        assert set(ch.GLUE_FORMATS[c.name]) <= set(measured), c.name
