"""Chapter 16: the book's experiments, figures, live explorers and claims for PaZO. The methods
themselves are in :mod:`optbook.training.pazo_methods`.

Every quadratic experiment runs on the card's problem, f(x) = sum_i lambda_i x_i^2 / 2 with
d = 20 curvatures log-spaced from 1 to 10^3 and x0 = 1, in float64 with eps = 1e-4 (the central
difference is then exact up to rounding). Many runs (settings x seeds) advance in lock-step in
:func:`simulate`, each with its own generator, draw for draw the same numbers as the one-run
functions of :mod:`~optbook.training.pazo_methods` (tested), so a tuning grid costs one vectorised loop.
"""
from __future__ import annotations

from functools import lru_cache

import numpy as np
import plotly.graph_objects as go
import torch
from plotly.subplots import make_subplots

from ..claims import Criterion, Measured, claim
from ..core import Trace, Tuning, check_choice, check_in_range, check_int, check_positive
from ..core.threads import one_torch_thread
from ..viz import Phase, SliderStep, base_layout, color_for, convergence_traces, phase_layout, slider_figure
from ..widgets import Explorer, Slider
from .pazo_methods import (
    DIVERGENCE_FACTOR,
    HiZOO,
    MeZO,
    PaZO,
    ZOAdam,
    _b_eigs,
    _iterations_from_spectrum,
    contraction_bound,
    ill_conditioned_quadratic,
    preconditioner,
    pspsa,
    pspsa_step_size,
)

D_DIM, LOG10_KAPPA = 20, 3.0     # the card's quadratic
EPS = 1e-4                       # smoothing radius (float64)
BETA = 0.03                      # EMA rate of the curvature (the card's)
REDUCTION = 1e-6                 # "solved": f <= 1e-6 f(x0)
BUDGET = 6000                    # function evaluations of the headline comparison
CLAIM_SEEDS = (0, 1, 2, 3, 4)
FAST_SEEDS = (0, 1, 2)
#: The headline's seeds. Its first registration used CLAIM_SEEDS (5 seeds): the runs spread over ten
#: decades, so 5 seeds could not resolve the 0.3-decade threshold (a referee's check on 40 other
#: seeds, 20-59, gave a median gap of about 2 decades). Re-registered on 40 fresh seeds, same criterion.
HEADLINE_SEEDS = tuple(range(1000, 1040))
HEADLINE_FAST_SEEDS = tuple(range(1000, 1012))
TUNING_SEEDS = (100, 101, 102)   # held out
FAST_TUNING_SEEDS = (100, 101)
ALPHAS = (0.0, 0.25, 0.5, 0.75, 1.0)
SWEEP_CAP = 40_000               # iterations; a run still above the target is counted as never arriving
TARGET_CAP = 50_000              # evaluations, for the evaluations-to-target comparison
#: ZO-Adam's learning rates. The first grid, 3e-4 .. 1e-2, had its best at the edge (1e-2) in the
#: first full run; it was widened by a factor 10 (HiZOO, not ZO-Adam, is the best baseline either way).
ZO_ADAM_LRS = (3e-3, 1e-2, 3e-2, 1e-1)
PROXY_BUDGET = 1500              # forward passes of the torch proxy (1500 keeps the notebook well inside its CPU budget)
BLOCK = 512                      # steps of random draws generated at once by simulate


def card_problem() -> tuple[np.ndarray, np.ndarray]:
    """(lambda, x0) of the card's quadratic."""
    return ill_conditioned_quadratic(D_DIM, LOG10_KAPPA)


def _fvals(lam: np.ndarray, X: np.ndarray) -> np.ndarray:
    return 0.5 * np.einsum("ij,ij->i", X, lam * X)


# --------------------------------------------------------------------------- lock-step runs

METHODS = ("zo_sgd", "pspsa", "pazo", "zo_adam")


