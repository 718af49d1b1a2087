"""FedAda², FedAda²++ and their baselines: client and server optimizers, reductions, SM3."""
import math

import pytest
import torch

from optbook.distributed import fedada2_chapter as ch
from optbook.distributed.fedada2 import (
    METHODS,
    LocalAdaGrad,
    LocalAdam,
    LocalSGD,
    SM3,
    LocalSM3,
    ServerAdaGrad,
    ServerAdam,
    ServerAvg,
    client_state_floats,
    floats_per_round,
    make_method,
    sm3_accumulate,
)
from optbook.distributed.federated import DTYPE, make_federated_softmax, run_federated


def small(seed=0):
    return make_federated_softmax(num_clients=6, samples=12, features=4, classes=3, seed=seed)


RUN = dict(rounds=4, clients_per_round=3, local_steps=4, batch_size=4, seed=2)


def _grads(B=3, d=6, steps=5, seed=0):
    g = torch.Generator().manual_seed(seed)
    return [torch.randn(B, d, dtype=DTYPE, generator=g) * torch.logspace(0, -2, d, dtype=DTYPE) for _ in range(steps)]


def test_zero_init_adagrad_first_step_is_lr_per_coordinate():
    opt = LocalAdaGrad(lr=0.05, eps=1e-12)
    state = opt.init_state(3, [(6,)], {})
    g = _grads(steps=1)[0]
    y = opt.step(torch.zeros(3, 6, dtype=DTYPE), g, state, 0)
    torch.testing.assert_close(y, -0.05 * torch.sign(g))  # whatever the gradient's scale


def test_adagrad_accumulates_squares_and_delay_skips_updates():
    gs = _grads()
    for delay, updated in ((1, range(5)), (5, [0]), (2, [0, 2, 4])):
        opt = LocalAdaGrad(lr=0.1, delay=delay)
        state = opt.init_state(3, [(6,)], {})
        y = torch.zeros(3, 6, dtype=DTYPE)
        for k, g in enumerate(gs):
            y = opt.step(y, g, state, k)
        torch.testing.assert_close(state["v"], sum(gs[k] ** 2 for k in updated))


def test_fedada2_clients_start_from_zero_and_only_joint_reads_the_server():
    big = {"v": torch.full((6,), 1e6, dtype=DTYPE)}
    assert torch.count_nonzero(LocalAdaGrad().init_state(2, [(6,)], big)["v"]) == 0
    joint = LocalAdaGrad(init="server")
    torch.testing.assert_close(joint.init_state(2, [(6,)], big)["v"], big["v"].expand(2, 6))
    readers = [m for m in METHODS if make_method(m, 0.01, 0.1)[0].receives]
    assert readers == ["joint (ships v)"]


def test_fedada2_with_huge_eps_is_fedadam_with_rescaled_client_lr():
    p, eps = small(), 1e6
    a = run_federated(p, LocalAdaGrad(lr=0.1 * eps, eps=eps), ServerAdam(0.1), **RUN)
    b = run_federated(p, LocalSGD(0.1), ServerAdam(0.1), **RUN)
    torch.testing.assert_close(a.iterates, b.iterates, rtol=1e-4, atol=1e-6)


def test_server_adam_with_huge_eps_and_no_momentum_is_scaled_fedavg():
    p, eps = small(), 1e4
    a = run_federated(p, LocalSGD(0.3), ServerAdam(lr=2.0 * eps, beta1=0.0, eps=eps), **RUN)
    b = run_federated(p, LocalSGD(0.3), ServerAvg(2.0), **RUN)
    torch.testing.assert_close(a.iterates, b.iterates, rtol=1e-4, atol=1e-6)


def test_server_steps_by_hand():
    x, delta = torch.zeros(3, dtype=DTYPE), torch.tensor([1.0, -2.0, 0.5], dtype=DTYPE)
    adam = ServerAdam(lr=0.1, beta1=0.9, beta2=0.99, eps=1e-3)
    adam.init(3)
    m, v = 0.1 * delta, 0.01 * delta ** 2
    torch.testing.assert_close(adam.step(x, delta), 0.1 * m / (v.sqrt() + 1e-3))
    ada = ServerAdaGrad(lr=0.1, eps=1e-3)
    ada.init(3)
    torch.testing.assert_close(ada.step(x, delta), 0.1 * delta / (delta.abs() + 1e-3))


def test_local_adam_first_step_is_lr_times_sign():
    opt = LocalAdam(lr=0.01, eps=1e-12)
    state = opt.init_state(3, [(6,)], {})
    g = _grads(steps=1)[0]
    torch.testing.assert_close(opt.step(torch.zeros(3, 6, dtype=DTYPE), g, state, 0), -0.01 * torch.sign(g))


# --------------------------------------------------------------------------- SM3


def test_sm3_dominates_adagrad_at_every_step():
    gs = _grads(B=2, d=12, steps=8, seed=3)
    row, col = torch.zeros(2, 3), torch.zeros(2, 4)
    row, col = row.to(DTYPE), col.to(DTYPE)
    total = torch.zeros(2, 3, 4, dtype=DTYPE)
    for g in gs:
        g = g.reshape(2, 3, 4)
        nu = sm3_accumulate(g, row, col)
        total += g * g
        assert torch.all(nu >= total - 1e-15)
        torch.testing.assert_close(row, nu.amax(2))
        torch.testing.assert_close(col, nu.amax(1))


