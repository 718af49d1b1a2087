"""Chapter 19: exploring along valleys, the E adaptor and ALTO (Zhao et al., NeurIPS 2025).

The "E" adaptor turns any gradient-based optimizer into a valley-exploring one. It keeps an
exponential moving average (EMA) of *gradient differences*,

    a_k = beta1 a_{k-1} + (1 - beta1) (g_k - g_{k-1}),        g_0 = 0, a_0 = 0,

and hands the base optimizer g~_k = g_k + alpha a_k instead of g_k. With alpha < 0 the method
keeps walking along valleys of low loss (explore); with alpha > 0 it dives into the nearest
minimum (exploit). The paper requires |alpha| < 1 / (1 - beta1). Note the paper's naming:
beta1 is the gradient-difference EMA; the base optimizer's momentum is beta2 and Adam's second
moment beta3.

What is here (the methods; the chapter's experiments, figures and claims are in
:mod:`optbook.training.valley_explorer_chapter`):

* :class:`E`: the adaptor as a real ``torch.optim.Optimizer`` that wraps a base optimizer;
  :class:`ESGD` (Algorithm 3), :class:`EAdam` (Algorithm 4) and :class:`ALTO` (Algorithm 2, the
  adapted Lamb; ``bias_correction=False`` gives "ALTO Vanilla", Algorithm 1) are ``E`` around
  ``torch.optim.SGD``, ``torch.optim.Adam`` and :class:`Lamb` (the baseline; torch has none).
* :class:`ValleyStepper` and :func:`valley_run`: the same updates in numpy, batched over rows
  (one row per alpha), for the 1-D ripple function and the 2-D landscapes; the tests check they
  agree with the torch optimizers to rounding error.
* the paper's ripple test function, Rosenbrock and the squared cardioid.

Everything follows the official code (github.com/zhaotong94/E, ``E.py`` and ``ALTO.py``) as read
for the chapter's card; code-only extras are options, off by default. One deliberate departure:
the paper's trust ratio phi(|theta|) / (|r| + eps2 phi(|theta|)) with phi(t) = t + eps3 is about
1e-10 / |r| for a tensor that is exactly zero (a zero-initialised bias), which freezes it; like
standard LAMB (You et al. 2020; NVIDIA apex, pytorch-optimizer) we use ratio 1 when |theta| = 0.
"""
from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import torch

