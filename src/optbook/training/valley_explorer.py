"""Chapter 19: exploring along valleys, the E adaptor and ALTO (Zhao et al., NeurIPS 2025).

The "E" adaptor turns any gradient-based optimizer into a valley-exploring one. It keeps an
exponential moving average (EMA) of *gradient differences*,

    a_k = beta1 a_{k-1} + (1 - beta1) (g_k - g_{k-1}),        g_0 = 0, a_0 = 0,

and hands the base optimizer g~_k = g_k + alpha a_k instead of g_k. With alpha < 0 the method
keeps walking along valleys of low loss (explore); with alpha > 0 it dives into the nearest
minimum (exploit). The paper requires |alpha| < 1 / (1 - beta1). Note the paper's naming:
beta1 is the gradient-difference EMA; the base optimizer's momentum is beta2 and Adam's second
moment beta3.

What is here:

* :class:`E`: the adaptor as a real ``torch.optim.Optimizer`` that wraps a base optimizer;
  :class:`ESGD` (Algorithm 3), :class:`EAdam` (Algorithm 4) and :class:`ALTO` (Algorithm 2, the
  adapted Lamb; ``bias_correction=False`` gives "ALTO Vanilla", Algorithm 1) are ``E`` around
  ``torch.optim.SGD``, ``torch.optim.Adam`` and :class:`Lamb` (the baseline; torch has none).
* :class:`ValleyStepper` and :func:`valley_run`: the same updates in numpy, batched over rows
  (one row per alpha), for the 1-D ripple function and the 2-D landscapes; the tests check they
  agree with the torch optimizers to rounding error.
* the paper's ripple test function, Rosenbrock and the squared cardioid; the large-batch MLP proxy
  (Lamb vs ALTO on a synthetic Gaussian mixture); the claims and the explorers.

Everything follows the official code (github.com/zhaotong94/E, ``E.py`` and ``ALTO.py``) as read
for the card ``shared/papers/19-valley-explorer.md``; code-only extras are options, off by default.
"""
from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import plotly.graph_objects as go
import torch

from ..claims import Measured, claim
from ..core import Result, Trace, as_rng, check_choice, check_in_range, check_int, check_positive, check_vector
from ..viz import SliderStep, base_layout, color_for, slider_figure
from ..core.threads import one_torch_thread
from ..widgets import Choice, Explorer, Slider

#: The paper's defaults (Section 4): base momentum beta2, second moment beta3, decay lambda, epsilons.
PAPER_DEFAULTS = dict(beta2=0.9, beta3=0.99, weight_decay=1e-4, eps=1e-6, trust_eps=1e-6, phi_eps=1e-10)
#: The paper's (alpha, beta1) per batch regime.
LARGE_BATCH = dict(alpha=-5.0, beta1=0.99)
SMALL_BATCH = dict(alpha=0.5, beta1=0.01)


def check_alpha_beta1(alpha: float, beta1: float) -> tuple[float, float]:
    """Validate the E adaptor's (alpha, beta1): beta1 in [0, 1) and the paper's stability bound
    |alpha| < 1 / (1 - beta1), which keeps the weight 1 + alpha (1 - beta1) on g_k positive."""
    beta1 = check_in_range(beta1, "beta1", 0.0, 1.0, closed=(True, False))
    if isinstance(alpha, bool) or not isinstance(alpha, (int, float, np.integer, np.floating)):
        raise ValueError(f"alpha must be a real number, got {alpha!r}")
    alpha = float(alpha)
    bound = 1.0 / (1.0 - beta1)
    if not (math.isfinite(alpha) and abs(alpha) * (1.0 - beta1) < 1.0 - 1e-12):
        raise ValueError(f"alpha must satisfy |alpha| < 1/(1 - beta1) = {bound:.6g} (the paper's "
                         f"stability bound), got {alpha}")
    return alpha, beta1


def decomposition(alpha: float, beta1: float) -> tuple[float, float]:
    """Weights of g~_k = c_now g_k + c_old gbar_{k-1}: (1 + alpha(1-beta1), -alpha(1-beta1)),
    where gbar_{k-1} is the plain EMA (rate beta1) of past gradients (our summation by parts)."""
    alpha, beta1 = check_alpha_beta1(alpha, beta1)
    return 1.0 + alpha * (1.0 - beta1), -alpha * (1.0 - beta1)


def e_sequence(grads, alpha: float, beta1: float, *, init: str = "zero") -> tuple[np.ndarray, np.ndarray]:
    """The E adaptor on a gradient sequence (rows g_1, ..., g_T): returns (g~, a), both T x d.

    ``init="zero"`` is the paper's g_0 = 0; ``init="first"`` is ``E.py``'s special case for a
    single scalar parameter (g_0 = g_1, so the first difference is zero)."""
    alpha, beta1 = check_alpha_beta1(alpha, beta1)
    check_choice(init, "init", ("zero", "first"))
    G = np.asarray(grads, dtype=float)
    if G.ndim == 1:
        G = G[:, None]
    if G.ndim != 2 or G.size == 0:
        raise ValueError(f"grads must be a non-empty T x d array, got shape {G.shape}")
    if not np.all(np.isfinite(G)):
        raise ValueError("grads must be finite (found NaN or inf)")
    A = np.empty_like(G)
    a = np.zeros(G.shape[1])
    prev = G[0] if init == "first" else np.zeros(G.shape[1])
    for k, g in enumerate(G):
        a = beta1 * a + (1.0 - beta1) * (g - prev)
        prev = g
        A[k] = a
    return G + alpha * A, A


# --------------------------------------------------------------------------- numpy reference

BASES = ("sgd", "adam", "lamb")


