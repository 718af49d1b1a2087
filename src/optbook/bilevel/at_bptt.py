"""Chapter 25: dataset distillation by unrolled inner training, with full, truncated, randomly
truncated (RaT-BPTT) and automatically truncated (AT-BPTT) backpropagation through time.

Li et al. (NeurIPS 2025), *Beyond Random: Automatic Inner-loop Optimization in Dataset
Distillation*. The window rules follow the authors' public code (``framework/distill_higher.py``);
the low-rank Hessian backward pass is our reconstruction (the public code has none).

The inner learner is a flat parameter vector ``theta`` and a loss ``inner_loss(theta, X)`` of the
learnable synthetic inputs ``X``; the outer loss ``outer_loss(theta)`` is the real-data loss. Inner
steps are plain gradient descent, ``theta <- theta - lr * grad inner_loss``.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import torch

from ..core import as_rng, check_choice, check_int, check_positive

METHODS = ("BPTT", "T-BPTT", "RaT-BPTT", "AT-BPTT")
Loss = Callable[..., torch.Tensor]


# --------------------------------------------------------------------------- the learner

def mlp_size(features: int, hidden: int, classes: int) -> int:
    """Number of parameters of the ``features -> hidden -> classes`` MLP (``hidden = 0``: linear)."""
    if hidden == 0:
        return features * classes + classes
    return features * hidden + hidden + hidden * classes + classes


def mlp_forward(theta: torch.Tensor, X: torch.Tensor, hidden: int, classes: int) -> torch.Tensor:
    """Logits of the MLP whose weights are packed in the flat vector ``theta`` (ReLU hidden layer;
    ``hidden = 0`` gives a linear softmax model). A leading batch axis on ``theta`` (R, p) and ``X``
    (R, n, f) runs R independent networks at once."""
    f = X.shape[-1]
    if hidden == 0:
        W, b = theta[..., : f * classes].unflatten(-1, (f, classes)), theta[..., f * classes:]
        return X @ W + b[..., None, :]
    i = f * hidden
    W1 = theta[..., :i].unflatten(-1, (f, hidden))
    b1 = theta[..., i: i + hidden]
    i += hidden
    W2 = theta[..., i: i + hidden * classes].unflatten(-1, (hidden, classes))
    b2 = theta[..., i + hidden * classes:]
    return torch.relu(X @ W1 + b1[..., None, :]) @ W2 + b2[..., None, :]


def mlp_init(features: int, hidden: int, classes: int, generator: torch.Generator,
             dtype=torch.float32) -> torch.Tensor:
    """A fresh flat parameter vector (uniform fan-in scaling, zero biases), drawn from ``generator``."""
    parts = []
    dims = [(features, classes)] if hidden == 0 else [(features, hidden), (hidden, classes)]
    for fan_in, fan_out in dims:
        bound = 1.0 / np.sqrt(fan_in)
        parts.append((2 * torch.rand(fan_in * fan_out, generator=generator, dtype=dtype) - 1) * bound)
        parts.append(torch.zeros(fan_out, dtype=dtype))
    return torch.cat(parts)


# --------------------------------------------------------------------------- inner run

def inner_run(inner_loss: Loss, theta0: torch.Tensor, X: torch.Tensor, steps: int, lr: float):
    """``steps`` gradient steps without a graph. Returns the final ``theta`` and the gradient norms
    ``g_t = ||grad inner_loss(theta_t)||`` for ``t = 0..steps-1`` (the probe of AT-BPTT)."""
    steps = check_int(steps, "steps", minimum=0)
    lr = check_positive(lr, "lr")
    theta = theta0.detach()
    X = X.detach()
    norms = np.empty(steps)
    for t in range(steps):
        th = theta.requires_grad_(True)
        with torch.enable_grad():
            g, = torch.autograd.grad(inner_loss(th, X), th)
        norms[t] = float(g.norm())
        theta = (th - lr * g).detach()
    return theta, norms


def _check_window(start: int, width: int) -> tuple[int, int]:
    return check_int(start, "start", minimum=0), check_int(width, "width", minimum=1)


def windowed_meta_gradient(inner_loss: Loss, outer_loss: Loss, theta0: torch.Tensor, X: torch.Tensor,
                           start: int, width: int, lr: float) -> tuple[float, torch.Tensor]:
    """The truncated meta-gradient: run ``start`` steps without a graph, ``width`` differentiable
    steps, evaluate ``outer_loss`` at ``theta_{start+width}`` and backpropagate to ``X`` treating
    ``theta_start`` as a constant. ``start=0, width=T`` is full BPTT. Returns (meta-loss, gradient)."""
    start, width = _check_window(start, width)
    theta, _ = inner_run(inner_loss, theta0, X, start, lr)
    Xd = X.detach().requires_grad_(True)
    theta = theta.requires_grad_(True)
    for _ in range(width):
        g, = torch.autograd.grad(inner_loss(theta, Xd), theta, create_graph=True)
        theta = theta - lr * g
    loss = outer_loss(theta)
    grad, = torch.autograd.grad(loss, Xd)
    return float(loss.detach()), grad


# --------------------------------------------------------------------------- low-rank Hessian

def lanczos(hvp: Callable[[torch.Tensor], torch.Tensor], v0: torch.Tensor, rank: int,
            tol: float = 1e-10) -> tuple[torch.Tensor, torch.Tensor]:
    """``rank`` steps of Lanczos with full re-orthogonalisation from ``v0``: the Ritz pairs
    ``(eigenvalues, U)`` with ``H ~ U diag(eigenvalues) U^T`` on the Krylov subspace. The subspaces
    are nested in ``rank``, so the Frobenius error of the compression never grows with ``rank``;
    at ``rank = dim`` it is exact (on an invariant subspace it restarts from a new direction)."""
    rank = check_int(rank, "rank", minimum=1)
    if v0.ndim != 1 or v0.numel() == 0 or not torch.isfinite(v0).all() or float(v0.norm()) == 0:
        raise ValueError("v0 must be a non-zero finite vector")
    rank = min(rank, v0.numel())
    Q = [v0 / v0.norm()]
    alphas, betas = [], []
    for j in range(rank):
        w = hvp(Q[j])
        alphas.append(torch.dot(w, Q[j]))
        if j == rank - 1:
            break
        Qm = torch.stack(Q)
        w = w - Qm.T @ (Qm @ w)
        w = w - Qm.T @ (Qm @ w)  # twice is enough
        beta = w.norm()
        if float(beta) <= tol * max(1.0, float(torch.stack(alphas).abs().max())):
            # invariant subspace (e.g. a repeated eigenvalue): restart from the coordinate vector
            # farthest from the subspace, with a zero coupling, so the subspaces stay nested
            E = torch.eye(v0.numel(), dtype=v0.dtype)
            R = E - Qm.T @ (Qm @ E)
            w = R[:, int(R.norm(dim=0).argmax())]
            w = w - Qm.T @ (Qm @ w)
            beta, w = torch.zeros((), dtype=v0.dtype), w / w.norm()
            betas.append(beta)
            Q.append(w)
            continue
        betas.append(beta)
        Q.append(w / beta)
    k = len(alphas)
    Tm = torch.diag(torch.stack(alphas))
    if k > 1:
        b = torch.stack(betas[: k - 1])
        Tm = Tm + torch.diag(b, 1) + torch.diag(b, -1)
    evals, V = torch.linalg.eigh(Tm)
    return evals, torch.stack(Q[:k]).T @ V


def adjoint_meta_gradient(inner_loss: Loss, outer_loss: Loss, theta0: torch.Tensor, X: torch.Tensor,
                          start: int, width: int, lr: float, rank: int | None = None,
                          generator: torch.Generator | None = None) -> tuple[float, torch.Tensor, dict]:
    """The windowed meta-gradient by the explicit adjoint recursion

        lambda_t = (I - lr H_t) lambda_{t+1},   grad_X -= lr (d^2 L / dX dtheta)(theta_t)^T lambda_{t+1},

    storing only the window's iterates (no autograd graph across steps). ``rank=None`` uses exact
    Hessian-vector products at every step (equal to :func:`windowed_meta_gradient`); an integer
    replaces every ``H_t`` by one rank-``rank`` Lanczos approximation of ``H`` at ``theta_start``
    (our reconstruction of the paper's low-rank Hessian). Returns (meta-loss, gradient, counts)."""
    start, width = _check_window(start, width)
    if rank is not None:
        rank = check_int(rank, "rank", minimum=1)
    theta, _ = inner_run(inner_loss, theta0, X, start, lr)
    Xd = X.detach().requires_grad_(True)
    thetas = [theta]
    for _ in range(width):  # forward, keeping only the iterates
        th = thetas[-1].requires_grad_(True)
        with torch.enable_grad():
            g, = torch.autograd.grad(inner_loss(th, X.detach()), th)
        thetas.append((th - lr * g).detach())
    thetas = [t.detach() for t in thetas]
    end = thetas[-1].requires_grad_(True)
    loss = outer_loss(end)
    lam, = torch.autograd.grad(loss, end)
    hvps = 0
    if rank is not None:
        ts = thetas[0].clone().requires_grad_(True)
        gs, = torch.autograd.grad(inner_loss(ts, X.detach()), ts, create_graph=True)

        def hvp(v):
            return torch.autograd.grad(gs, ts, v, retain_graph=True)[0]

        v0 = torch.randn(ts.numel(), generator=generator, dtype=ts.dtype)
        evals, U = lanczos(hvp, v0, rank)
        hvps += evals.numel()
    grad_X = torch.zeros_like(X)
    for t in reversed(range(width)):
        th = thetas[t].clone().requires_grad_(True)
        g, = torch.autograd.grad(inner_loss(th, Xd), th, create_graph=True)
        if rank is None:
            gx, hl = torch.autograd.grad(g, (Xd, th), lam)
            hvps += 1
        else:
            gx, = torch.autograd.grad(g, Xd, lam)
            hl = U @ (evals * (U.T @ lam))
        grad_X = grad_X - lr * gx
        lam = lam - lr * hl
    return float(loss.detach()), grad_X, {"hvps": hvps, "stored_vectors": width + 1 + (0 if rank is None else rank)}


# --------------------------------------------------------------------------- window rules

def softmax_probs(norms, temperature: float = 1.0) -> np.ndarray:
    """``softmax(g / temperature)`` of the gradient-norm curve (stage 1's position distribution)."""
    g = np.asarray(norms, dtype=float)
    if g.ndim != 1 or g.size == 0 or not np.all(np.isfinite(g)):
        raise ValueError("norms must be a non-empty finite 1-D array")
    temperature = check_positive(temperature, "temperature")
    z = g / temperature
    p = np.exp(z - z.max())
    return p / p.sum()


def _widths(norms: np.ndarray, base: int, offset: int) -> np.ndarray:
    """Stage 1's width for every candidate start: ``floor(W0 - d + 2 d r / T)`` with ``r`` the rank
    of ``|g_t - g_{t-1}|`` (``Delta_0 = 0``) among all of them."""
    T = norms.size
    delta = np.abs(np.diff(norms, prepend=norms[0]))
    rank = np.empty(T, dtype=int)
    rank[np.argsort(delta, kind="stable")] = np.arange(T)
    return np.floor(base - offset + 2 * offset * rank / T).astype(int)


def _check_rule(norms, base: int, offset: int, stage: int) -> np.ndarray:
    g = np.asarray(norms, dtype=float)
    if g.ndim != 1 or g.size == 0 or not np.all(np.isfinite(g)):
        raise ValueError("norms must be a non-empty finite 1-D array")
    base = check_int(base, "base_window", minimum=1)
    offset = check_int(offset, "offset", minimum=0)
    if offset >= base:
        raise ValueError(f"offset must be below base_window ({base}), got {offset}")
    if base + offset > g.size:
        raise ValueError(f"base_window + offset ({base + offset}) must not exceed the unroll T = {g.size}")
    if stage not in (1, 2, 3):
        raise ValueError(f"stage must be 1, 2 or 3, got {stage!r}")
    return g


def window_distribution(stage: int, norms, base_window: int, offset: int,
                        temperature: float = 1.0) -> np.ndarray:
    """The exact distribution of AT-BPTT's window ``(start, width)`` in ``stage`` as a matrix
    ``P[start, width]`` of shape ``(T, T + 1)``:

    - stage 1: ``t ~ softmax(g / tau)``, width from the rank of ``|g_t - g_{t-1}|``, ``start = min(t, T - W)``;
    - stage 2: width ``W0 + d``, start uniform on ``0..T-W`` (RaT-BPTT with a wider window);
    - stage 3: width ``W0 - d``, ``u ~ softmax(g / tau)``, start ``clip(T - u - W, 0, T - W)`` (mirrored).
    """
    g = _check_rule(norms, base_window, offset, stage)
    T = g.size
    P = np.zeros((T, T + 1))
    if stage == 2:
        W = base_window + offset
        P[: T - W + 1, W] = 1.0 / (T - W + 1)
        return P
    p = softmax_probs(g, temperature)
    if stage == 1:
        widths = _widths(g, base_window, offset)
        for t in range(T):
            P[min(t, T - widths[t]), widths[t]] += p[t]
    else:
        W = base_window - offset
        for u in range(T):
            P[int(np.clip(T - u - W, 0, T - W)), W] += p[u]
    return P


def sample_window(method: str, rng, T: int, base_window: int, *, stage: int = 1, norms=None,
                  offset: int = 0, temperature: float = 1.0) -> tuple[int, int]:
    """One window ``(start, width)`` for ``method`` with unroll ``T``: BPTT ``(0, T)``, T-BPTT
    ``(T - W0, W0)``, RaT-BPTT uniform start and width ``W0``, AT-BPTT by
    :func:`window_distribution` (``norms`` is the probe's gradient-norm curve, length ``T``)."""
    method = check_choice(method, "method", METHODS)
    T = check_int(T, "T", minimum=1)
    base_window = check_int(base_window, "base_window", minimum=1)
    if base_window > T:
        raise ValueError(f"base_window must not exceed T = {T}, got {base_window}")
    rng = as_rng(rng)
    if method == "BPTT":
        return 0, T
    if method == "T-BPTT":
        return T - base_window, base_window
    if method == "RaT-BPTT":
        return int(rng.integers(0, T - base_window + 1)), base_window
    if stage == 2:
        norms = np.zeros(T)  # stage 2 ignores the probe
    if norms is None or len(norms) != T:
        raise ValueError(f"norms must be the probe's {T} gradient norms for AT-BPTT")
    P = window_distribution(stage, norms, base_window, offset, temperature).ravel()
    k = int(rng.choice(P.size, p=P / P.sum()))
    return k // (T + 1), k % (T + 1)


def stage_of(iteration: int, iterations: int, switches: tuple[float, float] = (0.3, 0.7)) -> int:
    """The distillation stage (1, 2, 3) at an outer iteration, switched at fixed fractions of the
    run (the code switches on accuracy plateaus; fixed fractions make the run deterministic)."""
    a, b = switches
    if not 0 < a < b < 1:
        raise ValueError(f"switches must satisfy 0 < a < b < 1, got {switches}")
    frac = iteration / max(iterations, 1)
    return 1 if frac < a else (2 if frac < b else 3)


# --------------------------------------------------------------------------- distillation

@dataclass
class Task:
    """A classification task for distillation: real train/test tensors and the learner's shape."""

    X_train: torch.Tensor
    y_train: torch.Tensor
    X_test: torch.Tensor
    y_test: torch.Tensor
    classes: int
    hidden: int = 32

    @property
    def features(self) -> int:
        return self.X_train.shape[1]

    def logits(self, theta, X):
        return mlp_forward(theta, X, self.hidden, self.classes)

    def init(self, generator):
        return mlp_init(self.features, self.hidden, self.classes, generator, self.X_train.dtype)

    def losses(self, theta, X, y):
        """Per-network mean cross-entropy for batched ``theta`` (R, p), ``X`` (R, n, f), ``y`` (R, n)."""
        z = self.logits(theta, X)
        return torch.nn.functional.cross_entropy(z.flatten(0, 1), y.flatten(), reduction="none").view(y.shape).mean(1)


def real_subset(task: Task, ipc: int, seed: int) -> tuple[torch.Tensor, torch.Tensor]:
    """``ipc`` random real training points per class: the distillation's start and its floor."""
    ipc = check_int(ipc, "ipc", minimum=1)
    rng = np.random.default_rng([seed, 7])
    y = task.y_train.numpy()
    idx = []
    for c in range(task.classes):
        pool = np.flatnonzero(y == c)
        if pool.size < ipc:
            raise ValueError(f"class {c} has fewer than ipc = {ipc} training points")
        idx.extend(rng.choice(pool, ipc, replace=False))
    idx = np.array(idx)
    return task.X_train[idx].clone(), task.y_train[idx].clone()


def batched_meta_gradient(task: Task, theta0: torch.Tensor, X: torch.Tensor, y: torch.Tensor,
                          Xb: torch.Tensor, yb: torch.Tensor, starts, widths, lr: float):
    """:func:`windowed_meta_gradient` for R independent runs at once, each with its own window:
    run r is detached at ``starts[r]`` and frozen after ``starts[r] + widths[r]`` steps. Returns the
    per-run meta-losses (R,) and the gradients with respect to ``X`` (R, n, f)."""
    starts, widths = np.asarray(starts, dtype=int), np.asarray(widths, dtype=int)
    if starts.shape != (theta0.shape[0],) or widths.shape != starts.shape:
        raise ValueError("starts and widths must hold one window per run")
    if np.any(starts < 0) or np.any(widths < 1):
        raise ValueError("starts must be >= 0 and widths >= 1")
    ends = starts + widths
    Xd = X.detach().requires_grad_(True)
    theta = theta0.detach()
    first = int(starts.min())
    for _ in range(first):  # every run is still before its window: no graph needed
        th = theta.requires_grad_(True)
        g, = torch.autograd.grad(task.losses(th, X.detach(), y).sum(), th)
        theta = (th - lr * g).detach()
    for t in range(first, int(ends.max())):
        cut = torch.as_tensor(starts == t)[:, None]
        theta = torch.where(cut, theta.detach(), theta)
        if not theta.requires_grad:
            theta = theta.requires_grad_(True)
        live = torch.as_tensor(t < ends, dtype=theta.dtype)[:, None]
        g, = torch.autograd.grad(task.losses(theta, Xd, y).sum(), theta, create_graph=True)
        theta = theta - lr * live * g
    loss = task.losses(theta, Xb, yb)
    grad, = torch.autograd.grad(loss.sum(), Xd)
    return loss.detach(), grad


@dataclass
class DistillResult:
    """R distillation runs: the synthetic sets, their snapshots, the windows used and the counts."""

    X: torch.Tensor
    y: torch.Tensor
    snapshots: list = field(default_factory=list)
    windows: list = field(default_factory=list)
    stages: list = field(default_factory=list)
    meta_losses: list = field(default_factory=list)
    steps_forward: np.ndarray | None = None
    steps_backward: np.ndarray | None = None
    max_stored: np.ndarray | None = None


def distill(task: Task, method: str, *, seeds, outer_lrs, iterations: int = 100, T: int = 30,
            base_window: int = 6, offset: int = 2, inner_lr: float = 0.1, ipc: int = 1, real_batch: int = 256,
            temperature: float = 1.0, switches=(0.3, 0.7), snapshot_every: int = 0) -> DistillResult:
    """Distil ``ipc`` points per class with ``method`` (one of :data:`METHODS`) for every pair
    (seed, outer learning rate), all runs batched. Each outer iteration draws for every run a fresh
    network, a real batch and a window, computes the windowed meta-gradient and takes an Adam step
    on the synthetic inputs (labels fixed). Run r = i * len(outer_lrs) + j has seed i, rate j."""
    method = check_choice(method, "method", METHODS)
    iterations = check_int(iterations, "iterations", minimum=1)
    T = check_int(T, "T", minimum=1)
    inner_lr = check_positive(inner_lr, "inner_lr")
    real_batch = check_int(real_batch, "real_batch", minimum=1)
    snapshot_every = check_int(snapshot_every, "snapshot_every", minimum=0)
    seeds = [check_int(s, "seeds", minimum=0) for s in seeds]
    lrs = [check_positive(v, "outer_lrs") for v in outer_lrs]
    if not seeds or not lrs:
        raise ValueError("seeds and outer_lrs must not be empty")
    if method == "AT-BPTT":
        _check_rule(np.zeros(T), base_window, offset, 1)
    elif not 1 <= base_window <= T:
        raise ValueError(f"base_window must be in 1..T = {T}, got {base_window}")
    runs = [(s, lr) for s in seeds for lr in lrs]
    R = len(runs)
    sets = [real_subset(task, ipc, s) for s, _ in runs]
    X = torch.stack([a for a, _ in sets])
    y = torch.stack([b for _, b in sets])
    lr_t = torch.tensor([lr for _, lr in runs], dtype=X.dtype)[:, None, None]
    m, v = torch.zeros_like(X), torch.zeros_like(X)
    rngs = [np.random.default_rng([s, 11]) for s, _ in runs]
    gens = [torch.Generator().manual_seed(s * 1_000_003 + 17) for s, _ in runs]
    n = task.X_train.shape[0]
    res = DistillResult(X=X, y=y, steps_forward=np.zeros(R, int), steps_backward=np.zeros(R, int),
                        max_stored=np.zeros(R, int))
    for it in range(iterations):
        if snapshot_every and it % snapshot_every == 0:
            res.snapshots.append(X.clone())
        theta0 = torch.stack([task.init(g) for g in gens])
        idx = torch.as_tensor(np.stack([r.choice(n, min(real_batch, n), replace=False) for r in rngs]))
        stage = stage_of(it, iterations, switches)
        norms = None
        if method == "AT-BPTT" and stage in (1, 3):
            norms = np.empty((R, T))  # the probe: a no-graph run of T steps
            theta = theta0.clone()
            for t in range(T):
                th = theta.requires_grad_(True)
                g, = torch.autograd.grad(task.losses(th, X, y).sum(), th)
                norms[:, t] = g.norm(dim=1).numpy()
                theta = (th - inner_lr * g).detach()
            res.steps_forward += T
        wins = [sample_window(method, rngs[r], T, base_window, stage=stage,
                              norms=None if norms is None else norms[r], offset=offset,
                              temperature=temperature) for r in range(R)]
        starts, widths = np.array(wins).T
        loss, grad = batched_meta_gradient(task, theta0, X, y, task.X_train[idx], task.y_train[idx],
                                           starts, widths, inner_lr)
        res.meta_losses.append(loss.numpy())
        res.steps_forward += starts + widths
        res.steps_backward += widths
        res.max_stored = np.maximum(res.max_stored, widths)
        # Adam (torch.optim.Adam's rule, defaults), one learning rate per run
        m.mul_(0.9).add_(grad, alpha=0.1)
        v.mul_(0.999).addcmul_(grad, grad, value=0.001)
        mh, vh = m / (1 - 0.9 ** (it + 1)), v / (1 - 0.999 ** (it + 1))
        X = X - lr_t * mh / (vh.sqrt() + 1e-8)
        res.windows.append(wins)
        res.stages.append(stage)
    if snapshot_every:
        res.snapshots.append(X.clone())
    res.X = X
    return res


def evaluate(task: Task, X: torch.Tensor, y: torch.Tensor, *, seed: int, T: int = 30, inner_lr: float = 0.1,
             models: int = 5) -> np.ndarray:
    """Test accuracy, per run, of ``models`` fresh networks (initialisations never seen while
    distilling) trained ``T`` steps on each synthetic set ``X`` (R, n, f), averaged over models."""
    models = check_int(models, "models", minimum=1)
    if X.ndim != 3 or not torch.isfinite(X).all():
        raise ValueError("X must be a finite (R, n, f) tensor")
    R = X.shape[0]
    gen = torch.Generator().manual_seed(10_000 + int(seed))
    theta = torch.stack([task.init(gen) for _ in range(models)]).repeat(R, 1)
    Xr, yr = X.repeat_interleave(models, 0), y.repeat_interleave(models, 0)
    for _ in range(T):
        th = theta.requires_grad_(True)
        g, = torch.autograd.grad(task.losses(th, Xr, yr).sum(), th)
        theta = (th - inner_lr * g).detach()
    with torch.no_grad():
        pred = task.logits(theta, task.X_test.expand(R * models, *task.X_test.shape)).argmax(-1)
        acc = (pred == task.y_test).float().mean(1)
    return acc.view(R, models).mean(1).numpy()
