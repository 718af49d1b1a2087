"""Grid search with the same care for every method: the record behind a tuning panel.

The claims protocol asks that each baseline be tuned with the same grid size, budget and
held-out seeds as the method. :func:`grid_search` runs one method over a grid of settings,
scores each setting by the median over the tuning seeds, and keeps the order the settings were
tried in, so that a figure can show the best result against the number of settings tried
(:func:`optbook.viz.tuning_figure`).
"""
from __future__ import annotations

import itertools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .parallel import pmap


def _label(setting: Mapping[str, Any]) -> str:
    return ", ".join(f"{k}={v:g}" if isinstance(v, (int, float)) and not isinstance(v, bool) else f"{k}={v}"
                     for k, v in setting.items())


@dataclass
class Tuning:
    """One method's grid search: the settings in the order tried and the score of each.

    ``scores[i]`` is the median over ``seeds`` of the score of ``settings[i]``; ``per_seed[i]``
    holds the individual scores. Lower is better unless ``higher_is_better``.
    """

    method: str
    settings: list[dict[str, Any]]
    scores: np.ndarray
    seeds: tuple[int, ...] = ()
    higher_is_better: bool = False
    per_seed: np.ndarray | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        self.scores = np.asarray(self.scores, dtype=float)
        if not self.settings:
            raise ValueError(f"Tuning of {self.method!r}: settings must not be empty")
        if self.scores.shape != (len(self.settings),):
            raise ValueError(f"Tuning of {self.method!r}: scores must have one entry per setting "
                             f"({len(self.settings)}), got shape {self.scores.shape}")

    @property
    def size(self) -> int:
        return len(self.settings)

    def _key(self) -> np.ndarray:
        # NaN (a diverged setting) ranks last whichever way is better.
        s = -self.scores if self.higher_is_better else self.scores
        return np.where(np.isnan(s), np.inf, s)

    @property
    def best_index(self) -> int:
        return int(np.argmin(self._key()))

    @property
    def best(self) -> dict[str, Any]:
        """The best setting."""
        return dict(self.settings[self.best_index])

    @property
    def best_score(self) -> float:
        return float(self.scores[self.best_index])

    def best_so_far(self) -> np.ndarray:
        """The best score among the first k settings tried, k = 1..size."""
        key = np.minimum.accumulate(self._key())
        return -key if self.higher_is_better else key

    def labels(self) -> list[str]:
        return [_label(s) for s in self.settings]

    def on_edge(self) -> bool:
        """True when every setting that attains the best score has some swept parameter at the
        smallest or largest value tried (the grid may be too narrow: widen it before trusting the
        comparison). Ties that reach into the grid's interior are not an edge."""
        key = self._key()
        winners = [self.settings[i] for i in np.flatnonzero(key == key.min())]
        for name in self.settings[0]:
            values = sorted({s[name] for s in self.settings if isinstance(s[name], (int, float))})
            if len(values) > 2 and all(w[name] in (values[0], values[-1]) for w in winners):
                return True
        return False


def grid_search(
    method: str,
    score: Callable[..., float],
    grid: Mapping[str, Sequence[Any]],
    seeds: Sequence[int],
    *,
    higher_is_better: bool = False,
    jobs: int = 1,
    backend: str = "loky",
) -> Tuning:
    """Score ``score(seed=seed, **setting)`` for every setting of ``grid`` (the product of its
    value lists, in order) and every tuning seed; a setting's score is the median over seeds.

    The tuning seeds should be disjoint from the seeds the claim is then measured on (held out).
    A non-finite score (divergence) is kept as NaN and ranks last. With ``jobs > 1`` the
    (setting, seed) runs go to worker processes through :func:`optbook.core.parallel.pmap`
    (``backend`` as there; ``score`` must be picklable, closures included); the result is the
    serial one.
    """
    if not grid or any(len(v) == 0 for v in grid.values()):
        raise ValueError(f"grid for {method!r} must name at least one parameter, each with values")
    seeds = tuple(int(s) for s in seeds)
    if not seeds:
        raise ValueError(f"seeds for tuning {method!r} must not be empty")
    keys = list(grid)
    settings = [dict(zip(keys, combo)) for combo in itertools.product(*(grid[k] for k in keys))]
    runs = [(st, s) for st in settings for s in seeds]
    flat = pmap(lambda run: float(score(seed=run[1], **run[0])), runs, jobs=jobs, backend=backend)
    per_seed = np.array(flat, dtype=float).reshape(len(settings), len(seeds))
    per_seed[~np.isfinite(per_seed)] = np.nan
    with np.errstate(all="ignore"):
        med = np.array([np.median(row) if np.all(np.isfinite(row)) else np.nan for row in per_seed])
    return Tuning(method, settings, med, seeds, higher_is_better, per_seed)
