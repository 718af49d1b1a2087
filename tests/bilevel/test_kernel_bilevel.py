"""Kernel bilevel IV regression: closed forms, the three gradients, the solver, the baselines, bad input."""
import numpy as np
import pytest
import scipy.linalg as sla
from sklearn.kernel_ridge import KernelRidge

from optbook.bilevel.kernel_bilevel import (KernelBilevelIV, Quadratic, features, gaussian_kernel, gradient_descent,
                                            make_iv_data, ols, random_fourier_features, structural_coordinates,
                                            true_omega, two_stage_least_squares)
from optbook.core import fd_gradient


@pytest.fixture(scope="module")
def prob():
    return KernelBilevelIV(make_iv_data(80, 50, rng=3), lam=0.01, sigma=1.0)


def test_gram_matrix_is_symmetric_psd_with_unit_diagonal():
    X = np.random.default_rng(0).normal(size=(60, 3))
    K = gaussian_kernel(X, X, 0.7)
    assert np.allclose(K, K.T) and np.allclose(np.diag(K), 1.0)
    assert np.linalg.eigvalsh(K).min() >= -1e-10
    # one entry by hand
    assert np.isclose(K[0, 1], np.exp(-np.sum((X[0] - X[1]) ** 2) / (2 * 0.49)))


def test_krr_solve_matches_numpy_and_sklearn(prob):
    n = prob.data.n
    Kreg = prob.K + n * prob.lam * np.eye(n)
    assert np.abs(Kreg @ prob.coef - prob.Phi).max() < 1e-10
    assert np.allclose(prob.coef, np.linalg.solve(Kreg, prob.Phi), atol=1e-10)
    # the inner solution is kernel ridge regression with alpha = n * lam (sklearn's convention)
    w = np.array([0.3, -1.0, 0.5, 2.0])
    kr = KernelRidge(alpha=n * prob.lam, kernel="rbf", gamma=1 / (2 * prob.sigma**2))
    kr.fit(prob.data.x, prob.Phi @ w)
    assert np.allclose(kr.predict(prob.data.x_out), prob.inner_solution(w, prob.data.x_out), atol=1e-9)


def test_three_gradients_and_finite_differences_agree(prob):
    import torch

    rng = np.random.default_rng(1)
    for _ in range(3):
        w = rng.normal(size=4)
        g = prob.grad(w)
        assert np.allclose(prob.adjoint_grad(w), g, rtol=1e-8, atol=1e-12)
        assert np.allclose(fd_gradient(prob.value, w), g, atol=1e-7)
        wt = torch.tensor(w, requires_grad=True)
        Kreg = torch.tensor(prob.K) + prob.data.n * prob.lam * torch.eye(prob.data.n, dtype=torch.float64)
        h = torch.tensor(prob.K_out) @ torch.linalg.solve(Kreg, torch.tensor(prob.Phi) @ wt)
        ((h - torch.tensor(prob.data.y_out)) ** 2).mean().mul(0.5).backward()
        assert np.allclose(wt.grad.numpy(), g, rtol=1e-8, atol=1e-12)


def test_adjoint_solves_the_adjoint_equation(prob):
    """(C + lam I) a = -g tested at the inner and outer points: the coefficients are the adjoint."""
    w = np.array([1.0, 0.2, -0.3, 0.4])
    beta, gamma = prob.adjoint(w)
    X, Xo, s = prob.data.x, prob.data.x_out, prob.sigma
    n, m = prob.data.n, prob.data.m
    pts = np.vstack([X, Xo])
    a_pts = gaussian_kernel(pts, X, s) @ beta + gaussian_kernel(pts, Xo, s) @ gamma
    a_X = prob.K @ beta + prob.K_out.T @ gamma
    r = prob.K_out @ (prob.coef @ w) - prob.data.y_out
    lhs = gaussian_kernel(pts, X, s) @ a_X / n + prob.lam * a_pts
    rhs = -gaussian_kernel(pts, Xo, s) @ r / m
    assert np.allclose(lhs, rhs, atol=1e-10)


