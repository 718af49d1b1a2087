"""Chapter 12: the book's experiments, claims, figures and live explorers for iDB-PD. The methods
and the test problems are in :mod:`optbook.geometry.semi_infinite`.

The experiments run on the card's robust multitask regression (10 features, 3 tasks of 200
samples, a priority task robust to input shifts of size 0.3), drawn with a data seed: its convex
version (squared loss) and a nonconvex one (Welsch loss, scale 2). Every method gets the same
budget of gradient evaluations (3000 outer iterations with one ascent step on y and one on w:
12 000 evaluations) and is tuned over a 3 x 3 grid on held-out data seeds; the claims are
measured on data seeds 0-4. Feasibility is always measured with the exact worst case G(x).
"""
from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
import plotly.graph_objects as go

from ..claims import Criterion, Measured, claim
from ..core import Result, Tuning, check_choice, check_int, check_positive, grid_search
from ..core import project_simplex as _proj_simplex
from ..viz import SliderStep, base_layout, color_for, slider_figure, tuning_figure
from ..viz.style import dash_for
from ..widgets import Explorer, Slider, Toggle
from .semi_infinite import (
    TOY_CENTERS,
    _direction,
    barrier_direction,
    exchange_method,
    idb_pd,
    penalty_gda,
    reference_solution,
    robust_multitask_problem,
    toy_problem,
    toy_values_on_grid,
)

# --------------------------------------------------------------------------- the experiments

LOSS_KW = {"convex": dict(loss="squared"), "nonconvex": dict(loss="welsch", loss_scale=2.0)}
BUDGET = 3000              # outer iterations of every first-order method
FAST_BUDGET = 1000         # fast mode (a smoke test of the claims and their controls): a third of it
INNER = dict(inner_y=1, inner_w=1, sigma=0.5, beta=1.0)   # one ascent step on y and on w: 4 gradients/iteration
# The claims run iDB-PD with rho = psi (option B, Gong and Liu's choice). A first registration used the card's
# default rho = [psi]_+; before any full run, its fast mode stopped on nonconvex seed 1 inside the feasible set at
# a point that is not KKT (G = -0.010, |lambda G| = 4.3e-3), the interior fixed point of option A.
RHO = "value"
CLAIM_SEEDS = (0, 1, 2, 3, 4)
FAST_SEEDS = (0, 1)
# Held out: the claims run on data seeds 0-4. A first choice, (100, 101, 102), was narrowed before any
# claim was run: seed 102's solution sits on the kink of G, where iDB-PD stalls at every setting
# (KINK_SEED, shown in the chapter's limits), and two seeds halve the notebook's tuning time.
TUNING_SEEDS = (100, 101)
FAST_TUNING_SEEDS = (100,)
KINK_SEED = 102
# Grid order matters only for ties (the first wins): the card's defaults come first. A tuning score
# below ACC_FLOOR counts as solved (round-off), so settings that all solve the problem tie.
IDB_GRID = {"eta": (0.05, 0.02, 0.1), "alpha": (5.0, 1.0, 20.0)}
PENALTY_GRID = {"mu": (100.0, 300.0, 1000.0), "eta": (1e-3, 3e-4, 1e-4)}
# The cost comparison has its own grids: a first pair (iDB-PD on IDB_GRID; the exchange method on 50/15/5 ascent
# steps x 4/2/0 random starts) put both bests on an edge (eta = 0.1; 5 steps, 0 starts), so both were widened
# toward it. n_starts = 0 (only the previous cuts as starts) is the smallest possible value.
COUNT_IDB_GRID = {"eta": (0.1, 0.2, 0.4), "alpha": (5.0, 2.0, 10.0)}
EXCHANGE_GRID = {"ascent_steps": (5, 2, 1), "n_starts": (0, 1, 2)}
ACC_FLOOR = 1e-10
EPS = 1e-6                 # the accuracy to which gradient evaluations are counted (exchange claim)
# The cost comparison counts each method's evaluations until its OWN stopping rule fires at tolerance EPS (iDB-PD:
# its estimates ||d_k||, [psi(x_k, w_k)]_+, |lam_k psi| <= EPS; exchange: its search finds max psi <= EPS), and
# only if the stopped point is EPS-accurate by the exact G and the reference. A first registration counted
# iDB-PD at an oracle time instead (the first evaluation after which the exact accuracy stays <= EPS, which the
# method cannot know) against the exchange method's real stop; the referee's review replaced it (ratio 0.25 -> ~0.5).
N_REF_STARTS = 4


@lru_cache(maxsize=32)
def instance(seed: int, kind: str = "convex") -> tuple:
    """(problem, reference) for data seed ``seed``: the robust multitask problem (``kind``
    'convex': squared loss, 'nonconvex': Welsch loss) and the best SLSQP solution with the exact
    worst case from N_REF_STARTS starts (the unconstrained solution, 0 and random points)."""
    kind = check_choice(kind, "kind", tuple(LOSS_KW))
    P = robust_multitask_problem(rng=check_int(seed, "seed"), **LOSS_KW[kind])
    starts = np.vstack([P.data["x_free"], np.zeros(P.dim_x),
                        np.random.default_rng(7).standard_normal((N_REF_STARTS - 2, P.dim_x))])
    return P, reference_solution(P, starts)


def lambda_star(seed: int, kind: str = "convex") -> float:
    """The KKT multiplier at the reference point: the least-squares lam with
    grad Phi + lam grad G = 0 (G active there)."""
    P, ref = instance(seed, kind)
    x = ref.x
    g, a = P.grad_x_phi(x, P.best_y(x)), P.grad_x_psi(x, P.worst_w(x))
    return float(max(-(a @ g) / (a @ a), 0.0))


def run(method: str, seed: int, kind: str = "convex", maxiter: int = BUDGET, record_every: int = BUDGET,
        **params) -> Result:
    """One run from x0 = 0 on data seed ``seed``: 'idb' (iDB-PD, params eta, alpha), 'penalty'
    (params mu, eta), 'gda' (the constraint ignored, param eta) with the common inner loops and
    ``maxiter`` iterations, logged every ``record_every``; or 'exchange' (params ascent_steps,
    n_starts). Cached (however the arguments are spelled)."""
    method = check_choice(method, "method", ("idb", "penalty", "gda", "exchange"))
    return _run(method, seed, kind, maxiter, record_every, tuple(sorted(params.items())))


@lru_cache(maxsize=1024)
def _run(method: str, seed: int, kind: str, maxiter: int, record_every: int, params: tuple) -> Result:
    params = dict(params)
    P, _ = instance(seed, kind)
    x0 = np.zeros(P.dim_x)
    common = dict(maxiter=maxiter, record_every=record_every, **INNER)
    if method == "idb":
        return idb_pd(P, x0, rho=RHO, **common, **params)
    if method == "penalty":
        return penalty_gda(P, x0, **common, **params)
    if method == "gda":
        return penalty_gda(P, x0, mu=0.0, **common, **params)
    return exchange_method(P, x0, rng=seed, **params)


