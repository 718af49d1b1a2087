"""Chapter 33: experiments, figures, live explorers and claims for 3BASiL-TM. The methods are in
:mod:`optbook.llm.sparse_plus_lowrank`; the language model is Part VII's :mod:`optbook.llm.tinylm`.

Two proxies. (1) One synthetic layer, W (64 x 128) with calibration inputs whose columns are
correlated and carry heavy, uneven scales (the outlier features of LLM activations): the
layer-wise objective of the paper, measured exactly. (2) The tiny character transformer (two
blocks, 0.1 M weights): the value and output maps of its first block compressed from calibration
windows of its training text, its perplexity measured on held-out paragraphs of all four domains.
Both claims run under a stated budget rule (equal per-map iterations; see ``budgeted``).
"""
from __future__ import annotations

import copy
import itertools
import time
from functools import lru_cache

import numpy as np
import plotly.graph_objects as go
import torch
from plotly.subplots import make_subplots

from ..claims import Criterion, Measured, claim
from ..core import Tuning, check_choice, check_int, check_positive, grid_search
from ..core.cache import cache_key, cached_torch
from ..core.threads import one_torch_thread
from ..viz import SliderStep, base_layout, color_for, slider_figure
from ..viz.slider import frame_note
from ..widgets import Choice, Explorer, Slider
from . import tinylm
from .sparse_plus_lowrank import (
    METHODS,
    Decomposition,
    SparseLowRankLinear,
    damped_hessian,
    hassle_free,
    n_kept,
    oats,
    threebasil,
    transformer_matching,
    wanda,
)

# --------------------------------------------------------------------------- the budget rule
#
# BUDGET RULE (re-registration after the first full run; see the claims' ``expect``). The first
# registration compressed all 12 maps of the tiny LM and tuned each alternating baseline's iteration
# count: 45 whole-model compressions, about 6 minutes from an empty cache (HASSLE-free at its tuned
# 320 rounds alone was 40% of it), too slow for a chapter the book executes from scratch. Now:
# (1) every iterative layer-wise solver gets EQUAL per-map compute, counted in iterations: on each
#     map, HASSLE-free's rounds and OATS's iterations equal the number of iterations 3BASiL's ADMM
#     takes there by its own (the authors') stopping rule; one iteration of each method is one
#     low-rank fit plus one sparse step; iteration counts are not tuned. Cost per iteration (referee's
#     count): an ADMM iteration is about 5 n^3 multiply-adds on an n x n map (three products with
#     H~ or its eigenvectors, two in the rank step), a HASSLE-free round about 6.7 n^3 (the same rank
#     step, W H, d_out row solves of size n/2 at 2:4 ~ 2.7 n^3, and its per-round score), about 2x
#     the ADMM's on the 64 x 128 synthetic layer; measured CPU time per round 3-4x an ADMM iteration,
#     per OATS iteration (one full SVD) 0.9-1.2x. Equal iterations give the baselines at least equal
#     compute, and doubling it lowers their errors by at most 4% (synthetic layer, draw 0; under
#     0.1% on the LM maps of draw 0): they are close to converged at the ADMM's count;
# (2) the tiny LM claim compresses only two maps, the value and output maps of block 0's attention;
# (3) the remaining hyperparameter of each method is tuned over 3 settings on 2 held-out draws, and
#     the picks are frozen in FROZEN_SCORES (a unit test re-runs the tuning and checks them).


def budgeted(method: str, W: np.ndarray, H: np.ndarray, pattern, rank: int, budget: int | None = None,
             H_admm: np.ndarray | None = None) -> Decomposition:
    """One method under the budget rule. ``budget`` is the ADMM's iteration count on this map (run
    here on ``H_admm``, default ``H``, when not given); HASSLE-free and OATS get that many
    rounds / iterations, Wanda and EoRA are one-shot."""
    check_choice(method, "method", ("Wanda", "EoRA", "OATS", "HASSLE-free", "3BASiL"))
    if method == "Wanda":
        return Decomposition(wanda(W, H, pattern), np.zeros((W.shape[0], 0)), np.zeros((0, W.shape[1])), "Wanda")
    if method == "EoRA":
        return METHODS["EoRA"](W, H, pattern, rank)
    if method == "3BASiL":
        return threebasil(W, H, pattern, rank)
    if budget is None:
        budget = threebasil(W, H if H_admm is None else H_admm, pattern, rank).nit
    budget = check_int(budget, "budget", minimum=1)
    if method == "OATS":
        return oats(W, H, pattern, rank, iters=budget)
    return hassle_free(W, H, pattern, rank, rounds=budget)


# --------------------------------------------------------------------------- the synthetic layer

