"""Tests of chapter 18 (Momentum-SAM): the torch optimizers, the sharpness estimator, the
vectorized experiment engines against the optimizers, and bad input."""
import numpy as np
import pytest
import torch

from optbook.training import momentum_sam as ms


def _net(seed=0):
    return ms._torch_mlp(seed)


def _batches(n_steps, seed=0):
    X, y, _, _ = ms.moons_data()
    gen = np.random.default_rng(seed)
    return [(torch.tensor(X[i]), torch.tensor(y[i])) for i in (gen.choice(len(y), 32, replace=False)
                                                              for _ in range(n_steps))]


def _train(net, opt, batches):
    lossf = torch.nn.BCEWithLogitsLoss()
    out = []
    for xb, yb in batches:
        def closure():
            opt.zero_grad()
            loss = lossf(net(xb).squeeze(-1), yb)
            loss.backward()
            return loss
        opt.step(closure)
        out.append(torch.cat([p.detach().flatten() for p in net.parameters()]).clone())
    return torch.stack(out)


def test_msam_rho_zero_is_sgd_momentum_bit_for_bit():
    batches = _batches(15)
    a, b = _net(), _net()
    wa = _train(a, ms.MSAM(a.parameters(), lr=0.1, momentum=0.9, rho=0.0), batches)
    wb = _train(b, torch.optim.SGD(b.parameters(), lr=0.1, momentum=0.9), batches)
    assert torch.equal(wa, wb)


def test_msam_first_step_equals_sgd_momentum():
    batches = _batches(2)
    a, b = _net(), _net()
    wa = _train(a, ms.MSAM(a.parameters(), lr=0.1, momentum=0.9, rho=3.0), batches)
    wb = _train(b, torch.optim.SGD(b.parameters(), lr=0.1, momentum=0.9), batches)
    assert torch.equal(wa[0], wb[0]) and not torch.allclose(wa[1], wb[1])


def test_msam_perturbation_has_global_norm_rho_and_round_trips():
    net = _net()
    opt = ms.MSAM(net.parameters(), lr=0.1, momentum=0.9, rho=0.7)
    _train(net, opt, _batches(3))
    eps = opt.perturbation()
    assert list(eps) == list(net.parameters())
    total = torch.sqrt(sum((e ** 2).sum() for e in eps.values()))
    assert abs(float(total) - 0.7) < 1e-9
    per_tensor = [float(e.norm()) for e in eps.values()]
    assert max(per_tensor) < 0.7 - 1e-3  # the norm is joint, not per tensor
    # eps = -rho v/|v| along the momentum (sign: descent direction of the momentum)
    bufs = [opt.state[p]["momentum_buffer"] for p in net.parameters()]
    assert sum(float((e * b).sum()) for e, b in zip(eps.values(), bufs)) < 0
    w = [p.detach().clone() for p in net.parameters()]
    opt._move(eps)
    w_tilde = [p.detach().clone() for p in net.parameters()]
    back = [wt - e for wt, e in zip(w_tilde, eps.values())]  # the official code's "move back" by arithmetic
    assert max(float((a - b).abs().max()) for a, b in zip(back, w)) < 1e-12
    opt.move_back()
    assert all(torch.equal(p, q) for p, q in zip(net.parameters(), w))


def test_msam_with_nag_radius_reproduces_nesterov():
    """rho_t = lr mu |v_t| makes MSAM's evaluation point the NAG look-ahead w - lr mu v, and the
    look-ahead points are the iterates of torch's nesterov=True."""
    batches = _batches(12)
    a, b = _net(), _net()
    lr, mu = 0.1, 0.9
    opt = ms.MSAM(a.parameters(), lr=lr, momentum=mu, rho=0.0)
    lossf = torch.nn.BCEWithLogitsLoss()
    look = []
    for xb, yb in batches:
        bufs = [opt.state[p].get("momentum_buffer") for p in a.parameters()]
        if bufs[0] is not None:
            opt.param_groups[0]["rho"] = lr * mu * float(ms._global_norm(bufs))

        def closure():
            opt.zero_grad()
            loss = lossf(a(xb).squeeze(-1), yb)
            loss.backward()
            return loss
        opt.step(closure)
        v = [opt.state[p]["momentum_buffer"] for p in a.parameters()]
        look.append(torch.cat([(p.detach() - lr * mu * b_).flatten() for p, b_ in zip(a.parameters(), v)]))
    wb = _train(b, torch.optim.SGD(b.parameters(), lr=lr, momentum=mu, nesterov=True), batches)
    assert torch.allclose(torch.stack(look), wb, atol=1e-12, rtol=0)


