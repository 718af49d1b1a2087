"""Tables of claim results (the paper's claim, our criterion and figure, the control, a verdict
badge) and of plain measurement records. Styled with the theme's colour variables, so they
follow light and dark mode, with fallbacks for a plain notebook."""
from __future__ import annotations

import html
from collections.abc import Iterable

from ..claims import ClaimResult, format_measured, format_table

# Theme variables of pydata-sphinx-theme (the book's theme), with light fallbacks for Jupyter.
TABLE_CSS = (
    ".optbook-claims{border-collapse:collapse;font-size:0.85em;margin:0.5em 0;width:100%;"
    "overflow-wrap:break-word;hyphens:auto}"
    ".optbook-claims th,.optbook-claims td{border:1px solid var(--pst-color-border,#ccc);padding:4px 8px;"
    "vertical-align:top;text-align:left}"
    ".optbook-claims th{background:var(--pst-color-table-heading-bg,#f3f3f3);overflow-wrap:normal}"
    ".optbook-claims details summary{cursor:pointer;color:var(--pst-color-text-muted,#555)}"
    ".optbook-badge{display:inline-block;padding:1px 6px;border-radius:10px;font-weight:600;"
    "border:1px solid;color:var(--pst-color-text-base,#222);overflow-wrap:normal;hyphens:none}"
    ".optbook-good{background:var(--pst-color-success-bg,#dff3e4);border-color:var(--pst-color-success,#1a7f37)}"
    ".optbook-neutral{background:var(--pst-color-warning-bg,#fff1d6);border-color:var(--pst-color-warning,#8a5a00)}"
    ".optbook-bad{background:var(--pst-color-danger-bg,#fde2e2);border-color:var(--pst-color-danger,#c62828)}"
    # On a phone a row becomes a card: one cell per line, each led by its column's name.
    "@media (max-width:600px){table.optbook-cards,table.optbook-cards tbody,table.optbook-cards tr,"
    "table.optbook-cards td{display:block;width:100%!important}"
    "table.optbook-cards colgroup,table.optbook-cards tr.optbook-head{display:none}"
    "table.optbook-cards tr{margin-bottom:0.8em;border:1px solid var(--pst-color-border,#ccc)}"
    "table.optbook-cards td{border:none;border-bottom:1px solid var(--pst-color-border-muted,#eee)}"
    "table.optbook-cards td::before{content:attr(data-label);display:block;font-weight:600;font-size:0.85em;"
    "color:var(--pst-color-text-muted,#555)}}"
)
_STYLE = f"<style>{TABLE_CSS}</style>"


def verdict_badge(result: ClaimResult) -> str:
    """The verdict as a coloured badge (HTML)."""
    return f'<span class="optbook-badge optbook-{result.status}">{html.escape(result.verdict)}</span>'


def control_text(result: ClaimResult) -> str:
    """What the negative control did, in words (HTML)."""
    if result.control_holds is None:
        return "-" if result.kind != "reproduction" else "not run"
    outcome = "meets the criterion too" if result.control_holds else "fails the criterion, as it must"
    return (f"{html.escape(result.control)} <em>{outcome}</em>"
            + (f" ({html.escape(result.control_summary)})" if result.control_summary else ""))


def _measured_cell(r: ClaimResult) -> str:
    head = html.escape(r.summary) if r.summary else ""
    seeds = f"<br><small>{len(r.seeds)} seeds</small>" if r.seeds else ""
    values = html.escape(format_measured(r.measured))
    return f"{head}{seeds}<details><summary>all values</summary><small>{values}</small></details>"


def _row(head: list[str], cells: list[str]) -> str:
    """A table row whose cells carry their column's name (shown on a phone, where rows stack)."""
    return "<tr>" + "".join(f'<td data-label="{html.escape(h)}">{c}</td>' for h, c in zip(head, cells)) + "</tr>"


class ClaimTable:
    """Rich-display table of :class:`~optbook.claims.ClaimResult` rows (HTML in notebooks and
    in the book, plain text elsewhere)."""

    def __init__(self, results: Iterable[ClaimResult], *, show_chapter: bool = False):
        self.results = list(results)
        if not self.results:
            raise ValueError("results must not be empty")
        self.show_chapter = show_chapter

    def _repr_html_(self) -> str:
        head = (["ch."] if self.show_chapter else []) + ["claim", "paper", "criterion", "measured",
                                                          "negative control", "verdict"]
        rows = []
        for r in self.results:
            kind = f"<br><small>{html.escape(r.kind)}</small>"
            diagnosis = (f"<details><summary>diagnosis</summary><small>{html.escape(r.diagnosis)}</small></details>"
                         if r.diagnosis else "")
            cells = ([html.escape(r.chapter)] if self.show_chapter else []) + [
                html.escape(r.title) + kind, html.escape(r.paper) or "-", html.escape(r.expected),
                _measured_cell(r), control_text(r), verdict_badge(r) + diagnosis,
            ]
            rows.append(_row(head, cells))
        header = '<tr class="optbook-head">' + "".join(f"<th>{h}</th>" for h in head) + "</tr>"
        # Fixed column shares, so that wrapping shortens the text columns, never the verdict.
        widths = [5, 16, 17, 16, 16, 16, 14] if self.show_chapter else [17, 18, 17, 16, 17, 15]
        cols = "<colgroup>" + "".join(f'<col style="width:{w}%">' for w in widths) + "</colgroup>"
        return (f'{_STYLE}<div class="optbook-table-wrap"><table class="optbook-claims optbook-cards" '
                f'style="table-layout:fixed">{cols}{header}{"".join(rows)}</table></div>')

    def __repr__(self) -> str:
        return format_table(self.results)


def claim_table(results: Iterable[ClaimResult] | ClaimResult, *, show_chapter: bool = False) -> ClaimTable:
    """The paper's claim, the criterion, the measured figure, the control and the verdict for one
    or more claim results."""
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
