"""The race: methods from different chapters on shared problems, one budget, one `Trace`.

:mod:`optbook.race.engine` holds benchopt's roles (the counted oracle, the solver adapters, the
recording callback, tuning on held-out seeds, the verdict); :mod:`optbook.race.classes` the four
problem classes and the chapters' methods entered in each.
"""
from .engine import (Budget, BudgetError, BudgetExhausted, Counter, Entry, Instance, ProblemClass, RaceResult,
                     Recorder, Solver, final_score, median_curve, race, run_once)

__all__ = ["Budget", "BudgetError", "BudgetExhausted", "Counter", "Entry", "Instance", "ProblemClass",
           "RaceResult", "Recorder", "Solver", "final_score", "median_curve", "race", "run_once"]
