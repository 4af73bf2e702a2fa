"""DistributedDataParallel over npgrad's one-process group (Note [One-process distributed])."""
from __future__ import annotations

from typing import Any

from ... import distributed as dist
from ..modules.module import Module


class DistributedDataParallel(Module):
    """Wraps ``module`` for data-parallel training over the default process group.

    Like torch's, it needs ``init_process_group`` first (ValueError otherwise).
    Over npgrad's world of one process, averaging gradients across ranks leaves
    them as they are, so ``forward`` is ``module``'s.
    """

    def __init__(self, module: Module, device_ids: Any = None, output_device: Any = None,
                 dim: int = 0, broadcast_buffers: bool = True, process_group: Any = None,
                 bucket_cap_mb: Any = None, find_unused_parameters: bool = False,
                 **kwargs: Any) -> None:
        dist.get_world_size()  # raises torch's ValueError before init_process_group
        super().__init__()
        self.module = module
        self.device_ids = device_ids
        self.dim = dim
        self.broadcast_buffers = broadcast_buffers
        self.find_unused_parameters = find_unused_parameters

    def forward(self, *inputs: Any, **kwargs: Any) -> Any:
        return self.module(*inputs, **kwargs)
