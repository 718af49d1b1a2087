"""The index of methods: every chapter's algorithms and their baselines, read from the code.

Each part package (``optbook.classical``, ..., ``optbook.llm``) declares in its ``METHODS`` table,
chapter by chapter, the paper's methods and the baselines the chapter races them against, as
``"module.name"`` (relative to the part) or a full dotted path (``"torch.optim.Adam"``). Everything
else the book's index of methods shows is read off the objects themselves: the call, the first
line of the docstring, and the kind of object, in the ecosystem's terms (a ``scipy.optimize``-
shaped minimizer, a ``torch.optim.Optimizer``, a bandit policy, a ``gymnasium.Env``, ...).

Importing this module imports the part packages only; :func:`index` imports the method modules
(never a chapter's figures, so never plotly).
"""
from __future__ import annotations

import importlib
import inspect
import sys
from dataclasses import dataclass

from .claims import PARTS
from .exports import exported


@dataclass(frozen=True)
class Entry:
    """One row of the index: a paper's method or a baseline, with where it lives and how it is called."""

    chapter: str
    path: str            # the dotted path it is imported from, e.g. "optbook.classical.bfgs_methods.bfgs"
    role: str            # "method" (the paper's) or "baseline"
    kind: str            # see :func:`kind_of`
    call: str            # name(signature), annotations left out
    summary: str         # the docstring's first line
    baselines: tuple[str, ...] = ()   # for a method: the dotted paths of its baselines

    @property
    def name(self) -> str:
        """The object's own name (the last part of its path)."""
        return self.path.rsplit(".", 1)[1]

    @property
    def module(self) -> str:
        """The module it lives in."""
        return self.path.rsplit(".", 1)[0]

    @property
    def import_line(self) -> str:
        """The shortest import that brings it in: from its part package when the part exports it
        (``from optbook.classical import bfgs``), else from its module."""
        return f"from {exporter(self.path) or self.module} import {self.name}"


def resolve(path: str):
    """The object at a dotted path ``package.module.name`` (``ValueError`` naming it when absent)."""
    module, _, name = path.rpartition(".")
    if not module:
        raise ValueError(f"path must be a dotted path like 'package.module.name', got {path!r}")
    try:
        obj = importlib.import_module(module)
    except ModuleNotFoundError:  # a class attribute, e.g. "package.module.Class.method"
        return getattr(resolve(module), name)
    if not hasattr(obj, name):
        raise ValueError(f"{path!r}: module {module} has no attribute {name!r}")
    return getattr(obj, name)


def exporter(path: str) -> str | None:
    """The part package that exports the object at ``path`` under its own name, if one does."""
    parts = path.split(".")
    if len(parts) != 4 or parts[0] != "optbook" or parts[1] not in PARTS:
        return None
    package = importlib.import_module(f"optbook.{parts[1]}")
    return f"optbook.{parts[1]}" if exported(package.METHODS).get(parts[3]) == parts[2] else None


def _subclass_of(obj, module: str, qualname: str) -> bool:
    """Whether class ``obj`` derives from ``module.qualname``, without importing ``module``: a class
    can only derive from it if it is already imported."""
    if module not in sys.modules:
        return False
    base = sys.modules[module]
    for part in qualname.split("."):
        base = getattr(base, part, None)
    return isinstance(base, type) and issubclass(obj, base)


def kind_of(obj) -> str:
    """What kind of object ``obj`` is, in the terms of the library readers already know."""
    if inspect.isclass(obj):
        if _subclass_of(obj, "torch.optim", "Optimizer"):
            return "torch.optim.Optimizer"
        if _subclass_of(obj, "gymnasium", "Env"):
            return "gymnasium.Env"
        if callable(getattr(obj, "select", None)) and callable(getattr(obj, "update", None)):
            return "bandit policy (select / update)"
        if callable(getattr(obj, "fit", None)) and callable(getattr(obj, "predict", None)):
            return "scikit-learn estimator (fit / predict)"
        return "class"
    if callable(obj):
        try:
            params = list(inspect.signature(obj).parameters)
        except (TypeError, ValueError):
            return "function"
        if params[:2] == ["fun", "x0"]:
            return "minimizer (scipy.optimize shape)"
        return "function"
    raise ValueError(f"obj must be a class or a function, got {type(obj).__name__}")


def call_of(obj) -> str:
    """``name(a, b, *, c=1)``: the call without type annotations (what a reader types)."""
    try:
        sig = inspect.signature(obj)
    except (TypeError, ValueError):
        return f"{obj.__name__}(...)"
    params = [p.replace(annotation=inspect.Parameter.empty) for p in sig.parameters.values()
              if p.name != "self"]
    return obj.__name__ + str(sig.replace(parameters=params, return_annotation=inspect.Signature.empty))


def summary_of(obj) -> str:
    """The first line of the docstring ('' without one)."""
    doc = inspect.getdoc(obj) or ""
    return doc.strip().splitlines()[0] if doc.strip() else ""


def absolute(part: str, name: str) -> str:
    """A ``METHODS`` name made absolute: ``"bfgs_methods.bfgs"`` in part ``classical`` is
    ``"optbook.classical.bfgs_methods.bfgs"``; a name whose first segment is not a module of the part
    (``"torch.optim.Adam"``, ``"optbook.core.bandits.UCB1"``) is already absolute."""
    head = name.split(".", 1)[0]
    try:
        importlib.import_module(f"optbook.{part}.{head}")
    except ModuleNotFoundError:
        return name
    return f"optbook.{part}.{name}"


def declared() -> dict[str, tuple[str, dict[str, tuple[str, ...]]]]:
    """Chapter -> (part, {method path: baseline paths}), from every part's ``METHODS`` table."""
    out: dict[str, tuple[str, dict[str, tuple[str, ...]]]] = {}
    for part in PARTS:
        pkg = importlib.import_module(f"optbook.{part}")
        for chapter, methods in getattr(pkg, "METHODS", {}).items():
            if chapter in out:
                raise ValueError(f"chapter {chapter} is declared in optbook.{out[chapter][0]} and optbook.{part}")
            out[chapter] = (part, {absolute(part, m): tuple(absolute(part, b) for b in bs)
                                   for m, bs in methods.items()})
    return dict(sorted(out.items()))


def _entry(chapter: str, path: str, role: str, baselines: tuple[str, ...] = ()) -> Entry:
    obj = resolve(path)
    return Entry(chapter, path, role, kind_of(obj), call_of(obj), summary_of(obj), baselines)


def index() -> list[Entry]:
    """Every declared method and baseline, in chapter order: each chapter's methods first, then
    its baselines (each once per chapter)."""
    rows: list[Entry] = []
    for chapter, (_, methods) in declared().items():
        seen: set[str] = set()
        for path, baselines in methods.items():
            rows.append(_entry(chapter, path, "method", baselines))
            seen.add(path)
        for baselines in methods.values():
            for path in baselines:
                if path not in seen:
                    rows.append(_entry(chapter, path, "baseline"))
                    seen.add(path)
    return rows
