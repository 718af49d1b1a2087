"""Chapter 24: the experiments, figures, live explorers and claims for kernel bilevel optimization.
The estimator, the solver and the baselines are in :mod:`optbook.bilevel.kernel_bilevel`."""
from __future__ import annotations

from functools import lru_cache

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from ..claims import Criterion, Measured, claim
from ..core import Tuning, check_int, check_positive, grid_search, loglog_slope
from ..viz import SliderStep, base_layout, color_for, frame_note, slider_figure
from ..viz.style import line_style
from ..widgets import Explorer, Slider
from .kernel_bilevel import (IVData, KernelBilevelIV, Quadratic, features, gradient_descent, make_iv_data, ols,
                             structural_coordinates, true_omega, two_stage_least_squares)

# --------------------------------------------------------------------------- the setting

#: The paper's inner regularization (official code) and the CPU-scale kernel width of the card
#: (sigma = 0.2 makes small-n Gram matrices nearly diagonal).
LAM, SIGMA = 0.01, 1.0
#: Sample sizes n = m of the sweep, the reference's size (>= 8 max n), and the seeds (fixed before the
#: full run). The reference uses its own seed, independent of every sweep draw.
SIZES, FAST_SIZES = (50, 100, 200, 400), (50, 100, 200)
N_REF, FAST_N_REF = 3200, 1600
SEEDS, FAST_SEEDS = tuple(range(10)), tuple(range(4))
REF_SEED = 10_000
#: The point where value and gradient errors are measured (the card's omega_0 = 0.5 * 1).
OMEGA0 = 0.5 * np.ones(4)
#: Thresholds fixed before the full run: the paper's rate is n^(-1/2); a 4-point least-squares fit
#: over one decade is allowed 0.1 of slack. The GD solution's population gradient is measured
#: against a reference whose own error (about n_ref^(-1/2)) flattens the curve's end: half the rate.
RATE_THRESHOLD, STATIONARITY_THRESHOLD = -0.4, -0.25


@lru_cache(maxsize=16)
def reference(n_ref: int = N_REF, sigma: float = SIGMA, lam: float = LAM, seed: int = REF_SEED) -> Quadratic:
    """The 'population' objective F: the exact-kernel plug-in on n_ref = m_ref samples of its own seed
    (the paper's truth uses 26 000 random features on 10^6 samples; out of reach here)."""
    n_ref = check_int(n_ref, "n_ref", minimum=2)
    return KernelBilevelIV(make_iv_data(n_ref, n_ref, rng=check_int(seed, "seed")), lam, sigma).quadratic


@lru_cache(maxsize=4096)
def plugin(n: int, seed: int, sigma: float = SIGMA, lam: float = LAM, confounding: float = 0.5) -> KernelBilevelIV:
    """The plug-in problem on n = m samples drawn with ``seed``."""
    return KernelBilevelIV(make_iv_data(n, n, confounding=confounding, rng=seed), lam, sigma)


def reference_gap(n_ref: int = N_REF) -> float:
    """An estimate of the reference's own gradient error at omega_0: the gap between two independent
    references of the same size (seeds REF_SEED and REF_SEED + 1), divided by sqrt(2)."""
    n_ref = check_int(n_ref, "n_ref", minimum=2)
    gap = reference(n_ref).grad(OMEGA0) - reference(n_ref, seed=REF_SEED + 1).grad(OMEGA0)
    return float(np.linalg.norm(gap) / np.sqrt(2))


def naive_quadratic(n: int, seed: int, confounding: float = 0.5) -> Quadratic:
    """The single-level objective of naive least squares on the outer sample, (1/2m)||phi(t~) w - y~||^2:
    the inner function h replaced by phi(t)^T w itself (no instrument): the control of the claims."""
    d = make_iv_data(n, n, confounding=confounding, rng=seed)
    Phi, y = features(d.t_out), d.y_out
    return Quadratic(Phi.T @ Phi / d.m, Phi.T @ y / d.m, float(y @ y / (2 * d.m)))


#: The rate claim's control: the inner sample frozen at this size while the outer sample grows (m = n).
FROZEN_N = 50