def accuracy(res: Result, seed: int, kind: str = "convex") -> np.ndarray:
    """max([G]_+, |Phi - Phi_ref| / Phi_ref) along a run's trace: the eps for which the iterate
    is eps-feasible and eps-optimal (inf after a divergence)."""
    _, ref = instance(seed, kind)
    tr = res.trace
    acc = np.maximum(tr["infeasibility"], np.abs(tr.objective - ref.fun) / abs(ref.fun))
    return acc if res.success else np.append(acc, np.inf)


def final_accuracy(res: Result, seed: int, kind: str = "convex") -> float:
    """The accuracy at the end of the budget (inf if the run diverged)."""
    return float(accuracy(res, seed, kind)[-1])


def evals_to(res: Result, seed: int, kind: str = "convex", eps: float = EPS) -> float:
    """Gradient evaluations after which the run stays eps-feasible and eps-optimal (inf if it
    is not at the end)."""
    eps = check_positive(eps, "eps")
    acc = accuracy(res, seed, kind)
    bad = np.flatnonzero(~(acc <= eps))
    i = int(bad[-1]) + 1 if bad.size else 0
    return float(res.trace["grad_evals"][i]) if i < len(res.trace) else math.inf


@lru_cache(maxsize=8)
def tunings(seeds: tuple[int, ...] = TUNING_SEEDS, kind: str = "convex", budget: int = BUDGET) -> tuple[Tuning, Tuning]:
    """iDB-PD's (eta, alpha) and the penalty's (mu, eta), 9 settings each on the held-out data
    seeds, scored by the final accuracy after the common budget, floored at ACC_FLOOR (median
    over seeds). The claims use the convex instance's tuning for both instances."""
    budget = check_int(budget, "budget", minimum=1)
    def score(method, seed, **p):
        return max(final_accuracy(run(method, seed, kind, budget, budget, **p), seed, kind), ACC_FLOOR)

    ti = grid_search("iDB-PD", lambda seed, eta, alpha: score("idb", seed, eta=eta, alpha=alpha), IDB_GRID, seeds)
    tp = grid_search("quadratic penalty", lambda seed, mu, eta: score("penalty", seed, mu=mu, eta=eta), PENALTY_GRID,
                     seeds)
    return ti, tp


def evals_to_stop(res: Result, seed: int, kind: str = "convex", eps: float = EPS) -> float:
    """Gradient evaluations a run spent until its own stopping rule fired, if it did and the
    stopped point is eps-feasible and eps-optimal by the exact G and the reference; inf
    otherwise (no stop within the budget, or a stop at a point that is not eps-accurate)."""
    eps = check_positive(eps, "eps")
    ok = res.success and res.message.startswith("converged") and final_accuracy(res, seed, kind) <= eps
    return float(res.grad_evals) if ok else math.inf


def count_run(seed: int, record_every: int = BUDGET, budget: int = BUDGET, **params) -> Result:
    """iDB-PD on the convex instance with the stopping rule tol = EPS (at most ``budget``
    iterations), logged every ``record_every`` iterations and at the stop."""
    budget, record_every = check_int(budget, "budget", minimum=1), check_int(record_every, "record_every", minimum=1)
    return run("idb", seed, "convex", budget, record_every, tol=EPS, **params)


@lru_cache(maxsize=4)
def count_tunings(seeds: tuple[int, ...] = TUNING_SEEDS, budget: int = BUDGET) -> tuple[Tuning, Tuning]:
    """For the cost comparison (convex instance): iDB-PD's grid and the exchange method's
    (ascent_steps, n_starts), 9 settings each, scored by the gradient evaluations until each
    method's own stopping rule fires at an EPS-accurate point (:func:`evals_to_stop`)."""
    budget = check_int(budget, "budget", minimum=1)
    ti = grid_search("iDB-PD", lambda seed, eta, alpha: evals_to_stop(count_run(seed, budget=budget, eta=eta,
                                                                                 alpha=alpha), seed),
                     COUNT_IDB_GRID, seeds)
    te = grid_search("exchange (SLSQP)", lambda seed, ascent_steps, n_starts: evals_to_stop(
        run("exchange", seed, "convex", ascent_steps=ascent_steps, n_starts=n_starts), seed),   # its tol = EPS
        EXCHANGE_GRID, seeds)
    return ti, te


def _violation_values(kind: str, fast: bool, control: bool) -> tuple[dict, dict]:
    """iDB-PD (tuned; with alpha = 0 under ``control``) and the tuned penalty on the claim seeds
    (fast mode: fewer seeds, one tuning seed, FAST_BUDGET iterations)."""
    seeds, budget = (FAST_SEEDS, FAST_BUDGET) if fast else (CLAIM_SEEDS, BUDGET)
    ti, tp = tunings(FAST_TUNING_SEEDS if fast else TUNING_SEEDS, "convex", budget)
    idb_params = dict(ti.best, alpha=0.0) if control else ti.best
    runs = {"idb": [run("idb", s, kind, budget, budget, **idb_params) for s in seeds],
            "penalty": [run("penalty", s, kind, budget, budget, **tp.best) for s in seeds]}
    m = {k: [instance(s, kind)[0].measures(r.x, r.lam) if r.success else None for s, r in zip(seeds, rs)]
         for k, rs in runs.items()}
    viol = {k: np.array([np.inf if v is None else v["infeasibility"] for v in m[k]]) for k in m}
    acc = {k: np.array([final_accuracy(r, s, kind) for s, r in zip(seeds, rs)]) for k, rs in runs.items()}
    kkt = np.array([np.inf if v is None else v["kkt"] for v in m["idb"]])
    values = {
        "idb_violation": float(np.median(viol["idb"])), "idb_violation_max": float(viol["idb"].max()),
        "idb_accuracy": float(np.median(acc["idb"])), "idb_accuracy_max": float(acc["idb"].max()),
        "idb_kkt": float(np.median(kkt)), "idb_kkt_max": float(kkt.max()),
        "penalty_violation": float(np.median(viol["penalty"])), "penalty_violation_min": float(viol["penalty"].min()),
        "penalty_violation_max": float(viol["penalty"].max()), "penalty_accuracy": float(np.median(acc["penalty"])),
        "penalty_mu": tp.best["mu"], "penalty_eta": tp.best["eta"], "idb_eta": ti.best["eta"],
        "idb_alpha": idb_params["alpha"], "grad_evals": float(runs["idb"][0].grad_evals),
        "penalty_grad_evals": float(runs["penalty"][0].grad_evals),
    }
    return values, dict(runs=runs, viol=viol, acc=acc, kkt=kkt, tunings=(ti, tp), seeds=tuple(seeds))


