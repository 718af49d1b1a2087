"""Tests of chapter 07: MMSE denoiser averaging converges to the proximal operator."""
import numpy as np
import pytest
from scipy.optimize import minimize_scalar

from optbook.classical import denoiser_prox as dp
from optbook.core import fd_gradient


@pytest.fixture
def gauss():
    return dp.random_gaussian_prior(4, max_log10_kappa=3.0, rng=3)


def _separable_gaussian(var, dim, half=8.0, n=16001):
    scale = np.sqrt(var)
    return dp.SeparableQuadraturePrior(lambda x: -0.5 * np.asarray(x) ** 2 / var, lambda x: -np.asarray(x) / var,
                                       dim, grid=(-half * scale, half * scale, n), lipschitz=1 / var,
                                       third_derivative_bound=0.0)


# --------------------------------------------------------------------------- Tweedie and denoisers


@pytest.mark.parametrize("sigma", [0.05, 0.3, 2.0])
def test_tweedie_gaussian(gauss, sigma):
    z = np.random.default_rng(0).standard_normal(4)
    fd = fd_gradient(lambda x: float(gauss.log_density(x, sigma)), z, h=1e-5)
    assert np.allclose(gauss.denoise(z, sigma) - z, sigma**2 * fd, atol=1e-7)
    # and the closed-form smoothed score: -(cov + sigma^2 I)^{-1}(z - m)
    exact = -np.linalg.solve(gauss.cov + sigma**2 * np.eye(4), z - gauss.mean)
    assert np.allclose(gauss.smoothed_score(z, sigma), exact, atol=1e-9)


@pytest.mark.parametrize("prior", [dp.LogCoshPrior(4.0, 0.1, 3), dp.LaplacePrior(1.5, 3)],
                         ids=["logcosh-quadrature", "laplace-closed-form"])
@pytest.mark.parametrize("sigma", [0.05, 0.5])
def test_tweedie_by_finite_differences(prior, sigma):
    z = np.array([0.7, -0.2, 0.05])
    fd = fd_gradient(lambda x: float(prior.log_density(x, sigma)), z, h=1e-5)
    assert np.allclose(prior.denoise(z, sigma) - z, sigma**2 * fd, atol=1e-6)


@pytest.mark.parametrize("sigma", [0.02, 0.3, 3.0])
def test_quadrature_denoiser_matches_gaussian_closed_form(sigma):
    var = 0.7
    quad = _separable_gaussian(var, 3)
    exact = dp.GaussianPrior(np.zeros(3), var * np.eye(3))
    z = np.array([1.3, -0.4, 2.0])
    assert np.allclose(quad.denoise(z, sigma), exact.denoise(z, sigma), atol=1e-8, rtol=0)
    assert np.allclose(quad.log_density(z, sigma), exact.log_density(z, sigma), atol=1e-8)


def test_laplace_closed_form_matches_quadrature():
    lam = 1.5
    quad = dp.SeparableQuadraturePrior(lambda x: -lam * np.abs(x), lambda x: -lam * np.sign(x), 3,
                                       grid=(-20, 20, 200001))
    lap = dp.LaplacePrior(lam, 3)
    z = np.array([2.0, -0.3, 0.0])
    for sigma in (0.05, 0.4, 2.0):
        assert np.allclose(lap.denoise(z, sigma), quad.denoise(z, sigma), atol=1e-6)


def test_denoiser_limits_and_symmetry():
    z = np.array([0.8, -1.1])
    for prior in (dp.anisotropic_gaussian(50.0), dp.LaplacePrior(1.0, 2)):
        assert np.allclose(prior.denoise(z, 1e-7), z, atol=1e-6)  # sigma -> 0: identity
        assert np.array_equal(prior.denoise(z, 0.0), z)
        assert np.allclose(prior.denoise(-z, 0.4), -prior.denoise(z, 0.4))  # symmetric priors
        # large noise: the MMSE tends to the prior mean (0), about var(X) z / sigma^2
        assert np.linalg.norm(prior.denoise(z, 30.0)) < 5e-3
    logcosh = dp.LogCoshPrior(4.0, 0.1, 2)
    assert np.array_equal(logcosh.denoise(z, 0.0), z)
    # shrinkage: |D(z)| <= |z| coordinatewise for these symmetric log-concave priors
    assert np.all(np.abs(logcosh.denoise(z, 0.3)) <= np.abs(z))


