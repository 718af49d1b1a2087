"""Chapter 22: the book's experiments, figures, live explorers and claims for SADL. The sketches and
the SADL loop are in :mod:`optbook.distributed.sketched_adaptive`, the federated engine in
:mod:`optbook.distributed.federated`.
"""
from __future__ import annotations

from functools import lru_cache

import numpy as np
import plotly.graph_objects as go
import torch
from plotly.subplots import make_subplots

from ..claims import Criterion, Measured, claim
from ..core import Tuning, check_choice, check_in_range, check_int, check_positive, grid_search
from ..core.threads import one_torch_thread
from ..viz import SliderStep, base_layout, frame_note, slider_figure
from ..viz.style import line_style
from ..widgets import Explorer, Slider
from .federated import FedResult
from .sketched_adaptive import (AMSGradState, NoisyQuadratic, Sketch, ada_opt, flat_spectrum, intrinsic_dimension,
                                power_law_spectrum, run_sadl, run_sadl_distributed)

# --------------------------------------------------------------------------- the setting

#: The quadratic of the claims (fixed before the full run): d = 1024 coordinates (a power of 2, so
#: the SRHT needs no padding), 5 clients, each with 20 noisy samples (gradient noise sd 0.01).
D = 1024
PROBLEM = dict(num_clients=5, samples=20, noise=0.01)
#: The protocol: T rounds, every client each round, K local SGD steps of step eta, batch 1; the
#: server's AMSGrad with the paper card's beta and eps; the SRHT sketch of the paper's experiments.
RUN = dict(rounds=200, local_steps=5, client_lr=0.5, batch_size=1, betas=(0.9, 0.99), eps=1e-2, sketch="srht")
FAST_ROUNDS = 100
#: The two sketch sizes of the headline: 10% and 2% of d.
B_LARGE, B_SMALL = 102, 20
#: The power-law exponent of the "deep-network-like" spectrum (intrinsic dimension about 2.5).
POWER = 1.5
#: Every method gets the same budget: a 4-point grid of its server step kappa, on its own scale
#: (AMSGrad steps are about kappa per coordinate; sketched SGD and FedAvg move by kappa times the
#: mean change, so their kappa is on the scale of 1; sketched SGD's grid was first (0.03 .. 1) and
#: its best sat on the upper edge, so it was shifted up one step).
GRIDS = {"amsgrad": (0.01, 0.03, 0.1, 0.3), "sadl": (0.01, 0.03, 0.1, 0.3), "topk-ef": (0.01, 0.03, 0.1, 0.3),
         "sketched-sgd": (0.1, 0.3, 1.0, 3.0), "fedavg": (0.5, 1.0, 2.0, 4.0)}
FAST_GRID_SLICE = slice(1, 3)
TUNING_SEEDS = (100,)
CLAIM_SEEDS = (0, 1, 2, 3, 4)
SPECTRA = ("power-law", "flat")
LABELS = {"amsgrad": "AMSGrad, uncompressed", "sadl": "SADL", "sadl-same": "SADL, one sketch for both moments",
          "sketched-sgd": "sketched SGD", "fedavg": "FedAvg", "topk-ef": "top-k + error feedback"}


def spectrum(kind: str, seed: int = 0, p: float = POWER) -> np.ndarray:
    """The Hessian eigenvalues: ``i^-p`` ("power-law") or ``U(0.5, 1)`` ("flat", drawn per seed)."""
    kind = check_choice(kind, "kind", SPECTRA)
    return power_law_spectrum(D, p) if kind == "power-law" else flat_spectrum(D, check_int(seed, "seed"))


@lru_cache(maxsize=64)
def problem(kind: str, seed: int, p: float = POWER) -> NoisyQuadratic:
    """The noisy federated quadratic for one spectrum and seed (the seed draws the noise)."""
    return NoisyQuadratic(spectrum(kind, seed, p), seed=seed, **PROBLEM)


def x0(seed: int) -> torch.Tensor:
    """The start x_0 ~ N(0, I) of a seed (the same for every method and spectrum)."""
    return torch.from_numpy(np.random.default_rng([check_int(seed, "seed"), 22]).standard_normal(D))


def run(method: str, kind: str, b: int, lr: float, seed: int, rounds: int = RUN["rounds"], p: float = POWER,
        eps: float = RUN["eps"], sketch: str = RUN["sketch"]) -> FedResult:
    """One run on :func:`problem` (cached, iterates dropped but the first and last). Every call
    form of the same run shares one cache entry, so the figures, the claim and the exercises never
    repeat a run."""
    return _run(method, kind, b, lr, seed, rounds, p, eps, sketch)


