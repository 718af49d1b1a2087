"""Chapter 18: Momentum-SAM, sharpness-aware minimization at the cost of SGD (NeurIPS 2025).

SAM (Foret et al.) computes the gradient at an adversarially perturbed point
w + rho g / ||g||, which costs a second forward-backward pass per step. MSAM (Becker, Altrock and
Risse) perturbs along the *negative normalized momentum* instead, w - rho v / ||v||, a point
that needs no extra gradient: late in training the momentum v is anti-aligned with the current
mini-batch gradient, so that step goes uphill on the batch, as SAM's ascent step does.

What is here:

* :class:`MSAM`, :class:`SAM` and :class:`AdamWMSAM`: ``torch.optim.Optimizer`` subclasses that
  work in any training loop (``step(closure)``, the closure does forward + backward). The
  baselines SGD with momentum and Nesterov are ``torch.optim.SGD`` itself.
* :func:`hessian_top_eigenvalue` (from :mod:`optbook.core.curvature`): the sharpness lambda_max of a torch loss by power iteration on
  Hessian-vector products.
* :func:`train_moons`: the card's experiment, a 2-64-1 tanh MLP on noisy two moons, run for many
  (method, rho, seed) configurations at once in vectorized numpy (the same update rules as the
  torch optimizers; the tests check that they agree to 1e-10).
* the toy 2-D landscape with a sharp and a wide minimum, the claims and the explorers.

The update rule and the defaults follow the official code (github.com/MarlonBecker/MSAM), as read
for the card ``shared/papers/18-momentum-sam.md``; we keep the *unperturbed* weights in the
parameters between steps (the official optimizer leaves them perturbed), which is equivalent and
makes evaluation at the right point automatic.
"""
from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np
import plotly.graph_objects as go
import torch
from plotly.subplots import make_subplots

from ..claims import Measured, claim
from ..core import Trace, as_rng, check_in_range, check_int, check_positive
from ..core.curvature import global_norm as _global_norm
from ..core.curvature import hessian_top_eigenvalue  # noqa: F401  (the chapter calls ch.hessian_top_eigenvalue)
from ..viz import SliderStep, base_layout, color_for, slider_figure
from ..widgets import Explorer, Slider

#: Added to a norm before dividing by it (as in the official code).
NORM_EPS = 1e-12

# --------------------------------------------------------------------------- torch optimizers


def _check_sgd_hyper(lr, momentum, rho, weight_decay) -> None:
    check_positive(lr, "lr")
    check_in_range(momentum, "momentum", 0.0, 1.0, closed=(True, False))
    check_positive(rho, "rho", allow_zero=True)
    check_positive(weight_decay, "weight_decay", allow_zero=True)


def _call_closure(closure) -> torch.Tensor:
    if closure is None or not callable(closure):
        raise ValueError("closure must be a callable that zeroes the gradients, computes the loss, "
                         "calls backward() and returns the loss")
    with torch.enable_grad():
        loss = closure()
    if not isinstance(loss, torch.Tensor) or not torch.isfinite(loss).all():
        raise ValueError(f"closure must return a finite loss tensor, got {loss!r}")
    return loss


class _Perturbing(torch.optim.Optimizer):
    """Shared machinery: move every parameter by a perturbation, evaluate, move back exactly."""

    grad_calls: int

    def _params(self) -> list[torch.Tensor]:
        return [p for g in self.param_groups for p in g["params"]]

    def _move(self, eps: list[torch.Tensor]) -> None:
        """Save w and set the parameters to w + eps ("move up")."""
        for p, e in zip(self._params(), eps):
            self.state[p]["w"] = p.detach().clone()
            p.data.add_(e)

    def move_back(self) -> None:
        """Restore the saved unperturbed weights w exactly ("move back")."""
        for p in self._params():
            if "w" in self.state[p]:
                p.data.copy_(self.state[p].pop("w"))

    def _evaluate(self, closure) -> torch.Tensor:
        try:
            loss = _call_closure(closure)
        except ValueError:
            self.move_back()
            raise
        self.grad_calls += 1
        return loss

    def _momentum_update(self, grads: list[torch.Tensor]) -> None:
        """v <- momentum v + g, w <- w - lr v (torch.optim.SGD's rule with dampening 0)."""
        k = 0
        for group in self.param_groups:
            for p in group["params"]:
                g = grads[k]
                k += 1
                buf = self.state[p].get("momentum_buffer")
                if buf is None:
                    buf = self.state[p]["momentum_buffer"] = g.clone()
                else:
                    buf.mul_(group["momentum"]).add_(g)
                p.data.add_(buf, alpha=-group["lr"])


class MSAM(_Perturbing):
    """Momentum-SAM with SGD momentum (the paper's MSAM; ``MSAM`` in ``optimizer/msam.py``).

    One step on a batch B, with momentum v (0 at the start) and weights w:

        w_hat = w - rho v / (||v|| + 1e-12)          # ||.|| is the global norm over ALL parameters
        g     = grad L_B(w_hat) + weight_decay w_hat  # the official code decays at w_hat
        v     = momentum v + g
        w     = w - lr v

    One gradient per step, as SGD. The parameters hold the unperturbed w between steps (the
    official code keeps w_hat there and needs a "move back" before evaluation). With ``rho = 0``
    this is exactly ``torch.optim.SGD(lr, momentum)``; on the first step v = 0, so it is too.

    Parameters
    ----------
    lr, momentum : float
        Step size eta > 0 and momentum mu in [0, 1).
    rho : float
        Perturbation radius >= 0 (absolute, on the global parameter norm). Official default 0.3;
        the paper's CIFAR configs use 3 (SAM's rho there is 0.2).
    weight_decay : float
        L2 coefficient >= 0 added to the gradient at w_hat (official default 1e-2; ours 0 as in
        ``torch.optim.SGD``).

    ``step(closure)``: the closure must zero the gradients, compute the loss, call ``backward()``
    and return the loss; ``step`` returns the loss at w_hat. ``grad_calls`` counts closures.
    """

    def __init__(self, params, lr: float = 0.1, momentum: float = 0.9, rho: float = 0.3,
                 weight_decay: float = 0.0):
        _check_sgd_hyper(lr, momentum, rho, weight_decay)
        super().__init__(params, dict(lr=lr, momentum=momentum, rho=rho, weight_decay=weight_decay))
        self.grad_calls = 0

    def perturbation(self) -> list[torch.Tensor]:
        """eps = -rho v / (||v|| + 1e-12) for every parameter (zeros before the first step); its
        global norm is rho (up to the 1e-12), whatever the number of tensors."""
        out = []
        for group in self.param_groups:
            bufs = [self.state[p].get("momentum_buffer") for p in group["params"]]
            if any(b is None for b in bufs):
                out += [torch.zeros_like(p) for p in group["params"]]
                continue
            scale = group["rho"] / (_global_norm(self._all_buffers()) + NORM_EPS)
            out += [-scale * b for b in bufs]
        return out

    def _all_buffers(self) -> list[torch.Tensor]:
        return [self.state[p]["momentum_buffer"] for p in self._params()]

    @torch.no_grad()
    def step(self, closure):  # type: ignore[override]
        eps = self.perturbation()
        self._move(eps)
        loss = self._evaluate(closure)
        grads = []
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    raise ValueError("closure must call backward(): a parameter has no gradient")
                g = p.grad.detach()
                if group["weight_decay"]:
                    g = g.add(p.detach(), alpha=group["weight_decay"])  # p is w_hat here
                grads.append(g)
        self.move_back()
        self._momentum_update(grads)
        return loss


