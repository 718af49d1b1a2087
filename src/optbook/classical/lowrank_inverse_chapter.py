"""Chapter 08: the book's experiments, figures, live explorers and claims for low-rank inverses
under noise: the paper's synthetic spectrum, structured matrices (a 2-D Laplacian, a kernel
matrix, a real covariance), noise sweeps, and the measurements behind each claim. The method
itself is in :mod:`optbook.classical.lowrank_inverse`.

Throughout, eps = ||E|| / lambda_n is the relative noise level, and sigma the standard deviation of
the entries of Gaussian noise E = sigma W.
"""
from __future__ import annotations

from functools import lru_cache
from typing import Any

import numpy as np
import plotly.graph_objects as go

from ..claims import Criterion, Measured, claim
from ..core import Trace, as_rng, check_choice, check_in_range, check_int, check_positive, check_vector
from ..core.validate import RngLike
from ..viz import Phase, SliderStep, base_layout, color_for, convergence_figure, phase_layout, slider_figure
from ..viz.style import PALETTE
from ..widgets import Explorer, Slider, Toggle
from .lowrank_inverse import (
    Cut,
    SymmetricMatrix,
    aligned_noise,
    compare_bounds,
    contour_circle,
    eymn_bound,
    exact_error_wigner,
    first_order_error_wigner,
    first_order_term,
    mixed_noise,
    quadrature_trace,
    rank_one_noise,
    spectral_cut,
    theorem21_bound,
    wigner_matrix,
    wigner_noise,
)


def _int_tuple(values: Any, name: str, minimum: int) -> tuple[int, ...]:
    """A non-empty tuple of integers >= ``minimum`` (a single integer is a tuple of one)."""
    arr = check_vector(np.atleast_1d(values), name)
    if np.any(arr != np.round(arr)) or np.any(arr < minimum):
        raise ValueError(f"{name} must be integers >= {minimum}, got {values!r}")
    return tuple(int(v) for v in arr)


# --------------------------------------------------------------------------- matrices


def synthetic_spectrum(n: int, p: int = 10) -> np.ndarray:
    """The paper's synthetic spectrum {n, 2n, ..., pn, 2pn, ..., 2pn} (descending):
    lambda_n = n, lambda_{n-p+1} = pn, lambda_{n-p} = 2pn, delta_{n-p} = pn."""
    n = check_int(n, "n", minimum=2)
    p = check_int(p, "p", minimum=1)
    if p >= n:
        raise ValueError(f"p must be < n = {n}, got {p}")
    lam = np.full(n, 2.0 * p * n)
    lam[n - p:] = n * np.arange(p, 0, -1, dtype=float)
    return lam


def laplacian_2d(m1: int, m2: int) -> np.ndarray:
    """The 5-point finite-difference Laplacian -Delta on the unit square with zero boundary values,
    m1 x m2 interior nodes (spacings 1/(m1+1) and 1/(m2+1)); n = m1 m2. With m1 != m2 the square's
    symmetric pairs of eigenvalues split, so most cuts have a gap."""
    m1 = check_int(m1, "m1", minimum=1)
    m2 = check_int(m2, "m2", minimum=1)

    def second_difference(m: int) -> np.ndarray:
        d = 2.0 * np.eye(m) - np.eye(m, k=1) - np.eye(m, k=-1)
        return d * (m + 1) ** 2

    return np.kron(second_difference(m1), np.eye(m2)) + np.kron(np.eye(m1), second_difference(m2))


def exponential_kernel_matrix(n: int, lengthscale: float = 0.5, rng: RngLike = None) -> np.ndarray:
    """K_ij = exp(-||x_i - x_j|| / lengthscale) for n points uniform in the unit square: the
    covariance of a Gaussian process with an exponential (Matern-1/2) kernel, positive definite
    for distinct points, its eigenvalues decaying polynomially."""
    n = check_int(n, "n", minimum=1)
    lengthscale = check_positive(lengthscale, "lengthscale")
    x = as_rng(rng).random((n, 2))
    dist = np.sqrt(np.sum((x[:, None, :] - x[None, :, :]) ** 2, axis=-1))
    return np.exp(-dist / lengthscale)


def digits_covariance() -> np.ndarray:
    """Sample covariance of scikit-learn's 8 x 8 handwritten digits (1797 images), the 61 pixels
    that are not constant: a real-data covariance of the size of the paper's Census one (n = 69)."""
    from sklearn.datasets import load_digits

    x = load_digits().data
    x = x[:, x.std(axis=0) > 0]
    x = x - x.mean(axis=0)
    return x.T @ x / (x.shape[0] - 1)


#: The structured matrices of the chapter, by name: (builder, description).
STRUCTURED = {
    "laplacian": (lambda: laplacian_2d(15, 17), "2-D Laplacian, 15 × 17 grid (n = 255)"),
    "kernel": (lambda: exponential_kernel_matrix(200, 0.5, 0), "exponential-kernel matrix (n = 200)"),
    "digits": (digits_covariance, "digits pixel covariance (n = 61)"),
}


@lru_cache(maxsize=None)
def _structured(name: str) -> SymmetricMatrix:
    return SymmetricMatrix.from_matrix(STRUCTURED[name][0](), name)


def structured_matrix(name: str) -> SymmetricMatrix:
    """One of the :data:`STRUCTURED` matrices with its eigendecomposition (computed once)."""
    return _structured(check_choice(name, "name", tuple(STRUCTURED)))


# --------------------------------------------------------------------------- noise sweeps

NOISE_KINDS = ("wigner", "aligned", "rank_one")


def _noise(kind: str, sym: SymmetricMatrix, p: int, norm: float, rng: np.random.Generator) -> np.ndarray:
    if kind == "wigner":
        return wigner_noise(sym.n, norm, rng)
    if kind == "aligned":
        return aligned_noise(sym, p, norm, rng)
    return rank_one_noise(sym, norm)


