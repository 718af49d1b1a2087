"""Chapter 01: BFGS under strong self-concordance (Jin and Mokhtari, NeurIPS 2025).

BFGS with a weak-Wolfe line search that always tries the unit step first, from any start and any
positive-definite initial matrix, with the baselines the chapter compares it to: gradient
descent with Armijo backtracking and damped Newton. Every method has the
``scipy.optimize.minimize`` shape and returns a :class:`~optbook.core.Result` with a ``trace``.

Stopping rules are affine invariant by default (the paper's point): the quasi-Newton decrement
sqrt(g^T H g), the Newton decrement sqrt(g^T [hess]^{-1} g) or the gap f - f*, never the
Euclidean gradient norm, which a change of variables rescales.
"""
from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache

import numpy as np

import plotly.graph_objects as go

from ..claims import Measured, claim
from ..core import (
    AffineComposition,
    Problem,
    Result,
    RunRecorder,
    Trace,
    armijo_backtracking,
    check_choice,
    check_in_range,
    check_int,
    check_positive,
    check_spd,
    check_vector,
    conditioning_map,
    make_logistic,
    weak_wolfe,
)
from ..viz import (
    Phase,
    SliderStep,
    base_layout,
    color_for,
    convergence_traces,
    grid_values,
    landscape_traces,
    path_traces,
    phase_layout,
    slider_figure,
)
from ..widgets import Explorer, Slider

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
    tol: float = 1e-10,
    stop: str = "gap",
    f_star: float | None = None,
    maxiter: int = 10000,
    callback: Callable[[np.ndarray], None] | None = None,
    method_name: str = "GD + Armijo",
) -> Result:
    """Gradient descent with Armijo backtracking, f(x - eta g) <= f(x) - eta/2 ||g||^2.

    Each search starts from twice the previous accepted step (a warm start), so the method
    adapts to the local curvature without a known Lipschitz constant. Not affine invariant.
    """
    x = check_vector(x0, "x0")
    eta = check_positive(eta0, "eta0")
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
        ls = armijo_backtracking(fun, x, -g, g, f, eta0=2.0 * eta, c1=0.5)
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
    tol: float = 1e-10,
    stop: str = "newton_decrement",
    f_star: float | None = None,
    maxiter: int = 200,
    callback: Callable[[np.ndarray], None] | None = None,
    method_name: str = "damped Newton",
) -> Result:
    """Damped Newton for self-concordant functions: x+ = x - [hess]^{-1} g / (1 + lambda(x)).

    The step length 1/(1 + lambda) needs no line search and tends to 1 near the solution, where
    convergence is quadratic. Affine invariant.
    """
    if not callable(hess):
        raise ValueError("hess must be callable")
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
        step = 1.0 / (1.0 + lam)
        mon.set_step(step)
        x = x - step * newton_dir
        f, g = float(fun(x)), np.asarray(jac(x), dtype=float)
        nfev, njev = nfev + 1, njev + 1
    return mon.result(x, f, success=success, message=message, nfev=nfev, njev=njev, jac=g)


# --------------------------------------------------------------------------- the experiments


def solve_reference(problem: Problem, x0: np.ndarray | None = None) -> tuple[np.ndarray, float]:
    """x* and f* by Newton's method to machine precision (the problems here are strictly convex)."""
    x = np.zeros(problem.dim) if x0 is None else check_vector(x0, "x0", problem.dim)
    res = damped_newton(problem.fun, x, problem.jac, problem.hess, tol=1e-15, maxiter=200)
    return res.x, res.fun


def initial_mismatch(B0: np.ndarray, hess_star: np.ndarray) -> float:
    """Psi(B~) = tr B~ - d - log det B~ with B~ = hess*^{-1/2} B0 hess*^{-1/2}: an affine-invariant
    measure of how far B0 is from the Hessian at the solution (0 iff they are equal)."""
    B0 = check_spd(B0, "B0")
    hess_star = check_spd(hess_star, "hess_star", B0.shape[0])
    ev = np.linalg.eigvals(np.linalg.solve(hess_star, B0)).real  # spectrum of B~
    return float(np.sum(ev) - ev.size - np.sum(np.log(ev)))


