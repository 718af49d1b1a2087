"""Curvature of torch losses: the sharpness lambda_max by Hessian-vector products.

Kept out of ``optbook.core``'s namespace so that chapters without torch do not import it:
``from optbook.core.curvature import hessian_top_eigenvalue``.
"""
from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

import numpy as np
import torch

from .validate import check_int, check_positive


def global_norm(tensors: Iterable[torch.Tensor]) -> torch.Tensor:
    """The L2 norm of all tensors taken jointly (as one vector), not per tensor."""
    return torch.sqrt(sum((t.detach() ** 2).sum() for t in tensors))


def hessian_top_eigenvalue(loss_fn: Callable[[], torch.Tensor], params: Sequence[torch.Tensor], *,
                           maxiter: int = 200, tol: float = 1e-7, seed: int = 0) -> float:
    """The sharpness lambda_max of the loss at ``params``: power iteration on Hessian-vector
    products (double backward), started from a seeded Gaussian vector.

    Returns the Rayleigh quotient of the dominant eigenvector, i.e. the eigenvalue of largest
    magnitude (lambda_max at a trained point, where negative curvature is small). Stops when the
    estimate changes by less than ``tol`` relative. The parameters are not modified.
    """
    params = list(params)
    if not params or not all(isinstance(p, torch.Tensor) and p.requires_grad for p in params):
        raise ValueError("params must be a non-empty list of tensors with requires_grad=True")
    if not callable(loss_fn):
        raise ValueError("loss_fn must be a callable returning the scalar loss")
    maxiter = check_int(maxiter, "maxiter", minimum=1)
    tol = check_positive(tol, "tol")
    seed = check_int(seed, "seed")
    gen = torch.Generator().manual_seed(seed)
    with torch.enable_grad():
        loss = loss_fn()
        if not isinstance(loss, torch.Tensor) or loss.numel() != 1 or not torch.isfinite(loss):
            raise ValueError("loss_fn must return a finite scalar tensor")
        grads = torch.autograd.grad(loss, params, create_graph=True)
        vec = [torch.randn(p.shape, generator=gen, dtype=p.dtype) for p in params]
        lam = np.nan
        for _ in range(maxiter):
            norm = global_norm(vec)
            vec = [v / norm for v in vec]
            hv = torch.autograd.grad(grads, params, grad_outputs=vec, retain_graph=True)
            new = float(sum((h * v).sum() for h, v in zip(hv, vec)))
            vec = [h.detach() for h in hv]
            if np.isfinite(lam) and abs(new - lam) <= tol * max(abs(new), 1e-12):
                return new
            lam = new
    return float(lam)
