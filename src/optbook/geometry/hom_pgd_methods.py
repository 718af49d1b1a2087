"""Chapter 10: Hom-PGD, projection-free optimization through a homeomorphism to the ball
(Liu, Liang and Chen, NeurIPS 2025).

A compact convex set K with a strictly interior point x0 is the image of the unit ball under the
*gauge map* psi(z) = x0 + z ||z|| / gamma_K(z), where gamma_K is the Minkowski gauge of K - x0.
Hom-PGD runs projected gradient descent on h(z) = f(psi(z)) over the ball, whose projection is a
rescaling: every iterate x_k = psi(z_k) is feasible and no LP, QP or projection is solved.

:class:`GaugeSet` holds K (halfspaces, a box, balls, convex quadratics; the gauge of the
intersection is the max of the gauges), its map, inverse and closed-form vector-Jacobian product.
:func:`hom_pgd` is the method; :func:`pgd_projection` (exact projection through the dual, with
L-BFGS-B), :func:`frank_wolfe` (HiGHS linear oracle; vanilla, away-step and pairwise) and
:func:`quadratic_penalty` are the baselines. Every method has the ``scipy.optimize.minimize``
shape and returns a :class:`~optbook.core.Result` with a ``trace``.

The book's experiments, figures and claims are in :mod:`optbook.geometry.hom_pgd_chapter`.
"""
from __future__ import annotations

import os
import sys
from collections.abc import Callable, Sequence
from contextlib import contextmanager

import numpy as np
from scipy.optimize import linprog, minimize
from scipy.sparse import csc_matrix

from ..core import (
    Result,
    RunRecorder,
    as_rng,
    check_choice,
    check_in_range,
    check_int,
    check_matrix,
    check_positive,
    check_vector,
)

Fun = Callable[[np.ndarray], float]
Jac = Callable[[np.ndarray], np.ndarray]


# --------------------------------------------------------------------------- the set and its map


def _bounds(v, name: str, n: int, bad_inf: float) -> np.ndarray | None:
    """A length-n bound vector (None stays None); NaN and the wrong infinity are refused."""
    if v is None:
        return None
    arr = np.asarray(v, dtype=float)
    if arr.shape != (n,) or np.isnan(arr).any() or (arr == bad_inf).any():
        sign = "+" if bad_inf < 0 else "-"
        raise ValueError(f"{name} must be a length-{n} array of numbers or {sign}inf")
    return arr


def chebyshev_center(A: np.ndarray, b: np.ndarray, lower: np.ndarray | None = None,
                     upper: np.ndarray | None = None) -> tuple[np.ndarray, float]:
    """Centre and radius of the largest ball inside {x : Ax <= b, lower <= x <= upper}.

    Solves the LP  max r  s.t.  a_j^T x + r ||a_j|| <= b_j  (box rows included) with HiGHS;
    the paper's recipe for a strictly interior point x0.
    """
    A = check_matrix(A, "A")
    n = A.shape[1]
    b = check_vector(b, "b", A.shape[0])
    rows, rhs = [A], [b]
    lo, up = _bounds(lower, "lower", n, np.inf), _bounds(upper, "upper", n, -np.inf)
    if lo is not None:
        keep = np.isfinite(lo)
        rows.append(-np.eye(n)[keep])
        rhs.append(-lo[keep])
    if up is not None:
        keep = np.isfinite(up)
        rows.append(np.eye(n)[keep])
        rhs.append(up[keep])
    M, h = np.vstack(rows), np.concatenate(rhs)
    norms = np.linalg.norm(M, axis=1)
    c = np.zeros(n + 1)
    c[-1] = -1.0
    res = linprog(c, A_ub=np.hstack([M, norms[:, None]]), b_ub=h,
                  bounds=[(None, None)] * n + [(0, None)], method="highs")
    if res.status != 0 or res.x[-1] <= 0:
        raise ValueError("the polytope has no interior (or is unbounded): no Chebyshev centre")
    return res.x[:n], float(res.x[-1])


