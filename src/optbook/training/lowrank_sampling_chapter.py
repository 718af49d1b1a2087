"""Chapter 17: the book's experiments, claims, figures and live explorers for importance-sampled
low-rank optimizer states. The methods are in :mod:`optbook.training.lowrank_sampling`.

Every experiment runs on the card's frozen-subspace proxy (:class:`FrozenSubspaceProblem`,
32 x 32, rank 4, refresh every 20 steps, 3000 Adam steps, Adam states kept across refreshes) or on
its noise-free twin. Each method's learning rate is tuned over the same grid on held-out seeds;
the runs of one rule over all seeds and learning rates are vectorised
(:func:`lowrank_adam_batch`), so a whole grid costs about one run.
"""
from __future__ import annotations

from functools import lru_cache

import numpy as np
import plotly.graph_objects as go
import torch

from ..claims import Criterion, Measured, claim
from ..core import Result, Trace, Tuning, check_choice, check_int, check_positive, grid_search
from ..viz import Phase, SliderStep, base_layout, color_for, convergence_traces, phase_layout, slider_figure
from ..widgets import Explorer, Slider, Toggle
from .lowrank_sampling import (
    LABELS,
    RULES,
    BatchRun,
    FrozenSubspaceProblem,
    LowRankAdam,
    _importance,
    inclusion_probabilities,
    lowrank_adam,
    lowrank_adam_batch,
    projected_sgd,
    select_subspace,
    state_floats,
)

# --------------------------------------------------------------------------- the experiments

NOISE = 3.0             # the card's noise scale
RANK, TAU, STEPS = 4, 20, 3000
SCALE = 1.0             # GaLore's scale alpha (the card's proxy uses 1)
TAIL = 500              # the score: mean loss over the last TAIL steps (one iterate is too noisy)
QUIET_STEPS = 1000      # horizon of the noise-free check
FLOOR = 1e-12           # the noise-free score clips the loss at FLOOR x f(W0) (float round-off)
#: The learning-rate grid every method is tuned on (the same for all, log-spaced). Fast mode
#: (the test suite) uses a subgrid on one held-out seed.
LR_GRID = (0.0005, 0.001, 0.002, 0.005, 0.01, 0.03, 0.1)
FAST_LR_GRID = (0.001, 0.005, 0.01, 0.03)
#: The values that join the grid, in order, when a best learning rate sits on its lower or upper
#: edge (see :func:`tunings`): the grid's half-decade steps continued.
LR_BELOW = (0.0002, 0.0001, 0.00005)
LR_ABOVE = (0.3, 1.0, 3.0)
CARD_LR = 0.01          # the card's learning rate, used by the explorers
TUNING_SEEDS = (100, 101)        # held out: the claims run on seeds 0..4
FAST_TUNING_SEEDS = (100,)
CLAIM_SEEDS = (0, 1, 2, 3, 4)
FAST_SEEDS = (0, 1, 2)
METHODS = ("importance", "dominant", "random", "full")
#: The control of the headline: a random subspace in importance sampling's place, with the
#: method's draw stream (fresh subspaces, not the random baseline's) at the random baseline's
#: tuned learning rate.
CONTROL = "random (control)"
#: Offsets of the random streams: the gradient noise of seed s is drawn from s + NOISE_STREAM
#: (the same for every rule), the method's subspace draws from s + DRAW_STREAM, the random
#: baseline's from s + BASELINE_STREAM.
NOISE_STREAM, DRAW_STREAM, BASELINE_STREAM = 10_000, 20_000, 30_000


def _rule(name: str) -> str:
    return "random" if name == CONTROL else name


def _stream(name: str) -> int:
    return BASELINE_STREAM if name == "random" else DRAW_STREAM


def proxy_members(members, *, noise: float = NOISE, rank: int = RANK, tau: int = TAU, maxiter: int = STEPS,
                  state_policy: str = "keep", record: list | None = None) -> BatchRun:
    """One vectorised batch of proxy runs, ``members`` a list of (rule, seed, lr); rules may be
    mixed ("full" only with "full"; ``CONTROL`` is the random subspace on the method's stream).
    The problem and its gradient noise depend on the seed only, so every rule and learning rate
    sees the same noise. With a list ``record``, the mean gradient W - W* and the stochastic
    gradient G of every run at every refresh are appended to it (for :func:`useful_capture`)."""
    members = [(name, check_int(seed, "seed"), float(lr)) for name, seed, lr in members]
    maxiter = check_int(maxiter, "maxiter", minimum=1)
    for name, _, _ in members:
        if name not in METHODS and name != CONTROL:
            raise ValueError(f"rule must be one of {METHODS + (CONTROL,)}, got {name!r}")
    probs = {s: FrozenSubspaceProblem(noise=noise, seed=s) for s in sorted({m[1] for m in members})}
    draws = {s: p.noise_draws(maxiter, s + NOISE_STREAM) for s, p in probs.items()}
    order = [m[1] for m in members]
    Wstar = np.stack([probs[s].W_star for s in order])
    U = np.stack([probs[s].U0 * probs[s].c for s in order])
    Vt = np.stack([probs[s].V0.T for s in order])
    xi = np.stack([draws[s] for s in order], axis=1)                     # maxiter x B x k

    def grad(W, t):
        G = (W - Wstar) + noise * np.matmul(U * xi[t][:, None, :], Vt)
        if record is not None and t % tau == 0:
            record.append((W - Wstar, G))
        return G

    def loss(W):
        return 0.5 * np.sum((W - Wstar) ** 2, axis=(1, 2))

    return lowrank_adam_batch(np.zeros_like(Wstar), grad, loss, rank=rank, rule=[_rule(m[0]) for m in members],
                              tau=tau, lr=[m[2] for m in members], scale=SCALE, maxiter=maxiter,
                              state_policy=state_policy, rngs=[s + _stream(name) for name, s, _ in members])


