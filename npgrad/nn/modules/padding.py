"""Padding layers: constant (and zero), reflection, replication and circular padding, 1-3 dims."""
from __future__ import annotations

from typing import Any

from ..._tensor import Tensor
from .. import functional as F
from .module import Module, _ntuple

__all__ = ["ConstantPad1d", "ConstantPad2d", "ConstantPad3d", "ZeroPad1d", "ZeroPad2d",
           "ZeroPad3d", "ReflectionPad1d", "ReflectionPad2d", "ReflectionPad3d",
           "ReplicationPad1d", "ReplicationPad2d", "ReplicationPad3d", "CircularPad1d",
           "CircularPad2d", "CircularPad3d"]


class _PadNd(Module):
    # each layer defines its own __init__, as torch's do: Python names the class whose
    # __init__ refuses an argument (``ReflectionPad1d.__init__() got an unexpected ...``)
    _n = 0  # padded dims
    _mode = "constant"

    def __init__(self, padding: Any) -> None:
        super().__init__()
        self.padding = _ntuple(2 * self._n)(padding)

    def forward(self, input: Tensor) -> Tensor:
        return F.pad(input, self.padding, self._mode)

    def extra_repr(self) -> str:
        return f"{self.padding}"


class _ConstantPadNd(_PadNd):
    def __init__(self, padding: Any, value: float) -> None:
        super().__init__(padding)
        self.value = value

    def forward(self, input: Tensor) -> Tensor:
        return F.pad(input, self.padding, "constant", self.value)

    def extra_repr(self) -> str:
        return f"padding={self.padding}, value={self.value}"


class _ZeroPadNd(_ConstantPadNd):
    """Put before a ConstantPad{1,2,3}d base: the value is always zero, and not in the repr."""

    def __init__(self, padding: Any) -> None:
        super().__init__(padding, 0.0)

    def extra_repr(self) -> str:
        return f"{self.padding}"


class _ReflectionPadNd(_PadNd):
    _mode = "reflect"


class _ReplicationPadNd(_PadNd):
    _mode = "replicate"


class _CircularPadNd(_PadNd):
    _mode = "circular"

    def forward(self, input: Tensor) -> Tensor:
        # torch's circular layers check the rank themselves (a ValueError), before F.pad
        ndim = input.dim()
        if ndim not in (self._n + 1, self._n + 2):
            raise ValueError(f"expected {self._n + 1}D or {self._n + 2}D input "
                             f"(got {ndim}D input)")
        return F.pad(input, self.padding, self._mode)


class ConstantPad1d(_ConstantPadNd):
    """Pad the last dim with ``value`` (``padding``: an int or (left, right))."""

    _n = 1

    def __init__(self, padding: Any, value: float) -> None:
        super().__init__(padding, value)


class ConstantPad2d(_ConstantPadNd):
    """Pad the last two dims with ``value`` (``padding``: an int or (left, right, top, bottom))."""

    _n = 2

    def __init__(self, padding: Any, value: float) -> None:
        super().__init__(padding, value)


class ConstantPad3d(_ConstantPadNd):
    """Pad the last three dims with ``value``."""

    _n = 3

    def __init__(self, padding: Any, value: float) -> None:
        super().__init__(padding, value)


class ZeroPad1d(_ZeroPadNd, ConstantPad1d):
    """Pad the last dim with zeros."""

    def __init__(self, padding: Any) -> None:
        super().__init__(padding)


class ZeroPad2d(_ZeroPadNd, ConstantPad2d):
    """Pad the last two dims with zeros.

    >>> import npgrad as torch
    >>> torch.nn.ZeroPad2d((1, 1, 2, 0))
    ZeroPad2d((1, 1, 2, 0))
    """

    def __init__(self, padding: Any) -> None:
        super().__init__(padding)


class ZeroPad3d(_ZeroPadNd, ConstantPad3d):
    """Pad the last three dims with zeros."""

    def __init__(self, padding: Any) -> None:
        super().__init__(padding)


class ReflectionPad1d(_ReflectionPadNd):
    """Pad the last dim with its reflection (the edge not repeated)."""

    _n = 1

    def __init__(self, padding: Any) -> None:
        super().__init__(padding)


class ReflectionPad2d(_ReflectionPadNd):
    """Pad the last two dims with their reflection (the edge not repeated)."""

    _n = 2

    def __init__(self, padding: Any) -> None:
        super().__init__(padding)


class ReflectionPad3d(_ReflectionPadNd):
    """Pad the last three dims with their reflection (the edge not repeated)."""

    _n = 3

    def __init__(self, padding: Any) -> None:
        super().__init__(padding)


class ReplicationPad1d(_ReplicationPadNd):
    """Pad the last dim by repeating its edge values."""

    _n = 1

    def __init__(self, padding: Any) -> None:
        super().__init__(padding)


class ReplicationPad2d(_ReplicationPadNd):
    """Pad the last two dims by repeating their edge values."""

    _n = 2

    def __init__(self, padding: Any) -> None:
        super().__init__(padding)


class ReplicationPad3d(_ReplicationPadNd):
    """Pad the last three dims by repeating their edge values."""

    _n = 3

    def __init__(self, padding: Any) -> None:
        super().__init__(padding)


class CircularPad1d(_CircularPadNd):
    """Pad the last dim by wrapping around (the other end's values)."""

    _n = 1

    def __init__(self, padding: Any) -> None:
        super().__init__(padding)


class CircularPad2d(_CircularPadNd):
    """Pad the last two dims by wrapping around (the other end's values)."""

    _n = 2

    def __init__(self, padding: Any) -> None:
        super().__init__(padding)


class CircularPad3d(_CircularPadNd):
    """Pad the last three dims by wrapping around (the other end's values)."""

    _n = 3

    def __init__(self, padding: Any) -> None:
        super().__init__(padding)
