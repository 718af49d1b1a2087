"""Distortion of AI alignment: RLHF/DPO against Nash learning from human feedback.

Gölz, Haghtalab and Yang (NeurIPS 2025) model a population of users, each comparing two
responses by a Bradley–Terry (BT) coin with temperature ``beta`` on their own utility, and ask how
much *average* utility an alignment method can lose, in the worst case, relative to the best
policy: the method's **distortion**. Everything here is exact (population limit, no sampling):

* :func:`preference_matrix` and :func:`average_utility`: what the methods see and what they are
  judged by;
* :func:`bt_reward` and :func:`rlhf_policy`: the RLHF/DPO reward, the maximum-likelihood BT fit
  to comparisons drawn from a pair distribution ``mu``, and the policy maximising it;
* :func:`maximal_lottery`: NLHF without a KL constraint, the Nash equilibrium of the symmetric
  "which response wins" game (a maximal lottery), by a linear program (HiGHS);
* :func:`kl_tilt` and :func:`nlhf_kl`: the KL-constrained versions (RLHF's exponential tilt of the
  reference policy, and the KL-regularised preference game of Munos et al.);
* :func:`distortion`: the ratio of the best achievable average utility to the method's.
"""
from __future__ import annotations

import numpy as np
from scipy.optimize import linprog
from scipy.special import expit, log_expit

from ..core import check_in_range, check_int, check_matrix, check_positive, check_vector

__all__ = [
    "preference_matrix", "average_utility", "uniform_pairs", "bt_loss", "bt_reward", "rlhf_policy",
    "borda_scores", "maximal_lottery", "distortion", "kl_divergence", "kl_tilt", "nlhf_kl",
    "nlhf_kl_penalised", "two_alternative_instance", "two_alternative_distortion",
]


def _check_population(U, w, beta):
    U = check_matrix(U, "U")
    if np.any(U < 0) or np.any(U > 1):
        raise ValueError("U must hold utilities in [0, 1]")
    w = check_vector(w, "w", dim=U.shape[0])
    if np.any(w < 0) or not np.isclose(w.sum(), 1.0, atol=1e-9):
        raise ValueError("w must be a probability vector (non-negative, summing to 1)")
    beta = check_positive(beta, "beta")
    return U, w, beta


def preference_matrix(U, w, beta: float) -> np.ndarray:
    """``P[a, b] = sum_k w_k sigma(beta (U[k, a] - U[k, b]))``: the probability that a random user
    prefers response ``a`` to ``b`` under individual Bradley–Terry models (``P[a, a] = 1/2``).

    ``U`` is (user types x alternatives) with entries in [0, 1], ``w`` the types' weights.
    """
    U, w, beta = _check_population(U, w, beta)
    return np.einsum("k,kab->ab", w, expit(beta * (U[:, :, None] - U[:, None, :])))


def average_utility(U, w) -> np.ndarray:
    """``v_a = sum_k w_k U[k, a]``: the average utility of each alternative (social welfare of a
    point mass); a policy ``pi`` has welfare ``pi @ v``."""
    U, w, _ = _check_population(U, w, 1.0)
    return w @ U


def _check_P(P) -> np.ndarray:
    P = check_matrix(P, "P", square=True)
    if np.any(P < 0) or np.any(P > 1) or not np.allclose(P + P.T, 1.0, atol=1e-9):
        raise ValueError("P must be a preference matrix: entries in [0, 1] with P + P.T = 1")
    return P


def uniform_pairs(m: int) -> np.ndarray:
    """The uniform distribution over unordered pairs, as a symmetric matrix with zero diagonal."""
    m = check_int(m, "m", minimum=2)
    mu = np.ones((m, m)) - np.eye(m)
    return mu / mu.sum()


def _check_mu(mu, m: int) -> np.ndarray:
    mu = check_matrix(mu, "mu", shape=(m, m))
    if np.any(mu < 0) or not np.allclose(mu, mu.T, atol=1e-12) or mu.sum() <= 0:
        raise ValueError("mu must be a symmetric, non-negative, non-zero matrix of pair weights")
    mu = mu.copy()
    np.fill_diagonal(mu, 0.0)
    # the comparison graph must be connected, else the BT reward is not identified
    seen, frontier = {0}, [0]
    while frontier:
        a = frontier.pop()
        for b in np.flatnonzero(mu[a] > 0):
            if int(b) not in seen:
                seen.add(int(b))
                frontier.append(int(b))
    if len(seen) < m:
        raise ValueError("mu's comparison graph must be connected (the BT reward is not identified)")
    return mu / mu.sum()


