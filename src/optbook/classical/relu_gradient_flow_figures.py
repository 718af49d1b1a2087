"""Chapter 04's figures and live explorers (plotly, ipywidgets), built on the runs of
:mod:`optbook.classical.relu_gradient_flow` so that figures, claims and explorers share one cache.
"""
from __future__ import annotations

from functools import lru_cache

import numpy as np
import plotly.graph_objects as go

from ..core import Result, Tuning, check_in_range, check_int, thin_indices
from ..viz import Phase, SliderStep, base_layout, color_for, convergence_figure, slider_figure, tuning_figure
from ..widgets import Explorer, Slider
from .relu_gradient_flow import (
    drop_width,
    init_network,
    linear_least_squares,
    make_weakly_interacting_data,
    orthogonal_run,
    phase_transition_loss,
    phase_transition_time,
    random_features_floor,
    run_once,
    success_interval,
    train_shallow_relu,
    width_rule,
)

RESIDUAL_AXIS = "sum of squared residuals  sum_i r_i^2"
TIME_AXIS = "gradient-flow time t = lr x steps"


def _residual_line(res: Result, name: str, color: str, dash: str = "solid") -> go.Scatter:
    """The curve sum_i r_i^2 against gradient-flow time of one run (downsampled)."""
    keep = thin_indices(len(res.trace))
    t, rsq = res.trace["t"][keep], res.trace["residual_sq"][keep]
    return go.Scatter(x=t, y=np.maximum(rsq, 1e-30), mode="lines", name=name,
                      line=dict(color=color, dash=dash, width=2.4))


@lru_cache(maxsize=8)
def _baseline_runs(n: int, d: int, seed: int, steps: int) -> dict:
    p = width_rule(n, 0.05)
    gen = np.random.default_rng(seed)
    X, y = make_weakly_interacting_data(n, d, rng=gen)
    a, W = init_network(d, p, rng=gen)
    a_w, W_w = init_network(d, n, rng=gen)
    runs = {
        f"ReLU net, p = {p}": train_shallow_relu(X, y, a, W, maxiter=steps, tol=1e-10 * p / (2 * n)),
        f"random features, p = {p}": train_shallow_relu(X, y, a, W, maxiter=steps, tol=0.0, train_hidden=False),
        f"wide ReLU net, p = {n}": train_shallow_relu(X, y, a_w, W_w, maxiter=steps, tol=1e-10 / 2),
    }
    for name, res in runs.items():
        res.trace.method = name
    floor = random_features_floor(a, W, X, y) * 2 * n / p  # as a sum of squared residuals
    return {"runs": runs, "rf_floor": floor, "linear_rss": linear_least_squares(X, y)[1], "n": n, "d": d, "p": p}


def baseline_runs(n: int = 200, d: int = 400, seed: int = 0, steps: int = 300) -> dict:
    """The ReLU net at width p(n, 0.05), random features with the same initialisation and width,
    and a wide network (p = n), each run ``steps`` steps or until sum r^2 <= 1e-10, on the same
    data; plus linear least squares and the random-features floor (the 'Watch it run' figure)."""
    return _baseline_runs(check_int(n, "n", minimum=2), check_int(d, "d", minimum=1),
                          check_int(seed, "seed", minimum=0), check_int(steps, "steps", minimum=1))


def watch_figure(n: int = 200, d: int = 400, seed: int = 0) -> go.Figure:
    """Sum of squared residuals of the ReLU net, random features and a wide net on the same data,
    with the phases named: 'fitting' until sum r^2 <= 1 (the paper's convergence criterion),
    then the exponential phase of the local PL inequality; the random-features floor and the
    threshold as horizontal lines."""
    ex = baseline_runs(n, d, seed)
    runs = list(ex["runs"].values())
    net = runs[0].trace
    first = net.first_below("residual_sq", 1.0)
    if first is None:
        raise ValueError(f"the ReLU net did not converge for n={n}, d={d}, seed={seed}; pick another seed")
    t_conv, t_end = float(net["t"][first]), float(net["t"][-1])
    fig = convergence_figure([r.trace for r in runs], "residual_sq", "t", phases=[
        Phase(0.0, t_conv, "fitting"), Phase(t_conv, t_end, "exponential (local PL) phase")],
        xaxis_title=TIME_AXIS, yaxis_title=RESIDUAL_AXIS, height=460)
    # Horizontal lines with their labels placed by hand: on a log axis plotly puts an add_hline
    # annotation at 10^y instead of y.
    for y, color, text, shift in ((ex["rf_floor"], color_for(1), "random-features floor (projection bound)", -12),
                                  (1.0, "#555", "converged: sum r^2 = 1", 10)):
        fig.add_hline(y=y, line=dict(color=color, dash="dot"))
        fig.add_annotation(x=1, xref="paper", xanchor="right", y=np.log10(y), yref="y", yshift=shift,
                           text=text, showarrow=False, font=dict(color=color))
    return fig


