"""Chapter 14: uniform wrappers, from concave to quadratizable online optimization (Pedramfar,
Quinn and Aggarwal, NeurIPS 2025): the methods.

A *uniform wrapper* W (the paper's Definition 1) sits between an online algorithm A written for
concave rewards and the world. It translates the actions A plays and the answers of the query
oracle, with maps that are the same in every round; the wrapped algorithm is W(A)
(Meta-algorithm 1). For monotone gamma-weakly DR-submodular rewards f with f(0) = 0 on a set K
that contains the origin, the wrapper W_i^{M0} of the paper's Definition 4 plays A's action
unchanged and answers a query of order i at y by drawing z from the law p_gamma(z) ~ e^{gamma(z-1)}
on [0, 1], asking the oracle at z y and multiplying the answer by z^(i-1). Its oracle is then an
oracle for the boosted surrogate F(x) = E_z[(f(z x) - f(0)) / z] (Lemma 2), whose gradient
E_z[grad f(z x)] satisfies

    (1 - e^{-gamma}) f(y) - f(x) <= (1 - e^{-gamma}) / gamma * <grad F(x), y - x>,

the "upper-linearizable" inequality that replaces concavity in A's regret proof.

Base algorithms (vectorised over independent runs, one row per run):

* projected online gradient ascent with a two-point or one-point spherical estimate on the
  shrunk set K_delta (:func:`zo_oga_runs`; the one-point version wrapped is the earlier
  O(T^{3/4}) method the paper improves on), or with a stochastic gradient (first order);
* ZO-FTRL (the paper's Algorithm 2, after Saha and Tewari): follow the regularised leader with
  a log-barrier and one query per round on the Dikin ellipsoid (:func:`zo_ftrl_runs`), for which
  the paper proves O~(T^{2/3}) alpha-regret (Theorem 6);
* offline continuous greedy (Frank-Wolfe), the classical 1 - 1/e reference.

The feasible sets are products of triangles {x >= 0, x1 + x2 <= 1}; the test rewards are
DR-submodular quadratics, among them the "gadget" blocks f(x1, x2) = x2 + a x1 (1 - x2), whose
vertex (1, 0) is a KKT point of value a that traps plain gradient ascent when a > 1/2 while
OPT = 1 at (0, 1). The chapter's experiments, figures and claims are in
:mod:`optbook.geometry.uniform_wrappers_chapter`.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

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
)

#: The ratio the boosting wrapper's regret is stated against (gamma = 1): 1 - 1/e.
ALPHA_BOOST = float(-np.expm1(-1.0))
#: The ratio stationary points of a monotone DR-submodular function are worth (gamma = 1).
ALPHA_STATIONARY = 0.5
#: The largest delta for which the shrunk triangle K_delta is non-empty.
DELTA_MAX = 1.0 / (2.0 + np.sqrt(2.0))
ESTIMATORS = ("two_point", "one_point", "first_order")
FEEDBACKS = ("full", "bandit")


# --------------------------------------------------------------------------- the boosting law


def boost_constants(gamma: float) -> tuple[float, float]:
    """``(c0, c1) = (int_0^1 e^{gamma(z-1)} dz, int_0^1 z e^{gamma(z-1)} dz)``.

    c0 = (1 - e^{-gamma})/gamma normalises the boosting law; c1/c0 is its mean. Both are computed
    without cancellation for small gamma (c1 -> 1/2 as gamma -> 0).
    """
    g = check_positive(gamma, "gamma")
    c0 = -np.expm1(-g) / g
    if g < 1e-3:  # (g + e^{-g} - 1)/g^2 = sum_k (-g)^k/(k+2)!
        c1 = 0.5 - g / 6.0 + g * g / 24.0 - g ** 3 / 120.0
    else:
        c1 = (g + np.expm1(-g)) / (g * g)
    return float(c0), float(c1)


def boost_density(z, gamma: float) -> np.ndarray:
    """The boosting law p_gamma(z) = e^{gamma(z-1)} / c0 on [0, 1] (zero outside), the law of
    Z^{M0} in the paper's Lemma 2."""
    c0, _ = boost_constants(gamma)
    z = np.asarray(z, dtype=float)
    if not np.all(np.isfinite(z)):
        raise ValueError("z must be finite (found NaN or inf)")
    return np.where((z >= 0) & (z <= 1), np.exp(gamma * (z - 1.0)) / c0, 0.0)


