"""Chapter 06's figures and live explorers: the star editor, the chambers of the two-ray model,
the fan-resolution experiment, the lambda path and the phases of a star-MLE run."""
from __future__ import annotations

from functools import lru_cache

import numpy as np
import plotly.graph_objects as go

from ...core import Trace, check_int, check_matrix, check_positive
from ...viz import Phase, SliderStep, base_layout, color_for, slider_figure
from ...widgets import Explorer, Slider
from .experiments import (
    A_TRUE,
    KITE,
    NET,
    RESOLUTIONS,
    STAR,
    SVM,
    comparison_data,
    fit_method,
    make_star_data,
    resolution_data,
    resolution_fit,
)
from .model import (
    U_FLOOR,
    Fan,
    check_labels,
    check_params,
    confusion,
    fit_star,
    line_fan,
    log_likelihood,
    select_lambda,
    star_classify,
    type_b_fan,
)

INSIDE, OUTSIDE = "#1f77b4", "#d62728"


def star_polygon(fan: Fan, a, radius: float = 1.6) -> np.ndarray:
    """Closed polygon of the 2-D star(a) boundary (vertices v_i / a_i in angular order); a ray
    with a_i = 0 is cut at ``radius`` (the star is unbounded there)."""
    if not isinstance(fan, Fan) or fan._angles is None:
        raise ValueError("fan must be a 2-D fan built by fan_2d")
    a = check_params(a, fan.n_rays)
    dirs = fan.rays / np.linalg.norm(fan.rays, axis=1, keepdims=True)
    with np.errstate(divide="ignore"):
        r = np.where(a > 0, np.linalg.norm(fan.rays, axis=1) / np.where(a > 0, a, 1.0), radius)
    pts = dirs * np.minimum(r, radius)[:, None]
    return np.vstack([pts, pts[:1]])


def star_traces(fan: Fan, a, X, y, *, name: str = "star(a)", show_rays: bool = True) -> list:
    """The star's boundary, the fan's rays and the data (circles = label 0 inside, crosses =
    label 1 outside; black rings mark misclassified points). Always 5 traces."""
    poly = star_polygon(fan, a)
    X = check_matrix(X, "X", shape=(None, 2))
    y = check_labels(y, X.shape[0])
    pred = star_classify(fan.coordinates(X), a)
    wrong = pred != y
    R = 1.5 * fan.rays / np.linalg.norm(fan.rays, axis=1, keepdims=True)
    rx = np.column_stack([np.zeros(len(R)), R[:, 0], np.full(len(R), np.nan)]).ravel() if show_rays else []
    ry = np.column_stack([np.zeros(len(R)), R[:, 1], np.full(len(R), np.nan)]).ravel() if show_rays else []
    return [
        go.Scatter(x=rx, y=ry, mode="lines", name="fan rays", line=dict(color="#bbb", width=1, dash="dot")),
        go.Scatter(x=X[y == 0, 0], y=X[y == 0, 1], mode="markers", name="label 0 (inside)",
                   marker=dict(color=INSIDE, size=5, symbol="circle")),
        go.Scatter(x=X[y == 1, 0], y=X[y == 1, 1], mode="markers", name="label 1 (outside)",
                   marker=dict(color=OUTSIDE, size=6, symbol="x")),
        go.Scatter(x=X[wrong, 0], y=X[wrong, 1], mode="markers", name="misclassified",
                   marker=dict(color="rgba(0,0,0,0)", size=11, line=dict(color="black", width=1.3))),
        go.Scatter(x=poly[:, 0], y=poly[:, 1], mode="lines+markers", name=name, fill="toself",
                   fillcolor="rgba(44,160,44,0.12)", line=dict(color="#2ca02c", width=2.5), marker=dict(size=7)),
    ]


def _square_axes(fig: go.Figure, lim: float = 1.55) -> go.Figure:
    fig.update_xaxes(range=[-lim, lim], autorange=False, constrain="domain")
    fig.update_yaxes(range=[-lim, lim], autorange=False, scaleanchor="x", scaleratio=1)
    return fig


@lru_cache(maxsize=2)
def editor_data() -> dict:
    """Data of the star editor: 200 points of the card's truth on the type-B fan and the MLE."""
    fan = type_b_fan(2)
    X, y, _ = make_star_data(fan, A_TRUE, 200, 0.1, rng=7)
    A = fan.coordinates(X)
    sel = select_lambda(A, y, refit=False)
    return {"fan": fan, "X": X, "y": y, "A": A, "a_mle": sel["a"], "lam": sel["lam"]}