@lru_cache(maxsize=512)
def _run(method: str, kind: str, b: int, lr: float, seed: int, rounds: int, p: float, eps: float,
         sketch: str) -> FedResult:
    kw = {k: v for k, v in RUN.items() if k not in ("rounds", "eps", "sketch")}
    with one_torch_thread():
        res = run_sadl(problem(kind, seed, p), method, b=b, lr=lr, seed=seed, rounds=rounds, eps=eps,
                       sketch=sketch, x0=x0(seed), name=LABELS[method], **kw)
    res.iterates = res.iterates[[0, -1]]
    return res


def loss_ratio(method: str, kind: str, b: int, lr: float, seed: int, fast: bool = False, **kw) -> float:
    """Final loss over initial loss, L_T / L_0; NaN if the run diverged (overflowed, or ended above
    ``DIVERGED`` times its initial loss)."""
    res = run(method, kind, b, lr, seed, rounds=FAST_ROUNDS if fast else RUN["rounds"], **kw)
    r = res.final_loss / float(res.trace.objective[0])
    ok = np.isfinite(r) and r <= DIVERGED and len(res.trace) == res.trace.meta["rounds"] + 1
    return r if ok else float("nan")


#: A run that ends above this multiple of its initial loss has diverged (its score is NaN, ranked last).
DIVERGED = 1e3


def _grid(method: str, fast: bool) -> dict:
    g = GRIDS["sadl" if method == "sadl-same" else method]
    return {"lr": g[FAST_GRID_SLICE] if fast else g}


@lru_cache(maxsize=64)
def tuning(method: str, kind: str, b: int, fast: bool = False) -> Tuning:
    """``method`` at sketch size b on a spectrum, tuned on its grid of kappa by L_T / L_0 on the
    held-out seeds (fast: the grid's middle two values)."""
    method = check_choice(method, "method", tuple(LABELS))
    short = {"amsgrad": "AMSGrad", "sadl": "SADL", "sadl-same": "SADL one sketch", "sketched-sgd": "sketched SGD",
             "fedavg": "FedAvg", "topk-ef": "top-k EF"}[method]
    name = short + ("" if method in ("amsgrad", "fedavg") else f" b={b}") + f" · {kind}"
    return grid_search(name, lambda seed, lr: loss_ratio(method, kind, b, lr, seed, fast), _grid(method, fast),
                       TUNING_SEEDS)


def tuned_ratios(method: str, kind: str, b: int, fast: bool = False, seeds=None) -> np.ndarray:
    """L_T / L_0 of the tuned method over the claim seeds."""
    seeds = (CLAIM_SEEDS[:2] if fast else CLAIM_SEEDS) if seeds is None else seeds
    lr = tuning(method, kind, b, fast).best["lr"]
    return np.array([loss_ratio(method, kind, b, lr, s, fast) for s in seeds])


def headline_tunings(fast: bool = False) -> list[Tuning]:
    """The six tunings behind the headline (uncompressed and SADL at both sizes, both spectra)."""
    return [tuning(m, k, b, fast) for k in SPECTRA for m, b in (("amsgrad", D), ("sadl", B_LARGE), ("sadl", B_SMALL))]


# --------------------------------------------------------------------------- claims


