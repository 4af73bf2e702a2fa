"""``torch.autocast``: the context manager and decorator, and which devices it runs on here.

Note [Autocast on a CPU-only run]
Scripts written for GPUs wrap their forward in ``torch.autocast('cuda')`` or
``torch.cuda.amp.autocast()``.  A CPU build of torch constructs those with a
UserWarning ("CUDA is not available ...  Disabling autocast.") and then runs the
block in full precision; npgrad does the same, so such scripts print the same
numbers.  An *enabled* CPU autocast is different: torch then runs matmuls,
linear layers and convolutions in bfloat16 inside the block.  npgrad does not
cast ops per device policy, and running the block in float32 instead would give
other numbers silently, so entering an enabled CPU autocast raises a
RuntimeError saying so (``enabled=False`` works).
"""
from __future__ import annotations

import functools
import warnings
from typing import Any, Callable

from .. import _dtype
from .._device import device as _device

_CUDA_DISABLED = "CUDA is not available or torch_xla is imported. Disabling autocast."
CPU_UNSUPPORTED = ("npgrad does not implement autocast on the CPU (running matmuls, linear "
                   "layers and convolutions in bfloat16 inside the block); use "
                   "torch.autocast('cpu', enabled=False) or leave it out")


def is_autocast_available(device_type: str) -> bool:
    """Whether autocast knows ``device_type`` (cpu and cuda, as in torch)."""
    return device_type in ("cpu", "cuda")


def is_autocast_enabled(device_type: str | None = None) -> bool:
    """Never enabled: see Note [Autocast on a CPU-only run]."""
    return False


class autocast:
    """``with torch.autocast('cuda'):`` on a CPU-only run: disabled with torch's warning.

    >>> import warnings, npgrad
    >>> with warnings.catch_warnings(record=True) as w:
    ...     warnings.simplefilter('always')
    ...     with npgrad.autocast('cuda'):
    ...         y = npgrad.ones(2, 2) @ npgrad.ones(2, 2)
    >>> y.dtype, str(w[0].message)
    (npgrad.float32, 'CUDA is not available or torch_xla is imported. Disabling autocast.')
    """

    def __init__(self, device_type: str, dtype: Any = None, enabled: bool = True,
                 cache_enabled: bool | None = None) -> None:
        if not isinstance(device_type, str):
            raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
        self.device = _device(device_type).type
        self.fast_dtype = dtype if dtype is not None else (
            _dtype.float16 if self.device == "cuda" else _dtype.bfloat16)
        self._cache_enabled = True if cache_enabled is None else cache_enabled
        if self.device == "cuda" and enabled:
            warnings.warn(_CUDA_DISABLED, UserWarning, stacklevel=2)
            enabled = False
        self._enabled = enabled

    def __enter__(self) -> autocast:
        if self._enabled:
            raise RuntimeError(CPU_UNSUPPORTED)
        return self

    def __exit__(self, *exc: Any) -> None:
        return None

    def __call__(self, func: Callable) -> Callable:
        @functools.wraps(func)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with self:
                return func(*args, **kwargs)
        return wrapper
