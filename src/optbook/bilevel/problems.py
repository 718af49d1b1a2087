"""Bilevel test problems with counted first- and second-order oracles (shared by Part V).

A bilevel problem is ``min_x Phi(x) = f(x, y*(x))`` with ``y*(x) = argmin_y g(x, y)``: ``f`` is the
upper-level (UL) loss, ``g`` the lower-level (LL) loss. A :class:`BilevelProblem` exposes the
partial gradients of both, the LL Hessian-vector product and the mixed (cross) product that
implicit differentiation needs, and counts every call in :attr:`BilevelProblem.calls`, so methods
are compared on the work they do rather than on iterations.
"""
from __future__ import annotations

from collections import Counter

import numpy as np

from ..core import as_rng, check_int, check_matrix, check_positive, check_real, check_spd, check_vector


class BilevelProblem:
    """Base class: subclasses implement the ``_`` methods; the public ones validate and count.

    Counted oracles (keys of :attr:`calls`): ``grad_f`` (both partials of f at one point),
    ``grad_g`` (both partials of g), ``hvp_g`` (``grad^2_yy g . v``) and ``cross_g``
    (``grad_x <grad_y g(x, y), v>``, the mixed product). ``ll_calls`` sums the last three.
    """

    dx: int
    dy: int

    def __init__(self) -> None:
        self.calls: Counter = Counter()

    # ---- to implement
    def _f(self, x, y) -> float: ...
    def _g(self, x, y) -> float: ...
    def _grad_f(self, x, y) -> tuple[np.ndarray, np.ndarray]: ...
    def _grad_g(self, x, y) -> tuple[np.ndarray, np.ndarray]: ...
    def _hvp_g(self, x, y, v) -> np.ndarray: ...
    def _cross_g(self, x, y, v) -> np.ndarray: ...
    def _hess_yy_g(self, x, y) -> np.ndarray: ...

    def y_star(self, x) -> np.ndarray:
        """The LL solution ``y*(x)`` (closed form where one exists, else Newton on g; uncounted)."""
        x = self.check_x(x)
        y = np.zeros(self.dy)
        for _ in range(50):
            step = np.linalg.solve(self._hess_yy_g(x, y), self._grad_g(x, y)[1])
            y = y - step
            if np.linalg.norm(step) <= 1e-14 * (1 + np.linalg.norm(y)):
                break
        return y

    def x_star(self) -> np.ndarray | None:
        """The bilevel solution when known in closed form, else None."""
        return None

    # ---- validation
    def check_x(self, x) -> np.ndarray:
        return check_vector(x, "x", self.dx)

    def check_y(self, y, name: str = "y") -> np.ndarray:
        return check_vector(y, name, self.dy)

    # ---- public, counted oracles
    def f(self, x, y) -> float:
        """The UL loss ``f(x, y)`` (uncounted: used for reporting only)."""
        return float(self._f(self.check_x(x), self.check_y(y)))

    def g(self, x, y) -> float:
        """The LL loss ``g(x, y)`` (uncounted: used for reporting only)."""
        return float(self._g(self.check_x(x), self.check_y(y)))

    def grad_f(self, x, y) -> tuple[np.ndarray, np.ndarray]:
        """``(grad_x f, grad_y f)`` at ``(x, y)``; one ``grad_f`` call."""
        self.calls["grad_f"] += 1
        return self._grad_f(self.check_x(x), self.check_y(y))

    def grad_g(self, x, y) -> tuple[np.ndarray, np.ndarray]:
        """``(grad_x g, grad_y g)`` at ``(x, y)``; one ``grad_g`` call."""
        self.calls["grad_g"] += 1
        return self._grad_g(self.check_x(x), self.check_y(y))

    def hvp_g(self, x, y, v) -> np.ndarray:
        """``grad^2_yy g(x, y) v``; one ``hvp_g`` call."""
        self.calls["hvp_g"] += 1
        return self._hvp_g(self.check_x(x), self.check_y(y), self.check_y(v, "v"))

    def cross_g(self, x, y, v) -> np.ndarray:
        """``grad^2_xy g(x, y) v = grad_x <grad_y g(x, y), v>``; one ``cross_g`` call."""
        self.calls["cross_g"] += 1
        return self._cross_g(self.check_x(x), self.check_y(y), self.check_y(v, "v"))

    @property
    def ll_calls(self) -> int:
        """Lower-level oracle calls so far: gradients, Hessian-vector and mixed products of g."""
        return int(self.calls["grad_g"] + self.calls["hvp_g"] + self.calls["cross_g"])

    def reset_calls(self) -> None:
        self.calls.clear()

    def hypergradient(self, x) -> np.ndarray:
        """The exact ``grad Phi(x) = grad_x f - grad^2_xy g [grad^2_yy g]^{-1} grad_y f`` at
        ``y*(x)`` (implicit differentiation with a direct solve; uncounted, for reference)."""
        x = self.check_x(x)
        y = self.y_star(x)
        fx, fy = self._grad_f(x, y)
        v = np.linalg.solve(self._hess_yy_g(x, y), fy)
        return fx - self._cross_g(x, y, v)

    def phi(self, x) -> float:
        """The bilevel objective ``Phi(x) = f(x, y*(x))`` (uncounted)."""
        x = self.check_x(x)
        return float(self._f(x, self.y_star(x)))


