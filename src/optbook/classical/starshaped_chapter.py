"""Chapter 06: the book's experiments, baselines, claims, figures and live explorers for
star-shaped classifiers (Brandenburg and Jochemko, NeurIPS 2025). The method itself, with its
scikit-learn-style :class:`~optbook.classical.starshaped.StarClassifier`, is in
:mod:`optbook.classical.starshaped`.

Baselines: logistic regression on raw x or on fan coordinates, the convex kite star (Algorithm 1
on the kite fan), a ReLU network with hidden sizes (5, 2) and an RBF-kernel SVM, the last two from
scikit-learn (the paper used "standard implementations").
"""
from __future__ import annotations

import warnings
from functools import lru_cache

import numpy as np
import plotly.graph_objects as go
from sklearn.exceptions import ConvergenceWarning
from sklearn.neural_network import MLPClassifier
from sklearn.svm import SVC

from ..claims import Criterion, Measured, claim
from ..core import (
    Result,
    RngLike,
    Trace,
    Tuning,
    as_rng,
    check_in_range,
    check_int,
    check_matrix,
    check_positive,
    check_vector,
    grid_search,
)
from ..viz import Phase, SliderStep, base_layout, color_for, frame_note, slider_figure
from ..viz.style import PALETTE
from ..widgets import Explorer, Slider
from .starshaped import (
    U_FLOOR,
    Fan,
    StarClassifier,
    _lbfgsb,
    check_labels,
    check_params,
    confusion,
    equiangular_fan,
    fit_star,
    kite_fan,
    line_fan,
    log_likelihood,
    select_lambda,
    star_classify,
    type_b_fan,
)

# --------------------------------------------------------------------------- baselines


def logistic_regression(Phi, y, *, l2: float = 1e-6, tol: float = 1e-10, maxiter: int = 2000,
                        method_name: str = "logistic regression") -> Result:
    """Logistic regression with a bias: min_w sum log(1 + e^z) - y z + (l2/2)|w|^2, z = w^T [phi; 1]
    (the tiny ridge keeps w bounded on separable data). Predict 1 when z > 0. ``Phi`` holds the
    features: raw x, or the fan coordinates [x] (a relaxation of the star model: free signs and bias)."""
    Phi = check_matrix(Phi, "Phi")
    m, p = Phi.shape
    y = check_labels(y, m)
    l2 = check_positive(l2, "l2", allow_zero=True)
    tol = check_positive(tol, "tol")
    maxiter = check_int(maxiter, "maxiter", minimum=1)
    Z = np.hstack([Phi, np.ones((m, 1))])

    def fun_grad(w):
        z = Z @ w
        f = np.sum(np.logaddexp(0.0, z) - y * z) / m + 0.5 * l2 * (w[:-1] @ w[:-1])
        prob = 0.5 * (1.0 + np.tanh(0.5 * z))  # the logistic sigmoid, overflow-free
        g = Z.T @ (prob - y) / m
        g[:-1] += l2 * w[:-1]
        return f, g

    res, trace = _lbfgsb(fun_grad, np.zeros(p + 1), None, tol=tol, maxiter=maxiter, method_name=method_name)
    return Result(x=res.x, fun=float(res.fun), jac=res.jac, nit=res.nit, nfev=res.nfev, njev=res.njev,
                  success=bool(res.success), message=str(res.message), trace=trace)


def logistic_predict(w, Phi) -> np.ndarray:
    """Labels 1{w^T [phi; 1] > 0} of a fitted logistic regression."""
    Phi = check_matrix(Phi, "Phi")
    w = check_vector(w, "w", Phi.shape[1] + 1)
    return (Phi @ w[:-1] + w[-1] > 0).astype(int)


def relu_net(X, y, *, hidden: tuple[int, ...] = (5, 2), alpha: float = 1e-4, max_iter: int = 1000,
             restarts: int = 5, seed: int = 0) -> MLPClassifier:
    """The paper's small ReLU network (hidden sizes (5, 2)): scikit-learn's ``MLPClassifier``
    trained full batch with L-BFGS on the logistic loss plus ``alpha`` times an L2 penalty, the
    best of ``restarts`` initialisations by final training loss (a network this narrow often
    starts with dead units and predicts one class). ``max_iter`` caps the L-BFGS iterations (an
    early stop, so the cap's convergence warning is expected and silenced)."""
    X = check_matrix(X, "X")
    y = check_labels(y, X.shape[0])
    if not isinstance(hidden, tuple) or not hidden or any(
            not isinstance(h, (int, np.integer)) or h < 1 for h in hidden):
        raise ValueError(f"hidden must be a non-empty tuple of positive ints, got {hidden!r}")
    alpha = check_positive(alpha, "alpha", allow_zero=True)
    max_iter = check_int(max_iter, "max_iter", minimum=1)
    restarts = check_int(restarts, "restarts", minimum=1)
    seed = check_int(seed, "seed")
    best = None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        for state in np.random.SeedSequence(seed).generate_state(restarts):
            net = MLPClassifier(hidden, activation="relu", solver="lbfgs", alpha=alpha, max_iter=max_iter,
                                random_state=int(state)).fit(X, y)
            if best is None or net.loss_ < best.loss_:
                best = net
    return best


def rbf_svm(X, y, *, C: float = 1.0, gamma: float | str = "scale") -> SVC:
    """scikit-learn's RBF-kernel SVM, ``SVC(kernel='rbf', C=C, gamma=gamma)``, fitted to (X, y)."""
    X = check_matrix(X, "X")
    y = check_labels(y, X.shape[0])
    C = check_positive(C, "C")
    if not (isinstance(gamma, str) and gamma == "scale"):
        gamma = check_positive(gamma, "gamma")
    return SVC(kernel="rbf", C=C, gamma=gamma).fit(X, y)


# --------------------------------------------------------------------------- data

#: The card's fixed truth on the type-B fan (rays by angle from (1, 0)).
A_TRUE = np.array([1.6, 1.2, 2.5, 1.1, 1.8, 1.3, 3.0, 1.0])


def sample_disk(m: int, rng: RngLike = None) -> np.ndarray:
    """m points uniform in the unit disk."""
    m = check_int(m, "m", minimum=1)
    rng = as_rng(rng)
    r, t = np.sqrt(rng.uniform(size=m)), rng.uniform(0, 2 * np.pi, size=m)
    return np.stack([r * np.cos(t), r * np.sin(t)], axis=1)


