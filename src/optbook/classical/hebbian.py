"""Chapter 05: spike-timing-dependent Hebbian learning as noisy gradient descent on the simplex
(Dexheimer, Gaudlitz and Schmidt-Hieber, NeurIPS 2025).

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
* :func:`projected_sgd` -- Euclidean projected SGD with fixed Gaussian noise, the "usual" noisy
  gradient descent the paper contrasts with;
* :func:`stdp_multi_output` -- several outputs with Gram-Schmidt decorrelation (official code).

Every trace records, per recorded iteration ``k``: ``objective`` = mean L(p) over replicas,
``grad_norm`` = mean norm of the replicator field, ``step_size`` = alpha, and the extra series
``gap_mean``, ``gap_median``, ``gap_q90`` (statistics of ``1 - max_i p_i``, the distance to the
nearest vertex) and ``success`` (fraction of replicas whose largest coordinate is the target).
"""
from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache

import numpy as np
import plotly.graph_objects as go
from scipy.special import logsumexp

from ..claims import Measured, claim
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
    semilog_slope,
)
from ..viz import (
    Phase,
    SliderStep,
    base_layout,
    color_for,
    convergence_figure,
    convergence_traces,
    phase_layout,
    slider_figure,
)
from ..widgets import Choice, Explorer, Slider

SPIKES = ("onehot", "bernoulli")

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


def _check_points(p, name: str = "p") -> np.ndarray:
    """A point (d,) or a stack of points (n, d) of the probability simplex, d >= 2."""
    try:
        arr = np.array(p, dtype=float)
    except (TypeError, ValueError) as err:
        raise ValueError(f"{name} must be an array of numbers") from err
    if arr.ndim not in (1, 2) or arr.shape[-1] < 2 or arr.size == 0:
        raise ValueError(f"{name} must have shape (d,) or (n, d) with d >= 2, got {arr.shape}")
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
    if w.ndim not in (1, 2) or w.shape[-1] != lam.size:
        raise ValueError(f"w must have shape (d,) or (n, d) with d = {lam.size}, got {w.shape}")
    if not np.all(np.isfinite(w)) or np.any(w < 0) or np.any(w.sum(axis=-1) <= 0):
        raise ValueError("w must be finite, non-negative and not all zero")
    q = lam * w
    return q / q.sum(axis=-1, keepdims=True)


def loss(p, gamma=None) -> np.ndarray | float:
    """L(p) = -p^T Gamma p / 2, the nonconvex (concave) loss on the simplex (Gamma = I: the
    uncorrelated case). Its minimisers over the simplex are the vertices."""
    p = _check_points(p)
    g = _check_gamma(gamma, p.shape[-1])
    val = -0.5 * np.einsum("...i,ij,...j->...", p, g, p)
    return float(val) if p.ndim == 1 else val


def replicator_field(p, gamma=None) -> np.ndarray:
    """p * (Gamma p - (p^T Gamma p) 1): the mean drift of STDP per unit alpha, i.e. minus the
    Shahshahani gradient of L (the official code's ``gradientL``)."""
    p = _check_points(p)
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


def _gap_from_logits(u: np.ndarray) -> np.ndarray:
    """1 - max_i p_i for p = softmax(u), without cancellation (accurate far below 1e-16)."""
    e = _unnormalised(u)
    e[u.argmax(axis=0), np.arange(u.shape[1])] = 0.0  # drop the largest term (exactly 1)
    others = e.sum(axis=0)
    return others / (1.0 + others)


def _gap_from_p(p: np.ndarray) -> np.ndarray:
    return np.maximum(p.sum(axis=0) - p.max(axis=0), 0.0)


def _log(p: np.ndarray) -> np.ndarray:
    out = np.full(p.shape, -np.inf)
    np.log(p, out=out, where=p > 0)
    return out


