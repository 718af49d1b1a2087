"""Tests of chapter 02's methods: IHT with Sparse Polyak, Polyak and constant steps (the
chapter's experiments, claims and figures are tested in test_sparse_polyak_chapter.py)."""
import inspect
import subprocess
import sys
from itertools import combinations

import numpy as np
import pytest

from optbook.classical import sparse_polyak_methods as sp
from optbook.core import check_derivatives


# ------------------------------------------------------------------ hard thresholding

@pytest.mark.parametrize("seed", range(5))
def test_hard_threshold_is_the_projection_brute_force(seed):
    rng = np.random.default_rng(seed)
    v = rng.standard_normal(8)
    for k in range(0, 9):
        h = sp.hard_threshold(v, k)
        assert np.count_nonzero(h) == k
        assert np.array_equal(sp.hard_threshold(h, k), h)  # idempotent
        best = min(np.linalg.norm(v - np.where(np.isin(np.arange(8), T), v, 0.0))
                   for T in combinations(range(8), k))
        assert np.linalg.norm(v - h) == pytest.approx(best, abs=1e-14)


def test_hard_threshold_breaks_ties_by_index():
    v = np.array([1.0, -2.0, 2.0, 1.0, -1.0])
    assert np.array_equal(sp.hard_threshold(v, 3), [1.0, -2.0, 2.0, 0.0, 0.0])
    assert np.array_equal(sp.hard_threshold(v, 4), [1.0, -2.0, 2.0, 1.0, 0.0])


def test_thresholded_norm_matches_hard_threshold():
    g = np.random.default_rng(3).standard_normal(50)
    for k in (1, 7, 49, 50, 80):
        assert sp._top_k_sq_norm(g, k) == pytest.approx(np.sum(sp.hard_threshold(g, min(k, 50)) ** 2))


# ------------------------------------------------------------------ problems

def test_least_squares_gradient_and_closed_forms():
    prob = sp.make_sparse_regression(30, 12, 3, 0.3, rng=0)
    x = np.random.default_rng(1).standard_normal(12)
    assert check_derivatives(prob.fun, prob.jac, x, prob.hess).ok(1e-6)
    r = prob.X @ x - prob.y
    assert prob.fun(x) == pytest.approx(r @ r / 60)
    sparse_x = sp.hard_threshold(x, 2)  # the sparse mat-vec path
    assert prob.fun(sparse_x) == pytest.approx(0.5 * np.sum((prob.X @ sparse_x - prob.y) ** 2) / 30)


def test_logistic_gradient_and_hessian():
    prob = sp.make_sparse_logistic(40, 10, 3, rng=0)
    x = 0.3 * np.random.default_rng(2).standard_normal(10)
    assert check_derivatives(prob.fun, prob.jac, x, prob.hess).ok(1e-6)


def test_oracle_fit_matches_lstsq_on_support():
    prob = sp.make_sparse_regression(50, 40, 4, 0.5, rng=4)
    theta, f_hat = sp.oracle_fit(prob)
    T = np.flatnonzero(prob.theta_star)
    ref = np.linalg.lstsq(prob.X[:, T], prob.y, rcond=None)[0]
    assert np.allclose(theta[T], ref) and np.count_nonzero(theta) == 4
    assert f_hat == pytest.approx(prob.fun(theta))


def test_logistic_oracle_fit_is_stationary_on_support():
    prob = sp.make_sparse_logistic(200, 30, 3, rng=5)
    theta, _ = sp.oracle_fit(prob)
    T = np.flatnonzero(prob.theta_star)
    assert np.linalg.norm(prob.jac(theta)[T]) < 1e-8


def test_curvatures():
    X = np.random.default_rng(0).standard_normal((40, 100))
    assert sp.global_smoothness(X) == pytest.approx(np.linalg.eigvalsh(X.T @ X / 40)[-1])
    assert sp.global_smoothness(X.T) == pytest.approx(np.linalg.eigvalsh(X @ X.T / 100)[-1])  # n > d path
    Ls = sp.restricted_smoothness(X, 5, rng=0)
    assert 0 < Ls <= sp.global_smoothness(X)
    assert sp.restricted_smoothness(X, 5, rng=0) == Ls  # deterministic under a seed
    assert sp.marchenko_pastur_edge(100, 400) == pytest.approx(9.0)


def test_statistical_precision_formula():
    assert sp.statistical_precision(0.5, 5, 200, 2000) == pytest.approx(2 * 0.5 * np.sqrt(5 * np.log(2000) / 200))


# ------------------------------------------------------------------ methods

@pytest.fixture(scope="module")
def problem():
    prob = sp.make_sparse_regression(60, 150, 3, 0.3, rng=7)
    return prob, sp.oracle_fit(prob)[1]


