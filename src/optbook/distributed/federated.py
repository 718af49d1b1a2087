"""A small federated-learning engine: clients, rounds, server and client optimizers, and a ledger
of what was communicated and what each client had to store.

One round of cross-device federated optimization (the FedOpt template of Reddi et al., 2021):
the server samples ``S`` clients, sends them the model (and whatever else the method ships),
each client runs ``K`` local steps of its own optimizer on its own data, sends back its model
change ``Delta_i = y_i - x``, and the server treats the average change as a pseudo-gradient for
its own optimizer.

The same round code runs two ways:

* in-process, with the ``S`` clients of a round stacked along a leading axis and trained as one
  batched tensor computation (:class:`LocalTransport`; what the notebook uses);
* over ``torch.distributed`` with the gloo backend on localhost, one process per client and a
  server process, so that every number sent really goes through a socket
  (:class:`GlooTransport`, :func:`run_distributed`).

Only the transport differs: sampling, local training, aggregation and the server step are the
same functions, and the transport counts every float it moves into a :class:`Ledger`.
Randomness is explicit: the clients and mini-batches of round ``t`` are drawn from
``numpy.random.default_rng([seed, t])`` in every process, so both paths see the same data.

A problem is any :class:`FederatedProblem`: a flat parameter vector of length ``dim`` split into
tensors of the given ``shapes`` (matrices matter to memory-efficient client optimizers), a
batched stochastic gradient, and the global objective. :func:`make_federated_softmax` builds the
heterogeneous softmax-regression problem the chapters use.
"""
from __future__ import annotations

import math
import os
from abc import ABC, abstractmethod
import socket
import tempfile
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch

from ..core import Trace, check_in_range, check_int, check_positive

DTYPE = torch.float64


# --------------------------------------------------------------------------- problems


class FederatedProblem(ABC):
    """What the engine needs from a federated objective ``f(x) = mean_i f_i(x)``.

    Subclasses set ``num_clients``, ``samples_per_client`` and ``shapes`` (the shapes of the
    parameter tensors, in the order they are packed in the flat vector) and implement
    :meth:`grad` (batched over clients), :meth:`client_losses` and :meth:`loss` (the global objective).
    """

    num_clients: int
    samples_per_client: int
    shapes: tuple[tuple[int, ...], ...]

    @property
    def dim(self) -> int:
        return int(sum(math.prod(s) for s in self.shapes))

    @abstractmethod
    def grad(self, params: torch.Tensor, clients: torch.Tensor, idx: torch.Tensor) -> torch.Tensor:
        """Mini-batch gradients: ``params`` (B, dim), ``clients`` (B,) client ids, ``idx`` (B, b)
        sample indices within each client; returns (B, dim)."""

    @abstractmethod
    def loss(self, params: torch.Tensor) -> float:
        """The global objective at one parameter vector (dim,)."""

    @abstractmethod
    def client_losses(self, params: torch.Tensor) -> torch.Tensor:
        """Each client's full-data objective at one parameter vector (num_clients,)."""


@dataclass
class SoftmaxClients(FederatedProblem):
    """L2-regularised multinomial logistic regression split over clients.

    ``X`` (N, n, p) features and ``y`` (N, n) labels in 0..C-1 of N clients with n samples each;
    the parameter is one p x C weight matrix (flattened row-major), so ``shapes == ((p, C),)``.
    """

    X: torch.Tensor
    y: torch.Tensor
    classes: int
    l2: float = 1e-3

    def __post_init__(self) -> None:
        if self.X.ndim != 3:
            raise ValueError(f"X must have shape (clients, samples, features), got {tuple(self.X.shape)}")
        if self.y.shape != self.X.shape[:2]:
            raise ValueError(f"y must have shape {tuple(self.X.shape[:2])}, got {tuple(self.y.shape)}")
        self.classes = check_int(self.classes, "classes", minimum=2)
        self.l2 = check_positive(self.l2, "l2", allow_zero=True)
        self.num_clients, self.samples_per_client, p = (int(s) for s in self.X.shape)
        self.shapes = ((p, self.classes),)
        self._onehot = torch.nn.functional.one_hot(self.y, self.classes).to(DTYPE)

    def _weights(self, params: torch.Tensor) -> torch.Tensor:
        return params.reshape(*params.shape[:-1], *self.shapes[0])

    def grad(self, params: torch.Tensor, clients: torch.Tensor, idx: torch.Tensor) -> torch.Tensor:
        W = self._weights(params)                                     # (B, p, C)
        Xb = self.X[clients[:, None], idx]                            # (B, b, p)
        Yb = self._onehot[clients[:, None], idx]                      # (B, b, C)
        probs = torch.softmax(torch.bmm(Xb, W), dim=-1)
        G = torch.bmm(Xb.transpose(1, 2), probs - Yb) / idx.shape[1] + self.l2 * W
        return G.reshape(params.shape)

    def client_losses(self, params: torch.Tensor) -> torch.Tensor:
        params = torch.as_tensor(params, dtype=DTYPE)
        logits = self.X @ self._weights(params)                       # (N, n, C)
        nll = torch.logsumexp(logits, -1) - (logits * self._onehot).sum(-1)
        return nll.mean(-1) + 0.5 * self.l2 * (params @ params)

    def loss(self, params: torch.Tensor) -> float:
        return float(self.client_losses(params).mean())


