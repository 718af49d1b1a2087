"""Tests of chapter 13's methods: manifolds, RO2NC, ZO-RO2NC, the Riemannian baselines, the DPCP
problem and the Goldstein estimator."""
import math
import subprocess
import sys

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


def test_sphere_distance_is_accurate_at_both_ends():
    """arccos(x.y) returns 0 below ~1e-8 rad and loses digits near pi; atan2 keeps them."""
    M = rn.Sphere(5)
    x = M.random_point(0)
    u = M.proj(x, np.random.default_rng(1).standard_normal(5))
    u /= np.linalg.norm(u)
    for t in (1e-12, 1e-9, 1e-6, 1.0, math.pi - 1e-9):
        assert M.dist(x, M.exp(x, t * u)) == pytest.approx(t, rel=1e-6)


def test_sphere_retraction_refuses_the_antipode():
    M = rn.Sphere(3)
    x = np.array([0.0, 0.0, 1.0])
    with pytest.raises(ValueError, match="x \\+ v != 0"):
        M.retract(x, -x)


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


def test_clip_norm():
    M = rn.Sphere(3)
    v = np.array([3.0, 4.0, 0.0])
    assert np.allclose(rn.clip_norm(v, 1.0, M), [0.6, 0.8, 0])
    assert rn.clip_norm(v, 10.0, M) is not None and np.array_equal(rn.clip_norm(v, 10.0, M), v)
    assert np.array_equal(rn.clip_norm(v, 0.0, M), np.zeros(3))     # radius 0: the origin
    for bad in (-1.0, float("nan"), float("inf"), "1"):
        with pytest.raises(ValueError, match="radius"):
            rn.clip_norm(v, bad, M)
    with pytest.raises(ValueError, match="v must be finite"):
        rn.clip_norm([np.nan, 0, 0], 1.0, M)
    with pytest.raises(ValueError, match="v must have shape"):
        rn.clip_norm([1.0, 0.0], 1.0, M)
    with pytest.raises(ValueError, match="manifold"):
        rn.clip_norm(v, 1.0, "sphere")


def test_theory_parameters():
    p = rn.theory_parameters(0.1, 0.05, 1.0)
    assert p["T"] == 100 and p["D"] == pytest.approx(5e-4) and p["eta"] == pytest.approx(5e-5)
    p = rn.theory_parameters(0.03, 0.2, 0.1)
    assert p["T"] == math.ceil((0.1 / 0.03) ** 2) and p["D"] * p["T"] == pytest.approx(0.2)
    assert p["eta"] == pytest.approx(p["D"] / (0.1 * math.sqrt(p["T"])))
    for kw, name in ((dict(eps=0.0), "eps"), (dict(delta=-1.0), "delta"), (dict(G=float("nan")), "G")):
        args = dict(eps=0.1, delta=0.05, G=1.0) | kw
        with pytest.raises(ValueError, match=name):
            rn.theory_parameters(**args)


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
    # Exact bias of the midpoint rule for a cubic: mean(d^3)/4.
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
    res = rn.ro2nc(p.fun, M.random_point(2), p.stochastic_subgrad, manifold=M, T=5, D=D, eta=0.05, maxiter=400,
                   rng=1, keep_path=True, record_every=1)
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
    """Run a step by hand: the learner's state after the update lies in T_{x_n}M."""
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


def test_callback_stops_a_run_where_it_raises():
    """A callback raising StopIteration ends the run at that recorded step (scipy's convention),
    and the run up to there is the same as an uninterrupted one."""
    p = rn.make_dpcp(6, 60, rng=0)
    M = rn.Sphere(6)
    x0 = M.random_point(0)
    seen = []

    def stop_at_third(x):
        seen.append(x)
        if len(seen) == 3:
            raise StopIteration

    for run, last in ((lambda **kw: rn.ro2nc(p.fun, x0, p.stochastic_subgrad, manifold=M, T=5, D=0.01, eta=0.01,
                                             maxiter=1000, rng=2, record_every=50, **kw), "x_last"),
                      (lambda **kw: rn.riemannian_subgradient(p.fun, x0, p.stochastic_subgrad, manifold=M,
                                                              maxiter=1000, rng=2, record_every=50, **kw), "x")):
        seen.clear()
        stopped, full = run(callback=stop_at_third), run()
        assert stopped.nit == 150 and stopped.message == "stopped by callback" and full.nit == 1000
        assert np.array_equal(seen[-1], stopped[last])                # the callback saw x_150
        assert np.array_equal(stopped.trace.objective, full.trace.objective[:4])   # rows 0, 50, 100, 150
    with pytest.raises(ValueError, match="callback"):
        rn.ro2nc(p.fun, x0, p.stochastic_subgrad, manifold=M, maxiter=10, callback=3)


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