def proxy_batch(rule: str, seeds=CLAIM_SEEDS, lrs=(CARD_LR,), **kw) -> BatchRun:
    """``rule`` on the proxy for every (seed, lr) pair, seed-major (run b is seed
    ``seeds[b // len(lrs)]`` at ``lrs[b % len(lrs)]``); keywords as :func:`proxy_members`."""
    return proxy_members([(rule, s, lr) for s in seeds for lr in lrs], **kw)


def proxy_run(rule: str, seed: int = 0, *, lr: float = CARD_LR, noise: float = NOISE, rank: int = RANK,
              tau: int = TAU, maxiter: int = STEPS, state_policy: str = "keep") -> Result:
    """One run of ``rule`` on the proxy as a scipy-shaped :class:`Result` with a trace (the same
    numbers as the matching member of :func:`proxy_batch`)."""
    prob = FrozenSubspaceProblem(noise=noise, seed=check_int(seed, "seed"))
    return lowrank_adam(prob.fun, np.zeros((prob.m, prob.n)), prob.stochastic_jac(seed + NOISE_STREAM),
                        rank=rank, rule=_rule(rule), tau=tau, lr=lr, scale=SCALE, maxiter=maxiter,
                        state_policy=state_policy, rng=seed + _stream(rule))


def _part(run: BatchRun, sel) -> BatchRun:
    """The runs ``sel`` (indices) of a batch."""
    sel = list(sel)
    return BatchRun(run.x[sel], run.losses[:, sel], run.grad_norm[:, sel], run.energy[:, sel],
                    run.overlap[:, sel], [run.refreshes[b] for b in sel])


def _check_run(run) -> BatchRun:
    if not isinstance(run, BatchRun):
        raise TypeError(f"run must be a BatchRun, got {type(run).__name__}")
    return run


def tail_loss(run: BatchRun) -> np.ndarray:
    """The noisy proxy's score of each run: the mean loss over the last ``TAIL`` steps."""
    _check_run(run)
    return run.losses[-TAIL:].mean(axis=0)


def geometric_loss(run: BatchRun) -> np.ndarray:
    """The noise-free score of each run: the geometric mean of the loss over the run, clipped
    at FLOOR x f(W0) (a run that converges sooner scores lower)."""
    _check_run(run)
    L = np.maximum(run.losses, FLOOR * run.losses[:1])
    return 10 ** np.mean(np.log10(L), axis=0)


def mean_overlap(run: BatchRun, last: int = 50) -> np.ndarray:
    """Mean overlap omega of each run over its last ``last`` refreshes."""
    last = check_int(last, "last", minimum=1)
    _check_run(run)
    ov = run.overlap[np.isfinite(run.overlap[:, 0])]
    return ov[-last:].mean(axis=0)


def noise_share(seeds=CLAIM_SEEDS, lr: float = CARD_LR, *, noise: float = NOISE, maxiter: int = STEPS,
                last: int = 50) -> np.ndarray:
    """What GaLore's dominant subspace is made of: for each seed, the mean over the last ``last``
    refreshes of ||U0^T P||^2 / r, the share of the chosen top-r subspace P that lies in the
    span U0 of the pure, zero-mean noise (1: the top directions are nothing but noise; r/m for a
    subspace unrelated to it). Importance sampling's weights, the singular values, prefer these
    directions; they can only beat a random subspace where the top directions carry signal."""
    last = check_int(last, "last", minimum=1)
    rec: list = []
    seeds = [check_int(s, "seed") for s in seeds]
    proxy_batch("dominant", seeds, (lr,), noise=noise, maxiter=maxiter, record=rec)
    out = []
    for b, s in enumerate(seeds):
        U0 = FrozenSubspaceProblem(noise=noise, seed=s).U0
        shares = [np.sum((U0.T @ torch.linalg.svd(torch.from_numpy(G[b]))[0].numpy()[:, :RANK]) ** 2) / RANK
                  for _, G in rec[-last:]]
        out.append(np.mean(shares))
    return np.array(out)


def _mean_overlap(res: Result, last: int = 50) -> float:
    ov = res.trace["overlap"]
    ov = ov[np.isfinite(ov)]
    return float(np.mean(ov[-last:])) if ov.size else float("nan")


def _rules_at(noise: float) -> tuple[str, ...]:
    return METHODS if noise else ("importance", "dominant")


def _run_members(members, noise: float) -> dict[str, BatchRun]:
    """Run (name, seed, lr) members, the subspace rules in one batch and full Adam in another;
    return each name's runs in the order given."""
    out = {}
    low = [m for m in members if m[0] != "full"]
    full = [m for m in members if m[0] == "full"]
    steps = STEPS if noise else QUIET_STEPS
    for group in (low, full):
        if group:
            run = proxy_members(group, noise=noise, maxiter=steps)
            for name in dict.fromkeys(m[0] for m in group):
                out[name] = _part(run, [b for b, m in enumerate(group) if m[0] == name])
    return out


