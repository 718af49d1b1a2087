"""Tests of chapter 04's experiments, claims' building blocks, figures and explorers."""
import numpy as np
import pytest

from optbook.classical import relu_gradient_flow as rg
from optbook.classical import relu_gradient_flow_chapter as ch
from optbook.core import Tuning


def test_energy_bounds_hold_along_orthogonal_runs():
    res = ch.orthogonal_run(50, 0)
    tr = res.trace
    n = 50
    ok = np.isfinite(tr["rate"])
    assert np.all(tr["rate"][ok] >= 2 * tr["energy_min"][ok] / n * (1 - 1e-9))
    assert np.all(tr["rate"][ok] <= 16 * tr["energy_max"][ok] / n * (1 + 1e-9))
    lo, hi = rg.rate_bounds(res.a, res.W, res.X)
    assert lo == pytest.approx(2 * tr["energy_min"][-1] / n, rel=1e-6)
    assert hi == pytest.approx(16 * tr["energy_max"][-1] / n, rel=1e-6)


def test_late_rate_scales_like_one_over_n_on_orthogonal_data():
    rates = [rg.late_rate(ch.orthogonal_run(n, 0).trace) for n in (50, 200)]
    assert 2.0 <= rates[0] / rates[1] <= 5.5  # 1/n predicts 4, 1/sqrt(n) predicts 2


def test_ftol_does_not_stop_a_converging_run():
    res = ch.orthogonal_run(50, 1)
    assert res.success and res.fun <= 1e-25
    assert "below tol" in res.message


def test_success_interval_is_wilsons_score_interval():
    def wilson(k, n, z=1.959963984540054):
        ph = k / n
        centre = (ph + z * z / (2 * n)) / (1 + z * z / n)
        half = z / (1 + z * z / n) * np.sqrt(ph * (1 - ph) / n + z * z / (4 * n * n))
        return centre - half, centre + half
    for k, n in ((0, 10), (9, 10), (78, 80), (234, 240)):
        assert ch.success_interval(k, n) == pytest.approx(wilson(k, n), abs=1e-9)
    lo, hi = ch.success_interval(40, 40)
    assert hi == 1.0 and lo == pytest.approx(40 / (40 + 1.959963984540054**2), rel=1e-9)


def test_half_width_converges_less_often_than_the_width_rule():
    full = ch.log_width_experiment((50,), 20)
    half = ch.log_width_experiment((50,), 20, half_width=True)
    assert [r["p"] for r in full["rows"]] == [25] and [r["p"] for r in half["rows"]] == [12]
    assert full["p_conv"] > half["p_conv"]
    assert full["conv_low"] <= full["p_conv"] <= full["conv_high"]
    assert full["rf_p_conv"] == 0.0  # 25 random features cannot fit 50 points to sum r^2 <= 1
    assert full["rf_wide_trials"] == 20 and full["rf_wide_p_conv"] == 1.0  # 50 of them interpolate


def test_wide_random_features_use_the_runs_data_and_their_own_weights():
    n, d, seed = 30, 60, 3
    X, y = rg.make_weakly_interacting_data(n, d, rng=np.random.default_rng(seed))
    assert np.array_equal(ch.run_once(n, d, 10, seed).y, y)
    assert ch._wide_random_features_fit(n, d, seed)
    ex = ch.log_width_experiment((n,), (seed, seed + 1), wide_seeds=1)
    assert ex["rf_wide_trials"] == 1


def test_tuning_gives_both_methods_the_same_grid_and_seeds():
    net, rf = ch.tune_step_size(n=50, d=100, seeds=(1000, 1001), lrs=(0.5, 2.0, 1e6))
    assert isinstance(net, Tuning) and isinstance(rf, Tuning)
    assert net.settings == rf.settings and net.seeds == rf.seeds == (1000, 1001)
    assert np.isnan(net.scores[-1])  # a diverged run scores NaN and ranks last
    assert net.best_score < 0.05 < rf.best_score


def test_rate_scaling_reports_rates_and_bounds():
    rs = ch.rate_scaling((50, 100), (0,))
    assert rs["rates"].shape == (2, 1) and rs["reached"].all()
    assert rs["median_rate"][0] > rs["median_rate"][1] > 0
    assert rs["lower_ratio"] >= 1.0 and rs["upper_ratio"] <= 1.0


def test_explorers_build_figures():
    for ex in (ch.EXPLORER_WIDTH, ch.EXPLORER_RATE, ch.EXPLORER_TOY):
        fig = ex.render()
        assert len(fig.data) >= 2


def test_success_figure_shows_intervals():
    fig = ch.success_figure(ch.success_rates(50, 100, (4, 25), 5))
    assert fig.data[0].error_y.array is not None and len(fig.data[0].x) == 2