@dataclass
class ValleyStepper:
    """The E-adapted updates in numpy, batched: ``x`` is (rows, d), one independent run per row.

    ``base`` is "sgd" (ESGD, Algorithm 3: m = beta2 m + g~, x -= lr m), "adam" (EAdam,
    Algorithm 4, bias-corrected m and v, r = m^/(sqrt(v^) + eps)) or "lamb" (ALTO, Algorithm 2,
    each row is one layer: r += wd x, then the trust ratio phi(|x|)/(|r| + trust_eps phi(|x|)),
    phi(t) = t + phi_eps). ``alpha`` is a scalar or one value per row; alpha = 0 is the base
    method. The bias correction touches m and v only, never a.
    """

    base: str = "adam"
    alpha: float | np.ndarray = 0.0
    beta1: float = 0.99
    lr: float = 1e-3
    beta2: float = 0.9
    beta3: float = 0.99
    eps: float = 1e-6
    weight_decay: float = 0.0
    trust_eps: float = 1e-6
    phi_eps: float = 1e-10
    init: str = "zero"

    def __post_init__(self) -> None:
        check_choice(self.base, "base", BASES)
        check_choice(self.init, "init", ("zero", "first"))
        alphas = np.atleast_1d(np.asarray(self.alpha, dtype=float))
        if alphas.ndim != 1:
            raise ValueError(f"alpha must be a scalar or a 1-D array, got shape {alphas.shape}")
        for al in alphas:
            check_alpha_beta1(float(al), self.beta1)
        self.alpha = alphas[:, None] if alphas.size > 1 else float(alphas[0])
        check_positive(self.lr, "lr")
        check_in_range(self.beta2, "beta2", 0.0, 1.0, closed=(True, False))
        check_in_range(self.beta3, "beta3", 0.0, 1.0, closed=(True, False))
        check_positive(self.eps, "eps")
        check_positive(self.weight_decay, "weight_decay", allow_zero=True)
        check_positive(self.trust_eps, "trust_eps", allow_zero=True)
        check_positive(self.phi_eps, "phi_eps", allow_zero=True)
        self.k = 0

    def step(self, x: np.ndarray, g: np.ndarray) -> np.ndarray:
        """One step from ``x`` with raw gradient ``g`` (same shape); returns the new x."""
        if self.k == 0:
            self.prev = g.copy() if self.init == "first" else np.zeros_like(g)
            self.a = np.zeros_like(g)
            self.m = np.zeros_like(g)
            self.v = np.zeros_like(g)
        self.k += 1
        self.a = self.beta1 * self.a + (1.0 - self.beta1) * (g - self.prev)
        self.prev = g.copy()
        gt = g + self.alpha * self.a
        if self.base == "sgd":
            self.m = self.beta2 * self.m + gt
            return x - self.lr * self.m
        self.m = self.beta2 * self.m + (1.0 - self.beta2) * gt
        self.v = self.beta3 * self.v + (1.0 - self.beta3) * gt * gt
        r = (self.m / (1.0 - self.beta2 ** self.k)) / (np.sqrt(self.v / (1.0 - self.beta3 ** self.k)) + self.eps)
        if self.base == "adam":
            return x - self.lr * r
        r = r + self.weight_decay * x
        phi = np.linalg.norm(x, axis=-1, keepdims=True) + self.phi_eps
        ratio = phi / (np.linalg.norm(r, axis=-1, keepdims=True) + self.trust_eps * phi)
        return x - self.lr * ratio * r


def valley_run(fun: Callable, x0, jac: Callable, *, base: str = "adam", alpha: float = 0.0,
               beta1: float = 0.99, lr: float = 0.03, beta2: float = 0.95, beta3: float = 0.999,
               eps: float = 1e-8, maxiter: int = 3000, init: str = "zero",
               domain: Callable | None = None, name: str | None = None) -> Result:
    """Run E-adapted SGD-M/Adam/Lamb (``alpha = 0``: the plain base method) from ``x0`` for
    ``maxiter`` steps, scipy-shaped. There is no stopping rule: the paper's point is that the
    explorer keeps moving after it reaches a minimum, so we run a fixed budget.

    ``fun`` and ``jac`` take a (rows, d) array and return (rows,) values and (rows, d)
    gradients. ``domain(x) -> bool array`` marks where the objective is defined (the ripple
    function needs x > 0); a run that leaves it stops with ``success=False``.
    The trace records f, |g|, |x_k - x_{k-1}| and the extras ``x`` (first coordinate) and
    ``dx`` (its last change); the result carries every iterate in ``iterates`` (k+1 x d).
    """
    x = check_vector(x0, "x0")[None, :].copy()
    maxiter = check_int(maxiter, "maxiter", minimum=1)
    stepper = ValleyStepper(base=base, alpha=alpha, beta1=beta1, lr=lr, beta2=beta2, beta3=beta3,
                            eps=eps, init=init)
    xs = np.empty((maxiter + 1, x.shape[1]))
    xs[0] = x[0]
    f0 = float(fun(x)[0])
    tr = Trace(name or (f"E-{base} (alpha={alpha:g})" if alpha else base),
               meta=dict(base=base, alpha=alpha, beta1=beta1, lr=lr))
    success, message, k = True, f"ran {maxiter} steps", 0
    g = jac(x)
    tr.record(objective=f0, grad_norm=float(np.linalg.norm(g)), step_size=0.0, x=x[0, 0], dx=0.0)
    for k in range(1, maxiter + 1):
        x_new = stepper.step(x, g)
        if not np.all(np.isfinite(x_new)) or (domain is not None and not np.all(domain(x_new))):
            success, message, k = False, f"left the domain of the objective at step {k}", k - 1
            break
        dx = x_new - x
        x = x_new
        xs[k] = x[0]
        g = jac(x)
        tr.record(objective=float(fun(x)[0]), grad_norm=float(np.linalg.norm(g)),
                  step_size=float(np.linalg.norm(dx)), x=x[0, 0], dx=dx[0, 0])
    return Result(x=x[0], fun=tr.objective[-1], jac=g[0], nit=k, nfev=k + 1, njev=k + 1,
                  success=success, message=message, trace=tr, iterates=xs[:k + 1])


# --------------------------------------------------------------------------- test landscapes


