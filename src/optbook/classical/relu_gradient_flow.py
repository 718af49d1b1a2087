"""Chapter 04: shallow ReLU networks on weakly interacting data (Dana, Bach and Pillaud-Vivien,
NeurIPS 2025).

A one-hidden-layer ReLU network h(x) = (1/p) sum_j a_j relu(w_j . x), trained by full-batch
gradient descent with a small constant step (the paper's proxy for gradient flow) on n nearly
orthogonal points in dimension d. The paper proves that a width p of order log(n) suffices for
global convergence with high probability, at an exponential rate of order 1/n, and, for exactly
orthogonal data, describes a phase transition of the rate in a closed-form toy model.

Everything here follows the official code (github.com/leodana2000/Convergence-High-Dimension):
the model and its 1/p output scale, the loss p/(2n) sum_i (y_i - h(x_i))^2, the initialisation
a_j = eps_j (||w_j|| + Exp(1)), the width rule, the epoch budget, the convergence threshold and
the closed-form phase-transition script. Baselines: random features (output layer only), a wide
network and linear least squares.
"""
from __future__ import annotations

from functools import lru_cache

import numpy as np
import plotly.graph_objects as go

from ..claims import Measured, claim
from ..core import (
    Result,
    RngLike,
    Trace,
    as_rng,
    check_in_range,
    check_int,
    check_matrix,
    check_positive,
    check_vector,
    loglog_slope,
    thin_indices,
)
from ..core.threads import one_blas_thread
from ..viz import Phase, SliderStep, base_layout, color_for, convergence_figure, slider_figure
from ..widgets import Explorer, Slider

# --------------------------------------------------------------------------- the paper's rules


def width_rule(n: int, eps: float = 0.05) -> int:
    """Width p(n, eps) = floor(log(n / eps) / log(4/3)) + 1 (``nb_neurons`` in the official code).

    At initialisation a neuron "serves" a given point with probability 1/4, so with p neurons a
    point is unserved with probability (3/4)^p and, by a union bound, all n points are served
    with probability >= 1 - n (3/4)^p >= 1 - eps at this width.
    """
    n = check_int(n, "n", minimum=1)
    eps = check_in_range(eps, "eps", 0.0, 1.0)
    return int(np.floor(np.log(n / eps) / np.log(4.0 / 3.0))) + 1


def epoch_budget(n: int, p: int, lr: float = 1.0) -> int:
    """Number of gradient steps T = floor(1.5 sqrt(np) log(np) / (4 lr)) + 1 (``nb_epochs`` in
    the official code: 1.5 times the time of the phase transition)."""
    n = check_int(n, "n", minimum=1)
    p = check_int(p, "p", minimum=1)
    lr = check_positive(lr, "lr")
    return int(1.5 * np.sqrt(n * p) * np.log(n * p) / (4.0 * lr)) + 1


def convergence_threshold(n: int, p: int) -> float:
    """The loss below which a run counts as converged, p / (2n), i.e. sum_i r_i^2 <= 1."""
    return check_int(p, "p", minimum=1) / (2.0 * check_int(n, "n", minimum=1))


# --------------------------------------------------------------------------- data and init


def _labels(n: int, rng: np.random.Generator) -> np.ndarray:
    return rng.choice([-1.0, 1.0], size=n) * rng.uniform(1.0, 2.0, size=n)


def make_weakly_interacting_data(
    n: int, d: int, *, correlation: float = 0.0, rng: RngLike = None
) -> tuple[np.ndarray, np.ndarray]:
    """Experiment-1 data: x_i = r_i u_i with u_i uniform on the sphere S^{d-1}, r_i ~ U[1, 2], and
    labels y_i = +-U[1, 2] with a random sign.

    Pairwise correlations |<u_i, u_j>| are of order 1/sqrt(d): the "weakly interacting" regime.
    ``correlation`` = c in [0, 1) mixes in a shared direction, u_i proportional to
    sqrt(1 - c) g_i + sqrt(c) g_0 (g Gaussian), which breaks the assumption as c grows.

    Returns
    -------
    X : (n, d) array, y : (n,) array
    """
    n = check_int(n, "n", minimum=1)
    d = check_int(d, "d", minimum=1)
    c = check_in_range(correlation, "correlation", 0.0, 1.0, closed=(True, False))
    gen = as_rng(rng)
    g = gen.standard_normal((n, d))
    if c > 0:
        g = np.sqrt(1.0 - c) * g + np.sqrt(c) * gen.standard_normal(d)
    X = g / np.linalg.norm(g, axis=1, keepdims=True) * gen.uniform(1.0, 2.0, size=(n, 1))
    return X, _labels(n, gen)


def make_orthogonal_data(n: int, d: int | None = None, *, rng: RngLike = None) -> tuple[np.ndarray, np.ndarray]:
    """Experiment-2 data: x_i = r_i e_i (the first n basis vectors of R^d, n <= d), r_i ~ U[1, 2],
    and the same labels as :func:`make_weakly_interacting_data`. Exactly orthogonal inputs."""
    n = check_int(n, "n", minimum=1)
    d = n if d is None else check_int(d, "d", minimum=1)
    if d < n:
        raise ValueError(f"d must be >= n for orthogonal data, got d={d} < n={n}")
    gen = as_rng(rng)
    X = np.zeros((n, d))
    X[np.arange(n), np.arange(n)] = gen.uniform(1.0, 2.0, size=n)
    return X, _labels(n, gen)