class GaugeSet:
    """A compact convex set K = {Ax <= b} ∩ box ∩ balls ∩ convex quadratics, seen from x0.

    Parameters
    ----------
    A, b : arrays, optional
        Halfspaces a_j^T x <= b_j.
    lower, upper : arrays, optional
        A box (entries may be infinite if other constraints keep K bounded).
    balls : sequence of (c, r)
        Balls ||x - c|| <= r.
    quadratics : sequence of (Q, q, beta)
        Convex quadratics 1/2 x^T Q x + q^T x <= beta with Q symmetric positive semidefinite.
    center : array, optional
        The interior point x0 (the paper's centre of the homeomorphism). Default: the Chebyshev
        centre of the linear part, which needs no curved constraint.

    Notes
    -----
    For a direction y, the gauge gamma_j(y) = 1 / t_j*(y), with t_j* the exit time of the ray
    x0 + t y through constraint j, is in closed form for each family: max(a_j^T y, 0)/s_j for a
    halfspace with slack s_j, and the positive root of a scalar quadratic for balls and
    quadratics. The gauge of K is max_j gamma_j (the gauge of an intersection is the max).
    """

    def __init__(self, A=None, b=None, *, lower=None, upper=None, balls: Sequence = (),
                 quadratics: Sequence = (), center=None) -> None:
        n = None
        if (A is None) != (b is None):
            raise ValueError("give A and b together")
        if A is not None:
            self.A = check_matrix(A, "A")
            n = self.A.shape[1]
            self.b = check_vector(b, "b", self.A.shape[0])
        for v in (lower, upper):
            if n is None and v is not None and np.ndim(v) == 1:
                n = len(v)
        quads = []
        for i, ball in enumerate(balls):
            if len(ball) != 2:
                raise ValueError(f"balls[{i}] must be a pair (c, r)")
            c = check_vector(ball[0], f"balls[{i}] centre", n)
            n = c.size
            r = check_positive(ball[1], f"balls[{i}] radius")
            # ||x - c||^2 <= r^2, written (x - c)^T (x - c) - r^2 <= 0 so the slack keeps its scale.
            quads.append((2.0 * np.eye(n), -2.0 * c, r * r - float(c @ c)))
        for i, quad in enumerate(quadratics):
            if len(quad) != 3:
                raise ValueError(f"quadratics[{i}] must be a triple (Q, q, beta)")
            Q = check_matrix(quad[0], f"quadratics[{i}] Q", shape=(n, n), square=True)
            n = Q.shape[0]
            if not np.allclose(Q, Q.T, atol=1e-12 * max(1.0, np.abs(Q).max())):
                raise ValueError(f"quadratics[{i}] Q must be symmetric")
            if np.linalg.eigvalsh(Q).min() < -1e-12 * max(1.0, np.abs(Q).max()):
                raise ValueError(f"quadratics[{i}] Q must be positive semidefinite (convex)")
            q = check_vector(quad[1], f"quadratics[{i}] q", n)
            beta = quad[2]
            if isinstance(beta, bool) or not np.isscalar(beta) or not np.isfinite(beta):
                raise ValueError(f"quadratics[{i}] beta must be a finite number")
            quads.append((0.5 * (Q + Q.T), q, float(beta)))
        if n is None:
            raise ValueError("K needs at least one constraint (A, b), a box, a ball or a quadratic")
        self.n = n
        if A is None:
            self.A, self.b = np.zeros((0, n)), np.zeros(0)
        lo, up = _bounds(lower, "lower", n, np.inf), _bounds(upper, "upper", n, -np.inf)
        self.lower = np.full(n, -np.inf) if lo is None else lo
        self.upper = np.full(n, np.inf) if up is None else up
        if np.any(self.lower >= self.upper):
            raise ValueError("lower must be < upper in every coordinate")
        self.quads = quads
        if center is None:
            if quads:
                raise ValueError("with balls or quadratics, give the interior point center")
            center, _ = chebyshev_center(self.A, self.b, self.lower, self.upper)
        self.x0 = check_vector(center, "center", n)
        self._prepare()

    def _prepare(self) -> None:
        x0 = self.x0
        self.slack = self.b - self.A @ x0
        up, lo = self.upper - x0, x0 - self.lower
        worst = min([np.inf, *self.slack, *up, *lo])
        qs = []
        for Q, q, beta in self.quads:
            s = beta - (0.5 * x0 @ Q @ x0 + q @ x0)
            worst = min(worst, s)
            qs.append((Q, Q @ x0 + q, s))
        if not worst > 0:
            raise ValueError("center must be strictly inside K (every constraint slack > 0)")
        self._qs = qs
        self._inv_up = np.where(np.isfinite(up), 1.0 / up, 0.0)
        self._inv_lo = np.where(np.isfinite(lo), 1.0 / lo, 0.0)
        self._As = self.A / self.slack[:, None]
        # A ray that no constraint stops means K is unbounded (gauge 0): check the axes and a
        # few random directions, the cheap part of compactness.
        probe = np.vstack([np.eye(self.n), -np.eye(self.n),
                           np.random.default_rng(0).standard_normal((32, self.n))])
        if np.any(self.gauge(probe) <= 0):
            raise ValueError("K must be bounded: some direction from center never leaves it (add a box)")

    def _rows(self, Y, name: str) -> tuple[np.ndarray, bool]:
        """Y as a finite (k, n) array, and whether it was one vector."""
        try:
            arr = np.asarray(Y, dtype=float)
        except (TypeError, ValueError) as err:
            raise ValueError(f"{name} must be an array of numbers") from err
        if arr.ndim not in (1, 2) or arr.shape[-1] != self.n or arr.size == 0:
            raise ValueError(f"{name} must have shape ({self.n},) or (k, {self.n}), got {arr.shape}")
        if not np.isfinite(arr).all():
            raise ValueError(f"{name} must be finite (found NaN or inf)")
        return np.atleast_2d(arr), arr.ndim == 1

    # ------------------------------------------------------------------ gauges
    def gauges(self, Y: np.ndarray) -> np.ndarray:
        """Per-constraint gauges gamma_j(y) for each row of ``Y`` (k x n): one column per
        halfspace, then upper and lower box faces, then each ball/quadratic."""
        Y, _ = self._rows(Y, "Y")
        cols = [np.maximum(Y @ self._As.T, 0.0), np.maximum(Y * self._inv_up, 0.0),
                np.maximum(-Y * self._inv_lo, 0.0)]
        for Q, w, s in self._qs:
            bb = Y @ w
            qq = np.maximum(np.einsum("ki,ij,kj->k", Y, Q, Y), 0.0)
            root = np.sqrt(bb * bb + 2.0 * s * qq)
            # The positive root of s g^2 - bb g - qq/2 = 0. For bb < 0 the textbook form
            # (bb + root) / 2s cancels catastrophically; its conjugate qq / (root - bb) does not.
            den = np.where(bb >= 0, 2.0 * s, root - bb)
            num = np.where(bb >= 0, bb + root, qq)
            cols.append(np.divide(num, den, out=np.zeros_like(num), where=den > 0)[:, None])
        return np.hstack(cols)

    def gauge(self, Y: np.ndarray) -> np.ndarray | float:
        """Minkowski gauge gamma_K(y) = inf{lambda > 0 : x0 + y/lambda in K} (max over constraints);
        a float for one vector, an array for the rows of a matrix."""
        Y2, one = self._rows(Y, "Y")
        g = self.gauges(Y2).max(axis=1)
        return float(g[0]) if one else g

    def gauge_grad(self, y: np.ndarray) -> np.ndarray:
        """Gradient of gamma_K at y: the gradient of the largest (active) constraint gauge (at a
        tie, the first of the tied constraints: one element of the subdifferential)."""
        y = check_vector(y, "y", self.n)
        return self._grad_of(int(np.argmax(self.gauges(y)[0])), y)

    def _grad_of(self, j: int, y: np.ndarray) -> np.ndarray:
        """Gradient of the j-th constraint gauge (column j of :meth:`gauges`) at y."""
        m, n = self.A.shape[0], self.n
        if j < m:
            return self._As[j].copy()
        j -= m
        if j < n:
            e = np.zeros(n)
            e[j] = self._inv_up[j]
            return e
        j -= n
        if j < n:
            e = np.zeros(n)
            e[j] = -self._inv_lo[j]
            return e
        Q, w, s = self._qs[j - n]
        bb, Qy = float(y @ w), Q @ y
        root = np.sqrt(bb * bb + 2.0 * s * max(float(y @ Qy), 0.0))
        gam = self.gauges(y)[0, m + 2 * n + (j - n)]
        # Implicit differentiation of s g^2 - (w.y) g - y^T Q y / 2 = 0: no cancellation.
        return (Qy + gam * w) / root if root > 0 else np.zeros(n)

    # ------------------------------------------------------------------ map, inverse, VJP
    def psi(self, Z: np.ndarray) -> np.ndarray:
        """The homeomorphism psi(z) = x0 + z ||z|| / gamma_K(z) from the unit ball onto K (rows of a
        matrix are mapped one by one); psi(0) = x0."""
        Z2, one = self._rows(Z, "Z")
        r = np.linalg.norm(Z2, axis=1)
        g = self.gauges(Z2).max(axis=1)
        scale = np.divide(r, g, out=np.zeros_like(r), where=r > 0)
        X = self.x0 + Z2 * scale[:, None]
        return X[0] if one else X

    def psi_inv(self, X: np.ndarray) -> np.ndarray:
        """The inverse map psi^{-1}(x) = (x - x0) gamma_K(x - x0) / ||x - x0|| (norm <= 1 iff x in K)."""
        X2, one = self._rows(X, "X")
        Y = X2 - self.x0
        r = np.linalg.norm(Y, axis=1)
        g = self.gauges(Y).max(axis=1)
        scale = np.divide(g, r, out=np.zeros_like(r), where=r > 0)
        Z = Y * scale[:, None]
        return Z[0] if one else Z

    def vjp(self, z: np.ndarray, g: np.ndarray) -> np.ndarray:
        """Closed-form vector-Jacobian product J_psi(z)^T g, the latent gradient of h = f o psi.

        With r = ||z|| and gamma = gamma_K(z): psi(z) = x0 + r z / gamma, so
        J^T g = (r g + (z.g / r) z) / gamma - (r z.g / gamma^2) grad gamma(z).
        Valid wherever one constraint is active and z != 0 (psi is not differentiable at 0 or on
        the kinks where the active constraint changes; there it uses the first tied constraint).
        """
        z = check_vector(z, "z", self.n)
        g = check_vector(g, "g", self.n)
        r = float(np.linalg.norm(z))
        if r == 0.0:
            raise ValueError("z must be nonzero: psi is not differentiable at z = 0")
        gs = self.gauges(z)[0]
        j = int(np.argmax(gs))
        gam = float(gs[j])
        zg = float(z @ g)
        return (r * g + (zg / r) * z) / gam - (r * zg / gam ** 2) * self._grad_of(j, z)

    def constraint_values(self, X: np.ndarray) -> np.ndarray:
        """g_j(x) for every constraint (<= 0 means satisfied); rows of a matrix one by one."""
        X2, one = self._rows(X, "X")
        fin_u, fin_l = np.isfinite(self.upper), np.isfinite(self.lower)
        cols = [X2 @ self.A.T - self.b, (X2 - self.upper)[:, fin_u], (self.lower - X2)[:, fin_l]]
        for Q, q, beta in self.quads:
            cols.append((0.5 * np.einsum("ki,ij,kj->k", X2, Q, X2) + X2 @ q - beta)[:, None])
        out = np.hstack(cols)
        return out[0] if one else out

    def max_violation(self, x: np.ndarray) -> float:
        """max_j g_j(x): negative inside K, 0 on the boundary, positive outside."""
        return float(np.max(self.constraint_values(check_vector(x, "x", self.n))))

    def polytope(self) -> tuple[np.ndarray, np.ndarray]:
        """(M, h) with K = {Mx <= h}: the halfspaces and finite box faces (no curved families)."""
        if self.quads:
            raise ValueError("K has curved constraints: it is not a polytope")
        fin_u, fin_l = np.isfinite(self.upper), np.isfinite(self.lower)
        eye = np.eye(self.n)
        M = np.vstack([self.A, eye[fin_u], -eye[fin_l]])
        return M, np.concatenate([self.b, self.upper[fin_u], -self.lower[fin_l]])


