"""Chapter 23: experiments, figures, live explorers and claims for PBGD-Free. The methods are in
:mod:`optbook.bilevel.pbgd_free_methods`, the problems in :mod:`optbook.bilevel.problems`.
"""
from __future__ import annotations

import copy
from functools import lru_cache

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from ..claims import Criterion, Measured, claim
from ..core import Trace, Tuning, check_choice, check_int, check_real, grid_search, loglog_slope
from ..viz import Phase, SliderStep, base_layout, frame_note, phase_layout, slider_figure
from ..viz.convergence import convergence_traces
from ..widgets import Explorer, Slider
from .pbgd_free_methods import aid, implicit_term, pbgd, pbgd_free, penalty_term
from .problems import FlatnessToy, QuadraticBilevel, RepresentationProxy

# --------------------------------------------------------------------------- the setting

#: The flatness toy of the claims (fixed before the full run): d_x = 5, d_y = 8, quartic weight
#: c = 0.1, UL condition number 5; every run starts at x0 = 0, y0 = y*(x0).
TOY = dict(dx=5, dy=8, c=0.1, kappa=5.0)
#: The penalty constant of PBGD-Free (the card's value; PBGD-Free's x step does not use it) and of
#: the PBGD shown in the figures.
GAMMA = 10.0
#: "Solved": ||x - x*|| <= TOL.
TOL = 1e-3
METHODS = ("PBGD-Free", "PBGD", "AID")
#: PBGD's penalty constant is tuned too (added by the chapter's referee after the full run: with
#: gamma = 10 alone PBGD's x step is gamma-stiff and the headline ratio was ~30x too flattering):
#: four values of gamma, each with its own 12-setting grid; the claim uses the gamma whose best
#: score on the tuning seeds is lowest. "PBGD" is gamma = 10.
PBGD_GAMMAS = {"PBGD": GAMMA, "PBGD (γ = 1)": 1.0, "PBGD (γ = 0.1)": 0.1, "PBGD (γ = 0.01)": 0.01}
TUNED = METHODS + tuple(PBGD_GAMMAS)[1:]
#: Every method's grid has 4 x 3 = 12 settings: its UL step times its second knob. PBGD gets one
#: exact inner step (eta_z = 1 solves this g in one step) and AID one exact CG step: the cheapest
#: settings the baselines can have here.
GRIDS = {
    "PBGD-Free": {"eta_x": (0.5, 1.0, 1.5, 2.0), "eta_y": (0.3, 0.6, 0.9)},
    "PBGD": {"eta_x": (0.01, 0.02, 0.04, 0.08), "eta_y": (0.3, 0.6, 0.9)},
    "AID": {"eta_x": (0.5, 1.0, 1.5, 2.0), "inner_steps": (1, 2, 3)},
    "PBGD (γ = 1)": {"eta_x": (0.05, 0.1, 0.2, 0.4), "eta_y": (0.3, 0.6, 0.9)},
    "PBGD (γ = 0.1)": {"eta_x": (0.2, 0.4, 0.6, 0.8), "eta_y": (0.1, 0.2, 0.3)},
    "PBGD (γ = 0.01)": {"eta_x": (0.1, 0.2, 0.4, 0.8), "eta_y": (0.05, 0.1, 0.2)},
}
FIXED = {"PBGD-Free": dict(gamma=GAMMA), "AID": dict(eta_y=1.0, cg_steps=1),
         **{m: dict(gamma=g, eta_z=1.0, inner_steps=1) for m, g in PBGD_GAMMAS.items()}}
MAXITER = {"PBGD-Free": 3000, "AID": 3000, **{m: 6000 for m in PBGD_GAMMAS}}
_FUNCS = {"PBGD-Free": pbgd_free, "AID": aid, **{m: pbgd for m in PBGD_GAMMAS}}
TUNING_SEEDS = (100, 101)
CLAIM_SEEDS = (0, 1, 2, 3, 4)
#: Flatness violations of the bias-floor claim (and of the explorer).
DELTAS = (0.05, 0.1, 0.2)
SLIDER_DELTAS = (0.0, 0.02, 0.05, 0.1, 0.2, 0.4)