def noise_sweep(phi_deg: float = 90.0, *, shape: str = "mixed", n: int = 100, p: int = 10,
                eps_lo: float = 1e-4, eps_hi: float = 0.5, points: int = 17, seed: int = 0) -> Trace:
    """True error, Theorem 2.1 and EYM-N as the noise level eps = ||E|| / lambda_n grows, on the
    synthetic spectrum.

    One fixed A and one fixed noise direction E0 with ||E0|| = 1, and E = eps lambda_n E0 for eps
    on a log grid. ``shape`` "mixed" takes E0 = :func:`mixed_noise` at angle ``phi_deg`` degrees
    (0 = spread over the kept subspace, 90 = isotropic); "rank_one" takes E0 = u_n u_n^T. One
    trace row per eps, with the extra series ``eps``, ``true``, ``bound``, ``term_full``,
    ``term_cut``, ``eymn``, ``first_order``, ``gap_ok``. Cached: the slider figure and the live
    explorer share it.
    """
    phi_deg = check_in_range(phi_deg, "phi_deg", 0.0, 90.0, closed=(True, True))
    shape = check_choice(shape, "shape", ("mixed", "rank_one"))
    n = check_int(n, "n", minimum=2)
    p = check_int(p, "p", minimum=1)
    points = check_int(points, "points", minimum=2)
    eps_lo = check_positive(eps_lo, "eps_lo")
    eps_hi = check_positive(eps_hi, "eps_hi")
    seed = check_int(seed, "seed")
    if not eps_lo < eps_hi:
        raise ValueError(f"eps_lo must be < eps_hi, got {eps_lo} and {eps_hi}")
    return _noise_sweep(phi_deg, shape, n, p, eps_lo, eps_hi, points, seed)


@lru_cache(maxsize=64)
def _noise_sweep(phi_deg: float, shape: str, n: int, p: int, eps_lo: float, eps_hi: float, points: int,
                 seed: int) -> Trace:
    rng = np.random.default_rng(seed)
    sym = SymmetricMatrix.from_spectrum(synthetic_spectrum(n, p), rng)
    e0 = mixed_noise(sym, p, 1.0, np.deg2rad(phi_deg), rng) if shape == "mixed" else rank_one_noise(sym, 1.0)
    cut = spectral_cut(sym, p)
    tr = Trace(f"phi = {phi_deg:g} deg" if shape == "mixed" else "rank one",
               meta={"n": n, "p": p, "phi_deg": phi_deg, "shape": shape, "seed": seed,
                     "eps_gap": min(cut.lam_n, cut.gap) / (4 * cut.lam_n)})
    lin = float(np.max(np.abs(np.linalg.eigvalsh(first_order_term(sym, e0, p)))))  # L is linear in E
    for eps in np.geomspace(eps_lo, eps_hi, points):
        norm = eps * cut.lam_n
        cmp = compare_bounds(sym, norm * e0, p, first_order=False)
        tr.record(objective=cmp.true_error, eps=eps, true=cmp.true_error, bound=cmp.bound,
                  term_full=cmp.term_full, term_cut=cmp.term_cut, eymn=cmp.eymn,
                  first_order=norm * lin, gap_ok=float(cmp.gap_ok))
    return tr


def random_instance(rng: RngLike = None, *,
                    n_range: tuple[int, int] = (8, 40)) -> tuple[SymmetricMatrix, np.ndarray, int, str]:
    """A random test case for Theorem 2.1 with the gap condition enforced: a random spectrum
    (log-uniform, sometimes with a cluster at the bottom), a random p and a random noise type
    (Wigner, aligned or rank one) scaled to a random fraction of the allowed ||E||."""
    rng = as_rng(rng)
    lo, hi = (check_int(v, "n_range", minimum=2) for v in n_range)
    if lo > hi:
        raise ValueError(f"n_range must be (low, high) with low <= high, got {n_range}")
    n = int(rng.integers(lo, hi + 1))
    p = int(rng.integers(1, n))
    lam = np.sort(10.0 ** rng.uniform(-1, 3, n))[::-1]
    if rng.random() < 0.3:  # a clustered bottom: the p kept eigenvalues within 1% of each other
        lam[n - p:] = lam[-1] * (1 + 0.01 * rng.random(p))
        lam = np.sort(lam)[::-1]
    sym = SymmetricMatrix.from_spectrum(lam, rng)
    cut = spectral_cut(sym, p)
    kind = str(rng.choice(NOISE_KINDS))
    norm = min(cut.lam_n, cut.gap) / 4 * 10.0 ** rng.uniform(-3, 0)
    return sym, _noise(kind, sym, p, norm, rng), p, kind


def designer_sweep(gap: float = 1.0, lam_min: float = 1.0, decay: float = 0.0, *, n: int = 60, p: int = 5,
                   points: int = 17, seed: int = 0) -> Trace:
    """Spectrum designer: bottom p eigenvalues spread over [lambda_n, 2 lambda_n], then a gap
    delta_{n-p} = ``gap``, then top eigenvalues lambda_{n-p} (1 + j)^decay. Wigner noise of norm
    ||E|| on a log grid from 1e-4 to 10 times min(lambda_n, delta)/4. One trace row per ||E||."""
    gap = check_positive(gap, "gap")
    lam_min = check_positive(lam_min, "lam_min")
    decay = check_positive(decay, "decay", allow_zero=True)
    n = check_int(n, "n", minimum=3)
    p = check_int(p, "p", minimum=2)
    if p >= n:
        raise ValueError(f"p must be < n = {n}, got {p}")
    points = check_int(points, "points", minimum=2)
    return _designer_sweep(gap, lam_min, decay, n, p, points, check_int(seed, "seed"))


@lru_cache(maxsize=256)
def _designer_sweep(gap: float, lam_min: float, decay: float, n: int, p: int, points: int, seed: int) -> Trace:
    bottom = lam_min * np.linspace(2.0, 1.0, p)
    top = (2.0 * lam_min + gap) * (1.0 + np.arange(n - p)[::-1]) ** decay
    rng = np.random.default_rng(seed)
    sym = SymmetricMatrix.from_spectrum(np.concatenate([top, bottom]), rng)
    e0 = wigner_noise(n, 1.0, rng)
    limit = min(lam_min, gap) / 4
    tr = Trace("designer", meta={"limit": limit, "gap": gap, "lam_min": lam_min, "decay": decay})
    for norm in limit * np.geomspace(1e-4, 10.0, points):
        cmp = compare_bounds(sym, norm * e0, p, first_order=False)
        tr.record(objective=cmp.true_error, norm_e=norm, true=cmp.true_error, bound=cmp.bound,
                  term_full=cmp.term_full, term_cut=cmp.term_cut, eymn=cmp.eymn, gap_ok=float(cmp.gap_ok))
    return tr


