"""Tests of chapter 06's method: star-shaped polyhedral classifiers (fan coordinates, chambers,
monotonicity, the concave log-likelihood and its maximiser, the scikit-learn-style classifier)."""
import subprocess
import sys
from itertools import product

import numpy as np
import pytest
from scipy.optimize import minimize
from sklearn.base import clone
from sklearn.model_selection import GridSearchCV, cross_val_score

from optbook.classical import starshaped as S
from optbook.classical import starshaped_chapter as ch
from optbook.core import check_derivatives

@pytest.fixture(scope="module")
def data():
    fan = S.type_b_fan(2)
    X, y, y_clean = ch.make_star_data(fan, ch.A_TRUE, 300, 0.1, rng=0)
    return fan, X, y, y_clean, fan.coordinates(X)



# ---------------------------------------------------------------- fan coordinates

@pytest.mark.parametrize("fan", [S.type_b_fan(2), S.kite_fan(2), S.equiangular_fan(7),
                                 S.fan_2d([[1, 0], [0.2, 1], [-1, 0.3], [-0.4, -1], [0.9, -0.8]])])
def test_coordinates_reconstruct_x_and_are_sparse_nonnegative(fan):
    X = np.random.default_rng(1).normal(size=(400, 2)) * 3
    C = fan.coordinates(X)
    assert np.allclose(C @ fan.rays, X, atol=1e-12)
    assert C.min() >= 0
    assert np.all((C > 0).sum(axis=1) <= 2)
    assert np.allclose(C, fan.coordinates(X, method="generic"), atol=1e-12)


def test_f_interpolates_generators_and_is_continuous_across_rays():
    fan = S.type_b_fan(2)
    a = np.random.default_rng(2).uniform(0.5, 3, fan.n_rays)
    assert np.allclose(fan.coordinates(fan.rays) @ a, a)  # f_a(v_i) = a_i
    eps = 1e-7
    rot = lambda t: np.array([[np.cos(t), -np.sin(t)], [np.sin(t), np.cos(t)]])
    for v in fan.rays:
        left, right = fan.coordinates((rot(eps) @ v)[None]) @ a, fan.coordinates((rot(-eps) @ v)[None]) @ a
        assert abs(left[0] - right[0]) < 1e-5


def test_f_is_positively_homogeneous():
    fan = S.equiangular_fan(9)
    X = np.random.default_rng(3).normal(size=(50, 2))
    assert np.allclose(fan.coordinates(2.5 * X), 2.5 * fan.coordinates(X))


def test_kite_closed_form_matches_generic_solver():
    X = np.random.default_rng(4).normal(size=(300, 2))
    assert np.allclose(S.kite_coordinates(X), S.kite_fan(2).coordinates(X, method="generic"))
    X3 = np.random.default_rng(5).normal(size=(300, 3))
    assert np.allclose(S.kite_coordinates(X3), S.kite_fan(3).coordinates(X3))


@pytest.mark.parametrize("d", [2, 3])
def test_type_b_closed_form_matches_generic_solver(d):
    X = np.random.default_rng(6).normal(size=(300, d))
    fan = S.type_b_fan(d)
    assert fan.n_rays == 3 ** d - 1
    assert np.allclose(S.type_b_coordinates(X), fan.coordinates(X, method="generic"), atol=1e-12)


def test_points_on_rays_and_origin_are_deterministic():
    fan = S.type_b_fan(2)
    C = fan.coordinates(np.vstack([fan.rays, [[0.0, 0.0]]]))
    assert np.allclose(C[:-1], np.eye(fan.n_rays))
    assert np.all(C[-1] == 0)


def test_type_b_rays_ordered_by_angle_from_e1():
    assert np.allclose(S.type_b_fan(2).rays, [[1, 0], [1, 1], [0, 1], [-1, 1], [-1, 0], [-1, -1], [0, -1], [1, -1]])


# ---------------------------------------------------------------- classifier, chambers, monotonicity

def test_generators_are_shattered():
    """VC dimension >= n (Thm 3.1): every labelling of the generators is realised by a_i = 1 +- eps."""
    fan = S.type_b_fan(2)
    A = fan.coordinates(fan.rays)
    for labels in product((0, 1), repeat=fan.n_rays):
        lab = np.array(labels)
        a = np.where(lab == 1, 1.1, 0.9)
        assert np.array_equal(S.star_classify(A, a), lab)


