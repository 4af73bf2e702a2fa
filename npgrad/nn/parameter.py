"""Parameter and Buffer: the tensors a Module registers as its state."""
from __future__ import annotations

import weakref
from typing import Any

import numpy as np

from .. import _dtype
from .._storage import deepcopy_array
from .._tensor import Tensor
from .._tensor_base import INFERENCE_COUNTER, _make, version_counter


class Parameter(Tensor):
    """A leaf tensor that a Module registers as a parameter when assigned as an attribute.

    It shares the data (and the version counter) of the tensor it is built from
    and requires grad by default, also when built under ``no_grad``.

    >>> import npgrad as torch
    >>> torch.nn.Parameter(torch.ones(2))
    Parameter containing:
    tensor([1., 1.], requires_grad=True)
    """

    __slots__ = ()

    def __new__(cls, data: Tensor | None = None, requires_grad: bool = True) -> Parameter:
        if data is None:
            data = _make(Tensor, np.empty((0,), dtype=_dtype.get_default_dtype().np_dtype),
                         None, False, None)
        requires_grad = bool(requires_grad)
        if requires_grad and data._data.dtype.kind not in "fc":
            raise RuntimeError(
                "Only Tensors of floating point and complex dtype can require gradients")
        vc = data._vc if data._vc is INFERENCE_COUNTER else version_counter(data)
        return _make(cls, data._data, None, requires_grad, vc)

    def __init__(self, data: Tensor | None = None, requires_grad: bool = True) -> None:
        pass

    def __repr__(self, *, tensor_contents: Any = None) -> str:
        return "Parameter containing:\n" + super().__repr__()

    __str__ = __repr__

    def __deepcopy__(self, memo: dict) -> Parameter:
        if id(self) in memo:
            return memo[id(self)]
        data = _make(Tensor, deepcopy_array(self._data, memo), None, False, None)
        new = type(self)(data, self._requires_grad)
        if self._grad is not None:
            new._grad = self._grad.__deepcopy__(memo)
        memo[id(self)] = new
        return new


# Note [Buffer marks]
# ``Buffer(t)`` returns a plain Tensor, as torch's does; the tensor is marked so that
# assigning it to a Module attribute registers it as a buffer (persistent or not).
# Tensor has fixed slots, so the mark lives here, keyed by id and checked by identity.
_BUFFER_MARKS: dict = {}


class _BufferMeta(type):
    def __instancecheck__(cls, instance: Any) -> bool:
        return buffer_persistence(instance) is not None


class Buffer(metaclass=_BufferMeta):
    """Marks a tensor as a Module buffer: ``module.stats = nn.Buffer(torch.zeros(3))``."""

    def __new__(cls, data: Tensor | None = None, *, persistent: bool = True) -> Any:  # type: ignore[misc]
        if data is None:
            data = _make(Tensor, np.empty((0,), dtype=_dtype.get_default_dtype().np_dtype),
                         None, False, None)
        key = id(data)
        _BUFFER_MARKS[key] = (weakref.ref(data, lambda _r, k=key: _BUFFER_MARKS.pop(k, None)),
                              bool(persistent))
        return data


def buffer_persistence(t: Any) -> bool | None:
    """``persistent`` of a tensor made by ``Buffer``, or None for any other object."""
    entry = _BUFFER_MARKS.get(id(t))
    if entry is None or entry[0]() is not t:
        return None
    return entry[1]


def unmark_buffer(t: Any) -> None:
    entry = _BUFFER_MARKS.get(id(t))
    if entry is not None and entry[0]() is t:
        del _BUFFER_MARKS[id(t)]