@claim("22", "Tiny sketches suffice when the Hessian spectrum decays, and only then",
       kind="reproduction",
       paper="SADL's high-probability rate depends on the loss Hessian's intrinsic dimension "
             "I = sum|lambda| / max|lambda| and only logarithmically on d (Theorem 2.2 and corollaries), so "
             "sketches of 0.1%-2% of d stay competitive with uncompressed adaptive training on deep "
             "networks, whose spectra decay fast (ResNet, ViT, BERT; no quadratic figure in the paper)",
       expect="on a noisy federated quadratic (d = 1024, 5 clients, 5 local SGD steps, 200 rounds, SRHT, "
              "AMSGrad eps = 1e-2), each method tuned on the same 4-point grid of kappa on a held-out seed: "
              "median over 5 seeds of the degradation L_T(SADL)/L_T(uncompressed) at b = 20 (2% of d) is <= 5 "
              "for lambda_i = i^-1.5 (I about 2.5) and >= 20 for lambda_i ~ U(0.5, 1) (I about 770), and the "
              "flat/power-law gap is larger at b = 20 than at b = 102 (10%). Thresholds from the paper card's "
              "rule, fixed before the full run: 5x is 'competitive' (within half a decade), 20x an "
              "order-of-magnitude separation. Premise: uncompressed AMSGrad cuts the loss >= 10x on both spectra. "
              "Disclosed: before registering (commit 8b905cb) we had seen the power-law degradation on the "
              "held-out tuning seed (about 4.3) and in fast mode (about 4.5, 2 seeds, 100 rounds); the thresholds "
              "are the paper card's, written before any of our runs. Referee's correction of the rule's wording: "
              "5x is 0.7 of a decade, not 'half a decade' (that would be 3.2x, which the median fails); the number "
              "registered, 5, is kept. Referee's checks after the full run (robustness_checks(), not part of the "
              "criterion): on ten further seeds (5-14) the power-law median is 5.03, 5 of 10 seeds above 5, so the "
              "power-law half of the verdict sits on its threshold and is a coin flip at this size, while the flat "
              "half (median 1.4e5, every seed above 6e4) and the gap growth (about 170-fold) hold there too; "
              "tuning on three held-out seeds (100-102) "
              "picks the same kappa as the one-seed tuning for all nine tunings of the chapter, none on a grid "
              "edge; the control's flat ratio is mostly its denominator (SADL's own L_T/L_0 is 0.28 flat against "
              "0.16 power-law, uncompressed AMSGrad's 1.7e-6 against 0.035), but with the flat spectrum's gradient "
              "noise raised 500-fold (sd 5) so that uncompressed AMSGrad ends at 0.023, near the power-law's 0.035, "
              "the degradation is still 31 (27-34 over seeds 0-4): the control fails for the missing decay",
       control="the flat spectrum in the power-law's place (same sketch size, same tuning): its degradation "
               "must exceed the 5x that the power-law spectrum meets",
       name="spectrum_decides")
def claim_spectrum_decides(fast: bool = False, control: bool = False) -> Measured:
    seeds = CLAIM_SEEDS[:2] if fast else CLAIM_SEEDS
    decaying = "flat" if control else "power-law"
    full = {k: tuned_ratios("amsgrad", k, D, fast) for k in SPECTRA}
    deg = {(k, b): tuned_ratios("sadl", k, b, fast) / full[k] for k in SPECTRA for b in (B_LARGE, B_SMALL)}
    med = {key: float(np.median(v)) for key, v in deg.items()}
    gap_small = med[("flat", B_SMALL)] / med[(decaying, B_SMALL)]
    gap_large = med[("flat", B_LARGE)] / med[(decaying, B_LARGE)]
    p_small = deg[(decaying, B_SMALL)]
    values = {"ratio_decaying": med[(decaying, B_SMALL)], "ratio_decaying_min": float(p_small.min()),
              "ratio_decaying_max": float(p_small.max()), "ratio_flat": med[("flat", B_SMALL)],
              "ratio_flat_min": float(deg[("flat", B_SMALL)].min()),
              "ratio_decaying_large": med[(decaying, B_LARGE)], "ratio_flat_large": med[("flat", B_LARGE)],
              "gap_growth": gap_small / gap_large,
              "full_power": float(np.median(full["power-law"])), "full_flat": float(np.median(full["flat"])),
              "sadl_power": float(np.median(tuned_ratios("sadl", "power-law", B_SMALL, fast))),
              "intrinsic_power": intrinsic_dimension(spectrum("power-law")),
              "intrinsic_flat": intrinsic_dimension(spectrum("flat", seeds[0]))}
    premise = max(values["full_power"], values["full_flat"]) <= 0.1
    return Measured(values, criteria=[Criterion("ratio_decaying", "<=", 5.0), Criterion("ratio_flat", ">=", 20.0),
                                      Criterion("gap_growth", ">", 1.0)],
                    seeds=seeds, precondition=bool(premise), details={"tunings": headline_tunings(fast)},
                    summary=f"degradation at b = {B_SMALL}: {'flat in the power-law slot' if control else 'power-law'} "
                            f"{values['ratio_decaying']:.3g} ({p_small.min():.3g}-{p_small.max():.3g}), flat "
                            f"{values['ratio_flat']:.3g}; "
                            f"gap grows {values['gap_growth']:.1f}x from b = {B_LARGE} to {B_SMALL}")


