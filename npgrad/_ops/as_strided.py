"""``as_strided`` and ``as_strided_``: any view of a tensor's storage, with its gradient.

Note [as_strided addresses the storage]
As torch's, ``x.as_strided(size, stride, storage_offset)`` describes the view
in elements of ``x``'s *storage* (``untyped_storage()``), not of ``x``: the
offset defaults to ``x.storage_offset()`` and the strides may reach any element
of the storage.  The result is a NumPy view over the same root buffer
(Note [Storages as root arrays]), so it shares memory and the version counter.

The gradient is torch's ``as_strided_backward``: the output's gradient is
scattered (added) into a zero storage at the output's element positions, and
the input's gradient is gathered from that storage at the input's positions.
When the input itself aliases memory (an ``expand``), each storage element's
gradient is divided by the number of input elements that read it, so that the
chain back through the aliasing view sums to the right value.  That map is
linear, ``gather_in(scale * scatter_out(g))``, and its adjoint is the same map
with the two index sets swapped: one node class serves the op and all its
higher derivatives.  The in-place ``as_strided_`` restrides the tensor itself
and takes the node as ``AsStridedBackward1`` (Note [In-place view ops]).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from .._storage import flat_bytes, locate
from .._vmap_mode import VMAP
if TYPE_CHECKING:
    from .._tensor import Tensor
else:  # Note [Tensor base and Tensor] in npgrad._tensor_base
    from .._tensor_base import TensorBase as Tensor
from ._core import record, view_result
from .signature import signature
from .view_inplace import _restride_
from .views import AsStridedBackward0


# npgrad's vmap runs the function on slices of the batch (Note [vmap by slices] in
# npgrad.func._vmap), and a slice's storage is the whole batch's: offsets and strides into
# it would reach other samples, where torch counts them from each sample's start.
VMAP_MSG = ("npgrad: as_strided is not supported inside vmap (a sample's storage offsets would "
            "count from the batch's storage, not from the sample's)")


def _element_index(shape: tuple, strides: tuple, offset: int) -> np.ndarray:
    """The storage element each position of a (shape, strides, offset) view reads."""
    idx = np.full(shape, offset, dtype=np.int64)
    for axis, (n, s) in enumerate(zip(shape, strides)):
        step = [1] * len(shape)
        step[axis] = n
        idx = idx + (np.arange(n, dtype=np.int64) * s).reshape(step)
    return idx


def _extent(size: tuple, stride: tuple, offset: int) -> int:
    """Elements of storage a view needs (torch's computeStorageNbytes, in elements)."""
    if any(n == 0 for n in size):
        return 0
    return offset + sum((n - 1) * s for n, s in zip(size, stride)) + 1


def _shape_list(values: tuple) -> str:
    return "[" + ", ".join(str(v) for v in values) + "]"


def _check_offset(op: str, storage_offset: Any) -> None:
    if isinstance(storage_offset, bool) or not (storage_offset is None
                                                or isinstance(storage_offset, int)):
        raise TypeError(f"{op}(): argument 'storage_offset' (position 3) must be int, not "
                        f"{type(storage_offset).__name__}")


def _check(size: Any, stride: Any, storage_offset: Any) -> tuple:
    _check_offset("as_strided", storage_offset)
    size = tuple(int(n) for n in size)
    stride = tuple(int(s) for s in stride)
    if len(size) != len(stride):
        raise RuntimeError("mismatch in length of strides and shape")
    if any(s < 0 for s in stride):
        raise RuntimeError("as_strided: Negative strides are not supported at the moment, got "
                           f"strides: {_shape_list(stride)}")
    if any(n < 0 for n in size):
        raise RuntimeError("Storage size calculation overflowed with sizes="
                           f"{_shape_list(size)} and strides={_shape_list(stride)}")
    return size, stride


def _view_of_storage(input: Tensor, size: Any, stride: Any, storage_offset: Any) -> tuple:
    """The NumPy view and the (size, stride, offset) it has, after torch's checks."""
    data = input._data
    place = locate(data)
    item = data.itemsize
    size, stride = _check(size, stride, storage_offset)
    offset = place.offset if storage_offset is None else storage_offset
    if offset < 0:
        raise RuntimeError(f"Tensor: invalid storage offset {offset}")
    need = _extent(size, stride, offset) * item
    have = place.root.nbytes
    if need > have:
        raise RuntimeError(f"setStorage: sizes {_shape_list(size)}, strides {_shape_list(stride)}, "
                           f"storage offset {offset}, and itemsize {item} requiring a storage "
                           f"size of {need} are out of bounds for storage of size {have}")
    if 0 in size:
        out = np.zeros(size, dtype=data.dtype)
    else:
        raw = flat_bytes(place.root)
        out = np.ndarray(size, dtype=data.dtype, buffer=raw[:have // item * item].view(data.dtype),
                         offset=offset * item, strides=tuple(s * item for s in stride))
        if not data.flags.writeable:
            out.flags.writeable = False
    return out, size, stride, offset, place


class StorageMap:
    """``gather(dst, scale * scatter(src, x))`` over one storage of ``extent`` elements.

    The ``geometry`` of an AsStridedBackward0 made by ``as_strided`` (the node class
    is the one views rebuilt after in-place writes use, ``_ops.views``): its
    backward is this map's adjoint, the same map with ``src`` and ``dst`` swapped.
    """

    __slots__ = ("src", "dst", "scale", "extent")

    def __init__(self, src: np.ndarray, dst: np.ndarray, scale: Any, extent: int) -> None:
        self.src, self.dst, self.scale, self.extent = src, dst, scale, extent

    def backward(self, grad: Tensor) -> Tensor:
        return _strided_map(grad, StorageMap(self.dst, self.src, self.scale, self.extent))


class AsStridedBackward1(AsStridedBackward0):
    """``as_strided_``: the in-place twin (Note [In-place view ops])."""

    __slots__ = ()


def _strided_map(x: Tensor, m: StorageMap) -> Tensor:
    data = x._data
    storage = np.zeros(m.extent, dtype=data.dtype)
    np.add.at(storage, m.src.reshape(-1), data.reshape(-1))
    if m.scale is not None:
        storage *= m.scale
    res, node = record(AsStridedBackward0, (x,), storage[m.dst])
    if node is not None:
        node.geometry, node.base_shape = m, None
    return res


def _record_geometry(node: Any, data: np.ndarray, place: Any, size: tuple, stride: tuple,
                     offset: int) -> None:
    """Give ``node`` the index sets of input ``data`` and the output (size, stride, offset)."""
    in_idx = _element_index(data.shape, place.strides, place.offset)
    out_idx = _element_index(size, stride, offset)
    extent = max(int(in_idx.max()) + 1 if in_idx.size else 0,
                 int(out_idx.max()) + 1 if out_idx.size else 0)
    counts = np.bincount(in_idx.reshape(-1), minlength=extent)
    scale = None
    if in_idx.size and int(counts.max()) > 1:  # the input aliases memory: share it out
        with np.errstate(divide="ignore"):
            scale = np.where(counts > 0, 1.0 / np.maximum(counts, 1), 0.0).astype(data.dtype)
    # the op maps the input's storage to the output: its gradient scatters from the output
    node.geometry, node.base_shape = StorageMap(in_idx, out_idx, scale, extent), None


@signature("as_strided(Tensor input, SymInt[] size, SymInt[] stride, "
           "SymInt? storage_offset=None)")
def as_strided(input: Tensor, size: Any, stride: Any, storage_offset: Any = None) -> Tensor:
    """A view of ``input``'s storage with the given size, strides and offset.

    >>> import npgrad
    >>> npgrad.arange(6.).as_strided((2, 2), (1, 2), 1)
    tensor([[1., 3.],
            [2., 4.]])
    """
    if VMAP.depth:
        raise NotImplementedError(VMAP_MSG)
    out, size, stride, offset, place = _view_of_storage(input, size, stride, storage_offset)
    res, node = view_result(AsStridedBackward0, input, out)
    if node is not None:
        _record_geometry(node, input._data, place, size, stride, offset)
    return res


def as_strided_(self: Tensor, size: Any, stride: Any, storage_offset: Any = None) -> Tensor:
    """In place: ``self`` becomes ``self.as_strided(size, stride, storage_offset)``."""
    _check_offset("as_strided_", storage_offset)
    if any(int(n) < 0 for n in size):  # torch's in-place overload sizes the tensor first
        raise RuntimeError("numel: integer multiplication overflow")
    return _restride_(self, AsStridedBackward1, as_strided, size, stride, storage_offset)