def make_star_data(fan: Fan, a_true, m: int = 500, flip: float = 0.1, rng: RngLike = None):
    """The paper's experiment: m points uniform in the unit disk labelled by star(a_true)
    (1 = outside), each label flipped with probability ``flip``. Returns X, y, y_clean."""
    if not isinstance(fan, Fan) or fan.dim != 2:
        raise ValueError("fan must be a 2-D Fan")
    a_true = check_params(a_true, fan.n_rays, "a_true")
    flip = check_in_range(flip, "flip", 0.0, 0.5, closed=(True, False))
    rng = as_rng(rng)
    X = sample_disk(m, rng)
    y_clean = star_classify(fan.coordinates(X), a_true)
    y = np.where(rng.uniform(size=m) < flip, 1 - y_clean, y_clean)
    return X, y, y_clean


#: Training points per data set (the paper's 500) and fresh points to measure accuracy on.
M_TRAIN, M_TEST = 500, 2000
#: Label noise: each label is correct with probability 0.9, as in the paper.
FLIP = 0.1
#: Range of the truth's a_i. The card's U[1, 3] scaled by 1.3, the factor at which the expected
#: share of the majority label is the paper's 0.718 (its linear methods put every point in one
#: class and scored 0.718); unscaled, the stars are larger and lopsided enough for a linear
#: classifier to beat the majority class.
TRUTH_RANGE = (1.3, 3.9)


@lru_cache(maxsize=16)
def comparison_data(seed: int) -> dict:
    """One data set of the comparison: a truth a ~ U[1.3, 3.9]^8 on the type-B fan, 500 training
    and 2000 test points uniform in the unit disk, each label flipped with probability 0.1."""
    seed = check_int(seed, "seed")
    rng = np.random.default_rng(seed)
    fan = type_b_fan(2)
    a_true = rng.uniform(*TRUTH_RANGE, size=fan.n_rays)
    X, y, _ = make_star_data(fan, a_true, M_TRAIN + M_TEST, FLIP, rng)
    return {"seed": seed, "a_true": a_true, "X": X[:M_TRAIN], "y": y[:M_TRAIN],
            "X_test": X[M_TRAIN:], "y_test": y[M_TRAIN:]}


# --------------------------------------------------------------------------- the comparison

STAR, KITE, NET, SVM = "star MLE (type-B fan)", "kite star (convex)", "ReLU net (5, 2)", "RBF SVM"
#: The flexible baselines at scikit-learn's defaults (the paper's "standard implementations").
DEFAULT_SVM, DEFAULT_NET = "RBF SVM, scikit-learn defaults", "ReLU net (5, 2), scikit-learn defaults"
#: Each method's grid, 12 settings each. The star's rate lambda: 11 values around the paper's
#: 0.83 and "auto" (picked per data set by training accuracy, as the paper does).
STAR_LAMS = (*np.round(np.geomspace(0.5, 1.6, 11), 3).tolist(), "auto")
GRIDS = {
    STAR: {"lam": STAR_LAMS},
    KITE: {"lam": STAR_LAMS},
    NET: {"alpha": (1e-4, 1e-3, 1e-2, 0.1, 0.3, 1.0), "max_iter": (100, 1000)},
    SVM: {"C": (1.0, 4.0, 16.0, 64.0), "gamma": (3.0, 10.0, 30.0)},
}
#: Tuning data sets, held out from the claim's.
TUNING_SEEDS = (100, 101, 102)
CLAIM_SEEDS = (0, 1, 2, 3, 4)


def fit_method(method: str, seed: int, setting: dict):
    """A fitted predictor of ``method`` (one of ``GRIDS``) at ``setting`` on the 500 training
    points of comparison data set ``seed``."""
    if method not in GRIDS:
        raise ValueError(f"method must be one of {list(GRIDS)}, got {method!r}")
    if not isinstance(setting, dict) or set(setting) != set(GRIDS[method]):
        raise ValueError(f"setting for {method!r} must be a dict with keys {sorted(GRIDS[method])}, got {setting!r}")
    d = comparison_data(seed)
    if method in (STAR, KITE):
        fan = type_b_fan(2) if method == STAR else kite_fan(2)
        return StarClassifier(fan, lam=setting["lam"]).fit(d["X"], d["y"])
    if method == NET:
        return relu_net(d["X"], d["y"], seed=seed, **setting)
    return rbf_svm(d["X"], d["y"], **setting)


@lru_cache(maxsize=512)
def _accuracy(method: str, seed: int, setting: tuple) -> tuple[float, float]:
    """(training, test) accuracy of one fit; ``setting`` as sorted (name, value) pairs. Cached, so
    the control run and the comparison table reuse the baselines' fits."""
    d = comparison_data(seed)
    model = fit_method(method, seed, dict(setting))
    return (float(np.mean(model.predict(d["X"]) == d["y"])),
            float(np.mean(model.predict(d["X_test"]) == d["y_test"])))


def accuracy(method: str, seed: int, **setting) -> tuple[float, float]:
    """(training, test) accuracy of ``method`` at ``setting`` on comparison data set ``seed``."""
    return _accuracy(method, int(seed), tuple(sorted(setting.items())))


@lru_cache(maxsize=2)
def tune_comparison(fast: bool = False) -> dict[str, Tuning]:
    """Every method's grid search (12 settings each) scored by test accuracy, median over the
    tuning data sets (one in fast mode), which are disjoint from the claim's."""
    seeds = TUNING_SEEDS[:1] if fast else TUNING_SEEDS
    return {m: grid_search(m, lambda seed, _m=m, **st: accuracy(_m, seed, **st)[1], GRIDS[m], seeds,
                           higher_is_better=True) for m in GRIDS}


@lru_cache(maxsize=16)
def _reference_accuracies(seed: int) -> dict[str, tuple[float, float]]:
    """Reference rows of the comparison table on data set ``seed``: the true star (the Bayes
    classifier, about 0.9 with 10% flips), the majority class, logistic regression on x and on the
    fan coordinates, and the two flexible baselines at scikit-learn's defaults (the paper's
    "standard implementations": one Adam-trained initialisation for the network)."""
    d = comparison_data(seed)
    X, y, Xs, ys = d["X"], d["y"], d["X_test"], d["y_test"]
    fan = type_b_fan(2)
    A, As = fan.coordinates(X), fan.coordinates(Xs)
    out = {}

    def record(name, pred, pred_test):
        out[name] = (float(np.mean(pred == y)), float(np.mean(pred_test == ys)))

    record("true star (Bayes classifier)", star_classify(A, d["a_true"]), star_classify(As, d["a_true"]))
    major = int(np.mean(y) > 0.5)
    record("majority class", np.full(y.size, major), np.full(ys.size, major))
    w = logistic_regression(X, y).x
    record("logistic regression", logistic_predict(w, X), logistic_predict(w, Xs))
    wf = logistic_regression(A, y).x
    record("logistic on fan coordinates", logistic_predict(wf, A), logistic_predict(wf, As))
    svm = SVC().fit(X, y)
    record(DEFAULT_SVM, svm.predict(X), svm.predict(Xs))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)  # the default 200 Adam steps stop early
        net = MLPClassifier((5, 2), random_state=seed).fit(X, y)
    record(DEFAULT_NET, net.predict(X), net.predict(Xs))
    return out


