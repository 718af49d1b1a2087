"""The race's four problem classes and, for each, the chapters' methods as solvers.

Each solver is a few lines that call the chapter's own implementation (imported, never copied)
with the counted oracle of :mod:`optbook.race.engine` and the recorder as its callback. Sizes
are small on purpose: the race page executes in well under a minute on two cores.
"""
from __future__ import annotations

import functools
from types import SimpleNamespace

import numpy as np
import torch

from ..classical.bfgs_methods import bfgs
from ..classical.bfgs_methods import gradient_descent as armijo_gd
from ..classical.reduction_maps import LeastSquaresWithBias, bias_data, gradient_descent, reduced_gradient_descent
from ..classical.sparse_polyak_methods import polyak_iht
from ..geometry.hom_pgd_methods import frank_wolfe, hom_pgd, pgd_projection, quadratic_objective, random_polytope
from ..geometry.quantum_zo import gaussian_smoothing_gradient
from ..training.lowrank_sampling import LowRankAdam
from ..training.momentum_sam import MSAM, SAM, two_moons
from ..training.pazo_methods import MeZO, PaZO, ill_conditioned_quadratic, quadratic_fun
from ..training.valley_explorer import ALTO
from .engine import Budget, Counter, Instance, ProblemClass, Solver

_FOREVER = 10**9      # maxiter: the budget, not the method's iteration cap, ends every run
_TINY = 1e-300        # a tolerance no run reaches before its budget


class VectorInstance(Instance):
    """A problem on R^n given by ``fun`` (and ``jac``): the oracle charges one unit per value and
    one per gradient; the score is ``fun(x) - f_star`` plus any constraint violation."""

    def __init__(self, fun, x0, f_star: float, jac=None, violation=None, **structure) -> None:
        self.counter = Counter()
        self.fun = self.counter.wrap(fun)
        self.jac = None if jac is None else self.counter.wrap(jac)
        self.x0, self.f_star, self.violation, self.structure = np.asarray(x0, float), float(f_star), violation, structure

    def oracle(self, budget: Budget) -> SimpleNamespace:
        return SimpleNamespace(fun=budget.guard(self.fun), jac=None if self.jac is None else budget.guard(self.jac),
                               f_star=self.f_star, **self.structure)

    def start(self) -> np.ndarray:
        return self.x0.copy()

    def score(self, x) -> float:
        x = np.asarray(x, float)
        gap = max(float(self.fun(x)) - self.f_star, 0.0)
        return gap + (max(float(self.violation(x)), 0.0) if self.violation is not None else 0.0)


# --------------------------------------------------------------------------- smooth convex


def smooth_instance(seed: int) -> VectorInstance:
    """Least squares with a bias on features whose mean (3) dwarfs their spread (ch03's bias
    example): the joint problem is ill-conditioned, the centred (reduced) one is not."""
    X, y, _ = bias_data(xbar=3.0, rho=0.3, n=60, d=8, noise=0.3, rng=seed)
    p = LeastSquaresWithBias(X, y)
    L = float(np.linalg.eigvalsh(p.hess(np.zeros(p.dim)))[-1])
    Xc = X - X.mean(axis=0)
    L_reduced = float(np.linalg.eigvalsh(Xc.T @ Xc / len(X))[-1])    # the reduced objective's smoothness
    return VectorInstance(p.fun, np.zeros(p.dim), p.fun(p.solution()), jac=p.jac, reduction=p.reduction(), L=L,
                          L_reduced=L_reduced, d=X.shape[1])


SMOOTH = ProblemClass("smooth convex (least squares with a bias)", smooth_instance, budget=150,
                      unit="f or grad f evaluation", metric="f - f*", target=1e-12)


def _bfgs(o, x0, record, seed, c1):
    bfgs(o.fun, x0, o.jac, c1=c1, tol=_TINY, stop="grad_norm", maxiter=_FOREVER, callback=record)


def _armijo(o, x0, record, seed, eta0):
    armijo_gd(o.fun, x0, o.jac, eta0=eta0 / o.L, tol=_TINY, stop="grad_norm", maxiter=_FOREVER, callback=record)


def _polyak(o, x0, record, seed, gamma):
    polyak_iht(o.fun, x0, o.jac, sparsity=x0.size, f_hat=o.f_star, gamma=gamma, maxiter=_FOREVER, callback=record)


def _joint_gd(o, x0, record, seed, step):
    gradient_descent(o.fun, x0, o.jac, step=step / o.L, stop="grad_norm", tol=_TINY, f_star=None,
                     maxiter=_FOREVER, callback=record)


def _reduced_gd(o, x0, record, seed, step):
    red = o.reduction
    reduced_gradient_descent(o.fun, x0[:o.d], o.jac, red, step=step / o.L_reduced, stop="grad_norm", tol=_TINY,
                             f_star=None, maxiter=_FOREVER, callback=lambda x1: record(red.lift(x1)))