@lru_cache(maxsize=4096)
def variant_quadratic(variant: str, n: int, seed: int) -> Quadratic:
    """The plug-in objective of one variant of the estimator on the draw (n, seed), for the rate claim's
    control and for the table of what its criterion can and cannot tell apart:

    - ``"method"``: the estimator of the claim (n = m);
    - ``"frozen_inner"``: the inner sample frozen at FROZEN_N points, the outer one grows (m = n);
    - ``"frozen_outer"``: the outer sample frozen at FROZEN_N points, the inner one grows;
    - ``"sqrt_outer"``: the outer sample grows like m = 7 sqrt(n) (the bound then guarantees only n^(-1/4));
    - ``"no_split"``: the same n samples serve as inner and outer data (the theory assumes them independent);
    - ``"penalty_lambda_I"``: inner system K + lam I instead of K + n lam I;
    - ``"naive"``: the confounded naive least-squares objective (no instrument)."""
    n, seed = check_int(n, "n", minimum=2), check_int(seed, "seed")
    if variant == "method":
        return plugin(n, seed).quadratic
    if variant == "naive":
        return naive_quadratic(n, seed)
    if variant == "penalty_lambda_I":
        return KernelBilevelIV(make_iv_data(n, n, rng=seed), LAM / n, SIGMA).quadratic
    if variant == "no_split":
        d = make_iv_data(n, n, rng=seed)
        d = IVData(d.x_out, d.t_out, d.x_out, d.t_out, d.y_out, d.omega_star, d.eta)
        return KernelBilevelIV(d, LAM, SIGMA).quadratic
    sizes = {"frozen_inner": (FROZEN_N, n), "frozen_outer": (n, FROZEN_N),
             "sqrt_outer": (n, int(round(7 * np.sqrt(n))))}
    if variant not in sizes:
        raise ValueError(f"variant must be one of {VARIANTS}, got {variant!r}")
    return KernelBilevelIV(make_iv_data(*sizes[variant], rng=seed), LAM, SIGMA).quadratic


VARIANTS = ("method", "frozen_inner", "frozen_outer", "sqrt_outer", "no_split", "penalty_lambda_I", "naive")


def errors(n: int, seed: int, ref: Quadratic, naive: bool = False, sigma: float = SIGMA,
           lam: float = LAM, variant: str | None = None) -> tuple[float, float]:
    """|F_hat(w0) - F(w0)| and ||grad F_hat(w0) - grad F(w0)|| for one draw (``naive``: the OLS objective;
    ``variant``: one of VARIANTS at the default sigma and lambda)."""
    if variant is not None:
        q = variant_quadratic(variant, n, seed)
    else:
        q = naive_quadratic(n, seed) if naive else plugin(n, seed, sigma, lam).quadratic
    return abs(q.value(OMEGA0) - ref.value(OMEGA0)), float(np.linalg.norm(q.grad(OMEGA0) - ref.grad(OMEGA0)))


@lru_cache(maxsize=4096)
def gd_solution(n: int, seed: int, sigma: float = SIGMA, lam: float = LAM):
    """Armijo gradient descent on F_hat from omega = 0 (the paper's solver and stopping rule)."""
    return gradient_descent(plugin(n, seed, sigma, lam), np.zeros(4), tol=1e-5)


def error_sweep(sizes=SIZES, seeds=SEEDS, n_ref: int = N_REF, sigma: float = SIGMA, lam: float = LAM,
                naive: bool = False, ref_seed: int = REF_SEED, variant: str | None = None) -> dict[str, np.ndarray]:
    """Value and gradient errors at omega_0 for every size (rows) and seed (columns)."""
    ref = reference(check_int(n_ref, "n_ref", minimum=2), check_positive(sigma, "sigma"), check_positive(lam, "lam"),
                    check_int(ref_seed, "ref_seed"))
    if variant is not None and variant not in VARIANTS:
        raise ValueError(f"variant must be one of {VARIANTS}, got {variant!r}")
    out = np.array([[errors(n, s, ref, naive, sigma, lam, variant) for s in seeds] for n in sizes])
    return {"sizes": np.array(sizes), "value": out[..., 0], "grad": out[..., 1]}


def variant_slopes(fast: bool = False) -> list[dict]:
    """The rate claim's two slopes (median gradient and value errors against n, same sizes, seeds and
    reference as the claim) for every variant of VARIANTS, and whether the claim's criterion holds; and the
    stationarity claim's slope (median ||grad F_ref|| at the variant's minimum-norm minimizer, the limit of
    GD from omega = 0) and whether its criterion holds."""
    sizes, seeds, n_ref = (FAST_SIZES, FAST_SEEDS, FAST_N_REF) if fast else (SIZES, SEEDS, N_REF)
    ref = reference(n_ref)
    rows = []
    for v in VARIANTS:
        sw = error_sweep(sizes, seeds, n_ref, variant=v)
        sg = loglog_slope(sw["sizes"], np.median(sw["grad"], axis=1))
        sv = loglog_slope(sw["sizes"], np.median(sw["value"], axis=1))
        st = loglog_slope(sizes, [np.median([np.linalg.norm(ref.grad(variant_quadratic(v, n, s).minimizer()))
                                             for s in seeds]) for n in sizes])
        rows.append({"variant": v, "slope_grad": sg, "slope_value": sv,
                     "meets": bool(sg <= RATE_THRESHOLD and sv <= RATE_THRESHOLD),
                     "slope_stationarity": st, "meets_stationarity": bool(st <= STATIONARITY_THRESHOLD)})
    return rows


