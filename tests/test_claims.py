"""Every registered claim, in fast mode: it must behave as its chapter declares."""
import json

import pytest

from optbook import claims
from optbook.__main__ import main
from optbook.claims import Measured, claim

ALL = claims.registered()


def test_some_claims_are_registered():
    assert ALL, "no claims registered"


@pytest.mark.parametrize("c", ALL, ids=lambda c: c.key)
def test_claim_fast(c):
    res = claims.run_claim(c, fast=True)
    assert res.measured, "a claim must report what it measured"
    if c.reproduces:
        assert res.holds, f"{c.key} does not hold: {res.measured}"
    else:  # declared not to reproduce: revisit the chapter the day it starts to hold
        assert not res.holds, f"{c.key} now holds: update the chapter and drop reproduces=False"


def test_measured_refuses_non_bool_verdict():
    with pytest.raises(TypeError):
        Measured({"x": 1.0}, holds="yes")


def test_registration_checks():
    with pytest.raises(ValueError, match="two-digit"):
        claim("1", "t", expect="e")
    with pytest.raises(ValueError, match="non-empty"):
        claim("01", "", expect="e")


def test_cli_exit_status_and_json(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("OPTBOOK_CLAIMS_DIR", raising=False)
    out = tmp_path / "c.json"
    assert main(["claims", "--chapter", "01", "--fast", "--json", str(out)]) == 0
    rows = json.loads(out.read_text())
    assert {"chapter", "name", "title", "expected", "measured", "holds", "reproduces", "seconds"} <= set(rows[0])
    assert "affine_invariance" in capsys.readouterr().out


def test_cli_fails_on_mismatch(monkeypatch, capsys):
    @claim("99", "a claim that fails", expect="never", name="always_fails")
    def _fails(fast=False):
        return Measured({"x": 0.0}, holds=False)

    try:
        assert main(["claims", "--chapter", "99", "--fast"]) == 1
        assert "MISMATCH" in capsys.readouterr().out
    finally:
        claims._REGISTRY.pop("99.always_fails")


def test_results_are_recorded_for_the_scoreboard(tmp_path, monkeypatch):
    monkeypatch.setenv("OPTBOOK_CLAIMS_DIR", str(tmp_path))
    res = claims.run_claim("01.affine_invariance", fast=True)
    (loaded,) = claims.load_results(tmp_path)
    assert loaded.measured == res.measured and loaded.holds == res.holds
