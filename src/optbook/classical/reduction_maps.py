"""Chapter 03: reduction mappings (Markou, Ajanthan and Gould, NeurIPS 2025).

A *reduction mapping* keeps part of the variables, x1, and sets the rest to a known function of
them, x2 = Psi(x1), typically the solution of an inner problem Psi(x1) = argmin_{x2} f(x1, x2).
The outer problem is the *reduced objective* F(x1) = f(Phi(x1)) with Phi(x1) = (x1, Psi(x1)).
The paper shows that a well-designed reduction improves the curvature constants (smaller
smoothness constant, larger Morse-Bott / PL constant), so gradient methods on F converge faster
than on f.

This module holds the construction (:class:`ReductionMap`, :class:`ReducedObjective`), the two
reduced gradient methods (Euclidean and with the pullback metric G = J^T J), the baselines
(joint gradient descent, alternating least squares), the curvature diagnostics, the three
instances of the chapter (block quadratic / Schur complement, bias elimination, variable
projection for low-rank matrix factorisation) and the experiments behind the chapter's figures
and claims.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import plotly.graph_objects as go

from ..claims import Measured, claim
from ..core import (
    Problem,
    Quadratic,
    Result,
    RunRecorder,
    RngLike,
    Trace,
    as_rng,
    check_choice,
    check_in_range,
    check_int,
    check_matrix,
    check_positive,
    check_spd,
    check_vector,
    fd_hessian,
)
from ..viz import SliderStep, base_layout, color_for, slider_figure
from ..widgets import Explorer, Slider

Fun = Callable[[np.ndarray], float]
Jac = Callable[[np.ndarray], np.ndarray]
METRICS = ("euclidean", "pullback")
GRADIENTS = ("auto", "envelope", "chain")
STOPS = ("gap", "grad_norm")

# --------------------------------------------------------------------------- the construction


@dataclass(eq=False)
class ReductionMap:
    """The reduction x2 = Psi(x1) and its lift Phi(x1) = (x1, Psi(x1)) ("reduction mapping").

    Parameters
    ----------
    psi : callable
        Psi: R^{n1} -> R^{n2}.
    n1, n2 : int
        Sizes of the kept block x1 and of the eliminated block x2.
    dpsi : callable, optional
        The Jacobian D Psi(x1), an (n2, n1) array. Needed for the chain-rule gradient and for the
        pullback metric; an argmin reduction needs none for its gradient (envelope theorem).
    argmin : bool
        True when Psi(x1) = argmin_{x2} f(x1, x2) exactly (an "inner-optimisation reduction");
        then grad_2 f vanishes on the graph and grad F = grad_1 f there.
    name : str
        A label for legends.
    """

    psi: Callable[[np.ndarray], np.ndarray]
    n1: int
    n2: int
    dpsi: Callable[[np.ndarray], np.ndarray] | None = None
    argmin: bool = False
    name: str = "reduction"

    def __post_init__(self) -> None:
        if not callable(self.psi):
            raise ValueError("psi must be callable")
        if self.dpsi is not None and not callable(self.dpsi):
            raise ValueError("dpsi must be callable or None")
        self.n1 = check_int(self.n1, "n1", minimum=1)
        self.n2 = check_int(self.n2, "n2", minimum=1)

    @property
    def dim(self) -> int:
        """n1 + n2, the size of the joint vector x = (x1, x2)."""
        return self.n1 + self.n2

    def x2(self, x1: np.ndarray) -> np.ndarray:
        """Psi(x1), checked to be a finite vector of length n2."""
        x1 = check_vector(x1, "x1", self.n1)
        out = np.asarray(self.psi(x1), dtype=float).ravel()
        if out.size != self.n2 or not np.all(np.isfinite(out)):
            raise ValueError(f"psi(x1) must be a finite vector of length {self.n2}")
        return out

    def lift(self, x1: np.ndarray) -> np.ndarray:
        """Phi(x1) = (x1, Psi(x1)): the point of the graph above x1."""
        x1 = check_vector(x1, "x1", self.n1)
        return np.concatenate([x1, self.x2(x1)])

    def split(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(x1, x2) from a joint vector."""
        x = check_vector(x, "x", self.dim)
        return x[: self.n1], x[self.n1:]

    def graph_distance(self, x: np.ndarray) -> float:
        """||x2 - Psi(x1)||: zero exactly when x lies on the graph of the reduction."""
        x1, x2 = self.split(x)
        return float(np.linalg.norm(x2 - self.x2(x1)))

    def dpsi_matrix(self, x1: np.ndarray) -> np.ndarray:
        """D Psi(x1), an (n2, n1) array."""
        if self.dpsi is None:
            raise ValueError(f"reduction {self.name!r} has no dpsi; give dpsi to use its Jacobian")
        x1 = check_vector(x1, "x1", self.n1)
        D = np.asarray(self.dpsi(x1), dtype=float)
        if D.shape != (self.n2, self.n1) or not np.all(np.isfinite(D)):
            raise ValueError(f"dpsi(x1) must be a finite ({self.n2}, {self.n1}) array, got shape {D.shape}")
        return D

    def jacobian(self, x1: np.ndarray) -> np.ndarray:
        """J(x1) = D Phi(x1) = [I; D Psi(x1)], an (n1 + n2, n1) array."""
        return np.vstack([np.eye(self.n1), self.dpsi_matrix(x1)])

    def metric(self, x1: np.ndarray) -> np.ndarray:
        """The pullback metric G(x1) = J^T J = I + D Psi^T D Psi (symmetric, >= I)."""
        D = self.dpsi_matrix(x1)
        return np.eye(self.n1) + D.T @ D


class ReducedObjective(Problem):
    """F(x1) = f(x1, Psi(x1)), the "reduced objective", with its gradient and Hessian.

    Parameters
    ----------
    fun, jac : callables
        The joint objective f and its gradient on x = (x1, x2).
    reduction : ReductionMap
    gradient : {'auto', 'envelope', 'chain'}
        'envelope' uses grad F = grad_1 f(Phi(x1)) (valid for an exact argmin reduction);
        'chain' uses grad F = J^T grad f(Phi(x1)) (any reduction, needs dpsi); 'auto' picks
        'envelope' for argmin reductions and 'chain' otherwise.
    """

    name = "reduced objective"

    def __init__(self, fun: Fun, jac: Jac, reduction: ReductionMap, gradient: str = "auto") -> None:
        if not callable(fun) or not callable(jac):
            raise ValueError("fun and jac must be callable")
        if not isinstance(reduction, ReductionMap):
            raise ValueError(f"reduction must be a ReductionMap, got {type(reduction).__name__}")
        gradient = check_choice(gradient, "gradient", GRADIENTS)
        if gradient == "auto":
            gradient = "envelope" if reduction.argmin else "chain"
        if gradient == "envelope" and not reduction.argmin:
            raise ValueError("gradient='envelope' needs an argmin reduction (reduction.argmin=True)")
        if gradient == "chain" and reduction.dpsi is None:
            raise ValueError("gradient='chain' needs reduction.dpsi")
        self.f, self.grad_f, self.reduction, self.gradient = fun, jac, reduction, gradient
        self.dim = reduction.n1

    def value_and_grad(self, x1: np.ndarray) -> tuple[float, np.ndarray, np.ndarray]:
        """(F(x1), grad F(x1), Phi(x1)) with one inner solve."""
        x = self.reduction.lift(x1)
        value = float(self.f(x))
        g = np.asarray(self.grad_f(x), dtype=float)
        n1 = self.reduction.n1
        if self.gradient == "envelope":
            grad = g[:n1].copy()
        else:
            grad = g[:n1] + self.reduction.dpsi_matrix(x[:n1]).T @ g[n1:]
        return value, grad, x

    def fun(self, x1: np.ndarray) -> float:
        return self.value_and_grad(x1)[0]

    def jac(self, x1: np.ndarray) -> np.ndarray:
        return self.value_and_grad(x1)[1]

    def hess(self, x1: np.ndarray, h: float = 1e-5) -> np.ndarray:
        """Hessian of F by central differences of grad F (dense; small sizes only)."""
        return fd_hessian(self.jac, check_vector(x1, "x1", self.dim), h=h)

    def pullback_hess(self, x1: np.ndarray, h: float = 1e-5) -> np.ndarray:
        """G^{-1/2} hess F G^{-1/2}: the Hessian of F in the pullback metric (Riemannian Hessian at a
        critical point), whose eigenvalues are the curvature constants the paper's rates use."""
        return metric_normalised(self.hess(x1, h=h), self.reduction.metric(x1))


