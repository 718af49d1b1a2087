"""Chapter 37's experiments, claims and figures: Ada-R1's adaptive reasoning depth.

The recipe lives in :mod:`optbook.llm.adaptive_reasoning`; this module draws the problems, builds
each method's preference pairs, tunes every trained method on held-out seeds, registers the
claims and builds the figures (static slider figures and their live twins).
"""
from __future__ import annotations

from functools import lru_cache

import numpy as np
import plotly.graph_objects as go

from ..claims import Criterion, Measured, claim
from ..core import check_choice, check_in_range, check_int, grid_search
from ..viz import Phase, SliderStep, base_layout, color_for, frame_note, phase_layout, slider_figure
from ..viz.style import line_style
from ..widgets import Explorer, Slider
from .adaptive_reasoning import (
    LONG,
    SHORT,
    ReasoningWorld,
    StylePolicy,
    build_pairs,
    crossover_difficulty,
    dpo_loss,
    expected_metrics,
    gain_score,
    merge,
    sample_responses,
    train_dpo,
)

#: Seeds the claims are measured on, and the held-out seeds every trained method is tuned on.
CLAIM_SEEDS = (0, 1, 2, 3, 4)
TUNING_SEEDS = (100, 101, 102)
N_PROBLEMS = 300  # training problems per seed (the card's 10 bins x 30)
N_TEST = 4000  # fresh problems the policies are scored on (closed-form expectations)
K = 12  # samples per model per problem (official code)
STEPS = 300
W_MERGE = 0.8  # the paper's merge weight of the Long-CoT model
#: The same 12-setting budget for every tuned method.
BETAS = (0.02, 0.05, 0.1)
LRS = (30.0, 100.0, 300.0, 1000.0)
MERGE_WEIGHTS = tuple(np.round(np.linspace(0.45, 1.0, 12), 2).tolist())
#: The paper's Figure 1 (as summarised by alphaXiv): 48% of problems gain from Long-CoT, 45% do
#: not, 7% lose. The headline's world gives 52% of problems no gain from Long-CoT.
PAPER_EASY_SHARE = 0.52
#: Accuracy tolerance (points / 100) of "performance maintained": the paper's 7B model lost 1.65.
ACC_TOL = 0.02
METHODS = ("long-only", "short-only", "merged", "group-only DPO", "instance-only DPO", "bi-level DPO (Ada-R1)")
TRAINED = METHODS[2:]
ADA = METHODS[-1]
SHARES = (0.0, 0.1, 0.151, 0.3, 0.4, 0.52, 0.6, 0.7, 0.8)
SNAPSHOT_STEPS = (0, 10, 20, 40, 80, 150, 300)

GLUE_FORMATS = {
    name: {"acc_drop": "{:.3f}", "len_ratio": "{:.2f}", "len_cut": "{:.0%}", "len_vs_group": "{:.2f}",
           "len_vs_best_baseline": "{:.2f}", "acc_long": "{:.3f}", "acc_method": "{:.3f}",
           "acc_short": "{:.3f}", "len_ratio_spread": "{:.2f}", "group_len_ratio": "{:.2f}",
           "instance_len_ratio": "{:.2f}", "merged_len_ratio": "{:.2f}", "acc_drop_max": "{:.3f}"}
    for name in ("length_cut", "uniform_world")
}


def world(share: float | None) -> ReasoningWorld:
    """The toy world with a share ``share`` of easy problems (None: uniform difficulty, the card's world)."""
    if share is None:
        return ReasoningWorld(easy_share=crossover_difficulty(K))
    return ReasoningWorld(easy_share=check_in_range(share, "share", 0.0, 1.0, closed=(True, True)))


@lru_cache(maxsize=64)
def data(seed: int, share: float | None) -> dict:
    """One seed's problems, the K samples of the Long-CoT and Short-CoT models, and the test set."""
    seed = check_int(seed, "seed")
    w = world(share)
    g = np.random.default_rng([37, seed])
    d = w.sample_difficulties(N_PROBLEMS, g)
    long, short = StylePolicy.constant(w.n_bins, 1.0), StylePolicy.constant(w.n_bins, 0.0)
    test = w.sample_difficulties(N_TEST, np.random.default_rng([37, seed, 1]))
    return {"world": w, "d": d, "bins": w.bins(d), "long_model": long, "short_model": short,
            "long": sample_responses(long, w, d, K, g), "short": sample_responses(short, w, d, K, g),
            "test": test, "long_metrics": expected_metrics(long, w, test)}


