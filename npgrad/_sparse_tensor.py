"""The sparse COO tensor class: a Tensor subclass over the sparse ops (Note [Sparse COO tensors]
in npgrad._ops.sparse).

It sits above npgrad._tensor, as every Tensor subclass must (Note [Tensor base and Tensor] in
npgrad._tensor_base); npgrad._ops.sparse makes its instances through the class bound below.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ._ops import sparse as _sparse
from ._ops.sparse import (
    SPARSE_COO,
    _rebuild,
    add,
    add_dense,
    clone,
    coalesce,
    div,
    inplace,
    make_sparse,
    mm,
    mul,
    neg,
    rdiv,
    sparse_sum,
    sum_all,
    to_dense,
    unsupported,
    values,
)
from ._ops.pointwise import SubBackward0
from ._tensor_base import wrap
from ._tensor import Tensor


class SparseTensor(Tensor):
    """A sparse COO tensor (Note [Sparse COO tensors])."""

    __slots__ = ("_sp_indices", "_sp_values", "_coalesced", "_fresh")
    _sp_indices: np.ndarray
    _sp_values: np.ndarray
    _coalesced: bool
    _fresh: bool  # Note [The first sparse gradient of a leaf] in npgrad._ops.sparse

    # -- layout and structure ---------------------------------------------------
    @property
    def is_sparse(self) -> bool:
        return True

    @property
    def layout(self) -> str:
        return SPARSE_COO

    def sparse_dim(self) -> int:
        return self._sp_indices.shape[0]

    def dense_dim(self) -> int:
        return self._sp_values.ndim - 1

    def _nnz(self) -> int:
        return self._sp_indices.shape[1]

    def is_coalesced(self) -> bool:
        return self._coalesced

    def _indices(self) -> Tensor:
        return wrap(self._sp_indices, 0)

    def _values(self) -> Tensor:
        return wrap(self._sp_values, 0)

    def indices(self) -> Tensor:
        if not self._coalesced:
            raise RuntimeError("Cannot get indices on an uncoalesced tensor, please call "
                               ".coalesce() first")
        return wrap(self._sp_indices, 0)

    def values(self) -> Tensor:
        return values(self)

    def coalesce(self) -> SparseTensor:
        return coalesce(self)

    def to_dense(self, dtype: Any = None, *, masked_grad: Any = None) -> Tensor:
        return to_dense(self)

    def to_sparse(self, sparse_dim: Any = None, *, layout: Any = None, blocksize: Any = None,
                  dense_dim: Any = None) -> SparseTensor:
        if sparse_dim is not None and sparse_dim != self.sparse_dim():
            raise RuntimeError("to_sparse: conversion from Sparse to Sparse with sparse_dim "
                               "argument !=self.sparse_dim() is not supported")
        return self

    def type_as(self, other: Tensor) -> Tensor:
        if type(other) is not SparseTensor:  # torch's to(options) carries the layout too
            raise RuntimeError("to(options) doesn't support converting to a different layout, "
                               "but got self.layout being Sparse and options.layout set as "
                               "Strided")
        return self.to(other.dtype)

    # -- what a sparse tensor has no storage for --------------------------------
    def is_contiguous(self, memory_format: Any = None) -> bool:
        return False

    def data_ptr(self) -> int:
        raise RuntimeError("Cannot access data pointer of Tensor that doesn't have storage")

    def tolist(self) -> Any:
        raise RuntimeError("Cannot access data pointer of Tensor that doesn't have storage")

    def untyped_storage(self) -> Any:
        raise NotImplementedError("Cannot access storage of SparseTensorImpl")

    def storage(self) -> Any:
        raise NotImplementedError("Cannot access storage of SparseTensorImpl")

    def numpy(self, *, force: bool = False) -> np.ndarray:
        raise TypeError("can't convert Sparse layout tensor to numpy. Use Tensor.to_dense() "
                        "first.")

    def item(self) -> Any:
        n = self._data.size
        if n != 1:
            raise RuntimeError(f"a Tensor with {n} elements cannot be converted to Scalar")
        return float(self._sp_values.sum()) if self._data.dtype.kind == "f" \
            else self._sp_values.sum().item()

    def detach(self) -> SparseTensor:
        return make_sparse(self._sp_indices, self._sp_values, self._data.shape, self._coalesced)

    def clone(self, *, memory_format: Any = None) -> SparseTensor:
        return clone(self)

    def __reduce_ex__(self, protocol: Any) -> Any:
        # as torch's: indices, values and size travel; requires_grad and history do not
        return (_rebuild, (self._sp_indices, self._sp_values, self._data.shape, self._coalesced,
                           False))

    def __deepcopy__(self, memo: dict) -> SparseTensor:
        if self._grad_fn is not None:
            raise RuntimeError("Only Tensors created explicitly by the user (graph leaves) "
                               "support the deepcopy protocol at the moment.  If you were "
                               "attempting to deepcopy a module, this may be because of a "
                               "torch.nn.utils.weight_norm usage, see "
                               "https://github.com/pytorch/pytorch/pull/103001")
        new = _rebuild(self._sp_indices.copy(), self._sp_values.copy(), self._data.shape,
                       self._coalesced, self._requires_grad)
        memo[id(self)] = new
        return new

    def __repr__(self, *, tensor_contents: Any = None) -> str:  # type: ignore[override]
        from ._tensor_str import sparse_repr

        return sparse_repr(self)

    __str__ = __repr__  # type: ignore[assignment]

    # -- arithmetic -------------------------------------------------------------
    def add(self, other: Any, *, alpha: Any = 1) -> Tensor:
        return add(self, other, alpha)

    def sub(self, other: Any, *, alpha: Any = 1) -> Tensor:
        return add(self, other, alpha, SubBackward0)

    def mul(self, other: Any) -> Tensor:
        return mul(self, other)

    def div(self, other: Any, *, rounding_mode: str | None = None) -> Tensor:
        if rounding_mode is not None:
            raise unsupported("div.Tensor_mode")
        return div(self, other)

    def neg(self) -> SparseTensor:
        return neg(self)

    # -- in-place arithmetic (Note [In-place ops on sparse tensors]) ---------------
    def zero_(self) -> SparseTensor:
        return inplace(self, "zero")

    def neg_(self) -> SparseTensor:
        return inplace(self, "neg")

    def mul_(self, other: Any) -> SparseTensor:
        return inplace(self, "mul", other)

    def div_(self, other: Any, *, rounding_mode: str | None = None) -> SparseTensor:
        if rounding_mode is not None:
            raise unsupported("div_.Tensor_mode")
        return inplace(self, "div", other)

    def add_(self, other: Any, *, alpha: Any = 1) -> SparseTensor:
        return inplace(self, "add", other, alpha)

    def sub_(self, other: Any, *, alpha: Any = 1) -> SparseTensor:
        return inplace(self, "sub", other, alpha)

    def copy_(self, src: Any, non_blocking: bool = False) -> SparseTensor:
        return inplace(self, "copy", src)

    def __add__(self, other: Any) -> Tensor:
        return add(self, other)

    def __radd__(self, other: Any) -> Tensor:
        return add_dense(other, self)

    def __sub__(self, other: Any) -> Tensor:
        return add(self, other, 1, SubBackward0)

    def __mul__(self, other: Any) -> Tensor:
        return mul(self, other)

    def __rmul__(self, other: Any) -> Tensor:
        return mul(self, other, True)

    def __truediv__(self, other: Any) -> Tensor:
        return div(self, other)

    def __rtruediv__(self, other: Any) -> Tensor:
        return rdiv(self, other)

    def __neg__(self) -> SparseTensor:
        return neg(self)

    def __matmul__(self, other: Any) -> Tensor:
        return mm(self, other)

    def mm(self, mat2: Tensor) -> Tensor:
        return mm(self, mat2)

    def sum(self, dim: Any = None, keepdim: bool = False, *, dtype: Any = None,
            keepdims: Any = None) -> Tensor:
        if dim is None:
            return sum_all(self, dtype)
        return sparse_sum(self, dim, dtype=dtype)

    __hash__ = Tensor.__hash__


_sparse.bind_sparse_tensor_class(SparseTensor)
