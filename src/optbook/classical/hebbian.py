"""Chapter 05: spike-timing-dependent Hebbian learning as noisy gradient descent on the simplex
(Dexheimer, Gaudlitz and Schmidt-Hieber, NeurIPS 2025): the methods.

``d`` presynaptic neurons with intensities ``lam`` drive one postsynaptic neuron through weights
``w``. In the coordinates ``p_i = lam_i w_i / <lam, w>`` (the probability that input ``i`` causes
the next postsynaptic spike) the STDP rule is a multiplicative, noisy step on the probability
simplex for the concave loss ``L(p) = -||p||^2 / 2``; its mean is the replicator dynamics.

Methods (all vectorised over independent replicas, all returning a :class:`~optbook.core.Result`
with a :class:`~optbook.core.Trace`):

* :func:`stdp` -- the paper's Hebbian STDP weight dynamics, run in log-weights so that nothing
  underflows while ``p_i`` decays like ``exp(-alpha k)``;
* :func:`noisy_exponentiated_gradient` -- the exact noisy mirror-descent (entropy) step whose
  first-order expansion is the STDP step;
* :func:`replicator` -- the deterministic mean dynamics;
* :func:`projected_sgd` -- Euclidean projected SGD with a fixed noise level, the "usual" noisy
  gradient descent the paper contrasts with;
* :func:`hebbian_additive_noise` -- STDP's spike step with the timing noise *added* to p instead
  of multiplying the weights (the book's negative control);
* :func:`stdp_multi_output` -- several outputs with Gram-Schmidt decorrelation (official code).

Every noisy method draws its noise from one law, ``noise_scale * U(-1, 1)^d`` (the official
code's timing noise), so that comparisons between them are at equal noise.

Every trace records, per recorded iteration ``k``: ``objective`` = mean L(p) over replicas,
``grad_norm`` = mean norm of the replicator field, ``step_size`` = alpha (NaN when every
replica has its own), and the extra series
``gap_mean``, ``gap_median``, ``gap_q90`` (statistics of ``1 - max_i p_i``, the distance to the
nearest vertex) and ``success`` (fraction of replicas whose largest coordinate is the target).
The book's experiments, figures and claims live in :mod:`optbook.classical.hebbian_chapter`,
so that importing the methods does not import plotly.
"""
from __future__ import annotations

from collections.abc import Callable

import numpy as np
from scipy.special import logsumexp

from ..core import (
    Result,
    RngLike,
    Trace,
    as_rng,
    check_choice,
    check_in_range,
    check_int,
    check_matrix,
    check_positive,
    check_vector,
    project_simplex,
)

#: Spike models for B: one-hot (the input that caused the spike), independent Bernoulli(p_i),
#: or none (B = 0: the timing noise alone, no Hebbian reinforcement; a negative control).
SPIKES = ("onehot", "bernoulli", "none")

#: The setting of the headline check: intensities of the three inputs (official multi-output code).
LAMBDA = np.array([10.0, 7.5, 5.0])
#: Starting points of the official single-vector simulation, plus p(w) for uniform w and LAMBDA.
STARTS = np.array([[0.25, 0.40, 0.35], [0.40, 0.27, 0.33], [0.22, 0.38, 0.40],
                   [10 / 22.5, 7.5 / 22.5, 5 / 22.5]])


# --------------------------------------------------------------------------- geometry of the simplex


def _check_gamma(gamma, d: int) -> np.ndarray:
    if gamma is None:
        return np.eye(d)
    g = check_matrix(gamma, "gamma", shape=(d, d), square=True)
    if not np.allclose(g, g.T):
        raise ValueError("gamma must be symmetric")
    return g


def check_simplex_points(p, name: str = "p", d: int | None = None) -> np.ndarray:
    """A point (d,) or a stack of points (n, d) of the probability simplex, d >= 2 (or exactly
    ``d``), renormalised to sum to one; NaN, inf, empty arrays and points off the simplex (beyond
    a 1e-8 tolerance on the sum) are refused with a ``ValueError`` naming ``name``."""
    try:
        arr = np.array(p, dtype=float)
    except (TypeError, ValueError) as err:
        raise ValueError(f"{name} must be an array of numbers") from err
    if arr.ndim not in (1, 2) or arr.size == 0 or arr.shape[-1] < 2:
        raise ValueError(f"{name} must have shape (d,) or (n, d) with d >= 2 and n >= 1, got {arr.shape}")
    if d is not None and arr.shape[-1] != check_int(d, "d", minimum=2):
        raise ValueError(f"{name} must have {d} coordinates per point, got {arr.shape[-1]}")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must be finite (found NaN or inf)")
    if np.any(arr < 0) or not np.allclose(arr.sum(axis=-1), 1.0, atol=1e-8):
        raise ValueError(f"{name} must lie on the probability simplex (p >= 0, sum p = 1)")
    return arr / arr.sum(axis=-1, keepdims=True)


