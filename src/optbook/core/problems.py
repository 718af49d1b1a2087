"""Shared test problems, each with value, gradient and Hessian.

The method names follow ``scipy.optimize.minimize``: ``fun``, ``jac``, ``hess``, so a problem's
bound methods can be handed to any minimizer in the book or in scipy.
"""
from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass

import numpy as np
from scipy.linalg import qr
from scipy.special import expit

from .validate import RngLike, as_rng, check_int, check_matrix, check_positive, check_vector


class Problem(ABC):
    """A smooth objective on R^dim with ``fun``, ``jac`` and ``hess``."""

    dim: int
    name: str = "problem"

    @abstractmethod
    def fun(self, x: np.ndarray) -> float:
        """Objective value."""

    @abstractmethod
    def jac(self, x: np.ndarray) -> np.ndarray:
        """Gradient."""

    @abstractmethod
    def hess(self, x: np.ndarray) -> np.ndarray:
        """Hessian matrix."""

    def _x(self, x: np.ndarray) -> np.ndarray:
        return check_vector(x, "x", self.dim)

    def fun_many(self, points: np.ndarray) -> np.ndarray:
        """Objective at each row of ``points`` (m x dim); subclasses vectorise it (landscapes)."""
        points = check_matrix(points, "points", shape=(None, self.dim))
        return np.array([self.fun(p) for p in points])

    def newton_decrement(self, x: np.ndarray) -> float:
        """lambda(x) = sqrt(g^T H^{-1} g), the affine-invariant measure of distance to optimality."""
        g = self.jac(x)
        return float(np.sqrt(max(g @ np.linalg.solve(self.hess(x), g), 0.0)))


@dataclass(eq=False)
class Quadratic(Problem):
    """f(x) = 1/2 x^T A x - b^T x with A symmetric positive definite."""

    A: np.ndarray
    b: np.ndarray
    name: str = "quadratic"

    def __post_init__(self) -> None:
        self.A = check_matrix(self.A, "A", square=True)
        if not np.allclose(self.A, self.A.T):
            raise ValueError("A must be symmetric")
        self.dim = self.A.shape[0]
        self.b = check_vector(self.b, "b", self.dim)
        eig = np.linalg.eigvalsh(self.A)
        if eig[0] <= 0:
            raise ValueError("A must be positive definite")
        self.eigenvalues = eig

    @property
    def x_star(self) -> np.ndarray:
        return np.linalg.solve(self.A, self.b)

    @property
    def f_star(self) -> float:
        return float(-0.5 * self.b @ self.x_star)

    @property
    def condition_number(self) -> float:
        return float(self.eigenvalues[-1] / self.eigenvalues[0])

    def fun(self, x: np.ndarray) -> float:
        x = self._x(x)
        return float(0.5 * x @ self.A @ x - self.b @ x)

    def jac(self, x: np.ndarray) -> np.ndarray:
        return self.A @ self._x(x) - self.b

    def hess(self, x: np.ndarray) -> np.ndarray:
        self._x(x)
        return self.A.copy()


def random_orthogonal(d: int, rng: RngLike = None) -> np.ndarray:
    """A Haar-distributed random orthogonal d x d matrix (QR of a Gaussian, signs fixed)."""
    d = check_int(d, "d", minimum=1)
    q, r = qr(as_rng(rng).standard_normal((d, d)))
    return q * np.sign(np.diag(r))


def quadratic_with_condition(d: int, kappa: float, rng: RngLike = None) -> Quadratic:
    """Random quadratic in R^d whose Hessian has eigenvalues log-spaced in [1, kappa]."""
    d = check_int(d, "d", minimum=1)
    kappa = check_positive(kappa, "kappa")
    if kappa < 1:
        raise ValueError(f"kappa must be >= 1, got {kappa}")
    rng = as_rng(rng)
    q = random_orthogonal(d, rng)
    eig = np.logspace(0, np.log10(kappa), d)
    A = (q * eig) @ q.T
    return Quadratic(0.5 * (A + A.T), rng.standard_normal(d), name=f"quadratic (kappa={kappa:g})")


