"""Tests of chapter 07: MMSE denoiser averaging converges to the proximal operator."""
import subprocess
import sys

import numpy as np
import pytest
from scipy.optimize import minimize_scalar

from optbook.classical import denoiser_prox as dp
from optbook.core import fd_gradient, loglog_slope


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


@pytest.mark.parametrize("prior", [dp.LogCoshPrior(4.0, 0.1, 3), dp.LaplacePrior(1.5, 3),
                                   dp.LogCoshPrior(1.0, [1.0, 0.05, 0.3], 3, grid=(-8.0, 8.0, 8001))],
                         ids=["logcosh-quadrature", "laplace-closed-form", "anisotropic-logcosh"])
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


@pytest.mark.parametrize("kappa", [10.0, 1000.0, 1e4])
def test_anisotropic_quadrature_matches_a_four_times_finer_grid(kappa):
    prior = dp.anisotropic_logcosh(kappa)
    fine = dp.LogCoshPrior(1.0, prior.c, 2, grid=(-10.0, 10.0, 4 * (prior.nodes.size - 1) + 1))
    for sigma in (prior.step * 1.01, 0.05, 1.0):
        for z in ([0.3, -0.2], [4.0, 2.5], [-1.0, 0.01]):
            assert np.allclose(prior.denoise(np.array(z), sigma), fine.denoise(np.array(z), sigma), atol=2e-7)


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


def test_logcosh_constants_follow_their_definitions():
    """L is the largest curvature; M, by the paper's convention, the largest Frobenius norm of
    the third-derivative tensor of log p: for a separable prior the root-sum-square of the
    coordinates' bounds, reached where every coordinate has tanh^2(x_i / c_i) = 1/3."""
    b, c = np.array([1.0, 2.0, 0.5]), np.array([1.0, 0.2, 0.05])
    prior = dp.LogCoshPrior(b, c, 3, grid=(-8.0, 8.0, 8001))
    assert prior.lipschitz == pytest.approx(np.max(b / c**2))
    x_max = c * np.arctanh(1 / np.sqrt(3))
    h = 1e-4 * c
    # third derivative of log q_i = second derivative of the score, by central differences
    third = (prior.score(x_max + h) - 2 * prior.score(x_max) + prior.score(x_max - h)) / h**2
    frobenius = np.linalg.norm(third)  # the tensor is diagonal
    assert prior.third_derivative_bound == pytest.approx(frobenius, rel=1e-5)
    xs = np.random.default_rng(0).standard_normal((200, 3)) * c
    third_rand = (np.array([prior.score(x + h) - 2 * prior.score(x) + prior.score(x - h) for x in xs]) / h**2)
    assert np.all(np.linalg.norm(third_rand, axis=1) <= prior.third_derivative_bound * (1 + 1e-5))
    # an isotropic prior's M grows like sqrt(d) (the norm), and the bound applies sqrt(d) once
    iso = dp.LogCoshPrior(4.0, 0.1, 4)
    assert iso.third_derivative_bound == pytest.approx(2 * dp.LogCoshPrior(4.0, 0.1, 1).third_derivative_bound)
    assert dp.theorem1_bound(10, 0.0, 1.0, M=iso.third_derivative_bound, dim=4) == pytest.approx(
        (np.log(10) + 7) / 11 * iso.third_derivative_bound * 2)


def test_sampling_matches_the_hyperbolic_secant_law():
    prior = dp.anisotropic_logcosh(100.0)
    x = prior.sample(40000, rng=0)
    assert x.shape == (40000, 2)
    # sech(x / c) / (pi c) has mean 0 and standard deviation pi c / 2
    assert np.allclose(x.mean(axis=0), 0.0, atol=0.03 * prior.c)
    assert np.allclose(x.std(axis=0), np.pi * prior.c / 2, rtol=0.02)
    assert np.array_equal(prior.sample(5, rng=3), prior.sample(5, rng=3))


# --------------------------------------------------------------------------- proximal operators


def test_prox_optimality():
    y = np.array([0.9, -2.0, 0.3])
    gauss = dp.random_gaussian_prior(3, rng=5)
    for prior, tau in ((gauss, 0.8), (dp.LogCoshPrior(4.0, 0.1, 3), 1.0), (dp.LogCoshPrior(1.0, 1.0, 3), 2.5),
                       (dp.LogCoshPrior(1.0, [1.0, 0.01, 0.1], 3, grid=(-8.0, 8.0, 4001)), 1.0)):
        x = prior.prox(y, tau)
        assert np.max(np.abs(x - y - tau * prior.score(x))) < 1e-10