def bt_loss(r, P, mu) -> tuple[float, np.ndarray]:
    """The population BT negative log-likelihood and its gradient,
    ``L(r) = -sum_{a != b} mu_ab P_ab log sigma(r_a - r_b)`` (RLHF's reward-model loss; DPO's
    loss has the same population optimum for the induced reward)."""
    P = _check_P(P)
    m = P.shape[0]
    mu = _check_mu(mu, m)
    r = check_vector(r, "r", dim=m)
    D = r[:, None] - r[None, :]
    C = mu * P
    G = C * expit(-D)  # d(-log sigma(D_ab))/dD_ab = -(1 - sigma(D_ab))
    return float(-(C * log_expit(D)).sum()), -G.sum(1) + G.sum(0)


def bt_reward(P, mu=None, *, tol: float = 1e-13, maxiter: int = 100) -> np.ndarray:
    """The maximum-likelihood BT reward (mean zero) fitted to comparisons with pair weights ``mu``
    (default uniform) and outcome probabilities ``P``: RLHF's reward model in the population limit.

    Solved by Newton's method with a backtracking line search on the convex loss
    :func:`bt_loss`, with the additive gauge fixed by a mean-zero term; converges to ``tol`` in
    gradient norm or to machine precision in ``r`` (near-ties need this precision).
    """
    P = _check_P(P)
    m = P.shape[0]
    mu = uniform_pairs(m) if mu is None else _check_mu(mu, m)
    tol = check_positive(tol, "tol")
    maxiter = check_int(maxiter, "maxiter", minimum=1)
    C = mu * P

    def loss(r):
        D = r[:, None] - r[None, :]
        return float(-(C * log_expit(D)).sum()) + 0.5 * r.sum() ** 2

    r = np.zeros(m)
    for _ in range(maxiter):
        D = r[:, None] - r[None, :]
        G = C * expit(-D)
        g = -G.sum(1) + G.sum(0) + r.sum()
        if np.linalg.norm(g) < tol:
            break
        Wt = C * expit(D) * expit(-D)
        Wt = Wt + Wt.T
        H = np.diag(Wt.sum(1)) - Wt + 1.0
        step = np.linalg.solve(H, g)
        f0, t = loss(r), 1.0
        while loss(r - t * step) > f0 - 1e-4 * t * (g @ step) and t > 1e-12:
            t *= 0.5
        r = r - t * step
        if t * np.linalg.norm(step) <= 1e-15 * (1.0 + np.linalg.norm(r)):
            break  # at machine precision: the gradient cannot get any smaller
    else:
        raise RuntimeError("bt_reward: Newton's method did not converge (is mu's graph connected?)")
    return r - r.mean()


def _uniform_over_max(x: np.ndarray, atol: float) -> np.ndarray:
    top = x >= x.max() - atol
    return top / top.sum()


def rlhf_policy(P, mu=None, *, tie_tol: float = 1e-9) -> np.ndarray:
    """RLHF/DPO without a KL constraint: all mass on the argmax of :func:`bt_reward`
    (uniform over rewards within ``tie_tol`` of the maximum)."""
    return _uniform_over_max(bt_reward(P, mu), check_positive(tie_tol, "tie_tol", allow_zero=True))


def borda_scores(P) -> np.ndarray:
    """Probabilistic Borda scores ``sum_{b != a} P[a, b]``: the expected number of wins of ``a``
    against every other alternative."""
    P = _check_P(P)
    return P.sum(1) - 0.5


def maximal_lottery(P) -> np.ndarray:
    """NLHF without a KL constraint: a maximal lottery, i.e. ``p`` in the simplex with
    ``(p @ P)_b >= 1/2`` for every ``b`` (no response beats it in expectation); the Nash
    equilibrium of the symmetric zero-sum game with payoff ``P - P.T``. Solved as a linear program
    (HiGHS): maximise ``t`` subject to ``((P - P.T).T p)_b >= t``; the optimal ``t`` is 0.
    """
    P = _check_P(P)
    m = P.shape[0]
    M = P - P.T
    c = np.zeros(m + 1)
    c[-1] = -1.0
    A_ub = np.hstack([-M.T, np.ones((m, 1))])  # t - (M^T p)_b <= 0
    A_eq = np.append(np.ones(m), 0.0)[None, :]
    res = linprog(c, A_ub=A_ub, b_ub=np.zeros(m), A_eq=A_eq, b_eq=[1.0],
                  bounds=[(0, None)] * m + [(None, None)], method="highs")
    if res.status != 0:  # pragma: no cover - the LP is always feasible and bounded
        raise RuntimeError(f"maximal_lottery: linprog failed: {res.message}")
    p = np.clip(res.x[:m], 0.0, None)
    return p / p.sum()


