"""Chapter 34: BT populations, the RLHF reward, maximal lotteries, KL-constrained policies."""
import numpy as np
import pytest
from scipy.optimize import check_grad
from scipy.special import expit

from optbook.llm import alignment_distortion as ad
from optbook.llm import alignment_distortion_chapter as ch


def population(seed, m=4, K=3):
    g = np.random.default_rng(seed)
    return g.uniform(0, 1, (K, m)), g.dirichlet(np.ones(K))


def test_preference_matrix_is_a_mixture_of_bt_models():
    U, w = population(0)
    P = ad.preference_matrix(U, w, 3.0)
    assert np.allclose(P + P.T, 1) and np.allclose(np.diag(P), 0.5)
    a, b = 1, 3
    assert P[a, b] == pytest.approx(sum(wk * expit(3.0 * (u[a] - u[b])) for wk, u in zip(w, U)))
    assert np.allclose(ad.average_utility(U, w), w @ U)


def test_maximal_lottery_is_unbeaten_condorcet_and_rps():
    for seed in range(20):
        U, w = population(seed, m=5, K=4)
        p = ad.maximal_lottery(ad.preference_matrix(U, w, 8.0))
        assert p.min() >= -1e-12 and p.sum() == pytest.approx(1)
        assert np.min(p @ ad.preference_matrix(U, w, 8.0)) >= 0.5 - 1e-9
    # a Condorcet winner gets all the mass
    P = np.array([[0.5, 0.6, 0.7], [0.4, 0.5, 0.9], [0.3, 0.1, 0.5]])
    assert np.allclose(ad.maximal_lottery(P), [1, 0, 0], atol=1e-9)
    # rock-paper-scissors: uniform
    q = 0.8
    rps = np.array([[0.5, q, 1 - q], [1 - q, 0.5, q], [q, 1 - q, 0.5]])
    assert np.allclose(ad.maximal_lottery(rps), np.ones(3) / 3, atol=1e-9)


def test_single_user_type_recovers_its_utility():
    u = np.array([[0.1, 0.7, 0.4, 0.2]])
    beta = 4.0
    P = ad.preference_matrix(u, [1.0], beta)
    r = ad.bt_reward(P)
    assert np.allclose(r, beta * (u[0] - u[0].mean()), atol=1e-9)
    v = ad.average_utility(u, [1.0])
    assert ad.distortion(ad.rlhf_policy(P), v) == pytest.approx(1)
    assert ad.distortion(ad.maximal_lottery(P), v) == pytest.approx(1)
    # any connected skewed mu gives the same reward: the BT model is well specified
    assert np.allclose(ad.bt_reward(P, ch.CARD_MU), r, atol=1e-8)


def test_bt_loss_gradient_and_optimality():
    U, w = population(3)
    P = ad.preference_matrix(U, w, 5.0)
    f = lambda r: ad.bt_loss(r, P, ch.CARD_MU)[0]
    g = lambda r: ad.bt_loss(r, P, ch.CARD_MU)[1]
    assert check_grad(f, g, np.array([0.3, -0.2, 0.5, 0.1])) < 1e-6
    r = ad.bt_reward(P, ch.CARD_MU)
    assert np.linalg.norm(g(r)) < 1e-10
    assert abs(r.mean()) < 1e-12


def test_borda_equivalence_for_uniform_pairs_and_its_failure_for_skewed():
    for seed in range(30):
        U, w = population(seed, m=5)
        P = ad.preference_matrix(U, w, 6.0)
        r, b = ad.bt_reward(P), ad.borda_scores(P)
        assert np.array_equal(np.argsort(r), np.argsort(b))
    res = ch.card_results(1.0)
    assert np.argmax(res["reward"]) != np.argmax(res["borda"])


def test_permutation_equivariance():
    U, w = population(5, m=5)
    perm = np.array([3, 0, 4, 1, 2])
    P = ad.preference_matrix(U, w, 7.0)
    Pp = ad.preference_matrix(U[:, perm], w, 7.0)
    mu = ch.tree_mu(ch.spanning_trees(5)[7][0], 5, mix=0.01)
    assert np.allclose(ad.bt_reward(Pp, mu[np.ix_(perm, perm)]), ad.bt_reward(P, mu)[perm], atol=1e-9)
    assert np.allclose(ad.maximal_lottery(Pp), ad.maximal_lottery(P)[perm], atol=1e-7)
    assert np.allclose(ad.borda_scores(Pp), ad.borda_scores(P)[perm])


def test_tree_fit_is_exact():
    U, w = population(2)
    P = ad.preference_matrix(U, w, 5.0)
    edges, A = ch.spanning_trees(4)[3]
    r = ad.bt_reward(P, ch.tree_mu(edges, 4, mix=0.0))
    for a, b in edges:
        assert r[a] - r[b] == pytest.approx(np.log(P[a, b] / P[b, a]), abs=1e-9)
    assert len(ch.spanning_trees(4)) == 16  # Cayley: 4^(4-2)


def test_kl_tilt_hits_the_budget_and_is_monotone():
    ref = np.array([0.5, 0.3, 0.15, 0.05])
    s = np.array([0.1, 0.9, 0.4, 1.0])
    kls = [ad.kl_divergence(ad.kl_tilt(ref, s, t), ref) for t in (0.01, 0.1, 0.5, 1.0)]
    assert np.allclose(kls, (0.01, 0.1, 0.5, 1.0), atol=1e-8)
    welfare = [ad.kl_tilt(ref, s, t) @ s for t in (0.01, 0.1, 0.5, 1.0, 10.0)]
    assert np.all(np.diff(welfare) > 0)
    assert np.allclose(ad.kl_tilt(ref, s, 10.0), [0, 0, 0, 1])
    # the tilt is the constrained optimum: random policies within the budget do no better
    g = np.random.default_rng(0)
    best = ad.kl_tilt(ref, s, 0.2) @ s
    for _ in range(500):
        p = g.dirichlet(ref * 20)
        if ad.kl_divergence(p, ref) <= 0.2:
            assert p @ s <= best + 1e-9


