"""The index of methods (optbook.methods) and the part packages' METHODS tables: complete for every
chapter in the book, every name resolving to a documented object, and no plotting code pulled in."""
from __future__ import annotations

import importlib
import inspect
import pkgutil
import subprocess
import sys
from pathlib import Path

import pytest
import torch
import yaml

from optbook import methods
from optbook.claims import PARTS

ROOT = Path(__file__).resolve().parents[1]


def _toc_chapters() -> set[str]:
    sys.path.insert(0, str(ROOT / "_ext"))
    try:
        from optbook_catalog import published
    finally:
        sys.path.remove(str(ROOT / "_ext"))
    return set(published(yaml.safe_load((ROOT / "_toc.yml").read_text())))


def _method_modules():
    """Every module of a part package that is not a chapter's (figures, claims) module."""
    for part in PARTS:
        pkg = importlib.import_module(f"optbook.{part}")
        for m in pkgutil.iter_modules(pkg.__path__):
            if not m.name.endswith("_chapter"):
                yield importlib.import_module(f"optbook.{part}.{m.name}")


def test_every_chapter_in_the_book_declares_its_methods():
    declared = methods.declared()
    missing = sorted(_toc_chapters() - set(declared))
    assert not missing, f"chapters in _toc.yml without a METHODS entry in their part package: {missing}"
    plan = yaml.safe_load((ROOT / "book" / "plan.yml").read_text())
    planned = {n for part in plan["parts"] for n in part["chapters"]}
    assert set(declared) <= planned
    for chapter, (_, table) in declared.items():
        assert table, f"chapter {chapter} declares no method"


def test_the_index_resolves_every_name_to_a_documented_object():
    rows = methods.index()
    assert {r.chapter for r in rows} == set(methods.declared())
    for r in rows:
        assert r.summary, f"{r.path} has no docstring"
        assert r.call.startswith(r.name + "("), r.call
        assert r.kind and r.role in ("method", "baseline")
    # Each chapter lists its methods before its baselines, and every baseline named is listed.
    for chapter in {r.chapter for r in rows}:
        mine = [r for r in rows if r.chapter == chapter]
        roles = [r.role for r in mine]
        assert roles == sorted(roles, key=lambda x: x != "method")
        listed = {r.path for r in mine}
        assert all(b in listed for r in mine for b in r.baselines)


def test_kinds_are_read_off_the_objects():
    def minimizer(fun, x0, jac=None):
        """A minimizer."""

    class Opt(torch.optim.Optimizer):
        """An optimizer."""

    class Policy:
        """A policy."""

        def select(self):
            """Pick."""

        def update(self, r):
            """Learn."""

    import gymnasium

    class Env(gymnasium.Env):
        """An environment."""

    assert methods.kind_of(minimizer) == "minimizer (scipy.optimize shape)"
    assert methods.kind_of(Opt) == "torch.optim.Optimizer"
    assert methods.kind_of(Policy) == "bandit policy (select / update)"
    assert methods.kind_of(Env) == "gymnasium.Env"
    assert methods.kind_of(len) == "function"
    with pytest.raises(ValueError, match="obj"):
        methods.kind_of(3)
    by_path = {r.path: r for r in methods.index()}
    assert by_path["optbook.classical.bfgs.bfgs"].kind == "minimizer (scipy.optimize shape)"
    assert by_path["optbook.training.momentum_sam.MSAM"].kind == "torch.optim.Optimizer"
    assert by_path["optbook.decisions.maxucb.MaxUCB"].kind == "bandit policy (select / update)"
    assert by_path["optbook.training.momentum_sam.MSAM"].baselines[0] == "optbook.training.momentum_sam.SAM"


def test_calls_leave_out_annotations_and_self():
    def f(fun: int, x0: float = 1.0, *, tol: float = 1e-3) -> int:
        """F."""

    assert methods.call_of(f) == "f(fun, x0=1.0, *, tol=0.001)"


def test_names_resolve_or_fail_with_the_name():
    assert methods.resolve("optbook.classical.bfgs.bfgs").__name__ == "bfgs"
    assert methods.absolute("classical", "bfgs.bfgs") == "optbook.classical.bfgs.bfgs"
    assert methods.absolute("training", "torch.optim.Adam") == "torch.optim.Adam"
    with pytest.raises(ValueError, match="no_such_method"):
        methods.resolve("optbook.classical.bfgs.no_such_method")
    with pytest.raises(ValueError, match="dotted path"):
        methods.resolve("bfgs")


def test_a_wrong_name_in_a_methods_table_fails_the_index(monkeypatch):
    import optbook.classical as part

    monkeypatch.setattr(part, "METHODS", {**part.METHODS, "01": {"bfgs.bfgs_typo": ()}})
    with pytest.raises(ValueError, match="bfgs_typo"):
        methods.index()


def _public_members(cls):
    for name, value in vars(cls).items():
        if name.startswith("_"):
            continue
        if inspect.isfunction(value) or isinstance(value, (property, staticmethod, classmethod)):
            yield name


def test_every_public_function_and_indexed_class_method_has_a_docstring():
    missing = []
    for mod in _method_modules():
        for name, obj in vars(mod).items():
            if name.startswith("_") or getattr(obj, "__module__", None) != mod.__name__:
                continue
            if (inspect.isfunction(obj) or inspect.isclass(obj)) and not inspect.getdoc(obj):
                missing.append(f"{mod.__name__}.{name}")
    for r in methods.index():
        obj = methods.resolve(r.path)
        if inspect.isclass(obj) and r.path.startswith("optbook."):
            # inherited docstrings count: Optimizer.step documents an override of step
            missing += [f"{r.path}.{m}" for m in _public_members(obj) if not inspect.getdoc(getattr(obj, m))]
    assert not missing, f"public objects without a docstring: {missing}"


def test_methods_import_from_their_part_package_without_plotly():
    code = ("import sys, importlib\n"
            "from optbook import methods\n"
            "rows = methods.index()\n"
            "assert rows\n"
            "bad = [m for m in sys.modules if m.split('.')[0] in ('plotly', 'ipywidgets')"
            " or m.endswith('_chapter') or m.startswith('optbook.viz')]\n"
            "print(bad)\n"
            "sys.exit(1 if bad else 0)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300,
                         env={**__import__("os").environ, "OPENBLAS_NUM_THREADS": "1"})
    assert out.returncode == 0, out.stdout + out.stderr