@dataclass(eq=False)
class LogisticRegression(Problem):
    """l2-regularised logistic loss f(x) = 1/n sum log(1 + exp(-y_i z_i^T x)) + mu/2 ||x||^2.

    Labels ``y`` are +-1. The loss uses ``logaddexp`` and the sigmoid ``expit`` so that large
    margins neither overflow nor lose precision.
    """

    Z: np.ndarray
    y: np.ndarray
    mu: float = 1e-2
    name: str = "logistic regression"

    def __post_init__(self) -> None:
        self.Z = check_matrix(self.Z, "Z")
        n, self.dim = self.Z.shape
        self.y = check_vector(self.y, "y", n)
        if not np.all(np.isin(self.y, (-1.0, 1.0))):
            raise ValueError("y must contain only labels -1 and +1")
        self.mu = check_positive(self.mu, "mu", allow_zero=True)
        self._yz = self.y[:, None] * self.Z

    def fun(self, x: np.ndarray) -> float:
        m = self._yz @ self._x(x)
        return float(np.mean(np.logaddexp(0.0, -m)) + 0.5 * self.mu * x @ x)

    def fun_many(self, points: np.ndarray) -> np.ndarray:
        points = check_matrix(points, "points", shape=(None, self.dim))
        m = points @ self._yz.T
        return np.mean(np.logaddexp(0.0, -m), axis=1) + 0.5 * self.mu * np.sum(points**2, axis=1)

    def jac(self, x: np.ndarray) -> np.ndarray:
        x = self._x(x)
        s = expit(-(self._yz @ x))  # sigma(-m) = d/dm of log(1+e^{-m}), negated
        return -(self._yz.T @ s) / self._yz.shape[0] + self.mu * x

    def hess(self, x: np.ndarray) -> np.ndarray:
        x = self._x(x)
        p = expit(self._yz @ x)
        w = p * (1.0 - p)
        return (self.Z.T * w) @ self.Z / self.Z.shape[0] + self.mu * np.eye(self.dim)


def make_logistic(
    n: int = 400, d: int = 40, mu: float = 1e-2, noise: float = 2.0, rng: RngLike = None
) -> LogisticRegression:
    """Synthetic logistic regression: Gaussian features, labels sign(Z w + noise * xi)."""
    n, d = check_int(n, "n", minimum=1), check_int(d, "d", minimum=1)
    noise = check_positive(noise, "noise", allow_zero=True)
    rng = as_rng(rng)
    Z = rng.standard_normal((n, d))
    w = rng.standard_normal(d)
    y = np.sign(Z @ w + noise * rng.standard_normal(n))
    y[y == 0] = 1.0
    return LogisticRegression(Z, y, mu=mu)


@dataclass(eq=False)
class Rosenbrock(Problem):
    """The n-dimensional Rosenbrock function sum b (x_{i+1} - x_i^2)^2 + (a - x_i)^2."""

    dim: int = 2
    a: float = 1.0
    b: float = 100.0
    name: str = "Rosenbrock"

    def __post_init__(self) -> None:
        self.dim = check_int(self.dim, "dim", minimum=2)
        self.a = float(check_vector([self.a], "a")[0])
        self.b = check_positive(self.b, "b")

    @property
    def x_star(self) -> np.ndarray:
        return np.full(self.dim, self.a)

    f_star = 0.0

    def fun(self, x: np.ndarray) -> float:
        x = self._x(x)
        return float(np.sum(self.b * (x[1:] - x[:-1] ** 2) ** 2 + (self.a - x[:-1]) ** 2))

    def jac(self, x: np.ndarray) -> np.ndarray:
        x = self._x(x)
        r = x[1:] - x[:-1] ** 2
        g = np.zeros_like(x)
        g[:-1] = -4 * self.b * r * x[:-1] - 2 * (self.a - x[:-1])
        g[1:] += 2 * self.b * r
        return g

    def hess(self, x: np.ndarray) -> np.ndarray:
        x = self._x(x)
        diag = np.zeros_like(x)
        diag[:-1] = 12 * self.b * x[:-1] ** 2 - 4 * self.b * x[1:] + 2
        diag[1:] += 2 * self.b
        off = -4 * self.b * x[:-1]
        return np.diag(diag) + np.diag(off, 1) + np.diag(off, -1)


