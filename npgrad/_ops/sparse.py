"""Sparse COO tensors: their representation, conversions, arithmetic, products and sums.

Note [Sparse COO tensors]
A sparse tensor is a ``SparseTensor``, a Tensor subclass that adds three slots:
``_sp_indices`` (an int64 array, sparse_dim x nnz), ``_sp_values`` (an array of
nnz x dense dims) and ``_coalesced`` (torch's flag: indices unique and sorted).
Its autograd slots are a Tensor's (grad_fn, requires_grad, grad, hooks), so the
engine, AccumulateGrad and ``edge_of`` treat it as any tensor.

Its ``_data`` is a ``SparseMeta``: the shape and dtype the engine and the
metadata methods read (``shape``, ``dtype``, ``dim()``, ``numel()``), and
nothing else.  Every other use of ``_data``, the place where an op reads a
tensor's values, refuses: a NumPy function or ufunc applied to it, converting it
to an array, or asking it for any other array attribute raises torch's
``Could not run 'aten::<op>' with arguments from the 'SparseCPU' backend``
NotImplementedError, naming the npgrad function that was called.  So a dense op
given a sparse tensor fails loudly instead of reading garbage, and dense
tensors pay nothing for it: no op checks a layout on its path (the one check
added elsewhere, in ``mm`` and in ``.grad`` accumulation, is a type test of the
array the op reads anyway).  The operators (``+``, ``*``, ``@``, ...) of a
SparseTensor are its own methods; Python tries a subclass's reflected operator
first, so ``dense + sparse`` and ``dense @ sparse`` reach them too.

Gradients follow torch: ``to_dense`` sends back the gradient masked to the
input's (coalesced) pattern, a sparse tensor; ``values()`` sends back a sparse
tensor with its indices; ``sparse.mm`` gives the sparse matrix a masked sparse
gradient and ``mm`` a dense one.  Every backward rule is written in npgrad ops
(the constructor from values, ``to_dense``, indexing, ``mm``), so gradients of
gradients work.  A grad_fn name is one class (as in torch, where one node serves
both layouts): ``s + t``, ``s * 2``, ``mm(s, d)``, ``s.sum()`` record the dense
ops' own AddBackward0, MulBackward0, MmBackward0, SumBackward0, whose rules are
written in operators a sparse gradient has.  What this minimal layout lacks is
refused as above: elementwise ops other than negation and scaling (transposes and
dtype conversions: Note [Sparse transposes and conversions]).  A dual tensor
given to a sparse op raises torch's forward-AD NotImplementedError (torch has no
forward rule for these ops either).
"""
from __future__ import annotations

import os
import sys
import warnings
from typing import TYPE_CHECKING, Any

import numpy as np

from .. import _dtype
from .._forward import FW, has_tangent
from .._mode import _tls, GRAD, INFERENCE, RECORDING
if TYPE_CHECKING:
    from .._tensor import Tensor
else:  # Note [Tensor base and Tensor] in npgrad._tensor_base
    from .._tensor_base import TensorBase as Tensor
from .._tensor_base import wrap
from ..autograd.graph import edge_of
from ._core import Node, saved
from ._shape_util import broadcast_shapes
from .checks import forward_ad_missing
from .signature import signature
from ..autograd.graph import SavedTensor
from . import pointwise as _pointwise, registry as _registry, shape as _shape
from .matmul import MmBackward0, _elem_strides, mm as dense_mm
from .pointwise import AddBackward0, DivBackward0, MulBackward0, SubBackward0
from .reduction import SumBackward0, sum as dense_sum
from .shape import CLONE

NegBackward0 = _pointwise.NEG.node



class layout(str):
    """``torch.layout``: equal to its text and printed bare, as ``torch.strided`` is."""

    __slots__ = ()

    def __repr__(self) -> str:
        return str.__str__(self)


STRIDED = layout("torch.strided")
SPARSE_COO = layout("torch.sparse_coo")

_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
_THIS_FILE = os.path.abspath(__file__)
_WRAPPERS = os.path.join(os.path.dirname(_THIS_FILE), "signature.py")  # argument checks


def _op_name() -> str:
    """The npgrad function the user called: the outermost npgrad frame on the stack."""
    frame: Any = sys._getframe(2)
    name = "unknown"
    while frame is not None:
        path = frame.f_code.co_filename
        if path.startswith(_PACKAGE) and os.path.abspath(path) not in (_THIS_FILE, _WRAPPERS):
            name = frame.f_code.co_name
        frame = frame.f_back
    return name.strip("_") or name


def unsupported(op: str | None = None) -> NotImplementedError:
    """torch's error for an op that has no sparse kernel."""
    return NotImplementedError(
        f"Could not run 'aten::{op or _op_name()}' with arguments from the 'SparseCPU' backend. "
        "This could be because the operator doesn't exist for this backend, or was omitted "
        "during the selective/custom build process (if using custom build).")


class SparseMeta:
    """The ``_data`` of a sparse tensor: its shape and dtype, and a refusal for anything else."""

    __slots__ = ("shape", "dtype")

    def __init__(self, shape: tuple, dtype: np.dtype) -> None:
        self.shape = shape
        self.dtype = dtype

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        n = 1
        for s in self.shape:
            n *= s
        return n

    @property
    def itemsize(self) -> int:
        return self.dtype.itemsize

    def __array_ufunc__(self, ufunc: Any, method: str, *inputs: Any, **kwargs: Any) -> Any:
        raise unsupported()

    def __array_function__(self, func: Any, types: Any, args: Any, kwargs: Any) -> Any:
        raise unsupported()

    def __array__(self, dtype: Any = None, copy: Any = None) -> Any:
        raise unsupported()

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        raise unsupported()


if TYPE_CHECKING:
    from .._sparse_tensor import SparseTensor
else:
    # Note [The sparse tensor class, bound late]: SparseTensor subclasses Tensor, which
    # sits above this layer (npgrad._sparse_tensor); it binds itself here on import.
    SparseTensor: Any = None


def bind_sparse_tensor_class(cls: type) -> None:
    global SparseTensor
    SparseTensor = cls  # type: ignore[misc, assignment]


def make_sparse(indices: np.ndarray, values: np.ndarray, shape: tuple,
                coalesced: bool) -> SparseTensor:
    """A SparseTensor without history over ``indices`` and ``values`` (no checks, no copy)."""
    t: SparseTensor = object.__new__(SparseTensor)
    t._data = SparseMeta(tuple(int(s) for s in shape), values.dtype)  # type: ignore[assignment]
    t._grad_fn = None
    t._requires_grad = False
    t._vc = None
    t._output_nr = 0
    t._base = None
    t._grad = None
    t._extra = None
    t._sp_indices = indices
    t._sp_values = values
    t._coalesced = coalesced
    t._fresh = False
    return t


def _fresh(t: SparseTensor) -> SparseTensor:
    """Mark ``t`` as made by its op over indices of its own (Note [The first sparse gradient
    of a leaf])."""
    t._fresh = True
    return t


def _rebuild(indices: np.ndarray, values: np.ndarray, shape: tuple, coalesced: bool,
             requires_grad: bool) -> SparseTensor:
    t = make_sparse(indices, values, shape, coalesced)
    t._requires_grad = requires_grad
    return t


