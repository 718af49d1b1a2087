"""Chapter 01: BFGS under strong self-concordance (Jin and Mokhtari, NeurIPS 2025): the methods.

BFGS with a weak-Wolfe line search that tries the unit step first once one has been accepted,
from any start and any positive-definite initial matrix, and the baselines the chapter compares
it to: gradient descent with Armijo backtracking and damped Newton. Every method has the
``scipy.optimize.minimize`` shape and returns a :class:`~optbook.core.Result` with a ``trace``.
The chapter's experiments, figures and claims are in :mod:`optbook.classical.bfgs_chapter`.

Stopping rules are affine invariant by default (the paper's point): the quasi-Newton decrement
sqrt(g^T H g), the Newton decrement sqrt(g^T [hess]^{-1} g) or the gap f - f*, never the
Euclidean gradient norm, which a change of variables rescales.
"""
from __future__ import annotations

from collections.abc import Callable

import numpy as np
from scipy.linalg import eigh

from ..core import (
    Result,
    RunRecorder,
    armijo_backtracking,
    check_choice,
    check_in_range,
    check_int,
    check_positive,
    check_spd,
    check_vector,
    weak_wolfe,
)

Fun = Callable[[np.ndarray], float]
Jac = Callable[[np.ndarray], np.ndarray]
STOPS = ("qn_decrement", "newton_decrement", "gap", "grad_norm")


def _recorder(method, hess, f_star, stop, tol, callback) -> RunRecorder:
    if stop == "newton_decrement" and hess is None:
        raise ValueError("stop='newton_decrement' needs hess")
    return RunRecorder(method, stop=stop, tol=tol, stops=STOPS, f_star=f_star, callback=callback)


def _decrements(x, g, hess, qn2=np.nan) -> dict[str, float]:
    """The affine-invariant measures logged with each iterate: the Newton decrement (when a
    Hessian is given) and the quasi-Newton decrement sqrt(g^T H g) (when qn2 = g^T H g is)."""
    out = {}
    if hess is not None:
        out["newton_decrement"] = float(np.sqrt(max(g @ np.linalg.solve(hess(x), g), 0.0)))
    if np.isfinite(qn2):
        out["qn_decrement"] = float(np.sqrt(max(qn2, 0.0)))
    return out


def _inverse_of_initial(H0, B0, d):
    if H0 is not None and B0 is not None:
        raise ValueError("give H0 or B0, not both")
    if B0 is not None:
        return np.linalg.inv(check_spd(B0, "B0", d))
    return np.eye(d) if H0 is None else check_spd(H0, "H0", d)


def first_trial(f_prev: float, f: float, slope: float, last_step: float) -> float:
    """The line search's first trial step: the unit step, unless the last step was not a unit
    step, in which case min(1, 2.02 (f_prev - f) / |g^T d|).

    The second is the step at which a quadratic model expecting the last decrease again would
    bottom out (Nocedal and Wright, section 3.5; scipy's BFGS starts every search that way).
    While B0 is badly scaled and steps are far from 1, it saves the evaluation a hopeless unit
    trial costs; once a unit step has been accepted, the unit step is always tried first, as
    the paper's analysis requires. Both are affine invariant (values and slopes only). A
    decrease below the round-off of f says nothing, so the unit step is tried then too.
    """
    if last_step == 1.0 or not np.isfinite(f_prev) or not slope < 0:
        return 1.0
    decrease = f_prev - f
    if decrease <= 4 * np.finfo(float).eps * max(1.0, abs(f)):
        return 1.0
    return float(min(1.0, 2.02 * decrease / -slope))