@lru_cache(maxsize=128)
def pairs_for(seed: int, share: float | None, method: str):
    """The preference pairs ``method`` trains on: both levels (Ada-R1), group level only, or the
    instance level inside the Long-CoT group only (a length-preference baseline on the long model)."""
    r = data(seed, share)
    opts = {"bi-level DPO (Ada-R1)": {}, "group-only DPO": {"levels": ("group",)},
            "instance-only DPO": {"levels": ("instance",), "force": "long"}}[method]
    return build_pairs(r["long"], r["short"], r["bins"], rng=np.random.default_rng([37, seed, 2]), **opts)


def reference(method: str, seed: int, share: float | None, w_long: float = W_MERGE) -> StylePolicy:
    r = data(seed, share)
    if method in ("long-only", "instance-only DPO"):
        return r["long_model"]
    if method == "short-only":
        return r["short_model"]
    return merge(r["long_model"], r["short_model"], w_long)


def run_method(method: str, seed: int, share: float | None, *, beta: float = 0.1, lr: float = 30.0,
               w_long: float = W_MERGE, steps: int = STEPS) -> dict:
    """Train (if ``method`` trains) and score on the seed's test problems: accuracy, mean length,
    and both relative to the Long-CoT model."""
    check_choice(method, "method", METHODS)
    r = data(seed, share)
    policy, trace = reference(method, seed, share, w_long), None
    if method.endswith("DPO") or method == ADA:
        policy, trace = train_dpo(policy, pairs_for(seed, share, method), beta=beta, lr=lr, steps=steps)
    acc, length = expected_metrics(policy, r["world"], r["test"])
    acc_long, len_long = r["long_metrics"]
    return {"acc": acc, "length": length, "acc_drop": acc_long - acc, "len_ratio": length / len_long,
            "policy": policy, "trace": trace}


def tuning_score(method: str, seed: int, share: float | None, **setting) -> float:
    """Length relative to Long-CoT, plus 10 per point of accuracy lost beyond :data:`ACC_TOL`
    (lower is better): the shortest policy that keeps the accuracy."""
    r = run_method(method, seed, share, **setting)
    return r["len_ratio"] + 10.0 * max(0.0, r["acc_drop"] - ACC_TOL)


def grid_for(method: str) -> dict:
    if method == "merged":
        return {"w_long": MERGE_WEIGHTS}
    return {"beta": BETAS, "lr": LRS}


@lru_cache(maxsize=8)
def tunings(share: float | None, fast: bool = False) -> dict:
    """Each trained method's grid search (12 settings) on the held-out :data:`TUNING_SEEDS`."""
    seeds = TUNING_SEEDS[:1] if fast else TUNING_SEEDS
    return {m: grid_search(m, lambda seed, m=m, **st: tuning_score(m, seed, share, **st), grid_for(m), seeds)
            for m in TRAINED}


@lru_cache(maxsize=8)
def compare(share: float | None, seeds: tuple[int, ...], fast: bool = False) -> list[dict]:
    """Every method at its tuned setting on each claim seed."""
    tuned = tunings(share, fast)
    rows = []
    for s in seeds:
        row = {"seed": s}
        for m in METHODS:
            res = run_method(m, s, share, **(tuned[m].best if m in tuned else {}))
            row[m] = {k: res[k] for k in ("acc", "length", "acc_drop", "len_ratio")}
        rows.append(row)
    return rows


#: A second grid for the control (added at review, after the registered grid put group-only DPO's
#: best in its most-trained corner, beta 0.02 and step 1000): the same 12-setting budget, recentred
#: on that corner and reaching past it in both directions.
WIDE_BETAS = (0.005, 0.01, 0.02)
WIDE_LRS = (300.0, 1000.0, 3000.0, 10000.0)