def is_sparse(x: Any) -> bool:
    return type(x) is SparseTensor


def _dense(g: Tensor) -> Tensor:
    """A gradient as a dense tensor (gradients reaching a rule may be sparse or dense)."""
    return to_dense(g) if type(g) is SparseTensor else g


_ATEN_NAMES = {"SparseCooTensorWithDimsAndTensorsBackward0":
               "_sparse_coo_tensor_with_dims_and_tensors",
               "ToSparseBackward0": "_to_sparse", "ToSparseBackward1": "_to_sparse",
               "SparseAddmmBackward0": "_sparse_addmm", "MmBackward0": "mm",
               "AddBackward0": "add", "SubBackward0": "sub"}


def _refuse_tangents(cls: type, inputs: tuple) -> None:
    """torch's error for forward AD through a sparse op (none has a forward rule)."""
    if any(isinstance(x, Tensor) and has_tangent(x) for x in inputs) \
            and not _tls.mode & INFERENCE:
        name = _ATEN_NAMES.get(cls.__name__, cls.__name__)
        raise forward_ad_missing(name)


def _recorded(cls: type, inputs: tuple, result: Tensor) -> Any:
    """Give ``result`` a ``cls`` node over ``inputs`` when grad is recorded; the node or None."""
    if FW.active:
        _refuse_tangents(cls, inputs)
    if _tls.mode != RECORDING or not any(isinstance(x, Tensor) and x._requires_grad
                                         for x in inputs):
        return None
    node: Any = object.__new__(cls)
    edges = tuple(edge_of(x) if isinstance(x, Tensor) and x._requires_grad else (None, 0)
                  for x in inputs)
    node._init_node(edges, ((tuple(result._data.shape), result._data.dtype),))
    result._grad_fn = node
    result._requires_grad = True
    return node


# -- index arithmetic --------------------------------------------------------------

def _check_bounds(indices: np.ndarray, sparse_shape: tuple) -> None:
    """torch's invariant check: every index within its dimension."""
    for d in range(indices.shape[0]):
        row = indices[d]
        if row.size == 0:
            continue
        low = int(row.min())
        if low < 0:
            raise RuntimeError(f"found negative index {low} for dim {d}")
        high = int(row.max())
        if high >= sparse_shape[d]:
            raise RuntimeError(f"size is inconsistent with indices: for dim {d}, size is "
                               f"{sparse_shape[d]} but found index {high}")


def _linear(indices: np.ndarray, sparse_shape: tuple) -> np.ndarray:
    """Each entry's position in the row-major order of the sparse dims."""
    if not sparse_shape:
        return np.zeros(indices.shape[1], dtype=np.int64)
    _check_bounds(indices, sparse_shape)
    return np.ravel_multi_index(tuple(indices), sparse_shape).astype(np.int64, copy=False)


def _unlinear(linear: np.ndarray, sparse_shape: tuple) -> np.ndarray:
    if not sparse_shape:
        return np.zeros((0, linear.size), dtype=np.int64)
    return np.stack(np.unravel_index(linear, sparse_shape)).astype(np.int64).reshape(
        len(sparse_shape), linear.size)


def _coalesce_arrays(indices: np.ndarray, values: np.ndarray, shape: tuple) -> tuple:
    """Sorted unique indices and the summed values (torch's coalesce, in NumPy)."""
    sparse_shape = shape[:indices.shape[0]]
    lin = _linear(indices, sparse_shape)
    unique, inverse = np.unique(lin, return_inverse=True)
    summed = np.zeros((unique.size,) + values.shape[1:], dtype=values.dtype)
    np.add.at(summed, inverse.reshape(-1), values)
    return _unlinear(unique, sparse_shape), summed


def _coalesced_indices(s: SparseTensor) -> np.ndarray:
    if s._coalesced:
        return s._sp_indices
    lin = _linear(s._sp_indices, s._data.shape[:s.sparse_dim()])
    return _unlinear(np.unique(lin), s._data.shape[:s.sparse_dim()])


def _index_tensors(indices: np.ndarray) -> tuple:
    return tuple(wrap(np.ascontiguousarray(row), 0) for row in indices)


# -- construction ------------------------------------------------------------------

INVARIANTS_MSG = (
    "Sparse invariant checks are implicitly disabled. Memory errors (e.g. SEGFAULT) will occur "
    "when operating on a sparse tensor which violates the invariants, but checks incur "
    "performance overhead. To silence this warning, explicitly opt in or out. See "
    "`torch.sparse.check_sparse_tensor_invariants.__doc__` for guidance. ")
_warned_invariants = [False]
# torch.sparse.check_sparse_tensor_invariants: None (not chosen), True or False
invariant_checks: list = [None]


class SparseCooTensorWithDimsAndTensorsBackward0(Node):
    """Values to a sparse tensor: each value's gradient is the gradient at its index."""

    __slots__ = ("indices",)
    _saved_fields = ("indices",)
    indices: Any

    def backward(self, grad: Tensor) -> tuple:
        from .indexing import getitem

        return getitem(_dense(grad), _index_tensors(saved(self, "indices")._data)),


def coo_from_values(indices: np.ndarray, values: Tensor, shape: tuple,
                    coalesced: bool) -> SparseTensor:
    """The sparse tensor of ``values`` at ``indices``, recorded as torch's constructor."""
    res = make_sparse(indices, values._data, shape, coalesced)
    node = _recorded(SparseCooTensorWithDimsAndTensorsBackward0, (values,), res)
    if node is not None:
        node.indices = SavedTensor(wrap(indices, 0))
    return res


def _as_tensor(x: Any, dtype: Any = None) -> Tensor:
    from .. import _creation

    if isinstance(x, Tensor):
        return x if dtype is None or x.dtype is dtype else x.to(dtype)
    return _creation.tensor(x, dtype=dtype)


@signature(
    "sparse_coo_tensor(PyObject* indices, PyObject* values, *, ScalarType dtype=None, "
    "Device? device=None, bool pin_memory=False, bool requires_grad=False, "
    "bool? check_invariants=None, bool? is_coalesced=None)",
    "sparse_coo_tensor(PyObject* indices, PyObject* values, IntArrayRef size, *, "
    "ScalarType dtype=None, Device? device=None, bool pin_memory=False, "
    "bool requires_grad=False, bool? check_invariants=None, bool? is_coalesced=None)",
    "sparse_coo_tensor(IntArrayRef size, *, ScalarType dtype=None, Device? device=None, "
    "bool requires_grad=False, bool? check_invariants=None)")
