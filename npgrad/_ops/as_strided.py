"""``as_strided`` and ``as_strided_``: any view of a tensor's storage, with its gradient.

Note [as_strided addresses the storage]
As torch's, ``x.as_strided(size, stride, storage_offset)`` describes the view
in elements of ``x``'s *storage* (``untyped_storage()``), not of ``x``: the
offset defaults to ``x.storage_offset()`` and the strides may reach any element
of the storage.  The result is a NumPy view over the same root buffer
(Note [Storages as root arrays]), so it shares memory and the version counter.

The op is a ``View`` entry (Note [A view is an entry]) whose node keeps what torch's
does: ``_saved_size``, ``_saved_stride``, ``_saved_storage_offset`` (as given, None
included) and, with no getter, the input's geometry in its storage (torch's
``TensorGeometry(self)``: sizes, strides, storage offset).  Its backward is torch's
``as_strided_backward`` written in npgrad ops, step by step as torch's: the gradient is
copied (or, where the output reads a storage element more than once, added with
``index_add_``) into zeros the size of the storage both views reach; where the input
itself reads an element more than once (an ``expand``), each element is divided by the
number of times it is read; the input's gradient is the as_strided view of that with
the input's geometry.  So a double backward records torch's graph (AsStridedBackward0
over CopySlices over CopyBackwards).  The in-place ``as_strided_`` restrides the tensor
itself and takes the node as ``AsStridedBackward1`` (Note [In-place view ops]).
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
from .._tensor_base import wrap
from .registry import View
from .signature import signature
from .indexing import index_add_
from .inplace import copy_, div_
from .shape import reshape
from .view_inplace import _restride_


# npgrad's vmap runs the function on slices of the batch (Note [vmap by slices] in
# npgrad.func._vmap), and a slice's storage is the whole batch's: offsets and strides into
# it would reach other samples, where torch counts them from each sample's start.
VMAP_MSG = ("npgrad: as_strided is not supported inside vmap (a sample's storage offsets would "
            "count from the batch's storage, not from the sample's)")


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


def _geometry_of(data: np.ndarray) -> tuple:
    """torch's ``TensorGeometry``: an array's sizes, strides and offset in its storage."""
    place = locate(data)
    return data.shape, place.strides, place.offset


def _checked(input: Tensor, size: Any, stride: Any, storage_offset: Any) -> tuple:
    """torch's checks of a view of ``input``'s storage: its (size, stride) and the input's
    geometry."""
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
    return size, stride, (data.shape, place.strides, place.offset)


def _strided(data: np.ndarray, size: tuple, stride: tuple, storage_offset: Any,
             self_geometry: tuple) -> np.ndarray:
    """The forward: the NumPy view of ``data``'s storage (arguments checked)."""
    if 0 in size:
        return np.zeros(size, dtype=data.dtype)
    root = data if data.base is None and data.flags.c_contiguous else locate(data).root
    item = data.itemsize
    offset = self_geometry[2] if storage_offset is None else storage_offset
    raw = flat_bytes(root)
    out: np.ndarray = np.ndarray(size, dtype=data.dtype,
                                 buffer=raw[:root.nbytes // item * item].view(data.dtype),
                                 offset=offset * item, strides=tuple(s * item for s in stride))
    if not data.flags.writeable:
        out.flags.writeable = False
    return out


def _maybe_overlapping(sizes: list, strides: list) -> bool:
    """Whether a view (dims of size 1 and 0 left out) may read an element twice: torch's test,
    each stride against the extent of the smaller ones."""
    reach = 0
    for s, n in sorted(zip(strides, sizes)):
        if s <= reach:
            return True
        reach += s * (n - 1)
    return False


def _element_index(sizes: list, strides: list, offset: int) -> np.ndarray:
    """The storage element each position of a (sizes, strides, offset) view reads."""
    idx = np.full(tuple(sizes), offset, dtype=np.int64)
    for axis, (n, s) in enumerate(zip(sizes, strides)):
        step = [1] * len(sizes)
        step[axis] = n
        idx = idx + (np.arange(n, dtype=np.int64) * s).reshape(step)
    return idx


def _storage_size(sizes: list, strides: list, offset: int) -> int:
    return offset + sum(s * (n - 1) for n, s in zip(sizes, strides)) + 1


def as_strided_backward(grad: Tensor, self_geometry: tuple, size: tuple, stride: tuple,
                        storage_offset: Any) -> Tensor:
    """torch's ``as_strided_backward`` in npgrad ops (Note [as_strided addresses the storage])."""
    in_sizes, in_strides, in_offset = self_geometry
    out_offset = in_offset if storage_offset is None else storage_offset
    out_sizes: list = []
    out_strides: list = []
    for i in range(len(size) - 1, -1, -1):
        n, s = size[i], stride[i]
        if n == 0:
            return grad.new_zeros(in_sizes)
        if n == 1:
            grad = grad.squeeze(i)
        elif s == 0:  # an expanded dim: its elements all reach one storage element
            grad = grad.sum(i)
        else:
            out_sizes.insert(0, n)
            out_strides.insert(0, s)
    sizes: list = []
    strides: list = []
    for n, s in zip(in_sizes, in_strides):
        if n == 0:
            return grad.new_zeros(in_sizes)
        if n != 1:
            sizes.append(n)
            strides.append(s)
    out_overlap = _maybe_overlapping(out_sizes, out_strides)
    in_overlap = _maybe_overlapping(sizes, strides)
    shared = min(in_offset, out_offset)
    in_start, out_start = in_offset - shared, out_offset - shared
    extent = max(_storage_size(sizes, strides, in_start),
                 _storage_size(out_sizes, out_strides, out_start))
    # torch's steps, on a fresh zero storage (``new_zeros``); the positions and the counts are
    # constants, computed in NumPy (torch takes them from an ``arange``)
    storage = wrap(np.zeros(extent, dtype=grad._data.dtype), 0)
    flat = ((extent,), (1,), 0)  # the storage's own geometry
    if out_overlap:
        where = wrap(_element_index(out_sizes, out_strides, out_start).reshape(-1), 0)
        index_add_(storage, 0, where, reshape(grad, (-1,)))
    else:
        copy_(strided_view(storage, tuple(out_sizes), tuple(out_strides), out_start, flat), grad)
    if in_overlap:
        count = np.bincount(_element_index(sizes, strides, in_start).reshape(-1), minlength=extent)
        with np.errstate(all="ignore"):  # 0 / 0 where the input reads nothing: never read back
            div_(storage, wrap(count.astype(grad._data.dtype), 0))
    return strided_view(storage, tuple(in_sizes), tuple(in_strides), in_start, flat)


AS_STRIDED = View(
    "as_strided(Tensor input, SymInt[] size, SymInt[] stride, SymInt? storage_offset=None)",
    grad_fn="AsStridedBackward0", forward=_strided,
    params=("size", "stride", "storage_offset", "self_geometry"),
    keeps=("self_geometry", "size", "stride", "storage_offset"), hidden=("self_geometry",),
    derivative=as_strided_backward)
AsStridedBackward0 = AS_STRIDED.node
AsStridedBackward1 = AS_STRIDED.twin("AsStridedBackward1")


def strided_view(input: Tensor, size: tuple, stride: tuple, storage_offset: int,
                 geometry: tuple | None = None) -> Tensor:
    """``input.as_strided(size, stride, storage_offset)`` for arguments known to be valid (the
    backward's own, a view rebuilt after an in-place write): the entry, unchecked;
    ``geometry``: the input's, when the caller knows it."""
    return AS_STRIDED(input, size, stride, storage_offset,  # type: ignore[no-any-return]
                      _geometry_of(input._data) if geometry is None else geometry)


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
    size, stride, geometry = _checked(input, size, stride, storage_offset)
    return AS_STRIDED(input, size, stride, storage_offset, geometry)  # type: ignore[no-any-return]


def as_strided_(self: Tensor, size: Any, stride: Any, storage_offset: Any = None) -> Tensor:
    """In place: ``self`` becomes ``self.as_strided(size, stride, storage_offset)``."""
    _check_offset("as_strided_", storage_offset)
    if any(int(n) < 0 for n in size):  # torch's in-place overload sizes the tensor first
        raise RuntimeError("numel: integer multiplication overflow")
    return _restride_(self, AsStridedBackward1, as_strided, size, stride, storage_offset)
