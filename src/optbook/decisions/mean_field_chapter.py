"""Chapter 29: the book's experiments, figures, live explorers and claims for the approximate
proximal point (APP) method in monotone mean-field games. The games and methods are in
:mod:`optbook.decisions.mean_field`.
"""
from __future__ import annotations

from functools import lru_cache

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from ..claims import Criterion, Measured, claim
from ..core import Tuning, check_choice, check_int, grid_search, semilog_slope
from ..viz import Phase, SliderStep, base_layout, color_for, frame_note, phase_layout, slider_figure
from ..viz.style import line_style
from ..widgets import Choice, Explorer, Slider
from .mean_field import (FiniteMFG, app, beach_bar, damped_best_response, fictitious_play, mirror_descent,
                         random_policy, regularized_exploitability, rmd_step, rps_equilibrium, rps_game,
                         uniform_policy)

# --------------------------------------------------------------------------- the setting

#: The headline's protocol (fixed before the full run): generalised rock-paper-scissors, 3000
#: policy updates from a random Dirichlet(1) policy, 5 claim seeds, 3 held-out tuning seeds.
ITERS, FAST_ITERS = 3000, 1000
CLAIM_SEEDS, TUNING_SEEDS = (0, 1, 2, 3, 4), (100, 101, 102)
#: APP's number of inner RMD steps per proximal update (the card's working value; not tuned).
TAU = 20
#: Every method gets a grid of 9 settings (fast mode: 4), on its own scale.
GRIDS = {
    "APP": {"eta": (0.03, 0.1, 0.3), "lam": (0.3, 1.0, 3.0)},
    # The grids moved after a first full run that already reproduced (APP ~1e-15, RMD 0.04): RMD's first
    # lam grid (0.003, 0.03, 0.3) had its best on the edge and was widened twice (eta too); APP's first
    # lam grid (0.1, 0.3, 1) had its best at 1 and was shifted up one step. The criterion did not change.
    "RMD": {"eta": (0.01, 0.03, 0.1), "lam": (0.03, 0.1, 0.3)},
    "MD": {"eta": tuple(np.round(np.geomspace(0.001, 1.0, 9), 4))},
    "damped BR": {"beta": tuple(np.round(np.geomspace(0.001, 1.0, 9), 4))},
}
FAST_GRIDS = {
    "APP": {"eta": (0.1, 0.3), "lam": (0.3, 1.0)},
    "RMD": {"eta": (0.03, 0.1), "lam": (0.3, 1.0)},
    "MD": {"eta": (0.003, 0.03, 0.1, 0.3)},
    "damped BR": {"beta": (0.003, 0.03, 0.1, 0.3)},
}
BASELINES = ("MD", "RMD", "damped BR")
LABELS = {"APP": "APP", "MD": "MD (OMD)", "RMD": "RMD, fixed reference", "damped BR": "damped best response",
          "FP": "fictitious play (averaged)", "FP last": "fictitious play (last iterate)"}
#: Exploitability below this is numerical zero (ratios are taken against it).
ZERO = 1e-15


def start(seeds, game: FiniteMFG | None = None) -> np.ndarray:
    """Initial policies, one random Dirichlet(1) policy per seed: shape (len(seeds), H, S, A)."""
    game = rps_game() if game is None else game
    return np.stack([random_policy(game, int(s)) for s in seeds])


def _batched(method: str, settings: list[dict], seeds, iters: int, record_every: int | None = None,
             game: FiniteMFG | None = None, tau=TAU):
    """Every (setting, seed) pair in one batched run: exploitability of shape (records, settings, seeds)."""
    game = rps_game() if game is None else game
    pi0 = np.broadcast_to(start(seeds, game), (len(settings), len(seeds)) + game.shape).copy()

    def col(name):
        return np.array([s[name] for s in settings], dtype=float)[:, None] * np.ones((1, len(seeds)))

    kw = dict(record_every=record_every or iters)
    if method == "APP":
        t = np.full((len(settings), len(seeds)), tau, dtype=int) if np.ndim(tau) == 0 else tau
        return app(game, pi0, col("eta"), col("lam"), t, iters, **kw)
    if method in ("MD", "RMD"):
        return mirror_descent(game, pi0, col("eta"), iters, lam=col("lam") if method == "RMD" else 0.0, **kw)
    if method == "damped BR":
        return damped_best_response(game, pi0, col("beta"), iters, **kw)
    raise ValueError(f"method must be one of {tuple(GRIDS)}, got {method!r}")


@lru_cache(maxsize=4)
def tunings(fast: bool = False) -> dict[str, Tuning]:
    """Every method tuned the same way: its own grid of 9 settings (4 in fast mode), scored by the
    last iterate's exploitability after the claim's number of updates, median over 3 held-out seeds
    (1 in fast mode). All settings and seeds of a method run as one batch."""
    grids = FAST_GRIDS if fast else GRIDS
    seeds = TUNING_SEEDS[:1] if fast else TUNING_SEEDS
    iters = FAST_ITERS if fast else ITERS
    out = {}
    for m, grid in grids.items():
        keys = list(grid)
        settings = [dict(zip(keys, c)) for c in np.array(np.meshgrid(*grid.values(), indexing="ij")).reshape(len(keys), -1).T]
        final = np.maximum(_batched(m, settings, seeds, iters).final, ZERO)  # below ZERO is a tie
        lookup = {tuple(s.values()): final[i] for i, s in enumerate(settings)}
        out[m] = grid_search(LABELS[m], lambda seed, **st: lookup[tuple(st.values())][seeds.index(seed)], grid, seeds)
    return out


