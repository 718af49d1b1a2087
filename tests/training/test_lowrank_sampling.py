"""Chapter 17: low-rank Adam with importance-sampled subspaces (I3S / SARA)."""
import numpy as np
import pytest
import torch

from optbook.training import lowrank_sampling as ch


def _quad(m=6, n=9, seed=0):
    rng = np.random.default_rng(seed)
    A = rng.standard_normal((m, n))
    return (lambda W: 0.5 * float(np.sum((W - A) ** 2))), (lambda W: W - A), A


# --------------------------------------------------------------------------- subspace rules


@pytest.mark.parametrize("rule", ch.RULES)
@pytest.mark.parametrize("shape", [(8, 12), (8, 8), (5, 3)])
def test_every_rule_gives_an_orthonormal_basis(rule, shape):
    G = np.random.default_rng(1).standard_normal(shape)
    P, idx, sigma = ch.select_subspace(G, 3, rule, rng=0)
    assert P.shape == (shape[0], 3)
    assert np.allclose(P.T @ P, np.eye(3), atol=1e-10)
    assert sigma.shape == (shape[0],) and np.all(np.diff(sigma) <= 1e-12)


def test_dominant_rule_is_the_top_singular_vectors_and_captures_their_energy():
    G = np.random.default_rng(2).standard_normal((10, 14))
    U, s, _ = np.linalg.svd(G)
    P, idx, _ = ch.select_subspace(G, 4, "dominant")
    assert np.array_equal(idx, np.arange(4))
    assert np.allclose(np.abs(P), np.abs(U[:, :4]))
    assert ch.captured_energy(P, G) == pytest.approx(np.sum(s[:4] ** 2) / np.sum(s ** 2), rel=1e-12)


def test_importance_sampling_properties():
    sigma = np.array([5.0, 3.0, 2.0, 1.0, 0.5, 0.0, 0.0])
    rng = torch.Generator().manual_seed(3)
    draws = np.array([ch.importance_indices(sigma, 3, rng) for _ in range(10_000)])
    assert all(len(set(row)) == 3 for row in draws[:500])                 # no duplicates
    assert not np.isin(draws, [5, 6]).any()                                # zero weight never drawn
    freq = np.bincount(draws.ravel(), minlength=7)[:5] / len(draws)
    assert np.all(np.diff(freq) < 0)                                       # monotone in sigma
    assert freq[0] < 1.0 and freq[0] > 0.8
    big = np.array([1e6, 1.0, 1.0, 1.0, 1.0])
    top = [0 in ch.importance_indices(big, 2, rng) for _ in range(1000)]
    assert np.mean(top) > 0.999                                            # dominant sigma_1 always in
    assert np.array_equal(ch.importance_indices(sigma, 3, 7), ch.importance_indices(sigma, 3, 7))
    # the draws follow successive sampling: frequencies match the exact inclusion probabilities
    pi = ch.inclusion_probabilities(sigma, 3)
    assert pi.sum() == pytest.approx(3.0) and np.all(pi[5:] == 0)
    assert np.allclose(np.bincount(draws.ravel(), minlength=7) / len(draws), pi, atol=0.015)


def test_inclusion_probabilities_by_hand():
    # r = 1: proportional to sigma; r = 2 of (2, 1, 1): pi_0 = 1/2 + 2 * (1/4 * 2/3) = 5/6
    assert np.allclose(ch.inclusion_probabilities([2.0, 1.0, 1.0], 1), [0.5, 0.25, 0.25])
    assert np.allclose(ch.inclusion_probabilities([2.0, 1.0, 1.0], 2), [5 / 6, 7 / 12, 7 / 12])
    with pytest.raises(ValueError, match="rank"):
        ch.inclusion_probabilities([1.0, 0.0, 0.0], 2)


def test_selection_never_touches_the_global_generators():
    before, np_before = torch.get_rng_state(), np.random.get_state()[1].copy()
    G = np.random.default_rng(0).standard_normal((8, 10))
    for rule in ch.RULES:
        ch.select_subspace(G, 3, rule, rng=None)
    assert torch.equal(torch.get_rng_state(), before) and np.array_equal(np.random.get_state()[1], np_before)


def test_rank_deficient_gradient_is_padded_with_zero_directions():
    G = np.outer(np.arange(1.0, 7.0), np.ones(8))                         # rank one
    P, idx, sigma = ch.select_subspace(G, 3, "importance", rng=0)
    assert idx[0] == 0 and len(set(idx)) == 3
    assert np.allclose(P.T @ P, np.eye(3), atol=1e-10)