@lru_cache(maxsize=4)
def tunings(noise: float = NOISE, fast: bool = False) -> dict[str, Tuning]:
    """Each method's learning rate tuned over ``LR_GRID`` on the held-out ``TUNING_SEEDS`` (fast:
    ``FAST_LR_GRID`` on one seed). The score: the tail loss on the noisy proxy, the geometric-mean
    loss over QUIET_STEPS at noise 0 (where only importance sampling and GaLore are compared).

    The edge rule (full size; fixed before the re-run): while some method's best learning rate is
    the smallest (largest) of the grid, the next value of ``LR_BELOW`` (``LR_ABOVE``) joins the grid
    of *every* method, so all methods keep the same grid; at most three values per end."""
    seeds, grid = (FAST_TUNING_SEEDS, FAST_LR_GRID) if fast else (TUNING_SEEDS, LR_GRID)
    rules = _rules_at(noise)
    score: dict[tuple[str, int, float], float] = {}

    def measure(lrs):
        members = [(r, s, lr) for r in rules for s in seeds for lr in lrs]
        runs = _run_members(members, noise)
        for r in rules:
            sc = tail_loss(runs[r]) if noise else geometric_loss(runs[r])
            for v, (s, lr) in zip(sc, ((s, lr) for s in seeds for lr in lrs)):
                score[(r, s, lr)] = float(v)

    def build(lrs):
        return {r: grid_search(LABELS[r], lambda seed, lr, r=r: score[(r, seed, lr)], {"lr": lrs}, seeds)
                for r in rules}

    grid, below, above = list(grid), list(LR_BELOW), list(LR_ABOVE)
    measure(grid)
    while True:
        out = build(grid)
        if fast:
            return out
        ends = {t.best["lr"] for t in out.values() if t.on_edge()}
        new = ([below.pop(0)] if below and grid[0] in ends else []) + ([above.pop(0)] if above and grid[-1] in ends else [])
        if not new:
            return out
        measure(new)
        grid = sorted(grid + new)


def tuning(rule: str, noise: float = NOISE, fast: bool = False) -> Tuning:
    """``rule``'s tuning (see :func:`tunings`)."""
    check_choice(rule, "rule", METHODS)
    return tunings(noise, fast)[rule]


@lru_cache(maxsize=4)
def claim_runs(noise: float = NOISE, fast: bool = False) -> dict[str, tuple[BatchRun, float]]:
    """Every method (and at noise 3 the headline's control) at its tuned learning rate on the
    claims' seeds: name -> (runs, learning rate)."""
    tuned = {r: t.best["lr"] for r, t in tunings(noise, fast).items()}
    names = _rules_at(noise) + ((CONTROL,) if noise else ())
    lr = {n: tuned[_rule(n)] for n in names}
    seeds = FAST_SEEDS if fast else CLAIM_SEEDS
    runs = _run_members([(n, s, lr[n]) for n in names for s in seeds], noise)
    return {n: (runs[n], lr[n]) for n in names}


def tuned_runs(rule: str, noise: float = NOISE, fast: bool = False, control: bool = False) -> tuple[BatchRun, float]:
    """``rule`` (or with ``control`` the headline's control) at its tuned learning rate on the
    claims' seeds: (the runs, the learning rate)."""
    check_choice(rule, "rule", METHODS)
    return claim_runs(noise, fast)[CONTROL if control else rule]


# --------------------------------------------------------------------------- claims

GLUE_FORMATS = {
    "importance_vs_baselines": {k: "{:.2f}" for k in (
        "ratio_dominant", "ratio_dominant_min", "ratio_dominant_max", "ratio_random", "ratio_random_min",
        "ratio_random_max", "loss_method", "loss_dominant", "loss_random", "loss_full",
        "overlap_dominant", "overlap_method", "overlap_random")} | {"gap_closed": "{:.0%}", "noise_share": "{:.0%}"} | {
        k: "{:g}" for k in ("lr_method", "lr_dominant", "lr_random", "lr_full")},
    "noise_free": {k: "{:.2f}" for k in ("ratio", "ratio_min", "ratio_max", "overlap_dominant",
                                         "overlap_importance")} | {
        k: "{:.1e}" for k in ("gm_importance", "gm_dominant")} | {k: "{:g}" for k in ("lr_importance", "lr_dominant")},
}


def _per_seed_ratio(a: np.ndarray, b: np.ndarray) -> tuple[float, float, float]:
    r = a / b
    return float(np.median(r)), float(r.min()), float(r.max())