@claim("22", "SADL sends b floats each way and is AMSGrad exactly when R = I", kind="identity",
       expect="with the identity sketch and one vector for both moments, SADL's iterates equal uncompressed "
              "AMSGrad's bit for bit (30 rounds, d = 1024); with an SRHT sketch of b = 20 the ledger counts "
              "exactly 20 floats up per client and 20 down per client each round, b/d of AMSGrad's traffic; "
              "full mode also runs 3 rounds over torch.distributed (gloo, a server and 5 client processes that "
              "only ever receive the b-float broadcast): every client's model equals the server's bit for bit, "
              "and the server's equals the in-process run's to 1e-12",
       name="accounting")
def claim_accounting(fast: bool = False) -> Measured:
    p, rounds = problem("power-law", 7), 30
    kw = {k: v for k, v in RUN.items() if k != "rounds"}
    with one_torch_thread():
        full = run_sadl(p, "amsgrad", b=D, lr=0.03, seed=7, rounds=rounds, x0=x0(7), **kw)
        same = run_sadl(p, "sadl-same", b=D, lr=0.03, seed=7, rounds=rounds, x0=x0(7),
                        **{**kw, "sketch": "identity"})
        small = run_sadl(p, "sadl", b=B_SMALL, lr=0.03, seed=7, rounds=rounds, x0=x0(7), replica=True, **kw)
    C = p.num_clients
    equal = bool(torch.equal(full.iterates, same.iterates))
    counts = small.ledger.floats_up == [C * B_SMALL] * rounds and small.ledger.floats_down == [C * B_SMALL] * rounds
    ratio = small.ledger.totals()["floats"] / full.ledger.totals()["floats"]
    gap = float(np.nanmax(small.trace["sync_gap"]))
    wire_ok, wire_gap = True, 0.0
    if not fast:
        wire = gloo_run()
        local = small.iterates[: GLOO_ROUNDS + 1]
        wire_gap = float((wire["server"] - local).abs().max())
        wire_ok = (all(torch.equal(c, wire["server"]) for c in wire["clients"]) and wire_gap <= 1e-12
                   and wire["ledger"].floats_up == [C * B_SMALL] * GLOO_ROUNDS
                   and wire["ledger"].floats_down == [C * B_SMALL] * GLOO_ROUNDS)
    values = {"identical": float(equal), "traffic_ratio": ratio, "b_over_d": B_SMALL / D, "sync_gap": gap,
              "on_gloo": float(not fast), "gloo_gap": wire_gap}
    return Measured(values, holds=bool(equal and counts and ratio == B_SMALL / D and gap == 0.0 and wire_ok),
                    summary=f"R = I reproduces AMSGrad: {equal}; traffic {ratio:.4f} of AMSGrad's (b/d = "
                            f"{B_SMALL / D:.4f}); client replica off by {gap:g}"
                            + ("" if fast else f"; over gloo: clients = server, server within {wire_gap:.0e} of "
                                               "in-process"))


GLOO_ROUNDS = 3


@lru_cache(maxsize=1)
def gloo_run() -> dict:
    """SADL (b = 20, SRHT) for 3 rounds over torch.distributed: a server and 5 client processes,
    on the accounting identity's problem and seed."""
    kw = {k: v for k, v in RUN.items() if k != "rounds"}
    return run_sadl_distributed(problem("power-law", 7), "sadl", b=B_SMALL, lr=0.03, seed=7, rounds=GLOO_ROUNDS,
                                x0=x0(7), **kw)