def sparse_coo_tensor(indices: Any, values: Any = None, size: Any = None, *, dtype: Any = None,
                      device: Any = None, pin_memory: bool = False, requires_grad: bool = False,
                      check_invariants: Any = None, is_coalesced: Any = None) -> SparseTensor:
    """A sparse COO tensor with ``values`` at ``indices`` (sparse_dim x nnz).

    >>> import npgrad
    >>> npgrad.sparse_coo_tensor([[0, 1], [1, 0]], [1., 2.], (2, 2)).to_dense()
    tensor([[0., 1.],
            [2., 0.]])
    """
    if values is None:  # sparse_coo_tensor(size): no entries
        shape = tuple(int(n) for n in indices)
        empty = np.zeros((0,), dtype=(dtype or _dtype.get_default_dtype()).np_dtype)
        res = make_sparse(np.zeros((len(shape), 0), dtype=np.int64), empty, shape, True)
        res._requires_grad = bool(requires_grad)
        return res
    idx = _as_tensor(indices)._data
    vals = _as_tensor(values, dtype)
    if idx.ndim != 2:
        idx = idx.reshape(idx.shape[0] if idx.ndim else 0, -1) if idx.ndim == 1 else idx
    sparse_dim = idx.shape[0] if idx.ndim else 0
    dense_dim = vals._data.ndim - 1
    if size is None:
        sparse_sizes = tuple(int(idx[d].max()) + 1 if idx.shape[1] else 0
                             for d in range(sparse_dim))
        shape = sparse_sizes + tuple(vals._data.shape[1:])
    else:
        shape = tuple(int(s) for s in size)
        if len(shape) != sparse_dim + dense_dim:
            raise RuntimeError(f"'len(size) == sparse_dim + dense_dim' is not satisfied: "
                               f"len(size) = {len(shape)}, sparse_dim = {sparse_dim}, "
                               f"dense_dim = {dense_dim}")
    if idx.shape[1] != vals._data.shape[0]:
        raise RuntimeError(f"indices and values must have same nnz, but got nnz from indices: "
                           f"{idx.shape[1]}, nnz from values: {vals._data.shape[0]}")
    if requires_grad and vals._data.dtype.kind not in "fcV":
        raise RuntimeError("Only Tensors of floating point and complex dtype can require "
                           "gradients")
    checks = check_invariants if check_invariants is not None else invariant_checks[0]
    if checks:
        _check_bounds(idx, shape[:sparse_dim])
    elif checks is None and not _warned_invariants[0]:
        _warned_invariants[0] = True
        warnings.warn(INVARIANTS_MSG, UserWarning, stacklevel=2)
    idx = np.ascontiguousarray(idx, dtype=np.int64)
    res = coo_from_values(idx, vals, shape, bool(is_coalesced))
    if requires_grad:
        res._requires_grad = True
    return res


# -- conversions -------------------------------------------------------------------

class ToSparseBackward0(Node):
    """``to_sparse(sparse_dim)``: the dense input gets the gradient densified."""

    __slots__ = ()

    def backward(self, grad: Tensor) -> tuple:
        return _dense(grad),


class ToSparseBackward1(ToSparseBackward0):
    """``to_sparse()``."""

    __slots__ = ()


def to_sparse(input: Tensor, sparse_dim: Any = None, *, layout: Any = None) -> SparseTensor:
    """The nonzero entries of a dense tensor (rows of its first ``sparse_dim`` dims)."""
    if layout is not None and layout != SPARSE_COO:
        raise NotImplementedError(f"to_sparse: conversion to {layout} is not supported")
    data = input._data
    nd = data.ndim
    if nd == 0:  # one entry, at no index
        res = make_sparse(np.zeros((0, 1), dtype=np.int64), data.reshape(1).copy(), (), True)
        _recorded(ToSparseBackward1 if sparse_dim is None else ToSparseBackward0, (input,), res)
        return res
    if sparse_dim is None:
        dims = nd
    else:
        dims = int(sparse_dim)
        if not 0 <= dims <= nd:
            raise RuntimeError(f"dense_to_sparse: sparse_dim argument must be in [0,{nd}] range, "
                               f"but {dims} is given")
        if dims == 0 and nd > 0:
            raise RuntimeError("dense_to_sparse: sparse_dim argument must be in >0 when "
                               "self.dim()>0")
    lead = data.reshape(data.shape[:dims] + (-1,)) if data.size else \
        data.reshape(data.shape[:dims] + (0,))
    mask = np.any(lead != 0, axis=-1) if nd > dims else (data != 0)
    indices = np.stack(np.nonzero(mask)).astype(np.int64).reshape(dims, -1)
    values = data[tuple(indices)] if dims else data.reshape((1,) + data.shape)
    res = make_sparse(indices, np.ascontiguousarray(values), data.shape, True)
    _recorded(ToSparseBackward1 if sparse_dim is None else ToSparseBackward0, (input,), res)
    return res


class ToDenseBackward0(Node):
    """The sparse input gets the gradient masked to its (coalesced) pattern: a sparse tensor."""

    __slots__ = ("self_",)
    _saved_fields = ("self_",)
    self_: Any

    def backward(self, grad: Tensor) -> tuple:
        s = saved(self, "self_")
        return _fresh(sparse_mask(_dense(grad), _coalesced_indices(s), s._data.shape)),


def sparse_mask(dense: Tensor, indices: np.ndarray, shape: tuple) -> SparseTensor:
    """``dense`` at ``indices`` (coalesced) as a sparse tensor (torch's ``sparse_mask``)."""
    from .indexing import getitem

    return coo_from_values(indices, getitem(dense, _index_tensors(indices)), shape, True)


def to_dense(s: SparseTensor) -> Tensor:
    """The dense tensor of ``s`` (duplicates added up); ToDenseBackward0."""
    shape = s._data.shape
    sd = s.sparse_dim()
    out = np.zeros(shape, dtype=s._data.dtype)
    _check_bounds(s._sp_indices, shape[:sd])
    np.add.at(out, tuple(s._sp_indices), s._sp_values)
    res = wrap(out, _tls.mode)
    node = _recorded(ToDenseBackward0, (s,), res)
    if node is not None:
        node.self_ = SavedTensor(s)
    return res


class CoalesceBackward0(Node):
    """Coalescing moves no value anywhere it did not come from: the gradient passes."""

    __slots__ = ()

    def backward(self, grad: Tensor) -> tuple:
        return grad,


def coalesce(s: SparseTensor) -> SparseTensor:
    """``s`` with sorted, unique indices (duplicates summed); ``s`` itself when already so."""
    if s._coalesced:
        return s
    indices, values = _coalesce_arrays(s._sp_indices, s._sp_values, s._data.shape)
    res = make_sparse(indices, values, s._data.shape, True)
    _recorded(CoalesceBackward0, (s,), res)
    return res


class ValuesBackward0(Node):
    """``values()``: the gradient of the values, placed back at the indices."""

    __slots__ = ("self_",)
    _saved_fields = ("self_",)
    self_: Any

    def backward(self, grad: Tensor) -> tuple:
        s = saved(self, "self_")
        return coo_from_values(s._sp_indices, grad, s._data.shape, True),


def values(s: SparseTensor) -> Tensor:
    if not s._coalesced:
        raise RuntimeError("Cannot get values on an uncoalesced tensor, please call "
                           ".coalesce() first")
    res = wrap(s._sp_values, 0)
    node = _recorded(ValuesBackward0, (s,), res)
    if node is not None:
        node.self_ = SavedTensor(s)
    return res


def clone(s: SparseTensor) -> SparseTensor:
    res = make_sparse(s._sp_indices.copy(), s._sp_values.copy(), s._data.shape, s._coalesced)
    _recorded(CLONE.node, (s,), res)
    return res


