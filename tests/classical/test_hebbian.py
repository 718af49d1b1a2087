"""Tests of chapter 05's methods: Hebbian STDP as noisy gradient descent on the simplex
(optbook.classical.hebbian; the chapter's experiments are tested in test_hebbian_chapter.py)."""
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import minimize

from optbook.classical import hebbian as h
from optbook.core import project_simplex, semilog_slope

P0 = h.STARTS[3]  # p(w) for uniform w and lam = (10, 7.5, 5)


def _tail_mean(res, tail=0.1):
    """Per replica, 1 - max p averaged over the last ``tail`` of the run (where it settles)."""
    it = res.trace.iteration
    return res.gap_history[it >= (1 - tail) * it[-1]].mean(axis=0)


def _simplex_points(d=3):
    return st.lists(st.floats(0.01, 1.0), min_size=d, max_size=d).map(lambda v: np.array(v) / np.sum(v))


# --------------------------------------------------------------------------- the STDP rule itself


def test_stdp_equals_the_weight_form_with_the_same_draws():
    """The log-space simplex implementation reproduces w <- w (1 + alpha (B + Z)) literally."""
    lam, w0, alpha, n, K = np.array([3.0, 2.0, 1.0, 0.5]), np.array([0.2, 1.0, 0.7, 2.0]), 0.2, 5, 60
    res = h.stdp(h.presynaptic_p(lam, w0), alpha=alpha, n_steps=K, n_replicas=n, keep_paths=n, rng=7)
    rng = np.random.default_rng(7)
    W = np.tile(w0, (n, 1))
    ref = [h.presynaptic_p(lam, W)]
    for _ in range(K):
        p = h.presynaptic_p(lam, W)
        idx = np.minimum((np.cumsum(p, axis=1) < rng.random(n)[:, None]).sum(axis=1), 3)
        B = np.eye(4)[idx]
        Z = rng.uniform(-1.0, 1.0, (4, n)).T
        W = W * (1 + alpha * (B + Z))
        ref.append(h.presynaptic_p(lam, W))
    np.testing.assert_allclose(res.paths, np.array(ref), rtol=1e-9, atol=1e-14)


def test_stdp_equals_the_normalised_p_update():
    """p(k+1) = p (1 + alpha(B+Z)) / <p, 1 + alpha(B+Z)> (the card's single-vector form), Bernoulli B."""
    alpha, K = 0.3, 40
    res = h.stdp(P0, alpha=alpha, n_steps=K, spikes="bernoulli", keep_paths=1, rng=3)
    rng = np.random.default_rng(3)
    p = P0.copy()
    for k in range(K):
        B = (rng.random((3, 1))[:, 0] < p).astype(float)
        Z = rng.uniform(-1.0, 1.0, (3, 1))[:, 0]
        f = 1 + alpha * (B + Z)
        p = p * f / (p @ f)
        np.testing.assert_allclose(res.paths[k + 1, 0], p, rtol=1e-10)


@pytest.mark.parametrize("spikes", h.SPIKES)
def test_iterates_stay_on_the_simplex(spikes):
    res = h.stdp(P0, alpha=0.45, noise_scale=2.0, n_steps=200, n_replicas=50, spikes=spikes,
                 keep_paths=50, rng=1)
    assert np.all(res.paths >= 0)
    np.testing.assert_allclose(res.paths.sum(axis=2), 1.0, atol=1e-12)
    np.testing.assert_allclose(np.exp(res.log_p).sum(axis=1), 1.0, atol=1e-12)


def test_scale_invariance_in_the_weights():
    lam, w = np.array([5.0, 4.0, 1.0]), np.array([0.3, 0.5, 0.9])
    a = h.stdp(h.presynaptic_p(lam, w), alpha=0.1, n_steps=300, n_replicas=4, keep_paths=4, rng=2)
    b = h.stdp(h.presynaptic_p(lam, 1e6 * w), alpha=0.1, n_steps=300, n_replicas=4, keep_paths=4, rng=2)
    np.testing.assert_allclose(a.paths, b.paths, rtol=1e-10, atol=1e-300)


