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


@pytest.mark.parametrize("call, match", [
    (lambda: ch.proxy_members([("importance", 0, 0.01)], noise=np.nan, maxiter=5), "noise"),
    (lambda: ch.proxy_members([("importance", 0, 0.01)], rank=2.5, maxiter=5), "rank"),
    (lambda: ch.proxy_members([("importance", 0, 0.01)], maxiter=-1), "maxiter"),
    (lambda: ch.proxy_members([("importance", 2.5, 0.01)], maxiter=5), "seed"),
    (lambda: ch.proxy_members([("importance", 0, np.nan)], maxiter=5), "lr"),
    (lambda: ch.proxy_members([("top", 0, 0.01)], maxiter=5), "rule"),
    (lambda: ch.proxy_run("importance", seed=-1, maxiter=5), "seed"),
    (lambda: ch.tuning("top", fast=True), "rule"),
    (lambda: ch.tuned_runs("top", fast=True), "rule"),
    (lambda: ch.spectrum_figure(3.0, ch.SPECTRUM_FRAMES), "frame"),
    (lambda: ch.spectrum_figure(-1.0, 0), "noise"),
    (lambda: ch.overlap_figure(1.0, 4, 0), "tau"),
    (lambda: ch.memory_figure(m=0), "m"),
    (lambda: ch.mlp_proxy(hidden=0), "hidden"),
    (lambda: ch.mlp_proxy(batch=2.5), "batch"),
    (lambda: ch.mlp_proxy("full", lr=np.nan), "lr"),
])
def test_bad_input_is_refused(call, match):
    with pytest.raises(ValueError, match=match):
        call()


@pytest.mark.parametrize("call, match", [
    (lambda: ch.tail_loss(np.ones(3)), "run"), (lambda: ch.geometric_loss(None), "run"),
    (lambda: ch.mean_overlap([1.0]), "run"), (lambda: ch.edge_note(3), "tunings"),
    (lambda: ch.mlp_numbers([]), "traces"),
])
def test_wrong_types_are_refused(call, match):
    with pytest.raises(TypeError, match=match):
        call()
