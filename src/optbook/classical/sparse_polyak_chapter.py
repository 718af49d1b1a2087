"""Chapter 02: the book's experiments, claims, figures and live explorers for Sparse Polyak.
The methods themselves are in :mod:`optbook.classical.sparse_polyak_methods`.

The setting follows the chapter: n = 200 Gaussian samples, s = 5 nonzero coefficients of size
+-1, noise sigma = 0.5, projection sparsity s~ = 2s, the paper's gradient threshold s_g = s~,
all runs started at 0, and the target error 2 sigma sqrt(s log d / n) ("statistical
precision"). The optimal-value estimate is the practical f_hat = 0 unless a run asks for another
(``F_HATS``): the least-squares loss is non-negative, and with d > n its unconstrained minimum is
exactly 0. The tuned constant step of the figures is the one :func:`tune_rule` picks at d = 500
on held-out seeds, the same as in the claim.
"""
from __future__ import annotations

from functools import lru_cache

import numpy as np
import plotly.graph_objects as go

from ..claims import Criterion, Measured, claim
from ..core import (
    Result,
    Trace,
    Tuning,
    check_choice,
    check_int,
    check_positive,
    grid_search,
    loglog_slope,
    thin_indices,
)
from ..viz import SliderStep, base_layout, color_for, phase_layout, slider_figure
from ..viz.style import PALETTE, dash_for, marker_for
from ..viz.convergence import Phase
from ..widgets import Explorer, Slider
from .sparse_polyak_methods import (
    RULE_NAMES,
    RULES,
    global_smoothness,
    iht,
    make_sparse_logistic,
    make_sparse_regression,
    marchenko_pastur_edge,
    oracle_fit,
    restricted_smoothness,
    sparse_polyak,
    statistical_precision,
)

#: Estimates of the optimal value a run may use: 0 (the practical choice), the oracle fit's
#: loss (needs the true support), f(theta*) and half of it.
F_HATS = ("zero", "oracle", "truth", "half_truth")
F_HAT_NAMES = {"zero": "0", "oracle": "oracle fit's loss", "truth": "f(theta*)", "half_truth": "f(theta*)/2"}


def regression_setup(d: int, n: int = 200, s: int = 5, sigma: float = 0.5, seed: int = 0) -> dict:
    """One synthetic regression problem (cached): ``problem``, ``target`` (statistical
    precision), ``f_hats`` (each choice of F_HATS), ``oracle_error``, ``mp_edge``."""
    return _setup(*_check_setup(d, n, s, sigma, seed))


@lru_cache(maxsize=48)
def _setup(d: int, n: int, s: int, sigma: float, seed: int) -> dict:
    prob = make_sparse_regression(n, d, s, sigma, np.random.default_rng(seed))
    theta_orc, f_orc = oracle_fit(prob)
    f_true = prob.fun(prob.theta_star)
    return {"problem": prob, "target": statistical_precision(sigma, s, n, d),
            "f_hats": {"zero": 0.0, "oracle": f_orc, "truth": f_true, "half_truth": 0.5 * f_true},
            "oracle_error": float(np.linalg.norm(theta_orc - prob.theta_star)),
            "mp_edge": marchenko_pastur_edge(n, d)}


@lru_cache(maxsize=48)
def _smoothness(d: int, n: int, s: int, sigma: float, seed: int) -> float:
    return global_smoothness(_setup(d, n, s, sigma, seed)["problem"].X)


def setup_smoothness(d: int, n: int = 200, s: int = 5, sigma: float = 0.5, seed: int = 0) -> float:
    """L = lambda_max(X^T X / n) of :func:`regression_setup`'s problem (cached)."""
    return _smoothness(*_check_setup(d, n, s, sigma, seed))


def _check_setup(d, n, s, sigma, seed) -> tuple[int, int, int, float, int]:
    d, n, s = check_int(d, "d", minimum=2), check_int(n, "n", minimum=1), check_int(s, "s", minimum=1)
    if s > d:
        raise ValueError(f"s must be <= d, got s={s}, d={d}")
    return d, n, s, check_positive(sigma, "sigma"), check_int(seed, "seed")


def run_rule(rule: str, d: int, *, n: int = 200, s: int = 5, sigma: float = 0.5, seed: int = 0,
             sparsity_factor: int = 2, grad_sparsity: int | None = None, f_hat: str = "zero",
             gamma: float = 1.0, eta: float | None = None, maxiter: int = 3000,
             stop_at_precision: bool = False) -> Result:
    """IHT with one step rule on :func:`regression_setup`'s problem (cached).

    ``rule`` is 'sparse_polyak', 'polyak' or 'constant'; ``f_hat`` names one of F_HATS (the
    Polyak rules use it); ``gamma`` multiplies the Polyak-type steps; the constant rule takes
    ``eta``, by default 1/L (the textbook step). s~ = sparsity_factor * s; ``grad_sparsity``
    (Sparse Polyak only) defaults to s~. With ``stop_at_precision`` the run stops at the target.
    """
    rule = check_choice(rule, "rule", RULES)
    d, n, s, sigma, seed = _check_setup(d, n, s, sigma, seed)
    s_tilde = check_int(sparsity_factor, "sparsity_factor", minimum=1) * s
    if s_tilde > d:
        raise ValueError(f"sparsity_factor * s must be <= d, got {s_tilde} > {d}")
    if grad_sparsity is not None:
        if rule != "sparse_polyak":
            raise ValueError(f"grad_sparsity applies to rule='sparse_polyak' only, not {rule!r}")
        grad_sparsity = check_int(grad_sparsity, "grad_sparsity", minimum=1)
        if grad_sparsity > d:
            raise ValueError(f"grad_sparsity must be <= d = {d}, got {grad_sparsity}")
    f_hat = check_choice(f_hat, "f_hat", F_HATS)
    gamma = check_positive(gamma, "gamma")
    if eta is not None:
        if rule != "constant":
            raise ValueError(f"eta is the constant step; rule={rule!r} takes gamma instead")
        eta = check_positive(eta, "eta")
    return _run(rule, d, n, s, sigma, seed, s_tilde, grad_sparsity, f_hat, gamma, eta,
                check_int(maxiter, "maxiter"), bool(stop_at_precision))


