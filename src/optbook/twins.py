"""The chapters' ``.ipynb`` twins: MyST notebooks turned into plain Jupyter Markdown.

Colab, a JupyterLab without ``jupyterlab-myst`` and GitHub's viewer show MyST roles and directives
as raw text (``{cite:p}`key```, ```` ```{exercise-start} ````). The twin is what they open, so its
Markdown is converted; its code cells are the ``.md`` source's, unchanged and in the same order:

- citations become "(Author, year)" / "Author (year)" linked to a reference list appended at the
  end of the notebook, formatted from ``book/references.bib``;
- exercises and solutions (sphinx-exercise, plain or gated ``-start``/``-end``) become headed
  sections; a solution's heading is a cell of its own, stored collapsed (JupyterLab's
  ``jp-MarkdownHeadingCollapsed``, Colab's ``collapsed_sections``), so its text and code cells
  stay folded until the reader opens them. Not ``<details>``: jupyterlab-myst, which Binder
  installs, drops the math inside a ``<details>`` block;
- ``{glue:text}`` and ``{glue}`` get the values of the last executed build (the build's
  jupyter-cache, matched on the chapter's code), else those already in the twin when its code
  has not changed, else a marked placeholder;
- admonitions become block quotes, ``{literalinclude}`` the included code, ``{math}``/``{eq}``/
  ``{ref}``/``{numref}``/``{doc}`` plain math, text or links; MyST comments and targets go.

No plotly import: ``python -m optbook twins`` runs without the figure stack. It needs the book
extras (jupytext, myst-nb, pybtex, sphinx) and imports them lazily.
"""
from __future__ import annotations

import codecs
import copy
import functools
import hashlib
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Mapping

DEFAULT_CACHE = Path("_build/.jupyter_cache")  # relative to the project root, where the commands run
META_KEY = "optbook"

# What a twin must not contain outside code (the test's definition of "raw MyST").
RAW_ROLE = re.compile(r"(?<![`\w])\{[a-zA-Z][\w:.+-]*\}`")
RAW_FENCE = re.compile(r"^\s*(`{3,}|~{3,}|:{3,})\s*\{[^}]*\}", re.MULTILINE)
RAW_TARGET = re.compile(r"^\([^()\s]+\)=\s*$", re.MULTILINE)

_FENCE = re.compile(r"^(?P<indent> {0,3})(?P<mark>`{3,}|~{3,}|:{3,})\s*(?P<info>.*)$")
_DIRECTIVE = re.compile(r"^\{(?P<name>[^}\s]+)\}\s*(?P<arg>.*)$")
# A role (first alternative) or an inline code span (second): scanning left to right, a role
# inside a code span is consumed with the span and left alone.
_INLINE = re.compile(r"(?P<role>(?<![`\w])\{(?P<name>[a-zA-Z][\w:.+-]*)\}`(?P<body>[^`]*)`)"
                     r"|(?P<code>(?P<ticks>`+).+?(?<!`)(?P=ticks)(?!`))")
_TITLED = re.compile(r"^(?P<text>.*?)\s*<(?P<target>[^<>]+)>$", re.DOTALL)
_ADMONITIONS = {"note", "warning", "tip", "important", "hint", "caution", "attention", "danger",
                "error", "seealso", "admonition", "margin", "sidebar", "topic", "epigraph",
                "pull-quote", "card", "aside"}
_CODE_ROLES = {"code", "file", "samp", "command", "kbd", "envvar", "option", "program", "mod",
               "func", "class", "meth", "attr", "data", "obj", "exc", "const"}
_DROPPED = {"tableofcontents", "contents", "toctree", "bibliography", "rubric", "index"}
_CODE_DIRECTIVES = {"code", "code-block", "sourcecode"}
# Markers in converted lines: a cell boundary, the end of a solution (a boundary too), and "this
# cell is a heading stored collapsed" (a solution's heading: the cells after it are the solution's).
CUT, END, FOLD = "\x00cut\x00", "\x00end\x00", "\x00fold\x00"
FOLDED = "jp-MarkdownHeadingCollapsed"  # JupyterLab's cell metadata for a collapsed heading


