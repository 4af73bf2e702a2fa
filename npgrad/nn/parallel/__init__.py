"""npgrad.nn.parallel: DataParallel and DistributedDataParallel as they behave on a CPU-only run."""
from __future__ import annotations

from .data_parallel import DataParallel, data_parallel
from .distributed import DistributedDataParallel

__all__ = ["DataParallel", "DistributedDataParallel", "data_parallel"]