@lru_cache(maxsize=1024)
def _run(rule, d, n, s, sigma, seed, s_tilde, grad_sparsity, f_hat, gamma, eta, maxiter, stop) -> Result:
    setup = _setup(d, n, s, sigma, seed)
    prob = setup["problem"]
    common = dict(sparsity=s_tilde, theta_star=prob.theta_star, maxiter=maxiter,
                  tol=setup["target"] if stop else 0.0)
    if rule == "constant":
        step = 1.0 / _smoothness(d, n, s, sigma, seed) if eta is None else eta
        name = "constant 1/L" if eta is None else f"constant step {eta:g}"
        return iht(prob.fun, np.zeros(d), prob.jac, step="constant", eta=step, method_name=name, **common)
    return iht(prob.fun, np.zeros(d), prob.jac, step=rule, f_hat=setup["f_hats"][f_hat], gamma=gamma,
               grad_sparsity=grad_sparsity, **common)


def iterations_to_precision(rule: str, d: int, seed: int, *, n: int = 200, s: int = 5, sigma: float = 0.5,
                            maxiter: int = 3000, **setting) -> float:
    """Iterations :func:`run_rule` needs to reach statistical precision; NaN if it never does
    within ``maxiter`` (or diverges). ``setting``: the other arguments of :func:`run_rule`."""
    res = run_rule(rule, d, n=n, s=s, sigma=sigma, seed=seed, maxiter=maxiter, stop_at_precision=True, **setting)
    it = res.trace.first_below("error", regression_setup(d, n, s, sigma, seed)["target"])
    return np.nan if it is None else float(it)


def compare_rules(d: int, *, n: int = 200, s: int = 5, sigma: float = 0.5, seed: int = 0,
                  sparsity_factor: int = 2, grad_sparsity: int | None = None, f_hat: str = "zero",
                  maxiter: int = 3000, stop_at_precision: bool = False,
                  rules: tuple[str, ...] = RULES) -> dict:
    """Each rule of ``rules`` at its textbook setting (gamma = 1; the constant step 1/L) on one
    problem. Returns ``runs`` (Result per rule), ``iters`` (iterations to the target, None if
    never), ``target``, ``L``, ``mp_edge``, ``oracle_error``, ``problem``, ``s_tilde``, ``s_g``."""
    if isinstance(rules, str) or not rules:
        raise ValueError("rules must be a non-empty tuple of rule names")
    for r in rules:
        check_choice(r, "rules", RULES)
    d, n, s, sigma, seed = _check_setup(d, n, s, sigma, seed)
    setup = regression_setup(d, n, s, sigma, seed)
    kw = dict(n=n, s=s, sigma=sigma, seed=seed, sparsity_factor=sparsity_factor, f_hat=f_hat,
              maxiter=maxiter, stop_at_precision=stop_at_precision)
    runs = {r: run_rule(r, d, grad_sparsity=grad_sparsity if r == "sparse_polyak" else None, **kw)
            for r in rules}
    iters = {r: res.trace.first_below("error", setup["target"]) for r, res in runs.items()}
    s_tilde = sparsity_factor * s
    return {**setup, "runs": runs, "iters": iters, "L": setup_smoothness(d, n, s, sigma, seed),
            "s_tilde": s_tilde, "s_g": s_tilde if grad_sparsity is None else grad_sparsity}


# --------------------------------------------------------------------------- tuning

#: Every rule gets one knob, a 6-point doubling grid, the same held-out seeds and iteration cap:
#: the Polyak rules their relaxation factor gamma, the constant rule its step eta.
GRIDS = {"sparse_polyak": {"gamma": (0.25, 0.5, 1.0, 2.0, 4.0, 8.0)},
         "polyak": {"gamma": (0.25, 0.5, 1.0, 2.0, 4.0, 8.0)},
         "constant": {"eta": (0.05, 0.1, 0.2, 0.4, 0.8, 1.6)}}
#: Tuning happens once, at the smallest dimension of the claim, on seeds the claim never uses.
TUNING_D = 500
TUNING_SEEDS = (100, 101, 102)
TUNING_CAP = 500
TUNED_NAMES = {"sparse_polyak": "Sparse Polyak", "polyak": "Polyak", "constant": "constant step"}


