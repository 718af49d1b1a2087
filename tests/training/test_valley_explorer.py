"""Tests of chapter 19 (the E adaptor, EAdam, ESGD, Lamb, ALTO) and its landscapes."""
import copy

import numpy as np
import pytest
import torch

from optbook.core import Rosenbrock, fd_gradient
from optbook.training import valley_explorer as ve


def _grads(T=40, d=5, seed=0):
    return np.random.default_rng(seed).standard_normal((T, d))


# ----------------------------------------------------------------- the adaptor's algebra


def test_identity_with_ema_of_past_gradients():
    """a_k = (1 - beta1)(g_k - gbar_{k-1}), gbar the plain EMA of g_1..g_{k-1} (g_0 = 0)."""
    G, beta1 = _grads(), 0.9
    _, A = ve.e_sequence(G, -3.0, beta1)
    gbar = np.zeros(G.shape[1])
    for k, g in enumerate(G):
        np.testing.assert_allclose(A[k], (1 - beta1) * (g - gbar), atol=1e-12)
        gbar = beta1 * gbar + (1 - beta1) * g


def test_decomposition_weights_reproduce_g_tilde():
    G, alpha, beta1 = _grads(seed=1), -40.0, 0.99
    Gt, _ = ve.e_sequence(G, alpha, beta1)
    c_now, c_old = ve.decomposition(alpha, beta1)
    gbar = np.zeros(G.shape[1])
    for k, g in enumerate(G):
        np.testing.assert_allclose(Gt[k], c_now * g + c_old * gbar / (1 - beta1) * (1 - beta1), atol=1e-10)
        gbar = beta1 * gbar + (1 - beta1) * g


def test_first_step_and_constant_gradient():
    g = np.array([1.5, -2.0])
    G = np.tile(g, (30, 1))
    Gt, A = ve.e_sequence(G, -50.0, 0.99)
    np.testing.assert_allclose(Gt[0], (1 - 50 * 0.01) * g, atol=1e-14)
    k = np.arange(1, 31)[:, None]
    np.testing.assert_allclose(A, 0.01 * 0.99 ** (k - 1) * g, atol=1e-14)
    _, A1 = ve.e_sequence(G, -50.0, 0.99, init="first")
    np.testing.assert_allclose(A1, 0.0, atol=0)  # E.py's scalar special case: no first jump


def test_alpha_bound_is_enforced():
    ve.check_alpha_beta1(-99.9, 0.99)
    for alpha, beta1 in ((-100.0, 0.99), (10.0, 0.9), (np.nan, 0.5)):
        with pytest.raises(ValueError, match="alpha"):
            ve.check_alpha_beta1(alpha, beta1)
    with pytest.raises(ValueError, match="beta1"):
        ve.check_alpha_beta1(0.0, 1.0)
    p = torch.nn.Parameter(torch.zeros(2))
    with pytest.raises(ValueError, match="alpha"):
        ve.EAdam([p], alpha=-100.0, beta1=0.99)


def test_esgd_converges_inside_the_bound_on_a_quadratic():
    """f = x^2/2: inside |alpha| < 1/(1-beta1) ESGD with a small lr converges; just outside,
    the weight on g_k is negative (the adaptor refuses it)."""
    for alpha in (-9.0, -5.0, 0.0, 5.0, 9.0):
        r = ve.valley_run(lambda x: 0.5 * x[:, 0] ** 2, [1.0], lambda x: x.copy(), base="sgd",
                          alpha=alpha, beta1=0.9, lr=0.01, beta2=0.5, maxiter=3000)
        assert abs(r.x[0]) < 1e-6, (alpha, r.x)
    assert ve.decomposition(-9.99, 0.9)[0] > 0
    with pytest.raises(ValueError):
        ve.decomposition(-10.0, 0.9)


# ----------------------------------------------------------------- torch vs numpy


def _run_torch(opt_factory, G, x0):
    p = torch.nn.Parameter(torch.tensor(x0, dtype=torch.float64))
    opt = opt_factory([p])
    out = []
    for g in G:
        p.grad = torch.tensor(g, dtype=torch.float64)
        opt.step()
        out.append(p.detach().numpy().copy())
        np.testing.assert_array_equal(p.grad.numpy(), g)  # raw gradient put back
    return np.array(out)


def _run_numpy(stepper, G, x0):
    x, out = np.array(x0, dtype=float)[None, :], []
    for g in G:
        x = stepper.step(x, g[None, :])
        out.append(x[0])
    return np.array(out)


