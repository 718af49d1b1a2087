"""Chapter 35's experiments, claims and figures: InfiFPO.

The algorithm lives in :mod:`optbook.llm.infifpo`. Two experiments:

* the **population toy** (numpy, exact): 3 prompt groups x 40 prompts x 8 responses with rewards
  r ~ N(0, 1); the pivot is skilled on group 0, source S1 on group 1, S2 on group 2, and S3 is
  *harmful* on group 1 (anti-correlated with r). Each method's fixed point is computed exactly
  (closed form or a convex L-BFGS fit) and scored by its mean expected reward.
* the **tiny-LM fusion** (torch): the Part VII pivot (``tinylm.pretrained()``) trained on
  preference pairs from the corpus (true continuation preferred to a continuation taken from
  elsewhere in the same domain) with DPO, a WRPO-like baseline and InfiFPO, whose sources
  are the four domain specialists; scored by held-out likelihood of the true continuations.
"""
from __future__ import annotations

import copy
import inspect
from functools import lru_cache

import numpy as np
import plotly.graph_objects as go
import torch
from scipy.optimize import brentq
from scipy.special import log_softmax

from ..claims import Criterion, Measured, claim
from ..core import check_choice, check_int, check_positive, check_real, grid_search
from ..core.cache import cache_key, cached_torch
from ..core.threads import one_torch_thread
from ..viz import SliderStep, base_layout, frame_note, slider_figure
from ..viz.style import color_for
from ..widgets import Explorer, Slider
from . import tinylm
from .infifpo import expected_margin, fit_population, pair_labels, population_loss, preference_loss, tilted_optimum

# --------------------------------------------------------------------------- population toy

GROUPS, PER_GROUP, K = 3, 40, 8
SKILL, NOISE, HARM, BETA = 1.5, 1.0, 1.5, 0.5
BETAS = (0.25, 0.5, 1.0, 2.0)
HARMS = (0.0, 0.5, 1.0, 1.5, 2.0, 3.0)
POP_SEEDS = (0, 1, 2, 3, 4)
POP_METHODS = ("DPO (pivot reference)", "mean fusion, S1-S3", "mean fusion, S1-S2 (oracle)",
               "max-margin per prompt", "InfiFPO (per-pair max-margin + Clip)")


@lru_cache(maxsize=64)
def population_instance(seed: int, harm: float = HARM, skill: float = SKILL) -> dict:
    """The card's toy: rewards r (P, K), prompt groups, the pivot's and the three sources'
    log-probabilities (each a softmax of skill * r + noise, skill per prompt group)."""
    check_int(seed, "seed")
    check_real(harm, "harm")
    check_real(skill, "skill")
    rng = np.random.default_rng(seed)
    r = rng.normal(size=(GROUPS * PER_GROUP, K))
    group = np.repeat(np.arange(GROUPS), PER_GROUP)

    def model(skills):
        s = np.asarray(skills, dtype=float)[group][:, None]
        return log_softmax(s * r + NOISE * rng.normal(size=r.shape), axis=1)

    pivot = model([skill, 0, 0])
    sources = np.stack([model([0, skill, 0]), model([0, 0, skill]), model([0, -harm, 0])])
    return {"r": r, "group": group, "pivot": pivot, "sources": sources, "labels": pair_labels(r)}


def _margins(lm: np.ndarray) -> np.ndarray:
    return lm[..., :, None] - lm[..., None, :]