# --------------------------------------------------------------------------- the sqrt(n) gain


def crossover_n(p: int = 10) -> float:
    """The n beyond which Theorem 2.1 is smaller than EYM-N on the synthetic spectrum with
    ||E|| = 2 sqrt(n), to first order in ||E|| / lambda: Theorem 2.1 ~ (4 + 5/(2p^2)) 2 n^{-3/2},
    EYM-N ~ 2 n^{-3/2} + 1/(p n)."""
    p = check_int(p, "p", minimum=1)
    # (8 + 10/(2 p^2) - 2) n^{-1/2} = 1/p  =>  n = (p (6 + 5/p^2))^2
    return float((p * (6.0 + 5.0 / p**2)) ** 2)


SQRT_N_NS = (1000, 2000, 4000, 8000, 16000, 32000, 64000)


def sqrt_n_experiment(ns: Any = SQRT_N_NS, seeds: Any = (0, 1, 2, 3, 4), p: int = 10,
                      exact_ns: Any = ()) -> dict:
    """Theorem 2.1, EYM-N and the true error on the synthetic spectrum with unit Gaussian noise
    E = W (off-diagonal entries N(0, 1)), for n up to tens of thousands.

    ||E|| is taken at the edge of the semicircle, 2 sqrt(n) (the largest eigenvalue of W exceeds
    it by O(n^{-1/6}), a relative 1e-3 at n = 4000); EYM-N uses Weyl's lambda_{n-p} - ||E|| for
    lambda~_{n-p}, which is what A~'s eigenvalue is to first order here, since the n - p dropped
    eigenvalues are all equal. The true error is one draw of the first-order estimate
    :func:`first_order_error_wigner` per (n, seed), O(n p^2) work. At the sizes ``exact_ns`` the
    exact error of the same draw (same kept rows of W) is computed too, by
    :func:`exact_error_wigner`, also O(n p^2): the check that the estimate is the true error.
    Returns arrays indexed [n, seed]: ``true`` (the estimate) and ``exact`` (nan off
    ``exact_ns``), and per n: ``bound``, ``eymn``, ``norm_e``.
    """
    p = check_int(p, "p", minimum=1)
    ns = _int_tuple(ns, "ns", p + 1)
    exact_ns = () if np.size(exact_ns) == 0 else _int_tuple(exact_ns, "exact_ns", p + 1)
    if not set(exact_ns) <= set(ns):
        raise ValueError(f"exact_ns must be a subset of ns = {ns}, got {exact_ns}")
    return _sqrt_n_experiment(ns, _int_tuple(seeds, "seeds", 0), p, exact_ns)


@lru_cache(maxsize=8)
def _sqrt_n_experiment(ns: tuple[int, ...], seeds: tuple[int, ...], p: int, exact_ns: tuple[int, ...]) -> dict:
    true = np.empty((len(ns), len(seeds)))
    exact = np.full((len(ns), len(seeds)), np.nan)
    bound, eymn, norms = np.empty(len(ns)), np.empty(len(ns)), np.empty(len(ns))
    for i, n in enumerate(ns):
        lam = synthetic_spectrum(n, p)
        cut = Cut.from_eigvals(lam, p)
        norms[i] = 2.0 * np.sqrt(n)
        bound[i] = theorem21_bound(cut, norms[i], p)
        eymn[i] = eymn_bound(cut, norms[i], p)
        for j, s in enumerate(seeds):
            true[i, j] = first_order_error_wigner(lam, p, 1.0, np.random.default_rng([n, s]))
            if n in exact_ns:  # the same seed draws the same kept rows of W
                exact[i, j] = exact_error_wigner(lam, p, 1.0, np.random.default_rng([n, s]))
    return {"ns": np.array(ns), "seeds": seeds, "true": true, "exact": exact, "bound": bound, "eymn": eymn,
            "norm_e": norms, "n_star": crossover_n(p)}


def exact_synthetic_errors(ns: Any = (100, 200, 400), seeds: Any = (0, 1, 2), p: int = 10) -> dict:
    """The same setting as :func:`sqrt_n_experiment` at small n, computed exactly (dense ``eigh``
    of A~ and the measured ||E||), with the first-order estimate of the same W beside it: the
    check that the first-order estimate is the true error here. Arrays indexed [n, seed]."""
    p = check_int(p, "p", minimum=1)
    return _exact_synthetic_errors(_int_tuple(ns, "ns", p + 1), _int_tuple(seeds, "seeds", 0), p)


@lru_cache(maxsize=4)
def _exact_synthetic_errors(ns: tuple[int, ...], seeds: tuple[int, ...], p: int) -> dict:
    out = {k: np.empty((len(ns), len(seeds))) for k in ("true", "first_order", "bound", "eymn", "norm_e")}
    for i, n in enumerate(ns):
        sym = SymmetricMatrix.diagonal(synthetic_spectrum(n, p))
        for j, s in enumerate(seeds):
            cmp = compare_bounds(sym, wigner_matrix(n, np.random.default_rng([n, s, 1])), p)
            for k in out:
                out[k][i, j] = getattr(cmp, k if k != "true" else "true_error")
    out["ns"] = np.array(ns)
    return out


def _log_crossing(x: np.ndarray, y: np.ndarray) -> float:
    """Where y crosses 1, interpolating log y against log x (nan when it does not)."""
    above = np.nonzero(y >= 1)[0]
    if above.size == 0 or above[0] == 0:
        return float("nan")
    i = above[0]
    lx, ly = np.log(x[i - 1:i + 1]), np.log(y[i - 1:i + 1])
    return float(np.exp(lx[0] - ly[0] * (lx[1] - lx[0]) / (ly[1] - ly[0])))


# --------------------------------------------------------------------------- structured matrices

#: sigma / Delta_max of the structured experiment: a decade grid up to half the authors' limit.
NOISE_LEVELS = (0.01, 0.1, 0.5)


