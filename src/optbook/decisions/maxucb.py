"""MaxUCB and the max K-armed bandit baselines for CASH (chapter 30).

Combined Algorithm Selection and Hyperparameter optimisation (CASH) as a *max* K-armed bandit
(Balef, Vernade & Eggensperger, NeurIPS 2025): each arm is a model class, a pull runs one more
hyperparameter trial in that class and returns its validation loss, and the goal is the lowest
loss found after ``T`` pulls, not the lowest average. Every policy here follows the shared
``select() / update(arm, reward)`` interface of :mod:`optbook.core.bandits` (rewards are
``-loss``); :func:`replay` plays one on a precomputed table of losses, the paper's evaluation
protocol.
"""
from __future__ import annotations

import math
from bisect import bisect_left, insort
from dataclasses import dataclass

import numpy as np

from ..core import RngLike, check_choice, check_in_range, check_int, check_positive
from ..core.bandits import BanditPolicy

#: MaxUCB's min-max scaler maps every reward seen so far into this range (official code).
SCALE_LOW, SCALE_HIGH = 0.01, 0.99
_TINY = 10 * np.finfo(float).eps


def minmax_scale(values: np.ndarray, low: float, high: float, feature_range=(SCALE_LOW, SCALE_HIGH)) -> np.ndarray:
    """``values`` mapped affinely so that ``low -> feature_range[0]``, ``high -> feature_range[1]``.

    A zero range (``high - low`` below ``10 eps``) is treated as 1, as scikit-learn's
    ``MinMaxScaler`` does: every value then maps to ``feature_range[0] + (value - low)``.
    """
    span = high - low
    if span < _TINY:
        span = 1.0
    a, b = feature_range
    return a + (b - a) * (np.asarray(values, dtype=float) - low) / span


class MaxUCB(BanditPolicy):
    """MaxUCB (the paper's Algorithm 1, exactly as in its official code).

    After every observation all raw rewards seen so far, across all arms, are min-max scaled into
    [0.01, 0.99]; the index of arm ``i`` is its largest scaled reward plus the bonus
    ``(alpha ln t / n_i)^2``, where ``t`` counts from 1 and grows by one per observation (so the
    first index, after one pull of each arm, uses ``t = K + 1``). Ties go to the lowest index.

    Parameters
    ----------
    n_arms : int
    alpha : float >= 0
        Exploration strength (paper default 0.5); ``alpha = 0`` is greedy on the empirical max.
    statistic : {"max", "mean"}
        ``"mean"`` replaces the empirical maximum by the empirical mean: the negative control
        (a mean-based UCB with MaxUCB's scaling and bonus), not the paper's method.
    """

    name = "MaxUCB"

    def __init__(self, n_arms: int, alpha: float = 0.5, statistic: str = "max", rng: RngLike = None) -> None:
        super().__init__(n_arms, rng)
        self.alpha = check_positive(alpha, "alpha", allow_zero=True)
        self.statistic = check_choice(statistic, "statistic", ("max", "mean"))
        if self.statistic == "mean":
            self.name = "mean-UCB (control)"
        self.best = np.full(self.n_arms, -np.inf)  # raw maximum per arm
        self.total = np.zeros(self.n_arms)  # raw sum per arm
        self.low, self.high = math.inf, -math.inf  # range of every raw reward seen

    def index(self) -> np.ndarray:
        """Scaled statistic + ``(alpha ln t / n_i)^2`` for every arm (inf for an unplayed arm)."""
        n = np.maximum(self.plays, 1)
        stat = self.best if self.statistic == "max" else self.total / n
        scaled = minmax_scale(stat, self.low, self.high) if self.t else np.zeros(self.n_arms)
        idx = scaled + (self.alpha * math.log(self.t + 1) / n) ** 2
        return np.where(self.plays > 0, idx, np.inf)

    def _choose(self) -> int:
        return int(np.argmax(self.index()))

    def _learn(self, arm: int, reward: float) -> None:
        self.best[arm] = max(self.best[arm], reward)
        self.total[arm] += reward
        self.low, self.high = min(self.low, reward), max(self.high, reward)


class RoundRobin(BanditPolicy):
    """Arms in turn, 0, 1, ..., K-1, 0, 1, ... (the uniform-allocation baseline)."""

    name = "round-robin"

    def select(self) -> int:
        return self.t % self.n_arms

    def _learn(self, arm: int, reward: float) -> None:
        return None


class _History(BanditPolicy):
    """A policy that keeps every reward per arm (the order statistics need them)."""

    def __init__(self, n_arms: int, rng: RngLike = None) -> None:
        super().__init__(n_arms, rng)
        self.history: list[list[float]] = [[] for _ in range(self.n_arms)]

    def _learn(self, arm: int, reward: float) -> None:
        self.history[arm].append(reward)


