"""Tests of chapter 20 (MAT-Agent): metrics, losses, schedules, training loop (the bandit core is
tested in tests/core/test_bandits.py)."""
import numpy as np
import pytest
import torch

from optbook.training import bandit_schedulers as bs

# ----------------------------------------------------------------------------------- metrics


def _brute_ap(y, s):
    """AP by its definition: mean over positives of the precision at that positive's threshold."""
    pos = np.flatnonzero(y == 1)
    precs = [np.sum(y[s >= s[i]]) / np.sum(s >= s[i]) for i in pos]
    return float(np.mean(precs))


def test_average_precision_hand_examples():
    assert bs.average_precision([1, 0, 1, 0], [0.9, 0.8, 0.7, 0.1])[0] == pytest.approx((1 + 2 / 3) / 2)
    assert bs.average_precision([0, 1], [0.9, 0.1])[0] == pytest.approx(0.5)
    assert bs.average_precision([1, 1, 0], [0.5, 0.5, 0.5])[0] == pytest.approx(2 / 3)  # one tie group


def test_average_precision_matches_brute_force_and_sklearn():
    rng = np.random.default_rng(0)
    Y = (rng.random((60, 4)) < 0.3).astype(float)
    S = np.round(rng.random((60, 4)) + 0.5 * Y, 1)  # rounding makes ties
    ap = bs.average_precision(Y, S)
    for j in range(4):
        assert ap[j] == pytest.approx(_brute_ap(Y[:, j], S[:, j]))
    sk = pytest.importorskip("sklearn.metrics")
    np.testing.assert_allclose(ap, sk.average_precision_score(Y, S, average=None))


def test_map_and_f1():
    Y = np.array([[1, 0], [0, 1], [1, 0], [0, 0.0]])
    P = np.array([[0.9, 0.2], [0.4, 0.6], [0.3, 0.7], [0.1, 0.1]])
    assert bs.mean_average_precision(Y, P) == pytest.approx(np.mean(bs.average_precision(Y, P)))
    # label 0: tp 1, fn 1, fp 0 -> 2/3; label 1: tp 1, fp 1 -> 2/3
    np.testing.assert_allclose(bs.f1_per_label(Y, P), [2 / 3, 2 / 3])
    np.testing.assert_allclose(bs.f1_per_label(np.zeros((3, 1)), np.zeros((3, 1))), [0.0])
    # one threshold per label
    np.testing.assert_allclose(bs.f1_per_label(Y, P, [0.25, 0.5]), [0.8, 2 / 3])  # label 0: tp 2, fp 1


def test_f1_error_names_the_probs_argument():
    with pytest.raises(ValueError, match="probs"):
        bs.f1_per_label([1, 0], [np.nan, 0.3])
    with pytest.raises(ValueError, match="probs"):
        bs.f1_per_label([1, 0, 1], [0.2, 0.3])
    with pytest.raises(ValueError, match="scores"):
        bs.average_precision([1, 0], [np.inf, 0.3])


def test_f1_thresholds_maximise_f1_by_brute_force():
    rng = np.random.default_rng(1)
    Y = (rng.random((80, 3)) < 0.2).astype(float)
    P = np.clip(rng.random((80, 3)) * 0.7 + 0.3 * Y, 0, 1)
    thr = bs.f1_thresholds(Y, P)
    got = bs.f1_per_label(Y, P, thr)
    for j in range(3):  # every cut between distinct scores
        cuts = np.unique(P[:, j])
        best = max(bs.f1_per_label(Y[:, [j]], P[:, [j]], float(np.clip(t, 1e-9, 1 - 1e-9)))[0] for t in cuts)
        assert got[j] == pytest.approx(best)
    np.testing.assert_allclose(bs.f1_thresholds(np.zeros((4, 1)), np.full((4, 1), 0.3)), [0.5])


def test_rare_labels():
    np.testing.assert_array_equal(bs.rare_labels([50, 3, 20, 1, 9, 40, 7, 30, 2, 11]), [1, 3, 8])
    assert bs.rare_labels([5, 1, 3, 9], 0.3).tolist() == [1, 2]