@claim("12", "iDB-PD ends feasible to round-off; a tuned fixed penalty leaves a violation of order lambda*/mu",
       kind="reproduction",
       paper="iDB-PD drives the infeasibility [G(x_k)]_+ to zero (O(eps^-6 theta) iterations to eps-infeasibility "
             "under a Lojasiewicz condition) and is effective on robust multitask learning with a priority task, "
             "against penalty-type baselines (no number given)",
       expect="convex instance (card's robust multitask regression), data seeds 0-4, 12 000 gradient evaluations "
              "for each method (3000 iterations, one ascent step on y and on w): median exact [G]_+ of iDB-PD (rho = psi) "
              "<= 1e-8 and median accuracy max([G]_+, |Phi - Phi_ref|/Phi_ref) <= 1e-6; the quadratic penalty, "
              "tuned like iDB-PD (3 x 3 grid of (mu, eta) against iDB-PD's (eta, alpha), on held-out seeds "
              "100-101, by the final accuracy), keeps a median [G]_+ >= 1e-4, within a factor 2 of lambda*/mu "
              "(lambda* the KKT multiplier at the SLSQP reference). 1e-8 sits four orders below the smallest "
              "lambda*/mu the penalty grid allows (about 2e-3). Disclosed: the tuning seeds were first 100-102; "
              "seed 102 was dropped before any claim was run because its solution sits on the kink of G, where "
              "iDB-PD stalls infeasible at every setting (shown in the chapter's limits); and iDB-PD runs "
              "rho = psi (option B) instead of the card's default rho = [psi]_+, switched after option A's fast "
              "mode stopped at a non-KKT interior point (see nonconvex_violation)",
       control="iDB-PD with alpha = 0: the barrier no longer asks the worst constraint to decrease, it only "
               "forbids its increase (the feasibility-restoring ingredient removed)",
       name="multitask_violation")
def claim_multitask_violation(fast: bool = False, control: bool = False) -> Measured:
    seeds = FAST_SEEDS if fast else CLAIM_SEEDS
    values, details = _violation_values("convex", fast, control)
    ratio = np.array([v * values["penalty_mu"] / lambda_star(s) for s, v in zip(seeds, details["viol"]["penalty"])])
    values["penalty_violation_over_lambda_mu"] = float(np.median(ratio))
    values["lambda_star"] = float(np.median([lambda_star(s) for s in seeds]))
    return Measured(values, criteria=[Criterion("idb_violation", "<=", 1e-8), Criterion("idb_accuracy", "<=", 1e-6),
                                      Criterion("penalty_violation", ">=", 1e-4),
                                      Criterion("penalty_violation_over_lambda_mu", ">=", 0.5),
                                      Criterion("penalty_violation_over_lambda_mu", "<=", 2.0)],
                    seeds=seeds, details=details,
                    summary=f"[G]+: iDB-PD {values['idb_violation']:.1e}, tuned penalty (mu = "
                            f"{values['penalty_mu']:g}) {values['penalty_violation']:.1e} "
                            f"({values['penalty_violation_over_lambda_mu']:.2f} x lambda*/mu)")


@claim("12", "On a nonconvex objective too, iDB-PD ends feasible to round-off at a KKT point",
       kind="reproduction",
       paper="the guarantees hold for objectives nonconvex in x (O(eps^-3) iterations to eps-stationarity, "
             "O(eps^-6 theta) to eps-infeasibility; no number given)",
       expect="nonconvex instance (the same data with the Welsch loss of scale 2 for the tasks; the Hessian of "
              "phi(., y*) is indefinite at the start on every seed), data seeds 0-4, 12 000 gradient evaluations: "
              "median exact [G]_+ of iDB-PD <= 1e-8 and median KKT error max(stationarity, [G]_+, |lambda G|) "
              "<= 1e-6 (iDB-PD and the penalty at the settings tuned on the convex instance); the penalty's "
              "violation and accuracy reported beside. iDB-PD runs rho = psi in every claim: a first registration "
              "with rho = [psi]_+ stopped, in fast mode before any full run, inside the feasible set at a non-KKT "
              "point on seed 1 (G = -0.010, |lambda G| = 4.3e-3)",
       control="iDB-PD with alpha = 0 (the feasibility-restoring ingredient removed)",
       name="nonconvex_violation")
def claim_nonconvex_violation(fast: bool = False, control: bool = False) -> Measured:
    seeds = FAST_SEEDS if fast else CLAIM_SEEDS
    values, details = _violation_values("nonconvex", fast, control)
    curv = [instance(s, "nonconvex")[0].data["hess_min_eig"](np.zeros(10)) for s in seeds]
    values["hessian_min_eig_at_start"] = float(max(curv))
    return Measured(values, criteria=[Criterion("idb_violation", "<=", 1e-8), Criterion("idb_kkt", "<=", 1e-6)],
                    seeds=seeds, details=details, precondition=bool(max(curv) < 0),
                    summary=f"[G]+: iDB-PD {values['idb_violation']:.1e} (KKT error {values['idb_kkt']:.1e}); "
                            f"penalty at its convex tuning, not converged (accuracy "
                            f"{values['penalty_accuracy']:.2f}): [G]+ {values['penalty_violation']:.1e}")


@claim("12", "Stopping by its own rule at a 1e-6 accurate point, iDB-PD spends fewer gradient evaluations "
             "than the exchange method", kind="reproduction",
       paper="iDB-PD outperforms adaptive discretization (the exchange method) on robust multitask learning "
             "(summary of the paper; no number verified); the card expected similar quality at more gradient "
             "evaluations for the exchange method",
       expect="convex instance, data seeds 0-4: median over seeds of evals(iDB-PD) / evals(exchange) <= 1, where "
              "evals counts every gradient of phi or psi (in x, y or w; the exchange's objective gradient uses the "
              "exact y*(x), counted as two) until the method's own stopping rule fires at tolerance eps = 1e-6 "
              "(iDB-PD: its estimates ||d_k||, [psi(x_k, w_k)]_+ and |lambda_k psi(x_k, w_k)| all <= eps; exchange: "
              "its search for the most violated w finds max psi <= eps), counted as infinite unless the stopped "
              "point is eps-feasible (exact G) and eps-optimal (reference); each method tuned over 9 settings on "
              "held-out seeds 100-101 by that count (iDB-PD: eta, alpha; exchange: ascent steps and random starts of "
              "its search). Both first grids had their best on an edge (iDB-PD: eta = 0.1 of 0.02-0.1; exchange: "
              "5 of 50/15/5 steps, 0 of 4/2/0 starts) and were widened toward it. Disclosed: the first registration "
              "counted iDB-PD at an oracle time (the first evaluation after which its exact accuracy stays <= eps, "
              "which the method cannot know) against the exchange method's real stop, and measured a ratio of 0.25; "
              "a referee's review replaced it by this symmetric count, threshold unchanged",
       control="iDB-PD with alpha = 0 (the feasibility-restoring ingredient removed)",
       name="exchange_evals")
