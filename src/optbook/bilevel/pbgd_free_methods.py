"""PBGD-Free (Jiang, Xiao, Chen and Chen, NeurIPS 2025) and its bilevel baselines.

The bilevel problem is ``min_x f(x, y*(x))`` with ``y*(x) = argmin_y g(x, y)`` (a
:class:`~optbook.bilevel.problems.BilevelProblem`). The penalty reformulation
``min_{x,y} f + gamma (g - v)``, ``v(x) = min_y g(x, y)`` (the LL *value function*), is solved by
PBGD with an inner loop that tracks ``y*(x)`` for ``grad v``. PBGD-Free drops the value function
and the penalty gradient term: one LL gradient per iteration.

The y steps use the normalised form ``sigma f + g`` with ``sigma = 1/gamma`` (a public review mentions
a sigma in the paper's eq. (13); unverified): the step size then stays on g's scale however large
gamma is. The exact updates
are a reconstruction from the paper's abstract and introduction and its companion paper.
"""
from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
from scipy.optimize import minimize

from ..core import Result, RunRecorder, check_choice, check_int, check_positive
from .problems import BilevelProblem

STOPS = ("step", "x_error")
_BLOWUP = 1e12


def _sigma(gamma: float) -> float:
    """``1/gamma`` (0 for ``gamma = inf``: the y step then descends g alone)."""
    if isinstance(gamma, bool) or not isinstance(gamma, (int, float)) or not gamma > 0 or math.isnan(gamma):
        raise ValueError(f"gamma must be a positive number or inf, got {gamma!r}")
    return 0.0 if math.isinf(gamma) else 1.0 / float(gamma)


class _Oracles:
    """The problem's counted oracles without per-call validation: the loop validates the starting
    point once and checks every new iterate for finiteness, so the hot path skips the checks."""

    def __init__(self, problem: BilevelProblem):
        self.p, self.calls = problem, problem.calls

    def grad_f(self, x, y):
        self.calls["grad_f"] += 1
        return self.p._grad_f(x, y)

    def grad_g(self, x, y):
        self.calls["grad_g"] += 1
        return self.p._grad_g(x, y)

    def hvp_g(self, x, y, v):
        self.calls["hvp_g"] += 1
        return self.p._hvp_g(x, y, v)

    def cross_g(self, x, y, v):
        self.calls["cross_g"] += 1
        return self.p._cross_g(x, y, v)


def _loop(name: str, problem: BilevelProblem, x0, y0, step: Callable, *, maxiter: int, tol: float,
          stop: str, x_star, callback) -> Result:
    """The loop every method shares: validation, the trace (with oracle counts), the stopping rule
    (``stop``: the update's norm, or ``||x - x*||`` when ``x_star`` is given) and a divergence guard
    (a non-finite or exploding iterate ends the run with ``success=False``)."""
    if not isinstance(problem, BilevelProblem):
        raise ValueError(f"problem must be a BilevelProblem, got {type(problem).__name__}")
    x = problem.check_x(x0).copy()
    y = (problem.y_star(x) if y0 is None else problem.check_y(y0, "y0")).copy()
    maxiter = check_int(maxiter, "maxiter", minimum=1)
    stop = check_choice(stop, "stop", STOPS)
    if x_star is not None:
        x_star = problem.check_x(x_star)
    if stop == "x_error" and x_star is None:
        raise ValueError("stop='x_error' needs x_star")
    rec = RunRecorder(name, stop="grad_norm", tol=tol, stops=("grad_norm",), callback=callback)
    problem.reset_calls()

    def record(move: float) -> bool:
        extra = {"ll_calls": problem.ll_calls, "ul_calls": problem.calls["grad_f"]}
        if x_star is not None:
            extra["x_error"] = float(np.linalg.norm(x - x_star))
        rec.record(x, problem._f(x, y), move, **extra)
        value = move if stop == "step" else extra["x_error"]
        return bool(value <= rec.tol)

    state: dict = {}
    oracle = _Oracles(problem)
    done, success, message = record(np.inf), False, "maxiter reached"
    if done:
        success, message = True, "converged at the start"
    k = 0
    while not done and k < maxiter:
        x_new, y_new = step(oracle, x, y, state)
        k += 1
        if not (np.all(np.isfinite(x_new)) and np.all(np.isfinite(y_new))) or \
                max(np.abs(x_new).max(), np.abs(y_new).max()) > _BLOWUP:
            message = "diverged (non-finite or exploding iterate): lower the step sizes"
            break
        move = float(np.sqrt(np.sum((x_new - x) ** 2) + np.sum((y_new - y) ** 2)))
        x, y = x_new, y_new
        if record(move):
            success, message = True, f"stopping rule '{stop}' met"
            done = True
    return rec.result(x, problem.f(x, y), success=success, message=message, nfev=0,
                      njev=problem.calls["grad_f"], y=y, ll_calls=problem.ll_calls,
                      calls=dict(problem.calls))


