"""Chapter 25: the book's experiments, figures, live explorers and claims for AT-BPTT. The methods
are in :mod:`optbook.bilevel.at_bptt`.
"""
from __future__ import annotations

import time
from functools import lru_cache

import numpy as np
import plotly.graph_objects as go
import torch
from plotly.subplots import make_subplots
from scipy.stats import spearmanr

from ..claims import Criterion, Measured, claim
from ..core import Tuning, check_choice, check_int
from ..core.threads import one_torch_thread
from ..viz import SliderStep, base_layout, color_for, frame_note, slider_figure
from ..widgets import Explorer, Slider
from .at_bptt import (METHODS, Task, adjoint_meta_gradient, batched_meta_gradient, distill, evaluate,
                      real_subset, softmax_probs, window_distribution, windowed_meta_gradient)

# --------------------------------------------------------------------------- the setting

#: The proxy (fixed before the full run): scikit-learn's 8x8 digits (64 features, 10 classes),
#: standardised; 1200 train / 597 test points; MLP 64 -> 32 -> 10; inner SGD, lr 0.1, T = 30 steps;
#: IPC 1 (10 learnable points), Adam on them, 100 outer iterations, real batch 256. Windows: mean
#: width W0 = 6 (20% of T, the paper's CIFAR-10 ratio 40/200), AT-BPTT offset d = 2 (10/40 of W0 in
#: the paper: 2/6 here), stages switched at 30% and 70% of the outer iterations.
RUN = dict(iterations=100, T=30, base_window=6, offset=2, inner_lr=0.1, ipc=1, real_batch=256)
FAST_RUN = dict(RUN, iterations=40)
#: The same grid for every method: the outer (distillation) learning rate. First registered as
#: (0.01, 0.03, 0.1); three of four methods chose its edge 0.1, so it was shifted one step up.
GRID = (0.03, 0.1, 0.3)
FAST_GRID = (0.03, 0.1)
TUNING_SEEDS = (100, 101)
CLAIM_SEEDS = (0, 1, 2, 3, 4)
FAST_TUNING_SEEDS, FAST_CLAIM_SEEDS = (100,), (0, 1, 2)
SNAPSHOT_EVERY = 10


@lru_cache(maxsize=1)
def task() -> Task:
    """The digits task: standardised features (train statistics, +1 in the scale to tame flat pixels)."""
    from sklearn.datasets import load_digits

    d = load_digits()
    X, y = d.data.astype(np.float32), d.target
    perm = np.random.default_rng(0).permutation(len(y))
    tr, te = perm[:1200], perm[1200:]
    mu, sd = X[tr].mean(0), X[tr].std(0) + 1.0
    X = (X - mu) / sd
    t = lambda a: torch.tensor(a)  # noqa: E731
    return Task(t(X[tr]), t(y[tr]), t(X[te]), t(y[te]), classes=10, hidden=32)


def runs(method: str, fast: bool = False):
    """Every (seed, outer lr) run of ``method``: tuning seeds first, then claim seeds. Returns the
    distillation result, the seeds, the grid and the test accuracies (seeds x grid); cached."""
    return _runs(check_choice(method, "method", METHODS), bool(fast))


@lru_cache(maxsize=8)
def _runs(method: str, fast: bool):
    seeds = (FAST_TUNING_SEEDS + FAST_CLAIM_SEEDS) if fast else (TUNING_SEEDS + CLAIM_SEEDS)
    grid = FAST_GRID if fast else GRID
    cfg = FAST_RUN if fast else RUN
    with one_torch_thread():
        res = distill(task(), method, seeds=seeds, outer_lrs=grid, snapshot_every=SNAPSHOT_EVERY, **cfg)
        acc = evaluate(task(), res.X, res.y, seed=0, T=cfg["T"], inner_lr=cfg["inner_lr"])
    return res, seeds, grid, acc.reshape(len(seeds), len(grid))


def tuning(method: str, fast: bool = False) -> Tuning:
    """Grid search on the held-out tuning seeds (test accuracy, higher is better)."""
    _, seeds, grid, acc = runs(method, fast)
    k = len(FAST_TUNING_SEEDS if fast else TUNING_SEEDS)
    per_seed = acc[:k].T
    return Tuning(method, [{"outer_lr": g} for g in grid], np.median(per_seed, axis=1), seeds[:k], True, per_seed)


