"""InfiFPO: implicit model fusion through preference optimisation (Gu et al., NeurIPS 2025).

DPO trains a policy to raise ``beta * (log pi(y_w)/ref(y_w) - log pi(y_l)/ref(y_l))`` on preference
pairs, with the pivot model's own frozen copy as ``ref``. InfiFPO replaces ``ref`` by a *fused
source model*, the weighted geometric mean of several source LLMs' sequence probabilities,
``log M_fu(y) = sum_i gamma_i log Clip(M_i(y))`` (Eq. 13 of the paper). Fusion happens at the
sequence level, so each source only scores whole responses with its own tokeniser.

All log-probabilities here are *length-normalised* (per-token means, each under its own model's
tokenisation) unless a function says otherwise; source log-probabilities are constants, precomputed
like DPO's reference log-probabilities.

Reconstructed (the paper's trainer is not public): the ``Clip`` rule, the max-margin selection rule
and the optional ``offset`` clamp (the script's undocumented ``ref_offset``). See :func:`clip_sources`
and :func:`max_margin_weights`.

Also here, the chapter's *population toy*: one tabular softmax policy per prompt over ``K``
candidate responses, trained on every pair with soft Bradley-Terry labels; its DPO-style fixed
point is ``softmax(log ref + r / beta)`` (:func:`tilted_optimum`).
"""
from __future__ import annotations

import numpy as np
import torch
from scipy.optimize import minimize
from scipy.special import expit, log_expit, log_softmax, logsumexp, softmax
from torch.nn import functional as F

from ..core.validate import check_choice, check_int, check_positive

FUSIONS = ("mean", "max_margin")
RULES = ("margin", "deviation")


def _arr(x, name: str, ndim: int | None = None) -> np.ndarray:
    try:
        a = np.asarray(x, dtype=float)
    except (TypeError, ValueError) as err:
        raise ValueError(f"{name} must be an array of numbers") from err
    if a.size == 0:
        raise ValueError(f"{name} must not be empty")
    if ndim is not None and a.ndim != ndim:
        raise ValueError(f"{name} must be {ndim}-D, got shape {a.shape}")
    if not np.isfinite(a).all():
        raise ValueError(f"{name} must be finite (found NaN or inf)")
    return a


def length_normalised(sum_logp, n_tokens) -> np.ndarray:
    """Per-token mean log-probability ``sum_logp / n_tokens``; each model divides by the token
    count under *its own* tokeniser (the paper's length normalisation)."""
    s = _arr(sum_logp, "sum_logp")
    n = _arr(n_tokens, "n_tokens")
    if np.any(n < 1) or np.any(n != np.round(n)):
        raise ValueError("n_tokens must be positive integers")
    return s / n


