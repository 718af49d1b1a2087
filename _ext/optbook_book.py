"""The book's own Sphinx extension (loaded through ``sphinx: local_extensions`` in _config.yml).

- **Figures load only where there are figures.** A page whose HTML holds a book figure (written
  by :mod:`optbook.viz.renderer`) gets the figure script, deferred, and the shared theme
  (templates and palettes from :mod:`optbook.viz.style`, one cached file for the whole book); the
  script loads the smallest plotly.js bundle the page needs. Other pages load no plotly at all.
- **No MathJax without math**: the home page no longer loads it for its chapters' formulas.
- **A clean console.** sphinx-thebe adds its configuration script to every page twice
  ("Identifier 'THEBE_JS_URL' has already been declared"); duplicates are dropped, and with
  thebe switched off (``launch_buttons: thebe: false``) its files are dropped altogether.
- **Live explorers on the web page.** A notebook cell that only calls ``EXPLORER_*.show()`` needs
  a kernel; the page replaces it with one line saying where the live twin runs (the notebook
  keeps the cell).
- **The home page's map** (``{optbook-map}``): the map of the field from ``book/plan.yml`` (read
  by :mod:`optbook_catalog`): the ideas each chapter builds on as a grid of ideas by parts, then
  every chapter with its one-sentence summary; chapters listed in ``_toc.yml`` linked, the others
  greyed out.
"""
from __future__ import annotations

import json
import re
from pathlib import Path

from docutils import nodes
from sphinx import addnodes
from sphinx.util.docutils import SphinxDirective

import optbook_catalog as catalog
from optbook_catalog import published  # noqa: F401  (the tests read it here)

FIGURE_MARK = 'class="optbook-figure"'
THEME_FILE = "optbook-theme.js"
# A cell whose only statement shows a live explorer: `ch.EXPLORER_PHASES.show()`, `explorer.show()`.
EXPLORER_CELL = re.compile(r"^[\w.\[\]'\"]*?(?P<name>\w*explorer\w*)\.show\(\)\s*;?$", re.IGNORECASE)
LIVE_NOTE = ("Live explorer{name}: when this chapter runs as a notebook (Binder, Colab or Jupyter: the "
             "rocket button at the top of the page), this cell shows controls that recompute the figure. "
             "On this page, move the slider of the figure above.")


def explorer_name(source: str) -> str | None:
    """The explorer's name if ``source`` (a code cell) only shows a live explorer, else None."""
    code = [ln.strip() for ln in source.splitlines() if ln.strip() and not ln.strip().startswith("#")]
    if len(code) != 1:
        return None
    m = EXPLORER_CELL.match(code[0])
    if not m:
        return None
    name = re.sub(r"(?i)^explorer_?|_?explorer$", "", m.group("name"))
    return name.replace("_", " ").lower()


def replace_explorer_cells(app, doctree) -> None:
    """Swap each explorer-only code cell for a one-line note (see the module's docstring)."""
    for cell in list(doctree.findall(nodes.container)):
        if cell.get("nb_element") != "cell_code":
            continue
        blocks = list(cell.findall(nodes.literal_block))
        if not blocks:
            continue
        name = explorer_name(blocks[0].astext())
        if name is None:
            continue
        note = nodes.paragraph(classes=["optbook-live-note"])
        note += nodes.Text(LIVE_NOTE.format(name=f" ({name})" if name else ""))
        cell.replace_self(note)
        note["classes"] = ["optbook-live-note"]  # replace_self copied the cell's classes over


def _thebe_on(app) -> bool:
    return bool((app.config.html_theme_options or {}).get("launch_buttons", {}).get("thebe"))


def _is_mathjax(app, js) -> bool:
    path = app.config.mathjax_path or ""
    return bool((js.filename and path and js.filename.endswith(path))
                or "window.MathJax" in js.attributes.get("body", ""))