def claim_accuracies(method: str, fast: bool = False) -> np.ndarray:
    """Test accuracy on the claim seeds at the rate tuned on the held-out seeds."""
    _, _, _, acc = runs(method, fast)
    k = len(FAST_TUNING_SEEDS if fast else TUNING_SEEDS)
    return acc[k:, tuning(method, fast).best_index]


def floor_accuracies(fast: bool = False) -> np.ndarray:
    """The random-real-subset floor (IPC real points per class, no optimisation) on the claim seeds."""
    seeds = FAST_CLAIM_SEEDS if fast else CLAIM_SEEDS
    sets = [real_subset(task(), RUN["ipc"], s) for s in seeds]
    with one_torch_thread():
        return evaluate(task(), torch.stack([a for a, _ in sets]), torch.stack([b for _, b in sets]), seed=0,
                        T=RUN["T"], inner_lr=RUN["inner_lr"])


GLUE_FORMATS = {
    "accuracy": {k: "{:.3f}" for k in ("at", "rat", "rat_sd", "tbptt", "bptt", "floor", "margin_rat",
                                         "margin_tbptt", "at_min", "at_max", "bptt_gap", "gain_rat", "headroom")},
    "mechanism": {"spearman": "{:.2f}", "gain": "{:.2f}", "spearman_min": "{:.2f}", "gain_min": "{:.2f}",
                  "g_ratio": "{:.1f}"},
    "cost": {"memory_saving": "{:.0%}", "backward_speedup": "{:.1f}", "wall_speedup": "{:.1f}",
             "work_ratio": "{:.2f}", "mean_width": "{:.1f}"},
}

# --------------------------------------------------------------------------- claims


@claim("25", "AT-BPTT's distilled data train networks better than RaT-BPTT's and T-BPTT's",
       kind="reproduction",
       paper="AT-BPTT beats random truncation (RaT-BPTT) and the other inner-loop baselines: +6.16% accuracy "
             "on average over baselines on CIFAR-10/100, Tiny-ImageNet, ImageNet-1K (abstract)",
       expect="digits, IPC 1, MLP 64-32-10, T = 30, mean window 6; each method's outer lr tuned on a 3-point "
              "grid (0.03, 0.1, 0.3; first 0.01-0.1, shifted off its edge) with seeds 100-101; over claim seeds "
              "0-4 (5 fresh networks each): mean AT-BPTT accuracy >= mean RaT-BPTT + 1 sd of RaT-BPTT over seeds "
              "(margin_rat >= 0: the paper claims a gain over random truncation, and one seed-to-seed sd is the "
              "smallest gain this proxy can tell from noise; the paper's +6.16 points is a CIFAR-scale average "
              "with no proxy counterpart) and >= mean T-BPTT (margin_tbptt >= 0); premise: full BPTT beats "
              "RaT-BPTT by >= 1 sd (random truncation leaves accuracy to gain). Re-registered by the referee "
              "after the full run, disclosed: the author's criterion, AT >= RaT - 1 sd with the undistilled "
              "floor as control, is met by RaT-BPTT itself (margin +1 sd) and so could not tell AT-BPTT from "
              "its baseline; the data and the runs are unchanged",
       control="RaT-BPTT (uniform window positions, fixed width: the nearest baseline) in AT-BPTT's place",
       reproduces=False,
       diagnosis="(1) the proxy shows the phenomenon: full BPTT beats RaT-BPTT by more than one RaT sd (premise, "
                 "measured), so random truncation leaves accuracy on the table; (2) the hyperparameters are "
                 "the code's rescaled: W0/T = 20% as on CIFAR-10 (40/200), d/W0 about 1/4, softmax of raw norms "
                 "at temperature 1; because the probe's norms span less than one unit, that softmax is nearly "
                 "uniform here, and an unregistered rerun with a selective temperature (0.05) did not help "
                 "(chapter text); (3) the reduction holds: stage 2 is RaT-BPTT with width W0 + d, and the "
                 "batched engine equals one window at a time (tests); (4) the control, RaT-BPTT in AT-BPTT's "
                 "place, fails by exactly one sd, as it must. Measured: AT-BPTT ties RaT-BPTT (difference "
                 "well under one sd)",
       name="accuracy")
