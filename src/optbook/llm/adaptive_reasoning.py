"""Ada-R1 in a toy reasoning world: merge a long and a short reasoner, then bi-level DPO.

Ada-R1 (Luo et al., NeurIPS 2025) builds a hybrid reasoning model in two stages:

1. **merge** a Long-CoT and a Short-CoT model fine-tuned from one base (linear weight averaging,
   long weight 0.8), so that one model can reason in either style;
2. **bi-level preference training** (DPO against the merged model) on offline pairs: at the
   *group level* responses of the style that buys more accuracy per extra token are preferred
   to responses of the other style; at the *instance level* the shortest correct response of the
   preferred style is preferred to its longest (wrong) ones.

The LLMs are out of reach on a CPU, so this module runs the recipe in a toy world (ours): a
problem has a difficulty ``d`` in [0, 1]; a response has a *style* (short or long), a
*verbosity* (concise or verbose), a correctness and a length in tokens; the policy is tabular,
``pi(style, verbosity | difficulty bin) = sigmoid(+-z[bin]) * sigmoid(+-v[style])``. Correctness
and length are drawn by the world, not chosen by the policy, so their probabilities cancel in
DPO's likelihood ratios: preference training can move only the style and the verbosity.

The gain score and the pair construction follow the official code's dataset script
(``constrcut_adaptive_dataset.py``): ``K = 12`` samples per model, ``M1 = 4`` group pairs,
``M2 = 2`` instance pairs per problem.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from scipy.optimize import brentq

from ..core import RngLike, Trace, as_rng, check_in_range, check_int, check_positive

SHORT, LONG = 0, 1
CONCISE, VERBOSE = 0, 1
STYLES = ("short", "long")
#: Logits are kept within +-LOGIT_CAP, so a "pure" style still has a finite log-probability.
LOGIT_CAP = 30.0


def _logit(p: np.ndarray | float) -> np.ndarray:
    p = np.clip(np.asarray(p, dtype=float), 1e-13, 1 - 1e-13)
    return np.clip(np.log(p) - np.log1p(-p), -LOGIT_CAP, LOGIT_CAP)


def _log_sigmoid(x: np.ndarray) -> np.ndarray:
    """log(1 / (1 + e^-x)), stable for large |x|."""
    return -np.logaddexp(0.0, -x)


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return np.exp(_log_sigmoid(x))


def _difficulties(d: np.ndarray, name: str = "d") -> np.ndarray:
    d = np.asarray(d, dtype=float)
    if d.ndim != 1 or d.size == 0:
        raise ValueError(f"{name} must be a non-empty 1-d array of difficulties, got shape {d.shape}")
    if not np.all(np.isfinite(d)) or np.any((d < 0) | (d > 1)):
        raise ValueError(f"{name} must hold finite difficulties in [0, 1]")
    return d


def _accuracy(d: np.ndarray) -> np.ndarray:
    short = np.clip(0.98 - 0.95 * d ** 1.2, 0.02, 1.0)
    return np.stack([short, 0.93 - 0.30 * d ** 2], axis=-1)


def crossover_difficulty(k: int = 12) -> float:
    """The difficulty above which Long-CoT's expected accuracy gain beats the gain rule's margin,
    ``a_L(d) - a_S(d) = 1/(2K)`` (about 0.151 for ``K = 12``)."""
    k = check_int(k, "k", minimum=1)
    f = lambda d: float(np.diff(_accuracy(np.array(d)))[0]) - 1.0 / (2 * k)  # noqa: E731
    return float(brentq(f, 0.0, 1.0))


@dataclass(frozen=True)
class ReasoningWorld:
    """The toy world: difficulties, accuracy and length profiles of the two reasoning styles.

    Accuracy ``a_L(d) = 0.93 - 0.30 d^2`` (long) and ``a_S(d) = clip(0.98 - 0.95 d^1.2, 0.02, 1)``
    (short): the short style is as good on easy problems and much worse on hard ones. Length in
    tokens ``{long_tokens, short_tokens} * (1 + d) * {verbose, concise} * LogNormal(0, noise)``.
    A share ``easy_share`` of the problems has ``d ~ U(0, easy_edge)``, the rest
    ``d ~ U(easy_edge, 1)`` (``easy_share = easy_edge`` is the uniform distribution). By default
    ``easy_edge`` is :func:`crossover_difficulty`, where Long-CoT stops paying off by the paper's
    gain rule, so ``easy_share`` is the share of problems on which it does not. The policy sees
    the difficulty through ``n_bins`` equal bins of [0, 1].
    """

    easy_share: float = 0.2
    easy_edge: float | None = None
    n_bins: int = 10
    long_tokens: float = 3000.0
    short_tokens: float = 400.0
    concise: float = 0.7
    verbose: float = 1.3
    noise: float = 0.1

    def __post_init__(self) -> None:
        check_in_range(self.easy_share, "easy_share", 0.0, 1.0, closed=(True, True))
        if self.easy_edge is None:
            object.__setattr__(self, "easy_edge", crossover_difficulty())
        check_in_range(self.easy_edge, "easy_edge", 0.0, 1.0)
        check_int(self.n_bins, "n_bins", minimum=1)
        check_positive(self.long_tokens, "long_tokens")
        check_positive(self.short_tokens, "short_tokens")
        check_positive(self.concise, "concise")
        check_positive(self.verbose, "verbose")
        check_positive(self.noise, "noise", allow_zero=True)

    def sample_difficulties(self, n: int, rng: RngLike = None) -> np.ndarray:
        """``n`` difficulties from the world's mixture."""
        n = check_int(n, "n", minimum=1)
        g = as_rng(rng)
        easy = g.random(n) < self.easy_share
        u = g.random(n)
        return np.where(easy, self.easy_edge * u, self.easy_edge + (1 - self.easy_edge) * u)

    def bins(self, d: np.ndarray) -> np.ndarray:
        """The policy's difficulty bin of each problem (0 = easiest)."""
        d = _difficulties(d)
        return np.minimum((d * self.n_bins).astype(int), self.n_bins - 1)

    def accuracy(self, d: np.ndarray) -> np.ndarray:
        """Probability of a correct answer, shape ``(n, 2)``: columns short, long."""
        return _accuracy(_difficulties(d))

    def token_scale(self, d: np.ndarray) -> np.ndarray:
        """Length before the log-normal noise, shape ``(n, 2, 2)``: [problem, style, verbosity]."""
        d = _difficulties(d)
        base = np.array([self.short_tokens, self.long_tokens])
        verb = np.array([self.concise, self.verbose])
        return (1 + d)[:, None, None] * base[None, :, None] * verb[None, None, :]

    def mean_length(self, d: np.ndarray) -> np.ndarray:
        """Expected length in tokens, shape ``(n, 2, 2)`` (the log-normal's mean is e^(s^2/2))."""
        return self.token_scale(d) * np.exp(self.noise ** 2 / 2)


