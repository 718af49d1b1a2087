"""Controllers for the liquid-cooling surrogate (chapter 32): rule, PI, a learned policy, its tree.

* :class:`RulePolicy` - the "Guideline-36 style" baseline: fixed supply setpoint and flow, equal
  valves, CT setpoint = wet bulb + 10 F (+ a fixed offset; 0 is the repo's rule).
* :class:`ScheduledRulePolicy` - the rule with the pump flow scheduled on the cabinet's load
  (a referee's check of where the learned policy's saving comes from).
* :class:`PIPolicy` - positional PI on the hottest blade's headroom, acting on the CT setpoint
  delta (hence on the supply temperature), with clamping anti-windup.
* :class:`SharedLinearPolicy` - the learned policy: one linear-tanh map shared by every cabinet on
  its local features (the parameter sharing of the paper's centralised-action agents), plus a
  CT head on plant-wide features. Trained by the cross-entropy method (:func:`cem`), our CPU
  substitute for the paper's PPO.
* :func:`distill` - a depth-limited scikit-learn regression tree fitted to the learned policy's
  actions on the states it visits, then on the tree's own states relabelled by the teacher
  (DAgger), as VIPER does without its Q-weighting.
"""
from __future__ import annotations

import dataclasses

import numpy as np
from sklearn.metrics import r2_score
from sklearn.tree import DecisionTreeRegressor

from ..core import as_rng, check_int, check_positive
from .cooling_env import CoolingParams, make_workloads, rollout, unscale_action

#: Penalty (kWh per K*min above the training limit) in the learned policy's training objective.
VIOLATION_PRICE = 10.0


class RulePolicy:
    """Constant setpoints: supply ``ts`` (C), flow fraction ``flow``, equal valves, CT delta ``delta`` (K)."""

    def __init__(self, p: CoolingParams, ts: float = 32.0, flow: float = 1.0, delta: float = 0.0):
        if not p.ts_low <= ts <= p.ts_high:
            raise ValueError(f"ts must lie in [{p.ts_low}, {p.ts_high}], got {ts}")
        if not p.flow_low <= flow <= p.flow_high:
            raise ValueError(f"flow must lie in [{p.flow_low}, {p.flow_high}], got {flow}")
        if not p.delta_low <= delta <= p.delta_high:
            raise ValueError(f"delta must lie in [{p.delta_low}, {p.delta_high}], got {delta}")
        C, J = p.n_cabinets, p.n_blades
        self.action = unscale_action(np.full(C, ts), np.full(C, flow), np.ones((C, J)), delta, p)

    def __call__(self, obs: np.ndarray) -> np.ndarray:
        return np.tile(self.action, (obs.shape[0], 1))


class ScheduledRulePolicy:
    """The rule with a load schedule on the pumps: each cabinet's flow fraction is
    ``clip(gain * max_j P_ij / p_max, flow_low, flow_high)`` (its busiest blade group sets the
    flow); supply ``ts``, equal valves and CT ``delta`` stay fixed as in :class:`RulePolicy`."""

    def __init__(self, p: CoolingParams, gain: float = 1.2, ts: float = 32.0, delta: float = 0.0):
        self.p, self.gain = p, check_positive(gain, "gain")
        self.base = RulePolicy(p, ts=ts, flow=1.0, delta=delta).action

    def __call__(self, obs: np.ndarray) -> np.ndarray:
        p, b = self.p, obs.shape[0]
        n = p.n_cabinets * p.n_blades
        share = (obs[:, n: 2 * n].reshape(b, p.n_cabinets, p.n_blades).max(axis=2) + 1) / 2
        flow = np.clip(self.gain * share, p.flow_low, p.flow_high)
        act = np.tile(self.base, (b, 1))
        cab = act[:, :-1].reshape(b, p.n_cabinets, 2 + p.n_blades)
        cab[:, :, 1] = 2 * (flow - p.flow_low) / (p.flow_high - p.flow_low) - 1
        return act


