import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from optbook.core import (
    AffineComposition,
    CubicRegularized,
    LogisticRegression,
    Quadratic,
    Rosenbrock,
    check_derivatives,
    conditioning_map,
    make_cubic,
    make_logistic,
    quadratic_with_condition,
    random_orthogonal,
)


def _problems():
    rng = np.random.default_rng(0)
    yield quadratic_with_condition(5, 100.0, rng)
    yield make_logistic(50, 5, rng=rng)
    yield Rosenbrock(4)
    yield make_cubic(20, 5, rng=rng)
    base = make_logistic(30, 4, rng=rng)
    yield AffineComposition(base, conditioning_map(4, 1e3, rng), rng.standard_normal(4))


@pytest.mark.parametrize("problem", list(_problems()), ids=lambda p: p.name)
def test_derivatives_match_finite_differences(problem):
    x = np.random.default_rng(1).standard_normal(problem.dim) * 0.7
    chk = check_derivatives(problem.fun, problem.jac, x, problem.hess)
    assert chk.ok(1e-5), chk


def test_quadratic_closed_forms():
    q = quadratic_with_condition(6, 1e3, rng=2)
    assert q.condition_number == pytest.approx(1e3, rel=1e-8)
    np.testing.assert_allclose(q.jac(q.x_star), 0, atol=1e-10)
    assert q.fun(q.x_star) == pytest.approx(q.f_star)


def test_rosenbrock_minimum():
    r = Rosenbrock(3)
    assert r.fun(r.x_star) == 0.0
    np.testing.assert_array_equal(r.jac(r.x_star), 0.0)


def test_logistic_is_overflow_safe():
    p = LogisticRegression(np.array([[1e4], [-1e4]]), np.array([1.0, 1.0]), mu=0.0)
    x = np.array([1.0])
    assert np.isfinite(p.fun(x)) and np.all(np.isfinite(p.jac(x))) and np.all(np.isfinite(p.hess(x)))
    assert p.fun(x) == pytest.approx(0.5 * 1e4)  # log(1+e^{1e4}) / 2 computed exactly


@given(st.integers(1, 6), st.integers(0, 10_000))
@settings(max_examples=25, deadline=None)
def test_random_orthogonal_is_orthogonal(d, seed):
    q = random_orthogonal(d, seed)
    np.testing.assert_allclose(q.T @ q, np.eye(d), atol=1e-12)


def test_affine_composition_maps_coordinates():
    rng = np.random.default_rng(3)
    f = make_logistic(20, 3, rng=rng)
    A, b = conditioning_map(3, 100.0, rng), rng.standard_normal(3)
    g = AffineComposition(f, A, b)
    u = rng.standard_normal(3)
    assert g.fun(u) == f.fun(A @ u + b)
    np.testing.assert_allclose(g.to_u(g.to_x(u)), u)
    assert g.newton_decrement(u) == pytest.approx(f.newton_decrement(A @ u + b), rel=1e-9)


@pytest.mark.parametrize("make, match", [
    (lambda: Quadratic(np.array([[1.0, 2.0], [0.0, 1.0]]), np.zeros(2)), "symmetric"),
    (lambda: Quadratic(-np.eye(2), np.zeros(2)), "positive definite"),
    (lambda: Quadratic(np.eye(2), np.zeros(3)), "b must have length 2"),
    (lambda: LogisticRegression(np.ones((3, 2)), np.array([1.0, 0.0, 1.0])), "labels"),
    (lambda: LogisticRegression(np.ones((3, 2)), np.ones(3), mu=-1.0), "mu"),
    (lambda: CubicRegularized(np.ones((3, 2)), np.ones(3), mu=0.0), "mu must be positive"),
    (lambda: AffineComposition(make_logistic(5, 2, rng=0), np.ones((2, 2)), np.zeros(2)), "invertible"),
    (lambda: quadratic_with_condition(3, 0.5), "kappa must be >= 1"),
    (lambda: Rosenbrock(1), "dim"),
    (lambda: make_logistic(n=0), "n must be >= 1"),
])
def test_bad_input(make, match):
    with pytest.raises(ValueError, match=match):
        make()


def test_wrong_point_shape_and_nan():
    q = quadratic_with_condition(3, 10.0, rng=0)
    with pytest.raises(ValueError, match="x must have length 3"):
        q.fun(np.zeros(4))
    with pytest.raises(ValueError, match="finite"):
        q.jac(np.array([0.0, np.nan, 0.0]))


@pytest.mark.parametrize("problem", list(_problems()), ids=lambda p: p.name)
def test_fun_many_matches_fun(problem):
    pts = np.random.default_rng(2).standard_normal((7, problem.dim))
    np.testing.assert_allclose(problem.fun_many(pts), [problem.fun(p) for p in pts], rtol=1e-12)
    with pytest.raises(ValueError, match="points"):
        problem.fun_many(np.zeros((3, problem.dim + 1)))