def tune_rule(rule: str, *, d: int = TUNING_D, seeds: tuple[int, ...] = TUNING_SEEDS,
              full_gradient: bool = False) -> Tuning:
    """Grid search of ``rule``'s knob (GRIDS) at dimension ``d`` on ``seeds``: the score is the
    median number of iterations to statistical precision (NaN when a setting never gets there
    within TUNING_CAP iterations). ``full_gradient`` tunes Sparse Polyak with s_g = d (the
    control)."""
    rule = check_choice(rule, "rule", RULES)
    d = check_int(d, "d", minimum=2)
    seeds = tuple(check_int(k, "seeds", minimum=0) for k in seeds)
    extra = {"grad_sparsity": d} if full_gradient and rule == "sparse_polyak" else {}
    label = TUNED_NAMES[rule] + (" without threshold (s_g = d)" if extra else "")

    def score(seed: int, **setting) -> float:
        return iterations_to_precision(rule, d, seed, maxiter=TUNING_CAP, **setting, **extra)

    return grid_search(label, score, GRIDS[rule], seeds)


def tune_rules(*, full_gradient: bool = False, seeds: tuple[int, ...] = TUNING_SEEDS) -> dict[str, Tuning]:
    """:func:`tune_rule` for every rule (the tuning panel of the chapter)."""
    return {r: tune_rule(r, seeds=seeds, full_gradient=full_gradient) for r in RULES}


# --------------------------------------------------------------------------- claims

CLAIM_DIMS = (500, 2000, 8000)
CLAIM_SEEDS = (0, 1, 2, 3, 4)
CLAIM_CAP = 3000


def _counts(rule: str, setting: dict, seeds, full_gradient: bool) -> np.ndarray:
    """Iterations to precision, one row per dimension of CLAIM_DIMS, one column per seed (the
    cap when never reached: a lower bound)."""
    rows = []
    for d in CLAIM_DIMS:
        extra = {"grad_sparsity": d} if full_gradient and rule == "sparse_polyak" else {}
        rows.append([iterations_to_precision(rule, d, k, maxiter=CLAIM_CAP, **setting, **extra) for k in seeds])
    return np.nan_to_num(np.array(rows), nan=float(CLAIM_CAP))


@claim("02", "Sparse Polyak's iterations to statistical precision do not grow with d; tuned Polyak's do",
       kind="reproduction",
       paper="rate invariance: Sparse Polyak converges linearly to statistical precision at a rate "
             "1 - 1/(80 kappa) that involves only restricted quantities, not d, while Polyak's step "
             "needs ever more iterations as d/n grows (no iteration count of the paper's was available to us)",
       expect="n=200, s=5, f_hat=0, d in {500, 2000, 8000}, 5 seeds; each rule's knob tuned once at "
              "d=500 on held-out seeds 100-102 and kept: median over seeds of Sparse Polyak's "
              "iterations(d=8000)/iterations(d=500) <= 2, and of tuned Polyak / Sparse Polyak at d=8000 >= 4",
       control="the same experiment, tuning included, with the gradient threshold removed (s_g = d), "
               "which makes Sparse Polyak Polyak",
       name="rate_invariance")
def claim_rate_invariance(fast: bool = False, control: bool = False) -> Measured:
    seeds = (0, 1) if fast else CLAIM_SEEDS
    tunings = tune_rules(full_gradient=control)
    counts = {r: _counts(r, t.best, seeds, control) for r, t in tunings.items()}
    sp, po, co = counts["sparse_polyak"], counts["polyak"], counts["constant"]
    values = {}
    for r, c in counts.items():
        values.update({f"{r}_d{d}": float(np.median(row)) for d, row in zip(CLAIM_DIMS, c)})
    values.update(
        sparse_polyak_growth=float(np.median(sp[-1] / sp[0])),
        polyak_growth=float(np.median(po[-1] / po[0])),
        constant_growth=float(np.median(co[-1] / co[0])),
        polyak_ratio_d8000=float(np.median(po[-1] / sp[-1])),
        constant_ratio_d8000=float(np.median(co[-1] / sp[-1])),
        polyak_slope=loglog_slope(CLAIM_DIMS, np.median(po, axis=1)),
        gamma_sparse_polyak=tunings["sparse_polyak"].best["gamma"],
        gamma_polyak=tunings["polyak"].best["gamma"],
        eta_constant=tunings["constant"].best["eta"],
    )
    ratios = po[-1] / sp[-1]
    return Measured(
        values,
        criteria=[Criterion("sparse_polyak_growth", "<=", 2.0), Criterion("polyak_ratio_d8000", ">=", 4.0)],
        seeds=seeds,
        # The proxy must show the phenomenon: tuned Polyak slows down as d grows.
        precondition=values["polyak_growth"] >= 4.0,
        summary=(f"{'Sparse Polyak without threshold' if control else 'Sparse Polyak'} "
                 f"{values['sparse_polyak_d500']:.0f} -> {values['sparse_polyak_d8000']:.0f} "
                 f"iterations (d 500 -> 8000), tuned Polyak {values['polyak_d500']:.0f} -> "
                 f"{values['polyak_d8000']:.0f}; ratio at d=8000 {values['polyak_ratio_d8000']:.1f} "
                 f"({ratios.min():.1f}-{ratios.max():.1f})"),
        details={"tunings": list(tunings.values()), "counts": counts, "seeds": seeds},
    )


