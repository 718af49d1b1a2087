"""Chapter 13: nonsmooth nonconvex stochastic optimization on Riemannian manifolds (RO2NC).

Sahinoglu, Sun and Shahrampour (NeurIPS 2025) adapt the Euclidean *online-to-nonconvex
conversion* (O2NC, Cutkosky, Mehta and Orabona 2023) to embedded submanifolds: retractions keep
the iterates on the manifold and projection-based vector transport moves gradients and the online
learner's state between tangent spaces. The method finds a Riemannian (delta, epsilon)-Goldstein
stationary point with O(eps^-3 delta^-1) stochastic (sub)gradients; ZO-RO2NC does the same with
function values only.

The pseudo-code of RO2NC and ZO-RO2NC here is the reconstruction of the paper card (Euclidean
O2NC with the Riemannian substitutions the paper describes); output rule, parameters and the
zeroth-order estimator are that reconstruction's choices.

Contents: manifolds (:class:`Sphere`, :class:`Stiefel`, :class:`Euclidean`), the dual principal
component pursuit problem (:func:`make_dpcp`), the methods (:func:`ro2nc`, :func:`zo_ro2nc`,
:func:`o2nc`), the baselines (:func:`riemannian_subgradient`, :func:`zo_rsgd`), the Goldstein
stationarity estimator (:func:`goldstein_estimate`), the chapter's figures, explorers and claim.
"""
from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import plotly.graph_objects as go
from scipy.optimize import nnls

from ..claims import Measured, claim
from ..core import Result, RngLike, Trace, as_rng, check_int, check_matrix, check_positive, check_vector
from ..core.fits import loglog_slope
from ..viz import SliderStep, base_layout, color_for, slider_figure
from ..widgets import Explorer, Slider

# ---------------------------------------------------------------------------------- manifolds


class Euclidean:
    """The flat space R^n seen as a manifold: R_x(v) = x + v, P_x = identity.

    Running RO2NC on it reproduces Euclidean O2NC exactly (a test checks it bit for bit).
    """

    def __init__(self, n: int):
        self.n = check_int(n, "n", minimum=1)
        self.shape = (self.n,)
        self.dim = self.n

    def check_point(self, x, name: str = "x") -> np.ndarray:
        return check_vector(x, name, self.n)

    def proj(self, x: np.ndarray, v: np.ndarray) -> np.ndarray:
        return v

    def retract(self, x: np.ndarray, v: np.ndarray) -> np.ndarray:
        return x + v

    def exp(self, x: np.ndarray, v: np.ndarray) -> np.ndarray:
        return x + v

    def transport(self, x: np.ndarray, y: np.ndarray, v: np.ndarray) -> np.ndarray:
        return v

    def norm(self, v: np.ndarray) -> float:
        return math.sqrt(float(v @ v))

    def dist(self, x: np.ndarray, y: np.ndarray) -> float:
        return self.norm(x - y)

    def random_point(self, rng: RngLike = None) -> np.ndarray:
        return as_rng(rng).standard_normal(self.n)


class Sphere:
    """The unit sphere S^{n-1} in R^n (dimension n - 1).

    Tangent projection P_x(v) = (I - x x^T) v, retraction R_x(v) = (x + v)/||x + v|| (the
    "metric projection" retraction), exponential map Exp_x(v) = cos||v|| x + sin||v|| v/||v||,
    vector transport by projection Gamma_{x->y}(v) = P_y(v) (not isometric: norms shrink).
    """

    def __init__(self, n: int):
        self.n = check_int(n, "n", minimum=2)
        self.shape = (self.n,)
        self.dim = self.n - 1

    def check_point(self, x, name: str = "x", tol: float = 1e-8) -> np.ndarray:
        x = check_vector(x, name, self.n)
        if abs(math.sqrt(float(x @ x)) - 1.0) > tol:
            raise ValueError(f"{name} must lie on the unit sphere (norm 1), got norm {np.linalg.norm(x):.6g}")
        return x

    def proj(self, x: np.ndarray, v: np.ndarray) -> np.ndarray:
        return v - (x @ v) * x

    def retract(self, x: np.ndarray, v: np.ndarray) -> np.ndarray:
        y = x + v
        return y / math.sqrt(float(y @ y))

    def exp(self, x: np.ndarray, v: np.ndarray) -> np.ndarray:
        t = math.sqrt(float(v @ v))
        if t == 0.0:
            return x.copy()
        return math.cos(t) * x + (math.sin(t) / t) * v

    def transport(self, x: np.ndarray, y: np.ndarray, v: np.ndarray) -> np.ndarray:
        return v - (y @ v) * y

    def norm(self, v: np.ndarray) -> float:
        return math.sqrt(float(v @ v))

    def dist(self, x: np.ndarray, y: np.ndarray) -> float:
        """Geodesic (great-circle) distance."""
        return float(np.arccos(np.clip(x @ y, -1.0, 1.0)))

    def random_point(self, rng: RngLike = None) -> np.ndarray:
        z = as_rng(rng).standard_normal(self.n)
        return z / np.linalg.norm(z)


class Stiefel:
    """The Stiefel manifold St(n, p) = {X in R^{n x p}: X^T X = I_p}.

    Tangent projection P_X(V) = V - X sym(X^T V), retraction R_X(V) = qf(X + V) (the Q factor of
    a QR decomposition with a positive diagonal in R), transport by projection.
    """

    def __init__(self, n: int, p: int):
        self.n = check_int(n, "n", minimum=1)
        self.p = check_int(p, "p", minimum=1)
        if self.p > self.n:
            raise ValueError(f"p must be <= n, got p={p} > n={n}")
        self.shape = (self.n, self.p)
        self.dim = self.n * self.p - self.p * (self.p + 1) // 2

    def check_point(self, x, name: str = "x", tol: float = 1e-8) -> np.ndarray:
        x = check_matrix(x, name, shape=self.shape)
        if np.max(np.abs(x.T @ x - np.eye(self.p))) > tol:
            raise ValueError(f"{name} must have orthonormal columns (X^T X = I)")
        return x

    def proj(self, x: np.ndarray, v: np.ndarray) -> np.ndarray:
        s = x.T @ v
        return v - x @ (0.5 * (s + s.T))

    def retract(self, x: np.ndarray, v: np.ndarray) -> np.ndarray:
        q, r = np.linalg.qr(x + v)
        signs = np.where(np.diag(r) < 0, -1.0, 1.0)
        return q * signs

    def transport(self, x: np.ndarray, y: np.ndarray, v: np.ndarray) -> np.ndarray:
        return self.proj(y, v)

    def norm(self, v: np.ndarray) -> float:
        return math.sqrt(float(np.sum(v * v)))

    def random_point(self, rng: RngLike = None) -> np.ndarray:
        return self.retract(np.zeros(self.shape), as_rng(rng).standard_normal(self.shape))


Manifold = Euclidean | Sphere | Stiefel