def _per_seed_slopes(sizes, table) -> np.ndarray:
    return np.array([loglog_slope(sizes, table[:, j]) for j in range(table.shape[1])])


# --------------------------------------------------------------------------- claims


@claim("24", "Plug-in value and gradient errors shrink at least like n^(-1/2)", kind="reproduction",
       paper="Theorems (generalization of KBO): sup_omega |F_hat - F| and sup_omega ||grad F_hat - grad F|| are "
             "O(1/sqrt(m) + 1/sqrt(n)) with high probability; on the synthetic IV task the measured errors "
             "follow or beat the -1/2 slope on log-log axes (n = m from 100 to 5000, 50 simulations)",
       expect="IV data of the official code (p = 3, d = 4, confounding 0.5), lambda = 0.01, Gaussian kernel of "
              "width 1; errors at omega_0 = 0.5*1 against an exact-kernel reference on n_ref = m_ref = 3200 "
              "samples of an independent seed; n = m in {50, 100, 200, 400}, 10 seeds each: the log-log "
              "least-squares slope of the median error against n is <= -0.4 for the gradient and for the value "
              "(the paper's -1/2 with 0.1 of slack for a 4-point fit over one decade); fast mode: n up to 200, "
              "4 seeds, n_ref = 1600. Premise (added after the first full run, disclosed): the reference resolves "
              "the curve, i.e. its own gradient error, estimated by the gap between two independent references "
              "of that size (seeds 10000 and 10001) divided by sqrt(2), is below the smallest median error "
              "measured. Disclosures (referee): -0.4 is the card's pass rule, written by a prototype author who had "
              "measured a slope of about -0.9; the thresholds were written before this chapter's first full run but "
              "first committed, with the code, after it, so the history cannot show the order. The criterion is "
              "one-sided and loose at these sizes: the error is dominated by a 1/n term of the inner sample, so "
              "variants the bound does not cover also meet it (outer sample frozen at 50 points, outer sample "
              "growing like 7 sqrt(n), inner and outer samples shared; variant_slopes() measures them)",
       control="the inner sample frozen at 50 points while the outer sample grows (m = n), against the same "
               "reference: the plug-in's target is unchanged and only the growth of the nonparametric inner "
               "sample, the subject of the bound, is removed (referee's change: the author's control, the naive "
               "OLS objective, failed only because it estimates a different objective; it still fails, "
               "see variant_slopes())",
       reproduces=True, name="rate")
def claim_rate(fast: bool = False, control: bool = False) -> Measured:
    sizes, seeds, n_ref = (FAST_SIZES, FAST_SEEDS, FAST_N_REF) if fast else (SIZES, SEEDS, N_REF)
    sw = error_sweep(sizes, seeds, n_ref, variant="frozen_inner" if control else "method")
    med_g, med_v = np.median(sw["grad"], axis=1), np.median(sw["value"], axis=1)
    per_g = _per_seed_slopes(sw["sizes"], sw["grad"])
    values = {"slope_grad": loglog_slope(sw["sizes"], med_g), "slope_value": loglog_slope(sw["sizes"], med_v),
              "slope_grad_min": float(per_g.min()), "slope_grad_max": float(per_g.max()),
              "grad_err_first": float(med_g[0]), "grad_err_last": float(med_g[-1]),
              "value_err_first": float(med_v[0]), "value_err_last": float(med_v[-1]),
              "reference_gap": reference_gap(n_ref)}
    # Premise: the reference resolves the curve (its own error is below the smallest error measured).
    resolved = values["reference_gap"] < float(np.median(error_sweep(sizes, seeds, n_ref)["grad"], axis=1)[-1])
    return Measured(values, criteria=[Criterion("slope_grad", "<=", RATE_THRESHOLD),
                                      Criterion("slope_value", "<=", RATE_THRESHOLD)],
                    seeds=seeds, precondition=bool(resolved), details=sw,
                    summary=f"slopes: gradient {values['slope_grad']:.2f} (per seed {per_g.min():.2f} to "
                            f"{per_g.max():.2f}), value {values['slope_value']:.2f}")


