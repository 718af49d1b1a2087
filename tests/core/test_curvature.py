import numpy as np
import pytest
import torch

from optbook.core.curvature import global_norm, hessian_top_eigenvalue


def test_top_eigenvalue_of_a_quadratic():
    rng = np.random.default_rng(0)
    q, _ = np.linalg.qr(rng.standard_normal((6, 6)))
    H = torch.tensor((q * np.array([5.0, 2.0, 1.0, 0.5, 0.1, 0.01])) @ q.T)
    w = torch.zeros(6, dtype=torch.float64, requires_grad=True)
    lam = hessian_top_eigenvalue(lambda: 0.5 * w @ H @ w, [w], maxiter=500, tol=1e-12)
    assert lam == pytest.approx(5.0, rel=1e-6)
    assert torch.all(w == 0)  # parameters untouched


def test_global_norm_is_joint():
    assert float(global_norm([torch.tensor([3.0]), torch.tensor([4.0])])) == pytest.approx(5.0)


def test_bad_input():
    w = torch.zeros(2, requires_grad=True)
    with pytest.raises(ValueError, match="params"):
        hessian_top_eigenvalue(lambda: (w**2).sum(), [])
    with pytest.raises(ValueError, match="scalar"):
        hessian_top_eigenvalue(lambda: w**2, [w])
    with pytest.raises(ValueError, match="maxiter"):
        hessian_top_eigenvalue(lambda: (w**2).sum(), [w], maxiter=0)
