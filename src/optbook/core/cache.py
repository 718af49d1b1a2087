"""An on-disk cache for results that are deterministic but too slow to recompute in every page.

Part VII trains a tiny language model once and reuses it in several chapters. The cache lives in
``$OPTBOOK_CACHE`` (default ``~/.cache/optbook``); a file's name carries a hash of everything that
determines its contents, so a changed setting, corpus or torch version trains afresh instead of
loading a stale model. Writes are atomic (a temporary file renamed into place), so two processes
that build the same entry at once (two chapters, or a chapter and a test) never read half a file.
"""
from __future__ import annotations

import hashlib
import json
import os
import pathlib
import tempfile
from collections.abc import Callable
from typing import Any


def cache_dir() -> pathlib.Path:
    """The cache folder, created on first use."""
    root = os.environ.get("OPTBOOK_CACHE") or pathlib.Path.home() / ".cache" / "optbook"
    path = pathlib.Path(root)
    path.mkdir(parents=True, exist_ok=True)
    return path


def cache_key(**parts: Any) -> str:
    """A short stable hash of JSON-serialisable parts (sorted keys)."""
    blob = json.dumps(parts, sort_keys=True, default=str).encode()
    return hashlib.sha256(blob).hexdigest()[:16]


def cached_torch(name: str, key: str, build: Callable[[], Any]) -> Any:
    """``torch.load`` the entry ``name-key.pt`` if present, else ``build()``, save it and return it."""
    import torch

    path = cache_dir() / f"{name}-{key}.pt"
    if path.exists():
        return torch.load(path, weights_only=True)
    value = build()
    fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
    os.close(fd)
    try:
        torch.save(value, tmp)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)
    return value
