"""The bilevel test problems: hand-written derivatives against finite differences, closed forms,
oracle counting, bad input."""
import numpy as np
import pytest

from optbook.core import fd_gradient
from optbook.bilevel.problems import BilevelProblem, FlatnessToy, QuadraticBilevel, RepresentationProxy

PROBLEMS = [
    lambda: FlatnessToy(delta=0.3, c=0.7, rng=0),
    lambda: QuadraticBilevel.random(rng=1),
    lambda: RepresentationProxy(k=3, p=5, n=30, m=20, shift=0.5, rng=2),
]


def _point(p, seed=0):
    gen = np.random.default_rng(seed)
    return gen.standard_normal(p.dx), gen.standard_normal(p.dy)


@pytest.mark.parametrize("make", PROBLEMS)
def test_gradients_match_finite_differences(make):
    p = make()
    x, y = _point(p)
    fx, fy = p.grad_f(x, y)
    gx, gy = p.grad_g(x, y)
    assert np.allclose(fx, fd_gradient(lambda u: p.f(u, y), x), atol=1e-6)
    assert np.allclose(fy, fd_gradient(lambda u: p.f(x, u), y), atol=1e-6)
    assert np.allclose(gx, fd_gradient(lambda u: p.g(u, y), x), atol=1e-6)
    assert np.allclose(gy, fd_gradient(lambda u: p.g(x, u), y), atol=1e-6)


@pytest.mark.parametrize("make", PROBLEMS)
def test_second_order_products_match_finite_differences(make):
    p = make()
    x, y = _point(p)
    v = np.random.default_rng(5).standard_normal(p.dy)
    hv = fd_gradient(lambda u: p.grad_g(x, u)[1] @ v, y)
    assert np.allclose(p.hvp_g(x, y, v), hv, atol=1e-6)
    assert np.allclose(p._hess_yy_g(x, y) @ v, hv, atol=1e-6)
    cross = fd_gradient(lambda u: p.grad_g(u, y)[1] @ v, x)
    assert np.allclose(p.cross_g(x, y, v), cross, atol=1e-6)


@pytest.mark.parametrize("make", PROBLEMS)
def test_y_star_solves_the_lower_level_and_the_hypergradient_is_phis_gradient(make):
    p = make()
    x, _ = _point(p)
    assert np.linalg.norm(p.grad_g(x, p.y_star(x))[1]) < 1e-10
    assert np.allclose(p.hypergradient(x), fd_gradient(p.phi, x), atol=1e-6)
    # the generic Newton solve agrees with a closed form
    assert np.allclose(BilevelProblem.y_star(p, x), p.y_star(x), atol=1e-10)


def test_flatness_toy_closed_forms():
    p = FlatnessToy(delta=0.2, rng=3)
    xs = p.x_star()
    assert np.linalg.norm(p.hypergradient(xs)) < 1e-12
    assert p.floor() == pytest.approx(np.linalg.norm(xs - p.b))
    flat = FlatnessToy(delta=0.0, rng=3)
    x = np.ones(flat.dx)
    assert np.allclose(flat.grad_f(x, flat.y_star(x))[1], 0.0)     # exactly flat at y* when delta = 0
    assert np.allclose(flat.hypergradient(x), flat.grad_f(x, flat.y_star(x))[0])


def test_quadratic_closed_forms():
    q = QuadraticBilevel.random(rng=4)
    x = np.linspace(-1, 1, q.dx)
    assert np.allclose(q.hypergradient(x), q.hypergradient_closed_form(x), atol=1e-12)
    assert np.linalg.norm(q.hypergradient_closed_form(q.x_star())) < 1e-10


def test_calls_are_counted_per_oracle():
    p = FlatnessToy(rng=0)
    x, y = _point(p)
    p.grad_f(x, y), p.grad_g(x, y), p.grad_g(x, y), p.hvp_g(x, y, y), p.cross_g(x, y, y)
    assert dict(p.calls) == {"grad_f": 1, "grad_g": 2, "hvp_g": 1, "cross_g": 1}
    assert p.ll_calls == 4
    p.phi(x), p.hypergradient(x), p.f(x, y)      # reference quantities are free
    assert p.ll_calls == 4
    p.reset_calls()
    assert p.ll_calls == 0


@pytest.mark.parametrize("call, name", [
    (lambda: FlatnessToy(dx=0), "dx"),
    (lambda: FlatnessToy(delta=np.nan), "delta"),
    (lambda: FlatnessToy(kappa=0.5), "kappa"),
    (lambda: FlatnessToy(c=-1.0), "c"),
    (lambda: QuadraticBilevel(-np.eye(2), np.ones((2, 2)), np.ones(2), np.ones(2)), "H"),
    (lambda: QuadraticBilevel(np.eye(2), np.ones((3, 2)), np.ones(2), np.ones(2)), "B"),
    (lambda: QuadraticBilevel(np.eye(2), np.ones((2, 2)), np.ones(3), np.ones(2)), "b"),
    (lambda: QuadraticBilevel(np.eye(2), np.ones((2, 2)), np.ones(2), np.ones(2), a=-1.0), "a"),
    (lambda: RepresentationProxy(ridge=0.0), "ridge"),
    (lambda: RepresentationProxy(shift=-1.0), "shift"),
    (lambda: FlatnessToy(rng=0).grad_f(np.ones(4), np.ones(8)), "x"),
    (lambda: FlatnessToy(rng=0).grad_g(np.ones(5), np.full(8, np.inf)), "y"),
    (lambda: FlatnessToy(rng=0).hvp_g(np.ones(5), np.ones(8), np.ones(2)), "v"),
])
def test_bad_input_names_the_argument(call, name):
    with pytest.raises(ValueError, match=name):
        call()
