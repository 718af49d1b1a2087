"""Chapter 32's experiments, claims and figures: reinforcement learning for liquid cooling.

The plant is :mod:`optbook.decisions.cooling_env`, the controllers :mod:`.cooling_control`. This
module tunes every controller on the same number of settings and the same held-out days, trains
the learned policy once (cached in memory), distils it, registers the claims and draws the figures.
"""
from __future__ import annotations

from functools import lru_cache

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from ..claims import Criterion, Measured, claim
from ..core import check_int, grid_search
from ..viz import SliderStep, base_layout, frame_note, slider_figure
from ..viz.style import line_style
from ..widgets import Explorer, Slider
from .cooling_control import (
    PLANT_FEATURES,
    VIOLATION_PRICE,
    PIPolicy,
    RandomPolicy,
    RulePolicy,
    ScheduledRulePolicy,
    SharedLinearPolicy,
    cem_runs,
    distill,
    fidelity,
    training_score,
)
from .cooling_env import CoolingParams, make_workloads, rollout

P = CoolingParams()
#: Workload seeds: CEM trains on TRAIN_DAYS, every method's setting is chosen on TUNING_DAYS,
#: the claims are measured on CLAIM_DAYS (unseen by all).
TRAIN_DAYS = (100, 101, 102)
TUNING_DAYS = (200, 201, 202)
CLAIM_DAYS = (1000, 1001, 1002, 1003, 1004)
#: One knob per method, three values each (the same grid size for all).
#: The learned policy's margin grid was registered as (0.5, 1, 2); its best (2) lay on the edge, so
#: the referee shifted it to (1, 2, 3) (same size; 3 scores worse, the chosen policy is unchanged).
#: "rule + schedule" is the referee's check: the rule (its tuned CT offset) with the pump flow
#: scheduled on load, one gain on the same 3-value grid (not part of the registered criteria).
GRIDS = {"rule": {"delta": (0.0, 1.0, 2.0)},
         "PI": {"kp": (0.3, 1.0, 3.0)},
         "learned (CEM)": {"margin": (1.0, 2.0, 3.0)},
         "rule + schedule": {"gain": (1.0, 1.2, 1.4)}}
RULE_FLOW = 1.2   # lower constant flows overheat on peak bursts (see the chapter)
CEM_FULL = dict(iterations=30, population=32, init_std=0.3)
CEM_FAST = dict(iterations=20, population=32, init_std=0.3)
#: Thresholds of the claims (fixed before the full run; see the registrations).
MIN_SAVING = 0.05
MAX_EXCESS_VIOLATION = 10.0  # K*min per day
MIN_RETAINED = 0.8
DEPTHS = (0, 1, 2, 3, 4, 5, 6)

GLUE_FORMATS = {
    "learned_saves_energy": {"median_saving": "{:.1%}", "min_saving": "{:.1%}", "median_excess_violation": "{:.1f}",
                             "rule_energy": "{:.0f}", "learned_energy": "{:.0f}", "pi_energy": "{:.0f}",
                             "pi_saving": "{:.1%}", "rule_violation": "{:.1f}", "learned_violation": "{:.1f}",
                             "sched_saving": "{:.1%}", "sched_excess_violation": "{:.1f}"},
    "tree_keeps_saving": {"median_retained": "{:.0%}", "min_retained": "{:.0%}", "median_excess_violation": "{:.1f}",
                          "fidelity_r2": "{:.2f}", "tree_energy": "{:.0f}"},
}


#: The common tuning score of every controller: energy (kWh) + TUNING_PRICE x violation (K*min).
TUNING_PRICE = 100.0


def _score(policy, days) -> np.ndarray:
    out = rollout(policy, *make_workloads(days, P), P)
    return training_score(out, TUNING_PRICE)


def _cem_kwargs(fast: bool) -> dict:
    return CEM_FAST if fast else CEM_FULL