def test_overlap_metric():
    rng = np.random.default_rng(4)
    P = np.linalg.qr(rng.standard_normal((20, 4)))[0]
    assert ch.subspace_overlap(P, P) == pytest.approx(1.0)
    flipped = P[:, [2, 0, 3, 1]] * np.array([1, -1, -1, 1])
    assert ch.subspace_overlap(P, flipped) == pytest.approx(1.0)
    rot = P @ np.linalg.qr(rng.standard_normal((4, 4)))[0]
    assert ch.subspace_overlap(P, rot) == pytest.approx(1.0)
    mc = np.mean([ch.subspace_overlap(P, np.linalg.qr(rng.standard_normal((20, 4)))[0]) for _ in range(2000)])
    assert mc == pytest.approx(4 / 20, abs=0.02)


def test_projection_side_and_state_sizes():
    assert ch.projection_side((4, 9)) == "left" and ch.projection_side((9, 4)) == "right"
    assert ch.state_floats(4096, 11008) == {"moments": 2 * 4096 * 11008, "projector": 0, "total": 2 * 4096 * 11008}
    s = ch.state_floats(11008, 4096, 256)
    assert s["moments"] == 2 * 256 * 11008 and s["projector"] == 256 * 4096


# --------------------------------------------------------------------------- methods


def test_full_rank_projected_sgd_is_plain_sgd():
    fun, jac, A = _quad()
    for rule in ch.RULES:
        res = ch.projected_sgd(fun, np.zeros((6, 9)), jac, rank=6, rule=rule, tau=3, lr=0.1, maxiter=25, rng=0)
        W = np.zeros((6, 9))
        for _ in range(25):
            W = W - 0.1 * jac(W)
        assert np.allclose(res.x, W, atol=1e-12)
    fun, jac, A = _quad(9, 6)                                              # right projection
    res = ch.projected_sgd(fun, np.zeros((9, 6)), jac, rank=6, rule="importance", tau=3, lr=0.1, maxiter=10, rng=0)
    assert np.allclose(res.x, A - 0.9 ** 10 * A, atol=1e-12)


def test_one_lowrank_adam_step_by_hand():
    fun, jac, A = _quad(5, 7)
    res = ch.lowrank_adam(fun, np.zeros((5, 7)), jac, rank=2, rule="dominant", tau=10, lr=0.1, scale=0.5, maxiter=1)
    G = -A
    P = ch.select_subspace(G, 2, "dominant")[0]
    R = P.T @ G
    N = R / (np.abs(R) + 1e-8)                                            # first Adam step: M/V bias-corrected
    assert np.allclose(res.x, -0.05 * P @ N, atol=1e-12)


@pytest.mark.parametrize("shape", [(6, 9), (9, 6)])
def test_lowrank_adam_decreases_a_quadratic_and_records_diagnostics(shape):
    fun, jac, _ = _quad(*shape)
    res = ch.lowrank_adam(fun, np.zeros(shape), jac, rank=3, rule="importance", tau=5, lr=0.05, scale=1.0,
                          maxiter=300, rng=1)
    assert res.x.shape == shape and res.fun < 0.05 * fun(np.zeros(shape))
    ov = res.trace["overlap"]
    assert np.sum(np.isfinite(ov)) == 300 // 5 - 1 and np.all((ov[np.isfinite(ov)] >= 0) & (ov[np.isfinite(ov)] <= 1 + 1e-12))
    assert len(res.refreshes) == 60 and all(len(r["indices"]) == 3 for r in res.refreshes)
    en = res.trace["energy"][:-1]
    assert np.all((en >= 0) & (en <= 1 + 1e-12))


def test_full_adam_matches_torch_adam():
    fun, jac, A = _quad(4, 5)
    res = ch.full_adam(fun, np.zeros((4, 5)), jac, lr=0.05, maxiter=30)
    W = torch.zeros(4, 5, dtype=torch.float64, requires_grad=True)
    opt = torch.optim.Adam([W], lr=0.05)
    At = torch.tensor(A)
    for _ in range(30):
        opt.zero_grad()
        (0.5 * ((W - At) ** 2).sum()).backward()
        opt.step()
    assert np.allclose(res.x, W.detach().numpy(), atol=1e-10)


def test_reset_policy_restarts_the_moments():
    fun, jac, _ = _quad()
    keep = ch.lowrank_adam(fun, np.zeros((6, 9)), jac, rank=2, rule="random", tau=1, lr=0.05, maxiter=20, rng=0)
    reset = ch.lowrank_adam(fun, np.zeros((6, 9)), jac, rank=2, rule="random", tau=1, lr=0.05, maxiter=20,
                            rng=0, state_policy="reset")
    assert not np.allclose(keep.x, reset.x)
    # with a reset at every step, each update is a bias-corrected first step: entries +-lr*scale*P sign
    one = ch.lowrank_adam(fun, np.zeros((6, 9)), jac, rank=2, rule="random", tau=1, lr=0.05, maxiter=1, rng=0)
    assert np.allclose(reset.trace.objective[1], one.fun)