@lru_cache(maxsize=4)
def wide_group_check(share: float | None) -> dict:
    """Group-only DPO re-tuned on :data:`WIDE_BETAS` x :data:`WIDE_LRS` (held-out seeds), then
    measured on the claim seeds beside bi-level DPO at its registered tuning: does a wider grid
    close the gap?"""
    m = "group-only DPO"
    tu = grid_search(m, lambda seed, **st: tuning_score(m, seed, share, **st),
                     {"beta": WIDE_BETAS, "lr": WIDE_LRS}, TUNING_SEEDS)
    rows = compare(share, CLAIM_SEEDS, False)
    group = [run_method(m, s, share, **tu.best) for s in CLAIM_SEEDS]
    return {"tuning": tu, "best": tu.best, "on_edge": tu.on_edge(),
            "len_ratio": float(np.median([g["len_ratio"] for g in group])),
            "len_ratios": [g["len_ratio"] for g in group],
            "acc_drop": float(np.median([g["acc_drop"] for g in group])),
            "ada_vs_wide": float(np.median([r[ADA]["length"] / g["length"] for r, g in zip(rows, group)]))}


def _claim(share: float | None, len_max: float, fast: bool, control: bool) -> Measured:
    seeds = CLAIM_SEEDS[:3] if fast else CLAIM_SEEDS
    rows = compare(share, seeds, fast)
    method = "group-only DPO" if control else ADA
    # The control is compared with the other baselines, never with itself: "shorter than itself"
    # would fail by construction, not for want of the instance level.
    baselines = [m for m in METHODS if m not in (ADA, "long-only", method)]

    def med(m: str, key: str) -> float:
        return float(np.median([r[m][key] for r in rows]))

    best_base = []
    for r in rows:
        ok = [r[m]["length"] for m in baselines if r[m]["acc_drop"] <= ACC_TOL]
        best_base.append(r[method]["length"] / min(ok) if ok else 0.0)
    ratios = np.array([r[method]["len_ratio"] for r in rows])
    values = {"acc_drop": med(method, "acc_drop"), "acc_drop_max": max(r[method]["acc_drop"] for r in rows),
              "len_ratio": float(np.median(ratios)), "len_cut": 1 - float(np.median(ratios)),
              "len_ratio_spread": float(ratios.max() - ratios.min()),
              "len_vs_group": float(np.median([r[method]["length"] / r["group-only DPO"]["length"] for r in rows])),
              "len_vs_best_baseline": float(np.median(best_base)),
              "acc_long": med("long-only", "acc"), "acc_short": med("short-only", "acc"), "acc_method": med(method, "acc"),
              "group_len_ratio": med("group-only DPO", "len_ratio"),
              "instance_len_ratio": med("instance-only DPO", "len_ratio"), "merged_len_ratio": med("merged", "len_ratio")}
    who = "group-only DPO (control)" if control else "bi-level DPO"
    criteria = [Criterion("acc_drop", "<=", ACC_TOL), Criterion("len_ratio", "<=", len_max),
                Criterion("len_vs_best_baseline", "<", 1.0)]
    if not control:  # for the control this ratio is 1 by construction; its verdict rests on the others
        criteria.insert(2, Criterion("len_vs_group", "<", 1.0))
    return Measured(values, criteria=criteria,
                    seeds=seeds, precondition=bool(values["acc_long"] - values["acc_short"] > ACC_TOL),
                    summary=f"{who}: length {values['len_ratio']:.2f} x Long-CoT, accuracy "
                            f"{-values['acc_drop']:+.3f} (median of {len(seeds)} seeds)",
                    details={"rows": rows, "tunings": list(tunings(share, fast).values())})


_CRITERION = ("median over seeds 0-4 (300 training problems, K = 12 samples per model, 4000 fresh test problems "
              "each): accuracy drop vs Long-CoT <= 0.02, mean length <= {len_max} x Long-CoT's, and strictly "
              "shorter (ratio < 1) than both group-only DPO and the shortest tuned baseline within 0.02 of "
              "Long-CoT's accuracy (merged model, short-only, group-only DPO, instance-only DPO). Every trained "
              "method (merge weight; beta x lr for the three DPO variants) gets the same 12-setting grid, tuned "
              "on held-out seeds 100-102 by length ratio + 10 x (accuracy drop beyond 0.02). The DPO grid was moved from "
              "beta {{0.05, 0.1, 0.2}} x lr {{3, 10, 30, 100}} to beta {{0.02, 0.05, 0.1}} x lr {{30, 100, 300, 1000}} after "
              "the first full run of the headline (which met every threshold) found bi-level's and group-only's best "
              "settings on the grid's edge; thresholds unchanged.")