from ..core import Result, Trace, check_choice, check_in_range, check_int, check_positive, check_vector

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
    phi(t) = t + phi_eps, or 1 where |x| = 0). ``alpha`` and the momentum ``beta2`` are scalars or
    one value per row (a whole grid in one run); alpha = 0 is the base method. The bias correction
    touches m and v only, never a.
    """

    base: str = "adam"
    alpha: float | np.ndarray = 0.0
    beta1: float = 0.99
    lr: float = 1e-3
    beta2: float | np.ndarray = 0.9
    beta3: float = 0.99
    eps: float = 1e-6
    weight_decay: float = 0.0
    trust_eps: float = 1e-6
    phi_eps: float = 1e-10
    init: str = "zero"

    def __post_init__(self) -> None:
        check_choice(self.base, "base", BASES)
        check_choice(self.init, "init", ("zero", "first"))
        check_in_range(self.beta1, "beta1", 0.0, 1.0, closed=(True, False))
        alphas = np.atleast_1d(np.asarray(self.alpha, dtype=float))
        if alphas.ndim != 1 or alphas.size == 0:
            raise ValueError(f"alpha must be a scalar or a non-empty 1-D array, got shape {alphas.shape}")
        for al in alphas:
            check_alpha_beta1(float(al), self.beta1)
        self.alpha = alphas[:, None] if alphas.size > 1 else float(alphas[0])
        check_positive(self.lr, "lr")
        beta2s = np.atleast_1d(np.asarray(self.beta2, dtype=float))
        if beta2s.ndim != 1:
            raise ValueError(f"beta2 must be a scalar or a 1-D array, got shape {beta2s.shape}")
        for b in beta2s:
            check_in_range(float(b), "beta2", 0.0, 1.0, closed=(True, False))
        self.beta2 = beta2s[:, None] if beta2s.size > 1 else float(beta2s[0])
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
        w_norm = np.linalg.norm(x, axis=-1, keepdims=True)
        r_norm = np.linalg.norm(r, axis=-1, keepdims=True)
        phi = w_norm + self.phi_eps
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = np.where((w_norm > 0) & (r_norm > 0), phi / (r_norm + self.trust_eps * phi), 1.0)
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
    """Gradient of :func:`rosenbrock2`, row-wise, as a (rows, 2) array."""
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
    """Gradient of :func:`cardioid`, row-wise, as a (rows, 2) array."""
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


def _check_adam_group(group: dict) -> None:
    """Validate the Adam-type hyperparameters of one param group (defaults already filled in)."""
    check_positive(group["lr"], "lr")
    betas = group["betas"]
    if not (isinstance(betas, (tuple, list)) and len(betas) == 2):
        raise ValueError(f"betas must be a pair (beta2, beta3), got {betas!r}")
    check_in_range(betas[0], "betas[0]", 0.0, 1.0, closed=(True, False))
    check_in_range(betas[1], "betas[1]", 0.0, 1.0, closed=(True, False))
    check_positive(group["eps"], "eps")
    check_positive(group.get("weight_decay", 0.0), "weight_decay", allow_zero=True)


def _check_lamb_group(group: dict) -> None:
    _check_adam_group(group)
    check_positive(group["trust_eps"], "trust_eps", allow_zero=True)
    check_positive(group["phi_eps"], "phi_eps", allow_zero=True)
    check_choice(group["trust"], "trust", ("paper", "code"))


def _check_sgd_group(group: dict) -> None:
    check_positive(group["lr"], "lr")
    check_in_range(group["momentum"], "beta2 (momentum)", 0.0, 1.0, closed=(True, False))


def _trust_ratio(group: dict, w_norm: torch.Tensor, r_norm: torch.Tensor) -> torch.Tensor:
    """Lamb's layer-wise factor. "paper": phi(|w|) / (|r| + trust_eps phi(|w|)), phi(t) = t + phi_eps;
    "code" (``ALTO.py``): |w| / |r| when the group decays its weights. Both are 1 where |w| = 0 or
    |r| = 0, as in standard LAMB, so that a zero-initialised tensor (a bias) can move at all."""
    one = torch.ones((), dtype=w_norm.dtype, device=w_norm.device)
    if group["trust"] == "paper":
        phi = w_norm + group["phi_eps"]
        ratio = phi / (r_norm + group["trust_eps"] * phi)
    elif group["weight_decay"]:
        ratio = w_norm / torch.where(r_norm > 0, r_norm, one)
    else:
        return one
    return torch.where((w_norm > 0) & (r_norm > 0), ratio, one)


class Lamb(torch.optim.Optimizer):
    """Lamb (You et al. 2020), the paper's large-batch baseline: ALTO with alpha = 0.

    Per parameter tensor ("layer" i): Adam's direction r = m^/(sqrt(v^) + eps) with the paper's
    betas (beta2, beta3) = (0.9, 0.99), plus decoupled decay r += weight_decay * theta, then

        theta -= lr * r * phi(|theta|) / (|r| + trust_eps * phi(|theta|)),   phi(t) = t + phi_eps,

    so each layer moves by about lr * |theta| (the trust ratio; Algorithm 2 with alpha = 0). A
    tensor with |theta| = 0 takes the plain Adam step (ratio 1, as in standard LAMB): the paper's
    formula would give it a ratio of about 1e-10 / |r| and freeze it at zero.

    Parameters
    ----------
    bias_correction : bool
        False gives the "Vanilla" variant (Algorithm 1): m and v without 1 - beta^k.
    trust : {"paper", "code"}
        "code" is ``ALTO.py``'s rule: ratio |theta|/|r| (1 where either norm is 0), applied only
        when the group's weight_decay is non-zero.

    Every hyperparameter may be overridden per param group and is validated there.
    """

    def __init__(self, params, lr: float = 1e-3, betas: tuple[float, float] = (0.9, 0.99),
                 eps: float = 1e-6, weight_decay: float = 1e-4, trust_eps: float = 1e-6,
                 phi_eps: float = 1e-10, bias_correction: bool = True, trust: str = "paper"):
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, trust_eps=trust_eps,
                        phi_eps=phi_eps, bias_correction=bool(bias_correction), trust=trust)
        _check_lamb_group(defaults)
        defaults["betas"] = tuple(betas)
        super().__init__(params, defaults)

    def add_param_group(self, param_group: dict) -> None:
        _check_lamb_group({**self.defaults, **param_group})
        super().add_param_group(param_group)

    @torch.no_grad()
    def step(self, closure=None):  # type: ignore[override]
        """One Lamb step on every parameter with a gradient (layer-wise trust ratio); returns the
        closure's loss if one is given."""
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
                ratio = _trust_ratio(group, torch.linalg.vector_norm(p), torch.linalg.vector_norm(r))
                p.add_(r * ratio, alpha=-group["lr"])
        return loss