def bfgs(
    fun: Fun,
    x0: np.ndarray,
    jac: Jac,
    *,
    hess: Jac | None = None,
    H0: np.ndarray | None = None,
    B0: np.ndarray | None = None,
    c1: float = 0.1,
    c2: float = 0.9,
    tol: float = 1e-10,
    stop: str = "qn_decrement",
    f_star: float | None = None,
    maxiter: int = 1000,
    callback: Callable[[np.ndarray], None] | None = None,
    method_name: str = "BFGS",
    first_step: str = "guess",
    update: bool = True,
) -> Result:
    """BFGS with a weak-Wolfe line search (Algorithm 1 of the paper, our reading).

    Parameters
    ----------
    fun, jac : callables
        Objective f and its gradient.
    x0 : array
        Any starting point.
    hess : callable, optional
        Hessian, used only to log the Newton decrement (and to stop on it).
    H0, B0 : arrays, optional
        Initial inverse-Hessian approximation, or the initial Hessian approximation B0 (any
        symmetric positive-definite matrix); default identity.
    c1, c2 : float
        Weak-Wolfe constants, 0 < c1 < 1/2 and c1 < c2 < 1 (the paper's alpha and beta).
    first_step : {'guess', 'unit'}
        The line search's first trial: :func:`first_trial` (default: the unit step once a unit
        step has been accepted, a quadratic guess after a shorter step) or always 1.
    update : bool
        With False the matrix stays B0 (no quasi-Newton update): gradient descent in B0's metric
        with the same line search. The chapter's negative control: BFGS without what it learns.
    tol : float
        Stop when the chosen measure (``stop``) is <= tol.
    stop : {'qn_decrement', 'newton_decrement', 'gap', 'grad_norm'}
        'qn_decrement' = sqrt(g^T H_t g), affine invariant and free; 'grad_norm' is offered for
        comparison only (it breaks affine invariance).
    f_star : float, optional
        Optimal value; logs the gap f(x_t) - f*.

    Returns
    -------
    Result
        ``x, fun, jac, nit, nfev, njev, success, message, trace, iterates, H`` (final inverse
        approximation). The trace row t holds x_t and the step eta_t taken from it, and the
        extra series ``unit_step`` (1 when eta_t = 1) and ``ls_evals``.
    """
    x = check_vector(x0, "x0")
    d = x.size
    H = _inverse_of_initial(H0, B0, d)
    c1 = check_in_range(c1, "c1", 0.0, 0.5)
    c2 = check_in_range(c2, "c2", c1, 1.0)
    maxiter = check_int(maxiter, "maxiter", minimum=0)
    first_step = check_choice(first_step, "first_step", ("guess", "unit"))
    mon = _recorder(method_name, hess, f_star, stop, tol, callback)

    f, g = float(fun(x)), np.asarray(jac(x), dtype=float)
    if not (np.isfinite(f) and np.all(np.isfinite(g))):
        raise ValueError("fun and jac must be finite at x0")
    nfev = njev = 1
    f_prev, last_step = np.nan, 1.0
    message, success = "maximum number of iterations reached", False
    for t in range(maxiter + 1):
        direction = -H @ g
        if mon.record(x, f, float(np.linalg.norm(g)), **_decrements(x, g, hess, float(-g @ direction))):
            message, success = "stopping tolerance reached", True
            break
        if t == maxiter:
            break
        eta0 = first_trial(f_prev, f, float(g @ direction), last_step) if first_step == "guess" else 1.0
        ls = weak_wolfe(fun, jac, x, direction, g, f, c1=c1, c2=c2, eta0=eta0)
        nfev, njev = nfev + ls.nfev, njev + ls.njev
        f_prev, last_step = f, ls.step
        mon.set_step(ls.step, unit_step=float(ls.step == 1.0), ls_evals=ls.nfev)
        if not ls.success:
            message = "line search failed to find a weak-Wolfe step (round-off?)"
            break
        s = ls.step * direction
        y = ls.jac - g
        sy = float(s @ y)
        x, f, g = x + s, ls.fun, ls.jac
        if not sy > 0:  # Wolfe guarantees s^T y > 0; only round-off breaks it
            message = "curvature s^T y <= 0 from round-off; stopped"
            mon.record(x, f, float(np.linalg.norm(g)), **_decrements(x, g, hess, float(g @ H @ g)))
            break
        if not update:
            continue
        # Inverse update H+ = (I - rho s y^T) H (I - rho y s^T) + rho s s^T, in O(d^2).
        rho, Hy = 1.0 / sy, H @ y
        H = H - rho * (np.outer(s, Hy) + np.outer(Hy, s)) + (rho * rho * (y @ Hy) + rho) * np.outer(s, s)
    return mon.result(x, f, success=success, message=message, nfev=nfev, njev=njev, jac=g, H=H)