@pytest.mark.parametrize("call", [
    lambda: bs.average_precision([1, 0], [0.5]), lambda: bs.average_precision([2, 0], [0.5, 0.1]),
    lambda: bs.average_precision([1, 0], [np.nan, 0.1]), lambda: bs.mean_average_precision([0, 0], [0.1, 0.2]),
    lambda: bs.f1_per_label([1, 0], [0.2, 0.3], threshold=1.5), lambda: bs.rare_labels([1, 2], 0.0),
])
def test_metric_bad_input(call):
    with pytest.raises(ValueError):
        call()


# ------------------------------------------------------------------ losses, augmentation, schedules


def test_focal_with_gamma_zero_is_bce_and_losses_are_positive():
    g = torch.Generator().manual_seed(0)
    z, y = torch.randn(16, 5, generator=g), (torch.rand(16, 5, generator=g) < 0.3).float()
    bce = bs.multilabel_loss("BCE", z, y)
    assert torch.allclose(bs.multilabel_loss("focal", z, y, focal_gamma=0.0), bce)
    assert torch.allclose(bce, torch.nn.functional.binary_cross_entropy_with_logits(z, y))
    assert bs.multilabel_loss("focal", z, y) < bce  # focusing down-weights easy examples
    w = torch.ones(5)
    assert torch.allclose(bs.multilabel_loss("CB-BCE", z, y, class_weights=w), bce)
    asl = bs.multilabel_loss("ASL", z, y, asl_gamma_neg=0.0, asl_clip=0.0)
    assert torch.allclose(asl, bce, atol=1e-6)  # ASL without focusing or shift is BCE
    for kind in bs.LOSSES:
        assert bs.multilabel_loss(kind, z, y, class_weights=w) > 0


def test_class_balanced_weights():
    w = bs.class_balanced_weights([1000, 100, 10, 1], beta=0.99)
    assert w.sum() == pytest.approx(4.0)
    assert np.all(np.diff(w) > 0)  # rarer labels weigh more
    np.testing.assert_allclose(bs.class_balanced_weights([5, 5, 5]), [1, 1, 1])


def test_augmentations():
    x, y = torch.randn(64, 6), (torch.rand(64, 3) < 0.5).float()
    xm, ym = bs.augment("mixup", x, y, 0)
    assert ym.min() >= 0 and ym.max() <= 1 and xm.shape == x.shape
    xn, yn = bs.augment("none", x, y, 0)
    assert xn is x and yn is y
    xd, _ = bs.augment("dropout", x, y, 0, drop_p=0.5)
    zero = xd == 0
    assert 0.3 < zero.float().mean() < 0.7 and torch.allclose(xd[~zero], 2 * x[~zero])
    a, _ = bs.augment("noise", x, y, 3)
    b, _ = bs.augment("noise", x, y, 3)
    assert torch.equal(a, b) and not torch.equal(a, x)


def test_schedules():
    for kind in ("constant", "cosine", "step", "one-cycle"):
        assert bs.schedule_multiplier(kind, 0.0) > 0
    assert bs.schedule_multiplier("cosine", 0.0) == 1.0 and bs.schedule_multiplier("cosine", 1.0) == pytest.approx(0.0)
    assert bs.schedule_multiplier("step", 0.49) == 1.0 and bs.schedule_multiplier("step", 0.8) == pytest.approx(0.01)
    f = np.linspace(0, 1, 1001)
    for peak in (0.3, 0.5):
        m = np.array([bs.schedule_multiplier("one-cycle", v, peak=peak) for v in f])
        assert f[np.argmax(m)] == pytest.approx(peak)
        assert m[0] == pytest.approx(1 / 25) and m[-1] == pytest.approx(1e-4)


@pytest.mark.parametrize("call", [
    lambda: bs.schedule_multiplier("linear", 0.5), lambda: bs.schedule_multiplier("cosine", 1.2),
    lambda: bs.class_balanced_weights([-1, 2]), lambda: bs.class_balanced_weights([1, 2], beta=1.0),
    lambda: bs.multilabel_loss("hinge", torch.zeros(2, 2), torch.zeros(2, 2)),
    lambda: bs.multilabel_loss("BCE", torch.zeros(2, 2), torch.zeros(2, 3)),
    lambda: bs.multilabel_loss("CB-BCE", torch.zeros(2, 2), torch.zeros(2, 2)),
    lambda: bs.augment("cutout", torch.zeros(2, 2), torch.zeros(2, 2)),
    lambda: bs.augment("dropout", torch.zeros(2, 2), torch.zeros(2, 2), drop_p=1.0),
])
def test_training_piece_bad_input(call):
    with pytest.raises(ValueError):
        call()