LAYER_SHAPE = (64, 128)
LAYER_SAMPLES = 2048
LAYER_RANK = 8
CLAIM_SEEDS = (0, 1, 2)
FAST_SEEDS = (0,)
LAYER_METHODS = ("Wanda", "EoRA", "OATS", "HASSLE-free", "3BASiL")


@lru_cache(maxsize=64)
def layer_problem(seed: int, outliers: float = 1.0, d_out: int = LAYER_SHAPE[0], d_in: int = LAYER_SHAPE[1],
                  n: int = LAYER_SAMPLES) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(W, H damped, H raw) of one synthetic layer: Gaussian W, inputs X = G C diag(s) with a
    random mixing C (correlated columns) and log-normal column scales s of spread ``outliers``."""
    seed = check_int(seed, "seed")
    check_positive(outliers, "outliers", allow_zero=True)
    for v, nm in ((d_out, "d_out"), (d_in, "d_in"), (n, "n")):
        check_int(v, nm, minimum=1)
    rng = np.random.default_rng(seed)
    C = rng.standard_normal((d_in, d_in)) / np.sqrt(d_in) * 0.7 + np.eye(d_in)
    X = (rng.standard_normal((n, d_in)) @ C) * np.exp(outliers * rng.standard_normal(d_in))
    W = rng.standard_normal((d_out, d_in))
    return W, damped_hessian(X), X.T @ X / n


@lru_cache(maxsize=64)
def admm_run(seed: int, pattern="2:4", rank: int = LAYER_RANK, outliers: float = 1.0) -> Decomposition:
    """3BASiL on :func:`layer_problem` (cached: the claim, the budget rule and the figure share it;
    its wall time is kept in ``history["seconds"]``)."""
    W, H, _ = layer_problem(seed, outliers)
    t = time.perf_counter()
    dec = threebasil(W, H, pattern, rank)
    dec.history["seconds"] = time.perf_counter() - t
    return dec


def layer_record(method: str, seed: int, pattern="2:4", rank: int = LAYER_RANK, outliers: float = 1.0) -> dict:
    """One method's relative error tr(E H E^T)/tr(W H W^T) on :func:`layer_problem` under the
    budget rule, with its iterations and wall time (cached on disk: the claim, the figures and the
    time table share every run)."""
    check_choice(method, "method", LAYER_METHODS)
    rank = check_int(rank, "rank", minimum=0)
    key = cache_key(method=method, seed=seed, pattern=pattern, rank=rank, outliers=outliers, v=3, rule="admm-matched",
                    shape=LAYER_SHAPE, n=LAYER_SAMPLES)

    def build():
        W, H, H0 = layer_problem(seed, outliers)
        if method == "3BASiL":
            dec = admm_run(seed, pattern, rank, outliers)
            return {"error": dec.error(W, H0), "nit": dec.nit, "seconds": dec.history["seconds"]}
        budget = admm_run(seed, pattern, rank, outliers).nit if method in ("OATS", "HASSLE-free") else None
        t = time.perf_counter()
        dec = budgeted(method, W, H, pattern, rank, budget)
        return {"error": dec.error(W, H0), "nit": dec.nit, "seconds": time.perf_counter() - t}
    return {k: float(v) for k, v in cached_torch("ch33-layer", key, build).items()}


def layer_errors(seed: int, pattern="2:4", rank: int = LAYER_RANK, outliers: float = 1.0,
                 methods=LAYER_METHODS) -> dict[str, float]:
    """The relative error of each of ``methods`` on :func:`layer_problem` under the budget rule."""
    return {m: layer_record(m, seed, pattern, rank, outliers)["error"] for m in methods}


# --------------------------------------------------------------------------- the tiny language model

LM_PATTERN = "2:4"
LM_RANK = 2                # 6% of a 64 x 64 map's weights (Llama-3-8B's rank 64: 3% of a 4096 x 4096 one)
CAL_SEQUENCES = 32         # calibration windows of 64 characters (2048 tokens), drawn by the seed
LM_BLOCK = 0               # budget rule: the first block only, and in it ...
LM_MAPS = ("attn.v", "attn.o")   # ... the two attention maps whose outputs enter the residual stream linearly
LM_SEEDS = (0, 1, 2)       # 3 calibration draws
LM_FAST_SEEDS = (0,)
LM_TUNING_SEEDS = (100, 101)
TM_EPOCHS, TM_CHUNK = 20, 8
PAPER_DAMP = 0.005         # the authors' damping; the ADMM (and so the budget) always uses it
GRIDS = {                  # three settings for every method, tuned on LM_TUNING_SEEDS
    # widened once (before the claim's run): with (1e-3, 3e-3, 1e-2), (1e-3, 5e-3, 5e-2) and
    # (1e-3, 5e-3, 5e-2) the bests of 3BASiL-TM, HASSLE-free and OATS sat on an edge
    "3BASiL-TM": {"tm_lr": (3e-3, 1e-2, 3e-2)},
    "HASSLE-free": {"damp": (5e-3, 5e-2, 5e-1)},
    "OATS": {"damp": (2e-4, 1e-3, 5e-3)},
    "EoRA": {"damp": (1e-3, 5e-3, 5e-2)},
}
# The tuning's result on LM_TUNING_SEEDS (median held-out perplexity of each grid setting), frozen
# so that the chapter need not re-run 24 compressions; tests/llm re-runs lm_tuning() and checks
# these scores and the picks. None: tune afresh.
FROZEN_SCORES: dict[str, tuple[float, ...]] | None = {
    "3BASiL-TM": (5.6492, 5.6414, 5.6459),
    "HASSLE-free": (5.8157, 5.8141, 5.9118),
    "OATS": (6.1022, 6.1019, 6.1058),
    "EoRA": (6.4002, 6.3991, 6.4098),
}
# Cost of the first registration (referee's profile, kept for the record): 45 compressions of the 12
# maps, 301 s for gap_cut and 58 s for layer_ratio from an empty cache on 2 shared cores.


@lru_cache(maxsize=1)
def _texts() -> tuple[torch.Tensor, torch.Tensor]:
    train = torch.cat([tinylm.split(d)[0] for d in tinylm.DOMAINS])
    held = torch.cat([tinylm.split(d)[1] for d in tinylm.DOMAINS])
    return train, held


def calibration(seed: int, sequences: int = CAL_SEQUENCES) -> torch.Tensor:
    """``sequences`` random training windows of the model's context (the seed is the draw)."""
    check_int(seed, "seed")
    check_int(sequences, "sequences", minimum=1)
    train, _ = _texts()
    c = tinylm.pretrained().cfg.context
    starts = torch.randint(0, len(train) - c, (sequences,), generator=torch.Generator().manual_seed(seed))
    return torch.stack([train[s:s + c] for s in starts.tolist()])