def _decode_latex(text: str) -> str:
    """BibTeX text without LaTeX accents and braces; math (``$...$``) left as it is."""
    import latexcodec  # noqa: F401  (registers the "ulatex" codec)

    parts = re.split(r"(\$[^$]*\$)", text)
    out = [p if p.startswith("$") else codecs.decode(p, "ulatex").replace("{", "").replace("}", "")
           for p in parts]
    return re.sub(r"\s+", " ", "".join(out)).strip()


@dataclass(frozen=True)
class Reference:
    """One bibliography entry: its in-text label parts and its line in the reference list."""

    key: str
    authors: str   # "Jin and Mokhtari", "Smith et al."
    year: str
    entry: str     # Markdown, one line


def _person_last(p) -> str:
    return _decode_latex(" ".join(p.prelast_names + p.last_names))


def _person_full(p) -> str:
    return _decode_latex(" ".join(p.first_names + p.middle_names + p.prelast_names + p.last_names))


def bibliography(md: Path) -> Path:
    """The BibTeX file of chapter ``md`` (book/partK-*/NN-slug.md -> book/references.bib)."""
    return Path(md).resolve().parents[1] / "references.bib"


def load_references(path: Path) -> dict[str, Reference]:
    """Every entry of ``path`` (a BibTeX file), keyed by citation key."""
    path = Path(path).resolve()
    return _load_references(str(path), path.stat().st_mtime_ns)


@functools.lru_cache(maxsize=4)
def _load_references(path: str, mtime: int) -> dict[str, Reference]:
    """load_references, parsed once per file version (every twin of a run reads the same file)."""
    from pybtex.database import parse_file

    refs = {}
    for key, e in parse_file(str(path)).entries.items():
        people = e.persons.get("author") or e.persons.get("editor") or []
        last = [_person_last(p) for p in people]
        authors = (last[0] if len(last) == 1 else " and ".join(last) if len(last) == 2
                   else f"{last[0]} et al." if last else _decode_latex(e.fields.get("organization", key)))
        f = {k.lower(): v for k, v in e.fields.items()}
        year = f.get("year", "n.d.")
        full = [_person_full(p) for p in people]
        names = ", ".join(full[:-1]) + (" and " if len(full) > 1 else "") + full[-1] if full else authors
        bits = [f"{names} ({year}).", _decode_latex(f.get("title", "")) + "."]
        venue = f.get("journal") or f.get("booktitle") or f.get("publisher") or f.get("school") \
            or f.get("institution") or f.get("howpublished")
        if venue:
            bits.append(f"*{_decode_latex(venue)}*.")
        if f.get("doi"):
            bits.append(f"<https://doi.org/{f['doi']}>")
        elif f.get("url"):
            bits.append(f"<{f['url']}>")
        elif f.get("eprint"):
            bits.append(f"arXiv:{f['eprint']}.")
        refs[key] = Reference(key, authors, year, " ".join(b for b in bits if b.strip(".")))
    return refs


def _glue_text(value: str, fmt: str) -> str:
    from myst_nb.core.variables import format_plain_text

    return format_plain_text(value, fmt)


def code_digest(nb) -> str:
    """sha256 of the notebook's code cells, in order (what decides the glued values)."""
    h = hashlib.sha256()
    for c in nb.cells:
        if c.cell_type == "code":
            h.update(c.source.encode() + b"\0")
    return h.hexdigest()[:16]


def glue_from_cache(nb, cache_dir: Path = DEFAULT_CACHE) -> dict[str, str] | None:
    """The glued values (name -> text/plain) of ``nb`` in an executed build's jupyter-cache, or
    None when the cache holds no execution of this notebook's code."""
    if not (Path(cache_dir) / "global.db").exists():
        return None
    from jupyter_cache import get_cache

    cache = get_cache(str(cache_dir))
    try:
        record = cache.match_cache_notebook(nb)
    except KeyError:
        return None
    out = {}
    for cell in cache.get_cache_bundle(record.pk).nb.cells:
        for o in cell.get("outputs", []):
            meta = o.get("metadata", {}).get("scrapbook")
            if meta:
                prefix = meta.get("mime_prefix", "")
                data = {k[len(prefix):]: v for k, v in o.get("data", {}).items()}
                if "text/plain" in data:
                    out[meta["name"]] = data["text/plain"]
    return out