def _among(value, name: str, values: tuple) -> float:
    """``value`` if it is one of the precomputed ``values`` (the sliders' positions), else ValueError."""
    v = check_real(value, name)
    if v not in values:
        raise ValueError(f"{name} must be one of the precomputed values {values}, got {v}")
    return v


@lru_cache(maxsize=256)
def toy(seed: int, delta: float = 0.0) -> FlatnessToy:
    """The chapter's flatness toy for one seed and violation ``delta``."""
    return FlatnessToy(delta=delta, rng=seed, **TOY)


@lru_cache(maxsize=4096)
def _run(method: str, seed: int, delta: float, stop: str, tol: float, setting: tuple):
    p = toy(seed, delta)
    kw = {**FIXED[method], **dict(setting)}
    return _FUNCS[method](p, np.zeros(p.dx), None, maxiter=MAXITER[method], tol=tol, stop=stop,
                          x_star=p.x_star(), **kw)


def run(method: str, seed: int, delta: float = 0.0, *, stop: str = "x_error", tol: float = TOL, **setting):
    """One run of ``method`` on :func:`toy` (cached): to ``||x - x*|| <= tol`` by default, or until
    the update is below ``tol`` (``stop="step"``)."""
    method, seed, delta = check_choice(method, "method", TUNED), check_int(seed, "seed"), check_real(delta, "delta")
    return _run(method, seed, delta, stop, float(tol), tuple(sorted(setting.items())))


def calls_to_tol(method: str, seed: int, delta: float = 0.0, *, all_oracles: bool = False, **setting) -> float:
    """LL oracle calls (LL plus UL gradient calls when ``all_oracles``) to reach
    ``||x - x*|| <= TOL`` (inf when the run never does)."""
    res = run(method, seed, delta, **setting)
    if not res.success:
        return np.inf
    return float(res.ll_calls + (res.calls.get("grad_f", 0) if all_oracles else 0))


@lru_cache(maxsize=4)
def tunings(fast: bool = False) -> dict[str, Tuning]:
    """Each method's grid search at delta = 0: LL calls to tolerance, median over the held-out
    tuning seeds (one seed in fast mode)."""
    seeds = TUNING_SEEDS[:1] if fast else TUNING_SEEDS
    return {m: grid_search(m, lambda seed, _m=m, **st: calls_to_tol(_m, seed, **st), _grid(m, fast), seeds)
            for m in TUNED}


def _grid(method: str, fast: bool) -> dict:
    """The method's grid; in fast mode its two middle UL steps only (6 settings for every method)."""
    g = dict(GRIDS[method])
    if fast:
        g["eta_x"] = g["eta_x"][1:3]
    return g


def best(method: str, fast: bool = False) -> dict:
    return tunings(fast)[method].best


def best_pbgd(fast: bool = False) -> str:
    """The PBGD entry (one per penalty constant) whose tuned score on the tuning seeds is lowest."""
    t = tunings(fast)
    return min(PBGD_GAMMAS, key=lambda m: t[m].best_score)


# --------------------------------------------------------------------------- claims

