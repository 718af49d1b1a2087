"""Constrained linear Thompson sampling (COLTS) for safe linear bandits (Gangrade & Saligrama,
NeurIPS 2025), its baselines, and the safe-linear-bandit environment.

A safe linear bandit: each round the learner plays ``a`` in the box ``[lo, hi]^d``, sees a noisy
reward ``theta* . a + eps`` and noisy constraint values ``Phi* a + xi`` (one per row), and must keep
``Phi* a <= alpha``. COLTS keeps ridge estimates of ``theta*`` and of every row of ``Phi*``, draws ONE
Gaussian perturbation ``zeta`` per round and solves the perturbed linear program

    max (theta_hat + zeta) . a   s.t.  (Phi_hat_i - zeta) . a <= alpha_i,  a in the box,

so the objective moves up and every constraint loosens along the same direction ("coupled noise").
S-COLTS then shrinks the LP's answer toward the known safe action 0 until the pessimistic
constraints hold; R-COLTS plays it directly (optionally after resampling). Policies follow the
book's bandit interface: ``select()`` returns an action, ``update(action, reward, constraints)``.
"""
from __future__ import annotations

import math
import os
import sys
from dataclasses import dataclass

import numpy as np

from ..core import Trace
from ..core.validate import (RngLike, as_rng, check_choice, check_in_range, check_int, check_matrix, check_positive,
                             check_real, check_spd, check_vector)

NOISE_DESIGNS = ("coupled", "independent")
VARIANTS = ("S", "R")


# --------------------------------------------------------------------------- the environment


_HIGHS = None


def _highs():
    """One reusable HiGHS instance (a model is passed per call). HiGHS prints a banner on the first
    construction in a process, at the C level; it is sent to /dev/null so notebooks stay clean."""
    global _HIGHS
    if _HIGHS is None:
        import highspy

        sys.stdout.flush()
        saved = os.dup(1)
        try:
            with open(os.devnull, "w") as null:
                os.dup2(null.fileno(), 1)
                h = highspy.Highs()
        finally:
            os.dup2(saved, 1)
            os.close(saved)
        h.setOptionValue("output_flag", False)
        # No "threads" option: HiGHS has one thread scheduler per process, fixed by the first solve;
        # an instance asking for another count then fails ("Not Set") whenever another module (ch10's
        # HOM-PGD, cvxpy) solved first with the default, as in one process running every claim.
        _HIGHS = h
    return _HIGHS


def solve_lp(objective: np.ndarray, A: np.ndarray, b: np.ndarray, lo: float = 0.0, hi: float = 1.0) -> np.ndarray | None:
    """``argmax objective . a`` s.t. ``A a <= b`` and ``lo <= a <= hi``, by HiGHS (highspy, the solver
    behind ``scipy.optimize.linprog(method="highs")``, called directly: about 4x less overhead per
    small LP); None when infeasible."""
    import highspy

    c = check_vector(objective, "objective")
    A = check_matrix(A, "A", shape=(None, c.size))
    b = check_vector(b, "b", dim=A.shape[0])
    if not lo < hi:
        raise ValueError(f"lo must be below hi, got lo={lo}, hi={hi}")
    m, d = A.shape
    lp = highspy.HighsLp()
    lp.num_col_, lp.num_row_ = d, m
    lp.col_cost_ = -c
    lp.col_lower_, lp.col_upper_ = np.full(d, float(lo)), np.full(d, float(hi))
    lp.row_lower_, lp.row_upper_ = np.full(m, -highspy.kHighsInf), b
    lp.a_matrix_.format_ = highspy.MatrixFormat.kRowwise
    lp.a_matrix_.start_ = np.arange(0, m * d + 1, d)
    lp.a_matrix_.index_ = np.tile(np.arange(d), m)
    lp.a_matrix_.value_ = A.ravel()
    h = _highs()
    h.passModel(lp)
    h.run()
    status = h.getModelStatus()
    if status == highspy.HighsModelStatus.kInfeasible:
        return None
    if status != highspy.HighsModelStatus.kOptimal:
        raise RuntimeError(f"HiGHS failed: {h.modelStatusToString(status)}")
    return np.clip(np.array(h.getSolution().col_value), lo, hi)