def _check_manifold(manifold) -> Manifold:
    if not isinstance(manifold, (Euclidean, Sphere, Stiefel)):
        raise ValueError(f"manifold must be a Euclidean, Sphere or Stiefel instance, got {type(manifold).__name__}")
    return manifold


def clip_norm(v: np.ndarray, radius: float, manifold: Manifold) -> np.ndarray:
    """Project ``v`` onto the ball of radius ``radius`` (O2NC's clip_D)."""
    nv = manifold.norm(v)
    return v * (radius / nv) if nv > radius else v


# ---------------------------------------------------------------------------------- the problem


@dataclass
class DPCP:
    """Dual principal component pursuit: f(b) = (1/N) sum_i |y_i^T b| on the unit sphere.

    The rows ``Y`` are unit vectors; inliers lie in the hyperplane orthogonal to ``b_star``, so
    +-``b_star`` (the hyperplane's normal) are the minimizers under standard conditions. The
    objective is nonsmooth (a kink wherever some y_i^T b = 0) and nonconvex on the sphere.
    """

    Y: np.ndarray
    b_star: np.ndarray
    batch: int = 8

    @property
    def d(self) -> int:
        return self.Y.shape[1]

    def fun(self, b: np.ndarray) -> np.ndarray | float:
        """f(b); ``b`` may be a (k, d) stack (returns k values)."""
        v = np.mean(np.abs(b @ self.Y.T), axis=-1)
        return float(v) if np.ndim(v) == 0 else v

    def subgrad(self, b: np.ndarray) -> np.ndarray:
        """A Euclidean subgradient (1/N) Y^T sign(Y b) (sign(0) = 0 at a kink)."""
        return np.sign(self.Y @ b) @ self.Y / self.Y.shape[0]

    def stochastic_subgrad(self, b: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """The subgradient of a minibatch of ``batch`` rows drawn uniformly with replacement."""
        rows = self.Y[rng.integers(0, self.Y.shape[0], self.batch)]
        return np.sign(rows @ b) @ rows / self.batch

    def fun_sample(self, B: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """Minibatch objective at every row of the stack ``B`` with ONE shared minibatch (the
        two-point zeroth-order estimator needs the same sample at both points)."""
        rows = self.Y[rng.integers(0, self.Y.shape[0], self.batch)]
        return np.mean(np.abs(B @ rows.T), axis=-1)

    def angle_deg(self, b: np.ndarray) -> float:
        """Principal angle between span(b) and span(b_star), in degrees."""
        c = abs(float(b @ self.b_star)) / float(np.linalg.norm(b))
        return float(np.degrees(np.arccos(min(1.0, c))))


def make_dpcp(d: int = 30, n: int = 600, inlier_fraction: float = 0.7, *, batch: int = 8,
              rng: RngLike = None) -> DPCP:
    """Inliers: unit vectors uniform in the hyperplane b_star^perp; outliers: uniform on the sphere."""
    d = check_int(d, "d", minimum=2)
    n = check_int(n, "n", minimum=2)
    batch = check_int(batch, "batch", minimum=1)
    if not (isinstance(inlier_fraction, (int, float)) and 0.0 <= inlier_fraction <= 1.0):
        raise ValueError(f"inlier_fraction must lie in [0, 1], got {inlier_fraction!r}")
    rng = as_rng(rng)
    b_star = rng.standard_normal(d)
    b_star /= np.linalg.norm(b_star)
    n_in = int(round(inlier_fraction * n))
    Y = rng.standard_normal((n, d))
    Y[:n_in] -= np.outer(Y[:n_in] @ b_star, b_star)
    Y /= np.linalg.norm(Y, axis=1, keepdims=True)
    return DPCP(Y, b_star, batch)


# ---------------------------------------------------------------------------------- oracles


def zo_gradient(fun_sample: Callable, x: np.ndarray, manifold: Manifold, mu: float,
                rng: np.random.Generator) -> np.ndarray:
    """Two-point zeroth-order Riemannian gradient estimate (ZO-RO2NC's oracle; reconstruction).

    u = P_x xi / ||P_x xi|| with xi ~ N(0, I), and
    g = m/(2 mu) [f(R_x(mu u)) - f(R_x(-mu u))] u with m = dim M, both values taken with one
    shared sample by ``fun_sample(stack_of_two_points, rng)``. It lies in T_x M.
    """
    u = manifold.proj(x, rng.standard_normal(manifold.shape))
    u = u / manifold.norm(u)
    vals = fun_sample(np.stack([manifold.retract(x, mu * u), manifold.retract(x, -mu * u)]), rng)
    return (manifold.dim * (vals[0] - vals[1]) / (2.0 * mu)) * u


def _first_order(jac: Callable, manifold: Manifold) -> Callable:
    def oracle(w, rng):
        return manifold.proj(w, jac(w, rng))
    return oracle


def _zeroth_order(fun_sample: Callable, manifold: Manifold, mu: float) -> Callable:
    def oracle(w, rng):
        return zo_gradient(fun_sample, w, manifold, mu, rng)
    return oracle


# ---------------------------------------------------------------------------------- methods


def _common_checks(fun, x0, manifold, maxiter, record_every, monitor):
    if not callable(fun):
        raise ValueError("fun must be callable")
    manifold = _check_manifold(manifold)
    x = manifold.check_point(x0, "x0")
    maxiter = check_int(maxiter, "maxiter", minimum=1)
    record_every = (max(maxiter // 200, 1) if record_every is None
                    else check_int(record_every, "record_every", minimum=1))
    if monitor is not None and not callable(monitor):
        raise ValueError("monitor must be callable or None")
    return manifold, np.array(x, dtype=float), maxiter, record_every


def _o2nc_loop(fun, x0, oracle, manifold, T, D, eta, maxiter, rng, record_every, monitor, tol, name,
               evals_per_step, keep_path=False) -> Result:
    """The RO2NC iteration shared by the first- and zeroth-order versions (see :func:`ro2nc`)."""
    x = x0
    delta = np.zeros_like(x)
    x_ref, gsum = x, np.zeros_like(x)
    best_norm, best_x, best_window = np.inf, x, -1
    window_norms: list[float] = []
    last_norm = np.nan
    path, queries = ([x.copy()], []) if keep_path else (None, None)
    trace = Trace(name, meta=dict(T=T, D=D, eta=eta, manifold=type(manifold).__name__))

    def log(n, x):
        extra = monitor(x) if monitor is not None else {}
        trace.record(iteration=n, objective=float(fun(x)), grad_norm=last_norm, step_size=manifold.norm(delta),
                     samples=float(n * evals_per_step), **extra)

    log(0, x)
    n_done, message = maxiter, "maxiter samples used"
    for n in range(1, maxiter + 1):
        s = rng.random()
        w = manifold.retract(x, s * delta)          # random point on the retraction curve
        x_new = manifold.retract(x, delta)          # x_n = R_{x_{n-1}}(Delta_n)
        g = oracle(w, rng)                          # Riemannian (sub)gradient at w_n
        # P_{x_n} Delta - eta P_{x_n} g_n, in one projection (projection transport is linear).
        delta = clip_norm(manifold.transport(x, x_new, delta - eta * g), D, manifold)
        gsum = gsum + g                             # transported to T_{x_ref} at the window end
        x = x_new
        if keep_path:
            path.append(x.copy())
            queries.append(w.copy())
        if n % T == 0:                              # window end: certificate, reset the learner
            last_norm = manifold.norm(manifold.transport(x, x_ref, gsum)) / T   # ||mean of P_{x_ref} g_n||
            window_norms.append(last_norm)
            if last_norm < best_norm:
                best_norm, best_x, best_window = last_norm, x_ref, len(window_norms) - 1
            delta = np.zeros_like(x)
            x_ref, gsum = x, np.zeros_like(x)
            if tol is not None and last_norm <= tol:
                n_done, message = n, f"window average norm {last_norm:.3g} <= tol"
        if n % record_every == 0 or n == n_done:
            log(n, x)
        if n == n_done and n < maxiter:
            break
    if best_window < 0:  # fewer samples than one window: report the last point
        best_x = x
    extra = dict(path=np.array(path), queries=np.array(queries)) if keep_path else {}
    return Result(x=best_x, x_last=x, fun=float(fun(best_x)), nit=n_done, nfev=n_done * evals_per_step,
                  njev=n_done if evals_per_step == 1 else 0, success=bool(tol is None or best_norm <= tol),
                  message=message, trace=trace, window_norms=np.array(window_norms),
                  best_window=best_window, **extra)


def _o2nc_checks(T, D, eta, tol, rng):
    T = check_int(T, "T", minimum=1)
    D = check_positive(D, "D")
    eta = check_positive(eta, "eta")
    if tol is not None:
        tol = check_positive(tol, "tol")
    return T, D, eta, tol, as_rng(rng)


def ro2nc(fun: Callable, x0, jac: Callable, *, manifold: Manifold, T: int = 100, D: float = 5e-4,
          eta: float = 5e-5, maxiter: int = 20_000, tol: float | None = None, rng: RngLike = None,
          record_every: int | None = None, monitor: Callable | None = None, keep_path: bool = False,
          method: str = "RO2NC") -> Result:
    """Riemannian Online-to-NonConvex conversion (RO2NC, the paper's Algorithm; reconstruction).

    Each step draws s ~ U[0, 1], queries the stochastic subgradient at the random point
    w_n = R_{x_{n-1}}(s Delta) of the retraction curve, moves x_n = R_{x_{n-1}}(Delta), and updates
    the online learner (projected online gradient descent on the linear losses <g_n, .>)
    Delta <- clip_D(P_{x_n} Delta - eta P_{x_n} g_n), transporting its state to the new tangent
    space. Every ``T`` steps ("a window") the learner is reset, and the average of the window's
    gradients transported to the window's first point x_ref is recorded; its norm certifies
    (delta, eps)-Goldstein stationarity at x_ref with delta = T D.

    Parameters
    ----------
    fun : callable
        f(x), the full objective (only logged in the trace).
    x0 : array
        Start, a point of ``manifold``.
    jac : callable
        ``jac(x, rng)``: a stochastic Euclidean subgradient at x (projected to T_x M here).
    manifold : Sphere | Stiefel | Euclidean
    T, D, eta : window length, step-length bound (the learner's ball radius), learner step size.
        Theory: T ~ (G/eps)^2, D = delta/T, eta = D/(G sqrt(T)).
    maxiter : number of stochastic subgradients (samples) N.
    tol : stop at the first window whose average norm is <= tol (default: use all samples).
    monitor : callable, optional
        ``monitor(x) -> dict`` of extra series recorded with the trace (e.g. an angle).
    keep_path : keep every x_n and w_n (``path``, ``queries``) in the result (for pictures).

    Returns
    -------
    Result
        ``x`` is x_ref of the window with the smallest certificate (the output rule: a manifold has
        no average point); ``x_last`` the last iterate; ``window_norms`` every certificate.
    """
    manifold, x, maxiter, record_every = _common_checks(fun, x0, manifold, maxiter, record_every, monitor)
    if not callable(jac):
        raise ValueError("jac must be callable")
    T, D, eta, tol, rng = _o2nc_checks(T, D, eta, tol, rng)
    return _o2nc_loop(fun, x, _first_order(jac, manifold), manifold, T, D, eta, maxiter, rng,
                      record_every, monitor, tol, method, 1, keep_path)


def zo_ro2nc(fun: Callable, x0, fun_sample: Callable, *, manifold: Manifold, T: int = 100,
             D: float = 5e-4, eta: float = 5e-5, mu: float = 1e-3, maxiter: int = 20_000,
             tol: float | None = None, rng: RngLike = None, record_every: int | None = None,
             monitor: Callable | None = None, method: str = "ZO-RO2NC") -> Result:
    """Zeroth-order RO2NC (ZO-RO2NC; reconstruction): :func:`ro2nc` with the two-point estimator
    :func:`zo_gradient` (smoothing radius ``mu``, which should be much smaller than delta = T D)
    instead of a subgradient. ``fun_sample(points, rng)`` returns the stochastic objective at each
    of a stack of points with one shared sample. Each step costs two function values."""
    manifold, x, maxiter, record_every = _common_checks(fun, x0, manifold, maxiter, record_every, monitor)
    if not callable(fun_sample):
        raise ValueError("fun_sample must be callable")
    mu = check_positive(mu, "mu")
    T, D, eta, tol, rng = _o2nc_checks(T, D, eta, tol, rng)
    return _o2nc_loop(fun, x, _zeroth_order(fun_sample, manifold, mu), manifold, T, D, eta, maxiter, rng,
                      record_every, monitor, tol, method, 2)


def o2nc(fun: Callable, x0, jac: Callable, *, T: int = 100, D: float = 5e-4, eta: float = 5e-5,
         maxiter: int = 20_000, rng: RngLike = None, record_every: int | None = None) -> Result:
    """Euclidean O2NC (Cutkosky, Mehta and Orabona 2023), written out in flat-space form as the
    reference that RO2NC on :class:`Euclidean` must reproduce. Output: the average of the query
    points w_n over the window with the smallest average gradient (``x``)."""
    if not callable(fun) or not callable(jac):
        raise ValueError("fun and jac must be callable")
    x = np.array(check_vector(x0, "x0"), dtype=float)
    maxiter = check_int(maxiter, "maxiter", minimum=1)
    record_every = (max(maxiter // 200, 1) if record_every is None
                    else check_int(record_every, "record_every", minimum=1))
    T, D, eta, _, rng = _o2nc_checks(T, D, eta, None, rng)
    flat = Euclidean(x.size)
    delta, gsum, wsum = np.zeros_like(x), np.zeros_like(x), np.zeros_like(x)
    best_norm, best_avg, window_norms, last_norm = np.inf, x, [], np.nan
    trace = Trace("O2NC", meta=dict(T=T, D=D, eta=eta))
    trace.record(iteration=0, objective=float(fun(x)), grad_norm=last_norm, step_size=0.0, samples=0.0)
    for n in range(1, maxiter + 1):
        s = rng.random()
        w = x + s * delta
        x = x + delta
        g = jac(w, rng)
        delta = clip_norm(delta - eta * g, D, flat)
        gsum, wsum = gsum + g, wsum + w
        if n % T == 0:
            last_norm = flat.norm(gsum) / T
            window_norms.append(last_norm)
            if last_norm < best_norm:
                best_norm, best_avg = last_norm, wsum / T
            delta, gsum, wsum = np.zeros_like(x), np.zeros_like(x), np.zeros_like(x)
        if n % record_every == 0 or n == maxiter:
            trace.record(iteration=n, objective=float(fun(x)), grad_norm=last_norm,
                         step_size=flat.norm(delta), samples=float(n))
    return Result(x=best_avg, x_last=x, fun=float(fun(best_avg)), nit=maxiter, nfev=maxiter, njev=maxiter,
                  success=True, message="maxiter samples used", trace=trace,
                  window_norms=np.array(window_norms))


def _sgd_loop(fun, x, oracle, manifold, eta0, schedule, maxiter, rng, record_every, monitor, name,
              evals_per_step, keep_path=False) -> Result:
    trace = Trace(name, meta=dict(eta0=eta0, schedule=schedule))
    path = [x.copy()] if keep_path else None

    def log(n, x, step):
        extra = monitor(x) if monitor is not None else {}
        trace.record(iteration=n, objective=float(fun(x)), step_size=step, samples=float(n * evals_per_step),
                     **extra)

    log(0, x, np.nan)
    for k in range(1, maxiter + 1):
        eta = eta0 / math.sqrt(k) if schedule == "sqrt" else eta0
        g = oracle(x, rng)
        x = manifold.retract(x, -eta * g)
        if keep_path:
            path.append(x.copy())
        if k % record_every == 0 or k == maxiter:
            log(k, x, eta)
    extra = dict(path=np.array(path)) if keep_path else {}
    return Result(x=x, fun=float(fun(x)), nit=maxiter, nfev=maxiter * evals_per_step,
                  njev=maxiter if evals_per_step == 1 else 0, success=True, message="maxiter samples used",
                  trace=trace, **extra)


def _check_schedule(schedule: str) -> str:
    if schedule not in ("sqrt", "constant"):
        raise ValueError(f"schedule must be 'sqrt' or 'constant', got {schedule!r}")
    return schedule


def riemannian_subgradient(fun: Callable, x0, jac: Callable, *, manifold: Manifold, eta0: float = 0.3,
                           schedule: str = "sqrt", maxiter: int = 20_000, rng: RngLike = None,
                           record_every: int | None = None, monitor: Callable | None = None,
                           keep_path: bool = False, method: str | None = None) -> Result:
    """Riemannian stochastic subgradient method (baselines "RSM" and "RSGD"):
    x_{k+1} = R_{x_k}(-eta_k P_{x_k} xi_k) with eta_k = eta0/sqrt(k) (``schedule="sqrt"``, RSM)
    or eta_k = eta0 (``"constant"``, RSGD); ``jac(x, rng)`` a stochastic Euclidean subgradient."""
    manifold, x, maxiter, record_every = _common_checks(fun, x0, manifold, maxiter, record_every, monitor)
    if not callable(jac):
        raise ValueError("jac must be callable")
    eta0 = check_positive(eta0, "eta0")
    schedule = _check_schedule(schedule)
    name = method or ("RSM" if schedule == "sqrt" else "RSGD")
    return _sgd_loop(fun, x, _first_order(jac, manifold), manifold, eta0, schedule, maxiter, as_rng(rng),
                     record_every, monitor, name, 1, keep_path)


def zo_rsgd(fun: Callable, x0, fun_sample: Callable, *, manifold: Manifold, eta0: float = 0.01,
            mu: float = 1e-3, schedule: str = "constant", maxiter: int = 20_000, rng: RngLike = None,
            record_every: int | None = None, monitor: Callable | None = None,
            method: str = "ZO-RSGD") -> Result:
    """Riemannian zeroth-order SGD (baseline "ZO-RSGD"): the subgradient method with the two-point
    estimator :func:`zo_gradient` in place of a subgradient. Each step costs two function values."""
    manifold, x, maxiter, record_every = _common_checks(fun, x0, manifold, maxiter, record_every, monitor)
    if not callable(fun_sample):
        raise ValueError("fun_sample must be callable")
    eta0 = check_positive(eta0, "eta0")
    mu = check_positive(mu, "mu")
    schedule = _check_schedule(schedule)
    return _sgd_loop(fun, x, _zeroth_order(fun_sample, manifold, mu), manifold, eta0, schedule, maxiter,
                     as_rng(rng), record_every, monitor, method, 2)


# ---------------------------------------------------------------------------------- Goldstein


def min_norm_in_hull(G: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Minimum-norm point of the convex hull of the ROWS of ``G`` (k x m) and its simplex weights.

    Solved exactly with non-negative least squares: the minimiser of
    ||G^T lam||^2 + (1^T lam - 1)^2 over lam >= 0 is t * lam_star with lam_star the min-norm
    weights (the scale t does not change the direction), so lam / sum(lam) is the answer.
    """
    G = check_matrix(G, "G")
    k = G.shape[0]
    scale = max(float(np.max(np.abs(G))), 1e-300)
    A = np.vstack([G.T / scale, np.ones((1, k))])
    b = np.zeros(A.shape[0])
    b[-1] = 1.0
    lam, _ = nnls(A, b, maxiter=50 * k)
    total = lam.sum()
    lam = lam / total if total > 0 else np.full(k, 1.0 / k)
    return lam @ G, lam


@dataclass
class GoldsteinEstimate:
    """A Monte-Carlo estimate of the Riemannian Goldstein stationarity measure at ``x``.

    ``value`` = ||min-norm element of conv{Gamma_{y_j -> x} grad f(y_j)}||, with the y_j sampled
    in the geodesic ball of radius ``delta`` (``points``, x first); ``gradients`` the transported
    gradients (rows) and ``weights`` the convex weights of the min-norm element ``element``.
    """

    value: float
    element: np.ndarray
    weights: np.ndarray
    points: np.ndarray
    gradients: np.ndarray
    delta: float


def goldstein_estimate(x, subgrad: Callable, *, manifold: Sphere | Euclidean, delta: float,
                       n_samples: int = 200, rng: RngLike = None) -> GoldsteinEstimate:
    """Estimate the (delta, .)-Goldstein stationarity measure at x (the paper's metric).

    Samples ``n_samples`` points y = Exp_x(r u) with u a uniform unit tangent direction and
    r = delta U^{1/m} (uniform in the tangent ball, m = dim M), takes the Riemannian subgradients
    P_y(subgrad(y)), transports them to T_x M by projection and returns the norm of the
    min-norm point of their convex hull (a QP on the simplex, :func:`min_norm_in_hull`). The
    estimate is an upper bound on the true measure (which minimises over all such hulls) up to
    the sampling.
    """
    if not isinstance(manifold, (Sphere, Euclidean)):
        raise ValueError("manifold must be a Sphere or Euclidean instance (geodesic balls are sampled with Exp)")
    x = manifold.check_point(x, "x")
    if not callable(subgrad):
        raise ValueError("subgrad must be callable")
    delta = check_positive(delta, "delta")
    if isinstance(manifold, Sphere) and delta >= np.pi / 2:
        raise ValueError(f"delta must be < pi/2 on the sphere, got {delta}")
    n_samples = check_int(n_samples, "n_samples", minimum=1)
    rng = as_rng(rng)
    radii = delta * rng.random(n_samples) ** (1.0 / manifold.dim)
    dirs = rng.standard_normal((n_samples, manifold.n))
    if isinstance(manifold, Sphere):
        dirs -= np.outer(dirs @ x, x)
    dirs /= np.linalg.norm(dirs, axis=1, keepdims=True)
    points = [x] + [manifold.exp(x, r * u) for r, u in zip(radii, dirs)]
    grads = np.array([manifold.transport(y, x, manifold.proj(y, subgrad(y))) for y in points])
    element, weights = min_norm_in_hull(grads)
    return GoldsteinEstimate(float(np.linalg.norm(element)), element, weights, np.array(points), grads, delta)


# ---------------------------------------------------------------------------------- experiments

#: Settings of the d = 30 DPCP experiment (the card's recipe).
DELTA = 0.05
RO2NC_T = 100
RSM_ETA0 = 0.3          # RSM: eta_k = 0.3 / sqrt(k)
RSGD_ETA = 0.003        # RSGD: constant step
ZO_T = 50               # ZO-RO2NC window (D = DELTA / ZO_T)
ZO_RSGD_ETA = 0.003
ZO_MU = 1e-3
FIRST_ORDER = ("RO2NC", "RSM", "RSGD")
ZEROTH_ORDER = ("ZO-RO2NC", "ZO-RSGD")


@lru_cache(maxsize=2)
def dpcp_problem(d: int = 30, n: int = 600, seed: int = 0) -> DPCP:
    """The chapter's DPCP instance: 70% inliers on a hyperplane, 30% outliers, minibatch 8."""
    return make_dpcp(d, n, 0.7, batch=8, rng=seed)


def dpcp_start(seed: int) -> np.ndarray:
    """The random start of run ``seed`` (uniform on the sphere)."""
    return Sphere(dpcp_problem().d).random_point(1000 + seed)


@lru_cache(maxsize=64)
def dpcp_run(method: str, seed: int, samples: int = 20_000) -> Result:
    """One run of ``method`` on :func:`dpcp_problem` from the random start of ``seed``; first-order
    methods get ``samples`` subgradients, zeroth-order ones 2 x ``samples`` function values."""
    p = dpcp_problem()
    M = Sphere(p.d)
    x0 = dpcp_start(seed)

    def monitor(x):
        return {"angle": p.angle_deg(x)}

    common = dict(manifold=M, maxiter=samples, rng=seed, monitor=monitor)
    if method == "RO2NC":
        D = DELTA / RO2NC_T
        return ro2nc(p.fun, x0, p.stochastic_subgrad, T=RO2NC_T, D=D, eta=D / math.sqrt(RO2NC_T), **common)
    if method == "RSM":
        return riemannian_subgradient(p.fun, x0, p.stochastic_subgrad, eta0=RSM_ETA0, schedule="sqrt", **common)
    if method == "RSGD":
        return riemannian_subgradient(p.fun, x0, p.stochastic_subgrad, eta0=RSGD_ETA, schedule="constant",
                                      **common)
    if method == "ZO-RO2NC":
        D = DELTA / ZO_T
        return zo_ro2nc(p.fun, x0, p.fun_sample, T=ZO_T, D=D, eta=D / math.sqrt(ZO_T), mu=ZO_MU, **common)
    if method == "ZO-RSGD":
        return zo_rsgd(p.fun, x0, p.fun_sample, eta0=ZO_RSGD_ETA, mu=ZO_MU, schedule="constant", **common)
    raise ValueError(f"method must be one of {FIRST_ORDER + ZEROTH_ORDER}, got {method!r}")


def dpcp_convergence_traces(seed: int = 0) -> list[Trace]:
    """The five methods' traces of one seed, thinned for plotting."""
    return [dpcp_run(m, seed).trace for m in FIRST_ORDER + ZEROTH_ORDER]


def goldstein_of(x: np.ndarray, delta: float = DELTA, n_samples: int = 200, seed: int = 0) -> float:
    """Goldstein estimate of the DPCP objective at x."""
    p = dpcp_problem()
    return goldstein_estimate(x, p.subgrad, manifold=Sphere(p.d), delta=delta, n_samples=n_samples,
                              rng=seed).value


def goldstein_profile(angles_deg=(0.5, 1, 2, 5, 10, 20, 45, 70, 90), delta: float = DELTA) -> list[dict]:
    """Goldstein estimate and full Riemannian subgradient norm at points at given angles from b_star."""
    p = dpcp_problem()
    M = Sphere(p.d)
    u = M.proj(p.b_star, np.random.default_rng(1).standard_normal(p.d))
    u /= np.linalg.norm(u)
    rows = []
    for th in angles_deg:
        x = M.exp(p.b_star, math.radians(th) * u)
        rows.append({"angle to b* (deg)": float(th), "f(x)": p.fun(x),
                     "||grad f(x)||": M.norm(M.proj(x, p.subgrad(x))),
                     f"Goldstein estimate, delta={delta:g}": goldstein_of(x, delta)})
    return rows


def samples_to_stationarity(eps: float, seed: int, *, delta: float = DELTA, G: float = 0.2,
                            start_angle_deg: float = 60.0, max_samples: int = 40_000) -> float:
    """Stochastic subgradients RO2NC needs, with the theory's parameters T = ceil((G/eps)^2),
    D = delta/T, eta = D/(G sqrt T), until the reference point of a window is (delta, eps)-Goldstein
    stationary by :func:`goldstein_estimate` (checked at every window start). ``inf`` if never."""
    p = dpcp_problem()
    M = Sphere(p.d)
    rng = np.random.default_rng(2000 + seed)
    u = M.proj(p.b_star, rng.standard_normal(p.d))
    x0 = M.exp(p.b_star, math.radians(start_angle_deg) * u / np.linalg.norm(u))
    T = math.ceil((G / eps) ** 2)
    D = delta / T
    x, rng_run = x0, np.random.default_rng(seed)
    # The learner restarts at every window end, so running window by window with one generator is
    # the same run as a single call; it lets us stop at the first stationary window start.
    for k in range(0, max_samples // T + 1):
        if goldstein_estimate(x, p.subgrad, manifold=M, delta=delta, n_samples=60, rng=seed).value <= eps:
            return float(k * T)
        x = ro2nc(p.fun, x, p.stochastic_subgrad, manifold=M, T=T, D=D, eta=D / (G * math.sqrt(T)),
                  maxiter=T, rng=rng_run, record_every=T).x_last
    return float("inf")


# ---------------------------------------------------------------------------------- claims


@claim("13", "RO2NC and the subgradient baselines recover the DPCP normal; RO2NC's output is "
       "Goldstein-stationary and its sample count grows at most like eps^-3",
       expect="median angle to b* < 5 deg for RO2NC, RSM and RSGD (20k subgradients); RO2NC output's "
              "Goldstein estimate (delta=0.05) < 0.1; log-log slope of samples vs 1/eps <= 3 "
              "(eps = 0.04, 0.02, 0.01)",
       name="dpcp_first_order")
def claim_dpcp_first_order(fast: bool = False) -> Measured:
    seeds = range(3 if fast else 5)
    values: dict[str, float] = {}
    outputs = {m: [dpcp_run(m, s).x for s in seeds] for m in FIRST_ORDER}
    for m in FIRST_ORDER:
        values[f"{m} median angle (deg)"] = float(np.median([dpcp_problem().angle_deg(x) for x in outputs[m]]))
    gold = [goldstein_of(x) for x in outputs["RO2NC"]]
    gold0 = [goldstein_of(dpcp_start(s)) for s in seeds]
    values["RO2NC median Goldstein at output"] = float(np.median(gold))
    values["median Goldstein at start"] = float(np.median(gold0))
    eps_grid = (0.04, 0.02, 0.01)
    counts = [float(np.median([samples_to_stationarity(e, s) for s in seeds])) for e in eps_grid]
    for e, c in zip(eps_grid, counts):
        values[f"samples to eps={e:g}"] = c
    slope = loglog_slope(1.0 / np.array(eps_grid), np.array(counts)) if np.all(np.isfinite(counts)) else np.inf
    values["slope of samples vs 1/eps"] = slope
    holds = (all(values[f"{m} median angle (deg)"] < 5.0 for m in FIRST_ORDER)
             and values["RO2NC median Goldstein at output"] < 0.1 and slope <= 3.0)
    angle_text = ", ".join(f"{m} {values[m + ' median angle (deg)']:.2f}" for m in FIRST_ORDER)
    return Measured(values, holds=holds,
                    summary=f"angles {angle_text} deg; Goldstein {values['RO2NC median Goldstein at output']:.2g}; "
                            f"slope {slope:.2f}",
                    details=dict(eps=eps_grid, counts=counts))


@claim("13", "The zeroth-order methods recover the DPCP normal with 40k function values",
       expect="median angle to b* (3 seeds) < 5 deg for ZO-RO2NC (last window's point) and ZO-RSGD "
              "(20k two-point estimates = 40k function values)",
       name="dpcp_zeroth_order")
def claim_dpcp_zeroth_order(fast: bool = False) -> Measured:
    p = dpcp_problem()
    seeds = range(3)   # 3 seeds in both modes: each zeroth-order run costs 40k function values
    runs = {m: [dpcp_run(m, s) for s in seeds] for m in ZEROTH_ORDER}
    values = {
        "ZO-RO2NC median angle, last point (deg)": float(np.median([p.angle_deg(r.x_last) for r in runs["ZO-RO2NC"]])),
        "ZO-RO2NC median angle, best-certificate output (deg)":
            float(np.median([p.angle_deg(r.x) for r in runs["ZO-RO2NC"]])),
        "ZO-RSGD median angle (deg)": float(np.median([p.angle_deg(r.x) for r in runs["ZO-RSGD"]])),
    }
    holds = values["ZO-RO2NC median angle, last point (deg)"] < 5.0 and values["ZO-RSGD median angle (deg)"] < 5.0
    return Measured(values, holds=holds, summary="ZO angles: " + ", ".join(f"{k} {v:.1f}" for k, v in values.items()))


# ---------------------------------------------------------------------------------- pictures on S^2

#: The toy nonsmooth function on S^2 used by the pictures: f(x) = |x_1| + 0.5 |x_2| (minimisers +-e_3).
TOY_WEIGHTS = np.array([1.0, 0.5, 0.0])
TOY_NOISE = 0.5
PLAY_DELTA = 0.2
PLAY_STEPS = 400
PLAY_FRAMES = (5, 20, 40, 80, 120, 160, 200, 260, 320, 400)
PLAY_START = np.array([0.62, 0.55, 0.56]) / np.linalg.norm([0.62, 0.55, 0.56])


def toy_fun(x: np.ndarray) -> np.ndarray | float:
    """f(x) = |x_1| + 0.5 |x_2| (works on a stack of points)."""
    v = np.abs(x) @ TOY_WEIGHTS
    return float(v) if np.ndim(v) == 0 else v


def toy_subgrad(x: np.ndarray) -> np.ndarray:
    """A Euclidean subgradient (sign(x_1), 0.5 sign(x_2), 0)."""
    return np.sign(x) * TOY_WEIGHTS


def toy_stochastic_subgrad(x: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """The subgradient plus N(0, TOY_NOISE^2 I) noise: the stochastic oracle of the playground."""
    return toy_subgrad(x) + TOY_NOISE * rng.standard_normal(3)


def _sphere_surface(n: int = 36, opacity: float = 0.75) -> go.Surface:
    th, ph = np.meshgrid(np.linspace(0, np.pi, n), np.linspace(0, 2 * np.pi, 2 * n))
    X, Y, Z = np.sin(th) * np.cos(ph), np.sin(th) * np.sin(ph), np.cos(th)
    F = np.abs(X) + 0.5 * np.abs(Y)
    return go.Surface(x=X, y=Y, z=Z, surfacecolor=F, colorscale="Viridis", opacity=opacity, showscale=True,
                      colorbar=dict(title=dict(text="f(x)", side="right"), len=0.6), hoverinfo="skip",
                      name="f on the sphere", showlegend=False)


def _scene(fig: go.Figure, lim: float = 1.05, **camera) -> go.Figure:
    axis = dict(range=[-lim, lim], title="", showticklabels=False, showbackground=False)
    fig.update_layout(scene=dict(xaxis=dict(axis, title="x1"), yaxis=dict(axis, title="x2"),
                                 zaxis=dict(axis, title="x3"), aspectmode="cube",
                                 camera=dict(eye=camera or dict(x=1.5, y=1.2, z=0.9))),
                      margin=dict(l=0, r=0, t=70, b=110))
    return fig


def one_step_figure(step: float = 1.2, s: float = 0.6) -> go.Figure:
    """One RO2NC step drawn on S^2: the tangent step Delta at x_{n-1}, the retraction curve
    t -> R_x(t Delta), the random query point w_n = R_x(s Delta) and the new iterate x_n."""
    M = Sphere(3)
    x = PLAY_START
    delta = M.proj(x, np.array([-1.0, -0.2, 0.3]))
    delta *= step / np.linalg.norm(delta)
    ts = np.linspace(0, 1, 40)
    curve = np.array([M.retract(x, t * delta) for t in ts])
    chord = x + ts[:, None] * delta
    curve *= 1.01   # just above the surface
    w, xn = 1.01 * M.retract(x, s * delta), 1.01 * M.retract(x, delta)
    data = [_sphere_surface(opacity=0.45),
            go.Scatter3d(x=chord[:, 0], y=chord[:, 1], z=chord[:, 2], mode="lines", name="tangent step x + t Delta",
                         line=dict(color="#444", width=5, dash="dash")),
            go.Scatter3d(x=curve[:, 0], y=curve[:, 1], z=curve[:, 2], mode="lines", name="retraction curve R_x(t Delta)",
                         line=dict(color=color_for(0), width=8)),
            go.Scatter3d(x=[x[0]], y=[x[1]], z=[x[2]], mode="markers+text", text=["x_{n-1}"], name="x_{n-1}",
                         marker=dict(size=6, color="black")),
            go.Scatter3d(x=[w[0]], y=[w[1]], z=[w[2]], mode="markers+text", text=[f"w_n (s={s:g})"],
                         name="query point w_n", marker=dict(size=7, color=color_for(1))),
            go.Scatter3d(x=[xn[0]], y=[xn[1]], z=[xn[2]], mode="markers+text", text=["x_n"], name="x_n",
                         marker=dict(size=6, color=color_for(2)))]
    fig = go.Figure(data)
    base_layout(fig, title="One RO2NC step: the gradient is queried at a random point of the retraction curve",
                height=520)
    side = np.cross(x, delta / step)       # look along the normal of the plane of x and Delta
    eye = 1.2 * side + 0.5 * x
    return _scene(fig, lim=1.6, x=float(eye[0]), y=float(eye[1]), z=float(eye[2]))


@lru_cache(maxsize=64)
def playground_runs(T: int = 10, eta0: float = 0.1) -> tuple[np.ndarray, np.ndarray]:
    """Paths of RO2NC (window T, D = 0.2/T, eta = D/sqrt T) and RSM (eta0/sqrt k) on the toy f."""
    M = Sphere(3)
    D = PLAY_DELTA / T
    r = ro2nc(toy_fun, PLAY_START, toy_stochastic_subgrad, manifold=M, T=T, D=D, eta=D / math.sqrt(T),
              maxiter=PLAY_STEPS, rng=0, keep_path=True, record_every=PLAY_STEPS)
    s = riemannian_subgradient(toy_fun, PLAY_START, toy_stochastic_subgrad, manifold=M, eta0=eta0,
                               maxiter=PLAY_STEPS, rng=0, keep_path=True, record_every=PLAY_STEPS)
    return r.path, s.path


def _lifted(p: np.ndarray) -> np.ndarray:
    return 1.01 * p  # just above the surface so the lines stay visible


def playground_traces(n: int, T: int = 10, eta0: float = 0.1) -> list:
    """Both paths up to step n, the current points, and RO2NC's current window start x_ref."""
    ro, rs = playground_runs(T, eta0)
    a, b = _lifted(ro[: n + 1]), _lifted(rs[: n + 1])
    ref = _lifted(ro[(n // T) * T])
    return [
        go.Scatter3d(x=a[:, 0], y=a[:, 1], z=a[:, 2], mode="lines", name=f"RO2NC (T={T}, delta={PLAY_DELTA:g})",
                     line=dict(color=color_for(0), width=6)),
        go.Scatter3d(x=b[:, 0], y=b[:, 1], z=b[:, 2], mode="lines", name=f"RSM (eta_k = {eta0:g}/sqrt k)",
                     line=dict(color=color_for(1), width=4)),
        go.Scatter3d(x=[a[-1, 0], b[-1, 0]], y=[a[-1, 1], b[-1, 1]], z=[a[-1, 2], b[-1, 2]], mode="markers",
                     name=f"iterates at step {n}", marker=dict(size=5, color=[color_for(0), color_for(1)])),
        go.Scatter3d(x=[ref[0]], y=[ref[1]], z=[ref[2]], mode="markers", name="RO2NC window start x_ref",
                     marker=dict(size=6, color="white", line=dict(color="black", width=2), symbol="diamond")),
    ]


def _playground_layout(fig: go.Figure) -> go.Figure:
    star = _lifted(np.array([[0, 0, 1.0], [0, 0, -1.0]]))
    fig.add_trace(go.Scatter3d(x=star[:, 0], y=star[:, 1], z=star[:, 2], mode="markers", name="minimisers +-e3",
                               marker=dict(size=6, color="gold", symbol="x")))
    fig.add_trace(_sphere_surface())
    return _scene(fig, x=1.3, y=1.3, z=1.1)


def playground_slider_figure() -> go.Figure:
    """Static twin of the sphere playground: one frame per step count."""
    steps = [SliderStep(f"{n}", playground_traces(n)) for n in PLAY_FRAMES]
    fig = slider_figure(steps, slider_label="stochastic subgradients used", active=len(steps) - 1,
                        fixed_axes=False, height=600,
                        title="f(x) = |x1| + 0.5|x2| on the sphere: RO2NC and RSM with noisy subgradients")
    return _playground_layout(fig)


@lru_cache(maxsize=1)
def _playground_frame() -> tuple[list, dict]:
    """Static parts of the live playground (built once: plotly validation is the slow part)."""
    fig = base_layout(go.Figure(), height=600)
    fig = _playground_layout(fig)
    return list(fig.data), fig.layout.to_plotly_json()


def playground_figure(n: int = 400, T: int = 10, eta0: float = 0.1) -> go.Figure:
    """Live sphere playground (same traces as :func:`playground_slider_figure`)."""
    static, layout = _playground_frame()
    title = dict(layout.get("title", {}), text=f"RO2NC (T={T}) and RSM (eta0={eta0:g}) after {n} noisy subgradients",
                 x=0.01, y=0.98)
    return go.Figure(data=playground_traces(n, T, eta0) + static, layout=dict(layout, title=title))


# ---------------------------------------------------------------------------------- Goldstein picture

GOLD_OFFSET = np.array([0.06, 0.12])   # the point's position: 0.06 from the kink x1 = 0, 0.12 from x2 = 0
GOLD_DELTAS = (0.02, 0.04, 0.08, 0.1, 0.14, 0.2, 0.3)


def _cross2(a: np.ndarray, b: np.ndarray) -> float:
    return float(a[0] * b[1] - a[1] * b[0])


def _hull_2d(points: np.ndarray) -> np.ndarray:
    """Convex hull of 2-D points as a closed polygon (Andrew's monotone chain; degenerate ok)."""
    pts = np.unique(np.round(points, 12), axis=0)
    if len(pts) <= 2:
        return np.vstack([pts, pts[:1]])

    def half(seq):
        out: list = []
        for p in seq:
            while len(out) >= 2 and _cross2(out[-1] - out[-2], p - out[-2]) <= 0:
                out.pop()
            out.append(p)
        return out

    lower, upper = half(pts), half(pts[::-1])
    poly = np.array(lower[:-1] + upper[:-1])
    return np.vstack([poly, poly[:1]])


def _toy_point() -> tuple[np.ndarray, np.ndarray]:
    """The point x = Exp_{e3}(0.06 e1 + 0.12 e2) and an orthonormal basis (rows) of T_x S^2."""
    M = Sphere(3)
    x = M.exp(np.array([0.0, 0.0, 1.0]), np.array([GOLD_OFFSET[0], GOLD_OFFSET[1], 0.0]))
    t1 = M.proj(x, np.array([1.0, 0.0, 0.0]))
    t1 /= np.linalg.norm(t1)
    t2 = np.cross(x, t1)
    return x, np.array([t1, t2])


@lru_cache(maxsize=1)
def _kink_curves() -> np.ndarray:
    """The kinks {x1 = 0} and {x2 = 0} near the picture's point, in its tangent coordinates."""
    x, basis = _toy_point()
    u = np.linspace(-0.45, 0.45, 40)
    e3 = np.array([0, 0, 1.0])
    kink1 = np.array([Sphere(3).exp(e3, np.array([0, t, 0.0])) for t in u])
    kink2 = np.array([Sphere(3).exp(e3, np.array([t, 0, 0.0])) for t in u])
    return np.vstack([(kink1 - x) @ basis.T, [[np.nan, np.nan]], (kink2 - x) @ basis.T])


@lru_cache(maxsize=64)
def toy_goldstein(delta: float, n_samples: int = 200) -> GoldsteinEstimate:
    """Goldstein estimate of the toy f at the picture's point (cached for the explorer)."""
    x, _ = _toy_point()
    return goldstein_estimate(x, toy_subgrad, manifold=Sphere(3), delta=delta, n_samples=n_samples, rng=0)


def goldstein_traces(delta: float, n_samples: int = 200) -> tuple[list, dict]:
    """Left: the geodesic delta-ball around x in tangent coordinates with the kinks; right: the
    transported subgradients, their convex hull and the min-norm element."""
    est = toy_goldstein(delta, n_samples)
    x, basis = _toy_point()
    pts = (est.points - x) @ basis.T
    grads = est.gradients @ basis.T
    elem = est.element @ basis.T
    pattern = np.sign(est.points[:, 0]) + 2 * np.sign(est.points[:, 1])
    ang = np.linspace(0, 2 * np.pi, 60)
    # The kinks {x1 = 0} and {x2 = 0} near x, drawn in the same tangent coordinates.
    kinks = _kink_curves()
    hull = _hull_2d(grads)
    traces = [
        go.Scatter(x=kinks[:, 0], y=kinks[:, 1], mode="lines", name="kinks x1 = 0 and x2 = 0",
                   line=dict(color="#999", dash="dash")),
        go.Scatter(x=delta * np.cos(ang), y=delta * np.sin(ang), mode="lines", name="geodesic delta-ball",
                   line=dict(color="black")),
        go.Scatter(x=pts[:, 0], y=pts[:, 1], mode="markers", name="sampled points y_j",
                   marker=dict(size=3, color=pattern, colorscale="Portland", cmin=-3, cmax=3)),
        go.Scatter(x=grads[:, 0], y=grads[:, 1], mode="markers", name="transported subgradients",
                   xaxis="x2", yaxis="y2", marker=dict(size=8, color=color_for(0))),
        go.Scatter(x=hull[:, 0], y=hull[:, 1], mode="lines", fill="toself", name="convex hull",
                   xaxis="x2", yaxis="y2", line=dict(color=color_for(0)), fillcolor="rgba(31,119,180,0.15)"),
        go.Scatter(x=[0, elem[0]], y=[0, elem[1]], mode="lines+markers", name="min-norm element",
                   xaxis="x2", yaxis="y2", line=dict(color=color_for(1), width=4), marker=dict(size=[4, 10])),
    ]
    note = dict(text=f"Goldstein estimate at delta = {delta:g}: <b>{est.value:.3f}</b>", x=0.5, y=-0.2,
                xref="paper", yref="paper", showarrow=False, font=dict(size=14))
    return traces, {"annotations": [note]}


def _goldstein_axes(fig: go.Figure) -> go.Figure:
    fig.update_layout(xaxis=dict(domain=[0, 0.44], range=[-0.33, 0.33], title="tangent coordinate 1"),
                      yaxis=dict(range=[-0.33, 0.33], scaleanchor="x", title="tangent coordinate 2"),
                      xaxis2=dict(domain=[0.56, 1], anchor="y2", range=[-1.3, 1.3], title="component 1"),
                      yaxis2=dict(anchor="x2", range=[-1.3, 1.3], scaleanchor="x2", title="component 2"),
                      margin=dict(b=150))
    return fig


def goldstein_slider_figure() -> go.Figure:
    """Static twin of the Goldstein-ball explorer: one frame per delta."""
    steps = []
    for d in GOLD_DELTAS:
        traces, layout = goldstein_traces(d)
        steps.append(SliderStep(f"{d:g}", traces, layout))
    fig = slider_figure(steps, slider_label="Goldstein radius delta (rad)", active=1, fixed_axes=False,
                        height=520, title="Left: the delta-ball around x (tangent coordinates). "
                                          "Right: the subgradients found in it")
    return _goldstein_axes(fig)


@lru_cache(maxsize=1)
def _goldstein_layout() -> dict:
    return _goldstein_axes(base_layout(go.Figure(), height=520)).layout.to_plotly_json()


def goldstein_figure(delta: float = 0.04, n_samples: int = 200) -> go.Figure:
    """Live Goldstein-ball explorer (same traces as :func:`goldstein_slider_figure`)."""
    traces, extra = goldstein_traces(delta, n_samples)
    title = dict(text=f"Goldstein ball, delta = {delta:g}, {n_samples} samples", x=0.01, y=0.98)
    return go.Figure(data=traces, layout=dict(_goldstein_layout(), title=title, **extra))


EXPLORER_PLAYGROUND = Explorer("13", "sphere_playground", playground_figure, {
    "n": Slider("subgradients used", list(PLAY_FRAMES), 400),
    "T": Slider("RO2NC window T", [5, 10, 20, 40], 10),
    "eta0": Slider("RSM eta0", [0.03, 0.1, 0.3, 1.0], 0.1),
})

EXPLORER_GOLDSTEIN = Explorer("13", "goldstein_ball", goldstein_figure, {
    "delta": Slider("Goldstein radius delta", list(GOLD_DELTAS), 0.04),
    "n_samples": Slider("sampled points", [5, 20, 200], 200),
})