def test_same_chamber_same_classification(data):
    _, _, y, _, A = data
    rng = np.random.default_rng(7)
    for _ in range(50):
        a = rng.uniform(0.5, 3, A.shape[1])
        b = a * (1 + 1e-9 * rng.uniform(size=a.size))  # a tiny move rarely crosses a hyperplane
        if np.array_equal(S.chamber_signs(A, a), S.chamber_signs(A, b)):
            assert S.confusion(A, a, y) == S.confusion(A, b, y)
    # and different classifications imply different chambers
    a, b = rng.uniform(0.5, 3, (2, A.shape[1]))
    if not np.array_equal(S.star_classify(A, a), S.star_classify(A, b)):
        assert not np.array_equal(S.chamber_signs(A, a), S.chamber_signs(A, b))


def test_fp_increase_fn_decrease_along_positive_directions(data):
    """Thm 3.4: FP(a) <= FP(a + t), FN(a) >= FN(a + t) for t >= 0."""
    _, _, y, _, A = data
    rng = np.random.default_rng(8)
    for _ in range(100):
        a = rng.uniform(0.2, 3, A.shape[1])
        t = rng.exponential(0.5, A.shape[1]) * (rng.uniform(size=A.shape[1]) < 0.6)
        c0, c1 = S.confusion(A, a, y), S.confusion(A, a + t, y)
        assert c0["FP"] <= c1["FP"] and c0["FN"] >= c1["FN"]


def test_perfect_classifiers_form_a_convex_set():
    """Cor 3.3 on noise-free data: the midpoint of two perfect separators is perfect."""
    fan = S.type_b_fan(2)
    X, _, y = ch.make_star_data(fan, ch.A_TRUE, 200, 0.0, rng=9)
    A = fan.coordinates(X)
    rng = np.random.default_rng(9)
    perfect = [a for a in ch.A_TRUE * rng.uniform(0.97, 1.03, (300, 8)) if S.confusion(A, a, y)["err"] == 0]
    assert len(perfect) >= 4
    for a, b in zip(perfect[::2], perfect[1::2]):
        assert S.confusion(A, 0.5 * (a + b), y)["err"] == 0


# ---------------------------------------------------------------- log-likelihood

def test_loglik_matches_a_direct_formula(data):
    _, _, y, _, A = data
    a, lam = np.full(A.shape[1], 1.3), 0.7
    u = A @ a
    direct = np.sum(np.log(1 - np.exp(-lam * u[y == 1]))) - lam * np.sum(u[y == 0])
    assert np.isclose(S.log_likelihood(a, A, y, lam), direct, rtol=1e-12)


def test_gradient_and_hessian_match_finite_differences(data):
    _, _, y, _, A = data
    a = np.random.default_rng(10).uniform(0.8, 2.5, A.shape[1])
    chk = check_derivatives(lambda v: S.log_likelihood(v, A, y, 0.8),
                            lambda v: S.log_likelihood_grad(v, A, y, 0.8), a,
                            lambda v: S.log_likelihood_hess(v, A, y, 0.8))
    assert chk.ok(1e-6), chk


def test_loglik_is_concave_and_strictly_so_with_full_rank(data):
    _, _, y, _, A = data
    rng = np.random.default_rng(11)
    for _ in range(100):
        a, b = rng.uniform(0.1, 4, (2, A.shape[1]))
        mid = S.log_likelihood(0.5 * (a + b), A, y, 1.2)
        assert mid >= 0.5 * (S.log_likelihood(a, A, y, 1.2) + S.log_likelihood(b, A, y, 1.2)) - 1e-9
    assert np.linalg.matrix_rank(A[y == 1]) == A.shape[1]
    ev = np.linalg.eigvalsh(S.log_likelihood_hess(rng.uniform(0.5, 2, A.shape[1]), A, y, 1.2))
    assert ev.max() < 0


def test_loglik_depends_on_lambda_times_a_only(data):
    _, _, y, _, A = data
    a = np.random.default_rng(12).uniform(0.5, 2, A.shape[1])
    assert np.isclose(S.log_likelihood(a, A, y, 2.0), S.log_likelihood(2.0 * a, A, y, 1.0), rtol=1e-12)


def test_positive_point_at_zero_gives_a_finite_floor():
    A = np.array([[0.0, 1.0], [1.0, 0.0]])
    v = S.log_likelihood([0.0, 1.0], A, [0, 1], 1.0)  # the positive point has u = 0
    assert np.isfinite(v) and v < -20