@claim("23", "At δ = 0, PBGD-Free reaches the solution with at most 0.2× PBGD's lower-level calls",
       kind="reproduction",
       paper="PBGD-Free needs one lower-level update per iteration and no value function; under "
             "flatness it converges and is more efficient than penalty (PBGD) and implicit-gradient "
             "bilevel methods (abstract and introduction; no number for this comparison)",
       expect="on the flatness toy at δ = 0 (5 held-out seeds; each method tuned on 12 settings on "
              "seeds 100-101), median over seeds of PBGD-Free's LL oracle calls to ||x - x*|| <= 1e-3 "
              "divided by PBGD's is <= 0.2 (the issue's figure: one LL call per iteration against "
              "K + 2 >= 3, plus PBGD's gamma-stiff x step), and divided by AID's is <= 0.5 (AID "
              "spends >= 3 LL calls per iteration). Revised after the full run by the chapter's referee, "
              "threshold unchanged: the first registration fixed PBGD's gamma at 10 (ratio 0.00265); PBGD's "
              "gamma is now tuned too, over {0.01, 0.1, 1, 10} with a 12-setting grid each, the claim using "
              "the gamma with the best tuning score. Reported beside it, not in the criterion: the ratio "
              "to PBGD at gamma = 10, and the ratios counting UL gradient calls too (PBGD-Free makes two "
              "per iteration, PBGD and AID one)",
       control="the same tuned methods on the toy with flatness violated (δ = 0.2): PBGD-Free stalls "
               "at its bias floor and never reaches 1e-3, so its ratio is infinite",
       name="single_loop_saving")
def claim_single_loop_saving(fast: bool = False, control: bool = False) -> Measured:
    seeds = CLAIM_SEEDS[:2] if fast else CLAIM_SEEDS
    delta = 0.2 if control else 0.0
    pb = best_pbgd(fast)
    names = ("PBGD-Free", pb, "AID", "PBGD")
    calls = {m: np.array([calls_to_tol(m, s, delta, **best(m, fast)) for s in seeds]) for m in names}
    total = {m: np.array([calls_to_tol(m, s, delta, all_oracles=True, **best(m, fast)) for s in seeds])
             for m in names}

    def ratio(num, den):
        with np.errstate(invalid="ignore"):
            r = num / den
        return np.where(np.isnan(r), np.inf, r)

    r_pbgd, r_aid = ratio(calls["PBGD-Free"], calls[pb]), ratio(calls["PBGD-Free"], calls["AID"])
    values = {"ratio_pbgd": np.median(r_pbgd), "ratio_pbgd_max": np.max(r_pbgd),
              "ratio_aid": np.median(r_aid), "ratio_aid_max": np.max(r_aid),
              "gamma_pbgd": PBGD_GAMMAS[pb],
              "calls_free": np.median(calls["PBGD-Free"]), "calls_pbgd": np.median(calls[pb]),
              "calls_aid": np.median(calls["AID"]), "calls_pbgd_gamma10": np.median(calls["PBGD"]),
              "ratio_pbgd_gamma10": np.median(ratio(calls["PBGD-Free"], calls["PBGD"])),
              "ratio_pbgd_all": np.median(ratio(total["PBGD-Free"], total[pb])),
              "ratio_aid_all": np.median(ratio(total["PBGD-Free"], total["AID"])),
              "on_edge": any(t.on_edge() for t in tunings(fast).values())}
    return Measured(values, criteria=[Criterion("ratio_pbgd", "<=", 0.2), Criterion("ratio_aid", "<=", 0.5)],
                    seeds=seeds, precondition=bool(np.all(np.isfinite(calls[pb]))),
                    summary=f"PBGD-Free / PBGD (γ = {PBGD_GAMMAS[pb]:g}) calls {values['ratio_pbgd']:.3g}, "
                            f"/ AID {values['ratio_aid']:.3g} (median of {len(seeds)} seeds, delta = {delta})",
                    details=dict(calls=calls, tunings=list(tunings(fast).values())))


def seeds_solved(method: str, delta: float, fast: bool = False) -> int:
    """On how many claim seeds the tuned ``method`` reaches ``||x - x*|| <= TOL`` at ``delta``."""
    seeds = CLAIM_SEEDS[:2] if fast else CLAIM_SEEDS
    return int(sum(np.isfinite(calls_to_tol(method, s, delta, **best(method, fast))) for s in seeds))