def _draw_spikes(e: np.ndarray, spikes: str, rng: np.random.Generator) -> np.ndarray:
    """B(k) for p = e / sum(e) (columns): one-hot with its index ~ Categorical(p) (which input
    caused the spike; one U(0,1) per column), or independent Bernoulli(p_i) (a (d, n) array of
    U(0,1)). Both have E[B] = p."""
    d, n = e.shape
    if spikes == "onehot":
        c = np.cumsum(e, axis=0)
        idx = np.minimum((c < rng.random(n) * c[-1]).sum(axis=0), d - 1)
        return (idx == np.arange(d)[:, None]).astype(float)
    return (rng.random((d, n)) * e.sum(axis=0) < e).astype(float)


def _start(p0, n_replicas) -> tuple[np.ndarray, int]:
    p0 = _check_points(p0, "p0")
    n_replicas = check_int(n_replicas, "n_replicas", minimum=1)
    if p0.ndim == 2:
        if n_replicas not in (1, p0.shape[0]):
            raise ValueError(f"n_replicas must be 1 or p0.shape[0] = {p0.shape[0]} when p0 is 2-D")
        return p0.copy(), p0.shape[0]
    return np.tile(p0, (n_replicas, 1)), n_replicas


def _run(method: str, p: np.ndarray, step: Callable, n_steps: int, *, logspace: bool, alpha: float,
         target, record_every: int, keep_paths: int, meta: dict, gamma: np.ndarray | None = None) -> Result:
    """Iterate ``step(state) -> state`` and record a row every ``record_every`` steps (and the last).
    The objective recorded is L(p) = -p^T gamma p / 2 (gamma = I by default)."""
    n, d = p.shape
    n_steps = check_int(n_steps, "n_steps", minimum=0)
    record_every = check_int(record_every, "record_every", minimum=1)
    keep_paths = check_int(keep_paths, "keep_paths", minimum=0)
    if keep_paths > n:
        raise ValueError(f"keep_paths must be <= the number of replicas ({n}), got {keep_paths}")
    if target is None:
        target = p.argmax(axis=1)
    else:
        target = check_int(target, "target", minimum=0)
        if target >= d:
            raise ValueError(f"target must index an input (0..{d - 1}), got {target}")
    state = np.ascontiguousarray(_log(p).T if logspace else p.T)
    trace = Trace(method, meta={"alpha": alpha, "n_replicas": n, **meta})
    paths, gaps = [], []

    def objective(q: np.ndarray) -> float:
        return float(np.mean(-0.5 * np.sum(q * (q if gamma is None else q @ gamma), axis=1)))

    def record(k: int) -> None:
        q = (_softmax(state) if logspace else state).T
        gap = _gap_from_logits(state) if logspace else _gap_from_p(state)
        field = _field(q, gamma)
        trace.record(iteration=k, objective=objective(q),
                     grad_norm=float(np.mean(np.linalg.norm(field, axis=1))), step_size=alpha,
                     gap_mean=float(gap.mean()), gap_median=float(np.median(gap)),
                     gap_q90=float(np.quantile(gap, 0.9)),
                     success=float(np.mean(q.argmax(axis=1) == target)))
        gaps.append(gap)
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
                 success_rate=float(np.mean(winner == target)),
                 gap=gaps[-1], gap_history=np.array(gaps))
    if keep_paths:
        res["paths"] = np.array(paths)  # (records, keep_paths, d)
    if logspace:
        res["log_p"] = (state - logsumexp(state, axis=0)).T
    return res


# --------------------------------------------------------------------------- the methods