def simulate(method: str, settings: list[dict], seeds, *, budget: int, target: float | None = None,
             lam: np.ndarray | None = None, x0: np.ndarray | None = None, eps: float = EPS, beta: float = BETA,
             D0: float | None = None, record: bool = False) -> dict:
    """Run ``method`` on a diagonal quadratic for every (setting, seed), in lock-step.

    ``method``: "zo_sgd" (settings: eta, momentum), "pspsa" (settings: eta, scale: the diagonal of
    P), "pazo" (settings: eta, momentum; D0 default lambda_max; HiZOO is momentum 0) or "zo_adam"
    (settings: eta, beta1; beta2 = 0.999). A setting may give the effective step ``step`` =
    eta / (1 - momentum) instead of eta (the momentum grids are laid out in it). Each run draws u from ``np.random.default_rng(seed)``
    once per step, as :func:`~optbook.training.pazo_methods.zo_sgd`, ``pspsa``, ``pazo`` and ``zo_adam`` do,
    so run for run they agree with those functions. Evaluations are counted as there: 2 per step
    (3 for PaZO, plus f(x0)). A run stops moving once f exceeds 1e12 f(x0) (diverged).

    Returns arrays of shape (settings, seeds): ``hit`` (evaluations when f first fell to
    ``target``, inf if never), ``final`` (f after ``budget`` evaluations, or when every run hit the
    target), ``diverged``; with ``record``, ``curve`` (settings, seeds, steps + 1) and ``nfev``.
    """
    method = check_choice(method, "method", METHODS)
    budget = check_int(budget, "budget", minimum=1)
    if lam is None:
        lam, x0 = card_problem()
    seeds = tuple(int(s) for s in seeds)
    if not settings or not seeds:
        raise ValueError("settings and seeds must not be empty")
    S, R, d = len(settings), len(settings) * len(seeds), lam.size
    col = lambda key, default=0.0: np.repeat([float(st.get(key, default)) for st in settings], len(seeds))[:, None]  # noqa: E731
    mom = col("momentum")
    eta = np.repeat([float(st["eta"]) if "eta" in st else float(st["step"]) * (1.0 - float(st.get("momentum", 0.0)))
                     for st in settings], len(seeds))[:, None]
    b1, b2 = col("beta1", 0.9), 0.999
    P = (np.repeat(np.array([st.get("scale", np.ones(d)) for st in settings], dtype=float), len(seeds), axis=0)
         if method == "pspsa" else np.ones((R, d)))
    gens = [np.random.default_rng(s) for _ in settings for s in seeds]
    per_step, nfev = (3, 1) if method == "pazo" else (2, 0)
    steps = (budget - nfev) // per_step
    X = np.tile(x0.astype(float), (R, 1))
    M, V = np.zeros((R, d)), np.zeros((R, d))
    D = np.full((R, d), float(lam.max()) if D0 is None else check_positive(D0, "D0"))
    f0 = float(_fvals(lam, x0[None, :])[0])
    hit, alive = np.full(R, np.inf), np.ones(R, bool)
    curve = [] if record else None
    fx = _fvals(lam, X)
    with np.errstate(all="ignore"):
        for t in range(steps + 1):
            if record:
                curve.append(fx.copy())
            if target is not None:
                hit[(fx <= target) & np.isinf(hit) & alive] = nfev
            alive &= np.isfinite(fx) & (fx <= DIVERGENCE_FACTOR * f0)
            if t == steps or (target is not None and not np.any(alive & np.isinf(hit))):
                break
            if t % BLOCK == 0:  # a block of draws per run: the same stream as one draw per step
                block = np.stack([g.standard_normal((min(BLOCK, steps - t), d)) for g in gens], axis=1)
            U = block[t % BLOCK]
            Pu = U / np.sqrt(D) if method == "pazo" else U * P
            fp, fm = _fvals(lam, X + eps * Pu), _fvals(lam, X - eps * Pu)
            G = ((fp - fm) / (2.0 * eps))[:, None] * Pu
            if method == "pazo":
                Hd = ((fp + fm - 2.0 * fx) / (2.0 * eps * eps))[:, None] * (U * U - 1.0) * D
                D = (1.0 - beta) * D + beta * np.abs(Hd)
            if method == "zo_adam":
                M = b1 * M + (1 - b1) * G
                V = b2 * V + (1 - b2) * G * G
                step = (M / (1 - b1 ** (t + 1))) / (np.sqrt(V / (1 - b2 ** (t + 1))) + 1e-8)
            else:
                M = mom * M + G
                step = M
            if alive.all():
                X -= eta * step
            else:
                X = np.where(alive[:, None], X - eta * step, X)
            nfev += per_step
            fx = _fvals(lam, X)
    final = np.where(alive, fx, np.inf)
    out = {"hit": hit.reshape(S, -1), "final": final.reshape(S, -1), "diverged": (~alive).reshape(S, -1),
           "f0": f0, "per_step": per_step}
    if record:
        c = np.array(curve).T.reshape(S, len(seeds), -1)
        out["curve"] = c
        out["nfev"] = (1 if method == "pazo" else 0) + per_step * np.arange(c.shape[-1])
    return out


def _tuning(name: str, method: str, settings: list[dict], seeds, score: str, **kw) -> Tuning:
    """A :class:`~optbook.core.Tuning` (the record ``grid_search`` returns) from one lock-step run:
    ``score`` "hit" (evaluations to the target) or "log_final" (log10 f_B / f0); a setting whose
    run fails on any seed (diverged, or never reached the target) scores NaN and ranks last."""
    sim = simulate(method, settings, seeds, **kw)
    per_seed = sim["hit"] if score == "hit" else np.log10(sim["final"] / sim["f0"])
    per_seed = np.where(np.isfinite(per_seed), per_seed, np.nan)
    med = np.array([np.median(r) if np.all(np.isfinite(r)) else np.nan for r in per_seed])
    labels = [{k: (round(v, 6) if isinstance(v, float) else v) for k, v in st.items() if k != "scale"}
              for st in settings]
    return Tuning(name, labels, med, tuple(int(s) for s in seeds), False, per_seed)


# --------------------------------------------------------------------------- experiments


def order_sweep(seeds=(0, 1, 2), *, control: bool = False, alphas=ALPHAS, cap: int = SWEEP_CAP) -> dict:
    """Iterations of PSPSA to f <= 1e-6 f(x0) for each order alpha (every seed), at the step
    1/(tr B + 2 lambda_max B), B = P H P; inf when not there after ``cap`` iterations.

    ``control``: P = Lambda'^{-alpha} built from a shuffled copy Lambda' of the curvatures (a
    preconditioner of the same orders that does not match the loss), its step from its own B.
    """
    cap = check_int(cap, "cap", minimum=1)
    lam, x0 = card_problem()
    lam_p = np.random.default_rng(123).permutation(lam) if control else lam
    settings = []
    for a in alphas:
        p = lam_p ** (-a)
        b = lam * p * p
        settings.append({"alpha": a, "eta": 1.0 / (b.sum() + 2.0 * b.max()), "scale": p})
    sim = simulate("pspsa", settings, seeds, budget=2 * cap, target=REDUCTION * 0.5 * float(lam @ x0 ** 2))
    iters = {a: sim["hit"][i] / 2.0 for i, a in enumerate(alphas)}
    expected = {a: _iterations_from_spectrum(lam, lam * x0 ** 2, a, settings[i]["eta"], REDUCTION, 1e9)
                for i, a in enumerate(alphas)} if not control else {}
    return {"alphas": tuple(alphas), "iters": iters, "median": {a: float(np.median(v)) for a, v in iters.items()},
            "expected": expected, "seeds": tuple(seeds)}


