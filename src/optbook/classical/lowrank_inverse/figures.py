"""The chapter's figures (plotly) and its live explorers. Throughout, eps = ||E|| / lambda_n."""
from __future__ import annotations

from typing import Any

import numpy as np
import plotly.graph_objects as go

from ...core import Trace, check_in_range, check_int, check_positive
from ...viz import Phase, SliderStep, base_layout, color_for, convergence_figure, phase_layout, slider_figure
from ...widgets import Explorer, Slider, Toggle
from .bounds import SymmetricMatrix
from .contour import contour_circle, quadrature_trace
from .experiments import (
    designer_sweep,
    exact_synthetic_errors,
    noise_sweep,
    sqrt_n_experiment,
    structured_experiment,
    structured_matrix,
    synthetic_spectrum,
)
from .noise import wigner_noise

NAMES = {"true": "true error", "bound": "Theorem 2.1", "eymn": "EYM-N", "first_order": "first-order estimate",
         "term_full": "term 4||E||/λ_n²", "term_cut": "term 5||E||/(λ_{n-p} δ)"}
_DASH = {"true": "solid", "bound": "solid", "eymn": "dash", "first_order": "dot", "term_full": "dashdot",
         "term_cut": "longdash"}
_COLOR = {"true": color_for(0), "bound": color_for(1), "eymn": color_for(2), "first_order": color_for(3),
          "term_full": color_for(4), "term_cut": color_for(5)}
EPS_TITLE = "noise level ε = ||E|| / λ_n"


def _lines(x: np.ndarray, tr: Trace, keys: tuple[str, ...], mask_bound: bool = True) -> list[go.Scatter]:
    ok = tr["gap_ok"] > 0
    out = []
    for key in keys:
        y = tr[key].copy()
        if mask_bound and key in ("bound", "term_full", "term_cut"):
            y = np.where(ok, y, np.nan)  # the theorem says nothing beyond the gap condition
        out.append(go.Scatter(x=x, y=y, name=NAMES[key], mode="lines+markers",
                              line=dict(color=_COLOR[key], dash=_DASH[key], width=2.2), marker=dict(size=5)))
    return out


def _boundary_layout(x_gap: float, label: str, y_text: float = 0.04) -> dict:
    return {"shapes": [dict(type="line", xref="x", yref="paper", x0=x_gap, x1=x_gap, y0=0, y1=1,
                            line=dict(color="#555", dash="dot", width=1.5))],
            "annotations": [dict(x=np.log10(x_gap), xref="x", yref="paper", y=y_text, text=label,
                                 showarrow=False, xanchor="right", font=dict(size=11, color="#555"))]}


# --------------------------------------------------------------------------- watch it run


def contour_picture(n: int = 24, p: int = 6, n_nodes: int = 16, eps: float = 0.1, seed: int = 0) -> go.Figure:
    """The complex plane: eigenvalues of A and A~ (noise level eps = ||E|| / lambda_n), the contour
    Gamma around the p smallest, its trapezoid nodes and the pole z = 0 of f(z) = 1/z, which Gamma
    must avoid."""
    n = check_int(n, "n", minimum=3)
    p = check_int(p, "p", minimum=1)
    if p >= n:
        raise ValueError(f"p must be < n = {n}, got {p}")
    n_nodes = check_int(n_nodes, "n_nodes", minimum=2)
    eps = check_positive(eps, "eps", allow_zero=True)
    lam = np.concatenate([np.linspace(9.0, 6.0, n - p), np.linspace(3.0, 1.0, p)])
    rng = np.random.default_rng(check_int(seed, "seed"))
    sym = SymmetricMatrix.from_spectrum(lam, rng)
    noisy = np.linalg.eigvalsh(sym.matrix + wigner_noise(n, eps * sym.eigvals[-1], rng))
    c, r = contour_circle(sym, p)
    t = np.linspace(0, 2 * np.pi, 200)
    nodes = c + r * np.exp(2j * np.pi * np.arange(n_nodes) / n_nodes)
    kept = sym.eigvals[n - p:]
    fig = go.Figure([
        go.Scatter(x=c + r * np.cos(t), y=r * np.sin(t), mode="lines", name="contour Γ",
                   line=dict(color=color_for(1), width=2)),
        go.Scatter(x=nodes.real, y=nodes.imag, mode="markers", name=f"{n_nodes} trapezoid nodes z_k",
                   marker=dict(color=color_for(1), size=7, symbol="circle-open")),
        go.Scatter(x=kept, y=np.zeros(p), mode="markers", name="kept eigenvalues of A (p smallest)",
                   marker=dict(color=color_for(0), size=10)),
        go.Scatter(x=sym.eigvals[: n - p], y=np.zeros(n - p), mode="markers", name="dropped eigenvalues of A",
                   marker=dict(color="#999", size=10)),
        go.Scatter(x=noisy, y=np.full(n, -0.35), mode="markers", name="eigenvalues of A + E (shifted down)",
                   marker=dict(color=color_for(2), size=6, symbol="diamond")),
        go.Scatter(x=[0.0], y=[0.0], mode="markers+text", name="pole of 1/z", text=["z = 0"],
                   textposition="top center", marker=dict(color="black", size=11, symbol="x")),
    ])
    base_layout(fig, title="Γ encloses the p smallest eigenvalues and avoids z = 0",
                xaxis_title="Re z", yaxis_title="Im z", height=420)
    fig.update_yaxes(scaleanchor="x", scaleratio=1)
    return fig