def gradient_descent(
    fun: Fun,
    x0: np.ndarray,
    jac: Jac,
    *,
    hess: Jac | None = None,
    eta0: float = 1.0,
    c1: float = 0.5,
    grow: float = 2.0,
    tol: float = 1e-10,
    stop: str = "gap",
    f_star: float | None = None,
    maxiter: int = 10000,
    callback: Callable[[np.ndarray], None] | None = None,
    method_name: str = "GD + Armijo",
) -> Result:
    """Gradient descent with Armijo backtracking, f(x - eta g) <= f(x) - c1 eta ||g||^2.

    Each search starts from ``grow`` times the previous accepted step (a warm start), so the
    method adapts to the local curvature without a known Lipschitz constant. Not affine
    invariant. The chapter tunes ``c1`` and ``grow`` on held-out problems.
    """
    x = check_vector(x0, "x0")
    eta = check_positive(eta0, "eta0")
    c1 = check_in_range(c1, "c1", 0.0, 1.0)
    grow = check_in_range(grow, "grow", 1.0, np.inf, closed=(True, False))
    maxiter = check_int(maxiter, "maxiter", minimum=0)
    mon = _recorder(method_name, hess, f_star, stop, tol, callback)
    f, g = float(fun(x)), np.asarray(jac(x), dtype=float)
    nfev = njev = 1
    message, success = "maximum number of iterations reached", False
    for t in range(maxiter + 1):
        if mon.record(x, f, float(np.linalg.norm(g)), **_decrements(x, g, hess, float(g @ g))):
            message, success = "stopping tolerance reached", True
            break
        if t == maxiter:
            break
        if not np.any(g):
            message, success = "gradient is exactly zero", True
            break
        ls = armijo_backtracking(fun, x, -g, g, f, eta0=grow * eta, c1=c1)
        nfev += ls.nfev
        mon.set_step(ls.step)
        if not ls.success:
            message = "Armijo backtracking failed"
            break
        eta = ls.step
        x = x - eta * g
        f, g = ls.fun, np.asarray(jac(x), dtype=float)
        njev += 1
    return mon.result(x, f, success=success, message=message, nfev=nfev, njev=njev, jac=g)


def damped_newton(
    fun: Fun,
    x0: np.ndarray,
    jac: Jac,
    hess: Jac,
    *,
    sc_constant: float = 1.0,
    tol: float = 1e-10,
    stop: str = "newton_decrement",
    f_star: float | None = None,
    maxiter: int = 200,
    callback: Callable[[np.ndarray], None] | None = None,
    method_name: str = "damped Newton",
) -> Result:
    """Damped Newton for self-concordant functions: x+ = x - [hess]^{-1} g / (1 + M lambda(x)).

    For an M-self-concordant f (|D^3 f(x)[h,h,h]| <= 2 M (h^T hess h)^{3/2}) the step
    1/(1 + M lambda) needs no line search, decreases f from any start, and tends to 1 near the
    solution, where convergence is quadratic (Nesterov's theorem applied to M^2 f). The classic
    choice ``sc_constant`` = M = 1 is guaranteed for *standard* self-concordant functions only;
    regularised logistic regression is M-self-concordant with M = max ||z_i|| / (2 sqrt(mu)),
    not standard. Affine invariant for any M.
    """
    if not callable(hess):
        raise ValueError("hess must be callable")
    sc_constant = check_positive(sc_constant, "sc_constant")
    x = check_vector(x0, "x0")
    maxiter = check_int(maxiter, "maxiter", minimum=0)
    mon = _recorder(method_name, hess, f_star, stop, tol, callback)
    f, g = float(fun(x)), np.asarray(jac(x), dtype=float)
    nfev = njev = 1
    message, success = "maximum number of iterations reached", False
    for t in range(maxiter + 1):
        newton_dir = np.linalg.solve(hess(x), g)
        lam = float(np.sqrt(max(g @ newton_dir, 0.0)))
        if mon.record(x, f, float(np.linalg.norm(g)), **_decrements(x, g, hess)):
            message, success = "stopping tolerance reached", True
            break
        if t == maxiter:
            break
        step = 1.0 / (1.0 + sc_constant * lam)
        mon.set_step(step)
        x = x - step * newton_dir
        f, g = float(fun(x)), np.asarray(jac(x), dtype=float)
        nfev, njev = nfev + 1, njev + 1
    return mon.result(x, f, success=success, message=message, nfev=nfev, njev=njev, jac=g)


def initial_mismatch(B0: np.ndarray, hess_star: np.ndarray) -> float:
    """Psi(B~) = tr B~ - d - log det B~ with B~ = hess*^{-1/2} B0 hess*^{-1/2}: an affine-invariant
    measure of how far B0 is from the Hessian at the solution (0 iff they are equal)."""
    B0 = check_spd(B0, "B0")
    hess_star = check_spd(hess_star, "hess_star", B0.shape[0])
    ev = eigh(B0, hess_star, eigvals_only=True)  # B0 v = lam hess* v: the spectrum of B~, all > 0
    return float(np.sum(ev) - ev.size - np.sum(np.log(ev)))
