"""npgrad.set_num_threads sizes the BLAS pool (threadpoolctl, or the BLAS's own C API);
get_num_threads returns what was set; bad values raise torch's errors."""
from __future__ import annotations

import subprocess
import sys

import pytest
from torch_oracle import assert_same_error

import npgrad
from npgrad import _threads


@pytest.fixture
def restore_threads():
    """Put the BLAS pool and npgrad's number back as they were."""
    before_blas = _threads.blas_threads()
    before = npgrad.get_num_threads()
    yield
    npgrad.set_num_threads(before)
    if before_blas is not None:
        _threads.set_blas_threads(before_blas)


def test_get_returns_what_was_set(restore_threads):
    for n in (1, 3, 2):
        npgrad.set_num_threads(n)
        assert npgrad.get_num_threads() == n


def test_set_num_threads_sizes_the_blas_pool(restore_threads):
    threadpoolctl = pytest.importorskip("threadpoolctl")
    blas = [i for i in threadpoolctl.threadpool_info() if i["user_api"] == "blas"]
    if not blas:
        pytest.skip("no BLAS that threadpoolctl can see")
    npgrad.set_num_threads(1)
    assert [i["num_threads"] for i in threadpoolctl.threadpool_info()
            if i["user_api"] == "blas"] == [1] * len(blas)
    npgrad.set_num_threads(2)
    assert {i["num_threads"] for i in threadpoolctl.threadpool_info()
            if i["user_api"] == "blas"} == {2}
    assert _threads.blas_threads() == 2


def test_the_ctypes_fallback_without_threadpoolctl(restore_threads, monkeypatch):
    """Without threadpoolctl the BLAS's own set/get functions size and report the pool."""
    setter, getter = _threads._find_ctypes_api()
    if setter is None or getter is None:
        pytest.skip("no OpenBLAS/MKL C API found in this process")
    monkeypatch.setattr(_threads, "_threadpoolctl", lambda: None)
    assert _threads.set_blas_threads(1) == "ctypes"
    assert getter() == 1 and _threads.blas_threads() == 1
    npgrad.set_num_threads(2)
    assert getter() == 2
    threadpoolctl = pytest.importorskip("threadpoolctl")   # and an independent reader agrees
    assert {i["num_threads"] for i in threadpoolctl.threadpool_info()
            if i["user_api"] == "blas"} == {2}


def test_a_fresh_process_gets_one_blas_thread():
    """What a benchmark or training script does first: one call, before any matmul."""
    code = ("import npgrad, numpy as np; npgrad.set_num_threads(1); "
            "from npgrad import _threads; a = np.ones((256, 256)); a @ a; "
            "print(npgrad.get_num_threads(), _threads.blas_threads())")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.split()
    assert out[0] == "1"
    assert out[1] in ("1", "None")    # None: a BLAS with no reachable API (Accelerate)


@pytest.mark.parametrize("expr", [
    "torch.set_num_threads(0)", "torch.set_num_threads(-1)", "torch.set_num_threads('2')",
    "torch.set_num_threads(1.0)", "torch.set_num_threads(False)", "torch.set_num_threads(None)",
])
def test_bad_values_raise_torchs_errors(expr, restore_threads):
    assert_same_error(expr, lambda torch: {"torch": torch})
    before = npgrad.get_num_threads()
    with pytest.raises(RuntimeError):
        eval(expr, {"torch": npgrad})
    assert npgrad.get_num_threads() == before      # a rejected value changes nothing


def test_bad_value_messages():
    with pytest.raises(RuntimeError, match=r"^set_num_threads expects a positive integer$"):
        npgrad.set_num_threads(0)
    with pytest.raises(RuntimeError, match=r"^set_num_threads expects an int, but got str$"):
        npgrad.set_num_threads("2")