@claim("24", "Gradient descent on the plug-in objective is nearly stationary for the population one",
       kind="reproduction",
       paper="Consequence of the uniform gradient bound: gradient-based methods on F_hat reach points whose "
             "population gradient ||grad F(omega_T)|| is O(1/sqrt(m) + 1/sqrt(n)); the paper's figure shows "
             "||grad F(omega_T)|| and min_i ||grad F(omega_i)|| following the -1/2 slope",
       expect="same data, sizes, seeds and reference as the rate claim; Armijo GD from omega = 0 (eta_0 = 1, "
              "shrink 0.5, c = 1e-4, stop at ||grad F_hat|| <= 1e-5): the log-log slope of the median "
              "||grad F_ref(omega_T)|| against n is <= -0.25 (half the paper's rate: the reference's own error, "
              "about n_ref^(-1/2), sets a floor under the largest n); the same premise as the rate claim (added "
              "after the first full run). Disclosures (referee): the threshold was committed with the code after "
              "the first full run (the history cannot show the order), and it is loose: the minimizers of variants "
              "the bound does not cover (outer sample frozen at 50 or growing like 7 sqrt(n), no sample split) also "
              "meet it (variant_slopes())",
       control="the GD solution replaced by the confounded OLS estimate (least squares of y~ on phi(t~)) on "
               "the same samples",
       reproduces=True, name="stationarity")
def claim_stationarity(fast: bool = False, control: bool = False) -> Measured:
    sizes, seeds, n_ref = (FAST_SIZES, FAST_SEEDS, FAST_N_REF) if fast else (SIZES, SEEDS, N_REF)
    ref = reference(n_ref)
    if control:
        pts = [[_ols_point(n, s) for s in seeds] for n in sizes]
    else:
        pts = [[gd_solution(n, s).x for s in seeds] for n in sizes]
    gnorm = np.array([[np.linalg.norm(ref.grad(w)) for w in row] for row in pts])
    dist = np.array([[np.linalg.norm(structural_coordinates(w - ref.minimizer())) for w in row] for row in pts])
    med = np.median(gnorm, axis=1)
    values = {"slope": loglog_slope(sizes, med), "grad_first": float(med[0]), "grad_last": float(med[-1]),
              "dist_first": float(np.median(dist[0])), "dist_last": float(np.median(dist[-1]))}
    return Measured(values, criteria=[Criterion("slope", "<=", STATIONARITY_THRESHOLD)], seeds=seeds,
                    precondition=bool(reference_gap(n_ref) < med[-1]), details={"sizes": np.array(sizes), "grad_norm": gnorm, "dist": dist},
                    summary=f"slope {values['slope']:.2f}; median ||grad F(w_T)|| {med[0]:.3g} -> {med[-1]:.3g}")


def _ols_point(n: int, seed: int) -> np.ndarray:
    d = make_iv_data(n, n, rng=seed)
    return ols(d.t_out, d.y_out)


@claim("24", "Three gradients of the plug-in objective agree: closed form, functional adjoint, autodiff",
       kind="identity",
       expect="on 3 random draws (n = 60, m = 40) and random omega: the adjoint-formula gradient and the torch "
              "autodiff gradient of F_hat equal A_hat omega - B_hat to a relative 1e-8 (the paper's equivalence "
              "of the adjoint estimator and the gradient of the plug-in value)",
       name="gradients_agree")
def claim_gradients_agree(fast: bool = False) -> Measured:
    gaps = [gradient_gaps(seed) for seed in range(3)]
    worst = float(max(max(g) for g in gaps))
    return Measured({"max_relative_gap": worst}, holds=bool(worst <= 1e-8),
                    summary=f"largest relative gap {worst:.1e}")


def gradient_gaps(seed: int) -> tuple[float, float]:
    """Relative gaps of the adjoint and the autodiff gradients to the closed form, on one draw."""
    import torch

    P = KernelBilevelIV(make_iv_data(60, 40, rng=check_int(seed, "seed")), LAM, SIGMA)
    w = np.random.default_rng([seed, 1]).normal(size=4)
    exact = P.grad(w)
    wt = torch.tensor(w, requires_grad=True)
    Kreg = torch.tensor(P.K) + P.data.n * P.lam * torch.eye(P.data.n, dtype=torch.float64)
    h_out = torch.tensor(P.K_out) @ torch.linalg.solve(Kreg, torch.tensor(P.Phi) @ wt)
    ((h_out - torch.tensor(P.data.y_out)) ** 2).mean().mul(0.5).backward()
    scale = np.linalg.norm(exact)
    return (float(np.linalg.norm(P.adjoint_grad(w) - exact) / scale),
            float(np.linalg.norm(wt.grad.numpy() - exact) / scale))