def test_logcosh_prox_matches_scalar_minimisation():
    prior, tau = dp.LogCoshPrior(2.0, [0.5, 0.1], 2), 1.3
    y = np.array([3.0, -0.4])
    x = prior.prox(y, tau)
    for i in range(2):
        ref = minimize_scalar(lambda t, i=i: 0.5 * (t - y[i]) ** 2 + tau * 2.0 * dp._log_cosh(t / prior.c[i]),
                              bounds=(-5, 5), method="bounded", options={"xatol": 1e-12})
        assert abs(ref.x - x[i]) < 1e-6


def test_laplace_prox_is_soft_thresholding():
    lap = dp.LaplacePrior(2.0, 3)
    assert np.allclose(lap.prox(np.array([3.0, -0.5, -1.5]), 0.5), [2.0, 0.0, -0.5])


# --------------------------------------------------------------------------- the methods


@pytest.mark.parametrize("offset", [2.0, 1.5, 4.0])
def test_averaging_step_is_gradient_step_on_smoothed_objective(gauss, offset):
    y, tau = np.array([1.0, -2.0, 0.5, 3.0]), 0.6
    res = dp.mmse_averaging(gauss.denoise, y, tau, maxiter=6, offset=offset)
    for k in range(6):
        x = res.iterates[k]
        alpha, sigma = 1.0 / (k + offset), np.sqrt(tau / (k + offset - 1))
        grad_F = (x - y) + tau * np.linalg.solve(gauss.cov + sigma**2 * np.eye(4), x - gauss.mean)
        assert np.allclose(res.iterates[k + 1], x - alpha * grad_F, atol=1e-12, rtol=0)
        assert alpha == pytest.approx(1.0 / (1.0 + tau / sigma**2))  # step = 1 / L_sigma
    assert np.allclose(res.trace.step_size[:6], 1.0 / (np.arange(6) + offset))


def test_gaussian_error_is_exactly_initial_gap_over_k_plus_1():
    """For a Gaussian prior and x0 = y the iterates are x* + (y - x*)/(k+1) (derived in the chapter),
    and one denoiser call at sigma^2 = tau is the prox."""
    prior = dp.random_gaussian_prior(6, max_log10_kappa=5.0, rng=11)
    y, tau = prior.mean + np.random.default_rng(2).standard_normal(6), 2.0
    x_star = prior.prox(y, tau)
    res = dp.mmse_averaging(prior.denoise, y, tau, maxiter=200, x_star=x_star)
    k = np.arange(201)
    assert np.allclose(res.iterates, x_star + np.outer(1.0 / (k + 1), y - x_star), atol=1e-11)
    assert np.allclose(prior.denoise(y, np.sqrt(tau)), x_star, atol=1e-12)


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
    y2 = np.array([1.0, 1.0])
    dist0 = float(np.linalg.norm(y2 - prior.prox(y2, 1.0)))
    assert dp.theorem1_bound([10, 100, 1000], dist0, 1.0) == pytest.approx([0.944, 0.128, 0.0155], abs=6e-4)
    assert dp.theorem1_bound(10, 1.0, 1.0, M=2.0, dim=4) == pytest.approx((np.log(10) + 7) / 11 * 5.0)


def test_averaging_converges_at_rate_one_over_k_on_anisotropic_logcosh():
    prior, y = dp.anisotropic_logcosh(500.0), np.array([-1.6, -0.6])
    err = dp.mmse_averaging(prior.denoise, y, 1.0, maxiter=300, x_star=prior.prox(y, 1.0)).trace["error"]
    k = np.arange(30, 301)
    assert -1.15 <= loglog_slope(k, err[k]) <= -0.85
    assert err[300] < err[30] / 7


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
    half = dp.gradient_descent_prox(prior.score, y, 1.0, prior.lipschitz, step_scale=0.5, maxiter=3)
    assert half.trace.step_size[0] == pytest.approx(0.5 / (1 + prior.lipschitz))


