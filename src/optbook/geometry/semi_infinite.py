"""Chapter 12: semi-infinite nonconvex min-max with iDB-PD (Melcher et al., NeurIPS 2025).

The problem class is

    min_x max_{y in Y} phi(x, y)   subject to   psi(x, w) <= 0 for every w in W,

with Y, W closed convex sets: infinitely many constraints, one per w, so the feasible set is
{x : G(x) <= 0} with G(x) = max_{w in W} psi(x, w). The paper's method, iDB-PD (inexact dynamic
barrier primal-dual), approximates the two inner maximizations by a few projected ascent steps and
moves x along the direction closest to steepest descent of phi for which the linearized worst-case
constraint decreases at a prescribed rate (Gong and Liu's dynamic barrier). The correction
coefficient lambda_k is the Lagrange multiplier of that small QP.

Baselines: quadratic-penalty gradient descent-ascent (``mu=0``: plain GDA, which ignores the
constraint) and the classical exchange method (adaptive discretization of W, SLSQP on each finite
subproblem). Every run returns a :class:`~optbook.core.Result` whose ``trace`` holds the paper's
three measures (stationarity, infeasibility [G]_+ and complementarity |lambda G|), always
evaluated with an exact or global inner maximum, never with the algorithm's own w_k, together
with the cumulative count of gradient evaluations.

Reconstructed from the paper card (the paper's code is not public): the feasibility term rho
(option "plus" = [psi]_+, the default, or "value" = psi), the inner-loop details and all defaults.
The chapter's experiments, claims and figures live in :mod:`optbook.geometry.semi_infinite_chapter`.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
from scipy.optimize import minimize

from ..core import (
    Result,
    Trace,
    as_rng,
    check_choice,
    check_in_range,
    check_int,
    check_matrix,
    check_positive,
    check_vector,
)
from ..core import project_ball as _proj_ball
from ..core import project_simplex as _proj_simplex

Vec = np.ndarray
RHOS = ("plus", "value")
LOSSES = ("squared", "welsch")


# --------------------------------------------------------------------------- projections

def project_simplex(v: Vec) -> Vec:
    """Euclidean projection of a vector onto the probability simplex {y >= 0, sum y = 1}."""
    return _proj_simplex(check_vector(v, "v"))


def project_ball(v: Vec, radius: float = 1.0) -> Vec:
    """Euclidean projection of a vector onto the ball {||w|| <= radius}."""
    return _proj_ball(check_vector(v, "v"), check_positive(radius, "radius"))


def _simplex_1d(v: Vec) -> Vec:
    """project_simplex for one short vector without the batch machinery (it runs inside every
    inner ascent step); the same sort-based rule, shifted by the largest entry first."""
    u = v - v.max()
    total, rho, top = 0.0, 1, 0.0
    for i, s in enumerate(sorted(u.tolist(), reverse=True), 1):   # a few entries: plain floats are fastest
        total += s
        if s * i > total - 1.0:
            rho, top = i, total - 1.0
    return np.maximum(u - top / rho, 0.0)


# --------------------------------------------------------------------------- the direction QP

def barrier_direction(g: Vec, a: Vec, c: float, *, delta: float = 1e-12,
                      lam_max: float = 1e6) -> tuple[Vec, float]:
    """The dynamic-barrier direction, in closed form.

    Solves ``min_d ||d + g||^2  s.t.  a^T d + c <= 0`` (the paper's direction-finding QP, with
    g = grad_x phi, a = grad_x psi at the current worst-case w and c = alpha * rho):
    ``d = -g - lam * a`` with ``lam = max(0, (c - a^T g) / (||a||^2 + delta))``, capped at
    ``lam_max``. ``lam`` is the QP's Lagrange multiplier, the "dual" variable of iDB-PD. When
    ``a = 0`` the constraint is locally flat and ``lam = 0``.

    Returns
    -------
    d, lam
    """
    g = check_vector(g, "g")
    a = check_vector(a, "a", g.size)
    if isinstance(c, bool) or not np.isfinite(c):
        raise ValueError(f"c must be a finite real number, got {c!r}")
    delta = check_positive(delta, "delta", allow_zero=True)
    lam_max = check_positive(lam_max, "lam_max")
    return _direction(g, a, float(c), delta, lam_max)


def _direction(g: Vec, a: Vec, c: float, delta: float, lam_max: float) -> tuple[Vec, float]:
    aa = float(a @ a)
    if aa == 0.0:
        return -g, 0.0
    lam = min(max(0.0, (c - float(a @ g)) / (aa + delta)), lam_max)
    return -g - lam * a, lam


# --------------------------------------------------------------------------- problems

@dataclass(frozen=True)
class SemiInfiniteMinMax:
    """``min_x max_{y in Y} phi(x, y)  s.t.  psi(x, w) <= 0  for all w in W``.

    The oracles are plain callables. ``best_y(x)`` (the exact argmax over Y) and ``worst_w(x)``
    (an exact or global argmax over W) are used to *evaluate* runs (objective
    Phi(x) = max_y phi and infeasibility G(x) = max_w psi) and by the exchange method's
    subproblems; iDB-PD and the penalty method only use gradients and projections.
    ``dim_y = 0`` means phi does not depend on y (a plain constrained minimization).
    """

    dim_x: int
    dim_y: int
    dim_w: int
    phi: Callable[[Vec, Vec], float]
    grad_x_phi: Callable[[Vec, Vec], Vec]
    grad_y_phi: Callable[[Vec, Vec], Vec]
    psi: Callable[[Vec, Vec], float]
    grad_x_psi: Callable[[Vec, Vec], Vec]
    grad_w_psi: Callable[[Vec, Vec], Vec]
    proj_y: Callable[[Vec], Vec]
    proj_w: Callable[[Vec], Vec]
    best_y: Callable[[Vec], Vec]
    worst_w: Callable[[Vec], Vec]
    y0: Vec
    w0: Vec
    name: str = "problem"
    data: dict = field(default_factory=dict, compare=False)
    sample_w: Callable[[np.random.Generator], Vec] | None = None

    def __post_init__(self) -> None:
        check_int(self.dim_x, "dim_x", minimum=1)
        check_int(self.dim_y, "dim_y")
        check_int(self.dim_w, "dim_w", minimum=1)
        for name in ("phi", "grad_x_phi", "grad_y_phi", "psi", "grad_x_psi", "grad_w_psi", "proj_y", "proj_w",
                     "best_y", "worst_w"):
            if not callable(getattr(self, name)):
                raise ValueError(f"{name} must be callable")

    def Phi(self, x: Vec) -> float:
        """The objective max_y phi(x, y), with the exact inner maximizer."""
        x = check_vector(x, "x", self.dim_x)
        return float(self.phi(x, self.best_y(x)))

    def G(self, x: Vec) -> float:
        """The worst-case constraint max_w psi(x, w), exact or global."""
        x = check_vector(x, "x", self.dim_x)
        return float(self.psi(x, self.worst_w(x)))

    def stationarity(self, x: Vec, lam: float) -> float:
        """||grad_x phi(x, y*(x)) + lam grad_x psi(x, w*(x))||, the paper's stationarity measure."""
        x = check_vector(x, "x", self.dim_x)
        lam = check_positive(lam, "lam", allow_zero=True)
        return float(np.linalg.norm(self.grad_x_phi(x, self.best_y(x))
                                    + lam * self.grad_x_psi(x, self.worst_w(x))))

    def measures(self, x: Vec, lam: float) -> dict[str, float]:
        """The paper's three measures at (x, lam), with the exact inner maxima: stationarity,
        infeasibility [G(x)]_+ and complementarity |lam G(x)|; ``kkt`` is the largest of them."""
        G = self.G(x)
        out = dict(stationarity=self.stationarity(x, lam), infeasibility=max(G, 0.0),
                   complementarity=abs(lam * G), G=G)
        out["kkt"] = max(out["stationarity"], out["infeasibility"], out["complementarity"])
        return out


