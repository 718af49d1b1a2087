"""Chapter 25: windowed meta-gradients (exactness, finite differences, closed form), the AT-BPTT
window rules, the low-rank adjoint, the batched engine and bad input."""
import numpy as np
import pytest
import torch

from optbook.bilevel import at_bptt_chapter as ch
from optbook.bilevel.at_bptt import (
    METHODS, Task, adjoint_meta_gradient, batched_meta_gradient, distill, evaluate, inner_run, lanczos,
    mlp_forward, real_subset, sample_window, softmax_probs, stage_of, window_distribution,
    windowed_meta_gradient)

D = torch.float64


def _softmax_problem(seed=0, f=4, C=3, n=2):
    gen = torch.Generator().manual_seed(seed)
    X = torch.randn(n, f, generator=gen, dtype=D)
    y = torch.arange(n) % C
    Xr, yr = torch.randn(15, f, generator=gen, dtype=D), torch.arange(15) % C

    def inner(th, Xs):
        return torch.nn.functional.cross_entropy(mlp_forward(th, Xs, 0, C), y)

    def outer(th):
        return torch.nn.functional.cross_entropy(mlp_forward(th, Xr, 0, C), yr)

    th0 = 0.3 * torch.randn(f * C + C, generator=gen, dtype=D)
    return inner, outer, th0, X


def test_full_window_equals_autograd_through_the_whole_unroll():
    inner, outer, th0, X = _softmax_problem()
    _, g = windowed_meta_gradient(inner, outer, th0, X, 0, 5, 0.4)
    Xd = X.clone().requires_grad_(True)
    th = th0.clone()
    for _ in range(5):  # naive reference: one graph from theta_0 (a constant) to theta_T
        th = th - 0.4 * torch.autograd.grad(inner(th.requires_grad_(True) if not th.requires_grad else th, Xd),
                                            th, create_graph=True)[0]
    ref, = torch.autograd.grad(outer(th), Xd)
    assert torch.allclose(g, ref, rtol=0, atol=1e-12)


def test_meta_gradient_matches_finite_differences():
    inner, outer, th0, X = _softmax_problem(f=3, n=2)
    _, g = windowed_meta_gradient(inner, outer, th0, X, 0, 3, 0.5)

    def meta(Xv):
        th, _ = inner_run(inner, th0, Xv, 3, 0.5)
        return float(outer(th))

    fd = torch.zeros_like(X)
    for i in range(X.numel()):
        e = torch.zeros_like(X).view(-1)
        e[i] = 1e-6
        fd.view(-1)[i] = (meta(X + e.view_as(X)) - meta(X - e.view_as(X))) / 2e-6
    assert torch.allclose(g, fd, atol=1e-7)


def test_linear_regression_closed_form():
    """Inner least squares on (X, y): theta_T = (I - lr A)^T theta_0 + sum_k (I - lr A)^k lr b, with
    A = X^T X / n, b = X^T y / n; its meta-gradient by autograd through the matrix power."""
    gen = torch.Generator().manual_seed(3)
    n, f, T, lr = 3, 4, 6, 0.3
    X = torch.randn(n, f, generator=gen, dtype=D)
    ys = torch.randn(n, generator=gen, dtype=D)
    Xr, yr = torch.randn(10, f, generator=gen, dtype=D), torch.randn(10, generator=gen, dtype=D)
    th0 = torch.randn(f, generator=gen, dtype=D)
    inner = lambda th, Xs: 0.5 * ((Xs @ th - ys) ** 2).mean()  # noqa: E731
    outer = lambda th: 0.5 * ((Xr @ th - yr) ** 2).mean()  # noqa: E731
    _, g = windowed_meta_gradient(inner, outer, th0, X, 0, T, lr)
    Xd = X.clone().requires_grad_(True)
    A, b = Xd.T @ Xd / n, Xd.T @ ys / n
    M = torch.eye(f, dtype=D) - lr * A
    thT = torch.linalg.matrix_power(M, T) @ th0 + sum(torch.linalg.matrix_power(M, k) @ (lr * b) for k in range(T))
    ref, = torch.autograd.grad(outer(thT), Xd)
    assert torch.allclose(g, ref, atol=1e-12)


def test_truncation_treats_theta_start_as_constant():
    inner, outer, th0, X = _softmax_problem()
    th_s, _ = inner_run(inner, th0, X, 2, 0.4)
    _, a = windowed_meta_gradient(inner, outer, th0, X, 2, 3, 0.4)
    _, b = windowed_meta_gradient(inner, outer, th_s, X, 0, 3, 0.4)
    assert torch.allclose(a, b, atol=1e-14)
    _, full = windowed_meta_gradient(inner, outer, th0, X, 0, 5, 0.4)
    assert not torch.allclose(a, full, atol=1e-6)  # truncation is biased