@claim("37", "Bi-level preference training halves the reasoning length at Long-CoT accuracy", kind="reproduction",
       name="length_cut",
       paper="on five maths datasets the average reasoning length is cut by more than 50% while performance is "
             "maintained (7B model: -50.93% length, -1.65 accuracy points on average vs the Long-CoT model)",
       expect="toy world where 52% of problems gain nothing from Long-CoT (the paper's Figure 1: 45% no gain, "
              "7% a loss). " + _CRITERION.format(len_max=0.5) + " Thresholds are the paper's (>50% cut, within "
              "2 points); registered before the full run.",
       control="group-level-only DPO (the instance-level pairs dropped) in bi-level DPO's place: it must fail "
               "the length criteria at equal accuracy (the self-comparison 'shorter than group-only', 1 by "
               "construction, is left out of the control's criteria, and it is compared with the other baselines "
               "only; amended at review)")
def claim_length_cut(fast: bool = False, control: bool = False) -> Measured:
    return _claim(PAPER_EASY_SHARE, 0.5, fast, control)


@claim("37", "In the card's uniform world: 30% shorter at Long-CoT accuracy", kind="reproduction",
       name="uniform_world",
       paper="the length cut depends on the share of problems that Long-CoT does not help (the paper's "
             "datasets: 52%); the issue's prototype thresholds for a uniform difficulty",
       expect="toy world with uniform difficulty (15% of problems gain nothing from Long-CoT). "
              + _CRITERION.format(len_max=0.7) + " The 0.7 is the issue's threshold; registered before the full run.",
       control="group-level-only DPO in bi-level DPO's place: it must fail the length criteria at equal accuracy "
               "(its self-comparison, 1 by construction, left out; amended at review)")
def claim_uniform_world(fast: bool = False, control: bool = False) -> Measured:
    return _claim(None, 0.7, fast, control)


@claim("37", "DPO starts at log 2 from the merged model and the closed form matches sampling", kind="identity",
       name="dpo_start",
       expect="for seeds 0-4: |DPO loss at the merged reference - log 2| <= 1e-12 and the closed-form accuracy "
              "and length of the merged policy match a 12-sample Monte Carlo estimate within 4 standard errors")
def claim_dpo_start(fast: bool = False) -> Measured:
    gaps, zs = [], []
    for s in CLAIM_SEEDS[:2] if fast else CLAIM_SEEDS:
        r = data(s, PAPER_EASY_SHARE)
        ref = reference(ADA, s, PAPER_EASY_SHARE)
        gaps.append(abs(dpo_loss(ref, ref, pairs_for(s, PAPER_EASY_SHARE, ADA), 0.1)[0] - np.log(2)))
        acc, length = expected_metrics(ref, r["world"], r["test"])
        mc = sample_responses(ref, r["world"], r["test"], K, np.random.default_rng([37, s, 3]))
        for x, mu in ((mc.correct.astype(float), acc), (mc.length, length)):
            se = x.mean(axis=1).std() / np.sqrt(x.shape[0])
            zs.append(abs(x.mean() - mu) / se)
    return Measured({"max_loss_gap": max(gaps), "max_z": max(zs)},
                    criteria=[Criterion("max_loss_gap", "<=", 1e-12), Criterion("max_z", "<=", 4.0)],
                    summary=f"|loss - log 2| <= {max(gaps):.1e}; closed form vs sampling within {max(zs):.1f} s.e.")


# ---------------------------------------------------------------- figures

_NAMES = {"long-only": "Long-CoT only", "short-only": "Short-CoT only", "merged": "merged (untrained)",
          "group-only DPO": "group-only DPO", "instance-only DPO": "instance-only DPO",
          "bi-level DPO (Ada-R1)": "bi-level DPO (Ada-R1)"}