@dataclass
class StylePolicy:
    """A tabular reasoning policy: ``z[b]`` is the logit of P(long | bin b), ``v[s]`` the logit of
    P(verbose | style s)."""

    z: np.ndarray
    v: np.ndarray = field(default_factory=lambda: np.zeros(2))

    def __post_init__(self) -> None:
        self.z = np.clip(np.array(self.z, dtype=float).reshape(-1), -LOGIT_CAP, LOGIT_CAP)
        self.v = np.clip(np.array(self.v, dtype=float).reshape(-1), -LOGIT_CAP, LOGIT_CAP)
        if self.z.size == 0 or not np.all(np.isfinite(self.z)):
            raise ValueError("z must be a non-empty array of finite logits")
        if self.v.shape != (2,) or not np.all(np.isfinite(self.v)):
            raise ValueError(f"v must hold two finite logits (short, long), got shape {self.v.shape}")

    @classmethod
    def constant(cls, n_bins: int, p_long: float, p_verbose: float = 0.5) -> "StylePolicy":
        """P(long) = ``p_long`` in every bin, P(verbose) = ``p_verbose`` in both styles."""
        n_bins = check_int(n_bins, "n_bins", minimum=1)
        p_long = check_in_range(p_long, "p_long", 0.0, 1.0, closed=(True, True))
        p_verbose = check_in_range(p_verbose, "p_verbose", 0.0, 1.0, closed=(True, True))
        return cls(np.full(n_bins, float(_logit(p_long))), np.full(2, float(_logit(p_verbose))))

    @property
    def n_bins(self) -> int:
        return self.z.size

    def p_long(self) -> np.ndarray:
        """P(long | bin), shape ``(n_bins,)``."""
        return _sigmoid(self.z)

    def p_verbose(self) -> np.ndarray:
        """P(verbose | style), shape ``(2,)``: short, long."""
        return _sigmoid(self.v)

    def probs(self, bins: np.ndarray) -> np.ndarray:
        """P(style, verbosity | bin), shape ``(n, 2, 2)``; each problem's table sums to 1."""
        bins = self._bins(bins)
        pl = self.p_long()[bins]
        style = np.stack([1 - pl, pl], axis=1)
        pv = self.p_verbose()
        verb = np.stack([1 - pv, pv], axis=1)  # [style, verbosity]
        return style[:, :, None] * verb[None, :, :]

    def log_prob(self, bins: np.ndarray, style: np.ndarray, verb: np.ndarray) -> np.ndarray:
        """log pi(style, verbosity | bin) of each response (the part of a response the policy chooses)."""
        return self._log_prob(self._bins(bins), np.asarray(style), np.asarray(verb))

    def _log_prob(self, bins: np.ndarray, style: np.ndarray, verb: np.ndarray) -> np.ndarray:
        return _log_sigmoid((2.0 * style - 1.0) * self.z[bins]) + _log_sigmoid((2.0 * verb - 1.0) * self.v[style])

    def copy(self) -> "StylePolicy":
        return StylePolicy(self.z.copy(), self.v.copy())

    def _bins(self, bins: np.ndarray) -> np.ndarray:
        bins = np.asarray(bins)
        if bins.ndim != 1 or not np.issubdtype(bins.dtype, np.integer) or np.any((bins < 0) | (bins >= self.n_bins)):
            raise ValueError(f"bins must be a 1-d integer array with values in 0..{self.n_bins - 1}")
        return bins


