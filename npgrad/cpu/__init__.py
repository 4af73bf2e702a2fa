"""npgrad.cpu: torch.cpu's device queries (the CPU is always there) and its deprecated amp."""
from __future__ import annotations

import importlib
from typing import Any

__all__ = ["current_device", "device_count", "is_available", "synchronize"]


def is_available() -> bool:
    """True: there is always a CPU.

    >>> import npgrad
    >>> npgrad.cpu.is_available(), npgrad.cpu.device_count(), npgrad.cpu.current_device()
    (True, 1, 'cpu')
    """
    return True


def device_count() -> int:
    return 1


def current_device() -> str:
    return "cpu"


def synchronize(device: Any = None) -> None:
    """Nothing to wait for: CPU work is done when its call returns."""


def __getattr__(name: str) -> Any:
    # torch.cpu.amp (the deprecated autocast and GradScaler spellings), loaded on first use
    if name == "amp":
        return importlib.import_module("npgrad.cpu.amp")
    raise AttributeError(f"module 'npgrad.cpu' has no attribute '{name}'")