@lru_cache(maxsize=64)
def conditioning_experiment(log10_kappa: float, *, n: int = 200, d: int = 20, seed: int = 0,
                            gd_maxiter: int = 20000, gap_tol: float = 1e-6) -> dict:
    """Run BFGS (transformed B0 and B0 = I) and GD on g(u) = f(Au + b) with cond(A^T A) = kappa,
    next to BFGS and GD on f itself. Cached: the notebook's slider figure and live explorer share it.

    Returns the traces and the iterations each method needed to reach a gap of ``gap_tol``.
    """
    kappa = 10.0 ** check_in_range(log10_kappa, "log10_kappa", -1e-12, 8.0, closed=(True, True))
    rng = np.random.default_rng(seed)
    f = make_logistic(n, d, rng=rng)
    x0 = rng.standard_normal(d)
    A = conditioning_map(d, kappa, rng)
    b = rng.standard_normal(d)
    g = AffineComposition(f, A, b)
    _, f_star = solve_reference(f)
    u0 = g.to_u(x0)
    common = dict(f_star=f_star, stop="gap", tol=1e-13, maxiter=300)
    runs = {
        "BFGS on f (B0 = I)": bfgs(f.fun, x0, f.jac, **common),
        "BFGS on g (B0 = A^T A)": bfgs(g.fun, u0, g.jac, B0=A.T @ A, **common),
        "BFGS on g (B0 = I)": bfgs(g.fun, u0, g.jac, **common),
        "GD on f": gradient_descent(f.fun, x0, f.jac, f_star=f_star, tol=gap_tol, maxiter=gd_maxiter),
        "GD on g": gradient_descent(g.fun, u0, g.jac, f_star=f_star, tol=gap_tol, maxiter=gd_maxiter),
    }
    for name, res in runs.items():
        res.trace.method = name
    iters = {name: res.trace.first_below("gap", gap_tol) for name, res in runs.items()}
    return {"kappa": kappa, "runs": runs, "iters": iters, "f_star": f_star, "A": A, "b": b}


def superlinear_run(d: int = 10, n: int = 400, seed: int = 1, scale: float = 3.0,
                    c: float = 1.0, c1: float = 0.1, c2: float = 0.9) -> Result:
    """BFGS from a far start x0 ~ scale N(0, I) with B0 = c I on a d-dimensional logistic problem,
    logging the Newton decrement: the data of the phase plot."""
    rng = np.random.default_rng(seed)
    f = make_logistic(n, d, rng=rng)
    x0 = scale * rng.standard_normal(d)
    return bfgs(f.fun, x0, f.jac, hess=f.hess, B0=c * np.eye(d), c1=c1, c2=c2,
                stop="newton_decrement", tol=1e-13, maxiter=500)


def unit_step_index(trace: Trace) -> int | None:
    """First t such that the unit step was accepted at every iteration from t on (None if the
    last iteration did not take it)."""
    unit = trace["unit_step"][:-1]  # the last row has no step
    if unit.size == 0 or unit[-1] != 1.0:
        return None
    not_unit = np.flatnonzero(unit != 1.0)
    return int(not_unit[-1] + 1) if not_unit.size else 0


# --------------------------------------------------------------------------- figures


def _clip(trace: Trace, horizon: int) -> Trace:
    """The first ``horizon + 1`` rows of a trace (for plotting)."""
    data = trace.to_dict()
    return Trace.from_dict({k: (v[: horizon + 1] if isinstance(v, list) else v) for k, v in data.items()})


CONDITIONING_METHODS = ("BFGS on f (B0 = I)", "BFGS on g (B0 = A^T A)", "BFGS on g (B0 = I)", "GD on g")


