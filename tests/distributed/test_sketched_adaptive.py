"""Chapter 22: the sketches, ADA_OPT and the SADL loop (checks from the paper card)."""
import numpy as np
import pytest
import torch
from scipy.linalg import hadamard

from optbook.distributed.sketched_adaptive import (
    METHODS, SKETCHES, AMSGradState, NoisyQuadratic, Sketch, ada_opt, flat_spectrum, fwht, intrinsic_dimension,
    power_law_spectrum, run_sadl)

RANDOM = ("gaussian", "srht", "countsketch")


def _problem(d=64, p=1.5, seed=0):
    return NoisyQuadratic(power_law_spectrum(d, p), num_clients=3, samples=5, noise=0.01, seed=seed)


def _x0(d=64):
    return torch.from_numpy(np.random.default_rng(9).standard_normal(d))


@pytest.mark.parametrize("kind", RANDOM)
def test_sketch_is_unbiased_over_draws(kind):
    d, b, N = 24, 6, 10_000
    v = torch.from_numpy(np.random.default_rng(0).standard_normal(d))
    draws = torch.stack([Sketch(kind, d, b, (7, i)).matrix() for i in range(N)])   # (N, b, d)
    est = torch.einsum("nbd,nbe,e->nd", draws, draws, v)                          # R^T R v per draw
    mean, se = est.mean(0), est.std(0) / np.sqrt(N)
    assert ((mean - v).abs() <= 3.5 * se + 1e-12).float().mean() >= 0.95
    assert (mean - v).abs().max() <= 5 * se.max()


@pytest.mark.parametrize("kind", RANDOM)
def test_sketch_is_linear_shared_by_seed_and_fresh_each_round(kind):
    d, b = 50, 10
    rng = np.random.default_rng(1)
    a, c = (torch.from_numpy(rng.standard_normal(d)) for _ in range(2))
    S = Sketch(kind, d, b, (3, 0))
    assert torch.allclose(S.sketch(a + c), S.sketch(a) + S.sketch(c))
    assert torch.equal(S.matrix(), Sketch(kind, d, b, (3, 0)).matrix())       # another client, same seed
    assert not torch.equal(S.matrix(), Sketch(kind, d, b, (3, 1)).matrix())   # next round
    s = torch.from_numpy(rng.standard_normal(b))
    assert torch.allclose(S.desketch(s), S.matrix().T @ s)                    # desk is R^T