def success_figure(sr: dict, eps: float = 0.05) -> go.Figure:
    """P(converged) (with its Wilson 95% interval) and P(well-initialised) against the width p,
    the union bound and the width rule marked (``sr`` from :func:`success_rates`)."""
    eps = check_in_range(eps, "eps", 0.0, 1.0)
    if not isinstance(sr, dict) or not {"p", "p_conv", "p_well", "conv_low", "conv_high", "n"} <= set(sr):
        raise ValueError("sr must be the dict returned by success_rates")
    grid = np.arange(1.0, float(np.max(sr["p"])) + 1.0)
    fig = go.Figure([
        go.Scatter(x=sr["p"], y=sr["p_conv"], mode="lines+markers", name="P(converged), 95% interval",
                   line=dict(color=color_for(0), width=2.4), marker=dict(size=9),
                   error_y=dict(type="data", symmetric=False, array=sr["conv_high"] - sr["p_conv"],
                                arrayminus=sr["p_conv"] - sr["conv_low"], color=color_for(0))),
        go.Scatter(x=sr["p"], y=sr["p_well"], mode="lines+markers", name="P(well-initialised)",
                   line=dict(color=color_for(2), width=2.4, dash="dash"), marker=dict(size=9)),
        go.Scatter(x=grid, y=np.maximum(0.0, 1 - sr["n"] * 0.75**grid), mode="lines",
                   name="union bound max(0, 1 - n (3/4)^p)", line=dict(color="#888", dash="dot")),
    ])
    p_star = np.log(sr["n"] / eps) / np.log(4 / 3)
    fig.add_vline(x=p_star, line=dict(color=color_for(1), dash="dash"),
                  annotation_text=f"log(n/eps)/log(4/3) = {p_star:.1f}", annotation_position="bottom right")
    base_layout(fig, xaxis_title="hidden width p (neurons)", yaxis_title=f"probability over {sr['seeds']} seeds",
                height=420)
    fig.update_yaxes(range=[-0.03, 1.05])
    return fig


def log_width_figure(method: dict, control: dict) -> go.Figure:
    """P(converged) against n for the width rule p(n, 0.05) and for half of it (the control), each
    point with its Wilson 95% interval (``method`` and ``control`` from :func:`log_width_experiment`)."""
    fig = go.Figure()
    for i, (ex, name) in enumerate(((method, "width p(n, 0.05)"), (control, "half width (control)"))):
        if not isinstance(ex, dict) or "rows" not in ex:
            raise ValueError("method and control must be dicts returned by log_width_experiment")
        ns = np.array([r["n"] for r in ex["rows"]])
        rate = np.array([r["conv"].mean() for r in ex["rows"]])
        ci = np.array([success_interval(int(r["conv"].sum()), r["conv"].size) for r in ex["rows"]])
        fig.add_trace(go.Scatter(
            x=ns, y=rate, mode="lines+markers", name=name, line=dict(color=color_for(2 * i), width=2.4),
            marker=dict(size=9), text=[f"p = {r['p']}" for r in ex["rows"]],
            hovertemplate="n = %{x}, %{text}: P(converged) %{y:.3f}<extra></extra>",
            error_y=dict(type="data", symmetric=False, array=ci[:, 1] - rate, arrayminus=rate - ci[:, 0])))
    fig.add_hline(y=0.95, line=dict(color="#555", dash="dot"), annotation_text="paper: 1 - eps = 0.95",
                  annotation_position="bottom right")
    base_layout(fig, xaxis_title="number of points n (d = 2n)", yaxis_title="P(converged), 95% interval",
                logx=True, height=400)
    fig.update_yaxes(range=[-0.03, 1.05])
    return fig


def tuning_panel(tunings: list[Tuning]) -> go.Figure:
    """The tuning panel (:func:`optbook.viz.tuning_figure`) of :func:`tune_step_size`, with the
    step sizes as tick labels; a setting without a point diverged."""
    if not tunings or not all(isinstance(t, Tuning) for t in tunings):
        raise ValueError("tunings must be a non-empty list of Tuning records (from tune_step_size)")
    fig = tuning_figure(tunings, score_label="share of sum y^2 unexplained", logy=True, height=460)
    lrs = [s["lr"] for s in tunings[0].settings]
    fig.update_xaxes(tickvals=list(range(1, len(lrs) + 1)), ticktext=[f"{v:g}" for v in lrs],
                     title_text="step size lr (grid order)", row=1, col=1)
    # Short subplot titles and a legend above them, so that the panel also reads on a phone.
    for ann, text in zip(fig.layout.annotations, ("each setting", "best so far")):
        ann.text = text
    fig.update_layout(legend=dict(y=1.14), margin=dict(t=120))
    return fig