def presynaptic_p(lam, w) -> np.ndarray:
    """p(w) = lam * w / <lam, w>: the probability that input i triggers the next postsynaptic
    spike (the paper's change of coordinates from weights to the simplex). ``w`` is (d,) or (n, d)."""
    lam = check_vector(lam, "lam")
    if np.any(lam <= 0):
        raise ValueError("lam must be positive (firing intensities)")
    try:
        w = np.array(w, dtype=float)
    except (TypeError, ValueError) as err:
        raise ValueError("w must be an array of numbers") from err
    if w.ndim not in (1, 2) or w.size == 0 or w.shape[-1] != lam.size:
        raise ValueError(f"w must have shape (d,) or (n, d) with d = {lam.size} and n >= 1, got {w.shape}")
    if not np.all(np.isfinite(w)) or np.any(w < 0) or np.any(w.sum(axis=-1) <= 0):
        raise ValueError("w must be finite, non-negative and not all zero")
    q = lam * w
    return q / q.sum(axis=-1, keepdims=True)


def loss(p, gamma=None) -> np.ndarray | float:
    """L(p) = -p^T Gamma p / 2, the nonconvex (concave) loss on the simplex (Gamma = I: the
    uncorrelated case). Its minimisers over the simplex are the vertices."""
    p = check_simplex_points(p)
    g = _check_gamma(gamma, p.shape[-1])
    val = -0.5 * np.einsum("...i,ij,...j->...", p, g, p)
    return float(val) if p.ndim == 1 else val


def replicator_field(p, gamma=None) -> np.ndarray:
    """p * (Gamma p - (p^T Gamma p) 1): the mean drift of STDP per unit alpha, i.e. minus the
    Shahshahani gradient of L (the official code's ``gradientL``)."""
    p = check_simplex_points(p)
    return _field(p, _check_gamma(gamma, p.shape[-1]))


def _field(p: np.ndarray, g: np.ndarray | None = None) -> np.ndarray:
    gp = p if g is None else p @ g
    return p * (gp - np.sum(p * gp, axis=-1, keepdims=True))


# --------------------------------------------------------------------------- the run loop


def _unnormalised(u: np.ndarray) -> np.ndarray:
    return np.exp(u - u.max(axis=0))


def _softmax(u: np.ndarray) -> np.ndarray:
    e = _unnormalised(u)
    return e / e.sum(axis=0)


def _distance_to_vertex(state: np.ndarray, idx: np.ndarray, logspace: bool) -> np.ndarray:
    """1 - p_idx per replica (column), summing the other coordinates directly, so that the
    distance stays accurate far below 1e-16 (no cancellation in 1 - p)."""
    e = _unnormalised(state) if logspace else state
    cols = np.arange(state.shape[1])
    masked = e.copy()
    masked[idx, cols] = 0.0
    others = masked.sum(axis=0)
    return others / (others + e[idx, cols])


def _log(p: np.ndarray) -> np.ndarray:
    out = np.full(p.shape, -np.inf)
    np.log(p, out=out, where=p > 0)
    return out


def _draw_spikes(e: np.ndarray, spikes: str, rng: np.random.Generator) -> np.ndarray:
    """B(k) for p = e / sum(e) (columns): one-hot with its index ~ Categorical(p) (which input
    caused the spike; one U(0,1) per column), independent Bernoulli(p_i) (a (d, n) array of
    U(0,1)), or zero (no draw). One-hot and Bernoulli have E[B] = p."""
    d, n = e.shape
    if spikes == "onehot":
        c = np.cumsum(e, axis=0)
        idx = np.minimum((c < rng.random(n) * c[-1]).sum(axis=0), d - 1)
        return (idx == np.arange(d)[:, None]).astype(float)
    if spikes == "bernoulli":
        return (rng.random((d, n)) * e.sum(axis=0) < e).astype(float)
    return np.zeros((d, n))