def structured_experiment(name: str, seeds: Any = (0, 1, 2, 3, 4), p: int = 10,
                          levels: Any = NOISE_LEVELS) -> dict:
    """Theorem 2.1 and EYM-N against the true error on a :data:`STRUCTURED` matrix under Gaussian
    noise E = sigma W, for sigma = level * Delta_max, Delta_max = min(lambda_n, delta_{n-p}) /
    (8 sqrt(n)): the largest sigma for which ||E|| ~ 2 sigma sqrt(n) meets the gap condition (the
    authors' "maximal allowable variance"). One W per seed, scaled to each level. Arrays indexed
    [seed, level]: ``bound_over_true``, ``eymn_over_true``, ``gap_ok``."""
    sym = structured_matrix(name)
    seeds = _int_tuple(seeds, "seeds", 0)
    p = check_int(p, "p", minimum=1)
    levels = tuple(float(v) for v in check_vector(levels, "levels"))
    if min(levels) <= 0:
        raise ValueError(f"levels must be positive, got {levels}")
    spectral_cut(sym, p)  # validates p against n
    return _structured_experiment(name, seeds, p, levels)


@lru_cache(maxsize=32)
def _structured_experiment(name: str, seeds: tuple[int, ...], p: int, levels: tuple[float, ...]) -> dict:
    sym = structured_matrix(name)
    cut = spectral_cut(sym, p)
    delta_max = min(cut.lam_n, cut.gap) / (8.0 * np.sqrt(sym.n))
    shape = (len(seeds), len(levels))
    out = {k: np.empty(shape) for k in ("bound_over_true", "eymn_over_true", "gap_ok")}
    for i, s in enumerate(seeds):
        w = wigner_matrix(sym.n, np.random.default_rng([sym.n, s, 8]))
        for j, level in enumerate(levels):
            cmp = compare_bounds(sym, level * delta_max * w, p, first_order=False)
            out["bound_over_true"][i, j] = cmp.bound / cmp.true_error
            out["eymn_over_true"][i, j] = cmp.eymn / cmp.true_error
            out["gap_ok"][i, j] = cmp.gap_ok
    out.update(name=name, label=STRUCTURED[name][1], p=p, levels=levels, delta_max=delta_max,
               gap_over_lam_n=cut.gap / cut.lam_n)
    return out


def structured_p_sweep(name: str, ps: Any = tuple(range(1, 31)), seeds: Any = (0, 1, 2),
                       level: float = 0.5) -> dict:
    """Theorem 2.1 / true error on a :data:`STRUCTURED` matrix for every truncation rank in ``ps``,
    each at its own sigma = level * Delta_max(p) (the authors choose p by a spectral-tail rule and
    sweep every p' up to it). The same W per seed as :func:`structured_experiment`. Returns
    ``ps`` and ``median`` (median over seeds per p; nan where the eigenvalues tie at the cut)."""
    sym = structured_matrix(name)
    ps = _int_tuple(ps, "ps", 1)
    if max(ps) >= sym.n:
        raise ValueError(f"ps must be < n = {sym.n}, got {max(ps)}")
    seeds = _int_tuple(seeds, "seeds", 0)
    level = check_in_range(level, "level", 0.0, 1.0, closed=(False, True))
    return _structured_p_sweep(name, ps, seeds, level)


@lru_cache(maxsize=8)
def _structured_p_sweep(name: str, ps: tuple[int, ...], seeds: tuple[int, ...], level: float) -> dict:
    sym = structured_matrix(name)
    noise = [wigner_matrix(sym.n, np.random.default_rng([sym.n, s, 8])) for s in seeds]
    median = np.full(len(ps), np.nan)
    for i, p in enumerate(ps):
        cut = spectral_cut(sym, p)
        if cut.gap <= 1e-9 * cut.lam_n:
            continue  # A_p^{-1} not unique: no theorem, no experiment
        sigma = level * min(cut.lam_n, cut.gap) / (8.0 * np.sqrt(sym.n))
        ratios = []
        for w in noise:
            cmp = compare_bounds(sym, sigma * w, p, first_order=False)
            ratios.append(cmp.bound / cmp.true_error if cmp.gap_ok else np.nan)
        median[i] = np.nanmedian(ratios) if np.any(np.isfinite(ratios)) else np.nan
    return {"name": name, "ps": np.array(ps), "median": median, "level": level}


NAMES = {"true": "true error", "bound": "Theorem 2.1", "eymn": "EYM-N", "first_order": "first-order estimate",
         "term_full": "term 4||E||/λ_n²", "term_cut": "term 5||E||/(λ_{n-p} δ)"}
# Every curve its own dash and marker, the same in every figure (never colour alone).
_DASH = {"true": "solid", "bound": "longdashdot", "eymn": "dash", "first_order": "dot", "term_full": "dashdot",
         "term_cut": "longdash"}
_MARKER = {"true": "circle", "bound": "square", "eymn": "diamond", "first_order": "triangle-up", "term_full": "x",
           "term_cut": "cross"}
_COLOR = {"true": color_for(0), "bound": color_for(1), "eymn": color_for(2), "first_order": color_for(3),
          "term_full": color_for(4), "term_cut": color_for(5)}
EPS_TITLE = "noise level ε = ||E|| / λ_n"


def _lines(x: np.ndarray, tr: Trace, keys: tuple[str, ...], mask_bound: bool = True) -> list[go.Scatter]:
    ok = tr["gap_ok"] > 0
    out = []
    for key in keys:
        y = tr[key].copy()
        if mask_bound and key in ("bound", "term_full", "term_cut"):
            y = np.where(ok, y, np.nan)  # the theorem says nothing beyond the gap condition
        out.append(go.Scatter(x=x, y=y, name=NAMES[key], mode="lines+markers",
                              line=dict(color=_COLOR[key], dash=_DASH[key], width=2.2),
                              marker=dict(size=5, symbol=_MARKER[key])))
    return out


def _boundary_layout(x_gap: float, label: str, y_text: float = 0.04) -> dict:
    return {"shapes": [dict(type="line", xref="x", yref="paper", x0=x_gap, x1=x_gap, y0=0, y1=1,
                            line=dict(color="#555", dash="dot", width=1.5))],
            "annotations": [dict(x=np.log10(x_gap), xref="x", yref="paper", y=y_text, text=label,
                                 showarrow=False, xanchor="right", font=dict(size=11, color="#555"))]}


# --------------------------------------------------------------------------- watch it run