# -- arithmetic --------------------------------------------------------------------

def _merge(a: SparseTensor, b: SparseTensor, alpha: Any) -> tuple:
    """torch's sparse add: the two index lists merged in one pass, equal heads summed."""
    sparse_shape = a._data.shape[:a.sparse_dim()]
    la = _linear(a._sp_indices, sparse_shape)
    lb = _linear(b._sp_indices, sparse_shape)
    va, vb = a._sp_values, b._sp_values * alpha
    out_dtype = np.result_type(va, vb)
    if a._coalesced and b._coalesced:  # two sorted unique lists: the merge is their union
        lin, inverse = np.unique(np.concatenate((la, lb)), return_inverse=True)
        vals = np.zeros((lin.size,) + va.shape[1:], dtype=out_dtype)
        np.add.at(vals, inverse.reshape(-1), np.concatenate((va.astype(out_dtype),
                                                             vb.astype(out_dtype))))
        return _unlinear(lin, sparse_shape), vals
    order_idx, order_val = [], []
    i = j = 0
    while i < la.size or j < lb.size:
        if j >= lb.size or (i < la.size and la[i] < lb[j]):
            order_idx.append(la[i])
            order_val.append(va[i])
            i += 1
        elif i >= la.size or lb[j] < la[i]:
            order_idx.append(lb[j])
            order_val.append(vb[j])
            j += 1
        else:
            order_idx.append(la[i])
            order_val.append(va[i] + vb[j])
            i += 1
            j += 1
    lin = np.asarray(order_idx, dtype=np.int64)
    vals = np.asarray(order_val, dtype=out_dtype).reshape((lin.size,) + va.shape[1:])
    return _unlinear(lin, sparse_shape), vals


def add(a: SparseTensor, other: Any, alpha: Any = 1, cls: Any = None) -> SparseTensor:
    """``a + alpha * other`` for a sparse ``a``: sparse + sparse is sparse."""
    if type(other) is not SparseTensor:
        raise RuntimeError("add(sparse, dense) is not supported. Use add(dense, sparse) "
                           "instead.")
    if a._data.shape != other._data.shape:
        raise RuntimeError("add: expected sizes of 'self' and 'other' to match, but "
                           f"{list(a._data.shape)} != {list(other._data.shape)}")
    cls = cls or AddBackward0
    indices, vals = _merge(a, other, alpha if cls is AddBackward0 else -alpha)
    res = make_sparse(indices, vals, a._data.shape, a._coalesced and other._coalesced)
    node = _recorded(cls, (a, other), res)
    if node is not None:
        node.alpha = alpha
    return res


def add_dense(dense: Any, s: Any, alpha: Any = 1, cls: Any = None,
              kept_alpha: Any = None) -> Tensor:
    """``dense + alpha * s``: a dense tensor (``cls``: SubBackward0 for ``dense - s``, which
    keeps its own ``kept_alpha``)."""
    if not isinstance(dense, Tensor):
        raise unsupported("add")
    if dense._data.shape != s._data.shape:
        raise RuntimeError("add: expected 'self' and 'other' to have same size, but self has "
                           f"size {list(dense._data.shape)} but other has size "
                           f"{list(s._data.shape)}")
    out = np.array(dense._data, dtype=np.result_type(dense._data, s._sp_values), copy=True)
    _check_bounds(s._sp_indices, s._data.shape[:s.sparse_dim()])
    np.add.at(out, tuple(s._sp_indices), s._sp_values * alpha)
    res = wrap(out, _tls.mode)
    node = _recorded(cls or AddBackward0, (dense, s), res)
    if node is not None:
        node.alpha = alpha if kept_alpha is None else kept_alpha
    return res


def _number(other: Any) -> Any:
    if isinstance(other, Tensor):
        if type(other) is SparseTensor or other._data.ndim:
            raise unsupported()
        return other._data.item()
    if isinstance(other, (bool, int, float, complex)):
        return other
    raise TypeError(f"unsupported operand type for sparse tensor: '{type(other).__name__}'")


def _scaled(cls: type, s: SparseTensor, other: Any, values: np.ndarray) -> SparseTensor:
    res = _fresh(make_sparse(s._sp_indices, values, s._data.shape, s._coalesced))
    # torch records the number as a second (wrapped, gradient-less) input
    node = _recorded(cls, (s, None), res)
    if node is not None:
        node.save(s, other, res)  # the entry's save: ``other`` kept, ``self`` not needed
    return res


def mul(s: SparseTensor, other: Any, reflected: bool = False) -> SparseTensor:
    """``s * other`` (``other * s`` when ``reflected``): a number or a 0-dim tensor without
    grad scales the values; a tensor is Note [Sparse products]'s."""
    if isinstance(other, Tensor) and (type(other) is SparseTensor or other._data.ndim
                                      or other._requires_grad):
        return _mul_tensor(s, other, reflected)
    k = _number(other)
    vals = s._sp_values
    out_dt = _dtype.result_type_np((np.empty((1,), vals.dtype), k))
    return _scaled(MulBackward0, s, k, np.asarray(vals * k, dtype=out_dt))


# Note [Sparse products]
# ``sparse * dense`` keeps the sparse operand's entries as they are (duplicates too), each
# value times the dense tensor at its index (broadcast to the sparse shape); the result is
# coalesced when the sparse operand is.  ``sparse * sparse`` of two coalesced operands is
# their intersection (coalesced).  Otherwise torch keeps the entries of the uncoalesced
# operand (of both uncoalesced ones, the one with fewer entries; on a tie the second), each
# times the other's coalesced value at its index or 0 where the other has none, and the
# result is not coalesced.  Both record the dense product's MulBackward0, whose rules
# (``grad * other``, ``grad * self``) are products of this kind again.

def _lookup(t: SparseTensor, linear: np.ndarray) -> np.ndarray:
    """``t``'s coalesced values at the linear indices ``linear`` (zeros where it has none)."""
    sparse_shape = t._data.shape[:t.sparse_dim()]
    indices, vals = (t._sp_indices, t._sp_values) if t._coalesced else \
        _coalesce_arrays(t._sp_indices, t._sp_values, t._data.shape)
    own = _linear(indices, sparse_shape)
    at = np.clip(np.searchsorted(own, linear), 0, max(own.size - 1, 0))
    found = (own[at] == linear) if own.size else np.zeros(linear.shape, bool)
    out = np.zeros((linear.size,) + vals.shape[1:], vals.dtype)
    out[found] = vals[at[found]]
    return out