class FlatnessToy(BilevelProblem):
    """The chapter's toy with an exactly controllable flatness violation ``delta``.

    ``g = 1/2 ||y - A x||^2`` and ``f = 1/2 (x - b)^T Q (x - b) + c/4 ||y - A x||^4 + delta w^T y``,
    so ``y*(x) = A x``, ``Phi(x) = 1/2 (x - b)^T Q (x - b) + delta w^T A x`` and
    ``x* = b - delta Q^{-1} A^T w``. At ``delta = 0`` the UL loss is exactly flat in y at the LL
    solution (``grad_y f(x, y*) = 0``); ``delta`` is the size of the violation. ``A`` has i.i.d.
    N(0, 1/dx) entries, b and w are N(0, I), and Q is a random rotation of
    ``diag(linspace(1/kappa, 1))`` (the UL conditioning).
    """

    def __init__(self, dx: int = 5, dy: int = 8, delta: float = 0.0, c: float = 1.0, kappa: float = 5.0,
                 rng=None):
        super().__init__()
        self.dx, self.dy = check_int(dx, "dx", minimum=1), check_int(dy, "dy", minimum=1)
        self.delta = check_real(delta, "delta")
        self.c = check_positive(c, "c", allow_zero=True)
        self.kappa = check_positive(kappa, "kappa")
        if self.kappa < 1:
            raise ValueError(f"kappa must be >= 1, got {self.kappa}")
        gen = as_rng(rng)
        self.A = gen.standard_normal((self.dy, self.dx)) / np.sqrt(self.dx)
        self.b = gen.standard_normal(self.dx)
        self.w = gen.standard_normal(self.dy)
        q, _ = np.linalg.qr(gen.standard_normal((self.dx, self.dx)))
        self.Q = (q * np.linspace(1.0 / self.kappa, 1.0, self.dx)) @ q.T

    def floor(self) -> float:
        """``||x* - b|| = delta ||Q^{-1} A^T w||``: the distance from PBGD-Free's limit to ``x*``."""
        return abs(self.delta) * float(np.linalg.norm(np.linalg.solve(self.Q, self.A.T @ self.w)))

    def x_star(self) -> np.ndarray:
        return self.b - self.delta * np.linalg.solve(self.Q, self.A.T @ self.w)

    def y_star(self, x) -> np.ndarray:
        return self.A @ self.check_x(x)

    def _f(self, x, y):
        r = y - self.A @ x
        return 0.5 * (x - self.b) @ self.Q @ (x - self.b) + 0.25 * self.c * (r @ r) ** 2 + self.delta * self.w @ y

    def _g(self, x, y):
        r = y - self.A @ x
        return 0.5 * r @ r

    def _grad_f(self, x, y):
        r = y - self.A @ x
        q = self.c * (r @ r) * r
        return self.Q @ (x - self.b) - self.A.T @ q, q + self.delta * self.w

    def _grad_g(self, x, y):
        r = y - self.A @ x
        return -self.A.T @ r, r

    def _hvp_g(self, x, y, v):
        return v.copy()

    def _cross_g(self, x, y, v):
        return -self.A.T @ v

    def _hess_yy_g(self, x, y):
        return np.eye(self.dy)