@pytest.mark.parametrize("base", ["sgd", "adam", "lamb"])
def test_numpy_reference_matches_torch_over_50_steps(base):
    G, x0 = _grads(50, 6, 3), np.random.default_rng(4).standard_normal(6)
    alpha, beta1, lr = -7.0, 0.9, 0.01
    if base == "sgd":
        fac = lambda ps: ve.ESGD(ps, lr=lr, alpha=alpha, beta1=beta1, beta2=0.9)  # noqa: E731
        st = ve.ValleyStepper("sgd", alpha, beta1, lr, beta2=0.9)
    elif base == "adam":
        fac = lambda ps: ve.EAdam(ps, lr=lr, alpha=alpha, beta1=beta1, betas=(0.9, 0.99), eps=1e-6)  # noqa: E731
        st = ve.ValleyStepper("adam", alpha, beta1, lr, beta2=0.9, beta3=0.99, eps=1e-6)
    else:
        fac = lambda ps: ve.ALTO(ps, lr=lr, alpha=alpha, beta1=beta1)  # noqa: E731
        st = ve.ValleyStepper("lamb", alpha, beta1, lr, beta2=0.9, beta3=0.99, eps=1e-6, weight_decay=1e-4)
    np.testing.assert_allclose(_run_torch(fac, G, x0), _run_numpy(st, G, x0), rtol=1e-11, atol=1e-12)


def test_alpha_zero_is_the_base_optimizer_bit_for_bit():
    G, x0 = _grads(30, 4, 5), np.ones(4)
    pairs = [
        (lambda ps: ve.EAdam(ps, lr=0.01, alpha=0.0, betas=(0.9, 0.99), eps=1e-6),
         lambda ps: torch.optim.Adam(ps, lr=0.01, betas=(0.9, 0.99), eps=1e-6)),
        (lambda ps: ve.ESGD(ps, lr=0.01, alpha=0.0, beta2=0.9),
         lambda ps: torch.optim.SGD(ps, lr=0.01, momentum=0.9)),
        (lambda ps: ve.ALTO(ps, lr=0.01, alpha=0.0), lambda ps: ve.Lamb(ps, lr=0.01)),
    ]
    for e_fac, base_fac in pairs:
        np.testing.assert_array_equal(_run_torch(e_fac, G, x0), _run_torch(base_fac, G, x0))


def test_lamb_trust_ratio_moves_each_layer_by_lr_times_its_norm():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(5, 7), torch.nn.Tanh(), torch.nn.Linear(7, 2))
    opt = ve.Lamb(model.parameters(), lr=0.01, trust_eps=0.0, phi_eps=0.0, weight_decay=0.0)
    before = [p.detach().clone() for p in model.parameters()]
    model(torch.randn(9, 5)).pow(2).sum().backward()
    opt.step()
    for b, p in zip(before, model.parameters()):
        assert torch.isclose(torch.linalg.vector_norm(p.detach() - b), 0.01 * torch.linalg.vector_norm(b),
                             rtol=1e-5)


def test_bias_correction_does_not_touch_a():
    """With and without bias correction the stored a is the same; only the step differs."""
    G = _grads(10, 3, 6)
    states = []
    for bc in (True, False):
        p = torch.nn.Parameter(torch.ones(3, dtype=torch.float64))
        opt = ve.ALTO([p], lr=0.01, alpha=-5.0, bias_correction=bc)
        for g in G:
            p.grad = torch.tensor(g)
            opt.step()
        states.append((opt.state[p]["grad_diff_avg"].clone(), p.detach().clone()))
    assert torch.equal(states[0][0], states[1][0])
    assert not torch.equal(states[0][1], states[1][1])


def test_state_dict_round_trip_and_shared_groups():
    torch.manual_seed(1)
    w = torch.nn.Parameter(torch.randn(4))
    opt = ve.ALTO([w], lr=0.01)
    for _ in range(3):
        opt.zero_grad()
        (w ** 2).sum().backward()
        opt.step()
    opt.param_groups[0]["lr"] = 0.02
    assert opt.base.param_groups[0]["lr"] == 0.02  # schedulers act on the base too
    sd = copy.deepcopy(opt.state_dict())  # torch shares state tensors with a loaded copy
    w2 = torch.nn.Parameter(w.detach().clone())
    opt2 = ve.ALTO([w2], lr=0.01)
    opt2.load_state_dict(sd)
    for o, p in ((opt, w), (opt2, w2)):
        o.zero_grad()
        (p ** 2).sum().backward()
        o.step()
    assert torch.equal(w, w2)