@lru_cache(maxsize=2)
def _trained_grid(fast: bool) -> dict:
    """The CEM runs of every margin in the grid, simulated together (each equals its own run)."""
    days = TRAIN_DAYS[:1] if fast else TRAIN_DAYS
    margins = GRIDS["learned (CEM)"]["margin"]
    return {m: r.theta for m, r in zip(margins, cem_runs(P, days, margins, rng=0, **_cem_kwargs(fast)))}


def _trained(margin: float, fast: bool) -> np.ndarray:
    return _trained_grid(fast)[margin]


@lru_cache(maxsize=2)
def tunings(fast: bool = False) -> dict:
    """Grid search of every controller on the held-out tuning days (score: energy + price x violation)."""
    days = TUNING_DAYS[:2] if fast else TUNING_DAYS
    makers = {"rule": lambda delta: RulePolicy(P, ts=32.0, flow=RULE_FLOW, delta=delta),
              "PI": lambda kp: PIPolicy(P, kp=kp, ki=kp / 10, flow=RULE_FLOW),
              "learned (CEM)": lambda margin: SharedLinearPolicy(_trained(margin, fast), P),
              "rule + schedule": lambda gain: ScheduledRulePolicy(P, gain=gain, delta=out["rule"].best["delta"])}
    out = {}
    for name, grid in GRIDS.items():
        make = makers[name]
        cache = {}

        def score(seed, _make=make, _cache=cache, **setting):
            key = tuple(setting.items())
            if key not in _cache:
                _cache[key] = dict(zip(days, _score(_make(**setting), days)))
            return _cache[key][seed]

        out[name] = grid_search(name, score, grid, days)
    return out


def controllers(fast: bool = False) -> dict:
    """The tuned controllers (and the untuned repo rule, for reference)."""
    t = tunings(fast)
    return {"rule": RulePolicy(P, ts=32.0, flow=RULE_FLOW, **t["rule"].best),
            "PI": PIPolicy(P, kp=t["PI"].best["kp"], ki=t["PI"].best["kp"] / 10, flow=RULE_FLOW),
            "learned (CEM)": SharedLinearPolicy(_trained(t["learned (CEM)"].best["margin"], fast), P),
            "rule + schedule": ScheduledRulePolicy(P, gain=t["rule + schedule"].best["gain"],
                                                   delta=t["rule"].best["delta"])}


@lru_cache(maxsize=16)
def tree(depth: int, fast: bool = False):
    depth = check_int(depth, "depth")
    teacher = controllers(fast)["learned (CEM)"]
    return distill(teacher, P, TRAIN_DAYS[:1] if fast else TRAIN_DAYS, depth=depth, dagger_rounds=1 if fast else 2)


def claim_days(fast: bool) -> tuple[int, ...]:
    return CLAIM_DAYS[:3] if fast else CLAIM_DAYS


@lru_cache(maxsize=32)
def evaluate(name: str, fast: bool = False, record: bool = False) -> dict:
    """Energy, violation and peak of one controller on the claim days (``tree3`` etc. for trees).
    Without ``record`` the recorded run is reused (one simulation per controller)."""
    if not record:
        r = evaluate(name, fast, True)
        return {k: r[k] for k in ("energy", "violation", "peak")}
    if name.startswith("tree"):
        pol = tree(int(name[4:]), fast)
    elif name == "random":
        pol = RandomPolicy(P, rng=0)
    else:
        pol = controllers(fast)[name]
    return rollout(pol, *make_workloads(claim_days(fast), P), P, record=record)


def _saving(method: dict, rule: dict) -> np.ndarray:
    return 1.0 - method["energy"] / rule["energy"]


