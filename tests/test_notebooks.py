"""Every chapter is in the table of contents and its literalincludes point at existing code.
The .ipynb twins are checked in test_twins.py, the Colab install cell in test_launch.py."""
import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CHAPTERS = sorted((ROOT / "book").glob("part*/[0-9][0-9]-*.md"))


def test_chapters_exist():
    assert CHAPTERS


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