# --------------------------------------------------------------------------- tuning (IV accuracy)

#: Structural error: RMS of phi(t)^T (w - w*) over the treatments of a fixed test sample.
_T_TEST = make_iv_data(2000, 2, rng=20_000).t
TUNING_SEEDS = (100, 101)
TUNING_N = 400
GRIDS = {"KBO (GD on F_hat)": {"sigma": (0.5, 1.0, 2.0), "lam": (1e-5, 1e-4, 1e-3)},
         "OLS (ridge)": {"ridge": (0.0, 1e-5, 1e-4, 1e-3, 1e-2, 3e-2, 0.1, 0.3, 1.0)}}


def structural_error(omega) -> float:
    """RMS over test treatments of phi(t)^T (omega - omega*): the error in the structural function."""
    return float(np.sqrt(np.mean((features(_T_TEST) @ (np.asarray(omega) - true_omega())) ** 2)))


def _fit(method: str, n: int, seed: int, confounding: float = 0.5, **setting) -> np.ndarray:
    d = make_iv_data(n, n, confounding=confounding, rng=seed)
    if method.startswith("KBO"):
        return gradient_descent(KernelBilevelIV(d, setting["lam"], setting["sigma"]), np.zeros(4)).x
    if method.startswith("OLS"):
        return ols(d.t_out, d.y_out, ridge=setting.get("ridge", 0.0))
    return two_stage_least_squares(d.x, d.t, d.x_out, d.y_out)


@lru_cache(maxsize=8)
def tunings(confounding: float = 0.5) -> dict[str, Tuning]:
    """KBO's (sigma, lambda) and OLS's ridge, each a 9-setting grid scored by the structural error at
    n = m = 400, median over two held-out seeds."""
    return {m: grid_search(m, lambda seed, m=m, **st: structural_error(_fit(m, TUNING_N, seed, confounding, **st)),
                           g, TUNING_SEEDS) for m, g in GRIDS.items()}


def accuracy_table(seeds=SEEDS, confounding: float = 0.5) -> list[dict]:
    """Structural error at n = m = 400 of each method at its tuned setting (and untuned 2SLS), median over seeds."""
    rows = []
    tun = tunings(confounding)
    for m in (*GRIDS, "2SLS (linear first stage)"):
        setting = tun[m].best if m in tun else {}
        errs = [structural_error(_fit(m, TUNING_N, s, confounding, **setting)) for s in seeds]
        rows.append({"method": m, "tuned setting": ", ".join(f"{k}={v:g}" for k, v in setting.items()) or "-",
                     "structural error (median)": f"{np.median(errs):.4f}",
                     "range over seeds": f"{min(errs):.4f} to {max(errs):.4f}"})
    return rows


# --------------------------------------------------------------------------- figures

SIGMAS = (0.5, 1.0, 2.0)
EXPLORE_SIZES = (25, 50, 100, 200, 400)
EXPLORE_SEEDS = tuple(range(6))
EXPLORE_N_REF = 2400


@lru_cache(maxsize=8)
def _rate_data(sigma: float) -> dict:
    return error_sweep(EXPLORE_SIZES, EXPLORE_SEEDS, EXPLORE_N_REF, sigma=sigma)


def rate_traces(sigma: float) -> list:
    """Median value and gradient errors against n with +-2 s.e. bands and a -1/2 guide line."""
    sw = _rate_data(sigma)
    n = sw["sizes"]
    out = []
    for i, (key, name) in enumerate((("grad", "gradient error ||grad F_hat - grad F||"),
                                     ("value", "value error |F_hat - F|"))):
        tab = sw[key]
        mean, se = tab.mean(1), tab.std(1, ddof=1) / np.sqrt(tab.shape[1])
        lo, hi = np.maximum(mean - 2 * se, mean * 0.05), mean + 2 * se
        c = color_for(i)
        out.append(go.Scatter(x=np.concatenate([n, n[::-1]]), y=np.concatenate([hi, lo[::-1]]), fill="toself",
                              line=dict(width=0), fillcolor=c, opacity=0.18, hoverinfo="skip", showlegend=False))
        out.append(go.Scatter(x=n, y=mean, name=name, mode="lines+markers", **line_style(i)))
        guide = mean[0] * (n / n[0]) ** -0.5
        out.append(go.Scatter(x=n, y=guide, name="slope -1/2" if i == 0 else None, showlegend=i == 0,
                              mode="lines", line=dict(color="#777", dash="dot", width=1.5)))
    return out


