"""Chapter 15: the book's experiments, figures, live explorers and claims for quantum zeroth-order
optimization. The methods themselves are in :mod:`optbook.geometry.quantum_zo`.

Two kinds of experiment. In d = 2 Jordan's circuit is simulated exactly on a quadratic (the
estimator's statistics, the noise and box knobs). For d up to 64 the *query race* runs projected
subgradient descent on l1 regression with the emulated noisy Jordan oracle (6 bits, oracle noise
sigma = m ell / 1600, i.e. 0.25 rad of phase noise) against the classical zeroth-order baselines
and the exact first-order method, every method's constant step tuned over one grid of multipliers
on held-out seeds 100-103 and measured on seeds 0-4.
"""
from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache

import numpy as np
import plotly.graph_objects as go

from ..claims import Criterion, Measured, claim
from ..core import (Result, Tuning, as_rng, check_choice, check_int, check_positive, grid_search,
                    loglog_slope)
from ..core.validate import RngLike
from ..viz import Phase, SliderStep, base_layout, color_for, phase_layout, slider_figure
from ..widgets import Explorer, Slider
from .quantum_zo import (
    EmulatedJordanOracle,
    L1Regression,
    _probabilities,
    grid_values,
    jordan_distribution,
    median_repetitions,
    mirror_descent,
    one_cell_probability,
    phase_noise,
    sample_jordan,
    signed_index,
    zo_gradient_descent,
)

# --------------------------------------------------------------------------------------------
# The Jordan test function (2-D quadratic) and the simulated estimator
# --------------------------------------------------------------------------------------------

H0 = np.array([[2.0, 0.5], [0.5, 1.0]])
X0 = np.array([0.3, -0.2])
G0 = np.array([0.7, -0.45])          # the true gradient at X0 (||G0||_inf <= m/4 for m = 4)
M_BOUND = 4.0


def quadratic_oracle(curvature: float = 1.0) -> Callable[[np.ndarray], np.ndarray]:
    """Vectorised ``f(x) = 1/2 x^T (curvature H0) x + c^T x`` with ``grad f(X0) = G0`` whatever the
    curvature: maps ``(n, 2) -> (n,)``."""
    curvature = check_positive(curvature, "curvature", allow_zero=True)
    H = curvature * H0
    c = G0 - H @ X0
    return lambda X: 0.5 * np.einsum("ni,ij,nj->n", X, H, X) + X @ c


def curvature_threshold(n_bits: int, curvature: float = 1.0, m: float = M_BOUND) -> float:
    """The box side at which ``||H|| ell^2 = m ell / N``, i.e. the gradient changes by one grid cell
    ``m/N`` across the box (the paper card's rule of thumb for "curvature matters", not the paper's)."""
    n_bits = check_int(n_bits, "n_bits", minimum=1)
    curvature = check_positive(curvature, "curvature")
    m = check_positive(m, "m")
    return m / (2 ** n_bits * curvature * float(np.linalg.eigvalsh(H0)[-1]))


def _shots(curvature: float, ell: float, n_bits: int, sigma: float, shots: int, rng) -> np.ndarray:
    """``shots`` single-run estimates, each with its own oracle-noise realisation."""
    vals = grid_values(quadratic_oracle(curvature), X0, ell, n_bits, vectorized=True)
    if sigma == 0:
        return sample_jordan(_probabilities(vals, M_BOUND, ell, 2), shots, M_BOUND, rng)
    out, n = [], 2 ** n_bits
    for start in range(0, shots, 500):
        k = min(500, shots - start)
        probs = _probabilities(vals + sigma * rng.standard_normal((k,) + vals.shape), M_BOUND, ell, 2)
        flat = probs.reshape(k, -1)
        cdf = np.cumsum(flat, axis=1)
        j = np.minimum((cdf < rng.random((k, 1)) * cdf[:, -1:]).sum(axis=1), flat.shape[1] - 1)
        out.append(M_BOUND * signed_index(np.stack(np.unravel_index(j, (n, n)), axis=1), n) / n)
    return np.concatenate(out)


def jordan_success(*, curvature: float = 1.0, ell: float = 1e-3, n_bits: int = 5, noise: float = 0.0,
                   shots: int = 2000, repetitions: int = 1, rng: RngLike = 0) -> dict[str, float]:
    """Frequencies with which estimates are within ``2m/N`` of ``G0``: per coordinate and jointly,
    for single shots or for the coordinate-wise median of ``repetitions`` shots. ``noise`` is the
    oracle's standard deviation in units of ``m ell / N``."""
    curvature = check_positive(curvature, "curvature", allow_zero=True)
    ell = check_positive(ell, "ell")
    n_bits = check_int(n_bits, "n_bits", minimum=1)
    if n_bits > 9:
        raise ValueError(f"n_bits must be at most 9 (a (2**n_bits)**2 state vector), got {n_bits}")
    noise = check_positive(noise, "noise", allow_zero=True)
    shots = check_int(shots, "shots", minimum=1)
    repetitions = check_int(repetitions, "repetitions", minimum=1)
    gen = as_rng(rng)
    n = 2 ** n_bits
    sigma = noise * M_BOUND * ell / n
    est = _shots(curvature, ell, n_bits, sigma, shots * repetitions, gen)
    est = np.median(est.reshape(shots, repetitions, 2), axis=1)
    ok = np.abs(est - G0) <= 2 * M_BOUND / n
    return {"coord1": float(ok[:, 0].mean()), "coord2": float(ok[:, 1].mean()), "joint": float(ok.all(axis=1).mean())}


CURVATURE_FACTORS = (1.0, 2.0, 4.0, 8.0, 12.0, 16.0, 32.0)


