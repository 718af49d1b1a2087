"""Chapter 11: the book's experiments, figures, live explorers and claims for the Birkhoff
extension. The method and its baselines are in :mod:`optbook.geometry.birkhoff`; the benchmark
instances (QAPLIB, n = 12 and 14) in :mod:`optbook.geometry.qaplib`.

Every comparison gives the black-box methods (BE, 2-opt, random search) the same number of
evaluations of f, :data:`BUDGET`. FAQ and Sinkhorn-GD are not black-box methods: they use the
QAP's formula (its gradient), so their evaluations of f are not their cost; they are shown for
reference with their own iteration counts.
"""
from __future__ import annotations

from functools import lru_cache

import numpy as np
import plotly.graph_objects as go
from joblib import Parallel, delayed

from ..claims import Criterion, Measured, claim
from ..core import Result, Trace, Tuning, check_choice, check_in_range, check_int, grid_search
from ..viz import SliderStep, base_layout, color_for, glue, glue_claim, slider_figure
from ..widgets import Choice, Explorer, Slider
from .birkhoff import (
    QAP,
    all_permutations,
    be_frank_wolfe,
    be_momentum_frank_wolfe,
    birkhoff_decomposition,
    birkhoff_extension,
    bottleneck_decomposition,
    faq,
    perm_matrix,
    qap_instance,
    random_doubly_stochastic,
    random_search,
    round_birkhoff,
    score_matrix,
    sinkhorn_gd,
    two_opt,
    warm_score,
)
from .qaplib import QAPLIB_12, QAPLIB_14, qaplib_instance

# --------------------------------------------------------------------------- the benchmark

#: Evaluations of f per run for every black-box method (BE: about 400 Frank-Wolfe steps of k = 5).
BUDGET = 2000
#: Sinkhorn-GD's iterations (one evaluation of f each, to round its iterate); its best rounded
#: iterate is found long before (see the tuning), and each iteration also costs a gradient.
SINKHORN_ITERS = 500
CLAIM_SEEDS = (0, 1, 2, 3, 4)
FAST_SEEDS = (0, 1)
#: The paper's protocol (claim ``paper_protocol``): the authors' optimiser runs a number of steps,
#: not an evaluation budget. Their repository stops it on wall-clock time (2n-4n seconds, over
#: 14,000 steps at n = 12 on the book's machine); 5000 is the repository's own ``--max_iterations``
#: default, fewer steps than that, so the test is harder for BE than the paper's runs were (a run's
#: incumbent only improves with more steps).
REPO_STEPS = 5000
#: One seed's run of that protocol on the nine instances takes over 5 s, so 3 seeds (DESIGN.md 3).
PROTOCOL_SEEDS = (0, 1, 2)
PROTOCOL_FAST_SEEDS = (0,)
TUNING_SEEDS = (100, 101)  # held out, on the held-out instances QAPLIB_14

BE = "BE + Frank-Wolfe"
BE_FIRST = "BE + Frank-Wolfe, solver's ties"
AUTHORS = "BE, authors' optimiser"
TWO_OPT = "2-opt with restarts"
TWO_OPT_ONE = "2-opt, one descent"
RANDOM = "random search"
FAQ = "FAQ"
SINKHORN = "Sinkhorn-GD"
BLACK_BOX = (BE, BE_FIRST, AUTHORS, TWO_OPT, TWO_OPT_ONE, RANDOM)
METHODS = BLACK_BOX + (FAQ, SINKHORN)

#: The tuning grids (same size for every tuned method) and the settings they select
#: (``test_birkhoff_chapter`` checks that :func:`tuning` still selects them).
GRIDS = {BE: {"step": (0.05, 0.1, 0.2), "score_period": (10, 20, 40)},
         AUTHORS: {"lr": (0.01, 0.03, 0.1), "period": (None, 5, 20)},
         SINKHORN: {"tau": (0.2, 0.5, 1.0), "lr": (1.0, 2.0, 4.0)},
         TWO_OPT: {"restart": ("random permutation",)}}
SETTINGS = {BE: {"step": 0.1, "score_period": 20},
            AUTHORS: {"lr": 0.03, "period": 20},
            SINKHORN: {"tau": 0.5, "lr": 1.0}}


def gap(value: float, opt: float) -> float:
    """Gap to the optimum in percent, ``100 (value - opt) / |opt|``."""
    return 100.0 * (value - opt) / abs(opt)


def solve(method: str, qap: QAP, seed: int, *, budget: int = BUDGET, steps: int | None = None, perm0=None,
          **setting) -> Result:
    """Run ``method`` (one of :data:`METHODS`) on ``qap`` with ``budget`` evaluations of f (the
    black-box methods), the tuned setting unless ``setting`` overrides it, and seed ``seed``.
    ``steps`` (BE and the authors' optimiser only) runs that many steps instead, with no cap on
    evaluations (the paper's protocol). ``perm0`` warm-starts BE, 2-opt and random search (which
    then keeps it as its incumbent)."""
    check_choice(method, "method", METHODS)
    if not isinstance(qap, QAP):
        raise ValueError("qap must be a QAP")
    budget = check_int(budget, "budget", minimum=1)
    if steps is not None:
        steps = check_int(steps, "steps", minimum=1)
        if method not in (BE, BE_FIRST, AUTHORS):
            raise ValueError(f"steps applies to BE and the authors' optimiser, not {method}")
    if perm0 is not None and method not in (BE, BE_FIRST, TWO_OPT, TWO_OPT_ONE, RANDOM):
        raise ValueError(f"perm0 cannot warm-start {method}")
    n = qap.n
    opts = {**SETTINGS.get(BE if method == BE_FIRST else method, {}), **setting}
    maxiter, max_evals = (10 * budget, budget) if steps is None else (steps, None)
    if method in (BE, BE_FIRST):
        return be_frank_wolfe(qap, n, k=5, maxiter=maxiter, max_evals=max_evals, perm0=perm0, rng=seed,
                              tie_break="first" if method == BE_FIRST else "random", **opts)
    if method == AUTHORS:
        return be_momentum_frank_wolfe(qap, n, k=5, maxiter=maxiter, max_evals=max_evals, rng=seed, **opts)
    if method == TWO_OPT:
        return two_opt(qap, n, max_evals=budget, perm0=perm0, rng=seed)
    if method == TWO_OPT_ONE:
        return two_opt(qap, n, perm0=perm0, rng=seed)
    if method == RANDOM:
        res = random_search(qap, n, budget if perm0 is None else max(budget - 1, 1), rng=seed)
        if perm0 is not None and qap(np.asarray(perm0)) <= res.fun:
            res.x, res.fun = np.asarray(perm0, dtype=np.int64), float(qap(np.asarray(perm0)))
        return res
    if method == FAQ:
        return faq(qap, rng=seed)
    return sinkhorn_gd(qap, maxiter=SINKHORN_ITERS, rng=seed, **opts)


