"""Chapter 20 · MAT-Agent: multi-agent non-stationary bandits that steer training.

Zhang, Cai, Fan, Liu & Wang (NeurIPS 2025) give each training component (data augmentation,
optimiser, learning-rate schedule, loss) its own agent. At every decision step (here: each epoch)
each agent picks an option from its menu; all agents receive the same composite reward (accuracy,
rare-class recognition, stability), smoothed by a dual-rate exponential moving average. Each agent
is a non-stationary multi-armed bandit mixing epsilon-greedy with an upper-confidence bound.

What is here (the experiments, claims and figures are in :mod:`.bandit_schedulers_chapter`):

* the bandit core lives in :mod:`optbook.core.bandits` (shared with the bandit chapters) and
  is re-exported here: :class:`UCB1`, :class:`EpsilonGreedy`, :class:`DiscountedUCB` (with the
  paper's optional epsilon layer), :class:`SlidingWindowUCB`, :func:`simulate_bandit`;
* :func:`horizon_parameters`, the rule that sets the discount and the UCB constant from the
  number of decisions before any run;
* the training pieces: menus of augmentations, losses, optimisers and schedules, the
  multi-label metrics (mAP, rare-class AP, F1 at thresholds tuned on validation), the composite
  reward and :class:`DualEMA` (the credit each agent's arm receives);
* :func:`train_proxy`, the end-to-end proxy (a torch MLP on synthetic multi-label tabular data
  with power-law label frequencies), with the agents or a baseline choosing every epoch.

The paper's NeurIPS abstract (bandit agents) is followed; the arXiv text describes DQN agents
instead. The exact reward and smoothing formulas were not available: they are reconstructions,
flagged as such in the docstrings.
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import product
from typing import Any

import numpy as np
import torch

from ..core import Trace, as_rng, check_choice, check_in_range, check_int, check_positive, check_real
from ..core.bandits import (  # noqa: F401  (the shared bandit core, re-exported as the chapter's names)
    BanditPolicy,
    DiscountedUCB,
    EpsilonGreedy,
    FixedPolicy,
    RandomPolicy,
    SlidingWindowUCB,
    UCB1,
    make_policy,
    piecewise_means,
    simulate_bandit,
)
from ..core.validate import RngLike

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


def _check_labels_scores(y_true: Any, scores: Any, name: str = "scores") -> tuple[np.ndarray, np.ndarray]:
    """Validate 0/1 labels and scores of one shape; errors name the score argument ``name``."""
    y = np.asarray(y_true, dtype=float)
    s = np.asarray(scores, dtype=float)
    if y.ndim == 1:
        y, s = y[:, None], s[:, None] if s.ndim == 1 else s
    if y.ndim != 2 or y.shape != s.shape or y.size == 0:
        raise ValueError(f"y_true and {name} must be arrays of one shape (n,) or (n, L), got {y.shape}, {s.shape}")
    if not np.isfinite(y).all():
        raise ValueError("y_true must be finite")
    if not np.isfinite(s).all():
        raise ValueError(f"{name} must be finite")
    if not np.isin(y, (0.0, 1.0)).all():
        raise ValueError("y_true must hold 0/1 labels")
    return y, s


def average_precision(y_true: Any, scores: Any) -> np.ndarray:
    """Average precision of each label (column): sum over distinct score thresholds of
    (R_k - R_{k-1}) P_k, the definition of ``sklearn.metrics.average_precision_score``.
    NaN for a label with no positive example."""
    y, s = _check_labels_scores(y_true, scores)
    n = y.shape[0]
    order = np.argsort(-s, axis=0, kind="mergesort")
    ys, ss = np.take_along_axis(y, order, 0), np.take_along_axis(s, order, 0)
    tp = np.cumsum(ys, axis=0)
    # Each positive contributes the precision at the end of its tie group of equal scores.
    idx = np.broadcast_to(np.arange(n)[:, None], ys.shape)
    is_end = np.vstack([ss[1:] != ss[:-1], np.ones((1, ys.shape[1]), bool)])
    end = np.minimum.accumulate(np.where(is_end, idx, n)[::-1], axis=0)[::-1]
    prec_at_end = np.take_along_axis(tp, end, 0) / (end + 1)
    n_pos = ys.sum(0)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(n_pos > 0, (ys * prec_at_end).sum(0) / n_pos, np.nan)


def mean_average_precision(y_true: Any, scores: Any) -> float:
    """mAP: the mean of :func:`average_precision` over labels with at least one positive."""
    ap = average_precision(y_true, scores)
    if np.isnan(ap).all():
        raise ValueError("y_true has no positive label at all")
    return float(np.nanmean(ap))


def f1_per_label(y_true: Any, probs: Any, threshold: Any = 0.5) -> np.ndarray:
    """F1 of each label with predictions ``probs >= threshold`` (one number, or one per label);
    0 where it is 0/0."""
    y, p = _check_labels_scores(y_true, probs, "probs")
    t = np.broadcast_to(np.asarray(threshold, dtype=float), (y.shape[1],)) if np.ndim(threshold) else \
        np.full(y.shape[1], check_in_range(threshold, "threshold", 0.0, 1.0))
    if t.shape != (y.shape[1],) or not np.all((t > 0) & (t < 1)):
        raise ValueError(f"threshold must be in (0, 1), one number or one per label ({y.shape[1]}), got {threshold!r}")
    pred = p >= t
    tp = (pred & (y == 1)).sum(0)
    fp = (pred & (y == 0)).sum(0)
    fn = (~pred & (y == 1)).sum(0)
    den = 2 * tp + fp + fn
    return np.where(den > 0, 2 * tp / np.maximum(den, 1), 0.0)


def f1_thresholds(y_true: Any, probs: Any) -> np.ndarray:
    """Per-label thresholds that maximise F1 on the given (validation) split: for each label, the
    midpoint between the score that is the best cut and the next lower one (0.5 for a label without
    a positive). F1 at a fixed 0.5 measures calibration as much as ranking; these thresholds are
    the usual remedy, tuned on validation and applied to test."""
    y, p = _check_labels_scores(y_true, probs, "probs")
    out = np.full(y.shape[1], 0.5)
    for j in range(y.shape[1]):
        n_pos = y[:, j].sum()
        if n_pos == 0:
            continue
        order = np.argsort(-p[:, j], kind="mergesort")
        ys, ss = y[order, j], p[order, j]
        last = np.r_[np.flatnonzero(np.diff(ss) != 0), ys.size - 1]  # predict the top last+1 as positive
        tp = np.cumsum(ys)[last]
        f1 = 2 * tp / (last + 1 + n_pos)
        k = int(np.argmax(f1))
        below = ss[last[k] + 1] if last[k] + 1 < ss.size else 0.0
        out[j] = float(np.clip(0.5 * (ss[last[k]] + below), 1e-12, 1 - 1e-12))
    return out


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


# =========================================================================== reward and credit


def composite_reward(d_map: float, d_rare_ap: float, loss_cv: float,
                     weights: Sequence[float] = (1.0, 0.5, 0.2)) -> float:
    """The "hierarchical composite reward" (our reconstruction):
    ``r = w_acc dmAP + w_rare dAP_rare - w_stab CV(minibatch losses)``, the changes measured on the
    validation split over one decision step (rare-class AP: the mean AP of the rare labels)."""
    w = np.asarray(weights, dtype=float)
    if w.shape != (3,) or not np.isfinite(w).all() or (w < 0).any():
        raise ValueError(f"weights must be three non-negative finite numbers, got {weights!r}")
    vals = [check_real(v, n) for v, n in ((d_map, "d_map"), (d_rare_ap, "d_rare_ap"), (loss_cv, "loss_cv"))]
    if vals[2] < 0:
        raise ValueError(f"loss_cv must be >= 0, got {vals[2]}")
    return float(w[0] * vals[0] + w[1] * vals[1] - w[2] * vals[2])


CREDITS = ("centred", "smoothed", "raw")


class DualEMA:
    """The credit an agent's arm receives for one decision step, from the raw rewards (the abstract
    names "dual-rate EMA smoothing"; what is smoothed, and how, is ours).

    ``credit``:

    * ``"centred"`` (the chapter's method): a fast EMA (rate ``a_fast``) tracks the trend of the
      rewards (a change of validation mAP shrinks as training converges) and a slow EMA (rate
      ``a_slow``) of the squared residuals tracks their scale. The arm played at step t is
      credited with ``e_t / s_t``, where ``e_t = r_t - m_{t-1}`` is how much its step beat the
      trend and ``s_t`` the residuals' root mean square. The first reward (the step out of the
      random initialisation) and the second (no trend yet) are credited 0, and the first is kept
      out of the trend. Nothing of the rewards earned by other arms at other steps enters an arm's
      credit except through the trend;
    * ``"smoothed"`` (the chapter's first version): the average of a fast and a slow EMA of the
      rewards (``r_t`` included), divided by the running sd of the raw rewards: each arm is
      credited with a blend of the rewards of the arms played before it;
    * ``"raw"``: ``r_t`` divided by the running sd of the raw rewards.
    """

    def __init__(self, a_fast: float = 0.5, a_slow: float = 0.1, *, credit: str = "centred") -> None:
        self.a_fast = check_in_range(a_fast, "a_fast", 0.0, 1.0, closed=(False, True))
        self.a_slow = check_in_range(a_slow, "a_slow", 0.0, 1.0, closed=(False, True))
        self.credit = check_choice(credit, "credit", CREDITS)
        self.fast: float | None = None
        self.slow: float | None = None
        self.trend: float | None = None
        self.sq: float | None = None
        self._n, self._mean, self._m2 = 0, 0.0, 0.0

    def scale(self) -> float:
        """Running sd of the raw rewards (1 until two have been seen or when it is 0)."""
        if self._n < 2:
            return 1.0
        sd = math.sqrt(self._m2 / (self._n - 1))
        return sd if sd > 0 else 1.0

    def update(self, r: float) -> float:
        """Feed one raw reward, return the credit of the arm that earned it."""
        r = check_real(r, "reward")
        self._n += 1
        delta = r - self._mean
        self._mean += delta / self._n
        self._m2 += delta * (r - self._mean)
        if self.credit == "centred":
            if self._n == 1:  # the step out of the random initialisation: not comparable
                return 0.0
            if self.trend is None:
                self.trend = r
                return 0.0
            e = r - self.trend
            self.trend += self.a_fast * e
            self.sq = e * e if self.sq is None else self.sq + self.a_slow * (e * e - self.sq)
            return e / math.sqrt(self.sq) if self.sq > 0 else 0.0
        if self.fast is None:
            self.fast = self.slow = r
        else:
            self.fast += self.a_fast * (r - self.fast)
            self.slow += self.a_slow * (r - self.slow)
        out = 0.5 * (self.fast + self.slow) if self.credit == "smoothed" else r
        return out / self.scale()


def horizon_parameters(horizon: int, n_changes: int = 2) -> tuple[float, float]:
    """The discount and UCB constant of every agent, set from the number of decisions alone.

    ``gamma = 1 - sqrt(n_changes / horizon) / 4``: the tuning of discounted UCB for ``n_changes``
    changes of the best arm in ``horizon`` plays (Garivier & Moulines 2011, rewards bounded by 1);
    with 30 decisions and 2 changes (an early and a late phase of training) the memory
    ``1 / (1 - gamma)`` is about 15 decisions, half the run.

    ``c = 1 / sqrt(2 ln(1 / (1 - gamma)))`` (our rule, not Garivier & Moulines'), in units of the reward's sd: once the total weight
    ``sum_b N_b`` has reached the memory, an arm's bonus ``c sqrt(2 ln sum N / N_a)`` equals one
    standard error ``1 / sqrt(N_a)`` of its discounted mean. (The first version used ``c = 1``:
    a bonus of 2.1 standard errors at its memory of 10, larger than the differences it had to find.)
    """
    horizon = check_int(horizon, "horizon", minimum=2)
    n_changes = check_int(n_changes, "n_changes", minimum=1)
    if n_changes >= horizon:
        raise ValueError(f"n_changes must be < horizon={horizon}, got {n_changes}")
    gamma = 1.0 - 0.25 * math.sqrt(n_changes / horizon)
    return gamma, 1.0 / math.sqrt(2.0 * math.log(1.0 / (1.0 - gamma)))


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


def _probs(net: torch.nn.Module, X: torch.Tensor) -> np.ndarray:
    with torch.no_grad():
        return torch.sigmoid(net(X)).numpy().astype(float)


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


def count_switches(configs: Sequence[dict[str, str]]) -> int:
    """Arm switches summed over the agents: decisions where an agent's option differs from its
    previous one (at most ``4 (epochs - 1)``)."""
    return int(sum(a[k] != b[k] for a, b in zip(configs[:-1], configs[1:]) for k in AGENT_KEYS))


def train_proxy(data: MultiLabelData, policy: str = "mat", *, config: dict[str, str] | None = None,
                epochs: int = 30, batch_size: int = 256, hidden: int = 64, seed: int = 0,
                weights: Sequence[float] = (1.0, 0.5, 0.2), gamma: float | None = None, c: float | None = None,
                eps0: float = 0.2, rho: float = 0.9, eps_min: float = 0.02, credit: str = "centred",
                lr_smoothing: float = 0.5, arm_credit: dict[str, Sequence[float]] | None = None) -> dict[str, Any]:
    """Train the proxy MLP for ``epochs`` epochs, one decision per epoch (the MAT-Agent loop).

    ``policy``: "mat" (one D-UCB + epsilon agent per component, the paper's method), "ucb1" or
    "eps-greedy" (stationary agents), "random" (uniform arm per epoch), "joint" (one D-UCB + epsilon
    over all 192 configurations) or "static" (``config``, default :data:`DEFAULT_CONFIG`).
    ``gamma`` and ``c`` default to :func:`horizon_parameters` of ``epochs``.
    ``arm_credit`` (a diagnostic, learning policies only): one number per option of each menu, in
    menu order; each agent is then credited with this fixed number for the option it played
    instead of the epoch's measured credit (an oracle that knows each option's expected credit).
    Each epoch: every agent picks an arm (a learning agent's arms are its menu in a random order,
    so that its forced first tour favours no option); a new optimiser is created (weights kept) when the OPT
    agent switches; the learning rate is ``BASE_LR[opt]`` times the chosen schedule's multiplier at
    the current training fraction, the multiplier smoothed per step by an EMA of rate
    ``lr_smoothing`` so that switches do not jump; after the epoch the changes of validation mAP
    and rare-class AP give :func:`composite_reward`, turned into the credit of the arms just
    played by :class:`DualEMA` (``credit``), and every agent updates the arm it played.

    Returns a dict: ``trace`` (per epoch: objective = mean training loss, step_size = last learning
    rate, ``val_map``, ``val_rare_ap``, ``loss_cv``, ``reward``, ``credit`` and the arm index of
    each agent under its key), ``test_map``, ``test_rare_ap``, ``test_rare_f1`` (F1 of the rare
    labels at per-label thresholds tuned on validation, :func:`f1_thresholds`), ``val_map``,
    ``configs`` (one dict per epoch), ``switches`` (:func:`count_switches`) and ``epochs``.
    """
    if not isinstance(data, MultiLabelData):
        raise ValueError("data must be a MultiLabelData (see make_multilabel)")
    policy = check_choice(policy, "policy", POLICIES)
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
    if arm_credit is not None:
        if policy not in ("mat", "ucb1", "eps-greedy"):
            raise ValueError(f"arm_credit needs a learning policy (mat, ucb1, eps-greedy), got policy={policy!r}")
        if not isinstance(arm_credit, dict) or set(arm_credit) != set(AGENT_KEYS):
            raise ValueError(f"arm_credit must map each of {AGENT_KEYS} to one credit per option")
        arm_credit = {k: np.asarray(arm_credit[k], dtype=float) for k in AGENT_KEYS}
        if any(arm_credit[k].shape != (len(MENUS[k]),) or not np.isfinite(arm_credit[k]).all() for k in AGENT_KEYS):
            raise ValueError(f"arm_credit must hold one finite credit per option of {MENUS}")
    g_rule, c_rule = horizon_parameters(max(epochs, 3))
    gamma = g_rule if gamma is None else gamma
    c = c_rule if c is None else c
    gen = np.random.default_rng(seed)
    agents = _agents(policy, config, gen, gamma=gamma, c=c, eps0=eps0, rho=rho, eps_min=eps_min)
    # A learning agent's arm i is option order[i] of its menu: the forced tour of untried arms
    # (lowest index first) visits the options in a random order, not the menu's.
    orders = {k: gen.permutation(len(MENUS[k])) for k in AGENT_KEYS}
    if policy not in ("mat", "ucb1", "eps-greedy"):
        orders = {k: np.arange(len(MENUS[k])) for k in AGENT_KEYS}
    grid = all_configs()
    joint = None
    if policy == "joint":
        order = gen.permutation(len(grid))  # random order of first plays over the product
        grid = [grid[i] for i in order]
        joint = DiscountedUCB(len(grid), gamma=gamma, c=c, eps0=eps0, rho=rho, eps_min=eps_min,
                              rng=np.random.default_rng(gen.integers(2**63)))
    credit_of = DualEMA(credit=credit)

    X = torch.as_tensor(data.X_train, dtype=torch.float32)
    Y = torch.as_tensor(data.Y_train, dtype=torch.float32)
    Xv = torch.as_tensor(data.X_val, dtype=torch.float32)
    Xt = torch.as_tensor(data.X_test, dtype=torch.float32)
    rare = data.rare
    cw = torch.as_tensor(class_balanced_weights(data.Y_train.sum(0)), dtype=torch.float32)
    net = _mlp(X.shape[1], hidden, data.n_labels, seed)
    n = X.shape[0]
    nb = -(-n // batch_size)

    def val_scores() -> tuple[float, float]:
        ap = average_precision(data.Y_val, _probs(net, Xv))
        return float(np.nanmean(ap)), float(np.nanmean(ap[rare]))

    prev_map, prev_rare = val_scores()
    trace = Trace(f"MAT-Agent ({policy})" if policy != "static" else "static", meta={"policy": policy, "seed": seed})
    configs: list[dict[str, str]] = []
    opt_name, opt, mult = None, None, None
    for epoch in range(epochs):
        if joint is not None:
            j = joint.select()
            cfg = grid[j]
        else:
            arms = {k: agents[k].select() for k in AGENT_KEYS}
            cfg = {k: MENUS[k][orders[k][arms[k]]] for k in AGENT_KEYS}
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
        v_map, v_rare = val_scores()
        cv = float(losses.std() / max(abs(losses.mean()), 1e-12)) if nb > 1 else 0.0
        r = composite_reward(v_map - prev_map, v_rare - prev_rare, cv, weights)
        fed = credit_of.update(r)
        prev_map, prev_rare = v_map, v_rare
        if joint is not None:
            joint.update(j, fed)
        else:
            for k in AGENT_KEYS:
                own = fed if arm_credit is None else float(arm_credit[k][MENUS[k].index(cfg[k])])
                agents[k].update(arms[k], own)
        trace.record(objective=float(losses.mean()), step_size=lr, val_map=v_map, val_rare_ap=v_rare,
                     loss_cv=cv, reward=r, credit=fed,
                     **{k: float(MENUS[k].index(cfg[k])) for k in AGENT_KEYS})
    p_test = _probs(net, Xt)
    ap_test = average_precision(data.Y_test, p_test)
    thr = f1_thresholds(data.Y_val, _probs(net, Xv))
    f1_test = f1_per_label(data.Y_test, p_test, thr)
    return {"trace": trace, "test_map": float(np.nanmean(ap_test)), "test_rare_ap": float(np.nanmean(ap_test[rare])),
            "test_rare_f1": float(f1_test[rare].mean()), "val_map": prev_map, "val_rare_ap": prev_rare,
            "configs": configs, "switches": count_switches(configs), "epochs": epochs}