def _editor_title(conf: dict) -> str:
    return f"FP = {conf['FP']}, FN = {conf['FN']}, err = {conf['err']} of 200 points"


def star_editor_figure(a1=1.0, a2=1.0, a3=1.0, a4=1.0, a5=1.0, a6=1.0, a7=1.0, a8=1.0) -> go.Figure:
    """The star editor: star(a) over the data with live FP / FN / err (the explorer's figure)."""
    d = editor_data()
    a = np.array([a1, a2, a3, a4, a5, a6, a7, a8], dtype=float)
    fig = go.Figure(star_traces(d["fan"], a, d["X"], d["y"]))
    base_layout(fig, title=_editor_title(confusion(d["A"], a, d["y"])), xaxis_title="x<sub>1</sub>",
                yaxis_title="x<sub>2</sub>", height=560)
    return _square_axes(fig)


EDITOR_VALUES = tuple(np.round(np.arange(0.5, 3.01, 0.25), 2))
EXPLORER_EDITOR = Explorer("06", "star_editor", star_editor_figure,
                           {f"a{i + 1}": Slider(f"a{i + 1}", EDITOR_VALUES, 1.0) for i in range(8)},
                           description="ray-length sliders a_1..a_8 of a star on the type-B fan, with FP/FN/err")


def star_editor_slider(ray: int = 7, values=EDITOR_VALUES) -> go.Figure:
    """Static twin of the editor: the MLE star (rounded to the slider grid) with one ray's a_i moved."""
    d = editor_data()
    base = np.array([min(EDITOR_VALUES, key=lambda v: abs(v - t)) for t in d["a_mle"]])
    ray = check_int(ray, "ray", minimum=1)
    if ray > 8:
        raise ValueError("ray must be 1..8")
    steps = []
    for v in values:
        a = base.copy()
        a[ray - 1] = v
        steps.append(SliderStep(f"{v:g}", star_traces(d["fan"], a, d["X"], d["y"]),
                                layout={"title": {"text": _editor_title(confusion(d["A"], a, d["y"]))}}))
    active = int(np.argmin(np.abs(np.array(values) - base[ray - 1])))
    fig = slider_figure(steps, slider_label=f"a{ray}", active=active, fixed_axes=False,
                        xaxis_title="x<sub>1</sub>", yaxis_title="x<sub>2</sub>", height=600)
    fig.update_layout(title=dict(text=_editor_title(confusion(d["A"], np.where(
        np.arange(8) == ray - 1, values[active], base), d["y"])), x=0.01))
    return _square_axes(fig)


# ---- parameter space for two rays (1-D data, fan v_1 = -e_1, v_2 = e_1)

@lru_cache(maxsize=2)
def chamber_data(grid: int = 81, amax: float = 4.0) -> dict:
    """16 points in [-1, 1] labelled by the interval star(1.4, 2.2), 3 labels flipped; err on a grid
    of (a_1, a_2), the hyperplanes (lines a_1 = 1/|x| or a_2 = 1/x) and a*(1)."""
    grid = check_int(grid, "grid", minimum=2)
    amax = check_positive(amax, "amax")
    rng = np.random.default_rng(3)
    x = np.sort(rng.uniform(-1, 1, 16))
    fan = line_fan()
    A = fan.coordinates(x[:, None])
    y = star_classify(A, [1.4, 2.2])
    y[[2, 9, 14]] = 1 - y[[2, 9, 14]]
    g = np.linspace(amax / grid, amax, grid)
    G1, G2 = np.meshgrid(g, g)
    P = np.stack([G1.ravel(), G2.ravel()])
    U = A @ P
    pred = U > 1.0
    pos = (y == 1)[:, None]
    fp, fn = np.sum(~pos & pred, axis=0), np.sum(pos & ~pred, axis=0)
    lines = [(1.0 / abs(v), 0) if v < 0 else (1.0 / v, 1) for v in x if v != 0 and 1.0 / abs(v) <= amax]
    hx = np.concatenate([[c, c, np.nan] if ax == 0 else [0, amax, np.nan] for c, ax in lines])
    hy = np.concatenate([[0, amax, np.nan] if ax == 0 else [c, c, np.nan] for c, ax in lines])
    return {"x": x, "y": y, "A": A, "grid": g, "P": P, "U": U, "err": (fp + fn).reshape(grid, grid),
            "a1": fit_star(A, y, 1.0).x, "amax": amax, "hyperplanes": (hx, hy)}