def conditioning_traces(log10_kappa: float, horizon: int = 120) -> list:
    """Gap curves of BFGS on f, BFGS on g with transformed and identity B0, and GD on g."""
    ex = conditioning_experiment(float(log10_kappa), gd_maxiter=horizon)  # only what is drawn
    traces = [_clip(ex["runs"][m].trace, horizon) for m in CONDITIONING_METHODS]
    lines = convergence_traces(traces, "gap")
    lines[1].update(line=dict(dash="dot", width=4), marker=dict(size=8, symbol="circle-open"))
    return lines


def conditioning_slider_figure() -> go.Figure:
    """Static twin of the conditioning explorer: one frame per log10(kappa) in 0..8."""
    steps = [SliderStep(f"{k}", conditioning_traces(k)) for k in range(0, 9)]
    return slider_figure(steps, slider_label="log10 kappa (condition number added by A)", active=4,
                         logy=True, xaxis_title="iteration t", yaxis_title="gap f(x_t) - f*",
                         title="Changing coordinates: BFGS does not notice, gradient descent does")


def conditioning_figure(log10_kappa: float = 4.0, horizon: int = 120) -> go.Figure:
    """Live twin: the same curves for one kappa."""
    fig = go.Figure(conditioning_traces(log10_kappa, horizon))
    return base_layout(fig, logy=True, xaxis_title="iteration t", yaxis_title="gap f(x_t) - f*",
                       title=f"kappa = 1e{log10_kappa:g}")


@lru_cache(maxsize=32)
def phase_run(log10_c: float, c1: float = 0.1, c2: float = 0.9) -> Result:
    """BFGS with B0 = 10^log10_c I on the 10-dimensional logistic problem (cached)."""
    return superlinear_run(c=10.0 ** log10_c, c1=c1, c2=c2)


def phase_layout_of(res: Result) -> dict:
    """Shade the burn-in (line search active) and the unit-step phase of a run."""
    t0 = unit_step_index(res.trace)
    end = float(res.trace.iteration[-1])
    phases = [Phase(0, end, "line search at work")] if t0 is None else (
        [Phase(t0, end, "unit steps: superlinear")] if t0 == 0 else
        [Phase(0, t0, "burn-in"), Phase(t0, end, "unit steps: superlinear")])
    return phase_layout(phases)


def phase_traces(res: Result) -> list:
    tr = res.trace
    return [
        go.Scatter(x=tr.iteration, y=tr["newton_decrement"], name="Newton decrement lambda_t",
                   mode="lines+markers", line=dict(color=color_for(0)), yaxis="y"),
        go.Scatter(x=tr.iteration, y=tr.step_size, name="step size eta_t", mode="lines+markers",
                   line=dict(color=color_for(1), dash="dot"), yaxis="y2"),
    ]


def _phase_axes(fig: go.Figure) -> go.Figure:
    fig.update_layout(yaxis=dict(type="log", title="Newton decrement lambda_t (log)", exponentformat="power"),
                      yaxis2=dict(title="step size eta_t", overlaying="y", side="right", range=[0, 1.25],
                                  dtick=0.25, showgrid=False))
    return fig


PHASE_LOG_C = (-2.0, -1.5, -1.0, -0.5, 0.0, 0.5, 1.0, 2.0, 3.0)


def phase_slider_figure() -> go.Figure:
    """Static twin of the phase explorer: B0 = cI, one frame per log10 c."""
    steps = [SliderStep(f"{lc:g}", phase_traces(phase_run(lc)), phase_layout_of(phase_run(lc)))
             for lc in PHASE_LOG_C]
    fig = slider_figure(steps, slider_label="log10 c, with B0 = c I", active=4, fixed_axes=False,
                        xaxis_title="iteration t", title="Burn-in, then unit steps: the two phases of BFGS")
    xmax = max(len(phase_run(lc).trace) for lc in PHASE_LOG_C)
    fig.update_xaxes(range=[-0.5, xmax])
    return _phase_axes(fig)