def claim_exchange_evals(fast: bool = False, control: bool = False) -> Measured:
    seeds = FAST_SEEDS if fast else CLAIM_SEEDS
    # fast mode: both tuning seeds (one alone picks an unstable setting) at a third of the budget
    budget = FAST_BUDGET if fast else BUDGET
    ti, te = count_tunings(TUNING_SEEDS, budget)
    p = dict(ti.best, alpha=0.0) if control else ti.best
    # logged at every iteration (they stop within a few hundred) to read off the oracle time beside the real stop
    idb_runs = [count_run(s, record_every=1, budget=budget, **p) for s in seeds]
    idb = np.array([evals_to_stop(r, s) for s, r in zip(seeds, idb_runs)])
    oracle = np.array([evals_to(r, s) for s, r in zip(seeds, idb_runs)])
    exch_runs = [run("exchange", s, "convex", **te.best) for s in seeds]
    exch = np.array([evals_to_stop(r, s) for s, r in zip(seeds, exch_runs)])
    ratio = idb / exch
    rounds = np.array([len(r.cuts) for r in exch_runs])
    values = {"ratio": float(np.median(ratio)), "ratio_min": float(ratio.min()), "ratio_max": float(ratio.max()),
              "idb_evals": float(np.median(idb)), "idb_evals_oracle": float(np.median(oracle)),
              "exchange_evals": float(np.median(exch)),
              "exchange_cuts": float(np.median(rounds)), "idb_eta": ti.best["eta"], "idb_alpha": p["alpha"],
              "exchange_ascent_steps": te.best["ascent_steps"], "exchange_n_starts": te.best["n_starts"],
              "exchange_evals_default": float(np.median([evals_to_stop(run("exchange", s, "convex"), s)
                                                         for s in seeds]))}
    # the discretization needs more than its first cut, and the tuned exchange stops at an accurate point
    precondition = bool(np.min(rounds) >= 2 and np.all(np.isfinite(exch)))
    return Measured(values, criteria=[Criterion("ratio", "<=", 1.0)], seeds=seeds, precondition=precondition,
                    details=dict(tunings=(ti, te), idb=idb, idb_oracle=oracle, exchange=exch),
                    summary=f"median evals to its own stop at 1e-6: iDB-PD {values['idb_evals']:.0f}, exchange "
                            f"{values['exchange_evals']:.0f} (ratio {values['ratio']:.2f})")


# --------------------------------------------------------------------------- identities

@claim("12", "The dynamic-barrier direction in closed form solves the direction QP", kind="identity",
       expect="on 200 random (g, a, c) in dimensions 2-6, the closed form d = -g - lambda a equals SLSQP's solution "
              "of min ||d + g||^2 s.t. a^T d + c <= 0 to 1e-6, and satisfies the KKT conditions to 1e-10",
       name="direction_closed_form")
def claim_direction_closed_form(fast: bool = False) -> Measured:
    from scipy.optimize import minimize

    rng = np.random.default_rng(0)
    err, kkt = 0.0, 0.0
    for _ in range(40 if fast else 200):
        n = int(rng.integers(2, 7))
        g, a, c = rng.standard_normal(n), rng.standard_normal(n), float(rng.standard_normal())
        d, lam = barrier_direction(g, a, c, delta=0.0)
        ref = minimize(lambda z: np.sum((z + g) ** 2), -g, jac=lambda z: 2 * (z + g), method="SLSQP",
                       constraints=[dict(type="ineq", fun=lambda z: -(a @ z + c), jac=lambda z: -a)],
                       options=dict(ftol=1e-15, maxiter=200))
        err = max(err, float(np.max(np.abs(d - ref.x))))
        kkt = max(kkt, max(a @ d + c, 0.0), abs(lam * (a @ d + c)), float(np.max(np.abs(d + g + lam * a))))
    return Measured({"max_difference": err, "max_kkt_residual": kkt},
                    criteria=[Criterion("max_difference", "<=", 1e-6), Criterion("max_kkt_residual", "<=", 1e-10)],
                    summary=f"largest difference to SLSQP {err:.1e}, KKT residual {kkt:.1e}")


@claim("12", "On the ball, iDB-PD's multiplier converges to the KKT multiplier", kind="identity",
       expect="min ||x - x_t||^2 s.t. u^T x <= 1 for all ||u|| <= 1, x_t = (3, 4): iDB-PD (eta = 0.05, alpha = 5, "
              "1500 iterations) ends at x_t/||x_t|| to 1e-6 with lambda = 2(||x_t|| - 1) = 8 to relative 1e-4",
       name="ball_kkt")
def claim_ball_kkt(fast: bool = False) -> Measured:
    from .semi_infinite import ball_toy

    xt = np.array([3.0, 4.0])
    res = idb_pd(ball_toy(xt), xt.copy(), eta=0.05, alpha=5.0, maxiter=1500, record_every=1500)
    dx = float(np.max(np.abs(res.x - xt / 5)))
    dl = abs(res.lam - 8.0) / 8.0
    return Measured({"x_error": dx, "lambda_rel_error": dl, "lambda": res.lam},
                    criteria=[Criterion("x_error", "<=", 1e-6), Criterion("lambda_rel_error", "<=", 1e-4)],
                    summary=f"lambda = {res.lam:.6f} (KKT: 8), |x - x*| = {dx:.1e}")


# --------------------------------------------------------------------------- figures

MEASURES = (("infeasibility", "infeasibility [G(x_k)]<sub>+</sub>"),
            ("grad_norm", "stationarity ||g + lambda a||"),
            ("complementarity", "complementarity |lambda G(x_k)|"))


def measures_figure(res: Result, *, title: str | None = None) -> go.Figure:
    """The paper's three measures of one iDB-PD run against k on log-log axes, with the
    theory's k^(-1/3) reference slope."""
    tr = res.trace
    k = tr.iteration[1:]
    keep = np.unique(np.round(np.geomspace(1, k.size, 200)).astype(int) - 1)
    data = []
    for i, (key, label) in enumerate(MEASURES):
        v = np.maximum(tr[key][1:][keep], 1e-16)
        data.append(go.Scatter(x=k[keep], y=v, mode="lines", name=label, line=dict(color=color_for(i), width=2.2)))
    start = max(float(tr["grad_norm"][1]), 1e-12)
    data.append(go.Scatter(x=k[keep], y=start * k[keep] ** (-1 / 3), mode="lines", name="theory's rate k<sup>-1/3</sup>",
                           line=dict(color="#777", dash="dash")))
    fig = go.Figure(data)
    return base_layout(fig, title=title, xaxis_title="iteration k", yaxis_title="measure (log scale)",
                       logx=True, logy=True)