def page_assets(app, pagename, templatename, context, doctree) -> None:
    """Per page: figure script where figures are, thebe's scripts deduplicated (or dropped)."""
    scripts = context.get("script_files")
    if scripts is not None:
        seen, kept = set(), []
        for js in scripts:
            body = js.attributes.get("body", "")
            if not _thebe_on(app) and ("THEBE_JS_URL" in body or (js.filename or "").endswith("sphinx-thebe.js")):
                continue
            key = (js.filename, body)
            if key in seen:
                continue
            seen.add(key)
            kept.append(js)
        scripts[:] = kept
    if not _thebe_on(app) and context.get("css_files") is not None:
        context["css_files"][:] = [c for c in context["css_files"] if not c.filename.endswith("sphinx-thebe.css")]
    body = context.get("body") or ""
    # Sphinx counts the equations of every page a toctree includes, so the home page loaded
    # MathJax (1.2 MB) for its chapters' formulas: drop it where this page has none of its own.
    if scripts is not None and 'class="math' not in body and "\\(" not in body:
        scripts[:] = [js for js in scripts if not _is_mathjax(app, js)]
    if FIGURE_MARK in body:
        app.add_js_file(THEME_FILE, loading_method="defer", priority=600)
        app.add_js_file("optbook-figures.js", loading_method="defer", priority=601)


def write_theme(app, exception) -> None:
    """``_static/optbook-theme.js``: plotly templates and palettes shared by every figure."""
    if exception is not None or app.builder.format != "html":
        return
    from optbook.viz.renderer import template_payload
    from optbook.viz.style import PALETTE, PALETTE_DARK

    theme = {"palette": list(PALETTE), "paletteDark": list(PALETTE_DARK), "templates": template_payload()}
    out = Path(app.outdir) / "_static" / THEME_FILE
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("/* Generated by _ext/optbook_book.py from optbook.viz: do not edit. */\n"
                   f"window.OPTBOOK_THEME = {json.dumps(theme, separators=(',', ':'))};\n")


