"""The book's catalog, read from its data files (no Sphinx here, so the tests can import it).

- :func:`load_plan`: ``book/plan.yml``, every part and chapter with its title, one-sentence
  summary and the ideas it builds on (the home page's map);
- :func:`published`: which chapters ``_toc.yml`` lists;
- :func:`load_paths`: ``book/paths.yml``, the reading paths for courses, validated;
- :func:`exercises`: every chapter's exercises, parsed from its ``exercise-start`` directives
  (label, kind, first sentence), for the teachers' page.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

import yaml


@dataclass(frozen=True)
class Chapter:
    """One planned chapter: number, working title, one-sentence summary, ideas, part index."""

    number: str
    title: str
    summary: str
    ideas: tuple[str, ...]
    part: int


@dataclass(frozen=True)
class Plan:
    """The parts (titles) and chapters of book/plan.yml, and the ideas (key -> label) in map order."""

    parts: tuple[str, ...]
    chapters: tuple[Chapter, ...]
    ideas: dict[str, str] = field(default_factory=dict)

    def chapter(self, number: str) -> Chapter:
        """The chapter numbered ``number`` (``ValueError`` when the plan has none)."""
        for c in self.chapters:
            if c.number == number:
                return c
        raise ValueError(f"chapter {number!r} is not in book/plan.yml")

    def in_part(self, k: int) -> list[Chapter]:
        """The chapters of part ``k`` (0-based), in order."""
        return [c for c in self.chapters if c.part == k]


def load_plan(root: Path) -> Plan:
    """Read and check ``book/plan.yml`` (an entry may still be a bare working title)."""
    raw = yaml.safe_load((Path(root) / "book" / "plan.yml").read_text())
    ideas = {str(k): str(v) for k, v in (raw.get("ideas") or {}).items()}
    chapters = []
    for k, part in enumerate(raw["parts"]):
        for num, entry in part["chapters"].items():
            entry = entry if isinstance(entry, dict) else {"title": entry}
            unknown = [i for i in entry.get("ideas", ()) if i not in ideas]
            if unknown:
                raise ValueError(f"book/plan.yml: chapter {num} names ideas {unknown} missing from `ideas`")
            chapters.append(Chapter(str(num), str(entry["title"]), str(entry.get("summary", "")),
                                    tuple(entry.get("ideas", ())), k))
    return Plan(tuple(p["title"] for p in raw["parts"]), tuple(chapters), ideas)


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


def load_published(root: Path) -> dict[str, str]:
    """:func:`published` of the book's ``_toc.yml`` ({} when there is none)."""
    toc = Path(root) / "_toc.yml"
    return published(yaml.safe_load(toc.read_text())) if toc.exists() else {}


# ---------- exercises ----------

EXERCISE = re.compile(r"^```\{exercise-start\}[^\n]*\n(?P<opts>(?::[^\n]*\n)*)(?P<body>.*?)^```\{exercise-end\}",
                      re.MULTILINE | re.DOTALL)
KIND = re.compile(r"^\*\*\((?P<kind>[^)]*?)\.?\)\*\*\s*")


@dataclass(frozen=True)
class Exercise:
    """One exercise of a chapter: its label, its kind ("Concept", "Predict, then run", ...) and
    the sentence that says what it asks."""

    chapter: str
    label: str
    kind: str
    ask: str


GLUE = re.compile(r"\{glue(?::\w+)?\}`[^`]*`")


def first_sentence(text: str, at_least: int = 80) -> str:
    """The first sentence of ``text`` (Markdown with ``$...$`` math, which is never split), or
    the first few while they are shorter than ``at_least`` characters. Glued numbers belong to
    their chapter's page, so they become an ellipsis."""
    text = GLUE.sub("…", " ".join(text.split()))
    in_math = False
    for i, ch in enumerate(text):
        if ch == "$":
            in_math = not in_math
        elif ch in ".?!" and not in_math and (i + 1 == len(text) or text[i + 1] == " ") \
                and not re.search(r"(e\.g|i\.e|cf|vs|Fig|Eq|et al)$", text[max(0, i - 6):i]) and i + 1 >= at_least:
            return text[: i + 1]
    return text