# -------------------------------------------------------------------------- reward and smoothing


def test_composite_reward():
    assert bs.composite_reward(0.1, 0.2, 0.5, (1.0, 0.5, 0.2)) == pytest.approx(0.1 + 0.1 - 0.1)
    with pytest.raises(ValueError):
        bs.composite_reward(0.1, 0.1, -0.1)
    with pytest.raises(ValueError):
        bs.composite_reward(0.1, 0.1, 0.1, (1.0, -1.0, 0.0))


def test_centred_credit_removes_the_trend():
    c = bs.DualEMA(0.5, 0.1)
    assert c.update(5.0) == 0.0 and c.update(1.0) == 0.0  # the step out of the init, then no trend yet
    assert c.update(3.0) == pytest.approx(1.0)  # e = 3 - 1 = 2, rms 2
    # trend 2 now; e = 0 - 2 = -2; slow EMA of squares: 4 + 0.1 (4 - 4) = 4
    assert c.update(0.0) == pytest.approx(-1.0)
    # a reward sequence that only trends (geometric decay) earns credits that shrink to 0, so
    # an arm is not credited with when it was played
    d = bs.DualEMA()
    credits = [d.update(0.5 ** t) for t in range(40)]
    assert abs(credits[-1]) < 1e-3 * max(abs(x) for x in credits)
    # invariant to the reward's scale and offset
    r = np.random.default_rng(0).standard_normal(20)
    a, b = bs.DualEMA(), bs.DualEMA()
    np.testing.assert_allclose([a.update(x) for x in r], [b.update(3 * x + 7) for x in r], atol=1e-12)


def test_smoothed_and_raw_credit():
    s = bs.DualEMA(0.5, 0.1, credit="smoothed")
    assert s.update(1.0) == 1.0
    out = s.update(0.0)  # fast 0.5, slow 0.9, sd of (1, 0) = 1/sqrt 2
    assert out == pytest.approx(0.5 * (0.5 + 0.9) / np.std([1.0, 0.0], ddof=1))
    raw = bs.DualEMA(credit="raw")
    raw.update(1.0)
    assert raw.update(3.0) == pytest.approx(3.0 / np.std([1.0, 3.0], ddof=1))
    with pytest.raises(ValueError, match="credit"):
        bs.DualEMA(credit="mean")
    with pytest.raises(ValueError, match="a_fast"):
        bs.DualEMA(a_fast=0.0)


def test_horizon_parameters():
    gamma, c = bs.horizon_parameters(30)
    assert gamma == pytest.approx(1 - 0.25 * np.sqrt(2 / 30))
    # at total weight 1/(1-gamma), the bonus c sqrt(2 ln sum N / N_a) is one standard error 1/sqrt(N_a)
    for n_a in (1.0, 4.0):
        assert c * np.sqrt(2 * np.log(1 / (1 - gamma)) / n_a) == pytest.approx(1 / np.sqrt(n_a))
    g_long, _ = bs.horizon_parameters(3000)
    assert g_long > gamma  # a longer run remembers longer
    for bad in (dict(horizon=1), dict(horizon=10, n_changes=10), dict(horizon=10, n_changes=0)):
        with pytest.raises(ValueError):
            bs.horizon_parameters(**bad)


def test_count_switches():
    a = dict(bs.DEFAULT_CONFIG)
    b = {**a, "opt": "Adam"}
    c = {**b, "loss": "ASL", "aug": "mixup"}
    assert bs.count_switches([a, a, b, c, c]) == 3 and bs.count_switches([a]) == 0


# ----------------------------------------------------------------------------- data and training


def test_power_law_data():
    d = bs.make_multilabel(n_train=2000, n_val=500, n_test=500, n_features=10, n_labels=6, rng=0)
    np.testing.assert_allclose(d.Y_train.mean(0), d.prevalence, atol=0.02)
    assert np.all(np.diff(d.prevalence) < 0) and d.prevalence[-1] == pytest.approx(0.015)
    np.testing.assert_array_equal(d.rare, [4, 5])
    with pytest.raises(ValueError):
        bs.make_multilabel(n_features=3, n_active=5)
    with pytest.raises(ValueError):
        bs.make_multilabel(min_prevalence=0.5, max_prevalence=0.4)