def accuracy_claim(fast: bool = False, control: bool = False) -> Measured:
    acc = {m: claim_accuracies(m, fast) for m in METHODS}
    at = acc["RaT-BPTT"] if control else acc["AT-BPTT"]
    rat, tb = acc["RaT-BPTT"], acc["T-BPTT"]
    vals = dict(at=at.mean(), at_min=at.min(), at_max=at.max(), rat=rat.mean(), rat_sd=rat.std(ddof=1),
                tbptt=tb.mean(), bptt=acc["BPTT"].mean(), floor=floor_accuracies(fast).mean())
    vals["margin_rat"] = vals["at"] - (vals["rat"] + vals["rat_sd"])
    vals["gain_rat"] = vals["at"] - vals["rat"]
    vals["margin_tbptt"] = vals["at"] - vals["tbptt"]
    vals["bptt_gap"] = vals["bptt"] - vals["tbptt"]
    vals["headroom"] = vals["bptt"] - vals["rat"]
    seeds = FAST_CLAIM_SEEDS if fast else CLAIM_SEEDS
    return Measured(vals, criteria=[Criterion("margin_rat", ">=", 0.0), Criterion("margin_tbptt", ">=", 0.0)],
                    seeds=seeds, precondition=bool(vals["headroom"] >= vals["rat_sd"]),
                    summary=f"AT {vals['at']:.3f}, RaT {vals['rat']:.3f} (sd {vals['rat_sd']:.3f}), "
                            f"T-BPTT {vals['tbptt']:.3f}, BPTT {vals['bptt']:.3f}",
                    details={"acc": acc, "tunings": [tuning(m, fast) for m in METHODS]})


@lru_cache(maxsize=2)
def selective_rerun(temperature: float = 0.05) -> dict:
    """An unregistered check of the accuracy claim: AT-BPTT with a selective softmax temperature
    (the code's temperature 1 is nearly uniform on this proxy's small norms), on the claim seeds at
    AT-BPTT's tuned outer rate. Returns its mean accuracy and the paired gain over RaT-BPTT."""
    j = tuning("AT-BPTT").best_index
    with one_torch_thread():
        res = distill(task(), "AT-BPTT", seeds=CLAIM_SEEDS, outer_lrs=(GRID[j],), temperature=temperature, **RUN)
        acc = evaluate(task(), res.X, res.y, seed=0, T=RUN["T"], inner_lr=RUN["inner_lr"])
    rat = claim_accuracies("RaT-BPTT")
    return {"temperature": temperature, "at": float(acc.mean()), "gain_rat": float((acc - rat).mean()),
            "at_min": float(acc.min()), "at_max": float(acc.max())}


def window_profile(X: torch.Tensor, y: torch.Tensor, *, width: int, inits: int = 6, seed: int = 0,
                   T: int = RUN["T"], lr: float = RUN["inner_lr"]):
    """For one synthetic set: the probe's gradient norms ``g_s`` (mean over ``inits`` fresh networks)
    and the windowed meta-gradient norm for a window of ``width`` starting at every ``s`` (mean over
    the same networks), all windows batched. Returns (g[0..T-W], meta-norms[0..T-W])."""
    width = check_int(width, "width", minimum=1)
    inits = check_int(inits, "inits", minimum=1)
    t = task()
    gen = torch.Generator().manual_seed(5_000 + seed)
    theta0 = torch.stack([t.init(gen) for _ in range(inits)])
    S = T - width + 1
    rng = np.random.default_rng([seed, 3])
    idx = torch.as_tensor(rng.choice(t.X_train.shape[0], RUN["real_batch"], replace=False))
    th0 = theta0.repeat_interleave(S, 0)
    R = th0.shape[0]
    Xr, yr = X.expand(R, *X.shape).clone(), y.expand(R, *y.shape)
    Xb, yb = t.X_train[idx].expand(R, -1, -1), t.y_train[idx].expand(R, -1)
    starts = np.tile(np.arange(S), inits)
    with one_torch_thread():
        _, grad = batched_meta_gradient(t, th0, Xr, yr, Xb, yb, starts, np.full(R, width), lr)
        theta, norms = theta0.clone(), np.empty((inits, T))
        for s in range(T):
            th = theta.requires_grad_(True)
            g, = torch.autograd.grad(t.losses(th, X.expand(inits, *X.shape), y.expand(inits, -1)).sum(), th)
            norms[:, s] = g.norm(dim=1).numpy()
            theta = (th - lr * g).detach()
    meta = grad.flatten(1).norm(dim=1).view(inits, S).mean(0).numpy()
    return norms.mean(0)[:S], meta