# ---------------------------------------------------------------- the MLE (Algorithm 1)

def test_mle_satisfies_kkt_and_matches_an_independent_solver(data):
    _, _, y, _, A = data
    res = S.fit_star(A, y, 1.0)
    assert res.success
    assert S.kkt_residual(res.x, A, y, 1.0) < 1e-6
    ref = minimize(lambda v: -S.log_likelihood(v, A, y, 1.0), np.full(A.shape[1], 2.0),
                   jac=lambda v: -S.log_likelihood_grad(v, A, y, 1.0), method="SLSQP",
                   bounds=[(0, None)] * A.shape[1], options=dict(ftol=1e-14, maxiter=1000))
    ref_x = np.maximum(ref.x, 0.0)
    assert np.allclose(res.x, ref_x, rtol=1e-4, atol=1e-5)
    assert res.fun >= S.log_likelihood(ref_x, A, y, 1.0) - 1e-8


def test_mle_scaling_in_lambda(data):
    _, _, y, _, A = data
    a1 = S.fit_star(A, y, 1.0).x
    for lam in (0.2, 3.0):
        assert np.allclose(lam * S.fit_star(A, y, lam).x, a1, rtol=1e-5)


def test_mle_boundary_optimum_is_kept():
    """A ray with no class-0 point nearby but positive points that want a_i = 0: with only
    positive points on ray 2's side... here class-0 points pull a_2 to 0 (KKT with a_2 = 0)."""
    fan = S.line_fan()
    x = np.array([-0.9, -0.5, -0.2, 0.3, 0.6, 0.9])
    y = np.array([1, 0, 0, 0, 0, 0])
    A = fan.coordinates(x[:, None])
    res = S.fit_star(A, y, 1.0)
    assert res.x[1] == 0.0 and res.jac[1] <= 0
    assert S.kkt_residual(res.x, A, y, 1.0) < 1e-7


def test_mle_fits_noise_free_star_data():
    """The exponential model is misspecified for hard labels, so the MLE is not a perfect
    separator (about 0.86-0.90 here), but far better than a linear classifier."""
    fan = S.type_b_fan(2)
    X, y, _ = ch.make_star_data(fan, ch.A_TRUE, 600, 0.0, rng=13)
    A = fan.coordinates(X)
    sel = S.select_lambda(A, y, refit=False)
    acc = np.mean(S.star_classify(A, sel["a"]) == y)
    lin = np.mean(ch.logistic_predict(ch.logistic_regression(X, y).x, X) == y)
    assert acc > 0.8 and acc > lin + 0.15


def test_select_lambda_scaling_shortcut_agrees(data):
    _, _, y, _, A = data
    lams = np.geomspace(0.3, 3, 7)
    a, b = S.select_lambda(A, y, lams), S.select_lambda(A, y, lams, refit=False)
    assert a["best"] == b["best"] and np.allclose(a["fits"], b["fits"], rtol=1e-5)


def test_threshold_lambda_is_the_best_over_every_lambda(data):
    """The exact choice beats or ties every lambda of a fine grid, and its accuracy is the one it reports."""
    _, _, y, _, A = data
    a1 = S.fit_star(A, y, 1.0).x
    lam, acc = S.threshold_lambda(A @ a1, y)
    assert acc == pytest.approx(np.mean(S.star_classify(A, a1 / lam) == y))
    grid = np.geomspace(0.05, 20, 4001)
    brute = np.mean(((A @ a1)[:, None] > grid[None, :]) == (y == 1)[:, None], axis=0)
    assert acc >= brute.max() - 1e-12
    assert acc >= S.select_lambda(A, y, refit=False)["train_acc"].max()


def test_threshold_lambda_edge_cases():
    # ties in u cannot be split; all-outside and all-inside cuts; the smallest lambda on ties
    assert S.threshold_lambda([1.0, 1.0, 3.0], [0, 1, 1]) == (0.5, pytest.approx(2 / 3))
    assert S.threshold_lambda([0.5, 2.0], [1, 1]) == (0.25, 1.0)
    assert S.threshold_lambda([0.5, 2.0], [0, 0]) == (4.0, 1.0)
    assert S.threshold_lambda([0.0, 0.0], [1, 0])[1] == 0.5
    lam, _ = S.threshold_lambda([1.0, 2.0, 3.0, 4.0], [0, 1, 0, 1])  # three cuts with 3 of 4 right
    assert lam == 1.5