def _weighted_losses(losses, jac, m: int, mu: float):
    """phi(x, y) = y^T l(x) - mu/2 ||y - 1/m||^2 over the simplex (a strongly concave max)."""
    center = np.full(m, 1.0 / m)
    return dict(
        phi=lambda x, y: float(y @ losses(x) - 0.5 * mu * np.sum((y - center) ** 2)),
        grad_x_phi=lambda x, y: jac(x).T @ y,
        grad_y_phi=lambda x, y: losses(x) - mu * (y - center),
        proj_y=_proj_simplex,
        best_y=lambda x: _proj_simplex(center + losses(x) / mu),
        y0=center,
    )


def robust_multitask_problem(*, n_features: int = 10, n_samples: int = 200, n_tasks: int = 3,
                             radius: float = 0.3, mu: float = 0.1, tau_frac: float = 0.3,
                             feature_shift: float = 0.0, loss: str = "squared", loss_scale: float = 1.0,
                             rng=0) -> SemiInfiniteMinMax:
    """The card's robust multitask regression with a priority task.

    Shared linear model x; task j has data (A_j, b_j) and loss l_j(x) = mean(ell(A_j x - b_j)).
    ``loss="squared"``: ell(r) = r^2/2 (the card's instance, convex in x). ``loss="welsch"``:
    ell(r) = s^2/2 (1 - exp(-r^2/s^2)) with s = ``loss_scale``, a bounded robust loss that is
    nonconvex wherever |r| > s/sqrt(2) (the chapter's nonconvex instance).
    Objective phi(x, y) = sum_j y_j l_j(x) - mu/2 ||y - 1/m||^2 over the simplex (a smoothed
    worst task). Constraint (always the squared loss): task 0's loss under every common input
    shift w, ||w|| <= radius, stays below tau: psi(x, w) = mean(((A_0 + 1 w^T) x - b_0)^2)/2 - tau.
    Its exact maximum is G(x) = (mean(e^2) + 2 r |mean(e)| ||x|| + r^2 ||x||^2)/2 - tau with
    e = A_0 x - b_0. tau sits ``tau_frac`` of the way from min_x (G + tau) to its value at the
    unconstrained min-max solution (found by BFGS from 0), so the constraint is active.
    ``feature_shift`` > 0 gives each task's features a common random mean; the mean residual of
    task 0 can then be driven to zero, and the constrained solution sits on the kink of G where
    the worst-case shift flips sign.
    """
    n_features = check_int(n_features, "n_features", minimum=1)
    n_samples = check_int(n_samples, "n_samples", minimum=2)
    n_tasks = check_int(n_tasks, "n_tasks", minimum=1)
    radius = check_positive(radius, "radius")
    mu = check_positive(mu, "mu")
    tau_frac = check_in_range(tau_frac, "tau_frac", 0.0, 1.0)
    feature_shift = check_positive(feature_shift, "feature_shift", allow_zero=True)
    loss = check_choice(loss, "loss", LOSSES)
    s2 = check_positive(loss_scale, "loss_scale") ** 2
    gen = as_rng(rng)
    base = gen.standard_normal(n_features)
    As = gen.standard_normal((n_tasks, n_samples, n_features)) + feature_shift * gen.standard_normal((n_tasks, 1, n_features))
    truths = base + 0.7 * gen.standard_normal((n_tasks, n_features))
    bs = np.einsum("tnd,td->tn", As, truths) + 0.3 * gen.standard_normal((n_tasks, n_samples))
    A0, b0, n = As[0], bs[0], n_samples
    A_all, b_all = As.reshape(-1, n_features), bs.reshape(-1)   # stacked: one matvec for all tasks
    A_allT = np.ascontiguousarray(A_all.T)

    if loss == "squared":
        def ell(r):
            return 0.5 * r * r

        def dell(r):
            return r
    else:
        def ell(r):
            return 0.5 * s2 * (1.0 - np.exp(-r * r / s2))

        def dell(r):
            return r * np.exp(-r * r / s2)

    def losses(x):
        return ell(A_all @ x - b_all).reshape(n_tasks, n).sum(axis=1) / n

    def grad_x_phi(x, y):
        return A_allT @ (dell(A_all @ x - b_all) * np.repeat(y / n, n))

    def robust_loss(x):  # G(x) + tau
        e = A0 @ x - b0
        nx = np.linalg.norm(x)
        return 0.5 * (np.mean(e * e) + 2 * radius * abs(np.mean(e)) * nx + radius ** 2 * nx ** 2)

    center = np.full(n_tasks, 1.0 / n_tasks)
    parts = dict(
        phi=lambda x, y: float(y @ losses(x) - 0.5 * mu * np.sum((y - center) ** 2)),
        grad_x_phi=grad_x_phi,
        grad_y_phi=lambda x, y: losses(x) - mu * (y - center),
        proj_y=_simplex_1d,
        best_y=lambda x: _simplex_1d(center + losses(x) / mu),
        y0=center,
    )
    x_free = minimize(lambda x: parts["phi"](x, parts["best_y"](x)), np.zeros(n_features),
                      jac=lambda x: grad_x_phi(x, parts["best_y"](x)), method="BFGS",
                      options={"gtol": 1e-10}).x
    x_rob = minimize(robust_loss, x_free, method="BFGS", options={"gtol": 1e-9}).x
    r_min, r_free = robust_loss(x_rob), robust_loss(x_free)
    tau = float(r_min + tau_frac * (r_free - r_min))

    A0T = np.ascontiguousarray(A0.T)

    def psi(x, w):
        e = A0 @ x - b0 + w @ x
        return float(0.5 * (e @ e) / n - tau)

    def grad_x_psi(x, w):
        e = A0 @ x - b0 + w @ x
        return (A0T @ e + w * e.sum()) / n

    def grad_w_psi(x, w):
        return ((A0 @ x - b0).sum() / n + w @ x) * x

    def worst_w(x):
        nx = np.linalg.norm(x)
        if nx == 0:
            return np.zeros(n_features)
        s = 1.0 if (A0 @ x - b0).sum() >= 0 else -1.0
        return s * radius * x / nx

    def hess_min_eig(x):   # smallest eigenvalue of the Hessian of phi(., y*(x)) at x
        r = A_all @ x - b_all
        h = np.ones_like(r) if loss == "squared" else (1.0 - 2.0 * r * r / s2) * np.exp(-r * r / s2)
        H = A_allT @ (A_all * (h * np.repeat(parts["best_y"](x) / n, n))[:, None])
        return float(np.linalg.eigvalsh(H)[0])

    def ball(w):
        nw = np.sqrt(w @ w)
        return w if nw <= radius else w * (radius / nw)

    return SemiInfiniteMinMax(
        n_features, n_tasks, n_features, psi=psi, grad_x_psi=grad_x_psi, grad_w_psi=grad_w_psi,
        proj_w=ball, worst_w=worst_w,
        w0=np.zeros(n_features), name=f"robust multitask regression ({loss} loss)",
        sample_w=lambda g: _proj_ball(radius * g.uniform(-1, 1, n_features), radius),
        data=dict(tau=tau, radius=radius, mu=mu, x_free=x_free, robust_loss=robust_loss, losses=losses,
                  loss=loss, hess_min_eig=hess_min_eig),
        **parts,
    )


