"""Chapter 14: uniform wrappers, from concave to quadratizable online optimization (Pedramfar and
Aggarwal, NeurIPS 2025; title, authors and exact definitions reconstructed, see the chapter).

A *wrapper* runs an online algorithm written for concave rewards and changes only what it plays
and what its oracle answers, so that its regret proof carries over to a non-concave class. The
class here is the one the paper's abstract names first: monotone gamma-weakly DR-submodular
rewards F with F(0) = 0 on a down-closed convex set K. The wrapper is the standard *boosting*
(non-oblivious) construction of Zhang et al. (2022):

* the surrogate F~(x) = int_0^1 e^{gamma(z-1)}/z F(zx) dz has the gradient
  grad F~(x) = int_0^1 e^{gamma(z-1)} grad F(zx) dz, and every x satisfies
  <y - x, grad F~(x)> >= (1 - e^{-gamma}) F(y) - F(x), the "upper-quadratizable" inequality that
  replaces concavity in the regret proof;
* the wrapper is *uniform*: it answers the base algorithm's query at x by querying F at z x, with
  z drawn from the fixed law p_gamma(z) ~ e^{gamma(z-1)} on [0, 1], and rescales the answer by
  c_gamma = (1 - e^{-gamma})/gamma; it never needs to know F.

The base algorithm is projected online gradient ascent (OGA) with a two-point zeroth-order
gradient estimate on the shrunk set K_delta (or, with ``feedback="bandit"``, a one-point estimate
played in one round per block). The baselines are the same algorithm unwrapped, first-order
(boosted) OGA, and offline continuous greedy (Frank-Wolfe). The test instance is the card's
"gadget": blocks F(x1, x2) = x2 + a x1 (1 - x2) on triangles, whose vertex (1, 0) is a KKT point
of value a that traps plain ascent, while OPT = 1 at (0, 1).
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import plotly.graph_objects as go

from ..claims import Measured, claim
from ..core import (
    Result,
    RngLike,
    Trace,
    as_rng,
    check_choice,
    check_in_range,
    check_int,
    check_matrix,
    check_positive,
    check_vector,
    thin_indices,
)
from ..viz import SliderStep, base_layout, color_for, slider_figure
from ..widgets import Choice, Explorer, Slider, Toggle

#: The approximation ratio of boosting for a DR-submodular function (gamma = 1).
ALPHA_BOOST = 1.0 - np.exp(-1.0)
#: The ratio a stationary point of a monotone DR-submodular function is guaranteed (gamma = 1).
ALPHA_STATIONARY = 0.5
METHODS = ("plain_zo", "boosted_zo", "boosted_fo", "plain_fo")
#: Legend names used in the chapter.
METHOD_NAMES = {
    "plain_zo": "plain ZO-OGA",
    "boosted_zo": "wrapped ZO-OGA (boosting)",
    "boosted_fo": "first-order boosted OGA",
    "plain_fo": "first-order plain OGA",
}
FEEDBACKS = ("two_point", "bandit")
#: The largest delta for which the shrunk triangle K_delta is non-empty.
DELTA_MAX = 1.0 / (2.0 + np.sqrt(2.0))


# --------------------------------------------------------------------------- boosting


def boost_constants(gamma: float) -> tuple[float, float]:
    """``(c0, c1) = (int_0^1 e^{gamma(z-1)} dz, int_0^1 z e^{gamma(z-1)} dz)``.

    c0 is the wrapper's rescaling c_gamma = (1 - e^{-gamma})/gamma; for a quadratic
    F(x) = h.x + x.Hx/2 the boosted gradient is exactly c0 h + c1 H x.
    """
    g = check_positive(gamma, "gamma")
    c0 = -np.expm1(-g) / g
    return float(c0), float(1.0 / g - c0 / g)


def boost_density(z, gamma: float) -> np.ndarray:
    """The boosting law p_gamma(z) = e^{gamma(z-1)} / c0 on [0, 1] (zero outside)."""
    c0, _ = boost_constants(gamma)
    z = np.asarray(z, dtype=float)
    return np.where((z >= 0) & (z <= 1), np.exp(gamma * (z - 1.0)) / c0, 0.0)


def sample_boost_z(gamma: float, size: int | tuple[int, ...], rng: RngLike = None) -> np.ndarray:
    """Draws z ~ p_gamma by inversion: z = 1 + log(e^{-gamma} + u (1 - e^{-gamma})) / gamma."""
    g = check_positive(gamma, "gamma")
    u = as_rng(rng).random(size)
    return 1.0 + np.log(np.exp(-g) - u * np.expm1(-g)) / g


def boosted_gradient(jac, x, gamma: float = 1.0, *, n: int = 32, method: str = "quadrature",
                     rng: RngLike = None) -> np.ndarray:
    """grad F~(x) = int_0^1 e^{gamma(z-1)} grad F(z x) dz, the boosted (non-oblivious) gradient.

    ``method="quadrature"`` uses n-point Gauss-Legendre; ``"monte_carlo"`` averages
    c0 grad F(z_i x) over n draws z_i ~ p_gamma (what a stochastic oracle can do).
    """
    x = check_vector(x, "x")
    check_positive(gamma, "gamma")
    n = check_int(n, "n", minimum=1)
    check_choice(method, "method", ("quadrature", "monte_carlo"))
    c0, _ = boost_constants(gamma)
    if method == "quadrature":
        nodes, weights = np.polynomial.legendre.leggauss(n)
        z, w = 0.5 * (nodes + 1.0), 0.5 * weights * np.exp(gamma * (0.5 * (nodes + 1.0) - 1.0))
    else:
        z = sample_boost_z(gamma, n, rng)
        w = np.full(n, c0 / n)
    grads = np.array([np.asarray(jac(zi * x), dtype=float) for zi in z])
    return w @ grads


# --------------------------------------------------------------------------- problems


@dataclass
class DRQuadratic:
    """F(x) = h.x + x.Hx / 2 with H symmetric: DR-submodular iff every H_ij <= 0, F(0) = 0.

    ``fun`` and ``jac`` act on the last axis, so a batch of points (..., d) is evaluated at once.
    """

    h: np.ndarray
    H: np.ndarray

    def __post_init__(self) -> None:
        self.h = check_vector(self.h, "h")
        self.H = check_matrix(self.H, "H", shape=(self.h.size, self.h.size))
        if not np.allclose(self.H, self.H.T):
            raise ValueError("H must be symmetric")

    @property
    def dim(self) -> int:
        return self.h.size

    def fun(self, x) -> np.ndarray | float:
        x = np.asarray(x, dtype=float)
        return x @ self.h + 0.5 * np.einsum("...i,ij,...j->...", x, self.H, x)

    def jac(self, x) -> np.ndarray:
        return self.h + np.asarray(x, dtype=float) @ self.H

    def boosted_jac(self, x, gamma: float = 1.0) -> np.ndarray:
        """Closed form of the boosted gradient: c0 h + c1 H x."""
        c0, c1 = boost_constants(gamma)
        return c0 * self.h + c1 * (np.asarray(x, dtype=float) @ self.H)

    def surrogate(self, x, gamma: float = 1.0) -> np.ndarray | float:
        """The boosted surrogate F~(x) = c0 h.x + c1 x.Hx / 2 (its gradient is ``boosted_jac``)."""
        c0, c1 = boost_constants(gamma)
        x = np.asarray(x, dtype=float)
        return c0 * (x @ self.h) + 0.5 * c1 * np.einsum("...i,ij,...j->...", x, self.H, x)

    def is_dr_submodular(self) -> bool:
        return bool(np.all(self.H <= 0))


@dataclass
class Gadget(DRQuadratic):
    """Stacked gadget blocks F_i(x1, x2) = x2 + a_i x1 (1 - x2) on a product of triangles.

    Each block has OPT 1 at (0, 1) and a KKT vertex (1, 0) of value a_i, which stalls plain
    gradient ascent when a_i > 1/2 (the card's construction). Build it with :func:`make_gadget`.
    """

    a: np.ndarray = None

    @property
    def opt(self) -> float:
        return float(self.a.size)

    def bad_vertex(self) -> np.ndarray:
        return np.tile([1.0, 0.0], self.a.size)

    def best_vertex(self) -> np.ndarray:
        return np.tile([0.0, 1.0], self.a.size)

    def max_linear_tilt(self, t, S) -> np.ndarray:
        """max_{y in K} [t F(y) + S.y]: the exact comparator of t rounds with linear noise sum S.

        F is bilinear per block with a negative cross term, so t F + S.y is linear on the legs
        and convex on the hypotenuse of each triangle: its maximum is at a vertex. ``t`` has
        shape (...), ``S`` shape (..., d); returns shape (...).
        """
        t = np.asarray(t, dtype=float)[..., None]
        S = np.asarray(S, dtype=float).reshape(*np.shape(S)[:-1], -1, 2)
        v1 = t * self.a + S[..., 0]
        v2 = t + S[..., 1]
        return np.maximum(0.0, np.maximum(v1, v2)).sum(axis=-1)


def make_gadget(a) -> Gadget:
    """The stacked gadget with block parameters ``a`` (each in (0, 1)); d = 2 len(a)."""
    a = check_vector(np.atleast_1d(np.asarray(a, dtype=float)), "a")
    if np.any(a <= 0) or np.any(a >= 1):
        raise ValueError(f"a must lie in (0, 1), got {a}")
    m = a.size
    h = np.zeros(2 * m)
    h[0::2], h[1::2] = a, 1.0
    H = np.zeros((2 * m, 2 * m))
    idx = np.arange(m)
    H[2 * idx, 2 * idx + 1] = H[2 * idx + 1, 2 * idx] = -a
    return Gadget(h, H, a)


def random_gadget(m: int = 10, low: float = 0.57, high: float = 0.62, rng: RngLike = None) -> Gadget:
    """m blocks with a_i ~ U[low, high] (the card: d = 20, a_i in [0.57, 0.62])."""
    m = check_int(m, "m", minimum=1)
    low = check_in_range(low, "low", 0.0, 1.0)
    high = check_in_range(high, "high", low, 1.0, closed=(True, False))
    return make_gadget(as_rng(rng).uniform(low, high, m))


def random_dr_quadratic(m: int, rng: RngLike = None) -> DRQuadratic:
    """A random monotone DR-submodular quadratic on the product of m triangles (d = 2m):
    H_ij <= 0 and h >= |H| 1, so grad F = h + Hx >= 0 whenever 0 <= x <= 1."""
    m = check_int(m, "m", minimum=1)
    gen = as_rng(rng)
    d = 2 * m
    H = -gen.random((d, d)) * (gen.random((d, d)) < 0.5)
    H = 0.5 * (H + H.T)
    h = np.abs(H).sum(axis=1) + gen.random(d)
    return DRQuadratic(h, H)


# --------------------------------------------------------------------------- the feasible set


def project_triangles(x, delta: float = 0.0) -> np.ndarray:
    """Euclidean projection onto K_delta, the product of shrunk triangles.

    K is the product over blocks of {x >= 0, x1 + x2 <= 1}; K_delta keeps the points whose
    delta-ball stays in K: {x >= delta, x1 + x2 <= 1 - sqrt(2) delta}. Acts on the last axis
    (length even), so batches project at once.
    """
    x = np.asarray(x, dtype=float)
    if x.ndim == 0 or x.shape[-1] % 2 or not x.shape[-1]:
        raise ValueError(f"x must have an even, non-zero last dimension, got shape {x.shape}")
    if not np.all(np.isfinite(x)):
        raise ValueError("x must be finite (found NaN or inf)")
    delta = check_in_range(delta, "delta", 0.0, DELTA_MAX, closed=(True, False))
    return _project(x, delta)


def _project(x: np.ndarray, delta) -> np.ndarray:
    """:func:`project_triangles` without checks; ``delta`` broadcasts against x[..., :1]."""
    delta = np.asarray(delta, dtype=float)[..., None]
    r = 1.0 - (2.0 + np.sqrt(2.0)) * delta[..., 0]
    y = x.reshape(*x.shape[:-1], -1, 2) - delta
    p = np.maximum(y, 0.0)
    over = p.sum(axis=-1) > r
    # Where the clipped point violates the cap, project onto the face y1 + y2 = r, y >= 0.
    f1 = np.clip(0.5 * (y[..., 0] - y[..., 1] + r), 0.0, r)
    face = np.stack([f1, r - f1], axis=-1)
    p = np.where(over[..., None], face, p)
    return (p + delta).reshape(x.shape)


# --------------------------------------------------------------------------- wrappers


@dataclass(frozen=True)
class BoostingWrapper:
    """The uniform boosting wrapper W_gamma (the paper's "uniform wrapper", our reconstruction).

    It plays the base algorithm's action unchanged (h = id) and answers a query at x by a query at
    z x, z ~ p_gamma, rescaled by c_gamma = (1 - e^{-gamma})/gamma. The law of z is the same for
    every reward function: that is what makes it uniform. ``alpha`` = 1 - e^{-gamma} is the
    ratio its regret bound is stated against.
    """

    gamma: float = 1.0

    def __post_init__(self) -> None:
        check_positive(self.gamma, "gamma")

    @property
    def scale(self) -> float:
        return boost_constants(self.gamma)[0]

    @property
    def alpha(self) -> float:
        return float(-np.expm1(-self.gamma))

    def centres(self, x: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """The query centres z x (one z per row of a batch)."""
        z = sample_boost_z(self.gamma, x.shape[:-1] + (1,), rng)
        return z * x


@dataclass(frozen=True)
class IdentityWrapper:
    """No wrapping: queries at x itself, scale 1 (concave case; alpha = 1 for concave F)."""

    @property
    def scale(self) -> float:
        return 1.0

    @property
    def alpha(self) -> float:
        return 1.0

    def centres(self, x: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        return x


def _batch_param(value, name: str, R: int, low: float, high: float, allow_zero: bool = False) -> np.ndarray:
    arr = np.atleast_1d(np.asarray(value, dtype=float))
    if arr.ndim != 1 or arr.size not in (1, R):
        raise ValueError(f"{name} must be a number or a length-{R} array, got shape {arr.shape}")
    if not np.all(np.isfinite(arr)) or np.any(arr > high) or np.any(arr < low) or (
            not allow_zero and np.any(arr <= low)):
        raise ValueError(f"{name} must lie in {'[' if allow_zero else '('}{low}, {high}], got {arr}")
    return np.broadcast_to(arr, (R,)).copy()


def simulate_online(problem: Gadget, x0, *, method: str, T: int, eta, delta, noise, gamma: float = 1.0,
                    feedback: str = "two_point", block: int = 10, directions: int | str = 1,
                    rng: RngLike = None) -> dict:
    """R independent online runs at once (rows of ``x0``, shape (R, d)), vectorised over runs.

    Round t: the adversary draws F_t(x) = F(x) + xi_t.x with xi_t ~ N(0, noise^2 I) (a
    stochastic online sequence with mean F); the learner plays x_t and collects F_t(x_t).

    * ``plain_zo``: two-point estimate g = (d / 2 delta) [F_t(x+delta u) - F_t(x-delta u)] u,
      u uniform on the sphere, averaged over ``directions`` = b independent u (2 b queries per
      round); ``directions="frame"`` uses the d signed coordinate directions instead, which
      is exact for quadratics (no estimator noise). The base algorithm (ZO-OGA) alone.
    * ``boosted_zo``: the same base algorithm behind :class:`BoostingWrapper`: the two queries are
      z x +- delta u (the same z, perturbation added after scaling) and the difference is
      rescaled by c_gamma.
    * ``boosted_fo`` / ``plain_fo``: first-order references, g = c_gamma grad F_t(z x) or
      grad F_t(x) (projection onto K itself).

    With ``feedback="bandit"`` (zeroth-order methods only) the learner observes only the reward
    of what it plays: rounds come in blocks of ``block``; in one random round per block it plays
    the single query point centre + delta u and forms the one-point estimate
    (d / delta) F_t(query) u (rescaled by the wrapper); it updates once per block.

    Returns arrays of shape (R, T): ``value`` F(x_t), ``reward`` F_t(played point), ``best``
    max_y sum_{s<=t} F_s(y) (exact), and the final iterates ``x`` and tail averages ``x_bar``
    (the mean of the last T/2 iterates).
    """
    if not isinstance(problem, Gadget):
        raise ValueError(f"problem must be a Gadget (make_gadget), got {type(problem).__name__}")
    d = problem.dim
    x = np.array(np.atleast_2d(np.asarray(x0, dtype=float)))
    if x.ndim != 2 or x.shape[1] != d:
        raise ValueError(f"x0 must have shape (d,) or (R, d) with d = {d}, got {np.shape(x0)}")
    if not np.all(np.isfinite(x)):
        raise ValueError("x0 must be finite (found NaN or inf)")
    R = x.shape[0]
    check_choice(method, "method", METHODS)
    check_choice(feedback, "feedback", FEEDBACKS)
    T = check_int(T, "T", minimum=2)
    block = check_int(block, "block", minimum=2)
    frame = directions == "frame"
    directions = d if frame else check_int(directions, "directions", minimum=1)
    eta = _batch_param(eta, "eta", R, 0.0, 1e3)
    sig = _batch_param(noise, "noise", R, 0.0, 1e3, allow_zero=True)
    first_order = method.endswith("_fo")
    if feedback == "bandit" and first_order:
        raise ValueError("feedback='bandit' applies to the zeroth-order methods only")
    dl = np.zeros(R) if first_order else _batch_param(delta, "delta", R, 0.0, DELTA_MAX - 1e-9)
    wrapper = BoostingWrapper(gamma) if method.startswith("boosted") else IdentityWrapper()
    gen = as_rng(rng)
    dcol = dl[:, None]
    x = _project(x, dcol)
    if not np.allclose(x, np.asarray(x0, dtype=float)):
        raise ValueError("x0 must lie in K_delta (project it with project_triangles first)")

    value = np.empty((R, T))
    reward = np.empty((R, T))
    best = np.empty((R, T))
    S = np.zeros((R, d))
    x_sum = np.zeros((R, d))
    tail = T - T // 2
    g_acc = np.zeros((R, d))
    explore_round = gen.integers(0, block, size=R) if feedback == "bandit" else None
    for t in range(T):
        xi = sig[:, None] * gen.standard_normal((R, d))
        S += xi
        played = x
        if first_order:
            centre = wrapper.centres(x, gen)
            g = wrapper.scale * (problem.jac(centre) + xi)
        else:
            if feedback == "two_point":
                # b directions per round, the b two-point estimates averaged: independent on the
                # sphere, or (frame) the d coordinate directions with random signs, b = d.
                if frame:
                    u = np.eye(d) * gen.choice([-1.0, 1.0], size=(R, d, 1))
                else:
                    u = gen.standard_normal((R, directions, d))
                    u /= np.linalg.norm(u, axis=2, keepdims=True)
                centre = wrapper.centres(x, gen)[:, None, :]
                plus, minus = centre + dl[:, None, None] * u, centre - dl[:, None, None] * u
                diff = problem.fun(plus) - problem.fun(minus) + np.einsum("id,ibd->ib", xi, plus - minus)
                g = wrapper.scale * (d / (2.0 * dl))[:, None] * np.einsum("ib,ibd->id", diff, u) / directions
            else:
                u = gen.standard_normal((R, d))
                u /= np.linalg.norm(u, axis=1, keepdims=True)
                q = wrapper.centres(x, gen) + dl[:, None] * u
                exploring = (t % block) == explore_round
                played = np.where(exploring[:, None], q, x)
                fq = problem.fun(q) + np.einsum("ij,ij->i", xi, q)
                g_acc += np.where(exploring[:, None], wrapper.scale * (d / dl)[:, None] * fq[:, None] * u, 0.0)
                g = None
        value[:, t] = problem.fun(played)
        reward[:, t] = value[:, t] + np.einsum("ij,ij->i", xi, played)
        best[:, t] = problem.max_linear_tilt(t + 1.0, S)
        if t >= T - tail:
            x_sum += x
        if g is not None:
            x = _project(x + eta[:, None] * g, dcol)
        elif (t + 1) % block == 0:
            x = _project(x + eta[:, None] * g_acc, dcol)
            g_acc[:] = 0.0
            explore_round = gen.integers(0, block, size=R)
    return {"value": value, "reward": reward, "best": best, "x": x, "x_bar": x_sum / tail}


def alpha_regret(run: dict, alpha: float) -> np.ndarray:
    """R^alpha_t / t = (alpha max_y sum_{s<=t} F_s(y) - sum_{s<=t} F_s(x_s)) / t, shape (R, T)."""
    alpha = check_in_range(alpha, "alpha", 0.0, 1.0, closed=(False, True))
    t = np.arange(1, run["reward"].shape[1] + 1)
    return (alpha * run["best"] - np.cumsum(run["reward"], axis=1)) / t


def online_gradient_ascent(problem: Gadget, x0, *, method: str = "boosted_zo", T: int = 3000,
                           eta: float = 0.01, delta: float = 0.01, noise: float = 0.1, gamma: float = 1.0,
                           feedback: str = "two_point", block: int = 10, directions: int | str = 1,
                           rng: RngLike = None) -> Result:
    """One online run (projected online gradient ascent, wrapped or not); see :func:`simulate_online`.

    The trace records per round the objective F(x_t) (mean reward), ``ratio`` F(x_t)/OPT and
    ``regret_per_round`` (the (1 - 1/e)-regret over t). ``x`` is the tail average x_bar.
    """
    x0 = check_vector(x0, "x0", problem.dim if isinstance(problem, Gadget) else None)
    eta = check_positive(eta, "eta")
    run = simulate_online(problem, x0[None], method=method, T=T, eta=eta, delta=delta, noise=noise,
                          gamma=gamma, feedback=feedback, block=block, directions=directions, rng=rng)
    reg = alpha_regret(run, ALPHA_BOOST)[0]
    tr = Trace(METHOD_NAMES[method] + (" (bandit)" if feedback == "bandit" else ""),
               meta=dict(T=T, eta=eta, delta=delta, noise=noise, gamma=gamma, feedback=feedback))
    for t in range(run["value"].shape[1]):
        tr.record(objective=run["value"][0, t], step_size=eta, ratio=run["value"][0, t] / problem.opt,
                  regret_per_round=reg[t])
    x_bar = run["x_bar"][0]
    f_bar = float(problem.fun(x_bar))
    return Result(x=x_bar, fun=f_bar, ratio=f_bar / problem.opt, x_last=run["x"][0], nit=T, success=True,
                  message=f"{T} online rounds", trace=tr)


def continuous_greedy(problem: DRQuadratic, n_steps: int = 100) -> Result:
    """Offline continuous greedy / Frank-Wolfe on the product of triangles (Calinescu et al.;
    Bian et al.): v_k = argmax_{v in K} <grad F(x_k), v>, x_{k+1} = x_k + v_k / n_steps.
    Guarantees F(x_K) >= (1 - 1/e) OPT - O(1/K) for monotone DR-submodular F."""
    if not isinstance(problem, DRQuadratic) or problem.dim % 2:
        raise ValueError("problem must be a DRQuadratic with an even dimension")
    n_steps = check_int(n_steps, "n_steps", minimum=1)
    x = np.zeros(problem.dim)
    tr = Trace("continuous greedy")
    for _ in range(n_steps):
        g = problem.jac(x).reshape(-1, 2)
        # Linear maximisation over a triangle: the best of its vertices 0, e1, e2.
        v = np.zeros_like(g)
        k = np.argmax(g, axis=1)
        take = g[np.arange(g.shape[0]), k] > 0
        v[np.arange(g.shape[0])[take], k[take]] = 1.0
        x = x + v.ravel() / n_steps
        tr.record(objective=float(problem.fun(x)), grad_norm=float(np.linalg.norm(g)), step_size=1.0 / n_steps)
    return Result(x=x, fun=float(problem.fun(x)), nit=n_steps, success=True, message="done", trace=tr)


# --------------------------------------------------------------------------- the claim

CLAIM_T = 3000
CLAIM_SETTINGS = dict(eta=0.01, delta=0.01, noise=0.1, directions="frame")


def gadget_start(problem: Gadget, delta: float, rng: RngLike = None, jitter: float = 1e-3) -> np.ndarray:
    """The bad KKT vertex (1, 0) of every block plus a small jitter, projected onto K_delta."""
    gen = as_rng(rng)
    return project_triangles(problem.bad_vertex() + jitter * gen.random(problem.dim), delta)


def gadget_experiment(gadget_seed: int = 0, runs: int = 4, *, T: int = CLAIM_T, eta: float = 0.01,
                      delta: float = 0.01, noise: float = 0.1, directions: int | str = "frame",
                      methods: tuple[str, ...] = ("plain_zo", "boosted_zo"), seed: int = 1) -> dict:
    """``runs`` online runs of each method on the stacked gadget (d = 20, a_i ~ U[0.57, 0.62]),
    started at the bad vertex. Returns per method the tail-average ratios F(x_bar)/OPT and the
    final (1 - 1/e)-regret per round divided by OPT, plus the raw runs."""
    G = random_gadget(10, rng=gadget_seed)
    gen = np.random.default_rng([gadget_seed, seed])
    x0 = np.stack([gadget_start(G, delta, gen) for _ in range(runs)])
    out = {"gadget": G}
    for m in methods:
        run = simulate_online(G, x0, method=m, T=T, eta=eta, delta=delta, noise=noise, directions=directions,
                              rng=np.random.default_rng([gadget_seed, seed, METHODS.index(m)]))
        out[m] = {"ratio": G.fun(run["x_bar"]) / G.opt,
                  "regret": alpha_regret(run, ALPHA_BOOST)[:, -1] / G.opt, "run": run}
    return out


@claim("14", "Wrapped (boosted) zeroth-order online ascent escapes the bad KKT vertex; plain ZO ascent "
             "stays below 1 - 1/e",
       expect="wrapped ZO-OGA: F(x_bar)/OPT >= 0.9 and (1-1/e)-regret/T <= 0 in every run; plain ZO-OGA: "
              "F(x_bar)/OPT < 1 - 1/e and (1-1/e)-regret/T > 0 in every run (d = 20, T = 3000, "
              "orthonormal-frame two-point estimator, 2d queries per round)",
       name="wrapper_escapes")
def claim_wrapper_escapes(fast: bool = False) -> Measured:
    """The card's CPU check on the stacked gadget, with the orthonormal-frame two-point estimator
    (exact in mean and variance-free on quadratics, so the run tests what the wrapper changes: the
    estimator's mean)."""
    seeds = (0,) if fast else (0, 1, 2)
    wr, pr, wg, pg = [], [], [], []
    for s in seeds:
        ex = gadget_experiment(s, runs=4, **CLAIM_SETTINGS)
        wr += list(ex["boosted_zo"]["ratio"])
        pr += list(ex["plain_zo"]["ratio"])
        wg += list(ex["boosted_zo"]["regret"])
        pg += list(ex["plain_zo"]["regret"])
    values = {"wrapped_min_ratio": min(wr), "plain_max_ratio": max(pr),
              "wrapped_max_regret_per_round_over_OPT": max(wg), "plain_min_regret_per_round_over_OPT": min(pg),
              "runs": len(wr)}
    holds = min(wr) >= 0.9 and max(pr) < ALPHA_BOOST and max(wg) <= 0 and min(pg) > 0
    return Measured(values, holds=bool(holds),
                    summary=f"wrapped ratio >= {min(wr):.3f}, plain ratio <= {max(pr):.3f}; regret/(T OPT): "
                            f"wrapped <= {max(wg):.3f}, plain >= {min(pg):.3f} over {len(wr)} runs",
                    details={"wrapped": wr, "plain": pr})


@claim("14", "With the card's single-direction two-point estimator, plain ZO ascent stays trapped below "
             "1 - 1/e",
       expect="plain ZO-OGA with b = 1 direction per round: F(x_bar)/OPT < 1 - 1/e in every run "
              "(d = 20, T = 3000, eta = 0.01)",
       name="single_direction_trap", reproduces=False)
def claim_single_direction_trap(fast: bool = False) -> Measured:
    """Measured: the estimator's own noise kicks plain ascent out of the shallow trap."""
    seeds = (0,) if fast else (0, 1, 2)
    pr, wr = [], []
    for s in seeds:
        ex = gadget_experiment(s, runs=4, **{**CLAIM_SETTINGS, "directions": 1})
        pr += list(ex["plain_zo"]["ratio"])
        wr += list(ex["boosted_zo"]["ratio"])
    values = {"plain_max_ratio": max(pr), "plain_median_ratio": float(np.median(pr)),
              "wrapped_median_ratio": float(np.median(wr)), "runs": len(pr)}
    return Measured(values, holds=bool(max(pr) < ALPHA_BOOST),
                    summary=f"plain ZO ratio up to {max(pr):.3f} (median {np.median(pr):.3f}); wrapped "
                            f"median {np.median(wr):.3f}",
                    details={"wrapped": wr, "plain": pr})


# --------------------------------------------------------------------------- figures and explorers

GADGET_A = (0.52, 0.56, 0.6, 0.62, 0.64, 0.66)
GADGET_GAMMA = (0.25, 0.5, 0.75, 1.0, 1.5, 2.0, 4.0)
_TRI = np.array([[0, 0], [1, 0], [0, 1], [0, 0]], dtype=float)


def escape_threshold(gamma: float) -> float:
    """a*(gamma) = c0/(c0 + c1): the boosted field leaves the vertex (1, 0) iff a < a*(gamma)
    (= 1 - 1/e at gamma = 1; 1/2 as gamma -> infinity, the plain gradient's threshold)."""
    c0, c1 = boost_constants(gamma)
    return c0 / (c0 + c1)


def ascent_path(a: float, gamma: float | None, steps: int = 400, eta: float = 0.2,
                start=(0.996, 0.002)) -> np.ndarray:
    """Deterministic projected ascent on one gadget block: the plain gradient (gamma None) or the
    exact boosted gradient. Returns the (steps + 1) x 2 path."""
    G = make_gadget([a])
    x = np.asarray(start, dtype=float)
    path = [x]
    for _ in range(check_int(steps, "steps", minimum=1)):
        g = G.jac(x) if gamma is None else G.boosted_jac(x, gamma)
        x = _project(x + eta * g, 0.0)
        path.append(x)
    return np.array(path)


def _arrows(points: np.ndarray, vectors: np.ndarray, scale: float) -> tuple[list, list]:
    """Line segments (with small heads) for a quiver plot, separated by None."""
    xs, ys = [], []
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    v = scale * vectors / np.maximum(norms.max(), 1e-12)
    for p, w in zip(points, v):
        e = p + w
        back = -0.3 * w
        side = np.array([-back[1], back[0]]) * 0.5
        xs += [p[0], e[0], None, e[0], e[0] + back[0] + side[0], None, e[0], e[0] + back[0] - side[0], None]
        ys += [p[1], e[1], None, e[1], e[1] + back[1] + side[1], None, e[1], e[1] + back[1] - side[1], None]
    return xs, ys


@lru_cache(maxsize=None)
def _gadget_step(a: float, gamma: float) -> SliderStep:
    G = make_gadget([a])
    n = 41
    s = np.linspace(0, 1, n)
    X1, X2 = np.meshgrid(s, s)
    pts = np.stack([X1, X2], axis=-1)
    inside = X1 + X2 <= 1 + 1e-9
    Zf = np.where(inside, G.fun(pts), np.nan)
    Zs = np.where(inside, G.surrogate(pts, gamma), np.nan)
    q = np.array([(i, j) for i in np.linspace(0.05, 0.95, 8) for j in np.linspace(0.05, 0.95, 8) if i + j <= 1.0]
                 + [(1.0, 0.0), (0.0, 1.0), (0.5, 0.5)])
    traces = []
    for col, (Z, field, name, path, color) in enumerate((
            (Zf, G.jac(q), "grad F (plain)", ascent_path(a, None), color_for(1)),
            (Zs, G.boosted_jac(q, gamma), "grad F~ (boosted)", ascent_path(a, gamma), color_for(0)))):
        ax = "" if col == 0 else "2"
        traces.append(go.Contour(x=s, y=s, z=Z, colorscale="Greys", showscale=False, ncontours=18, opacity=0.5,
                                 xaxis=f"x{ax}", yaxis=f"y{ax}", hoverinfo="skip",
                                 contours=dict(showlines=True), line=dict(width=0.5), name="contours"))
        traces.append(go.Scatter(x=_TRI[:, 0], y=_TRI[:, 1], mode="lines", xaxis=f"x{ax}", yaxis=f"y{ax}",
                                 line=dict(color="#444", width=1.5), showlegend=False, hoverinfo="skip"))
        ax_, ay_ = _arrows(q, field, 0.12)
        traces.append(go.Scatter(x=ax_, y=ay_, mode="lines", xaxis=f"x{ax}", yaxis=f"y{ax}", name=name,
                                 line=dict(color=color, width=1.4), hoverinfo="skip"))
        keep = thin_indices(len(path), 80)
        end = path[-1]
        label = "plain ascent path" if col == 0 else "boosted ascent path"
        traces.append(go.Scatter(x=path[keep, 0], y=path[keep, 1], mode="lines+markers", xaxis=f"x{ax}",
                                 yaxis=f"y{ax}", name=label + f" (ends at F = {G.fun(end):.2f})",
                                 line=dict(color=color, width=3, dash="dot"), marker=dict(size=4)))
    thr = escape_threshold(gamma)
    verdict = "escapes" if a < thr else "is trapped"
    note = dict(text=f"a = {a:g}, gamma = {gamma:g}: boosted threshold a*(gamma) = {thr:.3f}, so boosted ascent "
                     f"{verdict}; plain threshold 1/2", x=0.0, y=-0.2, xref="paper", yref="paper",
                showarrow=False, xanchor="left", font=dict(size=12))
    return SliderStep(label=f"{gamma:g}" if a == 0.6 else f"a={a:g},g={gamma:g}", traces=traces,
                      layout=dict(annotations=[note]))


def _style_gadget(fig: go.Figure) -> go.Figure:
    axis = dict(range=[-0.03, 1.03], showline=True, linecolor="#888", mirror=True, constrain="domain")
    fig.update_layout(
        xaxis=dict(domain=[0, 0.46], title_text="x<sub>1</sub>", **axis),
        yaxis=dict(title_text="x<sub>2</sub>", scaleanchor="x", **axis),
        xaxis2=dict(domain=[0.54, 1], title_text="x<sub>1</sub>", anchor="y2", **axis),
        yaxis2=dict(title_text="x<sub>2</sub>", anchor="x2", scaleanchor="x2", **axis),
        legend=dict(font=dict(size=11)), margin=dict(t=110, b=150),
    )
    return fig


@lru_cache(maxsize=None)
def _layout(which: str) -> dict:
    """Explorer layouts, styled once (restyling on every move costs tens of ms)."""
    if which == "gadget":
        return _style_gadget(base_layout(go.Figure(), height=560)).layout.to_plotly_json()
    return _style_regret(base_layout(go.Figure(), height=500)).layout.to_plotly_json()


def gadget_slider_figure(a: float = 0.6) -> go.Figure:
    """Static twin of :data:`EXPLORER_GADGET`: the gamma slider at a = 0.6."""
    steps = [_gadget_step(a, g) for g in GADGET_GAMMA]
    fig = slider_figure(steps, slider_label="boosting parameter gamma (a = 0.6)", active=GADGET_GAMMA.index(1.0),
                        fixed_axes=False, height=600)
    return _style_gadget(fig)


def gadget_explorer_figure(a: float = 0.6, gamma: float = 1.0) -> go.Figure:
    """Live twin: left, F and its gradient field with plain ascent; right, the boosted surrogate."""
    if a not in GADGET_A:
        raise ValueError(f"a must be one of {GADGET_A}, got {a!r}")
    if gamma not in GADGET_GAMMA:
        raise ValueError(f"gamma must be one of {GADGET_GAMMA}, got {gamma!r}")
    st = _gadget_step(a, gamma)
    fig = go.Figure(data=st.traces, layout=_layout("gadget"))
    fig.update_layout(annotations=st.layout["annotations"])
    return fig


EXPLORER_GADGET = Explorer("14", "gadget", gadget_explorer_figure, {
    "a": Slider("gadget a", list(GADGET_A), 0.6),
    "gamma": Slider("boosting gamma", list(GADGET_GAMMA), 1.0),
}, description="Gradient fields of F and of the boosted surrogate on one gadget block.")


DASH_ETA = (0.002, 0.005, 0.01, 0.02, 0.05)
DASH_NOISE = (0.0, 0.1, 0.3)
DASH_DIRECTIONS = ("1", "20", "frame")
DASH_METHODS = ("plain_zo", "boosted_zo", "boosted_fo")
#: One colour per method on every figure of the chapter: plain red, wrapped blue, first-order green.
METHOD_COLORS = {"plain_zo": color_for(1), "boosted_zo": color_for(0), "boosted_fo": color_for(2)}


@lru_cache(maxsize=None)
def dashboard_runs(directions: str, noise: float, T: int = CLAIM_T) -> dict:
    """Every step size of DASH_ETA at once (one batched run per method) on gadget 0, from the bad
    vertex. Returns per method the (len(DASH_ETA), T) arrays of ratio F(x_t)/OPT and of the
    cumulative reward and comparator (for any alpha)."""
    check_choice(directions, "directions", DASH_DIRECTIONS)
    G = random_gadget(10, rng=0)
    x0 = np.tile(gadget_start(G, 0.01, rng=1), (len(DASH_ETA), 1))
    b = "frame" if directions == "frame" else int(directions)
    out = {}
    for k, m in enumerate(DASH_METHODS):
        if m == "boosted_fo" and directions != DASH_DIRECTIONS[0]:
            out[m] = dashboard_runs(DASH_DIRECTIONS[0], noise, T)[m]
            continue
        run = simulate_online(G, x0, method=m, T=T, eta=np.array(DASH_ETA), delta=0.01, noise=noise,
                              directions=b, rng=np.random.default_rng([7, k]))
        out[m] = {"ratio": run["value"] / G.opt, "cum_reward": np.cumsum(run["reward"], axis=1) / G.opt,
                  "best": run["best"] / G.opt}
    return out


@lru_cache(maxsize=None)
def _regret_step(eta: float, directions: str, noise: float, half: bool) -> SliderStep:
    runs = dashboard_runs(directions, noise)
    i = DASH_ETA.index(eta)
    alpha = ALPHA_STATIONARY if half else ALPHA_BOOST
    T = runs["plain_zo"]["ratio"].shape[1]
    keep = thin_indices(T, 250, log=True)
    t = np.arange(1, T + 1)[keep]
    traces = []
    for m in DASH_METHODS:
        r = runs[m]
        reg = (alpha * r["best"][i, keep] - r["cum_reward"][i, keep]) / t
        traces.append(go.Scatter(x=t, y=reg, mode="lines", name=METHOD_NAMES[m], legendgroup=m,
                                 line=dict(color=METHOD_COLORS[m], width=2.2)))
    for m in DASH_METHODS:
        traces.append(go.Scatter(x=t, y=runs[m]["ratio"][i, keep], mode="lines", name=METHOD_NAMES[m],
                                 legendgroup=m, showlegend=False, xaxis="x2", yaxis="y2",
                                 line=dict(color=METHOD_COLORS[m], width=2.2)))
    for level, name, dash in ((ALPHA_BOOST, "1 - 1/e", "dash"), (ALPHA_STATIONARY, "1/2", "dot")):
        traces.append(go.Scatter(x=[1, T], y=[level, level], mode="lines", name=f"ratio {name}", xaxis="x2",
                                 yaxis="y2", line=dict(color="#777", dash=dash, width=1.2)))
    traces.append(go.Scatter(x=[1, T], y=[0, 0], mode="lines", name="zero regret", showlegend=False,
                             line=dict(color="#777", width=1)))
    return SliderStep(label=f"{eta:g}", traces=traces)


def _style_regret(fig: go.Figure) -> go.Figure:
    fig.update_layout(
        xaxis=dict(domain=[0, 0.45], type="log", title_text="round t"),
        yaxis=dict(title_text="alpha-regret per round / OPT", range=[-0.45, 0.7]),
        xaxis2=dict(domain=[0.57, 1], type="log", title_text="round t", anchor="y2", showline=True,
                    linecolor="#888", mirror=True),
        yaxis2=dict(title_text="F(x_t) / OPT", anchor="x2", range=[0.3, 1.02], showline=True, linecolor="#888",
                    mirror=True),
        legend=dict(font=dict(size=11)), margin=dict(t=110),
    )
    return fig


def regret_slider_figure(directions: str = "frame", noise: float = 0.1) -> go.Figure:
    """Static twin of :data:`EXPLORER_REGRET`: the step-size slider, alpha = 1 - 1/e."""
    steps = [_regret_step(e, directions, noise, False) for e in DASH_ETA]
    fig = slider_figure(steps, slider_label="step size eta", active=DASH_ETA.index(0.01), fixed_axes=False,
                        height=520)
    return _style_regret(fig)


def regret_explorer_figure(eta: float = 0.01, directions: str = "frame", noise: float = 0.1,
                           half: bool = False) -> go.Figure:
    """Live twin of the regret dashboard (left: alpha-regret per round; right: F(x_t)/OPT)."""
    if eta not in DASH_ETA:
        raise ValueError(f"eta must be one of {DASH_ETA}, got {eta!r}")
    if noise not in DASH_NOISE:
        raise ValueError(f"noise must be one of {DASH_NOISE}, got {noise!r}")
    check_choice(directions, "directions", DASH_DIRECTIONS)
    return go.Figure(data=_regret_step(eta, directions, noise, bool(half)).traces, layout=_layout("regret"))


EXPLORER_REGRET = Explorer("14", "regret", regret_explorer_figure, {
    "eta": Slider("step size eta", list(DASH_ETA), 0.01),
    "directions": Choice("ZO directions b", list(DASH_DIRECTIONS), "frame"),
    "noise": Slider("reward noise sigma", list(DASH_NOISE), 0.1),
    "half": Toggle("alpha = 1/2 (instead of 1 - 1/e)", False),
}, description="alpha-regret per round and F(x_t)/OPT of plain, wrapped and first-order boosted ascent.")