@claim("32", "The learned policy uses less energy than the tuned rule at no more thermal violation",
       kind="reproduction",
       paper="LC-Opt benchmarks RL controllers (centralised-action PPO) of supply temperature, flow, valves and "
             "the cooling-tower setpoint against the rule-based setpoints of the Frontier plant, and reports "
             "energy savings at maintained thermal limits; no single number could be verified from the paper",
       expect=f"on 5 unseen workload days, median energy saving of the CEM-trained shared policy over the tuned "
              f"rule >= {MIN_SAVING:.0%} and median excess violation over the rule <= {MAX_EXCESS_VIOLATION:g} K*min "
              "per day (stated rule: 5% is well above day-to-day noise of a fixed controller; 10 K*min is less "
              "than one blade group 2 K over its limit for one 5-minute step); fixed before the full run",
       control="a uniformly random policy in place of the learned one",
       name="learned_saves_energy")
def claim_learned_saves_energy(fast: bool = False, control: bool = False) -> Measured:
    rule = evaluate("rule", fast)
    method = evaluate("random" if control else "learned (CEM)", fast)
    pi, sched = evaluate("PI", fast), evaluate("rule + schedule", fast)
    saving = _saving(method, rule)
    excess = method["violation"] - rule["violation"]
    values = {"median_saving": np.median(saving), "min_saving": saving.min(),
              "median_excess_violation": np.median(excess), "rule_energy": np.median(rule["energy"]),
              "learned_energy": np.median(method["energy"]), "pi_energy": np.median(pi["energy"]),
              "pi_saving": np.median(_saving(pi, rule)), "rule_violation": np.median(rule["violation"]),
              "learned_violation": np.median(method["violation"]),
              "sched_saving": np.median(_saving(sched, rule)),
              "sched_excess_violation": np.median(sched["violation"] - rule["violation"])}
    who = "random policy" if control else "learned policy"
    return Measured(values, criteria=[Criterion("median_saving", ">=", MIN_SAVING),
                                      Criterion("median_excess_violation", "<=", MAX_EXCESS_VIOLATION)],
                    seeds=claim_days(fast), precondition=bool(np.median(rule["violation"]) <= MAX_EXCESS_VIOLATION),
                    summary=f"{who}: median saving {np.median(saving):.1%} vs the tuned rule, excess violation "
                            f"{np.median(excess):.1f} K*min/day",
                    details={"tunings": list(tunings(fast).values())})


@claim("32", "A depth-3 tree distilled from the learned policy keeps >= 80% of its saving", kind="reproduction",
       paper="LC-Opt distils its RL policies into decision and regression trees for interpretable control "
             "(VIPER-style); no retained-saving number could be verified from the paper",
       expect=f"on 5 unseen workload days, median over days of (rule - tree energy)/(rule - learned energy) >= "
              f"{MIN_RETAINED:.0%} (the card's target) and the tree's median excess violation over the rule <= "
              f"{MAX_EXCESS_VIOLATION:g} K*min per day; fixed before the full run",
       control="a depth-0 tree (the teacher's mean action, a constant policy) in place of the depth-3 tree",
       reproduces=False,
       diagnosis="the saving part holds (the depth-3 tree keeps ~96% of it) but the tree overheats: median excess "
                 "violation ~106 K*min/day on the unseen days, ten times the bound. Four checks: (1) the phenomenon "
                 "is there: the teacher saves ~32% over the tuned rule at zero excess violation; (2) depth 3 is the "
                 "card's interpretable scale, DAgger with 2 relabelling rounds on the teacher's 3 training days; "
                 "(3) distillation passes its reduction test (a piecewise-constant teacher is recovered exactly), "
                 "and deeper trees meet the bound (depth 5: ~5 K*min/day); (4) the control (depth 0) fails as "
                 "expected, with far more violation. A depth-3 staircase of a smooth policy misses bursts the "
                 "teacher handles; VIPER's Q-weighting, which needs a critic, is not available to a CEM teacher",
       name="tree_keeps_saving")
