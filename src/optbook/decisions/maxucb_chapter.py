"""Chapter 30's experiments, claims and figures: MaxUCB for CASH.

The policies live in :mod:`optbook.decisions.maxucb`. This module builds the two test beds (the
card's synthetic bounded arms, and a small real CASH task: random search over five scikit-learn
model classes on the digits data, evaluated once and replayed), tunes every policy on held-out
seeds with grids of one size, registers the claims and builds the figures.
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import plotly.graph_objects as go
from scipy.stats import beta as beta_dist

from ..claims import Criterion, Measured, claim
from ..core import Tuning, check_choice, check_int, grid_search
from ..core.bandits import UCB1, FixedPolicy, RandomPolicy
from ..viz import SliderStep, base_layout, frame_note, slider_figure
from ..viz.style import PHASE_COLORS, color_for, line_style
from ..widgets import Explorer, Slider
from .maxucb import SCALE_HIGH, SCALE_LOW, MaxMedian, MaxUCB, QoMaxETC, RoundRobin, ThresholdAscent, replay

#: Seeds the claims are measured on, and the held-out seeds every policy is tuned on.
CLAIM_SEEDS = (0, 1, 2, 3, 4)
TUNING_SEEDS = (100, 101)

#: Every tunable policy gets a grid of eight settings (the paper's code sweeps alpha in 0..2.9).
#: First registered with six settings each; widened after the first full run put UCB1, QoMax-ETC
#: and Max-Median on the edges of their grids (tuning panel rule), thresholds unchanged.
GRIDS = {
    "MaxUCB": {"alpha": (0.05, 0.1, 0.25, 0.5, 1.0, 2.0, 3.0, 5.0)},
    "UCB1": {"c": (0.01, 0.03, 0.1, 0.3, 1.0, 3.0, 10.0, 30.0)},
    "Threshold Ascent": {"s": (1, 2, 5, 10, 20, 50, 100, 200)},
    "QoMax-ETC": {"batches": (2, 3, 4, 6), "batch_size": (2, 4)},
    "Max-Median": {"eps": (0.3, 1.0, 3.0, 10.0, 30.0, 100.0, 300.0, 1000.0)},
}
UNTUNED = ("round-robin", "random")
BASELINES = ("UCB1", "Threshold Ascent", "QoMax-ETC", "Max-Median", "round-robin", "random")

# ---------------------------------------------------------------- the synthetic arms (the card's)

#: (offset, width, a, b): score = offset + width * Beta(a, b); arm 0 has the best mean, arm 1 the best maximum.
SYN_ARMS = ((0.80, 0.05, 2, 2), (0.0, 0.95, 5, 2), (0.70, 0.10, 2, 5), (0.0, 0.5, 2, 2), (0.0, 0.6, 3, 3),
            (0.0, 0.5, 2, 2), (0.0, 0.6, 3, 3), (0.0, 0.5, 2, 2))
SYN_HORIZON = 200
SYN_BEST_LOSS = 0.05  # 1 - 0.95, the largest score any arm can pay
SYN_BEST_ARM = 1


def synthetic_losses(seed: int, run: int, horizon: int = SYN_HORIZON) -> np.ndarray:
    """One run's table of losses ``1 - score``, shape (8, horizon): i.i.d. draws of every arm."""
    seed, run = check_int(seed, "seed"), check_int(run, "run")
    horizon = check_int(horizon, "horizon", minimum=1)
    g = np.random.default_rng([30, 0, seed, run])
    off, wid, a, b = (np.array(c, dtype=float)[:, None] for c in zip(*SYN_ARMS))
    return 1.0 - (off + wid * g.beta(a, b, size=(len(SYN_ARMS), horizon)))


def synthetic_moments() -> tuple[np.ndarray, np.ndarray]:
    """Each synthetic arm's mean score and largest possible score."""
    off, wid, a, b = (np.array(c, dtype=float) for c in zip(*SYN_ARMS))
    return off + wid * a / (a + b), off + wid


# ---------------------------------------------------------------- the real CASH task

CASH_ARMS = ("logistic regression", "k-NN", "decision tree", "RBF SVM", "random forest", "Gaussian naive Bayes",
             "shrunk LDA", "ridge classifier")
CASH_HORIZON = 200


@dataclass(frozen=True)
class CashPool:
    """Random-search results: ``losses[arm, j]`` is the validation error of configuration
    ``configs[arm][j]`` of model class ``CASH_ARMS[arm]``."""

    losses: np.ndarray
    configs: tuple

    @property
    def best_loss(self) -> float:
        return float(self.losses.min())


def _sample_config(arm: int, g: np.random.Generator) -> dict:
    def logu(lo: float, hi: float) -> float:
        return float(10 ** g.uniform(np.log10(lo), np.log10(hi)))

    if arm == 0:
        return {"C": logu(1e-4, 1e2)}
    if arm == 1:
        return {"n_neighbors": int(g.integers(1, 51)), "weights": ("uniform", "distance")[int(g.integers(2))],
                "p": int(g.integers(1, 3))}
    if arm == 2:
        return {"max_depth": int(g.integers(1, 21)), "min_samples_leaf": int(g.integers(1, 21)),
                "criterion": ("gini", "entropy")[int(g.integers(2))]}
    if arm == 3:
        return {"C": logu(1e-1, 1e3), "gamma": logu(1e-4, 1e-1)}
    if arm == 4:
        return {"n_estimators": int(g.integers(3, 11)), "max_depth": int(g.integers(2, 21)),
                "max_features": float(g.uniform(0.05, 1.0))}
    if arm == 5:
        return {"var_smoothing": logu(1e-10, 1.0)}
    if arm == 6:
        return {"shrinkage": float(g.uniform(0.0, 1.0))}
    return {"alpha": logu(1e-3, 1e4)}


