"""Versioned verdicts: the full-size claim results recorded by date, and what changed since.

``make record-verdicts`` writes ``book/verdicts/<date>.json``: the date, the installed versions of
optbook's dependencies, and every claim's full-size result (as the book build measured it). The
scoreboard compares the results of the current build with the latest recorded file, claim by
claim, so a reader sees when a verdict or a headline figure moved, and after which dependency
upgrade or code change.
"""
from __future__ import annotations

import datetime as _dt
import importlib.metadata as _md
import json
import math
import platform
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .claims import ClaimResult, format_measured
from .core import check_positive

#: What a recorded file is named: the date it was recorded.
DATE_RE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
#: The fields of a result a record keeps: what the diff and the history read, not the claim's
#: prose (the paper's statement, the criterion, the control), which lives in the code.
KEPT = ("chapter", "name", "kind", "title", "verdict", "summary", "measured", "holds", "control_holds",
        "reproduces", "precondition", "margin", "control_margin", "seeds", "fast", "seconds")
#: The kinds of change, in the order the scoreboard lists them.
CHANGES = ("verdict changed", "figure changed", "new claim", "dropped claim", "unchanged")


def _requirement_name(req: str) -> str:
    return re.split(r"[\s<>=!~;\[(]", req.strip(), maxsplit=1)[0]


def environment(distribution: str = "optbook") -> dict[str, str]:
    """Python's version and the installed version of every package ``distribution`` declares
    (its runtime dependencies and its extras), by name, sorted; a declared package that is not
    installed is listed as ``"not installed"``."""
    try:
        requires = _md.requires(distribution) or []
    except _md.PackageNotFoundError as err:
        raise ValueError(f"distribution {distribution!r} is not installed") from err
    out = {"python": platform.python_version(), distribution: _md.version(distribution)}
    for name in sorted({_requirement_name(r) for r in requires}, key=str.lower):
        try:
            out[name] = _md.version(name)
        except _md.PackageNotFoundError:
            out[name] = "not installed"
    return out


def _as_dict(r: ClaimResult | Mapping[str, Any]) -> dict[str, Any]:
    if isinstance(r, ClaimResult):
        return r.to_dict()
    if isinstance(r, Mapping) and {"chapter", "name", "verdict"} <= set(r):
        return dict(r)
    raise ValueError(f"results must hold ClaimResult objects or their dicts (with chapter, name, verdict), "
                     f"got {type(r).__name__}")


def _key(d: Mapping[str, Any]) -> str:
    return f"{d['chapter']}.{d['name']}"


def record(results: Iterable[ClaimResult | Mapping[str, Any]], folder: str | Path, *,
           date: str | None = None, versions: Mapping[str, str] | None = None) -> Path:
    """Write ``folder/<date>.json`` (date: today, UTC) with the versions (default:
    :func:`environment`) and the results, one per claim, in key order. Fast-mode results are
    refused: the record is of the full-size claims. Recording twice on one day replaces the
    day's file. Returns the path written."""
    rows = [_as_dict(r) for r in results]
    if not rows:
        raise ValueError("results must not be empty")
    fast = sorted(_key(d) for d in rows if d.get("fast"))
    if fast:
        raise ValueError(f"results must be full-size claim results; fast-mode results for {fast[:3]}")
    keys = [_key(d) for d in rows]
    if len(set(keys)) != len(keys):
        raise ValueError(f"results hold a claim twice: {sorted({k for k in keys if keys.count(k) > 1})}")
    date = date or _dt.datetime.now(_dt.timezone.utc).date().isoformat()
    if not isinstance(date, str) or not DATE_RE.match(date):
        raise ValueError(f"date must be YYYY-MM-DD, got {date!r}")
    path = Path(folder) / f"{date}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    doc = {"date": date, "versions": dict(versions if versions is not None else environment()),
           "results": sorted(({k: d[k] for k in KEPT if k in d} for d in rows), key=_key)}
    path.write_text(json.dumps(doc, indent=1, sort_keys=True) + "\n")
    return path


@dataclass
class Recorded:
    """One recorded file: its date, the versions it was measured with, its results by key."""

    date: str
    versions: dict[str, str]
    results: dict[str, dict[str, Any]]


