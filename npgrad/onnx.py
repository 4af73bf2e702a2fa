"""npgrad.onnx: importable as torch.onnx is, so scripts that import it run; exporting is refused.

npgrad has no graph capture (no TorchScript, no dynamo), so it cannot write ONNX files:
``export`` raises a RuntimeError that says so, when it is called and not before.
"""
from __future__ import annotations

from typing import Any

__all__ = ["export", "is_in_onnx_export"]

EXPORT_UNSUPPORTED = ("npgrad cannot export models to ONNX: it has no graph capture "
                      "(torch.onnx.export needs TorchScript or torch.export)")


def is_in_onnx_export() -> bool:
    """False: no export is ever running."""
    return False


def export(model: Any, args: Any = (), f: Any = None, *a: Any, **kw: Any) -> Any:
    """Refuse: see the module docstring."""
    raise RuntimeError(EXPORT_UNSUPPORTED)