def _chamber_traces(lam: float) -> tuple[list, dict]:
    d = chamber_data()
    pos = (d["y"] == 1)[:, None]
    s = lam * np.maximum(d["U"], U_FLOOR)
    L = (np.sum(np.where(pos, np.log(-np.expm1(-np.where(pos, s, 1.0))), -s), axis=0)).reshape(d["err"].shape)
    a_star = d["a1"] / lam
    L_star = log_likelihood(a_star, d["A"], d["y"], lam)
    gap = np.log10(np.maximum(L_star - L, 1e-6))
    t = np.linspace(0, d["amax"] * 1.5 / np.max(d["a1"]), 50)
    conf = confusion(d["A"], a_star, d["y"])
    traces = [
        go.Contour(x=d["grid"][::2], y=d["grid"][::2], z=np.round(gap[::2, ::2], 3),
                   contours=dict(coloring="lines", start=-1.0, end=1.5, size=0.25),
                   line=dict(width=1.2), colorscale="Plasma", showscale=False, name="log10(L* - L)",
                   showlegend=True),
        go.Scatter(x=t * d["a1"][0], y=t * d["a1"][1], mode="lines", name="a*(lambda) for all lambda",
                   line=dict(color="#2ca02c", width=2, dash="dash")),
        go.Scatter(x=[a_star[0]], y=[a_star[1]], mode="markers", name="a*(lambda)",
                   marker=dict(color="#2ca02c", size=13, symbol="star", line=dict(color="black", width=1))),
    ]
    title = (f"lambda = {lam:g}: a* = ({a_star[0]:.2f}, {a_star[1]:.2f}), "
             f"FP = {conf['FP']}, FN = {conf['FN']}, err = {conf['err']}")
    return traces, {"title": {"text": title}}


CHAMBER_LAMS = (0.3, 0.5, 0.7, 1.0, 1.4, 2.0, 3.0, 5.0)


def _chamber_axes(fig: go.Figure) -> go.Figure:
    amax = chamber_data()["amax"]
    fig.update_xaxes(range=[0, amax], autorange=False, constrain="domain",
                     title_text="a<sub>1</sub> (ray -e<sub>1</sub>)")
    fig.update_yaxes(range=[0, amax], autorange=False, title_text="a<sub>2</sub> (ray +e<sub>1</sub>)",
                     scaleanchor="x", scaleratio=1)
    return fig


def _chamber_background() -> list:
    """The lambda-free layers: err on the chambers (grey) and the hyperplanes H_i (lines)."""
    d = chamber_data()
    hx, hy = d["hyperplanes"]
    return [
        go.Heatmap(x=d["grid"], y=d["grid"], z=d["err"], colorscale="Greys", zmin=0, zmax=d["y"].size,
                   colorbar=dict(title=dict(text="err (mistakes)", side="right"), x=1.02), name="err"),
        go.Scatter(x=hx, y=hy, mode="lines", name="hyperplanes H<sub>i</sub>", line=dict(color="#555", width=1)),
    ]


def chamber_figure(lam: float = 1.0) -> go.Figure:
    """Parameter space of the two-ray model: err constant on the chambers of the arrangement
    (grey), contours of log10(L*(lambda) - L_lambda), the line of optima and a*(lambda)."""
    traces, layout = _chamber_traces(check_positive(lam, "lam"))
    fig = go.Figure(_chamber_background() + traces)
    fig.update_layout(**layout)
    base_layout(fig, title=layout["title"]["text"], height=600)
    return _chamber_axes(fig)


EXPLORER_CHAMBERS = Explorer("06", "chambers", chamber_figure,
                             {"lam": Slider("lambda", CHAMBER_LAMS, 1.0)},
                             description="chambers of the 0/1 loss and likelihood contours for two rays")


def chamber_slider() -> go.Figure:
    """Static twin of the chambers explorer (one frame per lambda)."""
    background = _chamber_background()  # small (an 81 x 81 integer grid): repeated in every frame
    steps = []
    for lam in CHAMBER_LAMS:
        traces, layout = _chamber_traces(lam)
        steps.append(SliderStep(f"{lam:g}", background + traces, layout))
    fig = slider_figure(steps, slider_label="lambda", active=CHAMBER_LAMS.index(1.0), fixed_axes=False, height=640)
    fig.update_layout(title=dict(text=steps[CHAMBER_LAMS.index(1.0)].layout["title"]["text"], x=0.01))
    return _chamber_axes(fig)