def test_sparse_polyak_with_full_threshold_equals_polyak(problem):
    prob, f_hat = problem
    a = sp.sparse_polyak(prob.fun, np.zeros(150), prob.jac, sparsity=6, f_hat=f_hat, grad_sparsity=150, maxiter=40)
    b = sp.polyak_iht(prob.fun, np.zeros(150), prob.jac, sparsity=6, f_hat=f_hat, maxiter=40)
    assert np.array_equal(a.x, b.x)
    assert np.array_equal(a.trace.step_size, b.trace.step_size, equal_nan=True)


def test_default_gradient_threshold_is_the_projection_sparsity(problem):
    """The paper's HT_s: s_g defaults to s~, the chapter's choice too."""
    prob, _ = problem
    a = sp.sparse_polyak(prob.fun, np.zeros(150), prob.jac, sparsity=6, f_hat=0.0, maxiter=20)
    b = sp.sparse_polyak(prob.fun, np.zeros(150), prob.jac, sparsity=6, f_hat=0.0, grad_sparsity=6, maxiter=20)
    c = sp.sparse_polyak(prob.fun, np.zeros(150), prob.jac, sparsity=6, f_hat=0.0, grad_sparsity=9, maxiter=20)
    assert a.trace.meta["grad_sparsity"] == 6
    assert np.array_equal(a.x, b.x) and not np.array_equal(a.trace.step_size, c.trace.step_size)


def test_scale_invariance(problem):
    prob, f_hat = problem
    c = 7.5
    a = sp.sparse_polyak(prob.fun, np.zeros(150), prob.jac, sparsity=6, f_hat=f_hat, grad_sparsity=9, maxiter=30)
    b = sp.sparse_polyak(lambda x: c * prob.fun(x), np.zeros(150), lambda x: c * prob.jac(x), sparsity=6,
                         f_hat=c * f_hat, grad_sparsity=9, maxiter=30)
    assert np.allclose(a.x, b.x, rtol=1e-10, atol=1e-12)


def test_iterates_are_sparse_and_step_is_polyak_formula(problem):
    prob, f_hat = problem
    xs: list = []
    res = sp.sparse_polyak(prob.fun, np.zeros(150), prob.jac, sparsity=6, f_hat=f_hat, grad_sparsity=9,
                           gamma=0.7, maxiter=5, callback=xs.append)
    for t in range(5):
        g = prob.jac(xs[t])
        eta = 0.7 * (prob.fun(xs[t]) - f_hat) / np.sum(sp.hard_threshold(g, 9) ** 2)
        assert res.trace.step_size[t] == pytest.approx(eta)
        assert res.trace["curvature"][t] == pytest.approx(0.7 / (2 * eta))  # curvature is before gamma
        assert np.allclose(xs[t + 1], sp.hard_threshold(xs[t] - eta * g, 6))
        assert np.count_nonzero(xs[t + 1]) <= 6


def test_eta_max_caps_the_step(problem):
    prob, _ = problem
    res = sp.sparse_polyak(prob.fun, np.zeros(150), prob.jac, sparsity=6, f_hat=0.0, eta_max=0.05, maxiter=10)
    assert np.nanmax(res.trace.step_size) == pytest.approx(0.05)


def test_noiseless_exact_recovery():
    prob = sp.make_sparse_regression(100, 400, 3, 0.0, rng=0)
    common = dict(sparsity=6, f_hat=0.0, theta_star=prob.theta_star, tol=1e-8, maxiter=3000)
    a = sp.sparse_polyak(prob.fun, np.zeros(400), prob.jac, **common)
    b = sp.polyak_iht(prob.fun, np.zeros(400), prob.jac, **common)
    assert a.success and a.trace["error"][-1] <= 1e-8
    assert b.success and a.nit < b.nit / 2


def test_constant_step_decreases_objective(problem):
    prob, _ = problem
    L = sp.global_smoothness(prob.X)
    res = sp.constant_step_iht(prob.fun, np.zeros(150), prob.jac, sparsity=6, eta=1.0 / L, maxiter=60)
    assert np.all(np.diff(res.trace.objective) <= 1e-12)  # IHT with eta <= 1/L is monotone


def test_gap_closing_stops(problem):
    prob, _ = problem
    res = sp.polyak_iht(prob.fun, np.zeros(150), prob.jac, sparsity=6, f_hat=prob.fun(np.zeros(150)) + 1.0)
    assert res.nit == 0 and res.success and "gap" in res.message


def test_divergence_is_reported(problem):
    prob, _ = problem
    res = sp.constant_step_iht(prob.fun, np.zeros(150), prob.jac, sparsity=6, eta=50.0, maxiter=200)
    assert not res.success and "diverged" in res.message


