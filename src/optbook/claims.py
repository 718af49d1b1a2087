"""The claim registry: each chapter's headline result, measured so that it could have failed.

A claim is a function registered next to the algorithm it tests (the protocol is section 3 of
the design notes). There are two kinds.

A **reproduction** is the paper's own non-trivial result at laptop scale. It states the paper's
claim with its number (``paper=``), a criterion fixed before the full run (``expect=``), and a
negative control (``control=``): the same experiment with the paper's key ingredient removed,
which must *fail* the criterion::

    @claim("01", "BFGS iterations do not grow with kappa; GD's do", kind="reproduction",
           paper="rates depend only on M and f(x0) - f* (no number in the paper)",
           expect="median BFGS ratio <= 1.5 and median GD ratio >= 10 over 5 seeds",
           control="BFGS with its matrix reset to B0 every step (gradient descent in B0's metric)")
    def condition_independence(fast: bool = False, control: bool = False) -> Measured:
        ...
        return Measured({"bfgs_ratio": r}, criteria=[Criterion("bfgs_ratio", "<=", 1.5)],
                        seeds=seeds, summary=f"median BFGS ratio {r:.2f}")

An **identity** is a property that holds by theorem or construction (an invariance, a closed
form); it can fail only on a bug, so it is a regression check and never counts as a
reproduction.

A chapter that finds, after the four checks of the protocol, that its claim does not hold at
this scale registers it with ``reproduces=False`` and a ``diagnosis=``; one whose proxy cannot
show the effect (its measured ``precondition`` fails) registers ``reproduces=None`` (declared
inconclusive) with a ``diagnosis=``. The tests then check that the declaration still matches
the measurement, so the text is revisited the day it stops matching.

``python -m optbook claims`` runs them all; chapter notebooks call :func:`run_claim` at full
size, and during the book build each result is written to ``$OPTBOOK_CLAIMS_DIR`` for the
scoreboard page.
"""
from __future__ import annotations

import importlib
import inspect
import json
import math
import os
import pkgutil
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

#: The subpackages holding chapters (one per part of the book).
PARTS = ("classical", "geometry", "training", "distributed", "bilevel", "decisions", "llm")
KINDS = ("reproduction", "identity")
#: Fewest seeds a full-size reproduction may rest on (the protocol asks for 5, or 3 when one
#: run takes over 5 s).
MIN_SEEDS = 3


@dataclass(frozen=True)
class Criterion:
    """One inequality of a claim's criterion: ``values[key] op threshold``.

    Its :meth:`margin` says by how much the measurement clears the threshold (> 0 when it does):
    the log10 ratio when both numbers are positive (ratios, counts, errors), else the difference
    divided by max(|threshold|, 1). The scoreboard plots the smallest margin of each claim.
    """

    key: str
    op: str
    threshold: float

    def __post_init__(self) -> None:
        if self.op not in ("<=", ">=", "<", ">"):
            raise ValueError(f"Criterion op must be one of <=, >=, <, >; got {self.op!r}")
        if not math.isfinite(float(self.threshold)):
            raise ValueError(f"Criterion threshold must be finite, got {self.threshold!r}")

    def _value(self, values: dict[str, float]) -> float:
        if self.key not in values:
            raise ValueError(f"criterion names {self.key!r}, which is not among the measured values "
                             f"{sorted(values)}")
        return float(values[self.key])

    def met(self, values: dict[str, float]) -> bool:
        v, t = self._value(values), float(self.threshold)
        return bool({"<=": v <= t, ">=": v >= t, "<": v < t, ">": v > t}[self.op])

    def margin(self, values: dict[str, float]) -> float:
        v, t = self._value(values), float(self.threshold)
        if not math.isfinite(v):
            # An infinite value clears a threshold on the side it lies, else misses it badly.
            return math.inf if (v > t) == (self.op in (">=", ">")) else -math.inf
        if v > 0 and t > 0:
            m = math.log10(v / t)
        else:
            m = (v - t) / max(abs(t), 1.0)
        return m if self.op in (">=", ">") else -m

    def __str__(self) -> str:
        return f"{self.key} {self.op} {self.threshold:g}"


