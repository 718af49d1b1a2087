"""Versioned verdicts: recording the full-size results by date and the claim-by-claim diff the
scoreboard shows (changed verdict, changed figure, new claim, dropped claim), with a small fixture
instead of the full claims."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from optbook import verdicts
from optbook.__main__ import main
from optbook.claims import ClaimResult
from optbook.viz.verdicts import HistoryTable, changes_table

ROOT = Path(__file__).resolve().parents[1]


def _result(chapter="01", name="rate", *, holds=True, reproduces=True, control_holds=False, summary="slope 1.02",
            measured=None, fast=False, kind="reproduction") -> ClaimResult:
    return ClaimResult(chapter, name, "t", "e", dict(measured or {"slope": 1.02}), holds, reproduces, 1.0, fast,
                       summary=summary, kind=kind, control_holds=control_holds, seeds=[0, 1, 2])


BASE = [_result("01", "rate"), _result("02", "ratio", summary="2.1x fewer", measured={"ratio": 2.1}),
        _result("03", "gone")]


def _changes(current, previous=BASE, **kw):
    return {c.key: c for c in verdicts.diff(previous, current, **kw)}


def test_diff_names_every_kind_of_change():
    now = [_result("01", "rate", holds=False, reproduces=True),                       # FAILS now
           _result("02", "ratio", summary="1.4x fewer", measured={"ratio": 1.4}),     # figure moved
           _result("04", "fresh")]                                                    # new; 03 dropped
    c = _changes(now)
    assert c["01.rate"].change == "verdict changed"
    assert (c["01.rate"].verdict_before, c["01.rate"].verdict_after) == ("reproduces", "FAILS")
    assert c["02.ratio"].change == "figure changed"
    assert (c["02.ratio"].figure_before, c["02.ratio"].figure_after) == ("2.1x fewer", "1.4x fewer")
    assert c["04.fresh"].change == "new claim" and c["04.fresh"].verdict_before is None
    assert c["03.gone"].change == "dropped claim" and c["03.gone"].verdict_after is None
    order = [x.change for x in verdicts.diff(BASE, now)]
    assert order == ["verdict changed", "figure changed", "new claim", "dropped claim"]


def test_a_measured_value_that_moves_is_a_change_even_when_the_summary_rounds_it_away():
    moved = [_result("01", "rate", measured={"slope": 1.05}), *BASE[1:]]
    assert _changes(moved)["01.rate"].change == "figure changed"
    tiny = [_result("01", "rate", measured={"slope": 1.02 * (1 + 1e-6)}), *BASE[1:]]
    assert _changes(tiny)["01.rate"].change == "unchanged"
    assert _changes(tiny, rtol=0.0)["01.rate"].change == "figure changed"
    renamed = [_result("01", "rate", measured={"slope_fit": 1.02}), *BASE[1:]]
    assert _changes(renamed)["01.rate"].change == "figure changed"


def test_nothing_moved():
    assert {c.change for c in verdicts.diff(BASE, BASE)} == {"unchanged"}


def test_record_load_latest_and_diff_round_trip(tmp_path):
    p1 = verdicts.record(BASE, tmp_path, date="2026-01-05", versions={"numpy": "2.0"})
    p2 = verdicts.record(BASE[:2], tmp_path, date="2026-02-01", versions={"numpy": "2.1"})
    (tmp_path / "notes.json").write_text("{}")                       # not a dated record: ignored
    assert verdicts.history(tmp_path) == [p1, p2] and verdicts.latest(tmp_path) == p2
    rec = verdicts.load(p2)
    assert rec.date == "2026-02-01" and set(rec.results) == {"01.rate", "02.ratio"}
    assert {c.change for c in verdicts.diff(rec, BASE)} == {"unchanged", "new claim"}
    assert verdicts.version_changes(rec, {"numpy": "2.2", "scipy": "1.14"}) == {
        "numpy": ("2.1", "2.2"), "scipy": (None, "1.14")}
    again = verdicts.record(BASE, tmp_path, date="2026-02-01", versions={})   # same day: replaced
    assert again == p2 and len(verdicts.load(p2).results) == 3
    assert verdicts.latest(tmp_path / "none") is None


def test_environment_lists_the_declared_dependencies():
    env = verdicts.environment()
    assert {"python", "optbook", "numpy", "scipy", "torch", "jupyter-book"} <= set(env)
    assert all(isinstance(v, str) and v for v in env.values())


def test_tables_show_what_moved(tmp_path):
    now = [_result("01", "rate", holds=False), *BASE[1:]]
    table = changes_table(verdicts.diff(BASE, now), "2026-01-05", {"numpy": ("2.0", "2.1")})
    assert table.summary() == "Against the verdicts recorded on 2026-01-05: 1 verdict changed; 2 of 3 claims unchanged."
    html = table._repr_html_()
    assert "01.rate" in html and "reproduces → FAILS" in html and "numpy 2.0 → 2.1" in html and "02.ratio" not in html
    verdicts.record(BASE, tmp_path, date="2026-01-05", versions={})
    (row,) = HistoryTable(tmp_path).rows()
    assert row == {"recorded": "2026-01-05", "claims": 3, "reproduces": 3, "does not reproduce": 0, "inconclusive": 0}
    assert "make record-verdicts" in HistoryTable(tmp_path / "none")._repr_html_()


def test_cli_records_from_a_build_folder_and_diffs(tmp_path, capsys):
    build = tmp_path / "claims"
    build.mkdir()
    for r in BASE:
        (build / f"{r.key}.json").write_text(json.dumps(r.to_dict()))
    out = tmp_path / "verdicts"
    assert main(["verdicts", "record", "--from", str(build), "--out", str(out), "--date", "2026-03-01"]) == 0
    assert verdicts.latest(out).name == "2026-03-01.json"
    (build / "01.rate.json").write_text(json.dumps(_result("01", "rate", holds=False).to_dict()))
    assert main(["verdicts", "diff", "--from", str(build), "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert re.search(r"01\.rate\s+verdict changed\s+reproduces -> FAILS", text) and "2 of 3 claims unchanged" in text
    assert main(["verdicts", "record", "--from", str(tmp_path / "empty"), "--out", str(out)]) == 2


@pytest.mark.parametrize("call,match", [
    (lambda t: verdicts.record([], t), "results"),
    (lambda t: verdicts.record([_result(fast=True)], t), "results must be full-size"),
    (lambda t: verdicts.record([_result(), _result()], t), "twice"),
    (lambda t: verdicts.record(BASE, t, date="03/01/2026"), "date"),
    (lambda t: verdicts.record(["01.rate"], t), "results"),
    (lambda t: verdicts.load(t / "missing.json"), "path"),
    (lambda t: (t / "bad.json").write_text("{") and verdicts.load(t / "bad.json"), "path"),
    (lambda t: (t / "odd.json").write_text("[]") and verdicts.load(t / "odd.json"), "path"),
    (lambda t: verdicts.diff("2026-01-05.json", BASE), "previous"),
    (lambda t: verdicts.diff(BASE, None), "current"),
    (lambda t: verdicts.diff(BASE, BASE, rtol=-1.0), "rtol"),
    (lambda t: verdicts.environment("no-such-distribution-xyz"), "distribution"),
    (lambda t: verdicts.history(Path(__file__)), "folder"),
    (lambda t: verdicts.version_changes({}, {}), "previous"),
    (lambda t: changes_table(["x"], "2026-01-05"), "changes"),
    (lambda t: changes_table([], ""), "date"),
])
def test_bad_input_is_a_value_error_naming_the_argument(tmp_path, call, match):
    with pytest.raises(ValueError, match=match):
        call(tmp_path)


def test_the_book_cache_is_keyed_on_the_installed_versions():
    """`make book` drops the execution cache when src/ or any installed version changed: the hash
    it compares covers `pip freeze` as well as src/."""
    recipe = (ROOT / "Makefile").read_text().split("\nbook:", 1)[1].split("\n\n", 1)[0]
    hash_cmd = recipe.split("sha256sum", 1)[0]
    assert "find src pyproject.toml" in hash_cmd and "pip freeze" in hash_cmd
    assert "record-verdicts:" in (ROOT / "Makefile").read_text()


def test_recorded_files_in_the_book_load():
    for path in verdicts.history(ROOT / "book" / "verdicts"):
        rec = verdicts.load(path)
        assert rec.date == path.stem and rec.results and rec.versions
        assert not any(d.get("fast") for d in rec.results.values())
