"""FedAda² and FedAda²++: jointly adaptive federated optimization without shipping
preconditioners (Lee, Sharma, Zaheer and Li, NeurIPS 2025), with its baselines.

Every method is a pair (client optimizer, server optimizer) for the engine of
:mod:`optbook.distributed.federated`:

=====================  ==========================  ============================  ==================
method                 client (K local steps)      server (on the mean change)   floats / client
=====================  ==========================  ============================  ==================
FedAvg                 SGD                         x + eta_s Delta               2d
FedAdam (server only)  SGD                         Adam                          2d
joint, ships v         AdaGrad from the server's v  Adam                          3d
FedAda²                AdaGrad from zero           Adam                          2d
FedAda²++              SM3 from zero               Adam                          2d
=====================  ==========================  ============================  ==================

What is reconstructed (the paper's pseudo-code was not available to us): the FedOpt-style server
(``Delta = y - x`` and ``x <- x + eta_s m / (sqrt(v) + eps_s)``, no bias correction), client
AdaGrad as the default client optimizer with ``eps_l`` added outside the square root, delayed
preconditioner updates as skipped accumulator updates, and what the costly joint baseline ships:
the server's own second moment ``v`` (d more floats down per client), from which each client's
AdaGrad accumulator starts. That ``v`` lives on the scale of squared model changes, not of squared
gradients; we ship it as the naive baseline does and say so.
"""
from __future__ import annotations

import math
from collections.abc import Sequence

import torch

from ..core import check_choice, check_in_range, check_int, check_positive
from .federated import DTYPE, ClientOptimizer, ServerOptimizer

# --------------------------------------------------------------------------- client optimizers


class LocalSGD(ClientOptimizer):
    """Plain local SGD, y <- y - eta_l g (no state: FedAvg's client)."""

    name = "SGD"

    def __init__(self, lr: float = 0.1) -> None:
        self.lr = check_positive(lr, "lr")

    def step(self, y, g, state, k):
        return y - self.lr * g


class LocalAdaGrad(ClientOptimizer):
    """Local AdaGrad, ``v <- v + g*g`` (every ``delay``-th step), ``y <- y - eta_l g / (sqrt(v) + eps)``.

    ``init="zero"``: the accumulator starts at zero every round (FedAda²'s client: nothing is
    received). ``init="server"``: it starts at the server's second moment ``v``, which the server
    must ship each round (the costly joint-adaptive baseline).
    """

    name = "AdaGrad"

    def __init__(self, lr: float = 0.01, eps: float = 1e-6, delay: int = 1, init: str = "zero") -> None:
        self.lr = check_positive(lr, "lr")
        self.eps = check_positive(eps, "eps")
        self.delay = check_int(delay, "delay", minimum=1)
        self.init = check_choice(init, "init", ("zero", "server"))
        self.receives = ("v",) if self.init == "server" else ()

    def init_state(self, batch, shapes, received):
        d = sum(math.prod(s) for s in shapes)
        if self.init == "server":
            return {"v": received["v"].expand(batch, d).clone()}
        return {"v": torch.zeros(batch, d, dtype=DTYPE)}

    def step(self, y, g, state, k):
        if k % self.delay == 0:
            state["v"] += g * g
        return y - self.lr * (g / (state["v"].sqrt() + self.eps))


class LocalAdam(ClientOptimizer):
    """Local Adam from zero moments every round (with bias correction), a client option the paper
    also runs (client memory 2d)."""

    name = "Adam"

    def __init__(self, lr: float = 0.01, beta1: float = 0.9, beta2: float = 0.999, eps: float = 1e-6) -> None:
        self.lr = check_positive(lr, "lr")
        self.beta1 = check_in_range(beta1, "beta1", 0.0, 1.0, closed=(True, False))
        self.beta2 = check_in_range(beta2, "beta2", 0.0, 1.0)
        self.eps = check_positive(eps, "eps")

    def init_state(self, batch, shapes, received):
        d = sum(math.prod(s) for s in shapes)
        return {"m": torch.zeros(batch, d, dtype=DTYPE), "v": torch.zeros(batch, d, dtype=DTYPE)}

    def step(self, y, g, state, k):
        state["m"].mul_(self.beta1).add_((1 - self.beta1) * g)
        state["v"].mul_(self.beta2).add_((1 - self.beta2) * g * g)
        m_hat = state["m"] / (1 - self.beta1 ** (k + 1))
        v_hat = state["v"] / (1 - self.beta2 ** (k + 1))
        return y - self.lr * m_hat / (v_hat.sqrt() + self.eps)


def sm3_accumulate(g: torch.Tensor, row: torch.Tensor, col: torch.Tensor, update: bool = True) -> torch.Tensor:
    """One SM3-II step for a stack of m x n gradients ``g`` (B, m, n) with row maxima ``row`` (B, m)
    and column maxima ``col`` (B, n), updated in place: ``nu = min(row_i, col_j) + g_ij^2``,
    ``row_i = max_j nu_ij``, ``col_j = max_i nu_ij`` (Anil et al., 2019). Returns ``nu``.
    With ``update=False`` (a delayed step) returns ``min(row_i, col_j)`` and changes nothing."""
    nu = torch.minimum(row[:, :, None], col[:, None, :])
    if update:
        nu = nu + g * g
        row.copy_(nu.amax(2))
        col.copy_(nu.amax(1))
    return nu


