"""The race's machinery, in benchopt's three roles: an *objective* (a problem instance that owns
the counted oracle and scores iterates), *solvers* (thin adapters that call the chapters' own
implementations with that oracle) and a *callback* (the recorder that writes one :class:`Trace`
row per iterate, with the budget spent so far).

Every method pays for what it asks the oracle, counted the same way for all: the oracle charges
one unit per call (a function value, a gradient, a minibatch gradient, a forward pass: the
problem says which) and raises :class:`BudgetExhausted` when the budget is spent, which ends the
run whatever the method's own stopping rule. The instance also counts every call of its raw
functions; a method that reaches them around the oracle (its count exceeds the budget's) is
caught with a :class:`BudgetError`. Scores (the recorder's evaluations) are not charged, and
their wall time is taken out of the seconds a method is credited with.
"""
from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..core import Trace, Tuning, check_int, grid_search


class BudgetExhausted(Exception):
    """Raised by the oracle when a call would exceed the budget: the run ends there."""


class BudgetError(RuntimeError):
    """A method made oracle calls that the budget did not see (it went around the oracle)."""


class Counter:
    """Counts the calls of an instance's raw functions, except inside :meth:`uncounted`."""

    def __init__(self) -> None:
        self.calls = 0
        self._paused = 0

    def wrap(self, f: Callable) -> Callable:
        """``f`` with every call counted."""
        def counted(*args, **kwargs):
            if not self._paused:
                self.calls += 1
            return f(*args, **kwargs)
        return counted

    @contextlib.contextmanager
    def uncounted(self) -> Iterator[None]:
        """Calls made inside are the race's own (scoring), not a method's."""
        self._paused += 1
        try:
            yield
        finally:
            self._paused -= 1


class Budget:
    """``limit`` oracle calls; :meth:`charge` raises :class:`BudgetExhausted` past it."""

    def __init__(self, limit: int) -> None:
        self.limit = check_int(limit, "budget", minimum=1)
        self.used = 0

    def charge(self, n: int = 1) -> None:
        """Pay for ``n`` calls, or end the run if they do not fit."""
        if self.used + n > self.limit:
            raise BudgetExhausted(f"budget of {self.limit} calls spent")
        self.used += n

    def guard(self, f: Callable) -> Callable:
        """``f`` charged one unit per call."""
        def charged(*args, **kwargs):
            self.charge()
            return f(*args, **kwargs)
        return charged


class Instance:
    """One problem instance (benchopt's *objective*): subclasses set ``counter``, build the
    oracle a solver receives (:meth:`oracle`), the start (:meth:`start`) and the score of an
    iterate (:meth:`score`, lower is better, computed with the counter paused)."""

    counter: Counter

    def oracle(self, budget: Budget) -> Any:  # pragma: no cover - abstract
        raise NotImplementedError

    def start(self) -> Any:  # pragma: no cover - abstract
        raise NotImplementedError

    def score(self, x: Any) -> float:  # pragma: no cover - abstract
        raise NotImplementedError


@dataclass(frozen=True)
class ProblemClass:
    """A family of instances raced on together.

    ``make(seed)`` builds an :class:`Instance`; ``unit`` names what one oracle call is ("f or
    grad f evaluation", "minibatch gradient"...); ``metric`` names the score; ``logy`` plots it
    on a log axis. A score at or below ``target`` counts as solved: methods that all solve the
    problem are ranked by the budget they needed to get there (benchopt's "time to target").
    """

    name: str
    make: Callable[[int], Instance]
    budget: int
    unit: str
    metric: str
    logy: bool = True
    target: float = -np.inf


@dataclass(frozen=True)
class Solver:
    """A method in the race (benchopt's *solver*): ``run(oracle, x0, record, seed, **setting)``
    calls the chapter's implementation; ``record(x)`` must be called on each new iterate (the
    callback role). ``grid`` is the step-size grid tuned on held-out seeds; ``chapter`` and
    ``call`` say where the implementation lives; ``note`` anything a reader must know (e.g. that
    the method is told f*)."""

    name: str
    chapter: str
    call: str
    run: Callable[..., Any]
    grid: Mapping[str, Sequence[Any]]
    note: str = ""

    @property
    def grid_size(self) -> int:
        return int(np.prod([len(v) for v in self.grid.values()]))


