"""Chapter 02's figures and live explorers (plotly), built on the cached runs of
:mod:`optbook.classical.sparse_polyak_experiments`.

Every figure uses the chapter's practical f_hat = 0 and the paper's gradient threshold s_g = s~.
The tuned constant step is the one :func:`~optbook.classical.sparse_polyak_experiments.tune_rule`
picks at d = 500 on held-out seeds, the same as in the claim.
"""
from __future__ import annotations

from functools import lru_cache

import numpy as np
import plotly.graph_objects as go

from ..core import Result, Trace, check_int, thin_indices
from ..viz import SliderStep, base_layout, color_for, phase_layout, slider_figure
from ..viz.convergence import Phase
from ..widgets import Explorer, Slider
from . import sparse_polyak_experiments as ex
from .sparse_polyak import RULE_NAMES, RULES, restricted_smoothness

N_FIG = 200
#: The d/n grid of the dimension slider (n = 200, so d = 100 ... 8000; d = 500, 2000, 8000 are the claim's).
D_OVER_N = (0.5, 1.0, 2.5, 5.0, 10.0, 40.0)
#: The s_g grid of the threshold slider (d = 2000, s = 5, s~ = 10: s_g = s ... d).
SG_GRID = (5, 10, 15, 30, 60, 125, 250, 500, 1000, 2000)
SG_D = 2000
SG_ITERS = 120
MAX_POINTS = 300
#: Curves of the error panels: the three textbook rules and the tuned constant step.
CURVES = RULES + ("tuned",)
#: Reference curvatures, coloured apart from the rules' curves.
GLOBAL_COLOR, RESTRICTED_COLOR = "#444", "#8c564b"


@lru_cache(maxsize=1)
def _tuned_eta() -> float:
    """The constant step the tuning picks (d = 500, held-out seeds)."""
    return float(ex.tune_rule("constant").best["eta"])


def curve_name(curve: str) -> str:
    """Legend name of a curve (the text names them the same way)."""
    if curve not in CURVES:
        raise ValueError(f"curve must be one of {CURVES}, got {curve!r}")
    if curve == "tuned":
        return f"constant step, tuned (eta = {_tuned_eta():g})"
    return "constant step 1/L" if curve == "constant" else RULE_NAMES[curve]


def _style(curve: str) -> dict:
    return dict(color=color_for(CURVES.index(curve)), dash="dash" if curve == "tuned" else None)


def runs_at(d: int, *, seed: int = 0, maxiter: int = 3000, stop_at_precision: bool = True) -> dict[str, Result]:
    """One run per curve of CURVES at dimension d (cached in the experiments module)."""
    kw = dict(seed=seed, maxiter=maxiter, stop_at_precision=stop_at_precision)
    runs = {r: ex.run_rule(r, d, **kw) for r in RULES}
    runs["tuned"] = ex.run_rule("constant", d, eta=_tuned_eta(), **kw)
    return runs


def _line(trace: Trace, y: str, name: str, **line) -> go.Scatter:
    keep = thin_indices(len(trace), MAX_POINTS)
    return go.Scatter(x=trace.iteration[keep], y=trace[y][keep], mode="lines", name=name,
                      line=dict(width=2.4, **line))


def _error_traces(runs: dict[str, Result], target: float, t_max: float) -> list[go.Scatter]:
    """||theta_t - theta*|| against t for each curve, and the statistical-precision line."""
    out = [_line(res.trace, "error", curve_name(c), **_style(c)) for c, res in runs.items()]
    out.append(go.Scatter(x=[0, t_max], y=[target, target], mode="lines", name="statistical precision",
                          line=dict(color="#555", dash="dot", width=1.5)))
    return out


# --------------------------------------------------------------------------- watch it run