def _model(arm: int, config: dict):
    from sklearn.discriminant_analysis import LinearDiscriminantAnalysis
    from sklearn.ensemble import RandomForestClassifier
    from sklearn.linear_model import LogisticRegression, RidgeClassifier
    from sklearn.naive_bayes import GaussianNB
    from sklearn.neighbors import KNeighborsClassifier
    from sklearn.svm import SVC
    from sklearn.tree import DecisionTreeClassifier

    if arm == 0:
        return LogisticRegression(max_iter=300, **config)
    if arm == 1:
        return KNeighborsClassifier(**config)
    if arm == 2:
        return DecisionTreeClassifier(random_state=0, **config)
    if arm == 3:
        return SVC(kernel="rbf", **config)
    if arm == 4:
        return RandomForestClassifier(random_state=0, n_jobs=1, **config)
    if arm == 5:
        return GaussianNB(**config)
    if arm == 6:
        return LinearDiscriminantAnalysis(solver="lsqr", **config)
    return RidgeClassifier(**config)


@lru_cache(maxsize=4)
def cash_pool(n_configs: int = 40, seed: int = 0) -> CashPool:
    """Random search in each of eight model classes on scikit-learn's digits (300 training and
    500 validation images, standardised on the training part): ``n_configs`` configurations per
    class, each trained once. Cached in memory: the table is computed once per process."""
    from sklearn.datasets import load_digits
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.model_selection import train_test_split
    from sklearn.preprocessing import StandardScaler

    n_configs = check_int(n_configs, "n_configs", minimum=1)
    seed = check_int(seed, "seed")
    X, y = load_digits(return_X_y=True)
    Xtr, Xva, ytr, yva = train_test_split(X, y, train_size=300, test_size=500, random_state=seed, stratify=y)
    scaler = StandardScaler().fit(Xtr)
    Xtr, Xva = scaler.transform(Xtr), scaler.transform(Xva)
    g = np.random.default_rng([30, 1, seed])
    losses = np.empty((len(CASH_ARMS), n_configs))
    configs = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        for arm in range(len(CASH_ARMS)):
            cfgs = tuple(_sample_config(arm, g) for _ in range(n_configs))
            configs.append(cfgs)
            for j, cfg in enumerate(cfgs):
                losses[arm, j] = 1.0 - _model(arm, cfg).fit(Xtr, ytr).score(Xva, yva)
    return CashPool(losses, tuple(configs))


def cash_losses(pool: CashPool, seed: int, run: int, horizon: int = CASH_HORIZON) -> np.ndarray:
    """One run's table: for each arm a random-search trajectory of ``horizon`` configurations
    drawn uniformly (with replacement) from the arm's evaluated pool, i.e. i.i.d. random search."""
    seed, run = check_int(seed, "seed"), check_int(run, "run")
    horizon = check_int(horizon, "horizon", minimum=1)
    g = np.random.default_rng([30, 2, seed, run])
    idx = g.integers(pool.losses.shape[1], size=(pool.losses.shape[0], horizon))
    return np.take_along_axis(pool.losses, idx, axis=1)


# ---------------------------------------------------------------- running the policies


def make_policy(method: str, n_arms: int, horizon: int, seed: int, **setting):
    """A fresh policy by name with its setting (``seed`` feeds the randomised ones)."""
    rng = np.random.default_rng([30, 3, seed])
    if method == "MaxUCB":
        return MaxUCB(n_arms, alpha=setting.get("alpha", 0.5), statistic=setting.get("statistic", "max"))
    if method == "UCB1":
        return UCB1(n_arms, c=setting["c"])
    if method == "Threshold Ascent":
        return ThresholdAscent(n_arms, s=setting["s"], horizon=horizon)
    if method == "QoMax-ETC":
        return QoMaxETC(n_arms, batches=setting["batches"], batch_size=setting["batch_size"])
    if method == "Max-Median":
        return MaxMedian(n_arms, eps=setting["eps"], rng=rng)
    if method == "round-robin":
        return RoundRobin(n_arms)
    if method == "random":
        return RandomPolicy(n_arms, rng=rng)
    if method == "oracle arm":
        return FixedPolicy(n_arms, setting["arm"])
    raise ValueError(f"method must be one of {list(GRIDS) + list(UNTUNED) + ['oracle arm']}, got {method!r}")


@dataclass
class Runs:
    """A policy's runs on one seed: best-so-far regret curves (runs x T) and pull counts (runs x K)."""

    regret: np.ndarray
    pulls: np.ndarray

    @property
    def final(self) -> float:
        """Mean simple regret at the horizon."""
        return float(self.regret[:, -1].mean())

    @property
    def anytime(self) -> float:
        """Mean regret averaged over the pulls after the initial round (area under the curve)."""
        return float(self.regret[:, self.pulls.shape[1]:].mean())


