"""The claim registry: each chapter's headline result, measured.

A claim is a function registered next to the algorithm it tests::

    @claim("01", "BFGS is affine invariant", expect="max gap difference <= 1e-10")
    def bfgs_affine_invariance(fast: bool = False) -> Measured:
        ...
        return Measured({"max_rel_diff": err}, holds=err <= 1e-10)

It runs the experiment (smaller when ``fast``), and returns the numbers it measured and whether
the expectation held. A chapter that honestly finds its claim does not reproduce at this scale
registers it with ``reproduces=False``; the check then passes only while the claim still fails.

``python -m optbook claims`` runs them all; chapter notebooks call :func:`run_claim` at full
size, and during the book build each result is written to ``$OPTBOOK_CLAIMS_DIR`` for the
scoreboard page.
"""
from __future__ import annotations

import importlib
import json
import os
import pkgutil
import time
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

#: The subpackages holding chapters (one per part of the book).
PARTS = ("classical", "geometry", "training", "distributed", "bilevel", "decisions", "llm")


@dataclass
class Measured:
    """What a claim measured: named numbers (units in the names or the summary) and the verdict.

    ``details`` carries anything the chapter wants to plot (traces, arrays); it is not
    serialised.
    """

    values: dict[str, float]
    holds: bool
    summary: str = ""
    details: Any = field(default=None, repr=False)

    def __post_init__(self) -> None:
        if not isinstance(self.holds, (bool, np.bool_)):
            raise TypeError(f"holds must be a bool, got {type(self.holds).__name__}")
        self.holds = bool(self.holds)
        clean = {}
        for key, value in self.values.items():
            if isinstance(value, (bool, np.bool_)):
                clean[key] = bool(value)
            else:
                clean[key] = float(value)
        self.values = clean


@dataclass(frozen=True)
class Claim:
    """A registered claim: chapter number, short name, title, expectation and its runner."""

    chapter: str
    name: str
    title: str
    expected: str
    func: Callable[[bool], Measured]
    reproduces: bool = True

    @property
    def key(self) -> str:
        return f"{self.chapter}.{self.name}"


@dataclass
class ClaimResult:
    """One run of one claim, as the scoreboard shows it."""

    chapter: str
    name: str
    title: str
    expected: str
    measured: dict[str, float]
    holds: bool
    reproduces: bool
    seconds: float
    fast: bool
    summary: str = ""
    details: Any = field(default=None, repr=False, compare=False)

    @property
    def ok(self) -> bool:
        """True when the claim behaves as the chapter declares (holds == reproduces)."""
        return self.holds == self.reproduces

    @property
    def verdict(self) -> str:
        if self.reproduces:
            return "reproduces" if self.holds else "FAILS"
        return "does not reproduce (as declared)" if not self.holds else "NOW HOLDS: revisit the chapter"

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d.pop("details")
        return d


_REGISTRY: dict[str, Claim] = {}


def claim(
    chapter: str, title: str, *, expect: str, reproduces: bool = True, name: str | None = None
) -> Callable[[Callable[[bool], Measured]], Callable[[bool], Measured]]:
    """Register ``func(fast: bool) -> Measured`` as a headline claim of ``chapter`` ("NN")."""
    if not (isinstance(chapter, str) and len(chapter) == 2 and chapter.isdigit()):
        raise ValueError(f"chapter must be a two-digit string like '01', got {chapter!r}")
    if not title or not expect:
        raise ValueError("title and expect must be non-empty")

    def register(func: Callable[[bool], Measured]) -> Callable[[bool], Measured]:
        c = Claim(chapter, name or func.__name__, title, expect, func, bool(reproduces))
        if c.key in _REGISTRY and _REGISTRY[c.key].func.__qualname__ != func.__qualname__:
            raise ValueError(f"claim {c.key} is registered twice")
        _REGISTRY[c.key] = c
        return func

    return register


def load_all() -> None:
    """Import every chapter module so that its claims register."""
    for part in PARTS:
        try:
            pkg = importlib.import_module(f"optbook.{part}")
        except ModuleNotFoundError:
            continue
        for mod in pkgutil.walk_packages(pkg.__path__, prefix=f"optbook.{part}."):
            importlib.import_module(mod.name)


def registered(chapter: str | None = None) -> list[Claim]:
    """Registered claims, in chapter order, optionally of one chapter."""
    load_all()
    found = sorted(_REGISTRY.values(), key=lambda c: (c.chapter, c.name))
    return [c for c in found if chapter is None or c.chapter == chapter]


def get(key: str) -> Claim:
    """A claim by ``"NN.name"``."""
    load_all()
    if key not in _REGISTRY:
        raise ValueError(f"no claim {key!r}; registered: {sorted(_REGISTRY)}")
    return _REGISTRY[key]


def run_claim(key: str | Claim, fast: bool = False) -> ClaimResult:
    """Run one claim and time it. During the book build (``OPTBOOK_CLAIMS_DIR`` set) the result
    is also written there as JSON for the scoreboard page."""
    c = key if isinstance(key, Claim) else get(key)
    t0 = time.perf_counter()
    m = c.func(fast)
    if not isinstance(m, Measured):
        raise TypeError(f"claim {c.key} must return Measured, got {type(m).__name__}")
    res = ClaimResult(
        c.chapter, c.name, c.title, c.expected, m.values, m.holds, c.reproduces,
        round(time.perf_counter() - t0, 3), bool(fast), m.summary, m.details,
    )
    out = os.environ.get("OPTBOOK_CLAIMS_DIR")
    if out:
        Path(out).mkdir(parents=True, exist_ok=True)
        (Path(out) / f"{c.key}.json").write_text(json.dumps(res.to_dict(), indent=1))
    return res


def run(chapter: str | None = None, fast: bool = False) -> list[ClaimResult]:
    """Run every registered claim (of one chapter, if given)."""
    return [run_claim(c, fast) for c in registered(chapter)]


def load_results(folder: str | Path) -> list[ClaimResult]:
    """Read the results that :func:`run_claim` wrote to ``folder``, in chapter order."""
    results = []
    for path in sorted(Path(folder).glob("*.json")):
        results.append(ClaimResult(**json.loads(path.read_text())))
    return results


def _fmt(value: float) -> str:
    if isinstance(value, bool):
        return str(value)
    return f"{value:.4g}"


def format_measured(measured: dict[str, float]) -> str:
    """``name=value`` pairs, 4 significant digits."""
    return ", ".join(f"{k}={_fmt(v)}" for k, v in measured.items())


def format_table(results: Iterable[ClaimResult]) -> str:
    """A plain-text scoreboard: chapter, claim, expected, measured, verdict, seconds."""
    rows = [("ch", "claim", "expected", "measured", "verdict", "s")]
    for r in results:
        rows.append((r.chapter, r.name, r.expected, format_measured(r.measured), r.verdict, f"{r.seconds:.1f}"))
    widths = [min(60, max(len(row[i]) for row in rows)) for i in range(len(rows[0]))]
    lines = []
    for j, row in enumerate(rows):
        lines.append("  ".join(cell[:60].ljust(w) for cell, w in zip(row, widths)))
        if j == 0:
            lines.append("  ".join("-" * w for w in widths))
    return "\n".join(lines)
