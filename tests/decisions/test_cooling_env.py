"""Chapter 32: the liquid-cooling surrogate's physics, its gymnasium API and the controllers."""
import dataclasses

import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from sklearn.tree import DecisionTreeRegressor

from optbook.decisions import cooling_control as cc
from optbook.decisions import cooling_env as ce

P = ce.CoolingParams()


def _constant(ts=32.0, flow=1.0, valves=None, delta=0.0, p=P):
    valves = np.ones((p.n_cabinets, p.n_blades)) if valves is None else valves
    return ce.unscale_action(np.full(p.n_cabinets, ts), np.full(p.n_cabinets, flow), valves, delta, p)


def _hold(action, power, wet, steps, p=P):
    temps = ce.initial_temps(power, p)
    for _ in range(steps):
        temps, info = ce.step_physics(temps, action[None], power, wet, p)
    return temps, info


def test_steady_state_and_energy_balance():
    rng = np.random.default_rng(0)
    power = rng.uniform(50, 340, (1, 3, 3))
    valves = rng.uniform(0, 1, (3, 3))
    act = _constant(ts=35.0, flow=0.9, valves=valves, delta=-2.0)
    temps, info = _hold(act, power, np.array([18.0]), 200)
    phys = ce.scale_action(act, P)
    expect = ce.steady_state(power, np.full((1, 3), 35.0), ce.blade_flows(phys, P)[None], P)
    assert np.allclose(temps, expect, atol=1e-8)
    assert info["heat"][0] == pytest.approx(power.sum(), rel=1e-6)  # heat removed = heat generated


def test_exact_update_matches_a_fine_euler_integration():
    power = np.full((1, 3, 3), 250.0)
    act = _constant(ts=30.0, flow=0.6)
    t0 = np.full((1, 3, 3), 40.0)
    exact, _ = ce.step_physics(t0, act[None], power, np.array([20.0]), P)
    fine = dataclasses.replace(P, dt=P.dt / 3000)
    t = t0.copy()
    for _ in range(3000):
        t, _ = ce.step_physics(t, act[None], power, np.array([20.0]), fine)
    assert np.allclose(exact, t, atol=1e-6)
    # a step 100 times longer than the time constant still lands on the steady state (stable)
    big = dataclasses.replace(P, dt=1e6)
    t, _ = ce.step_physics(t0, act[None], power, np.array([20.0]), big)
    assert np.all(np.isfinite(t)) and np.allclose(t, 30.0 + 250.0 / ce.conductance(0.6, P), atol=1e-6)


def test_monotone_in_flow_and_supply_temperature():
    power, wet = np.full((1, 3, 3), 200.0), np.array([18.0])
    lo, info_lo = _hold(_constant(flow=0.6), power, wet, 60)
    hi, info_hi = _hold(_constant(flow=1.1), power, wet, 60)
    assert np.all(hi < lo) and info_hi["pump"][0] > info_lo["pump"][0]  # more flow: cooler, more pump power
    cold, info_c = _hold(_constant(ts=20.0, delta=-2.0), power, wet, 60)
    warm, info_w = _hold(_constant(ts=20.0, delta=5.0), power, wet, 60)
    assert np.all(warm > cold) and info_w["fan"][0] < info_c["fan"][0]  # warmer water: hotter blades, less fan


def test_valve_shares_and_action_scaling_round_trip():
    rng = np.random.default_rng(1)
    v = rng.uniform(0, 1, (4, 3, 3))
    assert np.allclose(ce.valve_shares(v, 0.05).sum(-1), 1.0)
    a = rng.uniform(-1, 1, (5, P.n_act))
    a[:, -1] = (rng.integers(P.delta_low, P.delta_high + 1, 5) - 3.0) / 5.0  # on the delta grid
    ph = ce.scale_action(a, P)
    assert np.allclose(ce.unscale_action(ph["ts_set"], ph["flow"], ph["valves"], ph["delta"], P), a)
    wild = ce.scale_action(np.full(P.n_act, 7.0), P)  # clipped into range
    assert wild["ts_set"].max() == P.ts_high and wild["flow"].max() == P.flow_high and wild["delta"] == P.delta_high
    with pytest.raises(ValueError, match="action"):
        ce.scale_action(np.zeros(3), P)