def contour_picture(n: int = 24, p: int = 6, n_nodes: int = 16, eps: float = 0.1, seed: int = 0) -> go.Figure:
    """The complex plane: eigenvalues of A and A~ (noise level eps = ||E|| / lambda_n), the contour
    Gamma around the p smallest, its trapezoid nodes and the pole z = 0 of f(z) = 1/z, which Gamma
    must avoid."""
    n = check_int(n, "n", minimum=3)
    p = check_int(p, "p", minimum=1)
    if p >= n:
        raise ValueError(f"p must be < n = {n}, got {p}")
    n_nodes = check_int(n_nodes, "n_nodes", minimum=2)
    eps = check_positive(eps, "eps", allow_zero=True)
    lam = np.concatenate([np.linspace(9.0, 6.0, n - p), np.linspace(3.0, 1.0, p)])
    rng = np.random.default_rng(check_int(seed, "seed"))
    sym = SymmetricMatrix.from_spectrum(lam, rng)
    noisy = np.linalg.eigvalsh(sym.matrix + wigner_noise(n, eps * sym.eigvals[-1], rng))
    c, r = contour_circle(sym, p)
    t = np.linspace(0, 2 * np.pi, 200)
    nodes = c + r * np.exp(2j * np.pi * np.arange(n_nodes) / n_nodes)
    kept = sym.eigvals[n - p:]
    fig = go.Figure([
        go.Scatter(x=c + r * np.cos(t), y=r * np.sin(t), mode="lines", name="contour Γ",
                   line=dict(color=color_for(1), width=2)),
        go.Scatter(x=nodes.real, y=nodes.imag, mode="markers", name=f"{n_nodes} trapezoid nodes z_k",
                   marker=dict(color=color_for(1), size=7, symbol="circle-open")),
        go.Scatter(x=kept, y=np.zeros(p), mode="markers", name="kept eigenvalues of A (p smallest)",
                   marker=dict(color=color_for(0), size=10)),
        go.Scatter(x=sym.eigvals[: n - p], y=np.zeros(n - p), mode="markers", name="dropped eigenvalues of A",
                   marker=dict(color=PALETTE[4], size=10)),
        go.Scatter(x=noisy, y=np.full(n, -0.35), mode="markers", name="eigenvalues of A + E (shifted down)",
                   marker=dict(color=color_for(2), size=6, symbol="diamond")),
        go.Scatter(x=[0.0], y=[0.0], mode="markers+text", name="pole of 1/z", text=["z = 0"],
                   textposition="top center", marker=dict(color="black", size=11, symbol="x")),
    ])
    base_layout(fig, title="Γ encloses the p smallest eigenvalues and avoids z = 0",
                xaxis_title="Re z", yaxis_title="Im z", height=420)
    fig.update_yaxes(scaleanchor="x", scaleratio=1)
    return fig


def quadrature_figure() -> go.Figure:
    """Relative error of the contour evaluator against N for two spectra, with rho^{-N} guides."""
    rng = np.random.default_rng(3)
    well = SymmetricMatrix.from_spectrum(np.concatenate([np.full(50, 100.0), np.linspace(2.0, 1.0, 10)]), rng)
    synth = SymmetricMatrix.from_spectrum(synthetic_spectrum(60, 10), rng)
    traces = [quadrature_trace(well, 10, method="well separated (bottom in [1, 2], rest at 100)"),
              quadrature_trace(synth, 10, method="synthetic spectrum {n, ..., 10n, 20n}")]
    fig = convergence_figure(traces, phases=[Phase(4, 64, "geometric phase (well separated)"),
                                             Phase(64, 320, "round-off floor")],
                             xaxis_title="number of trapezoid nodes N",
                             yaxis_title="relative error ||quadrature - A_p^{-1}|| / ||A_p^{-1}||",
                             title="Trapezoid rule on Γ: geometric convergence, then round-off")
    for i, tr in enumerate(traces):
        fig.add_trace(go.Scatter(x=tr.iteration, y=np.maximum(tr["predicted"], 1e-17), mode="lines",
                                 name=f"ρ^(-N), ρ = {tr.meta['rho']:.3g}", line=dict(color=color_for(i), dash="dot")))
    fig.update_yaxes(range=[-17, 1])
    return fig


#: The noise shapes of the "watch it run" figure: label -> noise_sweep arguments.
RUN_SHAPES = {"isotropic (Wigner)": dict(phi_deg=90.0), "spread over the kept subspace": dict(phi_deg=0.0),
              "rank one along u_n": dict(shape="rank_one")}


def noise_run(n: int = 200) -> dict[str, Trace]:
    """The sweeps behind :func:`noise_run_figure`: one per noise shape, same A, same eps grid."""
    return {label: noise_sweep(n=n, eps_lo=1e-4, eps_hi=0.5, points=13, **kw) for label, kw in RUN_SHAPES.items()}


def noise_run_figure(n: int = 200) -> go.Figure:
    """Watch it run: the true error for three shapes of noise of the same norm, against eps, on the
    synthetic spectrum; Theorem 2.1 and EYM-N (which see only ||E||, so one curve each); the
    region where the gap condition holds shaded."""
    runs = noise_run(n)
    first = next(iter(runs.values()))
    ok = first["gap_ok"] > 0
    traces = [go.Scatter(x=first["eps"], y=np.where(ok, first["bound"], np.nan), name=NAMES["bound"],
                         mode="lines", line=dict(color=_COLOR["bound"], dash=_DASH["bound"], width=3)),
              go.Scatter(x=first["eps"], y=first["eymn"], name=NAMES["eymn"], mode="lines",
                         line=dict(color=_COLOR["eymn"], dash=_DASH["eymn"], width=3))]
    for i, (label, tr) in enumerate(runs.items()):
        dash, symbol = (("solid", "circle"), ("dot", "square"), ("dashdot", "diamond"))[i]
        traces.append(go.Scatter(x=tr["eps"], y=tr["true"], name=f"true error, {label}", mode="lines+markers",
                                 line=dict(color=color_for(i + 3 if i else 0), width=2, dash=dash),
                                 marker=dict(size=6, symbol=symbol)))
    fig = go.Figure(traces)
    gap = first.meta["eps_gap"]
    fig.update_layout(**phase_layout([Phase(1e-4, gap, "gap condition holds"), Phase(gap, 0.5, "theorem silent")],
                                     logx=True))
    return base_layout(fig, xaxis_title=EPS_TITLE, yaxis_title="spectral-norm error", logx=True, logy=True,
                       height=520, title="Three noise shapes of one norm: true errors and the two bounds")


# --------------------------------------------------------------------------- explore