def _check_set(K) -> GaugeSet:
    if not isinstance(K, GaugeSet):
        raise ValueError(f"K must be a GaugeSet, got {type(K).__name__}")
    return K


# --------------------------------------------------------------------------- shared run record


class _Run(RunRecorder):
    """The shared recorder, logging each iterate's constraint violation max_j g_j(x) too."""

    def __init__(self, name, K, f_star, tol, stop, callback):
        super().__init__(name, stop=stop, tol=tol, stops=("gap", "grad_norm"), f_star=f_star,
                         callback=callback)
        self.K = K

    def record(self, x, f, gnorm, **extra) -> bool:
        return super().record(x, f, gnorm, violation=self.K.max_violation(x), **extra)


def _start(x0, K, fun, jac):
    K = _check_set(K)
    x = check_vector(x0, "x0", K.n)
    if K.max_violation(x) > 1e-12 * max(1.0, float(np.abs(x).max())):
        raise ValueError("x0 must lie in K")
    if not callable(fun) or not callable(jac):
        raise ValueError("fun and jac must be callable")
    return K, x


def _evaluate(fun, jac, x, n) -> tuple[float, np.ndarray]:
    """f(x) and grad f(x), checked: a NaN from the user's objective stops nothing silently."""
    f = float(fun(x))
    g = np.asarray(jac(x), dtype=float)
    if g.shape != (n,):
        raise ValueError(f"jac must return an array of shape ({n},), got {g.shape}")
    if not (np.isfinite(f) and np.isfinite(g).all()):
        raise ValueError("fun or jac returned a non-finite value at a feasible point")
    return f, g