@dataclass
class SafeLinearBandit:
    """A safe linear bandit on the box ``[lo, hi]^d``: reward vector ``theta`` (d,), constraint matrix
    ``Phi`` (m, d), thresholds ``alpha`` (m,), Gaussian feedback noise of standard deviation ``noise``."""

    theta: np.ndarray
    Phi: np.ndarray
    alpha: np.ndarray
    lo: float = 0.0
    hi: float = 1.0
    noise: float = 0.1

    def __post_init__(self) -> None:
        self.theta = check_vector(self.theta, "theta")
        self.Phi = check_matrix(self.Phi, "Phi", shape=(None, self.theta.size))
        self.alpha = check_vector(self.alpha, "alpha", dim=self.Phi.shape[0])
        self.lo, self.hi = check_real(self.lo, "lo"), check_real(self.hi, "hi")
        if not self.lo < self.hi:
            raise ValueError(f"lo must be below hi, got lo={self.lo}, hi={self.hi}")
        self.noise = check_positive(self.noise, "noise", allow_zero=True)
        a = solve_lp(self.theta, self.Phi, self.alpha, self.lo, self.hi)
        if a is None:
            raise ValueError("the constraints Phi a <= alpha leave no feasible action in the box")
        self.a_star = a
        self.value_star = float(self.theta @ a)

    @property
    def d(self) -> int:
        return self.theta.size

    @property
    def m(self) -> int:
        return self.alpha.size

    def feedback(self, action: np.ndarray, rng: np.random.Generator) -> tuple[float, np.ndarray]:
        """Noisy reward and noisy constraint values of one play."""
        a = check_vector(action, "action", dim=self.d)
        eps = rng.standard_normal(self.m + 1) * self.noise
        return float(self.theta @ a + eps[0]), self.Phi @ a + eps[1:]

    def regret(self, action: np.ndarray) -> float:
        """``theta* . (a* - a)``: negative when an unsafe action beats the constrained optimum."""
        return self.value_star - float(self.theta @ action)

    def violation(self, action: np.ndarray) -> float:
        """``max_i (Phi*_i a - alpha_i)_+``: this round's contribution to the risk."""
        return float(max(np.max(self.Phi @ action - self.alpha), 0.0))


def random_instance(d: int = 4, m: int = 4, noise: float = 0.1, rng: RngLike = None) -> SafeLinearBandit:
    """The chapter's random instance: ``theta ~ U[0,1]^d``, ``Phi ~ U[0.2,1]^{m x d}``, ``alpha = 1``,
    actions in ``[0,1]^d`` (the zero action is strictly safe)."""
    d = check_int(d, "d", minimum=1)
    m = check_int(m, "m", minimum=1)
    gen = as_rng(rng)
    return SafeLinearBandit(gen.uniform(0, 1, d), gen.uniform(0.2, 1, (m, d)), np.ones(m), 0.0, 1.0, noise)


# --------------------------------------------------------------------------- estimation and perturbation


def inv_sqrt_psd(V: np.ndarray) -> np.ndarray:
    """``V^{-1/2}`` of a symmetric positive definite matrix, by ``eigh``."""
    V = check_spd(V, "V")
    w, Q = np.linalg.eigh(V)
    return (Q / np.sqrt(w)) @ Q.T


class RidgeEstimates:
    """Ridge least squares for the reward vector and every constraint row, sharing one Gram matrix
    ``V = lam I + sum a a^T`` (the OFUL estimates the paper builds on)."""

    def __init__(self, d: int, m: int, lam: float = 1.0) -> None:
        self.d = check_int(d, "d", minimum=1)
        self.m = check_int(m, "m", minimum=1)
        self.lam = check_positive(lam, "lam")
        self.V = self.lam * np.eye(self.d)
        self.u = np.zeros((self.m + 1, self.d))  # row 0: sum r a; rows 1..m: sum s_i a
        self.n = 0

    def update(self, action: np.ndarray, reward: float, constraints: np.ndarray) -> None:
        a = check_vector(action, "action", dim=self.d)
        y = np.concatenate([[check_real(reward, "reward")], check_vector(constraints, "constraints", dim=self.m)])
        self.V += np.outer(a, a)
        self.u += y[:, None] * a[None, :]
        self.n += 1

    def estimates(self) -> tuple[np.ndarray, np.ndarray]:
        """``(theta_hat, Phi_hat)``."""
        est = np.linalg.solve(self.V, self.u.T).T
        return est[0], est[1:]