class PIPolicy:
    """Positional PI: ``delta = kp e + ki sum(e)`` with ``e = (t_max - margin) - max_j T_ij`` (K).

    Positive headroom raises the CT setpoint (warmer water, less fan power); the integral is
    clamped so the output stays in the delta range (anti-windup). Supply setpoint at its lowest
    (the coolant follows the tower), flow ``flow``, equal valves.
    """

    def __init__(self, p: CoolingParams, kp: float = 0.5, ki: float = 0.05, flow: float = 1.0, margin: float = 3.0):
        self.p, self.kp, self.ki = p, check_positive(kp, "kp"), check_positive(ki, "ki", allow_zero=True)
        self.margin = check_positive(margin, "margin", allow_zero=True)
        if not p.flow_low <= flow <= p.flow_high:
            raise ValueError(f"flow must lie in [{p.flow_low}, {p.flow_high}], got {flow}")
        C, J = p.n_cabinets, p.n_blades
        self.base = unscale_action(np.full(C, p.ts_low), np.full(C, flow), np.ones((C, J)), 0.0, p)
        self.integral = np.zeros(1)

    def reset(self, batch: int) -> None:
        """Zero the integral term for ``batch`` parallel rollouts."""
        self.integral = np.zeros(batch)

    def __call__(self, obs: np.ndarray) -> np.ndarray:
        p = self.p
        hottest = 40.0 + 20.0 * obs[:, : p.n_cabinets * p.n_blades].max(axis=1)
        e = (p.t_max - self.margin) - hottest
        if self.integral.shape != e.shape:
            self.reset(e.shape[0])
        if self.ki > 0:  # clamp the integral so that ki * I alone stays within the delta range
            self.integral = np.clip(self.integral + e, p.delta_low / self.ki, p.delta_high / self.ki)
        delta = np.clip(self.kp * e + self.ki * self.integral, p.delta_low, p.delta_high)
        act = np.tile(self.base, (obs.shape[0], 1))
        mid, half = 0.5 * (p.delta_low + p.delta_high), 0.5 * (p.delta_high - p.delta_low)
        act[:, -1] = (delta - mid) / half
        return act


class RandomPolicy:
    """Uniform random actions (the control): a fresh draw every step from its own generator."""

    def __init__(self, p: CoolingParams, rng=None):
        self.p, self.rng = p, as_rng(rng)

    def __call__(self, obs: np.ndarray) -> np.ndarray:
        return self.rng.uniform(-1, 1, (obs.shape[0], self.p.n_act))


# --------------------------------------------------------------------------- features
def cabinet_features(obs: np.ndarray, p: CoolingParams) -> np.ndarray:
    """Local features of each cabinet ``(B, C, 2J+3)``: its blade temperatures and powers
    (normalised), the wet bulb and the time of day; the same layout for every cabinet."""
    b, C, J = obs.shape[0], p.n_cabinets, p.n_blades
    temps = obs[:, : C * J].reshape(b, C, J)
    power = obs[:, C * J: 2 * C * J].reshape(b, C, J)
    shared = np.broadcast_to(obs[:, None, 2 * C * J:], (b, C, 3))
    return np.concatenate([temps, power, shared], axis=2)


def plant_features(obs: np.ndarray, p: CoolingParams) -> np.ndarray:
    """Plant-wide features ``(B, 5)`` for the CT head: mean power, hottest blade, wet bulb, time."""
    n = p.n_cabinets * p.n_blades
    return np.concatenate([obs[:, n: 2 * n].mean(axis=1, keepdims=True), obs[:, :n].max(axis=1, keepdims=True),
                           obs[:, 2 * n:]], axis=1)


def cabinet_feature_names(p: CoolingParams) -> list[str]:
    """Names of :func:`cabinet_features`' columns (blade temperatures, blade powers, weather, hour)."""
    return ([f"T{j + 1}" for j in range(p.n_blades)] + [f"P{j + 1}" for j in range(p.n_blades)]
            + ["wet bulb", "sin(hour)", "cos(hour)"])


PLANT_FEATURES = ("mean power", "hottest blade", "wet bulb", "sin(hour)", "cos(hour)")


