"""Chapter 28's experiments, claims and figures: combinatorial ski rental.

The algorithms live in :mod:`optbook.decisions.ski_rental`; this module draws the random
instances, tunes the baselines on held-out instances, registers the claims and builds the
figures (static slider figures and their live twins).
"""
from __future__ import annotations

from functools import lru_cache

import numpy as np
import plotly.graph_objects as go
from scipy.stats import norm

from ..claims import Criterion, Measured, claim
from ..core import check_in_range, check_int, check_positive, grid_search
from ..viz import SliderStep, base_layout, color_for, frame_note, slider_figure
from ..viz.style import line_style
from ..widgets import Explorer, Slider
from .ski_rental import (
    CSRInstance,
    Strategy,
    bundle_break_even,
    bundle_karlin,
    bundle_lp,
    default_horizon,
    follow_opt,
    karlin_probs,
    karlin_ratio,
    offline_opt,
    one_item_costs,
    opt_chain,
    optimal_lp,
    per_item_karlin,
    purohit_bounds,
    purohit_probs,
    soac,
)

#: Instances the claims are measured on, and the held-out ones the baselines are tuned on.
CLAIM_SEEDS = (0, 1, 2, 3, 4)
TUNING_SEEDS = (100, 101, 102)
#: Every baseline's knob: a multiplier of its waiting times (1 = the textbook rule).
SCALES = (0.4, 0.6, 0.8, 1.0, 1.2, 1.4, 1.7)
BASELINES = {"follow-OPT": follow_opt, "bundle break-even": bundle_break_even, "per-item Karlin": per_item_karlin,
             "bundle Karlin": bundle_karlin}
#: The card's two-item instance: f({1}) = 10, f({2}) = 6, f({1,2}) = 13, rents 1.
CARD = dict(f1=10.0, f2=6.0, rents=(1.0, 1.0))
COMBO_PRICES = (10.0, 11.0, 12.0, 13.0, 14.0, 15.0, 16.0)
#: The learning-augmented experiment: price b (rent 1), seasons uniform on 1..3b.
LA_PRICE = 20
TRUSTS = (0.2, 0.3, 0.4, 0.5, 0.7, 1.0)
ERRORS = (0.0, 0.1, 0.25, 0.5, 1.0, 1.5, 2.0, 3.0)  # prediction-error std, in units of b

GLUE_FORMATS = {
    "soac_optimal": {"max_gap": "{:.1e}", "median_soac": "{:.3f}", "median_lp": "{:.3f}",
                     "median_best_baseline": "{:.3f}", "min_baseline_excess": "{:.3f}",
                     "median_baseline_excess": "{:.3f}", "ablation_max_gap": "{:.3f}",
                     "ablation_median_gap": "{:.3f}", "ablation_zero": "{:.0f}"},
    "learning_augmented": {"consistency": "{:.3f}", "consistency_bound": "{:.3f}", "consistency_spread": "{:.3f}",
                           "robust_mean": "{:.3f}", "robustness_bound": "{:.3f}", "karlin_mean": "{:.3f}"},
}


def random_instance(seed: int, n: int = 2) -> CSRInstance:
    """A random submodular instance: for two items, prices ``f({i})`` uniform on [4, 12] and a
    combo price uniform between ``max f({i})`` and ``f({1}) + f({2})``; for more items,
    ``f(S) = c sqrt(w(S))`` (concave of modular, hence submodular). Rents uniform on [0.5, 1.5]."""
    seed = check_int(seed, "seed")
    n = check_int(n, "n", minimum=1)
    g = np.random.default_rng([28, seed, n])
    rents = g.uniform(0.5, 1.5, n)
    if n == 2:
        f1, f2 = g.uniform(4, 12, 2)
        return CSRInstance(rents, np.array([0.0, f1, f2, g.uniform(max(f1, f2), f1 + f2)]))
    w, c = g.uniform(1, 3, n), g.uniform(3, 6)
    masks = np.arange(2 ** n)
    return CSRInstance(rents, c * np.sqrt(((masks[:, None] >> np.arange(n)) & 1) @ w))