def init_network(d: int, p: int, *, rng: RngLike = None) -> tuple[np.ndarray, np.ndarray]:
    """The paper's initialisation: w_j with i.i.d. U(-1/sqrt d, 1/sqrt d) entries (PyTorch's
    ``Linear`` default) and a_j = eps_j (||w_j|| + E_j), eps_j Rademacher, E_j ~ Exp(1).

    Hence |a_j| > ||w_j||: by the conservation law of gradient flow, a_j^2 - ||w_j||^2 stays
    constant and positive, so no output weight ever changes sign.

    Returns
    -------
    a : (p,) output weights, W : (p, d) hidden weights (row j is w_j)
    """
    d = check_int(d, "d", minimum=1)
    p = check_int(p, "p", minimum=1)
    gen = as_rng(rng)
    bound = 1.0 / np.sqrt(d)
    W = gen.uniform(-bound, bound, size=(p, d))
    a = gen.choice([-1.0, 1.0], size=p) * (np.linalg.norm(W, axis=1) + gen.exponential(1.0, size=p))
    return a, W


def _check_network(a, W, X=None, y=None):
    a = check_vector(a, "a")
    W = check_matrix(W, "W", shape=(a.size, None))
    if X is None:
        return a, W
    X = check_matrix(X, "X", shape=(None, W.shape[1]))
    if y is None:
        return a, W, X
    y = check_vector(y, "y", X.shape[0])
    return a, W, X, y


# --------------------------------------------------------------------------- model, loss, gradients


def network_output(a: np.ndarray, W: np.ndarray, X: np.ndarray) -> np.ndarray:
    """h_theta(x_i) = (1/p) sum_j a_j relu(w_j . x_i) for every row x_i of X."""
    a, W, X = _check_network(a, W, X)
    return np.maximum(X @ W.T, 0.0) @ a / a.size


def _loss_grad(a, W, X, y):
    """Unchecked loss and gradients (the training loop's inner step).

    Returns the loss, grad_a, grad_W, the residuals r and the pre-activations Z.
    """
    n, p = y.size, a.size
    Z = X @ W.T                                   # (n, p): w_j . x_i
    S = np.maximum(Z, 0.0)                        # relu
    r = S @ a / p - y                             # residuals h(x_i) - y_i
    loss = p / (2.0 * n) * float(r @ r)
    ga = S.T @ r / n                              # dL/da_j = (1/n) sum_i r_i relu(w_j . x_i)
    gW = (a[:, None] / n) * (((Z > 0) * r[:, None]).T @ X)   # dL/dw_j = (a_j/n) sum_i r_i 1[.] x_i
    return loss, ga, gW, r, Z


def loss_and_gradients(
    a: np.ndarray, W: np.ndarray, X: np.ndarray, y: np.ndarray
) -> tuple[float, np.ndarray, np.ndarray]:
    """The paper's loss L = p/(2n) sum_i (y_i - h(x_i))^2 and its gradients.

    With r_i = h(x_i) - y_i: dL/da_j = (1/n) sum_i r_i relu(w_j . x_i) and
    dL/dw_j = (a_j/n) sum_i r_i 1[w_j . x_i > 0] x_i (the ReLU derivative at 0 is taken as 0).

    Returns
    -------
    loss : float, grad_a : (p,) array, grad_W : (p, d) array
    """
    a, W, X, y = _check_network(a, W, X, y)
    with one_blas_thread():
        loss, ga, gW, _, _ = _loss_grad(a, W, X, y)
    return loss, ga, gW


def coverage(a: np.ndarray, W: np.ndarray, X: np.ndarray, y: np.ndarray) -> np.ndarray:
    """(n, p) boolean matrix: neuron j serves point i when a_j y_i > 0 and w_j . x_i > 0."""
    a, W, X, y = _check_network(a, W, X, y)
    return (X @ W.T > 0) & (np.outer(y, a) > 0)


def is_well_initialized(a: np.ndarray, W: np.ndarray, X: np.ndarray, y: np.ndarray) -> bool:
    """The paper's "well-initialised" event: every point is served by at least one neuron."""
    return bool(coverage(a, W, X, y).any(axis=1).all())


def energies(a: np.ndarray, W: np.ndarray, X: np.ndarray) -> np.ndarray:
    """E_i = (1/p) sum_j 1[w_j . x_i > 0] a_j^2: the weight mass active on point i.

    For orthogonal data with 1 <= ||x_i|| <= 2 and a_j^2 >= ||w_j||^2, the local rate obeys
    2 min_i E_i / n <= ||grad L||^2 / L <= 16 max_i E_i / n (see :func:`rate_bounds`).
    """
    a, W, X = _check_network(a, W, X)
    return (X @ W.T > 0) @ (a * a) / a.size