#: Centres of the three tasks of the 2-D toy (outside its feasible set, so the constraint binds).
TOY_CENTERS = np.array([[1.9, 1.3], [2.3, 0.1], [0.7, 2.2]])
TOY_W_GRID = np.linspace(0.0, 1.0, 2001)


def _toy_b(w):
    return 1.0 + 0.3 * np.cos(6 * np.pi * w)


def toy_values_on_grid(X: np.ndarray, w_grid: np.ndarray = TOY_W_GRID) -> np.ndarray:
    """psi(x, w) of the 2-D toy for every row of X (k x 2) and every w of the grid (k x len)."""
    X = check_matrix(X, "X", shape=(None, 2))
    w_grid = check_vector(w_grid, "w_grid")
    return _toy_values(X, w_grid)


def _toy_values(X: np.ndarray, w_grid: np.ndarray) -> np.ndarray:
    t = 2 * np.pi * w_grid
    return X[:, :1] * np.cos(t) + X[:, 1:2] * np.sin(t) - _toy_b(w_grid)


def _toy_worst_w(x: Vec) -> Vec:
    vals = _toy_values(x[None, :], TOY_W_GRID)[0]
    i = int(np.argmax(vals))
    h = TOY_W_GRID[1] - TOY_W_GRID[0]
    if 0 < i < vals.size - 1:  # parabolic refinement of the grid maximum
        l_, m_, r_ = vals[i - 1], vals[i], vals[i + 1]
        den = l_ - 2 * m_ + r_
        if den < 0:
            return np.array([TOY_W_GRID[i] + 0.5 * h * (l_ - r_) / den])
    return np.array([TOY_W_GRID[i]])


