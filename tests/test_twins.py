"""The .ipynb twins (what Colab, Binder and the download button open) are plain Jupyter Markdown,
generated from their .md sources by optbook.twins: no raw MyST, the source's code cells in order,
nothing drifted since the last `make notebooks`, glued numbers filled in."""
import json
import re
import textwrap
from pathlib import Path

import jupytext
import pytest

from optbook import twins

ROOT = Path(__file__).resolve().parents[1]
CHAPTERS = twins.chapters(ROOT)


def test_every_chapter_on_disk_is_covered():
    assert len(CHAPTERS) >= 30
    assert sorted(p.name for p in CHAPTERS) == sorted(p.name for p in (ROOT / "book").glob("part*/[0-9][0-9]-*.md"))


def _cells(nb):
    return nb["cells"] if isinstance(nb, dict) else nb.cells


@pytest.mark.parametrize("md", CHAPTERS, ids=lambda p: p.name[:2])
def test_twin_is_plain_markdown_and_in_sync(md):
    twin = twins.twin_path(md)
    assert twin.exists(), f"missing {twin.name}: run `make notebooks`"
    actual = json.loads(twin.read_text())
    raw = [r for c in actual["cells"] if c["cell_type"] == "markdown" for r in twins.raw_myst("".join(c["source"]))]
    assert not raw, f"{twin.name} keeps raw MyST {raw[:5]}: run `make notebooks`"

    source_code = [c.source for c in jupytext.read(md).cells if c.cell_type == "code"]
    twin_code = ["".join(c["source"]) for c in actual["cells"] if c["cell_type"] == "code"]
    assert twin_code == source_code, f"{twin.name}: code cells differ from {md.name}: run `make notebooks`"

    meta = actual["metadata"][twins.META_KEY]
    assert not meta["glue_missing"], (f"{twin.name} has placeholders for {meta['glue_missing'][:5]}: "
                                      "run `make book`, then `make notebooks`")
    # a collapsed solution heading folds its solution's cells and nothing else
    cells = actual["cells"]
    for i, head in enumerate(cells):
        if head["metadata"].get(twins.FOLDED):
            level = len("".join(head["source"])) - len("".join(head["source"]).lstrip("#"))
            for c in cells[i + 1:]:
                m = re.search(r"^(#+) ", "".join(c["source"]), re.MULTILINE) if c["cell_type"] == "markdown" else None
                if m and len(m.group(1)) <= level:
                    break
                assert "solution" in c["metadata"].get("tags", []), f"{twin.name}: {c['source'][:1]} folded with a solution"
    expected = json.loads(twins.dumps(twins.convert(md, meta["glue"])))
    assert actual == expected, f"{twin.name} is out of date with {md.name} (or src/, references.bib): run `make notebooks`"


