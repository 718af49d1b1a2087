"""Bandit policies with a ``select() / update(arm, reward)`` interface, and a piecewise-stationary
test bandit: UCB1, epsilon-greedy, discounted UCB (optionally with an epsilon layer) and
sliding-window UCB. Written for chapter 20 (MAT-Agent) and shared by the later bandit chapters.
"""
from __future__ import annotations

import math
from collections import deque
from typing import Any

import numpy as np

from .trace import Trace
from .validate import RngLike, as_rng, check_in_range, check_int, check_positive, check_real



def _check_arm(arm: Any, n_arms: int) -> int:
    if isinstance(arm, bool) or not isinstance(arm, (int, np.integer)) or not 0 <= arm < n_arms:
        raise ValueError(f"arm must be an integer in [0, {n_arms - 1}], got {arm!r}")
    return int(arm)


class BanditPolicy:
    """Base of the bandit policies: ``select()`` returns an arm, ``update(arm, reward)`` learns.

    Ties are broken towards the lowest arm index, and every arm is played once (lowest index
    first) before any index comparison, so runs are reproducible.
    """

    name = "policy"

    def __init__(self, n_arms: int, rng: RngLike = None) -> None:
        self.n_arms = check_int(n_arms, "n_arms", minimum=1)
        self.rng = as_rng(rng)
        self.plays = np.zeros(self.n_arms, dtype=int)  # undiscounted play counts
        self.t = 0
        self._all_tried = False

    def _untried(self) -> int | None:
        if self.t >= self.n_arms and self._all_tried:
            return None
        idx = np.flatnonzero(self.plays == 0)
        self._all_tried = idx.size == 0
        return None if self._all_tried else int(idx[0])

    def select(self) -> int:
        """The arm to play next."""
        arm = self._untried()
        return self._choose() if arm is None else arm

    def _choose(self) -> int:  # overridden
        raise TypeError("use a concrete policy")

    def update(self, arm: int, reward: float) -> None:
        """Record that ``arm`` was played and paid ``reward``."""
        arm = _check_arm(arm, self.n_arms)
        reward = check_real(reward, "reward")
        self.plays[arm] += 1
        self.t += 1
        self._learn(arm, reward)

    def _learn(self, arm: int, reward: float) -> None:  # overridden
        raise TypeError("use a concrete policy")


class UCB1(BanditPolicy):
    """UCB1 (Auer, Cesa-Bianchi & Fischer 2002): mean + c sqrt(2 ln t / n_a), stationary.

    Parameters
    ----------
    n_arms : int
    c : float
        Exploration constant (``c = 1`` is the textbook UCB1 for rewards in [0, 1]); set it to the
        reward's scale.
    """

    name = "UCB1"

    def __init__(self, n_arms: int, c: float = 1.0, rng: RngLike = None) -> None:
        super().__init__(n_arms, rng)
        self.c = check_positive(c, "c", allow_zero=True)
        self.means = np.zeros(self.n_arms)

    def index(self) -> np.ndarray:
        """The upper confidence index of every arm (inf for an unplayed arm)."""
        n = np.maximum(self.plays, 1)
        bonus = self.c * np.sqrt(2.0 * math.log(max(self.t, 1)) / n)
        return np.where(self.plays > 0, self.means + bonus, np.inf)

    def _choose(self) -> int:  # every arm has been played here
        return int(np.argmax(self.means + self.c * np.sqrt(2.0 * math.log(self.t) / self.plays)))

    def _learn(self, arm: int, reward: float) -> None:
        self.means[arm] += (reward - self.means[arm]) / self.plays[arm]


class EpsilonGreedy(BanditPolicy):
    """Epsilon-greedy: the arm with the best empirical mean, or a uniform arm with probability
    ``eps_t = max(eps_min, eps * decay**t)`` (stationary: plain sample means)."""

    name = "eps-greedy"

    def __init__(self, n_arms: int, eps: float = 0.1, decay: float = 1.0, eps_min: float = 0.0,
                 rng: RngLike = None) -> None:
        super().__init__(n_arms, rng)
        self.eps = check_in_range(eps, "eps", 0.0, 1.0, closed=(True, True))
        self.decay = check_in_range(decay, "decay", 0.0, 1.0, closed=(False, True))
        self.eps_min = check_in_range(eps_min, "eps_min", 0.0, 1.0, closed=(True, True))
        self.means = np.zeros(self.n_arms)

    def epsilon(self) -> float:
        """The exploration probability at the current step."""
        return max(self.eps_min, self.eps * self.decay ** self.t)

    def _choose(self) -> int:
        if self.rng.random() < self.epsilon():
            return int(self.rng.integers(self.n_arms))
        return int(np.argmax(self.means))

    def _learn(self, arm: int, reward: float) -> None:
        self.means[arm] += (reward - self.means[arm]) / self.plays[arm]


