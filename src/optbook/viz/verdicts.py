"""The scoreboard's verdict history: what changed since the last recorded verdicts, and the
recorded files themselves (see :mod:`optbook.verdicts`)."""
from __future__ import annotations

import html
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from ..verdicts import CHANGES, Change, history, load
from .tables import _STYLE, _row

#: Badge style of each kind of change (the scoreboard's good / neutral / bad colours).
_CHANGE_STYLE = {"verdict changed": "bad", "figure changed": "neutral", "new claim": "good",
                 "dropped claim": "bad", "unchanged": "good"}


_WORDS = {"verdict changed": ("verdict changed", "verdicts changed"),
          "figure changed": ("headline figure changed", "headline figures changed"),
          "new claim": ("new claim", "new claims"), "dropped claim": ("claim dropped", "claims dropped")}


def _cell(value: str | None) -> str:
    return "-" if value is None else html.escape(value)


class ChangesTable:
    """Every claim that moved since the recorded file of ``date``: the kind of change, the verdict
    then and now, the headline figure then and now; the unchanged claims counted in one line,
    with the packages whose version changed in between."""

    def __init__(self, changes: Sequence[Change], date: str,
                 version_changes: Mapping[str, tuple[str | None, str | None]] | None = None):
        self.changes = list(changes)
        if not all(isinstance(c, Change) for c in self.changes):
            raise ValueError("changes must be Change records (from optbook.verdicts.diff)")
        if not isinstance(date, str) or not date:
            raise ValueError(f"date must be the recorded file's date, got {date!r}")
        self.date, self.versions = date, dict(version_changes or {})

    @property
    def moved(self) -> list[Change]:
        return [c for c in self.changes if c.change != "unchanged"]

    def summary(self) -> str:
        """One sentence: how many claims moved, and how."""
        counts = {k: sum(c.change == k for c in self.changes) for k in CHANGES}
        parts = [f"{n} {_WORDS[k][n != 1]}" for k, n in counts.items() if n and k != "unchanged"]
        moved = "; ".join(parts) if parts else "nothing moved"
        return (f"Against the verdicts recorded on {self.date}: {moved}; {counts['unchanged']} of "
                f"{len(self.changes)} claims unchanged.")

    def _repr_html_(self) -> str:
        out = f"<p>{html.escape(self.summary())}</p>"
        if self.versions:
            items = ", ".join(f"{html.escape(n)} {_cell(a)} → {_cell(b)}" for n, (a, b) in self.versions.items())
            out += f"<p><small>Packages changed since then: {items}.</small></p>"
        if not self.moved:
            return _STYLE + out
        head = ["claim", "change", "verdict then → now", "headline figure then → now"]
        rows = [_row(head, [html.escape(c.key),
                            f'<span class="optbook-badge optbook-{_CHANGE_STYLE[c.change]}" style="white-space:nowrap">{html.escape(c.change)}</span>',
                            f"{_cell(c.verdict_before)} → {_cell(c.verdict_after)}",
                            f"{_cell(c.figure_before)} → {_cell(c.figure_after)}"]) for c in self.moved]
        header = '<tr class="optbook-head">' + "".join(f"<th>{h}</th>" for h in head) + "</tr>"
        return f'{_STYLE}{out}<table class="optbook-claims optbook-cards">{header}{"".join(rows)}</table>'

    def __repr__(self) -> str:
        return "\n".join([self.summary()] + [f"{c.key}: {c.change}" for c in self.moved])


class HistoryTable:
    """One row per recorded file, oldest first: its date, how many claims, how many reproduce,
    do not reproduce, or are inconclusive."""

    def __init__(self, folder: str | Path):
        self.files = history(folder)

    def rows(self) -> list[dict[str, object]]:
        out = []
        for path in self.files:
            rec = load(path)
            verdicts = [d["verdict"] for d in rec.results.values() if d.get("kind", "reproduction") == "reproduction"]
            out.append({"recorded": rec.date, "claims": len(rec.results),
                        **{v: sum(x == v for x in verdicts) for v in ("reproduces", "does not reproduce", "inconclusive")}})
        return out

    def _repr_html_(self) -> str:
        rows = self.rows()
        if not rows:
            return "<p>No verdicts recorded yet (<code>make record-verdicts</code> records them).</p>"
        head = list(rows[0])
        body = "".join(_row(head, [html.escape(str(r[h])) for h in head]) for r in rows)
        header = '<tr class="optbook-head">' + "".join(f"<th>{h}</th>" for h in head) + "</tr>"
        return f'{_STYLE}<table class="optbook-claims optbook-cards">{header}{body}</table>'

    def __repr__(self) -> str:
        return "\n".join(str(r) for r in self.rows())


def changes_table(changes: Iterable[Change], date: str,
                  version_changes: Mapping[str, tuple[str | None, str | None]] | None = None) -> ChangesTable:
    """The scoreboard's table of what moved since the recorded file of ``date``."""
    return ChangesTable(list(changes), date, version_changes)
