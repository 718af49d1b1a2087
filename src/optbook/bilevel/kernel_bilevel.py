"""Kernel bilevel optimization (KBO) for instrumental-variable regression (El Khoury, Pauwels,
Vaiter and Arbel, NeurIPS 2025, "Learning Theory for Kernel Bilevel Optimization").

The outer parameter omega (d numbers) weights features phi(t) of a treatment t; the inner variable
is a function h in the RKHS of a Gaussian kernel on the instrument x, fitted by kernel ridge
regression to phi(t)^T omega; the outer loss asks h(x~) to predict the outcome y~ on a second,
independent sample. The plug-in objective ``F_hat`` is a quadratic in omega; its gradient can be
computed three ways (closed form, autodiff, the paper's functional adjoint), which agree.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.linalg as sla

from ..core import (RngLike, as_rng, check_choice, check_int, check_positive, check_vector)
from ..core.linesearch import armijo_backtracking
from ..core.trace import Result, RunRecorder

INSTRUMENTS = ("gaussian", "student")


# --------------------------------------------------------------------------- data


@dataclass(frozen=True)
class IVData:
    """One draw of the instrumental-variable problem: ``n`` inner samples (instrument ``x``,
    treatment ``t``) and ``m`` outer samples (``x_out``, ``t_out``, outcome ``y_out``), disjoint and
    independent; ``omega_star`` is the true structural weight and ``eta`` the confounder of each
    sample (inner first, then outer)."""

    x: np.ndarray
    t: np.ndarray
    x_out: np.ndarray
    t_out: np.ndarray
    y_out: np.ndarray
    omega_star: np.ndarray
    eta: np.ndarray

    @property
    def n(self) -> int:
        return self.x.shape[0]

    @property
    def m(self) -> int:
        return self.x_out.shape[0]

    @property
    def d(self) -> int:
        return self.omega_star.shape[0]


def features(t, d: int = 4) -> np.ndarray:
    """The treatment features phi(t) = (sin(t + k))_{k=1..d}, one row per sample."""
    t = check_vector(t, "t")
    d = check_int(d, "d", minimum=1)
    return np.sin(t[:, None] + np.arange(1, d + 1))


def true_omega(d: int = 4, seed: int = 0) -> np.ndarray:
    """The structural weight omega* ~ U[0, 1]^d of the experiment (fixed by ``seed``)."""
    return np.random.default_rng([check_int(seed, "seed"), 24]).uniform(0.0, 1.0, check_int(d, "d", minimum=1))


def make_iv_data(n: int, m: int, *, p: int = 3, d: int = 4, confounding: float = 0.5,
                 instrument: str = "gaussian", df: float = 2.5, omega_seed: int = 0,
                 rng: RngLike = None) -> IVData:
    """Draw the paper's synthetic IV data set (as in its official code): x ~ N(0, I_p) (or Student-t
    with ``df`` degrees of freedom), confounder eta ~ N(0, 0.1), treatment t = 2 sum_j x_j + eta,
    outcome y = phi(t)^T omega* + ``confounding`` * eta. The first ``n`` samples are the inner
    data (x, t), the last ``m`` the outer data (x~, y~)."""
    n, m = check_int(n, "n", minimum=2), check_int(m, "m", minimum=2)
    p, d = check_int(p, "p", minimum=1), check_int(d, "d", minimum=1)
    confounding = check_positive(confounding, "confounding", allow_zero=True)
    instrument = check_choice(instrument, "instrument", INSTRUMENTS)
    df = check_positive(df, "df")
    if instrument == "student" and df <= 2:
        raise ValueError(f"df must be > 2 (finite variance), got {df}")
    rng = as_rng(rng)
    total = n + m
    x = rng.standard_normal((total, p)) if instrument == "gaussian" else rng.standard_t(df, (total, p))
    eta = np.sqrt(0.1) * rng.standard_normal(total)
    t = 2.0 * x.sum(axis=1) + eta
    omega = true_omega(d, omega_seed)
    y = features(t, d) @ omega + confounding * eta
    return IVData(x[:n], t[:n], x[n:], t[n:], y[n:], omega, eta)


# --------------------------------------------------------------------------- kernels


def gaussian_kernel(X, Y, sigma: float) -> np.ndarray:
    """Gram matrix k(x, y) = exp(-||x - y||^2 / (2 sigma^2)) between the rows of X and Y."""
    X, Y = np.asarray(X, dtype=float), np.asarray(Y, dtype=float)
    if X.ndim != 2 or Y.ndim != 2 or X.shape[1] != Y.shape[1] or not X.size or not Y.size:
        raise ValueError(f"X and Y must be non-empty 2-D arrays with the same number of columns, "
                         f"got shapes {X.shape} and {Y.shape}")
    if not (np.isfinite(X).all() and np.isfinite(Y).all()):
        raise ValueError("X and Y must be finite")
    sigma = check_positive(sigma, "sigma")
    sq = (X * X).sum(1)[:, None] + (Y * Y).sum(1)[None, :] - 2.0 * X @ Y.T
    return np.exp(-np.maximum(sq, 0.0) / (2.0 * sigma**2))


def random_fourier_features(X, num_features: int, sigma: float, rng: RngLike = None) -> np.ndarray:
    """Random Fourier features sqrt(2/D) cos(W^T x + b), W ~ N(0, sigma^-2 I), b ~ U[0, 2 pi]: their
    inner products approximate the Gaussian kernel of width ``sigma`` (Rahimi and Recht)."""
    X = np.asarray(X, dtype=float)
    if X.ndim != 2 or not X.size or not np.isfinite(X).all():
        raise ValueError(f"X must be a finite non-empty 2-D array, got shape {X.shape}")
    D = check_int(num_features, "num_features", minimum=1)
    sigma = check_positive(sigma, "sigma")
    rng = as_rng(rng)
    W = rng.standard_normal((X.shape[1], D)) / sigma
    b = rng.uniform(0.0, 2.0 * np.pi, D)
    return np.sqrt(2.0 / D) * np.cos(X @ W + b)


# --------------------------------------------------------------------------- the plug-in problem


@dataclass(frozen=True)
class Quadratic:
    """F(omega) = 1/2 omega^T A omega - omega^T B + c (the plug-in, or a reference, objective)."""

    A: np.ndarray
    B: np.ndarray
    c: float

    def value(self, omega) -> float:
        w = check_vector(omega, "omega", self.B.shape[0])
        return float(0.5 * w @ self.A @ w - w @ self.B + self.c)

    def grad(self, omega) -> np.ndarray:
        w = check_vector(omega, "omega", self.B.shape[0])
        return self.A @ w - self.B

    def minimizer(self) -> np.ndarray:
        """The minimum-norm minimizer pinv(A) B (A is singular here: phi(t) spans only sin t, cos t)."""
        return np.linalg.lstsq(self.A, self.B, rcond=1e-10)[0]


class KernelBilevelIV:
    """The plug-in kernel bilevel problem of IV regression on one data set.

    Inner: h_omega = argmin_h (1/n) sum_i 1/2 (h(x_i) - phi(t_i)^T omega)^2 + lam/2 ||h||^2, i.e.
    kernel ridge regression, h_omega(.) = k(., X) (K + n lam I)^{-1} Phi omega.
    Outer: F_hat(omega) = (1/m) sum_j 1/2 (h_omega(x~_j) - y~_j)^2 = 1/(2m) ||M omega - y~||^2 with
    M = K~ (K + n lam I)^{-1} Phi. With ``num_features`` = D the kernel is replaced by D random
    Fourier features (the official code's "baseline" branch).
    """

    def __init__(self, data: IVData, lam: float = 0.01, sigma: float = 1.0, *,
                 num_features: int | None = None, rng: RngLike = None):
        if not isinstance(data, IVData):
            raise ValueError(f"data must be an IVData, got {type(data).__name__}")
        self.data, self.lam, self.sigma = data, check_positive(lam, "lam"), check_positive(sigma, "sigma")
        n, m = data.n, data.m
        self.Phi = features(data.t, data.d)
        if num_features is None:
            self.K = gaussian_kernel(data.x, data.x, self.sigma)
            self.K_out = gaussian_kernel(data.x_out, data.x, self.sigma)
            self._chol = sla.cho_factor(self.K + n * self.lam * np.eye(n))
            self.coef = sla.cho_solve(self._chol, self.Phi)           # (K + n lam I)^{-1} Phi, n x d
            self.M = self.K_out @ self.coef
        else:
            self.K = self.K_out = None
            Z = random_fourier_features(np.vstack([data.x, data.x_out]), num_features, self.sigma, rng)
            Xi, Xi_out = Z[:n], Z[n:]
            D = Z.shape[1]
            W = sla.cho_solve(sla.cho_factor(Xi.T @ Xi + n * self.lam * np.eye(D)), Xi.T @ self.Phi)
            self.M = Xi_out @ W
        y = data.y_out
        self.quadratic = Quadratic(self.M.T @ self.M / m, self.M.T @ y / m, float(y @ y / (2 * m)))

    # the plug-in objective and its gradient (closed form)
    def value(self, omega) -> float:
        """F_hat(omega), the plug-in outer objective."""
        w = check_vector(omega, "omega", self.data.d)
        r = self.M @ w - self.data.y_out
        return float(r @ r / (2 * self.data.m))

    def grad(self, omega) -> np.ndarray:
        """grad F_hat(omega) = A_hat omega - B_hat (closed form)."""
        return self.quadratic.grad(omega)

    def inner_solution(self, omega, x_eval) -> np.ndarray:
        """h_omega evaluated at the rows of ``x_eval`` (exact kernel only)."""
        w = check_vector(omega, "omega", self.data.d)
        if self.K is None:
            raise ValueError("inner_solution needs the exact kernel (num_features=None)")
        return gaussian_kernel(x_eval, self.data.x, self.sigma) @ (self.coef @ w)

    def adjoint(self, omega) -> tuple[np.ndarray, np.ndarray]:
        """The plug-in adjoint a = -(d^2_h G)^{-1} d_h L in function space, returned as its
        coefficients (beta on the inner points, gamma on the outer points):
        a = sum_i beta_i k(x_i, .) + sum_j gamma_j k(x~_j, .). From (C + lam I) a = -g with
        C = (1/n) sum_i k_{x_i} (x) k_{x_i} and g = (1/m) sum_j r_j k_{x~_j}, r = h(x~) - y~:
        gamma = -r / (lam m) and beta = -a(X) / (lam n), where (K + n lam I) a(X) = -(n/m) K_{X X~} r."""
        if self.K is None:
            raise ValueError("adjoint needs the exact kernel (num_features=None)")
        w = check_vector(omega, "omega", self.data.d)
        n, m, lam = self.data.n, self.data.m, self.lam
        r = self.K_out @ (self.coef @ w) - self.data.y_out
        a_X = -(n / m) * sla.cho_solve(self._chol, self.K_out.T @ r)
        return -a_X / (lam * n), -r / (lam * m)

    def adjoint_grad(self, omega) -> np.ndarray:
        """grad F_hat(omega) by the functional implicit-differentiation formula:
        E_P[d_omega l_out] + E_Q[d_omega d_v l_in(omega, h(x), t) a(x)] = -(1/n) Phi^T a(X),
        with the adjoint a evaluated from its coefficients (the paper's adjoint estimator)."""
        beta, gamma = self.adjoint(omega)
        a_X = self.K @ beta + self.K_out.T @ gamma
        return -self.Phi.T @ a_X / self.data.n


# --------------------------------------------------------------------------- the outer solver


def gradient_descent(problem: KernelBilevelIV | Quadratic, omega0, *, tol: float = 1e-5, maxiter: int = 10_000,
                     eta0: float = 1.0, shrink: float = 0.5, c1: float = 1e-4, callback=None) -> Result:
    """Gradient descent with Armijo backtracking on the outer objective (the paper's solver: eta0 = 1,
    shrink 0.5, c1 = 1e-4, stopped when ||grad|| <= tol); returns a scipy-style result with a trace."""
    fun, jac = ((problem.value, problem.grad) if isinstance(problem, (KernelBilevelIV, Quadratic))
                else (None, None))
    if fun is None:
        raise ValueError(f"problem must be a KernelBilevelIV or Quadratic, got {type(problem).__name__}")
    d = problem.B.shape[0] if isinstance(problem, Quadratic) else problem.data.d
    w = check_vector(omega0, "omega0", d).copy()
    maxiter = check_int(maxiter, "maxiter", minimum=0)
    rec = RunRecorder("GD + Armijo", stop="grad_norm", tol=tol, stops=("grad_norm",), callback=callback)
    f, g = fun(w), jac(w)
    nfev = njev = 1
    for _ in range(maxiter + 1):
        if rec.record(w, f, float(np.linalg.norm(g))):
            return rec.result(w, f, success=True, message="gradient norm below tol", nfev=nfev, njev=njev, jac=g)
        if len(rec.trace) > maxiter:
            break
        ls = armijo_backtracking(fun, w, -g, g, f, eta0=eta0, c1=c1, shrink=shrink)
        nfev += ls.nfev
        rec.set_step(ls.step)
        w = w - ls.step * g
        f, g = ls.fun, jac(w)
        njev += 1
    return rec.result(w, f, success=False, message="maxiter reached", nfev=nfev, njev=njev, jac=g)


# --------------------------------------------------------------------------- baselines


def ols(t, y, d: int = 4, ridge: float = 0.0) -> np.ndarray:
    """Naive (ridge) least squares of y on phi(t), min (1/2m)||Phi w - y||^2 + ridge/2 ||w||^2 (the
    minimum-norm solution when ``ridge`` = 0): biased, since t and the outcome noise share eta."""
    Phi = features(t, d)
    y = check_vector(y, "y", Phi.shape[0])
    ridge = check_positive(ridge, "ridge", allow_zero=True)
    if ridge > 0:
        Phi = np.vstack([Phi, np.sqrt(Phi.shape[0] * ridge) * np.eye(d)])
        y = np.concatenate([y, np.zeros(d)])
    return np.linalg.lstsq(Phi, y, rcond=None)[0]


def two_stage_least_squares(x, t, x_out, y_out, d: int = 4) -> np.ndarray:
    """Linear 2SLS across the two samples: regress phi(t) linearly on (1, x) on the inner sample, then
    y~ on the fitted phi_hat(x~) on the outer one; biased when E[phi(t) | x] is nonlinear."""
    x, x_out = np.asarray(x, dtype=float), np.asarray(x_out, dtype=float)
    if x.ndim != 2 or x_out.ndim != 2 or x.shape[1] != x_out.shape[1]:
        raise ValueError("x and x_out must be 2-D arrays with the same number of columns")
    Phi = features(t, d)
    if Phi.shape[0] != x.shape[0]:
        raise ValueError(f"t must have one entry per row of x ({x.shape[0]}), got {Phi.shape[0]}")
    y_out = check_vector(y_out, "y_out", x_out.shape[0])
    design = np.column_stack([np.ones(len(x)), x])
    stage1 = np.linalg.lstsq(design, Phi, rcond=None)[0]
    fitted = np.column_stack([np.ones(len(x_out)), x_out]) @ stage1
    return np.linalg.lstsq(fitted, y_out, rcond=None)[0]


def structural_coordinates(omega) -> np.ndarray:
    """The two numbers the structural function depends on: phi(t)^T omega = u sin t + v cos t with
    (u, v) = (sum_k omega_k cos k, sum_k omega_k sin k), since sin(t + k) = cos k sin t + sin k cos t.
    Only (u, v) is identified; ``omega`` may be one vector (d,) or a stack (N, d)."""
    w = np.asarray(omega, dtype=float)
    if w.ndim not in (1, 2) or w.shape[-1] == 0 or not np.isfinite(w).all():
        raise ValueError(f"omega must be a finite (d,) or (N, d) array, got shape {w.shape}")
    k = np.arange(1, w.shape[-1] + 1)
    return np.stack([w @ np.cos(k), w @ np.sin(k)], axis=-1)
