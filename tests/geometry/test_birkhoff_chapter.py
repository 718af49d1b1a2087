"""Tests for chapter 11's experiments: the benchmark and its budgets, the tuning, the figures and
the live explorers."""
import subprocess
import sys

import numpy as np
import pytest

from optbook.geometry import birkhoff as be
from optbook.geometry import birkhoff_chapter as ch
from optbook.geometry.qaplib import QAPLIB_12, QAPLIB_14, qaplib_instance


def test_qaplib_optima_are_attained_by_qaplib_permutations():
    """The stored optimal values are those of QAPLIB's solution files (nug12, tai12a), in our
    convention f(p) = sum_ij D_ij F_p(i)p(j)."""
    sol = {"nug12": [12, 7, 9, 3, 4, 8, 11, 1, 5, 6, 10, 2],
           "tai12a": [8, 1, 6, 2, 11, 10, 3, 5, 9, 7, 12, 4]}
    for name, perm in sol.items():
        q, opt = qaplib_instance(name)
        assert q(np.array(perm) - 1) == opt
    for name in QAPLIB_12 + QAPLIB_14:
        q, opt = qaplib_instance(name)
        assert q.n == (12 if name in QAPLIB_12 else 14) and opt > 0
    with pytest.raises(ValueError, match="name"):
        qaplib_instance("nug13")


def test_black_box_methods_get_the_same_budget():
    q, _ = qaplib_instance("had12")
    for m in (ch.BE, ch.BE_FIRST, ch.AUTHORS, ch.TWO_OPT, ch.RANDOM):
        res = ch.solve(m, q, 0)
        assert ch.BUDGET <= res.nfev < ch.BUDGET + 2 * q.n, m
    assert ch.solve(ch.TWO_OPT_ONE, q, 0).nfev < ch.BUDGET / 3  # one descent stops early


def test_steps_run_the_papers_protocol_without_an_evaluation_cap():
    """``steps`` runs that many steps (the paper's protocol); evaluations are then not capped, and
    the best permutation only improves with more steps of the same run."""
    q, _ = qaplib_instance("tai12a")
    short, long = (ch.solve(ch.AUTHORS, q, 1, steps=s) for s in (200, 600))
    assert (short.nit, long.nit) == (200, 600)
    assert long.nfev >= 5 * 600 > ch.solve(ch.AUTHORS, q, 1, budget=1000).nfev
    assert long.fun <= short.fun


def test_warm_starts_never_lose_to_faq():
    for name in ("chr12a", "nug12"):
        q, opt = qaplib_instance(name)
        start = ch._faq(name)
        for m in (ch.BE, ch.TWO_OPT, ch.RANDOM):
            assert ch.solve(m, q, 3, perm0=start.x).fun <= start.fun


def test_swap_optimal_faq_answers_are_where_one_descent_stops_at_once():
    optimal = ch.swap_optimal_faq()
    for name in QAPLIB_12:
        q, _ = qaplib_instance(name)
        start = ch._faq(name)
        assert (be.two_opt(q, q.n, perm0=start.x).fun == start.fun) == (name in optimal), name


def test_comparison_shapes_and_caching():
    gaps = ch.comparison((ch.TWO_OPT, ch.RANDOM), seeds=(0, 1))
    assert {m: g.shape for m, g in gaps.items()} == {ch.TWO_OPT: (2, 9), ch.RANDOM: (2, 9)}
    assert (gaps[ch.TWO_OPT] >= 0).all()
    again = ch.comparison((ch.TWO_OPT,), seeds=(0, 1))
    np.testing.assert_array_equal(again[ch.TWO_OPT], gaps[ch.TWO_OPT])
    rows = ch.comparison_rows(gaps)
    assert [r["method"] for r in rows] == [ch.LEGEND[ch.TWO_OPT], ch.LEGEND[ch.RANDOM]]


def test_tuning_selects_the_settings_the_claims_use():
    """The claims' settings are the tuning's choice on held-out instances and seeds, each tuned method
    gets the same grid size, and no choice sits on its grid's edge."""
    tunings = ch.tuning()
    by_name = {t.method: t for t in tunings}
    assert {t.size for t in tunings if t.method != ch.TWO_OPT} == {9}
    for m, setting in ch.SETTINGS.items():
        assert by_name[m].best == setting, (m, by_name[m].best)
        assert not by_name[m].on_edge(), m
    assert set(ch.TUNING_SEEDS).isdisjoint(ch.CLAIM_SEEDS)
    assert set(QAPLIB_14).isdisjoint(QAPLIB_12)


def test_figures_build():
    assert len(ch.continuity_slider_figure().frames) == len(ch.T_GRID)
    assert len(ch.triangle_slider_figure().frames) == 8
    assert len(ch.trace_slider_figure().frames) == len(ch.PERIODS)
    fig = ch.trace_figure()
    tr = ch.run_traces()
    assert np.all(tr["rounded"] <= tr.objective + 1e-9)  # the band of the rounding guarantee
    assert len(fig.data) == 7
    gaps = ch.comparison((ch.TWO_OPT,), seeds=(0,))
    assert len(ch.comparison_figure(gaps).data) == 1


def test_greedy_decomposition_jumps_where_the_score_ordered_one_does_not():
    d = ch.continuity_data()
    # the figure's point: the score-ordered extension moves little per grid step, the greedy one jumps
    assert np.abs(np.diff(d["be"])).max() < 0.05 * np.abs(np.diff(d["greedy"])).max()


def test_explorers_answer_their_first_move_within_a_second():
    """The first move of each live explorer (in a fresh process, caches empty) costs under 1 s of CPU."""
    code = ("import time; from optbook.geometry import birkhoff_chapter as ch\n"
            "for e in (ch.EXPLORER_TRACE, ch.EXPLORER_CONTINUITY, ch.EXPLORER_TRIANGLE):\n"
            "    t = time.process_time(); e.render(); print(time.process_time() - t)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    seconds = [float(v) for v in out.stdout.split()]
    assert len(seconds) == 3 and max(seconds) < 1.0, seconds


def test_bad_input():
    q, _ = qaplib_instance("had12")
    with pytest.raises(ValueError, match="method"):
        ch.solve("simulated annealing", q, 0)
    with pytest.raises(ValueError, match="qap"):
        ch.solve(ch.BE, be.LinearAssignment(np.eye(3)), 0)
    with pytest.raises(ValueError, match="budget"):
        ch.solve(ch.BE, q, 0, budget=0)
    with pytest.raises(ValueError, match="perm0"):
        ch.solve(ch.SINKHORN, q, 0, perm0=np.arange(12))
    with pytest.raises(ValueError, match="steps"):
        ch.solve(ch.TWO_OPT, q, 0, steps=10)
    with pytest.raises(ValueError, match="steps"):
        ch.solve(ch.AUTHORS, q, 0, steps=0)
    with pytest.raises(ValueError, match="instance"):
        ch.trace_figure("nug13")
    with pytest.raises(ValueError, match="gaps"):
        ch.comparison_figure({})
    with pytest.raises(ValueError, match="gaps"):
        ch.comparison_figure({ch.BE: np.zeros((2, 3))})
    with pytest.raises(ValueError, match="t"):
        ch.continuity_figure(1.5)
    with pytest.raises(ValueError, match="k"):
        ch.triangle_figure("random", 5)
    with pytest.raises(ValueError, match="score"):
        ch.triangle_figure("lexicographic", 1)