def eval_seasons(inst: CSRInstance) -> np.ndarray:
    """Seasons the worst case is taken over: ``1 .. 4 H`` (beyond, every strategy here owns
    everything it will ever buy and its ratio decreases)."""
    return np.arange(1, 4 * default_horizon(inst) + 1)


def worst_ratio(strategy: Strategy, inst: CSRInstance) -> float:
    return float(strategy.ratio_curve(inst, eval_seasons(inst)).max())


def baseline_score(method: str, seed: int, scale: float) -> float:
    """The worst-case ratio of a baseline with waiting-time multiplier ``scale`` on instance ``seed``."""
    inst = random_instance(seed)
    return worst_ratio(BASELINES[method](inst, scale), inst)


@lru_cache(maxsize=2)
def tunings(fast: bool = False) -> dict:
    """Each baseline's grid search over :data:`SCALES` on the held-out :data:`TUNING_SEEDS`
    (score: worst-case ratio, median over instances; lower is better)."""
    seeds = TUNING_SEEDS[:2] if fast else TUNING_SEEDS
    return {m: grid_search(m, lambda seed, scale, m=m: baseline_score(m, seed, scale), {"scale": SCALES}, seeds)
            for m in BASELINES}


@lru_cache(maxsize=16)
def instance_results(seed: int, n: int = 2) -> dict:
    inst = random_instance(seed, n)
    lp, c_lp = optimal_lp(inst)
    so, c_so = soac(inst)
    _, c_bundle = bundle_lp(inst)
    return {"inst": inst, "lp": c_lp, "soac": c_so, "soac_worst": worst_ratio(so, inst), "soac_strategy": so,
            "lp_strategy": lp, "bundle_lp": c_bundle}


@claim("28", "SOAC attains the optimal competitive ratio and beats every tuned baseline",
       kind="reproduction", name="soac_optimal",
       paper="SOAC achieves the optimal (instance-dependent) competitive ratio of combinatorial ski rental, "
             "and experiments show its advantage over baseline methods (no number retrieved: the paper's "
             "PDF was not available to us; the threshold below is the issue's rule)",
       expect="on 5 random two-item submodular instances (seeds 0-4): max over instances of |SOAC's worst-case "
              "ratio - the LP optimum| <= 0.01, and the median excess of the best tuned baseline (follow-OPT, "
              "bundle break-even, per-item Karlin, bundle Karlin; 7 scales each, tuned on held-out instances "
              "100-102) over SOAC's ratio >= 0.05 (a gap of 5%, far above the LP's 1e-9 tolerance). Both LPs "
              "are solved by the same code over nested plan sets (SOAC's chain plans are a subset of all "
              "plans), so the first criterion tests only whether the chain restriction loses anything; the "
              "chain's worth is reported as an ablation (SOAC cut down to one-batch plans), not a criterion. "
              "Referee's change after the first full run: bundle Karlin (randomised, bundle-aware) was added "
              "to the baselines for fairness; thresholds unchanged",
       control="SOAC's randomisation removed: follow-OPT, which climbs the same chain at the offline "
               "optimum's breakpoints, stands in for SOAC (it must miss the 0.01 band)")
def claim_soac_optimal(fast: bool = False, control: bool = False) -> Measured:
    seeds = CLAIM_SEEDS[:3] if fast else CLAIM_SEEDS
    tuned = tunings(fast)
    rows = []
    for s in seeds:
        r = instance_results(s)
        inst = r["inst"]
        method = worst_ratio(follow_opt(inst), inst) if control else r["soac_worst"]
        base = {m: worst_ratio(BASELINES[m](inst, **t.best), inst) for m, t in tuned.items()}
        rows.append({"seed": s, "lp": r["lp"], "method": method, **base})
    gap = np.array([abs(row["method"] - row["lp"]) for row in rows])
    best_base = np.array([min(row[m] for m in BASELINES) for row in rows])
    method = np.array([row["method"] for row in rows])
    excess = best_base - method
    ablation = np.array([instance_results(s)["bundle_lp"] - instance_results(s)["lp"] for s in seeds])
    values = {"max_gap": gap.max(), "median_soac": np.median(method), "median_lp": np.median([r["lp"] for r in rows]),
              "median_best_baseline": np.median(best_base), "median_baseline_excess": np.median(excess),
              "min_baseline_excess": excess.min(), "ablation_max_gap": ablation.max(),
              "ablation_median_gap": np.median(ablation), "ablation_zero": int(np.sum(ablation < 1e-6))}
    who = "follow-OPT (control)" if control else "SOAC"
    return Measured(values, criteria=[Criterion("max_gap", "<=", 0.01), Criterion("median_baseline_excess", ">=", 0.05)],
                    seeds=seeds, precondition=bool(np.all(best_base >= np.array([r["lp"] for r in rows]) - 1e-9)),
                    summary=f"{who}: max gap to LP {gap.max():.1e}; best tuned baseline +{np.median(excess):.3f} "
                            f"(median over {len(seeds)} instances)",
                    details={"rows": rows, "tunings": list(tuned.values())})


