"""The bibliography parses and holds every key the chapters cite (the book build would stop on
either, but only after executing every chapter)."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
database = pytest.importorskip("pybtex.database", reason="pybtex comes with the book's extras")


def test_references_parse_with_unique_keys_and_cover_every_citation():
    text = (ROOT / "book" / "references.bib").read_text()
    keys = re.findall(r"^@\w+\{([^,\s]+),", text, flags=re.M)
    assert len(keys) == len(set(keys)), sorted(k for k in set(keys) if keys.count(k) > 1)
    entries = database.parse_string(text, "bibtex").entries  # pybtex is strict by default: a syntax error raises
    assert sorted(entries) == sorted(keys)
    # bibtex skips text between entries, so a stray brace left by a merge would pass silently
    between = re.sub(r"^@\w+\{.*?^\}[ \t]*$", "", text, flags=re.M | re.S)
    assert not between.strip(), between.strip()[:200]
    cited = set()
    for page in (ROOT / "book").rglob("*.md"):
        for group in re.findall(r"\{cite(?::\w+)?\}`([\w.:-]+(?:\s*,\s*[\w.:-]+)*)`", page.read_text()):
            cited.update(k.strip() for k in group.split(","))
    assert not cited - set(entries), sorted(cited - set(entries))