def _grid(kind: str, d: int = D_DIM) -> list[dict]:
    """The tuning grids, 8 settings each, laid out in the effective step eta / (1 - momentum):
    HiZOO 2^k / (d + 2), k = 0..7; PaZO 2^k / (d + 2), k = 0, 2, 4, 6, times momentum 0.5, 0.9;
    ZO-SGD 2^k / (tr H + 2L), k = 0..7; ZO-Adam lr in ``ZO_ADAM_LRS`` times beta1 0.5, 0.9."""
    lam, _ = card_problem()
    if kind == "hizoo":
        return [{"step": 2.0 ** k / (d + 2), "momentum": 0.0} for k in range(8)]
    if kind == "pazo":
        return [{"step": 2.0 ** k / (d + 2), "momentum": m} for m in (0.5, 0.9) for k in (0, 2, 4, 6)]
    if kind == "pazo_control":  # the same grid with the momentum switched off
        return [{"step": 2.0 ** k / (d + 2), "momentum": 0.0} for m in (0.5, 0.9) for k in (0, 2, 4, 6)]
    if kind == "zo_sgd":
        return [{"step": 2.0 ** k / (lam.sum() + 2 * lam.max()), "momentum": 0.0} for k in range(8)]
    if kind == "zo_adam":
        return [{"eta": lr, "beta1": b} for b in (0.5, 0.9) for lr in ZO_ADAM_LRS]
    raise ValueError(f"kind must be hizoo, pazo, pazo_control, zo_sgd or zo_adam, got {kind!r}")


#: name shown to the reader -> (simulator method, grid)
HEADLINE_METHODS = {"PaZO": ("pazo", "pazo"), "HiZOO": ("pazo", "hizoo"), "ZO-Adam": ("zo_adam", "zo_adam"),
                    "MeZO (ZO-SGD)": ("zo_sgd", "zo_sgd")}


@lru_cache(maxsize=8)
def headline_tunings(tune_seeds=TUNING_SEEDS, control: bool = False) -> dict[str, Tuning]:
    """Each method's 8-setting grid scored by the median over ``tune_seeds`` of log10(f_B / f0)
    after B = 6000 evaluations (the control: PaZO's grid with momentum 0)."""
    out = {}
    for name, (method, grid) in HEADLINE_METHODS.items():
        if control and name == "PaZO":
            grid = "pazo_control"
        out[name] = _headline_tuning(name, method, grid, tuple(tune_seeds))
    return out


@lru_cache(maxsize=16)
def _headline_tuning(name: str, method: str, grid: str, tune_seeds: tuple) -> Tuning:
    """One method's tuning for the headline (cached: the control reuses the baselines' tunings)."""
    return _tuning(name, method, _grid(grid), tune_seeds, "log_final", budget=BUDGET)


@lru_cache(maxsize=8)
def headline_comparison(seeds=HEADLINE_SEEDS, tune_seeds=TUNING_SEEDS, control: bool = False) -> dict:
    """log10(f_B / f0) after B = 6000 evaluations on ``seeds`` for each method at its tuned setting,
    with the objective curves."""
    tunings = headline_tunings(tuple(tune_seeds), control)
    scores, curves = {}, {}
    for name, (method, _) in HEADLINE_METHODS.items():
        sim = simulate(method, [tunings[name].best], seeds, budget=BUDGET, record=True)
        scores[name] = np.log10(sim["final"][0] / sim["f0"])
        curves[name] = (sim["nfev"], sim["curve"][0] / sim["f0"])
    return {"tunings": tunings, "scores": scores, "median": {k: float(np.median(v)) for k, v in scores.items()},
            "curves": curves, "seeds": tuple(seeds)}


@lru_cache(maxsize=8)
def preconditioner_comparison(seeds=(0, 1, 2, 3, 4, 5), tune_seeds=(10, 11, 12), control: bool = False) -> dict:
    """Evaluations to f <= 1e-6 f(x0): HiZOO (the learned diagonal, no momentum) against ZO-SGD,
    each at the best of 5 steps {1, 2, 4, 8, 16} x its theory step (1/(d+2); 1/(tr H + 2L)),
    tuned on ``tune_seeds``. ``control``: beta = 0, D frozen at D0 = lambda_max (no curvature is
    learned: a scaled ZO-SGD that spends three evaluations per step)."""
    lam, x0 = card_problem()
    target = REDUCTION * 0.5 * float(lam @ x0 ** 2)
    beta = 0.0 if control else BETA
    mult = (1.0, 2.0, 4.0, 8.0, 16.0)
    grids = {"HiZOO": ("pazo", [{"step": m / (D_DIM + 2), "momentum": 0.0} for m in mult]),
             "MeZO (ZO-SGD)": ("zo_sgd", [{"step": m * pspsa_step_size(np.diag(lam), 0.0), "momentum": 0.0}
                                          for m in mult])}
    tunings, evals = {}, {}
    for name, (method, grid) in grids.items():
        kw = dict(budget=TARGET_CAP, target=target, beta=beta)
        tunings[name] = _tuning(name, method, grid, tune_seeds, "hit", **kw)
        evals[name] = simulate(method, [tunings[name].best], seeds, **kw)["hit"][0]
    return {"tunings": tunings, "evals": evals, "median": {k: float(np.median(v)) for k, v in evals.items()},
            "seeds": tuple(seeds)}


# --------------------------------------------------------------------------- claims
# The headline (the paper's own comparison, at laptop scale) is registered first.


