"""Convolution layers: Conv1d, Conv2d (any padding_mode; "same"/"valid") and ConvTranspose1d/2d."""
from __future__ import annotations

import math
from typing import Any

from ... import _creation
from ..._tensor import Tensor
from .. import functional as F, init
from ..parameter import Parameter
from .module import Module, _ntuple

__all__ = ["Conv1d", "Conv2d", "ConvTranspose1d", "ConvTranspose2d"]

_VALID_PADDING_MODES = {"zeros", "reflect", "replicate", "circular"}


class _ConvNd(Module):
    # the layers define their own __init__ (torch's signatures), so that Python names the
    # layer when it refuses an argument ("Conv2d.__init__() got an unexpected keyword ...")
    _n = 0

    def __init__(self, in_channels: int, out_channels: int, kernel_size: Any, stride: Any = 1,
                 padding: Any = 0, dilation: Any = 1, groups: int = 1, bias: bool = True,
                 padding_mode: str = "zeros", device: Any = None, dtype: Any = None,
                 transposed: bool = False, output_padding: Any = 0) -> None:
        super().__init__()
        tup = _ntuple(self._n)
        if groups <= 0:
            raise ValueError("groups must be a positive integer")
        if in_channels % groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        if out_channels % groups != 0:
            raise ValueError("out_channels must be divisible by groups")
        kernel_size, stride, dilation = tup(kernel_size), tup(stride), tup(dilation)
        if isinstance(padding, str):
            valid = {"same", "valid"}
            if padding not in valid:
                raise ValueError(f"Invalid padding string {padding!r}, should be one of {valid}")
            if padding == "same" and any(s != 1 for s in stride):
                raise ValueError("padding='same' is not supported for strided convolutions")
        else:
            padding = tup(padding)
        if padding_mode not in _VALID_PADDING_MODES:
            raise ValueError(f"padding_mode must be one of {_VALID_PADDING_MODES}, but got "
                             f"padding_mode='{padding_mode}'")
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.kernel_size = kernel_size
        self.stride = stride
        self.padding = padding
        self.dilation = dilation
        self.transposed = transposed
        self.output_padding = tup(output_padding)
        self.groups = groups
        self.padding_mode = padding_mode
        # the widths F.pad takes (last dim first) when padding_mode is not 'zeros'
        if isinstance(padding, str):
            self._reversed_padding_repeated_twice = [0, 0] * len(kernel_size)
            if padding == "same":
                for d, k, i in zip(dilation, kernel_size, range(len(kernel_size) - 1, -1, -1)):
                    total = d * (k - 1)
                    self._reversed_padding_repeated_twice[2 * i] = total // 2
                    self._reversed_padding_repeated_twice[2 * i + 1] = total - total // 2
        else:
            self._reversed_padding_repeated_twice = [p for p in reversed(padding) for _ in (0, 1)]
        # a transposed convolution's weight is (in, out/groups, *kernel): Note [Transposed
        # convolution] in npgrad/_ops/conv.py
        shape = ((in_channels, out_channels // groups) if transposed else
                 (out_channels, in_channels // groups))
        self.weight = Parameter(_creation.empty(shape + tuple(kernel_size), dtype=dtype))
        if bias:
            self.bias = Parameter(_creation.empty(out_channels, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            if fan_in != 0:
                bound = 1 / math.sqrt(fan_in)
                init.uniform_(self.bias, -bound, bound)

    def extra_repr(self) -> str:
        s = (f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, "
             f"stride={self.stride}")
        if self.padding != (0,) * len(self.padding):
            s += f", padding={self.padding}"
        if self.dilation != (1,) * len(self.dilation):
            s += f", dilation={self.dilation}"
        if self.output_padding != (0,) * len(self.output_padding):
            s += f", output_padding={self.output_padding}"
        if self.groups != 1:
            s += f", groups={self.groups}"
        if self.bias is None:
            s += ", bias=False"
        if self.padding_mode != "zeros":
            s += f", padding_mode={self.padding_mode}"
        return s


class Conv1d(_ConvNd):
    """1-d convolution over ``(N, C, L)`` inputs.

    >>> import npgrad as torch
    >>> torch.nn.Conv1d(2, 4, 3)
    Conv1d(2, 4, kernel_size=(3,), stride=(1,))
    """

    _n = 1

    def __init__(self, in_channels: int, out_channels: int, kernel_size: Any, stride: Any = 1,
                 padding: Any = 0, dilation: Any = 1, groups: int = 1, bias: bool = True,
                 padding_mode: str = "zeros", device: Any = None, dtype: Any = None) -> None:
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation,
                         groups, bias, padding_mode, device, dtype)

    def forward(self, input: Tensor) -> Tensor:
        if self.padding_mode != "zeros":
            padded = F.pad(input, self._reversed_padding_repeated_twice, mode=self.padding_mode)
            return F.conv1d(padded, self.weight, self.bias, self.stride, (0,), self.dilation,
                            self.groups)
        return F.conv1d(input, self.weight, self.bias, self.stride, self.padding, self.dilation,
                        self.groups)


class Conv2d(_ConvNd):
    """2-d convolution over ``(N, C, H, W)`` inputs.

    >>> import npgrad as torch
    >>> torch.nn.Conv2d(1, 8, 3, padding=1)
    Conv2d(1, 8, kernel_size=(3, 3), stride=(1, 1), padding=(1, 1))
    """

    _n = 2

    def __init__(self, in_channels: int, out_channels: int, kernel_size: Any, stride: Any = 1,
                 padding: Any = 0, dilation: Any = 1, groups: int = 1, bias: bool = True,
                 padding_mode: str = "zeros", device: Any = None, dtype: Any = None) -> None:
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation,
                         groups, bias, padding_mode, device, dtype)

    def forward(self, input: Tensor) -> Tensor:
        if self.padding_mode != "zeros":
            padded = F.pad(input, self._reversed_padding_repeated_twice, mode=self.padding_mode)
            return F.conv2d(padded, self.weight, self.bias, self.stride, (0, 0), self.dilation,
                            self.groups)
        return F.conv2d(input, self.weight, self.bias, self.stride, self.padding, self.dilation,
                        self.groups)


class _ConvTransposeNd(_ConvNd):
    def __init__(self, in_channels: int, out_channels: int, kernel_size: Any, stride: Any = 1,
                 padding: Any = 0, output_padding: Any = 0, groups: int = 1, bias: bool = True,
                 dilation: Any = 1, padding_mode: str = "zeros", device: Any = None,
                 dtype: Any = None) -> None:
        if padding_mode != "zeros":
            raise ValueError(f'Only "zeros" padding mode is supported for {type(self).__name__}')
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation,
                         groups, bias, padding_mode, device, dtype, transposed=True,
                         output_padding=output_padding)

    def _output_padding(self, input: Tensor, output_size: Any) -> tuple:
        """``output_padding``, or the one that gives ``output_size`` (checked as torch does)."""
        if output_size is None:
            return self.output_padding
        nd = self._n
        non_spatial = 2 if input.dim() == nd + 2 else 1
        output_size = list(output_size)
        if len(output_size) == non_spatial + nd:
            output_size = output_size[non_spatial:]
        if len(output_size) != nd:
            raise ValueError(f"ConvTranspose{nd}D: for {input.dim()}D input, output_size must "
                             f"have {nd} or {non_spatial + nd} elements (got "
                             f"{len(output_size)})")
        min_sizes = [(input.size(d + non_spatial) - 1) * self.stride[d] - 2 * self.padding[d]
                     + self.dilation[d] * (self.kernel_size[d] - 1) + 1 for d in range(nd)]
        max_sizes = [m + s - 1 for m, s in zip(min_sizes, self.stride)]
        for size, lo, hi in zip(output_size, min_sizes, max_sizes):
            if size < lo or size > hi:
                raise ValueError(f"requested an output size of {output_size}, but valid sizes "
                                 f"range from {min_sizes} to {max_sizes} (for an input of "
                                 f"{input.size()[non_spatial:]})")
        return tuple(size - lo for size, lo in zip(output_size, min_sizes))


class ConvTranspose1d(_ConvTransposeNd):
    """1-d transposed convolution over ``(N, C, L)`` inputs, weight ``(in, out/groups, k)``.

    >>> import npgrad as torch
    >>> torch.nn.ConvTranspose1d(2, 4, 3, stride=2)
    ConvTranspose1d(2, 4, kernel_size=(3,), stride=(2,))
    """

    _n = 1

    def __init__(self, in_channels: int, out_channels: int, kernel_size: Any, stride: Any = 1,
                 padding: Any = 0, output_padding: Any = 0, groups: int = 1, bias: bool = True,
                 dilation: Any = 1, padding_mode: str = "zeros", device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__(in_channels, out_channels, kernel_size, stride, padding,
                         output_padding, groups, bias, dilation, padding_mode, device, dtype)

    def forward(self, input: Tensor, output_size: Any = None) -> Tensor:
        return F.conv_transpose1d(input, self.weight, self.bias, self.stride, self.padding,
                                  self._output_padding(input, output_size), self.groups,
                                  self.dilation)


class ConvTranspose2d(_ConvTransposeNd):
    """2-d transposed convolution over ``(N, C, H, W)`` inputs, weight ``(in, out/groups, kh, kw)``.

    >>> import npgrad as torch
    >>> torch.nn.ConvTranspose2d(8, 4, 2, stride=2)
    ConvTranspose2d(8, 4, kernel_size=(2, 2), stride=(2, 2))
    """

    _n = 2

    def __init__(self, in_channels: int, out_channels: int, kernel_size: Any, stride: Any = 1,
                 padding: Any = 0, output_padding: Any = 0, groups: int = 1, bias: bool = True,
                 dilation: Any = 1, padding_mode: str = "zeros", device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__(in_channels, out_channels, kernel_size, stride, padding,
                         output_padding, groups, bias, dilation, padding_mode, device, dtype)

    def forward(self, input: Tensor, output_size: Any = None) -> Tensor:
        return F.conv_transpose2d(input, self.weight, self.bias, self.stride, self.padding,
                                  self._output_padding(input, output_size), self.groups,
                                  self.dilation)