def final_error(method: str, seed: int, delta: float, fast: bool = False) -> float:
    """``||x - x*||`` where the tuned method stops: PBGD-Free when its update falls below 1e-10 (it
    has converged to its own fixed point), a baseline when its error falls below 1e-3 of the
    predicted floor (or at its iteration cap, whichever comes first)."""
    tol, stop = (1e-10, "step") if method == "PBGD-Free" else (1e-3 * toy(seed, delta).floor(), "x_error")
    return float(run(method, seed, delta, stop=stop, tol=tol, **best(method, fast)).trace["x_error"][-1])


@claim("23", "Without flatness PBGD-Free stalls at the predicted bias δ‖Q⁻¹Aᵀw‖; PBGD does not",
       kind="identity",
       expect="on the toy with δ in {0.05, 0.1, 0.2} (5 seeds), PBGD-Free's final error divided by the "
              "predicted floor δ||Q^-1 A^T w|| is within 10% of 1 for every (δ, seed) (the card's "
              "figure: the floor is linear in δ with slope exactly this norm), while tuned PBGD's final "
              "error is below 1% of the floor for every (δ, seed) (it is run until 1e-3 of the floor or its cap). "
              "Registered first as a reproduction (with PBGD in PBGD-Free's place as its control); moved to "
              "the identities by the chapter's referee: the floor is PBGD-Free's fixed point in closed form "
              "(x = b up to O((δ/γ)^3), first exercise) and PBGD's figure is its stopping rule, so the check "
              "can fail only on a bug or a run that does not converge",
       name="bias_floor")
def claim_bias_floor(fast: bool = False) -> Measured:
    seeds = CLAIM_SEEDS[:2] if fast else CLAIM_SEEDS
    deltas = DELTAS[-1:] if fast else DELTAS
    ratio = np.array([[final_error("PBGD-Free", s, d, fast) / toy(s, d).floor() for s in seeds] for d in deltas])
    pbgd_rel = np.array([[final_error("PBGD", s, d, fast) / toy(s, d).floor() for s in seeds] for d in deltas])
    values = {"ratio_median": np.median(ratio), "ratio_min": ratio.min(), "ratio_max": ratio.max(),
              "worst_deviation": np.max(np.abs(ratio - 1)), "pbgd_rel_max": pbgd_rel.max()}
    return Measured(values, criteria=[Criterion("worst_deviation", "<=", 0.1), Criterion("pbgd_rel_max", "<=", 0.01)],
                    seeds=seeds,
                    summary=f"PBGD-Free error / floor {values['ratio_min']:.3f} to {values['ratio_max']:.3f}; "
                            f"PBGD at most {values['pbgd_rel_max']:.1e} of the floor",
                    details=dict(ratio=ratio, deltas=deltas))


@claim("23", "The dropped penalty term tends to the implicit gradient at rate 1/γ", kind="identity",
       expect="on a random quadratic bilevel problem, ||gamma (grad_x g(x, y_gamma) - grad_x g(x, y*)) - "
              "implicit term|| has log-log slope in [-1.1, -0.9] over gamma in 10..1000, and AID's "
              "hypergradient equals the closed form to 1e-10",
       name="penalty_term_rate")
def claim_penalty_term_rate(fast: bool = False) -> Measured:
    q = QuadraticBilevel.random(rng=0)
    x = np.linspace(-1.0, 1.0, q.dx)
    gammas = np.array([10.0, 100.0, 1000.0])
    err = np.array([np.linalg.norm(penalty_term(q, x, g) - implicit_term(q, x)) for g in gammas])
    slope = loglog_slope(gammas, err)
    aid_err = float(np.max(np.abs(q.hypergradient(x) - q.hypergradient_closed_form(x))))
    return Measured({"slope": slope, "aid_error": aid_err},
                    criteria=[Criterion("slope", ">=", -1.1), Criterion("slope", "<=", -0.9),
                              Criterion("aid_error", "<=", 1e-10)],
                    seeds=(0,), summary=f"slope {slope:.3f}, AID error {aid_err:.1e}", details=dict(gammas=gammas, err=err))