@dataclass
class Measured:
    """What a claim measured: named numbers and the verdict.

    ``criteria`` (optional) are the inequalities the claim's ``expect`` states; when given,
    ``holds`` defaults to all of them being met (an explicit ``holds`` is and-ed with them).
    ``seeds`` are the seeds (or problem instances) the verdict rests on. ``precondition`` is the
    measured premise of the proxy (e.g. "the baseline shows a large-batch gap"); when it is False
    the claim's verdict is *inconclusive*. ``details`` carries anything the chapter wants to plot;
    it is not serialised.
    """

    values: dict[str, float]
    holds: bool | None = None
    summary: str = ""
    details: Any = field(default=None, repr=False)
    criteria: Sequence[Criterion] = ()
    seeds: Sequence[int] = ()
    precondition: bool = True

    def __post_init__(self) -> None:
        if self.holds is not None and not isinstance(self.holds, (bool, np.bool_)):
            raise TypeError(f"holds must be a bool, got {type(self.holds).__name__}")
        if not isinstance(self.precondition, (bool, np.bool_)):
            raise TypeError(f"precondition must be a bool, got {type(self.precondition).__name__}")
        if self.holds is None and not self.criteria:
            raise ValueError("Measured needs holds= or criteria=")
        clean = {}
        for key, value in self.values.items():
            clean[key] = bool(value) if isinstance(value, (bool, np.bool_)) else float(value)
        self.values = clean
        self.criteria = tuple(self.criteria)
        for c in self.criteria:
            if not isinstance(c, Criterion):
                raise TypeError(f"criteria must be Criterion objects, got {type(c).__name__}")
        met = all(c.met(self.values) for c in self.criteria)
        self.holds = bool(met if self.holds is None else (self.holds and met))
        self.precondition = bool(self.precondition)
        self.seeds = tuple(int(s) for s in self.seeds)

    @property
    def margin(self) -> float | None:
        """The smallest margin over the criteria (> 0: every threshold cleared), None without."""
        return min(c.margin(self.values) for c in self.criteria) if self.criteria else None


@dataclass(frozen=True)
class Claim:
    """A registered claim and its runner ``func(fast, control=False) -> Measured``."""

    chapter: str
    name: str
    title: str
    expected: str
    func: Callable[..., Measured]
    kind: str
    paper: str = ""
    control: str = ""
    reproduces: bool | None = True
    diagnosis: str = ""

    @property
    def key(self) -> str:
        return f"{self.chapter}.{self.name}"


@dataclass
class ClaimResult:
    """One run of one claim (and of its control), as the tests and the scoreboard see it."""

    chapter: str
    name: str
    title: str
    expected: str
    measured: dict[str, float]
    holds: bool
    reproduces: bool | None
    seconds: float
    fast: bool
    summary: str = ""
    kind: str = "reproduction"
    paper: str = ""
    control: str = ""
    control_holds: bool | None = None
    control_summary: str = ""
    seeds: list[int] = field(default_factory=list)
    precondition: bool = True
    margin: float | None = None
    control_margin: float | None = None
    criteria: list[str] = field(default_factory=list)
    diagnosis: str = ""
    details: Any = field(default=None, repr=False, compare=False)

    @property
    def key(self) -> str:
        return f"{self.chapter}.{self.name}"

    @property
    def verdict(self) -> str:
        """``reproduces``, ``does not reproduce``, ``inconclusive`` for a reproduction; ``holds``
        for an identity; upper-case words for anything the tests must reject."""
        if self.kind == "identity":
            return "holds" if self.holds else "BROKEN"
        if not self.precondition:
            return "inconclusive" if self.reproduces is None else "PRECONDITION FAILS"
        if self.reproduces is None:
            return "PRECONDITION NOW MET: revisit the chapter"
        if self.holds:
            if not self.reproduces:
                return "NOW HOLDS: revisit the chapter"
            return "CONTROL HOLDS TOO: the claim cannot fail" if self.control_holds else "reproduces"
        return "does not reproduce" if not self.reproduces else "FAILS"

    @property
    def ok(self) -> bool:
        """True when the measurement matches what the chapter declares (and, for a reproduction
        that holds, its control fails)."""
        return self.verdict.split(" (")[0] in {"reproduces", "does not reproduce", "inconclusive", "holds"}

    @property
    def status(self) -> str:
        """One word for styling: ``good`` (reproduces, holds), ``neutral`` (declared not to
        reproduce or inconclusive) or ``bad`` (a mismatch)."""
        if not self.ok:
            return "bad"
        return "good" if self.verdict in ("reproduces", "holds") else "neutral"

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d.pop("details")
        d["verdict"] = self.verdict
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> ClaimResult:
        return cls(**{k: v for k, v in d.items() if k != "verdict"})


