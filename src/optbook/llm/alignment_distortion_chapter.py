"""Chapter 34's experiments, claims and figures: the distortion of alignment.

The methods live in :mod:`optbook.llm.alignment_distortion`; this module holds the card's
instance, the adversarial search over populations (the reproduction), the identities and the
figures (static slider figures and their live twins).
"""
from __future__ import annotations

import itertools
from functools import lru_cache

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots
from scipy.special import expit, logit

from ..claims import Criterion, Measured, claim
from ..core import check_in_range, check_int, check_positive
from ..viz import SliderStep, base_layout, frame_note, slider_figure
from ..viz.style import color_for, line_style
from ..widgets import Explorer, Slider
from .alignment_distortion import (
    average_utility,
    borda_scores,
    bt_reward,
    distortion,
    kl_divergence,
    kl_tilt,
    maximal_lottery,
    nlhf_kl,
    preference_matrix,
    rlhf_policy,
    two_alternative_distortion,
    two_alternative_instance,
    uniform_pairs,
)

#: Seeds of the adversarial searches the claim rests on.
CLAIM_SEEDS = (0, 1, 2, 3, 4)
#: The search's setting: BT temperature, alternatives, user types, hill-climbing steps.
SEARCH = dict(beta=10.0, m=4, K=3, steps=1500)
FAST_STEPS = SEARCH["steps"]  # fast mode runs fewer seeds, not shorter searches
#: The control's search length: the skewed adversary scores all 16 spanning trees (pair
#: distributions) of 4 responses at each step, so the uniform-pairs search gets 16 times the steps
#: to match it in distortion evaluations (referee's fix; the registered control had 1500 steps).
CONTROL_STEPS = 16 * SEARCH["steps"]
#: Weight of the uniform pair distribution mixed into the adversary's spanning-tree ``mu`` (every
#: pair is then sampled, and the BT reward is identified).
TREE_MIX = 1e-6

#: The card's instance (ours, found by a search; beta = 10): weights, utilities, pair weights.
CARD_W = np.array([0.024, 0.455, 0.521])
CARD_U = np.array([[0.643, 0.703, 0.675, 0.884], [0.0, 0.06, 1.0, 0.169], [1.0, 0.001, 0.752, 0.084]])
_CARD_PAIRS = {(0, 1): 0.337, (0, 2): 0.401, (0, 3): 0.016, (1, 2): 0.006, (1, 3): 0.239, (2, 3): 0.001}
CARD_MU = np.zeros((4, 4))
for (_a, _b), _x in _CARD_PAIRS.items():
    CARD_MU[_a, _b] = CARD_MU[_b, _a] = _x
CARD_MU /= CARD_MU.sum()
CARD_BETA = 10.0

BETAS = (2.0, 5.0, 10.0, 20.0)
SKEWS = (0.0, 0.2, 0.4, 0.6, 0.8, 0.9, 0.95, 1.0)
TAUS = (0.01, 0.05, 0.1, 0.25, 0.5, 1.0, 2.0, 4.0)
KL_BETAS = (2.0, 5.0, 10.0)
#: The KL experiment's reference policy: little mass on the best alternative (2).
KL_REF = np.array([0.4, 0.3, 0.02, 0.28])
METHODS = ("RLHF/DPO", "NLHF (maximal lottery)")

GLUE_FORMATS = {
    "rlhf_skew": {"median_rlhf": "{:.2f}", "min_rlhf": "{:.2f}", "max_rlhf": "{:.2f}", "half_beta": "{:g}",
                  "max_nlhf": "{:.2f}", "median_borda": "{:.2f}", "median_reward_gap": "{:.1e}",
                  "survive_1pct_uniform": "{:.0f}"},
    "card_instance": {"rlhf_skewed": "{:.2f}", "rlhf_uniform": "{:.2f}", "nlhf": "{:.2f}"},
}


# ---------------------------------------------------------------- the adversary's search


@lru_cache(maxsize=8)
def spanning_trees(m: int) -> tuple:
    """Every spanning tree of the complete graph on ``m`` alternatives, as (edges, A) with
    ``A @ logits(edges)`` the rewards (alternative 0 at zero). On a tree the BT fit is exact: each
    compared pair's reward gap equals the logit of its preference probability."""
    m = check_int(m, "m", minimum=2)
    pairs = list(itertools.combinations(range(m), 2))
    out = []
    for edges in itertools.combinations(pairs, m - 1):
        B = np.zeros((m - 1, m))
        for i, (a, b) in enumerate(edges):
            B[i, a], B[i, b] = 1.0, -1.0
        if abs(np.linalg.det(B[:, 1:])) > 0.5:
            out.append((edges, np.vstack([np.zeros(m - 1), np.linalg.inv(B[:, 1:])])))
    return tuple(out)


