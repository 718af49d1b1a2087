import numpy as np
import pytest

from optbook.core import armijo_backtracking, strong_wolfe, weak_wolfe

ONE_D = {
    "quadratic": (lambda x: float(2.0 * x[0] ** 2), lambda x: np.array([4.0 * x[0]])),
    "logcosh": (lambda x: float(np.log(np.cosh(3.0 * x[0]))), lambda x: np.array([3.0 * np.tanh(3.0 * x[0])])),
    "quartic": (lambda x: float(x[0] ** 4 + 0.1 * x[0] ** 2), lambda x: np.array([4 * x[0] ** 3 + 0.2 * x[0]])),
}


@pytest.mark.parametrize("interpolate", [True, False])
@pytest.mark.parametrize("name", ONE_D)
@pytest.mark.parametrize("start", [0.3, 2.0, -5.0])
def test_weak_wolfe_conditions_hold(name, start, interpolate):
    f, g = ONE_D[name]
    x = np.array([start])
    d = -g(x)
    ls = weak_wolfe(f, g, x, d, g(x), c1=0.1, c2=0.9, interpolate=interpolate)
    assert ls.success
    slope = float(g(x) @ d)
    assert f(x + ls.step * d) <= f(x) + 0.1 * ls.step * slope
    assert float(g(x + ls.step * d) @ d) >= 0.9 * slope
    assert ls.fun == f(x + ls.step * d)


def test_weak_wolfe_takes_unit_step_when_it_passes():
    f, g = ONE_D["quadratic"]
    x = np.array([1.0])
    d = -x  # Newton direction for 2x^2 is -x; unit step is exact
    ls = weak_wolfe(f, g, x, d, g(x))
    assert ls.step == 1.0 and ls.nfev == 1


def test_weak_wolfe_extends_short_steps():
    f, g = ONE_D["quadratic"]
    x = np.array([1.0])
    d = -0.01 * g(x)  # far too short: the curvature test fails at eta = 1
    ls = weak_wolfe(f, g, x, d, g(x))
    assert ls.success and ls.step > 1.0


@pytest.mark.parametrize("curvature", [1e3, 1e-3])
def test_interpolation_needs_far_fewer_evaluations_on_a_badly_scaled_line(curvature):
    """Along d = -grad f on f = curvature/2 x^2 the ideal step is 1/curvature: the unit step is 1000x
    too long or too short. Bisection halves or doubles many times; the safeguarded
    interpolation needs a handful of trials."""
    f = lambda x: float(0.5 * curvature * x[0] ** 2)  # noqa: E731
    g = lambda x: np.array([curvature * x[0]])  # noqa: E731
    x = np.array([1.0])
    fast = weak_wolfe(f, g, x, -g(x), g(x), c1=1e-4, c2=0.9)
    slow = weak_wolfe(f, g, x, -g(x), g(x), c1=1e-4, c2=0.9, interpolate=False)
    assert fast.success and slow.success
    assert fast.nfev <= 4 and slow.nfev >= 2 * fast.nfev, (fast.nfev, slow.nfev)


def test_weak_wolfe_terminates_on_a_wiggly_line():
    """Nonconvex along the line: the bisection fallback keeps the bracket shrinking."""
    f = lambda x: float(x[0] ** 2 + 0.3 * np.sin(40 * x[0]))  # noqa: E731
    g = lambda x: np.array([2 * x[0] + 12 * np.cos(40 * x[0])])  # noqa: E731
    for start in np.linspace(-2, 2, 17):
        x = np.array([start])
        gx = g(x)
        if abs(gx[0]) < 1e-8:
            continue
        ls = weak_wolfe(f, g, x, -gx, gx, c1=0.1, c2=0.9, max_evals=60)
        assert ls.success
        slope = float(gx @ -gx)
        assert f(x - ls.step * gx) <= f(x) + 0.1 * ls.step * slope
        assert float(g(x - ls.step * gx) @ -gx) >= 0.9 * slope


def test_strong_wolfe_conditions_hold():
    f, g = ONE_D["logcosh"]
    x = np.array([2.0])
    d = -g(x)
    ls = strong_wolfe(f, g, x, d, g(x), c1=1e-4, c2=0.9)
    assert ls.success
    assert abs(float(g(x + ls.step * d) @ d)) <= 0.9 * abs(float(g(x) @ d)) + 1e-12


def test_armijo_backtracking():
    f, g = ONE_D["quartic"]
    x = np.array([3.0])
    ls = armijo_backtracking(f, x, -g(x), g(x), c1=0.5)
    assert ls.success
    assert ls.fun <= f(x) - 0.5 * ls.step * float(g(x) @ g(x))
    # halving stopped at the first acceptable step: twice the step fails
    assert f(x - 2 * ls.step * g(x)) > f(x) - 0.5 * 2 * ls.step * float(g(x) @ g(x))


@pytest.mark.parametrize("kwargs, match", [
    (dict(c1=0.6), "c1"), (dict(c1=0.1, c2=0.05), "c2"), (dict(eta0=0.0), "eta0"),
    (dict(max_evals=0), "max_evals"),
])
def test_bad_parameters(kwargs, match):
    f, g = ONE_D["quadratic"]
    x = np.array([1.0])
    with pytest.raises(ValueError, match=match):
        weak_wolfe(f, g, x, -g(x), g(x), **kwargs)


def test_ascent_direction_rejected():
    f, g = ONE_D["quadratic"]
    x = np.array([1.0])
    with pytest.raises(ValueError, match="descent direction"):
        weak_wolfe(f, g, x, g(x), g(x))
    with pytest.raises(ValueError, match="descent direction"):
        armijo_backtracking(f, x, g(x), g(x))