#: Worker processes for a batch of benchmark runs. Each run is serial numpy, so two processes
#: halve the wall time on the book's two cores (the CPU time, and every result, are unchanged:
#: each run has its own seed).
JOBS = 2
_RUNS: dict[tuple, tuple[float, int]] = {}


def _compute(key: tuple) -> tuple[float, int]:
    method, name, seed, warm, budget, steps = key
    q, opt = qaplib_instance(name)
    res = solve(method, q, seed, budget=budget, steps=steps, perm0=_faq(name).x if warm else None)
    return gap(res.fun, opt), int(res.get("nfev") or 0)


def _runs(specs) -> list[tuple[float, int]]:
    """(gap %, evaluations) of each run ``(method, name, seed, warm, budget, steps)`` on the
    QAPLIB instance ``name`` (``warm`` starts from FAQ's permutation; ``budget`` and ``steps`` as
    in :func:`solve`). Cached: the claims, their controls, the tables and the figures share runs;
    the runs not yet cached go to :data:`JOBS` worker processes."""
    keys = [(m, n, int(s), bool(w), int(b), None if t is None else int(t)) for m, n, s, w, b, t in specs]
    todo = list(dict.fromkeys(k for k in keys if k not in _RUNS))
    if JOBS > 1 and len(todo) > 1:
        done = Parallel(n_jobs=JOBS)(delayed(_compute)(k) for k in todo)
    else:
        done = [_compute(k) for k in todo]
    _RUNS.update(zip(todo, done))
    return [_RUNS[k] for k in keys]


def _grid(method: str, seeds, *, warm: bool = False, budgets=None, steps: int | None = None) -> np.ndarray:
    """:func:`_runs` of ``method`` over ``seeds`` x the nine QAPLIB n = 12 instances, shape
    ``(len(seeds), 9, 2)``; ``budgets`` (same shape as the grid) gives each run its own budget."""
    budgets = np.full((len(seeds), len(QAPLIB_12)), BUDGET) if budgets is None else np.asarray(budgets)
    specs = [(method, name, s, warm, int(budgets[i, j]), steps)
             for i, s in enumerate(seeds) for j, name in enumerate(QAPLIB_12)]
    return np.array(_runs(specs)).reshape(len(seeds), len(QAPLIB_12), 2)


@lru_cache(maxsize=32)
def _faq(name: str) -> Result:
    return faq(qaplib_instance(name)[0], rng=0)  # FAQ starts at the barycentre: no randomness


def swap_optimal_faq() -> tuple[str, ...]:
    """The QAPLIB n = 12 instances on which FAQ's permutation is a local optimum for swaps (no
    swap of two positions lowers f): there, improving it takes more than one 2-opt move."""
    out = []
    for name in QAPLIB_12:
        q, perm = qaplib_instance(name)[0], _faq(name).x
        pairs = np.array([(i, j) for i in range(q.n) for j in range(i + 1, q.n)])
        cand = np.repeat(perm[None], len(pairs), axis=0)
        cand[np.arange(len(pairs)), pairs[:, 0]] = perm[pairs[:, 1]]
        cand[np.arange(len(pairs)), pairs[:, 1]] = perm[pairs[:, 0]]
        if (q(cand) >= q(perm)).all():
            out.append(name)
    return tuple(out)


def comparison(methods=METHODS, seeds=CLAIM_SEEDS, warm: bool = False) -> dict[str, np.ndarray]:
    """Gap to the optimum (%) of each method on the nine QAPLIB n = 12 instances, one row per seed:
    ``{method: array (len(seeds), 9)}`` (``warm``: every run starts from FAQ's permutation)."""
    _runs([(m, name, s, warm, BUDGET, None) for m in methods for s in seeds for name in QAPLIB_12])  # one batch
    return {m: _grid(m, seeds, warm=warm)[..., 0] for m in methods}


def evaluations(method: str, seeds=CLAIM_SEEDS) -> float:
    """Median number of evaluations of f a method used per run on the benchmark."""
    return float(np.median(_grid(method, seeds)[..., 1]))


# --------------------------------------------------------------------------- tuning


def _tuning_score(method: str):
    def score(seed: int, **setting) -> float:
        if method == TWO_OPT:
            setting = {}
        return float(np.mean([gap(solve(method, q, seed, **setting).fun, opt)
                              for q, opt in (qaplib_instance(name) for name in QAPLIB_14)]))
    return score


@lru_cache(maxsize=2)
def tuning(seeds: tuple[int, ...] = TUNING_SEEDS) -> tuple[Tuning, ...]:
    """Grid search of BE, the authors' optimiser, Sinkhorn-GD (nine settings each) and 2-opt (no
    parameter) on the held-out QAPLIB instances with n = 14, held-out seeds; the score is the mean
    gap (%) over the instances, median over seeds."""
    return tuple(grid_search(m, _tuning_score(m), GRIDS[m], seeds) for m in (BE, AUTHORS, SINKHORN, TWO_OPT))