def confidence_radius(t: int, d: int, m: int, lam: float, noise_bound: float, norm_bound: float,
                      action_bound: float, delta: float = 0.05) -> float:
    """The self-normalised radius ``beta_t`` (Abbasi-Yadkori et al. 2011), union-bounded over the
    reward and the ``m`` constraint rows: with probability ``1 - delta`` every one of the ``m + 1``
    unknown vectors lies within ``beta_t`` of its ridge estimate in the ``V_t`` norm, for all t."""
    t = check_int(t, "t")
    lam = check_positive(lam, "lam")
    delta = check_in_range(delta, "delta", 0.0, 1.0)
    R = check_positive(noise_bound, "noise_bound", allow_zero=True)
    S = check_positive(norm_bound, "norm_bound", allow_zero=True)
    L = check_positive(action_bound, "action_bound")
    return R * math.sqrt(2 * math.log((m + 1) / delta) + d * math.log(1 + t * L ** 2 / (lam * d))) + math.sqrt(lam) * S


def perturb(theta_hat: np.ndarray, Phi_hat: np.ndarray, root: np.ndarray, scale: float, rng: np.random.Generator,
            design: str = "coupled") -> tuple[np.ndarray, np.ndarray]:
    """One draw of the perturbed estimates. ``root`` is ``V^{-1/2}``; the noise is
    ``zeta = scale * V^{-1/2} eta``, ``eta ~ N(0, I)``. Coupled (the paper's design): ONE ``zeta``,
    ``theta_hat + zeta`` and every row ``Phi_hat_i - zeta``. Independent (the ablation): a fresh
    ``zeta`` for the objective and for each row."""
    design = check_choice(design, "design", NOISE_DESIGNS)
    m, d = Phi_hat.shape
    k = 1 if design == "coupled" else m + 1
    zeta = scale * rng.standard_normal((k, d)) @ root  # rows: root is symmetric
    if design == "coupled":
        return theta_hat + zeta[0], Phi_hat - zeta[0]
    return theta_hat + zeta[0], Phi_hat - zeta[1:]


def shrink_factor(action: np.ndarray, Phi_hat: np.ndarray, alpha: np.ndarray, V_inv: np.ndarray, beta: float) -> float:
    """S-COLTS's scaling toward the safe action 0: the largest ``rho in [0, 1]`` with
    ``Phi_hat_i (rho a) + beta ||rho a||_{V^-1} <= alpha_i`` for every row (needs ``alpha > 0``).
    Both sides are linear in rho, so ``rho = min(1, min_i alpha_i / (Phi_hat_i a + beta ||a||_{V^-1})_+)``."""
    a = np.asarray(action, dtype=float)
    if np.any(alpha <= 0):
        raise ValueError("alpha must be positive for the zero action to be a safe action")
    den = Phi_hat @ a + beta * math.sqrt(max(float(a @ V_inv @ a), 0.0))
    binding = den > 0
    if not binding.any():
        return 1.0
    return float(min(1.0, np.min(alpha[binding] / den[binding])))


# --------------------------------------------------------------------------- policies