def test_sam_two_calls_msam_one_and_sam_step_is_ascent():
    batches = _batches(5)
    for cls, calls in ((ms.SAM, 2), (ms.MSAM, 1)):
        net = _net()
        opt = cls(net.parameters(), lr=0.1, momentum=0.9, rho=0.05)
        _train(net, opt, batches)
        assert opt.grad_calls == calls * len(batches)
    # L(w + eps) >= L(w) - O(rho^2) for SAM's eps = rho g/|g|
    net = _net()
    xb, yb = batches[0]
    lossf = torch.nn.BCEWithLogitsLoss()
    loss = lossf(net(xb).squeeze(-1), yb)
    grads = torch.autograd.grad(loss, list(net.parameters()))
    gn = float(ms._global_norm(grads))
    for rho in (1e-3, 1e-2):
        with torch.no_grad():
            for p, g in zip(net.parameters(), grads):
                p.add_(rho * g / gn)
            up = float(lossf(net(xb).squeeze(-1), yb))
            for p, g in zip(net.parameters(), grads):
                p.sub_(rho * g / gn)
        assert up >= float(loss.detach()) + 0.5 * rho * gn  # first order: + rho |g|


def test_adamw_msam_rho_zero_is_adamw():
    batches = _batches(10)
    a, b = _net(), _net()
    wa = _train(a, ms.AdamWMSAM(a.parameters(), lr=1e-2, weight_decay=1e-2, rho=0.0), batches)
    wb = _train(b, torch.optim.AdamW(b.parameters(), lr=1e-2, weight_decay=1e-2), batches)
    assert torch.allclose(wa, wb, atol=1e-12, rtol=0)
    c = _net()
    wc = _train(c, ms.AdamWMSAM(c.parameters(), lr=1e-2, rho=1.0), batches)
    assert torch.allclose(wc[0], wb[0], atol=1e-12, rtol=0) and not torch.allclose(wc[-1], wb[-1])


def test_hessian_top_eigenvalue_matches_eigvalsh():
    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Linear(2, 4), torch.nn.Tanh(), torch.nn.Linear(4, 1)).double()
    X, y, _, _ = ms.moons_data()
    Xt, yt = torch.tensor(X[:50]), torch.tensor(y[:50])
    params = list(net.parameters())
    shapes = [p.shape for p in params]
    flat0 = torch.cat([p.detach().flatten() for p in params])

    def loss_of(flat):
        out, k = [], 0
        for s in shapes:
            n = int(np.prod(s))
            out.append(flat[k:k + n].reshape(s))
            k += n
        h = torch.tanh(Xt @ out[0].T + out[1])
        z = (h @ out[2].T + out[3]).squeeze(-1)
        return torch.nn.functional.binary_cross_entropy_with_logits(z, yt)

    H = torch.autograd.functional.hessian(loss_of, flat0).numpy()
    ev = np.linalg.eigvalsh(H)
    top = ev[np.argmax(np.abs(ev))]
    lossf = torch.nn.BCEWithLogitsLoss()
    lam = ms.hessian_top_eigenvalue(lambda: lossf(net(Xt).squeeze(-1), yt), params, maxiter=2000, tol=1e-10)
    assert abs(lam - top) <= 0.01 * abs(top)