def _noise_step(phi_deg: float, show_first_order: bool) -> SliderStep:
    tr = noise_sweep(float(phi_deg))
    keys = ("true", "bound", "eymn") + (("first_order",) if show_first_order else ())
    return SliderStep(f"{phi_deg:g}°", _lines(tr["eps"], tr, keys),
                      _boundary_layout(tr.meta["eps_gap"], "gap condition 4||E|| = min(λ_n, δ) →"))


def noise_figure(phi_deg: float = 90.0, show_first_order: bool = False) -> go.Figure:
    """Live twin of the noise slider figure: errors against eps for one alignment angle."""
    phi_deg = check_in_range(phi_deg, "phi_deg", 0.0, 90.0, closed=(True, True))
    if not isinstance(show_first_order, (bool, np.bool_)):
        raise ValueError(f"show_first_order must be a bool, got {show_first_order!r}")
    step = _noise_step(phi_deg, show_first_order)
    fig = go.Figure(step.traces)
    fig.update_layout(**step.layout)
    return base_layout(fig, title=f"Alignment φ = {phi_deg:g}° (0° = all noise in the kept subspace)",
                       xaxis_title=EPS_TITLE, yaxis_title="spectral-norm error", logx=True, logy=True, height=470)


PHI_VALUES = (0, 15, 30, 45, 60, 75, 90)


def noise_slider_figure(show_first_order: bool = False) -> go.Figure:
    """Static twin: one frame per alignment angle phi."""
    if not isinstance(show_first_order, (bool, np.bool_)):
        raise ValueError(f"show_first_order must be a bool, got {show_first_order!r}")
    steps = [_noise_step(phi, bool(show_first_order)) for phi in PHI_VALUES]
    return slider_figure(steps, slider_label="alignment φ", active=len(steps) - 1, logx=True, logy=True,
                         xaxis_title=EPS_TITLE, yaxis_title="spectral-norm error",
                         title="Noise aligned with the kept subspace: the true error rises")


def _designer_step(gap: float, lam_min: float, decay: float) -> SliderStep:
    tr = designer_sweep(float(gap), float(lam_min), float(decay))
    return SliderStep(f"{gap:g}", _lines(tr["norm_e"], tr, ("true", "term_full", "term_cut", "bound", "eymn")),
                      _boundary_layout(tr.meta["limit"], "theorem stops applying →"))


def designer_figure(gap: float = 1.0, lam_min: float = 1.0, decay: float = 0.0) -> go.Figure:
    """Live twin of the spectrum designer."""
    step = _designer_step(gap, lam_min, decay)  # designer_sweep validates the arguments
    fig = go.Figure(step.traces)
    fig.update_layout(**step.layout)
    return base_layout(fig, title=f"δ = {gap:g}, λ_n = {lam_min:g}, top decay exponent {decay:g}",
                       xaxis_title="noise norm ||E||", yaxis_title="spectral-norm error",
                       logx=True, logy=True, height=470)


GAP_VALUES = (0.01, 0.03, 0.1, 0.3, 1.0, 3.0, 10.0, 30.0, 100.0)


def designer_slider_figure(lam_min: float = 1.0, decay: float = 0.0) -> go.Figure:
    """Static twin of the spectrum designer: one frame per truncation gap delta_{n-p}."""
    steps = [_designer_step(g, lam_min, decay) for g in GAP_VALUES]
    return slider_figure(steps, slider_label="gap δ_{n-p}", active=GAP_VALUES.index(0.1), logx=True, logy=True,
                         fixed_axes=False, xaxis_title="noise norm ||E||", yaxis_title="spectral-norm error",
                         title="Spectrum designer: which term of Theorem 2.1 dominates")


EXPLORER_NOISE = Explorer("08", "noise_alignment", noise_figure, {
    "phi_deg": Slider("alignment φ (degrees)", list(PHI_VALUES), 90),
    "show_first_order": Toggle("show first-order estimate", False),
}, description="errors against the noise level for a mix of aligned and isotropic noise")

EXPLORER_SPECTRUM = Explorer("08", "spectrum_designer", designer_figure, {
    "gap": Slider("gap δ_{n-p}", list(GAP_VALUES), 0.1),
    "lam_min": Slider("smallest eigenvalue λ_n", [0.1, 0.3, 1.0, 3.0, 10.0], 1.0),
    "decay": Slider("growth exponent of the top eigenvalues", [0.0, 0.5, 1.0, 2.0], 0.0),
}, description="which term of Theorem 2.1 dominates, and where it stops applying")


# --------------------------------------------------------------------------- figures of the claims


def sqrt_n_figure(ex: dict[str, Any] | None = None, exact: dict[str, Any] | None = None) -> go.Figure:
    """Theorem 2.1, EYM-N and the true error against n on the synthetic spectrum (log-log): the
    first-order estimate (median and range over seeds) up to n = 64000, exact dense values at
    small n, the exact O(np^2) values where the experiment computed them, and the predicted
    crossover n*."""
    ex = sqrt_n_experiment() if ex is None else ex
    exact = exact_synthetic_errors() if exact is None else exact
    ns = ex["ns"]
    med, lo, hi = np.median(ex["true"], axis=1), ex["true"].min(axis=1), ex["true"].max(axis=1)
    # The bounds at small n use the measured ||E|| of the dense draws, at large n 2 sqrt(n).
    all_n = np.concatenate([exact["ns"], ns])
    order = np.argsort(all_n)
    bound = np.concatenate([np.median(exact["bound"], axis=1), ex["bound"]])[order]
    eymn = np.concatenate([np.median(exact["eymn"], axis=1), ex["eymn"]])[order]
    fig = go.Figure([
        go.Scatter(x=all_n[order], y=bound, name=NAMES["bound"], mode="lines+markers",
                   line=dict(color=_COLOR["bound"], dash=_DASH["bound"], width=3),
                   marker=dict(symbol=_MARKER["bound"])),
        go.Scatter(x=all_n[order], y=eymn, name=NAMES["eymn"], mode="lines+markers",
                   line=dict(color=_COLOR["eymn"], dash=_DASH["eymn"], width=3),
                   marker=dict(symbol=_MARKER["eymn"])),
        go.Scatter(x=ns, y=med, name="true error (first-order estimate, median)", mode="lines+markers",
                   line=dict(color=_COLOR["true"], width=2.5),
                   error_y=dict(type="data", symmetric=False, array=hi - med, arrayminus=med - lo, thickness=1.2)),
        go.Scatter(x=exact["ns"], y=np.median(exact["true"], axis=1), name="true error (dense eigh, median)",
                   mode="markers", marker=dict(color=_COLOR["true"], size=10, symbol="diamond-open", line_width=2)),
    ])
    checked = ~np.isnan(ex["exact"][:, 0])
    if checked.any():
        fig.add_trace(go.Scatter(x=ns[checked], y=np.median(ex["exact"][checked], axis=1), mode="markers",
                                 name="true error (exact, O(np²), median)",
                                 marker=dict(color=_COLOR["true"], size=14, symbol="circle-open", line_width=2)))
    fig.update_layout(**_boundary_layout(ex["n_star"], f"predicted crossover n* ≈ {ex['n_star']:.0f} →", 0.5))
    base_layout(fig, xaxis_title="matrix size n", yaxis_title="spectral-norm error or bound",
                logx=True, logy=True, height=480,
                title="The two bounds and the true error as n grows (isotropic noise)")
    # a fixed range: plotly's autorange would stretch the axis to fit the crossover label
    fig.update_xaxes(range=[np.log10(0.8 * all_n.min()), np.log10(1.25 * all_n.max())])
    return fig