def metric_normalised(hess: np.ndarray, metric: np.ndarray) -> np.ndarray:
    """G^{-1/2} H G^{-1/2} for a symmetric H and a symmetric positive-definite metric G."""
    H = check_matrix(hess, "hess", square=True)
    G = check_spd(metric, "metric", H.shape[0])
    w, Q = np.linalg.eigh(G)
    root_inv = (Q / np.sqrt(w)) @ Q.T
    out = root_inv @ H @ root_inv
    return 0.5 * (out + out.T)


def orthonormal_lift(J: np.ndarray) -> np.ndarray:
    """Q = J G^{-1/2} with G = J^T J: orthonormal columns spanning range(J). At a critical point the
    pullback-metric Hessian is Q^T hess f Q, so Cauchy interlacing bounds its spectrum by hess f's."""
    J = check_matrix(J, "J")
    if J.shape[0] < J.shape[1]:
        raise ValueError(f"J must be tall (rows >= columns), got shape {J.shape}")
    w, V = np.linalg.eigh(J.T @ J)
    if w[0] <= 1e-14 * max(w[-1], 1.0):
        raise ValueError("J must have full column rank")
    return J @ ((V / np.sqrt(w)) @ V.T)


@dataclass
class Curvature:
    """Curvature constants of a Hessian at a minimiser: beta (largest eigenvalue, smoothness),
    mu (smallest eigenvalue above rel_tol * beta, the Morse-Bott constant), kappa = beta / mu, and
    how many eigenvalues were counted as zero (the tangent directions of the solution set)."""

    beta: float
    mu: float
    kappa: float
    n_zero: int
    eigenvalues: np.ndarray
    rel_tol: float


def curvature_constants(hess: np.ndarray, rel_tol: float = 1e-8) -> Curvature:
    """beta, mu (on the normal space, i.e. nonzero eigenvalues only) and kappa of a symmetric matrix.

    Eigenvalues with |lambda| <= rel_tol * beta count as zero. A clearly negative eigenvalue means
    the point is not a minimiser and raises ValueError.
    """
    H = check_matrix(hess, "hess", square=True)
    rel_tol = check_in_range(rel_tol, "rel_tol", 0.0, 1.0)
    H = 0.5 * (H + H.T)
    ev = np.linalg.eigvalsh(H)
    beta = float(ev[-1])
    if beta <= 0:
        raise ValueError("hess must have a positive eigenvalue")
    if ev[0] < -1e3 * rel_tol * beta:
        raise ValueError(f"hess has a negative eigenvalue {ev[0]:.3g}: not a minimiser")
    nonzero = ev[np.abs(ev) > rel_tol * beta]
    mu = float(nonzero.min())
    return Curvature(beta, mu, beta / mu, int(ev.size - nonzero.size), ev, rel_tol)


# --------------------------------------------------------------------------- the methods


def _stop_setup(stop: str, tol: float, f_star: float | None) -> tuple[str, float]:
    stop = check_choice(stop, "stop", STOPS)
    tol = check_positive(tol, "tol")
    if stop == "gap" and f_star is None:
        raise ValueError("stop='gap' needs f_star")
    if f_star is not None and (isinstance(f_star, bool) or not np.isfinite(f_star)):
        raise ValueError(f"f_star must be a finite number, got {f_star!r}")
    return stop, tol


def _descent(value_and_grad, x0, *, step, direction, stop, tol, f_star, maxiter, blowup,
             callback, method_name, lift=None) -> Result:
    """The loop shared by joint and reduced gradient descent (fixed step).

    ``value_and_grad(x) -> (f, g, lifted)``; ``direction(x, g)`` returns the descent direction
    (g itself, or G^{-1} g for the pullback metric). Stops on the tolerance, on divergence
    (non-finite value or f - f* above ``blowup`` times its start), or at ``maxiter``.
    """
    f_ref = 0.0 if f_star is None else f_star
    rec = RunRecorder(method_name, stop=stop, tol=tol, stops=STOPS, f_star=f_ref, callback=callback)
    trace = rec.trace
    trace.meta["step"] = step
    x = x0
    lifted = []
    message, success, diverged = "maximum number of iterations reached", False, False
    f0 = None
    nfev = 0
    trace.restart_clock()
    for t in range(maxiter + 1):
        f, g, xl = value_and_grad(x)
        nfev += 1
        gnorm = float(np.linalg.norm(g))
        if not (np.isfinite(f) and np.isfinite(gnorm)):
            message, diverged = "diverged (non-finite value)", True
            break
        f0 = f if f0 is None else f0
        lifted.append(xl)
        if rec.record(x, f, gnorm, step_size=step):
            message, success = "stopping tolerance reached", True
            break
        if f - f_ref > blowup * max(f0 - f_ref, 1e-300):
            message, diverged = f"diverged (f - f* grew by more than {blowup:g}x)", True
            break
        if t == maxiter:
            break
        x = x - step * direction(x, g)
    res = Result(x=rec.iterates[-1] if rec.iterates else x0, fun=trace.objective[-1] if len(trace) else np.nan,
                 nit=max(len(trace) - 1, 0), nfev=nfev, njev=nfev, success=success, message=message,
                 diverged=diverged, trace=trace, iterates=np.array(rec.iterates))
    if lift is not None:
        res["x_full"] = lifted[-1] if lifted else None
        res["lifted"] = np.array(lifted)
    return res


def gradient_descent(
    fun: Fun,
    x0: np.ndarray,
    jac: Jac,
    *,
    step: float,
    tol: float = 1e-10,
    stop: str = "gap",
    f_star: float | None = 0.0,
    maxiter: int = 10000,
    blowup: float = 1e8,
    callback: Callable[[np.ndarray], None] | None = None,
    method_name: str = "joint GD",
) -> Result:
    """Gradient descent with a fixed step on the joint objective f (the paper's baseline).

    x <- x - step * grad f(x). Stops when f - f_star <= tol (``stop='gap'``) or
    ||grad f|| <= tol (``stop='grad_norm'``); flags ``diverged`` when f - f* exceeds ``blowup``
    times its initial value or becomes non-finite.
    """
    if not callable(fun) or not callable(jac):
        raise ValueError("fun and jac must be callable")
    x = check_vector(x0, "x0")
    step = check_positive(step, "step")
    stop, tol = _stop_setup(stop, tol, f_star)
    maxiter = check_int(maxiter, "maxiter", minimum=0)
    blowup = check_in_range(blowup, "blowup", 1.0, np.inf)
    if callback is not None and not callable(callback):
        raise ValueError("callback must be callable")

    def vg(z):
        return float(fun(z)), np.asarray(jac(z), dtype=float), z

    return _descent(vg, x, step=step, direction=lambda z, g: g, stop=stop, tol=tol, f_star=f_star,
                    maxiter=maxiter, blowup=blowup, callback=callback, method_name=method_name)