def quadrature_figure() -> go.Figure:
    """Relative error of the contour evaluator against N for two spectra, with rho^{-N} guides."""
    rng = np.random.default_rng(3)
    well = SymmetricMatrix.from_spectrum(np.concatenate([np.full(50, 100.0), np.linspace(2.0, 1.0, 10)]), rng)
    synth = SymmetricMatrix.from_spectrum(synthetic_spectrum(60, 10), rng)
    traces = [quadrature_trace(well, 10, method="well separated (bottom in [1, 2], rest at 100)"),
              quadrature_trace(synth, 10, method="synthetic spectrum {n, ..., 10n, 20n}")]
    fig = convergence_figure(traces, phases=[Phase(4, 64, "geometric phase (well separated)"),
                                             Phase(64, 320, "round-off floor")],
                             xaxis_title="number of trapezoid nodes N",
                             yaxis_title="relative error ||quadrature - A_p^{-1}|| / ||A_p^{-1}||")
    for i, tr in enumerate(traces):
        fig.add_trace(go.Scatter(x=tr.iteration, y=np.maximum(tr["predicted"], 1e-17), mode="lines",
                                 name=f"ρ^(-N), ρ = {tr.meta['rho']:.3g}", line=dict(color=color_for(i), dash="dot")))
    fig.update_yaxes(range=[-17, 1])
    return fig


#: The noise shapes of the "watch it run" figure: label -> noise_sweep arguments.
RUN_SHAPES = {"isotropic (Wigner)": dict(phi_deg=90.0), "spread over the kept subspace": dict(phi_deg=0.0),
              "rank one along u_n": dict(shape="rank_one")}


def noise_run(n: int = 200) -> dict[str, Trace]:
    """The sweeps behind :func:`noise_run_figure`: one per noise shape, same A, same eps grid."""
    return {label: noise_sweep(n=n, eps_lo=1e-4, eps_hi=0.5, points=13, **kw) for label, kw in RUN_SHAPES.items()}


def noise_run_figure(n: int = 200) -> go.Figure:
    """Watch it run: the true error for three shapes of noise of the same norm, against eps, on the
    synthetic spectrum; Theorem 2.1 and EYM-N (which see only ||E||, so one curve each); the
    region where the gap condition holds shaded."""
    runs = noise_run(n)
    first = next(iter(runs.values()))
    ok = first["gap_ok"] > 0
    traces = [go.Scatter(x=first["eps"], y=np.where(ok, first["bound"], np.nan), name=NAMES["bound"],
                         mode="lines", line=dict(color=_COLOR["bound"], width=3)),
              go.Scatter(x=first["eps"], y=first["eymn"], name=NAMES["eymn"], mode="lines",
                         line=dict(color=_COLOR["eymn"], dash="dash", width=3))]
    for i, (label, tr) in enumerate(runs.items()):
        traces.append(go.Scatter(x=tr["eps"], y=tr["true"], name=f"true error, {label}", mode="lines+markers",
                                 line=dict(color=color_for(i + 3 if i else 0), width=2), marker=dict(size=6)))
    fig = go.Figure(traces)
    gap = first.meta["eps_gap"]
    fig.update_layout(**phase_layout([Phase(1e-4, gap, "gap condition holds"), Phase(gap, 0.5, "theorem silent")],
                                     logx=True))
    return base_layout(fig, xaxis_title=EPS_TITLE, yaxis_title="spectral-norm error", logx=True, logy=True,
                       height=520)