class LocalSM3(ClientOptimizer):
    """Local SM3-II from zero every round (FedAda²++'s client): for each m x n matrix parameter only
    m + n accumulators (row and column maxima); a vector keeps one accumulator per entry, where
    SM3 is AdaGrad. ``y <- y - eta_l g / (sqrt(nu) + eps)``.

    ``cover="scalar"`` replaces the row and column covers of a matrix by one accumulator for the
    whole matrix (1 float: AdaGrad-Norm), the chapter's control for what SM3's covers buy."""

    name = "SM3"

    def __init__(self, lr: float = 0.01, eps: float = 1e-6, delay: int = 1, cover: str = "rowcol") -> None:
        self.lr = check_positive(lr, "lr")
        self.eps = check_positive(eps, "eps")
        self.delay = check_int(delay, "delay", minimum=1)
        self.cover = check_choice(cover, "cover", ("rowcol", "scalar"))

    def init_state(self, batch, shapes, received):
        self._shapes = [tuple(s) for s in shapes]
        state = {}
        for i, s in enumerate(self._shapes):
            if len(s) == 1:
                state[f"v{i}"] = torch.zeros(batch, s[0], dtype=DTYPE)
            elif len(s) == 2 and self.cover == "scalar":
                state[f"v{i}"] = torch.zeros(batch, 1, dtype=DTYPE)
            elif len(s) == 2:
                state[f"row{i}"] = torch.zeros(batch, s[0], dtype=DTYPE)
                state[f"col{i}"] = torch.zeros(batch, s[1], dtype=DTYPE)
            else:
                raise ValueError(f"shapes: SM3 here covers vectors and matrices, got a parameter of shape {s}")
        return state

    def step(self, y, g, state, k):
        update = k % self.delay == 0
        out, start = [], 0
        for i, s in enumerate(self._shapes):
            n = math.prod(s)
            gi = g[:, start:start + n]
            if len(s) == 1 or self.cover == "scalar":
                if update:
                    state[f"v{i}"] += (gi * gi).sum(1, keepdim=True) if len(s) == 2 else gi * gi
                nu = state[f"v{i}"]
            else:
                nu = sm3_accumulate(gi.reshape(-1, *s), state[f"row{i}"], state[f"col{i}"], update).reshape(gi.shape)
            out.append(gi / (nu.sqrt() + self.eps))
            start += n
        return y - self.lr * torch.cat(out, dim=1)


class SM3(torch.optim.Optimizer):
    """SM3-II (Anil, Gupta, Koren and Singer, 2019) as a ``torch.optim`` optimizer: FedAda²++'s
    client optimizer for any torch model.

    For a parameter of shape (n_1, ..., n_k) it keeps one accumulator per axis, a_j of length n_j
    (sum_j n_j floats instead of prod_j n_j), and at each step

        nu = min_j a_j (broadcast) + g * g,   a_j = max of nu over every axis but j,
        p <- p - lr * g / (sqrt(nu) + eps).

    A vector (or scalar) keeps one accumulator per entry: SM3 is then AdaGrad. ``cover="full"``
    does that for every parameter (torch.optim.Adagrad with this ``eps``). ``delay`` z updates the
    accumulators only every z-th step (the paper's delayed preconditioner); in between the step
    uses min_j a_j. Hyperparameters may be set per param group. In federated use, each round
    builds a fresh optimizer: the zero start of FedAda²++.
    """

    def __init__(self, params, lr: float = 0.01, eps: float = 1e-6, delay: int = 1, cover: str = "axes") -> None:
        super().__init__(params, dict(lr=lr, eps=eps, delay=delay, cover=cover))

    def add_param_group(self, param_group: dict) -> None:
        merged = {**self.defaults, **param_group}
        check_positive(merged["lr"], "lr")
        check_positive(merged["eps"], "eps")
        check_int(merged["delay"], "delay", minimum=1)
        check_choice(merged["cover"], "cover", ("axes", "full"))
        super().add_param_group(param_group)

    @torch.no_grad()
    def step(self, closure=None):
        loss = None
        if closure is not None:
            with torch.enable_grad():
                loss = closure()
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    continue
                g = p.grad
                state = self.state[p]
                full = group["cover"] == "full" or p.dim() <= 1
                if not state:
                    state["step"] = 0
                    if full:
                        state["acc"] = torch.zeros_like(p)
                    else:
                        for j, n in enumerate(p.shape):
                            state[f"acc{j}"] = torch.zeros(n, dtype=p.dtype, device=p.device)
                update = state["step"] % group["delay"] == 0
                if full:
                    if update:
                        state["acc"].addcmul_(g, g)
                    nu = state["acc"]
                else:
                    k = p.dim()
                    covers = [state[f"acc{j}"].reshape([-1 if i == j else 1 for i in range(k)]) for j in range(k)]
                    nu = covers[0]
                    for c in covers[1:]:
                        nu = torch.minimum(nu, c)
                    if update:
                        nu = nu + g * g
                        for j in range(k):
                            state[f"acc{j}"].copy_(nu.amax(dim=[i for i in range(k) if i != j]))
                    else:
                        nu = nu.expand_as(p)
                p.addcdiv_(g, nu.sqrt().add_(group["eps"]), value=-group["lr"])
                state["step"] += 1
        return loss