@claim("16", "PaZO's momentum beats HiZOO, ZO-Adam and MeZO at equal function evaluations", kind="reproduction",
       paper="'Compared to other zeroth-order baselines, PaZO achieves better performance across models and "
             "tasks' (RoBERTa-large and OPT fine-tuning; the paper's table was not available to us, so no number "
             "is quoted). With its momentum switched off, practical PaZO is HiZOO, so the comparison with HiZOO "
             "isolates what PaZO adds",
       expect="on the card's quadratic (d = 20, kappa = 1e3, x0 = 1, eps = 1e-4, beta = 0.03, D0 = lambda_max), "
              "after B = 6000 function evaluations: median over seeds 1000-1039 (fast: 1000-1011) of "
              "log10(f_B / f0) for PaZO is at least 0.3 below (a factor 2 lower objective than) the best median of "
              "HiZOO, ZO-Adam and MeZO; every method tuned over 8 settings on held-out seeds 100-102 (PaZO: 4 "
              "effective steps x momentum 0.5, 0.9; ZO-Adam's learning-rate grid was widened tenfold after the "
              "first full run found its best on the edge). The factor 2 is our reading of 'better' (the paper gives "
              "no number). First registration: the same criterion on seeds 0-4, which measured a gap of -0.12 "
              "decades and was declared not to reproduce; the runs spread over ten decades, so 5 seeds cannot "
              "resolve 0.3 decades (a referee's check on seeds 20-59 gave a gap of about 2 decades), and the "
              "claim was re-registered, criterion and threshold unchanged, on 40 fresh seeds",
       control="PaZO with its momentum set to 0 on the same grid (it is then HiZOO): the paper's addition removed",
       name="headline")
def claim_headline(fast: bool = False, control: bool = False) -> Measured:
    seeds = HEADLINE_FAST_SEEDS if fast else HEADLINE_SEEDS
    cmp_ = headline_comparison(seeds, FAST_TUNING_SEEDS if fast else TUNING_SEEDS, control)
    med = cmp_["median"]
    baselines = {k: v for k, v in med.items() if k != "PaZO"}
    best = min(baselines, key=baselines.get)
    gap = baselines[best] - med["PaZO"]
    t = cmp_["tunings"]["PaZO"].best
    values = {"pazo": med["PaZO"], "hizoo": med["HiZOO"], "zo_adam": med["ZO-Adam"], "mezo": med["MeZO (ZO-SGD)"],
              "gap": gap, "pazo_min": float(np.min(cmp_["scores"]["PaZO"])),
              "pazo_max": float(np.max(cmp_["scores"]["PaZO"])), "momentum": t["momentum"], "step": t["step"],
              "wins": float(np.sum(cmp_["scores"]["PaZO"] < cmp_["scores"][best])),
              "paired": float(np.median(cmp_["scores"]["PaZO"] - cmp_["scores"]["HiZOO"])),
              "hizoo_wins": float(np.sum(cmp_["scores"]["PaZO"] < cmp_["scores"]["HiZOO"]))}
    return Measured(values, criteria=[Criterion("gap", ">=", 0.3)], seeds=seeds,
                    precondition=bool(np.isfinite(list(med.values())).all()),
                    summary=f"log10 f_B/f0: PaZO {med['PaZO']:.2f}, best baseline ({best}) {baselines[best]:.2f}, "
                            f"gap {gap:.2f} decades", details=cmp_)


@claim("16", "PSPSA's iterations are U-shaped in the order alpha, with the minimum at alpha = 1/2",
       kind="identity",
       expect="card's quadratic, step 1/(tr B + 2 lambda_max B) per alpha, alpha in {0, 1/4, 1/2, 3/4, 1}: the "
              "median over 5 seeds (3 in fast mode) of the iterations to f <= 1e-6 f(x0) falls strictly up to "
              "alpha = 1/2 and rises strictly after it, and iterations(1/2) <= 0.1 x iterations(0); a run not "
              "there after 40 000 iterations counts as infinite. An identity, not a reproduction: with this step "
              "the bound rho(alpha) is smallest at alpha = 1/2 by the inequality lambda_min(B) / (tr B + 2 "
              "lambda_max B) <= 1/(d + 2), and the exact expected iterations give the same U; the Monte-Carlo "
              "runs check that the estimator realises that expectation (the paper's theorem, not an experiment)",
       name="order_sweep")
def claim_order_sweep(fast: bool = False) -> Measured:
    seeds = FAST_SEEDS if fast else CLAIM_SEEDS
    sw = order_sweep(seeds)
    med = [sw["median"][a] for a in sw["alphas"]]
    k = int(np.argmin(med))
    with np.errstate(invalid="ignore"):
        u_shape = bool(np.all(np.diff(med[: k + 1]) < 0) and np.all(np.diff(med[k:]) > 0))
    values = {f"iters_{i}": sw["median"][a] for i, a in enumerate(sw["alphas"])}
    values.update({"argmin_alpha": sw["alphas"][k], "u_shape_at_half": float(u_shape and sw["alphas"][k] == 0.5),
                   "ratio": sw["median"][0.5] / sw["median"][0.0]})
    if sw["expected"]:  # the Monte-Carlo medians against the exact expected iterations
        values["mc_vs_exact"] = float(max(abs(sw["median"][a] / sw["expected"][a] - 1.0) for a in sw["alphas"]))
    return Measured(values, criteria=[Criterion("u_shape_at_half", ">=", 1.0), Criterion("ratio", "<=", 0.1),
                                      Criterion("mc_vs_exact", "<=", 0.25)],
                    seeds=seeds, summary=f"minimum at alpha = {sw['alphas'][k]:g}, iterations(1/2)/iterations(0) = "
                                         f"{values['ratio']:.3f}", details=sw)