def test_batch_runs_equal_single_runs():
    prob = ch.FrozenSubspaceProblem(m=6, n=9, noise=2.0, noise_rank=2, seed=1)
    xi = prob.noise_draws(60, 5)
    jac = prob.stochastic_jac(5)
    assert np.allclose(jac(np.zeros((6, 9))), prob.grad(np.zeros((6, 9))) + 2.0 * (prob.U0 * (xi[0] * prob.c)) @ prob.V0.T)

    def grad(W, t):
        return W - prob.W_star + 2.0 * np.matmul(prob.U0 * (xi[t] * prob.c), prob.V0.T)

    for rule in (*ch.RULES, "full"):
        run = ch.lowrank_adam_batch(np.zeros((2, 6, 9)), grad, lambda W: 0.5 * np.sum((W - prob.W_star) ** 2, axis=(1, 2)),
                                    rank=2, rule=rule, tau=7, lr=[0.05, 0.02], scale=1.0, maxiter=60, rngs=[3, 4])
        for b, (lr, seed) in enumerate(((0.05, 3), (0.02, 4))):
            one = ch.lowrank_adam(prob.fun, np.zeros((6, 9)), prob.stochastic_jac(5), rank=2, rule=rule, tau=7, lr=lr,
                                  scale=1.0, maxiter=60, rng=seed)
            assert np.allclose(run.x[b], one.x, atol=1e-10)
            assert np.allclose(run.losses[:, b], one.trace.objective, rtol=1e-9)
    a = ch.lowrank_adam(prob.fun, np.zeros((6, 9)), prob.stochastic_jac(5), rank=2, tau=7, maxiter=40, rng=9)
    b = ch.lowrank_adam(prob.fun, np.zeros((6, 9)), prob.stochastic_jac(5), rank=2, tau=7, maxiter=40, rng=9)
    assert np.array_equal(a.x, b.x)


# --------------------------------------------------------------------------- torch optimizer


def _torch_quadratic(shape, rule, rank, steps, seed=0, policy="keep"):
    A = torch.tensor(np.random.default_rng(5).standard_normal(shape))
    W = torch.zeros(shape, dtype=torch.float64, requires_grad=True)
    opt = ch.LowRankAdam([W], lr=0.05, rank=rank, update_gap=4, scale=0.5, rule=rule, seed=seed, state_policy=policy)
    for _ in range(steps):
        opt.zero_grad()
        (0.5 * ((W - A) ** 2).sum()).backward()
        opt.step()
    return W.detach().numpy(), opt, W


@pytest.mark.parametrize("shape", [(6, 9), (9, 6)])
@pytest.mark.parametrize("rule", ch.RULES)
@pytest.mark.parametrize("policy", ch.STATE_POLICIES)
def test_torch_optimizer_matches_the_numpy_method(shape, rule, policy):
    Wt, opt, W = _torch_quadratic(shape, rule, 3, 13, seed=2, policy=policy)
    A = np.random.default_rng(5).standard_normal(shape)
    res = ch.lowrank_adam(lambda X: 0.5 * float(np.sum((X - A) ** 2)), np.zeros(shape), lambda X: X - A, rank=3,
                          rule=rule, tau=4, lr=0.05, scale=0.5, maxiter=13, rng=2, state_policy=policy)
    assert np.allclose(Wt, res.x, atol=1e-10)
    st = opt.state[W]
    assert st["exp_avg"].shape == (3, max(shape)) and 0 <= st["overlap"] <= 1 + 1e-12


def test_torch_optimizer_uses_plain_adam_for_vectors_and_small_matrices():
    b = torch.zeros(5, dtype=torch.float64, requires_grad=True)
    opt = ch.LowRankAdam([b], lr=0.1, rank=4)
    ref = b.detach().clone().requires_grad_(True)
    opt_ref = torch.optim.Adam([ref], lr=0.1)
    target = torch.arange(5.0, dtype=torch.float64)
    for _ in range(5):
        for o, p in ((opt, b), (opt_ref, ref)):
            o.zero_grad()
            ((p - target) ** 2).sum().backward()
            o.step()
    assert torch.allclose(b, ref, atol=1e-12)
    assert not opt.is_low_rank(torch.zeros(4, 10), opt.param_groups[0])


