"""Chapter 33: experiments, figures, live explorers and claims for 3BASiL-TM. The methods are in
:mod:`optbook.llm.sparse_plus_lowrank`; the language model is Part VII's :mod:`optbook.llm.tinylm`.

Two proxies. (1) One synthetic layer, W (64 x 128) with calibration inputs whose columns are
correlated and carry heavy, uneven scales (the outlier features of LLM activations): the
layer-wise objective of the paper, measured exactly. (2) The tiny character transformer (two
blocks, six linear maps each, 0.1 M weights), compressed block by block from calibration windows
of its training text, its perplexity measured on held-out paragraphs of all four domains.
"""
from __future__ import annotations

import copy
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
    oats,
    relative_error,
    threebasil,
    transformer_matching,
    wanda,
)

# --------------------------------------------------------------------------- the synthetic layer

LAYER_SHAPE = (64, 128)
LAYER_SAMPLES = 2048
LAYER_RANK = 8
CLAIM_SEEDS = (0, 1, 2, 3, 4)
FAST_SEEDS = (0, 1)


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
    """3BASiL on :func:`layer_problem` (cached: the claim and the figure share it)."""
    W, H, _ = layer_problem(seed, outliers)
    return threebasil(W, H, pattern, rank)


def _layer_error(method: str, seed: int, pattern, rank: int, outliers: float, **kw) -> float:
    """One method's relative error on :func:`layer_problem` (cached on disk: the claim, its
    tuning and the notebook share every run)."""
    key = cache_key(method=method, seed=seed, pattern=pattern, rank=rank, outliers=outliers, kw=kw, v=2,
                    shape=LAYER_SHAPE, n=LAYER_SAMPLES)

    def build():
        W, H, H0 = layer_problem(seed, outliers)
        if method == "Wanda":
            return {"error": relative_error(W, wanda(W, H, pattern), 0.0, H0)}
        if method == "3BASiL":
            return {"error": admm_run(seed, pattern, rank, outliers).error(W, H0)}
        return {"error": METHODS[method](W, H, pattern, rank, **kw).error(W, H0)}
    return float(cached_torch("ch33-layer", key, build)["error"])


@lru_cache(maxsize=512)
def layer_errors(seed: int, pattern="2:4", rank: int = LAYER_RANK, outliers: float = 1.0,
                 hassle_rounds: int = 20, oats_iters: int = 80) -> dict[str, float]:
    """Relative output error tr(E H E^T)/tr(W H W^T) of each method on :func:`layer_problem`."""
    check_int(rank, "rank")
    check_int(hassle_rounds, "hassle_rounds", minimum=1)
    check_int(oats_iters, "oats_iters", minimum=1)
    check_positive(outliers, "outliers", allow_zero=True)
    return {"Wanda": _layer_error("Wanda", seed, pattern, rank, outliers),
            "EoRA": _layer_error("EoRA", seed, pattern, rank, outliers),
            "OATS": _layer_error("OATS", seed, pattern, rank, outliers, iters=oats_iters),
            "HASSLE-free": _layer_error("HASSLE-free", seed, pattern, rank, outliers, rounds=hassle_rounds),
            "3BASiL": _layer_error("3BASiL", seed, pattern, rank, outliers)}


# Widened once: with (20..400) and (5..160) both bests sat on the top edge. The top values give each
# alternating method more iterations than 3BASiL's ADMM needs on these layers (about 330-460).
LAYER_GRIDS = {"OATS": {"iters": (20, 80, 200, 400, 1000)}, "HASSLE-free": {"rounds": (5, 20, 80, 160, 400)}}
LAYER_TUNING_SEEDS = (100, 101)


def layer_tuning(pattern="2:4", seeds=LAYER_TUNING_SEEDS) -> list[Tuning]:
    """Each alternating baseline over a 5-point grid of its iteration budget on held-out layers."""
    return [grid_search(m, lambda seed, m=m, **kw: _layer_error(m, seed, pattern, LAYER_RANK, 1.0, **kw), grid, seeds)
            for m, grid in LAYER_GRIDS.items()]