def rate_bounds(a: np.ndarray, W: np.ndarray, X: np.ndarray) -> tuple[float, float]:
    """Energy bounds (2 min_i E_i / n, 16 max_i E_i / n) on the local rate ||grad L||^2 / L.

    Constants as in the official code. They are rigorous for exactly orthogonal inputs with norms
    in [1, 2] (lower bound always; upper bound when a_j^2 >= ||w_j||^2, which the initialisation
    and the conservation law give); on weakly interacting data they are a guide, not a theorem.
    """
    E = energies(a, W, X)
    n = E.size
    return 2.0 * float(E.min()) / n, 16.0 * float(E.max()) / n


# --------------------------------------------------------------------------- training


def train_shallow_relu(
    X: np.ndarray,
    y: np.ndarray,
    a0: np.ndarray,
    W0: np.ndarray,
    *,
    lr: float = 1.0,
    maxiter: int | None = None,
    tol: float | None = None,
    train_hidden: bool = True,
    method_name: str | None = None,
) -> Result:
    """Full-batch gradient descent theta <- theta - lr grad L(theta) on the paper's loss, the
    discretisation of gradient flow used in the paper's experiments (vanilla SGD in PyTorch with
    no momentum and no weight decay, on the whole data set).

    Parameters
    ----------
    X, y : (n, d) inputs and (n,) labels.
    a0, W0 : (p,) output weights and (p, d) hidden weights at initialisation.
    lr : float
        Step size; one step advances the gradient-flow time t by ``lr``. The paper uses 1.
    maxiter : int, optional
        Number of steps; default :func:`epoch_budget` (n, p, lr).
    tol : float, optional
        Stop as soon as L <= tol (the official code's early stop). Default: the convergence
        threshold p / (2n). Pass 0 to run all ``maxiter`` steps.
    train_hidden : bool
        False trains the output layer a only with W frozen: the random-features baseline.

    Returns
    -------
    Result
        ``a, W, x`` (a and W flattened together), ``fun`` (final loss), ``nit``, ``success``
        (L <= tol reached), ``converged`` (L <= p/(2n)), ``message`` and ``trace``. Trace row k
        holds the state after k steps: objective L, grad_norm, step_size lr and the extra series
        ``t`` (= lr k, gradient-flow time), ``rate`` (= ||grad L||^2 / L, twice the local
        Polyak-Lojasiewicz constant), ``residual_sq`` (sum_i r_i^2), ``energy_min``,
        ``energy_max`` and ``served`` (fraction of points served by some neuron).
    """
    a, W, X, y = _check_network(a0, W0, X, y)
    n, p = y.size, a.size
    lr = check_positive(lr, "lr")
    maxiter = epoch_budget(n, p, lr) if maxiter is None else check_int(maxiter, "maxiter", minimum=0)
    tol = convergence_threshold(n, p) if tol is None else check_positive(tol, "tol", allow_zero=True)
    name = method_name or (f"ReLU net (p = {p})" if train_hidden else f"random features (p = {p})")
    trace = Trace(name, meta=dict(n=n, d=X.shape[1], p=p, lr=lr, train_hidden=bool(train_hidden)))
    message, success = "maximum number of iterations reached", False
    with one_blas_thread(), np.errstate(over="ignore", invalid="ignore"):
        for k in range(maxiter + 1):
            loss, ga, gW, r, Z = _loss_grad(a, W, X, y)
            if not np.isfinite(loss):
                message = "loss became non-finite (step size too large?)"
                break
            active = Z > 0
            sign_match = np.outer(y, a) > 0               # a_j y_i > 0
            E = active @ (a * a) / p                      # energies E_i
            gsq = float(ga @ ga) + (float(np.vdot(gW, gW)) if train_hidden else 0.0)
            trace.record(objective=loss, grad_norm=np.sqrt(gsq), step_size=lr, t=lr * k,
                         rate=gsq / loss if loss > 0 else np.nan, residual_sq=float(r @ r),
                         energy_min=E.min(), energy_max=E.max(),
                         served=np.mean((active & sign_match).any(axis=1)))
            if loss <= tol:
                message, success = "loss below tol", True
                break
            if k == maxiter:
                break
            a = a - lr * ga
            if train_hidden:
                W = W - lr * gW
    converged = bool(loss <= convergence_threshold(n, p))
    return Result(x=np.concatenate([a, W.ravel()]), a=a, W=W, fun=loss, jac=np.concatenate([ga, gW.ravel()]),
                  nit=len(trace) - 1, nfev=len(trace), njev=len(trace), success=success,
                  converged=converged, message=message, trace=trace)


def linear_least_squares(X: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, float]:
    """Baseline h(x) = v . x fitted by least squares; returns v and the residual sum_i r_i^2
    (zero when d >= n and X has full row rank)."""
    X = check_matrix(X, "X")
    y = check_vector(y, "y", X.shape[0])
    v, *_ = np.linalg.lstsq(X, y, rcond=None)
    r = X @ v - y
    return v, float(r @ r)