@claim("17", "Importance sampling beats both the frozen dominant subspace and a random subspace, all tuned",
       kind="reproduction",
       paper="Plugging importance sampling into GaLore beats the dominant subspace in validation perplexity in "
             "LLaMA pretraining on C4 (60M to 1B parameters) and narrows the gap to full-rank Adam (by up to 46%, "
             "per a secondary summary); the benefit is attributed to sampling by singular value, not to moving "
             "as such",
       expect="on the card's frozen-subspace proxy (32 x 32, rank 4, refresh every 20 steps, 3000 Adam steps, "
              "states kept, noise 3), each method's learning rate tuned over the same grid on held-out seeds "
              "100-101 (score: mean loss over the last 500 steps; the grid 0.0005-0.1, 7 values, widened for "
              "every method by the edge rule of tunings() while some method's best is at an end): over 5 seeds, "
              "median of loss(importance) / loss(GaLore, dominant) <= 0.5 (the card's threshold) and median of "
              "loss(importance) / loss(random subspace) <= 0.9 (a win by a margin, not a tie; registered after "
              "the tuning runs on the held-out seeds were seen). Preconditions: GaLore's subspace freezes (mean "
              "overlap >= 0.75 over the last 50 refreshes), and its top directions carry signal, so that "
              "weighting by singular value has something to prefer over a random subspace (at most half of "
              "GaLore's subspace in the span of the pure noise, mean over the last 50 refreshes; added in review "
              "after the ratios were seen, which is why the verdict is inconclusive and not a pass)",
       control="importance sampling replaced by a random subspace (at its tuned learning rate, with fresh "
               "subspace draws)",
       reproduces=None,
       diagnosis="Inconclusive: check (1) fails for the half of the claim that tests the paper's ingredient. "
                 "(1) Against GaLore the proxy shows the phenomenon: GaLore's subspace freezes (overlap about 0.9) "
                 "and importance sampling more than halves its loss (ratio about 0.4, within the card's 0.5). "
                 "Against a random subspace it cannot: the card built the proxy so that GaLore's top directions "
                 "are pure zero-mean noise (about 95% of its subspace lies in the noise span), so the singular "
                 "values point at useless directions and a random subspace, which rarely meets them, is the best "
                 "a rule can do; the measured ratio to random (about 1.07, a tie) says nothing about what the "
                 "weighting adds where the top directions are useful but frozen, the paper's premise. "
                 "(2) every method's learning rate is tuned on the same log-spaced grid, widened by a stated "
                 "edge rule (full Adam's best was on the lower edge; it is now inside); rank 4 of 32 and a "
                 "refresh every 20 of 3000 steps rescale GaLore's 200-step period, states kept as GaLore does; "
                 "(3) the reductions hold: r = m projected SGD is SGD, the dominant rule is the top-r SVD, the "
                 "sampler has the exact successive-sampling law, the torch optimizer equals the numpy method; "
                 "(4) the control behaves as expected (a random subspace against a random subspace: ratio about "
                 "1). To decide, the proxy needs top directions that are persistent and useful; the chapter's "
                 "1/i-spectrum exercise does not supply them (its top directions are still mostly the noise). At "
                 "the card's shared learning rate 0.01 importance sampling beat random (0.47 vs 0.62 in review); "
                 "tuning each method's step removes that",
       name="importance_vs_baselines")
def claim_importance_vs_baselines(fast: bool = False, control: bool = False) -> Measured:
    seeds = FAST_SEEDS if fast else CLAIM_SEEDS
    runs = {r: tuned_runs(r, NOISE, fast) for r in ("dominant", "random", "full")}
    runs["method"] = tuned_runs("importance", NOISE, fast, control)
    loss = {k: tail_loss(run) for k, (run, _) in runs.items()}
    rd, rd_min, rd_max = _per_seed_ratio(loss["method"], loss["dominant"])
    rr, rr_min, rr_max = _per_seed_ratio(loss["method"], loss["random"])
    gap = (loss["dominant"] - loss["method"]) / (loss["dominant"] - loss["full"])
    values = {"ratio_dominant": rd, "ratio_dominant_min": rd_min, "ratio_dominant_max": rd_max,
              "ratio_random": rr, "ratio_random_min": rr_min, "ratio_random_max": rr_max,
              "gap_closed": float(np.median(gap)),
              **{f"loss_{k}": float(np.median(v)) for k, v in loss.items()},
              **{f"lr_{k}": lr for k, (_, lr) in runs.items()},
              "overlap_dominant": float(np.median(mean_overlap(runs["dominant"][0]))),
              "overlap_method": float(np.median(mean_overlap(runs["method"][0]))),
              "overlap_random": float(np.median(mean_overlap(runs["random"][0])))}
    values["noise_share"] = float(np.median(noise_share(seeds, runs["dominant"][1])))
    name = "random-subspace control" if control else "importance sampling"
    return Measured(values, criteria=[Criterion("ratio_dominant", "<=", 0.5), Criterion("ratio_random", "<=", 0.9)],
                    seeds=seeds, precondition=values["overlap_dominant"] >= 0.75 and values["noise_share"] <= 0.5,
                    summary=f"{name}: loss ratio {rd:.2f} to GaLore ({rd_min:.2f}-{rd_max:.2f}), {rr:.2f} to the "
                            f"random subspace ({rr_min:.2f}-{rr_max:.2f}); GaLore's overlap "
                            f"{values['overlap_dominant']:.2f}, {values['noise_share']:.0%} of it noise",
                    details=dict(tunings=[tuning(r, NOISE, fast) for r in METHODS], loss=loss))


@claim("17", "Proxy check: without the persistent noise nothing freezes, and the dominant subspace wins",
       kind="identity",
       expect="a property of the proxy, not a result of the paper (the paper makes no claim about a gradient "
              "without a frozen component): the same proxy at noise 0 (1000 steps), both learning rates tuned "
              "over the same grid on held-out seeds 100-101 (0.0005-0.1, 7 values, widened by the edge rule of "
              "tunings(); score: geometric mean of the loss over the run, clipped at 1e-12 of the initial loss): "
              "median over 5 seeds of gm(importance) / gm(GaLore) >= 0.9 (GaLore at least as fast, up to 10%). "
              "Registered first as a reproduction; re-registered in review as a check of the proxy, since on a "
              "noise-free quadratic the top-r directions are the useful ones by construction",
       name="noise_free")