def rate_slope(sigma: float) -> float:
    """Log-log slope of the explorer's mean gradient error against n for one kernel width."""
    sw = _rate_data(check_positive(sigma, "sigma"))
    return loglog_slope(sw["sizes"], sw["grad"].mean(1))


def _rate_note(sigma: float) -> str:
    sw = _rate_data(sigma)
    s = [loglog_slope(sw["sizes"], sw[k].mean(1)) for k in ("grad", "value")]
    return f"sigma = {sigma:g}: slopes gradient {s[0]:.2f}, value {s[1]:.2f}"


def rate_slider_figure() -> go.Figure:
    """Static twin of the rate explorer: one frame per kernel width."""
    steps = [SliderStep(f"{s:g}", rate_traces(s), frame_note(_rate_note(s))) for s in SIGMAS]
    return slider_figure(steps, slider_label="kernel width sigma", active=1, logx=True, logy=True,
                         xaxis_title="samples n = m", yaxis_title="error at omega_0 (mean, +-2 s.e.)",
                         title="Generalization errors of the plug-in objective against the sample size")


def rate_figure(sigma: float = SIGMA) -> go.Figure:
    """Live twin of the rate explorer."""
    sigma = check_positive(sigma, "sigma")
    if sigma not in SIGMAS:
        raise ValueError(f"sigma must be one of {SIGMAS}, got {sigma}")
    for s in SIGMAS:  # the first move computes every width, so that later moves are lookups
        _rate_data(s)
    fig = go.Figure(rate_traces(sigma), layout=frame_note(_rate_note(sigma)))
    return base_layout(fig, logx=True, logy=True, xaxis_title="samples n = m",
                       yaxis_title="error at omega_0", title=f"sigma = {sigma:g}")


CONFOUNDINGS = (0.0, 0.5, 2.0, 8.0)
IV_N = 400


@lru_cache(maxsize=8)
def _iv_data(confounding: float) -> dict:
    d = make_iv_data(IV_N, IV_N, confounding=confounding, rng=7)
    best = tunings(0.5)["KBO (GD on F_hat)"].best
    w_kbo = gradient_descent(KernelBilevelIV(d, best["lam"], best["sigma"]), np.zeros(4)).x
    return {"t": d.t_out, "y": d.y_out, "eta": d.eta[d.n:], "ols": ols(d.t_out, d.y_out), "kbo": w_kbo,
            "errs": (structural_error(ols(d.t_out, d.y_out)), structural_error(w_kbo))}


def iv_traces(confounding: float) -> list:
    """Outcome against treatment, coloured by the confounder, with the true structural curve and the fits."""
    D = _iv_data(confounding)
    grid = np.linspace(-8, 8, 300)
    F = features(grid)
    return [go.Scatter(x=D["t"], y=D["y"], mode="markers", name="outer samples (colour: confounder eta)",
                       marker=dict(size=5, color=D["eta"], colorscale="RdBu", cmin=-1, cmax=1, opacity=0.7)),
            go.Scatter(x=grid, y=F @ true_omega(), name="true structural function", mode="lines",
                       line=dict(color="#222", width=3)),
            go.Scatter(x=grid, y=F @ D["ols"], name="OLS (confounded)", mode="lines", **line_style(1)),
            go.Scatter(x=grid, y=F @ D["kbo"], name="KBO (tuned)", mode="lines", **line_style(0))]


def iv_errors(confounding: float) -> tuple[float, float]:
    """Structural errors (OLS, tuned KBO) of the IV explorer's draw at one confounding strength."""
    return _iv_data(check_positive(confounding, "confounding", allow_zero=True))["errs"]


def _iv_note(confounding: float) -> str:
    e = _iv_data(confounding)["errs"]
    return f"structural error: OLS {e[0]:.3f}, KBO {e[1]:.3f}"


def iv_slider_figure() -> go.Figure:
    """Static twin of the IV explorer: one frame per confounding strength."""
    steps = [SliderStep(f"{c:g}", iv_traces(c), frame_note(_iv_note(c))) for c in CONFOUNDINGS]
    fig = slider_figure(steps, slider_label="confounding (coefficient of eta in y)", active=1, height=520,
                        xaxis_title="treatment t", yaxis_title="outcome y",
                        title="Why instruments: the fits of the structural function as confounding grows")
    return fig.update_xaxes(range=[-8, 8])