def _tables(problem: str, seed: int, runs: int, horizon: int):
    if problem == "synthetic":
        return [synthetic_losses(seed, r, horizon) for r in range(runs)], SYN_BEST_LOSS
    pool = cash_pool()
    return [cash_losses(pool, seed, r, horizon) for r in range(runs)], pool.best_loss


#: Runs per seed (each a fresh draw of every arm's trajectory), full and fast.
RUNS = {False: 20, True: 8}
#: The score each problem is judged on: simple regret at the horizon (the card's synthetic
#: check) or the anytime regret, the mean of the best-so-far curve (the paper's CASH plots).
METRIC = {"synthetic": "final", "cash": "anytime"}


def run_policy(problem: str, method: str, setting: dict, seed: int, runs: int, horizon: int | None = None) -> Runs:
    """``runs`` replays of one policy on ``problem`` ("synthetic" or "cash") for one seed, over
    ``horizon`` pulls (default: the problem's, 200). Cached: claims, controls and figures share runs."""
    problem = check_choice(problem, "problem", ("synthetic", "cash"))
    if horizon is None:
        horizon = SYN_HORIZON if problem == "synthetic" else CASH_HORIZON
    return _run_cached(problem, method, tuple(sorted(setting.items())), check_int(seed, "seed"),
                       check_int(runs, "runs", minimum=1), check_int(horizon, "horizon", minimum=1))


@lru_cache(maxsize=4096)
def _run_cached(problem: str, method: str, setting: tuple, seed: int, runs: int, horizon: int) -> Runs:
    tables, best = _tables(problem, seed, runs, horizon)
    regret, pulls = [], []
    for r, tab in enumerate(tables):
        pol = make_policy(method, tab.shape[0], horizon, seed * 1000 + r, **dict(setting))
        out = replay(pol, tab, horizon)
        regret.append(out.best_so_far - best)
        pulls.append(out.pulls(tab.shape[0]))
    return Runs(np.array(regret), np.array(pulls))


@lru_cache(maxsize=8)
def tunings(problem: str, fast: bool = False) -> dict[str, Tuning]:
    """Every tunable policy's grid search on the held-out seeds, scored by the problem's metric
    (:data:`METRIC`) over ``RUNS[fast] // 2`` runs per seed."""
    runs = RUNS[fast] // 2
    out = {}
    for method, grid in GRIDS.items():
        def score(seed, _m=method, **st):
            return getattr(run_policy(problem, _m, st, seed, runs), METRIC[problem])
        out[method] = grid_search(method, score, grid, TUNING_SEEDS)
    return out


# ---------------------------------------------------------------- claims


def best_arm(problem: str) -> int:
    """The arm with the best reachable loss (the oracle arm's choice)."""
    if problem == "synthetic":
        return SYN_BEST_ARM
    return int(np.argmin(cash_pool().losses.min(axis=1)))


def best_mean_arm(problem: str) -> int:
    """The arm with the best mean loss (where a mean-based policy is drawn)."""
    if problem == "synthetic":
        return int(np.argmax(synthetic_moments()[0]))
    return int(np.argmin(cash_pool().losses.mean(axis=1)))


def compare(problem: str, fast: bool = False, control: bool = False) -> dict:
    """MaxUCB (tuned; with the mean in place of the max under ``control``), every tuned baseline
    and the oracle arm on the claim seeds: per-seed scores, mean curves and pull shares."""
    seeds = CLAIM_SEEDS
    tuned = tunings(problem, fast)
    metric, runs, arm = METRIC[problem], RUNS[fast], best_arm(problem)
    settings = {"MaxUCB": {**tuned["MaxUCB"].best, "statistic": "mean" if control else "max"},
                **{b: tuned[b].best if b in tuned else {} for b in BASELINES}, "oracle arm": {"arm": arm}}
    rows, curves, pulls = [], {m: 0.0 for m in settings}, {m: 0.0 for m in settings}
    for s in seeds:
        row = {"seed": s}
        for m, st in settings.items():
            r = run_policy(problem, m, st, s, runs)
            row[m] = getattr(r, metric)
            row[f"{m} final"] = r.final
            curves[m] = curves[m] + r.regret.mean(axis=0) / len(seeds)
            pulls[m] = pulls[m] + r.pulls.mean(axis=0) / len(seeds)
        rows.append(row)
    ratio = {b: float(np.median([r["MaxUCB"] / r[b] for r in rows])) for b in BASELINES}
    share = float(pulls["MaxUCB"][arm] / pulls["MaxUCB"].sum())
    return {"rows": rows, "curves": curves, "pulls": pulls, "ratio": ratio, "share": share, "tunings": tuned,
            "settings": settings, "seeds": seeds, "metric": metric}


def _median(rows: list[dict], key: str) -> float:
    return float(np.median([r[key] for r in rows]))