_SHORT = {"laplacian": "2-D Laplacian", "kernel": "exp. kernel", "digits": "digits cov."}


def structured_figure(names: tuple[str, ...] = ("laplacian", "kernel", "digits"),
                      seeds: Any = (0, 1, 2, 3, 4)) -> go.Figure:
    """Bound / true error for Theorem 2.1 and EYM-N on the structured matrices, every (seed, noise
    level) a point, with the paper's 10x and 100x marks."""
    fig = go.Figure()
    for key, label, color, symbol in (("bound_over_true", NAMES["bound"], _COLOR["bound"], _MARKER["bound"]),
                                      ("eymn_over_true", NAMES["eymn"], _COLOR["eymn"], _MARKER["eymn"])):
        xs, ys, text = [], [], []
        for name in names:
            ex = structured_experiment(name, seeds)
            vals = ex[key]
            xs += [_SHORT[name] + f"<br>n = {structured_matrix(name).n}"] * vals.size
            ys += list(vals.ravel())
            text += [f"σ = {lv:g} Δ_max" for _ in range(vals.shape[0]) for lv in ex["levels"]]
        fig.add_trace(go.Box(x=xs, y=ys, name=label, marker=dict(color=color, symbol=symbol), boxpoints="all",
                             jitter=0.4,
                             pointpos=0, text=text, hovertemplate="%{y:.3g}× (%{text})<extra></extra>"))
    # The paper's marks, as shapes in data units and labels in log10 units (plotly's log-axis rule).
    marks = ((10, "paper: Theorem 2.1 within ~10×"), (100, "paper: EYM-N 100–1000× off"))
    fig.update_layout(
        boxmode="group",
        shapes=[dict(type="line", xref="paper", x0=0, x1=1, yref="y", y0=v, y1=v,
                     line=dict(color="#555", dash="dot", width=1.5)) for v, _ in marks],
        annotations=[dict(xref="paper", x=0.0, xanchor="left", yref="y", y=np.log10(v), yanchor="bottom",
                          text=note, showarrow=False, font=dict(size=11, color="#555")) for v, note in marks])
    return base_layout(fig, yaxis_title="bound / true error", logy=True, height=480,
                       title="Bound / true error on structured matrices, beside the paper's marks")


# --------------------------------------------------------------------------- claims

_NO_CONTOUR = ("EYM-N in place of Theorem 2.1 (no contour argument: truncation terms that do not shrink "
               "with E instead of the subspace term)")


@claim("08", "Past the predicted crossover Theorem 2.1 beats the classical bound by a factor growing "
             "like sqrt(n), and the true error keeps pace with it",
       kind="reproduction",
       paper="Theorem 2.1 improves on naive adaptations of classical bounds by up to a factor sqrt(n): on the "
             "synthetic spectrum {n, 2n, ..., 10n, 20n, ..., 20n} with p = 10 and Gaussian noise it is "
             "O(n^-3/2) against EYM-N's O(1/n)",
       expect="synthetic spectrum, p = 10, unit Gaussian noise (||E|| = 2 sqrt(n)), true error by the O(np) "
              "first-order estimate, 5 seeds: median EYM-N / Theorem 2.1 at n = 64000 >= 2 (crossover predicted "
              "at n* = 3660) and median drift of Theorem-2.1/true from n = 4000 to 64000 <= 1.5 (the true "
              "error's exponent within 0.15 of the bound's -3/2; EYM-N's -1 would drift about 4x)",
       control=_NO_CONTOUR, name="sqrt_n_gain")
def claim_sqrt_n_gain(fast: bool = False, control: bool = False) -> Measured:
    seeds = (0, 1) if fast else (0, 1, 2, 3, 4)
    ex = sqrt_n_experiment(SQRT_N_NS, seeds, exact_ns=(4000, 64000))
    ns = ex["ns"]
    est = ex["eymn"] if control else ex["bound"]     # the estimate under test, per n
    over = est[:, None] / ex["true"]                 # estimate / true error, [n, seed]
    i0, i1 = list(ns).index(4000), list(ns).index(64000)
    drift = over[i1] / over[i0]
    gain = ex["eymn"] / est  # arithmetic on the two formulas: it fails only on a coding error
    # Reported, not criteria: the same drift on the exact error of the same draws, and how far the
    # registered first-order estimate is from it.
    over_exact = est[:, None] / ex["exact"]
    values = {"gain_at_64000": float(gain[i1]), "drift_median": float(np.median(drift)),
              "drift_min": float(drift.min()), "drift_max": float(drift.max()),
              "drift_median_exact": float(np.median(over_exact[i1] / over_exact[i0])),
              "estimate_vs_exact_max_dev": float(np.max(np.abs(ex["true"][[i0, i1]] / ex["exact"][[i0, i1]] - 1))),
              "est_over_true_at_4000": float(np.median(over[i0])),
              "est_over_true_at_64000": float(np.median(over[i1])),
              "eymn_over_true_at_64000": float(np.median(ex["eymn"][i1] / ex["true"][i1])),
              "crossover_n_formulas": _log_crossing(ns.astype(float), ex["eymn"] / ex["bound"]),
              "crossover_n_predicted": ex["n_star"]}
    what = "EYM-N" if control else "Theorem 2.1"
    # The gain compares two formulas, so it is a condition, not a measured margin: the drift (against
    # the true error) is what can fail, and what the scoreboard shows.
    return Measured(values, holds=bool(gain[i1] >= 2.0), criteria=[Criterion("drift_median", "<=", 1.5)],
                    seeds=seeds, details=ex,
                    summary=(f"{what}/true drifts {np.median(drift):.2f}x ({drift.min():.2f}-{drift.max():.2f}) "
                             f"from n = 4000 to 64000; EYM-N/{what} = {gain[i1]:.2f} at n = 64000"))