def test_vertices_and_zero_coordinates_are_absorbing():
    res = h.stdp([0.0, 1.0, 0.0], alpha=0.5, n_steps=100, n_replicas=20, keep_paths=20, rng=0)
    assert np.all(res.paths[:, :, 1] == 1.0) and np.all(res.gap == 0.0)
    res = h.stdp([0.5, 0.5, 0.0], alpha=0.5, n_steps=100, n_replicas=20, keep_paths=20, rng=0)
    assert np.all(res.paths[:, :, 2] == 0.0)
    assert np.all(res.winner != 2)


@pytest.mark.parametrize("spikes", ["onehot", "bernoulli"])
def test_mean_drift_is_the_replicator_field(spikes):
    p, alpha, n = np.array([0.5, 0.3, 0.2]), 0.01, 100_000
    res = h.stdp(p, alpha=alpha, n_steps=1, n_replicas=n, spikes=spikes, rng=11)
    inc = res.x - p
    se = inc.std(axis=0) / np.sqrt(n)
    drift = alpha * h.replicator_field(p)
    assert np.all(np.abs(inc.mean(axis=0) - drift) <= 4 * se + 2 * alpha**2)
    assert np.all(np.abs(drift) > 10 * se)  # the test resolves the drift, so it can fail


def test_symmetric_inputs_win_equally_often():
    res = h.stdp(np.full(3, 1 / 3), alpha=0.1, n_steps=400, n_replicas=3000, rng=4)
    freq = np.bincount(res.winner, minlength=3) / 3000
    assert np.all(np.abs(freq - 1 / 3) <= 4 * np.sqrt(2 / 9 / 3000))


def test_same_seed_same_numbers():
    a = h.stdp(P0, alpha=0.05, n_steps=100, n_replicas=10, rng=9)
    b = h.stdp(P0, alpha=0.05, n_steps=100, n_replicas=10, rng=9)
    c = h.stdp(P0, alpha=0.05, n_steps=100, n_replicas=10, rng=10)
    np.testing.assert_array_equal(a.x, b.x)
    assert not np.array_equal(a.x, c.x)


@pytest.mark.parametrize("alpha", [0.01, 0.02, 0.05])
def test_stdp_converges_exponentially_at_rate_alpha(alpha):
    """1 - max p ~ C exp(-alpha k): the fitted slope over the second half is -alpha, at every alpha."""
    n_steps = int(30 / alpha)
    res = h.stdp(P0, alpha=alpha, n_steps=n_steps, n_replicas=300, record_every=5, rng=0)
    it, med = res.trace.iteration, res.trace["gap_median"]
    assert -1.15 <= semilog_slope(it[it >= n_steps / 2], med[it >= n_steps / 2]) / alpha <= -0.85
    assert res.success_rate >= 0.8


def test_exponentiated_gradient_agrees_to_first_order():
    kw = dict(n_steps=1, n_replicas=200, rng=5)
    for alpha in (1e-2, 1e-3):
        a = h.stdp(P0, alpha=alpha, **kw).x
        b = h.noisy_exponentiated_gradient(P0, alpha=alpha, **kw).x
        assert np.max(np.abs(a - b)) <= 2 * alpha**2


# --------------------------------------------------------------------------- baselines and geometry


@settings(max_examples=25, deadline=None)
@given(_simplex_points())
def test_replicator_decreases_the_loss(p0):
    res = h.replicator(p0, alpha=0.2, n_steps=60)
    assert np.all(np.diff(res.trace.objective) <= 1e-15)