def merge(long: StylePolicy, short: StylePolicy, w_long: float = 0.8) -> StylePolicy:
    """Stage 1: the hybrid model of a Long-CoT and a Short-CoT model (paper: MergeKit ``linear``,
    ``theta_H = 0.8 theta_L + 0.2 theta_S``).

    A weight average of two networks is not a mixture of their output distributions; the toy
    stands in for it with the mixture of styles, ``P_H(long) = w_L P_L(long) + (1 - w_L) P_S(long)``,
    each style keeping the verbosity of the model that owns it.
    """
    w_long = check_in_range(w_long, "w_long", 0.0, 1.0, closed=(True, True))
    if long.n_bins != short.n_bins:
        raise ValueError(f"long and short must have the same bins, got {long.n_bins} and {short.n_bins}")
    p = w_long * long.p_long() + (1 - w_long) * short.p_long()
    return StylePolicy(_logit(p), np.array([short.v[SHORT], long.v[LONG]]))


def expected_metrics(policy: StylePolicy, world: ReasoningWorld, d: np.ndarray) -> tuple[float, float]:
    """Closed-form expected accuracy and mean length (tokens) of ``policy`` on problems ``d``."""
    if policy.n_bins != world.n_bins:
        raise ValueError(f"policy has {policy.n_bins} bins, world {world.n_bins}")
    p = policy.probs(world.bins(d))
    acc = float(np.mean(np.sum(p.sum(axis=2) * world.accuracy(d), axis=1)))
    length = float(np.mean(np.sum(p * world.mean_length(d), axis=(1, 2))))
    return acc, length


@dataclass
class Responses:
    """Sampled responses, arrays of shape ``(n_problems, n_samples)``."""

    style: np.ndarray
    verb: np.ndarray
    correct: np.ndarray
    length: np.ndarray