def test_zo_gradient_rejects_bad_input():
    M = rn.Sphere(3)

    def fs(P, rng):
        return P[:, 0]

    x = np.array([1.0, 0.0, 0.0])
    with pytest.raises(ValueError, match="mu"):
        rn.zo_gradient(fs, x, M, 0.0)
    with pytest.raises(ValueError, match="x must lie on the unit sphere"):
        rn.zo_gradient(fs, 2 * x, M, 0.1)
    with pytest.raises(ValueError, match="fun_sample"):
        rn.zo_gradient(None, x, M, 0.1)
    with pytest.raises(ValueError, match="manifold"):
        rn.zo_gradient(fs, x, None, 0.1)


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
    # Origin inside the hull: exactly zero, not rounding noise.
    p, _ = rn.min_norm_in_hull([[1.0, 0], [-1.0, 1.0], [-1.0, -1.0]])
    assert np.array_equal(p, [0.0, 0.0])
    # One point; the zero matrix.
    p, lam = rn.min_norm_in_hull([[3.0, 4.0]])
    assert np.allclose(p, [3, 4]) and lam[0] == 1
    p, lam = rn.min_norm_in_hull(np.zeros((3, 2)))
    assert np.array_equal(p, [0.0, 0.0]) and lam.sum() == pytest.approx(1)


@pytest.mark.parametrize("scale", [1e-16, 1e-8, 1e8, 1e16])
def test_min_norm_in_hull_is_scale_equivariant(scale):
    G = np.random.default_rng(4).standard_normal((8, 3)) + np.array([2.0, 0.5, 0])
    p1, _ = rn.min_norm_in_hull(G)
    p2, _ = rn.min_norm_in_hull(scale * G)
    assert np.allclose(p2 / scale, p1, rtol=1e-9, atol=0)


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


def test_goldstein_vectorized_equals_pointwise_and_scales_with_f():
    p = rn.make_dpcp(10, 200, rng=0)
    M = rn.Sphere(10)
    x = M.random_point(3)
    a = rn.goldstein_estimate(x, p.subgrad, manifold=M, delta=0.1, n_samples=50, rng=7)
    b = rn.goldstein_estimate(x, p.subgrad, manifold=M, delta=0.1, n_samples=50, rng=7, vectorized=True)
    assert np.allclose(a.points, b.points, atol=1e-15) and a.value == pytest.approx(b.value, rel=1e-12)
    for c in (1e-6, 1e6):   # f -> c f multiplies every subgradient, hence the measure, by c
        s = rn.goldstein_estimate(x, lambda y: c * p.subgrad(y), manifold=M, delta=0.1, n_samples=50, rng=7,
                                  vectorized=True)
        assert s.value == pytest.approx(c * b.value, rel=1e-9)
    flat = rn.goldstein_estimate(np.zeros(3), lambda Y: Y + np.array([1.0, 0, 0]), manifold=rn.Euclidean(3),
                                 delta=0.5, rng=0, vectorized=True)
    assert np.linalg.norm(flat.points[1:], axis=1).max() <= 0.5 + 1e-12 and flat.value < 1.0


def test_goldstein_small_at_the_dpcp_normal():
    p = rn.make_dpcp(10, 200, rng=0)
    M = rn.Sphere(10)
    at_star = rn.goldstein_estimate(p.b_star, p.subgrad, manifold=M, delta=0.05, rng=0).value
    away = rn.goldstein_estimate(M.random_point(5), p.subgrad, manifold=M, delta=0.05, rng=0).value
    assert at_star < 0.01 < away


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
    assert np.allclose(p.subgrad(np.stack([x, -x])), [p.subgrad(x), -p.subgrad(x)])
    assert p.angle_deg(-p.b_star) == pytest.approx(0, abs=1e-6)
    # The minibatch oracles are unbiased: their means over many draws are the full ones.
    rng = np.random.default_rng(0)
    assert np.allclose(np.mean([p.stochastic_subgrad(x, rng) for _ in range(20_000)], axis=0), p.subgrad(x),
                       atol=0.02 * np.linalg.norm(p.subgrad(x)) + 0.01)
    assert np.mean([p.fun_sample(x[None], rng)[0] for _ in range(20_000)]) == pytest.approx(p.fun(x), rel=0.02)


def test_dpcp_angle_is_accurate_for_tiny_angles():
    p = rn.make_dpcp(6, 30, rng=0)
    M = rn.Sphere(6)
    u = M.proj(p.b_star, np.random.default_rng(2).standard_normal(6))
    u /= np.linalg.norm(u)
    for t in (1e-11, 1e-7, 0.3):
        assert p.angle_deg(M.exp(p.b_star, t * u)) == pytest.approx(math.degrees(t), rel=1e-6)
    assert p.angle_deg(5.0 * M.exp(p.b_star, 0.3 * u)) == pytest.approx(math.degrees(0.3))   # scale-free


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