@dataclass
class _State:
    """What the conversion of one notebook carries from cell to cell."""

    glue: Mapping[str, str]
    refs: Mapping[str, Reference]
    student: bool
    path: Path
    exercises: dict[str, int] = field(default_factory=dict)   # label -> number
    targets: dict[str, str] = field(default_factory=dict)     # (label)= -> heading text
    equations: dict[str, int] = field(default_factory=dict)   # math label -> number
    cited: list[str] = field(default_factory=list)
    missing_glue: set[str] = field(default_factory=set)
    used_glue: dict[str, str] = field(default_factory=dict)
    heading: int = 1                  # level of the last heading seen
    n_exercise: int = 0
    solution: str | None = None       # label of the open solution (gated), None outside
    stubbed: bool = False             # the open solution's code stub was written (student mode)


def _scan(cells, st: _State) -> None:
    """Number exercises and labelled equations and read targets' headings before converting, so
    that references may point forward."""
    n = 0
    pending = None
    for c in cells:
        if c.cell_type != "markdown":
            continue
        lines = c.source.splitlines()
        for i, line in enumerate(lines):
            m = _FENCE.match(line)
            d = _DIRECTIVE.match(m.group("info").strip()) if m else None
            label = next((ln.split(":", 2)[2].strip() for ln in lines[i + 1:i + 6]
                          if ln.strip().startswith(":label:")), None) if d else None
            if d and d.group("name") in ("exercise", "exercise-start"):
                n += 1
                st.exercises[label or f"exercise-{n}"] = n
            elif d and d.group("name") == "math" and label:
                st.equations.setdefault(label, len(st.equations) + 1)
            t = RAW_TARGET.match(line)
            if t:
                pending = line.strip()[1:-2]
            elif pending and line.startswith("#"):
                st.targets[pending] = line.lstrip("#").strip()
                pending = None
        for m in re.finditer(r"\$\$.+?\$\$\s*\(([^()\s]+)\)", c.source, re.DOTALL):
            st.equations.setdefault(m.group(1), len(st.equations) + 1)


def _cite(keys: str, mode: str, st: _State) -> str:
    parts = []
    for key in (k.strip() for k in keys.split(",")):
        ref = st.refs.get(key)
        if ref is None:
            raise ValueError(f"{st.path.name}: citation key {key!r} is not in references.bib")
        if key not in st.cited:
            st.cited.append(key)
        text = {"t": f"{ref.authors} ({ref.year})", "author": ref.authors,
                "year": ref.year}.get(mode, f"{ref.authors}, {ref.year}")
        parts.append(f"[{text}](#ref-{key})")
    return ", ".join(parts) if mode in ("t", "author", "year") else "(" + "; ".join(parts) + ")"


def _glue(body: str, st: _State, role: str) -> str:
    parts = body.rsplit(":", 1) if role == "glue:text" else [body]  # as myst-nb splits key:format
    key, fmt = (parts[0], parts[1]) if len(parts) == 2 and not parts[0].endswith(":") else (body, "")
    key = key.split("::")[-1].strip()
    if key not in st.glue:
        st.missing_glue.add(key)
        return f"[`{key}`: computed when the notebook runs]"
    st.used_glue[key] = st.glue[key]
    return _glue_text(st.glue[key], fmt)


def _ref_text(body: str, st: _State, role: str) -> str:
    m = _TITLED.match(body)
    text, label = (m.group("text"), m.group("target")) if m else (None, body.strip())
    if role == "doc":
        target = label + (".ipynb" if re.search(r"/\d\d-[^/]+$", label) else ".md")
        return f"[{text or Path(label).name}]({target})"
    if role == "eq":
        return f"({st.equations[label]})" if label in st.equations else f"({label})"
    if label in st.exercises:
        return f"[{text or f'Exercise {st.exercises[label]}'}](#{label})"
    if label in st.targets:
        return f"[{text or st.targets[label]}](#{label})"
    if label in st.equations:
        return f"[{text or f'equation ({st.equations[label]})'}](#{label})"
    return text or label


