"""SADL: sketched adaptive distributed learning (Chen, Li and Banerjee, NeurIPS 2025), with its
baselines, on the federated engine of :mod:`optbook.distributed.federated`.

One round: every client runs ``K`` local SGD steps from the common model ``x``, sends a linear,
unbiased random sketch ``R (x - y_c)`` of its model change (``b`` floats instead of ``d``), the
server averages the sketches (a linear sketch averages in sketch space), broadcasts the ``b``-float
average, and server and clients alike "desketch" it with ``R^T`` and take an AMSGrad step (the
paper's Algorithm 2, ``ADA_OPT``). ``R`` is fresh each round and shared through a common seed, so
the clients' replicas of ``x`` stay equal to the server's without the model ever being sent.

=================  ===================================================  =====================
method             server step on the (desketched) mean change          floats up per client
=================  ===================================================  =====================
``amsgrad``        AMSGrad on the exact mean change (``R = I``)         d
``sadl``           AMSGrad, first half of the sketch -> m, second -> v  b
``sadl-same``      AMSGrad, one sketch feeds both moments               b
``sketched-sgd``   ``x - kappa desk(mean sketch)``                      b
``fedavg``         ``x - kappa mean change`` (kappa = 1: FedAvg)        d
``topk-ef``        AMSGrad on the mean of top-k with error feedback     b (k values + k indices)
=================  ===================================================  =====================

Reconstructed (our reading of the paper): each half of a split sketch is its own sketch of
``b/2`` rows with its own normalisation (so each half is unbiased); the top-k baseline counts a
value and an index per kept coordinate; AMSGrad has no bias correction, as in Algorithm 2.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import torch
from scipy.linalg import hadamard

from ..core import Trace, check_choice, check_in_range, check_int, check_positive
from .fedada2 import LocalSGD
from .federated import DTYPE, FederatedProblem, FedResult, Ledger, local_training, sample_round

SKETCHES = ("gaussian", "srht", "countsketch", "identity")
METHODS = ("amsgrad", "sadl", "sadl-same", "sketched-sgd", "fedavg", "topk-ef")

# --------------------------------------------------------------------------- sketches


def fwht(x: torch.Tensor) -> torch.Tensor:
    """Unnormalised fast Walsh-Hadamard transform ``H_n x`` along the last axis (n a power of 2)."""
    n = x.shape[-1]
    if n < 1 or n & (n - 1):
        raise ValueError(f"x's last axis must have a power-of-2 length, got {n}")
    lead = x.shape[:-1]
    h = 1
    while h < n:
        y = x.reshape(*lead, n // (2 * h), 2, h)
        x = torch.stack((y[..., 0, :] + y[..., 1, :], y[..., 0, :] - y[..., 1, :]), dim=-2).reshape(*lead, n)
        h *= 2
    return x


@lru_cache(maxsize=8192)
def _draws(kind: str, n: int, b: int, seeds: tuple[int, ...]) -> tuple[torch.Tensor, torch.Tensor]:
    """The random numbers of an SRHT (n signs, then b of n rows without replacement) or a
    CountSketch (n buckets of b, then n signs), from ``default_rng(seeds)``. Cached (about 1 kB
    each): the runs of one seed (a tuning grid, both spectra) reuse the same round sketches."""
    rng = np.random.default_rng(seeds)
    if kind == "srht":
        signs = rng.choice([-1.0, 1.0], size=n)
        other = np.sort(rng.choice(n, size=b, replace=False))
    else:
        other = rng.integers(0, b, size=n)
        signs = rng.choice([-1.0, 1.0], size=n)
    return torch.from_numpy(signs.astype(np.int8)), torch.from_numpy(other)


@lru_cache(maxsize=4)
def _hadamard(n: int) -> torch.Tensor:
    return torch.from_numpy(hadamard(n).astype(float))


#: Padded sizes up to this use a cached dense Hadamard matrix (its selected rows times a vector:
#: O(b d), faster in Python than the O(d log d) butterfly at these sizes); larger ones use :func:`fwht`.
DENSE_HADAMARD = 2048


class Sketch:
    """A random linear map ``R`` in R^{b x d} with ``E[R^T R] = I`` (Property 1 of the paper).

    ``kind``: ``"gaussian"`` (entries N(0, 1/b)), ``"srht"`` (``sqrt(d'/b) S H D / sqrt(d')``:
    random signs ``D``, the +-1 Walsh-Hadamard matrix ``H`` of the padded size ``d'`` (a power of 2),
    ``b`` rows kept uniformly without replacement), ``"countsketch"`` (one bucket and one sign per
    coordinate) or ``"identity"`` (``R = I``, ``b = d``: no compression, for the reduction test).
    ``seed`` (an int or a tuple of ints, e.g. ``(seed, round, part)``) fixes ``R``: every client
    that builds the sketch from the same seed gets the same matrix.
    """

    def __init__(self, kind: str, d: int, b: int, seed: int | Sequence[int] = 0) -> None:
        self.kind = check_choice(kind, "kind", SKETCHES)
        self.d = check_int(d, "d", minimum=1)
        self.b = check_int(b, "b", minimum=1)
        if self.kind != "countsketch" and self.b > self.d:
            raise ValueError(f"b must be <= d = {self.d} for a {kind} sketch, got {b}")
        if self.kind == "identity" and self.b != self.d:
            raise ValueError(f"b must equal d = {self.d} for the identity sketch, got {b}")
        seeds = [seed] if isinstance(seed, (int, np.integer)) else list(seed)
        if not seeds or any(isinstance(s, bool) or not isinstance(s, (int, np.integer)) or s < 0 for s in seeds):
            raise ValueError(f"seed must be a non-negative int or a sequence of them, got {seed!r}")
        if self.kind == "gaussian":
            rng = np.random.default_rng(seeds)
            self.R = torch.from_numpy(rng.standard_normal((self.b, self.d)) / np.sqrt(self.b))
        elif self.kind == "srht":
            self.n = 1 << (self.d - 1).bit_length()
            if self.b > self.n:
                raise ValueError(f"b must be <= {self.n} for an srht sketch, got {b}")
            signs, self.rows = _draws("srht", self.n, self.b, tuple(int(s) for s in seeds))
            self.signs = signs.to(DTYPE)
            self.H = _hadamard(self.n).index_select(0, self.rows) if self.n <= DENSE_HADAMARD else None
        elif self.kind == "countsketch":
            signs, self.bucket = _draws("countsketch", self.d, self.b, tuple(int(s) for s in seeds))
            self.signs = signs.to(DTYPE)

    def _check(self, v: torch.Tensor, n: int, name: str) -> torch.Tensor:
        v = torch.as_tensor(v, dtype=DTYPE)
        if v.ndim == 0 or v.shape[-1] != n:
            raise ValueError(f"{name} must have last axis of length {n}, got shape {tuple(v.shape)}")
        if not torch.isfinite(v).all():
            raise ValueError(f"{name} must be finite")
        return v

    def sketch(self, v: torch.Tensor) -> torch.Tensor:
        """``R v`` along the last axis: (..., d) -> (..., b) ('sk' in the paper)."""
        return self._sketch(self._check(v, self.d, "v"))

    def _sketch(self, v: torch.Tensor) -> torch.Tensor:
        # unchecked: for the round loop, whose inputs are checked once at its start
        if self.kind == "identity":
            return v.clone()
        if self.kind == "gaussian":
            return v @ self.R.T
        if self.kind == "srht":
            pad = (v if self.n == self.d else torch.nn.functional.pad(v, (0, self.n - self.d))) * self.signs
            out = pad @ self.H.T if self.H is not None else fwht(pad)[..., self.rows]
            return out / np.sqrt(self.b)
        out = torch.zeros(*v.shape[:-1], self.b, dtype=DTYPE)
        return out.index_add_(-1, self.bucket, v * self.signs)

    def desketch(self, s: torch.Tensor) -> torch.Tensor:
        """``R^T s`` along the last axis: (..., b) -> (..., d) ('desk' in the paper)."""
        return self._desketch(self._check(s, self.b, "s"))

    def _desketch(self, s: torch.Tensor) -> torch.Tensor:
        if self.kind == "identity":
            return s.clone()
        if self.kind == "gaussian":
            return s @ self.R
        if self.kind == "srht":
            if self.H is not None:
                full = s @ self.H
            else:
                full = torch.zeros(*s.shape[:-1], self.n, dtype=DTYPE)
                full[..., self.rows] = s
                full = fwht(full)
            return (full * self.signs)[..., : self.d] / np.sqrt(self.b)
        return s[..., self.bucket] * self.signs

    def matrix(self) -> torch.Tensor:
        """The explicit ``b x d`` matrix ``R`` (for tests and small pictures)."""
        return self.sketch(torch.eye(self.d, dtype=DTYPE)).T


def intrinsic_dimension(H: np.ndarray) -> float:
    """``sum_i |lambda_i| / max_i |lambda_i|`` of a symmetric matrix (Definition 2.1's intrinsic
    dimension); a 1-D input is taken as the eigenvalues themselves."""
    H = np.asarray(H, dtype=float)
    if H.ndim == 2:
        if H.shape[0] != H.shape[1] or H.size == 0 or not np.allclose(H, H.T):
            raise ValueError(f"H must be a non-empty symmetric square matrix, got shape {H.shape}")
        lam = np.linalg.eigvalsh(H) if np.isfinite(H).all() else None
    elif H.ndim == 1 and H.size:
        lam = H
    else:
        raise ValueError(f"H must be a symmetric matrix or a vector of eigenvalues, got shape {H.shape}")
    if lam is None or not np.isfinite(lam).all():
        raise ValueError("H must be finite")
    top = np.abs(lam).max()
    if top == 0:
        raise ValueError("H must not be zero")
    return float(np.abs(lam).sum() / top)


def power_law_spectrum(d: int, p: float) -> np.ndarray:
    """``lambda_i = i^(-p)``, i = 1..d (p = 0: the identity)."""
    p = check_in_range(p, "p", 0.0, 10.0, closed=(True, True))
    return np.arange(1, check_int(d, "d", minimum=1) + 1, dtype=float) ** -p


def flat_spectrum(d: int, rng: int = 0) -> np.ndarray:
    """``lambda_i ~ U(0.5, 1)``, sorted decreasingly: intrinsic dimension about 0.75 d."""
    rng = np.random.default_rng(check_int(rng, "rng"))
    return np.sort(rng.uniform(0.5, 1.0, size=check_int(d, "d", minimum=1)))[::-1].copy()


# --------------------------------------------------------------------------- the problem


class NoisyQuadratic(FederatedProblem):
    """``f(x) = 1/2 sum_i lambda_i x_i^2`` split over clients as a finite sum: client c's sample j
    has gradient ``lambda * x + xi_cj`` with ``xi ~ N(0, noise^2 I)``, centred over all samples so
    that the global objective is exactly the quadratic (minimum 0 at x = 0)."""

    def __init__(self, eigenvalues: np.ndarray, num_clients: int = 5, samples: int = 20, noise: float = 0.01,
                 seed: int = 0) -> None:
        lam = np.asarray(eigenvalues, dtype=float)
        if lam.ndim != 1 or lam.size == 0 or not np.isfinite(lam).all() or (lam < 0).any():
            raise ValueError("eigenvalues must be a non-empty 1-D array of finite non-negative numbers")
        self.num_clients = check_int(num_clients, "num_clients", minimum=1)
        self.samples_per_client = check_int(samples, "samples", minimum=1)
        self.noise = check_positive(noise, "noise", allow_zero=True)
        self.shapes = ((lam.size,),)
        self.lam = torch.from_numpy(lam.copy())
        xi = np.random.default_rng(check_int(seed, "seed")).standard_normal((self.num_clients, self.samples_per_client,
                                                                             lam.size))
        xi -= xi.mean(axis=(0, 1)) if xi.shape[0] * xi.shape[1] > 1 else xi
        self.xi = torch.from_numpy(self.noise * xi)

    def grad(self, params, clients, idx):
        if idx.shape[1] == 1:                         # batch 1: the same numbers without the mean
            return self.lam * params + self.xi[clients, idx[:, 0]]
        return self.lam * params + self.xi[clients[:, None], idx].mean(1)

    def loss(self, params) -> float:
        params = torch.as_tensor(params, dtype=DTYPE)
        return float(0.5 * (self.lam * params * params).sum())

    def client_losses(self, params):
        params = torch.as_tensor(params, dtype=DTYPE)
        return self.loss(params) + self.xi.mean(1) @ params


# --------------------------------------------------------------------------- the server step


@dataclass
class AMSGradState:
    """AMSGrad's state (Algorithm 2): the model and the moments m, v and the running max v_hat."""

    x: torch.Tensor
    m: torch.Tensor
    v: torch.Tensor
    vhat: torch.Tensor

    @classmethod
    def zeros_like(cls, x: torch.Tensor) -> AMSGradState:
        z = torch.zeros_like(x)
        return cls(x.clone(), z, z.clone(), z.clone())


