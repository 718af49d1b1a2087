"""The package's layout: a chapter's method module is what a user imports, without the book's
figures (DESIGN.md §1); its experiments, claims and figures live in ``<module>_chapter.py``."""
from __future__ import annotations

import pkgutil
import subprocess
import sys

import optbook
from optbook.claims import PARTS


def method_modules() -> list[str]:
    names = []
    for info in pkgutil.walk_packages(optbook.__path__, prefix="optbook."):
        part = info.name.split(".")[1]
        if part in PARTS and info.name.count(".") == 2 and not info.name.endswith("_chapter"):
            names.append(info.name)
    return sorted(names)


def test_method_modules_do_not_pull_plotly():
    modules = method_modules()
    assert "optbook.classical.bfgs_methods" in modules   # the walk found the parts
    code = ("import importlib, sys\n"
            f"for m in {modules!r}:\n"
            "    importlib.import_module(m)\n"
            "print(sorted(k for k in sys.modules if k == 'plotly' or k.startswith('plotly.')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]", f"a method module imports plotly: {out.stdout.strip()[:200]}"

