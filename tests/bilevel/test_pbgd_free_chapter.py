"""Chapter 23's experiment design: fair tuning, held-out seeds, figure builders."""
import numpy as np
import pytest

from optbook.bilevel import pbgd_free_chapter as ch


def test_every_method_gets_a_grid_of_the_same_size_and_held_out_seeds():
    sizes = {m: int(np.prod([len(v) for v in g.values()])) for m, g in ch.GRIDS.items()}
    assert set(sizes) == set(ch.TUNED) >= set(ch.METHODS) and len(set(sizes.values())) == 1
    assert not set(ch.TUNING_SEEDS) & set(ch.CLAIM_SEEDS)
    assert len(ch.CLAIM_SEEDS) >= 5


def test_fast_tuning_covers_every_method_and_is_cached():
    t = ch.tunings(True)
    assert list(t) == list(ch.TUNED) and all(x.size == 6 for x in t.values())
    assert ch.tunings(True) is t
    assert all(np.isfinite(x.best_score) for x in t.values())


def test_calls_to_tol_is_infinite_when_the_run_stalls():
    assert ch.calls_to_tol("PBGD-Free", 0, 0.2, **ch.best("PBGD-Free", True)) == np.inf
    assert np.isfinite(ch.calls_to_tol("PBGD-Free", 0, 0.0, **ch.best("PBGD-Free", True)))


def test_delta_slider_has_a_frame_per_delta_with_the_floor():
    fig = ch.delta_slider_figure()
    assert [f.name for f in fig.frames] == [f"{d:g}" for d in ch.SLIDER_DELTAS]
    frame = fig.frames[ch.SLIDER_DELTAS.index(0.2)]
    floor = frame.data[-1].y[0]
    assert floor == pytest.approx(ch.toy(0, 0.2).floor())
    free_end = np.asarray(frame.data[0].y)[-1]
    assert free_end == pytest.approx(floor, rel=0.01)      # PBGD-Free's curve ends on the floor


def test_proxy_shift_hurts_pbgd_free_only():
    nums = ch.proxy_numbers()
    assert nums["free_over_aid_s0"] < 1.1 and nums["free_over_aid_smax"] > 1.2


@pytest.mark.parametrize("call, name", [
    (lambda: ch.run("BFGS", 0), "method"),
    (lambda: ch.proxy_run("F2SA", 0.0), "method"),
])
def test_bad_input_is_refused(call, name):
    with pytest.raises(ValueError, match=name):
        call()


def test_pbgds_penalty_constant_is_tuned_and_its_best_is_inside_the_range():
    gammas = sorted(ch.PBGD_GAMMAS.values())
    best = ch.PBGD_GAMMAS[ch.best_pbgd(True)]
    assert gammas[0] < best < gammas[-1]
    assert ch.seeds_solved("PBGD-Free", 0.2, True) == 0 and ch.seeds_solved("PBGD-Free", 0.0, True) == 2