@pytest.fixture(scope="module")
def small_data():
    return bs.make_multilabel(n_train=600, n_val=300, n_test=300, n_features=10, n_labels=5, noise=0.3, rng=1)


def test_training_is_reproducible_and_logs_choices(small_data):
    a = bs.train_proxy(small_data, "mat", epochs=6, batch_size=200, seed=3)
    b = bs.train_proxy(small_data, "mat", epochs=6, batch_size=200, seed=3)
    assert a["configs"] == b["configs"] and a["test_map"] == b["test_map"]
    tr = a["trace"]
    assert len(tr) == 6 and np.all(np.isfinite(tr["val_map"]))
    # the first epochs try three different options of every agent (untried arms first, in an
    # order drawn from the seed), and the switch count is that of the logged configurations
    for k in bs.AGENT_KEYS:
        assert len({c[k] for c in a["configs"][:3]}) == 3
    assert a["switches"] == bs.count_switches(a["configs"])
    c = bs.train_proxy(small_data, "mat", epochs=6, batch_size=200, seed=4)
    assert [x["loss"] for x in c["configs"][:4]] != [x["loss"] for x in a["configs"][:4]]
    for k in bs.AGENT_KEYS:
        assert [bs.MENUS[k][int(i)] for i in tr[k]] == [c[k] for c in a["configs"]]


def test_static_and_baselines(small_data):
    st = bs.train_proxy(small_data, "static", epochs=8, batch_size=200, seed=0)
    assert all(c == bs.DEFAULT_CONFIG for c in st["configs"])
    assert st["test_map"] > small_data.prevalence.mean() + 0.1  # far better than chance
    # cosine schedule: the applied learning rate decays
    assert st["trace"].step_size[-1] < 0.1 * st["trace"].step_size[0]
    assert st["switches"] == 0
    for pol in ("random", "ucb1", "eps-greedy", "joint"):
        r = bs.train_proxy(small_data, pol, epochs=3, batch_size=300, seed=0)
        assert len(r["configs"]) == 3 and 0 <= r["test_rare_f1"] <= 1 and 0 <= r["test_rare_ap"] <= 1


def test_oracle_arm_credit_steers_the_agents(small_data):
    """With a fixed credit that makes one option of each menu far better, the agents play that
    recipe in most epochs after their tour; with the measured credit they do not."""
    favour = {"aug": "none", "opt": "Adam", "lrs": "cosine", "loss": "focal"}
    table = {k: [3.0 if a == favour[k] else 0.0 for a in bs.MENUS[k]] for k in bs.AGENT_KEYS}
    r = bs.train_proxy(small_data, "mat", epochs=16, batch_size=300, seed=2, arm_credit=table)
    late = r["configs"][6:]
    assert np.mean([c == favour for c in late]) >= 0.6
    free = bs.train_proxy(small_data, "mat", epochs=16, batch_size=300, seed=2)
    assert np.mean([c == favour for c in free["configs"][6:]]) < 0.3
    assert r["configs"][:1] == free["configs"][:1]  # same seed: the same first choice
    bad = dict(table, opt=[0.0, 1.0])
    for kwargs in (dict(arm_credit=bad), dict(arm_credit={"opt": [0, 0, 0]}),
                   dict(arm_credit=dict(table, loss=[0, 0, 0, np.nan])), dict(policy="random", arm_credit=table)):
        with pytest.raises(ValueError, match="arm_credit"):
            bs.train_proxy(small_data, **{"epochs": 1, **kwargs})


@pytest.mark.parametrize("kwargs", [dict(policy="dqn"), dict(epochs=0), dict(weights=(1, 2)),
                                    dict(policy="static", config={"aug": "none"}), dict(gamma=2.0),
                                    dict(lr_smoothing=0.0), dict(credit="smooth")])
def test_training_bad_input(small_data, kwargs):
    with pytest.raises(ValueError):
        bs.train_proxy(small_data, **{"epochs": 1, **kwargs})
    with pytest.raises(ValueError):
        bs.train_proxy("data")
