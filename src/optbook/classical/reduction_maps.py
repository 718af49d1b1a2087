"""Chapter 03: reduction mappings (Markou, Ajanthan and Gould, NeurIPS 2025): the method.

A *reduction mapping* keeps part of the variables, x1, and sets the rest to a known function of
them, x2 = Psi(x1), typically the solution of an inner problem Psi(x1) = argmin_{x2} f(x1, x2).
The outer problem is the *reduced objective* F(x1) = f(Phi(x1)) with Phi(x1) = (x1, Psi(x1)).
The paper shows that a well-designed reduction improves the curvature constants (smaller
smoothness constant, larger Morse-Bott / PL constant), so gradient methods on F converge faster
than on f.

This module is what a user imports: the construction (:class:`ReductionMap`,
:class:`ReducedObjective`), the reduced gradient methods (Euclidean and with the pullback metric
G = J^T J), the baselines (joint gradient descent, alternating gradient descent, alternating least
squares), the curvature diagnostics, and the chapter's problem instances (block quadratics and
their Schur complements, least squares with a bias, low-rank matrix factorisation with variable
projection). It needs numpy and scipy only; the book's experiments, claims and figures live in
:mod:`optbook.classical.reduction_maps_chapter`.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import scipy.linalg

from ..core import (
    Problem,
    Quadratic,
    Result,
    RngLike,
    RunRecorder,
    as_rng,
    check_choice,
    check_in_range,
    check_int,
    check_matrix,
    check_positive,
    check_real,
    check_spd,
    check_vector,
    fd_hessian,
)

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

    def hess_from_joint(self, x1: np.ndarray, hess_f: np.ndarray) -> np.ndarray:
        """J^T hess f(Phi(x1)) J, given hess f at the lifted point.

        The full Hessian of F adds sum_k d_{x2,k} f * hess Psi_k, which vanishes wherever
        grad_2 f = 0: everywhere on the graph of an exact argmin reduction, and at any critical
        point of f. There this matrix *is* hess F, with no finite differences.
        """
        J = self.reduction.jacobian(x1)
        H = check_matrix(hess_f, "hess_f", shape=(J.shape[0], J.shape[0]))
        out = J.T @ H @ J
        return 0.5 * (out + out.T)


def pullback_eigenvalues(hess: np.ndarray, metric: np.ndarray) -> np.ndarray:
    """Eigenvalues of hess in the metric G: the solutions of hess v = lambda G v, ascending.

    They are the eigenvalues of G^{-1/2} hess G^{-1/2} (the Riemannian Hessian of F in the pullback
    metric at a critical point), computed by a generalised symmetric eigensolver
    (``scipy.linalg.eigh(hess, G)``, a Cholesky factorisation of G), without forming G^{-1/2}.
    """
    H = check_matrix(hess, "hess", square=True)
    G = check_spd(metric, "metric", H.shape[0])
    return scipy.linalg.eigh(0.5 * (H + H.T), G, eigvals_only=True)


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


def curvature_constants(hess: np.ndarray, rel_tol: float = 1e-8, metric: np.ndarray | None = None) -> Curvature:
    """beta, mu (on the normal space, i.e. nonzero eigenvalues only) and kappa of a symmetric matrix,
    in the Euclidean metric or, with ``metric`` G, in the metric G (:func:`pullback_eigenvalues`).

    Eigenvalues with |lambda| <= rel_tol * beta count as zero. A clearly negative eigenvalue means
    the point is not a minimiser and raises ValueError.
    """
    H = check_matrix(hess, "hess", square=True)
    rel_tol = check_in_range(rel_tol, "rel_tol", 0.0, 1.0)
    ev = np.linalg.eigvalsh(0.5 * (H + H.T)) if metric is None else pullback_eigenvalues(H, metric)
    beta = float(ev[-1])
    if beta <= 0:
        raise ValueError("hess must have a positive eigenvalue")
    if ev[0] < -1e3 * rel_tol * beta:
        raise ValueError(f"hess has a negative eigenvalue {ev[0]:.3g}: not a minimiser")
    nonzero = ev[np.abs(ev) > rel_tol * beta]
    mu = float(nonzero.min())
    return Curvature(beta, mu, beta / mu, int(ev.size - nonzero.size), ev, rel_tol)


# --------------------------------------------------------------------------- the methods


def _check_run_args(step, stop, tol, f_star, maxiter, blowup, callback) -> tuple:
    """The argument checks every descent method here shares."""
    step = check_positive(step, "step")
    stop = check_choice(stop, "stop", STOPS)
    tol = check_positive(tol, "tol")
    if stop == "gap" and f_star is None:
        raise ValueError("stop='gap' needs f_star")
    if f_star is not None:
        f_star = check_real(f_star, "f_star")
    maxiter = check_int(maxiter, "maxiter", minimum=0)
    blowup = check_in_range(blowup, "blowup", 1.0, np.inf)
    if callback is not None and not callable(callback):
        raise ValueError("callback must be callable")
    return step, stop, tol, f_star, maxiter, blowup


def _descent(value_and_grad, x0, *, step, direction, stop, tol, f_star, maxiter, blowup,
             callback, method_name, lift=False) -> Result:
    """The loop shared by joint and reduced gradient descent (fixed step).

    ``value_and_grad(x) -> (f, g, lifted)``; ``direction(x, g)`` returns the descent direction
    (g itself, or G^{-1} g for the pullback metric). Stops on the tolerance, on divergence
    (non-finite value or f - f* above ``blowup`` times its start), or at ``maxiter``.
    """
    f_ref = 0.0 if f_star is None else f_star
    rec = RunRecorder(method_name, stop=stop, tol=tol, stops=STOPS, f_star=f_star, callback=callback)
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
    if lift:
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
    step, stop, tol, f_star, maxiter, blowup = _check_run_args(step, stop, tol, f_star, maxiter, blowup, callback)

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
    metric = check_choice(metric, "metric", METRICS)
    step, stop, tol, f_star, maxiter, blowup = _check_run_args(step, stop, tol, f_star, maxiter, blowup, callback)
    if metric == "pullback" and reduction.dpsi is None:
        raise ValueError("metric='pullback' needs reduction.dpsi")
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


# --------------------------------------------------------------------------- block quadratics


def _check_split(n1: int, n: int) -> int:
    n1 = check_int(n1, "n1", minimum=1)
    if n1 >= n:
        raise ValueError(f"n1 must be < {n} (the size of H), got {n1}")
    return n1


def schur_complement(H: np.ndarray, n1: int) -> np.ndarray:
    """S = H11 - H12 H22^{-1} H21: the Hessian of the reduced quadratic (argmin reduction of x2)."""
    H = check_spd(H, "H")
    n1 = _check_split(n1, H.shape[0])
    H11, H12, H22 = H[:n1, :n1], H[:n1, n1:], H[n1:, n1:]
    S = H11 - H12 @ scipy.linalg.solve(H22, H12.T, assume_a="pos")
    return 0.5 * (S + S.T)


def block_quadratic(H: np.ndarray, b: np.ndarray, n1: int) -> tuple[Quadratic, ReductionMap]:
    """f(x) = 1/2 x^T H x - b^T x and its argmin reduction Psi(x1) = H22^{-1}(b2 - H21 x1) (affine).

    The reduced objective has Hessian S (the Schur complement) and D Psi = -H22^{-1} H21; the inner
    solve is done once, by a Cholesky factorisation of H22, since Psi is affine.
    """
    H = check_spd(H, "H")
    b = check_vector(b, "b", H.shape[0])
    n1 = _check_split(n1, H.shape[0])
    H22, H21, b2 = H[n1:, n1:], H[n1:, :n1], b[n1:]
    sol = scipy.linalg.solve(H22, np.column_stack([b2, H21]), assume_a="pos")   # H22^{-1} [b2, H21], once
    c, D = sol[:, 0], -sol[:, 1:]

    red = ReductionMap(psi=lambda x1: c + D @ x1, n1=n1, n2=H.shape[0] - n1,
                       dpsi=lambda x1: D, argmin=True, name="Schur (argmin x2)")
    return Quadratic(H, b, name="block quadratic"), red


def random_block_quadratic(n: int = 50, n1: int = 5, ridge: float = 1e-2,
                           rng: RngLike = None) -> tuple[np.ndarray, np.ndarray]:
    """H = M M^T / n + ridge I with M an n x n Gaussian matrix, and b ~ N(0, I) (the chapter's block
    quadratic: Marchenko-Pastur eigenvalues on [0, 4] lifted by ``ridge``, so kappa ~ 4 / ridge)."""
    n = check_int(n, "n", minimum=2)
    _check_split(n1, n)
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
    if lam[0] < -1e-12 * max(abs(lam[-1]), 1.0):
        raise ValueError("A must be positive semi-definite")
    return gd_iterations_from_eig(lam, Q.T @ e0, step, tol, maxiter)


def gd_iterations_from_eig(lam: np.ndarray, c: np.ndarray, step: float, tol: float,
                           maxiter: int = 100000) -> int | None:
    """The count of :func:`quadratic_gd_iterations` from eigenvalues ``lam`` and coordinates
    ``c = Q^T e0`` (for callers that already hold an eigendecomposition)."""
    lam = check_vector(lam, "lam")
    c = check_vector(c, "c", lam.size)
    step = check_positive(step, "step")
    tol = check_positive(tol, "tol")
    maxiter = check_int(maxiter, "maxiter", minimum=0)
    weight = 0.5 * np.maximum(lam, 0.0) * c ** 2
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


# --------------------------------------------------------------------------- least squares with a bias


@dataclass(eq=False)
class LeastSquaresWithBias(Problem):
    """f(w, b) = 1/(2n) ||X w + b 1 - y||^2 on x = (w, b) (the chapter's bias-elimination example)."""

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

    def solution(self) -> np.ndarray:
        """The least-squares minimiser (w*, b*), by ``lstsq`` (no normal equations)."""
        return np.linalg.lstsq(self.A, self.y, rcond=None)[0]

    def reduction(self) -> ReductionMap:
        """Psi(w) = mean(y) - mean(X)^T w: the optimal bias for given weights (argmin over b). The
        reduced objective is least squares on centred data, with Hessian the feature covariance."""
        xbar, ybar = self.X.mean(axis=0), float(self.y.mean())
        d = self.X.shape[1]
        return ReductionMap(psi=lambda w: np.array([ybar - xbar @ w]), n1=d, n2=1,
                            dpsi=lambda w: -xbar[None, :], argmin=True, name="bias elimination")


def bias_data(xbar: float, rho: float = 0.0, spread: float = 1.0, n: int = 40, d: int = 2,
              noise: float = 0.3, rng: RngLike = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """d features with exact sample means ``xbar``, standard deviations ``spread`` and pairwise
    correlations ``rho`` (equicorrelated), and y = X w_true + b_true + noise with the noise
    orthogonal to 1 and to every feature, so that the least-squares minimiser is exactly
    (w_true, b_true) = ((1, -1, 1, ...), -1) whatever the moments are.

    Returns X (n, d), y (n,) and the minimiser (w_true, b_true) as one vector.
    """
    xbar = check_in_range(xbar, "xbar", -1e6, 1e6)
    d = check_int(d, "d", minimum=1)
    rho = check_in_range(rho, "rho", -1.0 / max(d - 1, 1), 1.0)
    spread = check_positive(spread, "spread")
    n = check_int(n, "n", minimum=d + 3)
    noise = check_positive(noise, "noise", allow_zero=True)
    g = as_rng(rng)
    Z = g.standard_normal((n, d))
    Z -= Z.mean(axis=0)
    Qz, _ = np.linalg.qr(Z)                              # exactly whitened: Qz^T Qz = I, mean 0
    C = spread ** 2 * ((1 - rho) * np.eye(d) + rho * np.ones((d, d)))
    X = xbar + np.sqrt(n) * Qz @ np.linalg.cholesky(C).T   # sample covariance (1/n) exactly C
    w_true = np.where(np.arange(d) % 2 == 0, 1.0, -1.0)
    b_true = -1.0
    e = g.standard_normal(n)
    basis = np.column_stack([np.ones(n), X])
    e -= basis @ np.linalg.lstsq(basis, e, rcond=None)[0]
    e *= noise / max(e.std(), 1e-300)
    return X, X @ w_true + b_true + e, np.append(w_true, b_true)


# --------------------------------------------------------------------------- low-rank matrix factorisation


@dataclass(eq=False)
class MatrixFactorization(Problem):
    """f(U, V) = 1/2 ||U V^T - Y||_F^2 on x = (vec U, vec V) (row-major), U: m x r, V: n x r.

    Its minimisers (when sigma_r(Y) > sigma_{r+1}(Y)) form the manifold
    {(U* G, V* G^{-T}) : G in GL(r)} with U* V*^T the best rank-r approximation of Y.
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
        self._sv = np.linalg.svd(self.Y, compute_uv=False)

    @property
    def f_star(self) -> float:
        """The minimum, 1/2 sum_{i > r} sigma_i(Y)^2 (Eckart-Young)."""
        return float(0.5 * np.sum(self._sv[self.r:] ** 2))

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

    def minimiser(self, G: np.ndarray | None = None) -> np.ndarray:
        """The point (U* G, V* G^{-T}) of the solution manifold, U* = U_r S_r^{1/2} and
        V* = V_r S_r^{1/2} from the SVD of Y (balanced when G = I)."""
        if self._sv[self.r - 1] <= (1 + 1e-12) * (self._sv[self.r] if self.r < self._sv.size else 0.0):
            raise ValueError("Y has no unique best rank-r approximation (sigma_r = sigma_{r+1})")
        G = np.eye(self.r) if G is None else check_matrix(G, "G", shape=(self.r, self.r))
        P, s, Qt = np.linalg.svd(self.Y, full_matrices=False)
        root = np.sqrt(s[: self.r])
        U, V = P[:, : self.r] * root, Qt[: self.r].T * root
        try:
            Vg = np.linalg.solve(G, V.T).T                     # V G^{-T}
        except np.linalg.LinAlgError as err:
            raise ValueError("G must be invertible") from err
        return self.join(U @ G, Vg)

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
            pinv = np.linalg.solve(Rm, Qm.T)                 # U^+ = R^{-1} Q^T, no explicit (U^T U)^{-1}
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

    def scalar_reduction(self) -> ReductionMap:
        """Psi_s(U) = Y^T U / s with s = tr(U^T U) / r: the VarPro solution (Y^T U (U^T U)^{-1}) with
        the r x r matrix (U^T U)^{-1} replaced by a scalar, ignoring how U's columns couple.

        It is *not* an argmin reduction: it equals VarPro only where U^T U is a multiple of I. Its
        graph therefore meets the solution manifold in the orthogonal-gauge points alone instead of
        containing it, which violates the condition T S within range J under which the paper's
        Morse-Bott improvement holds. The chapter uses it as the negative control.
        """
        m, n, r, Y = self.m, self.n, self.r, self.Y

        def scale(U):
            s = float(np.sum(U * U)) / r
            if s <= 1e-300:
                raise ValueError("U must be nonzero")
            return s

        def psi(u):
            U = u.reshape(m, r)
            return (Y.T @ U / scale(U)).ravel()

        def dpsi(u):
            U = u.reshape(m, r)
            s = scale(U)
            # dV = Y^T dU / s - (Y^T U / s^2) ds,  ds = 2 <U, dU> / r
            D = np.einsum("ik,ab->kaib", Y, np.eye(r)) / s
            D -= np.einsum("ka,ib->kaib", Y.T @ U, U) * (2.0 / (r * s * s))
            return D.reshape(n * r, m * r)

        return ReductionMap(psi=psi, n1=m * r, n2=n * r, dpsi=dpsi, argmin=False, name="scalar reduction")


def make_factorization(m: int = 30, n: int = 20, r: int = 3, noise: float = 0.0, init_scale: float = 0.5,
                       rng: RngLike = None) -> tuple[MatrixFactorization, np.ndarray, np.ndarray]:
    """Y = U0 V0^T + N with Gaussian factors (rank r), scaled to spectral norm 1, and a small random
    start (U, V) with entries ~ N(0, init_scale^2 / max(m, n)).

    ``noise`` sets the spectral norm of the Gaussian noise N relative to sigma_r(U0 V0^T), the
    weakest signal direction (0: exactly rank r). Returns the problem, the flat joint start x0 and
    the clean factor U0 (scaled like Y).
    """
    m = check_int(m, "m", minimum=1)
    n = check_int(n, "n", minimum=1)
    r = check_int(r, "r", minimum=1)
    if r > min(m, n):
        raise ValueError(f"r must be <= min(m, n) = {min(m, n)}, got {r}")
    noise = check_positive(noise, "noise", allow_zero=True)
    init_scale = check_positive(init_scale, "init_scale")
    g = as_rng(rng)
    U0, V0 = g.standard_normal((m, r)), g.standard_normal((n, r))
    Y = U0 @ V0.T
    if noise > 0:
        N = g.standard_normal((m, n))
        Y = Y + noise * np.linalg.svd(Y, compute_uv=False)[r - 1] * N / np.linalg.norm(N, 2)
    scale = np.linalg.norm(Y, 2)
    prob = MatrixFactorization(Y / scale, r)
    x0 = init_scale / np.sqrt(max(m, n)) * g.standard_normal(prob.dim)
    return prob, x0, U0 / np.sqrt(scale)


def _check_factorization(problem) -> MatrixFactorization:
    if not isinstance(problem, MatrixFactorization):
        raise ValueError(f"problem must be a MatrixFactorization, got {type(problem).__name__}")
    return problem


def alternating_least_squares(problem: MatrixFactorization, U0: np.ndarray, *, tol: float = 1e-10,
                              f_star: float | None = None, maxiter: int = 500,
                              method_name: str = "ALS") -> Result:
    """Alternating minimisation (baseline): V <- argmin_V f(U, V), then U <- argmin_U f(U, V).

    One trace row per sweep, the objective after the V update (so row 0 is F(U0), like VarPro).
    Stops when f - f_star <= tol (``f_star`` defaults to the problem's minimum).
    """
    problem = _check_factorization(problem)
    U = check_matrix(U0, "U0", shape=(problem.m, problem.r))
    tol = check_positive(tol, "tol")
    f_star = problem.f_star if f_star is None else check_real(f_star, "f_star")
    maxiter = check_int(maxiter, "maxiter", minimum=0)
    Y = problem.Y
    rec = RunRecorder(method_name, stop="gap", tol=tol, stops=STOPS, f_star=f_star)
    message, success = "maximum number of iterations reached", False
    rec.trace.restart_clock()
    for t in range(maxiter + 1):
        V = np.linalg.lstsq(U, Y, rcond=None)[0].T
        R = U @ V.T - Y
        if rec.record(problem.join(U, V), 0.5 * float(np.sum(R * R)), float(np.linalg.norm(R @ V))):
            message, success = "stopping tolerance reached", True
            break
        if t == maxiter:
            break
        U = np.linalg.lstsq(V, Y.T, rcond=None)[0].T
    return rec.result(problem.join(U, V), rec.trace.objective[-1], success=success, message=message,
                      nfev=len(rec.trace), njev=len(rec.trace))


def alternating_gradient_descent(problem: MatrixFactorization, x0: np.ndarray, *, step: float,
                                 tol: float = 1e-10, f_star: float | None = None, maxiter: int = 10000,
                                 blowup: float = 1e8, callback: Callable[[np.ndarray], None] | None = None,
                                 method_name: str = "alternating GD") -> Result:
    """Alternating gradient descent (baseline): the VarPro inner solve replaced by one gradient step.

    V <- V - grad_V f(U, V) / lambda_max(U^T U)   (the inner least squares' own best fixed step),
    U <- U - step * grad_U f(U, V).
    One trace row per sweep, the objective after the V step; stops when f - f_star <= tol.
    """
    problem = _check_factorization(problem)
    x = check_vector(x0, "x0", problem.dim)
    f_star = problem.f_star if f_star is None else f_star
    step, _, tol, f_star, maxiter, blowup = _check_run_args(step, "gap", tol, f_star, maxiter, blowup, callback)
    Y = problem.Y
    U, V = (a.copy() for a in problem.split(x))
    rec = RunRecorder(method_name, stop="gap", tol=tol, stops=STOPS, f_star=f_star, callback=callback)
    rec.trace.meta["step"] = step
    message, success, diverged, f0 = "maximum number of iterations reached", False, False, None
    rec.trace.restart_clock()
    for t in range(maxiter + 1):
        lam = float(np.linalg.eigvalsh(U.T @ U)[-1])
        if lam > 0:
            V = V - ((U @ V.T - Y).T @ U) / lam
        R = U @ V.T - Y
        f, gU = 0.5 * float(np.sum(R * R)), R @ V
        gnorm = float(np.linalg.norm(gU))
        if not (np.isfinite(f) and np.isfinite(gnorm)):
            message, diverged = "diverged (non-finite value)", True
            break
        f0 = f if f0 is None else f0
        if rec.record(problem.join(U, V), f, gnorm, step_size=step):
            message, success = "stopping tolerance reached", True
            break
        if f - f_star > blowup * max(f0 - f_star, 1e-300):
            message, diverged = f"diverged (f - f* grew by more than {blowup:g}x)", True
            break
        if t == maxiter:
            break
        U = U - step * gU
    last = rec.iterates[-1] if rec.iterates else x
    return rec.result(last, rec.trace.objective[-1] if len(rec.trace) else np.nan, success=success,
                      message=message, nfev=len(rec.trace), njev=len(rec.trace), diverged=diverged)


def factorization_flops(m: int, n: int, r: int) -> dict[str, int]:
    """Multiply-adds one iteration of each method needs on an m x n, rank-r factorisation (leading
    terms of a careful implementation; an m x n x r product is the unit that dominates).

    joint GD: R = U V^T - Y, R V, R^T U (3 products).  Reduced GD (VarPro): Q^T Y, R = U V^T - Y,
    R V (3), plus the QR of U (2 m r^2) and two r x r triangular solves (2 n r^2).  Alternating GD:
    two products for the V step, two for the U step, plus U^T U (m r^2).  Scalar reduction:
    Y^T U, U (U^T Y), R (Y^T U), R^T U, Y (R^T U) (5).  ALS: one product per half sweep and one for
    the objective (3), plus the QR factorisations of U and V.
    """
    m, n, r = (check_int(v, k, minimum=1) for v, k in ((m, "m"), (n, "n"), (r, "r")))
    p = m * n * r
    return {"joint GD": 3 * p, "reduced GD": 3 * p + 2 * m * r * r + 2 * n * r * r,
            "alternating GD": 4 * p + m * r * r, "scalar reduction": 5 * p + m * r,
            "ALS": 3 * p + 2 * (m + n) * r * r + (m + n) * r * r}
