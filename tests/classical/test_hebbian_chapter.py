"""Tests of chapter 05's experiments, figures and claims helpers (optbook.classical.hebbian_chapter),
and of bad input for every public function of the chapter's two modules."""
import inspect
import math

import numpy as np
import pytest

from optbook.classical import hebbian as h
from optbook.classical import hebbian_chapter as ch

P0 = h.STARTS[3]


# --------------------------------------------------------------------------- the book's experiments


def test_wilson_interval_matches_its_closed_form():
    k, n, z = 37, 50, 1.959963984540054
    phat = k / n
    centre = (phat + z**2 / (2 * n)) / (1 + z**2 / n)
    half = z / (1 + z**2 / n) * math.sqrt(phat * (1 - phat) / n + z**2 / (4 * n**2))
    rate, lo, hi = ch.success_interval(k, n)
    assert rate == phat and lo == pytest.approx(centre - half, rel=1e-9) and hi == pytest.approx(centre + half, rel=1e-9)
    assert ch.success_interval(0, 10)[1] == 0.0 and ch.success_interval(10, 10)[2] == pytest.approx(1.0)
    assert ch.success_interval(10, 10)[1] > 0.6  # a perfect record still has an honest lower bound
    with pytest.raises(ValueError, match="n_success"):
        ch.success_interval(11, 10)


def test_success_rates_pool_the_seeds():
    rates = ch.success_rates("STDP", (0.05,), seeds=(0, 1), n_replicas=40)[0.05]
    singles = [ch.success_rates("STDP", (0.05,), seeds=(s,), n_replicas=40)[0.05]["rate"] for s in (0, 1)]
    assert rates["n"] == 80 and rates["rate"] == pytest.approx(np.mean(singles))
    assert rates["seed_min"] == min(singles) and rates["low"] <= rates["rate"] <= rates["high"]


def test_sci_writes_powers_of_ten_for_prose():
    assert ch.sci(4.3e16) == "4 \u00d7 10\u00b9\u2076" and ch.sci(8.8e-5, 2) == "8.8 \u00d7 10\u207b\u2075"
    assert ch.sci(1e-4) == "10\u207b\u2074" and ch.sci(0.0) == "0" and ch.sci(3.0) == "3"


def test_fitted_rate_of_the_replicator_is_log_one_plus_alpha():
    res = h.replicator(P0, alpha=0.05, n_steps=800)
    assert ch.fitted_rate(res.trace) == pytest.approx(-np.log1p(0.05) / 0.05, rel=1e-3)


def test_tuning_grids_have_their_best_inside():
    """The protocol's check: a best setting on the edge of its grid means the grid is too narrow."""
    for method in ("STDP", "projected SGD"):
        t = ch.tune_floor(method, fast=True)
        assert not t.on_edge(), (method, t.best)
        assert t.size == len(ch.FLOOR_GRID) and t.seeds == ch.FAST_TUNING_SEEDS
    assert not set(ch.FAST_TUNING_SEEDS) & set(ch.FAST_SEEDS) and not set(ch.TUNING_SEEDS) & set(ch.SEEDS)


def test_a_faster_step_decay_gives_projected_sgd_a_lower_floor():
    floors = [r["median"] for r in ch.schedule_floors(seeds=(0,), n_replicas=40).values()]
    assert ch.DECAYS[0] == 1.0 and floors[0] > 1e-5  # the fixed step: a floor
    assert all(b < a for a, b in zip(floors, floors[1:]))


def test_to_triangle_maps_vertices_to_corners_and_refuses_bad_points():
    x, y = ch.to_triangle(np.eye(3))
    np.testing.assert_allclose(x, [0.5, 0.0, 1.0])
    np.testing.assert_allclose(y, [np.sqrt(3) / 2, 0.0, 0.0], atol=1e-15)
    for bad in ([np.nan, 0.5, 0.5], [], np.empty((0, 3)), [0.5, 0.5], np.ones((2, 2, 3)) / 3, [0.5, 0.6, 0.1],
                [np.inf, 0.0, 0.0]):
        with pytest.raises(ValueError, match=r"\bp\b"):
            ch.to_triangle(bad)


# --------------------------------------------------------------------------- figures and explorers


