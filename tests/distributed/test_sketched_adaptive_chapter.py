"""Chapter 22's experiment design: fair tuning, held-out seeds, the explorers' inputs."""
import numpy as np
import pytest

from optbook.distributed import sketched_adaptive_chapter as ch


def test_every_method_gets_a_grid_of_the_same_size_and_held_out_seeds():
    assert len({len(g) for g in ch.GRIDS.values()}) == 1
    assert not set(ch.TUNING_SEEDS) & set(ch.CLAIM_SEEDS)
    assert len(ch.CLAIM_SEEDS) >= 5
    assert ch.B_SMALL / ch.D == pytest.approx(0.02, abs=0.001) and ch.B_LARGE / ch.D == pytest.approx(0.1, abs=0.001)


def test_spectra_have_the_intrinsic_dimensions_the_claim_states():
    from optbook.distributed.sketched_adaptive import intrinsic_dimension
    assert intrinsic_dimension(ch.spectrum("power-law")) < 3
    assert intrinsic_dimension(ch.spectrum("flat", 0)) > 0.7 * ch.D


def test_fast_tuning_is_cached_and_uses_the_grid_middle():
    t = ch.tuning("sadl", "power-law", ch.B_SMALL, True)
    assert [s["lr"] for s in t.settings] == list(ch.GRIDS["sadl"][ch.FAST_GRID_SLICE])
    assert ch.tuning("sadl", "power-law", ch.B_SMALL, True) is t


def test_loss_ratio_flags_a_diverged_run_as_nan():
    # a step of 1e3 on AMSGrad blows the flat quadratic up within a few rounds
    r = ch.loss_ratio("sketched-sgd", "flat", ch.B_SMALL, 1e3, 0, fast=True)
    assert np.isnan(r)


@pytest.mark.parametrize("explorer", [ch.EXPLORER_NOISE, ch.EXPLORER_SPECTRUM, ch.EXPLORER_EPS])
def test_explorers_render_every_value(explorer):
    for name, control in explorer.controls.items():
        for value in control.samples():
            fig = explorer.render(**{name: value})
            assert len(fig.data) >= 3


@pytest.mark.parametrize("call, name", [
    (lambda: ch.spectrum("steep"), "kind"),
    (lambda: ch.spectrum_live(0.7), "p"),
    (lambda: ch.eps_live(1e-3), "eps"),
    (lambda: ch.sketch_noise_live(3), "draws"),
    (lambda: ch.tuning("adam", "flat", 20), "method"),
    (lambda: ch.x0(-1), "seed"),
])
def test_bad_input_is_refused(call, name):
    with pytest.raises(ValueError, match=name):
        call()


def test_every_call_form_of_a_run_shares_one_cache_entry():
    a = ch.run("sadl", "power-law", ch.B_SMALL, 0.03, 0, rounds=3)
    assert ch.run("sadl", "power-law", ch.B_SMALL, 0.03, 0, 3, ch.POWER, ch.RUN["eps"], ch.RUN["sketch"]) is a
    assert ch.run("sadl", "power-law", ch.B_SMALL, 0.03, 0, rounds=3, sketch="gaussian") is not a


@pytest.mark.parametrize("kw, name", [({"extra_seeds": ()}, "extra_seeds"), ({"extra_seeds": (1.5,)}, "extra_seeds"),
                                      ({"noise": -1.0}, "noise"), ({"noise": float("nan")}, "noise")])
def test_robustness_checks_refuse_bad_input(kw, name):
    with pytest.raises(ValueError, match=name):
        ch.robustness_checks(**kw)