# --------------------------------------------------------------------------- the tiny language model

LM_PATTERN = "2:4"
LM_RANK = 2                # 6% of a 64 x 64 layer's weights (Llama-3-8B's rank 64: 3% of a 4096 x 4096 one)
CAL_SEQUENCES = 32         # calibration windows of 64 characters (2048 tokens), drawn by the seed
LM_SEEDS = (0, 1, 2)       # one compression of the model takes over 5 s: 3 calibration draws
LM_FAST_SEEDS = (0,)
LM_TUNING_SEEDS = (100, 101)
LAYER_NAMES = ("attn.q", "attn.k", "attn.v", "attn.o", "fc1", "fc2")
TM_EPOCHS, TM_CHUNK = 20, 8
# Cold cost (referee's profile, 2 shared cores at load ~2, empty cache but the tiny LM): one
# compression of the 12 maps takes 3.7 s for 3BASiL, 6.6 s for 3BASiL-TM, 22 s for HASSLE-free at
# 320 rounds, 10 s for OATS at 800 iterations, under 1 s for EoRA and Wanda, plus 0.5 s to score
# it. The full gap_cut makes n_lm_compressions() of them: measured 301 s from an empty cache at load
# ~1.7 (about 40% in HASSLE-free's tuned budget, 25% in the TM-refined HASSLE-free diagnostic, 15% in
# OATS's, 20% in 3BASiL(-TM) and scoring), about 10 min on a loaded machine; layer_ratio 58 s more. The notebook meets its 60 s budget only with a warm disk cache: even
# with tuning frozen, 3 draws of HASSLE-free at its tuned 320 rounds alone take about 66 s.
GRIDS = {"OATS": {"iters": (20, 80, 200, 400, 1000)}, "HASSLE-free": {"rounds": (5, 20, 80, 160, 400)}}
LAYER_TUNING_SEEDS = (100, 101)


def layer_tuning(pattern="2:4", seeds=LAYER_TUNING_SEEDS) -> list[Tuning]:
    """Each alternating baseline over a 5-point grid of its iteration budget on held-out layers."""
    return [grid_search(m, lambda seed, m=m, **kw: _layer_error(m, seed, pattern, LAYER_RANK, 1.0, **kw), grid, seeds)
            for m, grid in LAYER_GRIDS.items()]


# --------------------------------------------------------------------------- the tiny language model

LM_PATTERN = "2:4"
LM_RANK = 2                # 6% of a 64 x 64 layer's weights (Llama-3-8B's rank 64: 3% of a 4096 x 4096 one)
CAL_SEQUENCES = 32         # calibration windows of 64 characters (2048 tokens), drawn by the seed
LM_SEEDS = (0, 1, 2)       # one compression of the model takes over 5 s: 3 calibration draws
LM_FAST_SEEDS = (0,)
LM_TUNING_SEEDS = (100, 101)
LAYER_NAMES = ("attn.q", "attn.k", "attn.v", "attn.o", "fc1", "fc2")
TM_EPOCHS, TM_CHUNK = 20, 8
# Cold cost (referee's profile, 2 shared cores, empty cache but the tiny LM): one compression of
# the 12 maps takes about 13 s for 3BASiL-TM (7 s ADMM + 6 s TM), 75 s for HASSLE-free at 320
# rounds (0.23 s a round), 31 s for OATS at 800 iterations, under 1 s for EoRA and Wanda. The full
# gap_cut makes n_lm_compressions() of them (about 10 min, 56% in HASSLE-free's tuned budget, 24% in
# OATS's, 19% in 3BASiL-TM); layer_ratio about 4 min more. The notebook therefore meets its 60 s
# budget only with a warm disk cache.
GRIDS = {                  # three settings for every method, tuned on LM_TUNING_SEEDS
    "3BASiL-TM": {"tm_lr": (1e-3, 3e-3, 1e-2)},
    "HASSLE-free": {"rounds": (20, 80, 320)},   # widened once: (5, 20, 80) had its best on the top edge
    "OATS": {"iters": (80, 200, 800)},          # widened once: (20, 80, 200) had its best on the top edge
    "EoRA": {"damp": (1e-3, 5e-3, 5e-2)},
}