def _sparse_product(a: SparseTensor, b: SparseTensor) -> tuple:
    """The indices, values, coalesced flag and ``_fresh`` mark of ``a * b`` (Note [Sparse
    products])."""
    if a._data.shape != b._data.shape:
        raise RuntimeError(f"mul(sparse, sparse): expected sizes of 'self' and 'other' to "
                           f"match, but {list(a._data.shape)} != {list(b._data.shape)}")
    if a.sparse_dim() != b.sparse_dim():
        raise RuntimeError("mul(sparse, sparse): expected sparse_dim of 'self' and 'other' "
                           f"to match, but {a.sparse_dim()} != {b.sparse_dim()}")
    sparse_shape = a._data.shape[:a.sparse_dim()]
    dt = np.result_type(a._sp_values, b._sp_values)
    if a._coalesced and b._coalesced:
        la, lb = _linear(a._sp_indices, sparse_shape), _linear(b._sp_indices, sparse_shape)
        common, ia, ib = np.intersect1d(la, lb, assume_unique=True, return_indices=True)
        vals = a._sp_values[ia].astype(dt) * b._sp_values[ib].astype(dt)
        # torch selects the common entries from the smaller operand: when some are left out
        # its indices are a narrowed (non-contiguous) selection, which AccumulateGrad copies
        # (Note [The first sparse gradient of a leaf])
        fresh = common.size == min(a._nnz(), b._nnz())
        return _unlinear(common, sparse_shape), vals, True, fresh
    if a._coalesced or (not b._coalesced and b._nnz() <= a._nnz()):
        keep, other = b, a
    else:
        keep, other = a, b
    linear = _linear(keep._sp_indices, sparse_shape)
    kv, ov = keep._sp_values.astype(dt), _lookup(other, linear).astype(dt)
    vals = kv * ov if keep is a else ov * kv
    return keep._sp_indices.copy(), vals, False, True


def _dense_product(s: SparseTensor, d: Tensor, reflected: bool) -> tuple:
    """The values and dtype of ``s * d`` for a dense ``d`` broadcast to ``s``'s shape."""
    shape = s._data.shape
    dd = d._data
    if broadcast_shapes(tuple(dd.shape), shape) != shape:
        raise NotImplementedError("npgrad: a sparse tensor times a dense tensor of a larger "
                                  "broadcast shape is not implemented")
    gathered = np.broadcast_to(dd, shape)[tuple(s._sp_indices)]
    dt = _dtype.result_type_np((np.empty((1,), s._sp_values.dtype), dd))
    vals, gathered = s._sp_values.astype(dt), gathered.astype(dt)
    return gathered * vals if reflected else vals * gathered


def _mul_tensor(s: SparseTensor, other: Tensor, reflected: bool) -> SparseTensor:
    if type(other) is SparseTensor:
        a, b = (other, s) if reflected else (s, other)
        indices, vals, coalesced, fresh = _sparse_product(a, b)
    else:
        indices, coalesced = s._sp_indices.copy(), s._coalesced
        vals = _dense_product(s, other, reflected)
        fresh = True
    res = make_sparse(indices, np.ascontiguousarray(vals), s._data.shape, coalesced)
    res._fresh = fresh  # Note [The first sparse gradient of a leaf]
    inputs = (other, s) if reflected else (s, other)
    node = _recorded(MulBackward0, inputs, res)
    if node is not None:
        node.save(inputs[0], inputs[1], res)
    return res


_DIVISION_MSG = ("Sparse division requires a scalar or zero-dim dense tensor divisor (got "
                 "shape {shape} for divisor)")


def div(s: SparseTensor, other: Any) -> SparseTensor:
    if isinstance(other, Tensor) and other._data.ndim:
        raise RuntimeError(_DIVISION_MSG.format(shape=list(other._data.shape)))
    k = _number(other)
    vals = s._sp_values
    out_dt = _dtype.float_result_np(_dtype.result_type_np((np.empty((1,), vals.dtype), k)))
    with np.errstate(divide="ignore", invalid="ignore"):
        return _scaled(DivBackward0, s, k, np.asarray(vals / k, dtype=out_dt))


def rdiv(s: SparseTensor, other: Any) -> Tensor:
    """``other / s``: torch divides by a sparse tensor nowhere."""
    raise RuntimeError(_DIVISION_MSG.format(shape=list(s._data.shape)))


def neg(s: SparseTensor) -> SparseTensor:
    res = _fresh(make_sparse(s._sp_indices, -s._sp_values, s._data.shape, s._coalesced))
    _recorded(NegBackward0, (s,), res)
    return res


# -- elementwise ops on the values -----------------------------------------------------

# Note [Sparse inputs of elementwise entries]
# torch computes the one-input ops with ``f(0) == 0`` on the values of the coalesced
# input (the result is coalesced; ``neg`` alone keeps the input's entries as they are),
# recording the dense op's node (AbsBackward0, PowBackward0 for ``square`` ...).  Those
# nodes' rules then run on sparse tensors, and what a sparse tensor lacks decides their
# fate, table below: some give the gradient at the input's entries (``rule``), the
# piecewise-constant ones an empty sparse gradient (``zero``), the others fail in
# backward with the error torch's rule meets (``sin``'s needs ``cos``, which has no
# sparse kernel).  npgrad runs the entry's own rule on the dense values at the entries,
# and raises torch's error where torch's rule fails.  The registry hands a sparse input
# of a one-input entry here (``registry.sparse_unary``); an op missing from the table has
# no sparse kernel in torch either.
_RULE, _ZERO = "rule", "zero"
_ADD_SPARSE_DENSE = (RuntimeError, "add(sparse, dense) is not supported. Use add(dense, "
                                   "sparse) instead.")
_ELEMENTWISE: dict = {
    "abs": _RULE, "relu": _RULE, "pow": _RULE, "log1p": _RULE, "frac": _RULE,
    "deg2rad": _RULE, "rad2deg": _RULE,
    "sign": _ZERO, "ceil": _ZERO, "floor": _ZERO, "round": _ZERO, "trunc": _ZERO,
    "sgn": (NotImplementedError, "_efficientzerotensor"), "sin": (NotImplementedError, "cos"),
    "sinh": (NotImplementedError, "cosh"), "tanh": (NotImplementedError, "tanh_backward"),
    "erf": (NotImplementedError, "exp"), "erfinv": (NotImplementedError, "exp"),
    "nan_to_num": (NotImplementedError, "ne.Scalar"), "sqrt": (RuntimeError, None),
    "tan": _ADD_SPARSE_DENSE, "asin": _ADD_SPARSE_DENSE, "asinh": _ADD_SPARSE_DENSE,
    "atan": _ADD_SPARSE_DENSE, "expm1": _ADD_SPARSE_DENSE,
    "atanh": (RuntimeError, "memory format option is only supported by strided tensors"),
}
_ELEMENTWISE_ALIASES = {"absolute": "abs", "arcsin": "asin", "arcsinh": "asinh",
                        "arctan": "atan", "arctanh": "atanh", "fix": "trunc",
                        "negative": "neg", "special_expm1": "expm1", "special_erf": "erf",
                        "special_erfinv": "erfinv"}