def watch_figures(d: int = 2000, maxiter: int = 250) -> tuple[go.Figure, go.Figure]:
    """The 'Watch it run' figures at one d: errors with phases, and the step sizes eta_t."""
    d, maxiter = check_int(d, "d", minimum=20), check_int(maxiter, "maxiter", minimum=1)
    runs = runs_at(d, maxiter=maxiter, stop_at_precision=False)
    setup = ex.regression_setup(d)
    target = setup["target"]
    first = {c: r.trace.first_below("error", target) for c, r in runs.items()}
    t_fast = max(first["sparse_polyak"] or 0, first["tuned"] or 0)
    t_slow = min(maxiter, max(first["polyak"] or maxiter, first["constant"] or maxiter))
    fig = go.Figure(_error_traces(runs, target, maxiter))
    # Short labels: phase A is a few iterations wide; the text names what each phase is.
    fig.update_layout(**phase_layout([Phase(0, t_fast, "A"), Phase(t_fast, t_slow, "B"),
                                      Phase(t_slow, maxiter, "C")]))
    base_layout(fig, xaxis_title="iteration t", yaxis_title="error ||theta_t - theta*||", logy=True, height=470)
    fig.update_xaxes(range=[0, maxiter])
    steps = go.Figure([_line(runs[c].trace, "step_size", curve_name(c), **_style(c))
                       for c in ("sparse_polyak", "polyak")])
    L = ex.setup_smoothness(d)
    L_s = restricted_smoothness(setup["problem"].X, 20, rng=0)
    for y, name, color in ((1 / L, "1/L (global smoothness)", GLOBAL_COLOR),
                           (1 / L_s, "1/L_s (restricted, 50 random supports of size 2 s~)", RESTRICTED_COLOR),
                           (_tuned_eta(), "tuned constant step", color_for(CURVES.index("tuned")))):
        steps.add_trace(go.Scatter(x=[0, maxiter], y=[y, y], mode="lines", name=name,
                                   line=dict(color=color, dash="dot", width=1.5)))
    base_layout(steps, xaxis_title="iteration t", yaxis_title="step size eta_t", logy=True, height=440)
    steps.update_xaxes(range=[0, maxiter])
    return fig, steps


def watch_numbers(d: int = 2000, maxiter: int = 250) -> dict[str, float]:
    """The figures the text quotes about :func:`watch_figures`: iterations to the target,
    final errors, the oracle's error, and the median steps of the two Polyak rules."""
    d, maxiter = check_int(d, "d", minimum=20), check_int(maxiter, "maxiter", minimum=1)
    runs = runs_at(d, maxiter=maxiter, stop_at_precision=False)
    setup = ex.regression_setup(d)
    out = {f"iters_{c}": r.trace.first_below("error", setup["target"]) for c, r in runs.items()}
    out.update({f"final_{c}": float(r.trace["error"][-1]) for c, r in runs.items()})
    steps = {c: float(np.nanmedian(runs[c].trace.step_size)) for c in ("sparse_polyak", "polyak")}
    out.update(step_sparse_polyak=steps["sparse_polyak"], step_polyak=steps["polyak"],
               step_ratio=steps["sparse_polyak"] / steps["polyak"], target=setup["target"],
               oracle_error=setup["oracle_error"], L=ex.setup_smoothness(d),
               L_s=restricted_smoothness(setup["problem"].X, 20, rng=0))
    return out


# --------------------------------------------------------------------------- explore: dimension


@lru_cache(maxsize=None)
def d_sweep(seed: int = 0) -> dict:
    """Iterations to precision and curvatures over the D_OVER_N grid (n = 200)."""
    seed = check_int(seed, "seed")
    rows = {k: [] for k in ("d", "L", "restricted_L", "polyak_curvature", "sparse_curvature")}
    iters = {c: [] for c in CURVES}
    for ratio in D_OVER_N:
        d = int(round(ratio * N_FIG))
        runs = runs_at(d, seed=seed)
        rows["d"].append(d)
        rows["L"].append(ex.setup_smoothness(d, seed=seed))
        rows["restricted_L"].append(restricted_smoothness(ex.regression_setup(d, seed=seed)["problem"].X, 20,
                                                          rng=seed))
        rows["polyak_curvature"].append(float(np.nanmedian(runs["polyak"].trace["curvature"])))
        rows["sparse_curvature"].append(float(np.nanmedian(runs["sparse_polyak"].trace["curvature"])))
        target = ex.regression_setup(d, seed=seed)["target"]
        for c, r in runs.items():
            iters[c].append(r.trace.first_below("error", target))
    return {**{k: np.array(v, dtype=float) for k, v in rows.items()}, "iters": iters}