def phase_figure(log10_c: float = 0.0, c1: float = 0.1, c2: float = 0.9) -> go.Figure:
    """Live twin, with the Wolfe constants as extra knobs."""
    res = phase_run(float(log10_c), float(c1), float(c2))
    fig = go.Figure(phase_traces(res), layout=phase_layout_of(res))
    base_layout(fig, xaxis_title="iteration t",
                title=f"B0 = 10^{log10_c:g} I, c1 = {c1:g}, c2 = {c2:g}: {res.nit} iterations")
    return _phase_axes(fig)


def burn_in_table(log_cs=PHASE_LOG_C) -> list[dict]:
    """Iterations to lambda <= 1e-10 and Psi(B~0) for each B0 = cI (the burn-in's driver)."""
    rows = []
    rng = np.random.default_rng(1)
    f = make_logistic(400, 10, rng=rng)
    x_star, _ = solve_reference(f)
    for lc in log_cs:
        res = phase_run(lc)
        rows.append({"log10 c": lc, "Psi(B~0)": initial_mismatch(10.0 ** lc * np.eye(10), f.hess(x_star)),
                     "t0 (unit steps from)": unit_step_index(res.trace),
                     "iterations to lambda <= 1e-10": res.trace.first_below("newton_decrement", 1e-10)})
    return rows


LANDSCAPE_WINDOW = ((-3.0, 3.0), (-3.0, 3.0))  # u-coordinates shown for every stretch


@lru_cache(maxsize=16)
def stretched_paths(stretch: float) -> dict:
    """A 2-D logistic problem seen through A = diag(1, stretch): paths of BFGS (B0 = A^T A and
    B0 = I) and GD in the u coordinates, plus the landscape on a fixed window."""
    rng = np.random.default_rng(7)
    f = make_logistic(60, 2, mu=0.05, noise=1.0, rng=rng)
    A = np.diag([1.0, float(stretch)])
    g = AffineComposition(f, A, np.zeros(2))
    x0 = np.array([-2.5, 2.5])
    u0 = g.to_u(x0)
    runs = {
        "BFGS, B0 = A^T A": bfgs(g.fun, u0, g.jac, B0=A.T @ A, tol=1e-8),
        "BFGS, B0 = I": bfgs(g.fun, u0, g.jac, tol=1e-8),
        "GD + Armijo": gradient_descent(g.fun, u0, g.jac, stop="grad_norm", tol=1e-6, maxiter=150),
        "damped Newton": damped_newton(g.fun, u0, g.jac, g.hess, tol=1e-8),
    }
    values = grid_values(g.fun_many, *LANDSCAPE_WINDOW, n=60, vectorized=True)
    return {"paths": {k: r.iterates for k, r in runs.items()}, "values": values,
            "nit": {k: r.nit for k, r in runs.items()}}


def landscape_traces_for(stretch: float) -> list:
    data = stretched_paths(float(stretch))
    xs, ys, Z = data["values"]
    contour = landscape_traces(xs, ys, Z, log_levels=True, colorbar_title="g")
    return contour + path_traces({f"{k} ({data['nit'][k]} it.)": v for k, v in data["paths"].items()})


STRETCHES = (1, 2, 4, 8, 16)


def landscape_slider_figure() -> go.Figure:
    """Static twin of the landscape explorer: one frame per stretch s of A = diag(1, s)."""
    steps = [SliderStep(f"{s}", landscape_traces_for(s)) for s in STRETCHES]
    fig = slider_figure(steps, slider_label="stretch s in A = diag(1, s)", active=2, fixed_axes=False,
                        xaxis_title="u<sub>1</sub>", yaxis_title="u<sub>2</sub>", height=560,
                        title="Paths on g(u) = f(Au): the valley narrows as s grows")
    fig.update_xaxes(range=LANDSCAPE_WINDOW[0])
    fig.update_yaxes(range=LANDSCAPE_WINDOW[1])
    return fig