def test_smoothed_objective_tends_to_objective(gauss):
    y = np.ones(4)
    x = np.random.default_rng(1).standard_normal((5, 4))
    F0 = dp.smoothed_objective(gauss, x, y, 0.7, 0.0)
    assert np.allclose(dp.smoothed_objective(gauss, x, y, 0.7, 1e-5), F0, rtol=1e-7)
    assert F0.shape == (5,)


# --------------------------------------------------------------------------- proximal operators


def test_prox_optimality():
    y = np.array([0.9, -2.0, 0.3])
    gauss = dp.random_gaussian_prior(3, rng=5)
    for prior, tau in ((gauss, 0.8), (dp.LogCoshPrior(4.0, 0.1, 3), 1.0), (dp.LogCoshPrior(1.0, 1.0, 3), 2.5)):
        x = prior.prox(y, tau)
        assert np.max(np.abs(x - y - tau * prior.score(x))) < 1e-10


def test_logcosh_prox_matches_scalar_minimisation():
    prior, tau = dp.LogCoshPrior(2.0, 0.5, 2), 1.3
    y = np.array([3.0, -0.4])
    x = prior.prox(y, tau)
    for i in range(2):
        ref = minimize_scalar(lambda t, yi=y[i]: 0.5 * (t - yi) ** 2 + tau * 2.0 * dp._log_cosh(t / 0.5),
                              bounds=(-5, 5), method="bounded", options={"xatol": 1e-12})
        assert abs(ref.x - x[i]) < 1e-6


def test_laplace_prox_is_soft_thresholding():
    lap = dp.LaplacePrior(2.0, 3)
    assert np.allclose(lap.prox(np.array([3.0, -0.5, -1.5]), 0.5), [2.0, 0.0, -0.5])


# --------------------------------------------------------------------------- the methods


def test_averaging_step_is_gradient_step_on_smoothed_objective(gauss):
    y, tau = np.array([1.0, -2.0, 0.5, 3.0]), 0.6
    res = dp.mmse_averaging(gauss.denoise, y, tau, maxiter=6)
    for k in range(6):
        x = res.iterates[k]
        alpha, sigma = 1.0 / (k + 2), np.sqrt(tau / (k + 1))
        grad_F = (x - y) + tau * np.linalg.solve(gauss.cov + sigma**2 * np.eye(4), x - gauss.mean)
        assert np.allclose(res.iterates[k + 1], x - alpha * grad_F, atol=1e-12, rtol=0)
        assert alpha == pytest.approx(1.0 / (1.0 + tau / sigma**2))  # step = 1 / L_sigma
    assert np.allclose(res.trace.step_size[:6], 1.0 / np.arange(2, 8))


def test_gaussian_error_is_exactly_initial_gap_over_k_plus_1():
    """For a Gaussian prior and x0 = y the iterates are x* + (y - x*)/(k+1) (derived in the chapter)."""
    prior = dp.random_gaussian_prior(6, max_log10_kappa=5.0, rng=11)
    y, tau = prior.mean + np.random.default_rng(2).standard_normal(6), 2.0
    x_star = prior.prox(y, tau)
    res = dp.mmse_averaging(prior.denoise, y, tau, maxiter=200, x_star=x_star)
    k = np.arange(201)
    assert np.allclose(res.iterates, x_star + np.outer(1.0 / (k + 1), y - x_star), atol=1e-11)


def test_theorem1_bound_holds_on_random_gaussians():
    gen = np.random.default_rng(4)
    for _ in range(6):
        d = int(gen.integers(1, 9))
        prior = dp.random_gaussian_prior(d, max_log10_kappa=4.0, rng=gen)
        y, tau = 4 * gen.standard_normal(d), float(gen.uniform(0.1, 5))
        x_star = prior.prox(y, tau)
        err = dp.mmse_averaging(prior.denoise, y, tau, maxiter=500, x_star=x_star).trace["error"][1:]
        assert np.all(err <= dp.theorem1_bound(np.arange(1, 501), float(np.linalg.norm(y - x_star)), tau))


def test_theorem1_bound_values_of_the_card():
    prior = dp.anisotropic_gaussian(500.0)
    dist0 = float(np.linalg.norm(dp.Y2 - prior.prox(dp.Y2, 1.0)))
    assert dp.theorem1_bound([10, 100, 1000], dist0, 1.0) == pytest.approx([0.944, 0.128, 0.0155], abs=6e-4)
    assert dp.theorem1_bound(10, 1.0, 1.0, M=2.0, dim=4) == pytest.approx((np.log(10) + 7) / 11 * 5.0)


