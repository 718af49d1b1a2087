"""Chapter 01: the book's experiments, figures, live explorers and claims for BFGS under strong
self-concordance. The methods themselves are in :mod:`optbook.classical.bfgs_methods`.
"""
from __future__ import annotations

import warnings
from functools import lru_cache

import numpy as np
import plotly.graph_objects as go
from scipy.optimize import minimize
from scipy.stats import spearmanr

from ..claims import Criterion, Measured, claim
from ..core import (
    AffineComposition,
    Problem,
    Result,
    Rosenbrock,
    Trace,
    Tuning,
    as_rng,
    check_choice,
    check_in_range,
    check_int,
    check_positive,
    check_vector,
    conditioning_map,
    grid_search,
    make_cubic,
    make_logistic,
    quadratic_with_condition,
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
from .bfgs_methods import bfgs, damped_newton, gradient_descent, initial_mismatch

# --------------------------------------------------------------------------- the experiments


def solve_reference(problem: Problem, x0: np.ndarray | None = None) -> tuple[np.ndarray, float]:
    """x* and f* to machine precision: scipy's trust-region Newton method (robust from far
    starts, where damped Newton with step 1/(1 + lambda) crawls), then Newton steps to polish."""
    x = np.zeros(problem.dim) if x0 is None else check_vector(x0, "x0", problem.dim)
    res = minimize(problem.fun, x, jac=problem.jac, hess=problem.hess, method="trust-exact",
                   options={"gtol": 1e-12, "maxiter": 1000})
    x, lam = res.x, problem.newton_decrement(res.x)
    for _ in range(3):  # near x* f cannot see the progress: judge Newton steps by the decrement
        x_new = x - np.linalg.solve(problem.hess(x), problem.jac(x))
        lam_new = problem.newton_decrement(x_new)
        if not lam_new < lam:
            break
        x, lam = x_new, lam_new
    f = float(problem.fun(x))
    if not lam <= 1e-7 * max(1.0, abs(f)) ** 0.5:  # a wrong f* would end every gap-based run early
        raise RuntimeError(f"reference solve on {problem.name} did not converge (Newton decrement {lam:.2g})")
    return x, f


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
                    c: float = 1.0, c1: float = 0.1, c2: float = 0.9, update: bool = True) -> Result:
    """BFGS from a far start x0 ~ scale N(0, I) with B0 = c I on a d-dimensional logistic problem,
    logging the Newton decrement: the data of the phase plot (``update=False``: the control)."""
    d, n = check_int(d, "d", minimum=1), check_int(n, "n", minimum=2)
    scale, c = check_positive(scale, "scale", allow_zero=True), check_positive(c, "c")
    rng = as_rng(seed, "seed")
    f = make_logistic(n, d, rng=rng)
    x0 = scale * rng.standard_normal(d)
    return bfgs(f.fun, x0, f.jac, hess=f.hess, B0=c * np.eye(d), c1=c1, c2=c2, update=update,
                stop="newton_decrement", tol=1e-13, maxiter=500 if update else CAP)


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
    log10_kappa, horizon = check_in_range(log10_kappa, "log10_kappa", 0, 12, closed=(True, True)), \
        check_int(horizon, "horizon", minimum=1)
    ex = conditioning_experiment(log10_kappa, gd_maxiter=horizon)  # only what is drawn
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
    res = phase_run(check_in_range(log10_c, "log10_c", -8, 8, closed=(True, True)),
                    check_in_range(c1, "c1", 0, 1), check_in_range(c2, "c2", 0, 1))
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
    data = stretched_paths(check_positive(stretch, "stretch"))
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


# --------------------------------------------------------------------------- evaluations against scipy


