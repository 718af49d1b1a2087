"""The book-wide pages' directives (loaded through ``sphinx: local_extensions`` in _config.yml).
Every list on these pages is generated, from book/plan.yml, book/paths.yml, the chapters'
sources and the package's ``METHODS`` tables, so the pages grow with the book:

- ``{optbook-paths}``: the reading paths of book/paths.yml (book/paths.md);
- ``{optbook-exercises}``: what each published chapter's exercises ask (book/teaching.md);
- ``{optbook-methods}``: the index of methods, from :func:`optbook.methods.index` (book/methods.md);
- ``{optbook-api}``: the API reference, autodoc of every indexed method and of ``optbook.core``
  (book/api.md).
"""
from __future__ import annotations

import re
from pathlib import Path

from docutils import nodes
from docutils.statemachine import StringList
from sphinx.util.docutils import SphinxDirective

import optbook_catalog as catalog


class _Generated(SphinxDirective):
    """A directive whose output is Markdown written from data, parsed as if it were in the page."""

    has_content = False

    @property
    def root(self) -> Path:
        here = Path(self.env.doc2path(self.env.docname)).resolve()
        root = next((p for p in here.parents if (p / "book" / "plan.yml").exists()), None)
        if root is None:
            raise self.error(f"{self.name}: no book/plan.yml above this page")
        for name in ("book/plan.yml", "book/paths.yml", "_toc.yml"):
            self.env.note_dependency(str(root / name))
        return root

    def markdown(self) -> str:
        raise NotImplementedError

    def run(self):
        box = nodes.container(classes=[f"optbook-{self.name.removeprefix('optbook-')}"])
        lines = self.markdown().splitlines()
        self.state.nested_parse(StringList(lines, source=self.env.docname), self.content_offset, box)
        return [box]

    def chapter_link(self, num: str, done: dict[str, str], plan: catalog.Plan) -> str:
        title = plan.chapter(num).title
        if num in done:
            return f"{{doc}}`{num} · {_escape(title)} </{done[num]}>`"
        return f"{num} · {_escape(title)} *(in preparation)*"


def _escape(text: str) -> str:
    """Text safe inside a MyST role's title (no backticks or angle brackets)."""
    return text.replace("`", "'").replace("<", "‹").replace(">", "›")


class ReadingPaths(_Generated):
    """``{optbook-paths}``: every path of book/paths.yml, as numbered lists of chapters."""

    def markdown(self) -> str:
        root = self.root
        plan, done = catalog.load_plan(root), catalog.load_published(root)
        known = catalog.exercises(root)
        for path in catalog.chapter_files(root).values():
            self.env.note_dependency(str(path))
        try:
            paths = catalog.load_paths(root, plan, known)
        except ValueError as exc:
            raise self.error(str(exc)) from exc
        out = []
        for p in paths:
            weeks = max((s.week or 0) for s in p.steps)
            out += [f"(path-{p.key})=", f"**{p.title}**" + (f" ({weeks} weeks)" if weeks else ""), "",
                    f"*{p.audience}*", ""]
            for k, s in enumerate(p.steps, 1):
                when = f"Week {s.week}: " if s.week else ""
                out.append(f"{k}. {when}{self.chapter_link(s.chapter, done, plan)}. {s.why}")
                if s.requires:
                    out.append(f"   Read first: {', '.join(s.requires)}.")
                exercises = [e for e in known.get(s.chapter, []) if not s.exercises or e.label in s.exercises]
                if s.chapter in done and exercises:
                    refs = ", ".join(f"{{ref}}`{e.kind.lower()} <{e.label}>`" for e in exercises)
                    out.append(f"   Exercises: {refs}.")
                elif s.chapter not in done:
                    out.append("   Exercises: suggested once the chapter is published.")
            out.append("")
        return "\n".join(out)


class ExerciseList(_Generated):
    """``{optbook-exercises}``: for each published chapter, what each exercise asks."""

    def markdown(self) -> str:
        root = self.root
        plan, done = catalog.load_plan(root), catalog.load_published(root)
        known = catalog.exercises(root)
        out = []
        for num, path in catalog.chapter_files(root).items():
            self.env.note_dependency(str(path))
            if num not in done:
                continue
            out += [f"**{self.chapter_link(num, done, plan)}**", ""]
            for e in known.get(num, []):
                out.append(f"- {{ref}}`{_escape(e.kind)} <{e.label}>`: {e.ask}")
            out.append("")
        return "\n".join(out)


def _short(path: str) -> str:
    return path.rsplit(".", 1)[1]