def claim_noise_free(fast: bool = False, control: bool = False) -> Measured:
    """``control`` (not run by the claims machinery for an identity; the chapter shows it): the
    same comparison at noise 3, where the order flips."""
    noise = NOISE if control else 0.0
    seeds = FAST_SEEDS if fast else CLAIM_SEEDS
    (imp, lr_i), (dom, lr_d) = tuned_runs("importance", noise, fast), tuned_runs("dominant", noise, fast)
    gi, gd = geometric_loss(imp), geometric_loss(dom)
    r, r_min, r_max = _per_seed_ratio(gi, gd)
    values = {"ratio": r, "ratio_min": r_min, "ratio_max": r_max, "gm_importance": float(np.median(gi)),
              "gm_dominant": float(np.median(gd)), "lr_importance": lr_i, "lr_dominant": lr_d,
              "overlap_dominant": float(np.median(mean_overlap(dom))),
              "overlap_importance": float(np.median(mean_overlap(imp)))}
    return Measured(values, criteria=[Criterion("ratio", ">=", 0.9)], seeds=seeds,
                    summary=f"{'noise 3 (control)' if control else 'noise 0'}: geometric-mean loss ratio "
                            f"importance / GaLore {r:.2f} ({r_min:.2f}-{r_max:.2f})",
                    details=dict(tunings=[tuning(k, noise, fast) for k in ("importance", "dominant")]))


@claim("17", "With rank r = m projected SGD is plain SGD, for every rule", kind="identity",
       expect="projected SGD with r = min(m, n) (P P^T = I) and plain SGD, 200 steps on a 6 x 9 and a 9 x 6 "
              "quadratic with noise: largest difference of the iterates <= 1e-12",
       name="full_rank_reduction")
def claim_full_rank_reduction(fast: bool = False) -> Measured:
    diffs = []
    for shape in ((6, 9), (9, 6)):
        A = np.random.default_rng(0).standard_normal(shape)
        for rule in RULES:
            noise = np.random.default_rng(1)
            jac_noise = noise.standard_normal((200, *shape))
            k = iter(range(200))

            def jac(W, _n=jac_noise, _k=k):
                return W - A + 0.1 * _n[next(_k)]

            res = projected_sgd(lambda W: 0.5 * float(np.sum((W - A) ** 2)), np.zeros(shape), jac,
                                rank=min(shape), rule=rule, tau=7, lr=0.05, maxiter=200, rng=0)
            W = np.zeros(shape)
            for t in range(200):
                W = W - 0.05 * (W - A + 0.1 * jac_noise[t])
            diffs.append(float(np.max(np.abs(res.x - W))))
    d = max(diffs)
    return Measured({"max_difference": d}, criteria=[Criterion("max_difference", "<=", 1e-12)],
                    summary=f"largest difference {d:.1e}")


@claim("17", "Importance sampling's expected projector is U diag(pi) U^T with the exact inclusion probabilities",
       kind="identity",
       expect="10 000 draws (3000 fast) of the rank-2 importance sample of a 6 x 8 gradient: every empirical "
              "inclusion frequency within 4.5 standard errors of its exact probability pi_i (enumeration), and "
              "the Monte Carlo mean of P P^T G within 5% of U diag(pi) U^T G (relative Frobenius error)",
       name="expected_projector")
def claim_expected_projector(fast: bool = False) -> Measured:
    n = 3000 if fast else 10_000
    G = np.random.default_rng(7).standard_normal((6, 8)) * np.array([3.0, 2.0, 1.5, 1.0, 0.7, 0.4])[:, None]
    U, s, _ = np.linalg.svd(G)
    pi = inclusion_probabilities(s, 2)
    gen = torch.Generator().manual_seed(0)
    _, _, sigma = select_subspace(G, 2, "importance", gen)
    Ut = torch.from_numpy(np.linalg.svd(G)[0])
    draws = torch.stack([_importance(torch.from_numpy(sigma), 2, gen) for _ in range(n)]).numpy()
    counts = np.bincount(draws.ravel(), minlength=6)
    freq = counts / n
    # E[P P^T G] from the draws: the mean projector is U diag(empirical frequency) U^T
    mean_step = Ut.numpy() @ np.diag(freq) @ Ut.numpy().T @ G
    z = float(np.max(np.abs(freq - pi) / np.sqrt(pi * (1 - pi) / n)))
    expected = U @ np.diag(pi) @ U.T @ G
    rel = float(np.linalg.norm(mean_step - expected) / np.linalg.norm(expected))
    return Measured({"max_z": z, "relative_error": rel},
                    criteria=[Criterion("max_z", "<=", 4.5), Criterion("relative_error", "<=", 0.05)],
                    summary=f"largest z-score {z:.2f}; E[P P^T G] off by {rel:.1%}")


# --------------------------------------------------------------------------- torch proxy


