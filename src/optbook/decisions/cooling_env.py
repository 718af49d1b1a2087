"""A reduced-order liquid-cooling plant as a ``gymnasium.Env`` (chapter 32, LC-Opt).

LC-Opt (Naug et al., NeurIPS 2025 Datasets & Benchmarks) wraps a Modelica digital twin of the
Frontier supercomputer's cooling plant, from the cooling tower (CT) down to cabinets and server
blade groups, as a Gymnasium environment. That model needs a compiled FMU; this module is a
**reduced-order surrogate** built from the equations the benchmark documents, with constants of
our own choosing (a property of the toy, not of Frontier).

Physics (units: kW, kW/K, kJ/K, degrees C, seconds), for cabinet ``i`` and blade group ``j``:

* blade group: ``C_th dT_ij/dt = P_ij(t) - G(m_ij) (T_ij - Ts_i)``, integrated **exactly** over a
  step of ``dt`` seconds for piecewise-constant inputs (so any ``dt`` is stable);
* conductance ``G(m) = g0 (m/m0)^0.8`` (turbulent convection), flow split by the valves
  ``m_ij = m_i s_ij`` with shares ``s_ij = (v_ij + eps) / sum_j (v_ij + eps)``;
* pump (affinity law): ``P_pump,i = pump_p0 f_i^3``, ``f_i`` the cabinet flow over nominal;
* cooling tower: its leaving-water setpoint is the repo's rule ``T_wb + 10 F`` plus a discrete
  delta (the CT agent's action); the coolant cannot be colder than that water plus the heat
  exchanger's approach: ``Ts_i = max(Ts_set,i, T_ct + dt_hx)``;
* fan: ``P_fan = min(fan_max, fan_p0 (Q/q0)^3 (a0/A)^3)`` with ``A = T_ct - T_wb`` the tower's
  approach and ``Q`` the heat the coolant carried away during the step (exact energy balance).

Everything is vectorised over a leading batch axis, so that a population of policies (the
cross-entropy method) or several workloads run in one numpy call per time step.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import gymnasium as gym
import numpy as np

from ..core import check_int, check_positive, check_real

#: The repo's cooling-tower rule: leaving-water setpoint = wet bulb + 10 degrees F.
CT_RULE_OFFSET = 50.0 / 9.0
Policy = Callable[[np.ndarray], np.ndarray]


@dataclass(frozen=True)
class CoolingParams:
    """Constants of the surrogate plant (our choices; the repo's where it gives them)."""

    n_cabinets: int = 3
    n_blades: int = 3
    dt: float = 300.0            # s per control step
    horizon: int = 288           # steps per episode (24 h at 5 min)
    p_max: float = 340.0         # kW, the repo's upper blade-group power
    g0: float = 13.6             # kW/K at nominal blade-group flow
    flow_exp: float = 0.8        # G ~ m^0.8 (Dittus-Boelter)
    c_th: float = 8000.0         # kJ/K, blade-group heat capacity (time constant ~10 min)
    t_max: float = 55.0          # degrees C, blade temperature limit
    ts_low: float = 20.0         # supply setpoint range (repo: 20-40 C)
    ts_high: float = 40.0
    flow_low: float = 0.3        # cabinet flow as a fraction of nominal
    flow_high: float = 1.2
    valve_eps: float = 0.05      # leak through a closed valve (keeps every share > 0)
    pump_p0: float = 5.0         # kW per cabinet at nominal flow
    fan_p0: float = 40.0         # kW at heat q0 and approach a0
    fan_max: float = 120.0
    a0: float = CT_RULE_OFFSET   # K, the rule's approach
    a_min: float = 1.5           # K, smallest approach the tower can reach
    dt_hx: float = 3.0           # K, heat-exchanger approach (facility water -> coolant)
    delta_low: int = -2          # CT setpoint delta levels (K), integers
    delta_high: int = 8
    ct_min: float = 280.0 - 273.15   # repo: CT setpoint in 280-305 K
    ct_max: float = 305.0 - 273.15

    def __post_init__(self) -> None:
        check_int(self.n_cabinets, "n_cabinets", minimum=1)
        check_int(self.n_blades, "n_blades", minimum=1)
        check_int(self.horizon, "horizon", minimum=1)
        for name in ("dt", "p_max", "g0", "flow_exp", "c_th", "pump_p0", "fan_p0", "fan_max", "a0", "a_min",
                     "valve_eps", "dt_hx"):
            check_positive(getattr(self, name), name)
        for name in ("t_max", "ts_low", "ts_high", "flow_low", "flow_high", "ct_min", "ct_max"):
            check_real(getattr(self, name), name)
        for name in ("delta_low", "delta_high"):
            if isinstance(getattr(self, name), bool) or not isinstance(getattr(self, name), (int, np.integer)):
                raise ValueError(f"{name} must be an integer, got {getattr(self, name)!r}")
        if not (self.ts_low < self.ts_high and 0 < self.flow_low < self.flow_high and self.delta_low < self.delta_high):
            raise ValueError("action ranges must have low < high (ts, flow, delta) and flow_low > 0")

    @property
    def q0(self) -> float:
        """Reference heat for the fan law: 60% of the peak IT power."""
        return 0.6 * self.p_max * self.n_cabinets * self.n_blades

    @property
    def n_obs(self) -> int:
        return 2 * self.n_cabinets * self.n_blades + 3

    @property
    def n_act(self) -> int:
        return self.n_cabinets * (2 + self.n_blades) + 1


# --------------------------------------------------------------------------- actions
def scale_action(a: np.ndarray, p: CoolingParams) -> dict[str, np.ndarray]:
    """Map actions in [-1, 1] (shape ``(..., n_act)``) to physical setpoints.

    Per cabinet: supply setpoint (C), flow fraction, ``n_blades`` valve openings in [0, 1];
    last entry: the CT delta (K), rounded to the integer levels ``delta_low..delta_high``.
    Out-of-range actions are clipped.
    """
    a = np.clip(np.asarray(a, dtype=float), -1.0, 1.0)
    if a.shape[-1] != p.n_act:
        raise ValueError(f"action must have last dimension {p.n_act}, got shape {a.shape}")
    cab = a[..., :-1].reshape(a.shape[:-1] + (p.n_cabinets, 2 + p.n_blades))
    mid = 0.5 * (p.delta_low + p.delta_high)
    half = 0.5 * (p.delta_high - p.delta_low)
    return {"ts_set": p.ts_low + (cab[..., 0] + 1) * 0.5 * (p.ts_high - p.ts_low),
            "flow": p.flow_low + (cab[..., 1] + 1) * 0.5 * (p.flow_high - p.flow_low),
            "valves": (cab[..., 2:] + 1) * 0.5,
            "delta": np.rint(mid + half * a[..., -1])}


def unscale_action(ts_set, flow, valves, delta, p: CoolingParams) -> np.ndarray:
    """Inverse of :func:`scale_action`: physical setpoints -> actions in [-1, 1].

    ``ts_set``, ``flow``: shape ``(..., n_cabinets)``; ``valves``: ``(..., n_cabinets, n_blades)``;
    ``delta``: shape ``(...)``.
    """
    ts = 2 * (np.asarray(ts_set, float) - p.ts_low) / (p.ts_high - p.ts_low) - 1
    fl = 2 * (np.asarray(flow, float) - p.flow_low) / (p.flow_high - p.flow_low) - 1
    va = 2 * np.asarray(valves, float) - 1
    mid, half = 0.5 * (p.delta_low + p.delta_high), 0.5 * (p.delta_high - p.delta_low)
    de = (np.asarray(delta, float) - mid) / half
    cab = np.concatenate([ts[..., None], fl[..., None], va], axis=-1)
    return np.concatenate([cab.reshape(cab.shape[:-2] + (-1,)), de[..., None]], axis=-1)


def valve_shares(valves: np.ndarray, eps: float) -> np.ndarray:
    """Flow shares of the blade groups in a cabinet (last axis sums to 1)."""
    w = np.asarray(valves, float) + eps
    return w / w.sum(axis=-1, keepdims=True)


def conductance(rel_flow: np.ndarray, p: CoolingParams) -> np.ndarray:
    """``G(m) = g0 (m/m0)^0.8`` in kW/K, ``rel_flow = m/m0`` per blade group."""
    return p.g0 * np.power(np.maximum(rel_flow, 0.0), p.flow_exp)


# --------------------------------------------------------------------------- physics
def blade_flows(phys: dict[str, np.ndarray], p: CoolingParams) -> np.ndarray:
    """Blade-group flow over its nominal: ``f_i * J * s_ij`` (nominal cabinet flow = J m0)."""
    return phys["flow"][..., None] * p.n_blades * valve_shares(phys["valves"], p.valve_eps)


def supply_temperature(phys: dict[str, np.ndarray], wetbulb: np.ndarray, p: CoolingParams):
    """CT leaving water (C) and the coolant supply temperature of each cabinet (C)."""
    t_ct = np.clip(np.asarray(wetbulb, float) + CT_RULE_OFFSET + phys["delta"], p.ct_min, p.ct_max)
    ts = np.maximum(phys["ts_set"], t_ct[..., None] + p.dt_hx)
    return t_ct, ts


def step_physics(temps: np.ndarray, action: np.ndarray, power: np.ndarray, wetbulb: np.ndarray,
                 p: CoolingParams) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """Advance blade temperatures by one step; return them and the step's powers (kW).

    ``temps``, ``power``: shape ``(B, C, J)``; ``action``: ``(B, n_act)`` in [-1, 1];
    ``wetbulb``: ``(B,)``. The update is the exact solution of the linear ODE over ``dt``.
    """
    phys = scale_action(action, p)
    t_ct, ts = supply_temperature(phys, wetbulb, p)
    g = conductance(blade_flows(phys, p), p)
    x = g * p.dt / p.c_th
    phi = np.where(x > 1e-12, -np.expm1(-x) / np.where(x > 1e-12, x, 1.0), 1.0)  # (1 - e^-x)/x
    new = temps + (power - g * (temps - ts[..., None])) * (p.dt / p.c_th) * phi
    heat = (power * p.dt - p.c_th * (new - temps)).sum(axis=(-1, -2)) / p.dt  # kW removed by the coolant
    approach = np.maximum(t_ct - wetbulb, p.a_min)
    fan = np.minimum(p.fan_max, p.fan_p0 * (np.maximum(heat, 0.0) / p.q0) ** 3 * (p.a0 / approach) ** 3)
    pump = (p.pump_p0 * phys["flow"] ** 3).sum(axis=-1)
    return new, {"heat": heat, "fan": fan, "pump": pump, "ts": ts, "t_ct": t_ct, "flow": phys["flow"],
                 "delta": phys["delta"]}


def steady_state(power: np.ndarray, ts: np.ndarray, rel_flow: np.ndarray, p: CoolingParams) -> np.ndarray:
    """Blade temperature at equilibrium: ``T = Ts + P / G(m)``."""
    return np.asarray(ts, float)[..., None] + power / conductance(rel_flow, p)


def observe(temps: np.ndarray, power: np.ndarray, wetbulb: np.ndarray, step: int, p: CoolingParams) -> np.ndarray:
    """Normalised observation ``(B, n_obs)``: blade temperatures ``(T-40)/20``, powers ``2P/p_max-1``,
    wet bulb ``(T_wb-20)/4`` and the time of day as (sin, cos); clipped to [-10, 10]."""
    b = temps.shape[0]
    hour = 2 * np.pi * step * p.dt / 86400.0
    cols = [((temps - 40.0) / 20.0).reshape(b, -1), (2 * power / p.p_max - 1).reshape(b, -1),
            ((wetbulb - 20.0) / 4.0)[:, None], np.full((b, 1), np.sin(hour)), np.full((b, 1), np.cos(hour))]
    return np.clip(np.concatenate(cols, axis=1), -10.0, 10.0)


# --------------------------------------------------------------------------- exogenous inputs
def make_workload(seed: int, p: CoolingParams = CoolingParams()) -> tuple[np.ndarray, np.ndarray]:
    """One day of blade-group powers ``(H, C, J)`` in kW and wet-bulb temperatures ``(H,)`` in C.

    A daily sinusoid per cabinet (random phase), a random scale per blade group, bursty jobs
    (Poisson arrivals, random durations and sizes) and noise, clipped to [5%, 100%] of ``p_max``;
    the wet bulb swings between about 16 and 24 C with its peak mid-afternoon.
    """
    rng = np.random.default_rng(check_int(seed, "seed"))
    h = np.arange(p.horizon) * p.dt / 3600.0
    C, J = p.n_cabinets, p.n_blades
    phase = rng.uniform(-2, 2, C)
    base = 0.5 + 0.22 * np.sin(2 * np.pi * (h[:, None] - 9 - phase) / 24)           # (H, C)
    scale = rng.uniform(0.75, 1.1, (C, J))
    bursts = np.zeros((p.horizon, C, J))
    for i in range(C):
        for j in range(J):
            for _ in range(rng.poisson(4)):
                start, dur, amp = rng.uniform(0, 24), rng.uniform(0.5, 3.0), rng.uniform(0.1, 0.35)
                bursts[(h >= start) & (h < start + dur), i, j] += amp
    u = base[:, :, None] * scale + bursts + rng.normal(0, 0.03, bursts.shape)
    wet = 20.0 + 3.5 * np.sin(2 * np.pi * (h - 9) / 24) + rng.uniform(-0.5, 0.5)
    return p.p_max * np.clip(u, 0.05, 1.0), np.clip(wet, 16.0, 24.0)


def make_workloads(seeds, p: CoolingParams = CoolingParams()) -> tuple[np.ndarray, np.ndarray]:
    """Stacked :func:`make_workload` for several seeds: ``(B, H, C, J)`` and ``(B, H)``."""
    seeds = list(seeds)
    if not seeds:
        raise ValueError("seeds must not be empty")
    pw, wb = zip(*(make_workload(s, p) for s in seeds))
    return np.stack(pw), np.stack(wb)


# --------------------------------------------------------------------------- batched rollout
def initial_temps(power0: np.ndarray, p: CoolingParams) -> np.ndarray:
    """Start at the steady state of the nominal plant (32 C supply, nominal flow, equal valves)."""
    return steady_state(power0, np.full(power0.shape[:-1], 32.0), np.ones(power0.shape), p)


def rollout(policy, power: np.ndarray, wetbulb: np.ndarray, p: CoolingParams = CoolingParams(),
            record: bool = False, t_max: np.ndarray | None = None) -> dict[str, np.ndarray]:
    """Run ``policy`` (obs ``(B, n_obs)`` -> actions ``(B, n_act)``; optional ``reset(batch)``)
    on a batch of days. Returns energy (kWh), violation (K*min above ``t_max``, summed over blade
    groups) and peak temperature per day, and with ``record`` the trajectories. ``t_max`` (shape
    ``(B,)``, optional) gives each day its own limit for the violation (default ``p.t_max``)."""
    power = np.asarray(power, float)
    if power.ndim != 4 or power.shape[1:] != (p.horizon, p.n_cabinets, p.n_blades):
        raise ValueError(f"power must have shape (B, {p.horizon}, {p.n_cabinets}, {p.n_blades}), got {power.shape}")
    if np.shape(wetbulb) != power.shape[:2]:
        raise ValueError(f"wetbulb must have shape {power.shape[:2]}, got {np.shape(wetbulb)}")
    b = power.shape[0]
    limit = p.t_max
    if t_max is not None:
        limit = np.asarray(t_max, dtype=float)
        if limit.shape != (b,) or not np.all(np.isfinite(limit)):
            raise ValueError(f"t_max must be {b} finite numbers, got shape {limit.shape}")
        limit = limit[:, None, None]
    if hasattr(policy, "reset"):
        policy.reset(b)
    temps = initial_temps(power[:, 0], p)
    energy, viol, peak = np.zeros(b), np.zeros(b), np.full(b, -np.inf)
    rec = {k: [] for k in ("temps", "fan", "pump", "ts", "t_ct", "flow", "heat", "obs", "action")} if record else None
    for t in range(p.horizon):
        obs = observe(temps, power[:, t], wetbulb[:, t], t, p)
        act = np.asarray(policy(obs), dtype=float)
        temps, info = step_physics(temps, act, power[:, t], wetbulb[:, t], p)
        energy += (info["fan"] + info["pump"]) * p.dt / 3600.0
        viol += np.maximum(temps - limit, 0.0).sum(axis=(1, 2)) * p.dt / 60.0
        peak = np.maximum(peak, temps.max(axis=(1, 2)))
        if record:
            for k in ("fan", "pump", "ts", "t_ct", "flow", "heat"):
                rec[k].append(info[k])
            rec["temps"].append(temps)
            rec["obs"].append(obs)
            rec["action"].append(np.clip(act, -1, 1))
    out = {"energy": energy, "violation": viol, "peak": peak}
    if record:
        out.update({k: np.stack(v, axis=1) for k, v in rec.items()})
    return out


# --------------------------------------------------------------------------- gymnasium
class LiquidCoolingEnv(gym.Env):
    """The surrogate as a Gymnasium environment (one day per episode, continuing task truncated
    at ``horizon``).

    Action ``Box(-1, 1, (n_act,))``: per cabinet (supply setpoint, flow, valve openings), then the
    CT setpoint delta (rounded to integer kelvin). Observation ``Box(-10, 10, (n_obs,))`` from
    :func:`observe`. Reward ``-(w * energy_kWh + (1 - w) * violation_Kmin)`` per step.
    ``reset(seed=s)`` draws the day's workload from ``s`` (the same seed, the same day).
    """

    metadata = {"render_modes": []}

    def __init__(self, params: CoolingParams | None = None, weight: float = 0.5):
        super().__init__()
        self.p = params or CoolingParams()
        if not isinstance(self.p, CoolingParams):
            raise ValueError(f"params must be a CoolingParams, got {type(params).__name__}")
        w = check_positive(weight, "weight", allow_zero=True)
        if w > 1:
            raise ValueError(f"weight must lie in [0, 1], got {w}")
        self.weight = w
        self.action_space = gym.spaces.Box(-1.0, 1.0, (self.p.n_act,), dtype=np.float32)
        self.observation_space = gym.spaces.Box(-10.0, 10.0, (self.p.n_obs,), dtype=np.float32)
        self._power = self._wet = self._temps = None
        self._t = 0

    def _obs(self) -> np.ndarray:
        t = min(self._t, self.p.horizon - 1)
        return observe(self._temps, self._power[None, t], self._wet[None, t], self._t, self.p)[0].astype(np.float32)

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        """Start a new day: a workload drawn from the env's generator (seeded by ``seed``), blades at
        their steady state; returns (observation, info)."""
        super().reset(seed=seed)
        day = int(self.np_random.integers(0, 2**31 - 1))
        self._power, self._wet = make_workload(day, self.p)
        self._temps = initial_temps(self._power[None, 0], self.p)
        self._t = 0
        return self._obs(), {"workload_seed": day}

    def step(self, action):
        """Apply one scaled action in [-1, 1]^n_act for one control period: (observation, reward,
        terminated, truncated, info), the reward the weighted energy and violation with the sign flipped,
        info the step's energy (kWh), violation (K*min), fan and pump power and hottest blade."""
        if self._temps is None:
            raise RuntimeError("call reset() before step()")
        a = np.asarray(action, dtype=float).reshape(1, -1)
        if a.shape[1] != self.p.n_act or not np.all(np.isfinite(a)):
            raise ValueError(f"action must be {self.p.n_act} finite numbers, got shape {np.shape(action)}")
        t = self._t
        self._temps, info = step_physics(self._temps, a, self._power[None, t], self._wet[None, t], self.p)
        energy = float((info["fan"] + info["pump"])[0]) * self.p.dt / 3600.0
        viol = float(np.maximum(self._temps - self.p.t_max, 0.0).sum()) * self.p.dt / 60.0
        self._t += 1
        reward = -(self.weight * energy + (1 - self.weight) * viol)
        out = {"energy_kwh": energy, "violation_kmin": viol, "fan_kw": float(info["fan"][0]),
               "pump_kw": float(info["pump"][0]), "max_temp": float(self._temps.max())}
        return self._obs(), float(reward), False, self._t >= self.p.horizon, out