def sample_responses(policy: StylePolicy, world: ReasoningWorld, d: np.ndarray, k: int,
                     rng: RngLike = None) -> Responses:
    """``k`` responses of ``policy`` to each problem (style, verbosity, correctness, length)."""
    d = _difficulties(d)
    k = check_int(k, "k", minimum=1)
    g = as_rng(rng)
    bins = world.bins(d)
    style = (g.random((d.size, k)) < policy.p_long()[bins][:, None]).astype(int)
    verb = (g.random((d.size, k)) < policy.p_verbose()[style]).astype(int)
    acc = np.take_along_axis(world.accuracy(d), style, axis=1)
    correct = g.random((d.size, k)) < acc
    scale = world.token_scale(d)[np.arange(d.size)[:, None], style, verb]
    length = scale * np.exp(world.noise * g.standard_normal((d.size, k)))
    return Responses(style, verb, correct, length)


def gain_score(acc_long: np.ndarray, acc_short: np.ndarray, len_long: np.ndarray, len_short: np.ndarray,
               k: int) -> np.ndarray:
    """The official code's per-problem gain of Long-CoT over Short-CoT (> 0: prefer long).

    ``g_a = a_L - a_S - 1/(2K)`` (accuracy gain with a half-sample margin), ``g_l = (l_L - l_S) / l_S``
    (relative length increase); gain ``= g_a / g_l`` when ``g_a > 0``, else ``g_a g_l / 10``.
    """
    k = check_int(k, "k", minimum=1)
    arrays = [np.asarray(x, dtype=float) for x in (acc_long, acc_short, len_long, len_short)]
    for name, x in zip(("acc_long", "acc_short", "len_long", "len_short"), arrays):
        if not np.all(np.isfinite(x)):
            raise ValueError(f"{name} must be finite")
    acc_long, acc_short, len_long, len_short = np.broadcast_arrays(*arrays)
    if np.any(len_short <= 0) or np.any(len_long <= 0):
        raise ValueError("len_long and len_short must be positive")
    ga = acc_long - acc_short - 1.0 / (2 * k)
    gl = (len_long - len_short) / len_short
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(ga > 0, ga / gl, ga * gl / 10.0)


@dataclass
class Pairs:
    """Preference pairs (winner ``w``, loser ``l``) over responses: the problem's bin, each side's
    style and verbosity, lengths and correctness (for display), and the level (0 group, 1 instance)."""

    bins: np.ndarray
    w_style: np.ndarray
    w_verb: np.ndarray
    l_style: np.ndarray
    l_verb: np.ndarray
    w_len: np.ndarray
    l_len: np.ndarray
    w_correct: np.ndarray
    l_correct: np.ndarray
    level: np.ndarray
    problem: np.ndarray
    preferred: np.ndarray = field(default_factory=lambda: np.zeros(0, int))
    weight: np.ndarray | None = None

    def __post_init__(self) -> None:
        if self.weight is None:
            self.weight = np.ones(self.bins.size)

    def __len__(self) -> int:
        return int(self.bins.size)

    def select(self, mask: np.ndarray) -> "Pairs":
        """The pairs where ``mask`` is True (e.g. ``pairs.level == 0``)."""
        mask = np.asarray(mask, dtype=bool)
        if mask.shape != self.bins.shape:
            raise ValueError(f"mask must have shape {self.bins.shape}, got {mask.shape}")
        return Pairs(**{k: (getattr(self, k)[mask] if k != "preferred" else self.preferred)
                        for k in self.__dataclass_fields__})

    def compress(self) -> "Pairs":
        """The distinct (bin, winner, loser) combinations with their summed weights: the DPO loss
        sees a response only through its style and verbosity, so this loss is the same, and cheaper."""
        keys = np.stack([self.bins, self.w_style, self.w_verb, self.l_style, self.l_verb], axis=1)
        uniq, inv = np.unique(keys, axis=0, return_inverse=True)
        w = np.bincount(inv.reshape(-1), weights=self.weight, minlength=len(uniq))
        nan = np.full(len(uniq), np.nan)
        return Pairs(uniq[:, 0], uniq[:, 1], uniq[:, 2], uniq[:, 3], uniq[:, 4], nan, nan,
                     np.zeros(len(uniq), bool), np.zeros(len(uniq), bool), np.full(len(uniq), -1),
                     np.full(len(uniq), -1), self.preferred, w)


LEVELS = ("group", "instance")