def test_determinism():
    a = sp.make_sparse_regression(20, 30, 2, 0.1, rng=11)
    b = sp.make_sparse_regression(20, 30, 2, 0.1, rng=11)
    assert np.array_equal(a.X, b.X) and np.array_equal(a.y, b.y)


def test_importing_the_method_does_not_import_plotly():
    code = "import sys; import optbook.classical.sparse_polyak_methods; print('plotly' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"


# ------------------------------------------------------------------ bad input

def test_bad_inputs(problem):
    prob, f_hat = problem
    x0 = np.zeros(150)
    bad = [
        (sp.hard_threshold, (np.ones(3), -1), {}, "k"),
        (sp.hard_threshold, ([1.0, np.nan], 1), {}, "v"),
        (sp.hard_threshold, (np.ones((2, 2)), 1), {}, "v"),
        (sp.hard_threshold, ([], 1), {}, "v"),
        (sp.iht, (prob.fun, x0, prob.jac), dict(sparsity=6, step="armijo", f_hat=f_hat), "step"),
        (sp.iht, (prob.fun, x0, prob.jac), dict(sparsity=0, f_hat=f_hat), "sparsity"),
        (sp.iht, (prob.fun, x0, prob.jac), dict(sparsity=151, f_hat=f_hat), "sparsity"),
        (sp.iht, (prob.fun, x0, prob.jac), dict(sparsity=6), "f_hat"),
        (sp.iht, (prob.fun, x0, prob.jac), dict(sparsity=6, f_hat=np.inf), "f_hat"),
        (sp.iht, (prob.fun, x0, prob.jac), dict(sparsity=6, f_hat=np.nan), "f_hat"),
        (sp.iht, (prob.fun, x0, prob.jac), dict(sparsity=6, step="constant"), "eta"),
        (sp.iht, (prob.fun, x0, prob.jac), dict(sparsity=6, step="constant", eta=-1.0), "eta"),
        (sp.iht, (prob.fun, x0, prob.jac), dict(sparsity=6, step="constant", eta=np.nan), "eta"),
        (sp.iht, (prob.fun, x0, prob.jac), dict(sparsity=6, f_hat=f_hat, eta=0.1), "eta"),
        (sp.iht, (prob.fun, x0, prob.jac), dict(sparsity=6, f_hat=f_hat, eta_max=0.0), "eta_max"),
        (sp.iht, (prob.fun, x0, prob.jac), dict(sparsity=6, f_hat=f_hat, eta_max=np.nan), "eta_max"),
        (sp.iht, (prob.fun, x0, prob.jac), dict(sparsity=6, f_hat=f_hat, gamma=0.0), "gamma"),
        (sp.iht, (prob.fun, x0, prob.jac), dict(sparsity=6, f_hat=f_hat, gamma=np.inf), "gamma"),
        (sp.iht, (prob.fun, x0, prob.jac), dict(sparsity=6, f_hat=f_hat, grad_sparsity=0), "grad_sparsity"),
        (sp.iht, (prob.fun, x0, prob.jac), dict(sparsity=6, f_hat=f_hat, grad_sparsity=151), "grad_sparsity"),
        (sp.iht, (prob.fun, x0, prob.jac), dict(sparsity=6, step="polyak", f_hat=f_hat, grad_sparsity=9),
         "grad_sparsity"),
        (sp.iht, (prob.fun, np.full(150, np.nan), prob.jac), dict(sparsity=6, f_hat=f_hat), "x0"),
        (sp.iht, (prob.fun, np.array([]), prob.jac), dict(sparsity=6, f_hat=f_hat), "x0"),
        (sp.iht, (3, x0, prob.jac), dict(sparsity=6, f_hat=f_hat), "fun"),
        (sp.iht, (prob.fun, x0, None), dict(sparsity=6, f_hat=f_hat), "jac"),
        (sp.iht, (prob.fun, x0, lambda x: np.ones(3)), dict(sparsity=6, f_hat=f_hat), "jac"),
        (sp.iht, (lambda x: np.nan, x0, prob.jac), dict(sparsity=6, f_hat=f_hat), "finite"),
        (sp.iht, (lambda x: np.ones(2), x0, prob.jac), dict(sparsity=6, f_hat=f_hat), "fun must return a scalar"),
        # a jac that goes wrong after x0 is caught at that iterate, not by a broadcasting error
        (sp.iht, (prob.fun, x0, lambda x: prob.jac(x) if not x.any() else np.ones(3)), dict(sparsity=6, f_hat=f_hat),
         "jac must return an array of shape"),
        (sp.iht, (prob.fun, x0, prob.jac), dict(sparsity=6, f_hat=f_hat, theta_star=np.zeros(3)), "theta_star"),
        (sp.iht, (prob.fun, x0, prob.jac), dict(sparsity=6, f_hat=f_hat, tol=0.1), "theta_star"),
        (sp.iht, (prob.fun, x0, prob.jac), dict(sparsity=6, f_hat=f_hat, tol=-1.0), "tol"),
        (sp.iht, (prob.fun, x0, prob.jac), dict(sparsity=6, f_hat=f_hat, tol=np.nan), "tol"),
        (sp.iht, (prob.fun, x0, prob.jac), dict(sparsity=6, f_hat=f_hat, maxiter=-1), "maxiter"),
        (sp.iht, (prob.fun, x0, prob.jac), dict(sparsity=6, f_hat=f_hat, maxiter=2.5), "maxiter"),
        (sp.iht, (prob.fun, x0, prob.jac), dict(sparsity=6, f_hat=f_hat, callback=3), "callback"),
        (sp.sparse_polyak, (prob.fun, x0, prob.jac), dict(sparsity=6, f_hat=f_hat, grad_sparsity=-2),
         "grad_sparsity"),
        (sp.polyak_iht, (prob.fun, x0, prob.jac), dict(sparsity=6, f_hat=np.nan), "f_hat"),
        (sp.constant_step_iht, (prob.fun, x0, prob.jac), dict(sparsity=6, eta=np.inf), "eta"),
        (sp.make_sparse_regression, (10, 5, 6), {}, "s must be"),
        (sp.make_sparse_regression, (0, 5, 1), {}, "n"),
        (sp.make_sparse_regression, (10, 20, 2), dict(sigma=-1.0), "sigma"),
        (sp.make_sparse_regression, (10, 20, 2), dict(sigma=np.nan), "sigma"),
        (sp.make_sparse_logistic, (10, 20, 2), dict(norm=0.0), "norm"),
        (sp.make_sparse_logistic, (10, 20, 0), {}, "s"),
        (sp.SparseLeastSquares, (np.ones((3, 4)), np.ones(2)), {}, "y"),
        (sp.SparseLeastSquares, (np.ones(3), np.ones(3)), {}, "X"),
        (sp.SparseLeastSquares, (np.full((3, 4), np.inf), np.ones(3)), {}, "X"),
        (sp.SparseLeastSquares, (np.ones((3, 4)), np.ones(3)), dict(theta_star=np.ones(3)), "theta_star"),
        (sp.SparseLogistic, (np.ones((3, 4)), np.array([0.0, 1.0, 1.0])), {}, "y"),
        (sp.SparseLogistic, (np.ones((0, 4)), np.ones(0)), {}, "X"),
        (prob.support_fit, (np.array([0, 0]),), {}, "support"),
        (prob.support_fit, (np.array([], dtype=int),), {}, "support"),
        (prob.support_fit, (np.array([0, 150]),), {}, "support"),
        (prob.fun, (np.full(150, np.nan),), {}, "x"),
        (prob.jac, (np.zeros(3),), {}, "x"),
        (sp.oracle_fit, (sp.SparseLeastSquares(np.ones((3, 4)), np.ones(3)),), {}, "problem"),
        (sp.oracle_fit, ("regression",), {}, "problem"),
        (sp.statistical_precision, (0.0, 5, 200, 2000), {}, "sigma"),
        (sp.statistical_precision, (0.5, 5, 200, 1), {}, "d"),
        (sp.statistical_precision, (0.5, 5, 200, 2000), dict(factor=np.nan), "factor"),
        (sp.global_smoothness, (np.full((3, 3), np.nan),), {}, "X"),
        (sp.marchenko_pastur_edge, (0, 10), {}, "n"),
        (sp.restricted_smoothness, (prob.X, 151), {}, "k"),
        (sp.restricted_smoothness, (prob.X, 5), dict(n_supports=0), "n_supports"),
    ]
    for func, args, kwargs, match in bad:
        with pytest.raises(ValueError, match=match):
            func(*args, **kwargs)


def test_every_public_function_is_covered_by_the_bad_input_test():
    """A new public function of the module must get its bad-input cases above."""
    source = inspect.getsource(test_bad_inputs)
    for name, obj in vars(sp).items():
        if name.startswith("_") or not callable(obj) or getattr(obj, "__module__", None) != sp.__name__:
            continue
        if isinstance(obj, type) and not issubclass(obj, sp.Problem):
            continue
        if not isinstance(obj, type) and not inspect.signature(obj).parameters:
            continue  # takes no input
        assert f"sp.{name}" in source or f"prob.{name}" in source, f"{sp.__name__}.{name} has no bad-input case"
