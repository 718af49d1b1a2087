"""`Trace`: the one record of a run that every figure builder reads.

A method appends one row per iteration (objective, gradient norm, step size, wall time and any
named extra series); the figure builders in :mod:`optbook.viz` take traces, so every chapter's
convergence plot looks alike and methods from different chapters can share one set of axes.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy.optimize import OptimizeResult

from .validate import check_choice, check_positive

_CORE = ("iteration", "objective", "grad_norm", "step_size", "time")


def thin_indices(n: int, max_points: int = 300, *, log: bool = False) -> np.ndarray:
    """At most ``max_points`` sorted indices into a series of length ``n``, always keeping the
    first and the last: evenly spaced, or evenly spaced in log(1 + k) with ``log`` (for runs
    plotted on a log x-axis, or whose early iterations matter most)."""
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
        raise ValueError(f"n must be a positive integer, got {n!r}")
    if isinstance(max_points, bool) or not isinstance(max_points, (int, np.integer)) or max_points < 2:
        raise ValueError(f"max_points must be an integer >= 2, got {max_points!r}")
    if n <= max_points:
        return np.arange(n)
    grid = np.geomspace(1, n, max_points) - 1 if log else np.linspace(0, n - 1, max_points)
    return np.unique(np.concatenate([[0, n - 1], np.round(grid).astype(int)]))


@dataclass
class Trace:
    """Per-iteration record of one run of one method.

    Parameters
    ----------
    method : str
        The name shown in legends ("BFGS", "GD + Armijo", ...).
    meta : dict
        Free-form settings of the run (problem, seed, hyperparameters).

    Examples
    --------
    >>> tr = Trace("GD")
    >>> tr.record(objective=1.0, grad_norm=2.0)
    >>> tr.record(objective=0.5, grad_norm=1.0, step_size=0.1, gap=0.4)
    >>> tr.objective
    array([1. , 0.5])
    >>> tr["gap"]
    array([nan, 0.4])
    """

    method: str = "method"
    meta: dict[str, Any] = field(default_factory=dict)
    _rows: dict[str, list[float]] = field(default_factory=lambda: {k: [] for k in _CORE}, repr=False)
    _t0: float = field(default_factory=time.perf_counter, repr=False)

    def record(
        self,
        *,
        objective: float = np.nan,
        grad_norm: float = np.nan,
        step_size: float = np.nan,
        iteration: int | None = None,
        **extra: float,
    ) -> None:
        """Append one row. Missing values are NaN; a new extra series is NaN-padded backwards."""
        n = len(self)
        values = {
            "iteration": n if iteration is None else iteration,
            "objective": objective,
            "grad_norm": grad_norm,
            "step_size": step_size,
            "time": time.perf_counter() - self._t0,
            **extra,
        }
        for key in values:
            if key not in self._rows:
                self._rows[key] = [np.nan] * n
        for key, column in self._rows.items():
            column.append(float(values.get(key, np.nan)))

    def update_last(self, **values: float) -> None:
        """Set series of the last row (e.g. the step size, known only after the line search)."""
        if not len(self):
            raise ValueError("the trace has no row yet")
        n = len(self)
        for key, value in values.items():
            if key not in self._rows:
                self._rows[key] = [np.nan] * n
            self._rows[key][-1] = float(value)

    def restart_clock(self) -> None:
        """Measure wall time from now (call it just before the first iteration)."""
        self._t0 = time.perf_counter()

    def __len__(self) -> int:
        return len(self._rows["iteration"])

    def __getitem__(self, name: str) -> np.ndarray:
        if name not in self._rows:
            raise KeyError(f"trace of {self.method!r} has no series {name!r}; it has {self.series}")
        return np.asarray(self._rows[name], dtype=float)

    def __contains__(self, name: str) -> bool:
        return name in self._rows

    @property
    def series(self) -> list[str]:
        """Names of every recorded series (core ones first)."""
        return list(self._rows)

    @property
    def iteration(self) -> np.ndarray:
        return self["iteration"]

    @property
    def objective(self) -> np.ndarray:
        return self["objective"]

    @property
    def grad_norm(self) -> np.ndarray:
        return self["grad_norm"]

    @property
    def step_size(self) -> np.ndarray:
        return self["step_size"]

    @property
    def time(self) -> np.ndarray:
        return self["time"]

    def first_below(self, name: str, threshold: float) -> int | None:
        """First recorded iteration at which series ``name`` is <= ``threshold`` (None if never)."""
        values = self[name]
        hits = np.flatnonzero(values <= threshold)
        return int(self.iteration[hits[0]]) if hits.size else None

    def thinned(self, max_points: int = 300, *, log: bool = False) -> "Trace":
        """A copy keeping at most ``max_points`` rows (first and last kept), so long runs stay
        light on a page; ``log`` spaces the kept rows evenly in log(1 + t)."""
        if len(self) <= max_points:
            return self
        keep = thin_indices(len(self), max_points, log=log)
        data = self.to_dict()
        for key in self.series:
            data[key] = [data[key][i] for i in keep]
        return Trace.from_dict(data)

    def to_dict(self) -> dict[str, Any]:
        """Plain-Python form (lists of floats), e.g. for JSON."""
        return {"method": self.method, "meta": dict(self.meta), **{k: list(v) for k, v in self._rows.items()}}

    def to_arrays(self) -> dict[str, np.ndarray]:
        """Every series as a float array."""
        return {k: self[k] for k in self._rows}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "Trace":
        """Inverse of :meth:`to_dict`."""
        tr = cls(method=data["method"], meta=dict(data.get("meta", {})))
        keys = [k for k in data if k not in ("method", "meta")]
        lengths = {len(data[k]) for k in keys}
        if len(lengths) > 1:
            raise ValueError(f"data series have different lengths: {sorted(lengths)}")
        n = lengths.pop() if lengths else 0
        rows = {k: [np.nan] * n for k in _CORE}
        rows.update({k: [float(v) for v in data[k]] for k in keys})
        tr._rows = rows
        return tr


class Result(OptimizeResult):
    """``scipy.optimize.OptimizeResult`` with a :class:`Trace` under ``.trace``.

    Fields: ``x``, ``fun``, ``jac``, ``nit``, ``nfev``, ``njev``, ``success``, ``message``,
    ``trace`` and method-specific extras.
    """


class RunRecorder:
    """The bookkeeping every ``scipy.optimize.minimize``-shaped method shares: one trace row per
    iterate, the iterates themselves, the user's callback, and the stopping rule.

    ``stop`` names the series compared with ``tol``: ``"grad_norm"``, ``"gap"`` (f - f*, logged
    automatically when ``f_star`` is given) or any series the method passes to :meth:`record`
    (e.g. a Newton decrement); ``stops`` lists the names the method supports.
    """

    def __init__(self, method: str, *, stop: str, tol: float, stops: tuple[str, ...],
                 f_star: float | None = None, callback=None):
        check_choice(stop, "stop", stops)
        tol = check_positive(tol, "tol")
        if stop == "gap" and f_star is None:
            raise ValueError("stop='gap' needs f_star")
        if f_star is not None and not np.isfinite(f_star):
            raise ValueError("f_star must be finite")
        if callback is not None and not callable(callback):
            raise ValueError("callback must be callable")
        self.stop, self.tol, self.f_star, self.callback = stop, float(tol), f_star, callback
        self.trace = Trace(method)
        self.iterates: list[np.ndarray] = []

    def record(self, x: np.ndarray, f: float, grad_norm: float, **series: float) -> bool:
        """Log iterate x (objective f, gradient norm, extra series); True when the rule is met."""
        if self.f_star is not None:
            series["gap"] = f - self.f_star
        self.trace.record(objective=f, grad_norm=grad_norm, **series)
        self.iterates.append(np.array(x))
        if self.callback is not None:
            self.callback(np.array(x))
        value = grad_norm if self.stop == "grad_norm" else series.get(self.stop, np.nan)
        return bool(value <= self.tol)

    def set_step(self, step: float, **series: float) -> None:
        """The step taken from the last recorded iterate (known only after it was chosen)."""
        self.trace.update_last(step_size=step, **series)

    def result(self, x: np.ndarray, f: float, *, success: bool, message: str, nfev: int, njev: int,
               **extra) -> Result:
        """The scipy-style result, with ``trace`` and ``iterates``."""
        return Result(x=x, fun=f, nit=len(self.trace) - 1, nfev=nfev, njev=njev, success=success,
                      message=message, trace=self.trace, iterates=np.array(self.iterates), **extra)