def test_batched_lambda_max_matches_exact_hessian():
    P = {k: np.stack([ms.init_mlp(s, hidden=5)[k] for s in (0, 1)]) for k in ms._KEYS}
    X, y, _, _ = ms.moons_data()
    X, y = X[:60], y[:60]
    lam = ms.batched_lambda_max(P, X, y, maxiter=3000, tol=1e-10)
    for k in range(2):
        flat0 = torch.tensor(np.concatenate([P[key][k].ravel() for key in ms._KEYS]))

        def loss_of(flat):
            W1, b1, W2, b2 = flat[:10].reshape(2, 5), flat[10:15], flat[15:20], flat[20]
            z = torch.tanh(torch.tensor(X) @ W1 + b1) @ W2 + b2
            return torch.nn.functional.binary_cross_entropy_with_logits(z, torch.tensor(y))

        ev = np.linalg.eigvalsh(torch.autograd.functional.hessian(loss_of, flat0).numpy())
        assert abs(lam[k] - ev[np.argmax(np.abs(ev))]) <= 0.01 * abs(ev).max()


def test_backprop_gradient_matches_torch():
    P = {k: np.stack([ms.init_mlp(s)[k] for s in (0, 3)]) for k in ms._KEYS}
    X, y, _, _ = ms.moons_data()
    loss, G = ms._loss_grad(P, np.broadcast_to(X[:40], (2, 40, 2)), np.broadcast_to(y[:40], (2, 40)))
    net = ms._torch_mlp(3)
    lt = torch.nn.BCEWithLogitsLoss()(net(torch.tensor(X[:40])).squeeze(-1), torch.tensor(y[:40]))
    lt.backward()
    assert abs(loss[1] - float(lt.detach())) < 1e-12
    assert np.allclose(G["W1"][1], net[0].weight.grad.numpy().T, atol=1e-12)
    assert np.allclose(G["W2"][1], net[2].weight.grad.numpy()[0], atol=1e-12)


def test_vectorized_engine_matches_torch_optimizers():
    """train_moons (numpy, K networks at once) follows the torch optimizers step for step."""
    specs = [ms.Spec("SGD-M", 0.0, 0), ms.Spec("NAG", 0.0, 1), ms.Spec("SAM", 0.2, 2), ms.Spec("MSAM", 1.0, 0)]
    run = ms.train_moons(specs, epochs=2)
    X, y, _, _ = ms.moons_data()
    lossf = torch.nn.BCEWithLogitsLoss()
    for k, s in enumerate(specs):
        net = ms._torch_mlp(s.seed)
        opt = ms.make_optimizer(s.method, net.parameters(), lr=0.1, momentum=0.9, rho=s.rho)
        gen = np.random.default_rng([s.seed, 1])
        for _ in range(2):
            perm = gen.permutation(len(y))
            for start in range(0, len(y), 32):
                idx = perm[start:start + 32]
                xb, yb = torch.tensor(X[idx]), torch.tensor(y[idx])

                def closure():
                    opt.zero_grad()
                    loss = lossf(net(xb).squeeze(-1), yb)
                    loss.backward()
                    return loss
                opt.step(closure)
        assert np.allclose(run.params["W1"][k], net[0].weight.detach().numpy().T, atol=1e-10)
        assert np.allclose(run.params["b2"][k], float(net[2].bias.detach()), atol=1e-10)
    assert list(run.grad_calls) == [20, 20, 40, 20]


def test_train_moons_is_deterministic_and_monitors():
    specs = [ms.Spec("SGD-M", 0.0, 5), ms.Spec("MSAM", 0.5, 5), ms.Spec("MSAM-flip", 0.5, 5)]
    a, b = ms.train_moons(specs, epochs=3), ms.train_moons(specs, epochs=3)
    assert np.array_equal(a.lambda_max, b.lambda_max) and np.array_equal(a.test_acc, b.test_acc)
    assert np.array_equal(a.val_loss, b.val_loss) and np.all((a.val_acc > 0.5) & (a.val_acc < 1))
    assert a.cos.shape == (30, 3) and np.isnan(a.cos[0]).all() and np.isnan(a.rise_flip[0]).all()
    assert np.nanmax(np.abs(a.cos)) <= 1.0 + 1e-12
    assert len(a.traces[0]) == 4 and a.traces[1].method == "MSAM (rho = 0.5)"
    # the control differs from MSAM only by the sign of the offset: not the same run
    assert not np.allclose(a.params["W1"][1], a.params["W1"][2])