def toy_problem(mu: float = 0.5) -> SemiInfiniteMinMax:
    """A 2-D semi-infinite min-max for pictures: three quadratic tasks l_j = ||x - c_j||^2/2
    mixed by y on the simplex, and the constraint psi(x, w) = x_1 cos 2 pi w + x_2 sin 2 pi w
    - 1 - 0.3 cos 6 pi w <= 0 for all w in [0, 1]: a rounded triangle, an intersection of
    infinitely many half-planes. psi(x, .) has several local maxima in w, so local ascent can
    miss the worst case."""
    mu = check_positive(mu, "mu")
    C = TOY_CENTERS

    def psi(x, w):
        t = 2 * np.pi * w[0]
        return float(x[0] * np.cos(t) + x[1] * np.sin(t) - _toy_b(w[0]))

    def grad_x_psi(x, w):
        t = 2 * np.pi * w[0]
        return np.array([np.cos(t), np.sin(t)])

    def grad_w_psi(x, w):
        t = 2 * np.pi * w[0]
        return np.array([2 * np.pi * (-x[0] * np.sin(t) + x[1] * np.cos(t))
                         + 1.8 * np.pi * np.sin(6 * np.pi * w[0])])

    parts = _weighted_losses(lambda x: 0.5 * np.sum((x - C) ** 2, axis=1), lambda x: x - C, 3, mu)
    return SemiInfiniteMinMax(2, 3, 1, psi=psi, grad_x_psi=grad_x_psi, grad_w_psi=grad_w_psi,
                              proj_w=lambda w: np.clip(w, 0.0, 1.0), worst_w=_toy_worst_w,
                              w0=np.array([[0.1], [0.45], [0.8]]), name="2-D toy",
                              sample_w=lambda g: g.uniform(0, 1, 1),
                              data=dict(mu=mu), **parts)


