"""The star-shaped classifier of chapter 06 (Brandenburg and Jochemko, NeurIPS 2025): fans, fan
coordinates, the classifier, the concave log-likelihood and its maximiser (Algorithm 1), and a
scikit-learn-style :class:`StarClassifier`.

A complete simplicial fan with ray generators v_1..v_n fixes the model. A parameter a >= 0 defines
the continuous piecewise-linear function f_a that is linear on every cone with f_a(v_i) = a_i;
the star ``star(a) = {x : f_a(x) <= 1}`` has vertices v_i / a_i. Because
f_a(x) = <[x]_fan, a> is linear in a (``[x]_fan`` are the *fan coordinates* of x), the 0/1 loss
is constant on the chambers of a hyperplane arrangement and the log-likelihood of an exponential
model is concave in a, so the maximum-likelihood star is a convex program (Algorithm 1).

Label convention (the paper's): label 1 means *outside* the star (f_a(x) > 1), label 0 inside.

This module is what a user imports; the book's experiments, baselines, figures, explorers and
claims live in :mod:`optbook.classical.starshaped_chapter`.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from itertools import permutations, product

import numpy as np
from scipy.optimize import minimize
from sklearn.base import BaseEstimator, ClassifierMixin

from ..core import Result, Trace, check_int, check_matrix, check_positive, check_vector

#: Where log(1 - exp(-lambda u)) is evaluated for a positive point with u = 0 (a degenerate star).
U_FLOOR = 1e-12


# --------------------------------------------------------------------------- fans and coordinates


@dataclass
class Fan:
    """A complete simplicial fan: ray generators (n x d) and maximal cones (k x d ray indices).

    Build one with :func:`fan_2d`, :func:`equiangular_fan`, :func:`kite_fan` or
    :func:`type_b_fan`; the constructor checks that every cone is simplicial (its d generators
    are linearly independent). Completeness is checked by the 2-D constructor; in higher
    dimensions :meth:`coordinates` raises for a point that lies in no cone.
    """

    rays: np.ndarray
    cones: np.ndarray
    name: str = "fan"
    _inv: np.ndarray = field(init=False, repr=False)
    _angles: np.ndarray | None = field(default=None, init=False, repr=False)

    def __post_init__(self) -> None:
        self.rays = check_matrix(self.rays, "rays")
        n, d = self.rays.shape
        if np.any(np.linalg.norm(self.rays, axis=1) == 0):
            raise ValueError("rays must be non-zero vectors")
        cones = np.asarray(self.cones)
        if cones.ndim != 2 or cones.shape[1] != d or not cones.size or not np.issubdtype(cones.dtype, np.integer):
            raise ValueError(f"cones must be a non-empty integer array of shape (k, {d}), got shape {cones.shape}")
        if cones.min() < 0 or cones.max() >= n:
            raise ValueError(f"cones must index rays 0..{n - 1}")
        self.cones = cones
        mats = np.transpose(self.rays[cones], (0, 2, 1))  # k x d x d, columns = generators
        if np.any(np.abs(np.linalg.det(mats)) < 1e-12):
            raise ValueError("cones must be simplicial: each cone's generators must be linearly independent")
        self._inv = np.linalg.inv(mats)

    @property
    def n_rays(self) -> int:
        """n, the number of rays (= the VC dimension of the star classifiers, Thm 3.1)."""
        return self.rays.shape[0]

    @property
    def dim(self) -> int:
        return self.rays.shape[1]

    def coordinates(self, X, method: str = "auto") -> np.ndarray:
        """Fan coordinates [x]_fan of every row of X (m x n): x = sum_i [x]_i v_i, [x] >= 0, with at
        most d non-zeros, on the generators of the cone that contains x.

        ``method='angle'`` (2-D fans only) finds the cone from the angle of x; ``'generic'`` solves
        V_C^{-1} x for every cone and takes the first with non-negative solution (points on a
        shared face get the same coordinates either way).
        """
        X = check_matrix(X, "X", shape=(None, self.dim))
        if method not in ("auto", "angle", "generic"):
            raise ValueError(f"method must be 'auto', 'angle' or 'generic', got {method!r}")
        if method == "angle" and self._angles is None:
            raise ValueError("method='angle' needs a 2-D fan built by fan_2d")
        if method != "generic" and self._angles is not None:
            phi = np.mod(np.arctan2(X[:, 1], X[:, 0]), 2 * np.pi)
            cone = np.searchsorted(self._angles, phi, side="right") - 1  # -1: before the first ray
            cone = np.mod(cone, self.n_rays)
        else:
            mu_all = np.einsum("kij,mj->mki", self._inv, X)  # m x k x d
            scale = 1e-10 * np.maximum(1.0, np.abs(X).max(axis=1))
            ok = mu_all.min(axis=2) >= -scale[:, None]
            if not np.all(ok.any(axis=1)):
                raise ValueError("X has points in no cone: the fan is not complete")
            cone = ok.argmax(axis=1)
        mu = np.einsum("mij,mj->mi", self._inv[cone], X)
        out = np.zeros((X.shape[0], self.n_rays))
        np.put_along_axis(out, self.cones[cone], np.maximum(mu, 0.0), axis=1)
        return out

    def vertices(self, a) -> np.ndarray:
        """Vertices v_i / a_i of star(a) (rows; inf where a_i = 0, the star is unbounded there)."""
        a = check_params(a, self.n_rays)
        with np.errstate(divide="ignore"):
            return self.rays / a[:, None]


def fan_2d(rays, name: str = "2-D fan") -> Fan:
    """A complete simplicial fan in the plane from its rays (any order): the rays are sorted by
    angle in [0, 2 pi) from (1, 0), and consecutive rays (cyclically) span the cones. Needs at
    least three rays, consecutive angles strictly below pi, and distinct directions."""
    rays = check_matrix(rays, "rays", shape=(None, 2))
    if rays.shape[0] < 3:
        raise ValueError(f"rays must hold at least 3 rays for a complete 2-D fan, got {rays.shape[0]}")
    if np.any(np.linalg.norm(rays, axis=1) == 0):
        raise ValueError("rays must be non-zero vectors")
    ang = np.mod(np.arctan2(rays[:, 1], rays[:, 0]), 2 * np.pi)
    order = np.argsort(ang, kind="stable")
    rays, ang = rays[order], ang[order]
    gaps = np.diff(np.append(ang, ang[0] + 2 * np.pi))
    if np.any(gaps < 1e-12):
        raise ValueError("rays must point in distinct directions")
    if np.any(gaps >= np.pi - 1e-12):
        raise ValueError("rays must positively span the plane (every angle between consecutive rays < pi)")
    n = rays.shape[0]
    cones = np.stack([np.arange(n), (np.arange(n) + 1) % n], axis=1)
    fan = Fan(rays, cones, name=name)
    fan._angles = ang
    return fan


def equiangular_fan(k: int) -> Fan:
    """k unit rays at angles 2 pi j / k, j = 0..k-1 (k >= 3)."""
    k = check_int(k, "k", minimum=3)
    t = 2 * np.pi * np.arange(k) / k
    return fan_2d(np.stack([np.cos(t), np.sin(t)], axis=1), name=f"{k} equiangular rays")


def kite_fan(d: int = 2) -> Fan:
    """The kite fan: generators e_1, -e_1, ..., e_d, -e_d (in 2-D sorted by angle: e_1, e_2, -e_1,
    -e_2); every kite is convex."""
    d = check_int(d, "d", minimum=1)
    rays = np.zeros((2 * d, d))
    rays[0::2][np.arange(d), np.arange(d)] = 1.0
    rays[1::2][np.arange(d), np.arange(d)] = -1.0
    if d == 2:
        return fan_2d(rays, name="kite fan")
    cones = np.array([[2 * i + s[i] for i in range(d)] for s in product((0, 1), repeat=d)])
    return Fan(rays, cones, name="kite fan")


def kite_coordinates(X) -> np.ndarray:
    """Closed form [x]_kite = (max(x_1, 0), max(-x_1, 0), ..., max(x_d, 0), max(-x_d, 0)); in 2-D
    the columns follow :func:`kite_fan`'s angular ray order e_1, e_2, -e_1, -e_2."""
    X = check_matrix(X, "X")
    out = np.empty((X.shape[0], 2 * X.shape[1]))
    out[:, 0::2], out[:, 1::2] = np.maximum(X, 0.0), np.maximum(-X, 0.0)
    return out[:, [0, 2, 1, 3]] if X.shape[1] == 2 else out