def test_gymnasium_api():
    env = ce.LiquidCoolingEnv()
    check_env(env, skip_render_check=True)
    o1, _ = env.reset(seed=5)
    a = env.action_space.sample()
    s1 = env.step(a)
    o2, _ = env.reset(seed=5)
    s2 = env.step(a)
    assert np.array_equal(o1, o2) and s1[1] == s2[1]
    assert env.observation_space.contains(s1[0]) and s1[0].shape == (P.n_obs,)
    steps = 1
    while not env.step(np.zeros(P.n_act))[3]:
        steps += 1
    assert steps == P.horizon - 1  # truncated after one day (continuing task, never terminated)
    with pytest.raises(ValueError, match="action"):
        env.step(np.zeros(2))
    with pytest.raises(ValueError, match="weight"):
        ce.LiquidCoolingEnv(weight=2.0)


def test_env_and_batched_rollout_agree():
    env = ce.LiquidCoolingEnv()
    _, info = env.reset(seed=3)
    rule = cc.RulePolicy(P)
    total, viol = 0.0, 0.0
    obs, trunc = env._obs(), False
    while not trunc:
        obs, _, _, trunc, inf = env.step(rule(obs[None])[0])
        total += inf["energy_kwh"]
        viol += inf["violation_kmin"]
    out = ce.rollout(rule, *ce.make_workloads([info["workload_seed"]]))
    assert total == pytest.approx(out["energy"][0], rel=1e-5) and viol == pytest.approx(out["violation"][0], abs=1e-3)


def test_workload_is_seeded_and_in_range():
    a, b = ce.make_workload(7), ce.make_workload(7)
    assert np.array_equal(a[0], b[0]) and not np.array_equal(a[0], ce.make_workload(8)[0])
    assert a[0].shape == (P.horizon, P.n_cabinets, P.n_blades) and 0 < a[0].min() and a[0].max() <= P.p_max
    assert 16.0 <= a[1].min() and a[1].max() <= 24.0
    with pytest.raises(ValueError, match="seed"):
        ce.make_workload(-1)
    with pytest.raises(ValueError, match="power"):
        ce.rollout(cc.RulePolicy(P), np.zeros((1, 5, 3, 3)), np.zeros((1, 5)))


def test_rule_and_pi_policies():
    power, wet = ce.make_workloads([0, 1])
    act = cc.RulePolicy(P, ts=32.0, flow=1.0, delta=0.0)(np.zeros((2, P.n_obs)))
    ph = ce.scale_action(act, P)
    assert np.allclose(ph["ts_set"], 32.0) and np.allclose(ph["flow"], 1.0) and np.all(ph["delta"] == 0)
    pi = cc.PIPolicy(P, kp=1.0, ki=0.1, flow=1.2)
    out = ce.rollout(pi, power, wet, record=True)
    deltas = ce.scale_action(out["action"], P)["delta"]
    assert deltas.min() >= P.delta_low and deltas.max() <= P.delta_high and len(np.unique(deltas)) > 2
    with pytest.raises(ValueError, match="kp"):
        cc.PIPolicy(P, kp=-1.0)
    with pytest.raises(ValueError, match="flow"):
        cc.RulePolicy(P, flow=3.0)


def test_shared_policy_is_shared_and_population_batched():
    rng = np.random.default_rng(0)
    theta = rng.normal(size=(2, cc.SharedLinearPolicy.n_params(P)))
    obs = rng.uniform(-1, 1, (4, P.n_obs))
    both = cc.SharedLinearPolicy(theta, P)(obs)
    assert np.allclose(both[:2], cc.SharedLinearPolicy(theta[0], P)(obs[:2]))
    assert np.allclose(both[2:], cc.SharedLinearPolicy(theta[1], P)(obs[2:]))
    # swapping two cabinets' local observations swaps their actions (parameter sharing)
    swapped = obs.copy()
    for block in (0, 9):
        swapped[:, block:block + 3], swapped[:, block + 3:block + 6] = obs[:, block + 3:block + 6], obs[:, block:block + 3]
    a, b = cc.SharedLinearPolicy(theta[0], P)(obs), cc.SharedLinearPolicy(theta[0], P)(swapped)
    assert np.allclose(a[:, :5], b[:, 5:10]) and np.allclose(a[:, -1], b[:, -1])
    with pytest.raises(ValueError, match="theta"):
        cc.SharedLinearPolicy(np.zeros(3), P)