def sample_boost_z(gamma: float, size: int | tuple[int, ...], rng: RngLike = None) -> np.ndarray:
    """Draws z ~ p_gamma by inverting its distribution function,
    z = 1 + log(e^{-gamma} + u (1 - e^{-gamma})) / gamma = log(1 + u (e^gamma - 1)) / gamma.

    The second form (log1p/expm1) is used for gamma <= 1, where the first loses every digit as
    gamma -> 0 (z is then uniform); the first is used above, where e^gamma could overflow.
    """
    g = check_positive(gamma, "gamma")
    sizes = (size,) if isinstance(size, (int, np.integer)) else size
    if not isinstance(sizes, tuple) or not all(isinstance(k, (int, np.integer)) and k >= 0 for k in sizes):
        raise ValueError(f"size must be a non-negative integer or a tuple of them, got {size!r}")
    u = 1.0 - as_rng(rng).random(size)  # in (0, 1]: z > 0, so the wrapper's 1/z stays finite
    if g <= 1.0:
        return np.log1p(u * np.expm1(g)) / g
    return 1.0 + np.log(np.exp(-g) - u * np.expm1(-g)) / g


def boosted_gradient(jac, x, gamma: float = 1.0, *, n: int = 32, method: str = "quadrature",
                     rng: RngLike = None) -> np.ndarray:
    """grad F(x) = E_{z ~ p_gamma}[grad f(z x)], the gradient of the wrapped (boosted) surrogate
    F = W^{M0}(f) of the paper's Lemma 2.

    ``method="quadrature"`` integrates with n-point Gauss-Legendre; ``"monte_carlo"`` averages
    grad f(z_i x) over n draws z_i ~ p_gamma (what the first-order wrapper's oracle returns).
    """
    x = check_vector(x, "x")
    c0, _ = boost_constants(gamma)
    n = check_int(n, "n", minimum=1)
    check_choice(method, "method", ("quadrature", "monte_carlo"))
    if not callable(jac):
        raise ValueError("jac must be callable")
    if method == "quadrature":
        nodes, weights = np.polynomial.legendre.leggauss(n)
        z = 0.5 * (nodes + 1.0)
        w = 0.5 * weights * np.exp(gamma * (z - 1.0)) / c0
    else:
        z = sample_boost_z(gamma, n, rng)
        w = np.full(n, 1.0 / n)
    grads = np.array([np.asarray(jac(zi * x), dtype=float) for zi in z])
    if grads.shape != (n, x.size):
        raise ValueError(f"jac must return a vector of length {x.size}, got shape {grads.shape[1:]}")
    return w @ grads


# --------------------------------------------------------------------------- problems


@dataclass
class DRQuadratic:
    """f(x) = h.x + x.Hx / 2 with H symmetric: DR-submodular iff every H_ij <= 0; f(0) = 0.

    ``fun`` and ``jac`` act on the last axis, so a batch of points (..., d) is evaluated at once.
    """

    h: np.ndarray
    H: np.ndarray

    def __post_init__(self) -> None:
        self.h = check_vector(self.h, "h")
        self.H = check_matrix(self.H, "H", shape=(self.h.size, self.h.size))
        scale = max(1.0, float(np.max(np.abs(self.H))))
        if not np.allclose(self.H, self.H.T, rtol=0.0, atol=1e-12 * scale):
            raise ValueError("H must be symmetric")
        self.H = 0.5 * (self.H + self.H.T)

    @property
    def dim(self) -> int:
        return self.h.size

    def _points(self, x, name: str = "x") -> np.ndarray:
        x = np.asarray(x, dtype=float)
        if x.ndim == 0 or x.shape[-1] != self.dim:
            raise ValueError(f"{name} must have last dimension {self.dim}, got shape {x.shape}")
        if not np.all(np.isfinite(x)):
            raise ValueError(f"{name} must be finite (found NaN or inf)")
        return x

    def fun(self, x) -> np.ndarray | float:
        return self._fun(self._points(x))

    def _fun(self, x: np.ndarray) -> np.ndarray:
        """:meth:`fun` without checks (the online loops call it several times a round)."""
        return x @ self.h + 0.5 * np.einsum("...i,ij,...j->...", x, self.H, x)

    def jac(self, x) -> np.ndarray:
        return self.h + self._points(x) @ self.H

    def surrogate(self, x, gamma: float = 1.0) -> np.ndarray | float:
        """The wrapped function F(x) = E_z[f(z x)/z] = h.x + E[z] x.Hx / 2 (E[z] = c1/c0)."""
        c0, c1 = boost_constants(gamma)
        x = self._points(x)
        return x @ self.h + 0.5 * (c1 / c0) * np.einsum("...i,ij,...j->...", x, self.H, x)

    def surrogate_jac(self, x, gamma: float = 1.0) -> np.ndarray:
        """Closed form of the wrapped gradient E_z[grad f(z x)] = h + (c1/c0) H x."""
        c0, c1 = boost_constants(gamma)
        return self.h + (c1 / c0) * (self._points(x) @ self.H)

    def is_dr_submodular(self) -> bool:
        return bool(np.all(self.H <= 0))