def pbgd_free(problem: BilevelProblem, x0, y0=None, *, gamma: float = 10.0, eta_x: float = 0.1,
              eta_y: float = 0.5, maxiter: int = 1000, tol: float = 1e-8, stop: str = "step",
              x_star=None, callback=None) -> Result:
    """PBGD-Free: the paper's single-loop, value-function-free penalty method, as we reconstruct it
    (the exact updates are not published in a form we could read).

    Each iteration takes one LL step on ``sigma f + g`` (``sigma = 1/gamma``) and one UL step on
    ``grad_x f`` alone::

        y_{k+1} = y_k - eta_y (sigma grad_y f(x_k, y_k) + grad_y g(x_k, y_k))
        x_{k+1} = x_k - eta_x grad_x f(x_k, y_{k+1})

    It costs one LL gradient and two UL gradients per iteration. ``gamma = inf`` gives naive
    alternating gradient descent (y descends g alone). ``eta_y`` should be at most
    ``1 / (sigma L_f + L_g)`` (the y-smoothness of ``sigma f + g``).

    ``y0`` defaults to ``y*(x0)`` (an uncounted start, the same for every method). Returns a
    scipy-style :class:`~optbook.core.Result` with ``x``, ``y``, ``trace`` (its ``grad_norm`` series is
    the norm of the joint (x, y) update, the quantity ``stop="step"`` compares with ``tol``; series
    ``ll_calls``, ``ul_calls``, and ``x_error`` when ``x_star`` is given), ``ll_calls``, ``calls``.
    """
    sigma = _sigma(gamma)
    eta_x, eta_y = check_positive(eta_x, "eta_x"), check_positive(eta_y, "eta_y")

    def step(problem, x, y, _state):
        _, fy = problem.grad_f(x, y)
        _, gy = problem.grad_g(x, y)
        y_new = y - eta_y * (sigma * fy + gy)
        fx, _ = problem.grad_f(x, y_new)
        return x - eta_x * fx, y_new

    return _loop("PBGD-Free", problem, x0, y0, step, maxiter=maxiter, tol=tol, stop=stop, x_star=x_star,
                 callback=callback)


def pbgd(problem: BilevelProblem, x0, y0=None, *, gamma: float = 10.0, eta_x: float = 0.01,
         eta_y: float = 0.5, eta_z: float = 0.5, inner_steps: int = 10, maxiter: int = 1000,
         tol: float = 1e-8, stop: str = "step", x_star=None, callback=None) -> Result:
    """PBGD / V-PBGD (Shen and Chen, 2023): gradient descent on the penalty function
    ``f + gamma (g(x, y) - v(x))``, with ``grad v(x) = grad_x g(x, z)`` and ``z`` tracking
    ``y*(x)`` by ``inner_steps`` warm-started gradient steps on g (step ``eta_z``)::

        z      <- K steps z - eta_z grad_y g(x_k, z)
        y_{k+1} = y_k - eta_y (sigma grad_y f + grad_y g)(x_k, y_k)
        x_{k+1} = x_k - eta_x (grad_x f(x_k, y_k) + gamma (grad_x g(x_k, y_k) - grad_x g(x_k, z)))

    ``K + 2`` LL gradients per iteration (K inner ones, one at ``y_k``, one at ``z``).
    """
    sigma = _sigma(gamma)
    if sigma == 0.0:
        raise ValueError("gamma must be finite for PBGD (its x step multiplies by gamma)")
    gamma = float(gamma)
    eta_x, eta_y = check_positive(eta_x, "eta_x"), check_positive(eta_y, "eta_y")
    eta_z = check_positive(eta_z, "eta_z")
    inner_steps = check_int(inner_steps, "inner_steps", minimum=1)

    def step(problem, x, y, state):
        z = state.get("z", y)
        for _ in range(inner_steps):
            z = z - eta_z * problem.grad_g(x, z)[1]
        state["z"] = z
        fx, fy = problem.grad_f(x, y)
        gx, gy = problem.grad_g(x, y)
        gxz, _ = problem.grad_g(x, z)
        return x - eta_x * (fx + gamma * (gx - gxz)), y - eta_y * (sigma * fy + gy)

    return _loop("PBGD", problem, x0, y0, step, maxiter=maxiter, tol=tol, stop=stop, x_star=x_star,
                 callback=callback)