# --------------------------------------------------------------------------- Hom-PGD


def _ball(z: np.ndarray) -> np.ndarray:
    """Projection onto the unit ball."""
    return z / max(1.0, float(np.linalg.norm(z)))


def hom_pgd(
    fun: Fun,
    x0: np.ndarray,
    jac: Jac,
    *,
    K: GaugeSet,
    eta: float = 0.1,
    momentum: float = 0.0,
    step_rule: str = "constant",
    decay: float = 0.999,
    min_eta: float = 1e-6,
    tol: float = 1e-10,
    stop: str = "gap",
    f_star: float | None = None,
    maxiter: int = 1000,
    rng=None,
    callback: Callable[[np.ndarray], None] | None = None,
    method_name: str = "Hom-PGD",
) -> Result:
    """Hom-PGD: projected gradient descent on h(z) = f(psi(z)) over the unit ball (the paper's
    method, 'Hom-PGD'; the loop of the authors' repository).

    Parameters
    ----------
    fun, jac : callables
        Objective f on K and its gradient.
    x0 : array
        A feasible start; the latent start is z_0 = psi^{-1}(x0) (jittered by 1e-6 in a random
        direction when x0 is the centre, where psi is not differentiable).
    K : GaugeSet
        The constraint set with its interior point.
    eta : float
        The latent step size. The paper's rates are for a constant step of order 1/L_h, where
        L_h is the smoothness constant of h (about L_f R^2 for R the largest distance from x0 to
        the boundary of K).
    momentum : float
        Heavy-ball momentum in [0, 1) (torch.optim.SGD's rule v = momentum v + grad h). The
        repository's default acceleration averages instead, m = momentum m + (1 - momentum) grad h,
        which is the same iteration with eta scaled by (1 - momentum).
    step_rule : {'constant', 'adaptive', 'diminish'}
        'constant': eta throughout (the paper's rule). 'adaptive' (the repository's default):
        eta <- max(decay eta, min_eta) after every step that raised f. 'diminish' (the
        repository's other rule): eta / sqrt(k + 1), floored at min_eta. No rule searches along
        the step, so none can stall at a kink of h, where a backtracking search shrinks its step
        to nothing.
    decay, min_eta : the 'adaptive' and 'diminish' rules' constants.
    tol, stop, f_star : stopping rule: the gap f - f* (needs f_star) or the norm of the
        gradient mapping ||z - P(z - grad h(z))|| (the stationarity measure of projected gradient
        methods; it vanishes at a solution on the sphere, where grad h does not) at most tol.

    Returns
    -------
    Result
        ``x, fun, nit, nfev, njev, success, message, trace, iterates`` and ``z`` (final latent
        point) and ``latent`` (every z_k). The trace has the series ``gap``, ``violation`` (max_j
        g_j(x_k), <= 0 means feasible), ``z_norm`` and ``step_size``.
    """
    K, x = _start(x0, K, fun, jac)
    step_rule = check_choice(step_rule, "step_rule", ("constant", "adaptive", "diminish"))
    eta = check_positive(eta, "eta")
    beta = check_in_range(momentum, "momentum", 0.0, 1.0, closed=(True, False))
    decay = check_in_range(decay, "decay", 0.0, 1.0, closed=(False, True))
    min_eta = check_positive(min_eta, "min_eta")
    maxiter = check_int(maxiter, "maxiter", minimum=0)
    run = _Run(method_name, K, f_star, tol, stop, callback)
    z = K.psi_inv(x)
    if np.linalg.norm(z) < 1e-9:
        u = as_rng(rng).standard_normal(K.n)
        z = 1e-6 * u / np.linalg.norm(u)
    x = K.psi(z)
    f, g = _evaluate(fun, jac, x, K.n)
    nfev = njev = 1
    latent, v = [z.copy()], np.zeros(K.n)
    message, success = "maximum number of iterations reached", False
    for k in range(maxiter + 1):
        gz = K.vjp(z, g)
        if run.record(x, f, float(np.linalg.norm(z - _ball(z - gz))), z_norm=float(np.linalg.norm(z))):
            message, success = "stopping tolerance reached", True
            break
        if k == maxiter:
            break
        lr = max(eta / np.sqrt(k + 1.0), min_eta) if step_rule == "diminish" else eta
        v = beta * v + gz
        z_new = _ball(z - lr * v)
        if not np.any(z_new):
            message = "landed on the centre z = 0, where psi is not differentiable"
            break
        x_new = K.psi(z_new)
        f_new, g_new = _evaluate(fun, jac, x_new, K.n)
        nfev += 1
        njev += 1
        if step_rule == "adaptive" and f_new > f:
            eta = max(eta * decay, min_eta)
        run.set_step(lr)
        z, x, f, g = z_new, x_new, f_new, g_new
        latent.append(z.copy())
    return run.result(x, f, success=success, message=message, nfev=nfev, njev=njev, z=z, latent=np.array(latent))


