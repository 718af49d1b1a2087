"""The race's machinery: one budget for every method, counted by the oracle, cheaters caught."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from optbook.core import Trace, Tuning
from optbook.race import (Budget, BudgetError, BudgetExhausted, Entry, ProblemClass, RaceResult, Solver,
                          median_curve, race, run_once)
from optbook.race.classes import (CONSTRAINED, CONSTRAINED_SOLVERS, RACES, SMOOTH, SMOOTH_SOLVERS, TRAINING,
                                  TRAINING_SOLVERS, ZEROTH_ORDER, ZO_SOLVERS, TrainingInstance, zo_instance)

ALL = [(p, s) for p, solvers in RACES for s in solvers]


def _first(solver):
    return {k: v[0] for k, v in solver.grid.items()}


@pytest.mark.parametrize("problem,solver", ALL, ids=lambda x: getattr(x, "name", "")[:24])
def test_every_method_spends_exactly_the_budget(problem, solver):
    """Whatever its own stopping rule and step count, every method ends when the oracle has
    charged the budget, and the oracle saw every call it made."""
    budget = 12
    tr = run_once(solver, problem, 0, _first(solver), budget=budget)
    assert tr.meta["evals"] == budget
    assert np.all(np.diff(tr["evals"]) >= 0) and tr["evals"][-1] <= budget
    assert tr["evals"][0] == 0 and np.isfinite(tr.objective[0])


@pytest.mark.parametrize("solvers,name,per_step", [
    (TRAINING_SOLVERS, "SAM", 2), (TRAINING_SOLVERS, "MSAM", 1), (TRAINING_SOLVERS, "Adam", 1),
    (ZO_SOLVERS, "MeZO", 2), (ZO_SOLVERS, "PaZO", 3), (ZO_SOLVERS, "Gaussian two-point", 2),
])
def test_the_oracle_counts_calls_not_steps(solvers, name, per_step):
    """The budget is counted in oracle calls: SAM pays two gradients a step, MSAM one; MeZO two
    function values, PaZO three. The count comes from the oracle, not from the method."""
    problem = TRAINING if solvers is TRAINING_SOLVERS else ZEROTH_ORDER
    solver = next(s for s in solvers if s.name == name)
    tr = run_once(solver, problem, 0, _first(solver), budget=13)
    assert set(np.diff(tr["evals"])) == {per_step}


def test_a_method_that_goes_around_the_oracle_is_caught():
    made = []

    def make(seed):
        made.append(zo_instance(seed))
        return made[-1]

    problem = ProblemClass("quadratic", make, budget=10, unit="function evaluation", metric="f")

    def cheat(o, x0, record, seed, lr):
        x = x0.copy()
        for _ in range(50):                       # the raw function, not the oracle it was given
            x = x - lr * (made[-1].fun(x + 1e-4) - made[-1].fun(x)) / 1e-4
        record(x)

    def honest(o, x0, record, seed, lr):
        for _ in range(3):
            o.fun(x0)
        record(x0)

    assert run_once(Solver("honest", "-", "-", honest, {"lr": [0.1]}), problem, 0, {"lr": 0.1}).meta["evals"] == 3
    with pytest.raises(BudgetError, match="cheat.*100 oracle calls.*charged 0"):
        run_once(Solver("cheat", "-", "-", cheat, {"lr": [0.1]}), problem, 0, {"lr": 0.1})


def test_a_network_trained_around_the_oracle_is_caught():
    """The training oracle counts forward passes with a hook: a method that evaluates the
    network itself is caught, even though it never touched the closure."""
    made = []

    def make(seed):
        made.append(TrainingInstance(seed))
        return made[-1]

    problem = ProblemClass("moons", make, budget=5, unit="minibatch gradient", metric="loss", logy=False)

    def cheat(o, model, record, seed, lr):
        inst = made[-1]
        opt = torch.optim.SGD(model.parameters(), lr=lr)
        for _ in range(20):
            opt.zero_grad()
            inst._loss(inst.X, inst.y).backward()   # full-batch gradients, never charged
            opt.step()
        record(model)

    with pytest.raises(BudgetError, match="20 oracle calls"):
        run_once(Solver("cheat", "-", "-", cheat, {"lr": [0.1]}), problem, 0, {"lr": 0.1})


def test_calls_past_the_budget_are_refused_even_when_the_method_swallows_the_signal():
    seen = []

    def greedy(o, x0, record, seed, lr):
        for _ in range(40):
            try:
                seen.append(o.fun(x0))
            except BudgetExhausted:
                continue
        record(x0)

    problem = ProblemClass("q", zo_instance, budget=7, unit="function evaluation", metric="f")
    tr = run_once(Solver("greedy", "-", "-", greedy, {"lr": [0.1]}), problem, 0, {"lr": 0.1})
    assert len(seen) == 7 and tr.meta["evals"] == 7


def test_budget_charge():
    b = Budget(3)
    b.charge(2)
    with pytest.raises(BudgetExhausted):
        b.charge(2)
    assert b.used == 2
    b.charge()
    assert b.used == 3


def _entry(name, finals, *, evals=10):
    traces = []
    for f in finals:
        t = Trace(name)
        t.record(objective=1.0, evals=0, seconds=0.0)
        t.record(objective=f, evals=evals, seconds=0.1)
        traces.append(t)
    tuning = Tuning(name, [{"lr": 0.1}, {"lr": 0.2}], np.array([1.0, 2.0]))
    return Entry(Solver(name, "01", "-", lambda *a, **k: None, {"lr": [0.1, 0.2]}), tuning, traces)


def _result(entries, target=-np.inf, logy=True):
    p = ProblemClass("toy", zo_instance, budget=10, unit="call", metric="gap", logy=logy, target=target)
    return RaceResult(p, entries, (0, 1, 2), (100,))


def test_verdict_names_the_winner_and_whether_it_won_on_every_seed():
    r = _result([_entry("slow", [0.5, 0.4, 0.6]), _entry("fast", [0.1, 0.05, 0.2])])
    assert [e.solver.name for e in r.ranking()] == ["fast", "slow"]
    v = r.verdict()
    assert v.startswith("fast wins") and "5 times lower gap than the runner-up slow, on every seed" in v
    r = _result([_entry("a", [0.1, 0.5, 0.1]), _entry("b", [0.3, 0.3, 0.3])])
    assert "a wins" in r.verdict() and "ahead on 2 of 3" in r.verdict()


def test_a_tie_at_the_target_is_broken_by_the_budget_needed():
    r = _result([_entry("late", [0.0] * 3, evals=9), _entry("early", [0.0] * 3, evals=4)], target=1e-12)
    assert r.ranking()[0].solver.name == "early"
    assert "needs 4 calls against 9 for the runner-up late" in r.verdict()


def test_a_diverged_method_ranks_last_and_the_table_says_so():
    r = _result([_entry("blew up", [np.nan, 0.1, 0.1]), _entry("steady", [0.3, 0.3, 0.3])])
    assert [e.solver.name for e in r.ranking()] == ["steady", "blew up"]
    assert "fewer than two" in r.verdict()
    assert r.rows()[0]["method"] == "steady (ch01)"


def test_median_curve_reads_each_run_as_a_step_function():
    t = Trace("m")
    for e, v in [(0, 8.0), (4, 4.0), (10, 1.0)]:
        t.record(objective=v, evals=e)
    grid, med, lo, hi = median_curve([t, t], budget=10, points=11)
    assert list(grid) == list(range(11))
    assert list(med) == [8.0] * 4 + [4.0] * 6 + [1.0]


def test_a_short_race_tunes_on_held_out_seeds_and_ranks_by_theory():
    """On the ill-conditioned least-squares problem BFGS (superlinear) must beat fixed-step joint
    GD (linear at rate 1 - 1/kappa); the settings run are the tuned ones, from each grid."""
    res = race(SMOOTH, [SMOOTH_SOLVERS[0], SMOOTH_SOLVERS[3]], seeds=(0, 1, 2), tuning_seeds=(100, 101))
    ranked = [e.solver.name for e in res.ranking()]
    assert ranked == ["BFGS", "joint GD"]
    for e in res.entries:
        assert e.tuning.seeds == (100, 101)
        assert all(t.meta["setting"] == e.tuning.best and t.meta["seed"] in (0, 1, 2) for t in e.traces)
    assert res.verdict().startswith("BFGS wins") and "on every seed" in res.verdict()


@pytest.mark.parametrize("call,match", [
    (lambda: run_once("BFGS", SMOOTH, 0), "solver"),
    (lambda: run_once(SMOOTH_SOLVERS[0], "smooth", 0), "problem"),
    (lambda: run_once(SMOOTH_SOLVERS[0], SMOOTH, -1), "seed"),
    (lambda: run_once(SMOOTH_SOLVERS[0], SMOOTH, 0, {"lr": 0.1}), "setting"),
    (lambda: run_once(SMOOTH_SOLVERS[0], SMOOTH, 0, budget=0), "budget"),
    (lambda: Budget(2.5), "budget"),
    (lambda: race(SMOOTH, SMOOTH_SOLVERS[:1]), "solvers"),
    (lambda: race(SMOOTH, SMOOTH_SOLVERS[:2], seeds=(0, 1)), "seeds"),
    (lambda: race(SMOOTH, SMOOTH_SOLVERS[:2], tuning_seeds=(0, 100)), "tuning_seeds"),
    (lambda: race(SMOOTH, SMOOTH_SOLVERS[:2], seeds=(0, 1, "x")), "seeds"),
    (lambda: race("smooth", SMOOTH_SOLVERS[:2]), "problem"),
    (lambda: race(SMOOTH, [SMOOTH_SOLVERS[0], Solver("wide", "-", "-", lambda *a: None, {"s": [1, 2, 3, 4]})]),
     "same size"),
])
def test_bad_input_is_a_value_error_naming_the_argument(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_constrained_scores_count_infeasibility():
    """The constrained score adds the constraint violation, so leaving the set cannot pass for a
    low objective."""
    inst = CONSTRAINED.make(0)
    K = inst.structure["K"]
    far = K.x0 + 10.0
    assert inst.score(far) >= K.max_violation(far) > 0
    assert CONSTRAINED_SOLVERS[0].grid_size == CONSTRAINED_SOLVERS[1].grid_size


def test_seconds_tell_who_got_there_first_when_both_solved():
    slow_clock = _entry("few calls", [0.0] * 3, evals=4)
    for t in slow_clock.traces:
        t._rows["seconds"][-1] = 2.0                 # fewer calls, but each one dear (a QP per step)
    r = _result([_entry("many calls", [0.0] * 3, evals=9), slow_clock], target=1e-12)
    assert r.ranking()[0].solver.name == "few calls"
    assert "In seconds, many calls gets there first (0.1 s against 2 s)" in r.verdict()
    row = r.rows()[0]
    assert row["seconds to 1e-12"] == "2" and row["calls to 1e-12"] == "4"
