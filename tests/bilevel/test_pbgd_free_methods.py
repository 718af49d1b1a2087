"""PBGD-Free and its baselines: fixed points, closed forms, invariances, oracle counts, safeguards."""
import numpy as np
import pytest

from optbook.core import loglog_slope
from optbook.bilevel.pbgd_free_methods import aid, implicit_term, pbgd, pbgd_free, penalty_term, y_gamma
from optbook.bilevel.problems import FlatnessToy, QuadraticBilevel


def test_solution_is_a_fixed_point_of_pbgd_free_at_delta_zero():
    p = FlatnessToy(delta=0.0, rng=0)
    xs = p.x_star()
    res = pbgd_free(p, xs, p.y_star(xs), gamma=10.0, eta_x=0.5, eta_y=0.5, maxiter=5)
    assert np.linalg.norm(res.x - xs) < 1e-12
    assert res.success and res.nit == 1          # the first update is zero: stops on 'step'


def test_pbgd_free_converges_to_b_not_x_star_when_flatness_fails():
    p = FlatnessToy(delta=0.2, rng=1)
    res = pbgd_free(p, np.zeros(p.dx), gamma=10.0, eta_x=1.0, eta_y=0.9, maxiter=3000, tol=1e-13)
    # the limit is (up to the quartic term) b, at distance delta ||Q^-1 A^T w|| from x*
    assert np.linalg.norm(res.x - p.b) < 1e-3 * p.floor()
    assert np.linalg.norm(res.x - p.x_star()) == pytest.approx(p.floor(), rel=1e-3)


@pytest.mark.parametrize("method, kw", [
    (pbgd, dict(gamma=10.0, eta_x=0.02, eta_y=0.9, eta_z=1.0, inner_steps=1, maxiter=20000)),
    (aid, dict(eta_x=1.0, eta_y=1.0, inner_steps=1, cg_steps=1, maxiter=3000)),
])
def test_baselines_converge_to_x_star_when_flatness_fails(method, kw):
    p = FlatnessToy(delta=0.2, rng=1)
    res = method(p, np.zeros(p.dx), tol=1e-13, **kw)
    assert np.linalg.norm(res.x - p.x_star()) < 1e-6


def test_y_gamma_closed_form_and_pbgd_free_y_steps_at_fixed_x():
    q = QuadraticBilevel.random(rng=2)
    x, gamma = np.linspace(-1, 1, q.dx), 5.0
    closed = np.linalg.solve(q.H + np.eye(q.dy) / gamma, q.B @ x + q.c / gamma)
    assert np.allclose(y_gamma(q, x, gamma), closed, atol=1e-10)
    # PBGD-Free's y steps at fixed x (eta_x tiny) go to y_gamma(x)
    res = pbgd_free(q, x, np.zeros(q.dy), gamma=gamma, eta_x=1e-300, eta_y=0.2, maxiter=2000, tol=1e-14)
    assert np.allclose(res.y, closed, atol=1e-10)


def test_y_steps_decrease_the_penalised_lower_level():
    q = QuadraticBilevel.random(rng=3)
    x, gamma = np.ones(q.dx), 10.0
    eta_y = 1 / (4 + 1 / gamma)          # 1 / (sigma L_f + L_g): H's largest eigenvalue is 4
    values = [q.f(x, y) / gamma + q.g(x, y) for y in
              (pbgd_free(q, x, np.full(q.dy, 3.0), gamma=gamma, eta_x=1e-300, eta_y=eta_y, maxiter=k,
                         tol=1e-300).y for k in range(1, 25))]
    assert np.all(np.diff(values) <= 1e-14) and values[-1] < values[0] - 1.0


def test_penalty_term_tends_to_the_implicit_term_like_one_over_gamma():
    q = QuadraticBilevel.random(rng=0)
    x = np.linspace(-1, 1, q.dx)
    gammas = np.array([10.0, 100.0, 1000.0])
    err = [np.linalg.norm(penalty_term(q, x, g) - implicit_term(q, x)) for g in gammas]
    assert loglog_slope(gammas, err) == pytest.approx(-1.0, abs=0.1)
    assert np.linalg.norm(implicit_term(q, x)) > 10 * err[-1]      # the limit is not trivially zero


def test_oracle_counts_per_iteration():
    p = FlatnessToy(rng=0)
    x0 = np.zeros(p.dx)
    r = pbgd_free(p, x0, gamma=10.0, eta_x=0.1, eta_y=0.5, maxiter=7, tol=1e-300)
    assert r.nit == 7 and r.calls == {"grad_f": 14, "grad_g": 7} and r.ll_calls == 7
    assert list(r.trace["ll_calls"]) == list(range(8))
    r = pbgd(p, x0, gamma=10.0, eta_x=0.01, eta_y=0.5, inner_steps=4, maxiter=7, tol=1e-300)
    assert r.ll_calls == 7 * (4 + 2) and r.calls["grad_f"] == 7
    r = aid(p, x0, eta_x=0.1, eta_y=0.5, inner_steps=3, cg_steps=2, maxiter=7, tol=1e-300)
    assert r.calls["grad_g"] == 21 and r.calls["cross_g"] == 7 and r.calls["hvp_g"] <= 7 * 3