_REGISTRY: dict[str, Claim] = {}


def _takes_control(func: Callable) -> bool:
    try:
        return "control" in inspect.signature(func).parameters
    except (TypeError, ValueError):
        return False


def claim(
    chapter: str,
    title: str,
    *,
    expect: str,
    kind: str,
    paper: str = "",
    control: str = "",
    reproduces: bool | None = True,
    diagnosis: str = "",
    name: str | None = None,
) -> Callable[[Callable[..., Measured]], Callable[..., Measured]]:
    """Register ``func(fast=False, control=False) -> Measured`` as a claim of ``chapter`` ("NN").

    Parameters
    ----------
    kind : {'reproduction', 'identity'}
        A reproduction needs ``paper`` (the paper's statement, with its number where it gives
        one) and ``control`` (one sentence: the experiment with the key ingredient removed), and
        its function takes ``control``. An identity holds by theorem or construction.
    expect : str
        The criterion, fixed before the full run.
    reproduces : True, False or None
        What the chapter declares: True (the claim holds and its control fails), False (does
        not reproduce; needs ``diagnosis`` naming the protocol's four checks), None (declared
        inconclusive: the proxy's precondition fails; needs ``diagnosis``).
    """
    where = f"claim {chapter}.{name or '<function name>'}"
    if not (isinstance(chapter, str) and len(chapter) == 2 and chapter.isdigit()):
        raise ValueError(f"chapter must be a two-digit string like '01', got {chapter!r}")
    if not title or not expect:
        raise ValueError(f"{where}: title and expect must be non-empty")
    if kind not in KINDS:
        raise ValueError(f"{where}: kind must be one of {KINDS}, got {kind!r}")
    if reproduces not in (True, False, None):
        raise ValueError(f"{where}: reproduces must be True, False or None, got {reproduces!r}")
    if kind == "reproduction":
        if not paper.strip():
            raise ValueError(f"{where}: a reproduction needs paper= (the paper's statement, with its number)")
        if not control.strip():
            raise ValueError(f"{where}: a reproduction needs control= (the experiment without the key ingredient)")
    if kind == "identity" and reproduces is not True:
        raise ValueError(f"{where}: an identity holds by theorem; reproduces=False/None is for reproductions")
    if reproduces is not True and not diagnosis.strip():
        what = "reproduces=False" if reproduces is False else "reproduces=None (inconclusive)"
        raise ValueError(f"{where}: {what} needs diagnosis= (the protocol's four checks)")

    def register(func: Callable[..., Measured]) -> Callable[..., Measured]:
        key_name = name or func.__name__
        if kind == "reproduction" and not _takes_control(func):
            raise ValueError(f"claim {chapter}.{key_name}: a reproduction's function must take control=")
        c = Claim(chapter, key_name, title, expect, func, kind, paper, control, reproduces, diagnosis)
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


def registered(chapter: str | None = None, kind: str | None = None) -> list[Claim]:
    """Registered claims in chapter order (within a chapter, in the order they are defined: the
    first reproduction is the chapter's headline), optionally of one chapter or one kind."""
    load_all()
    if kind is not None and kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS}, got {kind!r}")
    found = sorted(_REGISTRY.values(), key=lambda c: c.chapter)  # stable: definition order within
    return [c for c in found if (chapter is None or c.chapter == chapter) and (kind is None or c.kind == kind)]


