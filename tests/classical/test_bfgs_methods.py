import subprocess
import sys

import numpy as np
import pytest
from scipy.optimize import minimize

from optbook.classical import bfgs_methods as ch
from optbook.classical.bfgs_chapter import solve_reference
from optbook.core import AffineComposition, conditioning_map, make_cubic, make_logistic, quadratic_with_condition


def _update(H, s, y):
    rho, Hy = 1.0 / (s @ y), H @ y
    return H - rho * (np.outer(s, Hy) + np.outer(Hy, s)) + (rho * rho * (y @ Hy) + rho) * np.outer(s, s)


def test_inverse_update_algebra():
    rng = np.random.default_rng(0)
    B = np.eye(5) + 0.1 * np.ones((5, 5))
    H = np.linalg.inv(B)
    s, y = rng.standard_normal(5), rng.standard_normal(5)
    if s @ y < 0:
        y = -y
    H1 = _update(H, s, y)
    B1 = B - np.outer(B @ s, B @ s) / (s @ B @ s) + np.outer(y, y) / (s @ y)  # direct BFGS update
    np.testing.assert_allclose(H1 @ y, s, atol=1e-12)  # secant equation
    np.testing.assert_allclose(H1, H1.T, atol=1e-14)
    assert np.linalg.eigvalsh(H1).min() > 0
    assert np.linalg.norm(H1 @ B1 - np.eye(5)) <= 1e-8


def test_hessian_as_initial_matrix_gives_one_newton_step():
    q = quadratic_with_condition(6, 1e3, rng=1)
    res = ch.bfgs(q.fun, np.ones(6), q.jac, B0=q.A, tol=1e-12)
    assert res.nit == 1 and np.allclose(res.x, q.x_star)


def test_quadratic_converges_and_matches_scipy():
    q = quadratic_with_condition(8, 100.0, rng=2)
    res = ch.bfgs(q.fun, np.zeros(8), q.jac, tol=1e-12)
    assert res.success and res.nit <= 40
    np.testing.assert_allclose(res.x, q.x_star, atol=1e-8)


@pytest.mark.parametrize("maker", [lambda r: make_logistic(200, 10, rng=r), lambda r: make_cubic(40, 8, rng=r)])
def test_agrees_with_scipy(maker):
    rng = np.random.default_rng(3)
    p = maker(rng)
    x0 = rng.standard_normal(p.dim)
    ours = ch.bfgs(p.fun, x0, p.jac, tol=1e-10)
    ref = minimize(p.fun, x0, jac=p.jac, method="BFGS", options={"gtol": 1e-10})
    assert ours.success
    np.testing.assert_allclose(ours.x, ref.x, atol=1e-6)


def test_wolfe_conditions_hold_along_the_run():
    p = make_logistic(200, 10, rng=4)
    res = ch.bfgs(p.fun, 3 * np.ones(10), p.jac, c1=0.1, c2=0.9, tol=1e-10)
    X, f = res.iterates, res.trace.objective
    for t in range(len(X) - 1):
        s = X[t + 1] - X[t]
        g0, g1 = p.jac(X[t]), p.jac(X[t + 1])
        assert f[t + 1] <= f[t] + 0.1 * (g0 @ s) + 1e-15
        assert g1 @ s >= 0.9 * (g0 @ s) - 1e-15
    assert np.all(np.diff(f) <= 1e-15)  # monotone decrease


def test_exact_affine_invariance():
    rng = np.random.default_rng(5)
    f = make_logistic(300, 12, rng=rng)
    A, b = conditioning_map(12, 1e5, rng), rng.standard_normal(12)
    g = AffineComposition(f, A, b)
    x0 = rng.standard_normal(12)
    rf = ch.bfgs(f.fun, x0, f.jac, hess=f.hess, stop="newton_decrement", tol=1e-10)
    rg = ch.bfgs(g.fun, g.to_u(x0), g.jac, hess=g.hess, B0=A.T @ A, stop="newton_decrement", tol=1e-10)
    assert rf.nit == rg.nit
    scale = rf.trace.objective[0] - rf.fun
    assert np.max(np.abs(rf.trace.objective - rg.trace.objective)) / scale <= 1e-10
    np.testing.assert_allclose(rf.trace.step_size, rg.trace.step_size, rtol=1e-12)
    np.testing.assert_allclose(rf.trace["newton_decrement"], rg.trace["newton_decrement"], rtol=1e-6, atol=1e-13)
    np.testing.assert_allclose(rg.iterates @ A.T + b, rf.iterates, atol=1e-6)


def test_identity_start_is_not_invariant():
    rng = np.random.default_rng(6)
    f = make_logistic(200, 10, rng=rng)
    A = conditioning_map(10, 1e4, rng)
    g = AffineComposition(f, A, np.zeros(10))
    x0 = rng.standard_normal(10)
    rf = ch.bfgs(f.fun, x0, f.jac, tol=1e-10)
    rg = ch.bfgs(g.fun, g.to_u(x0), g.jac, tol=1e-10)  # B0 = I, not transformed
    assert rf.nit != rg.nit or np.max(np.abs(rf.trace.objective - rg.trace.objective)) > 1e-6