def test_explorer_figures_change_with_their_knobs():
    a, b = ch.simplex_figure(0.05), ch.simplex_figure(0.2)
    assert len(a.data) == len(b.data) == 8
    assert list(a.data[3].x) != list(b.data[3].x)
    f0, f1 = ch.phases_figure(0.0), ch.phases_figure(1.0)
    assert [t.name for t in f0.data] == ["STDP", "noisy EG", "replicator", "projected SGD"]
    assert not np.allclose(f0.data[3].y, f1.data[3].y)
    assert ch.EXPLORER_PHASES.render(noise_scale=1.0).data


def test_slider_figures_have_one_frame_per_value():
    fig = ch.phases_slider_figure(values=(0.0, 1.0), active=1.0)
    assert [fr.name for fr in fig.frames] == ["0", "1"]


def test_fitted_rate_needs_one_learning_rate():
    run = h.projected_sgd(P0, alpha=[0.01, 0.02], n_steps=20, n_replicas=2, rng=3)
    with pytest.raises(ValueError, match="one learning rate"):
        ch.fitted_rate(run.trace)


def test_slider_figures_refuse_an_active_value_they_do_not_have():
    with pytest.raises(ValueError, match="active"):
        ch.simplex_slider_figure(values=(0.05, 0.1), active=0.2)


# --------------------------------------------------------------------------- bad input


# Every public function of the two modules, every argument that is not a flag or a label: NaN,
# infinities, empty arrays, wrong shapes, out-of-range numbers and unknown choices must raise a
# ValueError that names the argument (before any long computation starts).
_ARRAYS = {"p0": P0, "p": P0, "lam": h.LAMBDA, "w": np.ones(3), "alphas": [0.01, 0.01]}
_VALID = dict(_ARRAYS, method="STDP", n_success=5, n=10, x=1.0)
_LABELS = {"method_name", "name", "fast", "control", "to_target"}  # free text and flags


def _valid_objects():
    run = h.stdp(P0, alpha=0.05, n_steps=20, n_replicas=3, rng=0)
    return {"result": run, "trace": run.trace}


def _bad_values(name, default):
    if name in _ARRAYS:
        return [[], [np.nan, 0.5, 0.5], [np.inf, 0.5, 0.5], np.ones((2, 2, 2))]
    if name in ("result", "trace"):
        return [1.0, "x"]
    if name in ("spikes", "method"):
        return ["no such choice"]
    if name == "x":
        return [np.nan, np.inf]
    if isinstance(default, tuple) or name in ("alphas", "values", "seeds", "methods"):
        return [(), (np.nan, np.nan), ("no such choice",)]
    if isinstance(default, float):
        return [np.nan, np.inf, -1.0]
    if isinstance(default, int) or name in ("target", "seed", "n_success", "n", "d"):
        return [-1]
    if name in ("gamma", "w0"):
        return [np.full((3, 3), np.nan), np.ones((2, 5))]
    if name == "rng":
        return [-1]
    raise AssertionError(f"no bad values for the argument {name!r}: add them to the test")


def _public_functions():
    for mod in (h, ch):
        for name, f in sorted(vars(mod).items()):
            if name.startswith(("_", "claim_")) or isinstance(f, type) or not callable(f):
                continue
            if getattr(f, "__module__", None) == mod.__name__:
                yield pytest.param(f, id=f"{mod.__name__.rsplit('.', 1)[1]}.{name}")


@pytest.mark.parametrize("func", list(_public_functions()))
def test_every_public_function_rejects_bad_input_by_name(func):
    objects = _valid_objects()
    params = inspect.signature(func).parameters
    required = {n: objects.get(n, _VALID.get(n)) for n, p in params.items() if p.default is p.empty}
    missing = [n for n, v in required.items() if v is None]
    assert not missing, f"no valid value for the required arguments {missing}: add them to the test"
    checked = 0
    for name, prm in params.items():
        if name in _LABELS or isinstance(prm.default, bool):
            continue
        for bad in _bad_values(name, prm.default):
            kwargs = dict(required, **{name: bad})
            with pytest.raises(ValueError, match=rf"\b{name}\b"):
                func(**kwargs)
            checked += 1
    if not checked:
        assert all(n in _LABELS or isinstance(p.default, bool) for n, p in params.items())