class DiscountedUCB(BanditPolicy):
    """Discounted UCB (Garivier & Moulines 2011) with an epsilon-greedy layer: one MAT-Agent agent.

    Statistics forget geometrically: after each play ``N <- gamma N + 1{a}``,
    ``S <- gamma S + r 1{a}``. An untried arm is played first; otherwise, with probability
    ``eps_t = max(eps_min, eps0 * rho**t)`` a uniform arm, else
    ``argmax S/N + c sqrt(2 ln(sum N) / N)``. ``gamma = 1, eps0 = 0`` is UCB1. The mix of
    epsilon-greedy and UCB is the NeurIPS abstract's "non-stationary multi-armed bandit
    integrating epsilon-greedy and upper confidence bound strategies" (our reconstruction).

    Parameters
    ----------
    n_arms : int
    gamma : float in (0, 1]
        Discount factor; the effective memory is about ``1 / (1 - gamma)`` plays.
    c : float >= 0
        Exploration constant, in units of the reward.
    eps0, rho, eps_min : float
        The epsilon schedule (``eps0 = 0`` switches the layer off).
    """

    name = "D-UCB"

    def __init__(self, n_arms: int, gamma: float = 0.9, c: float = 1.0, eps0: float = 0.0,
                 rho: float = 1.0, eps_min: float = 0.0, rng: RngLike = None) -> None:
        super().__init__(n_arms, rng)
        self.gamma = check_in_range(gamma, "gamma", 0.0, 1.0, closed=(False, True))
        self.c = check_positive(c, "c", allow_zero=True)
        self.eps0 = check_in_range(eps0, "eps0", 0.0, 1.0, closed=(True, True))
        self.rho = check_in_range(rho, "rho", 0.0, 1.0, closed=(False, True))
        self.eps_min = check_in_range(eps_min, "eps_min", 0.0, 1.0, closed=(True, True))
        self.N = np.zeros(self.n_arms)
        self.S = np.zeros(self.n_arms)

    def epsilon(self) -> float:
        """The exploration probability at the current step."""
        return max(self.eps_min, self.eps0 * self.rho ** self.t)

    def index(self) -> np.ndarray:
        """Discounted mean plus exploration bonus of every arm (inf where ``N`` is 0)."""
        total = max(float(self.N.sum()), 1.0)
        n = np.where(self.N > 0, self.N, 1.0)
        idx = self.S / n + self.c * np.sqrt(2.0 * math.log(total) / n)
        return np.where(self.N > 0, idx, np.inf)

    def _choose(self) -> int:
        if self.eps0 > 0 and self.rng.random() < self.epsilon():
            return int(self.rng.integers(self.n_arms))
        if self.N.min() <= 0.0:  # an arm forgotten to underflow counts as untried
            return int(np.argmin(self.N))
        return int(np.argmax(self.S / self.N + self.c * np.sqrt(2.0 * math.log(max(self.N.sum(), 1.0)) / self.N)))

    def _learn(self, arm: int, reward: float) -> None:
        self.N *= self.gamma
        self.S *= self.gamma
        self.N[arm] += 1.0
        self.S[arm] += reward


class SlidingWindowUCB(BanditPolicy):
    """Sliding-window UCB (Garivier & Moulines 2011): UCB over the last ``window`` plays only,
    ``mean_W + c sqrt(2 ln min(t, W) / N_W)``; an arm absent from the window is played."""

    name = "SW-UCB"

    def __init__(self, n_arms: int, window: int = 200, c: float = 1.0, rng: RngLike = None) -> None:
        super().__init__(n_arms, rng)
        self.window = check_int(window, "window", minimum=1)
        self.c = check_positive(c, "c", allow_zero=True)
        self._hist: deque[tuple[int, float]] = deque()
        self.N = np.zeros(self.n_arms)
        self.S = np.zeros(self.n_arms)

    def index(self) -> np.ndarray:
        """Window mean plus bonus (inf for an arm not played in the window)."""
        n = np.where(self.N > 0, self.N, 1.0)
        idx = self.S / n + self.c * np.sqrt(2.0 * math.log(max(min(self.t, self.window), 1)) / n)
        return np.where(self.N > 0, idx, np.inf)

    def _choose(self) -> int:
        if self.N.min() <= 0.0:
            return int(np.argmin(self.N))
        return int(np.argmax(self.S / self.N + self.c * np.sqrt(2.0 * math.log(min(self.t, self.window)) / self.N)))

    def _learn(self, arm: int, reward: float) -> None:
        self._hist.append((arm, reward))
        self.N[arm] += 1.0
        self.S[arm] += reward
        if len(self._hist) > self.window:
            old, r_old = self._hist.popleft()
            self.N[old] -= 1.0
            self.S[old] -= r_old
            if self.N[old] < 0.5:  # exact zero, no rounding residue in S
                self.N[old], self.S[old] = 0.0, 0.0