def _type_b_rays(d: int) -> np.ndarray:
    rays = np.array([r for r in product((-1, 0, 1), repeat=d) if any(r)], dtype=float)
    if d == 2:  # by angle from (1, 0), as in the chapter
        ang = np.mod(np.arctan2(rays[:, 1], rays[:, 0]), 2 * np.pi)
        rays = rays[np.argsort(ang)]
    return rays


def type_b_fan(d: int = 2) -> Fan:
    """The Coxeter fan of type B: generators {0, +1, -1}^d without 0 (8 rays in 2-D, ordered by
    angle from (1, 0)); one cone per signed permutation."""
    d = check_int(d, "d", minimum=1)
    rays = _type_b_rays(d)
    if d == 2:
        return fan_2d(rays, name="type-B fan")
    index = {tuple(r.astype(int)): i for i, r in enumerate(rays)}
    cones = []
    for perm in permutations(range(d)):
        for signs in product((-1, 1), repeat=d):
            gens = []
            for k in range(d):
                r = np.zeros(d, dtype=int)
                r[list(perm[k:])] = np.array(signs)[list(perm[k:])]
                gens.append(index[tuple(r)])
            cones.append(gens)
    return Fan(rays, np.array(cones), name="type-B fan")


def type_b_coordinates(X) -> np.ndarray:
    """Closed form of the type-B fan coordinates (the card's reconstruction): sort
    |x_s(1)| <= ... <= |x_s(d)|; c_k = |x_s(k)| - |x_s(k-1)| on the ray sum_{j >= k} sign(x_s(j)) e_s(j).
    Columns follow the ray order of :func:`type_b_fan`."""
    X = check_matrix(X, "X")
    m, d = X.shape
    rays = _type_b_rays(d)
    codes = ((rays + 1) @ (3 ** np.arange(d))).astype(int)
    table = np.full(3 ** d, -1)
    table[codes] = np.arange(len(rays))
    absx, sign = np.abs(X), np.where(X >= 0, 1.0, -1.0)
    order = np.argsort(absx, axis=1, kind="stable")
    rank = np.argsort(order, axis=1)  # position of each coordinate in the sorted order
    sorted_abs = np.take_along_axis(absx, order, axis=1)
    c = np.diff(np.concatenate([np.zeros((m, 1)), sorted_abs], axis=1), axis=1)  # m x d
    # generator k of point p: sign_i where rank_i >= k, else 0
    R = sign[:, None, :] * (rank[:, None, :] >= np.arange(d)[None, :, None])  # m x k x d
    idx = table[((R + 1) @ (3 ** np.arange(d))).astype(int)]  # m x d
    out = np.zeros((m, len(rays)))
    np.add.at(out, (np.repeat(np.arange(m), d), idx.ravel()), c.ravel())
    return out