def load(path: str | Path) -> Recorded:
    """Read a file written by :func:`record`."""
    path = Path(path)
    try:
        doc = json.loads(path.read_text())
    except FileNotFoundError as err:
        raise ValueError(f"path {str(path)!r} does not exist") from err
    except json.JSONDecodeError as err:
        raise ValueError(f"path {str(path)!r} is not JSON: {err}") from err
    if not isinstance(doc, dict) or not {"date", "versions", "results"} <= set(doc):
        raise ValueError(f"path {str(path)!r} is not a recorded-verdicts file (needs date, versions, results)")
    return Recorded(doc["date"], dict(doc["versions"]), {_key(d): d for d in map(_as_dict, doc["results"])})


def history(folder: str | Path) -> list[Path]:
    """The recorded files in ``folder``, oldest first (an absent folder has none)."""
    folder = Path(folder)
    if folder.exists() and not folder.is_dir():
        raise ValueError(f"folder {str(folder)!r} is not a directory")
    return sorted(p for p in folder.glob("*.json") if DATE_RE.match(p.stem)) if folder.is_dir() else []


def latest(folder: str | Path) -> Path | None:
    """The most recent recorded file in ``folder``, or None."""
    files = history(folder)
    return files[-1] if files else None


def headline(d: Mapping[str, Any]) -> str:
    """A claim's headline figure as the scoreboard shows it: its summary, else its measured values."""
    return d.get("summary") or format_measured(d.get("measured", {}))


def _figures_differ(a: Mapping[str, Any], b: Mapping[str, Any], rtol: float) -> bool:
    if headline(a) != headline(b):
        return True
    ma, mb = a.get("measured", {}), b.get("measured", {})
    if set(ma) != set(mb):
        return True
    for k in ma:
        x, y = ma[k], mb[k]
        if isinstance(x, bool) or isinstance(y, bool):
            if x != y:
                return True
        elif not (math.isclose(float(x), float(y), rel_tol=rtol, abs_tol=0.0)
                  or (math.isnan(float(x)) and math.isnan(float(y)))):
            return True
    return False


@dataclass
class Change:
    """How one claim moved between a recorded file and now (``before``/``after``: None where the
    claim is absent on that side)."""

    key: str
    change: str
    verdict_before: str | None
    verdict_after: str | None
    figure_before: str | None
    figure_after: str | None


def diff(previous: Recorded | Iterable[ClaimResult | Mapping[str, Any]],
         current: Iterable[ClaimResult | Mapping[str, Any]], *, rtol: float = 1e-3) -> list[Change]:
    """Claim-by-claim changes from ``previous`` (a :class:`Recorded` file or results) to
    ``current``: a changed verdict, a changed headline figure (its text, or any measured value
    off by more than ``rtol`` relative), a new claim, a dropped claim, or unchanged. Sorted by
    kind of change (see ``CHANGES``), then by claim."""
    rtol = check_positive(rtol, "rtol", allow_zero=True)
    if isinstance(previous, Recorded):
        before = previous.results
    elif isinstance(previous, (str, bytes)) or not isinstance(previous, Iterable):
        raise ValueError(f"previous must be a Recorded file or claim results, got {type(previous).__name__}")
    else:
        before = {_key(d): d for d in map(_as_dict, previous)}
    if isinstance(current, (str, bytes)) or not isinstance(current, Iterable):
        raise ValueError(f"current must be claim results, got {type(current).__name__}")
    after = {_key(d): d for d in map(_as_dict, current)}
    out = []
    for key in sorted(set(before) | set(after)):
        a, b = before.get(key), after.get(key)
        if a is None:
            kind = "new claim"
        elif b is None:
            kind = "dropped claim"
        elif a["verdict"] != b["verdict"]:
            kind = "verdict changed"
        elif _figures_differ(a, b, rtol):
            kind = "figure changed"
        else:
            kind = "unchanged"
        out.append(Change(key, kind, a and a["verdict"], b and b["verdict"],
                          None if a is None else headline(a), None if b is None else headline(b)))
    return sorted(out, key=lambda c: (CHANGES.index(c.change), c.key))


def version_changes(previous: Recorded, current: Mapping[str, str]) -> dict[str, tuple[str | None, str | None]]:
    """Packages whose version differs between a recorded file and ``current``: name -> (then, now)."""
    if not isinstance(previous, Recorded):
        raise ValueError(f"previous must be a Recorded file, got {type(previous).__name__}")
    names = set(previous.versions) | set(current)
    return {n: (previous.versions.get(n), current.get(n)) for n in sorted(names, key=str.lower)
            if previous.versions.get(n) != current.get(n)}
