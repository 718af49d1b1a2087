"""Sparse plus low-rank (S + LR) compression of a linear layer: 3BASiL and its baselines.

A linear layer ``y = W x`` (``W`` of shape (d_out, d_in)) is replaced by ``S + L`` with ``S``
sparse (unstructured, or N:M along the input dimension) and ``rank L <= r``, chosen to reproduce
the layer's outputs on calibration inputs ``X`` (n, d_in)::

    min_{S, L}  1/2 tr((W - S - L) H (W - S - L)^T),   H = X^T X / n (damped).

Makni, Meng and Mazumder (NeurIPS 2025) solve it with a three-block ADMM, *3BASiL*
(:func:`threebasil`), and refine the result of a whole transformer block by *transformer
matching* (:func:`transformer_matching`). The baselines are Wanda (:func:`wanda`), an EoRA-style
prune-then-compensate (:func:`eora`), OATS (:func:`oats`) and a HASSLE-free-style alternation
(:func:`hassle_free`). Everything here follows the authors' code (``compress.py``,
``pipeline.py``); where we departed, the docstring says so.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import scipy.linalg
import torch
from torch import nn

from ..core.validate import check_in_range, check_int, check_matrix, check_positive

# --------------------------------------------------------------------------- sparsity patterns


def parse_pattern(pattern) -> tuple[str, float | tuple[int, int]]:
    """('unstructured', fraction kept) or ('nm', (N, M)) from a float in (0, 1] (the fraction of
    weights kept) or an 'N:M' string (N kept in every M consecutive input weights)."""
    if isinstance(pattern, str):
        try:
            n, m = (int(p) for p in pattern.split(":"))
        except ValueError as err:
            raise ValueError(f"pattern must be a fraction kept or 'N:M', got {pattern!r}") from err
        if not 1 <= n <= m:
            raise ValueError(f"pattern 'N:M' needs 1 <= N <= M, got {pattern!r}")
        return "nm", (n, m)
    if isinstance(pattern, bool):
        raise ValueError("pattern must be a fraction kept or 'N:M'")
    return "unstructured", check_in_range(pattern, "pattern", 0.0, 1.0, closed=(False, True))


def n_kept(shape: tuple[int, int], pattern) -> int:
    """The number k of nonzeros a pattern keeps in a (d_out, d_in) matrix."""
    kind, p = parse_pattern(pattern)
    size = shape[0] * shape[1]
    if kind == "nm":
        return size // p[1] * p[0]
    return max(1, int(round(p * size)))


def project(A: np.ndarray, pattern) -> np.ndarray:
    """P_S(A): the largest magnitudes of A (d_out, d_in) kept, the rest set to zero.

    Unstructured: the top k = round(kept * size) entries of the whole matrix (as in the authors'
    code). 'N:M': the top N of every group of M consecutive entries along the *input* dimension of
    each output row (d_in must be a multiple of M).
    """
    A = np.ascontiguousarray(A, dtype=float)    # C order: the reshape / ravel below must be views
    if A.ndim != 2 or A.size == 0:
        raise ValueError(f"A must be a non-empty 2-D array, got shape {A.shape}")
    kind, p = parse_pattern(pattern)
    out = np.zeros(A.shape)
    if kind == "nm":
        n, m = p
        if A.shape[1] % m:
            raise ValueError(f"pattern {n}:{m} needs d_in ({A.shape[1]}) to be a multiple of {m}")
        g = A.reshape(-1, m)
        keep = np.argsort(-np.abs(g), axis=1, kind="stable")[:, :n]
        o = out.reshape(-1, m)
        np.put_along_axis(o, keep, np.take_along_axis(g, keep, 1), 1)
        return out
    k = n_kept(A.shape, pattern)
    flat = np.abs(A).ravel()
    keep = np.argpartition(-flat, k - 1)[:k] if k < flat.size else np.arange(flat.size)
    out.ravel()[keep] = A.ravel()[keep]
    return out


# --------------------------------------------------------------------------- calibration statistics


def damped_hessian(X: np.ndarray, lambda_diag: float = 0.005, lambda_mean: float = 0.005) -> np.ndarray:
    """H = X^T X / n + lambda_diag diag(X^T X / n) + lambda_mean mean(diag) I.

    Columns of X that are identically zero get a unit diagonal first (the authors' "dead" inputs),
    so H is positive definite for any damping > 0.
    """
    X = check_matrix(X, "X")
    lambda_diag = check_positive(lambda_diag, "lambda_diag", allow_zero=True)
    lambda_mean = check_positive(lambda_mean, "lambda_mean", allow_zero=True)
    H = X.T @ X / X.shape[0]
    d = np.diag(H).copy()
    dead = d == 0
    d[dead] = 1.0
    H[dead, dead] = 1.0
    H[np.diag_indices_from(H)] += lambda_diag * d + lambda_mean * d.mean()
    return H


def _check_problem(W, H) -> tuple[np.ndarray, np.ndarray]:
    W = check_matrix(W, "W")
    H = check_matrix(H, "H", shape=(W.shape[1], W.shape[1]))
    if not np.allclose(H, H.T, rtol=1e-10, atol=1e-12 * np.abs(H).max()):
        raise ValueError("H must be symmetric")
    if np.any(np.diag(H) <= 0):
        raise ValueError("H must have a positive diagonal (damp it: damped_hessian)")
    return W, H


def relative_error(W: np.ndarray, S: np.ndarray, L: np.ndarray, H: np.ndarray) -> float:
    """tr(E H E^T) / tr(W H W^T) with E = W - S - L: the layer's output error relative to its
    output energy on the calibration data."""
    E = np.asarray(W) - np.asarray(S) - np.asarray(L)
    W = np.asarray(W)
    return float(np.sum((E @ H) * E) / np.sum((W @ H) * W))


# --------------------------------------------------------------------------- the low-rank step


class _Metric:
    """H = V Sigma V^T cached once: the rank-regression step needs H^{1/2} and H^{-1/2}."""

    def __init__(self, H: np.ndarray):
        sig, V = np.linalg.eigh(H)
        if sig.min() <= 0:
            raise ValueError("H must be positive definite (damp it: damped_hessian)")
        self.half = V * np.sqrt(sig)             # H^{1/2} = V Sigma^{1/2}
        self.inv_half = (V / np.sqrt(sig)).T     # Sigma^{-1/2} V^T

    def rank_regression(self, R: np.ndarray, rank: int) -> tuple[np.ndarray, np.ndarray]:
        # [M]_r for M = R H^{1/2} from the top-r eigenvectors of the smaller Gram matrix: exact, and
        # several times cheaper than a full SVD when r is small (the authors use a randomized SVD).
        M = R @ self.half
        r = min(rank, *M.shape)
        if r == 0:
            return np.zeros((M.shape[0], 0)), np.zeros((0, M.shape[1]))
        if M.shape[1] <= M.shape[0]:
            _, V = scipy.linalg.eigh(M.T @ M, subset_by_index=[M.shape[1] - r, M.shape[1] - 1])
            return M @ V, V.T @ self.inv_half
        _, U = scipy.linalg.eigh(M @ M.T, subset_by_index=[M.shape[0] - r, M.shape[0] - 1])
        return U, (U.T @ M) @ self.inv_half


def rank_regression(R: np.ndarray, H: np.ndarray, rank: int) -> tuple[np.ndarray, np.ndarray]:
    """argmin_{rank L <= r} tr((R - L) H (R - L)^T) in closed form (reduced-rank regression, the
    paper's low-rank step): L = [R H^{1/2}]_r H^{-1/2} with H^{1/2} = V Sigma^{1/2}.

    Returns LoRA-style factors (B, A) of shapes (d_out, r), (r, d_in) with L = B @ A. An exact SVD
    (the authors use a randomized one at LLM scale).
    """
    R, H = _check_problem(R, H)
    rank = check_int(rank, "rank", minimum=0)
    return _Metric(H).rank_regression(R, rank)


# --------------------------------------------------------------------------- results


@dataclass
class Decomposition:
    """W ~ S + B A: the sparse part, the low-rank factors, and the run's record."""

    S: np.ndarray
    B: np.ndarray
    A: np.ndarray
    method: str
    nit: int = 0
    history: dict = field(default_factory=dict)

    @property
    def L(self) -> np.ndarray:
        return self.B @ self.A

    def error(self, W: np.ndarray, H: np.ndarray) -> float:
        return relative_error(W, self.S, self.L, H)


def _prepare(W, H, pattern, rank):
    W, H = _check_problem(W, H)
    parse_pattern(pattern)
    rank = check_int(rank, "rank", minimum=0)
    if rank > min(W.shape):
        raise ValueError(f"rank must be at most min(d_out, d_in) = {min(W.shape)}, got {rank}")
    return W, H, rank


# --------------------------------------------------------------------------- baselines


def wanda(W: np.ndarray, H: np.ndarray, pattern) -> np.ndarray:
    """Wanda's pruning: keep the weights of largest score |W_ij| sqrt(H_jj) (|W_ij| ||X_:j||):
    the projection in the column-scaled space, S = P_S(W D) D^{-1}."""
    W, H, _ = _prepare(W, H, pattern, 0)
    d = np.sqrt(np.diag(H))
    return project(W * d, pattern) / d


def refit_rows(W: np.ndarray, S: np.ndarray, H: np.ndarray) -> np.ndarray:
    """Each row of S re-solved by least squares on its own support: s_M = H_MM^{-1} H_M: w
    (the cheap stand-in for SparseGPT / ALPS's weight update used by :func:`hassle_free`)."""
    out = np.zeros_like(S)
    counts = np.count_nonzero(S, axis=1)
    WH = W @ H                                       # H_M: w = (W H)[row, M] since H is symmetric
    for c in np.unique(counts[counts > 0]):          # rows with equal support sizes: one batched solve
        rows = np.flatnonzero(counts == c)
        idx = np.nonzero(S[rows])[1].reshape(len(rows), c)
        rhs = np.take_along_axis(WH[rows], idx, axis=1)
        out[rows[:, None], idx] = np.linalg.solve(H[idx[:, :, None], idx[:, None, :]], rhs[..., None])[..., 0]
    return out


def eora(W: np.ndarray, H: np.ndarray, pattern, rank: int, refit: bool = False) -> Decomposition:
    """EoRA-style: prune once (Wanda support, optionally refit row by row), then compensate the
    error with the rank-regression step, L = rank-reg(W - S)."""
    W, H, rank = _prepare(W, H, pattern, rank)
    S = wanda(W, H, pattern)
    if refit:
        S = refit_rows(W, S, H)
    B, A = _Metric(H).rank_regression(W - S, rank)
    return Decomposition(S, B, A, "EoRA", 1)


def hassle_free(W: np.ndarray, H: np.ndarray, pattern, rank: int, rounds: int = 20) -> Decomposition:
    """HASSLE-free-style alternation: prune W - L (Wanda support on the scaled residual, then a
    row-wise least-squares refit on that support), then L = rank-reg(W - S); ``rounds`` times.
    Our stand-in uses this refit where the authors' code calls SparseGPT or ALPS."""
    W, H, rank = _prepare(W, H, pattern, rank)
    rounds = check_int(rounds, "rounds", minimum=1)
    metric = _Metric(H)
    B, A = np.zeros((W.shape[0], rank)), np.zeros((rank, W.shape[1]))
    errs = []
    for _ in range(rounds if rank else 1):       # at rank 0 every round repeats the first
        R = W - B @ A
        S = refit_rows(R, wanda(R, H, pattern), H)
        B, A = metric.rank_regression(W - S, rank)
        errs.append(relative_error(W, S, B @ A, H))
    return Decomposition(S, B, A, "HASSLE-free", len(errs), {"error": errs})


def oats(W: np.ndarray, H: np.ndarray, pattern, rank: int, iters: int = 80) -> Decomposition:
    """OATS: in the scaled space W D alternate L~ = SVD_r(W D - S~) and S~ = P_S(W D - L~) (the
    authors' repository uses a row-wise top-k for the unstructured pattern; we use the same
    projection as every other method), then unscale."""
    W, H, rank = _prepare(W, H, pattern, rank)
    iters = check_int(iters, "iters", minimum=1)
    d = np.sqrt(np.diag(H))
    Wt = W * d
    S = np.zeros_like(W)
    for _ in range(iters if rank else 1):        # at rank 0 every iteration repeats the first
        U, s, Vt = np.linalg.svd(Wt - S, full_matrices=False)
        B, A = U[:, :rank] * s[:rank], Vt[:rank]
        S = project(Wt - B @ A, pattern)
    return Decomposition(S / d, B, A / d, "OATS", iters if rank else 1)


# --------------------------------------------------------------------------- 3BASiL


def threebasil(W: np.ndarray, H: np.ndarray, pattern, rank: int, *, rho: float = 0.1, maxiter: int = 2000,
               update_every: int = 10, switch_iter: int = 100, final_refit: bool = False) -> Decomposition:
    """3BASiL: the three-block ADMM of the paper (Algorithm 1) for min tr(E H E^T), E = W - S - L.

    In the column-scaled space (D = diag(sqrt H_jj), H~ = D^{-1} H D^{-1}, Z = W D) it iterates

    1. Z     <- ((W - L) D H~ - Pi + rho Theta) (H~ + rho I)^{-1}   (ridge step, cached eigh of H~)
    2. Theta <- P_S(Z + Pi / rho)                                  (projection on the sparsity set)
    3. Pi    <- Pi + rho (Z - Theta)                               (dual step)
    4. L     <- rank-reg(W - Z D^{-1})                             (low rank, from the *dense* Z)

    and every ``update_every`` iterations adapts rho to the number delta of support changes of
    Theta (as a fraction of k): x1.1 above 10%, x1.05 above 0.5%, x1.02 for any change once rho has
    grown (before that: rho / 5 and a restart from the start point), stop when the support no
    longer changes after rho has grown (else rho / 5); rho <= 1e6; stop once past ``switch_iter``
    iterations with delta / k < 3e-4. The output is S = P_S(Z) D^{-1} and the last L (with
    ``final_refit``, L re-solved given S: our optional addition, off by default).
    """
    W, H, rank = _prepare(W, H, pattern, rank)
    rho = check_positive(rho, "rho")
    maxiter = check_int(maxiter, "maxiter", minimum=1)
    update_every = check_int(update_every, "update_every", minimum=1)
    switch_iter = check_int(switch_iter, "switch_iter", minimum=0)
    k = n_kept(W.shape, pattern)
    d = np.sqrt(np.diag(H))
    Ht = H / np.outer(d, d)
    lam, Q = np.linalg.eigh(Ht)
    metric = _Metric(H)
    Z0 = W * d
    theta0 = project(Z0, pattern)
    Z, theta, Pi = Z0.copy(), theta0.copy(), np.zeros_like(Z0)
    B, A = np.zeros((W.shape[0], rank)), np.zeros((rank, W.shape[1]))
    support = theta != 0
    grown = False
    hist = {"iteration": [], "rho": [], "support_change": [], "error": []}
    it = 0
    for it in range(1, maxiter + 1):
        rhs = ((W - B @ A) * d) @ Ht - Pi + rho * theta
        Z = ((rhs @ Q) / (lam + rho)) @ Q.T
        theta = project(Z + Pi / rho, pattern)
        Pi = Pi + rho * (Z - theta)
        B, A = metric.rank_regression(W - Z / d, rank)
        if it % update_every:
            continue
        new = theta != 0
        change = int(np.count_nonzero(new != support))
        frac = change / k
        stop = False
        if frac > 0.1:
            rho, grown = rho * 1.1, True
        elif frac > 0.005:
            rho, grown = rho * 1.05, True
        elif change > 0:
            if grown:
                rho *= 1.02
            else:                                   # rho was too large from the start: restart
                rho /= 5
                Z, theta, Pi = Z0.copy(), theta0.copy(), np.zeros_like(Z0)
        elif grown:
            stop = True
        else:
            rho /= 5
        support = new
        rho = min(rho, 1e6)
        hist["iteration"].append(it)
        hist["rho"].append(rho)
        hist["support_change"].append(frac)
        hist["error"].append(relative_error(W, project(Z, pattern) / d, B @ A, H))
        if stop or (it >= switch_iter and frac < 3e-4):
            break
    S = project(Z, pattern) / d
    if final_refit:
        B, A = metric.rank_regression(W - S, rank)
    return Decomposition(S, B, A, "3BASiL", it, hist)


METHODS = {"3BASiL": threebasil, "OATS": oats, "HASSLE-free": hassle_free, "EoRA": eora}


# --------------------------------------------------------------------------- transformer matching


def transformer_matching(block, inputs, targets, masks: dict, *, lr: float = 2e-5, epochs: int = 20,
                         chunk: int = 8, final_lr_ratio: float = 0.2, seed: int = 0) -> list[float]:
    """Transformer matching (TM): fine-tune the sparse weights (on their fixed support) and the
    low-rank factors of one transformer block so that its output on ``inputs`` (the outputs of the
    already compressed blocks) matches ``targets`` (the dense block's output on the same inputs).

    ``block`` is a torch module whose compressed layers are :class:`SparseLowRankLinear`;
    ``masks`` maps each such layer to its support (gradients and Adam updates are masked, so pruned
    weights stay exactly zero). Adam, cosine decay from ``lr`` to ``final_lr_ratio * lr``, chunks of
    ``chunk`` sequences in a seeded random order; the first epoch only measures the loss (as in the
    authors' code). Returns the mean loss of every epoch.
    """
    lr = check_positive(lr, "lr")
    epochs = check_int(epochs, "epochs", minimum=1)
    chunk = check_int(chunk, "chunk", minimum=1)
    check_in_range(final_lr_ratio, "final_lr_ratio", 0.0, 1.0, closed=(True, True))
    if inputs.shape != targets.shape:
        raise ValueError(f"inputs and targets must have the same shape, got {tuple(inputs.shape)} "
                         f"and {tuple(targets.shape)}")
    params = [p for m in masks for p in (m.weight, m.lora_A, m.lora_B)]
    for p in block.parameters():
        p.requires_grad_(False)
    for p in params:
        p.requires_grad_(True)
    opt = torch.optim.Adam(params, lr=lr)
    steps = (epochs - 1) * math.ceil(len(inputs) / chunk)
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: final_lr_ratio + (1 - final_lr_ratio) * 0.5 * (1 + math.cos(math.pi * min(1.0, s / max(steps, 1)))))
    gen = torch.Generator().manual_seed(seed)
    losses = []
    for epoch in range(epochs):
        order = torch.randperm(len(inputs), generator=gen)
        total = 0.0
        for i in range(0, len(inputs), chunk):
            idx = order[i:i + chunk]
            loss = ((block(inputs[idx]) - targets[idx]) ** 2).sum() / targets[idx].numel()
            total += loss.item() * len(idx)
            if epoch == 0:
                continue
            opt.zero_grad(set_to_none=True)
            loss.backward()
            for m, mask in masks.items():
                m.weight.grad.mul_(mask)
            opt.step()
            sched.step()
            with torch.no_grad():                  # Adam's moments can move a masked entry: re-zero
                for m, mask in masks.items():
                    m.weight.mul_(mask)
        losses.append(total / len(inputs))
    for p in params:
        p.requires_grad_(False)
    return losses


class SparseLowRankLinear(nn.Module):
    """A bias-free compressed linear layer, y = x S^T + (x A^T) B^T, with the sparse weight ``S``
    (d_out, d_in) and the LoRA factors ``B`` (d_out, r), ``A`` (r, d_in) as parameters."""

    def __init__(self, S: np.ndarray, B: np.ndarray, A: np.ndarray):
        super().__init__()
        f = torch.get_default_dtype()
        self.weight = nn.Parameter(torch.as_tensor(np.asarray(S), dtype=f).clone(), requires_grad=False)
        self.lora_B = nn.Parameter(torch.as_tensor(np.asarray(B), dtype=f).clone(), requires_grad=False)
        self.lora_A = nn.Parameter(torch.as_tensor(np.asarray(A), dtype=f).clone(), requires_grad=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x @ self.weight.T + (x @ self.lora_A.T) @ self.lora_B.T