def _identity_problems():
    return [regression_setup(d, n=60, s=3, sigma=0.3, seed=k)["problem"] for d, k in ((150, 0), (300, 1), (40, 2))]


@claim("02", "With s_g = d Sparse Polyak is Polyak, iterate for iterate", kind="identity",
       expect="bitwise-equal iterates and steps over 40 iterations on 3 problems (d = 150, 300, 40; f_hat = 0)",
       name="full_threshold_is_polyak")
def claim_full_threshold_is_polyak(fast: bool = False) -> Measured:
    same = []
    for prob in _identity_problems():
        x0 = np.zeros(prob.dim)
        a = sparse_polyak(prob.fun, x0, prob.jac, sparsity=6, f_hat=0.0, grad_sparsity=prob.dim, maxiter=40)
        b = iht(prob.fun, x0, prob.jac, sparsity=6, step="polyak", f_hat=0.0, maxiter=40)
        same.append(np.array_equal(a.x, b.x) and np.array_equal(a.trace.step_size, b.trace.step_size, equal_nan=True))
    return Measured({"problems_identical": float(sum(same)), "problems": float(len(same))},
                    criteria=[Criterion("problems_identical", ">=", float(len(same)))],
                    summary=f"{sum(same)} of {len(same)} runs identical")


@claim("02", "Polyak-type iterates do not change when f and f_hat are rescaled together", kind="identity",
       expect="max relative difference of Sparse Polyak iterates over 30 iterations <= 1e-10 for c in {1e-3, 7.5, 1e4}",
       name="scale_invariance")
def claim_scale_invariance(fast: bool = False) -> Measured:
    prob = _identity_problems()[0]
    x0, f_hat = np.zeros(prob.dim), 0.5 * prob.fun(prob.theta_star)
    ref = sparse_polyak(prob.fun, x0, prob.jac, sparsity=6, f_hat=f_hat, maxiter=30).x
    worst = 0.0
    for c in (1e-3, 7.5, 1e4):
        x = sparse_polyak(lambda t, c=c: c * prob.fun(t), x0, lambda t, c=c: c * prob.jac(t), sparsity=6,
                          f_hat=c * f_hat, maxiter=30).x
        worst = max(worst, float(np.linalg.norm(x - ref) / np.linalg.norm(ref)))
    return Measured({"max_rel_diff": worst}, criteria=[Criterion("max_rel_diff", "<=", 1e-10)],
                    summary=f"largest relative difference {worst:.1e}")


@claim("02", "With d > n, f_hat = 0 is the unconstrained minimum, so f - f_hat = (1/2) Delta^T Sigma Delta exactly",
       kind="identity",
       expect="for 20 random 10-sparse theta on a problem with n=60, d=150: relative gap between f(theta) and "
              "(1/2)(theta - theta_ls)^T Sigma (theta - theta_ls) <= 1e-10, theta_ls the least-norm interpolant",
       name="zero_is_the_minimum")
def claim_zero_is_the_minimum(fast: bool = False) -> Measured:
    prob = _identity_problems()[0]
    theta_ls = np.linalg.lstsq(prob.X, prob.y, rcond=None)[0]  # X theta_ls = y: f(theta_ls) = 0
    rng = np.random.default_rng(0)
    worst = 0.0
    for _ in range(20):
        theta = np.zeros(prob.dim)
        theta[rng.choice(prob.dim, 10, replace=False)] = rng.standard_normal(10)
        u = prob.X @ (theta - theta_ls) / np.sqrt(prob.n)
        worst = max(worst, abs(prob.fun(theta) - 0.5 * u @ u) / prob.fun(theta))
    return Measured({"max_rel_diff": worst, "min_loss": prob.fun(theta_ls)},
                    criteria=[Criterion("max_rel_diff", "<=", 1e-10)],
                    summary=f"largest relative difference {worst:.1e}; f(theta_ls) = {prob.fun(theta_ls):.1e}")


# --------------------------------------------------------------------------- what the claim leaves out


def _check_seeds(seeds) -> tuple[int, ...]:
    seeds = tuple(check_int(k, "seeds", minimum=0) for k in seeds)
    if not seeds:
        raise ValueError("seeds must not be empty")
    return seeds


def floor_numbers(d: int = 2000, seeds: tuple[int, ...] = CLAIM_SEEDS, maxiter: int = 250) -> dict[str, float]:
    """How low each textbook rule (gamma = 1, f_hat = 0; the constant step 1/L) gets within
    ``maxiter`` iterations, against the rate sigma sqrt(s log d / n) itself (the claim's target is
    twice that). Returns ``rate``, and per rule ``floor_<rule>`` (median over seeds of the lowest
    error) and ``below_<rule>`` (how many seeds get below the rate)."""
    d, maxiter = check_int(d, "d", minimum=20), check_int(maxiter, "maxiter", minimum=1)
    seeds = _check_seeds(seeds)
    rate = 0.5 * regression_setup(d)["target"]  # the target is 2 sigma sqrt(s log d / n)
    out = {"rate": rate, "seeds": float(len(seeds))}
    for rule in RULES:
        lows = np.array([np.min(run_rule(rule, d, seed=k, maxiter=maxiter).trace["error"]) for k in seeds])
        out[f"floor_{rule}"] = float(np.median(lows))
        out[f"below_{rule}"] = float(np.sum(lows <= rate))
    return out