def test_logcosh_averaging_converges_at_rate_one_over_k():
    prior = dp.LogCoshPrior(4.0, 0.1, 2)
    y = np.array([0.8, -1.5])
    x_star = prior.prox(y, 1.0)
    err = dp.mmse_averaging(prior.denoise, y, 1.0, maxiter=200, x_star=x_star).trace["error"]
    k = np.arange(10, 201)
    assert -1.15 <= dp.loglog_slope(k, err[k]) <= -0.85
    assert err[200] < err[10] / 10


def test_fixed_sigma_averaging_converges_to_smoothed_prox(gauss):
    y, sigma, alpha = np.array([1.0, 2.0, -1.0, 0.0]), 0.7, 0.3
    res = dp.fixed_sigma_averaging(gauss.denoise, y, sigma=sigma, alpha=alpha, maxiter=3000)
    smoothed = dp.GaussianPrior(gauss.mean, gauss.cov + sigma**2 * np.eye(4))
    assert np.allclose(res.x, smoothed.prox(y, (1 - alpha) * sigma**2 / alpha), atol=1e-9)
    assert np.linalg.norm(res.x - gauss.prox(y, (1 - alpha) * sigma**2 / alpha)) > 1e-3  # biased


@pytest.mark.parametrize("c,s", [(1.0, 0.5), (1.0, 2.0), (0.5, 0.5)])
def test_decoupled_schedule_targets_prox_with_tau_s_over_c(c, s):
    prior, y, tau = dp.anisotropic_gaussian(20.0), np.array([1.0, 1.0]), 1.0
    res = dp.mmse_averaging(prior.denoise, y, tau, maxiter=4000, alpha_scale=c, sigma_scale=s)
    target = prior.prox(y, tau * s / c)
    assert np.linalg.norm(res.x - target) < 0.05 * np.linalg.norm(y - target)
    if s != c:
        assert np.linalg.norm(res.x - prior.prox(y, tau)) > 0.05


def test_gradient_descent_decreases_F_and_converges():
    prior, y = dp.anisotropic_gaussian(10.0), np.array([1.0, -0.5])
    x_star = prior.prox(y, 1.0)
    res = dp.gradient_descent_prox(prior.score, y, 1.0, prior.lipschitz, maxiter=300, x_star=x_star)
    F = dp.smoothed_objective(prior, res.iterates, y, 1.0, 0.0)
    assert np.all(np.diff(F) <= 1e-14)
    assert res.trace["error"][-1] < 1e-10
    stop = dp.gradient_descent_prox(prior.score, y, 1.0, prior.lipschitz, maxiter=300, x_star=x_star, tol=1e-6)
    assert stop.trace["error"][-1] <= 1e-6 and stop.nit < 300


def test_determinism_and_callback():
    a = dp.random_gaussian_prior(5, rng=9)
    b = dp.random_gaussian_prior(5, rng=9)
    assert np.array_equal(a.cov, b.cov) and np.array_equal(a.mean, b.mean)
    seen = []
    r1 = dp.mmse_averaging(a.denoise, np.ones(5), 1.0, maxiter=20, callback=seen.append)
    r2 = dp.mmse_averaging(b.denoise, np.ones(5), 1.0, maxiter=20)
    assert np.array_equal(r1.iterates, r2.iterates) and len(seen) == 20
    assert np.all(np.isnan(r1.trace["error"]))  # no x_star given


def test_crossover():
    assert dp.crossover([1.0, 0.5, 0.3, 0.2], [2.0, 0.6, 0.1, 0.05]) == 2
    assert dp.crossover([1.0, 0.5], [2.0, 0.6]) is None
    assert dp.crossover([1.0, 0.5], [0.5, 0.1]) == 0


def test_loglog_slope():
    k = np.arange(1, 100)
    assert dp.loglog_slope(k, 3.0 / k**1.5) == pytest.approx(-1.5)


def test_figures_and_explorers():
    fig = dp.level_set_slider()
    assert len(fig.frames) == len(dp.SIGMAS) and fig.layout.sliders[0].active == 2
    # the minimiser marker moves with sigma (last trace of each frame)
    xs = [fr.data[-1].x[0] for fr in fig.frames]
    assert len(set(np.round(xs, 6))) == len(xs)
    live = dp.EXPLORER_SCHEDULE.render(alpha_scale=1.0, sigma_scale=1.0)
    assert len(live.data) == 3
    assert dp.schedule_run(1.0, 0.5)["predicted_bias"] > 0.05 > dp.schedule_run(1.0, 1.0)["predicted_bias"]