class QuadraticBilevel(BilevelProblem):
    """``f = a/2 ||x - b||^2 + 1/2 ||y - c||^2`` and ``g = 1/2 y^T H y - y^T B x`` (H SPD).

    ``y*(x) = H^{-1} B x`` and ``grad Phi(x) = a (x - b) + B^T H^{-1} (y*(x) - c)`` in closed form.
    With ``a = 0`` the UL loss depends on x only through y: the flatness assumption fails
    completely (the setting of hyperparameter optimisation).
    """

    def __init__(self, H, B, b, c, a: float = 1.0):
        super().__init__()
        self.H = check_spd(H, "H")
        self.dy = self.H.shape[0]
        self.B = check_matrix(B, "B", shape=(self.dy, None))
        self.dx = self.B.shape[1]
        self.b = check_vector(b, "b", self.dx).copy()
        self.c = check_vector(c, "c", self.dy).copy()
        self.a = check_positive(a, "a", allow_zero=True)

    @classmethod
    def random(cls, dx: int = 4, dy: int = 6, a: float = 1.0, rng=None) -> "QuadraticBilevel":
        """A random instance: H with eigenvalues in [1, 4], B with N(0, 1/dx) entries."""
        dx, dy = check_int(dx, "dx", minimum=1), check_int(dy, "dy", minimum=1)
        gen = as_rng(rng)
        q, _ = np.linalg.qr(gen.standard_normal((dy, dy)))
        H = (q * np.linspace(1.0, 4.0, dy)) @ q.T
        return cls(H, gen.standard_normal((dy, dx)) / np.sqrt(dx), gen.standard_normal(dx),
                   gen.standard_normal(dy), a)

    def _sol(self) -> np.ndarray:
        return np.linalg.solve(self.H, self.B)

    def y_star(self, x) -> np.ndarray:
        return self._sol() @ self.check_x(x)

    def x_star(self) -> np.ndarray:
        # Phi(x) = a/2 ||x - b||^2 + 1/2 ||M x - c||^2 with M = H^{-1} B: a least-squares problem.
        M = self._sol()
        lhs = np.vstack([np.sqrt(self.a) * np.eye(self.dx), M])
        rhs = np.concatenate([np.sqrt(self.a) * self.b, self.c])
        return np.linalg.lstsq(lhs, rhs, rcond=None)[0]

    def hypergradient_closed_form(self, x) -> np.ndarray:
        x = self.check_x(x)
        return self.a * (x - self.b) + self._sol().T @ (self.y_star(x) - self.c)

    def _f(self, x, y):
        return 0.5 * self.a * (x - self.b) @ (x - self.b) + 0.5 * (y - self.c) @ (y - self.c)

    def _g(self, x, y):
        return 0.5 * y @ self.H @ y - y @ self.B @ x

    def _grad_f(self, x, y):
        return self.a * (x - self.b), y - self.c

    def _grad_g(self, x, y):
        return -self.B.T @ y, self.H @ y - self.B @ x

    def _hvp_g(self, x, y, v):
        return self.H @ v

    def _cross_g(self, x, y, v):
        return -self.B.T @ v

    def _hess_yy_g(self, x, y):
        return self.H


