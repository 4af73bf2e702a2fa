"""Op-table rows: vision layers (transposed convolution, resampling, pooling) (see tests/op_table.py for what a row is and which checks it gets)."""
from __future__ import annotations

from op_table import OpRow  # noqa: F401

ROWS: list[OpRow] = []
