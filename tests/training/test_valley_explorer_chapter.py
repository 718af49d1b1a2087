"""Tests of chapter 19's experiments: the ripple runs, the large-batch proxy, the figures."""
import numpy as np
import pytest
import torch

from optbook.training import valley_explorer as ve
from optbook.training import valley_explorer_chapter as ch


def test_ripple_reference_run_and_determinism():
    runs = ch.ripple_pair()
    assert abs(runs["Adam"].x[0] - 4.085) < 0.01 and abs(runs["Adam"].fun - 0.552) < 1e-3
    assert abs(runs["E-Adam"].x[0] - 8.68) < 0.05 and abs(runs["E-Adam"].fun - 0.370) < 1e-3
    again = ch.ripple_pair()
    np.testing.assert_array_equal(again["E-Adam"].iterates, runs["E-Adam"].iterates)
    assert runs["E-Adam"].trace["x"][-1] == runs["E-Adam"].x[0]


def test_ripple_sweep_rows_equal_single_runs():
    """Each (alpha, beta2, seed) row of the batched sweep is the scipy-shaped single run."""
    sweep = ch.ripple_sweep((-80.0, 0.0), (0.95, 0.995), (3, 7))
    for i, alpha in enumerate((-80.0, 0.0)):
        for j, beta2 in enumerate((0.95, 0.995)):
            for k, seed in enumerate((3, 7)):
                r = ve.valley_run(ve.ripple, [ch.ripple_start(seed)], ve.ripple_grad, alpha=alpha,
                                  **{**ch.RIPPLE_SETTINGS, "beta2": beta2})
                assert abs(sweep["f"][i, j, k] - r.fun) < 1e-12
                assert abs(sweep["far"][i, j, k] - r.iterates.max()) < 1e-12


def test_the_card_setting_is_a_longer_momentum_in_disguise():
    """The confound the chapter reports: E-Adam at alpha = -80 ends where Adam with momentum
    0.995 ends (same ripple, loss equal to 1e-5), while Adam at 0.95 stalls in the first ripple."""
    e, a = ch.ripple_finals(-80.0, 0.95, (0, 1)), ch.ripple_finals(0.0, 0.995, (0, 1))
    np.testing.assert_allclose(e["f"], a["f"], atol=1e-5)
    assert np.all(ch.ripple_finals(0.0, 0.95, (0, 1))["far"] < ch.ripple_first_minima(2)[1])


def test_grid_paths_rows_equal_single_runs():
    run = ch.grid_paths("ripple", 0.99, 1.0, "Adam")
    i = int(np.flatnonzero(run["alphas"] == -80.0)[0])
    single = ch.ripple_pair()["E-Adam"].iterates[:, 0]
    np.testing.assert_allclose(run["paths"][i, :, 0], single, rtol=0, atol=1e-12)
    assert set(ch.grid_paths("ripple", 0.9)["alphas"]) == {-5.0, 0.0, 1.0}


def test_teacher_data_is_seeded_and_labels_follow_the_teacher():
    X, y = ch.teacher_data(500, label_noise=0.0, rng=3)
    X2, y2 = ch.teacher_data(500, label_noise=0.0, rng=3)
    assert np.array_equal(X, X2) and np.array_equal(y, y2) and set(np.unique(y)) <= {0, 1, 2, 3}
    _, yn = ch.teacher_data(500, label_noise=1.0, rng=3)  # every label redrawn: about 1/4 agree
    assert 0.1 < np.mean(yn == y) < 0.45


def test_proxy_is_deterministic_learns_and_leaves_the_global_rng_alone():
    before = torch.get_rng_state()
    a = ch.train_proxy.__wrapped__("ALTO", 4096, 0, 0.03, epochs=3)
    b = ch.train_proxy.__wrapped__("ALTO", 4096, 0, 0.03, epochs=3)
    assert torch.equal(torch.get_rng_state(), before)
    assert a == b and a["steps"] == 12 and a["test_acc"] > 40.0
    c = ch.train_proxy.__wrapped__("ALTO", 4096, 1, 0.03, epochs=3)
    assert c != a  # the seed matters


def test_small_batch_step_follows_the_square_root_rule():
    assert ch.small_batch_lr(0.03) == pytest.approx(0.03 / np.sqrt(ch.BATCH_LARGE / ch.BATCH_SMALL), rel=1e-12)


def test_control_of_the_proxy_is_lamb_itself():
    a = ch.train_proxy.__wrapped__("ALTO", 4096, 0, 0.03, alpha=0.0, epochs=2)
    b = ch.train_proxy.__wrapped__("Lamb", 4096, 0, 0.03, epochs=2)
    assert a == b


def test_bad_inputs_raise_value_errors():
    with pytest.raises(ValueError, match="method"):
        ch.train_proxy("SGD", 64, 0, 0.01)
    with pytest.raises(ValueError, match="batch_size"):
        ch.train_proxy("Lamb", 0, 0, 0.01)
    with pytest.raises(ValueError, match="batch_size"):
        ch.train_proxy("Lamb", 10 ** 6, 0, 0.01)
    with pytest.raises(ValueError, match="lr"):
        ch.train_proxy("Lamb", 64, 0, -0.01)
    with pytest.raises(ValueError, match="method"):
        ch.proxy_tuning("SGD")
    with pytest.raises(ValueError, match="lr_large"):
        ch.small_batch_lr(0.0)
    with pytest.raises(ValueError, match="label_noise"):
        ch.teacher_data(10, label_noise=1.5)
    with pytest.raises(ValueError, match="landscape"):
        ch.grid_paths("himmelblau")
    with pytest.raises(ValueError, match="alpha"):
        ch.phase_figure(alpha=-7.0)
    with pytest.raises(ValueError, match="hi"):
        ch.ripple_minima(2.0, 1.0)
    with pytest.raises(ValueError, match="seed"):
        ch.ripple_start(-1)


def test_figures_build():
    assert len(ch.valley_slider_figure("cardioid").frames) == len(ch.ALPHA_GRID)
    fig = ch.valley_figure("rosenbrock", alpha=-60.0, beta1=0.9)  # inadmissible: shown, not run
    assert "refused" in fig.layout.annotations[0].text
    assert len(ch.phase_slider_figure().frames) == len(ch.ALPHA_GRID)