def build_pairs(long: Responses, short: Responses, bins: np.ndarray, *, m1: int = 4, m2: int = 2,
                levels: tuple[str, ...] = LEVELS, force: str | None = None, rng: RngLike = None) -> Pairs:
    """Stage 2a-2b: the bi-level preference pairs (the official dataset script's rules).

    Per problem: skip it if both styles score 0; the preferred style is long when
    :func:`gain_score` > 0, else short (``force="long"`` fixes it, for the length-preference
    baseline). Group level: chosen among the preferred style's correct responses (all of them if
    none is correct), rejected among the other style's wrong ones (all if none is wrong); ``m1``
    random combinations. Instance level, within the preferred style: the shortest correct against
    the ``m2`` longest wrong; with no wrong response the shortest against the ``m2`` longest; with
    no correct one the shortest wrong against the ``m2`` longest wrong. ``preferred`` records each
    problem's preferred style (-1 when skipped).
    """
    m1 = check_int(m1, "m1", minimum=0)
    m2 = check_int(m2, "m2", minimum=0)
    if not levels or any(lv not in LEVELS for lv in levels):
        raise ValueError(f"levels must be a non-empty subset of {LEVELS}, got {levels!r}")
    if force not in (None, "long", "short"):
        raise ValueError(f"force must be None, 'long' or 'short', got {force!r}")
    bins = np.asarray(bins)
    n, k = long.style.shape
    if short.style.shape != (n, k) or bins.shape != (n,):
        raise ValueError("long, short and bins must describe the same problems and sample count")
    g = as_rng(rng)
    acc_l, acc_s = long.correct.mean(axis=1), short.correct.mean(axis=1)
    gain = gain_score(acc_l, acc_s, long.length.mean(axis=1), short.length.mean(axis=1), k)
    rows: list[tuple] = []
    preferred = np.full(n, -1)
    for i in range(n):
        if acc_l[i] == 0 and acc_s[i] == 0:
            continue
        pref = LONG if (gain[i] > 0 if force is None else force == "long") else SHORT
        preferred[i] = pref
        own, other = (long, short) if pref == LONG else (short, long)
        resp = lambda r, j: (r.style[i, j], r.verb[i, j], r.length[i, j], r.correct[i, j])  # noqa: E731
        if "group" in levels and m1 > 0:
            chosen = np.flatnonzero(own.correct[i]) if own.correct[i].any() else np.arange(k)
            rejected = np.flatnonzero(~other.correct[i]) if (~other.correct[i]).any() else np.arange(k)
            combos = np.array(np.meshgrid(chosen, rejected, indexing="ij")).reshape(2, -1).T
            for a, b in combos[g.permutation(len(combos))[:m1]]:
                rows.append((i, 0, *resp(own, a), *resp(other, b)))
        if "instance" in levels and m2 > 0:
            ok, bad, ln = own.correct[i], ~own.correct[i], own.length[i]
            order = np.argsort(ln, kind="stable")
            if ok.any() and bad.any():
                win = order[ok[order]][0]
                losers = order[bad[order]][::-1][:m2]
            else:  # all correct or all wrong: the shortest against the longest
                win, losers = order[0], order[1:][::-1][:m2]
            for b in losers:
                rows.append((i, 1, *resp(own, win), *resp(own, b)))
    cols = np.array(rows, dtype=float).reshape(-1, 10)
    prob = cols[:, 0].astype(int)
    return Pairs(bins=bins[prob], w_style=cols[:, 2].astype(int), w_verb=cols[:, 3].astype(int),
                 l_style=cols[:, 6].astype(int), l_verb=cols[:, 7].astype(int), w_len=cols[:, 4], l_len=cols[:, 8],
                 w_correct=cols[:, 5].astype(bool), l_correct=cols[:, 9].astype(bool),
                 level=cols[:, 1].astype(int), problem=prob, preferred=preferred)


def dpo_loss(policy: StylePolicy, reference: StylePolicy, pairs: Pairs, beta: float
             ) -> tuple[float, np.ndarray, np.ndarray]:
    """Stage 2c: the DPO loss, (weighted) mean over pairs of ``-log sigmoid(beta [log pi/pi_ref (y_w) -
    log pi/pi_ref (y_l)])``, and its gradient with respect to ``z`` and ``v``."""
    beta = check_positive(beta, "beta")
    if len(pairs) == 0:
        raise ValueError("pairs must not be empty")
    if policy.n_bins != reference.n_bins:
        raise ValueError("policy and reference must have the same bins")
    policy._bins(pairs.bins)
    return _Batch(pairs, reference).loss_grad(policy, beta)