def random_features_floor(a: np.ndarray, W: np.ndarray, X: np.ndarray, y: np.ndarray) -> float:
    """Smallest loss the random-features model can reach with W frozen: p/(2n) ||P_perp y||^2,
    P_perp the projection onto the complement of the span of the features relu(X W^T)."""
    a, W, X, y = _check_network(a, W, X, y)
    Phi = np.maximum(X @ W.T, 0.0)
    coef, *_ = np.linalg.lstsq(Phi, y, rcond=None)
    res = y - Phi @ coef
    return a.size / (2.0 * y.size) * float(res @ res)


def late_rate(trace: Trace, window: float = 0.25) -> float:
    """Late-time exponential rate: mean of log(L_k / L_{k+1}) / lr over the last ``window``
    fraction of the run (the card warns against using only the last few steps)."""
    if not isinstance(trace, Trace):
        raise ValueError(f"trace must be a Trace, got {type(trace).__name__}")
    window = check_in_range(window, "window", 0.0, 1.0, closed=(False, True))
    L = trace.objective
    if L.size < 8:
        raise ValueError(f"trace must have at least 8 rows to estimate a rate, got {L.size}")
    tail = L[int((1.0 - window) * (L.size - 1)):]
    lr = float(trace.step_size[0])
    return float(np.mean(np.log(tail[:-1] / tail[1:])) / lr)


def draw_well_initialized(
    X: np.ndarray, y: np.ndarray, p: int, *, rng: RngLike = None, max_tries: int = 1000
) -> tuple[np.ndarray, np.ndarray, int]:
    """Re-draw the initialisation until every point is served (experiment 2 of the official
    code); returns a, W and the number of draws it took."""
    X = check_matrix(X, "X")
    y = check_vector(y, "y", X.shape[0])
    p = check_int(p, "p", minimum=1)
    max_tries = check_int(max_tries, "max_tries", minimum=1)
    gen = as_rng(rng)
    for tries in range(1, max_tries + 1):
        a, W = init_network(X.shape[1], p, rng=gen)
        if is_well_initialized(a, W, X, y):
            return a, W, tries
    raise ValueError(f"no well-initialised draw in max_tries={max_tries} draws (p={p} too small?)")


# --------------------------------------------------------------------------- phase-transition toy


def phase_transition_loss(
    t: np.ndarray, n: float, *, targets: tuple[float, ...] = (1.0, 2.0), p: int = 2, n0: float = 1.0
) -> np.ndarray:
    """Closed-form loss of the orthogonal toy model (the paper's Theorem 10, as coded in the
    official ``phase_transition.py`` with aligned initialisation).

    Each target group k has norm D_k = |y_k| sqrt(n); its squared output norm follows
    N(t) = p D N0^2 e^tau / (p D e^-tau + N0^2 (e^tau - e^-tau)) with tau = t D / (n p),
    its loss is (D - N/p)^2 / (2n), and the total loss is sum_k loss_k / p.
    """
    t = np.asarray(t, dtype=float)
    if t.ndim > 1 or not np.all(np.isfinite(t)) or np.any(t < 0):
        raise ValueError("t must be a finite 1-D array of non-negative times")
    n = check_positive(n, "n")
    p = check_int(p, "p", minimum=1)
    n0 = check_positive(n0, "n0")
    targets = tuple(check_positive(v, "targets") for v in targets) if len(targets) else ()
    if not targets:
        raise ValueError("targets must not be empty")
    total = np.zeros_like(t)
    for target in targets:
        D = target * np.sqrt(n)
        e2 = np.exp(-2.0 * t * D / (n * p))  # divide numerator and denominator by e^tau: no overflow
        N = p * D * n0**2 / (p * D * e2 + n0**2 * (1.0 - e2))
        total += (D - N / p) ** 2 / (2.0 * n) / p
    return total


def phase_transition_time(n: float, target: float, p: int = 2) -> float:
    """t* = n p / (2 D) log(p D), D = target sqrt(n): when the toy's group with this target
    drops (the plateau ends)."""
    n = check_positive(n, "n")
    target = check_positive(target, "target")
    p = check_int(p, "p", minimum=1)
    D = target * np.sqrt(n)
    return n * p / (2.0 * D) * np.log(p * D)


def drop_width(n: float, target: float = 1.0, p: int = 2) -> float:
    """Relative width of a group's drop in the toy: the time for its loss to fall from 90% to
    10% of its initial value, divided by t*. The paper predicts order 1/log(n)."""
    t_star = phase_transition_time(n, target, p)
    t = np.linspace(0.0, 3.0 * t_star, 30001)
    loss = phase_transition_loss(t, n, targets=(target,), p=p)
    frac = loss / loss[0]
    return float((t[np.argmax(frac <= 0.1)] - t[np.argmax(frac <= 0.9)]) / t_star)


# --------------------------------------------------------------------------- experiments (cached)