#: The paper's accuracies (Fig. 3, on its training data) and the margin the claim asks for.
PAPER_ACCURACY = {STAR: 0.852, NET: 0.824, SVM: 0.78, "logistic regression": 0.718}
PAPER_MARGIN = 0.028  # Algorithm 1 over the (5, 2) ReLU network, its strongest baseline


@claim("06", "On the points it was fitted to, the star beats an RBF-SVM and a ReLU net at standard settings",
       kind="reproduction",
       paper="Fig. 3: on the 500 points it was fitted to, Algorithm 1 (lambda about 0.83, the best value "
             "found) classifies 0.852 correctly, the (5, 2) ReLU network 0.824 and the RBF-SVM 0.78, both "
             "'standard implementations': +0.028 over the stronger",
       expect="median over 5 data sets of [star training accuracy, lambda maximising it exactly - "
              "max(RBF SVM, (5, 2) ReLU net at scikit-learn's defaults) training accuracy] >= 0.028",
       control="the same with the kite fan (4 rays, every star convex) instead of the 8-ray type-B fan of the truth",
       reproduces=False,
       diagnosis="(1) the proxy shows the paper's phenomenon: on the training points logistic regression does no "
                 "better than the majority class, as in the paper; (2) the paper's protocol: 500 points, 10% flipped "
                 "labels, the truth's own 8-ray fan, accuracy on the training points, lambda chosen by training "
                 "accuracy (exactly, over every lambda: the reading most favourable to the star), the baselines at "
                 "scikit-learn's defaults; (3) the MLE passes KKT and an independent solver, the type-B star with "
                 "its dents switched off is the kite star, and the exact lambda beats every grid value; (4) the "
                 "control (convex kite) falls behind. The star leads the default network by about 0.1, as in the "
                 "paper, but the default RBF-SVM fits the training points about as well as the star (the paper's "
                 "SVM scored 0.78, well below scikit-learn's default here), so the lead is short of +0.028",
       name="paper_table")
def claim_paper_table(fast: bool = False, control: bool = False) -> Measured:
    seeds = CLAIM_SEEDS[:2] if fast else CLAIM_SEEDS
    method = KITE if control else STAR
    star = np.array([accuracy(method, s, lam="exact") for s in seeds])
    ref = [_reference_accuracies(s) for s in seeds]
    train = {name: np.array([r[name][0] for r in ref])
             for name in (DEFAULT_SVM, DEFAULT_NET, "logistic regression", "majority class",
                          "true star (Bayes classifier)")}
    best = np.maximum(train[DEFAULT_SVM], train[DEFAULT_NET])
    gap = star[:, 0] - best
    values = {"gap_median": np.median(gap), "gap_min": gap.min(), "gap_max": gap.max(),
              "star_train_median": np.median(star[:, 0]), "svm_train_median": np.median(train[DEFAULT_SVM]),
              "net_train_median": np.median(train[DEFAULT_NET]),
              "bayes_train_median": np.median(train["true star (Bayes classifier)"]),
              "star_test_median": np.median(star[:, 1])}
    label = "kite" if control else "star"
    return Measured(
        values, criteria=[Criterion("gap_median", ">=", PAPER_MARGIN)], seeds=seeds,
        # as in the paper, logistic regression cannot do better than the majority class
        precondition=bool(np.median(train["logistic regression"] - train["majority class"]) <= 0.05),
        summary=f"training accuracy {label} {np.median(star[:, 0]):.3f}, SVM {np.median(train[DEFAULT_SVM]):.3f}, "
                f"net {np.median(train[DEFAULT_NET]):.3f}; gap {np.median(gap):+.3f} ({gap.min():+.3f} to {gap.max():+.3f})",
        details={"seeds": seeds, "star": star, "train": train})


@claim("06", "The maximum-likelihood star is more accurate than a tuned ReLU network and RBF-SVM",
       kind="reproduction",
       paper="on 500 noisy points labelled by a star on an 8-ray fan, Algorithm 1 reaches accuracy 0.852, "
             "a (5, 2) ReLU network 0.824 and an RBF-SVM 0.78 (Sect. 5, Fig. 3): +0.028 over the "
             "strongest baseline",
       expect="median over 5 data sets of [star test accuracy - max(ReLU net, RBF SVM) test accuracy] "
              ">= 0.028, each method tuned on its own 12-setting grid on 3 held-out data sets",
       control="the same Algorithm 1 on the kite fan (4 rays, every star convex) instead of the 8-ray "
               "type-B fan of the truth",
       reproduces=False,
       diagnosis="(1) the proxy shows the paper's phenomenon: logistic regression does no better than the "
                 "majority class, as in the paper; (2) the paper's scale: 500 points, 10% flipped labels, the "
                 "8-ray fan of the truth, the (5, 2) ReLU network, a lambda grid around the paper's 0.83 plus "
                 "the paper's per-data-set choice, the truth scaled to the paper's class balance; (3) the MLE "
                 "passes KKT and an independent solver, the lambda scaling holds to 1e-8, and the true star "
                 "reaches the Bayes rate 0.9, so the model class is not the limit; (4) the control (convex "
                 "kite) falls further behind. The star ties with the tuned baselines instead of leading: the "
                 "exponential likelihood is a misspecified surrogate for hard labels, so the MLE star stays "
                 "below the Bayes rate that its model class contains",
       name="star_vs_flexible")