# ---- fan resolution: k equiangular rays

@lru_cache(maxsize=4)
def _resolution_all(seed: int) -> dict:
    return {k: resolution_fit(k, seed) for k in RESOLUTIONS}


def _resolution_traces(k: int, lam_scale: float = 1.0, seed: int = 11) -> tuple[list, dict]:
    f = _resolution_all(seed)[k] if k in RESOLUTIONS else resolution_fit(k, seed)
    b = resolution_data(seed)
    a = f["a"] / lam_scale
    X, y = b["X"][b["te"]], b["y"][b["te"]]
    A = f["A"][b["te"]]
    acc_tr = float(np.mean(star_classify(f["A"][b["tr"]], a) == b["y"][b["tr"]]))
    acc_te = float(np.mean(star_classify(A, a) == y))
    traces = star_traces(f["fan"], a, X, y, name=f"MLE star, {k} rays")
    title = f"k = {k} rays: training accuracy {acc_tr:.3f}, holdout accuracy {acc_te:.3f} (holdout points shown)"
    return traces, {"title": {"text": title}}


def resolution_figure(k: int = 8, lam_scale: float = 1.0) -> go.Figure:
    """The fitted star on k equiangular rays over the holdout points; ``lam_scale`` multiplies the
    selected lambda (the threshold), so the star is rescaled by 1/lam_scale."""
    traces, layout = _resolution_traces(k, check_positive(lam_scale, "lam_scale"))
    fig = go.Figure(traces)
    base_layout(fig, title=layout["title"]["text"], xaxis_title="x<sub>1</sub>", yaxis_title="x<sub>2</sub>",
                height=560)
    return _square_axes(fig)


EXPLORER_RESOLUTION = Explorer("06", "fan_resolution", resolution_figure,
                               {"k": Slider("rays k", RESOLUTIONS, 8),
                                "lam_scale": Slider("lambda / selected lambda",
                                                    (0.5, 0.7, 0.85, 1.0, 1.2, 1.5, 2.0), 1.0)},
                               description="expressivity vs overfitting as the fan gets finer; lambda as a threshold")


def resolution_slider() -> go.Figure:
    """Static twin of the fan-resolution explorer (one frame per k, selected lambda)."""
    steps = [SliderStep(str(k), *_resolution_traces(k)) for k in RESOLUTIONS]
    act = RESOLUTIONS.index(8)
    fig = slider_figure(steps, slider_label="rays k", active=act, fixed_axes=False,
                        xaxis_title="x<sub>1</sub>", yaxis_title="x<sub>2</sub>", height=600)
    fig.update_layout(title=dict(text=steps[act].layout["title"]["text"], x=0.01))
    return _square_axes(fig)


def resolution_curve_figure(curve: dict) -> go.Figure:
    """Training and holdout accuracy against the number of rays k."""
    fig = go.Figure([
        go.Scatter(x=curve["ks"], y=curve["train"], mode="lines+markers", name="training accuracy",
                   line=dict(color=color_for(0))),
        go.Scatter(x=curve["ks"], y=curve["holdout"], mode="lines+markers", name="holdout accuracy",
                   line=dict(color=color_for(1))),
    ])
    return base_layout(fig, xaxis_title="number of rays k (= VC dimension)", yaxis_title="accuracy (fraction correct)",
                       height=400)


def lambda_path_figure(p: dict) -> go.Figure:
    """FP, FN and err along a*(lambda) (log lambda axis)."""
    fig = go.Figure([
        go.Scatter(x=p["lams"], y=p["FP"], mode="lines", name="false positives FP",
                   line=dict(color=color_for(1), shape="hv")),
        go.Scatter(x=p["lams"], y=p["FN"], mode="lines", name="false negatives FN",
                   line=dict(color=color_for(0), shape="hv")),
        go.Scatter(x=p["lams"], y=p["err"], mode="lines", name="err = FP + FN",
                   line=dict(color="black", shape="hv", width=2.5)),
    ])
    return base_layout(fig, xaxis_title="rate lambda (log scale)", yaxis_title="training mistakes (count of 500)",
                       logx=True, height=420)


