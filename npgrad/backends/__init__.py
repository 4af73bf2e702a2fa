"""npgrad.backends: the backend flags torch scripts read and set (CPU only: no GPU backend).

>>> import npgrad
>>> npgrad.backends.mps.is_available(), npgrad.backends.cudnn.is_available()
(False, False)
"""
from __future__ import annotations

import importlib
from typing import Any

_SUBMODULES = ("mps", "cudnn", "cuda")


def __getattr__(name: str) -> Any:
    # Submodules load on first use, as npgrad.backends itself does.
    if name in _SUBMODULES:
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