class Recorder:
    """The callback role: one trace row per iterate, with the budget spent (``evals``), the
    score, and the method's own seconds (wall time less the time spent scoring)."""

    def __init__(self, method: str, instance: Instance, budget: Budget) -> None:
        self.trace = Trace(method)
        self.instance, self.budget = instance, budget
        self._scoring = 0.0
        self._t0 = time.perf_counter()

    def __call__(self, x: Any) -> None:
        self.force(x)

    def force(self, x: Any) -> None:
        """Record iterate ``x``: its score (uncharged), the budget spent, the method's seconds."""
        t = time.perf_counter()
        seconds = t - self._t0 - self._scoring      # the method's time so far, scoring excluded
        with self.instance.counter.uncounted():
            value = float(self.instance.score(x))
        self._scoring += time.perf_counter() - t
        self.trace.record(objective=value, evals=self.budget.used, seconds=seconds)


def run_once(solver: Solver, problem: ProblemClass, seed: int, setting: Mapping[str, Any] | None = None,
             *, budget: int | None = None) -> Trace:
    """One run of ``solver`` on the instance of ``seed`` under the problem's budget (or
    ``budget``); returns its trace (``objective`` = the score, ``evals``, ``seconds``).

    Raises :class:`BudgetError` when the instance saw more raw calls than the budget charged.
    """
    if not isinstance(solver, Solver):
        raise ValueError(f"solver must be a Solver, got {type(solver).__name__}")
    if not isinstance(problem, ProblemClass):
        raise ValueError(f"problem must be a ProblemClass, got {type(problem).__name__}")
    seed = check_int(seed, "seed", minimum=0)
    setting = dict(setting or {})
    unknown = set(setting) - set(solver.grid)
    if unknown:
        raise ValueError(f"setting names {sorted(unknown)}, not in {solver.name}'s grid {sorted(solver.grid)}")
    inst = problem.make(seed)
    b = Budget(problem.budget if budget is None else budget)
    rec = Recorder(solver.name, inst, b)
    x0 = inst.start()
    rec.force(x0)
    try:
        solver.run(inst.oracle(b), x0, rec, seed, **setting)
    except BudgetExhausted:
        pass
    except (FloatingPointError, OverflowError, np.linalg.LinAlgError, ValueError) as err:
        # A step size that blows the method up is a result of tuning, not an error of the race.
        if "must be finite" not in str(err) and "non-finite" not in str(err) and "diverg" not in str(err):
            raise
        rec.trace.record(objective=np.nan, evals=b.used, seconds=np.nan)
    if inst.counter.calls != b.used:
        raise BudgetError(f"{solver.name} made {inst.counter.calls} oracle calls on {problem.name!r} "
                          f"but the budget charged {b.used}: it went around the oracle")
    rec.trace.meta.update(problem=problem.name, seed=seed, setting=setting, evals=b.used)
    return rec.trace


def final_score(trace: Trace) -> float:
    """The score at the end of the run (NaN when the run diverged)."""
    v = trace.objective[-1]
    return float(v) if np.isfinite(v) else np.nan


def evals_to_target(trace: Trace, target: float) -> float:
    """Budget spent when the score first reached ``target`` (inf if never)."""
    hit = np.flatnonzero(trace.objective <= target)
    return float(trace["evals"][hit[0]]) if hit.size else np.inf


def _tuning_score(value: float, logy: bool) -> float:
    return float(np.log10(max(value, 1e-300))) if logy and np.isfinite(value) else value