# --------------------------------------------------------------------------- baselines


def project_polytope(y: np.ndarray, M: np.ndarray, h: np.ndarray, lam0: np.ndarray | None = None,
                     tol: float = 1e-12, maxiter: int = 5000) -> tuple[np.ndarray, np.ndarray]:
    """Euclidean projection of y onto {x : Mx <= h} through the dual problem
    min_{lam >= 0} 1/2 ||M^T lam||^2 - lam^T (My - h), solved by L-BFGS-B; x = y - M^T lam,
    then polished on the active set the dual found.

    Returns (x, lam); ``lam0`` warm-starts the dual; ``tol`` is L-BFGS-B's projected-gradient
    tolerance and ``maxiter`` its iteration cap.
    """
    M = check_matrix(M, "M")
    y = check_vector(y, "y", M.shape[1])
    h = check_vector(h, "h", M.shape[0])
    tol = check_positive(tol, "tol")
    maxiter = check_int(maxiter, "maxiter", minimum=1)
    lam = np.zeros(M.shape[0]) if lam0 is None else np.maximum(check_vector(lam0, "lam0", M.shape[0]), 0.0)
    r = M @ y - h
    if np.all(r <= 0):
        return y.copy(), np.zeros(M.shape[0])

    def dual(lam):
        w = M.T @ lam
        return 0.5 * float(w @ w) - float(lam @ r), M @ w - r

    res = minimize(dual, lam, jac=True, method="L-BFGS-B", bounds=[(0.0, None)] * M.shape[0],
                   options={"gtol": tol, "ftol": 1e-16, "maxiter": maxiter, "maxcor": 20})
    lam = res.x
    x = y - M.T @ lam
    # Polish on the active set the dual found (exact if it is the right one): x - y is the
    # min-norm solution of M_act (x - y) = h_act - M_act y, and M_act^T mu = y - x gives the
    # multipliers; both by lstsq (SVD), never the normal equations M_act M_act^T.
    act = (lam > 0) | (M @ x - h > -1e-9)
    if act.any():
        Ma = M[act]
        d = np.linalg.lstsq(Ma, -r[act], rcond=None)[0]
        mu = np.linalg.lstsq(Ma.T, -d, rcond=None)[0]
        x_pol = y + d
        if np.all(mu >= -1e-12) and np.max(M @ x_pol - h) <= max(1e-12, float(np.max(M @ x - h))):
            lam = np.zeros_like(lam)
            lam[act] = np.maximum(mu, 0.0)
            x = x_pol
    return x, lam