def test_type_b_star_with_the_dents_switched_off_is_the_kite_star(data):
    """Reduction test of the comparison's control: a kite star is the type-B star whose diagonal
    values are a_(+-1,+-1) = a_(+-1,0) + a_(0,+-1) (f linear on each quadrant). So the type-B
    coordinates times that map are the kite coordinates, and the type-B MLE is at least as likely."""
    fan, X, y, _, A = data
    # kite rays e1, e2, -e1, -e2 -> type-B rays (1,0), (1,1), (0,1), (-1,1), (-1,0), (-1,-1), (0,-1), (1,-1)
    M = np.array([[1, 0, 0, 0], [1, 1, 0, 0], [0, 1, 0, 0], [0, 1, 1, 0],
                  [0, 0, 1, 0], [0, 0, 1, 1], [0, 0, 0, 1], [1, 0, 0, 1]], dtype=float)
    K = S.kite_fan(2).coordinates(X)
    assert np.allclose(A @ M, K, atol=1e-12)
    kite = S.fit_star(K, y, 1.0)
    assert np.allclose(S.star_classify(A, M @ kite.x), S.star_classify(K, kite.x))
    assert S.fit_star(A, y, 1.0).fun >= kite.fun - 1e-9


# ---------------------------------------------------------------- the scikit-learn-style classifier

def test_star_classifier_equals_fit_star_and_select_lambda(data):
    fan, X, y, _, A = data
    clf = S.StarClassifier(fan, lam=0.7).fit(X, y)
    assert np.allclose(clf.a_, S.fit_star(A, y, 0.7).x)
    assert np.array_equal(clf.predict(X), S.star_classify(A, clf.a_))
    auto = S.StarClassifier(fan).fit(X, y)
    sel = S.select_lambda(A, y, refit=False)
    assert auto.lam_ == sel["lam"] and np.allclose(auto.a_, sel["a"])
    assert auto.score(X, y) == pytest.approx(sel["train_acc"].max())
    assert np.array_equal(auto.classes_, [0, 1]) and auto.n_features_in_ == 2
    exact = S.StarClassifier(fan, lam="exact").fit(X, y)
    a1 = S.fit_star(A, y, 1.0).x
    assert exact.lam_ == S.threshold_lambda(A @ a1, y)[0] and np.allclose(exact.a_, a1 / exact.lam_)
    assert exact.score(X, y) >= auto.score(X, y)


def test_star_classifier_scores_and_probabilities_are_consistent(data):
    _, X, y, _, _ = data
    clf = S.StarClassifier().fit(X, y)  # default fan: the type-B fan
    assert clf.fan_.n_rays == 8
    assert np.array_equal(clf.predict(X), (clf.decision_function(X) > 0).astype(int))
    P = clf.predict_proba(X)
    assert np.allclose(P.sum(axis=1), 1.0) and P.min() >= 0
    # P(outside) is the exponential CDF of f_a(x) with the chosen rate
    assert np.allclose(P[:, 1], 1 - np.exp(-clf.lam_ * (clf.decision_function(X) + 1)))


def test_star_classifier_works_with_scikit_learn_tools(data):
    fan, X, y, _, _ = data
    clf = S.StarClassifier(fan, lam=1.0)
    assert clone(clf).get_params()["lam"] == 1.0
    scores = cross_val_score(clf, X, y, cv=3)
    assert scores.shape == (3,) and scores.min() > 0.6
    search = GridSearchCV(S.StarClassifier(fan), {"lam": [0.5, 1.0, 2.0]}, cv=3).fit(X, y)
    assert search.best_params_["lam"] in (0.5, 1.0, 2.0)


def test_star_classifier_rejects_bad_input(data):
    fan, X, y, _, _ = data
    with pytest.raises(ValueError, match="not fitted"):
        S.StarClassifier().predict(X)
    with pytest.raises(ValueError, match="lam"):
        S.StarClassifier(lam="best").fit(X, y)
    with pytest.raises(ValueError, match="lam"):
        S.StarClassifier(lam=-1.0).fit(X, y)
    with pytest.raises(ValueError, match="fan"):
        S.StarClassifier(fan="type-B").fit(X, y)
    with pytest.raises(ValueError, match="X"):
        S.StarClassifier().fit(np.ones((5, 3)), np.zeros(5))
    with pytest.raises(ValueError, match="y"):
        S.StarClassifier().fit(X, np.full(len(X), 2))
    clf = S.StarClassifier(fan).fit(X, y)
    with pytest.raises(ValueError, match="X"):
        clf.predict(np.ones((2, 3)))
    with pytest.raises(ValueError, match="X"):
        clf.predict_proba([[np.nan, 0.0]])