def claim_star_vs_flexible(fast: bool = False, control: bool = False) -> Measured:
    seeds = CLAIM_SEEDS[:2] if fast else CLAIM_SEEDS
    tunings = tune_comparison(fast)
    method = KITE if control else STAR
    acc = {m: np.array([accuracy(m, s, **tunings[m].best) for s in seeds]) for m in (method, NET, SVM)}
    ref = [_reference_accuracies(s) for s in seeds]
    lin = np.array([r["logistic regression"][1] for r in ref])
    major = np.array([r["majority class"][1] for r in ref])
    star_te, net_te, svm_te = acc[method][:, 1], acc[NET][:, 1], acc[SVM][:, 1]
    gap = star_te - np.maximum(net_te, svm_te)
    defaults = np.array([max(r[DEFAULT_SVM][1], r[DEFAULT_NET][1]) for r in ref])
    bayes = np.array([r["true star (Bayes classifier)"][1] for r in ref])
    train_gap = acc[method][:, 0] - np.maximum(acc[NET][:, 0], acc[SVM][:, 0])
    values = {"gap_median": np.median(gap), "gap_min": gap.min(), "gap_max": gap.max(),
              "star_test_median": np.median(star_te), "net_test_median": np.median(net_te),
              "svm_test_median": np.median(svm_te), "star_train_median": np.median(acc[method][:, 0]),
              "net_train_median": np.median(acc[NET][:, 0]), "svm_train_median": np.median(acc[SVM][:, 0]),
              "logistic_test_median": np.median(lin), "majority_test_median": np.median(major),
              "gap_to_defaults_median": np.median(star_te - defaults),
              # the paper's measure (accuracy on the training points) at the same settings
              "train_gap_median": np.median(train_gap),
              # room above the better baseline: the criterion asks the star to be within
              # headroom - 0.028 of the Bayes rate
              "bayes_test_median": np.median(bayes),
              "headroom_median": np.median(bayes - np.maximum(net_te, svm_te))}
    label = "kite" if control else "star"
    return Measured(
        values, criteria=[Criterion("gap_median", ">=", PAPER_MARGIN)], seeds=seeds,
        # The proxy shows the paper's phenomenon when a linear classifier cannot fit the data (the
        # paper's logistic regression put every point in one class).
        precondition=bool(np.median(lin - major) <= 0.05),
        summary=f"test accuracy {label} {np.median(star_te):.3f}, net {np.median(net_te):.3f}, "
                f"SVM {np.median(svm_te):.3f}; gap {np.median(gap):+.3f} ({gap.min():+.3f} to {gap.max():+.3f})",
        details={"seeds": seeds, "tunings": tunings, "acc": acc, "reference": ref})


def runaway_vertices(seed: int, setting: dict, radius: float = 1.5) -> list[tuple[int, float]]:
    """Rays along which the star fitted to comparison data set ``seed`` (at ``setting``) puts its
    vertex v_i / a_i beyond ``radius``, far outside the unit disk of the data (a_i = 0: at
    infinity), as (ray number 1..8, distance of the true star's vertex on that ray)."""
    radius = check_positive(radius, "radius")
    clf = fit_method(STAR, seed, setting)
    norms = np.linalg.norm(clf.fan_.rays, axis=1)
    far = np.flatnonzero(norms > radius * clf.a_)  # |v_i| / a_i > radius, also when a_i = 0
    truth = comparison_data(seed)["a_true"]
    return [(int(i) + 1, float(norms[i] / truth[i])) for i in far]


def _check_details(details, keys) -> dict:
    if not isinstance(details, dict) or not set(keys) <= set(details):
        raise ValueError(f"details must be the details of a run of 06.star_vs_flexible (keys {sorted(keys)})")
    return details


def comparison_rows(details: dict) -> list[dict]:
    """The comparison table from a run of 06.star_vs_flexible: every method's median training and
    test accuracy over the claim's data sets, the worst and best test accuracy, and the paper's
    figure (accuracy on its training data) where it reports one."""
    tunings = _check_details(details, ("tunings", "acc", "reference"))["tunings"]
    per_method = {m: (a[:, 0], a[:, 1]) for m, a in details["acc"].items()}
    for name in details["reference"][0]:
        per_method[name] = (np.array([r[name][0] for r in details["reference"]]),
                            np.array([r[name][1] for r in details["reference"]]))
    rows = []
    for name, (tr, te) in per_method.items():
        setting = tunings[name].labels()[tunings[name].best_index] if name in tunings else ""
        rows.append({"method": name, "tuned setting": setting, "paper (training)": PAPER_ACCURACY.get(name, ""),
                     "training (median)": float(np.median(tr)), "test (median)": float(np.median(te)),
                     "test min": float(te.min()), "test max": float(te.max())})
    return sorted(rows, key=lambda r: -r["test (median)"])


# --------------------------------------------------------------------------- lambda: identities


def lambda_path(A, y, lams, *, refit: bool = True) -> dict:
    """a*(lambda) on a grid (fitted independently from a0 = 1 at every lambda), with the scaling
    error max |lambda a*(lambda) - a*(1)| / |a*(1)| and FP, FN, err along the path."""
    lams = check_vector(lams, "lams")
    if np.any(lams <= 0):
        raise ValueError("lams must be positive")
    ref = fit_star(A, y, 1.0).x
    fits = np.array([fit_star(A, y, lam).x for lam in lams]) if refit else ref[None, :] / lams[:, None]
    scaled_err = np.linalg.norm(lams[:, None] * fits - ref[None, :], axis=1) / np.linalg.norm(ref)
    conf = [confusion(A, a, y) for a in fits]
    return {"lams": lams, "fits": fits, "a1": ref, "scaling_error": scaled_err,
            "FP": np.array([c["FP"] for c in conf]), "FN": np.array([c["FN"] for c in conf]),
            "err": np.array([c["err"] for c in conf])}


@lru_cache(maxsize=1)
def card_data() -> dict:
    """The card's data set: 500 points of the type-B truth A_TRUE, 10% flips (seed 2025)."""
    X, y, _ = make_star_data(type_b_fan(2), A_TRUE, 500, 0.1, rng=2025)
    return {"X": X, "y": y, "A": type_b_fan(2).coordinates(X)}


@lru_cache(maxsize=4)
def _path_data(n_lams: int) -> dict:
    d = card_data()
    return {**d, **lambda_path(d["A"], d["y"], np.geomspace(0.1, 10.0, n_lams))}


@claim("06", "lambda only rescales the optimum: a*(lambda) = a*(1) / lambda (Thm 3.11)", kind="identity",
       expect="max over the lambda grid of |lambda a*(lambda) - a*(1)| / |a*(1)| <= 1e-4, each fit from a0 = 1",
       name="lambda_scaling")
def claim_lambda_scaling(fast: bool = False) -> Measured:
    p = _path_data(21 if fast else 61)
    worst = float(p["scaling_error"].max())
    return Measured({"lambdas": len(p["lams"]), "max_relative_scaling_error": worst},
                    criteria=[Criterion("max_relative_scaling_error", "<=", 1e-4)],
                    summary=f"largest relative deviation {worst:.1e}", details=p)


@claim("06", "Along a*(lambda), false positives never increase and false negatives never decrease (Cor 3.12)",
       kind="identity", expect="on a fine lambda grid: FP non-increasing and FN non-decreasing in lambda",
       name="threshold_monotone")
