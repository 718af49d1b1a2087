"""Chapter 13: the book's experiments, figures, live explorers and claims for RO2NC. The methods
themselves are in :mod:`optbook.geometry.riemannian_nonsmooth`.

The experiments run on dual principal component pursuit (DPCP) on S^29 with minibatches of 8
rows, from random starts. RO2NC appears in two settings: the theory's rule with the a-priori
bound G = 1 (every minibatch subgradient averages unit vectors, so its norm is at most 1), and
the rule with G tuned on held-out seeds. ZO-RO2NC runs on a d = 10 instance with its window tuned.
"""
from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
import plotly.graph_objects as go

from ..claims import Criterion, Measured, claim
from ..core import (Result, Trace, Tuning, check_choice, check_in_range, check_int, check_positive, grid_search,
                    loglog_slope)
from ..viz import Phase, SliderStep, base_layout, color_for, convergence_figure, slider_figure
from ..widgets import Explorer, Slider
from .riemannian_nonsmooth import (
    DPCP,
    Euclidean,
    GoldsteinEstimate,
    Sphere,
    goldstein_estimate,
    make_dpcp,
    o2nc,
    riemannian_subgradient,
    ro2nc,
    theory_parameters,
    zo_ro2nc,
    zo_rsgd,
)

# --------------------------------------------------------------------------- the experiments

DELTA = 0.05            # Goldstein radius (rad) of every experiment
SAMPLES = 20_000        # stochastic subgradients per run (zeroth order: 2 x as many function values)
BOUND_G, BOUND_EPS = 1.0, 0.1   # the theory's rule with the a-priori bound: T = 100, D = 5e-4, eta = 5e-5
CLAIM_SEEDS = (0, 1, 2, 3, 4)
FAST_SEEDS = (0, 1)
ZO_FAST_SEEDS = (0, 1, 2)  # the zeroth-order output rule is erratic: the fast median rests on 3
TUNING_SEEDS = (100, 101, 102)  # held out: the claims run on seeds 0..4
ZO_TUNING_SEEDS = (100, 101)
N_GOLD = 200            # points sampled by every Goldstein estimate
ZO_MU = 1e-3            # smoothing radius of the two-point estimator (<< DELTA)
RSGD_ETA = 0.003        # RSGD's and ZO-RSGD's step in the picture (the chapter's first fixed choice, not tuned)
FIXED_ZO_T = 50         # ZO-RO2NC's window in the picture (the chapter's first fixed choice, not tuned)


@lru_cache(maxsize=1)
def dpcp_problem() -> DPCP:
    """The chapter's DPCP instance: d = 30, N = 600, 70% inliers on a hyperplane, minibatch 8."""
    return make_dpcp(30, 600, 0.7, batch=8, rng=0)


def dpcp_start(seed: int) -> np.ndarray:
    """The random start of run ``seed`` (uniform on the sphere)."""
    return Sphere(dpcp_problem().d).random_point(1000 + check_int(seed, "seed"))


def goldstein_of(x: np.ndarray, delta: float = DELTA, problem: DPCP | None = None) -> float:
    """Goldstein estimate of a DPCP objective (default: the chapter's) at x: N_GOLD sampled points,
    one fixed set of sampled directions so that the same point always gets the same value."""
    p = dpcp_problem() if problem is None else problem
    return goldstein_estimate(x, p.subgrad, manifold=Sphere(p.d), delta=delta, n_samples=N_GOLD, rng=0,
                              vectorized=True).value