def test_accelerated_gradient_beats_gradient_descent_at_the_sqrt_kappa_rate():
    prior, y = dp.anisotropic_gaussian(1e4), np.array([1.0, 1.0])
    x_star = prior.prox(y, 1.0)
    agd = dp.accelerated_gradient_prox(prior.score, y, 1.0, prior.lipschitz, maxiter=2000, x_star=x_star)
    gd = dp.gradient_descent_prox(prior.score, y, 1.0, prior.lipschitz, maxiter=2000, x_star=x_star)
    # rate 1 - 1/sqrt(L_F): about e^{-20} after 2000 steps; GD only e^{-0.4}
    assert agd.trace["error"][-1] < 1e-6 < 0.3 < gd.trace["error"][-1]
    q = np.sqrt(1 + prior.lipschitz)
    assert agd.trace.meta["momentum"] == pytest.approx((q - 1) / (q + 1))
    # the first step has no momentum yet: it is a gradient step
    assert np.allclose(agd.iterates[1], gd.iterates[1])
    # momentum given explicitly: the textbook value reproduces the default, 0 is gradient descent
    same = dp.accelerated_gradient_prox(prior.score, y, 1.0, prior.lipschitz, momentum=(q - 1) / (q + 1),
                                        maxiter=50)
    assert np.array_equal(same.iterates, agd.iterates[:51])
    plain = dp.accelerated_gradient_prox(prior.score, y, 1.0, prior.lipschitz, momentum=0.0, maxiter=50)
    assert np.allclose(plain.iterates, gd.iterates[:51], rtol=0, atol=1e-14)


def test_unsmoothed_denoiser_makes_averaging_gradient_descent_on_F():
    prior = dp.anisotropic_logcosh(100.0)
    y, tau = np.array([0.8, -0.6]), 1.0
    res = dp.mmse_averaging(dp.unsmoothed_denoiser(prior.score), y, tau, maxiter=10)
    for k in range(10):
        x = res.iterates[k]
        assert np.allclose(res.iterates[k + 1], x - ((x - y) - tau * prior.score(x)) / (k + 2), atol=1e-13)


def test_inexact_denoiser_errors_have_the_stated_size():
    prior = dp.anisotropic_logcosh(100.0)
    z, sigma, xi = np.array([0.5, -0.3]), 0.4, 0.1
    exact_score = prior.smoothed_score(z, sigma)
    for direction in (None, np.array([3.0, 4.0])):
        den = dp.inexact_denoiser(prior.denoise, xi, 2, direction=direction, rng=0)
        score = (den(z, sigma) - z) / sigma**2
        assert np.linalg.norm(score - exact_score) == pytest.approx(xi)
    fixed = dp.inexact_denoiser(prior.denoise, xi, 2, direction=[3.0, 4.0])
    assert np.allclose((fixed(z, sigma) - z) / sigma**2 - exact_score, xi * np.array([0.6, 0.8]))
    out = dp.inexact_denoiser(prior.denoise, xi, 2, direction=[1.0, 0.0], error_in="output")
    assert np.allclose(out(z, sigma) - prior.denoise(z, sigma), [xi, 0.0])
    a = dp.inexact_denoiser(prior.denoise, xi, 2, rng=5)
    b = dp.inexact_denoiser(prior.denoise, xi, 2, rng=5)
    assert np.array_equal(a(z, sigma), b(z, sigma))


def test_constant_score_error_moves_the_limit_by_at_most_tau_xi():
    prior = dp.anisotropic_gaussian(50.0)
    y, tau, xi = np.array([1.0, -1.0]), 0.7, 0.2
    e = np.array([1.0, 1.0]) / np.sqrt(2)
    den = dp.inexact_denoiser(prior.denoise, xi, 2, direction=e)
    res = dp.mmse_averaging(den, y, tau, maxiter=20000)
    # the tilted target minimises F - tau xi e.x: (I + tau cov^{-1}) x = y + tau xi e
    tilted = np.linalg.solve(np.eye(2) + tau * np.linalg.inv(prior.cov), y + tau * xi * e)
    assert np.linalg.norm(res.x - tilted) < 1e-3
    assert np.linalg.norm(tilted - prior.prox(y, tau)) <= tau * xi


def test_determinism_and_callback():
    a = dp.random_gaussian_prior(5, rng=9)
    b = dp.random_gaussian_prior(5, rng=9)
    assert np.array_equal(a.cov, b.cov) and np.array_equal(a.mean, b.mean)
    seen = []
    r1 = dp.mmse_averaging(a.denoise, np.ones(5), 1.0, maxiter=20, callback=seen.append)
    r2 = dp.mmse_averaging(b.denoise, np.ones(5), 1.0, maxiter=20)
    assert np.array_equal(r1.iterates, r2.iterates) and len(seen) == 20
    assert np.all(np.isnan(r1.trace["error"]))  # no x_star given
    assert r1.nfev == 20  # one denoiser call per step