def tree_mu(edges, m: int, mix: float = TREE_MIX) -> np.ndarray:
    """Pair weights uniform on a spanning tree's edges, mixed with ``mix`` of the uniform ones."""
    mu = np.zeros((m, m))
    for a, b in edges:
        mu[a, b] = mu[b, a] = 1.0
    return (1 - mix) * mu / mu.sum() + mix * uniform_pairs(m)


def _unpack(x: np.ndarray, K: int, m: int) -> tuple[np.ndarray, np.ndarray]:
    z = x[K * m:]
    e = np.exp(z - np.amax(z, keepdims=True))  # scipy's softmax, same arithmetic, less overhead (hot loop)
    return np.clip(x[:K * m].reshape(K, m), 0.0, 1.0), e / np.sum(e, keepdims=True)


def _adversary_score(x: np.ndarray, K: int, m: int, beta: float, skew: bool) -> tuple[float, int]:
    """RLHF's distortion on population ``x`` under the adversary's best pair distribution (skew:
    a spanning tree, scored by the exact tree fit) or uniform pairs (RLHF = Borda)."""
    U, w = _unpack(x, K, m)
    v = w @ U  # average_utility and preference_matrix, without their input checks (hot loop)
    if v.max() <= 0:
        return 0.0, -1
    P = np.einsum("k,kab->ab", w, expit(beta * (U[:, :, None] - U[:, None, :])))
    if not skew:
        return v.max() / max(v[np.argmax(P.sum(1))], 1e-12), -1  # Borda winner (borda_scores, unchecked)
    L = logit(np.clip(P, 1e-300, 1.0))
    ea, eb, A = _tree_arrays(m)
    r = np.einsum("tij,tj->ti", A, L[ea, eb])
    d = v.max() / np.maximum(v[np.argmax(r, axis=1)], 1e-12)
    which = int(np.argmax(d))
    return float(d[which]), which


