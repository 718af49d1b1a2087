"""Tests of chapter 13: RO2NC, ZO-RO2NC, the Riemannian baselines and the Goldstein estimator."""
import math

import numpy as np
import pytest
from scipy.optimize import minimize

from optbook.geometry import riemannian_nonsmooth as rn

# ------------------------------------------------------------------ manifold operations


@pytest.mark.parametrize("seed", range(3))
def test_sphere_ops(seed):
    rng = np.random.default_rng(seed)
    M = rn.Sphere(7)
    x = M.random_point(rng)
    v = M.proj(x, rng.standard_normal(7))
    assert abs(x @ v) < 1e-14                                       # P_x x = 0 direction
    assert np.allclose(M.proj(x, M.proj(x, v)), M.proj(x, v), atol=1e-15)  # idempotent
    assert np.allclose(M.proj(x, x), 0, atol=1e-15)
    for t in (1e-3, 0.5, 10.0):
        assert abs(np.linalg.norm(M.retract(x, t * v)) - 1) < 1e-12  # R_x(v) on M
        assert abs(np.linalg.norm(M.exp(x, t * v)) - 1) < 1e-12
    assert np.allclose(M.retract(x, 0 * v), x, atol=1e-15, rtol=0)   # R_x(0) = x
    h = 1e-6                                                          # d/dt R_x(tv)|0 = v
    assert np.allclose((M.retract(x, h * v) - M.retract(x, -h * v)) / (2 * h), v, atol=1e-8)
    u = v / np.linalg.norm(v)                                         # Exp moves a geodesic distance ||v||
    assert M.dist(x, M.exp(x, 0.3 * u)) == pytest.approx(0.3, abs=1e-12)


@pytest.mark.parametrize("seed", range(3))
def test_stiefel_ops(seed):
    rng = np.random.default_rng(seed)
    M = rn.Stiefel(6, 3)
    X = M.random_point(rng)
    assert np.allclose(X.T @ X, np.eye(3), atol=1e-12)
    V = M.proj(X, rng.standard_normal((6, 3)))
    S = X.T @ V
    assert np.allclose(S, -S.T, atol=1e-13)                           # tangent: X^T V skew
    assert np.allclose(M.proj(X, V), V, atol=1e-13)                   # idempotent
    Y = M.retract(X, 0.7 * V)
    assert np.allclose(Y.T @ Y, np.eye(3), atol=1e-12)
    assert np.allclose(M.retract(X, 0 * V), X, atol=1e-12)            # qf with positive diagonal
    h = 1e-6
    assert np.allclose((M.retract(X, h * V) - M.retract(X, -h * V)) / (2 * h), V, atol=1e-7)
    assert M.dim == 6 * 3 - 6


def test_ro2nc_stays_on_stiefel():
    M = rn.Stiefel(5, 2)
    C = np.random.default_rng(0).standard_normal((5, 2))

    def fun(X):
        return float(np.abs(X - C).sum())

    def jac(X, rng):
        return np.sign(X - C)

    res = rn.ro2nc(fun, M.random_point(1), jac, manifold=M, T=10, D=0.01, eta=0.003, maxiter=300, rng=0)
    assert np.allclose(res.x_last.T @ res.x_last, np.eye(2), atol=1e-10)
    assert res.trace.objective[-1] < res.trace.objective[0]


# ------------------------------------------------------------------ RO2NC structure


def test_euclidean_reduction_is_bit_for_bit():
    """RO2NC on R^n (R_x(v) = x + v, P = I) is Euclidean O2NC, same seed, same numbers."""
    A = np.random.default_rng(0).standard_normal((20, 5))

    def fun(x):
        return float(np.abs(A @ x).mean() + 0.1 * x @ x)

    def jac(x, rng):
        rows = A[rng.integers(0, 20, 4)]
        return np.sign(rows @ x) @ rows / 4 + 0.2 * x

    x0 = np.ones(5)
    a = rn.o2nc(fun, x0, jac, T=7, D=0.05, eta=0.01, maxiter=500, rng=3, record_every=1)
    b = rn.ro2nc(fun, x0, jac, manifold=rn.Euclidean(5), T=7, D=0.05, eta=0.01, maxiter=500, rng=3,
                 record_every=1)
    assert np.array_equal(a.x_last, b.x_last)
    assert np.array_equal(a.window_norms, b.window_norms)
    assert np.array_equal(a.trace.objective, b.trace.objective)
    assert np.array_equal(a.trace.step_size, b.trace.step_size)