def mlp_proxy(rule: str = "importance", *, seed: int = 0, steps: int = 400, rank: int = 4,
              hidden: int = 64, lr: float = 3e-3, update_gap: int = 50, batch: int = 32) -> Trace:
    """A tiny torch run: a 16-64-64-1 tanh MLP fitted by minibatch training to a random teacher
    network; ``rule`` is a subspace rule for :class:`LowRankAdam` (rank ``rank``, scale 1) or
    "full" for ``torch.optim.Adam``. Every random number comes from one ``torch.Generator``
    seeded with ``seed``. Returns the trace of the full-data training loss (every 10 steps)."""
    if rule != "full":
        check_choice(rule, "rule", RULES)
    steps = check_int(steps, "steps", minimum=1)
    rank, hidden = check_int(rank, "rank", minimum=1), check_int(hidden, "hidden", minimum=1)
    update_gap, batch = check_int(update_gap, "update_gap", minimum=1), check_int(batch, "batch", minimum=1)
    lr = check_positive(lr, "lr")
    gen = torch.Generator().manual_seed(check_int(seed, "seed"))
    kw = dict(generator=gen, dtype=torch.float64)
    X = torch.randn(512, 16, **kw)
    teacher = (torch.randn(16, hidden, **kw) / 4, torch.randn(hidden, 1, **kw) / 8)
    y = torch.tanh(X @ teacher[0]) @ teacher[1] + 0.05 * torch.randn(512, 1, **kw)
    sizes = ((16, hidden), (hidden, hidden), (hidden, 1))
    # torch.nn.Linear's default initialisation, U(-1/sqrt(fan_in), 1/sqrt(fan_in)), from our generator.
    params = []
    for fan_in, fan_out in sizes:
        bound = 1 / np.sqrt(fan_in)
        params += [((torch.rand(fan_out, fan_in, **kw) * 2 - 1) * bound).requires_grad_(),
                   ((torch.rand(fan_out, **kw) * 2 - 1) * bound).requires_grad_()]

    def model(Z):
        for i in range(0, len(params), 2):
            Z = Z @ params[i].T + params[i + 1]
            if i + 2 < len(params):
                Z = torch.tanh(Z)
        return Z

    if rule == "full":
        opt: torch.optim.Optimizer = torch.optim.Adam(params, lr=lr)
    else:
        opt = LowRankAdam(params, lr=lr, rank=rank, update_gap=update_gap, scale=1.0, rule=rule, seed=seed)
    trace = Trace(LABELS[rule], meta=dict(rank=rank, steps=steps, lr=lr))
    for t in range(steps + 1):
        if t % 10 == 0 or t == steps:   # the full-data loss every 10 steps
            with torch.no_grad():
                trace.record(objective=float(torch.mean((model(X) - y) ** 2)), iteration=t)
        if t == steps:
            break
        idx = torch.randint(0, 512, (batch,), generator=gen)
        opt.zero_grad()
        loss = torch.mean((model(X[idx]) - y[idx]) ** 2)
        loss.backward()
        opt.step()
    return trace


# --------------------------------------------------------------------------- figures

#: Refresh periods, ranks and noise scales offered by the explorers; horizon of their runs.
NOISES = (0.0, 1.0, 2.0, 3.0, 4.0)
RANKS = (2, 4, 8)
TAUS = (10, 20, 40)
EXPLORER_STEPS = 240
RULE_COLORS = {"dominant": color_for(0), "importance": color_for(1), "random": color_for(2), "full": color_for(3)}


def watch_runs() -> dict[str, Trace]:
    """The four optimizers on seed 0 of the headline's runs (3000 steps, states kept, each at its
    tuned learning rate), as traces with the overlap series, for "Watch it run"."""
    out = {}
    for r in METHODS:
        run, lr = tuned_runs(r)
        n = run.losses.shape[0]
        out[r] = Trace.from_dict(dict(method=LABELS[r], meta=dict(lr=lr), iteration=list(range(n)),
                                      objective=run.losses[:, 0],
                                      overlap=np.concatenate([run.overlap[:, 0], [np.nan]])))
    return out


def _loss_traces() -> list:
    runs = watch_runs()
    order = ("dominant", "importance", "random", "full")
    out = convergence_traces([runs[r].thinned(400) for r in order])
    for tr, r in zip(out, order):
        tr.line.color = RULE_COLORS[r]
    return out


#: Named stretches of the proxy run: fast progress on the signal, then the noise floor.
WATCH_PHASES = (Phase(0, 400, "transient"), Phase(400, 3000, "noise floor: the subspace rule decides"))


def watch_figure() -> go.Figure:
    """Loss of the four optimizers on the proxy (seed 0, states kept, tuned learning rates)."""
    fig = go.Figure(_loss_traces())
    base_layout(fig, title="Frozen-subspace proxy: 32 x 32, rank 4, refresh every 20 steps",
                xaxis_title="step t", yaxis_title="loss 1/2 ||W - W*||^2", height=420)
    fig.update_yaxes(type="log", exponentformat="power")
    fig.update_layout(**phase_layout(WATCH_PHASES))
    return fig


def overlap_figure_watch() -> go.Figure:
    """Subspace overlap omega at every refresh of the seed-0 runs (states kept)."""
    runs = watch_runs()
    fig = go.Figure()
    for r in RULES:
        tr = runs[r]
        ov = tr["overlap"]
        ok = np.isfinite(ov)
        fig.add_scatter(x=tr.iteration[ok], y=ov[ok], mode="lines", name=LABELS[r],
                        line=dict(color=RULE_COLORS[r], width=2))
    fig.add_hline(y=4 / 32, line=dict(dash="dot", color="#888"), annotation_text="r/m (independent)")
    base_layout(fig, title="Overlap of consecutive subspaces", xaxis_title="step t",
                yaxis_title="overlap omega (0 to 1)", height=380)
    fig.update_yaxes(range=[0, 1.05])
    return fig


# ---- exploration 1: the spectrum and the sampled indices

SPECTRUM_FRAMES = 12


@lru_cache(maxsize=8)
def spectrum_run(noise: float = 3.0) -> Result:
    """An importance-sampling run on the proxy (1200 steps, 60 refreshes) whose refreshes the
    spectrum figures show."""
    return proxy_run("importance", 0, noise=noise, maxiter=1200)