class COLTS:
    """Constrained linear Thompson sampling (Algorithm 'COLTS' with its S- and R- variants, in the paper).

    Parameters
    ----------
    d, m : int
        Action dimension and number of constraints.
    alpha : array (m,)
        Known constraint thresholds.
    variant : "S" or "R"
        "S" (S-COLTS): shrink the perturbed LP's action toward the safe action 0 until the
        pessimistic constraints hold (zero risk w.h.p.). "R" (R-COLTS): play the perturbed LP's
        action; with ``resamples > 1`` keep, among that many draws, the one whose LP value is largest
        (our reading of "R": resampling).
    design : "coupled" or "independent"
        The noise design (see :func:`perturb`).
    inflation : float >= 0
        The perturbation's scale in units of ``beta_t``: ``zeta = inflation * beta_t V^{-1/2} eta``
        (0: the certainty-equivalent LP).
    lam, delta, noise_bound, norm_bound : ridge and confidence-radius constants.
    lo, hi : the action box.
    """

    def __init__(self, d: int, m: int, alpha: np.ndarray, *, variant: str = "S", design: str = "coupled",
                 inflation: float = 1.0, resamples: int = 1, lam: float = 1.0, delta: float = 0.05,
                 noise_bound: float = 0.1, norm_bound: float = 1.0, lo: float = 0.0, hi: float = 1.0,
                 rng: RngLike = None) -> None:
        self.est = RidgeEstimates(d, m, lam)
        self.d, self.m = self.est.d, self.est.m
        self.alpha = check_vector(alpha, "alpha", dim=self.m)
        self.variant = check_choice(variant, "variant", VARIANTS)
        self.design = check_choice(design, "design", NOISE_DESIGNS)
        self.inflation = check_positive(inflation, "inflation", allow_zero=True)
        self.resamples = check_int(resamples, "resamples", minimum=1)
        self.delta = check_in_range(delta, "delta", 0.0, 1.0)
        self.noise_bound = check_positive(noise_bound, "noise_bound", allow_zero=True)
        self.norm_bound = check_positive(norm_bound, "norm_bound", allow_zero=True)
        self.lo, self.hi = check_real(lo, "lo"), check_real(hi, "hi")
        if not self.lo < self.hi:
            raise ValueError(f"lo must be below hi, got lo={lo}, hi={hi}")
        if self.variant == "S" and not (self.lo <= 0.0 <= self.hi and np.all(self.alpha > 0)):
            raise ValueError("S-COLTS needs the safe action 0: lo <= 0 <= hi and alpha > 0")
        self.rng = as_rng(rng)
        self.name = f"{self.variant}-COLTS" + ("" if self.design == "coupled" else " (independent noise)")
        self.lp_calls = 0
        self.infeasible = 0
        self.last_rho = 1.0

    def beta(self) -> float:
        """The confidence radius at the current round."""
        bound = math.sqrt(self.d) * max(abs(self.lo), abs(self.hi))
        return confidence_radius(self.est.n, self.d, self.m, self.est.lam, self.noise_bound, self.norm_bound,
                                 bound, self.delta)

    def _sample_action(self, theta_hat, Phi_hat, root, beta) -> np.ndarray:
        best, best_val = None, -np.inf
        for _ in range(self.resamples):
            th, Ph = perturb(theta_hat, Phi_hat, root, self.inflation * beta, self.rng, self.design)
            self.lp_calls += 1
            a = solve_lp(th, Ph, self.alpha, self.lo, self.hi)
            if a is not None and th @ a > best_val:
                best, best_val = a, float(th @ a)
        if best is None:  # every perturbed LP infeasible: fall back to the zero action (or the box's nearest point)
            self.infeasible += 1
            best = np.clip(np.zeros(self.d), self.lo, self.hi)
        return best

    def select(self) -> np.ndarray:
        """The action to play this round."""
        theta_hat, Phi_hat = self.est.estimates()
        w, Q = np.linalg.eigh(self.est.V)
        root = (Q / np.sqrt(w)) @ Q.T
        beta = self.beta()
        a = self._sample_action(theta_hat, Phi_hat, root, beta)
        if self.variant == "S":
            self.last_rho = shrink_factor(a, Phi_hat, self.alpha, root @ root, beta)
            a = self.last_rho * a
        return a

    def update(self, action: np.ndarray, reward: float, constraints: np.ndarray) -> None:
        """Record a play: its action, noisy reward and noisy constraint values."""
        self.est.update(action, reward, constraints)


class SafeLTS:
    """The SOCP baseline: linear Thompson sampling over the *pessimistic* safe set
    ``{a in box : Phi_hat_i a + beta ||a||_{V^-1} <= alpha_i}`` (the approach of Moradipari et al.
    2021, 'Safe-LTS'): a second-order-cone program per round, solved by cvxpy (Clarabel). Same
    estimates, radius and ``inflation`` as :class:`COLTS`; zero risk w.h.p. like S-COLTS."""

    name = "Safe-LTS (SOCP)"

    def __init__(self, d: int, m: int, alpha: np.ndarray, *, inflation: float = 1.0, lam: float = 1.0,
                 delta: float = 0.05, noise_bound: float = 0.1, norm_bound: float = 1.0, lo: float = 0.0,
                 hi: float = 1.0, rng: RngLike = None) -> None:
        import cvxpy as cp

        self._colts = COLTS(d, m, alpha, variant="S", inflation=inflation, lam=lam, delta=delta,
                            noise_bound=noise_bound, norm_bound=norm_bound, lo=lo, hi=hi, rng=rng)
        self.est, self.d, self.m, self.alpha = self._colts.est, d, m, self._colts.alpha
        self._a = cp.Variable(d)
        self._c = cp.Parameter(d)
        self._Phi = cp.Parameter((m, d))
        self._width = cp.Parameter((d, d))  # beta V^{-1/2}: one parameter keeps the problem DPP (fast re-solves)
        cons = [self._Phi @ self._a + cp.norm(self._width @ self._a, 2) <= self._colts.alpha,
                self._a >= lo, self._a <= hi]
        self._prob = cp.Problem(cp.Maximize(self._c @ self._a), cons)
        self.socp_calls = 0

    def select(self) -> np.ndarray:
        """The action to play this round."""
        theta_hat, Phi_hat = self.est.estimates()
        root = inv_sqrt_psd(self.est.V)
        beta = self._colts.beta()
        th, _ = perturb(theta_hat, Phi_hat, root, self._colts.inflation * beta, self._colts.rng, "coupled")
        self._c.value, self._Phi.value, self._width.value = th, Phi_hat, beta * root
        self._prob.solve(solver="CLARABEL")
        self.socp_calls += 1
        if self._a.value is None:
            return np.zeros(self.d)
        return self.shrink_to_safe(np.clip(self._a.value, self._colts.lo, self._colts.hi), Phi_hat, root @ root, beta)

    def shrink_to_safe(self, a, Phi_hat, V_inv, beta) -> np.ndarray:
        """Guard the solver's tolerance: scale the answer into the pessimistic set."""
        return shrink_factor(a, Phi_hat, self.alpha, V_inv, beta) * a

    def update(self, action: np.ndarray, reward: float, constraints: np.ndarray) -> None:
        """Record a play: its action, noisy reward and noisy constraint values."""
        self.est.update(action, reward, constraints)