class SparseElementwiseNode(Node):
    """The node of a one-input entry over a sparse tensor (Note [Sparse inputs of
    elementwise entries]); its class carries the entry's grad_fn name."""

    __slots__ = ("self_", "result", "indices", "params")
    _saved_fields = ("self_", "result")
    self_: Any
    result: Any
    indices: np.ndarray
    params: tuple
    entry: Any  # set on each class
    kind: Any

    def backward(self, grad: Tensor) -> tuple:
        from .indexing import getitem

        kind, entry = self.kind, self.entry
        s = saved(self, "self_") if entry.saves == "self" else None
        r = saved(self, "result") if entry.saves == "result" else None  # the values
        shape = self._out_meta_shape()
        if kind == _ZERO:  # (torch's empty gradient keeps its flag in ``.grad``)
            return make_sparse(np.zeros((len(self.indices), 0), np.int64),
                               np.zeros((0,) + shape[len(self.indices):], grad._data.dtype),
                               shape, True),
        if kind != _RULE:
            error, op = kind
            if op is None:  # sqrt's rule divides by a sparse tensor
                raise RuntimeError(_DIVISION_MSG.format(shape=list(shape)))
            raise unsupported(op) if error is NotImplementedError else error(op)
        g = getitem(_dense(grad), _index_tensors(self.indices))
        args = [values(coalesce(s))] if s is not None else ([r] if r is not None else [])
        kept = [v for n, v in zip(entry.params, self.params) if n in entry.keeps]
        if entry.holomorphic and g._data.dtype.kind == "c":  # as PointwiseEntryNode's
            out = entry.derivative(g.conj(), *args, *kept).conj_physical()
        else:
            out = entry.derivative(g, *args, *kept)
        return _fresh(coo_from_values(self.indices, out, shape, True)),

    def _out_meta_shape(self) -> tuple:
        return tuple(self._out_meta[0][0])


_ELEMENTWISE_NODES: dict = {}


def _elementwise_node(entry: Any, kind: Any) -> type:
    cls = _ELEMENTWISE_NODES.get(entry.node.__name__)
    if cls is None:
        name = entry.node.__name__
        cls = type(name, (SparseElementwiseNode,), {
            "__slots__": (), "entry": entry, "kind": kind, "__module__": __name__,
            "__qualname__": name, "__doc__": f"``{entry.name}`` of a sparse tensor."})
        _ELEMENTWISE_NODES[name] = cls
    return cls


def elementwise(entry: Any, s: Any, params: tuple) -> Tensor:
    """A one-input entry applied to a sparse tensor ``s`` (Note [Sparse inputs of
    elementwise entries])."""
    if type(s) is not SparseTensor:
        raise unsupported(entry.name)
    name = _ELEMENTWISE_ALIASES.get(entry.name, entry.name)
    if name == "neg":
        return neg(s)
    kind = _ELEMENTWISE.get(name)
    if kind is None:
        raise unsupported(name)
    if name == "pow" and params and params[0] == 0:
        raise RuntimeError("pow: cannot raise to zeroth power on sparse tensor; it would make "
                           "the result tensor dense")
    if s._coalesced:
        indices, vals = s._sp_indices, s._sp_values
    else:
        indices, vals = _coalesce_arrays(s._sp_indices, s._sp_values, s._data.shape)
    out = entry.compute(vals, params)
    res = _fresh(make_sparse(indices, np.ascontiguousarray(out), s._data.shape, True))
    node = _recorded(_elementwise_node(entry, kind), (s,), res)
    if node is not None:
        node.indices, node.params = indices, tuple(params)
        node.self_ = SavedTensor(s) if entry.saves == "self" else None
        # a rule reading the result reads its values (relu's mask), kept as a constant: a
        # saved output of its own node would hold the node in a cycle
        node.result = SavedTensor(wrap(res._sp_values, 0)) if entry.saves == "result" else None
    return res


def binary(entry: Any, a: Any, b: Any, params: tuple) -> Tensor:
    """A two-input entry with a sparse operand: the sum, difference, product and quotient
    this layout has (the operators' own paths), torch's refusal for the others."""
    name = entry.name
    alpha = params[0] if params else 1
    if name in ("add", "sub"):
        cls = AddBackward0 if name == "add" else SubBackward0
        if type(a) is SparseTensor:
            return add(a, b, alpha, cls)
        return add_dense(a, b, alpha if name == "add" else -alpha, cls, alpha)
    if name == "mul":
        return mul(a, b) if type(a) is SparseTensor else mul(b, a, True)
    if name == "div":
        return div(a, b) if type(a) is SparseTensor else rdiv(b, a)
    raise unsupported(name)


_registry.sparse_unary = elementwise
_registry.sparse_binary = binary


# -- in-place arithmetic -------------------------------------------------------------

# Note [In-place ops on sparse tensors]
# The in-place arithmetic torch has for this layout (what optimizers and gradient code do
# to a sparse ``.grad``: ``zero_``, scaling, ``add_`` / ``sub_`` / ``mul_`` of a sparse
# tensor, ``copy_``) replaces the tensor's indices and values by the out-of-place result's,
# in the tensor's own dtype, with the coalesced flag torch's kernels leave (``mul_`` by a
# number clears it).  A tensor recording history is refused: torch's error for a leaf, an
# npgrad one otherwise (this minimal layout keeps no history of in-place writes).

def _writable(s: SparseTensor) -> None:
    if _tls.mode == RECORDING and s._requires_grad:
        if s._grad_fn is None:
            raise RuntimeError("a leaf Variable that requires grad is being used in an "
                               "in-place operation.")
        raise NotImplementedError("npgrad: in-place ops on a sparse tensor with history are "
                                  "not implemented")


def _assign(s: SparseTensor, res: SparseTensor, coalesced: Any = None) -> SparseTensor:
    from .checks import check_castable

    dt = s._data.dtype
    check_castable(res._sp_values.dtype, dt)
    s._sp_indices = res._sp_indices
    s._sp_values = res._sp_values.astype(dt, copy=False)
    s._coalesced = res._coalesced if coalesced is None else coalesced
    s._fresh = False
    s._data = SparseMeta(res._data.shape, dt)  # type: ignore[assignment]
    return s


def inplace(s: SparseTensor, op: str, other: Any = None, alpha: Any = 1) -> SparseTensor:
    """``s.<op>_(other)`` (Note [In-place ops on sparse tensors])."""
    _writable(s)
    with _no_grad():
        if op == "zero":
            sd = s.sparse_dim()
            empty = make_sparse(np.zeros((sd, 0), np.int64),
                                np.zeros((0,) + s._data.shape[sd:], s._data.dtype),
                                s._data.shape, True)
            return _assign(s, empty)
        if op == "neg":
            return _assign(s, neg(s))
        if op == "mul":
            res = mul(s, other)
            scalar = not isinstance(other, Tensor) or res._sp_indices is s._sp_indices
            return _assign(s, res, False if scalar else None)
        if op == "div":
            return _assign(s, div(s, other))
        if op in ("add", "sub"):
            return _assign(s, add(s, other, alpha, AddBackward0 if op == "add" else SubBackward0))
        if op == "copy":
            if type(other) is not SparseTensor:
                raise unsupported("copy_")
            return _assign(s, make_sparse(other._sp_indices.copy(), other._sp_values.copy(),
                                          other._data.shape, other._coalesced))
    raise unsupported(op + "_")


def _no_grad() -> Any:
    from ..autograd.grad_mode import no_grad

    return no_grad()


# -- transposes and dtype conversions ---------------------------------------------------