def _set(block, name: str, module) -> None:
    parent = block
    *path, last = name.split(".")
    for p in path:
        parent = getattr(parent, p)
    setattr(parent, last, module)


def _get(block, name: str):
    for p in name.split("."):
        block = getattr(block, p)
    return block


@lru_cache(maxsize=8)
def block_inputs(seed: int, sequences: int = CAL_SEQUENCES):
    """The dense model's block-:data:`LM_BLOCK` input and output on calibration draw ``seed``, and
    the input X (tokens x d_in) of each of its linear maps. Block 0's input is the embedding, so
    these are the same for every method."""
    model = tinylm.pretrained()
    ids = calibration(seed, sequences)
    block = model.blocks[LM_BLOCK]
    inputs = {}
    hooks = [_get(block, n).register_forward_hook(
        lambda mod, inp, out, n=n: inputs.__setitem__(n, inp[0].reshape(-1, inp[0].shape[-1]).double().numpy()))
        for n in LM_MAPS]
    with torch.no_grad(), one_torch_thread():
        hidden = model.embed(ids) + model.position(torch.arange(ids.shape[1]))
        for b in model.blocks[:LM_BLOCK]:
            hidden = b(hidden)
        target = block(hidden)
    for h in hooks:
        h.remove()
    return hidden, target, inputs


@lru_cache(maxsize=256)
def map_decomposition(method: str, seed: int, name: str, pattern=LM_PATTERN, rank: int = LM_RANK,
                      damp: float = PAPER_DAMP, sequences: int = CAL_SEQUENCES) -> Decomposition:
    """One map of block :data:`LM_BLOCK` decomposed by ``method`` under the budget rule (the
    budget is the ADMM's iteration count on the same map at the paper's damping)."""
    if name not in LM_MAPS:
        raise ValueError(f"name must be one of {LM_MAPS}, got {name!r}")
    check_positive(damp, "damp")
    W = _get(tinylm.pretrained().blocks[LM_BLOCK], name).weight.detach().double().numpy()
    X = block_inputs(seed, sequences)[2][name]
    budget = None
    if method in ("OATS", "HASSLE-free"):
        budget = map_decomposition("3BASiL", seed, name, pattern, rank, PAPER_DAMP, sequences).nit
    with one_torch_thread():
        return budgeted(method, W, damped_hessian(X, damp, damp), pattern, rank, budget)


