"""Chapter 17: breaking the frozen subspace with importance-sampled low-rank optimizer states.

GaLore-style optimizers keep Adam's moment estimates only for a projected gradient
R = P^T G (r x n instead of m x n), where the basis P (m x r, orthonormal columns) is recomputed
every tau steps from an SVD of the current gradient. The usual choice is the *dominant* subspace
(the top-r left singular vectors). Zhang et al. (NeurIPS 2025; "I3S" in arXiv v1, "SARA" in the
reviews) observe that this subspace freezes during pretraining and propose to *sample* the r
singular vectors without replacement with probabilities proportional to the singular values.

What is here:

* :func:`importance_indices`, :func:`select_subspace` - the three subspace rules
  ("dominant", "importance", "random"), with the safeguard for rank-deficient gradients.
* :func:`subspace_overlap`, :func:`captured_energy`, :func:`state_floats` - the diagnostics.
* :func:`lowrank_adam` (the paper's method and GaLore, numpy, scipy-shaped), :func:`full_adam`
  and :func:`projected_sgd` - the baselines.
* :class:`LowRankAdam` - the same method as a ``torch.optim.Optimizer`` for 2-D weights.
* :class:`FrozenSubspaceProblem` - the card's CPU proxy: a persistent, high-energy, zero-mean
  gradient subspace that traps the dominant rule - and the chapter's experiments, figures,
  claim and explorers.

Reconstructed details (the card lists them as unverified): weights sigma_i (not sigma_i^2);
numpy's successive weighted sampling without replacement; Adam states kept across refreshes by
default, with a reset policy that zeroes the moments and restarts Adam's bias correction.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np
import plotly.graph_objects as go
import torch

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
)
from ..viz import Phase, SliderStep, base_layout, color_for, convergence_traces, phase_layout, slider_figure
from ..widgets import Explorer, Slider, Toggle

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


# --------------------------------------------------------------------------- subspace rules


def importance_indices(sigma: np.ndarray, rank: int, rng: RngLike = None) -> np.ndarray:
    """Draw ``rank`` distinct indices with probabilities proportional to ``sigma`` (the paper's
    importance sampling of singular vectors).

    This is successive sampling without replacement (numpy's ``choice(..., replace=False, p=p)``):
    an index's inclusion probability grows with sigma_i but is not exactly proportional to it.
    Indices with sigma_i = 0 are never drawn while enough non-zero weights exist; if fewer than
    ``rank`` singular values are non-zero, all of them are taken and the rest is filled uniformly
    from the zero ones (the card's safeguard for rank-deficient gradients).
    """
    sigma = check_vector(sigma, "sigma")
    if np.any(sigma < 0):
        raise ValueError("sigma must be non-negative")
    rank = check_int(rank, "rank", minimum=1)
    if rank > sigma.size:
        raise ValueError(f"rank must be <= len(sigma) = {sigma.size}, got {rank}")
    gen = as_rng(rng)
    positive = np.flatnonzero(sigma > 0)
    if positive.size >= rank:
        return gen.choice(sigma.size, size=rank, replace=False, p=sigma / sigma.sum())
    zeros = np.flatnonzero(sigma <= 0)
    return np.concatenate([positive, gen.choice(zeros, size=rank - positive.size, replace=False)])


def select_subspace(G: np.ndarray, rank: int, rule: str = "importance",
                    rng: RngLike = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """An orthonormal basis P (m x rank) of a subspace of R^m for the gradient G (m x n).

    ``rule``: "dominant" takes the top-r left singular vectors (GaLore); "importance" samples r of
    them with probabilities proportional to the singular values (the paper); "random" takes the
    QR basis of an m x r Gaussian matrix (GoLore-style). Returns ``(P, indices, sigma)``:
    the chosen singular-vector indices (empty for "random") and the full spectrum of G, padded
    with zeros to length m (the singular vectors of a wide or square G span all of R^m).
    """
    G = check_matrix(G, "G")
    m = G.shape[0]
    rank = check_int(rank, "rank", minimum=1)
    if rank > m:
        raise ValueError(f"rank must be <= G.shape[0] = {m}, got {rank}")
    rule = check_choice(rule, "rule", RULES)
    return _select(G, rank, rule, as_rng(rng))


def _select(G: np.ndarray, rank: int, rule: str, gen: np.random.Generator) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`select_subspace` without the argument checks (called inside the optimizer loops)."""
    m = G.shape[0]
    U, s, _ = np.linalg.svd(G, full_matrices=True)
    sigma = np.zeros(m)
    sigma[: s.size] = s
    if rule == "random":
        Q, _ = np.linalg.qr(gen.standard_normal((m, rank)))
        return Q, np.array([], dtype=int), sigma
    idx = np.arange(rank) if rule == "dominant" else importance_indices(sigma, rank, gen)
    return U[:, idx], idx, sigma


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


def _check_run(fun, W0, jac, lr, maxiter, callback):
    if not callable(fun):
        raise ValueError("fun must be callable")
    if not callable(jac):
        raise ValueError("jac must be callable")
    if callback is not None and not callable(callback):
        raise ValueError("callback must be callable")
    W = check_matrix(W0, "W0")
    return W, check_positive(lr, "lr"), check_int(maxiter, "maxiter", minimum=0)


def _gradient(jac: MatrixJac, W: np.ndarray) -> np.ndarray:
    G = np.asarray(jac(W), dtype=float)
    if G.shape != W.shape:
        raise ValueError(f"jac must return an array of shape {W.shape}, got {G.shape}")
    if not np.all(np.isfinite(G)):
        raise ValueError("jac returned a non-finite gradient")
    return G


def _check_rank(rank: int, W: np.ndarray) -> int:
    rank = check_int(rank, "rank", minimum=1)
    if rank > min(W.shape):
        raise ValueError(f"rank must be <= min(W0.shape) = {min(W.shape)}, got {rank}")
    return rank


def _check_betas(betas) -> tuple[float, float]:
    if not isinstance(betas, (tuple, list)) or len(betas) != 2:
        raise ValueError(f"betas must be a pair (beta1, beta2), got {betas!r}")
    return (check_in_range(betas[0], "betas[0]", 0.0, 1.0, closed=(True, False)),
            check_in_range(betas[1], "betas[1]", 0.0, 1.0, closed=(True, False)))


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
    rng: RngLike = None,
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
    The trace records the loss, ||G||_F, the step lr * scale, ``energy`` (captured energy of G)
    and, at each refresh after the first, ``overlap`` omega = ||P_t^T P_{t-tau}||_F^2 / r.
    ``result.refreshes`` lists each refresh: step, spectrum ``sigma`` and chosen ``indices``.
    """
    W, lr, maxiter = _check_run(fun, W0, jac, lr, maxiter, callback)
    full = rule == "full"
    if not full:
        rule = check_choice(rule, "rule", RULES)
        rank = _check_rank(rank, W)
    tau = check_int(tau, "tau", minimum=1)
    scale = check_positive(scale, "scale")
    b1, b2 = _check_betas(betas)
    eps = check_positive(eps, "eps")
    state_policy = check_choice(state_policy, "state_policy", STATE_POLICIES)
    gen = as_rng(rng)
    left = projection_side(W.shape) == "left"
    step = lr * (1.0 if full else scale)

    trace = Trace(LABELS["full" if full else rule],
                  meta=dict(rank=None if full else rank, tau=tau, lr=lr, scale=scale, state_policy=state_policy))
    M = V = P = None
    k = 0
    refreshes: list[dict] = []
    trace.restart_clock()
    for t in range(maxiter):
        G = _gradient(jac, W)
        Gs = G if left else G.T                     # the side we project: m' x n', m' <= n'
        overlap = np.nan
        if full:
            R = Gs
            if M is None:
                M, V = np.zeros_like(R), np.zeros_like(R)
        else:
            if t % tau == 0:
                P_new, idx, sigma = _select(Gs, rank, rule, gen)
                if P is not None:
                    overlap = float(np.sum((P_new.T @ P) ** 2) / rank)
                P = P_new
                refreshes.append(dict(step=t, sigma=sigma, indices=idx))
                if M is None or state_policy == "reset":
                    M, V, k = np.zeros((rank, Gs.shape[1])), np.zeros((rank, Gs.shape[1])), 0
            R = P.T @ Gs
        k += 1
        M = b1 * M + (1.0 - b1) * R
        V = b2 * V + (1.0 - b2) * R * R
        N = (M / (1.0 - b1 ** k)) / (np.sqrt(V / (1.0 - b2 ** k)) + eps)
        D = N if full else P @ N
        g2 = float(np.sum(G * G))
        energy = 1.0 if full else (float(np.sum(R * R)) / g2 if g2 > 0 else 0.0)
        trace.record(objective=float(fun(W)), grad_norm=np.sqrt(g2), step_size=step, energy=energy,
                     overlap=overlap)
        W = W - step * (D if left else D.T)
        if callback is not None:
            callback(W)
    f = float(fun(W))
    trace.record(objective=f, iteration=maxiter)
    return Result(x=W, fun=f, nit=maxiter, success=bool(np.isfinite(f)), message="maxiter reached",
                  trace=trace, refreshes=refreshes)


def full_adam(fun: MatrixFun, W0: np.ndarray, jac: MatrixJac, *, lr: float = 1e-3,
              betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8, maxiter: int = 1000,
              callback: Callable[[np.ndarray], None] | None = None) -> Result:
    """Full-rank Adam on the m x n gradient (state size 2mn): the baseline the paper's low-rank
    methods try to approach."""
    return lowrank_adam(fun, W0, jac, rule="full", lr=lr, betas=betas, eps=eps, maxiter=maxiter,
                        callback=callback)


def projected_sgd(fun: MatrixFun, W0: np.ndarray, jac: MatrixJac, *, rank: int, rule: str = "importance",
                  tau: int = 200, lr: float = 1e-2, maxiter: int = 1000, rng: RngLike = None) -> Result:
    """Projected SGD, W <- W - lr P P^T G (projection from the left or right as in
    :func:`lowrank_adam`), the test baseline: with rank = min(m, n) it is plain SGD."""
    W, lr, maxiter = _check_run(fun, W0, jac, lr, maxiter, None)
    rank = _check_rank(rank, W)
    rule = check_choice(rule, "rule", RULES)
    tau = check_int(tau, "tau", minimum=1)
    gen = as_rng(rng)
    left = projection_side(W.shape) == "left"
    trace = Trace(f"projected SGD ({rule})", meta=dict(rank=rank, tau=tau, lr=lr))
    P = None
    for t in range(maxiter):
        G = _gradient(jac, W)
        Gs = G if left else G.T
        if t % tau == 0:
            P = _select(Gs, rank, rule, gen)[0]
        D = P @ (P.T @ Gs)
        trace.record(objective=float(fun(W)), grad_norm=float(np.linalg.norm(G)), step_size=lr)
        W = W - lr * (D if left else D.T)
    f = float(fun(W))
    trace.record(objective=f, iteration=maxiter)
    return Result(x=W, fun=f, nit=maxiter, success=bool(np.isfinite(f)), message="maxiter reached", trace=trace)


# --------------------------------------------------------------------------- torch optimizer


class LowRankAdam(torch.optim.Optimizer):
    """GaLore-style Adam with low-rank states as a ``torch.optim.Optimizer`` (the paper's method
    with ``rule="importance"``, GaLore with ``"dominant"``, GoLore-style with ``"random"``).

    A 2-D parameter with ``min(shape) > rank`` gets the projected update of :func:`lowrank_adam`
    (basis re-selected every ``update_gap`` steps by :func:`select_subspace`, states of shape
    r x max(m, n)); every other parameter (biases, small matrices) gets plain Adam.
    ``state_policy`` is "keep" or "reset", as in :func:`lowrank_adam`. ``seed`` fixes the
    subspace draws. After a refresh, ``state[p]["overlap"]`` holds omega with the previous basis.
    """

    def __init__(self, params, lr: float = 1e-3, rank: int = 4, update_gap: int = 200, scale: float = 0.25,
                 rule: str = "importance", betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 state_policy: str = "keep", seed: int | None = None):
        check_positive(lr, "lr")
        check_int(rank, "rank", minimum=1)
        check_int(update_gap, "update_gap", minimum=1)
        check_positive(scale, "scale")
        check_choice(rule, "rule", RULES)
        betas = _check_betas(betas)
        check_positive(eps, "eps")
        check_choice(state_policy, "state_policy", STATE_POLICIES)
        if seed is not None:
            check_int(seed, "seed")
        super().__init__(params, dict(lr=lr, rank=rank, update_gap=update_gap, scale=scale, rule=rule,
                                      betas=betas, eps=eps, state_policy=state_policy))
        self._rng = np.random.default_rng(seed)

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
                        P_np = _select(Gs.detach().double().cpu().numpy(), group["rank"], group["rule"],
                                       self._rng)[0]
                        P = torch.from_numpy(P_np).to(dtype=p.dtype, device=p.device)
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

    def stochastic_jac(self, rng: RngLike = None) -> MatrixJac:
        """A gradient oracle W -> G with its own noise stream (same seed, same noise)."""
        gen = as_rng(rng)

        def jac(W: np.ndarray) -> np.ndarray:
            xi = gen.standard_normal(self.noise_rank)
            return (W - self.W_star) + self.noise * (self.U0 * (xi * self.c)) @ self.V0.T

        return jac


# --------------------------------------------------------------------------- experiments

#: The card's proxy settings.
PROXY = dict(rank=4, tau=20, lr=0.01, scale=1.0, maxiter=3000)


def proxy_run(rule: str, seed: int = 0, *, noise: float = 3.0, rank: int = 4, tau: int = 20,
              maxiter: int = 3000, state_policy: str = "keep") -> Result:
    """One run of ``rule`` (a subspace rule or "full") on the frozen-subspace proxy; the problem
    and its noise stream depend on ``seed`` only, so all rules see the same gradients' noise."""
    prob = FrozenSubspaceProblem(noise=noise, seed=seed)
    return lowrank_adam(prob.fun, np.zeros((prob.m, prob.n)), prob.stochastic_jac(seed + 10_000),
                        rank=rank, rule=rule, tau=tau, lr=PROXY["lr"], scale=PROXY["scale"],
                        maxiter=maxiter, state_policy=state_policy, rng=seed + 20_000)


def _mean_overlap(res: Result, last: int = 50) -> float:
    ov = res.trace["overlap"]
    ov = ov[np.isfinite(ov)]
    return float(np.mean(ov[-last:])) if ov.size else float("nan")


def proxy_comparison(seeds=(0, 1, 2), *, state_policy: str = "keep", rules=RULES + ("full",),
                     maxiter: int = 3000) -> dict[str, dict[str, float]]:
    """Mean final loss and mean overlap (last 50 refreshes) per rule over ``seeds``."""
    out = {}
    for rule in rules:
        runs = [proxy_run(rule, s, state_policy=state_policy, maxiter=maxiter) for s in seeds]
        out[rule] = dict(loss=float(np.mean([r.fun for r in runs])),
                         overlap=float(np.mean([_mean_overlap(r) for r in runs])))
    return out


@claim("17", "On the frozen-subspace proxy, importance sampling escapes the frozen dominant subspace "
             "and reaches at most half GaLore's final loss",
       expect="loss(importance) <= 0.5 x loss(dominant); overlap(dominant) >= 0.75; overlap(importance) <= 0.6",
       name="frozen_subspace")
def claim_frozen_subspace(fast: bool = False) -> Measured:
    """The card's CPU-scale check (32 x 32, rank 4, tau 20, 3000 Adam steps), states kept across
    refreshes; the reset policy is measured too and reported, not judged."""
    seeds = (0, 1, 2) if fast else (0, 1, 2, 3, 4)
    keep = proxy_comparison(seeds, rules=("dominant", "importance"))
    reset = proxy_comparison(seeds, state_policy="reset", rules=("dominant", "importance"))
    ratio = keep["importance"]["loss"] / keep["dominant"]["loss"]
    holds = ratio <= 0.5 and keep["dominant"]["overlap"] >= 0.75 and keep["importance"]["overlap"] <= 0.6
    values = {
        "loss_dominant": keep["dominant"]["loss"], "loss_importance": keep["importance"]["loss"],
        "loss_ratio": ratio, "overlap_dominant": keep["dominant"]["overlap"],
        "overlap_importance": keep["importance"]["overlap"],
        "reset_loss_dominant": reset["dominant"]["loss"], "reset_loss_importance": reset["importance"]["loss"],
    }
    summary = (f"{len(seeds)} seeds: final loss {keep['importance']['loss']:.3g} (importance) vs "
               f"{keep['dominant']['loss']:.3g} (dominant), ratio {ratio:.2f}; overlap "
               f"{keep['dominant']['overlap']:.2f} vs {keep['importance']['overlap']:.2f}; with reset states "
               f"{reset['importance']['loss']:.3g} vs {reset['dominant']['loss']:.3g}")
    return Measured(values, holds=bool(holds), summary=summary, details=dict(keep=keep, reset=reset))


# --------------------------------------------------------------------------- torch proxy


def mlp_proxy(rule: str = "importance", *, seed: int = 0, steps: int = 400, rank: int = 4,
              hidden: int = 64, lr: float = 3e-3, update_gap: int = 50, batch: int = 32) -> Trace:
    """A tiny torch run: a 16-64-64-1 tanh MLP fitted by minibatch training to a random teacher
    network; ``rule`` is a subspace rule for :class:`LowRankAdam` (rank ``rank``, scale 1) or
    "full" for ``torch.optim.Adam``. Returns the trace of the full-data training loss."""
    if rule != "full":
        check_choice(rule, "rule", RULES)
    steps = check_int(steps, "steps", minimum=1)
    gen = torch.Generator().manual_seed(check_int(seed, "seed"))
    X = torch.randn(512, 16, generator=gen, dtype=torch.float64)
    teacher = (torch.randn(16, hidden, generator=gen, dtype=torch.float64) / 4,
               torch.randn(hidden, 1, generator=gen, dtype=torch.float64) / 8)
    y = torch.tanh(X @ teacher[0]) @ teacher[1] + 0.05 * torch.randn(512, 1, generator=gen, dtype=torch.float64)
    torch_state = torch.random.get_rng_state()
    torch.manual_seed(seed)
    model = torch.nn.Sequential(torch.nn.Linear(16, hidden), torch.nn.Tanh(), torch.nn.Linear(hidden, hidden),
                                torch.nn.Tanh(), torch.nn.Linear(hidden, 1)).double()
    torch.random.set_rng_state(torch_state)
    if rule == "full":
        opt: torch.optim.Optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    else:
        opt = LowRankAdam(model.parameters(), lr=lr, rank=rank, update_gap=update_gap, scale=1.0, rule=rule,
                          seed=seed)
    trace = Trace(LABELS[rule], meta=dict(rank=rank, steps=steps, lr=lr))
    for _ in range(steps):
        idx = torch.randint(0, 512, (batch,), generator=gen)
        opt.zero_grad()
        loss = torch.mean((model(X[idx]) - y[idx]) ** 2)
        loss.backward()
        opt.step()
        with torch.no_grad():
            trace.record(objective=float(torch.mean((model(X) - y) ** 2)))
    return trace


# --------------------------------------------------------------------------- figures

#: Refresh periods, ranks and noise scales offered by the explorers; horizon of their runs.
NOISES = (0.0, 1.0, 2.0, 3.0, 4.0)
RANKS = (2, 4, 8)
TAUS = (10, 20, 40)
EXPLORER_STEPS = 240
RULE_COLORS = {"dominant": color_for(0), "importance": color_for(1), "random": color_for(2), "full": color_for(3)}


@lru_cache(maxsize=8)
def watch_runs(state_policy: str = "keep", seed: int = 0) -> dict[str, Result]:
    """The four optimizers on the card's proxy (seed 0, 3000 steps), for "Watch it run"."""
    return {rule: proxy_run(rule, seed, state_policy=state_policy) for rule in RULES + ("full",)}


def _loss_traces(policy: str) -> list:
    runs = watch_runs(policy)
    order = ("dominant", "importance", "random", "full")
    out = convergence_traces([runs[r].trace for r in order])
    for tr, r in zip(out, order):
        tr.line.color = RULE_COLORS[r]
    return out


#: Named stretches of the proxy run: fast progress on the signal, then the noise floor.
WATCH_PHASES = (Phase(0, 400, "transient"), Phase(400, 3000, "noise floor: the subspace rule decides"))


def watch_figure() -> go.Figure:
    """Loss of the four optimizers on the proxy, with a two-position slider for the state policy
    (keep Adam's moments across refreshes, or reset them)."""
    steps = [SliderStep(f"{p} states", _loss_traces(p)) for p in STATE_POLICIES]
    fig = slider_figure(steps, slider_label="Adam states at a refresh", logy=True,
                        title="Frozen-subspace proxy: 32 x 32, rank 4, refresh every 20 steps",
                        xaxis_title="step t", yaxis_title="loss 1/2 ||W - W*||^2")
    fig.update_layout(**phase_layout(WATCH_PHASES))
    return fig


def overlap_figure_watch() -> go.Figure:
    """Subspace overlap omega at every refresh of the seed-0 runs (states kept)."""
    runs = watch_runs("keep")
    fig = go.Figure()
    for r in RULES:
        tr = runs[r].trace
        ov = tr["overlap"]
        ok = np.isfinite(ov)
        fig.add_scatter(x=tr.iteration[ok], y=ov[ok], mode="lines", name=LABELS[r],
                        line=dict(color=RULE_COLORS[r], width=2))
    fig.add_hline(y=4 / 32, line=dict(dash="dot", color="#888"), annotation_text="r/m (independent)")
    base_layout(fig, title="Overlap of consecutive subspaces", xaxis_title="step t",
                yaxis_title="overlap omega (0 to 1)", height=380)
    fig.update_yaxes(range=[0, 1.05])
    return fig


# ---- exploration 1: the spectrum and the sampled indices

SPECTRUM_FRAMES = 12


@lru_cache(maxsize=8)
def spectrum_run(noise: float = 3.0) -> Result:
    """An importance-sampling run on the proxy (1200 steps, 60 refreshes) whose refreshes the
    spectrum figures show."""
    return proxy_run("importance", 0, noise=noise, maxiter=1200)


def spectrum_traces(noise: float, frame: int) -> tuple[list, str]:
    """Bars of the sampling probabilities p_i = sigma_i / sum sigma at one shown refresh (of
    ``SPECTRUM_FRAMES`` spread over the run), the drawn indices in red, GaLore's top-r marked."""
    res = spectrum_run(noise)
    picks = np.linspace(0, len(res.refreshes) - 1, SPECTRUM_FRAMES).round().astype(int)
    ref = res.refreshes[picks[frame]]
    p = ref["sigma"] / ref["sigma"].sum()
    i = np.arange(1, p.size + 1)
    drawn = np.zeros(p.size, dtype=bool)
    drawn[ref["indices"]] = True
    rank = len(ref["indices"])
    traces = [
        go.Bar(x=i, y=np.where(drawn, 0.0, p), name="not drawn", marker_color="#b8c4d6"),
        go.Bar(x=i, y=np.where(drawn, p, 0.0), name="drawn by importance sampling", marker_color=RULE_COLORS["importance"]),
        go.Scatter(x=i[:rank], y=p[:rank] + 0.012, mode="markers", name="GaLore's top-r (always the same)",
                   marker=dict(symbol="triangle-down", size=11, color=RULE_COLORS["dominant"])),
    ]
    return traces, f"step {ref['step']}"


def _spectrum_layout(fig: go.Figure, noise: float) -> go.Figure:
    base_layout(fig, title=f"Spectrum of the gradient at a refresh (noise {noise:g})",
                xaxis_title="singular value index i (largest first)",
                yaxis_title="sampling probability sigma_i / sum sigma", height=430)
    fig.update_layout(barmode="stack")
    fig.update_yaxes(range=[0, 0.6])
    return fig


def spectrum_figure(noise: float = 3.0, frame: int = 6) -> go.Figure:
    """The live spectrum explorer: one refresh of one run."""
    traces, _ = spectrum_traces(noise, frame)
    return _spectrum_layout(go.Figure(traces), noise)


def spectrum_slider_figure(noise: float = 3.0) -> go.Figure:
    """The static twin: a slider over twelve refreshes of the same run."""
    steps = []
    for k in range(SPECTRUM_FRAMES):
        traces, label = spectrum_traces(noise, k)
        steps.append(SliderStep(label, traces))
    fig = slider_figure(steps, slider_label="refresh at", fixed_axes=False, active=0)
    return _spectrum_layout(fig, noise)


# ---- exploration 2: overlap timeline

@lru_cache(maxsize=64)
def overlap_runs(noise: float, rank: int, tau: int, state_policy: str = "keep") -> dict[str, Result]:
    """The three subspace rules on the proxy for ``EXPLORER_STEPS`` steps (seed 0)."""
    return {r: proxy_run(r, 0, noise=noise, rank=rank, tau=tau, maxiter=EXPLORER_STEPS, state_policy=state_policy)
            for r in RULES}


def overlap_traces(noise: float, rank: int, tau: int, state_policy: str = "keep") -> list:
    """Overlap omega at each refresh (left) and loss (right) for the three rules."""
    runs = overlap_runs(noise, rank, tau, state_policy)
    out = []
    for r in RULES:
        tr = runs[r].trace
        ov = tr["overlap"]
        ok = np.isfinite(ov)
        out.append(go.Scatter(x=tr.iteration[ok], y=ov[ok], mode="lines+markers", name=LABELS[r],
                              line=dict(color=RULE_COLORS[r], width=2), marker=dict(size=4),
                              xaxis="x", yaxis="y", legendgroup=r))
    for r in RULES:
        tr = runs[r].trace.thinned(150)
        out.append(go.Scatter(x=tr.iteration, y=tr.objective, mode="lines", name=LABELS[r], showlegend=False,
                              line=dict(color=RULE_COLORS[r], width=2), xaxis="x2", yaxis="y2", legendgroup=r))
    return out


@lru_cache(maxsize=1)
def _overlap_layout_json() -> dict:
    """The two-panel layout of the overlap figures, built once (plotly validation is slow)."""
    fig = base_layout(go.Figure(), title="overlap", height=430)
    fig.update_layout(
        xaxis=dict(domain=[0, 0.46], title_text="step t"),
        yaxis=dict(range=[0, 1.05], title_text="overlap omega with previous subspace"),
        xaxis2=dict(domain=[0.56, 1], title_text="step t", anchor="y2", showline=True, linecolor="#888", mirror=True),
        yaxis2=dict(type="log", title_text="loss", anchor="x2", showline=True, linecolor="#888", mirror=True,
                    exponentformat="power", range=[-0.3, 1.25]),
    )
    return fig.layout.to_plotly_json()


def _overlap_layout(fig: go.Figure, title: str) -> go.Figure:
    fig.update_layout(_overlap_layout_json())
    fig.update_layout(title_text=title)
    return fig


def overlap_figure(noise: float = 3.0, rank: int = 4, tau: int = 20, reset_states: bool = False) -> go.Figure:
    """The live overlap explorer (noise scale, rank, refresh period, state policy)."""
    policy = "reset" if reset_states else "keep"
    fig = go.Figure(data=overlap_traces(noise, rank, tau, policy), layout=_overlap_layout_json())
    fig.update_layout(title_text=f"noise {noise:g}, rank {rank}, refresh every {tau} steps, {policy} states")
    return fig


def overlap_slider_figure(rank: int = 4, tau: int = 20) -> go.Figure:
    """The static twin: a slider over the noise scale (rank 4, tau 20, states kept)."""
    steps = [SliderStep(f"{s:g}", overlap_traces(s, rank, tau)) for s in NOISES]
    fig = slider_figure(steps, slider_label="noise scale", active=NOISES.index(3.0), fixed_axes=False)
    return _overlap_layout(fig, f"Overlap and loss, rank {rank}, refresh every {tau} steps")


# ---- exploration 3: memory calculator

LAYER_SIZES = (256, 1024, 4096, 11008)


def memory_rows(shapes=((4096, 4096), (4096, 11008), (11008, 4096)), ranks=(128, 256, 512)) -> list[dict]:
    """Optimizer-state floats (millions) for LLaMA-7B-like layer shapes: full Adam vs low rank."""
    rows = []
    for m, n in shapes:
        row = {"layer shape": f"{m} x {n}", "full Adam (M floats)": state_floats(m, n)["total"] / 1e6}
        for r in ranks:
            row[f"rank {r} (M floats)"] = state_floats(m, n, r)["total"] / 1e6
        rows.append(row)
    return rows


def memory_figure(m: int = 4096, n: int = 11008, rank: int = 256) -> go.Figure:
    """Bars of state floats for one layer: full Adam, and the low-rank states + projector."""
    full = state_floats(m, n)
    low = state_floats(m, n, rank)
    fig = go.Figure([
        go.Bar(x=["full Adam", f"low rank (r = {rank})"], y=[full["moments"] / 1e6, low["moments"] / 1e6],
               name="Adam moments M, V", marker_color=color_for(0)),
        go.Bar(x=["full Adam", f"low rank (r = {rank})"], y=[0.0, low["projector"] / 1e6],
               name="projector P", marker_color=color_for(4)),
    ])
    base_layout(fig, title=f"Optimizer-state floats of one {m} x {n} weight: "
                           f"{low['total'] / full['total']:.1%} of full Adam",
                xaxis_title="optimizer", yaxis_title="millions of floats", height=380)
    fig.update_layout(barmode="stack")
    return fig


EXPLORER_SPECTRUM = Explorer("17", "spectrum", spectrum_figure, {
    "noise": Slider("noise scale", list(NOISES), 3.0),
    "frame": Slider("refresh (1-12)", list(range(SPECTRUM_FRAMES)), 6, fmt="{:d}"),
}, description="Singular-value spectrum at a refresh, with the importance-sampled indices.")

EXPLORER_OVERLAP = Explorer("17", "overlap", overlap_figure, {
    "noise": Slider("noise scale", list(NOISES), 3.0),
    "rank": Slider("rank r", list(RANKS), 4, fmt="{:d}"),
    "tau": Slider("refresh period tau", list(TAUS), 20, fmt="{:d}"),
    "reset_states": Toggle("reset Adam states at refresh", False),
}, description="Overlap of consecutive subspaces and loss for the three rules.")

EXPLORER_MEMORY = Explorer("17", "memory", memory_figure, {
    "m": Slider("rows m", list(LAYER_SIZES), 4096, fmt="{:d}"),
    "n": Slider("columns n", list(LAYER_SIZES), 11008, fmt="{:d}"),
    "rank": Slider("rank r", [8, 32, 128, 256, 512], 256, fmt="{:d}"),
}, description="Optimizer-state floats of one layer, full Adam vs low-rank states.")