@pytest.fixture
def book(tmp_path):
    """A one-chapter book with every construct the converter handles."""
    part = tmp_path / "book" / "part1-x"
    part.mkdir(parents=True)
    (tmp_path / "book" / "references.bib").write_text(textwrap.dedent("""\
        @article{smith2020, author = {Smith, Ann and Jones, Bob}, title = {On {G\\"o}del and $\\ell_1$},
          journal = {J. Opt.}, year = {2020}}
        @book{lee2019, author = {Lee, C. and Kim, D. and Park, E.}, title = {Three}, publisher = {P}, year = {2019}}
        """))
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "mod.py").write_text("def f(x):\n    return 2 * x\n\n\ndef g():\n    pass\n")
    md = part / "01-demo.md"
    md.write_text(textwrap.dedent("""\
        ---
        jupytext:
          formats: ipynb,md:myst
          text_representation:
            extension: .md
            format_name: myst
        kernelspec:
          display_name: Python 3
          language: python
          name: python3
        ---

        # 01 · Demo

        % a MyST comment
        (sec-idea)=
        ## The idea

        As {cite:t}`smith2020` show, and {cite:p}`smith2020,lee2019` agree, the rate is
        {glue:text}`rate:.2f` and {glue}`name`; {glue:text}`absent` is unknown. See {eq}`eq-main`,
        {ref}`the idea <sec-idea>`, {math}`x^2`, {mod}`optbook.core` and `{cite:p}` in code.
        Compare {numref}`ex-b` and {doc}`the scoreboard <../scoreboard>`.

        $$ f(x) = x^2 $$ (eq-main)

        ```{note}
        Mind the {cite:p}`lee2019` gap.
        ```

        :::{admonition} A title
        Body text.
        :::

        ```{literalinclude} ../../src/mod.py
        :pyobject: f
        ```

        ```python
        {cite:p}`not_a_role_in_code`
        ```

        ```{code-cell} ipython3
        x = 1
        ```

        ## Exercises

        ```{exercise-start}
        :label: ex-a
        ```
        Explain (see {ref}`ex-b`).
        ```{exercise-end}
        ```

        ```{solution-start} ex-a
        :class: dropdown
        ```
        Because SECRET-A.
        ```{solution-end}
        ```

        ```{exercise-start}
        :label: ex-b
        ```
        Compute it.
        ```{exercise-end}
        ```

        ```{solution-start} ex-b
        :class: dropdown
        ```
        ```{code-cell} ipython3
        y = x + 1
        ```
        ```{code-cell} ipython3
        print(y)
        ```
        So SECRET-B.
        ```{solution-end}
        ```
        """))
    return md


GLUE = {"rate": "0.12345", "name": "'the name'"}


def _markdown(nb) -> str:
    return "\n\n".join(c.source for c in nb.cells if c.cell_type == "markdown")


def test_converter_writes_plain_markdown(book):
    nb = twins.convert(book, GLUE)
    text = _markdown(nb)
    assert twins.raw_myst(text) == []
    assert "As [Smith and Jones (2020)](#ref-smith2020) show" in text
    assert "([Smith and Jones, 2020](#ref-smith2020); [Lee et al., 2019](#ref-lee2019)) agree" in text
    assert "the rate is\n0.12 and the name;" in text
    assert "[`absent`: computed when the notebook runs]" in text and nb.metadata["optbook"]["glue_missing"] == ["absent"]
    assert "See (1)," in text and "\\tag{1}$$" in text
    assert "[the idea](#sec-idea)" in text and '<a id="sec-idea"></a>' in text
    assert "$x^2$" in text and "`optbook.core`" in text and "`{cite:p}` in code" in text
    assert "Compare [Exercise 2](#ex-b) and [the scoreboard](../scoreboard.md)." in text
    assert "a MyST comment" not in text
    assert "> **Note.**\n>\n> Mind the ([Lee et al., 2019](#ref-lee2019)) gap." in text
    assert "> **A title.**" in text
    assert "```python\ndef f(x):\n    return 2 * x\n```" in text and "def g" not in text
    assert "```python\n{cite:p}`not_a_role_in_code`\n```" in text  # code blocks stay verbatim
    assert "## Exercises" in text and "### Exercise 1" in text and "### Exercise 2" in text
    assert "(see [Exercise 2](#ex-b))" in text
    # each solution under a heading cell of its own, stored collapsed (JupyterLab and Colab)
    heads = [c for c in nb.cells if c.metadata.get(twins.FOLDED)]
    assert [c.source for c in heads] == ["#### Solution to Exercise 1", "#### Solution to Exercise 2"]
    assert nb.metadata["colab"]["collapsed_sections"] == [c.id for c in heads] == [c.metadata["id"] for c in heads]
    after = [nb.cells[nb.cells.index(h) + 1].source for h in heads]
    assert [c.source for c in nb.cells if "solution" in c.metadata.get("tags", [])] == [
        "Because SECRET-A.", "y = x + 1", "print(y)", "So SECRET-B."]
    assert after[0] == "Because SECRET-A." and after[1] == "y = x + 1"
    assert nb.cells[nb.cells.index(heads[1]) + 3].source == "So SECRET-B."
    # references at the end, LaTeX decoded, math kept, sorted by author
    last = nb.cells[-1].source
    assert last.startswith("## References") or "Works cited" in last
    assert last.index("ref-lee2019") < last.index("ref-smith2020")
    assert "Ann Smith and Bob Jones (2020). On Gödel and $\\ell_1$. *J. Opt.*." in last


