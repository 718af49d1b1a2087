"""The .ipynb twins (what Colab and Binder open) must match their .md sources; the Colab install
cell must pin the package version this repository builds."""
import ast
import json
import re
from pathlib import Path

import jupytext
import pytest

import optbook

ROOT = Path(__file__).resolve().parents[1]
CHAPTERS = sorted((ROOT / "book").glob("part*/[0-9][0-9]-*.md"))


def test_chapters_exist():
    assert CHAPTERS


@pytest.mark.parametrize("md", CHAPTERS, ids=lambda p: p.name)
def test_ipynb_twin_in_sync(md):
    twin = md.with_suffix(".ipynb")
    assert twin.exists(), f"missing {twin.name}: run `make notebooks`"
    expected = json.loads(jupytext.writes(jupytext.read(md), fmt="ipynb"))
    actual = json.loads(twin.read_text())
    for nb in (expected, actual):  # cell ids are random per conversion; content is what counts
        for cell in nb["cells"]:
            cell.pop("id", None)
    assert actual == expected, f"{twin.name} is out of date: run `make notebooks`"


@pytest.mark.parametrize("md", CHAPTERS, ids=lambda p: p.name)
def test_colab_cell_pins_this_version(md):
    nb = jupytext.read(md)
    first = next(c for c in nb.cells if c.cell_type == "code")
    assert "remove-cell" in first.metadata.get("tags", []), "first code cell must be the hidden install cell"
    pins = re.findall(r"@v(\d+\.\d+\.\d+)", first.source)
    assert pins == [optbook.__version__], f"install cell pins {pins}, package is {optbook.__version__}"


@pytest.mark.parametrize("md", CHAPTERS, ids=lambda p: p.name)
def test_chapter_is_in_the_toc(md):
    toc = (ROOT / "_toc.yml").read_text()
    assert str(md.relative_to(ROOT).with_suffix("")) in toc


@pytest.mark.parametrize("md", CHAPTERS, ids=lambda p: p.name)
def test_literalincludes_point_at_existing_code(md):
    """Every ```{literalinclude}``` names an existing file and, with :pyobject:, a function or
    class defined in it (a moved function would otherwise only fail the book build)."""
    text = md.read_text()
    for m in re.finditer(r"```\{literalinclude\} ([^\n]+)\n((?::[^\n]+\n)*)", text):
        path = (md.parent / m.group(1).strip()).resolve()
        assert path.exists(), f"{md.name}: literalinclude of missing {m.group(1)}"
        obj = re.search(r":pyobject: (\S+)", m.group(2))
        if obj:
            defined = {n.name for n in ast.walk(ast.parse(path.read_text()))
                       if isinstance(n, (ast.FunctionDef, ast.ClassDef))}
            assert obj.group(1).split(".")[0] in defined, f"{md.name}: {obj.group(1)} not in {path.name}"