def _problems_for_nfev(seed: int) -> dict[str, tuple[Problem, np.ndarray]]:
    rng = np.random.default_rng(seed)
    logistic = make_logistic(400, 40, rng=rng)
    cubic = make_cubic(60, 20, mu=1e-2, rng=rng)
    quad = quadratic_with_condition(30, 1e3, rng=rng)
    small = make_logistic(200, 20, rng=rng)
    stretched = AffineComposition(small, conditioning_map(20, 1e4, rng), np.zeros(20))
    return {
        "logistic, n=400, d=40": (logistic, rng.standard_normal(40)),
        "cubic, m=60, d=20": (cubic, 3.0 * rng.standard_normal(20)),
        "Rosenbrock, d=2": (Rosenbrock(2), np.array([-1.2, 1.0])),
        "quadratic, kappa=1e3": (quad, rng.standard_normal(30)),
        "logistic through A, kappa=1e4": (stretched, stretched.to_u(rng.standard_normal(20))),
    }


def _stop_at_gap(f_star: float, tol: float):
    """A scipy callback stopping ``minimize`` at f - f* <= tol (scipy passes the intermediate
    result only to a callback whose one parameter is named ``intermediate_result``)."""
    def callback(intermediate_result):
        if intermediate_result.fun - f_star <= tol:
            raise StopIteration
    return callback


def nfev_comparison(seeds=(0, 1, 2), rel_gap: float = 1e-8) -> list[dict]:
    """Function evaluations of our BFGS (interpolating weak-Wolfe search, unit step first once one
    was accepted) and of ``scipy.optimize.minimize(method='BFGS')`` (strong Wolfe) to reach the same
    gap f - f* <= rel_gap (f(x0) - f*) on five problems; scipy is stopped by a callback, so both
    stop on the same, invariant rule. Medians over ``seeds``."""
    rel_gap = check_in_range(rel_gap, "rel_gap", 0, 1)
    rows: dict[str, dict[str, list]] = {}
    for seed in seeds:
        for name, (p, x0) in _problems_for_nfev(seed).items():
            _, f_star = solve_reference(p, x0)
            tol = rel_gap * max(1.0, p.fun(x0) - f_star)
            ours = bfgs(p.fun, x0, p.jac, f_star=f_star, stop="gap", tol=tol, maxiter=3000)
            with warnings.catch_warnings():  # scipy warns when its own gtol is not met
                warnings.simplefilter("ignore")
                ref = minimize(p.fun, x0, jac=p.jac, method="BFGS", callback=_stop_at_gap(f_star, tol),
                               options={"gtol": 1e-14, "maxiter": 3000})
            r = rows.setdefault(name, {"ours_nit": [], "ours_nfev": [], "scipy_nit": [], "scipy_nfev": []})
            r["ours_nit"].append(ours.nit)
            r["ours_nfev"].append(ours.nfev)
            r["scipy_nit"].append(ref.nit)
            r["scipy_nfev"].append(ref.nfev)
    out = []
    for name, r in rows.items():
        med = {k: float(np.median(v)) for k, v in r.items()}
        out.append({"problem": name, "iterations (ours)": med["ours_nit"], "iterations (scipy)": med["scipy_nit"],
                    "f evals (ours)": med["ours_nfev"], "f evals (scipy)": med["scipy_nfev"],
                    "f evals ratio": float(np.median(np.array(r["ours_nfev"]) / np.array(r["scipy_nfev"])))})
    return out


# --------------------------------------------------------------------------- tuning the line searches


TUNING_SEEDS = (100, 101, 102)  # held out: the claims run on seeds 0..4
# Grid order matters only for ties, which go to the first setting: the card's defaults come first.
BFGS_GRID = {"c1": (0.1, 1e-2, 1e-4), "c2": (0.9, 0.7, 0.5)}
GD_GRID = {"c1": (0.5, 0.1, 0.8), "grow": (2.0, 4.0, 8.0)}
GAP_TOL = 1e-6
CAP = 1000  # iteration cap of the claims' runs; a capped count is a lower bound


