"""Chapter 29's experiment design: fair tuning, held-out seeds, the figures' inputs."""
import numpy as np
import pytest

from optbook.decisions import mean_field_chapter as ch


def _size(grid):
    return int(np.prod([len(v) for v in grid.values()]))


def test_every_method_gets_a_grid_of_the_same_size_and_held_out_seeds():
    assert len({_size(g) for g in ch.GRIDS.values()}) == 1
    assert len({_size(g) for g in ch.FAST_GRIDS.values()}) == 1
    assert not set(ch.TUNING_SEEDS) & set(ch.CLAIM_SEEDS) and len(ch.CLAIM_SEEDS) >= 5


def test_fast_tuning_covers_every_method_and_is_cached():
    t = ch.tunings(True)
    assert set(t) == set(ch.GRIDS) and all(x.size == 4 for x in t.values())
    assert ch.tunings(True) is t
    assert all(np.all(x.scores >= ch.ZERO) for x in t.values())


def test_batched_tuning_scores_equal_a_direct_run():
    t = ch.tunings(True)["MD"]
    from optbook.decisions.mean_field import mirror_descent
    s = t.settings[1]
    direct = mirror_descent(ch.rps_game(), ch.start(ch.TUNING_SEEDS[:1]), s["eta"], ch.FAST_ITERS,
                            record_every=ch.FAST_ITERS).final
    assert t.scores[1] == pytest.approx(max(float(direct[0]), ch.ZERO), rel=1e-12)


def test_fitted_rate_reads_an_exponential():
    t = np.arange(0, 200, 10)
    assert ch.fitted_rate(t, 3 * np.exp(-0.05 * t)) == pytest.approx(0.05)
    assert ch.fitted_rate(t, np.ones_like(t, dtype=float)) == pytest.approx(0.0, abs=1e-12)


def test_simplex_explorer_tau_one_draws_md():
    runs = ch.simplex_runs()
    md, _ = runs["MD"]
    app1, _ = runs[("APP", 1, 0.3)]
    # tau = 1 is MD with step eta / (1 + eta lam): close to MD's path at small eta, not identical
    assert not np.allclose(md, app1)
    assert np.allclose(runs[("APP", 30, 0.3)][0][-1], ch.rps_equilibrium(), atol=1e-4)
    assert np.abs(md[-1] - ch.rps_equilibrium()).max() > 0.1


@pytest.mark.parametrize("call, name", [
    (lambda: ch.simplex_figure(tau=7), "tau"),
    (lambda: ch.bar_figure(variant="calm"), "variant"),
    (lambda: ch.bar_figure(tau=2), "tau"),
    (lambda: ch.best("SGD"), "method"),
    (lambda: ch._batched("SGD", [{}], (0,), 10), "method"),
])
def test_bad_input_is_refused(call, name):
    with pytest.raises(ValueError, match=name):
        call()


def test_beach_bar_grids_have_equal_sizes_and_fast_tuning_reaches_the_premise():
    assert _size(ch.BAR_GRIDS["APP"]) == _size(ch.BAR_GRIDS["MD"])
    assert _size(ch.BAR_FAST_GRIDS["APP"]) == _size(ch.BAR_FAST_GRIDS["MD"])
    assert not set(ch.BAR_TUNING_SEEDS) & set(ch.CLAIM_SEEDS)
    t = ch.bar_tunings(True)
    assert set(t) == {"APP", "MD", "MD strict"}
    assert t["MD strict"].best_score < 0.1 * t["MD"].best_score  # strict monotonicity is what MD needs


def test_app_phases_tile_the_run_and_start_with_the_transient():
    ph = ch.app_phases(True)
    assert ph[0].label == "transient" and ph[0].start == 0
    assert all(a.end == b.start for a, b in zip(ph, ph[1:]))
    assert ph[-1].end == ch.FAST_ITERS


@pytest.mark.parametrize("claim", ["last_iterate", "beach_bar"])
def test_the_controls_tau_one_is_tuned_on_apps_own_grid_and_seeds(claim):
    grids, seeds = (ch.FAST_GRIDS, ch.TUNING_SEEDS) if claim == "last_iterate" else (ch.BAR_FAST_GRIDS, ch.BAR_TUNING_SEEDS)
    t = ch.control_tuning(claim, True)
    assert t.settings == ch._settings(grids["APP"]) and set(t.seeds) <= set(seeds)
    assert not set(t.seeds) & set(ch.CLAIM_SEEDS)
    with pytest.raises(ValueError, match="claim"):
        ch.control_tuning("headline", True)


def test_live_figures_are_the_built_ones_and_moves_do_not_share_state():
    import json
    a = ch.simplex_figure(10, 1.0)
    assert json.loads(a.to_json()) == json.loads(ch._build_simplex_figure(10, 1.0).to_json())
    a.update_layout(height=123)
    assert ch.simplex_figure(10, 1.0).layout.height != 123
    b = ch.bar_figure("strict", 3)
    assert json.loads(b.to_json()) == json.loads(ch._build_bar_figure("strict", 3).to_json())