def test_importing_the_method_pulls_neither_plotly_nor_the_experiments():
    code = ("import sys; from optbook.classical.starshaped import StarClassifier, fit_star; "
            "bad = [m for m in ('plotly', 'torch', 'optbook.classical.starshaped_chapter', 'sklearn.svm') if m in sys.modules]; "
            "assert not bad, bad")
    subprocess.run([sys.executable, "-c", code], check=True)



# ---------------------------------------------------------------- bad input

def _bad_cases():
    fan = S.type_b_fan(2)
    A = fan.coordinates(np.random.default_rng(0).normal(size=(20, 2)))
    y = (np.arange(20) % 2).astype(int)
    return [
        (lambda: S.fan_2d([[1, 0], [0, 1], [-1, 0]]), "^rays must positively span"),  # a gap of pi
        (lambda: S.fan_2d([[1, 0], [0, 1]]), "^rays must hold at least 3"),
        (lambda: S.fan_2d([[1, 0], [2, 0], [-1, 1], [-1, -1]]), "^rays must point in distinct"),
        (lambda: S.fan_2d([[np.nan, 0], [0, 1], [-1, -1]]), "^rays must be finite"),
        (lambda: S.Fan([[1.0, 0], [2.0, 0]], np.array([[0, 1]])), "^cones must be simplicial"),
        (lambda: S.Fan([[1.0, 0.0], [0.0, 1.0]], np.empty((0, 2), dtype=int)), "^cones must be a non-empty"),
        (lambda: S.equiangular_fan(2), "^k must"),
        (lambda: fan.coordinates(np.ones((3, 3))), "^X must have shape"),
        (lambda: fan.coordinates([[np.nan, 0.0]]), "^X must be finite"),
        (lambda: fan.coordinates(np.empty((0, 2))), "^X must be a non-empty"),
        (lambda: fan.coordinates([[1.0, 0.0]], method="magic"), "^method must be"),
        (lambda: S.type_b_coordinates(np.empty((0, 2))), "^X must be a non-empty"),
        (lambda: S.kite_coordinates([[1.0, np.inf]]), "^X must be finite"),
        (lambda: S.star_classify(A, -np.ones(8)), "^a must be non-negative"),
        (lambda: S.star_classify(A, np.ones(3)), "^a must have length 8"),
        (lambda: S.confusion(A, np.ones(8), np.full(20, 2)), "^y must contain only 0 and 1"),
        (lambda: S.fit_star(A, y[:-1]), "^y must have length 20"),
        (lambda: S.fit_star(A, y, 0.0), "^lam must be positive"),
        (lambda: S.log_likelihood(np.ones(8), A, y, np.inf), "^lam must be finite"),
        (lambda: S.fit_star(A, y, a0=np.full(8, np.nan)), "^a0 must be finite"),
        (lambda: S.fit_star(A, y, tol=-1.0), "^tol must be positive"),
        (lambda: S.fit_star(A, y, maxiter=0), "^maxiter must"),
        (lambda: S.fit_star(np.full((20, 8), np.nan), y), "^A must be finite"),
        (lambda: S.kkt_residual(np.ones(8), A, y, lam=-1.0), "^lam must be positive"),
        (lambda: S.select_lambda(A, y, [1.0, -1.0]), "^lams must be positive"),
        (lambda: S.select_lambda(A, y, []), "^lams must not be empty"),
        (lambda: S.select_lambda(np.empty((0, 8)), []), "^lams must not be empty|^A must be a non-empty"),
        (lambda: S.threshold_lambda([1.0, -1.0], [0, 1]), "^u must be non-negative"),
        (lambda: S.threshold_lambda([1.0, np.nan], [0, 1]), "^u must be finite"),
        (lambda: S.threshold_lambda([], []), "^u must"),
        (lambda: S.threshold_lambda([1.0, 2.0], [0]), "^y must have length 2"),
    ]


@pytest.mark.parametrize("case", range(len(_bad_cases())))
def test_bad_inputs_raise_value_errors_naming_the_argument(case):
    call, pattern = _bad_cases()[case]
    with pytest.raises(ValueError, match=pattern):
        call()