def ball_toy(x_target: Vec) -> SemiInfiniteMinMax:
    """The convex toy with a known KKT point: min ||x - x_t||^2 s.t. u^T x <= 1 for all
    ||u|| <= 1 (that is, ||x|| <= 1). For ||x_t|| > 1: x* = x_t/||x_t||, lambda* = 2(||x_t|| - 1)."""
    xt = check_vector(x_target, "x_target")
    n = xt.size
    empty = np.zeros(0)
    return SemiInfiniteMinMax(
        n, 0, n,
        phi=lambda x, y: float(np.sum((x - xt) ** 2)), grad_x_phi=lambda x, y: 2 * (x - xt),
        grad_y_phi=lambda x, y: empty, psi=lambda x, w: float(w @ x - 1.0),
        grad_x_psi=lambda x, w: w, grad_w_psi=lambda x, w: x, proj_y=lambda y: y,
        proj_w=lambda w: _proj_ball(w, 1.0), best_y=lambda x: empty,
        worst_w=lambda x: x / max(np.linalg.norm(x), 1e-300), y0=empty,
        w0=np.full(n, 1.0 / np.sqrt(n)), name="ball toy", data=dict(x_target=xt))


# --------------------------------------------------------------------------- methods

def _check_problem(problem) -> SemiInfiniteMinMax:
    if not isinstance(problem, SemiInfiniteMinMax):
        raise ValueError(f"problem must be a SemiInfiniteMinMax, got {type(problem).__name__}")
    return problem


def _start(problem, x0, y0, w0):
    x = check_vector(x0, "x0", problem.dim_x).copy()
    if problem.dim_y == 0:
        y = np.zeros(0)
    else:
        y = check_vector(problem.y0 if y0 is None else y0, "y0", problem.dim_y)
        y = problem.proj_y(y.copy())
    W = np.array(problem.w0 if w0 is None else w0, dtype=float)
    if W.ndim == 1:
        W = W[None, :]
    if W.ndim != 2 or W.shape[1] != problem.dim_w or W.shape[0] == 0:
        raise ValueError(f"w0 must have shape ({problem.dim_w},) or (p, {problem.dim_w}), got {np.shape(W)}")
    if not np.all(np.isfinite(W)):
        raise ValueError("w0 must be finite (found NaN or inf)")
    W = np.array([problem.proj_w(w) for w in W])
    return x, y, W


def _check_restarts(problem, restarts, W) -> int:
    restarts = check_int(restarts, "restarts", minimum=0)
    if restarts:
        if problem.sample_w is None:
            raise ValueError("restarts > 0 needs problem.sample_w")
        if restarts >= len(W):
            raise ValueError(f"restarts must be smaller than the pool size {len(W)}, got {restarts}")
    return restarts


def _inner(problem, x, y, W, sigma, beta, inner_y, inner_w, restarts=0, gen=None):
    """The inexact inner maximizations: projected ascent on y, and on each w of the pool (warm
    started; the ``restarts`` lowest candidates redrawn at random first). Returns y, W, the worst
    w of the pool, its psi and the number of gradient calls."""
    if restarts:
        low = np.argsort([problem.psi(x, v) for v in W])[:restarts]
        W[low] = [problem.sample_w(gen) for _ in low]
    if problem.dim_y:
        for _ in range(inner_y):
            y = problem.proj_y(y + sigma * problem.grad_y_phi(x, y))
    calls = (inner_y if problem.dim_y else 0) + inner_w * len(W)
    if len(W) == 1:   # one candidate: the same steps without the pool's bookkeeping (the common case)
        w = W[0]
        for _ in range(inner_w):
            w = problem.proj_w(w + beta * problem.grad_w_psi(x, w))
        return y, w[None, :], w, problem.psi(x, w), calls
    for _ in range(inner_w):
        W = np.array([problem.proj_w(w + beta * problem.grad_w_psi(x, w)) for w in W])
    vals = [problem.psi(x, w) for w in W]
    j = int(np.argmax(vals))
    return y, W, W[j], vals[j], calls


def _log(trace, problem, x, lam, evals, step, k=None):
    m = problem.measures(x, lam)
    trace.record(iteration=k, objective=problem.Phi(x), grad_norm=m["stationarity"], step_size=step,
                 infeasibility=m["infeasibility"], complementarity=m["complementarity"], kkt=m["kkt"], lam=lam,
                 G=m["G"], grad_evals=evals)