# Note [Sparse transposes and conversions]
# A transpose of a sparse tensor exchanges rows of its indices (sparse dims) or axes of
# its values (dense dims); torch refuses to exchange a sparse dim with a dense one.  The
# result is a view of its input, as torch's (``_is_view()``, ``_base``), and records the
# dense op's own node (TBackward0, TransposeBackward0, PermuteBackward0, with the
# arguments it keeps), whose rule transposes the gradient back: a sparse gradient takes
# this path again.  The result is coalesced only when the order of the sparse dims is
# unchanged.  A dtype conversion converts the values (ToCopyBackward0 converts the
# gradient back); like a dense one it returns the input itself when nothing changes.


def _sparse_view(entry: Any, s: SparseTensor, indices: np.ndarray, values: np.ndarray,
                 shape: tuple, coalesced: bool, params: tuple) -> SparseTensor:
    """The result of a transpose-like ``entry`` over ``s``: a sparse view with its node."""
    res = _fresh(make_sparse(indices, values, shape, coalesced))
    res._base = s if s._base is None else s._base
    if s._requires_grad:
        res._requires_grad = True  # a view of a tensor requiring grad, as torch's
    if FW.active:
        _refuse_tangents(entry.node, (s,))
    if _tls.mode == RECORDING and s._requires_grad:
        node = entry._node(entry.node, s, ((shape, s._data.dtype),), params)
        res._grad_fn = node
    return res


def _permuted(s: SparseTensor, order: tuple) -> tuple:
    """``s``'s indices, values, shape and coalesced flag with its dims in ``order``."""
    sd = s.sparse_dim()
    if sorted(order[:sd]) != list(range(sd)):
        raise RuntimeError("permute(sparse_coo): transpositions between sparse and dense "
                           "dimensions are not allowed.Only transpositions within sparse and "
                           "dense dimensions are supported.")
    sparse_order, dense_order = order[:sd], tuple(d - sd + 1 for d in order[sd:])
    indices = s._sp_indices[list(sparse_order)]
    values = np.transpose(s._sp_values, (0, *dense_order))
    shape = tuple(s._data.shape[d] for d in order)
    same = tuple(sparse_order) == tuple(range(sd))
    return indices, values, shape, s._coalesced and same


def transpose(s: SparseTensor, dim0: Any, dim1: Any, d0: int, d1: int) -> SparseTensor:
    """``s.transpose(dim0, dim1)`` (``d0``, ``d1``: the dims wrapped) within the sparse dims."""
    sd = s.sparse_dim()
    if d0 != d1 and (d0 >= sd or d1 >= sd):
        raise RuntimeError(f"sparse transpose: transposed dimensions must be sparse Got "
                           f"sparse_dim: {sd}, d0: {d0}, d1: {d1}")
    order = list(range(s._data.ndim))
    order[d0], order[d1] = order[d1], order[d0]
    indices, values, shape, _ = _permuted(s, tuple(order))
    # torch copies the indices and values of a transpose (a permute shares the values)
    return _sparse_view(_shape.TRANSPOSE, s, indices.copy(), values.copy(), shape,
                        s._coalesced and d0 == d1, (dim0, dim1))


def t(s: SparseTensor) -> SparseTensor:
    """``s.t()`` of a sparse matrix (or vector) with no dense dims."""
    sd, nd = s.sparse_dim(), s._data.ndim
    if sd > 2 or nd != sd:
        raise RuntimeError(f"t() expects a tensor with <= 2 sparse and 0 dense dimensions, but "
                           f"got {sd} sparse and {nd - sd} dense dimensions")
    indices, values, shape, _ = _permuted(s, (1, 0) if nd == 2 else tuple(range(nd)))
    return _sparse_view(_shape.T, s, indices.copy(), values.copy(), shape, False, ())


def permute(s: SparseTensor, order: tuple, dims: tuple) -> SparseTensor:
    """``s.permute(dims)`` (``order``: the dims wrapped), the sparse dims among themselves
    and the dense dims among themselves."""
    indices, values, shape, coalesced = _permuted(s, order)
    return _sparse_view(_shape.PERMUTE, s, indices, values, shape, coalesced, (tuple(dims),))


def to_dtype(s: SparseTensor, target: Any, copy: bool) -> SparseTensor:
    """``s.to(dtype)`` (``target`` None: the same dtype): the values converted; ``s``
    itself when nothing changes."""
    src = s._data.dtype
    if target is None:
        target = _dtype.from_np(src)
    if target.np_dtype == src and not copy:
        return s
    values = s._sp_values
    with np.errstate(all="ignore"):
        converted = (values.real if src.kind == "c" and target.np_dtype.kind != "c"
                     else values).astype(target.np_dtype, copy=True)
    res = _fresh(make_sparse(s._sp_indices.copy(), converted, s._data.shape, s._coalesced))
    if target.np_dtype.kind in "fc":
        node = _recorded(_shape.TO_COPY.node, (s,), res)
        if node is not None:
            node.self_dtype = _dtype.from_np(src)
    return res


# -- products ------------------------------------------------------------------------

def _spmm(s: SparseTensor, d: np.ndarray) -> np.ndarray:
    """The dense product of a 2-D sparse ``s`` and a dense matrix, in NumPy."""
    rows, cols = s._sp_indices
    out = np.zeros((s._data.shape[0], d.shape[1]), dtype=np.result_type(s._sp_values, d))
    np.add.at(out, rows, s._sp_values[:, None] * d[cols])
    return out


def _check_mm(s: SparseTensor, d: Tensor) -> None:
    if type(d) is SparseTensor or not isinstance(d, Tensor):
        raise unsupported("addmm")
    if s.sparse_dim() != 2 or s.dense_dim() != 0:
        raise RuntimeError(f"addmm: matrices expected, got {s.sparse_dim()}D tensor")
    if d._data.ndim != 2:
        raise RuntimeError(f"addmm: matrices expected, got {d._data.ndim}D tensor")
    if d._data.shape[0] != s._data.shape[1]:
        raise RuntimeError(f"addmm: Argument #3 (dense): Expected dim 0 size "
                           f"{s._data.shape[1]}, got {d._data.shape[0]}")
    if d._data.dtype != s._data.dtype:
        raise RuntimeError(f"addmm: Expected dense tensor to have the same dtype as sparse, but "
                           f"got {_dtype.from_np(d._data.dtype).scalar_name} and "
                           f"{_dtype.from_np(s._data.dtype).scalar_name}")
    _check_bounds(s._sp_indices, s._data.shape)


class SparseAddmmBackward0(Node):
    """``sparse.mm(S, D)`` as torch records it: addmm with a zero first input (edge None)."""

    __slots__ = ("self_", "mat2", "mask", "shape")
    _saved_fields = ("self_", "mat2")
    self_: Any
    mat2: Any
    mask: np.ndarray
    shape: tuple

    def backward(self, grad: Tensor) -> tuple:
        g_sparse = g_dense = None
        if self.next_functions[1][0] is not None:
            g_sparse = _fresh(sparse_mask(dense_mm(grad, saved(self, "mat2").t()), self.mask,
                                          self.shape))
        if self.next_functions[2][0] is not None:
            g_dense = dense_mm(to_dense(saved(self, "self_")).t(), grad)
        return None, g_sparse, g_dense