@lru_cache(maxsize=4)
def mechanism_data(fast: bool = False):
    """Window profiles of the RaT-BPTT synthetic sets halfway through distillation, per claim seed."""
    res, seeds, grid, _ = runs("RaT-BPTT", fast)
    k = len(FAST_TUNING_SEEDS if fast else TUNING_SEEDS)
    j = tuning("RaT-BPTT", fast).best_index
    mid = res.snapshots[len(res.snapshots) // 2]
    out = []
    for i, s in enumerate(seeds[k:]):
        r = (k + i) * len(grid) + j
        out.append(window_profile(mid[r], res.y[r], width=RUN["base_window"], inits=3, seed=s))
    return out


@claim("25", "Stage-aware sampling picks windows with larger meta-gradients", kind="reproduction",
       paper="the inner run's gradient behaviour differs by stage, so positions sampled from softmax of gradient "
             "norms beat uniform ones (the premise of AT-BPTT's stage-aware timestep selection; no number)",
       expect="for the RaT-BPTT synthetic set halfway through distillation (claim seeds 0-4; 3 fresh networks "
              "each), Spearman correlation between the sampling probability of each window start and the "
              "windowed meta-gradient norm there: median >= 0.5; and expected meta-gradient norm under the "
              "stage-1 sampler over that under uniform positions: median gain >= 1.05",
       control="window positions drawn uniformly (RaT-BPTT's sampler) in place of softmax of gradient norms",
       reproduces=False,
       diagnosis="(1) the proxy shows the stages the paper builds on: the probe's gradient norm falls about "
                 "threefold over the 30 inner steps (measured: g_ratio, the precondition asks >= 2); (2) window/unroll ratio 20% and softmax of raw norms at "
                 "temperature 1, as in the code (CIFAR-10: 40/200); the Spearman statistic does not depend on "
                 "the temperature (softmax is monotone in g), so no rescaling of the norms can change its sign; "
                 "(3) stage 2 (uniform start, width W0 + d) is RaT-BPTT's sampler and constant norms give uniform "
                 "probabilities (tests; stage 1 then still differs from RaT-BPTT by the code's clipping of "
                 "late starts to T - W); (4) the control gives Spearman 0 and gain 1, as expected. Measured: the "
                 "meta-gradient norm is nearly flat in the window start and slightly larger for late windows, so "
                 "the rank correlation with the (decreasing) gradient norm is negative; first seen in the fast "
                 "run, criterion kept as registered. An unregistered follow-up (chapter text) finds the "
                 "correlation positive on the undistilled images and negative from 20 outer steps on, where "
                 "the mirrored stage-3 sampler correlates positively instead. Referee's note: the registered point, "
                 "halfway, lies in stage 2, where AT-BPTT samples uniformly anyway; the follow-up covers stage 1",
       name="mechanism")
def mechanism_claim(fast: bool = False, control: bool = False) -> Measured:
    rhos, gains, ratios = [], [], []
    for g, m in mechanism_data(fast):
        ratios.append(float(g.max() / g.min()))
        p = np.full(g.size, 1.0 / g.size) if control else softmax_probs(g)
        rho = 0.0 if np.ptp(p) == 0 else float(spearmanr(p, m).statistic)
        rhos.append(rho)
        gains.append(float(p @ m / m.mean()))
    vals = dict(spearman=np.median(rhos), spearman_min=np.min(rhos), gain=np.median(gains), gain_min=np.min(gains),
                g_ratio=np.median(ratios))
    # check (1) measured: the probe's gradient norm at least halves along the run (the stages exist)
    return Measured(vals, criteria=[Criterion("spearman", ">=", 0.5), Criterion("gain", ">=", 1.05)],
                    seeds=FAST_CLAIM_SEEDS if fast else CLAIM_SEEDS, precondition=bool(vals["g_ratio"] >= 2.0),
                    summary=f"median Spearman {vals['spearman']:.2f}, median gain {vals['gain']:.2f}")


def stage_rows() -> list[dict]:
    """The mechanism check at four points of RaT-BPTT's distillation (claim seeds, 3 networks each):
    Spearman correlation of the meta-gradient norm with the stage-1 sampler (softmax of g) and
    with the stage-3 sampler (its mirror image, s = T - W - u), median and range over seeds."""
    res, seeds, grid, _ = runs("RaT-BPTT")
    k, j = len(TUNING_SEEDS), tuning("RaT-BPTT").best_index
    W = RUN["base_window"]
    rows = []
    for snap in (0, 2, 5, 8):
        r1, r3 = [], []
        for i, sd in enumerate(seeds[k:]):
            r = (k + i) * len(grid) + j
            g, m = window_profile(res.snapshots[snap][r], res.y[r], width=W, inits=3, seed=sd)
            p1 = softmax_probs(g)
            r1.append(spearmanr(p1, m).statistic)
            r3.append(spearmanr(p1[::-1], m).statistic)
        rows.append({"outer iteration": snap * SNAPSHOT_EVERY,
                     "Spearman, stage-1 sampler": f"{np.median(r1):+.2f} ({min(r1):+.2f} to {max(r1):+.2f})",
                     "Spearman, stage-3 (mirrored)": f"{np.median(r3):+.2f} ({min(r3):+.2f} to {max(r3):+.2f})"})
    return rows


def _time(fn, repeats: int = 3) -> float:
    ts = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t0)
    return float(np.median(ts))