def transfer_numbers(s: int = 8, d: int = 8000, seeds: tuple[int, ...] = CLAIM_SEEDS,
                     maxiter: int = 500) -> dict[str, float]:
    """The claim's tuned settings (tuned at s = 5, d = 500) used unchanged on problems with
    another true sparsity ``s`` (s~ = 2s): how many seeds reach statistical precision within
    ``maxiter`` iterations, and the median count over those that do (NaN if none)."""
    s, d, maxiter = check_int(s, "s", minimum=1), check_int(d, "d", minimum=20), check_int(maxiter, "maxiter", minimum=1)
    if 2 * s > d:
        raise ValueError(f"2 s must be <= d, got s={s}, d={d}")
    seeds = _check_seeds(seeds)
    out = {}
    for rule in ("sparse_polyak", "constant"):
        setting = tune_rule(rule).best
        its = np.array([iterations_to_precision(rule, d, k, s=s, maxiter=maxiter, **setting) for k in seeds])
        reached = its[~np.isnan(its)]
        out[f"reached_{rule}"] = float(reached.size)
        out[f"iters_{rule}"] = float(np.median(reached)) if reached.size else np.nan
    return out


# --------------------------------------------------------------------------- logistic variant


@lru_cache(maxsize=64)
def compare_rules_logistic(d: int, *, n: int = 400, s: int = 5, norm: float = 3.0, seed: int = 0,
                           sparsity_factor: int = 1, maxiter: int = 1500, eta_max: float = 50.0,
                           factor: float = 2.0) -> dict:
    """The logistic variant: Sparse Polyak and Polyak on sparse logistic regression (stopping at
    the target). f_hat is the oracle logistic fit's loss; the target error is ``factor`` times
    the oracle's own error ||theta_orc - theta*||, floored at 0.1 * ||theta*||. eta_max caps the
    early steps, where the gap is large. The default s~ = s (sparsity_factor 1) is deliberate:
    with s~ = 2s the logistic loss of a 2s-sparse iterate reaches f_hat while its coefficients
    are still shrunk, the gap closes and the run stops far from theta*."""
    rng = np.random.default_rng(check_int(seed, "seed"))
    prob = make_sparse_logistic(n, d, s, norm, rng)
    theta_orc, f_hat = oracle_fit(prob)
    oracle_error = float(np.linalg.norm(theta_orc - prob.theta_star))
    target = max(check_positive(factor, "factor") * oracle_error, 0.1 * norm)
    s_tilde = check_int(sparsity_factor, "sparsity_factor", minimum=1) * s
    runs = {r: iht(prob.fun, np.zeros(d), prob.jac, step=r, f_hat=f_hat, sparsity=s_tilde,
                   eta_max=eta_max, theta_star=prob.theta_star, tol=target, maxiter=maxiter)
            for r in ("sparse_polyak", "polyak")}
    iters = {r: res.trace.first_below("error", target) for r, res in runs.items()}
    return {"runs": runs, "iters": iters, "target": target, "oracle_error": oracle_error, "f_hat": f_hat}


# --------------------------------------------------------------------------- figures

N_FIG = 200
#: The d/n grid of the dimension slider (n = 200, so d = 100 ... 8000; d = 500, 2000, 8000 are the claim's).
D_OVER_N = (0.5, 1.0, 2.5, 5.0, 10.0, 40.0)
#: The s_g grid of the threshold slider (d = 2000, s = 5, s~ = 10: s_g = s ... d).
SG_GRID = (5, 10, 15, 30, 60, 125, 250, 500, 1000, 2000)
SG_D = 2000
SG_ITERS = 120
MAX_POINTS = 300
#: Curves of the error panels: the three textbook rules and the tuned constant step.
CURVES = RULES + ("tuned",)
#: Reference curvatures, coloured apart from the rules' curves (dark grey: the de-emphasised
#: global scale; olive-orange: the restricted one).
GLOBAL_COLOR, RESTRICTED_COLOR = PALETTE[4], PALETTE[6]
#: Captions (figure titles; the book shows them under the figure). The stacked two-panel figures
#: set their own top margin: a title needs TITLE_ROOM more above the legend.
D_TITLE = "Polyak's curvature climbs with d/n, Sparse Polyak's stays flat"
SG_TITLE = "Fewer entries s_g in the step: faster, but a higher error floor"
TITLE_ROOM = 45


@lru_cache(maxsize=1)
def _tuned_eta() -> float:
    """The constant step the tuning picks (d = 500, held-out seeds)."""
    return float(tune_rule("constant").best["eta"])


def curve_name(curve: str) -> str:
    """Legend name of a curve (the text names them the same way)."""
    if curve not in CURVES:
        raise ValueError(f"curve must be one of {CURVES}, got {curve!r}")
    if curve == "tuned":
        return f"constant step, tuned (eta = {_tuned_eta():g})"
    return "constant step 1/L" if curve == "constant" else RULE_NAMES[curve]


def _style(curve: str) -> dict:
    """Colour and dash of a curve, the same in every figure (never colour alone)."""
    i = CURVES.index(curve)
    return dict(color=color_for(i), dash=dash_for(i))


