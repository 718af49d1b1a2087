"""Chapter 20: the book's experiments, claims, figures and live explorers for MAT-Agent. The
algorithms (bandit agents, menus, metrics, reward, training loop) are in
:mod:`optbook.training.bandit_schedulers`.

Two experiments. The bandit core alone, on the card's piecewise-stationary Gaussian bandit; and
the end-to-end proxy: a one-hidden-layer MLP trained for 30 epochs on synthetic multi-label
tabular data with power-law label frequencies, one decision per epoch, the agents' discount and
UCB constant set by :func:`horizon_parameters` before any run.
"""
from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from typing import Any

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from ..claims import Criterion, Measured, claim
from ..core import Trace, Tuning, check_choice, check_in_range, check_int, check_positive, grid_search
from ..core.threads import one_torch_thread
from ..viz import Phase, SliderStep, base_layout, color_for, convergence_figure, slider_figure
from ..widgets import Explorer, Slider, Toggle
from .bandit_schedulers import (
    AGENT_KEYS,
    DEFAULT_CONFIG,
    LOSSES,
    MENUS,
    OPTIMIZERS,
    DiscountedUCB,
    MultiLabelData,
    UCB1,
    horizon_parameters,
    make_multilabel,
    make_policy,
    piecewise_means,
    simulate_bandit,
    train_proxy,
)

# ======================================================================= the bandit core alone

BANDIT_METHODS = ("UCB1", "D-UCB", "SW-UCB", "D-UCB+eps")


def _tag(method: str) -> str:
    """A method's name as a measured key: "D-UCB+eps" -> "ducb_eps"."""
    return method.lower().replace("-", "").replace("+", "_")
C_GRID = (0.05, 0.1, 0.2, 0.5)


def regret_table(seeds: Sequence[int] = (0, 1, 2, 3), *, horizon: int = 6000, period: int = 600,
                 n_arms: int = 5, noise: float = 0.2, gamma: float = 0.99, window: int = 200,
                 eps: float = 0.05, c_grid: Sequence[float] = C_GRID,
                 methods: Sequence[str] = BANDIT_METHODS) -> dict[str, dict[float, float]]:
    """Mean final regret over ``seeds`` of each method for each ``c`` (the card's Check 1: means
    redrawn from U(0.2, 0.8) every ``period`` steps)."""
    horizon = check_int(horizon, "horizon", minimum=1)
    period = check_int(period, "period", minimum=1)
    n_arms = check_int(n_arms, "n_arms", minimum=1)
    window = check_int(window, "window", minimum=1)
    noise = check_positive(noise, "noise", allow_zero=True)
    gamma = check_in_range(gamma, "gamma", 0.0, 1.0, closed=(False, True))
    eps = check_in_range(eps, "eps", 0.0, 1.0, closed=(True, True))
    seeds = [check_int(s, "seeds entries") for s in seeds]
    for m in methods:
        check_choice(m, "methods entries", BANDIT_METHODS + ("eps-greedy",))
    out: dict[str, dict[float, float]] = {m: {} for m in methods}
    for c in c_grid:
        check_positive(c, "c_grid entries")
        for m in methods:
            # UCB1 ignores gamma, window and eps: one cached run serves every caller
            g, w, e = (1.0, 1, 0.0) if m == "UCB1" else (gamma, window, eps)
            regs = [_final_regret(m, float(c), s, horizon, period, n_arms, noise, g, w, e) for s in seeds]
            out[m][float(c)] = float(np.mean(regs))
    return out


@lru_cache(maxsize=256)
def _bandit_run(method: str, c: float, seed: int, horizon: int, period: int, n_arms: int, noise: float,
                gamma: float, window: int, eps: float) -> Trace:
    means = piecewise_means(n_arms, horizon, period, rng=1000 + seed)
    pol = make_policy(method, n_arms, c=c, gamma=gamma, window=window, eps=eps, rng=seed)
    return simulate_bandit(pol, means, noise, rng=2000 + seed)


def _final_regret(*key: Any) -> float:
    return float(_bandit_run(*key)["regret"][-1])


# ============================================================================ the proxy