def comparison_runs(seed: int = 0, kind: str = "convex") -> dict[str, Result]:
    """The methods of the claims on one data seed, at their tuned settings, logged every 5
    iterations: iDB-PD, the tuned penalty, GDA (the constraint ignored) and the exchange method."""
    seed, kind = check_int(seed, "seed"), check_choice(kind, "kind", tuple(LOSS_KW))
    ti, tp = tunings()
    _, te = count_tunings()
    return {"iDB-PD": run("idb", seed, kind, BUDGET, 5, **ti.best),
            f"penalty (mu = {tp.best['mu']:g}, tuned)": run("penalty", seed, kind, BUDGET, 5, **tp.best),
            "GDA (constraint ignored)": run("gda", seed, kind, BUDGET, 5, eta=ti.best["eta"]),
            "exchange (SLSQP, tuned)": run("exchange", seed, kind, **te.best)}


def comparison_figure(runs: dict[str, Result], seed: int = 0, kind: str = "convex") -> go.Figure:
    """Relative objective gap |Phi - Phi_ref|/Phi_ref and infeasibility [G]_+ of every method
    against cumulative gradient evaluations (log-log), side by side."""
    from plotly.subplots import make_subplots

    _, ref = instance(seed, kind)
    # The panel titles live in the axis titles, so the legend above the plot never covers them.
    fig = make_subplots(rows=1, cols=2, horizontal_spacing=0.14)
    for i, (name, res) in enumerate(runs.items()):
        tr = res.trace
        keep = np.unique(np.round(np.geomspace(1, len(tr), 250)).astype(int) - 1)
        ev = np.maximum(tr["grad_evals"][keep], 1)
        gap = np.abs(tr.objective[keep] - ref.fun) / abs(ref.fun)
        inf_ = tr["infeasibility"][keep]
        for col, v in ((1, gap), (2, inf_)):
            fig.add_trace(go.Scatter(x=ev, y=np.where(np.isfinite(v), np.maximum(v, 1e-16), np.nan),
                                     mode="lines+markers" if len(keep) < 30 else "lines", name=name,
                                     legendgroup=name, showlegend=col == 1,
                                     line=dict(color=color_for(i), width=2.2, dash=dash_for(i))), row=1, col=col)
    base_layout(fig, height=480, logx=True, logy=True)
    fig.update_xaxes(title_text="gradient evaluations (cumulative)")
    fig.update_yaxes(title_text="objective gap |Φ − Φ<sub>ref</sub>| / Φ<sub>ref</sub>", row=1, col=1)
    fig.update_yaxes(title_text="infeasibility [G(x)]<sub>+</sub> (exact)", row=1, col=2)
    fig.update_layout(margin=dict(t=110))
    return fig


def violation_figure(details: dict, title: str | None = None) -> go.Figure:
    """Per seed: the exact violation [G]_+ at the end of the budget of iDB-PD and of the tuned
    penalty (log scale; an exactly feasible point is drawn at 1e-16)."""
    seeds = [str(s) for s in details["seeds"]]
    fig = go.Figure()
    for i, (key, name) in enumerate((("idb", "iDB-PD"), ("penalty", "quadratic penalty (tuned)"))):
        v = np.maximum(details["viol"][key], 1e-16)
        fig.add_trace(go.Bar(x=seeds, y=v, name=name, marker_color=color_for(i)))
    base_layout(fig, title=title, xaxis_title="data seed", yaxis_title="[G(x)]<sub>+</sub> after the budget",
                logy=True, height=420)
    return fig


def tuning_panel() -> go.Figure:
    """The tuning figure of iDB-PD and the penalty (final accuracy on the convex instance, log scale)."""
    return tuning_figure(list(tunings()), score_label="final accuracy max([G]+, rel. gap)", logy=True)


# --- the 2-D toy: grids shared by the static and live figures

TOY_BOX = (-1.5, 2.6)


@lru_cache(maxsize=2)
def toy_grids(mu: float = 0.5, n: int = 41) -> dict:
    """Phi and G of the 2-D toy on an n x n grid (G from a 401-point grid in w). Cached."""
    n = check_int(n, "n", minimum=2)
    P = toy_problem(mu)
    xs = np.linspace(*TOY_BOX, n)
    X = np.array(np.meshgrid(xs, xs)).reshape(2, -1).T
    losses = 0.5 * ((X[:, None, :] - TOY_CENTERS[None]) ** 2).sum(-1)
    Y = np.array([_proj_simplex(1 / 3 + l_ / mu) for l_ in losses])
    Phi = (Y * losses).sum(1) - 0.5 * mu * ((Y - 1 / 3) ** 2).sum(1)
    G = toy_values_on_grid(X, np.linspace(0, 1, 401)).max(1)
    return {"problem": P, "xs": np.round(xs, 4), "Phi": np.round(Phi.reshape(n, n), 3),
            "G": np.round(G.reshape(n, n), 3)}


@lru_cache(maxsize=1)
def toy_boundary(n_angles: int = 240) -> np.ndarray:
    """The boundary of the toy's feasible set {G <= 0}, found by bisection along rays from 0
    (G is convex with G(0) < 0, so each ray crosses the boundary once). Cached."""
    n_angles = check_int(n_angles, "n_angles", minimum=3)
    th = np.linspace(0, 2 * np.pi, n_angles)
    u = np.stack([np.cos(th), np.sin(th)], 1)
    wv = np.linspace(0, 1, 801)
    lo, hi = np.zeros(n_angles), np.full(n_angles, 3.0)
    for _ in range(40):
        mid = 0.5 * (lo + hi)
        inside = toy_values_on_grid(mid[:, None] * u, wv).max(1) <= 0
        lo, hi = np.where(inside, mid, lo), np.where(inside, hi, mid)
    return np.round(lo[:, None] * u, 4)


def _toy_background() -> list:
    # Scatter traces only: contour traces vanish from plotly figures that carry frames.
    B = toy_boundary()
    return [
        go.Scatter(x=B[:, 0], y=B[:, 1], fill="toself", fillcolor="rgba(44,160,44,0.18)", mode="lines",
                   line=dict(color="#2ca02c", width=2), name="feasible set G(x) <= 0", hoverinfo="skip"),
        go.Scatter(x=TOY_CENTERS[:, 0], y=TOY_CENTERS[:, 1], mode="markers", name="task centres c<sub>j</sub>",
                   marker=dict(color="#8c564b", size=10, symbol="square")),
    ]