def test_value_is_the_quadratic_and_limits(prob):
    w = np.array([0.1, 0.7, -0.2, 0.3])
    assert np.isclose(prob.value(w), prob.quadratic.value(w))
    y = prob.data.y_out
    assert prob.value(np.zeros(4)) == pytest.approx(y @ y / (2 * prob.data.m), rel=1e-14)
    huge = KernelBilevelIV(prob.data, lam=1e8, sigma=1.0)
    assert huge.value(np.array([5.0, -3, 2, 1])) == pytest.approx(y @ y / (2 * prob.data.m), rel=1e-6)


def test_gd_reaches_the_minimum_norm_minimizer(prob):
    res = gradient_descent(prob, np.zeros(4), tol=1e-9, maxiter=50_000)
    assert res.success and np.linalg.norm(prob.grad(res.x)) <= 1e-9
    # phi(t) spans only sin t and cos t: A_hat has rank 2, GD from 0 stays in its range
    assert np.linalg.matrix_rank(prob.quadratic.A, tol=1e-10) == 2
    assert np.allclose(res.x, np.linalg.pinv(prob.quadratic.A, rcond=1e-10) @ prob.quadratic.B, atol=1e-6)
    assert np.allclose(res.x, prob.quadratic.minimizer(), atol=1e-6)
    assert np.all(np.diff(res.trace.objective) <= 1e-15)  # Armijo: monotone


def test_gd_is_deterministic_and_validates(prob):
    a, b = (gradient_descent(prob, np.ones(4)) for _ in range(2))
    assert np.array_equal(a.x, b.x)
    with pytest.raises(ValueError, match="tol"):
        gradient_descent(prob, np.zeros(4), tol=0)
    with pytest.raises(ValueError, match="omega0"):
        gradient_descent(prob, np.zeros(3))
    with pytest.raises(ValueError, match="maxiter"):
        gradient_descent(prob, np.zeros(4), maxiter=-1)
    with pytest.raises(ValueError, match="problem"):
        gradient_descent(lambda w: 0.0, np.zeros(4))


def test_structural_coordinates_determine_the_structural_function():
    t = np.linspace(-5, 5, 50)
    w = np.array([0.3, -0.2, 0.9, 0.4])
    u, v = structural_coordinates(w)
    assert np.allclose(features(t) @ w, u * np.sin(t) + v * np.cos(t))
    assert structural_coordinates(np.vstack([w, w])).shape == (2, 2)


def test_data_generator_is_a_valid_confounded_instrument():
    d = make_iv_data(4000, 4000, rng=0)
    eta_in = d.eta[: d.n]
    assert abs(np.corrcoef(d.x[:, 0], eta_in)[0, 1]) < 0.05          # valid instrument
    assert np.corrcoef(d.t, eta_in)[0, 1] > 0.05                     # t is confounded
    noise = d.y_out - features(d.t_out) @ d.omega_star
    assert np.allclose(noise, 0.5 * d.eta[d.n:])
    assert np.isclose(np.var(d.eta), 0.1, rtol=0.1)
    e = make_iv_data(10, 5, rng=0)
    assert np.array_equal(e.x, make_iv_data(10, 5, rng=0).x) and not np.array_equal(e.x, make_iv_data(10, 5, rng=1).x)
    assert e.x.shape == (10, 3) and e.x_out.shape == (5, 3) and e.y_out.shape == (5,)
    assert np.array_equal(true_omega(), d.omega_star) and np.all((d.omega_star > 0) & (d.omega_star < 1))


def test_ols_is_biased_by_confounding_and_2sls_runs():
    """Without confounding OLS recovers the structural function; with strong confounding it does not."""
    t = np.linspace(-6, 6, 400)
    errs = {}
    for c in (0.0, 8.0):
        d = make_iv_data(20_000, 20_000, confounding=c, rng=1)
        errs[c] = np.sqrt(np.mean((features(t) @ (ols(d.t_out, d.y_out) - d.omega_star)) ** 2))
    assert errs[0.0] < 1e-8 and errs[8.0] > 0.005  # weak: Var(eta) = 0.1 against Var(t) = 12.1
    d = make_iv_data(200, 200, rng=2)
    assert two_stage_least_squares(d.x, d.t, d.x_out, d.y_out).shape == (4,)
    assert np.linalg.norm(ols(d.t_out, d.y_out, ridge=1e6)) < 1e-3


