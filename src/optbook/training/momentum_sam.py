"""Chapter 18: Momentum-SAM, sharpness-aware minimization at the cost of SGD (NeurIPS 2025).

SAM (Foret et al.) computes the gradient at an adversarially perturbed point
w + rho g / ||g||, which costs a second forward-backward pass per step. MSAM (Becker, Altrock and
Risse) perturbs along the *negative normalized momentum* instead, w - rho v / ||v||, a point
that needs no extra gradient: late in training the momentum v is anti-aligned with the current
mini-batch gradient, so that step goes uphill on the batch, as SAM's ascent step does.

What is here (no plotting; the chapter's experiments, claims and figures are in
:mod:`optbook.training.momentum_sam_chapter`):

* :class:`MSAM`, :class:`SAM` and :class:`AdamWMSAM`: ``torch.optim.Optimizer`` subclasses that
  work in any training loop (``step(closure)``, the closure does forward + backward). The
  baselines SGD with momentum and Nesterov are ``torch.optim.SGD`` itself.
* :func:`train_moons`: a 2-64-1 tanh MLP on noisy two moons, run for many (method, rho, seed)
  configurations at once in vectorized numpy (the same update rules as the torch optimizers; the
  tests check that they agree to 1e-10), with :func:`batched_lambda_max`, the sharpness.
* the 2-D toy landscape with a sharp and a wide minimum (:func:`toy_loss`, :func:`toy_paths`).

The update rule and the defaults follow the official code (github.com/MarlonBecker/MSAM); we keep
the *unperturbed* weights in the parameters between steps (the official optimizer leaves them
perturbed), which is equivalent and makes evaluation at the right point automatic.
"""
from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np
import torch

from ..core import Trace, as_rng, check_in_range, check_int, check_positive
from ..core.curvature import global_norm as _global_norm
from ..core.curvature import hessian_top_eigenvalue  # noqa: F401  (re-exported: the chapter's sharpness of any torch loss)

#: Added to a norm before dividing by it (as in the official code).
NORM_EPS = 1e-12

# --------------------------------------------------------------------------- torch optimizers


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
    """Shared machinery of the three optimizers, as ``torch.optim`` does it.

    * Hyperparameters are checked in :meth:`add_param_group`, so a group's own values (a group
      may override the defaults) are checked too, with the group named in the error.
    * A parameter whose ``.grad`` is None after the closure is skipped (not perturbed on later
      steps until it has a state, not updated, no weight decay).
    * ``state_dict()`` carries the gradient-call counter besides the per-parameter state, so a
      resumed run continues bit for bit (there is no random state).
    * The perturbation is applied in place and undone exactly ("move up", "move back").
    """

    def __init__(self, params, defaults: dict):
        self.grad_calls = 0
        super().__init__(params, defaults)

    def _check_group(self, group: dict, where: str) -> None:  # pragma: no cover - overridden
        raise NotImplementedError

    def add_param_group(self, param_group: dict) -> None:
        where = f" (param group {len(self.param_groups)})"
        self._check_group({**self.defaults, **param_group}, where)
        super().add_param_group(param_group)

    def state_dict(self) -> dict:
        out = super().state_dict()
        out["grad_calls"] = self.grad_calls
        return out

    def load_state_dict(self, state_dict: dict) -> None:
        state_dict = dict(state_dict)
        calls = state_dict.pop("grad_calls", 0)
        super().load_state_dict(state_dict)
        self.grad_calls = int(calls)

    def _pairs(self) -> list[tuple[dict, torch.Tensor]]:
        return [(g, p) for g in self.param_groups for p in g["params"]]

    def _move(self, eps: dict[torch.Tensor, torch.Tensor]) -> None:
        """Save w and set each parameter in ``eps`` to w + eps ("move up")."""
        for p, e in eps.items():
            self.state[p]["w"] = p.detach().clone()
            p.data.add_(e)

    def move_back(self) -> None:
        """Restore the saved unperturbed weights w exactly ("move back")."""
        for _, p in self._pairs():
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

    def _direction(self, key: str, sign: float) -> dict[torch.Tensor, torch.Tensor]:
        """sign * rho * s / (||s|| + 1e-12) for every parameter that has the state ``key``;
        ||s|| is the global norm over all of them, rho the parameter's group's radius."""
        have = [(g, p) for g, p in self._pairs() if key in self.state[p]]
        if not have:
            return {}
        norm = _global_norm(self.state[p][key] for _, p in have) + NORM_EPS
        return {p: (sign * g["rho"] / norm) * self.state[p][key] for g, p in have}

    def _gradients(self, decay_at_current: bool) -> list[tuple[dict, torch.Tensor, torch.Tensor]]:
        """(group, parameter, gradient) for the parameters that have a gradient; with
        ``decay_at_current`` the weight decay is added at the parameter's current value."""
        out = []
        for g, p in self._pairs():
            if p.grad is None:
                continue
            grad = p.grad.detach().clone()
            if decay_at_current and g["weight_decay"]:
                grad.add_(p.detach(), alpha=g["weight_decay"])
            out.append((g, p, grad))
        return out

    def _momentum_update(self, grads) -> None:
        """v <- momentum v + g, w <- w - lr v (torch.optim.SGD's rule with dampening 0)."""
        for group, p, g in grads:
            buf = self.state[p].get("momentum_buffer")
            if buf is None:
                buf = self.state[p]["momentum_buffer"] = g.clone()
            else:
                buf.mul_(group["momentum"]).add_(g)
            p.data.add_(buf, alpha=-group["lr"])


