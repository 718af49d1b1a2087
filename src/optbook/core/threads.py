"""Run small models on one thread.

The book's models and matrices are tiny: on a shared 2-core machine extra BLAS or torch threads
only add overhead (runs were 10-100x slower with them). Both context managers restore the
previous setting on exit and change nothing at import.
"""
from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from threadpoolctl import threadpool_limits


@contextmanager
def one_blas_thread() -> Iterator[None]:
    """Every BLAS in the process on one thread inside the block: numpy's and scipy's wheels each
    bundle their own OpenBLAS, and both must be limited (threadpoolctl finds them all)."""
    with threadpool_limits(limits=1, user_api="blas"):
        yield


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