# --------------------------------------------------------------------------- claims


@claim("11", "Rounding never increases f: f(round_S(A)) <= F_S(A)", kind="identity",
       expect="0 violations of f(round_S(A)) <= F_S(A) over 200 random doubly stochastic 8 x 8 matrices "
              "(dense and sparse), for the full and the k = 5 decomposition; reconstruction error < 1e-9",
       name="rounding_guarantee")
def claim_rounding_guarantee(fast: bool = False) -> Measured:
    g = np.random.default_rng(11)
    m = 50 if fast else 200
    q8 = qap_instance(8, 999)
    viol_full = viol_trunc = 0
    max_recon, min_mass = 0.0, 1.0
    for i in range(m):
        A = random_doubly_stochastic(8, g, kind="sinkhorn" if i % 2 == 0 else "mixture", n_perms=6)
        S = score_matrix(8, "uniform", g)
        F_full, _, dec = birkhoff_extension(q8, A, S, return_grad=True)
        max_recon = max(max_recon, float(np.abs(dec.matrix() - A).max()))
        min_mass = min(min_mass, float(dec.alphas.sum()))
        viol_full += dec.values.min() > F_full + 1e-12  # round_S(A) is the decomposition's best term
        viol_trunc += round_birkhoff(q8, A, S, k=5)[1] > birkhoff_extension(q8, A, S, k=5) + 1e-12
    values = {"violations_full": viol_full, "violations_k5": viol_trunc, "matrices": m,
              "max_reconstruction_error": max_recon, "min_sum_alpha": min_mass}
    return Measured(values, criteria=[Criterion("violations_full", "<=", 0), Criterion("violations_k5", "<=", 0),
                                      Criterion("max_reconstruction_error", "<", 1e-9)],
                    summary=f"{viol_full + viol_trunc} violations in {2 * m} roundings")


PAPER_RATIO = 6.30 / 10.38  # the paper's QAPLIB mean gaps, BE over 2-opt


def _per_seed_mean(gaps: np.ndarray) -> np.ndarray:
    return gaps.mean(axis=1)