def _rows(x, d: int) -> np.ndarray:
    X = np.asarray(x, dtype=float)
    if X.ndim == 1:
        X = X[None, :] if d > 1 or X.size == 1 else X[:, None]
    if X.ndim != 2 or X.shape[1] != d:
        raise ValueError(f"x must have {d} columns (rows = points), got shape {X.shape}")
    return X


def ripple(x) -> np.ndarray:
    """The paper's 1-D test function f1(x) = 1 / (0.05 x sin^2(2x) + ln(x + 1)), for x > 0:
    it decreases along x with ripples, a "valley" of ever lower local minima."""
    x = _rows(x, 1)[:, 0]
    return 1.0 / (0.05 * x * np.sin(2 * x) ** 2 + np.log1p(x))


def ripple_grad(x) -> np.ndarray:
    """Derivative of :func:`ripple`, as a (rows, 1) array."""
    x = _rows(x, 1)[:, 0]
    s, c = np.sin(2 * x), np.cos(2 * x)
    D = 0.05 * x * s * s + np.log1p(x)
    dD = 0.05 * s * s + 0.2 * x * s * c + 1.0 / (1.0 + x)
    return (-dD / D ** 2)[:, None]


def rosenbrock2(x) -> np.ndarray:
    """The 2-D Rosenbrock function 100 (y - x^2)^2 + (1 - x)^2, row-wise."""
    X = _rows(x, 2)
    return 100.0 * (X[:, 1] - X[:, 0] ** 2) ** 2 + (1.0 - X[:, 0]) ** 2


def rosenbrock2_grad(x) -> np.ndarray:
    X = _rows(x, 2)
    r = X[:, 1] - X[:, 0] ** 2
    return np.column_stack([-400.0 * r * X[:, 0] - 2.0 * (1.0 - X[:, 0]), 200.0 * r])


def cardioid(x) -> np.ndarray:
    """Squared cardioid ((x^2 + y^2 + x)^2 - (x^2 + y^2))^2: zero exactly on the cardioid
    r = 1 - cos(theta), a closed valley of global minima (our constants for the paper's Fig. 1)."""
    X = _rows(x, 2)
    q = X[:, 0] ** 2 + X[:, 1] ** 2
    return ((q + X[:, 0]) ** 2 - q) ** 2


def cardioid_grad(x) -> np.ndarray:
    X = _rows(x, 2)
    q = X[:, 0] ** 2 + X[:, 1] ** 2
    h = (q + X[:, 0]) ** 2 - q
    dq = 2.0 * X
    dh = 2.0 * (q + X[:, 0])[:, None] * (dq + np.array([1.0, 0.0])) - dq
    return 2.0 * h[:, None] * dh


@dataclass(frozen=True)
class Landscape:
    """A test landscape with the settings the explorer uses for it."""

    label: str
    fun: Callable
    jac: Callable
    x0: tuple
    lr: float
    steps: int
    xlim: tuple = (0.0, 1.0)
    ylim: tuple = (0.0, 1.0)
    domain: Callable | None = None


LANDSCAPES = {
    "ripple": Landscape("ripple f1(x)", ripple, ripple_grad, (2.3,), 0.03, 3000, (1.0, 12.0),
                        domain=lambda x: x[:, 0] > 0.0),
    "rosenbrock": Landscape("Rosenbrock", rosenbrock2, rosenbrock2_grad, (-1.5, 2.5), 0.01, 1500,
                            (-2.0, 2.0), (-1.0, 3.0)),
    "cardioid": Landscape("squared cardioid", cardioid, cardioid_grad, (0.6, -1.6), 0.01, 1500,
                          (-2.4, 0.6), (-1.7, 1.7)),
}

# --------------------------------------------------------------------------- torch optimizers


def _check_lamb_hyper(lr, betas, eps, weight_decay, trust_eps, phi_eps) -> None:
    check_positive(lr, "lr")
    if not (isinstance(betas, (tuple, list)) and len(betas) == 2):
        raise ValueError(f"betas must be a pair (beta2, beta3), got {betas!r}")
    check_in_range(betas[0], "betas[0]", 0.0, 1.0, closed=(True, False))
    check_in_range(betas[1], "betas[1]", 0.0, 1.0, closed=(True, False))
    check_positive(eps, "eps")
    check_positive(weight_decay, "weight_decay", allow_zero=True)
    check_positive(trust_eps, "trust_eps", allow_zero=True)
    check_positive(phi_eps, "phi_eps", allow_zero=True)


