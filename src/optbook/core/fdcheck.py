"""Finite-difference checks of gradients and Hessians (central differences)."""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from .validate import check_positive, check_vector


def fd_gradient(fun: Callable[[np.ndarray], float], x: np.ndarray, h: float = 1e-6) -> np.ndarray:
    """Central-difference gradient, one coordinate pair of evaluations at a time."""
    x = check_vector(x, "x")
    h = check_positive(h, "h")
    eye = np.eye(x.size) * h
    return np.array([(fun(x + e) - fun(x - e)) / (2 * h) for e in eye])


def fd_hessian(jac: Callable[[np.ndarray], np.ndarray], x: np.ndarray, h: float = 1e-5) -> np.ndarray:
    """Central-difference Hessian from the gradient, symmetrised."""
    x = check_vector(x, "x")
    h = check_positive(h, "h")
    eye = np.eye(x.size) * h
    cols = np.array([(np.asarray(jac(x + e)) - np.asarray(jac(x - e))) / (2 * h) for e in eye])
    return 0.5 * (cols + cols.T)


@dataclass
class DerivativeCheck:
    """Relative errors of the analytic derivatives against finite differences."""

    grad_error: float
    hess_error: float | None

    def ok(self, tol: float = 1e-5) -> bool:
        return self.grad_error <= tol and (self.hess_error is None or self.hess_error <= tol)


def check_derivatives(
    fun: Callable[[np.ndarray], float],
    jac: Callable[[np.ndarray], np.ndarray],
    x: np.ndarray,
    hess: Callable[[np.ndarray], np.ndarray] | None = None,
) -> DerivativeCheck:
    """Compare ``jac`` (and ``hess``) at ``x`` with central differences; errors are relative,
    ||analytic - fd|| / max(1, ||fd||)."""
    x = check_vector(x, "x")

    def rel(a, b):
        return float(np.linalg.norm(np.asarray(a) - b) / max(1.0, np.linalg.norm(b)))

    g_err = rel(jac(x), fd_gradient(fun, x))
    h_err = None if hess is None else rel(hess(x), fd_hessian(jac, x))
    return DerivativeCheck(g_err, h_err)
