"""Finite-horizon discrete mean-field games and the algorithms of chapter 29.

A mean-field game (MFG) couples a representative agent's Markov decision process with the
population distribution it generates: states ``S``, actions ``A``, horizon ``H``, transitions
``P(x'|x, a)`` that do not depend on the population, and rewards ``r_h(x, a, mu_h)`` that do.
A policy ``pi[h, x, a]`` induces the *mean field* ``mu[h, x]`` by the forward recursion; an
equilibrium is a policy that is a best response to its own mean field, and the
*exploitability* (what a deviating agent gains) is zero exactly there.

Methods (Isobe, Abe and Ariu, "Last Iterate Convergence in Monotone Mean Field Games", NeurIPS
2025; the update formulas are our reconstruction, see the chapter):

* :func:`rmd_step` -- one step of KL-regularised mirror descent (RMD) towards a reference policy;
* :func:`mirror_descent` -- plain MD/OMD (``lam = 0``) or RMD with a fixed reference;
* :func:`app` -- Approximate Proximal Point (APP): RMD whose reference is moved to the current
  policy every ``tau`` steps;
* :func:`fictitious_play` and :func:`damped_best_response` -- the classical baselines.

Every function accepts a batch of policies with leading dimensions (``pi.shape == (..., H, S,
A)``), so one call runs several seeds at once.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..core import RngLike, as_rng, check_choice, check_in_range, check_int, check_positive

#: Probabilities are floored here before a logarithm (a state nobody visits has mu = 0).
FLOOR = 1e-300


# --------------------------------------------------------------------------- the game


@dataclass(frozen=True)
class FiniteMFG:
    """A finite-horizon MFG with population-independent transitions.

    The reward is ``r_h(x, a, mu_h) = base[h, x, a] + w_h (C mu_h)_x - c log mu_h(x)``: a fixed
    part, a linear coupling through the matrix ``C`` (weighted per step by ``w``) and a
    congestion (crowd-aversion) term of weight ``c >= 0``. With ``C`` skew-symmetric the game is
    monotone but not strictly; ``c > 0`` makes it strictly monotone.

    Parameters
    ----------
    transition : array (S, A, S)
        ``P(x'|x, a)``; each row a probability vector.
    mu0 : array (S,)
        Initial distribution.
    base : array (H, S, A)
        The population-independent reward; its first axis sets the horizon ``H``.
    coupling : array (S, S) or None
        The matrix ``C``.
    coupling_weight : array (H,) or None
        ``w_h`` (default: ones).
    congestion : float
        ``c``.
    """

    transition: np.ndarray
    mu0: np.ndarray
    base: np.ndarray
    coupling: np.ndarray | None = None
    coupling_weight: np.ndarray | None = None
    congestion: float = 0.0
    name: str = "MFG"
    _w: np.ndarray = field(init=False, repr=False)
    _flat: np.ndarray = field(init=False, repr=False)

    def __post_init__(self) -> None:
        P = _finite(self.transition, "transition", ndim=3)
        S, A = P.shape[0], P.shape[1]
        if P.shape[2] != S:
            raise ValueError(f"transition must have shape (S, A, S), got {P.shape}")
        if np.any(P < 0) or not np.allclose(P.sum(-1), 1.0, atol=1e-10):
            raise ValueError("transition rows P(.|x, a) must be probability vectors")
        mu0 = _finite(self.mu0, "mu0", ndim=1)
        if mu0.shape != (S,) or np.any(mu0 < 0) or not np.isclose(mu0.sum(), 1.0, atol=1e-10):
            raise ValueError(f"mu0 must be a probability vector of length {S}")
        base = _finite(self.base, "base", ndim=3)
        if base.shape[1:] != (S, A):
            raise ValueError(f"base must have shape (H, {S}, {A}), got {base.shape}")
        H = base.shape[0]
        C = None
        if self.coupling is not None:
            C = _finite(self.coupling, "coupling", ndim=2)
            if C.shape != (S, S):
                raise ValueError(f"coupling must have shape ({S}, {S}), got {C.shape}")
        w = np.ones(H) if self.coupling_weight is None else _finite(self.coupling_weight, "coupling_weight", ndim=1)
        if w.shape != (H,):
            raise ValueError(f"coupling_weight must have length {H}, got {w.shape}")
        c = check_positive(self.congestion, "congestion", allow_zero=True)
        for name, value in (("transition", P), ("mu0", mu0), ("base", base), ("coupling", C), ("congestion", c)):
            object.__setattr__(self, name, value)
        object.__setattr__(self, "_w", w)
        object.__setattr__(self, "_flat", P.reshape(S * A, S))

    @property
    def horizon(self) -> int:
        return self.base.shape[0]

    @property
    def num_states(self) -> int:
        return self.base.shape[1]

    @property
    def num_actions(self) -> int:
        return self.base.shape[2]

    @property
    def shape(self) -> tuple[int, int, int]:
        """A policy's shape (H, S, A)."""
        return self.base.shape

    def reward(self, mu: np.ndarray) -> np.ndarray:
        """``r_h(x, a, mu_h)`` for a mean field ``mu`` of shape (..., H, S): shape (..., H, S, A)."""
        mu = np.asarray(mu, dtype=float)
        if mu.shape[-2:] != (self.horizon, self.num_states):
            raise ValueError(f"mu must have shape (..., {self.horizon}, {self.num_states}), got {mu.shape}")
        r = np.zeros(mu.shape[:-2] + (self.horizon, self.num_states))
        if self.coupling is not None:
            r = r + self._w[:, None] * (mu @ self.coupling.T)
        if self.congestion:
            r = r - self.congestion * np.log(np.maximum(mu, FLOOR))
        return self.base + r[..., None]

    def monotonicity(self, mu: np.ndarray, nu: np.ndarray) -> float:
        """The Lasry-Lions sum ``sum_h sum_x (r_h(x, ., mu) - r_h(x, ., nu)) (mu_h(x) - nu_h(x))``
        (taken at action 0; the coupling does not depend on the action). Monotone: always <= 0."""
        d = (self.reward(mu) - self.reward(nu))[..., 0]
        return float(np.sum(d * (np.asarray(mu) - np.asarray(nu))))


def _finite(a, name: str, ndim: int) -> np.ndarray:
    try:
        arr = np.array(a, dtype=float)
    except (TypeError, ValueError) as err:
        raise ValueError(f"{name} must be an array of numbers") from err
    if arr.ndim != ndim or arr.size == 0:
        raise ValueError(f"{name} must be a non-empty {ndim}-D array, got shape {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must be finite (found NaN or inf)")
    return arr


def check_policy(game: FiniteMFG, pi, name: str = "pi") -> np.ndarray:
    """A policy (or a batch of them) for ``game``: finite, non-negative, each ``pi[..., h, x, :]``
    summing to one; shape (..., H, S, A)."""
    try:
        arr = np.array(pi, dtype=float)
    except (TypeError, ValueError) as err:
        raise ValueError(f"{name} must be an array of numbers") from err
    if arr.ndim < 3 or arr.shape[-3:] != game.shape:
        raise ValueError(f"{name} must have shape (..., {', '.join(map(str, game.shape))}), got {arr.shape}")
    if arr.size == 0 or not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must be non-empty and finite")
    if np.any(arr < 0) or not np.allclose(arr.sum(-1), 1.0, atol=1e-8):
        raise ValueError(f"{name}[..., h, x, :] must be probability vectors")
    return arr


def uniform_policy(game: FiniteMFG) -> np.ndarray:
    """The policy that picks every action with equal probability."""
    return np.full(game.shape, 1.0 / game.num_actions)


def random_policy(game: FiniteMFG, rng: RngLike = None, batch: int | None = None) -> np.ndarray:
    """Policies drawn uniformly from the simplex (Dirichlet(1)) at every (h, x): shape (H, S, A), or
    (batch, H, S, A)."""
    rng = as_rng(rng)
    lead = () if batch is None else (check_int(batch, "batch", minimum=1),)
    return rng.dirichlet(np.ones(game.num_actions), size=lead + game.shape[:2])


# --------------------------------------------------------------------------- evaluation


def mean_field(game: FiniteMFG, pi: np.ndarray) -> np.ndarray:
    """The population flow ``mu[h, x]`` a policy induces: ``mu_0`` given,
    ``mu_{h+1}(x') = sum_{x,a} mu_h(x) pi_h(a|x) P(x'|x, a)``. Shape (..., H, S)."""
    pi = check_policy(game, pi)
    return _mean_field(game, pi)


def _mean_field(game: FiniteMFG, pi: np.ndarray) -> np.ndarray:
    H = game.horizon
    mu = np.empty(pi.shape[:-1])
    mu[..., 0, :] = game.mu0
    for h in range(H - 1):
        flow = mu[..., h, :, None] * pi[..., h, :, :]  # (..., S, A)
        mu[..., h + 1, :] = flow.reshape(flow.shape[:-2] + (-1,)) @ game._flat
    return mu


def _kl_terms(pi: np.ndarray, sigma: np.ndarray) -> np.ndarray:
    return np.log(np.maximum(pi, FLOOR)) - np.log(np.maximum(sigma, FLOOR))


def evaluate(game: FiniteMFG, pi: np.ndarray, mu: np.ndarray, lam: float = 0.0,
             sigma: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Q and V of policy ``pi`` in the game with the flow frozen at ``mu``, regularised by
    ``-lam KL(pi_h(.|x) || sigma_h(.|x))`` at every step (backward induction, ``V_H = 0``).

    Returns ``Q`` (..., H, S, A) and ``V`` (..., H + 1, S). The regularised Q includes the
    future steps' KL terms through V.
    """
    pi = check_policy(game, pi)
    lam = check_positive(lam, "lam", allow_zero=True)
    if lam and sigma is None:
        raise ValueError("sigma is needed when lam > 0")
    sigma = None if sigma is None else check_policy(game, sigma, "sigma")
    mu = np.asarray(mu, dtype=float)
    if mu.shape[-2:] != (game.horizon, game.num_states) or not np.all(np.isfinite(mu)):
        raise ValueError(f"mu must be a finite array of shape (..., {game.horizon}, {game.num_states})")
    return _evaluate(game, pi, mu, lam, sigma)


def _evaluate(game, pi, mu, lam, sigma):
    r = game.reward(mu)
    H = game.horizon
    lam_h = lam[..., 0, :, :] if np.ndim(lam) else lam  # a per-run lam, without the h axis
    Q = np.empty(np.broadcast_shapes(r.shape, pi.shape))
    V = np.zeros(Q.shape[:-3] + (H + 1, game.num_states))
    for h in range(H - 1, -1, -1):
        Q[..., h, :, :] = (
            r[..., h, :, :] + _continuation(game, V[..., h + 1, :]))
        val = Q[..., h, :, :]
        if np.any(lam):
            val = val - lam_h * _kl_terms(pi[..., h, :, :], sigma[..., h, :, :])
        V[..., h, :] = np.sum(pi[..., h, :, :] * val, axis=-1)
    return Q, V


def _continuation(game, v):
    """``sum_y P(y|x, a) v(y)`` for v of shape (..., S): shape (..., S, A)."""
    return (v @ game._flat.T).reshape(v.shape[:-1] + game.shape[1:])


def best_response(game: FiniteMFG, mu: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A deterministic best response to the flow ``mu`` (backward induction with max) and its
    value ``V*`` (..., H + 1, S). Ties go to the lowest action index."""
    mu = np.asarray(mu, dtype=float)
    if mu.shape[-2:] != (game.horizon, game.num_states) or not np.all(np.isfinite(mu)):
        raise ValueError(f"mu must be a finite array of shape (..., {game.horizon}, {game.num_states})")
    return _best_response(game, mu)


def _best_response(game, mu):
    r = game.reward(mu)
    H, S, A = game.shape
    V = np.zeros(r.shape[:-3] + (H + 1, S))
    br = np.zeros(r.shape)
    for h in range(H - 1, -1, -1):
        q = r[..., h, :, :] + _continuation(game, V[..., h + 1, :])
        V[..., h, :] = q.max(-1)
        np.put_along_axis(br[..., h, :, :], q.argmax(-1)[..., None], 1.0, axis=-1)
    return br, V


def exploitability(game: FiniteMFG, pi: np.ndarray) -> np.ndarray | float:
    """``Expl(pi) = max_pi' J(mu^pi, pi') - J(mu^pi, pi) >= 0``, with the flow frozen at ``pi``'s
    own mean field (zero exactly at an equilibrium). A float, or an array over the batch."""
    pi = check_policy(game, pi)
    e = _exploitability(game, pi)
    return float(e) if e.ndim == 0 else e


def _exploitability(game, pi, mu=None):
    mu = _mean_field(game, pi) if mu is None else mu
    _, V = _evaluate(game, pi, mu, 0.0, None)
    _, Vstar = _best_response(game, mu)
    return np.maximum((Vstar[..., 0, :] - V[..., 0, :]) @ game.mu0, 0.0)


def regularized_exploitability(game: FiniteMFG, pi: np.ndarray, lam: float, sigma: np.ndarray) -> np.ndarray | float:
    """Exploitability in the game regularised by ``-lam KL(. || sigma)`` (flow frozen at
    ``pi``'s mean field): the soft-optimal value, ``V_h(x) = lam log sum_a sigma(a|x)
    exp(Q_h(x, a) / lam)``, minus ``pi``'s regularised value. Zero exactly at the regularised
    equilibrium that RMD with a fixed reference converges to."""
    pi = check_policy(game, pi)
    sigma = check_policy(game, sigma, "sigma")
    lam = check_positive(lam, "lam")
    mu = _mean_field(game, pi)
    _, V = _evaluate(game, pi, mu, lam, sigma)
    r = game.reward(mu)
    H, S, _ = game.shape
    Vs = np.zeros(V.shape)
    for h in range(H - 1, -1, -1):
        z = (r[..., h, :, :] + _continuation(game, Vs[..., h + 1, :])) / lam + np.log(np.maximum(sigma[..., h, :, :], FLOOR))
        m = z.max(-1)
        Vs[..., h, :] = lam * (m + np.log(np.exp(z - m[..., None]).sum(-1)))
    e = np.maximum((Vs[..., 0, :] - V[..., 0, :]) @ game.mu0, 0.0)
    return float(e) if e.ndim == 0 else e


# --------------------------------------------------------------------------- updates


def _softmax(logits: np.ndarray) -> np.ndarray:
    z = logits - logits.max(-1, keepdims=True)
    p = np.exp(z)
    return p / p.sum(-1, keepdims=True)


def rmd_update(q: np.ndarray, pi: np.ndarray, sigma: np.ndarray, lam: float, eta: float) -> np.ndarray:
    """The closed-form RMD update at one (h, x): the maximiser over the simplex of
    ``eta <q, p> - eta lam KL(p || sigma) - KL(p || pi)``, i.e.
    ``p propto exp((eta q + log pi + eta lam log sigma) / (1 + eta lam))`` (along the last axis)."""
    eta = check_positive(eta, "eta")
    lam = check_positive(lam, "lam", allow_zero=True)
    logits = (eta * q + np.log(np.maximum(pi, FLOOR)) + eta * lam * np.log(np.maximum(sigma, FLOOR))) / (1 + eta * lam)
    return _softmax(logits)


def rmd_step(game: FiniteMFG, pi: np.ndarray, sigma: np.ndarray, lam: float, eta: float) -> np.ndarray:
    """One step of regularised mirror descent (RMD in the paper): compute ``mu^pi``, the
    ``lam``-regularised Q of ``pi`` against reference ``sigma``, then :func:`rmd_update` at every
    (h, x). ``lam = 0`` is plain mirror descent ``pi propto pi exp(eta Q)``."""
    pi = check_policy(game, pi)
    sigma = check_policy(game, sigma, "sigma")
    eta = check_positive(eta, "eta")
    lam = check_positive(lam, "lam", allow_zero=True)
    return _rmd_step(game, pi, sigma, lam, eta)[0]


def _rmd_step(game, pi, sigma, lam, eta):
    mu = _mean_field(game, pi)
    Q, _ = _evaluate(game, pi, mu, lam, sigma)
    logits = (eta * Q + np.log(np.maximum(pi, FLOOR)) + eta * lam * np.log(np.maximum(sigma, FLOOR))) / (1 + eta * lam)
    return _softmax(logits), mu


# --------------------------------------------------------------------------- runs


@dataclass
class MFGRun:
    """One run (or a batch of runs) of a method.

    ``exploitability[k]`` is the exploitability of the *last iterate* after ``iterations[k]``
    updates (``0`` is the start; the end is always recorded); ``mean_fields[k]`` its mean field
    (kept when asked). Fictitious play also fills ``averaged_exploitability`` (the time-averaged
    policy's).
    """

    method: str
    policy: np.ndarray
    iterations: np.ndarray
    exploitability: np.ndarray
    mean_fields: np.ndarray | None = None
    averaged_exploitability: np.ndarray | None = None
    averaged_policy: np.ndarray | None = None
    params: dict = field(default_factory=dict)

    @property
    def final(self) -> np.ndarray | float:
        """Last-iterate exploitability at the end (one per batch element)."""
        e = self.exploitability[-1]
        return float(e) if np.ndim(e) == 0 else e


class _Recorder:
    def __init__(self, game, iters, every, keep):
        self.game, self.iters, self.every, self.keep = game, iters, every, keep
        self.t, self.expl, self.fields, self.avg = [], [], [], []

    def due(self, t):
        return t % self.every == 0 or t == self.iters

    def add(self, t, pi, mu, avg=None):
        self.t.append(t)
        self.expl.append(_exploitability(self.game, pi, mu))
        if self.keep:
            self.fields.append(mu)
        if avg is not None:
            self.avg.append(avg)

    def run(self, method, pi, params, **extra):
        return MFGRun(method, pi, np.array(self.t), np.array(self.expl),
                      np.array(self.fields) if self.keep else None, params=params, **extra)


def _start(game, pi0, iters, record_every):
    pi = check_policy(game, pi0, "pi0").copy()
    return pi, check_int(iters, "iters", minimum=1), check_int(record_every, "record_every", minimum=1)


def _param(value, name, lead, *, allow_zero=False, upper=None):
    """A hyperparameter: a scalar, or an array of shape ``lead`` (one value per batch element),
    returned broadcastable against (..., H, S, A)."""
    arr = np.asarray(value, dtype=float) if not isinstance(value, bool) else np.array(np.nan)
    if arr.ndim == 0:
        v = check_positive(value, name, allow_zero=allow_zero)
        if upper is not None and v > upper:
            raise ValueError(f"{name} must be <= {upper}, got {v}")
        return v
    if arr.shape != lead:
        raise ValueError(f"{name} must be a scalar or have the batch shape {lead}, got {arr.shape}")
    if not np.all(np.isfinite(arr)) or np.any(arr < 0) or (not allow_zero and np.any(arr == 0)):
        raise ValueError(f"{name} must be finite and {'non-negative' if allow_zero else 'positive'}")
    if upper is not None and np.any(arr > upper):
        raise ValueError(f"{name} must be <= {upper}")
    return arr[..., None, None, None]


def _run_rmd(game, pi, iters, eta, lam, tau, sigma, rec, method, params):
    ref = sigma
    for t in range(iters):
        if tau is not None:
            reset = (t % tau) == 0
            ref = pi if ref is None else np.where(reset, pi, ref)
        new, mu = _rmd_step(game, pi, ref, lam, eta)
        if rec.due(t):
            rec.add(t, pi, mu)
        pi = new
    rec.add(iters, pi, _mean_field(game, pi))
    return rec.run(method, pi, params)


def mirror_descent(game: FiniteMFG, pi0: np.ndarray, eta, iters: int, *, lam=0.0,
                   sigma: np.ndarray | None = None, record_every: int = 1,
                   keep_mean_fields: bool = False) -> MFGRun:
    """Mirror descent (OMD; ``lam = 0``): ``pi^{t+1} propto pi^t exp(eta Q^{pi^t, mu^t})``; with
    ``lam > 0``, RMD towards the fixed reference ``sigma`` (default: uniform), which converges
    exponentially fast, but to the *regularised* equilibrium. ``eta`` and ``lam`` may be arrays
    with one value per batch element of ``pi0``."""
    pi, iters, every = _start(game, pi0, iters, record_every)
    lead = pi.shape[:-3]
    eta = _param(eta, "eta", lead)
    lam = _param(lam, "lam", lead, allow_zero=True)
    sigma = uniform_policy(game) if sigma is None else check_policy(game, sigma, "sigma")
    name = "MD" if np.all(lam == 0) else "RMD (fixed reference)"
    return _run_rmd(game, pi, iters, eta, lam, None, sigma, _Recorder(game, iters, every, keep_mean_fields), name,
                    {"eta": eta, "lam": lam})


def app(game: FiniteMFG, pi0: np.ndarray, eta, lam, tau, iters: int, *, record_every: int = 1,
        keep_mean_fields: bool = False) -> MFGRun:
    """Approximate Proximal Point (APP in the paper; our reconstruction): RMD steps with
    regularisation ``lam`` towards a reference ``sigma`` that is reset to the current policy every
    ``tau`` steps (``tau`` inner steps approximate one KL proximal-point update). ``iters`` counts
    RMD steps (``iters / tau`` outer updates). ``tau = 1`` is mirror descent with step
    ``eta / (1 + eta lam)``. ``eta``, ``lam``, ``tau`` may be arrays over the batch."""
    pi, iters, every = _start(game, pi0, iters, record_every)
    lead = pi.shape[:-3]
    eta = _param(eta, "eta", lead)
    lam = _param(lam, "lam", lead)
    if np.ndim(tau) == 0:
        tau = check_int(tau, "tau", minimum=1)
    else:
        t_arr = np.asarray(tau)
        if t_arr.shape != lead or not np.issubdtype(t_arr.dtype, np.integer) or np.any(t_arr < 1):
            raise ValueError(f"tau must be an integer >= 1 or an integer array of the batch shape {lead}")
        tau = t_arr[..., None, None, None]
    return _run_rmd(game, pi, iters, eta, lam, tau, None, _Recorder(game, iters, every, keep_mean_fields), "APP",
                    {"eta": eta, "lam": lam, "tau": tau})


def damped_best_response(game: FiniteMFG, pi0: np.ndarray, beta, iters: int, *, record_every: int = 1,
                         keep_mean_fields: bool = False) -> MFGRun:
    """Damped fixed-point iteration ``pi^{t+1} = (1 - beta) pi^t + beta BR(mu^{pi^t})``
    (``beta = 1``: the plain best-response iteration)."""
    pi, iters, every = _start(game, pi0, iters, record_every)
    beta = _param(beta, "beta", pi.shape[:-3], upper=1.0)
    rec = _Recorder(game, iters, every, keep_mean_fields)
    for t in range(iters + 1):
        mu = _mean_field(game, pi)
        if rec.due(t):
            rec.add(t, pi, mu)
        if t < iters:
            pi = (1 - beta) * pi + beta * _best_response(game, mu)[0]
    return rec.run("damped BR", pi, {"beta": beta})


def fictitious_play(game: FiniteMFG, pi0: np.ndarray, iters: int, *, record_every: int = 1,
                    keep_mean_fields: bool = False) -> MFGRun:
    """Discrete-time fictitious play: best respond to the running average of past mean fields.
    The averaged policy ``bar pi_h(a|x) = sum_j mu^j_h(x) pi^j_h(a|x) / sum_j mu^j_h(x)`` induces
    that average flow (transitions do not depend on mu); ``exploitability`` is the last iterate's
    (a best response), ``averaged_exploitability`` the averaged policy's, and ``mean_fields`` (when
    kept) the averaged flows."""
    pi, iters, every = _start(game, pi0, iters, record_every)
    rec = _Recorder(game, iters, every, False)
    mu = _mean_field(game, pi)
    num, den = mu[..., None] * pi, mu.copy()
    fields = []
    for t in range(iters + 1):
        if t:
            pi = _best_response(game, den / t)[0]
            mu = _mean_field(game, pi)
            num, den = num + mu[..., None] * pi, den + mu
        if rec.due(t):
            bar = den / (t + 1)
            rec.add(t, pi, mu, _exploitability(game, _averaged(num, den, game), bar))
            if keep_mean_fields:
                fields.append(bar)
    out = rec.run("fictitious play", pi, {}, averaged_exploitability=np.array(rec.avg),
                  averaged_policy=_averaged(num, den, game))
    out.mean_fields = np.array(fields) if keep_mean_fields else None
    return out


def _averaged(num, den, game):
    seen = den[..., None] > 0
    return np.where(seen, num / np.where(seen, den[..., None], 1.0), 1.0 / game.num_actions)


METHODS = ("APP", "MD", "RMD", "FP", "damped BR")


def run_method(game: FiniteMFG, method: str, pi0: np.ndarray, iters: int, *, record_every: int = 1,
               keep_mean_fields: bool = False, **params) -> MFGRun:
    """Dispatch by name: ``"APP"`` (eta, lam, tau), ``"MD"`` (eta), ``"RMD"`` (eta, lam; uniform
    reference), ``"FP"`` (no parameter), ``"damped BR"`` (beta)."""
    method = check_choice(method, "method", METHODS)
    kw = dict(keep_mean_fields=keep_mean_fields, record_every=record_every)
    if method == "APP":
        return app(game, pi0, iters=iters, **params, **kw)
    if method == "MD":
        return mirror_descent(game, pi0, iters=iters, **params, **kw)
    if method == "RMD":
        return mirror_descent(game, pi0, iters=iters, **params, **kw)
    if method == "FP":
        return fictitious_play(game, pi0, iters, **params, **kw)
    return damped_best_response(game, pi0, iters=iters, **params, **kw)


# --------------------------------------------------------------------------- benchmark games

#: The generalised rock-paper-scissors payoffs B; the game uses M = B - B^T (skew-symmetric).
RPS_B = np.array([[0.0, -1.0, 2.0], [1.0, 0.0, -1.0], [-1.0, 2.0, 0.0]])


def rps_game(scale: float = 1.0) -> FiniteMFG:
    """Generalised rock-paper-scissors as a two-step MFG: from state 0, action a moves the agent
    to state a; at step 1 the reward of state x is ``scale (M mu_1)_x`` with ``M = B - B^T``
    (skew-symmetric: monotone, not strictly)."""
    scale = check_positive(scale, "scale")
    P = np.zeros((3, 3, 3))
    P[:, np.arange(3), np.arange(3)] = 1.0
    M = scale * (RPS_B - RPS_B.T)
    return FiniteMFG(P, np.array([1.0, 0.0, 0.0]), np.zeros((2, 3, 3)), coupling=M,
                     coupling_weight=np.array([0.0, 1.0]), name="rock-paper-scissors")


def rps_equilibrium(scale: float = 1.0) -> np.ndarray:
    """The unique equilibrium distribution of :func:`rps_game` at step 1: the normalised null
    vector of ``M`` (interior)."""
    check_positive(scale, "scale")
    M = RPS_B - RPS_B.T
    v = np.linalg.svd(M)[2][-1]
    return v / v.sum()


def beach_bar(size: int = 15, horizon: int = 10, noise: float = 0.1, variant: str = "strict",
              chase: float = 1.0, distance_weight: float = 1.0) -> FiniteMFG:
    """The Beach Bar Process (Perrin et al., 2020): ``size`` positions on a ring, actions
    {-1, 0, +1}, an extra random step of +-1 with probability ``noise`` each, uniform start.
    Reward ``-distance_weight |x - bar| / size - |a| / size`` plus

    * ``variant="strict"``: the crowd aversion ``-log mu_h(x)`` (strictly monotone);
    * ``variant="skew"``: a skew-symmetric "chasing" term ``chase (mu_h(x+1) - mu_h(x-1))``
      (agents like a crowd just ahead on the ring and dislike one just behind; monotone, not
      strictly).
    """
    S = check_int(size, "size", minimum=3)
    H = check_int(horizon, "horizon", minimum=2)
    noise = check_in_range(noise, "noise", 0.0, 0.5, closed=(True, False))
    variant = check_choice(variant, "variant", ("strict", "skew"))
    chase = check_positive(chase, "chase", allow_zero=True)
    dw = check_positive(distance_weight, "distance_weight", allow_zero=True)
    x = np.arange(S)
    moves = np.array([-1, 0, 1])
    P = np.zeros((S, 3, S))
    for j, a in enumerate(moves):
        P[x, j, (x + a) % S] += 1 - 2 * noise
        P[x, j, (x + a + 1) % S] += noise
        P[x, j, (x + a - 1) % S] += noise
    bar = S // 2
    dist = np.minimum(np.abs(x - bar), S - np.abs(x - bar))
    base = np.broadcast_to(-dw * dist[:, None] / S - np.abs(moves)[None, :] / S, (H, S, 3)).copy()
    if variant == "strict":
        return FiniteMFG(P, np.full(S, 1.0 / S), base, congestion=1.0, name="beach bar (strict)")
    K = chase * (np.roll(np.eye(S), 1, axis=1) - np.roll(np.eye(S), -1, axis=1))
    return FiniteMFG(P, np.full(S, 1.0 / S), base, coupling=K, name="beach bar (skew)")