def spectrum_traces(noise: float, frame: int) -> tuple[list, str]:
    """Bars of the sampling probabilities p_i = sigma_i / sum sigma at one shown refresh (of
    ``SPECTRUM_FRAMES`` spread over the run), the drawn indices in red, GaLore's top-r marked."""
    frame = check_int(frame, "frame")
    if frame >= SPECTRUM_FRAMES:
        raise ValueError(f"frame must be below {SPECTRUM_FRAMES}, got {frame}")
    res = spectrum_run(check_positive(noise, "noise", allow_zero=True))
    picks = np.linspace(0, len(res.refreshes) - 1, SPECTRUM_FRAMES).round().astype(int)
    ref = res.refreshes[picks[frame]]
    p = ref["sigma"] / ref["sigma"].sum()
    i = np.arange(1, p.size + 1)
    drawn = np.zeros(p.size, dtype=bool)
    drawn[ref["indices"]] = True
    rank = len(ref["indices"])
    traces = [
        go.Bar(x=i, y=np.where(drawn, 0.0, p), name="not drawn", marker_color="#b8c4d6"),
        go.Bar(x=i, y=np.where(drawn, p, 0.0), name="drawn by importance sampling", marker_color=RULE_COLORS["importance"]),
        go.Scatter(x=i[:rank], y=p[:rank] + 0.012, mode="markers", name="GaLore's top-r (always the same)",
                   marker=dict(symbol="triangle-down", size=11, color=RULE_COLORS["dominant"])),
    ]
    return traces, f"step {ref['step']}"


def _spectrum_layout(fig: go.Figure, noise: float) -> go.Figure:
    base_layout(fig, title=f"Spectrum of the gradient at a refresh (noise {noise:g})",
                xaxis_title="singular value index i (largest first)",
                yaxis_title="sampling probability sigma_i / sum sigma", height=430)
    fig.update_layout(barmode="stack")
    fig.update_yaxes(range=[0, 0.6])
    return fig


def spectrum_figure(noise: float = 3.0, frame: int = 6) -> go.Figure:
    """The live spectrum explorer: one refresh of one run."""
    traces, _ = spectrum_traces(noise, frame)
    return _spectrum_layout(go.Figure(traces), noise)


def spectrum_slider_figure(noise: float = 3.0) -> go.Figure:
    """The static twin: a slider over twelve refreshes of the same run."""
    steps = []
    for k in range(SPECTRUM_FRAMES):
        traces, label = spectrum_traces(noise, k)
        steps.append(SliderStep(label, traces))
    fig = slider_figure(steps, slider_label="refresh at", fixed_axes=False, active=0)
    return _spectrum_layout(fig, noise)


# ---- exploration 2: overlap timeline

@lru_cache(maxsize=64)
def overlap_runs(noise: float, rank: int, tau: int, state_policy: str = "keep") -> dict[str, Result]:
    """The three subspace rules on the proxy for ``EXPLORER_STEPS`` steps (seed 0)."""
    return {r: proxy_run(r, 0, noise=noise, rank=rank, tau=tau, maxiter=EXPLORER_STEPS, state_policy=state_policy)
            for r in RULES}


def overlap_traces(noise: float, rank: int, tau: int, state_policy: str = "keep") -> list:
    """Overlap omega at each refresh (left) and loss (right) for the three rules."""
    runs = overlap_runs(noise, rank, tau, state_policy)
    out = []
    for r in RULES:
        tr = runs[r].trace
        ov = tr["overlap"]
        ok = np.isfinite(ov)
        out.append(go.Scatter(x=tr.iteration[ok], y=ov[ok], mode="lines+markers", name=LABELS[r],
                              line=dict(color=RULE_COLORS[r], width=2), marker=dict(size=4),
                              xaxis="x", yaxis="y", legendgroup=r))
    for r in RULES:
        tr = runs[r].trace.thinned(150)
        out.append(go.Scatter(x=tr.iteration, y=tr.objective, mode="lines", name=LABELS[r], showlegend=False,
                              line=dict(color=RULE_COLORS[r], width=2), xaxis="x2", yaxis="y2", legendgroup=r))
    return out


@lru_cache(maxsize=1)
def _overlap_layout_json() -> dict:
    """The two-panel layout of the overlap figures, built once (plotly validation is slow)."""
    fig = base_layout(go.Figure(), title="overlap", height=430)
    fig.update_layout(
        xaxis=dict(domain=[0, 0.46], title_text="step t"),
        yaxis=dict(range=[0, 1.05], title_text="overlap omega with previous subspace"),
        xaxis2=dict(domain=[0.56, 1], title_text="step t", anchor="y2", showline=True, linecolor="#888", mirror=True),
        yaxis2=dict(type="log", title_text="loss", anchor="x2", showline=True, linecolor="#888", mirror=True,
                    exponentformat="power", range=[-0.3, 1.25]),
    )
    return fig.layout.to_plotly_json()


def _overlap_layout(fig: go.Figure, title: str) -> go.Figure:
    fig.update_layout(_overlap_layout_json())
    fig.update_layout(title_text=title)
    return fig


def overlap_figure(noise: float = 3.0, rank: int = 4, tau: int = 20, reset_states: bool = False) -> go.Figure:
    """The live overlap explorer (noise scale, rank, refresh period, state policy)."""
    policy = "reset" if reset_states else "keep"
    fig = go.Figure(data=overlap_traces(noise, rank, tau, policy), layout=_overlap_layout_json())
    fig.update_layout(title_text=f"noise {noise:g}, rank {rank}, refresh every {tau} steps, {policy} states")
    return fig


