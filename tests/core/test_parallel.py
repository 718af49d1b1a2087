"""optbook.core.parallel: worker processes give the serial run's results, in order, on one thread
each; bad jobs and backends are refused by name; grid_search and the claims runner go through it."""
from __future__ import annotations

import json
import os
import sys

import numpy as np
import pytest

from optbook.__main__ import main
from optbook.core import grid_search
from optbook.core.parallel import pmap


def seeded_solve(seed: int) -> np.ndarray:
    """A little linear algebra from a seeded generator: the numbers a sweep's task computes."""
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((60, 60))
    return np.linalg.solve(a @ a.T + np.eye(60), rng.standard_normal(60))


def worker_threads(_item) -> dict:
    """What a worker sees: its pid, the thread variables, the BLAS pools and torch's pool."""
    import torch
    from threadpoolctl import threadpool_info

    return {"pid": os.getpid(), "env": [os.environ.get(v) for v in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS")],
            "blas": sorted({p["num_threads"] for p in threadpool_info()}), "torch": torch.get_num_threads()}


def test_local_processes_give_the_serial_results_in_order():
    seeds = list(range(7, 0, -1))              # not sorted: order must follow the input
    serial = pmap(seeded_solve, seeds)
    parallel = pmap(seeded_solve, seeds, jobs=2)
    assert len(parallel) == len(seeds)
    for s, p in zip(serial, parallel):
        np.testing.assert_array_equal(s, p)   # bit for bit, not approximately
    assert not np.allclose(serial[0], serial[1])  # different seeds: a test that would catch a mix-up


def test_progress_sees_each_result_in_input_order():
    seen = []
    pmap(lambda x: x * x, [3, 1, 2], jobs=2, progress=lambda item, r: seen.append((item, r)))
    assert seen == [(3, 9), (1, 1), (2, 4)]


def test_workers_are_other_processes_on_one_thread():
    rows = pmap(worker_threads, range(4), jobs=2)
    assert all(r["pid"] != os.getpid() for r in rows)
    assert all(r["env"] == ["1", "1"] and r["blas"] == [1] and r["torch"] == 1 for r in rows), rows


@pytest.mark.parametrize("jobs", [0, -1, 2.5, True, "2"])
def test_bad_jobs_named(jobs):
    with pytest.raises(ValueError, match="jobs"):
        pmap(abs, [1, 2], jobs=jobs)


def test_unknown_backend_named():
    with pytest.raises(ValueError, match="backend.*'spark'"):
        pmap(abs, [1, 2], jobs=2, backend="spark")


def test_dask_without_distributed_says_what_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "distributed", None)  # as on a machine without it
    with pytest.raises(ValueError, match=r"dask\[distributed\]"):
        pmap(abs, [1, 2], jobs=2, backend="dask")


def test_grid_search_in_parallel_equals_serial():
    def score(seed, lr, momentum):
        return float(np.linalg.norm(seeded_solve(seed)) * lr + momentum ** 2)

    grid = {"lr": [0.1, 0.3, 1.0], "momentum": [0.0, 0.9]}
    serial = grid_search("sgd", score, grid, seeds=[1, 2, 3])
    parallel = grid_search("sgd", score, grid, seeds=[1, 2, 3], jobs=2)
    assert parallel.settings == serial.settings
    np.testing.assert_array_equal(parallel.per_seed, serial.per_seed)
    np.testing.assert_array_equal(parallel.scores, serial.scores)
    assert parallel.best == serial.best
    with pytest.raises(ValueError, match="jobs"):
        grid_search("sgd", score, grid, seeds=[1], jobs=0)


def test_claims_runner_with_two_jobs_matches_serial(tmp_path):
    """`python -m optbook claims --jobs 2` (a chapter per worker): the same rows, in the same order,
    as the serial run (only the seconds differ)."""
    rows = {}
    for jobs in (1, 2):
        out = tmp_path / f"jobs{jobs}.json"
        assert main(["claims", "--chapter", "08,02", "--fast", "--jobs", str(jobs), "--json", str(out)]) == 0
        rows[jobs] = json.loads(out.read_text())
        for r in rows[jobs]:
            r.pop("seconds")
    assert {r["chapter"] for r in rows[1]} == {"02", "08"} and rows[1] == rows[2]


@pytest.mark.parametrize("argv, named", [
    (["--jobs", "0"], "--jobs must be an integer >= 1, got 0"),
    (["--jobs", "-3"], "--jobs must be an integer >= 1, got -3"),
    (["--jobs", "two"], "--jobs must be an integer >= 1, got 'two'"),
    (["--jobs", "2", "--backend", "spark"], "invalid choice: 'spark'"),
    (["--chapter", "08,1"], "--chapter must be two digits like 01 (or a list: 02,08), got '08,1'"),
])
def test_claims_runner_refuses_bad_jobs_and_backends(argv, named, capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["claims", "--chapter", "08", "--fast", *argv])
    assert exit_.value.code == 2
    assert named in capsys.readouterr().err
