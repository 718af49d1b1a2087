import numpy as np
import pytest

from optbook.core import Tuning, grid_search


def test_grid_search_scores_the_product_grid_by_the_median_over_seeds():
    calls = []

    def score(seed, a, b):
        calls.append((seed, a, b))
        return a * 10 + b + (100 if seed == 1 else 0)  # seed 1 is an outlier: the median ignores it

    t = grid_search("m", score, {"a": [1, 2], "b": [0, 5]}, seeds=[0, 1, 2])
    assert [tuple(s.values()) for s in t.settings] == [(1, 0), (1, 5), (2, 0), (2, 5)]
    np.testing.assert_allclose(t.scores, [10, 15, 20, 25])
    assert t.best == {"a": 1, "b": 0} and t.best_score == 10 and len(calls) == 12
    assert t.per_seed.shape == (4, 3)


def test_higher_is_better_nan_ranks_last_and_edges_are_flagged():
    t = grid_search("m", lambda seed, lr: np.nan if lr > 1 else lr, {"lr": [0.01, 0.1, 1.0, 10.0]}, [0],
                    higher_is_better=True)
    assert t.best == {"lr": 1.0}
    np.testing.assert_allclose(t.best_so_far(), [0.01, 0.1, 1.0, 1.0])
    assert not t.on_edge()
    edge = grid_search("m", lambda seed, lr: lr, {"lr": [1, 2, 3]}, [0])
    assert edge.on_edge()  # best at the smallest value tried: widen the grid
    tied = grid_search("m", lambda seed, lr: 0.0, {"lr": [1, 2, 3]}, [0])
    assert tied.best == {"lr": 1} and not tied.on_edge()  # a tie reaching the interior is no edge


def test_bad_input():
    with pytest.raises(ValueError, match="grid"):
        grid_search("m", lambda seed: 0.0, {}, [0])
    with pytest.raises(ValueError, match="seeds"):
        grid_search("m", lambda seed, a: 0.0, {"a": [1]}, [])
    with pytest.raises(ValueError, match="one entry per setting"):
        Tuning("m", [{"a": 1}], np.array([1.0, 2.0]))