# ---------------------------------------------------------------- learning-augmented, one item


def la_expected_ratio(b: int, trust: float, seasons: np.ndarray, predictions: np.ndarray) -> np.ndarray:
    """``E[ALG] / OPT`` of Purohit et al.'s rule for each (season, prediction) pair (exact
    expectation over the rule's random buying day)."""
    seasons = np.asarray(seasons, dtype=np.int64)
    predictions = np.asarray(predictions, dtype=float)
    if seasons.shape != predictions.shape:
        raise ValueError("seasons and predictions must have the same shape")
    if seasons.size == 0 or np.any(seasons < 1):
        raise ValueError("seasons must be non-empty positive integers")
    out = np.empty(seasons.shape)
    opt = np.minimum(seasons, b)
    days = np.arange(1, int(seasons.max()) + 1)
    for hi, pred in ((True, float(b)), (False, 0.0)):
        p = purohit_probs(b, pred, trust)
        cost = p @ one_item_costs(b, np.arange(1, p.size + 1), days)
        sel = (predictions >= b) == hi
        out[sel] = cost[seasons[sel] - 1] / opt[sel]
    return out


def la_experiment(trust: float, error: float, seed: int, draws: int = 4000, b: int = LA_PRICE) -> float:
    """Mean ratio of the learning-augmented rule over ``draws`` seasons uniform on ``1..3b`` with
    predictions ``y = T + N(0, (error * b)**2)``."""
    error = check_positive(error, "error", allow_zero=True)
    g = np.random.default_rng([28, 1, check_int(seed, "seed")])
    T = g.integers(1, 3 * b + 1, size=check_int(draws, "draws", minimum=1))
    y = T + error * b * g.standard_normal(T.size)
    return float(la_expected_ratio(b, trust, T, y).mean())


@claim("28", "Learning-augmented rule (one item): mean ratios under Purohit et al.'s bounds", kind="identity",
       name="learning_augmented",
       expect="b = 20, lambda = 0.5, seasons uniform on 1..60, 4000 draws per seed, seeds 0-4: median over seeds "
              "of the mean ratio with exact predictions <= 0.5/(1-e^-0.5) = 1.271, and with prediction error of "
              "std 3b <= the robustness bound (1.05/(1-e^-0.45) = 2.897). An identity, not a reproduction: the "
              "rule is Purohit et al.'s (the paper's bundle algorithm was not available), a mean over seasons "
              "cannot exceed the worst case that their theorem bounds (la_bounds checks it), so only a bug can "
              "break it. First registered as a reproduction with lambda = 1 (Karlin) as its control; "
              "re-registered as an identity by the referee")
def claim_learning_augmented(fast: bool = False) -> Measured:
    seeds = CLAIM_SEEDS[:2] if fast else CLAIM_SEEDS
    draws = 1000 if fast else 4000
    lam = 0.5
    cons_bound, rob_bound = purohit_bounds(LA_PRICE, lam)
    cons = np.array([la_experiment(lam, 0.0, s, draws) for s in seeds])
    rob = np.array([la_experiment(lam, 3.0, s, draws) for s in seeds])
    karlin = np.array([la_experiment(1.0, 0.0, s, draws) for s in seeds])
    values = {"consistency": np.median(cons), "consistency_bound": cons_bound,
              "consistency_spread": cons.max() - cons.min(), "robust_mean": np.median(rob),
              "robustness_bound": rob_bound, "karlin_mean": np.median(karlin)}
    return Measured(values, criteria=[Criterion("consistency", "<=", float(cons_bound)),
                                      Criterion("robust_mean", "<=", float(rob_bound))],
                    seeds=seeds, summary=f"lambda={lam:g}: mean ratio {np.median(cons):.3f} with exact predictions "
                                         f"(bound {cons_bound:.3f}; Karlin {np.median(karlin):.3f}), "
                                         f"{np.median(rob):.3f} with error 3b")