EPOCHS = 30
#: Every agent's discount and UCB constant, by the rule of :func:`horizon_parameters` (fixed
#: before the full run: gamma = 0.935, a memory of 15 decisions; c = 0.43 reward sd).
GAMMA, C_UCB = horizon_parameters(EPOCHS)
PROXY_SEEDS = (0, 1, 2, 3, 4)
FAST_SEEDS = (0, 1)
TUNING_SEEDS = (100,)  # held out: data and training seeds of the grid search
DEFAULT_KEY = tuple(DEFAULT_CONFIG[k] for k in AGENT_KEYS)


@lru_cache(maxsize=16)
def proxy_data(seed: int) -> MultiLabelData:
    """The proxy data set of ``seed``: 4000 / 1000 / 1000 points, 50 features, 12 labels from 40%
    down to 1.5% prevalence, label noise 0.3 of the signal's sd."""
    return make_multilabel(rng=check_int(seed, "seed", minimum=0), noise=0.3)


@lru_cache(maxsize=512)
def proxy_run(policy: str, seed: int, config: tuple[str, ...] | None = None,
              credit: str = "centred") -> dict[str, Any]:
    """One cached run of :func:`train_proxy` on :func:`proxy_data` of ``seed`` (training seeded
    by ``seed`` too), ``config`` as a tuple in :data:`AGENT_KEYS` order for a static run."""
    cfg = None if config is None else dict(zip(AGENT_KEYS, config))
    with one_torch_thread():
        return train_proxy(proxy_data(seed), policy, config=cfg, seed=seed, epochs=EPOCHS, credit=credit)


def static_grid(fast: bool = False) -> dict[str, tuple[str, ...]]:
    """The grid of static configurations around the default (no augmentation, cosine schedule):
    every optimiser and loss (12; in fast mode the three optimisers with BCE)."""
    return {"opt": OPTIMIZERS, "loss": ("BCE",) if fast else LOSSES, "lrs": ("cosine",)}


def static_tuning(fast: bool = False) -> Tuning:
    """Grid search of the best static configuration by validation mAP on :data:`TUNING_SEEDS`."""
    def score(seed: int, opt: str, loss: str, lrs: str) -> float:
        return proxy_run("static", seed, ("none", opt, lrs, loss))["val_map"]

    return grid_search("best static", score, static_grid(fast), TUNING_SEEDS, higher_is_better=True)


def _key(setting: dict[str, str]) -> tuple[str, ...]:
    return ("none", setting["opt"], setting["lrs"], setting["loss"])


def _points(runs: Sequence[dict[str, Any]], key: str) -> np.ndarray:
    return 100.0 * np.array([r[key] for r in runs])


