"""Pickling for torch's file formats: npgrad tensors become torch's storages and rebuild calls.

Note [Pickling with torch's names]
``torch.save`` pickles a tensor as ``_rebuild_tensor_v2(storage, offset, size,
stride, requires_grad, OrderedDict())`` (v3 with a dtype for dtypes without a
legacy storage class), where the storage is a persistent id ``('storage',
torch.FloatStorage, key, 'cpu', numel)`` whose bytes go to ``data/<key>``.
Parameters wrap that in ``_rebuild_parameter(tensor, requires_grad,
OrderedDict())``; dtypes, ``Size`` and ``device`` are torch's globals.  The
pickler is Python's own (``pickle._Pickler``, protocol 2 by default as torch's),
with a ``reducer_override`` for npgrad's objects and a dispatch entry that
writes a ``TorchGlobal`` as a GLOBAL opcode by name -- the C pickler would
insist on importing the name, and torch need not be installed.  Everything
else (user classes, whole Modules under ``weights_only=False``) pickles as
Python pickles it, under its own (npgrad) names.  Storages are found by
``npgrad._storage.locate``: views of one root array share one storage and keep
their offsets and strides, as torch's do.
"""
from __future__ import annotations

import pickle
from collections import OrderedDict
from typing import Any, ClassVar

import numpy as np

from .. import _dtype
from .._device import device as _device
from .._size import Size
from .._storage import flat_bytes, locate
from .._tensor import Tensor
from . import _torch_names as names

__all__ = ["StorageRef", "TorchPickler", "dumps"]


class StorageRef:
    """One storage being saved: its key, flat bytes and the dtype its tensors read it as."""

    __slots__ = ("data", "dtype", "key", "legacy")

    def __init__(self, key: str, data: np.ndarray, dtype: _dtype.dtype, legacy: bool) -> None:
        self.key = key
        self.data = data  # flat uint8, sharing the root's memory
        self.dtype = dtype
        self.legacy = legacy

    def persistent_id(self) -> tuple:
        storage_type = names.storage_global(self.dtype)
        if storage_type is names.UNTYPED_STORAGE:
            numel = self.data.nbytes
        else:
            numel = self.data.nbytes // self.dtype.itemsize
        pid: tuple = ("storage", storage_type, self.key, "cpu", numel)
        return pid + (None,) if self.legacy else pid


class _ParameterData:
    """The plain-tensor half of a pickled Parameter (torch pickles it requires_grad=False)."""

    __slots__ = ("tensor",)

    def __init__(self, tensor: Tensor) -> None:
        self.tensor = tensor


class TorchPickler(pickle._Pickler):  # type: ignore[name-defined,misc]
    """A pickler writing npgrad objects under torch's names (Note [Pickling with torch's names])."""

    dispatch: ClassVar[dict[type, Any]] = dict(pickle._Pickler.dispatch)  # type: ignore[attr-defined]

    def __init__(self, file: Any, protocol: int, *, legacy: bool = False) -> None:
        super().__init__(file, protocol=protocol)
        self.legacy = legacy
        self.storages: dict[int, StorageRef] = {}  # id(root) -> its StorageRef
        self._roots: list[np.ndarray] = []  # keeps roots alive while ids are keys
        self._data_ptrs: dict[int, _dtype.dtype] = {}

    def persistent_id(self, obj: Any) -> Any:
        if type(obj) is StorageRef:
            return obj.persistent_id()
        return None

    def storage_for(self, arr: np.ndarray, d: _dtype.dtype) -> tuple[StorageRef, int, tuple]:
        place = locate(arr)
        ref = self.storages.get(id(place.root))
        if ref is None:
            data = flat_bytes(place.root)
            ptr = data.__array_interface__["data"][0] if data.nbytes else 0
            if ptr:
                seen = self._data_ptrs.setdefault(ptr, d)
                if seen is not d:
                    raise RuntimeError("Cannot save multiple tensors or storages that view the "
                                       "same data as different types")
            ref = StorageRef(str(len(self.storages)), data, d, self.legacy)
            self.storages[id(place.root)] = ref
            self._roots.append(place.root)
        elif ref.dtype is not d:
            raise RuntimeError("Cannot save multiple tensors or storages that view the same "
                               "data as different types")
        return ref, place.offset, place.strides

    def _tensor_reduce(self, t: Tensor, requires_grad: bool) -> tuple:
        d = t.dtype
        ref, offset, strides = self.storage_for(t._data, d)
        size = tuple(t._data.shape)
        hooks: OrderedDict = OrderedDict()
        if names.storage_global(d) is names.UNTYPED_STORAGE:
            return (names.REBUILD_TENSOR_V3,
                    (ref, offset, size, strides, requires_grad, hooks, names.dtype_global(d)))
        return (names.REBUILD_TENSOR_V2, (ref, offset, size, strides, requires_grad, hooks))

    def reducer_override(self, obj: Any) -> Any:
        if isinstance(obj, Tensor):
            from ..nn.parameter import Parameter  # on first use: npgrad.nn is large

            if isinstance(obj, Parameter):
                return (names.REBUILD_PARAMETER,
                        (_ParameterData(obj), obj._requires_grad, OrderedDict()))
            return self._tensor_reduce(obj, obj._requires_grad)
        if type(obj) is _ParameterData:
            return self._tensor_reduce(obj.tensor, False)
        if type(obj) is Size:
            return (names.SIZE, (tuple(obj),))
        if type(obj) is _device:
            return (names.DEVICE, (str(obj),))
        return NotImplemented

    def save_torch_global(self, obj: names.TorchGlobal) -> None:
        pickler: Any = self  # write and memoize are pickle._Pickler's, untyped in typeshed
        pickler.write(pickle.GLOBAL + obj.module.encode("utf-8") + b"\n" +
                      obj.name.encode("utf-8") + b"\n")
        pickler.memoize(obj)

    def save_dtype(self, obj: _dtype.dtype) -> None:
        pickler: Any = self
        pickler.save(names.dtype_global(obj))

    dispatch[names.TorchGlobal] = save_torch_global
    dispatch[_dtype.dtype] = save_dtype


def dumps(obj: Any, protocol: int, *, legacy: bool = False) -> tuple[bytes, list[StorageRef]]:
    """The pickle of ``obj`` and the storages it refers to, in key order."""
    import io

    buf = io.BytesIO()
    pickler = TorchPickler(buf, protocol, legacy=legacy)
    pickler.dump(obj)
    return buf.getvalue(), list(pickler.storages.values())
