"""PRO: proximalized preference optimisation, and the decomposition of DPO it rests on.

Guo, Li and Chen (NeurIPS 2025) split DPO's loss into an *optimiser* that raises the likelihood of
responses with a positive score and lowers it for negative scores, and a *regulariser*
that pulls the implicit rewards r(y) = beta log(pi(y)/pi_ref(y)) of the responses towards each
other. Restricted to the two responses of a pair, the regulariser only ties r(y_w) to r(y_l): a
common shift of both is free (likelihood underdetermination). PRO restores the full regulariser
approximately by adding one *hyper-response* per prompt that stands for every unseen response.

The losses below act on per-prompt arrays of log-likelihoods ``logp`` (prompts, m) of the m
observed responses of each prompt, so they serve the softmax-feature toy (numpy, with analytic
gradients) and the tiny language model (torch, autograd) alike. The weighting of the
hyper-response term is our reconstruction (the paper's exact weights were not available).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
from torch.nn import functional as F

from ..core.validate import RngLike, as_rng, check_choice, check_int, check_positive

LOG2 = float(np.log(2.0))
FEEDBACK = ("pairwise", "binary", "scalar")
METHODS = ("PRO", "DPO", "IPO", "DPO+NLL", "KTO", "SFT")


# --------------------------------------------------------------------------- checks


def _as_logp(x, name: str, m: int | None = None, validate: bool = True) -> np.ndarray:
    """``x`` as a float array of log-probabilities; ``validate=False`` (train_toy's inner loop, whose
    inputs come from a log-softmax) skips the checks."""
    a = np.asarray(x, dtype=float)
    if not validate:
        return a
    if a.ndim != 2 or a.shape[0] == 0 or a.shape[1] == 0:
        raise ValueError(f"{name} must be a non-empty (prompts, responses) array, got shape {a.shape}")
    if m is not None and a.shape[1] != m:
        raise ValueError(f"{name} must have {m} responses per prompt, got {a.shape[1]}")
    if not np.all(np.isfinite(a)) or np.any(a > 1e-9):
        raise ValueError(f"{name} must hold finite log-probabilities (<= 0)")
    return np.minimum(a, 0.0)


def _same(a: np.ndarray, b, name: str, validate: bool = True) -> np.ndarray:
    b = _as_logp(b, name, validate=validate)
    if b.shape != a.shape:
        raise ValueError(f"{name} must have shape {a.shape}, got {b.shape}")
    return b


# --------------------------------------------------------------------------- the pieces


def softplus(x):
    """log(1 + e^x), computed without overflow."""
    return np.logaddexp(0.0, x)


def sigmoid(x):
    """1 / (1 + e^-x), computed without overflow."""
    return 0.5 * (1.0 + np.tanh(0.5 * np.asarray(x, dtype=float)))


def kl_half(delta):
    """KL(Bernoulli(1/2) || Bernoulli(sigmoid(delta))): the regulariser's scalar KL on a reward
    margin (not a sequence-level KL). Symmetric, zero at 0, growing like |delta|/2."""
    d = np.asarray(delta, dtype=float)
    return 0.5 * softplus(d) + 0.5 * softplus(-d) - LOG2


def kl_half_grad(delta):
    """d/d delta of :func:`kl_half`: sigmoid(delta) - 1/2."""
    return sigmoid(delta) - 0.5


def log1mexp(x):
    """log(1 - e^x) for x <= 0, stable at both ends (-inf at x = 0)."""
    x = np.minimum(np.asarray(x, dtype=float), 0.0)
    with np.errstate(divide="ignore"):
        return np.where(x > -LOG2, np.log(-np.expm1(x)), np.log1p(-np.exp(x)))


def hyper_logmass(logp, *, validate: bool = True) -> np.ndarray:
    """log pi(hyper-response) = log(1 - sum of the observed responses' probabilities), per prompt
    (the hyper-response lumps every unseen response of the prompt together)."""
    a = _as_logp(logp, "logp", validate=validate)
    top = a.max(axis=1, keepdims=True)
    lse = (top + np.log(np.exp(a - top).sum(axis=1, keepdims=True)))[:, 0]
    return log1mexp(lse)


def preference_scores(prefs) -> np.ndarray:
    """Scores s(y_i) = E_{y' ~ mu}[p(y_i > y')] - 1/2 for mu uniform on the m responses of each
    prompt, from preference probabilities ``prefs`` (prompts, m, m) with p_ij + p_ji = 1.
    They average to zero over mu; a pair with p = 1 gets (+1/4, -1/4)."""
    p = np.asarray(prefs, dtype=float)
    if p.ndim != 3 or p.shape[1] != p.shape[2] or p.shape[0] == 0 or p.shape[1] < 2:
        raise ValueError(f"prefs must be a (prompts, m, m) array with m >= 2, got shape {p.shape}")
    if not np.all(np.isfinite(p)) or np.any(p < 0) or np.any(p > 1):
        raise ValueError("prefs must hold probabilities in [0, 1]")
    if not np.allclose(p + p.transpose(0, 2, 1), 1.0, atol=1e-9):
        raise ValueError("prefs must satisfy p_ij + p_ji = 1 (and p_ii = 1/2)")
    return p.mean(axis=2) - 0.5


def feedback_scores(feedback: str, labels=None, n_prompts: int | None = None) -> np.ndarray:
    """Pointwise scores for each feedback type (what the decomposition's optimiser needs).

    - ``'pairwise'``: (chosen, rejected) per prompt, scores (+1/4, -1/4) (``n_prompts`` rows);
    - ``'binary'``: ``labels`` (prompts, 1) in {0, 1} (undesirable, desirable): scores -1/2, +1/2;
    - ``'scalar'``: ``labels`` (prompts, m) ratings, centred within each prompt and scaled so the
      largest |score| is 1/2 (our reconstruction; a prompt with equal ratings scores 0).
    """
    check_choice(feedback, "feedback", FEEDBACK)
    if feedback == "pairwise":
        n = check_int(n_prompts, "n_prompts", minimum=1) if labels is None else len(np.asarray(labels))
        return np.tile([0.25, -0.25], (n, 1))
    v = np.asarray(labels, dtype=float)
    if v.ndim != 2 or v.size == 0 or not np.all(np.isfinite(v)):
        raise ValueError(f"labels must be a finite non-empty (prompts, m) array, got shape {v.shape}")
    if feedback == "binary":
        if not np.all((v == 0) | (v == 1)):
            raise ValueError("labels must be 0 (undesirable) or 1 (desirable) for binary feedback")
        return v - 0.5
    if v.shape[1] < 2:
        raise ValueError("scalar feedback needs at least two rated responses per prompt")
    c = v - v.mean(axis=1, keepdims=True)
    scale = np.abs(c).max(axis=1, keepdims=True)
    return np.divide(0.5 * c, scale, out=np.zeros_like(c), where=scale > 0)


# --------------------------------------------------------------------------- the decomposition


def _population_args(r, mu, prefs):
    r = np.asarray(r, dtype=float)
    mu = np.asarray(mu, dtype=float)
    p = np.asarray(prefs, dtype=float)
    if r.ndim != 1 or r.size < 2 or not np.all(np.isfinite(r)):
        raise ValueError("r must be a finite vector of at least two implicit rewards")
    if mu.shape != r.shape or np.any(mu < 0) or not np.isclose(mu.sum(), 1.0):
        raise ValueError(f"mu must be a probability vector of length {r.size}")
    if p.shape != (r.size, r.size):
        raise ValueError(f"prefs must be ({r.size}, {r.size})")
    preference_scores(p[None])   # validates p_ij + p_ji = 1
    return r, mu, p


def dpo_population_loss(r, mu, prefs) -> float:
    """DPO's population loss E_{y1, y2 ~ mu}[-p log sigmoid(r1 - r2) - (1 - p) log sigmoid(r2 - r1)]
    for implicit rewards ``r`` of K responses, sampling law ``mu`` and preferences ``prefs`` (K, K)."""
    r, mu, p = _population_args(r, mu, prefs)
    d = r[:, None] - r[None, :]
    return float(mu @ (p * softplus(-d) + (1 - p) * softplus(d)) @ mu)


def decomposed_loss(r, mu, prefs) -> float:
    """The decomposition of DPO's population loss: 2 (optimiser + regulariser) + log 2 with
    optimiser -E_mu[s(y) r(y)] and regulariser 1/2 E_{y1, y2 ~ mu} KL_1/2(r1 - r2), where
    s(y) = E_{y' ~ mu}[p(y > y')] - 1/2. Equal to :func:`dpo_population_loss` (Theorem; our
    derivation, exact)."""
    r, mu, p = _population_args(r, mu, prefs)
    s = p @ mu - 0.5
    reg = 0.5 * mu @ kl_half(r[:, None] - r[None, :]) @ mu
    return float(2.0 * (-(mu * s) @ r + reg) + LOG2)


# --------------------------------------------------------------------------- losses (numpy)


@dataclass
class LossValue:
    """A loss averaged over prompts and its gradient with respect to ``logp`` (prompts, m)."""

    value: float
    grad: np.ndarray


def pro_loss(logp, logp_ref, scores, *, beta: float = 1.0, alpha: float = 1.0, hyper=True,
             validate: bool = True) -> LossValue:
    """PRO's loss (reconstructed), averaged over prompts, with mu-hat uniform on the m observed
    responses of each prompt:

        -2 sum_y mu s(y) r(y) + sum_{y, y'} mu mu' KL_1/2(r_y - r_y') + alpha sum_y 2 mu KL_1/2(r_y - r_hyper)

    with r(y) = beta (logp - logp_ref) and r_hyper the hyper-response's reward (its log-mass from
    :func:`hyper_logmass`, for the policy and the reference). ``hyper`` (bool or per-prompt bools)
    says whether unseen responses exist; where not, the hyper term is skipped. With alpha = 0 and
    pairwise scores this is (DPO's loss - log 2) / 2 exactly. ``validate=False`` skips the checks
    of ``logp`` and ``logp_ref`` (for callers whose inputs come from a log-softmax).
    """
    a = _as_logp(logp, "logp", validate=validate)
    b = _same(a, logp_ref, "logp_ref", validate)
    s = np.asarray(scores, dtype=float)
    if s.shape != a.shape or not np.all(np.isfinite(s)):
        raise ValueError(f"scores must be finite with shape {a.shape}, got {s.shape}")
    beta = check_positive(beta, "beta")
    alpha = check_positive(alpha, "alpha", allow_zero=True)
    n, m = a.shape
    mu = 1.0 / m
    r = beta * (a - b)
    opt = -2.0 * mu * (s * r).sum(axis=1)
    diff = r[:, :, None] - r[:, None, :]
    reg = mu * mu * kl_half(diff).sum(axis=(1, 2))
    g_r = -2.0 * mu * s + 2.0 * mu * mu * kl_half_grad(diff).sum(axis=2)
    grad = beta * g_r
    total = opt + reg
    mask = np.broadcast_to(np.asarray(hyper, dtype=bool), (n,))
    if alpha > 0 and mask.any():
        h, h_ref = hyper_logmass(a[mask], validate=validate), hyper_logmass(b[mask], validate=validate)
        ok = np.isfinite(h) & np.isfinite(h_ref)
        idx = np.flatnonzero(mask)[ok]
        h, h_ref = h[ok], h_ref[ok]
        d = r[idx] - beta * (h - h_ref)[:, None]
        total[idx] += alpha * 2.0 * mu * kl_half(d).sum(axis=1)
        k = alpha * 2.0 * mu * kl_half_grad(d)                 # d loss / d r_y (direct) and -sum: d r_hyper
        dh = -beta * k.sum(axis=1)                              # d loss / d log pi(hyper)
        # log pi(hyper) = log(1 - sum exp(logp)): d/d logp_j = -exp(logp_j - log pi(hyper))
        grad[idx] += beta * k - dh[:, None] * np.exp(a[idx] - h[:, None])
    return LossValue(float(total.mean()), grad / n)


def dpo_loss(logp, logp_ref, *, beta: float = 1.0, validate: bool = True) -> LossValue:
    """DPO: -log sigmoid(r(y_w) - r(y_l)), columns (chosen, rejected)."""
    a = _as_logp(logp, "logp", 2, validate)
    b = _same(a, logp_ref, "logp_ref", validate)
    beta = check_positive(beta, "beta")
    r = beta * (a - b)
    d = r[:, 0] - r[:, 1]
    g = -sigmoid(-d) * beta
    return LossValue(float(softplus(-d).mean()), np.stack([g, -g], axis=1) / len(a))


def ipo_loss(logp, logp_ref, *, tau: float = 0.1, validate: bool = True) -> LossValue:
    """IPO (Azar et al.): (h - 1/(2 tau))^2 with h the log-ratio margin."""
    a = _as_logp(logp, "logp", 2, validate)
    b = _same(a, logp_ref, "logp_ref", validate)
    tau = check_positive(tau, "tau")
    h = (a[:, 0] - b[:, 0]) - (a[:, 1] - b[:, 1])
    e = h - 0.5 / tau
    g = 2.0 * e
    return LossValue(float((e ** 2).mean()), np.stack([g, -g], axis=1) / len(a))


def dpo_nll_loss(logp, logp_ref, *, beta: float = 1.0, lam: float = 1.0, validate: bool = True) -> LossValue:
    """DPO plus lam times the chosen response's negative log-likelihood (RPO/DPOP-style fix)."""
    out = dpo_loss(logp, logp_ref, beta=beta, validate=validate)
    lam = check_positive(lam, "lam", allow_zero=True)
    a = np.asarray(logp, dtype=float)
    out.grad[:, 0] -= lam / len(a)
    return LossValue(out.value - lam * float(a[:, 0].mean()), out.grad)


def kto_loss(logp, logp_ref, labels, *, beta: float = 1.0, z0=0.0, lam_d: float = 1.0,
             lam_u: float = 1.0, validate: bool = True) -> LossValue:
    """KTO (Ethayarajh et al.) on binary feedback: lam_D (1 - sigmoid(beta (r - z0))) for a
    desirable response, lam_U (1 - sigmoid(beta (z0 - r))) for an undesirable one, r the log-ratio
    and z0 a (detached) estimate of KL(pi || pi_ref) per prompt."""
    a = _as_logp(logp, "logp", validate=validate)
    b = _same(a, logp_ref, "logp_ref", validate)
    y = np.asarray(labels, dtype=float)
    if y.shape != a.shape or not np.all((y == 0) | (y == 1)):
        raise ValueError(f"labels must be 0/1 with shape {a.shape}")
    beta = check_positive(beta, "beta")
    z = np.broadcast_to(np.asarray(z0, dtype=float), (len(a),))[:, None]
    u = beta * ((a - b) - z)
    sign = np.where(y == 1, 1.0, -1.0)
    lam = np.where(y == 1, check_positive(lam_d, "lam_d"), check_positive(lam_u, "lam_u"))
    val = lam * (1.0 - sigmoid(sign * u))
    sg = sigmoid(sign * u)
    grad = -lam * sg * (1 - sg) * sign * beta
    return LossValue(float(val.sum(axis=1).mean()), grad / len(a))


def sft_loss(logp, logp_ref=None, *, validate: bool = True) -> LossValue:
    """Supervised fine-tuning on the chosen response only: -log pi(y_w)."""
    a = _as_logp(logp, "logp", validate=validate)
    g = np.zeros_like(a)
    g[:, 0] = -1.0 / len(a)
    return LossValue(float(-a[:, 0].mean()), g)


# --------------------------------------------------------------------------- losses (torch)


def kl_half_torch(delta: torch.Tensor) -> torch.Tensor:
    """:func:`kl_half` in torch (differentiable)."""
    return 0.5 * F.softplus(delta) + 0.5 * F.softplus(-delta) - LOG2


def log1mexp_torch(x: torch.Tensor) -> torch.Tensor:
    """:func:`log1mexp` in torch (differentiable)."""
    x = x.clamp(max=0.0)
    return torch.where(x > -LOG2, torch.log(-torch.expm1(x)), torch.log1p(-torch.exp(x)))


def pro_loss_torch(logp: torch.Tensor, logp_ref: torch.Tensor, scores: torch.Tensor, *, beta: float = 1.0,
                   alpha: float = 1.0) -> torch.Tensor:
    """:func:`pro_loss` for torch tensors (prompts, m), for language models: the sequence
    log-likelihoods are tiny probabilities, so the hyper-response holds almost all the mass and
    its reward is close to 0 (the term anchors each observed response's reward to zero)."""
    if logp.ndim != 2 or logp.shape != logp_ref.shape or scores.shape != logp.shape:
        raise ValueError(f"logp, logp_ref and scores must share one (prompts, m) shape, got "
                         f"{tuple(logp.shape)}, {tuple(logp_ref.shape)}, {tuple(scores.shape)}")
    beta = check_positive(beta, "beta")
    alpha = check_positive(alpha, "alpha", allow_zero=True)
    m = logp.shape[1]
    mu = 1.0 / m
    r = beta * (logp - logp_ref)
    loss = -2.0 * mu * (scores * r).sum(1) + mu * mu * kl_half_torch(r[:, :, None] - r[:, None, :]).sum((1, 2))
    if alpha > 0:
        h = log1mexp_torch(torch.logsumexp(logp, 1))
        h_ref = log1mexp_torch(torch.logsumexp(logp_ref, 1))
        loss = loss + alpha * 2.0 * mu * kl_half_torch(r - beta * (h - h_ref)[:, None]).sum(1)
    return loss.mean()


def dpo_loss_torch(logp: torch.Tensor, logp_ref: torch.Tensor, *, beta: float = 1.0) -> torch.Tensor:
    """:func:`dpo_loss` for torch tensors (prompts, 2)."""
    if logp.ndim != 2 or logp.shape[1] != 2 or logp.shape != logp_ref.shape:
        raise ValueError("logp and logp_ref must be (prompts, 2) tensors of the same shape")
    r = check_positive(beta, "beta") * (logp - logp_ref)
    return F.softplus(-(r[:, 0] - r[:, 1])).mean()


# --------------------------------------------------------------------------- the softmax-feature toy


@dataclass
class FeatureProblem:
    """A log-linear policy pi_theta(y | x) proportional to exp(theta . phi(x, y)) over K responses
    per prompt, with features ``phi`` (prompts, K, d) shared through one theta, so the
    likelihoods of different responses are coupled. ``observed`` (prompts, m) indexes the
    responses in the data (column 0 chosen, 1 rejected for pairwise data); ``labels`` holds
    the binary labels or scalar ratings of the observed responses (None for pairwise)."""

    phi: np.ndarray
    observed: np.ndarray
    feedback: str = "pairwise"
    labels: np.ndarray | None = None

    def __post_init__(self) -> None:
        self.phi = np.asarray(self.phi, dtype=float)
        if self.phi.ndim != 3 or min(self.phi.shape) == 0 or not np.all(np.isfinite(self.phi)):
            raise ValueError(f"phi must be a finite non-empty (prompts, K, d) array, got shape {self.phi.shape}")
        obs = np.asarray(self.observed)
        if obs.ndim != 2 or obs.shape[0] != self.phi.shape[0] or not np.issubdtype(obs.dtype, np.integer):
            raise ValueError(f"observed must be an integer (prompts={self.phi.shape[0]}, m) array")
        if obs.min() < 0 or obs.max() >= self.phi.shape[1]:
            raise ValueError(f"observed must index responses 0..{self.phi.shape[1] - 1}")
        if any(len(set(row)) != len(row) for row in obs.tolist()):
            raise ValueError("observed must not repeat a response within a prompt")
        self.observed = obs.astype(int)
        check_choice(self.feedback, "feedback", FEEDBACK)
        if self.feedback == "pairwise" and obs.shape[1] != 2:
            raise ValueError("pairwise feedback needs observed (prompts, 2): chosen, rejected")
        self.scores = feedback_scores(self.feedback, self.labels, len(obs))
        if self.scores.shape != obs.shape:
            raise ValueError(f"labels must have shape {obs.shape}")
        self._rows = np.arange(len(obs))[:, None]
        self.has_hyper = np.full(len(obs), obs.shape[1] < self.phi.shape[1])

    @property
    def dim(self) -> int:
        return self.phi.shape[2]

    def log_policy(self, theta) -> np.ndarray:
        """log pi_theta(y | x) for every prompt and response (prompts, K)."""
        z = self.phi @ np.asarray(theta, dtype=float)
        top = z.max(axis=1, keepdims=True)
        return z - top - np.log(np.exp(z - top).sum(axis=1, keepdims=True))

    def observed_logp(self, logpi: np.ndarray) -> np.ndarray:
        return logpi[self._rows, self.observed]

    def chain(self, logpi: np.ndarray, grad_obs: np.ndarray) -> np.ndarray:
        """Gradient in theta of a loss whose gradient in the observed log-probabilities is ``grad_obs``."""
        pi = np.exp(logpi)
        mean_phi = np.einsum("pk,pkd->pd", pi, self.phi)
        feats = self.phi[self._rows, self.observed]                # (prompts, m, d)
        return np.einsum("pm,pmd->d", grad_obs, feats - mean_phi[:, None, :])


def card_problem(jitter: float = 0.0, rng: RngLike = None) -> FeatureProblem:
    """The card's one-prompt toy: responses y_w = (1, .5, 0), y_l = (1, -.5, 0), an unseen 'OOD'
    response (0, 3, 0) along phi_w - phi_l, and two other unseen responses (0, 0, 1), (.5, 0, -1).
    ``jitter`` adds N(0, jitter^2) noise to every feature (a seed = a perturbed instance)."""
    phi = np.array([[1, 0.5, 0], [1, -0.5, 0], [0, 3, 0], [0, 0, 1], [0.5, 0, -1]], dtype=float)
    jitter = check_positive(jitter, "jitter", allow_zero=True)
    if jitter:
        phi = phi + jitter * as_rng(rng).standard_normal(phi.shape)
    return FeatureProblem(phi[None], np.array([[0, 1]]))


def random_problem(n_prompts: int = 200, K: int = 8, d: int = 6, *, feedback: str = "pairwise",
                   rng: RngLike = None, w=None) -> tuple[FeatureProblem, np.ndarray]:
    """Random prompts for the extension: K responses per prompt with N(0, I_d) features and a
    hidden linear reward r*(x, y) = w* . phi(x, y), |w*| = 2. Pairwise data: two responses drawn
    at random, the chosen one by a Bradley-Terry draw on r*; binary: one response labelled by
    a Bernoulli(sigmoid(r*)) draw; scalar: three responses rated r* plus N(0, 0.25) noise.
    ``w`` fixes w* (held-out prompts of the same task). Returns the problem and w*."""
    n = check_int(n_prompts, "n_prompts", minimum=1)
    K = check_int(K, "K", minimum=3)
    d = check_int(d, "d", minimum=1)
    check_choice(feedback, "feedback", FEEDBACK)
    g = as_rng(rng)
    if w is None:
        w = g.standard_normal(d)
        w *= 2.0 / np.linalg.norm(w)
    w = np.asarray(w, dtype=float)
    if w.shape != (d,) or not np.all(np.isfinite(w)):
        raise ValueError(f"w must be a finite vector of length d={d}")
    phi = g.standard_normal((n, K, d))
    m = {"pairwise": 2, "binary": 1, "scalar": 3}[feedback]
    obs = np.argsort(g.random((n, K)), axis=1)[:, :m]
    rstar = phi[np.arange(n)[:, None], obs] @ w
    labels = None
    if feedback == "pairwise":
        swap = g.random(n) >= sigmoid(rstar[:, 0] - rstar[:, 1])
        obs[swap] = obs[swap][:, ::-1]
    elif feedback == "binary":
        labels = (g.random((n, 1)) < sigmoid(rstar)).astype(float)
    else:
        labels = rstar + 0.5 * g.standard_normal(rstar.shape)
    return FeatureProblem(phi, obs, feedback, labels), w


def toy_loss(problem: FeatureProblem, logpi: np.ndarray, logpi_ref: np.ndarray, method: str, *,
             validate: bool = True, **hp) -> LossValue:
    """The loss of ``method`` on the observed responses of ``problem`` at log-policy ``logpi``.
    Hyperparameters: PRO (beta, alpha), DPO (beta), IPO (tau), DPO+NLL (beta, lam), KTO (beta;
    z0 is the exact KL(pi || pi_ref) per prompt, detached), SFT (none). ``validate=False`` skips
    the checks of the log-probabilities (train_toy's inner loop; they come from a log-softmax)."""
    check_choice(method, "method", METHODS)
    a, b = problem.observed_logp(logpi), problem.observed_logp(logpi_ref)
    if method == "PRO":
        return pro_loss(a, b, problem.scores, hyper=problem.has_hyper, validate=validate, **hp)
    if method == "KTO":
        if problem.feedback != "binary":
            raise ValueError("KTO needs binary feedback")
        z0 = np.maximum((np.exp(logpi) * (logpi - logpi_ref)).sum(axis=1), 0.0)
        return kto_loss(a, b, problem.labels, z0=z0, validate=validate, **hp)
    if problem.feedback != "pairwise":
        raise ValueError(f"{method} needs pairwise feedback")
    fn = {"DPO": dpo_loss, "IPO": ipo_loss, "DPO+NLL": dpo_nll_loss, "SFT": sft_loss}[method]
    return fn(a, b, validate=validate, **hp)


def train_toy(problem: FeatureProblem, method: str, *, steps: int = 3000, lr: float = 0.1,
              theta0=None, record_every: int = 50, **hp) -> dict:
    """Full-batch gradient descent on theta from ``theta0`` (the reference policy; default 0,
    uniform). Returns the final theta, the reference and the policy's log-probabilities every
    ``record_every`` steps (``'steps'``, ``'logpi'`` (records, prompts, K))."""
    steps = check_int(steps, "steps", minimum=1)
    lr = check_positive(lr, "lr")
    record_every = check_int(record_every, "record_every", minimum=1)
    theta = np.zeros(problem.dim) if theta0 is None else np.array(theta0, dtype=float)
    if theta.shape != (problem.dim,) or not np.all(np.isfinite(theta)):
        raise ValueError(f"theta0 must be a finite vector of length {problem.dim}")
    ref = problem.log_policy(theta)
    rec_steps, rec = [0], [ref]
    toy_loss(problem, ref, ref, method, **hp)          # validates the method and its hyperparameters once
    for t in range(1, steps + 1):
        lp = problem.log_policy(theta)                  # a log-softmax: no need to re-check it each step
        out = toy_loss(problem, lp, ref, method, validate=False, **hp)
        theta = theta - lr * problem.chain(lp, out.grad)
        if t % record_every == 0 or t == steps:
            rec_steps.append(t)
            rec.append(problem.log_policy(theta))
    if not np.all(np.isfinite(theta)):
        raise FloatingPointError(f"{method} diverged (lr={lr})")
    return {"theta": theta, "logpi_ref": ref, "steps": np.array(rec_steps), "logpi": np.array(rec)}