@claim("23", "Failure demo: when f depends on x only through y, PBGD-Free never moves x", kind="identity",
       expect="on random quadratic problems with f = 1/2||y - c||^2 (3 seeds), PBGD-Free's x stays at x0 "
              "exactly, while AID gets within 1e-3 of the distance ||x0 - x*|| and PBGD (gamma = 10, which "
              "carries an O(1/gamma) penalty bias) within 5% of it",
       name="failure_without_direct_x")
def claim_failure(fast: bool = False) -> Measured:
    seeds = (0, 1, 2)
    moved, rel_aid, rel_pbgd = [], [], []
    for s in seeds:
        q = QuadraticBilevel.random(a=0.0, rng=s)
        xs, x0 = q.x_star(), np.zeros(q.dx)
        d0 = np.linalg.norm(x0 - xs)
        moved.append(np.linalg.norm(pbgd_free(q, x0, gamma=GAMMA, eta_x=0.5, eta_y=0.2, maxiter=500).x - x0))
        rel_aid.append(np.linalg.norm(aid(q, x0, eta_x=1.0, eta_y=0.25, inner_steps=3, cg_steps=3, maxiter=1000,
                                          tol=1e-3 * d0, stop="x_error", x_star=xs).x - xs) / d0)
        rel_pbgd.append(np.linalg.norm(pbgd(q, x0, gamma=GAMMA, eta_x=0.03, eta_y=0.2, eta_z=0.25, inner_steps=3,
                                            maxiter=3000).x - xs) / d0)
    values = {"free_moved": max(moved), "aid_rel_error": max(rel_aid), "pbgd_rel_error": max(rel_pbgd)}
    return Measured(values, criteria=[Criterion("free_moved", "<=", 0.0), Criterion("aid_rel_error", "<=", 1e-3),
                                      Criterion("pbgd_rel_error", "<=", 0.05)],
                    seeds=seeds, summary=f"PBGD-Free moved x by {max(moved):g}; AID within {max(rel_aid):.1e}, "
                                         f"PBGD within {max(rel_pbgd):.1e} of the initial distance")


GLUE_FORMATS = {
    "single_loop_saving": {"ratio_pbgd": "{:.3f}", "ratio_pbgd_max": "{:.3f}", "ratio_aid": "{:.2f}",
                           "ratio_aid_max": "{:.2f}", "calls_free": "{:.0f}", "calls_pbgd": "{:.0f}",
                           "calls_aid": "{:.0f}", "calls_pbgd_gamma10": "{:.0f}",
                           "ratio_pbgd_gamma10": "{:.4f}", "gamma_pbgd": "{:g}",
                           "ratio_pbgd_all": "{:.2f}", "ratio_aid_all": "{:.2f}", "on_edge": lambda v: "yes" if v else "no"},
    "bias_floor": {"ratio_median": "{:.4f}", "ratio_min": "{:.4f}", "ratio_max": "{:.4f}",
                   "worst_deviation": "{:.1e}", "pbgd_rel_max": "{:.1e}"},
}


# --------------------------------------------------------------------------- figures

LABELS = {"PBGD-Free": "PBGD-Free (single loop)", "PBGD": "PBGD (inner loop)", "AID": "AID (implicit)"}


def _traces(seed: int, delta: float) -> list[Trace]:
    out = []
    for m in METHODS:
        # PBGD-Free until its update stalls (the bias-floor claim's runs); the baselines to 1e-8
        kw = dict(stop="step", tol=1e-10) if m == "PBGD-Free" else dict(stop="x_error", tol=1e-8)
        tr = copy.copy(run(m, seed, delta, **kw, **best(m)).trace)
        tr.method = LABELS[m]
        out.append(tr)
    return out


