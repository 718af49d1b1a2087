"""Tests of chapter 04: shallow ReLU networks on weakly interacting data."""
import numpy as np
import pytest

from optbook.classical import relu_gradient_flow as rg
from optbook.core import Trace, fd_gradient


def small_problem(n=12, d=30, p=6, seed=0):
    gen = np.random.default_rng(seed)
    X, y = rg.make_weakly_interacting_data(n, d, rng=gen)
    a, W = rg.init_network(d, p, rng=gen)
    return X, y, a, W


# ------------------------------------------------------------------ the paper's rules


def test_width_rule_values_from_the_card():
    assert rg.width_rule(200, 0.05) == 29
    assert rg.width_rule(1000, 0.05) == 35
    # the union bound it encodes: n (3/4)^p <= eps at p = p(n, eps)
    for n in (10, 100, 1000, 10**6):
        p = rg.width_rule(n, 0.05)
        assert n * 0.75**p <= 0.05 < n * 0.75 ** (p - 2)


def test_epoch_budget_and_threshold():
    assert rg.epoch_budget(200, 29) == int(1.5 * np.sqrt(200 * 29) * np.log(200 * 29) / 4) + 1 == 248
    assert rg.epoch_budget(200, 29, lr=2.0) == 124
    assert rg.convergence_threshold(200, 29) == pytest.approx(29 / 400)


def test_data_shapes_norms_and_labels():
    X, y = rg.make_weakly_interacting_data(300, 50, rng=1)
    norms = np.linalg.norm(X, axis=1)
    assert X.shape == (300, 50) and y.shape == (300,)
    assert norms.min() >= 1 and norms.max() <= 2
    assert np.abs(y).min() >= 1 and np.abs(y).max() <= 2 and (y > 0).any() and (y < 0).any()
    Xo, _ = rg.make_orthogonal_data(20, 30, rng=1)
    G = Xo @ Xo.T
    assert np.allclose(G - np.diag(np.diag(G)), 0) and np.all(np.diag(G) >= 1) and np.all(np.diag(G) <= 4)


def test_correlation_knob_raises_pairwise_cosines():
    def mean_cos(c):
        X, _ = rg.make_weakly_interacting_data(100, 400, correlation=c, rng=3)
        U = X / np.linalg.norm(X, axis=1, keepdims=True)
        C = U @ U.T
        return np.mean(C[np.triu_indices(100, 1)])
    assert abs(mean_cos(0.0)) < 0.01
    assert mean_cos(0.5) == pytest.approx(0.5, abs=0.08)


def test_initialisation_has_output_weights_larger_than_hidden_norms():
    a, W = rg.init_network(400, 500, rng=2)
    assert np.all(np.abs(a) > np.linalg.norm(W, axis=1))
    assert np.all(np.abs(W) <= 1 / np.sqrt(400))
    assert 0.4 < np.mean(a > 0) < 0.6


def test_a_random_neuron_serves_a_point_with_probability_one_quarter():
    X, y = rg.make_weakly_interacting_data(200, 400, rng=4)
    a, W = rg.init_network(400, 200, rng=5)
    assert rg.coverage(a, W, X, y).mean() == pytest.approx(0.25, abs=0.02)


# ------------------------------------------------------------------ model, loss, gradients


def test_output_and_loss_match_a_direct_loop():
    X, y, a, W = small_problem()
    p, n = a.size, y.size
    h = np.array([sum(a[j] * max(W[j] @ X[i], 0) for j in range(p)) / p for i in range(n)])
    assert np.allclose(rg.network_output(a, W, X), h)
    loss, _, _ = rg.loss_and_gradients(a, W, X, y)
    assert loss == pytest.approx(p / (2 * n) * np.sum((y - h) ** 2))


def test_gradients_match_finite_differences():
    X, y, a, W = small_problem()
    p, d = W.shape
    theta = np.concatenate([a, W.ravel()])
    Z = X @ W.T
    assert np.min(np.abs(Z)) > 1e-4  # away from ReLU kinks, so central differences are exact enough

    def fun(th):
        return rg.loss_and_gradients(th[:p], th[p:].reshape(p, d), X, y)[0]

    _, ga, gW = rg.loss_and_gradients(a, W, X, y)
    g = np.concatenate([ga, gW.ravel()])
    fd = fd_gradient(fun, theta, h=1e-7)
    assert np.linalg.norm(g - fd) / np.linalg.norm(fd) <= 1e-6