@lru_cache(maxsize=256)
def run_once(n: int, d: int, p: int, seed: int, *, orthogonal: bool = False, correlation: float = 0.0,
             train_hidden: bool = True, maxiter: int | None = None, tol: float | None = None) -> Result:
    """One seeded run (data, initialisation, training), cached: the claims, the slider figures and
    the live explorers share these runs. ``result.well_init`` says whether every point was served
    at initialisation and ``result.coverage0`` holds the initial coverage matrix."""
    gen = np.random.default_rng(seed)
    if orthogonal:
        X, y = make_orthogonal_data(n, d, rng=gen)
    else:
        X, y = make_weakly_interacting_data(n, d, correlation=correlation, rng=gen)
    a, W = init_network(d, p, rng=gen)
    cov = coverage(a, W, X, y)
    res = train_shallow_relu(X, y, a, W, maxiter=maxiter, tol=tol, train_hidden=train_hidden)
    res.well_init = bool(cov.any(axis=1).all())
    res.coverage0 = cov
    res.y = y
    return res


def success_rates(n: int, d: int, ps: tuple[int, ...], seeds: int) -> dict:
    """P(converged) and P(well-initialised) over ``seeds`` seeds for each width in ``ps``
    (experiment-1 data, lr = 1, the paper's epoch budget and threshold)."""
    conv = np.array([[run_once(n, d, p, s).converged for s in range(seeds)] for p in ps], dtype=float)
    well = np.array([[run_once(n, d, p, s).well_init for s in range(seeds)] for p in ps], dtype=float)
    return {"n": n, "d": d, "p": np.array(ps), "p_conv": conv.mean(axis=1), "p_well": well.mean(axis=1),
            "seeds": seeds}


@lru_cache(maxsize=64)
def orthogonal_run(n: int, seed: int, *, loss_floor: float = 1e-25) -> Result:
    """A well-initialised run on orthogonal data (d = n, p = p(n, 0.05)), to L <= ``loss_floor``
    in float64: the data of the rate experiment (experiment 2)."""
    gen = np.random.default_rng(seed)
    X, y = make_orthogonal_data(n, rng=gen)
    p = width_rule(n, 0.05)
    a, W, _ = draw_well_initialized(X, y, p, rng=gen)
    res = train_shallow_relu(X, y, a, W, maxiter=200 * n, tol=loss_floor)
    res.X, res.y = X, y
    return res


def rate_scaling(ns: tuple[int, ...], seeds: int) -> dict:
    """Late-time rate on orthogonal data for each n (mean over seeds) and the log-log slope."""
    mus = np.array([[late_rate(orthogonal_run(n, s).trace) for s in range(seeds)] for n in ns])
    mean = mus.mean(axis=1)
    slope = loglog_slope(ns, mean)
    return {"n": np.array(ns), "rates": mus, "mean_rate": mean, "slope": slope}


def linear_vs_network(cases: tuple[tuple[int, int], ...] = ((100, 200), (100, 50), (200, 50), (100, 20)),
                      seeds: int = 5) -> list[dict]:
    """For each (n, d): P(converged) of the ReLU net at width p(n, 0.05) over ``seeds`` seeds, and
    the residual sum r^2 of linear least squares on the seed-0 data (the linear baseline)."""
    rows = []
    for n, d in cases:
        p = width_rule(n, 0.05)
        gen = np.random.default_rng(0)
        X, y = make_weakly_interacting_data(n, d, rng=gen)
        rows.append({"n": n, "d": d, "p = p(n, 0.05)": p,
                     "ReLU net: P(converged)": float(np.mean([run_once(n, d, p, s).converged for s in range(seeds)])),
                     "linear LS: sum r^2": round(linear_least_squares(X, y)[1], 3),
                     "sum y^2": round(float(y @ y), 1)})
    return rows


# --------------------------------------------------------------------------- claims


@claim("04", "Width p(n, 0.05) = O(log n) suffices for global convergence; width 8 does not",
       expect="n=200, d=400, 20 seeds: P(converged) >= 0.9 at every p >= p(n, 0.05) = 29 and <= 0.2 at every p <= 8",
       name="width_threshold")
def claim_width_threshold(fast: bool = False) -> Measured:
    n, d = 200, 400
    p_star = width_rule(n, 0.05)
    ps = (2, 4, 8, 16, p_star, 32)
    sr = success_rates(n, d, ps, 20)
    big = sr["p_conv"][sr["p"] >= p_star]
    small = sr["p_conv"][sr["p"] <= 8]
    values = {"p_rule": p_star, "min_P_conv_at_p>=29": float(big.min()), "max_P_conv_at_p<=8": float(small.max()),
              **{f"P_conv_p{p}": v for p, v in zip(ps, sr["p_conv"])},
              **{f"P_well_init_p{p}": v for p, v in zip(ps, sr["p_well"])}}
    holds = bool(big.min() >= 0.9 and small.max() <= 0.2)
    return Measured(values, holds=holds, details=sr,
                    summary=f"P(conv) {big.min():.2f} at p >= {p_star}, {small.max():.2f} at p <= 8")


@claim("04", "At width p(n, 0.05) the network converges for every n tried: log width is enough",
       expect="d = 2n, p = p(n, 0.05): P(converged) >= 0.9 for each n in {50, 100, 200, 400} (10 seeds each)",
       name="log_width_across_n")