@claim("08", "On structured matrices under Gaussian noise Theorem 2.1 stays within about 10x of the true "
             "error while the classical bound is 100-1000x off",
       kind="reproduction", reproduces=False,
       paper="on real and structured matrices (a census covariance, the BCSSTK09 stiffness matrix, a discretised "
             "elliptic operator) under Gaussian noise, Theorem 2.1 stays within about 10x (5-10x) of the true error "
             "while EYM-N overestimates it by 100-1000x",
       expect="2-D Laplacian (15 x 17 grid, n = 255) and exponential-kernel matrix (n = 200), p = 10, E = sigma W "
              "with sigma / Delta_max in {0.01, 0.1, 0.5}, Delta_max = min(lambda_n, delta_(n-p)) / (8 sqrt n), "
              "5 seeds: median Theorem-2.1/true <= 10 on each matrix; precondition: median EYM-N/true >= 100 on each",
       control=_NO_CONTOUR,
       diagnosis="(1) the baseline shows the phenomenon: EYM-N overpredicts by >= 100x on both matrices (the "
                 "measured precondition); (2) the setting is on the paper's scale: Gaussian noise up to half the "
                 "authors' maximal allowable sigma, min(lambda_n, delta)/(8 sqrt n), p = 10 as in the paper's "
                 "synthetic experiment and, as the authors' code sweeps every p' up to a spectral-tail rank, every "
                 "p' from 1 to 30 in the chapter (structured_p_sweep: no p' brings the median ratio near 10), "
                 "matrices of the paper's kinds and sizes (n = 200-255; the paper's 69-1083); "
                 "(3) the bound passes its reduction tests: it matches its closed form for rank-one noise along u_n "
                 "(within its constant 4 of the truth there), holds on 200 random instances, keeps only the "
                 "Neumann-type term at p = n, and the true error matches a dense computation; (4) the control "
                 "(EYM-N) fails the criterion too. Theorem 2.1 stays one to two orders of magnitude above the truth: "
                 "it charges all of ||E|| ~ 2 sigma sqrt(n) to the worst direction, where isotropic noise puts "
                 "about sigma.",
       name="structured_tracking")
def claim_structured_tracking(fast: bool = False, control: bool = False) -> Measured:
    seeds = (0, 1) if fast else (0, 1, 2, 3, 4)
    values, spreads, gap_ok = {}, [], True
    for name in ("laplacian", "kernel"):
        ex = structured_experiment(name, seeds)
        ratio = ex["eymn_over_true"] if control else ex["bound_over_true"]
        values[f"{name}_est_over_true"] = float(np.median(ratio))
        values[f"{name}_est_over_true_min"] = float(ratio.min())
        values[f"{name}_est_over_true_max"] = float(ratio.max())
        values[f"{name}_eymn_over_true"] = float(np.median(ex["eymn_over_true"]))
        gap_ok &= bool(np.all(ex["gap_ok"]))
        spreads.append(f"{name} {np.median(ratio):.0f} ({ratio.min():.0f}-{ratio.max():.0f})")
    values["worst_est_over_true"] = max(values["laplacian_est_over_true"], values["kernel_est_over_true"])
    values["least_eymn_over_true"] = min(values["laplacian_eymn_over_true"], values["kernel_eymn_over_true"])
    if not gap_ok:
        raise RuntimeError("a structured instance broke the gap condition: lower NOISE_LEVELS")
    what = "EYM-N" if control else "Theorem 2.1"
    return Measured(values, criteria=[Criterion("worst_est_over_true", "<=", 10.0)], seeds=seeds,
                    precondition=values["least_eymn_over_true"] >= 100.0,
                    summary=f"{what}/true: " + ", ".join(spreads) + "; EYM-N/true "
                            f"{values['least_eymn_over_true']:.0f} or more")


@claim("08", "Theorem 2.1 and EYM-N bound the true error on every random instance that meets the gap condition",
       kind="identity",
       expect="bound >= true error in 100% of 200 random instances (random spectra, p, Wigner/aligned/rank-one noise), "
              "for Theorem 2.1 and for EYM-N",
       name="bound_valid")
def claim_bound_valid(fast: bool = False) -> Measured:
    rng = np.random.default_rng(2025)
    count = 200
    ratios, eymn_ratios, kinds = [], [], []
    n_range = (8, 30) if fast else (8, 60)
    for _ in range(count):
        sym, e, p, kind = random_instance(rng, n_range=n_range)
        cmp = compare_bounds(sym, e, p, first_order=False)
        if not cmp.gap_ok:
            raise RuntimeError("random_instance produced a case outside the gap condition")
        ratios.append(cmp.bound / cmp.true_error if cmp.true_error > 0 else np.inf)
        eymn_ratios.append(cmp.eymn / cmp.true_error if cmp.true_error > 0 else np.inf)
        kinds.append(kind)
    ratios, eymn_ratios, kinds = np.array(ratios), np.array(eymn_ratios), np.array(kinds)
    r1 = ratios[kinds == "rank_one"]
    values = {"instances": count, "violations": int(np.sum(ratios < 1.0)),
              "eymn_violations": int(np.sum(eymn_ratios < 1.0)),
              "min_bound_over_true": float(ratios.min()), "median_bound_over_true": float(np.median(ratios)),
              "rank_one_median_ratio": float(np.median(r1)) if r1.size else float("nan")}
    return Measured(values, criteria=[Criterion("violations", "<=", 0), Criterion("eymn_violations", "<=", 0)],
                    summary=f"{values['violations']} violations in {count}; tightest bound/true = {ratios.min():.2f}",
                    details={"ratios": ratios, "kinds": kinds})