def claim_threshold_monotone(fast: bool = False) -> Measured:
    p = _path_data(21 if fast else 61)
    d_err = np.diff(p["err"])
    turns = int(np.sum(np.diff(np.sign(d_err[d_err != 0])) > 0))  # local minima of err (not unimodal)
    up_fp, down_fn = int(np.sum(np.diff(p["FP"]) > 0)), int(np.sum(np.diff(p["FN"]) < 0))
    return Measured({"lambdas": len(p["lams"]), "FP_increases": up_fp, "FN_decreases": down_fn,
                     "FP_range": p["FP"].max() - p["FP"].min(), "FN_range": p["FN"].max() - p["FN"].min(),
                     "err_local_minima": turns + 1},
                    # FP must actually move, else the path would be too short to test anything
                    holds=bool(up_fp == 0 and down_fn == 0 and p["FP"].max() > p["FP"].min()),
                    summary=f"FP {p['FP'].max()} -> {p['FP'].min()}, FN {p['FN'].min()} -> {p['FN'].max()}, "
                            f"{up_fp + down_fn} violations", details=p)


# --------------------------------------------------------------------------- the chapter's other runs


def watch_runs(lam: float = 1.0) -> dict:
    """One fit of each model on the card's data (500 points, type-B truth A_TRUE, 10% flips):
    the star MLE on the type-B fan, the kite MLE, and logistic regression on x and on the fan
    coordinates. Returns their Results (traces: objective = negative log-likelihood, grad_norm =
    projected gradient norm) and the data."""
    lam = check_positive(lam, "lam")
    p = card_data()
    X, y, A = p["X"], p["y"], p["A"]
    K = kite_fan(2).coordinates(X)
    runs = {
        "star MLE (type-B fan)": fit_star(A, y, lam, method_name="star MLE (type-B fan)"),
        "kite MLE (convex)": fit_star(K, y, lam, method_name="kite MLE (convex)"),
        "logistic regression": logistic_regression(X, y, method_name="logistic regression"),
        "logistic on fan coordinates": logistic_regression(A, y, method_name="logistic on fan coordinates"),
    }
    return {"runs": runs, "X": X, "y": y, "A": A}


#: Fan resolutions of the refinement experiment (k equiangular rays).
RESOLUTIONS = (4, 6, 8, 10, 12, 16, 20, 24)


@lru_cache(maxsize=4)
def resolution_data(seed: int) -> dict:
    """300 points of the card's truth A_TRUE (10% flips), split 150/150 into training and holdout."""
    seed = check_int(seed, "seed")
    rng = np.random.default_rng(seed)
    X, y, _ = make_star_data(type_b_fan(2), A_TRUE, 300, 0.1, rng)
    return {"X": X, "y": y, "tr": slice(0, 150), "te": slice(150, 300)}


@lru_cache(maxsize=64)
def resolution_fit(k: int, seed: int = 11) -> dict:
    """Star MLE on k equiangular rays fitted to 150 training points of the card's truth, lambda
    picked by training accuracy (a*(lambda) = a*(1)/lambda); training and holdout accuracy. Cached."""
    k = check_int(k, "k", minimum=3)
    seed = check_int(seed, "seed")
    b = resolution_data(seed)
    fan = equiangular_fan(k)
    A = fan.coordinates(b["X"])
    tr, te, y = b["tr"], b["te"], b["y"]
    sel = select_lambda(A[tr], y[tr], refit=False)
    acc_tr = float(np.mean(star_classify(A[tr], sel["a"]) == y[tr]))
    acc_te = float(np.mean(star_classify(A[te], sel["a"]) == y[te]))
    return {"fan": fan, "a": sel["a"], "lam": sel["lam"], "train": acc_tr, "holdout": acc_te, "A": A}


def resolution_curve(seeds=(11, 12, 13), ks=RESOLUTIONS) -> dict:
    """Mean training and holdout accuracy against the number of rays k."""
    if not len(seeds) or not len(ks):
        raise ValueError("seeds and ks must not be empty")
    tr = np.array([[resolution_fit(k, s)["train"] for k in ks] for s in seeds])
    te = np.array([[resolution_fit(k, s)["holdout"] for k in ks] for s in seeds])
    return {"ks": np.array(ks), "train": tr.mean(axis=0), "holdout": te.mean(axis=0),
            "train_all": tr, "holdout_all": te}


# --------------------------------------------------------------------------- figures and explorers

INSIDE, OUTSIDE, STAR_COLOR = color_for(0), color_for(1), color_for(2)
#: The fan's rays: a de-emphasised background (thin, dotted).
RAY_COLOR = PALETTE[4]


def star_polygon(fan: Fan, a, radius: float = 1.6) -> np.ndarray:
    """Closed polygon of the 2-D star(a) boundary (vertices v_i / a_i in angular order); a ray
    with a_i = 0 is cut at ``radius`` (the star is unbounded there)."""
    if not isinstance(fan, Fan) or fan._angles is None:
        raise ValueError("fan must be a 2-D fan built by fan_2d")
    a = check_params(a, fan.n_rays)
    dirs = fan.rays / np.linalg.norm(fan.rays, axis=1, keepdims=True)
    with np.errstate(divide="ignore"):
        r = np.where(a > 0, np.linalg.norm(fan.rays, axis=1) / np.where(a > 0, a, 1.0), radius)
    pts = dirs * np.minimum(r, radius)[:, None]
    return np.vstack([pts, pts[:1]])


def star_traces(fan: Fan, a, X, y, *, name: str = "star(a)", show_rays: bool = True) -> list:
    """The star's boundary, the fan's rays and the data (circles = label 0 inside, crosses =
    label 1 outside; black rings mark misclassified points). Always 5 traces."""
    poly = star_polygon(fan, a)
    X = check_matrix(X, "X", shape=(None, 2))
    y = check_labels(y, X.shape[0])
    pred = star_classify(fan.coordinates(X), a)
    wrong = pred != y
    R = 1.5 * fan.rays / np.linalg.norm(fan.rays, axis=1, keepdims=True)
    rx = np.column_stack([np.zeros(len(R)), R[:, 0], np.full(len(R), np.nan)]).ravel() if show_rays else []
    ry = np.column_stack([np.zeros(len(R)), R[:, 1], np.full(len(R), np.nan)]).ravel() if show_rays else []
    return [
        # the rays stay out of the legend (grey, dotted, named in the text): fewer legend rows on a phone
        go.Scatter(x=rx, y=ry, mode="lines", name="fan rays", showlegend=False,
                   line=dict(color=RAY_COLOR, width=1, dash="dot")),
        go.Scatter(x=X[y == 0, 0], y=X[y == 0, 1], mode="markers", name="label 0 (inside)",
                   marker=dict(color=INSIDE, size=5, symbol="circle")),
        go.Scatter(x=X[y == 1, 0], y=X[y == 1, 1], mode="markers", name="label 1 (outside)",
                   marker=dict(color=OUTSIDE, size=6, symbol="x")),
        go.Scatter(x=X[wrong, 0], y=X[wrong, 1], mode="markers", name="misclassified",
                   marker=dict(color="rgba(0,0,0,0)", size=11, line=dict(color="black", width=1.3))),
        go.Scatter(x=poly[:, 0], y=poly[:, 1], mode="lines+markers", name=name, fill="toself",
                   fillcolor="rgba(0,158,115,0.12)", line=dict(color=STAR_COLOR, width=2.5), marker=dict(size=7)),
    ]