def overlap_slider_figure(rank: int = 4, tau: int = 20) -> go.Figure:
    """The static twin: a slider over the noise scale (rank 4, tau 20, states kept)."""
    steps = [SliderStep(f"{s:g}", overlap_traces(s, rank, tau)) for s in NOISES]
    fig = slider_figure(steps, slider_label="noise scale", active=NOISES.index(3.0), fixed_axes=False)
    return _overlap_layout(fig, f"Overlap and loss, rank {rank}, refresh every {tau} steps")


# ---- exploration 3: memory calculator

LAYER_SIZES = (256, 1024, 4096, 11008)


def memory_rows(shapes=((4096, 4096), (4096, 11008), (11008, 4096)), ranks=(128, 256, 512)) -> list[dict]:
    """Optimizer-state floats (millions) for LLaMA-7B-like layer shapes: full Adam vs low rank."""
    rows = []
    for m, n in shapes:
        row = {"layer shape": f"{m} x {n}", "full Adam (M floats)": state_floats(m, n)["total"] / 1e6}
        for r in ranks:
            row[f"rank {r} (M floats)"] = state_floats(m, n, r)["total"] / 1e6
        rows.append(row)
    return rows


def memory_figure(m: int = 4096, n: int = 11008, rank: int = 256) -> go.Figure:
    """Bars of state floats for one layer: full Adam, and the low-rank states + projector."""
    full = state_floats(m, n)
    low = state_floats(m, n, rank)
    fig = go.Figure([
        go.Bar(x=["full Adam", f"low rank (r = {rank})"], y=[full["moments"] / 1e6, low["moments"] / 1e6],
               name="Adam moments M, V", marker_color=color_for(0)),
        go.Bar(x=["full Adam", f"low rank (r = {rank})"], y=[0.0, low["projector"] / 1e6],
               name="projector P", marker_color=color_for(4)),
    ])
    base_layout(fig, title=f"Optimizer-state floats of one {m} x {n} weight: "
                           f"{low['total'] / full['total']:.1%} of full Adam",
                xaxis_title="optimizer", yaxis_title="millions of floats", height=380)
    fig.update_layout(barmode="stack")
    return fig


EXPLORER_SPECTRUM = Explorer("17", "spectrum", spectrum_figure, {
    "noise": Slider("noise scale", list(NOISES), 3.0),
    "frame": Slider("refresh (1-12)", list(range(SPECTRUM_FRAMES)), 6, fmt="{:d}"),
}, description="Singular-value spectrum at a refresh, with the importance-sampled indices.")

EXPLORER_OVERLAP = Explorer("17", "overlap", overlap_figure, {
    "noise": Slider("noise scale", list(NOISES), 3.0),
    "rank": Slider("rank r", list(RANKS), 4, fmt="{:d}"),
    "tau": Slider("refresh period tau", list(TAUS), 20, fmt="{:d}"),
    "reset_states": Toggle("reset Adam states at refresh", False),
}, description="Overlap of consecutive subspaces and loss for the three rules.")

EXPLORER_MEMORY = Explorer("17", "memory", memory_figure, {
    "m": Slider("rows m", list(LAYER_SIZES), 4096, fmt="{:d}"),
    "n": Slider("columns n", list(LAYER_SIZES), 11008, fmt="{:d}"),
    "rank": Slider("rank r", [8, 32, 128, 256, 512], 256, fmt="{:d}"),
}, description="Optimizer-state floats of one layer, full Adam vs low-rank states.")


# --------------------------------------------------------------------------- numbers for the prose


def watch_numbers() -> dict[str, tuple]:
    """What the text quotes about "Watch it run" (name: (value, format)): each rule's tuned
    learning rate, its mean loss over the last 500 steps (seed 0) and its mean overlap over the
    last 50 refreshes."""
    runs = watch_runs()
    out: dict[str, tuple] = {"watch_f0": (float(runs["full"].objective[0]), "{:.0f}"),
                             "watch_rm": (RANK / 32, "{:.3f}")}
    for r in METHODS:
        out[f"watch_lr_{r}"] = (runs[r].meta["lr"], "{:g}")
        out[f"watch_{r}"] = (float(np.mean(runs[r].objective[-TAIL:])), "{:.2f}")
        if r != "full":
            ov = runs[r]["overlap"]
            out[f"watch_overlap_{r}"] = (float(np.mean(ov[np.isfinite(ov)][-50:])), "{:.2f}")
    return out


def mlp_numbers(traces: list[Trace]) -> dict[str, tuple]:
    """Final training losses of the tiny-MLP runs (dominant, importance, random, full Adam)."""
    if not isinstance(traces, (list, tuple)) or len(traces) != len(METHODS_MLP):
        raise TypeError(f"traces must be a list of {len(METHODS_MLP)} Trace objects (one per METHODS_MLP)")
    return {f"mlp_{r}": (float(tr.objective[-1]), "{:.4f}") for r, tr in zip(METHODS_MLP, traces)}


METHODS_MLP = ("dominant", "importance", "random", "full")


def edge_note(tunings) -> str:
    """A sentence on the tuned settings that sit on the edge of their grid."""
    if not all(isinstance(t, Tuning) for t in np.atleast_1d(np.asarray(tunings, dtype=object))):
        raise TypeError("tunings must be a sequence of Tuning")
    edges = [t.method for t in tunings if t.on_edge()]
    return ("Every best learning rate lies inside the grid." if not edges
            else "The best learning rate lies on the edge of the grid for: " + ", ".join(edges) + ".")