def compress_model(method: str, seed: int, pattern=LM_PATTERN, rank: int = LM_RANK, *, tm_lr: float | None = None,
                   sequences: int = CAL_SEQUENCES, damp: float = PAPER_DAMP):
    """A copy of the pretrained tiny LM with the maps :data:`LM_MAPS` of block :data:`LM_BLOCK`
    compressed by ``method`` (budget rule) from the block's calibration inputs; with ``tm_lr`` the
    block is then refined by transformer matching (TM) against the dense block's output on the same
    inputs. Returns (model, per-map relative errors)."""
    check_choice(method, "method", ("Wanda", "EoRA", "OATS", "HASSLE-free", "3BASiL"))
    model = copy.deepcopy(tinylm.pretrained())
    hidden, target, inputs = block_inputs(seed, sequences)
    block = model.blocks[LM_BLOCK]
    errors, masks = {}, {}
    for n in LM_MAPS:
        W = _get(block, n).weight.detach().double().numpy()
        dec = map_decomposition(method, seed, n, pattern, rank, damp, sequences)
        X = inputs[n]
        errors[f"blocks.{LM_BLOCK}.{n}"] = dec.error(W, X.T @ X / len(X))
        layer = SparseLowRankLinear(dec.S, dec.B, dec.A)
        _set(block, n, layer)
        masks[layer] = (layer.weight != 0).to(layer.weight.dtype)
    if tm_lr is not None:
        with one_torch_thread():
            transformer_matching(block, hidden, target, masks, lr=tm_lr, epochs=TM_EPOCHS, chunk=TM_CHUNK, seed=seed)
    return model.eval(), errors


@lru_cache(maxsize=1)
def dense_perplexity() -> float:
    """Held-out perplexity of the dense tiny LM."""
    return tinylm.perplexity(tinylm.pretrained(), _texts()[1])


def lm_perplexity(method: str, seed: int, pattern=LM_PATTERN, rank: int = LM_RANK, **setting) -> float:
    """Held-out perplexity of the model compressed by ``method`` ("3BASiL-TM" is 3BASiL refined by
    TM; any method takes ``tm_lr``; the baselines take ``damp``). Cached on disk."""
    if method == "3BASiL-TM":
        method, setting = "3BASiL", {"tm_lr": 3e-3, **setting}
    key = cache_key(method=method, seed=seed, pattern=pattern, rank=rank, setting=setting, cal=CAL_SEQUENCES,
                    tm=(TM_EPOCHS, TM_CHUNK), v=3, rule="admm-matched", block=LM_BLOCK, maps=LM_MAPS,
                    base=tinylm.BASE_STEPS, torch=torch.__version__)

    def build():
        model, _ = compress_model(method, seed, pattern, rank, **setting)
        return {"ppl": tinylm.perplexity(model, _texts()[1])}
    return float(cached_torch("ch33-ppl", key, build)["ppl"])


def lm_tuning(methods=tuple(GRIDS), seeds=LM_TUNING_SEEDS) -> dict[str, Tuning]:
    """Every method over its 3-setting grid (GRIDS), scored by the median held-out perplexity over
    the held-out calibration draws ``seeds``."""
    return {m: grid_search(m, lambda seed, m=m, **kw: lm_perplexity(m, seed, **kw), GRIDS[m], seeds)
            for m in methods}


def frozen_tuning() -> dict[str, Tuning]:
    """The tuning of :func:`lm_tuning` as frozen in FROZEN_SCORES (re-run when nothing is frozen)."""
    if FROZEN_SCORES is None:
        return lm_tuning()
    return {m: Tuning(m, [dict(zip(g, v)) for v in itertools.product(*g.values())], FROZEN_SCORES[m],
                      LM_TUNING_SEEDS) for m, g in GRIDS.items()}


def lm_settings() -> dict[str, dict]:
    """The tuned setting of every method (from :func:`frozen_tuning`)."""
    return {m: t.best for m, t in frozen_tuning().items()}


# --------------------------------------------------------------------------- claims

GLUE_FORMATS = {
    "gap_cut": {"gap_cut": "{:.0%}", "gap_method": "{:.3f}", "gap_best_baseline": "{:.3f}",
                "dense_ppl": "{:.3f}", "gap_wanda": "{:.3f}"},
    "layer_ratio": {"ratio_alt": "{:.2f}", "ratio_oats": "{:.2f}", "ratio_alt_max": "{:.2f}"},
}

RULE = ("budget rule: on every map each iterative layer-wise solver runs as many iterations as 3BASiL's ADMM "
        "takes there by the authors' stopping rule (HASSLE-free rounds, OATS iterations; one iteration = one "
        "low-rank fit + one sparse step), so iteration counts are not tuned")


