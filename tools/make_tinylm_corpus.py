"""Write the text corpus of Part VII's tiny language model (src/optbook/llm/corpus/*.txt).

Run once by a maintainer; the files are committed, so the model trains on the same bytes on
every machine and Python version. Four domains, so that chapters can specialise "source" models:

- ``abstracts``: the abstracts of the 37 papers of the book (the paper cards in ../shared/papers);
- ``text``, ``numeric``, ``system``: docstrings of Python standard-library modules grouped by what
  the modules do (string handling, numbers, the operating system).

Every file is plain ASCII (NFKD-folded, other characters dropped) so that the model's alphabet
is fixed: printable ASCII plus newline.

    python tools/make_tinylm_corpus.py --cards ../shared/papers
"""
from __future__ import annotations

import argparse
import importlib
import inspect
import pathlib
import re
import unicodedata

OUT = pathlib.Path(__file__).resolve().parents[1] / "src" / "optbook" / "llm" / "corpus"
LIMIT = 60_000  # characters per domain: big enough to learn, small enough to ship

MODULES = {
    "text": ["string", "re", "textwrap", "difflib", "html", "html.parser", "json", "csv",
             "email.message", "email.utils", "unicodedata", "codecs", "shlex", "fnmatch",
             "gettext", "locale", "pprint", "reprlib", "xml.dom.minidom", "urllib.parse"],
    "numeric": ["math", "cmath", "statistics", "decimal", "fractions", "random", "numbers",
                "heapq", "bisect", "itertools", "functools", "operator", "array", "collections",
                "datetime", "calendar", "colorsys", "struct", "zlib", "hashlib"],
    "system": ["os", "os.path", "pathlib", "shutil", "subprocess", "io", "tempfile", "glob",
               "socket", "threading", "logging", "argparse", "signal", "sys", "time",
               "multiprocessing", "selectors", "sched", "queue", "zipfile"],
}


def ascii_fold(text: str) -> str:
    text = unicodedata.normalize("NFKD", text)
    text = "".join(c for c in text if c == "\n" or 32 <= ord(c) < 127)
    return re.sub(r"\n{3,}", "\n\n", text)


def docstrings(module_name: str):
    module = importlib.import_module(module_name)
    yield inspect.getdoc(module) or ""
    for name, obj in sorted(vars(module).items()):
        if name.startswith("_") or getattr(obj, "__module__", module_name) != module.__name__:
            continue
        if inspect.isfunction(obj) or inspect.isclass(obj) or inspect.isbuiltin(obj):
            yield inspect.getdoc(obj) or ""
            if inspect.isclass(obj):
                for mname, meth in sorted(vars(obj).items()):
                    if not mname.startswith("_") and callable(meth):
                        yield inspect.getdoc(meth) or ""


def domain_text(modules) -> str:
    seen, parts = set(), []
    for name in modules:
        for doc in docstrings(name):
            doc = ascii_fold(doc).strip()
            if len(doc) >= 80 and doc not in seen:
                seen.add(doc)
                parts.append(doc)
    # The modules are listed most characteristic first, so the cap drops the least typical text;
    # it cuts at a paragraph boundary.
    text = "\n\n".join(parts)
    return text if len(text) <= LIMIT else text[:text.rfind("\n\n", 0, LIMIT)]


def abstracts(cards: pathlib.Path) -> str:
    parts = []
    for card in sorted(cards.glob("[0-3][0-9]-*.md")):
        match = re.search(r"## Abstract[^\n]*\n+(.*?)\n## ", card.read_text(), re.S)
        if match:
            parts.append(ascii_fold(match.group(1)).strip())
    return "\n\n".join(parts)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cards", type=pathlib.Path, required=True)
    args = parser.parse_args()
    OUT.mkdir(parents=True, exist_ok=True)
    texts = {"abstracts": abstracts(args.cards)}
    texts.update({domain: domain_text(mods) for domain, mods in MODULES.items()})
    for domain, text in texts.items():
        (OUT / f"{domain}.txt").write_text(text.rstrip() + "\n", encoding="ascii")
        print(f"{domain:10s} {len(text):7d} characters")


if __name__ == "__main__":
    main()
