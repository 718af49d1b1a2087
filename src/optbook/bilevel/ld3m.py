"""LD3M: dataset distillation through a diffusion model's sampler (Moser et al., NeurIPS 2025).

Generative-prior dataset distillation learns latent codes ``z`` and class embeddings ``c`` that a
*frozen* generator turns into synthetic training points ``x = G(z, c)``. With a latent diffusion
model, ``G`` is a DDIM chain; LD3M adds a linearly decaying skip connection from the learnable
latent into the predicted clean sample of every reverse step, so that gradients reach ``z``.

The "pretrained denoiser" here is the exact, Bayes-optimal one of a Gaussian mixture prior
(:class:`GaussianMixturePrior`), and the decoder is the identity: a CPU-sized stand-in for the
paper's latent diffusion model. Everything is torch, float64, and differentiable end to end.
"""
from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import torch

from ..core import as_rng, check_choice, check_in_range, check_int, check_positive, check_real

DTYPE = torch.float64
#: Skip schedules: the paper's linear decay, none (naive backpropagation), the constant ablation
#: and a cosine decay.
SCHEDULES = ("linear", "none", "constant", "cosine")


def _as_tensor(x, name: str, ndim: int | tuple[int, ...], dim: int | None = None) -> torch.Tensor:
    try:
        t = torch.as_tensor(x, dtype=DTYPE) if not isinstance(x, torch.Tensor) else x.to(DTYPE)
    except (TypeError, ValueError, RuntimeError) as err:
        raise ValueError(f"{name} must be an array of numbers") from err
    ndims = (ndim,) if isinstance(ndim, int) else ndim
    if t.ndim not in ndims:
        raise ValueError(f"{name} must be a {' or '.join(map(str, ndims))}-D array, got shape {tuple(t.shape)}")
    if t.numel() == 0:
        raise ValueError(f"{name} must not be empty")
    if dim is not None and t.shape[-1] != dim:
        raise ValueError(f"{name} must have {dim} columns (the latent dimension), got {t.shape[-1]}")
    if not torch.isfinite(t).all():
        raise ValueError(f"{name} must be finite (found NaN or inf)")
    return t


def linear_alphas_cumprod(T: int = 1000, beta_start: float = 1e-4, beta_end: float = 0.02) -> np.ndarray:
    """The DDPM noise level :math:`\\bar\\alpha_t=\\prod_{s\\le t}(1-\\beta_s)`, t = 0..T-1, of a
    linear beta schedule."""
    T = check_int(T, "T", minimum=2)
    b0 = check_in_range(beta_start, "beta_start", 0.0, 1.0)
    b1 = check_in_range(beta_end, "beta_end", 0.0, 1.0)
    if b1 < b0:
        raise ValueError(f"beta_end must be >= beta_start, got {b1} < {b0}")
    return np.cumprod(1.0 - np.linspace(b0, b1, T))


