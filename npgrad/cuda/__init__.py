"""npgrad.cuda: torch.cuda as a CPU-only torch build reports it (no device, no-op seeding).

Scripts written for GPUs guard with ``torch.cuda.is_available()`` and seed with
``torch.cuda.manual_seed_all``; both must work here.  Everything that needs a
device raises what a CPU-only torch raises: ``AssertionError('Torch not compiled
with CUDA enabled')``.
"""
from __future__ import annotations

import importlib
from typing import Any

NOT_COMPILED_MSG = "Torch not compiled with CUDA enabled"


def _no_cuda() -> None:
    raise AssertionError(NOT_COMPILED_MSG)


def is_available() -> bool:
    """False: npgrad runs on the CPU only.

    >>> import npgrad
    >>> npgrad.cuda.is_available()
    False
    """
    return False


def device_count() -> int:
    """0: there are no CUDA devices.

    >>> import npgrad
    >>> npgrad.cuda.device_count()
    0
    """
    return 0


def is_initialized() -> bool:
    """False: CUDA is never initialised.

    >>> import npgrad
    >>> npgrad.cuda.is_initialized()
    False
    """
    return False


def is_bf16_supported(including_emulation: bool = True) -> bool:
    """False, as on a CPU-only torch.

    >>> import npgrad
    >>> npgrad.cuda.is_bf16_supported()
    False
    """
    return False


def manual_seed(seed: int) -> None:
    """A no-op (no CUDA generator to seed), as on a CPU-only torch.

    >>> import npgrad
    >>> npgrad.cuda.manual_seed(0) is None
    True
    """
    int(seed)


def manual_seed_all(seed: int) -> None:
    """A no-op (no CUDA generators to seed), as on a CPU-only torch.

    >>> import npgrad
    >>> npgrad.cuda.manual_seed_all(0) is None
    True
    """
    int(seed)


def seed() -> None:
    """A no-op, as on a CPU-only torch.

    >>> import npgrad
    >>> print(npgrad.cuda.seed())
    None
    """


def seed_all() -> None:
    """A no-op, as on a CPU-only torch.

    >>> import npgrad
    >>> print(npgrad.cuda.seed_all())
    None
    """


def empty_cache() -> None:
    """A no-op: there is no CUDA cache to free.

    >>> import npgrad
    >>> print(npgrad.cuda.empty_cache())
    None
    """


def memory_allocated(device: Any = None) -> int:
    """0 bytes: nothing lives on a CUDA device.

    >>> import npgrad
    >>> npgrad.cuda.memory_allocated()
    0
    """
    return 0


def max_memory_allocated(device: Any = None) -> int:
    """0 bytes: nothing lives on a CUDA device.

    >>> import npgrad
    >>> npgrad.cuda.max_memory_allocated()
    0
    """
    return 0


def memory_reserved(device: Any = None) -> int:
    """0 bytes: nothing lives on a CUDA device.

    >>> import npgrad
    >>> npgrad.cuda.memory_reserved()
    0
    """
    return 0


def current_device() -> int:
    """Raises torch's CPU-build error: there is no current CUDA device.

    >>> import npgrad
    >>> npgrad.cuda.current_device()
    Traceback (most recent call last):
    AssertionError: Torch not compiled with CUDA enabled
    """
    _no_cuda()
    return 0  # unreachable


def get_device_name(device: Any = None) -> str:
    """Raises torch's CPU-build error: there is no CUDA device to name.

    >>> import npgrad
    >>> npgrad.cuda.get_device_name(0)
    Traceback (most recent call last):
    AssertionError: Torch not compiled with CUDA enabled
    """
    _no_cuda()
    return ""  # unreachable


def get_device_capability(device: Any = None) -> tuple:
    """Raises torch's CPU-build error.

    >>> import npgrad
    >>> npgrad.cuda.get_device_capability()
    Traceback (most recent call last):
    AssertionError: Torch not compiled with CUDA enabled
    """
    _no_cuda()
    return ()  # unreachable


def get_device_properties(device: Any = None) -> Any:
    """Raises torch's CPU-build error.

    >>> import npgrad
    >>> npgrad.cuda.get_device_properties(0)
    Traceback (most recent call last):
    AssertionError: Torch not compiled with CUDA enabled
    """
    _no_cuda()


def synchronize(device: Any = None) -> None:
    """Raises torch's CPU-build error: there is no CUDA stream to wait for.

    >>> import npgrad
    >>> npgrad.cuda.synchronize()
    Traceback (most recent call last):
    AssertionError: Torch not compiled with CUDA enabled
    """
    _no_cuda()


def init() -> None:
    """Raises torch's CPU-build error.

    >>> import npgrad
    >>> npgrad.cuda.init()
    Traceback (most recent call last):
    AssertionError: Torch not compiled with CUDA enabled
    """
    _no_cuda()


def get_rng_state(device: Any = "cuda") -> Any:
    """Raises torch's CPU-build error.

    >>> import npgrad
    >>> npgrad.cuda.get_rng_state()
    Traceback (most recent call last):
    AssertionError: Torch not compiled with CUDA enabled
    """
    _no_cuda()


def initial_seed() -> int:
    """Raises torch's CPU-build error.

    >>> import npgrad
    >>> npgrad.cuda.initial_seed()
    Traceback (most recent call last):
    AssertionError: Torch not compiled with CUDA enabled
    """
    _no_cuda()
    return 0  # unreachable


def current_stream(device: Any = None) -> Any:
    """Raises torch's CPU-build error.

    >>> import npgrad
    >>> npgrad.cuda.current_stream()
    Traceback (most recent call last):
    AssertionError: Torch not compiled with CUDA enabled
    """
    _no_cuda()


def __getattr__(name: str) -> Any:
    # torch.cuda.amp (the deprecated autocast and GradScaler spellings), loaded on first use
    if name == "amp":
        return importlib.import_module("npgrad.cuda.amp")
    raise AttributeError(f"module 'npgrad.cuda' has no attribute '{name}'")
