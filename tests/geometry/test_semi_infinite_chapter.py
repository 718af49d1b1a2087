"""Chapter 12: the experiments, figures and explorers of semi_infinite_chapter."""
import numpy as np
import pytest

from optbook.geometry import semi_infinite_chapter as ch


def test_reference_is_feasible_and_beats_the_methods():
    P, ref = ch.instance(0)
    assert P.G(ref.x) <= 1e-8
    idb = ch.run("idb", 0, "convex", eta=0.05, alpha=5.0)
    assert abs(idb.fun - ref.fun) / ref.fun <= 1e-8
    assert ch.final_accuracy(idb, 0) <= 1e-8
    # lambda* from the reference equals iDB-PD's converged multiplier
    assert np.isclose(ch.lambda_star(0), idb.lam, rtol=1e-5)


def test_accuracy_and_evals_to():
    r = ch.count_run(0, record_every=1, eta=0.05, alpha=5.0)
    acc = ch.accuracy(r, 0)
    n = ch.evals_to(r, 0, eps=1e-6)
    i = int(np.flatnonzero(r.trace["grad_evals"] == n)[0])
    assert np.all(acc[i:] <= 1e-6) and acc[i - 1] > 1e-6
    assert ch.evals_to(r, 0, eps=1e-30) == np.inf
    # the method's own stop comes after the oracle time, at an accurate point, and counts what it spent
    assert r.message.startswith("converged") and r.nit < ch.BUDGET
    assert ch.evals_to_stop(r, 0) == r.grad_evals >= n
    assert ch.evals_to_stop(r, 0, eps=1e-30) == np.inf           # stopped, but not that accurate
    full = ch.run("idb", 0, "convex", eta=0.05, alpha=5.0)         # no stopping rule: the whole budget
    assert full.message == "iteration budget used" and ch.evals_to_stop(full, 0) == np.inf
    exch = ch.run("exchange", 0, "convex", ascent_steps=2, n_starts=0)
    assert exch.message.startswith("converged") and ch.evals_to_stop(exch, 0) == exch.grad_evals
    # a diverged run has infinite accuracy
    bad = ch.run("penalty", 0, "convex", mu=1000.0, eta=1e-3)
    assert not bad.success and ch.final_accuracy(bad, 0) == np.inf


def test_penalty_leaves_lambda_over_mu_and_alpha_zero_stays_infeasible():
    pen = ch.run("penalty", 0, "convex", mu=300.0, eta=3e-4)
    viol = pen.trace["infeasibility"][-1]
    assert 0.5 <= viol * 300.0 / ch.lambda_star(0) <= 2.0
    ctrl = ch.run("idb", 0, "convex", eta=0.05, alpha=0.0)
    assert ctrl.trace["infeasibility"][-1] > 0.1


def test_bad_arguments():
    with pytest.raises(ValueError, match="kind"):
        ch.instance(0, "concave")
    with pytest.raises(ValueError, match="method"):
        ch.run("sgd", 0)
    with pytest.raises(ValueError, match="seed"):
        ch.instance(-1)
    with pytest.raises(ValueError, match="point"):
        ch.qp_geometry(99, 2.0)
    with pytest.raises(ValueError, match="alpha"):
        ch.qp_geometry(0, -1.0)
    with pytest.raises(ValueError, match="grid_size"):
        ch.semi_infinite_figure(grid_size=0)
    with pytest.raises(ValueError, match="eps"):
        ch.evals_to(ch.count_run(0, eta=0.05, alpha=5.0), 0, eps=0.0)
    with pytest.raises(ValueError, match="eps"):
        ch.evals_to_stop(ch.count_run(0, eta=0.05, alpha=5.0), 0, eps=-1.0)
    with pytest.raises(ValueError, match="seed"):
        ch.comparison_runs(2.5)


def test_figures_build_and_explorers_answer():
    fig = ch.qp_geometry_slider_figure()
    assert len(fig.frames) == len(ch.QP_POINTS)
    fig = ch.semi_infinite_slider_figure()
    assert len(fig.frames) == len(ch.SNAPSHOTS)
    q = ch.qp_geometry(0, 2.0)
    assert np.allclose(q["d"], -q["g"] - q["lam"] * q["a"])
    for explorer in (ch.EXPLORER_QP, ch.EXPLORER_SEMI_INFINITE):
        assert explorer.latency_ms()["median_cpu_ms"] < 150


def test_pool_catches_the_worst_case_a_single_start_misses():
    single, pool = ch.toy_run(False), ch.toy_run(True)
    assert single.trace["infeasibility"][-1] > 0.5
    assert pool.trace["infeasibility"][-1] <= 1e-8