def test_orthogonal_runs_need_d_at_least_n():
    with pytest.raises(ValueError, match=r"\bd\b"):
        ch.run_once(10, 5, 3, 0, orthogonal=True)


# ------------------------------------------------------------------ bad input, for every public function

NAN, INF = float("nan"), float("inf")
BAD_INPUTS = {
    ch.success_interval: (dict(successes=3, trials=10), [("trials", 0), ("successes", -1), ("successes", 11),
                                                          ("confidence", NAN), ("confidence", 1.0)]),
    ch.run_once: (dict(n=10, d=20, p=5, seed=0), [("n", 0), ("d", 1.5), ("p", -1), ("seed", -1),
                                                   ("correlation", NAN), ("lr", INF), ("maxiter", -1), ("tol", -1.0)]),
    ch.success_rates: (dict(n=10, d=20, ps=(5,), seeds=2), [("n", 0), ("ps", ()), ("ps", (0,)), ("seeds", ()),
                                                            ("seeds", 0), ("seeds", (-1,))]),
    ch.log_width_experiment: (dict(ns=(10,), seeds=2), [("ns", ()), ("ns", (0,)), ("seeds", ()), ("d_per_n", 0),
                                                        ("wide_seeds", -1), ("wide_seeds", 1.5)]),
    ch.tune_step_size: (dict(n=10, d=20, seeds=(0,), lrs=(1.0,)), [("n", 0), ("seeds", ()), ("lrs", ()),
                                                                   ("lrs", (NAN,)), ("lrs", (-1.0,))]),
    ch.orthogonal_run: (dict(n=10, seed=0), [("n", 0), ("seed", -1), ("p", 0), ("loss_floor", 0.0),
                                             ("loss_floor", NAN)]),
    ch.rate_scaling: (dict(ns=(10,), seeds=(0,)), [("ns", ()), ("ns", (1.5,)), ("seeds", ())]),
    ch.linear_vs_network: (dict(cases=((10, 20),), seeds=1), [("cases", ()), ("cases", ((10,),)),
                                                              ("cases", ((10, 0),)), ("seeds", ())]),
    ch.baseline_runs: (dict(n=10, d=20, steps=3), [("n", 0), ("d", 0), ("seed", -1), ("steps", 0)]),
    ch.watch_figure: (dict(n=30, d=60), [("n", 1), ("d", 0), ("seed", 1.5)]),
    ch.success_figure: (dict(sr=ch.success_rates(10, 20, (5,), 2)), [("sr", {}), ("sr", None), ("eps", NAN)]),
    ch.log_width_figure: (dict(method=ch.log_width_experiment((10,), 2), control=ch.log_width_experiment((10,), 2)),
                          [("method", {}), ("control", None)]),
    ch.tuning_panel: (dict(tunings=ch.tune_step_size(n=10, d=20, seeds=(0,), lrs=(1.0, 2.0))),
                      [("tunings", []), ("tunings", [None])]),
    ch.width_slider_figure: (dict(n=10, d=20, ps=(2, 4)), [("n", 0), ("ps", ()), ("ps", (0,)), ("seed", -1)]),
    ch.width_figure: (dict(n=10, d=20, p=4, seed=0), [("n", 0), ("d", NAN), ("p", 0), ("seed", -1)]),
    ch.rate_slider_figure: (dict(ns=(10, 12)), [("ns", ()), ("ns", (0,)), ("seed", -1)]),
    ch.rate_figure: (dict(n=10, seed=0), [("n", 0), ("seed", NAN)]),
    ch.toy_slider_figure: (dict(log10_ns=(2, 4)), [("log10_ns", ()), ("log10_ns", (NAN,)), ("log10_ns", (-1,))]),
    ch.toy_figure: (dict(log10_n=4, p=2), [("log10_n", NAN), ("log10_n", INF), ("p", 0)]),
}


def test_every_public_function_has_bad_input_cases():
    """Claims (claim_*) take only fast/control flags; everything else public is covered."""
    public = {name for name, obj in vars(ch).items() if callable(obj) and not name.startswith(("_", "claim_"))
              and getattr(obj, "__module__", None) == ch.__name__ and not isinstance(obj, type)}
    missing = public - {f.__name__ for f in BAD_INPUTS}
    assert not missing, f"add bad-input cases for {sorted(missing)}"


CASES = [(f, arg, bad) for f, (_, bads) in BAD_INPUTS.items() for arg, bad in bads]


@pytest.mark.parametrize("f, arg, bad", CASES, ids=[f"{f.__name__}-{a}-{i}" for i, (f, a, _) in enumerate(CASES)])
def test_bad_input_raises_value_error_naming_the_argument(f, arg, bad):
    valid, _ = BAD_INPUTS[f]
    f(**valid)  # the valid call works, so the error below is the bad argument's
    with pytest.raises(ValueError, match=rf"\b{arg}\b"):
        f(**{**valid, arg: bad})
