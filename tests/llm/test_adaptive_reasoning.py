"""Chapter 37: the toy reasoning world, the merge, the gain rule, the bi-level pairs and DPO."""
from __future__ import annotations

import numpy as np
import pytest

from optbook.core import fd_gradient
from optbook.llm import adaptive_reasoning as A
from optbook.llm.adaptive_reasoning import LONG, SHORT


def responses(style, correct, length, verb=None):
    style, correct, length = (np.atleast_2d(np.asarray(x)) for x in (style, correct, length))
    verb = np.zeros_like(style) if verb is None else np.atleast_2d(np.asarray(verb))
    return A.Responses(style.astype(int), verb.astype(int), correct.astype(bool), length.astype(float))


def sampled(seed=0, share=0.52, n=120, k=12):
    w = A.ReasoningWorld(easy_share=share)
    g = np.random.default_rng(seed)
    d = w.sample_difficulties(n, g)
    L, S = A.StylePolicy.constant(w.n_bins, 1.0), A.StylePolicy.constant(w.n_bins, 0.0)
    return w, d, A.sample_responses(L, w, d, k, g), A.sample_responses(S, w, d, k, g), L, S


# ---------------------------------------------------------------- gain rule


def test_gain_equal_accuracy_prefers_short_because_of_the_margin():
    assert A.gain_score(0.8, 0.8, 3000, 400, 12) < 0
    # a gain of exactly one half sample is still not enough
    assert A.gain_score(0.8 + 1 / 24, 0.8, 3000, 400, 12) == pytest.approx(0.0, abs=1e-15)


def test_gain_branches_by_hand():
    # g_a = 0.5 - 0.2 - 1/24, g_l = (3000 - 500) / 500 = 5
    ga = 0.3 - 1 / 24
    assert A.gain_score(0.5, 0.2, 3000, 500, 12) == pytest.approx(ga / 5)
    # negative branch: g_a = -0.1 - 1/24, times g_l / 10
    assert A.gain_score(0.4, 0.5, 3000, 500, 12) == pytest.approx((-0.1 - 1 / 24) * 5 / 10)
    # more samples, smaller margin: the same data can flip to long
    assert A.gain_score(0.83, 0.8, 3000, 500, 12) < 0 < A.gain_score(0.83, 0.8, 3000, 500, 24)


def test_crossover_solves_the_margin_equation():
    w = A.ReasoningWorld()
    for k in (4, 12, 48):
        dc = A.crossover_difficulty(k)
        acc = w.accuracy(np.array([dc]))[0]
        assert acc[LONG] - acc[SHORT] == pytest.approx(1 / (2 * k), abs=1e-9)
    assert A.crossover_difficulty(4) > A.crossover_difficulty(12) > A.crossover_difficulty(48)
    assert w.easy_edge == pytest.approx(A.crossover_difficulty(12))


# ---------------------------------------------------------------- pairs


def test_pairs_follow_the_rules():
    w, d, rl, rs, _, _ = sampled()
    pairs = A.build_pairs(rl, rs, w.bins(d), rng=0)
    acc_l, acc_s = rl.correct.mean(1), rs.correct.mean(1)
    gain = A.gain_score(acc_l, acc_s, rl.length.mean(1), rs.length.mean(1), 12)
    for p in range(d.size):
        sel = pairs.problem == p
        if acc_l[p] == 0 and acc_s[p] == 0:
            assert pairs.preferred[p] == -1 and not sel.any()
            continue
        pref = LONG if gain[p] > 0 else SHORT
        assert pairs.preferred[p] == pref
        group, inst = sel & (pairs.level == 0), sel & (pairs.level == 1)
        assert group.sum() <= 4 and inst.sum() <= 2
        # the chosen response always comes from the preferred style; group rejections from the other
        assert np.all(pairs.w_style[sel] == pref)
        assert np.all(pairs.l_style[group] == 1 - pref) and np.all(pairs.l_style[inst] == pref)
        own, other = (rl, rs) if pref == LONG else (rs, rl)
        if own.correct[p].any():  # correct preferred if available
            assert np.all(pairs.w_correct[sel])
        if (~other.correct[p]).any():
            assert not np.any(pairs.l_correct[group])
        if own.correct[p].any() and (~own.correct[p]).any():
            assert pairs.w_len[inst][0] == own.length[p][own.correct[p]].min()
            assert not np.any(pairs.l_correct[inst])
        # instance level: never a response against itself
        assert np.all(pairs.w_len[inst] != pairs.l_len[inst])
        if own.correct[p].all() or not own.correct[p].any():  # then the shortest against the longest
            assert np.all(pairs.w_len[inst] < pairs.l_len[inst])


