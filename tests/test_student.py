"""Student copies (optbook.student, `make student-notebooks`): solutions removed, a code stub where an
exercise's solution has code, never written over a source, and they run up to every exercise."""
import json
import re
import textwrap
from pathlib import Path

import nbformat
import pytest

from optbook import student, twins
from optbook.__main__ import main

ROOT = Path(__file__).resolve().parents[1]
# The three chapters whose student copies ran fastest (28: 38 s, 26: 34 s, 02: 53 s, 08: 59 s, on 2
# cores under a load of 8, OPTBOOK_BUILD=1).
EXECUTED = ("28", "26", "02")


@pytest.fixture
def chapter(tmp_path):
    part = tmp_path / "book" / "part1-x"
    part.mkdir(parents=True)
    (tmp_path / "book" / "references.bib").write_text("@book{a2020, author = {A, B}, title = {T}, year = {2020}}\n")
    md = part / "01-demo.md"
    md.write_text(textwrap.dedent("""\
        ---
        kernelspec:
          display_name: Python 3
          language: python
          name: python3
        ---

        # 01 · Demo {cite:p}`a2020`

        ```{code-cell} ipython3
        x = 1
        ```

        ## Exercises

        ```{exercise-start}
        :label: ex-a
        ```
        Explain.
        ```{exercise-end}
        ```

        ```{solution-start} ex-a
        ```
        Because SECRET-A.
        ```{solution-end}
        ```

        ```{exercise-start}
        :label: ex-b
        ```
        Compute.
        ```{exercise-end}
        ```

        ```{solution-start} ex-b
        ```
        First SECRET-B1.
        ```{code-cell} ipython3
        y = x + 1
        ```
        ```{code-cell} ipython3
        print("SECRET-B2", y)
        ```
        Then SECRET-B3.
        ```{solution-end}
        ```

        After the exercises.
        """))
    return md


def test_student_copy_drops_solutions_and_leaves_stubs(chapter, tmp_path):
    [path] = student.write_student_notebooks(tmp_path / "out", [chapter], cache_dir=tmp_path / "none")
    assert path == tmp_path / "out" / "01-demo.ipynb"
    nb = nbformat.read(path, as_version=4)
    text = json.dumps(nb)
    assert "SECRET" not in text and "Solution" not in text
    md = "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")
    assert "### Exercise 1" in md and "Explain." in md and "### Exercise 2" in md and "Compute." in md
    assert "After the exercises." in md and "Student copy" in md and twins.raw_myst(md) == []
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert [c.source for c in code] == ["x = 1", "# Exercise 2: your code here.\n"]  # none for the text-only one
    assert code[1].metadata["tags"] == ["exercise-stub"]
    # the stub sits right after its exercise's text
    i = next(k for k, c in enumerate(nb.cells) if "Compute." in c.source)
    assert nb.cells[i + 1] is code[1] or nb.cells[i + 1].source == code[1].source


def test_student_copy_refuses_to_overwrite_a_source(chapter, tmp_path):
    with pytest.raises(ValueError, match="out_dir="):
        student.write_student_notebooks(chapter.parent, [chapter])
    with pytest.raises(ValueError, match="out_dir="):
        student.write_student_notebooks(chapter.parent / "sub", [chapter])
    other = tmp_path / "elsewhere"
    other.mkdir()
    twin = other / "01-demo.md"
    twin.write_text(chapter.read_text())
    with pytest.raises(ValueError, match="would overwrite the source"):
        student.write_student_notebooks(tmp_path / "book" / "part1-x", [twin, chapter])
    assert not (chapter.parent / "01-demo.ipynb").exists()


def test_command_line_refuses_a_source_folder():
    target = str(twins.chapters(ROOT)[0].parent)
    with pytest.raises(SystemExit) as err:
        main(["student", "01", "--out", target])
    assert "out_dir=" in str(err.value) and "chapter folder" in str(err.value)


@pytest.mark.parametrize("number", EXECUTED)
def test_student_copy_runs_up_to_every_exercise(number, tmp_path, monkeypatch):
    """The copy executes top to bottom: no cell before an exercise needs a removed solution, and
    every stub is reached."""
    from nbclient import NotebookClient

    [md] = [p for p in twins.chapters(ROOT) if p.name.startswith(number + "-")]
    monkeypatch.setenv("OPTBOOK_BUILD", "1")  # figures as the build renders them (cheap outputs)
    [path] = student.write_student_notebooks(tmp_path, [md], cache_dir=ROOT / "_build" / ".jupyter_cache")
    nb = nbformat.read(path, as_version=4)
    NotebookClient(nb, timeout=300, kernel_name="python3",
                   resources={"metadata": {"path": str(tmp_path)}}).execute()
    headings = [h for c in nb.cells if c.cell_type == "markdown"
                for h in re.findall(r"^#+ Exercise \d+", c.source, re.MULTILINE)]
    assert len(headings) == len(re.findall(r"^```\{exercise(?:-start)?\}", md.read_text(), re.MULTILINE)) >= 3
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert all(c.execution_count for c in code), "a cell was not reached"
    assert any("exercise-stub" in c.metadata.get("tags", []) for c in code)
    assert not [o for c in code for o in c.outputs if o.output_type == "error"]