@lru_cache(maxsize=1)
def _t_max() -> int:
    return max(len(r.trace) for r in runs_at(int(D_OVER_N[-1] * N_FIG)).values())


@lru_cache(maxsize=None)
def _d_step(ratio: float) -> SliderStep:
    sweep = d_sweep()
    d = int(round(ratio * N_FIG))
    traces = _error_traces(runs_at(d), ex.regression_setup(d)["target"], _t_max())
    x = np.array(D_OVER_N)
    right = [("global L = lambda_max(X^T X/n)", sweep["L"], GLOBAL_COLOR, "solid", "markers"),
             ("Marchenko-Pastur edge (1+sqrt(d/n))^2", (1 + np.sqrt(x)) ** 2, "#999", "dash", "lines"),
             ("Polyak's implicit curvature", sweep["polyak_curvature"], color_for(1), "solid", "lines+markers"),
             ("Sparse Polyak's implicit curvature", sweep["sparse_curvature"], color_for(0), "solid",
              "lines+markers"),
             ("restricted L_s (random supports)", sweep["restricted_L"], RESTRICTED_COLOR, "dot", "lines+markers")]
    for name, y, color, dash, mode in right:
        traces.append(go.Scatter(x=x, y=y, mode=mode, name=name, xaxis="x2", yaxis="y2",
                                 line=dict(color=color, dash=dash, width=2), marker=dict(size=7)))
    traces.append(go.Scatter(x=[ratio, ratio], y=[0.3, 200], mode="lines", name="current d/n", xaxis="x2",
                             yaxis="y2", line=dict(color="#d62728", width=1, dash="dot"), showlegend=False))
    return SliderStep(label=f"{ratio:g}", traces=traces)


def _style_d_figure(fig: go.Figure) -> go.Figure:
    fig.update_layout(
        xaxis=dict(domain=[0, 0.5], title_text="iteration t", range=[0, _t_max()]),
        yaxis=dict(type="log", title_text="error ||theta_t - theta*||", range=[-1.0, 0.45]),
        xaxis2=dict(domain=[0.62, 1], type="log", title_text="d / n", anchor="y2", showline=True,
                    linecolor="#888", mirror=True),
        yaxis2=dict(type="log", title_text="curvature (eigenvalue scale)", anchor="x2", range=[-0.5, 2.1],
                    showline=True, linecolor="#888", mirror=True),
        legend=dict(font=dict(size=11)), margin=dict(t=150),
    )
    return fig


@lru_cache(maxsize=None)
def _explorer_layout(which: str) -> dict:
    """The live explorers' layout, styled once (restyling per move would cost ~50 ms)."""
    if which == "d":
        return _style_d_figure(base_layout(go.Figure(), height=580)).layout.to_plotly_json()
    return _style_sg_figure(base_layout(go.Figure(), height=520)).layout.to_plotly_json()


def d_slider_figure() -> go.Figure:
    """Static twin of :data:`EXPLORER_DIMENSION`: one frame per d/n on the D_OVER_N grid."""
    steps = [_d_step(r) for r in D_OVER_N]
    fig = slider_figure(steps, slider_label="d / n (n = 200)", active=D_OVER_N.index(10.0), fixed_axes=False,
                        height=580)
    return _style_d_figure(fig)


def d_explorer_figure(d_over_n: float = 10.0) -> go.Figure:
    """Live twin: the same traces for one d/n."""
    if d_over_n not in D_OVER_N:
        raise ValueError(f"d_over_n must be one of {D_OVER_N}, got {d_over_n!r}")
    return go.Figure(data=_d_step(d_over_n).traces, layout=_explorer_layout("d"))


# --------------------------------------------------------------------------- explore: threshold


def threshold_run(s_g: int) -> Result:
    """Sparse Polyak with gradient threshold s_g at d = SG_D (seed 0), SG_ITERS iterations."""
    if s_g not in SG_GRID:
        raise ValueError(f"s_g must be one of {SG_GRID}, got {s_g!r}")
    return ex.run_rule("sparse_polyak", SG_D, grad_sparsity=s_g, maxiter=SG_ITERS)


