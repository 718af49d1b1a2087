"""Every registered claim in fast mode, with its negative control: the claims protocol
(DESIGN.md, section 3) checked on every run."""
import json

import pytest

from optbook import claims
from optbook.__main__ import main
from optbook.claims import Criterion, Measured, claim

ALL = claims.registered()
REPRODUCTIONS = [c for c in ALL if c.kind == "reproduction"]


@pytest.fixture
def scratch_registry():
    """Register throw-away claims under chapter 99 and remove them afterwards."""
    before = set(claims._REGISTRY)
    yield
    for key in set(claims._REGISTRY) - before:
        claims._REGISTRY.pop(key)


def test_some_claims_are_registered():
    assert ALL, "no claims registered"


@pytest.mark.parametrize("c", ALL, ids=lambda c: c.key)
def test_claim_fast(c):
    """The measurement matches the chapter's declaration; for a reproduction declared to hold,
    its control (run inside run_claim) must fail the criterion: the claim can fail."""
    res = claims.run_claim(c, fast=True)
    assert res.measured, "a claim must report what it measured"
    assert res.ok, f"{c.key}: {res.verdict}; measured {res.measured}; control holds: {res.control_holds}"
    if c.kind == "reproduction":
        assert res.control_holds is not None, f"{c.key}: the control did not run"
        if c.reproduces:
            assert res.control_holds is False, f"{c.key}: the control meets the criterion too"
        assert res.seeds, f"{c.key}: a reproduction must report the seeds it rests on"


# --------------------------------------------------------------------------- the registry


def test_registration_names_what_is_missing(scratch_registry):
    with pytest.raises(ValueError, match="two-digit"):
        claim("1", "t", expect="e", kind="identity")
    with pytest.raises(ValueError, match="non-empty"):
        claim("99", "", expect="e", kind="identity")
    with pytest.raises(ValueError, match="kind must be one of"):
        claim("99", "t", expect="e", kind="theorem")
    with pytest.raises(TypeError, match="kind"):
        claim("99", "t", expect="e")  # every claim says which kind it is
    with pytest.raises(ValueError, match="paper="):
        claim("99", "t", expect="e", kind="reproduction", control="c")
    with pytest.raises(ValueError, match="control="):
        claim("99", "t", expect="e", kind="reproduction", paper="p")
    with pytest.raises(ValueError, match="diagnosis="):
        claim("99", "t", expect="e", kind="reproduction", paper="p", control="c", reproduces=False)
    with pytest.raises(ValueError, match="diagnosis="):
        claim("99", "t", expect="e", kind="reproduction", paper="p", control="c", reproduces=None)
    with pytest.raises(ValueError, match="identity holds by theorem"):
        claim("99", "t", expect="e", kind="identity", reproduces=False, diagnosis="d")
    register = claim("99", "t", expect="e", kind="reproduction", paper="p", control="c", name="no_control_arg")
    with pytest.raises(ValueError, match="must take control="):
        register(lambda fast=False: Measured({"x": 1.0}, holds=True))


def _reproduction(name, measure, **kw):
    opts = dict(expect="x >= 1", kind="reproduction", paper="the paper says x >= 1",
                control="x without the key ingredient", name=name)
    opts.update(kw)
    claim("99", name, **opts)(measure)
    return claims.get(f"99.{name}")


def test_verdicts(scratch_registry):
    def good(fast=False, control=False):
        return Measured({"x": 0.5 if control else 2.0}, criteria=[Criterion("x", ">=", 1.0)], seeds=[0, 1, 2])

    def unfalsifiable(fast=False, control=False):
        return Measured({"x": 2.0}, criteria=[Criterion("x", ">=", 1.0)], seeds=[0, 1, 2])

    def never(fast=False, control=False):
        return Measured({"x": 0.5}, criteria=[Criterion("x", ">=", 1.0)], seeds=[0, 1, 2])

    def no_phenomenon(fast=False, control=False):
        return Measured({"x": 0.5}, criteria=[Criterion("x", ">=", 1.0)], seeds=[0, 1, 2], precondition=False)

    r = claims.run_claim(_reproduction("good", good))
    assert (r.verdict, r.ok, r.control_holds, r.seeds) == ("reproduces", True, False, [0, 1, 2])
    assert r.margin == pytest.approx(0.30103, abs=1e-4) and r.control_margin < 0
    r = claims.run_claim(_reproduction("unfalsifiable", unfalsifiable))
    assert not r.ok and "CONTROL HOLDS" in r.verdict
    r = claims.run_claim(_reproduction("declared_no", never, reproduces=False, diagnosis="four checks"))
    assert (r.verdict, r.ok) == ("does not reproduce", True)
    r = claims.run_claim(_reproduction("undeclared_no", never))
    assert (r.verdict, r.ok) == ("FAILS", False)
    r = claims.run_claim(_reproduction("inconclusive", no_phenomenon, reproduces=None, diagnosis="no gap"))
    assert (r.verdict, r.ok) == ("inconclusive", True)
    r = claims.run_claim(_reproduction("undeclared_inconclusive", no_phenomenon))
    assert not r.ok