def claim_tree_keeps_saving(fast: bool = False, control: bool = False) -> Measured:
    depth = 0 if control else 3
    rule, learned, student = evaluate("rule", fast), evaluate("learned (CEM)", fast), evaluate(f"tree{depth}", fast)
    retained = (rule["energy"] - student["energy"]) / (rule["energy"] - learned["energy"])
    excess = student["violation"] - rule["violation"]
    obs = evaluate(f"tree{depth}", fast, record=True)["obs"].reshape(-1, P.n_obs)
    r2 = fidelity(tree(depth, fast), controllers(fast)["learned (CEM)"], obs)
    values = {"median_retained": np.median(retained), "min_retained": retained.min(),
              "median_excess_violation": np.median(excess), "fidelity_r2": r2,
              "tree_energy": np.median(student["energy"])}
    return Measured(values, criteria=[Criterion("median_retained", ">=", MIN_RETAINED),
                                      Criterion("median_excess_violation", "<=", MAX_EXCESS_VIOLATION)],
                    seeds=claim_days(fast), precondition=bool(np.median(_saving(learned, rule)) > 0),
                    summary=f"depth-{depth} tree keeps {np.median(retained):.0%} of the saving, excess violation "
                            f"{np.median(excess):.1f} K*min/day, R^2 {r2:.2f}")


# --------------------------------------------------------------------------- figures
NAMES = ("rule", "PI", "learned (CEM)", "tree3")
LABELS = {"rule": "rule (tuned)", "PI": "PI (tuned)", "learned (CEM)": "learned (CEM)", "tree3": "depth-3 tree",
          "random": "random"}


def _day_traces(name: str, day: int = 0) -> list:
    r = evaluate(name, False, record=True)
    hours = np.arange(P.horizon) * P.dt / 3600
    power = make_workloads([CLAIM_DAYS[day]], P)[0][0].sum(axis=(1, 2)) / 1000
    hot = r["temps"][day].max(axis=(1, 2))
    cool = r["fan"][day] + r["pump"][day]
    return [go.Scatter(x=hours, y=hot, name="hottest blade (°C)", **line_style(0), xaxis="x", yaxis="y"),
            go.Scatter(x=hours, y=r["ts"][day].mean(axis=1), name="supply temperature (°C)", **line_style(1),
                       xaxis="x", yaxis="y"),
            go.Scatter(x=hours, y=np.full(hours.size, P.t_max), name="limit", mode="lines",
                       line=dict(color="grey", dash="dot"), xaxis="x", yaxis="y"),
            go.Scatter(x=hours, y=cool, name="cooling power (kW)", **line_style(2), xaxis="x2", yaxis="y2"),
            go.Scatter(x=hours, y=power * 10, name="IT load (MW × 10)", **line_style(4), xaxis="x2", yaxis="y2")]


def _day_note(name: str, day: int = 0) -> dict:
    r = evaluate(name, False)
    return frame_note(f"{LABELS[name]}: {r['energy'][day]:.0f} kWh, {r['violation'][day]:.0f} K·min over the limit")


def _day_axes(fig: go.Figure) -> go.Figure:
    fig.update_layout(xaxis=dict(domain=[0, 1], anchor="y", matches="x2", showticklabels=False),
                      yaxis=dict(domain=[0.55, 1], title="°C"),
                      xaxis2=dict(domain=[0, 1], anchor="y2", title="hour of the day"),
                      yaxis2=dict(domain=[0, 0.45], title="kW"))
    return fig


def day_slider_figure(day: int = 0) -> go.Figure:
    """One unseen day under each controller: temperatures (top) and cooling power (bottom)."""
    day = check_int(day, "day")
    if day >= len(CLAIM_DAYS):
        raise ValueError(f"day must index CLAIM_DAYS (0..{len(CLAIM_DAYS) - 1}), got {day}")
    steps = [SliderStep(LABELS[n], _day_traces(n, day), _day_note(n, day)) for n in NAMES]
    fig = slider_figure(steps, slider_label="controller", active=0, height=560,
                        title="A day of operation: hottest blade, supply temperature and cooling power")
    return _day_axes(fig)