def inline(text: str, st: _State) -> str:
    """One stretch of Markdown with its MyST roles replaced (code spans left alone)."""
    def sub(m: re.Match) -> str:
        if m.group("code"):
            return m.group("code")
        name, body = m.group("name"), m.group("body")
        if name.startswith("cite"):
            return _cite(body, name.partition(":")[2] or "p", st)
        if name.startswith("glue"):
            return _glue(body, st, name)
        if name in ("ref", "numref", "eq", "doc", "any"):
            return _ref_text(body, st, name)
        if name == "math":
            return f"${body}$"
        if name in ("sub", "sup"):
            return f"<{name}>{body}</{name}>"
        plain = _TITLED.match(body)
        shown = plain.group("text") if plain and plain.group("text") else body
        if name.split(":")[-1] in _CODE_ROLES:
            return f"`{shown.lstrip('~!')}`"
        return shown  # term, abbr, download, and roles this converter does not know: their text
    return _INLINE.sub(sub, text)


def _unquote(value: str) -> str:
    """An option's value as MyST reads it (YAML scalars: quotes removed)."""
    if value[:1] in "\"'":
        import yaml

        try:
            return str(yaml.safe_load(value))
        except yaml.YAMLError:
            pass
    return value


def _options(lines: list[str]) -> tuple[dict[str, str], list[str]]:
    """A directive's options (``:key: value`` lines or a ``---`` YAML block) and its body."""
    opts: dict[str, str] = {}
    if lines and lines[0].strip() == "---":
        import yaml

        end = lines.index("---", 1) if "---" in lines[1:] else 0
        opts = {str(k): str(v) for k, v in (yaml.safe_load("\n".join(lines[1:end])) or {}).items()}
        return opts, lines[end + 1:]
    i = 0
    while i < len(lines) and re.match(r"^\s*:[\w-]+:", lines[i]):
        key, _, value = lines[i].strip()[1:].partition(":")
        opts[key] = _unquote(value.strip())
        i += 1
    return opts, lines[i:]


def _literalinclude(arg: str, opts: Mapping[str, str], st: _State) -> list[str]:
    from types import SimpleNamespace

    from sphinx.directives.code import LiteralIncludeReader

    opts = {k: int(v) if k in ("dedent", "lineno-start") and v.isdigit() else v for k, v in opts.items()}
    path = (st.path.parent / arg.strip()).resolve()
    code, _ = LiteralIncludeReader(str(path), dict(opts), SimpleNamespace(source_encoding="utf-8")).read()
    lang = opts.get("language") or ("python" if path.suffix == ".py" else "")
    lines = [f"*{opts['caption']}*", ""] if opts.get("caption") else []
    return lines + [f"```{lang}", *code.rstrip("\n").splitlines(), "```"]


def _quote(lines: list[str]) -> list[str]:
    return [("> " + ln).rstrip() for ln in lines]


def _directive(name: str, arg: str, body: list[str], st: _State) -> list[str]:
    """Plain Markdown for one (non-gated) directive."""
    opts, content = _options(body)
    if name in _DROPPED:
        return []
    if name == "literalinclude":
        return _literalinclude(arg, opts, st)
    if name in _CODE_DIRECTIVES:
        return [f"```{arg}", *content, "```"]
    if name == "math":
        label = opts.get("label")
        tag = f" \\tag{{{st.equations[label]}}}" if label in st.equations else ""
        anchor = [f'<a id="{label}"></a>', ""] if label else []
        return anchor + ["$$", *content, tag.strip(), "$$"] if tag else anchor + ["$$", *content, "$$"]
    if name in ("figure", "image"):
        caption = " ".join(convert_lines(content, st)).strip()
        return [f"![{opts.get('alt', caption)}]({arg})", *([f"*{caption}*"] if caption else [])]
    if name.startswith("glue"):
        key = arg.strip()
        return [f"[`{key}`: shown when the notebook runs]" if key not in st.glue else
                _glue_text(st.glue[key], "")] + convert_lines(content, st)
    if name in ("exercise", "solution"):
        return _plain_exercise(name, arg, opts, content, st)
    inner = convert_lines(content, st)
    if name == "list-table":
        return _list_table(arg, opts, content, st)
    if name in ("raw",):
        return content if arg.strip() in ("html", "markdown") else []
    if name.startswith("prf:"):
        title = name[4:].capitalize() + (f" ({arg})" if arg else "")
    elif name == "admonition":
        title = arg or "Note"
    else:  # note, warning, ... and unknown directives: their name as the title
        title = name.split(":")[-1].replace("-", " ").capitalize() + (f": {arg}" if arg else "")
    return _quote([f"**{inline(title, st)}.**", "", *inner])


