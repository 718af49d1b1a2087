"""Tests of chapter 15: Jordan's gradient estimator (simulated), the cost model, the classical
zeroth-order baselines, mirror descent / dual averaging / mirror prox, and games."""
import numpy as np
import pytest

from optbook.geometry import quantum_zo as q


def linear(g):
    g = np.asarray(g, float)
    return lambda X: np.atleast_2d(X) @ g + 0.7


# --- Jordan's algorithm -----------------------------------------------------------------------

@pytest.mark.parametrize("d,n_bits", [(1, 6), (2, 4), (3, 3)])
def test_probabilities_sum_to_one(d, n_bits):
    rng = np.random.default_rng(d)
    f = lambda X: np.sin(X).sum(axis=1) + 0.3 * (X ** 2).sum(axis=1)
    P = q.jordan_distribution(f, rng.standard_normal(d), m=4.0, ell=0.05, n_bits=n_bits, noise=0.01,
                              noise_draws=3, rng=0, vectorized=True)
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


def test_sign_convention_recovers_gradient_direction():
    f = q.quadratic_oracle(1.0)
    res = q.jordan_gradient(f, q.X0, m=4.0, ell=1e-3, n_bits=6, repetitions=7, rng=3, vectorized=True)
    assert np.all(np.abs(res.x - q.G0) <= 2 * 4.0 / 64)


def test_median_boosting_reduces_failures():
    fails = [1 - q.jordan_success(ell=0.15, shots=600, repetitions=r, rng=5)["joint"] for r in (1, 3, 7)]
    assert fails[0] > fails[1] > fails[2]


def test_noise_destroys_the_estimate():
    assert q.jordan_success(noise=1.0, shots=400, rng=1)["joint"] < 0.2
    assert q.jordan_success(noise=0.0, shots=400, rng=1)["joint"] > 0.75


def test_random_shift_gives_a_subgradient_of_abs():
    f = lambda X: np.abs(X).sum(axis=1)
    res = q.jordan_gradient(f, np.array([0.5, -0.5]), m=4.0, ell=1e-3, n_bits=5, repetitions=5,
                            shift_radius=0.1, rng=0, vectorized=True)
    np.testing.assert_allclose(res.x, [1.0, -1.0], atol=2 * 4.0 / 32)


def test_jordan_is_deterministic_under_a_seed():
    f = q.quadratic_oracle(4.0)
    a = q.jordan_gradient(f, q.X0, m=4, ell=0.2, n_bits=5, repetitions=3, noise=0.002, rng=7, vectorized=True)
    b = q.jordan_gradient(f, q.X0, m=4, ell=0.2, n_bits=5, repetitions=3, noise=0.002, rng=7, vectorized=True)
    np.testing.assert_array_equal(a.samples, b.samples)


# --- cost model ----------------------------------------------------------------------------------

