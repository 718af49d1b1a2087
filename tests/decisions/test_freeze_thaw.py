"""Chapter 31's core: utility, surrogate, acquisition, stopping rule, policies, benchmark."""
import numpy as np
import pytest

from optbook.decisions import freeze_thaw as ft

B, T = 120, 30


def test_utility_monotone_vectorised_and_minus_inf_beyond_budget():
    b = np.arange(0, B + 1)
    u = ft.utility(b, 0.7, 0.3, 1.0, B)
    assert u.shape == b.shape and np.all(np.diff(u) < 0)
    y = np.linspace(0, 1, 11)
    assert np.all(np.diff(ft.utility(40, y, 0.3, 2.0, B)) > 0)
    assert ft.utility(B + 1, 0.9, 0.3, 1.0, B) == -np.inf
    assert ft.utility(60, 0.5, 0.4, 2.0, B) == pytest.approx(0.5 - 0.4 * 0.25)
    np.testing.assert_allclose(ft.utility(b, 0.7, 0.0, 1.0, B), 0.7)  # alpha = 0: accuracy alone


@pytest.mark.parametrize("bad", [dict(alpha=-0.1), dict(alpha=1.5), dict(c=0.0), dict(budget=0)])
def test_utility_rejects_bad_input(bad):
    kw = dict(alpha=0.2, c=1.0, budget=B) | bad
    with pytest.raises(ValueError, match=list(bad)[0]):
        ft.utility(10, 0.5, **kw)


def test_fit_utility_recovers_alpha_and_c_from_preferences():
    g = np.random.default_rng(0)
    o1 = np.c_[g.integers(1, B, 400), g.random(400)]
    o2 = np.c_[g.integers(1, B, 400), g.random(400)]
    d = ft.utility(o1[:, 0], o1[:, 1], 0.4, 2.0, B) - ft.utility(o2[:, 0], o2[:, 1], 0.4, 2.0, B)
    pref = (g.random(400) < 1 / (1 + np.exp(-30 * d))).astype(float)
    fit = ft.fit_utility(o1, o2, pref, B)
    assert abs(fit["alpha"] - 0.4) < 0.08 and 1.3 < fit["c"] < 3.0
    with pytest.raises(ValueError, match="prefer_first"):
        ft.fit_utility(o1, o2, pref[:-1], B)


def _samples(vals, counts):
    """Deterministic surrogate: every sample equals ``vals`` (N, T)."""
    return np.repeat(np.asarray(vals, float)[:, None, :], 5, axis=1), np.asarray(counts)


def test_deterministic_samples_give_the_exact_best_gain_and_p_in_0_1():
    vals = np.zeros((2, T))
    vals[0] = np.linspace(0.3, 0.9, T)   # climbs
    vals[1] = 0.2                        # flat and poor
    S, counts = _samples(vals, [5, 0])
    b, best, alpha = 20, 0.5, 0.3
    A, p = ft.acquisition(S, counts, b, best, alpha=alpha, c=1.0, budget=B)
    delta = np.arange(1, T - 5 + 1)
    run = np.maximum.accumulate(np.maximum(vals[0, 5:], best))
    exact = np.max(np.maximum(ft.utility(b + delta, run, alpha, 1.0, B) - ft.utility(b, best, alpha, 1.0, B), 0))
    assert A[0] == pytest.approx(exact) and p[0] == 1.0
    assert A[1] == 0.0 and p[1] == 0.0  # every sample below the incumbent: no gain, no chance


def test_observed_epochs_are_masked_before_the_running_max():
    vals = np.full((1, T), 0.1)
    vals[0, :3] = 0.99  # already-observed epochs are high: must not count as future gains
    S, counts = _samples(vals, [3])
    A, p = ft.acquisition(S, counts, 10, 0.5, alpha=0.2, c=1.0, budget=B)
    assert A[0] == 0.0 and p[0] == 0.0


def test_fully_trained_and_over_budget_configurations_are_never_selected():
    vals = np.full((2, T), 0.9)
    S, counts = _samples(vals, [T, 2])
    A, p = ft.acquisition(S, counts, 10, 0.1, alpha=0.2, c=1.0, budget=B)
    assert A[0] == -np.inf and p[0] == 0.0 and A[1] > 0
    A, _ = ft.acquisition(S, counts, B, 0.1, alpha=0.2, c=1.0, budget=B)  # no budget left
    assert np.all(A == -np.inf)


def test_stop_threshold_is_tau_at_one_half_and_monotone():
    for tau in (0.05, 0.2, 0.7):
        assert ft.stop_threshold(0.5, tau) == pytest.approx(tau, abs=1e-12)
    p = np.linspace(0, 1, 101)
    th = ft.stop_threshold(p, 0.2, -1.0)
    assert th[0] == 0.0 and th[-1] == pytest.approx(1.0) and np.all(np.diff(th) >= 0)
    with pytest.raises(ValueError, match="tau"):
        ft.stop_threshold(0.5, 1.0)
    with pytest.raises(ValueError, match="p must"):
        ft.stop_threshold(1.2)


def test_degenerate_regret_range_never_stops():
    assert ft.normalised_regret(0.3, 0.3, 0.3) == -np.inf
    assert ft.normalised_regret(0.5, 0.1, 0.3) == pytest.approx(0.5)


@pytest.fixture(scope="module")
def bench():
    X = np.random.default_rng(5).random((12, 3))
    tables = np.stack([ft.synthetic_task(X, k, T=T, seed=1) for k in range(6)])
    px, py = ft.lc_mixup(X, tables, 6, 100, rng=0)
    theta = ft.fit_curves(py, rng=1)
    return X, tables, px, py, theta