def _transformed_logistic(seed: int, log10_kappa: float, n: int = 400, d: int = 40):
    """f (logistic), its transform g(u) = f(Au + b) with cond(A^T A) = kappa, x0, u0 and f*."""
    rng = np.random.default_rng(seed)
    f = make_logistic(n, d, rng=rng)
    x0 = rng.standard_normal(d)
    A = conditioning_map(d, 10.0 ** log10_kappa, rng)
    g = AffineComposition(f, A, rng.standard_normal(d))
    return f, g, x0, g.to_u(x0), solve_reference(f)[1]


def _iterations(res: Result, cap: int) -> int:
    """Iterations a run needed to stop on its gap tolerance (``cap`` if it did not)."""
    return int(res.nit) if res.success else cap


@lru_cache(maxsize=256)
def _bfgs_iterations(seed: int, log10_kappa: float, on: str, c1: float, c2: float, update: bool) -> int:
    f, g, x0, u0, f_star = _transformed_logistic(seed, log10_kappa)
    p, start = (f, x0) if on == "f" else (g, u0)
    res = bfgs(p.fun, start, p.jac, c1=c1, c2=c2, update=update, f_star=f_star, stop="gap", tol=GAP_TOL,
               maxiter=CAP)
    return _iterations(res, CAP)


@lru_cache(maxsize=256)
def _gd_iterations(seed: int, log10_kappa: float, on: str, c1: float, grow: float) -> int:
    f, g, x0, u0, f_star = _transformed_logistic(seed, log10_kappa)
    p, start = (f, x0) if on == "f" else (g, u0)
    res = gradient_descent(p.fun, start, p.jac, c1=c1, grow=grow, f_star=f_star, tol=GAP_TOL, maxiter=CAP)
    return _iterations(res, CAP)


@lru_cache(maxsize=4)
def line_search_tuning(seeds: tuple[int, ...] = TUNING_SEEDS) -> tuple[Tuning, Tuning]:
    """Both methods' line-search constants tuned the same way: a 3 x 3 grid each, scored by the
    iterations to a gap of 1e-6 on the transformed logistic problem at kappa = 1e2 (where GD
    still finishes), median over held-out seeds."""
    tb = grid_search("BFGS (B0 = I)", lambda seed, c1, c2: _bfgs_iterations(seed, 2.0, "g", c1, c2, True),
                     BFGS_GRID, seeds)
    tg = grid_search("GD + Armijo", lambda seed, c1, grow: _gd_iterations(seed, 2.0, "g", c1, grow),
                     GD_GRID, seeds)
    return tb, tg


# --------------------------------------------------------------------------- the paper's cubic

CUBIC_MUS = (1e-3, 1e-2, 1e-1, 1.0)
CUBIC_SCALES = (1.0, 3.0, 10.0, 30.0)
CUBIC_KAPPAS = (1.0, 1e2, 1e4)
CUBIC_CAP = 300  # BFGS needs < 40 iterations here; GD's capped counts are lower bounds


@lru_cache(maxsize=64)
def _cubic_base(seed: int, mu: float):
    """The cubic, a unit start direction, f* and the M bound for one seed and mu (cached: the
    sweep reuses them for every start scale and kappa)."""
    rng = np.random.default_rng(seed)
    f = make_cubic(60, 20, mu=mu, rng=rng)
    direction = rng.standard_normal(20) / np.sqrt(20)
    _, f_star = solve_reference(f)
    m_bound = 2.0 * np.sum(np.linalg.norm(f.A, axis=1) ** 3) / mu ** 1.5
    return f, direction, f_star, float(m_bound)


def cubic_instance(seed: int, mu: float, scale: float, kappa: float):
    """The regularised cubic of the paper's experiments (our reading: 1/3 sum |a_i^T x - b_i|^3 +
    mu/2 ||x||^2, m = 60, d = 20) seen through A with cond(A^T A) = kappa, a start at distance
    ~scale, its optimal value, and the loose bound L2 / mu^{3/2} on the strong self-concordance
    constant M (L2 <= 2 sum ||a_i||^3 bounds the Hessian's Lipschitz constant)."""
    f, direction, f_star, m_bound = _cubic_base(seed, mu)
    x0 = scale * direction
    g = AffineComposition(f, conditioning_map(20, kappa, np.random.default_rng(10_000 + seed)), np.zeros(20))
    return g, g.to_u(x0), f_star, float(f.fun(x0) - f_star), m_bound


