import numpy as np
import pytest

from optbook.core import as_rng, check_in_range, check_int, check_matrix, check_positive, check_spd, check_vector
from optbook.core.validate import check_choice


def test_as_rng_is_deterministic():
    assert as_rng(3).standard_normal() == as_rng(3).standard_normal()
    g = np.random.default_rng(1)
    assert as_rng(g) is g
    with pytest.raises(TypeError, match="rng"):
        as_rng("seed")
    with pytest.raises(ValueError, match="non-negative"):
        as_rng(-1)


@pytest.mark.parametrize("call, match", [
    (lambda: check_vector([[1.0]], "x0"), "x0 must be a 1-D array"),
    (lambda: check_vector([1.0, np.inf], "x0"), "x0 must be finite"),
    (lambda: check_vector([1.0], "x0", 2), "x0 must have length 2"),
    (lambda: check_vector(["a"], "x0"), "x0"),
    (lambda: check_matrix([1.0, 2.0], "A"), "A must be a non-empty 2-D"),
    (lambda: check_matrix(np.ones((2, 3)), "A", square=True), "A must be square"),
    (lambda: check_spd(np.array([[1.0, 0.0], [0.0, -1.0]]), "B0"), "B0 must be positive definite"),
    (lambda: check_spd(np.array([[1.0, 1.0], [0.0, 1.0]]), "B0"), "B0 must be symmetric"),
    (lambda: check_positive(0.0, "tol"), "tol must be positive"),
    (lambda: check_positive(float("nan"), "tol"), "tol must be finite"),
    (lambda: check_positive(True, "tol"), "tol must be a real number"),
    (lambda: check_in_range(1.0, "c2", 0.0, 1.0), r"c2 must lie in \(0.0, 1.0\)"),
    (lambda: check_int(2.5, "maxiter"), "maxiter must be an integer"),
    (lambda: check_int(-1, "maxiter"), "maxiter must be >= 0"),
    (lambda: check_choice("x", "stop", ("a", "b")), "stop must be one of"),
])
def test_errors_name_the_argument(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_valid_values_pass_through():
    np.testing.assert_array_equal(check_vector([1, 2], "x"), [1.0, 2.0])
    assert check_in_range(1.0, "c", 0.0, 1.0, closed=(False, True)) == 1.0
    assert check_positive(0, "t", allow_zero=True) == 0.0
