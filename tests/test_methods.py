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
    assert by_path["optbook.classical.bfgs_methods.bfgs"].kind == "minimizer (scipy.optimize shape)"
    assert by_path["optbook.training.momentum_sam.MSAM"].kind == "torch.optim.Optimizer"
    assert by_path["optbook.decisions.maxucb.MaxUCB"].kind == "bandit policy (select / update)"
    assert by_path["optbook.training.momentum_sam.MSAM"].baselines[0] == "optbook.training.momentum_sam.SAM"


def test_calls_leave_out_annotations_and_self():
    def f(fun: int, x0: float = 1.0, *, tol: float = 1e-3) -> int:
        """F."""

    assert methods.call_of(f) == "f(fun, x0=1.0, *, tol=0.001)"


def test_names_resolve_or_fail_with_the_name():
    assert methods.resolve("optbook.classical.bfgs_methods.bfgs").__name__ == "bfgs"
    assert methods.absolute("classical", "bfgs_methods.bfgs") == "optbook.classical.bfgs_methods.bfgs"
    assert methods.absolute("training", "torch.optim.Adam") == "torch.optim.Adam"
    with pytest.raises(ValueError, match="no_such_method"):
        methods.resolve("optbook.classical.bfgs_methods.no_such_method")
    with pytest.raises(ValueError, match="dotted path"):
        methods.resolve("bfgs")


def test_a_wrong_name_in_a_methods_table_fails_the_index(monkeypatch):
    import optbook.classical as part

    monkeypatch.setattr(part, "METHODS", {**part.METHODS, "01": {"bfgs_methods.bfgs_typo": ()}})
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
    # Each exported method, imported as a user would, in a fresh interpreter: the object at its
    # module's path, and no plotting code, widget or chapter module pulled in on the way.
    code = ("import sys, importlib\n"
            "from optbook.claims import PARTS\n"
            "from optbook.exports import exported\n"
            "n = 0\n"
            "for part in PARTS:\n"
            "    pkg = importlib.import_module('optbook.' + part)\n"
            "    for name, module in exported(pkg.METHODS).items():\n"
            "        ns = {}\n"
            "        exec(f'from optbook.{part} import {name}', ns)\n"
            "        assert ns[name] is getattr(importlib.import_module(f'optbook.{part}.{module}'), name), name\n"
            "        n += 1\n"
            "bad = [m for m in sys.modules if m.split('.')[0] in ('plotly', 'ipywidgets')"
            " or m.endswith('_chapter') or m.startswith('optbook.viz')]\n"
            "print(n, bad)\n"
            "sys.exit(1 if bad or n < 40 else 0)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300,
                         env={**__import__("os").environ, "OPENBLAS_NUM_THREADS": "1"})
    assert out.returncode == 0, out.stdout + out.stderr


def test_a_part_package_imports_its_methods_only_when_asked():
    code = ("import sys\n"
            "import optbook.training, optbook.llm, optbook.classical\n"
            "print(sorted(m for m in sys.modules if m.count('.') == 2 and m.startswith('optbook.')"
            " or m == 'torch'))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert out.stdout.strip() == "[]", out.stdout


def test_no_exported_name_is_also_a_module_of_its_part():
    # Were it so, optbook.<part>.<name> would be the module or the method depending on import order.
    from optbook.exports import exported

    for part in PARTS:
        pkg = importlib.import_module(f"optbook.{part}")
        modules = {m.name for m in pkgutil.iter_modules(pkg.__path__)}
        assert not set(exported(pkg.METHODS)) & modules, part
        assert pkg.__all__ == list(exported(pkg.METHODS)) and set(pkg.__all__) <= set(dir(pkg))


def test_a_name_two_chapters_share_is_not_exported_and_the_error_says_why():
    import optbook.bilevel as bilevel
    from optbook.exports import ambiguous, exported

    assert ambiguous(bilevel.METHODS) == ["distill"] and "distill" not in exported(bilevel.METHODS)
    with pytest.raises(AttributeError, match="two of its chapters use the name"):
        bilevel.distill
    with pytest.raises(AttributeError, match="has no attribute 'no_such_method'"):
        bilevel.no_such_method
    with pytest.raises(ImportError):
        exec("from optbook.bilevel import distill", {})


def test_the_index_gives_the_shortest_import():
    by_path = {r.path: r for r in methods.index()}
    assert by_path["optbook.classical.bfgs_methods.bfgs"].import_line == "from optbook.classical import bfgs"
    assert (by_path["optbook.classical.bfgs_methods.gradient_descent"].import_line
            == "from optbook.classical.bfgs_methods import gradient_descent")       # a baseline
    assert by_path["optbook.bilevel.ld3m.distill"].import_line == "from optbook.bilevel.ld3m import distill"
    for r in by_path.values():   # every line given works
        if r.path.startswith("optbook."):
            ns: dict = {}
            exec(r.import_line, ns)
            assert ns[r.name] is methods.resolve(r.path), r.import_line