@dataclass(eq=False)
class CubicRegularized(Problem):
    """f(x) = 1/3 sum_i |a_i^T x - b_i|^3 + mu/2 ||x||^2, a strongly self-concordant objective.

    Its Hessian 2 sum |r_i| a_i a_i^T + mu I is Lipschitz and bounded below by mu I, so f is
    strongly self-concordant with constant at most L_2 / mu^{3/2} (Rodomanov and Nesterov).
    """

    A: np.ndarray
    b: np.ndarray
    mu: float = 1e-2
    name: str = "regularised cubic"

    def __post_init__(self) -> None:
        self.A = check_matrix(self.A, "A")
        m, self.dim = self.A.shape
        self.b = check_vector(self.b, "b", m)
        self.mu = check_positive(self.mu, "mu")

    def fun(self, x: np.ndarray) -> float:
        x = self._x(x)
        r = self.A @ x - self.b
        return float(np.sum(np.abs(r) ** 3) / 3.0 + 0.5 * self.mu * x @ x)

    def jac(self, x: np.ndarray) -> np.ndarray:
        x = self._x(x)
        r = self.A @ x - self.b
        return self.A.T @ (r * np.abs(r)) + self.mu * x

    def hess(self, x: np.ndarray) -> np.ndarray:
        x = self._x(x)
        r = self.A @ x - self.b
        return (self.A.T * (2.0 * np.abs(r))) @ self.A + self.mu * np.eye(self.dim)


def make_cubic(m: int = 60, d: int = 20, mu: float = 1e-2, rng: RngLike = None) -> CubicRegularized:
    """Random regularised cubic with Gaussian rows a_i / sqrt(d) and Gaussian targets."""
    m, d = check_int(m, "m", minimum=1), check_int(d, "d", minimum=1)
    rng = as_rng(rng)
    return CubicRegularized(rng.standard_normal((m, d)) / np.sqrt(d), rng.standard_normal(m), mu=mu)


@dataclass(eq=False)
class AffineComposition(Problem):
    """g(u) = f(A u + b): the same objective seen through an invertible change of variables.

    ``jac`` is A^T grad f(Au+b) and ``hess`` is A^T hess f(Au+b) A. Maps between the two
    coordinate systems: :meth:`to_x` and :meth:`to_u`.
    """

    base: Problem
    A: np.ndarray
    b: np.ndarray

    def __post_init__(self) -> None:
        self.dim = self.base.dim
        self.A = check_matrix(self.A, "A", shape=(self.dim, self.dim))
        self.b = check_vector(self.b, "b", self.dim)
        if np.linalg.matrix_rank(self.A) < self.dim:
            raise ValueError("A must be invertible")
        self.name = f"{self.base.name} in affine coordinates"

    def to_x(self, u: np.ndarray) -> np.ndarray:
        return self.A @ u + self.b

    def to_u(self, x: np.ndarray) -> np.ndarray:
        return np.linalg.solve(self.A, x - self.b)

    def fun(self, u: np.ndarray) -> float:
        return self.base.fun(self.to_x(self._x(u)))

    def fun_many(self, points: np.ndarray) -> np.ndarray:
        points = check_matrix(points, "points", shape=(None, self.dim))
        return self.base.fun_many(points @ self.A.T + self.b)

    def jac(self, u: np.ndarray) -> np.ndarray:
        return self.A.T @ self.base.jac(self.to_x(self._x(u)))

    def hess(self, u: np.ndarray) -> np.ndarray:
        return self.A.T @ self.base.hess(self.to_x(self._x(u))) @ self.A


def conditioning_map(d: int, kappa: float, rng: RngLike = None) -> np.ndarray:
    """A = Q diag(logspace(0, log10(kappa)/2, d)): composing with it multiplies the Hessian's
    condition number by up to kappa while changing nothing an affine-invariant method sees."""
    d = check_int(d, "d", minimum=1)
    kappa = check_positive(kappa, "kappa")
    if kappa < 1:
        raise ValueError(f"kappa must be >= 1, got {kappa}")
    return random_orthogonal(d, rng) * np.logspace(0, 0.5 * np.log10(kappa), d)