def sparse_mm(s: SparseTensor, d: Tensor) -> Tensor:
    """``torch.sparse.mm``: sparse x dense is dense; the sparse input's gradient is sparse."""
    _check_mm(s, d)
    res = wrap(_spmm(s, d._data), _tls.mode)
    node = _recorded(SparseAddmmBackward0, (None, s, d), res)
    if node is not None:
        node.self_ = SavedTensor(s)
        node.mat2 = SavedTensor(d)
        node.mask = _coalesced_indices(s)
        node.shape = s._data.shape
    return res


def mm(s: Any, d: Any) -> Tensor:
    """``torch.mm`` / ``@`` with a sparse first matrix: MmBackward0, dense gradients.

    The node is the dense product's; what it saves of the sparse matrix (for the
    dense matrix's gradient) is its dense form, ``to_dense(s)``, recorded, so a
    gradient of that gradient still reaches ``s``.
    """
    if type(s) is not SparseTensor:
        raise unsupported("mm")
    _check_mm(s, d)
    res = wrap(_spmm(s, d._data), _tls.mode)
    node = _recorded(MmBackward0, (s, d), res)
    if node is not None:  # the slots of MM's node (npgrad/_ops/matmul.py), as it keeps them
        first, second = (edge is not None for edge, _ in node.next_functions)
        node.mat2 = SavedTensor(d) if first else None
        node.self_ = SavedTensor(to_dense(s)) if second else None
        node.self_sym_sizes, node.mat2_sym_sizes = tuple(s._data.shape), d._data.shape
        node.self_sym_strides = tuple(s._data.shape[1:2]) + (1,) if first else ()
        node.mat2_sym_strides = _elem_strides(d._data) if second else ()
    return res


# -- sums ------------------------------------------------------------------------------

class SparseSumBackward0(Node):
    """``sparse.sum(S, dim)``: each entry gets the gradient at its place in the result."""

    __slots__ = ("self_", "dims")
    _saved_fields = ("self_",)
    self_: Any
    dims: tuple

    def backward(self, grad: Tensor) -> tuple:
        from .shape import expand, reshape

        s = saved(self, "self_")
        shape = s._data.shape
        kept = tuple(1 if i in self.dims else n for i, n in enumerate(shape))
        full = expand(reshape(_dense(grad), kept), shape)
        return sparse_mask(full, _coalesced_indices(s), shape),


def _sum_dims(dim: Any, ndim: int) -> tuple:
    from ._shape_util import wrap_dim

    dims = tuple(dim) if isinstance(dim, (tuple, list)) else (dim,)
    return tuple(sorted({wrap_dim(d, ndim) for d in dims}))


def sum_all(s: SparseTensor, dtype: Any = None) -> Tensor:
    """``S.sum()``: a dense 0-dim tensor; SumBackward0 straight onto the sparse input."""
    vals = s._sp_values if dtype is None else s._sp_values.astype(dtype.np_dtype)
    out_dt = vals.dtype if vals.dtype.kind in "fc" else np.dtype(np.int64)
    res = wrap(np.asarray(vals.sum(dtype=out_dt)), _tls.mode)
    node = _recorded(SumBackward0, (s,), res)
    if node is not None:  # the dense sum's node: its gradient is dense, as torch's
        node.self_sym_sizes = s._data.shape
    return res


def sparse_sum(s: Any, dim: Any = None, *, dtype: Any = None) -> Tensor:
    """``torch.sparse.sum``: all entries (a dense 0-dim tensor) or over ``dim``.

    Summing over some sparse dims leaves a sparse tensor over the others (coalesced);
    over every sparse dim, a dense one.
    """
    if type(s) is not SparseTensor:
        raise RuntimeError("_sparse_sum expects a sparse tensor")
    vals = s._sp_values
    if dtype is not None:
        vals = vals.astype(dtype.np_dtype)
    shape = s._data.shape
    if dim is None:  # torch: the sum of the coalesced values
        return dense_sum(values(coalesce(s)), dtype=dtype)
    dims = _sum_dims(dim, len(shape))
    sd = s.sparse_dim()
    sparse_summed = [d for d in dims if d < sd]
    dense_axes = tuple(d - sd + 1 for d in dims if d >= sd)
    if dense_axes:
        vals = vals.sum(axis=dense_axes)
    keep = [d for d in range(sd) if d not in sparse_summed]
    out_shape = tuple(n for i, n in enumerate(shape) if i not in dims)
    if not keep:
        res = wrap(np.asarray(vals.sum(axis=0)), _tls.mode)
    else:
        indices, summed = _coalesce_arrays(np.ascontiguousarray(s._sp_indices[keep]), vals,
                                           out_shape)
        res = make_sparse(indices, summed, out_shape, True)
    node = _recorded(SparseSumBackward0, (s,), res)
    if node is not None:
        node.self_, node.dims = SavedTensor(s), dims
    return res


def dense_unsupported(op: str) -> NotImplementedError:
    """torch's error for a sparse-only op called on a dense (CPU) tensor."""
    return NotImplementedError(
        f"Could not run 'aten::{op}' with arguments from the 'CPU' backend. This could be "
        "because the operator doesn't exist for this backend, or was omitted during the "
        "selective/custom build process (if using custom build).")


# Note [The first sparse gradient of a leaf]
# torch's AccumulateGrad takes a leaf's first sparse gradient over as it is, without a
# copy, when nothing else holds its indices and values: it builds a new sparse tensor
# over them, and that constructor does not carry the coalesced flag, so ``.grad`` reads
# ``is_coalesced() == False`` although the gradient a hook or ``autograd.grad`` sees is
# coalesced.  When the indices are shared (``values()`` and ``sparse.sum`` send back
# their input's indices; a gradient summed from two edges is held by the engine) it
# copies the gradient, flag included.  npgrad marks the sparse tensors an op builds over
# indices of its own, contiguous (``_fresh``: the masks of ``to_dense`` and ``sparse.mm``,
# products, scaling, negation, transposes, conversions and the elementwise ops), and
# ``.grad`` keeps the flag of the others, and of a gradient of one entry (which torch's
# AccumulateGrad copies too, as measured against torch 2.13).

def accumulate(old: Tensor | None, grad: Tensor) -> Tensor:
    """``.grad`` after a gradient arrives when either is sparse (AccumulateGrad's rule).

    The first gradient is kept as a copy (a sparse one keeps its pattern); later ones are
    added: sparse + sparse stays sparse, a dense one with a sparse one is dense.
    """
    if old is None:
        if _tls.mode & GRAD:  # create_graph: the gradient itself, history and all
            return grad
        if type(grad) is SparseTensor:  # Note [The first sparse gradient of a leaf]
            taken_over = grad._fresh and grad._sp_indices.shape[1] > 1
            return make_sparse(grad._sp_indices.copy(), grad._sp_values.copy(),
                               grad._data.shape, grad._coalesced and not taken_over)
        return wrap(np.array(grad._data, copy=True, order="C"), 0)
    if type(old) is SparseTensor:
        return old + grad if type(grad) is SparseTensor else add_dense(grad, old)
    return add_dense(old, grad)


_shape.bind_sparse_ops(sys.modules[__name__])  # Note [The sparse layout, bound late]