#: Points at which the QP geometry is shown (some infeasible, some feasible).
QP_POINTS = np.array([[2.0, 1.5], [1.6, 1.1], [1.25, 0.75], [0.9, 0.45], [0.2, 0.2], [-0.6, 0.9],
                      [0.3, 1.6], [1.0, -0.6], [1.9, -0.2], [1.05, 0.62]])


def _clip_halfplane(poly: np.ndarray, a: np.ndarray, b: float) -> np.ndarray:
    """Sutherland-Hodgman clip of a polygon (k x 2) to {z : a^T z <= b}."""
    out = []
    for i in range(len(poly)):
        p, q = poly[i], poly[(i + 1) % len(poly)]
        fp, fq = a @ p - b, a @ q - b
        if fp <= 0:
            out.append(p)
        if fp * fq < 0:
            out.append(p + fp / (fp - fq) * (q - p))
    return np.array(out) if out else np.zeros((0, 2))


@lru_cache(maxsize=128)
def qp_geometry(point: int, alpha: float, rho: str = "plus", scale: float = 0.3) -> dict:
    """Everything the QP picture needs at QP_POINTS[point] (exact y*, global worst w)."""
    point = check_int(point, "point")
    if point >= len(QP_POINTS):
        raise ValueError(f"point must be < {len(QP_POINTS)}, got {point}")
    alpha = check_positive(alpha, "alpha", allow_zero=True)
    rho = check_choice(rho, "rho", ("plus", "value"))
    scale = check_positive(scale, "scale")
    P = toy_grids()["problem"]
    x = QP_POINTS[point]
    w = P.worst_w(x)
    psi_val = P.psi(x, w)
    g, a = P.grad_x_phi(x, P.best_y(x)), P.grad_x_psi(x, w)
    c = alpha * (max(psi_val, 0.0) if rho == "plus" else psi_val)
    d, lam = _direction(g, a, c, 1e-12, 1e6)
    lo, hi = TOY_BOX
    box = np.array([[lo, lo], [hi, lo], [hi, hi], [lo, hi]])
    region = _clip_halfplane(box, a, a @ x - scale * c)
    return dict(x=x, g=g, a=a, c=c, d=d, lam=lam, psi=psi_val, region=region, scale=scale)


def _qp_traces(point: int, alpha: float, rho: str) -> tuple[list, str]:
    q = qp_geometry(point, float(alpha), rho)
    x, s = q["x"], q["scale"]
    reg = q["region"]
    path = ("M " + " L ".join(f"{p[0]:.4f},{p[1]:.4f}" for p in reg) + " Z") if len(reg) else "M 0,0"
    shape = dict(type="path", path=path, fillcolor="rgba(31,119,180,0.12)", layer="above",
                 line=dict(color="#1f77b4", dash="dash", width=1), xref="x", yref="y")
    seg = lambda v: dict(x=[x[0], x[0] + s * v[0]], y=[x[1], x[1] + s * v[1]])  # noqa: E731
    traces = _toy_background() + [
        go.Scatter(x=[None], y=[None], mode="lines", name="allowed steps a<sup>T</sup>d + c <= 0",
                   line=dict(color="#1f77b4", dash="dash", width=1)),
        go.Scatter(**seg(-q["g"]), mode="lines+markers", name="-g (steepest descent of phi)",
                   line=dict(color="#7f7f7f", width=3), marker=dict(size=[0, 9], symbol="arrow", angleref="previous")),
        go.Scatter(**seg(q["a"]), mode="lines+markers", name="a = grad of the worst constraint",
                   line=dict(color="#d62728", width=3), marker=dict(size=[0, 9], symbol="arrow", angleref="previous")),
        go.Scatter(**seg(q["d"]), mode="lines+markers", name="d = -g - lambda a (chosen)",
                   line=dict(color="#1f77b4", width=4), marker=dict(size=[0, 11], symbol="arrow", angleref="previous")),
        go.Scatter(x=[x[0]], y=[x[1]], mode="markers", name="x", marker=dict(color="black", size=10)),
    ]
    note = (f"x = ({x[0]:.2f}, {x[1]:.2f}), G(x) = {q['psi']:+.2f}, c = {q['c']:+.2f}, "
            f"lambda = {q['lam']:.2f}")
    return traces, note, shape


def _toy_layout(fig: go.Figure, title: str | None = None) -> go.Figure:
    base_layout(fig, title=title, xaxis_title="x<sub>1</sub>", yaxis_title="x<sub>2</sub>", height=560)
    fig.update_xaxes(range=list(TOY_BOX), constrain="domain")
    fig.update_yaxes(range=list(TOY_BOX), scaleanchor="x", scaleratio=1)
    return fig


def qp_geometry_figure(point: int = 0, alpha: float = 2.0, rho: str = "plus") -> go.Figure:
    """The direction-finding QP at one point of the 2-D toy (live explorer)."""
    traces, note, shape = _qp_traces(check_int(point, "point"), check_positive(alpha, "alpha", allow_zero=True), rho)
    fig = go.Figure(traces)
    fig.update_layout(shapes=[shape])
    return _toy_layout(fig, title=note)


def qp_geometry_slider_figure(alpha: float = 2.0, rho: str = "plus") -> go.Figure:
    """Static twin: a slider over the points QP_POINTS at fixed alpha."""
    steps = []
    for i in range(len(QP_POINTS)):
        traces, note, shape = _qp_traces(i, alpha, rho)
        steps.append(SliderStep(f"point {i + 1}", traces, layout=dict(title=dict(text=note), shapes=[shape])))
    fig = slider_figure(steps, slider_label="point x", fixed_axes=False, title=steps[0].layout["title"]["text"],
                        xaxis_title="x<sub>1</sub>", yaxis_title="x<sub>2</sub>", height=600)
    fig.update_xaxes(range=list(TOY_BOX), constrain="domain")
    fig.update_yaxes(range=list(TOY_BOX), scaleanchor="x", scaleratio=1)
    return fig


EXPLORER_QP = Explorer("12", "qp_geometry", qp_geometry_figure, {
    "point": Slider("point x (index)", list(range(len(QP_POINTS))), 0, fmt="{:d}"),
    "alpha": Slider("alpha (barrier rate)", [0.0, 0.5, 1.0, 2.0, 5.0, 10.0], 2.0),
    "rho": Slider("rho", ["plus", "value"], "plus", fmt="{}"),
}, description="The direction-finding QP of iDB-PD on the 2-D toy.")


# --- semi-infinite intuition: the constraint curve in w along an iDB-PD run

TOY_X0 = np.array([2.2, 1.9])
SNAPSHOTS = (0, 1, 2, 3, 5, 8, 12, 20, 35, 60, 100, 199)


