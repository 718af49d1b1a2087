"""Chapter 17's experiments: the proxy's batched runs, the tuning, the figures."""
import numpy as np
import pytest
import torch

from optbook.training import lowrank_sampling_chapter as ch


def test_proxy_batch_matches_proxy_run_and_shares_the_noise():
    run = ch.proxy_batch("importance", (0, 1), (0.01, 0.02), maxiter=200)
    for b, (seed, lr) in enumerate(((0, 0.01), (0, 0.02), (1, 0.01), (1, 0.02))):
        one = ch.proxy_run("importance", seed, lr=lr, maxiter=200)
        assert np.allclose(run.x[b], one.x, atol=1e-9)
    # every rule sees the same gradient noise: the full-Adam runs at two seeds differ, at one seed not
    a = ch.proxy_batch("full", (0,), (0.01,), maxiter=50)
    b = ch.proxy_batch("full", (0,), (0.01,), maxiter=50)
    assert np.array_equal(a.x, b.x)


def test_frozen_subspace_mechanism_on_a_short_run():
    run = {r: ch.proxy_batch(r, (0,), (0.01,), maxiter=1500) for r in ("dominant", "importance")}
    assert ch.mean_overlap(run["dominant"], 20)[0] > ch.mean_overlap(run["importance"], 20)[0] + 0.2
    assert ch.tail_loss(run["importance"])[0] < ch.tail_loss(run["dominant"])[0]
    quiet = ch.proxy_batch("dominant", (0,), (0.01,), noise=0.0, maxiter=1500)
    assert quiet.losses[-1, 0] < 1e-3 * run["dominant"].losses[-1, 0]         # no noise: nothing freezes


def test_scores():
    run = ch.proxy_batch("full", (0,), (0.01, 0.02), maxiter=ch.TAIL + 10)
    assert np.allclose(ch.tail_loss(run), run.losses[-ch.TAIL:].mean(axis=0))
    g = ch.geometric_loss(run)
    assert np.all(g <= run.losses.max(axis=0)) and np.all(g >= run.losses.min(axis=0))


def test_mlp_proxy_trains_and_leaves_the_global_generator_alone():
    before = torch.get_rng_state()
    tr = ch.mlp_proxy("importance", steps=60)
    assert tr.objective[-1] < tr.objective[0]
    assert torch.equal(torch.get_rng_state(), before)
    assert np.array_equal(tr.objective, ch.mlp_proxy("importance", steps=60).objective)


def test_figures_build():
    assert len(ch.spectrum_slider_figure().frames) == ch.SPECTRUM_FRAMES
    assert len(ch.memory_figure(256, 1024, 32).data) == 2
    assert ch.memory_rows()[0]["full Adam (M floats)"] == pytest.approx(2 * 4096 * 4096 / 1e6)
