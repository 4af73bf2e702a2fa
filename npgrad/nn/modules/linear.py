"""Linear layers: Identity, Linear (``y = x W^T + b``) and Bilinear (``y = x1 W x2 + b``)."""
from __future__ import annotations

import math
from typing import Any

from ... import _creation
from ..._tensor import Tensor
from .. import functional as F, init
from ..parameter import Parameter
from .module import Module

__all__ = ["Identity", "Linear", "Bilinear"]


class Identity(Module):
    """Returns its input unchanged; accepts and ignores any constructor arguments."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__()

    def forward(self, input: Tensor) -> Tensor:
        return input


class Linear(Module):
    """``y = x W^T + b`` with ``W`` of shape ``(out_features, in_features)``.

    Initialised as torch does: ``kaiming_uniform_(W, a=sqrt(5))`` and ``b`` uniform in
    ``±1/sqrt(in_features)``.

    >>> import npgrad as torch
    >>> torch.nn.Linear(4, 3)
    Linear(in_features=4, out_features=3, bias=True)
    """

    def __init__(self, in_features: int, out_features: int, bias: bool = True,
                 device: Any = None, dtype: Any = None) -> None:
        super().__init__()
        self.in_features = in_features
        self.out_features = out_features
        self.weight = Parameter(_creation.empty((out_features, in_features), dtype=dtype))
        if bias:
            self.bias = Parameter(_creation.empty(out_features, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input: Tensor) -> Tensor:
        return F.linear(input, self.weight, self.bias)

    def extra_repr(self) -> str:
        return (f"in_features={self.in_features}, out_features={self.out_features}, "
                f"bias={self.bias is not None}")


class Bilinear(Module):
    """``y[..., o] = x1 W[o] x2 + b[o]`` with ``W`` of shape ``(out, in1, in2)``.

    Initialised as torch does: ``W`` and ``b`` uniform in ``±1/sqrt(in1_features)``.

    >>> import npgrad as torch
    >>> torch.nn.Bilinear(2, 3, 4)
    Bilinear(in1_features=2, in2_features=3, out_features=4, bias=True)
    """

    def __init__(self, in1_features: int, in2_features: int, out_features: int,
                 bias: bool = True, device: Any = None, dtype: Any = None) -> None:
        super().__init__()
        self.in1_features = in1_features
        self.in2_features = in2_features
        self.out_features = out_features
        self.weight = Parameter(_creation.empty((out_features, in1_features, in2_features),
                                                dtype=dtype))
        if bias:
            self.bias = Parameter(_creation.empty(out_features, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        if self.in1_features <= 0:
            raise ValueError(f"in1_features must be > 0, but got (in1_features="
                             f"{self.in1_features})")
        bound = 1 / math.sqrt(self.weight.size(1))
        init.uniform_(self.weight, -bound, bound)
        if self.bias is not None:
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input1: Tensor, input2: Tensor) -> Tensor:
        return F.bilinear(input1, input2, self.weight, self.bias)

    def extra_repr(self) -> str:
        return (f"in1_features={self.in1_features}, in2_features={self.in2_features}, "
                f"out_features={self.out_features}, bias={self.bias is not None}")