def test_methods_module_does_not_pull_plotly():
    out = subprocess.run([sys.executable, "-c",
                          "import sys, optbook.geometry.riemannian_nonsmooth; print('plotly' in sys.modules)"],
                         capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


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
    with pytest.raises(ValueError, match="tol"):
        rn.ro2nc(p.fun, x0, p.stochastic_subgrad, tol=float("nan"), **kw)
    with pytest.raises(ValueError, match="maxiter"):
        rn.ro2nc(p.fun, x0, p.stochastic_subgrad, manifold=M, maxiter=0)
    with pytest.raises(ValueError, match="record_every"):
        rn.ro2nc(p.fun, x0, p.stochastic_subgrad, record_every=0, **kw)
    with pytest.raises(ValueError, match="manifold"):
        rn.ro2nc(p.fun, x0, p.stochastic_subgrad, manifold="sphere", maxiter=10)
    with pytest.raises(ValueError, match="jac"):
        rn.ro2nc(p.fun, x0, None, **kw)
    with pytest.raises(ValueError, match="fun"):
        rn.ro2nc(None, x0, p.stochastic_subgrad, **kw)
    with pytest.raises(ValueError, match="monitor"):
        rn.ro2nc(p.fun, x0, p.stochastic_subgrad, monitor=1, **kw)
    with pytest.raises(ValueError, match="mu"):
        rn.zo_ro2nc(p.fun, x0, p.fun_sample, mu=0.0, **kw)
    with pytest.raises(ValueError, match="fun_sample"):
        rn.zo_ro2nc(p.fun, x0, None, **kw)
    with pytest.raises(ValueError, match="eta0"):
        rn.riemannian_subgradient(p.fun, x0, p.stochastic_subgrad, eta0=0.0, **kw)
    with pytest.raises(ValueError, match="schedule"):
        rn.zo_rsgd(p.fun, x0, p.fun_sample, schedule="cosine", **kw)
    with pytest.raises(ValueError, match="x0"):
        rn.o2nc(p.fun, [np.inf, 1.0], p.stochastic_subgrad)
    with pytest.raises(ValueError, match="maxiter"):
        rn.o2nc(p.fun, np.ones(4), p.stochastic_subgrad, maxiter=-3)
    with pytest.raises(ValueError, match="delta"):
        rn.goldstein_estimate(x0, p.subgrad, manifold=M, delta=2.0)
    with pytest.raises(ValueError, match="delta"):
        rn.goldstein_estimate(x0, p.subgrad, manifold=M, delta=float("nan"))
    with pytest.raises(ValueError, match="n_samples"):
        rn.goldstein_estimate(x0, p.subgrad, manifold=M, delta=0.1, n_samples=0)
    with pytest.raises(ValueError, match="manifold"):
        rn.goldstein_estimate(np.eye(3)[:, :2], p.subgrad, manifold=rn.Stiefel(3, 2), delta=0.1)
    with pytest.raises(ValueError, match="subgrad must return"):
        rn.goldstein_estimate(x0, lambda Y: np.ones(3), manifold=M, delta=0.1, vectorized=True)
    with pytest.raises(ValueError, match="subgrad must return"):
        rn.goldstein_estimate(x0, lambda y: np.full(4, np.nan), manifold=M, delta=0.1)
    with pytest.raises(ValueError, match="G"):
        rn.min_norm_in_hull([[np.inf, 0]])
    with pytest.raises(ValueError, match="G"):
        rn.min_norm_in_hull(np.zeros((0, 3)))
    with pytest.raises(ValueError, match="p"):
        rn.Stiefel(2, 3)
    with pytest.raises(ValueError, match="n"):
        rn.Sphere(1)
    with pytest.raises(ValueError, match="X\\^T X"):
        rn.Stiefel(3, 2).check_point(np.ones((3, 2)))


def test_dpcp_rejects_bad_data():
    p = rn.make_dpcp(4, 20, rng=0)
    for kw in (dict(inlier_fraction=1.5), dict(inlier_fraction=float("nan")), dict(inlier_fraction=True)):
        with pytest.raises(ValueError, match="inlier_fraction"):
            rn.make_dpcp(4, 20, **kw)
    with pytest.raises(ValueError, match="batch"):
        rn.make_dpcp(4, 20, batch=0)
    Y = p.Y.copy()
    Y[0, 0] = np.nan
    with pytest.raises(ValueError, match="Y must be finite"):
        rn.DPCP(Y, p.b_star)
    with pytest.raises(ValueError, match="Y"):
        rn.DPCP(p.Y[:, :1], np.ones(1))
    with pytest.raises(ValueError, match="b_star"):
        rn.DPCP(p.Y, 2 * p.b_star)                 # not a unit vector
    with pytest.raises(ValueError, match="b_star"):
        rn.DPCP(p.Y, np.ones(3) / math.sqrt(3))     # wrong length
    with pytest.raises(ValueError, match="b must be"):
        p.fun(np.ones(3))
    with pytest.raises(ValueError, match="b must be finite"):
        p.subgrad(np.array([np.nan, 0, 0, 0]))
    with pytest.raises(ValueError, match="b must not be zero"):
        p.angle_deg(np.zeros(4))