class ChapterMap(SphinxDirective):
    """``{optbook-map}``: the map of the field from book/plan.yml. First a figure: one row per
    idea, one column per part, each chapter that builds on the idea a numbered badge in its part's
    column (linked when the chapter is in _toc.yml, greyed otherwise); then every part with its
    chapters, each with its one-sentence summary and its ideas."""

    has_content = False

    def run(self):
        here = Path(self.env.doc2path(self.env.docname)).resolve()
        root = next((p for p in here.parents if (p / "book" / "plan.yml").exists()), None)
        if root is None:
            raise self.error("optbook-map: no book/plan.yml above this page")
        try:
            plan = catalog.load_plan(root)
        except ValueError as exc:
            raise self.error(str(exc)) from exc
        done = catalog.load_published(root)
        self.env.note_dependency(str(root / "book" / "plan.yml"))
        self.env.note_dependency(str(root / "_toc.yml"))
        box = nodes.container(classes=["optbook-map"])
        intro = nodes.paragraph(classes=["optbook-map-count"])
        intro += nodes.strong(text=f"{len(done)} of {len(plan.chapters)} chapters published")
        intro += nodes.Text("; the others are greyed out and appear here as they are written.")
        box += intro
        box += self.figure(plan, done)
        for k, title in enumerate(plan.parts):
            chapters = plan.in_part(k)
            n_done = sum(c.number in done for c in chapters)
            head = nodes.paragraph(classes=["optbook-map-part", f"optbook-p{k + 1}"] + ([] if n_done else ["optbook-planned"]))
            head += nodes.strong(text=title)
            head += nodes.Text(f" ({n_done} of {len(chapters)})")
            box += head
            items = nodes.bullet_list(classes=["optbook-map-chapters"])
            for c in chapters:
                item = nodes.list_item()
                para = nodes.paragraph()
                if c.number in done:
                    para += self.link(done[c.number], nodes.inline("", f"{c.number} · {c.title}"))
                else:
                    item["classes"].append("optbook-planned")
                    para += nodes.Text(f"{c.number} · {c.title}")
                    para += nodes.inline(text=" (in preparation)", classes=["optbook-planned-tag"])
                if c.summary:
                    para += nodes.Text(". " if not c.title.endswith((".", "?", "!")) else " ")
                    para += nodes.inline(text=c.summary, classes=["optbook-map-summary"])
                if c.ideas:
                    tags = nodes.inline(classes=["optbook-map-tags"])
                    tags += nodes.inline(text="Builds on: ", classes=["optbook-sr-only"])
                    for i in c.ideas:
                        tags += nodes.inline(text=plan.ideas[i], classes=["optbook-tag"])
                    para += tags
                item += para
                items += item
            box += items
        return [box]

    def link(self, doc: str, child) -> addnodes.pending_xref:
        return addnodes.pending_xref("", child, refdomain="std", reftype="doc", reftarget="/" + doc,
                                     refexplicit=True, refwarn=True, refdoc=self.env.docname)

    def figure(self, plan, done) -> nodes.container:
        """The ideas-by-parts grid (HTML and CSS only: no script, readable on a phone, in dark mode)."""
        fig = nodes.container(classes=["optbook-ideas"])
        fig["ids"] = ["optbook-map-figure"]
        cap = nodes.paragraph(classes=["optbook-ideas-caption"])
        cap += nodes.strong(text="The ideas each chapter builds on. ")
        cap += nodes.Text("One row per idea, one column per part of the book; each number is a chapter "
                          "(a link once it is published). A row that crosses several parts is an idea "
                          "the book follows from one setting to another.")
        fig += cap
        grid = nodes.container(classes=["optbook-ideas-grid"])
        header = nodes.container(classes=["optbook-ideas-row", "optbook-ideas-head"])
        header += nodes.inline(text="Idea", classes=["optbook-ideas-label"])
        for k, title in enumerate(plan.parts):
            numeral, _, rest = title.partition(". ")
            col = nodes.inline(classes=["optbook-ideas-cell", f"optbook-p{k + 1}"])
            col += nodes.inline(text=numeral, classes=["optbook-part-numeral"])
            col += nodes.inline(text=f" {rest}", classes=["optbook-sr-only"])
            header += col
        grid += header
        for key, label in plan.ideas.items():
            row = nodes.container(classes=["optbook-ideas-row"])
            row += nodes.inline(text=label, classes=["optbook-ideas-label"])
            for k in range(len(plan.parts)):
                cell = nodes.inline(classes=["optbook-ideas-cell", f"optbook-p{k + 1}"])
                for c in plan.in_part(k):
                    if key not in c.ideas:
                        continue
                    text = nodes.inline(text=c.number)
                    text += nodes.inline(text=f" {c.title}", classes=["optbook-sr-only"])
                    if c.number in done:
                        # A plain reference, not a pending_xref: resolving one flattens its children
                        # to text, and the chapter's title must stay a screen-reader-only span.
                        uri = self.env.app.builder.get_relative_uri(self.env.docname, done[c.number])
                        badge = nodes.inline(classes=["optbook-chip"])
                        badge += nodes.reference("", "", text, refuri=uri, internal=True,
                                                 reftitle=f"{c.number} · {c.title}")
                    else:
                        badge = nodes.inline(classes=["optbook-chip", "optbook-planned"])
                        badge += text
                    cell += badge
                row += cell
            grid += row
        fig += grid
        return fig


#: Pages that show the date of the build (the execution status page): read and written on every
#: build, though their source did not change, so the date is never that of an earlier build.
ALWAYS_REBUILT = ("book/status",)


def rebuild_dated_pages(app, env, added, changed, removed):
    """Sphinx's env-get-outdated hook: the dated pages are always outdated."""
    return [d for d in ALWAYS_REBUILT if d in env.found_docs]


def setup(app):
    app.add_directive("optbook-map", ChapterMap)
    app.connect("env-get-outdated", rebuild_dated_pages)
    app.connect("doctree-read", replace_explorer_cells)
    app.connect("html-page-context", page_assets, priority=900)  # after sphinx.ext.mathjax adds its files
    app.connect("build-finished", write_theme)
    app.add_css_file("optbook.css")
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
