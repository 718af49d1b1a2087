"""Chapter 13: nonsmooth nonconvex stochastic optimization on Riemannian manifolds (RO2NC).

Sahinoglu, Sun and Shahrampour (NeurIPS 2025) adapt the Euclidean *online-to-nonconvex
conversion* (O2NC, Cutkosky, Mehta and Orabona 2023) to embedded submanifolds: retractions keep
the iterates on the manifold and projection-based vector transport moves gradients and the online
learner's state between tangent spaces. The method finds a Riemannian (delta, epsilon)-Goldstein
stationary point with O(eps^-3 delta^-1) stochastic (sub)gradients; ZO-RO2NC does the same with
function values only.

No official code was found, and only the paper's abstract and introduction could be read: the
pseudo-code here is Euclidean O2NC with the Riemannian substitutions the paper describes. The
output rule, the parameter rule and the zeroth-order estimator are that reconstruction's choices.

This module holds the methods and what they need: manifolds (:class:`Sphere`, :class:`Stiefel`,
:class:`Euclidean`), the dual principal component pursuit problem (:class:`DPCP`,
:func:`make_dpcp`), RO2NC and ZO-RO2NC (:func:`ro2nc`, :func:`zo_ro2nc`, and the flat-space
reference :func:`o2nc`), the baselines (:func:`riemannian_subgradient`, :func:`zo_rsgd`), the
theory's parameter rule (:func:`theory_parameters`) and the Goldstein stationarity estimator
(:func:`goldstein_estimate`). The book's experiments, figures and claims are in
:mod:`optbook.geometry.riemannian_nonsmooth_chapter`.

The manifolds' operations (``proj``, ``retract``, ``transport``, ...) and the problem's oracles
run inside every step, so they do not re-check their arguments; the public entry points check
theirs once (a start off the manifold, a non-finite value, a bad parameter: ``ValueError``).
"""
from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from scipy.optimize import nnls

from ..core import Result, RngLike, Trace, as_rng, check_int, check_matrix, check_positive, check_vector

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
        ny = math.sqrt(float(y @ y))
        if not ny > 0.0:  # only a non-tangent v = -x (or a NaN) gets here
            raise ValueError("the sphere's retraction needs x + v != 0 (v must be a finite tangent vector)")
        return y / ny

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
        """Geodesic (great-circle) distance, as atan2(sin, cos): arccos(x.y) would lose every
        digit below about 1e-8 rad, where x.y rounds to 1."""
        c = float(x @ y)
        return math.atan2(float(np.linalg.norm(y - c * x)), c)

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


def _clip(v: np.ndarray, radius: float, manifold: Manifold) -> np.ndarray:
    nv = manifold.norm(v)
    return v * (radius / nv) if nv > radius else v


def clip_norm(v, radius: float, manifold: Manifold) -> np.ndarray:
    """Project ``v`` onto the ball of radius ``radius`` >= 0 (O2NC's clip_D)."""
    manifold = _check_manifold(manifold)
    radius = check_positive(radius, "radius", allow_zero=True)
    try:
        v = np.asarray(v, dtype=float)
    except (TypeError, ValueError) as err:
        raise ValueError("v must be an array of numbers") from err
    if v.shape != manifold.shape:
        raise ValueError(f"v must have shape {manifold.shape}, got {v.shape}")
    if not np.isfinite(v).all():
        raise ValueError("v must be finite (found NaN or inf)")
    return _clip(v, radius, manifold)


def theory_parameters(eps: float, delta: float, G: float) -> dict[str, float]:
    """O2NC's parameter rule for a target (delta, eps): window T = ceil((G/eps)^2), step bound
    D = delta/T (so a window never leaves a delta-ball) and learner step eta = D/(G sqrt T).

    ``G`` bounds the stochastic gradients' norm; with the window average's noise at most
    G/sqrt(T) <= eps, a small window average certifies (delta, eps)-stationarity.
    """
    eps, delta, G = check_positive(eps, "eps"), check_positive(delta, "delta"), check_positive(G, "G")
    T = math.ceil((G / eps) ** 2 - 1e-9)   # (0.1/0.01)^2 is 100.00000000000001 in floating point
    D = delta / T
    return {"T": T, "D": D, "eta": D / (G * math.sqrt(T))}


# ---------------------------------------------------------------------------------- the problem


