"""Tests of chapter 15's methods: Jordan's gradient estimator (simulated), the emulated noisy oracle
(cost model), the classical zeroth-order baselines, mirror descent / dual averaging / mirror prox,
and games. The chapter's experiments are tested in test_quantum_zo_chapter.py."""
import numpy as np
import pytest
from scipy.optimize import linprog

from optbook.geometry import quantum_zo as q


def linear(g):
    g = np.asarray(g, float)
    return lambda X: np.atleast_2d(X) @ g + 0.7


H = np.array([[2.0, 0.5], [0.5, 1.0]])
X0 = np.array([0.3, -0.2])
G0 = np.array([0.7, -0.45])


def quadratic(X):
    X = np.atleast_2d(X)
    c = G0 - H @ X0
    return 0.5 * np.einsum("ni,ij,nj->n", X, H, X) + X @ c


# --- Jordan's algorithm -----------------------------------------------------------------------

@pytest.mark.parametrize("d,n_bits", [(1, 6), (2, 4), (3, 3)])
def test_probabilities_sum_to_one(d, n_bits):
    rng = np.random.default_rng(d)
    f = lambda X: np.sin(X).sum(axis=1) + 0.3 * (X ** 2).sum(axis=1)
    for draws in (3, None):
        P = q.jordan_distribution(f, rng.standard_normal(d), m=4.0, ell=0.05, n_bits=n_bits, noise=0.01,
                                  noise_draws=draws, rng=0, vectorized=True)
        assert P.shape == (2 ** n_bits,) * d
        assert abs(P.sum() - 1) < 1e-12 and P.min() >= 0


def test_exact_for_linear_function_on_grid():
    # N g / m integers: the output is deterministic and exact, for either sign.
    m, n_bits = 4.0, 5
    g = np.array([3, -7]) * m / 32
    P = q.jordan_distribution(linear(g), np.zeros(2), m=m, ell=1e-3, n_bits=n_bits, vectorized=True)
    assert P.max() == pytest.approx(1.0, abs=1e-9)
    res = q.jordan_gradient(linear(g), np.array([0.2, 1.0]), m=m, ell=1e-3, n_bits=n_bits,
                            repetitions=5, rng=0, vectorized=True)
    np.testing.assert_allclose(res.samples, np.tile(g, (5, 1)), atol=1e-12)
    assert res.queries == 5


def test_scalar_oracle_matches_vectorised():
    f_vec = lambda X: (X ** 2).sum(axis=1) + X[:, 0]
    f_scalar = lambda x: float(x @ x + x[0])
    a = q.jordan_distribution(f_vec, np.array([0.1, -0.3]), m=4, ell=0.01, n_bits=4, vectorized=True)
    b = q.jordan_distribution(f_scalar, np.array([0.1, -0.3]), m=4, ell=0.01, n_bits=4)
    np.testing.assert_allclose(a, b, atol=1e-12)


def test_signed_index_and_wrap_around():
    n = 8
    np.testing.assert_array_equal(q.signed_index(np.arange(n), n), [0, 1, 2, 3, -4, -3, -2, -1])
    # A gradient of exactly m/2 sits at j = N/2 and is read as -m/2: the wrap-around.
    m = 4.0
    P = q.jordan_distribution(linear([m / 2]), np.zeros(1), m=m, ell=1e-3, n_bits=3, vectorized=True)
    assert q.sample_jordan(P, 3, m, rng=0)[0, 0] == pytest.approx(-m / 2)
    # Just below m/2 it is still read correctly.
    P = q.jordan_distribution(linear([m / 2 - m / 8]), np.zeros(1), m=m, ell=1e-3, n_bits=3, vectorized=True)
    assert np.argmax(np.fft.fftshift(P)) - 4 == 3


def test_one_cell_probability_of_linear_function_is_at_least_8_over_pi2():
    m, n = 4.0, 32
    for frac in (0.0, 0.25, 0.5):
        g = (5 + frac) * m / n
        P = q.jordan_distribution(linear([g]), np.zeros(1), m=m, ell=1e-3, n_bits=5, vectorized=True)
        assert P[5] + P[6] >= q.P_ONE_CELL - 1e-9
    # the bound is attained (to O(1/N^2)) half-way between two grid values
    assert P[5] + P[6] == pytest.approx(q.P_ONE_CELL, abs=2e-3)