def test_instance_pairs_all_correct_and_all_wrong():
    bins = np.array([0])
    other = responses([[0, 0, 0]], [[1, 1, 1]], [[100, 120, 110]])
    all_ok = responses([[1, 1, 1]], [[1, 1, 1]], [[300, 500, 400]])
    p = A.build_pairs(all_ok, other, bins, levels=("instance",), force="long", rng=0)
    assert list(p.w_len) == [300, 300] and list(p.l_len) == [500, 400]
    all_bad = responses([[1, 1, 1]], [[0, 0, 0]], [[300, 500, 400]])
    p = A.build_pairs(all_bad, other, bins, levels=("instance",), force="long", rng=0)
    assert list(p.w_len) == [300, 300] and not p.w_correct.any()


def test_skips_problems_both_styles_fail_and_group_pool_fallback():
    bins = np.array([0, 0])
    long = responses([[1, 1], [1, 1]], [[0, 0], [1, 1]], [[300, 310], [300, 310]])
    short = responses([[0, 0], [0, 0]], [[0, 0], [1, 1]], [[40, 41], [40, 41]])
    p = A.build_pairs(long, short, bins, rng=0)
    assert not np.any(p.problem == 0) and p.preferred[0] == -1
    # problem 1: equal accuracy -> short preferred; no wrong long response -> the whole long group is rejected
    assert p.preferred[1] == SHORT
    g = p.level == 0
    assert g.sum() == 4 and np.all(p.l_style[g] == LONG) and np.all(p.l_correct[g])


# ---------------------------------------------------------------- policy, merge, metrics


def test_policy_normalises_and_merge_mixes_styles():
    pol = A.StylePolicy(np.linspace(-3, 3, 10), np.array([0.4, -1.0]))
    probs = pol.probs(np.arange(10))
    assert np.allclose(probs.sum(axis=(1, 2)), 1.0)
    assert np.allclose(np.exp(pol.log_prob(np.array([2]), np.array([1]), np.array([0]))), probs[2, 1, 0])
    L, S = A.StylePolicy.constant(10, 1.0, 0.3), A.StylePolicy.constant(10, 0.0, 0.6)
    H = A.merge(L, S, 0.8)
    assert np.allclose(H.p_long(), 0.8) and np.allclose(H.p_verbose(), [0.6, 0.3])
    assert np.allclose(A.merge(L, S, 1.0).p_long(), 1.0)


def test_expected_metrics_match_monte_carlo():
    w = A.ReasoningWorld(easy_share=0.4)
    d = w.sample_difficulties(3000, 1)
    pol = A.StylePolicy(np.linspace(-2, 2, 10), np.array([0.5, -0.5]))
    acc, length = A.expected_metrics(pol, w, d)
    r = A.sample_responses(pol, w, d, 40, 2)
    for x, mu in ((r.correct.astype(float), acc), (r.length, length)):
        se = x.mean(axis=1).std() / np.sqrt(d.size)
        assert abs(x.mean() - mu) < 4 * se


def test_world_mixture_and_profiles():
    w = A.ReasoningWorld(easy_share=0.7)
    d = w.sample_difficulties(20000, 0)
    assert np.mean(d < w.easy_edge) == pytest.approx(0.7, abs=0.02)
    acc = w.accuracy(np.array([0.0, 1.0]))
    assert acc[0, SHORT] > acc[0, LONG] and acc[1, LONG] > acc[1, SHORT]
    assert np.all(w.mean_length(d)[:, LONG] > w.mean_length(d)[:, SHORT])


# ---------------------------------------------------------------- DPO


def test_dpo_starts_at_log2_with_zero_gradient_on_symmetric_pairs():
    w, d, rl, rs, L, S = sampled()
    H = A.merge(L, S, 0.8)
    pairs = A.build_pairs(rl, rs, w.bins(d), rng=0)
    loss, gz, gv = A.dpo_loss(H, H, pairs, 0.1)
    assert loss == pytest.approx(np.log(2), abs=1e-12)
    both = A.Pairs(*(np.concatenate([getattr(pairs, a), getattr(pairs, b)]) for a, b in (
        ("bins", "bins"), ("w_style", "l_style"), ("w_verb", "l_verb"), ("l_style", "w_style"), ("l_verb", "w_verb"),
        ("w_len", "l_len"), ("l_len", "w_len"), ("w_correct", "l_correct"), ("l_correct", "w_correct"),
        ("level", "level"), ("problem", "problem"))))
    _, gz, gv = A.dpo_loss(H, H, both, 0.1)
    assert np.abs(gz).max() < 1e-15 and np.abs(gv).max() < 1e-15