@claim("28", "One item: the LP's optimal ratio is Karlin's 1/(1-(1-1/b)^b)", kind="identity", name="karlin_lp",
       expect="for b in {2, 5, 10, 20} (horizon 3b), |LP value - 1/(1-(1-1/b)^b)| <= 1e-6, and Karlin's "
              "distribution has a flat ratio curve (spread <= 1e-9) on seasons 1..b")
def claim_karlin_lp(fast: bool = False) -> Measured:
    gaps, spreads = [], []
    for b in (2, 5, 10, 20):
        inst = CSRInstance(np.ones(1), np.array([0.0, float(b)]))
        gaps.append(abs(optimal_lp(inst, 3 * b)[1] - karlin_ratio(b)))
        k = Strategy("Karlin", np.arange(1, b + 1)[:, None], karlin_probs(b))
        curve = k.ratio_curve(inst, np.arange(1, b + 1))
        spreads.append(curve.max() - curve.min())
    return Measured({"max_gap": max(gaps), "max_spread": max(spreads)},
                    criteria=[Criterion("max_gap", "<=", 1e-6), Criterion("max_spread", "<=", 1e-9)],
                    summary=f"max |LP - Karlin| = {max(gaps):.1e}")


@claim("28", "Purohit et al.'s worst cases respect their bounds", kind="identity", name="la_bounds",
       expect="b = 20, lambda in {0.2, 0.5, 0.8, 1}: worst ratio over seasons 1..3b with a correct prediction "
              "<= lambda/(1-e^-lambda) (1 + 1/b) and with any prediction <= (1+1/b)/(1-e^-(lambda-1/b))")
def claim_la_bounds(fast: bool = False) -> Measured:
    b, T = LA_PRICE, np.arange(1, 3 * LA_PRICE + 1)
    cons_excess, rob_excess = [], []
    for lam in (0.2, 0.5, 0.8, 1.0):
        c_b, r_b = purohit_bounds(b, lam)
        exact = la_expected_ratio(b, lam, T, T.astype(float)).max()
        worst = max(la_expected_ratio(b, lam, T, np.full(T.size, y)).max() for y in (0.0, float(b)))
        cons_excess.append(exact / (c_b * (1 + 1 / b)))
        rob_excess.append(worst / r_b)
    return Measured({"consistency_over_bound": max(cons_excess), "robustness_over_bound": max(rob_excess)},
                    criteria=[Criterion("consistency_over_bound", "<=", 1.0), Criterion("robustness_over_bound", "<=", 1.0)],
                    summary=f"worst/bound: consistency {max(cons_excess):.3f}, robustness {max(rob_excess):.3f}")


# ---------------------------------------------------------------- figures


def card_instance(combo: float = 13.0) -> CSRInstance:
    """The card's two-item instance with combo price ``f({1,2}) = combo`` (submodular and monotone
    for ``10 <= combo <= 16``)."""
    combo = check_in_range(combo, "combo", CARD["f1"], CARD["f1"] + CARD["f2"], closed=(True, True))
    return CSRInstance(np.array(CARD["rents"]), np.array([0.0, CARD["f1"], CARD["f2"], combo]))


SET_NAMES = {0: "rent both", 1: "buy item 1", 2: "buy item 2", 3: "buy both"}


