"""Chapter 07's figures and live explorers, built on the runs of
:mod:`optbook.classical.denoiser_prox_experiments` (cached there, so a static slider figure and
its live twin share every computation)."""
from __future__ import annotations

from functools import lru_cache

import numpy as np
import plotly.graph_objects as go

from ..claims import ClaimResult
from ..core import check_in_range, check_int, check_positive, thin_indices
from ..viz import Phase, SliderStep, base_layout, color_for, phase_layout, slider_figure, tuning_figure
from ..widgets import Explorer, Slider
from . import denoiser_prox_experiments as ex
from .denoiser_prox import anisotropic_gaussian, smoothed_objective

FIGURE_SEED = 1  # the log-cosh problem the pictures show (its y has a large stiff component)
ERROR_AXIS = "error ||x_k − prox(y)|| (log scale)"

# --------------------------------------------------------------------------- level sets (Gaussian)

SIGMAS = (0.0, 0.05, 0.1, 0.2, 0.3, 0.5, 0.7, 1.0, 1.5, 2.0)
LEVEL_KAPPAS = (10.0, 100.0, 500.0, 1000.0)
XLIM, YLIM = (-0.25, 1.25), (-0.35, 1.15)


@lru_cache(maxsize=64)
def _level_set_data(sigma: float, kappa: float, n: int = 70) -> dict:
    prior = anisotropic_gaussian(kappa)
    xs, ys = np.linspace(*XLIM, n), np.linspace(*YLIM, n)
    Z = smoothed_objective(prior, np.stack(np.meshgrid(xs, ys), axis=-1), ex.Y2, 1.0, sigma)
    path = np.array([prior.smoothed_prox(ex.Y2, 1.0, s) for s in np.linspace(0, 3, 61)])
    curv = 1.0 + 1.0 / (prior.eig + sigma**2)  # Hessian eigenvalues of F_sigma (tau = 1)
    return {"xs": xs, "ys": ys, "logZ": np.log10(Z - Z.min() + 1e-3).astype(np.float32),
            "min": prior.smoothed_prox(ex.Y2, 1.0, sigma),
            "prox": prior.prox(ex.Y2, 1.0), "path": path, "cond": float(curv.max() / curv.min())}


def level_set_traces(sigma: float, kappa: float = 500.0) -> list:
    """Contours of log10(F_sigma - min) for N(0, diag(1, 1/kappa)), y = (1, 1), tau = 1, with
    the minimiser of F_sigma, the path of minimisers over sigma, y and the true prox."""
    sigma = check_positive(sigma, "sigma", allow_zero=True)
    kappa = check_in_range(kappa, "kappa", 1.0, np.inf, closed=(True, False))
    d = _level_set_data(float(sigma), float(kappa))
    return [
        go.Contour(x=d["xs"], y=d["ys"], z=d["logZ"], colorscale="Viridis", showscale=True,
                   contours=dict(start=-2.5, end=2.5, size=0.25, coloring="heatmap", showlines=True),
                   line=dict(width=0.6), colorbar=dict(title=dict(text="log10(F_σ − min F_σ)", side="right")),
                   showlegend=False, hoverinfo="skip"),
        go.Scatter(x=d["path"][:, 0], y=d["path"][:, 1], mode="lines", name="minimiser of F_σ as σ varies",
                   line=dict(color="white", dash="dot", width=2)),
        go.Scatter(x=[ex.Y2[0]], y=[ex.Y2[1]], mode="markers", name="observation y",
                   marker=dict(symbol="x", size=12, color="black")),
        go.Scatter(x=[d["prox"][0]], y=[d["prox"][1]], mode="markers", name="prox (σ = 0 target)",
                   marker=dict(symbol="star", size=15, color=color_for(1), line=dict(color="white", width=1))),
        go.Scatter(x=[d["min"][0]], y=[d["min"][1]], mode="markers", name="minimiser of F_σ",
                   marker=dict(size=11, color=color_for(4), line=dict(color="white", width=1.5))),
    ]


def level_set_note(sigma: float, kappa: float = 500.0) -> dict:
    """Layout annotation giving the condition number of F_sigma (shown in each frame)."""
    d = _level_set_data(float(sigma), float(kappa))
    return {"annotations": [dict(x=0.5, y=0.01, xref="paper", yref="paper", xanchor="center", yanchor="bottom",
                                 showarrow=False, bgcolor="rgba(255,255,255,0.85)",
                                 text=f"σ = {sigma:g}: condition number of F_σ = {d['cond']:.1f}")]}