@claim("20", "Bandit agents choosing the recipe every epoch match the best static recipe of a grid "
       "search on mAP and beat the static default on rare labels", kind="reproduction",
       paper="MAT-Agent beats fixed training recipes: mAP 97.4 on Pascal VOC (strongest baseline, PAT-T: 96.2), "
             "92.8 on COCO (HSQ-CvN: 92.0); removing all agents gives 91.7 on VOC; the NeurIPS abstract adds a "
             "better rare-class F1 (no number retrieved)",
       expect="over 5 seeds (data and training reseeded; 30 epochs, one decision per epoch; every agent a D-UCB "
              "with gamma = 0.935 and c = 0.43 reward sd from horizon_parameters(30), eps 0.2 x 0.9^t, fixed "
              "before the run): median paired difference of test mAP, agents minus the best static configuration, "
              ">= -1 point, and median paired difference of test rare-label AP (the rarest 30% of labels), agents "
              "minus the static default, >= 0. The best static configuration is chosen by validation mAP among "
              "12 (no augmentation, cosine schedule; 3 optimisers x 4 losses) on the held-out data seed 100 (a first "
              "full run of this registration searched 24, the constant schedule too, and ended as this one did; "
              "the grid was cut for the notebook's time budget). "
              "A first registration (gamma = 0.9, c = 1 reward sd, the reward smoothed across arms, rare-class F1 "
              "at threshold 0.5) did not reproduce: agents 3 points below both baselines, 111-116 of 116 possible "
              "arm switches. A second credit rule (centred on the average of both EMAs, untried options in menu "
              "order) was replaced after a 5-seed check showed it biased: it credited the options tried first "
              "with the trend of the rewards, and the agents played SGD-m more often than random choice",
       control="the four agents replaced by a uniform random option per epoch for each component",
       reproduces=False,
       diagnosis="(1) the proxy shows the premise and the criterion is reachable: the 12 static recipes span 40 "
                 "points of validation mAP (SGD-m far below), and the grid's pick itself clears both parts (rare-label "
                 "AP +0.6 over the default, median); but one run's credit separates an agent's best and worst "
                 "options by only about one standard error of an option's mean (some 8 plays each in 30 decisions). "
                 "That noise is not what decides the verdict: agents fed each option's expected credit (its mean "
                 "over the five random-choice runs, noise removed) fail as the real agents do (mAP -3.2, rare AP "
                 "-4.7, 110 of 116 switches: with exact but small gaps the bonus makes D-UCB cycle), and agents fed "
                 "a noise-free credit pointing at the grid's pick (a gap of one credit sd) reach -0.8 on mAP but "
                 "-3.0 on rare-label AP (-4.9 to +2.8 over the seeds): at 30 decisions the mechanism's own exploration (a tour of every option, "
                 "the eps layer, the bonus) costs more than the criterion allows, even with perfect information. "
                 "(2) gamma and c follow a rule stated before the run for a 30-decision horizon (memory 15 "
                 "decisions, bonus one standard error), each arm is credited with its own step, centred on the "
                 "trend, and rare labels are scored by AP; "
                 "(3) the agent passes its reductions (gamma = 1, eps = 0 is UCB1 choice for choice: claim "
                 "20.dducb_is_ucb1; the static policy trains the default recipe every epoch: tests); "
                 "(4) the control (random options) fails too, and on mAP no less badly than the agents. So the "
                 "proxy can test the claim and the method, as reconstructed, loses to a fixed recipe at this horizon: "
                 "switching costs, and there is no gain from adapting to pay for it (the best static recipe is "
                 "within noise of the default)",
       name="proxy")
def claim_proxy(fast: bool = False, control: bool = False) -> Measured:
    seeds = FAST_SEEDS if fast else PROXY_SEEDS
    tun = static_tuning(fast)
    best_key = _key(tun.best)
    agents = [proxy_run("random" if control else "mat", s) for s in seeds]
    dflt = [proxy_run("static", s, DEFAULT_KEY) for s in seeds]
    best = [proxy_run("static", s, best_key) for s in seeds]
    map_gap = _points(agents, "test_map") - _points(best, "test_map")
    rare_gap = _points(agents, "test_rare_ap") - _points(dflt, "test_rare_ap")
    rare_gap_best = _points(best, "test_rare_ap") - _points(dflt, "test_rare_ap")
    sw = np.array([r["switches"] for r in agents], dtype=float)
    values = {"map_gap": float(np.median(map_gap)), "map_gap_min": float(map_gap.min()),
              "map_gap_max": float(map_gap.max()),
              "rare_gap": float(np.median(rare_gap)), "rare_gap_min": float(rare_gap.min()),
              "rare_gap_max": float(rare_gap.max()), "rare_gap_best": float(np.median(rare_gap_best)),
              "switches": float(np.median(sw)), "switches_min": float(sw.min()), "switches_max": float(sw.max()),
              "switches_possible": float(len(AGENT_KEYS) * (EPOCHS - 1)),
              "gamma": GAMMA, "c": C_UCB, "grid_size": float(tun.size),
              "epochs_grid": float(EPOCHS * tun.size * len(TUNING_SEEDS)), "epochs_agents": float(EPOCHS),
              "grid_spread": 100.0 * float(np.nanmax(tun.scores) - np.nanmin(tun.scores))}
    for name, runs in (("agents", agents), ("default", dflt), ("best", best)):
        for key, tag in (("test_map", "map"), ("test_rare_ap", "rare_ap"), ("test_rare_f1", "rare_f1")):
            v = _points(runs, key)
            values[f"{tag}_{name}"] = float(np.median(v))
            values[f"{tag}_{name}_sd"] = float(v.std(ddof=1))
    who = "random options (control)" if control else "agents"
    return Measured(values, criteria=[Criterion("map_gap", ">=", -1.0), Criterion("rare_gap", ">=", 0.0)],
                    seeds=seeds, precondition=values["grid_spread"] >= 2.0,
                    summary=f"{who}: test mAP {values['map_gap']:+.1f} points against the best static recipe "
                            f"({values['map_gap_min']:+.1f} to {values['map_gap_max']:+.1f}), rare-label AP "
                            f"{values['rare_gap']:+.1f} against the default; {values['switches']:.0f} of "
                            f"{values['switches_possible']:.0f} possible arm switches (median)",
                    details={"tuning": tun, "best_config": dict(zip(AGENT_KEYS, best_key)),
                             "runs": {"agents": agents, "default": dflt, "best": best}})


