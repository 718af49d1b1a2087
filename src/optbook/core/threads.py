"""Run small models on one thread.

The book's models and matrices are tiny: on a shared 2-core machine extra BLAS or torch threads
only add overhead (runs were 10-100x slower with them). Both context managers restore the
previous setting on exit and change nothing at import.
"""
from __future__ import annotations

import ctypes
import glob
import os
from collections.abc import Iterator
from contextlib import contextmanager

import numpy as np


def _openblas_thread_setter():
    """(get, set) for the thread count of the OpenBLAS that numpy's wheels bundle, or None."""
    pattern = os.path.join(os.path.dirname(np.__file__), os.pardir, "numpy.libs", "*openblas*")
    for path in glob.glob(pattern):
        try:
            lib = ctypes.CDLL(path)
        except OSError:
            continue
        for prefix, suffix in (("scipy_openblas", "64_"), ("scipy_openblas", ""), ("openblas", "")):
            get = getattr(lib, f"{prefix}_get_num_threads{suffix}", None)
            put = getattr(lib, f"{prefix}_set_num_threads{suffix}", None)
            if get is not None and put is not None:
                return get, put
    return None


_BLAS_THREADS = _openblas_thread_setter()


@contextmanager
def one_blas_thread() -> Iterator[None]:
    """numpy's BLAS on one thread inside the block, where the bundled OpenBLAS allows it
    (elsewhere a no-op)."""
    if _BLAS_THREADS is None:
        yield
        return
    get, put = _BLAS_THREADS
    previous = int(get())
    put(1)
    try:
        yield
    finally:
        put(previous)


@contextmanager
def one_torch_thread() -> Iterator[None]:
    """torch on one intra-op thread inside the block."""
    import torch

    previous = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(previous)