def test_method_module_does_not_import_plotly():
    code = "import sys; import optbook.classical.denoiser_prox; print('plotly' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


# --------------------------------------------------------------------------- bad input


def test_bad_input_is_rejected():
    g = dp.anisotropic_gaussian(10.0)
    lc = dp.anisotropic_logcosh(10.0)
    y = np.ones(2)
    cases = [
        (lambda: dp.mmse_averaging(g.denoise, [1.0, np.nan], 1.0), "y"),
        (lambda: dp.mmse_averaging(g.denoise, [1.0, np.inf], 1.0), "y"),
        (lambda: dp.mmse_averaging(g.denoise, [], 1.0), "y"),
        (lambda: dp.mmse_averaging(g.denoise, np.ones((2, 2)), 1.0), "y"),
        (lambda: dp.mmse_averaging(g.denoise, y, 0.0), "tau"),
        (lambda: dp.mmse_averaging(g.denoise, y, np.nan), "tau"),
        (lambda: dp.mmse_averaging(g.denoise, y, 1.0, alpha_scale=2.5), "alpha_scale"),
        (lambda: dp.mmse_averaging(g.denoise, y, 1.0, sigma_scale=0.0), "sigma_scale"),
        (lambda: dp.mmse_averaging(g.denoise, y, 1.0, offset=1.0), "offset"),
        (lambda: dp.mmse_averaging(g.denoise, y, 1.0, offset=np.inf), "offset"),
        (lambda: dp.mmse_averaging(g.denoise, y, 1.0, maxiter=-1), "maxiter"),
        (lambda: dp.mmse_averaging(g.denoise, y, 1.0, maxiter=2.5), "maxiter"),
        (lambda: dp.mmse_averaging(g.denoise, y, 1.0, x0=np.ones(3)), "x0"),
        (lambda: dp.mmse_averaging(g.denoise, y, 1.0, tol=1e-3), "tol"),
        (lambda: dp.mmse_averaging(g.denoise, y, 1.0, tol=-1.0, x_star=y), "tol"),
        (lambda: dp.mmse_averaging(g.denoise, y, 1.0, x_star=[1.0]), "x_star"),
        (lambda: dp.mmse_averaging("not callable", y, 1.0), "denoiser"),
        (lambda: dp.mmse_averaging(lambda z, s: z * np.nan, y, 1.0, maxiter=2), "non-finite"),
        (lambda: dp.mmse_averaging(g.denoise, y, 1.0, callback=3), "callback"),
        (lambda: dp.fixed_sigma_averaging(g.denoise, y, sigma=-1.0, alpha=0.5), "sigma"),
        (lambda: dp.fixed_sigma_averaging(g.denoise, y, sigma=1.0, alpha=0.0), "alpha"),
        (lambda: dp.fixed_sigma_averaging(g.denoise, [np.nan, 1.0], sigma=1.0, alpha=0.5), "y"),
        (lambda: dp.gradient_descent_prox(g.score, y, 1.0, 0.0), "lipschitz"),
        (lambda: dp.gradient_descent_prox(g.score, y, 1.0, np.inf), "lipschitz"),
        (lambda: dp.gradient_descent_prox(g.score, y, 1.0, 1.0, step_scale=0.0), "step_scale"),
        (lambda: dp.gradient_descent_prox(None, y, 1.0, 1.0), "score"),
        (lambda: dp.accelerated_gradient_prox(g.score, y, -1.0, 1.0), "tau"),
        (lambda: dp.accelerated_gradient_prox(g.score, y, 1.0, 1.0, step_scale=-2.0), "step_scale"),
        (lambda: dp.accelerated_gradient_prox(g.score, y, 1.0, 1.0, maxiter=-3), "maxiter"),
        (lambda: dp.accelerated_gradient_prox(g.score, y, 1.0, 1.0, momentum=1.0), "momentum"),
        (lambda: dp.accelerated_gradient_prox(g.score, y, 1.0, 1.0, momentum=np.nan), "momentum"),

        (lambda: dp.GaussianPrior([0.0, 0.0], [[1.0, 2.0], [2.0, 1.0]]), "cov"),
        (lambda: dp.GaussianPrior([0.0, np.inf], np.eye(2)), "mean"),
        (lambda: dp.GaussianPrior([0.0], np.eye(2)), "cov"),
        (lambda: dp.GaussianPrior([], np.eye(2)), "mean"),
        (lambda: g.denoise([1.0, 2.0, 3.0], 0.1), "z"),
        (lambda: g.denoise([1.0, np.nan], 0.1), "z"),
        (lambda: g.denoise(y, -0.1), "sigma"),
        (lambda: g.denoise(y, np.nan), "sigma"),
        (lambda: g.prox(y, -1.0), "tau"),
        (lambda: g.log_density(np.ones(3)), "x"),
        (lambda: g.log_density(np.array([[np.nan, 1.0]])), "x"),
        (lambda: g.smoothed_score(y, -1.0), "sigma"),
        (lambda: dp.anisotropic_gaussian(0.5), "kappa"),
        (lambda: dp.anisotropic_logcosh(0.5), "kappa"),
        (lambda: dp.anisotropic_logcosh(10.0, copies=0), "copies"),
        (lambda: dp.anisotropic_logcosh(10.0, max_step=0.0), "max_step"),
        (lambda: dp.random_gaussian_prior(0), "dim"),
        (lambda: dp.random_gaussian_prior(2, max_log10_kappa=-1.0), "max_log10_kappa"),
        (lambda: dp.LogCoshPrior(b=0.0), "b"),
        (lambda: dp.LogCoshPrior(c=-1.0), "c"),
        (lambda: dp.LogCoshPrior(c=[0.1, np.nan, 0.1]), "c"),
        (lambda: dp.LogCoshPrior(c=[0.1, 0.2]), "c"),
        (lambda: dp.LogCoshPrior(c=0.001), "too coarse"),
        (lambda: dp.LogCoshPrior(grid=(1.0, -1.0, 101)), "grid"),
        (lambda: dp.LogCoshPrior(grid=(-8.0, 8.0, 5)), "grid"),
        (lambda: dp.LogCoshPrior(grid=(-np.inf, 8.0, 101)), "grid"),
        (lambda: dp.LogCoshPrior(grid=(-8.0, 8.0)), "grid"),
        (lambda: dp.LogCoshPrior(dim=2).denoise(y, 1e-4), "sigma"),
        (lambda: lc.denoise(np.array([11.0, 0.0]), 0.5), "outside the quadrature grid"),
        (lambda: lc.log_density(np.array([0.0, -20.0]), 0.5), "outside the quadrature grid"),
        (lambda: lc.sample(0), "size"),
        (lambda: lc.prox(y, 0.0), "tau"),
        (lambda: dp.SeparableQuadraturePrior(1.0, 2.0, 2), "log_q"),
        (lambda: dp.SeparableQuadraturePrior(lambda x: np.full(np.shape(x), -np.inf), lambda x: x, 2,
                                             grid=(-1.0, 1.0, 101)), "log_q"),
        (lambda: dp.LaplacePrior(lam=0.0), "lam"),
        (lambda: dp.LaplacePrior(dim=0), "dim"),
        (lambda: dp.theorem1_bound(0, 1.0, 1.0), "k"),
        (lambda: dp.theorem1_bound([], 1.0, 1.0), "k"),
        (lambda: dp.theorem1_bound(5, -1.0, 1.0), "dist0"),
        (lambda: dp.theorem1_bound(5, 1.0, 1.0, M=-1.0), "M"),
        (lambda: dp.theorem1_bound(5, 1.0, 1.0, dim=0), "dim"),
        (lambda: dp.smoothed_objective(g, np.ones(2), [1.0, 2.0, 3.0], 1.0, 0.1), "y"),
        (lambda: dp.smoothed_objective(g, np.ones(3), y, 1.0, 0.1), "x"),
        (lambda: dp.smoothed_objective("prior", np.ones(2), y, 1.0, 0.1), "prior"),
        (lambda: dp.unsmoothed_denoiser(3), "score"),
        (lambda: dp.inexact_denoiser(g.denoise, -0.1, 2), "xi"),
        (lambda: dp.inexact_denoiser(g.denoise, 0.1, 2, direction=[0.0, 0.0]), "direction"),
        (lambda: dp.inexact_denoiser(g.denoise, 0.1, 2, direction=[1.0]), "direction"),
        (lambda: dp.inexact_denoiser(g.denoise, 0.1, 2, error_in="input"), "error_in"),
        (lambda: dp.inexact_denoiser(None, 0.1, 2), "denoiser"),
    ]
    for make, word in cases:
        with pytest.raises(ValueError, match=word):
            make()