def _random_sign_jac(x: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """The control's oracle: a minibatch subgradient with a random sign (same size, mean zero,
    no information about the slope of f)."""
    g = dpcp_problem().stochastic_subgrad(x, rng)
    return g if rng.random() < 0.5 else -g


def _random_sign_fun_sample(p: DPCP):
    """The zeroth-order control: the two values in a random order (the estimate's sign at random)."""
    def fun_sample(B: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        vals = p.fun_sample(B, rng)
        return vals if rng.random() < 0.5 else vals[::-1]
    return fun_sample


def _monitor(x: np.ndarray) -> dict:
    return {"angle": dpcp_problem().angle_deg(x)}


@lru_cache(maxsize=128)
def ro2nc_run(seed: int, G: float = BOUND_G, eps: float = BOUND_EPS, control: bool = False) -> Result:
    """RO2NC with the theory's parameters for (DELTA, eps) and bound G, SAMPLES subgradients."""
    p = dpcp_problem()
    jac = _random_sign_jac if control else p.stochastic_subgrad
    label = "RO2NC (G = 1)" if G == BOUND_G else f"RO2NC (tuned G = {G:g})"
    return ro2nc(p.fun, dpcp_start(seed), jac, manifold=Sphere(p.d), maxiter=SAMPLES, rng=seed, monitor=_monitor,
                 method=label, **theory_parameters(eps, DELTA, G))


@lru_cache(maxsize=128)
def rsm_run(seed: int, eta0: float, schedule: str = "sqrt") -> Result:
    """The Riemannian subgradient method (eta0/sqrt k) or RSGD (constant eta0), SAMPLES subgradients."""
    p = dpcp_problem()
    return riemannian_subgradient(p.fun, dpcp_start(seed), p.stochastic_subgrad, manifold=Sphere(p.d),
                                  eta0=eta0, schedule=schedule, maxiter=SAMPLES, rng=seed, monitor=_monitor)


@lru_cache(maxsize=1)
def zo_problem() -> DPCP:
    """The zeroth-order claim's DPCP instance: d = 10 (dim M = 9), N = 600, 70% inliers, minibatch 8.
    The two-point estimator's variance carries the factor dim M: at d = 30 no zeroth-order method,
    the baseline included, reaches a Goldstein point with the budget here (see the chapter)."""
    return make_dpcp(10, 600, 0.7, batch=8, rng=0)


def zo_start(seed: int) -> np.ndarray:
    """The random start of zeroth-order run ``seed`` on :func:`zo_problem` (uniform on S^9)."""
    return Sphere(zo_problem().d).random_point(1000 + check_int(seed, "seed"))


ZO_SAMPLES = 10_000      # two-point estimates per zeroth-order run: 20 000 function values


@lru_cache(maxsize=128)
def zo_ro2nc_run(seed: int, T: int, control: bool = False, problem: str = "zo") -> Result:
    """ZO-RO2NC with window T, D = DELTA/T, eta = D/sqrt(T) (the rule with G = 1) on the d = 10
    instance with ZO_SAMPLES estimates (``problem="first_order"``: the d = 30 instance, 2 x SAMPLES)."""
    T = check_int(T, "T", minimum=1)
    p, x0, n = ((zo_problem(), zo_start(seed), ZO_SAMPLES) if problem == "zo"
                else (dpcp_problem(), dpcp_start(seed), SAMPLES))
    D = DELTA / T
    fs = _random_sign_fun_sample(p) if control else p.fun_sample
    return zo_ro2nc(p.fun, x0, fs, manifold=Sphere(p.d), T=T, D=D, eta=D / math.sqrt(T), mu=ZO_MU,
                    maxiter=n, rng=seed, monitor=lambda x: {"angle": p.angle_deg(x)})


@lru_cache(maxsize=128)
def zo_rsgd_run(seed: int, eta0: float, problem: str = "zo") -> Result:
    """Zeroth-order RSGD with constant step eta0 (instances and budgets as :func:`zo_ro2nc_run`)."""
    p, x0, n = ((zo_problem(), zo_start(seed), ZO_SAMPLES) if problem == "zo"
                else (dpcp_problem(), dpcp_start(seed), SAMPLES))
    return zo_rsgd(p.fun, x0, p.fun_sample, manifold=Sphere(p.d), eta0=eta0, mu=ZO_MU, schedule="constant",
                   maxiter=n, rng=seed, monitor=lambda x: {"angle": p.angle_deg(x)})


def theory_budget(seeds=CLAIM_SEEDS, G: float = BOUND_G, eps: float = BOUND_EPS, delta: float = DELTA) -> dict:
    """Our reading of the Euclidean O2NC budget: windows of T = 4 G^2/eps^2 (window noise <= eps/2)
    and K = 2 Delta_F/(delta eps) of them (decrease term <= eps/2), N = K T = 8 Delta_F G^2/(delta eps^3),
    with Delta_F = f(x0) - f(b*) (median over the claim's starts)."""
    G, eps, delta = check_positive(G, "G"), check_positive(eps, "eps"), check_positive(delta, "delta")
    p = dpcp_problem()
    gap = float(np.median([p.fun(dpcp_start(s)) - p.fun(p.b_star) for s in seeds]))
    return {"delta_f": gap, "samples": 8.0 * gap * G ** 2 / (delta * eps ** 3)}


def goldstein_profile(angles_deg=(0.5, 1, 2, 5, 10, 20, 45, 70, 90), delta: float = DELTA) -> list[dict]:
    """Goldstein estimate and full Riemannian subgradient norm at points at given angles from b_star."""
    angles_deg = [check_in_range(a, "angles_deg", 0.0, 180.0, closed=(True, True)) for a in angles_deg]
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


# --------------------------------------------------------------------------- samples to a Goldstein point

COUNT_EPS = 0.01               # the eps of the comparison (about 4x below the starts' measure)
EPS_GRID = (0.02, 0.01, 0.005)
CAP = 10_000                   # samples; a run that has not reached eps by then counts as not reaching it
CHECK_EVERY = 100              # the iterate is checked every 100 samples, for every method
RO2NC_G_GRID = (0.0125, 0.025, 0.05, 0.1)
RSM_ETA_GRID = (0.1, 0.3, 1.0, 3.0)


class _Reached(StopIteration):
    pass


@lru_cache(maxsize=512)
def samples_to_goldstein(method: str, seed: int, eps: float, param: float, control: bool = False) -> float:
    """Stochastic subgradients ``method`` needs until its iterate is (DELTA, eps)-Goldstein
    stationary by :func:`goldstein_of`, checked every CHECK_EVERY samples (inf if not within CAP).

    ``method`` 'RO2NC' runs the theory's rule for (DELTA, eps) with bound G = ``param``; 'RSM' the
    subgradient method with eta_k = ``param``/sqrt(k). ``control`` gives RO2NC the random-sign
    oracle.
    """
    method = check_choice(method, "method", ("RO2NC", "RSM"))
    eps = check_in_range(eps, "eps", 0.0, 1.0)
    p = dpcp_problem()
    x0 = dpcp_start(seed)
    if goldstein_of(x0) <= eps:
        return 0.0

    def check(x):
        if goldstein_of(x) <= eps:
            raise _Reached

    common = dict(manifold=Sphere(p.d), maxiter=CAP, rng=seed, record_every=CHECK_EVERY, callback=check)
    if method == "RO2NC":
        jac = _random_sign_jac if control else p.stochastic_subgrad
        res = ro2nc(p.fun, x0, jac, **theory_parameters(eps, DELTA, param), **common)
    else:
        res = riemannian_subgradient(p.fun, x0, p.stochastic_subgrad, eta0=param, schedule="sqrt", **common)
    return float(res.nit) if res.message == "stopped by callback" else math.inf


@lru_cache(maxsize=4)
def first_order_tuning(seeds: tuple[int, ...] = TUNING_SEEDS) -> tuple[Tuning, Tuning]:
    """RO2NC's bound G and RSM's eta0, each over a 4-point grid, scored by the samples to a
    (DELTA, COUNT_EPS)-Goldstein point (median over held-out seeds; not reached: ranks last)."""
    tr = grid_search("RO2NC (theory rule, G tuned)",
                     lambda seed, G: samples_to_goldstein("RO2NC", seed, COUNT_EPS, G), {"G": RO2NC_G_GRID}, seeds)
    ts = grid_search("RSM (eta0 / sqrt k)",
                     lambda seed, eta0: samples_to_goldstein("RSM", seed, COUNT_EPS, eta0), {"eta0": RSM_ETA_GRID},
                     seeds)
    return tr, ts


# --------------------------------------------------------------------------- zeroth order

# Grid order matters only for ties (first wins): the chapter's first fixed T = 50 first (registered before
# the full run; on the held-out seeds all three windows tie, so this order decides the setting).
ZO_T_GRID = (50, 25, 100)
ZO_ETA_GRID = (0.004, 0.002, 0.008)


def zo_output_ratio(method: str, seed: int, param: float, control: bool = False) -> float:
    """Goldstein(output) / Goldstein(start) of a zeroth-order method on the d = 10 instance: its
    own output, ZO-RO2NC's best-certificate window point (window T = ``param``) or ZO-RSGD's last
    iterate (step ``param``)."""
    p = zo_problem()
    if check_choice(method, "method", ("ZO-RO2NC", "ZO-RSGD")) == "ZO-RO2NC":
        x = zo_ro2nc_run(seed, check_int(param, "param", minimum=1), control).x
    else:
        x = zo_rsgd_run(seed, check_positive(param, "param")).x
    return goldstein_of(x, problem=p) / goldstein_of(zo_start(seed), problem=p)


@lru_cache(maxsize=4)
def zero_order_tuning(seeds: tuple[int, ...] = ZO_TUNING_SEEDS) -> tuple[Tuning, Tuning]:
    """ZO-RO2NC's window T and ZO-RSGD's step, 3 settings each, scored by the Goldstein ratio of
    the method's own output after 2 x ZO_SAMPLES function values (median over held-out seeds)."""
    tr = grid_search("ZO-RO2NC (window T)", lambda seed, T: zo_output_ratio("ZO-RO2NC", seed, T), {"T": ZO_T_GRID},
                     seeds)
    ts = grid_search("ZO-RSGD (constant step)", lambda seed, eta0: zo_output_ratio("ZO-RSGD", seed, eta0),
                     {"eta0": ZO_ETA_GRID}, seeds)
    return tr, ts


# --------------------------------------------------------------------------- figures


def dpcp_convergence_traces(seed: int = 0) -> list:
    """Angle-to-b* traces of every method on one seed (tuned settings from the held-out seeds)."""
    seed = check_int(seed, "seed")
    tr, ts = first_order_tuning()
    runs = [ro2nc_run(seed), ro2nc_run(seed, tr.best["G"], COUNT_EPS), rsm_run(seed, ts.best["eta0"]),
            rsm_run(seed, RSGD_ETA, "constant"), zo_ro2nc_run(seed, FIXED_ZO_T, problem="first_order"),
            zo_rsgd_run(seed, RSGD_ETA, problem="first_order")]
    names = [runs[0].trace.method, runs[1].trace.method, f"RSM (tuned eta0 = {ts.best['eta0']:g})",
             f"RSGD (eta = {RSGD_ETA:g}, untuned)", f"ZO-RO2NC (T = {FIXED_ZO_T}, untuned)",
             f"ZO-RSGD (eta = {RSGD_ETA:g}, untuned)"]
    traces = []
    for r, name in zip(runs, names):
        t = Trace.from_dict(r.trace.to_dict())   # a copy: the runs are cached
        t.method = name
        traces.append(t)
    return traces


def dpcp_convergence_figure(traces: list) -> go.Figure:
    """The angle to b* against oracle calls for every method (log scale), with RO2NC (G = 1)'s
    travel and refinement phases (before and after it first comes within 5 deg)."""
    n5 = traces[0].first_below("angle", 5.0) or SAMPLES
    return convergence_figure(traces, y="angle", x="samples", logy=True,
                              phases=[Phase(0, n5, "travel (RO2NC, G = 1)"), Phase(n5, 2 * SAMPLES, "refinement")],
                              xaxis_title="oracle calls (subgradients, or function values for ZO)",
                              yaxis_title="angle to the normal b* (deg)",
                              title="DPCP on the sphere S^29: the angle to the normal, seed 0")


def run_numbers(traces: list) -> dict[str, tuple]:
    """The figures the text quotes from :func:`dpcp_convergence_traces` (name: (value, format))."""
    final = [t["angle"][-1] for t in traces]
    return {"run_n5": (traces[0].first_below("angle", 5.0) or SAMPLES, "{:.0f}"),
            "run_tuned_n5": (traces[1].first_below("angle", 5.0) or SAMPLES, "{:.0f}"),
            "run_rsm_n5": (traces[2].first_below("angle", 5.0) or SAMPLES, "{:.0f}"),
            "run_ro2nc": (final[0], "{:.2f}"), "run_tuned": (final[1], "{:.1f}"), "run_rsm": (final[2], "{:.2f}"),
            "run_rsgd": (final[3], "{:.2f}"),
            "run_zo": (max(final[4:]), "{:.0f}"), "run_zo_min": (min(final[4:]), "{:.1f}")}


def profile_numbers(profile: list[dict]) -> dict[str, tuple]:
    """The figures the text quotes from :func:`goldstein_profile` (name: (value, format))."""
    key = f"Goldstein estimate, delta={DELTA:g}"
    at = {r["angle to b* (deg)"]: r[key] for r in profile}
    return {"profile_max": (max(at.values()), "{:.2f}"), "profile_90": (at[90.0], "{:.3f}"),
            "profile_5": (at[5.0], "{:.2f}")}


def samples_figure(counts: dict) -> go.Figure:
    """Samples to a (DELTA, eps)-Goldstein point against 1/eps (log-log), per seed and median."""
    def finite(v):   # a run that never got there (inf) is left out of the plot, not drawn at inf
        v = np.asarray(v, dtype=float)
        return np.where(np.isfinite(v), v, np.nan)

    fig = go.Figure()
    for i, (name, rows) in enumerate(counts.items()):
        inv = [1.0 / e for e in EPS_GRID]
        med = finite([np.median(rows[e]) for e in EPS_GRID])
        for e in EPS_GRID:
            fig.add_trace(go.Scatter(x=[1.0 / e] * len(rows[e]), y=finite(rows[e]), mode="markers", showlegend=False,
                                     marker=dict(color=color_for(i), size=6, opacity=0.45),
                                     hovertemplate=f"{name}<br>1/eps %{{x:g}}: %{{y:.0f}} samples<extra></extra>"))
        fig.add_trace(go.Scatter(x=inv, y=med, mode="lines+markers", name=f"{name} (median)",
                                 line=dict(color=color_for(i), width=3)))
        missed = [1.0 / e for e in EPS_GRID for v in rows[e] if not np.isfinite(v)]
        if missed:
            fig.add_trace(go.Scatter(x=missed, y=[CAP] * len(missed), mode="markers",
                                     name=f"{name}: not there within {CAP:,} (drawn at the cap)".replace(",", " "),
                                     marker=dict(color=color_for(i), size=11, symbol="x-thin-open",
                                                 line=dict(width=2, color=color_for(i)))))
    # The bound's eps^-3, drawn through RSM's median at the largest eps (a slope, not a prediction).
    ref = float(np.median(counts["RSM"][EPS_GRID[0]]))
    fig.add_trace(go.Scatter(x=[1 / EPS_GRID[0], 1 / EPS_GRID[-1]],
                             y=[ref, ref * (EPS_GRID[0] / EPS_GRID[-1]) ** 3], mode="lines",
                             name="slope 3 (the bound's eps^-3)", line=dict(color="#999", dash="dot")))
    return base_layout(fig, logx=True, logy=True, xaxis_title="1 / eps",
                       yaxis_title="samples to a (0.05, eps)-Goldstein point",
                       title="Samples to stationarity: RO2NC's grow with 1/eps, the subgradient method's barely")


# --------------------------------------------------------------------------- pictures on S^2

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
    """A Euclidean subgradient (sign(x_1), 0.5 sign(x_2), 0) (works on a stack of points)."""
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
    step = check_in_range(step, "step", 0.0, 10.0)
    s = check_in_range(s, "s", 0.0, 1.0, closed=(True, True))
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
            go.Scatter3d(x=curve[:, 0], y=curve[:, 1], z=curve[:, 2], mode="lines",
                         name="retraction curve R_x(t Delta)",
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
    n = check_int(n, "n", minimum=0)
    if n > PLAY_STEPS:
        raise ValueError(f"n must be <= {PLAY_STEPS}, got {n}")
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


# --------------------------------------------------------------------------- Goldstein picture

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


def toy_point() -> tuple[np.ndarray, np.ndarray]:
    """The point x = Exp_{e3}(GOLD_OFFSET[0] e1 + GOLD_OFFSET[1] e2) and an orthonormal basis
    (rows) of T_x S^2."""
    M = Sphere(3)
    x = M.exp(np.array([0.0, 0.0, 1.0]), np.array([GOLD_OFFSET[0], GOLD_OFFSET[1], 0.0]))
    t1 = M.proj(x, np.array([1.0, 0.0, 0.0]))
    t1 /= np.linalg.norm(t1)
    t2 = np.cross(x, t1)
    return x, np.array([t1, t2])


@lru_cache(maxsize=1)
def _kink_curves() -> np.ndarray:
    """The kinks {x1 = 0} and {x2 = 0} near the picture's point, in its tangent coordinates."""
    x, basis = toy_point()
    u = np.linspace(-0.45, 0.45, 40)
    e3 = np.array([0, 0, 1.0])
    kink1 = np.array([Sphere(3).exp(e3, np.array([0, t, 0.0])) for t in u])
    kink2 = np.array([Sphere(3).exp(e3, np.array([t, 0, 0.0])) for t in u])
    return np.vstack([(kink1 - x) @ basis.T, [[np.nan, np.nan]], (kink2 - x) @ basis.T])


@lru_cache(maxsize=64)
def toy_goldstein(delta: float, n_samples: int = 200) -> GoldsteinEstimate:
    """Goldstein estimate of the toy f at the picture's point (cached for the explorer)."""
    x, _ = toy_point()
    return goldstein_estimate(x, toy_subgrad, manifold=Sphere(3), delta=delta, n_samples=n_samples, rng=0,
                              vectorized=True)


def goldstein_traces(delta: float, n_samples: int = 200) -> tuple[list, dict]:
    """Left: the geodesic delta-ball around x in tangent coordinates with the kinks; right: the
    transported subgradients, their convex hull and the min-norm element."""
    est = toy_goldstein(delta, n_samples)
    x, basis = toy_point()
    pts = (est.points - x) @ basis.T
    grads = est.gradients @ basis.T
    elem = est.element @ basis.T
    pattern = np.sign(est.points[:, 0]) + 2 * np.sign(est.points[:, 1])
    ang = np.linspace(0, 2 * np.pi, 60)
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


# --------------------------------------------------------------------------- what the text quotes

#: glue formats of the claims' measured values
GLUE_FORMATS = {
    "goldstein_output": {"ratio": "{:.2g}", "ratio_max": "{:.2g}", "n_passed": "{:.0f}", "goldstein_start": "{:.3f}",
                         "certificate": "{:.3f}", "angle_deg_max": "{:.2f}"},
    "samples_vs_rsm": {"ratio_001": "{:.2f}", "ratio_001_min": "{:.2f}", "ratio_001_max": "{:.2f}",
                       "ratio_0005": "{:.2f}", "slope_ro2nc": "{:.2f}", "slope_rsm": "{:.2f}",
                       "ro2nc_001": "{:.0f}", "rsm_001": "{:.0f}", "ro2nc_0005": "{:.0f}", "rsm_0005": "{:.0f}",
                       "rsm_002": "{:.0f}", "G": "{:g}", "eta0": "{:g}", "goldstein_start_min": "{:.3f}"},
    "zeroth_order": {"ratio": "{:.2g}", "ratio_max": "{:.2f}", "ratio_zo_rsgd": "{:.2g}",
                     "angle_output_max": "{:.0f}", "angle_last": "{:.1f}", "T": "{:.0f}", "eta0_zo_rsgd": "{:g}"},
}


def _edge_note(tunings) -> str:
    edges = [t.method for t in tunings if t.on_edge()]
    return ("Every best setting lies inside its grid." if not edges
            else "The best setting lies on the edge of its grid for: " + ", ".join(edges) + ".")


def comparison_numbers(res) -> dict[str, tuple]:
    """What the text quotes about the samples comparison (name: (value, format)): the rule's
    parameters at the tuned G, the typical subgradient size and the certificate's noise, and what
    the tuned G does at eps = 0.02 (seed 0's run: the median angle over its second half)."""
    tr, ts = res.details["tunings"]
    G = tr.best["G"]
    p, rng = dpcp_problem(), np.random.default_rng(0)
    g_typ = float(np.median([np.linalg.norm(p.stochastic_subgrad(dpcp_start(0), rng)) for _ in range(2000)]))
    at_001, at_002 = theory_parameters(COUNT_EPS, DELTA, G), theory_parameters(0.02, DELTA, G)
    counts_002 = np.asarray(res.details["counts"]["RO2NC"].get(0.02, [np.nan]), dtype=float)
    rattle = ro2nc(p.fun, dpcp_start(0), p.stochastic_subgrad, manifold=Sphere(p.d), maxiter=CAP, rng=0,
                   record_every=CHECK_EVERY, monitor=_monitor, **at_002)
    # Steps of full length D at the tuned G (seed 0, the first 2000 samples; the rows at a window's
    # end record the learner after its reset, so they are left out).
    run = ro2nc(p.fun, dpcp_start(0), p.stochastic_subgrad, manifold=Sphere(p.d), maxiter=2000, rng=0,
                record_every=1, **at_001)
    n, length = np.asarray(run.trace.iteration), np.asarray(run.trace.step_size)
    inside = (n > 0) & (n % at_001["T"] != 0)
    clipped = float(np.mean(length[inside] >= at_001["D"] * (1 - 1e-9)))
    return {"cmp_edge_note": (_edge_note((tr, ts)), None),
            "cmp_T": (at_001["T"], "{:.0f}"), "cmp_D": (at_001["D"], "{:.4f}"),
            "cmp_eta": (at_001["eta"], "{:.2f}"), "cmp_clipped": (100 * clipped, "{:.0f}"),
            "cmp_T_002": (at_002["T"], "{:.0f}"), "cmp_D_002": (at_002["D"], "{:.3f}"),
            "g_typical": (g_typ, "{:.2f}"), "cert_noise": (g_typ / math.sqrt(at_001["T"]), "{:.2f}"),
            "cmp_002_text": ("did not get there within 10 000 samples on any seed" if not np.isfinite(counts_002).any()
                             else f"needed a median of {np.median(counts_002):.0f} samples", None),
            "cmp_002_angle": (float(np.median(rattle.trace["angle"][len(rattle.trace) // 2:])), "{:.1f}")}


def zero_order_numbers(res) -> dict[str, tuple]:
    """What the text quotes about the zeroth-order claim: the seeds whose own output is not
    stationary, and the ties of the tuning."""
    zr, zs = res.details["tunings"]
    bad = sum(zo_output_ratio("ZO-RO2NC", s, zr.best["T"]) > 0.1 for s in res.seeds)
    ties = "; ".join(f"{t.method}: {int(np.sum(t.scores == t.best_score))} of {t.size} settings share the best score"
                     for t in (zr, zs))
    return {"zo_bad": (bad, "{:.0f}"), "zo_ties": (ties, None), "zo_edge_note": (_edge_note((zr, zs)), None)}


# --------------------------------------------------------------------------- claims


@claim("13", "RO2NC's output is Goldstein-stationary: the measure falls tenfold from the start",
       kind="reproduction",
       paper="RO2NC returns a Riemannian (delta, eps)-Goldstein stationary point after O(eps^-3 delta^-1) "
             "stochastic subgradients (no constants given; our reading of the Euclidean O2NC analysis puts "
             "the budget for G = 1, eps = 0.1, delta = 0.05 below the 20 000 used here: theory_budget)",
       expect="median over 5 seeds of Goldstein(output) / Goldstein(start) <= 0.1 (delta = 0.05, estimated with "
              "200 sampled points; RO2NC with the theory's rule for G = 1, eps = 0.1: T = 100, D = 5e-4, "
              "eta = 5e-5; 20 000 minibatch subgradients; the start already meets eps = 0.1, so the threshold "
              "is relative)",
       control="RO2NC fed the minibatch subgradient with a random sign (same size, no information about f)",
       name="goldstein_output")
def claim_goldstein_output(fast: bool = False, control: bool = False) -> Measured:
    seeds = FAST_SEEDS if fast else CLAIM_SEEDS
    p = dpcp_problem()
    runs = [ro2nc_run(s, control=control) for s in seeds]
    start = np.array([goldstein_of(dpcp_start(s)) for s in seeds])
    out = np.array([goldstein_of(r.x) for r in runs])
    ratio = out / start
    cert = np.array([r.window_norms[r.best_window] for r in runs])
    angles = [p.angle_deg(r.x) for r in runs]
    values = {"ratio": float(np.median(ratio)), "ratio_min": float(ratio.min()), "ratio_max": float(ratio.max()),
              "n_passed": float(np.sum(ratio <= 0.1)), "goldstein_output": float(np.median(out)),
              "goldstein_start": float(np.median(start)),
              "certificate": float(np.median(cert)), "certificate_max": float(cert.max()),
              "angle_deg": float(np.median(angles)), "angle_deg_max": float(max(angles))}
    return Measured(values, criteria=[Criterion("ratio", "<=", 0.1)], seeds=seeds,
                    summary=f"{'random-sign control: ' if control else ''}Goldstein(output) / Goldstein(start): "
                            f"median {np.median(ratio):.2g} ({ratio.min():.2g}-{ratio.max():.2g}); output "
                            f"{np.median(angles):.2g} deg from b*")


@claim("13", "At equal eps, tuned RO2NC needs at most twice the samples of the tuned subgradient method",
       kind="reproduction",
       paper="O(eps^-3 delta^-1) samples to a (delta, eps)-Goldstein point, the optimal rate, and 'the numerical "
             "results ... demonstrate the practical effectiveness' (no number against a baseline)",
       expect="at eps = 0.01, delta = 0.05: median over 5 seeds of samples(RO2NC) / samples(RSM) to a first "
              "iterate whose Goldstein estimate is <= eps (checked every 100 samples, cap 10 000) <= 2; RO2NC with "
              "the theory's rule and its bound G tuned, RSM with eta0/sqrt(k) and eta0 tuned, 4 settings each on "
              "held-out seeds 100-102",
       control="RO2NC fed the minibatch subgradient with a random sign (same size, no information about f)",
       name="samples_vs_rsm")
def claim_samples_vs_rsm(fast: bool = False, control: bool = False) -> Measured:
    seeds = FAST_SEEDS if fast else CLAIM_SEEDS
    tr, ts = first_order_tuning(TUNING_SEEDS[:1] if fast else TUNING_SEEDS)
    G, eta0 = tr.best["G"], ts.best["eta0"]
    eps_grid = (COUNT_EPS,) if control or fast else EPS_GRID   # the criterion needs only eps = 0.01
    counts = {"RO2NC": {e: [samples_to_goldstein("RO2NC", s, e, G, control) for s in seeds] for e in eps_grid},
              "RSM": {e: [samples_to_goldstein("RSM", s, e, eta0) for s in seeds] for e in eps_grid}}
    values: dict[str, float] = {"G": G, "eta0": eta0}
    for e in eps_grid:
        r = np.array(counts["RO2NC"][e]) / np.array(counts["RSM"][e])
        tag = f"{e:g}".replace(".", "")
        values[f"ratio_{tag}"] = float(np.median(r))
        values[f"ratio_{tag}_min"] = float(r.min())
        values[f"ratio_{tag}_max"] = float(r.max())
        values[f"ro2nc_{tag}"] = float(np.median(counts["RO2NC"][e]))
        values[f"rsm_{tag}"] = float(np.median(counts["RSM"][e]))
    if len(eps_grid) > 1:   # slopes over the eps where the median run got there (at least two)
        for m in ("RO2NC", "RSM"):
            med = np.array([float(np.median(counts[m][e])) for e in eps_grid])
            values[f"slope_{m.lower()}"] = (loglog_slope(1.0 / np.array(eps_grid), med)
                                            if np.isfinite(med).sum() >= 2 else math.nan)
    start = min(goldstein_of(dpcp_start(s)) for s in seeds)
    values["goldstein_start_min"] = start
    # The comparison needs starts that are not stationary already and a baseline that gets there.
    precondition = start > 2 * COUNT_EPS and all(np.isfinite(counts["RSM"][COUNT_EPS]))
    r = values["ratio_001"]
    return Measured(values, criteria=[Criterion("ratio_001", "<=", 2.0)], seeds=seeds, precondition=precondition,
                    summary=f"{'random-sign control: ' if control else ''}RO2NC needs {r:.2g} x the tuned RSM's "
                            f"samples at eps = 0.01 ({values['ratio_001_min']:.2g}-{values['ratio_001_max']:.2g}; "
                            f"> 1: RO2NC slower)",
                    details=dict(counts=counts, tunings=(tr, ts)))


@claim("13", "ZO-RO2NC's own output is Goldstein-stationary from function values alone",
       kind="reproduction",
       paper="ZO-RO2NC reaches a Riemannian (delta, eps)-Goldstein stationary point with the same "
             "O(eps^-3 delta^-1) sample complexity from function values only (no number)",
       expect="median over 5 seeds of Goldstein(output) / Goldstein(start) <= 0.1 for ZO-RO2NC's own output (the "
              "reference point of its best-certificate window) on DPCP at d = 10 with 20 000 function values "
              "(delta = 0.05; window T and ZO-RSGD's step tuned over 3 settings each on held-out seeds 100-101). "
              "A first registration at d = 30 (angle < 5 deg after 40 000 values) was withdrawn before its full "
              "run: its baseline missed the precondition in fast mode (ZO-RSGD 5.4 deg on seeds 0-1)",
       control="ZO-RO2NC with the two function values in a random order (the estimate's sign at random)",
       name="zeroth_order")
def claim_zeroth_order(fast: bool = False, control: bool = False) -> Measured:
    seeds = ZO_FAST_SEEDS if fast else CLAIM_SEEDS
    p = zo_problem()
    zr, zs = zero_order_tuning(ZO_TUNING_SEEDS[:1] if fast else ZO_TUNING_SEEDS)
    T, eta0 = zr.best["T"], zs.best["eta0"]
    ratio = np.array([zo_output_ratio("ZO-RO2NC", s, T, control) for s in seeds])
    base = np.array([zo_output_ratio("ZO-RSGD", s, eta0) for s in seeds])
    own = [p.angle_deg(zo_ro2nc_run(s, T, control).x) for s in seeds]
    last = [p.angle_deg(zo_ro2nc_run(s, T, control).x_last) for s in seeds]
    values = {"ratio": float(np.median(ratio)), "ratio_min": float(ratio.min()), "ratio_max": float(ratio.max()),
              "ratio_zo_rsgd": float(np.median(base)), "angle_output": float(np.median(own)),
              "angle_output_max": float(max(own)), "angle_last": float(np.median(last)), "T": float(T),
              "eta0_zo_rsgd": eta0}
    # The proxy can test the claim only if a zeroth-order method reaches the Goldstein level at all.
    return Measured(values, criteria=[Criterion("ratio", "<=", 0.1)], seeds=seeds,
                    precondition=values["ratio_zo_rsgd"] <= 0.1,
                    summary=f"{'random-sign control: ' if control else ''}ZO-RO2NC's Goldstein(output) / "
                            f"Goldstein(start): median {values['ratio']:.2g} ({ratio.min():.2g}-{ratio.max():.2g}); "
                            f"ZO-RSGD {values['ratio_zo_rsgd']:.2g}",
                    details=dict(tunings=(zr, zs)))


@claim("13", "RO2NC on R^n is Euclidean O2NC, draw for draw", kind="identity",
       expect="RO2NC on the Euclidean manifold and O2NC, same seed: identical last iterates, certificates and "
              "traces over 2000 steps (bit for bit)",
       name="euclidean_reduction")
def claim_euclidean_reduction(fast: bool = False) -> Measured:
    A = np.random.default_rng(0).standard_normal((40, 6))

    def fun(x):
        return float(np.abs(A @ x).mean())

    def jac(x, rng):
        rows = A[rng.integers(0, 40, 4)]
        return np.sign(rows @ x) @ rows / 4

    steps = 500 if fast else 2000
    a = o2nc(fun, np.ones(6), jac, T=7, D=0.05, eta=0.01, maxiter=steps, rng=3, record_every=1)
    b = ro2nc(fun, np.ones(6), jac, manifold=Euclidean(6), T=7, D=0.05, eta=0.01, maxiter=steps, rng=3,
              record_every=1)
    same = (np.array_equal(a.x_last, b.x_last) and np.array_equal(a.window_norms, b.window_norms)
            and np.array_equal(a.trace.objective, b.trace.objective))
    diff = float(np.max(np.abs(a.x_last - b.x_last)))
    return Measured({"identical": same, "max_difference": diff}, holds=same,
                    summary=f"identical: {same} (largest difference {diff:.1g})")