SMOOTH_SOLVERS = [
    Solver("BFGS", "01", "bfgs", _bfgs, {"c1": [1e-4, 1e-2, 0.3]}),
    Solver("GD + Armijo", "01", "bfgs_methods.gradient_descent", _armijo, {"eta0": [0.1, 1, 10]},
           note="first trial step eta0/L"),
    Solver("Polyak step", "02", "polyak_iht (no thresholding)", _polyak, {"gamma": [0.5, 1, 1.5]},
           note="told f*"),
    Solver("joint GD", "03", "reduction_maps.gradient_descent", _joint_gd, {"step": [0.5, 1, 1.9]},
           note="step/L"),
    Solver("reduced GD", "03", "reduced_gradient_descent", _reduced_gd, {"step": [0.5, 1, 1.9]},
           note="bias eliminated in closed form"),
]


# --------------------------------------------------------------------------- constrained


@functools.lru_cache(maxsize=16)
def _constrained_data(seed: int):
    # cvxpy's solve takes most of an instance's making: once per seed, not once per run.
    import cvxpy as cp

    n = 12
    gen = np.random.default_rng(seed)
    K = random_polytope(n=n, m=30, rng=gen)
    U = np.linalg.qr(gen.standard_normal((n, n)))[0]
    Q = (U * np.logspace(0, 1, n)) @ U.T
    Q = 0.5 * (Q + Q.T)
    target = 2.0 * gen.standard_normal(n)
    fun, jac = quadratic_objective(target, Q)
    M, h = K.polytope()
    x = cp.Variable(n)
    prob = cp.Problem(cp.Minimize(0.5 * cp.quad_form(x - target, cp.psd_wrap(Q))), [M @ x <= h])
    prob.solve(solver=cp.CLARABEL)
    return K, target, Q, fun(np.asarray(x.value))


def constrained_instance(seed: int) -> VectorInstance:
    """min 1/2 (x - y)^T Q (x - y) over a random polytope in [-1, 1]^12 (ch10's benchmark set,
    smaller), Q with condition number 10, y outside; f* by cvxpy."""
    K, target, Q, f_star = _constrained_data(seed)
    fun, jac = quadratic_objective(target, Q)
    return VectorInstance(fun, K.x0, f_star, jac=jac, violation=K.max_violation, K=K, L=10.0)


CONSTRAINED = ProblemClass("constrained (quadratic over a polytope)", constrained_instance, budget=120,
                           unit="f or grad f evaluation", metric="f - f* + violation", target=1e-9)


def _hom_pgd(o, x0, record, seed, eta):
    hom_pgd(o.fun, x0, o.jac, K=o.K, eta=eta / o.L, stop="grad_norm", tol=_TINY, maxiter=_FOREVER, rng=seed,
            callback=record)


def _pgd(o, x0, record, seed, eta):
    pgd_projection(o.fun, x0, o.jac, K=o.K, eta=eta / o.L, stop="grad_norm", tol=_TINY, maxiter=_FOREVER,
                   callback=record)


def _fw(o, x0, record, seed, L):
    frank_wolfe(o.fun, x0, o.jac, K=o.K, variant="away", step="short", L=L * o.L, stop="grad_norm", tol=_TINY,
                maxiter=_FOREVER, callback=record)


CONSTRAINED_SOLVERS = [
    Solver("Hom-PGD", "10", "hom_pgd", _hom_pgd, {"eta": [0.003, 0.01, 0.03]}, note="no projection"),
    Solver("PGD (exact projection)", "10", "pgd_projection", _pgd, {"eta": [0.5, 1, 1.9]},
           note="a QP per step"),
    Solver("away-step Frank-Wolfe", "10", "frank_wolfe(variant='away')", _fw, {"L": [0.1, 0.3, 1]},
           note="an LP per step"),
]


# --------------------------------------------------------------------------- zeroth-order


def zo_instance(seed: int) -> VectorInstance:
    """f(x) = sum_i lambda_i x_i^2 / 2 in dimension 20, condition number 1000, from x0 = 1
    (ch16's ill-conditioned quadratic); values only."""
    lam, x0 = ill_conditioned_quadratic(d=20, log10_kappa=3.0, seed=seed)
    return VectorInstance(quadratic_fun(lam), x0, 0.0, lam_max=float(lam.max()))


ZEROTH_ORDER = ProblemClass("zeroth-order (ill-conditioned quadratic)", zo_instance, budget=1200,
                            unit="function evaluation", metric="f - f*", target=1.0)


def _zo_torch(cls, **fixed):
    def run(o, x0, record, seed, lr):
        p = torch.tensor(x0, dtype=torch.float64, requires_grad=True)
        extra = {"D0": o.lam_max} if cls is PaZO else {}   # ch16's protocol: D starts at lambda_max
        opt = cls([p], lr=lr, seed=seed, **fixed, **extra)

        def closure():
            return o.fun(p.detach().numpy())

        while True:
            opt.step(closure)
            record(p.detach().numpy().copy())
    return run