def test_conservation_law_and_no_sign_change_with_small_steps():
    X, y = rg.make_weakly_interacting_data(200, 400, rng=7)
    a0, W0 = rg.init_network(400, 29, rng=8)
    res = rg.train_shallow_relu(X, y, a0, W0, lr=1e-3, maxiter=1000, tol=0.0)
    c0 = a0**2 - np.sum(W0**2, axis=1)
    c1 = res.a**2 - np.sum(res.W**2, axis=1)
    assert np.max(np.abs(c1 - c0)) <= 1e-3
    assert np.all(np.sign(res.a) == np.sign(a0))
    # and the weights did move, so the check is not vacuous
    assert np.max(np.abs(res.W - W0)) > 1e-3


def test_orthogonal_loss_is_non_increasing():
    X, y = rg.make_orthogonal_data(100, rng=9)
    a, W = rg.init_network(100, 27, rng=10)
    res = rg.train_shallow_relu(X, y, a, W, lr=0.1, maxiter=3000, tol=0.0)
    L = res.trace.objective
    assert np.all(np.diff(L) <= 1e-12 * L[:-1])
    assert L[-1] < 0.5 * L[0]


def test_energy_bounds_hold_along_orthogonal_runs():
    res = rg.orthogonal_run(50, 0)
    tr = res.trace
    n = 50
    ok = np.isfinite(tr["rate"])
    assert np.all(tr["rate"][ok] >= 2 * tr["energy_min"][ok] / n * (1 - 1e-9))
    assert np.all(tr["rate"][ok] <= 16 * tr["energy_max"][ok] / n * (1 + 1e-9))
    lo, hi = rg.rate_bounds(res.a, res.W, res.X)
    assert lo == pytest.approx(2 * tr["energy_min"][-1] / n, rel=1e-6)
    assert hi == pytest.approx(16 * tr["energy_max"][-1] / n, rel=1e-6)


def test_energies_match_definition():
    X, y, a, W = small_problem()
    E = np.array([np.mean([(W[j] @ X[i] > 0) * a[j] ** 2 for j in range(a.size)]) for i in range(y.size)])
    assert np.allclose(rg.energies(a, W, X), E)


# ------------------------------------------------------------------ training and baselines


def test_training_is_deterministic_under_a_seed():
    r1 = rg.train_shallow_relu(*small_problem(seed=3), maxiter=50, tol=0.0)
    r2 = rg.train_shallow_relu(*small_problem(seed=3), maxiter=50, tol=0.0)
    assert np.array_equal(r1.trace.objective, r2.trace.objective)


def test_well_initialised_run_converges_and_reports_it():
    X, y = rg.make_weakly_interacting_data(100, 200, rng=11)
    a, W, tries = rg.draw_well_initialized(X, y, 32, rng=12)
    assert rg.is_well_initialized(a, W, X, y) and tries >= 1
    res = rg.train_shallow_relu(X, y, a, W)
    assert res.converged and res.success
    assert res.trace.objective[-1] <= rg.convergence_threshold(100, 32)
    assert res.trace["served"][0] == 1.0


def test_random_features_stay_above_the_projection_floor():
    X, y = rg.make_weakly_interacting_data(200, 400, rng=13)
    a, W = rg.init_network(400, 29, rng=14)
    floor = rg.random_features_floor(a, W, X, y)
    res = rg.train_shallow_relu(X, y, a, W, maxiter=300, tol=0.0, train_hidden=False)
    assert np.all(res.trace.objective >= floor * (1 - 1e-9))
    assert np.array_equal(res.W, W)
    # and the floor is roughly (1 - p/n) of the initial loss, as the card's rank argument says
    assert floor / res.trace.objective[0] == pytest.approx(1 - 29 / 200, abs=0.08)


def test_linear_least_squares_interpolates_only_when_d_at_least_n():
    X, y = rg.make_weakly_interacting_data(40, 60, rng=15)
    assert rg.linear_least_squares(X, y)[1] < 1e-20
    X, y = rg.make_weakly_interacting_data(120, 20, rng=15)
    _, rss = rg.linear_least_squares(X, y)
    assert rss > 0.5 * np.sum(y**2)


def test_late_rate_recovers_a_known_exponential():
    tr = Trace("synthetic")
    for k in range(200):
        tr.record(objective=3.0 * np.exp(-0.07 * 2.0 * k), step_size=2.0)
    assert rg.late_rate(tr) == pytest.approx(0.07, rel=1e-9)


def test_late_rate_scales_like_one_over_n_on_orthogonal_data():
    rates = [rg.late_rate(rg.orthogonal_run(n, 0).trace) for n in (50, 200)]
    assert 2.0 <= rates[0] / rates[1] <= 5.5  # 1/n predicts 4, 1/sqrt(n) predicts 2


# ------------------------------------------------------------------ phase-transition toy