def _list_table(arg: str, opts, content: list[str], st: _State) -> list[str]:
    rows: list[list[str]] = []
    for line in content:
        m = re.match(r"^(\*|\s+)\s*- (.*)$", line)
        if line.startswith("*"):
            rows.append([])
        if m and rows is not None:
            rows[-1].append(inline(m.group(2), st))
        elif rows and rows[-1] and line.strip():
            rows[-1][-1] += " " + inline(line.strip(), st)
    if not rows:
        return []
    head = rows[0] if opts.get("header-rows", "0") != "0" else [""] * len(rows[0])
    body = rows[1:] if opts.get("header-rows", "0") != "0" else rows
    out = [f"**{arg}**", ""] if arg else []
    out += ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    return out + ["| " + " | ".join(r) + " |" for r in body]


def _exercise_heading(label: str, st: _State, title: str) -> list[str]:
    st.n_exercise += 1
    number = st.exercises.get(label, st.n_exercise)
    hashes = "#" * min(st.heading + 1, 6)
    return [f'<a id="{label}"></a>', "", f"{hashes} Exercise {number}" + (f": {title}" if title else ""), ""]


def _solution_heading(label: str, st: _State) -> list[str]:
    """The solution's heading as a cell of its own, marked to be stored collapsed."""
    hashes = "#" * min(st.heading + 2, 6)
    return [CUT, FOLD, f"{hashes} Solution to Exercise {st.exercises.get(label, '?')}", CUT]


def _plain_exercise(name: str, arg: str, opts, content: list[str], st: _State) -> list[str]:
    if name == "exercise":
        label = opts.get("label", f"exercise-{st.n_exercise + 1}")
        return _exercise_heading(label, st, inline(arg, st)) + convert_lines(content, st)
    if st.student:
        return []
    return _solution_heading(arg.strip(), st) + convert_lines(content, st) + [END]


def _gated(name: str, arg: str, body: list[str], st: _State) -> list[str]:
    opts, _ = _options(body)
    if name == "exercise-start":
        return _exercise_heading(opts.get("label", f"exercise-{st.n_exercise + 1}"), st, inline(arg, st))
    if name == "exercise-end":
        return []
    if name == "solution-start":
        st.solution, st.stubbed = arg.strip(), False
        if st.student:
            return []
        return _solution_heading(st.solution, st)
    # solution-end
    st.solution = None
    return [END]


def convert_lines(lines: list[str], st: _State) -> list[str]:
    """Plain Markdown for MyST Markdown ``lines`` (directives, roles, comments, targets)."""
    out: list[str] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        m = _FENCE.match(line)
        if m:
            mark = m.group("mark")
            close = re.compile(rf"^ {{0,3}}{re.escape(mark[0])}{{{len(mark)},}}\s*$")
            j = next((k for k in range(i + 1, len(lines)) if close.match(lines[k])), len(lines))
            d = _DIRECTIVE.match(m.group("info").strip())
            body = lines[i + 1:j]
            if d is None:  # a plain code block: verbatim
                out += [line, *body, *lines[j:j + 1]]
            elif d.group("name") in ("exercise-start", "exercise-end", "solution-start", "solution-end"):
                out += _gated(d.group("name"), d.group("arg"), body, st)
            else:
                out += _emit(_directive(d.group("name"), d.group("arg"), body, st), st)
            i = j + 1
            continue
        if RAW_TARGET.match(line):
            out += _emit([f'<a id="{line.strip()[1:-2]}"></a>'], st)
        elif line.startswith("%"):
            pass  # a MyST comment
        elif line.startswith("$$"):
            j = next((k for k in range(i + 1, len(lines)) if "$$" in lines[k]), len(lines) - 1) \
                if line.strip() == "$$" or line.count("$$") == 1 else i
            block = "\n".join(lines[i:j + 1])
            tag = re.search(r"\$\$\s*\(([^()\s]+)\)\s*$", block)
            if tag:
                block = block[:tag.start()] + f" \\tag{{{st.equations[tag.group(1)]}}}$$"
                block = f'<a id="{tag.group(1)}"></a>\n\n' + block
            out += _emit(block.splitlines(), st)
            i = j + 1
            continue
        else:
            h = re.match(r"^(#{1,6})\s", line)
            if h:
                st.heading = len(h.group(1))
            out += _emit([inline(line, st)], st)
        i += 1
    return out