class _SGDFamily(_Perturbing):
    def __init__(self, params, lr, momentum, rho, weight_decay):
        super().__init__(params, dict(lr=lr, momentum=momentum, rho=rho, weight_decay=weight_decay))

    def _check_group(self, group: dict, where: str) -> None:
        check_positive(group["lr"], "lr" + where)
        check_in_range(group["momentum"], "momentum" + where, 0.0, 1.0, closed=(True, False))
        check_positive(group["rho"], "rho" + where, allow_zero=True)
        check_positive(group["weight_decay"], "weight_decay" + where, allow_zero=True)


class MSAM(_SGDFamily):
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
    Every value may be overridden per param group.
    """

    def __init__(self, params, lr: float = 0.1, momentum: float = 0.9, rho: float = 0.3,
                 weight_decay: float = 0.0):
        super().__init__(params, lr, momentum, rho, weight_decay)

    def perturbation(self) -> dict[torch.Tensor, torch.Tensor]:
        """eps = -rho v / (||v|| + 1e-12) for every parameter with a momentum buffer (none before
        the first step); its global norm is rho, whatever the number of tensors."""
        return self._direction("momentum_buffer", -1.0)

    @torch.no_grad()
    def step(self, closure):  # type: ignore[override]
        self._move(self.perturbation())
        loss = self._evaluate(closure)
        grads = self._gradients(decay_at_current=True)   # the parameters hold w_hat here
        self.move_back()
        self._momentum_update(grads)
        return loss


class SAM(_SGDFamily):
    """Sharpness-aware minimization with SGD momentum (Foret et al., the paper's main baseline).

    One step on a batch B: g = grad L_B(w); eps = rho g / (||g|| + 1e-12) (global norm);
    g_sam = grad L_B(w + eps) + weight_decay w; v = momentum v + g_sam; w = w - lr v.
    Two gradients per step: ``step(closure)`` calls the closure twice (same batch), the usual
    two-pass SAM step. Returns the loss at w; ``grad_calls`` counts closures.
    """

    def __init__(self, params, lr: float = 0.1, momentum: float = 0.9, rho: float = 0.05,
                 weight_decay: float = 0.0):
        super().__init__(params, lr, momentum, rho, weight_decay)

    @torch.no_grad()
    def step(self, closure):  # type: ignore[override]
        loss = self._evaluate(closure)
        for _, p in self._pairs():
            if p.grad is not None:
                self.state[p]["ascent"] = p.grad.detach().clone()
        eps = self._direction("ascent", 1.0)
        for _, p in self._pairs():
            self.state[p].pop("ascent", None)
        self._move(eps)
        self._evaluate(closure)
        grads = [(g, p, p.grad.detach().clone()) for g, p in self._pairs() if p in eps and p.grad is not None]
        self.move_back()
        for g, p, grad in grads:
            if g["weight_decay"]:
                grad.add_(p.detach(), alpha=g["weight_decay"])
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
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, rho=rho))

    def _check_group(self, group: dict, where: str) -> None:
        check_positive(group["lr"], "lr" + where)
        betas = group["betas"]
        if not isinstance(betas, (tuple, list)) or len(betas) != 2:
            raise ValueError(f"betas{where} must be a pair of numbers, got {betas!r}")
        check_in_range(betas[0], "betas[0]" + where, 0.0, 1.0, closed=(True, False))
        check_in_range(betas[1], "betas[1]" + where, 0.0, 1.0, closed=(True, False))
        check_positive(group["eps"], "eps" + where)
        check_positive(group["weight_decay"], "weight_decay" + where, allow_zero=True)
        check_positive(group["rho"], "rho" + where, allow_zero=True)

    @torch.no_grad()
    def step(self, closure):  # type: ignore[override]
        self._move(self._direction("exp_avg", -1.0))
        loss = self._evaluate(closure)
        grads = self._gradients(decay_at_current=False)
        self.move_back()
        for group, p, g in grads:
            b1, b2 = group["betas"]
            st = self.state[p]
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


METHODS = ("SGD-M", "NAG", "SAM", "MSAM")


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


#: Methods of the vectorized engine: the four torch methods and the chapter's negative control,
#: MSAM with the sign of its perturbation flipped (gradient at w + rho v / ||v||).
ENGINE_METHODS = METHODS + ("MSAM-flip",)


@dataclass
class MoonsRun:
    """What :func:`train_moons` measured for each configuration (arrays indexed like ``specs``)."""

    specs: list[Spec]
    traces: list[Trace]
    lambda_max: np.ndarray
    train_loss: np.ndarray
    test_acc: np.ndarray
    grad_calls: np.ndarray
    val_loss: np.ndarray
    val_acc: np.ndarray
    cos: np.ndarray = field(repr=False)
    rise: np.ndarray = field(repr=False)
    rise_flip: np.ndarray = field(repr=False)
    params: dict = field(repr=False)
    seconds: float = 0.0
    #: per step, for the monitored runs: the cosine of the batch gradient with a random unit
    #: direction, and whether the batch loss rose along it (radius ``monitor_rho``).
    cos_rand: np.ndarray = field(default=None, repr=False)
    rise_rand: np.ndarray = field(default=None, repr=False)
    #: the parameters of the ``snapshot`` runs at every recorded epoch: key -> (records, runs, ...)
    snapshots: dict = field(default_factory=dict, repr=False)
    snapshot_index: np.ndarray = field(default=None, repr=False)

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


@lru_cache(maxsize=2)
def validation_data(n_val: int = 2000, noise: float = 0.25, flip: float = 0.1,
                    data_seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """A validation split: fresh points from the *training* distribution (same noise, same share
    of flipped labels), drawn apart from the training and test sets. Radii are chosen on it."""
    return two_moons(n_val, noise=noise, flip=flip, rng=np.random.default_rng([data_seed, 2]))


def train_moons(specs: Sequence[Spec], *, epochs: int = 300, batch_size: int = 32, lr: float = 0.1,
                momentum: float = 0.9, monitor_rho: float = 0.5, monitor: Sequence[str] = ("SGD-M",),
                snapshot: Sequence[str] = (), data: dict | None = None) -> MoonsRun:
    """Train one MLP per configuration on the two-moons task, all at once (vectorized numpy).

    Each configuration has its own initialisation and batch order (from its seed). The update
    rules are those of the torch optimizers: SGD-M and NAG as ``torch.optim.SGD`` (NAG with
    ``nesterov=True``: v <- mu v + g, w <- w - lr (g + mu v), whose iterates are the look-ahead
    points of Sutskever's form), :class:`SAM` and :class:`MSAM`; and ``"MSAM-flip"``, MSAM with
    the opposite sign (gradient at w + rho v/||v||), the chapter's negative control. No weight decay.

    Monitoring, every step (forward passes not counted as gradient calls): the cosine between
    the batch gradient at the evaluation point and the momentum before the step; and, for the
    methods in ``monitor`` (others NaN), whether L_B(w - monitor_rho v/||v||) > L_B(w) (the
    mechanism; for SGD-M the evaluation point is w), the same along +v/||v|| (the flipped probe)
    and along a random unit direction u (global norm; drawn from its own generator, seeded by
    (seed, 3), so the training is unchanged), with the cosine of the batch gradient with u. For the
    methods in ``snapshot`` the parameters are kept at every recorded epoch (sharpness along the path).

    Returns a :class:`MoonsRun`: traces of the train loss at the unperturbed weights (about 60
    points per run) with the cumulative gradient calls; at the end, lambda_max of the full
    training loss, train loss, test accuracy, gradient calls, and loss and accuracy on
    :func:`validation_data`.
    """
    specs = list(specs)
    if not specs or not all(isinstance(s, Spec) for s in specs):
        raise ValueError("specs must be a non-empty list of Spec")
    for s in specs:
        if s.method not in ENGINE_METHODS:
            raise ValueError(f"specs: method must be one of {ENGINE_METHODS}, got {s.method!r}")
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
    is_sam, is_nag = method == "SAM", method == "NAG"
    sign = np.where(method == "MSAM", -1.0, np.where(method == "MSAM-flip", 1.0, 0.0))
    sam_idx = np.flatnonzero(is_sam)
    mon_idx = np.flatnonzero(np.isin(method, list(monitor)))
    snap_idx = np.flatnonzero(np.isin(method, list(snapshot)))
    probe_gens = [np.random.default_rng([specs[i].seed, 3]) for i in mon_idx]
    snaps = {k: [] for k in _KEYS}
    calls = np.zeros(K)
    traces = [Trace(s.label, meta=dict(method=s.method, rho=s.rho, seed=s.seed, lr=lr, momentum=momentum))
              for s in specs]
    XK, yK = np.broadcast_to(X, (K,) + X.shape), np.broadcast_to(y, (K, n))
    XtK, ytK = np.broadcast_to(Xt, (K,) + Xt.shape), np.broadcast_to(yt, (K, len(yt)))
    cos_rows, rise_rows, flip_rows, cosr_rows, riser_rows = [], [], [], [], []

    every = max(1, epochs // 60)

    def record(epoch: int) -> None:
        train = _loss(P, XK, yK)
        for k, tr in enumerate(traces):
            tr.record(objective=train[k], step_size=lr, iteration=epoch, grad_calls=calls[k])
        for k in _KEYS:
            snaps[k].append(P[k][snap_idx].copy())

    record(0)
    for epoch in range(1, epochs + 1):
        perms = np.stack([g.permutation(n) for g in gens])
        for start in range(0, n, batch_size):
            idx = perms[:, start:start + batch_size]
            Xb, yb = X[idx], y[idx]
            vnorm = _norm(V)
            unit = np.where(vnorm > 0, 1.0 / (vnorm + NORM_EPS), 0.0)
            # evaluation offset: MSAM -rho v/||v||, its control +rho v/||v||; SGD-M, NAG, SAM none
            coef = sign * rho * unit
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
            rise, flip, cosr, riser = (np.full(K, np.nan) for _ in range(4))
            if mon_idx.size and vnorm[mon_idx[0]] > 0:
                Pm, Vm = {k: P[k][mon_idx] for k in _KEYS}, {k: V[k][mon_idx] for k in _KEYS}
                Xm, ym, um = Xb[mon_idx], yb[mon_idx], unit[mon_idx]
                l0 = _loss(Pm, Xm, ym)
                rise[mon_idx] = _loss(_axpy(Pm, -monitor_rho * um, Vm), Xm, ym) > l0
                flip[mon_idx] = _loss(_axpy(Pm, monitor_rho * um, Vm), Xm, ym) > l0
                U = {k: np.stack([g.standard_normal(P[k].shape[1:]) for g in probe_gens]) for k in _KEYS}
                U = _axpy({k: np.zeros_like(U[k]) for k in _KEYS}, 1.0 / _norm(U), U)
                riser[mon_idx] = _loss(_axpy(Pm, np.full(len(mon_idx), monitor_rho), U), Xm, ym) > l0
                Gm = {k: G[k][mon_idx] for k in _KEYS}
                cosr[mon_idx] = sum((Gm[k] * U[k]).reshape(len(mon_idx), -1).sum(axis=1) for k in _KEYS) / (
                    _norm(Gm) + NORM_EPS)
            rise_rows.append(rise)
            flip_rows.append(flip)
            cosr_rows.append(cosr)
            riser_rows.append(riser)
            V = {k: momentum * V[k] + G[k] for k in _KEYS}
            # SGD-M, SAM, MSAM: w -= lr v;  NAG (torch's nesterov=True): w -= lr (g + mu v)
            D = _axpy(V, is_nag.astype(float), _axpy(G, np.full(K, momentum - 1.0), V))
            P = _axpy(P, np.full(K, -lr), D)
        if epoch % every == 0 or epoch == epochs:
            record(epoch)

    lam = batched_lambda_max(P, X, y)
    acc = ((_forward(P, XtK)[1] > 0) == (ytK > 0.5)).mean(axis=1)
    Xv, yv = validation_data(**{k: v for k, v in (data or MOONS).items() if k in ("noise", "flip", "data_seed")})
    zv = _forward(P, np.broadcast_to(Xv, (K,) + Xv.shape))[1]
    yvK = np.broadcast_to(yv, (K, len(yv)))
    return MoonsRun(specs, traces, lam, np.array([tr.objective[-1] for tr in traces]), acc, calls,
                    _logistic(zv, yvK), ((zv > 0) == (yvK > 0.5)).mean(axis=1),
                    np.array(cos_rows), np.array(rise_rows), np.array(flip_rows), P, time.perf_counter() - t_start,
                    np.array(cosr_rows), np.array(riser_rows), {k: np.stack(v) for k, v in snaps.items()}, snap_idx)


# --------------------------------------------------------------------------- the MLP in torch


def _torch_mlp(seed: int) -> torch.nn.Module:
    init = init_mlp(seed)
    net = torch.nn.Sequential(torch.nn.Linear(2, 64), torch.nn.Tanh(), torch.nn.Linear(64, 1)).double()
    with torch.no_grad():
        net[0].weight.copy_(torch.tensor(init["W1"].T))
        net[0].bias.copy_(torch.tensor(init["b1"]))
        net[2].weight.copy_(torch.tensor(init["W2"][None, :]))
        net[2].bias.copy_(torch.tensor(init["b2"]).reshape(1))
    return net



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
    seed = check_int(seed, "seed")
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