def robustness_checks(extra_seeds=tuple(range(5, 15)), noise: float = 5.0) -> dict:
    """The referee's checks of the headline after its full run (about 170 runs; not in the notebook):
    the power-law and flat degradations at b = 20 on further seeds with the registered tuning; the
    chapter's nine tunings redone on three held-out seeds; and the control with its denominator matched,
    the flat spectrum with gradient noise ``noise`` (tuned again), whose uncompressed AMSGrad ends near
    the power-law's."""
    extra_seeds = tuple(check_int(s, "extra_seeds") for s in extra_seeds)
    if not extra_seeds:
        raise ValueError("extra_seeds must not be empty")
    noise = check_positive(noise, "noise")
    out = {}
    full = {k: tuned_ratios("amsgrad", k, D, seeds=extra_seeds) for k in SPECTRA}
    for k in SPECTRA:
        out[f"extra_seeds_{k}"] = tuned_ratios("sadl", k, B_SMALL, seeds=extra_seeds) / full[k]
    same = []
    configs = [(m, k, b) for k in SPECTRA for m, b in (("amsgrad", D), ("sadl", B_LARGE), ("sadl", B_SMALL))]
    configs += [(m, "power-law", D if m == "fedavg" else B_SMALL) for m in ("sketched-sgd", "topk-ef", "fedavg")]
    for m, k, b in configs:
        t3 = grid_search("3 seeds", lambda seed, lr: loss_ratio(m, k, b, lr, seed), _grid(m, False),
                         TUNING_SEEDS + (101, 102))
        same.append(t3.best == tuning(m, k, b).best and not t3.on_edge())
    out["three_seed_tuning_agrees"] = all(same)
    kw = {k: v for k, v in RUN.items() if k != "rounds"}

    def noisy(method, b, lr, seed):
        q = NoisyQuadratic(spectrum("flat", seed), seed=seed, **{**PROBLEM, "noise": noise})
        with one_torch_thread():
            r = run_sadl(q, method, b=b, lr=lr, seed=seed, x0=x0(seed), rounds=RUN["rounds"], **kw)
        v = r.final_loss / float(r.trace.objective[0])
        return v if np.isfinite(v) and v <= DIVERGED else float("nan")

    matched = {}
    for m, b in (("amsgrad", D), ("sadl", B_SMALL)):
        lr = grid_search(m, lambda seed, lr: noisy(m, b, lr, seed), _grid(m, False), TUNING_SEEDS).best["lr"]
        matched[m] = np.array([noisy(m, b, lr, s) for s in CLAIM_SEEDS])
    out["matched_full"], out["matched_degradation"] = matched["amsgrad"], matched["sadl"] / matched["amsgrad"]
    return out


# --------------------------------------------------------------------------- figures


def curve_traces(runs: dict[str, FedResult], x: str = "round", showlegend: bool = True) -> list:
    """One line per run: L_t / L_0 against the round (or the floats sent so far)."""
    out = []
    for i, (name, res) in enumerate(runs.items()):
        tr = res.trace
        xs = tr.iteration if x == "round" else tr["floats"]
        out.append(go.Scatter(x=xs, y=tr.objective / tr.objective[0], name=name, mode="lines",
                              showlegend=showlegend, **line_style(i)))
    return out


NOISE_D = 32


def _noise_frame(n: int) -> tuple[list, dict]:
    """Traces and note of 'unbiased but noisy' after averaging n fresh sketches."""
    v = _noise_vector(NOISE_D).numpy()
    est = _running_means(NOISE_D, max(NOISE_DRAWS))
    tr = [go.Scatter(x=np.arange(NOISE_D), y=v, name="v (the true change)", mode="markers",
                     marker=dict(size=9, color="black", symbol="x"))]
    err = []
    for i, kind in enumerate(("gaussian", "srht", "countsketch")):
        m = est[kind][n - 1]
        err.append(f"{kind} {np.linalg.norm(m - v) / np.linalg.norm(v):.2f}")
        tr.append(go.Scatter(x=np.arange(NOISE_D), y=m, name=f"mean of RᵀRv, {kind}", mode="lines+markers",
                             **line_style(i + 1, width=1.6)))
    return tr, frame_note(f"N = {n}; relative error: " + ", ".join(err))


NOISE_TITLE = f"A sketch of b = {NOISE_D // 4} rows is unbiased but noisy: averaging fresh sketches recovers v"


def sketch_noise_figure() -> go.Figure:
    """Static twin of 'unbiased but noisy': the running mean of R^T R v over N fresh sketches
    (d = 32, b = 8) against the true v, for the three sketches; one frame per N."""
    steps = [SliderStep(str(n), *_noise_frame(n)) for n in NOISE_DRAWS]
    return slider_figure(steps, slider_label="sketches averaged N", active=0, xaxis_title="coordinate i",
                         yaxis_title="value", title=NOISE_TITLE)


def _noise_vector(d: int) -> torch.Tensor:
    v = torch.zeros(d, dtype=torch.float64)
    v[[2, 9, 20]] = torch.tensor([3.0, -2.0, 1.5], dtype=torch.float64)
    return v


