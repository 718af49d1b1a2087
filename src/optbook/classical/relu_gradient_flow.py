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

This module holds the method and its baselines (numpy only); the book's experiments, claims,
figures and live explorers are in :mod:`optbook.classical.relu_gradient_flow_chapter`.
"""
from __future__ import annotations

import numpy as np

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
)
from ..core.threads import one_blas_thread

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


def _residual_terms(a, Z, y):
    """Unchecked loss, grad_a, residuals r and the (n, p) matrix M_ij = r_i 1[w_j . x_i > 0], all
    from the pre-activations Z_ij = w_j . x_i (every gradient is built from these)."""
    n, p = y.size, a.size
    S = np.maximum(Z, 0.0)                        # relu
    r = S @ a / p - y                             # residuals h(x_i) - y_i
    loss = p / (2.0 * n) * float(r @ r)
    ga = S.T @ r / n                              # dL/da_j = (1/n) sum_i r_i relu(w_j . x_i)
    M = (Z > 0) * r[:, None]                      # (n, p): r_i 1[w_j . x_i > 0]
    return loss, ga, M, r


def _loss_grad(a, W, X, y):
    """Unchecked loss and gradients.

    ``X`` is either the (n, k) data matrix or, for orthogonal data, the 1-D diagonal of a square
    one (then W is (p, n) and every product below is O(np) instead of O(n k p)).
    Returns the loss, grad_a, grad_W, the residuals r and the pre-activations Z.
    """
    n = y.size
    diagonal = X.ndim == 1
    Z = X[:, None] * W.T if diagonal else X @ W.T  # (n, p): w_j . x_i
    loss, ga, M, r = _residual_terms(a, Z, y)
    gW = (a[:, None] / n) * (M.T * X if diagonal else M.T @ X)   # dL/dw_j = (a_j/n) sum_i r_i 1[.] x_i
    return loss, ga, gW, r, Z


def _orthogonal_columns(X: np.ndarray) -> np.ndarray | None:
    """For exactly orthogonal data of the paper's form (one non-zero entry per row, in distinct
    columns: experiment 2), the column of each row's entry; otherwise None."""
    nonzero = X != 0
    if np.all(nonzero.sum(axis=1) == 1):
        cols = np.argmax(nonzero, axis=1)
        if np.unique(cols).size == X.shape[0]:
            return cols
    return None


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
    ftol: float = 0.0,
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
    ftol : float
        Also stop when one step changes the loss by less than ``ftol * L`` (a stalled run, e.g. a
        point that no neuron serves on orthogonal data, whose residual can never move). Default 0:
        off. A run that converges exponentially at rate rho lowers L by about rho L per step.
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
    if not isinstance(train_hidden, (bool, np.bool_)):
        raise ValueError(f"train_hidden must be a bool, got {train_hidden!r}")
    maxiter = epoch_budget(n, p, lr) if maxiter is None else check_int(maxiter, "maxiter", minimum=0)
    tol = convergence_threshold(n, p) if tol is None else check_positive(tol, "tol", allow_zero=True)
    ftol = check_in_range(ftol, "ftol", 0.0, 1.0, closed=(True, False))
    name = method_name or (f"ReLU net (p = {p})" if train_hidden else f"random features (p = {p})")
    trace = Trace(name, meta=dict(n=n, d=X.shape[1], p=p, lr=lr, train_hidden=bool(train_hidden)))
    message, success = "maximum number of iterations reached", False
    previous = np.inf
    # Three exact ways to take the same steps, the cheapest for the data at hand:
    # - orthogonal data: only w_j's entries on the data's columns move, and x_i . w_j is one product;
    # - d >= n: a step moves the pre-activations Z = X W^T by -lr G M diag(a/n), G = X X^T the
    #   Gram matrix (the points' interactions): one (n, n) x (n, p) product per step, and W itself
    #   is rebuilt once at the end from the accumulated coefficients C, W = W0 + C X;
    # - n > d: plain steps on W.
    cols = _orthogonal_columns(X)
    gram = cols is None and n <= X.shape[1]
    if gram:
        G, Z, C = X @ X.T, X @ W.T, np.zeros((p, n))
    else:
        Xc, Wc = (X[np.arange(n), cols], W[:, cols]) if cols is not None else (X, W)
    with one_blas_thread(), np.errstate(over="ignore", invalid="ignore"):
        for k in range(maxiter + 1):
            if gram:
                loss, ga, M, r = _residual_terms(a, Z, y)
                if train_hidden:
                    GM = G @ M                            # (n, p); ||dL/dw_j||^2 = (a_j/n)^2 M_j . (G M)_j
                    gw_sq = float(np.sum((a / n) ** 2 * np.einsum("ij,ij->j", M, GM)))
            else:
                loss, ga, gW, r, Z = _loss_grad(a, Wc, Xc, y)
                gw_sq = float(np.vdot(gW, gW))
            if not np.isfinite(loss):
                message = "loss became non-finite (step size too large?)"
                break
            active = Z > 0
            sign_match = np.outer(y, a) > 0               # a_j y_i > 0
            E = active @ (a * a) / p                      # energies E_i
            gsq = float(ga @ ga) + (gw_sq if train_hidden else 0.0)
            trace.record(objective=loss, grad_norm=np.sqrt(gsq), step_size=lr, t=lr * k,
                         rate=gsq / loss if loss > 0 else np.nan, residual_sq=float(r @ r),
                         energy_min=E.min(), energy_max=E.max(),
                         served=np.mean((active & sign_match).any(axis=1)))
            if loss <= tol:
                message, success = "loss below tol", True
                break
            if ftol > 0 and k > 0 and abs(previous - loss) < ftol * loss:
                message = "loss stalled (relative decrease below ftol)"
                break
            previous = loss
            if k == maxiter:
                break
            if train_hidden:
                if gram:
                    step = lr * a / n
                    Z, C = Z - GM * step, C - step[:, None] * M.T
                else:
                    Wc = Wc - lr * gW
            a = a - lr * ga
        # Back to the full (p, d) weights and the gradient at the final state.
        if gram:
            W, grad_W = W + C @ X, (a[:, None] / n) * (M.T @ X)
        elif cols is not None:
            W, grad_W = W.copy(), np.zeros_like(W)
            W[:, cols], grad_W[:, cols] = Wc, gW
        else:
            W, grad_W = Wc, gW
    converged = bool(loss <= convergence_threshold(n, p))
    return Result(x=np.concatenate([a, W.ravel()]), a=a, W=W, fun=loss, jac=np.concatenate([ga, grad_W.ravel()]),
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