def landscape_figure_for(stretch: float = 4.0) -> go.Figure:
    """Live twin of the landscape explorer."""
    fig = go.Figure(landscape_traces_for(stretch))
    base_layout(fig, xaxis_title="u<sub>1</sub>", yaxis_title="u<sub>2</sub>", height=560,
                title=f"A = diag(1, {stretch:g})")
    fig.update_xaxes(range=LANDSCAPE_WINDOW[0])
    fig.update_yaxes(range=LANDSCAPE_WINDOW[1])
    return fig


def compare_with_scipy(problem: Problem, x0: np.ndarray, tol: float = 1e-8) -> list[dict]:
    """Our BFGS (weak Wolfe, bisection) against ``scipy.optimize.minimize(method='BFGS')`` (strong
    Wolfe) and against GD and damped Newton: iterations, evaluations, seconds, final gap."""
    import time as _time

    from scipy.optimize import minimize

    _, f_star = solve_reference(problem)
    rows = []

    def row(name, runner):
        t0 = _time.perf_counter()
        res = runner()
        rows.append({"method": name, "iterations": int(res.nit), "f evals": int(res.nfev),
                     "gradient evals": int(res.njev), "seconds": _time.perf_counter() - t0,
                     "final gap": max(float(res.fun - f_star), 0.0)})

    row("optbook bfgs (weak Wolfe)", lambda: bfgs(problem.fun, x0, problem.jac, tol=tol))
    row("scipy BFGS (strong Wolfe)", lambda: minimize(problem.fun, x0, jac=problem.jac, method="BFGS",
                                                      options={"gtol": tol}))
    row("optbook damped Newton", lambda: damped_newton(problem.fun, x0, problem.jac, problem.hess, tol=tol))
    row("optbook GD + Armijo", lambda: gradient_descent(problem.fun, x0, problem.jac, f_star=f_star,
                                                        tol=1e-10, maxiter=20000))
    return rows


EXPLORER_CONDITIONING = Explorer("01", "conditioning", conditioning_figure,
                                 {"log10_kappa": Slider("log10 kappa", tuple(float(k) for k in range(9)), 4.0)},
                                 description="Iterations vs the condition number added by a change of variables")
EXPLORER_PHASES = Explorer("01", "phases", phase_figure, {
    "log10_c": Slider("log10 c (B0 = cI)", PHASE_LOG_C, 0.0),
    "c1": Slider("Armijo c1", (1e-4, 0.01, 0.1, 0.3, 0.45), 0.1),
    "c2": Slider("curvature c2", (0.5, 0.7, 0.9, 0.99), 0.9),
}, description="Burn-in and unit-step phases as B0 and the Wolfe constants change")
EXPLORER_LANDSCAPE = Explorer("01", "landscape", landscape_figure_for,
                              {"stretch": Slider("stretch s", tuple(float(s) for s in (1, 2, 4, 8, 16, 32)), 4.0)},
                              description="Paths on a stretched 2-D logistic landscape")


# --------------------------------------------------------------------------- claims


@claim("01", "BFGS is exactly affine invariant when B0 is transformed too",
       expect="max_t |f(x_t) - g(u_t)| / (f(x_0) - f*) <= 1e-10 and equal iteration counts, kappa up to 1e6",
       name="affine_invariance")
def claim_affine_invariance(fast: bool = False) -> Measured:
    worst, same_count = 0.0, True
    for log_kappa in (2.0, 4.0, 6.0) if not fast else (2.0, 6.0):
        ex = conditioning_experiment(log_kappa, n=400, d=40, gd_maxiter=1)
        tf, tg = ex["runs"]["BFGS on f (B0 = I)"].trace, ex["runs"]["BFGS on g (B0 = A^T A)"].trace
        m = min(len(tf), len(tg))
        scale = tf.objective[0] - ex["f_star"]
        worst = max(worst, float(np.max(np.abs(tf.objective[:m] - tg.objective[:m])) / scale))
        same_count &= len(tf) == len(tg)
    return Measured({"max_rel_difference": worst, "same_iteration_count": same_count},
                    holds=worst <= 1e-10 and same_count,
                    summary=f"largest relative difference {worst:.2e}")