def line_fan() -> Fan:
    """The 1-D fan with v_1 = -e_1 and v_2 = e_1 (n = 2): star(a) = [-1/a_1, 1/a_2]."""
    return Fan(np.array([[-1.0], [1.0]]), np.array([[0], [1]]), name="1-D fan")


# --------------------------------------------------------------------------- the classifier


def check_params(a, n: int | None = None, name: str = "a") -> np.ndarray:
    """A finite parameter vector a >= 0 (the ray lengths' inverses), optionally of length n."""
    a = check_vector(a, name, n)
    if np.any(a < 0):
        raise ValueError(f"{name} must be non-negative (a_i = 0 is a star unbounded along ray i)")
    return a


def check_labels(y, m: int | None = None) -> np.ndarray:
    """Labels in {0, 1} (1 = outside the star), as an int array of length m."""
    y = check_vector(y, "y", m)
    if not np.all((y == 0) | (y == 1)):
        raise ValueError("y must contain only 0 and 1 (1 = outside the star)")
    return y.astype(int)


def star_classify(A, a) -> np.ndarray:
    """c_a(x) = 1 if f_a(x) = <[x], a> > 1 (outside the star), else 0; A holds the rows [x]."""
    A = check_matrix(A, "A")
    a = check_params(a, A.shape[1])
    return (A @ a > 1.0).astype(int)