def test_nlhf_kl_is_a_fixed_point_and_tends_to_the_maximal_lottery():
    U, w = population(4)
    P = ad.preference_matrix(U, w, 6.0)
    ref = np.array([0.4, 0.3, 0.2, 0.1])
    lam = 0.3
    pi = ad.nlhf_kl_penalised(P, ref, lam)
    z = np.log(ref) + P @ pi / lam
    assert np.allclose(pi, np.exp(z - z.max()) / np.exp(z - z.max()).sum(), atol=1e-10)
    pi_t = ad.nlhf_kl(P, ref, 0.2)
    assert ad.kl_divergence(pi_t, ref) == pytest.approx(0.2, abs=1e-6)
    ml = ad.maximal_lottery(P)
    assert np.allclose(ad.nlhf_kl(P, ref, 50.0), ml)
    # smaller budgets stay closer to ref
    assert ad.kl_divergence(ad.nlhf_kl(P, ref, 0.05), ref) == pytest.approx(0.05, abs=1e-6)


def test_two_alternative_family_matches_its_closed_form():
    for beta in (2.0, 10.0):
        row = ch.family_row(beta)
        assert row["rlhf"] == pytest.approx(row["closed"], rel=1e-6)
        assert row["nlhf"] == pytest.approx(row["closed"], rel=1e-6)
    assert ad.two_alternative_distortion(20.0) == pytest.approx(10.0, rel=1e-6)
    assert ad.two_alternative_distortion(10.0, 0.001) == pytest.approx(ad.two_alternative_distortion(10.0), rel=1e-2)


def test_card_instance_and_search_are_deterministic():
    r = ch.card_results(1.0)
    assert np.argmax(r["rlhf"]) == 3 and np.argmax(r["nlhf"]) == 2
    assert r["d_rlhf"] > 5 and r["d_nlhf"] == pytest.approx(1)
    a = ch.adversarial_search(0, steps=50)
    b = ch.adversarial_search(0, steps=50)
    assert a["rlhf"] == b["rlhf"] and np.array_equal(a["U"], b["U"])
    # the exact MLE on the adversary's mu agrees with the tree score it searched on
    assert a["rlhf"] == pytest.approx(a["search"], rel=1e-6)


def test_bad_input_names_the_argument():
    U, w = population(0)
    with pytest.raises(ValueError, match="U"):
        ad.preference_matrix(U + 1, w, 1.0)
    with pytest.raises(ValueError, match="w"):
        ad.preference_matrix(U, w * 2, 1.0)
    with pytest.raises(ValueError, match="beta"):
        ad.preference_matrix(U, w, 0.0)
    P = ad.preference_matrix(U, w, 1.0)
    with pytest.raises(ValueError, match="P"):
        ad.maximal_lottery(P + 0.1)
    disconnected = np.zeros((4, 4))
    disconnected[0, 1] = disconnected[1, 0] = disconnected[2, 3] = disconnected[3, 2] = 1
    with pytest.raises(ValueError, match="mu"):
        ad.bt_reward(P, disconnected)
    with pytest.raises(ValueError, match="mu"):
        ad.bt_reward(P, np.triu(np.ones((4, 4)), 1))
    with pytest.raises(ValueError, match="tol"):
        ad.bt_reward(P, tol=0)
    with pytest.raises(ValueError, match="ref"):
        ad.kl_tilt([0.5, 0.5, 0.0, 0.0], np.ones(4), 0.1)
    with pytest.raises(ValueError, match="tau"):
        ad.kl_tilt(np.ones(4) / 4, np.ones(4), -1.0)
    with pytest.raises(ValueError, match="lam"):
        ad.nlhf_kl_penalised(P, np.ones(4) / 4, 0.0)
    with pytest.raises(ValueError, match="v"):
        ad.distortion(np.ones(4) / 4, -np.ones(4))
    with pytest.raises(ValueError, match="policy"):
        ad.distortion(np.ones(4), np.ones(4))
    with pytest.raises(ValueError, match="eps"):
        ad.two_alternative_instance(2.0, 0.7)
    with pytest.raises(ValueError, match="steps"):
        ch.adversarial_search(0, steps=0)
    with pytest.raises(ValueError, match="skew"):
        ch.card_results(1.5)
    with pytest.raises(ValueError, match="m"):
        ad.uniform_pairs(1)
    with pytest.raises(ValueError, match="start"):
        ad.nlhf_kl_penalised(P, np.ones(4) / 4, 0.3, start=np.array([0.5, 0.5, 0.0, 0.0]))
    with pytest.raises(ValueError, match="p and q"):
        ad.kl_divergence(np.array([-0.5, 1.5]), np.ones(2) / 2)


def test_figures_and_explorers():
    assert len(ch.skew_slider_figure().frames) == len(ch.SKEWS)
    assert len(ch.kl_slider_figure().frames) == len(ch.KL_BETAS)
    assert len(ch.family_figure().data) == 4
    c = ch.kl_curves(10.0)
    assert np.all(c["oracle"] >= c["NLHF"] - 1e-9) and np.all(c["oracle"] >= c["RLHF/DPO"] - 1e-9)
    assert np.allclose(c["kl_nlhf"][:4], ch.TAUS[:4], atol=1e-5)
