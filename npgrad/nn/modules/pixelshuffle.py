"""Layers that rearrange pixels: PixelShuffle, PixelUnshuffle, and Unfold/Fold (im2col/col2im)."""
from __future__ import annotations

from typing import Any

from ..._tensor import Tensor
from .. import functional as F
from .module import Module

__all__ = ["PixelShuffle", "PixelUnshuffle", "Unfold", "Fold"]


class PixelShuffle(Module):
    """``(*, C*r*r, H, W) -> (*, C, H*r, W*r)``.

    >>> import npgrad as torch
    >>> torch.nn.PixelShuffle(2)(torch.arange(4.).view(1, 4, 1, 1))
    tensor([[[[0., 1.],
              [2., 3.]]]])
    """

    def __init__(self, upscale_factor: int) -> None:
        super().__init__()
        self.upscale_factor = upscale_factor

    def forward(self, input: Tensor) -> Tensor:
        return F.pixel_shuffle(input, self.upscale_factor)

    def extra_repr(self) -> str:
        return f"upscale_factor={self.upscale_factor}"


class PixelUnshuffle(Module):
    """``(*, C, H*r, W*r) -> (*, C*r*r, H, W)``, the inverse of PixelShuffle."""

    def __init__(self, downscale_factor: int) -> None:
        super().__init__()
        self.downscale_factor = downscale_factor

    def forward(self, input: Tensor) -> Tensor:
        return F.pixel_unshuffle(input, self.downscale_factor)

    def extra_repr(self) -> str:
        return f"downscale_factor={self.downscale_factor}"


class Unfold(Module):
    """Sliding blocks of ``(N, C, H, W)`` as columns ``(N, C*kh*kw, L)``."""

    def __init__(self, kernel_size: Any, dilation: Any = 1, padding: Any = 0,
                 stride: Any = 1) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.dilation = dilation
        self.padding = padding
        self.stride = stride

    def forward(self, input: Tensor) -> Tensor:
        return F.unfold(input, self.kernel_size, self.dilation, self.padding, self.stride)

    def extra_repr(self) -> str:
        return (f"kernel_size={self.kernel_size}, dilation={self.dilation}, "
                f"padding={self.padding}, stride={self.stride}")


class Fold(Module):
    """Columns ``(N, C*kh*kw, L)`` back into ``(N, C, *output_size)``, summing overlaps."""

    def __init__(self, output_size: Any, kernel_size: Any, dilation: Any = 1, padding: Any = 0,
                 stride: Any = 1) -> None:
        super().__init__()
        self.output_size = output_size
        self.kernel_size = kernel_size
        self.dilation = dilation
        self.padding = padding
        self.stride = stride

    def forward(self, input: Tensor) -> Tensor:
        return F.fold(input, self.output_size, self.kernel_size, self.dilation, self.padding,
                      self.stride)

    def extra_repr(self) -> str:
        return (f"output_size={self.output_size}, kernel_size={self.kernel_size}, "
                f"dilation={self.dilation}, padding={self.padding}, stride={self.stride}")