def envelope_figure(combo: float = 13.0) -> go.Figure:
    """Every line ``f(S) + T r(N \\ S)`` of the card's instance, the offline optimum (their lower
    envelope) and the chain of sets it passes through."""
    inst = card_instance(combo)
    T = np.linspace(0, 20, 201)
    full = 3
    fig = go.Figure()
    for k, mask in enumerate(range(4)):
        y = inst.buy[mask] + inst.rent_of(np.array([full ^ mask]))[0] * T
        fig.add_trace(go.Scatter(x=T, y=y, mode="lines", name=SET_NAMES[mask],
                                 line=dict(color=color_for(k + 1), width=1.5, dash="dot")))
    opt = np.min([inst.buy[m] + inst.rent_of(np.array([full ^ m]))[0] * T for m in range(4)], axis=0)
    fig.add_trace(go.Scatter(x=T, y=opt, mode="lines", name="OPT(T): lower envelope", line=dict(color=color_for(0), width=4)))
    chain = opt_chain(inst)
    for j, (s, tau) in enumerate(zip(chain.sets[1:], chain.breakpoints[1:])):
        fig.add_vline(x=tau, line=dict(color="grey", dash="dash", width=1))
        fig.add_annotation(x=tau, y=0.98 - 0.09 * j, yref="y domain", text=f" from T={tau:g}: {SET_NAMES[s]}",
                           showarrow=False, xanchor="left", yanchor="top", font=dict(size=12),
                           bgcolor="rgba(255,255,255,0.85)")
    base_layout(fig, title="The offline optimum is the lower envelope of one line per set",
                xaxis_title="season length T (days)", yaxis_title="cost of buying S on day 1", height=430)
    fig.update_yaxes(range=[0, 30])
    return fig


@lru_cache(maxsize=16)
def ratio_curves(combo: float) -> dict:
    inst = card_instance(combo)
    T = np.arange(1, 41)
    lp, c_lp = optimal_lp(inst, 40)
    so, c_so = soac(inst, 40)
    curves = {"SOAC (reconstructed)": so.ratio_curve(inst, T)}
    for m, make in BASELINES.items():
        curves[m] = make(inst).ratio_curve(inst, T)
    return {"T": T, "curves": curves, "lp": c_lp, "soac": c_so, "chain": opt_chain(inst)}


def _ratio_traces(r: dict) -> list:
    lp = go.Scatter(x=r["T"], y=np.full(r["T"].size, r["lp"]), mode="lines", name="LP optimum (lower bound)",
                    line=dict(color="rgba(120,120,120,0.45)", width=9))
    return [lp] + [go.Scatter(x=r["T"], y=y, mode="lines", name=name, **line_style(k))
                   for k, (name, y) in enumerate(r["curves"].items())]


def _ratio_layout(combo: float, r: dict) -> dict:
    """The frame's note plus the offline optimum's phases: a dotted line at each breakpoint."""
    layout = frame_note(_ratio_note(combo, r))
    shapes, notes = [], []
    for s, tau in zip(r["chain"].sets[1:], r["chain"].breakpoints[1:]):
        shapes.append(dict(type="line", x0=tau, x1=tau, xref="x", y0=0, y1=1, yref="y domain",
                           line=dict(color="grey", dash="dot", width=1)))
        notes.append(dict(text=f"OPT: {SET_NAMES[s]}", x=tau, xref="x", y=0.12 + 0.08 * len(notes), yref="y domain",
                          xanchor="left", yanchor="bottom", showarrow=False, font=dict(size=11)))
    while len(shapes) < 2:  # the same number of shapes in every frame, so none lingers
        shapes.append(dict(type="line", x0=0, x1=0, xref="x", y0=0, y1=0, yref="y domain", visible=False))
        notes.append(dict(text="", x=0, xref="x", y=0, yref="y domain", showarrow=False, visible=False))
    layout["shapes"] = shapes
    layout["annotations"] = layout["annotations"] + notes
    return layout


def _ratio_note(combo: float, r: dict) -> str:
    worst = {m: y.max() for m, y in r["curves"].items()}
    chain = " ⊂ ".join("{}" if s == 0 else "{" + ",".join(str(i + 1) for i in range(2) if s >> i & 1) + "}"
                       for s in r["chain"].sets)
    return (f"f({{1,2}}) = {combo:g}; chain {chain}<br>LP optimum {r['lp']:.3f}, SOAC {worst['SOAC (reconstructed)']:.3f}"
            f"<br>follow-OPT {worst['follow-OPT']:.3f}, per-item Karlin {worst['per-item Karlin']:.3f}")


