"""Chapter 27's experiments: the explorers' figures, the polygon clipper, the selection-cost table."""
import numpy as np
import pytest

from optbook.decisions import colts_chapter as ch


def test_polygon_clip_matches_known_triangle():
    poly = ch._polygon(np.array([[1.0, 1.0]]), np.array([1.0]))
    # box [0,1]^2 cut by a1 + a2 <= 1: the triangle (0,0), (1,0), (0,1)
    pts = {tuple(np.round(p, 9)) for p in poly[:-1]}
    assert pts == {(0.0, 0.0), (1.0, 0.0), (0.0, 1.0)}


def test_optimism_inflation_scales():
    assert ch.optimism_inflation(4, "posterior") == 1.0
    assert ch.optimism_inflation(16) > ch.optimism_inflation(2) > 1.0
    with pytest.raises(ValueError, match="scale"):
        ch.optimism_inflation(4, "huge")


def test_picture_figures_answer_and_reject_bad_draw():
    fig = ch.picture_figure(2)
    assert len(fig.data) == 8
    assert len(ch.picture_slider_figure().frames) == len(ch.DRAWS)
    with pytest.raises(ValueError, match="draw"):
        ch.picture_figure(99)


def test_selection_times_table():
    rows = ch.selection_times(dims=(3,), rounds=2, seeds=(0,))
    assert rows[0]["d = m"] == 3 and rows[0]["ratio"] > 0


def test_optimism_check_rejects_bad_fraction():
    with pytest.raises(ValueError, match="fraction"):
        ch.optimism_check("radius", fraction=0.0)