def test_groups_are_validated_with_their_overrides_and_resume_restores_the_generator():
    W, V = (torch.zeros(6, 8, dtype=torch.float64, requires_grad=True) for _ in range(2))
    for bad, match in (({"rank": 0}, "rank"), ({"rule": "top"}, "rule"), ({"betas": (0.9, 1.0)}, "betas"),
                       ({"update_gap": 0}, "update_gap"), ({"state_policy": "x"}, "state_policy")):
        with pytest.raises(ValueError, match=match):
            ch.LowRankAdam([{"params": [W]}, {"params": [V], **bad}])
    opt = ch.LowRankAdam([W], rank=2, update_gap=1, seed=4)
    W.grad = torch.randn(6, 8, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
    opt.step()
    saved = opt.state_dict()
    assert "generator_state" in saved
    opt.step()
    P_next = opt.state[W]["P"].clone()
    opt2 = ch.LowRankAdam([W], rank=2, update_gap=1, seed=99)
    opt2.load_state_dict(saved)
    opt2.step()
    assert torch.equal(opt2.state[W]["P"], P_next)


# --------------------------------------------------------------------------- bad input


@pytest.mark.parametrize("call, match", [
    (lambda: ch.importance_indices([1.0, -1.0], 1), "sigma"),
    (lambda: ch.importance_indices([1.0, np.nan], 1), "sigma"),
    (lambda: ch.importance_indices([1.0, 2.0], 3), "rank"),
    (lambda: ch.importance_indices([1.0, 2.0], 0), "rank"),
    (lambda: ch.select_subspace(np.ones(4), 1), "G"),
    (lambda: ch.select_subspace(np.full((3, 3), np.inf), 1), "G"),
    (lambda: ch.select_subspace(np.ones((3, 4)), 4), "rank"),
    (lambda: ch.select_subspace(np.ones((3, 4)), 2, "biggest"), "rule"),
    (lambda: ch.subspace_overlap(np.eye(4)[:, :2], np.eye(4)[:, :3]), "Q"),
    (lambda: ch.captured_energy(np.eye(4)[:, :2], np.ones((3, 3))), "G"),
    (lambda: ch.projection_side((3,)), "shape"),
    (lambda: ch.state_floats(0, 4), "m"),
    (lambda: ch.state_floats(4, 4, 5), "rank"),
    (lambda: ch.lowrank_adam(lambda W: 0.0, np.zeros((3, 4)), lambda W: W, rank=4), "rank"),
    (lambda: ch.lowrank_adam(lambda W: 0.0, np.zeros((3, 4)), lambda W: W, rank=2, tau=0), "tau"),
    (lambda: ch.lowrank_adam(lambda W: 0.0, np.zeros((3, 4)), lambda W: W, rank=2, lr=-1.0), "lr"),
    (lambda: ch.lowrank_adam(lambda W: 0.0, np.zeros((3, 4)), lambda W: W, rank=2, scale=0.0), "scale"),
    (lambda: ch.lowrank_adam(lambda W: 0.0, np.zeros((3, 4)), lambda W: W, rank=2, betas=(1.0, 0.9)), "betas"),
    (lambda: ch.lowrank_adam(lambda W: 0.0, np.zeros((3, 4)), lambda W: W, rank=2, state_policy="x"), "state_policy"),
    (lambda: ch.lowrank_adam(lambda W: 0.0, np.zeros((3, 4)), lambda W: W, rank=2, maxiter=-1), "maxiter"),
    (lambda: ch.lowrank_adam(lambda W: 0.0, np.full((3, 4), np.nan), lambda W: W, rank=2), "W0"),
    (lambda: ch.lowrank_adam(lambda W: 0.0, np.zeros((3, 4)), lambda W: W[0], rank=2, maxiter=1), "jac"),
    (lambda: ch.lowrank_adam(lambda W: 0.0, np.zeros((3, 4)), lambda W: W + np.nan, rank=2, maxiter=1), "jac"),
    (lambda: ch.lowrank_adam(0.0, np.zeros((3, 4)), lambda W: W, rank=2), "fun"),
    (lambda: ch.projected_sgd(lambda W: 0.0, np.zeros((3, 4)), lambda W: W, rank=2, rule="top"), "rule"),
    (lambda: ch.LowRankAdam([torch.zeros(3, requires_grad=True)], lr=0.0), "lr"),
    (lambda: ch.LowRankAdam([torch.zeros(3, requires_grad=True)], rank=0), "rank"),
    (lambda: ch.LowRankAdam([torch.zeros(3, requires_grad=True)], update_gap=0), "update_gap"),
    (lambda: ch.LowRankAdam([torch.zeros(3, requires_grad=True)], rule="x"), "rule"),
    (lambda: ch.FrozenSubspaceProblem(noise=-1.0), "noise"),
    (lambda: ch.FrozenSubspaceProblem(m=3, noise_rank=4), "noise_rank"),
])
def test_bad_input_is_refused(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_torch_optimizer_refuses_a_non_finite_gradient():
    W = torch.zeros(6, 6, requires_grad=True)
    opt = ch.LowRankAdam([W], rank=2)
    W.grad = torch.full((6, 6), float("nan"))
    with pytest.raises(ValueError, match="gradient"):
        opt.step()
