"""LD3M's core: the exact mixture denoiser, the DDIM sampler with its skip, the DM loss."""
import numpy as np
import pytest
import torch

from optbook.bilevel.ld3m import (DTYPE, GaussianMixturePrior, ddim_timesteps, distill, dm_loss,
                                  latent_gradient, ld3m_sample, linear_alphas_cumprod, random_embedding,
                                  random_mixture, skip_weights)
from optbook.core import fd_gradient


def test_skip_schedule_endpoints_and_monotone():
    for S in (2, 5, 10, 50):
        w = skip_weights(S, "linear")
        assert w[0] == 1.0 and w[-1] == 0.0 and np.all(np.diff(w) < 0)
        assert np.allclose(w, (S - 1 - np.arange(S)) / (S - 1))
    assert np.all(skip_weights(7, "none") == 0) and np.all(skip_weights(7, "constant") == 0.5)
    c = skip_weights(9, "cosine")
    assert c[0] == pytest.approx(1) and c[-1] == pytest.approx(0) and np.all(np.diff(c) < 0)
    assert np.allclose(skip_weights(10, "linear", kappa=2.0), 2 * skip_weights(10))


def test_first_step_with_full_skip_predicts_the_latent():
    # weight 1 at the first step: x0_hat = z exactly, so the state after step 1 is
    # sqrt(abar_prev) z + sqrt(1 - abar_prev) eps_hat.
    prior = random_mixture(rng=0)
    z = torch.randn(3, 8, dtype=DTYPE)
    eps = torch.randn(3, 8, dtype=DTYPE)
    ac = linear_alphas_cumprod()
    ts = ddim_timesteps(10)
    chain = ld3m_sample(prior, z, [0, 0, 0], eps, steps=10)
    x_start, a, a_prev = chain.states[0], ac[ts[-1]], ac[ts[-2]]
    e = prior.eps(x_start, a, mask=prior.class_mask([0, 0, 0]))
    expect = np.sqrt(a_prev) * z + np.sqrt(1 - a_prev) * e
    assert torch.allclose(chain.states[1], expect, atol=1e-12)


def test_timesteps_follow_the_latent_diffusion_code():
    assert list(ddim_timesteps(10)) == list(range(1, 1000, 100))
    with pytest.raises(ValueError, match="steps"):
        ddim_timesteps(1)


def test_posterior_mean_matches_importance_sampling():
    prior = random_mixture(3, 2, spread=1.0, variance=0.2, rng=1)
    a = 0.4
    x = torch.tensor([[0.3, -0.2]], dtype=DTYPE)
    exact = prior.posterior_mean(x, a)[0].numpy()
    x0, _ = prior.sample(400_000, rng=2)
    logw = -0.5 * ((x.numpy() - np.sqrt(a) * x0) ** 2).sum(1) / (1 - a)
    w = np.exp(logw - logw.max())
    mc = (w[:, None] * x0).sum(0) / w.sum()
    assert np.abs(mc - exact).max() < 1e-2


def test_single_gaussian_ddim_without_skip_recovers_mean_and_variance():
    g = np.random.default_rng(0)
    mu, s2 = g.standard_normal(3), 0.5
    prior = GaussianMixturePrior(mu[None], np.array([s2]), np.ones(1), np.zeros(1, dtype=int))
    eps = torch.as_tensor(g.standard_normal((4000, 3)))
    x = ld3m_sample(prior, torch.zeros(4000, 3, dtype=DTYPE), np.zeros(4000, dtype=int), eps, steps=50,
                    schedule="none", start="noise").x.numpy()
    assert np.abs(x.mean(0) - mu).max() < 0.05
    assert np.abs(x.var(0) / s2 - 1).max() < 0.15


def test_autograd_matches_finite_differences():
    prior = random_mixture(3, 4, rng=2)
    g = np.random.default_rng(3)
    z, eps, tgt = g.standard_normal(4), g.standard_normal(4), g.standard_normal(4)

    def loss(zz):
        with torch.no_grad():
            out = ld3m_sample(prior, torch.as_tensor(zz)[None], [0], torch.as_tensor(eps)[None], steps=10).x[0]
        return float(((out.numpy() - tgt) ** 2).sum())

    zt = torch.as_tensor(z).requires_grad_(True)
    out = ld3m_sample(prior, zt[None], [0], torch.as_tensor(eps)[None], steps=10).x[0]
    ((out - torch.as_tensor(tgt)) ** 2).sum().backward()
    assert np.allclose(zt.grad.numpy(), fd_gradient(loss, z, h=1e-6), rtol=1e-4, atol=1e-6)
    norm, per_step = latent_gradient(prior, z, eps, tgt, steps=10)
    assert norm == pytest.approx(float(zt.grad.norm()))
    assert per_step.shape == (11,)