def pairwise_fused_margin(inst: dict, clip: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """InfiFPO's per-pair reference margin on the toy, *as the label orients it*: entry [p, a, b] is
    the reference margin used when a is labelled chosen and b rejected (weight P(a > b) in the
    population loss), i.e. each source's margin log M_i(a) - log M_i(b), clipped from below by the
    pivot's when ``clip``, and the largest one kept (max-margin). The label, not the true reward,
    decides which side is "chosen", as in training on sampled labels; the matrix is therefore not
    antisymmetric (m_ab + m_ba >= 0: the reference leans towards whichever response is labelled
    chosen). Returns the (P, K, K) margin and the chosen source per ordered pair (-1 on the diagonal)."""
    pm, sm = _margins(inst["pivot"]), _margins(inst["sources"])
    cand = np.maximum(sm, pm[None]) if clip else sm
    sel = cand.argmax(0)
    diag = np.eye(K, dtype=bool)[None]
    margin = np.where(diag, 0.0, np.take_along_axis(cand, sel[None], 0)[0])
    return margin, np.where(diag, -1, sel)


@lru_cache(maxsize=64)
def seed_rewards(seed: int, beta: float = BETA, harm: float = HARM) -> dict:
    """:func:`population_rewards` of one seed's instance (cached)."""
    return population_rewards(population_instance(seed, harm), beta)


def population_rewards(inst: dict, beta: float = BETA, *, clip: bool = True) -> dict:
    """Each method's fixed point and its expected reward per prompt (P,), keyed by POP_METHODS."""
    check_positive(beta, "beta")
    r, piv, src, lab = inst["r"], inst["pivot"], inst["sources"], inst["labels"]
    rows = np.arange(len(r))

    def reward(pi):
        return (pi * r).sum(1)

    per_prompt = expected_margin(src, lab).argmax(0)
    infi = fit_population(pairwise_fused_margin(inst, clip)[0], lab, beta)
    out = {
        POP_METHODS[0]: reward(tilted_optimum(piv, r, beta)),
        POP_METHODS[1]: reward(tilted_optimum(src.mean(0), r, beta)),
        POP_METHODS[2]: reward(tilted_optimum(src[:2].mean(0), r, beta)),
        POP_METHODS[3]: reward(tilted_optimum(src[per_prompt, rows], r, beta)),
        POP_METHODS[4]: reward(infi),
    }
    # the KL budget each fixed point spends away from the pivot, and DPO at InfiFPO's budget
    kl = {m: _kl_pivot(p, piv) for m, p in ((POP_METHODS[0], tilted_optimum(piv, r, beta)), (POP_METHODS[4], infi))}
    b_eq = brentq(lambda b: _kl_pivot(tilted_optimum(piv, r, b), piv) - kl[POP_METHODS[4]], 1e-3, 1e3)
    out["kl"], out["matched_beta"] = kl, float(b_eq)
    out["dpo_matched_kl"] = reward(tilted_optimum(piv, r, b_eq))
    return out


def _kl_pivot(pi: np.ndarray, log_pivot: np.ndarray) -> float:
    """Mean over prompts of KL(pi || pivot)."""
    return float((pi * (np.log(np.maximum(pi, 1e-300)) - log_pivot)).sum(1).mean())


def _gain_fraction(e: dict, method: str) -> float:
    dpo, clean = e[POP_METHODS[0]].mean(), e[POP_METHODS[2]].mean()
    return float((e[method].mean() - dpo) / (clean - dpo))


@claim("35", "Fusion beats DPO; max-margin survives a harmful source that mean fusion does not",
       kind="reproduction",
       paper="InfiFPO beats DPO with the pivot as reference: Phi-4's average over 11 benchmarks "
             "82.67 (SFT-DPO) -> 83.33 (InfiFPO), from 79.95 before training; max-margin fusion and "
             "probability clipping keep weak sources from injecting noise",
       expect="on the population toy (3 groups x 40 prompts x 8 responses, beta = 0.5, sources S1, S2 "
              "helpful and S3 harmful), over 5 seeds: median expected-reward gain of InfiFPO (per-pair "
              "max-margin + Clip) over DPO > 0, and median gain fraction (gain over DPO divided by the "
              "gain of mean fusion of the helpful sources only, the oracle that knows which source to "
              "drop) >= 0.75, i.e. the harmful source costs at most a quarter of the oracle's gain. "
              "Referee revision after the full run, criteria unchanged: the first run oriented every pair "
              "by the true reward (noiseless labels leaking into max-margin and Clip; gain fraction 3.11); "
              "now each ordered pair (a, b) with weight P(a > b) uses the reference margin with a as the "
              "labelled chosen response. Reported beside the criteria, not part of them: each fixed "
              "point's KL from the pivot and DPO's expected reward at the beta whose fixed point spends "
              "InfiFPO's KL (DPO's tilt is the best possible E[r] at that KL budget)",
       control="plain mean fusion of all three sources (gamma = 1/3, no Clip) in InfiFPO's place",
       name="fusion_beats_dpo")
def claim_fusion_beats_dpo(fast: bool = False, control: bool = False) -> Measured:
    seeds = POP_SEEDS[:3] if fast else POP_SEEDS
    method = POP_METHODS[1] if control else POP_METHODS[4]
    runs = [seed_rewards(s) for s in seeds]
    gains = [e[method].mean() - e[POP_METHODS[0]].mean() for e in runs]
    fracs = [_gain_fraction(e, method) for e in runs]
    harm_cost = [e[POP_METHODS[2]].mean() - e[POP_METHODS[1]].mean() for e in runs]
    means = {m: float(np.median([e[m].mean() for e in runs])) for m in POP_METHODS}
    kl_gap = [e["dpo_matched_kl"].mean() - e[method].mean() for e in runs]
    values = {"median_gain": float(np.median(gains)), "median_fraction": float(np.median(fracs)),
              "min_fraction": float(np.min(fracs)), "max_fraction": float(np.max(fracs)),
              "median_harm_cost": float(np.median(harm_cost)),
              "dpo": means[POP_METHODS[0]], "mean3": means[POP_METHODS[1]], "clean": means[POP_METHODS[2]],
              "per_prompt": means[POP_METHODS[3]], "infifpo": means[POP_METHODS[4]],
              "kl_dpo": float(np.median([e["kl"][POP_METHODS[0]] for e in runs])),
              "kl_infifpo": float(np.median([e["kl"][POP_METHODS[4]] for e in runs])),
              "matched_beta": float(np.median([e["matched_beta"] for e in runs])),
              "dpo_matched_kl": float(np.median([e["dpo_matched_kl"].mean() for e in runs])),
              "matched_kl_deficit": float(np.median(kl_gap))}
    return Measured(values, criteria=[Criterion("median_gain", ">", 0.0), Criterion("median_fraction", ">=", 0.75)],
                    seeds=seeds, precondition=bool(np.median(harm_cost) > 0),
                    summary=f"{method}: gain over DPO {values['median_gain']:.3f}, "
                            f"fraction of the oracle's gain {values['median_fraction']:.2f}"
                            + ("" if control else f"; DPO at the same KL from the pivot {values['dpo_matched_kl']:.3f}"),
                    details={"runs": runs})


@claim("35", "Full-coverage training reaches the tilted optimum softmax(log ref + r/beta)", kind="identity",
       expect="L-BFGS on the population loss with the pivot's margins lands within 1e-4 total variation "
              "of softmax(log ref + r/beta) on every prompt, for beta in {0.25, 0.5, 1, 2}",
       name="tilted_fixed_point")
def claim_tilted_fixed_point(fast: bool = False) -> Measured:
    inst = population_instance(0)
    tv = []
    for beta in BETAS[:2] if fast else BETAS:
        pi = fit_population(_margins(inst["pivot"]), inst["labels"], beta)
        tv.append(0.5 * np.abs(pi - tilted_optimum(inst["pivot"], inst["r"], beta)).sum(1).max())
    return Measured({"max_tv": float(max(tv))}, criteria=[Criterion("max_tv", "<=", 1e-4)], seeds=(0,),
                    summary=f"largest total variation {max(tv):.1e}")


# --------------------------------------------------------------------------- tiny-LM fusion

PROMPT, CONT, PAIRS_PER_DOMAIN = 32, 16, 48
LM_BETA = 2.5              # the paper's script, with length normalisation
LM_STEPS, LM_BATCH = 10, 16   # 30 in the first full run; cut for the notebook's cold-run budget
LRS = (1e-4, 3e-4, 1e-3)
LM_SEEDS, LM_TUNE_SEEDS = (1, 2, 3, 4, 5), (0,)   # 3 in the first run; a run now takes ~1 s
LM_METHODS = ("DPO", "WRPO-like", "InfiFPO")   # IPO dropped after the first full run (budget)
LM_FAST_METHODS, LM_FAST_STEPS = ("DPO", "InfiFPO"), 5



def corpus_pairs(part: int, n: int, seed: int) -> dict:
    """Preference pairs from the corpus, ``n`` per domain: a ``PROMPT``-character prompt, its true
    ``CONT``-character continuation (chosen) and a continuation cut from elsewhere in the same
    domain (rejected). ``part`` 0 = training split, 1 = held-out split."""
    check_int(n, "n", minimum=1)
    g = torch.Generator().manual_seed(seed)
    w, l, d = [], [], []
    for i, dom in enumerate(tinylm.DOMAINS):
        ids = tinylm.split(dom)[part]
        s = torch.randint(0, len(ids) - PROMPT - CONT, (n,), generator=g)
        o = torch.randint(0, len(ids) - CONT, (n,), generator=g)
        chosen = torch.stack([ids[a:a + PROMPT + CONT] for a in s.tolist()])
        rejected = chosen.clone()
        rejected[:, PROMPT:] = torch.stack([ids[a:a + CONT] for a in o.tolist()])
        w.append(chosen)
        l.append(rejected)
        d += [i] * n
    return {"w": torch.cat(w), "l": torch.cat(l), "domain": torch.tensor(d)}


@torch.no_grad()
def _lp(model, ids) -> np.ndarray:
    return tinylm.sequence_logprob(model, ids, PROMPT, mean=True).numpy()


@torch.no_grad()
def _greedy(model, ids) -> torch.Tensor:
    out = ids[:, :PROMPT].clone()
    for _ in range(CONT):
        out = torch.cat([out, model(out)[:, -1].argmax(-1, keepdim=True)], 1)
    return out


@lru_cache(maxsize=8)
def lm_data(seed: int) -> dict:
    """Training and held-out pairs of one seed with every constant log-prob precomputed: the
    pivot reference's, each specialist's, and the WRPO-like baseline's source responses (the
    domain specialist's greedy continuation of each prompt)."""
    check_int(seed, "seed")
    with one_torch_thread():
        pivot = tinylm.pretrained()
        sources = [tinylm.specialist(d) for d in tinylm.DOMAINS]
        train, held = corpus_pairs(0, PAIRS_PER_DOMAIN, 100 + seed), corpus_pairs(1, PAIRS_PER_DOMAIN, 200 + seed)
        train["ref_w"], train["ref_l"] = _lp(pivot, train["w"]), _lp(pivot, train["l"])
        train["src_w"] = np.stack([_lp(m, train["w"]) for m in sources])
        train["src_l"] = np.stack([_lp(m, train["l"]) for m in sources])
        spec = torch.cat([_greedy(sources[d], train["w"][train["domain"] == d]) for d in range(len(sources))])
        train["wrpo_w"], train["ref_wrpo"] = spec, _lp(pivot, spec)
    return {"train": train, "held": held}


def lm_references(data: dict, method: str, *, shuffle: bool = False, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """The constant reference log-probs a method trains against (InfiFPO: fused, max-margin + Clip)."""
    from .infifpo import fused_reference
    t = data["train"]
    if method != "InfiFPO":
        return t["ref_w"], t["ref_l"]
    sw, sl = t["src_w"], t["src_l"]
    if shuffle:  # the control: the sources' probabilities, permuted across pairs
        perm = np.random.default_rng(seed).permutation(sw.shape[1])
        sw, sl = sw[:, perm], sl[:, perm]
    fw, fl, _ = fused_reference(sw, sl, t["ref_w"], t["ref_l"], fusion="max_margin", clip=True)
    return fw, fl


@lru_cache(maxsize=128)
def train_lm(method: str, lr: float, seed: int, *, steps: int = LM_STEPS, shuffle: bool = False) -> dict:
    """Preference-train a copy of the pivot with one method; return held-out NLL (nats/char of the
    true continuations) and held-out preference accuracy, averaged over the four domains. Results
    are cached on disk (keyed on the arguments and on this chapter's code), as the models are."""
    check_positive(lr, "lr")
    check_int(seed, "seed")
    check_choice(method, "method", LM_METHODS)
    check_int(steps, "steps", minimum=1)
    key = cache_key(method=method, lr=lr, seed=seed, steps=steps, shuffle=shuffle, kind="infifpo-lm",
                    code=_code_hash(), torch=torch.__version__)
    out = cached_torch("infifpo", key, lambda: {k: torch.tensor(v) for k, v in
                                                 _train_lm(method, lr, seed, steps, shuffle).items()})
    return {k: float(v) for k, v in out.items()}


@lru_cache(maxsize=1)
def _code_hash() -> str:
    """What a cached tiny-LM result depends on: the loss code, the data and training code, the sizes."""
    from . import infifpo
    parts = [inspect.getsource(infifpo)] + [inspect.getsource(f) for f in (corpus_pairs, lm_data, lm_references, _train_lm)]
    return cache_key(code=parts, sizes=(PROMPT, CONT, PAIRS_PER_DOMAIN, LM_BETA, LM_BATCH), models=(tinylm.BASE_STEPS,
                     tinylm.SPECIALIST_STEPS), corpus=tinylm._corpus_hash())


def _train_lm(method: str, lr: float, seed: int, steps: int, shuffle: bool) -> dict:
    data = lm_data(seed)
    t, h = data["train"], data["held"]
    ref_w, ref_l = lm_references(data, method, shuffle=shuffle, seed=seed)
    g = torch.Generator().manual_seed(seed)
    with one_torch_thread():
        with torch.random.fork_rng(devices=[]):
            model = copy.deepcopy(tinylm.pretrained()).train()
        opt = torch.optim.Adam(model.parameters(), lr=lr)
        n = len(t["w"])
        for _ in range(steps):
            b = torch.randint(0, n, (LM_BATCH,), generator=g)
            lp = lambda x: tinylm.sequence_logprob(model, x, PROMPT, mean=True)  # noqa: E731
            loss = preference_loss(lp(t["w"][b]), lp(t["l"][b]), ref_w[b], ref_l[b], LM_BETA)
            if method == "WRPO-like":  # the source's response also preferred to the rejected one
                loss = loss + preference_loss(lp(t["wrpo_w"][b]), lp(t["l"][b]), t["ref_wrpo"][b], ref_l[b], LM_BETA)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
        model.eval()
        hw, hl = _lp(model, h["w"]), _lp(model, h["l"])
    return {"nll": float(-hw.mean()), "accuracy": float((hw > hl).mean())}


def lm_tunings(fast: bool = False) -> list:
    """Each method's learning rate tuned on the held-out seed by held-out NLL (fast: one setting)."""
    lrs = LRS[1:2] if fast else LRS
    methods = LM_FAST_METHODS if fast else LM_METHODS
    return [grid_search(m, lambda seed, lr, m=m: train_lm(m, lr, seed, steps=LM_FAST_STEPS if fast else LM_STEPS)["nll"],
                        {"lr": lrs}, LM_TUNE_SEEDS) for m in methods]


@claim("35", "Tiny LMs: InfiFPO's pivot keeps a better held-out likelihood than DPO's", kind="reproduction",
       paper="fusing the sources' sequence probabilities into the reference distils their knowledge: "
             "InfiFPO 83.33 vs SFT-DPO 82.67 average over 11 benchmarks (Phi-4 pivot, 5 sources)",
       expect="pivot = tinylm.pretrained(), sources = the four domain specialists, 48 pairs per domain, "
              "10 Adam steps of 16 pairs (fast mode: DPO and InfiFPO only, 5 steps, lr 3e-4), beta = 2.5 (length-normalised, the paper's script); lr tuned over "
              "{1e-4, 3e-4, 1e-3} for each method on held-out seed 0, then 5 seeds (3 in the first full run, when a run took over 2 s): median "
              "(DPO's held-out NLL - InfiFPO's) >= 0.01 nats per character, and InfiFPO's median NLL no "
              "worse than the best tuned baseline's (DPO, WRPO-like). Referee revision after the first full run "
              "(30 steps, IPO as a third baseline; gain +0.00001, inconclusive): cut to 10 steps and IPO "
              "dropped so that a cold notebook run fits its CPU budget (27 -> 21 runs, a third of the steps); "
              "thresholds and grid unchanged, seeds 3 -> 5 since a run now takes about a second",
       control="InfiFPO with the sources' log-probabilities permuted across pairs (their information removed)",
       reproduces=None,
       diagnosis="inconclusive after the first full run (thresholds unchanged): measured gain +0.00001 nats/char "
                 "against 0.01 required, but (1) the baseline does not show the phenomenon the metric needs: "
                 "preference training raises every method's held-out NLL above the untrained pivot's (DPO 1.661 "
                 "vs 1.654), so each method's tuned learning rate sits at the grid's low edge (less training is "
                 "better; widening the grid downwards tends to the untrained pivot). The precondition 'tuned DPO's "
                 "held-out NLL is below the pivot's' was added after that run and is disclosed here. "
                 "(2) beta = 2.5 with length normalisation is the paper's script value; lr tuned on a grid. "
                 "(3) with one source equal to the pivot InfiFPO's loss equals DPO's exactly (tested). "
                 "(4) the control (sources permuted) also shows no gain, as expected",
       name="lm_fusion")
def claim_lm_fusion(fast: bool = False, control: bool = False) -> Measured:
    tunings = lm_tunings(fast)
    best = {t.method: t.best["lr"] for t in tunings}
    seeds = LM_SEEDS[:1] if fast else LM_SEEDS
    steps = LM_FAST_STEPS if fast else LM_STEPS
    methods = LM_FAST_METHODS if fast else LM_METHODS
    res = {m: [train_lm(m, best[m], s, steps=steps, shuffle=control and m == "InfiFPO") for s in seeds]
           for m in methods}
    nll = {m: float(np.median([x["nll"] for x in v])) for m, v in res.items()}
    acc = {m: float(np.median([x["accuracy"] for x in v])) for m, v in res.items()}
    gain = float(np.median([d["nll"] - f["nll"] for d, f in zip(res["DPO"], res["InfiFPO"])]))
    with one_torch_thread():
        pivot_nll = float(-_lp(tinylm.pretrained(), lm_data(seeds[0])["held"]["w"]).mean())
    values = {"gain_vs_dpo": gain, "excess_vs_best": min(nll[m] for m in methods if m != "InfiFPO") - nll["InfiFPO"],
              "pivot_nll": pivot_nll, **{f"nll_{m}": v for m, v in nll.items()},
              **{f"acc_{m}": v for m, v in acc.items()}}
    return Measured(values, criteria=[Criterion("gain_vs_dpo", ">=", 0.01), Criterion("excess_vs_best", ">=", 0.0)],
                    seeds=seeds, precondition=bool(nll["DPO"] < pivot_nll), summary=f"DPO NLL - InfiFPO NLL = {gain:+.4f} nats/char",
                    details={"tunings": tunings, "runs": res})


GLUE_FORMATS = {
    "fusion_beats_dpo": {"median_gain": "{:.3f}", "median_fraction": "{:.2f}", "min_fraction": "{:.2f}",
                         "max_fraction": "{:.2f}", "median_harm_cost": "{:.3f}", "dpo": "{:.3f}", "mean3": "{:.3f}",
                         "clean": "{:.3f}", "per_prompt": "{:.3f}", "infifpo": "{:.3f}",
                         "kl_dpo": "{:.2f}", "kl_infifpo": "{:.2f}", "matched_beta": "{:.2f}",
                         "dpo_matched_kl": "{:.3f}", "matched_kl_deficit": "{:.3f}"},
    "lm_fusion": {"gain_vs_dpo": "{:+.4f}", "excess_vs_best": "{:+.4f}", "pivot_nll": "{:.3f}",
                  **{f"nll_{m}": "{:.4f}" for m in LM_METHODS}, **{f"acc_{m}": "{:.3f}" for m in LM_METHODS}},
}


# --------------------------------------------------------------------------- figures

GROUP_NAMES = ("group 0 (pivot skilled)", "group 1 (S1 good, S3 harmful)", "group 2 (S2 good)")


def _group_bars(seed: int, beta: float) -> tuple[list, dict]:
    inst, e = population_instance(seed), seed_rewards(seed, beta)
    traces = []
    for i, m in enumerate(POP_METHODS):
        y = [float(e[m][inst["group"] == g].mean()) for g in range(GROUPS)]
        traces.append(go.Bar(x=list(GROUP_NAMES), y=y, name=m, marker_color=color_for(i),
                             hovertemplate="%{x}<br>E[r] %{y:.3f}<extra>" + m + "</extra>"))
    return traces, e


@lru_cache(maxsize=32)
def _beta_step(beta: float) -> SliderStep:
    traces, e = _group_bars(0, beta)
    note = "β = {:g}: mean E[r]  DPO {:.3f} · mean fusion {:.3f} · InfiFPO {:.3f}".format(
        beta, e[POP_METHODS[0]].mean(), e[POP_METHODS[1]].mean(), e[POP_METHODS[4]].mean())
    return SliderStep(f"{beta:g}", traces, frame_note(note))


def beta_slider_figure() -> go.Figure:
    """Expected reward of each method's fixed point per prompt group, slider over beta."""
    fig = slider_figure([_beta_step(b) for b in BETAS], slider_label="β (KL strength)", active=1,
                        title="Population toy: expected reward of each fixed point, per prompt group",
                        xaxis_title="prompt group", yaxis_title="expected reward E[r]", height=520)
    fig.update_layout(barmode="group")
    return fig


def beta_figure(beta: float = BETA) -> go.Figure:
    step = _beta_step(beta)
    fig = go.Figure(step.traces)
    base_layout(fig, title="Population toy: expected reward per prompt group", xaxis_title="prompt group",
                yaxis_title="expected reward E[r]", height=520)
    fig.update_layout(barmode="group", **step.layout)
    return fig


@lru_cache(maxsize=32)
def harm_summary(harm: float) -> dict:
    """Source weights of InfiFPO's max-margin rule on group 1 (share of pairs won by each source, and
    by the pivot through Clip) and each method's mean expected reward, for a harmful-source strength."""
    check_real(harm, "harm")
    inst = population_instance(0, harm=harm)
    margin, sel = pairwise_fused_margin(inst)
    r = inst["r"]
    up = r[:, :, None] > r[:, None, :]          # pairs labelled the right way round
    g1 = inst["group"] == 1
    mask = up & g1[:, None, None]
    shares = [float(((sel == i) & mask & (margin > _margins(inst["pivot"]))).sum() / mask.sum()) for i in range(3)]
    shares.append(1.0 - sum(shares))
    e = seed_rewards(0, BETA, harm)
    return {"shares": shares, "rewards": [float(e[m].mean()) for m in POP_METHODS]}


def _harm_step(harm: float) -> SliderStep:
    s = harm_summary(harm)
    names = ["S1", "S2", "S3 (harmful)", "pivot (Clip)"]
    short = ["DPO", "mean S1-S3", "mean S1-S2", "max-margin/prompt", "InfiFPO"]
    traces = [go.Bar(x=names, y=s["shares"], marker_color=[color_for(i) for i in range(4)], showlegend=False,
                     hovertemplate="%{x}: %{y:.2f} of group-1 pairs<extra></extra>"),
              go.Bar(x=short, y=s["rewards"], xaxis="x2", yaxis="y2", showlegend=False,
                     marker_color=[color_for(i) for i in range(5)],
                     hovertemplate="%{x}: E[r] %{y:.3f}<extra></extra>")]
    return SliderStep(f"{harm:g}", traces, frame_note(f"S3's anti-skill on group 1: {harm:g}"))


def _two_panels(fig: go.Figure) -> go.Figure:
    fig.update_layout(xaxis=dict(domain=[0, 0.40]), xaxis2=dict(domain=[0.60, 1], anchor="y2"),
                      yaxis=dict(title_text="share of group-1 pairs", range=[0, 1]),
                      yaxis2=dict(anchor="x2", title_text="mean E[r]", range=[0.9, 1.35]))
    return fig


def harm_slider_figure() -> go.Figure:
    """Left: which source max-margin picks on group 1's pairs; right: each method's expected
    reward; slider over the harmful source's strength."""
    fig = slider_figure([_harm_step(h) for h in HARMS], slider_label="S3 harm", active=HARMS.index(HARM), fixed_axes=False,
                        title="Source weights of max-margin fusion (group 1) and expected rewards",
                        height=520)
    return _two_panels(fig)


def harm_figure(harm: float = HARM) -> go.Figure:
    check_real(harm, "harm")
    step = _harm_step(harm)
    fig = go.Figure(step.traces)
    base_layout(fig, title="Source weights of max-margin fusion (group 1) and expected rewards", height=520)
    fig.update_layout(**step.layout)
    return _two_panels(fig)


EXPLORER_BETA = Explorer("35", "beta", beta_figure, {"beta": Slider("β", BETAS, BETA)})
EXPLORER_HARM = Explorer("35", "harm", harm_figure, {"harm": Slider("S3 harm", HARMS, HARM)})


def lm_reference_margins(seed: int = LM_SEEDS[0]) -> dict:
    """On one seed's training pairs: the pivot reference's margin, the fused margin of plain mean
    fusion (no Clip) and of InfiFPO (max-margin + Clip), and max-margin's source weights per domain."""
    from .infifpo import fused_reference
    check_int(seed, "seed")
    t = lm_data(seed)["train"]
    piv = t["ref_w"] - t["ref_l"]
    mw, ml, _ = fused_reference(t["src_w"], t["src_l"], t["ref_w"], t["ref_l"], fusion="mean", clip=False)
    fw, fl, gamma = fused_reference(t["src_w"], t["src_l"], t["ref_w"], t["ref_l"])
    # a pair whose chosen (clipped) source margin equals the pivot's uses the pivot as reference
    from_pivot = np.isclose(fw - fl, piv)
    dom = t["domain"].numpy()
    n_src = len(tinylm.DOMAINS)
    weights = np.array([[np.mean(gamma[i, dom == d] * ~from_pivot[dom == d]) for i in range(n_src)]
                        + [from_pivot[dom == d].mean()] for d in range(n_src)])
    return {"pivot": piv, "mean": mw - ml, "infifpo": fw - fl, "domain": dom, "weights": weights,
            "pivot_share": float(from_pivot.mean()), "mean_flips": float(np.mean(np.sign(mw - ml) != np.sign(piv)))}


def clip_figure(seed: int = LM_SEEDS[0]) -> go.Figure:
    """Scatter of the pivot reference's margin against the fused margin, per training pair."""
    check_int(seed, "seed")
    m = lm_reference_margins(seed)
    fig = go.Figure()
    lo, hi = float(min(m["pivot"].min(), m["mean"].min())), float(max(m["infifpo"].max(), m["pivot"].max()))
    fig.add_trace(go.Scatter(x=[lo, hi], y=[lo, hi], mode="lines", name="fused = pivot",
                             line=dict(color="#888", dash="dot")))
    for i, (key, name) in enumerate((("mean", "mean fusion, no Clip"), ("infifpo", "InfiFPO: max-margin + Clip"))):
        fig.add_trace(go.Scatter(x=m["pivot"], y=m[key], mode="markers", name=name,
                                 marker=dict(color=color_for(i), size=6, opacity=0.7, symbol=["circle", "diamond"][i]),
                                 hovertemplate="pivot %{x:.2f}<br>fused %{y:.2f}<extra>" + name + "</extra>"))
    base_layout(fig, title="Reference margin of each training pair: pivot vs fused sources",
                xaxis_title="pivot's margin log ref(y_w) − log ref(y_l) (nats/char)",
                yaxis_title="fused margin (nats/char)", height=480)
    return fig


def weights_figure(seed: int = LM_SEEDS[0]) -> go.Figure:
    """Max-margin's source weights: share of each domain's pairs given to each specialist."""
    check_int(seed, "seed")
    m = lm_reference_margins(seed)
    fig = go.Figure(go.Heatmap(z=m["weights"], x=[f"{d} specialist" for d in tinylm.DOMAINS] + ["pivot (Clip)"],
                               y=[f"{d} pairs" for d in tinylm.DOMAINS], colorscale="Blues", zmin=0, zmax=1,
                               text=np.round(m["weights"], 2), texttemplate="%{text}",
                               hovertemplate="%{y}: %{x} chosen on %{z:.2f} of pairs<extra></extra>",
                               showscale=False))
    base_layout(fig, title="Max-margin fusion: which specialist serves as reference, per domain",
                xaxis_title="source", yaxis_title="domain of the pair", height=430)
    fig.update_yaxes(autorange="reversed")
    return fig


TRAIN_METHODS = (POP_METHODS[0], POP_METHODS[1], POP_METHODS[4])


@lru_cache(maxsize=8)
def population_training(seed: int = 0, iters: int = 80, lr: float = 0.5, beta: float = BETA) -> list:
    """Gradient descent on the population loss, started at the pivot (as training starts from the
    pivot model), for DPO, mean fusion and InfiFPO: one Trace each, recording the mean expected
    reward and the loss. ``lr`` is the step per prompt (the loss averages over prompts)."""
    from ..core import Trace
    check_int(seed, "seed")
    check_int(iters, "iters", minimum=1)
    check_positive(lr, "lr")
    check_positive(beta, "beta")
    inst = population_instance(seed)
    refs = {POP_METHODS[0]: _margins(inst["pivot"]), POP_METHODS[1]: _margins(inst["sources"].mean(0)),
            POP_METHODS[4]: pairwise_fused_margin(inst)[0]}
    traces = []
    for method in TRAIN_METHODS:
        z, tr = inst["pivot"].copy(), Trace(method=method)
        for t in range(iters + 1):
            loss, grad = population_loss(z, refs[method], inst["labels"], beta)
            pi = np.exp(z - z.max(1, keepdims=True))
            pi /= pi.sum(1, keepdims=True)
            tr.record(objective=loss, iteration=t, reward=float((pi * inst["r"]).sum(1).mean()))
            z = z - lr * len(z) * grad
        traces.append(tr)
    return traces


def training_figure(seed: int = 0) -> go.Figure:
    """Expected reward along gradient descent on the population loss, from the pivot to each
    method's fixed point (dotted lines: the fixed points computed exactly)."""
    from ..viz import Phase, convergence_figure
    traces = population_training(seed)
    fixed = seed_rewards(seed)
    infi = np.asarray(traces[-1]["reward"])
    start, end = infi[0], fixed[POP_METHODS[4]].mean()
    t90 = int(np.argmax(infi - start >= 0.9 * (end - start)))
    fig = convergence_figure(traces, y="reward", logy=False, phases=[
        Phase(0, t90, "leaving the pivot"), Phase(t90, len(infi) - 1, "near the fixed point")],
        title="Population toy: training from the pivot towards each fixed point",
        yaxis_title="mean expected reward E[r]", xaxis_title="gradient step t")
    for i, m in enumerate(TRAIN_METHODS):
        fig.add_hline(y=float(fixed[m].mean()), line=dict(color=color_for(i), dash="dot", width=1))
    return fig