@dataclass
class Gadget(DRQuadratic):
    """Stacked gadget blocks f_i(x1, x2) = x2 + a_i x1 (1 - x2) on a product of triangles.

    Each block has OPT 1 at (0, 1) and a KKT vertex (1, 0) of value a_i, which traps plain
    gradient ascent when a_i > 1/2. Build it with :func:`make_gadget`.
    """

    a: np.ndarray = None

    @property
    def opt(self) -> float:
        return float(self.a.size)

    def _fun(self, x: np.ndarray) -> np.ndarray:
        # The block form: a dozen times faster than the quadratic form inside the online loops.
        xb = x.reshape(*x.shape[:-1], -1, 2)
        return (xb[..., 1] + self.a * xb[..., 0] * (1.0 - xb[..., 1])).sum(axis=-1)

    def bad_vertex(self) -> np.ndarray:
        return np.tile([1.0, 0.0], self.a.size)

    def best_vertex(self) -> np.ndarray:
        return np.tile([0.0, 1.0], self.a.size)


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


def random_dr_quadratic(m: int, rng: RngLike = None) -> DRQuadratic:
    """A random monotone DR-submodular quadratic on the product of m triangles (d = 2m):
    H_ij <= 0 and h >= |H| 1, so grad f = h + Hx >= 0 whenever 0 <= x <= 1."""
    m = check_int(m, "m", minimum=1)
    gen = as_rng(rng)
    d = 2 * m
    H = -gen.random((d, d)) * (gen.random((d, d)) < 0.5)
    H = 0.5 * (H + H.T)
    h = np.abs(H).sum(axis=1) + gen.random(d)
    return DRQuadratic(h, H)


# --------------------------------------------------------------------------- the feasible set


def _check_blocks(x, name: str) -> np.ndarray:
    x = np.asarray(x, dtype=float)
    if x.ndim == 0 or not x.shape[-1] or x.shape[-1] % 2:
        raise ValueError(f"{name} must have an even, non-zero last dimension, got shape {x.shape}")
    if not np.all(np.isfinite(x)):
        raise ValueError(f"{name} must be finite (found NaN or inf)")
    return x


def project_triangles(x, delta: float = 0.0) -> np.ndarray:
    """Euclidean projection onto K_delta, the product of shrunk triangles.

    K is the product over blocks of {x >= 0, x1 + x2 <= 1}; K_delta keeps the points whose
    delta-ball stays in K: {x >= delta, x1 + x2 <= 1 - sqrt(2) delta}. Acts on the last axis
    (length even), so batches project at once.
    """
    x = _check_blocks(x, "x")
    delta = check_in_range(delta, "delta", 0.0, DELTA_MAX, closed=(True, False))
    return _project(x, delta)


def _project(x: np.ndarray, delta) -> np.ndarray:
    """:func:`project_triangles` without checks; ``delta`` broadcasts against x[..., :1]."""
    delta = np.asarray(delta, dtype=float)[..., None]
    r = 1.0 - (2.0 + np.sqrt(2.0)) * delta[..., 0]
    y = x.reshape(*x.shape[:-1], -1, 2) - delta
    p = np.maximum(y, 0.0)
    over = p.sum(axis=-1) > r
    # Where the clipped point violates the cap, project onto the face y1 + y2 = r, y >= 0. The
    # difference y1 - y2 is formed first, so entries around 1e16 still land on the right face.
    f1 = np.clip(0.5 * ((y[..., 0] - y[..., 1]) + r), 0.0, r)
    face = np.stack([f1, r - f1], axis=-1)
    p = np.where(over[..., None], face, p)
    return (p + delta).reshape(x.shape)


