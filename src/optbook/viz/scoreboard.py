"""The scoreboard page: one row per chapter, every reproduction's margin, the identities apart.

A chapter's headline is its first registered reproduction claim. The margin figure plots each
reproduction's smallest :meth:`~optbook.claims.Criterion.margin` (> 0: every threshold
cleared), coloured by verdict, so a reader sees at a glance which claims pass by a wide margin
and which barely.
"""
from __future__ import annotations

import html
from collections.abc import Iterable, Mapping, Sequence

import numpy as np
import plotly.graph_objects as go

from ..claims import ClaimResult
from .style import PALETTE, base_layout
from .tables import _STYLE, _row, control_text, verdict_badge

#: Marker colours by status, from the book's palette: blue for good, orange for neutral,
#: vermillion for bad (each also has its own marker symbol).
STATUS_COLORS = {"good": PALETTE[0], "neutral": PALETTE[6], "bad": PALETTE[1]}
STATUS_SYMBOLS = {"good": "circle", "neutral": "diamond", "bad": "x"}
CLAIM_ANCHOR = "does-the-claim-reproduce"


def headlines(results: Iterable[ClaimResult]) -> list[ClaimResult]:
    """Each chapter's headline result: its first reproduction claim."""
    by_chapter: dict[str, list[ClaimResult]] = {}
    for r in results:
        by_chapter.setdefault(r.chapter, []).append(r)
    out = []
    for chapter in sorted(by_chapter):
        rs = by_chapter[chapter]
        pick = next((r for r in rs if r.kind == "reproduction"), None)
        if pick is not None:
            out.append(pick)
    return out


def _link(chapter: str, title: str, pages: Mapping[str, str]) -> str:
    page = pages.get(chapter)
    label = f"{chapter} · {html.escape(title)}"
    return f'<a href="{html.escape(page)}#{CLAIM_ANCHOR}">{label}</a>' if page else label


class ChapterTable:
    """One row per chapter: the paper's claim in words, our figure beside the paper's, the
    control's outcome, seeds and the verdict badge, linking to the chapter's claim section."""

    def __init__(self, results: Iterable[ClaimResult], pages: Mapping[str, str] | None = None,
                 titles: Mapping[str, str] | None = None):
        self.rows = headlines(results)
        if not self.rows:
            raise ValueError("results must hold at least one non-identity claim")
        self.pages, self.titles = dict(pages or {}), dict(titles or {})

    def _repr_html_(self) -> str:
        head = ["chapter", "the paper says", "we measured", "negative control", "seeds", "verdict"]
        rows = []
        for r in self.rows:
            extra = (f"<details><summary>why</summary><small>{html.escape(r.diagnosis)}</small></details>"
                     if r.diagnosis else "")
            cells = [_link(r.chapter, self.titles.get(r.chapter, r.title), self.pages),
                     html.escape(r.paper or r.title), html.escape(r.summary or "-"),
                     control_text(r), str(len(r.seeds)) if r.seeds else "-", verdict_badge(r) + extra]
            rows.append(_row(head, cells))
        widths = [14, 22, 19, 18, 9, 18]  # the verdict badge and "seeds" fit unbroken at 1000 px
        cols = "<colgroup>" + "".join(f'<col style="width:{w}%">' for w in widths) + "</colgroup>"
        header = '<tr class="optbook-head">' + "".join(f"<th>{h}</th>" for h in head) + "</tr>"
        return (f'{_STYLE}<table class="optbook-claims optbook-cards" style="table-layout:fixed">{cols}'
                f'{header}{"".join(rows)}</table>')

    def __repr__(self) -> str:
        return "\n".join(f"{r.chapter}  {r.verdict:22s} {r.summary}" for r in self.rows)


class IdentityTable:
    """The identity checks (regression checks that hold by theorem), folded in a dropdown."""

    def __init__(self, results: Iterable[ClaimResult]):
        self.rows = [r for r in results if r.kind == "identity"]

    def _repr_html_(self) -> str:
        if not self.rows:
            return "<p>No identity checks registered.</p>"
        head = ["ch.", "identity", "checked", "measured", "status"]
        rows = [_row(head, [html.escape(r.chapter), html.escape(r.title), html.escape(r.expected),
                            html.escape(r.summary or "-"), verdict_badge(r)]) for r in self.rows]
        widths = [6, 32, 30, 20, 12]
        cols = "<colgroup>" + "".join(f'<col style="width:{w}%">' for w in widths) + "</colgroup>"
        header = '<tr class="optbook-head">' + "".join(f"<th>{h}</th>" for h in head) + "</tr>"
        return (f'{_STYLE}<details class="optbook-identities"><summary><b>{len(self.rows)} identity checks</b> '
                f'(properties that hold by theorem; they catch bugs and never count as reproductions)</summary>'
                f'<table class="optbook-claims optbook-cards" style="table-layout:fixed">{cols}{header}'
                f'{"".join(rows)}</table></details>')

    def __repr__(self) -> str:
        return "\n".join(f"{r.chapter}  {r.verdict:8s} {r.title}" for r in self.rows)


def margin_figure(results: Sequence[ClaimResult], *, height: int | None = None,
                  title: str = "Each reproduction's margin to its threshold, and its negative control's") -> go.Figure:
    """Every reproduction's smallest margin to its threshold (> 0: cleared), one row per claim,
    coloured by verdict; a second marker shows where the negative control landed."""
    repro = [r for r in results if r.kind == "reproduction" and r.margin is not None]
    if not repro:
        raise ValueError("no reproduction claim with criteria among the results")
    labels = [f"{r.chapter} {r.name}" for r in repro]

    def finite(v):
        return float(np.clip(v, -3.0, 3.0)) if v is not None else None

    fig = go.Figure()
    for status, name in (("good", "reproduces"), ("neutral", "does not reproduce / inconclusive"),
                         ("bad", "mismatch")):
        idx = [i for i, r in enumerate(repro) if r.status == status]
        if not idx:
            continue
        fig.add_trace(go.Scatter(
            x=[finite(repro[i].margin) for i in idx], y=[labels[i] for i in idx], mode="markers", name=name,
            marker=dict(color=STATUS_COLORS[status], symbol=STATUS_SYMBOLS[status], size=12,
                        line=dict(width=1, color="#333")),
            text=[html.escape(repro[i].summary) for i in idx],
            hovertemplate="%{y}<br>margin %{x:.2f}<br>%{text}<extra></extra>"))
    ctrl = [i for i, r in enumerate(repro) if r.control_margin is not None]
    if ctrl:
        fig.add_trace(go.Scatter(
            x=[finite(repro[i].control_margin) for i in ctrl], y=[labels[i] for i in ctrl], mode="markers",
            name="negative control", marker=dict(color="#777", symbol="circle-open", size=10, line=dict(width=2)),
            hovertemplate="%{y}<br>control margin %{x:.2f}<extra></extra>"))
    base_layout(fig, title=title, xaxis_title="margin to the threshold (log10 ratio, or relative difference); > 0 meets it",
                height=height or max(260, 90 + 26 * len(repro)))
    fig.add_vline(x=0, line=dict(color="#555", width=1.5, dash="dash"))
    fig.update_yaxes(autorange="reversed", title_text=None, type="category")
    fig.update_xaxes(range=[-3.2, 3.2], zeroline=False)
    fig.update_layout(margin=dict(l=10, t=105 if title else 60))
    fig.update_yaxes(automargin=True)
    return fig