def _level_layout(fig: go.Figure, height: int = 520) -> go.Figure:
    base_layout(fig, xaxis_title="x<sub>1</sub> (well-determined direction)",
                yaxis_title="x<sub>2</sub> (stiff direction, prior variance 1/κ)", height=height)
    fig.update_xaxes(range=list(XLIM), autorange=False, constrain="domain")
    fig.update_yaxes(range=list(YLIM), autorange=False, scaleanchor="x", scaleratio=1, constrain="domain")
    return fig


def level_set_slider(kappa: float = 500.0, active: int = 2) -> go.Figure:
    """Static twin of ``EXPLORER_LEVELS``: one frame per sigma in ``SIGMAS``."""
    steps = [SliderStep(f"{s:g}", level_set_traces(s, kappa), level_set_note(s, kappa)) for s in SIGMAS]
    fig = slider_figure(steps, slider_label="noise level σ", active=active, fixed_axes=False, height=560)
    return _level_layout(fig, 560)


@lru_cache(maxsize=1)
def _precompute_levels() -> int:
    for kp in LEVEL_KAPPAS:
        for sg in SIGMAS:
            _level_set_data(sg, kp)
    return len(LEVEL_KAPPAS) * len(SIGMAS)


def level_set_figure(sigma: float = 0.1, kappa: float = 500.0) -> go.Figure:
    """Live figure of ``EXPLORER_LEVELS`` (its first call precomputes the (sigma, kappa) grid)."""
    _precompute_levels()
    fig = go.Figure(level_set_traces(sigma, kappa))
    fig.update_layout(**level_set_note(sigma, kappa))
    return _level_layout(fig)


# --------------------------------------------------------------------------- error curves


def _error_line(err: np.ndarray, name: str, color: str, dash: str = "solid", m: int = 200) -> go.Scatter:
    idx = thin_indices(err.size - 1, m, log=True) + 1  # k >= 1 on a log axis
    return go.Scatter(x=idx, y=np.maximum(err[idx], 1e-16), mode="lines", name=name,
                      line=dict(color=color, dash=dash, width=2.4))


def crossover(err_a: np.ndarray, err_b: np.ndarray) -> int | None:
    """First k from which err_b <= err_a for good (None if never): where method b overtakes a."""
    err_a, err_b = np.asarray(err_a, dtype=float), np.asarray(err_b, dtype=float)
    if err_a.ndim != 1 or err_a.shape != err_b.shape or err_a.size == 0:
        raise ValueError("err_a and err_b must be non-empty 1-D arrays of the same length")
    ahead = err_b <= err_a
    if not ahead[-1]:
        return None
    behind = np.flatnonzero(~ahead)
    return int(behind[-1] + 1) if behind.size else 0


def watch_figure(kappa: float = 500.0, k_max: int = 3000) -> go.Figure:
    """Error of MMSE averaging, naive and accelerated GD (textbook steps) and fixed-sigma
    plug-and-play on one anisotropic log-cosh problem (log-log axes), with phases cut at the
    measured crossovers: averaging ahead, then accelerated GD, then both linear rates."""
    k_max = check_int(k_max, "k_max", minimum=10)
    w = ex.watch_runs(float(kappa), FIGURE_SEED, k_max)
    errs = {name: res.trace["error"] for name, res in w["runs"].items()}
    labels = {"naive GD": "naive GD (step 1/L_F)", "accelerated GD": "accelerated GD (step 1/L_F)",
              "fixed-σ averaging": f"fixed-σ averaging (σ² = {w['pnp_sigma2']:g}τ)"}
    data = [_error_line(e, labels.get(name, name), color_for(i)) for i, (name, e) in enumerate(errs.items())]
    fig = base_layout(go.Figure(data), logx=True, logy=True, height=460,
                      xaxis_title="oracle calls k (log scale)", yaxis_title=ERROR_AXIS)
    cuts = [crossover(errs["MMSE averaging"], errs[m]) for m in ("accelerated GD", "naive GD")]
    if all(c is not None and 1 < c < k_max for c in cuts) and cuts[0] < cuts[1]:
        fig.update_layout(**phase_layout([Phase(1, cuts[0], "averaging ahead"),
                                          Phase(cuts[0], cuts[1], "AGD ahead"),
                                          Phase(cuts[1], k_max, "GD too")], logx=True))
    fig.update_yaxes(range=[-16.5, 0.5])
    return fig