def reduced_gradient_descent(
    fun: Fun,
    x0: np.ndarray,
    jac: Jac,
    reduction: ReductionMap,
    *,
    step: float,
    metric: str = "euclidean",
    gradient: str = "auto",
    tol: float = 1e-10,
    stop: str = "gap",
    f_star: float | None = 0.0,
    maxiter: int = 10000,
    blowup: float = 1e8,
    callback: Callable[[np.ndarray], None] | None = None,
    method_name: str | None = None,
) -> Result:
    """Gradient descent on the reduced objective F = f o Phi, lifted back to the graph.

    ``metric='euclidean'``: x1 <- x1 - step * grad F(x1).
    ``metric='pullback'``:  x1 <- x1 - step * G(x1)^{-1} grad F(x1), G = I + D Psi^T D Psi
    (the Riemannian gradient method on the graph, the variant the paper's rates are stated for).

    Parameters
    ----------
    fun, jac : callables
        The *joint* objective f(x) and its gradient, x = (x1, x2).
    x0 : array
        The starting x1 (length reduction.n1); the method starts from Phi(x0).
    reduction : ReductionMap
    gradient : {'auto', 'envelope', 'chain'}
        How grad F is formed (see :class:`ReducedObjective`).

    Returns
    -------
    Result
        ``x`` (the last x1), ``x_full`` (its lift Phi(x1)), ``lifted`` (every lifted iterate),
        ``iterates``, ``trace`` (objective F(x1_t) = f(Phi(x1_t)), grad_norm ||grad F||, gap),
        ``diverged``.
    """
    if not isinstance(reduction, ReductionMap):
        raise ValueError(f"reduction must be a ReductionMap, got {type(reduction).__name__}")
    F = ReducedObjective(fun, jac, reduction, gradient=gradient)
    x = check_vector(x0, "x0", reduction.n1)
    step = check_positive(step, "step")
    metric = check_choice(metric, "metric", METRICS)
    stop, tol = _stop_setup(stop, tol, f_star)
    maxiter = check_int(maxiter, "maxiter", minimum=0)
    blowup = check_in_range(blowup, "blowup", 1.0, np.inf)
    if callback is not None and not callable(callback):
        raise ValueError("callback must be callable")
    if metric == "pullback":
        def direction(z, g):
            return np.linalg.solve(reduction.metric(z), g)
    else:
        def direction(z, g):
            return g
    name = method_name or ("reduced GD" if metric == "euclidean" else "reduced GD (pullback metric)")
    return _descent(F.value_and_grad, x, step=step, direction=direction, stop=stop, tol=tol,
                    f_star=f_star, maxiter=maxiter, blowup=blowup, callback=callback,
                    method_name=name, lift=True)


# --------------------------------------------------------------------------- E2: block quadratics


def schur_complement(H: np.ndarray, n1: int) -> np.ndarray:
    """S = H11 - H12 H22^{-1} H21: the Hessian of the reduced quadratic (argmin reduction of x2)."""
    H = check_spd(H, "H")
    n1 = check_int(n1, "n1", minimum=1)
    if n1 >= H.shape[0]:
        raise ValueError(f"n1 must be < {H.shape[0]} (the size of H), got {n1}")
    H11, H12, H22 = H[:n1, :n1], H[:n1, n1:], H[n1:, n1:]
    S = H11 - H12 @ np.linalg.solve(H22, H12.T)
    return 0.5 * (S + S.T)


def block_quadratic(H: np.ndarray, b: np.ndarray, n1: int) -> tuple[Quadratic, ReductionMap]:
    """f(x) = 1/2 x^T H x - b^T x and its argmin reduction Psi(x1) = H22^{-1}(b2 - H21 x1) (affine).

    The reduced objective has Hessian S (the Schur complement) and D Psi = -H22^{-1} H21.
    """
    H = check_spd(H, "H")
    b = check_vector(b, "b", H.shape[0])
    n1 = check_int(n1, "n1", minimum=1)
    if n1 >= H.shape[0]:
        raise ValueError(f"n1 must be < {H.shape[0]} (the size of H), got {n1}")
    H22, H21, b2 = H[n1:, n1:], H[n1:, :n1], b[n1:]
    sol = np.linalg.solve(H22, np.column_stack([b2, H21]))   # H22^{-1} [b2, H21], once
    c, D = sol[:, 0], -sol[:, 1:]

    red = ReductionMap(psi=lambda x1: c + D @ x1, n1=n1, n2=H.shape[0] - n1,
                       dpsi=lambda x1: D, argmin=True, name="Schur (argmin x2)")
    return Quadratic(H, b, name="block quadratic"), red


def random_block_quadratic(n: int = 50, n1: int = 5, ridge: float = 1e-2,
                           rng: RngLike = None) -> tuple[np.ndarray, np.ndarray]:
    """H = M M^T / n + ridge I with M an n x n Gaussian matrix, and b ~ N(0, I) (card check C1)."""
    n = check_int(n, "n", minimum=2)
    check_int(n1, "n1", minimum=1)
    if n1 >= n:
        raise ValueError(f"n1 must be < n = {n}, got {n1}")
    ridge = check_positive(ridge, "ridge")
    g = as_rng(rng)
    M = g.standard_normal((n, n))
    H = M @ M.T / n + ridge * np.eye(n)
    return 0.5 * (H + H.T), g.standard_normal(n)


def quadratic_gd_iterations(A: np.ndarray, e0: np.ndarray, step: float, tol: float,
                            maxiter: int = 100000) -> int | None:
    """Iterations fixed-step GD needs on 1/2 e^T A e until the gap 1/2 e^T A e <= tol, in closed form.

    With A = sum_i lambda_i q_i q_i^T and c = Q^T e0 the gap after t steps is
    1/2 sum_i lambda_i c_i^2 (1 - step lambda_i)^{2t}. None if not reached within ``maxiter``.
    """
    A = check_matrix(A, "A", square=True)
    e0 = check_vector(e0, "e0", A.shape[0])
    step = check_positive(step, "step")
    tol = check_positive(tol, "tol")
    maxiter = check_int(maxiter, "maxiter", minimum=0)
    lam, Q = np.linalg.eigh(0.5 * (A + A.T))
    return _gd_iterations_from_eig(lam, Q.T @ e0, step, tol, maxiter)


def _gd_iterations_from_eig(lam: np.ndarray, c: np.ndarray, step: float, tol: float,
                            maxiter: int) -> int | None:
    """The count of :func:`quadratic_gd_iterations` from eigenvalues lam and coordinates c = Q^T e0."""
    weight = 0.5 * lam * c ** 2
    ratio = (1.0 - step * lam) ** 2                     # per-step factor of each component of the gap

    def gap(t: int) -> float:
        return float(weight @ ratio ** t)

    if gap(0) <= tol:
        return 0
    if np.all(ratio[weight > 0] <= 1.0):
        # The gap is non-increasing in t: exponential search, then bisection on [lo, hi].
        if gap(maxiter) > tol:
            return None
        lo, hi = 0, 1
        while hi < maxiter and gap(hi) > tol:
            lo, hi = hi, min(2 * hi, maxiter)
        while hi - lo > 1:
            mid = (lo + hi) // 2
            lo, hi = (mid, hi) if gap(mid) > tol else (lo, mid)
        return hi
    for t in range(1, maxiter + 1):                     # an expanding component: scan (it stops early)
        value = gap(t)
        if value <= tol:
            return t
        if not np.isfinite(value) or value > 1e300:
            return None
    return None


# --------------------------------------------------------------------------- E1: bias elimination


@dataclass(eq=False)
class LeastSquaresWithBias(Problem):
    """f(w, b) = 1/(2n) ||X w + b 1 - y||^2 on x = (w, b) (chapter example E1)."""

    X: np.ndarray
    y: np.ndarray
    name: str = "least squares with bias"

    def __post_init__(self) -> None:
        self.X = check_matrix(self.X, "X")
        self.y = check_vector(self.y, "y", self.X.shape[0])
        n = self.X.shape[0]
        if n < 2:
            raise ValueError("X needs at least two rows")
        self.A = np.hstack([self.X, np.ones((n, 1))])
        self.dim = self.A.shape[1]

    def fun(self, x: np.ndarray) -> float:
        r = self.A @ self._x(x) - self.y
        return float(0.5 * r @ r / self.A.shape[0])

    def jac(self, x: np.ndarray) -> np.ndarray:
        r = self.A @ self._x(x) - self.y
        return self.A.T @ r / self.A.shape[0]

    def hess(self, x: np.ndarray) -> np.ndarray:
        self._x(x)
        return self.A.T @ self.A / self.A.shape[0]

    def reduction(self) -> ReductionMap:
        """Psi(w) = mean(y) - mean(X)^T w: the optimal bias for given weights (argmin over b)."""
        xbar, ybar = self.X.mean(axis=0), float(self.y.mean())
        d = self.X.shape[1]
        return ReductionMap(psi=lambda w: np.array([ybar - xbar @ w]), n1=d, n2=1,
                            dpsi=lambda w: -xbar[None, :], argmin=True, name="bias elimination")