@claim("25", "AT-BPTT's stored window and backpropagated steps are set by W0, d and T", kind="identity",
       paper="AT-BPTT accelerates inner-loop optimisation 3.9x and saves 63% of the memory (abstract)",
       expect="over the AT-BPTT runs of the accuracy claim (claim seeds 0-4, tuned rate): memory saving "
              "1 - (largest stored window)/T equals 1 - (W0 + d)/T (to 1e-12), and the mean backpropagated "
              "window lies in [W0 - d, W0 + d], so BPTT's backpropagated steps over AT-BPTT's lie in "
              "[T/(W0 + d), T/(W0 - d)]; wall-time and total-work ratios (probe included) reported, not "
              "tested. Registered by the author as a reproduction of the paper's 63% and 3.9x with thresholds "
              "0.63 and 3.9; re-registered by the referee as an identity, disclosed: both figures follow from "
              "the chosen W0, d and T (the paper's own CIFAR-10 values give 75% and 5x by the same "
              "arithmetic) and can fail only on a bookkeeping bug",
       name="cost")
def cost_claim(fast: bool = False, control: bool = False) -> Measured:
    res, seeds, grid, _ = runs("AT-BPTT", fast)
    cfg = FAST_RUN if fast else RUN
    T, its = cfg["T"], cfg["iterations"]
    k = len(FAST_TUNING_SEEDS if fast else TUNING_SEEDS)
    j = tuning("AT-BPTT", fast).best_index
    rows = [(k + i) * len(grid) + j for i in range(len(seeds) - k)]
    stored = res.max_stored[rows].max()
    mean_w = res.steps_backward[rows].mean() / its
    # total work, in units of one gradient step: forward steps (probe included) + 2 per backward step
    work = (res.steps_forward[rows] + 2 * res.steps_backward[rows]).mean() / (3 * T * its)
    t = task()
    X, y = real_subset(t, 1, 0)
    theta0 = t.init(torch.Generator().manual_seed(1))

    def inner(th, Xs):
        return torch.nn.functional.cross_entropy(t.logits(th, Xs), y)

    def outer(th):
        return torch.nn.functional.cross_entropy(t.logits(th, t.X_train[:256]), t.y_train[:256])

    w = int(round(mean_w))
    with one_torch_thread():
        wall = _time(lambda: windowed_meta_gradient(inner, outer, theta0, X, 0, T, cfg["inner_lr"])) / _time(
            lambda: windowed_meta_gradient(inner, outer, theta0, X, T - w, w, cfg["inner_lr"]))
    W0, d = cfg["base_window"], cfg["offset"]
    vals = dict(memory_saving=1 - stored / T, backward_speedup=T / mean_w, mean_width=mean_w,
                wall_speedup=wall, work_ratio=work)
    vals["memory_error"] = abs(vals["memory_saving"] - (1 - (W0 + d) / T))
    vals["width_outside"] = max(W0 - d - mean_w, mean_w - (W0 + d), 0.0)
    return Measured(vals, criteria=[Criterion("memory_error", "<=", 1e-12), Criterion("width_outside", "<=", 0.0)],
                    seeds=seeds[k:], summary=f"saves {vals['memory_saving']:.0%} of stored steps, backward "
                    f"{vals['backward_speedup']:.1f}x shorter; total work {work:.2f} of BPTT's")


