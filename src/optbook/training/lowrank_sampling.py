"""Chapter 17: breaking the frozen subspace with importance-sampled low-rank optimizer states.

GaLore-style optimizers keep Adam's moment estimates only for a projected gradient
R = P^T G (r x n instead of m x n), where the basis P (m x r, orthonormal columns) is recomputed
every tau steps from an SVD of the current gradient. The usual choice is the *dominant* subspace
(the top-r left singular vectors). Zhang et al. (NeurIPS 2025; "I3S" in arXiv v1, "SARA" in the
reviews) observe that this subspace freezes during pretraining and propose to *sample* the r
singular vectors without replacement with probabilities proportional to the singular values.

What is here (the chapter's experiments, claims and figures are in
:mod:`optbook.training.lowrank_sampling_chapter`):

* :func:`importance_indices`, :func:`select_subspace` - the three subspace rules
  ("dominant", "importance", "random"), computed in torch (``torch.linalg.svd``) with a
  ``torch.Generator``, with the safeguard for rank-deficient gradients;
  :func:`inclusion_probabilities` - the exact inclusion probabilities of the sampler.
* :func:`subspace_overlap`, :func:`captured_energy`, :func:`state_floats` - the diagnostics.
* :func:`lowrank_adam` (the paper's method and GaLore, scipy-shaped), :func:`lowrank_adam_batch`
  (the same for a stack of independent runs), :func:`full_adam` and :func:`projected_sgd`.
* :class:`LowRankAdam` - the same method as a ``torch.optim.Optimizer``.
* :class:`FrozenSubspaceProblem` - the card's CPU proxy: a persistent, high-energy, zero-mean
  gradient subspace that traps the dominant rule.

Reconstructed details (the card lists them as unverified): weights sigma_i (not sigma_i^2);
successive weighted sampling without replacement; Adam states kept across refreshes by default,
with a reset policy that zeroes the moments and restarts Adam's bias correction.
"""
from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
import torch

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
)

#: The subspace rules: GaLore's top-r singular vectors, the paper's importance sampling, and a
#: random orthonormal basis (GoLore-style).
RULES = ("dominant", "importance", "random")
#: Names used in legends and tables.
LABELS = {"dominant": "GaLore (dominant)", "importance": "importance sampling",
          "random": "random subspace", "full": "full Adam"}
#: What happens to Adam's moments when the basis changes.
STATE_POLICIES = ("keep", "reset")

MatrixFun = Callable[[np.ndarray], float]
MatrixJac = Callable[[np.ndarray], np.ndarray]


def as_generator(rng: torch.Generator | int | None, name: str = "rng") -> torch.Generator:
    """A CPU ``torch.Generator``: given, seeded with an int, or (None) seeded from the operating
    system's entropy. torch's global generator is never used or touched."""
    if isinstance(rng, torch.Generator):
        return rng
    gen = torch.Generator()
    if rng is None:
        gen.seed()
        return gen
    return gen.manual_seed(check_int(rng, name))


# --------------------------------------------------------------------------- subspace rules


def _importance(sigma: torch.Tensor, rank: int, gen: torch.Generator) -> torch.Tensor:
    positive = torch.nonzero(sigma > 0).flatten()
    if positive.numel() >= rank:
        # Without replacement torch draws by the exponential race (top-r of sigma_i / E_i), which
        # has the law of successive sampling: each draw proportional to sigma among those left.
        return torch.multinomial(sigma, rank, replacement=False, generator=gen)
    zeros = torch.nonzero(sigma <= 0).flatten()
    fill = zeros[torch.randperm(zeros.numel(), generator=gen)[: rank - positive.numel()]]
    return torch.cat([positive, fill])


