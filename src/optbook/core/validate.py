"""Argument checks shared by every chapter.

Each helper raises a ``ValueError`` (or ``TypeError``) that names the offending argument and
says what was expected, so a reader sees "x0 must be finite" instead of a NaN twenty lines
later or an IndexError from deep inside numpy.
"""
from __future__ import annotations

from numbers import Real
from typing import Any

import numpy as np

RngLike = np.random.Generator | int | None


def as_rng(rng: RngLike, name: str = "rng") -> np.random.Generator:
    """Return a ``numpy.random.Generator`` from a generator, an integer seed or ``None``."""
    if isinstance(rng, np.random.Generator):
        return rng
    if rng is None or (isinstance(rng, (int, np.integer)) and not isinstance(rng, bool)):
        if rng is not None and rng < 0:
            raise ValueError(f"{name} must be a non-negative seed, got {rng}")
        return np.random.default_rng(rng)
    raise TypeError(f"{name} must be a numpy Generator, an int seed or None, got {type(rng).__name__}")


def check_vector(x: Any, name: str, dim: int | None = None) -> np.ndarray:
    """A finite 1-D float array, optionally of length ``dim`` (float64 arrays are not copied)."""
    if isinstance(x, np.ndarray) and x.dtype == np.float64 and x.ndim == 1 and x.size:
        # Fast path: this check runs inside every objective evaluation.
        if dim is not None and x.shape[0] != dim:
            raise ValueError(f"{name} must have length {dim}, got {x.shape[0]}")
        if not np.isfinite(x).all():
            raise ValueError(f"{name} must be finite (found NaN or inf)")
        return x
    try:
        arr = np.array(x, dtype=float)
    except (TypeError, ValueError) as err:
        raise ValueError(f"{name} must be a 1-D array of numbers") from err
    if arr.ndim != 1:
        raise ValueError(f"{name} must be a 1-D array, got shape {arr.shape}")
    if arr.size == 0:
        raise ValueError(f"{name} must not be empty")
    if dim is not None and arr.shape[0] != dim:
        raise ValueError(f"{name} must have length {dim}, got {arr.shape[0]}")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must be finite (found NaN or inf)")
    return arr


def check_matrix(
    a: Any, name: str, shape: tuple[int | None, int | None] | None = None, square: bool = False
) -> np.ndarray:
    """A finite 2-D float array (a copy); ``shape`` entries of ``None`` are free."""
    try:
        arr = np.array(a, dtype=float)
    except (TypeError, ValueError) as err:
        raise ValueError(f"{name} must be a 2-D array of numbers") from err
    if arr.ndim != 2 or arr.size == 0:
        raise ValueError(f"{name} must be a non-empty 2-D array, got shape {arr.shape}")
    if square and arr.shape[0] != arr.shape[1]:
        raise ValueError(f"{name} must be square, got shape {arr.shape}")
    if shape is not None:
        for axis, want in enumerate(shape):
            if want is not None and arr.shape[axis] != want:
                raise ValueError(f"{name} must have shape {shape}, got {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must be finite (found NaN or inf)")
    return arr


def check_spd(a: Any, name: str, dim: int | None = None) -> np.ndarray:
    """A symmetric positive-definite matrix (checked by a Cholesky factorisation)."""
    arr = check_matrix(a, name, shape=(dim, dim), square=True)
    scale = max(1.0, float(np.max(np.abs(arr))))
    if not np.allclose(arr, arr.T, rtol=1e-10, atol=1e-12 * scale):
        raise ValueError(f"{name} must be symmetric")
    try:
        np.linalg.cholesky(arr)
    except np.linalg.LinAlgError as err:
        raise ValueError(f"{name} must be positive definite") from err
    return 0.5 * (arr + arr.T)


def check_positive(value: Any, name: str, *, allow_zero: bool = False) -> float:
    """A finite real number that is > 0 (or >= 0 when ``allow_zero``)."""
    if isinstance(value, bool) or not isinstance(value, Real):
        raise ValueError(f"{name} must be a real number, got {value!r}")
    v = float(value)
    if not np.isfinite(v):
        raise ValueError(f"{name} must be finite, got {v}")
    if v < 0 or (v == 0 and not allow_zero):
        raise ValueError(f"{name} must be {'non-negative' if allow_zero else 'positive'}, got {v}")
    return v


def check_real(value: Any, name: str) -> float:
    """A finite real number (booleans are refused)."""
    if isinstance(value, bool) or not isinstance(value, Real):
        raise ValueError(f"{name} must be a real number, got {value!r}")
    v = float(value)
    if not np.isfinite(v):
        raise ValueError(f"{name} must be finite, got {v}")
    return v


def check_in_range(
    value: Any, name: str, low: float, high: float, *, closed: tuple[bool, bool] = (False, False)
) -> float:
    """A finite real number inside ``(low, high)``; ``closed`` makes either end inclusive."""
    if isinstance(value, bool) or not isinstance(value, Real):
        raise ValueError(f"{name} must be a real number, got {value!r}")
    v = float(value)
    above = v >= low if closed[0] else v > low
    below = v <= high if closed[1] else v < high
    if not (np.isfinite(v) and above and below):
        lb, rb = "[" if closed[0] else "(", "]" if closed[1] else ")"
        raise ValueError(f"{name} must lie in {lb}{low}, {high}{rb}, got {v}")
    return v


def check_int(value: Any, name: str, *, minimum: int = 0) -> int:
    """An integer >= ``minimum`` (booleans are refused)."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise ValueError(f"{name} must be an integer, got {value!r}")
    if value < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {value}")
    return int(value)


def check_choice(value: Any, name: str, choices: tuple[str, ...]) -> str:
    """One of a fixed set of strings."""
    if value not in choices:
        raise ValueError(f"{name} must be one of {choices}, got {value!r}")
    return value