@claim("16", "A learned diagonal preconditioner (HiZOO, PaZO without momentum) needs fewer evaluations than ZO-SGD",
       kind="reproduction",
       paper="ZO-SGD alone fails to achieve the ideal rate; the practical PaZO's diagonal Hessian estimate and "
             "moving average recover part of the preconditioned rate (no number is quoted)",
       expect="card's quadratic, evaluations to f <= 1e-6 f(x0), median over seeds 0-5 (fast: 0-2): HiZOO (D0 = "
              "lambda_max, beta = 0.03, three evaluations per step) <= 0.6 x ZO-SGD (the card's threshold), each at "
              "the best of 5 steps {1, 2, 4, 8, 16} x its theory step, tuned on held-out seeds 10-12 (fast: 10)",
       control="beta = 0: the diagonal frozen at D0 = lambda_max, so nothing is learned (a rescaled ZO-SGD that pays "
               "three evaluations per step)",
       name="preconditioner")
def claim_preconditioner(fast: bool = False, control: bool = False) -> Measured:
    seeds = (0, 1, 2) if fast else (0, 1, 2, 3, 4, 5)
    cmp_ = preconditioner_comparison(seeds, (10,) if fast else (10, 11, 12), control)
    med = cmp_["median"]
    ratio = med["HiZOO"] / med["MeZO (ZO-SGD)"]
    r = np.asarray(cmp_["evals"]["HiZOO"]) / np.asarray(cmp_["evals"]["MeZO (ZO-SGD)"])
    values = {"ratio": ratio, "hizoo": med["HiZOO"], "zo_sgd": med["MeZO (ZO-SGD)"],
              "ratio_min": float(np.min(r)), "ratio_max": float(np.max(r))}
    return Measured(values, criteria=[Criterion("ratio", "<=", 0.6)], seeds=seeds,
                    precondition=bool(np.isfinite(med["MeZO (ZO-SGD)"])),
                    summary=f"HiZOO / ZO-SGD evaluations to 1e-6 = {ratio:.2f}", details=cmp_)


# --------------------------------------------------------------------------- torch proxy


def badly_scaled_logistic(n: int = 400, d: int = 20, log10_scale: float = 2.0, seed: int = 0) -> dict:
    """Synthetic binary classification whose feature j has scale s_j = logspace(0, -log10_scale, d)
    and whose true weights are z_j / s_j (every feature matters equally): a loss whose Hessian
    diagonal spans 10^(2 log10_scale). Float64 tensors for train and test halves."""
    n = check_int(n, "n", minimum=2)
    d = check_int(d, "d", minimum=1)
    log10_scale = check_in_range(log10_scale, "log10_scale", 0.0, 6.0, closed=(True, True))
    g = torch.Generator().manual_seed(check_int(seed, "seed"))
    s = torch.logspace(0.0, -float(log10_scale), d, dtype=torch.float64)
    w = torch.randn(d, generator=g, dtype=torch.float64) / s
    X = torch.randn(2 * n, d, generator=g, dtype=torch.float64) * s
    y = (torch.rand(2 * n, generator=g, dtype=torch.float64) < torch.sigmoid(X @ w)).to(torch.float64)
    return {"Xtr": X[:n], "ytr": y[:n], "Xte": X[n:], "yte": y[n:], "scales": s}


def _train_zo(make_opt, data: dict, budget: int, every: int) -> Trace:
    model = torch.nn.Linear(data["Xtr"].shape[1], 1, dtype=torch.float64)
    torch.nn.init.zeros_(model.weight)
    torch.nn.init.zeros_(model.bias)
    opt = make_opt(model.parameters())
    bce = torch.nn.functional.binary_cross_entropy_with_logits

    def closure():
        return bce(model(data["Xtr"]).squeeze(1), data["ytr"])

    trace = Trace(type(opt).__name__)
    with torch.no_grad():
        while True:
            if opt.forward_passes // every >= len(trace):
                test = float(bce(model(data["Xte"]).squeeze(1), data["yte"]))
                trace.record(objective=float(closure()), test_loss=test, forward_passes=opt.forward_passes)
            if opt.forward_passes >= budget:
                break
            opt.step(closure)
    return trace


def finetune_proxy(budget: int = PROXY_BUDGET, seed: int = 0, every: int = 60) -> dict:
    """Forward-pass-only training of a logistic model on badly scaled features (the chapter's
    proxy for ZO fine-tuning): MeZO, ZO-Adam, HiZOO and PaZO (momentum 0.9), each at the best
    learning rate of a 4-point grid (chosen on the final training loss; PaZO's grid is in the
    effective step lr / (1 - momentum)), compared by test loss at equal forward passes. One data
    seed: an illustration, not a claim."""
    budget = check_int(budget, "budget", minimum=1)
    seed = check_int(seed, "seed")
    every = check_int(every, "every", minimum=1)
    return _finetune_proxy_cached(budget, seed, every)


@lru_cache(maxsize=8)  # keyed on the validated values, so finetune_proxy() and finetune_proxy(1500) share a run
def _finetune_proxy_cached(budget: int, seed: int, every: int) -> dict:
    with one_torch_thread():  # tiny models: one thread is fastest
        return _finetune_proxy(budget, seed, every)