# --------------------------------------------------------------------------- bad input


def test_bad_input_is_rejected():
    g = dp.anisotropic_gaussian(10.0)
    y = np.ones(2)
    cases = [
        (lambda: dp.mmse_averaging(g.denoise, [1.0, np.nan], 1.0), "y"),
        (lambda: dp.mmse_averaging(g.denoise, y, 0.0), "tau"),
        (lambda: dp.mmse_averaging(g.denoise, y, 1.0, alpha_scale=2.5), "alpha_scale"),
        (lambda: dp.mmse_averaging(g.denoise, y, 1.0, sigma_scale=0.0), "sigma_scale"),
        (lambda: dp.mmse_averaging(g.denoise, y, 1.0, maxiter=-1), "maxiter"),
        (lambda: dp.mmse_averaging(g.denoise, y, 1.0, x0=np.ones(3)), "x0"),
        (lambda: dp.mmse_averaging(g.denoise, y, 1.0, tol=1e-3), "tol"),
        (lambda: dp.mmse_averaging(g.denoise, y, 1.0, x_star=[1.0]), "x_star"),
        (lambda: dp.mmse_averaging("not callable", y, 1.0), "denoiser"),
        (lambda: dp.mmse_averaging(lambda z, s: z * np.nan, y, 1.0, maxiter=2), "non-finite"),
        (lambda: dp.mmse_averaging(g.denoise, y, 1.0, callback=3), "callback"),
        (lambda: dp.fixed_sigma_averaging(g.denoise, y, sigma=-1.0, alpha=0.5), "sigma"),
        (lambda: dp.fixed_sigma_averaging(g.denoise, y, sigma=1.0, alpha=0.0), "alpha"),
        (lambda: dp.gradient_descent_prox(g.score, y, 1.0, 0.0), "lipschitz"),
        (lambda: dp.gradient_descent_prox(None, y, 1.0, 1.0), "score"),
        (lambda: dp.GaussianPrior([0.0, 0.0], [[1.0, 2.0], [2.0, 1.0]]), "cov"),
        (lambda: dp.GaussianPrior([0.0, np.inf], np.eye(2)), "mean"),
        (lambda: dp.GaussianPrior([0.0], np.eye(2)), "cov"),
        (lambda: g.denoise([1.0, 2.0, 3.0], 0.1), "z"),
        (lambda: g.denoise(y, -0.1), "sigma"),
        (lambda: g.prox(y, -1.0), "tau"),
        (lambda: g.log_density(np.ones(3)), "x"),
        (lambda: dp.anisotropic_gaussian(0.5), "kappa"),
        (lambda: dp.random_gaussian_prior(0), "dim"),
        (lambda: dp.random_gaussian_prior(2, max_log10_kappa=-1.0), "max_log10_kappa"),
        (lambda: dp.LogCoshPrior(b=0.0), "b"),
        (lambda: dp.LogCoshPrior(c=-1.0), "c"),
        (lambda: dp.LogCoshPrior(grid=(1.0, -1.0, 101)), "grid"),
        (lambda: dp.LogCoshPrior(grid=(-8.0, 8.0, 5)), "grid"),
        (lambda: dp.LogCoshPrior(dim=2).denoise(y, 1e-4), "sigma"),
        (lambda: dp.SeparableQuadraturePrior(1.0, 2.0, 2), "log_q"),
        (lambda: dp.LaplacePrior(lam=0.0), "lam"),
        (lambda: dp.LaplacePrior(dim=0), "dim"),
        (lambda: dp.theorem1_bound(0, 1.0, 1.0), "k"),
        (lambda: dp.theorem1_bound(5, -1.0, 1.0), "dist0"),
        (lambda: dp.theorem1_bound(5, 1.0, 1.0, M=-1.0), "M"),
        (lambda: dp.smoothed_objective(g, np.ones(2), [1.0, 2.0, 3.0], 1.0, 0.1), "y"),
        (lambda: dp.loglog_slope([1, 2], [1.0]), "same length"),
        (lambda: dp.level_set_traces(-1.0), "sigma"),
        (lambda: dp.race_traces(0.1), "kappa"),
        (lambda: dp.crossover([1.0, 2.0], [1.0]), "err_a"),
        (lambda: dp.path_figure(n_steps=0), "n_steps"),
    ]
    for make, word in cases:
        with pytest.raises(ValueError, match=word):
            make()