def gain_figure(k: int = K, seed: int = 0) -> go.Figure:
    """Accuracy of each style against difficulty, and the share of problems the gain rule sends
    to Long-CoT from ``k`` samples per model (noisy near the crossover)."""
    k = check_int(k, "k", minimum=1)
    w = world(None)
    d = np.linspace(0, 1, 401)
    acc = w.accuracy(d)
    g = np.random.default_rng([37, seed, 4])
    dd = np.repeat(np.linspace(0.0, 1.0, 41), 200)
    rl = sample_responses(StylePolicy.constant(w.n_bins, 1.0), w, dd, k, g)
    rs = sample_responses(StylePolicy.constant(w.n_bins, 0.0), w, dd, k, g)
    gain = gain_score(rl.correct.mean(1), rs.correct.mean(1), rl.length.mean(1), rs.length.mean(1), k)
    frac = (gain > 0).reshape(41, 200).mean(axis=1)
    fig = go.Figure([
        go.Scatter(x=d, y=acc[:, LONG], mode="lines", name="accuracy, Long-CoT", **line_style(0)),
        go.Scatter(x=d, y=acc[:, SHORT], mode="lines", name="accuracy, Short-CoT", **line_style(1)),
        go.Scatter(x=np.linspace(0, 1, 41), y=frac, mode="lines+markers", name=f"labelled 'long' (K={k})",
                   **line_style(2)),
    ])
    dc = crossover_difficulty(k)
    fig.add_vline(x=dc, line=dict(color="grey", dash="dot"))
    fig.add_annotation(x=dc, y=0.08, text=f" gain crosses 0 at d = {dc:.2f}", showarrow=False, xanchor="left")
    return base_layout(fig, title="Long-CoT pays off only on harder problems", xaxis_title="difficulty d",
                       yaxis_title="accuracy / share labelled long", height=430)


@lru_cache(maxsize=16)
def share_sweep(share: float, seed: int = 0) -> dict:
    """Every method on one seed of a world with easy share ``share``, at the hyperparameters tuned
    for the headline claim (no re-tuning per share), plus the merge line (w_L from 0 to 1)."""
    tuned = tunings(PAPER_EASY_SHARE, False)  # the same cache entry as the headline claim
    out = {}
    for m in METHODS:
        r = run_method(m, seed, share, **(tuned[m].best if m in tuned else {}))
        out[m] = (r["acc"], r["length"])
    line = [run_method("merged", seed, share, w_long=w) for w in np.linspace(0, 1, 11)]
    out["merge line"] = (np.array([r["acc"] for r in line]), np.array([r["length"] for r in line]))
    return out


def _frontier_traces(share: float) -> list:
    r = share_sweep(share)
    traces = [go.Scatter(x=r["merge line"][1], y=r["merge line"][0], mode="lines", name="merge weight 0 → 1",
                         line=dict(color="rgba(120,120,120,0.6)", width=2, dash="dot"), hoverinfo="skip")]
    for i, m in enumerate(METHODS):
        traces.append(go.Scatter(x=[r[m][1]], y=[r[m][0]], mode="markers", name=_NAMES[m],
                                 marker=dict(color=color_for(i), size=13 if m == ADA else 10,
                                             symbol="star" if m == ADA else "circle")))
    return traces


def _frontier_note(share: float) -> dict:
    """The frame's numbers, in the empty bottom-right corner (below the merge line)."""
    r = share_sweep(share)
    ll = r["long-only"][1]
    text = (f"{share:.0%} of problems: Long-CoT no help<br>length / Long-CoT: bi-level {r[ADA][1] / ll:.2f}<br>"
            f"group-only {r['group-only DPO'][1] / ll:.2f}, instance-only {r['instance-only DPO'][1] / ll:.2f}<br>"
            f"accuracy: bi-level {r[ADA][0]:.3f}<br>Long-CoT {r['long-only'][0]:.3f}")
    layout = frame_note(text)
    layout["annotations"][0].update(x=0.99, y=0.01, xanchor="right", yanchor="bottom", align="right")
    return layout


_FRONTIER_AXES = dict(xaxis_title="mean length (tokens)", yaxis_title="expected accuracy")