def day_figure(controller: str = "rule") -> go.Figure:
    """The live twin of :func:`day_slider_figure` (the first call simulates every controller, so
    that each later move only draws)."""
    if controller not in NAMES:
        raise ValueError(f"controller must be one of {NAMES}, got {controller!r}")
    for name in NAMES:
        evaluate(name, False, record=True)
    fig = go.Figure(_day_traces(controller), layout=_day_note(controller))
    base_layout(fig, title="A day of operation", height=560)
    return _day_axes(fig)


@lru_cache(maxsize=1)
def depth_sweep() -> dict:
    """Retained saving, violation and fidelity of the distilled tree against its depth (full size)."""
    rule, learned = evaluate("rule"), evaluate("learned (CEM)")
    rows = {}
    for d in DEPTHS:
        st = evaluate(f"tree{d}")
        obs = evaluate(f"tree{d}", False, record=True)["obs"].reshape(-1, P.n_obs)
        rows[d] = {"retained": float(np.median((rule["energy"] - st["energy"]) / (rule["energy"] - learned["energy"]))),
                   "violation": float(np.median(st["violation"])),
                   "r2": fidelity(tree(d), controllers()["learned (CEM)"], obs)}
    return rows


def _tree_layout(t) -> tuple[list, list]:
    """Node positions of a fitted tree (leaves spread left to right, root on top) and edges."""
    tr = t.tree_
    xs, ys, order = {}, {}, []

    def walk(n, depth):
        if tr.children_left[n] == -1:
            xs[n] = len(order)
            order.append(n)
        else:
            walk(tr.children_left[n], depth + 1)
            walk(tr.children_right[n], depth + 1)
            xs[n] = 0.5 * (xs[tr.children_left[n]] + xs[tr.children_right[n]])
        ys[n] = -depth

    walk(0, 0)
    n = len(order)
    return {k: (v + 0.5) / n for k, v in xs.items()}, ys  # leaves spread over [0, 1] at every depth


def _question(feature: int, threshold: float) -> str:
    """A split of the CT tree in physical units (the features are normalised as in ``observe``)."""
    name = PLANT_FEATURES[feature]
    if name == "wet bulb":
        return f"wet bulb<br>≤ {20 + 4 * threshold:.1f} °C?"
    if name == "hottest blade":
        return f"hottest<br>≤ {40 + 20 * threshold:.1f} °C?"
    if name == "mean power":
        return f"load<br>≤ {(threshold + 1) / 2 * P.p_max:.0f} kW?"
    hour = {"sin(hour)": "sin", "cos(hour)": "cos"}[name]
    return f"{hour}(hour)<br>≤ {threshold:.2f}?"


def _tree_traces(depth: int) -> list:
    t = tree(depth).ct_tree
    tr = t.tree_
    xs, ys = _tree_layout(t)
    ex, ey = [], []
    for n in xs:
        for c in (tr.children_left[n], tr.children_right[n]):
            if c != -1:
                ex += [xs[n], xs[c], None]
                ey += [ys[n], ys[c], None]
    mid, half = 0.5 * (P.delta_low + P.delta_high), 0.5 * (P.delta_high - P.delta_low)
    text, pos = [], []
    n_leaves = int((tr.children_left == -1).sum())
    for n in xs:
        if tr.children_left[n] == -1:
            text.append(f"{mid + half * tr.value[n].ravel()[0]:+.1f} K")
            rank = int(round(xs[n] * n_leaves - 0.5))
            pos.append("bottom center" if rank % 2 == 0 else "top center")
        else:
            text.append(_question(tr.feature[n], tr.threshold[n]))
            pos.append("top center")
    n_max = 2 ** max(DEPTHS[1:4][-1], 1)
    pad = [None] * (n_max * 2 - len(xs))  # the same number of points in every frame
    return [go.Scatter(x=ex, y=ey, mode="lines", line=dict(color="grey", width=1), name="branch", showlegend=False),
            go.Scatter(x=list(xs.values()) + pad, y=list(ys.values()) + pad, mode="markers+text", text=text + [""] * len(pad),
                       textposition=pos + ["bottom center"] * len(pad), marker=dict(size=10, color="#0072B2"), name="node",
                       showlegend=False, textfont=dict(size=10))]