def test_gradient_descent_and_damped_newton():
    p = make_logistic(200, 10, rng=7)
    x_star, f_star = solve_reference(p)
    np.testing.assert_allclose(p.jac(x_star), 0, atol=1e-12)
    gd = ch.gradient_descent(p.fun, np.zeros(10), p.jac, f_star=f_star, tol=1e-9)
    assert gd.success and gd.fun - f_star <= 1e-9
    assert np.all(np.diff(gd.trace.objective) <= 0)
    dn = ch.damped_newton(p.fun, 5 * np.ones(10), p.jac, p.hess, tol=1e-12)
    assert dn.success and dn.nit <= 30
    lam = dn.trace["newton_decrement"]
    assert np.all(np.diff(lam[-4:]) < 0)


def test_psi_is_the_invariant_mismatch():
    H = np.diag([1.0, 2.0])
    assert ch.initial_mismatch(H, H) == pytest.approx(0.0, abs=1e-12)
    assert ch.initial_mismatch(2 * H, H) > 0 and ch.initial_mismatch(0.5 * H, H) > 0
    rng = np.random.default_rng(0)
    M, N = rng.standard_normal((6, 6)), rng.standard_normal((6, 6))
    B, Hs = M @ M.T + np.eye(6), N @ N.T + 0.1 * np.eye(6)
    ev = np.linalg.eigvals(np.linalg.solve(Hs, B)).real  # the spectrum of B~, the slow way
    assert ch.initial_mismatch(B, Hs) == pytest.approx(ev.sum() - 6 - np.log(ev).sum(), rel=1e-10)
    A = rng.standard_normal((6, 6))  # invariance: transform both matrices the same way
    assert ch.initial_mismatch(A.T @ B @ A, A.T @ Hs @ A) == pytest.approx(ch.initial_mismatch(B, Hs), rel=1e-8)


def test_first_trial():
    assert ch.first_trial(np.nan, 1.0, -1.0, 1.0) == 1.0  # first iteration
    assert ch.first_trial(2.0, 1.0, -10.0, 1.0) == 1.0  # after a unit step: always 1
    assert ch.first_trial(2.0, 1.0, -10.0, 0.3) == pytest.approx(0.202)  # 2.02 * decrease / |slope|
    assert ch.first_trial(2.0, 1.0, -0.1, 0.3) == 1.0  # capped at the unit step
    assert ch.first_trial(1.0 + 1e-17, 1.0, -10.0, 0.3) == 1.0  # a decrease below round-off says nothing


def test_no_update_keeps_the_initial_matrix():
    q = quadratic_with_condition(5, 10.0, rng=1)
    res = ch.bfgs(q.fun, np.ones(5), q.jac, H0=2 * np.eye(5), update=False, tol=1e-8, maxiter=500)
    np.testing.assert_array_equal(res.H, 2 * np.eye(5))
    assert res.success and res.nit > ch.bfgs(q.fun, np.ones(5), q.jac, H0=2 * np.eye(5), tol=1e-8).nit


def test_damped_newton_step_shrinks_with_the_self_concordance_constant():
    p = make_logistic(100, 5, rng=2)
    x0 = 4 * np.ones(5)
    r1 = ch.damped_newton(p.fun, x0, p.jac, p.hess, tol=1e-10)
    r3 = ch.damped_newton(p.fun, x0, p.jac, p.hess, sc_constant=3.0, tol=1e-10)
    assert r1.success and r3.success
    assert r3.trace.step_size[0] < r1.trace.step_size[0] and r3.nit >= r1.nit


def test_methods_module_does_not_pull_plotly():
    out = subprocess.run([sys.executable, "-c", "import sys, optbook.classical.bfgs_methods; print('plotly' in sys.modules)"],
                         capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


@pytest.mark.parametrize("kwargs, match", [
    (dict(x0=np.array([np.nan, 0.0])), "x0 must be finite"),
    (dict(B0=-np.eye(2)), "B0 must be positive definite"),
    (dict(B0=np.eye(3)), "B0 must have shape"),
    (dict(H0=np.eye(2), B0=np.eye(2)), "H0 or B0"),
    (dict(c1=0.7), "c1"),
    (dict(c2=0.05), "c2"),
    (dict(tol=0.0), "tol must be positive"),
    (dict(maxiter=-1), "maxiter"),
    (dict(stop="gap"), "needs f_star"),
    (dict(stop="newton_decrement"), "needs hess"),
    (dict(stop="bogus"), "stop must be one of"),
])
def test_bfgs_bad_input(kwargs, match):
    q = quadratic_with_condition(2, 10.0, rng=0)
    args = dict(x0=np.ones(2))
    args.update(kwargs)
    x0 = args.pop("x0")
    with pytest.raises(ValueError, match=match):
        ch.bfgs(q.fun, x0, q.jac, **args)


def test_baselines_bad_input():
    q = quadratic_with_condition(2, 10.0, rng=0)
    with pytest.raises(ValueError, match="eta0"):
        ch.gradient_descent(q.fun, np.ones(2), q.jac, f_star=0.0, eta0=-1.0)
    with pytest.raises(ValueError, match="c1"):
        ch.gradient_descent(q.fun, np.ones(2), q.jac, f_star=0.0, c1=1.5)
    with pytest.raises(ValueError, match="grow"):
        ch.gradient_descent(q.fun, np.ones(2), q.jac, f_star=0.0, grow=0.5)
    with pytest.raises(ValueError, match="hess must be callable"):
        ch.damped_newton(q.fun, np.ones(2), q.jac, None)
    with pytest.raises(ValueError, match="sc_constant"):
        ch.damped_newton(q.fun, np.ones(2), q.jac, q.hess, sc_constant=0.0)
    with pytest.raises(ValueError, match="first_step"):
        ch.bfgs(q.fun, np.ones(2), q.jac, first_step="half")