def confusion(A, a, y) -> dict[str, int]:
    """False positives (y = 0 but outside), false negatives (y = 1 but inside) and err = FP + FN."""
    pred = star_classify(A, a)
    y = check_labels(y, pred.size)
    fp, fn = int(np.sum((y == 0) & (pred == 1))), int(np.sum((y == 1) & (pred == 0)))
    return {"FP": fp, "FN": fn, "err": fp + fn}


def chamber_signs(A, a) -> np.ndarray:
    """The sign pattern of A a - 1 (one hyperplane H_i = {a : <[x_i], a> = 1} per data point):
    +1 strictly outside, 0/-1 inside. Equal patterns = same chamber = same classification."""
    A = check_matrix(A, "A")
    a = check_params(a, A.shape[1])
    return np.where(A @ a > 1.0, 1, np.where(A @ a == 1.0, 0, -1))


def _check_lam(lam) -> float:
    return check_positive(lam, "lam")


def log_likelihood(a, A, y, lam: float = 1.0) -> float:
    """L_lambda(a) = sum_{y=1} log(1 - exp(-lambda u_i)) - lambda sum_{y=0} u_i with u = A a: the
    log-likelihood when P(y = 1 | x) is the exponential CDF of f_a(x) with rate lambda (our
    reconstruction of the paper's formula). Concave in a (Thm 3.6)."""
    return _loglik(a, A, y, lam, order=0)[0]


def log_likelihood_grad(a, A, y, lam: float = 1.0) -> np.ndarray:
    """Gradient lambda sum_{y=1} [x_i] / (exp(lambda u_i) - 1) - lambda sum_{y=0} [x_i]."""
    return _loglik(a, A, y, lam, order=1)[1]


def log_likelihood_hess(a, A, y, lam: float = 1.0) -> np.ndarray:
    """Hessian -lambda^2 sum_{y=1} e^{lambda u}/(e^{lambda u} - 1)^2 [x_i][x_i]^T (negative
    semidefinite; definite when the positive points' coordinates have rank n, Thm 3.9)."""
    return _loglik(a, A, y, lam, order=2)[2]


def _loglik(a, A, y, lam, order):
    A = check_matrix(A, "A")
    a = check_params(a, A.shape[1])
    y = check_labels(y, A.shape[0])
    lam = _check_lam(lam)
    return _loglik_unchecked(a, A, y == 1, lam, order)


def _loglik_unchecked(a, A, pos, lam, order):
    u = A @ a
    s = lam * np.maximum(u[pos], U_FLOOR)
    value = float(np.sum(np.log(-np.expm1(-s))) - lam * np.sum(u[~pos]))
    if order == 0:
        return value, None, None
    w = np.exp(-s) / -np.expm1(-s)  # e^{-s} / (1 - e^{-s}), no overflow for large s
    grad = lam * (A[pos].T @ w) - lam * A[~pos].sum(axis=0)
    if order == 1:
        return value, grad, None
    c = lam * lam * w * (1.0 + w)  # e^{s} / (e^{s} - 1)^2 = w (1 + w), no overflow
    return value, grad, -(A[pos].T * c) @ A[pos]