def test_srht_equals_its_explicit_matrix():
    d, b = 12, 5                                                               # padded to 16
    S = Sketch("srht", d, b, 4)
    H = torch.from_numpy(hadamard(16).astype(float))
    R = np.sqrt(16 / b) * H[S.rows] / 4.0 * S.signs
    assert torch.allclose(S.matrix(), R[:, :d])
    x = torch.randn(3, 16, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
    assert torch.allclose(fwht(x), x @ H)
    with pytest.raises(ValueError, match="power-of-2"):
        fwht(torch.zeros(6))


def test_srht_butterfly_path_matches_the_dense_path(monkeypatch):
    import optbook.distributed.sketched_adaptive as sa
    v = torch.from_numpy(np.random.default_rng(2).standard_normal(40))
    dense = Sketch("srht", 40, 8, 5)
    monkeypatch.setattr(sa, "DENSE_HADAMARD", 1)
    fast = Sketch("srht", 40, 8, 5)
    assert fast.H is None and torch.allclose(dense.sketch(v), fast.sketch(v))
    assert torch.allclose(dense.desketch(dense.sketch(v)), fast.desketch(fast.sketch(v)))


@pytest.mark.parametrize("kind", RANDOM)
def test_concentration_decays_like_one_over_sqrt_b(kind):
    d, bs = 256, (8, 32, 128)
    rng = np.random.default_rng(3)
    v, h = (torch.from_numpy(rng.standard_normal(d)) for _ in range(2))
    med = []
    for b in bs:
        errs = []
        for i in range(300):
            S = Sketch(kind, d, b, (11, i))
            errs.append(abs(float(S.sketch(v) @ S.sketch(h)) - float(v @ h)) / float(v.norm() * h.norm()))
        med.append(np.median(errs))
    slope = np.polyfit(np.log(bs), np.log(med), 1)[0]
    assert -0.65 <= slope <= -0.35


def test_intrinsic_dimension():
    rng = np.random.default_rng(0)
    A = rng.standard_normal((30, 30))
    H = A + A.T
    lam = np.linalg.eigvalsh(H)
    assert intrinsic_dimension(H) == pytest.approx(np.abs(lam).sum() / np.abs(lam).max())
    assert intrinsic_dimension(np.eye(17)) == pytest.approx(17)
    assert intrinsic_dimension(power_law_spectrum(1000, 1.5)) < 3
    assert intrinsic_dimension(flat_spectrum(1000)) > 0.7 * 1000
    bads = (np.zeros((3, 3)), np.ones((2, 3)), np.array([[1.0, 2.0], [0.0, 1.0]]), np.array([np.nan]), np.array([]))
    for bad in bads:
        with pytest.raises(ValueError, match="H"):
            intrinsic_dimension(bad)


def test_identity_sketch_reduces_sadl_to_uncompressed_amsgrad_bit_for_bit():
    p = _problem()
    full = run_sadl(p, "amsgrad", x0=_x0(), rounds=20, seed=1)
    same = run_sadl(p, "sadl-same", sketch="identity", b=p.dim, x0=_x0(), rounds=20, seed=1)
    assert torch.equal(full.iterates, same.iterates)
    # and a random sketch does change the path
    assert not torch.equal(full.iterates, run_sadl(p, "sadl-same", b=32, x0=_x0(), rounds=20, seed=1).iterates)


def test_amsgrad_vhat_is_monotone_and_step_direction():
    rng = np.random.default_rng(0)
    st = AMSGradState.zeros_like(torch.zeros(10, dtype=torch.float64))
    prev = st.vhat.clone()
    for _ in range(30):
        g = torch.from_numpy(rng.standard_normal(10) * rng.uniform(0, 3))
        st = ada_opt(st, g, g, 0.1, (0.9, 0.99), 1e-8)
        assert (st.vhat >= prev).all()
        prev = st.vhat.clone()
    st = ada_opt(AMSGradState.zeros_like(torch.zeros(3, dtype=torch.float64)), torch.ones(3, dtype=torch.float64),
                 torch.ones(3, dtype=torch.float64), 0.1, (0.9, 0.99), 0.0)
    # first step: m = 0.1, v_hat = 0.01 -> x = -0.1 * 0.1 / 0.1 = -0.1 (server subtracts along the change)
    assert torch.allclose(st.x, torch.full((3,), -0.1, dtype=torch.float64))


def test_split_sketch_feeds_first_half_to_m_and_second_half_to_v():
    # Algorithm 2: the first b/2 sketched floats feed the first moment, the other b/2 (squared) the second
    from optbook.distributed.sketched_adaptive import desketch_moments, round_sketches
    sk = round_sketches("sadl", "srht", 64, 16, 3, 0)
    mbar = torch.from_numpy(np.random.default_rng(4).standard_normal(16))
    first, second = desketch_moments(sk, mbar)
    assert torch.equal(first, sk[0].desketch(mbar[:8])) and torch.equal(second, sk[1].desketch(mbar[8:]))
    st = ada_opt(AMSGradState.zeros_like(torch.zeros(64, dtype=torch.float64)), first, second, 0.1, (0.9, 0.99), 1e-2)
    assert torch.allclose(st.m, 0.1 * first) and torch.allclose(st.v, 0.01 * second ** 2)
    assert torch.allclose(st.x, -0.1 * st.m / (st.vhat.sqrt() + 1e-2))


@pytest.mark.parametrize("method", ["sadl", "sadl-same"])
def test_client_replica_stays_in_sync(method):
    res = run_sadl(_problem(), method, b=16, x0=_x0(), rounds=15, replica=True, sketch="srht")
    assert np.all(res.trace["sync_gap"][1:] == 0.0)


@pytest.mark.parametrize("method, up", [("sadl", 16), ("sadl-same", 16), ("sketched-sgd", 16), ("topk-ef", 16),
                                        ("amsgrad", 64), ("fedavg", 64)])
def test_accounting_counts_b_floats_per_client(method, up):
    p = _problem()
    res = run_sadl(p, method, b=16, x0=_x0(), rounds=4)
    C = p.num_clients
    assert res.ledger.floats_up == [C * up] * 4
    if method != "topk-ef":
        assert res.ledger.floats_down == [C * up] * 4
    else:
        assert all(0 < f <= C * C * 16 for f in res.ledger.floats_down)
    assert res.trace["floats"][-1] == sum(res.ledger.floats_up) + sum(res.ledger.floats_down)


def test_every_method_decreases_the_loss_and_is_deterministic():
    p = _problem()
    for m in METHODS:
        kw = dict(lr=1.0) if m == "fedavg" else dict(lr=0.3 if m == "sketched-sgd" else 0.03)
        a = run_sadl(p, m, b=16, x0=_x0(), rounds=30, seed=2, **kw)
        assert a.final_loss < 0.5 * p.loss(_x0()), m
        assert torch.equal(a.x, run_sadl(p, m, b=16, x0=_x0(), rounds=30, seed=2, **kw).x)


def test_sketch_noise_hurts_a_flat_spectrum_more_than_a_power_law():
    d = 256
    out = {}
    for name, lam in (("power", power_law_spectrum(d, 1.5)), ("flat", flat_spectrum(d))):
        p = NoisyQuadratic(lam, num_clients=3, samples=5, seed=0)
        full = run_sadl(p, "amsgrad", x0=_x0(d), rounds=60).final_loss
        out[name] = run_sadl(p, "sadl", b=8, x0=_x0(d), rounds=60, sketch="srht").final_loss / full
    assert out["flat"] > 2 * out["power"]


def test_quadratic_gradient_is_exact_on_average():
    p = _problem(d=8)
    x = _x0(8)
    allc = torch.arange(3).repeat_interleave(5)
    idx = torch.arange(5).repeat(3)[:, None]
    g = p.grad(x.expand(15, 8), allc, idx).mean(0)
    assert torch.allclose(g, p.lam * x)
    assert p.loss(x) == pytest.approx(0.5 * float((p.lam * x * x).sum()))


@pytest.mark.parametrize("call, name", [
    (lambda: Sketch("fourier", 8, 2), "kind"),
    (lambda: Sketch("gaussian", 8, 9), "b"),
    (lambda: Sketch("gaussian", 8, 0), "b"),
    (lambda: Sketch("identity", 8, 4), "b"),
    (lambda: Sketch("gaussian", 8, 2, -1), "seed"),
    (lambda: Sketch("gaussian", 8, 2).sketch(torch.zeros(7)), "v"),
    (lambda: Sketch("srht", 8, 2).sketch(torch.full((8,), float("nan"))), "v"),
    (lambda: Sketch("countsketch", 8, 2).desketch(torch.zeros(3)), "s"),
    (lambda: NoisyQuadratic(np.array([1.0, -1.0])), "eigenvalues"),
    (lambda: NoisyQuadratic(np.array([])), "eigenvalues"),
    (lambda: NoisyQuadratic(np.ones(3), noise=-1.0), "noise"),
    (lambda: power_law_spectrum(0, 1.0), "d"),
    (lambda: power_law_spectrum(5, float("nan")), "p"),
    (lambda: run_sadl(_problem(), "adam"), "method"),
    (lambda: run_sadl(_problem(), sketch="dct"), "sketch"),
    (lambda: run_sadl(_problem(), b=65), "b"),
    (lambda: run_sadl(_problem(), lr=0.0), "lr"),
    (lambda: run_sadl(_problem(), client_lr=-1.0), "client_lr"),
    (lambda: run_sadl(_problem(), betas=(0.9, 1.0)), "betas"),
    (lambda: run_sadl(_problem(), eps=0.0), "eps"),
    (lambda: run_sadl(_problem(), rounds=0), "rounds"),
    (lambda: run_sadl(_problem(), local_steps=0), "local_steps"),
    (lambda: run_sadl(_problem(), x0=torch.zeros(3)), "x0"),
    (lambda: run_sadl("quadratic"), "problem"),
])
def test_bad_input_is_refused(call, name):
    with pytest.raises(ValueError, match=name):
        call()


def test_sketch_kinds_are_listed():
    assert set(RANDOM) < set(SKETCHES)


def test_gloo_run_equals_in_process_and_clients_never_receive_the_model():
    from optbook.distributed.sketched_adaptive import run_sadl_distributed
    p = NoisyQuadratic(power_law_spectrum(32, 1.5), num_clients=2, samples=5, seed=0)
    kw = dict(b=8, sketch="srht", lr=0.05, rounds=3, seed=4, x0=_x0(32))
    wire = run_sadl_distributed(p, "sadl", **kw)
    local = run_sadl(p, "sadl", **kw)
    assert torch.allclose(wire["server"], local.iterates, atol=1e-12, rtol=0)
    assert all(torch.equal(c, wire["server"]) for c in wire["clients"])     # replicas in sync, bit for bit
    assert wire["ledger"].floats_up == [2 * 8] * 3 and wire["ledger"].floats_down == [2 * 8] * 3
    with pytest.raises(ValueError, match="method"):
        run_sadl_distributed(p, "amsgrad", **kw)


@pytest.mark.parametrize("kind", ("srht", "countsketch"))
def test_cached_draws_are_the_seeds_own_random_numbers(kind):
    # the sketch's random numbers are cached per seed; they must be those of default_rng(seed)
    d, b, seed = 40, 6, (11, 3, 1)
    S = Sketch(kind, d, b, seed)
    rng = np.random.default_rng(seed)
    if kind == "srht":
        signs = rng.choice([-1.0, 1.0], size=64)
        assert torch.equal(S.signs, torch.from_numpy(signs))
        assert torch.equal(S.rows, torch.from_numpy(np.sort(rng.choice(64, size=b, replace=False))))
    else:
        assert torch.equal(S.bucket, torch.from_numpy(rng.integers(0, b, size=d)))
        assert torch.equal(S.signs, torch.from_numpy(rng.choice([-1.0, 1.0], size=d)))
