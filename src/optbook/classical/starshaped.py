"""Chapter 06: classifiers whose decision sets are star-shaped polyhedra (Brandenburg and
Jochemko, NeurIPS 2025).

A complete simplicial fan with ray generators v_1..v_n fixes the model. A parameter a >= 0 defines
the continuous piecewise-linear function f_a that is linear on every cone with f_a(v_i) = a_i;
the star ``star(a) = {x : f_a(x) <= 1}`` has vertices v_i / a_i. Because
f_a(x) = <[x]_fan, a> is linear in a (``[x]_fan`` are the *fan coordinates* of x), the 0/1 loss
is constant on the chambers of a hyperplane arrangement and the log-likelihood of an exponential
model is concave in a, so the maximum-likelihood star is a convex program (Algorithm 1).

Label convention (the paper's): label 1 means *outside* the star (f_a(x) > 1), label 0 inside.

Baselines: logistic regression on raw x or on fan features, the convex kite star, a small ReLU
network (5, 2) in torch, and an RBF-kernel SVM from scikit-learn when it is installed.
"""
from __future__ import annotations

import importlib.util
from dataclasses import dataclass, field
from functools import lru_cache
from itertools import permutations, product

import numpy as np
import plotly.graph_objects as go
from scipy.optimize import minimize

from ..claims import Measured, claim
from ..core import Result, RngLike, Trace, as_rng, check_in_range, check_int, check_matrix, check_positive, check_vector
from ..viz import Phase, SliderStep, base_layout, color_for, slider_figure
from ..core.threads import one_torch_thread
from ..widgets import Explorer, Slider

#: Where log(1 - exp(-lambda u)) is evaluated for a positive point with u = 0 (a degenerate star).
U_FLOOR = 1e-12
#: Whether scikit-learn (for the RBF-SVM baseline) is installed.
HAVE_SKLEARN = importlib.util.find_spec("sklearn") is not None


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
        if cones.ndim != 2 or cones.shape[1] != d or not np.issubdtype(cones.dtype, np.integer):
            raise ValueError(f"cones must be an integer array of shape (k, {d}), got shape {cones.shape}")
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


# --------------------------------------------------------------------------- baselines


def logistic_regression(Phi, y, *, l2: float = 1e-6, tol: float = 1e-10, maxiter: int = 2000,
                        method_name: str = "logistic regression") -> Result:
    """Logistic regression with a bias: min_w sum log(1 + e^z) - y z + (l2/2)|w|^2, z = w^T [phi; 1]
    (the tiny ridge keeps w bounded on separable data). Predict 1 when z > 0. ``Phi`` holds the
    features: raw x, or the fan coordinates [x] (a relaxation of the star model: free signs and bias)."""
    Phi = check_matrix(Phi, "Phi")
    m, p = Phi.shape
    y = check_labels(y, m)
    l2 = check_positive(l2, "l2", allow_zero=True)
    tol = check_positive(tol, "tol")
    maxiter = check_int(maxiter, "maxiter", minimum=1)
    Z = np.hstack([Phi, np.ones((m, 1))])

    def fun_grad(w):
        z = Z @ w
        f = np.sum(np.logaddexp(0.0, z) - y * z) / m + 0.5 * l2 * (w[:-1] @ w[:-1])
        prob = 0.5 * (1.0 + np.tanh(0.5 * z))  # the logistic sigmoid, overflow-free
        g = Z.T @ (prob - y) / m
        g[:-1] += l2 * w[:-1]
        return f, g

    res, trace = _lbfgsb(fun_grad, np.zeros(p + 1), None, tol=tol, maxiter=maxiter, method_name=method_name)
    return Result(x=res.x, fun=float(res.fun), jac=res.jac, nit=res.nit, nfev=res.nfev, njev=res.njev,
                  success=bool(res.success), message=str(res.message), trace=trace)


def logistic_predict(w, Phi) -> np.ndarray:
    """Labels 1{w^T [phi; 1] > 0} of a fitted logistic regression."""
    Phi = check_matrix(Phi, "Phi")
    w = check_vector(w, "w", Phi.shape[1] + 1)
    return (Phi @ w[:-1] + w[-1] > 0).astype(int)