def watch_crossovers(kappa: float = 500.0, k_max: int = 3000) -> dict:
    """The crossovers the watch figure shades (for the prose)."""
    w = ex.watch_runs(float(kappa), FIGURE_SEED, k_max)
    e = {name: res.trace["error"] for name, res in w["runs"].items()}
    return {m: crossover(e["MMSE averaging"], e[m]) for m in ("accelerated GD", "naive GD")}


@lru_cache(maxsize=2)
def _path_grid(kappa: float, n: int = 90) -> tuple:
    w = ex.watch_runs(kappa, FIGURE_SEED)
    y, xs_ = w["y"], w["x_star"]
    lo, hi = np.minimum(y, xs_), np.maximum(y, xs_)
    pad = 0.15 * (hi - lo).max()
    xs, ys = np.linspace(lo[0] - pad, hi[0] + pad, n), np.linspace(lo[1] - pad, hi[1] + pad, n)
    Z = smoothed_objective(w["prior"], np.stack(np.meshgrid(xs, ys), axis=-1), y, w["tau"], 0.0)
    return xs, ys, np.log10(Z - Z.min() + 1e-3).astype(np.float32)


def path_figure(kappa: float = 500.0, n_steps: int = 40) -> go.Figure:
    """The first ``n_steps`` iterates of MMSE averaging and naive GD over the contours of F
    (the log-cosh problem of :func:`watch_figure`)."""
    n_steps = check_int(n_steps, "n_steps", minimum=1)
    w = ex.watch_runs(float(kappa), FIGURE_SEED)
    xs, ys, Z = _path_grid(float(kappa))
    data = [go.Contour(x=xs, y=ys, z=Z, colorscale="Viridis", ncontours=22, showscale=True,
                       contours=dict(coloring="heatmap", showlines=True), line=dict(width=0.5),
                       colorbar=dict(title=dict(text="log10(F − min F)", side="right")),
                       showlegend=False, hoverinfo="skip")]
    for i, name in enumerate(("MMSE averaging", "naive GD")):
        path = w["runs"][name].iterates[: n_steps + 1]
        data.append(go.Scatter(x=path[:, 0], y=path[:, 1], mode="lines+markers", name=name,
                               line=dict(color=color_for(i), width=2), marker=dict(size=5)))
    data += [go.Scatter(x=[w["y"][0]], y=[w["y"][1]], mode="markers", name="observation y",
                        marker=dict(symbol="x", size=12, color="black")),
             go.Scatter(x=[w["x_star"][0]], y=[w["x_star"][1]], mode="markers", name="prox(y)",
                        marker=dict(symbol="star", size=15, color=color_for(1), line=dict(color="white", width=1)))]
    fig = base_layout(go.Figure(data), xaxis_title="x<sub>1</sub> (scale 1)",
                      yaxis_title="x<sub>2</sub> (scale 1/√κ: stiff)", height=500)
    fig.update_xaxes(range=[xs[0], xs[-1]])
    fig.update_yaxes(range=[ys[0], ys[-1]])
    return fig


def race_traces(kappa: float) -> list:
    """Error of MMSE averaging and naive GD (textbook step) on the kappa-conditioned log-cosh
    problem, with a reference C/k line."""
    kappa = check_in_range(kappa, "kappa", 1.0, 1e8, closed=(True, True))
    r = ex.race_runs(float(kappa), seed=FIGURE_SEED)
    avg = r["runs"]["MMSE averaging"].trace["error"]
    k = thin_indices(avg.size - 1, 60, log=True) + 1
    return [
        _error_line(avg, "MMSE averaging", color_for(0)),
        _error_line(r["runs"]["naive GD"].trace["error"], "naive GD (step 1/L_F)", color_for(1)),
        go.Scatter(x=k, y=2 * avg[1] / (k + 1.0), mode="lines", name="reference 1/k",
                   line=dict(color="#999", dash="dot", width=1.5)),
    ]


RACE_AXES = dict(xaxis_title="oracle calls k (log scale)", yaxis_title=ERROR_AXIS)
RACE_YRANGE = [-10.0, 0.5]  # log10: averaging stays above 1e-4 in 2000 calls; GD at small kappa dives below


def race_slider(active: int = 3) -> go.Figure:
    """Static twin of ``EXPLORER_RACE``: one frame per kappa in ``RACE_KAPPAS``."""
    steps = [SliderStep(f"{kp:g}", race_traces(kp)) for kp in ex.RACE_KAPPAS]
    fig = slider_figure(steps, slider_label="prior condition number κ", active=active, logx=True, logy=True,
                        **RACE_AXES)
    fig.update_yaxes(range=RACE_YRANGE)
    return fig


