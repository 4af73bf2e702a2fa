"""The size of the BLAS thread pool NumPy's matmuls run on (``npgrad.set_num_threads``).

Note [Sizing the BLAS pool]
npgrad's only multi-threaded kernels are the BLAS calls under NumPy's ``matmul``;
``torch.set_num_threads(n)`` sizes torch's intra-op pool, so npgrad's sizes the
BLAS pool.  It matters: on a loaded 2-core machine an MLP trained in 24.8 s with
2 OpenBLAS threads and 2.6 s with one (issue 16).  Two ways, in order:

1. threadpoolctl (an optional extra), which knows every BLAS NumPy may be built
   against (OpenBLAS with or without symbol prefixes, MKL, BLIS, FlexiBLAS);
2. without it, the BLAS's own C API through ctypes: the loaded OpenBLAS (NumPy's
   wheels bundle ``libscipy_openblas64_``, whose symbols carry a ``scipy_`` prefix
   and a ``64_`` suffix) or MKL, found in the process's loaded-library list
   (``/proc/self/maps``) or in the wheel's ``numpy.libs`` folder.

A BLAS neither way can reach (Apple's Accelerate, a static build) keeps its own
setting; ``get_num_threads`` still returns the number set, as torch's does.
ctypes and glob are imported on the first call, not with npgrad: ``import npgrad``
is a measured target (issue 16) and most programs never size the pool.
"""
from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

import numpy as np

__all__ = ["blas_threads", "set_blas_threads"]

_OPENBLAS_PREFIXES = ("", "scipy_")
_OPENBLAS_SUFFIXES = ("", "64_")
_MKL_SET = ("MKL_Set_Num_Threads", "mkl_set_num_threads")
_MKL_GET = ("MKL_Get_Max_Threads", "mkl_get_max_threads")

_ctypes_api: tuple | None = None   # (set, get) once looked up; (None, None) if there is none


def _threadpoolctl() -> Any:
    try:
        import threadpoolctl
    except ImportError:
        return None
    return threadpoolctl


def _blas_library_paths() -> list:
    """Paths of the BLAS libraries this process has loaded (or NumPy's wheel ships)."""
    import glob   # see the Note: not at npgrad's import
    paths: list = []
    try:
        with open("/proc/self/maps") as maps:
            for line in maps:
                path = line.rsplit(None, 1)[-1] if "/" in line else ""
                name = os.path.basename(path).lower()
                if "openblas" in name or "mkl_rt" in name:
                    paths.append(os.path.realpath(path))
    except OSError:
        pass
    numpy_dir = os.path.dirname(np.__file__)
    for folder in (os.path.join(numpy_dir, os.pardir, "numpy.libs"),
                   os.path.join(numpy_dir, ".dylibs")):
        paths += [os.path.realpath(p) for p in sorted(glob.glob(os.path.join(folder, "*openblas*")))]
    return list(dict.fromkeys(paths))


def _lookup(library: Any, names: tuple) -> Callable | None:
    for name in names:
        fn = getattr(library, name, None)
        if fn is not None:
            return fn
    return None


def _find_ctypes_api() -> tuple:
    """(set_num_threads, get_num_threads) C functions of the loaded BLAS, or (None, None)."""
    global _ctypes_api
    if _ctypes_api is not None:
        return _ctypes_api
    import ctypes   # see the Note: not at npgrad's import
    _ctypes_api = (None, None)
    for path in _blas_library_paths():
        try:
            library = ctypes.CDLL(path)    # already loaded: the same handle NumPy uses
        except OSError:
            continue
        setter = _lookup(library, tuple(f"{p}openblas_set_num_threads{s}"
                                        for p in _OPENBLAS_PREFIXES for s in _OPENBLAS_SUFFIXES))
        getter = _lookup(library, tuple(f"{p}openblas_get_num_threads{s}"
                                        for p in _OPENBLAS_PREFIXES for s in _OPENBLAS_SUFFIXES))
        if setter is None:
            setter, getter = _lookup(library, _MKL_SET), _lookup(library, _MKL_GET)
        if setter is not None:
            setter.restype = None
            setter.argtypes = [ctypes.c_int]
            if getter is not None:
                getter.restype = ctypes.c_int
                getter.argtypes = []
            _ctypes_api = (setter, getter)
            break
    return _ctypes_api


def set_blas_threads(n: int) -> str:
    """Size the BLAS pool to ``n`` threads; return the way used: threadpoolctl, ctypes or none."""
    threadpoolctl = _threadpoolctl()
    if threadpoolctl is not None:
        controller = threadpoolctl.ThreadpoolController()
        if controller.select(user_api="blas").lib_controllers:
            controller.limit(limits=n, user_api="blas")
            return "threadpoolctl"
    setter, _ = _find_ctypes_api()
    if setter is not None:
        setter(n)
        return "ctypes"
    return "none"


def blas_threads() -> int | None:
    """The BLAS pool's size as the BLAS reports it; None where it cannot be read."""
    threadpoolctl = _threadpoolctl()
    if threadpoolctl is not None:
        for info in threadpoolctl.threadpool_info():
            if info.get("user_api") == "blas":
                return int(info["num_threads"])
    _, getter = _find_ctypes_api()
    return None if getter is None else int(getter())