def test_ftc_identity_needs_the_random_point():
    """E[f(x + Delta) - f(x)] = E<grad f(x + s Delta), Delta> with s ~ U[0,1]; the midpoint is biased
    for a cubic."""
    rng = np.random.default_rng(0)
    n = 200_000
    x, d = rng.standard_normal(n), rng.standard_normal(n)

    def f(t):
        return t ** 3

    def g(t):
        return 3 * t ** 2

    lhs = np.mean(f(x + d) - f(x))
    s = rng.random(n)
    rand = np.mean(g(x + s * d) * d)
    mid = np.mean(g(x + 0.5 * d) * d)
    se = np.std(g(x + s * d) * d - (f(x + d) - f(x))) / math.sqrt(n)
    assert abs(rand - lhs) < 5 * se + 1e-3
    # Exact bias of the midpoint rule for a cubic: E[d^3]/4 ... = mean(d^3)/4 per sample.
    assert abs((lhs - mid) - np.mean(d ** 3) / 4) < 1e-8


def test_ftc_midpoint_bias_is_visible():
    rng = np.random.default_rng(1)
    n = 100_000
    x, d = rng.standard_normal(n), 0.5 + rng.random(n)  # positive increments: E[d^3] > 0
    lhs = np.mean((x + d) ** 3 - x ** 3)
    mid = np.mean(3 * (x + 0.5 * d) ** 2 * d)
    rand = np.mean(3 * (x + rng.random(n) * d) ** 2 * d)
    assert lhs - mid == pytest.approx(np.mean(d ** 3) / 4, rel=1e-10)
    assert abs(lhs - rand) < 0.25 * (lhs - mid)


def test_clipping_and_tangency_along_a_run():
    p = rn.make_dpcp(8, 60, rng=0)
    M = rn.Sphere(8)
    D = 0.01

    def jac(x, rng):
        return p.stochastic_subgrad(x, rng)

    res = rn.ro2nc(p.fun, M.random_point(2), jac, manifold=M, T=5, D=D, eta=0.05, maxiter=400, rng=1,
                   keep_path=True, record_every=1)
    steps = np.diff(res.path, axis=0)
    assert np.all(np.linalg.norm(steps, axis=1) <= D + 1e-12)      # ||x_n - x_{n-1}|| <= ||Delta|| <= D
    assert np.all(res.trace.step_size <= D + 1e-12)
    assert np.allclose(np.linalg.norm(res.path, axis=1), 1, atol=1e-12)
    # Query points lie on the retraction curve between consecutive iterates.
    for k in range(0, 400, 37):
        x0, x1, w = res.path[k], res.path[k + 1], res.queries[k]
        assert M.dist(x0, w) + M.dist(w, x1) == pytest.approx(M.dist(x0, x1), abs=1e-9)
    assert len(res.window_norms) == 80


def test_delta_is_tangent_at_the_new_point():
    """Run a few steps by hand: the learner's state after the update lies in T_{x_n}M."""
    M = rn.Sphere(5)
    rng = np.random.default_rng(0)
    x = M.random_point(rng)
    delta = 0.01 * M.proj(x, rng.standard_normal(5))
    x_new = M.retract(x, delta)
    g = M.proj(M.retract(x, 0.3 * delta), rng.standard_normal(5))
    new = rn.clip_norm(M.transport(x, x_new, delta - 0.1 * g), 0.02, M)
    assert abs(new @ x_new) < 1e-15
    assert np.linalg.norm(new) <= 0.02 + 1e-15


def test_ro2nc_is_deterministic_under_a_seed_and_stops_on_tol():
    p = rn.make_dpcp(10, 100, rng=1)
    M = rn.Sphere(10)
    x0 = M.random_point(0)
    a = rn.ro2nc(p.fun, x0, p.stochastic_subgrad, manifold=M, T=20, D=0.005, eta=0.001, maxiter=2000, rng=5)
    b = rn.ro2nc(p.fun, x0, p.stochastic_subgrad, manifold=M, T=20, D=0.005, eta=0.001, maxiter=2000, rng=5)
    assert np.array_equal(a.x, b.x) and np.array_equal(a.window_norms, b.window_norms)
    c = rn.ro2nc(p.fun, x0, p.stochastic_subgrad, manifold=M, T=20, D=0.005, eta=0.001, maxiter=2000, rng=5,
                 tol=0.5)
    assert c.nit == 20 and c.success   # the first window's certificate is below 0.5 already


def test_ro2nc_output_is_best_window_reference():
    p = rn.make_dpcp(10, 100, rng=1)
    M = rn.Sphere(10)
    r = rn.ro2nc(p.fun, M.random_point(0), p.stochastic_subgrad, manifold=M, T=10, D=0.005, eta=0.001,
                 maxiter=300, rng=0, keep_path=True)
    k = int(np.argmin(r.window_norms))
    assert r.best_window == k
    assert np.array_equal(r.x, r.path[k * 10])


# ------------------------------------------------------------------ zeroth order