# --------------------------------------------------------------------------- server optimizers


class ServerAvg(ServerOptimizer):
    """FedAvg's server, ``x <- x + eta_s Delta`` (eta_s = 1 is plain averaging)."""

    name = "average"

    def __init__(self, lr: float = 1.0) -> None:
        self.lr = check_positive(lr, "lr")

    def step(self, x, delta):
        return x + self.lr * delta


class ServerAdam(ServerOptimizer):
    """FedAdam's server (Reddi et al., 2021): ``m <- b1 m + (1-b1) Delta``,
    ``v <- b2 v + (1-b2) Delta^2``, ``x <- x + eta_s m / (sqrt(v) + eps_s)``; eps_s = 1e-3 is
    FedOpt's advice (a tiny one makes it a sign method on small Deltas)."""

    name = "Adam"

    def __init__(self, lr: float = 0.1, beta1: float = 0.9, beta2: float = 0.99, eps: float = 1e-3) -> None:
        self.lr = check_positive(lr, "lr")
        self.beta1 = check_in_range(beta1, "beta1", 0.0, 1.0, closed=(True, False))
        self.beta2 = check_in_range(beta2, "beta2", 0.0, 1.0)
        self.eps = check_positive(eps, "eps")

    def init(self, dim):
        self.state = {"m": torch.zeros(dim, dtype=DTYPE), "v": torch.zeros(dim, dtype=DTYPE)}

    def step(self, x, delta):
        m, v = self.state["m"], self.state["v"]
        m.mul_(self.beta1).add_((1 - self.beta1) * delta)
        v.mul_(self.beta2).add_((1 - self.beta2) * delta * delta)
        return x + self.lr * m / (v.sqrt() + self.eps)


class ServerAdaGrad(ServerOptimizer):
    """FedAdaGrad's server: ``v <- v + Delta^2``, ``x <- x + eta_s Delta / (sqrt(v) + eps_s)``."""

    name = "AdaGrad"

    def __init__(self, lr: float = 0.1, eps: float = 1e-3) -> None:
        self.lr = check_positive(lr, "lr")
        self.eps = check_positive(eps, "eps")

    def init(self, dim):
        self.state = {"v": torch.zeros(dim, dtype=DTYPE)}

    def step(self, x, delta):
        self.state["v"].add_(delta * delta)
        return x + self.lr * delta / (self.state["v"].sqrt() + self.eps)


# --------------------------------------------------------------------------- the methods

METHODS = ("FedAvg", "FedAdam", "joint (ships v)", "FedAda2", "FedAda2++")


def make_method(method: str, client_lr: float, server_lr: float, *, eps_l: float = 1e-6, eps_s: float = 1e-3,
                beta1: float = 0.9, beta2: float = 0.99, delay: int = 1, sm3_cover: str = "rowcol") -> tuple[ClientOptimizer, ServerOptimizer]:
    """The (client, server) optimizer pair of one of :data:`METHODS` (Algorithm 1 of the paper for
    FedAda2, with AdaGrad clients; Algorithm 2's SM3 clients for FedAda2++)."""
    method = check_choice(method, "method", METHODS)
    if method == "FedAvg":
        return LocalSGD(client_lr), ServerAvg(server_lr)
    server = ServerAdam(server_lr, beta1, beta2, eps_s)
    if method == "FedAdam":
        return LocalSGD(client_lr), server
    if method == "FedAda2++":
        return LocalSM3(client_lr, eps_l, delay, sm3_cover), server
    return LocalAdaGrad(client_lr, eps_l, delay, "server" if method == "joint (ships v)" else "zero"), server


def floats_per_round(method: str, dim: int, clients_per_round: int = 1) -> int:
    """Floats a round moves between the server and ``clients_per_round`` clients, by the method's
    design: model down and change up (2d), plus the server's preconditioner down (3d) for the
    joint baseline. The engine's ledger counts the same figure from the traffic itself."""
    method = check_choice(method, "method", METHODS)
    dim = check_int(dim, "dim", minimum=1)
    S = check_int(clients_per_round, "clients_per_round", minimum=1)
    return (3 if method == "joint (ships v)" else 2) * dim * S


def client_state_floats(method: str, shapes: Sequence[tuple[int, ...]]) -> int:
    """Optimizer-state floats a client holds during a round: 0 for SGD, d for AdaGrad, the sum of
    m + n over matrices (and n over vectors) for SM3."""
    method = check_choice(method, "method", METHODS)
    if method in ("FedAvg", "FedAdam"):
        return 0
    if method == "FedAda2++":
        return int(sum(sum(s) for s in shapes))
    return int(sum(math.prod(s) for s in shapes))