# --------------------------------------------------------------------------- explore


def _noise_step(phi_deg: float, show_first_order: bool) -> SliderStep:
    tr = noise_sweep(float(phi_deg))
    keys = ("true", "bound", "eymn") + (("first_order",) if show_first_order else ())
    return SliderStep(f"{phi_deg:g}°", _lines(tr["eps"], tr, keys),
                      _boundary_layout(tr.meta["eps_gap"], "gap condition 4||E|| = min(λ_n, δ) →"))


def noise_figure(phi_deg: float = 90.0, show_first_order: bool = False) -> go.Figure:
    """Live twin of the noise slider figure: errors against eps for one alignment angle."""
    phi_deg = check_in_range(phi_deg, "phi_deg", 0.0, 90.0, closed=(True, True))
    if not isinstance(show_first_order, (bool, np.bool_)):
        raise ValueError(f"show_first_order must be a bool, got {show_first_order!r}")
    step = _noise_step(phi_deg, show_first_order)
    fig = go.Figure(step.traces)
    fig.update_layout(**step.layout)
    return base_layout(fig, title=f"Alignment φ = {phi_deg:g}° (0° = all noise in the kept subspace)",
                       xaxis_title=EPS_TITLE, yaxis_title="spectral-norm error", logx=True, logy=True, height=470)


PHI_VALUES = (0, 15, 30, 45, 60, 75, 90)


def noise_slider_figure(show_first_order: bool = False) -> go.Figure:
    """Static twin: one frame per alignment angle phi."""
    steps = [_noise_step(phi, bool(show_first_order)) for phi in PHI_VALUES]
    return slider_figure(steps, slider_label="alignment φ", active=len(steps) - 1, logx=True, logy=True,
                         xaxis_title=EPS_TITLE, yaxis_title="spectral-norm error")


def _designer_step(gap: float, lam_min: float, decay: float) -> SliderStep:
    tr = designer_sweep(float(gap), float(lam_min), float(decay))
    return SliderStep(f"{gap:g}", _lines(tr["norm_e"], tr, ("true", "term_full", "term_cut", "bound", "eymn")),
                      _boundary_layout(tr.meta["limit"], "theorem stops applying →"))


def designer_figure(gap: float = 1.0, lam_min: float = 1.0, decay: float = 0.0) -> go.Figure:
    """Live twin of the spectrum designer."""
    step = _designer_step(gap, lam_min, decay)  # designer_sweep validates the arguments
    fig = go.Figure(step.traces)
    fig.update_layout(**step.layout)
    return base_layout(fig, title=f"δ = {gap:g}, λ_n = {lam_min:g}, top decay exponent {decay:g}",
                       xaxis_title="noise norm ||E||", yaxis_title="spectral-norm error",
                       logx=True, logy=True, height=470)


GAP_VALUES = (0.01, 0.03, 0.1, 0.3, 1.0, 3.0, 10.0, 30.0, 100.0)


def designer_slider_figure(lam_min: float = 1.0, decay: float = 0.0) -> go.Figure:
    """Static twin of the spectrum designer: one frame per truncation gap delta_{n-p}."""
    steps = [_designer_step(g, lam_min, decay) for g in GAP_VALUES]
    return slider_figure(steps, slider_label="gap δ_{n-p}", active=GAP_VALUES.index(0.1), logx=True, logy=True,
                         fixed_axes=False, xaxis_title="noise norm ||E||", yaxis_title="spectral-norm error")


EXPLORER_NOISE = Explorer("08", "noise_alignment", noise_figure, {
    "phi_deg": Slider("alignment φ (degrees)", list(PHI_VALUES), 90),
    "show_first_order": Toggle("show first-order estimate", False),
}, description="errors against the noise level for a mix of aligned and isotropic noise")

EXPLORER_SPECTRUM = Explorer("08", "spectrum_designer", designer_figure, {
    "gap": Slider("gap δ_{n-p}", list(GAP_VALUES), 0.1),
    "lam_min": Slider("smallest eigenvalue λ_n", [0.1, 0.3, 1.0, 3.0, 10.0], 1.0),
    "decay": Slider("growth exponent of the top eigenvalues", [0.0, 0.5, 1.0, 2.0], 0.0),
}, description="which term of Theorem 2.1 dominates, and where it stops applying")


# --------------------------------------------------------------------------- the claims