@dataclass
class Entry:
    """One solver's part of a race: its tuning, then its runs on the measured seeds."""

    solver: Solver
    tuning: Tuning
    traces: list[Trace]

    @property
    def finals(self) -> np.ndarray:
        return np.array([final_score(t) for t in self.traces])

    @property
    def median(self) -> float:
        f = self.finals
        return float(np.median(f)) if np.all(np.isfinite(f)) else np.nan

    @property
    def seconds(self) -> float:
        """Median over seeds of the method's own seconds (scoring excluded)."""
        return float(np.median([np.nanmax(t["seconds"]) for t in self.traces]))

    def to_target(self, target: float) -> float:
        """Median over seeds of the budget spent to reach ``target`` (inf: not on most seeds)."""
        return float(np.median([evals_to_target(t, target) for t in self.traces]))

    def seconds_to_target(self, target: float) -> float:
        """Median over seeds of the method's seconds until it reached ``target`` (inf: not on
        most seeds)."""
        def one(t):
            hit = np.flatnonzero(t.objective <= target)
            return float(t["seconds"][hit[0]]) if hit.size else np.inf
        return float(np.median([one(t) for t in self.traces]))

    def key(self, target: float) -> tuple[float, float]:
        """Sort key: the median final score (floored at ``target``: below it is solved, and
        solved is a tie), then the budget to reach the target; a diverged run ranks last."""
        m = self.median
        return (np.inf if not np.isfinite(m) else max(m, target), self.to_target(target))


@dataclass
class RaceResult:
    """Every entry of one problem class, the seeds used and the verdict."""

    problem: ProblemClass
    entries: list[Entry]
    seeds: tuple[int, ...]
    tuning_seeds: tuple[int, ...]
    extra: dict[str, Any] = field(default_factory=dict)

    def ranking(self) -> list[Entry]:
        """Entries from best to worst: median final score, ties (both solved) broken by the
        budget spent to reach the target; diverged last."""
        return sorted(self.entries, key=lambda e: e.key(self.problem.target))

    def rows(self) -> list[dict[str, Any]]:
        """One table row per method, best first: the tuned setting (and whether it sits on the
        grid's edge), the median final score and its range over seeds, the median budget spent to
        reach the target, the method's median seconds per run, and the solver's note."""
        p = self.problem
        out = []
        for e in self.ranking():
            f = e.finals
            label = e.solver.name + (f" (ch{e.solver.chapter})" if e.solver.chapter != "-" else "")
            to_target = e.to_target(p.target)
            row = {
                "method": label,
                "tuned": ", ".join(f"{k}={v:g}" for k, v in e.tuning.best.items())
                         + (" (grid edge)" if e.tuning.on_edge() else ""),
                f"{p.metric}, median": e.median,
                "range": (f"{np.nanmin(f):.2g} to {np.nanmax(f):.2g}" if np.any(np.isfinite(f)) else "diverged"),
            }
            if np.isfinite(p.target):
                row[f"{p.unit}s to {p.target:g}"] = f"{to_target:.0f}" if np.isfinite(to_target) else "-"
                secs = e.seconds_to_target(p.target)
                row[f"seconds to {p.target:g}"] = f"{secs:.2g}" if np.isfinite(secs) else "-"
            out.append({**row, "seconds for the budget": f"{e.seconds:.2g}", "note": e.solver.note})
        return out

    def verdict(self) -> str:
        """Who wins and how firmly, in words built from the measurements: the winner, the
        runner-up and the gap between them (in score, or in budget to the target when both
        solved the problem), whether the winner won on every seed, and what seconds say: who
        reached the target first, or who spent the budget quickest."""
        target = self.problem.target
        ranked = [e for e in self.ranking() if np.isfinite(e.median)]
        if len(ranked) < 2:
            return f"On {self.problem.name}, fewer than two methods finished: no verdict."
        w, r = ranked[0], ranked[1]
        solved = w.median <= target and r.median <= target
        if solved:
            wt = np.array([evals_to_target(t, target) for t in w.traces])
            rt = np.array([evals_to_target(t, target) for t in r.traces])
            wins = int(np.sum(wt < rt))
            gap = (f"both reach {self.problem.metric} <= {target:g}; it needs {w.to_target(target):.0f} "
                   f"{self.problem.unit}s against {r.to_target(target):.0f} for")
        else:
            wins = int(np.sum(w.finals < r.finals))
            if self.problem.logy and r.median > 0 and w.median > 0:
                gap = f"{r.median / w.median:.3g} times lower {self.problem.metric} than"
            else:
                gap = f"{self.problem.metric} lower by {r.median - w.median:.3g} than"
        n = len(w.traces)
        firm = "on every seed" if wins == n else f"but not on every seed (it is ahead on {wins} of {n})"
        if solved:
            first = min(ranked, key=lambda e: e.seconds_to_target(target))
            speed = (f"It also gets there first in seconds ({w.seconds_to_target(target):.2g} s)." if first is w else
                     f"In seconds, {first.solver.name} gets there first ({first.seconds_to_target(target):.2g} s "
                     f"against {w.seconds_to_target(target):.2g} s).")
        else:
            quick = min(ranked, key=lambda e: e.seconds)
            speed = (f"It is also the quickest to spend the budget ({w.seconds:.2g} s per run)." if quick is w else
                     f"{quick.solver.name} spends the budget in the fewest seconds ({quick.seconds:.2g} s per run, "
                     f"against {w.seconds:.2g} s for {w.solver.name}).")
        return (f"{w.solver.name} wins on {self.problem.name} within {self.problem.budget} {self.problem.unit}s: "
                f"{gap} the runner-up {r.solver.name}, {firm}. {speed}")