def _timing_noise(shape: tuple[int, ...], sigma: float, rng: np.random.Generator) -> np.ndarray:
    """sigma * Z with Z ~ U(-1, 1) entrywise: the one noise law of every noisy method here."""
    return sigma * rng.uniform(-1.0, 1.0, shape)


def _start(p0, n_replicas) -> tuple[np.ndarray, int]:
    p0 = check_simplex_points(p0, "p0")
    n_replicas = check_int(n_replicas, "n_replicas", minimum=1)
    if p0.ndim == 2:
        if n_replicas not in (1, p0.shape[0]):
            raise ValueError(f"n_replicas must be 1 or p0.shape[0] = {p0.shape[0]} when p0 is 2-D")
        return p0.copy(), p0.shape[0]
    return np.tile(p0, (n_replicas, 1)), n_replicas


def _run(method: str, p: np.ndarray, step: Callable, n_steps: int, *, logspace: bool, alpha,
         target, record_every: int, keep_paths: int, meta: dict, gamma: np.ndarray | None = None) -> Result:
    """Iterate ``step(state) -> state`` and record a row every ``record_every`` steps (and the last).
    The objective recorded is L(p) = -p^T gamma p / 2 (gamma = I by default); the step size is
    NaN when ``alpha`` is one per replica (its values are in ``trace.meta``)."""
    n, d = p.shape
    n_steps = check_int(n_steps, "n_steps", minimum=0)
    record_every = check_int(record_every, "record_every", minimum=1)
    keep_paths = check_int(keep_paths, "keep_paths", minimum=0)
    if keep_paths > n:
        raise ValueError(f"keep_paths must be <= the number of replicas ({n}), got {keep_paths}")
    if target is None:
        target_idx = p.argmax(axis=1)
    else:
        target = check_int(target, "target", minimum=0)
        if target >= d:
            raise ValueError(f"target must index an input (0..{d - 1}), got {target}")
        target_idx = np.full(n, target)
    state = np.ascontiguousarray(_log(p).T if logspace else p.T)
    per_replica = np.ndim(alpha) > 0
    trace = Trace(method, meta={"alpha": tuple(alpha) if per_replica else alpha, "n_replicas": n, **meta})
    step_size = np.nan if per_replica else alpha
    paths, gaps, misses = [], [], []

    def objective(q: np.ndarray) -> float:
        return float(np.mean(-0.5 * np.sum(q * (q if gamma is None else q @ gamma), axis=1)))

    def record(k: int) -> None:
        q = (_softmax(state) if logspace else state).T
        gap = _distance_to_vertex(state, state.argmax(axis=0), logspace)
        field = _field(q, gamma)
        trace.record(iteration=k, objective=objective(q),
                     grad_norm=float(np.mean(np.linalg.norm(field, axis=1))), step_size=step_size,
                     gap_mean=float(gap.mean()), gap_median=float(np.median(gap)),
                     gap_q90=float(np.quantile(gap, 0.9)),
                     success=float(np.mean(q.argmax(axis=1) == target_idx)))
        gaps.append(gap)
        misses.append(_distance_to_vertex(state, target_idx, logspace))
        if keep_paths:
            paths.append(q[:keep_paths].copy())

    trace.restart_clock()
    for k in range(n_steps):
        if k % record_every == 0:
            record(k)
        state = step(state)
    record(n_steps)
    p_final = (_softmax(state) if logspace else state).T
    winner = p_final.argmax(axis=1)
    res = Result(x=p_final, fun=objective(p_final), nit=n_steps,
                 success=True, message=f"ran {n_steps} steps", trace=trace, winner=winner,
                 success_rate=float(np.mean(winner == target_idx)), n_success=int(np.sum(winner == target_idx)),
                 gap=gaps[-1], gap_history=np.array(gaps),
                 target_gap=misses[-1], target_gap_history=np.array(misses))
    if keep_paths:
        res["paths"] = np.array(paths)  # (records, keep_paths, d)
    if logspace:
        res["log_p"] = (state - logsumexp(state, axis=0)).T
    return res


# --------------------------------------------------------------------------- the methods


def _check_alpha(alpha, n: int, name: str = "alpha", closed: bool = False) -> float | np.ndarray:
    """A learning rate in (0, 1) (``closed``: in (0, 1]), or one per replica (an array of length
    n, for sweeps: it broadcasts over the replicas in the columns of the state)."""
    if np.ndim(alpha) == 0:
        return check_in_range(alpha, name, 0.0, 1.0, closed=(False, closed))
    a = check_vector(alpha, name, dim=n)
    if np.any((a <= 0) | ((a > 1) if closed else (a >= 1))):
        raise ValueError(f"{name} must lie in (0, 1{']' if closed else ')'} for every replica")
    return a


