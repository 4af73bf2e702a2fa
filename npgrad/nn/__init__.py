"""npgrad.nn: neural-network building blocks (functional ops for now)."""
from __future__ import annotations

from . import functional  # noqa: F401