def n_lm_compressions() -> int:
    """How many model compressions the full gap_cut claim makes from an empty cache (tuning on the
    held-out draws, then every tuned baseline, 3BASiL-TM, 3BASiL without TM, Wanda and the best
    baseline refined by TM on the claim's draws; the control reuses the tuned HASSLE-free runs)."""
    tuning = sum(len(v) for g in GRIDS.values() for v in g.values()) * len(LM_TUNING_SEEDS)
    return tuning + len(LM_SEEDS) * (len(GRIDS) + 3)


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


def _decompose(method: str, W, H, pattern, rank, setting) -> Decomposition:
    if method == "Wanda":
        return Decomposition(wanda(W, H, pattern), np.zeros((W.shape[0], 0)), np.zeros((0, W.shape[1])), "Wanda")
    if method in ("3BASiL", "3BASiL-TM"):
        return threebasil(W, H, pattern, rank)
    if method == "EoRA":
        return METHODS["EoRA"](W, H, pattern, rank)
    if method == "OATS":
        return oats(W, H, pattern, rank, iters=setting.get("iters", 80))
    if method == "HASSLE-free":
        return hassle_free(W, H, pattern, rank, rounds=setting.get("rounds", 20))
    raise ValueError(f"method must be one of Wanda, EoRA, OATS, HASSLE-free, 3BASiL, 3BASiL-TM; got {method!r}")


def compress_model(method: str, seed: int, pattern=LM_PATTERN, rank: int = LM_RANK, *, tm_lr: float | None = None,
                   sequences: int = CAL_SEQUENCES, **setting):
    """A copy of the pretrained tiny LM with every linear map compressed by ``method``, block by
    block: each block's calibration inputs are the outputs of the already compressed blocks
    before it; with ``tm_lr`` each block is then refined by transformer matching (TM) against the
    dense block's output on the same inputs. Returns (model, per-layer relative errors)."""
    damp = setting.pop("damp", 0.005)
    model = copy.deepcopy(tinylm.pretrained())
    ids = calibration(seed, sequences)
    errors = {}
    with torch.no_grad():
        hidden = model.embed(ids) + model.position(torch.arange(ids.shape[1]))
    with one_torch_thread():
        for b, block in enumerate(model.blocks):
            inputs = {}
            hooks = [_get(block, n).register_forward_hook(
                lambda mod, inp, out, n=n: inputs.__setitem__(n, inp[0].reshape(-1, inp[0].shape[-1])))
                for n in LAYER_NAMES]
            with torch.no_grad():
                target = block(hidden)
            for h in hooks:
                h.remove()
            masks = {}
            for n in LAYER_NAMES:
                W = _get(block, n).weight.detach().double().numpy()
                X = inputs[n].double().numpy()
                H = damped_hessian(X, damp, damp)
                dec = _decompose(method, W, H, pattern, rank, setting)
                errors[f"blocks.{b}.{n}"] = dec.error(W, X.T @ X / len(X))
                layer = SparseLowRankLinear(dec.S, dec.B, dec.A)
                _set(block, n, layer)
                masks[layer] = (layer.weight != 0).to(layer.weight.dtype)
            if tm_lr is not None:
                transformer_matching(block, hidden, target, masks, lr=tm_lr, epochs=TM_EPOCHS, chunk=TM_CHUNK,
                                     seed=seed)
            with torch.no_grad():
                hidden = block(hidden)
    return model.eval(), errors


def dense_perplexity() -> float:
    return tinylm.perplexity(tinylm.pretrained(), _texts()[1])