def ada_opt(state: AMSGradState, first: torch.Tensor, second: torch.Tensor, lr: float,
            betas: tuple[float, float], eps: float) -> AMSGradState:
    """One AMSGrad step on a pseudo-gradient (ADA_OPT, Algorithm 2): ``first`` feeds the first
    moment, ``second`` (squared) the second; ``x <- x - lr m / (sqrt(v_hat) + eps)``."""
    b1, b2 = betas
    m = b1 * state.m + (1 - b1) * first
    v = b2 * state.v + (1 - b2) * second * second
    vhat = torch.maximum(state.vhat, v)
    return AMSGradState(state.x - lr * m / (vhat.sqrt() + eps), m, v, vhat)


def _topk(e: torch.Tensor, k: int) -> torch.Tensor:
    """Keep the k largest-magnitude entries of each row of e."""
    idx = e.abs().topk(k, dim=-1).indices
    return torch.zeros_like(e).scatter_(-1, idx, e.gather(-1, idx))


# --------------------------------------------------------------------------- one run

#: The engine's per-round draws, cached: every run of a seed (a tuning grid, both spectra, every
#: method) samples the same clients and mini-batches in round t (read-only tensors).
_sample_round = lru_cache(maxsize=8192)(sample_round)


def round_sketches(method: str, kind: str, d: int, b: int, seed: int, t: int) -> list[Sketch]:
    """Round t's sketch(es), rebuilt from the shared seed by whoever needs them: two independent
    halves of b/2 rows for split SADL (first moment, second moment), else one sketch of b rows."""
    if method == "sadl":
        h = b // 2
        return [Sketch(kind, d, h, (seed, t, 1)), Sketch(kind, d, b - h, (seed, t, 2))]
    return [Sketch(kind, d, b, (seed, t, 0))]