def barrier_leader(theta) -> np.ndarray:
    """argmin_x -<theta, x> + Phi(x) over the product of triangles, Phi the log-barrier
    -sum log x1 + log x2 + log(1 - x1 - x2): the leader of FTRL (the paper's eq. 3).

    Per block the minimiser is x_i = 1/(p - theta_i), with p > max(theta_1, theta_2, 0) the root
    of 1/p + sum_i 1/(p - theta_i) = 1. Writing p = mu + q with mu = max(theta, 0), the root
    lies in q in (1, 3]; Newton's method on this convex decreasing function, started at q = 1,
    climbs monotonically to it. ``theta`` has shape (..., d); returns x of the same shape. Each
    slack is computed from q, never as 1 - x1 - x2 (which would lose the digits near a face).
    """
    theta = _check_blocks(theta, "theta")
    tb = theta.reshape(*theta.shape[:-1], -1, 2)
    x1, x2, _ = _leader(tb[..., 0], tb[..., 1])
    return np.stack([x1, x2], axis=-1).reshape(theta.shape)


#: Newton steps of the FTRL leader: from q = 1 the root in (1, 3] is reached to the last digit
#: in 8, the slowest case being theta near 0 (root q = 3); checked in the tests against a hundred.
_LEADER_STEPS = 8