def iv_figure(confounding: float = 0.5) -> go.Figure:
    """Live twin of the IV explorer."""
    c = check_positive(confounding, "confounding", allow_zero=True)
    if c not in CONFOUNDINGS:
        raise ValueError(f"confounding must be one of {CONFOUNDINGS}, got {c}")
    for value in CONFOUNDINGS:  # the first move computes every frame
        _iv_data(value)
    fig = go.Figure(iv_traces(c), layout=frame_note(_iv_note(c)))
    base_layout(fig, height=520, xaxis_title="treatment t", yaxis_title="outcome y", title=f"confounding {c:g}")
    return fig.update_xaxes(range=[-8, 8])


LANDSCAPE_SIZES = (25, 100, 400, 1600)


@lru_cache(maxsize=8)
def _landscape(n: int) -> dict:
    P = plugin(n, 3)
    res = gd_solution(n, 3)
    return {"q": P.quadratic, "path": structural_coordinates(res.iterates)}


def _uv_values(q: Quadratic, us, vs) -> np.ndarray:
    """F on the (u, v) plane: omega = pinv(C) (u, v), which has the same F as any omega with C omega = (u, v)."""
    k = np.arange(1, 5)
    C = np.vstack([np.cos(k), np.sin(k)])
    U, V = np.meshgrid(us, vs)
    W = np.column_stack([U.ravel(), V.ravel()]) @ np.linalg.pinv(C).T
    vals = 0.5 * np.einsum("ij,jk,ik->i", W, q.A, W) - W @ q.B + q.c
    return vals.reshape(U.shape)


def landscape_traces(n: int) -> list:
    """Contours of F_hat (filled) and of the reference F (red lines) on the identified plane, each measured from
    its own minimum in steps of 0.03, with the GD path."""
    us, vs = np.linspace(-1.5, 2.5, 45), np.linspace(-1.5, 2.5, 45)
    ref = reference()
    L = _landscape(n)
    z_ref, z_hat = _uv_values(ref, us, vs), _uv_values(L["q"], us, vs)
    star = structural_coordinates(ref.minimizer())
    true = structural_coordinates(true_omega())
    red = [[0, "#c0392b"], [1, "#c0392b"]]
    return [go.Contour(x=us, y=vs, z=z_hat - z_hat.min(), contours=dict(start=0.01, end=0.31, size=0.03),
                       colorscale="Blues", reversescale=True, showscale=False, name=f"F_hat (n = {n})",
                       hoverinfo="skip", opacity=0.8),
            go.Contour(x=us, y=vs, z=z_ref - z_ref.min(), contours=dict(start=0.01, end=0.31, size=0.03,
                                                                         coloring="lines"),
                       colorscale=red, showscale=False, line=dict(width=1.6), name="reference F", hoverinfo="skip"),
            go.Scatter(x=L["path"][:, 0], y=L["path"][:, 1], mode="lines+markers", name="GD path on F_hat",
                       line=dict(color="#222"), marker=dict(size=4)),
            go.Scatter(x=[star[0]], y=[star[1]], mode="markers", name="minimizer of F",
                       marker=dict(symbol="x", size=13, color="#c0392b")),
            go.Scatter(x=[true[0]], y=[true[1]], mode="markers", name="true omega*",
                       marker=dict(symbol="star", size=13, color="#e67e22"))]


def landscape_slider_figure() -> go.Figure:
    """Static twin of the landscape explorer: one frame per sample size."""
    steps = [SliderStep(str(n), landscape_traces(n), frame_note(f"n = m = {n}")) for n in LANDSCAPE_SIZES]
    fig = slider_figure(steps, slider_label="samples n = m", active=0, fixed_axes=False, height=560,
                        xaxis_title="u = sum_k omega_k cos k", yaxis_title="v = sum_k omega_k sin k",
                        title="The plug-in bowl (filled) settles onto the reference bowl (red lines) as n grows")
    return fig.update_layout(xaxis=dict(range=[-1.5, 2.5]), yaxis=dict(range=[-1.5, 2.5]))


def landscape_figure(n: int = 25) -> go.Figure:
    """Live twin of the landscape explorer."""
    n = check_int(n, "n", minimum=1)
    if n not in LANDSCAPE_SIZES:
        raise ValueError(f"n must be one of {LANDSCAPE_SIZES}, got {n}")
    for size in LANDSCAPE_SIZES:  # the first move computes every frame
        _landscape(size)
    fig = go.Figure(landscape_traces(n))
    base_layout(fig, height=560, xaxis_title="u", yaxis_title="v", title=f"n = m = {n}")
    return fig.update_layout(xaxis=dict(range=[-1.5, 2.5]), yaxis=dict(range=[-1.5, 2.5]))