def joint_success_exact(ell: float, *, n_bits: int = 5, curvature: float = 1.0, noise: float = 0.0) -> float:
    """The exact probability that one shot is within ``2m/N`` of ``G0`` in both coordinates (summed
    from the simulated outcome distribution, no sampling); ``noise`` in units of ``m ell / N``."""
    ell = check_positive(ell, "ell")
    n_bits = check_int(n_bits, "n_bits", minimum=1)
    if n_bits > 8:
        raise ValueError(f"n_bits must be at most 8, got {n_bits}")
    curvature = check_positive(curvature, "curvature", allow_zero=True)
    noise = check_positive(noise, "noise", allow_zero=True)
    n = 2 ** n_bits
    probs = _jordan_probs(n_bits, float(ell), float(curvature), float(noise))
    axis = M_BOUND * (np.arange(n) - n // 2) / n
    near = [np.abs(axis - G0[i]) <= 2 * M_BOUND / n + 1e-12 for i in range(2)]
    return float(probs[np.ix_(near[0], near[1])].sum())


def curvature_sweep(factors=CURVATURE_FACTORS) -> list[dict]:
    """Exact joint single-shot success (N = 32, no noise) as the box grows past the card's curvature
    rule of thumb ``||H|| ell^2 = m ell / N``."""
    factors = [check_positive(f, "factors") for f in factors]
    if not factors:
        raise ValueError("factors must not be empty")
    thr = curvature_threshold(5)
    return [{"box / rule-of-thumb box": fac, "box side ell": fac * thr,
             "joint success": joint_success_exact(fac * thr)} for fac in factors]


# --------------------------------------------------------------------------------------------
# The query race: l1 regression, the emulated noisy oracle, the baselines
# --------------------------------------------------------------------------------------------

N_BITS = 6              # bits per register of the quantum model
BOX = 1e-2              # grid box ell
SIGMA_REL = 1 / 1600    # oracle noise sigma = SIGMA_REL * m * ell: phase noise 2 pi 2^b / 1600
DELTA = 0.01            # failure probability per estimate that fixes the repetitions
DIMS = (4, 8, 16, 32, 64)
FAST_DIMS = (8, 32)
NOISE_D = 64            # the dimension of the noisy-oracle claim
TARGET = 0.05
#: Multiples of each method's base step, in the order tried: the base times 4 first, then outward.
STEP_GRID = (4.0, 2.0, 8.0, 1.0, 16.0)
CUTOFF = 2.0            # a tuning run stops at CUTOFF x the best queries so far on its seed
TUNE_SEEDS = (100, 101, 102, 103)   # four: two could not see a constant step on the edge of stability
FAST_TUNE_SEEDS = TUNE_SEEDS[:3]   # one seed picks steps on the edge of stability
CLAIM_SEEDS = (0, 1, 2, 3, 4)
FAST_SEEDS = (0, 1, 2)
RACE_METHODS = ("quantum model", "coordinate FD", "ZO-GD")
#: The controls' method: the quantum model with the median removed (one shot per estimate).
ONE_SHOT = "quantum, one shot per estimate"
METHODS = RACE_METHODS + ("exact subgradient", ONE_SHOT)
#: Every method runs with a *constant* step ``BASE_STEP * mult`` (ZO-GD's further divided by d, as
#: its variance ~ d prescribes). A first version used ``eta_0 / sqrt(k+1)`` for all; that schedule
#: cost ZO-GD up to 6x more queries at d = 64 (its many iterations pay the log factor of the
#: decaying step), which inflated its slope in d to 1.26 (see the chapter).
BASE_STEP = {"quantum model": 0.1, "coordinate FD": 0.1, "ZO-GD": 0.16, "exact subgradient": 0.1, ONE_SHOT: 0.1}
#: Query budgets per run: generous multiples of what a well-tuned run needs at d = 64.
BUDGETS = {"quantum model": 20_000, "coordinate FD": 40_000, "ZO-GD": 80_000, "exact subgradient": 1_000,
           ONE_SHOT: 5_000}
#: The step multipliers the held-out tuning picks (``race_tuning``), used by the race figures and
#: the live explorer so that neither has to tune first; the notebook checks that they agree.
RACE_STEPS = {
    "quantum model": {4: 4.0, 8: 4.0, 16: 4.0, 32: 4.0, 64: 8.0},
    "coordinate FD": {4: 4.0, 8: 4.0, 16: 8.0, 32: 4.0, 64: 8.0},
    "ZO-GD": {4: 4.0, 8: 4.0, 16: 4.0, 32: 4.0, 64: 4.0},
}


@lru_cache(maxsize=64)
def problem(d: int, seed: int) -> L1Regression:
    """The l1-regression instance of dimension ``d`` and seed ``seed`` (n = 4d rows)."""
    return L1Regression(check_int(d, "d", minimum=1), rng=check_int(seed, "seed"))


def _check_problem(prob) -> L1Regression:
    if not isinstance(prob, L1Regression):
        raise ValueError(f"prob must be an L1Regression, got {type(prob).__name__}")
    return prob


def gradient_bound(prob: L1Regression) -> float:
    """The Jordan bound ``m``: twice the sup-norm bound on the subgradients, plus a margin."""
    return 2 * _check_problem(prob).grad_bound + 0.5


def quantum_oracle(prob: L1Regression, rng, n_bits: int = N_BITS, repetitions: int | None = None) -> EmulatedJordanOracle:
    """The chapter's emulated noisy Jordan oracle for ``prob``: box :data:`BOX`, oracle noise
    ``sigma = SIGMA_REL m ell``, repetitions for failure probability :data:`DELTA` (unless given)."""
    m = gradient_bound(prob)       # checks prob
    return EmulatedJordanOracle(prob.jac, prob.d, m=m, n_bits=n_bits, sigma=SIGMA_REL * m * BOX, ell=BOX,
                                delta=DELTA, repetitions=repetitions, rng=rng)


def repetitions_for(d: int, n_bits: int = N_BITS) -> int:
    """Queries per gradient estimate, Q(d), of the chapter's noisy oracle at ``n_bits`` (raises a
    ValueError when the noise leaves no repetition count that works)."""
    s = 2 * np.pi * 2 ** check_int(n_bits, "n_bits", minimum=1) * SIGMA_REL
    p = one_cell_probability(n_bits, s)
    if p <= 0.5:
        raise ValueError(f"n_bits = {n_bits}: phase noise {s:.3g} rad leaves a one-cell probability {p:.3g} <= 1/2")
    return median_repetitions(check_int(d, "d", minimum=1), DELTA, p)


class _Counted:
    """An exact gradient oracle that counts its calls (the first-order reference)."""

    def __init__(self, jac):
        self.jac, self.queries = jac, 0

    def __call__(self, x):
        self.queries += 1
        return self.jac(x)


class _ErrorLog:
    """Wraps a gradient estimate and logs ``||g_hat - grad|| / ||grad||`` per call."""

    def __init__(self, oracle, jac):
        self.oracle, self.jac, self.errors = oracle, jac, []

    @property
    def queries(self) -> int:
        return self.oracle.queries

    def __call__(self, x):
        g_hat, g = self.oracle(x), self.jac(x)
        self.errors.append(float(np.linalg.norm(g_hat - g) / max(np.linalg.norm(g), 1e-300)))
        return g_hat


@lru_cache(maxsize=1024)
def race_run(method: str, d: int, seed: int, step_mult: float, *, budget: int | None = None,
             n_bits: int = N_BITS, repetitions: int | None = None) -> Result:
    """One run on :func:`problem` (``d``, ``seed``) from ``x = 0`` to ``f(x_avg) - f* <= TARGET``.

    ``method``: ``"quantum model"`` (projected subgradient descent with the noisy emulated Jordan
    oracle at ``n_bits``; ``repetitions`` overrides its Q(d)), ``"quantum, one shot per estimate"``
    (the same oracle without the median: one shot, one query, per estimate; the claims' control),
    ``"exact subgradient"`` (the first-order reference, one query
    per subgradient), ``"ZO-GD"`` (Gaussian two-point, ``mu = 1e-4``, base step divided by ``d``) or
    ``"coordinate FD"`` (central differences). Constant step ``BASE_STEP * step_mult``; at most
    ``budget`` queries (default :data:`BUDGETS`). The result carries ``errors``, the relative
    gradient errors of a quantum run. Cached: claims, figures and the live twin share these runs.
    """
    method = check_choice(method, "method", METHODS)
    d = check_int(d, "d", minimum=1)
    seed = check_int(seed, "seed")
    step_mult = check_positive(step_mult, "step_mult")
    budget = BUDGETS[method] if budget is None else check_int(budget, "budget", minimum=1)
    prob = problem(d, seed)
    x0 = np.zeros(d)
    rng = np.random.default_rng(1000 + seed)
    step = BASE_STEP[method] * step_mult
    common = dict(radius=prob.radius, f_star=prob.f_star, tol=TARGET, name=method, decay="constant")
    if method in ("quantum model", ONE_SHOT):
        if method == ONE_SHOT:
            repetitions = 1
        log = _ErrorLog(quantum_oracle(prob, rng, n_bits, repetitions), prob.jac)
        per_step = log.oracle.per_call
        res = mirror_descent(prob.fun, x0, log, step=step, maxiter=max(1, budget // per_step), **common)
        res.errors = np.array(log.errors)
        res.per_step = per_step
        return res
    if method == "exact subgradient":
        return mirror_descent(prob.fun, x0, _Counted(prob.jac), step=step, maxiter=budget, **common)
    if method == "ZO-GD":
        return zo_gradient_descent(prob.fun, x0, estimator="gaussian", step=step / d, maxiter=max(1, budget // 2),
                                   rng=rng, check_every=max(1, d // 8), **common)
    return zo_gradient_descent(prob.fun, x0, estimator="coordinate", step=step, maxiter=max(1, budget // (2 * d)),
                               rng=rng, **common)


def _check_result(res) -> Result:
    if not isinstance(res, Result) or res.get("trace") is None:
        raise ValueError(f"res must be a Result of race_run, got {type(res).__name__}")
    return res


def queries_to_target(res: Result) -> float:
    """Queries spent when ``f(x_avg) - f* <= TARGET`` first held (inf if never)."""
    res = _check_result(res)
    return float(res.trace["queries"][-1]) if res.success else np.inf


def iterations_to_target(res: Result) -> float:
    """Iterations when ``f(x_avg) - f* <= TARGET`` first held (inf if never)."""
    res = _check_result(res)
    return float(res.nit) if res.success else np.inf


@lru_cache(maxsize=64)
def race_tuning(method: str, d: int, seeds: tuple[int, ...] = TUNE_SEEDS) -> Tuning:
    """``method``'s step multiplier over :data:`STEP_GRID` at dimension ``d``, scored by the median
    over the held-out ``seeds`` of the queries to the target. A run is cut off at :data:`CUTOFF`
    times the fewest queries any setting tried before it needed on the same seed; a setting that
    misses the target on a seed (or is cut off) ranks last."""
    method = check_choice(method, "method", METHODS)
    d = check_int(d, "d", minimum=1)
    best: dict[int, float] = {}

    def score(seed: int, mult: float) -> float:
        cap = int(min(BUDGETS[method], CUTOFF * best[seed])) if seed in best else None
        q = queries_to_target(race_run(method, d, seed, mult, budget=cap))
        if np.isfinite(q):
            best[seed] = min(best.get(seed, np.inf), q)
        return q

    return grid_search(method, score, {"mult": STEP_GRID}, seeds)


def tuned_mult(method: str, d: int, fast: bool = False) -> float:
    return float(race_tuning(method, d, FAST_TUNE_SEEDS if fast else TUNE_SEEDS).best["mult"])


def race_queries(method: str, d: int, seeds, mult: float) -> np.ndarray:
    """Queries to the target on ``seeds`` at step multiplier ``mult``."""
    return np.array([queries_to_target(race_run(method, d, s, mult)) for s in seeds])


# --------------------------------------------------------------------------------------------
# Claims
# --------------------------------------------------------------------------------------------

GLUE_FORMATS = {
    "query_scaling": {"slope_quantum": "{:.2f}", "slope_zo_gd": "{:.2f}", "slope_fd": "{:.2f}",
                      "slope_quantum_iterations": "{:.2f}", "slope_q": "{:.2f}", "ratio_quantum": "{:.2f}",
                      "ratio_zo_gd": "{:.0f}", "ratio_fd": "{:.0f}", "Q_first": "{:.0f}", "Q_last": "{:.0f}",
                      "quantum_last": "{:,.0f}", "zo_gd_last": "{:,.0f}", "fd_last": "{:,.0f}",
                      "quantum_first": "{:,.0f}", "zo_gd_first": "{:,.0f}", "fd_first": "{:,.0f}",
                      "d_first": "{:.0f}", "d_last": "{:.0f}", "edges": "{:.0f}"},
    "noisy_oracle": {"ratio": "{:.2f}", "ratio_min": "{:.2f}", "ratio_max": "{:.2f}", "iters_quantum": "{:.0f}",
                     "iters_exact": "{:.0f}", "rel_error": "{:.2f}", "rel_error_max": "{:.2f}",
                     "phase_noise": "{:.2f}", "Q": "{:.0f}", "mult_quantum": "{:g}", "mult_exact": "{:g}",
                     "resolution": "{:.3f}", "n_bits": "{:.0f}", "reached": "{:.0f}"},
    "jordan_estimator": {"single_coord1": "{:.2f}", "single_coord2": "{:.2f}", "single_joint": "{:.2f}",
                         "median7_joint": "{:.3f}", "noisy_joint": "{:.3f}", "shots": "{:.0f}"},
}


@claim("15", "Queries to a fixed accuracy grow polylogarithmically in d for the quantum model, linearly for ZO-GD",
       kind="reproduction",
       paper="dimension-independent (up to poly-log factors) zeroth-order query complexity, against the classical "
             "zeroth-order price of a factor d (abstract; no number at a given d)",
       expect="d in {4, 8, 16, 32, 64}, l1 regression, 5 seeds, every method's constant step tuned per d over 5 "
              "multipliers on held-out seeds 100-103: the log-log slope in d of the median outer-loop iterations to "
              "f - f* <= 0.05 of projected subgradient descent with the 6-bit noisy emulated Jordan oracle <= 0.3, and "
              "that of classical two-point ZO-GD's median queries >= 0.75. The quantum model's queries are Q(d) x "
              "iterations, and Q(d) ~ log(d/delta) is set by a formula (slope 0.18 here), so only the iterations are "
              "measured: 0.3 is the earlier bound 0.5 on the total slope less Q(d)'s 0.18, rounded down; 0.75 splits a "
              "linear law (slope 1) from a polylog one. History: a first registration (queries grow <= 2x from d = 4 "
              "to 128 for the quantum model, >= 10x for ZO-GD) did not reproduce (2.15x with a 16-bit noise-free "
              "oracle); a restatement on the total slope (<= 0.5, met at 0.23, ZO-GD 1.26 with a 1/sqrt(k) step "
              "schedule) had a control that changed only the accounting. A referee replaced it by this criterion, "
              "the control below, and constant steps for all methods (the decaying schedule had cost ZO-GD up to 6x "
              "its tuned queries at d = 64), before the full run reported here",
       control="the median removed: the same noisy oracle read once per estimate (one shot, one query), its step "
               "tuned the same way; its l2 error grows like sqrt(d), so its iterations may or may not grow with d",
       name="query_scaling")
def claim_query_scaling(fast: bool = False, control: bool = False) -> Measured:
    dims = FAST_DIMS if fast else DIMS
    seeds = FAST_SEEDS if fast else CLAIM_SEEDS
    qname = ONE_SHOT if control else "quantum model"
    rows, table = [], {}
    for d in dims:
        mults = {m: tuned_mult(m, d, fast) for m in (qname, "ZO-GD", "coordinate FD")}
        q = race_queries(qname, d, seeds, mults[qname])
        z = race_queries("ZO-GD", d, seeds, mults["ZO-GD"])
        fd = race_queries("coordinate FD", d, seeds, mults["coordinate FD"])
        it = np.array([iterations_to_target(race_run(qname, d, s, mults[qname])) for s in seeds])
        table[d] = {"quantum": q, "ZO-GD": z, "coordinate FD": fd, "iterations": it, "mults": mults,
                    "Q": race_run(qname, d, seeds[0], mults[qname]).per_step}
        rows.append({"d": d, "Q(d) per estimate": table[d]["Q"], "quantum model": float(np.median(q)),
                     "ZO-GD": float(np.median(z)), "coordinate FD": float(np.median(fd))})
    dd = np.array(dims, float)

    def slope(key):
        return loglog_slope(dd, [np.median(table[d][key]) for d in dims])

    first, last = dims[0], dims[-1]
    edges = sum(race_tuning(m, d, FAST_TUNE_SEEDS if fast else TUNE_SEEDS).on_edge()
                for d in dims for m in (qname, "ZO-GD", "coordinate FD"))
    values = {"slope_quantum": slope("quantum"), "slope_zo_gd": slope("ZO-GD"), "slope_fd": slope("coordinate FD"),
              "slope_quantum_iterations": slope("iterations"),
              "slope_q": loglog_slope(dd, [table[d]["Q"] for d in dims]),
              "ratio_quantum": float(np.median(table[last]["quantum"]) / np.median(table[first]["quantum"])),
              "ratio_zo_gd": float(np.median(table[last]["ZO-GD"]) / np.median(table[first]["ZO-GD"])),
              "ratio_fd": float(np.median(table[last]["coordinate FD"]) / np.median(table[first]["coordinate FD"])),
              "Q_first": table[first]["Q"], "Q_last": table[last]["Q"],
              "quantum_first": float(np.median(table[first]["quantum"])),
              "quantum_last": float(np.median(table[last]["quantum"])),
              "zo_gd_first": float(np.median(table[first]["ZO-GD"])), "zo_gd_last": float(np.median(table[last]["ZO-GD"])),
              "fd_first": float(np.median(table[first]["coordinate FD"])),
              "fd_last": float(np.median(table[last]["coordinate FD"])),
              "d_first": first, "d_last": last, "edges": edges}
    label = "one shot per estimate (control)" if control else "quantum model"
    return Measured(values, criteria=[Criterion("slope_quantum_iterations", "<=", 0.3),
                                      Criterion("slope_zo_gd", ">=", 0.75)],
                    seeds=seeds,
                    summary=f"log-log slopes in d: {label} iterations {values['slope_quantum_iterations']:.2f} "
                            f"(queries {values['slope_quantum']:.2f}), ZO-GD queries {values['slope_zo_gd']:.2f}, "
                            f"coordinate FD {values['slope_fd']:.2f} (medians of {len(seeds)} seeds; cost model)",
                    details={"table": table, "rows": rows, "dims": dims, "seeds": seeds, "fast": fast})


@claim("15", "With a noisy evaluation oracle read at 6 bits, quantum subgradient descent needs the iterations of "
             "exact-gradient descent",
       kind="reproduction",
       paper="only noisy function evaluations are needed to match the first-order query complexity of classical "
             "(sub)gradient descent: the outer loop tolerates the estimator's error (abstract; no number)",
       expect="d = 64, l1 regression, 5 seeds: median over seeds of iterations to f - f* <= 0.05 of projected "
              "subgradient descent with the emulated Jordan oracle (6 bits, oracle noise sigma = m ell / 1600, i.e. "
              "0.25 rad of phase noise, repetitions for a 1% failure rate), divided by those of the same descent with "
              "exact subgradients, <= 1.5 (matching up to a constant; both constant steps tuned over 5 multipliers "
              "on held-out seeds 100-103). Precondition: the estimate's error is exercised, median relative l2 error "
              ">= 0.05. (A first control, the oracle read at 16 bits, was a broken oracle, every shot uniform; a "
              "referee replaced it by the one below, and the 1/sqrt(k) step schedule by constant steps, before the "
              "full run reported here)",
       control="the median removed: the same 6-bit noisy oracle read once per estimate (one shot, one query), its "
               "step tuned the same way",
       name="noisy_oracle")
def claim_noisy_oracle(fast: bool = False, control: bool = False) -> Measured:
    seeds = FAST_SEEDS if fast else CLAIM_SEEDS
    tune = FAST_TUNE_SEEDS if fast else TUNE_SEEDS
    d = NOISE_D
    qname = ONE_SHOT if control else "quantum model"
    mq = float(race_tuning(qname, d, tune).best["mult"])
    me = float(race_tuning("exact subgradient", d, tune).best["mult"])
    runs = [race_run(qname, d, s, mq) for s in seeds]
    exact = [race_run("exact subgradient", d, s, me) for s in seeds]
    iq = np.array([iterations_to_target(r) for r in runs])
    ie = np.array([iterations_to_target(r) for r in exact])
    ratio = iq / ie
    errors = np.concatenate([r.errors for r in runs])
    prob = problem(d, seeds[0])
    m = gradient_bound(prob)
    values = {"ratio": float(np.median(ratio)), "ratio_min": float(ratio.min()), "ratio_max": float(ratio.max()),
              "iters_quantum": float(np.median(iq)), "iters_exact": float(np.median(ie)),
              "rel_error": float(np.median(errors)), "rel_error_max": float(np.max(errors)),
              "phase_noise": phase_noise(SIGMA_REL * m * BOX, m, BOX, N_BITS), "Q": float(runs[0].per_step),
              "mult_quantum": mq, "mult_exact": me, "resolution": m / 2 ** N_BITS, "n_bits": N_BITS,
              "reached": float(np.isfinite(iq).sum())}
    precondition = bool(values["rel_error"] >= 0.05 and np.all(np.isfinite(ie)))
    return Measured(values, criteria=[Criterion("ratio", "<=", 1.5)], seeds=seeds, precondition=precondition,
                    summary=f"{'one-shot control: ' if control else ''}iterations quantum / exact: median "
                            f"{values['ratio']:.2f} ({values['ratio_min']:.2f}-{values['ratio_max']:.2f}); relative "
                            f"gradient error {values['rel_error']:.2f} (median)",
                    details={"tunings": [race_tuning(qname, d, tune), race_tuning("exact subgradient", d, tune)],
                             "iters_quantum": iq, "iters_exact": ie, "runs": runs, "exact": exact})


@claim("15", "Simulated Jordan estimator: within 2m/N per shot, boosted by the median, broken by noise",
       kind="identity",
       expect="d = 2, N = 32, m = 4, ell = 1e-3: per-shot frequency within 2m/N >= 0.8 per coordinate (theory: >= 8/pi^2 "
              "= 0.81 within one cell); median of 7 jointly >= 0.99; with oracle noise sigma = m ell / N (phase noise "
              "2 pi) jointly <= 0.5",
       name="jordan_estimator")
def claim_jordan_estimator(fast: bool = False) -> Measured:
    shots = 1000 if fast else 2000
    single = jordan_success(shots=shots, rng=1)
    boosted = jordan_success(shots=shots, repetitions=7, rng=2)
    noisy = jordan_success(shots=shots, noise=1.0, rng=3)
    values = {"single_coord1": single["coord1"], "single_coord2": single["coord2"],
              "single_joint": single["joint"], "median7_joint": boosted["joint"],
              "noisy_joint": noisy["joint"], "shots": shots}
    return Measured(values, criteria=[Criterion("single_coord1", ">=", 0.8), Criterion("single_coord2", ">=", 0.8),
                                      Criterion("median7_joint", ">=", 0.99), Criterion("noisy_joint", "<=", 0.5)],
                    seeds=(1, 2, 3), summary=f"d=2, N=32, m=4, ell=1e-3; {shots} shots per frequency",
                    details={"single": single, "boosted": boosted, "noisy": noisy})


# --------------------------------------------------------------------------------------------
# Figures and explorers: Jordan's measurement distribution
# --------------------------------------------------------------------------------------------

NOISE_LEVELS = (0.0, 0.1, 0.2, 0.3, 0.5, 1.0)
BOX_SIDES = (0.001, 0.03, 0.1, 0.3, 1.0)
BIT_CHOICES = (3, 4, 5, 6)
CURVATURES = (0.0, 1.0, 4.0, 16.0)
LOG_FLOOR_P = 1e-4      # the colour scale's floor (log10 P from -4 to 0)


@lru_cache(maxsize=512)
def _jordan_probs(n_bits: int, ell: float, curvature: float, noise: float) -> np.ndarray:
    """Outcome distribution on the test quadratic, centred (fftshift) so that axis index ``i``
    is the signed value ``i - N/2``; noise in units of ``m ell / N``, averaged exactly over the
    Gaussian oracle noise."""
    n = 2 ** n_bits
    probs = jordan_distribution(quadratic_oracle(curvature), X0, m=M_BOUND, ell=ell, n_bits=n_bits,
                                noise=noise * M_BOUND * ell / n, vectorized=True)
    return np.fft.fftshift(probs)


def jordan_traces(n_bits: int = 5, ell: float = 0.1, curvature: float = 1.0, noise: float = 0.0) -> list:
    """Heat map of log10 P(g_hat) over the grid of possible estimates, and the true gradient."""
    n_bits = check_int(n_bits, "n_bits", minimum=1)
    if n_bits > 8:
        raise ValueError(f"n_bits must be at most 8 for the figure, got {n_bits}")
    ell = check_positive(ell, "ell")
    curvature = check_positive(curvature, "curvature", allow_zero=True)
    noise = check_positive(noise, "noise", allow_zero=True)
    n = 2 ** n_bits
    probs = _jordan_probs(n_bits, ell, curvature, noise)
    axis = M_BOUND * (np.arange(n) - n // 2) / n
    z = np.log10(np.maximum(probs, LOG_FLOOR_P)).T
    ticks = [-4, -3, -2, -1, 0]
    return [
        go.Heatmap(x=axis, y=axis, z=z, zmin=-4, zmax=0, colorscale="Viridis", customdata=probs.T,
                   colorbar=dict(title="P (log)", tickvals=ticks, ticktext=["1e-4", "1e-3", "0.01", "0.1", "1"]),
                   name="P(estimate)", hovertemplate="g1=%{x:.3f}<br>g2=%{y:.3f}<br>P=%{customdata:.2g}<extra></extra>"),
        go.Scatter(x=[G0[0]], y=[G0[1]], mode="markers", name="true gradient",
                   marker=dict(symbol="x-thin", size=16, line=dict(width=3, color="#d62728"))),
    ]


def _jordan_axes(fig: go.Figure) -> go.Figure:
    lim = [-M_BOUND / 2 - 0.1, M_BOUND / 2]
    fig.update_xaxes(range=lim, title_text="estimate of df/dx1 (m j1 / N)")
    fig.update_yaxes(range=lim, title_text="estimate of df/dx2 (m j2 / N)", scaleanchor="x")
    return fig


def jordan_figure(n_bits: int = 5, ell: float = 0.1, curvature: float = 1.0, noise: float = 0.0) -> go.Figure:
    """Live Jordan visualiser: the measurement distribution for one setting of the four knobs."""
    fig = go.Figure(jordan_traces(n_bits, ell, curvature, noise))
    base_layout(fig, height=520, title=f"N = {2 ** n_bits}, box {ell:g}, curvature {curvature:g}, "
                                       f"noise {noise:g} x m*ell/N")
    return _jordan_axes(fig)


def jordan_noise_slider_figure() -> go.Figure:
    """Static twin (noise): N = 32, box 1e-3, curvature 1, one frame per noise level."""
    steps = [SliderStep(f"{s:g}", jordan_traces(5, 0.001, 1.0, s)) for s in NOISE_LEVELS]
    fig = slider_figure(steps, slider_label="oracle noise sigma, in units of m*ell/N", active=0,
                        fixed_axes=False, height=560,
                        title="Jordan's measurement distribution: oracle noise spreads a uniform haze")
    return _jordan_axes(fig)


def jordan_box_slider_figure() -> go.Figure:
    """Static twin (box size): N = 32, curvature 1, no noise, one frame per box side."""
    steps = [SliderStep(f"{b:g}", jordan_traces(5, b, 1.0, 0.0)) for b in BOX_SIDES]
    fig = slider_figure(steps, slider_label="box side ell", active=0, fixed_axes=False, height=560,
                        title="A larger box lets curvature blur the peak")
    return _jordan_axes(fig)


EXPLORER_JORDAN = Explorer("15", "jordan", jordan_figure, {
    "n_bits": Slider("bits per coordinate (N = 2^bits)", BIT_CHOICES, 5, fmt="{:d}"),
    "ell": Slider("box side ell", BOX_SIDES, 0.1),
    "curvature": Slider("curvature (H = c H0)", CURVATURES, 1.0),
    "noise": Slider("noise sigma / (m ell / N)", NOISE_LEVELS, 0.0),
}, description="Jordan visualiser: measurement distribution on the grid of gradient estimates")


# --------------------------------------------------------------------------------------------
# Figures and explorers: the query race
# --------------------------------------------------------------------------------------------

def _race_dim(d) -> int:
    d = check_int(d, "d", minimum=1)
    if d not in DIMS:
        raise ValueError(f"d must be one of {DIMS}, got {d}")
    return d


@lru_cache(maxsize=len(DIMS))
def _race_curves(d: int) -> dict:
    return {meth: race_run(meth, d, 0, RACE_STEPS[meth][d]).trace.thinned(200) for meth in RACE_METHODS}


def race_curves(d: int) -> dict:
    """Seed-0 runs at dimension ``d`` at the steps in :data:`RACE_STEPS` (computed per ``d`` on first
    use, then shared by the static race figure and its live twin)."""
    return _race_curves(_race_dim(d))


def race_traces(d: int) -> list:
    """``f(x_avg) - f*`` against cumulative queries, one line per method, and the target line."""
    curves = race_curves(d)
    out = []
    for i, meth in enumerate(RACE_METHODS):
        tr = curves[meth]
        qs = np.maximum(tr["queries"], 1.0)
        out.append(go.Scatter(x=qs, y=np.maximum(tr["gap"], 1e-4), mode="lines", name=meth,
                              line=dict(color=color_for(i), width=2.4)))
    out.append(go.Scatter(x=[1, 2e5], y=[TARGET, TARGET], mode="lines", name="target f - f* = 0.05",
                          line=dict(color="#555", dash="dash", width=1.5)))
    return out


def race_phases(d: int) -> dict:
    """Shade the query range from the first method's arrival at the target to the last one's (one
    band: the classical methods often finish close together, and two labels would collide)."""
    ends = sorted((float(race_curves(d)[m]["queries"][-1]), m) for m in RACE_METHODS)
    return phase_layout([Phase(ends[0][0], ends[2][0], f"{ends[0][1]} done first")], logx=True)


def _race_axes(fig: go.Figure) -> go.Figure:
    fig.update_xaxes(type="log", range=[0, np.log10(2e5)], title_text="cumulative oracle queries (log)")
    fig.update_yaxes(type="log", range=[np.log10(0.02), np.log10(1.5)], title_text="f(x_avg) - f* (log)")
    return fig


def race_slider_figure() -> go.Figure:
    """Static twin of the query race: one frame per dimension d."""
    steps = [SliderStep(f"{d}", race_traces(d), race_phases(d)) for d in DIMS]
    fig = slider_figure(steps, slider_label="dimension d", active=4, fixed_axes=False, height=500,
                        title="The query race: zeroth-order queries to reach f - f* <= 0.05")
    return _race_axes(fig)


def race_figure(d: int = 64) -> go.Figure:
    """Live twin of the query race for one dimension."""
    d = _race_dim(d)
    fig = go.Figure(race_traces(d), layout=race_phases(d))
    base_layout(fig, height=500, title=f"d = {d}: queries to reach f - f* <= 0.05")
    return _race_axes(fig)


EXPLORER_RACE = Explorer("15", "race", race_figure, {"d": Slider("dimension d", DIMS, 64, fmt="{:d}")},
                         description="Query race: gap against cumulative queries")


def scaling_figure(details: dict) -> go.Figure:
    """Queries to the target against d (log-log): one point per seed, the median joined, per method,
    with the quantum model's queries per estimate Q(d) and its median iterations (the criterion)."""
    if not isinstance(details, dict) or not {"table", "dims"} <= set(details):
        raise ValueError("details must be the query_scaling claim's details (with 'table' and 'dims')")
    table, dims = details["table"], details["dims"]
    fig = go.Figure()
    for i, (key, label) in enumerate((("quantum", "quantum model"), ("coordinate FD", "coordinate FD"),
                                      ("ZO-GD", "ZO-GD"))):
        c = color_for(i)
        xs = np.repeat(dims, [len(table[d][key]) for d in dims])
        ys = np.concatenate([table[d][key] for d in dims])
        fig.add_trace(go.Scatter(x=xs * (1 + 0.04 * (i - 1)), y=ys, mode="markers", marker=dict(color=c, size=6, opacity=0.5),
                                 showlegend=False, hovertemplate=f"{label}<br>d=%{{x:.0f}}<br>%{{y:,.0f}} queries<extra></extra>"))
        fig.add_trace(go.Scatter(x=dims, y=[np.median(table[d][key]) for d in dims], mode="lines+markers", name=label,
                                 line=dict(color=c, width=2.4), marker=dict(color=c, size=8)))
    fig.add_trace(go.Scatter(x=dims, y=[table[d]["Q"] for d in dims], mode="lines", name="Q(d): queries per estimate",
                             line=dict(color="#555", dash="dot", width=1.5)))
    fig.add_trace(go.Scatter(x=dims, y=[np.median(table[d]["iterations"]) for d in dims], mode="lines+markers",
                             name="quantum model: iterations (the criterion)",
                             line=dict(color=color_for(0), dash="dash", width=2), marker=dict(symbol="diamond", size=7)))
    base_layout(fig, height=480, title="Queries to f - f* <= 0.05 against the dimension (log-log)")
    fig.update_xaxes(type="log", title_text="dimension d (log)", tickvals=list(dims), ticktext=[str(d) for d in dims])
    fig.update_yaxes(type="log", title_text="oracle queries, or iterations (log)")
    return fig


BIT_SWEEP = (3, 4, 5, 6, 7, 8)
BIT_BUDGET = 5_000   # queries per run of the bit sweep (7 bits, the dearest that works, needs about half)


@lru_cache(maxsize=4)
def bit_sweep(d: int = NOISE_D, seeds: tuple[int, ...] = CLAIM_SEEDS) -> list[dict]:
    """At the noisy-oracle claim's setting, for each number of bits: the phase noise, the one-cell
    probability, the repetitions Q(d) that it requires (none above 7 bits) and the median queries
    and iterations to the target at the tuned 6-bit step."""
    d = check_int(d, "d", minimum=1)
    seeds = tuple(check_int(s, "seeds") for s in seeds)
    if not seeds:
        raise ValueError("seeds must not be empty")
    mult = float(race_tuning("quantum model", d, TUNE_SEEDS).best["mult"])
    rows = []
    for b in BIT_SWEEP:
        s = 2 * np.pi * 2 ** b * SIGMA_REL
        p = one_cell_probability(b, s)
        row = {"bits": b, "phase noise (rad)": s, "one-cell probability": p}
        try:
            r = repetitions_for(d, b)
        except ValueError:
            rows.append({**row, "Q(d)": np.nan, "queries": np.inf, "iterations": np.inf})
            continue
        runs = [race_run("quantum model", d, sd, mult, n_bits=b, budget=BIT_BUDGET) for sd in seeds]
        rows.append({**row, "Q(d)": r, "queries": float(np.median([queries_to_target(x) for x in runs])),
                     "iterations": float(np.median([iterations_to_target(x) for x in runs]))})
    return rows


def bit_sweep_figure(rows: list[dict]) -> go.Figure:
    """Median queries to the target against the bits per register, with Q(d) per estimate."""
    rows = list(rows)
    if not rows or any(not {"bits", "queries", "Q(d)"} <= set(r) for r in rows):
        raise ValueError("rows must be bit_sweep() rows (with 'bits', 'queries' and 'Q(d)')")
    bits = [r["bits"] for r in rows]
    q = [r["queries"] if np.isfinite(r["queries"]) else None for r in rows]
    fig = go.Figure([go.Bar(x=bits, y=q, name="queries to f - f* <= 0.05 (median)", marker_color=color_for(0)),
                     go.Scatter(x=bits, y=[r["Q(d)"] if np.isfinite(r["Q(d)"]) else None for r in rows],
                                mode="lines+markers", name="Q(d): queries per estimate", yaxis="y",
                                line=dict(color=color_for(2), width=2.4))])
    for r in rows:
        if not np.isfinite(r["queries"]):
            text = "no Q(d):<br>P(cell) <= 1/2" if not np.isfinite(r["Q(d)"]) else "target not<br>reached"
            fig.add_annotation(x=r["bits"], y=np.log10(30), text=text, showarrow=False,
                               font=dict(size=11))
    base_layout(fig, height=430, title=f"d = {NOISE_D}, oracle noise m*ell/1600: the bit budget")
    fig.update_xaxes(title_text="bits per register (resolution m / 2^bits)", tickvals=bits)
    fig.update_yaxes(type="log", title_text="queries (log)")
    return fig


# --------------------------------------------------------------------------------------------
# Numbers for the prose
# --------------------------------------------------------------------------------------------

def race_numbers(d: int = 64) -> dict[str, tuple]:
    """Queries to the target of each method's seed-0 run at dimension ``d`` (the race figure's)."""
    d = _race_dim(d)
    curves = race_curves(d)
    ends = {meth: float(curves[meth]["queries"][-1]) for meth in RACE_METHODS}
    return {"race_d": (d, "{:d}"), "race_2d": (2 * d, "{:d}"), "race_Q": (repetitions_for(d), "{:d}"),
            "race_q": (ends["quantum model"], "{:,.0f}"), "race_fd": (ends["coordinate FD"], "{:,.0f}"),
            "race_zo": (ends["ZO-GD"], "{:,.0f}"), "race_zo_over_fd": (ends["ZO-GD"] / ends["coordinate FD"], "{:.1f}"),
            "race_iters": (float(race_run("quantum model", d, 0, RACE_STEPS["quantum model"][d]).nit), "{:.0f}")}


def repetition_rows(dims=(2, 4, 16, 64, 1024)) -> list[dict]:
    """Q(d) without noise and for the chapter's noisy 6-bit oracle."""
    return [{"d": d, "Q(d), noise-free": median_repetitions(d, DELTA), "Q(d), 6 bits, noise m ell/1600": repetitions_for(d)}
            for d in dims]


def setting_numbers() -> dict[str, tuple]:
    """The noisy oracle's setting: phase noise and one-cell probability at 6 bits, Q(d) at the ends."""
    s = 2 * np.pi * 2 ** N_BITS * SIGMA_REL
    return {"noise_s6": (s, "{:.2f}"), "noise_p6": (one_cell_probability(N_BITS, s), "{:.2f}"),
            "noise_c6": (float(np.exp(-s * s)), "{:.2f}"), "Q_free_64": (median_repetitions(64, DELTA), "{:d}"),
            "Q_noisy_4": (repetitions_for(4), "{:d}"), "Q_noisy_64": (repetitions_for(64), "{:d}"),
            "Q_free_4": (median_repetitions(4, DELTA), "{:d}"), "sigma_den": (round(1 / SIGMA_REL), "{:,d}"),
            "Q_slope": (loglog_slope(np.array(DIMS, float), [repetitions_for(d) for d in DIMS]), "{:.2f}"),
            "ex_box_ratio": (0.15 / curvature_threshold(5), "{:.1f}"),
            **{f"coh_{tag}": (float(np.exp(-(2 * np.pi * v) ** 2)), "{:.2f}") for tag, v in (("01", 0.1), ("03", 0.3))},
            **{f"haze_{tag}": (float((1 - np.exp(-(2 * np.pi * v) ** 2)) / 1024), "{:.1e}")
               for tag, v in (("01", 0.1), ("03", 0.3))}}


def curvature_numbers(rows: list[dict]) -> dict[str, tuple]:
    """Joint success at 1x, 4x, 8x and 12x the card's rule-of-thumb box."""
    by = {r["box / rule-of-thumb box"]: r["joint success"] for r in rows}
    return {f"curv_{int(k)}x": (by[k], "{:.2f}") for k in (1.0, 4.0, 8.0, 12.0) if k in by}


def bit_numbers(rows: list[dict]) -> dict[str, tuple]:
    """The bit sweep's story: the cheapest setting, the coarse-grid slowdown, 7 bits' repetitions, 8 bits' refusal."""
    by = {r["bits"]: r for r in rows}
    finite = [r for r in rows if np.isfinite(r["queries"])]
    best = min(finite, key=lambda r: r["queries"])
    return {"bits_best": (best["bits"], "{:d}"), "bits_best_q": (best["queries"], "{:,.0f}"),
            "bits_q6": (by[6]["queries"], "{:,.0f}"), "bits_q7": (by[7]["queries"], "{:,.0f}"),
            "bits_Q7": (by[7]["Q(d)"], "{:.0f}"), "bits_Q6": (by[6]["Q(d)"], "{:.0f}"),
            "bits_budget": (BIT_BUDGET, "{:,d}"), "bits_it4": (by[4]["iterations"], "{:.0f}"), "bits_it6": (by[6]["iterations"], "{:.0f}"),
            "bits_p8": (by[8]["one-cell probability"], "{:.2f}"), "bits_s8": (by[8]["phase noise (rad)"], "{:.1f}")}