@lru_cache(maxsize=1)
def threshold_sweep() -> dict[str, list]:
    """Iterations to precision and lowest error reached for every s_g of SG_GRID."""
    target = ex.regression_setup(SG_D)["target"]
    runs = [threshold_run(k) for k in SG_GRID]
    return {"iters": [r.trace.first_below("error", target) for r in runs],
            "floor": [float(np.min(r.trace["error"])) for r in runs]}


@lru_cache(maxsize=None)
def _sg_step(s_g: int) -> SliderStep:
    run, sweep = threshold_run(s_g), threshold_sweep()
    traces = [
        _line(threshold_run(SG_D).trace, "error", "Polyak (s_g = d)", color="#bbb", dash="dash"),
        _line(threshold_run(10).trace, "error", "Sparse Polyak (s_g = s~ = 10)", color="#9ecae1", dash="dash"),
        _line(run.trace, "error", "current s_g", color=color_for(0)),
        go.Scatter(x=[0, SG_ITERS], y=[ex.regression_setup(SG_D)["target"]] * 2, mode="lines",
                   name="statistical precision", line=dict(color="#555", dash="dot", width=1.5)),
        go.Scatter(x=list(SG_GRID), y=[np.nan if i is None else i for i in sweep["iters"]], mode="lines+markers",
                   name="iterations to precision", xaxis="x2", yaxis="y2", line=dict(color=color_for(0))),
        go.Scatter(x=list(SG_GRID), y=sweep["floor"], mode="lines+markers", name="lowest error reached (right axis)",
                   xaxis="x2", yaxis="y3", line=dict(color=color_for(4), dash="dot")),
        go.Scatter(x=[s_g, s_g], y=[1, 1000], mode="lines", xaxis="x2", yaxis="y2", showlegend=False,
                   name="current s_g", line=dict(color="#d62728", width=1, dash="dot")),
    ]
    return SliderStep(label=str(s_g), traces=traces)


def _style_sg_figure(fig: go.Figure) -> go.Figure:
    fig.update_layout(
        xaxis=dict(domain=[0, 0.48], title_text="iteration t", range=[0, SG_ITERS]),
        yaxis=dict(type="log", title_text="error ||theta_t - theta*||", range=[-0.75, 0.45]),
        xaxis2=dict(domain=[0.6, 0.92], type="log", title_text="gradient threshold s_g", anchor="y2",
                    showline=True, linecolor="#888", mirror=True),
        yaxis2=dict(type="log", title_text="iterations to precision", anchor="x2", range=[0, 2.0]),
        yaxis3=dict(title_text="lowest error", overlaying="y2", side="right", anchor="x2", range=[0.15, 0.4],
                    type="linear", dtick=0.05, tickformat=".2f", showgrid=False),
        legend=dict(font=dict(size=11)), margin=dict(t=110, r=60),
    )
    return fig


def threshold_slider_figure() -> go.Figure:
    """Static twin of :data:`EXPLORER_THRESHOLD`: one frame per s_g on SG_GRID."""
    steps = [_sg_step(k) for k in SG_GRID]
    fig = slider_figure(steps, slider_label="gradient threshold s_g (d = 2000)", active=SG_GRID.index(10),
                        fixed_axes=False, height=520)
    return _style_sg_figure(fig)


def threshold_explorer_figure(s_g: int = 10) -> go.Figure:
    """Live twin of the threshold slider."""
    if s_g not in SG_GRID:
        raise ValueError(f"s_g must be one of {SG_GRID}, got {s_g!r}")
    return go.Figure(data=_sg_step(s_g).traces, layout=_explorer_layout("sg"))


EXPLORER_DIMENSION = Explorer(
    "02", "dimension", d_explorer_figure,
    {"d_over_n": Slider("d / n (n = 200)", list(D_OVER_N), 10.0)},
    description="iterations to statistical precision and the curvature each rule sees, as d grows")
EXPLORER_THRESHOLD = Explorer(
    "02", "threshold", threshold_explorer_figure,
    {"s_g": Slider("gradient threshold s_g", list(SG_GRID), 10, fmt="{:d}")},
    description="from Sparse Polyak (small s_g) to Polyak (s_g = d)")