def test_sampler_is_deterministic_and_skip_zero_ignores_z_beyond_the_start():
    prior = random_mixture(rng=4)
    z, eps = torch.randn(2, 8, dtype=DTYPE), torch.randn(2, 8, dtype=DTYPE)
    a = ld3m_sample(prior, z, [0, 0], eps, steps=10).x
    b = ld3m_sample(prior, z.clone(), [0, 0], eps.clone(), steps=10).x
    assert torch.equal(a, b)
    # with start="noise" and no skip, z has no effect at all
    c = ld3m_sample(prior, z, [0, 0], eps, steps=10, schedule="none", start="noise").x
    d = ld3m_sample(prior, 5 * z, [0, 0], eps, steps=10, schedule="none", start="noise").x
    assert torch.equal(c, d)
    assert not torch.equal(ld3m_sample(prior, 5 * z, [0, 0], eps, steps=10).x, a)


def test_naive_gradient_vanishes_and_the_skip_restores_it():
    prior = random_mixture(rng=0)
    g = np.random.default_rng(0)
    z, eps = g.standard_normal(8), g.standard_normal(8)
    tgt = prior.means[0].numpy()
    naive = [latent_gradient(prior, z, eps, tgt, steps=S, schedule="none")[0] for S in (10, 50)]
    ld3m = [latent_gradient(prior, z, eps, tgt, steps=S)[0] for S in (10, 50)]
    assert ld3m[0] > 10 * naive[0] and ld3m[1] > 10 * naive[1]


def test_dm_loss_zero_at_equal_means_and_permutation_invariant():
    g = torch.Generator().manual_seed(0)
    phi = lambda x: x  # linear embedding: equal class means give zero loss
    real = torch.randn(20, 4, dtype=DTYPE, generator=g)
    ry = np.repeat([0, 1], 10)
    syn = torch.stack([real[:10].mean(0), real[10:].mean(0)])
    assert float(dm_loss(phi, real, ry, syn, [0, 1], 2)) == pytest.approx(0, abs=1e-24)
    phi = random_embedding(4, generators=[g])
    syn = torch.randn(6, 4, dtype=DTYPE, generator=g)
    sy = np.array([0, 0, 0, 1, 1, 1])
    perm = [2, 0, 1, 5, 3, 4]
    assert float(dm_loss(phi, real[None], ry, syn[None], sy, 2)) == pytest.approx(
        float(dm_loss(phi, real[None], ry, syn[perm][None], sy, 2)))
    with pytest.raises(ValueError, match="every class"):
        dm_loss(phi, real[None], ry, syn[None], np.zeros(6, dtype=int), 2)


def _toy():
    prior = GaussianMixturePrior(np.array([[2.0, 0], [-2.0, 0]]), np.array([0.1, 0.1]), np.ones(2), np.array([0, 1]))
    x, y = prior.sample(200, rng=0)
    return prior, x, y


def test_distill_batched_seeds_equal_single_runs_and_lower_the_loss():
    prior, x, y = _toy()
    both = distill(prior, x, y, iterations=15, lr=0.1, seeds=(0, 1), batch_per_class=16)
    one = distill(prior, x, y, iterations=15, lr=0.1, seeds=(1,), batch_per_class=16)
    assert np.allclose(both.x[1], one.x[0], atol=1e-12)
    assert both.x.shape == (2, 2, 2)
    for m in ("LD3M", "pixel space"):
        r = distill(prior, x, y, method=m, iterations=60, lr=0.1, seeds=(0,), batch_per_class=16)
        assert r.losses[-10:].mean() < r.losses[:10].mean()


def test_distill_a_grid_of_rates_equals_one_run_per_rate():
    # referee: the chapter tunes by running a whole grid as one batch; each (rate, seed) entry must
    # be its own run, for the latent methods (embedding group shared) and pixel space alike.
    prior, x, y = _toy()
    for m in ("LD3M", "naive latents", "pixel space"):
        grid = distill(prior, x, y, method=m, iterations=12, lr=(0.03, 0.3), seeds=(0, 1), batch_per_class=16,
                       snapshot_every=5)
        assert grid.x.shape == (2, 2, 2, 2) and grid.snapshots[0].shape == (2, 2, 2, 2)
        for i, lr in enumerate((0.03, 0.3)):
            one = distill(prior, x, y, method=m, iterations=12, lr=lr, seeds=(0, 1), batch_per_class=16)
            assert np.allclose(grid.x[i], one.x, atol=1e-12), (m, lr)
        assert not np.allclose(grid.x[0], grid.x[1])