def claim_log_width_across_n(fast: bool = False) -> Measured:
    ns, seeds = (50, 100, 200, 400), 10
    rates = {}
    for n in ns:
        p = width_rule(n, 0.05)
        rates[n] = (p, float(np.mean([run_once(n, 2 * n, p, s).converged for s in range(seeds)])))
    values = {**{f"p_n{n}": p for n, (p, _) in rates.items()}, **{f"P_conv_n{n}": v for n, (_, v) in rates.items()}}
    worst = min(v for _, v in rates.values())
    return Measured(values, holds=worst >= 0.9, details=rates,
                    summary=f"lowest P(conv) {worst:.2f} over n in {ns}")


@claim("04", "On orthogonal data the late exponential rate scales like 1/n",
       expect="d = n, p = p(n, 0.05), well-initialised runs to L <= 1e-25: log-log slope of the late rate "
              "against n in [-1.2, -0.7]",
       name="rate_one_over_n")
def claim_rate_one_over_n(fast: bool = False) -> Measured:
    ns, seeds = ((50, 100, 200), 2) if fast else ((50, 100, 200, 400), 2)
    rs = rate_scaling(ns, seeds)
    values = {"slope": rs["slope"], **{f"rate_n{n}": m for n, m in zip(ns, rs["mean_rate"])},
              **{f"n_x_rate_n{n}": n * m for n, m in zip(ns, rs["mean_rate"])}}
    return Measured(values, holds=-1.2 <= rs["slope"] <= -0.7, details=rs,
                    summary=f"slope {rs['slope']:.2f}; n x rate from {min(values[f'n_x_rate_n{n}'] for n in ns):.1f} "
                            f"to {max(values[f'n_x_rate_n{n}'] for n in ns):.1f}")


# --------------------------------------------------------------------------- figures and explorers

RESIDUAL_AXIS = "sum of squared residuals  sum_i r_i^2"
TIME_AXIS = "gradient-flow time t = lr x steps"


def residual_line(res: Result, name: str, color: str, dash: str = "solid") -> go.Scatter:
    """The curve sum_i r_i^2 against gradient-flow time of one run (downsampled)."""
    keep = thin_indices(len(res.trace))
    t, rsq = res.trace["t"][keep], res.trace["residual_sq"][keep]
    return go.Scatter(x=t, y=np.maximum(rsq, 1e-30), mode="lines", name=name,
                      line=dict(color=color, dash=dash, width=2.4))


@lru_cache(maxsize=8)
def baseline_runs(n: int = 200, d: int = 400, seed: int = 0, steps: int = 300) -> dict:
    """The ReLU net at width p(n, 0.05), random features with the same initialisation and width, and
    a wide network (p = n), all run ``steps`` steps or until sum r^2 <= 1e-10, on the same data;
    plus linear least squares and the random-features floor (the 'Watch it run' figure)."""
    p = width_rule(n, 0.05)
    gen = np.random.default_rng(seed)
    X, y = make_weakly_interacting_data(n, d, rng=gen)
    a, W = init_network(d, p, rng=gen)
    a_w, W_w = init_network(d, n, rng=gen)
    runs = {
        f"ReLU net, p = {p}": train_shallow_relu(X, y, a, W, maxiter=steps, tol=1e-10 * p / (2 * n)),
        f"random features, p = {p}": train_shallow_relu(X, y, a, W, maxiter=steps, tol=0.0, train_hidden=False),
        f"wide ReLU net, p = {n}": train_shallow_relu(X, y, a_w, W_w, maxiter=steps, tol=1e-10 / 2),
    }
    for name, res in runs.items():
        res.trace.method = name
    floor = random_features_floor(a, W, X, y) * 2 * n / p  # as a sum of squared residuals
    return {"runs": runs, "rf_floor": floor, "linear_rss": linear_least_squares(X, y)[1], "n": n, "d": d, "p": p}


def watch_figure(n: int = 200, d: int = 400, seed: int = 0) -> go.Figure:
    """Sum of squared residuals of the ReLU net, random features and a wide net on the same data,
    with the phases named: 'fitting' until sum r^2 <= 1 (the paper's convergence criterion),
    then the exponential phase of the local PL inequality; the random-features floor and linear
    least squares as horizontal lines."""
    ex = baseline_runs(n, d, seed)
    runs = list(ex["runs"].values())
    net = runs[0].trace
    t_conv = float(net["t"][net.first_below("residual_sq", 1.0)])
    t_end = float(net["t"][-1])
    fig = convergence_figure([r.trace for r in runs], "residual_sq", "t", phases=[
        Phase(0.0, t_conv, "fitting"), Phase(t_conv, t_end, "exponential (local PL) phase")],
        xaxis_title=TIME_AXIS, yaxis_title=RESIDUAL_AXIS, height=460)
    fig.add_hline(y=ex["rf_floor"], line=dict(color=color_for(1), dash="dot"),
                  annotation_text="random-features floor (projection bound)", annotation_position="bottom right")
    fig.add_hline(y=1.0, line=dict(color="#555", dash="dot"), annotation_text="converged: sum r^2 = 1",
                  annotation_position="top right")
    return fig


