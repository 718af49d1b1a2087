"""The paper's methods, importable from their part: ``from optbook.classical import bfgs``.

Each part package declares its methods in ``METHODS`` (see :mod:`optbook.methods`) and ends with::

    __all__, __getattr__, __dir__ = lazy_exports(__name__, METHODS)

A method is imported on first access (PEP 562), so ``import optbook.classical`` stays cheap and
importing one method pulls only its own module (never plotly, never another chapter's torch).
Two rules keep every name meaning one thing: a method module never shares its method's name (hence
``bfgs_methods.py`` beside ``bfgs_chapter.py``: were the module ``bfgs.py``, ``optbook.classical.bfgs``
would be the module or the function depending on what was imported first), and a name two
chapters of a part both use (``distill`` in Part V) is exported by neither: import it from its
module (``from optbook.bilevel.ld3m import distill``).

Importing this module imports nothing beyond the standard library.
"""
from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping


def _modules_by_name(methods: Mapping[str, Mapping[str, object]]) -> dict[str, set[str]]:
    """Name -> the modules (relative to the part) whose ``"module.name"`` keys of ``METHODS`` use it;
    keys given as a full dotted path live outside the part and are left out."""
    modules: dict[str, set[str]] = {}
    for chapter_methods in methods.values():
        for path in chapter_methods:
            module, _, name = path.rpartition(".")
            if module and "." not in module:
                modules.setdefault(name, set()).add(module)
    return modules


def exported(methods: Mapping[str, Mapping[str, object]]) -> dict[str, str]:
    """Name -> module (relative to the part) of each paper's method a part exports: every
    ``"module.name"`` key of ``METHODS`` whose name no other module of the part uses."""
    return {name: next(iter(ms)) for name, ms in sorted(_modules_by_name(methods).items()) if len(ms) == 1}


def ambiguous(methods: Mapping[str, Mapping[str, object]]) -> list[str]:
    """The method names two modules of a part both use, which the part does not export."""
    return sorted(name for name, ms in _modules_by_name(methods).items() if len(ms) > 1)


def lazy_exports(package: str, methods: Mapping[str, Mapping[str, object]]
                 ) -> tuple[list[str], Callable[[str], object], Callable[[], list[str]]]:
    """``(__all__, __getattr__, __dir__)`` for part ``package`` (its ``__name__``): its exported
    methods, each imported from its module on first access and kept."""
    table, shared = exported(methods), ambiguous(methods)

    def __getattr__(name: str):
        if name in shared:
            raise AttributeError(f"module {package!r} does not export {name!r}: two of its chapters use the "
                                 "name; import it from its module (see the part's METHODS)")
        if name not in table:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(f"{package}.{table[name]}"), name)
        setattr(sys.modules[package], name, value)  # next time a plain attribute
        return value

    def __dir__() -> list[str]:
        return sorted(set(vars(sys.modules[package])) | set(table))

    return list(table), __getattr__, __dir__