def test_full_size_reproduction_needs_seeds(scratch_registry):
    def one_seed(fast=False, control=False):
        return Measured({"x": 0.0 if control else 2.0}, criteria=[Criterion("x", ">=", 1.0)], seeds=[0])

    c = _reproduction("one_seed", one_seed)
    assert claims.run_claim(c, fast=True).ok
    with pytest.raises(ValueError, match="at least 3 seeds"):
        claims.run_claim(c)


def test_bad_returns_and_raising_controls_name_the_claim(scratch_registry):
    def not_measured(fast=False, control=False):
        return {"x": 1.0}

    def raising_control(fast=False, control=False):
        if control:
            raise ZeroDivisionError("boom")
        return Measured({"x": 2.0}, criteria=[Criterion("x", ">=", 1.0)], seeds=[0, 1, 2])

    with pytest.raises(TypeError, match="claim 99.bad_return must return Measured"):
        claims.run_claim(_reproduction("bad_return", not_measured))
    with pytest.raises(RuntimeError, match=r"claim 99.raises \(control run\) raised ZeroDivisionError"):
        claims.run_claim(_reproduction("raises", raising_control))


def test_measured_and_criterion_checks():
    with pytest.raises(TypeError):
        Measured({"x": 1.0}, holds="yes")
    with pytest.raises(ValueError, match="holds= or criteria="):
        Measured({"x": 1.0})
    with pytest.raises(ValueError, match="not among the measured values"):
        Measured({"x": 1.0}, criteria=[Criterion("y", "<=", 1.0)])
    with pytest.raises(ValueError, match="op must be"):
        Criterion("x", "==", 1.0)
    m = Measured({"a": 5.0, "b": -1.0}, criteria=[Criterion("a", "<=", 10.0), Criterion("b", ">=", -2.0)])
    assert m.holds and m.margin == pytest.approx(0.30103, abs=1e-4)
    assert not Measured({"a": 5.0}, holds=False, criteria=[Criterion("a", "<=", 10.0)]).holds
    assert Criterion("a", ">=", 1.0).margin({"a": float("inf")}) == float("inf")


# --------------------------------------------------------------------------- CLI and records


def test_cli_exit_status_kind_filter_and_json(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("OPTBOOK_CLAIMS_DIR", raising=False)
    out = tmp_path / "c.json"
    assert main(["claims", "--chapter", "01", "--fast", "--kind", "reproduction", "--json", str(out)]) == 0
    rows = json.loads(out.read_text())
    assert rows and {r["kind"] for r in rows} == {"reproduction"}
    assert {"chapter", "name", "title", "expected", "measured", "holds", "reproduces", "seconds", "kind",
            "paper", "control", "control_holds", "verdict", "seeds"} <= set(rows[0])
    assert all(r["control_holds"] is False and r["verdict"] == "reproduces" for r in rows)
    capsys.readouterr()
    assert main(["list", "--chapter", "01", "--kind", "identity"]) == 0
    listed = capsys.readouterr().out
    assert "affine_invariance" in listed and "reproduction" not in listed


def test_cli_fails_on_mismatch(scratch_registry, capsys):
    @claim("99", "a claim that fails", expect="never", kind="identity", name="always_fails")
    def _fails(fast=False):
        return Measured({"x": 0.0}, holds=False)

    assert main(["claims", "--chapter", "99", "--fast"]) == 1
    assert "MISMATCH" in capsys.readouterr().out


def test_results_are_recorded_for_the_scoreboard(tmp_path, monkeypatch, scratch_registry):
    @claim("99", "a trivial identity", expect="x = 1", kind="identity", name="trivial")
    def _trivial(fast=False):
        return Measured({"x": 1.0 if not fast else 2.0}, holds=True)

    monkeypatch.setenv("OPTBOOK_CLAIMS_DIR", str(tmp_path))
    claims.run_claim("99.trivial", fast=True)
    assert claims.load_results(tmp_path) == []   # a chapter's fast demo never replaces a full-size result
    res = claims.run_claim("99.trivial")
    (loaded,) = claims.load_results(tmp_path)
    assert loaded.measured == res.measured == {"x": 1.0} and loaded.verdict == res.verdict and not loaded.fast