def chamber_phase(trace: Trace) -> list[Phase]:
    """Phases of a star-MLE run: 'searching chambers' while the training classification still
    changes, 'inside the final chamber' after (the 0/1 loss is constant on chambers)."""
    err, fp = trace["err"], trace["FP"]
    changed = np.flatnonzero((np.diff(err) != 0) | (np.diff(fp) != 0))
    t_c = int(changed[-1] + 1) if changed.size else 0
    end = float(trace.iteration[-1])
    phases = [Phase(float(t_c), end, "inside the final chamber")]
    if t_c > 0:
        phases.insert(0, Phase(0.0, float(t_c), "moving between chambers"))
    return phases




# --------------------------------------------------------------------------- the comparison

#: Colours of the comparison's methods, shared by its two figures.
METHOD_COLORS = {STAR: "#2ca02c", NET: color_for(0), SVM: color_for(1), KITE: "#8c564b"}


def comparison_figure(details: dict) -> go.Figure:
    """Test accuracy of every tuned method on each data set of a run of 06.star_vs_flexible,
    with the true star's (the Bayes rate) as a ceiling."""
    seeds = [f"data set {s}" for s in details["seeds"]]
    bayes = [r["true star (Bayes classifier)"][1] for r in details["reference"]]
    fig = go.Figure(go.Scatter(x=seeds, y=bayes, mode="lines+markers", name="true star (Bayes rate)",
                               line=dict(color="black", dash="dot"), marker=dict(symbol="line-ew-open", size=14)))
    for m, acc in details["acc"].items():
        fig.add_trace(go.Scatter(x=seeds, y=acc[:, 1], mode="markers", name=m,
                                 marker=dict(color=METHOD_COLORS[m], size=12,
                                             symbol="star" if m in (STAR, KITE) else "circle")))
    return base_layout(fig, yaxis_title="test accuracy (2000 fresh points)", height=420)


def boundaries_figure(seed: int, settings: dict, grid: int = 121) -> go.Figure:
    """Decision boundaries of the tuned star, ReLU net and RBF SVM on comparison data set ``seed``
    (the paper's Fig. 10) inside the unit disk where the data live, with the true star dashed and
    the 500 training points."""
    seed = check_int(seed, "seed")
    grid = check_int(grid, "grid", minimum=10)
    d = comparison_data(seed)
    g = np.linspace(-1.05, 1.05, grid)
    G = np.stack(np.meshgrid(g, g), axis=-1).reshape(-1, 2)
    fan = type_b_fan(2)
    true_poly = star_polygon(fan, d["a_true"])
    X, y = d["X"], d["y"]
    traces = [
        go.Scatter(x=X[y == 0, 0], y=X[y == 0, 1], mode="markers", name="label 0 (inside)",
                   marker=dict(color=INSIDE, size=4, opacity=0.45)),
        go.Scatter(x=X[y == 1, 0], y=X[y == 1, 1], mode="markers", name="label 1 (outside)",
                   marker=dict(color=OUTSIDE, size=4, symbol="x", opacity=0.45)),
        go.Scatter(x=true_poly[:, 0], y=true_poly[:, 1], mode="lines", name="true star",
                   line=dict(color="black", dash="dash", width=2)),
    ]
    for m in (NET, SVM):
        model = fit_method(m, seed, settings[m])
        z = model.predict(G).astype(float)
        z[np.linalg.norm(G, axis=1) > 1.0] = np.nan  # no data outside the disk: no boundary to draw
        z = z.reshape(grid, grid)
        traces.append(go.Contour(x=g, y=g, z=z, contours=dict(start=0.5, end=0.5, size=1, coloring="lines"),
                                 line=dict(width=2.5), colorscale=[[0, METHOD_COLORS[m]], [1, METHOD_COLORS[m]]],
                                 showscale=False, name=m, showlegend=True, hoverinfo="skip"))
    star = fit_method(STAR, seed, settings[STAR])
    poly = star_polygon(fan, star.a_)
    traces.append(go.Scatter(x=poly[:, 0], y=poly[:, 1], mode="lines+markers", name=STAR,
                             line=dict(color=METHOD_COLORS[STAR], width=3), marker=dict(size=7)))
    fig = go.Figure(traces)
    base_layout(fig, xaxis_title="x<sub>1</sub>", yaxis_title="x<sub>2</sub>", height=560)
    return _square_axes(fig, lim=1.05)