@lru_cache(maxsize=2)
def _delta_sweep(seed: int = 0) -> dict:
    return {d: _traces(seed, d) for d in SLIDER_DELTAS}


def _delta_step(delta: float, seed: int = 0) -> SliderStep:
    delta, seed = _among(delta, "delta", SLIDER_DELTAS), check_int(seed, "seed")
    traces = convergence_traces(_delta_sweep(seed)[delta], y="x_error", x="ll_calls")
    floor = toy(seed, delta).floor()
    traces.append(go.Scatter(x=[1, 1e5], y=[max(floor, 1e-16)] * 2, mode="lines", name="predicted floor δ‖Q⁻¹Aᵀw‖",
                             line=dict(color="#555", dash="dot", width=1.5), visible=True if delta > 0 else "legendonly"))
    note = f"δ = {delta:g}: floor {floor:.3g}" if delta > 0 else "δ = 0: f is flat at y*, no floor"
    free = _delta_sweep(seed)[delta][0]
    err, calls = free["x_error"], free["ll_calls"]
    if delta > 0:
        k = max(float(calls[int(np.argmax(err <= 1.01 * floor))]), 1.5)
        phases = [Phase(1.0, k, "descent"), Phase(k, 2e4, "PBGD-Free on its floor")]
    else:
        phases = [Phase(1.0, max(float(calls[-1]), 1.5), "PBGD-Free: linear phase")]
    layout = phase_layout(phases, logx=True)
    corner = frame_note(note)["annotations"][0] | dict(y=0.02, yanchor="bottom")
    layout["annotations"] = layout["annotations"] + [corner]
    return SliderStep(f"{delta:g}", traces, layout)


def delta_slider_figure(seed: int = 0) -> go.Figure:
    """Error ``||x_k - x*||`` against LL oracle calls for the three tuned methods, one frame per
    flatness violation delta, with PBGD-Free's predicted floor dotted."""
    seed = check_int(seed, "seed")
    fig = slider_figure([_delta_step(d, seed) for d in SLIDER_DELTAS], slider_label="flatness violation δ",
                        active=2, logx=True, logy=True, xaxis_title="lower-level oracle calls",
                        yaxis_title="‖x − x*‖", title="Error against lower-level calls as flatness is violated")
    fig.update_yaxes(range=[-9, 1.2])
    fig.update_xaxes(range=[0, 4.3])
    return fig


def delta_figure(delta: float = 0.05) -> go.Figure:
    step = _delta_step(delta)
    fig = go.Figure(step.traces)
    fig.update_layout(**step.layout)
    base_layout(fig, title="Error against lower-level calls", xaxis_title="lower-level oracle calls",
                yaxis_title="‖x − x*‖", logx=True, logy=True)
    fig.update_yaxes(range=[-9, 1.2])
    fig.update_xaxes(range=[0, 4.3])
    return fig


EXPLORER_DELTA = Explorer("23", "delta", delta_figure,
                          {"delta": Slider("flatness violation δ", SLIDER_DELTAS, 0.05)},
                          "PBGD-Free, PBGD and AID on the flatness toy as δ grows")


def convergence_figure(seed: int = 0) -> go.Figure:
    """The three tuned methods at delta = 0, against LL calls (left) and iterations (right)."""
    seed = check_int(seed, "seed")
    trs = _delta_sweep(seed)[0.0]
    fig = make_subplots(rows=1, cols=2, horizontal_spacing=0.12)
    for col, x in ((1, "ll_calls"), (2, "iteration")):
        for t in convergence_traces(trs, y="x_error", x=x):
            t.showlegend = col == 1
            fig.add_trace(t, row=1, col=col)
    base_layout(fig, title="At δ = 0 every method converges; PBGD-Free spends one LL call per iteration",
                height=430, logy=True, logx=True)
    fig.update_xaxes(title_text="lower-level oracle calls", row=1, col=1)
    fig.update_xaxes(title_text="iteration", row=1, col=2)
    fig.update_yaxes(title_text="‖x − x*‖", row=1, col=1)
    return fig