@claim("30", "MaxUCB finds better CASH configurations sooner than every tuned baseline", kind="reproduction",
       name="cash_replay",
       paper="MaxUCB outperforms prior max K-armed and extreme-bandit methods (and combined search) in anytime "
             "and final performance on four AutoML benchmarks (TabRepo, TabRepoRaw, YaHPOGym, Reshuffling). "
             "No number retrieved from the paper: the thresholds below are stated rules",
       expect="real CASH on scikit-learn's digits: 8 model classes (arms), 40 random-search configurations per "
              "class evaluated once, replayed as i.i.d. random-search trajectories, horizon T = 200; 5 seeds x "
              "20 runs. Score: anytime regret (mean over pulls 9..200 of best-so-far loss minus the pool's best). "
              "Median over seeds of MaxUCB's score divided by round-robin's <= 0.85 and by random's <= 0.85 (the "
              "issue's 'curve below random and round-robin', with a 15% margin so a tie cannot pass), and by each "
              "tuned baseline's (UCB1, Threshold Ascent, QoMax-ETC, Max-Median) <= 1.0 (the paper's 'superior "
              "to prior approaches'). Every tunable policy, MaxUCB included, gets a grid of 6 settings tuned on "
              "held-out seeds 100-101. Precondition: the oracle arm's score <= 0.5 x round-robin's and the best-"
              "maximum class is not the best-mean class (choosing the class matters, and by max, not mean). "
              "Thresholds fixed before the full run. The grids first had 6 settings each; the first full run "
              "failed (worst ratio 1.005, Max-Median) with UCB1's best c on its grid's edge, so every grid was "
              "widened to 8 settings; the verdict did not change (worst ratio 1.005 again); thresholds unchanged. "
              "The proxy's search ranges, its eight classes and T were set on the held-out tuning seeds before "
              "registration. Disclosed leak (referee): while setting them the author also ran this claim in the "
              "then fast mode, on claim seeds 0-2 with 8 runs each, which are a subset of the full run's data, and "
              "all seeds (tuning and claim) replay the same pool of 320 evaluated configurations on one data split; "
              "so the task design is not independent of the data the verdict rests on, and the ratios to "
              "round-robin and random may be optimistic",
       control="MaxUCB's empirical maximum replaced by the empirical mean (same scaling, bonus and tuned alpha): "
               "a mean-based UCB, which must miss the criterion",
       reproduces=False,
       diagnosis="A near tie with one baseline, not a failure of the method. (1) The proxy shows the phenomenon: "
                 "the oracle arm's anytime regret is about a tenth of round-robin's (precondition met) and MaxUCB "
                 "beats round-robin, random, UCB1, Threshold Ascent and QoMax-ETC by 20-35%. (2) alpha = 0.5, the "
                 "paper's default, wins MaxUCB's own tuning on held-out seeds. (3) Reduction tests pass: alpha = 0 "
                 "is greedy on the maximum, and our arm sequence equals the official loop's (30.official_loop). "
                 "(4) The control (mean instead of max) fails as expected. What misses is the last inequality: "
                 "tuned Max-Median (eps = 30) matches MaxUCB, median ratio 1.005 with per-seed ratios 0.90-1.10, "
                 "so 'superior to every prior approach' is not shown on this one small task. Two referee checks made "
                 "after the verdict, which do not change it: with the exploration rate of the paper's code (eps = 1) "
                 "Max-Median loses clearly (median ratio 0.24 on the claim seeds), so the tie is with a baseline "
                 "tuned more generously than the paper tunes it; and on 20 further seeds (5-24, 20 runs each) "
                 "MaxUCB's median ratio to tuned Max-Median is 0.83 (below 1 on 19 of 20 seeds) and at most 0.81 "
                 "to every other baseline (post_verdict_checks()). The registered five seeds landed on a tie "
                 "within seed-to-seed noise; "
                 "the pre-registered criterion fails on them and the verdict stays")
def claim_cash_replay(fast: bool = False, control: bool = False) -> Measured:
    # Fast mode is the full size (about 5 s): the verdict rests on a near tie that fewer runs would flip.
    out = compare("cash", False, control)
    rows, ratio = out["rows"], out["ratio"]
    tuned_worst = max(ratio[b] for b in GRIDS if b != "MaxUCB")
    values = {"maxucb": _median(rows, "MaxUCB"), "round_robin": _median(rows, "round-robin"),
              "random": _median(rows, "random"), "oracle": _median(rows, "oracle arm"),
              "ratio_round_robin": ratio["round-robin"], "ratio_random": ratio["random"],
              "worst_ratio_tuned": tuned_worst, "ratio_ucb1": ratio["UCB1"],
              "ratio_threshold_ascent": ratio["Threshold Ascent"], "ratio_qomax": ratio["QoMax-ETC"],
              "ratio_max_median": ratio["Max-Median"], "share_best_arm": out["share"],
              "final_maxucb": _median(rows, "MaxUCB final"), "final_round_robin": _median(rows, "round-robin final"),
              "alpha": out["settings"]["MaxUCB"]["alpha"]}
    pre = (values["oracle"] <= 0.5 * values["round_robin"]) and best_arm("cash") != best_mean_arm("cash")
    return Measured(values, criteria=[Criterion("ratio_round_robin", "<=", 0.85), Criterion("ratio_random", "<=", 0.85),
                                      Criterion("worst_ratio_tuned", "<=", 1.0)],
                    seeds=out["seeds"], precondition=bool(pre), details=out,
                    summary=f"anytime regret {values['maxucb']:.4f} vs round-robin {values['round_robin']:.4f} "
                            f"(ratio {ratio['round-robin']:.2f}); worst ratio to a tuned baseline {tuned_worst:.2f}")


