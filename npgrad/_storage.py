"""Where a tensor's memory lives: the root buffer behind a NumPy array and the array's place in it.

Note [Storages as root arrays]
npgrad has no storage object: a tensor's ``_data`` is a NumPy array, and the
arrays that share memory (views, ``detach()``, ``from_numpy``) lead through
``ndarray.base`` to one root array that owns (or wraps) the bytes.  Torch's
files and copies speak of a flat storage plus, per tensor, an element offset
and element strides into it.  ``locate`` translates: when the root is a flat
C-contiguous buffer and the view sits inside it with non-negative strides that
are whole elements, the root *is* the storage and the view is (offset,
strides) into it; otherwise (negative strides, a root that is itself strided,
odd byte offsets) the array is not a torch-style view and gets a storage of its
own, a contiguous copy.  (A Fortran-ordered root is a flat buffer too.)
``view_into`` is the inverse: an array over a flat storage at an element offset
and strides, whose ``base`` is the storage, so that tensors rebuilt from one
storage share it again.
"""
from __future__ import annotations

import warnings
from typing import Any, NamedTuple

import numpy as np

__all__ = ["Placement", "TypedStorage", "UntypedStorage", "deepcopy_array", "locate", "root_of",
           "storage_offset", "view_into", "warn_typed_storage"]


class Placement(NamedTuple):
    """A view's place in its root: the root array, element offset and element strides."""

    root: np.ndarray
    offset: int
    strides: tuple[int, ...]


def root_of(arr: np.ndarray) -> np.ndarray:
    """The last ndarray on ``arr``'s ``base`` chain (the array that holds its memory)."""
    root = arr
    while True:
        base: Any = root.base
        if isinstance(base, np.ndarray):
            root = base
        elif isinstance(getattr(base, "base", None), np.ndarray):
            root = base.base  # np.lib.stride_tricks.as_strided's wrapper (expand, unfold)
        else:
            return root


def _address(arr: np.ndarray) -> int:
    return arr.__array_interface__["data"][0]


def contiguous_strides(shape: tuple[int, ...]) -> tuple[int, ...]:
    """Torch's strides of a contiguous tensor of ``shape`` (also for empty ones)."""
    strides: list[int] = []
    step = 1
    for n in reversed(shape):
        strides.append(step)
        step *= max(n, 1)
    return tuple(reversed(strides))