def mlp_baseline(X_train, y_train, X_test, *, hidden: tuple[int, ...] = (5, 2), steps: int = 800,
                 lr: float = 0.03, restarts: int = 3, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """A small ReLU network (the paper's (5, 2)) trained full batch with Adam on the logistic
    loss, keeping the best of ``restarts`` random initialisations by final training loss (a
    network this narrow often starts with dead units and predicts one class). Returns predicted
    labels on the training and the test points. Seeded locally: the global torch RNG state is
    restored afterwards."""
    import torch

    X_train = check_matrix(X_train, "X_train")
    y_train = check_labels(y_train, X_train.shape[0])
    X_test = check_matrix(X_test, "X_test", shape=(None, X_train.shape[1]))
    if not hidden or any(not isinstance(h, int) or h < 1 for h in hidden):
        raise ValueError(f"hidden must be a non-empty tuple of positive ints, got {hidden!r}")
    steps = check_int(steps, "steps", minimum=1)
    lr = check_positive(lr, "lr")
    restarts = check_int(restarts, "restarts", minimum=1)
    seed = check_int(seed, "seed")
    xt, xs = torch.as_tensor(X_train), torch.as_tensor(X_test)
    yt = torch.as_tensor(y_train, dtype=torch.float64)
    with one_torch_thread():  # a 20-parameter network: extra threads only add overhead
        best = _train_mlps(torch, xt, xs, yt, X_train.shape[1], hidden, steps, lr, restarts, seed)
    return best[1]


def _train_mlps(torch, xt, xs, yt, d, hidden, steps, lr, restarts, seed):
    """Train ``restarts`` independent copies of the network at once (batched weights: one Adam
    over disjoint parameters and the sum of their mean losses is the same as separate runs), with
    nn.Linear's default initialisation."""
    lossf = torch.nn.BCEWithLogitsLoss()
    sizes = (d, *hidden, 1)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        params = []
        for fan_in, fan_out in zip(sizes[:-1], sizes[1:]):
            bound = 1.0 / np.sqrt(fan_in)
            W = (torch.rand(restarts, fan_in, fan_out, dtype=torch.float64) * 2 - 1) * bound
            b = (torch.rand(restarts, 1, fan_out, dtype=torch.float64) * 2 - 1) * bound
            params += [W.requires_grad_(), b.requires_grad_()]

    def forward(x):
        h = x.expand(restarts, *x.shape)
        for i in range(0, len(params), 2):
            h = torch.baddbmm(params[i + 1], h, params[i])
            if i + 2 < len(params):
                h = torch.relu(h)
        return h.squeeze(2)  # restarts x m logits

    opt = torch.optim.Adam(params, lr=lr)
    target = yt.expand(restarts, -1)
    for _ in range(steps):
        opt.zero_grad()
        loss = sum(lossf(z, t) for z, t in zip(forward(xt), target))
        loss.backward()
        opt.step()
    with torch.no_grad():
        z_tr, z_te = forward(xt), forward(xs)
        final = [float(lossf(z, t)) for z, t in zip(z_tr, target)]
        r = int(np.argmin(final))
        return final[r], ((z_tr[r] > 0).numpy().astype(int), (z_te[r] > 0).numpy().astype(int))


def rbf_svm_baseline(X_train, y_train, X_test, *, C: float = 1.0) -> tuple[np.ndarray, np.ndarray]:
    """RBF-kernel SVM from scikit-learn (``SVC(kernel='rbf', C=C, gamma='scale')``); predicted
    labels on the training and the test points. Needs scikit-learn (see ``HAVE_SKLEARN``)."""
    X_train = check_matrix(X_train, "X_train")
    y_train = check_labels(y_train, X_train.shape[0])
    X_test = check_matrix(X_test, "X_test", shape=(None, X_train.shape[1]))
    C = check_positive(C, "C")
    if not HAVE_SKLEARN:
        raise ImportError("rbf_svm_baseline needs scikit-learn: pip install scikit-learn")
    from sklearn.svm import SVC

    svm = SVC(kernel="rbf", C=C, gamma="scale").fit(X_train, y_train)
    return svm.predict(X_train).astype(int), svm.predict(X_test).astype(int)


# --------------------------------------------------------------------------- data and experiments

#: The card's fixed truth on the type-B fan (rays by angle from (1, 0)).
A_TRUE = np.array([1.6, 1.2, 2.5, 1.1, 1.8, 1.3, 3.0, 1.0])
#: The lambda grid on which lambda is picked by training accuracy (29 points, as in the card).
LAM_GRID = np.geomspace(0.1, 10.0, 29)


def sample_disk(m: int, rng: RngLike = None) -> np.ndarray:
    """m points uniform in the unit disk."""
    m = check_int(m, "m", minimum=1)
    rng = as_rng(rng)
    r, t = np.sqrt(rng.uniform(size=m)), rng.uniform(0, 2 * np.pi, size=m)
    return np.stack([r * np.cos(t), r * np.sin(t)], axis=1)


def make_star_data(fan: Fan, a_true, m: int = 500, flip: float = 0.1, rng: RngLike = None):
    """The paper's experiment: m points uniform in the unit disk labelled by star(a_true)
    (1 = outside), each label flipped with probability ``flip``. Returns X, y, y_clean."""
    if not isinstance(fan, Fan) or fan.dim != 2:
        raise ValueError("fan must be a 2-D Fan")
    a_true = check_params(a_true, fan.n_rays, "a_true")
    flip = check_in_range(flip, "flip", 0.0, 0.5, closed=(True, False))
    rng = as_rng(rng)
    X = sample_disk(m, rng)
    y_clean = star_classify(fan.coordinates(X), a_true)
    y = np.where(rng.uniform(size=m) < flip, 1 - y_clean, y_clean)
    return X, y, y_clean


def select_lambda(A, y, lams=LAM_GRID, *, refit: bool = True) -> dict:
    """Fit the star MLE at every lambda of the grid and keep the best training accuracy (ties go to
    the smallest lambda). With ``refit=False`` only a*(1) is fitted and a*(lambda) = a*(1)/lambda
    is used (Thm 3.11), which is what the explorers do."""
    lams = check_vector(lams, "lams")
    if np.any(lams <= 0):
        raise ValueError("lams must be positive")
    y = check_labels(y)
    if refit:
        fits = np.array([fit_star(A, y, lam).x for lam in lams])
    else:
        fits = fit_star(A, y, 1.0).x[None, :] / lams[:, None]
    acc = np.array([np.mean(star_classify(A, a) == y) for a in fits])
    best = int(np.argmax(acc))
    return {"lams": lams, "fits": fits, "train_acc": acc, "best": best, "lam": float(lams[best]), "a": fits[best]}


@lru_cache(maxsize=16)
def holdout_experiment(seed: int, n_lams: int = 29) -> dict:
    """The card's CPU check: a_true ~ U[1, 3]^8 on the type-B fan, 500 points in the unit disk, 10%
    flips, 250/250 train/holdout split; lambda picked on the grid by training accuracy, with
    a*(lambda) = a*(1)/lambda (Thm 3.11, checked by the claim 06.lambda_scaling). Returns
    train and holdout accuracy of: star MLE (type-B), kite star MLE, logistic regression on x,
    logistic regression on the type-B fan coordinates and the majority class. Cached."""
    seed = check_int(seed, "seed")
    n_lams = check_int(n_lams, "n_lams", minimum=2)
    rng = np.random.default_rng(seed)
    fan = type_b_fan(2)
    a_true = rng.uniform(1.0, 3.0, size=fan.n_rays)
    X, y, _ = make_star_data(fan, a_true, 500, 0.1, rng)
    tr, te = slice(0, 250), slice(250, 500)
    lams = np.geomspace(0.1, 10.0, n_lams)
    acc = {}

    def record(name, pred_tr, pred_te):
        acc[name] = (float(np.mean(pred_tr == y[tr])), float(np.mean(pred_te == y[te])))

    A = fan.coordinates(X)
    sel = select_lambda(A[tr], y[tr], lams, refit=False)
    record("star MLE (type-B fan)", star_classify(A[tr], sel["a"]), star_classify(A[te], sel["a"]))
    K = kite_fan(2).coordinates(X)
    selk = select_lambda(K[tr], y[tr], lams, refit=False)
    record("kite MLE (convex)", star_classify(K[tr], selk["a"]), star_classify(K[te], selk["a"]))
    w = logistic_regression(X[tr], y[tr]).x
    record("logistic regression", logistic_predict(w, X[tr]), logistic_predict(w, X[te]))
    wf = logistic_regression(A[tr], y[tr]).x
    record("logistic on fan coordinates", logistic_predict(wf, A[tr]), logistic_predict(wf, A[te]))
    major = int(np.mean(y[tr]) > 0.5)
    record("majority class", np.full(250, major), np.full(250, major))
    return {"seed": seed, "a_true": a_true, "X": X, "y": y, "lam": sel["lam"], "a_star": sel["a"],
            "selection": sel, "acc": acc}


# --------------------------------------------------------------------------- claims

SEEDS = (0, 1, 2, 3, 4)


@claim("06", "The maximum-likelihood star beats logistic regression on star-shaped data",
       expect="on each seed (5; 3 in fast mode): star-MLE holdout accuracy >= logistic + 0.05 "
              "and training accuracy >= logistic + 0.1",
       name="star_beats_logistic")
def claim_star_beats_logistic(fast: bool = False) -> Measured:
    seeds = SEEDS[:3] if fast else SEEDS
    rows = [holdout_experiment(s, 15 if fast else 29)["acc"] for s in seeds]
    star_te = np.array([r["star MLE (type-B fan)"][1] for r in rows])
    log_te = np.array([r["logistic regression"][1] for r in rows])
    star_tr = np.array([r["star MLE (type-B fan)"][0] for r in rows])
    log_tr = np.array([r["logistic regression"][0] for r in rows])
    gap_te, gap_tr = star_te - log_te, star_tr - log_tr
    values = {"seeds": len(seeds), "star_holdout_min": star_te.min(), "star_holdout_max": star_te.max(),
              "logistic_holdout_min": log_te.min(), "logistic_holdout_max": log_te.max(),
              "min_holdout_gap": gap_te.min(), "min_train_gap": gap_tr.min()}
    holds = bool(gap_te.min() >= 0.05 and gap_tr.min() >= 0.1)
    return Measured(values, holds=holds,
                    summary=f"holdout: star {star_te.min():.3f}-{star_te.max():.3f} vs logistic "
                            f"{log_te.min():.3f}-{log_te.max():.3f}; smallest gap {gap_te.min():+.3f}",
                    details={"rows": rows, "seeds": seeds})


def lambda_path(A, y, lams, *, refit: bool = True) -> dict:
    """a*(lambda) on a grid (fitted independently from a0 = 1 at every lambda), with the scaling
    error max |lambda a*(lambda) - a*(1)| / |a*(1)| and FP, FN, err along the path."""
    lams = check_vector(lams, "lams")
    if np.any(lams <= 0):
        raise ValueError("lams must be positive")
    ref = fit_star(A, y, 1.0).x
    fits = np.array([fit_star(A, y, lam).x for lam in lams]) if refit else ref[None, :] / lams[:, None]
    scaled_err = np.linalg.norm(lams[:, None] * fits - ref[None, :], axis=1) / np.linalg.norm(ref)
    conf = [confusion(A, a, y) for a in fits]
    return {"lams": lams, "fits": fits, "a1": ref, "scaling_error": scaled_err,
            "FP": np.array([c["FP"] for c in conf]), "FN": np.array([c["FN"] for c in conf]),
            "err": np.array([c["err"] for c in conf])}


@lru_cache(maxsize=1)
def card_data() -> dict:
    """The card's data set: 500 points of the type-B truth A_TRUE, 10% flips (seed 2025)."""
    X, y, _ = make_star_data(type_b_fan(2), A_TRUE, 500, 0.1, rng=2025)
    return {"X": X, "y": y, "A": type_b_fan(2).coordinates(X)}


@lru_cache(maxsize=4)
def _path_data(n_lams: int) -> dict:
    d = card_data()
    return {**d, **lambda_path(d["A"], d["y"], np.geomspace(0.1, 10.0, n_lams))}


@claim("06", "lambda only rescales the optimum: a*(lambda) = a*(1) / lambda (Thm 3.11)",
       expect="max over the lambda grid of |lambda a*(lambda) - a*(1)| / |a*(1)| <= 1e-4, each fit from a0 = 1",
       name="lambda_scaling")
def claim_lambda_scaling(fast: bool = False) -> Measured:
    p = _path_data(21 if fast else 61)
    worst = float(p["scaling_error"].max())
    return Measured({"lambdas": len(p["lams"]), "max_relative_scaling_error": worst}, holds=worst <= 1e-4,
                    summary=f"largest relative deviation {worst:.1e}", details=p)


@claim("06", "Along a*(lambda), false positives never increase and false negatives never decrease (Cor 3.12)",
       expect="on a fine lambda grid: FP non-increasing and FN non-decreasing in lambda",
       name="threshold_monotone")
def claim_threshold_monotone(fast: bool = False) -> Measured:
    p = _path_data(21 if fast else 61)
    dfp, dfn, derr = np.diff(p["FP"]), np.diff(p["FN"]), np.diff(np.sign(np.diff(p["err"]))[np.diff(p["err"]) != 0])
    up_fp, down_fn = int(np.sum(dfp > 0)), int(np.sum(dfn < 0))
    turns = int(np.sum(derr > 0))  # local minima of err along the path (err is not unimodal)
    return Measured({"lambdas": len(p["lams"]), "FP_increases": up_fp, "FN_decreases": down_fn,
                     "FP_range": p["FP"].max() - p["FP"].min(), "FN_range": p["FN"].max() - p["FN"].min(),
                     "err_local_minima": turns + 1},
                    holds=up_fp == 0 and down_fn == 0 and p["FP"].max() > p["FP"].min(),
                    summary=f"FP {p['FP'].max()} -> {p['FP'].min()}, FN {p['FN'].min()} -> {p['FN'].max()}, "
                            f"{up_fp + down_fn} violations", details=p)


# --------------------------------------------------------------------------- figures and explorers

INSIDE, OUTSIDE = "#1f77b4", "#d62728"


def star_polygon(fan: Fan, a, radius: float = 1.6) -> np.ndarray:
    """Closed polygon of the 2-D star(a) boundary (vertices v_i / a_i in angular order); a ray
    with a_i = 0 is cut at ``radius`` (the star is unbounded there)."""
    if fan._angles is None:
        raise ValueError("fan must be a 2-D fan built by fan_2d")
    a = check_params(a, fan.n_rays)
    dirs = fan.rays / np.linalg.norm(fan.rays, axis=1, keepdims=True)
    with np.errstate(divide="ignore"):
        r = np.where(a > 0, np.linalg.norm(fan.rays, axis=1) / np.where(a > 0, a, 1.0), radius)
    pts = dirs * np.minimum(r, radius)[:, None]
    return np.vstack([pts, pts[:1]])


def star_traces(fan: Fan, a, X, y, *, name: str = "star(a)", show_rays: bool = True) -> list:
    """The star's boundary, the fan's rays and the data (circles = label 0 inside, crosses =
    label 1 outside; black rings mark misclassified points). Always 5 traces."""
    poly = star_polygon(fan, a)
    pred = star_classify(fan.coordinates(X), a)
    wrong = pred != y
    R = 1.5 * fan.rays / np.linalg.norm(fan.rays, axis=1, keepdims=True)
    rx = np.column_stack([np.zeros(len(R)), R[:, 0], np.full(len(R), np.nan)]).ravel() if show_rays else []
    ry = np.column_stack([np.zeros(len(R)), R[:, 1], np.full(len(R), np.nan)]).ravel() if show_rays else []
    return [
        go.Scatter(x=rx, y=ry, mode="lines", name="fan rays", line=dict(color="#bbb", width=1, dash="dot")),
        go.Scatter(x=X[y == 0, 0], y=X[y == 0, 1], mode="markers", name="label 0 (inside)",
                   marker=dict(color=INSIDE, size=5, symbol="circle")),
        go.Scatter(x=X[y == 1, 0], y=X[y == 1, 1], mode="markers", name="label 1 (outside)",
                   marker=dict(color=OUTSIDE, size=6, symbol="x")),
        go.Scatter(x=X[wrong, 0], y=X[wrong, 1], mode="markers", name="misclassified",
                   marker=dict(color="rgba(0,0,0,0)", size=11, line=dict(color="black", width=1.3))),
        go.Scatter(x=poly[:, 0], y=poly[:, 1], mode="lines+markers", name=name, fill="toself",
                   fillcolor="rgba(44,160,44,0.12)", line=dict(color="#2ca02c", width=2.5), marker=dict(size=7)),
    ]


def _square_axes(fig: go.Figure, lim: float = 1.55) -> go.Figure:
    fig.update_xaxes(range=[-lim, lim], autorange=False, constrain="domain")
    fig.update_yaxes(range=[-lim, lim], autorange=False, scaleanchor="x", scaleratio=1)
    return fig


@lru_cache(maxsize=2)
def editor_data() -> dict:
    """Data of the star editor: 200 points of the card's truth on the type-B fan and the MLE."""
    fan = type_b_fan(2)
    X, y, _ = make_star_data(fan, A_TRUE, 200, 0.1, rng=7)
    A = fan.coordinates(X)
    sel = select_lambda(A, y, refit=False)
    return {"fan": fan, "X": X, "y": y, "A": A, "a_mle": sel["a"], "lam": sel["lam"]}


def _editor_title(conf: dict) -> str:
    return f"FP = {conf['FP']}, FN = {conf['FN']}, err = {conf['err']} of 200 points"


def star_editor_figure(a1=1.0, a2=1.0, a3=1.0, a4=1.0, a5=1.0, a6=1.0, a7=1.0, a8=1.0) -> go.Figure:
    """The star editor: star(a) over the data with live FP / FN / err (the explorer's figure)."""
    d = editor_data()
    a = np.array([a1, a2, a3, a4, a5, a6, a7, a8], dtype=float)
    fig = go.Figure(star_traces(d["fan"], a, d["X"], d["y"]))
    base_layout(fig, title=_editor_title(confusion(d["A"], a, d["y"])), xaxis_title="x<sub>1</sub>",
                yaxis_title="x<sub>2</sub>", height=560)
    return _square_axes(fig)


EDITOR_VALUES = tuple(np.round(np.arange(0.5, 3.01, 0.25), 2))
EXPLORER_EDITOR = Explorer("06", "star_editor", star_editor_figure,
                           {f"a{i + 1}": Slider(f"a{i + 1}", EDITOR_VALUES, 1.0) for i in range(8)},
                           description="ray-length sliders a_1..a_8 of a star on the type-B fan, with FP/FN/err")


def star_editor_slider(ray: int = 7, values=EDITOR_VALUES) -> go.Figure:
    """Static twin of the editor: the MLE star (rounded to the slider grid) with one ray's a_i moved."""
    d = editor_data()
    base = np.array([min(EDITOR_VALUES, key=lambda v: abs(v - t)) for t in d["a_mle"]])
    ray = check_int(ray, "ray", minimum=1)
    if ray > 8:
        raise ValueError("ray must be 1..8")
    steps = []
    for v in values:
        a = base.copy()
        a[ray - 1] = v
        steps.append(SliderStep(f"{v:g}", star_traces(d["fan"], a, d["X"], d["y"]),
                                layout={"title": {"text": _editor_title(confusion(d["A"], a, d["y"]))}}))
    active = int(np.argmin(np.abs(np.array(values) - base[ray - 1])))
    fig = slider_figure(steps, slider_label=f"a{ray}", active=active, fixed_axes=False,
                        xaxis_title="x<sub>1</sub>", yaxis_title="x<sub>2</sub>", height=600)
    fig.update_layout(title=dict(text=_editor_title(confusion(d["A"], np.where(
        np.arange(8) == ray - 1, values[active], base), d["y"])), x=0.01))
    return _square_axes(fig)


# ---- parameter space for two rays (1-D data, fan v_1 = -e_1, v_2 = e_1)

LINE_FAN_RAYS = np.array([[-1.0], [1.0]])


def line_fan() -> Fan:
    """The 1-D fan with v_1 = -e_1 and v_2 = e_1 (n = 2): star(a) = [-1/a_1, 1/a_2]."""
    return Fan(LINE_FAN_RAYS, np.array([[0], [1]]), name="1-D fan")


@lru_cache(maxsize=2)
def chamber_data(grid: int = 81, amax: float = 4.0) -> dict:
    """16 points in [-1, 1] labelled by the interval star(1.4, 2.2), 3 labels flipped; err on a grid
    of (a_1, a_2), the hyperplanes (lines a_1 = 1/|x| or a_2 = 1/x) and a*(1)."""
    rng = np.random.default_rng(3)
    x = np.sort(rng.uniform(-1, 1, 16))
    fan = line_fan()
    A = fan.coordinates(x[:, None])
    y = star_classify(A, [1.4, 2.2])
    y[[2, 9, 14]] = 1 - y[[2, 9, 14]]
    g = np.linspace(amax / grid, amax, grid)
    G1, G2 = np.meshgrid(g, g)
    P = np.stack([G1.ravel(), G2.ravel()])
    U = A @ P
    pred = U > 1.0
    pos = (y == 1)[:, None]
    fp, fn = np.sum(~pos & pred, axis=0), np.sum(pos & ~pred, axis=0)
    lines = [(1.0 / abs(v), 0) if v < 0 else (1.0 / v, 1) for v in x if v != 0 and 1.0 / abs(v) <= amax]
    hx = np.concatenate([[c, c, np.nan] if ax == 0 else [0, amax, np.nan] for c, ax in lines])
    hy = np.concatenate([[0, amax, np.nan] if ax == 0 else [c, c, np.nan] for c, ax in lines])
    return {"x": x, "y": y, "A": A, "grid": g, "P": P, "U": U, "err": (fp + fn).reshape(grid, grid),
            "a1": fit_star(A, y, 1.0).x, "amax": amax, "hyperplanes": (hx, hy)}


def _chamber_traces(lam: float) -> tuple[list, dict]:
    d = chamber_data()
    pos = (d["y"] == 1)[:, None]
    s = lam * np.maximum(d["U"], U_FLOOR)
    L = (np.sum(np.where(pos, np.log(-np.expm1(-np.where(pos, s, 1.0))), -s), axis=0)).reshape(d["err"].shape)
    a_star = d["a1"] / lam
    L_star = log_likelihood(a_star, d["A"], d["y"], lam)
    gap = np.log10(np.maximum(L_star - L, 1e-6))
    t = np.linspace(0, d["amax"] * 1.5 / np.max(d["a1"]), 50)
    conf = confusion(d["A"], a_star, d["y"])
    traces = [
        go.Contour(x=d["grid"][::2], y=d["grid"][::2], z=np.round(gap[::2, ::2], 3),
                   contours=dict(coloring="lines", start=-1.0, end=1.5, size=0.25),
                   line=dict(width=1.2), colorscale="Plasma", showscale=False, name="log10(L* - L)",
                   showlegend=True),
        go.Scatter(x=t * d["a1"][0], y=t * d["a1"][1], mode="lines", name="a*(lambda) for all lambda",
                   line=dict(color="#2ca02c", width=2, dash="dash")),
        go.Scatter(x=[a_star[0]], y=[a_star[1]], mode="markers", name="a*(lambda)",
                   marker=dict(color="#2ca02c", size=13, symbol="star", line=dict(color="black", width=1))),
    ]
    title = (f"lambda = {lam:g}: a* = ({a_star[0]:.2f}, {a_star[1]:.2f}), "
             f"FP = {conf['FP']}, FN = {conf['FN']}, err = {conf['err']}")
    return traces, {"title": {"text": title}}


CHAMBER_LAMS = (0.3, 0.5, 0.7, 1.0, 1.4, 2.0, 3.0, 5.0)


def _chamber_axes(fig: go.Figure) -> go.Figure:
    amax = chamber_data()["amax"]
    fig.update_xaxes(range=[0, amax], autorange=False, constrain="domain",
                     title_text="a<sub>1</sub> (ray -e<sub>1</sub>)")
    fig.update_yaxes(range=[0, amax], autorange=False, title_text="a<sub>2</sub> (ray +e<sub>1</sub>)",
                     scaleanchor="x", scaleratio=1)
    return fig


def _chamber_background() -> list:
    """The lambda-free layers: err on the chambers (grey) and the hyperplanes H_i (lines)."""
    d = chamber_data()
    hx, hy = d["hyperplanes"]
    return [
        go.Heatmap(x=d["grid"], y=d["grid"], z=d["err"], colorscale="Greys", zmin=0, zmax=d["y"].size,
                   colorbar=dict(title=dict(text="err (mistakes)", side="right"), x=1.02), name="err"),
        go.Scatter(x=hx, y=hy, mode="lines", name="hyperplanes H<sub>i</sub>", line=dict(color="#555", width=1)),
    ]


def chamber_figure(lam: float = 1.0) -> go.Figure:
    """Parameter space of the two-ray model: err constant on the chambers of the arrangement
    (grey), contours of log10(L*(lambda) - L_lambda), the line of optima and a*(lambda)."""
    traces, layout = _chamber_traces(check_positive(lam, "lam"))
    fig = go.Figure(_chamber_background() + traces)
    fig.update_layout(**layout)
    base_layout(fig, title=layout["title"]["text"], height=600)
    return _chamber_axes(fig)


EXPLORER_CHAMBERS = Explorer("06", "chambers", chamber_figure,
                             {"lam": Slider("lambda", CHAMBER_LAMS, 1.0)},
                             description="chambers of the 0/1 loss and likelihood contours for two rays")


def chamber_slider() -> go.Figure:
    """Static twin of the chambers explorer (one frame per lambda)."""
    background = _chamber_background()  # small (an 81 x 81 integer grid): repeated in every frame
    steps = []
    for lam in CHAMBER_LAMS:
        traces, layout = _chamber_traces(lam)
        steps.append(SliderStep(f"{lam:g}", background + traces, layout))
    fig = slider_figure(steps, slider_label="lambda", active=CHAMBER_LAMS.index(1.0), fixed_axes=False, height=640)
    fig.update_layout(title=dict(text=steps[CHAMBER_LAMS.index(1.0)].layout["title"]["text"], x=0.01))
    return _chamber_axes(fig)


# ---- fan resolution: k equiangular rays

RESOLUTIONS = (4, 6, 8, 10, 12, 16, 20, 24)


@lru_cache(maxsize=4)
def _resolution_base(seed: int) -> dict:
    rng = np.random.default_rng(seed)
    X, y, _ = make_star_data(type_b_fan(2), A_TRUE, 300, 0.1, rng)
    return {"X": X, "y": y, "tr": slice(0, 150), "te": slice(150, 300)}


@lru_cache(maxsize=64)
def resolution_fit(k: int, seed: int = 11) -> dict:
    """Star MLE on k equiangular rays fitted to 150 training points of the card's truth, lambda
    picked by training accuracy (a*(lambda) = a*(1)/lambda); training and holdout accuracy. Cached."""
    k = check_int(k, "k", minimum=3)
    b = _resolution_base(seed)
    fan = equiangular_fan(k)
    A = fan.coordinates(b["X"])
    tr, te, y = b["tr"], b["te"], b["y"]
    sel = select_lambda(A[tr], y[tr], refit=False)
    acc_tr = float(np.mean(star_classify(A[tr], sel["a"]) == y[tr]))
    acc_te = float(np.mean(star_classify(A[te], sel["a"]) == y[te]))
    return {"fan": fan, "a": sel["a"], "a1": sel["fits"][0] * sel["lams"][0], "lam": sel["lam"],
            "train": acc_tr, "holdout": acc_te, "A": A}


def resolution_curve(seeds=(11, 12, 13), ks=RESOLUTIONS) -> dict:
    """Mean training and holdout accuracy against the number of rays k."""
    tr = np.array([[resolution_fit(k, s)["train"] for k in ks] for s in seeds])
    te = np.array([[resolution_fit(k, s)["holdout"] for k in ks] for s in seeds])
    return {"ks": np.array(ks), "train": tr.mean(axis=0), "holdout": te.mean(axis=0),
            "train_all": tr, "holdout_all": te}


@lru_cache(maxsize=4)
def _resolution_all(seed: int) -> dict:
    return {k: resolution_fit(k, seed) for k in RESOLUTIONS}


def _resolution_traces(k: int, lam_scale: float = 1.0, seed: int = 11) -> tuple[list, dict]:
    f = _resolution_all(seed)[k] if k in RESOLUTIONS else resolution_fit(k, seed)
    b = _resolution_base(seed)
    a = f["a"] / lam_scale
    X, y = b["X"][b["te"]], b["y"][b["te"]]
    A = f["A"][b["te"]]
    acc_tr = float(np.mean(star_classify(f["A"][b["tr"]], a) == b["y"][b["tr"]]))
    acc_te = float(np.mean(star_classify(A, a) == y))
    traces = star_traces(f["fan"], a, X, y, name=f"MLE star, {k} rays")
    title = f"k = {k} rays: training accuracy {acc_tr:.3f}, holdout accuracy {acc_te:.3f} (holdout points shown)"
    return traces, {"title": {"text": title}}


def resolution_figure(k: int = 8, lam_scale: float = 1.0) -> go.Figure:
    """The fitted star on k equiangular rays over the holdout points; ``lam_scale`` multiplies the
    selected lambda (the threshold), so the star is rescaled by 1/lam_scale."""
    traces, layout = _resolution_traces(k, check_positive(lam_scale, "lam_scale"))
    fig = go.Figure(traces)
    base_layout(fig, title=layout["title"]["text"], xaxis_title="x<sub>1</sub>", yaxis_title="x<sub>2</sub>",
                height=560)
    return _square_axes(fig)


EXPLORER_RESOLUTION = Explorer("06", "fan_resolution", resolution_figure,
                               {"k": Slider("rays k", RESOLUTIONS, 8),
                                "lam_scale": Slider("lambda / selected lambda",
                                                    (0.5, 0.7, 0.85, 1.0, 1.2, 1.5, 2.0), 1.0)},
                               description="expressivity vs overfitting as the fan gets finer; lambda as a threshold")


def resolution_slider() -> go.Figure:
    """Static twin of the fan-resolution explorer (one frame per k, selected lambda)."""
    steps = [SliderStep(str(k), *_resolution_traces(k)) for k in RESOLUTIONS]
    act = RESOLUTIONS.index(8)
    fig = slider_figure(steps, slider_label="rays k", active=act, fixed_axes=False,
                        xaxis_title="x<sub>1</sub>", yaxis_title="x<sub>2</sub>", height=600)
    fig.update_layout(title=dict(text=steps[act].layout["title"]["text"], x=0.01))
    return _square_axes(fig)


def resolution_curve_figure(curve: dict) -> go.Figure:
    """Training and holdout accuracy against the number of rays k."""
    fig = go.Figure([
        go.Scatter(x=curve["ks"], y=curve["train"], mode="lines+markers", name="training accuracy",
                   line=dict(color=color_for(0))),
        go.Scatter(x=curve["ks"], y=curve["holdout"], mode="lines+markers", name="holdout accuracy",
                   line=dict(color=color_for(1))),
    ])
    return base_layout(fig, xaxis_title="number of rays k (= VC dimension)", yaxis_title="accuracy (fraction correct)",
                       height=400)


def lambda_path_figure(p: dict) -> go.Figure:
    """FP, FN and err along a*(lambda) (log lambda axis)."""
    fig = go.Figure([
        go.Scatter(x=p["lams"], y=p["FP"], mode="lines", name="false positives FP",
                   line=dict(color=color_for(1), shape="hv")),
        go.Scatter(x=p["lams"], y=p["FN"], mode="lines", name="false negatives FN",
                   line=dict(color=color_for(0), shape="hv")),
        go.Scatter(x=p["lams"], y=p["err"], mode="lines", name="err = FP + FN",
                   line=dict(color="black", shape="hv", width=2.5)),
    ])
    return base_layout(fig, xaxis_title="rate lambda (log scale)", yaxis_title="training mistakes (count of 500)",
                       logx=True, height=420)


def chamber_phase(trace: Trace) -> list[Phase]:
    """Phases of a star-MLE run: 'searching chambers' while the training classification still
    changes, 'inside the final chamber' after (the 0/1 loss is constant on chambers)."""
    err, fp = trace["err"], trace["FP"]
    changed = np.flatnonzero((np.diff(err) != 0) | (np.diff(fp) != 0))
    t_c = int(changed[-1] + 1) if changed.size else 0
    end = float(trace.iteration[-1])
    phases = [Phase(float(t_c), end, "inside the final chamber")]
    if t_c > 0:
        phases.insert(0, Phase(0.0, float(t_c), "moving between chambers"))
    return phases


# --------------------------------------------------------------------------- the chapter's tables


def watch_runs(lam: float = 1.0) -> dict:
    """One fit of each model on the card's data (500 points, type-B truth A_TRUE, 10% flips):
    the star MLE on the type-B fan, the kite MLE, and logistic regression on x and on the fan
    coordinates. Returns their Results (traces: objective = negative log-likelihood, grad_norm =
    projected gradient norm) and the data."""
    lam = check_positive(lam, "lam")
    p = card_data()
    X, y, A = p["X"], p["y"], p["A"]
    K = kite_fan(2).coordinates(X)
    runs = {
        "star MLE (type-B fan)": fit_star(A, y, lam, method_name="star MLE (type-B fan)"),
        "kite MLE (convex)": fit_star(K, y, lam, method_name="kite MLE (convex)"),
        "logistic regression": logistic_regression(X, y, method_name="logistic regression"),
        "logistic on fan coordinates": logistic_regression(A, y, method_name="logistic on fan coordinates"),
    }
    return {"runs": runs, "X": X, "y": y, "A": A}


@lru_cache(maxsize=8)
def _flexible_baselines(seed: int) -> dict:
    d = holdout_experiment(seed, 29)
    X, y, tr, te = d["X"], d["y"], slice(0, 250), slice(250, 500)
    out = {}
    for name, fit in (("ReLU net (5, 2)", lambda: mlp_baseline(X[tr], y[tr], X[te], seed=seed)),
                      ("RBF SVM", lambda: rbf_svm_baseline(X[tr], y[tr], X[te]))):
        if name == "RBF SVM" and not HAVE_SKLEARN:
            continue
        pred_tr, pred_te = fit()
        out[name] = (float(np.mean(pred_tr == y[tr])), float(np.mean(pred_te == y[te])))
    return out


def comparison_rows(seeds=SEEDS, mlp: bool = True) -> list[dict]:
    """Mean training / holdout accuracy of every model over the seeds of :func:`holdout_experiment`
    (the card's protocol), with the worst and best holdout accuracy; ``mlp`` adds the (5, 2) ReLU
    network and, when scikit-learn is installed, the RBF SVM."""
    results = []
    for s in seeds:
        acc = dict(holdout_experiment(int(s), 29)["acc"])
        if mlp:
            acc.update(_flexible_baselines(int(s)))
        results.append(acc)
    rows = []
    for name in results[0]:
        tr = np.array([r[name][0] for r in results])
        te = np.array([r[name][1] for r in results])
        rows.append({"method": name, "train accuracy (mean)": float(tr.mean()),
                     "holdout accuracy (mean)": float(te.mean()),
                     "holdout min": float(te.min()), "holdout max": float(te.max())})
    return rows