def test_rff_kernel_approximation_improves_like_inverse_sqrt_d():
    X = np.random.default_rng(0).normal(size=(40, 3))
    K = gaussian_kernel(X, X, 1.5)
    errs = [np.mean([np.abs((Z := random_fourier_features(X, D, 1.5, rng=s)) @ Z.T - K).max() for s in range(4)])
            for D in (100, 1600)]
    assert 2.0 < errs[0] / errs[1] < 8.0  # 16x the features: about 4x smaller error
    # the RFF plug-in approaches the exact one as D grows
    data = make_iv_data(60, 40, rng=4)
    exact = KernelBilevelIV(data, 0.01, 1.0).quadratic
    gaps = [np.abs(KernelBilevelIV(data, 0.01, 1.0, num_features=D, rng=0).quadratic.B - exact.B).max()
            for D in (50, 5000)]
    assert gaps[1] < gaps[0] / 3


def test_quadratic_minimizer_and_grad():
    q = Quadratic(np.diag([2.0, 1.0]), np.array([2.0, 3.0]), 0.0)
    assert np.allclose(q.minimizer(), [1.0, 3.0]) and np.allclose(q.grad([1.0, 3.0]), 0.0)


@pytest.mark.parametrize("call, match", [
    (lambda: make_iv_data(1, 5), "n"),
    (lambda: make_iv_data(5, 5, confounding=-1), "confounding"),
    (lambda: make_iv_data(5, 5, instrument="cauchy"), "instrument"),
    (lambda: make_iv_data(5, 5, instrument="student", df=2.0), "df"),
    (lambda: gaussian_kernel(np.ones((3, 2)), np.ones((3, 3)), 1.0), "X and Y"),
    (lambda: gaussian_kernel(np.ones((3, 2)), np.ones((3, 2)), 0.0), "sigma"),
    (lambda: gaussian_kernel(np.full((3, 2), np.nan), np.ones((3, 2)), 1.0), "finite"),
    (lambda: random_fourier_features(np.ones((3, 2)), 0, 1.0), "num_features"),
    (lambda: KernelBilevelIV(make_iv_data(5, 5, rng=0), lam=0.0), "lam"),
    (lambda: KernelBilevelIV("data"), "data"),
    (lambda: KernelBilevelIV(make_iv_data(5, 5, rng=0)).value(np.ones(3)), "omega"),
    (lambda: KernelBilevelIV(make_iv_data(5, 5, rng=0)).grad([np.inf, 0, 0, 0]), "omega"),
    (lambda: ols([0.0, 1.0], [1.0]), "y"),
    (lambda: ols([0.0, 1.0], [1.0, 2.0], ridge=-1.0), "ridge"),
    (lambda: two_stage_least_squares(np.ones((3, 2)), np.ones(4), np.ones((3, 2)), np.ones(3)), "t"),
    (lambda: structural_coordinates(np.ones((2, 2, 2))), "omega"),
    (lambda: features([], 4), "t"),
])
def test_bad_input_names_the_argument(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_rff_and_exact_kernel_only_methods():
    P = KernelBilevelIV(make_iv_data(20, 10, rng=0), num_features=30, rng=0)
    with pytest.raises(ValueError, match="exact kernel"):
        P.adjoint(np.zeros(4))
    assert np.isfinite(P.value(np.ones(4)))
    assert sla.norm(P.grad(np.ones(4)) - P.quadratic.grad(np.ones(4))) == 0


def test_student_instruments_have_heavier_tails_and_the_same_structure():
    g = make_iv_data(20_000, 10, rng=0)
    s = make_iv_data(20_000, 10, instrument="student", df=2.5, rng=0)
    kurt = [np.mean(d.x[:, 0] ** 4) / np.mean(d.x[:, 0] ** 2) ** 2 for d in (g, s)]
    assert kurt[0] == pytest.approx(3.0, abs=0.2) and kurt[1] > 6.0
    assert np.allclose(s.t, 2 * s.x.sum(1) + s.eta[: s.n])