def idb_pd(problem: SemiInfiniteMinMax, x0: Vec, *, y0: Vec | None = None, w0: Vec | None = None,
           eta: float = 0.05, alpha: float = 5.0, sigma: float = 0.5, beta: float = 1.0,
           inner_y: int = 5, inner_w: int = 5, rho: str = "plus", lam_max: float = 1e6,
           delta: float = 1e-12, eta_decay: float = 0.0, restarts: int = 0, rng=0,
           maxiter: int = 3000, tol: float = 0.0, record_every: int = 1, record_path: bool = False) -> Result:
    """iDB-PD, the inexact dynamic barrier primal-dual method (the paper's algorithm).

    Each iteration: ``inner_y`` projected ascent steps on y (step ``sigma``) and ``inner_w`` on
    each candidate w of the pool (step ``beta``, warm started; the worst candidate is used);
    then the direction-finding QP with g = grad_x phi(x, y), a = grad_x psi(x, w) and
    c = alpha * rho, rho = [psi]_+ (``rho="plus"``, option A: the barrier acts only while
    infeasible) or psi (``rho="value"``, option B, Gong and Liu's choice: it also pulls a strictly
    feasible iterate toward the boundary); and x <- x + eta d. The multiplier lam is the QP's.

    ``w0`` may be one point of W or a pool (p x dim_w) for non-concave psi(x, .). Warm-started
    candidates can all sit on a local maximum that stopped being the worst one; with
    ``restarts = r > 0`` the r lowest candidates of the pool are redrawn at random in W
    (``problem.sample_w``, generator ``rng``) before each inner ascent (our safeguard). The trace
    records Phi(x) (objective), stationarity (grad_norm), infeasibility [G(x)]_+,
    complementarity |lam G(x)|, their largest value (kkt), lam and the cumulative number of
    gradient evaluations, every ``record_every`` iterations and at the last one.

    Stopping rule: with ``tol > 0`` the run stops at the first iterate x_k whose own estimates,
    computed from the inexact y_k and w_k it already has, are all at most ``tol``: the step
    ||d_k|| (stationarity), [psi(x_k, w_k)]_+ (infeasibility) and |lam_k psi(x_k, w_k)|
    (complementarity); the evaluations spent to compute them are counted. ``tol = 0`` runs the
    whole budget.
    """
    problem = _check_problem(problem)
    x, y, W = _start(problem, x0, y0, w0)
    tol = check_positive(tol, "tol", allow_zero=True)
    record_every = check_int(record_every, "record_every", minimum=1)
    eta, alpha = check_positive(eta, "eta"), check_positive(alpha, "alpha", allow_zero=True)
    sigma, beta = check_positive(sigma, "sigma"), check_positive(beta, "beta")
    inner_y, inner_w = check_int(inner_y, "inner_y", minimum=1), check_int(inner_w, "inner_w", minimum=1)
    rho = check_choice(rho, "rho", RHOS)
    lam_max, delta = check_positive(lam_max, "lam_max"), check_positive(delta, "delta", allow_zero=True)
    eta_decay = check_positive(eta_decay, "eta_decay", allow_zero=True)
    if eta_decay > 1:
        raise ValueError(f"eta_decay must lie in [0, 1], got {eta_decay}")
    restarts = _check_restarts(problem, restarts, W)
    gen = as_rng(rng)
    maxiter = check_int(maxiter, "maxiter", minimum=1)
    trace = Trace("iDB-PD", meta=dict(eta=eta, eta_decay=eta_decay, alpha=alpha, inner_y=inner_y, inner_w=inner_w, rho=rho))
    path, ws, lam, evals = [x.copy()], [W.copy()], 0.0, 0
    _log(trace, problem, x, lam, evals, np.nan)
    for k in range(maxiter):
        y, W, w, psi_val, calls = _inner(problem, x, y, W, sigma, beta, inner_y, inner_w, restarts, gen)
        g, a = problem.grad_x_phi(x, y), problem.grad_x_psi(x, w)
        c = alpha * (max(psi_val, 0.0) if rho == "plus" else psi_val)
        d, lam = _direction(g, a, c, delta, lam_max)
        evals += calls + 2
        if tol > 0 and max(float(np.linalg.norm(d)), psi_val, abs(lam * psi_val)) <= tol:
            if trace.iteration[-1] != k:
                _log(trace, problem, x, lam, evals, 0.0, k)
            return Result(x=x, fun=problem.Phi(x), nit=k, success=True, message="converged (own estimates <= tol)",
                          trace=trace, lam=lam, y=y, w=w, grad_evals=evals, path=np.array(path),
                          w_pools=np.array(ws))
        step = eta * (k + 1.0) ** (-eta_decay)
        x = x + step * d
        if not float(x @ x) <= 1e12:   # NaN, infinite or ||x|| > 1e6
            return Result(x=x, fun=np.nan, nit=k + 1, success=False, message="diverged", trace=trace,
                          lam=lam, y=y, w=w, grad_evals=evals, path=np.array(path))
        if (k + 1) % record_every == 0 or k + 1 == maxiter:
            _log(trace, problem, x, lam, evals, step, k + 1)
        if record_path:
            path.append(x.copy())
            ws.append(W.copy())
    return Result(x=x, fun=problem.Phi(x), nit=maxiter, success=True, message="iteration budget used",
                  trace=trace, lam=lam, y=y, w=w, grad_evals=evals, path=np.array(path),
                  w_pools=np.array(ws))


