import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from optbook.core import loglog_slope, semilog_slope


@given(st.floats(-3, 3), st.floats(0.1, 10))
@settings(max_examples=30, deadline=None)
def test_loglog_slope_recovers_exponent(a, c):
    x = np.logspace(0, 3, 12)
    assert loglog_slope(x, c * x**a) == pytest.approx(a, abs=1e-9)


def test_semilog_slope_recovers_rate():
    k = np.arange(50.0)
    assert semilog_slope(k, 3.0 * np.exp(-0.02 * k)) == pytest.approx(-0.02, rel=1e-9)


def test_non_positive_points_are_left_out():
    x = np.array([1.0, 10.0, 100.0, 1000.0])
    y = np.array([1.0, 0.1, 0.01, 0.0])  # a run that hit zero at the end
    assert loglog_slope(x, y) == pytest.approx(-1.0)
    assert semilog_slope(np.arange(4.0), np.array([1.0, np.nan, 0.25, -1.0])) == pytest.approx(-np.log(2))


@pytest.mark.parametrize("call", [
    lambda: loglog_slope([1.0, 2.0], [1.0]),
    lambda: loglog_slope([1.0, 2.0], [0.0, 0.0]),
    lambda: semilog_slope([[1.0]], [[1.0]]),
    lambda: semilog_slope([1.0, 2.0], [1.0, -1.0]),
])
def test_bad_input(call):
    with pytest.raises(ValueError):
        call()