def pgd_projection(
    fun: Fun,
    x0: np.ndarray,
    jac: Jac,
    *,
    K: GaugeSet,
    eta: float = 1.0,
    tol: float = 1e-10,
    stop: str = "gap",
    f_star: float | None = None,
    maxiter: int = 1000,
    callback: Callable[[np.ndarray], None] | None = None,
    method_name: str = "PGD (exact projection)",
) -> Result:
    """Projected gradient descent x+ = Pi_K(x - eta grad f(x)) with the exact projection of
    :func:`project_polytope`, warm-started from the previous dual (the paper's PGD baseline).
    K must be a polytope. ``stop='grad_norm'`` stops on the gradient mapping ||x - x+|| / eta."""
    K, x = _start(x0, K, fun, jac)
    M, h = K.polytope()
    eta = check_positive(eta, "eta")
    maxiter = check_int(maxiter, "maxiter", minimum=0)
    run = _Run(method_name, K, f_star, tol, stop, callback)
    f, g = _evaluate(fun, jac, x, K.n)
    lam = None
    message, success = "maximum number of iterations reached", False
    for k in range(maxiter + 1):
        x_plus, lam = project_polytope(x - eta * g, M, h, lam)
        if run.record(x, f, float(np.linalg.norm(x - x_plus)) / eta):
            message, success = "stopping tolerance reached", True
            break
        if k == maxiter:
            break
        run.set_step(eta)
        x = x_plus
        f, g = _evaluate(fun, jac, x, K.n)
    n_it = len(run.trace)
    return run.result(x, f, success=success, message=message, nfev=n_it, njev=n_it)


@contextmanager
def _stdout_fd_silenced():
    """Send file descriptor 1 to /dev/null for the duration: HiGHS prints a banner from C++ when a
    solver object is created, which Python's redirect_stdout cannot catch and a notebook would show."""
    sys.stdout.flush()
    saved = os.dup(1)
    try:
        with open(os.devnull, "w") as null:
            os.dup2(null.fileno(), 1)
            yield
    finally:
        os.dup2(saved, 1)
        os.close(saved)


class LinearOracle:
    """The linear minimisation oracle s(g) = argmin_{Ms <= h} <g, s> of Frank-Wolfe, warm-started.

    One HiGHS model is built once and kept; each call changes only the
    costs, so the simplex restarts from the previous optimal basis, which Frank-Wolfe's slowly
    changing gradients keep nearly optimal, and nothing is rebuilt between calls (a fresh
    ``scipy.optimize.linprog`` call rebuilds and re-solves the LP from scratch). Without the
    ``highspy`` package (recent cvxpy installs it) each call falls back to a fresh ``linprog``.
    """

    def __init__(self, M: np.ndarray, h: np.ndarray) -> None:
        self.M = check_matrix(M, "M")
        self.h = check_vector(h, "h", self.M.shape[0])
        self.calls = 0
        try:
            import highspy
        except ImportError:
            self._highs = None
            return
        with _stdout_fd_silenced():
            hs = highspy.Highs()
        hs.silent()
        # HiGHS's smallest tolerances: a warm start keeps the previous vertex while its reduced costs
        # are within the dual tolerance, and near x* the Frank-Wolfe gap itself is that small.
        hs.setOptionValue("dual_feasibility_tolerance", 1e-10)
        hs.setOptionValue("primal_feasibility_tolerance", 1e-10)
        m, n = self.M.shape
        inf = highspy.kHighsInf
        lp = highspy.HighsLp()
        lp.num_col_, lp.num_row_ = n, m
        lp.col_cost_, lp.col_lower_, lp.col_upper_ = np.zeros(n), np.full(n, -inf), np.full(n, inf)
        lp.row_lower_, lp.row_upper_ = np.full(m, -inf), self.h
        A = csc_matrix(self.M)
        lp.a_matrix_.format_ = highspy.MatrixFormat.kColwise
        lp.a_matrix_.start_, lp.a_matrix_.index_, lp.a_matrix_.value_ = A.indptr, A.indices, A.data
        hs.passModel(lp)
        self._highs, self._optimal, self._cols = hs, highspy.HighsModelStatus.kOptimal, np.arange(n, dtype=np.int32)

    def __call__(self, g: np.ndarray) -> tuple[np.ndarray | None, str]:
        """(s, '') at an optimal vertex, or (None, the solver's message) if the LP failed."""
        self.calls += 1
        if self._highs is None:
            lp = linprog(g, A_ub=self.M, b_ub=self.h, bounds=(None, None), method="highs")
            return (lp.x, "") if lp.status == 0 else (None, lp.message)
        hs = self._highs
        hs.changeColsCost(len(self._cols), self._cols, np.asarray(g, dtype=float))
        hs.run()
        status = hs.getModelStatus()
        if status != self._optimal:
            return None, hs.modelStatusToString(status)
        return np.array(hs.getSolution().col_value), ""