def test_sm3_on_vectors_is_adagrad_exactly():
    gs = _grads()
    a, b = LocalSM3(lr=0.1), LocalAdaGrad(lr=0.1)
    sa, sb = a.init_state(3, [(6,)], {}), b.init_state(3, [(6,)], {})
    ya = yb = torch.zeros(3, 6, dtype=DTYPE)
    for k, g in enumerate(gs):
        ya, yb = a.step(ya, g, sa, k), b.step(yb, g, sb, k)
    assert torch.equal(ya, yb)


def test_sm3_state_is_m_plus_n_and_run_ledger_counts_it():
    p = small()
    m, n = p.shapes[0]
    state = LocalSM3().init_state(2, p.shapes, {})
    assert sum(t.numel() for t in state.values()) == 2 * (m + n)
    res = run_federated(p, *make_method("FedAda2++", 0.01, 0.1), **RUN)
    assert res.ledger.client_state == [m + n] * RUN["rounds"]
    assert client_state_floats("FedAda2++", p.shapes) == m + n
    assert client_state_floats("FedAda2", p.shapes) == m * n
    assert client_state_floats("FedAvg", p.shapes) == 0
    assert LocalSM3(cover="scalar").init_state(1, p.shapes, {})["v0"].numel() == 1


def test_sm3_rejects_tensors_beyond_matrices():
    with pytest.raises(ValueError, match="shapes"):
        LocalSM3().init_state(1, [(2, 2, 2)], {})


def test_sm3_delay_one_is_undelayed():
    p = small()
    a = run_federated(p, LocalSM3(0.01), ServerAdam(0.1), **RUN)
    b = run_federated(p, LocalSM3(0.01, delay=1), ServerAdam(0.1), **RUN)
    c = run_federated(p, LocalSM3(0.01, delay=2), ServerAdam(0.1), **RUN)
    assert torch.equal(a.iterates, b.iterates) and not torch.equal(a.iterates, c.iterates)


def test_accounting_formulas():
    assert floats_per_round("FedAda2", 100, 5) == 1000
    assert floats_per_round("joint (ships v)", 100, 5) == 1500
    assert floats_per_round("FedAda2++", 100, 5) * 3 == floats_per_round("joint (ships v)", 100, 5) * 2


@pytest.mark.parametrize("call, name", [
    (lambda: make_method("FedProx", 0.1, 0.1), "method"),
    (lambda: make_method("FedAda2", -0.1, 0.1), "lr"),
    (lambda: LocalAdaGrad(init="random"), "init"),
    (lambda: LocalAdaGrad(delay=0), "delay"),
    (lambda: LocalSM3(cover="diag"), "cover"),
    (lambda: ServerAdam(beta2=1.0), "beta2"),
    (lambda: ServerAdam(eps=float("nan")), "eps"),
    (lambda: floats_per_round("FedAvg", 0), "dim"),
    (lambda: ch.heterogeneity_figure(0.7), "heterogeneity"),
    (lambda: ch.local_steps_figure(3), "local_steps"),
    (lambda: ch.run("FedAvg", 0.1, 1.0, 0, rounds=0), "rounds"),
])
def test_bad_input_names_the_argument(call, name):
    with pytest.raises(ValueError, match=name):
        call()


def test_state_table_has_the_papers_vit_ratio_order():
    rows = ch.state_table()
    assert rows[0]["SM3"] == 25 and rows[0]["AdaGrad"] == 100
    assert rows[1]["SM3"] / rows[1]["AdaGrad"] == pytest.approx((768 + 3072) / (768 * 3072))
    assert (768 + 3072) / (768 * 3072) < 0.005 + 1e-9 and math.isclose(rows[1]["SM3"], 3840)


# --------------------------------------------------------------------------- SM3 as a torch optimizer


def test_torch_sm3_equals_the_vectorised_client_sm3():
    gs = [g[:1].reshape(1, 2, 3) for g in _grads(B=1, d=6, steps=6, seed=4)]
    for delay in (1, 2):
        w = torch.nn.Parameter(torch.zeros(2, 3, dtype=DTYPE))
        opt = SM3([w], lr=0.05, eps=1e-6, delay=delay)
        client = LocalSM3(lr=0.05, eps=1e-6, delay=delay)
        state = client.init_state(1, [(2, 3)], {})
        y = torch.zeros(1, 6, dtype=DTYPE)
        for k, g in enumerate(gs):
            w.grad = g[0].clone()
            opt.step()
            y = client.step(y, g.reshape(1, 6), state, k)
        torch.testing.assert_close(w.detach().reshape(1, 6), y, rtol=1e-13, atol=1e-15)
        assert sum(t.numel() for k, t in opt.state[w].items() if k != "step") == 2 + 3


def test_torch_sm3_keeps_one_accumulator_per_axis_of_a_tensor():
    w = torch.nn.Parameter(torch.zeros(2, 3, 4, dtype=DTYPE))
    opt = SM3([w], lr=0.1)
    total = torch.zeros_like(w)
    g = torch.Generator().manual_seed(0)
    for _ in range(4):
        w.grad = torch.randn(2, 3, 4, dtype=DTYPE, generator=g)
        total += w.grad ** 2
        opt.step()
    accs = [opt.state[w][f"acc{j}"] for j in range(3)]
    nu = torch.minimum(torch.minimum(accs[0][:, None, None], accs[1][None, :, None]), accs[2][None, None, :])
    assert [a.numel() for a in accs] == [2, 3, 4] and torch.all(nu >= total - 1e-12)


def test_torch_sm3_refuses_bad_hyperparameters_by_name():
    w = torch.nn.Parameter(torch.zeros(2))
    for kw, name in (({"lr": -1.0}, "lr"), ({"eps": 0.0}, "eps"), ({"delay": 0}, "delay"), ({"cover": "rows"}, "cover")):
        with pytest.raises(ValueError, match=name):
            SM3([w], **kw)