class Lamb(torch.optim.Optimizer):
    """Lamb (You et al. 2020), the paper's large-batch baseline: ALTO with alpha = 0.

    Per parameter tensor ("layer" i): Adam's direction r = m^/(sqrt(v^) + eps) with the paper's
    betas (beta2, beta3) = (0.9, 0.99), plus decoupled decay r += weight_decay * theta, then

        theta -= lr * r * phi(|theta|) / (|r| + trust_eps * phi(|theta|)),   phi(t) = t + phi_eps,

    so each layer moves by about lr * |theta| (the trust ratio; Algorithm 2 with alpha = 0).

    Parameters
    ----------
    bias_correction : bool
        False gives the "Vanilla" variant (Algorithm 1): m and v without 1 - beta^k.
    trust : {"paper", "code"}
        "code" is ``ALTO.py``'s rule: ratio |theta|/|r| (1 where either norm is 0), applied only
        when the group's weight_decay is non-zero.
    """

    def __init__(self, params, lr: float = 1e-3, betas: tuple[float, float] = (0.9, 0.99),
                 eps: float = 1e-6, weight_decay: float = 1e-4, trust_eps: float = 1e-6,
                 phi_eps: float = 1e-10, bias_correction: bool = True, trust: str = "paper"):
        _check_lamb_hyper(lr, betas, eps, weight_decay, trust_eps, phi_eps)
        check_choice(trust, "trust", ("paper", "code"))
        super().__init__(params, dict(lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay,
                                      trust_eps=trust_eps, phi_eps=phi_eps,
                                      bias_correction=bool(bias_correction), trust=trust))

    @torch.no_grad()
    def step(self, closure=None):  # type: ignore[override]
        loss = None
        if closure is not None:
            with torch.enable_grad():
                loss = closure()
        for group in self.param_groups:
            b2, b3 = group["betas"]
            for p in group["params"]:
                if p.grad is None:
                    continue
                if p.grad.is_sparse:
                    raise ValueError("Lamb does not support sparse gradients")
                st = self.state[p]
                if not st:
                    st["step"] = 0
                    st["exp_avg"] = torch.zeros_like(p)
                    st["exp_avg_sq"] = torch.zeros_like(p)
                st["step"] += 1
                k = st["step"]
                m, v = st["exp_avg"], st["exp_avg_sq"]
                m.mul_(b2).add_(p.grad, alpha=1 - b2)
                v.mul_(b3).addcmul_(p.grad, p.grad, value=1 - b3)
                if group["bias_correction"]:
                    r = (m / (1 - b2 ** k)) / ((v / (1 - b3 ** k)).sqrt() + group["eps"])
                else:
                    r = m / (v.sqrt() + group["eps"])
                if group["weight_decay"]:
                    r.add_(p, alpha=group["weight_decay"])
                w_norm, r_norm = torch.linalg.vector_norm(p), torch.linalg.vector_norm(r)
                if group["trust"] == "paper":
                    phi = w_norm + group["phi_eps"]
                    ratio = phi / (r_norm + group["trust_eps"] * phi)
                elif group["weight_decay"] and w_norm > 0 and r_norm > 0:
                    ratio = w_norm / r_norm
                else:
                    ratio = torch.ones((), dtype=p.dtype)
                p.add_(r * ratio, alpha=-group["lr"])
        return loss


class E(torch.optim.Optimizer):
    """The E adaptor (the paper's "E", ``E.py``): wraps a base optimizer so that it steps with
    g~ = g + alpha a, a = EMA_beta1(g_k - g_{k-1}), instead of the raw gradient g.

    It shares the base optimizer's ``param_groups`` (so ``lr`` schedulers act on both) and adds
    ``alpha`` and ``beta1`` to each group. ``step(closure)`` evaluates the closure (if given),
    replaces every ``p.grad`` by g~, calls ``base.step()`` and puts the raw gradient back, so
    logging or clipping outside the optimizer sees the true gradient.

    Parameters
    ----------
    base : torch.optim.Optimizer
        Any optimizer built on the parameters (SGD, Adam, :class:`Lamb`, ...).
    alpha : float
        alpha < 0 explores along valleys, alpha > 0 exploits; |alpha| < 1/(1 - beta1).
    beta1 : float
        Rate of the gradient-difference EMA (the paper's beta1; not Adam's beta1).
    init : {"zero", "first"}
        g_0 = 0 (the paper) or g_0 = g_1 (``E.py``'s special case for one scalar parameter).
    max_grad_norm : float or None
        ``ALTO.py`` clips the global raw-gradient norm to 1.0 before anything else; None (the
        default, as in the paper's algorithms) does not clip.
    """

    def __init__(self, base: torch.optim.Optimizer, alpha: float = -5.0, beta1: float = 0.99,
                 init: str = "zero", max_grad_norm: float | None = None):
        if not isinstance(base, torch.optim.Optimizer):
            raise ValueError(f"base must be a torch.optim.Optimizer, got {type(base).__name__}")
        check_alpha_beta1(alpha, beta1)
        check_choice(init, "init", ("zero", "first"))
        if max_grad_norm is not None:
            check_positive(max_grad_norm, "max_grad_norm")
        self.base = base
        self.init = init
        self.max_grad_norm = max_grad_norm
        # Optimizer.__init__ registers the base's group dicts themselves (shared, not copied).
        super().__init__(base.param_groups, dict(alpha=float(alpha), beta1=float(beta1)))

    def add_param_group(self, param_group: dict) -> None:
        if "alpha" in param_group or "beta1" in param_group:
            check_alpha_beta1(param_group.get("alpha", self.defaults["alpha"]),
                              param_group.get("beta1", self.defaults["beta1"]))
        super().add_param_group(param_group)

    def state_dict(self) -> dict:
        return {"e": super().state_dict(), "base": self.base.state_dict()}

    def load_state_dict(self, state_dict: dict) -> None:
        super().load_state_dict(state_dict["e"])
        self.base.load_state_dict(state_dict["base"])
        self.base.param_groups = self.param_groups  # keep one shared list of groups

    @torch.no_grad()
    def step(self, closure=None):  # type: ignore[override]
        loss = None
        if closure is not None:
            with torch.enable_grad():
                loss = closure()
        params = [p for g in self.param_groups for p in g["params"] if p.grad is not None]
        if any(p.grad.is_sparse for p in params):
            raise ValueError("the E adaptor does not support sparse gradients")
        if self.max_grad_norm is not None and params:
            torch.nn.utils.clip_grad_norm_(params, self.max_grad_norm)
        for group in self.param_groups:
            alpha, beta1 = group["alpha"], group["beta1"]
            for p in group["params"]:
                if p.grad is None:
                    continue
                st = self.state[p]
                if not st:
                    st["prev_grad"] = p.grad.clone() if self.init == "first" else torch.zeros_like(p)
                    st["grad_diff_avg"] = torch.zeros_like(p)
                a, prev = st["grad_diff_avg"], st["prev_grad"]
                a.mul_(beta1).add_(p.grad - prev, alpha=1 - beta1)
                prev.copy_(p.grad)
                p.grad.add_(a, alpha=alpha)
        self.base.step()
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is not None:
                    p.grad.copy_(self.state[p]["prev_grad"])
        return loss


class ESGD(E):
    """ESGD (Algorithm 3): m = beta2 m + g~, theta -= lr m, i.e. ``torch.optim.SGD`` with
    ``momentum=beta2`` (no dampening) fed by the E adaptor."""

    def __init__(self, params, lr: float = 0.1, alpha: float = 0.5, beta1: float = 0.01,
                 beta2: float = 0.9, init: str = "zero"):
        check_positive(lr, "lr")
        check_in_range(beta2, "beta2", 0.0, 1.0, closed=(True, False))
        super().__init__(torch.optim.SGD(params, lr=lr, momentum=beta2), alpha, beta1, init)