def test_sign_convention_recovers_gradient_direction():
    res = q.jordan_gradient(quadratic, X0, m=4.0, ell=1e-3, n_bits=6, repetitions=7, rng=3, vectorized=True)
    assert np.all(np.abs(res.x - G0) <= 2 * 4.0 / 64)


def test_noisy_distribution_is_the_coherent_mixture():
    # Averaged over Gaussian oracle noise, P = exp(-s^2) P_clean + (1 - exp(-s^2)) uniform, exactly;
    # the Monte Carlo average over noise draws must converge to it.
    m, ell, n_bits = 4.0, 0.01, 4
    sigma = 0.15 * m * ell / 2 ** n_bits            # s = 2 pi 0.15 = 0.94 rad
    s = q.phase_noise(sigma, m, ell, n_bits)
    assert s == pytest.approx(2 * np.pi * 0.15)
    clean = q.jordan_distribution(quadratic, X0, m=m, ell=ell, n_bits=n_bits, vectorized=True)
    exact = q.jordan_distribution(quadratic, X0, m=m, ell=ell, n_bits=n_bits, noise=sigma, vectorized=True)
    np.testing.assert_allclose(exact, np.exp(-s * s) * clean + (1 - np.exp(-s * s)) / clean.size, atol=1e-15)
    mc = q.jordan_distribution(quadratic, X0, m=m, ell=ell, n_bits=n_bits, noise=sigma, noise_draws=4000,
                               rng=1, vectorized=True)
    assert np.max(np.abs(mc - exact)) < 0.01
    assert np.max(np.abs(mc - clean)) > 0.2        # and the noise is not negligible


def test_random_shift_gives_a_subgradient_of_abs():
    f = lambda X: np.abs(X).sum(axis=1)
    res = q.jordan_gradient(f, np.array([0.5, -0.5]), m=4.0, ell=1e-3, n_bits=5, repetitions=5,
                            shift_radius=0.1, rng=0, vectorized=True)
    np.testing.assert_allclose(res.x, [1.0, -1.0], atol=2 * 4.0 / 32)


def test_jordan_is_deterministic_under_a_seed():
    a = q.jordan_gradient(quadratic, X0, m=4, ell=0.2, n_bits=5, repetitions=3, noise=0.002, rng=7, vectorized=True)
    b = q.jordan_gradient(quadratic, X0, m=4, ell=0.2, n_bits=5, repetitions=3, noise=0.002, rng=7, vectorized=True)
    np.testing.assert_array_equal(a.samples, b.samples)


# --- the cost model --------------------------------------------------------------------------------