def test_posterior_mean_matches_the_componentwise_formula():
    prior = random_mixture(rng=2)
    x = torch.randn(5, 8, dtype=DTYPE)
    for a in (0.01, 0.5, 0.99):
        var = a * prior.variances + 1 - a
        diff = x[:, None, :] - a ** 0.5 * prior.means
        resp = torch.softmax(prior.log_weights - 0.5 * (diff ** 2).sum(-1) / var - 4 * torch.log(var), -1)
        ref = (resp[..., None] * (prior.means + (a ** 0.5 * prior.variances / var)[:, None] * diff)).sum(-2)
        assert torch.allclose(prior.posterior_mean(x, a), ref, atol=1e-12)


@pytest.mark.parametrize("call, name", [
    (lambda: distill(*_toy(), lr=(0.1, -1.0)), "lr"),
    (lambda: skip_weights(1), "steps"),
    (lambda: skip_weights(5, "exp"), "schedule"),
    (lambda: skip_weights(5, kappa=-1.0), "kappa"),
    (lambda: linear_alphas_cumprod(beta_start=0.0), "beta_start"),
    (lambda: random_mixture(0), "n_components"),
    (lambda: GaussianMixturePrior(np.zeros((2, 2)), [0.1, -1], np.ones(2), np.array([0, 1])), "variances"),
    (lambda: GaussianMixturePrior(np.full((2, 2), np.nan), [0.1, 1], np.ones(2), np.array([0, 1])), "means"),
    (lambda: GaussianMixturePrior(np.zeros((2, 2)), [0.1, 1], np.ones(3), np.array([0, 1])), "weights"),
    (lambda: ld3m_sample(random_mixture(rng=0), np.zeros((2, 3)), [0, 0], np.zeros((2, 3))), "z"),
    (lambda: ld3m_sample(random_mixture(rng=0), np.zeros((2, 8)), [0, 0], np.zeros((3, 8))), "noise"),
    (lambda: ld3m_sample(random_mixture(rng=0), np.zeros((2, 8)), [0, 5], np.zeros((2, 8))), "y"),
    (lambda: ld3m_sample(random_mixture(rng=0), np.zeros((2, 8)), [0, 0], np.zeros((2, 8)), guidance=np.inf),
     "guidance"),
    (lambda: ld3m_sample(random_mixture(rng=0), np.zeros((2, 8)), [0, 0], np.zeros((2, 8)), start="x"), "start"),
    (lambda: distill(*_toy(), method="GLaD"), "method"),
    (lambda: distill(*_toy(), lr=0.0), "lr"),
    (lambda: distill(*_toy(), iterations=-1), "iterations"),
    (lambda: distill(_toy()[0], np.zeros((0, 2)), np.zeros(0)), "real"),
])
def test_bad_input_names_the_argument(call, name):
    with pytest.raises(ValueError, match=name):
        call()


def test_latent_gradient_rows_are_independent_draws():
    prior = random_mixture(rng=5)
    g = np.random.default_rng(5)
    z, eps, tgt = g.standard_normal((3, 8)), g.standard_normal((3, 8)), g.standard_normal((3, 8))
    norms, per = latent_gradient(prior, z, eps, tgt, steps=10)
    for i in range(3):
        n1, p1 = latent_gradient(prior, z[i], eps[i], tgt[i], steps=10)
        assert n1 == pytest.approx(norms[i]) and np.allclose(p1, per[i])


def test_naive_latent_gradient_is_the_start_factor_times_the_state_gradient():
    # referee: without the skip, z enters only through q_sample, so grad_z = sqrt(abar_tauS) dL/dx_tauS
    # exactly; this is what the chapter's decomposition of the vanishing gradient rests on.
    prior = random_mixture(rng=1)
    g = np.random.default_rng(1)
    z, eps, tgt = g.standard_normal((4, 8)), g.standard_normal((4, 8)), g.standard_normal((4, 8))
    for S in (10, 50):
        norms, per = latent_gradient(prior, z, eps, tgt, steps=S, schedule="none")
        start = np.sqrt(linear_alphas_cumprod()[ddim_timesteps(S)[-1]])
        assert np.allclose(norms, start * per[:, 0], rtol=1e-12)
        linear, _ = latent_gradient(prior, z, eps, tgt, steps=S)
        assert not np.allclose(linear, start * per[:, 0], rtol=1e-2)