class EAdam(E):
    """EAdam (Algorithm 4): ``torch.optim.Adam`` with betas (beta2, beta3) fed by the E adaptor;
    r = m^/(sqrt(v^) + eps). Defaults: the paper's large-batch (alpha, beta1) = (-5, 0.99)."""

    def __init__(self, params, lr: float = 1e-3, alpha: float = -5.0, beta1: float = 0.99,
                 betas: tuple[float, float] = (0.9, 0.99), eps: float = 1e-6, init: str = "zero"):
        _check_lamb_hyper(lr, betas, eps, 0.0, 0.0, 0.0)
        super().__init__(torch.optim.Adam(params, lr=lr, betas=tuple(betas), eps=eps), alpha, beta1, init)


class ALTO(E):
    """ALTO (Algorithm 2): :class:`Lamb` fed by the E adaptor. ``bias_correction=False`` is
    "ALTO Vanilla" (Algorithm 1); ``trust="code"`` and ``max_grad_norm=1.0`` reproduce the
    extras of ``ALTO.py``. Defaults are the paper's large-batch settings."""

    def __init__(self, params, lr: float = 1e-3, alpha: float = -5.0, beta1: float = 0.99,
                 betas: tuple[float, float] = (0.9, 0.99), eps: float = 1e-6,
                 weight_decay: float = 1e-4, trust_eps: float = 1e-6, phi_eps: float = 1e-10,
                 bias_correction: bool = True, trust: str = "paper", init: str = "zero",
                 max_grad_norm: float | None = None):
        base = Lamb(params, lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, trust_eps=trust_eps,
                    phi_eps=phi_eps, bias_correction=bias_correction, trust=trust)
        super().__init__(base, alpha, beta1, init, max_grad_norm)


def lamb_param_groups(model: torch.nn.Module, weight_decay: float = 1e-4) -> list[dict]:
    """``ALTO.py``'s grouping: tensors with one dimension (biases, norm scales) get no decay."""
    check_positive(weight_decay, "weight_decay", allow_zero=True)
    decay = [p for p in model.parameters() if p.requires_grad and p.ndim > 1]
    no_decay = [p for p in model.parameters() if p.requires_grad and p.ndim <= 1]
    return [dict(params=decay, weight_decay=weight_decay), dict(params=no_decay, weight_decay=0.0)]


# --------------------------------------------------------------------------- large-batch proxy