@lru_cache(maxsize=4)
def toy_run(pool: bool = True, rho: str = "plus", inner_w: int = 5, x0: tuple = tuple(TOY_X0),
            maxiter: int = 200) -> Result:
    """iDB-PD on the 2-D toy (eta = 0.05, alpha = 5), with the 3-point w pool (0.1, 0.45, 0.8) or a
    single w started at 0.8, which climbs to the local maximum at w = 1 and misses the worst case.
    Cached."""
    P = toy_grids()["problem"]
    w0 = P.w0 if pool else np.array([0.8])
    return idb_pd(P, np.array(x0), w0=w0, eta=0.05, alpha=5.0, beta=0.005, inner_w=inner_w, rho=rho,
                  maxiter=maxiter, record_path=True)


def _curve_traces(snapshot: int, grid_size: int, pool: bool = True) -> tuple[list, str]:
    res = toy_run(pool)
    P = toy_grids()["problem"]
    k = min(int(snapshot), len(res.path) - 1)
    x, W = res.path[k], res.w_pools[k]
    wv = np.linspace(0, 1, 401)
    curve = toy_values_on_grid(x[None], wv)[0]
    w_star = P.worst_w(x)[0]
    G = P.psi(x, np.array([w_star]))
    grid = (np.arange(grid_size) + 0.5) / grid_size
    gvals = toy_values_on_grid(x[None], grid)[0]
    pool_vals = [P.psi(x, w) for w in W]
    path = res.path[: k + 1]
    traces = _toy_background() + [
        go.Scatter(x=path[:, 0], y=path[:, 1], mode="lines+markers", name="iDB-PD path x<sub>k</sub>",
                   line=dict(color="#1f77b4"), marker=dict(size=4)),
        go.Scatter(x=wv, y=curve, mode="lines", name="psi(x<sub>k</sub>, w)", line=dict(color="#333", width=2),
                   xaxis="x2", yaxis="y2"),
        go.Scatter(x=[w_star], y=[G], mode="markers", name="true max G(x<sub>k</sub>)",
                   marker=dict(color="#d62728", size=13, symbol="star"), xaxis="x2", yaxis="y2"),
        go.Scatter(x=W[:, 0], y=pool_vals, mode="markers", name="iDB-PD's w" + (" pool" if pool else ""),
                   marker=dict(color="#1f77b4", size=10, symbol="diamond"), xaxis="x2", yaxis="y2"),
        go.Scatter(x=grid, y=gvals, mode="markers", name=f"grid of {grid_size} w's",
                   marker=dict(color="#ff7f0e", size=9, symbol="x"), xaxis="x2", yaxis="y2"),
        go.Scatter(x=[0, 1], y=[gvals.max()] * 2, mode="lines", name="grid max",
                   line=dict(color="#ff7f0e", dash="dot"), xaxis="x2", yaxis="y2"),
    ]
    note = (f"k = {k}: G(x<sub>k</sub>) = {G:+.3f}, pool max = {max(pool_vals):+.3f}, "
            f"grid max = {gvals.max():+.3f} (misses {G - gvals.max():.3f})")
    return traces, note


def _curve_layout(fig: go.Figure, title: str) -> go.Figure:
    base_layout(fig, title=title, height=520)
    fig.update_layout(
        xaxis=dict(domain=[0, 0.42], range=list(TOY_BOX), title_text="x<sub>1</sub>"),
        yaxis=dict(range=list(TOY_BOX), title_text="x<sub>2</sub>", scaleanchor="x", scaleratio=1),
        xaxis2=dict(domain=[0.55, 1], range=[0, 1], title_text="constraint parameter w", anchor="y2",
                    showline=True, linecolor="#888", mirror=True),
        yaxis2=dict(range=[-4.2, 2.6], title_text="psi(x<sub>k</sub>, w)", anchor="x2", showline=True,
                    linecolor="#888", mirror=True, zeroline=True, zerolinecolor="#2ca02c"),
        margin=dict(t=140),
    )
    return fig


def semi_infinite_figure(snapshot: int = 8, grid_size: int = 6, pool: bool = True) -> go.Figure:
    """Live explorer: the constraint curve w -> psi(x_k, w) at iteration k of iDB-PD, its true
    maximum, the algorithm's w pool (or its single w with ``pool=False``) and what a grid of
    ``grid_size`` points sees."""
    traces, note = _curve_traces(check_int(snapshot, "snapshot"), check_int(grid_size, "grid_size", minimum=1),
                                 bool(pool))
    return _curve_layout(go.Figure(traces), note)


def semi_infinite_slider_figure(grid_size: int = 6) -> go.Figure:
    """Static twin: a slider over iterations k (SNAPSHOTS) at a fixed grid size."""
    grid_size = check_int(grid_size, "grid_size", minimum=1)
    steps = []
    for k in SNAPSHOTS:
        traces, note = _curve_traces(k, grid_size)
        steps.append(SliderStep(f"k = {k}", traces, layout=dict(title=dict(text=note))))
    fig = slider_figure(steps, slider_label="iteration", fixed_axes=False, title=steps[0].layout["title"]["text"],
                        height=560)
    return _curve_layout(fig, steps[0].layout["title"]["text"])


EXPLORER_SEMI_INFINITE = Explorer("12", "semi_infinite", semi_infinite_figure, {
    "snapshot": Slider("iteration k", list(SNAPSHOTS), 8, fmt="{:d}"),
    "grid_size": Slider("grid points in w", [3, 4, 6, 8, 12, 24], 6, fmt="{:d}"),
    "pool": Toggle("3-point w pool (off: one w from 0.8)", True),
}, description="The semi-infinite constraint along an iDB-PD run on the 2-D toy.")


def dual_dynamics_figure() -> go.Figure:
    """lambda_k and G(x_k) on the 2-D toy for the two feasibility terms, from an infeasible and
    from a feasible start."""
    from plotly.subplots import make_subplots

    fig = make_subplots(rows=1, cols=2, horizontal_spacing=0.12,
                        subplot_titles=("multiplier lambda<sub>k</sub>", "worst-case constraint G(x<sub>k</sub>)"))
    i = 0
    for x0, where in ((tuple(TOY_X0), "infeasible start"), ((0.0, 0.0), "feasible start")):
        for rho, label in (("plus", "rho = [psi]+"), ("value", "rho = psi")):
            tr = toy_run(True, rho, 5, x0).trace
            name = f"{label}, {where}"
            for col, key in ((1, "lam"), (2, "G")):
                fig.add_trace(go.Scatter(x=tr.iteration, y=tr[key], mode="lines", name=name, legendgroup=name,
                                         showlegend=col == 1, line=dict(color=color_for(i), width=2.2,
                                                                        dash="solid" if rho == "plus" else "dash")),
                              row=1, col=col)
            i += 1
    base_layout(fig, height=450)
    fig.update_xaxes(title_text="iteration k")
    fig.update_yaxes(title_text="lambda", row=1, col=1)
    fig.update_yaxes(title_text="G(x)", row=1, col=2)
    fig.update_layout(margin=dict(t=120))
    return fig