def _ratio(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(b > 0, a / np.where(b > 0, b, 1.0), np.inf)


@claim("11", "BE beats one 2-opt descent on QAP under the paper's protocol", kind="reproduction",
       paper="on QAPLIB (n = 12 to 256) BE's mean gap to the best known value is 6.30% against 10.38% for "
             "2-opt (a ratio of 0.61), at about equal run time (as quoted by a third-party summary of the "
             "paper); in the authors' repository BE runs on a wall-clock budget (2n-4n seconds) and their "
             "2-opt script makes one descent from a random permutation by default",
       expect="median over 3 seeds of (the authors' optimiser's mean gap, 5000 steps, the repository's "
              "--max_iterations default) / (the mean gap of one 2-opt descent from a random permutation) over "
              "the nine QAPLIB instances with n = 12, <= 0.61",
       control="the authors' optimiser replaced by random search with the same number of evaluations of f, "
               "instance by instance and seed by seed",
       name="paper_protocol")
def claim_paper_protocol(fast: bool = False, control: bool = False) -> Measured:
    seeds = PROTOCOL_FAST_SEEDS if fast else PROTOCOL_SEEDS
    runs = _grid(AUTHORS, seeds, steps=REPO_STEPS)
    gaps, evals = runs[..., 0], runs[..., 1].astype(int)
    if control:
        gaps = _grid(RANDOM, seeds, budgets=evals)[..., 0]
    one = comparison((TWO_OPT_ONE,), seeds)[TWO_OPT_ONE]
    ratio = _ratio(_per_seed_mean(gaps), _per_seed_mean(one))
    values = {"ratio_median": np.median(ratio), "ratio_min": ratio.min(), "ratio_max": ratio.max(),
              "gap_pct": np.median(_per_seed_mean(gaps)), "one_descent_gap_pct": np.median(_per_seed_mean(one)),
              "evals": np.median(evals), "one_descent_evals": evaluations(TWO_OPT_ONE, seeds)}
    if not (fast or control):  # the same evaluations given to 2-opt, restarting: the referee's question
        same = _grid(TWO_OPT, seeds, budgets=evals)[..., 0]
        values["two_opt_same_evals_gap_pct"] = np.median(_per_seed_mean(same))
        values["ratio_vs_two_opt_same_evals_median"] = np.median(_ratio(_per_seed_mean(gaps), _per_seed_mean(same)))
    who = "random search" if control else "authors' BE"
    return Measured(values, criteria=[Criterion("ratio_median", "<=", round(PAPER_RATIO, 2))], seeds=seeds,
                    precondition=bool(values["one_descent_gap_pct"] >= 1.0),
                    summary=f"{who} / one 2-opt descent {values['ratio_median']:.2f} "
                            f"({values['ratio_min']:.2f}-{values['ratio_max']:.2f}); {values['gap_pct']:.1f}% vs "
                            f"{values['one_descent_gap_pct']:.1f}% with {values['evals']:.0f} vs "
                            f"{values['one_descent_evals']:.0f} evaluations",
                    details=dict(gaps=gaps, one=one, evals=evals))


@claim("11", "BE finds better QAP solutions than 2-opt given the same number of evaluations of f",
       kind="reproduction",
       paper="on QAPLIB (n = 12 to 256) BE's mean gap to the best known value is 6.30% against 10.38% for "
             "2-opt (a ratio of 0.61) and 7.67% for Gurobi, at about equal run time (as quoted by a "
             "third-party summary of the paper); the authors' 2-opt script makes one descent by default. "
             "This claim is the referee's stronger test (equal evaluations, 2-opt restarting); "
             "paper_protocol is the paper's own comparison",
       expect="median over 5 seeds of (BE's mean gap) / (2-opt's mean gap) over the nine QAPLIB instances with "
              "n = 12, both with 2000 evaluations of f (2-opt restarting from random permutations), <= 0.61",
       control="BE replaced by random search with the same 2000 evaluations of f",
       reproduces=False,
       diagnosis="(1) the baseline leaves room: 2-opt with restarts is measured to stay above the 1% mean gap "
                 "the precondition asks; (2) hyperparameters on the paper's scale: k = 5 as in the paper and "
                 "the authors' code, the step and score period tuned on held-out QAPLIB instances (n = 14) with "
                 "the same grid size as Sinkhorn-GD and the authors' optimiser; (3) the method passes its tests "
                 "(decomposition against brute force, gradient against autograd and finite differences, "
                 "rounding, exact on linear assignment, never worse than its warm start), and the authors' own "
                 "optimiser (momentum Frank-Wolfe, jittered score, dynamic k), tuned the same way, misses the "
                 "threshold too; (4) the control (random search) is far worse than BE. The paper's 2-opt stops after "
                 "one descent, a fraction of BE's evaluations; against it, at the authors' repository's 5000-step "
                 "default, the paper's ratio is met (claim paper_protocol); given the same evaluations 2-opt "
                 "restarts and wins",
       name="be_vs_two_opt")
def claim_be_vs_two_opt(fast: bool = False, control: bool = False) -> Measured:
    seeds = FAST_SEEDS if fast else CLAIM_SEEDS
    method = RANDOM if control else BE
    extras = () if fast or control else (BE_FIRST, AUTHORS, FAQ, SINKHORN)
    gaps = comparison((method, TWO_OPT, TWO_OPT_ONE) + extras, seeds)
    mean = {m: _per_seed_mean(g) for m, g in gaps.items()}
    ratio = _ratio(mean[method], mean[TWO_OPT])
    vs_one = _ratio(mean[method], mean[TWO_OPT_ONE])
    values = {"ratio_median": np.median(ratio), "ratio_min": ratio.min(), "ratio_max": ratio.max(),
              "gap_pct": np.median(mean[method]), "two_opt_gap_pct": np.median(mean[TWO_OPT]),
              "ratio_vs_one_descent_median": np.median(vs_one),
              "one_descent_gap_pct": np.median(mean[TWO_OPT_ONE]),
              "one_descent_evals": evaluations(TWO_OPT_ONE, seeds)}
    for m, key in ((BE_FIRST, "solver_ties"), (AUTHORS, "authors"), (FAQ, "faq"), (SINKHORN, "sinkhorn")):
        if m in mean:
            values[f"{key}_gap_pct"] = np.median(mean[m])
    if AUTHORS in mean:
        values["authors_ratio_median"] = np.median(_ratio(mean[AUTHORS], mean[TWO_OPT]))
        values["authors_ratio_vs_one_descent_median"] = np.median(_ratio(mean[AUTHORS], mean[TWO_OPT_ONE]))
    who = "random search" if control else "BE"
    return Measured(values, criteria=[Criterion("ratio_median", "<=", round(PAPER_RATIO, 2))], seeds=seeds,
                    precondition=bool(values["two_opt_gap_pct"] >= 1.0),
                    summary=f"{who} / 2-opt mean gap {values['ratio_median']:.2f} "
                            f"({values['ratio_min']:.2f}-{values['ratio_max']:.2f}); "
                            f"{values['gap_pct']:.1f}% vs {values['two_opt_gap_pct']:.1f}%",
                    details=gaps)


@claim("11", "BE started from FAQ's answer improves it", kind="reproduction",
       paper="BE can be combined with existing solvers as a local improvement: started from their solution it "
             "returns one no worse, and better ones in the experiments (no count we could verify)",
       expect="BE started from FAQ's permutation (2000 evaluations of f) is strictly better than FAQ on at least "
              "5 of the 9 QAPLIB n = 12 instances (a majority; FAQ is optimal on none), median over 5 seeds",
       control="random search with the same 2000 evaluations of f, FAQ's permutation kept as the incumbent",
       name="local_improvement")
def claim_local_improvement(fast: bool = False, control: bool = False) -> Measured:
    seeds = FAST_SEEDS if fast else CLAIM_SEEDS
    method = RANDOM if control else BE
    extras = () if fast or control else (TWO_OPT,)
    warm = comparison((method,) + extras, seeds, warm=True)
    faq_gap = np.array([gap(_faq(name).fun, qaplib_instance(name)[1]) for name in QAPLIB_12])
    better = (warm[method] < faq_gap - 1e-9).sum(axis=1)
    values = {"improved_median": np.median(better), "improved_min": better.min(), "improved_max": better.max(),
              "faq_suboptimal": int((faq_gap > 1e-9).sum()), "faq_gap_pct": faq_gap.mean(),
              "warm_gap_pct": np.median(_per_seed_mean(warm[method]))}
    if TWO_OPT in warm:
        values["two_opt_from_faq_improved_median"] = np.median((warm[TWO_OPT] < faq_gap - 1e-9).sum(axis=1))
        values["two_opt_from_faq_gap_pct"] = np.median(_per_seed_mean(warm[TWO_OPT]))
    who = "random search" if control else "BE"
    return Measured(values, criteria=[Criterion("improved_median", ">=", 5)], seeds=seeds,
                    precondition=values["faq_suboptimal"] >= 5,
                    summary=f"{who} from FAQ strictly better on {values['improved_median']:.0f} of 9 "
                            f"(median; {values['improved_min']:.0f}-{values['improved_max']:.0f})",
                    details=dict(warm=warm, faq=faq_gap))


# --------------------------------------------------------------------------- watch it run
WATCH_INSTANCE = "tai12a"
PERIODS = (5, 10, 20, 40, 80)
#: Evaluations in the "watch it run" figures and their live explorer: half the claims' budget, so
#: that a slider move (a fresh run) stays well under the book's 150 ms.
TRACE_BUDGET = 1000


def _steps(x: np.ndarray, best: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A best-so-far curve reduced to the points where it changes (and its last point)."""
    keep = np.concatenate([[True], best[1:] < best[:-1]])
    keep[-1] = True
    return x[keep], best[keep]


@lru_cache(maxsize=32)
def _baseline_traces(instance: str, seed: int = 0) -> dict:
    """Best-so-far gap (%) against evaluations of f for 2-opt with restarts and random search on one
    QAPLIB instance (step curves, change points only), and FAQ's gap."""
    q, opt = qaplib_instance(instance)
    tw = solve(TWO_OPT, q, seed, budget=TRACE_BUDGET).trace
    rs = solve(RANDOM, q, seed, budget=TRACE_BUDGET).trace
    return {TWO_OPT: _steps(tw["n_evals"], np.array([gap(v, opt) for v in tw["best"]])),
            RANDOM: _steps(np.arange(1, len(rs) + 1.0), np.array([gap(v, opt) for v in rs["best"]])),
            FAQ: gap(_faq(instance).fun, opt)}


@lru_cache(maxsize=256)
def run_traces(instance: str = WATCH_INSTANCE, step: float = 0.1, k: int = 5, score_period: int = 20,
               tie_break: str = "random", seed: int = 0) -> Trace:
    """One BE + Frank-Wolfe run (:data:`TRACE_BUDGET` evaluations) on a QAPLIB instance; its trace
    holds the gaps (%) of ``F_S^(k)(A_t)`` (``objective``), ``f(round_S(A_t))`` (``rounded``) and
    the incumbent (``best``) against ``n_evals``."""
    check_choice(instance, "instance", QAPLIB_12)
    q, opt = qaplib_instance(instance)
    res = be_frank_wolfe(q, q.n, k=k, step=step, score_period=score_period, tie_break=tie_break,
                         maxiter=10 * TRACE_BUDGET, max_evals=TRACE_BUDGET, rng=seed)
    data = {key: list(gap(res.trace[key], opt)) for key in ("objective", "rounded", "best")}
    return Trace.from_dict({"method": BE, "meta": dict(res.trace.meta, instance=instance),
                            "iteration": list(res.trace.iteration), "n_evals": list(res.trace["n_evals"]), **data})


def _trace_parts(instance: str, step: float, k: int, score_period: int, tie_break: str) -> list:
    tr = run_traces(instance, step, k, score_period, tie_break)
    base = _baseline_traces(instance)
    ev, top = tr["n_evals"], _trace_ymax(instance)
    blue = color_for(0)
    # the dynamic score's periods, every other one shaded: one filled trace of rectangles
    resets = ev[np.arange(score_period, len(ev), score_period) - 1]
    edges = np.concatenate([[0.0], resets, [ev[-1]]])
    xs, ys = [], []
    for j in range(1, len(edges) - 1, 2):
        xs += [edges[j], edges[j], edges[j + 1], edges[j + 1], edges[j], None]
        ys += [-1, top, top, -1, -1, None]
    traces = [
        go.Scatter(x=xs or [None], y=ys or [None], name="alternate score periods", mode="lines",
                   fill="toself", fillcolor="rgba(160,190,230,0.3)", line=dict(width=0, dash="solid"),
                   hoverinfo="skip"),
        go.Scatter(x=[0, TRACE_BUDGET], y=[base[FAQ]] * 2, name="FAQ", mode="lines",
                   line=dict(color="#555", dash="dot", width=1.5)),
        go.Scatter(x=ev, y=tr.objective, name="BE: F_S(A_t)", mode="lines",
                   line=dict(color=blue, width=1, dash="solid")),
        go.Scatter(x=ev, y=tr["rounded"], name="BE: f(round(A_t))", mode="lines",
                   line=dict(color=blue, width=1, dash="dot"), fill="tonexty", fillcolor="rgba(0,114,178,0.12)"),
        go.Scatter(x=ev, y=tr["best"], name="BE: best", mode="lines",
                   line=dict(color=blue, width=3, dash="solid")),
    ]
    for i, m in enumerate((TWO_OPT, RANDOM)):
        x, y = base[m]
        x, y = np.append(x, TRACE_BUDGET), np.append(y, y[-1])  # the incumbent holds to the end
        traces.append(go.Scatter(x=x, y=y, name=f"{m}: best", mode="lines", line_shape="hv",
                                 line=dict(color=color_for(i + 1), width=2.5, dash=("solid", "dash")[i])))
    return traces


def _trace_ymax(instance: str) -> float:
    base = _baseline_traces(instance)
    return float(max(base[RANDOM][1][-1], base[FAQ]) * 1.5)


def trace_figure(instance: str = WATCH_INSTANCE, step: float = 0.1, k: int = 5, score_period: int = 20,
                 tie_break: str = "random") -> go.Figure:
    """Gap to the optimum (%) against evaluations of f along one BE + Frank-Wolfe run, with 2-opt
    and random search (same evaluations) and FAQ's level on the same axes; shaded: the
    dynamic-score periods; the band between F_S and f(round) is the rounding guarantee."""
    fig = go.Figure(_trace_parts(instance, step, k, score_period, tie_break))
    base_layout(fig, title=f"{instance}: step {step:g}, k = {k}, M = {score_period}, {tie_break} ties",
                xaxis_title="evaluations of f", yaxis_title="gap to optimum (%)", height=500)
    fig.update_yaxes(range=[-1, _trace_ymax(instance)])
    fig.update_xaxes(range=[0, TRACE_BUDGET])
    return fig


def trace_slider_figure(instance: str = WATCH_INSTANCE) -> go.Figure:
    """Static twin of :data:`EXPLORER_TRACE`: the score-reset period on a slider."""
    steps = [SliderStep(f"{period}", _trace_parts(instance, 0.1, 5, period, "random")) for period in PERIODS]
    fig = slider_figure(steps, slider_label="score reset period M (Frank-Wolfe steps)", active=PERIODS.index(20),
                        xaxis_title="evaluations of f", yaxis_title="gap to optimum (%)", height=560,
                        title=f"{instance}: the dynamic score")
    fig.update_yaxes(range=[-1, _trace_ymax(instance)], autorange=False)
    fig.update_xaxes(range=[0, TRACE_BUDGET], autorange=False)
    return fig


EXPLORER_TRACE = Explorer("11", "trace", trace_figure, {
    "instance": Choice("QAPLIB instance", list(QAPLIB_12), WATCH_INSTANCE),
    "step": Slider("Frank-Wolfe step", [0.05, 0.1, 0.2, 0.4], 0.1),
    "k": Slider("truncation k", [1, 2, 3, 5, 8], 5),
    "score_period": Slider("score reset period M", list(PERIODS), 20),
    "tie_break": Choice("ties in the Frank-Wolfe vertex", ["random", "first"], "random")})


# --------------------------------------------------------------------------- the comparison
LEGEND = {BE: "BE + Frank-Wolfe (random ties)", BE_FIRST: "BE + Frank-Wolfe, solver's ties",
          AUTHORS: "BE, the authors' optimiser", TWO_OPT: "2-opt with restarts", TWO_OPT_ONE: "2-opt, one descent",
          RANDOM: "random search", FAQ: "FAQ (uses the formula)", SINKHORN: "Sinkhorn-GD (uses the formula)"}
SYMBOLS = {BE: "circle", BE_FIRST: "circle-open", AUTHORS: "diamond", TWO_OPT: "square", TWO_OPT_ONE: "square-open",
           RANDOM: "x", FAQ: "triangle-up-open", SINKHORN: "star-triangle-up-open"}


def comparison_figure(gaps: dict[str, np.ndarray]) -> go.Figure:
    """Mean gap over the seeds (%) of every method on each QAPLIB instance (log scale: the
    Christofides instances have gaps ten times those of the others)."""
    if not gaps:
        raise ValueError("gaps must name at least one method")
    fig = go.Figure()
    for i, (m, g) in enumerate(gaps.items()):
        if np.asarray(g).shape[-1] != len(QAPLIB_12):
            raise ValueError(f"gaps[{m!r}] must have one column per instance of QAPLIB_12")
        y = np.asarray(g, dtype=float).mean(axis=0)
        x = np.arange(len(QAPLIB_12)) + 0.07 * (i - (len(gaps) - 1) / 2)  # side by side, not on top
        fig.add_trace(go.Scatter(x=x, y=np.maximum(y, 0.05), mode="markers", name=LEGEND.get(m, m),
                                 text=list(QAPLIB_12),
                                 marker=dict(color=color_for(i), size=11, symbol=SYMBOLS.get(m, "circle"),
                                             line=dict(width=1.5, color=color_for(i))),
                                 customdata=y, hovertemplate="%{text}: %{customdata:.2f}%<extra>" + m + "</extra>"))
    base_layout(fig, xaxis_title="QAPLIB instance (n = 12)", yaxis_title="gap to optimum (%), mean over seeds",
                logy=True, height=500, title="Each method's gap on the nine QAPLIB instances")
    fig.update_xaxes(tickvals=list(range(len(QAPLIB_12))), ticktext=list(QAPLIB_12))
    fig.add_annotation(xref="paper", yref="paper", x=1, y=0, xanchor="right", yanchor="bottom", showarrow=False,
                       text="a gap of 0 is drawn at 0.05%", font=dict(size=11, color="#555"))
    return fig


def comparison_rows(gaps: dict[str, np.ndarray]) -> list[dict]:
    """One table row per method: mean gap (median over seeds and its range), evaluations, optimal runs."""
    rows = []
    for m, g in gaps.items():
        per_seed = np.asarray(g).mean(axis=1)
        black_box = m in BLACK_BOX
        rows.append({"method": LEGEND.get(m, m),
                     "mean gap (%), median over seeds": f"{np.median(per_seed):.1f}",
                     "range over seeds": f"{per_seed.min():.1f}-{per_seed.max():.1f}",
                     "evaluations of f": f"{evaluations(m):.0f}" if black_box else "(uses the formula)",
                     "optimal runs": f"{int((np.asarray(g) < 1e-9).sum())}/{np.asarray(g).size}"})
    return rows
def glue_results(results) -> None:
    """Glue the claims' measured figures for the prose, each with the precision the text shows."""
    by_name = {r.name: r for r in results}
    two, one, whole = "{:.2f}", "{:.1f}", "{:.0f}"
    glue_claim(by_name["be_vs_two_opt"], formats={
        "ratio_median": two, "ratio_min": two, "ratio_max": two, "gap_pct": one, "two_opt_gap_pct": one,
        "ratio_vs_one_descent_median": two, "one_descent_gap_pct": one, "one_descent_evals": whole,
        "solver_ties_gap_pct": one, "authors_gap_pct": one, "faq_gap_pct": one, "sinkhorn_gap_pct": one,
        "authors_ratio_median": two, "authors_ratio_vs_one_descent_median": two})
    glue_claim(by_name["paper_protocol"], formats={
        "ratio_median": two, "ratio_min": two, "ratio_max": two, "gap_pct": one, "one_descent_gap_pct": one,
        "evals": whole, "one_descent_evals": whole, "two_opt_same_evals_gap_pct": one,
        "ratio_vs_two_opt_same_evals_median": one})
    protocol = by_name["paper_protocol"].measured
    glue("protocol_eval_ratio", protocol["evals"] / protocol["one_descent_evals"], "{:.0f}")
    glue_claim(by_name["local_improvement"], formats={
        "improved_median": whole, "improved_min": whole, "improved_max": whole, "faq_suboptimal": whole,
        "faq_gap_pct": one, "warm_gap_pct": one, "two_opt_from_faq_improved_median": whole,
        "two_opt_from_faq_gap_pct": one})
    glue_claim(by_name["rounding_guarantee"], formats={"matrices": whole})
    li = by_name["local_improvement"].details  # which instances BE's local improvement never reaches
    improved = {m: (w < li["faq"] - 1e-9).any(axis=0) for m, w in li["warm"].items()}
    glue("li_never", ", ".join(n for n, hit in zip(QAPLIB_12, improved[BE]) if not hit) or "none")
    glue("li_swap_optimal", ", ".join(swap_optimal_faq()) or "none")


def glue_tuning(tunings) -> None:
    """Glue the tuned settings of BE and the authors' optimiser and the tuning scores of BE and 2-opt."""
    best = {t.method: t for t in tunings}
    glue("tuned_be", best[BE].best_score, "{:.1f}")
    glue("tuned_two_opt", best[TWO_OPT].best_score, "{:.1f}")
    glue("tuned_step", best[BE].best["step"], "{:g}")
    glue("tuned_period", best[BE].best["score_period"], "{:d}")
    glue("tuned_authors_period", best[AUTHORS].best["period"], "{}")


# --- continuity ---------------------------------------------------------------------------
T_GRID = np.round(np.linspace(0.0, 1.0, 11), 2)


@lru_cache(maxsize=1)
def continuity_data(n: int = 4, seed: int = 3, points: int = 401) -> dict:
    """Along ``A(t) = (1 - t) A0 + t A1`` (n = 4): ``F_S`` of the score-ordered decomposition and
    the extension value of the greedy bottleneck decomposition, and both decompositions' alphas
    over the fixed score order of all n! permutations."""
    g = np.random.default_rng(seed)
    q = qap_instance(n, g)
    A0 = random_doubly_stochastic(n, g)
    A1 = random_doubly_stochastic(n, g)
    S = score_matrix(n, "uniform", g)
    perms = all_permutations(n)
    order = np.argsort(-(S[np.arange(n), perms]).sum(axis=1))
    perms = perms[order]
    fvals = q(perms)
    index = {tuple(p): i for i, p in enumerate(perms)}
    ts = np.linspace(0.0, 1.0, points)

    def alphas(dec):
        a = np.zeros(len(perms))
        for al, p in zip(dec.alphas, dec.perms):
            a[index[tuple(p)]] += al
        return a

    be_curve, greedy_curve, be_alpha, greedy_alpha = [], [], [], []
    for t in ts:
        A = (1 - t) * A0 + t * A1
        ab, ag = alphas(birkhoff_decomposition(A, S)), alphas(bottleneck_decomposition(A))
        be_curve.append(ab @ fvals)
        greedy_curve.append(ag @ fvals)
        be_alpha.append(ab)
        greedy_alpha.append(ag)
    return dict(t=ts, be=np.array(be_curve), greedy=np.array(greedy_curve), be_alpha=np.array(be_alpha),
                greedy_alpha=np.array(greedy_alpha), f=fvals, perms=perms)


def _continuity_traces(t: float) -> list:
    d = continuity_data()
    i = int(np.argmin(np.abs(d["t"] - t)))
    rank = np.arange(1, len(d["f"]) + 1)
    return [
        go.Bar(x=rank, y=d["be_alpha"][i], name="alpha, score-ordered (BE)", marker_color=color_for(0),
               xaxis="x", yaxis="y"),
        go.Bar(x=rank, y=d["greedy_alpha"][i], name="alpha, greedy bottleneck", marker_color=color_for(1),
               xaxis="x", yaxis="y"),
        go.Scatter(x=d["t"], y=d["be"], name="F_S(A(t)) (BE)", mode="lines", line=dict(color=color_for(0), width=2.5),
                   xaxis="x2", yaxis="y2"),
        go.Scatter(x=d["t"], y=d["greedy"], name="extension by greedy decomposition", mode="markers",
                   marker=dict(color=color_for(1), size=3), xaxis="x2", yaxis="y2"),
        go.Scatter(x=[d["t"][i], d["t"][i]], y=[d["be"][i], d["greedy"][i]], name="current t", mode="markers",
                   marker=dict(color="black", size=11, symbol="circle-open", line_width=2), xaxis="x2", yaxis="y2"),
    ]


def _continuity_layout(fig: go.Figure) -> go.Figure:
    d = continuity_data()
    lo, hi = min(d["be"].min(), d["greedy"].min()), max(d["be"].max(), d["greedy"].max())
    pad = 0.05 * (hi - lo)
    fig.update_layout(
        barmode="group",
        xaxis=dict(domain=[0, 0.47], title="permutation, in decreasing score <S, P> (rank)"),
        yaxis=dict(range=[0, 1.0], title="coefficient alpha_l", autorange=False),
        xaxis2=dict(domain=[0.57, 1], title="t in A(t) = (1-t) A0 + t A1", anchor="y2", range=[-0.02, 1.02]),
        yaxis2=dict(anchor="x2", title="extension value", range=[lo - pad, hi + pad], autorange=False))
    return fig


def continuity_figure(t: float = 0.5) -> go.Figure:
    """Coefficients of both decompositions at ``A(t)`` (left) and the two extensions along the
    segment (right): the score-ordered one is continuous, the greedy one jumps."""
    t = check_in_range(t, "t", 0.0, 1.0, closed=(True, True))
    fig = go.Figure(_continuity_traces(t))
    base_layout(fig, title="Continuity along a segment of the Birkhoff polytope (n = 4)", height=470)
    return _continuity_layout(fig)


def continuity_slider_figure() -> go.Figure:
    """Static twin of :data:`EXPLORER_CONTINUITY`."""
    steps = [SliderStep(f"{t:.1f}", _continuity_traces(float(t))) for t in T_GRID]
    fig = slider_figure(steps, slider_label="t", active=5, fixed_axes=False,
                        title="Continuity along a segment of the Birkhoff polytope (n = 4)")
    return _continuity_layout(fig)


EXPLORER_CONTINUITY = Explorer("11", "continuity", continuity_figure,
                               {"t": Slider("t (position on the segment)", list(np.round(np.linspace(0, 1, 41), 3)), 0.5)})


# --- triangle slice -----------------------------------------------------------------------
TRIANGLE_K = (1, 2, 3, 17)
_V = np.array([[0.0, 0.0], [1.0, 0.0], [0.5, np.sqrt(3) / 2]])


@lru_cache(maxsize=1)
def triangle_data(n: int = 5, seed: int = 2, res: int = 46) -> dict:
    """``F_S^(k)`` on the slice ``A = c0 P0 + c1 P1 + c2 P2`` of the Birkhoff polytope (n = 5),
    for a random score and for the warm score of the best vertex, every truncation in
    ``TRIANGLE_K`` (17 = all terms), on a ``res x res`` grid of the triangle (NaN outside)."""
    g = np.random.default_rng(seed)
    q = qap_instance(n, g)
    P = [g.permutation(n) for _ in range(3)]
    fv = np.array([q(p) for p in P])
    best = int(np.argmin(fv))
    scores = {"random": score_matrix(n, "uniform", g), "warm start at the best vertex": warm_score(P[best], g)}
    xs = np.linspace(0, 1, res)
    ys = np.linspace(0, _V[2, 1], res)
    X, Y = np.meshgrid(xs, ys)
    # barycentric coordinates of each grid point
    c2 = Y / _V[2, 1]
    c1 = X - 0.5 * c2
    c0 = 1 - c1 - c2
    inside = (c0 >= -1e-12) & (c1 >= -1e-12) & (c2 >= -1e-12)
    Pm = [perm_matrix(p) for p in P]
    out = {}
    for name, S in scores.items():
        vals = {kk: np.full(X.shape, np.nan) for kk in TRIANGLE_K}
        for idx in zip(*np.nonzero(inside)):
            c = np.clip([c0[idx], c1[idx], c2[idx]], 0, None)
            A = sum(ci * Pi for ci, Pi in zip(c / c.sum(), Pm))
            dec = birkhoff_decomposition(A, S)
            f = q(dec.perms)
            for kk in TRIANGLE_K:
                a = dec.alphas[:kk]
                vals[kk][idx] = a @ f[:kk] / a.sum()
        Ac = sum(Pi / 3 for Pi in Pm)
        rp, rv = round_birkhoff(q, Ac, S)
        out[name] = dict(values=vals, round_perm=rp, round_value=rv)
    return dict(x=xs, y=ys, f=fv, perms=P, scores=out, zmin=float(fv.min()), zmax=float(fv.max()))


def _triangle_traces(score: str, k: int) -> list:
    d = triangle_data()
    s = d["scores"][score]
    z = s["values"][k]
    vert_text = [f"P{i}: f = {d['f'][i]:.2f}" for i in range(3)]
    traces = [
        go.Heatmap(x=d["x"], y=d["y"], z=z, zmin=d["zmin"], zmax=d["zmax"], colorscale="Viridis",
                   colorbar=dict(title="F_S"), name="F_S on the slice", hoverongaps=False),
        go.Scatter(x=_V[:, 0], y=_V[:, 1], mode="markers+text", text=vert_text,
                   textposition=["bottom right", "bottom left", "top center"],  # inside the plot on a phone
                   marker=dict(size=12, color="white", line=dict(color="black", width=2)), name="vertices P0, P1, P2"),
    ]
    match = [i for i, p in enumerate(d["perms"]) if np.array_equal(p, s["round_perm"])]
    centre = _V.mean(axis=0)
    if match:
        end, where = 0.8 * _V[match[0]] + 0.2 * centre, f"P{match[0]}"
    else:  # the best term of the centre's decomposition is not a corner of the triangle
        end, where = centre + np.array([0.0, 0.12]), "a permutation off the triangle"
    traces.append(go.Scatter(x=[centre[0], end[0]], y=[centre[1], end[1]], mode="lines+markers",
                             line=dict(color="red", width=3), marker=dict(symbol=["circle", "arrow"], size=[9, 16],
                                                                          angleref="previous", color="red"),
                             name=f"rounding of the centre: {where}, f = {s['round_value']:.2f}"))
    return traces


def _triangle_layout(fig: go.Figure) -> go.Figure:
    fig.update_layout(xaxis=dict(range=[-0.1, 1.1], title="slice coordinate 1 (barycentric, no unit)",
                                 scaleanchor="y", showgrid=False),
                      yaxis=dict(range=[-0.12, 1.0], title="slice coordinate 2", showgrid=False))
    return fig


def triangle_figure(score: str = "random", k: int = 17) -> go.Figure:
    """Heat map of the (truncated) extension on a triangle of the Birkhoff polytope spanned by three
    permutations, with the rounding of its centre."""
    check_choice(score, "score", tuple(triangle_data()["scores"]))
    if k not in TRIANGLE_K:
        raise ValueError(f"k must be one of {TRIANGLE_K}, got {k!r}")
    fig = go.Figure(_triangle_traces(score, k))
    base_layout(fig, title=f"F_S on a triangle slice (n = 5), score: {score}, k = {k}", height=520)
    return _triangle_layout(fig)


def triangle_slider_figure() -> go.Figure:
    """Static twin of :data:`EXPLORER_TRIANGLE`: both scores, every truncation."""
    def label(sc: str, kk: int) -> str:  # short: eight tick labels share the slider's width
        return f"{'random' if sc == 'random' else 'warm'} {'all' if kk == TRIANGLE_K[-1] else kk}"

    steps = [SliderStep(label(sc, kk), _triangle_traces(sc, kk))
             for sc in triangle_data()["scores"] for kk in TRIANGLE_K]
    fig = slider_figure(steps, slider_label=f"score, truncation k (all = {TRIANGLE_K[-1]} terms)", active=3,
                        fixed_axes=False, height=560,
                        title="The Birkhoff extension on a triangle slice (n = 5)")
    return _triangle_layout(fig)


EXPLORER_TRIANGLE = Explorer("11", "triangle", triangle_figure, {
    "score": Choice("score S", ["random", "warm start at the best vertex"], "random"),
    "k": Slider("truncation k (17 = all terms)", list(TRIANGLE_K), 17)})