@claim("25", "The adjoint recursion equals autograd; full-rank Lanczos is exact", kind="identity",
       expect="float64, linear softmax model: the explicit adjoint (exact Hessian-vector products) equals "
              "autograd's windowed meta-gradient to 1e-10 (relative); on a quadratic inner loss (one Hessian) "
              "the full-rank Lanczos adjoint equals it to 1e-8", name="adjoint")
def adjoint_identity(fast: bool = False, control: bool = False) -> Measured:
    gen = torch.Generator().manual_seed(0)
    f, C, n = 5, 3, 4
    X = torch.randn(n, f, generator=gen, dtype=torch.float64)
    y = torch.arange(n) % C
    Xr = torch.randn(20, f, generator=gen, dtype=torch.float64)
    yr = torch.arange(20) % C
    from .at_bptt import mlp_forward

    def inner(th, Xs):
        return torch.nn.functional.cross_entropy(mlp_forward(th, Xs, 0, C), y)

    def outer(th):
        return torch.nn.functional.cross_entropy(mlp_forward(th, Xr, 0, C), yr)

    th0 = 0.1 * torch.randn(f * C + C, generator=gen, dtype=torch.float64)
    _, ref = windowed_meta_gradient(inner, outer, th0, X, 2, 4, 0.5)
    _, adj, _ = adjoint_meta_gradient(inner, outer, th0, X, 2, 4, 0.5)
    ys = torch.randn(n, generator=gen, dtype=torch.float64)

    def quad(th, Xs):  # a quadratic inner loss: one Hessian everywhere
        return 0.5 * ((Xs @ th[:f] - ys) ** 2).mean() + 0.05 * (th ** 2).sum()

    _, ref1 = windowed_meta_gradient(quad, outer, th0, X, 2, 4, 0.5)
    _, low, _ = adjoint_meta_gradient(quad, outer, th0, X, 2, 4, 0.5, rank=f * C + C, generator=gen)
    e1 = float((adj - ref).norm() / ref.norm())
    e2 = float((low - ref1).norm() / ref1.norm())
    return Measured({"adjoint_error": e1, "lanczos_error": e2},
                    criteria=[Criterion("adjoint_error", "<=", 1e-10), Criterion("lanczos_error", "<=", 1e-8)],
                    summary=f"relative errors {e1:.1e} and {e2:.1e}")


# --------------------------------------------------------------------------- figures


@lru_cache(maxsize=1)
def _image_frames():
    """Snapshots per method: the 10 synthetic images of claim seed 0 at the tuned rate, tiled into
    one 17 x 89 mosaic (T-BPTT on top, AT-BPTT below, one blank row and column between images)."""
    out = []
    per = {}
    for m in ("T-BPTT", "AT-BPTT"):
        res, seeds, grid, _ = runs(m)
        r = len(TUNING_SEEDS) * len(grid) + tuning(m).best_index
        per[m] = [s_[r].numpy() for s_ in res.snapshots]
    for k in range(len(per["AT-BPTT"])):
        Z = np.full((17, 89), np.nan)
        for row, m in enumerate(("T-BPTT", "AT-BPTT")):
            for c in range(10):
                Z[9 * row: 9 * row + 8, 9 * c: 9 * c + 8] = per[m][k][c].reshape(8, 8)
        out.append(Z)
    return out


def _mosaic_trace(Z):
    return go.Heatmap(z=Z, zmin=-2, zmax=4, colorscale="Greys", showscale=False,
                      hovertemplate="%{z:.2f}<extra></extra>")