def test_dpo_gradient_matches_finite_differences():
    w, d, rl, rs, L, S = sampled(seed=3)
    ref = A.merge(L, S, 0.8)
    pairs = A.build_pairs(rl, rs, w.bins(d), rng=1)
    rng = np.random.default_rng(0)
    x0 = np.concatenate([ref.z + rng.normal(0, 1, 10), rng.normal(0, 1, 2)])

    def f(x):
        return A.dpo_loss(A.StylePolicy(x[:10], x[10:]), ref, pairs, 0.2)[0]

    _, gz, gv = A.dpo_loss(A.StylePolicy(x0[:10], x0[10:]), ref, pairs, 0.2)
    assert np.allclose(np.concatenate([gz, gv]), fd_gradient(f, x0), atol=1e-8)
    # the compressed pair set gives the same loss
    assert f(x0) == pytest.approx(A.dpo_loss(A.StylePolicy(x0[:10], x0[10:]), ref, pairs.compress(), 0.2)[0])


def test_training_lowers_the_loss_and_learns_the_pairs():
    w, d, rl, rs, L, S = sampled(n=300)
    H = A.merge(L, S, 0.8)
    pairs = A.build_pairs(rl, rs, w.bins(d), rng=0)
    pol, tr = A.train_dpo(H, pairs, beta=0.1, lr=30, steps=200)
    assert tr.objective[-1] < 0.75 * np.log(2) and np.all(np.diff(tr.objective) <= 1e-12)
    assert pol.p_long()[0] < 0.1 and pol.p_long()[-1] > 0.9  # short on the easiest bin, long on the hardest
    assert pol.p_verbose()[LONG] < 0.1  # instance level: concise
    # group level alone does not touch the verbosity in expectation
    g, _ = A.train_dpo(H, A.build_pairs(rl, rs, w.bins(d), levels=("group",), rng=0), beta=0.1, lr=30, steps=200)
    assert g.p_verbose()[LONG] > 0.2
    # deterministic
    again, _ = A.train_dpo(H, pairs, beta=0.1, lr=30, steps=200)
    assert np.array_equal(again.z, pol.z) and np.array_equal(again.v, pol.v)
    assert len(tr.meta["snapshots"]) == 21


def test_same_seed_same_samples():
    a, b = sampled(seed=5)[2], sampled(seed=5)[2]
    assert np.array_equal(a.length, b.length) and np.array_equal(a.correct, b.correct)


@pytest.mark.parametrize("call, match", [
    (lambda: A.ReasoningWorld(easy_share=1.5), "easy_share"),
    (lambda: A.ReasoningWorld(n_bins=0), "n_bins"),
    (lambda: A.ReasoningWorld(noise=-1.0), "noise"),
    (lambda: A.ReasoningWorld().accuracy(np.array([0.5, 1.2])), "d must"),
    (lambda: A.ReasoningWorld().accuracy(np.array([])), "d must"),
    (lambda: A.ReasoningWorld().sample_difficulties(0), "n must"),
    (lambda: A.StylePolicy(np.array([np.nan])), "z must"),
    (lambda: A.StylePolicy(np.zeros(3), np.zeros(3)), "v must"),
    (lambda: A.StylePolicy.constant(3, 1.2), "p_long"),
    (lambda: A.StylePolicy(np.zeros(3)).probs(np.array([0, 3])), "bins"),
    (lambda: A.merge(A.StylePolicy(np.zeros(3)), A.StylePolicy(np.zeros(4))), "same bins"),
    (lambda: A.merge(A.StylePolicy(np.zeros(3)), A.StylePolicy(np.zeros(3)), 1.5), "w_long"),
    (lambda: A.gain_score(0.5, 0.5, 100, 0, 12), "positive"),
    (lambda: A.gain_score(np.nan, 0.5, 100, 50, 12), "acc_long"),
    (lambda: A.gain_score(0.5, 0.5, 100, 50, 0), "k must"),
    (lambda: A.crossover_difficulty(0), "k must"),
])
def test_bad_input(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_bad_input_training():
    w, d, rl, rs, L, S = sampled(n=20)
    pairs = A.build_pairs(rl, rs, w.bins(d), rng=0)
    H = A.merge(L, S)
    with pytest.raises(ValueError, match="beta"):
        A.dpo_loss(H, H, pairs, 0.0)
    with pytest.raises(ValueError, match="lr"):
        A.train_dpo(H, pairs, lr=-1.0)
    with pytest.raises(ValueError, match="steps"):
        A.train_dpo(H, pairs, steps=-1)
    with pytest.raises(ValueError, match="empty"):
        A.train_dpo(H, pairs.select(np.zeros(len(pairs), bool)))
    with pytest.raises(ValueError, match="levels"):
        A.build_pairs(rl, rs, w.bins(d), levels=("pairs",))
    with pytest.raises(ValueError, match="force"):
        A.build_pairs(rl, rs, w.bins(d), force="medium")
    with pytest.raises(ValueError, match="same problems"):
        A.build_pairs(rl, rs, w.bins(d)[:-1])