def runs_at(d: int, *, seed: int = 0, maxiter: int = 3000, stop_at_precision: bool = True) -> dict[str, Result]:
    """One run per curve of CURVES at dimension d (cached in the experiments module)."""
    kw = dict(seed=seed, maxiter=maxiter, stop_at_precision=stop_at_precision)
    runs = {r: run_rule(r, d, **kw) for r in RULES}
    runs["tuned"] = run_rule("constant", d, eta=_tuned_eta(), **kw)
    return runs


def _line(trace: Trace, y: str, name: str, **line) -> go.Scatter:
    keep = thin_indices(len(trace), MAX_POINTS)
    return go.Scatter(x=trace.iteration[keep], y=trace[y][keep], mode="lines", name=name,
                      line={"width": 2.4, **line})


def _error_traces(runs: dict[str, Result], target: float, t_max: float) -> list[go.Scatter]:
    """||theta_t - theta*|| against t for each curve, and the statistical-precision line."""
    out = [_line(res.trace, "error", curve_name(c), **_style(c)) for c, res in runs.items()]
    out.append(go.Scatter(x=[0, t_max], y=[target, target], mode="lines", name="statistical precision",
                          line=dict(color="#555", dash="dot", width=1.5)))
    return out


# --------------------------------------------------------------------------- watch it run


def watch_figures(d: int = 2000, maxiter: int = 250) -> tuple[go.Figure, go.Figure]:
    """The 'Watch it run' figures at one d: errors with phases, and the step sizes eta_t."""
    d, maxiter = check_int(d, "d", minimum=20), check_int(maxiter, "maxiter", minimum=1)
    runs = runs_at(d, maxiter=maxiter, stop_at_precision=False)
    setup = regression_setup(d)
    target = setup["target"]
    first = {c: r.trace.first_below("error", target) for c, r in runs.items()}
    t_fast = max(first["sparse_polyak"] or 0, first["tuned"] or 0)
    t_slow = min(maxiter, max(first["polyak"] or maxiter, first["constant"] or maxiter))
    fig = go.Figure(_error_traces(runs, target, maxiter))
    # Short labels: phase A is a few iterations wide; the text names what each phase is.
    fig.update_layout(**phase_layout([Phase(0, t_fast, "A"), Phase(t_fast, t_slow, "B"),
                                      Phase(t_slow, maxiter, "C")]))
    base_layout(fig, xaxis_title="iteration t", yaxis_title="error ||theta_t - theta*||", logy=True, height=470,
                title=f"d = {d}: Sparse Polyak and the tuned step reach precision first")
    fig.update_xaxes(range=[0, maxiter])
    steps = go.Figure([_line(runs[c].trace, "step_size", curve_name(c), **_style(c))
                       for c in ("sparse_polyak", "polyak")])
    L = setup_smoothness(d)
    L_s = restricted_smoothness(setup["problem"].X, 20, rng=0)
    # Reference steps: each its own dash; the tuned step as its error curve is drawn.
    for y, name, style in ((1 / L, "1/L (global smoothness)", dict(color=GLOBAL_COLOR, dash="dot")),
                           (1 / L_s, "1/L_s (restricted, 50 random supports of size 2 s̃)",
                            dict(color=RESTRICTED_COLOR, dash="longdash")),
                           (_tuned_eta(), "tuned constant step", _style("tuned"))):
        steps.add_trace(go.Scatter(x=[0, maxiter], y=[y, y], mode="lines", name=name,
                                   line=dict(width=1.5, **style)))
    base_layout(steps, xaxis_title="iteration t", yaxis_title="step size eta_t", logy=True, height=440,
                title="Step sizes: Sparse Polyak's near 1/L_s, Polyak's near 1/L")
    steps.update_xaxes(range=[0, maxiter])
    return fig, steps


def watch_numbers(d: int = 2000, maxiter: int = 250) -> dict[str, float]:
    """The figures the text quotes about :func:`watch_figures`: iterations to the target,
    final errors, the oracle's error, and the median steps of the two Polyak rules."""
    d, maxiter = check_int(d, "d", minimum=20), check_int(maxiter, "maxiter", minimum=1)
    runs = runs_at(d, maxiter=maxiter, stop_at_precision=False)
    setup = regression_setup(d)
    out = {f"iters_{c}": r.trace.first_below("error", setup["target"]) for c, r in runs.items()}
    out.update({f"final_{c}": float(r.trace["error"][-1]) for c, r in runs.items()})
    steps = {c: float(np.nanmedian(runs[c].trace.step_size)) for c in ("sparse_polyak", "polyak")}
    out.update(step_sparse_polyak=steps["sparse_polyak"], step_polyak=steps["polyak"],
               step_ratio=steps["sparse_polyak"] / steps["polyak"], target=setup["target"],
               oracle_error=setup["oracle_error"], L=setup_smoothness(d),
               L_s=restricted_smoothness(setup["problem"].X, 20, rng=0))
    return out


# --------------------------------------------------------------------------- explore: dimension