def test_toy_starts_at_the_target_loss_and_ends_at_zero():
    n, p = 1e8, 2
    t_star = rg.phase_transition_time(n, 1.0, p)
    L = rg.phase_transition_loss(np.array([0.0, 10 * t_star]), n, p=p)
    D2 = np.array([1.0, 4.0]) * n
    expected0 = np.sum((np.sqrt(D2) - 1 / p) ** 2 / (2 * n)) / p
    assert L[0] == pytest.approx(expected0)
    assert L[1] < 1e-10 * L[0]


def test_toy_loss_is_non_increasing_and_drops_near_t_star():
    n, p = 1e12, 2
    t_star = rg.phase_transition_time(n, 1.0, p)
    t = np.linspace(0, 2 * t_star, 2001)
    L = rg.phase_transition_loss(t, n, targets=(1.0,), p=p)
    assert np.all(np.diff(L) <= 1e-15)
    half = t[np.argmax(L <= 0.5 * L[0])]
    # solving (D - N/p)^2 = D^2/2 in closed form (N0 = 1): p D e^{-2 tau} = 1/(1 - 1/sqrt 2) - 1
    pD = p * np.sqrt(n)
    expected = 1 - np.log(1 / (1 - 1 / np.sqrt(2)) - 1) / np.log(pD)
    assert half / t_star == pytest.approx(expected, abs=2e-3)
    assert 0.9 < expected < 1.0


def test_toy_drop_width_shrinks_like_one_over_log_n():
    widths = np.array([rg.drop_width(10.0**k) for k in (4, 8, 16)])
    assert np.all(np.diff(widths) < 0)
    scaled = widths * np.log(10.0 ** np.array([4, 8, 16]))
    assert scaled.max() / scaled.min() < 1.6


# ------------------------------------------------------------------ explorers and bad input


def test_explorers_build_figures():
    for ex in (rg.EXPLORER_WIDTH, rg.EXPLORER_RATE, rg.EXPLORER_TOY):
        fig = ex.render()
        assert len(fig.data) >= 2


@pytest.mark.parametrize("call, name", [
    (lambda: rg.width_rule(0), "n"),
    (lambda: rg.width_rule(10, 1.5), "eps"),
    (lambda: rg.epoch_budget(10, 3, lr=0.0), "lr"),
    (lambda: rg.make_weakly_interacting_data(10, 5, correlation=1.0), "correlation"),
    (lambda: rg.make_weakly_interacting_data(10, 5, rng=-1), "rng"),
    (lambda: rg.make_orthogonal_data(10, 5), "d"),
    (lambda: rg.init_network(5, 0), "p"),
    (lambda: rg.network_output(np.ones(3), np.ones((2, 4)), np.ones((5, 4))), "W"),
    (lambda: rg.network_output(np.ones(2), np.ones((2, 4)), np.ones((5, 3))), "X"),
    (lambda: rg.loss_and_gradients(np.ones(2), np.ones((2, 4)), np.ones((5, 4)), np.ones(4)), "y"),
    (lambda: rg.loss_and_gradients(np.array([1.0, np.nan]), np.ones((2, 4)), np.ones((5, 4)), np.ones(5)), "a"),
    (lambda: rg.train_shallow_relu(*small_problem(), lr=-1.0), "lr"),
    (lambda: rg.train_shallow_relu(*small_problem(), maxiter=-1), "maxiter"),
    (lambda: rg.train_shallow_relu(*small_problem(), tol=np.inf), "tol"),
    (lambda: rg.late_rate([1.0, 0.5]), "trace"),
    (lambda: rg.phase_transition_loss(np.array([-1.0]), 100.0), "t"),
    (lambda: rg.phase_transition_loss(np.array([1.0]), 0.0), "n"),
    (lambda: rg.phase_transition_loss(np.array([1.0]), 10.0, targets=()), "targets"),
    (lambda: rg.draw_well_initialized(*small_problem(n=50)[:2], 1, rng=0, max_tries=2), "max_tries"),
])
def test_bad_input_raises_value_error_naming_the_argument(call, name):
    with pytest.raises(ValueError, match=name):
        call()


def test_training_restores_the_blas_thread_count():
    from optbook.core import threads

    if threads._BLAS_THREADS is None:
        pytest.skip("numpy's BLAS is not the bundled OpenBLAS")
    get = threads._BLAS_THREADS[0]
    before = int(get())
    rg.train_shallow_relu(*small_problem(), maxiter=3, tol=0.0)
    assert int(get()) == before


def test_a_diverging_step_size_is_reported_not_silent():
    res = rg.train_shallow_relu(*small_problem(), lr=1e4, maxiter=200, tol=0.0)
    assert not res.success and not res.converged
    assert "non-finite" in res.message
