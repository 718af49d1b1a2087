"""Tests of chapter 16 (PaZO): estimators, exact expectations, reductions, the lock-step simulator,
torch optimizers (the torch.optim conformance checks are in test_optimizer_conformance.py)."""
import numpy as np
import pytest
import torch

from optbook.training import pazo_methods as pz
from optbook.training import pazo_chapter as ch

LAM = np.array([1.0, 3.0, 10.0, 30.0])
H4 = np.diag(LAM)
F4 = pz.quadratic_fun(LAM)


def _dense_spd(d=4, seed=0):
    rng = np.random.default_rng(seed)
    Q, _ = np.linalg.qr(rng.standard_normal((d, d)))
    return Q @ np.diag(np.logspace(0, 2, d)) @ Q.T


# ----------------------------------------------------------------- estimators


def test_preconditioner_powers():
    H = _dense_spd()
    P = pz.preconditioner(H, 0.5)
    np.testing.assert_allclose(P @ H @ P, np.eye(4), atol=1e-10)
    np.testing.assert_allclose(pz.preconditioner(H, 1.0), np.linalg.inv(H), rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(pz.preconditioner(H, 0.0), np.eye(4), atol=1e-12)


def test_quadratic_exactness_of_central_difference():
    H = _dense_spd()
    f = lambda x: 0.5 * x @ H @ x  # noqa: E731
    rng = np.random.default_rng(1)
    x, u = rng.standard_normal(4), rng.standard_normal(4)
    P = pz.preconditioner(H, 0.5)
    g, _, _ = pz.spsa_estimate(f, x, P @ u, 1e-3)
    exact = (u @ P @ (H @ x)) * (P @ u)
    assert np.linalg.norm(g - exact) <= 1e-10 * np.linalg.norm(exact)


def test_pspsa_estimator_is_unbiased_for_H_power():
    H = _dense_spd(3, 2)
    x = np.array([1.0, -0.5, 0.3])
    grad = H @ x
    alpha = 0.5
    P = pz.preconditioner(H, alpha)
    U = np.random.default_rng(3).standard_normal((100000, 3))
    G = ((U @ P) @ grad)[:, None] * (U @ P)  # exact quadratic estimates, vectorised
    mean, se = G.mean(0), G.std(0) / np.sqrt(len(G))
    target = pz.preconditioner(H, 2 * alpha) @ grad
    assert np.all(np.abs(mean - target) <= 3.5 * se)


def test_diagonal_hessian_estimate_is_unbiased():
    H = _dense_spd(3, 4)
    f = lambda x: 0.5 * x @ H @ x  # noqa: E731
    x = np.array([0.3, 0.1, -0.2])
    D = np.array([0.5, 2.0, 7.0])
    rng = np.random.default_rng(5)
    eps = 1e-2
    hs = []
    f0 = f(x)
    for _ in range(20000):
        u = rng.standard_normal(3)
        p = u / np.sqrt(D)
        hs.append(pz.diagonal_hessian_estimate(f0, f(x + eps * p), f(x - eps * p), u, D, eps))
    hs = np.array(hs)
    mean, se = hs.mean(0), hs.std(0) / np.sqrt(len(hs))
    assert np.all(np.abs(mean - np.diag(H)) <= 3.5 * se)


# ----------------------------------------------------------------- exact expectations


def test_one_step_expectation_matches_monte_carlo():
    H = _dense_spd(3, 6)
    x = np.array([1.0, 0.5, -1.0])
    alpha, eta = 0.25, 0.5 * pz.pspsa_step_size(H, 0.25)
    P = pz.preconditioner(H, alpha)
    U = np.random.default_rng(7).standard_normal((200000, 3))
    V = U @ P
    Xp = x - eta * (V @ (H @ x))[:, None] * V
    vals = 0.5 * np.einsum("ij,jk,ik->i", Xp, H, Xp)
    exact = pz.one_step_expected_objective(H, x, alpha, eta)
    assert abs(vals.mean() - exact) <= 3.5 * vals.std() / np.sqrt(len(vals))


def test_expected_objective_recursion_matches_monte_carlo():
    x0 = np.ones(4)
    eta = pz.pspsa_step_size(H4, 0.0)
    exact = pz.expected_objective(H4, x0, 0.0, eta, [0, 5, 12])
    assert exact[0] == pytest.approx(F4(x0))
    finals = np.array([[r.trace.objective[t] for t in (5, 12)]
                       for r in (pz.pspsa(F4, x0, H4, alpha=0.0, maxiter=12, rng=s) for s in range(3000))])
    mean, se = finals.mean(0), finals.std(0) / np.sqrt(len(finals))
    assert np.all(np.abs(mean - exact[1:]) <= 3.5 * se)


def test_alpha_half_rate_and_bound():
    H = _dense_spd(5, 8)
    assert pz.contraction_bound(H, 0.5) == pytest.approx(1 - 1 / 7)
    assert pz.pspsa_step_size(H, 0.5) == pytest.approx(1 / 7)
    for a in (0.0, 0.25, 0.75, 1.0):
        assert pz.contraction_bound(H, a) > pz.contraction_bound(H, 0.5)
    # H = cI: every order gives the same bound
    assert pz.contraction_bound(3 * np.eye(4), 0.0) == pytest.approx(pz.contraction_bound(3 * np.eye(4), 1.0))


def test_expected_iterations_u_shape_and_best_step():
    lam, x0 = pz.ill_conditioned_quadratic(20, 3.0)
    its = [pz.expected_iterations(np.diag(lam), x0, a) for a in ch.ALPHAS]
    assert int(np.argmin(its)) == 2
    assert np.all(np.diff(its[:3]) < 0) and np.all(np.diff(its[2:]) > 0)
    eta, it = pz.best_fixed_step(np.diag(lam), x0, 0.0)
    assert it <= its[0]
    assert pz.expected_iterations(np.diag(lam), x0, 0.0, 100 * eta) == np.inf  # unstable step


# ----------------------------------------------------------------- reductions and determinism


def test_alpha_zero_is_zo_sgd_and_pazo_with_frozen_unit_D_is_zo_sgd():
    x0 = np.ones(4)
    eta = pz.pspsa_step_size(H4, 0.0)
    a = pz.zo_sgd(F4, x0, eta=eta, maxiter=50, rng=3)
    b = pz.pspsa(F4, x0, H4, alpha=0.0, eta=eta, maxiter=50, rng=3)
    c = pz.pazo(F4, x0, eta=eta, beta=0.0, D0=1.0, momentum=0.0, maxiter=50, rng=3)
    np.testing.assert_allclose(a.x, b.x, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(a.x, c.x, rtol=1e-12, atol=1e-15)
    assert a.nfev == 100 and c.nfev == 151


def test_zero_momentum_is_plain_and_seeds_are_deterministic():
    x0 = np.ones(4)
    a = pz.pspsa(F4, x0, H4, momentum=0.0, maxiter=30, rng=1)
    b = pz.pspsa(F4, x0, H4, maxiter=30, rng=1)
    np.testing.assert_array_equal(a.x, b.x)
    c = pz.pspsa(F4, x0, H4, momentum=0.5, eta=pz.pspsa_step_size(H4, 0.5), maxiter=30, rng=1)
    assert not np.allclose(a.x, c.x)
    d = pz.pazo(F4, x0, eta=0.1, D0=30.0, maxiter=40, rng=9)
    e = pz.pazo(F4, x0, eta=0.1, D0=30.0, maxiter=40, rng=9)
    np.testing.assert_array_equal(d.x, e.x)
    assert np.all(d.D > 0)


def test_oracle_order_half_beats_zo_sgd_and_pazo_learns_curvature_ranks():
    lam, x0 = pz.ill_conditioned_quadratic(20, 3.0)
    f = pz.quadratic_fun(lam)
    tgt = 1e-6 * f(x0)
    orac = pz.pspsa(f, x0, np.diag(lam), f_target=tgt, maxiter=5000, rng=0)
    assert orac.success and orac.nit < 1000
    p = pz.hizoo(f, x0, eta=1 / 22, D0=float(lam.max()), maxiter=3000, rng=0)
    assert np.corrcoef(np.log(p.D), np.log(lam))[0, 1] > 0.7
    assert p.fun < 1e-2 * f(x0)


def test_hizoo_is_pazo_without_momentum_and_momentum_changes_the_run():
    a = pz.hizoo(F4, np.ones(4), eta=0.1, D0=30.0, maxiter=60, rng=2)
    b = pz.pazo(F4, np.ones(4), eta=0.1, D0=30.0, momentum=0.0, maxiter=60, rng=2)
    c = pz.pazo(F4, np.ones(4), eta=0.01, D0=30.0, momentum=0.9, maxiter=60, rng=2)
    np.testing.assert_array_equal(a.x, b.x)
    np.testing.assert_array_equal(a.D, b.D)
    assert a.trace.method == "HiZOO" and not np.allclose(a.x, c.x)


@pytest.mark.parametrize("method, setting, run", [
    ("pazo", {"eta": 0.2, "momentum": 0.5},
     lambda f, x0, lam, n: pz.pazo(f, x0, eta=0.2, momentum=0.5, D0=float(lam.max()), maxiter=n, rng=3)),
    ("pazo", {"step": 0.4, "momentum": 0.5},  # effective step 0.4 = eta / (1 - momentum)
     lambda f, x0, lam, n: pz.pazo(f, x0, eta=0.2, momentum=0.5, D0=float(lam.max()), maxiter=n, rng=3)),
    ("zo_sgd", {"eta": 2e-4, "momentum": 0.0}, lambda f, x0, lam, n: pz.zo_sgd(f, x0, eta=2e-4, maxiter=n, rng=3)),
    ("zo_adam", {"eta": 1e-2, "beta1": 0.5},
     lambda f, x0, lam, n: pz.zo_adam(f, x0, eta=1e-2, betas=(0.5, 0.999), maxiter=n, rng=3)),
])
def test_lockstep_simulator_matches_the_one_run_functions(method, setting, run):
    lam, x0 = ch.card_problem()
    f = pz.quadratic_fun(lam)
    res = run(f, x0, lam, 530)  # more than one block of draws
    sim = ch.simulate(method, [setting, setting], [3, 3], budget=res.nfev)
    np.testing.assert_allclose(sim["final"], res.fun, rtol=1e-4)  # rounding grows over the run


def test_lockstep_pspsa_counts_evaluations_to_target_and_flags_divergence():
    lam, x0 = ch.card_problem()
    f, H = pz.quadratic_fun(lam), np.diag(lam)
    tgt = 1e-6 * f(x0)
    res = pz.pspsa(f, x0, H, alpha=0.5, f_target=tgt, maxiter=5000, rng=4)
    st = {"eta": pz.pspsa_step_size(H, 0.5), "scale": lam ** -0.5}
    sim = ch.simulate("pspsa", [st, {"eta": 1.0}], [4], budget=10000, target=tgt)
    assert sim["hit"][0, 0] == res.nfev
    assert sim["diverged"][1, 0] and np.isinf(sim["hit"][1, 0]) and np.isinf(sim["final"][1, 0])
    with pytest.raises(ValueError, match="method"):
        ch.simulate("newton", [st], [0], budget=10)


def test_divergence_is_reported_not_nan():
    res = pz.zo_sgd(F4, np.ones(4), eta=1.0, maxiter=1000, rng=0)
    assert not res.success and "diverged" in res.message
    assert np.all(np.isfinite(res.trace.objective))


# ----------------------------------------------------------------- bad input


@pytest.mark.parametrize("kwargs, match", [
    (dict(x0=np.ones(3)), "H must have shape"),
    (dict(x0=np.array([1.0, np.nan, 1.0, 1.0])), "x0 must be finite"),
    (dict(alpha=3.0), "alpha"),
    (dict(eps=0.0), "eps"),
    (dict(eta=-1.0), "eta"),
    (dict(momentum=1.0), "momentum"),
    (dict(maxiter=-1), "maxiter"),
    (dict(f_target=np.inf), "f_target"),
    (dict(H=-H4), "H must be positive definite"),
    (dict(callback=3), "callback"),
])
def test_pspsa_rejects_bad_input(kwargs, match):
    args = dict(x0=np.ones(4), H=H4)
    args.update(kwargs)
    with pytest.raises(ValueError, match=match):
        pz.pspsa(F4, args.pop("x0"), args.pop("H"), **args)


@pytest.mark.parametrize("kwargs, match", [
    (dict(beta=1.0), "beta"), (dict(D0=0.0), "D0"), (dict(D0=np.array([1.0, -1.0, 1.0, 1.0])), "D0"),
    (dict(D0=np.ones(3)), "D0"), (dict(weight_decay=-1.0), "weight_decay"), (dict(eta=None), "eta"),
])
def test_pazo_rejects_bad_input(kwargs, match):
    args = dict(eta=0.1)
    args.update(kwargs)
    with pytest.raises(ValueError, match=match):
        pz.pazo(F4, np.ones(4), **args)


def test_other_functions_reject_bad_input():
    with pytest.raises(ValueError, match="D must be strictly positive"):
        pz.diagonal_hessian_estimate(1.0, 1.0, 1.0, np.ones(2), np.array([1.0, 0.0]), 1e-3)
    with pytest.raises(ValueError, match="fp must be finite"):
        pz.diagonal_hessian_estimate(1.0, np.nan, 1.0, np.ones(2), np.ones(2), 1e-3)
    with pytest.raises(ValueError, match="v must have length"):
        pz.spsa_estimate(F4, np.ones(4), np.ones(3), 1e-3)
    with pytest.raises(ValueError, match="betas"):
        pz.zo_adam(F4, np.ones(4), eta=1e-3, betas=(0.9, 1.0))
    with pytest.raises(ValueError, match="reduction"):
        pz.expected_iterations(H4, np.ones(4), 0.5, reduction=2.0)
    with pytest.raises(ValueError, match="t must be"):
        pz.expected_objective(H4, np.ones(4), 0.5, 0.1, [-1])
    with pytest.raises(ValueError, match="fun must be finite at x0"):
        pz.zo_sgd(lambda x: np.nan, np.ones(2), eta=0.1)
    with pytest.raises(ValueError, match="lam must be positive"):
        pz.quadratic_fun(np.array([1.0, 0.0]))


# ----------------------------------------------------------------- torch optimizers


def _tiny_model(seed=0):
    torch.manual_seed(seed)
    model = torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.Tanh(), torch.nn.Linear(3, 1)).double()
    X = torch.randn(32, 4, dtype=torch.float64, generator=torch.Generator().manual_seed(1))
    y = torch.randn(32, 1, dtype=torch.float64, generator=torch.Generator().manual_seed(2))
    return model, (lambda: torch.nn.functional.mse_loss(model(X), y))


def _flat(model):
    return torch.cat([p.detach().reshape(-1) for p in model.parameters()])


def test_probe_restores_parameters_and_seed_reproduces_update():
    model, closure = _tiny_model()
    opt = pz.PaZO(model.parameters(), lr=0.01, eps=1e-3, seed=4)
    before = _flat(model).clone()
    opt.probe(closure, seed=123)
    assert torch.max(torch.abs(_flat(model) - before)) <= 1e-12
    # Same seeds, same model: identical steps; and the update equals the one rebuilt by hand.
    model2, closure2 = _tiny_model()
    opt2 = pz.PaZO(model2.parameters(), lr=0.01, eps=1e-3, seed=4)
    seed = int(torch.randint(0, 2 ** 62, (1,), generator=torch.Generator().manual_seed(4)))
    f0 = float(closure().detach())
    fp, fm = opt.probe(closure, seed)
    us = opt.directions(seed)[0]
    opt2.step(closure2)
    for p_before, p_after, u in zip(model.parameters(), model2.parameters(), us):
        expected = p_before - 0.01 * (fp - fm) / 2e-3 * u  # D0 = 1
        torch.testing.assert_close(p_after, expected, rtol=1e-10, atol=1e-12)
    assert opt2.forward_passes == 3
    state_D = [opt2.curvature(p) for p in model2.parameters()]
    curv = (fp + fm - 2 * f0) / (2e-6)
    for D, u in zip(state_D, us):
        torch.testing.assert_close(D, 0.97 + 0.03 * (curv * (u * u - 1)).abs(), rtol=1e-8, atol=1e-12)


def test_zo_gradient_estimate_aligns_with_autograd():
    model, closure = _tiny_model(3)
    loss = closure()
    grads = torch.autograd.grad(loss, list(model.parameters()))
    g_true = torch.cat([g.reshape(-1) for g in grads])
    opt = pz.MeZO(model.parameters(), lr=1e-3, eps=1e-4, seed=0)
    acc = torch.zeros_like(g_true)
    n = 4000
    with torch.no_grad():
        for s in range(n):
            fp, fm = opt.probe(closure, s)
            u = torch.cat([t.reshape(-1) for t in opt.directions(s)[0]])
            acc += (fp - fm) / 2e-4 * u
    cos = torch.dot(acc, g_true) / (acc.norm() * g_true.norm())
    assert cos > 0.9


def test_torch_pazo_trains_and_D_stays_positive():
    model, closure = _tiny_model(5)
    opt = pz.PaZO(model.parameters(), lr=0.05, eps=1e-3, D0=1.0, momentum=0.5, weight_decay=1e-4, seed=1)
    first = float(closure().detach())
    for _ in range(300):
        opt.step(closure)
    assert float(closure().detach()) < first
    assert all(torch.all(opt.curvature(p) > 0) for p in model.parameters())
    assert opt.forward_passes == 900


def test_torch_reductions_hizoo_and_mezo():
    """PaZO with momentum 0 is HiZOO; with beta = 0 and D0 = 1 its parameters follow MeZO's."""
    runs = {}
    for name, make in {"pazo0": lambda ps: pz.PaZO(ps, lr=0.02, momentum=0.0, seed=7),
                       "hizoo": lambda ps: pz.HiZOO(ps, lr=0.02, seed=7),
                       "frozen": lambda ps: pz.PaZO(ps, lr=0.02, momentum=0.0, beta=0.0, D0=1.0, seed=7),
                       "mezo": lambda ps: pz.MeZO(ps, lr=0.02, seed=7)}.items():
        model, closure = _tiny_model()
        opt = make(model.parameters())
        for _ in range(20):
            opt.step(closure)
        runs[name] = _flat(model)
    assert torch.equal(runs["pazo0"], runs["hizoo"])
    torch.testing.assert_close(runs["frozen"], runs["mezo"], rtol=1e-12, atol=1e-14)
    assert not torch.equal(runs["hizoo"], runs["mezo"])


def test_torch_zo_adam_first_step_is_signlike_adam_on_the_estimate():
    model, closure = _tiny_model()
    before = [p.detach().clone() for p in model.parameters()]
    opt = pz.ZOAdam(model.parameters(), lr=0.01, eps=1e-3, seed=3)
    seed = int(torch.randint(0, 2 ** 62, (1,), generator=torch.Generator().manual_seed(3)))
    fp, fm = opt.probe(closure, seed)
    us = opt.directions(seed)[0]
    opt.step(closure)
    for b, p, u in zip(before, model.parameters(), us):
        g = (fp - fm) / 2e-3 * u
        torch.testing.assert_close(p.detach(), b - 0.01 * g / (g.abs() + 1e-8), rtol=1e-9, atol=1e-12)
    assert opt.forward_passes == 4 and opt.steps == 1


def test_torch_state_dict_carries_generator_and_counters():
    model, closure = _tiny_model()
    opt = pz.PaZO(model.parameters(), lr=0.01, seed=1)
    opt.step(closure)
    sd = opt.state_dict()
    assert sd["zeroth_order"]["forward_passes"] == 3 and sd["zeroth_order"]["steps"] == 1
    other = pz.PaZO(model.parameters(), lr=0.01, seed=2)
    other.load_state_dict(sd)
    assert other.forward_passes == 3 and torch.equal(other._gen.get_state(), opt._gen.get_state())
    with pytest.raises(ValueError, match="zeroth_order"):
        other.load_state_dict({k: v for k, v in sd.items() if k != "zeroth_order"})
    with pytest.raises(ValueError, match="momentum must be 0"):
        pz.HiZOO([{"params": list(model.parameters()), "momentum": 0.9}])
    with pytest.raises(ValueError, match="betas"):
        pz.ZOAdam(model.parameters(), betas=(0.9,))


def test_torch_optimizers_reject_bad_input_and_nonfinite_loss():
    model, closure = _tiny_model()
    for kwargs, match in [(dict(lr=0.0), "lr"), (dict(eps=-1.0), "eps"), (dict(beta=1.0), "beta"),
                          (dict(D0=0.0), "D0"), (dict(momentum=1.5), "momentum"), (dict(seed=-1), "seed")]:
        with pytest.raises(ValueError, match=match):
            pz.PaZO(model.parameters(), **kwargs)
    opt = pz.MeZO(model.parameters(), lr=0.1, seed=0)
    with pytest.raises(ValueError, match="closure"):
        opt.step(None)
    before = _flat(model).clone()
    with pytest.raises(ValueError, match="non-finite loss"):
        opt.step(lambda: torch.tensor(float("nan")))
    assert torch.equal(_flat(model), before)
