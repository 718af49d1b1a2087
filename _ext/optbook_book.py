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
- **The home page's map** (``{optbook-map}``): every part and chapter of ``book/plan.yml``, the
  chapters listed in ``_toc.yml`` linked under their titles, the others greyed out.
"""
from __future__ import annotations

import json
import re
from pathlib import Path

import yaml
from docutils import nodes
from sphinx import addnodes
from sphinx.util.docutils import SphinxDirective

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


def published(toc: dict) -> dict[str, str]:
    """Chapter number -> document name, for every chapter file listed in a _toc.yml."""
    out: dict[str, str] = {}

    def walk(node):
        if isinstance(node, dict):
            f = node.get("file")
            if isinstance(f, str):
                m = re.search(r"(?:^|/)(\d\d)-[^/]+$", f)
                if m:
                    out[m.group(1)] = f.removesuffix(".md").removesuffix(".ipynb")
            for v in node.values():
                walk(v)
        elif isinstance(node, list):
            for v in node:
                walk(v)

    walk(toc)
    return out


class ChapterMap(SphinxDirective):
    """``{optbook-map}``: the parts and chapters of book/plan.yml, published ones linked."""

    has_content = False

    def run(self):
        here = Path(self.env.doc2path(self.env.docname)).resolve()
        root = next((p for p in here.parents if (p / "book" / "plan.yml").exists()), None)
        if root is None:
            raise self.error("optbook-map: no book/plan.yml above this page")
        plan = yaml.safe_load((root / "book" / "plan.yml").read_text())
        toc_file = root / "_toc.yml"
        done = published(yaml.safe_load(toc_file.read_text())) if toc_file.exists() else {}
        self.env.note_dependency(str(root / "book" / "plan.yml"))
        self.env.note_dependency(str(toc_file))
        total = plan.get("total") or sum(len(p["chapters"]) for p in plan["parts"])
        box = nodes.container(classes=["optbook-map"])
        intro = nodes.paragraph(classes=["optbook-map-count"])
        intro += nodes.strong(text=f"{len(done)} of {total} chapters published")
        intro += nodes.Text("; the others are listed in grey and appear here as they are written.")
        box += intro
        for part in plan["parts"]:
            chapters = part["chapters"]
            n_done = sum(num in done for num in chapters)
            head = nodes.paragraph(classes=["optbook-map-part"] + ([] if n_done else ["optbook-planned"]))
            head += nodes.strong(text=part["title"])
            head += nodes.Text(f" ({n_done} of {len(chapters)})")
            box += head
            items = nodes.bullet_list(classes=["optbook-map-chapters"])
            for num, working_title in chapters.items():
                item = nodes.list_item()
                para = nodes.paragraph()
                if num in done:
                    ref = addnodes.pending_xref("", nodes.inline("", working_title), refdomain="std",
                                                reftype="doc", reftarget="/" + done[num], refexplicit=False,
                                                refwarn=True, refdoc=self.env.docname)
                    para += ref
                else:
                    item["classes"].append("optbook-planned")
                    para += nodes.Text(f"{num} · {working_title}")
                    para += nodes.inline(text=" (in preparation)", classes=["optbook-planned-tag"])
                item += para
                items += item
            box += items
        return [box]


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