def clip_sources(src_w, src_l, ref_w, ref_l, offset: float | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Probability clipping (reconstructed). A source may only make the reference *more* confident
    in the right direction than the pivot's own reference: ``Clip(M_i(y_w)) = max(M_i(y_w), ref(y_w))``
    and ``Clip(M_i(y_l)) = min(M_i(y_l), ref(y_l))``, so a weak or harmful source falls back to the
    pivot instead of flipping the reference margin. With ``offset`` a source's departure from the
    reference is also capped at ``offset`` (the script's ``ref_offset``, 5.0 for mean log-probs).

    ``src_w``, ``src_l``: (N sources, n pairs) log-probs; ``ref_w``, ``ref_l``: (n pairs,).
    """
    sw, sl = _arr(src_w, "src_w", 2), _arr(src_l, "src_l", 2)
    rw, rl = _arr(ref_w, "ref_w", 1), _arr(ref_l, "ref_l", 1)
    if sw.shape != sl.shape or sw.shape[1] != rw.shape[0] or rw.shape != rl.shape:
        raise ValueError(f"shapes disagree: src_w {sw.shape}, src_l {sl.shape}, ref_w {rw.shape}, ref_l {rl.shape}")
    cw, cl = np.maximum(sw, rw), np.minimum(sl, rl)
    if offset is not None:
        check_positive(offset, "offset")
        cw, cl = np.minimum(cw, rw + offset), np.maximum(cl, rl - offset)
    return cw, cl


def max_margin_weights(src_w, src_l, ref_w=None, ref_l=None, rule: str = "margin") -> np.ndarray:
    """Max-margin fusion (reconstructed): per pair, all the weight on one source, ``gamma = e_{i*}``.

    ``rule='margin'``: ``i* = argmax_i [log M_i(y_w) - log M_i(y_l)]``, the source that separates the
    pair most confidently. ``rule='deviation'``: the source whose margin departs most from the
    pivot reference's margin (needs ``ref_w``, ``ref_l``). Returns (N, n) one-hot weights.
    """
    check_choice(rule, "rule", RULES)
    sw, sl = _arr(src_w, "src_w", 2), _arr(src_l, "src_l", 2)
    if sw.shape != sl.shape:
        raise ValueError(f"src_w {sw.shape} and src_l {sl.shape} must have the same shape")
    margin = sw - sl
    if rule == "deviation":
        if ref_w is None or ref_l is None:
            raise ValueError("rule='deviation' needs ref_w and ref_l")
        rm = _arr(ref_w, "ref_w", 1) - _arr(ref_l, "ref_l", 1)
        if rm.shape[0] != sw.shape[1]:
            raise ValueError(f"ref_w has {rm.shape[0]} pairs, the sources {sw.shape[1]}")
        margin = np.abs(margin - rm)
    w = np.zeros_like(margin)
    w[np.argmax(margin, axis=0), np.arange(margin.shape[1])] = 1.0
    return w


def fused_reference(src_w, src_l, ref_w, ref_l, *, fusion: str = "max_margin", clip: bool = True,
                    offset: float | None = None, rule: str = "margin") -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The fused source model's log-probs of each pair's chosen and rejected response,
    ``log M_fu = sum_i gamma_i log Clip(M_i)`` (Eq. 13), and the weights gamma (N, n).

    ``fusion='mean'``: gamma_i = 1/N (the script's default); ``'max_margin'``: one source per pair
    (:func:`max_margin_weights`, applied to the clipped log-probs when ``clip``)."""
    check_choice(fusion, "fusion", FUSIONS)
    sw, sl = _arr(src_w, "src_w", 2), _arr(src_l, "src_l", 2)
    if clip:
        sw, sl = clip_sources(sw, sl, ref_w, ref_l, offset)
    if fusion == "mean":
        gamma = np.full(sw.shape, 1.0 / sw.shape[0])
    else:
        gamma = max_margin_weights(sw, sl, ref_w, ref_l, rule)
    return (gamma * sw).sum(0), (gamma * sl).sum(0), gamma


def preference_loss(pol_w: torch.Tensor, pol_l: torch.Tensor, ref_w, ref_l, beta: float,
                    kind: str = "sigmoid", reduction: str = "mean") -> torch.Tensor:
    """InfiFPO / DPO / IPO loss on a batch of pairs, from the policy's (differentiable) log-probs
    and the reference's (constant) ones. ``h = (log pi(y_w) - ref_w) - (log pi(y_l) - ref_l)``.

    ``kind='sigmoid'``: ``-log sigma(beta h)`` (DPO with the pivot as reference; InfiFPO, Eq. 13,
    with the fused source model). ``kind='ipo'``: ``(h - 1/(2 beta))^2`` (IPO, beta playing tau).
    """
    check_positive(beta, "beta")
    check_choice(kind, "kind", ("sigmoid", "ipo"))
    check_choice(reduction, "reduction", ("mean", "none"))
    ref_w = torch.as_tensor(ref_w, dtype=pol_w.dtype)
    ref_l = torch.as_tensor(ref_l, dtype=pol_w.dtype)
    if not (pol_w.shape == pol_l.shape == ref_w.shape == ref_l.shape) or pol_w.ndim != 1:
        raise ValueError(f"pol_w, pol_l, ref_w, ref_l must be 1-D of one length, got {tuple(pol_w.shape)}, "
                         f"{tuple(pol_l.shape)}, {tuple(ref_w.shape)}, {tuple(ref_l.shape)}")
    h = (pol_w - ref_w.detach()) - (pol_l - ref_l.detach())
    loss = -F.logsigmoid(beta * h) if kind == "sigmoid" else (h - 1.0 / (2.0 * beta)) ** 2
    return loss.mean() if reduction == "mean" else loss


# --------------------------------------------------------------------------- the population toy


def geometric_mean(log_models, gamma) -> tuple[np.ndarray, float]:
    """The normalised weighted geometric mean of distributions, ``M_bar ∝ prod_i M_i^gamma_i``:
    returns (log M_bar, log Z) with ``Z = sum_y prod_i M_i(y)^gamma_i`` (log space, no underflow).
    ``log_models``: (N, K) log-probabilities over the same K outcomes; ``gamma``: (N,), sums to 1."""
    lm = _arr(log_models, "log_models", 2)
    g = _arr(gamma, "gamma", 1)
    if g.shape[0] != lm.shape[0] or np.any(g < 0) or not np.isclose(g.sum(), 1.0):
        raise ValueError(f"gamma must be {lm.shape[0]} non-negative weights summing to 1")
    s = g @ lm
    log_z = float(logsumexp(s))
    return s - log_z, log_z


def tilted_optimum(log_ref, reward, beta: float) -> np.ndarray:
    """``softmax(log ref + r / beta)`` over the last axis: the maximiser of
    ``E_pi[r] - beta KL(pi || ref)``, and the fixed point of DPO-style training with full coverage."""
    check_positive(beta, "beta")
    lr = _arr(log_ref, "log_ref")
    r = _arr(reward, "reward")
    if lr.shape != r.shape:
        raise ValueError(f"log_ref {lr.shape} and reward {r.shape} must have the same shape")
    return softmax(lr + r / beta, axis=-1)


def pair_labels(reward) -> np.ndarray:
    """Soft Bradley-Terry labels ``P(a > b) = sigma(r_a - r_b)`` for every pair of responses of each
    prompt: (..., K) rewards -> (..., K, K)."""
    r = _arr(reward, "reward")
    return expit(r[..., :, None] - r[..., None, :])


def population_loss(logits, ref_margin, labels, beta: float) -> tuple[float, np.ndarray]:
    """The population preference loss of tabular policies ``pi = softmax(logits)`` (P, K) over every
    ordered pair (a, b) of each prompt, with soft labels ``labels[p, a, b] = P(a > b)``:
    ``-sum_{a,b} P(a>b) log sigma(beta (log pi_a - log pi_b - m_ab))``, averaged over prompts, where
    ``m_ab = ref_margin[p, a, b]`` is the reference's (possibly fused, clipped) margin. Returns
    the loss and its gradient with respect to the logits."""
    check_positive(beta, "beta")
    z = _arr(logits, "logits", 2)
    lp = log_softmax(z, axis=1)
    u = beta * (lp[:, :, None] - lp[:, None, :] - ref_margin)
    loss = -(labels * log_expit(u)).sum() / z.shape[0]
    g = -labels * expit(-u) * beta          # d loss / d (log pi_a - log pi_b), per ordered pair
    dlp = g.sum(2) - g.sum(1)               # d loss / d log pi
    grad = dlp - softmax(z, axis=1) * dlp.sum(1, keepdims=True)
    return float(loss), grad / z.shape[0]


def fit_population(ref_margin, labels, beta: float, *, init_logits=None, tol: float = 1e-12,
                   maxiter: int = 5000) -> np.ndarray:
    """Minimise :func:`population_loss` (convex in the log-probabilities) by L-BFGS; returns the
    fitted policies (P, K). With a consistent reference margin ``m_ab = log ref_a - log ref_b`` the
    answer is :func:`tilted_optimum`."""
    m = _arr(ref_margin, "ref_margin", 3)
    lab = _arr(labels, "labels", 3)
    if m.shape != lab.shape or m.shape[1] != m.shape[2]:
        raise ValueError(f"ref_margin {m.shape} and labels {lab.shape} must both be (P, K, K)")
    check_int(maxiter, "maxiter", minimum=1)
    shape = m.shape[:2]
    z0 = np.zeros(shape) if init_logits is None else _arr(init_logits, "init_logits", 2)

    def fun(x):
        f, g = population_loss(x.reshape(shape), m, lab, beta)
        return f, g.ravel()

    res = minimize(fun, z0.ravel(), jac=True, method="L-BFGS-B",
                   options=dict(maxiter=maxiter, ftol=tol, gtol=tol * 1e2, maxcor=20))
    return softmax(res.x.reshape(shape), axis=1)


def expected_margin(log_models, labels) -> np.ndarray:
    """Each model's label-weighted margin on each prompt, ``sum_{a,b} P(a>b) (log M_a - log M_b)``
    averaged over the K(K-1) ordered pairs: (N, P, K) log-probs -> (N, P). The per-prompt version
    of the max-margin rule (the source that separates the prompt's pairs most in the preferred direction)."""
    lm = _arr(log_models, "log_models", 3)
    k = lm.shape[2]
    return np.einsum("pab,npab->np", labels, lm[..., :, None] - lm[..., None, :]) / (k * (k - 1))
