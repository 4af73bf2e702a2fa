"""What torch's pickled names mean to npgrad: storages, their types and the tensor rebuilds.

The unpicklers (weights-only and full) map each torch global to an object
here: ``torch.FloatStorage`` to a ``StorageType``, ``torch._utils._rebuild_tensor_v2``
to ``rebuild_tensor_v2``, and so on (Note [Torch's names in npgrad's pickles]).
A ``Storage`` is a flat uint8 NumPy array plus the dtype it was saved as;
tensors rebuilt from one storage share its memory (Note [Storages as root
arrays]).  ``rebuild_pickled`` is the other direction's inverse: what
``pickle.dumps(tensor)`` in npgrad unpickles through.
"""
from __future__ import annotations

import functools
from collections import OrderedDict
from typing import Any

import numpy as np

from .. import _dtype
from .._device import device as _device
from .._size import Size
from .._storage import view_into
from .._tensor import Tensor
from .._tensor_base import _make
from . import _torch_names as names

__all__ = [
    "Storage",
    "StorageType",
    "rebuild_from_type_v2",
    "rebuild_parameter",
    "rebuild_parameter_with_state",
    "rebuild_pickled",
    "rebuild_tensor",
    "rebuild_tensor_v2",
    "rebuild_tensor_v3",
    "torch_globals",
]


class Storage:
    """A loaded storage: flat bytes and the dtype its file gave it, on the CPU."""

    __slots__ = ("data", "dtype")

    def __init__(self, data: np.ndarray, dtype: _dtype.dtype | None) -> None:
        self.data = data
        self.dtype = dtype

    @property
    def device(self) -> _device:
        return _device("cpu")

    def nbytes(self) -> int:
        return int(self.data.nbytes)

    def size(self) -> int:
        return self.nbytes() if self.dtype is None else self.nbytes() // self.dtype.itemsize

    def cpu(self) -> Storage:
        return self

    def __repr__(self) -> str:
        return f"<npgrad storage of {self.size()} {self.dtype} on cpu>"


class StorageType:
    """``torch.FloatStorage`` and kin as loaded: says which dtype a storage holds."""

    __slots__ = ("dtype", "name")

    def __init__(self, name: str) -> None:
        self.name = name
        self.dtype = None if name == "UntypedStorage" else names.dtype_by_storage_name(name)

    def __repr__(self) -> str:
        return f"StorageType(dtype={self.dtype})"


def _unsupported(what: str) -> Any:
    def refuse(*args: Any) -> Any:
        raise RuntimeError(f"npgrad cannot load {what}: npgrad has dense CPU tensors only")

    refuse.__name__ = refuse.__qualname__ = f"unsupported_{what.replace(' ', '_')}"
    return refuse


def rebuild_tensor(storage: Storage, storage_offset: int, size: Any, stride: Any,
                   dtype: _dtype.dtype | None = None) -> Tensor:
    d = dtype if dtype is not None else storage.dtype
    if d is None:
        raise RuntimeError("npgrad cannot load a tensor over an untyped storage without a dtype")
    arr = view_into(storage.data, d.np_dtype, int(storage_offset), size, stride)
    return _make(Tensor, arr, None, False, None)


def rebuild_tensor_v2(storage: Storage, storage_offset: int, size: Any, stride: Any,
                      requires_grad: bool, backward_hooks: Any, metadata: Any = None) -> Tensor:
    t = rebuild_tensor(storage, storage_offset, size, stride)
    if metadata:
        raise RuntimeError(f"npgrad cannot load a tensor with conj/neg bits set ({metadata})")
    t.requires_grad = bool(requires_grad)
    return t


def rebuild_tensor_v3(storage: Storage, storage_offset: int, size: Any, stride: Any,
                      requires_grad: bool, backward_hooks: Any, dtype: Any,
                      metadata: Any = None) -> Tensor:
    if not isinstance(dtype, _dtype.dtype):
        raise TypeError(f"npgrad has no dtype {dtype}")
    t = rebuild_tensor(storage, storage_offset, size, stride, dtype)
    t.requires_grad = bool(requires_grad)
    return t


def rebuild_parameter(data: Tensor, requires_grad: bool, backward_hooks: Any) -> Any:
    from ..nn.parameter import Parameter  # on first use: npgrad.nn is large

    return Parameter(data, requires_grad)


def rebuild_parameter_with_state(data: Tensor, requires_grad: bool, backward_hooks: Any,
                                 state: Any) -> Any:
    param = rebuild_parameter(data, requires_grad, backward_hooks)
    if state:
        raise RuntimeError("npgrad cannot load a Parameter subclass with extra state")
    return param


def rebuild_from_type_v2(func: Any, new_type: Any, args: Any, state: Any) -> Any:
    ret = func(*args)
    if state:
        raise RuntimeError(f"npgrad cannot load a tensor subclass ({new_type}) with extra state")
    return ret


def get_layout(name: str) -> str:
    return name


def _dtype_or_refusal(name: str) -> Any:
    d = names.dtype_by_name(name)
    return d if d is not None else _UnknownDtype(name)


class _UnknownDtype:
    """A torch dtype npgrad lacks: loading stops with a clear error where a tensor needs it."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"torch.{self.name}"


@functools.lru_cache(maxsize=1)
def torch_globals() -> dict[str, Any]:
    """Torch's pickled global names -> npgrad's objects (what both unpicklers resolve).

    Built once; callers that add to it copy it first.
    """
    from ..nn.parameter import Parameter  # on first use: npgrad.nn is large

    table: dict[str, Any] = {
        "collections.OrderedDict": OrderedDict,
        "torch.nn.parameter.Parameter": Parameter,
        "torch.serialization._get_layout": get_layout,
        "torch.Size": Size,
        "torch.Tensor": Tensor,
        "torch.device": _device,
        "torch._utils._rebuild_tensor": rebuild_tensor,
        "torch._utils._rebuild_tensor_v2": rebuild_tensor_v2,
        "torch._utils._rebuild_tensor_v3": rebuild_tensor_v3,
        "torch._utils._rebuild_parameter": rebuild_parameter,
        "torch._utils._rebuild_parameter_with_state": rebuild_parameter_with_state,
        "torch._tensor._rebuild_from_type_v2": rebuild_from_type_v2,
        "torch.storage.UntypedStorage": StorageType("UntypedStorage"),
    }
    for what in ("qtensor", "sparse_tensor", "meta_tensor_no_storage", "nested_tensor",
                 "wrapper_subclass", "device_tensor_from_numpy",
                 "device_tensor_from_cpu_tensor"):
        table[f"torch._utils._rebuild_{what}"] = _unsupported(what.replace("_", " "))
    for name in names.LEGACY_STORAGE_NAMES:
        table[f"torch.{name}"] = StorageType(name)
    for name in names.all_dtype_names():
        table[f"torch.{name}"] = _dtype_or_refusal(name)
    return table


def rebuild_pickled(cls: type, data: np.ndarray, requires_grad: bool) -> Tensor:
    """The inverse of ``Tensor.__reduce_ex__``: a leaf of ``cls`` over ``data``."""
    from ..nn.parameter import Parameter  # on first use: npgrad.nn is large

    if issubclass(cls, Parameter):
        return cls(_make(Tensor, data, None, False, None), requires_grad)
    return _make(cls, data, None, requires_grad, None)
