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
import weakref
from typing import Any, NamedTuple

import numpy as np

__all__ = ["Placement", "TypedStorage", "UntypedStorage", "deepcopy_array", "locate", "root_of",
           "storage_offset", "untyped_storage_of", "view_into", "warn_typed_storage"]


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


# Note [One storage object per root]
# torch keeps one Python object per storage, so ``a.untyped_storage() is
# b.untyped_storage()`` holds for two views of one base, and ``==`` (identity)
# with it.  ``untyped_storage_of`` keeps that promise with a weak table from the
# root array's id to its live UntypedStorage: the storage holds its root, so the
# id cannot be reused while the entry is alive, and the entry dies with the last
# reference to the storage.  ``_cdata`` (torch's StorageImpl address) is the
# root's id: equal for every tensor over one root.  A NumPy buffer cannot grow
# or shrink under the views that share it, so ``resize_`` is refused with the
# error torch gives a storage it does not own (``from_numpy``'s).
RESIZE_MSG = "Trying to resize storage that is not resizable"


def _storage_str(items: list, info: str) -> str:
    """torch's storage print: one element per line, then the bracketed description."""
    return " " + "\n ".join(str(v) for v in items) + "\n" + info


class UntypedStorage:
    """torch's ``Tensor.untyped_storage()``: the bytes of a tensor's root array.

    ``a.untyped_storage().data_ptr() == b.untyped_storage().data_ptr()`` (and
    ``is``) tells whether two tensors share memory (Note [One storage object per root]).
    """

    __slots__ = ("_root", "__weakref__")

    def __init__(self, root: np.ndarray) -> None:
        self._root = root

    @property
    def _cdata(self) -> int:
        return id(self._root)

    @property
    def device(self) -> Any:
        from ._device import cpu  # _device sits above the storage layer

        return cpu

    is_cuda = False
    is_sparse = False

    def data_ptr(self) -> int:
        return _address(self._root)

    def nbytes(self) -> int:
        return self._root.nbytes

    def size(self) -> int:
        return self._root.nbytes

    __len__ = size

    def element_size(self) -> int:
        return 1

    def type(self) -> str:
        return "torch.storage.UntypedStorage"

    def _bytes(self) -> np.ndarray:
        root = self._root
        if root.flags.c_contiguous or root.flags.f_contiguous:
            return flat_bytes(root)
        return np.ascontiguousarray(root).view(np.uint8).reshape(-1)

    def __getitem__(self, index: int) -> int:
        n = self._root.nbytes
        if not isinstance(index, int) or isinstance(index, bool):
            raise TypeError("can't index a torch.storage.UntypedStorage with "
                            + type(index).__name__)
        if not -n <= index < n:
            raise IndexError(f"index {index} out of range for storage of size {n}")
        return int(self._bytes()[index])

    def tolist(self) -> list:
        return self._bytes().tolist()

    def resize_(self, size: int) -> UntypedStorage:
        raise RuntimeError(RESIZE_MSG)

    def __repr__(self) -> str:
        return _storage_str(self.tolist(), "[torch.storage.UntypedStorage(device=cpu) of size "
                                           f"{self._root.nbytes}]")

    __str__ = __repr__


_LIVE: weakref.WeakValueDictionary = weakref.WeakValueDictionary()


def untyped_storage_of(root: np.ndarray) -> UntypedStorage:
    """The one live UntypedStorage of ``root`` (Note [One storage object per root])."""
    key = id(root)
    storage = _LIVE.get(key)
    if storage is None or storage._root is not root:
        storage = UntypedStorage(root)
        _LIVE[key] = storage
    return storage


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
    """torch's ``Tensor.storage()``: the root's bytes counted in elements of the tensor's dtype.

    A fresh object per call (as torch's), over the shared ``_untyped_storage``.
    """

    __slots__ = ("_untyped_storage", "dtype")

    def __init__(self, root: np.ndarray, dtype: Any) -> None:
        self._untyped_storage = untyped_storage_of(root)
        self.dtype = dtype

    @property
    def _root(self) -> np.ndarray:
        return self._untyped_storage._root

    @property
    def device(self) -> Any:
        return self._untyped_storage.device

    is_cuda = False
    is_sparse = False

    @property
    def _cdata(self) -> int:
        return self._untyped_storage._cdata

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
        return self._untyped_storage

    def _values(self) -> np.ndarray:
        flat = self._untyped_storage._bytes()
        n = self.size() * self.dtype.itemsize
        return flat[:n].view(self._root.dtype)

    def __getitem__(self, index: int) -> Any:
        n = self.size()
        if not isinstance(index, int) or isinstance(index, bool):
            raise TypeError("can't index a torch.storage.TypedStorage with "
                            + type(index).__name__)
        if not -n <= index < n:
            raise IndexError(f"index {index} out of range for storage of size {n}")
        return self._values()[index].item()

    def tolist(self) -> list:
        return self._values().tolist()

    def resize_(self, size: int) -> TypedStorage:
        raise RuntimeError(RESIZE_MSG)

    def __repr__(self) -> str:
        return _storage_str(self.tolist(), f"[torch.storage.TypedStorage(dtype={self.dtype}, "
                                           f"device=cpu) of size {self.size()}]")

    __str__ = __repr__


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