@claim("30", "Max, not mean: on bounded arms MaxUCB beats UCB1 and round-robin in simple regret",
       kind="reproduction", name="max_vs_mean",
       paper="MaxUCB targets the arm with the best maximum under bounded, light-tailed rewards, where mean-based "
             "UCB targets the best mean (no number in the paper for this toy; the card's synthetic check)",
       expect="the card's 8 bounded arms (arm 0 best mean 0.825, arm 1 best maximum 0.95), T = 200, 5 seeds x 20 "
              "runs: median over seeds of MaxUCB's mean simple regret divided by tuned UCB1's <= 0.85 and by "
              "round-robin's <= 0.75, and MaxUCB's share of pulls on arm 1 >= 0.5 (the issue's thresholds: a "
              "15% and a 25% advantage, a majority of pulls). All tunable policies tuned on held-out seeds 100-101, "
              "first on 6-setting grids; after the first full run put best settings on grid edges, every grid was "
              "widened to 8 settings, thresholds unchanged. Thresholds fixed before the full "
              "run",
       control="mean-based UCB in MaxUCB's place (empirical mean instead of maximum): it is drawn to arm 0, whose "
               "maximum is 0.85, and must fail the criterion")
def claim_max_vs_mean(fast: bool = False, control: bool = False) -> Measured:
    out = compare("synthetic", fast, control)
    rows, ratio = out["rows"], out["ratio"]
    values = {"maxucb": _median(rows, "MaxUCB"), "ucb1": _median(rows, "UCB1"),
              "round_robin": _median(rows, "round-robin"), "oracle": _median(rows, "oracle arm"),
              "ratio_ucb1": ratio["UCB1"], "ratio_round_robin": ratio["round-robin"], "share_best_arm": out["share"],
              "ratio_threshold_ascent": ratio["Threshold Ascent"], "ratio_qomax": ratio["QoMax-ETC"],
              "ratio_max_median": ratio["Max-Median"], "alpha": out["settings"]["MaxUCB"]["alpha"],
              "ucb1_share_best_arm": float(out["pulls"]["UCB1"][SYN_BEST_ARM] / SYN_HORIZON)}
    return Measured(values, criteria=[Criterion("ratio_ucb1", "<=", 0.85), Criterion("ratio_round_robin", "<=", 0.75),
                                      Criterion("share_best_arm", ">=", 0.5)],
                    seeds=out["seeds"], precondition=bool(values["oracle"] <= 0.5 * values["round_robin"]),
                    details=out,
                    summary=f"simple regret {values['maxucb']:.4f} vs UCB1 {values['ucb1']:.4f} and round-robin "
                            f"{values['round_robin']:.4f}; {100 * out['share']:.0f}% of pulls on arm 1")


def post_verdict_checks(seeds=tuple(range(5, 25)), runs: int = 20) -> dict:
    """The referee's checks on cash_replay made after its verdict (not part of the registered
    protocol, about 30 s): MaxUCB's median ratio of anytime regret to each tuned baseline on
    further seeds, with the share of seeds below 1, and the ratio to Max-Median run with the
    exploration rate of the paper's code (eps = 1) on the claim seeds."""
    runs = check_int(runs, "runs", minimum=1)
    tuned = tunings("cash", False)
    alpha = tuned["MaxUCB"].best["alpha"]
    settings = {b: tuned[b].best if b in tuned else {} for b in BASELINES}

    def score(m, st, s):
        return run_policy("cash", m, st, s, runs).anytime

    out = {}
    for b, st in settings.items():
        r = np.array([score("MaxUCB", {"alpha": alpha}, s) / score(b, st, s) for s in seeds])
        out[b] = {"median_ratio": float(np.median(r)), "share_below_1": float(np.mean(r < 1))}
    out["Max-Median (eps = 1)"] = {"median_ratio": float(np.median(
        [score("MaxUCB", {"alpha": alpha}, s) / score("Max-Median", {"eps": 1.0}, s) for s in CLAIM_SEEDS]))}
    return out


def official_maxucb_arms(losses: np.ndarray, alpha: float, horizon: int) -> np.ndarray:
    """The arms the paper's code picks on a replay table: a transcription of its loop (rewards
    re-scaled by scikit-learn's ``MinMaxScaler`` over all rewards after every pull, index
    ``max + (alpha ln t / n)^2``, first pulls in turn). The reference for the identity check."""
    from sklearn.preprocessing import MinMaxScaler

    k = losses.shape[0]
    count, arms, raw = np.zeros(k, dtype=int), [], []
    scaled = np.zeros((0, 1))
    for t in range(1, horizon + 1):
        if count.min() < 1:
            a = (t - 1) % k
        else:
            pulled = np.asarray(arms)
            idx = [scaled[pulled == i, 0].max() + (alpha * np.log(t) / count[i]) ** 2 for i in range(k)]
            a = int(np.argmax(idx))
        raw.append(-losses[a, count[a]])
        count[a] += 1
        arms.append(a)
        scaled = MinMaxScaler(feature_range=(0.01, 0.99)).fit_transform(np.asarray(raw).reshape(-1, 1))
    return np.asarray(arms)


