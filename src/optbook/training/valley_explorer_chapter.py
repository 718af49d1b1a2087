"""Chapter 19: the book's experiments, figures, live explorers and claims for the E adaptor and
ALTO. The methods themselves are in :mod:`optbook.training.valley_explorer`.

Two experiments carry the claims.

* **The large-batch proxy** (the paper's headline). A d-64-K ReLU MLP learns a random "teacher"
  network's labels (with 5% of them redrawn at random) from a fixed training set, for a fixed
  number of epochs, with Lamb and with ALTO. At equal epochs a large batch takes few steps and
  ends below a small one: that gap is the phenomenon the paper targets, and the
  claim's precondition measures it. Every run is seeded (initialisation and batch order from
  one ``torch.Generator``; torch's global RNG is never touched) and cached.
* **The ripple valley** (the mechanism, the paper's Fig. 8 test function). E-Adam against Adam
  from random starts, each tuned over a grid of the same size on held-out starts: E-Adam over
  alpha, Adam over its momentum, the knob that the summation-by-parts identity says alpha
  imitates.
"""
from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
import plotly.graph_objects as go
import torch

from ..claims import Criterion, Measured, claim
from ..core import Result, Tuning, as_rng, check_choice, check_int, check_positive, grid_search
from ..core.threads import one_torch_thread
from ..viz import SliderStep, base_layout, color_for, slider_figure
from ..widgets import Choice, Explorer, Slider
from .valley_explorer import (
    ALTO,
    ESGD,
    LANDSCAPES,
    LARGE_BATCH,
    EAdam,
    Lamb,
    ValleyStepper,
    e_sequence,
    ripple,
    ripple_grad,
    valley_run,
)

# --------------------------------------------------------------------------- the large-batch proxy

#: The proxy's data (fixed by ``data_seed``): inputs N(0, I_16); labels the argmax of a random
#: tanh teacher with 16 hidden units (input scale 2), 5% of them redrawn uniformly.
PROXY_DATA = dict(n_train=16384, n_val=4096, n_test=8192, d=16, classes=4, teacher_width=16, scale=2.0,
                  label_noise=0.05, data_seed=0)
HIDDEN = 64          # the student: d-64-K ReLU MLP
EPOCHS = 75          # equal epochs for every batch size
BATCH_LARGE = 4096   # 4 steps per epoch: 300 steps, three times ALTO's 100-step memory (beta1 = 0.99)
BATCH_SMALL = 512    # 32 steps per epoch: 2400 steps
#: The learning-rate grid of both methods at the large batch. The small batch (the precondition's
#: reference) takes Lamb's tuned step scaled by Lamb's square-root rule, lr ~ sqrt(batch).
LR_GRID = (0.01, 0.03, 0.1)
PROXY_SEEDS = (0, 1, 2, 3, 4)
PROXY_FAST_SEEDS = (0, 1)
SMALL_SEEDS = (0, 1, 2)          # the precondition's small-batch runs (each 8x the steps)
PROXY_TUNING_SEEDS = (100, 101)  # held out
PROXY_METHODS = ("Lamb", "ALTO")