def lm_perplexity(method: str, seed: int, pattern=LM_PATTERN, rank: int = LM_RANK, **setting) -> float:
    """Held-out perplexity of the model compressed by ``method`` (cached on disk: the notebook and
    the claims reuse each compression)."""
    key = cache_key(method=method, seed=seed, pattern=pattern, rank=rank, setting=setting, cal=CAL_SEQUENCES,
                    tm=(TM_EPOCHS, TM_CHUNK), v=2, base=tinylm.BASE_STEPS, torch=torch.__version__)

    def build():
        model, _ = compress_model(method, seed, pattern, rank, **setting)
        return {"ppl": tinylm.perplexity(model, _texts()[1])}
    return float(cached_torch("ch33-ppl", key, build)["ppl"])


def lm_tuning(methods=tuple(GRIDS), seeds=LM_TUNING_SEEDS) -> dict[str, Tuning]:
    """Every method over its 3-setting grid (GRIDS), scored by the median held-out perplexity over
    the held-out calibration draws ``seeds``."""
    out = {}
    for m in methods:
        out[m] = grid_search(m, lambda seed, m=m, **kw: lm_perplexity(m, seed, **kw), GRIDS[m], seeds)
    return out


# --------------------------------------------------------------------------- claims

GLUE_FORMATS = {
    "gap_cut": {"gap_cut": "{:.0%}", "gap_method": "{:.3f}", "gap_best_baseline": "{:.3f}",
                "dense_ppl": "{:.3f}", "gap_wanda": "{:.3f}"},
    "layer_ratio": {"ratio_alt": "{:.2f}", "ratio_oats": "{:.2f}", "ratio_alt_max": "{:.2f}"},
}


@claim("33", "3BASiL-TM cuts the perplexity gap to the dense model at 2:4 + low rank", kind="reproduction",
       paper="3BASiL-TM reduces the WikiText2 perplexity gap to dense Llama-3-8B by over 30% at 2:4 sparsity "
             "+ rank 64, compared to prior S+LR methods (abstract)",
       expect="on the tiny character LM (2:4 + rank 2 in all 12 linear maps), the median over 3 calibration draws "
              "of the held-out perplexity gap of 3BASiL-TM is at least 30% smaller than that of the best tuned "
              "S+LR baseline (EoRA, OATS, HASSLE-free; each tuned over 3 settings on 2 held-out draws): "
              "gap_cut >= 0.30 (the paper's number)",
       control="the method replaced by its nearest baseline, the alternating HASSLE-free-style decomposition "
               "without TM, in place of 3BASiL-TM",
       name="gap_cut")
def claim_gap_cut(fast: bool = False, control: bool = False) -> Measured:
    seeds = LM_FAST_SEEDS if fast else LM_SEEDS
    dense = dense_perplexity()
    if fast:       # no tuning: the strongest baseline at the card's setting, TM at the middle of its grid
        tunings, base, tm = {}, {"HASSLE-free": {"rounds": 20}}, {"tm_lr": 3e-3}
    else:
        tunings = lm_tuning()
        base = {m: t.best for m, t in tunings.items() if m != "3BASiL-TM"}
        tm = tunings["3BASiL-TM"].best
    gaps = {m: [lm_perplexity(m, s, **st) - dense for s in seeds] for m, st in base.items()}
    best = min(gaps, key=lambda m: np.median(gaps[m]))
    meth, st = ("HASSLE-free", base["HASSLE-free"]) if control else ("3BASiL-TM", tm)
    mine = [lm_perplexity(meth, s, **st) - dense for s in seeds]
    wanda_gap = [lm_perplexity("Wanda", s) - dense for s in seeds]
    no_tm = [] if fast or control else [lm_perplexity("3BASiL", s) - dense for s in seeds]
    # the best baseline refined by the same TM at 3BASiL-TM's tuned rate (a diagnostic added by the
    # referee after the full run; the criterion, as the paper's, compares with baselines without TM)
    best_tm = [] if fast or control else [lm_perplexity(best, s, **base[best], **tm) - dense for s in seeds]
    g_m, g_b = float(np.median(mine)), float(np.median(gaps[best]))
    cut = 1.0 - g_m / g_b
    return Measured({"gap_cut": cut, "gap_method": g_m, "gap_best_baseline": g_b, "dense_ppl": dense,
                     "gap_wanda": float(np.median(wanda_gap))},
                    criteria=[Criterion("gap_cut", ">=", 0.30)], seeds=seeds,
                    precondition=bool(g_b > 0.01),
                    summary=f"gap {g_m:.3f} vs best baseline ({best}) {g_b:.3f}: cut {cut:.0%}",
                    details={"gaps": gaps, "method_gaps": mine, "best": best, "tunings": tunings, "no_tm": no_tm, "best_tm": best_tm,
                             "settings": {**base, meth: st}})


