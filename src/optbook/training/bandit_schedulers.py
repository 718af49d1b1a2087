"""Chapter 20 · MAT-Agent: multi-agent non-stationary bandits that steer training.

Zhang, Cai, Fan, Liu & Wang (NeurIPS 2025) give each training component (data augmentation,
optimiser, learning-rate schedule, loss) its own agent. At every decision step (here: each epoch)
each agent picks an option from its menu; all agents receive the same composite reward (accuracy,
rare-class recognition, stability), smoothed by a dual-rate exponential moving average. Each agent
is a non-stationary multi-armed bandit mixing epsilon-greedy with an upper-confidence bound.

What is here:

* the bandit core lives in :mod:`optbook.core.bandits` (shared with the bandit chapters) and
  is re-exported here: :class:`UCB1`, :class:`EpsilonGreedy`, :class:`DiscountedUCB` (with the
  paper's optional epsilon layer), :class:`SlidingWindowUCB`, :func:`simulate_bandit`;
* the training pieces: menus of augmentations, losses, optimisers and schedules, the
  multi-label metrics (mAP, rare-class F1), the composite reward and :class:`DualEMA`;
* :func:`train_proxy`, the end-to-end proxy (a torch MLP on synthetic multi-label tabular data
  with power-law label frequencies), with the agents or a baseline choosing every epoch;
* two claims and two live explorers.

The paper's NeurIPS abstract (bandit agents) is followed; the arXiv text describes DQN agents
instead. The exact reward and smoothing formulas were not available: they are reconstructions,
flagged as such in the docstrings.
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from itertools import product
from typing import Any

import numpy as np
import plotly.graph_objects as go
import torch
from plotly.subplots import make_subplots

from ..claims import Measured, claim
from ..core import Trace, as_rng, check_in_range, check_int, check_positive, check_real
from ..core.bandits import (  # the shared bandit core; re-exported as the chapter's names
    BanditPolicy,
    DiscountedUCB,
    EpsilonGreedy,
    FixedPolicy,
    RandomPolicy,
    SlidingWindowUCB,  # noqa: F401  (re-exported)
    UCB1,
    make_policy,
    piecewise_means,
    simulate_bandit,
)
from ..core.validate import RngLike
from ..viz import SliderStep, base_layout, color_for, slider_figure
from ..core.threads import one_torch_thread
from ..widgets import Explorer, Slider, Toggle

# ============================================================= training components (the menus)

AUGMENTATIONS = ("none", "noise", "mixup", "dropout")
OPTIMIZERS = ("SGD-m", "Adam", "AdamW")
SCHEDULES = ("constant", "cosine", "step", "one-cycle")
LOSSES = ("BCE", "focal", "CB-BCE", "ASL")
MENUS: dict[str, tuple[str, ...]] = {"aug": AUGMENTATIONS, "opt": OPTIMIZERS, "lrs": SCHEDULES, "loss": LOSSES}
#: The static default configuration of the card: AdamW + cosine + BCE + no augmentation.
DEFAULT_CONFIG = {"aug": "none", "opt": "AdamW", "lrs": "cosine", "loss": "BCE"}
BASE_LR = {"SGD-m": 0.1, "Adam": 1e-2, "AdamW": 1e-2}


def schedule_multiplier(kind: str, frac: float, *, peak: float = 0.3) -> float:
    """Learning-rate multiplier of a schedule at training fraction ``frac`` in [0, 1].

    constant: 1; cosine: (1 + cos(pi f)) / 2 (1 -> 0); step: 1, then 0.1 from f = 1/2 and 0.01
    from f = 3/4; one-cycle: linear warm-up from 1/25 to 1 at ``f = peak``, then cosine down to
    1e-4 at f = 1.
    """
    if kind not in SCHEDULES:
        raise ValueError(f"kind must be one of {SCHEDULES}, got {kind!r}")
    f = check_in_range(frac, "frac", 0.0, 1.0, closed=(True, True))
    peak = check_in_range(peak, "peak", 0.0, 1.0)
    if kind == "constant":
        return 1.0
    if kind == "cosine":
        return 0.5 * (1.0 + math.cos(math.pi * f))
    if kind == "step":
        return 1.0 if f < 0.5 else (0.1 if f < 0.75 else 0.01)
    if f <= peak:
        return 1.0 / 25 + (1.0 - 1.0 / 25) * f / peak
    return 1e-4 + (1.0 - 1e-4) * 0.5 * (1.0 + math.cos(math.pi * (f - peak) / (1.0 - peak)))


def class_balanced_weights(counts: Any, beta: float = 0.999) -> np.ndarray:
    """Class-balanced weights of Cui et al. (2019): w_l proportional to (1 - beta) / (1 - beta^n_l),
    normalised so that they sum to the number of labels L."""
    n = np.asarray(counts, dtype=float)
    if n.ndim != 1 or n.size == 0 or not np.isfinite(n).all() or (n < 0).any():
        raise ValueError("counts must be a non-empty 1-D array of non-negative finite numbers")
    beta = check_in_range(beta, "beta", 0.0, 1.0)
    w = (1.0 - beta) / (1.0 - beta ** np.maximum(n, 1.0))
    return w * n.size / w.sum()


def multilabel_loss(kind: str, logits: torch.Tensor, targets: torch.Tensor, *,
                    class_weights: torch.Tensor | None = None, focal_gamma: float = 2.0,
                    asl_gamma_neg: float = 4.0, asl_clip: float = 0.05,
                    reduction: str = "mean") -> torch.Tensor:
    """The LOSS agent's menu: "BCE", "focal" (Lin et al. 2017, ``focal_gamma``), "CB-BCE" (BCE with
    :func:`class_balanced_weights` per label) and "ASL" (asymmetric loss of Ridnik et al. 2021:
    gamma+ = 0, gamma- = ``asl_gamma_neg``, probability shift ``asl_clip`` on negatives).

    ``targets`` may be soft (mixup); ``reduction`` is "mean" or "none" (per sample)."""
    if kind not in LOSSES:
        raise ValueError(f"kind must be one of {LOSSES}, got {kind!r}")
    if logits.shape != targets.shape or logits.ndim != 2:
        raise ValueError(f"logits and targets must be 2-D of one shape, got {tuple(logits.shape)}, {tuple(targets.shape)}")
    if reduction not in ("mean", "none"):
        raise ValueError(f"reduction must be 'mean' or 'none', got {reduction!r}")
    check_positive(focal_gamma, "focal_gamma", allow_zero=True)
    bce = torch.nn.functional.binary_cross_entropy_with_logits(logits, targets, reduction="none")
    if kind == "BCE":
        per = bce
    elif kind == "CB-BCE":
        if class_weights is None or class_weights.shape != (logits.shape[1],):
            raise ValueError("class_weights must have one entry per label for CB-BCE")
        per = bce * class_weights
    elif kind == "focal":
        p = torch.sigmoid(logits)
        p_t = p * targets + (1 - p) * (1 - targets)
        per = (1 - p_t) ** focal_gamma * bce
    else:
        p = torch.sigmoid(logits)
        p_neg = torch.clamp(p - asl_clip, min=0.0)
        log_p = torch.nn.functional.logsigmoid(logits)
        log_1mp_shift = torch.log(torch.clamp(1 - p_neg, min=1e-8))
        per = -(targets * log_p + (1 - targets) * p_neg ** asl_gamma_neg * log_1mp_shift)
    per_sample = per.sum(dim=1) / per.shape[1]
    return per_sample.mean() if reduction == "mean" else per_sample


def augment(kind: str, x: torch.Tensor, y: torch.Tensor, rng: RngLike = None, *,
            noise_sd: float = 0.3, drop_p: float = 0.2,
            mixup_alpha: float = 0.4) -> tuple[torch.Tensor, torch.Tensor]:
    """The AUG agent's menu on tabular features: "none"; "noise" (Gaussian, sd ``noise_sd`` on
    standardised features); "mixup" (Zhang et al. 2018: lambda ~ Beta(alpha, alpha), pairs from a
    random permutation, soft targets in [0, 1]); "dropout" (random feature dropout with rate
    ``drop_p``, inverted scaling so the mean is kept)."""
    if kind not in AUGMENTATIONS:
        raise ValueError(f"kind must be one of {AUGMENTATIONS}, got {kind!r}")
    if x.ndim != 2 or y.ndim != 2 or x.shape[0] != y.shape[0]:
        raise ValueError(f"x and y must be 2-D with one row per sample, got {tuple(x.shape)}, {tuple(y.shape)}")
    check_positive(noise_sd, "noise_sd", allow_zero=True)
    check_in_range(drop_p, "drop_p", 0.0, 1.0, closed=(True, False))
    check_positive(mixup_alpha, "mixup_alpha")
    gen = as_rng(rng)
    if kind == "none":
        return x, y
    if kind == "noise":
        return x + torch.as_tensor(noise_sd * gen.standard_normal(tuple(x.shape)), dtype=x.dtype), y
    if kind == "dropout":
        keep = torch.as_tensor(gen.random(tuple(x.shape)) >= drop_p, dtype=x.dtype)
        return x * keep / (1.0 - drop_p), y
    lam = float(gen.beta(mixup_alpha, mixup_alpha))
    perm = torch.as_tensor(gen.permutation(x.shape[0]))
    return lam * x + (1 - lam) * x[perm], lam * y + (1 - lam) * y[perm]


# ====================================================================== multi-label metrics


def _check_labels_scores(y_true: Any, scores: Any) -> tuple[np.ndarray, np.ndarray]:
    y = np.asarray(y_true, dtype=float)
    s = np.asarray(scores, dtype=float)
    if y.ndim == 1:
        y, s = y[:, None], s[:, None] if s.ndim == 1 else s
    if y.ndim != 2 or y.shape != s.shape or y.size == 0:
        raise ValueError(f"y_true and scores must be arrays of one shape (n,) or (n, L), got {y.shape}, {s.shape}")
    if not (np.isfinite(y).all() and np.isfinite(s).all()):
        raise ValueError("y_true and scores must be finite")
    if not np.isin(y, (0.0, 1.0)).all():
        raise ValueError("y_true must hold 0/1 labels")
    return y, s


def average_precision(y_true: Any, scores: Any) -> np.ndarray:
    """Average precision of each label (column): sum over distinct score thresholds of
    (R_k - R_{k-1}) P_k, the definition of ``sklearn.metrics.average_precision_score``.
    NaN for a label with no positive example."""
    y, s = _check_labels_scores(y_true, scores)
    out = np.full(y.shape[1], np.nan)
    for j in range(y.shape[1]):
        n_pos = y[:, j].sum()
        if n_pos == 0:
            continue
        order = np.argsort(-s[:, j], kind="mergesort")
        ys, ss = y[order, j], s[order, j]
        last = np.r_[np.flatnonzero(np.diff(ss) != 0), ys.size - 1]  # end of each tie group
        tp = np.cumsum(ys)[last]
        precision = tp / (last + 1)
        recall = tp / n_pos
        out[j] = float(np.sum(np.diff(np.r_[0.0, recall]) * precision))
    return out


def mean_average_precision(y_true: Any, scores: Any) -> float:
    """mAP: the mean of :func:`average_precision` over labels with at least one positive."""
    ap = average_precision(y_true, scores)
    if np.isnan(ap).all():
        raise ValueError("y_true has no positive label at all")
    return float(np.nanmean(ap))


def f1_per_label(y_true: Any, probs: Any, threshold: float = 0.5) -> np.ndarray:
    """F1 of each label with predictions ``probs >= threshold``; 0 where it is 0/0."""
    y, p = _check_labels_scores(y_true, probs)
    check_in_range(threshold, "threshold", 0.0, 1.0)
    pred = p >= threshold
    tp = (pred & (y == 1)).sum(0)
    fp = (pred & (y == 0)).sum(0)
    fn = (~pred & (y == 1)).sum(0)
    den = 2 * tp + fp + fn
    return np.where(den > 0, 2 * tp / np.maximum(den, 1), 0.0)


def rare_labels(train_counts: Any, fraction: float = 0.3) -> np.ndarray:
    """Indices of the least frequent ``ceil(fraction L)`` labels (the card's "rare classes")."""
    n = np.asarray(train_counts, dtype=float)
    if n.ndim != 1 or n.size == 0 or not np.isfinite(n).all():
        raise ValueError("train_counts must be a non-empty finite 1-D array")
    fraction = check_in_range(fraction, "fraction", 0.0, 1.0, closed=(False, True))
    k = max(1, math.ceil(fraction * n.size - 1e-9))
    return np.sort(np.argsort(n, kind="mergesort")[:k])


# ============================================================================ synthetic data


@dataclass
class MultiLabelData:
    """Train / validation / test splits of a multi-label problem (features standardised)."""

    X_train: np.ndarray
    Y_train: np.ndarray
    X_val: np.ndarray
    Y_val: np.ndarray
    X_test: np.ndarray
    Y_test: np.ndarray
    prevalence: np.ndarray = field(repr=False)

    @property
    def n_labels(self) -> int:
        return self.Y_train.shape[1]

    @property
    def rare(self) -> np.ndarray:
        return rare_labels(self.Y_train.sum(0))


def make_multilabel(n_train: int = 4000, n_val: int = 1000, n_test: int = 1000, n_features: int = 50,
                    n_labels: int = 12, max_prevalence: float = 0.4, min_prevalence: float = 0.015,
                    n_active: int = 5, noise: float = 0.7, rng: RngLike = None) -> MultiLabelData:
    """Synthetic multi-label tabular data with power-law label frequencies (Yeast/Mediamill proxy).

    Label l is on when a sparse linear score ``x . w_l + noise`` exceeds the quantile that gives it
    prevalence ``p_l = max_prevalence (l + 1)^(-a)``, with ``a`` chosen so that the last label has
    ``min_prevalence``. ``noise`` is the noise sd relative to the signal sd.
    """
    n_train = check_int(n_train, "n_train", minimum=10)
    n_val = check_int(n_val, "n_val", minimum=10)
    n_test = check_int(n_test, "n_test", minimum=10)
    d = check_int(n_features, "n_features", minimum=1)
    L = check_int(n_labels, "n_labels", minimum=2)
    p_max = check_in_range(max_prevalence, "max_prevalence", 0.0, 1.0)
    p_min = check_in_range(min_prevalence, "min_prevalence", 0.0, p_max)
    k = check_int(n_active, "n_active", minimum=1)
    if k > d:
        raise ValueError(f"n_active must be <= n_features={d}, got {k}")
    noise = check_positive(noise, "noise", allow_zero=True)
    gen = as_rng(rng)
    a = math.log(p_max / p_min) / math.log(L)
    prev = p_max * np.arange(1, L + 1) ** (-a)
    n = n_train + n_val + n_test
    X = gen.standard_normal((n, d))
    W = np.zeros((d, L))
    for j in range(L):
        W[gen.choice(d, size=k, replace=False), j] = gen.standard_normal(k)
    W /= np.linalg.norm(W, axis=0)
    Z = X @ W + noise * gen.standard_normal((n, L))
    thresholds = np.array([np.quantile(Z[:, j], 1 - prev[j]) for j in range(L)])
    Y = (Z >= thresholds).astype(float)
    cut = np.cumsum([n_train, n_val])
    Xs, Ys = np.split(X, cut), np.split(Y, cut)
    return MultiLabelData(Xs[0], Ys[0], Xs[1], Ys[1], Xs[2], Ys[2], prev)


# ======================================================================== reward and smoothing


def composite_reward(d_map: float, d_rare_f1: float, loss_cv: float,
                     weights: Sequence[float] = (1.0, 0.5, 0.2)) -> float:
    """The "hierarchical composite reward" (our reconstruction):
    ``r = w_acc dmAP + w_rare dF1_rare - w_stab CV(minibatch losses)``."""
    w = np.asarray(weights, dtype=float)
    if w.shape != (3,) or not np.isfinite(w).all() or (w < 0).any():
        raise ValueError(f"weights must be three non-negative finite numbers, got {weights!r}")
    vals = [check_real(v, n) for v, n in ((d_map, "d_map"), (d_rare_f1, "d_rare_f1"), (loss_cv, "loss_cv"))]
    if vals[2] < 0:
        raise ValueError(f"loss_cv must be >= 0, got {vals[2]}")
    return float(w[0] * vals[0] + w[1] * vals[1] - w[2] * vals[2])


class DualEMA:
    """Dual-rate EMA smoothing of the reward (the abstract names it; the formula is ours):
    a fast EMA (rate ``a_fast``) and a slow one (``a_slow``), both started at the first reward; the
    agents receive their average divided by the running sd of the raw rewards (so that the UCB
    constant ``c`` is in units of reward noise), or the raw reward when ``enabled`` is False."""

    def __init__(self, a_fast: float = 0.5, a_slow: float = 0.1, *, enabled: bool = True,
                 normalise: bool = True) -> None:
        self.a_fast = check_in_range(a_fast, "a_fast", 0.0, 1.0, closed=(False, True))
        self.a_slow = check_in_range(a_slow, "a_slow", 0.0, 1.0, closed=(False, True))
        self.enabled = bool(enabled)
        self.normalise = bool(normalise)
        self.fast = self.slow = None
        self._n, self._mean, self._m2 = 0, 0.0, 0.0

    def scale(self) -> float:
        """Running sd of the raw rewards (1 until two have been seen or when it is 0)."""
        if self._n < 2:
            return 1.0
        sd = math.sqrt(self._m2 / (self._n - 1))
        return sd if sd > 0 else 1.0

    def update(self, r: float) -> float:
        """Feed one raw reward, return what the agents receive."""
        r = check_real(r, "reward")
        self._n += 1
        delta = r - self._mean
        self._mean += delta / self._n
        self._m2 += delta * (r - self._mean)
        if self.fast is None:
            self.fast = self.slow = r
        else:
            self.fast += self.a_fast * (r - self.fast)
            self.slow += self.a_slow * (r - self.slow)
        out = 0.5 * (self.fast + self.slow) if self.enabled else r
        return out / self.scale() if self.normalise else out


# ============================================================================ the training loop

AGENT_KEYS = ("aug", "opt", "lrs", "loss")
POLICIES = ("mat", "static", "random", "ucb1", "eps-greedy", "joint")


def all_configs() -> list[dict[str, str]]:
    """Every configuration of the four menus (the grid search's 4 x 3 x 4 x 4 = 192)."""
    return [dict(zip(AGENT_KEYS, combo)) for combo in product(*(MENUS[k] for k in AGENT_KEYS))]


def _make_optimizer(name: str, params) -> torch.optim.Optimizer:
    if name == "SGD-m":
        return torch.optim.SGD(params, lr=BASE_LR[name], momentum=0.9)
    if name == "Adam":
        return torch.optim.Adam(params, lr=BASE_LR[name])
    return torch.optim.AdamW(params, lr=BASE_LR[name], weight_decay=1e-2)


def _mlp(d: int, hidden: int, L: int, seed: int) -> torch.nn.Sequential:
    gen = torch.Generator().manual_seed(seed)
    net = torch.nn.Sequential(torch.nn.Linear(d, hidden), torch.nn.ReLU(), torch.nn.Linear(hidden, L))
    with torch.no_grad():
        for layer in (net[0], net[2]):
            bound = 1.0 / math.sqrt(layer.in_features)
            layer.weight.copy_(torch.rand(layer.weight.shape, generator=gen) * 2 * bound - bound)
            layer.bias.copy_(torch.rand(layer.bias.shape, generator=gen) * 2 * bound - bound)
    return net


def _evaluate(net: torch.nn.Module, X: torch.Tensor, Y: np.ndarray, rare: np.ndarray) -> tuple[float, float]:
    with torch.no_grad():
        p = torch.sigmoid(net(X)).numpy().astype(float)
    return mean_average_precision(Y, p), float(f1_per_label(Y, p)[rare].mean())


def _agents(policy: str, config: dict[str, str] | None, gen: np.random.Generator, *, gamma: float, c: float,
            eps0: float, rho: float, eps_min: float) -> dict[str, BanditPolicy]:
    out = {}
    for k in AGENT_KEYS:
        n = len(MENUS[k])
        sub = np.random.default_rng(gen.integers(2**63))
        if policy == "mat":
            out[k] = DiscountedUCB(n, gamma=gamma, c=c, eps0=eps0, rho=rho, eps_min=eps_min, rng=sub)
        elif policy == "ucb1":
            out[k] = UCB1(n, c=c, rng=sub)
        elif policy == "eps-greedy":
            out[k] = EpsilonGreedy(n, eps=eps0, decay=rho, eps_min=eps_min, rng=sub)
        elif policy == "random":
            out[k] = RandomPolicy(n, rng=sub)
        elif policy == "static":
            out[k] = FixedPolicy(n, MENUS[k].index(config[k]))
    return out


def train_proxy(data: MultiLabelData, policy: str = "mat", *, config: dict[str, str] | None = None,
                epochs: int = 30, batch_size: int = 256, hidden: int = 64, seed: int = 0,
                weights: Sequence[float] = (1.0, 0.5, 0.2), gamma: float = 0.9, c: float = 1.0,
                eps0: float = 0.2, rho: float = 0.9, eps_min: float = 0.02, smoothing: bool = True,
                lr_smoothing: float = 0.5) -> dict[str, Any]:
    """Train the proxy MLP for ``epochs`` epochs, one decision per epoch (the MAT-Agent loop).

    ``policy``: "mat" (one D-UCB + epsilon agent per component, the paper's method), "ucb1" or
    "eps-greedy" (stationary agents), "random" (uniform arm per epoch), "joint" (one D-UCB + epsilon
    over all 192 configurations) or "static" (``config``, default :data:`DEFAULT_CONFIG`).
    Each epoch: every agent picks an arm; a new optimiser is created (weights kept) when the OPT
    agent switches; the learning rate is ``BASE_LR[opt]`` times the chosen schedule's multiplier at
    the current training fraction, the multiplier smoothed per step by an EMA of rate
    ``lr_smoothing`` so that switches do not jump; after the epoch the validation mAP and rare-class
    F1 give :func:`composite_reward`, smoothed by :class:`DualEMA` (``smoothing``), and every agent
    is updated with the same value.

    Returns a dict: ``trace`` (per epoch: objective = mean training loss, step_size = last learning
    rate, ``val_map``, ``val_rare_f1``, ``loss_cv``, ``reward``, ``reward_fed`` and the arm index of
    each agent under its key), ``test_map``, ``test_rare_f1``, ``val_map``, ``configs`` (one dict per
    epoch) and ``epochs`` (epochs spent).
    """
    if not isinstance(data, MultiLabelData):
        raise ValueError("data must be a MultiLabelData (see make_multilabel)")
    if policy not in POLICIES:
        raise ValueError(f"policy must be one of {POLICIES}, got {policy!r}")
    if policy == "static":
        config = dict(DEFAULT_CONFIG if config is None else config)
        if set(config) != set(AGENT_KEYS) or any(config[k] not in MENUS[k] for k in AGENT_KEYS):
            raise ValueError(f"config must map {AGENT_KEYS} to options of {MENUS}, got {config!r}")
    epochs = check_int(epochs, "epochs", minimum=1)
    batch_size = check_int(batch_size, "batch_size", minimum=1)
    hidden = check_int(hidden, "hidden", minimum=1)
    seed = check_int(seed, "seed", minimum=0)
    lr_smoothing = check_in_range(lr_smoothing, "lr_smoothing", 0.0, 1.0, closed=(False, True))
    composite_reward(0.0, 0.0, 0.0, weights)  # validates weights
    gen = np.random.default_rng(seed)
    agents = _agents(policy, config, gen, gamma=gamma, c=c, eps0=eps0, rho=rho, eps_min=eps_min)
    grid = all_configs()
    joint = None
    if policy == "joint":
        order = gen.permutation(len(grid))  # random order of first plays over the product
        grid = [grid[i] for i in order]
        joint = DiscountedUCB(len(grid), gamma=gamma, c=c, eps0=eps0, rho=rho, eps_min=eps_min,
                              rng=np.random.default_rng(gen.integers(2**63)))
    smoother = DualEMA(enabled=smoothing)

    X = torch.as_tensor(data.X_train, dtype=torch.float32)
    Y = torch.as_tensor(data.Y_train, dtype=torch.float32)
    Xv = torch.as_tensor(data.X_val, dtype=torch.float32)
    Xt = torch.as_tensor(data.X_test, dtype=torch.float32)
    rare = data.rare
    cw = torch.as_tensor(class_balanced_weights(data.Y_train.sum(0)), dtype=torch.float32)
    net = _mlp(X.shape[1], hidden, data.n_labels, seed)
    n = X.shape[0]
    nb = -(-n // batch_size)
    prev_map, prev_f1 = _evaluate(net, Xv, data.Y_val, rare)
    trace = Trace(f"MAT-Agent ({policy})" if policy != "static" else "static", meta={"policy": policy, "seed": seed})
    configs: list[dict[str, str]] = []
    opt_name, opt, mult = None, None, None
    for epoch in range(epochs):
        if joint is not None:
            j = joint.select()
            cfg = grid[j]
        else:
            arms = {k: agents[k].select() for k in AGENT_KEYS}
            cfg = {k: MENUS[k][arms[k]] for k in AGENT_KEYS}
        configs.append(cfg)
        if cfg["opt"] != opt_name:  # moment buffers do not transfer: a fresh optimiser state
            opt_name, opt = cfg["opt"], _make_optimizer(cfg["opt"], net.parameters())
        perm = torch.as_tensor(gen.permutation(n))
        losses = np.empty(nb)
        for b in range(nb):
            m_new = schedule_multiplier(cfg["lrs"], (epoch * nb + b) / (epochs * nb))
            mult = m_new if mult is None else (1 - lr_smoothing) * mult + lr_smoothing * m_new
            lr = BASE_LR[opt_name] * mult
            for group in opt.param_groups:
                group["lr"] = lr
            idx = perm[b * batch_size:(b + 1) * batch_size]
            xb, yb = augment(cfg["aug"], X[idx], Y[idx], gen)
            loss = multilabel_loss(cfg["loss"], net(xb), yb, class_weights=cw)
            opt.zero_grad()
            loss.backward()
            opt.step()
            losses[b] = loss.item()
        v_map, v_f1 = _evaluate(net, Xv, data.Y_val, rare)
        cv = float(losses.std() / max(abs(losses.mean()), 1e-12)) if nb > 1 else 0.0
        r = composite_reward(v_map - prev_map, v_f1 - prev_f1, cv, weights)
        fed = smoother.update(r)
        prev_map, prev_f1 = v_map, v_f1
        if joint is not None:
            joint.update(j, fed)
        else:
            for k in AGENT_KEYS:
                agents[k].update(arms[k], fed)
        trace.record(objective=float(losses.mean()), step_size=lr, val_map=v_map, val_rare_f1=v_f1,
                     loss_cv=cv, reward=r, reward_fed=fed,
                     **{k: float(MENUS[k].index(cfg[k])) for k in AGENT_KEYS})
    t_map, t_f1 = _evaluate(net, Xt, data.Y_test, rare)
    return {"trace": trace, "test_map": t_map, "test_rare_f1": t_f1, "val_map": prev_map,
            "val_rare_f1": prev_f1, "configs": configs, "epochs": epochs}


# ================================================================================== experiments

BANDIT_METHODS = ("UCB1", "D-UCB", "SW-UCB", "D-UCB+eps")
C_GRID = (0.05, 0.1, 0.2, 0.5)


def regret_table(seeds: Sequence[int] = (0, 1, 2, 3), *, horizon: int = 6000, period: int = 600,
                 n_arms: int = 5, noise: float = 0.2, gamma: float = 0.99, window: int = 200,
                 eps: float = 0.05, c_grid: Sequence[float] = C_GRID) -> dict[str, dict[float, float]]:
    """Mean final regret over ``seeds`` of each method in :data:`BANDIT_METHODS` for each ``c``
    (the card's Check 1: means redrawn from U(0.2, 0.8) every ``period`` steps)."""
    out: dict[str, dict[float, float]] = {m: {} for m in BANDIT_METHODS}
    for c in c_grid:
        check_positive(c, "c_grid entries")
        for m in BANDIT_METHODS:
            regs = []
            for s in seeds:
                means = piecewise_means(n_arms, horizon, period, rng=1000 + s)
                pol = make_policy(m, n_arms, c=c, gamma=gamma, window=window, eps=eps, rng=s)
                regs.append(simulate_bandit(pol, means, noise, rng=2000 + s)["regret"][-1])
            out[m][float(c)] = float(np.mean(regs))
    return out


@claim("20", "On a piecewise-stationary bandit, discounted UCB tracks the changes: its regret is at "
       "most half of UCB1's (each at its best c)",
       expect="regret(D-UCB, gamma=0.99) <= 0.5 x regret(UCB1), T=6000, 5 arms, change every 600 steps",
       name="bandit_regret")
def bandit_regret_claim(fast: bool = False) -> Measured:
    seeds = (0, 1) if fast else (0, 1, 2, 3)
    table = regret_table(seeds)
    best = {m: min(v.values()) for m, v in table.items()}
    ratio = best["D-UCB"] / best["UCB1"]
    values = {f"regret {m}": best[m] for m in BANDIT_METHODS}
    values["ratio D-UCB/UCB1"] = ratio
    return Measured(values, holds=ratio <= 0.5,
                    summary=f"best-c regret over {len(seeds)} seeds: D-UCB {best['D-UCB']:.0f}, "
                            f"UCB1 {best['UCB1']:.0f} (ratio {ratio:.2f}); SW-UCB {best['SW-UCB']:.0f}, "
                            f"D-UCB+eps {best['D-UCB+eps']:.0f}",
                    details=table)


#: The static grid of the proxy claim (a slice of the 192): no augmentation, every optimiser and
#: loss, constant or cosine schedule (24 configurations; 12, cosine only, in fast mode).
def proxy_grid(fast: bool = False) -> list[dict[str, str]]:
    """The static configurations the claim's grid search trains (a slice of :func:`all_configs`)."""
    lrs = ("cosine",) if fast else ("constant", "cosine")
    return [c for c in all_configs() if c["aug"] == "none" and c["lrs"] in lrs]


def _config_key(cfg: dict[str, str] | None) -> tuple[str, ...] | None:
    return None if cfg is None else tuple(cfg[k] for k in AGENT_KEYS)


@lru_cache(maxsize=8)
def _data(seed: int) -> MultiLabelData:
    return make_multilabel(rng=seed, noise=0.3)


@lru_cache(maxsize=256)
def proxy_run(policy: str, seed: int, config: tuple[str, ...] | None = None, smoothing: bool = True,
              weights: tuple[float, float, float] = (1.0, 0.5, 0.2)) -> dict[str, Any]:
    """One cached run of :func:`train_proxy` on the proxy data set of ``seed`` (noise 0.3),
    ``config`` as a tuple in :data:`AGENT_KEYS` order for a static run."""
    cfg = None if config is None else dict(zip(AGENT_KEYS, config))
    with one_torch_thread():
        return train_proxy(_data(seed), policy, config=cfg, seed=seed, smoothing=smoothing, weights=weights)


PROXY_SEEDS = (0, 1, 2, 3, 4)
SELECTION_SEED = 100


def proxy_comparison(fast: bool = False, include_random: bool = False) -> dict[str, Any]:
    """The card's Check 2: grid search on a held-out data seed (validation mAP) picks the best
    static configuration; then MAT-Agent, the static default and the grid's best (and, with
    ``include_random``, random-per-epoch) run on :data:`PROXY_SEEDS`; test mAP and rare-class F1
    per seed, and epochs spent."""
    grid = proxy_grid(fast)
    scores = [proxy_run("static", SELECTION_SEED, _config_key(c))["val_map"] for c in grid]
    best_cfg = grid[int(np.argmax(scores))]
    rows = {"MAT-Agent": ("mat", None), "static default": ("static", _config_key(DEFAULT_CONFIG)),
            "best static (grid)": ("static", _config_key(best_cfg))}
    if include_random:
        rows["random per epoch"] = ("random", None)
    out: dict[str, Any] = {"best_config": best_cfg, "grid_size": len(grid), "epochs": 30, "methods": {}}
    for name, (pol, key) in rows.items():
        runs = [proxy_run(pol, s, key) for s in PROXY_SEEDS]
        out["methods"][name] = {"map": np.array([r["test_map"] for r in runs]),
                                "rare_f1": np.array([r["test_rare_f1"] for r in runs])}
    return out


@claim("20", "MAT-Agent's per-epoch agents match the best static configuration on mAP and beat the "
       "static default on rare-class F1 (CPU proxy: MLP on synthetic power-law multi-label data)",
       expect="mean rare-F1(agents) >= static default's and mean mAP(agents) >= best static - 1 point, "
              "5 seeds, with 1/grid-size of the grid's epochs",
       name="proxy", reproduces=False)
def proxy_claim(fast: bool = False) -> Measured:
    res = proxy_comparison(fast)
    m = res["methods"]
    mat, dflt, best = m["MAT-Agent"], m["static default"], m["best static (grid)"]
    rare_ok = mat["rare_f1"].mean() >= dflt["rare_f1"].mean()
    map_ok = mat["map"].mean() >= best["map"].mean() - 0.01
    values = {}
    for name, key in (("MAT-Agent", "agents"), ("static default", "default"), ("best static (grid)", "best static")):
        values[f"mAP {key} (mean)"] = 100 * m[name]["map"].mean()
        values[f"mAP {key} (sd)"] = 100 * m[name]["map"].std(ddof=1)
        values[f"rare-F1 {key} (mean)"] = 100 * m[name]["rare_f1"].mean()
        values[f"rare-F1 {key} (sd)"] = 100 * m[name]["rare_f1"].std(ddof=1)
    values["epochs agents"] = 30
    values["epochs grid"] = 30 * res["grid_size"]
    summary = (f"agents mAP {values['mAP agents (mean)']:.1f}±{values['mAP agents (sd)']:.1f} vs best static "
               f"{values['mAP best static (mean)']:.1f}±{values['mAP best static (sd)']:.1f}; rare-F1 "
               f"{values['rare-F1 agents (mean)']:.1f}±{values['rare-F1 agents (sd)']:.1f} vs default "
               f"{values['rare-F1 default (mean)']:.1f}±{values['rare-F1 default (sd)']:.1f} (points)")
    return Measured(values, holds=bool(rare_ok and map_ok), summary=summary, details=res)


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
    from ..viz import Phase, convergence_figure

    means = piecewise_means(5, 6000, 600, rng=1000 + seed)
    traces = []
    for kind in ("UCB1", "eps-greedy", "D-UCB", "SW-UCB", "D-UCB+eps"):
        pol = make_policy(kind, 5, c=0.1, gamma=0.99, window=200, eps=0.05, rng=seed)
        traces.append(simulate_bandit(pol, means, 0.2, rng=2000 + seed))
    phases = [Phase(600 * k, 600 * (k + 1), f"{k + 1}") for k in range(10)]
    return convergence_figure(traces, y="regret", logy=False, phases=phases,
                              xaxis_title="step t (shaded: stationary blocks 1-10)",
                              yaxis_title="cumulative regret")


def watch_proxy_figure(seed: int = 0) -> go.Figure:
    """Validation mAP per epoch on the proxy: MAT-Agent, the static default, random per epoch."""
    from ..viz import Phase, convergence_figure

    runs = [proxy_run("mat", seed), proxy_run("static", seed, _config_key(DEFAULT_CONFIG)),
            proxy_run("random", seed)]
    traces = []
    for name, r in zip(("MAT-Agent", "static default", "random per epoch"), runs):
        tr = Trace.from_dict({**r["trace"].to_dict(), "method": name})
        traces.append(tr)
    phases = [Phase(0, 3, "every arm once"), Phase(3, 13, "eps > 0.05"), Phase(13, 29, "mostly UCB")]
    fig = convergence_figure(traces, y="val_map", logy=False, phases=phases, xaxis_title="epoch",
                             yaxis_title="validation mAP")
    return fig


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
    for j, (key, label) in enumerate((("val_map", "mAP"), ("val_rare_f1", "rare-class F1"))):
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
    fig.update_xaxes(title_text="epoch", range=[-0.5, 29.5], row=5, col=1)
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


def _switches(run: dict[str, Any]) -> int:
    tr = run["trace"]
    return int(sum(np.count_nonzero(np.diff(tr[k])) for k in AGENT_KEYS))


def timeline_figure(seed: int = 0, smoothing: bool = True) -> go.Figure:
    """The agent timeline: each agent's choice per epoch (top four rows) aligned with validation
    mAP and rare-class F1 of MAT-Agent and of the static default (bottom)."""
    _timeline_cache()
    run = proxy_run("mat", seed, None, smoothing)
    ref = proxy_run("static", seed, _config_key(DEFAULT_CONFIG))
    fig = go.Figure(_timeline_traces(run, ref))
    fig.update_layout(**_timeline_layout(f"seed {seed}, dual-EMA {'on' if smoothing else 'off'}: "
                                         f"{_switches(run)} arm switches, test mAP {run['test_map']:.3f}"))
    fig.update_layout(template="plotly_white")
    return fig


def timeline_slider_figure() -> go.Figure:
    """Static twin of the agent timeline: a slider over the seed (dual-EMA on)."""
    steps = []
    for s in PROXY_SEEDS:
        run, ref = proxy_run("mat", s), proxy_run("static", s, _config_key(DEFAULT_CONFIG))
        steps.append(SliderStep(f"{s}", _timeline_traces(run, ref)))
    fig = slider_figure(steps, slider_label="seed", fixed_axes=False, height=760)
    fig.update_layout(**_timeline_layout())
    fig.update_layout(template="plotly_white", margin=dict(b=110))
    return fig


@lru_cache(maxsize=1)
def _timeline_cache() -> bool:
    """Precompute every run the live timeline can show (first call only)."""
    for s in PROXY_SEEDS:
        for sm in (True, False):
            proxy_run("mat", s, None, sm)
        proxy_run("static", s, _config_key(DEFAULT_CONFIG))
    return True


EXPLORER_PLAYGROUND = Explorer(
    "20", "playground", playground_figure,
    {"gamma": Slider("D-UCB discount gamma", list(GAMMA_GRID), 0.99),
     "c": Slider("UCB constant c", [0.05, 0.1, 0.2, 0.5], 0.1),
     "eps": Slider("eps-greedy epsilon", [0.02, 0.05, 0.1, 0.2], 0.1),
     "window": Slider("SW-UCB window W", [50, 100, 200, 500, 1000], 200, fmt="{:d}")},
    description="Cumulative regret of four bandit policies on a piecewise-stationary bandit.")

EXPLORER_TIMELINE = Explorer(
    "20", "timeline", timeline_figure,
    {"seed": Slider("seed", list(PROXY_SEEDS), 0, fmt="{:d}"),
     "smoothing": Toggle("dual-rate EMA smoothing of the reward", True)},
    description="Which option each agent picks per epoch, with validation mAP and rare-class F1.")