def _noisy_setup(p0, n_replicas, alpha, noise_scale, spikes, rng) -> tuple:
    p, n = _start(p0, n_replicas)
    alpha = _check_alpha(alpha, n)
    sigma = check_positive(noise_scale, "noise_scale", allow_zero=True)
    spikes = check_choice(spikes, "spikes", SPIKES)
    return p, alpha, sigma, spikes, as_rng(rng)


def _spike_signal(u: np.ndarray, spikes: str, sigma: float, gen: np.random.Generator) -> np.ndarray:
    """B + sigma Z for the replicas in the columns of the log-weights u: the spike indicator and
    the timing noise, i.e. minus the paper's stochastic gradient (spikes drawn first, then Z)."""
    B = _draw_spikes(_unnormalised(u), spikes, gen)
    return B + _timing_noise(u.shape, sigma, gen)


def stdp(
    p0,
    *,
    alpha: float = 0.01,
    n_steps: int = 3000,
    n_replicas: int = 1,
    noise_scale: float = 1.0,
    spikes: str = "onehot",
    target: int | None = None,
    record_every: int = 1,
    keep_paths: int = 0,
    rng: RngLike = None,
    method_name: str = "STDP",
) -> Result:
    """The Hebbian spike-timing-dependent plasticity rule of the paper, in simplex coordinates.

    One step per postsynaptic spike k: B(k) marks the input that caused the spike (one-hot,
    index ~ Categorical(p(k)); or independent Bernoulli(p_i) with ``spikes='bernoulli'``),
    Z(k) ~ U(-1, 1)^d is the timing noise (times ``noise_scale``), and the weights are
    multiplied, w(k+1) = w(k) * (1 + alpha (B(k) + Z(k))). In p = lam*w/<lam, w> this reads

        p(k+1) = p(k) * (1 + alpha (B + Z)) / <p(k), 1 + alpha (B + Z)>,

    a noisy multiplicative (mirror-descent) step for L(p) = -||p||^2/2 with the unbiased
    stochastic gradient -(B + Z). We iterate log p (up to a constant per replica), so coordinates
    decaying like exp(-alpha k) never underflow; the results equal the weight form (tested).

    Parameters
    ----------
    p0 : array (d,) or (n, d)
        Starting point(s) on the simplex; for weights w(0) use ``presynaptic_p(lam, w0)``.
    alpha : float or array (n_replicas,)
        Learning rate, with 0 < alpha * max(1, noise_scale) < 1 so that every factor stays
        positive; an array gives every replica its own (a sweep in one vectorised run).
    n_steps : int
        Number of postsynaptic spikes K ("exponential in iterations" counts these).
    n_replicas : int
        Independent copies run at once (vectorised).
    noise_scale : float
        Multiplies Z (1 in the paper).
    spikes : {'onehot', 'bernoulli', 'none'}
        Distribution of B (one-hot and Bernoulli: the same mean p, different variance; 'none'
        switches the Hebbian term off and leaves the timing noise alone).
    target : int, optional
        The input counted as a success; default the largest coordinate of p0 (the most active
        input when the weights start uniform).
    record_every, keep_paths : int
        Record a trace row every ``record_every`` steps; keep the p-paths of the first
        ``keep_paths`` replicas in ``result.paths``.
    rng : Generator, int or None
        Per step, the draws are: U(0,1)^n for the spikes (a (d, n) array for Bernoulli), then
        Z as a (d, n) array (replicas in columns).

    Returns
    -------
    Result
        ``x`` (final p, one row per replica), ``winner``, ``success_rate``, ``n_success``,
        ``gap`` (1 - max_i p_i per replica), ``target_gap`` (1 - p_target), their histories
        ``gap_history`` and ``target_gap_history`` (recorded iterations x replicas), ``log_p``,
        ``trace`` and optionally ``paths``.
    """
    p, alpha, sigma, spikes, gen = _noisy_setup(p0, n_replicas, alpha, noise_scale, spikes, rng)
    if np.max(alpha) * sigma >= 1.0:
        raise ValueError(f"alpha * noise_scale must be < 1 to keep the weights positive, got {np.max(alpha) * sigma}")

    def step(u):
        return u + np.log1p(alpha * _spike_signal(u, spikes, sigma, gen))

    return _run(method_name, p, step, n_steps, logspace=True, alpha=alpha, target=target,
                record_every=record_every, keep_paths=keep_paths,
                meta={"noise_scale": sigma, "spikes": spikes})


