"""The chapter's experiments: determinism, the figures, the scipy comparison, the cubic sweep."""
import numpy as np
import pytest

from optbook.classical import bfgs_chapter as ch


def test_deterministic():
    a = ch.conditioning_experiment.__wrapped__(2.0, n=100, d=8, gd_maxiter=50)
    b = ch.conditioning_experiment.__wrapped__(2.0, n=100, d=8, gd_maxiter=50)
    for name in a["runs"]:
        np.testing.assert_array_equal(a["runs"][name].trace.objective, b["runs"][name].trace.objective)


def test_unit_step_index():
    res = ch.superlinear_run(seed=1, c=1.0)
    t0 = ch.unit_step_index(res.trace)
    assert t0 is not None and np.all(res.trace["unit_step"][t0:-1] == 1.0)
    assert ch.contraction_drop(res.trace) < 0.5
    control = ch.superlinear_run(seed=1, c=1.0, update=False)
    assert ch.contraction_drop(control.trace) > 0.5  # no update: no superlinear phase


def test_figures_build():
    assert len(ch.conditioning_slider_figure().frames) == 9
    assert len(ch.phase_slider_figure().frames) == len(ch.PHASE_LOG_C)
    assert len(ch.cubic_figure().data) == 2


def test_evaluations_within_1_5x_of_scipy():
    """The interpolating weak-Wolfe search with the unit step first (once accepted) costs no more
    than 1.5x scipy's strong-Wolfe BFGS on each problem, for about the same iterations."""
    for row in ch.nfev_comparison(seeds=(0,)):
        assert row["f evals ratio"] <= 1.5, row
        assert row["iterations (ours)"] <= 1.3 * row["iterations (scipy)"] + 2, row


def test_cubic_iterations_do_not_see_the_change_of_variables():
    rows = ch.cubic_sweep(0, "bfgs", fast=True)
    by_instance = {}
    for r in rows:
        by_instance.setdefault((r["mu"], r["scale"]), set()).add(r["iterations"])
    assert all(len(v) == 1 for v in by_instance.values()), by_instance  # same count for every kappa(A)
    gd = ch.cubic_sweep(0, "gd", fast=True)
    assert any(len({r["iterations"] for r in gd if (r["mu"], r["scale"]) == key}) > 1 for key in by_instance)


def test_mismatch_of_identity_grows_with_kappa():
    psi = [ch.mismatch_of_identity(0, k) for k in (2.0, 4.0, 6.0)]
    assert psi[0] < psi[1] < psi[2]


def test_tuning_grids_have_the_same_size():
    tb, tg = ch.line_search_tuning((100,))
    assert tb.size == tg.size == 9 and set(tb.seeds).isdisjoint(ch.CLAIM_SEEDS)


def test_bad_input():
    with pytest.raises(ValueError, match="log10_kappa"):
        ch.conditioning_experiment(9.0)