@claim("33", "3BASiL's layer-wise error is far below the alternating methods'", kind="reproduction",
       paper="the 3-block ADMM reaches a lower layer-wise reconstruction error than alternating S+LR methods "
             "(OATS, HASSLE-free) (paper's layer-wise comparisons; no single number)",
       expect="on 5 synthetic layers (64 x 128, outlier-scaled correlated inputs, 2:4 and 50% unstructured, rank 8), "
              "the median ratio of 3BASiL's relative error to the best tuned alternating baseline's is <= 0.6 and to "
              "OATS's <= 0.3 (the card's prototype bounds, fixed before this run)",
       control="the alternating (non-joint) HASSLE-free-style decomposition in place of the ADMM",
       reproduces=False,
       diagnosis="the first full run missed both registered bounds narrowly (median ratios 0.63 and 0.33), with "
                 "both baselines' tuned budgets on the top edge of their grids; widening the grids (OATS to 1000 "
                 "iterations, HASSLE-free to 400 rounds) only strengthened the baselines. Four checks: (1) the proxy "
                 "shows the phenomenon: the ADMM's error is below the best alternating method's on every layer "
                 "and pattern (worst ratio about 0.75), and the alternation stalls (rounds 160 -> 400 gain ~4%); "
                 "(2) the ADMM runs the authors' exact schedule (rho0 = 0.1, growth 1.1/1.05/1.02, restart, "
                 "stopping rule, damping 0.005) and the baselines get more iterations than the authors' default "
                 "of 80 and than the ADMM uses; (3) reductions pass: at rank 0 with every weight kept the ADMM "
                 "is exact, and it never ends above its EoRA start (tests); (4) the control (the alternation in "
                 "place of the ADMM) gives ratio 1.0 and fails. The bounds 0.6 and 0.3 were a single untuned "
                 "prototype draw (20 rounds, 80 iterations): against tuned baselines the joint method's advantage "
                 "is about 1.5x and 3x, not 1.7x and 3.3x",
       name="layer_ratio")
def claim_layer_ratio(fast: bool = False, control: bool = False) -> Measured:
    seeds = FAST_SEEDS if fast else CLAIM_SEEDS
    rows = []
    for pattern in (("2:4",) if fast else ("2:4", 0.5)):
        if fast:   # the 2:4 layers at the full run's tuned settings one grid step down (cheaper)
            best_rounds, best_iters = 160, 400
        else:
            tune = {t.method: t.best for t in layer_tuning(pattern)}
            best_rounds, best_iters = tune["HASSLE-free"]["rounds"], tune["OATS"]["iters"]
        for s in seeds:
            e = layer_errors(s, pattern, hassle_rounds=best_rounds, oats_iters=best_iters)
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