def aid(problem: BilevelProblem, x0, y0=None, *, eta_x: float = 0.1, eta_y: float = 0.5,
        inner_steps: int = 5, cg_steps: int = 5, maxiter: int = 1000, tol: float = 1e-8,
        stop: str = "step", x_star=None, callback=None) -> Result:
    """AID (approximate implicit differentiation): ``inner_steps`` warm-started gradient steps on g
    for y, ``cg_steps`` conjugate-gradient steps (warm-started) on ``grad^2_yy g v = grad_y f``, then
    ``x <- x - eta_x (grad_x f - grad^2_xy g v)``.

    Per iteration: K LL gradients, at most ``cg_steps + 1`` Hessian-vector products (CG stops early
    on a zero residual), one mixed product.
    """
    eta_x, eta_y = check_positive(eta_x, "eta_x"), check_positive(eta_y, "eta_y")
    inner_steps = check_int(inner_steps, "inner_steps", minimum=1)
    cg_steps = check_int(cg_steps, "cg_steps", minimum=1)

    def step(problem, x, y, state):
        for _ in range(inner_steps):
            y = y - eta_y * problem.grad_g(x, y)[1]
        fx, fy = problem.grad_f(x, y)
        v = state.get("v", np.zeros_like(y))
        r = fy - problem.hvp_g(x, y, v)
        p, rr = r.copy(), float(r @ r)
        for _ in range(cg_steps):
            if rr <= 1e-30:
                break
            hp = problem.hvp_g(x, y, p)
            alpha = rr / float(p @ hp)
            v, r = v + alpha * p, r - alpha * hp
            rr_new = float(r @ r)
            p, rr = r + (rr_new / rr) * p, rr_new
        state["v"] = v
        return x - eta_x * (fx - problem.cross_g(x, y, v)), y

    return _loop("AID", problem, x0, y0, step, maxiter=maxiter, tol=tol, stop=stop, x_star=x_star,
                 callback=callback)


def y_gamma(problem: BilevelProblem, x, gamma: float) -> np.ndarray:
    """``y_gamma(x) = argmin_y sigma f(x, y) + g(x, y)``, ``sigma = 1/gamma`` (uncounted; BFGS from
    ``y*(x)`` to gradient norm 1e-13, for tests and figures)."""
    sigma = _sigma(gamma)
    x = problem.check_x(x)

    def fun(y):
        fy, gy = problem._grad_f(x, y)[1], problem._grad_g(x, y)[1]
        return sigma * problem._f(x, y) + problem._g(x, y), sigma * fy + gy

    res = minimize(fun, problem.y_star(x), jac=True, method="BFGS", options=dict(gtol=1e-13, maxiter=2000))
    return res.x


def penalty_term(problem: BilevelProblem, x, gamma: float) -> np.ndarray:
    """The *penalty gradient term* PBGD-Free drops:
    ``gamma (grad_x g(x, y_gamma(x)) - grad_x g(x, y*(x)))``. As ``gamma -> inf`` it tends to the
    implicit part of the hypergradient, ``-grad^2_xy g [grad^2_yy g]^{-1} grad_y f`` at ``y*(x)``."""
    sigma = _sigma(gamma)
    if sigma == 0.0:
        raise ValueError("gamma must be finite")
    x = problem.check_x(x)
    yg, ys = y_gamma(problem, x, gamma), problem.y_star(x)
    return float(gamma) * (problem._grad_g(x, yg)[0] - problem._grad_g(x, ys)[0])


def implicit_term(problem: BilevelProblem, x) -> np.ndarray:
    """``-grad^2_xy g [grad^2_yy g]^{-1} grad_y f`` at ``(x, y*(x))``: the part of the
    hypergradient that PBGD-Free leaves out (uncounted)."""
    x = problem.check_x(x)
    return problem.hypergradient(x) - problem._grad_f(x, problem.y_star(x))[0]
