"""Tests of chapter 06's experiments: baselines, data, the tuned comparison, figures and
explorers."""
import numpy as np
import pytest
from scipy.optimize import minimize
from sklearn.svm import SVC

from optbook.classical import starshaped as S
from optbook.classical import starshaped_chapter as ch

@pytest.fixture(scope="module")
def data():
    fan = S.type_b_fan(2)
    X, y, y_clean = ch.make_star_data(fan, ch.A_TRUE, 300, 0.1, rng=0)
    return fan, X, y, y_clean, fan.coordinates(X)



def test_mle_trace_records_objective_and_mistakes(data):
    _, _, y, _, A = data
    res = S.fit_star(A, y, 1.0)
    tr = res.trace
    assert len(tr) == res.nit + 1
    assert np.isclose(tr.objective[-1], -res.fun)
    assert tr.objective[-1] <= tr.objective[0]
    assert tr["err"][-1] == S.confusion(A, res.x, y)["err"]
    phases = ch.chamber_phase(tr)
    assert phases[-1].label == "inside the final chamber"


# ---------------------------------------------------------------- baselines

def test_logistic_regression_matches_closed_form_gradient_zero(data):
    _, X, y, _, _ = data
    res = ch.logistic_regression(X, y, l2=0.0)
    Z = np.hstack([X, np.ones((len(X), 1))])
    p = 1 / (1 + np.exp(-Z @ res.x))
    assert np.abs(Z.T @ (p - y)).max() / len(y) < 1e-7
    assert ch.logistic_predict(res.x, X).shape == y.shape


def test_relu_net_is_deterministic_keeps_the_best_restart_and_learns():
    fan = S.type_b_fan(2)
    X, y, _ = ch.make_star_data(fan, ch.A_TRUE, 300, 0.0, rng=14)
    n1, n2 = ch.relu_net(X, y, restarts=3, seed=3), ch.relu_net(X, y, restarts=3, seed=3)
    assert np.array_equal(n1.predict(X), n2.predict(X))
    assert n1.hidden_layer_sizes == (5, 2) and n1.activation == "relu"
    losses = [ch.relu_net(X, y, restarts=1, seed=3, max_iter=1000).loss_]
    assert n1.loss_ <= losses[0] + 1e-12  # the first restart is among the three
    assert n1.score(X, y) > 0.8


def test_rbf_svm_is_scikit_learns():
    fan = S.type_b_fan(2)
    X, y, _ = ch.make_star_data(fan, ch.A_TRUE, 200, 0.0, rng=15)
    svm = ch.rbf_svm(X, y, C=4.0, gamma=10.0)
    ref = SVC(kernel="rbf", C=4.0, gamma=10.0).fit(X, y)
    assert np.array_equal(svm.predict(X), ref.predict(X)) and svm.score(X, y) > 0.8


def test_data_is_deterministic_and_flips_at_the_rate():
    fan = S.type_b_fan(2)
    X1, y1, c1 = ch.make_star_data(fan, ch.A_TRUE, 4000, 0.1, rng=16)
    X2, y2, _ = ch.make_star_data(fan, ch.A_TRUE, 4000, 0.1, rng=16)
    assert np.array_equal(X1, X2) and np.array_equal(y1, y2)
    assert 0.08 < np.mean(y1 != c1) < 0.12
    assert np.linalg.norm(X1, axis=1).max() <= 1


# ---------------------------------------------------------------- explorers and figures

def test_explorers_render_and_respond():
    f1 = ch.EXPLORER_EDITOR.render(a3=2.5)
    f2 = ch.EXPLORER_EDITOR.render(a3=0.5)
    assert f1.layout.title.text != f2.layout.title.text
    for e in (ch.EXPLORER_CHAMBERS, ch.EXPLORER_RESOLUTION):
        assert e.render().data
    titles = {ch.EXPLORER_CHAMBERS.render(lam=lam).layout.title.text for lam in (0.5, 2.0)}
    assert len(titles) == 2


def test_static_sliders_have_frames():
    for fig, n in ((ch.star_editor_slider(), len(ch.EDITOR_VALUES)), (ch.chamber_slider(), len(ch.CHAMBER_LAMS)),
                   (ch.resolution_slider(), len(ch.RESOLUTIONS))):
        assert len(fig.frames) == n and fig.layout.sliders
        # a fixed title (the caption; the numbers of each position are a note in the plot) above the legend
        assert fig.layout.title.text and fig.layout.margin.t >= 100
        # each position's numbers travel with its frame (a caption does not follow the slider)
        assert all(f.layout.annotations and not f.layout.title.text for f in fig.frames)