def _fw_line_search(jac, x: np.ndarray, d: np.ndarray, slope0: float, gamma_max: float) -> tuple[float, int]:
    """argmin over [0, gamma_max] of f(x + gamma d) for a convex f, from the derivative
    phi'(gamma) = grad f(x + gamma d).d: gamma_max if phi' <= 0 there, else the root of phi' by
    regula falsi (Illinois), exact at the first step for a quadratic. Returns (gamma, jac calls)."""
    lo, d_lo = 0.0, slope0
    hi, d_hi = gamma_max, float(np.asarray(jac(x + gamma_max * d)) @ d)
    calls = 1
    if d_hi <= 0:
        return gamma_max, calls
    side = 0
    gam = hi
    for _ in range(40):
        gam = hi - d_hi * (hi - lo) / (d_hi - d_lo)
        d_mid = float(np.asarray(jac(x + gam * d)) @ d)
        calls += 1
        if abs(d_mid) <= 1e-12 * abs(slope0):
            break
        if d_mid < 0:
            lo, d_lo = gam, d_mid
            if side == -1:
                d_hi *= 0.5
            side = -1
        else:
            hi, d_hi = gam, d_mid
            if side == 1:
                d_lo *= 0.5
            side = 1
    return float(gam), calls


def frank_wolfe(
    fun: Fun,
    x0: np.ndarray,
    jac: Jac,
    *,
    K: GaugeSet,
    variant: str = "vanilla",
    step: str = "open-loop",
    L: float | None = None,
    tol: float = 1e-10,
    stop: str = "gap",
    f_star: float | None = None,
    maxiter: int = 1000,
    callback: Callable[[np.ndarray], None] | None = None,
    method_name: str | None = None,
) -> Result:
    """Frank-Wolfe with a linear minimisation oracle s_k = argmin_{s in K} <grad f(x_k), s> (an LP
    solved by HiGHS, warm-started from the previous basis: :class:`LinearOracle`; K must be a
    polytope), in the three classical variants.

    Parameters
    ----------
    variant : {'vanilla', 'away', 'pairwise'}
        'vanilla': x+ = x + gamma (s - x). 'away' (Guelat and Marcotte; Lacoste-Julien and Jaggi):
        also considers stepping away from the worst atom of the current convex combination, which
        gives a linear rate on polytopes for strongly convex f. 'pairwise': moves weight from the
        worst atom straight to s. The start x0 is the first atom (it need not be a vertex).
    step : {'open-loop', 'line-search', 'short'}
        gamma = 2/(k+2) (vanilla only); exact line search on [0, gamma_max]; or the short step
        min(gamma_max, -grad f.d / (L ||d||^2)), which needs the Lipschitz constant ``L``.

    The trace's ``fw_gap`` is <grad f(x_k), x_k - s_k>, an upper bound on f(x_k) - f* for convex f;
    ``grad_norm`` holds it too, so ``stop='grad_norm'`` stops on the Frank-Wolfe gap. ``atoms``
    counts the atoms of the convex combination.
    """
    K, x = _start(x0, K, fun, jac)
    M, h = K.polytope()
    variant = check_choice(variant, "variant", ("vanilla", "away", "pairwise"))
    step = check_choice(step, "step", ("open-loop", "line-search", "short"))
    if step == "open-loop" and variant != "vanilla":
        raise ValueError("step='open-loop' is for variant='vanilla'; away and pairwise steps need "
                         "step='line-search' or 'short' (their step is capped by an atom's weight)")
    if step == "short":
        if L is None:
            raise ValueError("step='short' needs L, the Lipschitz constant of grad f")
        L = check_positive(L, "L")
    maxiter = check_int(maxiter, "maxiter", minimum=0)
    name = method_name or ("Frank-Wolfe" if variant == "vanilla" else f"{variant}-step Frank-Wolfe")
    run = _Run(name, K, f_star, tol, stop, callback)
    f, g = _evaluate(fun, jac, x, K.n)
    atoms, weights = x[None, :].copy(), np.ones(1)
    njev, nfev = 1, 1
    message, success = "maximum number of iterations reached", False
    oracle = LinearOracle(M, h)
    for k in range(maxiter + 1):
        s, failure = oracle(g)
        if s is None:
            message = f"the linear oracle failed: {failure}"
            break
        fw_gap = float(g @ (x - s))
        if run.record(x, f, fw_gap, fw_gap=fw_gap, atoms=float(len(weights))):
            message, success = "stopping tolerance reached", True
            break
        if k == maxiter:
            break
        d, gamma_max, move = s - x, 1.0, "toward"
        if variant != "vanilla":
            worst = int(np.argmax(atoms @ g))
            if variant == "pairwise":
                d, gamma_max, move = s - atoms[worst], weights[worst], "pairwise"
            elif g @ (atoms[worst] - x) > fw_gap and weights[worst] < 1.0:  # away gap beats FW gap
                d, move = x - atoms[worst], "away"
                gamma_max = weights[worst] / (1.0 - weights[worst])
        slope = float(g @ d)
        if step == "open-loop":
            gamma = 2.0 / (k + 2.0)
        elif slope >= 0:  # no descent direction left: x is optimal to round-off
            gamma = 0.0
        elif step == "short":
            gamma = min(gamma_max, -slope / (L * float(d @ d)))
        else:
            gamma, calls = _fw_line_search(jac, x, d, slope, gamma_max)
            njev += calls
        run.set_step(gamma)
        # The active set: atoms and their convex weights, with x = weights @ atoms throughout.
        hit = np.flatnonzero(np.all(atoms == s, axis=1))
        if move == "toward":
            weights = (1.0 - gamma) * weights
        elif move == "away":
            weights = (1.0 + gamma) * weights
            weights[worst] -= gamma
            if gamma == gamma_max:
                weights[worst] = 0.0  # a drop step: exactly zero, not round-off
        else:
            weights[worst] -= gamma
        if move != "away":
            if hit.size:
                weights[hit[0]] += gamma
            else:
                atoms, weights = np.vstack([atoms, s]), np.append(weights, gamma)
        keep = weights > 0
        atoms, weights = atoms[keep], weights[keep]
        x = x + gamma * d
        f, g = _evaluate(fun, jac, x, K.n)
        nfev += 1
        njev += 1
    return run.result(x, f, success=success, message=message, nfev=nfev, njev=njev, atoms=atoms,
                      weights=weights)