class E(torch.optim.Optimizer):
    """The E adaptor (the paper's "E", ``E.py``): wraps a base optimizer so that it steps with
    g~ = g + alpha a, a = EMA_beta1(g_k - g_{k-1}), instead of the raw gradient g.

    It shares the base optimizer's ``param_groups`` (so ``lr`` schedulers act on both) and adds
    ``alpha`` and ``beta1`` to each group; both, and the base's hyperparameters, may be overridden
    per group and are validated there. ``step(closure)`` evaluates the closure (if given),
    replaces every ``p.grad`` by g~, calls ``base.step()`` and puts the raw gradient back, so
    logging or clipping outside the optimizer sees the true gradient. A parameter whose grad is
    None is skipped.

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
        self.base.param_groups = self.param_groups  # one list: a group added later reaches both

    def _check_base_group(self, group: dict) -> None:
        """Validate the base optimizer's hyperparameters in one group (subclasses know them)."""

    def add_param_group(self, param_group: dict) -> None:
        group = dict(param_group)
        if hasattr(self, "base"):  # fill the base's defaults so that base.step() finds every key
            for key, value in self.base.defaults.items():
                group.setdefault(key, value)
        check_alpha_beta1(group.get("alpha", self.defaults["alpha"]), group.get("beta1", self.defaults["beta1"]))
        self._check_base_group(group)
        super().add_param_group(group)

    def state_dict(self) -> dict:
        return {"e": super().state_dict(), "base": self.base.state_dict()}

    def load_state_dict(self, state_dict: dict) -> None:
        super().load_state_dict(state_dict["e"])
        self.base.load_state_dict(state_dict["base"])
        self.base.param_groups = self.param_groups  # keep one shared list of groups

    @torch.no_grad()
    def step(self, closure=None):  # type: ignore[override]
        """One step: gradients clipped to ``max_grad_norm`` (if set), each replaced by
        g + alpha a (a the running average of gradient differences), then the base optimizer steps;
        returns the closure's loss if one is given."""
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
        _check_sgd_group(dict(lr=lr, momentum=beta2))
        super().__init__(torch.optim.SGD(params, lr=lr, momentum=beta2), alpha, beta1, init)

    def _check_base_group(self, group: dict) -> None:
        _check_sgd_group(group)


class EAdam(E):
    """EAdam (Algorithm 4): ``torch.optim.Adam`` with betas (beta2, beta3) fed by the E adaptor;
    r = m^/(sqrt(v^) + eps). Defaults: the paper's large-batch (alpha, beta1) = (-5, 0.99)."""

    def __init__(self, params, lr: float = 1e-3, alpha: float = -5.0, beta1: float = 0.99,
                 betas: tuple[float, float] = (0.9, 0.99), eps: float = 1e-6, init: str = "zero"):
        _check_adam_group(dict(lr=lr, betas=betas, eps=eps))
        super().__init__(torch.optim.Adam(params, lr=lr, betas=tuple(betas), eps=eps), alpha, beta1, init)

    def _check_base_group(self, group: dict) -> None:
        _check_adam_group(group)


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

    def _check_base_group(self, group: dict) -> None:
        _check_lamb_group(group)


def lamb_param_groups(model: torch.nn.Module, weight_decay: float = 1e-4) -> list[dict]:
    """``ALTO.py``'s grouping: tensors with one dimension (biases, norm scales) get no decay."""
    check_positive(weight_decay, "weight_decay", allow_zero=True)
    decay = [p for p in model.parameters() if p.requires_grad and p.ndim > 1]
    no_decay = [p for p in model.parameters() if p.requires_grad and p.ndim <= 1]
    return [dict(params=decay, weight_decay=weight_decay), dict(params=no_decay, weight_decay=0.0)]