# ---- the representation-learning proxy

SHIFTS = (0.0, 0.25, 0.5, 0.75, 1.0)
#: Settings for the proxy, chosen by hand while designing it, on the same seed 0 the figures use
#: (stable at every shift up to 1; not tuned per method: the proxy is an exploration, not a claim).
PROXY_SETTINGS = {"PBGD-Free": dict(gamma=GAMMA, eta_x=0.5, eta_y=0.5),
                  "PBGD": dict(gamma=GAMMA, eta_x=0.1, eta_y=0.5, eta_z=0.5, inner_steps=3),
                  "AID": dict(eta_x=0.5, eta_y=0.5, inner_steps=3, cg_steps=3)}
PROXY_ITERS = {"PBGD-Free": 600, "PBGD": 600, "AID": 600}


@lru_cache(maxsize=32)
def proxy_run(method: str, shift: float, seed: int = 0) -> Trace:
    """A run on the representation proxy, as a trace of the UL loss ``Phi(x_k) = f(x_k, y*(x_k))``
    (``objective``) against LL calls and wall time at 60 log-spaced iterations."""
    method = check_choice(method, "method", METHODS)
    seed = check_int(seed, "seed")
    p = RepresentationProxy(shift=shift, rng=seed)
    xs = []
    res = _FUNCS[method](p, p.x0, None, maxiter=PROXY_ITERS[method], tol=1e-12, callback=xs.append,
                         **PROXY_SETTINGS[method])
    tr = res.trace
    keep = np.unique(np.geomspace(1, len(xs), 60).astype(int) - 1)
    out = Trace(LABELS[method])
    for i in keep:
        out.record(objective=p.phi(xs[i]), iteration=i, ll_calls=tr["ll_calls"][i], time=tr["time"][i])
    return out


@lru_cache(maxsize=2)
def _proxy_sweep(seed: int = 0) -> dict:
    return {s: [proxy_run(m, s, seed) for m in METHODS] for s in SHIFTS}


def _proxy_step(shift: float, seed: int = 0) -> SliderStep:
    shift, seed = _among(shift, "shift", SHIFTS), check_int(seed, "seed")
    trs = _proxy_sweep(seed)[shift]
    traces = convergence_traces(trs, y="objective", x="ll_calls")
    ends = ", ".join(f"{m}: {t.objective[-1]:.3f}" for m, t in zip(METHODS, trs))
    return SliderStep(f"{shift:g}", traces, frame_note(f"shift s = {shift:g}; final UL loss {ends}"))


def proxy_slider_figure(seed: int = 0) -> go.Figure:
    """UL loss Phi(x_k) on the representation proxy against LL calls, one frame per teacher shift."""
    seed = check_int(seed, "seed")
    return slider_figure([_proxy_step(s, seed) for s in SHIFTS], slider_label="UL teacher shift s", active=0,
                         logx=True, logy=True, xaxis_title="lower-level oracle calls",
                         yaxis_title="UL loss Φ(x) = f(x, y*(x))",
                         title="Representation proxy: UL loss against lower-level calls")


def proxy_figure(shift: float = 0.0) -> go.Figure:
    step = _proxy_step(shift)
    fig = go.Figure(step.traces)
    fig.update_layout(**step.layout)
    return base_layout(fig, title="Representation proxy", xaxis_title="lower-level oracle calls",
                       yaxis_title="UL loss Φ(x)", logx=True, logy=True)


def proxy_time_figure(shift: float = 0.0, seed: int = 0) -> go.Figure:
    """The proxy's UL loss against wall-clock seconds (one run each; noisy on a shared machine)."""
    shift, seed = _among(shift, "shift", SHIFTS), check_int(seed, "seed")
    trs = _proxy_sweep(seed)[shift]
    return base_layout(go.Figure(convergence_traces(trs, y="objective", x="time")),
                       title=f"Representation proxy at s = {shift:g}: UL loss against wall time",
                       xaxis_title="wall time (s)", yaxis_title="UL loss Φ(x)", logx=True, logy=True)