def distortion(policy, v, best: float | None = None) -> float:
    """``best / (policy @ v)``; ``best`` defaults to ``max(v)`` (the unconstrained optimum).

    Utilities must be non-negative; a policy with zero welfare has infinite distortion.
    """
    v = check_vector(v, "v")
    policy = check_vector(policy, "policy", dim=v.size)
    if np.any(v < 0):
        raise ValueError("v must be non-negative (distortion is a ratio of welfares)")
    if np.any(policy < -1e-12) or not np.isclose(policy.sum(), 1.0, atol=1e-8):
        raise ValueError("policy must be a probability vector")
    best = float(v.max()) if best is None else check_positive(best, "best", allow_zero=True)
    sw = float(policy @ v)
    if sw <= 0:
        return np.inf if best > 0 else 1.0
    return best / sw


def kl_divergence(p, q) -> float:
    """``KL(p || q)`` (``inf`` if ``p`` puts mass where ``q`` has none)."""
    p, q = check_vector(p, "p"), check_vector(q, "q", dim=np.size(p))
    if np.any(p < 0) or np.any(q < 0):
        raise ValueError("p and q must be non-negative (probability vectors)")
    s = p > 0
    if np.any(q[s] <= 0):
        return np.inf
    return float(np.sum(p[s] * np.log(p[s] / q[s])))


def _check_ref(ref, m: int | None = None) -> np.ndarray:
    ref = check_vector(ref, "ref", dim=m)
    if np.any(ref <= 0) or not np.isclose(ref.sum(), 1.0, atol=1e-9):
        raise ValueError("ref must be a probability vector with full support")
    return ref / ref.sum()


def _tilt(ref: np.ndarray, scores: np.ndarray, eta: float) -> np.ndarray:
    z = np.log(ref) + eta * scores
    z = np.exp(z - z.max())
    return z / z.sum()


def kl_tilt(ref, scores, tau: float, *, tol: float = 1e-10) -> np.ndarray:
    """``argmax_pi pi @ scores`` subject to ``KL(pi || ref) <= tau``: the tilt
    ``pi ∝ ref * exp(scores / lam)`` with ``lam`` found by bisection (on ``log(1/lam)``) so that the
    KL equals ``tau`` (or the limit, ``ref`` restricted to the maximisers, if ``tau`` exceeds its KL).

    With ``scores = v`` it is the oracle's constrained optimum; with the BT reward it is RLHF's
    KL-constrained policy (whose closed form is this tilt).
    """
    ref = _check_ref(ref)
    scores = check_vector(scores, "scores", dim=ref.size)
    tau = check_positive(tau, "tau", allow_zero=True)
    tol = check_positive(tol, "tol")
    top = scores >= scores.max() - 1e-12
    limit = np.where(top, ref, 0.0) / ref[top].sum()
    if tau >= kl_divergence(limit, ref) - tol:
        return limit
    if tau == 0 or np.ptp(scores) == 0:
        return ref.copy()
    lo, hi = 0.0, 1.0
    while kl_divergence(_tilt(ref, scores, hi), ref) < tau:
        hi *= 2.0
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if kl_divergence(_tilt(ref, scores, mid), ref) < tau:
            lo = mid
        else:
            hi = mid
        if hi - lo <= 1e-14 * hi:
            break
    return _tilt(ref, scores, 0.5 * (lo + hi))