def test_code_options_clip_and_trust():
    p = torch.nn.Parameter(torch.ones(3))
    opt = ve.ALTO([p], lr=0.1, alpha=0.0, max_grad_norm=1.0, trust="code", weight_decay=0.0)
    p.grad = torch.full((3,), 100.0)
    opt.step()
    assert torch.allclose(p.grad.norm(), torch.tensor(1.0))  # raw gradient, clipped
    # trust="code" without decay: no trust ratio, a plain Adam-direction step of lr per entry
    assert torch.allclose(p.detach(), torch.full((3,), 0.9), atol=1e-4)


def test_lamb_moves_a_zero_initialised_tensor():
    """Ratio 1 where |theta| = 0 (standard LAMB): the first step of a zero bias is the plain Adam
    step lr * r, and after 200 steps it has moved; the paper's phi(0) = 1e-10 would freeze it."""
    torch.manual_seed(0)
    lin = torch.nn.Linear(3, 2).double()
    with torch.no_grad():
        lin.bias.zero_()
    X, y = torch.randn(32, 3, dtype=torch.float64), torch.randn(32, 2, dtype=torch.float64)
    for make in (lambda ps: ve.Lamb(ps, lr=0.01), lambda ps: ve.Lamb(ps, lr=0.01, trust="code"),
                 lambda ps: ve.ALTO(ps, lr=0.01)):
        model = copy.deepcopy(lin)
        opt = make(model.parameters())
        torch.nn.functional.mse_loss(model(X), y).backward()
        g = model.bias.grad.clone()
        opt.step()
        r = g / (g.abs() + 1e-6)  # bias-corrected Adam direction after one step: m^ = g, v^ = g^2
        if isinstance(opt, ve.ALTO):
            r = (1 - 5.0 * 0.01) * g / ((1 - 5.0 * 0.01) * g.abs() + 1e-6)
        torch.testing.assert_close(model.bias.detach(), -0.01 * r, rtol=1e-9, atol=1e-12)
        for _ in range(199):
            opt.zero_grad()
            torch.nn.functional.mse_loss(model(X), y).backward()
            opt.step()
        assert model.bias.detach().abs().max() > 1e-2


def test_numpy_lamb_moves_a_zero_row_like_torch():
    st = ve.ValleyStepper("lamb", 0.0, 0.99, 0.01, beta2=0.9, beta3=0.99, eps=1e-6, weight_decay=1e-4)
    x = st.step(np.zeros((1, 3)), np.array([[1.0, -2.0, 0.5]]))
    np.testing.assert_allclose(x, -0.01 * np.sign([[1.0, -2.0, 0.5]]), rtol=1e-5)


@pytest.mark.parametrize("make", [
    lambda groups: ve.EAdam(groups, lr=0.01), lambda groups: ve.ESGD(groups, lr=0.01),
    lambda groups: ve.ALTO(groups, lr=0.01), lambda groups: ve.Lamb(groups, lr=0.01)])
def test_every_hyperparameter_is_validated_per_group(make):
    a, b = torch.nn.Parameter(torch.zeros(2)), torch.nn.Parameter(torch.zeros(2))
    with pytest.raises(ValueError, match="lr"):
        make([{"params": [a]}, {"params": [b], "lr": -1.0}])
    opt = make([{"params": [a]}])
    with pytest.raises(ValueError, match="lr"):
        opt.add_param_group({"params": [b], "lr": float("nan")})
    if not isinstance(opt, ve.ESGD):
        with pytest.raises(ValueError, match="betas"):
            opt.add_param_group({"params": [b], "betas": (0.9, 1.5)})
    if isinstance(opt, ve.E):
        with pytest.raises(ValueError, match="alpha"):
            opt.add_param_group({"params": [b], "alpha": -200.0, "beta1": 0.99})