@claim("20", "Premise (Garivier & Moulines 2011, not the paper's result): on a piecewise-stationary bandit "
       "discounted UCB has at most half of UCB1's regret (each at its best c)",
       kind="reproduction",
       paper="not a claim of the MAT-Agent paper but the classical premise its 'non-stationary' agents rest on: "
             "Garivier & Moulines (2011) show that discounted UCB's regret grows like sqrt(T x number of changes) "
             "up to a log factor, a guarantee UCB1, which never forgets, does not have (no number for this "
             "bandit)",
       expect="mean final regret of D-UCB (gamma = 0.99) <= 0.5 x UCB1's, each at its best c in {0.05, 0.1, 0.2, "
              "0.5}; 5 arms, means redrawn from U(0.2, 0.8) every 600 steps, T = 6000, noise sd 0.2, 4 seeds "
              "(the card's reference: 152 against 425)",
       control="D-UCB with gamma = 1 (it never forgets: UCB1)",
       name="bandit_regret")
def claim_bandit_regret(fast: bool = False, control: bool = False) -> Measured:
    seeds = (0, 1) if fast else (0, 1, 2, 3)
    table = regret_table(seeds, gamma=1.0 if control else 0.99, c_grid=(0.1, 0.2) if fast else C_GRID,
                         methods=("UCB1", "D-UCB") if control else BANDIT_METHODS)
    best = {m: min(v.values()) for m, v in table.items()}
    ratio = best["D-UCB"] / best["UCB1"]
    values = {f"regret_{_tag(m)}": best[m] for m in table}
    values["ratio"] = ratio
    extra = "" if control else f"; SW-UCB {best['SW-UCB']:.0f}, D-UCB+eps {best['D-UCB+eps']:.0f}"
    return Measured(values, criteria=[Criterion("ratio", "<=", 0.5)], seeds=seeds,
                    summary=f"{'gamma = 1 (control): ' if control else ''}best-c regret over {len(seeds)} seeds: "
                            f"D-UCB {best['D-UCB']:.0f}, UCB1 {best['UCB1']:.0f} (ratio {ratio:.2f}){extra}",
                    details=table)


@claim("20", "Discounted UCB with gamma = 1 and no epsilon layer is UCB1, choice for choice", kind="identity",
       expect="identical arm sequences over 2000 steps of a piecewise-stationary bandit, for c in {0.1, 0.5}",
       name="dducb_is_ucb1")
def claim_dducb_is_ucb1(fast: bool = False) -> Measured:
    means = piecewise_means(5, 2000, 400, rng=3)
    same = []
    for c in (0.1, 0.5):
        a = simulate_bandit(DiscountedUCB(5, gamma=1.0, c=c, rng=0), means, 0.2, rng=4)["arm"]
        b = simulate_bandit(UCB1(5, c=c, rng=0), means, 0.2, rng=4)["arm"]
        same.append(float(np.mean(np.asarray(a) == np.asarray(b))))
    return Measured({"agreement": min(same)}, criteria=[Criterion("agreement", ">=", 1.0)],
                    summary=f"fraction of identical choices: {min(same):.3f}")


GLUE_FORMATS = {
    "proxy": {**{k: "{:+.1f}" for k in ("map_gap", "map_gap_min", "map_gap_max", "rare_gap", "rare_gap_min",
                                         "rare_gap_max", "rare_gap_best")},
              **{k: "{:.0f}" for k in ("switches", "switches_min", "switches_max", "switches_possible", "grid_size",
                                       "epochs_grid", "epochs_agents", "grid_spread")},
              "gamma": "{:.3f}", "c": "{:.2f}",
              **{f"{t}_{n}{sd}": "{:.1f}" for t in ("map", "rare_ap", "rare_f1")
                 for n in ("agents", "default", "best") for sd in ("", "_sd")}},
    "bandit_regret": {"ratio": "{:.2f}", **{f"regret_{_tag(m)}": "{:.0f}" for m in BANDIT_METHODS}},
}