def _finetune_proxy(budget: int, seed: int, every: int) -> dict:
    data = badly_scaled_logistic(seed=seed)
    grids = {"MeZO": (1.0, 3.0, 10.0, 30.0), "ZO-Adam": (0.03, 0.1, 0.3, 1.0), "HiZOO": (0.1, 0.3, 1.0, 3.0),
             "PaZO": (0.1, 0.3, 1.0, 3.0)}
    makers = {
        "MeZO": lambda lr: (lambda ps: MeZO(ps, lr=lr, eps=1e-3, seed=seed)),
        "ZO-Adam": lambda lr: (lambda ps: ZOAdam(ps, lr=lr, eps=1e-3, seed=seed)),
        "HiZOO": lambda lr: (lambda ps: HiZOO(ps, lr=lr, eps=1e-3, beta=BETA, D0=0.25, seed=seed)),
        # the effective step lr / (1 - momentum) on the same grid as HiZOO's
        "PaZO": lambda lr: (lambda ps: PaZO(ps, lr=lr * 0.1, eps=1e-3, beta=BETA, D0=0.25, momentum=0.9, seed=seed)),
    }
    best = {}
    for name, grid in grids.items():
        tried = {}
        for lr in grid:
            try:
                tried[lr] = _train_zo(makers[name](lr), data, budget, every)
            except ValueError:  # diverged to a non-finite loss at this learning rate
                continue
        lr = min(tried, key=lambda k: tried[k].objective[-1])
        tr = tried[lr]
        tr.method = f"{name} (lr = {lr:g})"
        best[name] = {"lr": lr, "trace": tr, "test_loss": float(tr["test_loss"][-1]),
                      "on_edge": lr in (grid[0], grid[-1])}
    return best


# --------------------------------------------------------------------------- figures


def _ellipse_H(log10_kappa: float, angle: float = np.pi / 6) -> np.ndarray:
    c, s = np.cos(angle), np.sin(angle)
    R = np.array([[c, -s], [s, c]])
    return R @ np.diag([1.0, 10.0 ** log10_kappa]) @ R.T


@lru_cache(maxsize=128)
def ellipse_run(alpha: float, log10_kappa: float, steps: int = 60, seed: int = 0) -> dict:
    """PSPSA of order alpha on a rotated 2-D ellipse: trajectory, perturbation cloud P u, the
    bound rho(alpha) and the measured per-step contraction (f_T / f_0)^(1/T), median of 11 seeds."""
    H = _ellipse_H(log10_kappa)
    fun = lambda x: 0.5 * float(x @ H @ x)  # noqa: E731
    x0 = np.array([-1.6, 1.2])
    path: list[np.ndarray] = []
    res = pspsa(fun, x0, H, alpha=alpha, maxiter=steps, rng=seed, callback=path.append)
    P = preconditioner(H, alpha)
    cloud = P @ np.random.default_rng(99).standard_normal((2, 300))
    cloud *= 0.35 / np.sqrt(np.mean(np.sum(cloud ** 2, axis=0)))
    finals = [pspsa(fun, x0, H, alpha=alpha, maxiter=steps, rng=s).fun for s in range(1, 12)]
    f0 = fun(x0)
    measured = float(np.median(finals) / f0) ** (1.0 / steps)
    return {"path": np.array(path), "cloud": cloud, "rho": contraction_bound(H, alpha), "measured": measured,
            "H": H, "final": res.fun / f0}


ELLIPSE_KAPPAS = (0.0, 1.0, 2.0, 3.0)


def ellipse_traces(alpha: float, log10_kappa: float) -> tuple[list, dict]:
    """Contours of the 2-D ellipse, the perturbation cloud P u drawn around the start, and the
    PSPSA path; plus the layout note with the bound and the measured contraction."""
    run = ellipse_run(float(alpha), float(log10_kappa))
    H = run["H"]
    xs = np.linspace(-2.2, 2.2, 61)
    X, Y = np.meshgrid(xs, xs)
    Z = 0.5 * (H[0, 0] * X ** 2 + 2 * H[0, 1] * X * Y + H[1, 1] * Y ** 2)
    x0 = run["path"][0]
    traces = [
        go.Contour(x=xs, y=xs, z=np.log10(Z + 1e-3), colorscale="Blues", reversescale=True, showscale=False,
                   ncontours=18, contours=dict(coloring="lines"), line=dict(width=1), name="log10 f", showlegend=False),
        go.Scatter(x=x0[0] + run["cloud"][0], y=x0[1] + run["cloud"][1], mode="markers", name="perturbations P u",
                   marker=dict(size=4, color=color_for(1), opacity=0.45)),
        go.Scatter(x=run["path"][:, 0], y=run["path"][:, 1], mode="lines+markers", name="PSPSA path (60 steps)",
                   line=dict(color=color_for(0), width=2), marker=dict(size=4)),
    ]
    note = dict(x=0.01, y=0.01, xref="paper", yref="paper", xanchor="left", yanchor="bottom", showarrow=False,
                align="left", bgcolor="rgba(255,255,255,0.85)",
                text=(f"alpha = {alpha:g}, kappa = 1e{log10_kappa:g}<br>bound rho(alpha) = {run['rho']:.4f}"
                      f"<br>measured (f_60/f_0)^(1/60) = {run['measured']:.4f}"))
    return traces, {"annotations": [note]}


def _square_axes(fig: go.Figure) -> go.Figure:
    fig.update_xaxes(range=[-2.2, 2.2])
    fig.update_yaxes(range=[-2.2, 2.2], scaleanchor="x", scaleratio=1)
    return fig


@lru_cache(maxsize=1)
def _precompute_explorer_grids() -> None:
    """Fill the caches for every slider position of both explorers (about a second, once), so a
    live slider move only rebuilds the figure."""
    for k in ELLIPSE_KAPPAS:
        for a in ALPHAS:
            ellipse_run(a, k)
    for d in CURVE_DIMS:
        for k in CURVE_KAPPAS:
            alpha_curve(d, k)


def ellipse_figure(alpha: float = 0.5, log10_kappa: float = 2.0) -> go.Figure:
    """Live twin of the order slider: one (alpha, kappa)."""
    log10_kappa = check_in_range(log10_kappa, "log10_kappa", 0.0, 6.0, closed=(True, True))
    _precompute_explorer_grids()
    traces, layout = ellipse_traces(alpha, log10_kappa)
    fig = go.Figure(traces)
    fig.update_layout(**layout)
    base_layout(fig, xaxis_title="x<sub>1</sub>", yaxis_title="x<sub>2</sub>", height=520,
                title="PSPSA of order alpha: perturbation cloud and path")
    return _square_axes(fig)