@claim("30", "Our MaxUCB picks the same arms as the paper's code", kind="identity", name="official_loop",
       expect="on 4 synthetic and 4 CASH replay tables (T = 80, alpha in {0.25, 0.5, 1}), the arm sequence of "
              "MaxUCB through select/update equals the transcription of the official loop (scikit-learn "
              "MinMaxScaler refitted after every pull) in every run: mismatched runs = 0")
def claim_official_loop(fast: bool = False) -> Measured:
    pool = cash_pool()
    tables = [synthetic_losses(200, r, 80) for r in range(4)] + [cash_losses(pool, 200, r, 80) for r in range(4)]
    bad = 0
    for i, tab in enumerate(tables):
        alpha = (0.25, 0.5, 1.0)[i % 3]
        ours = replay(MaxUCB(tab.shape[0], alpha=alpha), tab, 80).arms
        bad += int(not np.array_equal(ours, official_maxucb_arms(tab, alpha, 80)))
    return Measured({"mismatched_runs": bad, "runs": len(tables)}, criteria=[Criterion("mismatched_runs", "<=", 0)],
                    summary=f"{bad} of {len(tables)} runs differ from the official loop")


GLUE_FORMATS = {
    "cash_replay": {k: "{:.4f}" for k in ("maxucb", "round_robin", "random", "oracle", "final_maxucb",
                                          "final_round_robin")}
    | {k: "{:.2f}" for k in ("ratio_round_robin", "ratio_random", "worst_ratio_tuned", "ratio_ucb1",
                             "ratio_threshold_ascent", "ratio_qomax", "ratio_max_median", "share_best_arm", "alpha")},
    "max_vs_mean": {k: "{:.4f}" for k in ("maxucb", "ucb1", "round_robin", "oracle")}
    | {k: "{:.2f}" for k in ("ratio_ucb1", "ratio_round_robin", "share_best_arm", "ratio_threshold_ascent",
                             "ratio_qomax", "ratio_max_median", "alpha", "ucb1_share_best_arm")},
}


# ---------------------------------------------------------------- figures

#: One colour, dash and marker per method, the same in every figure.
METHOD_ORDER = ("MaxUCB", "UCB1", "Threshold Ascent", "QoMax-ETC", "Max-Median", "round-robin", "random", "oracle arm")
ALPHAS = GRIDS["MaxUCB"]["alpha"]
RACE_TIMES = (8, 10, 12, 16, 24, 32, 48, 64, 96, 128, 160, 200)
#: The held-out seed the explorations replay (never a claim seed).
SHOW_SEED = 100


def _initial_round(fig: go.Figure, k: int) -> go.Figure:
    """Shade the first phase, one pull per arm (every index policy starts with it)."""
    fig.add_vrect(x0=0.5, x1=k + 0.5, fillcolor=PHASE_COLORS[0], opacity=0.6, layer="below", line_width=0,
                  annotation_text="one pull<br>per arm", annotation_position="bottom right",
                  annotation=dict(font=dict(size=11)))
    return fig


def _style(method: str) -> dict:
    return line_style(METHOD_ORDER.index(method)) if method in METHOD_ORDER else dict(line=dict(color="grey"))


def synthetic_arms_figure() -> go.Figure:
    """The eight synthetic arms' score densities: arm 0 has the best mean, arm 1 the best maximum."""
    x = np.linspace(0.0, 1.0, 401)
    fig = go.Figure()
    means, tops = synthetic_moments()
    for i, (off, wid, a, b) in enumerate(SYN_ARMS):
        pdf = beta_dist.pdf(np.clip((x - off) / wid, 0, 1), a, b) / wid * ((x >= off) & (x <= off + wid))
        if i in (0, 1):
            name = f"arm {i}: mean {means[i]:.2f}, max {tops[i]:.2f}"
            fig.add_trace(go.Scatter(x=x, y=pdf, mode="lines", name=name, **line_style(i, width=3)))
        else:
            fig.add_trace(go.Scatter(x=x, y=pdf, mode="lines", name="arms 2-7" if i == 2 else None,
                                     showlegend=i == 2, legendgroup="rest", line=dict(color="#999", width=1.2)))
    base_layout(fig, title="Eight bounded arms: the best mean (arm 0) is not the best maximum (arm 1)",
                xaxis_title="score of one pull (higher is better)", yaxis_title="density", height=400)
    return fig


def pool_figure() -> go.Figure:
    """Validation error of every random-search configuration, per model class."""
    pool = cash_pool()
    fig = go.Figure()
    for i, name in enumerate(CASH_ARMS):
        fig.add_trace(go.Box(y=pool.losses[i], name=name, boxpoints="all", jitter=0.4, pointpos=0,
                             marker=dict(color=color_for(i), size=5), line=dict(color=color_for(i)),
                             fillcolor="rgba(0,0,0,0)", showlegend=False))
    base_layout(fig, title="Random search on digits: 40 configurations per model class",
                yaxis_title="validation error (log scale)", logy=True, height=430)
    fig.update_xaxes(tickangle=-30)
    return fig


# --- the bonus shapes


def _bonus_traces(alpha: float, t: int = SYN_HORIZON) -> list:
    n = np.arange(1, 101)
    return [go.Scatter(x=n, y=(alpha * np.log(t) / n) ** 2, mode="lines", name="MaxUCB (α ln t / n)²", **_style("MaxUCB")),
            go.Scatter(x=n, y=np.sqrt(2 * np.log(t) / n), mode="lines", name="UCB1 √(2 ln t / n)", **_style("UCB1")),
            go.Scatter(x=n, y=np.full(n.size, SCALE_HIGH - SCALE_LOW), mode="lines", name="range of scaled rewards",
                       line=dict(color="grey", dash="dot"))]