class SharedLinearPolicy:
    """``a_cab,i = tanh([phi_i, 1] W)`` for every cabinet ``i`` (shared ``W``), ``a_ct = tanh([psi, 1] w)``.

    ``theta`` is one parameter vector ``(n_params,)`` or a population ``(K, n_params)``; a
    population policy acts on a batch of ``K * days`` observations ordered candidate-major.
    """

    def __init__(self, theta: np.ndarray, p: CoolingParams):
        self.p = p
        theta = np.asarray(theta, dtype=float)
        if theta.shape[-1] != self.n_params(p) or theta.ndim > 2 or not np.all(np.isfinite(theta)):
            raise ValueError(f"theta must have last dimension {self.n_params(p)} and be finite, got shape {theta.shape}")
        self.theta = np.atleast_2d(theta)

    @staticmethod
    def n_params(p: CoolingParams) -> int:
        return (2 * p.n_blades + 4) * (2 + p.n_blades) + len(PLANT_FEATURES) + 1

    def __call__(self, obs: np.ndarray) -> np.ndarray:
        p, k = self.p, self.theta.shape[0]
        b, C = obs.shape[0], p.n_cabinets
        if b % k:
            raise ValueError(f"batch {b} is not a multiple of the population size {k}")
        f, m = 2 * p.n_blades + 4, 2 + p.n_blades
        w_cab = self.theta[:, : f * m].reshape(k, f, m)
        w_ct = self.theta[:, f * m:, None]
        phi = cabinet_features(obs, p).reshape(k, (b // k) * C, f - 1)
        psi = plant_features(obs, p).reshape(k, b // k, -1)
        cab = np.tanh(phi @ w_cab[:, :-1] + w_cab[:, -1:]).reshape(b, C * m)
        ct = np.tanh(psi @ w_ct[:, :-1] + w_ct[:, -1:]).reshape(b, 1)
        return np.concatenate([cab, ct], axis=1)


@dataclasses.dataclass
class CEMResult:
    theta: np.ndarray
    history: np.ndarray       # best and mean elite score per iteration
    evaluations: int


def training_score(out: dict, price: float = VIOLATION_PRICE) -> np.ndarray:
    """Energy (kWh) plus ``price`` per K*min above the training limit."""
    return out["energy"] + price * out["violation"]


def cem(p: CoolingParams, days, *, iterations: int = 15, population: int = 32, elite_frac: float = 0.25,
        init_std: float = 0.5, margin: float = 3.0, init: np.ndarray | None = None, price: float = VIOLATION_PRICE,
        rng=None) -> CEMResult:
    """Cross-entropy method on :class:`SharedLinearPolicy` (our CPU stand-in for the paper's PPO).

    Each candidate is scored on the training ``days`` (workload seeds) by :func:`training_score`
    (``price`` kWh per K*min) with the limit lowered by ``margin`` K (a safety margin for unseen days); the next sampling
    distribution is the elites' mean and standard deviation (plus a small noise floor). The
    search starts at ``init`` (default: zero parameters).
    """
    return cem_runs(p, days, (margin,), iterations=iterations, population=population, elite_frac=elite_frac,
                    init_std=init_std, init=init, price=price, rng=rng)[0]


def cem_runs(p: CoolingParams, days, margins, *, iterations: int = 15, population: int = 32,
             elite_frac: float = 0.25, init_std: float = 0.5, init: np.ndarray | None = None,
             price: float = VIOLATION_PRICE, rng=None) -> list[CEMResult]:
    """Independent :func:`cem` runs, one per safety margin in ``margins``, simulated in lockstep
    (all populations in one batched rollout). Each run draws from its own ``as_rng(rng)``, so with
    an integer seed every run equals ``cem(..., margin=m, rng=seed)`` exactly."""
    iterations = check_int(iterations, "iterations", minimum=1)
    population = check_int(population, "population", minimum=4)
    if not 0 < elite_frac < 1:
        raise ValueError(f"elite_frac must lie in (0, 1), got {elite_frac}")
    check_positive(init_std, "init_std")
    margins = [check_positive(m, "margin", allow_zero=True) for m in np.atleast_1d(margins)]
    if not margins:
        raise ValueError("margins must not be empty")
    gens = [as_rng(rng) for _ in margins]
    power, wet = make_workloads(days, p)
    n_days, runs = power.shape[0], len(margins)
    k = runs * population
    power_k, wet_k = np.tile(power, (k, 1, 1, 1, 1)).reshape(-1, *power.shape[1:]), np.tile(wet, (k, 1))
    limits = np.repeat([p.t_max - m for m in margins], population * n_days)
    n = SharedLinearPolicy.n_params(p)
    start = np.zeros(n) if init is None else np.asarray(init, float).copy()
    if start.shape != (n,) or not np.all(np.isfinite(start)):
        raise ValueError(f"init must be {n} finite numbers, got shape {start.shape}")
    mean, std = [start.copy() for _ in margins], [np.full(n, init_std) for _ in margins]
    n_elite = max(2, int(round(elite_frac * population)))
    hist, best, best_score = [[] for _ in margins], [start.copy() for _ in margins], [np.inf] * runs
    for it in range(iterations):
        cands = []
        for r, g in enumerate(gens):
            cand = mean[r] + std[r] * g.standard_normal((population, n))
            cand[0] = mean[r] if it else cand[0]
            cands.append(cand)
        out = rollout(SharedLinearPolicy(np.concatenate(cands), p), power_k, wet_k, p, t_max=limits)
        all_scores = np.median(training_score(out, price).reshape(runs, population, n_days), axis=2)
        for r, (cand, scores) in enumerate(zip(cands, all_scores)):
            order = np.argsort(scores)
            if scores[order[0]] < best_score[r]:
                best[r], best_score[r] = cand[order[0]].copy(), float(scores[order[0]])
            elite = cand[order[:n_elite]]
            mean[r], std[r] = elite.mean(axis=0), elite.std(axis=0) + 0.02 * init_std
            hist[r].append((scores[order[0]], scores[order[:n_elite]].mean()))
    return [CEMResult(best[r], np.array(hist[r]), iterations * population * n_days) for r in range(runs)]


# --------------------------------------------------------------------------- distillation
class TreePolicy:
    """A distilled policy: one regression tree for the cabinet actions (shared by the cabinets,
    on the same local features as the teacher) and one for the CT delta."""

    def __init__(self, cab_tree: DecisionTreeRegressor, ct_tree: DecisionTreeRegressor, p: CoolingParams):
        self.cab_tree, self.ct_tree, self.p = cab_tree, ct_tree, p

    def __call__(self, obs: np.ndarray) -> np.ndarray:
        b, C = obs.shape[0], self.p.n_cabinets
        phi = cabinet_features(obs, self.p).reshape(b * C, -1)
        cab = _predict(self.cab_tree, phi).reshape(b, -1)
        ct = _predict(self.ct_tree, plant_features(obs, self.p))
        return np.concatenate([cab, ct[:, None]], axis=1)


def _predict(t: DecisionTreeRegressor, x: np.ndarray) -> np.ndarray:
    """``t.predict(x)`` without scikit-learn's per-call input validation (the same float32 cast
    and the same numbers; called once per simulated step, where the validation dominated)."""
    out = t.tree_.predict(np.ascontiguousarray(x, dtype=np.float32))
    return out[:, 0] if t.n_outputs_ == 1 else out[:, :, 0]


def _labels(teacher: SharedLinearPolicy, obs: np.ndarray, p: CoolingParams):
    a = teacher(obs)
    b, C = obs.shape[0], p.n_cabinets
    return (cabinet_features(obs, p).reshape(b * C, -1), a[:, :-1].reshape(b * C, -1),
            plant_features(obs, p), a[:, -1])


def _fit(depth: int | None, x, y, seed: int) -> DecisionTreeRegressor:
    return DecisionTreeRegressor(max_depth=depth, random_state=seed).fit(x, y)


def distill(teacher: SharedLinearPolicy, p: CoolingParams, days, depth: int = 3, dagger_rounds: int = 2,
            seed: int = 0) -> TreePolicy:
    """Fit depth-``depth`` trees to the teacher's actions (VIPER-style distillation, plain DAgger).

    Round 0 uses the states the teacher visits on ``days``; each further round rolls out the
    current tree, labels the states *it* visits with the teacher's actions, aggregates and refits.
    ``depth=0`` gives a constant policy (the teacher's mean action).
    """
    depth = check_int(depth, "depth", minimum=0)
    dagger_rounds = check_int(dagger_rounds, "dagger_rounds", minimum=0)
    power, wet = make_workloads(days, p)
    obs = rollout(teacher, power, wet, p, record=True)["obs"].reshape(-1, p.n_obs)
    data = [_labels(teacher, obs, p)]
    for r in range(dagger_rounds + 1):
        xc, yc, xt, yt = (np.concatenate(parts) for parts in zip(*data))
        if depth == 0:
            cab = DecisionTreeRegressor(max_depth=1, min_samples_leaf=len(xc), random_state=seed).fit(xc, yc)
            ct = DecisionTreeRegressor(max_depth=1, min_samples_leaf=len(xt), random_state=seed).fit(xt, yt)
        else:
            cab, ct = _fit(depth, xc, yc, seed), _fit(depth, xt, yt, seed)
        student = TreePolicy(cab, ct, p)
        if r < dagger_rounds:
            obs = rollout(student, power, wet, p, record=True)["obs"].reshape(-1, p.n_obs)
            data.append(_labels(teacher, obs, p))
    return student


def fidelity(student: TreePolicy, teacher: SharedLinearPolicy, obs: np.ndarray) -> float:
    """R^2 of the student's actions against the teacher's on the given states (all action
    dimensions pooled, variance-weighted)."""
    return float(r2_score(teacher(obs), student(obs), multioutput="variance_weighted"))