@lru_cache(maxsize=1)
def _precompute_race() -> int:
    """Run the whole kappa grid once (a second or two), so that every later move is a cache hit."""
    for kp in ex.RACE_KAPPAS:
        ex.race_runs(kp, seed=FIGURE_SEED)
    return len(ex.RACE_KAPPAS)


def race_figure(kappa: float = 500.0) -> go.Figure:
    """Live figure of ``EXPLORER_RACE`` (its first call precomputes the kappa grid)."""
    _precompute_race()
    fig = base_layout(go.Figure(race_traces(kappa)), logx=True, logy=True, **RACE_AXES)
    fig.update_yaxes(range=RACE_YRANGE)
    return fig


def beyond_figure(k_max_laplace: int = 3000) -> go.Figure:
    """Error vs k (log-log) of averaging on the kappa = 500 log-cosh prior and on the Laplace
    prior (nonsmooth, outside Theorem 1), with 1/k and 1/sqrt(k) reference lines."""
    lc = ex.race_runs(500.0, seed=FIGURE_SEED)["runs"]["MMSE averaging"].trace["error"]
    la = ex.laplace_run(check_int(k_max_laplace, "k_max_laplace", minimum=10))["result"].trace["error"]
    k = np.geomspace(1, k_max_laplace, 50)
    data = [_error_line(lc, "MMSE averaging, log-cosh prior (κ = 500)", color_for(0)),
            _error_line(la, "MMSE averaging, Laplace prior (nonsmooth)", color_for(3)),
            go.Scatter(x=k, y=2 * lc[1] / (k + 1), mode="lines", name="reference 1/k",
                       line=dict(color="#999", dash="dot", width=1.5)),
            go.Scatter(x=k, y=2 * la[1] * np.sqrt(2 / (k + 1)), mode="lines", name="reference 1/√k",
                       line=dict(color="#999", dash="dash", width=1.5))]
    fig = base_layout(go.Figure(data), logx=True, logy=True, height=450, **RACE_AXES)
    fig.update_yaxes(range=[-5, 1])
    return fig


INEXACT_KINDS = {"systematic": "systematic score error (fixed direction)",
                 "random": "random score error (new direction each call)",
                 "output": "fixed-size error on the denoiser's output (diverges)"}


def inexact_figure(seeds: tuple[int, ...] = ex.CLAIM_SEEDS) -> go.Figure:
    """Final error of averaging with an inexact denoiser against the error size xi (log-log),
    median over ``seeds`` with the range as error bars, and the neighbourhood radius tau xi."""
    main = ex.inexact_sweep(tuple(seeds), kinds=("systematic", "random"))
    out = ex.inexact_sweep(tuple(seeds), kinds=("output",))
    xis = np.array(main["xis"])
    data = []
    for i, (kind, label) in enumerate(INEXACT_KINDS.items()):
        err = (main if kind in main["ratio"] else out)["ratio"][kind] * xis[:, None]  # tau = 1
        med = np.median(err, axis=1)
        data.append(go.Scatter(
            x=xis, y=med, mode="lines+markers", name=label, line=dict(color=color_for(i), width=2.2),
            error_y=dict(type="data", symmetric=False, array=err.max(axis=1) - med,
                         arrayminus=med - err.min(axis=1), visible=True)))
    data.append(go.Scatter(x=xis, y=xis, mode="lines", name="radius τξ (worst case)",
                           line=dict(color="#555", dash="dash", width=1.8)))
    exact = float(np.median(main["exact"]))
    data.append(go.Scatter(x=[xis[0], xis[-1]], y=[exact, exact], mode="lines", name="exact denoiser (no error)",
                           line=dict(color="#999", dash="dot", width=1.8)))
    fig = base_layout(go.Figure(data), logx=True, logy=True, height=440,
                      xaxis_title="error size ξ (log scale)",
                      yaxis_title=f"error after {ex.INEXACT_K} calls (log scale)")
    return fig


# --------------------------------------------------------------------------- schedules (Gaussian)