def quadratic_penalty(
    fun: Fun,
    x0: np.ndarray,
    jac: Jac,
    *,
    K: GaugeSet,
    L: float = 1.0,
    mu0: float = 1.0,
    growth: float = 1.5,
    every: int = 10,
    tol: float = 1e-10,
    stop: str = "gap",
    f_star: float | None = None,
    maxiter: int = 1000,
    callback: Callable[[np.ndarray], None] | None = None,
    method_name: str = "quadratic penalty",
) -> Result:
    """Gradient descent on f(x) + mu/2 sum_j max(0, a_j^T x - b_j)^2 with mu multiplied by
    ``growth`` every ``every`` iterations, and the safe step 1/(L + mu ||M||_2^2) (L is the
    Lipschitz constant of grad f). Iterates may leave K: the trace's ``violation`` shows it.
    K must be a polytope; its gap f - f* can be negative while infeasible."""
    K, x = _start(x0, K, fun, jac)
    M, h = K.polytope()
    L = check_positive(L, "L")
    mu = check_positive(mu0, "mu0")
    growth = check_in_range(growth, "growth", 1.0, np.inf, closed=(True, False))
    every = check_int(every, "every", minimum=1)
    maxiter = check_int(maxiter, "maxiter", minimum=0)
    run = _Run(method_name, K, f_star, tol, stop, callback)
    norm2 = float(np.linalg.norm(M, 2) ** 2)
    f, g = _evaluate(fun, jac, x, K.n)
    message, success = "maximum number of iterations reached", False
    for k in range(maxiter + 1):
        viol = np.maximum(M @ x - h, 0.0)
        grad = g + mu * (M.T @ viol)
        gap_ok = run.record(x, f, float(np.linalg.norm(grad)), mu=mu)
        if gap_ok and viol.max() <= tol:
            message, success = "stopping tolerance reached (and feasible to tol)", True
            break
        if k == maxiter:
            break
        step = 1.0 / (L + mu * norm2)
        run.set_step(step)
        x = x - step * grad
        if (k + 1) % every == 0:
            mu *= growth
        f, g = _evaluate(fun, jac, x, K.n)
    n_it = len(run.trace)
    return run.result(x, f, success=success, message=message, nfev=n_it, njev=n_it)


# --------------------------------------------------------------------------- test problems


def random_polytope(n: int = 100, m: int = 300, rng=0) -> GaugeSet:
    """The card's benchmark set K = {x in [-1, 1]^n : a_j^T x <= b_j}, with m random unit-norm
    a_j and b_j ~ U[0.2, 1] (so 0 is inside), centred at its Chebyshev centre."""
    n = check_int(n, "n", minimum=1)
    m = check_int(m, "m", minimum=1)
    gen = as_rng(rng)
    A = gen.standard_normal((m, n))
    A /= np.linalg.norm(A, axis=1, keepdims=True)
    b = gen.uniform(0.2, 1.0, m)
    return GaugeSet(A, b, lower=-np.ones(n), upper=np.ones(n))


def quadratic_objective(y: np.ndarray, Q: np.ndarray | None = None) -> tuple[Fun, Jac]:
    """f(x) = 1/2 (x - y)^T Q (x - y) and its gradient (Q = I by default: then the minimiser over
    K is the projection of y; any other Q makes it a genuinely different problem)."""
    y = check_vector(y, "y")
    if Q is None:
        return (lambda x: 0.5 * float((x - y) @ (x - y))), (lambda x: x - y)
    Q = check_matrix(Q, "Q", shape=(y.size, y.size), square=True)
    if not np.allclose(Q, Q.T, atol=1e-12 * max(1.0, float(np.abs(Q).max()))):
        raise ValueError("Q must be symmetric")
    return (lambda x: 0.5 * float((x - y) @ Q @ (x - y))), (lambda x: Q @ (x - y))