def credit_signal(seeds: Sequence[int] = PROXY_SEEDS) -> dict[str, Any]:
    """How well the per-epoch credit tells the options apart, measured on the random-choice runs
    of ``seeds`` (each option played about equally often, independently of the others): per agent
    and option, the mean credit, and the spread between the best and worst option against the
    standard error of one option's mean after one run (credits have unit root mean square, an
    option gets about 30 / |menu| plays per run)."""
    out: dict[str, Any] = {}
    for k in AGENT_KEYS:
        by_arm: dict[str, list[float]] = {a: [] for a in MENUS[k]}
        for s in seeds:
            tr = proxy_run("random", s)["trace"]
            for a, cr in zip(tr[k][1:], tr["credit"][1:]):
                by_arm[MENUS[k][int(a)]].append(float(cr))
        means = {a: float(np.mean(v)) for a, v in by_arm.items() if v}
        spread = max(means.values()) - min(means.values())
        se_one_run = 1.0 / np.sqrt(EPOCHS / len(MENUS[k]))
        out[k] = {"means": means, "spread": spread, "se_one_run": float(se_one_run)}
    return out


def signal_numbers(signal: dict[str, Any]) -> dict[str, tuple[Any, str]]:
    """Glue-ready numbers of :func:`credit_signal`: SGD-m's mean credit, the agent whose options'
    mean credits differ most and by how much, and the standard error of one option's mean after
    one run (menus of three and of four options)."""
    k_max = max(AGENT_KEYS, key=lambda k: signal[k]["spread"])
    return {"sig_sgd": (signal["opt"]["means"]["SGD-m"], "{:+.2f}"),
            "sig_max_agent": (k_max.upper(), "{}"), "sig_max_spread": (signal[k_max]["spread"], "{:.2f}"),
            "sig_se_opt": (signal["opt"]["se_one_run"], "{:.2f}"),
            "sig_se_four": (signal["aug"]["se_one_run"], "{:.2f}")}


def choice_numbers(seeds: Sequence[int] = PROXY_SEEDS) -> dict[str, tuple[float, str]]:
    """The percentage of epochs the agents and random choice spend on SGD-m over ``seeds``."""
    sgd = {p: np.mean([[c["opt"] == "SGD-m" for c in proxy_run(p, s)["configs"]] for s in seeds])
           for p in ("mat", "random")}
    return {"sgd_agents": (100 * float(sgd["mat"]), "{:.0f}"), "sgd_random": (100 * float(sgd["random"]), "{:.0f}")}


ORACLES = ("expected", "recipe")


def oracle_credits(kind: str) -> dict[str, list[float]]:
    """Noise-free credit tables for :func:`oracle_run` (one number per option, menu order).

    ``"expected"``: each option's mean credit on the random-choice runs of :data:`PROXY_SEEDS`
    (:func:`credit_signal`), the credit's expectation with the noise of a single run averaged out;
    ``"recipe"``: 1 for the option of the best static recipe of the grid search
    (:func:`static_tuning`), 0 for every other option (a gap of one credit sd pointing at the
    answer)."""
    kind = check_choice(kind, "kind", ORACLES)
    if kind == "expected":
        sig = credit_signal()
        return {k: [sig[k]["means"][a] for a in MENUS[k]] for k in AGENT_KEYS}
    best = dict(zip(AGENT_KEYS, _key(static_tuning().best)))
    return {k: [1.0 if a == best[k] else 0.0 for a in MENUS[k]] for k in AGENT_KEYS}


@lru_cache(maxsize=16)
def oracle_run(kind: str, seed: int) -> dict[str, Any]:
    """The agents (same gamma, c, epsilon layer, forced tour) credited by :func:`oracle_credits`
    instead of the measured credit: what the mechanism does when the credit is noise-free."""
    table = oracle_credits(kind)
    with one_torch_thread():
        return train_proxy(proxy_data(check_int(seed, "seed", minimum=0)), "mat", seed=seed, epochs=EPOCHS,
                           arm_credit=table)