def test_median_repetitions_is_minimal_and_logarithmic():
    from scipy.stats import binom
    for d in (1, 4, 128):
        r = q.median_repetitions(d, 0.01)
        assert r % 2 == 1 and d * binom.cdf((r - 1) // 2, r, q.P_ONE_CELL) <= 0.01
        assert r == 1 or d * binom.cdf((r - 3) // 2, r - 2, q.P_ONE_CELL) > 0.01
    rs = [q.median_repetitions(2 ** k, 0.01) for k in range(2, 12)]
    assert all(b >= a for a, b in zip(rs, rs[1:])) and rs[-1] / rs[0] < 3
    # a noisier shot needs more repetitions
    assert q.median_repetitions(64, 0.01, 0.65) > q.median_repetitions(64, 0.01, 0.8)


def test_shot_distribution_is_the_simulated_circuit_for_a_linear_function():
    # d = 2: the product of the per-register Fejer distributions equals the state-vector simulation.
    m, n_bits = 2.0, 4
    g = np.array([0.337, -0.71])
    P = q.jordan_distribution(linear(g), np.array([0.1, 0.2]), m=m, ell=1e-2, n_bits=n_bits, vectorized=True)
    rows = q.shot_distribution(2 ** n_bits * g / m, n_bits)
    np.testing.assert_allclose(np.outer(rows[0], rows[1]), P, atol=1e-12)
    np.testing.assert_allclose(rows.sum(axis=1), 1.0, atol=1e-12)


def test_one_cell_probability_is_the_worst_case_over_offsets():
    n_bits = 5
    n = 2 ** n_bits
    fracs = np.linspace(0, 1, 41)
    for s in (0.0, 0.5, 1.2):
        c = np.exp(-s * s)
        worst = min(c * q.shot_distribution(np.array([3.0 + f]), n_bits)[0][[3, 4]].sum() + (1 - c) * 2 / n
                    for f in fracs)
        assert q.one_cell_probability(n_bits, s) <= worst + 1e-12
        assert q.one_cell_probability(n_bits, s) == pytest.approx(worst, abs=3e-3)


@pytest.mark.parametrize("sigma", [0.0, 0.02])
def test_emulated_oracle_draws_from_the_noisy_shot_distribution(sigma):
    # One repetition: the estimate is a single shot; its empirical law must match
    # exp(-s^2) Fejer + (1 - exp(-s^2)) uniform, coordinate by coordinate.
    g = np.array([0.31, -0.77, 0.0, 0.449])
    m, n_bits, ell = 2.0, 4, 0.01
    orc = q.EmulatedJordanOracle(lambda x: g, 4, m=m, n_bits=n_bits, sigma=sigma, ell=ell, repetitions=1, rng=0)
    shots = np.array([orc(np.zeros(4)) for _ in range(8000)])
    c = np.exp(-q.phase_noise(sigma, m, ell, n_bits) ** 2) if sigma else 1.0
    assert sigma == 0 or c < 0.8
    expected = c * q.shot_distribution(16 * g / m, n_bits) + (1 - c) / 16
    for i in range(4):
        j = np.round(shots[:, i] * 16 / m).astype(int) % 16
        emp = np.bincount(j, minlength=16) / len(j)
        assert np.max(np.abs(emp - expected[i])) < 0.02


def test_emulated_oracle_median_is_within_one_cell_and_counts_queries():
    g = np.linspace(-0.9, 0.9, 50)
    orc = q.EmulatedJordanOracle(lambda x: g, 50, m=2.0, n_bits=6, rng=0)
    assert orc.per_call == q.median_repetitions(50, 0.01)
    ok = [np.max(np.abs(orc(np.zeros(50)) - g)) <= orc.resolution + 1e-15 for _ in range(200)]
    assert np.mean(ok) >= 0.97                      # fails with probability <= delta = 0.01 per call
    assert orc.queries == 200 * orc.per_call and orc.calls == 200
    with pytest.raises(ValueError, match="m/2"):
        q.EmulatedJordanOracle(lambda x: 2 * g, 50, m=2.0)(np.zeros(50))


def test_emulated_oracle_refuses_a_resolution_the_noise_cannot_support():
    g = lambda x: np.zeros(8)
    ok = q.EmulatedJordanOracle(g, 8, m=2.0, n_bits=6, sigma=2.0 * 0.01 / 1600, ell=0.01)
    assert ok.p_cell > 0.5 and ok.per_call > q.median_repetitions(8, 0.01)   # noise costs repetitions
    with pytest.raises(ValueError, match="sigma"):
        q.EmulatedJordanOracle(g, 8, m=2.0, n_bits=8, sigma=2.0 * 0.01 / 1600, ell=0.01)
    forced = q.EmulatedJordanOracle(g, 8, m=2.0, n_bits=16, sigma=2.0 * 0.01 / 1600, ell=0.01, repetitions=31, rng=0)
    assert forced.coherence == 0.0 and np.max(np.abs(forced(np.zeros(8)))) > 10 * forced.resolution


# --- classical estimators ------------------------------------------------------------------------

def test_gaussian_smoothing_is_unbiased_on_a_quadratic():
    rng = np.random.default_rng(0)
    A = np.array([[3.0, 1.0, 0.0], [1.0, 2.0, 0.5], [0.0, 0.5, 1.0]])
    f = lambda x: 0.5 * x @ A @ x + x[0]
    x = np.array([0.3, -0.1, 0.2])
    true = A @ x + np.array([1.0, 0, 0])
    mu, n = 0.05, 100_000
    U = rng.standard_normal((n, 3))
    vals = 0.5 * np.einsum("ni,ij,nj->n", x + mu * U, A, x + mu * U) + (x + mu * U)[:, 0]
    G = ((vals - f(x)) / mu)[:, None] * U
    se = G.std(axis=0) / np.sqrt(n)
    assert np.all(np.abs(G.mean(axis=0) - true) < 4 * se)
    # the library's estimator draws the same u from the same seed
    u = np.random.default_rng(1).standard_normal(3)
    np.testing.assert_allclose(q.gaussian_smoothing_gradient(f, x, mu, rng=1), (f(x + mu * u) - f(x)) / mu * u)


def test_central_differences_exact_on_quadratic():
    A = np.array([[2.0, 0.3], [0.3, 1.0]])
    f = lambda x: 0.5 * x @ A @ x - x[1]
    x = np.array([1.5, -2.0])
    np.testing.assert_allclose(q.coordinate_fd_gradient(f, x, 0.1), A @ x - [0, 1], atol=1e-12)


@pytest.mark.parametrize("estimator,per_step", [("gaussian", lambda d: 2), ("coordinate", lambda d: 2 * d)])
def test_query_counter_equals_function_calls(estimator, per_step):
    prob = q.L1Regression(6, rng=0)
    calls = []
    f = lambda x: calls.append(1) or prob.fun(x)
    res = q.zo_gradient_descent(f, np.zeros(6), estimator=estimator, step=0.1, maxiter=7, radius=2.0, rng=0)
    # the trace's f(x_avg) and f(x_last) recordings are 1 + 2 * 7 calls outside the counter
    assert res.queries == 7 * per_step(6) == len(calls) - (1 + 2 * 7)


# --- outer loops ---------------------------------------------------------------------------------

def test_mirror_descent_on_simplex_stays_feasible():
    rng = np.random.default_rng(2)
    c = rng.standard_normal(5)
    seen = []

    def jac(x):
        seen.append(x.copy())
        return c + 0.1 * x

    res = q.mirror_descent(lambda x: c @ x + 0.05 * x @ x, np.full(5, 0.2), jac, geometry="simplex",
                           step=1.0, maxiter=200)
    X = np.array(seen + [res.x])
    assert X.min() >= 0 and np.max(np.abs(X.sum(axis=1) - 1)) < 1e-12
    assert np.argmax(res.x) == np.argmin(c)


def test_projected_subgradient_meets_the_rate_bound():
    prob = q.L1Regression(10, rng=1)
    R, G, K = 2 * prob.radius, np.linalg.norm(prob.B, 2) / np.sqrt(prob.n), 400
    res = q.mirror_descent(prob.fun, np.zeros(10), prob.jac, step=R / G, decay="sqrt", maxiter=K,
                           radius=prob.radius)
    assert res.fun - prob.f_star <= R * G / np.sqrt(K) * (1 + np.log(K))
    assert res.fun - prob.f_star >= -1e-9


def test_projection_keeps_iterates_in_the_ball():
    seen = []
    jac = lambda x: seen.append(x.copy()) or np.array([-10.0, 5.0])
    q.mirror_descent(lambda x: 0.0, np.zeros(2), jac, step=1.0, maxiter=20, radius=0.5)
    norms = np.linalg.norm(seen, axis=1)
    assert norms.max() <= 0.5 + 1e-12 and norms[-1] == pytest.approx(0.5)


@pytest.mark.parametrize("method", [q.mirror_descent, q.dual_averaging, q.mirror_prox])
def test_outer_loops_converge_on_a_smooth_problem(method):
    xs = np.array([0.3, -0.4])
    res = method(lambda x: float((x - xs) @ (x - xs)), np.zeros(2), lambda x: 2 * (x - xs), step=0.3, decay="constant",
                 maxiter=3000, radius=1.0, f_star=0.0, tol=1e-3)
    assert res.success and np.linalg.norm(res.x - xs) < 0.05


def test_l1_reference_matches_the_primal_lp():
    # f* from the LP dual equals the primal LP min (1/n) sum t, -t <= Bx - c <= t.
    prob = q.L1Regression(7, rng=5)
    n, d = prob.n, prob.d
    A_ub = np.block([[prob.B, -np.eye(n)], [-prob.B, -np.eye(n)]])
    res = linprog(np.r_[np.zeros(d), np.ones(n) / n], A_ub=A_ub, b_ub=np.r_[prob.c, -prob.c],
                  bounds=[(None, None)] * d + [(0, None)] * n, method="highs")
    assert prob.f_star == pytest.approx(res.fun, abs=1e-9)
    assert prob.fun(prob.x_star) == pytest.approx(prob.f_star, abs=1e-12)


def test_l1_reference_matches_scipy_minimize():
    from scipy.optimize import minimize
    prob = q.L1Regression(5, rng=3)
    res = minimize(prob.fun, prob.x_true, method="Powell", options={"xtol": 1e-10, "ftol": 1e-12, "maxiter": 20000})
    assert prob.f_star <= res.fun + 1e-9 and prob.f_star >= res.fun - 1e-3

# --- games ---------------------------------------------------------------------------------------

def test_duality_gap_rejects_bad_input():
    A = q.rps_game(0.3)
    x = np.full(3, 1 / 3)
    with pytest.raises(ValueError, match="x"):
        q.duality_gap(A, np.array([np.nan, 0.5, 0.5]), x)
    with pytest.raises(ValueError, match="y"):
        q.duality_gap(A, x, np.ones(4) / 4)
    with pytest.raises(ValueError, match="A"):
        q.duality_gap(np.full((3, 3), np.inf), x, x)


@pytest.mark.parametrize("method,tol", [("mwu", 0.03), ("mirror_prox", 1e-3)])
def test_game_value_and_gap(method, tol):
    A = q.rps_game(0.3)
    v, x_star, y_star = q.game_value(A)
    assert q.duality_gap(A, x_star, y_star) < 1e-8
    res = q.game_dynamics(A, method=method, step=0.1, maxiter=3000)
    gap = res.trace["gap"]
    # constant-step MWU: gap O(eta + log(n)/(eta T)); mirror prox: O(1/T)
    assert gap[-1] < tol and gap[-1] < gap[10]
    assert abs(np.max(A.T @ res.x) - v) <= gap[-1] + 1e-12
    assert abs(x_star @ A @ y_star - v) < 1e-8


def test_game_value_random_matrix_against_minimax_bound():
    A = np.random.default_rng(4).uniform(-1, 1, (4, 6))
    v, x, y = q.game_value(A)
    res = q.game_dynamics(A, method="mirror_prox", step=0.2, maxiter=4000)
    assert abs(np.max(A.T @ res.x) - v) < 1e-3


# --- validation ----------------------------------------------------------------------------------

def test_bad_inputs():
    f = quadratic
    with pytest.raises(ValueError, match="x0"):
        q.jordan_gradient(f, [np.nan, 0], m=4, ell=1e-3, n_bits=4, vectorized=True)
    with pytest.raises(ValueError, match="m"):
        q.jordan_gradient(f, X0, m=-1, ell=1e-3, n_bits=4, vectorized=True)
    with pytest.raises(ValueError, match="ell"):
        q.jordan_distribution(f, X0, m=4, ell=0, n_bits=4, vectorized=True)
    with pytest.raises(ValueError, match="n_bits"):
        q.jordan_distribution(f, X0, m=4, ell=1e-3, n_bits=0, vectorized=True)
    with pytest.raises(ValueError, match="amplitudes"):
        q.jordan_distribution(lambda X: X.sum(1), np.zeros(5), m=4, ell=1e-3, n_bits=6, vectorized=True)
    with pytest.raises(ValueError, match="repetitions"):
        q.jordan_gradient(f, X0, m=4, ell=1e-3, n_bits=4, repetitions=4, vectorized=True)
    with pytest.raises(ValueError, match="noise"):
        q.jordan_distribution(f, X0, m=4, ell=1e-3, n_bits=4, noise=-1, vectorized=True)
    with pytest.raises(ValueError, match="noise_draws"):
        q.jordan_distribution(f, X0, m=4, ell=1e-3, n_bits=4, noise=0.1, noise_draws=0, vectorized=True)
    with pytest.raises(ValueError, match="one value per grid point"):
        q.jordan_distribution(lambda X: 1.0, X0, m=4, ell=1e-3, n_bits=4, vectorized=True)
    with pytest.raises(ValueError, match="f must be finite"):
        q.jordan_distribution(lambda X: np.full(len(X), np.inf), X0, m=4, ell=1e-3, n_bits=4, vectorized=True)
    with pytest.raises(ValueError, match="f must be callable"):
        q.grid_values(3.0, X0, 1e-3, 4)
    with pytest.raises(ValueError, match="values"):
        q.phase_probabilities(np.ones((4, 5)), 4, 0.1)
    with pytest.raises(ValueError, match="values"):
        q.phase_probabilities(np.full((4, 4), np.inf), 4, 0.1)
    with pytest.raises(ValueError, match="j must"):
        q.signed_index(np.array([0, 8]), 8)
    with pytest.raises(ValueError, match="n"):
        q.signed_index(np.array([0]), 0)
    with pytest.raises(ValueError, match="probs"):
        q.sample_jordan(np.zeros((4, 4)), 3, 4.0)
    with pytest.raises(ValueError, match="shots"):
        q.sample_jordan(np.ones((4, 4)), 0, 4.0)
    with pytest.raises(ValueError, match="delta"):
        q.median_repetitions(4, 1.5)
    with pytest.raises(ValueError, match="p"):
        q.median_repetitions(4, 0.01, 0.4)
    with pytest.raises(ValueError, match="sigma"):
        q.phase_noise(-1.0, 4, 0.1, 5)
    with pytest.raises(ValueError, match="u"):
        q.shot_distribution(np.array([np.nan]), 4)
    with pytest.raises(ValueError, match="phase_noise"):
        q.one_cell_probability(4, -0.1)
    with pytest.raises(ValueError, match="grad"):
        q.EmulatedJordanOracle("grad", 4, m=2.0)
    with pytest.raises(ValueError, match="d"):
        q.EmulatedJordanOracle(lambda x: x, 0, m=2.0)
    with pytest.raises(ValueError, match="n_bits"):
        q.EmulatedJordanOracle(lambda x: x, 4, m=2.0, n_bits=40)
    with pytest.raises(ValueError, match="repetitions"):
        q.EmulatedJordanOracle(lambda x: x, 4, m=2.0, repetitions=4)
    with pytest.raises(ValueError, match="grad must return"):
        q.EmulatedJordanOracle(lambda x: np.zeros(3), 4, m=2.0)(np.zeros(4))
    with pytest.raises(ValueError, match="grad must return"):
        q.EmulatedJordanOracle(lambda x: np.full(4, np.nan), 4, m=2.0)(np.zeros(4))
    with pytest.raises(ValueError, match="f must be callable"):
        q.CountedFunction(None)
    with pytest.raises(ValueError, match="x0"):
        q.mirror_descent(lambda x: 0.0, np.array([0.5, 0.6]), lambda x: x, geometry="simplex")
    with pytest.raises(ValueError, match="ball"):
        q.mirror_descent(lambda x: 0.0, np.array([3.0, 0.0]), lambda x: x, radius=1.0)
    with pytest.raises(ValueError, match="step"):
        q.dual_averaging(lambda x: 0.0, np.zeros(2), lambda x: x, step=0)
    with pytest.raises(ValueError, match="maxiter"):
        q.mirror_descent(lambda x: 0.0, np.zeros(2), lambda x: x, maxiter=0)
    with pytest.raises(ValueError, match="geometry"):
        q.mirror_prox(lambda x: 0.0, np.zeros(2), lambda x: x, geometry="cube")
    with pytest.raises(ValueError, match="f_star"):
        q.mirror_descent(lambda x: 0.0, np.zeros(2), lambda x: x, tol=0.1)
    with pytest.raises(ValueError, match="f_star"):
        q.mirror_descent(lambda x: 0.0, np.zeros(2), lambda x: x, f_star=np.nan, tol=0.1)
    with pytest.raises(ValueError, match="tol"):
        q.mirror_descent(lambda x: 0.0, np.zeros(2), lambda x: x, f_star=0.0, tol=-1)
    with pytest.raises(ValueError, match="jac must return"):
        q.mirror_descent(lambda x: 0.0, np.zeros(2), lambda x: np.zeros(3))
    with pytest.raises(ValueError, match="jac must return"):
        q.mirror_descent(lambda x: 0.0, np.zeros(2), lambda x: np.full(2, np.inf))
    with pytest.raises(ValueError, match="estimator"):
        q.zo_gradient_descent(lambda x: 0.0, np.zeros(2), estimator="spsa")
    with pytest.raises(ValueError, match="fun"):
        q.zo_gradient_descent("f", np.zeros(2))
    with pytest.raises(ValueError, match="mu"):
        q.gaussian_smoothing_gradient(lambda x: 0.0, np.zeros(2), mu=0)
    with pytest.raises(ValueError, match="fx"):
        q.gaussian_smoothing_gradient(lambda x: 0.0, np.zeros(2), mu=0.1, fx=np.nan)
    with pytest.raises(ValueError, match="h"):
        q.coordinate_fd_gradient(lambda x: 0.0, np.zeros(2), h=-1)
    with pytest.raises(ValueError, match="A"):
        q.game_dynamics(2 * np.ones((2, 2)))
    with pytest.raises(ValueError, match="method"):
        q.game_dynamics(np.eye(2), method="fictitious")
    with pytest.raises(ValueError, match="d"):
        q.L1Regression(0)
    with pytest.raises(ValueError, match="eps"):
        q.rps_game(2.0)
    with pytest.raises(TypeError, match="rng"):
        q.jordan_gradient(f, X0, m=4, ell=1e-3, n_bits=4, rng="seed", vectorized=True)
