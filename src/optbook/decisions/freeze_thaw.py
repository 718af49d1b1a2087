"""Cost-sensitive freeze-thaw Bayesian optimisation (CFBO; Lee et al., NeurIPS 2025).

Hyperparameter optimisation as a sequence of one-epoch decisions over a pool of ``N``
configurations, each trainable for up to ``T`` epochs, under a global budget of ``B`` epochs.
The user trades accuracy against compute through a **utility** ``U(b, y) = y - alpha (b/B)^c``;
CFBO continues the configuration with the largest expected utility gain (maximised over a
lookahead) and stops the whole run once the utility has fallen far enough from its running peak,
given the chance of further improvement.

The paper's surrogate is a transformer learning-curve extrapolator (a PFN) meta-trained with
"LC mixup". Here it is replaced by a CPU-sized particle model of parametric curves whose prior
is fitted to meta-train curves (with both mixups); the utility, the acquisition and the stopping
rule follow the official code (``algorithm/cfbo.py``), the surrogate does not.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy.optimize import minimize
from scipy.special import betainc, expit

from ..core import as_rng, check_in_range, check_int, check_positive, check_real

#: Parameters of one curve: asymptote, start, log time scale, shape.
PARAMS = ("y_inf", "y_0", "log_omega", "kappa")
#: The broad (no-transfer) prior: independent uniforms on these boxes.
BROAD_BOX = np.array([[0.05, 0.98], [0.0, 0.3], [np.log(0.5), np.log(40.0)], [0.5, 2.0]])


# --------------------------------------------------------------------------- utility


def utility(b: Any, y: Any, alpha: float, c: float, budget: int) -> np.ndarray:
    """The user's utility ``U(b, y) = y - alpha (b/B)^c``, ``-inf`` beyond the budget ``B``.

    ``b`` epochs spent, ``y`` the best score so far (in [0, 1], higher is better); vectorised
    (broadcasts ``b`` against ``y``). ``alpha = 0`` is conventional HPO (utility = accuracy).
    """
    alpha = check_in_range(alpha, "alpha", 0.0, 1.0, closed=(True, True))
    c = check_positive(c, "c")
    budget = check_int(budget, "budget", minimum=1)
    b = np.asarray(b, dtype=float)
    y = np.asarray(y, dtype=float)
    if np.any(b < 0):
        raise ValueError("b must be non-negative")
    with np.errstate(invalid="ignore"):
        u = y - alpha * (np.minimum(b, budget) / budget) ** c
    return np.where(b > budget, -np.inf, u)


def fit_utility(o1: Any, o2: Any, prefer_first: Any, budget: int) -> dict[str, float]:
    """Fit ``(alpha, c)`` (and a temperature ``kappa``) to a user's choices between outcomes.

    ``o1``, ``o2`` are arrays of shape (m, 2) holding ``(b, y)`` pairs and ``prefer_first`` (m,)
    says whether the user preferred ``o1``. Bradley-Terry likelihood
    ``P(o1 > o2) = sigmoid(kappa [U(o1) - U(o2)])``, maximised by L-BFGS-B (our reconstruction of
    the paper's preference fit, whose exact form we did not read).
    """
    o1, o2 = np.asarray(o1, dtype=float), np.asarray(o2, dtype=float)
    if o1.ndim != 2 or o1.shape[1] != 2 or o1.shape != o2.shape or o1.shape[0] == 0:
        raise ValueError(f"o1 and o2 must both have shape (m, 2) with m >= 1, got {o1.shape} and {o2.shape}")
    if not (np.all(np.isfinite(o1)) and np.all(np.isfinite(o2))):
        raise ValueError("o1 and o2 must be finite")
    pref = np.asarray(prefer_first, dtype=float)
    if pref.shape != (o1.shape[0],) or not np.all(np.isin(pref, (0.0, 1.0))):
        raise ValueError("prefer_first must hold one 0/1 choice per pair")
    budget = check_int(budget, "budget", minimum=1)
    f1, f2 = np.minimum(o1[:, 0], budget) / budget, np.minimum(o2[:, 0], budget) / budget
    s = 2.0 * pref - 1.0

    def nll(theta: np.ndarray) -> float:
        a, logc, logk = theta
        d = (o1[:, 1] - o2[:, 1]) - a * (f1 ** np.exp(logc) - f2 ** np.exp(logc))
        return float(np.sum(np.logaddexp(0.0, -s * np.exp(logk) * d)))

    starts = [np.array([a0, 0.0, np.log(20.0)]) for a0 in (0.1, 0.5, 0.9)]
    bounds = [(0.0, 1.0), (np.log(0.2), np.log(5.0)), (np.log(0.1), np.log(1e3))]
    best = min((minimize(nll, x0, method="L-BFGS-B", bounds=bounds) for x0 in starts), key=lambda r: r.fun)
    return {"alpha": float(best.x[0]), "c": float(np.exp(best.x[1])), "kappa": float(np.exp(best.x[2]))}


# --------------------------------------------------------------------------- curves and surrogate


def curve(theta: Any, T: int) -> np.ndarray:
    """The parametric learning curve ``y_t = y_inf - (y_inf - y_0) exp(-(t/omega)^kappa)``, t = 1..T.

    ``theta`` has shape (..., 4) in the order of :data:`PARAMS`; returns shape (..., T).
    """
    theta = np.asarray(theta, dtype=float)
    if theta.shape[-1:] != (4,):
        raise ValueError(f"theta must have last dimension 4 {PARAMS}, got shape {theta.shape}")
    T = check_int(T, "T", minimum=1)
    log_t = np.log(np.arange(1, T + 1, dtype=float))
    yi, y0, lw, k = (theta[..., j, None] for j in range(4))
    return yi - (yi - y0) * np.exp(-np.exp(k * (log_t - lw)))  # (t / omega)^kappa via one exp


def broad_prior(n: int, rng: Any = None) -> np.ndarray:
    """``n`` particles from the broad, no-transfer prior (uniform on :data:`BROAD_BOX`)."""
    n = check_int(n, "n", minimum=1)
    g = as_rng(rng)
    return BROAD_BOX[:, 0] + (BROAD_BOX[:, 1] - BROAD_BOX[:, 0]) * g.random((n, 4))


def fit_curves(Y: Any, candidates: int = 3000, rng: Any = None) -> np.ndarray:
    """Fit each row of ``Y`` (curves, shape (m, T)) by the best of ``candidates`` broad-prior
    particles in squared error, refined by one local jitter round. Returns (m, 4)."""
    Y = np.asarray(Y, dtype=float)
    if Y.ndim != 2 or Y.size == 0 or not np.all(np.isfinite(Y)):
        raise ValueError(f"Y must be a finite 2-D array of curves, got shape {Y.shape}")
    g = as_rng(rng)
    cand = broad_prior(check_int(candidates, "candidates", minimum=1), g)
    F = curve(cand, Y.shape[1])
    out = np.empty((Y.shape[0], 4))
    for lo in range(0, Y.shape[0], 64):  # chunks keep the (m, K, T) array small
        err = ((Y[lo:lo + 64, None, :] - F[None]) ** 2).sum(-1)
        out[lo:lo + 64] = cand[np.argmin(err, axis=1)]
    width = 0.05 * (BROAD_BOX[:, 1] - BROAD_BOX[:, 0])
    jit = out[:, None, :] + width * g.standard_normal((Y.shape[0], 32, 4))
    jit = np.clip(jit, BROAD_BOX[:, 0], BROAD_BOX[:, 1])
    jit[:, 0] = out
    err = ((Y[:, None, :] - curve(jit, Y.shape[1])) ** 2).sum(-1)
    return jit[np.arange(Y.shape[0]), np.argmin(err, axis=1)]


def lc_mixup(X: Any, tables: Any, n_dataset: int, n_hyper: int, rng: Any = None) -> tuple[np.ndarray, np.ndarray]:
    """LC mixup (the paper's transfer augmentation), both kinds, ``lambda ~ Beta(1, 1)``.

    ``X`` (N, d) is the configuration grid shared by the meta-train tasks, ``tables`` (K, N, T)
    their curves. Dataset mixup mixes whole tables of two tasks, ``lam Y_D + (1 - lam) Y_D'``;
    hyperparameter mixup mixes two (x, curve) pairs of one task. Returns the augmented pairs
    ``(x, y)`` of shapes (M, d), (M, T): the originals first, then ``n_dataset`` mixed tables, then
    ``n_hyper`` mixed pairs. Convex combinations, so curves stay in [0, 1].
    """
    X = np.asarray(X, dtype=float)
    tables = np.asarray(tables, dtype=float)
    if X.ndim != 2 or tables.ndim != 3 or tables.shape[1] != X.shape[0] or tables.shape[0] < 2:
        raise ValueError(f"tables must have shape (K >= 2, N, T) with N = len(X); got {tables.shape}, X {X.shape}")
    if not (np.all(np.isfinite(X)) and np.all(np.isfinite(tables))):
        raise ValueError("X and tables must be finite")
    n_dataset = check_int(n_dataset, "n_dataset")
    n_hyper = check_int(n_hyper, "n_hyper")
    g = as_rng(rng)
    K, N, _ = tables.shape
    xs, ys = [np.tile(X, (K, 1))], [tables.reshape(K * N, -1)]
    if n_dataset:
        a, b = g.integers(K, size=n_dataset), g.integers(K, size=n_dataset)
        lam = g.beta(1.0, 1.0, size=(n_dataset, 1, 1))
        ys.append((lam * tables[a] + (1 - lam) * tables[b]).reshape(n_dataset * N, -1))
        xs.append(np.tile(X, (n_dataset, 1)))
    if n_hyper:
        k, i, j = g.integers(K, size=n_hyper), g.integers(N, size=n_hyper), g.integers(N, size=n_hyper)
        lam = g.beta(1.0, 1.0, size=(n_hyper, 1))
        xs.append(lam * X[i] + (1 - lam) * X[j])
        ys.append(lam * tables[k, i] + (1 - lam) * tables[k, j])
    return np.concatenate(xs), np.concatenate(ys)


def knn_prior(X: Any, pool_x: Any, pool_theta: Any, k: int) -> np.ndarray:
    """The transfer prior: for each configuration, the fitted parameters of its ``k`` nearest
    meta-train curves in hyperparameter space. Returns (N, k, 4)."""
    X, px, pt = (np.asarray(a, dtype=float) for a in (X, pool_x, pool_theta))
    if X.ndim != 2 or px.ndim != 2 or px.shape[1] != X.shape[1] or pt.shape != (px.shape[0], 4):
        raise ValueError("X (N, d), pool_x (M, d) and pool_theta (M, 4) must agree")
    k = check_int(k, "k", minimum=1)
    if k > px.shape[0]:
        raise ValueError(f"k must be at most the pool size {px.shape[0]}, got {k}")
    d2 = ((X[:, None, :] - px[None]) ** 2).sum(-1)
    near = np.argsort(d2, axis=1, kind="stable")[:, :k]
    return pt[near]


@dataclass
class ParticleLC:
    """The learning-curve surrogate: a particle model of parametric curves per configuration.

    ``prior`` is (P, 4) (one prior for all configurations) or (N, P, 4) (one per configuration,
    e.g. :func:`knn_prior`). Given the observed prefix of a curve, particles are weighted by the
    Gaussian likelihood with width ``lik_sd`` and resampled, each resampled particle moved by a
    Gaussian step of ``jitter`` times the broad prior's width (a regularised particle filter);
    future epochs are the resampled curves plus observation noise ``noise_sd``. (A CPU stand-in for the paper's meta-trained
    transformer, which it is not.)
    """

    prior: np.ndarray
    T: int
    noise_sd: float = 0.01
    lik_sd: float = 0.02
    jitter: float = 0.0
    curves: np.ndarray = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self.prior = np.asarray(self.prior, dtype=float)
        if self.prior.ndim not in (2, 3) or self.prior.shape[-1] != 4 or self.prior.shape[-2] == 0:
            raise ValueError(f"prior must have shape (P, 4) or (N, P, 4), got {self.prior.shape}")
        if not np.all(np.isfinite(self.prior)):
            raise ValueError("prior must be finite")
        self.T = check_int(self.T, "T", minimum=1)
        self.noise_sd = check_positive(self.noise_sd, "noise_sd", allow_zero=True)
        self.lik_sd = check_positive(self.lik_sd, "lik_sd")
        self.jitter = check_in_range(self.jitter, "jitter", 0.0, 1.0, closed=(True, False))
        self.curves = curve(self.prior, self.T)  # (P, T) or (N, P, T)

    def weights(self, Y: np.ndarray, counts: np.ndarray) -> np.ndarray:
        """Posterior particle weights (N, P) given the observed prefixes (``Y[i, :counts[i]]``)."""
        Y, counts = _check_obs(Y, counts, self.T)
        seen = np.flatnonzero(counts)  # unobserved configurations keep uniform weights
        w = np.full((Y.shape[0], self.curves.shape[-2]), 1.0 / self.curves.shape[-2])
        if seen.size:
            obs = np.arange(self.T)[None, :] < counts[seen, None]
            F = self.curves[seen] if self.curves.ndim == 3 else self.curves[None]
            r = np.where(obs[:, None, :], np.nan_to_num(Y[seen])[:, None, :] - F, 0.0)
            ll = -0.5 * (r ** 2).sum(-1) / self.lik_sd ** 2
            ll -= ll.max(axis=1, keepdims=True)  # shift before exponentiating
            e = np.exp(ll)
            w[seen] = e / e.sum(axis=1, keepdims=True)
        return w

    def sample(self, Y: Any, counts: Any, n_samples: int, rng: Any = None) -> np.ndarray:
        """Joint sample curves (N, S, T) for every configuration, with common random numbers:
        the same uniforms (resampling) and normals (noise) for every configuration."""
        Y, counts = _check_obs(Y, counts, self.T)
        S = check_int(n_samples, "n_samples", minimum=1)
        g = as_rng(rng)
        u, z = g.random(S), g.standard_normal((S, self.T))
        cum = np.cumsum(self.weights(Y, counts), axis=1)
        cum[:, -1] = 1.0
        idx = (cum[:, None, :] < u[None, :, None]).sum(-1)  # (N, S) inverse-CDF resampling
        if self.jitter == 0:
            F = np.broadcast_to(self.curves, (Y.shape[0],) + self.curves.shape[-2:])
            return np.take_along_axis(F, idx[:, :, None], axis=1) + self.noise_sd * z[None]
        # Regularised resampling: move each resampled particle by a small kernel step (the same
        # normals for every configuration), so that a few heavy particles do not fake certainty.
        P = np.broadcast_to(self.prior, (Y.shape[0],) + self.prior.shape[-2:])
        theta = np.take_along_axis(P, idx[:, :, None], axis=1)
        width = BROAD_BOX[:, 1] - BROAD_BOX[:, 0]
        theta = np.clip(theta + self.jitter * width * g.standard_normal((S, 4))[None], BROAD_BOX[:, 0], BROAD_BOX[:, 1])
        return curve(theta, self.T) + self.noise_sd * z[None]


def _check_obs(Y: Any, counts: Any, T: int) -> tuple[np.ndarray, np.ndarray]:
    Y = np.asarray(Y, dtype=float)
    counts = np.asarray(counts)
    if Y.ndim != 2 or Y.shape[1] != T or Y.shape[0] == 0:
        raise ValueError(f"Y must have shape (N, T={T}), got {Y.shape}")
    if counts.shape != (Y.shape[0],) or not np.issubdtype(counts.dtype, np.integer):
        raise ValueError(f"counts must be an integer array of shape ({Y.shape[0]},)")
    if np.any(counts < 0) or np.any(counts > T):
        raise ValueError(f"counts must lie in [0, T={T}]")
    obs = np.arange(T)[None, :] < counts[:, None]
    if not np.all(np.isfinite(Y[obs])):
        raise ValueError("observed entries of Y must be finite")
    return Y, counts.astype(int)


# --------------------------------------------------------------------------- acquisition and stopping


def acquisition(samples: Any, counts: Any, b: int, best: float, *, alpha: float, c: float, budget: int,
                horizon: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """CFBO's acquisition ``A_i`` and improvement probability ``p_i`` for every configuration.

    ``samples`` (N, S, T) are sample curves; ``counts`` (N,) the observed epochs; ``b`` the global
    budget spent; ``best`` the incumbent score. For each lookahead ``Delta`` (at most ``horizon``)
    the running best ``max(best, max of the next Delta sampled epochs)`` is scored at budget
    ``b + Delta``; ``A_i = max_Delta E[(U(b+Delta) - U(b))_+]`` and
    ``p_i = max_Delta P(U(b+Delta) >= U(b))``. Configurations with nothing left to train (or no
    budget) get ``A_i = -inf`` and ``p_i = 0``.
    """
    samples = np.asarray(samples, dtype=float)
    if samples.ndim != 3 or samples.shape[0] == 0 or samples.shape[1] == 0:
        raise ValueError(f"samples must have shape (N, S, T), got {samples.shape}")
    N, _, T = samples.shape
    counts = np.asarray(counts)
    if counts.shape != (N,) or not np.issubdtype(counts.dtype, np.integer) or np.any((counts < 0) | (counts > T)):
        raise ValueError(f"counts must be integers in [0, {T}] of shape ({N},)")
    b = check_int(b, "b")
    best = check_real(best, "best")
    h = T if horizon is None else check_int(horizon, "horizon", minimum=1)
    delta = np.arange(1, T + 1)[None, :] - counts[:, None]  # (N, T): lookahead ending at epoch t
    valid = (delta >= 1) & (delta <= h) & (b + delta <= check_int(budget, "budget", minimum=1))
    future = np.where((delta >= 1)[:, None, :], samples, -np.inf)  # mask observed epochs first
    run = np.maximum.accumulate(np.maximum(future, best), axis=-1)  # clamp at the incumbent, then cummax
    u_now = float(utility(b, best, alpha, c, budget))
    u_new = utility(np.where(valid, b + delta, 0)[:, None, :], run, alpha, c, budget)
    gain = np.where(valid, np.maximum(u_new - u_now, 0.0).mean(1), -np.inf)
    prob = np.where(valid, (u_new >= u_now).mean(1), 0.0)
    return gain.max(1), prob.max(1)


def stop_threshold(p: Any, tau: float = 0.2, beta_s: float = -1.0) -> np.ndarray:
    """The right-hand side of CFBO's stopping rule, ``F_Beta(e^beta_s, e^beta_s)(p)^gamma``,
    ``gamma = -log2(tau)``: equal to ``tau`` at ``p = 0.5``, 0 at ``p = 0``, 1 at ``p = 1``."""
    tau = check_in_range(tau, "tau", 0.0, 1.0)
    beta_s = check_real(beta_s, "beta_s")
    p = np.asarray(p, dtype=float)
    if np.any(~np.isfinite(p)) or np.any((p < 0) | (p > 1)):
        raise ValueError("p must lie in [0, 1]")
    return _threshold(p, tau, beta_s)


def _threshold(p: Any, tau: float, beta_s: float) -> np.ndarray:
    a = np.exp(beta_s)
    return betainc(a, a, p) ** (-np.log2(tau))  # the Beta(a, a) CDF


def normalised_regret(u_max: float, u_min: float, u_now: float) -> float:
    """CFBO's ``r = (u_max - U_b) / (u_max - u_min)``; ``-inf`` when ``u_max == u_min``
    (a degenerate range must not trigger a stop)."""
    return -np.inf if u_max <= u_min else (u_max - u_now) / (u_max - u_min)


# --------------------------------------------------------------------------- policies and the loop


@dataclass
class State:
    """What a policy sees: observed curves (NaN where unobserved), epochs per configuration,
    the budget spent, the incumbent and the total budget."""

    Y: np.ndarray
    counts: np.ndarray
    b: int
    best: float
    budget: int


class CFBO:
    """Cost-sensitive freeze-thaw BO (the paper's method): continue ``argmax_i A_i`` for one
    epoch; stop when the normalised regret ``r_b >= F(p_{i*})^gamma``.

    ``threshold='beta'`` is the paper's rule, ``'constant'`` the ablation whose right-hand side is
    ``tau``; ``stop=False`` the ablation that never stops. ``alpha = 0`` is freeze-thaw BO for
    accuracy alone (it never stops: its regret is always 0).
    """

    def __init__(self, surrogate: ParticleLC, *, alpha: float, c: float = 1.0, tau: float = 0.2,
                 beta_s: float = -1.0, n_samples: int = 64, stop: bool = True, threshold: str = "beta",
                 horizon: int | None = None) -> None:
        if not isinstance(surrogate, ParticleLC):
            raise ValueError("surrogate must be a ParticleLC")
        self.surrogate = surrogate
        self.alpha = check_in_range(alpha, "alpha", 0.0, 1.0, closed=(True, True))
        self.c = check_positive(c, "c")
        self.tau = check_in_range(tau, "tau", 0.0, 1.0)
        self.beta_s = check_real(beta_s, "beta_s")
        self.n_samples = check_int(n_samples, "n_samples", minimum=1)
        self.stop = bool(stop)
        if threshold not in ("beta", "constant"):
            raise ValueError(f"threshold must be 'beta' or 'constant', got {threshold!r}")
        self.threshold = threshold
        self.horizon = horizon
        self.reset()

    def reset(self) -> None:
        """Forget the run: the utility range seen so far and the stopping log."""
        self.u_max, self.u_min = -np.inf, None
        self.log: dict[str, list[float]] = {"r": [], "rhs": [], "p": []}

    def select(self, s: State, rng: np.random.Generator) -> int | None:
        """The configuration to train one more epoch, or None to stop the whole run."""
        samples = self.surrogate.sample(s.Y, s.counts, self.n_samples, rng)
        A, p = acquisition(samples, s.counts, s.b, s.best, alpha=self.alpha, c=self.c, budget=s.budget,
                           horizon=self.horizon)
        if not np.isfinite(A.max()):
            return None  # nothing left to train within the budget
        i = int(np.argmax(A))
        if s.b == 0:
            return i
        u_now = float(utility(s.b, s.best, self.alpha, self.c, s.budget))
        if self.u_min is None:  # set once, from the first observation, at budget B
            self.u_min = float(utility(s.budget, s.best, self.alpha, self.c, s.budget))
        self.u_max = max(self.u_max, u_now)
        r = normalised_regret(self.u_max, self.u_min, u_now)
        rhs = self.tau if self.threshold == "constant" else float(_threshold(p[i], self.tau, self.beta_s))
        self.log["r"].append(r), self.log["rhs"].append(rhs), self.log["p"].append(float(p[i]))
        return None if (self.stop and r >= rhs) else i


class FreezeThawEI:
    """Freeze-thaw BO for accuracy alone, never stopping: expected improvement of the incumbent
    within ``horizon`` more epochs (``horizon=1``: DyHPO-like one-epoch EI; large: ifBO-like)."""

    def __init__(self, surrogate: ParticleLC, horizon: int, n_samples: int = 64) -> None:
        self.inner = CFBO(surrogate, alpha=0.0, n_samples=n_samples, stop=False,
                          horizon=check_int(horizon, "horizon", minimum=1))

    def reset(self) -> None:
        """Forget the run (the wrapped CFBO without stopping)."""
        self.inner.reset()

    @property
    def log(self) -> dict[str, list[float]]:
        """The wrapped policy's per-step log (regret r_b, the stopping threshold, p): kept though it never stops."""
        return self.inner.log

    def select(self, s: State, rng: np.random.Generator) -> int | None:
        """The configuration with the largest acquisition; never None."""
        return self.inner.select(s, rng)


class RandomSearch:
    """Train a random fresh configuration for ``epochs`` epochs, then the next; never stops."""

    def __init__(self, epochs: int) -> None:
        self.epochs = check_int(epochs, "epochs", minimum=1)
        self.reset()

    def reset(self) -> None:
        """Forget the configuration in training."""
        self.current: int | None = None

    def select(self, s: State, rng: np.random.Generator) -> int | None:
        """Keep training the current configuration to its epoch budget, then draw a fresh one."""
        T = s.Y.shape[1]
        if self.current is not None and s.counts[self.current] < min(self.epochs, T):
            return self.current
        fresh = np.flatnonzero(s.counts == 0)
        if fresh.size == 0:
            left = np.flatnonzero(s.counts < T)
            return None if left.size == 0 else int(left[np.argmax(np.nan_to_num(s.Y[left, s.counts[left] - 1]))])
        self.current = int(rng.choice(fresh))
        return self.current


class SuccessiveHalving:
    """Successive halving with rate ``eta``: ``n0`` fresh configurations trained to ``r0`` epochs,
    the best ``1/eta`` continued to ``eta r0``, and so on up to ``T``; then a new bracket."""

    def __init__(self, r0: int, n0: int = 9, eta: int = 3) -> None:
        self.r0 = check_int(r0, "r0", minimum=1)
        self.n0 = check_int(n0, "n0", minimum=1)
        self.eta = check_int(eta, "eta", minimum=2)
        self.reset()

    def reset(self) -> None:
        """Start again at the lowest rung."""
        self.queue: list[int] = []
        self.rung, self.alive = 0, np.array([], dtype=int)

    def _target(self, T: int) -> int:
        return min(T, self.r0 * self.eta ** self.rung)

    def select(self, s: State, rng: np.random.Generator) -> int | None:
        """The next configuration to bring up to the current rung, promoting the best at each rung."""
        T = s.Y.shape[1]
        while True:
            todo = [i for i in self.alive if s.counts[i] < self._target(T)]
            if todo:
                return int(todo[0])
            if self.alive.size > 1 and self._target(T) < T:  # promote the top 1/eta
                last = s.Y[self.alive, s.counts[self.alive] - 1]
                keep = max(1, self.alive.size // self.eta)
                self.alive = self.alive[np.argsort(-last, kind="stable")[:keep]]
                self.rung += 1
                continue
            fresh = np.flatnonzero(s.counts == 0)  # new bracket
            if fresh.size == 0:  # pool exhausted: keep training the most promising unfinished one
                left = np.flatnonzero(s.counts < T)
                return None if left.size == 0 else int(left[np.argmax(s.Y[left, s.counts[left] - 1])])
            self.alive = rng.choice(fresh, size=min(self.n0, fresh.size), replace=False)
            self.rung = 0


@dataclass
class HPORun:
    """One HPO run: the incumbent after each epoch (``best[b-1]`` after ``b`` epochs), the
    configuration trained at each epoch, and the budget at which it stopped."""

    best: np.ndarray
    picks: np.ndarray
    stop_budget: int
    stopped: bool
    log: dict[str, list[float]] = field(default_factory=dict)


def run_hpo(policy: Any, curves: Any, budget: int, rng: Any = None) -> HPORun:
    """Run ``policy`` (``reset()``, ``select(state, rng) -> index or None``) on a table of true
    curves (N, T), one epoch at a time, until it stops or the budget is spent."""
    curves = np.asarray(curves, dtype=float)
    if curves.ndim != 2 or curves.size == 0 or not np.all(np.isfinite(curves)):
        raise ValueError(f"curves must be a finite (N, T) array, got shape {curves.shape}")
    if np.any((curves < 0) | (curves > 1)):
        raise ValueError("curves must be scores in [0, 1] (higher is better)")
    budget = check_int(budget, "budget", minimum=1)
    g = as_rng(rng)
    N, T = curves.shape
    Y, counts = np.full((N, T), np.nan), np.zeros(N, dtype=int)
    best, hist, picks, stopped = -np.inf, [], [], False
    policy.reset()
    for b in range(budget):
        i = policy.select(State(Y, counts, b, best if b else 0.0, budget), g)
        if i is None:
            stopped = True
            break
        if counts[i] >= T:
            raise RuntimeError(f"policy selected configuration {i}, which is fully trained")
        Y[i, counts[i]] = curves[i, counts[i]]
        counts[i] += 1
        best = max(best, Y[i, counts[i] - 1])
        hist.append(best), picks.append(i)
    return HPORun(np.array(hist), np.array(picks, dtype=int), len(hist), stopped,
                  dict(getattr(policy, "log", {})))


def oracle_bounds(curves: Any, alpha: float, c: float, budget: int) -> tuple[float, float]:
    """The benchmark's ``(u*_max, u*_min)``: the best utility of training one configuration
    from scratch, ``max_{i,t} U(t, y_it)``, and ``min_i U(B, y_i1)`` (as in ``run_bo.py``)."""
    curves = np.asarray(curves, dtype=float)
    T = curves.shape[1]
    u = utility(np.arange(1, T + 1)[None, :], np.maximum.accumulate(curves, axis=1), alpha, c, budget)
    return float(u.max()), float(utility(budget, curves[:, 0], alpha, c, budget).min())


def run_regret(run: HPORun, curves: Any, alpha: float, c: float, budget: int) -> float:
    """The benchmark's normalised regret at the stop budget,
    ``(u*_max - U(b_stop, y_stop)) / (u*_max - u*_min)``."""
    hi, lo = oracle_bounds(curves, alpha, c, budget)
    if run.stop_budget == 0:
        raise ValueError("run spent no budget")
    u = float(utility(run.stop_budget, run.best[-1], alpha, c, budget))
    return (hi - u) / (hi - lo)


def synthetic_task(X: Any, task: int, *, T: int = 30, noise: float = 0.01, seed: int = 0) -> np.ndarray:
    """A synthetic learning-curve task on configuration grid ``X`` (N, d): ``y_inf`` a sigmoid of a
    linear score plus a task shift, ``log omega`` linear in ``x`` plus noise, scores clipped to
    [0, 1]. ``seed`` fixes the benchmark's shared weights, ``task`` the task's own draws."""
    X = np.asarray(X, dtype=float)
    if X.ndim != 2 or X.shape[0] == 0 or not np.all(np.isfinite(X)):
        raise ValueError(f"X must be a finite (N, d) array, got shape {X.shape}")
    noise = check_positive(noise, "noise", allow_zero=True)
    shared = np.random.default_rng([check_int(seed, "seed"), 0])
    w = shared.normal(0, 2.0, X.shape[1])
    a = shared.normal(0, 1.0, X.shape[1])
    g = np.random.default_rng([seed, 1, check_int(task, "task")])
    wt = w + g.normal(0, 0.6, X.shape[1])
    centred = X - X.mean(0)
    theta = np.stack([
        0.1 + 0.85 * expit(centred @ wt + g.normal(0, 0.7) + g.normal(0, 0.3, X.shape[0])),
        g.uniform(0.02, 0.15, X.shape[0]),
        np.log(5.0) + 0.6 * (centred @ a) + g.normal(0, 0.3) + g.normal(0, 0.3, X.shape[0]),
        g.uniform(0.7, 1.5, X.shape[0]),
    ], axis=1)
    y = curve(theta, T) + noise * g.standard_normal((X.shape[0], check_int(T, "T", minimum=1)))
    return np.clip(y, 0.0, 1.0)