def run_bandit(policy, bandit: SafeLinearBandit, horizon: int, rng: RngLike = None) -> Trace:
    """Play ``policy`` for ``horizon`` rounds on ``bandit``. The Trace has cumulative ``regret``
    (may decrease when unsafe actions beat the optimum), ``regret_plus`` (sum of positive parts),
    ``risk`` (sum of violations) and, for S-COLTS, the shrink factor ``rho``; ``objective`` is the
    cumulative regret."""
    horizon = check_int(horizon, "horizon", minimum=1)
    if policy.d != bandit.d or policy.m != bandit.m:
        raise ValueError(f"policy is for d={policy.d}, m={policy.m}; bandit has d={bandit.d}, m={bandit.m}")
    gen = as_rng(rng)
    reg, viol, rho = np.empty(horizon), np.empty(horizon), np.full(horizon, np.nan)
    for t in range(horizon):
        a = policy.select()
        reward, cons = bandit.feedback(a, gen)
        policy.update(a, reward, cons)
        reg[t], viol[t] = bandit.regret(a), bandit.violation(a)
        if getattr(policy, "variant", None) == "S":
            rho[t] = policy.last_rho
    return Trace.from_dict({"method": policy.name, "meta": {"d": bandit.d, "m": bandit.m, "noise": bandit.noise},
                            "iteration": list(range(1, horizon + 1)), "objective": np.cumsum(reg).tolist(),
                            "regret": np.cumsum(reg).tolist(), "regret_plus": np.cumsum(np.maximum(reg, 0)).tolist(),
                            "risk": np.cumsum(viol).tolist(), "rho": rho.tolist()})


# --------------------------------------------------------------------------- local optimism (the paper's key lemma)


def local_optimism_frequency(bandit: SafeLinearBandit, samples: int = 4000, n: int = 200, inflation: float = 1.0,
                             design: str = "coupled", rng: RngLike = None) -> float:
    """How often one perturbed LP is *locally optimistic* at the true optimum ``a*``: the perturbed
    objective rates ``a*`` at least as high as the truth, ``theta_tilde . a* >= theta* . a*``, and
    ``a*`` stays feasible, ``Phi_tilde a* <= alpha``. Estimates come from ``n`` plays along each axis
    (``V = n I``, errors ``N(0, noise^2 / n)`` per coordinate; a fresh estimate per sample); the
    perturbation is ``zeta = inflation * (noise / sqrt n) eta`` (``beta = noise``, the posterior scale)."""
    samples = check_int(samples, "samples", minimum=1)
    n = check_int(n, "n", minimum=1)
    inflation = check_positive(inflation, "inflation")
    design = check_choice(design, "design", NOISE_DESIGNS)
    gen = as_rng(rng)
    d, m, s = bandit.d, bandit.m, bandit.noise / math.sqrt(n)
    a = bandit.a_star
    err = gen.standard_normal((samples, m + 1, d)) @ a * s  # (theta_hat - theta*) . a*, (Phi_hat_i - Phi*_i) . a*
    k = 1 if design == "coupled" else m + 1
    z = (gen.standard_normal((samples, k, d)) @ a) * inflation * s  # zeta . a*, shared or per row
    z = np.broadcast_to(z, (samples, m + 1))
    obj_ok = err[:, 0] + z[:, 0] >= 0
    cons_ok = np.all(bandit.Phi @ a + err[:, 1:] - z[:, 1:] <= bandit.alpha + 1e-12, axis=1)
    return float(np.mean(obj_ok & cons_ok))