@lru_cache(maxsize=None)
def d_sweep(seed: int = 0) -> dict:
    """Iterations to precision and curvatures over the D_OVER_N grid (n = 200)."""
    seed = check_int(seed, "seed")
    rows = {k: [] for k in ("d", "L", "restricted_L", "polyak_curvature", "sparse_curvature")}
    iters = {c: [] for c in CURVES}
    for ratio in D_OVER_N:
        d = int(round(ratio * N_FIG))
        runs = runs_at(d, seed=seed)
        rows["d"].append(d)
        rows["L"].append(setup_smoothness(d, seed=seed))
        rows["restricted_L"].append(restricted_smoothness(regression_setup(d, seed=seed)["problem"].X, 20,
                                                          rng=seed))
        rows["polyak_curvature"].append(float(np.nanmedian(runs["polyak"].trace["curvature"])))
        rows["sparse_curvature"].append(float(np.nanmedian(runs["sparse_polyak"].trace["curvature"])))
        target = regression_setup(d, seed=seed)["target"]
        for c, r in runs.items():
            iters[c].append(r.trace.first_below("error", target))
    return {**{k: np.array(v, dtype=float) for k, v in rows.items()}, "iters": iters}


@lru_cache(maxsize=1)
def _t_max() -> int:
    return max(len(r.trace) for r in runs_at(int(D_OVER_N[-1] * N_FIG)).values())


@lru_cache(maxsize=None)
def _d_step(ratio: float) -> SliderStep:
    sweep = d_sweep()
    d = int(round(ratio * N_FIG))
    traces = _error_traces(runs_at(d), regression_setup(d)["target"], _t_max())
    x = np.array(D_OVER_N)
    # The rules' curvatures keep their error curves' colour, dash and marker.
    sp, pk = CURVES.index("sparse_polyak"), CURVES.index("polyak")
    right = [("global L = lambda_max(X^T X/n)", sweep["L"], GLOBAL_COLOR, "solid", "markers", "circle"),
             ("Marchenko-Pastur edge (1+sqrt(d/n))^2", (1 + np.sqrt(x)) ** 2, GLOBAL_COLOR, "dash", "lines", None),
             ("Polyak's implicit curvature", sweep["polyak_curvature"], color_for(pk), dash_for(pk),
              "lines+markers", marker_for(pk)),
             ("Sparse Polyak's implicit curvature", sweep["sparse_curvature"], color_for(sp), dash_for(sp),
              "lines+markers", marker_for(sp)),
             ("restricted L_s (random supports)", sweep["restricted_L"], RESTRICTED_COLOR, "dot", "lines+markers",
              "triangle-down")]
    for name, y, color, dash, mode, symbol in right:
        traces.append(go.Scatter(x=x, y=y, mode=mode, name=name, xaxis="x2", yaxis="y2",
                                 line=dict(color=color, dash=dash, width=2), marker=dict(size=7, symbol=symbol)))
    traces.append(go.Scatter(x=[ratio, ratio], y=[0.3, 200], mode="lines", name="current d/n", xaxis="x2",
                             yaxis="y2", line=dict(color="#d62728", width=1, dash="dot"), showlegend=False))
    return SliderStep(label=f"{ratio:g}", traces=traces)


#: The two-panel figures stack their panels (top: a run, bottom: the sweep) so that both stay
#: readable at phone width, where side-by-side panels crowded their axis titles into each other.
D_FIG_HEIGHT, SG_FIG_HEIGHT = 820, 760


def _titled(fig: go.Figure, title: str, top: int) -> go.Figure:
    """The book's title on a figure whose top margin (``top``, legend included) is set by hand."""
    fig.update_layout(title=dict(text=title, x=0.01, xanchor="left", y=0.98, yanchor="top"),
                      margin=dict(t=top + TITLE_ROOM))
    return fig


def _style_d_figure(fig: go.Figure, title: str = D_TITLE) -> go.Figure:
    fig.update_layout(
        xaxis=dict(domain=[0, 1], title_text="iteration t", range=[0, _t_max()]),
        yaxis=dict(domain=[0.6, 1], type="log", title_text="error ||theta_t - theta*||", range=[-1.0, 0.45]),
        xaxis2=dict(domain=[0, 1], type="log", title_text="d / n", anchor="y2", showline=True,
                    linecolor="#888", mirror=True),
        yaxis2=dict(domain=[0, 0.4], type="log", title_text="curvature", anchor="x2", range=[-0.5, 2.1],
                    showline=True, linecolor="#888", mirror=True),
        legend=dict(font=dict(size=11)),
    )
    return _titled(fig, title, 150)


@lru_cache(maxsize=None)
def _explorer_layout(which: str) -> dict:
    """The live explorers' layout, styled once (restyling per move would cost ~50 ms)."""
    if which == "d":
        return _style_d_figure(base_layout(go.Figure(), height=D_FIG_HEIGHT)).layout.to_plotly_json()
    return _style_sg_figure(base_layout(go.Figure(), height=SG_FIG_HEIGHT)).layout.to_plotly_json()


def d_slider_figure() -> go.Figure:
    """Static twin of :data:`EXPLORER_DIMENSION`: one frame per d/n on the D_OVER_N grid."""
    steps = [_d_step(r) for r in D_OVER_N]
    fig = slider_figure(steps, slider_label="d / n (n = 200)", active=D_OVER_N.index(10.0), fixed_axes=False,
                        height=D_FIG_HEIGHT)
    return _style_d_figure(fig)