@settings(max_examples=25, deadline=None)
@given(_simplex_points(4))
def test_field_is_minus_a_variance_along_the_gradient(p):
    """grad L . field = -Var_p(Gamma p) <= 0; the field is tangent to the simplex."""
    rng = np.random.default_rng(0)
    A = rng.random((4, 4))
    gamma = A + A.T
    field = h.replicator_field(p, gamma)
    gp = gamma @ p
    assert abs(field.sum()) <= 1e-14
    np.testing.assert_allclose(-gp @ field, -(p @ gp**2 - (p @ gp) ** 2), atol=1e-12)
    # the official code's gradientL with Gamma = I
    np.testing.assert_allclose(h.replicator_field(p), p * (p - p @ p), atol=1e-15)


def test_replicator_rate_near_the_vertex_is_log_one_plus_alpha():
    alpha = 0.05
    res = h.replicator(P0, alpha=alpha, n_steps=800)
    it = res.trace.iteration
    slope = semilog_slope(it[600:], res.trace["gap_median"][600:])
    assert slope == pytest.approx(-np.log1p(alpha), rel=1e-3)


def test_loss_values_and_minimisers():
    assert h.loss([1, 0, 0]) == -0.5
    assert h.loss(np.full(4, 0.25)) == pytest.approx(-0.125)
    np.testing.assert_allclose(h.loss(np.eye(3)), -0.5)
    gamma = np.array([[1.0, 0.5], [0.5, 1.0]])
    assert h.loss([0.5, 0.5], gamma) == pytest.approx(-0.375)


@settings(max_examples=30, deadline=None)
@given(st.lists(st.floats(-3, 3), min_size=4, max_size=4))
def test_projection_matches_a_qp_solver(y):
    y = np.array(y)
    p = h.project_simplex(y)
    ref = minimize(lambda x: 0.5 * np.sum((x - y) ** 2), np.full(4, 0.25), jac=lambda x: x - y,
                   bounds=[(0, None)] * 4, constraints=[{"type": "eq", "fun": lambda x: x.sum() - 1}],
                   method="SLSQP", options={"ftol": 1e-14, "maxiter": 200})
    np.testing.assert_allclose(p, ref.x, atol=1e-6)
    np.testing.assert_allclose(h.project_simplex(p), p, atol=1e-15)


def test_projected_gradient_without_noise_reaches_the_vertex_exactly():
    res = h.projected_sgd(P0, alpha=0.05, n_steps=200, n_replicas=3, noise_scale=0.0, rng=0)
    assert np.all(res.gap == 0.0) and np.all(res.winner == 0)


def test_projected_sgd_equals_its_formula_with_uniform_noise():
    """One noise law for every method: xi = noise_scale * U(-1, 1)^d, drawn as a (d, n) array."""
    alpha, sigma, K = 0.05, 0.7, 30
    res = h.projected_sgd(P0, alpha=alpha, noise_scale=sigma, n_steps=K, keep_paths=1, rng=4)
    rng = np.random.default_rng(4)
    p = P0.copy()
    for k in range(K):
        p = project_simplex(p + alpha * (p + sigma * rng.uniform(-1.0, 1.0, (3, 1))[:, 0]))
        np.testing.assert_allclose(res.paths[k + 1, 0], p, atol=1e-15)


def test_projected_sgd_with_step_decay_equals_its_formula():
    """alpha_k = alpha * decay ** max(0, k - decay_after), with the same draws as the fixed step."""
    alpha, sigma, K, r, after = 0.05, 1.0, 30, 0.8, 10
    res = h.projected_sgd(P0, alpha=alpha, noise_scale=sigma, decay=r, decay_after=after, n_steps=K,
                          keep_paths=1, rng=4)
    rng = np.random.default_rng(4)
    p = P0.copy()
    for k in range(K):
        a = alpha * r ** max(0, k - after)
        p = project_simplex(p + a * (p + sigma * rng.uniform(-1.0, 1.0, (3, 1))[:, 0]))
        np.testing.assert_allclose(res.paths[k + 1, 0], p, atol=1e-15)
    fixed = h.projected_sgd(P0, alpha=alpha, noise_scale=sigma, n_steps=after + 1, keep_paths=1, rng=4)
    np.testing.assert_array_equal(fixed.paths, res.paths[:after + 2])  # identical until the decay starts