@dataclass
class DPCP:
    """Dual principal component pursuit: f(b) = (1/N) sum_i |y_i^T b| on the unit sphere.

    The rows ``Y`` (N x d) are the data; inliers lie in the hyperplane orthogonal to the unit
    vector ``b_star``, so +-``b_star`` (the hyperplane's normal) are the minimizers under standard
    conditions. The objective is nonsmooth (a kink wherever some y_i^T b = 0) and nonconvex on
    the sphere. The stochastic oracles draw minibatches of ``batch`` rows.
    """

    Y: np.ndarray
    b_star: np.ndarray
    batch: int = 8

    def __post_init__(self) -> None:
        self.Y = check_matrix(self.Y, "Y")
        if self.Y.shape[1] < 2:
            raise ValueError(f"Y must have at least 2 columns (the sphere S^(d-1), d >= 2), got {self.Y.shape[1]}")
        self.b_star = Sphere(self.d).check_point(self.b_star, "b_star")
        self.batch = check_int(self.batch, "batch", minimum=1)

    @property
    def d(self) -> int:
        return self.Y.shape[1]

    def _points(self, b, name: str = "b") -> np.ndarray:
        b = np.asarray(b, dtype=float)
        if b.ndim not in (1, 2) or b.shape[-1] != self.d:
            raise ValueError(f"{name} must be a point of R^{self.d} or a (k, {self.d}) stack, got shape {b.shape}")
        if not np.isfinite(b).all():
            raise ValueError(f"{name} must be finite (found NaN or inf)")
        return b

    def fun(self, b) -> np.ndarray | float:
        """f(b); ``b`` may be a (k, d) stack (returns k values)."""
        v = np.mean(np.abs(self._points(b) @ self.Y.T), axis=-1)
        return float(v) if np.ndim(v) == 0 else v

    def subgrad(self, b) -> np.ndarray:
        """A Euclidean subgradient (1/N) Y^T sign(Y b) (sign(0) = 0 at a kink); a (k, d) stack of
        points gives a (k, d) stack of subgradients."""
        return np.sign(self._points(b) @ self.Y.T) @ self.Y / self.Y.shape[0]

    def _draw(self, rng: np.random.Generator) -> np.ndarray:
        # ``batch`` row indices, uniform with replacement (floor(N U), U in [0, 1)): a quarter of
        # the cost of rng.integers, which matters at one draw per step.
        return (rng.random(self.batch) * self.Y.shape[0]).astype(np.intp)

    def stochastic_subgrad(self, b: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """The subgradient of a minibatch of ``batch`` rows drawn uniformly with replacement
        (the methods' oracle: called at every step, so ``b`` is not re-checked)."""
        rows = self.Y[self._draw(rng)]
        return np.sign(rows @ b) @ rows / self.batch

    def fun_sample(self, B: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """Minibatch objective at every row of the stack ``B`` with ONE shared minibatch (the
        two-point zeroth-order estimator needs the same sample at both points)."""
        rows = self.Y[self._draw(rng)]
        return np.abs(B @ rows.T).sum(axis=-1) / self.batch

    def angle_deg(self, b) -> float:
        """Principal angle between span(b) and span(b_star), in degrees (atan2: accurate down to
        the smallest angles)."""
        b = self._points(b)
        if b.ndim != 1:
            raise ValueError("b must be one point")
        c = abs(float(b @ self.b_star))
        s = float(np.linalg.norm(b - (b @ self.b_star) * self.b_star))
        if c == 0.0 and s == 0.0:
            raise ValueError("b must not be zero")
        return math.degrees(math.atan2(s, c))


def make_dpcp(d: int = 30, n: int = 600, inlier_fraction: float = 0.7, *, batch: int = 8,
              rng: RngLike = None) -> DPCP:
    """Inliers: unit vectors uniform in the hyperplane b_star^perp; outliers: uniform on the sphere."""
    d = check_int(d, "d", minimum=2)
    n = check_int(n, "n", minimum=2)
    batch = check_int(batch, "batch", minimum=1)
    if isinstance(inlier_fraction, bool) or not isinstance(inlier_fraction, (int, float)) \
            or not 0.0 <= inlier_fraction <= 1.0:
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


def _zo_gradient(fun_sample: Callable, x: np.ndarray, manifold: Manifold, mu: float,
                 rng: np.random.Generator) -> np.ndarray:
    u = manifold.proj(x, rng.standard_normal(manifold.shape))
    u = u / manifold.norm(u)
    vals = fun_sample(np.array([manifold.retract(x, mu * u), manifold.retract(x, -mu * u)]), rng)
    return (manifold.dim * (vals[0] - vals[1]) / (2.0 * mu)) * u


def zo_gradient(fun_sample: Callable, x, manifold: Manifold, mu: float, rng: RngLike = None) -> np.ndarray:
    """Two-point zeroth-order Riemannian gradient estimate (ZO-RO2NC's oracle; reconstruction).

    u = P_x xi / ||P_x xi|| with xi ~ N(0, I), and
    g = m/(2 mu) [f(R_x(mu u)) - f(R_x(-mu u))] u with m = dim M, both values taken with one
    shared sample by ``fun_sample(stack_of_two_points, rng)``. It lies in T_x M.
    """
    if not callable(fun_sample):
        raise ValueError("fun_sample must be callable")
    manifold = _check_manifold(manifold)
    x = manifold.check_point(x, "x")
    mu = check_positive(mu, "mu")
    return _zo_gradient(fun_sample, x, manifold, mu, as_rng(rng))


def _first_order(jac: Callable, manifold: Manifold) -> Callable:
    def oracle(w, rng):
        return manifold.proj(w, jac(w, rng))
    return oracle


def _zeroth_order(fun_sample: Callable, manifold: Manifold, mu: float) -> Callable:
    def oracle(w, rng):
        return _zo_gradient(fun_sample, w, manifold, mu, rng)
    return oracle


# ---------------------------------------------------------------------------------- methods


def _common_checks(fun, x0, manifold, maxiter, record_every, monitor, callback):
    if not callable(fun):
        raise ValueError("fun must be callable")
    manifold = _check_manifold(manifold)
    x = manifold.check_point(x0, "x0")
    maxiter = check_int(maxiter, "maxiter", minimum=1)
    record_every = (max(maxiter // 200, 1) if record_every is None
                    else check_int(record_every, "record_every", minimum=1))
    if monitor is not None and not callable(monitor):
        raise ValueError("monitor must be callable or None")
    if callback is not None and not callable(callback):
        raise ValueError("callback must be callable or None")
    return manifold, np.array(x, dtype=float), maxiter, record_every


def _o2nc_loop(fun, x0, oracle, manifold, T, D, eta, maxiter, rng, record_every, monitor, callback, tol,
               name, evals_per_step, keep_path=False) -> Result:
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
        delta = _clip(manifold.transport(x, x_new, delta - eta * g), D, manifold)
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
            if callback is not None and n < n_done:
                try:
                    callback(x.copy())
                except StopIteration:
                    n_done, message = n, "stopped by callback"
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
          record_every: int | None = None, monitor: Callable | None = None,
          callback: Callable | None = None, keep_path: bool = False, method: str = "RO2NC") -> Result:
    """Riemannian Online-to-NonConvex conversion (RO2NC, the paper's Algorithm; reconstruction).

    Each step draws s ~ U[0, 1], queries the stochastic subgradient at the random point
    w_n = R_{x_{n-1}}(s Delta) of the retraction curve, moves x_n = R_{x_{n-1}}(Delta), and updates
    the online learner (projected online gradient descent on the linear losses <g_n, .>)
    Delta <- clip_D(P_{x_n} Delta - eta P_{x_n} g_n), transporting its state to the new tangent
    space. Every ``T`` steps ("a window") the learner is reset, and the average of the window's
    gradients transported to the window's first point x_ref is recorded; its norm certifies
    (delta, eps)-Goldstein stationarity at x_ref with delta = T D (up to its noise, G/sqrt(T)).

    Parameters
    ----------
    fun : callable
        f(x), the full objective (only logged in the trace).
    x0 : array
        Start, a point of ``manifold``.
    jac : callable
        ``jac(x, rng)``: a stochastic Euclidean subgradient at x (projected to T_x M here).
    manifold : Sphere | Stiefel | Euclidean
    T, D, eta : window length, step-length bound (the learner's ball radius), learner step size;
        :func:`theory_parameters` gives the theory's choice for a target (delta, eps).
    maxiter : number of stochastic subgradients (samples) N.
    tol : stop at the first window whose average norm is <= tol (default: use all samples).
    monitor : callable, optional
        ``monitor(x) -> dict`` of extra series recorded with the trace (e.g. an angle).
    callback : callable, optional
        ``callback(x)`` at every recorded step; raising ``StopIteration`` ends the run there
        (as in ``scipy.optimize.minimize``).
    keep_path : keep every x_n and w_n (``path``, ``queries``) in the result (for pictures).

    Returns
    -------
    Result
        ``x`` is x_ref of the window with the smallest certificate (the output rule: a manifold has
        no average point); ``x_last`` the last iterate; ``window_norms`` every certificate.
    """
    manifold, x, maxiter, record_every = _common_checks(fun, x0, manifold, maxiter, record_every, monitor,
                                                        callback)
    if not callable(jac):
        raise ValueError("jac must be callable")
    T, D, eta, tol, rng = _o2nc_checks(T, D, eta, tol, rng)
    return _o2nc_loop(fun, x, _first_order(jac, manifold), manifold, T, D, eta, maxiter, rng,
                      record_every, monitor, callback, tol, method, 1, keep_path)


def zo_ro2nc(fun: Callable, x0, fun_sample: Callable, *, manifold: Manifold, T: int = 100,
             D: float = 5e-4, eta: float = 5e-5, mu: float = 1e-3, maxiter: int = 20_000,
             tol: float | None = None, rng: RngLike = None, record_every: int | None = None,
             monitor: Callable | None = None, callback: Callable | None = None,
             method: str = "ZO-RO2NC") -> Result:
    """Zeroth-order RO2NC (ZO-RO2NC; reconstruction): :func:`ro2nc` with the two-point estimator
    :func:`zo_gradient` (smoothing radius ``mu``, which should be much smaller than delta = T D)
    instead of a subgradient. ``fun_sample(points, rng)`` returns the stochastic objective at each
    of a stack of points with one shared sample. Each step costs two function values."""
    manifold, x, maxiter, record_every = _common_checks(fun, x0, manifold, maxiter, record_every, monitor,
                                                        callback)
    if not callable(fun_sample):
        raise ValueError("fun_sample must be callable")
    mu = check_positive(mu, "mu")
    T, D, eta, tol, rng = _o2nc_checks(T, D, eta, tol, rng)
    return _o2nc_loop(fun, x, _zeroth_order(fun_sample, manifold, mu), manifold, T, D, eta, maxiter, rng,
                      record_every, monitor, callback, tol, method, 2)


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
        delta = _clip(delta - eta * g, D, flat)
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


def _sgd_loop(fun, x, oracle, manifold, eta0, schedule, maxiter, rng, record_every, monitor, callback, name,
              evals_per_step, keep_path=False) -> Result:
    trace = Trace(name, meta=dict(eta0=eta0, schedule=schedule))
    path = [x.copy()] if keep_path else None

    def log(n, x, step):
        extra = monitor(x) if monitor is not None else {}
        trace.record(iteration=n, objective=float(fun(x)), step_size=step, samples=float(n * evals_per_step),
                     **extra)

    log(0, x, np.nan)
    n_done, message = maxiter, "maxiter samples used"
    for k in range(1, maxiter + 1):
        eta = eta0 / math.sqrt(k) if schedule == "sqrt" else eta0
        g = oracle(x, rng)
        x = manifold.retract(x, -eta * g)
        if keep_path:
            path.append(x.copy())
        if k % record_every == 0 or k == maxiter:
            log(k, x, eta)
            if callback is not None and k < maxiter:
                try:
                    callback(x.copy())
                except StopIteration:
                    n_done, message = k, "stopped by callback"
                    break
    extra = dict(path=np.array(path)) if keep_path else {}
    return Result(x=x, fun=float(fun(x)), nit=n_done, nfev=n_done * evals_per_step,
                  njev=n_done if evals_per_step == 1 else 0, success=True, message=message,
                  trace=trace, **extra)


def _check_schedule(schedule: str) -> str:
    if schedule not in ("sqrt", "constant"):
        raise ValueError(f"schedule must be 'sqrt' or 'constant', got {schedule!r}")
    return schedule


def riemannian_subgradient(fun: Callable, x0, jac: Callable, *, manifold: Manifold, eta0: float = 0.3,
                           schedule: str = "sqrt", maxiter: int = 20_000, rng: RngLike = None,
                           record_every: int | None = None, monitor: Callable | None = None,
                           callback: Callable | None = None, keep_path: bool = False,
                           method: str | None = None) -> Result:
    """Riemannian stochastic subgradient method (baselines "RSM" and "RSGD"):
    x_{k+1} = R_{x_k}(-eta_k P_{x_k} xi_k) with eta_k = eta0/sqrt(k) (``schedule="sqrt"``, RSM)
    or eta_k = eta0 (``"constant"``, RSGD); ``jac(x, rng)`` a stochastic Euclidean subgradient.
    ``monitor`` and ``callback`` as in :func:`ro2nc`."""
    manifold, x, maxiter, record_every = _common_checks(fun, x0, manifold, maxiter, record_every, monitor,
                                                        callback)
    if not callable(jac):
        raise ValueError("jac must be callable")
    eta0 = check_positive(eta0, "eta0")
    schedule = _check_schedule(schedule)
    name = method or ("RSM" if schedule == "sqrt" else "RSGD")
    return _sgd_loop(fun, x, _first_order(jac, manifold), manifold, eta0, schedule, maxiter, as_rng(rng),
                     record_every, monitor, callback, name, 1, keep_path)


def zo_rsgd(fun: Callable, x0, fun_sample: Callable, *, manifold: Manifold, eta0: float = 0.01,
            mu: float = 1e-3, schedule: str = "constant", maxiter: int = 20_000, rng: RngLike = None,
            record_every: int | None = None, monitor: Callable | None = None,
            callback: Callable | None = None, method: str = "ZO-RSGD") -> Result:
    """Riemannian zeroth-order SGD (baseline "ZO-RSGD"): the subgradient method with the two-point
    estimator :func:`zo_gradient` in place of a subgradient. Each step costs two function values."""
    manifold, x, maxiter, record_every = _common_checks(fun, x0, manifold, maxiter, record_every, monitor,
                                                        callback)
    if not callable(fun_sample):
        raise ValueError("fun_sample must be callable")
    eta0 = check_positive(eta0, "eta0")
    mu = check_positive(mu, "mu")
    schedule = _check_schedule(schedule)
    return _sgd_loop(fun, x, _zeroth_order(fun_sample, manifold, mu), manifold, eta0, schedule, maxiter,
                     as_rng(rng), record_every, monitor, callback, method, 2)


# ---------------------------------------------------------------------------------- Goldstein


def min_norm_in_hull(G) -> tuple[np.ndarray, np.ndarray]:
    """Minimum-norm point of the convex hull of the ROWS of ``G`` (k x m) and its simplex weights.

    Solved exactly with non-negative least squares: the minimiser of
    ||G^T lam||^2 + (1^T lam - 1)^2 over lam >= 0 is t * lam_star with lam_star the min-norm
    weights (the scale t does not change the direction), so lam / sum(lam) is the answer. ``G``
    is divided by its largest entry first, so the answer does not depend on its scale; a point
    shorter than 1e-12 of that scale is rounding (the hull contains the origin) and returned as 0.
    """
    G = check_matrix(G, "G")
    k = G.shape[0]
    scale = float(np.max(np.abs(G)))
    if scale == 0.0:
        return np.zeros(G.shape[1]), np.full(k, 1.0 / k)
    A = np.vstack([G.T / scale, np.ones((1, k))])
    b = np.zeros(A.shape[0])
    b[-1] = 1.0
    lam, _ = nnls(A, b, maxiter=50 * k)
    total = lam.sum()
    lam = lam / total if total > 0 else np.full(k, 1.0 / k)
    point = lam @ G
    if np.linalg.norm(point) <= 1e-12 * scale:
        point = np.zeros_like(point)
    return point, lam


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
                       n_samples: int = 200, rng: RngLike = None, vectorized: bool = False) -> GoldsteinEstimate:
    """Estimate the (delta, .)-Goldstein stationarity measure at x (the paper's metric).

    Samples ``n_samples`` points y = Exp_x(r u) with u a uniform unit tangent direction and
    r = delta U^{1/m} (uniform in the tangent ball, m = dim M), takes the Riemannian subgradients
    P_y(subgrad(y)), transports them to T_x M by projection and returns the norm of the
    min-norm point of their convex hull (a QP on the simplex, :func:`min_norm_in_hull`). The
    estimate is an upper bound on the true measure (which minimises over all such hulls) up to
    the sampling. With ``vectorized=True``, ``subgrad`` takes the (k, n) stack of points at once
    and returns a (k, n) stack.
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
    sphere = isinstance(manifold, Sphere)
    if sphere:
        dirs -= np.outer(dirs @ x, x)
    dirs /= np.linalg.norm(dirs, axis=1, keepdims=True)
    if sphere:   # Exp_x(r u) = cos(r) x + sin(r) u, for all rows at once
        balls = np.cos(radii)[:, None] * x + np.sin(radii)[:, None] * dirs
    else:
        balls = x + radii[:, None] * dirs
    points = np.vstack([x, balls])
    raw = subgrad(points) if vectorized else np.array([subgrad(y) for y in points])
    raw = np.asarray(raw, dtype=float)
    if raw.shape != points.shape or not np.isfinite(raw).all():
        raise ValueError(f"subgrad must return finite subgradients of shape {points.shape[1:]} per point")
    if sphere:   # P_y g at every y, then the transport to T_x M: P_x
        raw = raw - np.sum(points * raw, axis=1, keepdims=True) * points
        raw = raw - np.outer(raw @ x, x)
    element, weights = min_norm_in_hull(raw)
    return GoldsteinEstimate(float(np.linalg.norm(element)), element, weights, points, raw, delta)