def teacher_data(n: int, *, d: int = 16, classes: int = 4, teacher_width: int = 16, scale: float = 2.0,
                 label_noise: float = 0.05, rng=None, teacher_seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """n samples x ~ N(0, I_d) labelled by argmax(tanh(scale x W1) W2) of a random teacher
    (W1, W2 Gaussian, drawn from ``teacher_seed``); a fraction ``label_noise`` of labels is
    redrawn uniformly. ``rng`` draws the samples. Returns X (n x d), y (n,)."""
    n = check_int(n, "n", minimum=1)
    d = check_int(d, "d", minimum=1)
    classes = check_int(classes, "classes", minimum=2)
    teacher_width = check_int(teacher_width, "teacher_width", minimum=1)
    check_positive(scale, "scale")
    if not (isinstance(label_noise, (int, float)) and 0.0 <= label_noise <= 1.0):
        raise ValueError(f"label_noise must lie in [0, 1], got {label_noise!r}")
    t = np.random.default_rng(check_int(teacher_seed, "teacher_seed", minimum=0))
    W1 = t.standard_normal((d, teacher_width)) / np.sqrt(d)
    W2 = t.standard_normal((teacher_width, classes)) / np.sqrt(teacher_width)
    rng = as_rng(rng)
    X = rng.standard_normal((n, d))
    y = np.argmax(np.tanh(scale * X @ W1) @ W2, axis=1)
    flip = rng.random(n) < label_noise
    y[flip] = rng.integers(classes, size=int(flip.sum()))
    return X, y


@lru_cache(maxsize=1)
def proxy_data() -> dict[str, tuple[torch.Tensor, torch.Tensor]]:
    """The proxy's fixed train / validation / test sets (float32 inputs, int64 labels)."""
    p = PROXY_DATA
    rng = np.random.default_rng(p["data_seed"] + 1)
    kw = dict(d=p["d"], classes=p["classes"], teacher_width=p["teacher_width"], scale=p["scale"],
              label_noise=p["label_noise"], rng=rng, teacher_seed=p["data_seed"])
    out = {}
    for split in ("train", "val", "test"):
        X, y = teacher_data(p[f"n_{split}"], **kw)
        out[split] = (torch.as_tensor(X, dtype=torch.float32), torch.as_tensor(y, dtype=torch.long))
    return out


def mlp(sizes: tuple[int, ...], gen: torch.Generator) -> torch.nn.Sequential:
    """A ReLU MLP with torch's default init (uniform +-1/sqrt(fan_in)) drawn from ``gen``, not from
    torch's global generator."""
    layers: list[torch.nn.Module] = []
    for i, (a, b) in enumerate(zip(sizes[:-1], sizes[1:])):
        lin = torch.nn.utils.skip_init(torch.nn.Linear, a, b)  # no draw from the global RNG
        with torch.no_grad():
            bound = 1.0 / np.sqrt(a)
            lin.weight.copy_((2 * torch.rand(lin.weight.shape, generator=gen) - 1) * bound)
            lin.bias.copy_((2 * torch.rand(lin.bias.shape, generator=gen) - 1) * bound)
        layers += [lin, torch.nn.ReLU()] if i < len(sizes) - 2 else [lin]
    return torch.nn.Sequential(*layers)


@lru_cache(maxsize=256)
def train_proxy(method: str, batch_size: int, seed: int, lr: float, *, alpha: float | None = None,
                beta1: float | None = None, epochs: int = EPOCHS) -> dict:
    """Train the proxy MLP with "Lamb" or "ALTO" (the paper's betas, eps and decay 1e-4 on every
    tensor) for ``epochs`` epochs; ALTO's (alpha, beta1) default to the paper's large-batch
    (-5, 0.99). Returns validation and test accuracy (%), final train loss and the step count.
    Cached: the claims, the figures and the exercises share runs."""
    check_choice(method, "method", PROXY_METHODS)
    batch_size = check_int(batch_size, "batch_size", minimum=1)
    seed = check_int(seed, "seed", minimum=0)
    check_positive(lr, "lr")
    epochs = check_int(epochs, "epochs", minimum=1)
    data = proxy_data()
    Xtr, ytr = data["train"]
    if batch_size > len(ytr):
        raise ValueError(f"batch_size must be at most the {len(ytr)} training samples, got {batch_size}")
    gen = torch.Generator().manual_seed(seed)
    with one_torch_thread():
        model = mlp((Xtr.shape[1], HIDDEN, int(ytr.max()) + 1), gen)
        if method == "Lamb":
            opt: torch.optim.Optimizer = Lamb(model.parameters(), lr=lr)
        else:
            opt = ALTO(model.parameters(), lr=lr,
                       alpha=LARGE_BATCH["alpha"] if alpha is None else alpha,
                       beta1=LARGE_BATCH["beta1"] if beta1 is None else beta1)
        loss_fn = torch.nn.functional.cross_entropy
        n, steps = len(ytr), 0
        for _ in range(epochs):
            perm = torch.randperm(n, generator=gen)
            for i in range(0, n - batch_size + 1, batch_size):
                idx = perm[i:i + batch_size]
                opt.zero_grad()
                loss_fn(model(Xtr[idx]), ytr[idx]).backward()
                opt.step()
                steps += 1
        with torch.no_grad():
            acc = {s: 100.0 * float((model(data[s][0]).argmax(1) == data[s][1]).float().mean())
                   for s in ("val", "test")}
            train_loss = float(loss_fn(model(Xtr), ytr))
    return dict(val_acc=acc["val"], test_acc=acc["test"], train_loss=train_loss, steps=steps)


def proxy_tuning(method: str, seeds: tuple[int, ...] = PROXY_TUNING_SEEDS) -> Tuning:
    """``method``'s learning rate at the large batch tuned over :data:`LR_GRID` by validation
    accuracy on held-out seeds (the same grid and seeds for both methods)."""
    check_choice(method, "method", PROXY_METHODS)
    return grid_search(f"{method} (batch {BATCH_LARGE})",
                       lambda seed, lr: train_proxy(method, BATCH_LARGE, seed, lr)["val_acc"],
                       {"lr": LR_GRID}, seeds, higher_is_better=True)


def small_batch_lr(lr_large: float) -> float:
    """The small batch's step: Lamb's square-root rule lr ~ sqrt(batch) applied to the large
    batch's tuned step. Untuned, so the measured gap is if anything too small."""
    return float(check_positive(lr_large, "lr_large") * math.sqrt(BATCH_SMALL / BATCH_LARGE))


# --------------------------------------------------------------------------- the ripple valley

RIPPLE_SETTINGS = dict(base="adam", beta1=0.99, lr=0.03, beta2=0.95, beta3=0.999, eps=1e-8, maxiter=3000)
#: Equal-size grids: E-Adam over alpha up to the bound |alpha| < 100, Adam over its momentum up to 1.
RIPPLE_ALPHAS = (-20.0, -40.0, -60.0, -80.0, -90.0, -95.0, -98.0, -99.0, -99.5)
RIPPLE_BETA2S = (0.95, 0.98, 0.99, 0.995, 0.998, 0.999, 0.9995, 0.9999, 0.99999)
RIPPLE_SEEDS = (0, 1, 2, 3, 4)
RIPPLE_FAST_SEEDS = (0, 1)
RIPPLE_TUNING_SEEDS = (100, 101, 102, 103, 104)


def ripple_start(seed: int) -> float:
    """Start of run ``seed`` on the ripple function: uniform on [2.0, 2.6] (the card's x0 = 2.3
    inside the first ripple's basin)."""
    return float(np.random.default_rng(check_int(seed, "seed", minimum=0)).uniform(2.0, 2.6))


def ripple_pair(alpha: float = -80.0, x0: float = 2.3, **overrides) -> dict[str, Result]:
    """The card's check: Adam and E-Adam(alpha) from ``x0`` on the ripple function."""
    kw = {**RIPPLE_SETTINGS, **overrides}
    dom = LANDSCAPES["ripple"].domain
    return {"Adam": valley_run(ripple, [x0], ripple_grad, alpha=0.0, name="Adam", domain=dom, **kw),
            "E-Adam": valley_run(ripple, [x0], ripple_grad, alpha=alpha, name=f"E-Adam (alpha={alpha:g})",
                                 domain=dom, **kw)}


@lru_cache(maxsize=16)
def ripple_sweep(alphas: tuple[float, ...], beta2s: tuple[float, ...], seeds: tuple[int, ...]) -> dict:
    """E-Adam(alpha) on Adam with momentum beta2 (alpha = 0: Adam) from the starts of ``seeds``,
    every (alpha, beta2, seed) a row of one batched run of the card's 3000 steps. Returns final
    f, final x and the farthest x, each shaped (alphas, beta2s, seeds); NaN where a run left x > 0."""
    kw = {k: v for k, v in RIPPLE_SETTINGS.items() if k not in ("maxiter", "base", "beta2")}
    A, B, S = np.meshgrid(np.asarray(alphas, float), np.asarray(beta2s, float), np.arange(len(seeds)),
                          indexing="ij")
    st = ValleyStepper(base="adam", alpha=A.ravel(), beta2=B.ravel(), **kw)
    x = np.array([[ripple_start(seeds[i])] for i in S.ravel()])
    far = x[:, 0].copy()
    alive = np.ones(x.shape[0], dtype=bool)
    with np.errstate(all="ignore"):
        for _ in range(RIPPLE_SETTINGS["maxiter"]):
            x = st.step(x, ripple_grad(np.maximum(np.nan_to_num(x), 1e-9)))
            alive &= np.isfinite(x[:, 0]) & (x[:, 0] > 0)
            far = np.fmax(far, x[:, 0])
        f = np.where(alive, ripple(np.maximum(np.nan_to_num(x), 1e-9)), np.nan)
    shape = A.shape
    return dict(f=f.reshape(shape), x=np.where(alive, x[:, 0], np.nan).reshape(shape),
                far=np.where(alive, far, np.nan).reshape(shape), alphas=alphas, beta2s=beta2s, seeds=seeds)


RIPPLE_ALL_SEEDS = RIPPLE_TUNING_SEEDS + RIPPLE_SEEDS


def ripple_finals(alpha: float, beta2: float, seeds: tuple[int, ...]) -> dict[str, np.ndarray]:
    """Final f, final x and farthest x per seed of one setting (looked up in the chapter's two
    cached sweeps when it is there, else run)."""
    for sweep in (ripple_sweep(RIPPLE_ALPHAS + (0.0,), (0.95,), RIPPLE_ALL_SEEDS),
                  ripple_sweep((0.0,), RIPPLE_BETA2S, RIPPLE_ALL_SEEDS)):
        if alpha in sweep["alphas"] and beta2 in sweep["beta2s"] and set(seeds) <= set(RIPPLE_ALL_SEEDS):
            i, j = sweep["alphas"].index(alpha), sweep["beta2s"].index(beta2)
            idx = [RIPPLE_ALL_SEEDS.index(s) for s in seeds]
            return {k: sweep[k][i, j, idx] for k in ("f", "x", "far")}
    run = ripple_sweep((float(alpha),), (float(beta2),), tuple(seeds))
    return {k: run[k][0, 0] for k in ("f", "x", "far")}


def _ripple_score(alpha: float, beta2: float, seed: int) -> float:
    return float(ripple_finals(alpha, beta2, (seed,))["f"][0])


@lru_cache(maxsize=4)
def ripple_tuning(seeds: tuple[int, ...] = RIPPLE_TUNING_SEEDS) -> tuple[Tuning, Tuning]:
    """E-Adam over :data:`RIPPLE_ALPHAS` (momentum 0.95) and Adam over :data:`RIPPLE_BETA2S`,
    the same number of settings each, scored by the final loss on held-out starts."""
    e = grid_search("E-Adam (alpha)", lambda seed, alpha: _ripple_score(alpha, 0.95, seed),
                    {"alpha": RIPPLE_ALPHAS}, seeds)
    a = grid_search("Adam (momentum)", lambda seed, beta2: _ripple_score(0.0, beta2, seed),
                    {"beta2": RIPPLE_BETA2S}, seeds)
    return e, a


def ripple_first_minima(k: int = 2) -> np.ndarray:
    """The first ``k`` local minima of the ripple function beyond x = 2 (grid of step 5e-4)."""
    xs = np.linspace(2.0, 30.0, 56001)
    g = ripple_grad(xs)[:, 0]
    return xs[1:][(g[:-1] < 0) & (g[1:] >= 0)][:check_int(k, "k", minimum=1)]


# --------------------------------------------------------------------------- explorers' runs

#: The alpha grid of the explorers (negative explores, positive exploits); 0 is the base method.
ALPHA_GRID = (-95.0, -80.0, -60.0, -40.0, -20.0, -5.0, 0.0, 1.0)
BETA1_GRID = (0.9, 0.95, 0.99)
LR_SCALES = (0.3, 1.0, 3.0)
#: Base optimizers of the explorers: (numpy base, momentum beta2, beta3, eps, label of alpha = 0).
EXPLORER_BASES = {"Adam": ("adam", 0.95, 0.999, 1e-8), "SGD-M": ("sgd", 0.9, 0.999, 1e-8)}


@lru_cache(maxsize=64)
def grid_paths(landscape: str = "ripple", beta1: float = 0.99, lr_scale: float = 1.0,
               base: str = "Adam") -> dict:
    """Iterates of the base method and its E version for every admissible alpha of
    :data:`ALPHA_GRID`, computed in one batched run (one row per alpha). A row that leaves the
    domain or overflows is NaN from there on. Returns alphas (admissible), paths
    (alphas x steps+1 x d) and f values (alphas x steps+1). SGD-M runs use a 10x smaller lr."""
    check_choice(landscape, "landscape", tuple(LANDSCAPES))
    check_choice(base, "base", tuple(EXPLORER_BASES))
    ls = LANDSCAPES[landscape]
    kind, beta2, beta3, eps = EXPLORER_BASES[base]
    alphas = np.array([a for a in ALPHA_GRID if abs(a) * (1.0 - beta1) < 1.0 - 1e-12])
    lr = ls.lr * check_positive(lr_scale, "lr_scale") * (0.1 if kind == "sgd" else 1.0)
    st = ValleyStepper(base=kind, alpha=alphas, beta1=beta1, lr=lr, beta2=beta2, beta3=beta3, eps=eps)
    x = np.tile(np.asarray(ls.x0, dtype=float), (alphas.size, 1))
    paths = np.full((alphas.size, ls.steps + 1, x.shape[1]), np.nan)
    paths[:, 0] = x
    alive = np.ones(alphas.size, dtype=bool)
    with np.errstate(all="ignore"):
        for k in range(1, ls.steps + 1):
            x = st.step(x, np.nan_to_num(ls.jac(x)))
            ok = np.all(np.isfinite(x), axis=1) & (np.abs(x).max(axis=1) < 1e3)
            if ls.domain is not None:
                ok &= ls.domain(np.nan_to_num(x, nan=-1.0))
            alive &= ok
            paths[alive, k] = x[alive]
        fvals = np.where(np.isnan(paths[..., 0]), np.nan,
                         ls.fun(np.nan_to_num(paths, nan=1.0).reshape(-1, x.shape[1])).reshape(paths.shape[:2]))
    return dict(alphas=alphas, paths=paths, f=fvals, lr=lr)


def _check_grid_alpha(alpha: float) -> None:
    if alpha not in ALPHA_GRID:
        raise ValueError(f"alpha must be one of the explorer's grid {ALPHA_GRID}, got {alpha!r}")


def _row(run: dict, alpha: float) -> int | None:
    hits = np.flatnonzero(run["alphas"] == alpha)
    return int(hits[0]) if hits.size else None


def valley_traces(landscape: str, alpha: float, beta1: float = 0.99, lr_scale: float = 1.0,
                  base: str = "Adam") -> tuple[list, dict]:
    """The traces of one valley-explorer frame (landscape panel + decomposition bars) and a
    layout note; shared by the static slider figure and the live explorer."""
    _check_grid_alpha(alpha)
    run = grid_paths(landscape, beta1, lr_scale, base)
    ls = LANDSCAPES[landscape]
    names = (base, "E-Adam" if base == "Adam" else "ESGD")
    keep = np.unique(np.linspace(0, run["paths"].shape[1] - 1, 200).astype(int))
    traces = []
    if landscape == "ripple":
        xs = np.linspace(*ls.xlim, 400)
        traces.append(go.Scatter(x=xs, y=ripple(xs), mode="lines", name="f1(x)",
                                 line=dict(color="#888", width=1.5), showlegend=False))
    else:
        gx, gy = np.linspace(*ls.xlim, 45), np.linspace(*ls.ylim, 45)
        X, Y = np.meshgrid(gx, gy)
        Z = ls.fun(np.column_stack([X.ravel(), Y.ravel()])).reshape(X.shape)
        traces.append(go.Contour(x=gx, y=gy, z=np.log10(Z + 1e-3), colorscale="Viridis", ncontours=25,
                                 showscale=False, showlegend=False, opacity=0.85, line=dict(width=0.4)))
    i_alpha = _row(run, alpha)
    admissible = i_alpha is not None
    for j, (i, nm) in enumerate(((_row(run, 0.0), names[0]), (i_alpha, f"{names[1]} (alpha={alpha:g})"))):
        p = run["paths"][i][keep] if i is not None else np.full((1, len(ls.x0)), np.nan)
        if landscape == "ripple":
            fv = run["f"][i][keep] if i is not None else np.full(1, np.nan)
            traces.append(go.Scatter(x=p[:, 0], y=fv, mode="lines+markers", name=nm,
                                     line=dict(color=color_for(j), width=1), marker=dict(size=4)))
        else:
            traces.append(go.Scatter(x=p[:, 0], y=p[:, 1], mode="lines", name=nm,
                                     line=dict(color=color_for(j), width=2.5)))
    c_now, c_old = (1 + alpha * (1 - beta1), -alpha * (1 - beta1))
    traces.append(go.Bar(x=["on g_k", "on old-gradient EMA"], y=[c_now, c_old], xaxis="x2", yaxis="y2",
                         marker_color=["#1f77b4" if c_now > 0 else "#d62728", "#ff7f0e"],
                         showlegend=False, name="weights"))
    ends = ""
    if admissible:
        ends = "; final x: " + ", ".join(f"{nm.split(' ')[0]} {run['paths'][i, -1, 0]:.2f}"
                                        for i, nm in ((_row(run, 0.0), names[0]), (i_alpha, names[1])))
    note = (f"alpha={alpha:g}: admissible, |alpha| < 1/(1-beta1) = {1 / (1 - beta1):.0f}{ends}" if admissible else
            f"alpha={alpha:g} breaks |alpha| < 1/(1-beta1) = {1 / (1 - beta1):.0f}: E run refused")
    return traces, dict(annotations=[dict(x=0, y=-0.2, xref="paper", yref="paper", showarrow=False,
                                          xanchor="left", text=note,
                                          font=dict(color="#333" if admissible else "#d62728"))])


def _valley_layout(fig: go.Figure, landscape: str, beta1: float) -> go.Figure:
    ls = LANDSCAPES[landscape]
    bound = 1 / (1 - beta1)
    fig.update_layout(xaxis=dict(domain=[0, 0.7]), xaxis2=dict(domain=[0.8, 1.0], anchor="y2"),
                      yaxis2=dict(anchor="x2", range=[-1.2, max(2.2, 1.1 * 0.95 * bound * (1 - beta1))],
                                  title_text="weight in g~ (bound: c on g_k > 0)"))
    fig.add_shape(type="line", xref="x2", yref="y2", x0=-0.5, x1=1.5, y0=0, y1=0,
                  line=dict(color="#d62728", width=2))
    if landscape == "ripple":
        fig.update_xaxes(title_text="x", range=list(ls.xlim), selector=dict(anchor="y"))
        fig.update_yaxes(title_text="f1(x_k)", range=[0.1, 0.75], selector=dict(anchor="x"))
    else:
        fig.update_xaxes(title_text="x", range=list(ls.xlim), selector=dict(anchor="y"))
        fig.update_yaxes(title_text="y", range=list(ls.ylim), selector=dict(anchor="x"))
    return fig


def valley_figure(landscape: str = "ripple", alpha: float = -80.0, beta1: float = 0.99,
                  lr_scale: float = 1.0, base: str = "Adam") -> go.Figure:
    """The live valley explorer: paths of the base method and its E version for one alpha, and
    the two weights of g~ = (1 + alpha(1-beta1)) g_k - alpha(1-beta1) gbar_{k-1}."""
    traces, layout = valley_traces(landscape, alpha, beta1, lr_scale, base)
    fig = go.Figure(traces)
    fig.update_layout(**layout)
    base_layout(fig, title=f"{LANDSCAPES[landscape].label}: {base} vs its E version", height=480)
    return _valley_layout(fig, landscape, beta1)


def valley_slider_figure(landscape: str = "ripple", beta1: float = 0.99) -> go.Figure:
    """Static twin of :data:`EXPLORER_VALLEY`: a slider over alpha on one landscape (Adam)."""
    check_choice(landscape, "landscape", tuple(LANDSCAPES))
    steps = []
    for al in ALPHA_GRID:
        traces, layout = valley_traces(landscape, al, beta1)
        steps.append(SliderStep(f"{al:g}", traces, layout))
    fig = slider_figure(steps, slider_label="alpha (negative explores, positive exploits)",
                        active=ALPHA_GRID.index(-80.0), fixed_axes=False,
                        title=f"{LANDSCAPES[landscape].label}: Adam vs E-Adam (beta1 = {beta1:g})", height=500)
    return _valley_layout(fig, landscape, beta1)


def ripple_minima(lo: float = 1.0, hi: float = 12.0) -> np.ndarray:
    """Local minima of the ripple function on [lo, hi], located on a grid of step 5.5e-4
    (where the derivative changes sign from negative to non-negative)."""
    lo = check_positive(lo, "lo")
    if not (isinstance(hi, (int, float)) and math.isfinite(hi) and hi > lo):
        raise ValueError(f"hi must be a finite number above lo = {lo}, got {hi!r}")
    xs = np.linspace(lo, hi, 20001)
    g = ripple_grad(xs)[:, 0]
    return xs[1:][(g[:-1] < 0) & (g[1:] >= 0)]


def phase_traces(alpha: float, beta1: float = 0.99, lr_scale: float = 1.0) -> list:
    """Phase portrait (x_k, x_k - x_{k-1}) on the ripple function: Adam and E-Adam(alpha)."""
    _check_grid_alpha(alpha)
    run = grid_paths("ripple", beta1, lr_scale, "Adam")
    traces = []
    for j, (a, nm) in enumerate(((0.0, "Adam"), (alpha, f"E-Adam (alpha={alpha:g})"))):
        i = _row(run, a)
        x = run["paths"][i, :, 0] if i is not None else np.full(2, np.nan)
        dx = np.diff(x)
        keep = np.unique(np.linspace(0, dx.size - 1, 300).astype(int))
        traces.append(go.Scatter(x=x[1:][keep], y=dx[keep], mode="lines+markers", name=nm,
                                 line=dict(color=color_for(j), width=1), marker=dict(size=4)))
    return traces


def _phase_layout(fig: go.Figure) -> go.Figure:
    for xm in ripple_minima():
        fig.add_vline(x=float(xm), line=dict(color="#999", dash="dot", width=1))
    fig.update_xaxes(range=[1.0, 12.0])
    fig.update_yaxes(range=[-0.06, 0.1])
    return fig


def phase_figure(alpha: float = -80.0, beta1: float = 0.99, lr_scale: float = 1.0) -> go.Figure:
    """The live phase portrait; dotted lines mark the ripple function's local minima."""
    fig = go.Figure(phase_traces(alpha, beta1, lr_scale))
    base_layout(fig, title="Phase portrait on f1: position vs velocity", xaxis_title="position x_k",
                yaxis_title="velocity x_k - x_(k-1)", height=450)
    return _phase_layout(fig)


def phase_slider_figure(beta1: float = 0.99) -> go.Figure:
    """Static twin of :data:`EXPLORER_PHASE`: a slider over alpha."""
    steps = [SliderStep(f"{al:g}", phase_traces(al, beta1)) for al in ALPHA_GRID]
    fig = slider_figure(steps, slider_label="alpha", active=ALPHA_GRID.index(-80.0), fixed_axes=False,
                        title="Phase portrait on f1: position vs velocity", xaxis_title="position x_k",
                        yaxis_title="velocity x_k - x_(k-1)", height=470)
    return _phase_layout(fig)


EXPLORER_VALLEY = Explorer(
    "19", "valley", valley_figure,
    {"landscape": Choice("landscape", list(LANDSCAPES), "ripple"),
     "alpha": Slider("alpha", list(ALPHA_GRID), -80.0),
     "beta1": Slider("beta1 (grad-diff EMA)", list(BETA1_GRID), 0.99),
     "lr_scale": Slider("lr x", list(LR_SCALES), 1.0),
     "base": Choice("base optimizer", list(EXPLORER_BASES), "Adam")},
    description="Base optimizer vs its E version on three landscapes; alpha < 0 explores.")

EXPLORER_PHASE = Explorer(
    "19", "phase", phase_figure,
    {"alpha": Slider("alpha", list(ALPHA_GRID), -80.0),
     "beta1": Slider("beta1 (grad-diff EMA)", list(BETA1_GRID), 0.99),
     "lr_scale": Slider("lr x", list(LR_SCALES), 1.0)},
    description="Phase portrait (x_k, x_k - x_{k-1}) of Adam and E-Adam on the ripple function.")


# --------------------------------------------------------------------------- figures of the claims


def proxy_figure(details: dict) -> go.Figure:
    """Test accuracy of every seed (points) and the median (bar) for Lamb at the small batch, Lamb
    and ALTO at the large batch: the gap between the first two is the precondition, the
    difference between the last two the claim."""
    acc = details["acc"]
    labels = {"Lamb small": f"Lamb, batch {BATCH_SMALL}", "Lamb": f"Lamb, batch {BATCH_LARGE}",
              "ALTO": f"ALTO, batch {BATCH_LARGE}"}
    fig = go.Figure()
    for i, key in enumerate(("Lamb small", "Lamb", "ALTO")):
        fig.add_trace(go.Bar(x=[labels[key]], y=[float(np.median(acc[key]))], name=labels[key],
                             marker_color=color_for(i), opacity=0.45, showlegend=False,
                             hovertemplate="median %{y:.2f}%<extra></extra>"))
        fig.add_trace(go.Scatter(x=[labels[key]] * len(acc[key]), y=acc[key], mode="markers",
                                 marker=dict(color=color_for(i), size=10, line=dict(color="#222", width=1)),
                                 showlegend=False, hovertemplate="one seed: %{y:.2f}%<extra></extra>"))
    lo = min(float(np.min(v)) for v in acc.values())
    hi = max(float(np.max(v)) for v in acc.values())
    base_layout(fig, title=f"Test accuracy after {EPOCHS} epochs (bars: median; points: seeds)",
                yaxis_title="test accuracy (%)", height=420)
    fig.update_yaxes(range=[lo - 1.0, hi + 0.5])
    return fig


def watch_numbers(runs: dict[str, Result]) -> dict[str, float]:
    """The numbers the "Watch it run" prose quotes: where Adam, E-Adam and the exploiting E-Adam
    end, when E-Adam leaves the first ripple, and how many ripples further than Adam it settles
    (local minima beyond Adam's, up to and including E-Adam's own)."""
    adam, e = runs["Adam"], runs["E-Adam"]
    xa = float(adam.iterates.max())
    escape = int(np.argmax(e.iterates[:, 0] > xa))
    minima = ripple_minima(1.0, 12.0)
    return {"x_adam": float(adam.x[0]), "f_adam": float(adam.fun), "x_e": float(e.x[0]), "f_e": float(e.fun),
            "x_exploit": float(runs["E-Adam exploit"].x[0]), "escape_step": float(escape),
            "ripples_passed": float(np.sum((minima > adam.x[0] + 0.1) & (minima < e.x[0] + 0.1)))}


def explorer_numbers() -> dict[str, float]:
    """The numbers the explorers' prose quotes (read off the cached explorer runs)."""
    def end(lr_scale: float, alpha: float) -> float:
        run = grid_paths("ripple", 0.99, lr_scale, "Adam")
        return float(run["paths"][_row(run, alpha), -1, 0])

    return {"x95": end(1.0, -95.0), "x80_lr3": end(3.0, -80.0), "x0_lr3": end(3.0, 0.0),
            "x80_lr03": end(0.3, -80.0), "x0_lr03": end(0.3, 0.0)}


# --------------------------------------------------------------------------- claims


@lru_cache(maxsize=8)
def large_batch_experiment(fast: bool = False, control: bool = False) -> dict:
    """The headline's runs: both methods tuned at the large batch, then measured on the claim's
    seeds, and Lamb at the small batch for the precondition. ``control``: ALTO with alpha = 0.
    ``fast``: no tuning (the middle of the grid), 2 seeds, 1 small-batch seed."""
    seeds = PROXY_FAST_SEEDS if fast else PROXY_SEEDS
    small_seeds = SMALL_SEEDS[:1] if fast else SMALL_SEEDS
    if fast:
        tunings = None
        lr = {m: LR_GRID[1] for m in PROXY_METHODS}
    else:
        tunings = tuple(proxy_tuning(m) for m in PROXY_METHODS)
        lr = {m: t.best["lr"] for m, t in zip(PROXY_METHODS, tunings)}
    lr_small = small_batch_lr(lr["Lamb"])
    alto_alpha = 0.0 if control else None
    acc = {"Lamb": np.array([train_proxy("Lamb", BATCH_LARGE, s, lr["Lamb"])["test_acc"] for s in seeds]),
           "ALTO": np.array([train_proxy("ALTO", BATCH_LARGE, s, lr["ALTO"], alpha=alto_alpha)["test_acc"]
                             for s in seeds]),
           "Lamb small": np.array([train_proxy("Lamb", BATCH_SMALL, s, lr_small)["test_acc"] for s in small_seeds])}
    return dict(seeds=seeds, small_seeds=small_seeds, acc=acc, lr=lr, lr_small=lr_small, tunings=tunings)


@claim("19", "ALTO recovers at least half of Lamb's large-batch accuracy gap on a small MLP proxy",
       kind="reproduction",
       paper="ALTO raises large-batch test accuracy over Lamb by 2.5 points on average (e.g. ResNet-20 on "
             "CIFAR-100 at batch 16384: 56.06 -> 57.78; VGG-16 on CIFAR-100 at batch 50K: 39.91 -> 49.69)",
       expect=f"teacher-MLP proxy, {EPOCHS} epochs of 16384 samples at batch {BATCH_LARGE} ({EPOCHS * 4} steps, "
              f"3x ALTO's 100-step memory): median over 5 seeds of the paired gain test acc(ALTO) - acc(Lamb) "
              f">= 0.5 x the large-batch gap (median test acc of Lamb at batch {BATCH_SMALL}, seeds 0-2, minus "
              f"Lamb's at batch {BATCH_LARGE}); both methods' lr tuned over {{0.01, 0.03, 0.1}} by validation accuracy on "
              f"held-out seeds 100-101, Lamb at batch {BATCH_SMALL} at its tuned lr x sqrt({BATCH_SMALL}/{BATCH_LARGE}) "
              f"(Lamb's square-root rule; untuned, so the gap is if anything underestimated); ALTO at the paper's large-batch (alpha, beta1) = (-5, 0.99). "
              f"Half the measured gap stands in for the paper's +2.5 points (a number of points does not "
              f"transfer between tasks). "
              f"Precondition: the gap is at least 1 point",
       control="ALTO with alpha = 0 (the adaptor removed: Lamb at ALTO's tuned step)",
       reproduces=False,
       diagnosis="(1) the proxy shows the phenomenon: at equal epochs Lamb at batch 4096 ends about 1.7 points "
                 "below Lamb at batch 512 at the square-root-rule step (2.4 in a first full run that also tuned "
                 "the small batch; precondition measured in every run, threshold 1 point); (2) ALTO runs "
                 "at the paper's large-batch setting (alpha, beta1) = (-5, 0.99), betas (0.9, 0.99), decay 1e-4, "
                 "its learning rate tuned on the same grid and held-out seeds as Lamb's, and the run (300 steps) "
                 "is three times the adaptor's 100-step memory; a weakness of this check: beta1 was not tuned (the paper tunes it per "
                 "task) and the learning-rate grid has only 3 points, so the verdict holds for the paper's default setting, "
                 "not for a tuned ALTO; (3) with alpha = 0 ALTO equals Lamb bit for bit "
                 "(tests and the chapter's identity claim); (4) the control (alpha = 0) gains exactly 0 and fails "
                 "the criterion; being the identity ALTO(alpha = 0) = Lamb, it checks the harness rather than the "
                 "proxy (the 'ingredient removed' control of DESIGN 3). ALTO instead loses accuracy: median paired gain about -1.6 points, from -4.6 to "
                 "+2.0 over 5 seeds. A first registration (batch 4096, 80 steps, no large-batch gap) was "
                 "declared 'does not reproduce' without a gap to close; it was withdrawn and this proxy built",
       name="large_batch_proxy")
def claim_large_batch(fast: bool = False, control: bool = False) -> Measured:
    run = large_batch_experiment(fast, control)
    acc, seeds = run["acc"], run["seeds"]
    gain = acc["ALTO"] - acc["Lamb"]
    gap = float(np.median(acc["Lamb small"]) - np.median(acc["Lamb"]))
    med_gain = float(np.median(gain))
    values = {"Lamb_pct": float(np.median(acc["Lamb"])), "ALTO_pct": float(np.median(acc["ALTO"])),
              "Lamb_small_pct": float(np.median(acc["Lamb small"])), "gap_pts": gap,
              "gain_pts": med_gain, "gain_min": float(gain.min()), "gain_max": float(gain.max()),
              "recovered": med_gain / gap if gap > 0 else (np.inf if med_gain > 0 else -np.inf),
              "lr_Lamb": run["lr"]["Lamb"], "lr_ALTO": run["lr"]["ALTO"], "lr_Lamb_small": run["lr_small"],
              "steps_large": float(EPOCHS * (PROXY_DATA["n_train"] // BATCH_LARGE))}
    what = "control (alpha = 0): " if control else ""
    return Measured(values, criteria=[Criterion("recovered", ">=", 0.5)], seeds=seeds,
                    precondition=bool(gap >= 1.0), details=run,
                    summary=f"{what}ALTO - Lamb = {med_gain:+.2f} points (median of {len(seeds)} seeds; "
                            f"{gain.min():+.2f} to {gain.max():+.2f}); large-batch gap {gap:.2f} points")


@claim("19", "On the ripple valley, E-Adam tuned over alpha ends lower than Adam tuned over its momentum",
       kind="reproduction",
       paper="the E-adapted optimizer keeps exploring along the valley after reaching a local minimum and finds "
             "lower minima than its base optimizer (Fig. 8, the 1-D test function f1; no number)",
       expect="median over 5 random starts (x0 uniform on [2, 2.6], seeds 0-4) of final f1(E-Adam) / final "
              "f1(Adam) <= 0.9 after 3000 steps at lr 0.03 (the card's threshold), each method tuned over 9 "
              "settings on held-out starts 100-104: E-Adam over alpha in {-20, ..., -99.5} (beta1 = 0.99, "
              "momentum 0.95; the bound is 100), Adam over its momentum beta2 in {0.95, ..., 0.99999}. Precondition: Adam at the "
              "card's momentum 0.95 stalls in the first ripple",
       control="E-Adam with alpha = 0 (the adaptor removed: Adam at momentum 0.95)",
       name="ripple_exploration")
def claim_ripple(fast: bool = False, control: bool = False) -> Measured:
    seeds = RIPPLE_FAST_SEEDS if fast else RIPPLE_SEEDS
    te, ta = ripple_tuning(RIPPLE_TUNING_SEEDS[:2] if fast else RIPPLE_TUNING_SEEDS)
    alpha = 0.0 if control else te.best["alpha"]
    e = ripple_finals(alpha, 0.95, seeds)
    a = ripple_finals(0.0, ta.best["beta2"], seeds)
    plain = ripple_finals(0.0, 0.95, seeds)
    card_e, card_a = ripple_finals(-80.0, 0.95, seeds), ripple_finals(0.0, 0.995, seeds)
    ratio = e["f"] / a["f"]
    first, second = ripple_first_minima(2)
    values = {"f_ratio": float(np.median(ratio)), "f_ratio_min": float(np.min(ratio)),
              "f_ratio_max": float(np.max(ratio)), "alpha_best": te.best["alpha"], "beta2_best": ta.best["beta2"],
              "f_EAdam": float(np.median(e["f"])), "f_Adam": float(np.median(a["f"])),
              "x_EAdam": float(np.median(e["x"])), "x_Adam": float(np.median(a["x"])),
              "x_plain_Adam_far": float(np.max(plain["far"])), "first_minimum": float(first),
              "card_f_EAdam80": float(np.median(card_e["f"])), "card_f_Adam995": float(np.median(card_a["f"])),
              "card_max_abs_dx": float(np.max(np.abs(card_e["x"] - card_a["x"]))),
              "alpha_on_edge": te.on_edge(), "beta2_on_edge": ta.on_edge()}
    what = "control (alpha = 0): " if control else ""
    return Measured(values, criteria=[Criterion("f_ratio", "<=", 0.9)], seeds=seeds,
                    precondition=bool(values["x_plain_Adam_far"] < second), details=dict(tunings=(te, ta)),
                    summary=f"{what}final f1 ratio {np.median(ratio):.2f} ({np.min(ratio):.2f}-{np.max(ratio):.2f}); "
                            f"E-Adam alpha={alpha:g} ends at x = {np.median(e['x']):.1f}, Adam momentum "
                            f"{ta.best['beta2']:g} at x = {np.median(a['x']):.1f}")


@claim("19", "The E adaptor is a blend of the current gradient and an EMA of past gradients", kind="identity",
       expect="on 3 random gradient sequences (T = 60, d = 5), g~_k = (1 + alpha(1-beta1)) g_k - alpha(1-beta1) "
              "gbar_{k-1} to 1e-12, and the torch ALTO / EAdam / ESGD with alpha = 0 equal Lamb / Adam / SGD bit "
              "for bit over 30 steps",
       name="blend_identity")
def claim_blend_identity(fast: bool = False) -> Measured:
    err = 0.0
    for seed, (alpha, beta1) in enumerate(((-80.0, 0.99), (-5.0, 0.9), (0.5, 0.01))):
        G = np.random.default_rng(seed).standard_normal((60, 5))
        Gt, _ = e_sequence(G, alpha, beta1)
        gbar = np.zeros_like(G)  # gbar[k] = EMA of g_1..g_{k-1} (row k holds gbar_{k-1})
        for k in range(1, 60):
            gbar[k] = beta1 * gbar[k - 1] + (1 - beta1) * G[k - 1]
        c = alpha * (1 - beta1)
        err = max(err, float(np.abs(Gt - ((1 + c) * G - c * gbar)).max()))
    mismatches = _alpha_zero_mismatches()
    return Measured({"max_abs_error": err, "alpha0_mismatches": float(mismatches)},
                    criteria=[Criterion("max_abs_error", "<=", 1e-12), Criterion("alpha0_mismatches", "<=", 0)],
                    summary=f"identity error {err:.1e}; alpha = 0 differs from its base in {mismatches} of 3 pairs")


def _alpha_zero_mismatches() -> int:
    G = np.random.default_rng(7).standard_normal((30, 4))
    pairs = [(lambda p: ALTO(p, lr=0.01, alpha=0.0), lambda p: Lamb(p, lr=0.01)),
             (lambda p: EAdam(p, lr=0.01, alpha=0.0), lambda p: torch.optim.Adam(p, lr=0.01, betas=(0.9, 0.99), eps=1e-6)),
             (lambda p: ESGD(p, lr=0.01, alpha=0.0), lambda p: torch.optim.SGD(p, lr=0.01, momentum=0.9))]
    bad = 0
    for make_e, make_b in pairs:
        out = []
        for make in (make_e, make_b):
            p = torch.nn.Parameter(torch.ones(4, dtype=torch.float64))
            opt = make([p])
            for g in G:
                p.grad = torch.tensor(g)
                opt.step()
            out.append(p.detach().clone())
        bad += int(not torch.equal(*out))
    return bad