def locate(arr: np.ndarray) -> Placement:
    """``arr`` as a view of a flat storage: see Note [Storages as root arrays]."""
    item = arr.itemsize
    root = root_of(arr)
    if root is arr and arr.flags.c_contiguous:
        return Placement(arr, 0, contiguous_strides(arr.shape))
    if arr.size > 0 and (root.flags.c_contiguous or root.flags.f_contiguous) \
            and root.nbytes % item == 0:
        delta = _address(arr) - _address(root)
        if delta >= 0 and delta % item == 0 and all(s >= 0 and s % item == 0
                                                    for s in arr.strides):
            extent = delta + sum((n - 1) * s for n, s in zip(arr.shape, arr.strides)) + item
            if extent <= root.nbytes:
                return Placement(root, delta // item, tuple(s // item for s in arr.strides))
    flat = np.array(arr, order="C", copy=True)
    return Placement(flat, 0, contiguous_strides(arr.shape))


def storage_offset(arr: np.ndarray) -> int:
    """Elements from the start of ``arr``'s root buffer to ``arr``'s first element."""
    return (_address(arr) - _address(root_of(arr))) // arr.itemsize


class UntypedStorage:
    """torch's ``Tensor.untyped_storage()``: the bytes of a tensor's root array.

    Only what autograd code asks of a storage: its address and size, so that
    ``a.untyped_storage().data_ptr() == b.untyped_storage().data_ptr()`` tells
    whether two tensors share memory (Note [Storages as root arrays]).
    """

    __slots__ = ("_root",)

    def __init__(self, root: np.ndarray) -> None:
        self._root = root

    def data_ptr(self) -> int:
        return _address(self._root)

    def nbytes(self) -> int:
        return self._root.nbytes

    def size(self) -> int:
        return self._root.nbytes

    __len__ = size

    def element_size(self) -> int:
        return 1


TYPED_STORAGE_MSG = (
    "TypedStorage is deprecated. It will be removed in the future and UntypedStorage will be "
    "the only storage class. This should only matter to you if you are using storages "
    "directly.  To access UntypedStorage directly, use tensor.untyped_storage() instead of "
    "tensor.storage()")
_warned = [False]


def warn_typed_storage() -> None:
    """torch's deprecation warning for ``Tensor.storage()``, given once per process as torch's."""
    if not _warned[0]:
        _warned[0] = True
        warnings.warn(TYPED_STORAGE_MSG, UserWarning, stacklevel=3)


class TypedStorage:
    """torch's ``Tensor.storage()``: the root array counted in elements of the tensor's dtype."""

    __slots__ = ("_root", "dtype")

    def __init__(self, root: np.ndarray, dtype: Any) -> None:
        self._root = root
        self.dtype = dtype

    def data_ptr(self) -> int:
        return _address(self._root)

    def nbytes(self) -> int:
        return self._root.nbytes

    def element_size(self) -> int:
        return self.dtype.itemsize

    def size(self) -> int:
        return self._root.nbytes // self.dtype.itemsize

    __len__ = size

    def untyped(self) -> UntypedStorage:
        return UntypedStorage(self._root)


def flat_bytes(root: np.ndarray) -> np.ndarray:
    """The bytes of a contiguous root array (C or F order), a flat uint8 array sharing them."""
    flat = root.ravel(order="K")  # memory order; a view, since the root is contiguous
    return flat.view(np.uint8)


def view_into(storage: np.ndarray, dtype: np.dtype, offset: int, size: Any,
              stride: Any) -> np.ndarray:
    """An array of ``dtype`` over the flat uint8 ``storage`` at element ``offset``, ``stride``.

    Raises ValueError when the view reaches outside the storage.
    """
    dtype = np.dtype(dtype)
    item = dtype.itemsize
    size = tuple(int(n) for n in size)
    stride = tuple(int(s) for s in stride)
    if len(size) != len(stride):
        raise ValueError(f"size {size} and stride {stride} have different lengths")
    if any(n < 0 for n in size) or any(s < 0 for s in stride) or offset < 0:
        raise ValueError(f"negative size, stride or offset ({size}, {stride}, {offset})")
    if 0 in size:
        return np.zeros(size, dtype=dtype)
    extent = (offset + sum((n - 1) * s for n, s in zip(size, stride)) + 1) * item
    if extent > storage.nbytes:
        raise ValueError(f"a tensor of size {size}, stride {stride} and offset {offset} needs "
                         f"{extent} bytes but its storage has {storage.nbytes}")
    typed = storage.view(dtype) if storage.nbytes % item == 0 else \
        storage[:storage.nbytes // item * item].view(dtype)
    return np.ndarray(size, dtype=dtype, buffer=typed, offset=offset * item,
                      strides=tuple(s * item for s in stride))


def deepcopy_array(arr: np.ndarray, memo: dict) -> np.ndarray:
    """A copy of ``arr`` for ``copy.deepcopy``; views copied together share one copied root.

    The copied root goes in ``memo`` under the root's id, which is what
    ``copy.deepcopy(root)`` itself would record.
    """
    place = locate(arr)
    if place.root is not root_of(arr) and place.root is not arr:
        return place.root  # not a torch-style view: its contiguous copy is already fresh
    copied = memo.get(id(place.root))
    if copied is None:
        copied = place.root.copy(order="K")  # same memory order: the offsets stay valid
        memo[id(place.root)] = copied
        memo.setdefault(id(memo), []).append(place.root)  # keep the original alive (copy's rule)
    if place.root is arr:
        return copied
    return view_into(flat_bytes(copied), arr.dtype, place.offset, arr.shape, place.strides)
