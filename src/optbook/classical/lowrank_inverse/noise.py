"""The noise models of the experiments. Each generator takes the spectral norm ``norm`` = ||E||
it should have (the chapter's relative noise level is eps = ||E|| / lambda_n)."""
from __future__ import annotations

from typing import Any

import numpy as np

from ...core import as_rng, check_in_range, check_int, check_positive
from ...core.validate import RngLike
from .bounds import _as_sym


def wigner_matrix(n: int, rng: RngLike = None) -> np.ndarray:
    """W = (G + G^T)/sqrt(2) with G an n x n standard Gaussian matrix: off-diagonal entries
    N(0, 1), diagonal N(0, 2), ||W|| ~ 2 sqrt(n) (the edge of the semicircle)."""
    n = check_int(n, "n", minimum=1)
    g = as_rng(rng).standard_normal((n, n))
    return (g + g.T) / np.sqrt(2.0)


def _normalised(m: np.ndarray, norm: float) -> np.ndarray:
    nrm = float(np.max(np.abs(np.linalg.eigvalsh(m))))
    return norm * m / nrm if nrm > 0 else m


def wigner_noise(n: int, norm: float, rng: RngLike = None) -> np.ndarray:
    """Isotropic noise E = norm W / ||W|| (so ||E|| = norm exactly)."""
    norm = check_positive(norm, "norm", allow_zero=True)
    return _normalised(wigner_matrix(n, rng), norm)


def aligned_noise(a: Any, p: int, norm: float, rng: RngLike = None) -> np.ndarray:
    """Noise only in the low-curvature subspace: E = norm U_p R U_p^T with R a random symmetric
    p x p matrix normalised to ||R|| = 1, so E spreads over the p kept directions."""
    sym = _as_sym(a)
    u = sym.bottom_basis(p)
    norm = check_positive(norm, "norm", allow_zero=True)
    r = _normalised(wigner_matrix(u.shape[1], rng), 1.0)
    return norm * (u @ r @ u.T)


def rank_one_noise(a: Any, norm: float) -> np.ndarray:
    """E = norm u_n u_n^T, all the noise on the direction of least curvature. Of the noise shapes
    here it moves A_p^{-1} the most: to first order by norm / lambda_n^2, the largest the kept
    block can move for a given ||E||."""
    sym = _as_sym(a)
    norm = check_positive(norm, "norm", allow_zero=True)
    u = sym.eigvecs[:, -1]
    return norm * np.outer(u, u)


def mixed_noise(a: Any, p: int, norm: float, phi: float, rng: RngLike = None) -> np.ndarray:
    """E = cos(phi) aligned + sin(phi) Wigner (each of norm 1), rescaled so that ||E|| = norm.

    ``phi`` in radians, 0 = all noise in the kept (low-curvature) subspace, pi/2 = isotropic.
    """
    sym = _as_sym(a)
    phi = check_in_range(phi, "phi", 0.0, np.pi / 2, closed=(True, True))
    norm = check_positive(norm, "norm", allow_zero=True)
    rng = as_rng(rng)
    mix = np.cos(phi) * aligned_noise(sym, p, 1.0, rng) + np.sin(phi) * wigner_noise(sym.n, 1.0, rng)
    return _normalised(mix, norm)