def ellipse_slider_figure(log10_kappa: float = 2.0) -> go.Figure:
    """Static twin: one frame per alpha in 0, 1/4, ..., 1 at a fixed condition number."""
    log10_kappa = check_in_range(log10_kappa, "log10_kappa", 0.0, 6.0, closed=(True, True))
    steps = []
    for a in ALPHAS:
        traces, layout = ellipse_traces(a, log10_kappa)
        steps.append(SliderStep(f"{a:g}", traces, layout))
    fig = slider_figure(steps, slider_label="order alpha of the preconditioner H^-alpha", active=0,
                        fixed_axes=False, xaxis_title="x<sub>1</sub>", yaxis_title="x<sub>2</sub>", height=560,
                        title=f"Perturbation cloud and path on an ellipse with kappa = 1e{log10_kappa:g}")
    return _square_axes(fig)


CURVE_ALPHAS = np.round(np.linspace(0.0, 1.0, 21), 4)
CURVE_DIMS = (5, 10, 20, 50, 100)
CURVE_KAPPAS = (1.0, 2.0, 3.0, 4.0)


@lru_cache(maxsize=64)
def alpha_curve(d: int, log10_kappa: float, reduction: float = 1e-6) -> dict:
    """Exact expected iterations of PSPSA to E f <= reduction f(x0), and the iterations the bound
    rho(alpha) guarantees, on a fine alpha grid (card's quadratic with dimension d)."""
    reduction = check_in_range(reduction, "reduction", 0.0, 1.0)
    lam, x0 = ill_conditioned_quadratic(check_int(d, "d", minimum=1), float(log10_kappa))
    y0 = lam * x0 * x0
    exact, bound = [], []
    for a in CURVE_ALPHAS:
        b = _b_eigs(lam, a)
        eta = 1.0 / (b.sum() + 2 * b.max())
        exact.append(_iterations_from_spectrum(lam, y0, a, eta, reduction, 1e12))
        bound.append(np.log(reduction) / np.log1p(-b.min() * eta))
    return {"alpha": CURVE_ALPHAS, "exact": np.array(exact), "bound": np.array(bound)}


def alpha_curve_traces(d: int, log10_kappa: float) -> list:
    c = alpha_curve(int(d), float(log10_kappa))
    return [
        go.Scatter(x=c["alpha"], y=c["exact"], mode="lines+markers", name="exact E-iterations (PSPSA)",
                   line=dict(color=color_for(0), width=2.5)),
        go.Scatter(x=c["alpha"], y=c["bound"], mode="lines", name="guaranteed by rho(alpha)",
                   line=dict(color=color_for(1), dash="dash")),
        go.Scatter(x=[0.5, 0.5], y=[1.0, 1e12], mode="lines", name="alpha = 1/2",
                   line=dict(color="#888", dash="dot"), hoverinfo="skip"),
    ]


def alpha_curve_figure(d: int = 20, log10_kappa: float = 3.0) -> go.Figure:
    """Live twin of the iterations-vs-alpha curve for one (d, kappa)."""
    d = check_int(d, "d", minimum=1)
    log10_kappa = check_in_range(log10_kappa, "log10_kappa", 0.0, 12.0, closed=(True, True))
    _precompute_explorer_grids()
    fig = go.Figure(alpha_curve_traces(d, log10_kappa))
    c = alpha_curve(int(d), float(log10_kappa))
    top = np.nanmax(c["bound"][np.isfinite(c["bound"])])
    base_layout(fig, logy=True, xaxis_title="order alpha of the preconditioner H^-alpha",
                yaxis_title="iterations to E f <= 1e-6 f(x0)", title=f"d = {d}, kappa = 1e{log10_kappa:g}")
    fig.update_yaxes(range=[np.log10(max(1.0, 0.5 * np.nanmin(c["exact"]))), np.log10(2 * top)])
    return fig


def alpha_curve_slider_figure(d: int = 20) -> go.Figure:
    """Static twin: one frame per log10 kappa in 1..4 at dimension d."""
    d = check_int(d, "d", minimum=1)
    steps = [SliderStep(f"{k:g}", alpha_curve_traces(d, k)) for k in CURVE_KAPPAS]
    fig = slider_figure(steps, slider_label="log10 kappa", active=2, logy=True, fixed_axes=False,
                        xaxis_title="order alpha of the preconditioner H^-alpha",
                        yaxis_title="iterations to E f <= 1e-6 f(x0)",
                        title=f"The U-shape in alpha (d = {d})")
    fig.update_yaxes(range=[1.5, 9.5])
    return fig


EXPLORER_ELLIPSE = Explorer("16", "ellipse", ellipse_figure, {
    "alpha": Slider("order alpha", [0.0, 0.25, 0.5, 0.75, 1.0], 0.0),
    "log10_kappa": Slider("log10 kappa", list(ELLIPSE_KAPPAS), 2.0),
}, description="Perturbation cloud and PSPSA path on a 2-D ellipse.")

EXPLORER_ALPHA_CURVE = Explorer("16", "alpha_curve", alpha_curve_figure, {
    "d": Slider("dimension d", list(CURVE_DIMS), 20),
    "log10_kappa": Slider("log10 kappa", list(CURVE_KAPPAS), 3.0),
}, description="Exact expected iterations of PSPSA versus the order alpha.")




# --------------------------------------------------------------------------- watch it run


