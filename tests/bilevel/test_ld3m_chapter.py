"""Chapter 26's experiment design: fair grids, held-out seeds, figure inputs."""
import pytest

from optbook.bilevel import ld3m_chapter as ch


def test_every_method_gets_a_grid_of_the_same_size_and_held_out_seeds():
    assert len({len(g) for g in ch.GRIDS.values()}) == 1
    assert not set(ch.TUNING_SEEDS) & set(ch.CLAIM_SEEDS)
    assert len(ch.CLAIM_SEEDS) >= 5


def test_prior_fits_the_digits():
    d = ch.digits()
    assert d["prior"].n_components == 30 and d["prior"].dim == 16
    assert d["x"]["test"].shape[1] == 16


@pytest.mark.parametrize("call, name", [
    (lambda: ch.gradient_figure(steps=7), "steps"),
    (lambda: ch.distillation_figure(iteration=-10), "iteration"),
    (lambda: ch.accuracy(ch.digits()["x"]["train"][:10], list(range(10)), split="train"), "split"),
])
def test_bad_input_is_refused(call, name):
    with pytest.raises(ValueError, match=name):
        call()
