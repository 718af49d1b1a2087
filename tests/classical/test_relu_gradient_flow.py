"""Tests of chapter 04's method: shallow ReLU networks on weakly interacting data."""
import subprocess
import sys

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


def test_training_restores_the_blas_thread_count():
    from threadpoolctl import threadpool_info

    def blas():
        return {i["filepath"]: i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas"}

    before = blas()
    rg.train_shallow_relu(*small_problem(), maxiter=3, tol=0.0)
    assert blas() == before


def test_a_diverging_step_size_is_reported_not_silent():
    res = rg.train_shallow_relu(*small_problem(), lr=1e4, maxiter=200, tol=0.0)
    assert not res.success and not res.converged
    assert "non-finite" in res.message


# ------------------------------------------------------------------ exact cheaper coordinates


def plain_gradient_descent_losses(X, y, a, W, lr, steps):
    """Reference: dense gradient descent with the checked loss_and_gradients, no reduction."""
    losses = []
    for _ in range(steps + 1):
        loss, ga, gW = rg.loss_and_gradients(a, W, X, y)
        losses.append(loss)
        a, W = a - lr * ga, W - lr * gW
    return np.array(losses)


@pytest.mark.parametrize("kind", ["d > n (Gram)", "orthogonal, permuted (diagonal)", "n > d (dense)"])
def test_training_in_the_data_span_gives_the_same_iterates(kind):
    gen = np.random.default_rng(21)
    if kind.startswith("d > n"):
        X, y = rg.make_weakly_interacting_data(15, 40, rng=gen)
    elif kind.startswith("orthogonal"):
        X, y = rg.make_orthogonal_data(15, 25, rng=gen)
        X = X[:, gen.permutation(25)]  # one non-zero per row, in scattered columns
    else:
        X, y = rg.make_weakly_interacting_data(40, 15, rng=gen)
    a, W = rg.init_network(X.shape[1], 7, rng=gen)
    res = rg.train_shallow_relu(X, y, a, W, lr=0.5, maxiter=60, tol=0.0)
    ref = plain_gradient_descent_losses(X, y, a, W, 0.5, 60)
    assert np.allclose(res.trace.objective, ref, rtol=1e-9, atol=0)
    # the final weights are lifted back to R^d and match the loss they report
    assert res.W.shape == W.shape
    assert rg.loss_and_gradients(res.a, res.W, X, y)[0] == pytest.approx(res.fun, rel=1e-9)


def test_training_matches_the_official_pytorch_loop():
    """The official training loop (PyTorch SGD on p * mean(r^2) / 2 with the two bias-free Linear
    layers, output divided by p), transcribed in float64: the same losses step by step."""
    torch = pytest.importorskip("torch")
    gen = np.random.default_rng(8)
    X, y = rg.make_weakly_interacting_data(20, 40, rng=gen)
    p, steps = 8, 40
    a, W = rg.init_network(40, p, rng=gen)
    ours = rg.train_shallow_relu(X, y, a, W, lr=1.0, maxiter=steps, tol=0.0).trace.objective
    hidden = torch.nn.Linear(40, p, bias=False, dtype=torch.float64)
    out = torch.nn.Linear(p, 1, bias=False, dtype=torch.float64)
    with torch.no_grad():
        hidden.weight.copy_(torch.tensor(W))
        out.weight.copy_(torch.tensor(a)[None, :])
    opt = torch.optim.SGD([*hidden.parameters(), *out.parameters()], lr=1.0, momentum=0, weight_decay=0)
    Xt, yt = torch.tensor(X), torch.tensor(y)
    theirs = []
    for _ in range(steps + 1):
        residuals = yt - out(torch.relu(hidden(Xt))).squeeze() / p
        loss = p * torch.mean(residuals**2) / 2
        theirs.append(loss.item())
        opt.zero_grad()
        loss.backward()
        opt.step()
    assert np.allclose(ours, theirs, rtol=1e-10, atol=0)


def test_orthogonal_training_moves_only_the_data_coordinates():
    X, y = rg.make_orthogonal_data(10, 30, rng=3)
    a, W = rg.init_network(30, 6, rng=4)
    res = rg.train_shallow_relu(X, y, a, W, maxiter=50, tol=0.0)
    assert np.array_equal(res.W[:, 10:], W[:, 10:])
    assert not np.allclose(res.W[:, :10], W[:, :10])


def test_an_unserved_point_on_orthogonal_data_is_never_fitted_and_the_run_stalls():
    """The mechanism behind the rate claim's control: on orthogonal data a point that no neuron
    serves at initialisation keeps its residual -y_i forever."""
    X, y = rg.make_orthogonal_data(60, rng=5)
    for seed in range(50):
        a, W = rg.init_network(60, 6, rng=seed)
        unserved = ~rg.coverage(a, W, X, y).any(axis=1)
        if unserved.any():
            break
    assert unserved.any()
    res = rg.train_shallow_relu(X, y, a, W, maxiter=20000, tol=1e-25, ftol=1e-13)
    assert "stalled" in res.message and not res.success
    r = rg.network_output(res.a, res.W, X) - y
    assert np.allclose(r[unserved], -y[unserved], atol=1e-12)
    assert res.fun >= 6 / (2 * 60) * np.sum(y[unserved] ** 2) * (1 - 1e-9)


def test_method_module_does_not_import_plotly():
    code = "import sys, optbook.classical.relu_gradient_flow; print('plotly' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"


# ------------------------------------------------------------------ bad input, for every public function


def _net(n=5, d=4, p=2):
    gen = np.random.default_rng(0)
    X, y = rg.make_weakly_interacting_data(n, d, rng=gen)
    a, W = rg.init_network(d, p, rng=gen)
    return dict(a=a, W=W, X=X, y=y)


def _with_nan(arr):
    arr = np.array(arr, dtype=float)
    arr.flat[0] = np.nan
    return arr


def _orthogonal_trace():
    X, y = rg.make_orthogonal_data(20, rng=0)
    a, W, _ = rg.draw_well_initialized(X, y, 22, rng=1)
    return rg.train_shallow_relu(X, y, a, W, maxiter=400, tol=1e-20).trace


NET = _net()
NAN, INF = float("nan"), float("inf")
# For each public function: a valid call and the bad values of each argument (NaN, infinities,
# wrong shapes, empty inputs, out-of-range numbers and iteration counts).
BAD_INPUTS = {
    rg.width_rule: (dict(n=10), [("n", 0), ("n", 2.5), ("eps", NAN), ("eps", 1.5), ("eps", 0.0)]),
    rg.epoch_budget: (dict(n=10, p=3), [("n", -1), ("p", 0), ("lr", NAN), ("lr", INF), ("lr", 0.0)]),
    rg.convergence_threshold: (dict(n=10, p=3), [("n", 0), ("p", 1.5)]),
    rg.make_weakly_interacting_data: (dict(n=5, d=3), [("n", 0), ("d", -2), ("correlation", NAN),
                                                        ("correlation", 1.0), ("rng", -1)]),
    rg.make_orthogonal_data: (dict(n=5), [("n", 0), ("d", 3), ("d", 2.0), ("rng", -1)]),
    rg.init_network: (dict(d=4, p=2), [("d", 0), ("p", 0), ("p", NAN), ("rng", -1)]),
    rg.network_output: ({k: NET[k] for k in "aWX"}, [("a", []), ("a", _with_nan(NET["a"])), ("W", np.ones((3, 4))),
                                                     ("X", np.ones((5, 3))), ("X", _with_nan(NET["X"]))]),
    rg.loss_and_gradients: (NET, [("y", np.ones(4)), ("y", _with_nan(NET["y"])), ("W", [[INF] * 4] * 2),
                                  ("X", np.empty((0, 4)))]),
    rg.coverage: (NET, [("a", _with_nan(NET["a"])), ("y", np.ones(6))]),
    rg.is_well_initialized: (NET, [("W", np.ones(4)), ("X", _with_nan(NET["X"]))]),
    rg.energies: ({k: NET[k] for k in "aWX"}, [("X", np.ones((5, 5))), ("a", np.ones((2, 1)))]),
    rg.rate_bounds: ({k: NET[k] for k in "aWX"}, [("W", _with_nan(NET["W"])), ("a", np.array([]))]),
    rg.train_shallow_relu: (dict(X=NET["X"], y=NET["y"], a0=NET["a"], W0=NET["W"], maxiter=3),
                            [("a", _with_nan(NET["a"])), ("y", np.ones(3)), ("lr", NAN), ("lr", -1.0),
                             ("maxiter", -1), ("maxiter", 2.5), ("tol", INF), ("tol", -1.0), ("ftol", NAN),
                             ("ftol", 1.0), ("train_hidden", "no")]),
    rg.linear_least_squares: (dict(X=NET["X"], y=NET["y"]), [("X", _with_nan(NET["X"])), ("y", np.ones(2)),
                                                               ("X", np.ones(5))]),
    rg.random_features_floor: (NET, [("y", [INF] * 5), ("W", np.ones((3, 4)))]),
    rg.late_rate: (dict(trace=_orthogonal_trace()), [("trace", [1.0, 0.5]), ("window", 0.0), ("window", NAN),
                                                     ("window", 1.5)]),
    rg.draw_well_initialized: (dict(X=NET["X"], y=NET["y"], p=8, rng=0),
                               [("X", _with_nan(NET["X"])), ("p", 0), ("max_tries", 0), ("y", np.ones(2))]),
    rg.phase_transition_loss: (dict(t=np.array([0.0, 1.0]), n=100.0),
                               [("t", np.array([-1.0])), ("t", np.array([NAN])), ("t", np.ones((2, 2))),
                                ("n", 0.0), ("n", NAN), ("p", 0), ("n0", INF), ("targets", ()), ("targets", (NAN,))]),
    rg.phase_transition_time: (dict(n=100.0, target=1.0), [("n", -1.0), ("target", NAN), ("p", 0)]),
    rg.drop_width: (dict(n=1e4), [("n", INF), ("target", 0.0), ("p", -1)]),
}
# train_shallow_relu names its network arguments a0, W0 in the signature but checks them as a, W.
ALIASES = {("train_shallow_relu", "a"): "a0"}


def test_every_public_function_has_bad_input_cases():
    public = {name for name, obj in vars(rg).items() if callable(obj) and not name.startswith("_")
              and getattr(obj, "__module__", None) == rg.__name__ and not isinstance(obj, type)}
    missing = public - {f.__name__ for f in BAD_INPUTS}
    assert not missing, f"add bad-input cases for {sorted(missing)}"


CASES = [(f, arg, bad) for f, (_, bads) in BAD_INPUTS.items() for arg, bad in bads]


@pytest.mark.parametrize("f, arg, bad", CASES, ids=[f"{f.__name__}-{a}-{i}" for i, (f, a, _) in enumerate(CASES)])
def test_bad_input_raises_value_error_naming_the_argument(f, arg, bad):
    valid, _ = BAD_INPUTS[f]
    f(**valid)  # the valid call works, so the error below is the bad argument's
    kwargs = dict(valid)
    kwargs[ALIASES.get((f.__name__, arg), arg)] = bad
    with pytest.raises(ValueError, match=rf"\b{arg}\b"):
        f(**kwargs)