@lru_cache(maxsize=16)
def cubic_sweep(seed: int, method: str, fast: bool = False) -> list[dict]:
    """Iterations to a relative gap of 1e-10 over mu x scale x kappa(A) on the cubic.

    ``method`` 'bfgs' starts from B0 = the Hessian at the start (an affine-invariant choice);
    'gd' is gradient descent with its tuned Armijo constants (the claim's control).
    """
    method = check_choice(method, "method", ("bfgs", "gd"))
    mus = (1e-2, 1.0) if fast else CUBIC_MUS
    scales = (1.0, 10.0, 30.0) if fast else CUBIC_SCALES
    kappas = (1.0, 1e4) if fast else CUBIC_KAPPAS
    gd = line_search_tuning(TUNING_SEEDS[:1] if fast else TUNING_SEEDS)[1].best
    rows = []
    for mu in mus:
        for scale in scales:
            for kappa in kappas:
                g, u0, f_star, gap0, m_bound = cubic_instance(seed, mu, scale, kappa)
                tol = 1e-10 * gap0
                if method == "gd":
                    res = gradient_descent(g.fun, u0, g.jac, f_star=f_star, tol=tol, maxiter=CUBIC_CAP, **gd)
                else:
                    res = bfgs(g.fun, u0, g.jac, B0=g.hess(u0), f_star=f_star, stop="gap", tol=tol,
                               maxiter=CUBIC_CAP)
                rows.append({"mu": mu, "scale": scale, "kappa": kappa, "gap0": gap0, "M_bound": m_bound,
                             "iterations": _iterations(res, CUBIC_CAP)})
    return rows


def cubic_figure(seed: int = 0) -> go.Figure:
    """Iterations against the initial gap f(x0) - f* on the cubic, for every mu and kappa(A): BFGS's
    points fall on one rising curve per instance; gradient descent's scatter with kappa."""
    seed = check_int(seed, "seed")
    fig = go.Figure()
    for i, (method, label) in enumerate((("bfgs", "BFGS (B0 = Hessian at x0)"), ("gd", "GD + Armijo (tuned)"))):
        rows = cubic_sweep(seed, method)
        fig.add_trace(go.Scatter(
            x=[r["gap0"] for r in rows], y=[r["iterations"] for r in rows], mode="markers", name=label,
            marker=dict(color=color_for(i), size=[6 + 3 * np.log10(r["kappa"]) for r in rows],
                        symbol="circle" if i == 0 else "diamond-open"),
            text=[f"mu={r['mu']:g}, scale={r['scale']:g}, kappa(A)={r['kappa']:g}" for r in rows],
            hovertemplate="%{text}<br>gap0 %{x:.3g}: %{y} iterations<extra></extra>"))
    return base_layout(fig, logx=True, logy=True, xaxis_title="initial gap f(x0) - f*",
                       yaxis_title=f"iterations to gap <= 1e-10 x initial (cap {CUBIC_CAP})",
                       title="The cubic: BFGS follows the initial gap, GD follows the conditioning")


# --------------------------------------------------------------------------- claims


@claim("01", "BFGS is exactly affine invariant when B0 is transformed too", kind="identity",
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
                    holds=worst <= 1e-10 and same_count, summary=f"largest relative difference {worst:.1e}")


CLAIM_SEEDS = (0, 1, 2, 3, 4)