@lru_cache(maxsize=2)
def oracle_curve(seeds=HEADLINE_SEEDS) -> tuple[np.ndarray, np.ndarray]:
    """(evaluations, f_t / f0 for each seed) of the oracle PSPSA of order 1/2 over the headline's budget."""
    lam, _ = card_problem()
    st = {"eta": 1.0 / (D_DIM + 2), "scale": lam ** -0.5}
    sim = simulate("pspsa", [st], seeds, budget=BUDGET, record=True)
    return sim["nfev"], sim["curve"][0] / sim["f0"]


def watch_figure(cmp_: dict) -> go.Figure:
    """Median over seeds of f(x_t)/f(x0) against function evaluations for each tuned method of the
    headline comparison (``headline_comparison``), the oracle PSPSA of order 1/2 beside them, and
    the curvature warm-up (3/beta steps) shaded."""
    curves = dict(cmp_["curves"])
    curves["PSPSA oracle (alpha = 1/2)"] = oracle_curve(cmp_["seeds"])
    traces = []
    for name, (nfev, c) in curves.items():
        tr = Trace(name)
        med = np.median(c, axis=0)
        for n, v in zip(nfev, med):
            tr.record(objective=max(float(v), 1e-300), fevals=max(float(n), 1.0))
        traces.append(tr.thinned(250, log=True))
    fig = go.Figure(convergence_traces(traces, "objective", "fevals"))
    warm = 3 * 3 / BETA
    fig.update_layout(**phase_layout([Phase(1, warm, "curvature warm-up"), Phase(warm, BUDGET, "after the warm-up")],
                                     logx=True))
    return base_layout(fig, logx=True, logy=True, xaxis_title="function evaluations (forward passes)",
                       yaxis_title="f(x_t) / f(x_0), median over seeds", height=480,
                       title=f"d = {D_DIM}, kappa = 1e{LOG10_KAPPA:g}: each method at its tuned setting")


def scores_figure(cmp_: dict) -> go.Figure:
    """Each seed's log10(f_B / f0) after B evaluations, per method (the headline's measurement)."""
    fig = go.Figure()
    for i, (name, v) in enumerate(cmp_["scores"].items()):
        fig.add_trace(go.Box(y=v, name=name, boxpoints="all", jitter=0.3, marker=dict(color=color_for(i)),
                             line=dict(color=color_for(i))))
    base_layout(fig, yaxis_title=f"log10 f(x_B) / f(x_0), B = {BUDGET}", height=420,
                title="Objective after equal evaluations, one point per seed")
    fig.update_layout(showlegend=False)
    return fig


def momentum_exercise(seeds=tuple(range(10)), mus=(0.0, 0.5, 0.9)) -> dict:
    """Evaluations to f <= 1e-6 f(x0) of practical PaZO at each momentum with the same effective step
    (HiZOO's tuned step of the preconditioner comparison, 8/(d + 2)), on ``seeds``: medians and
    the per-seed ratio to momentum 0."""
    lam, x0 = card_problem()
    target = REDUCTION * 0.5 * float(lam @ x0 ** 2)
    st = [{"step": 8.0 / (D_DIM + 2), "momentum": m} for m in mus]
    hit = simulate("pazo", st, seeds, budget=TARGET_CAP, target=target)["hit"]
    return {"mus": mus, "median": {m: float(np.median(h)) for m, h in zip(mus, hit)},
            "ratio_median": {m: float(np.median(h / hit[0])) for m, h in zip(mus, hit)},
            "wins": {m: int(np.sum(h < hit[0])) for m, h in zip(mus, hit)}, "n": len(seeds)}


# --------------------------------------------------------------------------- torch proxy figure


def proxy_figure(budget: int = PROXY_BUDGET) -> go.Figure:
    """Test and training loss of the four zeroth-order optimizers against forward passes."""
    budget = check_int(budget, "budget", minimum=1)
    res = finetune_proxy(budget)
    fig = make_subplots(rows=1, cols=2, subplot_titles=("training loss", "test loss"))
    for i, (name, r) in enumerate(res.items()):
        tr = r["trace"]
        for col, key in ((1, "objective"), (2, "test_loss")):
            fig.add_trace(go.Scatter(x=tr["forward_passes"], y=tr[key], mode="lines", name=tr.method,
                                     showlegend=col == 1, line=dict(color=color_for(i), width=2.2)), row=1, col=col)
    base_layout(fig, logy=True, height=440, title="Forward passes only: logistic model on badly scaled features")
    fig.update_xaxes(title_text="forward passes")
    fig.update_yaxes(title_text="cross-entropy (nats)", col=1)
    return fig


def proxy_momentum_check(seeds=(1, 2, 3), budget: int = PROXY_BUDGET) -> dict:
    """Final test loss of HiZOO and PaZO on other data seeds of the torch proxy, each at the learning
    rate it won on seed 0 (:func:`finetune_proxy`): does the momentum's edge survive new data?"""
    budget = check_int(budget, "budget", minimum=1)
    tuned = finetune_proxy(budget)
    out = {"HiZOO": [], "PaZO": [], "seeds": tuple(seeds)}
    with one_torch_thread():
        for s in seeds:
            data = badly_scaled_logistic(seed=int(s))
            for name, make in (("HiZOO", lambda ps: HiZOO(ps, lr=tuned["HiZOO"]["lr"], eps=1e-3, beta=BETA, D0=0.25,
                                                          seed=int(s))),
                               ("PaZO", lambda ps: PaZO(ps, lr=tuned["PaZO"]["lr"] * 0.1, eps=1e-3, beta=BETA,
                                                        D0=0.25, momentum=0.9, seed=int(s)))):
                out[name].append(float(_train_zo(make, data, budget, budget)["test_loss"][-1]))
    return out