def _emit(lines: list[str], st: _State) -> list[str]:
    """Lines as they go out: none inside a solution in student mode."""
    return [] if st.solution is not None and st.student else lines


def _cell_id(cell, seen: set[str]) -> str:
    base = hashlib.sha256((cell.cell_type + "\0" + cell.source).encode()).hexdigest()[:8]
    cid, n = base, 1
    while cid in seen:
        n += 1
        cid = f"{base}-{n}"
    seen.add(cid)
    return cid


STUDENT_NOTE = ("> **Student copy.** The solutions are removed; where an exercise asks for code, an "
                "empty code cell waits for your answer.")


def convert(md: Path, glue: Mapping[str, str] | None = None, *, student: bool = False,
            refs: Mapping[str, Reference] | None = None):
    """The plain-Markdown notebook of the MyST chapter ``md``.

    ``glue``: name -> text/plain of the glued values (missing names get a placeholder);
    ``student``: drop the solutions, leaving one code stub per exercise whose solution has code.
    Returns an ``nbformat`` notebook; its ``metadata.optbook`` records the source, the digest of
    its code cells and the glued values used.
    """
    import jupytext
    import nbformat

    md = Path(md)
    if md.suffix != ".md" or not md.is_file():
        raise ValueError(f"md must be an existing MyST chapter (.md), got {md}")
    src = jupytext.read(md)
    st = _State(glue=dict(glue or {}), refs=refs if refs is not None else load_references(bibliography(md)),
                student=student, path=md)
    _scan(src.cells, st)
    cells = []
    in_solution = False  # the markdown being written is a solution's (tagged "solution")
    for cell in src.cells:
        if cell.cell_type == "markdown":
            text = "\n".join(convert_lines(cell.source.splitlines(), st))
            for chunk in re.split(f"({CUT}|{END})", text):
                if chunk == END:
                    in_solution = False
                folded = chunk.strip("\n").startswith(FOLD)
                chunk = re.sub(r"\n{3,}", "\n\n", chunk.replace(FOLD, "")).strip("\n")
                if chunk in (CUT, END) or not chunk.strip():
                    continue
                cells.append(nbformat.v4.new_markdown_cell(chunk))
                if folded:
                    cells[-1].metadata[FOLDED] = True
                    in_solution = True
                elif in_solution:
                    cells[-1].metadata["tags"] = ["solution"]
            continue
        new = nbformat.v4.new_code_cell(cell.source, metadata=copy.deepcopy(dict(cell.metadata)))
        if st.solution is not None:
            if st.student:
                if st.stubbed:
                    continue
                st.stubbed = True
                number = st.exercises.get(st.solution, "?")
                new = nbformat.v4.new_code_cell(f"# Exercise {number}: your code here.\n",
                                                metadata={"tags": ["exercise-stub"]})
            else:
                new.metadata.setdefault("tags", [])
                if "solution" not in new.metadata["tags"]:
                    new.metadata["tags"].append("solution")
        cells.append(new)
    if st.cited:
        level = "###" if st.heading <= 2 and cells and re.search(
            r"^## References\s*$", cells[-1].source if cells[-1].cell_type == "markdown" else "",
            re.MULTILINE) else "##"
        refs_md = [f"{level} Works cited" if level == "###" else "## References", ""]
        refs_md += [f'- <a id="ref-{k}"></a>{st.refs[k].entry}' for k in sorted(
            st.cited, key=lambda k: (st.refs[k].authors.lower(), st.refs[k].year))]
        cells.append(nbformat.v4.new_markdown_cell("\n".join(refs_md)))
    if student:
        cells.insert(1 if cells and cells[0].cell_type == "markdown" else 0,
                     nbformat.v4.new_markdown_cell(STUDENT_NOTE))
    seen: set[str] = set()
    for c in cells:
        c.id = _cell_id(c, seen)
        if c.metadata.get(FOLDED):
            c.metadata["id"] = c.id  # Colab names a collapsed section by its heading's metadata id
    nb = nbformat.v4.new_notebook(cells=cells)
    nb.metadata = {"kernelspec": dict(src.metadata.get("kernelspec", {})),
                   "language_info": {"name": "python"},
                   "colab": {"collapsed_sections": [c.id for c in cells if c.metadata.get(FOLDED)]},
                   META_KEY: {"source": md.name, "code_sha256": code_digest(src),
                              "glue": dict(sorted(st.used_glue.items())),
                              "glue_missing": sorted(st.missing_glue)}}
    return nb


