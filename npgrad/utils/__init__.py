"""npgrad.utils: helpers; ``npgrad.utils.data`` (datasets and DataLoader) loads on first use."""
from __future__ import annotations

import importlib
from typing import Any


def __getattr__(name: str) -> Any:
    if name == "data":
        return importlib.import_module(f"{__name__}.data")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


# ``npgrad.utils.checkpoint`` also loads on first use.
_getattr_without_checkpoint = __getattr__


def __getattr__(name: str) -> Any:  # noqa: F811
    if name == "checkpoint":
        return importlib.import_module(f"{__name__}.checkpoint")
    return _getattr_without_checkpoint(name)