def test_star_polygon_vertices():
    fan = S.type_b_fan(2)
    a = np.arange(1, 9, dtype=float)
    poly = ch.star_polygon(fan, a)
    assert np.allclose(poly[:-1], fan.rays / a[:, None])


# ---------------------------------------------------------------- the comparison

def test_comparison_data_is_deterministic_and_as_the_paper():
    d1, d2 = ch.comparison_data(7), ch.comparison_data(7)
    assert d1 is d2 or np.array_equal(d1["X"], d2["X"])
    assert d1["X"].shape == (ch.M_TRAIN, 2) and d1["X_test"].shape == (ch.M_TEST, 2)
    assert ch.M_TRAIN == 500 and ch.FLIP == 0.1
    assert np.all((d1["a_true"] >= ch.TRUTH_RANGE[0]) & (d1["a_true"] <= ch.TRUTH_RANGE[1]))
    # the true star misclassifies about the flipped 10% of the test points
    A = S.type_b_fan(2).coordinates(d1["X_test"])
    assert 0.86 < np.mean(S.star_classify(A, d1["a_true"]) == d1["y_test"]) < 0.94


def test_every_method_gets_the_same_grid_size_and_held_out_tuning_seeds():
    sizes = {m: int(np.prod([len(v) for v in g.values()])) for m, g in ch.GRIDS.items()}
    assert len(set(sizes.values())) == 1, sizes
    assert not set(ch.TUNING_SEEDS) & set(ch.CLAIM_SEEDS)
    assert len(ch.CLAIM_SEEDS) >= 5
    assert 0.83 > min(v for v in ch.STAR_LAMS if v != "auto") and 0.83 < max(v for v in ch.STAR_LAMS if v != "auto")


def test_runaway_vertex_is_the_likelihoods_optimum_not_a_solver_failure():
    """On comparison data set 0 the MLE puts a_4 = 0 (the true vertex on that ray lies beyond the
    disk): the KKT conditions hold with a strictly negative partial derivative there, the label-0
    and label-1 coordinates have full rank (a unique maximum, Thm 3.9), and an independent
    solver agrees."""
    d = ch.comparison_data(0)
    A, y = S.type_b_fan(2).coordinates(d["X"]), d["y"]
    assert np.linalg.matrix_rank(A[y == 0]) == 8 and np.linalg.matrix_rank(A[y == 1]) == 8
    res = S.fit_star(A, y, 1.0)
    assert res.x[3] == 0.0 and res.jac[3] < -1.0
    assert S.kkt_residual(res.x, A, y, 1.0) < 1e-8
    ref = minimize(lambda v: -S.log_likelihood(np.maximum(v, 0), A, y, 1.0), np.ones(8),
                   jac=lambda v: -S.log_likelihood_grad(np.maximum(v, 0), A, y, 1.0),
                   hess=lambda v: -S.log_likelihood_hess(np.maximum(v, 0), A, y, 1.0), method="trust-constr",
                   bounds=[(0, None)] * 8, options=dict(gtol=1e-12, xtol=1e-14, maxiter=3000))
    assert np.allclose(np.maximum(ref.x, 0), res.x, atol=1e-5)
    (ray, true_radius), = ch.runaway_vertices(0, {"lam": 1.0})
    assert ray == 4 and true_radius > 1.0


def test_accuracy_is_cached_and_matches_a_direct_fit():
    tr, te = ch.accuracy(ch.SVM, 100, C=4.0, gamma=10.0)
    d = ch.comparison_data(100)
    svm = SVC(C=4.0, gamma=10.0).fit(d["X"], d["y"])
    assert te == pytest.approx(svm.score(d["X_test"], d["y_test"]))
    assert tr == pytest.approx(svm.score(d["X"], d["y"]))