def noisy_exponentiated_gradient(
    p0,
    *,
    alpha: float = 0.01,
    n_steps: int = 3000,
    n_replicas: int = 1,
    noise_scale: float = 1.0,
    spikes: str = "onehot",
    target: int | None = None,
    record_every: int = 1,
    keep_paths: int = 0,
    rng: RngLike = None,
    method_name: str = "noisy exponentiated gradient",
) -> Result:
    """Noisy mirror descent with the entropy mirror map (exponentiated gradient):
    p <- p * exp(-alpha g) / <p, exp(-alpha g)> with g = -(B + Z), the same stochastic gradient
    and the same random draws as :func:`stdp`. STDP is its first-order expansion in alpha.
    ``alpha`` may be one per replica, as in :func:`stdp`."""
    p, alpha, sigma, spikes, gen = _noisy_setup(p0, n_replicas, alpha, noise_scale, spikes, rng)

    def step(u):
        return u + alpha * _spike_signal(u, spikes, sigma, gen)

    return _run(method_name, p, step, n_steps, logspace=True, alpha=alpha, target=target,
                record_every=record_every, keep_paths=keep_paths,
                meta={"noise_scale": sigma, "spikes": spikes})


def replicator(
    p0,
    *,
    alpha: float = 0.01,
    n_steps: int = 3000,
    gamma=None,
    target: int | None = None,
    record_every: int = 1,
    keep_paths: int = 0,
    method_name: str = "replicator (mean dynamics)",
) -> Result:
    """The deterministic mean dynamics of STDP (discrete replicator equation):
    p <- p * (1 + alpha Gamma p) / <p, 1 + alpha Gamma p>. Along it L decreases (it is the
    gradient flow of L in the Shahshahani metric, discretised)."""
    p, _ = _start(p0, 1)
    alpha = check_in_range(alpha, "alpha", 0.0, 1.0)
    g = _check_gamma(gamma, p.shape[1])
    if np.any(g < 0):
        raise ValueError("gamma must be entrywise non-negative (a correlation pattern)")

    def step(u):
        return u + np.log1p(alpha * (g @ _softmax(u)))

    return _run(method_name, p, step, n_steps, logspace=True, alpha=alpha, target=target,
                record_every=record_every, keep_paths=min(keep_paths, p.shape[0]), meta={}, gamma=g)


def projected_sgd(
    p0,
    *,
    alpha: float = 0.01,
    n_steps: int = 3000,
    n_replicas: int = 1,
    noise_scale: float = 1.0,
    decay: float = 1.0,
    decay_after: int = 0,
    target: int | None = None,
    record_every: int = 1,
    keep_paths: int = 0,
    rng: RngLike = None,
    method_name: str = "projected noisy SGD",
) -> Result:
    """Euclidean projected SGD with a fixed noise level, the usual "noisy gradient descent":
    p <- Proj_simplex(p - alpha (grad L(p) + xi)) with the exact gradient grad L(p) = -p and
    xi = noise_scale * Z, Z ~ U(-1, 1)^d: the same noise law as :func:`stdp`'s timing noise, and
    no spike noise (the kinder oracle). Its noise does not vanish at a vertex, so it hovers at a
    distance O(alpha) from it when the noise can beat the pull of the gradient at the corner
    (for noise_scale <= 1/2 a vertex absorbs every kick). The projection is the sort-based
    Euclidean one. ``alpha`` may be one per replica, as in :func:`stdp`.

    ``decay < 1`` turns the fixed step into a step-decay schedule, alpha_k = alpha * decay **
    max(0, k - decay_after): held for ``decay_after`` steps, then shrunk geometrically (``decay``
    may also be one per replica; the trace records the initial alpha). This is not the paper's
    baseline, whose step is fixed; the chapter uses it to show what a schedule does to the floor."""
    p, alpha, sigma, _, gen = _noisy_setup(p0, n_replicas, alpha, noise_scale, "none", rng)
    decay = _check_alpha(decay, p.shape[0], "decay", closed=True)
    decay_after = check_int(decay_after, "decay_after", minimum=0)
    k = 0

    def step(q):
        nonlocal k
        a = alpha * decay ** max(0, k - decay_after)
        k += 1
        return project_simplex(q + a * (q + _timing_noise(q.shape, sigma, gen)), axis=0)

    return _run(method_name, p, step, n_steps, logspace=False, alpha=alpha, target=target,
                record_every=record_every, keep_paths=keep_paths,
                meta={"noise_scale": sigma, "decay": tuple(decay) if np.ndim(decay) else decay,
                      "decay_after": decay_after})