class SAM(_Perturbing):
    """Sharpness-aware minimization with SGD momentum (Foret et al., the paper's main baseline).

    One step on a batch B: g = grad L_B(w); eps = rho g / (||g|| + 1e-12) (global norm);
    g_sam = grad L_B(w + eps) + weight_decay w; v = momentum v + g_sam; w = w - lr v.
    Two gradients per step: ``step(closure)`` calls the closure twice (same batch), the usual
    two-pass SAM step. Returns the loss at w; ``grad_calls`` counts closures.
    """

    def __init__(self, params, lr: float = 0.1, momentum: float = 0.9, rho: float = 0.05,
                 weight_decay: float = 0.0):
        _check_sgd_hyper(lr, momentum, rho, weight_decay)
        super().__init__(params, dict(lr=lr, momentum=momentum, rho=rho, weight_decay=weight_decay))
        self.grad_calls = 0

    @torch.no_grad()
    def step(self, closure):  # type: ignore[override]
        loss = self._evaluate(closure)
        params = self._params()
        if any(p.grad is None for p in params):
            raise ValueError("closure must call backward(): a parameter has no gradient")
        norm = _global_norm(p.grad for p in params) + NORM_EPS
        eps = [group["rho"] / norm * p.grad.detach() for group in self.param_groups for p in group["params"]]
        self._move(eps)
        self._evaluate(closure)
        grads = [p.grad.detach().clone() for p in params]
        self.move_back()
        k = 0
        for group in self.param_groups:
            for p in group["params"]:
                if group["weight_decay"]:
                    grads[k].add_(p.detach(), alpha=group["weight_decay"])
                k += 1
        self._momentum_update(grads)
        return loss


class AdamWMSAM(_Perturbing):
    """MSAM applied to AdamW (``AdamW_MSAM`` in the official ``optimizer/adamW_msam.py``).

    The gradient is evaluated at w_hat = w - rho m / (||m|| + 1e-12), m the Adam first moment
    (global norm); the AdamW update is otherwise unchanged: w <- w (1 - lr wd), then
    w <- w - lr m_hat / (sqrt(v_hat) + eps) with bias-corrected moments. ``rho = 0`` is
    ``torch.optim.AdamW``. Official default rho = 1.
    """

    def __init__(self, params, lr: float = 1e-3, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 1e-2, rho: float = 1.0):
        check_positive(lr, "lr")
        if not isinstance(betas, (tuple, list)) or len(betas) != 2:
            raise ValueError(f"betas must be a pair of numbers, got {betas!r}")
        check_in_range(betas[0], "betas[0]", 0.0, 1.0, closed=(True, False))
        check_in_range(betas[1], "betas[1]", 0.0, 1.0, closed=(True, False))
        check_positive(eps, "eps")
        check_positive(weight_decay, "weight_decay", allow_zero=True)
        check_positive(rho, "rho", allow_zero=True)
        super().__init__(params, dict(lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay, rho=rho))
        self.grad_calls = 0

    @torch.no_grad()
    def step(self, closure):  # type: ignore[override]
        params = self._params()
        if all("exp_avg" in self.state[p] for p in params):
            norm = _global_norm(self.state[p]["exp_avg"] for p in params) + NORM_EPS
            eps = [-group["rho"] / norm * self.state[p]["exp_avg"]
                   for group in self.param_groups for p in group["params"]]
        else:
            eps = [torch.zeros_like(p) for p in params]
        self._move(eps)
        loss = self._evaluate(closure)
        if any(p.grad is None for p in params):
            self.move_back()
            raise ValueError("closure must call backward(): a parameter has no gradient")
        grads = [p.grad.detach().clone() for p in params]
        self.move_back()
        k = 0
        for group in self.param_groups:
            b1, b2 = group["betas"]
            for p in group["params"]:
                g, st = grads[k], self.state[p]
                k += 1
                if "exp_avg" not in st:
                    st["step"], st["exp_avg"], st["exp_avg_sq"] = 0, torch.zeros_like(p), torch.zeros_like(p)
                st["step"] += 1
                t = st["step"]
                p.data.mul_(1.0 - group["lr"] * group["weight_decay"])
                st["exp_avg"].mul_(b1).add_(g, alpha=1.0 - b1)
                st["exp_avg_sq"].mul_(b2).addcmul_(g, g, value=1.0 - b2)
                denom = (st["exp_avg_sq"] / (1.0 - b2 ** t)).sqrt().add_(group["eps"])
                p.data.addcdiv_(st["exp_avg"], denom, value=-group["lr"] / (1.0 - b1 ** t))
        return loss


def make_optimizer(method: str, params, *, lr: float = 0.1, momentum: float = 0.9, rho: float = 0.0):
    """The chapter's four methods by name: ``"SGD-M"`` and ``"NAG"`` (``torch.optim.SGD``, the
    latter with ``nesterov=True``), ``"SAM"`` and ``"MSAM"``."""
    if method == "SGD-M":
        return torch.optim.SGD(params, lr=lr, momentum=momentum)
    if method == "NAG":
        return torch.optim.SGD(params, lr=lr, momentum=momentum, nesterov=True)
    if method == "SAM":
        return SAM(params, lr=lr, momentum=momentum, rho=rho)
    if method == "MSAM":
        return MSAM(params, lr=lr, momentum=momentum, rho=rho)
    raise ValueError(f"method must be one of {METHODS}, got {method!r}")