_RATIO_AXES = dict(xaxis_title="season length T (days)", yaxis_title="E[ALG(T)] / OPT(T)")


def combo_slider_figure() -> go.Figure:
    """Ratio curves on the card's instance, one frame per combo price."""
    steps = [SliderStep(f"{c:g}", _ratio_traces(ratio_curves(c)), _ratio_layout(c, ratio_curves(c)))
             for c in COMBO_PRICES]
    return slider_figure(steps, slider_label="combo price f({1,2})", active=COMBO_PRICES.index(13.0),
                         title="Ratio against the season: SOAC is flat at the optimum, the baselines peak",
                         height=500, **_RATIO_AXES)


def combo_figure(combo: float = 13.0) -> go.Figure:
    """The live twin of :func:`combo_slider_figure`."""
    r = ratio_curves(float(combo))
    fig = go.Figure(_ratio_traces(r), layout=_ratio_layout(combo, r))
    base_layout(fig, title="Ratio against the season", height=500, **_RATIO_AXES)
    fig.update_yaxes(range=[0.95, 2.3])
    return fig


def la_curve(trust: float, b: int = LA_PRICE) -> np.ndarray:
    """Expected mean ratio against the prediction-error std (:data:`ERRORS`, in units of ``b``), exact
    over seasons uniform on ``1..3b`` and Gaussian prediction errors."""
    T = np.arange(1, 3 * b + 1)
    hi = la_expected_ratio(b, trust, T, np.full(T.size, float(b)))
    lo = la_expected_ratio(b, trust, T, np.zeros(T.size))
    out = []
    for e in ERRORS:
        p_hi = (T >= b).astype(float) if e == 0 else norm.sf((b - T) / (e * b))
        out.append(float(np.mean(p_hi * hi + (1 - p_hi) * lo)))
    return np.array(out)


@lru_cache(maxsize=16)
def la_summary(trust: float) -> dict:
    cons, rob = purohit_bounds(LA_PRICE, trust)
    return {"la": la_curve(trust), "karlin": la_curve(1.0), "cons": cons, "rob": rob}


def _la_traces(r: dict) -> list:
    x = np.array(ERRORS)
    return [go.Scatter(x=x, y=r["la"], mode="lines+markers", name="learning-augmented", **line_style(0)),
            go.Scatter(x=x, y=r["karlin"], mode="lines+markers", name="Karlin (no prediction)", **line_style(1)),
            go.Scatter(x=x, y=np.full(x.size, r["cons"]), mode="lines", name="consistency bound λ/(1-e^-λ)",
                       line=dict(color="grey", dash="dot"))]


def _la_note(trust: float) -> str:
    r = la_summary(trust)
    return (f"λ = {trust:g}: exact predictions {r['la'][0]:.3f}, error 3b {r['la'][-1]:.3f}"
            f"<br>robustness bound {r['rob']:.2f} (above the chart)")


_LA_AXES = dict(xaxis_title="prediction error std (units of b)", yaxis_title="mean ALG / OPT")


def trust_slider_figure() -> go.Figure:
    steps = [SliderStep(f"{t:g}", _la_traces(la_summary(t)), frame_note(_la_note(t))) for t in TRUSTS]
    fig = slider_figure(steps, slider_label="trust λ", active=TRUSTS.index(0.5),
                        title="Learning-augmented ski rental: gain with good predictions, bounded loss with bad ones",
                        height=480, **_LA_AXES)
    fig.update_yaxes(range=[1.0, 1.75])  # head room for the note above Karlin's line
    return fig


def trust_figure(trust: float = 0.5) -> go.Figure:
    r = la_summary(float(trust))
    fig = go.Figure(_la_traces(r), layout=frame_note(_la_note(float(trust))))
    base_layout(fig, title="Learning-augmented ski rental", height=480, **_LA_AXES)
    fig.update_yaxes(range=[1.0, 1.75])
    return fig


EXPLORER_COMBO = Explorer("28", "combo_price", combo_figure,
                          {"combo": Slider("combo price f({1,2})", COMBO_PRICES, 13.0)})
EXPLORER_TRUST = Explorer("28", "trust", trust_figure, {"trust": Slider("trust λ", TRUSTS, 0.5)})
