"""The book's catalog data (_ext/optbook_catalog.py): the plan with its ideas and summaries, the
reading paths, and the exercises read from the chapters. Each check fails when the data drifts."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def cat():
    sys.path.insert(0, str(ROOT / "_ext"))
    try:
        import optbook_catalog
        yield optbook_catalog
    finally:
        sys.path.remove(str(ROOT / "_ext"))


def test_every_planned_chapter_has_a_summary_and_known_ideas(cat):
    plan = cat.load_plan(ROOT)
    assert [c.number for c in plan.chapters] == [f"{k:02d}" for k in range(1, 38)]
    assert len(plan.parts) == 7
    for c in plan.chapters:
        assert c.summary.endswith(".") and cat.first_sentence(c.summary, 0) == c.summary, c.number
        assert 1 <= len(c.ideas) <= 3 and set(c.ideas) <= set(plan.ideas), c.number
    used = {i for c in plan.chapters for i in c.ideas}
    assert used == set(plan.ideas), f"ideas no chapter builds on: {set(plan.ideas) - used}"


def test_an_unknown_idea_is_refused(cat, tmp_path):
    raw = yaml.safe_load((ROOT / "book" / "plan.yml").read_text())
    raw["parts"][0]["chapters"]["01"]["ideas"] = ["telepathy"]
    (tmp_path / "book").mkdir()
    (tmp_path / "book" / "plan.yml").write_text(yaml.safe_dump(raw))
    with pytest.raises(ValueError, match="telepathy"):
        cat.load_plan(tmp_path)


def test_reading_paths_are_valid(cat):
    paths = cat.load_paths(ROOT)
    assert 3 <= len(paths) <= 4
    for p in paths:
        assert p.title and p.audience and len(p.steps) >= 5
    # every chapter written when the paths were drawn up suggests exercises (a chapter that lands
    # later shows all of its exercises until someone picks some)
    written = {s.chapter for p in paths for s in p.steps if int(s.chapter) <= 30}
    assert all(s.exercises for p in paths for s in p.steps if s.chapter in written)


@pytest.mark.parametrize("change, message", [
    (lambda s: s.update(requires=["37"]), "do not come earlier"),
    (lambda s: s.update(chapter="99"), "not in book/plan.yml"),
    (lambda s: s.update(exercises=["ex01-nonexistent"]), "no exercise"),
    (lambda s: s.update(week=0), "week"),
])
def test_a_broken_reading_path_is_refused(cat, tmp_path, change, message):
    raw = yaml.safe_load((ROOT / "book" / "paths.yml").read_text())
    step = next(s for s in raw["paths"][0]["steps"] if s["chapter"] == "03")  # week 2, after 01
    if message == "no exercise":
        step["chapter"] = "01"
        raw["paths"][0]["steps"] = [step]
        step.pop("requires", None)
    change(step)
    (tmp_path / "book").mkdir()
    (tmp_path / "book" / "paths.yml").write_text(yaml.safe_dump(raw))
    with pytest.raises(ValueError, match=message):
        cat.load_paths(tmp_path, cat.load_plan(ROOT), cat.exercises(ROOT))


def test_exercises_are_read_from_every_published_chapter(cat):
    found = cat.exercises(ROOT)
    for num in cat.load_published(ROOT):
        ex = found[num]
        assert len(ex) >= 3, num
        assert all(e.label.startswith(f"ex{num}") or e.label for e in ex)
        assert all(e.kind != "Exercise" and len(e.ask) > 20 and "```" not in e.ask for e in ex), num


def test_an_exercise_is_read_with_its_kind_and_first_sentence(cat):
    src = ("```{exercise-start}\n:label: ex99-a\n```\n**(Predict, then run.)** Halve $\\eta$. Is the"
           " rate {glue:text}`r` still $1.5$? More text.\n```{exercise-end}\n```\n")
    [e] = cat.chapter_exercises("99", src)
    assert (e.label, e.kind) == ("ex99-a", "Predict, then run")
    assert e.ask == "Halve $\\eta$. Is the rate … still $1.5$? More text."  # short: more sentences kept
    assert cat.first_sentence("Is $x = 1.5$ and $y = 2$? Then. More.", 0) == "Is $x = 1.5$ and $y = 2$?"
    with pytest.raises(ValueError, match="label"):
        cat.chapter_exercises("99", src.replace(":label: ex99-a\n", ""))