def _log_table(policy: StylePolicy) -> np.ndarray:
    """log pi(style, verbosity | bin) for every combination, flattened as ``(bin * 2 + style) * 2 + verb``."""
    lz = np.stack([_log_sigmoid(-policy.z), _log_sigmoid(policy.z)], axis=1)  # [bin, style]
    lv = np.stack([_log_sigmoid(-policy.v), _log_sigmoid(policy.v)], axis=1)  # [style, verb]
    return (lz[:, :, None] + lv[None, :, :]).reshape(-1)


class _Batch:
    """A compressed pair set with its flat indices and the reference's log-ratio, fixed in training."""

    def __init__(self, pairs: Pairs, reference: StylePolicy):
        p = pairs.compress()
        self.b, self.ws, self.wv, self.ls, self.lv = p.bins, p.w_style, p.w_verb, p.l_style, p.l_verb
        self.iw = (self.b * 2 + self.ws) * 2 + self.wv
        self.il = (self.b * 2 + self.ls) * 2 + self.lv
        self.w = p.weight / p.weight.sum()
        t = _log_table(reference)
        self.ref = t[self.iw] - t[self.il]

    def loss_grad(self, policy: StylePolicy, beta: float) -> tuple[float, np.ndarray, np.ndarray]:
        t = _log_table(policy)
        h = beta * (t[self.iw] - t[self.il] - self.ref)
        loss = float(self.w @ -_log_sigmoid(h))
        coef = -beta * self.w * _sigmoid(-h)  # d loss / d (log-ratio difference), per pair
        # d log pi / d z[b] = 1{long} - P(long | b): the P(long) terms of winner and loser cancel.
        gz = np.bincount(self.b, coef * (self.ws - self.ls), minlength=policy.n_bins)
        pv = _sigmoid(policy.v)
        gv = (np.bincount(self.ws, coef * (self.wv - pv[self.ws]), minlength=2)
              - np.bincount(self.ls, coef * (self.lv - pv[self.ls]), minlength=2))
        return loss, gz, gv


def train_dpo(reference: StylePolicy, pairs: Pairs, *, beta: float = 0.1, lr: float = 1.0, steps: int = 300,
              record_every: int = 10) -> tuple[StylePolicy, Trace]:
    """Full-batch gradient descent on :func:`dpo_loss`, starting from (and regularised towards)
    ``reference`` (the merged model in Ada-R1).

    Every ``record_every`` steps (and at the last) the trace records the loss, the gradient norm,
    the mean P(long) and P(verbose) of each style, and keeps the logits ``(step, z, v)`` in
    ``trace.meta["snapshots"]``.
    """
    lr = check_positive(lr, "lr")
    steps = check_int(steps, "steps", minimum=0)
    record_every = check_int(record_every, "record_every", minimum=1)
    if len(pairs) == 0:
        raise ValueError("pairs must not be empty")
    beta = check_positive(beta, "beta")
    reference._bins(pairs.bins)
    batch = _Batch(pairs, reference)
    policy = reference.copy()
    trace = Trace("DPO", meta={"beta": beta, "lr": lr, "steps": steps, "snapshots": []})
    for it in range(steps + 1):
        loss, gz, gv = batch.loss_grad(policy, beta)
        if it % record_every == 0 or it == steps:
            pv = policy.p_verbose()
            trace.record(objective=loss, grad_norm=float(np.sqrt(gz @ gz + gv @ gv)), step_size=lr, iteration=it,
                         p_long=float(policy.p_long().mean()), p_verbose_long=float(pv[LONG]),
                         p_verbose_short=float(pv[SHORT]))
            trace.meta["snapshots"].append((it, policy.z.copy(), policy.v.copy()))
        if it == steps:
            break
        policy.z = np.clip(policy.z - lr * gz, -LOGIT_CAP, LOGIT_CAP)
        policy.v = np.clip(policy.v - lr * gv, -LOGIT_CAP, LOGIT_CAP)
    return policy, trace