@claim("33", "3BASiL-TM cuts the perplexity gap to the dense model at 2:4 + low rank", kind="reproduction",
       paper="3BASiL-TM reduces the WikiText2 perplexity gap to dense Llama-3-8B by over 30% at 2:4 sparsity "
             "+ rank 64, compared to prior S+LR methods (abstract)",
       expect="RE-REGISTERED on a budget rule after the first full run, because that run cost about 6 minutes "
              "from an empty cache (45 compressions of all 12 maps; HASSLE-free at its tuned 320 rounds was 40% of "
              "it), far above the chapter's 60 s; that run measured gap_cut = 55% (it passed). New criterion, fixed "
              "before its full run: on the tiny character LM, the value and output maps of block 0's attention "
              "(attn.v, attn.o; 64 x 64) compressed at 2:4 + rank 2, the rest dense; " + RULE + "; the remaining "
              "hyperparameter of each method "
              "(TM's learning rate for 3BASiL-TM; the damping of H for HASSLE-free, OATS and EoRA) tuned over 3 "
              "settings on 2 held-out draws (100, 101) and frozen in code, a unit test re-running the tuning; "
              "the median over 3 calibration draws (0, 1, 2) of 3BASiL-TM's held-out perplexity gap to the dense "
              "model is at least 30% smaller than the best baseline's: gap_cut >= 0.30 (the paper's number)",
       control="the key ingredient removed: 3BASiL without TM in place of 3BASiL-TM (changed in review from "
               "'HASSLE-free in place of 3BASiL-TM', which is the best baseline itself, so its cut was 0 by "
               "construction)",
       name="gap_cut")
def claim_gap_cut(fast: bool = False, control: bool = False) -> Measured:
    seeds = LM_FAST_SEEDS if fast else LM_SEEDS
    dense = dense_perplexity()
    settings = lm_settings()
    base = {m: st for m, st in settings.items() if m != "3BASiL-TM"}
    if fast:       # one draw, against the full run's best baseline only (a smoke test of the pipeline)
        base = {"HASSLE-free": base["HASSLE-free"]}
    tm = settings["3BASiL-TM"]
    gaps = {m: [lm_perplexity(m, s, **st) - dense for s in seeds] for m, st in base.items()}
    best = min(gaps, key=lambda m: np.median(gaps[m]))
    meth, st = ("3BASiL", {}) if control else ("3BASiL-TM", tm)
    mine = [lm_perplexity(meth, s, **st) - dense for s in seeds]
    wanda_gap = [] if fast else [lm_perplexity("Wanda", s) - dense for s in seeds]
    no_tm = [] if fast or control else [lm_perplexity("3BASiL", s) - dense for s in seeds]
    # the best baseline refined by the same TM at 3BASiL-TM's tuned rate (a diagnostic, reported, not
    # graded: the criterion, as the paper's, compares with baselines without TM)
    best_tm = [] if fast or control else [lm_perplexity(best, s, **base[best], **tm) - dense for s in seeds]
    g_m, g_b = float(np.median(mine)), float(np.median(gaps[best]))
    cut = 1.0 - g_m / g_b
    values = {"gap_cut": cut, "gap_method": g_m, "gap_best_baseline": g_b, "dense_ppl": dense}
    if wanda_gap:
        values["gap_wanda"] = float(np.median(wanda_gap))
    return Measured(values,
                    criteria=[Criterion("gap_cut", ">=", 0.30)], seeds=seeds,
                    precondition=bool(g_b > 0.01),
                    summary=f"gap {g_m:.3f} vs best baseline ({best}) {g_b:.3f}: cut {cut:.0%}",
                    details={"gaps": gaps, "method_gaps": mine, "best": best, "no_tm": no_tm, "best_tm": best_tm,
                             "settings": settings, "tunings": frozen_tuning()})