def _lbfgsb(fun_grad, x0, bounds, *, tol, maxiter, method_name, extras=None, sign=1.0):
    """scipy's L-BFGS-B with one trace row per iterate (objective = fun_grad's value times sign,
    grad_norm = projected gradient norm, plus ``extras(x)``)."""
    trace = Trace(method_name)
    lower = np.array([b[0] if b[0] is not None else -np.inf for b in bounds]) if bounds else None

    def record(x):
        f, g = fun_grad(x)
        if lower is not None:
            g = np.where(x <= lower, np.minimum(g, 0.0), g)
        trace.record(objective=sign * f, grad_norm=float(np.linalg.norm(g)), **(extras(x) if extras else {}))

    record(x0)
    res = minimize(fun_grad, x0, jac=True, method="L-BFGS-B", bounds=bounds,
                   callback=lambda intermediate_result: record(intermediate_result.x),
                   options=dict(maxiter=maxiter, gtol=tol, ftol=1e-15, maxcor=20))
    return res, trace


def fit_star(A, y, lam: float = 1.0, *, a0=None, tol: float = 1e-10, maxiter: int = 2000,
             method_name: str = "star MLE") -> Result:
    """Maximum-likelihood star (Algorithm 1 in the paper): maximise the concave L_lambda(a) over
    the closed orthant a >= 0 with L-BFGS-B and the analytic gradient.

    Parameters
    ----------
    A : (m, n) array
        Rows [x_i]_fan, the fan coordinates of the training points (``fan.coordinates(X)``).
    y : (m,) array of 0/1
        Labels, 1 = outside the star.
    lam : float
        Rate lambda > 0 of the exponential model; a*(lambda) = a*(1) / lambda (Thm 3.11).
    a0 : array, optional
        Start (default: all ones).
    tol : float
        Projected-gradient tolerance on the per-point objective -L / m.

    Returns
    -------
    Result
        ``x`` = a*, ``fun`` = L_lambda(a*), ``jac`` = grad L, ``success``, ``message``, ``trace``
        (objective = -L per iterate, grad_norm = projected gradient norm, extras FP, FN, err).
        An optimum with a_i = 0 is a legitimate degenerate star, unbounded along ray i.
    """
    A = check_matrix(A, "A")
    m, n = A.shape
    y = check_labels(y, m)
    lam = _check_lam(lam)
    tol = check_positive(tol, "tol")
    maxiter = check_int(maxiter, "maxiter", minimum=1)
    a0 = np.ones(n) if a0 is None else check_params(a0, n, "a0")
    pos = y == 1

    def fun_grad(a):
        v, g, _ = _loglik_unchecked(a, A, pos, lam, 1)
        return -v / m, -g / m

    def extras(a):
        pred = A @ a > 1.0
        fp, fn = np.sum(~pos & pred), np.sum(pos & ~pred)
        return {"FP": fp, "FN": fn, "err": fp + fn}

    res, trace = _lbfgsb(fun_grad, a0, [(0.0, None)] * n, tol=tol, maxiter=maxiter,
                         method_name=method_name, extras=extras, sign=m)
    trace.meta.update(lam=lam, m=m, n=n)
    a = res.x
    value, grad, _ = _loglik_unchecked(a, A, pos, lam, 1)
    return Result(x=a, fun=value, jac=grad, nit=res.nit, nfev=res.nfev, njev=res.njev,
                  success=bool(res.success), message=str(res.message), trace=trace, lam=lam)


def kkt_residual(a, A, y, lam: float = 1.0) -> float:
    """Largest violation of the KKT conditions of max L over a >= 0, relative to the data size:
    |grad_i| where a_i > 0 and max(grad_i, 0) where a_i = 0, divided by m."""
    g = log_likelihood_grad(a, A, y, lam)
    a = check_params(a)
    viol = np.where(a > 0, np.abs(g), np.maximum(g, 0.0))
    return float(viol.max() / np.asarray(A).shape[0])