def mismatch_of_identity(seed: int, log10_kappa: float) -> float:
    """Psi(B~0) of B0 = I on the transformed problem g at kappa = 10^log10_kappa (on f at 0)."""
    f, g, _, _, _ = _transformed_logistic(seed, log10_kappa)
    x_star, _ = solve_reference(f)
    if log10_kappa == 0.0:
        return initial_mismatch(np.eye(f.dim), f.hess(x_star))
    return initial_mismatch(np.eye(f.dim), g.hess(np.linalg.solve(g.A, x_star - g.b)))


#: The line-search constants the first registration's tie-break picked (every setting tied).
FIRST_REGISTRATION_CONSTANTS = (1e-4, 0.5)


def ratio_over_f(c1: float, c2: float, seeds=CLAIM_SEEDS) -> float:
    """The first registration's statistic: median over seeds of max over kappa in {1e2, 1e4, 1e6} of
    iters(BFGS on g, B0 = I) / iters(BFGS on f, B0 = I), with line-search constants (c1, c2)."""
    return float(np.median([
        max(_bfgs_iterations(s, k, "g", c1, c2, True) for k in (2.0, 4.0, 6.0)) / _bfgs_iterations(s, 0.0, "f", c1, c2, True)
        for s in seeds]))


@claim("01", "BFGS's iteration count grows with the conditioning a change of variables adds no faster "
       "than the invariant mismatch Psi; gradient descent's grows with kappa itself", kind="reproduction",
       paper="Rates depend only on M and f(x0) - f*; B0 enters through an affine-invariant mismatch "
             "(Psi in our reconstruction), never through the condition number (no number given)",
       expect="median over 5 seeds of [iters(kappa=1e6) / iters(kappa=1e2)] / [Psi(1e6) / Psi(1e2)] <= 1 for "
              "BFGS with B0 = I on g, and median iters(GD on g, kappa=1e4) / iters(GD on f) >= 10 "
              "(line searches tuned on held-out seeds; a first registration, iters(g)/iters(f) <= 2 at "
              "every kappa, failed at 2.4 and is reported, not used: see the chapter)",
       control="BFGS without its update (the matrix stays B0 = I: gradient descent with the same "
               "weak-Wolfe search)",
       name="condition_independence")
def claim_condition_independence(fast: bool = False, control: bool = False) -> Measured:
    seeds = CLAIM_SEEDS[:2] if fast else CLAIM_SEEDS
    tb, tg = line_search_tuning(TUNING_SEEDS[:1] if fast else TUNING_SEEDS)
    c1, c2 = tb.best["c1"], tb.best["c2"]
    growth, gd_ratio = [], []
    for seed in seeds:
        psi = mismatch_of_identity(seed, 6.0) / mismatch_of_identity(seed, 2.0)
        growth.append(_bfgs_iterations(seed, 6.0, "g", c1, c2, not control)
                      / _bfgs_iterations(seed, 2.0, "g", c1, c2, not control) / psi)
        gd_ratio.append(_gd_iterations(seed, 4.0, "g", **tg.best) / _gd_iterations(seed, 0.0, "f", **tg.best))
    b, gdr = float(np.median(growth)), float(np.median(gd_ratio))
    values = {"growth_over_psi": b, "growth_over_psi_min": min(growth), "growth_over_psi_max": max(growth),
              "gd_ratio": gdr, "gd_ratio_min": min(gd_ratio), "gd_ratio_max": max(gd_ratio),
              "bfgs_g_over_f": ratio_over_f(c1, c2, seeds)}
    return Measured(values, criteria=[Criterion("growth_over_psi", "<=", 1.0), Criterion("gd_ratio", ">=", 10.0)],
                    seeds=seeds,
                    summary=f"{'no-update ' if control else ''}BFGS: iterations grow {b:.2f}x as fast as Psi "
                            f"({min(growth):.2f}-{max(growth):.2f}); GD ratio >= {gdr:.0f} at kappa = 1e4")