@claim("33", "3BASiL's layer-wise error is far below the alternating methods'", kind="reproduction",
       paper="the 3-block ADMM reaches a lower layer-wise reconstruction error than alternating S+LR methods "
             "(OATS, HASSLE-free) (paper's layer-wise comparisons; no single number)",
       expect="RE-REGISTERED on the budget rule after the first full run, which cost 58 s from an empty cache "
              "(iteration budgets tuned on grids up to 400 rounds / 1000 iterations, 5 layers at 2:4 and 50% "
              "unstructured) and measured median ratios 0.63 and 0.33: it did NOT reproduce (declared, with the "
              "four checks). New criterion, fixed before its full run: 3 synthetic layers (seeds 0, 1, 2; 64 x 128, "
              "outlier-scaled correlated inputs) at 2:4 + rank 8; " + RULE + " (the baselines have no other "
              "hyperparameter); the median ratio of 3BASiL's relative error to the better alternating baseline's "
              "is <= 0.6 and to OATS's <= 0.3 (the bounds registered before the first run, kept)",
       control="the alternating (non-joint) HASSLE-free-style decomposition in place of the ADMM",
       reproduces=False,
       diagnosis="the re-registered run also misses both bounds: median ratios 0.69 (worst draw 0.73) and 0.32 "
                 "on draws 0, 1, 2 (the first registration: 0.63 and 0.33 with tuned iteration budgets). Four "
                 "checks: (1) the proxy shows the phenomenon: the ADMM's error is below both alternating methods' "
                 "on every layer (HASSLE-free about 1.45x, OATS about 3x higher at equal iterations); (2) the ADMM "
                 "runs the authors' exact schedule (rho0 = 0.1, growth 1.1/1.05/1.02, restart, stopping rule, "
                 "damping 0.005) and the baselines get as many iterations as it takes (330-370 here, more than the "
                 "authors' default of 80 for OATS); (3) reductions pass: at rank 0 with every weight kept the ADMM "
                 "is exact, and it never ends above its EoRA start (tests); (4) the control (the alternation in "
                 "place of the ADMM) gives ratio 1.0 and fails. The bounds 0.6 and 0.3 came from a single untuned "
                 "prototype draw (20 rounds, 80 iterations): against baselines given equal iterations the joint "
                 "method's advantage is about 1.45x over HASSLE-free and 3x over OATS, not 1.7x and 3.3x. "
                 "Referee's check outside the registration: draws 3 and 4 (the first registration's 5 draws) give "
                 "ratios 0.67 / 0.35 and 0.65 / 0.33, so the miss does not hinge on the 3 registered draws",
       name="layer_ratio")
def claim_layer_ratio(fast: bool = False, control: bool = False) -> Measured:
    seeds = FAST_SEEDS if fast else CLAIM_SEEDS
    rows = []
    for s in seeds:
        e = layer_errors(s, "2:4", methods=("OATS", "HASSLE-free", "3BASiL"))
        mine = e["HASSLE-free"] if control else e["3BASiL"]
        rows.append((mine / min(e["HASSLE-free"], e["OATS"]), mine / e["OATS"]))
    r = np.array(rows)
    ra, ro = float(np.median(r[:, 0])), float(np.median(r[:, 1]))
    return Measured({"ratio_alt": ra, "ratio_oats": ro, "ratio_alt_max": float(r[:, 0].max())},
                    criteria=[Criterion("ratio_alt", "<=", 0.6), Criterion("ratio_oats", "<=", 0.3)],
                    seeds=seeds, summary=f"median error ratio {ra:.2f} to the best alternating, {ro:.2f} to OATS",
                    details={"ratios": r})


# --------------------------------------------------------------------------- figures

HEATMAP_LAYER = "blocks.0.attn.v"
FIG_METHODS = ("3BASiL", "HASSLE-free", "OATS", "EoRA")