def make_federated_softmax(num_clients: int = 20, samples: int = 50, features: int = 20, classes: int = 5,
                           heterogeneity: float = 1.0, log10_condition: float = 1.5, signal: float = 3.0, concept: float = 0.5,
                           l2: float = 1e-3, seed: int = 0) -> SoftmaxClients:
    """A heterogeneous federated classification problem.

    Every client draws features from class-dependent Gaussians, with a global ill-conditioned
    feature scale (``10**linspace(0, -log10_condition, features)``). ``heterogeneity`` h >= 0
    sets how much clients differ: client i rescales feature j by ``exp(h * z_ij)`` (its own
    geometry) and labels its data with ``W* + h * concept * mean|W*| * xi_i`` (its own concept), with
    ``z, xi ~ N(0, 1)``; h = 0 gives identically distributed clients. ``signal`` scales the logits
    (larger: less label noise, a smaller optimal loss).
    """
    num_clients = check_int(num_clients, "num_clients", minimum=1)
    samples = check_int(samples, "samples", minimum=1)
    features = check_int(features, "features", minimum=1)
    classes = check_int(classes, "classes", minimum=2)
    heterogeneity = check_in_range(heterogeneity, "heterogeneity", 0.0, 5.0, closed=(True, True))
    log10_condition = check_in_range(log10_condition, "log10_condition", 0.0, 6.0, closed=(True, True))
    signal = check_positive(signal, "signal")
    concept = check_positive(concept, "concept", allow_zero=True)
    l2 = check_positive(l2, "l2", allow_zero=True)
    seed = check_int(seed, "seed")
    rng = np.random.default_rng(seed)
    scale = 10.0 ** np.linspace(0.0, -log10_condition, features)
    w_star = rng.standard_normal((features, classes)) * signal / scale[:, None] / np.sqrt(features)
    client_scale = np.exp(heterogeneity * rng.standard_normal((num_clients, 1, features)))
    Z = rng.standard_normal((num_clients, samples, features)) * scale * client_scale
    W_i = w_star + heterogeneity * concept * rng.standard_normal((num_clients, features, classes)) * np.abs(w_star).mean()
    logits = np.einsum("nsp,npc->nsc", Z, W_i)
    logits -= logits.max(-1, keepdims=True)
    probs = np.exp(logits)
    probs /= probs.sum(-1, keepdims=True)
    u = rng.random((num_clients, samples, 1))
    y = np.minimum((probs.cumsum(-1) < u).sum(-1), classes - 1)
    return SoftmaxClients(torch.as_tensor(Z, dtype=DTYPE), torch.as_tensor(y, dtype=torch.long), classes, l2)


# --------------------------------------------------------------------------- optimizers


class ClientOptimizer(ABC):
    """A local optimizer run on a stack of clients at once (leading axis: the clients).

    :meth:`init_state` builds the state at the start of a round, from zero or, for a method that
    ships preconditioners, from what the server sent (``received``); :meth:`step` applies one
    local step at local step index ``k``. The state is a dict of tensors whose numel per client is
    what the ledger counts as client memory.
    """

    name = "client"
    #: Server-state keys this optimizer needs to receive each round (the costly joint baseline).
    receives: tuple[str, ...] = ()

    def init_state(self, batch: int, shapes: Sequence[tuple[int, ...]], received: dict[str, torch.Tensor]
                   ) -> dict[str, torch.Tensor]:
        """The optimizer state of ``batch`` clients at the start of a round, for parameters of
        ``shapes``, from what the server sent (``received``); stateless optimizers return {}."""
        return {}

    @abstractmethod
    def step(self, y: torch.Tensor, g: torch.Tensor, state: dict[str, torch.Tensor], k: int) -> torch.Tensor:
        """One local step of the stacked clients: new iterates (B, dim); ``state`` is updated in place."""