def oracle_numbers(seeds: Sequence[int] = PROXY_SEEDS) -> dict[str, tuple[float, str]]:
    """Glue-ready medians over ``seeds`` of the claim's two gaps (test mAP against the best static
    recipe, rare-label AP against the default, the latter with its range) and of the arm switches, for each oracle of
    :func:`oracle_credits`, and the share of epochs the "recipe" oracle spends on that recipe."""
    best_key = _key(static_tuning().best)
    out: dict[str, tuple[float, str]] = {}
    for kind in ORACLES:
        runs = [oracle_run(kind, s) for s in seeds]
        best = [proxy_run("static", s, best_key) for s in seeds]
        dflt = [proxy_run("static", s, DEFAULT_KEY) for s in seeds]
        out[f"or_{kind}_map"] = (float(np.median(_points(runs, "test_map") - _points(best, "test_map"))), "{:+.1f}")
        rare = _points(runs, "test_rare_ap") - _points(dflt, "test_rare_ap")
        out[f"or_{kind}_rare"] = (float(np.median(rare)), "{:+.1f}")
        out[f"or_{kind}_rare_min"] = (float(rare.min()), "{:+.1f}")
        out[f"or_{kind}_rare_max"] = (float(rare.max()), "{:+.1f}")
        out[f"or_{kind}_sw"] = (float(np.median([r["switches"] for r in runs])), "{:.0f}")
        if kind == "recipe":
            share = np.mean([[tuple(c[k] for k in AGENT_KEYS) == best_key for c in r["configs"]] for r in runs])
            out["or_recipe_share"] = (100.0 * float(share), "{:.0f}")
    return out


# ================================================================================ figures


def _change_shapes(horizon: int, period: int) -> list[dict]:
    return [dict(type="line", xref="x", yref="paper", x0=t, x1=t, y0=0, y1=1,
                 line=dict(color="#999", width=1, dash="dot")) for t in range(period, horizon, period)]


PLAYGROUND = {"horizon": 3000, "period": 500, "n_arms": 5, "noise": 0.2}


@lru_cache(maxsize=512)
def _playground_trace(kind: str, c: float, gamma: float, eps: float, window: int) -> Trace:
    means = piecewise_means(PLAYGROUND["n_arms"], PLAYGROUND["horizon"], PLAYGROUND["period"], rng=7)
    pol = make_policy(kind, PLAYGROUND["n_arms"], c=c, gamma=gamma, eps=eps, window=window, rng=1)
    return simulate_bandit(pol, means, PLAYGROUND["noise"], rng=2).thinned(300)


def playground_traces(gamma: float = 0.99, c: float = 0.1, eps: float = 0.1, window: int = 200) -> list[go.Scatter]:
    """Cumulative-regret lines of UCB1 (c), eps-greedy (eps), D-UCB (gamma, c), SW-UCB (window, c)."""
    runs = [("UCB1", _playground_trace("UCB1", c, 1.0, 0.0, 1)),
            ("eps-greedy", _playground_trace("eps-greedy", 0.0, 1.0, eps, 1)),
            ("D-UCB", _playground_trace("D-UCB", c, gamma, 0.0, 1)),
            ("SW-UCB", _playground_trace("SW-UCB", c, 1.0, 0.0, window))]
    return [go.Scatter(x=tr.iteration, y=tr["regret"], mode="lines", name=name,
                       line=dict(color=color_for(i), width=2.2)) for i, (name, tr) in enumerate(runs)]


def playground_figure(gamma: float = 0.99, c: float = 0.1, eps: float = 0.1, window: int = 200) -> go.Figure:
    """The bandit playground: cumulative regret on a piecewise-stationary bandit (5 Gaussian arms,
    means redrawn every 500 steps, dotted lines), one seed."""
    fig = go.Figure(playground_traces(gamma, c, eps, window))
    fig.update_layout(shapes=_change_shapes(PLAYGROUND["horizon"], PLAYGROUND["period"]))
    return base_layout(fig, title=f"gamma={gamma:g}, c={c:g}, eps={eps:g}, W={window}",
                       xaxis_title="step t (dotted: change points)", yaxis_title="cumulative regret", height=430)


GAMMA_GRID = (0.9, 0.95, 0.98, 0.99, 0.995, 1.0)