def _mosaic_layout(fig: go.Figure) -> go.Figure:
    fig.update_xaxes(showticklabels=False, showgrid=False, zeroline=False, tickvals=[],
                     title_text="digits 0 to 9")
    fig.update_yaxes(autorange="reversed", scaleanchor="x", showgrid=False, zeroline=False,
                     tickvals=[3.5, 12.5], ticktext=["T-BPTT", "AT-BPTT"])
    return fig


def images_figure(snapshot: int = 10) -> go.Figure:
    """The 10 distilled points (one per digit, as 8x8 images in standardised units) at one snapshot
    (every 10 outer iterations), T-BPTT on the top row and AT-BPTT below."""
    snapshot = check_int(snapshot, "snapshot", minimum=0)
    frames = _image_frames()
    fig = go.Figure(_mosaic_trace(frames[min(snapshot, len(frames) - 1)]))
    base_layout(fig, height=280, title=f"The ten distilled digits after {10 * min(snapshot, len(frames) - 1)} "
                "outer iterations")
    return _mosaic_layout(fig)


def images_slider_figure() -> go.Figure:
    """Static twin: the synthetic images over outer iterations (every 10th snapshot)."""
    frames = _image_frames()
    steps = [SliderStep(str(k * SNAPSHOT_EVERY), [_mosaic_trace(Z)]) for k, Z in enumerate(frames)]
    fig = slider_figure(steps, slider_label="outer iteration", active=len(frames) - 1, fixed_axes=False,
                        height=340, title="The ten distilled digits over outer iterations (top T-BPTT, bottom AT-BPTT)")
    return _mosaic_layout(fig)


TEMPERATURES = (0.02, 0.05, 0.1, 0.25, 1.0, 4.0)


@lru_cache(maxsize=1)
def _probe_curve() -> np.ndarray:
    """The probe's gradient-norm curve g_t for the random real subset of seed 0 (mean of 6 networks)."""
    X, y = real_subset(task(), 1, 0)
    g, _ = window_profile(X, y, width=1, inits=6, seed=0)
    return g


@lru_cache(maxsize=1)
def _top_probability() -> float:
    g = _probe_curve()
    return max(window_distribution(st, g, RUN["base_window"], RUN["offset"], tau).sum(1).max()
               for st in (1, 3) for tau in TEMPERATURES)


def windows_figure(temperature: float = 1.0, stage: int = 1) -> go.Figure:
    """Top: the probe's gradient norms g_t. Bottom: the probability of each window start in the three
    stages (stage 1 softmax of g/tau, stage 2 uniform, stage 3 mirrored), for one temperature."""
    if isinstance(stage, bool) or stage not in (1, 2, 3):
        raise ValueError(f"stage must be 1, 2 or 3, got {stage!r}")
    g = _probe_curve()
    T = g.size
    fig = make_subplots(rows=2, cols=1, shared_xaxes=True, vertical_spacing=0.08, row_heights=[0.4, 0.6])
    fig.add_trace(go.Scatter(x=np.arange(T), y=g, name="g_t = ||inner gradient||", line=dict(color="#444")),
                  row=1, col=1)
    for st in (1, 2, 3):
        P = window_distribution(st, g, RUN["base_window"], RUN["offset"], temperature)
        fig.add_trace(go.Scatter(x=np.arange(T), y=P.sum(1), name=f"stage {st}", mode="lines",
                                 line=dict(color=color_for(st - 1), width=3 if st == stage else 1.6,
                                           shape="hv")), row=2, col=1)
    P1 = window_distribution(1, g, RUN["base_window"], RUN["offset"], temperature)
    mean_w = float(P1.sum(0) @ np.arange(T + 1))
    base_layout(fig, height=470)
    fig.update_yaxes(title_text="gradient norm", row=1, col=1)
    fig.update_yaxes(title_text="P(window start)", row=2, col=1, range=[0, 1.05 * _top_probability()])
    fig.update_xaxes(title_text="inner step t (window start s)", row=2, col=1)
    fig.update_layout(frame_note(f"tau = {temperature:g}: stage-1 mean width {mean_w:.1f}"))
    return fig