def twin_path(md: Path) -> Path:
    """Where the twin of chapter ``md`` lives: beside it, ``.ipynb``."""
    return Path(md).with_suffix(".ipynb")


def recorded_glue(twin: Path) -> tuple[str | None, dict[str, str]]:
    """The code digest and glued values recorded in an existing twin (None, {} when absent)."""
    if not twin.exists():
        return None, {}
    meta = json.loads(twin.read_text()).get("metadata", {}).get(META_KEY, {})
    return meta.get("code_sha256"), dict(meta.get("glue", {}))


def glue_for(md: Path, cache_dir: Path = DEFAULT_CACHE) -> tuple[dict[str, str], str]:
    """Glued values for chapter ``md`` and where they came from: the executed build's cache
    ("cache"), else the current twin's when its code is unchanged ("twin"), else none ("none")."""
    import jupytext

    nb = jupytext.read(md)
    values = glue_from_cache(nb, cache_dir)
    if values is not None:
        return values, "cache"
    digest, recorded = recorded_glue(twin_path(md))
    if recorded and digest == code_digest(nb):
        return recorded, "twin"
    return {}, "none"


def dumps(nb) -> str:
    """The twin's file text (stable: sorted keys, one-space indent, final newline)."""
    import nbformat

    return nbformat.writes(nb, version=4) + "\n"


def chapters(root: Path = Path(".")) -> list[Path]:
    """Every chapter source on disk, in book order."""
    return sorted((Path(root) / "book").glob("part*/[0-9][0-9]-*.md"))


def write_twins(sources: Iterable[Path], cache_dir: Path = DEFAULT_CACHE) -> list[tuple[Path, str, int]]:
    """Write the twin of each chapter; returns (twin, glue source, placeholders) per chapter."""
    report, refs = [], None
    for md in sources:
        refs = refs or load_references(bibliography(md))
        glue, origin = glue_for(md, cache_dir)
        nb = convert(md, glue, refs=refs)
        twin = twin_path(md)
        twin.write_text(dumps(nb))
        report.append((twin, origin, len(nb.metadata[META_KEY]["glue_missing"])))
    return report


def raw_myst(text: str) -> list[str]:
    """The MyST left in Markdown ``text`` outside code blocks: roles, directive fences, targets."""
    plain, inside = [], None
    for line in text.splitlines():
        m = _FENCE.match(line)
        if inside is None and m and not m.group("info").strip().startswith("{"):
            inside = m.group("mark")
            continue
        if inside is not None:
            if re.match(rf"^ {{0,3}}{re.escape(inside[0])}{{{len(inside)},}}\s*$", line):
                inside = None
            continue
        plain.append(_INLINE.sub(lambda m: m.group("role") or "", line))  # code spans out, roles kept
    body = "\n".join(plain)
    return ([m.group(0) for m in RAW_ROLE.finditer(body)] + [m.group(0).strip() for m in RAW_FENCE.finditer(body)]
            + [m.group(0).strip() for m in RAW_TARGET.finditer(body)])
