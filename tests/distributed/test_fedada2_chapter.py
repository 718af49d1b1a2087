"""Chapter 21's experiment design: fair tuning, held-out seeds, figure builders' inputs."""
import pytest

from optbook.distributed import fedada2_chapter as ch
from optbook.distributed.fedada2 import METHODS


def test_every_method_gets_a_grid_of_the_same_size_and_held_out_seeds():
    sizes = {m: len(g["client_lr"]) * len(g["server_lr"]) for m, g in ch.GRIDS.items()}
    assert set(sizes) == set(METHODS) and len(set(sizes.values())) == 1
    assert not set(ch.TUNING_SEEDS) & set(ch.CLAIM_SEEDS)
    assert len(ch.CLAIM_SEEDS) >= 5
    # the sm3 premise's one-accumulator variant is tuned with the same budget
    assert len(ch.SCALAR_GRID["client_lr"]) * len(ch.SCALAR_GRID["server_lr"]) == sizes["FedAda2"]


def test_fast_tuning_covers_every_method_and_is_cached():
    t = ch.tunings(True)
    assert list(t) == list(METHODS) and all(x.size == 4 for x in t.values())
    assert ch.tunings(True) is t


def test_heterogeneity_raises_client_dissimilarity():
    assert ch.dissimilarity(0, 1.0) > 4 * ch.dissimilarity(0, 0.0)


def test_cost_figure_follows_the_accounting():
    fig = ch.cost_figure(((4, 6),), clients_per_round=2)
    sent, state = fig.data[0].y, fig.data[1].y
    assert list(sent) == pytest.approx([2 * 24 * 2 / 1e6] * 2 + [3 * 24 * 2 / 1e6] + [2 * 24 * 2 / 1e6] * 2)
    assert list(state) == pytest.approx([0, 0, 24 / 1e6, 24 / 1e6, 10 / 1e6])
    with pytest.raises(ValueError, match="clients_per_round"):
        ch.cost_figure(clients_per_round=0)


@pytest.mark.parametrize("call, name", [
    (lambda: ch.tuned_runs(heterogeneity=-1.0), "heterogeneity"),
    (lambda: ch.tuned_runs(local_steps=0), "local_steps"),
    (lambda: ch.tunings(True, heterogeneity=float("nan")), "heterogeneity"),
    (lambda: ch.best("FedNova"), "method"),
])
def test_bad_input_is_refused_before_any_run(call, name):
    with pytest.raises(ValueError, match=name):
        call()