def test_toy_numpy_paths_match_torch_optimizers():
    for args in [(0.05, 0.9, 0.3), (0.1, 0.5, 0.8), (0.02, 0.8, 0.0)]:
        a, b = ms.toy_paths(*args, steps=40), ms.toy_paths_torch(*args, steps=40)
        for name in ms.METHODS:
            assert np.allclose(a[name], b[name], atol=1e-10), name


def test_toy_gradient_matches_autograd_and_story():
    w = torch.tensor([0.3, -0.2], dtype=torch.float64, requires_grad=True)
    ms.toy_loss(w).backward()
    assert np.allclose(ms.toy_grad(w.detach().numpy()), w.grad.numpy(), atol=1e-12)
    paths = ms.toy_paths(0.05, 0.9, 0.3)
    sharp, wide = np.array(ms.TOY_SHARP[0]), np.array(ms.TOY_WIDE[0])
    assert np.linalg.norm(paths["SGD-M"][-1] - sharp) < 0.3
    assert np.linalg.norm(paths["MSAM"][-1] - wide) < 0.6


def test_two_moons_shapes_and_flips():
    X, y = ms.two_moons(1000, noise=0.0, flip=0.0, rng=0)
    assert X.shape == (1000, 2) and set(np.unique(y)) == {0.0, 1.0}
    _, y2 = ms.two_moons(1000, noise=0.0, flip=0.2, rng=0)
    assert 0.1 < np.mean(y != y2) < 0.3


@pytest.mark.parametrize("kwargs, match", [
    (dict(lr=0.0), "lr"), (dict(lr=float("nan")), "lr"), (dict(momentum=1.0), "momentum"),
    (dict(rho=-1.0), "rho"), (dict(weight_decay=-0.1), "weight_decay")])
def test_bad_hyperparameters(kwargs, match):
    for cls in (ms.MSAM, ms.SAM):
        with pytest.raises(ValueError, match=match):
            cls(_net().parameters(), **kwargs)


def test_bad_input_elsewhere():
    net = _net()
    with pytest.raises(ValueError, match="closure"):
        ms.MSAM(net.parameters()).step(None)
    with pytest.raises(ValueError, match="closure"):
        ms.SAM(net.parameters()).step(lambda: torch.tensor(float("nan")))
    w = [p.detach().clone() for p in net.parameters()]
    opt = ms.MSAM(net.parameters(), rho=1.0)
    _train(net, opt, _batches(1))
    w1 = [p.detach().clone() for p in net.parameters()]
    with pytest.raises(ValueError, match="finite"):
        opt.step(lambda: torch.tensor(float("inf")))
    assert all(torch.equal(p, q) for p, q in zip(net.parameters(), w1))  # moved back
    assert not all(torch.equal(p, q) for p, q in zip(w1, w))
    with pytest.raises(ValueError, match="betas"):
        ms.AdamWMSAM(net.parameters(), betas=(0.9,))
    with pytest.raises(ValueError, match="method"):
        ms.make_optimizer("Adam", net.parameters())
    with pytest.raises(ValueError, match="method"):
        ms.train_moons([ms.Spec("Adam")], epochs=1)
    with pytest.raises(ValueError, match="epochs"):
        ms.train_moons([ms.Spec("SGD-M")], epochs=0)
    with pytest.raises(ValueError, match="specs"):
        ms.train_moons([], epochs=1)
    with pytest.raises(ValueError, match="flip"):
        ms.two_moons(10, flip=0.6)
    with pytest.raises(ValueError, match="params"):
        ms.hessian_top_eigenvalue(lambda: torch.tensor(1.0), [])
    with pytest.raises(ValueError, match="rho"):
        ms.toy_paths(rho=-0.1)
    with pytest.raises(ValueError, match="noise"):
        ms.toy_paths(noise=float("inf"))