def importance_indices(sigma, rank: int, rng: torch.Generator | int | None = None) -> np.ndarray:
    """Draw ``rank`` distinct indices with probabilities proportional to ``sigma`` (the paper's
    importance sampling of singular vectors).

    This is successive sampling without replacement (each draw proportional to sigma_i among the
    indices not yet drawn): an index's inclusion probability grows with sigma_i but is not exactly
    proportional to it (:func:`inclusion_probabilities` gives it). Indices with sigma_i = 0 are
    never drawn while enough non-zero weights exist; if fewer than ``rank`` singular values are
    non-zero, all of them are taken and the rest is filled uniformly from the zero ones (the
    card's safeguard for rank-deficient gradients). ``rng``: a ``torch.Generator`` or a seed.
    """
    sigma = check_vector(sigma, "sigma")
    if np.any(sigma < 0):
        raise ValueError("sigma must be non-negative")
    rank = check_int(rank, "rank", minimum=1)
    if rank > sigma.size:
        raise ValueError(f"rank must be <= len(sigma) = {sigma.size}, got {rank}")
    return _importance(torch.from_numpy(sigma), rank, as_generator(rng)).numpy()


def inclusion_probabilities(sigma, rank: int) -> np.ndarray:
    """Exact probability that each index is among the ``rank`` drawn by successive sampling with
    weights ``sigma`` (enumeration of the ordered draws: small spectra only, len(sigma) <= 10).
    The expected projector of importance sampling is then E[P P^T] = U diag(pi) U^T."""
    sigma = check_vector(sigma, "sigma")
    if np.any(sigma < 0) or not np.any(sigma > 0):
        raise ValueError("sigma must be non-negative with a positive entry")
    rank = check_int(rank, "rank", minimum=1)
    if rank > np.count_nonzero(sigma) or sigma.size > 10:
        raise ValueError("rank must be <= the number of positive sigma, and len(sigma) <= 10")
    pi = np.zeros(sigma.size)
    for seq in itertools.permutations(np.flatnonzero(sigma > 0), rank):
        prob, left = 1.0, sigma.sum()
        for i in seq:
            prob *= sigma[i] / left
            left -= sigma[i]
        pi[list(seq)] += prob
    return pi


def _select_torch(G: torch.Tensor, rank: int, rule: str,
                  gen: torch.Generator) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """The basis of ``rule`` for one gradient G (m x n, m <= n not required), in torch."""
    m = G.shape[0]
    U, s, _ = torch.linalg.svd(G, full_matrices=True)
    sigma = torch.zeros(m, dtype=G.dtype, device=G.device)
    sigma[: s.numel()] = s
    if rule == "random":
        Q, _ = torch.linalg.qr(torch.randn(m, rank, generator=gen, dtype=torch.float64).to(G))
        return Q, torch.zeros(0, dtype=torch.long), sigma
    if rule == "dominant":
        idx = torch.arange(rank)
    else:
        idx = _importance(sigma.detach().to("cpu", torch.float64), rank, gen)
    return U[:, idx.to(G.device)], idx, sigma


