import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import minimize

from optbook.core import project_ball, project_simplex


@given(st.integers(1, 8), st.integers(0, 10_000))
@settings(max_examples=40, deadline=None)
def test_simplex_projection_is_feasible_and_optimal(d, seed):
    y = np.random.default_rng(seed).normal(scale=2.0, size=d)
    p = project_simplex(y)
    assert np.all(p >= 0) and p.sum() == pytest.approx(1.0)
    # KKT: y - p = tau on the support, <= tau off it.
    tau = (y - p)[p > 0]
    assert np.ptp(tau) < 1e-12
    assert np.all((y - p)[p == 0] <= tau[0] + 1e-12)


def test_simplex_projection_matches_a_solver_and_batches():
    rng = np.random.default_rng(0)
    Y = rng.normal(size=(5, 4))
    P = project_simplex(Y)
    for y, p in zip(Y, P):
        ref = minimize(lambda q: np.sum((q - y) ** 2), np.full(4, 0.25), method="SLSQP", bounds=[(0, None)] * 4,
                       constraints={"type": "eq", "fun": lambda q: q.sum() - 1}, options={"ftol": 1e-14})
        np.testing.assert_allclose(p, ref.x, atol=1e-6)
    np.testing.assert_allclose(project_simplex(Y.T, axis=0), P.T)  # columns as a batch
    np.testing.assert_allclose(project_simplex(P), P, atol=1e-15)  # idempotent


def test_ball_projection():
    np.testing.assert_allclose(project_ball([3.0, 4.0], 1.0), [0.6, 0.8])
    x = np.array([0.1, 0.2])
    assert project_ball(x, 1.0) is not None and np.array_equal(project_ball(x, 1.0), x)


@pytest.mark.parametrize("call, match", [
    (lambda: project_simplex([np.nan, 1.0]), "y must be finite"),
    (lambda: project_simplex([]), "non-empty"),
    (lambda: project_ball([1.0], 0.0), "radius"),
    (lambda: project_ball([np.inf], 1.0), "x must be finite"),
])
def test_bad_input(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_simplex_projection_keeps_precision_for_huge_entries():
    y = np.array([1e16 + 2.0, 1e16, 1e16 - 2.0, -3.0])  # representable: the spacing at 1e16 is 2
    np.testing.assert_allclose(project_simplex(y), [1.0, 0.0, 0.0, 0.0], atol=1e-12)
    z = np.array([1e16, 1e16, 5.0])
    np.testing.assert_allclose(project_simplex(z), [0.5, 0.5, 0.0], atol=1e-12)
    batch = np.stack([y, np.array([3.0, 1.0, 0.0, -1.0]) + 1e16])
    np.testing.assert_allclose(project_simplex(batch, axis=1)[1], [1.0, 0.0, 0.0, 0.0], atol=1e-12)