def share_slider_figure() -> go.Figure:
    """The accuracy-length plane, one frame per share of easy problems."""
    steps = [SliderStep(f"{s:.0%}", _frontier_traces(s), _frontier_note(s)) for s in SHARES]
    fig = slider_figure(steps, slider_label="share of problems Long-CoT does not help", active=SHARES.index(0.52),
                        title="Accuracy against length: bi-level DPO sits up and to the left", height=520,
                        **_FRONTIER_AXES)
    fig.update_xaxes(range=[0, 5200])
    fig.update_yaxes(range=[0.45, 1.0])
    return fig


@lru_cache(maxsize=1)
def _share_layout_json() -> dict:
    """The live twin's layout, built once (plotly's validation is a third of a move's time)."""
    fig = base_layout(go.Figure(), title="Accuracy against length", height=520, **_FRONTIER_AXES)
    fig.update_xaxes(range=[0, 5200])
    fig.update_yaxes(range=[0.45, 1.0])
    return fig.layout.to_plotly_json()


@lru_cache(maxsize=1)
def _all_share_sweeps() -> None:
    """Every slider position's sweep, computed at the live explorer's first draw: a cold position
    costs three DPO trainings (100-175 ms of CPU), over the 150 ms a move may take; the notebook's
    static twin, drawn earlier, computes the same sweeps."""
    for s in SHARES:
        share_sweep(s)


def share_figure(share: float = 0.52) -> go.Figure:
    """The live twin of :func:`share_slider_figure`."""
    share = check_in_range(share, "share", 0.0, 1.0, closed=(True, True))  # before the cold tuning runs
    _all_share_sweeps()
    fig = go.Figure(_frontier_traces(share), layout=_share_layout_json())
    fig.update_layout(annotations=_frontier_note(share)["annotations"])
    return fig


@lru_cache(maxsize=2)
def training_runs(seed: int = 0) -> dict:
    """The three DPO variants on the headline world, with the metrics of every recorded snapshot."""
    tuned = tunings(PAPER_EASY_SHARE, False)  # the same cache entry as the headline claim
    r = data(seed, PAPER_EASY_SHARE)
    out = {}
    for m in ("group-only DPO", "instance-only DPO", ADA):
        res = run_method(m, seed, PAPER_EASY_SHARE, **tuned[m].best)
        snaps = res["trace"].meta["snapshots"]
        metrics = [expected_metrics(StylePolicy(z, v), r["world"], r["test"]) for _, z, v in snaps]
        out[m] = {"steps": np.array([s for s, _, _ in snaps]), "z": [z for _, z, _ in snaps],
                  "v": [v for _, _, v in snaps], "acc": np.array([a for a, _ in metrics]),
                  "len_ratio": np.array([ln for _, ln in metrics]) / r["long_metrics"][1], "trace": res["trace"]}
    pairs = pairs_for(seed, PAPER_EASY_SHARE, ADA)
    pref = pairs.preferred
    ok = pref >= 0
    out["labelled_long"] = np.array([np.mean(pref[ok & (r["bins"] == b)] == LONG) if np.any(ok & (r["bins"] == b))
                                     else np.nan for b in range(r["world"].n_bins)])
    return out


def training_figure(seed: int = 0) -> go.Figure:
    """Length (relative to Long-CoT) of the three DPO variants along training, phases named."""
    runs = training_runs(seed)
    fig = go.Figure()
    for i, m in enumerate(("group-only DPO", "instance-only DPO", ADA)):
        fig.add_trace(go.Scatter(x=runs[m]["steps"], y=runs[m]["len_ratio"], mode="lines", name=_NAMES[m],
                                 **line_style(i + 3)))
    ada = runs[ADA]
    p_verbose = np.array([1 / (1 + np.exp(-v[LONG])) for v in ada["v"]])
    t_concise = int(ada["steps"][np.argmax(p_verbose < 0.05)])
    settled = np.abs(ada["len_ratio"] - ada["len_ratio"][-1]) < 0.005
    t_settled = int(ada["steps"][np.argmax(settled)])
    fig.update_layout(**phase_layout([Phase(0, t_concise, "concise"), Phase(t_concise, t_settled, "routing the crossing"),
                                      Phase(t_settled, STEPS, "settled")]))
    fig.add_hline(y=0.5, line=dict(color="grey", dash="dot"))
    return base_layout(fig, title="Reasoning length during preference training (headline world, seed 0)",
                       xaxis_title="DPO step", yaxis_title="mean length / Long-CoT's", height=430)