class ThresholdAscent(BanditPolicy):
    """Threshold Ascent (Streeter & Smith 2006), as in the paper's code.

    The threshold is the ``s``-th largest reward seen so far (every reward counts while fewer
    than ``s`` are seen); ``S_i`` counts arm ``i``'s rewards at or above it, and the arm with the
    largest Chernoff upper bound ``mu + (a + sqrt(2 n mu a + a^2)) / n`` on its frequency
    ``mu = S_i / n_i`` of exceeding the threshold is played, ``a = ln(2 K T / delta)``.
    """

    name = "Threshold Ascent"

    def __init__(self, n_arms: int, s: int = 20, delta: float = 0.1, horizon: int = 200,
                 rng: RngLike = None) -> None:
        super().__init__(n_arms, rng)
        self.s = check_int(s, "s", minimum=1)
        self.delta = check_in_range(delta, "delta", 0.0, 1.0, closed=(False, False))
        self.horizon = check_int(horizon, "horizon", minimum=1)
        self.a = math.log(2 * self.n_arms * self.horizon / self.delta)
        self.sorted_all: list[float] = []
        self.sorted_arm: list[list[float]] = [[] for _ in range(self.n_arms)]

    def _choose(self) -> int:
        n = self.plays.astype(float)
        if self.t + 1 > self.s:
            threshold = self.sorted_all[-self.s]
            S = np.array([len(h) - bisect_left(h, threshold) for h in self.sorted_arm], dtype=float)
        else:
            S = n
        mu = S / n
        return int(np.argmax(mu + (self.a + np.sqrt(2 * n * mu * self.a + self.a ** 2)) / n))

    def _learn(self, arm: int, reward: float) -> None:
        insort(self.sorted_all, reward)
        insort(self.sorted_arm[arm], reward)


class QoMaxETC(_History):
    """QoMax explore-then-commit (Baudry, Russac & Kaufmann 2022).

    Each arm is pulled ``batches * batch_size`` times in turn; the arm whose ``q``-quantile of
    its ``batches`` batch maxima is largest is then played to the end. (The paper's code keeps
    only the last batch's maximum, an indexing slip; we use all batches, as Baudry et al. do.)
    """

    name = "QoMax-ETC"

    def __init__(self, n_arms: int, batches: int = 4, batch_size: int = 3, q: float = 0.5,
                 rng: RngLike = None) -> None:
        super().__init__(n_arms, rng)
        self.batches = check_int(batches, "batches", minimum=1)
        self.batch_size = check_int(batch_size, "batch_size", minimum=1)
        self.q = check_in_range(q, "q", 0.0, 1.0, closed=(True, True))
        self.committed: int | None = None

    def select(self) -> int:
        explore = self.batches * self.batch_size
        if self.plays.min() < explore:
            return int(np.argmin(self.plays))  # in turn, lowest index first
        if self.committed is None:
            qomax = [np.quantile(np.asarray(h[:explore]).reshape(self.batches, self.batch_size).max(axis=1), self.q)
                     for h in self.history]
            self.committed = int(np.argmax(qomax))
        return self.committed


class MaxMedian(_History):
    """Max-Median (Bhatt, Li & Ibarra 2022), as in the paper's code.

    With probability ``min(1, eps / t)`` a uniform arm; otherwise, with ``m = min_k n_k``, each
    arm's ``ceil(n_k / m)``-th largest reward is compared (for equal counts: the maxima), which
    puts arms pulled unequally often on the same footing.
    """

    name = "Max-Median"

    def __init__(self, n_arms: int, eps: float = 1.0, rng: RngLike = None) -> None:
        super().__init__(n_arms, rng)
        self.eps = check_positive(eps, "eps", allow_zero=True)

    def _choose(self) -> int:
        if self.rng.random() < min(1.0, self.eps / self.t):
            return int(self.rng.integers(self.n_arms))
        m = self.plays.min()
        rank = np.ceil(self.plays / m).astype(int)
        stat = [np.sort(h)[-r] for h, r in zip(self.history, rank)]
        return int(np.argmax(stat))


# ---------------------------------------------------------------- replay (the paper's protocol)


@dataclass
class ReplayResult:
    """One replayed run: the arm of every pull, its loss, and the best loss so far."""

    arms: np.ndarray
    losses: np.ndarray

    @property
    def best_so_far(self) -> np.ndarray:
        """Lowest loss among the first ``t`` pulls, ``t = 1..T`` (non-increasing)."""
        return np.minimum.accumulate(self.losses)

    def pulls(self, n_arms: int) -> np.ndarray:
        """How often each arm was pulled."""
        return np.bincount(self.arms, minlength=n_arms)


def check_table(losses: np.ndarray, name: str = "losses") -> np.ndarray:
    """A finite 2-D table ``losses[arm, n]`` with at least two arms and one entry each."""
    arr = np.asarray(losses, dtype=float)
    if arr.ndim != 2 or arr.shape[0] < 1 or arr.shape[1] < 1:
        raise ValueError(f"{name} must be a 2-D array losses[arm, pull] with at least one entry, got shape {arr.shape}")
    if not np.isfinite(arr).all():
        raise ValueError(f"{name} must be finite (found NaN or inf)")
    return arr


def replay(policy: BanditPolicy, losses: np.ndarray, horizon: int | None = None) -> ReplayResult:
    """Play ``policy`` for ``horizon`` pulls on a precomputed table (the paper's replay protocol).

    The ``n``-th pull of arm ``i`` returns ``losses[i, n]`` (one precomputed HPO trajectory per
    arm) and the policy is told the reward ``-losses[i, n]``. A policy that pulls an arm more
    often than its trajectory is long gets a ``ValueError``.
    """
    losses = check_table(losses)
    if losses.shape[0] != policy.n_arms:
        raise ValueError(f"losses has {losses.shape[0]} arms, the policy {policy.n_arms}")
    horizon = losses.shape[1] if horizon is None else check_int(horizon, "horizon", minimum=1)
    count = np.zeros(policy.n_arms, dtype=int)
    arms = np.empty(horizon, dtype=int)
    seen = np.empty(horizon)
    for t in range(horizon):
        a = policy.select()
        if count[a] >= losses.shape[1]:
            raise ValueError(f"the table is exhausted: arm {a} pulled more than its {losses.shape[1]} entries "
                             f"(pull {t + 1} of horizon {horizon})")
        y = losses[a, count[a]]
        count[a] += 1
        arms[t], seen[t] = a, y
        policy.update(a, -y)
    return ReplayResult(arms, seen)