def bonus_slider_figure() -> go.Figure:
    """Exploration bonus against the number of pulls of an arm at t = 200, one frame per alpha."""
    steps = []
    for a in ALPHAS:
        n_small = int(np.ceil(a * np.log(SYN_HORIZON) / 0.1))  # bonus below 0.01 from here on
        steps.append(SliderStep(f"{a:g}", _bonus_traces(a), frame_note(
            f"α = {a:g}: MaxUCB's bonus drops below 0.01 after {n_small} pulls;<br>UCB1's stays above 0.3 up to 100")))
    return slider_figure(steps, slider_label="α", active=ALPHAS.index(0.5), logx=True, logy=True,
                         title="Exploration bonus at t = 200: MaxUCB's decays like 1/n², UCB1's like 1/√n",
                         xaxis_title="pulls of the arm n", yaxis_title="bonus (scaled reward units)", height=460)


# --- the index race


@lru_cache(maxsize=16)
def race(alpha: float, seed: int = SHOW_SEED, run: int = 0) -> list[dict]:
    """Snapshots of one MaxUCB run on the synthetic arms at :data:`RACE_TIMES`: scores seen per arm,
    each arm's maximum and index (in score units), pull counts, and the arm played next."""
    tab = synthetic_losses(seed, run)
    pol = MaxUCB(tab.shape[0], alpha=float(alpha))
    count = np.zeros(tab.shape[0], dtype=int)
    seen: list[list[float]] = [[] for _ in range(tab.shape[0])]
    snaps = []
    for t in range(1, SYN_HORIZON + 1):
        a = pol.select()
        score = 1.0 - tab[a, count[a]]
        count[a] += 1
        seen[a].append(score)
        pol.update(a, -tab[a, count[a] - 1])
        if t in RACE_TIMES:
            lo, hi = pol.low + 1.0, pol.high + 1.0  # the scaler's range, in score units
            idx = lo + (pol.index() - SCALE_LOW) * (hi - lo) / (SCALE_HIGH - SCALE_LOW)
            snaps.append({"t": t, "seen": [list(v) for v in seen], "best": pol.best + 1.0, "index": idx,
                          "pulls": pol.plays.copy(), "next": pol.select() if t < SYN_HORIZON else None})
    return snaps


def _race_traces(snap: dict) -> list:
    k = len(snap["seen"])
    xs, ys = [], []
    for i, v in enumerate(snap["seen"]):
        jit = np.random.default_rng([30, 9, i]).uniform(-0.18, 0.18, len(v))
        xs.extend(i + jit)
        ys.extend(v)
    arms = np.arange(k)
    top = np.minimum(snap["index"], 1.3)
    return [
        go.Scatter(x=xs, y=ys, mode="markers", name="scores seen", marker=dict(size=5, color="#999", opacity=0.6)),
        go.Bar(x=arms, y=top - snap["best"], base=snap["best"], name="optimism: bonus (to the index)",
               marker=dict(color="rgba(0,114,178,0.25)", line=dict(color="#0072B2", width=1)), width=0.5),
        go.Scatter(x=arms, y=snap["best"], mode="markers", name="best score so far (max)",
                   marker=dict(symbol="diamond", size=11, color="#D55E00")),
        go.Bar(x=arms, y=snap["pulls"], name="pulls", marker=dict(color="#009E73"), xaxis="x2", yaxis="y2",
               showlegend=False, text=snap["pulls"], textposition="outside"),
    ]


def _race_layout(snap: dict) -> dict:
    nxt = "-" if snap["next"] is None else f"arm {snap['next']}"
    return frame_note(f"t = {snap['t']}: next pull {nxt}<br>(largest index; bars above 1.3 are cut)")


def _race_axes(fig: go.Figure) -> go.Figure:
    fig.update_layout(xaxis=dict(domain=[0, 0.62], title="arm", tickmode="linear", dtick=1, range=[-0.6, 7.6]),
                      yaxis=dict(title="score (higher is better)", range=[0, 1.32]),
                      xaxis2=dict(domain=[0.72, 1], title="arm", tickmode="linear", dtick=1, anchor="y2",
                                  range=[-0.6, 7.6]),
                      yaxis2=dict(title="pulls so far", anchor="x2", range=[0, SYN_HORIZON * 0.8]),
                      barmode="overlay")
    return fig


def race_slider_figure(alpha: float = 0.5) -> go.Figure:
    """The index race on one run of the synthetic arms, one frame per time step of :data:`RACE_TIMES`."""
    snaps = race(float(alpha))
    steps = [SliderStep(str(s["t"]), _race_traces(s), _race_layout(s)) for s in snaps]
    fig = slider_figure(steps, slider_label="pulls so far t", active=len(steps) - 1, fixed_axes=False,
                        title=f"MaxUCB's index race (α = {alpha:g}): maxima, optimism and pulls per arm",
                        height=500)
    return _race_axes(fig)