def d_explorer_figure(d_over_n: float = 10.0) -> go.Figure:
    """Live twin: the same traces for one d/n."""
    if d_over_n not in D_OVER_N:
        raise ValueError(f"d_over_n must be one of {D_OVER_N}, got {d_over_n!r}")
    fig = go.Figure(data=_d_step(d_over_n).traces, layout=_explorer_layout("d"))
    return fig.update_layout(title_text=f"Errors at d/n = {d_over_n:g}, and the curvature each rule sees as d/n grows")


# --------------------------------------------------------------------------- explore: threshold


def threshold_run(s_g: int) -> Result:
    """Sparse Polyak with gradient threshold s_g at d = SG_D (seed 0), SG_ITERS iterations."""
    if s_g not in SG_GRID or not isinstance(s_g, (int, np.integer)) or isinstance(s_g, bool):
        raise ValueError(f"s_g must be one of {SG_GRID}, got {s_g!r}")
    return run_rule("sparse_polyak", SG_D, grad_sparsity=s_g, maxiter=SG_ITERS)


@lru_cache(maxsize=1)
def threshold_sweep() -> dict[str, list]:
    """Iterations to precision and lowest error reached for every s_g of SG_GRID."""
    target = regression_setup(SG_D)["target"]
    runs = [threshold_run(k) for k in SG_GRID]
    return {"iters": [r.trace.first_below("error", target) for r in runs],
            "floor": [float(np.min(r.trace["error"])) for r in runs]}


@lru_cache(maxsize=None)
def _sg_step(s_g: int) -> SliderStep:
    run, sweep = threshold_run(s_g), threshold_sweep()
    traces = [
        # The two ends of the slider as references (de-emphasised, each its own dash), the current run on top.
        _line(threshold_run(SG_D).trace, "error", "Polyak (s_g = d)", color=PALETTE[4], dash="dash", width=1.8),
        _line(threshold_run(10).trace, "error", "Sparse Polyak (s_g = s̃ = 10)", color=RESTRICTED_COLOR,
              dash="dashdot", width=1.8),
        _line(run.trace, "error", "current s_g", color=color_for(0), dash="solid"),
        go.Scatter(x=[0, SG_ITERS], y=[regression_setup(SG_D)["target"]] * 2, mode="lines",
                   name="statistical precision", line=dict(color="#555", dash="dot", width=1.5)),
        go.Scatter(x=list(SG_GRID), y=[np.nan if i is None else i for i in sweep["iters"]], mode="lines+markers",
                   name="iterations to precision", xaxis="x2", yaxis="y2",
                   line=dict(color=color_for(0), dash="solid")),
        go.Scatter(x=list(SG_GRID), y=sweep["floor"], mode="lines+markers", name="lowest error reached (right axis)",
                   xaxis="x2", yaxis="y3", line=dict(color=color_for(4), dash="dot"), marker=dict(symbol="square")),
        go.Scatter(x=[s_g, s_g], y=[1, 1000], mode="lines", xaxis="x2", yaxis="y2", showlegend=False,
                   name="current s_g", line=dict(color="#d62728", width=1, dash="dot")),
    ]
    return SliderStep(label=str(s_g), traces=traces)


def _style_sg_figure(fig: go.Figure, title: str = SG_TITLE) -> go.Figure:
    fig.update_layout(
        xaxis=dict(domain=[0, 1], title_text="iteration t", range=[0, SG_ITERS]),
        yaxis=dict(domain=[0.6, 1], type="log", title_text="error ||theta_t - theta*||", range=[-0.75, 0.45]),
        xaxis2=dict(domain=[0, 1], type="log", title_text="gradient threshold s_g", anchor="y2",
                    showline=True, linecolor="#888", mirror=True),
        yaxis2=dict(domain=[0, 0.4], type="log", title_text="iterations to precision", anchor="x2",
                    range=[0, 2.0]),
        yaxis3=dict(title_text="lowest error", overlaying="y2", side="right", anchor="x2", range=[0.15, 0.4],
                    type="linear", dtick=0.05, tickformat=".2f", showgrid=False),
        legend=dict(font=dict(size=11)), margin=dict(r=60),
    )
    return _titled(fig, title, 110)


def threshold_slider_figure() -> go.Figure:
    """Static twin of :data:`EXPLORER_THRESHOLD`: one frame per s_g on SG_GRID."""
    steps = [_sg_step(k) for k in SG_GRID]
    fig = slider_figure(steps, slider_label="gradient threshold s_g (d = 2000)", active=SG_GRID.index(10),
                        fixed_axes=False, height=SG_FIG_HEIGHT)
    return _style_sg_figure(fig)


def threshold_explorer_figure(s_g: int = 10) -> go.Figure:
    """Live twin of the threshold slider."""
    if s_g not in SG_GRID:
        raise ValueError(f"s_g must be one of {SG_GRID}, got {s_g!r}")
    return go.Figure(data=_sg_step(s_g).traces, layout=_explorer_layout("sg"))


EXPLORER_DIMENSION = Explorer(
    "02", "dimension", d_explorer_figure,
    {"d_over_n": Slider("d / n (n = 200)", list(D_OVER_N), 10.0)},
    description="iterations to statistical precision and the curvature each rule sees, as d grows")
EXPLORER_THRESHOLD = Explorer(
    "02", "threshold", threshold_explorer_figure,
    {"s_g": Slider("gradient threshold s_g", list(SG_GRID), 10, fmt="{:d}")},
    description="from Sparse Polyak (small s_g) to Polyak (s_g = d)")