# --------------------------------------------------------------------------- choosing lambda

#: The lambda grid on which lambda is picked by training accuracy (29 points from 0.1 to 10).
LAM_GRID = np.geomspace(0.1, 10.0, 29)


def select_lambda(A, y, lams=LAM_GRID, *, refit: bool = True, tol: float = 1e-10, maxiter: int = 2000) -> dict:
    """Fit the star MLE at every lambda of the grid and keep the best training accuracy (ties go to
    the smallest lambda). With ``refit=False`` only a*(1) is fitted (its Result is returned as
    ``"result"``) and a*(lambda) = a*(1)/lambda is used (Thm 3.11, registered as the identity
    06.lambda_scaling): one fit for the whole grid."""
    lams = check_vector(lams, "lams")
    if np.any(lams <= 0):
        raise ValueError("lams must be positive")
    A = check_matrix(A, "A")
    y = check_labels(y, A.shape[0])
    result = None
    if refit:
        fits = np.array([fit_star(A, y, lam, tol=tol, maxiter=maxiter).x for lam in lams])
    else:
        result = fit_star(A, y, 1.0, tol=tol, maxiter=maxiter)
        fits = result.x[None, :] / lams[:, None]
    acc = np.mean((A @ fits.T > 1.0) == (y == 1)[:, None], axis=0)
    best = int(np.argmax(acc))
    return {"lams": lams, "fits": fits, "train_acc": acc, "best": best, "lam": float(lams[best]),
            "a": fits[best], "result": result}


def threshold_lambda(u, y) -> tuple[float, float]:
    """The rate lambda > 0 with the best training accuracy along the whole line of optima, exactly.

    ``u`` holds f_{a*(1)}(x_i) = <[x_i], a*(1)>. Since a*(lambda) = a*(1)/lambda (Thm 3.11), point i
    is predicted outside at rate lambda exactly when u_i > lambda, so the accuracy changes only at
    the values u_i: one sort finds the best lambda over (0, inf), where a grid could miss it (err is
    not unimodal in lambda). Returns (lambda, training accuracy); lambda is the midpoint of the best
    gap between consecutive values of u (the smallest such gap on ties).
    """
    u = check_vector(u, "u")
    if np.any(u < 0):
        raise ValueError("u must be non-negative (values of f_a with a >= 0)")
    y = check_labels(y, u.size)
    order = np.argsort(u, kind="stable")
    us, ys = u[order], y[order]
    # k = 0..m: the k smallest values of u predicted inside (label 0), the rest outside
    correct = (np.concatenate([[0], np.cumsum(ys == 0)])
               + np.concatenate([[np.sum(ys == 1)], np.sum(ys == 1) - np.cumsum(ys == 1)]))
    lower, upper = np.concatenate([[0.0], us]), np.concatenate([us, [np.inf]])
    k = int(np.argmax(np.where(upper > lower, correct, -1)))  # a cut needs a gap (lambda > 0 too)
    if np.isfinite(upper[k]):
        lam = 0.5 * (lower[k] + upper[k])
    else:  # everything inside: any lambda above max(u) does
        lam = 2.0 * lower[k] if lower[k] > 0 else 1.0
    return float(lam), float(correct[k] / u.size)


# --------------------------------------------------------------------------- scikit-learn style