@lru_cache(maxsize=4)
def _running_means(d: int, n: int) -> dict[str, np.ndarray]:
    v = _noise_vector(d)
    out = {}
    for kind in ("gaussian", "srht", "countsketch"):
        rows = []
        for i in range(n):
            sk = Sketch(kind, d, d // 4, (5, i))
            rows.append(sk.desketch(sk.sketch(v)).numpy())
        out[kind] = np.cumsum(np.stack(rows), 0) / np.arange(1, n + 1)[:, None]
    return out


def sketch_noise_live(draws: int = 1) -> go.Figure:
    """Live twin of 'unbiased but noisy'."""
    n = check_int(draws, "draws", minimum=1)
    if n not in NOISE_DRAWS:
        raise ValueError(f"draws must be one of {NOISE_DRAWS}, got {n}")
    tr, note = _noise_frame(n)
    return base_layout(go.Figure(tr, layout=note), xaxis_title="coordinate i", yaxis_title="value",
                       title=NOISE_TITLE)


NOISE_DRAWS = (1, 4, 16, 64, 256)

#: The spectrum explorer: exponents p of lambda_i = i^-p (0: the identity, I = d), one fixed step
#: kappa for every curve (untuned, for speed; the claim tunes), and the card's three traffic levels.
EXPONENTS = (0.0, 0.5, 1.0, 1.5, 2.0)
EXPLORE = dict(lr=0.03, rounds=100)


def spectrum_runs(p: float) -> dict[str, FedResult]:
    """Uncompressed AMSGrad and SADL at b = 102 and 20 on lambda_i = i^-p (seed 0, 100 rounds); the
    whole grid of exponents is computed at the first call, so every later slider move is a lookup."""
    p = check_in_range(p, "p", 0.0, 10.0, closed=(True, True))
    if p not in EXPONENTS:
        raise ValueError(f"p must be one of {EXPONENTS}, got {p}")
    return _spectrum_sweep()[p]


@lru_cache(maxsize=1)
def _spectrum_sweep() -> dict[float, dict[str, FedResult]]:
    return {p: _spectrum_runs(p) for p in EXPONENTS}


def _spectrum_runs(p: float) -> dict[str, FedResult]:
    return {LABELS["amsgrad"]: run("amsgrad", "power-law", D, EXPLORE["lr"], 0, EXPLORE["rounds"], p),
            f"SADL, b = {B_LARGE} (10%)": run("sadl", "power-law", B_LARGE, EXPLORE["lr"], 0, EXPLORE["rounds"], p),
            f"SADL, b = {B_SMALL} (2%)": run("sadl", "power-law", B_SMALL, EXPLORE["lr"], 0, EXPLORE["rounds"], p)}


def _spectrum_note(p: float, runs: dict[str, FedResult]) -> str:
    f = [r.final_loss for r in runs.values()]
    return (f"p = {p:g}: intrinsic dimension I = {intrinsic_dimension(power_law_spectrum(D, p)):.1f} of d = {D}<br>"
            f"degradation at b = {B_LARGE}: {f[1] / f[0]:.1f}x, at b = {B_SMALL}: {f[2] / f[0]:.1f}x")


def spectrum_slider_figure() -> go.Figure:
    """Static twin of the spectrum explorer: loss curves for each exponent p."""
    steps = [SliderStep(f"{p:g}", curve_traces(spectrum_runs(p)), frame_note(_spectrum_note(p, spectrum_runs(p))))
             for p in EXPONENTS]
    return slider_figure(steps, slider_label="spectral decay p (λᵢ = i⁻ᵖ)", active=3, logy=True,
                         xaxis_title="round t", yaxis_title="loss L_t / L_0",
                         title="The faster the spectrum decays, the less a small sketch costs")


def spectrum_live(p: float = 1.5) -> go.Figure:
    """Live twin of the spectrum explorer."""
    runs = spectrum_runs(p)
    fig = go.Figure(curve_traces(runs), layout=frame_note(_spectrum_note(p, runs)))
    return base_layout(fig, logy=True, xaxis_title="round t", yaxis_title="loss L_t / L_0", title=f"p = {p:g}")


#: The eps pitfall: eps of AMSGrad's denominator, split sketches (the paper's) against one sketch for
#: both moments, on the power-law spectrum at b = 102 (fixed kappa as in the spectrum explorer).
EPSILONS = (1e-8, 1e-6, 1e-4, 1e-2)


def eps_runs(eps: float) -> dict[str, FedResult]:
    """SADL with split and with shared sketches, and uncompressed AMSGrad, at one eps (power-law,
    b = 102, seed 0, 100 rounds); the whole eps grid is computed at the first call."""
    eps = check_in_range(eps, "eps", 0.0, 1.0, closed=(False, True))
    if eps not in EPSILONS:
        raise ValueError(f"eps must be one of {EPSILONS}, got {eps}")
    return _eps_sweep()[eps]


@lru_cache(maxsize=1)
def _eps_sweep() -> dict[float, dict]:
    return {e: _eps_runs(e) for e in EPSILONS}


def _eps_runs(eps: float) -> dict[str, FedResult]:
    return {f"{LABELS[m]}": run(m, "power-law", B_LARGE, EXPLORE["lr"], 0, EXPLORE["rounds"], eps=eps)
            for m in ("sadl", "sadl-same")} | {LABELS["amsgrad"]: run("amsgrad", "power-law", D, EXPLORE["lr"], 0,
                                                                      EXPLORE["rounds"], eps=eps)}


EPS_TITLE = "The ε pitfall: first-step sizes (left) and loss (right), split sketches against one sketch"
BINS = np.linspace(-4, 4, 33)


def _eps_frame(eps: float) -> tuple[list, dict]:
    """Histogram of log10 |first step| / kappa per coordinate (left) and the loss curves (right)."""
    hist = step_histogram(eps)
    bars = []
    for i, (name, label) in enumerate((("split", "SADL"), ("same", "SADL, one sketch for both moments"))):
        counts, _ = np.histogram(np.log10(np.maximum(hist[name], 1e-4)), BINS)
        bars.append(go.Bar(x=0.5 * (BINS[1:] + BINS[:-1]), y=np.where(counts > 0, counts, np.nan),
                           name=f"{label}: first steps", marker_color=line_style(i)["line"]["color"],
                           opacity=0.7, showlegend=False))
    curves = [t.update(xaxis="x2", yaxis="y2") for t in curve_traces(eps_runs(eps))]
    tails = {k: float(np.quantile(v, 0.999)) for k, v in hist.items()}
    left = frame_note(f"ε = {eps:.0e}<br>99.9% of first steps<br>below {tails['split']:.1f}κ (split),<br>"
                      f"{tails['same']:.2f}κ (one sketch)")["annotations"][0]
    runs = eps_runs(eps)
    right = dict(left, xref="x2 domain", yref="y2 domain", x=0.99, xanchor="right", align="right",
                 text="final L_T / L_0:<br>" + "<br>".join(
                     f"{n.split(',')[0] if 'one' not in n else 'one sketch'} {r.final_loss / r.trace.objective[0]:.3f}"
                     for n, r in runs.items()))
    return bars + curves, {"annotations": [left, right]}


def _eps_axes(fig: go.Figure) -> go.Figure:
    fig.update_layout(xaxis=dict(domain=[0, 0.42], title="log10 |first step| / κ", range=[-4, 4]),
                      yaxis=dict(title="coordinates", type="log"),
                      xaxis2=dict(domain=[0.56, 1], anchor="y2", title="round t"),
                      yaxis2=dict(anchor="x2", title="loss L_t / L_0", type="log"), barmode="overlay")
    return fig


def eps_slider_figure() -> go.Figure:
    """Static twin of the eps explorer."""
    steps = [SliderStep(f"{e:.0e}", *_eps_frame(e)) for e in EPSILONS]
    fig = slider_figure(steps, slider_label="AMSGrad's ε", active=0, fixed_axes=False, height=520, title=EPS_TITLE)
    return _eps_axes(fig)


def eps_live(eps: float = 1e-8) -> go.Figure:
    """Live twin of the eps explorer."""
    if eps not in EPSILONS:
        raise ValueError(f"eps must be one of {EPSILONS}, got {eps}")
    traces, note = _eps_frame(eps)
    return _eps_axes(base_layout(go.Figure(traces, layout=note), height=520, title=EPS_TITLE))


@lru_cache(maxsize=8)
def step_histogram(eps: float = 1e-8, b: int = B_LARGE, seed: int = 0) -> dict[str, np.ndarray]:
    """Per-coordinate |m / (sqrt(v) + eps)|, the first AMSGrad step in units of kappa, on the power-law
    problem: the change sketched is the first round's without gradient noise (K eta lambda x_0), its
    two moments desketched from split SRHT sketches ("split") and from one sketch ("same")."""
    p = problem("power-law", seed)
    grad = p.lam * x0(seed) * RUN["client_lr"] * RUN["local_steps"]
    out = {}
    for name, parts in (("split", [(1, b // 2), (2, b - b // 2)]), ("same", [(0, b), (0, b)])):
        est = [Sketch("srht", D, n, (seed, 0, k)).desketch(Sketch("srht", D, n, (seed, 0, k)).sketch(grad))
               for k, n in parts]
        st = ada_opt(AMSGradState.zeros_like(torch.zeros(D, dtype=torch.float64)), est[0], est[1], 1.0,
                     RUN["betas"], eps)
        out[name] = st.x.abs().numpy()
    return out


def baseline_runs(seed: int = 0) -> dict[str, FedResult]:
    """Every method at b = 20 (uncompressed ones at d) on the power-law spectrum, each at its tuned kappa."""
    out = {}
    for m in ("amsgrad", "sadl", "sketched-sgd", "topk-ef", "fedavg"):
        b = D if m in ("amsgrad", "fedavg") else B_SMALL
        out[LABELS[m]] = run(m, "power-law", b, tuning(m, "power-law", b).best["lr"], check_int(seed, "seed"))
    return out


def baseline_tunings() -> list[Tuning]:
    return [tuning(m, "power-law", D if m in ("amsgrad", "fedavg") else B_SMALL)
            for m in ("amsgrad", "sadl", "sketched-sgd", "topk-ef", "fedavg")]


def bytes_figure(seed: int = 0) -> go.Figure:
    """Loss against rounds (left) and against floats communicated (right), every method tuned."""
    runs = baseline_runs(seed)
    fig = make_subplots(rows=1, cols=2, shared_yaxes=True, horizontal_spacing=0.09)
    for t in curve_traces(runs, "round"):
        fig.add_trace(t, 1, 1)
    for t in curve_traces(runs, "floats", showlegend=False):
        fig.add_trace(t, 1, 2)
    base_layout(fig, logy=True, height=470, title=f"Power-law spectrum, b = {B_SMALL}: loss against rounds (left) "
                                                  "and floats sent (right)")
    fig.update_xaxes(title_text="round t", row=1, col=1)
    fig.update_xaxes(title_text="floats communicated (log)", type="log", row=1, col=2)
    fig.update_yaxes(title_text="loss L_t / L_0", row=1, col=1)
    fig.update_yaxes(showticklabels=True, row=1, col=2)    # the panels stack on a phone: both need their ticks
    return fig


def spectra_figure() -> go.Figure:
    """The two Hessian spectra of the claim, sorted, with their intrinsic dimensions."""
    fig = go.Figure()
    for i, k in enumerate(SPECTRA):
        lam = spectrum(k)
        fig.add_trace(go.Scatter(x=np.arange(1, D + 1), y=lam, mode="lines",
                                 name=f"{k}: I = {intrinsic_dimension(lam):.1f}", **line_style(i)))
    base_layout(fig, logy=True, height=400, title="The two Hessian spectra of the claim",
                xaxis_title="index i (eigenvalues sorted)", yaxis_title="eigenvalue λᵢ")
    fig.update_xaxes(type="log")
    return fig


EXPLORER_NOISE = Explorer("22", "sketch_noise", sketch_noise_live,
                          {"draws": Slider("sketches averaged N", NOISE_DRAWS, 1, fmt="{}")},
                          description="Running mean of desketched sketches against the true vector")
EXPLORER_SPECTRUM = Explorer("22", "spectrum", spectrum_live,
                             {"p": Slider("spectral decay p", EXPONENTS, 1.5)},
                             description="Loss curves of uncompressed AMSGrad and SADL as the spectrum decays")
EXPLORER_EPS = Explorer("22", "eps", eps_live, {"eps": Slider("AMSGrad eps", EPSILONS, 1e-8, fmt="{:.0e}")},
                        description="Split against shared sketches as AMSGrad's eps shrinks")

#: How the notebook prints each claim's figures.
GLUE_FORMATS = {
    "spectrum_decides": {"ratio_decaying": "{:.2f}", "ratio_decaying_min": "{:.2f}", "ratio_decaying_max": "{:.2f}",
                         "ratio_flat": "{:.0f}", "ratio_flat_min": "{:.0f}", "ratio_decaying_large": "{:.2f}",
                         "ratio_flat_large": "{:.0f}", "gap_growth": "{:.1f}", "full_power": "{:.3f}",
                         "full_flat": "{:.1e}", "sadl_power": "{:.3f}", "intrinsic_power": "{:.1f}",
                         "intrinsic_flat": "{:.0f}"},
    "accounting": {"identical": lambda v: "yes" if v else "no", "traffic_ratio": "{:.4f}", "b_over_d": "{:.4f}",
                   "sync_gap": "{:g}", "on_gloo": lambda v: "over gloo" if v else "in-process only",
                   "gloo_gap": "{:.0e}"},
}