def test_adding_a_function_of_x_to_g_changes_no_iterate():
    q = QuadraticBilevel.random(rng=5)

    class Shifted(QuadraticBilevel):
        def _g(self, x, y):
            return super()._g(x, y) + np.sin(x).sum()

        def _grad_g(self, x, y):
            gx, gy = super()._grad_g(x, y)
            return gx + np.cos(x), gy

    s = Shifted(q.H, q.B, q.b, q.c)
    x0 = np.ones(q.dx)
    for method, kw in ((pbgd_free, dict(gamma=10.0, eta_x=0.1, eta_y=0.2)),
                       (pbgd, dict(gamma=10.0, eta_x=0.01, eta_y=0.2, eta_z=0.25, inner_steps=3))):
        a, b = method(q, x0, maxiter=50, tol=1e-300, **kw), method(s, x0, maxiter=50, tol=1e-300, **kw)
        assert np.allclose(a.iterates, b.iterates, atol=1e-12)


def test_no_direct_x_dependence_freezes_pbgd_free():
    q = QuadraticBilevel.random(a=0.0, rng=0)
    x0 = np.ones(q.dx)
    assert np.array_equal(pbgd_free(q, x0, eta_x=0.5, eta_y=0.2, maxiter=100).x, x0)
    assert np.linalg.norm(aid(q, x0, eta_x=1.0, eta_y=0.25, inner_steps=3, cg_steps=3, maxiter=100).x - x0) > 0.1


def test_infinite_gamma_is_naive_alternating_descent():
    q = QuadraticBilevel.random(rng=6)
    r = pbgd_free(q, np.ones(q.dx), np.zeros(q.dy), gamma=np.inf, eta_x=1e-300, eta_y=0.2, maxiter=3000, tol=1e-14)
    assert np.allclose(r.y, q.y_star(np.ones(q.dx)), atol=1e-10)   # y descends g alone


def test_divergence_is_caught_and_runs_are_deterministic():
    p = FlatnessToy(rng=0)
    r = pbgd(p, np.zeros(p.dx), gamma=10.0, eta_x=1.0, eta_y=0.5, maxiter=500)
    assert not r.success and "diverged" in r.message and np.all(np.isfinite(r.x))
    a = pbgd_free(p, np.zeros(p.dx), gamma=10.0, eta_x=0.5, eta_y=0.5, maxiter=30)
    b = pbgd_free(p, np.zeros(p.dx), gamma=10.0, eta_x=0.5, eta_y=0.5, maxiter=30)
    assert np.array_equal(a.iterates, b.iterates)


def test_stop_on_x_error_and_callback():
    p = FlatnessToy(rng=0)
    seen = []
    r = pbgd_free(p, np.zeros(p.dx), gamma=10.0, eta_x=1.0, eta_y=0.6, maxiter=1000, tol=1e-3, stop="x_error",
                  x_star=p.x_star(), callback=seen.append)
    assert r.success and r.trace["x_error"][-1] <= 1e-3 < r.trace["x_error"][-2]
    assert len(seen) == r.nit + 1


@pytest.mark.parametrize("call, name", [
    (lambda p: pbgd_free(p, np.zeros(5), gamma=0.0), "gamma"),
    (lambda p: pbgd_free(p, np.zeros(5), gamma=np.nan), "gamma"),
    (lambda p: pbgd_free(p, np.zeros(5), eta_x=-1.0), "eta_x"),
    (lambda p: pbgd_free(p, np.zeros(5), eta_y=0.0), "eta_y"),
    (lambda p: pbgd_free(p, np.zeros(4)), "x"),
    (lambda p: pbgd_free(p, np.zeros(5), np.zeros(3)), "y0"),
    (lambda p: pbgd_free(p, np.zeros(5), maxiter=0), "maxiter"),
    (lambda p: pbgd_free(p, np.zeros(5), tol=0.0), "tol"),
    (lambda p: pbgd_free(p, np.zeros(5), stop="x_error"), "x_star"),
    (lambda p: pbgd_free(p, np.zeros(5), stop="fun"), "stop"),
    (lambda p: pbgd_free(p, np.zeros(5), callback=3), "callback"),
    (lambda p: pbgd_free("problem", np.zeros(5)), "problem"),
    (lambda p: pbgd(p, np.zeros(5), gamma=np.inf), "gamma"),
    (lambda p: pbgd(p, np.zeros(5), inner_steps=0), "inner_steps"),
    (lambda p: pbgd(p, np.zeros(5), eta_z=-1.0), "eta_z"),
    (lambda p: aid(p, np.zeros(5), cg_steps=0), "cg_steps"),
    (lambda p: penalty_term(p, np.zeros(5), np.inf), "gamma"),
])
def test_bad_input_names_the_argument(call, name):
    with pytest.raises(ValueError, match=name):
        call(FlatnessToy(rng=0))