def penalty_gda(problem: SemiInfiniteMinMax, x0: Vec, *, y0: Vec | None = None, w0: Vec | None = None,
                mu: float = 10.0, eta: float = 0.05, sigma: float = 0.5, beta: float = 1.0,
                inner_y: int = 5, inner_w: int = 5, restarts: int = 0, rng=0, maxiter: int = 3000,
                record_every: int = 1, record_path: bool = False) -> Result:
    """Quadratic-penalty gradient descent-ascent (baseline): the same inner ascent as iDB-PD,
    then x <- x - eta (grad_x phi + mu [psi]_+ grad_x psi), the gradient of
    phi + (mu/2)[psi]_+^2 at the current (y, w). Its multiplier estimate is lam = mu [psi]_+, so
    at a fixed point with lam near the KKT multiplier lam*, the violation is about lam*/mu: a
    fixed penalty is never exactly feasible. ``mu = 0`` is plain GDA, which ignores the
    constraint (a lower bound on the objective and an infeasibility reference). The trace is
    that of :func:`idb_pd`, and so are the inner loops (``w0`` pool, ``restarts``, ``rng``)."""
    problem = _check_problem(problem)
    x, y, W = _start(problem, x0, y0, w0)
    record_every = check_int(record_every, "record_every", minimum=1)
    restarts = _check_restarts(problem, restarts, W)
    gen = as_rng(rng)
    mu = check_positive(mu, "mu", allow_zero=True)
    eta, sigma, beta = check_positive(eta, "eta"), check_positive(sigma, "sigma"), check_positive(beta, "beta")
    inner_y, inner_w = check_int(inner_y, "inner_y", minimum=1), check_int(inner_w, "inner_w", minimum=1)
    maxiter = check_int(maxiter, "maxiter", minimum=1)
    name = f"penalty (mu = {mu:g})" if mu > 0 else "GDA (no constraint)"
    trace = Trace(name, meta=dict(mu=mu, eta=eta))
    path, evals, lam = [x.copy()], 0, 0.0
    _log(trace, problem, x, lam, evals, np.nan)
    for k in range(maxiter):
        if mu > 0:
            y, W, w, psi_val, calls = _inner(problem, x, y, W, sigma, beta, inner_y, inner_w, restarts, gen)
            lam = mu * max(psi_val, 0.0)
            step = problem.grad_x_phi(x, y) + lam * problem.grad_x_psi(x, w)
            evals += calls + 2
        else:
            if problem.dim_y:
                for _ in range(inner_y):
                    y = problem.proj_y(y + sigma * problem.grad_y_phi(x, y))
            step = problem.grad_x_phi(x, y)
            evals += (inner_y if problem.dim_y else 0) + 1
        x = x - eta * step
        if not float(x @ x) <= 1e12:   # NaN, infinite or ||x|| > 1e6
            return Result(x=x, fun=np.nan, nit=k + 1, success=False, message="diverged", trace=trace,
                          lam=lam, grad_evals=evals, path=np.array(path))
        if (k + 1) % record_every == 0 or k + 1 == maxiter:
            _log(trace, problem, x, lam, evals, eta, k + 1)
        if record_path:
            path.append(x.copy())
    return Result(x=x, fun=problem.Phi(x), nit=maxiter, success=True, message="iteration budget used",
                  trace=trace, lam=lam, y=y, grad_evals=evals, path=np.array(path))


