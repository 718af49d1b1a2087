"""Tables of claim results (expected vs measured, with a plain verdict)."""
from __future__ import annotations

import html
from collections.abc import Iterable

from ..claims import ClaimResult, format_measured, format_table

# Cells may wrap anywhere, so a wide table shrinks to the page column instead of overflowing it.
_STYLE = ("<style>.optbook-claims{border-collapse:collapse;font-size:0.85em;margin:0.5em 0;"
          "width:100%;overflow-wrap:anywhere}"
          ".optbook-claims th,.optbook-claims td{border:1px solid #ccc;padding:4px 8px;"
          "vertical-align:top;text-align:left}.optbook-claims th{background:#f3f3f3}"
          ".optbook-ok{color:#1a7f37;font-weight:bold}.optbook-bad{color:#c62828;font-weight:bold}"
          ".optbook-neutral{color:#8a5a00;font-weight:bold}</style>")


class ClaimTable:
    """Rich-display table of :class:`~optbook.claims.ClaimResult` rows (HTML in notebooks and
    in the book, plain text elsewhere)."""

    def __init__(self, results: Iterable[ClaimResult], *, show_chapter: bool = False):
        self.results = list(results)
        if not self.results:
            raise ValueError("results must not be empty")
        self.show_chapter = show_chapter

    def _verdict_class(self, r: ClaimResult) -> str:
        if not r.ok:
            return "optbook-bad"
        return "optbook-ok" if r.reproduces else "optbook-neutral"

    def _repr_html_(self) -> str:
        head = (["chapter"] if self.show_chapter else []) + ["claim", "expected", "measured", "verdict", "seconds"]
        rows = []
        for r in self.results:
            cells = ([html.escape(r.chapter)] if self.show_chapter else []) + [
                html.escape(r.title), html.escape(r.expected), html.escape(format_measured(r.measured)),
                f'<span class="{self._verdict_class(r)}">{html.escape(r.verdict)}</span>', f"{r.seconds:.1f}",
            ]
            rows.append("<tr>" + "".join(f"<td>{c}</td>" for c in cells) + "</tr>")
        header = "<tr>" + "".join(f"<th>{h}</th>" for h in head) + "</tr>"
        # Fixed column shares, so that wrapping shortens the text columns, never the verdict.
        widths = [5, 19, 25, 29, 14, 8] if self.show_chapter else [20, 26, 32, 14, 8]
        cols = "<colgroup>" + "".join(f'<col style="width:{w}%">' for w in widths) + "</colgroup>"
        return (f'{_STYLE}<table class="optbook-claims" style="table-layout:fixed">{cols}{header}'
                f'{"".join(rows)}</table>')

    def __repr__(self) -> str:
        return format_table(self.results)


def claim_table(results: Iterable[ClaimResult] | ClaimResult, *, show_chapter: bool = False) -> ClaimTable:
    """Expected vs measured for one or more claim results."""
    if isinstance(results, ClaimResult):
        results = [results]
    return ClaimTable(results, show_chapter=show_chapter)


class RecordsTable:
    """A small HTML table of rows (dicts with the same keys), numbers to 4 significant digits."""

    def __init__(self, rows: Iterable[dict]):
        self.rows = list(rows)
        if not self.rows:
            raise ValueError("rows must not be empty")
        self.columns = list(self.rows[0])

    @staticmethod
    def _cell(value) -> str:
        if isinstance(value, float):
            return f"{value:.4g}"
        return html.escape(str(value))

    def _repr_html_(self) -> str:
        header = "<tr>" + "".join(f"<th>{html.escape(c)}</th>" for c in self.columns) + "</tr>"
        body = "".join("<tr>" + "".join(f"<td>{self._cell(r.get(c, ''))}</td>" for c in self.columns) + "</tr>"
                       for r in self.rows)
        return f'{_STYLE}<table class="optbook-claims">{header}{body}</table>'

    def __repr__(self) -> str:
        return "\n".join("  ".join(f"{c}={self._cell(r.get(c, ''))}" for c in self.columns) for r in self.rows)


def records_table(rows: Iterable[dict]) -> RecordsTable:
    """Rows of measurements (e.g. a method comparison) as a table."""
    return RecordsTable(rows)