class RandomPolicy(BanditPolicy):
    """A uniformly random arm every step (the "random per epoch" baseline)."""

    name = "random"

    def select(self) -> int:
        return int(self.rng.integers(self.n_arms))

    def _learn(self, arm: int, reward: float) -> None:
        return None


class FixedPolicy(BanditPolicy):
    """Always the same arm (a static configuration)."""

    name = "static"

    def __init__(self, n_arms: int, arm: int = 0) -> None:
        super().__init__(n_arms, None)
        self.arm = _check_arm(arm, self.n_arms)

    def select(self) -> int:
        return self.arm

    def _learn(self, arm: int, reward: float) -> None:
        return None


# ---------------------------------------------------------------- piecewise-stationary bandit


def piecewise_means(n_arms: int = 5, horizon: int = 6000, period: int = 600, low: float = 0.2,
                    high: float = 0.8, rng: RngLike = None) -> np.ndarray:
    """Arm means redrawn from U(low, high) every ``period`` steps: array of shape (horizon, n_arms)."""
    n_arms = check_int(n_arms, "n_arms", minimum=2)
    horizon = check_int(horizon, "horizon", minimum=1)
    period = check_int(period, "period", minimum=1)
    low = check_in_range(low, "low", -1e6, 1e6)
    high = check_in_range(high, "high", low, 1e6)
    gen = as_rng(rng)
    blocks = gen.uniform(low, high, size=(-(-horizon // period), n_arms))
    return np.repeat(blocks, period, axis=0)[:horizon]


def simulate_bandit(policy: BanditPolicy, means: np.ndarray, noise: float = 0.2,
                    rng: RngLike = None) -> Trace:
    """Play ``policy`` on Gaussian arms with time-varying ``means`` (shape (T, K)).

    Returns a Trace with per-step ``arm``, ``reward`` and cumulative pseudo-regret
    ``regret`` = sum_t (max_a mu_t(a) - mu_t(a_t)); ``objective`` is the cumulative regret too.
    """
    means = np.asarray(means, dtype=float)
    if means.ndim != 2 or means.shape[1] != policy.n_arms or means.shape[0] < 1:
        raise ValueError(f"means must have shape (T, {policy.n_arms}), got {means.shape}")
    if not np.isfinite(means).all():
        raise ValueError("means must be finite")
    noise = check_positive(noise, "noise", allow_zero=True)
    gen = as_rng(rng)
    T = means.shape[0]
    eps = gen.standard_normal(T) * noise
    best = means.max(axis=1)
    arms = np.empty(T, dtype=int)
    for t in range(T):
        a = policy.select()
        arms[t] = a
        policy.update(a, means[t, a] + eps[t])
    gaps = best - means[np.arange(T), arms]
    regret = np.cumsum(gaps)
    return Trace.from_dict({"method": policy.name, "meta": {"noise": noise},
                            "iteration": list(range(T)), "objective": regret.tolist(),
                            "regret": regret.tolist(), "arm": arms.astype(float).tolist()})


def make_policy(kind: str, n_arms: int, *, c: float = 0.1, gamma: float = 0.99, window: int = 200,
                eps: float = 0.05, rng: RngLike = None) -> BanditPolicy:
    """A policy by name: "UCB1", "eps-greedy", "D-UCB", "D-UCB+eps", "SW-UCB", "random"."""
    if kind == "UCB1":
        return UCB1(n_arms, c=c, rng=rng)
    if kind == "eps-greedy":
        return EpsilonGreedy(n_arms, eps=eps, rng=rng)
    if kind == "D-UCB":
        return DiscountedUCB(n_arms, gamma=gamma, c=c, rng=rng)
    if kind == "D-UCB+eps":
        p = DiscountedUCB(n_arms, gamma=gamma, c=c, eps0=eps, eps_min=eps, rng=rng)
        p.name = "D-UCB+eps"
        return p
    if kind == "SW-UCB":
        return SlidingWindowUCB(n_arms, window=window, c=c, rng=rng)
    if kind == "random":
        return RandomPolicy(n_arms, rng=rng)
    raise ValueError(f"kind must be one of UCB1, eps-greedy, D-UCB, D-UCB+eps, SW-UCB, random; got {kind!r}")
