"""Chapter 28's experiment design: fair tuning, held-out instances, figure inputs."""
import numpy as np
import pytest

from optbook.decisions import ski_rental as sr
from optbook.decisions import ski_rental_chapter as ch


def test_every_baseline_has_the_same_grid_and_held_out_instances():
    t = ch.tunings(True)
    assert set(t) == set(ch.BASELINES) and {x.size for x in t.values()} == {len(ch.SCALES)}
    assert not set(ch.TUNING_SEEDS) & set(ch.CLAIM_SEEDS) and len(ch.CLAIM_SEEDS) >= 5


@pytest.mark.parametrize("seed", [0, 1, 100])
def test_random_instances_are_submodular_and_reproducible(seed):
    a, b = ch.random_instance(seed), ch.random_instance(seed)
    assert np.array_equal(a.buy, b.buy) and sr.is_submodular(a.buy)
    assert sr.is_submodular(ch.random_instance(seed, n=3).buy)


def test_la_expected_ratio_matches_monte_carlo():
    b, lam = 10, 0.5
    T, y = np.array([3, 8, 15, 25]), np.array([20.0, 2.0, 12.0, 4.0])
    exact = ch.la_expected_ratio(b, lam, T, y)
    g = np.random.default_rng(0)
    for t, pred, e in zip(T, y, exact):
        p = sr.purohit_probs(b, pred, lam)
        days = g.choice(np.arange(1, p.size + 1), size=20000, p=p)
        cost = np.where(days > t, t, days - 1 + b)
        assert cost.mean() / min(t, b) == pytest.approx(e, rel=0.02)
    with pytest.raises(ValueError, match="shape"):
        ch.la_expected_ratio(b, lam, T, y[:2])


def test_la_curve_at_zero_error_matches_the_experiment():
    # with exact predictions the curve is the mean over all seasons; the experiment samples them
    assert ch.la_curve(0.5)[0] == pytest.approx(ch.la_experiment(0.5, 0.0, 0, draws=20000), abs=0.01)
    assert ch.la_curve(1.0) == pytest.approx(np.full(len(ch.ERRORS), ch.la_curve(1.0)[0]))


def test_figures_build_and_frames_cover_the_grid():
    fig = ch.combo_slider_figure()
    assert len(fig.frames) == len(ch.COMBO_PRICES)
    assert len(ch.trust_slider_figure().frames) == len(ch.TRUSTS)
    assert len(ch.envelope_figure().data) == 5
    with pytest.raises(ValueError, match="combo"):
        ch.card_instance(20.0)
    with pytest.raises(ValueError, match="error"):
        ch.la_experiment(0.5, -1.0, 0)