def test_flipped_control_matches_msam_with_opposite_offset():
    """The engine's control evaluates the gradient at w + rho v/||v||: the torch MSAM with the
    momentum buffer's sign flipped in its perturbation gives the same run."""
    run = ms.train_moons([ms.Spec("MSAM-flip", 0.7, 3)], epochs=1)
    X, y, _, _ = ms.moons_data()
    net = ms._torch_mlp(3)
    opt = ms.MSAM(net.parameters(), lr=0.1, momentum=0.9, rho=0.7)
    opt.perturbation = lambda: {p: -e for p, e in ms.MSAM.perturbation(opt).items()}
    perm = np.random.default_rng([3, 1]).permutation(len(y))
    _train(net, opt, [(torch.tensor(X[perm[i:i + 32]]), torch.tensor(y[perm[i:i + 32]]))
                      for i in range(0, len(y), 32)])
    assert np.allclose(run.params["W1"][0], net[0].weight.detach().numpy().T, atol=1e-10)


def test_param_group_override_is_validated_and_named():
    net = _net()
    for cls in (ms.MSAM, ms.SAM, ms.AdamWMSAM):
        with pytest.raises(ValueError, match=r"rho \(param group 1\)"):
            cls([{"params": net[0].parameters()}, {"params": net[2].parameters(), "rho": -0.5}])
        opt = cls([{"params": net[0].parameters()}, {"params": net[2].parameters(), "rho": 0.0}])
        with pytest.raises(ValueError, match=r"lr \(param group 2\)"):
            opt.add_param_group({"params": [torch.nn.Parameter(torch.zeros(2, dtype=torch.float64))], "lr": -1.0})


def test_sometimes_missing_gradient_matches_sgd_and_counter_resumes():
    """A parameter used only on every other step: MSAM(rho=0) equals torch's SGD, which skips it
    when its .grad is None; and state_dict() carries the gradient-call counter."""
    def run(make, steps):
        torch.manual_seed(0)
        a = torch.nn.Parameter(torch.randn(3, dtype=torch.float64))
        b = torch.nn.Parameter(torch.randn(3, dtype=torch.float64))
        opt = make([a, b])
        for t in range(steps):
            def closure():
                opt.zero_grad()
                loss = (a ** 2).sum() if t % 2 else (a ** 2).sum() + ((b - 1.0) ** 2).sum()
                loss.backward()
                return loss
            opt.step(closure)
        return torch.cat([a.detach(), b.detach()]), opt

    w_msam, opt = run(lambda p: ms.MSAM(p, lr=0.1, momentum=0.9, rho=0.0), 7)
    w_sgd, _ = run(lambda p: torch.optim.SGD(p, lr=0.1, momentum=0.9), 7)
    assert torch.equal(w_msam, w_sgd)
    w_rho, _ = run(lambda p: ms.MSAM(p, lr=0.1, momentum=0.9, rho=0.3), 7)
    assert torch.isfinite(w_rho).all() and not torch.equal(w_rho, w_sgd)
    sd = opt.state_dict()
    assert sd["grad_calls"] == 7
    fresh = ms.MSAM([torch.nn.Parameter(torch.zeros(3, dtype=torch.float64)) for _ in range(2)], rho=0.0)
    fresh.load_state_dict(sd)
    assert fresh.grad_calls == 7