def _coverage_traces(res: Result) -> list:
    """Coverage heatmap at initialisation (rows neurons, columns points; filled when the neuron
    serves the point) and red crosses above the points no neuron serves."""
    cov = res.coverage0.T.astype(float)  # (p, n)
    p, n = cov.shape
    unserved = np.flatnonzero(~res.coverage0.any(axis=1))
    return [
        go.Heatmap(z=cov, x=np.arange(n), y=np.arange(1, p + 1), colorscale=[[0, "#f4f4f4"], [1, color_for(0)]],
                   zmin=0, zmax=1, showscale=False, xaxis="x2", yaxis="y2", name="serves", hoverinfo="skip"),
        go.Scatter(x=unserved, y=np.full(unserved.size, p + 1.5), mode="markers", xaxis="x2", yaxis="y2",
                   marker=dict(symbol="x", color=color_for(1), size=8), name="point served by no neuron"),
    ]


def _two_panel_layout(fig: go.Figure, n: int, p_max: int, y_range: list[float], t_max: float) -> go.Figure:
    fig.update_layout(
        xaxis=dict(domain=[0, 0.46], title_text=TIME_AXIS, range=[0, t_max], autorange=False),
        yaxis=dict(type="log", range=y_range, autorange=False, title_text=RESIDUAL_AXIS, exponentformat="power"),
        xaxis2=dict(domain=[0.56, 1], anchor="y2", title_text="data point i", range=[-0.5, n - 0.5],
                    showline=True, linecolor="#888", mirror=True),
        yaxis2=dict(anchor="x2", title_text="neuron j", range=[0.5, p_max + 2.5], showline=True,
                    linecolor="#888", mirror=True),
    )
    return fig


def _coverage_panel_traces(res: Result, t_max: float) -> list:
    """Left panel: sum r^2 of one run and the convergence threshold 1; right panel: coverage."""
    return [
        _residual_line(res, f"ReLU net, p = {res.trace.meta['p']}", color_for(0)),
        go.Scatter(x=[0, t_max], y=[1, 1], mode="lines", name="threshold sum r^2 = 1 (converged)",
                   line=dict(color="#555", dash="dot")),
        *_coverage_traces(res),
    ]


def width_slider_figure(n: int = 200, d: int = 400, seed: int = 0,
                        ps: tuple[int, ...] = (2, 4, 8, 14, 20, 29, 32)) -> go.Figure:
    """Static twin of :data:`EXPLORER_WIDTH`: one frame per width p (n, d, seed fixed)."""
    ps = tuple(check_int(p, "ps", minimum=1) for p in ps)
    if not ps:
        raise ValueError("ps must not be empty")
    runs = [run_once(n, d, p, seed) for p in ps]
    t_max = max(float(r.trace["t"][-1]) for r in runs)
    steps = [SliderStep(f"{p}", _coverage_panel_traces(r, t_max)) for p, r in zip(ps, runs)]
    fig = slider_figure(steps, slider_label="hidden width p", active=ps.index(8) if 8 in ps else 0,
                        fixed_axes=False, height=500)
    top = np.log10(max(float(r.trace["residual_sq"].max()) for r in runs))
    return _two_panel_layout(fig, n, max(ps), [-0.5, top + 0.2], t_max)


def width_figure(n: int, d: int, p: int, seed: int) -> go.Figure:
    """Live twin: the same two panels for one (n, d, p, seed)."""
    res = run_once(n, d, p, seed)
    t_max = float(res.trace["t"][-1])
    fig = go.Figure(_coverage_panel_traces(res, t_max))
    base_layout(fig, height=500, title=(f"n = {n}, d = {d}, p = {p}: {'converged' if res.converged else 'not converged'}; "
                                        f"{int((~res.coverage0.any(axis=1)).sum())} unserved points at init"))
    return _two_panel_layout(fig, n, p, [-0.5, np.log10(float(res.trace["residual_sq"].max())) + 0.2], t_max)


EXPLORER_WIDTH = Explorer("04", "width", width_figure, {
    "n": Slider("points n", [25, 50, 100], 100),
    "d": Slider("dimension d", [25, 50, 100, 200, 300], 200),
    "p": Slider("width p", [2, 4, 8, 16, 24, 32], 8),
    "seed": Slider("seed", list(range(8)), 0),
}, description="loss curve and coverage heatmap for any (n, d, p, seed)")