def success_figure(sr: dict, eps: float = 0.05) -> go.Figure:
    """P(converged) and P(well-initialised) against the width p, with the width rule marked."""
    grid = np.arange(1.0, float(np.max(sr["p"])) + 1.0)
    fig = go.Figure([
        go.Scatter(x=sr["p"], y=sr["p_conv"], mode="lines+markers", name="P(converged)",
                   line=dict(color=color_for(0), width=2.4), marker=dict(size=9)),
        go.Scatter(x=sr["p"], y=sr["p_well"], mode="lines+markers", name="P(well-initialised)",
                   line=dict(color=color_for(2), width=2.4, dash="dash"), marker=dict(size=9)),
        go.Scatter(x=grid, y=np.maximum(0.0, 1 - sr["n"] * 0.75**grid), mode="lines",
                   name="union bound max(0, 1 - n (3/4)^p)", line=dict(color="#888", dash="dot")),
    ])
    p_star = np.log(sr["n"] / eps) / np.log(4 / 3)
    fig.add_vline(x=p_star, line=dict(color=color_for(1), dash="dash"),
                  annotation_text=f"log(n/eps)/log(4/3) = {p_star:.1f}", annotation_position="bottom right")
    base_layout(fig, xaxis_title="hidden width p (neurons)", yaxis_title=f"probability over {sr['seeds']} seeds",
                height=420)
    fig.update_yaxes(range=[-0.03, 1.03])
    return fig


def coverage_traces(res: Result) -> list:
    """Coverage heatmap at initialisation (rows neurons, columns points; filled when the neuron
    serves the point) and red crosses above the points no neuron serves."""
    cov = res.coverage0.T.astype(float)  # (p, n)
    p, n = cov.shape
    unserved = np.flatnonzero(~res.coverage0.any(axis=1))
    return [
        go.Heatmap(z=cov, x=np.arange(n), y=np.arange(1, p + 1), colorscale=[[0, "#f4f4f4"], [1, color_for(0)]],
                   zmin=0, zmax=1, showscale=False, xaxis="x2", yaxis="y2", name="serves", hoverinfo="skip"),
        go.Scatter(x=unserved, y=np.full(unserved.size, p + 1.5), mode="markers", xaxis="x2", yaxis="y2",
                   marker=dict(symbol="x", color=color_for(1), size=8), name="point served by no neuron"),
    ]


def _two_panel_layout(fig: go.Figure, n: int, p_max: int, y_range: list[float], t_max: float) -> go.Figure:
    fig.update_layout(
        xaxis=dict(domain=[0, 0.46], title_text=TIME_AXIS, range=[0, t_max], autorange=False),
        yaxis=dict(type="log", range=y_range, autorange=False, title_text=RESIDUAL_AXIS, exponentformat="power"),
        xaxis2=dict(domain=[0.56, 1], anchor="y2", title_text="data point i", range=[-0.5, n - 0.5],
                    showline=True, linecolor="#888", mirror=True),
        yaxis2=dict(anchor="x2", title_text="neuron j", range=[0.5, p_max + 2.5], showline=True,
                    linecolor="#888", mirror=True),
    )
    return fig


def coverage_panel_traces(res: Result, t_max: float) -> list:
    """Left panel: sum r^2 of one run and the convergence threshold 1; right panel: coverage."""
    return [
        residual_line(res, f"ReLU net, p = {res.trace.meta['p']}", color_for(0)),
        go.Scatter(x=[0, t_max], y=[1, 1], mode="lines", name="threshold sum r^2 = 1 (converged)",
                   line=dict(color="#555", dash="dot")),
        *coverage_traces(res),
    ]


def width_slider_figure(n: int = 200, d: int = 400, seed: int = 0,
                        ps: tuple[int, ...] = (2, 4, 8, 16, 24, 29, 32)) -> go.Figure:
    """Static twin of :data:`EXPLORER_WIDTH`: one frame per width p (n, d, seed fixed)."""
    runs = [run_once(n, d, p, seed) for p in ps]
    t_max = max(float(r.trace["t"][-1]) for r in runs)
    steps = [SliderStep(f"{p}", coverage_panel_traces(r, t_max)) for p, r in zip(ps, runs)]
    fig = slider_figure(steps, slider_label="hidden width p", active=ps.index(8) if 8 in ps else 0,
                        fixed_axes=False, height=500)
    top = np.log10(max(float(r.trace["residual_sq"].max()) for r in runs))
    return _two_panel_layout(fig, n, max(ps), [-0.5, top + 0.2], t_max)


def width_figure(n: int, d: int, p: int, seed: int) -> go.Figure:
    """Live twin: the same two panels for one (n, d, p, seed)."""
    res = run_once(n, d, p, seed)
    t_max = float(res.trace["t"][-1])
    fig = go.Figure(coverage_panel_traces(res, t_max))
    base_layout(fig, height=500, title=(f"n = {n}, d = {d}, p = {p}: {'converged' if res.converged else 'not converged'}; "
                                        f"{int((~res.coverage0.any(axis=1)).sum())} unserved points at init"))
    return _two_panel_layout(fig, n, p, [-0.5, np.log10(float(res.trace["residual_sq"].max())) + 0.2], t_max)