def test_adjoint_equals_autograd_and_lanczos_is_exact_at_full_rank():
    inner, outer, th0, X = _softmax_problem()
    _, ref = windowed_meta_gradient(inner, outer, th0, X, 1, 4, 0.4)
    _, adj, counts = adjoint_meta_gradient(inner, outer, th0, X, 1, 4, 0.4)
    assert torch.allclose(adj, ref, atol=1e-13) and counts["hvps"] == 4
    # a quadratic inner loss has one Hessian everywhere: full-rank Lanczos is then exact on any window
    gen = torch.Generator().manual_seed(4)
    ys, Xr, yr = (torch.randn(2, generator=gen, dtype=D), torch.randn(8, 4, generator=gen, dtype=D),
                  torch.randn(8, generator=gen, dtype=D))
    quad = lambda th, Xs: 0.5 * ((Xs @ th - ys) ** 2).mean() + 0.05 * (th ** 2).sum()  # noqa: E731
    out = lambda th: 0.5 * ((Xr @ th - yr) ** 2).mean()  # noqa: E731
    X2, t0 = torch.randn(2, 4, generator=gen, dtype=D), torch.randn(4, generator=gen, dtype=D)
    _, ref = windowed_meta_gradient(quad, out, t0, X2, 1, 4, 0.4)
    _, low, c = adjoint_meta_gradient(quad, out, t0, X2, 1, 4, 0.4, rank=4, generator=torch.Generator().manual_seed(0))
    assert torch.allclose(low, ref, atol=1e-12) and c["hvps"] == 4
    _, low1, _ = adjoint_meta_gradient(quad, out, t0, X2, 1, 4, 0.4, rank=1, generator=torch.Generator().manual_seed(0))
    assert not torch.allclose(low1, ref, atol=1e-6)


def test_lanczos_error_never_grows_with_rank_and_vanishes_at_full_rank():
    gen = torch.Generator().manual_seed(1)
    Q, _ = torch.linalg.qr(torch.randn(12, 12, generator=gen, dtype=D))
    H = Q @ torch.diag(torch.linspace(-1, 5, 12, dtype=D)) @ Q.T
    v0 = torch.randn(12, generator=gen, dtype=D)
    errs = []
    for k in range(1, 13):
        ev, U = lanczos(lambda v: H @ v, v0, k)
        errs.append(float(torch.linalg.norm(H - U @ torch.diag(ev) @ U.T)))
    assert all(b <= a + 1e-10 for a, b in zip(errs, errs[1:]))
    assert errs[-1] < 1e-10 and errs[0] > 1.0


def test_softmax_sums_to_one_and_is_uniform_for_constant_norms():
    p = softmax_probs(np.array([3.0, 1.0, 2.0]), 0.5)
    assert p.sum() == pytest.approx(1.0) and np.argmax(p) == 0
    assert np.allclose(softmax_probs(np.full(7, 2.5)), 1 / 7)


@pytest.mark.parametrize("stage", [1, 2, 3])
def test_window_rules_stay_inside_the_unroll(stage):
    rng = np.random.default_rng(0)
    g = np.abs(rng.normal(size=30)) * 3
    P = window_distribution(stage, g, 6, 2, temperature=0.7)
    assert P.sum() == pytest.approx(1.0)
    s, w = np.nonzero(P)
    assert np.all(s >= 0) and np.all(s + w <= 30) and np.all((w >= 4) & (w <= 8))
    for _ in range(50):
        s, w = sample_window("AT-BPTT", rng, 30, 6, stage=stage, norms=g, offset=2)
        assert 0 <= s and s + w <= 30 and 4 <= w <= 8


def test_stage_widths_and_mirror():
    g = np.linspace(3, 0.5, 20)  # decreasing: softmax favours early steps
    P2 = window_distribution(2, g, 5, 2)
    assert np.all(P2[:, 7].nonzero()[0] == np.arange(14)) and np.allclose(P2[:14, 7], 1 / 14)
    P3 = window_distribution(3, g, 5, 2, temperature=1e-3)  # u = 0 almost surely -> s = T - 0 - W
    assert P3[17, 3] == pytest.approx(1.0)
    P1 = window_distribution(1, g, 5, 2, temperature=1e-3)
    assert P1[0].sum() == pytest.approx(1.0)  # start at the largest norm
    # width grows with the rank of |g_t - g_{t-1}|: constant differences except Delta_0 = 0 -> smallest width
    assert P1[0, 3] == pytest.approx(1.0)


def test_baseline_windows_and_seeded_sampling():
    assert sample_window("BPTT", 0, 30, 6) == (0, 30)
    assert sample_window("T-BPTT", 0, 30, 6) == (24, 6)
    a = [sample_window("RaT-BPTT", np.random.default_rng(5), 30, 6) for _ in range(3)]
    assert len(set(a)) == 1 and 0 <= a[0][0] <= 24
    g = np.random.default_rng(1).random(30)
    r1, r2 = np.random.default_rng(9), np.random.default_rng(9)
    assert [sample_window("AT-BPTT", r1, 30, 6, norms=g, offset=2) for _ in range(10)] == \
           [sample_window("AT-BPTT", r2, 30, 6, norms=g, offset=2) for _ in range(10)]