def _leader(t1: np.ndarray, t2: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The slacks (x1, x2, s) of :func:`barrier_leader` per block from theta's components."""
    mu = np.maximum(np.maximum(t1, t2), 0.0)
    g1, g2 = mu - t1, mu - t2  # >= 0: no cancellation below
    q = np.ones_like(mu)
    for _ in range(_LEADER_STEPS):
        a0, a1, a2 = 1.0 / (q + mu), 1.0 / (q + g1), 1.0 / (q + g2)
        q = q + (a0 + a1 + a2 - 1.0) / (a0 * a0 + a1 * a1 + a2 * a2)
    return 1.0 / (q + g1), 1.0 / (q + g2), 1.0 / (q + mu)


def dikin_factors(x) -> tuple[np.ndarray, np.ndarray]:
    """``(H^{1/2}, H^{-1/2})`` per block of the log-barrier Hessian
    H = diag(1/x1^2, 1/x2^2) + 11^T / s^2 (s = 1 - x1 - x2) at interior points x (..., d).

    The unit Dikin ellipsoid {x + H^{-1/2} v : |v| <= 1} lies inside K, which is why ZO-FTRL can
    query near a face without shrinking the set. Shapes: (..., d/2, 2, 2).
    """
    x = _check_blocks(x, "x")
    xb = x.reshape(*x.shape[:-1], -1, 2)
    s = 1.0 - xb.sum(axis=-1)
    if np.any(xb <= 0) or np.any(s <= 0):
        raise ValueError("x must lie in the interior of the triangles")
    (r11, r12, r22), (i11, i12, i22) = _dikin(xb[..., 0], xb[..., 1], s)
    return (np.stack([np.stack([r11, r12], -1), np.stack([r12, r22], -1)], -2),
            np.stack([np.stack([i11, i12], -1), np.stack([i12, i22], -1)], -2))


def _dikin(x1: np.ndarray, x2: np.ndarray, s: np.ndarray) -> tuple[tuple[np.ndarray, ...], tuple[np.ndarray, ...]]:
    """The entries (11, 12, 22) of H^{1/2} and H^{-1/2} from the slacks of each block. The square
    root of a 2x2 SPD matrix A is (A + sqrt(det A) I) / sqrt(tr A + 2 sqrt(det A)); det is
    summed from positive terms, so entries of 1e16 near a face keep their digits."""
    i1, i2, i3 = 1.0 / (x1 * x1), 1.0 / (x2 * x2), 1.0 / (s * s)
    a, c = i1 + i3, i2 + i3
    r = np.sqrt(i1 * i2 + (i1 + i2) * i3)  # sqrt(det H)
    tau = np.sqrt(a + c + 2.0 * r)
    w = 1.0 / (tau * r)
    return ((a + r) / tau, i3 / tau, (c + r) / tau), ((c + r) * w, -i3 * w, (a + r) * w)


# --------------------------------------------------------------------------- wrappers


@dataclass(frozen=True)
class BoostingWrapper:
    """The uniform wrapper W^{M0} of the paper's Definition 4 (gamma-weakly DR-submodular,
    monotone, f(0) = 0, 0 in K).

    action: the identity. query (order i): answer the base algorithm's query at y by the oracle's
    answer at z y times z^(i-1), with z ~ p_gamma drawn afresh for every query (or once per round
    for a two-point query, so that the two answers share it). The maps are the same for every
    reward and every round, which is what makes the wrapper *uniform*; it never needs to know f.
    ``alpha`` = 1 - e^{-gamma} is the ratio its regret is stated against.
    """

    gamma: float = 1.0

    def __post_init__(self) -> None:
        check_positive(self.gamma, "gamma")

    @property
    def alpha(self) -> float:
        """The approximation ratio the wrapper guarantees, 1 - e^{-gamma}."""
        return float(-np.expm1(-self.gamma))

    def draw(self, shape: tuple[int, ...], rng: np.random.Generator) -> np.ndarray:
        """Scales z ~ p_gamma at which the wrapped gradient is queried, of the given shape."""
        return sample_boost_z(self.gamma, shape, rng)


@dataclass(frozen=True)
class IdentityWrapper:
    """W = Id: the base algorithm alone (the paper's W^M for monotone functions, whose ratio on a
    set containing the origin is only gamma^2/(1 + gamma^2) = 1/2 for DR-submodular f)."""

    @property
    def alpha(self) -> float:
        """The approximation ratio of the base algorithm alone (stationary points of a monotone
        DR-submodular function)."""
        return ALPHA_STATIONARY

    def draw(self, shape: tuple[int, ...], rng: np.random.Generator) -> np.ndarray:
        """Scales of 1 (no wrapping), of the given shape."""
        rng.random(shape)  # consumed as the boosting wrapper does: both see the same u, v and xi
        return np.ones(shape)


Wrapper = BoostingWrapper | IdentityWrapper


def _per_run(value, name: str, R: int, *, low: float, high: float, allow_low: bool = False) -> np.ndarray:
    """A number or a length-R array of numbers in (low, high] (or [low, high])."""
    arr = np.atleast_1d(np.asarray(value, dtype=float))
    if arr.ndim != 1 or arr.size not in (1, R):
        raise ValueError(f"{name} must be a number or a length-{R} array, got shape {arr.shape}")
    ok = np.isfinite(arr) & (arr <= high) & ((arr >= low) if allow_low else (arr > low))
    if not np.all(ok):
        raise ValueError(f"{name} must lie in {'[' if allow_low else '('}{low}, {high}], got {arr}")
    return np.broadcast_to(arr, (R,)).copy()


def _check_wrapper(wrapper) -> Wrapper:
    if not isinstance(wrapper, (BoostingWrapper, IdentityWrapper)):
        raise ValueError(f"wrapper must be a BoostingWrapper or an IdentityWrapper, got {type(wrapper).__name__}")
    return wrapper


def _check_problem(problem) -> DRQuadratic:
    if not isinstance(problem, DRQuadratic) or problem.dim % 2:
        raise ValueError("problem must be a DRQuadratic on a product of triangles (even dimension)")
    return problem


def _starts(problem: DRQuadratic, x0, name: str = "x0") -> np.ndarray:
    x = np.array(np.atleast_2d(np.asarray(x0, dtype=float)))
    if x.ndim != 2 or x.shape[1] != problem.dim or not x.shape[0]:
        raise ValueError(f"{name} must have shape (d,) or (R, d) with d = {problem.dim}, got {np.shape(x0)}")
    if not np.all(np.isfinite(x)):
        raise ValueError(f"{name} must be finite (found NaN or inf)")
    return x


# Random numbers are drawn this many rounds at a time: one generator call per chunk instead of
# three per round (the online loops are dominated by per-call overhead on small arrays).
_CHUNK = 512


def zo_oga_runs(problem: DRQuadratic, x0, *, T: int, eta, delta, noise=0.0,
                estimator: str = "two_point", wrapper: Wrapper = IdentityWrapper(),
                feedback: str = "full", block: int = 10, rng: RngLike = None) -> dict:
    """R independent runs of projected online gradient ascent (rows of ``x0``, shape (R, d)),
    optionally behind a uniform wrapper: W(A) with A = zeroth-order OGA.

    Round t: the learner plays x_t and collects f(x_t); the oracle answers a query at y with
    f(y) + xi_t.y, xi_t uniform in [-noise, noise]^d and shared by the round's queries (a
    stochastic value oracle that vanishes at 0, as the paper's Theorem 6 requires). The base
    algorithm's gradient estimate, with u uniform on the unit sphere:

    * ``"two_point"``: (d / 2 delta) [Q(x + delta u) - Q(x - delta u)] u (2 queries per round);
    * ``"one_point"``: (d / delta) Q(x + delta u) u (1 query per round);
    * ``"first_order"``: the noisy gradient grad f(x) + xi_t (1 query; delta unused).

    The wrapper answers each query at y by z^(i-1) Q(z y) (i = 0 for values, 1 for gradients),
    with one z per round. The update is x_{t+1} = Proj_{K_delta}(x_t + eta g_t) (K itself for
    first order), so every query stays in K. ``eta``, ``delta`` and ``noise`` may be one number
    or one per run. With ``feedback="bandit"`` (one-point only) rounds come in blocks of
    ``block``: one random round per block plays the query point itself and the block ends with
    one update (the paper's SFTT conversion).

    Returns ``value`` (R, T): f at the point played in each round; ``x``: final iterates;
    ``x_bar``: the mean of the last T/2 iterates.
    """
    problem = _check_problem(problem)
    x = _starts(problem, x0)
    R, d = x.shape
    T = check_int(T, "T", minimum=1)
    check_choice(estimator, "estimator", ESTIMATORS)
    check_choice(feedback, "feedback", FEEDBACKS)
    block = check_int(block, "block", minimum=2)
    wrapper = _check_wrapper(wrapper)
    if feedback == "bandit" and estimator != "one_point":
        raise ValueError("feedback='bandit' needs estimator='one_point' (one query, played)")
    eta = _per_run(eta, "eta", R, low=0.0, high=1e6)
    sig = _per_run(noise, "noise", R, low=0.0, high=1e6, allow_low=True)
    first_order = estimator == "first_order"
    dl = np.zeros(R) if first_order else _per_run(delta, "delta", R, low=0.0, high=DELTA_MAX - 1e-12)
    dcol = dl[:, None]
    gen = as_rng(rng)
    if not np.allclose(_project(x, dcol), x, rtol=0.0, atol=1e-12):
        raise ValueError("x0 must lie in K_delta (project it with project_triangles first)")

    value = np.empty((R, T))
    x_sum = np.zeros((R, d))
    tail = T - T // 2
    g_acc = np.zeros((R, d))
    explore = gen.integers(0, block, size=R) if feedback == "bandit" else None
    scale = None if first_order else (d / (2.0 * dl) if estimator == "two_point" else d / dl)[:, None]
    for c0 in range(0, T, _CHUNK):
        n = min(_CHUNK, T - c0)
        U = gen.standard_normal((n, R, d))
        U /= np.linalg.norm(U, axis=2, keepdims=True)
        Z = wrapper.draw((n, R, 1), gen)
        XI = sig[None, :, None] * (2.0 * gen.random((n, R, d)) - 1.0)
        for k in range(n):
            t = c0 + k
            u, z, xi = U[k], Z[k], XI[k]
            played = x
            if first_order:
                g = problem.jac(z * x) + xi  # z^0 * Q(z x): the first-order wrapper
            elif estimator == "two_point":
                plus, minus = z * (x + dcol * u), z * (x - dcol * u)
                diff = problem._fun(plus) - problem._fun(minus) + (xi * (plus - minus)).sum(axis=1)
                g = (scale * diff[:, None] / z) * u  # z^-1 * [Q(z y+) - Q(z y-)]
            else:
                q = x + dcol * u
                qz = z * q
                ans = (problem._fun(qz) + (xi * qz).sum(axis=1))[:, None] / z
                g = scale * ans * u
                if feedback == "bandit":
                    exploring = (t % block) == explore
                    played = np.where(exploring[:, None], q, x)
                    g_acc += np.where(exploring[:, None], g, 0.0)
                    g = None
            value[:, t] = problem._fun(played)
            if t >= T - tail:
                x_sum += x
            if g is not None:
                x = _project(x + eta[:, None] * g, dcol)
            elif (t + 1) % block == 0:
                x = _project(x + eta[:, None] * g_acc, dcol)
                g_acc[:] = 0.0
                explore = gen.integers(0, block, size=R)
    return {"value": value, "x": x, "x_bar": x_sum / tail}


def zo_ftrl_runs(problem: DRQuadratic, *, runs: int, T: int, eta, delta, noise=0.0,
                 wrapper: Wrapper = IdentityWrapper(), rng: RngLike = None) -> dict:
    """R = ``runs`` independent runs of ZO-FTRL (the paper's Algorithm 2, after Saha and Tewari
    2011), optionally behind a uniform wrapper: W(ZO-FTRL).

    x_1 = argmin Phi (the analytic centre of each triangle), Phi the log-barrier. Round t: play
    x_t; Sigma_t = (hess Phi(x_t))^{-1/2}; draw v uniform on the unit sphere of R^d; one query at
    y = x_t + delta Sigma_t v (inside K: the Dikin ellipsoid, delta <= 1), answered through the
    wrapper by z^{-1} Q(z y); o_t = (d / delta) answer * Sigma_t^{-1} v;
    x_{t+1} = argmin_x -eta <sum_s o_s, x> + Phi(x) (:func:`barrier_leader`). The oracle Q is
    the one of :func:`zo_oga_runs`. Theorem 2: the alpha-regret is
    O(eta delta^-2 T + eta^-1 log T + delta^2 T), O~(T^{2/3}) at eta = T^{-2/3}, delta = T^{-1/6}.

    Returns ``value`` (R, T): f(x_t) of the played points, and the final iterates ``x``.
    """
    problem = _check_problem(problem)
    R = check_int(runs, "runs", minimum=1)
    T = check_int(T, "T", minimum=1)
    wrapper = _check_wrapper(wrapper)
    eta = _per_run(eta, "eta", R, low=0.0, high=1e6)
    dl = _per_run(delta, "delta", R, low=0.0, high=1.0)
    sig = _per_run(noise, "noise", R, low=0.0, high=1e6, allow_low=True)
    gen = as_rng(rng)
    d = problem.dim
    m = d // 2
    t1, t2 = np.zeros((R, m)), np.zeros((R, m))
    x1, x2, sl = _leader(t1, t2)
    value = np.empty((R, T))
    coef = (d / dl)[:, None]
    step = eta[:, None]
    dcol = dl[:, None]
    for c0 in range(0, T, _CHUNK):
        n = min(_CHUNK, T - c0)
        V = gen.standard_normal((n, R, d))
        V /= np.linalg.norm(V, axis=2, keepdims=True)
        Z = wrapper.draw((n, R, 1), gen)
        XI = sig[None, :, None] * (2.0 * gen.random((n, R, d)) - 1.0)
        for k in range(n):
            v1, v2, z, xi = V[k][:, 0::2], V[k][:, 1::2], Z[k], XI[k]
            (r11, r12, r22), (i11, i12, i22) = _dikin(x1, x2, sl)
            x = np.empty((R, d))
            x[:, 0::2], x[:, 1::2] = x1, x2
            y = np.empty((R, d))  # the query x + delta Sigma v on the Dikin ellipsoid, scaled by z
            y[:, 0::2] = z * (x1 + dcol * (i11 * v1 + i12 * v2))
            y[:, 1::2] = z * (x2 + dcol * (i12 * v1 + i22 * v2))
            ans = coef * ((problem._fun(y) + (xi * y).sum(axis=1)) / z[:, 0])[:, None]
            value[:, c0 + k] = problem._fun(x)
            t1 += step * ans * (r11 * v1 + r12 * v2)  # o = (d/delta) answer Sigma^{-1} v
            t2 += step * ans * (r12 * v1 + r22 * v2)
            x1, x2, sl = _leader(t1, t2)
    x = np.empty((R, d))
    x[:, 0::2], x[:, 1::2] = x1, x2
    return {"value": value, "x": x}


def alpha_regret(value, opt: float, alpha: float = 1.0) -> np.ndarray:
    """The cumulative alpha-regret sum_{s<=t} (alpha OPT - f(x_s)) of each run, shape (R, T),
    for a stationary reward f with known optimum ``opt`` (the paper's regret with f_t = f)."""
    value = np.asarray(value, dtype=float)
    if value.ndim != 2 or not value.size:
        raise ValueError(f"value must be a non-empty (R, T) array, got shape {value.shape}")
    if not np.all(np.isfinite(value)):
        raise ValueError("value must be finite (found NaN or inf)")
    alpha = check_in_range(alpha, "alpha", 0.0, 1.0, closed=(False, True))
    opt = check_positive(opt, "opt")
    return np.cumsum(alpha * opt - value, axis=1)


def online_ascent(problem: Gadget, x0, *, T: int = 3000, eta: float = 0.01, delta: float = 1e-3,
                  noise: float = 0.1, estimator: str = "two_point", gamma: float | None = 1.0,
                  feedback: str = "full", block: int = 10, rng: RngLike = None) -> Result:
    """One run of zeroth-order online gradient ascent on a gadget, wrapped by W^{M0}_gamma
    (``gamma=None``: unwrapped); see :func:`zo_oga_runs`.

    The trace records per round the objective f(x_t), ``ratio`` f(x_t)/OPT and
    ``alpha_regret_per_round``, the (1 - 1/e)-regret over t. ``x`` is the tail average.
    """
    if not isinstance(problem, Gadget):
        raise ValueError(f"problem must be a Gadget (make_gadget), got {type(problem).__name__}")
    x0 = check_vector(x0, "x0", problem.dim)
    eta = check_positive(eta, "eta")
    wrapper = IdentityWrapper() if gamma is None else BoostingWrapper(gamma)
    run = zo_oga_runs(problem, x0[None], T=T, eta=eta, delta=delta, noise=noise, estimator=estimator,
                      wrapper=wrapper, feedback=feedback, block=block, rng=rng)
    values = run["value"][0]
    reg = alpha_regret(run["value"], problem.opt, ALPHA_BOOST)[0] / np.arange(1, T + 1)
    name = ("wrapped " if gamma is not None else "plain ") + estimator.replace("_", "-") + " OGA"
    tr = Trace(name, meta=dict(T=T, eta=eta, delta=delta, noise=noise, gamma=gamma, feedback=feedback))
    for t in range(T):
        tr.record(objective=values[t], step_size=eta, ratio=values[t] / problem.opt,
                  alpha_regret_per_round=reg[t])
    x_bar = run["x_bar"][0]
    f_bar = float(problem.fun(x_bar))
    return Result(x=x_bar, fun=f_bar, ratio=f_bar / problem.opt, x_last=run["x"][0], nit=T, success=True,
                  message=f"{T} online rounds", trace=tr)


def continuous_greedy(problem: DRQuadratic, n_steps: int = 100) -> Result:
    """Offline continuous greedy / Frank-Wolfe on the product of triangles (Calinescu et al.;
    Bian et al.): v_k = argmax_{v in K} <grad f(x_k), v>, x_{k+1} = x_k + v_k / n_steps.
    Guarantees f(x_K) >= (1 - 1/e) OPT - O(1/K) for monotone DR-submodular f."""
    problem = _check_problem(problem)
    n_steps = check_int(n_steps, "n_steps", minimum=1)
    x = np.zeros(problem.dim)
    tr = Trace("continuous greedy")
    rows = np.arange(problem.dim // 2)
    for _ in range(n_steps):
        g = problem.jac(x).reshape(-1, 2)
        # Linear maximisation over a triangle: the best of its vertices 0, e1, e2.
        v = np.zeros_like(g)
        k = np.argmax(g, axis=1)
        take = g[rows, k] > 0
        v[rows[take], k[take]] = 1.0
        x = x + v.ravel() / n_steps
        tr.record(objective=float(problem.fun(x)), grad_norm=float(np.linalg.norm(g)), step_size=1.0 / n_steps)
    return Result(x=x, fun=float(problem.fun(x)), nit=n_steps, success=True, message="done", trace=tr)