def _square_axes(fig: go.Figure, lim: float = 1.55) -> go.Figure:
    fig.update_xaxes(range=[-lim, lim], autorange=False, constrain="domain")
    fig.update_yaxes(range=[-lim, lim], autorange=False, scaleanchor="x", scaleratio=1)
    return fig


@lru_cache(maxsize=2)
def editor_data() -> dict:
    """Data of the star editor: 200 points of the card's truth on the type-B fan and the MLE."""
    fan = type_b_fan(2)
    X, y, _ = make_star_data(fan, A_TRUE, 200, 0.1, rng=7)
    A = fan.coordinates(X)
    sel = select_lambda(A, y, refit=False)
    return {"fan": fan, "X": X, "y": y, "A": A, "a_mle": sel["a"], "lam": sel["lam"]}


def _editor_title(conf: dict) -> str:
    return f"FP {conf['FP']}, FN {conf['FN']}, err {conf['err']} (of 200)"  # short: fits a phone


def star_editor_figure(a1=1.0, a2=1.0, a3=1.0, a4=1.0, a5=1.0, a6=1.0, a7=1.0, a8=1.0) -> go.Figure:
    """The star editor: star(a) over the data with live FP / FN / err (the explorer's figure)."""
    d = editor_data()
    a = np.array([check_positive(v, f"a{i}", allow_zero=True)
                  for i, v in enumerate((a1, a2, a3, a4, a5, a6, a7, a8), start=1)])
    fig = go.Figure(star_traces(d["fan"], a, d["X"], d["y"]))
    base_layout(fig, title=_editor_title(confusion(d["A"], a, d["y"])), xaxis_title="x<sub>1</sub>",
                yaxis_title="x<sub>2</sub>", height=560)
    return _square_axes(fig)


def true_star_figure() -> go.Figure:
    """The star that generated the data (the editor's figure at the true parameter), captioned."""
    fig = star_editor_figure(*A_TRUE)
    return fig.update_layout(title_text="The true star on the type-B fan: " + fig.layout.title.text)


EDITOR_VALUES = tuple(np.round(np.arange(0.5, 3.01, 0.25), 2))
EXPLORER_EDITOR = Explorer("06", "star_editor", star_editor_figure,
                           {f"a{i + 1}": Slider(f"a{i + 1}", EDITOR_VALUES, 1.0) for i in range(8)},
                           description="ray-length sliders a_1..a_8 of a star on the type-B fan, with FP/FN/err")


def star_editor_slider(ray: int = 7, values=EDITOR_VALUES) -> go.Figure:
    """Static twin of the editor: the MLE star (rounded to the slider grid) with one ray's a_i moved."""
    d = editor_data()
    base = np.array([min(EDITOR_VALUES, key=lambda v: abs(v - t)) for t in d["a_mle"]])
    ray = check_int(ray, "ray", minimum=1)
    if ray > 8:
        raise ValueError("ray must be 1..8")
    steps = []
    for v in values:
        a = base.copy()
        a[ray - 1] = v
        steps.append(SliderStep(f"{v:g}", star_traces(d["fan"], a, d["X"], d["y"]),
                                layout=frame_note(_editor_title(confusion(d["A"], a, d["y"])))))
    active = int(np.argmin(np.abs(np.array(values) - base[ray - 1])))
    fig = slider_figure(steps, slider_label=f"a{ray}", active=active, fixed_axes=False,
                        title=f"The fitted star with ray a_{ray} moved: its mistakes in the corner",
                        xaxis_title="x<sub>1</sub>", yaxis_title="x<sub>2</sub>", height=600)
    return _square_axes(fig)


# ---- parameter space for two rays (1-D data, fan v_1 = -e_1, v_2 = e_1)

@lru_cache(maxsize=2)
def chamber_data(grid: int = 81, amax: float = 4.0) -> dict:
    """16 points in [-1, 1] labelled by the interval star(1.4, 2.2), 3 labels flipped; err on a grid
    of (a_1, a_2), the hyperplanes (lines a_1 = 1/|x| or a_2 = 1/x) and a*(1)."""
    grid = check_int(grid, "grid", minimum=2)
    amax = check_positive(amax, "amax")
    rng = np.random.default_rng(3)
    x = np.sort(rng.uniform(-1, 1, 16))
    fan = line_fan()
    A = fan.coordinates(x[:, None])
    y = star_classify(A, [1.4, 2.2])
    y[[2, 9, 14]] = 1 - y[[2, 9, 14]]
    g = np.linspace(amax / grid, amax, grid)
    G1, G2 = np.meshgrid(g, g)
    P = np.stack([G1.ravel(), G2.ravel()])
    U = A @ P
    pred = U > 1.0
    pos = (y == 1)[:, None]
    fp, fn = np.sum(~pos & pred, axis=0), np.sum(pos & ~pred, axis=0)
    lines = [(1.0 / abs(v), 0) if v < 0 else (1.0 / v, 1) for v in x if v != 0 and 1.0 / abs(v) <= amax]
    hx = np.concatenate([[c, c, np.nan] if ax == 0 else [0, amax, np.nan] for c, ax in lines])
    hy = np.concatenate([[0, amax, np.nan] if ax == 0 else [c, c, np.nan] for c, ax in lines])
    return {"x": x, "y": y, "A": A, "grid": g, "P": P, "U": U, "err": (fp + fn).reshape(grid, grid),
            "a1": fit_star(A, y, 1.0).x, "amax": amax, "hyperplanes": (hx, hy)}