def test_a_step_decay_removes_projected_sgds_floor():
    """Once at the corner, SGD's distance is proportional to the current step: a schedule that
    shrinks the step takes the floor down with it (the paper's contrast is with a fixed step)."""
    kw = dict(alpha=0.01, n_steps=3000, n_replicas=100, record_every=15, rng=2)
    fixed = np.median(_tail_mean(h.projected_sgd(P0, **kw)))
    decayed = np.median(_tail_mean(h.projected_sgd(P0, decay=0.995, decay_after=1000, **kw)))
    assert fixed > 1e-5 and decayed < 1e-3 * fixed
    with pytest.raises(ValueError, match="decay"):
        h.projected_sgd(P0, decay=[0.9, 1.1], n_replicas=2, n_steps=2)


def test_additive_noise_control_equals_its_formula():
    alpha, K = 0.05, 30
    res = h.hebbian_additive_noise(P0, alpha=alpha, n_steps=K, keep_paths=1, rng=6)
    rng = np.random.default_rng(6)
    p = P0.copy()
    for k in range(K):
        B = np.eye(3)[min(int((np.cumsum(p) < rng.random() * p.sum()).sum()), 2)]
        q = p * (1 + alpha * B) / (p @ (1 + alpha * B))
        p = project_simplex(q + alpha * rng.uniform(-1.0, 1.0, (3, 1))[:, 0])
        np.testing.assert_allclose(res.paths[k + 1, 0], p, atol=1e-14)


def test_projected_sgd_floor_is_proportional_to_alpha():
    """Euclidean noisy SGD hovers at a distance O(alpha) from the vertex: a noise floor."""
    floors = []
    for alpha in (0.005, 0.01, 0.02):
        res = h.projected_sgd(P0, alpha=alpha, n_steps=int(30 / alpha), n_replicas=200, record_every=10, rng=0)
        floors.append(np.median(_tail_mean(res)))
    assert 1e-4 <= floors[1] <= 1e-2
    assert 1.5 <= floors[1] / floors[0] <= 2.7 and 1.5 <= floors[2] / floors[1] <= 2.7


def test_a_vertex_absorbs_bounded_noise_up_to_half_the_papers_level():
    """From e1 a projected step returns to e1 unless noise_scale (Z_i - Z_1) > 1, and Z_i - Z_1 <= 2."""
    kw = dict(alpha=0.02, n_steps=500, n_replicas=100, record_every=1, rng=0)
    assert np.all(h.projected_sgd([1.0, 0.0, 0.0], noise_scale=0.5, **kw).gap_history == 0.0)
    assert np.any(h.projected_sgd([1.0, 0.0, 0.0], noise_scale=0.6, **kw).gap_history > 0.0)


def test_stdp_has_no_floor_where_the_additive_control_does():
    kw = dict(alpha=0.01, n_steps=3000, n_replicas=100, record_every=15, rng=1)
    mult = np.median(_tail_mean(h.stdp(P0, **kw)))
    add = np.median(_tail_mean(h.hebbian_additive_noise(P0, **kw)))
    assert mult < 1e-9 and add > 1e-3


def test_one_learning_rate_per_replica_is_the_same_run():
    a = h.stdp(P0, alpha=0.05, n_steps=50, n_replicas=4, rng=3)
    b = h.stdp(P0, alpha=np.full(4, 0.05), n_steps=50, n_replicas=4, rng=3)
    np.testing.assert_array_equal(a.x, b.x)
    c = h.projected_sgd(P0, alpha=[0.01, 0.02], n_steps=20, n_replicas=2, rng=3)
    assert np.isnan(c.trace.step_size).all() and c.trace.meta["alpha"] == (0.01, 0.02)
    with pytest.raises(ValueError, match="alpha"):
        h.stdp(P0, alpha=[0.1, 0.2], n_replicas=3)
    with pytest.raises(ValueError, match="alpha"):
        h.stdp(P0, alpha=[0.1, 1.2], n_replicas=2)


