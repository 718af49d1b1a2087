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

from ..claims import Criterion, Measured, claim
from ..core import Result, Trace, Tuning, check_choice, check_in_range, check_int, grid_search
from ..viz import SliderStep, base_layout, color_for, slider_figure
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
         AUTHORS: {"lr": (0.03, 0.1, 0.3), "period": (None, 5, 20)},
         SINKHORN: {"tau": (0.2, 0.5, 1.0), "lr": (1.0, 2.0, 4.0)},
         TWO_OPT: {"restart": ("random permutation",)}}
SETTINGS = {BE: {"step": 0.1, "score_period": 20},
            AUTHORS: {"lr": 0.1, "period": 5},
            SINKHORN: {"tau": 0.5, "lr": 1.0}}


def gap(value: float, opt: float) -> float:
    """Gap to the optimum in percent, ``100 (value - opt) / |opt|``."""
    return 100.0 * (value - opt) / abs(opt)


def solve(method: str, qap: QAP, seed: int, *, budget: int = BUDGET, perm0=None, **setting) -> Result:
    """Run ``method`` (one of :data:`METHODS`) on ``qap`` with ``budget`` evaluations of f (the
    black-box methods), the tuned setting unless ``setting`` overrides it, and seed ``seed``.
    ``perm0`` warm-starts BE, 2-opt and random search (which then keeps it as its incumbent)."""
    check_choice(method, "method", METHODS)
    if not isinstance(qap, QAP):
        raise ValueError("qap must be a QAP")
    budget = check_int(budget, "budget", minimum=1)
    n = qap.n
    opts = {**SETTINGS.get(method, {}), **setting}
    if method in (BE, BE_FIRST):
        return be_frank_wolfe(qap, n, k=5, maxiter=10 * budget, max_evals=budget, perm0=perm0, rng=seed,
                              tie_break="first" if method == BE_FIRST else "random",
                              **{**SETTINGS[BE], **setting})
    if method == AUTHORS:
        return be_momentum_frank_wolfe(qap, n, k=5, maxiter=10 * budget, max_evals=budget, rng=seed, **opts)
    if method == TWO_OPT:
        return two_opt(qap, n, max_evals=budget, perm0=perm0, rng=seed)
    if method == TWO_OPT_ONE:
        return two_opt(qap, n, perm0=perm0, rng=seed)
    if method == RANDOM:
        res = random_search(qap, n, budget if perm0 is None else budget - 1, rng=seed)
        if perm0 is not None and qap(np.asarray(perm0)) <= res.fun:
            res.x, res.fun = np.asarray(perm0, dtype=np.int64), float(qap(np.asarray(perm0)))
        return res
    if method == FAQ:
        return faq(qap, rng=seed)
    return sinkhorn_gd(qap, maxiter=SINKHORN_ITERS, rng=seed, **opts)


@lru_cache(maxsize=4096)
def _run(method: str, name: str, seed: int, warm: bool = False) -> tuple[float, int]:
    """(gap %, evaluations) of one run on the QAPLIB instance ``name``; ``warm`` starts from FAQ's
    permutation. Cached: the claims, their controls, the tables and the figures share runs."""
    q, opt = qaplib_instance(name)
    res = solve(method, q, seed, perm0=_faq(name).x if warm else None)
    return gap(res.fun, opt), int(res.get("nfev") or 0)


@lru_cache(maxsize=32)
def _faq(name: str) -> Result:
    return faq(qaplib_instance(name)[0], rng=0)  # FAQ starts at the barycentre: no randomness


def comparison(methods=METHODS, seeds=CLAIM_SEEDS, warm: bool = False) -> dict[str, np.ndarray]:
    """Gap to the optimum (%) of each method on the nine QAPLIB n = 12 instances, one row per seed:
    ``{method: array (len(seeds), 9)}`` (``warm``: every run starts from FAQ's permutation)."""
    return {m: np.array([[_run(m, name, s, warm)[0] for name in QAPLIB_12] for s in seeds]) for m in methods}


def evaluations(method: str, seeds=CLAIM_SEEDS) -> float:
    """Median number of evaluations of f a method used per run on the benchmark."""
    return float(np.median([_run(method, name, s)[1] for name in QAPLIB_12 for s in seeds]))


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
        dec = birkhoff_decomposition(A, S)
        max_recon = max(max_recon, float(np.abs(dec.matrix() - A).max()))
        min_mass = min(min_mass, float(dec.alphas.sum()))
        viol_full += round_birkhoff(q8, A, S)[1] > birkhoff_extension(q8, A, S) + 1e-12
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


@claim("11", "BE finds better QAP solutions than 2-opt given the same number of evaluations of f",
       kind="reproduction",
       paper="on QAPLIB (n = 12 to 256) BE's mean gap to the best known value is 6.30% against 10.38% for "
             "2-opt (a ratio of 0.61) and 7.67% for Gurobi, at about equal run time (as quoted by a "
             "third-party summary of the paper)",
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
                 "threshold too; (4) the control (random search) is far worse than BE. BE matches the paper's "
                 "2-opt only when 2-opt stops after one descent, which uses a fraction of BE's evaluations; "
                 "given the same evaluations 2-opt restarts and wins",
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