@claim("01", "BFGS iteration counts barely depend on the condition number; gradient descent's explode",
       expect="BFGS (B0 = I) on g needs <= 2x its iterations on f; BFGS with B0 = A^T A exactly 1x; GD needs >= 10x at kappa = 1e4",
       name="condition_independence")
def claim_condition_independence(fast: bool = False) -> Measured:
    cap = 3000 if fast else 40000
    ex = conditioning_experiment(4.0, n=400, d=40, gd_maxiter=cap)
    it = ex["iters"]
    gd_g = it["GD on g"] if it["GD on g"] is not None else cap  # a lower bound when capped
    values = {
        "bfgs_f_iters": it["BFGS on f (B0 = I)"],
        "bfgs_g_transformed_iters": it["BFGS on g (B0 = A^T A)"],
        "bfgs_g_identity_iters": it["BFGS on g (B0 = I)"],
        "gd_f_iters": it["GD on f"],
        "gd_g_iters": gd_g,
        "gd_capped": it["GD on g"] is None,
    }
    bfgs_ratio = values["bfgs_g_identity_iters"] / values["bfgs_f_iters"]
    gd_ratio = gd_g / values["gd_f_iters"]
    values.update(bfgs_ratio=bfgs_ratio, gd_ratio=gd_ratio)
    holds = (bfgs_ratio <= 2.0 and values["bfgs_g_transformed_iters"] == values["bfgs_f_iters"]
             and gd_ratio >= 10.0)
    return Measured(values, holds=holds, summary=f"BFGS ratio {bfgs_ratio:.2f}, GD ratio {gd_ratio:.0f}",
                    details=ex)


def contraction_drop(trace: Trace) -> float:
    """How much the contraction factor q_t = lambda_{t+1}/lambda_t of the Newton decrement falls
    during a run: min q over the last 5 iterations / median q over the first half. Well below 1
    when the rate keeps improving (superlinear); near 1 for a linear rate. Decrements at
    round-off level (< 1e-14) are left out."""
    lam = trace["newton_decrement"]
    lam = lam[lam > 1e-14]
    q = lam[1:] / lam[:-1]
    if q.size < 8:
        return float("nan")
    return float(q[-5:].min() / np.median(q[: q.size // 2]))


@claim("01", "After a burn-in BFGS takes unit steps and its rate keeps improving (superlinear)",
       expect="in every run (B0 = cI, c from 0.03 to 3) unit steps from some t0 on, and the contraction "
              "lambda_{t+1}/lambda_t at the end <= 0.5x its median over the first half",
       name="superlinear_phase")
def claim_superlinear(fast: bool = False) -> Measured:
    seeds, cs = ((1,), (0.1, 1.0)) if fast else ((1, 2, 3), (0.03, 0.1, 0.3, 1.0, 3.0))
    t0s, drops = [], []
    for seed in seeds:
        for c in cs:
            res = superlinear_run(seed=seed, c=c)
            t0 = unit_step_index(res.trace)
            t0s.append(np.inf if t0 is None or not res.success else t0)
            drops.append(contraction_drop(res.trace))
    worst = float(np.max(drops)) if np.all(np.isfinite(drops)) else float("inf")
    values = {"worst_t0": max(t0s), "worst_contraction_drop": worst, "runs": len(t0s)}
    holds = bool(np.isfinite(values["worst_t0"]) and worst <= 0.5)
    return Measured(values, holds=holds,
                    summary=f"unit steps from t0 <= {values['worst_t0']:.0f}; contraction falls to <= {worst:.2f}x")