class StarClassifier(ClassifierMixin, BaseEstimator):
    """The maximum-likelihood star as a scikit-learn classifier:
    ``StarClassifier().fit(X, y).predict(X)``, usable in ``GridSearchCV`` or ``cross_val_score``.

    Parameters
    ----------
    fan : Fan, optional
        The fixed complete simplicial fan (default: the 8-ray type-B fan of the plane).
    lam : float, "auto" or "exact"
        Rate lambda > 0 of the exponential model. ``"auto"`` picks it from ``lams`` by training
        accuracy, as the paper does; thanks to a*(lambda) = a*(1)/lambda that costs one fit.
        ``"exact"`` picks the best training accuracy over all lambda > 0
        (:func:`threshold_lambda`), also from one fit.
    lams : array
        Candidate rates for ``lam="auto"``.
    tol, maxiter :
        Passed to :func:`fit_star`.

    Attributes
    ----------
    a_ : (n_rays,) array
        The fitted parameter a*(lam_) (a_i = 0: the star is unbounded along ray i).
    lam_ : float
        The rate used.
    fan_ : Fan
    classes_ : array([0, 1])
        Label 1 means outside the star (the paper's convention).
    result_ : Result
        The run of :func:`fit_star` at lambda = ``lam_`` (or at 1 for ``"auto"`` and ``"exact"``),
        with its trace.
    """

    def __init__(self, fan: Fan | None = None, lam: float | str = "auto", lams=LAM_GRID, tol: float = 1e-10,
                 maxiter: int = 2000):
        self.fan = fan
        self.lam = lam
        self.lams = lams
        # Checked here as well as in fit: a broken knob should fail where it is typed.
        self.tol = check_positive(tol, "tol")
        self.maxiter = check_int(maxiter, "maxiter", minimum=1)

    def _fan(self) -> Fan:
        if self.fan is None:
            return type_b_fan(2)
        if not isinstance(self.fan, Fan):
            raise ValueError(f"fan must be a Fan (e.g. type_b_fan(2)), got {type(self.fan).__name__}")
        return self.fan

    def fit(self, X, y) -> StarClassifier:
        """Maximise the log-likelihood over a >= 0 (Algorithm 1) on the fan coordinates of X."""
        fan = self._fan()
        X = check_matrix(X, "X", shape=(None, fan.dim))
        y = check_labels(y, X.shape[0])
        A = fan.coordinates(X)
        if isinstance(self.lam, str):
            if self.lam not in ("auto", "exact"):
                raise ValueError(f"lam must be a positive number, 'auto' or 'exact', got {self.lam!r}")
            if self.lam == "auto":
                sel = select_lambda(A, y, self.lams, refit=False, tol=self.tol, maxiter=self.maxiter)
                res, self.lam_, self.a_ = sel["result"], sel["lam"], sel["a"]
            else:
                res = fit_star(A, y, 1.0, tol=self.tol, maxiter=self.maxiter)
                self.lam_ = threshold_lambda(A @ res.x, y)[0]
                self.a_ = res.x / self.lam_
        else:
            res = fit_star(A, y, self.lam, tol=self.tol, maxiter=self.maxiter)
            self.lam_, self.a_ = float(self.lam), res.x
        self.fan_, self.result_ = fan, res
        self.classes_ = np.array([0, 1])
        self.n_features_in_ = fan.dim
        return self

    def _check_fitted(self, X) -> np.ndarray:
        if not hasattr(self, "a_"):
            raise ValueError("this StarClassifier is not fitted yet: call fit(X, y) first")
        return check_matrix(X, "X", shape=(None, self.fan_.dim))

    def decision_function(self, X) -> np.ndarray:
        """f_a(x) - 1: positive outside the star (label 1), <= 0 inside."""
        X = self._check_fitted(X)
        return self.fan_.coordinates(X) @ self.a_ - 1.0

    def predict(self, X) -> np.ndarray:
        """Labels c_a(x): 1 outside the star, 0 inside."""
        return (self.decision_function(X) > 0.0).astype(int)

    def predict_proba(self, X) -> np.ndarray:
        """The model's probabilities (P(y = 0 | x), P(y = 1 | x)) = (e^{-lam f_a(x)}, 1 - e^{-lam f_a(x)})."""
        X = self._check_fitted(X)
        p0 = np.exp(-self.lam_ * (self.fan_.coordinates(X) @ self.a_))
        return np.column_stack([p0, 1.0 - p0])
