"""DataParallel without GPUs: as in torch, it wraps ``module`` and calls it directly."""
from __future__ import annotations

from typing import Any

from ..modules.module import Module


class DataParallel(Module):
    """``DataParallel(module)``: with no CUDA devices torch runs ``module`` as is.

    The wrapper keeps ``module`` as its child, so its state dict keys start with
    ``module.`` exactly as torch's do.

    >>> import npgrad
    >>> dp = npgrad.nn.DataParallel(npgrad.nn.Linear(2, 1))
    >>> list(dp.state_dict())
    ['module.weight', 'module.bias']
    """

    def __init__(self, module: Module, device_ids: Any = None, output_device: Any = None,
                 dim: int = 0) -> None:
        super().__init__()
        self.module = module
        self.device_ids: list = []
        self.dim = dim
        self.output_device = None
        self.src_device_obj = None

    def forward(self, *inputs: Any, **kwargs: Any) -> Any:
        return self.module(*inputs, **kwargs)


def data_parallel(module: Module, inputs: Any, device_ids: Any = None, output_device: Any = None,
                  dim: int = 0, module_kwargs: Any = None) -> Any:
    """The functional form: with no devices, ``module(*inputs)``."""
    if not isinstance(inputs, tuple):
        inputs = (inputs,) if inputs is not None else ()
    return module(*inputs, **(module_kwargs or {}))