def _spike_signal(u: np.ndarray, spikes: str, sigma: float, gen: np.random.Generator) -> np.ndarray:
    """B + sigma Z for the replicas in the columns of the log-weights u: the spike indicator and
    the timing noise, i.e. minus the paper's stochastic gradient (spikes drawn first, then Z)."""
    B = _draw_spikes(_unnormalised(u), spikes, gen)
    return B + sigma * gen.uniform(-1.0, 1.0, u.shape)


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
    alpha : float
        Learning rate, with 0 < alpha * max(1, noise_scale) < 1 so that every factor stays positive.
    n_steps : int
        Number of postsynaptic spikes K ("exponential in iterations" counts these).
    n_replicas : int
        Independent copies run at once (vectorised).
    noise_scale : float
        Multiplies Z (1 in the paper).
    spikes : {'onehot', 'bernoulli'}
        Distribution of B (the same mean p, different variance).
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
        ``x`` (final p, one row per replica), ``winner``, ``success_rate``, ``gap``
        (1 - max_i p_i per replica), ``gap_history`` (the same at every recorded iteration,
        records x replicas), ``log_p``, ``trace`` and optionally ``paths``.
    """
    p, _ = _start(p0, n_replicas)
    alpha = check_in_range(alpha, "alpha", 0.0, 1.0)
    sigma = check_positive(noise_scale, "noise_scale", allow_zero=True)
    if alpha * sigma >= 1.0:
        raise ValueError(f"alpha * noise_scale must be < 1 to keep the weights positive, got {alpha * sigma}")
    spikes = check_choice(spikes, "spikes", SPIKES)
    gen = as_rng(rng)

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
    and the same random draws as :func:`stdp`. STDP is its first-order expansion in alpha."""
    p, _ = _start(p0, n_replicas)
    alpha = check_positive(alpha, "alpha")
    sigma = check_positive(noise_scale, "noise_scale", allow_zero=True)
    spikes = check_choice(spikes, "spikes", SPIKES)
    gen = as_rng(rng)

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
    target: int | None = None,
    record_every: int = 1,
    keep_paths: int = 0,
    rng: RngLike = None,
    method_name: str = "projected noisy SGD",
) -> Result:
    """Euclidean projected SGD with a fixed noise level, the usual "noisy gradient descent":
    p <- Proj_simplex(p - alpha (grad L(p) + xi)), grad L(p) = -p, xi ~ N(0, noise_scale^2 I).
    Its noise does not vanish at a vertex, so it hovers at distance O(alpha) from it."""
    p, n = _start(p0, n_replicas)
    alpha = check_positive(alpha, "alpha")
    sigma = check_positive(noise_scale, "noise_scale", allow_zero=True)
    gen = as_rng(rng)

    def step(q):
        return project_simplex(q + alpha * q - alpha * sigma * gen.standard_normal(q.shape), axis=0)

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
    (already updated) weights, delta_m <- delta_m - sum_{j<m} <delta_m, w_j>/||w_j||^2 w_j (Gram-Schmidt), and sets
    w_m <- max(0, w_m + delta_m). Output m then learns the m-th most active input.

    Returns ``{"iteration": (R,), "p": (R, M, d) array of p(w_m), "w": final weights}``.
    """
    lam = check_vector(lam, "lam")
    if np.any(lam <= 0):
        raise ValueError("lam must be positive (firing intensities)")
    alphas = check_vector(alphas, "alphas")
    if np.any(alphas <= 0) or np.any(alphas * (1 + noise_scale) >= 1):
        raise ValueError("alphas must be positive with alpha * (1 + noise_scale) < 1")
    n_steps = check_int(n_steps, "n_steps", minimum=1)
    record_every = check_int(record_every, "record_every", minimum=1)
    sigma = check_positive(noise_scale, "noise_scale", allow_zero=True)
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
        delta = alphas[:, None] * w * (_draw_spikes(p.T, "onehot", gen).T + sigma * gen.uniform(-1, 1, (m, d)))
        for j in range(m):
            for i in range(j):
                delta[j] -= (delta[j] @ w[i]) / (w[i] @ w[i]) * w[i]
            w[j] = np.maximum(0.0, w[j] + delta[j])
        if not np.all(w.sum(axis=1) > 0):
            raise FloatingPointError(f"an output lost all its weight at step {k + 1} (alphas too large)")
    return {"iteration": np.array(iters), "p": np.array(ps), "w": w}


# --------------------------------------------------------------------------- the experiments


def decision_phase_end(trace: Trace, threshold: float = 1e-3) -> float:
    """First recorded iteration at which the median distance to the nearest vertex drops below
    ``threshold``: the end of the early, nonconvex phase in which the winner is decided."""
    hit = trace.first_below("gap_median", threshold)
    return float(trace.iteration[-1] if hit is None else hit)


@lru_cache(maxsize=8)
def _mean_run(alpha: float, n_steps: int, record_every: int) -> Result:
    return replicator(STARTS[3], alpha=alpha, n_steps=n_steps, record_every=record_every,
                      method_name="replicator")


NOISE_SCALES = (0.0, 0.5, 1.0, 2.0, 4.0)


@lru_cache(maxsize=32)
def convergence_experiment(noise_scale: float = 1.0, alpha: float = 0.01, n_replicas: int = 200,
                           horizon: float = 30.0, seed: int = 0, record_every: int = 15) -> dict[str, Result]:
    """STDP, exact noisy exponentiated gradient, the replicator and projected noisy SGD from the
    same start (uniform weights, lam = (10, 7.5, 5)) for K = horizon/alpha spikes. Cached: the
    "watch it run" figure, the phases slider and its live twin share it."""
    n_steps = int(round(horizon / alpha))
    common = dict(alpha=alpha, n_steps=n_steps, record_every=record_every)
    noisy = dict(n_replicas=n_replicas, noise_scale=noise_scale, **common)
    p0 = STARTS[3]
    return {
        "STDP": stdp(p0, rng=seed, **noisy),
        "noisy EG": noisy_exponentiated_gradient(p0, rng=seed, method_name="noisy EG", **noisy),
        "replicator": _mean_run(alpha, n_steps, record_every),
        "projected SGD": projected_sgd(p0, rng=seed + 1, method_name="projected SGD", **noisy),
    }


def _phases(trace: Trace) -> list[Phase]:
    end, last = decision_phase_end(trace), float(trace.iteration[-1])
    return [Phase(0.0, end, "decision"), Phase(end, last, "exponential, rate ~ alpha")]


def phases_parts(noise_scale: float = 1.0) -> tuple[list, dict]:
    """Traces (mean over replicas of 1 - max_i p_i for each method; the mean, not the median,
    because about half of the projected-SGD runs sit exactly on a vertex at any moment) and the phase shading at one noise level:
    shared by the static slider figure and the live explorer."""
    if noise_scale in NOISE_SCALES:
        _warm_noise_grid()
    runs = convergence_experiment(float(noise_scale))
    data = convergence_traces([r.trace for r in runs.values()], y="gap_mean")
    data[1].line.dash = "dash"  # noisy EG lies on top of STDP
    layout = phase_layout(_phases(runs["STDP"].trace))
    layout["annotations"].append(dict(
        x=0.99, y=0.04, xref="paper", yref="paper", xanchor="right", yanchor="bottom", showarrow=False,
        bgcolor="rgba(255,255,255,0.8)", font=dict(size=12),
        text=f"runs ending at e<sub>1</sub>: STDP {runs['STDP'].success_rate:.2f}, "
             f"projected SGD {runs['projected SGD'].success_rate:.2f}"))
    return data, layout


@lru_cache(maxsize=1)
def _warm_noise_grid() -> None:
    """Run the whole slider grid on the first request, so that every later move is a cache hit."""
    for s in NOISE_SCALES:
        convergence_experiment(float(s))


_PHASE_AXES = dict(xaxis_title="postsynaptic spikes k", yaxis_title="mean of 1 - max<sub>i</sub> p<sub>i</sub>(k)")


def phases_figure(noise_scale: float = 1.0) -> go.Figure:
    """Live twin of :func:`phases_slider_figure`: one noise level."""
    data, layout = phases_parts(noise_scale)
    fig = go.Figure(data)
    fig.update_layout(**layout)
    base_layout(fig, logy=True, height=450, **_PHASE_AXES)
    fig.update_yaxes(range=[-16.3, 0.2])
    return fig


def phases_slider_figure(values=NOISE_SCALES, active: float = 1.0) -> go.Figure:
    """Static twin: the convergence phases for each noise scale sigma, one slider position each."""
    steps = []
    for s in values:
        data, layout = phases_parts(s)
        steps.append(SliderStep(f"{s:g}", data, layout))
    fig = slider_figure(steps, slider_label="noise scale sigma", active=list(values).index(active),
                        logy=True, height=480, **_PHASE_AXES)
    fig.update_yaxes(range=[-16.3, 0.2])
    return fig


# ---- the simplex picture

SQRT3_2 = np.sqrt(3.0) / 2.0


def to_triangle(p) -> tuple[np.ndarray, np.ndarray]:
    """Cartesian coordinates of simplex points in an equilateral triangle: e1 at the top,
    e2 bottom left, e3 bottom right."""
    p = np.asarray(p, dtype=float)
    return p[..., 2] + 0.5 * p[..., 0], SQRT3_2 * p[..., 0]


@lru_cache(maxsize=1)
def _loss_grid(n: int = 41) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """L on a grid of the triangle's bounding box. L = -|p|^2/2 extends to the whole plane
    sum p = 1, so the contours are smooth up to the edges; white shapes hide the outside."""
    xs, ys = np.linspace(0, 1, n), np.linspace(0, SQRT3_2, n)
    X, Y = np.meshgrid(xs, ys)
    p1 = Y / SQRT3_2
    p3 = X - 0.5 * p1
    p2 = 1 - p1 - p3
    return np.round(xs, 4), np.round(ys, 4), np.round(-0.5 * (p1**2 + p2**2 + p3**2), 4)


@lru_cache(maxsize=1)
def _field_segments(m: int = 9, length: float = 0.055) -> tuple[list, list]:
    """Arrows of the replicator field on a barycentric lattice, as one None-separated polyline."""
    i, j = np.meshgrid(np.arange(1, m), np.arange(1, m), indexing="ij")
    keep = i + j < m
    P = np.stack([i[keep], j[keep], m - i[keep] - j[keep]], axis=1) / m
    V = replicator_field(P)
    x, y = to_triangle(P)
    dx, dy = V[:, 2] + 0.5 * V[:, 0], SQRT3_2 * V[:, 0]
    norm = np.hypot(dx, dy)
    scale = length * np.sqrt(norm / norm.max()) / np.maximum(norm, 1e-300)
    dx, dy = dx * scale, dy * scale
    xs, ys = [], []
    for x0, y0, u, v in zip(x, y, dx, dy):
        x1, y1 = x0 + u, y0 + v
        h = 0.35  # arrowhead: two short strokes back from the tip
        xs += [x0, x1, x1 - h * (u - 0.5 * v), None, x1, x1 - h * (u + 0.5 * v), None]
        ys += [y0, y1, y1 - h * (v + 0.5 * u), None, y1, y1 - h * (v - 0.5 * u), None]
    return [None if v is None else round(float(v), 4) for v in xs], [None if v is None else round(float(v), 4) for v in ys]


def _joined(paths: np.ndarray) -> tuple[list, list]:
    """Several paths (records, k, 3) as one None-separated line in triangle coordinates."""
    xs, ys = [], []
    for r in range(paths.shape[1]):
        x, y = to_triangle(paths[:, r])
        xs += np.round(x, 4).tolist() + [None]  # 4 decimals: invisible, and a lighter page
        ys += np.round(y, 4).tolist() + [None]
    return xs, ys


@lru_cache(maxsize=16)
def _mean_paths(alpha: float, n_steps: int, every: int) -> np.ndarray:
    return replicator(STARTS, alpha=alpha, n_steps=n_steps, record_every=every, keep_paths=len(STARTS)).paths


@lru_cache(maxsize=32)
def simplex_experiment(alpha: float = 0.05, spikes: str = "onehot", per_start: int = 2,
                       horizon: float = 20.0, seed: int = 5) -> dict:
    """STDP paths (``per_start`` replicas from each of the four starts) and replicator paths
    for K = horizon/alpha spikes, subsampled to <= ~100 points each. Cached."""
    n_steps = int(round(horizon / alpha))
    every = max(1, n_steps // 100)
    starts = np.repeat(STARTS, per_start, axis=0)
    run = stdp(starts, alpha=alpha, n_steps=n_steps, spikes=spikes, record_every=every,
               keep_paths=starts.shape[0], rng=seed)
    return {"stdp": run.paths, "replicator": _mean_paths(alpha, n_steps, every), "winner": run.winner,
            "target": starts.argmax(axis=1), "n_steps": n_steps}


SIMPLEX_ALPHAS = (0.005, 0.01, 0.02, 0.05, 0.1, 0.2)


@lru_cache(maxsize=2)
def _warm_alpha_grid(spikes: str) -> None:
    """Run the whole alpha grid of one spike model on its first request (later moves hit the cache)."""
    for a in SIMPLEX_ALPHAS:
        simplex_experiment(a, spikes)


_START_NAMES = ("start (0.25, 0.40, 0.35)", "start (0.40, 0.27, 0.33)", "start (0.22, 0.38, 0.40)",
                "start p(w uniform)")


def simplex_parts(alpha: float = 0.05, spikes: str = "onehot") -> list:
    """The traces of the simplex picture (always the same eight, so slider frames line up)."""
    if alpha in SIMPLEX_ALPHAS:
        _warm_alpha_grid(spikes)
    ex = simplex_experiment(float(alpha), spikes)
    xs, ys, Z = _loss_grid()
    data = [go.Contour(x=xs, y=ys, z=Z, colorscale="Blues_r", opacity=0.75, zmin=-0.5, zmax=-1 / 6,
                       contours=dict(start=-0.5, end=-1 / 6, size=1 / 30),
                       colorbar=dict(title=dict(text="L(p)", side="right"), len=0.8, tickformat=".2f"), showlegend=False,
                       hoverinfo="skip", line=dict(width=0.5))]
    fx, fy = _field_segments()
    data.append(go.Scatter(x=fx, y=fy, mode="lines", name="replicator field", hoverinfo="skip",
                           line=dict(color="#555", width=1)))
    rx, ry = _joined(ex["replicator"])
    data.append(go.Scatter(x=rx, y=ry, mode="lines", name="replicator (mean) paths",
                           line=dict(color="black", width=2, dash="dash")))
    per = ex["stdp"].shape[1] // len(STARTS)
    for s in range(len(STARTS)):
        px, py = _joined(ex["stdp"][:, s * per:(s + 1) * per])
        data.append(go.Scatter(x=px, y=py, mode="lines", name=f"STDP, {_START_NAMES[s]}",
                               line=dict(color=color_for(s + 1), width=1.8)))
    sx, sy = to_triangle(STARTS)
    data.append(go.Scatter(x=sx, y=sy, mode="markers", name="starting points",
                           marker=dict(size=10, color="white", line=dict(color="black", width=2))))
    return data


def _simplex_layout(fig: go.Figure) -> go.Figure:
    notes = [("e<sub>1</sub> (most active, lambda = 10)", 0.5, SQRT3_2 + 0.03, "bottom"),
             ("e<sub>2</sub> (lambda = 7.5)", 0.0, -0.03, "top"), ("e<sub>3</sub> (lambda = 5)", 1.0, -0.03, "top")]
    top, pad = SQRT3_2, 0.2
    outside = [f"M -{pad} -0.01 L 0 0 L 0.5 {top} L 0.5 {top + pad} L -{pad} {top + pad} Z",
               f"M {1 + pad} -0.01 L 1 0 L 0.5 {top} L 0.5 {top + pad} L {1 + pad} {top + pad} Z"]
    shapes = [dict(type="path", path=pth, fillcolor="white", line=dict(width=0), layer="above")
              for pth in outside]
    shapes.append(dict(type="path", path=f"M 0 0 L 1 0 L 0.5 {top} Z", line=dict(color="#444", width=1.5),
                       layer="above"))
    fig.update_layout(shapes=shapes,
                      annotations=[dict(x=x, y=y, text=t, showarrow=False, yanchor=a, font=dict(size=13))
                                   for t, x, y, a in notes])
    fig.update_xaxes(range=[-0.12, 1.12], visible=False, autorange=False)
    fig.update_yaxes(range=[-0.12, SQRT3_2 + 0.12], visible=False, scaleanchor="x", autorange=False)
    fig.update_layout(legend=dict(font=dict(size=11)))
    return fig


def simplex_figure(alpha: float = 0.05, spikes: str = "onehot") -> go.Figure:
    """Live twin of :func:`simplex_slider_figure`."""
    fig = base_layout(go.Figure(simplex_parts(alpha, spikes)), height=620)
    return _simplex_layout(fig)


def simplex_slider_figure(values=SIMPLEX_ALPHAS, active: float = 0.05) -> go.Figure:
    """Static twin: STDP paths on the simplex for each learning rate alpha."""
    steps = [SliderStep(f"{a:g}", simplex_parts(a)) for a in values]
    fig = slider_figure(steps, slider_label="learning rate alpha", active=list(values).index(active),
                        fixed_axes=False, height=660)
    return _simplex_layout(fig)


EXPLORER_SIMPLEX = Explorer(
    "05", "simplex", simplex_figure,
    {"alpha": Slider("learning rate alpha", SIMPLEX_ALPHAS, 0.05),
     "spikes": Choice("spike model B", SPIKES, "onehot")},
    description="STDP paths on the simplex over the loss contours and the replicator field",
)

EXPLORER_PHASES = Explorer(
    "05", "phases", phases_figure,
    {"noise_scale": Slider("noise scale sigma", NOISE_SCALES, 1.0)},
    description="distance to the nearest vertex: STDP vs its mean dynamics vs projected noisy SGD",
)


def watch_figure() -> go.Figure:
    """Convergence of the four methods at sigma = 1, alpha = 0.01, with the phases named."""
    runs = convergence_experiment(1.0)
    fig = convergence_figure([r.trace for r in runs.values()], y="gap_mean",
                             phases=_phases(runs["STDP"].trace), height=460, **_PHASE_AXES)
    fig.data[1].line.dash = "dash"  # noisy EG lies on top of STDP
    return fig


@lru_cache(maxsize=4)
def multi_output_figure(alphas: tuple[float, ...] = (0.01, 0.0075, 0.005), n_steps: int = 4000,
                        seed: int = 0) -> go.Figure:
    """Three outputs with Gram-Schmidt (lam = (10, 7.5, 5)): the probability p_{m,i}(k) that
    output m's next spike is caused by input i, for every pair (colour: output, dash: input)."""
    out = stdp_multi_output(LAMBDA, list(alphas), n_steps=n_steps, rng=seed, record_every=max(1, n_steps // 250))
    fig = go.Figure()
    dashes = ("solid", "dash", "dot")
    for m in range(len(alphas)):
        for i in range(LAMBDA.size):
            fig.add_trace(go.Scatter(x=out["iteration"], y=out["p"][:, m, i], mode="lines",
                                     name=f"output {m + 1}, input {i + 1}",
                                     line=dict(color=color_for(m), dash=dashes[i % 3], width=2)))
    return base_layout(fig, xaxis_title="postsynaptic spikes k (per output)",
                       yaxis_title="p<sub>m,i</sub>(k)", height=470)


# --------------------------------------------------------------------------- claims


def error_floor(result: Result, tail: float = 0.1) -> float:
    """Median over replicas of the time average of 1 - max_i p_i over the last ``tail`` fraction
    of the run: where a method settles (robust to the few replicas still undecided)."""
    tail = check_in_range(tail, "tail", 0.0, 1.0, closed=(False, True))
    it = result.trace.iteration
    window = it >= (1.0 - tail) * it[-1]
    return float(np.median(result.gap_history[window].mean(axis=0)))


@lru_cache(maxsize=8)
def identification_experiment(alpha: float = 0.01, n_replicas: int = 500, seed: int = 0,
                              horizon: float = 30.0) -> dict:
    """The headline check: STDP and projected SGD (N(0, 1) noise) from p(w uniform) with
    lam = (10, 7.5, 5), K = horizon/alpha spikes. Returns the runs and the measured figures."""
    n_steps = int(round(horizon / alpha))
    kw = dict(alpha=alpha, n_steps=n_steps, n_replicas=n_replicas, record_every=5)
    run = stdp(STARTS[3], rng=seed, **kw)
    sgd = projected_sgd(STARTS[3], rng=seed + 1, **kw)
    it = run.trace.iteration
    half = it >= n_steps / 2
    slope = semilog_slope(it[half], run.trace["gap_median"][half])
    floor_stdp, floor_sgd = error_floor(run), error_floor(sgd)
    return {"stdp": run, "sgd": sgd, "slope_over_alpha": slope / alpha, "success": run.success_rate,
            "success_sgd": sgd.success_rate, "floor_stdp": floor_stdp, "floor_sgd": floor_sgd,
            "median_gap_end": float(np.median(run.gap)), "median_gap_end_sgd": float(np.median(sgd.gap))}


@claim("05", "STDP identifies the most active input, exponentially fast in the number of spikes",
       expect="success >= 0.95 at alpha = 0.01 and the log-slope of the median 1 - max p over the "
              "second half in [-1.2 alpha, -0.8 alpha]",
       name="exponential_identification")
def claim_exponential_identification(fast: bool = False) -> Measured:
    ex = identification_experiment(0.01, 500 if fast else 2000)
    values = {"success_alpha_0.01": ex["success"], "slope_over_alpha": ex["slope_over_alpha"],
              "median_gap_at_K": ex["median_gap_end"]}
    if not fast:
        for a in (0.1, 0.03):
            values[f"success_alpha_{a:g}"] = identification_experiment(a, 2000)["success"]
    holds = ex["success"] >= 0.95 and -1.2 <= ex["slope_over_alpha"] <= -0.8
    return Measured(values, holds=holds, details=ex,
                    summary=f"success {ex['success']:.3f}, slope {ex['slope_over_alpha']:.2f} alpha per spike")


@claim("05", "Constant noise, no noise floor: STDP's error keeps falling where projected noisy SGD stalls",
       expect="at equal K = 3000, alpha = 0.01, noise scale 1: projected SGD's error floor (median over "
              "replicas of 1 - max p averaged over the last 10% of spikes) >= 100x STDP's",
       name="no_noise_floor")
def claim_no_noise_floor(fast: bool = False) -> Measured:
    ex = identification_experiment(0.01, 500 if fast else 2000)
    ratio = ex["floor_sgd"] / max(ex["floor_stdp"], 1e-300)
    values = {"floor_sgd": ex["floor_sgd"], "floor_stdp": ex["floor_stdp"], "ratio": ratio,
              "success_sgd": ex["success_sgd"]}
    return Measured(values, holds=ratio >= 100.0, details=ex,
                    summary=f"SGD floor {ex['floor_sgd']:.1e} vs STDP {ex['floor_stdp']:.1e} ({ratio:.0e}x)")