# --------------------------------------------------------------------------- numbers for the prose

_E = "{:.1e}"
GLUE_FORMATS = {
    "multitask_violation": {"idb_violation": _E, "idb_violation_max": _E, "idb_accuracy": _E,
                            "idb_accuracy_max": _E, "penalty_violation": _E, "penalty_violation_min": _E,
                            "penalty_violation_max": _E, "penalty_accuracy": _E, "penalty_mu": "{:g}",
                            "penalty_eta": "{:g}", "idb_eta": "{:g}", "idb_alpha": "{:g}", "grad_evals": "{:,.0f}",
                            "penalty_violation_over_lambda_mu": "{:.2f}", "lambda_star": "{:.2f}"},
    "nonconvex_violation": {"idb_violation": _E, "idb_violation_max": _E, "idb_kkt": _E, "idb_kkt_max": _E,
                            "idb_accuracy": _E, "idb_accuracy_max": _E, "penalty_violation": _E,
                            "penalty_violation_max": _E, "penalty_accuracy": "{:.2f}",
                            "hessian_min_eig_at_start": "{:.3f}"},
    "exchange_evals": {"ratio": "{:.2f}", "ratio_min": "{:.2f}", "ratio_max": "{:.2f}", "idb_evals": "{:.0f}",
                       "exchange_evals": "{:.0f}", "idb_evals_oracle": "{:.0f}", "exchange_cuts": "{:.0f}", "exchange_evals_default": "{:.0f}",
                       "idb_eta": "{:g}", "idb_alpha": "{:g}", "exchange_ascent_steps": "{:.0f}",
                       "exchange_n_starts": "{:.0f}"},
}


@lru_cache(maxsize=1)
def limits_numbers() -> dict[str, tuple]:
    """The measured failure modes of the limits section: the kink instance (data seed KINK_SEED,
    where both ends of the ball are worst at the solution) and option A's interior stop on the
    nonconvex seed 1. name -> (value, format)."""
    P, ref = instance(KINK_SEED)
    w = P.worst_w(ref.x)
    kink = run("idb", KINK_SEED, "convex", eta=0.05, alpha=5.0)
    Pn, _ = instance(1, "nonconvex")
    a = idb_pd(Pn, np.zeros(10), rho="plus", eta=0.05, alpha=5.0, maxiter=BUDGET, record_every=BUDGET, **INNER)
    b = run("idb", 1, "nonconvex", eta=0.05, alpha=5.0)
    ma, mb = Pn.measures(a.x, a.lam), Pn.measures(b.x, b.lam)
    return {"kink_gap_ends": (abs(P.psi(ref.x, w) - P.psi(ref.x, -w)), _E),
            "kink_violation": (kink.trace["infeasibility"][-1], "{:.2f}"),
            "kink_accuracy": (final_accuracy(kink, KINK_SEED), "{:.2f}"),
            "optA_G": (ma["G"], "{:.3f}"), "optA_compl": (ma["complementarity"], _E), "optA_lam": (a.lam, "{:.2f}"),
            "optB_kkt": (mb["kkt"], _E)}


#: A penalty weight far beyond the grid, with a step on its 1/mu scale (2e-5 oscillates on a held-out seed).
LARGE_MU, LARGE_MU_ETA = 1e4, 1e-5


@lru_cache(maxsize=1)
def penalty_large_weight() -> dict[str, tuple]:
    """What a larger penalty weight buys on the claim's seeds and budget: the penalty at
    LARGE_MU with step LARGE_MU_ETA. Median violation [G]_+, median relative objective gap
    (Phi - Phi_ref)/Phi_ref and median lambda*/mu. name -> (value, format)."""
    viol, gap, lm = [], [], []
    for s in CLAIM_SEEDS:
        r = run("penalty", s, "convex", mu=LARGE_MU, eta=LARGE_MU_ETA)
        _, ref = instance(s)
        viol.append(r.trace["infeasibility"][-1] if r.success else np.inf)
        gap.append((r.fun - ref.fun) / abs(ref.fun) if r.success else np.inf)
        lm.append(lambda_star(s) / LARGE_MU)
    return {"large_mu": (LARGE_MU, "{:,.0f}"), "large_mu_eta": (LARGE_MU_ETA, "{:g}"),
            "large_mu_violation": (float(np.median(viol)), _E), "large_mu_gap": (100 * float(np.median(gap)), "{:.0f}%"),
            "large_mu_lambda_mu": (float(np.median(lm)), _E)}


#: Data seeds beyond the claims' and the tuning's, to measure how often iDB-PD fails on this family.
EXTRA_SEEDS = tuple(range(5, 25))
FAILURE_ITERS = 1000


@lru_cache(maxsize=1)
def failure_rate(seeds: tuple[int, ...] = EXTRA_SEEDS) -> dict[str, tuple]:
    """iDB-PD at its tuned setting on further data seeds (FAILURE_ITERS iterations: a third of the
    claims' budget, where the successful runs are at round-off): how many end with a violation
    above 1e-6, and how many of those have their reference solution on the kink of G (the two
    ends of the ball worst to within 1e-6). name -> (value, format)."""
    ti, _ = tunings()
    fails, kinks = 0, 0
    for s in seeds:
        r = run("idb", s, "convex", FAILURE_ITERS, FAILURE_ITERS, **ti.best)
        if not (r.success and r.trace["infeasibility"][-1] <= 1e-6):
            fails += 1
            P, ref = instance(s)
            w = P.worst_w(ref.x)
            kinks += abs(P.psi(ref.x, w) - P.psi(ref.x, -w)) <= 1e-6
    return {"extra_iters": (FAILURE_ITERS, "{:,d}"), "extra_seeds": (len(seeds), "{:d}"), "extra_first": (seeds[0], "{:d}"), "extra_last": (seeds[-1], "{:d}"),
            "extra_fails": (fails, "{:d}"), "extra_kinks": (int(kinks), "{:d}")}


def glue_numbers(numbers: dict[str, tuple]) -> None:
    """Glue every (value, format) of a numbers dict under its name."""
    from ..viz import glue

    for name, (value, fmt) in numbers.items():
        glue(name, value, fmt)


def count_tuning_panel() -> go.Figure:
    """The tuning figure of the cost comparison: gradient evaluations to EPS (log scale)."""
    return tuning_figure(list(count_tunings()), score_label="gradient evaluations to its own stop (1e-6)",
                         logy=True)