def bias_data(xbar: float, spread: float, n: int = 40, slope: float = 2.0, intercept: float = -1.0,
              noise: float = 0.3, rng: RngLike = 0) -> tuple[np.ndarray, np.ndarray]:
    """One feature with exact mean ``xbar`` and standard deviation ``spread``, and
    y = slope x + intercept + noise, the noise orthogonal to 1 and x so that the minimiser is
    exactly (w, b) = (slope, intercept) whatever xbar and spread are."""
    xbar = check_in_range(xbar, "xbar", -1e6, 1e6)
    spread = check_positive(spread, "spread")
    n = check_int(n, "n", minimum=4)
    g = as_rng(rng)
    z = g.standard_normal(n)
    z = (z - z.mean()) / z.std()
    e = g.standard_normal(n)
    basis = np.column_stack([np.ones(n), z])
    e -= basis @ np.linalg.lstsq(basis, e, rcond=None)[0]
    e *= check_positive(noise, "noise", allow_zero=True) / max(e.std(), 1e-300)
    x = xbar + spread * z
    return x[:, None], slope * x + intercept + e


# --------------------------------------------------------------------------- E3: matrix factorisation


@dataclass(eq=False)
class MatrixFactorization(Problem):
    """f(U, V) = 1/2 ||U V^T - Y||_F^2 on x = (vec U, vec V) (row-major), U: m x r, V: n x r (E3).

    Its minimisers (with rank Y = r) form the manifold {(U G, V G^{-T}) : G in GL(r)}.
    """

    Y: np.ndarray
    r: int
    name: str = "matrix factorisation"

    def __post_init__(self) -> None:
        self.Y = check_matrix(self.Y, "Y")
        self.m, self.n = self.Y.shape
        self.r = check_int(self.r, "r", minimum=1)
        if self.r > min(self.m, self.n):
            raise ValueError(f"r must be <= min(m, n) = {min(self.m, self.n)}, got {self.r}")
        self.dim = (self.m + self.n) * self.r

    def split(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(U, V) from the flat vector."""
        x = self._x(x)
        k = self.m * self.r
        return x[:k].reshape(self.m, self.r), x[k:].reshape(self.n, self.r)

    def join(self, U: np.ndarray, V: np.ndarray) -> np.ndarray:
        """The flat vector of (U, V)."""
        U = check_matrix(U, "U", shape=(self.m, self.r))
        V = check_matrix(V, "V", shape=(self.n, self.r))
        return np.concatenate([U.ravel(), V.ravel()])

    def fun(self, x: np.ndarray) -> float:
        U, V = self.split(x)
        R = U @ V.T - self.Y
        return float(0.5 * np.sum(R * R))

    def jac(self, x: np.ndarray) -> np.ndarray:
        U, V = self.split(x)
        R = U @ V.T - self.Y
        return np.concatenate([(R @ V).ravel(), (R.T @ U).ravel()])

    def hess(self, x: np.ndarray) -> np.ndarray:
        """Exact Hessian, column by column from Hessian-vector products."""
        U, V = self.split(x)
        R = U @ V.T - self.Y
        k = self.m * self.r
        eye = np.eye(self.dim)
        dU = eye[:, :k].reshape(self.dim, self.m, self.r)
        dV = eye[:, k:].reshape(self.dim, self.n, self.r)
        dR = dU @ V.T + U @ np.transpose(dV, (0, 2, 1))
        hu = dR @ V + R @ dV
        hv = np.transpose(dR, (0, 2, 1)) @ U + R.T @ dU
        H = np.concatenate([hu.reshape(self.dim, -1), hv.reshape(self.dim, -1)], axis=1)
        return 0.5 * (H + H.T)

    def varpro(self) -> ReductionMap:
        """Variable projection: Psi(U) = argmin_V f(U, V) = (U^+ Y)^T by least squares, with the
        analytic Jacobian dV = -V dU^T (U^+)^T - R^T dU (U^T U)^{-1}, R = U V^T - Y."""
        m, n, r, Y = self.m, self.n, self.r, self.Y

        def factors(u):
            U = u.reshape(m, r)
            Qm, Rm = np.linalg.qr(U)
            if np.min(np.abs(np.diag(Rm))) <= 1e-12 * max(np.max(np.abs(Rm)), 1e-300):
                raise ValueError("U is (numerically) rank deficient: the inner problem has no unique solution")
            pinv = np.linalg.solve(Rm, Qm.T)                  # U^+ = R^{-1} Q^T, no explicit (U^T U)^{-1}
            return U, pinv, Rm

        def psi(u):
            U, pinv, _ = factors(u)
            return (pinv @ Y).T.ravel()

        def dpsi(u):
            U, pinv, Rm = factors(u)
            V = (pinv @ Y).T
            Rres = U @ V.T - Y
            Rinv = np.linalg.solve(Rm, np.eye(r))
            C = Rinv @ Rinv.T                                 # (U^T U)^{-1}
            D = -np.einsum("ka,li->klia", V, pinv) - np.einsum("ik,al->klia", Rres, C)
            return D.reshape(n * r, m * r)

        return ReductionMap(psi=psi, n1=m * r, n2=n * r, dpsi=dpsi, argmin=True, name="VarPro")


def make_factorization(m: int = 30, n: int = 20, r: int = 3, init_scale: float = 0.5,
                       rng: RngLike = None) -> tuple[MatrixFactorization, np.ndarray, np.ndarray]:
    """Y = U0 V0^T with Gaussian factors (rank r), and a start (U, V) ~ init_scale N(0, 1) (check C2).

    Returns the problem, the flat joint start x0 and the true factor U0.
    """
    g = as_rng(rng)
    U0, V0 = g.standard_normal((m, r)), g.standard_normal((n, r))
    prob = MatrixFactorization(U0 @ V0.T, r)
    init_scale = check_positive(init_scale, "init_scale")
    x0 = init_scale * g.standard_normal(prob.dim)
    return prob, x0, U0


def alternating_least_squares(problem: MatrixFactorization, U0: np.ndarray, *, tol: float = 1e-10,
                              maxiter: int = 500, method_name: str = "ALS") -> Result:
    """Alternating minimisation (baseline): V <- argmin_V f(U, V), then U <- argmin_U f(U, V).

    One trace row per sweep, the objective after the V update (so row 0 is F(U0), like VarPro).
    """
    if not isinstance(problem, MatrixFactorization):
        raise ValueError("problem must be a MatrixFactorization")
    U = check_matrix(U0, "U0", shape=(problem.m, problem.r))
    tol = check_positive(tol, "tol")
    maxiter = check_int(maxiter, "maxiter", minimum=0)
    Y = problem.Y
    trace = Trace(method_name)
    message, success = "maximum number of iterations reached", False
    for t in range(maxiter + 1):
        V = np.linalg.lstsq(U, Y, rcond=None)[0].T
        R = U @ V.T - Y
        f = 0.5 * float(np.sum(R * R))
        trace.record(objective=f, grad_norm=float(np.linalg.norm(R @ V)), gap=f)
        if f <= tol:
            message, success = "stopping tolerance reached", True
            break
        if t == maxiter:
            break
        U = np.linalg.lstsq(V, Y.T, rcond=None)[0].T
    return Result(x=problem.join(U, V), fun=f, nit=len(trace) - 1, success=success, message=message,
                  trace=trace)


# --------------------------------------------------------------------------- experiments (cached)


@lru_cache(maxsize=4)
def block_quadratic_draws(n_draws: int = 100, n: int = 50, n1: int = 5, seed: int = 0,
                          tol: float = 1e-8, maxiter: int = 200000) -> dict:
    """Card check C1 over ``n_draws`` random block quadratics: kappa of f, of the Schur complement
    (Euclidean reduced Hessian) and of the pullback-metric reduced Hessian, and the iterations
    fixed-step GD (step 1/beta) needs to reach a gap of ``tol`` from x0 ~ N(0, I) (x1 part for F)."""
    n_draws = check_int(n_draws, "n_draws", minimum=1)
    g = np.random.default_rng(seed)
    out = {k: [] for k in ("kappa_f", "kappa_S", "kappa_pull", "it_f", "it_S", "it_pull")}
    for _ in range(n_draws):
        H, b = random_block_quadratic(n, n1, rng=g)
        x0 = g.standard_normal(n)
        _, red = block_quadratic(H, b, n1)
        lam, Q = np.linalg.eigh(H)                      # one eigendecomposition of H per draw
        e0 = x0 - Q @ ((Q.T @ b) / lam)                 # x0 - x*
        S = schur_complement(H, n1)
        G = red.metric(x0[:n1])                         # constant: the reduction is affine
        P = metric_normalised(S, G)
        cs, cp = curvature_constants(S), curvature_constants(P)
        out["kappa_f"].append(lam[-1] / lam[0])
        out["kappa_S"].append(cs.kappa)
        out["kappa_pull"].append(cp.kappa)
        out["it_f"].append(_gd_iterations_from_eig(lam, Q.T @ e0, 1 / lam[-1], tol, maxiter))
        e1 = e0[:n1]
        out["it_S"].append(quadratic_gd_iterations(S, e1, 1 / cs.beta, tol, maxiter))
        w, V = np.linalg.eigh(G)
        out["it_pull"].append(quadratic_gd_iterations(P, (V * np.sqrt(w)) @ V.T @ e1, 1 / cp.beta, tol, maxiter))
    return {k: np.array([np.nan if v is None else v for v in vals], dtype=float) for k, vals in out.items()}


@lru_cache(maxsize=2)
def block_quadratic_runs(n: int = 50, n1: int = 5, seed: int = 0, tol: float = 1e-8) -> dict:
    """The first draw of :func:`block_quadratic_draws` run through the library's own joint and reduced
    gradient descent (both with step 1/beta), for the convergence figure and to cross-check the
    closed-form iteration counts."""
    g = np.random.default_rng(seed)
    H, b = random_block_quadratic(n, n1, rng=g)
    x0 = g.standard_normal(n)
    prob, red = block_quadratic(H, b, n1)
    f_star = prob.f_star
    S = schur_complement(H, n1)
    P = metric_normalised(S, red.metric(x0[:n1]))
    cf, cs, cp = (curvature_constants(M) for M in (H, S, P))
    common = dict(tol=tol, f_star=f_star, maxiter=50000)
    runs = {
        "joint GD": gradient_descent(prob.fun, x0, prob.jac, step=1 / cf.beta, **common),
        "reduced GD": reduced_gradient_descent(prob.fun, x0[:n1], prob.jac, red, step=1 / cs.beta, **common),
        "reduced GD (pullback metric)": reduced_gradient_descent(prob.fun, x0[:n1], prob.jac, red,
                                                                 step=1 / cp.beta, metric="pullback",
                                                                 **common),
    }
    return {"runs": runs, "curv": {"f": cf, "S": cs, "pullback": cp}, "f_star": f_star}


MF_STEPS = (0.002, 0.005, 0.01, 0.02, 0.03, 0.04, 0.06, 0.08, 0.1)
#: The pullback-metric variant is swept from 0.02 up only: smaller steps just take longer, and
#: each of its iterations builds the Jacobian D Psi and solves with G.
MF_PULLBACK_STEPS = (0.02, 0.03, 0.04, 0.06, 0.08, 0.1)


@lru_cache(maxsize=8)
def factorization_sweep(seed: int = 0, steps: tuple[float, ...] = MF_STEPS, maxiter: int = 3000,
                        tol: float = 1e-10, pullback: bool = False) -> dict:
    """Card check C2: joint GD, reduced (VarPro) GD and ALS on f(U, V) = 1/2 ||U V^T - Y||^2 from the
    same start, over a grid of step sizes (with ``pullback``, also reduced GD in the pullback
    metric over the steps of ``MF_PULLBACK_STEPS`` in the grid). Returns iteration counts (None =
    diverged or capped), median seconds per iteration, and every run."""
    if pullback:
        base = factorization_sweep(seed, steps, maxiter, tol, False)
        prob, red = base["problem"], base["problem"].varpro()
        U0 = base["x0"][: red.n1]
        by = {eta: reduced_gradient_descent(prob.fun, U0, prob.jac, red, step=eta, tol=tol, maxiter=maxiter,
                                            metric="pullback")
              for eta in steps if eta in MF_PULLBACK_STEPS}
        name = "reduced GD (pullback metric)"
        return {**base, "runs": {**base["runs"], name: by},
                "iters": {**base["iters"], name: {eta: (r.nit if r.success else None) for eta, r in by.items()}},
                "sec_per_iter": {**base["sec_per_iter"], name: _sec_per_iter(by)}}
    prob, x0, _ = make_factorization(rng=seed)
    red = prob.varpro()
    U0 = x0[: red.n1]
    runs = {"joint GD": {}, "reduced GD": {}}
    for eta in steps:
        runs["joint GD"][eta] = gradient_descent(prob.fun, x0, prob.jac, step=eta, tol=tol, maxiter=maxiter)
        runs["reduced GD"][eta] = reduced_gradient_descent(prob.fun, U0, prob.jac, red, step=eta, tol=tol,
                                                           maxiter=maxiter)
    als = alternating_least_squares(prob, U0.reshape(prob.m, prob.r), tol=tol, maxiter=maxiter)
    iters = {name: {eta: (r.nit if r.success else None) for eta, r in by.items()} for name, by in runs.items()}
    sec = {name: _sec_per_iter(by) for name, by in runs.items()}
    return {"iters": iters, "runs": runs, "als": als, "sec_per_iter": sec, "problem": prob, "x0": x0}


def _sec_per_iter(runs: dict) -> float:
    return float(np.median([r.trace.time[-1] / max(r.nit, 1) for r in runs.values() if r.nit > 0]))


def best_step(iters: dict[float, int | None]) -> tuple[float | None, int | None, float | None]:
    """(best step, its iteration count, largest step that converged) from a sweep's counts."""
    ok = {eta: it for eta, it in iters.items() if it is not None}
    if not ok:
        return None, None, None
    eta = min(ok, key=lambda e: (ok[e], -e))
    return eta, ok[eta], max(ok)


@lru_cache(maxsize=4)
def factorization_spectra(seed: int = 0, rel_tol: float = 1e-8) -> dict:
    """Card check C3: Hessian spectra of f at a generic minimiser (U* G, Psi(U* G)) and of F (Euclidean
    and pullback metric) at U* G, F's Hessian by central differences of grad F."""
    g = np.random.default_rng(1000 + seed)
    prob, _, U_true = make_factorization(rng=seed)
    red = prob.varpro()
    G = g.standard_normal((prob.r, prob.r))
    u = (U_true @ G).ravel()
    x = red.lift(u)
    F = ReducedObjective(prob.fun, prob.jac, red)
    HF = F.hess(u)
    M = red.metric(u)
    return {"f": curvature_constants(prob.hess(x), rel_tol), "F": curvature_constants(HF, rel_tol),
            "F_pullback": curvature_constants(metric_normalised(HF, M), rel_tol)}


# --------------------------------------------------------------------------- claims


@claim("03", "An argmin reduction of a block quadratic is better conditioned, and GD on it is much faster",
       expect="kappa(S) <= kappa(H) in every draw, and in every draw GD on F needs >= 10x fewer "
              "iterations to a gap of 1e-8 than GD on f (both with step 1/beta); library GD matches "
              "the closed-form counts",
       name="block_quadratic")
def claim_block_quadratic(fast: bool = False) -> Measured:
    n_draws = 30 if fast else 100
    d = block_quadratic_draws(n_draws)
    better = int(np.sum(d["kappa_S"] <= d["kappa_f"] * (1 + 1e-12)))
    ratio = d["it_f"] / d["it_S"]
    runs = block_quadratic_runs()
    lib_f, lib_S = runs["runs"]["joint GD"].nit, runs["runs"]["reduced GD"].nit
    consistent = lib_f == d["it_f"][0] and lib_S == d["it_S"][0]
    values = {
        "draws": n_draws,
        "draws_kappa_better": better,
        "median_kappa_f": float(np.median(d["kappa_f"])),
        "median_kappa_S": float(np.median(d["kappa_S"])),
        "median_kappa_pullback": float(np.median(d["kappa_pull"])),
        "median_iters_f": float(np.nanmedian(d["it_f"])),
        "median_iters_F": float(np.nanmedian(d["it_S"])),
        "min_iteration_ratio": float(np.nanmin(ratio)) if np.all(np.isfinite(ratio)) else float("nan"),
        "library_matches_closed_form": bool(consistent),
    }
    holds = (better == n_draws and np.all(np.isfinite(ratio)) and float(np.min(ratio)) >= 10.0
             and consistent)
    return Measured(values, holds=bool(holds),
                    summary=f"kappa better in {better}/{n_draws}; worst iteration ratio {values['min_iteration_ratio']:.1f}x",
                    details={"draws": d, "runs": runs})


@claim("03", "Variable projection (reduced GD) beats joint GD on low-rank matrix factorisation",
       expect="in every seed the best reduced GD over the step grid needs <= 0.5x the iterations of the "
              "best joint GD, and converges at a larger step than joint GD can take (wall time reported)",
       name="matrix_factorisation")
def claim_matrix_factorisation(fast: bool = False) -> Measured:
    seeds = (0,) if fast else (0, 1, 2)
    ratios, stable_gain, joint_best, red_best, sec_ratio = [], [], [], [], []
    for seed in seeds:
        sw = factorization_sweep(seed)
        ej, ij, sj = best_step(sw["iters"]["joint GD"])
        er, ir, sr = best_step(sw["iters"]["reduced GD"])
        if ij is None or ir is None:
            ratios.append(np.inf)
            stable_gain.append(False)
            continue
        joint_best.append(ij)
        red_best.append(ir)
        ratios.append(ir / ij)
        stable_gain.append(sr > sj)
        sec_ratio.append(sw["sec_per_iter"]["reduced GD"] / sw["sec_per_iter"]["joint GD"])
    values = {
        "seeds": len(seeds),
        "best_joint_iters_median": float(np.median(joint_best)) if joint_best else float("nan"),
        "best_reduced_iters_median": float(np.median(red_best)) if red_best else float("nan"),
        "worst_iteration_ratio": float(max(ratios)),
        "reduced_stable_at_larger_step": bool(all(stable_gain)),
        "cost_per_iter_ratio_reduced_over_joint": float(np.median(sec_ratio)) if sec_ratio else float("nan"),
    }
    holds = max(ratios) <= 0.5 and all(stable_gain)
    return Measured(values, holds=bool(holds),
                    summary=f"best reduced / best joint iterations <= {max(ratios):.2f}; "
                            f"a reduced step costs {values['cost_per_iter_ratio_reduced_over_joint']:.1f}x a joint one",
                    details={"seeds": seeds})


@claim("03", "At a matrix-factorisation minimiser the reduction lowers beta and does not lower mu",
       expect="beta_F <= beta_f and mu_F >= mu_f (pullback metric, nonzero eigenvalues at rel. threshold "
              "1e-8, 1e-6 slack for finite differences) in every trial, with the GL(r) orbit as zero eigenvalues",
       name="spectra")
def claim_spectra(fast: bool = False) -> Measured:
    trials = (0,) if fast else (0, 1, 2)
    ok, rows = True, []
    for seed in trials:
        s = factorization_spectra(seed)
        f, Fp = s["f"], s["F_pullback"]
        ok &= Fp.beta <= f.beta * (1 + 1e-6) and Fp.mu >= f.mu * (1 - 1e-6)
        rows.append((f.beta, Fp.beta, f.mu, Fp.mu, f.n_zero, Fp.n_zero))
    rows = np.array(rows)
    values = {"trials": len(trials), "max_beta_ratio_F_over_f": float(np.max(rows[:, 1] / rows[:, 0])),
              "min_mu_ratio_F_over_f": float(np.min(rows[:, 3] / rows[:, 2])),
              "zero_eigs_f": float(rows[0, 4]), "zero_eigs_F": float(rows[0, 5])}
    return Measured(values, holds=bool(ok), details=rows,
                    summary=f"beta_F/beta_f <= {values['max_beta_ratio_F_over_f']:.3f}, "
                            f"mu_F/mu_f >= {values['min_mu_ratio_F_over_f']:.3f}")


# --------------------------------------------------------------------------- explorations (cached)

BIAS_XBARS = (0.0, 0.5, 1.0, 2.0, 3.0, 4.0)
BIAS_SPREADS = (0.25, 0.5, 1.0, 2.0)
_BIAS_WIN = ((0.0, 3.0), (-8.0, 6.0))
_BIAS_START = (1.0, 3.0)


@lru_cache(maxsize=64)
def bias_experiment(xbar: float, spread: float, iters: int = 60, tol: float = 1e-8) -> dict:
    """Example E1 in 2-D: f(w, b) with one feature of mean ``xbar`` and standard deviation ``spread``.

    Joint GD (step 1/beta_f) from (w, b) = (1, 3) and reduced GD on F(w) (step 1/beta_F) from w = 1,
    ``iters`` steps each; the log-gap grid of f for the contour plot; kappa of both; and the
    iterations each needs to a gap of ``tol`` (closed form)."""
    X, y = bias_data(xbar, spread)
    prob = LeastSquaresWithBias(X, y)
    red = prob.reduction()
    x_star = np.linalg.lstsq(prob.A, y, rcond=None)[0]
    f_star = prob.fun(x_star)
    Hf = prob.hess(x_star)
    cf = curvature_constants(Hf)
    beta_F = float(spread ** 2)                                   # F(w) = 1/2 spread^2 (w - w*)^2 + f*
    x0 = np.array(_BIAS_START)
    joint = gradient_descent(prob.fun, x0, prob.jac, step=1 / cf.beta, f_star=f_star, tol=1e-300,
                             maxiter=iters)
    reduced = reduced_gradient_descent(prob.fun, x0[:1], prob.jac, red, step=1 / beta_F, f_star=f_star,
                                       tol=1e-300, maxiter=iters)
    (w0, w1), (b0, b1) = _BIAS_WIN
    ws, bs = np.linspace(w0, w1, 46), np.linspace(b0, b1, 46)
    W, B = np.meshgrid(ws, bs)
    pts = np.stack([W.ravel(), B.ravel()], axis=1)
    R = pts @ prob.A.T - y
    Z = (0.5 * np.mean(R * R, axis=1) - f_star).reshape(W.shape)
    wline = np.linspace(w0, w1, 121)
    return {
        "ws": ws, "bs": bs, "log_gap": np.round(np.log10(np.maximum(Z, 1e-12)), 3),
        "joint_path": joint.iterates, "reduced_path": reduced.lifted,
        "joint_gap": joint.trace["gap"], "reduced_gap": reduced.trace["gap"],
        "graph": np.column_stack([wline, [red.x2(np.array([w]))[0] for w in wline]]),
        "F_curve": np.column_stack([wline, 0.5 * spread ** 2 * (wline - x_star[0]) ** 2]),
        "x_star": x_star, "kappa_f": cf.kappa, "kappa_F": 1.0,
        "iters_f": quadratic_gd_iterations(Hf, x0 - x_star, 1 / cf.beta, tol),
        "iters_F": quadratic_gd_iterations(np.array([[beta_F]]), x0[:1] - x_star[:1], 1 / beta_F, tol),
    }


def _two_panels(left_title: str, right_title: str, split: float = 0.56) -> dict:
    """Layout of a two-panel figure (left: x/y, right: x2/y2) shared by static and live twins."""
    return dict(
        xaxis=dict(domain=[0.0, split - 0.06], title_text=left_title[0]),
        yaxis=dict(title_text=left_title[1]),
        xaxis2=dict(domain=[split + 0.04, 1.0], anchor="y2", title_text=right_title[0]),
        yaxis2=dict(anchor="x2", title_text=right_title[1]),
    )


def bias_traces(xbar: float, spread: float) -> tuple[list, dict]:
    """Traces (and per-step layout) of the bias-elimination figure: contours of f with both paths
    (left), the reduced objective F(w) with its iterates (right)."""
    ex = bias_experiment(float(xbar), float(spread))
    jp, rp, ws = ex["joint_path"], ex["reduced_path"], ex["F_curve"]
    F_at = 0.5 * spread ** 2 * (rp[:, 0] - ex["x_star"][0]) ** 2
    traces = [
        go.Contour(x=ex["ws"], y=ex["bs"], z=ex["log_gap"], colorscale="Viridis", ncontours=25,
                   showscale=False, showlegend=False, contours=dict(showlines=True), line=dict(width=0.5),
                   hovertemplate="w=%{x:.2f}<br>b=%{y:.2f}<br>log10(f - f*)=%{z:.2f}<extra></extra>"),
        go.Scatter(x=ex["graph"][:, 0], y=ex["graph"][:, 1], mode="lines", name="graph of Psi: b = Psi(w)",
                   line=dict(color="white", dash="dash", width=2)),
        go.Scatter(x=jp[:, 0], y=jp[:, 1], mode="lines+markers", name="joint GD on f(w, b)",
                   line=dict(color=color_for(1), width=2), marker=dict(size=5)),
        go.Scatter(x=rp[:, 0], y=rp[:, 1], mode="lines+markers", name="reduced GD on F(w), lifted",
                   line=dict(color=color_for(0), width=3), marker=dict(size=9, symbol="diamond")),
        go.Scatter(x=ws[:, 0], y=ws[:, 1], mode="lines", name="reduced objective F(w) - f*",
                   line=dict(color=color_for(2), width=2.5), xaxis="x2", yaxis="y2"),
        go.Scatter(x=rp[:, 0], y=F_at, mode="markers", name="reduced GD iterates w_t", showlegend=False,
                   marker=dict(color=color_for(0), size=10, symbol="diamond"), xaxis="x2", yaxis="y2"),
    ]
    note = (f"x&#772; = {xbar:g}, spread = {spread:g}:  kappa(f) = {ex['kappa_f']:.3g},  kappa(F) = 1<br>"
            f"GD to gap 1e-8: joint {ex['iters_f']} iterations, reduced {ex['iters_F']}")
    layout = {"annotations": [dict(text=note, x=0.0, y=1.12, xref="paper", yref="paper", showarrow=False,
                                   xanchor="left", yanchor="bottom", align="left", font=dict(size=13))]}
    return traces, layout


def _bias_axes(fig: go.Figure, spread: float) -> go.Figure:
    (w0, w1), (b0, b1) = _BIAS_WIN
    fig.update_layout(**_two_panels(("weight w", "bias b"), ("weight w", "F(w) - f*")))
    fig.update_layout(xaxis=dict(range=[w0, w1]), yaxis=dict(range=[b0, b1]),
                      xaxis2=dict(range=[w0, w1]), yaxis2=dict(range=[0, 2.2 * spread ** 2]),
                      margin=dict(t=120))
    return fig


@lru_cache(maxsize=1)
def _bias_all() -> None:
    """Run every (xbar, spread) of the explorer's grid once, so a slider move only draws."""
    for xb in BIAS_XBARS:
        for sp in BIAS_SPREADS:
            bias_experiment(xb, sp)


def bias_figure(xbar: float = 2.0, spread: float = 1.0) -> go.Figure:
    """Live twin: the bias-elimination figure for one (xbar, spread)."""
    _bias_all()
    traces, layout = bias_traces(xbar, spread)
    fig = go.Figure(traces)
    base_layout(fig, height=520)
    fig.update_layout(**layout)
    return _bias_axes(fig, spread)


def bias_slider_figure(spread: float = 1.0) -> go.Figure:
    """Static twin: a slider over the feature mean xbar (spread fixed)."""
    steps = [SliderStep(f"{xb:g}", *bias_traces(xb, spread)) for xb in BIAS_XBARS]
    fig = slider_figure(steps, slider_label="feature mean x\u0304", active=3, fixed_axes=False, height=560)
    return _bias_axes(fig, spread)


EXPLORER_BIAS = Explorer("03", "bias_elimination", bias_figure, {
    "xbar": Slider("feature mean x\u0304", list(BIAS_XBARS), 2.0),
    "spread": Slider("feature spread", list(BIAS_SPREADS), 1.0),
}, description="Bias elimination: long valley of f(w, b) vs the reduced F(w)")


TOY_Y = np.array([1.5, 0.5])
TOY_U0, TOY_V0 = np.array([-0.3, 1.2]), 0.3
TOY_STEPS = (0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.9)
_TOY_WIN = (-2.5, 2.5)


def toy_problem() -> tuple[MatrixFactorization, ReductionMap]:
    """The tiny factorisation f(u, v) = 1/2 ||u v - y||^2, u in R^2, v in R (a 2 x 1 'matrix')."""
    prob = MatrixFactorization(TOY_Y[:, None], 1)
    return prob, prob.varpro()


@lru_cache(maxsize=32)
def toy_factorization(step: float, iters: int = 60) -> dict:
    """Joint GD on (u, v), reduced GD on u (Euclidean and pullback metric) from the same start."""
    prob, red = toy_problem()
    x0 = np.concatenate([TOY_U0, [TOY_V0]])
    common = dict(step=step, tol=1e-14, maxiter=iters, blowup=1e6)
    return {
        "joint GD": gradient_descent(prob.fun, x0, prob.jac, **common),
        "reduced GD": reduced_gradient_descent(prob.fun, TOY_U0, prob.jac, red, **common),
        "reduced GD (pullback metric)": reduced_gradient_descent(prob.fun, TOY_U0, prob.jac, red,
                                                                 metric="pullback", **common),
    }


@lru_cache(maxsize=1)
def _toy_grid(n: int = 41) -> tuple[np.ndarray, np.ndarray]:
    g = np.linspace(*_TOY_WIN, n)
    U1, U2 = np.meshgrid(g, g)
    dot, nrm2 = U1 * TOY_Y[0] + U2 * TOY_Y[1], np.maximum(U1 ** 2 + U2 ** 2, 1e-12)
    return g, np.round(0.5 * (TOY_Y @ TOY_Y - dot ** 2 / nrm2), 4)   # F(u) = 1/2 ||y||^2 sin^2 angle(u, y)


def toy_traces(step: float) -> tuple[list, dict]:
    """Traces of the tiny-factorisation figure: contours of F(u) with the u-paths (left), loss
    against iteration on a log scale (right)."""
    runs = toy_factorization(float(step))
    g, Z = _toy_grid()
    traces = [go.Contour(x=g, y=g, z=Z, colorscale="Viridis", ncontours=20, showscale=False,
                         showlegend=False, line=dict(width=0.5),
                         hovertemplate="u1=%{x:.2f}<br>u2=%{y:.2f}<br>F(u)=%{z:.3f}<extra></extra>")]
    for i, (name, res) in enumerate(runs.items()):
        path = np.clip(res.iterates[:, :2], 3 * _TOY_WIN[0], 3 * _TOY_WIN[1])
        traces.append(go.Scatter(x=path[:, 0], y=path[:, 1], mode="lines+markers", name=name,
                                 line=dict(color=color_for(i), width=2), marker=dict(size=4)))
    for i, res in enumerate(runs.values()):
        loss = np.clip(np.maximum(res.trace.objective, 1e-16), 1e-16, 1e6)
        traces.append(go.Scatter(x=res.trace.iteration, y=loss, mode="lines", showlegend=False,
                                 name=res.trace.method, line=dict(color=color_for(i), width=2),
                                 xaxis="x2", yaxis="y2"))
    verdicts = [f"{name}: {'diverged' if r.diverged else f'f = {r.fun:.1e}'}" for name, r in runs.items()]
    layout = {"annotations": [dict(text=f"step = {step:g} &nbsp;|&nbsp; " + "; ".join(verdicts), x=0.0, y=1.12,
                                   xref="paper", yref="paper", showarrow=False, xanchor="left",
                                   yanchor="bottom", font=dict(size=12))]}
    return traces, layout


def _toy_axes(fig: go.Figure) -> go.Figure:
    fig.update_layout(**_two_panels(("u<sub>1</sub>", "u<sub>2</sub>"), ("iteration t", "f(u_t, v_t) (log)")))
    fig.update_layout(xaxis=dict(range=list(_TOY_WIN)), yaxis=dict(range=list(_TOY_WIN), scaleanchor=None),
                      xaxis2=dict(range=[0, 60]), yaxis2=dict(type="log", range=[-16, 6]),
                      margin=dict(t=110))
    return fig


@lru_cache(maxsize=1)
def _toy_all() -> None:
    """Run every step size of the explorer's grid once, so a slider move only draws."""
    for s in TOY_STEPS:
        toy_factorization(s)


def toy_figure(step: float = 0.6) -> go.Figure:
    """Live twin: the tiny factorisation landscape with joint and reduced GD at one step size."""
    _toy_all()
    traces, layout = toy_traces(step)
    fig = go.Figure(traces)
    base_layout(fig, height=520)
    fig.update_layout(**layout)
    return _toy_axes(fig)


def toy_slider_figure() -> go.Figure:
    """Static twin: a slider over the step size."""
    steps = [SliderStep(f"{s:g}", *toy_traces(s)) for s in TOY_STEPS]
    fig = slider_figure(steps, slider_label="step size", active=TOY_STEPS.index(0.6), fixed_axes=False,
                        height=560)
    return _toy_axes(fig)


EXPLORER_TOY = Explorer("03", "tiny_factorization", toy_figure, {
    "step": Slider("step size", list(TOY_STEPS), 0.6),
}, description="Tiny factorisation: joint vs reduced GD paths over F(u)")


COUPLINGS = (0.0, 0.2, 0.4, 0.6, 0.8, 0.95)
INTERLACE_N1 = (2, 3, 4, 6, 8)


@lru_cache(maxsize=128)
def interlacing_spectra(coupling: float, n1: int, n: int = 12, seed: int = 3) -> dict:
    """Spectra of H, H11, the Schur complement S and the pullback-metric reduced Hessian for
    H(c) = blockdiag(H) + c * offdiag(H), H = M M^T / n + 0.05 I (a convex combination, so SPD)."""
    c = check_in_range(coupling, "coupling", 0.0, 1.0, closed=(True, False))
    n1 = check_int(n1, "n1", minimum=1)
    M = np.random.default_rng(seed).standard_normal((n, n))
    H1 = M @ M.T / n + 0.05 * np.eye(n)
    mask = np.zeros((n, n), bool)
    mask[:n1, n1:] = mask[n1:, :n1] = True
    H = np.where(mask, c * H1, H1)
    _, red = block_quadratic(H, np.zeros(n), n1)
    S = schur_complement(H, n1)
    P = metric_normalised(S, red.metric(np.zeros(n1)))
    ev = {name: np.linalg.eigvalsh(A) for name, A in
          (("H (joint)", H), ("H11 (freeze x2)", H[:n1, :n1]), ("S (reduced, Euclidean)", S),
           ("reduced, pullback metric", P))}
    return {"eigs": ev, "kappa": {k: v[-1] / v[0] for k, v in ev.items()}}


def interlacing_traces(coupling: float, n1: int) -> tuple[list, dict]:
    """One row of eigenvalue markers per matrix, with lambda_min(H) and lambda_max(H) drawn as lines."""
    sp = interlacing_spectra(float(coupling), int(n1))
    traces = []
    names = list(sp["eigs"])
    for i, name in enumerate(names):
        ev = sp["eigs"][name]
        traces.append(go.Scatter(x=ev, y=[f"{name}<br>kappa = {sp['kappa'][name]:.3g}"] * ev.size,
                                 mode="markers", name=name, marker=dict(size=13, color=color_for(i),
                                                                          symbol="line-ns-open",
                                                                          line=dict(width=3))))
    lo, hi = sp["eigs"][names[0]][[0, -1]]
    layout = {"shapes": [dict(type="line", x0=v, x1=v, y0=0, y1=1, yref="paper", xref="x",
                              line=dict(color="#888", dash="dot")) for v in (lo, hi)]}
    return traces, layout


def _interlacing_axes(fig: go.Figure) -> go.Figure:
    fig.update_xaxes(type="log", range=[-2, 1.0], title_text="eigenvalue (log scale)")
    fig.update_yaxes(title_text="", autorange="reversed", type="category")
    fig.update_layout(showlegend=False, margin=dict(l=230))
    return fig


def interlacing_figure(coupling: float = 0.8, n1: int = 4) -> go.Figure:
    """Live twin: eigenvalues of H, H11, S and the pullback-metric Hessian."""
    traces, layout = interlacing_traces(coupling, n1)
    fig = go.Figure(traces)
    base_layout(fig, height=420)
    fig.update_layout(**layout)
    return _interlacing_axes(fig)


def interlacing_slider_figure(n1: int = 4) -> go.Figure:
    """Static twin: a slider over the coupling strength c."""
    steps = [SliderStep(f"{c:g}", *interlacing_traces(c, n1)) for c in COUPLINGS]
    fig = slider_figure(steps, slider_label="coupling c", active=COUPLINGS.index(0.8), fixed_axes=False,
                        height=460)
    return _interlacing_axes(fig)


EXPLORER_INTERLACING = Explorer("03", "interlacing", interlacing_figure, {
    "coupling": Slider("coupling c", list(COUPLINGS), 0.8),
    "n1": Slider("kept block n1", list(INTERLACE_N1), 4),
}, description="Eigenvalues of H, H11, S and the pullback-metric reduced Hessian")


# --------------------------------------------------------------------------- tables and figures for the chapter


def factorization_records(seed: int = 0) -> list[dict]:
    """One row per method of the matrix-factorisation sweep: best step, iterations at it, largest
    step that converged, seconds per iteration and to the tolerance (wall time, measured once)."""
    sw = factorization_sweep(seed, pullback=True)
    rows = []
    for name, by in sw["runs"].items():
        eta, it, largest = best_step(sw["iters"][name])
        res = by[eta] if eta is not None else None
        rows.append({"method": name, "best step": eta, "iterations": it, "largest stable step": largest,
                     "ms per iteration": 1e3 * sw["sec_per_iter"][name],
                     "ms to tolerance": None if res is None else 1e3 * res.trace.time[-1]})
    als = sw["als"]
    rows.append({"method": "ALS (baseline)", "best step": None, "iterations": als.nit if als.success else None,
                 "largest stable step": None, "ms per iteration": 1e3 * als.trace.time[-1] / max(als.nit, 1),
                 "ms to tolerance": 1e3 * als.trace.time[-1]})
    return rows


def step_sweep_figure(seed: int = 0) -> go.Figure:
    """Iterations to 1/2 ||U V^T - Y||^2 <= 1e-10 against the step size for joint and reduced GD;
    a cross marks a step at which the method diverged or did not converge in 3000 iterations."""
    sw = factorization_sweep(seed, pullback=True)
    fig = go.Figure()
    cap = 3000
    for i, (name, by) in enumerate(sw["iters"].items()):
        steps = np.array(list(by))
        its = np.array([np.nan if v is None else v for v in by.values()], dtype=float)
        fig.add_trace(go.Scatter(x=steps, y=its, mode="lines+markers", name=name,
                                 line=dict(color=color_for(i), width=2.2), marker=dict(size=8)))
        bad = np.isnan(its)
        if bad.any():
            fig.add_trace(go.Scatter(x=steps[bad], y=np.full(bad.sum(), cap), mode="markers",
                                     name=f"{name}: diverged / no convergence",
                                     marker=dict(color=color_for(i), symbol="x", size=12)))
    base_layout(fig, xaxis_title="step size eta", yaxis_title="iterations to f <= 1e-10", logx=True,
                logy=True, height=430, title="Matrix factorisation (30 x 20, rank 3): step-size sweep")
    return fig


def spectra_records(seeds: tuple[int, ...] = (0, 1, 2)) -> list[dict]:
    """beta, mu and zero-eigenvalue counts of f and of F (Euclidean and pullback metric) at a
    generic matrix-factorisation minimiser, one row per trial."""
    rows = []
    for seed in seeds:
        s = factorization_spectra(seed)
        rows.append({"trial": seed, "beta_f": s["f"].beta, "beta_F (pullback)": s["F_pullback"].beta,
                     "beta_F (Euclidean)": s["F"].beta, "mu_f": s["f"].mu, "mu_F (pullback)": s["F_pullback"].mu,
                     "mu_F (Euclidean)": s["F"].mu, "zero eigenvalues f / F": f"{s['f'].n_zero} / {s['F'].n_zero}"})
    return rows