def chapter_exercises(number: str, source: str) -> list[Exercise]:
    """The exercises of one chapter's MyST source, in order."""
    out = []
    for m in EXERCISE.finditer(source):
        label = re.search(r"^:label:\s*(\S+)", m.group("opts"), re.MULTILINE)
        if label is None:
            raise ValueError(f"chapter {number}: an exercise without a :label:")
        body = re.sub(r"^```[^\n]*\n", "", m.group("body").strip() + "\n").strip()  # the directive's closing fence
        kind = KIND.match(body)
        if kind:
            body = body[kind.end():]
        out.append(Exercise(number, label.group(1), kind.group("kind").strip() if kind else "Exercise",
                            first_sentence(body)))
    return out


def chapter_files(root: Path) -> dict[str, Path]:
    """Chapter number -> its MyST source under book/part*/."""
    return {p.name[:2]: p for p in sorted((Path(root) / "book").glob("part*/[0-9][0-9]-*.md"))}


def exercises(root: Path) -> dict[str, list[Exercise]]:
    """Chapter number -> its exercises, for every chapter source present."""
    return {num: chapter_exercises(num, path.read_text()) for num, path in chapter_files(root).items()}


# ---------- reading paths ----------

@dataclass(frozen=True)
class Step:
    """One chapter of a reading path: when (week), what it needs, the exercises to set, and why."""

    chapter: str
    week: int | None
    requires: tuple[str, ...]
    exercises: tuple[str, ...]
    why: str


@dataclass(frozen=True)
class ReadingPath:
    """A syllabus: a title, who it is for, and its steps in order."""

    key: str
    title: str
    audience: str
    steps: tuple[Step, ...]


def load_paths(root: Path, plan: Plan | None = None,
               known_exercises: dict[str, list[Exercise]] | None = None) -> list[ReadingPath]:
    """Read ``book/paths.yml`` and check it: every chapter is in the plan and appears once per
    path, prerequisites come earlier in the same path, weeks never go back, and every suggested
    exercise exists in its chapter (checked for the chapters whose source is present)."""
    root = Path(root)
    plan = plan or load_plan(root)
    known_exercises = exercises(root) if known_exercises is None else known_exercises
    numbers = {c.number for c in plan.chapters}
    raw = yaml.safe_load((root / "book" / "paths.yml").read_text())
    out = []
    for p in raw["paths"]:
        key, seen, steps, last_week = p["key"], [], [], 0
        for s in p["steps"]:
            num = str(s["chapter"])
            if num not in numbers:
                raise ValueError(f"paths.yml, path {key!r}: chapter {num} is not in book/plan.yml")
            if num in seen:
                raise ValueError(f"paths.yml, path {key!r}: chapter {num} appears twice")
            requires = tuple(str(r) for r in s.get("requires", ()))
            late = [r for r in requires if r not in seen]
            if late:
                raise ValueError(f"paths.yml, path {key!r}: chapter {num} requires {late}, which do not "
                                 "come earlier in the path")
            week = s.get("week")
            if week is not None:
                if week < last_week:
                    raise ValueError(f"paths.yml, path {key!r}: chapter {num} is in week {week}, after week {last_week}")
                last_week = week
            labels = tuple(s.get("exercises", ()))
            if num in known_exercises:
                have = {e.label for e in known_exercises[num]}
                missing = [x for x in labels if x not in have]
                if missing:
                    raise ValueError(f"paths.yml, path {key!r}: chapter {num} has no exercise {missing}")
            seen.append(num)
            steps.append(Step(num, week, requires, labels, str(s.get("why", ""))))
        out.append(ReadingPath(key, p["title"], p.get("audience", ""), tuple(steps)))
    return out