class ServerOptimizer(ABC):
    """The server's update ``x <- x + step(Delta)`` on the mean client change ``Delta``.

    ``state`` holds its moments; :meth:`shared` returns the part a method ships to the clients."""

    name = "server"

    def init(self, dim: int) -> None:
        self.state: dict[str, torch.Tensor] = {}

    @abstractmethod
    def step(self, x: torch.Tensor, delta: torch.Tensor) -> torch.Tensor:
        """The next server model from the current one and the mean client change."""

    def shared(self, keys: Sequence[str]) -> dict[str, torch.Tensor]:
        missing = [k for k in keys if k not in self.state]
        if missing:
            raise ValueError(f"the {self.name} server keeps no {missing} to ship to clients "
                             f"(it keeps {sorted(self.state)})")
        return {k: self.state[k] for k in keys}


# --------------------------------------------------------------------------- the ledger


@dataclass
class Ledger:
    """Counted per round: floats sent server -> clients and clients -> server (over all sampled
    clients), bytes on the wire, and the largest optimizer state a client held (floats)."""

    floats_down: list[int] = field(default_factory=list)
    floats_up: list[int] = field(default_factory=list)
    bytes_total: list[int] = field(default_factory=list)
    client_state: list[int] = field(default_factory=list)
    server_state: list[int] = field(default_factory=list)

    def new_round(self) -> None:
        for series in (self.floats_down, self.floats_up, self.bytes_total, self.client_state, self.server_state):
            series.append(0)

    def down(self, t: torch.Tensor, receivers: int) -> None:
        self.floats_down[-1] += t.numel() * receivers
        self.bytes_total[-1] += t.numel() * t.element_size() * receivers

    def up(self, t: torch.Tensor) -> None:
        self.floats_up[-1] += t.numel()
        self.bytes_total[-1] += t.numel() * t.element_size()

    def totals(self) -> dict[str, int]:
        return {"floats_down": sum(self.floats_down), "floats_up": sum(self.floats_up),
                "floats": sum(self.floats_down) + sum(self.floats_up), "bytes": sum(self.bytes_total),
                "client_state": max(self.client_state, default=0), "server_state": max(self.server_state, default=0)}


# --------------------------------------------------------------------------- transports


class LocalTransport:
    """Every client of a round in this process, stacked along axis 0."""

    is_server = True

    def __init__(self) -> None:
        self.ledger = Ledger()

    def slots(self, S: int) -> list[int]:
        return list(range(S))

    def downlink(self, payload: dict[str, torch.Tensor], S: int) -> dict[str, torch.Tensor]:
        for t in payload.values():
            self.ledger.down(t, S)
        return {k: t.expand(S, *t.shape) for k, t in payload.items()}

    def uplink(self, deltas: torch.Tensor, S: int) -> torch.Tensor:
        for row in deltas:
            self.ledger.up(row)
        return deltas

    def report_state(self, floats: int) -> None:
        self.ledger.client_state[-1] = max(self.ledger.client_state[-1], floats)


class GlooTransport:
    """One process per sampled client plus the server (rank 0), over an initialised
    ``torch.distributed`` process group; client rank r trains the round's (r-1)-th client."""

    def __init__(self) -> None:
        import torch.distributed as dist

        if not dist.is_initialized():
            raise ValueError("GlooTransport needs an initialised torch.distributed process group")
        self.dist = dist
        self.rank, self.world = dist.get_rank(), dist.get_world_size()
        self.is_server = self.rank == 0
        self.ledger = Ledger()

    def slots(self, S: int) -> list[int]:
        if S != self.world - 1:
            raise ValueError(f"clients_per_round must be world_size - 1 = {self.world - 1} on the gloo path, got {S}")
        return [] if self.is_server else [self.rank - 1]

    def downlink(self, payload: dict[str, torch.Tensor], S: int) -> dict[str, torch.Tensor]:
        out = {}
        for key, t in payload.items():
            buf = t.clone() if self.is_server else torch.empty_like(t)
            self.dist.broadcast(buf, src=0)
            self.ledger.down(buf, self.world - 1)
            out[key] = buf[None]
        return out

    def uplink(self, deltas: torch.Tensor | None, S: int) -> torch.Tensor | None:
        if not self.is_server:
            self.dist.send(deltas[0].contiguous(), dst=0)
            return None
        rows = []
        for r in range(1, self.world):
            buf = torch.empty(self._dim, dtype=DTYPE)
            self.dist.recv(buf, src=r)
            self.ledger.up(buf)
            rows.append(buf)
        return torch.stack(rows)

    def report_state(self, floats: int) -> None:
        # Each client reports its own state size to the server (bookkeeping, not model traffic).
        t = torch.tensor([floats], dtype=torch.long)
        self.dist.all_reduce(t, op=self.dist.ReduceOp.MAX)
        self.ledger.client_state[-1] = int(t)


