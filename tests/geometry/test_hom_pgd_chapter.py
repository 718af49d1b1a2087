"""Chapter 10's experiments: the three geometries, the reference solver, the growth exponent, the
tuning grids, the figures and the live explorers."""
import time

import cvxpy as cp
import numpy as np
import pytest

from optbook.geometry import hom_pgd_chapter as ch


@pytest.mark.parametrize("geometry", ch.GEOMETRIES)
def test_instances_put_x_star_where_they_say(geometry):
    p = ch.instance(geometry, 30, 0)
    assert p.kkt <= 1e-9 and p.K.max_violation(p.x_star) <= 1e-10
    assert p.gap0 > 0 and p.K.max_violation(p.x_init) < 0
    expected = {"interior": (0, 0), "facet": (1, 1), "corner": (5, 10 ** 6)}[geometry]
    assert expected[0] <= p.active <= expected[1]
    # x* lies outside the inscribed ball, so the control (the ball's linear map) cannot reach it.
    assert np.linalg.norm(p.x_star - p.K.x0) > 1.1 * ch.inscribed_radius(p.K)


def test_quadratic_reference_matches_cvxpy():
    p = ch.instance("corner", 15, 3)
    M, h = p.K.polytope()
    x = cp.Variable(15)
    cp.Problem(cp.Minimize(0.5 * cp.quad_form(x - p.y, cp.psd_wrap(p.Q))), [M @ x <= h]).solve(solver=cp.CLARABEL)
    assert np.allclose(p.x_star, x.value, atol=1e-6)
    assert p.f_star <= p.fun(x.value) + 1e-10  # ours is at least as good as the interior-point answer


def test_quadratic_metric_and_inscribed_ball():
    Q = ch.quadratic_metric(8, 100.0, rng=1)
    ev = np.linalg.eigvalsh(Q)
    assert ev.max() == pytest.approx(1.0) and ev.max() / ev.min() == pytest.approx(100.0)
    K = ch.instance("facet", 20, 1).K
    ball = ch.inscribed_ball(K)
    S = np.random.default_rng(0).standard_normal((50, 20))
    S /= np.linalg.norm(S, axis=1, keepdims=True)
    assert K.constraint_values(ball.psi(S)).max() <= 1e-12  # the ball's boundary lies in K


def test_growth_exponent_separates_smooth_minima_from_the_corner():
    assert ch.growth_exponent(ch.instance("interior", 30, 0)) == pytest.approx(2.0, abs=0.05)
    assert ch.growth_exponent(ch.instance("facet", 30, 0)) == pytest.approx(2.0, abs=0.05)
    assert ch.growth_exponent(ch.instance("corner", 30, 0)) == pytest.approx(1.0, abs=0.1)


def test_ratio_and_rate_helpers():
    assert ch._ratio(5.0, 1.0) == 5.0
    assert ch._ratio(5.0, np.inf) == 0.0 and ch._ratio(np.inf, np.inf) == 0.0  # the method never got there
    assert ch._ratio(np.inf, 1.0) == np.inf
    res = ch.run_hom("interior", 30, 0, 0.1, 0.9, rel_tol=1e-8, maxiter=1500)
    p = ch.instance("interior", 30, 0)
    assert ch.rate_ratio(res, p.gap0) <= 2.5
    assert ch.iterations_to(res, p.gap0, 1e-8) == res.nit
    assert ch.time_to(res, p.gap0, 1e-8) == pytest.approx(res.nit * ch.seconds_per_iteration(res))


def test_tuning_grids_have_the_same_size_and_held_out_seeds():
    assert len(ch.SPEED_HOM_GRID["eta"]) * len(ch.SPEED_HOM_GRID["momentum"]) == \
        len(ch.SPEED_FW_GRID["variant"]) * len(ch.SPEED_FW_GRID["step"])
    assert set(ch.TUNING_SEEDS).isdisjoint(ch.CLAIM_SEEDS)
    tuning = ch.rate_tuning(30, (100,), 800)
    assert tuning.size == 6 and tuning.seeds == (100,)
    assert np.isnan(tuning.scores).any() and np.isfinite(tuning.best_score)  # a diverged setting ranks last


def test_figures_build():
    assert len(ch.warp_slider_figure().frames) == len(ch.WARP_CENTRES)
    assert len(ch.twin_slider_figure().frames) == len(ch.TWIN_ETAS)
    assert len(ch.growth_figure(20).data) == 3
    cost = ch.cost_per_iteration((10, 20), repeats=1)
    assert len(ch.cost_figure(cost).data) == 3 and cost["Hom-PGD iteration"].shape == (2,)
    runs = {"a": ch.run_hom("facet", 15, 0, 3.0, 0.0, maxiter=50)}
    fig = ch.gap_figure(runs, ch.instance("facet", 15, 0).gap0, x="time", target=1e-6)
    assert fig.layout.xaxis.type == "log" and len(fig.data) == 2  # the run and the target line
    with pytest.raises(ValueError, match="x must be"):
        ch.gap_figure(runs, 1.0, x="seconds")


@pytest.mark.parametrize("explorer", [ch.EXPLORER_WARP, ch.EXPLORER_TWIN], ids=lambda e: e.name)
def test_live_explorers_answer_the_first_move_fast_and_every_corner_of_their_controls(explorer):
    for fn in (ch.warp_traces, ch.twin_runs, ch._twin_landscape, ch._twin_pgd, ch._live_layout):
        fn.cache_clear()
    t0 = time.perf_counter()
    explorer.render()
    assert time.perf_counter() - t0 < 1.0  # nothing is precomputed on the first call
    for values in ({k: c.values[0] for k, c in explorer.controls.items()},
                   {k: c.values[-1] for k, c in explorer.controls.items()}):
        assert len(explorer.render(**values).data) > 0


def test_bad_input():
    with pytest.raises(ValueError, match="geometry"):
        ch.instance("vertex", 10, 0)
    with pytest.raises(ValueError, match="n must be"):
        ch.instance("facet", 1, 0)
    with pytest.raises(ValueError, match="seed"):
        ch.instance("facet", 10, -1)
    with pytest.raises(ValueError, match="kappa"):
        ch.quadratic_metric(4, 0.5)
    with pytest.raises(ValueError, match="map_"):
        ch.run_hom("facet", 10, 0, 1.0, map_="sphere")
    with pytest.raises(ValueError, match="rel_tol"):
        ch.run_hom("facet", 10, 0, 1.0, rel_tol=np.nan)
    with pytest.raises(ValueError, match="rel_tol"):
        ch.run_fw("facet", 10, 0, "away", "line-search", rel_tol=0.0)
    with pytest.raises(ValueError, match="rel must be"):
        ch.iterations_to(ch.run_hom("facet", 10, 0, 1.0, maxiter=5), 1.0, -1.0)
    with pytest.raises(ValueError, match="n_dirs"):
        ch.growth_exponent(ch.instance("facet", 10, 0), n_dirs=0)
    with pytest.raises(ValueError, match="n_values"):
        ch.cost_per_iteration((10,))
    with pytest.raises(ValueError, match="repeats"):
        ch.cost_per_iteration((10, 20), repeats=0)
    with pytest.raises(ValueError, match="sides"):
        ch.regular_polygon(2)
    with pytest.raises(ValueError, match="eta"):
        ch.twin_runs(-0.1)
