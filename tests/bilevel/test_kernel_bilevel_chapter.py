"""Chapter 24's experiment design: independent reference, held-out tuning seeds, equal grids, explorers."""
import numpy as np
import pytest

from optbook.bilevel import kernel_bilevel_chapter as ch


def test_design_seeds_and_grids():
    assert len(ch.SEEDS) >= 5 and ch.REF_SEED not in ch.SEEDS
    assert not set(ch.TUNING_SEEDS) & set(ch.SEEDS)
    assert ch.N_REF >= 8 * max(ch.SIZES) and ch.FAST_N_REF >= 8 * max(ch.FAST_SIZES)
    sizes = {m: int(np.prod([len(v) for v in g.values()])) for m, g in ch.GRIDS.items()}
    assert len(set(sizes.values())) == 1


def test_naive_objective_is_the_ols_objective():
    q = ch.naive_quadratic(50, 0)
    d = ch.make_iv_data(50, 50, rng=0)
    assert np.allclose(q.minimizer(), ch.ols(d.t_out, d.y_out), atol=1e-8)


def test_errors_shrink_between_small_and_large_n():
    ref = ch.reference(ch.FAST_N_REF)
    small = np.median([ch.errors(25, s, ref)[1] for s in range(4)])
    large = np.median([ch.errors(200, s, ref)[1] for s in range(4)])
    assert large < small / 2


def test_live_twins_refuse_values_off_the_grid():
    with pytest.raises(ValueError, match="sigma"):
        ch.rate_figure(0.7)
    with pytest.raises(ValueError, match="confounding"):
        ch.iv_figure(1.0)
    with pytest.raises(ValueError, match="n"):
        ch.landscape_figure(30)


def test_reference_gap_is_the_scaled_distance_of_two_independent_references():
    a, b = ch.reference(400), ch.reference(400, seed=ch.REF_SEED + 1)
    assert ch.reference_gap(400) == pytest.approx(np.linalg.norm(a.grad(ch.OMEGA0) - b.grad(ch.OMEGA0)) / np.sqrt(2))
    assert ch.reference_gap(400) > 0
    with pytest.raises(ValueError, match="n_ref"):
        ch.reference_gap(1)


def test_rate_slope_and_iv_errors_refuse_bad_input():
    with pytest.raises(ValueError, match="sigma"):
        ch.rate_slope(-1.0)
    with pytest.raises(ValueError, match="confounding"):
        ch.iv_errors(float("nan"))


def test_rate_control_keeps_the_target_and_removes_only_inner_growth():
    # at n = FROZEN_N the frozen-inner control is the method itself; at larger n only the outer sample grows
    a, b = ch.variant_quadratic("frozen_inner", ch.FROZEN_N, 0), ch.plugin(ch.FROZEN_N, 0).quadratic
    assert np.allclose(a.A, b.A) and np.allclose(a.B, b.B)
    ref = ch.reference(ch.FAST_N_REF)
    frozen = [np.median([ch.errors(n, s, ref, variant="frozen_inner")[1] for s in range(4)]) for n in (50, 200)]
    assert frozen[1] > frozen[0] / 2  # no inner growth, no shrinking


def test_variants_refuse_unknown_names():
    with pytest.raises(ValueError, match="variant"):
        ch.variant_quadratic("bogus", 50, 0)
    with pytest.raises(ValueError, match="variant"):
        ch.error_sweep(variant="bogus")
    with pytest.raises(ValueError, match="n"):
        ch.variant_quadratic("method", 1, 0)
    with pytest.raises(ValueError, match="seed"):
        ch.variant_quadratic("no_split", 50, 0.5)
