"""DLPack exchange: tensors shared with NumPy, torch and any other DLPack producer, no copies.

Note [DLPack through NumPy]
A tensor's memory is a NumPy array, and NumPy speaks DLPack (``__dlpack__``,
``__dlpack_device__``, ``np.from_dlpack``), so npgrad hands both directions to
it: ``Tensor.__dlpack__`` exports the array (refusing a tensor that requires
grad with torch's BufferError), and ``from_dlpack`` imports through
``np.from_dlpack`` and wraps the result without a copy.  A bare capsule (what
``to_dlpack`` returns, torch's legacy interface) is wrapped in a small producer
object first, since NumPy accepts only objects with ``__dlpack__``.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from .._dtype import FROM_NUMPY
from .._tensor import Tensor
from .._tensor_base import _make

__all__ = ["from_dlpack", "to_dlpack"]


class _Capsule:
    """A DLPack capsule as a producer object (``__dlpack__`` hands the capsule over once)."""

    def __init__(self, capsule: Any) -> None:
        self.capsule = capsule

    def __dlpack__(self, **kwargs: Any) -> Any:
        capsule, self.capsule = self.capsule, None
        if capsule is None:
            raise BufferError("this DLPack capsule has already been consumed")
        return capsule

    def __dlpack_device__(self) -> tuple:
        return (1, 0)  # a capsule that is not CPU memory fails in NumPy with its own error


def from_dlpack(ext_tensor: Any) -> Tensor:
    """A tensor sharing the memory of ``ext_tensor`` (anything with ``__dlpack__``, or a capsule).

    >>> import numpy as np, npgrad
    >>> a = np.arange(3, dtype=np.float32)
    >>> t = npgrad.from_dlpack(a)
    >>> a[0] = 7.
    >>> t
    tensor([7., 1., 2.])
    """
    producer = ext_tensor if hasattr(ext_tensor, "__dlpack__") else _Capsule(ext_tensor)
    if type(ext_tensor).__name__ != "PyCapsule" and producer is not ext_tensor:
        raise TypeError(f"from_dlpack expects an object with __dlpack__ or a DLPack capsule, "
                        f"got {type(ext_tensor).__name__}")
    # An ndarray is its own memory; NumPy < 2 would give a read-only view of it through DLPack.
    arr = ext_tensor if type(ext_tensor) is np.ndarray else np.from_dlpack(producer)
    if arr.dtype not in FROM_NUMPY:
        raise TypeError(f"npgrad does not support the DLPack dtype {arr.dtype}")
    return _make(Tensor, arr, None, False, None)


def to_dlpack(tensor: Tensor) -> Any:
    """A DLPack capsule of ``tensor``'s memory (torch.utils.dlpack's legacy interface)."""
    return tensor.__dlpack__()