def layer_calibration(name: str = "attn.v", seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """(W, X) of one attention map of the dense tiny LM's block LM_BLOCK and its inputs on
    calibration draw ``seed``."""
    if name not in LM_MAPS:
        raise ValueError(f"name must be one of {LM_MAPS}, got {name!r}")
    W = _get(tinylm.pretrained().blocks[LM_BLOCK], name).weight.detach().double().numpy()
    return W, block_inputs(check_int(seed, "seed"))[2][name]


@lru_cache(maxsize=1)
def heatmap_parts() -> dict[str, dict]:
    """S, L and the output error of each method on :data:`HEATMAP_LAYER` (2:4 + rank LM_RANK, the
    budget rule and the tuned damping: the same runs as the claim's calibration draw 0)."""
    W, X = layer_calibration()
    H0 = X.T @ X / len(X)
    out = {}
    settings = lm_settings()
    for m in FIG_METHODS:
        dec = map_decomposition(m, 0, "attn.v", damp=settings.get(m, {}).get("damp", PAPER_DAMP))
        out[m] = {"S": dec.S, "L": dec.L, "error": dec.error(W, H0), "W": W}
    return out


def _heatmap_traces(method: str) -> list:
    p = heatmap_parts()[method]
    z = float(np.abs(p["W"]).max())
    common = dict(colorscale="RdBu", zmin=-z, zmax=z, showscale=False)
    rows = slice(0, 16)                               # the first 16 output rows, all 64 inputs
    return [go.Heatmap(z=p["W"][rows], xaxis="x", yaxis="y", name="W", **common),
            go.Heatmap(z=p["S"][rows], xaxis="x2", yaxis="y2", name="S", **common),
            go.Heatmap(z=p["L"][rows] * 4, xaxis="x3", yaxis="y3", name="L (x4)", **common)]


def _three_panels(fig: go.Figure, titles) -> go.Figure:
    for i, (lo, hi) in enumerate(((0.0, 0.31), (0.345, 0.655), (0.69, 1.0))):
        s = "" if i == 0 else str(i + 1)
        fig.update_layout({f"xaxis{s}": dict(domain=[lo, hi], anchor=f"y{s}", title=titles[i], showticklabels=False),
                           f"yaxis{s}": dict(anchor=f"x{s}", autorange="reversed", showticklabels=i == 0,
                                             title="output row" if i == 0 else None)})
    return fig


HEATMAP_TITLES = ("dense W", "sparse S (2:4)", "low rank L = BA (x4)")


def heatmap_slider_figure() -> go.Figure:
    """Static twin of the heatmap explorer: W, S and L of one attention map, one frame per method."""
    steps = [SliderStep(m, _heatmap_traces(m), frame_note(f"{m}: output error {heatmap_parts()[m]['error']:.3f}"))
             for m in FIG_METHODS]
    fig = slider_figure(steps, slider_label="method", fixed_axes=False, height=430,
                        title=f"Sparse plus low rank of the value map {HEATMAP_LAYER} (first 16 rows)")
    return _three_panels(fig, HEATMAP_TITLES)


def heatmap_figure(method: str = "3BASiL") -> go.Figure:
    """Live twin of :func:`heatmap_slider_figure`."""
    check_choice(method, "method", FIG_METHODS)
    fig = go.Figure(_heatmap_traces(method))
    base_layout(fig, title=f"{method}: output error {heatmap_parts()[method]['error']:.3f}", height=400)
    return _three_panels(fig, HEATMAP_TITLES)


def admm_figure(seed: int = 0, pattern="2:4") -> go.Figure:
    """3BASiL's run on a synthetic layer: relative error against iterations beside the final errors of
    the baselines (left); rho and the support-change fraction (right)."""
    h = admm_run(seed, pattern).history
    errs = layer_errors(seed, pattern)
    fig = make_subplots(rows=1, cols=2, horizontal_spacing=0.14)
    fig.add_trace(go.Scatter(x=h["iteration"], y=h["error"], name="3BASiL", line=dict(color=color_for(0), width=2.5)),
                  1, 1)
    for i, m in enumerate(("HASSLE-free", "OATS", "EoRA", "Wanda"), start=1):
        fig.add_trace(go.Scatter(x=[h["iteration"][0], h["iteration"][-1]], y=[errs[m]] * 2, name=f"{m} (final)",
                                 mode="lines", line=dict(color=color_for(i), dash="dash")), 1, 1)
    fig.add_trace(go.Scatter(x=h["iteration"], y=h["rho"], name="rho", line=dict(color=color_for(5))), 1, 2)
    fig.add_trace(go.Scatter(x=h["iteration"], y=np.maximum(h["support_change"], 1e-5), name="support change / k",
                             line=dict(color=color_for(6), dash="dot")), 1, 2)
    lock = next((it for it, f in zip(h["iteration"], h["support_change"]) if f <= 0.005), None)
    base_layout(fig, title="3BASiL on a 64 x 128 layer (2:4 + rank 8): error, rho and support changes",
                height=440)
    fig.update_yaxes(type="log", exponentformat="power")
    fig.update_xaxes(title_text="ADMM iteration")
    fig.update_yaxes(title_text="relative output error", row=1, col=1)
    fig.update_yaxes(title_text="rho; fraction of support changed", row=1, col=2)
    if lock:
        for c in (1, 2):
            fig.add_vrect(x0=h["iteration"][0], x1=lock, fillcolor="#fde0c5", opacity=0.5, line_width=0, layer="below", row=1, col=c)
        fig.add_annotation(x=h["iteration"][0], y=1, xref="x", yref="y domain", text="explore", showarrow=False,
                           xanchor="left", yanchor="top")
        fig.add_annotation(x=lock, y=1, xref="x", yref="y domain", text="lock in", showarrow=False,
                           xanchor="left", yanchor="top")
    return fig


BUDGET_RANKS = (0, 2, 8)
BUDGET_KEPT = ("1:4", "2:4", "3:4")     # N:M patterns: a quarter, half, three quarters kept


def budget_table() -> dict:
    """Relative error of every method on a small layer (32 x 64, 512 samples) over BUDGET_RANKS x
    BUDGET_KEPT (N:M sparsity; the budget rule): the explorer's precomputed grid (cached on disk)."""
    key = cache_key(ranks=BUDGET_RANKS, kept=BUDGET_KEPT, methods=FIG_METHODS, v=3, rule="admm-matched")
    return _budget_memo(key)


@lru_cache(maxsize=1)
def _budget_memo(key: str) -> dict:
    def build():
        W, H, H0 = layer_problem(7, 1.0, 32, 64, 512)
        out = {}
        for r in BUDGET_RANKS:
            for k in BUDGET_KEPT:
                admm = threebasil(W, H, k, r)
                for m in FIG_METHODS:
                    dec = admm if m == "3BASiL" else budgeted(m, W, H, k, r, admm.nit)
                    out[f"{r}|{k}|{m}"] = dec.error(W, H0)
        return out
    return cached_torch("ch33-budget", key, build)


def budget_ratio(rank: int, kept: str) -> float:
    """3BASiL's error over the best alternating method's (HASSLE-free, OATS) at one grid point."""
    t = budget_table()
    if f"{rank}|{kept}|3BASiL" not in t:
        raise ValueError(f"rank and kept must be on the grid {BUDGET_RANKS} x {BUDGET_KEPT}, got {rank}, {kept}")
    return t[f"{rank}|{kept}|3BASiL"] / min(t[f"{rank}|{kept}|HASSLE-free"], t[f"{rank}|{kept}|OATS"])


def _budget_traces(rank: int) -> list:
    t = budget_table()
    return [go.Scatter(x=[n_kept((1, 4), k) / 4 for k in BUDGET_KEPT], y=[t[f"{rank}|{k}|{m}"] for k in BUDGET_KEPT],
                       name=m, mode="lines+markers",
                       line=dict(color=color_for(i), width=2.5 if i == 0 else 2, dash="solid" if i == 0 else "dash"))
            for i, m in enumerate(FIG_METHODS)]


def budget_slider_figure() -> go.Figure:
    """Static twin: relative error against the fraction of weights kept, one frame per rank."""
    steps = [SliderStep(str(r), _budget_traces(r), frame_note(f"rank {r}")) for r in BUDGET_RANKS]
    return slider_figure(steps, slider_label="rank of L", active=1, logy=True,
                         title="Sparsity and rank: relative output error of a 32 x 64 layer",
                         xaxis_title="fraction of weights kept in S", yaxis_title="relative output error")


def budget_figure(rank: int = 2) -> go.Figure:
    """Live twin of :func:`budget_slider_figure`."""
    if rank not in BUDGET_RANKS:
        raise ValueError(f"rank must be one of {BUDGET_RANKS}, got {rank!r}")
    fig = go.Figure(_budget_traces(rank))
    return base_layout(fig, title=f"Relative output error at rank {rank}", logy=True,
                       xaxis_title="fraction of weights kept in S", yaxis_title="relative output error")


EXPLORER_BUDGET = Explorer("33", "sparsity_rank", budget_figure,
                           {"rank": Slider("rank of L", list(BUDGET_RANKS), 2)})
EXPLORER_HEATMAP = Explorer("33", "heatmaps", heatmap_figure,
                            {"method": Choice("method", list(FIG_METHODS), "3BASiL")})


def gaps_figure(details: dict) -> go.Figure:
    """Perplexity gap to the dense model of each tuned method, one dot per calibration draw, with
    3BASiL without TM and the best baseline refined by TM (diagnostics) where the run has them."""
    rows = dict(details["gaps"])
    rows["3BASiL-TM"] = details["method_gaps"]
    if details.get("no_tm"):
        rows["3BASiL (no TM)"] = details["no_tm"]
    best_tm = f"{details['best']} + TM"
    if details.get("best_tm"):
        rows[best_tm] = details["best_tm"]
    order = sorted(rows, key=lambda m: -np.median(rows[m]))
    colors = {"3BASiL-TM": 0, "HASSLE-free": 1, "OATS": 2, "EoRA": 3, "3BASiL (no TM)": 6, best_tm: 7}
    fig = go.Figure()
    for m in order:
        fig.add_trace(go.Box(y=rows[m], name=m, boxpoints="all", marker=dict(color=color_for(colors.get(m, 4))),
                             showlegend=False))
    return base_layout(fig, title="Held-out perplexity gap to the dense tiny LM (block 0's attn.v and attn.o at "
                                  "2:4 + rank 2), per calibration draw",
                       yaxis_title="perplexity minus dense perplexity", height=420)


def compression_times(seed: int = 0, pattern="2:4") -> list[dict]:
    """Iterations, wall time (one run, one thread, recorded when the run was made) and error of each
    method on one synthetic layer under the budget rule (the claim's runs, read from the cache)."""
    rows = []
    for m in ("3BASiL", "HASSLE-free", "OATS", "EoRA"):
        r = layer_record(m, check_int(seed, "seed"), pattern)
        rows.append({"method": m, "iterations": int(r["nit"]), "seconds": round(r["seconds"], 3),
                     "relative error": f"{r['error']:.2e}"})
    return rows