def best(method: str, fast: bool = False) -> dict:
    """A method's tuned setting."""
    method = check_choice(method, "method", tuple(GRIDS))
    return {k: float(v) for k, v in tunings(fast)[method].best.items()}


@lru_cache(maxsize=4)
def control_tuning(claim: str, fast: bool = False) -> Tuning:
    """The negative control of a claim (``"last_iterate"`` or ``"beach_bar"``), APP with ``tau = 1``,
    tuned like APP: on APP's own grid, over the same held-out seeds and number of updates. Tuned, its
    failure is the missing proximal loop, not a step size chosen for ``tau > 1`` (``tau = 1`` is MD
    with step ``eta / (1 + eta lam)``)."""
    claim = check_choice(claim, "claim", ("last_iterate", "beach_bar"))
    if claim == "last_iterate":
        grid, seeds = (FAST_GRIDS, TUNING_SEEDS[:1]) if fast else (GRIDS, TUNING_SEEDS)
        game, iters = rps_game(), (FAST_ITERS if fast else ITERS)
    else:
        grid, seeds = (BAR_FAST_GRIDS, BAR_TUNING_SEEDS[:1]) if fast else (BAR_GRIDS, BAR_TUNING_SEEDS)
        game, iters = beach_bar(variant="skew"), (BAR_CLAIM_FAST_ITERS if fast else BAR_CLAIM_ITERS)
    grid = grid["APP"]
    settings = _settings(grid)
    final = np.maximum(_batched("APP", settings, seeds, iters, game=game, tau=1).final, ZERO)
    lookup = {tuple(st.values()): final[i] for i, st in enumerate(settings)}
    return grid_search("APP, tau = 1 (control)", lambda seed, **st: lookup[tuple(st.values())][seeds.index(seed)],
                       grid, seeds)


def _control_best(claim: str, fast: bool) -> dict:
    return {k: float(v) for k, v in control_tuning(claim, fast).best.items()}


def _ctl_label(claim: str, fast: bool) -> str:
    b = _control_best(claim, fast)
    return f"APP tau=1 (tuned: eta {b['eta']:g}, lam {b['lam']:g})"


@lru_cache(maxsize=2)
def tuned_runs(fast: bool = False) -> dict:
    """Every method at its tuned setting on the claim seeds (exploitability every 25 updates), plus
    fictitious play (no parameter) and APP with tau = 1 (the control)."""
    seeds, record_every = (CLAIM_SEEDS[:2] if fast else CLAIM_SEEDS), 25
    iters = FAST_ITERS if fast else ITERS
    game, pi0 = rps_game(), start(seeds)
    runs = {m: _batched(m, [best(m, fast)], seeds, iters, record_every) for m in GRIDS}
    runs = {m: type(r)(r.method, r.policy[0], r.iterations, r.exploitability[:, 0], params=best(m, fast))
            for m, r in runs.items()}
    runs["FP"] = fictitious_play(game, pi0, iters, record_every=record_every)
    return runs


def control_run(fast: bool = False):
    """The headline's control on the claim seeds: APP with tau = 1 at its own tuned setting."""
    seeds = CLAIM_SEEDS[:2] if fast else CLAIM_SEEDS
    iters = FAST_ITERS if fast else ITERS
    b = _control_best("last_iterate", fast)
    return app(rps_game(), start(seeds), b["eta"], b["lam"], 1, iters, record_every=25)


def fitted_rate(iterations: np.ndarray, gaps: np.ndarray, floor: float = 1e-12) -> float:
    """Minus the least-squares slope of ln(gap) against the iteration, over the records above
    ``floor`` (the numerical noise floor): the exponential rate per update (0 when nothing decays)."""
    keep = gaps > floor
    if keep.sum() < 3:
        keep = np.zeros_like(keep)
        keep[: max(3, int((gaps > 0).sum()))] = True
    return -semilog_slope(np.asarray(iterations, float)[keep], gaps[keep])


# --------------------------------------------------------------------------- claims


@claim("29", "APP's last iterate reaches the equilibrium of a non-strictly monotone MFG; MD, RMD and damped BR do not",
       kind="reproduction",
       paper="The last iterate of the KL proximal-point update converges to an equilibrium of a monotone (not "
             "strictly) MFG, and APP, a few mirror-descent steps per proximal update, 'reliably converges to "
             "the unregularised mean-field equilibrium without time-averaging' (Beach Bar Process; the paper "
             "plots exploitability and gives no number)",
       expect="generalised rock-paper-scissors as a two-step MFG (skew-symmetric payoff: monotone, not strictly), "
              "3000 updates from random Dirichlet policies, 5 seeds; every method tuned on its own 9-setting grid "
              "over 3 held-out seeds (APP: eta x lam with tau = 20). Median last-iterate exploitability of APP <= "
              "1e-3 and >= 100x below each tuned baseline's median (MD, RMD with fixed uniform reference, damped "
              "best response) - the issue's rule, as the paper gives no number. Premise: tuned MD's last iterate "
              "does not converge (median exploitability >= 1e-2). Disclosed: the grids moved after a first full "
              "run that had already reproduced (APP ~1e-15, tuned RMD 0.04): RMD's lam grid, first (0.003, 0.03, "
              "0.3) with its best on the edge, was widened twice (eta too); APP's lam grid, first (0.1, 0.3, 1) "
              "with its best at 1, was shifted up one step. The criterion did not change",
       control="APP with one inner step (tau = 1: the reference is always the current policy, so the proximal "
               "term vanishes and APP is plain mirror descent with step eta/(1 + eta lam)), tuned like APP on "
               "APP's own grid and held-out seeds (referee's change: first run at APP's tuned eta, lam, where it "
               "also failed)",
       name="last_iterate")