def _style_traces(step: int, seed: int = 0) -> list:
    runs = training_runs(seed)
    bins = np.arange(10)
    centres = (bins + 0.5) / 10
    traces = [go.Bar(x=centres, y=runs["labelled_long"], name="offline label: long (share of problems)",
                     marker=dict(color="rgba(150,150,150,0.45)"), width=0.09)]
    for i, m in enumerate(("group-only DPO", ADA)):
        j = int(np.searchsorted(runs[m]["steps"], step))
        traces.append(go.Scatter(x=centres, y=1 / (1 + np.exp(-runs[m]["z"][j])), mode="lines+markers",
                                 name=f"P(long), {_NAMES[m]}", **line_style(3 + 2 * i)))
    return traces


def _style_note(step: int, seed: int = 0) -> str:
    ada = training_runs(seed)[ADA]
    j = int(np.searchsorted(ada["steps"], step))
    pv = 1 / (1 + np.exp(-ada["v"][j]))
    return (f"step {step}: P(verbose) long {pv[LONG]:.2f}, short {pv[SHORT]:.2f}<br>"
            f"length {ada['len_ratio'][j]:.2f} x Long-CoT, accuracy {ada['acc'][j]:.3f}")


_STYLE_AXES = dict(xaxis_title="difficulty (bin centre)", yaxis_title="probability")


def style_slider_figure() -> go.Figure:
    """Per-difficulty style choice along training, one frame per DPO step."""
    steps = [SliderStep(str(s), _style_traces(s), frame_note(_style_note(s))) for s in SNAPSHOT_STEPS]
    fig = slider_figure(steps, slider_label="DPO step", active=len(SNAPSHOT_STEPS) - 1,
                        title="Which style the model picks, per difficulty", height=480, **_STYLE_AXES)
    fig.update_yaxes(range=[0, 1.25])
    return fig


def style_figure(step: int = STEPS) -> go.Figure:
    """The live twin of :func:`style_slider_figure` (``step``: a DPO step in 0..300)."""
    step = check_int(step, "step")
    if step > STEPS:
        raise ValueError(f"step must be <= {STEPS}, got {step}")
    fig = go.Figure(_style_traces(step), layout=frame_note(_style_note(step)))
    base_layout(fig, title="Which style the model picks, per difficulty", height=480, **_STYLE_AXES)
    fig.update_yaxes(range=[0, 1.25])
    return fig


def pair_examples(seed: int = 0, problem: int | None = None) -> list[dict]:
    """The preference pairs of one problem (by default the first with both levels), as table rows."""
    pairs = pairs_for(seed, PAPER_EASY_SHARE, ADA)
    if problem is None:
        both = [p for p in np.unique(pairs.problem) if set(pairs.level[pairs.problem == p]) == {0, 1}]
        problem = int(both[0])
    sel = pairs.problem == problem
    lab = lambda st, vb, ln, ok: f"{('short', 'long')[st]}, {('concise', 'verbose')[vb]}, {ln:.0f} tok, {'✓' if ok else '✗'}"  # noqa: E731,E501
    return [{"level": ("group", "instance")[pairs.level[i]],
             "chosen": lab(pairs.w_style[i], pairs.w_verb[i], pairs.w_len[i], pairs.w_correct[i]),
             "rejected": lab(pairs.l_style[i], pairs.l_verb[i], pairs.l_len[i], pairs.l_correct[i])}
            for i in np.flatnonzero(sel)]


EXPLORER_SHARE = Explorer("37", "easy_share", share_figure,
                          {"share": Slider("share Long-CoT does not help", SHARES, 0.52)})
EXPLORER_STYLE = Explorer("37", "style_choice", style_figure, {"step": Slider("DPO step", SNAPSHOT_STEPS, STEPS)})