def claim_figure(rate, stationarity) -> go.Figure:
    """The two reproductions' curves: median errors at omega_0 and the GD solutions' population gradient."""
    fig = make_subplots(rows=1, cols=2, horizontal_spacing=0.14)
    n = rate.details["sizes"]
    for i, (key, name) in enumerate((("grad", "gradient error"), ("value", "value error"))):
        fig.add_trace(go.Scatter(x=n, y=np.median(rate.details[key], 1), name=name, **line_style(i)), 1, 1)
    g = stationarity.details["grad_norm"]
    fig.add_trace(go.Scatter(x=n, y=np.median(g, 1), name="||grad F(omega_T)|| of GD on F_hat", **line_style(2)), 1, 2)
    for col, y0 in ((1, float(np.median(rate.details["grad"][0]))), (2, float(np.median(g[0])))):
        fig.add_trace(go.Scatter(x=n, y=y0 * (n / n[0]) ** -0.5, mode="lines", name="slope -1/2",
                                 showlegend=col == 1, line=dict(color="#777", dash="dot")), 1, col)
    base_layout(fig, logx=True, logy=True, height=440,
                title="Full-size claims: errors at omega_0 (left) and GD solutions' population gradient (right)")
    fig.update_xaxes(title_text="samples n = m")
    fig.update_yaxes(title_text="median error at omega_0", row=1, col=1)
    fig.update_yaxes(title_text="median ||grad F(omega_T)||", row=1, col=2)
    return fig


def gd_curves_figure(sizes=(50, 400), seed: int = 0) -> go.Figure:
    """Along Armijo GD on F_hat: the plug-in gradient norm (what the solver sees) and the reference
    gradient norm (what the population sees) per iteration, for two sample sizes."""
    seed = check_int(seed, "seed")
    ref = reference()
    fig, settle = go.Figure(), 0
    for i, n in enumerate(sizes):
        res = gd_solution(check_int(n, "n", minimum=2), seed)
        it = np.arange(len(res.iterates))
        pop = np.linalg.norm(res.iterates @ ref.A.T - ref.B, axis=1)
        fig.add_trace(go.Scatter(x=it, y=res.trace.grad_norm, name=f"||grad F_hat||, n = {n}", **line_style(i)))
        fig.add_trace(go.Scatter(x=it, y=pop, name=f"||grad F|| (reference), n = {n}", mode="lines",
                                 line=dict(color=color_for(i), width=3, dash="dot")))
        settle = max(settle, int(np.argmax(pop <= 1.1 * pop[-1])))  # within 10% of its final value
    fig.add_vrect(x0=0, x1=settle, fillcolor="#888", opacity=0.08, line_width=0,
                  annotation_text="optimization phase", annotation_position="top left")
    fig.add_annotation(text="statistical floor: ||grad F|| stops at the generalization error", x=0.98, y=0.08,
                       xref="x domain", yref="y domain", xanchor="right", showarrow=False)
    return base_layout(fig, logy=True, height=460, xaxis_title="GD iteration k", yaxis_title="gradient norm",
                       title="Gradient descent on the plug-in objective: what it sees and what the population sees")


EXPLORER_RATE = Explorer("24", "rate", rate_figure, {"sigma": Slider("kernel width sigma", SIGMAS, SIGMA)},
                         description="Value and gradient errors against n for a kernel width")
EXPLORER_IV = Explorer("24", "iv", iv_figure,
                       {"confounding": Slider("confounding", CONFOUNDINGS, 0.5)},
                       description="OLS and KBO fits of the structural function as confounding grows")
EXPLORER_LANDSCAPE = Explorer("24", "landscape", landscape_figure,
                              {"n": Slider("samples n = m", LANDSCAPE_SIZES, 25, fmt="{}")},
                              description="The plug-in outer objective against the reference as n grows")

GLUE_FORMATS = {
    "rate": {k: "{:.2f}" for k in ("slope_grad", "slope_value", "slope_grad_min", "slope_grad_max")}
    | {k: "{:.3g}" for k in ("grad_err_first", "grad_err_last", "value_err_first", "value_err_last",
                             "reference_gap")},
    "stationarity": {"slope": "{:.2f}"} | {k: "{:.3g}" for k in ("grad_first", "grad_last", "dist_first", "dist_last")},
    "gradients_agree": {"max_relative_gap": "{:.0e}"},
}