def nlhf_kl_penalised(P, ref, lam: float, *, tol: float = 1e-12, maxiter: int = 20000,
                      start=None) -> np.ndarray:
    """The symmetric equilibrium of the KL-regularised preference game of Munos et al.,
    ``max_pi min_pi' pi P pi' - lam KL(pi||ref) + lam KL(pi'||ref)``, i.e. the fixed point
    ``pi = softmax(log ref + P pi / lam)``, by mirror-prox (extragradient multiplicative weights,
    step ``1/(lam + 2)``) polished by Newton's method on the fixed-point equation; ``start``
    warm-starts it."""
    P, ref = _check_P(P), _check_ref(ref)
    if ref.size != P.shape[0]:
        raise ValueError("ref must have one entry per alternative of P")
    lam = check_positive(lam, "lam")
    tol = check_positive(tol, "tol")
    maxiter = check_int(maxiter, "maxiter", minimum=1)
    M = P - 0.5  # same equilibrium (constant shift), skew-symmetric payoff
    log_ref = np.log(ref)
    eta = 1.0 / (lam + 2.0)
    if start is not None:
        start = check_vector(start, "start", dim=ref.size)
        if np.any(start <= 0) or not np.isclose(start.sum(), 1.0, atol=1e-9):
            raise ValueError("start must be a probability vector with full support")
    log_pi = log_ref.copy() if start is None else np.log(start / start.sum())

    def residual(z):
        y = log_ref + M @ np.exp(z) / lam
        return z - (y - np.logaddexp.reduce(y))

    def step(log_p, grad):
        z = (1 - eta * lam) * log_p + eta * lam * log_ref + eta * grad
        return z - np.logaddexp.reduce(z)

    for it in range(maxiter):
        res = residual(log_pi)
        if np.max(np.abs(res)) < tol:
            return np.exp(log_pi)
        if it >= 20:  # Newton polish of the fixed point, once mirror-prox is near it
            pi = np.exp(log_pi)
            y = log_ref + M @ pi / lam
            s = np.exp(y - np.logaddexp.reduce(y))
            J = np.eye(ref.size) - (np.eye(ref.size) - s[None, :]) @ (M * pi[None, :]) / lam
            try:
                cand = log_pi - np.linalg.solve(J, res)
                cand -= np.logaddexp.reduce(cand)
                if np.max(np.abs(residual(cand))) < np.max(np.abs(res)):
                    log_pi = cand
                    continue
            except np.linalg.LinAlgError:
                pass
        half = step(log_pi, M @ np.exp(log_pi))
        log_pi = step(log_pi, M @ np.exp(half))
    raise RuntimeError("nlhf_kl_penalised: no convergence within maxiter")


def nlhf_kl(P, ref, tau: float, *, tol: float = 1e-8) -> np.ndarray:
    """NLHF under a KL budget: :func:`nlhf_kl_penalised` with its coefficient ``lam`` found by
    bisection on ``log lam`` so that ``KL(pi || ref) = tau`` (the maximal lottery when ``tau`` is at
    least its KL). A reconstruction: the paper's exact constrained formulation was not available."""
    P, ref = _check_P(P), _check_ref(ref)
    tau = check_positive(tau, "tau", allow_zero=True)
    ml = maximal_lottery(P)
    if tau >= kl_divergence(ml, ref) or tau == 0:
        return ml if tau > 0 else ref.copy()
    lo, hi = -12.0, 8.0  # log lam: small lam -> close to the maximal lottery, large -> ref
    pi = ref.copy()
    for _ in range(80):
        mid = 0.5 * (lo + hi)
        trial = nlhf_kl_penalised(P, ref, np.exp(mid), start=pi)
        if kl_divergence(trial, ref) > tau:
            lo = mid
        else:
            hi, pi = mid, trial
        if hi - lo < tol:
            break
    return pi


# ---------------------------------------------------------------- the beta/2 family


def two_alternative_instance(beta: float, eps: float, margin: float = 1e-9) -> tuple[np.ndarray, np.ndarray]:
    """Two responses ``a, b``; a minority ``eps`` has utilities ``(1, 0)``, the majority ``(0, delta)``
    with ``delta`` the smallest value (plus ``margin``) at which the majority wins the pairwise
    comparison, ``P(b > a) > 1/2``. Returns ``(U, w)``. (Our construction of the ``beta/2`` family.)"""
    beta = check_positive(beta, "beta")
    eps = check_in_range(eps, "eps", 0.0, 0.5)
    target = (0.5 - eps * expit(-beta)) / (1 - eps)  # sigma(beta delta) making P(b > a) = 1/2
    delta = np.log(target / (1 - target)) / beta + margin
    if delta > 1:
        raise ValueError("eps too large: the majority cannot win with delta <= 1")
    return np.array([[1.0, 0.0], [0.0, delta]]), np.array([eps, 1 - eps])


def two_alternative_distortion(beta: float, eps: float | None = None) -> float:
    """Closed form of the distortion on :func:`two_alternative_instance` (margin 0):
    ``eps / ((1 - eps) delta)``; with ``eps=None`` its limit as ``eps -> 0``,
    ``beta / (4 (sigma(beta) - 1/2))``, which tends to ``beta/2`` for large ``beta``."""
    beta = check_positive(beta, "beta")
    if eps is None:
        return beta / (4 * (expit(beta) - 0.5))
    U, w = two_alternative_instance(beta, eps, margin=0.0)
    return float(w[0] / (w[1] * U[1, 1]))
