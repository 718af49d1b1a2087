"""PRO (chapter 36): the decomposition, the losses' gradients, the hyper-response, bad input."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from optbook.core import fd_gradient
from optbook.llm import proximal_preference as pp


def random_prefs(g, K):
    P = g.random((K, K))
    P = np.triu(P, 1) + np.tril(1 - np.triu(P, 1).T, -1)
    np.fill_diagonal(P, 0.5)
    return P


def test_decomposition_equals_dpo_population_loss():
    g = np.random.default_rng(0)
    for K in (2, 3, 6):
        P, mu = random_prefs(g, K), g.dirichlet(np.ones(K))
        for _ in range(5):
            r = 4 * g.standard_normal(K)
            assert pp.decomposed_loss(r, mu, P) == pytest.approx(pp.dpo_population_loss(r, mu, P), abs=1e-12)
    # and a wrong sign of the optimiser would not match
    r = g.standard_normal(3)
    P, mu = random_prefs(g, 3), np.ones(3) / 3
    s = P @ mu - 0.5
    wrong = 2 * ((mu * s) @ r + 0.5 * mu @ pp.kl_half(r[:, None] - r[None]) @ mu) + pp.LOG2
    assert abs(wrong - pp.dpo_population_loss(r, mu, P)) > 1e-3


def test_scores_average_to_zero_and_pairwise_quarter():
    g = np.random.default_rng(1)
    P = random_prefs(g, 5)[None]
    assert pp.preference_scores(P) @ np.ones(5) / 5 == pytest.approx(0.0, abs=1e-12)
    assert np.allclose(pp.preference_scores(np.array([[[0.5, 1.0], [0.0, 0.5]]])), [[0.25, -0.25]])
    assert np.allclose(pp.feedback_scores("pairwise", n_prompts=3), [[0.25, -0.25]] * 3)
    assert np.allclose(pp.feedback_scores("binary", [[1.0], [0.0]]), [[0.5], [-0.5]])
    s = pp.feedback_scores("scalar", [[1.0, 2.0, 6.0], [3.0, 3.0, 3.0]])
    assert np.allclose(s.sum(1), 0) and np.abs(s[0]).max() == pytest.approx(0.5) and np.all(s[1] == 0)


def test_kl_half_closed_form_and_gradient():
    d = np.linspace(-30, 30, 13)
    assert np.allclose(pp.kl_half(d), pp.kl_half(-d)) and pp.kl_half(0.0) == pytest.approx(0.0, abs=1e-15)
    p = pp.sigmoid(d)
    direct = 0.5 * np.log(0.5 / p) + 0.5 * np.log(0.5 / (1 - p))
    ok = np.isfinite(direct)
    assert np.allclose(pp.kl_half(d)[ok], direct[ok])
    assert np.allclose(pp.kl_half_grad(d), [fd_gradient(lambda x: float(pp.kl_half(x[0])), np.array([x]))[0]
                                            for x in d], atol=1e-6)


def test_pro_alpha0_is_half_dpo_minus_log2():
    g = np.random.default_rng(2)
    a, b = -np.abs(g.standard_normal((7, 2))) * 3, -np.abs(g.standard_normal((7, 2))) * 3
    d = pp.dpo_loss(a, b, beta=0.5)
    e = pp.pro_loss(a, b, pp.feedback_scores("pairwise", n_prompts=7), beta=0.5, alpha=0.0)
    assert e.value == pytest.approx(0.5 * (d.value - pp.LOG2), abs=1e-13)
    assert np.allclose(e.grad, 0.5 * d.grad, atol=1e-14)
    assert pp.pro_loss(a, b, pp.feedback_scores("pairwise", n_prompts=7), beta=0.5, alpha=1.0).value != e.value


@pytest.mark.parametrize("method,hp", [("PRO", {"alpha": 1.0, "beta": 0.7}), ("DPO", {"beta": 2.0}),
                                       ("IPO", {"tau": 0.3}), ("DPO+NLL", {"lam": 0.5}), ("SFT", {})])
def test_toy_gradients_match_finite_differences(method, hp):
    p, _ = pp.random_problem(5, K=6, d=4, rng=3)
    ref = p.log_policy(np.zeros(4))
    th = np.random.default_rng(4).standard_normal(4)
    f = lambda t: pp.toy_loss(p, p.log_policy(t), ref, method, **hp).value
    g = p.chain(p.log_policy(th), pp.toy_loss(p, p.log_policy(th), ref, method, **hp).grad)
    assert np.allclose(g, fd_gradient(f, th), atol=1e-6)


def test_kto_gradient_binary():
    p, _ = pp.random_problem(6, K=5, d=3, feedback="binary", rng=5)
    ref = p.log_policy(np.zeros(3))
    th = np.random.default_rng(6).standard_normal(3)
    z0 = 0.3
    f = lambda t: pp.kto_loss(p.observed_logp(p.log_policy(t)), p.observed_logp(ref), p.labels, z0=z0).value
    out = pp.kto_loss(p.observed_logp(p.log_policy(th)), p.observed_logp(ref), p.labels, z0=z0)
    assert np.allclose(p.chain(p.log_policy(th), out.grad), fd_gradient(f, th), atol=1e-6)


def test_numpy_and_torch_pro_agree():
    g = np.random.default_rng(7)
    a = np.log(g.dirichlet(np.ones(5), size=4)[:, :3])
    b = np.log(g.dirichlet(np.ones(5), size=4)[:, :3])
    s = pp.feedback_scores("scalar", g.standard_normal((4, 3)))
    out = pp.pro_loss(a, b, s, beta=0.8, alpha=1.5)
    ta = torch.tensor(a, requires_grad=True)
    v = pp.pro_loss_torch(ta, torch.tensor(b), torch.tensor(s), beta=0.8, alpha=1.5)
    v.backward()
    assert v.item() == pytest.approx(out.value, abs=1e-12)
    assert np.allclose(ta.grad.numpy(), out.grad, atol=1e-12)
    ta2 = torch.tensor(a[:, :2])
    assert pp.dpo_loss_torch(ta2, torch.tensor(b[:, :2])).item() == pytest.approx(pp.dpo_loss(a[:, :2], b[:, :2]).value)


def test_full_regulariser_minimised_at_reference():
    # s = 0 and every response observed (no hyper-response): the loss is >= 0 with 0 at pi = pi_ref
    g = np.random.default_rng(8)
    ref = np.log(g.dirichlet(np.ones(4)))[None]
    zero = np.zeros((1, 4))
    assert pp.pro_loss(ref, ref, zero, hyper=False).value == pytest.approx(0.0, abs=1e-15)
    for _ in range(5):
        other = np.log(g.dirichlet(np.ones(4)))[None]
        assert pp.pro_loss(other, ref, zero, hyper=False).value > 1e-6


def test_hyper_term_skipped_when_data_cover_all_responses():
    phi = np.random.default_rng(9).standard_normal((2, 3, 2))
    p = pp.FeatureProblem(phi, np.array([[0, 1, 2], [2, 0, 1]]), "scalar", np.array([[1., 2., 3.], [0., 1., 0.]]))
    assert not p.has_hyper.any()
    lp = p.log_policy(np.array([0.3, -0.2]))
    out = pp.toy_loss(p, lp, p.log_policy(np.zeros(2)), "PRO", alpha=2.0)
    assert np.isfinite(out.value) and np.all(np.isfinite(out.grad))


def test_hyper_logmass_stable_at_both_ends():
    tiny = np.array([[-400.0, -500.0]])
    assert pp.hyper_logmass(tiny)[0] == pytest.approx(-np.exp(-400.0), abs=1e-300)
    near_one = np.log(np.array([[0.5 - 1e-13, 0.5]]))
    assert pp.hyper_logmass(near_one)[0] == pytest.approx(np.log(1e-13), rel=1e-2)
    assert pp.hyper_logmass(np.log([[0.5, 0.5]]))[0] == -np.inf
    assert torch.isfinite(pp.log1mexp_torch(torch.tensor([-1e-9, -50.0]))).all()


def test_larger_alpha_gives_smaller_chosen_reward():
    p = pp.card_problem()
    r = [abs(pp.train_toy(p, "PRO", steps=1000, lr=0.3, record_every=1000, alpha=a)["logpi"][-1][0, 0] - np.log(0.2))
         for a in (0.5, 1.0, 2.0, 4.0)]
    assert all(x > y for x, y in zip(r, r[1:]))


def test_card_toy_dpo_collapses_pro_keeps():
    p = pp.card_problem()
    dpo = np.exp(pp.train_toy(p, "DPO", steps=1000, lr=0.3, record_every=1000)["logpi"][-1][0])
    pro = np.exp(pp.train_toy(p, "PRO", steps=1000, lr=0.3, record_every=1000, alpha=1.0)["logpi"][-1][0])
    assert dpo[0] < 1e-3 and dpo[2] > 0.99 and dpo[0] > dpo[1]
    assert pro[0] > 0.2 and pro[2] < 0.6 and pro[0] > pro[1]


def test_deterministic_and_random_problem_shapes():
    a, w = pp.random_problem(10, rng=0)
    b, _ = pp.random_problem(10, rng=0)
    assert np.array_equal(a.phi, b.phi) and np.array_equal(a.observed, b.observed)
    assert np.linalg.norm(w) == pytest.approx(2.0)
    c, _ = pp.random_problem(10, rng=1, w=w)
    assert not np.array_equal(a.phi, c.phi)


def test_bad_input():
    with pytest.raises(ValueError, match="logp"):
        pp.dpo_loss(np.zeros((3, 3)), np.zeros((3, 3)))
    with pytest.raises(ValueError, match="logp"):
        pp.dpo_loss(np.full((2, 2), np.nan), np.zeros((2, 2)))
    with pytest.raises(ValueError, match="logp"):
        pp.dpo_loss(np.ones((2, 2)), np.zeros((2, 2)))
    with pytest.raises(ValueError, match="beta"):
        pp.dpo_loss(-np.ones((2, 2)), -np.ones((2, 2)), beta=0.0)
    with pytest.raises(ValueError, match="alpha"):
        pp.pro_loss(-np.ones((2, 2)), -np.ones((2, 2)), np.zeros((2, 2)), alpha=-1.0)
    with pytest.raises(ValueError, match="scores"):
        pp.pro_loss(-np.ones((2, 2)), -np.ones((2, 2)), np.zeros((2, 3)))
    with pytest.raises(ValueError, match="feedback"):
        pp.feedback_scores("ternary", [[1.0]])
    with pytest.raises(ValueError, match="labels"):
        pp.feedback_scores("binary", [[0.5]])
    with pytest.raises(ValueError, match="prefs"):
        pp.preference_scores(np.full((1, 2, 2), 0.9))
    with pytest.raises(ValueError, match="observed"):
        pp.FeatureProblem(np.zeros((1, 3, 2)), np.array([[0, 5]]))
    with pytest.raises(ValueError, match="observed"):
        pp.FeatureProblem(np.zeros((1, 3, 2)), np.array([[1, 1]]))
    with pytest.raises(ValueError, match="phi"):
        pp.FeatureProblem(np.zeros((3, 2)), np.array([[0, 1]]))
    with pytest.raises(ValueError, match="lr"):
        pp.train_toy(pp.card_problem(), "DPO", lr=0.0)
    with pytest.raises(ValueError, match="method"):
        pp.train_toy(pp.card_problem(), "PPO")
    with pytest.raises(ValueError, match="KTO"):
        pp.train_toy(pp.card_problem(), "KTO")
    with pytest.raises(ValueError, match="mu"):
        pp.dpo_population_loss([0.0, 1.0], [0.7, 0.7], [[0.5, 1.0], [0.0, 0.5]])
    with pytest.raises(ValueError, match="w"):
        pp.random_problem(3, d=2, w=[1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match="logp"):
        pp.pro_loss_torch(torch.zeros(2, 2), torch.zeros(2, 3), torch.zeros(2, 2))


def test_validate_flag_is_local_and_changes_no_number():
    """train_toy skips the per-step checks by an explicit argument, not module state: the
    unchecked losses equal the checked ones, and checks stay on around (and after) a run."""
    p, _ = pp.random_problem(20, rng=3)
    lp, ref = p.log_policy(np.full(p.dim, 0.3)), p.log_policy(np.zeros(p.dim))
    for method, hp in (("PRO", {"alpha": 1.0}), ("DPO", {}), ("IPO", {}), ("DPO+NLL", {"lam": 0.3}), ("SFT", {})):
        on, off = pp.toy_loss(p, lp, ref, method, **hp), pp.toy_loss(p, lp, ref, method, validate=False, **hp)
        assert on.value == off.value and np.array_equal(on.grad, off.grad)
    pp.train_toy(p, "PRO", steps=3, record_every=3, alpha=1.0)
    with pytest.raises(ValueError, match="logp"):
        pp.dpo_loss(np.ones((2, 2)), np.zeros((2, 2)))