def race_figure(t: int = 64, alpha: float = 0.5) -> go.Figure:
    """The live twin of :func:`race_slider_figure`, with α as a second control."""
    t = check_int(t, "t")
    if t not in RACE_TIMES:
        raise ValueError(f"t must be one of the snapshot times {tuple(RACE_TIMES)}, got {t}")
    snap = next(s for s in race(float(alpha)) if s["t"] == t)
    fig = go.Figure(_race_traces(snap), layout=_race_layout(snap))
    base_layout(fig, title=f"MaxUCB's index race (α = {alpha:g})", height=500)
    return _race_axes(fig)


# --- the alpha slider


@lru_cache(maxsize=2)
def alpha_sweep(problem: str = "synthetic") -> dict:
    """Mean best-so-far regret curves on the held-out show seed: MaxUCB for every alpha of its grid,
    and the tuned UCB1, round-robin and the oracle arm as fixed references."""
    runs = RUNS[False]
    tuned = tunings(problem)
    refs = {"UCB1": tuned["UCB1"].best, "round-robin": {}, "oracle arm": {"arm": best_arm(problem)}}
    out = {"refs": {m: run_policy(problem, m, st, SHOW_SEED, runs) for m, st in refs.items()},
           "maxucb": {a: run_policy(problem, "MaxUCB", {"alpha": a}, SHOW_SEED, runs) for a in ALPHAS}}
    return out


def _curve(runs: Runs, name: str, style: dict) -> go.Scatter:
    y = np.maximum(runs.regret.mean(axis=0), 1e-4)
    return go.Scatter(x=np.arange(1, y.size + 1), y=y, mode="lines", name=name, **style)


def _alpha_traces(alpha: float, problem: str = "synthetic") -> list:
    sw = alpha_sweep(problem)
    return [_curve(sw["maxucb"][alpha], "MaxUCB", _style("MaxUCB"))] + \
        [_curve(r, m + (" (tuned)" if m == "UCB1" else ""), _style(m)) for m, r in sw["refs"].items()]


def _alpha_note(alpha: float, problem: str = "synthetic") -> dict:
    r = alpha_sweep(problem)["maxucb"][alpha]
    share = r.pulls[:, best_arm(problem)].mean() / r.pulls.sum(axis=1).mean()
    return frame_note(f"α = {alpha:g}: final regret {r.final:.3f},<br>{100 * share:.0f}% of pulls on arm 1")


_ALPHA_AXES = dict(xaxis_title="pulls t", yaxis_title="simple regret (mean over 20 runs)", logy=True)


def alpha_slider_figure() -> go.Figure:
    """Mean simple regret against pulls on the synthetic arms, one frame per alpha."""
    steps = [SliderStep(f"{a:g}", _alpha_traces(a), _alpha_note(a)) for a in ALPHAS]
    fig = slider_figure(steps, slider_label="α", active=ALPHAS.index(0.5), height=480,
                        title="MaxUCB's α: too small locks onto a wrong arm, too large explores like round-robin",
                        **_ALPHA_AXES)
    return _initial_round(fig, len(SYN_ARMS))


def alpha_figure(alpha: float = 0.5) -> go.Figure:
    """The live twin of :func:`alpha_slider_figure`."""
    if alpha not in ALPHAS:
        raise ValueError(f"alpha must be one of the tuning grid's values {tuple(ALPHAS)}, got {alpha!r}")
    fig = go.Figure(_alpha_traces(alpha), layout=_alpha_note(alpha))
    base_layout(fig, title="MaxUCB's α on the synthetic arms", height=480, **_ALPHA_AXES)
    return _initial_round(fig, len(SYN_ARMS))


# --- the claims' results


def curves_figure(details: dict, title: str, yaxis_title: str) -> go.Figure:
    """Mean best-so-far regret of every method against pulls (averaged over seeds and runs)."""
    fig = go.Figure()
    for m in METHOD_ORDER:
        y = np.maximum(details["curves"][m], 1e-4)
        name = m if m in UNTUNED or m == "oracle arm" else f"{m} (tuned)"
        fig.add_trace(go.Scatter(x=np.arange(1, y.size + 1), y=y, mode="lines", name=name, **_style(m)))
    base_layout(fig, title=title, xaxis_title="pulls t", yaxis_title=yaxis_title, logy=True, height=480)
    return _initial_round(fig, len(details["pulls"]["MaxUCB"]))


def pulls_figure(details: dict, labels: tuple, methods=("MaxUCB", "Max-Median", "UCB1", "round-robin")) -> go.Figure:
    """Mean pulls per arm of a few methods (grouped bars)."""
    fig = go.Figure([go.Bar(x=list(labels), y=details["pulls"][m], name=m,
                            marker=dict(color=color_for(METHOD_ORDER.index(m)))) for m in methods])
    base_layout(fig, title="Where the pulls went (mean over seeds and runs)", yaxis_title="pulls of the arm",
                height=420)
    fig.update_xaxes(tickangle=-30)
    return fig


EXPLORER_RACE = Explorer("30", "race", race_figure,
                         {"t": Slider("pulls so far t", RACE_TIMES, 64, "{:d}"), "alpha": Slider("α", ALPHAS, 0.5)})
EXPLORER_ALPHA = Explorer("30", "alpha", alpha_figure, {"alpha": Slider("α", ALPHAS, 0.5)})