def test_zo_estimator_is_unbiased_for_linear_functions():
    M = rn.Sphere(6)
    rng = np.random.default_rng(0)
    x = M.random_point(rng)
    c = rng.standard_normal(6)
    mu = 1e-2

    def fs(P, rng):
        return P @ c

    est = np.mean([rn.zo_gradient(fs, x, M, mu, rng) for _ in range(40_000)], axis=0)
    target = M.proj(x, c) / math.sqrt(1 + mu ** 2)     # closed form of the mean
    assert np.linalg.norm(est - target) < 0.05 * np.linalg.norm(target)
    g = rn.zo_gradient(fs, x, M, mu, rng)
    assert abs(g @ x) < 1e-12                          # tangent


def test_zo_methods_decrease_dpcp():
    p = rn.make_dpcp(6, 120, rng=0)
    M = rn.Sphere(6)
    x0 = M.random_point(3)
    r = rn.zo_ro2nc(p.fun, x0, p.fun_sample, manifold=M, T=20, D=0.005, eta=0.001, maxiter=3000, rng=0)
    s = rn.zo_rsgd(p.fun, x0, p.fun_sample, manifold=M, eta0=0.01, maxiter=3000, rng=0)
    assert r.nfev == 6000 and s.nfev == 6000
    assert p.angle_deg(r.x_last) < p.angle_deg(x0) - 20
    assert p.angle_deg(s.x) < p.angle_deg(x0) - 20


# ------------------------------------------------------------------ Goldstein estimator


@pytest.mark.parametrize("seed", range(3))
def test_min_norm_in_hull_matches_slsqp(seed):
    rng = np.random.default_rng(seed)
    G = rng.standard_normal((6, 3)) + np.array([1.5, 0, 0])
    point, lam = rn.min_norm_in_hull(G)
    ref = minimize(lambda w: np.sum((w @ G) ** 2), np.full(6, 1 / 6), method="SLSQP",
                   bounds=[(0, 1)] * 6, constraints={"type": "eq", "fun": lambda w: w.sum() - 1},
                   options=dict(ftol=1e-14, maxiter=500))
    assert lam.min() >= 0 and lam.sum() == pytest.approx(1)
    assert np.linalg.norm(point) == pytest.approx(np.linalg.norm(ref.x @ G), abs=1e-6)


def test_min_norm_in_hull_closed_forms():
    # Segment from (1, 1) to (1, -1): the min-norm point is (1, 0).
    p, _ = rn.min_norm_in_hull([[1.0, 1.0], [1.0, -1.0]])
    assert np.allclose(p, [1, 0], atol=1e-12)
    # Origin inside the hull.
    p, _ = rn.min_norm_in_hull([[1.0, 0], [-1.0, 1.0], [-1.0, -1.0]])
    assert np.linalg.norm(p) < 1e-12
    # One point.
    p, lam = rn.min_norm_in_hull([[3.0, 4.0]])
    assert np.allclose(p, [3, 4]) and lam[0] == 1


def test_goldstein_tends_to_gradient_norm_for_smooth_f():
    M = rn.Sphere(4)
    c = np.array([1.0, -2.0, 0.5, 0.3])
    x = M.random_point(0)
    grad_norm = np.linalg.norm(M.proj(x, c))
    values = [rn.goldstein_estimate(x, lambda y: c, manifold=M, delta=d, rng=0).value for d in (0.3, 0.03, 0.003)]
    errors = [abs(v - grad_norm) for v in values]
    assert errors[2] < 0.01 * grad_norm
    assert errors[2] < errors[0]
    assert all(v <= grad_norm + 1e-12 for v in values)   # the hull contains grad f(x) itself


def test_goldstein_small_at_the_dpcp_normal_and_not_at_a_smooth_point():
    p = rn.make_dpcp(10, 200, rng=0)
    M = rn.Sphere(10)
    at_star = rn.goldstein_estimate(p.b_star, p.subgrad, manifold=M, delta=0.05, rng=0).value
    assert at_star < 0.01
    toy = rn.goldstein_estimate(rn._toy_point()[0], rn.toy_subgrad, manifold=rn.Sphere(3), delta=0.02, rng=0)
    assert toy.value > 1.0    # inside one smooth piece: ~ ||(1, 0.5)|| projected


def test_toy_goldstein_staircase():
    vals = [rn.toy_goldstein(d).value for d in (0.04, 0.1, 0.2)]
    assert vals[0] > 1.0 and 0.4 < vals[1] < 0.6 and vals[2] < 1e-8


# ------------------------------------------------------------------ problem and baselines