METHODS = ("SGD-M", "NAG", "SAM", "MSAM")


# --------------------------------------------------------------------------- sharpness


# --------------------------------------------------------------------------- data and MLP


def two_moons(n: int, *, noise: float = 0.25, flip: float = 0.1, rng=None) -> tuple[np.ndarray, np.ndarray]:
    """The two-moons data set (n points, Gaussian noise ``noise``) with a fraction ``flip`` of
    labels flipped at random (the card's label noise). Returns X (n, 2) and y (n,) in {0, 1}."""
    n = check_int(n, "n", minimum=2)
    noise = check_positive(noise, "noise", allow_zero=True)
    flip = check_in_range(flip, "flip", 0.0, 0.5, closed=(True, False))
    gen = as_rng(rng)
    n0 = n // 2
    t0, t1 = np.pi * gen.random(n0), np.pi * gen.random(n - n0)
    X = np.concatenate([np.c_[np.cos(t0), np.sin(t0)], np.c_[1.0 - np.cos(t1), 0.5 - np.sin(t1)]])
    y = np.r_[np.zeros(n0), np.ones(n - n0)]
    X = X + noise * gen.standard_normal(X.shape)
    flipped = gen.random(n) < flip
    y[flipped] = 1.0 - y[flipped]
    return X, y


def init_mlp(seed: int, hidden: int = 64) -> dict[str, np.ndarray]:
    """A 2-hidden-1 MLP initialised like ``torch.nn.Linear`` (uniform +- 1/sqrt(fan_in))."""
    gen = as_rng(seed, "seed")
    hidden = check_int(hidden, "hidden", minimum=1)
    a1, a2 = 1.0 / np.sqrt(2.0), 1.0 / np.sqrt(hidden)
    return {"W1": gen.uniform(-a1, a1, (2, hidden)), "b1": gen.uniform(-a1, a1, hidden),
            "W2": gen.uniform(-a2, a2, hidden), "b2": gen.uniform(-a2, a2, ())}


_KEYS = ("W1", "b1", "W2", "b2")