def test_stored_tuning_record_matches_fresh_training():
    """The notebook reads the tuning from momentum_sam_tuning.py: re-train two of its entries
    (the chosen radii, held-out seeds) and compare; and the record covers every configuration."""
    from optbook.training import momentum_sam_chapter as ch
    from optbook.training.momentum_sam_tuning import RECORD

    assert set(RECORD) == {(s.method, s.rho, s.seed) for s in ch.tuning_specs()}
    picks = [ms.Spec("MSAM", ch.TUNED["MSAM"], 101), ms.Spec("SAM", ch.TUNED["SAM"], 102)]
    run = ms.train_moons(picks, epochs=ch.EPOCHS, monitor_rho=ch.MONITOR_RHO)
    for k, s in enumerate(picks):
        for f in ch.RECORD_FIELDS:
            # the power iteration stops when every network of a batch has settled (tol 1e-5), so
            # lambda_max depends on its batch mates at that level; the training does not
            rel = 1e-3 if f == "lambda_max" else 1e-9
            assert getattr(run, f)[k] == pytest.approx(RECORD[(s.method, s.rho, s.seed)][f], rel=rel, abs=1e-12), f
    tm, ts = ch.tunings()
    assert (tm.best["rho"], ts.best["rho"]) == (ch.TUNED["MSAM"], ch.TUNED["SAM"])
    assert not tm.on_edge() and not ts.on_edge()


def test_snapshots_and_random_probe_leave_training_unchanged():
    """The SGD-M checkpoints end at the final weights, and the random-direction probe draws from
    its own generator: the same runs with and without monitoring/snapshots are identical."""
    specs = [ms.Spec("SGD-M", 0.0, 4), ms.Spec("MSAM", 0.5, 4)]
    a = ms.train_moons(specs, epochs=10, snapshot=("SGD-M",))
    b = ms.train_moons(specs, epochs=10, monitor=())
    assert all(np.array_equal(a.params[k], b.params[k]) for k in ms._KEYS)
    assert a.snapshots["W1"].shape == (11, 1, 2, 64) and list(a.snapshot_index) == [0]
    assert np.array_equal(a.snapshots["W1"][-1, 0], a.params["W1"][0])
    late = slice(5, None)
    assert np.all(np.isfinite(a.rise_rand[late, 0])) and np.isnan(a.rise_rand[:, 1]).all()
    assert np.nanmax(np.abs(a.cos_rand)) < 0.5   # a random direction in 257 dimensions is nearly orthogonal


def test_matched_fit_reference_interpolates_sgdm_path():
    from optbook.training import momentum_sam_chapter as ch
    loss = np.array([0.7, 0.5, 0.45, 0.4, 0.42, 0.35])
    assert ch._crossing(loss, 0.6) == (0, 1, 0.5)
    assert ch._crossing(loss, 0.4) == (2, 3, 1.0)
    assert ch._crossing(loss, 0.8) == (0, 0, 0.0)          # already below at the start
    assert ch._crossing(loss, 0.1) == (5, 5, 0.0)          # never that low: SGD-M's last value
    run = ms.train_moons([ms.Spec("SGD-M", 0.0, 0)], epochs=30, snapshot=("SGD-M",))
    traj = np.asarray(run.traces[0].objective)
    X, y, _, _ = ms.moons_data()
    lam = ms.batched_lambda_max({k: v[:, 0] for k, v in run.snapshots.items()}, X, y)
    # m: a record low of SGD-M's train loss; at its loss the reference is that checkpoint's
    # lambda_max, and just above it the interpolation with the checkpoint before
    m = next(i for i in range(3, len(traj)) if traj[i] < traj[:i].min())
    above = 0.5 * (traj[m] + min(traj[m - 1], traj[:m].min()))
    ref = ch.matched_sgdm_sharpness(run, [0, 0], [traj[m], above])
    assert ref[0] == pytest.approx(lam[m], rel=1e-3)
    i, j, t = ch._crossing(traj, above)
    assert j == m and 0 < t < 1 and ref[1] == pytest.approx(lam[i] + t * (lam[j] - lam[i]), rel=1e-3)


def test_mechanism_probe_is_checked():
    from optbook.training import momentum_sam_chapter as ch
    run = ms.train_moons([ms.Spec("SGD-M", 0.0, 0)], epochs=2)
    with pytest.raises(ValueError, match="probe"):
        ch.mechanism(run, probe="v")
    m = ch.mechanism(run, probe="+v")
    assert np.allclose(m["cos_with_probe"], -ch.mechanism(run, probe="-v")["cos_with_probe"])
