"""The federated engine: problems, sampling, the round, the ledger, and the gloo path."""
import numpy as np
import pytest
import torch

from optbook.distributed.fedada2 import LocalSGD, ServerAvg, make_method
from optbook.distributed.federated import (
    DTYPE,
    GlooTransport,
    Ledger,
    SoftmaxClients,
    make_federated_softmax,
    run_distributed,
    run_federated,
    sample_round,
)


def small(h=1.0, seed=0, **kw):
    opts = dict(num_clients=6, samples=12, features=4, classes=3, heterogeneity=h, seed=seed)
    opts.update(kw)
    return make_federated_softmax(**opts)


def test_gradient_matches_autograd():
    p = small()
    x = torch.randn(p.dim, dtype=DTYPE, generator=torch.Generator().manual_seed(1))
    n = p.samples_per_client
    G = p.grad(x.expand(p.num_clients, p.dim).contiguous(), torch.arange(p.num_clients),
               torch.arange(n).expand(p.num_clients, n))
    for i in range(p.num_clients):
        xi = x.clone().requires_grad_(True)
        p.client_losses(xi)[i].backward()
        torch.testing.assert_close(G[i], xi.grad, rtol=1e-10, atol=1e-12)


def test_loss_is_mean_of_client_losses_and_log_c_at_zero():
    p = small(l2=0.0)
    assert p.loss(torch.zeros(p.dim)) == pytest.approx(np.log(3))
    x = torch.randn(p.dim, dtype=DTYPE)
    assert p.loss(x) == pytest.approx(float(p.client_losses(x).mean()))


def test_heterogeneity_zero_gives_identically_scaled_clients():
    iid, het = small(h=0.0, samples=400), small(h=2.0, samples=400)
    spread = lambda p: float((p.X.std(1).log().std(0)).mean())  # how much clients' feature scales differ
    assert spread(iid) < 0.1 < 1.0 < spread(het)


def test_sample_round_is_deterministic_and_without_replacement():
    a = sample_round(3, 5, 20, 50, 5, 10, 8)
    b = sample_round(3, 5, 20, 50, 5, 10, 8)
    c = sample_round(3, 6, 20, 50, 5, 10, 8)
    assert all(torch.equal(u, v) for u, v in zip(a, b))
    assert not torch.equal(a[1], c[1])
    assert len(set(a[0].tolist())) == 5 and a[1].shape == (5, 10, 8) and int(a[1].max()) < 50


def test_fedavg_one_step_full_participation_full_batch_is_gradient_descent():
    # One sample per client makes every mini-batch the full client data set.
    p = small(samples=1, num_clients=5)
    lr, T = 0.4, 6
    res = run_federated(p, LocalSGD(lr), ServerAvg(1.0), rounds=T, clients_per_round=5, local_steps=1,
                        batch_size=1, seed=0)
    x = torch.zeros(p.dim, dtype=DTYPE)
    for t in range(T):
        xg = x.clone().requires_grad_(True)
        p.client_losses(xg).mean().backward()
        x = x - lr * xg.grad
        torch.testing.assert_close(res.iterates[t + 1], x, rtol=1e-12, atol=1e-14)


def test_same_seed_same_iterates_other_seed_differs():
    p = small()
    runs = [run_federated(p, *make_method("FedAda2", 0.01, 0.1), rounds=4, clients_per_round=3, local_steps=3,
                          batch_size=4, seed=s) for s in (1, 1, 2)]
    assert torch.equal(runs[0].iterates, runs[1].iterates)
    assert not torch.allclose(runs[0].iterates, runs[2].iterates)


@pytest.mark.parametrize("method, factor", [("FedAvg", 2), ("FedAda2", 2), ("FedAda2++", 2), ("joint (ships v)", 3)])
def test_ledger_counts_floats_exactly(method, factor):
    p, S, T = small(), 3, 4
    res = run_federated(p, *make_method(method, 0.01, 0.1), rounds=T, clients_per_round=S, local_steps=2,
                        batch_size=3, seed=0)
    L = res.ledger
    assert L.floats_up == [p.dim * S] * T
    assert L.floats_down == [(factor - 1) * p.dim * S] * T
    assert L.totals()["bytes"] == 8 * factor * p.dim * S * T
    assert res.trace["floats"][-1] == factor * p.dim * S * T


def test_bad_input_is_refused_by_name():
    p = small()
    c, s = make_method("FedAvg", 0.1, 1.0)
    with pytest.raises(ValueError, match="clients_per_round"):
        run_federated(p, c, s, clients_per_round=7)
    with pytest.raises(ValueError, match="rounds"):
        run_federated(p, c, s, rounds=0)
    with pytest.raises(ValueError, match="local_steps"):
        run_federated(p, c, s, local_steps=1.5)
    with pytest.raises(ValueError, match="x0"):
        run_federated(p, c, s, x0=torch.zeros(3))
    with pytest.raises(ValueError, match="x0"):
        run_federated(p, c, s, x0=torch.full((p.dim,), float("nan")))
    with pytest.raises(ValueError, match="problem"):
        run_federated("data", c, s)
    with pytest.raises(ValueError, match="client"):
        run_federated(p, s, s)
    with pytest.raises(ValueError, match="heterogeneity"):
        make_federated_softmax(heterogeneity=-1.0)
    with pytest.raises(ValueError, match="y must have shape"):
        SoftmaxClients(p.X, p.y[:, :3], 3)
    with pytest.raises(ValueError, match="process group"):
        GlooTransport()
    with pytest.raises(ValueError, match="pairs"):
        run_distributed(p, [])


def test_ledger_totals_of_an_empty_ledger():
    assert Ledger().totals() == {"floats_down": 0, "floats_up": 0, "floats": 0, "bytes": 0, "client_state": 0,
                                 "server_state": 0}


def test_gloo_path_gives_the_same_iterates_and_counts_the_wire():
    """Three processes (server + 2 clients) over torch.distributed with gloo on localhost, against
    the in-process run with the same seed; both methods share one spawn."""
    p = small()
    kw = dict(rounds=3, clients_per_round=2, local_steps=3, batch_size=4, seed=5)
    names = ("FedAda2", "joint (ships v)")
    wire = run_distributed(p, [(m, *make_method(m, 0.01, 0.1)) for m in names], **kw)
    for m, res in zip(names, wire):
        local = run_federated(p, *make_method(m, 0.01, 0.1), **kw)
        torch.testing.assert_close(res.iterates, local.iterates, rtol=0, atol=1e-12)
        assert res.ledger.floats_down == local.ledger.floats_down
        assert res.ledger.floats_up == local.ledger.floats_up
        assert res.ledger.client_state == local.ledger.client_state == [p.dim] * 3
    ours, joint = (r.ledger.totals()["floats"] for r in wire)
    assert 3 * ours == 2 * joint == 3 * 2 * p.dim * 2 * 3