def _chamber_traces(lam: float) -> tuple[list, str]:
    d = chamber_data()
    pos = (d["y"] == 1)[:, None]
    s = lam * np.maximum(d["U"], U_FLOOR)
    L = (np.sum(np.where(pos, np.log(-np.expm1(-np.where(pos, s, 1.0))), -s), axis=0)).reshape(d["err"].shape)
    a_star = d["a1"] / lam
    L_star = log_likelihood(a_star, d["A"], d["y"], lam)
    gap = np.log10(np.maximum(L_star - L, 1e-6))
    t = np.linspace(0, d["amax"] * 1.5 / np.max(d["a1"]), 50)
    conf = confusion(d["A"], a_star, d["y"])
    traces = [
        go.Contour(x=d["grid"][::2], y=d["grid"][::2], z=np.round(gap[::2, ::2], 3),
                   contours=dict(coloring="lines", start=-1.0, end=1.5, size=0.25),
                   line=dict(width=1.2), colorscale="Plasma", showscale=False, name="log10(L* - L)",
                   showlegend=True),
        go.Scatter(x=t * d["a1"][0], y=t * d["a1"][1], mode="lines", name="a*(lambda) for all lambda",
                   line=dict(color=STAR_COLOR, width=2, dash="dash")),
        go.Scatter(x=[a_star[0]], y=[a_star[1]], mode="markers", name="a*(lambda)",
                   marker=dict(color=STAR_COLOR, size=13, symbol="star", line=dict(color="black", width=1))),
    ]
    summary = (f"λ = {lam:g}: a* = ({a_star[0]:.2f}, {a_star[1]:.2f}), "
               f"FP {conf['FP']}, FN {conf['FN']}, err {conf['err']}")
    return traces, summary


CHAMBER_LAMS = (0.3, 0.5, 0.7, 1.0, 1.4, 2.0, 3.0, 5.0)


def _chamber_axes(fig: go.Figure) -> go.Figure:
    amax = chamber_data()["amax"]
    fig.update_xaxes(range=[0, amax], autorange=False, constrain="domain",
                     title_text="a<sub>1</sub> (ray -e<sub>1</sub>)")
    fig.update_yaxes(range=[0, amax], autorange=False, title_text="a<sub>2</sub> (ray +e<sub>1</sub>)",
                     scaleanchor="x", scaleratio=1)
    return fig


def _chamber_background() -> list:
    """The lambda-free layers: err on the chambers (grey) and the hyperplanes H_i (lines)."""
    d = chamber_data()
    hx, hy = d["hyperplanes"]
    return [
        go.Heatmap(x=d["grid"], y=d["grid"], z=d["err"], colorscale="Greys", zmin=0, zmax=d["y"].size,
                   colorbar=dict(title=dict(text="err (mistakes)", side="right"), x=1.02), name="err"),
        go.Scatter(x=hx, y=hy, mode="lines", name="hyperplanes H<sub>i</sub>", line=dict(color="#555", width=1)),
    ]


def chamber_figure(lam: float = 1.0) -> go.Figure:
    """Parameter space of the two-ray model: err constant on the chambers of the arrangement
    (grey), contours of log10(L*(lambda) - L_lambda), the line of optima and a*(lambda)."""
    traces, summary = _chamber_traces(check_positive(lam, "lam"))
    fig = go.Figure(_chamber_background() + traces)
    base_layout(fig, title=summary, height=600)
    return _chamber_axes(fig)


EXPLORER_CHAMBERS = Explorer("06", "chambers", chamber_figure,
                             {"lam": Slider("lambda", CHAMBER_LAMS, 1.0)},
                             description="chambers of the 0/1 loss and likelihood contours for two rays")


def chamber_slider() -> go.Figure:
    """Static twin of the chambers explorer (one frame per lambda)."""
    background = _chamber_background()  # small (an 81 x 81 integer grid): repeated in every frame
    steps = []
    for lam in CHAMBER_LAMS:
        traces, summary = _chamber_traces(lam)
        steps.append(SliderStep(f"{lam:g}", background + traces, frame_note(summary)))
    act = CHAMBER_LAMS.index(1.0)
    fig = slider_figure(steps, slider_label="lambda", active=act, fixed_axes=False,
                        title="Two rays: err on the chambers, and the likelihood's contours", height=640)
    return _chamber_axes(fig)


# ---- fan resolution: k equiangular rays

@lru_cache(maxsize=4)
def _resolution_all(seed: int) -> dict:
    return {k: resolution_fit(k, seed) for k in RESOLUTIONS}


def _resolution_traces(k: int, lam_scale: float = 1.0, seed: int = 11) -> tuple[list, str]:
    f = _resolution_all(seed)[k] if k in RESOLUTIONS else resolution_fit(k, seed)
    b = resolution_data(seed)
    a = f["a"] / lam_scale
    X, y = b["X"][b["te"]], b["y"][b["te"]]
    A = f["A"][b["te"]]
    acc_tr = float(np.mean(star_classify(f["A"][b["tr"]], a) == b["y"][b["tr"]]))
    acc_te = float(np.mean(star_classify(A, a) == y))
    traces = star_traces(f["fan"], a, X, y, name=f"MLE star, {k} rays")
    return traces, f"k = {k} rays: training {acc_tr:.3f}, holdout {acc_te:.3f}"


def resolution_figure(k: int = 8, lam_scale: float = 1.0) -> go.Figure:
    """The fitted star on k equiangular rays over the holdout points; ``lam_scale`` multiplies the
    selected lambda (the threshold), so the star is rescaled by 1/lam_scale."""
    traces, summary = _resolution_traces(k, check_positive(lam_scale, "lam_scale"))
    fig = go.Figure(traces)
    base_layout(fig, title=summary, xaxis_title="x<sub>1</sub>", yaxis_title="x<sub>2</sub>", height=560)
    return _square_axes(fig)


EXPLORER_RESOLUTION = Explorer("06", "fan_resolution", resolution_figure,
                               {"k": Slider("rays k", RESOLUTIONS, 8),
                                "lam_scale": Slider("lambda / selected lambda",
                                                    (0.5, 0.7, 0.85, 1.0, 1.2, 1.5, 2.0), 1.0)},
                               description="expressivity vs overfitting as the fan gets finer; lambda as a threshold")


def resolution_slider() -> go.Figure:
    """Static twin of the fan-resolution explorer (one frame per k, selected lambda)."""
    steps = []
    for k in RESOLUTIONS:
        traces, summary = _resolution_traces(k)
        steps.append(SliderStep(str(k), traces, frame_note(summary)))
    act = RESOLUTIONS.index(8)
    fig = slider_figure(steps, slider_label="rays k", active=act, fixed_axes=False,
                        title="Finer fans: the fitted star over the 150 holdout points",
                        xaxis_title="x<sub>1</sub>", yaxis_title="x<sub>2</sub>", height=600)
    return _square_axes(fig)