@claim("01", "On the paper's cubic, BFGS's iteration count follows the initial gap, not the conditioning",
       kind="reproduction",
       paper="The complexity depends only on the invariant quantities M and f(x0) - f* (their cubic "
             "experiment; no number given)",
       expect="median over 5 seeds of the Spearman correlation between iterations and log(f(x0) - f*) "
              "over mu x start scale x kappa(A) (48 runs per seed) >= 0.8",
       control="gradient descent with its tuned Armijo constants in place of BFGS",
       name="cubic_complexity")
def claim_cubic_complexity(fast: bool = False, control: bool = False) -> Measured:
    seeds = CLAIM_SEEDS[:2] if fast else CLAIM_SEEDS
    rhos, mu_effect = [], []
    for seed in seeds:
        rows = cubic_sweep(seed, "gd" if control else "bfgs", fast)
        its = np.array([r["iterations"] for r in rows], dtype=float)
        rhos.append(float(spearmanr(np.log([r["gap0"] for r in rows]), its).statistic))
        # How much mu matters at a fixed start: iterations at the smallest mu over the largest.
        by_mu = {mu: np.median([r["iterations"] for r in rows if r["mu"] == mu]) for mu in {r["mu"] for r in rows}}
        mu_effect.append(by_mu[min(by_mu)] / by_mu[max(by_mu)])
    rho = float(np.median(rhos))
    rows0 = cubic_sweep(seeds[0], "bfgs", fast)
    m_span = max(r["M_bound"] for r in rows0) / min(r["M_bound"] for r in rows0)
    values = {"spearman": rho, "spearman_min": min(rhos), "spearman_max": max(rhos),
              "iterations_ratio_small_over_large_mu": float(np.median(mu_effect)), "M_bound_span": m_span}
    return Measured(values, criteria=[Criterion("spearman", ">=", 0.8)], seeds=seeds,
                    summary=f"{'GD: ' if control else ''}Spearman {rho:.2f} ({min(rhos):.2f} to {max(rhos):.2f}); "
                            f"iterations x{np.median(mu_effect):.1f} while the M bound spans x{m_span:.0e}")


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
       kind="reproduction",
       paper="After finitely many iterations the unit step satisfies the weak Wolfe conditions and "
             "f(x_t) - f* falls superlinearly, like (C/t)^t",
       expect="in every run (5 seeds x B0 = cI, c from 0.03 to 3) unit steps from some t0 on, and the "
              "contraction lambda_{t+1}/lambda_t at the end <= 0.5x its median over the first half "
              "(worst run)",
       control="BFGS without its update (the matrix stays B0 = cI)",
       name="superlinear_phase")
def claim_superlinear(fast: bool = False, control: bool = False) -> Measured:
    seeds, cs = ((1, 2), (0.1, 1.0)) if fast else ((1, 2, 3, 4, 5), (0.03, 0.1, 0.3, 1.0, 3.0))
    t0s, drops = [], []
    for seed in seeds:
        for c in cs:
            res = superlinear_run(seed=seed, c=c, update=not control)
            t0 = unit_step_index(res.trace)
            t0s.append(np.inf if t0 is None or not res.success else t0)
            drops.append(contraction_drop(res.trace))
    drops_arr = np.array(drops, dtype=float)
    worst = float(np.max(drops_arr)) if np.all(np.isfinite(drops_arr)) else float("inf")
    unit_phase = float(np.mean(np.isfinite(t0s)))
    values = {"worst_contraction_drop": worst, "median_contraction_drop": float(np.nanmedian(drops_arr)),
              "runs_with_unit_phase": unit_phase, "worst_t0": float(max(t0s)), "runs": len(t0s)}
    # "Every run" is a yes/no condition, not a margin: it goes in holds, the contraction in criteria.
    return Measured(values, holds=unit_phase == 1.0, criteria=[Criterion("worst_contraction_drop", "<=", 0.5)],
                    seeds=seeds,
                    summary=f"{'no-update: ' if control else ''}unit steps in {unit_phase:.0%} of runs "
                            f"(from t0 <= {max(t0s):.0f}); contraction falls to <= {worst:.2f}x")