def windows_slider_figure() -> go.Figure:
    """Static twin of the window explorer: a slider over the softmax temperature."""
    steps = []
    for tau in TEMPERATURES:
        f = windows_figure(tau)
        steps.append(SliderStep(f"{tau:g}", list(f.data), dict(annotations=f.layout.annotations)))
    fig = slider_figure(steps, slider_label="softmax temperature tau", active=TEMPERATURES.index(1.0),
                        fixed_axes=False, height=520,
                        title="Where AT-BPTT puts its window: gradient norms and the start distribution per stage")
    tmpl = windows_figure(1.0)
    fig.update_layout({k: v for k, v in tmpl.layout.to_plotly_json().items() if k.startswith(("xaxis", "yaxis"))})
    return fig


def mechanism_figure(fast: bool = False) -> go.Figure:
    """Inner gradient norm and windowed meta-gradient norm against the window start (claim seed 0)."""
    g, m = mechanism_data(fast)[0]
    s = np.arange(g.size)
    fig = make_subplots(specs=[[{"secondary_y": True}]])
    fig.add_trace(go.Scatter(x=s, y=g, name="inner gradient norm g_s", line=dict(color=color_for(0))))
    fig.add_trace(go.Scatter(x=s, y=m, name="meta-gradient norm", line=dict(color=color_for(1), dash="dash")),
                  secondary_y=True)
    base_layout(fig, xaxis_title="window start s (inner step)", height=400,
                title="The inner gradient norm falls along the run; the meta-gradient norm does not follow it")
    fig.update_yaxes(title_text="g_s", secondary_y=False)
    fig.update_yaxes(title_text="||meta-gradient||", secondary_y=True, showline=True, tickformat=".4f")
    return fig


def run_figure() -> go.Figure:
    """Each method's real-data loss after its inner window, against outer iterations (claim seed
    median at the tuned rate, smoothed over 9 iterations), with AT-BPTT's three stages shaded."""
    fig = go.Figure()
    its = RUN["iterations"]
    for i, m in enumerate(METHODS):
        res, seeds, grid, _ = runs(m)
        k = len(TUNING_SEEDS)
        rows = [(k + s) * len(grid) + tuning(m).best_index for s in range(len(CLAIM_SEEDS))]
        L = np.median(np.array(res.meta_losses)[:, rows], axis=1)
        sm = np.convolve(L, np.ones(9) / 9, mode="valid")
        fig.add_trace(go.Scatter(x=np.arange(4, 4 + sm.size), y=sm, name=m, line=dict(color=color_for(i))))
    for (a, b), name in zip(((0, 0.3), (0.3, 0.7), (0.7, 1.0)), ("stage 1", "stage 2", "stage 3")):
        fig.add_vrect(x0=a * its, x1=b * its, fillcolor="#888", opacity=0.06 if name == "stage 2" else 0.0,
                      line_width=0, annotation_text=name, annotation_position="top left", annotation_font_size=11)
    fig.update_xaxes(range=[0, its])
    return base_layout(fig, xaxis_title="outer iteration", yaxis_title="real-data loss at the window's end",
                       height=420, title="Meta-loss during distillation (median of 5 seeds, tuned outer rates)")


def accuracy_figure(result) -> go.Figure:
    """Test accuracy per claim seed for every method, with the random-real floor."""
    acc = result.details["acc"]
    fig = go.Figure()
    for i, m in enumerate(METHODS):
        fig.add_trace(go.Box(y=acc[m], name=m, boxpoints="all", marker_color=color_for(i), showlegend=False))
    fig.add_hline(y=float(result.measured["floor"]), line_dash="dot",
                  annotation_text="random real subset", annotation_position="bottom right")
    return base_layout(fig, yaxis_title="test accuracy", height=380,
                       title="Accuracy of fresh networks trained on each method's ten points (5 seeds)")


EXPLORER_IMAGES = Explorer("25", "images", images_figure,
                           {"snapshot": Slider("snapshot (x10 outer iterations)", list(range(11)), 10, fmt="{:d}")})
EXPLORER_WINDOWS = Explorer("25", "windows", windows_figure,
                            {"temperature": Slider("softmax temperature", list(TEMPERATURES), 1.0),
                             "stage": Slider("highlighted stage", [1, 2, 3], 1, fmt="{:d}")})
