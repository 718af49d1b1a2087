"""Tests for chapter 08's experiments, figures and claims (the method is tested in
test_lowrank_inverse.py)."""
from __future__ import annotations

import numpy as np
import pytest

from optbook.classical import lowrank_inverse as L
from optbook.classical import lowrank_inverse_chapter as ch


# ----------------------------------------------------------------- experiments


def test_synthetic_spectrum_and_crossover():
    lam = ch.synthetic_spectrum(100, 10)
    cut = L.spectral_cut(L.SymmetricMatrix.diagonal(lam), 10)
    assert (cut.lam_n, cut.lam_keep, cut.lam_drop, cut.gap) == (100.0, 1000.0, 2000.0, 1000.0)
    n_star = ch.crossover_n(10)
    assert 3000 < n_star < 4000
    bound = L.theorem21_bound(L.Cut.from_eigvals(ch.synthetic_spectrum(4000, 10), 10), 2 * np.sqrt(4000), 10)
    assert bound == pytest.approx(8.05 * 4000**-1.5, rel=1e-12)


def test_sqrt_n_experiment_finds_the_crossover_where_predicted():
    ex = ch.sqrt_n_experiment((1000, 2000, 4000, 8000), seeds=(0,))
    ratio = ex["eymn"] / ex["bound"]
    assert ratio[0] < 1 < ratio[-1] and np.all(np.diff(ratio) > 0)
    assert ch._log_crossing(ex["ns"].astype(float), ratio) == pytest.approx(ch.crossover_n(10), rel=0.1)
    assert np.all(ex["true"] < ex["bound"][:, None])


def test_laplacian_has_its_closed_form_spectrum():
    m1, m2 = 4, 5
    got = np.sort(np.linalg.eigvalsh(ch.laplacian_2d(m1, m2)))
    one = [4 * (m + 1) ** 2 * np.sin(np.pi * np.arange(1, m + 1) / (2 * (m + 1))) ** 2 for m in (m1, m2)]
    np.testing.assert_allclose(got, np.sort(np.add.outer(*one).ravel()), rtol=1e-12)


def test_structured_matrices_are_positive_definite_with_a_gap_at_p():
    for name in ch.STRUCTURED:
        sym = ch.structured_matrix(name)
        cut = L.spectral_cut(sym, 10)
        assert cut.lam_n > 0 and cut.gap > 1e-3 * cut.lam_n, name


def test_structured_experiment_stays_inside_the_gap_condition():
    ex = ch.structured_experiment("laplacian", seeds=(0,))
    assert np.all(ex["gap_ok"])
    assert np.all(ex["bound_over_true"] >= 1) and np.all(ex["eymn_over_true"] >= 1)
    # EYM-N's overprediction grows as the noise shrinks, Theorem 2.1's does not
    assert ex["eymn_over_true"][0, 0] > 10 * ex["eymn_over_true"][0, -1]
    assert ex["bound_over_true"][0, 0] == pytest.approx(ex["bound_over_true"][0, -1], rel=0.1)


def test_structured_p_sweep_agrees_with_the_experiment_at_p_10():
    sweep = ch.structured_p_sweep("laplacian", ps=(3, 10), seeds=(0, 1))
    ex = ch.structured_experiment("laplacian", seeds=(0, 1), levels=(0.5,))
    assert sweep["median"][1] == pytest.approx(np.median(ex["bound_over_true"]), rel=1e-12)
    assert np.all(sweep["median"] >= 1)


def test_noise_sweep_uses_eps_relative_to_lambda_n():
    tr = ch.noise_sweep(shape="rank_one", n=30, p=5, eps_lo=1e-3, eps_hi=1e-1, points=3)
    lam_n = ch.synthetic_spectrum(30, 5)[-1]
    np.testing.assert_allclose(tr["true"], tr["eps"] * lam_n / (lam_n**2 * (1 + tr["eps"])), rtol=1e-8)


def test_determinism_under_seed():
    a = ch.random_instance(5)
    b = ch.random_instance(5)
    np.testing.assert_array_equal(a[1], b[1])
    assert a[2:] == b[2:]
    np.testing.assert_array_equal(L.wigner_matrix(6, 3), L.wigner_matrix(6, 3))
    assert L.first_order_error_wigner(ch.synthetic_spectrum(50), 10, 1.0, 3) == \
        L.first_order_error_wigner(ch.synthetic_spectrum(50), 10, 1.0, 3)