def desketch_moments(sk: list[Sketch], mbar: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """What server and workers both compute from the b broadcast floats: the vectors that feed
    AMSGrad's first and second moments."""
    if len(sk) == 2:
        return sk[0]._desketch(mbar[: sk[0].b]), sk[1]._desketch(mbar[sk[0].b:])
    full = sk[0]._desketch(mbar)
    return full, full


def run_sadl(problem: FederatedProblem, method: str = "sadl", *, b: int = 40, sketch: str = "gaussian",
             lr: float = 0.01, client_lr: float = 0.5, betas: tuple[float, float] = (0.9, 0.99), eps: float = 1e-2,
             rounds: int = 200, local_steps: int = 5, batch_size: int = 1, seed: int = 0,
             x0: torch.Tensor | None = None, replica: bool = False, name: str | None = None) -> FedResult:
    """Run SADL (Algorithm 1) or a baseline (see the module's table) with every client each round.

    ``lr`` is the server's step kappa, ``client_lr`` the local SGD step eta, ``b`` the floats each
    client sends up (ignored by the uncompressed methods). With ``replica=True`` one client keeps
    its own copy of the model, rebuilt from the broadcast alone, and the trace records its largest
    distance to the server's model (``sync_gap``). The trace records the global loss and the floats
    communicated so far (``floats``); the ledger counts them per round.
    """
    if not isinstance(problem, FederatedProblem):
        raise ValueError(f"problem must be a FederatedProblem, got {type(problem).__name__}")
    method = check_choice(method, "method", METHODS)
    sketch = check_choice(sketch, "sketch", SKETCHES)
    d = problem.dim
    b = check_int(b, "b", minimum=2)
    if method in ("sadl", "sadl-same", "sketched-sgd", "topk-ef") and b > d:
        raise ValueError(f"b must be <= d = {d}, got {b}")
    lr, client_lr = check_positive(lr, "lr"), check_positive(client_lr, "client_lr")
    if len(betas) != 2:
        raise ValueError(f"betas must be a pair, got {betas!r}")
    betas = (check_in_range(betas[0], "betas[0]", 0.0, 1.0, closed=(True, False)),
             check_in_range(betas[1], "betas[1]", 0.0, 1.0, closed=(True, False)))
    eps = check_positive(eps, "eps")
    rounds = check_int(rounds, "rounds", minimum=1)
    K = check_int(local_steps, "local_steps", minimum=1)
    batch = check_int(batch_size, "batch_size", minimum=1)
    seed = check_int(seed, "seed")
    x = torch.zeros(d, dtype=DTYPE) if x0 is None else torch.as_tensor(x0, dtype=DTYPE).clone()
    if x.shape != (d,) or not torch.isfinite(x).all():
        raise ValueError(f"x0 must be a finite vector of length {d}")
    C = problem.num_clients
    client = LocalSGD(client_lr)
    server = AMSGradState.zeros_like(x)
    mirror = AMSGradState.zeros_like(x) if replica else None
    error = torch.zeros(C, d, dtype=DTYPE)
    ledger = Ledger()
    trace = Trace(name or method, meta=dict(method=method, b=b, sketch=sketch, lr=lr, client_lr=client_lr,
                                            eps=eps, rounds=rounds, K=K, seed=seed))
    trace.record(objective=problem.loss(server.x), floats=0.0)
    iterates = [server.x.clone()]

    for t in range(rounds):
        ledger.new_round()
        clients, idx = _sample_round(seed, t, C, problem.samples_per_client, C, K, batch)
        deltas, _ = local_training(problem, client, {"x": server.x.expand(C, d)}, clients, idx)
        change = -deltas                                                  # x - y_c: along the gradient
        sk = round_sketches(method, sketch, d, b, seed, t) if method in ("sadl", "sadl-same", "sketched-sgd") else []
        if sk:
            up = torch.cat([r._sketch(change) for r in sk], dim=-1)
        elif method == "topk-ef":
            error += change
            up = _topk(error, b // 2)
            error -= up
        else:
            up = change
        for row in up:
            ledger.up(row if method != "topk-ef" else torch.empty(2 * (b // 2), dtype=DTYPE))
        mbar = up.mean(0)
        if method == "topk-ef":
            ledger.down(torch.empty(2 * int((mbar != 0).sum()), dtype=DTYPE), C)
        else:
            ledger.down(mbar, C)
        if method in ("sadl", "sadl-same"):
            first, second = desketch_moments(sk, mbar)
            server = ada_opt(server, first, second, lr, betas, eps)
            if mirror is not None:                                        # a client: own sketch, same seed
                first, second = desketch_moments(round_sketches(method, sketch, d, b, seed, t), mbar.clone())
                mirror = ada_opt(mirror, first, second, lr, betas, eps)
        elif method in ("amsgrad", "topk-ef"):
            server = ada_opt(server, mbar, mbar, lr, betas, eps)
        elif method == "sketched-sgd":
            server = AMSGradState(server.x - lr * desketch_moments(sk, mbar)[0], server.m, server.v, server.vhat)
        else:
            server = AMSGradState(server.x - lr * mbar, server.m, server.v, server.vhat)
        extra = {} if mirror is None else {"sync_gap": float((mirror.x - server.x).abs().max())}
        loss = problem.loss(server.x) if torch.isfinite(server.x).all() else float("nan")
        trace.record(objective=loss, floats=float(sum(ledger.floats_up) + sum(ledger.floats_down)), **extra)
        iterates.append(server.x.clone())
        if not np.isfinite(loss):
            break
    return FedResult(server.x, trace, torch.stack(iterates), ledger)


# --------------------------------------------------------------------------- over torch.distributed


def _sadl_worker(rank: int, world: int, port: int, out: str, problem: FederatedProblem, kw: dict) -> None:
    """One process of :func:`run_sadl_distributed`: rank 0 is the server, rank c >= 1 trains client c - 1."""
    import os

    import torch.distributed as dist

    torch.set_num_threads(1)
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    dist.init_process_group("gloo", rank=rank, world_size=world)
    try:
        d, b, C, seed = problem.dim, kw["b"], world - 1, kw["seed"]
        state = AMSGradState.zeros_like(kw["x0"])
        client, ledger, iterates = LocalSGD(kw["client_lr"]), Ledger(), [state.x.clone()]
        for t in range(kw["rounds"]):
            ledger.new_round()
            clients, idx = sample_round(seed, t, C, problem.samples_per_client, C, kw["local_steps"], kw["batch_size"])
            sk = round_sketches(kw["method"], kw["sketch"], d, b, seed, t)
            if rank == 0:
                rows = [torch.empty(b, dtype=DTYPE) for _ in range(C)]
                for c in range(C):
                    dist.recv(rows[c], src=c + 1)
                    ledger.up(rows[c])
                mbar = torch.stack(rows).mean(0)
            else:
                c = rank - 1
                delta, _ = local_training(problem, client, {"x": state.x[None]}, clients[[c]], idx[[c]])
                dist.send(torch.cat([r.sketch(-delta[0]) for r in sk]).contiguous(), dst=0)
                mbar = torch.empty(b, dtype=DTYPE)
            dist.broadcast(mbar, src=0)                       # the only thing a client ever receives
            ledger.down(mbar, C)
            first, second = desketch_moments(sk, mbar)
            state = ada_opt(state, first, second, kw["lr"], kw["betas"], kw["eps"])
            iterates.append(state.x.clone())
        torch.save({"iterates": torch.stack(iterates), "ledger": ledger.__dict__}, f"{out}.{rank}")
    finally:
        dist.destroy_process_group()


def run_sadl_distributed(problem: FederatedProblem, method: str = "sadl", *, b: int = 40, sketch: str = "gaussian",
                         lr: float = 0.01, client_lr: float = 0.5, betas: tuple[float, float] = (0.9, 0.99),
                         eps: float = 1e-2, rounds: int = 5, local_steps: int = 5, batch_size: int = 1, seed: int = 0,
                         x0: torch.Tensor | None = None) -> dict:
    """SADL over ``torch.distributed`` (gloo, localhost): a server process and one process per client
    (``problem.num_clients + 1`` in all). Clients send their b-float sketches, the server broadcasts
    the b-float mean, and every process takes the same AMSGrad step from it: the model itself never
    crosses the wire. Returns ``{"server": iterates (T+1, d), "clients": [iterates per client],
    "ledger": the server's Ledger}``.
    """
    import os
    import tempfile
    import warnings

    import torch.multiprocessing as mp

    from .federated import START_METHOD, _free_port

    if not isinstance(problem, FederatedProblem):
        raise ValueError(f"problem must be a FederatedProblem, got {type(problem).__name__}")
    method = check_choice(method, "method", ("sadl", "sadl-same"))
    # validate every argument the way the in-process loop does (one round, cheaply)
    check = run_sadl(problem, method, b=b, sketch=sketch, lr=lr, client_lr=client_lr, betas=betas, eps=eps,
                     rounds=1, local_steps=local_steps, batch_size=batch_size, seed=seed, x0=x0)
    kw = dict(method=method, b=b, sketch=sketch, lr=float(lr), client_lr=float(client_lr),
              betas=(float(betas[0]), float(betas[1])), eps=float(eps), rounds=check_int(rounds, "rounds", minimum=1),
              local_steps=local_steps, batch_size=batch_size, seed=seed, x0=check.iterates[0])
    world = problem.num_clients + 1
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "sadl")
        with warnings.catch_warnings():
            # Python >= 3.12 warns about forking a process with threads (as in chapter 21's engine).
            warnings.filterwarnings("ignore", message=r".*fork\(\) may lead to deadlocks", category=DeprecationWarning)
            mp.start_processes(_sadl_worker, args=(world, _free_port(), out, problem, kw), nprocs=world, join=True,
                               start_method=START_METHOD)
        parts = [torch.load(f"{out}.{r}", weights_only=False) for r in range(world)]
    return {"server": parts[0]["iterates"], "clients": [p["iterates"] for p in parts[1:]],
            "ledger": Ledger(**parts[0]["ledger"])}
