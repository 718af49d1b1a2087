"""Sweeps that scale out: one map over independent tasks, on joblib.

Seeds, grid settings and claims are independent tasks; :func:`pmap` runs them in local worker
processes (joblib's ``loky`` backend, the default) or on a cluster (joblib's ``dask`` backend),
and returns the results in the order of the inputs, identical to a serial run: every task
receives the same arguments and draws from its own seeded generator, so where it runs does not
change what it computes.

Each worker runs its BLAS and torch on one thread. The book's matrices and models are small, and
``jobs`` processes each spawning a thread per core would oversubscribe the machine (the runs were
10-100x slower that way on 2 cores).

On a cluster (``pip install "dask[distributed]"``), three lines::

    from dask.distributed import Client
    client = Client("tcp://scheduler-address:8786")   # or Client() for a local test cluster
    results = pmap(fn, items, jobs=32, backend="dask")

and from the command line ``python -m optbook claims --jobs 32 --backend dask`` after setting
``DASK_SCHEDULER_ADDRESS=tcp://scheduler-address:8786``.
"""
from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterable
from typing import Any, TypeVar

from .validate import check_choice, check_int

T = TypeVar("T")
R = TypeVar("R")

#: joblib backends :func:`pmap` accepts: local processes (``loky``, the default; ``multiprocessing``),
#: threads (``threading``: only for work that releases the GIL), a Dask cluster (``dask``).
BACKENDS = ("loky", "multiprocessing", "threading", "dask")
_THREAD_VARS = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")


def _one_thread(fn: Callable[[T], R]) -> Callable[[T], R]:
    """``fn`` run with every BLAS and torch on one thread (inside the worker that runs it)."""

    def run(item: T) -> R:
        from threadpoolctl import threadpool_limits

        for var in _THREAD_VARS:  # torch and any BLAS the task imports from here on read these
            os.environ[var] = "1"
        torch = sys.modules.get("torch")  # already imported: its pool is set, tell it directly
        if torch is not None and torch.get_num_threads() != 1:
            torch.set_num_threads(1)
        with threadpool_limits(limits=1):
            return fn(item)

    return run


def pmap(
    fn: Callable[[T], R],
    items: Iterable[T],
    *,
    jobs: int = 1,
    backend: str = "loky",
    progress: Callable[[T, R], None] | None = None,
) -> list[R]:
    """``[fn(item) for item in items]``, with up to ``jobs`` tasks at a time on a joblib backend.

    Parameters
    ----------
    fn : callable
        A function of one item. For process backends it must be picklable (joblib uses
        cloudpickle, so closures and lambdas are fine) and so must the items and results.
    items : iterable
        The tasks' inputs.
    jobs : int, default 1
        Tasks run at once (>= 1). With ``jobs=1`` everything runs here, in this process.
    backend : {'loky', 'multiprocessing', 'threading', 'dask'}, default 'loky'
        joblib's backend: local worker processes by default; ``'dask'`` sends the tasks to the
        Dask cluster of the current ``dask.distributed.Client`` (see the module docstring).
    progress : callable, optional
        ``progress(item, result)`` called here as each result arrives, in the order of ``items``.

    Returns
    -------
    list
        The results in the order of ``items``, the same as the serial run's.
    """
    jobs = check_int(jobs, "jobs", minimum=1)
    backend = check_choice(backend, "backend", BACKENDS)
    items = list(items)
    if jobs == 1 or len(items) <= 1:
        results = []
        for item in items:
            results.append(fn(item))
            if progress is not None:
                progress(item, results[-1])
        return results

    import joblib

    if backend == "dask":
        try:
            import distributed  # noqa: F401  (joblib's dask backend needs it)
        except ImportError as err:
            raise ValueError("backend='dask' needs dask.distributed: pip install \"dask[distributed]\" "
                             "and connect a Client (see optbook.core.parallel)") from err
    task = _one_thread(fn) if backend != "threading" else fn
    extra = {"inner_max_num_threads": 1} if backend == "loky" else {}
    if backend == "dask" and os.environ.get("DASK_SCHEDULER_ADDRESS"):
        # No Client made in this process (the command line): connect to the named scheduler.
        extra["scheduler_host"] = os.environ["DASK_SCHEDULER_ADDRESS"]
    with joblib.parallel_config(backend=backend, n_jobs=jobs, **extra):
        stream = joblib.Parallel(return_as="generator")(joblib.delayed(task)(item) for item in items)
        results = []
        for item, result in zip(items, stream):
            results.append(result)
            if progress is not None:
                progress(item, result)
    return results