def get(key: str) -> Claim:
    """A claim by ``"NN.name"``."""
    load_all()
    if key not in _REGISTRY:
        raise ValueError(f"no claim {key!r}; registered: {sorted(_REGISTRY)}")
    return _REGISTRY[key]


def _call(c: Claim, fast: bool, control: bool) -> Measured:
    what = f"claim {c.key}" + (" (control run)" if control else "")
    try:
        m = c.func(fast, control=True) if control else c.func(fast)
    except Exception as err:  # name the claim: a bare traceback from deep inside says nothing
        raise RuntimeError(f"{what} raised {type(err).__name__}: {err}") from err
    if not isinstance(m, Measured):
        raise TypeError(f"{what} must return Measured, got {type(m).__name__}")
    return m


def run_claim(key: str | Claim, fast: bool = False, *, with_control: bool = True) -> ClaimResult:
    """Run one claim, and for a reproduction its control at the same size, and time them.

    During the book build (``OPTBOOK_CLAIMS_DIR`` set) a full-size result is also written there as
    JSON for the scoreboard page (a fast one never is).
    """
    c = key if isinstance(key, Claim) else get(key)
    t0 = time.perf_counter()
    m = _call(c, fast, control=False)
    if c.kind == "reproduction" and not fast and len(m.seeds) < MIN_SEEDS:
        raise ValueError(f"claim {c.key}: a full-size reproduction rests on at least {MIN_SEEDS} seeds, "
                         f"it reported {len(m.seeds)}")
    ctrl = _call(c, fast, control=True) if c.kind == "reproduction" and with_control else None
    res = ClaimResult(
        c.chapter, c.name, c.title, c.expected, m.values, m.holds, c.reproduces,
        round(time.perf_counter() - t0, 3), bool(fast), m.summary, c.kind, c.paper, c.control,
        None if ctrl is None else ctrl.holds, "" if ctrl is None else ctrl.summary, list(m.seeds),
        m.precondition, m.margin, None if ctrl is None else ctrl.margin,
        [str(k) for k in m.criteria], c.diagnosis, m.details,
    )
    out = os.environ.get("OPTBOOK_CLAIMS_DIR")
    if out and not fast:  # the folder holds full-size results: a chapter's fast demo must not replace one
        Path(out).mkdir(parents=True, exist_ok=True)
        (Path(out) / f"{c.key}.json").write_text(json.dumps(res.to_dict(), indent=1))
    return res


def run(chapter: str | None = None, fast: bool = False, kind: str | None = None) -> list[ClaimResult]:
    """Run every registered claim (of one chapter or kind, if given)."""
    return [run_claim(c, fast) for c in registered(chapter, kind)]


def load_results(folder: str | Path) -> list[ClaimResult]:
    """Read the results that :func:`run_claim` wrote to ``folder``."""
    return [ClaimResult.from_dict(json.loads(p.read_text())) for p in sorted(Path(folder).glob("*.json"))]


def _fmt(value: float) -> str:
    if isinstance(value, bool):
        return str(value)
    return f"{value:.4g}"


def format_measured(measured: dict[str, float]) -> str:
    """``name=value`` pairs, 4 significant digits."""
    return ", ".join(f"{k}={_fmt(v)}" for k, v in measured.items())


def format_table(results: Iterable[ClaimResult]) -> str:
    """A plain-text scoreboard: chapter, claim, kind, headline figure, control, verdict, seconds."""
    rows = [("ch", "claim", "kind", "measured", "control holds", "verdict", "s")]
    for r in results:
        ctrl = "-" if r.control_holds is None else str(r.control_holds)
        rows.append((r.chapter, r.name, r.kind, r.summary or format_measured(r.measured),
                     ctrl, r.verdict, f"{r.seconds:.1f}"))
    widths = [min(60, max(len(row[i]) for row in rows)) for i in range(len(rows[0]))]
    lines = []
    for j, row in enumerate(rows):
        lines.append("  ".join(cell[:60].ljust(w) for cell, w in zip(row, widths)))
        if j == 0:
            lines.append("  ".join("-" * w for w in widths))
    return "\n".join(lines)