def playground_slider_figure(c: float = 0.1) -> go.Figure:
    """Static twin of the playground: a slider over the discount gamma of D-UCB."""
    steps = [SliderStep(f"{g:g}", playground_traces(gamma=g, c=c),
                        {"shapes": _change_shapes(PLAYGROUND["horizon"], PLAYGROUND["period"])})
             for g in GAMMA_GRID]
    return slider_figure(steps, slider_label="D-UCB discount gamma", active=GAMMA_GRID.index(0.99),
                         xaxis_title="step t (dotted: change points)", yaxis_title="cumulative regret")


def watch_bandit_figure(seed: int = 0) -> go.Figure:
    """Cumulative regret of every policy on the card's Check-1 bandit (T = 6000, change every 600
    steps), each at c = 0.1 (near the best of the grid for the trackers), stationary blocks shaded."""
    traces = [_bandit_run(kind, 0.1, seed, 6000, 600, 5, 0.2, *((1.0, 1, 0.0) if kind == "UCB1" else (0.99, 200, 0.05)))
              for kind in ("UCB1", "eps-greedy", "D-UCB", "SW-UCB", "D-UCB+eps")]
    phases = [Phase(600 * k, 600 * (k + 1), f"{k + 1}") for k in range(10)]
    return convergence_figure(traces, y="regret", logy=False, phases=phases,
                              xaxis_title="step t (shaded: stationary blocks 1-10)",
                              yaxis_title="cumulative regret")


def watch_proxy_figure(seed: int = 0) -> go.Figure:
    """Validation mAP per epoch on the proxy: MAT-Agent, the static default, random per epoch."""
    runs = [proxy_run("mat", seed), proxy_run("static", seed, DEFAULT_KEY), proxy_run("random", seed)]
    traces = [Trace.from_dict({**r["trace"].to_dict(), "method": name})
              for name, r in zip(("MAT-Agent", "static default", "random per epoch"), runs)]
    phases = [Phase(0, 4, "every arm once"), Phase(4, EPOCHS - 1, "D-UCB + eps choices")]
    return convergence_figure(traces, y="val_map", logy=False, phases=phases, xaxis_title="epoch",
                              yaxis_title="validation mAP")


def _timeline_traces(run: dict[str, Any], reference: dict[str, Any]) -> list[go.Scatter]:
    tr = run["trace"]
    ep = tr.iteration
    out = []
    for i, k in enumerate(AGENT_KEYS):
        out.append(go.Scatter(x=ep, y=tr[k], mode="lines+markers", name=f"{k} agent", showlegend=False,
                              line=dict(color=color_for(i), width=1, shape="hv"), marker=dict(size=7),
                              text=[MENUS[k][int(a)] for a in tr[k]], hovertemplate="epoch %{x}: %{text}",
                              xaxis=f"x{i + 1}" if i else "x", yaxis=f"y{i + 1}" if i else "y"))
    ref = reference["trace"]
    for j, (key, label) in enumerate((("val_map", "mAP"), ("val_rare_ap", "rare-label AP"))):
        out.append(go.Scatter(x=ep, y=tr[key], mode="lines+markers", name=f"MAT-Agent {label}",
                              line=dict(color=color_for(4 + j), width=2.2), xaxis="x5", yaxis="y5"))
        out.append(go.Scatter(x=ref.iteration, y=ref[key], mode="lines", name=f"static default {label}",
                              line=dict(color=color_for(4 + j), width=1.5, dash="dash"), xaxis="x5", yaxis="y5"))
    return out


@lru_cache(maxsize=1)
def _timeline_base_layout() -> dict:
    fig = make_subplots(rows=5, cols=1, shared_xaxes=True, vertical_spacing=0.025,
                        row_heights=[0.12, 0.1, 0.12, 0.12, 0.54])
    base_layout(fig, title="timeline", height=720)
    for i, k in enumerate(AGENT_KEYS):
        n = len(MENUS[k])
        fig.update_yaxes(tickvals=list(range(n)), ticktext=list(MENUS[k]), range=[-0.5, n - 0.5],
                         title_text=k.upper(), row=i + 1, col=1)
    fig.update_yaxes(title_text="validation score", range=[-0.02, 0.85], row=5, col=1)
    fig.update_xaxes(title_text="epoch", range=[-0.5, EPOCHS - 0.5], row=5, col=1)
    fig.update_layout(margin=dict(l=110))
    lay = fig.layout.to_plotly_json()
    lay.pop("template", None)
    return lay