def test_median_repetitions_is_minimal_and_logarithmic():
    from scipy.stats import binom
    for d in (1, 4, 128):
        r = q.median_repetitions(d, 0.01)
        assert r % 2 == 1 and d * binom.cdf((r - 1) // 2, r, q.P_ONE_CELL) <= 0.01
        assert r == 1 or d * binom.cdf((r - 3) // 2, r - 2, q.P_ONE_CELL) > 0.01
    rs = [q.median_repetitions(2 ** k, 0.01) for k in range(2, 12)]
    assert all(b >= a for a, b in zip(rs, rs[1:])) and rs[-1] / rs[0] < 3


def test_emulated_oracle_error_and_counter():
    g = np.linspace(-0.9, 0.9, 50)
    orc = q.EmulatedJordanOracle(lambda x: g, 50, m=2.0, n_bits=6, rng=0)
    for _ in range(4):
        assert np.max(np.abs(orc(np.zeros(50)) - g)) <= orc.resolution + 1e-15
    assert orc.queries == 4 * q.median_repetitions(50, 0.01) and orc.calls == 4
    with pytest.raises(ValueError, match="m/2"):
        q.EmulatedJordanOracle(lambda x: 2 * g, 50, m=2.0)(np.zeros(50))


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
    one = q.gaussian_smoothing_gradient(f, x, mu, rng=1)
    assert one.shape == (3,) and np.all(np.isfinite(one))


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


@pytest.mark.parametrize("method", [q.mirror_descent, q.dual_averaging, q.mirror_prox])
def test_outer_loops_converge_on_a_smooth_problem(method):
    xs = np.array([0.3, -0.4])
    res = method(lambda x: float((x - xs) @ (x - xs)), np.zeros(2), lambda x: 2 * (x - xs), step=0.3, decay="constant",
                 maxiter=3000, radius=1.0, f_star=0.0, tol=1e-3)
    assert res.success and np.linalg.norm(res.x - xs) < 0.05


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
    f = q.quadratic_oracle()
    with pytest.raises(ValueError, match="x0"):
        q.jordan_gradient(f, [np.nan, 0], m=4, ell=1e-3, n_bits=4, vectorized=True)
    with pytest.raises(ValueError, match="m"):
        q.jordan_gradient(f, q.X0, m=-1, ell=1e-3, n_bits=4, vectorized=True)
    with pytest.raises(ValueError, match="ell"):
        q.jordan_distribution(f, q.X0, m=4, ell=0, n_bits=4, vectorized=True)
    with pytest.raises(ValueError, match="n_bits"):
        q.jordan_distribution(f, q.X0, m=4, ell=1e-3, n_bits=0, vectorized=True)
    with pytest.raises(ValueError, match="amplitudes"):
        q.jordan_distribution(lambda X: X.sum(1), np.zeros(5), m=4, ell=1e-3, n_bits=6, vectorized=True)
    with pytest.raises(ValueError, match="repetitions"):
        q.jordan_gradient(f, q.X0, m=4, ell=1e-3, n_bits=4, repetitions=4, vectorized=True)
    with pytest.raises(ValueError, match="noise"):
        q.jordan_distribution(f, q.X0, m=4, ell=1e-3, n_bits=4, noise=-1, vectorized=True)
    with pytest.raises(ValueError, match="one value per grid point"):
        q.jordan_distribution(lambda X: 1.0, q.X0, m=4, ell=1e-3, n_bits=4, vectorized=True)
    with pytest.raises(ValueError, match="values"):
        q.phase_probabilities(np.ones((4, 5)), 4, 0.1)
    with pytest.raises(ValueError, match="delta"):
        q.median_repetitions(4, 1.5)
    with pytest.raises(ValueError, match="x0"):
        q.mirror_descent(lambda x: 0.0, np.array([0.5, 0.6]), lambda x: x, geometry="simplex")
    with pytest.raises(ValueError, match="ball"):
        q.mirror_descent(lambda x: 0.0, np.array([3.0, 0.0]), lambda x: x, radius=1.0)
    with pytest.raises(ValueError, match="step"):
        q.dual_averaging(lambda x: 0.0, np.zeros(2), lambda x: x, step=0)
    with pytest.raises(ValueError, match="geometry"):
        q.mirror_prox(lambda x: 0.0, np.zeros(2), lambda x: x, geometry="cube")
    with pytest.raises(ValueError, match="f_star"):
        q.mirror_descent(lambda x: 0.0, np.zeros(2), lambda x: x, tol=0.1)
    with pytest.raises(ValueError, match="estimator"):
        q.zo_gradient_descent(lambda x: 0.0, np.zeros(2), estimator="spsa")
    with pytest.raises(ValueError, match="mu"):
        q.gaussian_smoothing_gradient(lambda x: 0.0, np.zeros(2), mu=0)
    with pytest.raises(ValueError, match="A"):
        q.game_dynamics(2 * np.ones((2, 2)))
    with pytest.raises(ValueError, match="method"):
        q.game_dynamics(np.eye(2), method="fictitious")
    with pytest.raises(ValueError, match="method"):
        q.race_run("adam", 4, 0, 1.0)
    with pytest.raises(TypeError, match="rng"):
        q.jordan_gradient(f, q.X0, m=4, ell=1e-3, n_bits=4, rng="seed", vectorized=True)