@lru_cache(maxsize=4)
def layer_calibration(name: str = HEATMAP_LAYER, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """(W, X) of one linear map of the dense tiny LM and its inputs on calibration draw ``seed``."""
    model = tinylm.pretrained()
    layers = model.linear_layers()
    if name not in layers:
        raise ValueError(f"name must be one of {sorted(layers)}, got {name!r}")
    rec = {}
    hook = layers[name].register_forward_hook(lambda m, i, o: rec.__setitem__("x", i[0]))
    with torch.no_grad(), one_torch_thread():
        model(calibration(seed))
    hook.remove()
    return layers[name].weight.detach().double().numpy(), rec["x"].reshape(-1, rec["x"].shape[-1]).double().numpy()


@lru_cache(maxsize=1)
def heatmap_parts() -> dict[str, dict]:
    """S, L and the output error of each method on :data:`HEATMAP_LAYER` (2:4 + rank LM_RANK)."""
    W, X = layer_calibration()
    H, H0 = damped_hessian(X), X.T @ X / len(X)
    out = {}
    for m in FIG_METHODS:
        dec = _decompose(m, W, H, LM_PATTERN, LM_RANK, {})
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
BUDGET_KEPT = (0.3, 0.5, 0.7)


def budget_table() -> dict:
    """Relative error of every method on a small layer (32 x 64, 512 samples) over BUDGET_RANKS x
    BUDGET_KEPT (unstructured sparsity): the explorer's precomputed grid (cached on disk)."""
    key = cache_key(ranks=BUDGET_RANKS, kept=BUDGET_KEPT, methods=FIG_METHODS, v=2)
    return _budget_memo(key)


@lru_cache(maxsize=1)
def _budget_memo(key: str) -> dict:
    def build():
        W, H, H0 = layer_problem(7, 1.0, 32, 64, 512)
        return {f"{r}|{k}|{m}": _decompose(m, W, H, k, r, {}).error(W, H0)
                for r in BUDGET_RANKS for k in BUDGET_KEPT for m in FIG_METHODS}
    return cached_torch("ch33-budget", key, build)


def budget_ratio(rank: int, kept: float) -> float:
    """3BASiL's error over the best alternating method's (HASSLE-free, OATS) at one grid point."""
    t = budget_table()
    if f"{rank}|{kept}|3BASiL" not in t:
        raise ValueError(f"rank and kept must be on the grid {BUDGET_RANKS} x {BUDGET_KEPT}, got {rank}, {kept}")
    return t[f"{rank}|{kept}|3BASiL"] / min(t[f"{rank}|{kept}|HASSLE-free"], t[f"{rank}|{kept}|OATS"])


def _budget_traces(rank: int) -> list:
    t = budget_table()
    return [go.Scatter(x=list(BUDGET_KEPT), y=[t[f"{rank}|{k}|{m}"] for k in BUDGET_KEPT], name=m, mode="lines+markers",
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
    """Perplexity gap to the dense model of each tuned method, one dot per calibration draw."""
    rows = dict(details["gaps"])
    rows["3BASiL-TM"] = details["method_gaps"]
    if "no_tm" in details:
        rows["3BASiL (no TM)"] = details["no_tm"]
    order = sorted(rows, key=lambda m: -np.median(rows[m]))
    colors = {"3BASiL-TM": 0, "HASSLE-free": 1, "OATS": 2, "EoRA": 3, "3BASiL (no TM)": 5}
    fig = go.Figure()
    for m in order:
        fig.add_trace(go.Box(y=rows[m], name=m, boxpoints="all", marker=dict(color=color_for(colors.get(m, 4))),
                             showlegend=False))
    return base_layout(fig, title="Held-out perplexity gap to the dense tiny LM (2:4 + rank 2), per calibration draw",
                       yaxis_title="perplexity minus dense perplexity", height=420)


def compression_times(seed: int = 0, pattern="2:4") -> list[dict]:
    """Wall time (one run, one thread) and iterations of each method on one synthetic layer, the
    alternating methods one step below the top of their tuned grids (160 rounds, 400 iterations;
    the top values gain a few per cent more for 2.5 times the work)."""
    import time

    W, H, H0 = layer_problem(check_int(seed, "seed"))
    runs = {"3BASiL": lambda: threebasil(W, H, pattern, LAYER_RANK),
            "HASSLE-free (160 rounds)": lambda: hassle_free(W, H, pattern, LAYER_RANK, rounds=160),
            "OATS (400 iterations)": lambda: oats(W, H, pattern, LAYER_RANK, iters=400),
            "EoRA": lambda: METHODS["EoRA"](W, H, pattern, LAYER_RANK)}
    rows = []
    for name, run in runs.items():
        t = time.perf_counter()
        dec = run()
        rows.append({"method": name, "iterations": dec.nit, "seconds": round(time.perf_counter() - t, 3),
                     "relative error": f"{dec.error(W, H0):.2e}"})
    return rows