def test_dpcp_problem_and_subgradient():
    p = rn.make_dpcp(5, 50, 0.6, rng=0)
    assert np.allclose(np.linalg.norm(p.Y, axis=1), 1)
    assert np.allclose(p.Y[:30] @ p.b_star, 0, atol=1e-12)
    x = np.random.default_rng(11).standard_normal(5)   # a generic point (not a multiple of b_star)
    h = 1e-7
    fd = np.array([(p.fun(x + h * e) - p.fun(x - h * e)) / (2 * h) for e in np.eye(5)])
    assert np.allclose(fd, p.subgrad(x), atol=1e-6)        # differentiable at a generic point
    assert p.fun(np.stack([x, 2 * x])) == pytest.approx([p.fun(x), 2 * p.fun(x)])
    assert p.angle_deg(-p.b_star) == pytest.approx(0, abs=1e-6)


def test_baselines_on_dpcp():
    p = rn.make_dpcp(10, 200, rng=0)
    M = rn.Sphere(10)
    x0 = M.random_point(1)
    r = rn.riemannian_subgradient(p.fun, x0, p.stochastic_subgrad, manifold=M, eta0=0.3, maxiter=3000, rng=0)
    assert p.angle_deg(r.x) < 3
    assert r.trace.method == "RSM"
    c = rn.riemannian_subgradient(p.fun, x0, p.stochastic_subgrad, manifold=M, eta0=0.005,
                                  schedule="constant", maxiter=3000, rng=0)
    assert c.trace.method == "RSGD" and np.allclose(c.trace.step_size[1:], 0.005)


# ------------------------------------------------------------------ bad input


def test_bad_input_is_rejected():
    p = rn.make_dpcp(4, 20, rng=0)
    M = rn.Sphere(4)
    x0 = M.random_point(0)
    kw = dict(manifold=M, maxiter=10)
    with pytest.raises(ValueError, match="x0"):
        rn.ro2nc(p.fun, np.ones(4), p.stochastic_subgrad, **kw)           # not on the sphere
    with pytest.raises(ValueError, match="x0"):
        rn.ro2nc(p.fun, np.ones(3) / math.sqrt(3), p.stochastic_subgrad, **kw)
    with pytest.raises(ValueError, match="x0"):
        rn.ro2nc(p.fun, np.array([np.nan, 0, 0, 1.0]), p.stochastic_subgrad, **kw)
    with pytest.raises(ValueError, match="T"):
        rn.ro2nc(p.fun, x0, p.stochastic_subgrad, T=0, **kw)
    with pytest.raises(ValueError, match="D"):
        rn.ro2nc(p.fun, x0, p.stochastic_subgrad, D=-1.0, **kw)
    with pytest.raises(ValueError, match="eta"):
        rn.ro2nc(p.fun, x0, p.stochastic_subgrad, eta=float("inf"), **kw)
    with pytest.raises(ValueError, match="maxiter"):
        rn.ro2nc(p.fun, x0, p.stochastic_subgrad, manifold=M, maxiter=0)
    with pytest.raises(ValueError, match="manifold"):
        rn.ro2nc(p.fun, x0, p.stochastic_subgrad, manifold="sphere", maxiter=10)
    with pytest.raises(ValueError, match="jac"):
        rn.ro2nc(p.fun, x0, None, **kw)
    with pytest.raises(ValueError, match="mu"):
        rn.zo_ro2nc(p.fun, x0, p.fun_sample, mu=0.0, **kw)
    with pytest.raises(ValueError, match="eta0"):
        rn.riemannian_subgradient(p.fun, x0, p.stochastic_subgrad, eta0=0.0, **kw)
    with pytest.raises(ValueError, match="schedule"):
        rn.zo_rsgd(p.fun, x0, p.fun_sample, schedule="cosine", **kw)
    with pytest.raises(ValueError, match="delta"):
        rn.goldstein_estimate(x0, p.subgrad, manifold=M, delta=2.0)
    with pytest.raises(ValueError, match="n_samples"):
        rn.goldstein_estimate(x0, p.subgrad, manifold=M, delta=0.1, n_samples=0)
    with pytest.raises(ValueError, match="manifold"):
        rn.goldstein_estimate(np.eye(3)[:, :2], p.subgrad, manifold=rn.Stiefel(3, 2), delta=0.1)
    with pytest.raises(ValueError, match="G"):
        rn.min_norm_in_hull([[np.inf, 0]])
    with pytest.raises(ValueError, match="p"):
        rn.Stiefel(2, 3)
    with pytest.raises(ValueError, match="n"):
        rn.Sphere(1)
    with pytest.raises(ValueError, match="inlier_fraction"):
        rn.make_dpcp(4, 20, 1.5)
    with pytest.raises(ValueError, match="X\\^T X"):
        rn.Stiefel(3, 2).check_point(np.ones((3, 2)))


# ------------------------------------------------------------------ figures


def test_slider_figures_have_frames():
    assert len(rn.goldstein_slider_figure().frames) == len(rn.GOLD_DELTAS)
    assert len(rn.playground_slider_figure().frames) == len(rn.PLAY_FRAMES)
    assert len(rn.one_step_figure().data) == 6