EXPLORER_WIDTH = Explorer("04", "width", width_figure, {
    "n": Slider("points n", [25, 50, 100], 100),
    "d": Slider("dimension d", [25, 50, 100, 200, 300], 200),
    "p": Slider("width p", [2, 4, 8, 16, 24, 32], 8),
    "seed": Slider("seed", list(range(8)), 0),
}, description="loss curve and coverage heatmap for any (n, d, p, seed)")


def rate_traces(res: Result) -> list[go.Scatter]:
    """n x local rate ||grad L||^2 / L along the run, with the energy bounds 2 min E and 16 max E
    (all multiplied by n), against time divided by n."""
    n = res.trace.meta["n"]
    keep = thin_indices(len(res.trace))
    t, rate, e_min, e_max = (res.trace[k][keep] for k in ("t", "rate", "energy_min", "energy_max"))
    return [
        go.Scatter(x=t / n, y=16 * e_max, mode="lines", name="upper bound 16 max_i E_i",
                   line=dict(color=color_for(1), dash="dash")),
        go.Scatter(x=t / n, y=n * rate, mode="lines", name="n x local rate ||grad L||^2 / L",
                   line=dict(color=color_for(0), width=2.6)),
        go.Scatter(x=t / n, y=2 * e_min, mode="lines", name="lower bound 2 min_i E_i",
                   line=dict(color=color_for(2), dash="dash")),
    ]


def rate_slider_figure(ns: tuple[int, ...] = (50, 100, 200, 400), seed: int = 0) -> go.Figure:
    """Static twin of :data:`EXPLORER_RATE`: one frame per n, orthogonal data."""
    steps = [SliderStep(f"{n}", rate_traces(orthogonal_run(n, seed))) for n in ns]
    return slider_figure(steps, slider_label="number of points n (= d)", active=1, logy=True,
                         xaxis_title="rescaled time t / n", yaxis_title="n x local rate, n rho(t)",
                         height=470)


def rate_figure(n: int, seed: int) -> go.Figure:
    """Live twin: the local rate and its bounds for one orthogonal run."""
    fig = go.Figure(rate_traces(orthogonal_run(n, seed)))
    return base_layout(fig, xaxis_title="rescaled time t / n", yaxis_title="n x local rate, n rho(t)",
                       logy=True, height=470, title=f"orthogonal data, n = d = {n}, p = {width_rule(n)}")


EXPLORER_RATE = Explorer("04", "rate", rate_figure, {
    "n": Slider("points n (= d)", [20, 35, 50, 75], 50),
    "seed": Slider("seed", list(range(6)), 0),
}, description="local PL rate along the trajectory with the energy bounds")


def toy_traces(log10_n: float, p: int = 2, targets: tuple[float, ...] = (1.0, 2.0)) -> list[go.Scatter]:
    """Toy loss against t / t*_max (t*_max: the later of the groups' drop times), with the
    n -> infinity staircase: the loss drops by each group's share at its own t*."""
    n = 10.0 ** log10_n
    t_stars = [phase_transition_time(n, v, p) for v in targets]
    t_ref = max(t_stars)
    s = np.linspace(0.0, 1.75, 351)
    loss = phase_transition_loss(s * t_ref, n, targets=targets, p=p)
    shares = [v * v / (2.0 * p) for v in targets]  # each group's initial loss D^2/(2n)/p
    stair = np.array([sum(sh for sh, ts in zip(shares, t_stars) if si * t_ref < ts) for si in s])
    return [
        go.Scatter(x=s, y=stair, mode="lines", name="limit n -> infinity (steps at each t*)",
                   line=dict(color="#999", dash="dash", width=2)),
        go.Scatter(x=s, y=loss, mode="lines", name="closed-form loss L_n(t)", line=dict(color=color_for(0), width=2.6)),
    ]


def toy_slider_figure(log10_ns: tuple[float, ...] = (2, 4, 6, 8, 10, 12, 14, 16, 18)) -> go.Figure:
    """Static twin of :data:`EXPLORER_TOY`: one frame per n = 10^k."""
    steps = [SliderStep(f"10^{k:g}", toy_traces(k)) for k in log10_ns]
    return slider_figure(steps, slider_label="number of points n", active=1,
                         xaxis_title="normalised time t / t*  (t* = (np / 2D) log(pD) of the slower group)",
                         yaxis_title="loss L_n(t)", height=450)


def toy_figure(log10_n: float, p: int) -> go.Figure:
    """Live twin: the toy at any n = 10^k and width p."""
    fig = go.Figure(toy_traces(log10_n, p))
    return base_layout(fig, xaxis_title="normalised time t / t*", yaxis_title="loss L_n(t)", height=450,
                       title=f"n = 10^{log10_n:g}, p = {p}: relative drop width {drop_width(10.0 ** log10_n, 1.0, p):.3f}")


EXPLORER_TOY = Explorer("04", "phase_transition", toy_figure, {
    "log10_n": Slider("log10 n", list(range(2, 19)), 4),
    "p": Slider("width p", [1, 2, 4, 8], 2),
}, description="closed-form phase transition of the orthogonal toy model")