def test_converter_keeps_code_cells_and_folds_solution_code(book):
    nb = twins.convert(book, GLUE)
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert [c.source for c in code] == ["x = 1", "y = x + 1", "print(y)"]
    assert ["solution" in c.metadata.get("tags", []) for c in code] == [False, True, True]
    assert all(c.outputs == [] for c in code)
    # deterministic: the same source gives the same file (stable cell ids, no timestamps)
    assert twins.dumps(nb) == twins.dumps(twins.convert(book, GLUE))


def test_raw_myst_finds_what_the_converter_must_remove():
    assert twins.raw_myst("see {cite:p}`a`") == ["{cite:p}`"]
    assert twins.raw_myst("```{note}\nx\n```") == ["```{note}"]
    assert twins.raw_myst(":::{admonition} T\nx\n:::") == [":::{admonition}"]
    assert twins.raw_myst("(label)=\n# H") == ["(label)="]
    assert twins.raw_myst("`{cite:p}` is the role\n```md\n{cite:p}`x`\n```") == []


def test_a_twin_with_raw_myst_or_edited_code_fails_the_sync_check(book, monkeypatch):
    """The check above is able to fail: a plain jupytext twin keeps raw MyST, and a hand-edited
    code cell no longer matches the regeneration."""
    plain = json.loads(jupytext.writes(jupytext.read(book), fmt="ipynb"))
    assert any(twins.raw_myst("".join(c["source"])) for c in plain["cells"] if c["cell_type"] == "markdown")
    nb = json.loads(twins.dumps(twins.convert(book, GLUE)))
    next(c for c in nb["cells"] if c["cell_type"] == "code")["source"] = "x = 2"
    assert nb != json.loads(twins.dumps(twins.convert(book, GLUE)))


def test_glue_values_come_from_the_twin_only_while_its_code_is_unchanged(book, tmp_path):
    twins.write_twins([book], cache_dir=tmp_path / "no-cache")
    values, origin = twins.glue_for(book, tmp_path / "no-cache")
    assert (values, origin) == ({}, "none")
    twin = twins.twin_path(book)
    twin.write_text(twins.dumps(twins.convert(book, GLUE)))
    assert twins.glue_for(book, tmp_path / "no-cache") == ({"rate": "0.12345", "name": "'the name'"}, "twin")
    book.write_text(book.read_text().replace("x = 1", "x = 3"))
    assert twins.glue_for(book, tmp_path / "no-cache") == ({}, "none")


def test_converter_refuses_what_it_cannot_convert(book, tmp_path):
    with pytest.raises(ValueError, match="md must be"):
        twins.convert(tmp_path / "missing.md")
    book.write_text(book.read_text().replace("{cite:t}`smith2020`", "{cite:t}`nobody1999`"))
    with pytest.raises(ValueError, match="nobody1999"):
        twins.convert(book, GLUE)


def test_twin_commands_do_not_pull_plotly():
    """`python -m optbook twins` and `student` run without the figure stack."""
    import subprocess
    import sys

    code = ("import sys, optbook.twins, optbook.student, optbook.launch; "
            "print(sorted(k for k in sys.modules if k.split('.')[0] == 'plotly'))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_binder_installs_jupyterlab_myst():
    """Binder's JupyterLab renders MyST natively (the .md sources, if a reader opens them)."""
    import yaml

    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    pip = next(d["pip"] for d in env["dependencies"] if isinstance(d, dict) and "pip" in d)
    assert any(p.startswith("jupyterlab-myst") for p in pip) and any(p.startswith("jupyterlab>=4") for p in pip)