SCHEDULES = {  # label -> (alpha_scale c, sigma_scale s)
    "paper (c=1, s=1)": (1.0, 1.0),
    "σ² halved (s=0.5)": (1.0, 0.5),
    "σ² doubled (s=2)": (1.0, 2.0),
    "α halved (c=0.5)": (0.5, 1.0),
    "both halved (c=s=0.5)": (0.5, 0.5),
    "α ×1.5 (c=1.5)": (1.5, 1.0),
}
SCALES = (0.25, 0.5, 1.0, 1.5, 2.0)
SCHEDULE_AXES = dict(xaxis_title="iteration k (log scale)", yaxis_title=ERROR_AXIS)


def schedule_traces(alpha_scale: float, sigma_scale: float) -> list:
    """Error of averaging with alpha_k = c/(k+2), sigma_k^2 = s tau/(k+1) against the paper's
    schedule, and the predicted floor ||prox_{tau s/c}(y) - prox_tau(y)|| (Gaussian, kappa = 100)."""
    run = ex.schedule_run(float(alpha_scale), float(sigma_scale))
    ref = ex.schedule_run(1.0, 1.0)
    err = run["result"].trace["error"]
    bias = max(run["predicted_bias"], 1e-16)
    return [
        _error_line(ref["result"].trace["error"], "paper's schedule", "#999", "dot"),
        _error_line(err, f"c = {alpha_scale:g}, s = {sigma_scale:g}", color_for(0)),
        go.Scatter(x=[1, err.size - 1], y=[bias, bias], mode="lines",
                   name="predicted bias ||prox_(τs/c) − prox_τ||", line=dict(color=color_for(1), dash="dash", width=1.8)),
    ]


def schedule_slider(active: int = 1) -> go.Figure:
    """Static twin of ``EXPLORER_SCHEDULE``: one frame per named schedule in ``SCHEDULES``."""
    steps = [SliderStep(lab, schedule_traces(c, s)) for lab, (c, s) in SCHEDULES.items()]
    fig = slider_figure(steps, slider_label="schedule", active=active, logx=True, logy=True, **SCHEDULE_AXES)
    fig.update_yaxes(range=[-4.0, 0.3])
    return fig


@lru_cache(maxsize=1)
def _precompute_schedules() -> int:
    for c in SCALES:
        for s in SCALES:
            ex.schedule_run(c, s)
    return len(SCALES) ** 2


def schedule_figure(alpha_scale: float = 1.0, sigma_scale: float = 0.5) -> go.Figure:
    """Live figure of ``EXPLORER_SCHEDULE`` (its first call precomputes the (c, s) grid)."""
    _precompute_schedules()
    fig = base_layout(go.Figure(schedule_traces(alpha_scale, sigma_scale)), logx=True, logy=True,
                      **SCHEDULE_AXES)
    fig.update_yaxes(range=[-4.0, 0.3])
    return fig


# --------------------------------------------------------------------------- the claim's tuning panel


def tuning_panel(result: ClaimResult, kappa: float = 1000.0) -> go.Figure:
    """The tuning panel of the headline claim at one kappa: every method's grid on the held-out
    seeds, scored by the relative error after ``BUDGET`` oracle calls."""
    if not isinstance(result, ClaimResult) or not isinstance(result.details, dict) \
            or "per_kappa" not in result.details:
        raise ValueError("result must be the ClaimResult of 07.condition_independence (with its details)")
    per_kappa = result.details["per_kappa"]
    if kappa not in per_kappa:
        raise ValueError(f"kappa must be one of {sorted(per_kappa)}, got {kappa!r}")
    tunings = list(per_kappa[kappa]["tunings"].values())
    fig = tuning_figure(tunings, score_label="relative error", logy=True, height=480)
    # two legend rows sit above the subplot titles, not on them
    fig.update_layout(legend=dict(y=1.22), margin=dict(t=130))
    return fig


EXPLORER_LEVELS = Explorer("07", "level_sets", level_set_figure, {
    "sigma": Slider("noise level σ", SIGMAS, 0.1),
    "kappa": Slider("prior condition number κ", LEVEL_KAPPAS, 500.0),
}, description="Level sets of the smoothed proximal objective F_σ")
EXPLORER_RACE = Explorer("07", "race", race_figure, {
    "kappa": Slider("prior condition number κ", ex.RACE_KAPPAS, 500.0),
}, description="MMSE averaging against naive GD on the log-cosh prior as its conditioning worsens")
EXPLORER_SCHEDULE = Explorer("07", "schedule", schedule_figure, {
    "alpha_scale": Slider("α scale c", SCALES, 1.0),
    "sigma_scale": Slider("σ² scale s", SCALES, 0.5),
}, description="Breaking the identity (1 - α_k) σ_k² = α_k τ")