def sqrt_n_figure(ex: dict[str, Any] | None = None, exact: dict[str, Any] | None = None) -> go.Figure:
    """Theorem 2.1, EYM-N and the true error against n on the synthetic spectrum (log-log): the
    first-order estimate (median and range over seeds) up to n = 64000, exact dense values at
    small n, and the predicted crossover n*."""
    ex = sqrt_n_experiment() if ex is None else ex
    exact = exact_synthetic_errors() if exact is None else exact
    ns = ex["ns"]
    med, lo, hi = np.median(ex["true"], axis=1), ex["true"].min(axis=1), ex["true"].max(axis=1)
    # The bounds at small n use the measured ||E|| of the dense draws, at large n 2 sqrt(n).
    all_n = np.concatenate([exact["ns"], ns])
    order = np.argsort(all_n)
    bound = np.concatenate([np.median(exact["bound"], axis=1), ex["bound"]])[order]
    eymn = np.concatenate([np.median(exact["eymn"], axis=1), ex["eymn"]])[order]
    fig = go.Figure([
        go.Scatter(x=all_n[order], y=bound, name=NAMES["bound"], mode="lines+markers",
                   line=dict(color=_COLOR["bound"], width=3)),
        go.Scatter(x=all_n[order], y=eymn, name=NAMES["eymn"], mode="lines+markers",
                   line=dict(color=_COLOR["eymn"], dash="dash", width=3)),
        go.Scatter(x=ns, y=med, name="true error (first-order estimate, median)", mode="lines+markers",
                   line=dict(color=_COLOR["true"], width=2.5),
                   error_y=dict(type="data", symmetric=False, array=hi - med, arrayminus=med - lo, thickness=1.2)),
        go.Scatter(x=exact["ns"], y=np.median(exact["true"], axis=1), name="true error (dense eigh, median)",
                   mode="markers", marker=dict(color=_COLOR["true"], size=10, symbol="diamond-open", line_width=2)),
    ])
    fig.update_layout(**_boundary_layout(ex["n_star"], f"predicted crossover n* ≈ {ex['n_star']:.0f} →", 0.5))
    base_layout(fig, xaxis_title="matrix size n", yaxis_title="spectral-norm error or bound",
                logx=True, logy=True, height=480)
    # a fixed range: plotly's autorange would stretch the axis to fit the crossover label
    fig.update_xaxes(range=[np.log10(0.8 * all_n.min()), np.log10(1.25 * all_n.max())])
    return fig


_SHORT = {"laplacian": "2-D Laplacian", "kernel": "exp. kernel", "digits": "digits cov."}


def structured_figure(names: tuple[str, ...] = ("laplacian", "kernel", "digits"), seeds: Any = (0, 1, 2, 3, 4)) -> go.Figure:
    """Bound / true error for Theorem 2.1 and EYM-N on the structured matrices, every (seed, noise
    level) a point, with the paper's 10x and 100x marks."""
    fig = go.Figure()
    for key, label, color in (("bound_over_true", NAMES["bound"], _COLOR["bound"]),
                              ("eymn_over_true", NAMES["eymn"], _COLOR["eymn"])):
        xs, ys, text = [], [], []
        for name in names:
            ex = structured_experiment(name, seeds)
            vals = ex[key]
            xs += [_SHORT[name] + f"<br>n = {structured_matrix(name).n}"] * vals.size
            ys += list(vals.ravel())
            text += [f"σ = {lv:g} Δ_max" for _ in range(vals.shape[0]) for lv in ex["levels"]]
        fig.add_trace(go.Box(x=xs, y=ys, name=label, marker_color=color, boxpoints="all", jitter=0.4,
                             pointpos=0, text=text, hovertemplate="%{y:.3g}× (%{text})<extra></extra>"))
    # The paper's marks, as shapes in data units and labels in log10 units (plotly's log-axis rule).
    marks = ((10, "paper: Theorem 2.1 within ~10×"), (100, "paper: EYM-N 100–1000× off"))
    fig.update_layout(
        boxmode="group",
        shapes=[dict(type="line", xref="paper", x0=0, x1=1, yref="y", y0=v, y1=v,
                     line=dict(color="#555", dash="dot", width=1.5)) for v, _ in marks],
        annotations=[dict(xref="paper", x=0.0, xanchor="left", yref="y", y=np.log10(v), yanchor="bottom",
                          text=note, showarrow=False, font=dict(size=11, color="#555")) for v, note in marks])
    return base_layout(fig, yaxis_title="bound / true error", logy=True, height=480)