def resolution_curve_figure(curve: dict) -> go.Figure:
    """Training and holdout accuracy against the number of rays k."""
    fig = go.Figure([
        go.Scatter(x=curve["ks"], y=curve["train"], mode="lines+markers", name="training accuracy",
                   line=dict(color=color_for(0), dash="solid"), marker=dict(symbol="circle")),
        go.Scatter(x=curve["ks"], y=curve["holdout"], mode="lines+markers", name="holdout accuracy",
                   line=dict(color=color_for(1), dash="dash"), marker=dict(symbol="square")),
    ])
    return base_layout(fig, xaxis_title="number of rays k (= VC dimension)", yaxis_title="accuracy (fraction correct)",
                       height=400, title="Training and holdout accuracy as the fan gets finer")


def lambda_path_figure(p: dict) -> go.Figure:
    """FP, FN and err along a*(lambda) (log lambda axis)."""
    fig = go.Figure([
        go.Scatter(x=p["lams"], y=p["FP"], mode="lines", name="false positives FP",
                   line=dict(color=color_for(1), shape="hv", dash="solid")),
        go.Scatter(x=p["lams"], y=p["FN"], mode="lines", name="false negatives FN",
                   line=dict(color=color_for(0), shape="hv", dash="dash")),
        go.Scatter(x=p["lams"], y=p["err"], mode="lines", name="err = FP + FN",
                   line=dict(color="black", shape="hv", width=2.5, dash="dot")),
    ])
    return base_layout(fig, xaxis_title="rate lambda (log scale)", yaxis_title="training mistakes (count of 500)",
                       logx=True, height=420, title="FP, FN and err along the path a*(lambda) = a*(1)/lambda")


def chamber_phase(trace: Trace) -> list[Phase]:
    """Phases of a star-MLE run: 'searching chambers' while the training classification still
    changes, 'inside the final chamber' after (the 0/1 loss is constant on chambers)."""
    err, fp = trace["err"], trace["FP"]
    changed = np.flatnonzero((np.diff(err) != 0) | (np.diff(fp) != 0))
    t_c = int(changed[-1] + 1) if changed.size else 0
    end = float(trace.iteration[-1])
    phases = [Phase(float(t_c), end, "inside the final chamber")]
    if t_c > 0:
        phases.insert(0, Phase(0.0, float(t_c), "moving between chambers"))
    return phases




# --------------------------------------------------------------------------- the comparison

#: Colours, marker symbols and dashes of the comparison's methods, shared by its two figures.
METHOD_COLORS = {STAR: STAR_COLOR, NET: color_for(0), SVM: color_for(1), KITE: color_for(6)}
METHOD_SYMBOLS = {STAR: "star", NET: "circle", SVM: "square", KITE: "star-diamond"}
METHOD_DASHES = {STAR: "solid", NET: "dot", SVM: "dashdot"}


def comparison_figure(details: dict) -> go.Figure:
    """Test accuracy of every tuned method on each data set of a run of 06.star_vs_flexible,
    with the true star's (the Bayes rate) as a ceiling."""
    _check_details(details, ("seeds", "acc", "reference"))
    seeds = [f"data set {s}" for s in details["seeds"]]
    bayes = [r["true star (Bayes classifier)"][1] for r in details["reference"]]
    fig = go.Figure(go.Scatter(x=seeds, y=bayes, mode="lines+markers", name="true star (Bayes rate)",
                               line=dict(color="black", dash="dot"), marker=dict(symbol="line-ew-open", size=14)))
    for m, acc in details["acc"].items():
        fig.add_trace(go.Scatter(x=seeds, y=acc[:, 1], mode="markers", name=m,
                                 marker=dict(color=METHOD_COLORS[m], size=12, symbol=METHOD_SYMBOLS[m])))
    return base_layout(fig, xaxis_title="claim data set", yaxis_title="test accuracy (2000 fresh points)", height=420,
                       title="Test accuracy of the tuned methods on the claim's data sets")


def boundaries_figure(seed: int, settings: dict, grid: int = 121) -> go.Figure:
    """Decision boundaries of the tuned star, ReLU net and RBF SVM on comparison data set ``seed``
    (the paper's Fig. 10) inside the unit disk where the data live, with the true star dashed and
    the 500 training points."""
    seed = check_int(seed, "seed")
    grid = check_int(grid, "grid", minimum=10)
    d = comparison_data(seed)
    g = np.linspace(-1.05, 1.05, grid)
    G = np.stack(np.meshgrid(g, g), axis=-1).reshape(-1, 2)
    fan = type_b_fan(2)
    true_poly = star_polygon(fan, d["a_true"])
    X, y = d["X"], d["y"]
    traces = [
        go.Scatter(x=X[y == 0, 0], y=X[y == 0, 1], mode="markers", name="label 0 (inside)",
                   marker=dict(color=INSIDE, size=4, opacity=0.45)),
        go.Scatter(x=X[y == 1, 0], y=X[y == 1, 1], mode="markers", name="label 1 (outside)",
                   marker=dict(color=OUTSIDE, size=4, symbol="x", opacity=0.45)),
        go.Scatter(x=true_poly[:, 0], y=true_poly[:, 1], mode="lines", name="true star",
                   line=dict(color="black", dash="dash", width=2)),
    ]
    for m in (NET, SVM):
        model = fit_method(m, seed, settings[m])
        z = model.predict(G).astype(float)
        z[np.linalg.norm(G, axis=1) > 1.0] = np.nan  # no data outside the disk: no boundary to draw
        z = z.reshape(grid, grid)
        traces.append(go.Contour(x=g, y=g, z=z, contours=dict(start=0.5, end=0.5, size=1, coloring="lines"),
                                 line=dict(width=2.5, dash=METHOD_DASHES[m]),
                                 colorscale=[[0, METHOD_COLORS[m]], [1, METHOD_COLORS[m]]],
                                 showscale=False, name=m, showlegend=True, hoverinfo="skip"))
    star = fit_method(STAR, seed, settings[STAR])
    poly = star_polygon(fan, star.a_)
    traces.append(go.Scatter(x=poly[:, 0], y=poly[:, 1], mode="lines+markers", name=STAR,
                             line=dict(color=METHOD_COLORS[STAR], width=3), marker=dict(size=7)))
    fig = go.Figure(traces)
    base_layout(fig, xaxis_title="x<sub>1</sub>", yaxis_title="x<sub>2</sub>", height=560,
                title=f"Decision boundaries on data set {seed}, as in the paper's Fig. 10")
    return _square_axes(fig, lim=1.05)