# --------------------------------------------------------------------------- one run


@dataclass
class FedResult:
    """A federated run: the final model, the per-round trace (global loss; floats communicated so
    far), the iterates x_0..x_T (rows), and the ledger."""

    x: torch.Tensor
    trace: Trace
    iterates: torch.Tensor
    ledger: Ledger

    @property
    def final_loss(self) -> float:
        return float(self.trace.objective[-1])


def sample_round(seed: int, t: int, num_clients: int, samples: int, S: int, K: int, batch: int
                 ) -> tuple[torch.Tensor, torch.Tensor]:
    """The clients (S,) and mini-batch indices (S, K, batch) of round ``t``: drawn from
    ``default_rng([seed, t])`` without replacement across clients, with replacement within one."""
    rng = np.random.default_rng([seed, t])
    clients = rng.choice(num_clients, size=S, replace=False)
    idx = rng.integers(0, samples, size=(S, K, batch))
    return torch.as_tensor(clients, dtype=torch.long), torch.as_tensor(idx, dtype=torch.long)


def state_floats(state: dict[str, torch.Tensor], batch: int) -> int:
    """Optimizer-state floats held by one client (the state tensors are stacked over ``batch``)."""
    return sum(t.numel() for t in state.values()) // max(batch, 1)


def local_training(problem: FederatedProblem, client: ClientOptimizer, received: dict[str, torch.Tensor],
                   clients: torch.Tensor, idx: torch.Tensor) -> tuple[torch.Tensor, int]:
    """``K = idx.shape[1]`` local steps of ``client`` from the received model on each client of the
    stack; returns the changes Delta_i = y_i - x (B, dim) and the state floats per client."""
    x = received["x"]
    y = x.clone()
    state = client.init_state(len(clients), problem.shapes, received)
    for k in range(idx.shape[1]):
        g = problem.grad(y, clients, idx[:, k])
        y = client.step(y, g, state, k)
    return y - x, state_floats(state, len(clients))


def aggregate(deltas: torch.Tensor) -> torch.Tensor:
    """The server's pseudo-gradient: the plain mean of the client changes (equal weights)."""
    return deltas.mean(0)


def run_federated(problem: FederatedProblem, client: ClientOptimizer, server: ServerOptimizer, *,
                  rounds: int = 50, clients_per_round: int = 5, local_steps: int = 10, batch_size: int = 10,
                  seed: int = 0, x0: torch.Tensor | None = None, transport=None, name: str = "federated"
                  ) -> FedResult | None:
    """Run ``rounds`` rounds of federated optimization (FedOpt's template).

    ``transport`` is a :class:`LocalTransport` (default: all clients in this process) or a
    :class:`GlooTransport` inside a process group; on the gloo path only the server process
    (rank 0) returns the result, the client processes return None.
    """
    if not isinstance(problem, FederatedProblem):
        raise ValueError(f"problem must be a FederatedProblem, got {type(problem).__name__}")
    if not isinstance(client, ClientOptimizer):
        raise ValueError(f"client must be a ClientOptimizer, got {type(client).__name__}")
    if not isinstance(server, ServerOptimizer):
        raise ValueError(f"server must be a ServerOptimizer, got {type(server).__name__}")
    rounds = check_int(rounds, "rounds", minimum=1)
    S = check_int(clients_per_round, "clients_per_round", minimum=1)
    if S > problem.num_clients:
        raise ValueError(f"clients_per_round must be <= the {problem.num_clients} clients, got {S}")
    K = check_int(local_steps, "local_steps", minimum=1)
    b = check_int(batch_size, "batch_size", minimum=1)
    seed = check_int(seed, "seed")
    d = problem.dim
    if x0 is None:
        x = torch.zeros(d, dtype=DTYPE)
    else:
        x = torch.as_tensor(x0, dtype=DTYPE).clone()
        if x.shape != (d,) or not torch.isfinite(x).all():
            raise ValueError(f"x0 must be a finite vector of length {d}")
    transport = LocalTransport() if transport is None else transport
    transport._dim = d
    slots = transport.slots(S)
    server.init(d)
    ledger = transport.ledger
    trace = Trace(name, meta=dict(rounds=rounds, S=S, K=K, batch=b, seed=seed))
    iterates = [x.clone()]
    if transport.is_server:
        trace.record(objective=problem.loss(x), floats=0.0)
    for t in range(rounds):
        ledger.new_round()
        clients, idx = sample_round(seed, t, problem.num_clients, problem.samples_per_client, S, K, b)
        payload = {"x": x, **(server.shared(client.receives) if transport.is_server else
                              {k: torch.empty(d, dtype=DTYPE) for k in client.receives})}
        received = transport.downlink(payload, S)
        deltas, floats = (local_training(problem, client, received, clients[slots], idx[slots]) if slots
                          else (None, 0))
        transport.report_state(floats)
        all_deltas = transport.uplink(deltas, S)
        if transport.is_server:
            x = server.step(x, aggregate(all_deltas))
            ledger.server_state[-1] = sum(v.numel() for v in server.state.values())
            iterates.append(x.clone())
            trace.record(objective=problem.loss(x), floats=float(sum(ledger.floats_down) + sum(ledger.floats_up)))
        else:
            x = received["x"][0]  # the clients keep nothing: next round brings the model again
    if not transport.is_server:
        return None
    return FedResult(x, trace, torch.stack(iterates), ledger)