def race(problem: ProblemClass, solvers: Sequence[Solver], *, seeds: Sequence[int] = (0, 1, 2),
         tuning_seeds: Sequence[int] = (100, 101)) -> RaceResult:
    """Tune every solver's grid on ``tuning_seeds`` (held out), then run its best setting on
    ``seeds``. Every solver must bring a grid of the same size, so none is tuned harder.

    The tuning score is the final score (its log10 for a log-scale metric); a setting that
    diverges on a tuning seed ranks last.
    """
    if not isinstance(problem, ProblemClass):
        raise ValueError(f"problem must be a ProblemClass, got {type(problem).__name__}")
    solvers = list(solvers)
    if len(solvers) < 2 or not all(isinstance(s, Solver) for s in solvers):
        raise ValueError("solvers must be at least two Solver objects")
    sizes = {s.name: s.grid_size for s in solvers}
    if len(set(sizes.values())) != 1:
        raise ValueError(f"solvers must bring grids of the same size (the same tuning effort), got {sizes}")
    seeds = tuple(check_int(s, "seeds", minimum=0) for s in seeds)
    tuning_seeds = tuple(check_int(s, "tuning_seeds", minimum=0) for s in tuning_seeds)
    if len(seeds) < 3:
        raise ValueError(f"seeds must hold at least 3 seeds, got {len(seeds)}")
    if not tuning_seeds or set(seeds) & set(tuning_seeds):
        raise ValueError("tuning_seeds must be non-empty and disjoint from seeds (held out)")
    entries = []
    for s in solvers:
        def score(seed, _s=s, **setting):
            return _tuning_score(final_score(run_once(_s, problem, seed, setting)), problem.logy)
        tuning = grid_search(s.name, score, s.grid, tuning_seeds)
        entries.append(Entry(s, tuning, [run_once(s, problem, seed, tuning.best) for seed in seeds]))
    return RaceResult(problem, entries, seeds, tuning_seeds)


def median_curve(traces: Sequence[Trace], budget: int, points: int = 60) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(evals grid, median, min, max) of the score over runs, each run read as a step function of
    the budget spent (its last recorded score at or before each grid point)."""
    grid = np.unique(np.round(np.linspace(0, budget, points)).astype(int))
    rows = []
    for t in traces:
        e, v = t["evals"], t.objective
        idx = np.searchsorted(e, grid, side="right") - 1
        rows.append(np.where(idx >= 0, v[np.clip(idx, 0, None)], np.nan))
    m = np.array(rows)
    with np.errstate(all="ignore"):
        return grid, np.median(m, axis=0), np.min(m, axis=0), np.max(m, axis=0)