class RepresentationProxy(BilevelProblem):
    """A small representation-learning bilevel problem (a proxy for fine-tuning).

    ``x`` is a linear feature map ``W`` (k x p, flattened row-major), ``y`` a linear head (k). The
    LL loss is ridge regression of the LL labels on the features ``Z W^T``:
    ``g = 1/(2n) ||Z W^T y - t||^2 + ridge/2 ||y||^2``. The UL loss is the squared loss on a
    disjoint UL sample, ``f = 1/(2m) ||Z' W^T y - t'||^2``. Both samples share one linear teacher,
    but the UL teacher is moved by ``shift * u`` (u a fixed random direction): at ``shift = 0``
    the head that fits the LL data also (nearly) fits the UL data, so f is nearly flat in y at
    ``y*`` (off only by the ridge term and label noise).
    """

    def __init__(self, k: int = 4, p: int = 12, n: int = 200, m: int = 200, shift: float = 0.0,
                 noise: float = 0.1, ridge: float = 1e-2, rng=None):
        super().__init__()
        self.k, self.p = check_int(k, "k", minimum=1), check_int(p, "p", minimum=1)
        n, m = check_int(n, "n", minimum=1), check_int(m, "m", minimum=1)
        self.shift = check_positive(shift, "shift", allow_zero=True)
        noise = check_positive(noise, "noise", allow_zero=True)
        self.ridge = check_positive(ridge, "ridge")
        gen = as_rng(rng)
        self.dx, self.dy = self.k * self.p, self.k
        teacher = gen.standard_normal(self.p) / np.sqrt(self.p)
        self.Z = gen.standard_normal((n, self.p))
        self.t = self.Z @ teacher + noise * gen.standard_normal(n)
        self.Zu = gen.standard_normal((m, self.p))
        u = gen.standard_normal(self.p) / np.sqrt(self.p)
        self.tu = self.Zu @ (teacher + self.shift * u) + noise * gen.standard_normal(m)
        self.x0 = (gen.standard_normal((self.k, self.p)) / np.sqrt(self.p)).ravel()

    def _W(self, x):
        return x.reshape(self.k, self.p)

    def _f(self, x, y):
        r = self.Zu @ (self._W(x).T @ y) - self.tu
        return 0.5 * r @ r / len(r)

    def _g(self, x, y):
        r = self.Z @ (self._W(x).T @ y) - self.t
        return 0.5 * r @ r / len(r) + 0.5 * self.ridge * y @ y

    @staticmethod
    def _grads(Z, t, W, y):
        F = Z @ W.T                       # features, n x k
        r = F @ y - t
        n = len(r)
        gy = F.T @ r / n
        gW = np.outer(y, Z.T @ r) / n     # d/dW of 1/(2n)||Z W^T y - t||^2
        return gW.ravel(), gy

    def _grad_f(self, x, y):
        return self._grads(self.Zu, self.tu, self._W(x), y)

    def _grad_g(self, x, y):
        gx, gy = self._grads(self.Z, self.t, self._W(x), y)
        return gx, gy + self.ridge * y

    def _hess_yy_g(self, x, y):
        F = self.Z @ self._W(x).T
        return F.T @ F / len(F) + self.ridge * np.eye(self.k)

    def _hvp_g(self, x, y, v):
        F = self.Z @ self._W(x).T
        return F.T @ (F @ v) / len(F) + self.ridge * v

    def _cross_g(self, x, y, v):
        W = self._W(x)
        a = self.Z @ (W.T @ v)
        b = self.Z @ (W.T @ y) - self.t
        n = len(b)
        return ((np.outer(v, self.Z.T @ b) + np.outer(y, self.Z.T @ a)) / n).ravel()

    def y_star(self, x) -> np.ndarray:
        x = self.check_x(x)
        F = self.Z @ self._W(x).T
        return np.linalg.solve(F.T @ F / len(F) + self.ridge * np.eye(self.k), F.T @ self.t / len(F))