def hebbian_additive_noise(
    p0,
    *,
    alpha: float = 0.01,
    n_steps: int = 3000,
    n_replicas: int = 1,
    noise_scale: float = 1.0,
    target: int | None = None,
    record_every: int = 1,
    keep_paths: int = 0,
    rng: RngLike = None,
    method_name: str = "Hebbian step + additive noise",
) -> Result:
    """STDP with its key ingredient removed: the Hebbian spike step is kept,
    p' = p * (1 + alpha B) / <p, 1 + alpha B> with the same one-hot B, but the timing noise is
    *added* to p instead of multiplying the weights, p <- Proj_simplex(p' + alpha * noise_scale * Z)
    with Z ~ U(-1, 1)^d. The noise no longer shrinks with p_i (the book's negative control).
    ``alpha`` may be one per replica, as in :func:`stdp`."""
    p, alpha, sigma, _, gen = _noisy_setup(p0, n_replicas, alpha, noise_scale, "onehot", rng)

    def step(q):
        f = 1.0 + alpha * _draw_spikes(q, "onehot", gen)
        q = q * f / np.sum(q * f, axis=0)
        return project_simplex(q + alpha * _timing_noise(q.shape, sigma, gen), axis=0)

    return _run(method_name, p, step, n_steps, logspace=False, alpha=alpha, target=target,
                record_every=record_every, keep_paths=keep_paths, meta={"noise_scale": sigma})


def stdp_multi_output(
    lam,
    alphas,
    *,
    n_steps: int = 4000,
    w0=None,
    noise_scale: float = 1.0,
    record_every: int = 10,
    rng: RngLike = None,
) -> dict:
    """Several postsynaptic neurons, one weight vector w_m each (the official code's extension).

    Each output m draws its own B_m ~ one-hot Categorical(p(w_m)) and Z_m ~ U(-1, 1)^d, proposes
    delta_m = alpha_m w_m * (B_m + Z_m), removes the components along the earlier outputs'
    (already updated) weights, delta_m <- delta_m - sum_{j<m} <delta_m, w_j>/||w_j||^2 w_j
    (Gram-Schmidt), and sets w_m <- max(0, w_m + delta_m). Output m then learns the m-th most
    active input.

    Returns ``{"iteration": (R,), "p": (R, M, d) array of p(w_m), "w": final weights}``.
    """
    lam = check_vector(lam, "lam")
    if np.any(lam <= 0):
        raise ValueError("lam must be positive (firing intensities)")
    sigma = check_positive(noise_scale, "noise_scale", allow_zero=True)
    alphas = check_vector(alphas, "alphas")
    if np.any(alphas <= 0) or np.any(alphas * (1 + sigma) >= 1):
        raise ValueError("alphas must be positive with alpha * (1 + noise_scale) < 1")
    n_steps = check_int(n_steps, "n_steps", minimum=1)
    record_every = check_int(record_every, "record_every", minimum=1)
    m, d = alphas.size, lam.size
    w = np.full((m, d), 1.0 / d) if w0 is None else check_matrix(w0, "w0", shape=(m, d))
    if np.any(w <= 0):
        raise ValueError("w0 must be positive")
    gen = as_rng(rng)
    iters, ps = [], []
    for k in range(n_steps + 1):
        p = lam * w / (w @ lam)[:, None]
        if k % record_every == 0 or k == n_steps:
            iters.append(k)
            ps.append(p)
        if k == n_steps:
            break
        signal = _draw_spikes(p.T, "onehot", gen).T + _timing_noise((m, d), sigma, gen)
        delta = alphas[:, None] * w * signal
        for j in range(m):
            for i in range(j):
                delta[j] -= (delta[j] @ w[i]) / (w[i] @ w[i]) * w[i]
            w[j] = np.maximum(0.0, w[j] + delta[j])
        if not np.all(w.sum(axis=1) > 0):
            raise FloatingPointError(f"an output lost all its weight at step {k + 1} (alphas too large)")
    return {"iteration": np.array(iters), "p": np.array(ps), "w": w}