def test_a_group_added_later_reaches_the_base_and_steps():
    a, b = torch.nn.Parameter(torch.ones(2)), torch.nn.Parameter(torch.ones(2))
    opt = ve.ALTO([a], lr=0.01)
    opt.add_param_group({"params": [b], "lr": 0.05, "alpha": 0.0})
    assert opt.base.param_groups is opt.param_groups and opt.param_groups[1]["trust"] == "paper"
    a.grad, b.grad = torch.ones(2), torch.ones(2)
    opt.step()
    assert not torch.equal(b.detach(), torch.ones(2))
    ref = torch.nn.Parameter(torch.ones(2))
    lamb = ve.Lamb([ref], lr=0.05)
    ref.grad = torch.ones(2)
    lamb.step()
    assert torch.equal(b.detach(), ref.detach())  # alpha = 0 in its group: Lamb at that group's lr


def test_stepper_rows_may_carry_their_own_momentum():
    G = _grads(40, 1, 8)
    both = ve.ValleyStepper("adam", np.array([-5.0, 0.0]), 0.9, 0.01, beta2=np.array([0.9, 0.99]))
    x = np.zeros((2, 1))
    singles = [ve.ValleyStepper("adam", -5.0, 0.9, 0.01, beta2=0.9), ve.ValleyStepper("adam", 0.0, 0.9, 0.01, beta2=0.99)]
    xs = [np.zeros((1, 1)), np.zeros((1, 1))]
    for g in G:
        x = both.step(x, np.vstack([g, g]))
        xs = [st.step(xi, g[None, :]) for st, xi in zip(singles, xs)]
    np.testing.assert_allclose(x, np.vstack(xs), rtol=1e-14, atol=0)
    with pytest.raises(ValueError, match="beta2"):
        ve.ValleyStepper(beta2=np.array([0.9, 1.0]))


# ----------------------------------------------------------------- landscapes and runs


def test_leaving_the_domain_stops_the_run():
    r = ve.valley_run(ve.ripple, [0.3], ve.ripple_grad, lr=1.0, maxiter=50, domain=lambda x: x[:, 0] < 2.0)
    assert not r.success and "domain" in r.message and len(r.trace) == r.nit + 1




def test_landscape_gradients_match_finite_differences():
    rng = np.random.default_rng(7)
    for fun, jac, pts in ((ve.ripple, ve.ripple_grad, rng.uniform(0.5, 10, (5, 1))),
                          (ve.rosenbrock2, ve.rosenbrock2_grad, rng.uniform(-2, 2, (5, 2))),
                          (ve.cardioid, ve.cardioid_grad, rng.uniform(-2, 1, (5, 2)))):
        for x in pts:
            fd = fd_gradient(lambda z: float(fun(z[None, :])[0]), x)
            np.testing.assert_allclose(jac(x[None, :])[0], fd, rtol=1e-5, atol=1e-6)
    x = rng.uniform(-2, 2, 2)
    assert np.isclose(ve.rosenbrock2(x[None, :])[0], Rosenbrock().fun(x))


def test_cardioid_is_zero_on_the_cardioid():
    th = np.linspace(0, 2 * np.pi, 50)
    r = 1 - np.cos(th)
    np.testing.assert_allclose(ve.cardioid(np.column_stack([r * np.cos(th), r * np.sin(th)])), 0, atol=1e-12)


# ----------------------------------------------------------------- bad input


def test_bad_inputs_raise_value_errors():
    p = torch.nn.Parameter(torch.zeros(2))
    with pytest.raises(ValueError, match="lr"):
        ve.Lamb([p], lr=0.0)
    with pytest.raises(ValueError, match="betas"):
        ve.Lamb([p], betas=(0.9,))
    with pytest.raises(ValueError, match="trust"):
        ve.Lamb([p], trust="other")
    with pytest.raises(ValueError, match="base"):
        ve.E("not an optimizer")
    with pytest.raises(ValueError, match="max_grad_norm"):
        ve.ALTO([p], max_grad_norm=-1.0)
    with pytest.raises(ValueError, match="init"):
        ve.EAdam([p], init="random")
    with pytest.raises(ValueError, match="grads"):
        ve.e_sequence(np.array([[1.0, np.inf]]), 0.0, 0.5)
    with pytest.raises(ValueError, match="x0"):
        ve.valley_run(ve.ripple, [np.nan], ve.ripple_grad)
    with pytest.raises(ValueError, match="maxiter"):
        ve.valley_run(ve.ripple, [2.3], ve.ripple_grad, maxiter=0)
    with pytest.raises(ValueError, match="base"):
        ve.ValleyStepper(base="rmsprop")
    with pytest.raises(ValueError, match="beta2"):
        ve.ValleyStepper(beta2=1.0)
    with pytest.raises(ValueError, match="x must have"):
        ve.cardioid(np.ones((3, 3)))

