"""Student copies of the chapters: the twins' plain Markdown with the solutions removed.

Each exercise keeps its text; where its solution has code, one empty code cell (tagged
``exercise-stub``) takes the solution's place. ``make student-notebooks`` writes them to
``_build/student/NN-slug.ipynb``; a teacher hands those out.
"""
from __future__ import annotations

from pathlib import Path
from typing import Iterable

from . import twins


def _refuse_overwrite(out_dir: Path, sources: list[Path]) -> None:
    out = out_dir.resolve()
    protected = {p.resolve() for md in sources for p in (md, twins.twin_path(md))}
    for md in sources:
        folder = md.parent.resolve()
        if out == folder or folder in out.parents:
            raise ValueError(f"out_dir={str(out_dir)!r} is inside the chapter folder {folder}: "
                             "student copies there would be taken for (or overwrite) the twins")
        target = (out / twins.twin_path(md).name).resolve()
        if target in protected:
            raise ValueError(f"out_dir={str(out_dir)!r} would overwrite the source {target}")


def write_student_notebooks(out_dir: Path | str, sources: Iterable[Path] | None = None,
                            cache_dir: Path = twins.DEFAULT_CACHE) -> list[Path]:
    """Write a student copy of each chapter in ``sources`` (default: every chapter on disk) to
    ``out_dir``; glued numbers are filled as in the twins. Returns the written paths.

    Raises ValueError (naming ``out_dir``) when a copy would overwrite a chapter's ``.md`` or
    ``.ipynb`` twin, or land in a chapter folder."""
    out_dir = Path(out_dir)
    sources = [Path(s) for s in (twins.chapters() if sources is None else sources)]
    if not sources:
        raise ValueError("sources must name at least one chapter")
    _refuse_overwrite(out_dir, sources)
    out_dir.mkdir(parents=True, exist_ok=True)
    refs = twins.load_references(twins.bibliography(sources[0]))
    written = []
    for md in sources:
        glue, _ = twins.glue_for(md, cache_dir)
        target = out_dir / twins.twin_path(md).name
        target.write_text(twins.dumps(twins.convert(md, glue, student=True, refs=refs)))
        written.append(target)
    return written