class MethodIndex(_Generated):
    """``{optbook-methods}``: every method and baseline of :func:`optbook.methods.index`, by chapter."""

    def markdown(self) -> str:
        from optbook import methods

        root = self.root
        plan, done = catalog.load_plan(root), catalog.load_published(root)
        rows = methods.index()
        by_chapter: dict[str, list] = {}
        for r in rows:
            by_chapter.setdefault(r.chapter, []).append(r)
        out = []
        for k, part in enumerate(plan.parts):
            out += [f"**{part}**", ""]
            for c in plan.in_part(k):
                entries = by_chapter.get(c.number)
                if not entries:
                    out += [f"- {self.chapter_link(c.number, done, plan)}: no methods indexed yet.", ""]
                    continue
                out.append(f"- {self.chapter_link(c.number, done, plan)}")
                for r in entries:
                    role = "the paper's method" if r.role == "method" else "baseline"
                    out.append(f"  - {{py:obj}}`{r.name} <{r.path}>` ({role}; {r.kind}): {_plain(r.summary)}")
                    out.append(f"    `{r.import_line}`")
                    if r.baselines:
                        out.append("    Baselines: " + ", ".join(_obj(b) for b in r.baselines) + ".")
                out.append("")
        return "\n".join(out)


def _obj(path: str) -> str:
    """A link to a baseline: the API reference for optbook's, plain code for another library's."""
    return f"{{py:obj}}`{_short(path)} <{path}>`" if path.startswith("optbook.") else f"`{path}`"


def _plain(text: str) -> str:
    """A docstring's first line as Markdown: reST literals and roles become code; ``*`` and ``_``
    outside code are escaped (they are products and subscripts there, not emphasis)."""
    text = re.sub(r":\w+:`~?([^`]+)`", r"``\1``", text).replace("``", "`")
    parts = text.split("`")
    for i in range(0, len(parts), 2):  # outside code spans
        parts[i] = parts[i].replace("*", "\\*").replace("_", "\\_").replace("$", "\\$")
    return "`".join(parts) if len(parts) % 2 else text.replace("`", "'")


class ApiReference(_Generated):
    """``{optbook-api}``: autodoc of every indexed object, part by part, then of ``optbook.core``."""

    def markdown(self) -> str:
        from optbook import methods

        root = self.root
        plan = catalog.load_plan(root)
        rows = [r for r in methods.index() if r.path.startswith("optbook.")]
        out, seen = [], set()
        for k, part in enumerate(plan.parts):
            numbers = {c.number for c in plan.in_part(k)}
            part_rows = [r for r in rows if r.chapter in numbers and r.path not in seen]
            if not part_rows:
                continue
            # A line of links first (not autosummary: its one-line extracts cut reST markup in half).
            names = [r.name for r in part_rows]
            label = {r.path: r.name if names.count(r.name) == 1 else f"{r.module.rsplit('.', 1)[1]}.{r.name}"
                     for r in part_rows}  # two modules' gradient_descent told apart
            out += [f"**{part}**", "", ", ".join(f"{{py:obj}}`{label[r.path]} <{r.path}>`" for r in part_rows), ""]
            for r in part_rows:
                seen.add(r.path)
                directive = "autoclass" if r.kind not in ("function", "minimizer (scipy.optimize shape)") else "autofunction"
                # autodoc writes reST, which MyST parses only inside eval-rst
                out += ["```{eval-rst}", f".. {directive}:: {r.path}"] + (["   :members:"] if directive == "autoclass" else []) + ["```", ""]
        out += ["**The shared core, `optbook.core`**", "", "```{eval-rst}", ".. automodule:: optbook.core", "   :members:", "```", ""]
        return "\n".join(out)


# Docstrings here are plain text with reST literals and roles: |x| means an absolute value and
# lam_ a name, not a substitution or a link target. Outside literals, roles and literal blocks,
# escape both so that such text renders as written instead of failing the -W build.
_KEEP = re.compile(r"(``.+?``|:[\w:]+:`[^`]*`|`[^`]*`_{0,2})")


def escape_plain_text(line: str) -> str:
    """``line`` with ``|`` and a word-final ``_`` escaped outside literals and roles."""
    parts = _KEEP.split(line)
    for i in range(0, len(parts), 2):
        parts[i] = re.sub(r"(?<=\w)_(?=\W|$)", r"\\_", parts[i].replace("|", "\\|"))
    return "".join(parts)


def escape_docstring(app, what, name, obj, options, lines) -> None:
    """``autodoc-process-docstring``: :func:`escape_plain_text` on every line outside literal blocks."""
    block_indent = None
    for k, line in enumerate(lines):
        indent = len(line) - len(line.lstrip())
        if block_indent is not None:
            if not line.strip() or indent > block_indent:
                continue
            block_indent = None
        lines[k] = escape_plain_text(line)
        if line.rstrip().endswith("::"):
            block_indent = indent


def skip_foreign_members(app, what, name, obj, skip, options):
    """``autodoc-skip-member``: a class's members that another library attached to it (scikit-learn's
    metadata-routing setters) are that library's to document."""
    module = getattr(obj, "__module__", None) or ""
    if what == "class" and callable(obj) and module and not module.startswith("optbook"):
        return True
    return None


def setup(app):
    app.connect("autodoc-process-docstring", escape_docstring)
    app.connect("autodoc-skip-member", skip_foreign_members)
    app.add_directive("optbook-paths", ReadingPaths)
    app.add_directive("optbook-exercises", ExerciseList)
    app.add_directive("optbook-methods", MethodIndex)
    app.add_directive("optbook-api", ApiReference)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