def test_comparison_rows_and_figures_from_a_fast_run():
    from optbook import claims

    res = claims.run_claim("06.star_vs_flexible", fast=True, with_control=False)
    rows = ch.comparison_rows(res.details)
    names = {r["method"] for r in rows}
    assert {ch.STAR, ch.NET, ch.SVM, "true star (Bayes classifier)", "logistic regression"} <= names
    assert [r["test (median)"] for r in rows] == sorted((r["test (median)"] for r in rows), reverse=True)
    acc = res.details["acc"]
    gap = acc[ch.STAR][:, 1] - np.maximum(acc[ch.NET][:, 1], acc[ch.SVM][:, 1])
    assert res.measured["gap_median"] == pytest.approx(np.median(gap))
    fig = ch.comparison_figure(res.details)
    assert len(fig.data) == 1 + len(res.details["acc"])
    settings = {m: t.best for m, t in res.details["tunings"].items()}
    assert len(ch.boundaries_figure(res.details["seeds"][0], settings, grid=30).data) == 6


# ---------------------------------------------------------------- bad input

def _bad_cases():
    fan = S.type_b_fan(2)
    X, y, _ = ch.make_star_data(fan, ch.A_TRUE, 30, 0.1, rng=0)
    return [
        (lambda: ch.make_star_data(fan, ch.A_TRUE, 10, flip=0.7), "^flip must"),
        (lambda: ch.make_star_data(fan, ch.A_TRUE[:3], 10), "^a_true must have length 8"),
        (lambda: ch.make_star_data(S.kite_fan(3), np.ones(6), 10), "^fan must be a 2-D Fan"),
        (lambda: ch.sample_disk(0), "^m must"),
        (lambda: ch.logistic_regression(X, y, l2=-1.0), "^l2 must"),
        (lambda: ch.logistic_regression(np.ones(5), y), "^Phi must be a non-empty 2-D"),
        (lambda: ch.logistic_predict(np.ones(2), X), "^w must have length 3"),
        (lambda: ch.relu_net(X, y, hidden=(0,)), "^hidden must"),
        (lambda: ch.relu_net(X, y, restarts=0), "^restarts must"),
        (lambda: ch.relu_net(X, y, alpha=-1.0), "^alpha must"),
        (lambda: ch.relu_net(X, y, max_iter=0), "^max_iter must"),
        (lambda: ch.relu_net(X, y[:-1]), "^y must have length 30"),
        (lambda: ch.rbf_svm(X, y, C=-1.0), "^C must be positive"),
        (lambda: ch.rbf_svm(X, y, gamma=np.nan), "^gamma must be finite"),
        (lambda: ch.rbf_svm(np.full((4, 2), np.inf), [0, 1, 0, 1]), "^X must be finite"),
        (lambda: ch.fit_method("boosting", 0, {}), "^method must be one of"),
        (lambda: ch.fit_method(ch.STAR, 0, {"C": 1.0}), "^setting for"),
        (lambda: ch.fit_method(ch.STAR, 0, {"lam": np.nan}), "^lam must be finite"),
        (lambda: ch.comparison_data(-1), "^seed must"),
        (lambda: ch.resolution_fit(2), "^k must"),
        (lambda: ch.lambda_path(S.type_b_fan(2).coordinates(X), y, [0.5, 0.0]), "^lams must be positive"),
        (lambda: ch.watch_runs(-1.0), "^lam must be positive"),
        (lambda: ch.chamber_data(81, amax=np.inf), "^amax must be finite"),
        (lambda: ch.chamber_data(1), "^grid must"),
        (lambda: ch.boundaries_figure(-1, {}), "^seed must"),
        (lambda: ch.star_polygon(S.kite_fan(3), np.ones(6)), "^fan must be a 2-D fan"),
        (lambda: ch.star_traces(fan, np.ones(8), X, y[:-1]), "^y must have length 30"),
        (lambda: ch.star_editor_slider(ray=9), "^ray must be 1..8"),
        (lambda: ch.chamber_figure(lam=0.0), "^lam must be positive"),
        (lambda: ch.resolution_figure(8, lam_scale=0.0), "^lam_scale must be positive"),
        (lambda: ch.resolution_curve(seeds=()), "^seeds and ks must not be empty"),
        (lambda: ch.comparison_rows({}), "^details must be"),
        (lambda: ch.comparison_figure({"seeds": (0,)}), "^details must be"),
        (lambda: ch.runaway_vertices(0, {"lam": 1.0}, radius=-1.0), "^radius must be positive"),
    ]


@pytest.mark.parametrize("case", range(len(_bad_cases())))
def test_bad_inputs_raise_value_errors_naming_the_argument(case):
    call, pattern = _bad_cases()[case]
    with pytest.raises(ValueError, match=pattern):
        call()
