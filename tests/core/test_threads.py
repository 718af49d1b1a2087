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


def test_one_blas_thread_restores_the_setting():
    if threads._BLAS_THREADS is None:
        pytest.skip("numpy's BLAS is not the bundled OpenBLAS")
    get = threads._BLAS_THREADS[0]
    before = int(get())
    with threads.one_blas_thread():
        assert int(get()) == 1
    assert int(get()) == before