def _tree_note(depth: int) -> dict:
    r = depth_sweep()[depth]
    return frame_note(f"depth {depth}: keeps {r['retained']:.0%}, R² {r['r2']:.2f}, {r['violation']:.0f} K·min/day over"
                      f"<br>left = yes; leaf = CT offset over the rule")


TREE_DEPTHS = (1, 2, 3, 4)


def tree_slider_figure() -> go.Figure:
    """The distilled cooling-tower tree at depths 1-4 (the cabinet tree is printed in the text)."""
    steps = [SliderStep(str(d), _tree_traces(d), _tree_note(d)) for d in TREE_DEPTHS]
    fig = slider_figure(steps, slider_label="tree depth", active=2, height=520, fixed_axes=False,
                        title="The distilled cooling-tower rule: split questions and setpoint offsets")
    return _tree_axes(fig)


def _tree_axes(fig: go.Figure) -> go.Figure:
    fig.update_xaxes(visible=False, range=[-0.02, 1.02])
    fig.update_yaxes(visible=False, range=[-TREE_DEPTHS[-1] - 0.6, 1.6])
    return fig


def tree_figure(depth: int = 3) -> go.Figure:
    """The live twin of :func:`tree_slider_figure` (the first call distils every depth)."""
    if depth not in TREE_DEPTHS:
        raise ValueError(f"depth must be one of {TREE_DEPTHS}, got {depth!r}")
    depth_sweep()
    fig = go.Figure(_tree_traces(int(depth)), layout=_tree_note(int(depth)))
    base_layout(fig, title="The distilled cooling-tower rule", height=520)
    return _tree_axes(fig)


def depth_figure() -> go.Figure:
    """Saving retained and fidelity R^2 (top) and violation (bottom, log) against tree depth."""
    rows = depth_sweep()
    d = np.array(DEPTHS)
    fig = make_subplots(rows=2, cols=1, shared_xaxes=True, vertical_spacing=0.08)
    fig.add_trace(go.Scatter(x=d, y=[rows[k]["retained"] for k in DEPTHS], name="share of the saving kept",
                             mode="lines+markers", **line_style(0)), row=1, col=1)
    fig.add_trace(go.Scatter(x=d, y=[rows[k]["r2"] for k in DEPTHS], name="fidelity R²", mode="lines+markers",
                             **line_style(1)), row=1, col=1)
    fig.add_trace(go.Scatter(x=d, y=[max(rows[k]["violation"], 0.1) for k in DEPTHS], mode="lines+markers",
                             name="violation (K·min/day)", **line_style(3)), row=2, col=1)
    fig.add_trace(go.Scatter(x=d, y=np.full(d.size, MAX_EXCESS_VIOLATION), name="violation bound", mode="lines",
                             line=dict(color="grey", dash="dot")), row=2, col=1)
    base_layout(fig, title="Distillation against depth: saving kept, fidelity, violation", height=520)
    fig.update_yaxes(title_text="fraction", row=1, col=1)
    fig.update_yaxes(title_text="K·min/day", type="log", tickvals=[1, 10, 100, 1000], row=2, col=1)
    fig.update_xaxes(title_text="tree depth", row=2, col=1)
    return fig


EXPLORER_DAY = Explorer("32", "day", day_figure, {"controller": Slider("controller", NAMES, "rule", fmt="{}")})
EXPLORER_TREE = Explorer("32", "tree", tree_figure, {"depth": Slider("tree depth", TREE_DEPTHS, 3)})
