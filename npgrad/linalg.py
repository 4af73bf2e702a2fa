"""npgrad.linalg: torch.linalg's names for the linear-algebra ops npgrad has."""
from __future__ import annotations

from ._ops.linalg import linalg_cross as cross  # noqa: F401
from ._ops.reduction import vector_norm  # noqa: F401

__all__ = ["cross", "vector_norm"]