def test_o_np_first_order_estimate_has_the_law_of_the_true_error():
    """Over draws, the O(np) estimate and the exact true error of the sqrt(n) setting agree (the
    second-order terms are O(||E|| / delta), a few per cent at n = 200)."""
    exact = ch.exact_synthetic_errors((200,), tuple(range(30)))
    fast = [L.first_order_error_wigner(ch.synthetic_spectrum(200, 10), 10, 1.0, s) for s in range(300)]
    np.testing.assert_allclose(exact["first_order"], exact["true"], rtol=0.06)
    assert np.median(fast) == pytest.approx(np.median(exact["true"]), rel=0.1)


# ----------------------------------------------------------------- bad input

_BAD = [
    (lambda: ch.synthetic_spectrum(10, 10), "p must be < n"),
    (lambda: ch.laplacian_2d(0, 3), "m1 must be >= 1"),
    (lambda: ch.exponential_kernel_matrix(5, -1.0), "lengthscale must be positive"),
    (lambda: ch.structured_matrix("bcsstk09"), "name must be one of"),
    (lambda: ch.noise_sweep(120.0), "phi_deg must lie in"),
    (lambda: ch.noise_sweep(shape="sparse"), "shape must be one of"),
    (lambda: ch.noise_sweep(eps_lo=1.0, eps_hi=0.1), "eps_lo must be < eps_hi"),
    (lambda: ch.designer_sweep(-1.0), "gap must be positive"),
    (lambda: ch.designer_sweep(1.0, float("nan")), "lam_min must be finite"),
    (lambda: ch.random_instance(0, n_range=(9, 3)), "n_range"),
    (lambda: ch.sqrt_n_experiment(ns=(1500.5,)), "ns must be integers"),
    (lambda: ch.sqrt_n_experiment(seeds=()), "seeds must not be empty"),
    (lambda: ch.sqrt_n_experiment(ns=(1000, 2000), exact_ns=(4000,)), "exact_ns must be a subset"),
    (lambda: ch.structured_p_sweep("laplacian", ps=(0, 1)), "ps must be integers >= 1"),
    (lambda: ch.structured_p_sweep("laplacian", ps=(255,)), "ps must be < n"),
    (lambda: ch.structured_p_sweep("laplacian", level=0.0), "level must lie in"),
    (lambda: ch.noise_slider_figure("yes"), "show_first_order must be a bool"),
    (lambda: ch.exact_synthetic_errors(ns=(5,)), "ns must be integers >= 11"),
    (lambda: ch.structured_experiment("laplacian", levels=(-0.1,)), "levels must be positive"),
    (lambda: ch.structured_experiment("laplacian", p=1000), "p must be <= n"),
    (lambda: ch.contour_picture(n=5, p=5), "p must be < n"),
    (lambda: ch.noise_figure(phi_deg=float("nan")), "phi_deg must lie in"),
    (lambda: ch.noise_figure(show_first_order="no"), "show_first_order must be a bool"),
    (lambda: ch.designer_figure(gap=0.0), "gap must be positive"),
]


@pytest.mark.parametrize("call, match", _BAD, ids=[m for _, m in _BAD])
def test_bad_input_raises_value_error(call, match):
    with pytest.raises(ValueError, match=match):
        call()


# ----------------------------------------------------------------- figures and explorers


def test_explorers_answer_fast_and_change_the_figure():
    for ex in (ch.EXPLORER_NOISE, ch.EXPLORER_SPECTRUM):
        lat = ex.latency_ms()
        assert lat["n"] >= 4
    a = ch.EXPLORER_NOISE.render(phi_deg=0)
    b = ch.EXPLORER_NOISE.render(phi_deg=90)
    assert not np.allclose(np.asarray(a.data[0].y, float), np.asarray(b.data[0].y, float))
    c = ch.EXPLORER_SPECTRUM.render(gap=0.01)
    d = ch.EXPLORER_SPECTRUM.render(gap=10.0)
    assert not np.allclose(np.nan_to_num(np.asarray(c.data[3].y, float)), np.nan_to_num(np.asarray(d.data[3].y, float)))


def test_static_slider_figures_have_frames():
    fig = ch.noise_slider_figure()
    assert len(fig.frames) == len(ch.PHI_VALUES)
    fig = ch.designer_slider_figure()
    assert len(fig.frames) == len(ch.GAP_VALUES)


def test_claim_figures_show_every_series():
    fig = ch.sqrt_n_figure(ch.sqrt_n_experiment((1000, 4000), (0,), exact_ns=(4000,)),
                           ch.exact_synthetic_errors((100,), (0,)))
    assert [len(t.x) for t in fig.data] == [3, 3, 2, 1, 1]
    fig = ch.structured_figure(("laplacian",), seeds=(0,))
    assert len(fig.data) == 2 and all(len(t.y) == len(ch.NOISE_LEVELS) for t in fig.data)
    fig = ch.noise_run_figure(n=40)
    assert len(fig.data) == 2 + len(ch.RUN_SHAPES)