def _timeline_layout(title: str | None = None) -> dict:
    lay = dict(_timeline_base_layout())
    if title:
        lay["title"] = {**lay["title"], "text": title}
    else:
        lay.pop("title", None)
        lay["margin"] = {**lay["margin"], "t": 70}
    return lay


def timeline_figure(seed: int = 0, smoothed: bool = False) -> go.Figure:
    """The agent timeline: each agent's choice per epoch (top four rows) aligned with validation
    mAP and rare-label AP of MAT-Agent and of the static default (bottom). ``smoothed``: the first
    version's credit (the reward smoothed across arms) instead of the per-arm centred credit."""
    run = proxy_run("mat", seed, None, "smoothed" if smoothed else "centred")
    ref = proxy_run("static", seed, DEFAULT_KEY)
    fig = go.Figure(_timeline_traces(run, ref))
    fig.update_layout(**_timeline_layout(f"seed {seed}, credit {'smoothed across arms' if smoothed else 'per arm'}: "
                                         f"{run['switches']} arm switches, test mAP {run['test_map']:.3f}"))
    fig.update_layout(template="plotly_white")
    return fig


def timeline_slider_figure() -> go.Figure:
    """Static twin of the agent timeline: a slider over the seed (per-arm credit)."""
    steps = [SliderStep(f"{s}", _timeline_traces(proxy_run("mat", s), proxy_run("static", s, DEFAULT_KEY)))
             for s in PROXY_SEEDS]
    fig = slider_figure(steps, slider_label="seed", fixed_axes=False, height=760)
    fig.update_layout(**_timeline_layout())
    fig.update_layout(template="plotly_white", margin=dict(b=110))
    return fig


def _warm_timeline() -> None:
    """Precompute every run the live timeline can show (so that each move answers at once)."""
    for s in PROXY_SEEDS:
        for credit in ("centred", "smoothed"):
            proxy_run("mat", s, None, credit)
        proxy_run("static", s, DEFAULT_KEY)


def _timeline_live(seed: int = 0, smoothed: bool = False) -> go.Figure:
    _warm_timeline()
    return timeline_figure(seed, smoothed)


EXPLORER_PLAYGROUND = Explorer(
    "20", "playground", playground_figure,
    {"gamma": Slider("D-UCB discount gamma", list(GAMMA_GRID), 0.99),
     "c": Slider("UCB constant c", [0.05, 0.1, 0.2, 0.5], 0.1),
     "eps": Slider("eps-greedy epsilon", [0.02, 0.05, 0.1, 0.2], 0.1),
     "window": Slider("SW-UCB window W", [50, 100, 200, 500, 1000], 200, fmt="{:d}")},
    description="Cumulative regret of four bandit policies on a piecewise-stationary bandit.")

EXPLORER_TIMELINE = Explorer(
    "20", "timeline", _timeline_live,
    {"seed": Slider("seed", list(PROXY_SEEDS), 0, fmt="{:d}"),
     "smoothed": Toggle("credit smoothed across arms (first version)", False)},
    description="Which option each agent picks per epoch, with validation mAP and rare-label AP.")


# ====================================================================== numbers for the prose


def watch_numbers(seed: int = 0) -> dict[str, tuple[Any, str]]:
    """Glue-ready numbers of the "watch it run" section: the blocks of the bandit of
    :func:`watch_bandit_figure` whose best arm differs from the previous block's, and the test mAP
    and arm switches of the proxy runs of :func:`watch_proxy_figure`."""
    means = piecewise_means(5, 6000, 600, rng=1000 + seed)[::600]
    best = means.argmax(axis=1)
    changed = [str(b + 1) for b in range(1, len(best)) if best[b] != best[b - 1]]
    runs = {"mat": proxy_run("mat", seed), "default": proxy_run("static", seed, DEFAULT_KEY),
            "random": proxy_run("random", seed)}
    out: dict[str, tuple[Any, str]] = {"watch_changed": (", ".join(changed), "{}")}
    for name, r in runs.items():
        out[f"watch_map_{name}"] = (r["test_map"], "{:.3f}")
        out[f"watch_sw_{name}"] = (r["switches"], "{:d}")
    return out