def test_distance_to_the_target_vertex_is_accurate_below_machine_epsilon():
    res = h.stdp(P0, alpha=0.05, n_steps=1200, n_replicas=20, rng=2, target=0)
    won = res.winner == 0
    assert np.all(res.target_gap[won] > 0) and np.all(res.target_gap[won] < 1e-20)
    np.testing.assert_allclose(res.target_gap[won], np.exp(res.log_p[won, 1:]).sum(axis=1), rtol=1e-9)
    np.testing.assert_allclose(res.target_gap[~won], 1 - res.x[~won, 0], rtol=1e-9)


def test_multi_output_learns_the_inputs_in_order():
    out = h.stdp_multi_output(h.LAMBDA, [0.01, 0.0075, 0.005], n_steps=4000, rng=0)
    final = out["p"][-1]
    np.testing.assert_array_equal(final.argmax(axis=1), [0, 1, 2])
    assert np.all(final.max(axis=1) > 0.99)


# --------------------------------------------------------------------------- bad input


@pytest.mark.parametrize("kwargs, word", [
    (dict(p0=[0.5, 0.6, 0.1]), "p0"),
    (dict(p0=[np.nan, 0.5, 0.5]), "p0"),
    (dict(p0=[1.0]), "p0"),
    (dict(p0=np.ones((2, 2, 2)) / 2), "p0"),
    (dict(p0=[-0.1, 0.6, 0.5]), "p0"),
    (dict(alpha=0.0), "alpha"),
    (dict(alpha=1.0), "alpha"),
    (dict(alpha=float("nan")), "alpha"),
    (dict(alpha=0.6, noise_scale=2.0), r"alpha \* noise_scale"),
    (dict(noise_scale=-1.0), "noise_scale"),
    (dict(spikes="poisson"), "spikes"),
    (dict(n_steps=-1), "n_steps"),
    (dict(n_replicas=0), "n_replicas"),
    (dict(record_every=0), "record_every"),
    (dict(keep_paths=5, n_replicas=2), "keep_paths"),
    (dict(target=3), "target"),
    (dict(p0=np.tile(P0, (3, 1)), n_replicas=2), "n_replicas"),
])
def test_stdp_rejects_bad_input(kwargs, word):
    kw = dict(p0=P0, n_steps=2)
    kw.update(kwargs)
    with pytest.raises(ValueError, match=word):
        h.stdp(kw.pop("p0"), **kw)


def test_baselines_and_helpers_reject_bad_input():
    with pytest.raises(ValueError, match="gamma"):
        h.replicator(P0, gamma=[[1, 2, 0], [0, 1, 0], [0, 0, 1]])
    with pytest.raises(ValueError, match="gamma"):
        h.replicator(P0, gamma=-np.eye(3))
    with pytest.raises(ValueError, match="lam"):
        h.presynaptic_p([1.0, -1.0], [1.0, 1.0])
    with pytest.raises(ValueError, match="w"):
        h.presynaptic_p([1.0, 2.0], [0.0, 0.0])
    with pytest.raises(ValueError, match="p"):
        h.replicator_field([0.2, 0.2])
    with pytest.raises(ValueError, match="alphas"):
        h.stdp_multi_output(h.LAMBDA, [0.6, 0.1])


def test_importing_the_methods_does_not_import_plotly():
    code = "import sys, optbook.classical.hebbian; print('plotly' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_replicator_with_correlated_inputs_decreases_its_own_loss():
    gamma = np.array([[1.0, 0.6, 0.0], [0.6, 1.0, 0.0], [0.0, 0.0, 1.0]])
    res = h.replicator([0.3, 0.3, 0.4], alpha=0.1, n_steps=300, gamma=gamma)
    assert np.all(np.diff(res.trace.objective) <= 1e-15)
    assert res.fun == pytest.approx(h.loss(res.x[0], gamma))
