import json

import numpy as np
import pytest

from optbook.core import Trace


def test_record_and_arrays():
    tr = Trace("m")
    tr.record(objective=3.0, grad_norm=1.0)
    tr.record(objective=2.0, step_size=0.5, gap=1.5)
    assert len(tr) == 2
    np.testing.assert_array_equal(tr.iteration, [0, 1])
    np.testing.assert_array_equal(tr.objective, [3.0, 2.0])
    assert np.isnan(tr["gap"][0]) and tr["gap"][1] == 1.5  # new series padded backwards
    assert np.isnan(tr.grad_norm[1])
    assert np.all(np.diff(tr.time) >= 0)


def test_update_last_and_first_below():
    tr = Trace("m")
    for v in (1.0, 0.1, 0.01):
        tr.record(objective=v)
    tr.update_last(step_size=0.3, extra=7.0)
    assert tr.step_size[-1] == 0.3 and tr["extra"][-1] == 7.0 and np.isnan(tr["extra"][0])
    assert tr.first_below("objective", 0.1) == 1
    assert tr.first_below("objective", 1e-9) is None
    with pytest.raises(ValueError):
        Trace("empty").update_last(step_size=1.0)


def test_roundtrip_dict_json():
    tr = Trace("m", meta={"seed": 1})
    tr.record(objective=1.0, foo=2.0)
    tr.record(objective=0.5)
    back = Trace.from_dict(json.loads(json.dumps(tr.to_dict())))
    assert back.method == "m" and back.meta == {"seed": 1}
    np.testing.assert_array_equal(back.objective, tr.objective)
    np.testing.assert_array_equal(back["foo"], tr["foo"])


def test_missing_series_is_a_clear_error():
    tr = Trace("m")
    tr.record(objective=1.0)
    with pytest.raises(KeyError, match="no series 'gap'"):
        tr["gap"]


def test_from_dict_rejects_ragged():
    with pytest.raises(ValueError, match="different lengths"):
        Trace.from_dict({"method": "m", "objective": [1.0, 2.0], "gap": [1.0]})


@pytest.mark.parametrize("log", [False, True])
def test_thin_indices_keep_ends_and_bound(log):
    from optbook.core import thin_indices

    idx = thin_indices(10_000, 300, log=log)
    assert idx[0] == 0 and idx[-1] == 9_999 and len(idx) <= 302
    assert np.all(np.diff(idx) > 0)
    if log:  # denser at the start
        assert np.sum(idx < 100) > np.sum((idx >= 9_000) & (idx < 9_100))
    np.testing.assert_array_equal(thin_indices(5, 300), np.arange(5))
    with pytest.raises(ValueError, match="max_points"):
        thin_indices(10, 1)
    with pytest.raises(ValueError, match="n must be"):
        thin_indices(0)


def test_thinned_trace_keeps_rows_of_every_series():
    tr = Trace("long")
    for k in range(1000):
        tr.record(objective=float(k), gap=2.0 * k)
    th = tr.thinned(50)
    assert len(th) <= 52 and th.method == "long"
    np.testing.assert_array_equal(th["gap"], 2.0 * th.objective)
    np.testing.assert_array_equal(th.iteration, th.objective)
    assert tr.thinned(5000) is tr


def test_run_recorder_stops_on_the_named_series_and_builds_the_result():
    from optbook.core import RunRecorder

    seen = []
    rec = RunRecorder("m", stop="gap", tol=1e-3, stops=("gap", "grad_norm", "decrement"), f_star=1.0,
                      callback=seen.append)
    assert not rec.record(np.zeros(2), 2.0, 5.0, decrement=0.5)
    rec.set_step(0.5)
    assert rec.record(np.ones(2), 1.0005, 0.1)
    res = rec.result(np.ones(2), 1.0005, success=True, message="done", nfev=2, njev=2)
    assert res.nit == 1 and len(seen) == 2 and res.iterates.shape == (2, 2)
    np.testing.assert_allclose(res.trace["gap"], [1.0, 0.0005])
    assert res.trace.step_size[0] == 0.5 and np.isnan(res.trace["decrement"][1])
    by_name = RunRecorder("m", stop="decrement", tol=0.6, stops=("decrement",))
    assert by_name.record(np.zeros(1), 0.0, 9.0, decrement=0.5)


@pytest.mark.parametrize("kwargs, match", [
    (dict(stop="other"), "stop must be one of"), (dict(tol=0.0), "tol must be positive"),
    (dict(stop="gap"), "needs f_star"), (dict(f_star=float("inf")), "f_star must be finite"),
    (dict(callback=3), "callback must be callable"),
])
def test_run_recorder_bad_input(kwargs, match):
    from optbook.core import RunRecorder

    args = dict(stop="grad_norm", tol=1e-6, stops=("gap", "grad_norm"))
    args.update(kwargs)
    with pytest.raises(ValueError, match=match):
        RunRecorder("m", **args)