def claim_last_iterate(fast: bool = False, control: bool = False) -> Measured:
    seeds = CLAIM_SEEDS[:2] if fast else CLAIM_SEEDS
    runs = dict(tuned_runs(fast))
    key = "APP, tau = 1" if control else "APP"
    if control:
        runs[key] = control_run(fast)
    med = {m: float(np.median(runs[m].final)) for m in (key, *BASELINES)}
    ours = max(med[key], ZERO)
    ratios = {m: med[m] / ours for m in BASELINES}
    run = runs[key]
    e = run.exploitability
    values = {"exploitability": med[key], "exploitability_max": float(np.max(run.final)),
              "ratio_min": min(ratios.values()), **{f"ratio_{_slug(m)}": r for m, r in ratios.items()},
              **{f"expl_{_slug(m)}": med[m] for m in BASELINES},
              "expl_fp_averaged": float(np.median(runs["FP"].averaged_exploitability[-1])),
              "expl_fp_last": float(np.median(runs["FP"].final)),
              "rate": float(np.median([fitted_rate(run.iterations, e[:, i]) for i in range(e.shape[1])]))}
    values |= {f"{p}_{_slug(m)}": v for m in ("APP", *BASELINES) for p, v in best(m, fast).items()}
    return Measured(values, criteria=[Criterion("exploitability", "<=", 1e-3), Criterion("ratio_min", ">=", 100.0)],
                    seeds=seeds, precondition=bool(med["MD"] >= 1e-2),
                    details={"tunings": list(tunings(fast).values()), "runs": runs},
                    summary=f"{_ctl_label('last_iterate', fast) if control else 'APP'}: median exploitability {med[key]:.1e}; tuned MD "
                            f"{med['MD']:.2f}, RMD {med['RMD']:.1e}, damped BR {med['damped BR']:.2f}; smallest "
                            f"ratio {values['ratio_min']:.1e}")


def _slug(m: str) -> str:
    return {"APP": "app", "MD": "md", "RMD": "rmd", "damped BR": "dbr"}[m]


#: The beach-bar claim's protocol: skew Beach Bar, 1000 updates, APP with tau = 10, each method on its
#: own 9-setting grid (fast: 4), 2 held-out tuning seeds (fast: 1). First registered (commit 339cbac)
#: with 2000 updates and MD's grid from 0.1: that full run reproduced (APP 2.5e-3, MD 0.17, premise
#: 9.1e-4 at MD's skew-tuned step) but took 32 s, over the page's budget, and MD's best was on the
#: grid's edge; cut to 1000 updates, MD's grid widened down, and the premise's MD tuned on the strict
#: version itself (at 1000 updates MD's skew-tuned small step has not converged there yet).
BAR_CLAIM_ITERS, BAR_CLAIM_FAST_ITERS, BAR_TAU, BAR_TUNING_SEEDS = 1000, 400, 10, (100, 101)
BAR_GRIDS = {"APP": {"eta": (3.0, 10.0, 30.0), "lam": (0.03, 0.1, 0.3)},
             "MD": {"eta": tuple(np.round(np.geomspace(0.03, 10.0, 9), 3))}}
BAR_FAST_GRIDS = {"APP": {"eta": (3.0, 10.0), "lam": (0.1, 0.3)}, "MD": {"eta": (0.1, 0.3, 1.0, 3.0)}}


def _settings(grid: dict) -> list[dict]:
    keys = list(grid)
    return [dict(zip(keys, c)) for c in np.array(np.meshgrid(*grid.values(), indexing="ij")).reshape(len(keys), -1).T]


@lru_cache(maxsize=2)
def bar_tunings(fast: bool = False) -> dict[str, Tuning]:
    """APP and MD tuned on the skew Beach Bar, and MD on the strict one (the premise): last-iterate
    exploitability after the claim's number of updates, median over the held-out seeds, every
    setting of a method in one batch."""
    grids, seeds = (BAR_FAST_GRIDS, BAR_TUNING_SEEDS[:1]) if fast else (BAR_GRIDS, BAR_TUNING_SEEDS)
    iters = BAR_CLAIM_FAST_ITERS if fast else BAR_CLAIM_ITERS
    out = {}
    for name, m, variant in (("APP", "APP", "skew"), ("MD", "MD", "skew"), ("MD strict", "MD", "strict")):
        game, grid = beach_bar(variant=variant), grids[m]
        settings = _settings(grid)
        final = np.maximum(_batched(m, settings, seeds, iters, game=game, tau=BAR_TAU).final, ZERO)
        lookup = {tuple(st.values()): final[i] for i, st in enumerate(settings)}
        label = LABELS[m] + (" on the strict version" if variant == "strict" else "")
        out[name] = grid_search(label, lambda seed, lookup=lookup, **st: lookup[tuple(st.values())][seeds.index(seed)],
                                grid, seeds)
    return out