# --------------------------------------------------------------------------- the gloo path


#: How the gloo path starts its processes: "fork" where the platform has it (the children inherit
#: the imported torch and start in milliseconds; each runs torch on one thread), else "spawn".
START_METHOD = "fork" if "fork" in __import__("multiprocessing").get_all_start_methods() else "spawn"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _worker(rank: int, world: int, port: int, out: str, problem: FederatedProblem, pairs: list,
            kwargs: dict) -> None:
    import torch.distributed as dist

    torch.set_num_threads(1)
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    dist.init_process_group("gloo", rank=rank, world_size=world)
    try:
        results = []
        for name, client, server in pairs:  # one process group serves every run (spawning is the cost)
            res = run_federated(problem, client, server, transport=GlooTransport(), name=name, **kwargs)
            if rank == 0:
                results.append({"x": res.x, "iterates": res.iterates, "trace": res.trace.to_dict(),
                                "ledger": res.ledger.__dict__})
        if rank == 0:
            torch.save(results, out)
    finally:
        dist.destroy_process_group()


def run_distributed(problem: FederatedProblem, pairs: Sequence[tuple[str, ClientOptimizer, ServerOptimizer]], *,
                    rounds: int = 5, clients_per_round: int = 2, local_steps: int = 10, batch_size: int = 10,
                    seed: int = 0) -> list[FedResult]:
    """:func:`run_federated` over torch.distributed (gloo, localhost) for each (name, client, server)
    in ``pairs``: the server and each of the ``clients_per_round`` clients in its own process
    (``clients_per_round + 1`` processes, spawned once for all the runs). Returns the server's
    results; their ledgers count what went through the process group."""
    import torch.multiprocessing as mp

    pairs = list(pairs)
    if not pairs or not all(len(p) == 3 and isinstance(p[1], ClientOptimizer) and isinstance(p[2], ServerOptimizer)
                            for p in pairs):
        raise ValueError("pairs must be a non-empty list of (name, ClientOptimizer, ServerOptimizer)")
    if not isinstance(problem, FederatedProblem):
        raise ValueError(f"problem must be a FederatedProblem, got {type(problem).__name__}")
    S = check_int(clients_per_round, "clients_per_round", minimum=1)
    kwargs: dict[str, Any] = dict(rounds=check_int(rounds, "rounds", minimum=1), clients_per_round=S,
                                  local_steps=check_int(local_steps, "local_steps", minimum=1),
                                  batch_size=check_int(batch_size, "batch_size", minimum=1),
                                  seed=check_int(seed, "seed"))
    if S > problem.num_clients:
        raise ValueError(f"clients_per_round must be <= the {problem.num_clients} clients, got {S}")
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "result.pt")
        with warnings.catch_warnings():
            # Python >= 3.12 warns about forking a process with threads; the children run torch on
            # one thread and only talk through gloo, which they initialise themselves.
            warnings.filterwarnings("ignore", message=r".*fork\(\) may lead to deadlocks", category=DeprecationWarning)
            mp.start_processes(_worker, args=(S + 1, _free_port(), out, problem, pairs, kwargs),
                               nprocs=S + 1, join=True, start_method=START_METHOD)
        data = torch.load(out, weights_only=False)
    return [FedResult(d["x"], Trace.from_dict(d["trace"]), d["iterates"], Ledger(**d["ledger"])) for d in data]