EXPLORER_PROXY = Explorer("23", "proxy", proxy_figure, {"shift": Slider("UL teacher shift s", SHIFTS, 0.0)},
                          "The representation proxy as the UL data move away from the LL data")


def proxy_numbers(seed: int = 0) -> dict[str, float]:
    """Final UL loss of PBGD-Free over PBGD's and AID's at the smallest and largest shift."""
    seed = check_int(seed, "seed")
    sw = _proxy_sweep(seed)
    out = {}
    for s, tag in ((SHIFTS[0], "s0"), (SHIFTS[-1], "smax")):
        f = {m: t.objective[-1] for m, t in zip(METHODS, sw[s])}
        out[f"free_over_aid_{tag}"] = f["PBGD-Free"] / f["AID"]
        out[f"free_over_pbgd_{tag}"] = f["PBGD-Free"] / f["PBGD"]
    return out


# ---- the picture of the idea

def idea_figure(delta: float = 0.6, a: float = 0.8, b: float = 1.0, w: float = 1.0) -> go.Figure:
    """A one-dimensional toy (d_x = d_y = 1): contours of f(x, y) = 1/2 (x - b)^2 + 1/4 (y - a x)^4
    + delta w y, the LL solution curve y*(x) = a x, and at points on it the UL step PBGD-Free takes
    (-grad_x f, dashed arrows) against the true negative hypergradient (-grad Phi, dotted arrows)."""
    delta, a, b, w = (check_real(v, n) for v, n in ((delta, "delta"), (a, "a"), (b, "b"), (w, "w")))
    xs, ys = np.linspace(-1.0, 2.5, 90), np.linspace(-1.5, 2.5, 90)
    X, Y = np.meshgrid(xs, ys)
    F = 0.5 * (X - b) ** 2 + 0.25 * (Y - a * X) ** 4 + delta * w * Y
    fig = go.Figure(go.Contour(x=xs, y=ys, z=F, ncontours=25, colorscale=[[0, "#9a9a9a"], [1, "#9a9a9a"]], showscale=False,
                               contours=dict(coloring="lines"), name="f(x, y)", hoverinfo="skip"))
    fig.add_trace(go.Scatter(x=xs, y=a * xs, mode="lines", name="y*(x) = a x", line=dict(color="#1f77b4", width=3)))
    pts = np.array([-0.5, 0.25, 1.0, 1.75])
    for k, (name, grad, color) in enumerate((("−∇ₓf (PBGD-Free)", pts - b, "#d62728"),
                                             ("−∇Φ (true)", pts - b + delta * w * a, "#2ca02c"))):
        yk = a * pts + (0.08 if k else -0.08)
        fig.add_trace(go.Scatter(x=np.ravel(np.column_stack([pts, pts - 0.5 * grad, np.full_like(pts, np.nan)])),
                                 y=np.ravel(np.column_stack([yk, yk, np.full_like(pts, np.nan)])), mode="lines+markers",
                                 name=name, line=dict(color=color, width=3),
                                 marker=dict(symbol=["circle", "arrow", "circle"] * len(pts), angleref="previous",
                                             size=[4, 13, 0] * len(pts), color=color)))
    fig.add_trace(go.Scatter(x=[b, b - delta * w * a], y=[a * b, a * (b - delta * w * a)], mode="markers",
                             name="PBGD-Free's limit and x*", marker=dict(size=[11, 14], symbol=["x", "star"],
                                                                           color=["#d62728", "#2ca02c"])))
    return base_layout(fig, title=f"Flatness violated (δ = {delta:g}): PBGD-Free's step (dashed) against the true descent direction (dotted)",
                       xaxis_title="upper-level variable x", yaxis_title="lower-level variable y", height=460)