def gaussian_mixture(n: int, *, d: int = 16, classes: int = 4, clusters: int = 3, spread: float = 1.6,
                     label_noise: float = 0.05, rng=None, centres: np.ndarray | None = None
                     ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """n samples in R^d from ``classes * clusters`` unit Gaussians (``clusters`` per class, centres
    N(0, spread^2 I)); a fraction ``label_noise`` of labels is redrawn at random.
    Returns X (n x d), y (n,), centres (pass them back to draw a test set from the same law)."""
    n = check_int(n, "n", minimum=1)
    d = check_int(d, "d", minimum=1)
    classes = check_int(classes, "classes", minimum=2)
    clusters = check_int(clusters, "clusters", minimum=1)
    check_positive(spread, "spread")
    check_in_range(label_noise, "label_noise", 0.0, 1.0, closed=(True, True))
    rng = as_rng(rng)
    if centres is None:
        centres = spread * rng.standard_normal((classes * clusters, d))
    elif np.shape(centres) != (classes * clusters, d):
        raise ValueError(f"centres must have shape {(classes * clusters, d)}, got {np.shape(centres)}")
    comp = rng.integers(classes * clusters, size=n)
    X = centres[comp] + rng.standard_normal((n, d))
    y = comp % classes
    flip = rng.random(n) < label_noise
    y[flip] = rng.integers(classes, size=int(flip.sum()))
    return X, y, centres


@lru_cache(maxsize=2)
def proxy_data(n_train: int = 16384, n_test: int = 4096, seed: int = 0):
    """The proxy's fixed data set (20k samples: 16k train, 4k test), as float32 tensors."""
    Xtr, ytr, c = gaussian_mixture(n_train, rng=seed)
    Xte, yte, _ = gaussian_mixture(n_test, rng=seed + 1000, centres=c)
    t = lambda a, dt=torch.float32: torch.as_tensor(a, dtype=dt)  # noqa: E731
    return t(Xtr), t(ytr, torch.long), t(Xte), t(yte, torch.long)


def train_proxy(method: str, batch_size: int, seed: int, *, epochs: int = 20, lr: float = 0.02,
                alpha: float | None = None, beta1: float | None = None, hidden: int = 64) -> dict:
    """Train a d-64-K ReLU MLP on :func:`proxy_data` with "Lamb" or "ALTO" (paper betas, decay
    1e-4 on all tensors); returns final train loss and test accuracy. ALTO's (alpha, beta1)
    default to the paper's regime for the batch size (large for >= 1024)."""
    check_choice(method, "method", ("Lamb", "ALTO"))
    batch_size = check_int(batch_size, "batch_size", minimum=1)
    seed = check_int(seed, "seed")
    epochs = check_int(epochs, "epochs", minimum=1)
    Xtr, ytr, Xte, yte = proxy_data()
    regime = LARGE_BATCH if batch_size >= 1024 else SMALL_BATCH
    al = regime["alpha"] if alpha is None else alpha
    b1 = regime["beta1"] if beta1 is None else beta1
    gen = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    model = torch.nn.Sequential(torch.nn.Linear(Xtr.shape[1], hidden), torch.nn.ReLU(),
                                torch.nn.Linear(hidden, int(ytr.max()) + 1))
    if method == "Lamb":
        opt = Lamb(model.parameters(), lr=lr)
    else:
        opt = ALTO(model.parameters(), lr=lr, alpha=al, beta1=b1)
    loss_fn = torch.nn.functional.cross_entropy
    n = len(ytr)
    for _ in range(epochs):
        perm = torch.randperm(n, generator=gen)
        for i in range(0, n - batch_size + 1, batch_size):
            idx = perm[i:i + batch_size]
            opt.zero_grad(set_to_none=False)
            loss_fn(model(Xtr[idx]), ytr[idx]).backward()
            opt.step()
    with torch.no_grad():
        train_loss = float(loss_fn(model(Xtr), ytr))
        acc = float((model(Xte).argmax(1) == yte).float().mean())
    return dict(train_loss=train_loss, test_acc=acc)


def proxy_experiment(batch_size: int = 4096, seeds: tuple[int, ...] = (0, 1, 2, 3, 4), **kw) -> dict:
    """Lamb and ALTO over seeds at one batch size: per-method arrays of test accuracy (%).
    Runs torch on one thread (restored afterwards): tiny matrices are slower with more."""
    out = {}
    with one_torch_thread():
        for method in ("Lamb", "ALTO"):
            out[method] = np.array([100 * train_proxy(method, batch_size, s, **kw)["test_acc"] for s in seeds])
    return out


# --------------------------------------------------------------------------- explorers' runs

#: The alpha grid of the explorers (negative explores, positive exploits); 0 is the base method.
ALPHA_GRID = (-95.0, -80.0, -60.0, -40.0, -20.0, -5.0, 0.0, 1.0)
BETA1_GRID = (0.9, 0.95, 0.99)
LR_SCALES = (0.3, 1.0, 3.0)
#: Base optimizers of the explorers: (numpy base, momentum beta2, beta3, eps, label of alpha = 0).
EXPLORER_BASES = {"Adam": ("adam", 0.95, 0.999, 1e-8), "SGD-M": ("sgd", 0.9, 0.999, 1e-8)}


@lru_cache(maxsize=64)
def grid_paths(landscape: str = "ripple", beta1: float = 0.99, lr_scale: float = 1.0,
               base: str = "Adam") -> dict:
    """Iterates of the base method and its E version for every admissible alpha of
    :data:`ALPHA_GRID`, computed in one batched run (one row per alpha). A row that leaves the
    domain or overflows is NaN from there on. Returns alphas (admissible), paths
    (alphas x steps+1 x d) and f values (alphas x steps+1). SGD-M runs use a 10x smaller lr."""
    check_choice(landscape, "landscape", tuple(LANDSCAPES))
    check_choice(base, "base", tuple(EXPLORER_BASES))
    ls = LANDSCAPES[landscape]
    kind, beta2, beta3, eps = EXPLORER_BASES[base]
    alphas = np.array([a for a in ALPHA_GRID if abs(a) * (1.0 - beta1) < 1.0 - 1e-12])
    lr = ls.lr * check_positive(lr_scale, "lr_scale") * (0.1 if kind == "sgd" else 1.0)
    st = ValleyStepper(base=kind, alpha=alphas, beta1=beta1, lr=lr, beta2=beta2, beta3=beta3, eps=eps)
    x = np.tile(np.asarray(ls.x0, dtype=float), (alphas.size, 1))
    paths = np.full((alphas.size, ls.steps + 1, x.shape[1]), np.nan)
    paths[:, 0] = x
    alive = np.ones(alphas.size, dtype=bool)
    with np.errstate(all="ignore"):
        for k in range(1, ls.steps + 1):
            x = st.step(x, np.nan_to_num(ls.jac(x)))
            ok = np.all(np.isfinite(x), axis=1) & (np.abs(x).max(axis=1) < 1e3)
            if ls.domain is not None:
                ok &= ls.domain(np.nan_to_num(x, nan=-1.0))
            alive &= ok
            paths[alive, k] = x[alive]
        fvals = np.where(np.isnan(paths[..., 0]), np.nan,
                         ls.fun(np.nan_to_num(paths, nan=1.0).reshape(-1, x.shape[1])).reshape(paths.shape[:2]))
    return dict(alphas=alphas, paths=paths, f=fvals, lr=lr)


def _check_grid_alpha(alpha: float) -> None:
    if alpha not in ALPHA_GRID:
        raise ValueError(f"alpha must be one of the explorer's grid {ALPHA_GRID}, got {alpha!r}")


def _row(run: dict, alpha: float) -> int | None:
    hits = np.flatnonzero(run["alphas"] == alpha)
    return int(hits[0]) if hits.size else None


def valley_traces(landscape: str, alpha: float, beta1: float = 0.99, lr_scale: float = 1.0,
                  base: str = "Adam") -> tuple[list, dict]:
    """The traces of one valley-explorer frame (landscape panel + decomposition bars) and a
    layout note; shared by the static slider figure and the live explorer."""
    _check_grid_alpha(alpha)
    run = grid_paths(landscape, beta1, lr_scale, base)
    ls = LANDSCAPES[landscape]
    names = (base, "E-Adam" if base == "Adam" else "ESGD")
    keep = np.unique(np.linspace(0, run["paths"].shape[1] - 1, 200).astype(int))
    traces = []
    if landscape == "ripple":
        xs = np.linspace(*ls.xlim, 400)
        traces.append(go.Scatter(x=xs, y=ripple(xs), mode="lines", name="f1(x)",
                                 line=dict(color="#888", width=1.5), showlegend=False))
    else:
        gx, gy = np.linspace(*ls.xlim, 45), np.linspace(*ls.ylim, 45)
        X, Y = np.meshgrid(gx, gy)
        Z = ls.fun(np.column_stack([X.ravel(), Y.ravel()])).reshape(X.shape)
        traces.append(go.Contour(x=gx, y=gy, z=np.log10(Z + 1e-3), colorscale="Viridis", ncontours=25,
                                 showscale=False, showlegend=False, opacity=0.85, line=dict(width=0.4)))
    i_alpha = _row(run, alpha)
    admissible = i_alpha is not None
    for j, (i, nm) in enumerate(((_row(run, 0.0), names[0]), (i_alpha, f"{names[1]} (alpha={alpha:g})"))):
        p = run["paths"][i][keep] if i is not None else np.full((1, len(ls.x0)), np.nan)
        if landscape == "ripple":
            fv = run["f"][i][keep] if i is not None else np.full(1, np.nan)
            traces.append(go.Scatter(x=p[:, 0], y=fv, mode="lines+markers", name=nm,
                                     line=dict(color=color_for(j), width=1), marker=dict(size=4)))
        else:
            traces.append(go.Scatter(x=p[:, 0], y=p[:, 1], mode="lines", name=nm,
                                     line=dict(color=color_for(j), width=2.5)))
    c_now, c_old = (1 + alpha * (1 - beta1), -alpha * (1 - beta1))
    traces.append(go.Bar(x=["on g_k", "on old-gradient EMA"], y=[c_now, c_old], xaxis="x2", yaxis="y2",
                         marker_color=["#1f77b4" if c_now > 0 else "#d62728", "#ff7f0e"],
                         showlegend=False, name="weights"))
    ends = ""
    if admissible:
        ends = "; final x: " + ", ".join(f"{nm.split(' ')[0]} {run['paths'][i, -1, 0]:.2f}"
                                        for i, nm in ((_row(run, 0.0), names[0]), (i_alpha, names[1])))
    note = (f"alpha={alpha:g}: admissible, |alpha| < 1/(1-beta1) = {1 / (1 - beta1):.0f}{ends}" if admissible else
            f"alpha={alpha:g} breaks |alpha| < 1/(1-beta1) = {1 / (1 - beta1):.0f}: E run refused")
    return traces, dict(annotations=[dict(x=0, y=-0.2, xref="paper", yref="paper", showarrow=False,
                                          xanchor="left", text=note,
                                          font=dict(color="#333" if admissible else "#d62728"))])


def _valley_layout(fig: go.Figure, landscape: str, beta1: float) -> go.Figure:
    ls = LANDSCAPES[landscape]
    bound = 1 / (1 - beta1)
    fig.update_layout(xaxis=dict(domain=[0, 0.7]), xaxis2=dict(domain=[0.8, 1.0], anchor="y2"),
                      yaxis2=dict(anchor="x2", range=[-1.2, max(2.2, 1.1 * 0.95 * bound * (1 - beta1))],
                                  title_text="weight in g~ (bound: c on g_k > 0)"))
    fig.add_shape(type="line", xref="x2", yref="y2", x0=-0.5, x1=1.5, y0=0, y1=0,
                  line=dict(color="#d62728", width=2))
    if landscape == "ripple":
        fig.update_xaxes(title_text="x", range=list(ls.xlim), selector=dict(anchor="y"))
        fig.update_yaxes(title_text="f1(x_k)", range=[0.1, 0.75], selector=dict(anchor="x"))
    else:
        fig.update_xaxes(title_text="x", range=list(ls.xlim), selector=dict(anchor="y"))
        fig.update_yaxes(title_text="y", range=list(ls.ylim), selector=dict(anchor="x"))
    return fig


def valley_figure(landscape: str = "ripple", alpha: float = -80.0, beta1: float = 0.99,
                  lr_scale: float = 1.0, base: str = "Adam") -> go.Figure:
    """The live valley explorer: paths of the base method and its E version for one alpha, and
    the two weights of g~ = (1 + alpha(1-beta1)) g_k - alpha(1-beta1) gbar_{k-1}."""
    traces, layout = valley_traces(landscape, alpha, beta1, lr_scale, base)
    fig = go.Figure(traces)
    fig.update_layout(**layout)
    base_layout(fig, title=f"{LANDSCAPES[landscape].label}: {base} vs its E version", height=480)
    return _valley_layout(fig, landscape, beta1)


def valley_slider_figure(landscape: str = "ripple", beta1: float = 0.99) -> go.Figure:
    """Static twin of :data:`EXPLORER_VALLEY`: a slider over alpha on one landscape (Adam)."""
    check_choice(landscape, "landscape", tuple(LANDSCAPES))
    steps = []
    for al in ALPHA_GRID:
        traces, layout = valley_traces(landscape, al, beta1)
        steps.append(SliderStep(f"{al:g}", traces, layout))
    fig = slider_figure(steps, slider_label="alpha (negative explores, positive exploits)",
                        active=ALPHA_GRID.index(-80.0), fixed_axes=False,
                        title=f"{LANDSCAPES[landscape].label}: Adam vs E-Adam (beta1 = {beta1:g})", height=500)
    return _valley_layout(fig, landscape, beta1)


def ripple_minima(lo: float = 1.0, hi: float = 12.0) -> np.ndarray:
    """Local minima of the ripple function on [lo, hi], located on a grid of step 5.5e-4
    (where the derivative changes sign from negative to non-negative)."""
    lo = check_positive(lo, "lo")
    if not (isinstance(hi, (int, float)) and math.isfinite(hi) and hi > lo):
        raise ValueError(f"hi must be a finite number above lo = {lo}, got {hi!r}")
    xs = np.linspace(lo, hi, 20001)
    g = ripple_grad(xs)[:, 0]
    return xs[1:][(g[:-1] < 0) & (g[1:] >= 0)]


def phase_traces(alpha: float, beta1: float = 0.99, lr_scale: float = 1.0) -> list:
    """Phase portrait (x_k, x_k - x_{k-1}) on the ripple function: Adam and E-Adam(alpha)."""
    _check_grid_alpha(alpha)
    run = grid_paths("ripple", beta1, lr_scale, "Adam")
    traces = []
    for j, (a, nm) in enumerate(((0.0, "Adam"), (alpha, f"E-Adam (alpha={alpha:g})"))):
        i = _row(run, a)
        x = run["paths"][i, :, 0] if i is not None else np.full(2, np.nan)
        dx = np.diff(x)
        keep = np.unique(np.linspace(0, dx.size - 1, 300).astype(int))
        traces.append(go.Scatter(x=x[1:][keep], y=dx[keep], mode="lines+markers", name=nm,
                                 line=dict(color=color_for(j), width=1), marker=dict(size=4)))
    return traces


def _phase_layout(fig: go.Figure) -> go.Figure:
    for xm in ripple_minima():
        fig.add_vline(x=float(xm), line=dict(color="#999", dash="dot", width=1))
    fig.update_xaxes(range=[1.0, 12.0])
    fig.update_yaxes(range=[-0.06, 0.1])
    return fig


def phase_figure(alpha: float = -80.0, beta1: float = 0.99, lr_scale: float = 1.0) -> go.Figure:
    """The live phase portrait; dotted lines mark the ripple function's local minima."""
    fig = go.Figure(phase_traces(alpha, beta1, lr_scale))
    base_layout(fig, title="Phase portrait on f1: position vs velocity", xaxis_title="position x_k",
                yaxis_title="velocity x_k - x_(k-1)", height=450)
    return _phase_layout(fig)


def phase_slider_figure(beta1: float = 0.99) -> go.Figure:
    """Static twin of :data:`EXPLORER_PHASE`: a slider over alpha."""
    steps = [SliderStep(f"{al:g}", phase_traces(al, beta1)) for al in ALPHA_GRID]
    fig = slider_figure(steps, slider_label="alpha", active=ALPHA_GRID.index(-80.0), fixed_axes=False,
                        title="Phase portrait on f1: position vs velocity", xaxis_title="position x_k",
                        yaxis_title="velocity x_k - x_(k-1)", height=470)
    return _phase_layout(fig)


EXPLORER_VALLEY = Explorer(
    "19", "valley", valley_figure,
    {"landscape": Choice("landscape", list(LANDSCAPES), "ripple"),
     "alpha": Slider("alpha", list(ALPHA_GRID), -80.0),
     "beta1": Slider("beta1 (grad-diff EMA)", list(BETA1_GRID), 0.99),
     "lr_scale": Slider("lr x", list(LR_SCALES), 1.0),
     "base": Choice("base optimizer", list(EXPLORER_BASES), "Adam")},
    description="Base optimizer vs its E version on three landscapes; alpha < 0 explores.")

EXPLORER_PHASE = Explorer(
    "19", "phase", phase_figure,
    {"alpha": Slider("alpha", list(ALPHA_GRID), -80.0),
     "beta1": Slider("beta1 (grad-diff EMA)", list(BETA1_GRID), 0.99),
     "lr_scale": Slider("lr x", list(LR_SCALES), 1.0)},
    description="Phase portrait (x_k, x_k - x_{k-1}) of Adam and E-Adam on the ripple function.")


# --------------------------------------------------------------------------- claims

RIPPLE_SETTINGS = dict(base="adam", beta1=0.99, lr=0.03, beta2=0.95, beta3=0.999, eps=1e-8, maxiter=3000)


def ripple_pair(alpha: float = -80.0, **overrides) -> dict[str, Result]:
    """The card's check 1: Adam and E-Adam(alpha) from x0 = 2.3 on the ripple function."""
    kw = {**RIPPLE_SETTINGS, **overrides}
    dom = LANDSCAPES["ripple"].domain
    return {"Adam": valley_run(ripple, [2.3], ripple_grad, alpha=0.0, name="Adam", domain=dom, **kw),
            "E-Adam": valley_run(ripple, [2.3], ripple_grad, alpha=alpha, name=f"E-Adam (alpha={alpha:g})",
                                 domain=dom, **kw)}


@claim("19", "On the paper's ripple function E-Adam (alpha = -80) walks past the ripples where Adam stalls",
       expect="final f(E-Adam) <= 0.9 x final f(Adam) and max x reached by E-Adam >= 1.5 x Adam's",
       name="ripple_exploration")
def ripple_exploration(fast: bool = False) -> Measured:
    runs = ripple_pair()
    fa, fe = runs["Adam"].fun, runs["E-Adam"].fun
    xa, xe = runs["Adam"].iterates.max(), runs["E-Adam"].iterates.max()
    values = {"final_f_Adam": fa, "final_f_EAdam": fe, "f_ratio": fe / fa,
              "max_x_Adam": xa, "max_x_EAdam": xe, "x_ratio": xe / xa}
    if not fast:  # the control: with a 10x smaller step both stall at the first ripple
        small = ripple_pair(lr=0.003)
        values["max_x_EAdam_lr0.003"] = small["E-Adam"].iterates.max()
    holds = fe <= 0.9 * fa and xe >= 1.5 * xa
    return Measured(values, holds=holds, details=runs,
                    summary=f"f: {fe:.3f} vs {fa:.3f}; max x: {xe:.2f} vs {xa:.2f}")


@claim("19", "ALTO beats Lamb in test accuracy at batch 4096 on a small MLP proxy",
       expect="mean test acc(ALTO) - mean(Lamb) > 0 by more than 2 paired standard errors (paper: +2.5 points)",
       reproduces=False, name="large_batch_proxy")
def large_batch_proxy(fast: bool = False) -> Measured:
    seeds = (0, 1, 2) if fast else (0, 1, 2, 3, 4)
    res = proxy_experiment(4096, seeds)
    diff = res["ALTO"] - res["Lamb"]
    se = diff.std(ddof=1) / np.sqrt(diff.size) if diff.size > 1 else np.inf
    gain = diff.mean()
    values = {"Lamb_mean_pct": res["Lamb"].mean(), "Lamb_sd_pct": res["Lamb"].std(ddof=1),
              "ALTO_mean_pct": res["ALTO"].mean(), "ALTO_sd_pct": res["ALTO"].std(ddof=1),
              "gain_pts": gain, "paired_se_pts": se, "ALTO_ge_Lamb": bool(gain >= 0)}
    return Measured(values, holds=bool(gain > 2 * se), details=res,
                    summary=f"ALTO - Lamb = {gain:+.3f} +- {se:.3f} points over {len(seeds)} seeds")