def _forward(P: dict, X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Batched forward: P holds K stacked networks, X is (K, B, 2). Returns h (K,B,H), z (K,B)."""
    h = np.tanh(X @ P["W1"] + P["b1"][:, None, :])
    return h, (h @ P["W2"][:, :, None])[:, :, 0] + P["b2"][:, None]


def _logistic(z: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Mean logistic loss per network, softplus(z) - y z, computed stably."""
    return (np.logaddexp(0.0, z) - y * z).mean(axis=1)


def _loss_grad(P: dict, X: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, dict]:
    """Batched mean logistic loss (K,) and its gradient (backpropagation by hand)."""
    h, z = _forward(P, X)
    dz = (0.5 * (1.0 + np.tanh(0.5 * z)) - y) / z.shape[1]
    dh = dz[:, :, None] * P["W2"][:, None, :] * (1.0 - h * h)
    grad = {"W1": X.transpose(0, 2, 1) @ dh, "b1": dh.sum(axis=1),
            "W2": (dz[:, None, :] @ h)[:, 0, :], "b2": dz.sum(axis=1)}
    return _logistic(z, y), grad


def _loss(P: dict, X: np.ndarray, y: np.ndarray) -> np.ndarray:
    return _logistic(_forward(P, X)[1], y)


def _norm(T: dict) -> np.ndarray:
    """Global L2 norm of each of the K stacked networks."""
    return np.sqrt(sum((T[k] ** 2).reshape(T[k].shape[0], -1).sum(axis=1) for k in _KEYS))


def _axpy(P: dict, a: np.ndarray, D: dict) -> dict:
    """P + a D with a per-network coefficient a (K,)."""
    return {k: P[k] + a.reshape((-1,) + (1,) * (P[k].ndim - 1)) * D[k] for k in _KEYS}


def batched_lambda_max(P: dict, X: np.ndarray, y: np.ndarray, *, maxiter: int = 150,
                       tol: float = 1e-5, seed: int = 0, h: float = 1e-4) -> np.ndarray:
    """lambda_max of the full-data loss Hessian of each of K stacked networks, by power iteration.

    The Hessian-vector products are central differences of the exact (backpropagated) gradient,
    H v = (g(w + h v) - g(w - h v)) / (2 h) + O(h^2) for a unit v, so every network costs two
    batched gradients per iteration. Each network's estimate stops moving once its relative
    change is below ``tol`` (all of them, or ``maxiter``). The tests check it against the exact
    Hessian of a torch copy of the network.
    """
    maxiter = check_int(maxiter, "maxiter", minimum=1)
    tol, h = check_positive(tol, "tol"), check_positive(h, "h")
    K = P["b2"].shape[0]
    XK, yK = np.broadcast_to(X, (K,) + X.shape), np.broadcast_to(y, (K,) + y.shape)
    gen = np.random.default_rng(seed)
    vec = {k: gen.standard_normal(P[k].shape) for k in _KEYS}
    lam = np.full(K, np.nan)
    for _ in range(maxiter):
        vec = _axpy({k: np.zeros_like(P[k]) for k in _KEYS}, 1.0 / _norm(vec), vec)
        gp = _loss_grad(_axpy(P, np.full(K, h), vec), XK, yK)[1]
        gm = _loss_grad(_axpy(P, np.full(K, -h), vec), XK, yK)[1]
        hv = {k: (gp[k] - gm[k]) / (2.0 * h) for k in _KEYS}
        new = sum((hv[k] * vec[k]).reshape(K, -1).sum(axis=1) for k in _KEYS)
        vec = hv
        if np.all(np.abs(new - lam) <= tol * np.maximum(np.abs(new), 1e-12)):
            return new
        lam = new
    return lam


# --------------------------------------------------------------------------- the experiment


@dataclass(frozen=True)
class Spec:
    """One configuration of the moons experiment: method (one of :data:`METHODS`), radius, seed."""

    method: str
    rho: float = 0.0
    seed: int = 0

    @property
    def label(self) -> str:
        return self.method if self.method in ("SGD-M", "NAG") else f"{self.method} (rho = {self.rho:g})"


@dataclass
class MoonsRun:
    """What :func:`train_moons` measured for each configuration (arrays indexed like ``specs``)."""

    specs: list[Spec]
    traces: list[Trace]
    lambda_max: np.ndarray
    train_loss: np.ndarray
    test_acc: np.ndarray
    grad_calls: np.ndarray
    cos: np.ndarray = field(repr=False)
    rise: np.ndarray = field(repr=False)
    params: dict = field(repr=False)
    seconds: float = 0.0

    def select(self, method: str, rho: float | None = None) -> np.ndarray:
        """Indices of the configurations of ``method`` (and radius ``rho``)."""
        return np.array([i for i, s in enumerate(self.specs)
                         if s.method == method and (rho is None or np.isclose(s.rho, rho))], dtype=int)


MOONS = dict(n_train=300, n_test=2000, noise=0.25, flip=0.1, data_seed=0)


@lru_cache(maxsize=2)
def moons_data(n_train: int = 300, n_test: int = 2000, noise: float = 0.25, flip: float = 0.1,
               data_seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The card's data: noisy two moons, 10% flipped training labels, clean-label test set."""
    gen = np.random.default_rng(data_seed)
    X, y = two_moons(n_train, noise=noise, flip=flip, rng=gen)
    Xt, yt = two_moons(n_test, noise=noise, flip=0.0, rng=gen)
    return X, y, Xt, yt


def train_moons(specs: Sequence[Spec], *, epochs: int = 300, batch_size: int = 32, lr: float = 0.1,
                momentum: float = 0.9, monitor_rho: float = 1.0, data: dict | None = None) -> MoonsRun:
    """Train one MLP per configuration on the two-moons task, all at once (vectorized numpy).

    Each configuration has its own initialisation and batch order (from its seed). The update
    rules are those of the torch optimizers: SGD-M and NAG as ``torch.optim.SGD`` (NAG with
    ``nesterov=True``: v <- mu v + g, w <- w - lr (g + mu v), whose iterates are the look-ahead
    points of Sutskever's form), :class:`SAM` and :class:`MSAM`. No weight decay.

    Monitoring, every step (forward passes not counted as gradient calls): the cosine between
    the batch gradient at the evaluation point and the momentum before the step, and whether
    L_B(w - monitor_rho v/||v||) > L_B(w) (the mechanism; for SGD-M the evaluation point is w).

    Returns a :class:`MoonsRun`: traces of the train loss at the unperturbed weights (about 60
    points per run) with the cumulative gradient calls, and the final lambda_max of the full training loss, train loss, test accuracy, gradient calls.
    """
    specs = list(specs)
    if not specs or not all(isinstance(s, Spec) for s in specs):
        raise ValueError("specs must be a non-empty list of Spec")
    for s in specs:
        if s.method not in METHODS:
            raise ValueError(f"specs: method must be one of {METHODS}, got {s.method!r}")
        check_positive(s.rho, "rho", allow_zero=True)
        check_int(s.seed, "seed")
    epochs = check_int(epochs, "epochs", minimum=1)
    batch_size = check_int(batch_size, "batch_size", minimum=1)
    lr = check_positive(lr, "lr")
    momentum = check_in_range(momentum, "momentum", 0.0, 1.0, closed=(True, False))
    monitor_rho = check_positive(monitor_rho, "monitor_rho")
    X, y, Xt, yt = moons_data(**(data or MOONS))
    K, n = len(specs), len(y)
    t_start = time.perf_counter()

    inits = [init_mlp(s.seed) for s in specs]
    P = {k: np.stack([p[k] for p in inits]) for k in _KEYS}
    V = {k: np.zeros_like(P[k]) for k in _KEYS}
    gens = [np.random.default_rng([s.seed, 1]) for s in specs]
    method = np.array([s.method for s in specs])
    rho = np.array([s.rho for s in specs])
    is_sam, is_msam, is_nag = method == "SAM", method == "MSAM", method == "NAG"
    sam_idx = np.flatnonzero(is_sam)
    calls = np.zeros(K)
    traces = [Trace(s.label, meta=dict(method=s.method, rho=s.rho, seed=s.seed, lr=lr, momentum=momentum))
              for s in specs]
    XK, yK = np.broadcast_to(X, (K,) + X.shape), np.broadcast_to(y, (K, n))
    XtK, ytK = np.broadcast_to(Xt, (K,) + Xt.shape), np.broadcast_to(yt, (K, len(yt)))
    cos_rows, rise_rows = [], []

    every = max(1, epochs // 60)

    def record(epoch: int) -> None:
        train = _loss(P, XK, yK)
        for k, tr in enumerate(traces):
            tr.record(objective=train[k], step_size=lr, iteration=epoch, grad_calls=calls[k])

    record(0)
    for epoch in range(1, epochs + 1):
        perms = np.stack([g.permutation(n) for g in gens])
        for start in range(0, n, batch_size):
            idx = perms[:, start:start + batch_size]
            Xb, yb = X[idx], y[idx]
            vnorm = _norm(V)
            unit = np.where(vnorm > 0, 1.0 / (vnorm + NORM_EPS), 0.0)
            # evaluation offset: MSAM -rho v/||v||; SGD-M, NAG and SAM (first pass) none
            coef = np.where(is_msam, -rho * unit, 0.0)
            _, G = _loss_grad(_axpy(P, coef, V), Xb, yb)
            calls += 1
            if sam_idx.size:
                Ps = {k: P[k][sam_idx] for k in _KEYS}
                Gs = {k: G[k][sam_idx] for k in _KEYS}
                scale = rho[sam_idx] / (_norm(Gs) + NORM_EPS)
                _, G2 = _loss_grad(_axpy(Ps, scale, Gs), Xb[sam_idx], yb[sam_idx])
                for k in _KEYS:
                    G[k][sam_idx] = G2[k]
                calls[sam_idx] += 1
            gnorm = _norm(G)
            dot = sum((G[k] * V[k]).reshape(K, -1).sum(axis=1) for k in _KEYS)
            cos_rows.append(np.where(vnorm > 0, dot / (gnorm * vnorm + NORM_EPS), np.nan))
            l0 = _loss(P, Xb, yb)
            l1 = _loss(_axpy(P, -monitor_rho * unit, V), Xb, yb)
            rise_rows.append(np.where(vnorm > 0, (l1 > l0).astype(float), np.nan))
            V = {k: momentum * V[k] + G[k] for k in _KEYS}
            # SGD-M, SAM, MSAM: w -= lr v;  NAG (torch's nesterov=True): w -= lr (g + mu v)
            D = _axpy(V, is_nag.astype(float), _axpy(G, np.full(K, momentum - 1.0), V))
            P = _axpy(P, np.full(K, -lr), D)
        if epoch % every == 0 or epoch == epochs:
            record(epoch)

    lam = batched_lambda_max(P, X, y)
    acc = ((_forward(P, XtK)[1] > 0) == (ytK > 0.5)).mean(axis=1)
    return MoonsRun(specs, traces, lam, np.array([tr.objective[-1] for tr in traces]), acc, calls,
                    np.array(cos_rows), np.array(rise_rows), P, time.perf_counter() - t_start)


#: The rho grid of the sweep (MSAM), and the radius of SAM (the card's reference run).
RHO_GRID = (0.0, 0.1, 0.3, 0.5, 1.0, 2.0, 3.0, 5.0)
SAM_RHO = 0.2
SEEDS = (0, 1, 2)


@lru_cache(maxsize=4)
def moons_sweep(epochs: int = 300, seeds: tuple[int, ...] = SEEDS, rhos: tuple[float, ...] = RHO_GRID) -> MoonsRun:
    """SGD-M, NAG, SAM (rho = 0.2) and MSAM at every rho of ``rhos``, for every seed, in one
    vectorized run (cached: the claims and the explorers share it)."""
    specs = [Spec("SGD-M", 0.0, s) for s in seeds] + [Spec("NAG", 0.0, s) for s in seeds]
    specs += [Spec("SAM", SAM_RHO, s) for s in seeds]
    specs += [Spec("MSAM", r, s) for r in rhos for s in seeds if r > 0]
    return train_moons(specs, epochs=epochs)


def sweep_summary(run: MoonsRun) -> dict[str, dict[str, float]]:
    """Seed means (and standard deviations) of lambda_max, train loss and test accuracy per label."""
    out: dict[str, dict[str, float]] = {}
    for label in dict.fromkeys(s.label for s in run.specs):
        idx = np.array([i for i, s in enumerate(run.specs) if s.label == label])
        out[label] = {"lambda_max": float(run.lambda_max[idx].mean()),
                      "lambda_max_sd": float(run.lambda_max[idx].std()),
                      "train_loss": float(run.train_loss[idx].mean()),
                      "test_acc": float(run.test_acc[idx].mean()),
                      "test_acc_sd": float(run.test_acc[idx].std()),
                      "grad_calls": float(run.grad_calls[idx].mean())}
    return out


def mechanism(run: MoonsRun, method: str = "SGD-M") -> dict[str, float]:
    """Over the second half of the runs of ``method``: the mean cosine of the batch gradient with
    the momentum, and the fraction of steps where L_B(w - rho v/||v||) > L_B(w)."""
    idx = run.select(method)
    half = run.cos.shape[0] // 2
    return {"mean_cos": float(np.nanmean(run.cos[half:, idx])),
            "rise_fraction": float(np.nanmean(run.rise[half:, idx]))}


# --------------------------------------------------------------------------- cost (torch)


def _torch_mlp(seed: int) -> torch.nn.Module:
    init = init_mlp(seed)
    net = torch.nn.Sequential(torch.nn.Linear(2, 64), torch.nn.Tanh(), torch.nn.Linear(64, 1)).double()
    with torch.no_grad():
        net[0].weight.copy_(torch.tensor(init["W1"].T))
        net[0].bias.copy_(torch.tensor(init["b1"]))
        net[2].weight.copy_(torch.tensor(init["W2"][None, :]))
        net[2].bias.copy_(torch.tensor(init["b2"]).reshape(1))
    return net


def torch_epoch_costs(epochs: int = 3, seed: int = 0, rho: dict[str, float] | None = None) -> dict[str, dict[str, float]]:
    """Train the moons MLP with each torch optimizer (SGD-M, NAG, SAM, MSAM) for ``epochs``
    epochs and measure gradient calls per step (counted: closure calls) and wall seconds per
    epoch (median over epochs; measured, not asserted)."""
    epochs = check_int(epochs, "epochs", minimum=1)
    rho = {"SAM": SAM_RHO, "MSAM": 1.0, **(rho or {})}
    X, y, _, _ = moons_data(**MOONS)
    Xt, yt = torch.tensor(X), torch.tensor(y)
    lossf = torch.nn.BCEWithLogitsLoss()
    out = {}
    for name in METHODS:
        net = _torch_mlp(seed)
        opt = make_optimizer(name, net.parameters(), rho=rho.get(name, 0.0))
        gen = torch.Generator().manual_seed(seed)
        calls, steps, per_epoch = 0, 0, []
        for _ in range(epochs):
            t0 = time.perf_counter()
            perm = torch.randperm(len(yt), generator=gen)
            for start in range(0, len(yt), 32):
                idx = perm[start:start + 32]

                def closure():
                    nonlocal calls
                    calls += 1
                    opt.zero_grad()
                    loss = lossf(net(Xt[idx]).squeeze(-1), yt[idx])
                    loss.backward()
                    return loss

                opt.step(closure)
                steps += 1
            per_epoch.append(time.perf_counter() - t0)
        out[name] = {"grads_per_step": calls / steps, "seconds_per_epoch": float(np.median(per_epoch))}
    return out


# --------------------------------------------------------------------------- the 2-D toy landscape

#: Sharp minimum (centre, width, depth) and wide minimum of :func:`toy_loss`.
TOY_SHARP = ((-1.0, 0.6), 0.22, 1.0)
TOY_WIDE = ((1.2, -0.4), 0.9, 0.8)
TOY_START = (-0.6, 1.0)


def toy_loss(w: torch.Tensor | np.ndarray):
    """A 2-D loss with a deep, sharp minimum and a shallower, wide one:

        f(w) = 1 - 1.0 exp(-|w - c_s|^2 / (2 0.22^2)) - 0.8 exp(-|w - c_w|^2 / (2 0.9^2)) + 0.05 |w|^2.

    Works on a torch tensor or a numpy array whose last axis has length 2."""
    lib = torch if isinstance(w, torch.Tensor) else np
    out = 1.0 + 0.05 * (w ** 2).sum(-1)
    for (c, s, a) in (TOY_SHARP, TOY_WIDE):
        d2 = (w[..., 0] - c[0]) ** 2 + (w[..., 1] - c[1]) ** 2
        out = out - a * lib.exp(-d2 / (2.0 * s * s))
    return out


def toy_grad(w: np.ndarray) -> np.ndarray:
    """Gradient of :func:`toy_loss` (numpy, last axis of length 2)."""
    g = 0.1 * w
    for (c, s, a) in (TOY_SHARP, TOY_WIDE):
        d = w - np.asarray(c)
        g = g + (a / (s * s)) * np.exp(-(d ** 2).sum(-1) / (2.0 * s * s))[..., None] * d
    return g


def toy_paths_torch(lr: float = 0.05, momentum: float = 0.9, rho: float = 0.3, steps: int = 120,
                    noise: float = 0.3, seed: int = 0, start=TOY_START) -> dict[str, np.ndarray]:
    """Run SGD-M, NAG, SAM and MSAM (the torch optimizers) on :func:`toy_loss` from the same start
    with the same "mini-batch" noise: batch t has the loss f(w) + xi_t . w with
    xi_t ~ N(0, noise^2 I), so its gradient is a noisy gradient of f. SAM and MSAM use the same
    radius ``rho``. Returns the (steps + 1) x 2 path of each method."""
    lr = check_positive(lr, "lr")
    momentum = check_in_range(momentum, "momentum", 0.0, 1.0, closed=(True, False))
    rho = check_positive(rho, "rho", allow_zero=True)
    steps = check_int(steps, "steps", minimum=1)
    xis = torch.tensor(_toy_noise(noise, seed, steps))
    out = {}
    for name in METHODS:
        w = torch.tensor(start, dtype=torch.float64, requires_grad=True)
        opt = make_optimizer(name, [w], lr=lr, momentum=momentum, rho=rho)
        path = [w.detach().numpy().copy()]
        for t in range(steps):
            def closure():
                opt.zero_grad()
                loss = toy_loss(w) + xis[t] @ w
                loss.backward()
                return loss

            opt.step(closure)
            path.append(w.detach().numpy().copy())
        out[name] = np.array(path)
    return out


def _toy_noise(noise: float, seed: int, steps: int) -> np.ndarray:
    noise = check_positive(noise, "noise", allow_zero=True)
    return np.random.default_rng(seed).normal(0.0, noise, (steps, 2))


@lru_cache(maxsize=512)
def toy_paths(lr: float = 0.05, momentum: float = 0.9, rho: float = 0.3, steps: int = 120,
              noise: float = 0.3, seed: int = 0, start=TOY_START) -> dict[str, np.ndarray]:
    """The same four runs as :func:`toy_paths_torch` (same rules, same noise), vectorized in numpy
    so that a slider move redraws at once; the tests check both agree to 1e-10. Cached."""
    lr = check_positive(lr, "lr")
    momentum = check_in_range(momentum, "momentum", 0.0, 1.0, closed=(True, False))
    rho = check_positive(rho, "rho", allow_zero=True)
    steps = check_int(steps, "steps", minimum=1)
    xis = _toy_noise(noise, seed, steps)
    w = np.tile(np.asarray(start, dtype=float), (4, 1))       # rows: SGD-M, NAG, SAM, MSAM
    v = np.zeros_like(w)
    paths = [w.copy()]
    for t in range(steps):
        vn = np.linalg.norm(v, axis=1, keepdims=True)
        offset = np.zeros_like(w)
        offset[3] = -rho * v[3] / (vn[3] + NORM_EPS) if vn[3, 0] > 0 else 0.0
        g = toy_grad(w + offset) + xis[t]
        g_sam = g[2]
        g[2] = toy_grad(w[2] + rho * g_sam / (np.linalg.norm(g_sam) + NORM_EPS)) + xis[t]
        v = momentum * v + g if t else g.copy()
        w = w - lr * v
        w[1] -= lr * momentum * v[1] + lr * g[1] - lr * v[1]   # NAG as torch: w -= lr (g + mu v)
        paths.append(w.copy())
    arr = np.array(paths)
    return {name: arr[:, i] for i, name in enumerate(METHODS)}


# --------------------------------------------------------------------------- figures and explorers

_COLORS = {"SGD-M": color_for(0), "NAG": color_for(3), "SAM": color_for(2), "MSAM": color_for(1)}
READOUTS = (("lambda_max", "sharpness lambda_max"), ("train_loss", "train loss"), ("test_acc", "test accuracy"))


def rho_traces(rho: float, epochs: int = 300) -> list:
    """Traces of the rho explorer: per readout, the MSAM curve over the grid, the current rho
    (a big marker), and SGD-M / SAM as horizontal reference lines (seed means)."""
    summary = sweep_summary(moons_sweep(epochs))
    rhos = [r for r in RHO_GRID if r > 0]
    msam = [summary[f"MSAM (rho = {r:g})"] for r in rhos]
    rho = min(rhos, key=lambda r: abs(r - rho)) if rho > 0 else rhos[0]
    cur = summary[f"MSAM (rho = {rho:g})"]
    out = []
    for j, (key, _) in enumerate(READOUTS):
        ax = "" if j == 0 else str(j + 1)
        kw = dict(xaxis=f"x{ax}", yaxis=f"y{ax}", showlegend=j == 0)
        out.append(go.Scatter(x=rhos, y=[m[key] for m in msam], mode="lines", name="MSAM (sweep)",
                              line=dict(color=_COLORS["MSAM"], width=2), **kw))
        out.append(go.Scatter(x=[rho], y=[cur[key]], mode="markers", name="MSAM at the slider's rho",
                              marker=dict(color=_COLORS["MSAM"], size=14, symbol="diamond"), **kw))
        for name, label in (("SGD-M", "SGD-M"), ("SAM", f"SAM (rho = {SAM_RHO:g})")):
            out.append(go.Scatter(x=[rhos[0], rhos[-1]], y=[summary[label][key]] * 2, mode="lines",
                                  name=label, line=dict(color=_COLORS[name], dash="dash"), **kw))
    return out


def _rho_layout(fig: go.Figure) -> go.Figure:
    base_layout(fig, height=420)
    for j, (_, title) in enumerate(READOUTS):
        ax = "" if j == 0 else str(j + 1)
        fig.update_layout({f"xaxis{ax}": dict(type="log", title_text="MSAM radius rho"),
                           f"yaxis{ax}": dict(title_text=title, type="log" if j == 0 else None)})
    return fig


def rho_figure(rho: float = 1.0) -> go.Figure:
    """Live explorer: the three readouts at one rho of the grid against SGD-M and SAM."""
    fig = make_subplots(rows=1, cols=3, horizontal_spacing=0.09)
    for tr in rho_traces(rho):
        fig.add_trace(tr)
    return _rho_layout(fig)


def rho_slider_figure(epochs: int = 300) -> go.Figure:
    """Static twin of :data:`EXPLORER_RHO` (one frame per rho of the grid)."""
    rhos = [r for r in RHO_GRID if r > 0]
    steps = [SliderStep(f"{r:g}", rho_traces(r, epochs)) for r in rhos]
    fig = slider_figure(steps, slider_label="MSAM radius rho", active=rhos.index(1.0), fixed_axes=False,
                        height=460)
    skeleton = make_subplots(rows=1, cols=3, horizontal_spacing=0.09)
    fig.update_layout(**{k: v for k, v in skeleton.layout.to_plotly_json().items()
                         if k.startswith(("xaxis", "yaxis"))})
    return _rho_layout(fig).update_layout(height=460, margin=dict(b=110))


@lru_cache(maxsize=2)
def _toy_grid(n: int = 60) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    xs, ys = np.linspace(-2.0, 2.8, n), np.linspace(-2.0, 2.0, n)
    W = np.stack(np.meshgrid(xs, ys), axis=-1)
    return xs.round(3), ys.round(3), toy_loss(W).round(3)


def toy_traces(lr: float = 0.05, momentum: float = 0.9, rho: float = 0.3) -> list:
    """Contour of the toy landscape, the four paths (thinned) and their end points."""
    xs, ys, Z = _toy_grid()
    out = [go.Contour(x=xs, y=ys, z=Z, colorscale="Greys", reversescale=True, ncontours=25, showscale=False,
                      showlegend=False, contours=dict(showlines=True), line=dict(width=0.4), opacity=0.7,
                      hoverinfo="skip")]
    for name, path in toy_paths(lr, momentum, rho).items():
        label = f"{name} (rho = {rho:g})" if name in ("SAM", "MSAM") else name
        out.append(go.Scatter(x=path[::2, 0], y=path[::2, 1], mode="lines", name=label,
                              line=dict(color=_COLORS[name], width=2)))
        out.append(go.Scatter(x=path[-1:, 0], y=path[-1:, 1], mode="markers", showlegend=False, name=f"{name} end",
                              marker=dict(color=_COLORS[name], size=13, symbol="x")))
    return out


def _toy_layout(fig: go.Figure) -> go.Figure:
    base_layout(fig, xaxis_title="w<sub>1</sub>", yaxis_title="w<sub>2</sub>", height=520)
    fig.update_xaxes(range=[-2.0, 2.8], autorange=False)
    fig.update_yaxes(range=[-2.0, 2.0], autorange=False, scaleanchor="x")
    fig.add_annotation(x=TOY_SHARP[0][0], y=TOY_SHARP[0][1] + 0.35, text="sharp", showarrow=False)
    fig.add_annotation(x=TOY_WIDE[0][0], y=TOY_WIDE[0][1] - 1.1, text="wide", showarrow=False)
    return fig


def toy_figure(lr: float = 0.05, momentum: float = 0.9, rho: float = 0.3) -> go.Figure:
    """Live explorer: SGD-M, NAG, SAM and MSAM on the 2-D toy landscape (X marks the end)."""
    return _toy_layout(go.Figure(toy_traces(lr, momentum, rho)))


TOY_RHOS = (0.0, 0.1, 0.2, 0.3, 0.5, 0.8)


def toy_slider_figure(lr: float = 0.05, momentum: float = 0.9) -> go.Figure:
    """Static twin of :data:`EXPLORER_TOY`: a slider over rho (lr and momentum fixed)."""
    steps = [SliderStep(f"{r:g}", toy_traces(lr, momentum, r)) for r in TOY_RHOS]
    fig = slider_figure(steps, slider_label="rho (SAM and MSAM)", active=TOY_RHOS.index(0.3), fixed_axes=False)
    return _toy_layout(fig).update_layout(margin=dict(b=110))


EXPLORER_RHO = Explorer("18", "rho", rho_figure, {
    "rho": Slider("MSAM radius rho", [r for r in RHO_GRID if r > 0], 1.0)},
    description="MSAM's radius against sharpness, train loss and test accuracy (moons MLP, 3 seeds)")
EXPLORER_TOY = Explorer("18", "toy", toy_figure, {
    "lr": Slider("learning rate", [0.02, 0.05, 0.1], 0.05),
    "momentum": Slider("momentum mu", [0.5, 0.8, 0.9], 0.9),
    "rho": Slider("rho (SAM, MSAM)", list(TOY_RHOS), 0.3)},
    description="SGD-M, NAG, SAM and MSAM on a landscape with a sharp and a wide minimum")


def cost_figure(costs: dict[str, dict[str, float]]) -> go.Figure:
    """Bars: gradient evaluations per step (counted) and wall seconds per epoch (measured)."""
    fig = make_subplots(rows=1, cols=2, subplot_titles=("gradient evaluations per step (counted)",
                                                        "wall time per epoch, ms (measured once)"))
    names = list(costs)
    colors = [_COLORS[n] for n in names]
    fig.add_trace(go.Bar(x=names, y=[costs[n]["grads_per_step"] for n in names], marker_color=colors,
                         showlegend=False), row=1, col=1)
    fig.add_trace(go.Bar(x=names, y=[1e3 * costs[n]["seconds_per_epoch"] for n in names], marker_color=colors,
                         showlegend=False), row=1, col=2)
    base_layout(fig, height=360)
    fig.update_yaxes(title_text="gradients / step", row=1, col=1)
    fig.update_yaxes(title_text="ms / epoch", row=1, col=2)
    return fig


# --------------------------------------------------------------------------- claims


def _claim_run(fast: bool) -> MoonsRun:
    if fast:
        specs = [Spec(m, r, s) for m, r in (("SGD-M", 0.0), ("SAM", SAM_RHO), ("MSAM", 1.0)) for s in SEEDS]
        return train_moons(specs, epochs=150)
    return moons_sweep(300)


@claim("18", "MSAM (rho = 1) finds flatter minima than SGD-M at the same number of gradient calls",
       expect="mean lambda_max(MSAM, rho=1) <= 0.5 x mean lambda_max(SGD-M), equal gradient calls (3 seeds)",
       name="sharpness")
def claim_sharpness(fast: bool = False) -> Measured:
    run = _claim_run(fast)
    s = sweep_summary(run)
    sgd, msam, sam = s["SGD-M"], s["MSAM (rho = 1)"], s[f"SAM (rho = {SAM_RHO:g})"]
    ratio = msam["lambda_max"] / sgd["lambda_max"]
    equal = msam["grad_calls"] == sgd["grad_calls"]
    return Measured({"lambda_max_SGDM": sgd["lambda_max"], "lambda_max_MSAM_rho1": msam["lambda_max"],
                     "lambda_max_SAM": sam["lambda_max"], "ratio": ratio,
                     "grad_calls_MSAM": msam["grad_calls"], "grad_calls_SGDM": sgd["grad_calls"]},
                    holds=bool(ratio <= 0.5 and equal),
                    summary=f"lambda_max ratio MSAM/SGD-M = {ratio:.2f}", details=run)


@claim("18", "At rho = 1 MSAM's test accuracy stays within noise of SGD-M's",
       expect="mean test accuracy(MSAM, rho=1) >= mean test accuracy(SGD-M) - 0.01 (3 seeds)",
       name="accuracy", reproduces=False)
def claim_accuracy(fast: bool = False) -> Measured:
    run = _claim_run(fast)
    s = sweep_summary(run)
    sgd, msam = s["SGD-M"], s["MSAM (rho = 1)"]
    gap = msam["test_acc"] - sgd["test_acc"]
    return Measured({"test_acc_SGDM": sgd["test_acc"], "test_acc_MSAM_rho1": msam["test_acc"],
                     "difference": gap, "train_loss_SGDM": sgd["train_loss"],
                     "train_loss_MSAM_rho1": msam["train_loss"]},
                    holds=bool(gap >= -0.01), summary=f"accuracy difference {100 * gap:+.1f} points", details=run)


@claim("18", "The mechanism: late in SGD-M training the batch gradient points against the momentum",
       expect="over the second half of SGD-M: mean cos(g_B, v) < 0 and L_B(w - v/|v|) > L_B(w) in > 60% of steps",
       name="mechanism")
def claim_mechanism(fast: bool = False) -> Measured:
    mech = mechanism(_claim_run(fast))
    return Measured(mech, holds=bool(mech["mean_cos"] < 0 and mech["rise_fraction"] > 0.6),
                    summary=f"mean cosine {mech['mean_cos']:.2f}, loss rose in {100 * mech['rise_fraction']:.0f}% of steps")


@claim("18", "MSAM costs what SGD-M costs: one gradient per step, half of SAM",
       expect="gradient evaluations per step: MSAM = SGD-M = NAG = 1, SAM = 2 (counted; wall time shown, not asserted)",
       name="cost")
def claim_cost(fast: bool = False) -> Measured:
    costs = torch_epoch_costs(epochs=2 if fast else 4)
    values = {f"grads_per_step_{k}": v["grads_per_step"] for k, v in costs.items()}
    values.update({f"ms_per_epoch_{k}": 1e3 * v["seconds_per_epoch"] for k, v in costs.items()})
    holds = (costs["MSAM"]["grads_per_step"] == costs["SGD-M"]["grads_per_step"] == costs["NAG"]["grads_per_step"] == 1
             and costs["SAM"]["grads_per_step"] == 2)
    return Measured(values, holds=bool(holds), details=costs,
                    summary=f"SAM/MSAM wall-time ratio {costs['SAM']['seconds_per_epoch'] / costs['MSAM']['seconds_per_epoch']:.2f}")


def watch_figure(epochs: int = 300, seed: int = 0) -> go.Figure:
    """Train loss (at the unperturbed weights) against gradient calls, seed ``seed`` of the
    sweep: SGD-M, NAG, SAM (rho = 0.2) and MSAM (rho = 0.3 and 1); phases "fit" (first 20% of
    SGD-M's gradient budget) and "late training", where the mechanism acts."""
    run = moons_sweep(epochs)
    wanted = ["SGD-M", "NAG", f"SAM (rho = {SAM_RHO:g})", "MSAM (rho = 0.3)", "MSAM (rho = 1)"]
    fig = go.Figure()
    for label in wanted:
        k = next(i for i, s in enumerate(run.specs) if s.label == label and s.seed == seed)
        tr = run.traces[k]
        name = run.specs[k].method
        fig.add_trace(go.Scatter(x=tr["grad_calls"], y=tr.objective, mode="lines", name=label,
                                 line=dict(color=_COLORS[name], width=2,
                                           dash="dot" if label == "MSAM (rho = 0.3)" else None)))
    budget = float(run.grad_calls[run.select("SGD-M")[0]])
    fig.add_vrect(x0=0, x1=0.2 * budget, fillcolor="#fde0c5", opacity=0.55, layer="below", line_width=0,
                  annotation_text="<b>fit</b>", annotation_position="top left")
    fig.add_vrect(x0=0.5 * budget, x1=budget, fillcolor="#d4ecd9", opacity=0.55, layer="below", line_width=0,
                  annotation_text="<b>late training (mechanism measured)</b>", annotation_position="top left")
    return base_layout(fig, xaxis_title="gradient evaluations", yaxis_title="full train loss at w (log)",
                       logy=True, height=430)


def cosine_figure(epochs: int = 300, seed: int = 0, window: int = 100) -> go.Figure:
    """cos(g_B, v) at every SGD-M step (light) and its rolling mean over ``window`` steps, and
    the running fraction of steps where L_B(w - v/|v|) > L_B(w)."""
    run = moons_sweep(epochs)
    k = next(i for i, s in enumerate(run.specs) if s.method == "SGD-M" and s.seed == seed)
    cos, rise = run.cos[:, k], run.rise[:, k]
    steps = np.arange(1, len(cos) + 1)
    kernel = np.ones(window) / window
    roll = np.convolve(np.nan_to_num(cos), kernel, mode="valid")
    roll_rise = np.convolve(np.nan_to_num(rise), kernel, mode="valid")
    keep = slice(None, None, 10)
    fig = go.Figure([
        go.Scatter(x=steps[keep], y=cos[keep], mode="markers", name="cos(g_B, v), every 10th step",
                   marker=dict(size=3, color="#9ecae1")),
        go.Scatter(x=steps[window - 1:][keep], y=roll[keep], mode="lines", name=f"rolling mean ({window} steps)",
                   line=dict(color=_COLORS["SGD-M"], width=2.5)),
        go.Scatter(x=steps[window - 1:][keep], y=roll_rise[keep], mode="lines",
                   name="fraction of steps where L_B(w - v/|v|) > L_B(w)", line=dict(color=_COLORS["MSAM"], width=2.5)),
    ])
    fig.add_hline(y=0, line=dict(color="#555", width=1))
    return base_layout(fig, xaxis_title="SGD-M step", yaxis_title="cosine / fraction", height=430)