def select_subspace(G, rank: int, rule: str = "importance",
                    rng: torch.Generator | int | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """An orthonormal basis P (m x rank) of a subspace of R^m for the gradient G (m x n).

    ``rule``: "dominant" takes the top-r left singular vectors (GaLore); "importance" samples r of
    them with probabilities proportional to the singular values (the paper); "random" takes the
    QR basis of an m x r Gaussian matrix (GoLore-style). The SVD is ``torch.linalg.svd`` and the
    draws come from ``rng`` (a ``torch.Generator`` or a seed). Returns ``(P, indices, sigma)``:
    the chosen singular-vector indices (empty for "random") and the full spectrum of G, padded
    with zeros to length m (the singular vectors of a wide or square G span all of R^m).
    """
    G = check_matrix(G, "G")
    m = G.shape[0]
    rank = check_int(rank, "rank", minimum=1)
    if rank > m:
        raise ValueError(f"rank must be <= G.shape[0] = {m}, got {rank}")
    rule = check_choice(rule, "rule", RULES)
    P, idx, sigma = _select_torch(torch.from_numpy(G), rank, rule, as_generator(rng))
    return P.numpy(), idx.numpy(), sigma.numpy()


def subspace_overlap(P: np.ndarray, Q: np.ndarray) -> float:
    """omega = ||P^T Q||_F^2 / r in [0, 1] for two orthonormal bases of rank r: 1 for the same
    subspace (whatever the basis), about r/m for independent random subspaces."""
    P = check_matrix(P, "P")
    Q = check_matrix(Q, "Q", shape=P.shape)
    return float(np.sum((P.T @ Q) ** 2) / P.shape[1])


def captured_energy(P: np.ndarray, G: np.ndarray) -> float:
    """||P^T G||_F^2 / ||G||_F^2: the share of gradient energy the subspace keeps (0 for G = 0)."""
    P = check_matrix(P, "P")
    G = check_matrix(G, "G", shape=(P.shape[0], None))
    total = float(np.sum(G * G))
    return float(np.sum((P.T @ G) ** 2) / total) if total > 0 else 0.0


def projection_side(shape: tuple[int, int]) -> str:
    """GaLore's convention: project from the left (P is m x r) when m <= n, else from the right
    (Q is n x r), so the projected gradient and the Adam states have r x max(m, n) entries."""
    if len(shape) != 2:
        raise ValueError(f"shape must have two entries, got {shape!r}")
    m = check_int(shape[0], "shape[0]", minimum=1)
    n = check_int(shape[1], "shape[1]", minimum=1)
    return "left" if m <= n else "right"


def state_floats(m: int, n: int, rank: int | None = None) -> dict[str, int]:
    """Optimizer-state floats of one m x n weight: Adam's two moments (2mn for full Adam,
    2 r max(m, n) in the subspace) plus the projector (r min(m, n)); ``rank=None`` is full Adam."""
    m = check_int(m, "m", minimum=1)
    n = check_int(n, "n", minimum=1)
    if rank is None:
        return {"moments": 2 * m * n, "projector": 0, "total": 2 * m * n}
    rank = check_int(rank, "rank", minimum=1)
    if rank > min(m, n):
        raise ValueError(f"rank must be <= min(m, n) = {min(m, n)}, got {rank}")
    moments, proj = 2 * rank * max(m, n), rank * min(m, n)
    return {"moments": moments, "projector": proj, "total": moments + proj}


# --------------------------------------------------------------------------- numpy methods


def _check_betas(betas) -> tuple[float, float]:
    if not isinstance(betas, (tuple, list)) or len(betas) != 2:
        raise ValueError(f"betas must be a pair (beta1, beta2), got {betas!r}")
    return (check_in_range(betas[0], "betas[0]", 0.0, 1.0, closed=(True, False)),
            check_in_range(betas[1], "betas[1]", 0.0, 1.0, closed=(True, False)))


@dataclass
class BatchRun:
    """B independent runs of :func:`lowrank_adam_batch`: final iterates ``x`` (B x m x n), the
    loss at every step ``losses`` ((maxiter + 1) x B), ``grad_norm``, ``energy`` (captured energy
    of G) and ``overlap`` (omega with the previous basis at each refresh, NaN elsewhere), each
    maxiter x B, and ``refreshes[b]``: the list of refreshes (step, spectrum, indices) of run b."""

    x: np.ndarray
    losses: np.ndarray
    grad_norm: np.ndarray
    energy: np.ndarray
    overlap: np.ndarray
    refreshes: list[list[dict]]


def _select_batch(Gs: np.ndarray, rank: int, rules: Sequence[str], gens: Sequence[torch.Generator]):
    """:func:`select_subspace` for a stack of gradients, one rule and one generator per run
    (torch SVD, computed only for the runs whose rule needs it; a random run's spectrum is NaN)."""
    G = torch.from_numpy(Gs)
    B, m, _ = Gs.shape
    P = torch.empty(B, m, rank, dtype=G.dtype)
    sigma = torch.full((B, m), float("nan"), dtype=G.dtype)
    idx = [torch.zeros(0, dtype=torch.long)] * B
    rand = [b for b in range(B) if rules[b] == "random"]
    if rand:
        Z = torch.stack([torch.randn(m, rank, generator=gens[b], dtype=torch.float64) for b in rand])
        P[rand] = torch.linalg.qr(Z)[0]
    spec = [b for b in range(B) if rules[b] != "random"]
    if spec:
        U, s, _ = torch.linalg.svd(G[spec], full_matrices=True)
        sigma[spec] = 0.0
        sigma[spec, : s.shape[1]] = s
        for j, b in enumerate(spec):
            idx[b] = torch.arange(rank) if rules[b] == "dominant" else _importance(sigma[b], rank, gens[b])
            P[b] = U[j][:, idx[b]]
    return P.numpy(), [i.numpy() for i in idx], sigma.numpy()


def lowrank_adam_batch(
    W0: np.ndarray,
    grad: Callable[[np.ndarray, int], np.ndarray],
    loss: Callable[[np.ndarray], np.ndarray],
    *,
    rank: int = 4,
    rule: str | Sequence[str] = "importance",
    tau: int = 200,
    lr: float | Sequence[float] = 1e-3,
    scale: float = 0.25,
    betas: tuple[float, float] = (0.9, 0.999),
    eps: float = 1e-8,
    state_policy: str = "keep",
    maxiter: int = 1000,
    rngs: Sequence[torch.Generator | int | None] | None = None,
    callback: Callable[[np.ndarray], None] | None = None,
) -> BatchRun:
    """:func:`lowrank_adam` for B independent runs at once (a stack W0 of B x m x n starts; one
    learning rate and one subspace generator per run), vectorised over the runs: the chapter's
    seeds and tuning grids. ``rule`` may also list one subspace rule per run (all three may be
    mixed; "full" runs alone). ``grad(W, t)`` returns the B stochastic gradients at step t,
    ``loss(W)`` the B losses. Each run equals :func:`lowrank_adam` with the same generator."""
    W = np.asarray(W0, dtype=float)
    if W.ndim != 3 or not np.all(np.isfinite(W)):
        raise ValueError(f"W0 must be a finite B x m x n stack, got shape {W.shape}")
    B, m0, n0 = W.shape
    if not callable(grad) or not callable(loss):
        raise ValueError("grad and loss must be callable")
    if callback is not None and not callable(callback):
        raise ValueError("callback must be callable")
    rules = [rule] * B if isinstance(rule, str) else list(rule)
    if len(rules) != B:
        raise ValueError(f"rule must be one rule or one per run ({B}), got {len(rules)}")
    full = rules[0] == "full"
    if full and any(r != "full" for r in rules):
        raise ValueError("rule: full-rank runs cannot be mixed with subspace rules in one batch")
    if not full:
        rules = [check_choice(r, "rule", RULES) for r in rules]
        rank = check_int(rank, "rank", minimum=1)
        if rank > min(m0, n0):
            raise ValueError(f"rank must be <= min(W0.shape) = {min(m0, n0)}, got {rank}")
    tau = check_int(tau, "tau", minimum=1)
    lrs = np.broadcast_to(np.asarray(lr, dtype=float), (B,)).copy()
    for v in lrs:
        check_positive(float(v), "lr")
    scale = check_positive(scale, "scale")
    b1, b2 = _check_betas(betas)
    eps = check_positive(eps, "eps")
    state_policy = check_choice(state_policy, "state_policy", STATE_POLICIES)
    maxiter = check_int(maxiter, "maxiter", minimum=0)
    rngs = [None] * B if rngs is None else list(rngs)
    if len(rngs) != B:
        raise ValueError(f"rngs must hold one generator or seed per run ({B}), got {len(rngs)}")
    gens = [as_generator(g, "rngs") for g in rngs]
    left = m0 <= n0
    step = (lrs * (1.0 if full else scale))[:, None, None]

    losses = np.empty((maxiter + 1, B))
    gnorm, energy = np.empty((maxiter, B)), np.ones((maxiter, B))
    overlap = np.full((maxiter, B), np.nan)
    refreshes: list[list[dict]] = [[] for _ in range(B)]
    M = V = P = None
    k = 0
    for t in range(maxiter):
        G = np.asarray(grad(W, t), dtype=float)
        if G.shape != W.shape:
            raise ValueError(f"grad must return an array of shape {W.shape}, got {G.shape}")
        if not np.all(np.isfinite(G)):
            raise ValueError("grad returned a non-finite gradient")
        Gs = G if left else G.transpose(0, 2, 1)   # the side we project: m' x n', m' <= n'
        if full:
            R = Gs
            if M is None:
                M, V = np.zeros_like(R), np.zeros_like(R)
        else:
            if t % tau == 0:
                P_new, idx, sigma = _select_batch(Gs, rank, rules, gens)
                if P is not None:
                    overlap[t] = np.sum(np.matmul(P_new.transpose(0, 2, 1), P) ** 2, axis=(1, 2)) / rank
                P = P_new
                for b in range(B):
                    refreshes[b].append(dict(step=t, sigma=sigma[b], indices=idx[b]))
                if M is None or state_policy == "reset":
                    M, V, k = np.zeros((B, rank, Gs.shape[2])), np.zeros((B, rank, Gs.shape[2])), 0
            R = np.matmul(P.transpose(0, 2, 1), Gs)
        k += 1
        M = b1 * M + (1.0 - b1) * R
        V = b2 * V + (1.0 - b2) * R * R
        N = (M / (1.0 - b1 ** k)) / (np.sqrt(V / (1.0 - b2 ** k)) + eps)
        D = N if full else np.matmul(P, N)
        g2 = np.sum(G * G, axis=(1, 2))
        gnorm[t] = np.sqrt(g2)
        if not full:
            energy[t] = np.divide(np.sum(R * R, axis=(1, 2)), g2, out=np.zeros(B), where=g2 > 0)
        losses[t] = loss(W)
        W = W - step * (D if left else D.transpose(0, 2, 1))
        if callback is not None:
            callback(W)
    losses[maxiter] = loss(W)
    return BatchRun(W, losses, gnorm, energy, overlap, refreshes)


def lowrank_adam(
    fun: MatrixFun,
    W0: np.ndarray,
    jac: MatrixJac,
    *,
    rank: int = 4,
    rule: str = "importance",
    tau: int = 200,
    lr: float = 1e-3,
    scale: float = 0.25,
    betas: tuple[float, float] = (0.9, 0.999),
    eps: float = 1e-8,
    state_policy: str = "keep",
    maxiter: int = 1000,
    rng: torch.Generator | int | None = None,
    callback: Callable[[np.ndarray], None] | None = None,
) -> Result:
    """GaLore-style Adam with low-rank states; ``rule="importance"`` is the paper's method.

    Every ``tau`` steps the basis P (m x r) is re-selected from the current (stochastic)
    gradient G by :func:`select_subspace`; at every step

        R = P^T G,  M <- b1 M + (1-b1) R,  V <- b2 V + (1-b2) R*R,
        N = (M / (1-b1^k)) / (sqrt(V / (1-b2^k)) + eps),  W <- W - lr * scale * P N,

    with the projection taken from the right when m > n (:func:`projection_side`).
    ``state_policy="keep"`` carries M, V over a refresh unchanged (GaLore's default; they are then
    expressed in the old basis); ``"reset"`` zeroes them and restarts the bias-correction count k.
    ``rule="full"`` runs full-rank Adam (P = I, states m x n), the baseline of :func:`full_adam`.

    ``jac(W)`` returns the (possibly stochastic) gradient; ``fun(W)`` the loss that is recorded.
    ``rng`` (a ``torch.Generator`` or a seed) drives the subspace draws. The trace records the
    loss, ||G||_F, the step lr * scale, ``energy`` (captured energy of G) and, at each refresh
    after the first, ``overlap`` omega = ||P_t^T P_{t-tau}||_F^2 / r. ``result.refreshes`` lists
    each refresh: step, spectrum ``sigma`` and chosen ``indices``.
    """
    if not callable(fun):
        raise ValueError("fun must be callable")
    if not callable(jac):
        raise ValueError("jac must be callable")
    W0 = check_matrix(W0, "W0")
    lr = check_positive(lr, "lr")

    def grad(W, t):
        G = np.asarray(jac(W[0]), dtype=float)
        if G.shape != W0.shape:
            raise ValueError(f"jac must return an array of shape {W0.shape}, got {G.shape}")
        if not np.all(np.isfinite(G)):
            raise ValueError("jac returned a non-finite gradient")
        return G[None]

    run = lowrank_adam_batch(W0[None], grad, lambda W: np.array([float(fun(W[0]))]), rank=rank, rule=rule,
                             tau=tau, lr=lr, scale=scale, betas=betas, eps=eps, state_policy=state_policy,
                             maxiter=maxiter, rngs=[rng],
                             callback=None if callback is None else (lambda W: callback(W[0])))
    full = rule == "full"
    n = maxiter + 1
    pad = np.full(1, np.nan)
    trace = Trace.from_dict(dict(
        method=LABELS["full" if full else rule],
        meta=dict(rank=None if full else rank, tau=tau, lr=lr, scale=scale, state_policy=state_policy),
        iteration=list(range(n)), objective=run.losses[:, 0],
        grad_norm=np.concatenate([run.grad_norm[:, 0], pad]),
        step_size=np.concatenate([np.full(maxiter, lr * (1.0 if full else scale)), pad]),
        time=np.full(n, np.nan),
        energy=np.concatenate([run.energy[:, 0], pad]), overlap=np.concatenate([run.overlap[:, 0], pad])))
    f = float(run.losses[-1, 0])
    return Result(x=run.x[0], fun=f, nit=maxiter, success=bool(np.isfinite(f)), message="maxiter reached",
                  trace=trace, refreshes=run.refreshes[0])


def full_adam(fun: MatrixFun, W0: np.ndarray, jac: MatrixJac, *, lr: float = 1e-3,
              betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8, maxiter: int = 1000,
              callback: Callable[[np.ndarray], None] | None = None) -> Result:
    """Full-rank Adam on the m x n gradient (state size 2mn): the baseline the paper's low-rank
    methods try to approach."""
    return lowrank_adam(fun, W0, jac, rule="full", lr=lr, betas=betas, eps=eps, maxiter=maxiter,
                        callback=callback)


def projected_sgd(fun: MatrixFun, W0: np.ndarray, jac: MatrixJac, *, rank: int, rule: str = "importance",
                  tau: int = 200, lr: float = 1e-2, maxiter: int = 1000,
                  rng: torch.Generator | int | None = None) -> Result:
    """Projected SGD, W <- W - lr P P^T G (projection from the left or right as in
    :func:`lowrank_adam`), the test baseline: with rank = min(m, n) it is plain SGD, and with
    importance sampling E[P P^T G] = U diag(pi) U^T G (pi from :func:`inclusion_probabilities`)."""
    if not callable(fun) or not callable(jac):
        raise ValueError("fun and jac must be callable")
    W = check_matrix(W0, "W0")
    lr = check_positive(lr, "lr")
    maxiter = check_int(maxiter, "maxiter", minimum=0)
    rank = check_int(rank, "rank", minimum=1)
    if rank > min(W.shape):
        raise ValueError(f"rank must be <= min(W0.shape) = {min(W.shape)}, got {rank}")
    rule = check_choice(rule, "rule", RULES)
    tau = check_int(tau, "tau", minimum=1)
    gen = as_generator(rng)
    left = projection_side(W.shape) == "left"
    trace = Trace(f"projected SGD ({rule})", meta=dict(rank=rank, tau=tau, lr=lr))
    P = None
    for t in range(maxiter):
        G = np.asarray(jac(W), dtype=float)
        Gs = G if left else G.T
        if t % tau == 0:
            P = _select_torch(torch.from_numpy(Gs), rank, rule, gen)[0].numpy()
        D = P @ (P.T @ Gs)
        trace.record(objective=float(fun(W)), grad_norm=float(np.linalg.norm(G)), step_size=lr)
        W = W - lr * (D if left else D.T)
    f = float(fun(W))
    trace.record(objective=f, iteration=maxiter)
    return Result(x=W, fun=f, nit=maxiter, success=bool(np.isfinite(f)), message="maxiter reached", trace=trace)


# --------------------------------------------------------------------------- torch optimizer


def _check_group(group: dict) -> None:
    """Validate one param group's hyperparameters (the defaults or a group's overrides)."""
    check_positive(group["lr"], "lr")
    check_int(group["rank"], "rank", minimum=1)
    check_int(group["update_gap"], "update_gap", minimum=1)
    check_positive(group["scale"], "scale")
    check_choice(group["rule"], "rule", RULES)
    group["betas"] = _check_betas(group["betas"])
    check_positive(group["eps"], "eps")
    check_choice(group["state_policy"], "state_policy", STATE_POLICIES)


class LowRankAdam(torch.optim.Optimizer):
    """GaLore-style Adam with low-rank states as a ``torch.optim.Optimizer`` (the paper's method
    with ``rule="importance"``, GaLore with ``"dominant"``, GoLore-style with ``"random"``).

    A 2-D parameter with ``min(shape) > rank`` gets the projected update of :func:`lowrank_adam`
    (basis re-selected every ``update_gap`` steps by ``torch.linalg.svd`` and the optimizer's own
    ``torch.Generator``, states of shape r x max(m, n)); every other parameter (biases, small
    matrices) gets plain Adam. ``state_policy`` is "keep" or "reset", as in :func:`lowrank_adam`.
    ``seed`` fixes the subspace draws (None: seeded from the operating system; torch's global
    generator is never touched). Every hyperparameter may be overridden per param group and is
    validated there. ``state_dict()`` carries the generator's state, so a resumed run draws the
    same subspaces. After a refresh, ``state[p]["overlap"]`` holds omega with the previous basis.
    """

    def __init__(self, params, lr: float = 1e-3, rank: int = 4, update_gap: int = 200, scale: float = 0.25,
                 rule: str = "importance", betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 state_policy: str = "keep", seed: int | None = None):
        defaults = dict(lr=lr, rank=rank, update_gap=update_gap, scale=scale, rule=rule, betas=betas, eps=eps,
                        state_policy=state_policy)
        _check_group(defaults)
        if seed is not None:
            check_int(seed, "seed")
        self._generator = as_generator(seed, "seed")
        super().__init__(params, defaults)

    def add_param_group(self, param_group: dict) -> None:
        super().add_param_group(param_group)
        try:
            _check_group(self.param_groups[-1])
        except ValueError:
            self.param_groups.pop()
            raise

    def state_dict(self) -> dict:
        out = super().state_dict()
        out["generator_state"] = self._generator.get_state()
        return out

    def load_state_dict(self, state_dict: dict) -> None:
        state_dict = dict(state_dict)
        gen_state = state_dict.pop("generator_state", None)
        super().load_state_dict(state_dict)
        if gen_state is not None:
            self._generator.set_state(gen_state)

    def is_low_rank(self, p: torch.Tensor, group: dict) -> bool:
        """Whether ``p`` gets low-rank states (2-D and larger than the rank in both dimensions)."""
        return p.ndim == 2 and min(p.shape) > group["rank"]

    @torch.no_grad()
    def step(self, closure=None):  # type: ignore[override]
        loss = None
        if closure is not None:
            with torch.enable_grad():
                loss = closure()
        for group in self.param_groups:
            b1, b2 = group["betas"]
            for p in group["params"]:
                if p.grad is None:
                    continue
                G = p.grad
                if not torch.isfinite(G).all():
                    raise ValueError("a parameter's gradient is not finite")
                state = self.state[p]
                state["step"] = state.get("step", 0) + 1
                if self.is_low_rank(p, group):
                    left = projection_side(tuple(p.shape)) == "left"
                    Gs = G if left else G.T
                    if (state["step"] - 1) % group["update_gap"] == 0:
                        P = _select_torch(Gs, group["rank"], group["rule"], self._generator)[0]
                        if "P" in state:
                            state["overlap"] = float((P.T @ state["P"]).pow(2).sum() / group["rank"])
                        state["P"] = P
                        if "exp_avg" not in state or group["state_policy"] == "reset":
                            shape = (group["rank"], Gs.shape[1])
                            state["exp_avg"] = torch.zeros(shape, dtype=p.dtype, device=p.device)
                            state["exp_avg_sq"] = torch.zeros(shape, dtype=p.dtype, device=p.device)
                            state["k"] = 0
                    R = state["P"].T @ Gs
                    lr = group["lr"] * group["scale"]
                else:
                    left, R, lr = True, G, group["lr"]
                    if "exp_avg" not in state:
                        state["exp_avg"], state["exp_avg_sq"], state["k"] = torch.zeros_like(p), torch.zeros_like(p), 0
                state["k"] += 1
                k = state["k"]
                state["exp_avg"].mul_(b1).add_(R, alpha=1 - b1)
                state["exp_avg_sq"].mul_(b2).addcmul_(R, R, value=1 - b2)
                N = (state["exp_avg"] / (1 - b1 ** k)) / ((state["exp_avg_sq"] / (1 - b2 ** k)).sqrt() + group["eps"])
                if "P" in state:
                    D = state["P"] @ N
                    N = D if left else D.T
                p.add_(N, alpha=-lr)
        return loss


# --------------------------------------------------------------------------- the proxy problem


@dataclass
class FrozenSubspaceProblem:
    """The card's frozen-subspace proxy: f(W) = 1/2 ||W - W*||_F^2 with stochastic gradient

        G = (W - W*) + noise * U0 diag(xi * c) V0^T,   xi ~ N(0, I_k) fresh at every call,

    where U0, V0 are fixed random orthonormal m x k and n x k bases and c decreases linearly from
    2 to 1. The noise directions are persistent and carry the most energy but average to zero:
    a dominant-subspace rule keeps choosing them and never trains the rest.
    """

    m: int = 32
    n: int = 32
    noise: float = 3.0
    noise_rank: int = 4
    seed: int = 0
    W_star: np.ndarray = field(init=False, repr=False)
    U0: np.ndarray = field(init=False, repr=False)
    V0: np.ndarray = field(init=False, repr=False)
    c: np.ndarray = field(init=False, repr=False)

    def __post_init__(self) -> None:
        check_int(self.m, "m", minimum=1)
        check_int(self.n, "n", minimum=1)
        check_positive(self.noise, "noise", allow_zero=True)
        check_int(self.noise_rank, "noise_rank", minimum=1)
        if self.noise_rank > min(self.m, self.n):
            raise ValueError(f"noise_rank must be <= min(m, n) = {min(self.m, self.n)}, got {self.noise_rank}")
        gen = as_rng(check_int(self.seed, "seed"))
        self.W_star = gen.standard_normal((self.m, self.n)) / np.sqrt(self.m)
        self.U0 = np.linalg.qr(gen.standard_normal((self.m, self.noise_rank)))[0]
        self.V0 = np.linalg.qr(gen.standard_normal((self.n, self.noise_rank)))[0]
        self.c = np.linspace(2.0, 1.0, self.noise_rank)

    def fun(self, W: np.ndarray) -> float:
        return 0.5 * float(np.sum((W - self.W_star) ** 2))

    def grad(self, W: np.ndarray) -> np.ndarray:
        return W - self.W_star

    def noise_draws(self, steps: int, rng: RngLike = None) -> np.ndarray:
        """The xi of ``steps`` consecutive gradient calls (steps x k), the same numbers that
        :meth:`stochastic_jac` with the same ``rng`` uses."""
        return as_rng(rng).standard_normal((check_int(steps, "steps"), self.noise_rank))

    def stochastic_jac(self, rng: RngLike = None) -> MatrixJac:
        """A gradient oracle W -> G with its own noise stream (same seed, same noise)."""
        gen = as_rng(rng)

        def jac(W: np.ndarray) -> np.ndarray:
            xi = gen.standard_normal(self.noise_rank)
            return (W - self.W_star) + self.noise * (self.U0 * (xi * self.c)) @ self.V0.T

        return jac