def _two_point(o, x0, record, seed, step):
    gen = np.random.default_rng(seed)
    x = x0.copy()
    while True:
        x = x - step * gaussian_smoothing_gradient(o.fun, x, 1e-4, rng=gen)
        record(x)


ZO_SOLVERS = [
    Solver("PaZO", "16", "PaZO (torch.optim)", _zo_torch(PaZO, eps=1e-3), {"lr": [0.01, 0.03, 0.06]},
           note="3 evaluations per step"),
    Solver("MeZO", "16", "MeZO (torch.optim)", _zo_torch(MeZO, eps=1e-3), {"lr": [1e-4, 2e-4, 4e-4]},
           note="2 evaluations per step"),
    Solver("Gaussian two-point", "15", "gaussian_smoothing_gradient", _two_point,
           {"step": [1e-4, 2e-4, 4e-4]}, note="classical twin of ch15's quantum estimator"),
]


# --------------------------------------------------------------------------- training a small network


class TrainingInstance(Instance):
    """A 2-16-16-1 tanh network on two moons (ch18's data, 300 training points, 10% flipped
    labels): the oracle is a minibatch gradient (32 points), one unit per closure call, counted
    by a forward hook so a method that calls the network itself is caught; the score is the
    cross-entropy on 400 held-out points."""

    def __init__(self, seed: int) -> None:
        X, y = two_moons(300, rng=seed)
        Xv, yv = two_moons(400, rng=10_000 + seed)
        self.X, self.y = torch.tensor(X), torch.tensor(y)
        self.Xv, self.yv = torch.tensor(Xv), torch.tensor(yv)
        g = torch.Generator().manual_seed(seed)
        self.model = torch.nn.Sequential(torch.nn.Linear(2, 16), torch.nn.Tanh(), torch.nn.Linear(16, 16),
                                         torch.nn.Tanh(), torch.nn.Linear(16, 1)).double()
        with torch.no_grad():
            for p in self.model.parameters():
                p.copy_(torch.randn(p.shape, generator=g, dtype=p.dtype) / np.sqrt(p.shape[-1]))
        self.counter = Counter()
        self.model.register_forward_hook(self.counter.wrap(lambda *_: None))
        self.batches = np.random.default_rng(seed)

    def _loss(self, X, y) -> torch.Tensor:
        return torch.nn.functional.binary_cross_entropy_with_logits(self.model(X).squeeze(-1), y)

    def oracle(self, budget: Budget) -> SimpleNamespace:
        o = SimpleNamespace(batch=None)

        def next_batch():
            o.batch = self.batches.choice(len(self.X), 32, replace=False)

        def closure():
            budget.charge()
            self.model.zero_grad()
            loss = self._loss(self.X[o.batch], self.y[o.batch])
            loss.backward()
            return loss

        o.next_batch, o.closure = next_batch, closure
        return o

    def start(self) -> torch.nn.Module:
        return self.model

    def score(self, model) -> float:
        with torch.no_grad():
            return float(self._loss(self.Xv, self.yv))


TRAINING = ProblemClass("training a small network (two moons)", TrainingInstance, budget=100,
                        unit="minibatch gradient", metric="validation loss", logy=False)


def _train(make):
    def run(o, model, record, seed, lr):
        opt = make(model.parameters(), lr, seed)
        while True:
            o.next_batch()
            opt.step(o.closure)
            record(model)
    return run


TRAINING_SOLVERS = [
    Solver("SGD (momentum 0.9)", "-", "torch.optim.SGD",
           _train(lambda p, lr, s: torch.optim.SGD(p, lr=lr, momentum=0.9)), {"lr": [0.1, 0.3, 1.0]}),
    Solver("Adam", "-", "torch.optim.Adam", _train(lambda p, lr, s: torch.optim.Adam(p, lr=lr)),
           {"lr": [0.01, 0.03, 0.1]}),
    Solver("SAM", "18", "SAM", _train(lambda p, lr, s: SAM(p, lr=lr, momentum=0.9, rho=0.05)),
           {"lr": [0.1, 0.3, 1.0]}, note="2 gradients per step"),
    Solver("MSAM", "18", "MSAM", _train(lambda p, lr, s: MSAM(p, lr=lr, momentum=0.9, rho=0.3)),
           {"lr": [0.1, 0.3, 1.0]}),
    Solver("ALTO", "19", "ALTO", _train(lambda p, lr, s: ALTO(p, lr=lr)), {"lr": [0.01, 0.03, 0.1]}),
    Solver("low-rank Adam", "17", "LowRankAdam", _train(lambda p, lr, s: LowRankAdam(p, lr=lr, rank=4, update_gap=50, seed=s)),
           {"lr": [3e-3, 1e-2, 3e-2]}, note="rank 4 on the 16x16 layer"),
]

#: The race: each problem class with its solvers, in the page's order.
RACES = [(SMOOTH, SMOOTH_SOLVERS), (CONSTRAINED, CONSTRAINED_SOLVERS), (ZEROTH_ORDER, ZO_SOLVERS),
         (TRAINING, TRAINING_SOLVERS)]