def test_mixup_is_convex_and_stays_in_unit_interval(bench):
    X, tables, px, py, _ = bench
    assert py.min() >= 0 and py.max() <= 1 and py.shape == (6 * 12 + 6 * 12 + 100, T)
    np.testing.assert_array_equal(py[:72], tables.reshape(72, T))  # originals first
    lo, hi = X.min(0), X.max(0)
    assert np.all(px >= lo - 1e-12) and np.all(px <= hi + 1e-12)
    # a dataset-mixed value lies between the two tasks' extremes at that (config, epoch)
    mixed = py[72:144].reshape(6, 12, T)
    assert np.all(mixed >= tables.min(0) - 1e-12) and np.all(mixed <= tables.max(0) + 1e-12)


def test_fit_curves_reproduces_parametric_curves(bench):
    _, tables, _, py, theta = bench
    resid = np.abs(ft.curve(theta, T) - py)
    assert np.median(resid) < 0.02


def test_posterior_narrows_as_the_prefix_grows(bench):
    X, _, px, _, theta = bench
    prior = np.concatenate([ft.knn_prior(X, px, theta, 32), np.broadcast_to(ft.broad_prior(16, 0), (12, 16, 4))], 1)
    sur = ft.ParticleLC(prior, T, lik_sd=0.05, jitter=0.02)
    held = ft.synthetic_task(X, 50, T=T, seed=1)
    widths = []
    for k in (1, 4, 10):
        S = sur.sample(held, np.full(12, k), 400, rng=2)
        lo, hi = np.percentile(S[:, :, k], [5, 95], axis=1)
        widths.append(np.median(hi - lo))
    assert widths[0] > widths[1] > widths[2]


def test_common_random_numbers_and_seeded_reproducibility(bench):
    X, _, px, _, theta = bench
    prior = ft.knn_prior(X, px, theta, 16)
    same = np.repeat(prior[:1], 12, axis=0)  # every configuration with the same prior
    sur = ft.ParticleLC(same, T)
    Y, counts = np.full((12, T), np.nan), np.zeros(12, dtype=int)
    S = sur.sample(Y, counts, 50, rng=3)
    assert np.array_equal(S[0], S[7])  # CRN: identical configurations get identical samples
    assert np.array_equal(S, sur.sample(Y, counts, 50, rng=3))


def test_alpha_zero_never_stops_and_policies_respect_the_budget(bench):
    X, _, px, _, theta = bench
    sur = ft.ParticleLC(ft.knn_prior(X, px, theta, 16), T)
    curves = ft.synthetic_task(X, 77, T=T, seed=1)
    r = ft.run_hpo(ft.CFBO(sur, alpha=0.0), curves, 60, rng=0)
    assert not r.stopped and r.stop_budget == 60 and max(r.log["r"]) == 0.0
    r2 = ft.run_hpo(ft.CFBO(sur, alpha=0.0), curves, 60, rng=0)
    assert np.array_equal(r.picks, r2.picks)
    stopper = ft.run_hpo(ft.CFBO(sur, alpha=0.6), curves, 60, rng=0)
    assert stopper.stopped and stopper.stop_budget < 60
    for pol in (ft.RandomSearch(7), ft.SuccessiveHalving(1), ft.FreezeThawEI(sur, 1)):
        run = ft.run_hpo(pol, curves, 60, rng=1)
        assert run.stop_budget == 60 and np.all(np.diff(run.best) >= 0)
        assert np.bincount(run.picks, minlength=12).max() <= T


def test_successive_halving_promotes_the_best_third():
    curves = np.tile(np.linspace(0.1, 0.5, T), (9, 1)) + np.arange(9)[:, None] * 0.05
    run = ft.run_hpo(ft.SuccessiveHalving(1, n0=9, eta=3), curves, 9 + 6 + 6, rng=0)
    counts = np.bincount(run.picks, minlength=9)
    assert sorted(counts[6:]) == [3, 3, 9] and np.all(counts[:6] == 1)


def test_regret_is_zero_at_the_oracle_and_bad_input_is_rejected():
    curves = np.array([[0.2, 0.5, 0.6], [0.1, 0.2, 0.3]])
    hi, lo = ft.oracle_bounds(curves, 0.3, 1.0, 6)
    assert hi == pytest.approx(max(0.5 - 0.1, 0.6 - 0.15, 0.2 - 0.05))
    assert lo == pytest.approx(0.1 - 0.3)
    run = ft.HPORun(np.array([0.2, 0.5, 0.6]), np.array([0, 0, 0]), 3, True)
    assert ft.run_regret(run, curves, 0.3, 1.0, 6) == pytest.approx(0.0)
    late = ft.HPORun(np.array([0.2, 0.5, 0.6, 0.6]), np.array([0, 0, 0, 1]), 4, False)
    assert ft.run_regret(late, curves, 0.3, 1.0, 6) == pytest.approx(0.05 / (0.45 + 0.2))
    with pytest.raises(ValueError, match="curves"):
        ft.run_hpo(ft.RandomSearch(2), curves * 3, 4)
    with pytest.raises(ValueError, match="counts"):
        ft.acquisition(np.zeros((2, 3, 4)), np.array([0, 9]), 0, 0.1, alpha=0.2, c=1.0, budget=10)
    with pytest.raises(ValueError, match="prior"):
        ft.ParticleLC(np.zeros((3, 5)), T)
    with pytest.raises(ValueError, match="threshold"):
        ft.CFBO(ft.ParticleLC(np.full((2, 4), 0.5), T), alpha=0.2, threshold="median")
    with pytest.raises(ValueError, match="k must"):
        ft.knn_prior(np.zeros((2, 1)), np.zeros((3, 1)), np.zeros((3, 4)), 5)