def exchange_method(problem: SemiInfiniteMinMax, x0: Vec, *, w0: Vec | None = None, max_rounds: int = 30,
                    tol: float = 1e-6, ascent_steps: int = 50, beta: float = 1.0, n_starts: int = 4,
                    rng=0) -> Result:
    """The exchange method (adaptive discretization of W), the classical SIP baseline.

    Keep a finite set W_j. Solve min_x Phi(x) s.t. psi(x, w) <= 0 for w in W_j with SLSQP, warm
    started (Phi's gradient uses the exact y*(x), counted as one y- and one x-gradient); then
    search for the most violated w by projected ascent (``ascent_steps`` steps of size ``beta``
    from the previous cut points and ``n_starts`` random points of W drawn by
    ``problem.sample_w``, each counted), add it
    to W_j, and repeat until max_w psi <= ``tol`` by that search (or ``max_rounds``)."""
    problem = _check_problem(problem)
    x, _, W = _start(problem, x0, None, w0)
    max_rounds = check_int(max_rounds, "max_rounds", minimum=1)
    tol = check_positive(tol, "tol")
    ascent_steps = check_int(ascent_steps, "ascent_steps", minimum=1)
    beta = check_positive(beta, "beta")
    n_starts = check_int(n_starts, "n_starts", minimum=0)
    gen = as_rng(rng)
    draw = problem.sample_w or (lambda g: g.uniform(-1, 1, problem.dim_w))
    cuts = [w for w in W]
    counter = {"evals": 0}
    trace = Trace("exchange (SLSQP)", meta=dict(max_rounds=max_rounds))
    _log(trace, problem, x, 0.0, 0, np.nan)

    def obj_jac(z):
        counter["evals"] += 2
        return problem.grad_x_phi(z, problem.best_y(z))

    lam, message = 0.0, f"max_rounds = {max_rounds} reached"
    for _ in range(max_rounds):
        frozen = [w.copy() for w in cuts]

        def cons_jac(z, frozen=frozen):
            counter["evals"] += len(frozen)
            return -np.array([problem.grad_x_psi(z, w) for w in frozen])

        res = minimize(problem.Phi, x, jac=obj_jac, method="SLSQP",
                       constraints=[dict(type="ineq", fun=lambda z, frozen=frozen: -np.array([problem.psi(z, w) for w in frozen]),
                                         jac=cons_jac)],
                       options=dict(maxiter=200, ftol=1e-12))
        x = res.x
        mult = getattr(res, "multipliers", None)
        if isinstance(mult, dict) and "ineq" in mult:
            lam = float(np.sum(mult["ineq"]))
        starts = np.array([problem.proj_w(w) for w in
                           list(cuts) + [draw(gen) for _ in range(n_starts)]])
        for _ in range(ascent_steps):
            starts = np.array([problem.proj_w(w + beta * problem.grad_w_psi(x, w)) for w in starts])
        counter["evals"] += ascent_steps * len(starts)
        vals = [problem.psi(x, w) for w in starts]
        j = int(np.argmax(vals))
        _log(trace, problem, x, lam, counter["evals"], np.nan)
        if vals[j] <= tol:
            message = "converged (searched max psi <= tol)"
            break
        cuts.append(starts[j].copy())
    return Result(x=x, fun=problem.Phi(x), nit=len(trace) - 1, success=True, message=message,
                  trace=trace, lam=lam, cuts=np.array(cuts), grad_evals=counter["evals"])


def reference_solution(problem: SemiInfiniteMinMax, starts) -> Result:
    """SLSQP on min Phi(x) s.t. G(x) <= 0 with the exact (global) inner maxima, best of several
    starts: the reference the claim compares against."""
    problem = _check_problem(problem)
    try:
        starts = np.atleast_2d(np.asarray(starts, dtype=float))
    except (TypeError, ValueError) as err:
        raise ValueError("starts must be an array of numbers") from err
    if starts.ndim != 2 or starts.shape[0] == 0 or starts.shape[1] != problem.dim_x or not np.all(np.isfinite(starts)):
        raise ValueError(f"starts must be one or more finite rows of length {problem.dim_x}, got shape {starts.shape}")
    best = None
    for s in starts:
        res = minimize(problem.Phi, s, jac=lambda z: problem.grad_x_phi(z, problem.best_y(z)), method="SLSQP",
                       constraints=[dict(type="ineq", fun=lambda z: -problem.G(z),
                                         jac=lambda z: -problem.grad_x_psi(z, problem.worst_w(z)))],
                       options=dict(maxiter=500, ftol=1e-14))
        if problem.G(res.x) <= 1e-8 and (best is None or res.fun < best.fun):
            best = res
    if best is None:
        raise ValueError("SLSQP found no feasible point from the given starts")
    return Result(x=best.x, fun=float(best.fun), nit=best.nit, success=True, message=str(best.message),
                  trace=Trace("reference"))