def test_stage_schedule():
    assert [stage_of(i, 10) for i in range(10)] == [1, 1, 1, 2, 2, 2, 2, 3, 3, 3]


def _tiny_task():
    gen = torch.Generator().manual_seed(0)
    Xtr, Xte = torch.randn(60, 5, generator=gen, dtype=D), torch.randn(30, 5, generator=gen, dtype=D)
    W = torch.randn(5, 3, generator=gen, dtype=D)
    return Task(Xtr, (Xtr @ W).argmax(1), Xte, (Xte @ W).argmax(1), classes=3, hidden=4)


def test_batched_engine_equals_one_window_at_a_time():
    t = _tiny_task()
    gen = torch.Generator().manual_seed(2)
    th0 = torch.stack([t.init(gen) for _ in range(3)])
    X, y = real_subset(t, 2, 0)
    Xs, ys = X.expand(3, -1, -1).clone(), y.expand(3, -1)
    Xb, yb = t.X_train[:20], t.y_train[:20]
    starts, widths = np.array([0, 2, 5]), np.array([7, 3, 1])
    loss, grad = batched_meta_gradient(t, th0, Xs, ys, Xb.expand(3, -1, -1), yb.expand(3, -1), starts, widths, 0.3)
    for r in range(3):
        inner = lambda th, Z: torch.nn.functional.cross_entropy(t.logits(th, Z), y)  # noqa: E731
        outer = lambda th: torch.nn.functional.cross_entropy(t.logits(th, Xb), yb)  # noqa: E731
        l1, g1 = windowed_meta_gradient(inner, outer, th0[r], X, starts[r], widths[r], 0.3)
        assert l1 == pytest.approx(float(loss[r]), abs=1e-12)
        assert torch.allclose(grad[r], g1, atol=1e-12)


def test_distillation_improves_a_tiny_task_and_is_deterministic():
    t = _tiny_task()
    kw = dict(seeds=[0], outer_lrs=[0.1], iterations=15, T=8, base_window=3, offset=1, real_batch=30)
    a = distill(t, "AT-BPTT", **kw)
    b = distill(t, "AT-BPTT", **kw)
    assert torch.equal(a.X, b.X) and a.windows == b.windows
    X0, y0 = real_subset(t, 1, 0)
    acc0 = evaluate(t, X0[None], y0[None], seed=0, T=8)
    acc1 = evaluate(t, a.X, a.y, seed=0, T=8)
    assert acc1[0] >= acc0[0]
    assert a.max_stored.max() <= 4 and a.steps_backward[0] < 15 * 8


def test_bad_input_names_the_argument():
    inner, outer, th0, X = _softmax_problem()
    with pytest.raises(ValueError, match="width"):
        windowed_meta_gradient(inner, outer, th0, X, 0, 0, 0.1)
    with pytest.raises(ValueError, match="lr"):
        windowed_meta_gradient(inner, outer, th0, X, 0, 2, -0.1)
    with pytest.raises(ValueError, match="rank"):
        adjoint_meta_gradient(inner, outer, th0, X, 0, 2, 0.1, rank=0)
    with pytest.raises(ValueError, match="temperature"):
        softmax_probs([1.0, 2.0], 0.0)
    with pytest.raises(ValueError, match="norms"):
        softmax_probs([1.0, np.nan])
    with pytest.raises(ValueError, match="offset"):
        window_distribution(1, np.ones(10), 3, 3)
    with pytest.raises(ValueError, match="base_window"):
        window_distribution(1, np.ones(10), 9, 2)
    with pytest.raises(ValueError, match="stage"):
        window_distribution(4, np.ones(10), 3, 1)
    with pytest.raises(ValueError, match="method"):
        sample_window("SGD", 0, 10, 3)
    with pytest.raises(ValueError, match="norms"):
        sample_window("AT-BPTT", 0, 10, 3, offset=1)
    with pytest.raises(ValueError, match="v0"):
        lanczos(lambda v: v, torch.zeros(3), 2)
    with pytest.raises(ValueError, match="switches"):
        stage_of(1, 10, (0.7, 0.3))
    t = _tiny_task()
    with pytest.raises(ValueError, match="outer_lrs"):
        distill(t, "RaT-BPTT", seeds=[0], outer_lrs=[-1.0], T=5, base_window=2)
    with pytest.raises(ValueError, match="X"):
        evaluate(t, torch.full((1, 3, 5), np.nan, dtype=D), torch.zeros(1, 3, dtype=torch.long), seed=0)


def test_chapter_design_same_grid_held_out_seeds():
    assert not set(ch.TUNING_SEEDS) & set(ch.CLAIM_SEEDS) and len(ch.CLAIM_SEEDS) >= 5
    assert ch.RUN["base_window"] / ch.RUN["T"] == pytest.approx(40 / 200)
    assert set(METHODS) == {"BPTT", "T-BPTT", "RaT-BPTT", "AT-BPTT"}
