import pytest
import torch

from optbook.core import threads


def test_one_torch_thread_restores_the_setting_even_on_error():
    before = torch.get_num_threads()
    with threads.one_torch_thread():
        assert torch.get_num_threads() == 1
    assert torch.get_num_threads() == before
    with pytest.raises(RuntimeError):
        with threads.one_torch_thread():
            raise RuntimeError("boom")
    assert torch.get_num_threads() == before


def test_one_blas_thread_limits_numpy_and_scipy_blas_and_restores_them():
    import scipy.linalg  # noqa: F401  (loads scipy's own OpenBLAS)
    from threadpoolctl import threadpool_info

    def blas():
        return {i["filepath"]: i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas"}

    before = blas()
    assert len(before) >= 1
    with threads.one_blas_thread():
        assert set(blas().values()) == {1}
    assert blas() == before