@lru_cache(maxsize=2)
def _bar_baselines(fast: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The beach-bar claim's baselines on the claim seeds (shared by the claim and its control): tuned
    MD on the skew game, MD tuned on the strict game, averaged fictitious play on the skew game."""
    seeds = CLAIM_SEEDS[:2] if fast else CLAIM_SEEDS
    iters = BAR_CLAIM_FAST_ITERS if fast else BAR_CLAIM_ITERS
    tun = bar_tunings(fast)
    skew, strict = beach_bar(variant="skew"), beach_bar()
    md = mirror_descent(skew, start(seeds, skew), float(tun["MD"].best["eta"]), iters, record_every=iters).final
    md_strict = mirror_descent(strict, start(seeds, strict), float(tun["MD strict"].best["eta"]), iters,
                               record_every=iters).final
    fp = fictitious_play(skew, start(seeds, skew), iters, record_every=iters).averaged_exploitability[-1]
    return md, md_strict, fp


@claim("29", "On the skew Beach Bar only APP's last iterate converges; on the strict one MD converges too",
       kind="reproduction",
       paper="On the Beach Bar Process APP 'reliably converges to the unregularised mean-field equilibrium without "
             "time-averaging' where mirror descent needs strict monotonicity (no number in the paper)",
       expect="skew Beach Bar (15 positions on a ring, H = 10, a skew-symmetric chasing term in place of -log mu: "
              "monotone, not strictly), 1000 updates from 5 random policies; APP (tau = 10) and MD each tuned on a "
              "9-setting grid over 2 held-out seeds. Median last-iterate exploitability of APP <= 1e-2 (two orders "
              "below the start, about 1.8) and >= 10x below tuned MD's (an order of magnitude: 'converges' against "
              "'does not'). Premise: on the strict version (-log mu) MD, tuned there on the same grid, converges to "
              "<= 1e-3, so its failure on the skew version is the missing strict monotonicity. Disclosed: first "
              "registered with 2000 updates and the premise at MD's skew-tuned step; that full run reproduced "
              "(APP 2.5e-3, MD 0.17, premise 9.1e-4) but was over the page's time budget, so it was cut to 1000",
       control="APP with one inner step (tau = 1, plain mirror descent with step eta/(1 + eta lam)), tuned like "
               "APP on APP's own grid and held-out seeds (referee's change: it was first run at APP's tuned eta = 10, "
               "lam = 0.1, a step of 5 at which tau = 1 fails even on the strict version, exploitability 2.1, so its "
               "failure did not isolate the missing proximal loop; tuned, it reaches 2e-4 on the strict version and "
               "still fails on the skew one)",
       name="beach_bar")
def claim_beach_bar(fast: bool = False, control: bool = False) -> Measured:
    seeds = CLAIM_SEEDS[:2] if fast else CLAIM_SEEDS
    iters = BAR_CLAIM_FAST_ITERS if fast else BAR_CLAIM_ITERS
    tun = bar_tunings(fast)
    b_app, b_md, b_strict = ({k: float(v) for k, v in tun[m].best.items()} for m in ("APP", "MD", "MD strict"))
    skew = beach_bar(variant="skew")
    b_run = _control_best("beach_bar", fast) if control else b_app
    ours = app(skew, start(seeds, skew), b_run["eta"], b_run["lam"], 1 if control else BAR_TAU, iters,
               record_every=iters).final
    md, md_strict, fp = _bar_baselines(fast)
    med = float(np.median(ours))
    values = {"exploitability": med, "exploitability_max": float(ours.max()), "expl_md": float(np.median(md)),
              "ratio_md": float(np.median(md)) / max(med, ZERO), "expl_md_strict": float(np.median(md_strict)),
              "expl_fp_averaged": float(np.median(fp)), "eta_app": b_app["eta"], "lam_app": b_app["lam"],
              "eta_md": b_md["eta"], "eta_md_strict": b_strict["eta"]}
    return Measured(values, criteria=[Criterion("exploitability", "<=", 1e-2), Criterion("ratio_md", ">=", 10.0)],
                    seeds=seeds, precondition=bool(values["expl_md_strict"] <= 1e-3),
                    details={"tunings": list(tun.values())},
                    summary=f"{_ctl_label('beach_bar', fast) if control else 'APP'}: {med:.1e}; tuned MD {values['expl_md']:.2f} "
                            f"(strict version: {values['expl_md_strict']:.1e}); averaged FP {values['expl_fp_averaged']:.1e}")


#: The rate claim's settings: RMD with eta = 0.1, lam = 0.5 towards the uniform policy.
RATE_ETA, RATE_LAM, RATE_ITERS = 0.1, 0.5, 400


@lru_cache(maxsize=4)
def rate_runs(fast: bool = False, control: bool = False) -> dict:
    """Gap per record (every 10 updates) of RMD (or, as the control, MD with the same eta) from 5
    random policies on both non-strict games: regularised exploitability for RMD (its target is
    the regularised equilibrium), plain exploitability for MD."""
    from .mean_field import _exploitability, _mean_field
    seeds = CLAIM_SEEDS[:2] if fast else CLAIM_SEEDS
    iters = RATE_ITERS // 2 if fast else RATE_ITERS
    out = {}
    for name, game in (("rps", rps_game()), ("beach_skew", beach_bar(variant="skew"))):
        sigma = uniform_policy(game)
        pi = start(seeds, game)
        lam = 0.0 if control else RATE_LAM
        ts, gaps = [], []
        for t in range(iters + 1):
            if t % 10 == 0:
                ts.append(t)
                gaps.append(_exploitability(game, pi, _mean_field(game, pi)) if control
                            else regularized_exploitability(game, pi, RATE_LAM, sigma))
            if t < iters:
                pi = rmd_step(game, pi, sigma, lam, RATE_ETA)
        out[name] = (np.array(ts), np.array(gaps))
    return out


@claim("29", "RMD's last iterate converges exponentially to the regularised equilibrium",
       kind="reproduction",
       paper="Mirror descent on the KL-regularised MFG (RMD) converges to its equilibrium with an exponential "
             "last-iterate rate (Theorem in the paper; the constant is reconstructed here as the strongly monotone "
             "contraction 1/(1 + eta lam) per step)",
       expect="RMD with eta = 0.1, lam = 0.5, uniform reference, 400 updates from 5 random policies on each "
              "non-strict game (rock-paper-scissors, skew Beach Bar): the fitted exponential rate of the regularised "
              "exploitability (least squares of its log over the records above 1e-12) is at least ln(1 + eta lam) "
              "per update in the median over seeds, on both games (rate ratio >= 1)",
       control="the regularisation removed (lam = 0, plain mirror descent with the same eta), its gap to its own "
               "target (the unregularised equilibrium) measured the same way",
       name="rmd_rate")
def claim_rmd_rate(fast: bool = False, control: bool = False) -> Measured:
    runs = rate_runs(fast, control)
    seeds = CLAIM_SEEDS[:2] if fast else CLAIM_SEEDS
    theory = float(np.log1p(RATE_ETA * RATE_LAM))
    values = {"theory_rate": theory}
    for name, (ts, gaps) in runs.items():
        rates = np.array([fitted_rate(ts, gaps[:, i]) for i in range(gaps.shape[1])])
        values[f"rate_{name}"] = float(np.median(rates))
        values[f"ratio_{name}"] = float(np.median(rates)) / theory
        values[f"ratio_{name}_min"] = float(rates.min()) / theory
    values["ratio_min"] = min(values["ratio_rps"], values["ratio_beach_skew"])
    return Measured(values, criteria=[Criterion("ratio_min", ">=", 1.0)], seeds=seeds, details=runs,
                    summary=f"{'MD' if control else 'RMD'}: fitted rate {values['rate_rps']:.3f} (RPS), "
                            f"{values['rate_beach_skew']:.3f} (skew beach bar) per update; ln(1 + eta lam) = {theory:.3f}")


@claim("29", "APP with one inner step is mirror descent with step eta/(1 + eta lam)", kind="identity",
       expect="on rock-paper-scissors from 3 random policies, 300 updates of APP(eta = 0.2, lam = 0.5, tau = 1) "
              "and MD(eta = 0.2/1.1) agree to 1e-12 in every policy entry; the exploitability of the analytic "
              "equilibrium (null vector of M) is below 1e-14",
       name="tau_one_is_md")
def claim_tau_one(fast: bool = False) -> Measured:
    game, pi0 = rps_game(), start((7, 8, 9))
    a = app(game, pi0, 0.2, 0.5, 1, 300, record_every=300)
    m = mirror_descent(game, pi0, 0.2 / 1.1, 300, record_every=300)
    eq = uniform_policy(game)
    eq[0, 0] = rps_equilibrium()
    from .mean_field import exploitability
    gap, at_eq = float(np.abs(a.policy - m.policy).max()), float(exploitability(game, eq))
    return Measured({"max_gap": gap, "expl_at_equilibrium": at_eq}, holds=bool(gap <= 1e-12 and at_eq <= 1e-14),
                    summary=f"APP(tau = 1) vs MD: {gap:.0e}; Expl(equilibrium) = {at_eq:.0e}")


GLUE_FORMATS = {
    "last_iterate": {**{k: "{:.1e}" for k in ("exploitability", "exploitability_max", "ratio_min", "ratio_md",
                                              "ratio_rmd", "ratio_dbr", "expl_rmd", "expl_fp_averaged")},
                     "expl_md": "{:.2f}", "expl_dbr": "{:.2f}", "expl_fp_last": "{:.2f}", "rate": "{:.3f}",
                     **{k: "{:g}" for k in ("eta_app", "lam_app", "eta_md", "eta_rmd", "lam_rmd", "beta_dbr")}},
    "rmd_rate": {k: "{:.3f}" for k in ("theory_rate", "rate_rps", "rate_beach_skew")}
    | {k: "{:.2f}" for k in ("ratio_rps", "ratio_beach_skew", "ratio_rps_min", "ratio_beach_skew_min", "ratio_min")},
    "beach_bar": {k: "{:.1e}" for k in ("exploitability", "exploitability_max", "expl_md_strict", "expl_fp_averaged")}
    | {"expl_md": "{:.2f}", "ratio_md": "{:.0f}", "eta_app": "{:g}", "lam_app": "{:g}", "eta_md": "{:g}",
       "eta_md_strict": "{:g}"},
    "tau_one_is_md": {"max_gap": "{:.0e}", "expl_at_equilibrium": "{:.0e}"},
}

# --------------------------------------------------------------------------- figures


def exploitability_figure(fast: bool = False) -> go.Figure:
    """Last-iterate exploitability against updates, every method tuned (median over the claim seeds
    and its range as a band), with fictitious play's averaged and last iterates."""
    runs = tuned_runs(fast)
    fig = go.Figure()
    series = [("APP", runs["APP"].exploitability), ("MD", runs["MD"].exploitability),
              ("RMD", runs["RMD"].exploitability), ("damped BR", runs["damped BR"].exploitability),
              ("FP", runs["FP"].averaged_exploitability), ("FP last", runs["FP"].exploitability)]
    for i, (m, e) in enumerate(series):
        t = runs["APP"].iterations if m != "FP" and m != "FP last" else runs["FP"].iterations
        e = np.maximum(e, ZERO)
        style = line_style(i)
        fig.add_trace(go.Scatter(x=t, y=np.median(e, 1), name=LABELS[m], mode="lines", **style))
    base_layout(fig, logy=True, height=470, xaxis_title="policy updates t",
                yaxis_title="exploitability of the iterate",
                title="Rock-paper-scissors MFG: last-iterate exploitability, each method tuned (median of 5 seeds)")
    t = runs["APP"].iterations
    fig.add_trace(go.Scatter(x=[t[0], t[-1]], y=[1e-3, 1e-3], mode="lines", name="criterion: 1e-3",
                             line=dict(color="#888", dash="dot", width=1.5)))
    fig.update_layout(**phase_layout(app_phases(fast)))
    return fig


def app_phases(fast: bool = False) -> list[Phase]:
    """APP's phases on the tuned runs, read off its median curve: transient (until it first falls
    below 1e-2), linear (until it first reaches 1e-14), machine precision (the rest)."""
    r = tuned_runs(fast)["APP"]
    med, t = np.median(r.exploitability, 1), r.iterations
    a = t[np.argmax(med < 1e-2)] if np.any(med < 1e-2) else t[-1]
    b = t[np.argmax(med <= 1e-14)] if np.any(med <= 1e-14) else t[-1]
    phases = [Phase(0, float(a), "transient")]
    if b > a:
        phases.append(Phase(float(a), float(b), "APP: linear"))
    if t[-1] > b:
        phases.append(Phase(float(b), float(t[-1]), "machine precision"))
    return phases


#: The simplex explorer's grid: APP's inner steps tau and regularisation lam (eta fixed).
SIMPLEX_TAUS, SIMPLEX_LAMS, SIMPLEX_ETA, SIMPLEX_ITERS, SIMPLEX_SEED = (1, 3, 10, 30, 100), (0.1, 0.3, 1.0), 0.1, 600, 0


@lru_cache(maxsize=1)
def simplex_runs() -> dict:
    """mu_1 (the step-1 population) along APP runs over the (tau, lam) grid, MD and fixed-reference
    RMD, from one random policy: one batched run per method."""
    game = rps_game()
    pi0 = start((SIMPLEX_SEED,))[0]
    grid = [(t, l) for t in SIMPLEX_TAUS for l in SIMPLEX_LAMS]
    P = np.broadcast_to(pi0, (len(grid),) + game.shape).copy()
    a = app(game, P, SIMPLEX_ETA, np.array([g[1] for g in grid]), np.array([g[0] for g in grid]), SIMPLEX_ITERS,
            keep_mean_fields=True)
    md = mirror_descent(game, pi0, SIMPLEX_ETA, SIMPLEX_ITERS, keep_mean_fields=True)
    rmd = mirror_descent(game, np.broadcast_to(pi0, (3,) + game.shape).copy(), SIMPLEX_ETA, SIMPLEX_ITERS,
                         lam=np.array(SIMPLEX_LAMS), keep_mean_fields=True)
    out = {("APP", t, l): (a.mean_fields[:, i, 1], a.exploitability[:, i]) for i, (t, l) in enumerate(grid)}
    out["MD"] = (md.mean_fields[:, 1], md.exploitability)
    out |= {("RMD", l): (rmd.mean_fields[:, i, 1], rmd.exploitability[:, i]) for i, l in enumerate(SIMPLEX_LAMS)}
    return out


def _ternary_traces(tau: int, lam: float) -> list:
    runs = simplex_runs()
    eq = rps_equilibrium()
    out = []
    for i, (name, key) in enumerate((("MD", "MD"), (f"RMD, fixed reference (lam = {lam:g})", ("RMD", lam)),
                                     (f"APP (tau = {tau}, lam = {lam:g})", ("APP", tau, lam)))):
        mu, _ = runs[key]
        out.append(go.Scatterternary(a=mu[:, 0], b=mu[:, 1], c=mu[:, 2], mode="lines", name=name.split(" (")[0],
                                     line=dict(color=color_for([1, 2, 0][i]), width=2 if i < 2 else 3),
                                     hovertemplate="rock %{a:.3f}<br>paper %{b:.3f}<br>scissors %{c:.3f}"))
    out.append(go.Scatterternary(a=[eq[0]], b=[eq[1]], c=[eq[2]], mode="markers", name="equilibrium",
                                 marker=dict(symbol="star", size=16, color="black")))
    return out


def _ternary_note(tau: int, lam: float) -> str:
    runs = simplex_runs()
    e = {k: runs[key][1][-1] for k, key in (("MD", "MD"), ("RMD", ("RMD", lam)), ("APP", ("APP", tau, lam)))}
    return f"after {SIMPLEX_ITERS} updates: " + ", ".join(f"{k} {max(v, ZERO):.0e}" for k, v in e.items())


def _ternary_layout(fig: go.Figure, title: str | None) -> go.Figure:
    base_layout(fig, height=540, title=title)
    fig.update_layout(**TERNARY_LAYOUT)
    return fig


TERNARY_LAYOUT = dict(ternary=dict(sum=1, aaxis=dict(title="rock"), baxis=dict(title="paper"),
                                   caxis=dict(title="scissors"), domain=dict(x=[0.12, 0.88], y=[0, 0.86])),
                      margin=dict(l=60, r=60, t=120))


def simplex_figure(tau: int = 30, lam: float = 0.3) -> go.Figure:
    """Live twin: the population at step 1 on the simplex along MD, fixed-reference RMD and APP.

    Every (tau, lam) figure is built on the first call and kept as a plain dict; a move only wraps
    one without re-validating it (about 1 ms of CPU, where building one costs 20-30 ms)."""
    tau = check_int(tau, "tau", minimum=1)
    if tau not in SIMPLEX_TAUS or lam not in SIMPLEX_LAMS:
        raise ValueError(f"tau must be one of {SIMPLEX_TAUS} and lam one of {SIMPLEX_LAMS}, got {tau}, {lam}")
    return go.Figure(_simplex_figures()[(tau, float(lam))], _validate=False)


@lru_cache(maxsize=1)
def _simplex_figures() -> dict:
    return {(t, float(l)): _build_simplex_figure(t, l).to_dict() for t in SIMPLEX_TAUS for l in SIMPLEX_LAMS}


def _build_simplex_figure(tau: int, lam: float) -> go.Figure:
    fig = go.Figure(_ternary_traces(tau, lam))
    fig.add_annotation(**frame_note(_ternary_note(tau, lam))["annotations"][0] | dict(xref="paper", yref="paper", y=1.0))
    return _ternary_layout(fig, f"Population mu_1 on the simplex, tau = {tau}, lam = {lam:g}")


def simplex_slider_figure(lam: float = 0.3) -> go.Figure:
    """Static twin of the simplex explorer: one frame per tau (lam fixed)."""
    if lam not in SIMPLEX_LAMS:
        raise ValueError(f"lam must be one of {SIMPLEX_LAMS}, got {lam}")
    steps = []
    for tau in SIMPLEX_TAUS:
        note = frame_note(_ternary_note(tau, lam))
        note["annotations"][0] |= dict(xref="paper", yref="paper", y=1.0)
        steps.append(SliderStep(str(tau), _ternary_traces(tau, lam), note))
    fig = slider_figure(steps, slider_label="APP inner steps tau", active=3, fixed_axes=False, height=580,
                        title=f"Rock-paper-scissors: the step-1 population along each method (lam = {lam:g}, "
                              f"eta = {SIMPLEX_ETA:g}, {SIMPLEX_ITERS} updates)")
    fig.update_layout(**TERNARY_LAYOUT)
    fig.update_layout(margin=dict(b=110))
    return fig


#: The beach-bar explorer: APP's inner steps (tau = 1 is MD), 1000 updates, eta = 1, lam = 0.1.
BAR_TAUS, BAR_ETA, BAR_LAM, BAR_ITERS = (1, 3, 10, 30), 1.0, 0.1, 1000


def bar_runs(variant: str = "skew") -> dict:
    """APP on the Beach Bar Process for every tau of the grid, mean fields kept at the half-way and
    final records. Both variants are computed on the first call (so that no explorer move waits)."""
    return _bar_runs()[check_choice(variant, "variant", ("strict", "skew"))]


@lru_cache(maxsize=1)
def _bar_runs() -> dict:
    out = {}
    for variant in ("strict", "skew"):
        game = beach_bar(variant=variant)
        pi0 = np.broadcast_to(random_policy(game, 0), (len(BAR_TAUS),) + game.shape).copy()
        r = app(game, pi0, BAR_ETA, BAR_LAM, np.array(BAR_TAUS), BAR_ITERS, record_every=BAR_ITERS // 30,
                keep_mean_fields=True)
        half = len(r.iterations) // 2
        out[variant] = {tau: {"mid": r.mean_fields[half, i], "end": r.mean_fields[-1, i], "t": r.iterations,
                              "expl": r.exploitability[:, i], "t_mid": int(r.iterations[half])}
                        for i, tau in enumerate(BAR_TAUS)}
    return out


def _bar_traces(variant: str, tau: int) -> list:
    d = bar_runs(variant)[tau]
    zmax = max(max(v["mid"].max(), v["end"].max()) for v in bar_runs(variant).values())
    common = dict(colorscale="Viridis", zmin=0, zmax=zmax, hovertemplate="position %{x}, step %{y}: %{z:.3f}")
    return [go.Heatmap(z=d["mid"], xaxis="x", yaxis="y", showscale=False, **common),
            go.Heatmap(z=d["end"], xaxis="x2", yaxis="y2", colorbar=dict(title="mu_h(x)", len=0.8), **common)]


def _bar_note(variant: str, tau: int) -> str:
    d = bar_runs(variant)[tau]
    return (f"{'MD (tau = 1)' if tau == 1 else f'APP, tau = {tau}'}: exploitability {d['expl'][-1]:.1e}; "
            f"largest change {np.abs(d['end'] - d['mid']).max():.3f}")


def _bar_layout(fig, variant, title):
    d = bar_runs(variant)[BAR_TAUS[0]]
    fig.update_layout(xaxis=dict(domain=[0, 0.44], title=f"position x (update {d['t_mid']})"),
                      xaxis2=dict(domain=[0.52, 0.96], title=f"position x (update {BAR_ITERS})", anchor="y2"),
                      yaxis=dict(title="time step h"), yaxis2=dict(anchor="x2", matches="y", showticklabels=False))
    return fig


def bar_slider_figure(variant: str = "skew") -> go.Figure:
    """Static twin of the beach-bar explorer: one frame per tau (tau = 1 is MD)."""
    variant = check_choice(variant, "variant", ("strict", "skew"))
    steps = [SliderStep(str(t), _bar_traces(variant, t), _note_paper(_bar_note(variant, t))) for t in BAR_TAUS]
    fig = slider_figure(steps, slider_label="APP inner steps tau (1 = MD)", active=2, fixed_axes=False, height=520,
                        title=f"Beach bar ({variant}): population mu_h(x) half-way (left) and at the end (right)")
    return _bar_layout(fig, variant, None)


def _note_paper(text):
    note = frame_note(text)
    # anchored in pixels above the plot area: a phone stacks the panels into a taller figure, where
    # a note at a paper height above 1 fell outside the figure
    note["annotations"][0] |= dict(xref="paper", yref="paper", y=1.0, yanchor="bottom", yshift=12)
    return note


def bar_figure(variant: str = "skew", tau: int = 10) -> go.Figure:
    """Live twin of the beach-bar explorer (every figure built on the first call and kept as a dict,
    as for :func:`simplex_figure`)."""
    variant = check_choice(variant, "variant", ("strict", "skew"))
    tau = check_int(tau, "tau", minimum=1)
    if tau not in BAR_TAUS:
        raise ValueError(f"tau must be one of {BAR_TAUS}, got {tau}")
    return go.Figure(_bar_figures()[(variant, tau)], _validate=False)


@lru_cache(maxsize=1)
def _bar_figures() -> dict:
    return {(v, t): _build_bar_figure(v, t).to_dict() for v in ("strict", "skew") for t in BAR_TAUS}


def _build_bar_figure(variant: str, tau: int) -> go.Figure:
    fig = go.Figure(_bar_traces(variant, tau), layout=_note_paper(_bar_note(variant, tau)))
    base_layout(fig, height=500, title=f"Beach bar ({variant}), tau = {tau}")
    return _bar_layout(fig, variant, None)


def bar_numbers() -> dict[str, float]:
    """The beach-bar figures the prose cites: final exploitability of MD (tau = 1) and APP (tau = 10)
    on both variants."""
    return {f"bar_{v}_{k}": float(bar_runs(v)[t]["expl"][-1]) for v in ("strict", "skew")
            for k, t in (("md", 1), ("app", 10))}


def rate_figure(control: bool = False) -> go.Figure:
    """The rate claim's curves: RMD's regularised exploitability (both games, every seed) against
    updates, beside the slope ln(1 + eta lam) of the reconstructed theorem."""
    runs = rate_runs(False, control)
    fig = make_subplots(rows=1, cols=2, shared_yaxes=True, horizontal_spacing=0.1)
    theory = np.log1p(RATE_ETA * RATE_LAM)
    for c, (name, (ts, gaps)) in enumerate(runs.items(), start=1):
        for i in range(gaps.shape[1]):
            fig.add_trace(go.Scatter(x=ts, y=np.maximum(gaps[:, i], ZERO), mode="lines", name="RMD, one seed",
                                     line=dict(color=color_for(0), width=1.5), showlegend=(c == 1 and i == 0)), 1, c)
        g0 = float(np.median(gaps[0]))
        fig.add_trace(go.Scatter(x=ts, y=g0 * np.exp(-theory * ts), mode="lines", name="slope ln(1 + eta lam)",
                                 line=dict(color="#444", dash="dash"), showlegend=(c == 1)), 1, c)
    base_layout(fig, logy=True, height=440, title="RMD (eta = 0.1, lam = 0.5): regularised exploitability "
                                                    "against updates, 5 seeds")
    fig.update_yaxes(range=[-16, 1], row=1)
    fig.update_yaxes(showticklabels=True, row=1, col=2)  # kept when a phone stacks the panels
    fig.update_xaxes(title_text="updates t (rock-paper-scissors)", row=1, col=1)
    fig.update_xaxes(title_text="updates t (beach bar, skew)", row=1, col=2)
    fig.update_yaxes(title_text="regularised exploitability", row=1, col=1)
    return fig


EXPLORER_SIMPLEX = Explorer("29", "simplex", simplex_figure,
                            {"tau": Slider("inner steps tau", SIMPLEX_TAUS, 30, fmt="{}"),
                             "lam": Slider("regularisation lam", SIMPLEX_LAMS, 0.3)},
                            description="Population trajectories on the simplex: MD, fixed-reference RMD, APP")
EXPLORER_BAR = Explorer("29", "beach_bar", bar_figure,
                        {"variant": Choice("reward", ("skew", "strict"), "skew"),
                         "tau": Slider("inner steps tau (1 = MD)", BAR_TAUS, 10, fmt="{}")},
                        description="Beach-bar population half-way and at the end, per tau")