def _rate_traces(res: Result) -> list[go.Scatter]:
    """n x local rate ||grad L||^2 / L along the run, with the energy bounds 2 min E and 16 max E
    (all multiplied by n), against time divided by n."""
    n = res.trace.meta["n"]
    keep = thin_indices(len(res.trace))
    t, rate, e_min, e_max = (res.trace[k][keep] for k in ("t", "rate", "energy_min", "energy_max"))
    return [
        go.Scatter(x=t / n, y=16 * e_max, mode="lines", name="upper bound 16 max_i E_i",
                   line=dict(color=color_for(1), dash="dash")),
        go.Scatter(x=t / n, y=n * rate, mode="lines", name="n x local rate ||grad L||^2 / L",
                   line=dict(color=color_for(0), width=2.6)),
        go.Scatter(x=t / n, y=2 * e_min, mode="lines", name="lower bound 2 min_i E_i",
                   line=dict(color=color_for(2), dash="dash")),
    ]


def rate_slider_figure(ns: tuple[int, ...] = (50, 100, 200, 400), seed: int = 0) -> go.Figure:
    """Static twin of :data:`EXPLORER_RATE`: one frame per n, orthogonal data."""
    ns = tuple(check_int(n, "ns", minimum=1) for n in ns)
    if not ns:
        raise ValueError("ns must not be empty")
    steps = [SliderStep(f"{n}", _rate_traces(orthogonal_run(n, seed))) for n in ns]
    return slider_figure(steps, slider_label="number of points n (= d)", active=min(1, len(ns) - 1), logy=True,
                         xaxis_title="rescaled time t / n", yaxis_title="n x local rate, n rho(t)",
                         height=470)


def rate_figure(n: int, seed: int) -> go.Figure:
    """Live twin: the local rate and its bounds for one orthogonal run."""
    fig = go.Figure(_rate_traces(orthogonal_run(n, seed)))
    return base_layout(fig, xaxis_title="rescaled time t / n", yaxis_title="n x local rate, n rho(t)",
                       logy=True, height=470, title=f"orthogonal data, n = d = {n}, p = {width_rule(n)}")


EXPLORER_RATE = Explorer("04", "rate", rate_figure, {
    "n": Slider("points n (= d)", [20, 35, 50, 75], 50),
    "seed": Slider("seed", list(range(6)), 0),
}, description="local PL rate along the trajectory with the energy bounds")


def _toy_traces(log10_n: float, p: int = 2, targets: tuple[float, ...] = (1.0, 2.0)) -> list[go.Scatter]:
    """Toy loss against t / t*_max (t*_max: the later of the groups' drop times), with the
    n -> infinity staircase: the loss drops by each group's share at its own t*."""
    n = 10.0 ** log10_n
    t_stars = [phase_transition_time(n, v, p) for v in targets]
    t_ref = max(t_stars)
    s = np.linspace(0.0, 1.75, 351)
    loss = phase_transition_loss(s * t_ref, n, targets=targets, p=p)
    shares = [v * v / (2.0 * p) for v in targets]  # each group's initial loss D^2/(2n)/p
    stair = np.array([sum(sh for sh, ts in zip(shares, t_stars) if si * t_ref < ts) for si in s])
    return [
        go.Scatter(x=s, y=stair, mode="lines", name="limit n -> infinity (steps at each t*)",
                   line=dict(color="#999", dash="dash", width=2)),
        go.Scatter(x=s, y=loss, mode="lines", name="closed-form loss L_n(t)", line=dict(color=color_for(0), width=2.6)),
    ]


def toy_slider_figure(log10_ns: tuple[float, ...] = (2, 4, 6, 8, 10, 12, 14, 16, 18)) -> go.Figure:
    """Static twin of :data:`EXPLORER_TOY`: one frame per n = 10^k."""
    log10_ns = tuple(check_in_range(k, "log10_ns", 0.0, 300.0) for k in log10_ns)
    if not log10_ns:
        raise ValueError("log10_ns must not be empty")
    steps = [SliderStep(f"10^{k:g}", _toy_traces(k)) for k in log10_ns]
    return slider_figure(steps, slider_label="number of points n", active=min(1, len(log10_ns) - 1),
                         xaxis_title="normalised time t / t*  (t* = (np / 2D) log(pD) of the slower group)",
                         yaxis_title="loss L_n(t)", height=450)


def toy_figure(log10_n: float, p: int) -> go.Figure:
    """Live twin: the toy at any n = 10^k and width p."""
    log10_n = check_in_range(log10_n, "log10_n", 0.0, 300.0)
    p = check_int(p, "p", minimum=1)
    fig = go.Figure(_toy_traces(log10_n, p))
    return base_layout(fig, xaxis_title="normalised time t / t*", yaxis_title="loss L_n(t)", height=450,
                       title=f"n = 10^{log10_n:g}, p = {p}: relative drop width {drop_width(10.0 ** log10_n, 1.0, p):.3f}")


EXPLORER_TOY = Explorer("04", "phase_transition", toy_figure, {
    "log10_n": Slider("log10 n", list(range(2, 19)), 4),
    "p": Slider("width p", [1, 2, 4, 8], 2),
}, description="closed-form phase transition of the orthogonal toy model")