def ddim_timesteps(steps: int, T: int = 1000) -> np.ndarray:
    """Uniformly spaced DDIM timesteps as in the latent-diffusion code (``range(0, T, T // S) + 1``),
    in increasing order. Where ``S`` does not divide ``T`` that code yields more than ``S`` steps;
    here the list is cut to the first ``S``, so the chain then starts below the top timestep (every
    step count the chapter uses divides 1000)."""
    S = check_int(steps, "steps", minimum=2)
    T = check_int(T, "T", minimum=2)
    if S > T - 1:
        raise ValueError(f"steps must be at most T - 1 = {T - 1}, got {S}")
    return np.arange(0, T, T // S)[:S] + 1


def skip_weights(steps: int, schedule: str = "linear", kappa: float = 1.0) -> np.ndarray:
    """The skip weight of each reverse step, in sampling order (first step first).

    ``linear`` is LD3M's: :math:`j/(S-1)` at loop index :math:`j=S-1,\\dots,0`, so 1 at the first
    step and exactly 0 at the last. ``none`` is naive backpropagation (all zero), ``constant`` the
    ablation (1/2 everywhere), ``cosine`` a decay :math:`\\tfrac12(1+\\cos(\\pi i/(S-1)))`. Every
    weight is multiplied by ``kappa`` (the trade-off knob of the chapter's explorer).
    """
    S = check_int(steps, "steps", minimum=2)
    schedule = check_choice(schedule, "schedule", SCHEDULES)
    kappa = check_in_range(kappa, "kappa", 0.0, 4.0, closed=(True, True))
    i = np.arange(S, dtype=float)
    w = {"linear": (S - 1 - i) / (S - 1), "none": np.zeros(S), "constant": np.full(S, 0.5),
         "cosine": 0.5 * (1 + np.cos(np.pi * i / (S - 1)))}[schedule]
    return kappa * w


@dataclass
class GaussianMixturePrior:
    """A class-conditional isotropic Gaussian mixture :math:`\\sum_k\\pi_k N(\\mu_k, s_k^2 I)`
    whose exact posterior mean :math:`E[x_0\\mid x_t]` plays the pretrained denoiser.

    ``labels[k]`` is the class of component ``k``; conditioning on class ``y`` keeps that class's
    components only.
    """

    means: np.ndarray
    variances: np.ndarray
    weights: np.ndarray
    labels: np.ndarray

    def __post_init__(self) -> None:
        mu = _as_tensor(self.means, "means", 2)
        K, D = mu.shape
        var = _as_tensor(np.broadcast_to(np.asarray(self.variances, dtype=float), (K,)).copy(), "variances", 1)
        if (var <= 0).any():
            raise ValueError("variances must be positive")
        w = _as_tensor(self.weights, "weights", 1)
        if w.shape[0] != K or (w <= 0).any():
            raise ValueError(f"weights must be {K} positive numbers (one per component)")
        lab = np.asarray(self.labels)
        if lab.shape != (K,) or not np.issubdtype(lab.dtype, np.integer) or lab.min() < 0:
            raise ValueError(f"labels must be {K} non-negative integers (one class per component)")
        self.means, self.variances = mu, var
        self.log_weights = torch.log(w / w.sum())
        self.labels = torch.as_tensor(lab, dtype=torch.long)
        self.n_classes = int(lab.max()) + 1
        self.dim = D

    @property
    def n_components(self) -> int:
        return self.means.shape[0]

    def class_mask(self, y) -> torch.Tensor:
        """Boolean (n, K): which components belong to each sample's class."""
        y = torch.as_tensor(y, dtype=torch.long)
        if y.ndim != 1 or y.numel() == 0 or y.min() < 0 or y.max() >= self.n_classes:
            raise ValueError(f"y must be a non-empty 1-D array of classes in 0..{self.n_classes - 1}")
        return self.labels[None, :] == y[:, None]

    def class_logits(self, y) -> torch.Tensor:
        """The class embeddings the prior starts from: log-weights of the class's components
        (others are masked out by :meth:`posterior_mean`)."""
        mask = self.class_mask(y)
        return self.log_weights.expand(mask.shape[0], -1).clone()

    def posterior_mean(self, x: torch.Tensor, abar: float, logits: torch.Tensor | None = None,
                       mask: torch.Tensor | None = None) -> torch.Tensor:
        """:math:`E[x_0\\mid x_t=x]` at noise level :math:`\\bar\\alpha` for
        :math:`x_t=\\sqrt{\\bar\\alpha}x_0+\\sqrt{1-\\bar\\alpha}\\,\\epsilon`; ``logits`` (n, K) replace the
        mixture's log-weights (a learnable class embedding), ``mask`` (n, K) keeps some components."""
        a, ra = float(abar), math.sqrt(float(abar))
        var = a * self.variances + (1 - a)                                  # (K,)
        # ||x - sqrt(a) mu_k||^2 expanded, so that no (..., n, K, D) tensor is formed
        sq = (x ** 2).sum(-1, keepdim=True) - 2 * ra * (x @ self.means.T) + a * (self.means ** 2).sum(-1)
        lw = self.log_weights if logits is None else logits
        logp = lw - 0.5 * sq / var - 0.5 * self.dim * torch.log(var)
        if mask is not None:
            logp = logp.masked_fill(~mask, -math.inf)
        resp = torch.softmax(logp, dim=-1)                                  # (..., n, K)
        shrink = ra * self.variances / var                                  # (K,)
        # sum_k resp_k [mu_k + shrink_k (x - sqrt(a) mu_k)]
        return (resp * (1 - ra * shrink)) @ self.means + (resp @ shrink)[..., None] * x

    def eps(self, x: torch.Tensor, abar: float, logits=None, mask=None) -> torch.Tensor:
        """The Bayes-optimal noise prediction :math:`\\hat\\epsilon(x_t)` (the "U-Net")."""
        m = self.posterior_mean(x, abar, logits, mask)
        return (x - math.sqrt(abar) * m) / math.sqrt(1 - abar)

    def log_prob(self, x) -> np.ndarray:
        """Log-density of the clean mixture at the rows of ``x``."""
        x = _as_tensor(x, "x", 2, self.dim)
        diff = x[:, None, :] - self.means[None]
        logp = (self.log_weights - 0.5 * (diff ** 2).sum(-1) / self.variances
                - 0.5 * self.dim * torch.log(2 * math.pi * self.variances))
        return torch.logsumexp(logp, -1).numpy()

    def sample(self, n: int, rng=None, y=None) -> tuple[np.ndarray, np.ndarray]:
        """``n`` exact draws (and their classes); with ``y`` (one class), from that class only."""
        n = check_int(n, "n", minimum=1)
        g = as_rng(rng)
        p = torch.softmax(self.log_weights, 0).numpy()
        if y is not None:
            p = np.where(self.labels.numpy() == check_int(y, "y"), p, 0.0)
            if p.sum() == 0:
                raise ValueError(f"y must be a class in 0..{self.n_classes - 1}, got {y}")
        k = g.choice(self.n_components, size=n, p=p / p.sum())
        x = self.means.numpy()[k] + np.sqrt(self.variances.numpy()[k])[:, None] * g.standard_normal((n, self.dim))
        return x, self.labels.numpy()[k]


def random_mixture(n_components: int = 5, dim: int = 8, spread: float = 1.5, variance: float = 0.05,
                   rng=None) -> GaussianMixturePrior:
    """Means :math:`\\mu_k\\sim N(0,\\text{spread}^2 I)`, one shared variance, equal weights, one class."""
    K, D = check_int(n_components, "n_components", minimum=1), check_int(dim, "dim", minimum=1)
    spread, variance = check_positive(spread, "spread"), check_positive(variance, "variance")
    mu = spread * as_rng(rng).standard_normal((K, D))
    return GaussianMixturePrior(mu, np.full(K, variance), np.ones(K), np.zeros(K, dtype=int))


@dataclass
class Chain:
    """One run of the sampler: the output and every intermediate state (first = the start)."""

    x: torch.Tensor
    states: list[torch.Tensor]


def ld3m_sample(prior: GaussianMixturePrior, z: torch.Tensor, y, noise: torch.Tensor, *, steps: int = 10,
                schedule: str = "linear", kappa: float = 1.0, guidance: float = 1.0,
                class_logits: torch.Tensor | None = None, start: str = "q_sample",
                alphas_cumprod: np.ndarray | None = None,
                hook: Callable[[int, torch.Tensor], None] | None = None) -> Chain:
    """Deterministic DDIM (:math:`\\eta=0`) from the learnable latent ``z`` with LD3M's skip
    connection (the modified ``p_sample_ddim`` of the paper's code).

    The start is ``q_sample``: :math:`x=\\sqrt{\\bar\\alpha_{\\tau_S}}z+\\sqrt{1-\\bar\\alpha_{\\tau_S}}\\,\\epsilon`
    with the fixed ``noise`` :math:`\\epsilon` (``start="noise"`` starts at :math:`x=\\epsilon` and
    ignores ``z`` there). At reverse step :math:`i` the guided noise prediction gives the clean
    estimate :math:`\\hat x_0`, which is blended with the latent,
    :math:`\\hat x_0\\leftarrow(1-\\lambda_i)\\hat x_0+\\lambda_i z` (:func:`skip_weights`), before the
    DDIM update. ``guidance`` :math:`w` mixes the unconditional and class-conditional predictions,
    :math:`\\hat\\epsilon_\\varnothing+w(\\hat\\epsilon_c-\\hat\\epsilon_\\varnothing)` (w = 1: conditional only).
    ``class_logits`` (n, K) is the learnable class embedding (default: the prior's weights).
    The decoder is the identity. ``hook(i, x)`` sees every state (for per-step gradients).
    """
    z = _as_tensor(z, "z", (2, 3), prior.dim)
    noise = _as_tensor(noise, "noise", (2, 3), prior.dim)
    if noise.shape != z.shape:
        raise ValueError(f"noise must have the shape of z {tuple(z.shape)}, got {tuple(noise.shape)}")
    mask = prior.class_mask(y)
    if mask.shape[0] != z.shape[-2]:
        raise ValueError(f"y must give one class per row of z ({z.shape[-2]}), got {mask.shape[0]}")
    if class_logits is not None:
        class_logits = _as_tensor(class_logits, "class_logits", (2, 3))
        if class_logits.shape[-2:] != mask.shape:
            raise ValueError(f"class_logits must have shape {tuple(mask.shape)}, got {tuple(class_logits.shape)}")
    w = check_real(guidance, "guidance")
    start = check_choice(start, "start", ("q_sample", "noise"))
    lam = skip_weights(steps, schedule, kappa)
    ac = linear_alphas_cumprod() if alphas_cumprod is None else np.asarray(alphas_cumprod, dtype=float)
    ts = ddim_timesteps(steps, len(ac))
    a_t, a_prev = ac[ts][::-1], np.concatenate([[ac[0]], ac[ts[:-1]]])[::-1]
    x = math.sqrt(a_t[0]) * z + math.sqrt(1 - a_t[0]) * noise if start == "q_sample" else noise
    states = [x]
    if hook is not None:
        hook(0, x)
    for i in range(len(ts)):
        e = prior.eps(x, a_t[i], class_logits, mask)
        if w != 1.0:
            e = prior.eps(x, a_t[i]) + w * (e - prior.eps(x, a_t[i]))
        x0 = (x - math.sqrt(1 - a_t[i]) * e) / math.sqrt(a_t[i])
        if lam[i] != 0.0:
            x0 = (1 - lam[i]) * x0 + lam[i] * z
        x = math.sqrt(a_prev[i]) * x0 + math.sqrt(1 - a_prev[i]) * e
        states.append(x)
        if hook is not None:
            hook(i + 1, x)
    return Chain(x, states)


def latent_gradient(prior: GaussianMixturePrior, z, noise, target, *, steps: int = 10, schedule: str = "linear",
                    kappa: float = 1.0) -> tuple[np.ndarray, np.ndarray]:
    """:math:`\\|\\nabla_z L\\|` for :math:`L=\\|x_{out}(z)-\\text{target}\\|^2` (class 0) and the norm
    of :math:`\\partial L/\\partial x` at every state of the chain (start first), for each row of ``z``
    (rows are independent draws: shapes (n, D) -> (n,) and (n, S + 1); a 1-D ``z`` gives a float
    and an (S + 1,) array)."""
    one = np.ndim(z) == 1
    z = _as_tensor(np.atleast_2d(z) if one else z, "z", 2, prior.dim).clone().requires_grad_(True)
    noise = _as_tensor(np.atleast_2d(noise) if np.ndim(noise) == 1 else noise, "noise", 2, prior.dim)
    target = _as_tensor(np.atleast_2d(target) if np.ndim(target) == 1 else target, "target", 2, prior.dim)
    if target.shape != z.shape:
        raise ValueError(f"target must have the shape of z {tuple(z.shape)}, got {tuple(target.shape)}")
    states: list[torch.Tensor] = []

    def keep(_i, x):
        x.retain_grad()
        states.append(x)

    chain = ld3m_sample(prior, z, np.zeros(z.shape[0], dtype=int), noise, steps=steps, schedule=schedule,
                        kappa=kappa, hook=keep)
    ((chain.x - target) ** 2).sum().backward()
    norms = z.grad.norm(dim=-1).numpy()
    per_step = torch.stack([s.grad.norm(dim=-1) for s in states], dim=-1).numpy()
    return (float(norms[0]), per_step[0]) if one else (norms, per_step)


def random_embedding(dim: int, hidden: int = 64, out: int = 32, generators: list[torch.Generator] | None = None
                     ) -> Callable[[torch.Tensor], torch.Tensor]:
    """Freshly drawn two-layer ReLU networks (He initialisation), one per generator (stacked along
    a leading axis): DM's random feature map, redrawn every outer iteration."""
    d, h, o = (check_int(v, n, minimum=1) for v, n in ((dim, "dim"), (hidden, "hidden"), (out, "out")))
    gens = generators if generators else [None]
    W1 = torch.stack([torch.randn(d, h, dtype=DTYPE, generator=g) for g in gens]) * math.sqrt(2 / d)
    b1 = 0.1 * torch.stack([torch.randn(1, h, dtype=DTYPE, generator=g) for g in gens])
    W2 = torch.stack([torch.randn(h, o, dtype=DTYPE, generator=g) for g in gens]) * math.sqrt(2 / h)
    return lambda x: torch.relu(x @ W1 + b1) @ W2


def dm_loss(phi: Callable[[torch.Tensor], torch.Tensor], real: torch.Tensor, real_y, syn: torch.Tensor, syn_y,
            n_classes: int) -> torch.Tensor:
    """Distribution matching (DM): :math:`\\sum_c\\|\\overline{\\phi(x^{real}_c)}-\\overline{\\phi(x^{syn}_c)}\\|^2`,
    the squared distance between per-class mean embeddings. ``real`` and ``syn`` may carry a
    leading batch axis (one loss per entry, summed; leading axes broadcast); every class must appear in
    both sets."""
    real_y, syn_y = torch.as_tensor(np.asarray(real_y)), torch.as_tensor(np.asarray(syn_y))
    classes = torch.arange(n_classes)
    one_r = (real_y[None, :] == classes[:, None]).to(DTYPE)
    one_s = (syn_y[None, :] == classes[:, None]).to(DTYPE)
    if (one_r.sum(1) == 0).any() or (one_s.sum(1) == 0).any():
        raise ValueError("every class must appear in real_y and in syn_y")
    mr = (one_r / one_r.sum(1, keepdim=True)) @ phi(real)
    ms = (one_s / one_s.sum(1, keepdim=True)) @ phi(syn)
    return ((mr - ms) ** 2).sum()


def class_balanced_batch(y: np.ndarray, per_class: int, g: np.random.Generator) -> np.ndarray:
    """Indices of ``per_class`` random rows of every class."""
    return np.concatenate([g.choice(np.flatnonzero(y == c), per_class, replace=False) for c in np.unique(y)])


@dataclass
class Distilled:
    """Distilled sets, one per seed: points ``x`` (seeds, n, D), classes ``y`` (n,), the outer loss
    per iteration (summed over seeds) and snapshots of ``x`` during the run."""

    x: np.ndarray
    y: np.ndarray
    losses: np.ndarray
    snapshots: list[np.ndarray]


METHODS = ("LD3M", "naive latents", "constant skip", "pixel space")


def distill(prior: GaussianMixturePrior, real: np.ndarray, real_y: np.ndarray, *, method: str = "LD3M",
            ipc: int = 1, iterations: int = 100, lr: float | tuple[float, ...] = 0.1, lr_embedding: float = 0.05,
            steps: int = 10, batch_per_class: int = 32, seeds=(0,), snapshot_every: int = 0) -> Distilled:
    """Distil ``ipc`` points per class by distribution matching (DM) with Adam, once per seed.

    ``LD3M`` learns latents and class embeddings end to end through the sampler with the linear
    skip; ``naive latents`` does the same with no skip (the vanishing-gradient baseline);
    ``constant skip`` with weight 1/2 at every step (the ablation); ``pixel space`` learns the points
    themselves. Latents start at random real points of each class (the identity "encoder"); the
    sampler's start noise is drawn once and kept fixed; the random embedding is redrawn every
    iteration. The seeds run side by side as one batch; each seed's result does not depend on
    the others. ``lr`` may be a sequence of learning rates (a tuning grid): every rate then runs
    with every seed in the same batch (one Adam parameter group per rate), and ``x`` and the
    snapshots gain a leading axis over the rates; each (rate, seed) result equals its own run.
    """
    method = check_choice(method, "method", METHODS)
    real = _as_tensor(real, "real", 2, prior.dim)
    real_y = np.asarray(real_y)
    if real_y.shape != (real.shape[0],):
        raise ValueError(f"real_y must give one class per row of real ({real.shape[0]})")
    ipc, iterations = check_int(ipc, "ipc", minimum=1), check_int(iterations, "iterations", minimum=0)
    grid = np.ndim(lr) == 1
    lrs = [check_positive(v, "lr") for v in (np.asarray(lr, dtype=float).tolist() if grid else [lr])]
    if not lrs:
        raise ValueError("lr must not be empty")
    lr_embedding = check_positive(lr_embedding, "lr_embedding", allow_zero=True)
    seeds = [check_int(s, "seeds") for s in np.atleast_1d(seeds).tolist()]
    if not seeds:
        raise ValueError("seeds must not be empty")
    per_class = check_int(batch_per_class, "batch_per_class", minimum=1)
    gs = [np.random.default_rng(s) for s in seeds]
    tgs = [torch.Generator().manual_seed(s) for s in seeds]
    C = prior.n_classes
    syn_y = np.repeat(np.arange(C), ipc)
    R = len(lrs)
    init = torch.stack([real[class_balanced_batch(real_y, ipc, g)] for g in gs])
    noise = torch.stack([torch.randn(init.shape[1:], dtype=DTYPE, generator=t) for t in tgs]).repeat(R, 1, 1)
    zs = [init.clone().requires_grad_(True) for _ in lrs]
    logits = [prior.class_logits(syn_y).expand(len(seeds), -1, -1).clone().requires_grad_(True) for _ in lrs]
    params = [{"params": [z], "lr": v} for z, v in zip(zs, lrs)]
    if method != "pixel space":
        params.append({"params": logits, "lr": lr_embedding})
    opt = torch.optim.Adam(params)
    schedule = {"LD3M": "linear", "naive latents": "none", "constant skip": "constant"}.get(method)

    def generate() -> torch.Tensor:                     # (rates x seeds, n, D), rate-major
        z = torch.cat(zs)
        if schedule is None:
            return z
        return ld3m_sample(prior, z, syn_y, noise, steps=steps, schedule=schedule, class_logits=torch.cat(logits)).x

    def shaped(x: np.ndarray) -> np.ndarray:
        return x.reshape(R, len(seeds), *x.shape[1:]) if grid else x

    losses, snaps = [], []
    for it in range(iterations):
        if snapshot_every and it % snapshot_every == 0:
            with torch.no_grad():
                snaps.append(shaped(generate().numpy().copy()))
        phi = random_embedding(prior.dim, generators=tgs)
        batch = [class_balanced_batch(real_y, per_class, g) for g in gs]
        syn = generate().reshape(R, len(seeds), *init.shape[1:])    # the rates broadcast over the seeds' nets
        loss = dm_loss(phi, torch.stack([real[b] for b in batch]), real_y[batch[0]], syn, syn_y, C)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    with torch.no_grad():
        out = shaped(generate().numpy().copy())
    if snapshot_every:
        snaps.append(out)
    return Distilled(out, syn_y, np.array(losses), snaps)