def test_cem_improves_its_training_score_and_is_seeded():
    r1 = cc.cem(P, [100], iterations=4, population=8, rng=3)
    r2 = cc.cem(P, [100], iterations=4, population=8, rng=3)
    assert np.array_equal(r1.theta, r2.theta) and r1.evaluations == 32
    assert r1.history[-1, 0] <= r1.history[0, 0]
    with pytest.raises(ValueError, match="population"):
        cc.cem(P, [100], population=2)


def test_distilling_a_piecewise_constant_policy_is_exact():
    # the teacher is itself a depth-2 tree: distillation at depth >= 2 recovers it exactly
    rng = np.random.default_rng(0)
    x = rng.uniform(-1, 1, (400, 2 * P.n_blades + 3))
    y = np.where(x[:, :1] > 0.1, 0.5, -0.5) * np.where(x[:, 3:4] > -0.2, 1.0, 0.2) * np.ones((1, 5))
    teacher_cab = DecisionTreeRegressor(max_depth=2).fit(x, y)
    xt = rng.uniform(-1, 1, (400, 5))
    teacher_ct = DecisionTreeRegressor(max_depth=2).fit(xt, np.where(xt[:, 1] > 0, 0.6, -0.6))
    teacher = cc.TreePolicy(teacher_cab, teacher_ct, P)
    student = cc.distill(teacher, P, [0, 1], depth=3, dagger_rounds=1)
    obs = ce.rollout(teacher, *ce.make_workloads([0]), record=True)["obs"][0]  # states it was fitted on
    assert np.allclose(student(obs), teacher(obs))
    assert cc.fidelity(student, teacher, obs) == pytest.approx(1.0)
    const = cc.distill(teacher, P, [0], depth=0, dagger_rounds=0)
    assert np.ptp(const(obs), axis=0).max() == 0.0


def test_scheduled_rule_follows_the_busiest_blade_group():
    obs = np.zeros((2, P.n_obs))
    n = P.n_cabinets * P.n_blades
    obs[0, n: 2 * n] = -1.0           # idle: flow clipped to the pump's minimum
    obs[1, n: 2 * n] = 0.0            # every group at half of p_max
    obs[1, n] = 1.0                   # cabinet 0's first group at p_max
    ph = ce.scale_action(cc.ScheduledRulePolicy(P, gain=1.2, delta=1.0)(obs), P)
    assert np.allclose(ph["flow"][0], P.flow_low)
    assert np.allclose(ph["flow"][1], [1.2, 0.6, 0.6])
    assert np.allclose(ph["ts_set"], 32.0) and np.all(ph["delta"] == 1)
    with pytest.raises(ValueError, match="gain"):
        cc.ScheduledRulePolicy(P, gain=0.0)


def test_tree_policy_predicts_as_sklearn_does():
    rng = np.random.default_rng(1)
    x = rng.normal(size=(300, 2 * P.n_blades + 3))
    cab = DecisionTreeRegressor(max_depth=4, random_state=0).fit(x, rng.normal(size=(300, 2 + P.n_blades)))
    xt = rng.normal(size=(300, 5))
    ct = DecisionTreeRegressor(max_depth=4, random_state=0).fit(xt, rng.normal(size=300))
    assert np.array_equal(cc._predict(cab, x), cab.predict(x))
    assert np.array_equal(cc._predict(ct, xt), ct.predict(xt))


def test_lockstep_cem_runs_equal_separate_runs():
    runs = cc.cem_runs(P, [100], (0.0, 2.0), iterations=2, population=4, rng=3)
    for m, r in zip((0.0, 2.0), runs):
        assert np.array_equal(r.theta, cc.cem(P, [100], iterations=2, population=4, margin=m, rng=3).theta)
    with pytest.raises(ValueError, match="margins"):
        cc.cem_runs(P, [100], (), iterations=1, population=4)
    with pytest.raises(ValueError, match="t_max"):
        ce.rollout(cc.RulePolicy(P), *ce.make_workloads([0]), P, t_max=np.ones(2))