@lru_cache(maxsize=8)
def _tree_arrays(m: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    trees = spanning_trees(m)
    ea = np.array([[a for a, _ in e] for e, _ in trees])
    eb = np.array([[b for _, b in e] for e, _ in trees])
    return ea, eb, np.stack([A for _, A in trees])


@lru_cache(maxsize=32)
def adversarial_search(seed: int, *, skew: bool = True, steps: int = SEARCH["steps"], beta: float = SEARCH["beta"],
                       m: int = SEARCH["m"], K: int = SEARCH["K"]) -> dict:
    """Hill-climb over populations (``K`` user types' utilities in [0, 1] and weights) to maximise
    RLHF's distortion; with ``skew`` the adversary also picks the pair distribution (a spanning
    tree of comparisons), without it pairs are uniform. Returns the instance, the pair distribution
    and each method's exact distortion on it (RLHF by :func:`bt_reward`, NLHF by the LP). Cached:
    the notebook's figure reuses the claim's searches (do not mutate the result)."""
    seed = check_int(seed, "seed")
    steps = check_int(steps, "steps", minimum=1)
    beta = check_positive(beta, "beta")
    m, K = check_int(m, "m", minimum=2), check_int(K, "K", minimum=1)
    g = np.random.default_rng([34, seed])
    n = K * m + K
    x = np.concatenate([g.uniform(0, 1, K * m), g.normal(0, 1, K)])
    best = _adversary_score(x, K, m, beta, skew)
    for it in range(steps):
        y = x.copy()
        idx = g.choice(n, size=int(g.integers(1, 4)), replace=False)
        y[idx] += (0.3 * (1 - it / steps) + 0.01) * g.standard_normal(idx.size)
        y[:K * m] = np.clip(y[:K * m], 0.0, 1.0)
        score = _adversary_score(y, K, m, beta, skew)
        if score[0] >= best[0]:
            x, best = y, score
    U, w = _unpack(x, K, m)
    P, v = preference_matrix(U, w, beta), average_utility(U, w)
    mu = tree_mu(spanning_trees(m)[best[1]][0], m) if skew else uniform_pairs(m)
    return {"U": U, "w": w, "mu": mu, "P": P, "v": v, "search": best[0],
            "rlhf": distortion(rlhf_policy(P, mu), v), "nlhf": distortion(maximal_lottery(P), v),
            "borda": distortion(rlhf_policy(P), v)}


@claim("34", "A skewed pair distribution pushes RLHF past NLHF's beta/2 bound", kind="reproduction",
       name="rlhf_skew",
       paper="NLHF's distortion is at most (1/2 + o(1)) beta and minimax optimal; RLHF/DPO's is at least "
             "(1 - o(1)) beta without a KL constraint, and worse with one, depending on how comparison "
             "pairs are sampled (Gölz, Haghtalab, Yang 2025, abstract). The separation point is beta/2 = 5 "
             "at beta = 10",
       expect="beta = 10, 4 alternatives, 3 user types; a seeded hill-climb (1500 steps, seeds 0-4) over "
              "populations, the adversary also choosing the pair distribution (a spanning tree of "
              "comparisons plus 1e-6 of uniform pairs). On the instance each search ends with, RLHF's "
              "exact distortion (ML reward by Newton, argmax) has median over seeds >= beta/2 = 5 (NLHF's "
              "worst case, the paper's number), while NLHF's (maximal lottery, LP) is <= beta/2 on every "
              "seed. Fixed before the full run; the search was prototyped on seeds 100-104. Disclosure: one "
              "fast-mode run (seeds 0-2, 600-step searches: median 4.68, failing) preceded the registration "
              "commit; fast mode was then given full-length searches, thresholds unchanged",
       control="the pair distribution is uniform (no skew), so RLHF is the Borda winner; same search with the "
               "same number of distortion evaluations (16 x 1500 steps, since the skewed adversary scores 16 "
               "spanning trees per step): RLHF's median distortion must stay below beta/2. Referee's change "
               "after the full run: the control first had 1500 steps (1/16 of the adversary's evaluations; "
               "median 1.80, under-converged); budget-matched it reaches median 4.46 and still fails")
def claim_rlhf_skew(fast: bool = False, control: bool = False) -> Measured:
    seeds = CLAIM_SEEDS[:3] if fast else CLAIM_SEEDS
    steps = FAST_STEPS if fast else SEARCH["steps"]
    if control:
        steps = CONTROL_STEPS * steps // SEARCH["steps"]  # matched in distortion evaluations
    runs = [adversarial_search(s, skew=not control, steps=steps) for s in seeds]
    rl = np.array([r["rlhf"] for r in runs])
    nl = np.array([r["nlhf"] for r in runs])
    half = SEARCH["beta"] / 2
    # reported, not graded (added after the first full run): how far each instance is from a tie,
    # and whether RLHF still fails when 1% of the comparisons are drawn uniformly
    gaps, robust = [], 0
    for r in runs:
        rew = np.sort(bt_reward(r["P"], r["mu"]))
        gaps.append(rew[-1] - rew[-2])
        mixed = 0.99 * r["mu"] + 0.01 * uniform_pairs(r["v"].size)
        robust += int(distortion(rlhf_policy(r["P"], mixed), r["v"]) >= half)
    values = {"median_rlhf": np.median(rl), "min_rlhf": rl.min(), "max_rlhf": rl.max(), "half_beta": half,
              "max_nlhf": nl.max(), "median_borda": np.median([r["borda"] for r in runs]),
              "median_reward_gap": np.median(gaps), "survive_1pct_uniform": robust}
    who = "uniform pairs (control)" if control else "adversarial pairs"
    return Measured(values, criteria=[Criterion("median_rlhf", ">=", half), Criterion("max_nlhf", "<=", half)],
                    seeds=seeds, summary=f"{who}: RLHF distortion median {np.median(rl):.2f} "
                                         f"(range {rl.min():.2f}-{rl.max():.2f}), NLHF max {nl.max():.2f}; "
                                         f"beta/2 = {half:g}",
                    details={"runs": runs})


# ---------------------------------------------------------------- identities


def card_results(skew: float = 1.0, beta: float = CARD_BETA) -> dict:
    """The card's instance with pair weights ``(1 - skew) uniform + skew * card's mu``."""
    skew = check_in_range(skew, "skew", 0.0, 1.0, closed=(True, True))
    P, v = preference_matrix(CARD_U, CARD_W, beta), average_utility(CARD_U, CARD_W)
    mu = (1 - skew) * uniform_pairs(4) + skew * CARD_MU
    r = bt_reward(P, mu)
    pr, pn = rlhf_policy(P, mu), maximal_lottery(P)
    return {"P": P, "v": v, "reward": r, "rlhf": pr, "nlhf": pn, "borda": borda_scores(P),
            "d_rlhf": distortion(pr, v), "d_nlhf": distortion(pn, v)}


@claim("34", "The card's instance: skewed pairs make RLHF pick a bad response, NLHF stays optimal",
       kind="identity", name="card_instance",
       expect="beta = 10, the card's 3-type, 4-response population: RLHF with the card's skewed mu has "
              "distortion > beta/2 = 5; with uniform pairs, and NLHF, distortion <= 1 + 1e-9")
def claim_card_instance(fast: bool = False) -> Measured:
    sk, un = card_results(1.0), card_results(0.0)
    values = {"rlhf_skewed": sk["d_rlhf"], "rlhf_uniform": un["d_rlhf"], "nlhf": sk["d_nlhf"]}
    return Measured(values, criteria=[Criterion("rlhf_skewed", ">", CARD_BETA / 2),
                                      Criterion("rlhf_uniform", "<=", 1 + 1e-9), Criterion("nlhf", "<=", 1 + 1e-9)],
                    summary=f"RLHF {sk['d_rlhf']:.2f} with skewed pairs, {un['d_rlhf']:.2f} with uniform; "
                            f"NLHF {sk['d_nlhf']:.2f}")


def family_row(beta: float, eps: float = 0.05) -> dict:
    U, w = two_alternative_instance(beta, eps)
    P, v = preference_matrix(U, w, beta), average_utility(U, w)
    return {"beta": beta, "rlhf": distortion(rlhf_policy(P), v), "nlhf": distortion(maximal_lottery(P), v),
            "closed": two_alternative_distortion(beta, eps), "limit": two_alternative_distortion(beta)}


@claim("34", "The beta/2 family: both methods lose beta/(4(sigma(beta) - 1/2)) -> beta/2", kind="identity",
       name="beta_half_family",
       expect="two responses, minority eps = 0.05 with utilities (1, 0), majority (0, delta) just winning the "
              "comparison; beta in {2, 5, 10, 20}: RLHF's and NLHF's computed distortion equal the closed form "
              "eps / ((1 - eps) delta) to relative 1e-6, and the eps -> 0 limit beta/(4(sigma(beta) - 1/2)) "
              "is within 1% of beta/2 at beta = 20")
def claim_beta_half_family(fast: bool = False) -> Measured:
    rows = [family_row(b) for b in BETAS]
    err = max(max(abs(r["rlhf"] / r["closed"] - 1), abs(r["nlhf"] / r["closed"] - 1)) for r in rows)
    lim = rows[-1]["limit"] / (BETAS[-1] / 2) - 1
    return Measured({"max_rel_err": err, "limit_gap_beta20": abs(lim)},
                    criteria=[Criterion("max_rel_err", "<=", 1e-6), Criterion("limit_gap_beta20", "<=", 0.01)],
                    summary=f"max relative error {err:.1e}; limit / (beta/2) - 1 = {lim:.1e} at beta = 20",
                    details={"rows": rows})


def random_population(seed: int, m: int, K: int) -> tuple[np.ndarray, np.ndarray]:
    g = np.random.default_rng([34, 7, check_int(seed, "seed")])
    return g.uniform(0, 1, (check_int(K, "K", minimum=1), check_int(m, "m", minimum=2))), g.dirichlet(np.ones(K))


@claim("34", "With uniform pairs, RLHF's reward ranks responses as Borda does", kind="identity",
       name="borda_uniform",
       expect="200 random populations (3-6 responses, 2-5 types, beta in {1, 5, 10}): the ML reward with uniform "
              "mu orders responses as the probabilistic Borda scores (every pair whose Borda gap exceeds 1e-9)")
def claim_borda_uniform(fast: bool = False) -> Measured:
    n = 60 if fast else 200
    bad = 0
    for s in range(n):
        U, w = random_population(s, 3 + s % 4, 2 + s % 4)
        P = preference_matrix(U, w, (1.0, 5.0, 10.0)[s % 3])
        r, b = bt_reward(P), borda_scores(P)
        gap = b[:, None] - b[None, :]
        bad += int(np.any((gap > 1e-9) & (r[:, None] - r[None, :] <= 0)))
    return Measured({"order_violations": bad, "instances": n}, criteria=[Criterion("order_violations", "<=", 0)],
                    summary=f"{bad} order violations in {n} populations")


# ---------------------------------------------------------------- figures


def family_figure() -> go.Figure:
    """Distortion of both methods on the two-response family against beta, with beta/2."""
    betas = np.array([1.0, 2.0, 3.0, 5.0, 7.0, 10.0, 14.0, 20.0])
    rows = [family_row(b) for b in betas]
    fig = go.Figure([
        go.Scatter(x=betas, y=[r["rlhf"] for r in rows], mode="markers", name="RLHF/DPO (computed)",
                   marker=dict(size=12, symbol="circle-open", color=color_for(0))),
        go.Scatter(x=betas, y=[r["nlhf"] for r in rows], mode="markers", name="NLHF (computed)",
                   marker=dict(size=6, color=color_for(1))),
        go.Scatter(x=betas, y=[r["limit"] for r in rows], mode="lines", name="β/(4(σ(β) − 1/2))", **line_style(2)),
        go.Scatter(x=betas, y=betas / 2, mode="lines", name="β/2", line=dict(color="grey", dash="dot"))])
    return base_layout(fig, title="The β/2 family: both methods lose about β/2", xaxis_title="BT temperature β",
                       yaxis_title="distortion (best / achieved welfare)", height=430)


def _skew_traces(r: dict) -> list:
    x = [f"response {i}" for i in range(4)]
    return [go.Bar(x=x, y=r["v"], name="average utility v", marker_color="lightgrey", yaxis="y"),
            go.Bar(x=x, y=r["rlhf"], name="RLHF/DPO policy", marker_color=color_for(0), yaxis="y"),
            go.Bar(x=x, y=r["nlhf"], name="NLHF policy", marker_color=color_for(1), yaxis="y"),
            go.Scatter(x=x, y=r["reward"], mode="lines+markers", name="RLHF reward r̂ (right axis)",
                       yaxis="y2", line=dict(color=color_for(0), dash="dot"))]


def _skew_note(skew: float, r: dict) -> str:
    return (f"skew {skew:g}: RLHF picks response {int(np.argmax(r['rlhf']))}, distortion {r['d_rlhf']:.2f}"
            f"<br>NLHF picks response {int(np.argmax(r['nlhf']))}, distortion {r['d_nlhf']:.2f}")


def _skew_layout(fig: go.Figure) -> go.Figure:
    base_layout(fig, title="Skewing the pair distribution flips RLHF's pick", xaxis_title="response",
                yaxis_title="probability / utility", height=480)
    fig.update_layout(barmode="group", yaxis=dict(range=[0, 1.25]),
                      yaxis2=dict(overlaying="y", side="right", range=[-1.2, 0.6], dtick=0.3, tickformat=".1f",
                                  title="reward r̂", showgrid=False))
    return fig


def skew_slider_figure() -> go.Figure:
    """The card's instance as the pair distribution moves from uniform (0) to the card's skewed one (1)."""
    steps = [SliderStep(f"{s:g}", _skew_traces(card_results(s)), frame_note(_skew_note(s, card_results(s))))
             for s in SKEWS]
    fig = slider_figure(steps, slider_label="skew of the pair distribution", active=len(SKEWS) - 1, fixed_axes=False,
                        height=480)
    return _skew_layout(fig)


def skew_figure(skew: float = 1.0, beta: float = CARD_BETA) -> go.Figure:
    """Live twin of :func:`skew_slider_figure`, with the users' temperature too."""
    r = card_results(float(skew), float(beta))
    fig = go.Figure(_skew_traces(r), layout=frame_note(_skew_note(float(skew), r)))
    return _skew_layout(fig)


@lru_cache(maxsize=16)
def kl_curves(beta: float) -> dict:
    """Welfare against the KL budget on the card's instance (skewed pairs), reference :data:`KL_REF`:
    the oracle (tilt by the true v), RLHF (tilt by its reward) and KL-regularised NLHF."""
    P, v = preference_matrix(CARD_U, CARD_W, beta), average_utility(CARD_U, CARD_W)
    r = bt_reward(P, CARD_MU)
    out = {"oracle": [], "RLHF/DPO": [], "NLHF": [], "kl_nlhf": []}
    for tau in TAUS:
        out["oracle"].append(kl_tilt(KL_REF, v, tau) @ v)
        out["RLHF/DPO"].append(kl_tilt(KL_REF, r, tau) @ v)
        pn = nlhf_kl(P, KL_REF, tau)
        out["NLHF"].append(pn @ v)
        out["kl_nlhf"].append(kl_divergence(pn, KL_REF))
    return {k: np.array(x) for k, x in out.items()} | {"ref": KL_REF @ v}


def _kl_traces(c: dict) -> list:
    t = np.array(TAUS)
    return [go.Scatter(x=t, y=c["oracle"], mode="lines+markers", name="oracle (knows v)", line=dict(color="grey", width=3)),
            go.Scatter(x=t, y=c["RLHF/DPO"], mode="lines+markers", name="RLHF/DPO", **line_style(0)),
            go.Scatter(x=t, y=c["NLHF"], mode="lines+markers", name="NLHF (KL-regularised)", **line_style(1)),
            go.Scatter(x=t, y=np.full(t.size, c["ref"]), mode="lines", name="reference policy",
                       line=dict(color="black", dash="dot", width=1))]


def _kl_note(beta: float, c: dict) -> str:
    return (f"β = {beta:g}, τ = {TAUS[-1]:g}: oracle {c['oracle'][-1]:.2f}, "
            f"RLHF {c['RLHF/DPO'][-1]:.2f}, NLHF {c['NLHF'][-1]:.2f}")


_KL_AXES = dict(xaxis_title="KL budget τ (nats, log scale)", yaxis_title="average utility π·v")


def kl_slider_figure() -> go.Figure:
    table = kl_table()
    steps = [SliderStep(f"{b:g}", _kl_traces(table[b]), frame_note(_kl_note(b, table[b]))) for b in KL_BETAS]
    fig = slider_figure(steps, slider_label="BT temperature β", active=KL_BETAS.index(10.0), logx=True,
                        title="Welfare against the KL budget", height=480, **_KL_AXES)
    fig.update_yaxes(range=[0, 1])
    return fig


@lru_cache(maxsize=1)
def kl_table() -> dict:
    """:func:`kl_curves` for every slider value, computed once (the live explorer's moves are then
    look-ups; the static slider figure computes the same table)."""
    return {b: kl_curves(b) for b in KL_BETAS}


def kl_figure(beta: float = 10.0) -> go.Figure:
    """Live twin of :func:`kl_slider_figure` (its first call computes the whole table)."""
    c = kl_table()[float(beta)] if float(beta) in KL_BETAS else kl_curves(float(beta))
    fig = go.Figure(_kl_traces(c), layout=frame_note(_kl_note(float(beta), c)))
    base_layout(fig, title="Welfare against the KL budget", height=480, logx=True, **_KL_AXES)
    fig.update_yaxes(range=[0, 1])
    return fig


def search_figure(runs_skew: list, runs_uniform: list) -> go.Figure:
    """Per seed: RLHF's and NLHF's distortion on the adversary's instance, skewed and uniform pairs."""
    fig = make_subplots(rows=1, cols=1)
    seeds = [f"seed {s}" for s in CLAIM_SEEDS[:len(runs_skew)]]
    fig.add_trace(go.Bar(x=seeds, y=[r["rlhf"] for r in runs_skew], name="RLHF, adversarial pairs",
                         marker_color=color_for(0)))
    fig.add_trace(go.Bar(x=seeds, y=[r["rlhf"] for r in runs_uniform], name="RLHF, uniform pairs (control)",
                         marker_color=color_for(2)))
    fig.add_trace(go.Bar(x=seeds, y=[r["nlhf"] for r in runs_skew], name="NLHF, adversarial instance",
                         marker_color=color_for(1)))
    fig.add_hline(y=SEARCH["beta"] / 2, line=dict(color="grey", dash="dot"), annotation_text="β/2")
    base_layout(fig, title="Worst instances found by the adversary (β = 10)", xaxis_title="search seed",
                yaxis_title="distortion", height=430)
    fig.update_layout(barmode="group")
    return fig


EXPLORER_SKEW = Explorer("34", "skew", skew_figure, {"skew": Slider("skew", SKEWS, 1.0),
                                                       "beta": Slider("β", BETAS, CARD_BETA)})
EXPLORER_KL = Explorer("34", "kl", kl_figure, {"beta": Slider("β", KL_BETAS, 10.0)})
