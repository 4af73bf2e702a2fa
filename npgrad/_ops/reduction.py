"""Reductions (sum, mean, max, var, norm...), cumsum and softmax: forward and backward together.

Note [Reduced dimensions]
Every reduction turns its ``dim`` argument into a sorted tuple of axes with
``_reduce_axes`` (torch's wrapping and error texts, from ``_shape_util``) and
remembers two shapes on its node: the input's (``self_sizes``) and the
"kept" shape, the input's with every reduced axis set to 1 (``keep_shape``).
Backward rules first give the incoming gradient the kept shape (a reshape,
which is a no-op when ``keepdim=True``), then let broadcasting or ``expand``
carry it back over the reduced axes.  A 0-dim input accepts ``dim`` 0 or -1,
as torch does, and reduces nothing.

What ``dim=()`` means differs between ops, exactly as in torch: ``sum``,
``mean``, ``amax``, ``var``, ``norm`` reduce every dimension; ``all``/``any``
reduce none; ``logsumexp`` refuses it unless ``keepdim=True``.

Note [Reductions in float16]
torch accumulates float16 reductions in float32 on the CPU, NumPy in float16;
so float16 data is reduced in float32 and the result cast back.
"""
from __future__ import annotations

import builtins
import math
import warnings
from typing import Any

import numpy as np

from .signature import signature
from .. import _dtype
from .._mode import _tls, RECORDING
from .._tensor import Tensor, wrap
from ._core import Node, SavedTensor, UnaryNode, is_tensor, node_of, saved, unary
from ._shape_util import NO_DIM, wrap_dim, wrap_dims
from .pointwise import zeros_like_grad
from .pointwise import (abs, exp, masked_fill, maximum, minimum, pow, sign,  # noqa: A004
                        where)

_builtin_max = builtins.max


# -- helpers ------------------------------------------------------------------------------

def _is_dim_sequence(dim: Any) -> bool:
    return isinstance(dim, (tuple, list)) or type(dim).__name__ == "Size"


def _reduce_axes(op: str, ndim: int, dim: Any, empty_means_all: bool = True) -> tuple:
    """Sorted tuple of the axes to reduce (Note [Reduced dimensions])."""
    if dim is None:
        return tuple(range(ndim))
    if _is_dim_sequence(dim):
        axes = wrap_dims(tuple(dim), ndim)
        if not axes and empty_means_all:
            return tuple(range(ndim))
    elif isinstance(dim, bool) or not (isinstance(dim, int) or hasattr(dim, "__index__")):
        raise TypeError(f"{op}(): argument 'dim' must be tuple of ints, not "
                        f"{type(dim).__name__}")
    else:
        axes = (wrap_dim(dim, ndim),)
    if ndim == 0:
        return ()
    return tuple(sorted(axes))


def _empty_dim_given(dim: Any, ndim: int, shape: tuple) -> Any:
    """The first entry of ``dim`` (as the user wrote it) naming an empty dimension, or None.

    amax/amin and the inf norms check this before looking for duplicates, and
    print the dim unwrapped.
    """
    dims = tuple(dim) if _is_dim_sequence(dim) else (dim,)
    for d in dims:
        i = wrap_dim(d, ndim)
        if ndim and shape[i] == 0:
            return d
    return None


def _single_dim(op: str, ndim: int, dim: Any, position: int = 2) -> int | None:
    """An ``int dim`` argument (cumsum, softmax, max(dim)...); None for a 0-dim input."""
    if isinstance(dim, bool) or not (isinstance(dim, int) or (hasattr(dim, "__index__")
                                                             and not _is_dim_sequence(dim))):
        raise TypeError(f"{op}(): argument 'dim' (position {position}) must be int, not "
                        f"{type(dim).__name__}")
    d = wrap_dim(dim, ndim)
    return d if ndim else None


def _keep_shape(shape: tuple, axes: tuple) -> tuple:
    return tuple(1 if i in axes else s for i, s in enumerate(shape))


def _out_shape(shape: tuple, axes: tuple, keepdim: bool) -> tuple:
    if keepdim:
        return _keep_shape(shape, axes)
    return tuple(s for i, s in enumerate(shape) if i not in axes)


def _count(shape: tuple, axes: tuple) -> int:
    n = 1
    for a in axes:
        n *= shape[a]
    return n


def _acc(data: np.ndarray) -> np.ndarray:
    """Data to reduce: float16 and bfloat16 go up to float32 (Note [Reductions in float16])."""
    return data.astype(np.float32) if data.dtype == np.float16 or data.dtype.kind == "V" \
        else data


def _finish(out: Any, dt: np.dtype, shape: tuple) -> np.ndarray:
    out = np.asarray(out)
    if out.dtype != dt:
        out = out.astype(dt)
    if out.shape != shape:
        out = out.reshape(shape)
    return out


def _np_dtype_arg(dtype: Any) -> np.dtype | None:
    if dtype is None:
        return None
    if isinstance(dtype, _dtype.dtype):
        return dtype.np_dtype
    return _dtype.from_np(np.dtype(dtype)).np_dtype


def _scalar_name(d: np.dtype) -> str:
    return _dtype.from_np(d).scalar_name


def _check_autograd_dtype(input: Tensor, dt: np.dtype) -> None:
    """torch refuses to record a differentiable op whose output is not floating."""
    if dt.kind != "f" and _tls.mode == RECORDING and input._requires_grad:
        raise RuntimeError(f"Autograd not support dtype: {_scalar_name(dt)}")


def _restore(grad: Tensor, keep_shape: tuple) -> Tensor:
    """The gradient of a reduction with the reduced axes back as size-1 axes."""
    shape = grad._data.shape
    if shape == keep_shape:
        return grad
    from .shape import reshape, unsqueeze

    if len(shape) >= len(keep_shape):
        return reshape(grad, keep_shape)
    # Note [Reduced axes come back by unsqueeze]: torch restores each reduced axis with
    # its own unsqueeze, so a double-backward graph shows UnsqueezeBackward0 nodes, not a
    # ViewBackward0; the values are the same either way.
    j = 0
    for i, k in enumerate(keep_shape):
        if j < len(shape) and shape[j] == k:
            j += 1
        else:
            grad = unsqueeze(grad, i)
    return grad


def _expand(grad: Tensor, shape: tuple) -> Tensor:
    if grad._data.shape == shape:
        return grad
    from .shape import expand

    return expand(grad, shape)


def _constant(data: np.ndarray) -> Tensor:
    """A tensor that is never differentiated (masks, one-hot selections)."""
    return wrap(data, 0)


class _ReductionNode(UnaryNode):
    """Base of reduction nodes: remembers the input shape and the kept shape."""

    __slots__ = ("self_sizes", "keep_shape", "dim")

    def same_sum(self, tangent: Tensor) -> Tensor:
        """``tangent`` summed over this reduction's dims, to its output's shape."""
        if not self.dim:  # a 0-dim input
            return tangent
        keepdim = len(self._out_meta[0][0]) == len(self.self_sizes)
        if len(self.dim) == len(self.self_sizes) and not keepdim:
            return sum(tangent)
        return sum(tangent, self.dim, keepdim=keepdim)


def _record(cls: Any, input: Tensor, out: np.ndarray, axes: tuple) -> Tensor:
    res = unary(cls, input, out)
    node = node_of(res)
    if node is not None:
        shape = input._data.shape
        node.self_sizes = shape
        node.keep_shape = _keep_shape(shape, axes)
        node.dim = axes
    return res


# Note [Scalar nodes in backward formulas]
# torch's derivative formulas multiply and divide by C++ numbers (``grad / numel`` in
# mean's, ``2 / dof * grad`` in var's), which records ``mul(Tensor, Scalar)`` and
# ``div(Tensor, Scalar)``: MulBackward1 and DivBackward1, not the MulBackward0 / DivBackward0
# of ``x * 2`` written in Python.  A double-backward graph shows those names, so the
# reductions' backward rules build them here.  (bfloat16 keeps the tensor path: its
# arithmetic is torch's float rounding, Note [bfloat16 storage].)

class MulBackward1(UnaryNode):
    """``grad * number`` inside a backward formula (torch's ``mul(Tensor, Scalar)``)."""

    __slots__ = ("other",)

    def backward(self, grad: Tensor) -> tuple:
        return _scalar_op(MulBackward1, grad, self.other),


def _scalar_op(cls: Any, x: Tensor, other: Any) -> Tensor:
    """``x * other`` (MulBackward1) or ``x / other`` (DivBackward1) for a Python number."""
    data = x._data
    if data.dtype.kind not in "fc":
        return x * other if cls is MulBackward1 else x / other
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        out = np.multiply(data, other) if cls is MulBackward1 else np.divide(data, other)
    res = unary(cls, x, np.asarray(out, dtype=data.dtype))
    node = node_of(res)
    if node is not None:
        node.other = other
    return res


# -- sum / mean / prod --------------------------------------------------------------------

class SumBackward0(_ReductionNode):
    """Sum of all elements: the gradient is broadcast back to every element."""

    __slots__ = ()

    def backward(self, grad: Tensor) -> tuple:
        if type(self) is SumBackward0 and not grad._data.ndim:
            # ``x.sum()``: torch expands the 0-dim gradient directly
            return _expand(grad, self.self_sizes),
        return _expand(_restore(grad, self.keep_shape), self.self_sizes),

    def jvp(self, tangents: list) -> list:
        """Summing is linear: the tangent is the same sum of the tangent."""
        return [self.same_sum(tangents[0])]


class SumBackward1(SumBackward0):
    """Sum over ``dim``."""

    __slots__ = ()


def _sum_dtype(d: np.dtype) -> np.dtype:
    return np.dtype(np.int64) if d.kind in "biu" else d




@signature("sum(Tensor input, *, ScalarType? dtype=None)",
           "sum(Tensor input, IntArrayRef[1]? dim, bool keepdim=False, *, "
           "ScalarType? dtype=None, Tensor out=None)")
def sum(input: Tensor, dim: Any = NO_DIM, keepdim: bool = False, *,  # noqa: A001
        dtype: Any = None) -> Tensor:
    """Sum of elements; SumBackward0 without ``dim``, SumBackward1 with it.

    Integer and bool tensors sum to int64.

    >>> import npgrad
    >>> npgrad.tensor([[1., 2.], [3., 4.]]).sum(0)
    tensor([4., 6.])
    """
    data = input._data
    dt = _np_dtype_arg(dtype)
    if dt is not None:
        _check_autograd_dtype(input, dt)
        data = data.astype(dt, copy=False)
    out_dt = _sum_dtype(data.dtype) if dt is None else dt  # an explicit dtype is the result's
    explicit = dim is not NO_DIM
    if not explicit:
        dim = None
    axes = _reduce_axes("sum", data.ndim, dim)
    shape = _out_shape(data.shape, axes, keepdim)
    if out_dt.kind in "fV":
        out = np.sum(_acc(data), axis=axes)
    else:
        out = np.sum(data, axis=axes, dtype=out_dt)
    cls = SumBackward0 if not explicit and not keepdim else SumBackward1
    return _record(cls, input, _finish(out, out_dt, shape), axes)


class MeanBackward0(_ReductionNode):
    __slots__ = ("count",)

    def backward(self, grad: Tensor) -> tuple:
        # torch divides after expanding (DivBackward1 over ExpandBackward0)
        full = type(self) is MeanBackward0 and not grad._data.ndim
        g = grad if full else _restore(grad, self.keep_shape)
        from .loss import DivBackward1  # its one class lives with the losses, above this module

        return _scalar_op(DivBackward1, _expand(g, self.self_sizes), self.count),

    def jvp(self, tangents: list) -> list:
        """Linear, as the sum."""
        return [self.same_sum(tangents[0]) / self.count]


class MeanBackward1(MeanBackward0):
    __slots__ = ()


@signature("mean(Tensor input, *, ScalarType? dtype=None, Tensor out=None)",
           "mean(Tensor input, IntArrayRef[1]? dim, bool keepdim=False, *, "
           "ScalarType? dtype=None, Tensor out=None)")
def mean(input: Tensor, dim: Any = NO_DIM, keepdim: bool = False, *,
         dtype: Any = None) -> Tensor:
    """Arithmetic mean; floating (or an explicit floating ``dtype``) only.

    >>> import npgrad
    >>> npgrad.tensor([1., 2., 6.]).mean()
    tensor(3.)
    """
    data = input._data
    dt = _np_dtype_arg(dtype)
    if dt is None and data.dtype.kind not in "fV":
        raise RuntimeError("mean(): could not infer output dtype. Input dtype must be either a "
                           f"floating point or complex dtype. Got: {_scalar_name(data.dtype)}")
    if dt is not None:
        if dt.kind not in "fV":
            raise RuntimeError("mean(): could not infer output dtype. Optional dtype must be "
                               "either a floating point or complex dtype. Got: "
                               f"{_scalar_name(dt)}")
        data = data.astype(dt, copy=False)
    explicit = dim is not NO_DIM
    if not explicit:
        dim = None
    axes = _reduce_axes("mean", data.ndim, dim)
    n = _count(data.shape, axes)
    with np.errstate(invalid="ignore", divide="ignore"):
        out = np.sum(_acc(data), axis=axes) / np.asarray(n, dtype=_acc(data).dtype)
    cls = MeanBackward0 if not explicit and not keepdim else MeanBackward1
    res = _record(cls, input, _finish(out, data.dtype, _out_shape(data.shape, axes, keepdim)),
                  axes)
    node = node_of(res)
    if node is not None:
        node.count = n
    return res


class ProdBackward0(_ReductionNode):
    """Product: each element's gradient is the product of the others (zeros handled)."""

    __slots__ = ()
    saves_self = True
    saves_result = True

    def backward(self, grad: Tensor) -> tuple:
        x = saved(self, "self_")
        g = _restore(grad, self.keep_shape)
        zero = x._data == 0
        if not zero.any():
            return g * (_restore(saved(self, "result"), self.keep_shape) / x),
        if type(self) is ProdBackward0 and np.count_nonzero(zero) > 1:
            # torch's rule for the product of all elements: zeros once two of them are zero
            # (so NaNs elsewhere do not leak in, and no second derivative flows through)
            return _constant(np.zeros(x._data.shape, dtype=x._data.dtype)),
        # With zeros, "result / x" is useless.  The product of the others is split
        # into its nonzero part and its zero part, each written so that it stays
        # differentiable (second derivatives through the zeros are right):
        #   x_j != 0: (prod of nonzeros / x_j) * (prod of the zero elements)
        #   x_j == 0: prod of nonzeros * (1 if j is the only zero; the other zero's value
        #             if there are two; 0 with three or more, whose derivatives vanish too)
        axes = self.dim
        is_zero = _constant(zero)
        x_safe = where(is_zero, 1.0, x)
        p_nz = prod_over(x_safe, axes)
        zero_part = prod_over(where(is_zero, x, 1.0), axes)
        zero_sum = sum(where(is_zero, x, 0.0), axes, keepdim=True)
        n_zero = zero.sum(axis=axes, keepdims=True)
        one = _constant(n_zero == 1)
        two = _constant(n_zero == 2)
        at_zero = p_nz * (one + two * (zero_sum - x))
        elsewhere = (p_nz / x_safe) * zero_part
        return g * where(is_zero, at_zero, elsewhere),


class ProdBackward1(ProdBackward0):
    __slots__ = ()


def prod_over(input: Tensor, axes: tuple) -> Tensor:
    """Product over several axes (keepdim), as repeated single-axis prods: for backward rules."""
    out = input
    for a in axes:
        out = prod(out, a, True)
    return out


@signature("prod(Tensor input, *, ScalarType? dtype=None)",
           "prod(Tensor input, int64_t dim, bool keepdim=False, *, ScalarType? dtype=None, "
           "Tensor out=None)")
def prod(input: Tensor, dim: Any = None, keepdim: bool = False, *,
         dtype: Any = None) -> Tensor:
    """Product of elements (one ``dim`` at most, as in torch); ProdBackward0/1."""
    data = input._data
    if dim is not None and _is_dim_sequence(dim):
        raise TypeError("prod() received an invalid combination of arguments - got (Tensor, "
                        f"{type(dim).__name__}), but expected one of:\n"
                        " * (Tensor input, *, torch.dtype dtype = None)\n"
                        " * (Tensor input, int dim, bool keepdim = False, *, torch.dtype "
                        "dtype = None, Tensor out = None)\n")
    dt = _np_dtype_arg(dtype)
    if dt is not None:
        _check_autograd_dtype(input, dt)
        data = data.astype(dt, copy=False)
    out_dt = _sum_dtype(data.dtype) if dt is None else dt  # an explicit dtype is the result's
    if dim is None:
        axes = tuple(range(data.ndim))
    else:
        d = _single_dim("prod", data.ndim, dim)
        axes = () if d is None else (d,)
    out = np.prod(_acc(data) if out_dt.kind == "f" else data, axis=axes, dtype=None
                  if out_dt.kind == "f" else out_dt)
    cls = ProdBackward0 if dim is None else ProdBackward1
    return _record(cls, input, _finish(out, out_dt, _out_shape(data.shape, axes, keepdim)),
                   axes)


# -- amax / amin / max / min ---------------------------------------------------------------

def _check_nonempty(op: str, data: np.ndarray, axes: tuple, specified: bool,
                    error: type = RuntimeError, hint: bool = True) -> None:
    if data.size:
        return
    if not specified:
        msg = f"{op}(): Expected reduction dim to be specified for input.numel() == 0."
        if hint:
            msg += " Specify the reduction dim with the 'dim' argument."
        raise error(msg)
    for a in axes:
        if data.shape[a] == 0:
            raise IndexError(f"{op}(): Expected reduction dim {a} to have non-zero size.")


class AmaxBackward0(_ReductionNode):
    """Gradient shared evenly among the elements equal to the extremum."""

    __slots__ = ()
    saves_self = True
    saves_result = True

    def backward(self, grad: Tensor) -> tuple:
        x = saved(self, "self_")._data
        r = saved(self, "result")._data.reshape(self.keep_shape)
        mask = x == r
        count = mask.sum(axis=self.dim, keepdims=True)
        with np.errstate(divide="ignore", invalid="ignore"):
            scale = mask / count
        return _restore(grad, self.keep_shape) * _constant(scale.astype(x.dtype, copy=False)),


class AminBackward0(AmaxBackward0):
    __slots__ = ()


def _amax_like(op: str, cls: Any, np_fn: Any, input: Tensor, dim: Any,
               keepdim: bool) -> Tensor:
    data = input._data
    specified = dim is not None and not (_is_dim_sequence(dim) and not dim)
    if specified and data.size == 0:
        bad = _empty_dim_given(dim, data.ndim, data.shape)
        if bad is not None:
            raise IndexError(f"{op}(): Expected reduction dim {bad} to have non-zero size.")
    axes = _reduce_axes(op, data.ndim, dim)
    _check_nonempty(op, data, axes, specified)
    out = np_fn(data, axis=axes) if axes else data.copy()
    return _record(cls, input, _finish(out, data.dtype, _out_shape(data.shape, axes, keepdim)),
                   axes)


@signature("amax(Tensor input, IntArrayRef[1] dim=None, bool keepdim=False, *, Tensor out=None)")
def amax(input: Tensor, dim: Any = (), keepdim: bool = False) -> Tensor:
    """Largest element over ``dim`` (all by default); ties share the gradient evenly."""
    return _amax_like("amax", AmaxBackward0, np.amax, input, dim, keepdim)


@signature("amin(Tensor input, IntArrayRef[1] dim=None, bool keepdim=False, *, Tensor out=None)")
def amin(input: Tensor, dim: Any = (), keepdim: bool = False) -> Tensor:
    """Smallest element over ``dim`` (all by default); ties share the gradient evenly."""
    return _amax_like("amin", AminBackward0, np.amin, input, dim, keepdim)


class _EvenlyDistributeNode(UnaryNode):
    """A full reduction that picks one value (max(), median()...): torch's evenly_distribute
    rule shares the gradient between every element equal to the result (NaN selects the NaNs)."""

    __slots__ = ()
    saves_self = True
    saves_result = True

    def backward(self, grad: Tensor) -> tuple:
        x = saved(self, "self_")._data
        r = saved(self, "result")._data
        mask = np.isnan(x) if np.isnan(r) else x == r
        scale = (mask / mask.sum()).astype(x.dtype, copy=False)
        return grad * _constant(scale),


class MaxBackward1(_EvenlyDistributeNode):
    """``max()`` of all elements."""

    __slots__ = ()


class MinBackward1(MaxBackward1):
    __slots__ = ()


class MaxBackward0(_ReductionNode):
    """``max(dim)``: the gradient goes to the element at the returned index."""

    __slots__ = ("indices",)
    _saved_fields = ("self_", "result", "indices")

    def backward(self, grad: Tensor) -> tuple:
        idx = saved(self, "indices")._data
        shape = self.self_sizes
        if not self.dim:  # 0-dim input
            return grad,
        d = self.dim[0]
        positions = np.arange(shape[d]).reshape((-1,) + (1,) * (len(shape) - d - 1))
        onehot = positions == idx.reshape(self.keep_shape)
        return _restore(grad, self.keep_shape) * _constant(onehot),


class MinBackward0(MaxBackward0):
    __slots__ = ()


class _ReturnType(tuple):
    """A (values, indices) pair printed like torch's ``torch.return_types`` named tuples."""

    __slots__ = ()
    n_fields = 2
    n_sequence_fields = 2
    n_unnamed_fields = 0

    def __new__(cls, values: Any, indices: Any = None) -> Any:
        if indices is None:  # built from one sequence, as torch allows
            values, indices = values
        return tuple.__new__(cls, (values, indices))

    @property
    def values(self) -> Tensor:
        return self[0]

    @property
    def indices(self) -> Tensor:
        return self[1]

    def __repr__(self) -> str:
        return (f"{_dtype.repr_prefix()}return_types.{type(self).__name__}(\nvalues={self[0]!r},\n"
                f"indices={self[1]!r})")

    def __reduce__(self) -> tuple:
        return (type(self), (self[0], self[1]))


def _return_type(name: str) -> type:
    cls = type(name, (_ReturnType,), {"__slots__": ()})
    cls.__module__ = "npgrad.return_types"
    cls.__qualname__ = name
    return cls


return_type_max = _return_type("max")
return_type_min = _return_type("min")


def _max_with_dim(op: str, input: Tensor, dim: Any, keepdim: bool) -> Any:
    data = input._data
    if _is_dim_sequence(dim):
        raise TypeError(f"{op}() received an invalid combination of arguments - got (Tensor, "
                        f"{type(dim).__name__}), but expected one of:\n"
                        " * (Tensor input, *, Tensor out = None)\n"
                        " * (Tensor input, Tensor other, *, Tensor out = None)\n"
                        " * (Tensor input, int dim, bool keepdim = False, *, tuple of Tensors "
                        "out = None)\n")
    d = _single_dim(op, data.ndim, dim)
    axes = () if d is None else (d,)
    _check_nonempty(op, data, axes, True)
    if d is None:
        values, idx = data.copy(), np.zeros((), np.int64)
    else:
        arg = np.argmax if op == "max" else np.argmin
        idx = np.expand_dims(arg(data, axis=d), d)
        values = np.take_along_axis(data, idx, axis=d)
        if not keepdim:
            values, idx = np.squeeze(values, d), np.squeeze(idx, d)
    idx = idx.astype(np.int64, copy=False)
    cls = MaxBackward0 if op == "max" else MinBackward0
    res = _record(cls, input, np.asarray(values, order="C"), axes)
    indices = wrap(np.asarray(idx, order="C"), _tls.mode)
    node = node_of(res)
    if node is not None:
        node.indices = SavedTensor(indices, True)
    return (return_type_max if op == "max" else return_type_min)(res, indices)


def _max_all(op: str, input: Tensor) -> Tensor:
    data = input._data
    _check_nonempty(op, data, (), False)
    out = np.amax(data) if op == "max" else np.amin(data)
    return unary(MaxBackward1 if op == "max" else MinBackward1, input, _finish(out, data.dtype,
                                                                             ()))


@signature("max(Tensor input, *, Tensor out=None)",
           "max(Tensor input, Tensor other, *, Tensor out=None)",
           "max(Tensor input, int64_t dim, bool keepdim=False, *, TensorList[2] out=None)")
def max(input: Tensor, dim: Any = None, keepdim: bool = False, *,  # noqa: A001
        other: Any = None) -> Any:
    """``max(t)``: largest element (MaxBackward1); ``max(t, dim)``: (values, indices)
    (MaxBackward0); ``max(t, other_tensor)``: elementwise maximum.

    >>> import npgrad
    >>> npgrad.tensor([[1., 5.], [7., 2.]]).max(1).indices
    tensor([1, 0])
    """
    if other is not None:
        return maximum(input, other)
    if is_tensor(dim):
        return maximum(input, dim)
    if dim is None:
        return _max_all("max", input)
    return _max_with_dim("max", input, dim, keepdim)


@signature("min(Tensor input, *, Tensor out=None)",
           "min(Tensor input, Tensor other, *, Tensor out=None)",
           "min(Tensor input, int64_t dim, bool keepdim=False, *, TensorList[2] out=None)")
def min(input: Tensor, dim: Any = None, keepdim: bool = False, *,  # noqa: A001
        other: Any = None) -> Any:
    """Mirror of :func:`max` (MinBackward1, MinBackward0, minimum)."""
    if other is not None:
        return minimum(input, other)
    if is_tensor(dim):
        return minimum(input, dim)
    if dim is None:
        return _max_all("min", input)
    return _max_with_dim("min", input, dim, keepdim)


# -- var / std ----------------------------------------------------------------------------

def _var_args(op: str, data: np.ndarray, dim: Any, unbiased: Any,
              correction: Any) -> tuple:
    if isinstance(dim, bool):  # var(True): the lone positional is `unbiased`
        dim, unbiased = None, dim
    if unbiased is not None and correction is not None:
        raise TypeError(f"{op}() received an invalid combination of arguments - got both "
                        "'unbiased' and 'correction'")
    if data.dtype.kind != "f":
        raise RuntimeError("std and var only support floating point and complex dtypes")
    if correction is None:
        correction = 1 if unbiased is None or unbiased else 0
    elif is_tensor(correction):
        correction = correction.item()
    axes = _reduce_axes(op, data.ndim, dim)
    return axes, correction


def _var_forward(op: str, data: np.ndarray, axes: tuple, correction: Any,
                 keepdim: bool) -> np.ndarray:
    acc = _acc(data)
    n = _count(data.shape, axes)
    dof = n - correction
    if dof <= 0:
        warnings.warn(f"{op}(): degrees of freedom is <= 0. Correction should be strictly less "
                      "than the reduction factor (input numel divided by output numel).",
                      UserWarning, stacklevel=3)
    with np.errstate(invalid="ignore", divide="ignore"):
        mu = np.sum(acc, axis=axes, keepdims=True) / np.asarray(n, acc.dtype)
        dev = acc - mu
        ss = np.sum(dev * dev, axis=axes)
        out = ss / np.asarray(_builtin_max(dof, 0), acc.dtype)
    return _finish(out, data.dtype, _out_shape(data.shape, axes, keepdim))


class VarBackward0(_ReductionNode):
    # full: no ``dim`` given (or a 0-dim input), torch's whole-tensor branch of var_backward
    __slots__ = ("correction", "full")
    saves_self = True

    def backward(self, grad: Tensor) -> tuple:
        return _var_backward(self, grad),


def _var_backward(node: Any, g: Tensor) -> Tensor:
    """``2 / dof * grad * (x - mean)``, recorded as torch's var_backward records it.

    Without ``dim`` the 0-dim gradient broadcasts against ``x - x.mean()``; with
    ``dim`` the reduced axes come back by unsqueeze (only for inputs of 2+ dims: a
    1-dim input's 0-dim gradient broadcasts) and the mean keeps its dims.
    """
    x = saved(node, "self_")
    dof = _count(node.self_sizes, node.dim) - node.correction
    with np.errstate(divide="ignore"):
        factor = float(np.float64(2.0) / np.float64(dof))
    if node.full:
        return _scalar_op(MulBackward1, g, factor) * (x - mean(x))
    if len(node.self_sizes) > 1:
        g = _restore(g, node.keep_shape)
    return _scalar_op(MulBackward1, g, factor) * (x - mean(x, node.dim, True))


class StdBackward0(VarBackward0):
    __slots__ = ()
    saves_result = True

    def backward(self, grad: Tensor) -> tuple:
        # torch: (grad / (result * 2)).masked_fill_(result == 0, 0), then var's rule
        r = saved(self, "result")
        g = masked_fill(grad / _scalar_op(MulBackward1, r, 2), r == 0, 0)
        return _var_backward(self, g),


@signature("var(Tensor input, IntArrayRef[1]? dim, bool unbiased=True, bool keepdim=False, *, "
           "Tensor out=None)",
           "var(Tensor input, IntArrayRef[1]? dim=None, *, Scalar? correction=None, "
           "bool keepdim=False, Tensor out=None)",
           "var(Tensor input, bool unbiased=True)")
def var(input: Tensor, dim: Any = None, unbiased: Any = None, keepdim: bool = False, *,
        correction: Any = None) -> Tensor:
    """Variance (Bessel-corrected unless ``unbiased=False`` or ``correction=0``); VarBackward0.

    >>> import npgrad
    >>> npgrad.tensor([1., 2., 3.]).var()
    tensor(1.)
    """
    data = input._data
    axes, corr = _var_args("var", data, dim, unbiased, correction)
    res = _record(VarBackward0, input, _var_forward("var", data, axes, corr, keepdim), axes)
    node = node_of(res)
    if node is not None:
        node.correction = corr
        node.full = dim is None or isinstance(dim, bool) or data.ndim == 0
    return res


@signature("std(Tensor input, IntArrayRef[1]? dim, bool unbiased=True, bool keepdim=False, *, "
           "Tensor out=None)",
           "std(Tensor input, IntArrayRef[1]? dim=None, *, Scalar? correction=None, "
           "bool keepdim=False, Tensor out=None)",
           "std(Tensor input, bool unbiased=True)")
def std(input: Tensor, dim: Any = None, unbiased: Any = None, keepdim: bool = False, *,
        correction: Any = None) -> Tensor:
    """Standard deviation: the square root of :func:`var`; StdBackward0."""
    data = input._data
    axes, corr = _var_args("std", data, dim, unbiased, correction)
    out = np.sqrt(_var_forward("std", data, axes, corr, keepdim))
    res = _record(StdBackward0, input, out, axes)
    node = node_of(res)
    if node is not None:
        node.correction = corr
        node.full = dim is None or isinstance(dim, bool) or data.ndim == 0
    return res


# -- logsumexp ---------------------------------------------------------------------------

class LogsumexpBackward0(_ReductionNode):
    __slots__ = ()
    saves_self = True
    saves_result = True

    def backward(self, grad: Tensor) -> tuple:
        x = saved(self, "self_")
        r = _restore(saved(self, "result"), self.keep_shape)
        return _restore(grad, self.keep_shape) * exp(x - r),


def _np_logsumexp(data: np.ndarray, axes: tuple) -> np.ndarray:
    if not axes:
        return data.copy()
    m = np.amax(data, axis=axes, keepdims=True) if data.size else np.zeros(
        _keep_shape(data.shape, axes), data.dtype)
    m = np.where(np.isfinite(m), m, 0).astype(data.dtype, copy=False)
    with np.errstate(divide="ignore", under="ignore"):
        s = np.sum(np.exp(data - m), axis=axes, keepdims=True)
        return np.log(s) + m


@signature("logsumexp(Tensor input, IntArrayRef[1] dim, bool keepdim=False, *, Tensor out=None)")
def logsumexp(input: Tensor, dim: Any, keepdim: bool = False) -> Tensor:
    """``log(sum(exp(input), dim))`` computed without overflow; LogsumexpBackward0."""
    data = input._data
    if dim is None:
        raise TypeError("logsumexp(): argument 'dim' (position 2) must be tuple of ints, not "
                        "NoneType")
    if data.dtype.kind != "f":
        data = data.astype(_dtype.get_default_dtype().np_dtype)
    axes = _reduce_axes("logsumexp", data.ndim, dim)
    if _is_dim_sequence(dim) and not dim and data.ndim and data.size and not keepdim:
        raise RuntimeError("output with shape [] doesn't match the broadcast shape "
                           f"[{', '.join('1' for _ in data.shape)}]")
    out = _np_logsumexp(_acc(data), axes)
    return _record(LogsumexpBackward0, input,
                   _finish(out, data.dtype, _out_shape(data.shape, axes, keepdim)), axes)


# -- norm ----------------------------------------------------------------------------------

class LinalgVectorNormBackward0(_ReductionNode):
    """Gradients of the vector p-norms (torch's rules, including 0 at a zero norm)."""

    __slots__ = ("ord",)
    saves_self = True
    saves_result = True

    def backward(self, grad: Tensor) -> tuple:
        g = _restore(grad, self.keep_shape)
        r = _restore(saved(self, "result"), self.keep_shape)
        return norm_grad(self.ord, saved(self, "self_"), g, r, self.dim),


def norm_grad(p: float, x: Tensor, g: Tensor, r: Tensor, axes: tuple) -> Any:
    """Gradient of the p-norm ``r`` of ``x`` over ``axes`` (``g``, ``r`` with kept axes).

    Shared by the norm nodes, ``dist`` and ``cdist``; None for p = 0, as torch.
    """
    if p == 0:  # torch returns an undefined (None) gradient here
        return None
    if p == 1:
        return sign(x) * g
    if math.isinf(p):
        return _inf_norm_grad(x, g, r, axes)
    # Divide by a zero-free copy of the norm: the masked positions must not be 0/0
    # even in the rule's own derivative (forward mode and double backward read it).
    zero = r == 0
    r = where(zero, 1.0, r)
    if p == 2:
        return x * where(zero, 0.0, g / r)
    scaled = where(zero, 0.0, g / pow(r, p - 1))
    if p < 2:
        # torch's form for p < 2: |x|**(p - 1) is inf at x = 0 for p < 1 (torch zeroes it
        # there) and x * |x|**(p - 2) would be 0 * inf for 1 < p < 2
        scaled_x = sign(x) * pow(abs(x), p - 1)
        if p < 1:
            scaled_x = where(x == 0, 0.0, scaled_x)
        return scaled_x * scaled
    return x * pow(abs(x), p - 2) * scaled


def _inf_norm_grad(x: Tensor, g: Tensor, r: Tensor, axes: tuple) -> Tensor:
    """The max-norm's gradient is shared among the entries reaching the max."""
    xd = x._data
    mask = np.abs(xd) == r._data
    count = mask.sum(axis=axes, keepdims=True) if axes else mask.astype(int)
    # No entry reaches a NaN norm: then every gradient is 0 (torch's), not 0 / 0.
    scale = np.divide(mask, count, out=np.zeros(mask.shape, dtype=xd.dtype), where=count != 0)
    return sign(x) * g * _constant(scale)


def _np_vector_norm(data: np.ndarray, p: float, axes: tuple) -> np.ndarray:
    a = np.abs(data)
    if not axes:
        return a if p != 0 else (a != 0).astype(data.dtype)
    if p == 0:
        return np.sum(a != 0, axis=axes).astype(data.dtype)
    if p == math.inf:
        return np.amax(a, axis=axes)
    if p == -math.inf:
        return np.amin(a, axis=axes)
    if p == 1:
        return np.sum(a, axis=axes)
    if p == 2:
        return np.sqrt(np.sum(a * a, axis=axes))
    with np.errstate(divide="ignore", over="ignore"):
        return np.power(np.sum(np.power(a, p), axis=axes), 1.0 / p)


@signature("linalg_vector_norm(Tensor input, Scalar ord=2, IntArrayRef[1]? dim=None, "
           "bool keepdim=False, *, ScalarType? dtype=None, Tensor out=None)")
def vector_norm(input: Tensor, ord: Any = 2, dim: Any = None, keepdim: bool = False, *,
                dtype: Any = None) -> Tensor:
    """torch.linalg.vector_norm: the p-norm of the elements over ``dim``."""
    return _vector_norm(LinalgVectorNormBackward0, input, ord, dim, keepdim, dtype)


class NormBackward1(LinalgVectorNormBackward0):
    """ATen's ``norm(p, dim)`` (pairwise_distance records it); the same rule."""

    __slots__ = ()


def _vector_norm(cls: Any, input: Tensor, ord: Any, dim: Any, keepdim: bool,
                 dtype: Any) -> Tensor:
    data = input._data
    if data.dtype.kind != "f":
        raise RuntimeError("linalg.vector_norm: Expected a floating point or complex tensor as "
                           f"input. Got {_scalar_name(data.dtype)}")
    dt = _np_dtype_arg(dtype)
    if dt is not None:
        if dt.kind != "f":
            raise RuntimeError("linalg.vector_norm: dtype should be floating point or complex, "
                               f"but got {_scalar_name(dt)}")
        if dt.itemsize < data.dtype.itemsize:
            raise RuntimeError("linalg.vector_norm: the dtype of the input "
                               f"({_scalar_name(data.dtype)}) should be convertible without "
                               f"narrowing to the specified dtype ({_scalar_name(dt)})")
        data = data.astype(dt, copy=False)
    p = float(ord)
    if math.isinf(p) and data.size == 0:
        sign_txt = "-inf" if p < 0 else "inf"
        if dim is None or (_is_dim_sequence(dim) and not dim):
            raise RuntimeError(f"linalg.vector_norm cannot compute the {sign_txt} norm on an "
                               "empty tensor because the operation does not have an identity")
        bad = _empty_dim_given(dim, data.ndim, data.shape)
        if bad is not None:  # torch's text lacks the space after the dim
            raise RuntimeError(f"linalg.vector_norm cannot compute the {sign_txt} norm on the "
                               f"dimension {bad}because this dimension is empty and the "
                               "operation does not have an identity")
    axes = _reduce_axes("linalg.vector_norm", data.ndim, dim)
    out = _np_vector_norm(_acc(data), p, axes)
    res = _record(cls, input, _finish(out, data.dtype, _out_shape(data.shape, axes, keepdim)),
                  axes)
    node = node_of(res)
    if node is not None:
        node.ord = p
    return res


def norm(input: Tensor, p: Any = "fro", dim: Any = None, keepdim: bool = False,
         dtype: Any = None) -> Tensor:
    """torch.norm: vector norms over ``dim`` (``'fro'`` is the 2-norm of the elements).

    >>> import npgrad
    >>> npgrad.tensor([3., 4.]).norm()
    tensor(5.)
    """
    if isinstance(dim, int) and not isinstance(dim, bool):
        dims: Any = [dim]
    else:
        dims = dim
    if isinstance(p, str):
        if p == "fro" and (dim is None or isinstance(dim, int) or len(dim) <= 2):
            return vector_norm(input, 2, dims, keepdim, dtype=dtype)
        if dims is None:
            dims = list(range(input._data.ndim))
        if len(dims) != 2:
            raise RuntimeError("linalg.matrix_norm: dim must be a 2-tuple. Got "
                               + " ".join(str(d) for d in dims))
        if p == "nuc":
            raise NotImplementedError("npgrad does not implement the nuclear norm")
        raise RuntimeError(f"linalg.matrix_norm: Order {p} not supported.")
    return vector_norm(input, 2.0 if p is None else p, dims, keepdim, dtype=dtype)


# -- argmax / argmin / all / any (never differentiable) -------------------------------------

def _arg_reduce(op: str, input: Tensor, dim: Any, keepdim: bool) -> Tensor:
    data = input._data
    if dim is not None and (_is_dim_sequence(dim) or isinstance(dim, float)):
        _single_dim(op, data.ndim, dim)  # argument type errors come first
    if data.dtype.kind == "b":
        raise RuntimeError(f"{op}(): does not support bool input")
    fn = np.argmax if op == "argmax" else np.argmin
    if dim is None:
        _check_nonempty(op, data, (), False, IndexError, hint=False)
        out = np.asarray(fn(data.reshape(-1)) if data.ndim else 0, dtype=np.int64)
        if keepdim:
            out = out.reshape((1,) * data.ndim)
        return wrap(out, _tls.mode)
    d = _single_dim(op, data.ndim, dim)
    if d is None:
        return wrap(np.zeros((), np.int64), _tls.mode)
    _check_nonempty(op, data, (d,), True)
    out = fn(data, axis=d, keepdims=keepdim).astype(np.int64, copy=False)
    return wrap(np.asarray(out, order="C"), _tls.mode)


@signature("argmax(Tensor input, int64_t? dim=None, bool keepdim=False, *, Tensor out=None)")
def argmax(input: Tensor, dim: Any = None, keepdim: bool = False) -> Tensor:
    """Index of the largest element (the first one on ties); int64, no gradient."""
    return _arg_reduce("argmax", input, dim, keepdim)


@signature("argmin(Tensor input, int64_t? dim=None, bool keepdim=False, *, Tensor out=None)")
def argmin(input: Tensor, dim: Any = None, keepdim: bool = False) -> Tensor:
    """Index of the smallest element (the first one on ties); int64, no gradient."""
    return _arg_reduce("argmin", input, dim, keepdim)


def _logical_reduce(op: str, fn: Any, input: Tensor, dim: Any, keepdim: bool) -> Tensor:
    data = input._data
    axes = _reduce_axes(op, data.ndim, dim, empty_means_all=False)
    out = fn(data, axis=axes, keepdims=keepdim) if axes else data.astype(bool)
    out_dt = np.uint8 if data.dtype == np.uint8 else np.bool_
    return wrap(np.asarray(out).astype(out_dt, copy=False), _tls.mode)


@signature("all(Tensor input, *, Tensor out=None)",
           "all(Tensor input, IntArrayRef? dim=None, bool keepdim=False, *, Tensor out=None)",
           "all(Tensor input, int64_t dim, bool keepdim=False, *, Tensor out=None)")
def all(input: Tensor, dim: Any = None, keepdim: bool = False) -> Tensor:  # noqa: A001
    """Whether every element is nonzero (bool; uint8 stays uint8, as in torch)."""
    return _logical_reduce("all", np.all, input, dim, keepdim)


@signature("any(Tensor input, *, Tensor out=None)",
           "any(Tensor input, IntArrayRef? dim=None, bool keepdim=False, *, Tensor out=None)",
           "any(Tensor input, int64_t dim, bool keepdim=False, *, Tensor out=None)")
def any(input: Tensor, dim: Any = None, keepdim: bool = False) -> Tensor:  # noqa: A001
    """Whether some element is nonzero (bool; uint8 stays uint8, as in torch)."""
    return _logical_reduce("any", np.any, input, dim, keepdim)


# -- cumsum (its forward, _cumulative, serves cumprod too) ---------------------------------

def _cumulative(op: str, np_scan: Any, cls: Any, input: Tensor, dim: int, dtype: Any) -> Tensor:
    """The forward of cumsum and cumprod: ``np_scan`` along ``dim`` in torch's result dtype
    (ints and bools accumulate in int64), recorded as ``cls``."""
    data = input._data
    d = _single_dim(op, data.ndim, dim)
    dt = _np_dtype_arg(dtype)
    if dt is not None:
        _check_autograd_dtype(input, dt)
        data = data.astype(dt, copy=False)
    out_dt = _sum_dtype(data.dtype) if dt is None else dt  # an explicit dtype is the result's
    if d is None:
        out = data.astype(out_dt)
    else:
        out = np_scan(_acc(data), axis=d, dtype=None if out_dt.kind == "f" else out_dt)
    res = unary(cls, input, _finish(out, out_dt, data.shape))
    node = node_of(res)
    if node is not None:
        node.dim = d
    return res


def _reverse_cumsum(t: Tensor, d: int) -> Tensor:
    """``sum_{j >= i} t_j`` along ``d``, written as total - cumsum + t so that it stays in
    npgrad ops."""
    return sum(t, d, True) - cumsum(t, d) + t


class CumsumBackward0(UnaryNode):
    """The gradient of a running sum is the reversed running sum of the gradient."""

    __slots__ = ("dim",)

    def backward(self, grad: Tensor) -> tuple:
        d = self.dim
        if d is None:
            return grad,
        return _reverse_cumsum(grad, d),


@signature("cumsum(Tensor input, int64_t dim, *, ScalarType? dtype=None, Tensor out=None)")
def cumsum(input: Tensor, dim: int, *, dtype: Any = None) -> Tensor:
    """Running sum along ``dim`` (ints and bools accumulate in int64); CumsumBackward0."""
    return _cumulative("cumsum", np.cumsum, CumsumBackward0, input, dim, dtype)


# -- cumprod / cummax / cummin / logcumsumexp ---------------------------------------------------
# Note [Scan gradients as pair sums]
# The gradient of a scan output j with respect to input i (i <= j) is written as a
# tensor over the pair (i, j): axis ``dim`` holds i, a new axis right after it holds j,
# and the gradient is the masked sum over j.  That costs n times the input's memory
# along ``dim`` but stays exact where the short formulas divide by zero (cumprod
# with zeros) or overflow (logcumsumexp), and it is made of differentiable ops only.

def _pair_masks(n: int, d: int, ndim: int) -> tuple:
    """Constant masks over (i at ``d``, j at ``d + 1``): ``j >= i`` and ``j == i``."""
    i = np.arange(n).reshape(n, 1)
    j = np.arange(n).reshape(1, n)
    tail = (1,) * (ndim - d - 1)
    return ((j >= i).reshape((n, n) + tail), (j == i).reshape((n, n) + tail))


def _sum_pairs(terms: Tensor, d: int) -> Tensor:
    """Sum a pair tensor over j (axis ``d + 1``), leaving i at axis ``d``."""
    return sum(terms, d + 1)


# Note [Cumprod's gradient without create_graph]
# torch computes cumprod's gradient two ways: with create_graph, as the sum over j >= k of
# grad_j times the running product with x_k left out (differentiable again: the pair sums
# below); without it, in O(n): ``reversed_cumsum(y * grad) / x`` before the first zero z1,
# 0 after it, and at z1 ``y[z1-1] * sum_{z1 <= j < z2} grad_j * prod_{z1 < i <= j} x_i``.
# Both are the derivative where everything is finite, but NaN and inf travel differently
# (a NaN after the first zero reaches nothing before it in the O(n) form), so the backward
# picks torch's formula by whether it is recorded.

def _flip_cumsum(a: np.ndarray, d: int) -> np.ndarray:
    """``sum_{j >= i} a_j`` along ``d`` as torch's flip / cumsum / flip (no inf - inf)."""
    return np.flip(np.cumsum(np.flip(a, d), axis=d), d)


def _cumprod_grad_np(g: np.ndarray, x: np.ndarray, y: np.ndarray, d: int) -> np.ndarray:
    """torch's O(n) gradient of ``y = cumprod(x, d)`` (Note [Cumprod's gradient without
    create_graph])."""
    with np.errstate(all="ignore"):
        w = y * g
        is_zero = x == 0
        if not is_zero.any():
            return (_flip_cumsum(w, d) / x).astype(g.dtype, copy=False)
        zeros_so_far = np.cumsum(is_zero, axis=d)
        before = zeros_so_far == 0
        out = np.where(before, _flip_cumsum(np.where(before, w, 0), d) / x, 0)
        upto_second = zeros_so_far == 1
        first_idx = np.argmax(upto_second, axis=d, keepdims=True)
        first = np.zeros(x.shape, dtype=bool)
        np.put_along_axis(first, first_idx, True, axis=d)
        first &= upto_second
        between = upto_second & ~first
        run = np.cumprod(np.where(between, x, 1), axis=d)
        at_first = np.sum(run * np.where(upto_second, g, 0), axis=d, keepdims=True)
        prev = np.take_along_axis(y, np.maximum(first_idx - 1, 0), axis=d)
        at_first = at_first * np.where(first_idx == 0, 1, prev)
        out = np.where(first, at_first, out)
    return np.ascontiguousarray(out, dtype=g.dtype)


class CumprodBackward0(UnaryNode):
    """Running product; zeros in the input get their exact gradient (Note [Scan gradients
    as pair sums])."""

    __slots__ = ("dim",)
    saves_self = True
    saves_result = True

    def backward(self, grad: Tensor) -> tuple:
        d = self.dim
        if d is None:
            return grad,
        from .shape import unsqueeze

        x = saved(self, "self_")
        if _tls.mode != RECORDING:  # Note [Cumprod's gradient without create_graph]
            return wrap(_cumprod_grad_np(grad._data, x._data, saved(self, "result")._data, d),
                        _tls.mode),
        if not (x._data == 0).any():  # torch's flip / cumsum / flip: no inf - inf
            from .shape import flip

            return flip(cumsum(flip(grad * saved(self, "result"), (d,)), d), (d,)) / x,
        later, same = _pair_masks(x._data.shape[d], d, x._data.ndim)
        # others[i, j] = prod_{k <= j, k != i} x_k: the running product with x_i set to 1
        others = cumprod(where(_constant(same), 1.0, unsqueeze(x, d)), d + 1)
        terms = where(_constant(later), unsqueeze(grad, d) * others, 0.0)
        return _sum_pairs(terms, d),


@signature("cumprod(Tensor input, int64_t dim, *, ScalarType? dtype=None, Tensor out=None)")
def cumprod(input: Tensor, dim: int, *, dtype: Any = None) -> Tensor:
    """Running product along ``dim`` (ints and bools in int64); CumprodBackward0.

    >>> import npgrad
    >>> npgrad.tensor([1., 2., 3.]).cumprod(0)
    tensor([1., 2., 6.])
    """
    return _cumulative("cumprod", np.cumprod, CumprodBackward0, input, dim, dtype)


class CummaxBackward0(UnaryNode):
    """Each output took its value from the input at its index: the gradients add up there."""

    __slots__ = ("dim", "indices")
    _saved_fields = ("self_", "result", "indices")

    def backward(self, grad: Tensor) -> tuple:
        if self.dim is None:
            return grad,
        from .sorting import _put_back

        idx = saved(self, "indices")._data
        return _put_back(grad, idx, self.dim, idx.shape),


class CumminBackward0(CummaxBackward0):
    __slots__ = ()


return_type_cummax = _return_type("cummax")
return_type_cummin = _return_type("cummin")


def _cum_extremum(op: str, input: Tensor, dim: int) -> Any:
    data = input._data
    d = _single_dim(op, data.ndim, dim)
    if d is None:
        values, idx = data.copy(), np.zeros((), np.int64)
    else:
        better = np.greater_equal if op == "cummax" else np.less_equal
        moved = np.moveaxis(data, d, 0)
        values = np.empty_like(moved)
        idx = np.empty(moved.shape, np.int64)
        if moved.shape[0]:
            best, at = moved[0].copy(), np.zeros(moved.shape[1:], np.int64)
            values[0], idx[0] = best, at
            for k in range(1, moved.shape[0]):
                cur = moved[k]
                # ties move the index forward; a NaN, once met, is kept
                take = better(cur, best) | np.isnan(cur) if data.dtype.kind == "f" else \
                    better(cur, best)
                if data.dtype.kind == "f":
                    take &= ~np.isnan(best) | np.isnan(cur)
                best = np.where(take, cur, best)
                at = np.where(take, k, at)
                values[k], idx[k] = best, at
        values, idx = np.moveaxis(values, 0, d), np.moveaxis(idx, 0, d)
    cls = CummaxBackward0 if op == "cummax" else CumminBackward0
    res = unary(cls, input, np.asarray(values, order="C"))
    indices = wrap(np.asarray(idx, order="C"), _tls.mode)
    node = node_of(res)
    if node is not None:
        node.dim = d
        node.indices = SavedTensor(indices, True)
    return (return_type_cummax if op == "cummax" else return_type_cummin)(res, indices)


@signature("cummax(Tensor input, int64_t dim, *, TensorList[2] out=None)")
def cummax(input: Tensor, dim: int) -> Any:
    """Running maximum along ``dim`` and the index it came from (the last one on ties).

    >>> import npgrad
    >>> npgrad.tensor([1., 3., 2.]).cummax(0).indices
    tensor([0, 1, 1])
    """
    return _cum_extremum("cummax", input, dim)


@signature("cummin(Tensor input, int64_t dim, *, TensorList[2] out=None)")
def cummin(input: Tensor, dim: int) -> Any:
    """Running minimum along ``dim`` and the index it came from (the last one on ties)."""
    return _cum_extremum("cummin", input, dim)


class LogcumsumexpBackward0(UnaryNode):
    """``d out_j / d x_i = exp(x_i - out_j)`` for ``j >= i``, never above 1 (Note [Scan
    gradients as pair sums])."""

    __slots__ = ("dim",)
    saves_self = True
    saves_result = True

    def backward(self, grad: Tensor) -> tuple:
        d = self.dim
        if d is None:
            return grad,
        from .shape import unsqueeze

        x = saved(self, "self_")
        later, _ = _pair_masks(x._data.shape[d], d, x._data.ndim)
        # masked pairs get -inf, not a large exponent: exp's own derivative must stay finite
        gap = where(_constant(later), unsqueeze(x, d + 1) - unsqueeze(saved(self, "result"), d),
                    -math.inf)
        return _sum_pairs(unsqueeze(grad, d) * exp(gap), d),


@signature("logcumsumexp(Tensor input, int64_t dim, *, Tensor out=None)")
def logcumsumexp(input: Tensor, dim: int) -> Tensor:
    """``log(cumsum(exp(input), dim))`` without overflow; LogcumsumexpBackward0.

    >>> import npgrad
    >>> npgrad.tensor([0., 0.]).logcumsumexp(0)
    tensor([0.0000, 0.6931])
    """
    data = input._data
    d = _single_dim("logcumsumexp", data.ndim, dim)
    if data.dtype.kind != "f":
        raise NotImplementedError("\"logcumsumexp_out_cpu\" not implemented for "
                                  f"'{_scalar_name(data.dtype)}'")
    acc = _acc(data)
    if d is None:
        out = acc.copy()
    else:
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            out = np.logaddexp.accumulate(acc, axis=d) if acc.size else acc.copy()
    res = unary(LogcumsumexpBackward0, input, _finish(out, data.dtype, data.shape))
    node = node_of(res)
    if node is not None:
        node.dim = d
    return res


# -- softmax / log_softmax ----------------------------------------------------------------

def _softmax_input(op: str, input: Tensor, dim: Any, dtype: Any) -> tuple:
    data = input._data
    d = _single_dim(op, data.ndim, dim)
    dt = _np_dtype_arg(dtype)
    if dt is not None:
        data = data.astype(dt, copy=False)
    if data.dtype.kind not in "fV" and data.size:
        last = d is None or d == data.ndim - 1
        kernel = f"{op}_lastdim_kernel_impl" if last else f"{op}_kernel_impl"
        raise NotImplementedError(f"\"{kernel}\" not implemented for "
                                  f"'{_scalar_name(data.dtype)}'")
    return data, d


class SoftmaxBackward0(UnaryNode):
    __slots__ = ("dim",)
    saves_result = True

    def backward(self, grad: Tensor) -> tuple:
        y = saved(self, "result")
        if self.dim is None:
            return zeros_like_grad(grad),
        return y * (grad - sum(grad * y, self.dim, True)),


@signature("softmax(Tensor input, int64_t dim, ScalarType? dtype=None, *, Tensor out=None)")
def softmax(input: Tensor, dim: int, dtype: Any = None) -> Tensor:
    """``exp(x) / sum(exp(x), dim)``, computed stably; SoftmaxBackward0 (saves the result).

    >>> import npgrad
    >>> npgrad.tensor([0., 0.]).softmax(0)
    tensor([0.5000, 0.5000])
    """
    data, d = _softmax_input("softmax", input, dim, dtype)
    acc = _acc(data)
    if d is None:
        out = np.ones_like(acc)
    else:
        with np.errstate(invalid="ignore", under="ignore"):
            e = np.exp(acc - np.amax(acc, axis=d, keepdims=True)) if acc.size else acc.copy()
            out = e / np.sum(e, axis=d, keepdims=True)
    res = unary(SoftmaxBackward0, input, _finish(out, data.dtype, data.shape))
    node = node_of(res)
    if node is not None:
        node.dim = d
    return res


class LogSoftmaxBackward0(UnaryNode):
    __slots__ = ("dim",)
    saves_result = True

    def backward(self, grad: Tensor) -> tuple:
        y = saved(self, "result")
        if self.dim is None:
            return zeros_like_grad(grad),
        return grad - exp(y) * sum(grad, self.dim, True),


def _np_log_softmax(x: np.ndarray, dim: int) -> np.ndarray:
    """(x - max) - log(sum(exp(x - max))): shifting first keeps float32 exact near large x."""
    shift = np.max(x, axis=dim, keepdims=True)
    # a slice whose max is +inf is NaN throughout, as torch's (inf - inf poisons its sum); an
    # all -inf slice is shifted by 0 so that it is NaN too rather than raising
    shift = np.where(np.isneginf(shift), 0, shift)
    shifted = x - shift
    with np.errstate(divide="ignore"):
        return shifted - np.log(np.sum(np.exp(shifted), axis=dim, keepdims=True))


@signature("log_softmax(Tensor input, int64_t dim, ScalarType? dtype=None, *, Tensor out=None)")
def log_softmax(input: Tensor, dim: int, dtype: Any = None) -> Tensor:
    """``x - logsumexp(x, dim)``; LogSoftmaxBackward0 (saves the result)."""
    data, d = _softmax_input("log_softmax", input, dim, dtype)
    acc = _acc(data)
    if d is None:
        out = np.zeros_like(acc)
    else:
        out = _np_log_softmax(acc, d) if acc.size else acc.copy()
    res = unary(LogSoftmaxBackward0, input, _finish(out, data.dtype, data.shape))
    node = node_of(res)
    if node is not None:
        node.dim = d
    return res



# -- nansum / nanmean / count_nonzero ---------------------------------------------------------

class NansumBackward0(_ReductionNode):
    """Sum skipping NaNs: the NaN positions get a zero gradient."""

    __slots__ = ()
    saves_self = True

    def backward(self, grad: Tensor) -> tuple:
        x = saved(self, "self_")
        keep = _constant(~np.isnan(x._data)) if x._data.dtype.kind == "f" else 1
        return _expand(_restore(grad, self.keep_shape), self.self_sizes) * keep,


@signature("nansum(Tensor input, IntArrayRef[1]? dim=None, bool keepdim=False, *, "
           "ScalarType? dtype=None, Tensor out=None)")
def nansum(input: Tensor, dim: Any = None, keepdim: bool = False, *, dtype: Any = None) -> Tensor:
    """:func:`sum` treating NaN as zero; NansumBackward0.

    >>> import npgrad
    >>> npgrad.tensor([1., float('nan'), 2.]).nansum()
    tensor(3.)
    """
    data = input._data
    dt = _np_dtype_arg(dtype)
    if dt is not None:
        _check_autograd_dtype(input, dt)
        data = data.astype(dt, copy=False)
    out_dt = _sum_dtype(data.dtype) if dt is None else dt  # an explicit dtype is the result's
    axes = _reduce_axes("nansum", data.ndim, dim)
    if out_dt.kind == "f":
        out = np.nansum(_acc(data), axis=axes)
    else:
        out = np.sum(data, axis=axes, dtype=out_dt)
    return _record(NansumBackward0, input, _finish(out, out_dt, _out_shape(data.shape, axes,
                                                                           keepdim)), axes)


@signature("nanmean(Tensor input, IntArrayRef[1]? dim=None, bool keepdim=False, *, "
           "ScalarType? dtype=None, Tensor out=None)")
def nanmean(input: Tensor, dim: Any = None, keepdim: bool = False, *, dtype: Any = None) -> Tensor:
    """:func:`mean` of the non-NaN elements: ``nansum / count`` as in torch (DivBackward0).

    >>> import npgrad
    >>> npgrad.tensor([1., float('nan'), 2.]).nanmean()
    tensor(1.5000)
    """
    data = input._data
    if data.dtype.kind != "f":
        raise RuntimeError("nanmean(): expected input to have floating point or complex dtype "
                           f"but got {_dtype.from_np(data.dtype).legacy_type[:-6]}")
    count = sum(_constant(~np.isnan(data)), dim, keepdim)
    return nansum(input, dim, keepdim, dtype=dtype) / count


@signature("count_nonzero(Tensor input, int64_t? dim=None)",
           "count_nonzero(Tensor input, IntArrayRef dim)")
def count_nonzero(input: Tensor, dim: Any = None) -> Tensor:
    """Number of nonzero elements over ``dim`` (int64, no gradient).

    >>> import npgrad
    >>> npgrad.count_nonzero(npgrad.tensor([[0, 1], [2, 3]]), 0)
    tensor([1, 2])
    """
    data = input._data
    axes = _reduce_axes("count_nonzero", data.ndim, dim)
    out = np.count_nonzero(data, axis=axes) if axes else (data != 0)
    return wrap(np.asarray(out, dtype=np.int64), _tls.mode)


# -- dist / cdist --------------------------------------------------------------------------------

class DistBackward0(Node):
    """``norm(self - other, p)``; inputs (self, other), broadcast together."""

    __slots__ = ("self_", "other", "result", "p")
    _saved_fields = ("self_", "other", "result")

    def backward(self, grad: Tensor) -> tuple:
        diff = saved(self, "self_") - saved(self, "other")
        axes = tuple(range(diff._data.ndim))
        keep = (1,) * len(axes)
        g = norm_grad(self.p, diff, _restore(grad, keep), _restore(saved(self, "result"), keep),
                      axes)
        if g is None:
            return None, None
        return g, -g


@signature("dist(Tensor input, Tensor other, Scalar p=2, *, Tensor out=None)")
def dist(input: Tensor, other: Tensor, p: float = 2) -> Tensor:
    """The p-norm of ``input - other``; DistBackward0.

    >>> import npgrad
    >>> npgrad.dist(npgrad.tensor([3., 0.]), npgrad.tensor([0., 4.]))
    tensor(5.)
    """
    from ._core import binary_arrays, record, save_value
    from ._shape_util import broadcast_shapes

    if not is_tensor(other):
        raise TypeError(f"dist(): argument 'other' (position 2) must be Tensor, not "
                        f"{type(other).__name__}")
    a, b = binary_arrays(input, other)
    broadcast_shapes(a.shape, b.shape)
    p = float(p)
    out = _np_vector_norm(_acc(a - b), p, tuple(range(np.broadcast(a, b).ndim)))
    res, node = record(DistBackward0, (input, other), _finish(out, a.dtype, ()))
    if node is not None:
        node.self_, node.other, node.p = save_value(input), save_value(other), p
        node.result = SavedTensor(res, True)
    return res


class CdistBackward0(Node):
    """Distances between rows: ``out[..., i, j] = norm(x1[..., i, :] - x2[..., j, :], p)``."""

    __slots__ = ("x1", "x2", "result", "p")
    _saved_fields = ("x1", "x2", "result")

    def backward(self, grad: Tensor) -> tuple:
        from .shape import unsqueeze

        x1, x2 = saved(self, "x1"), saved(self, "x2")
        diff = unsqueeze(x1, -2) - unsqueeze(x2, -3)
        last = diff._data.ndim - 1
        g = norm_grad(self.p, diff, unsqueeze(grad, -1), unsqueeze(saved(self, "result"), -1),
                      (last,))
        if g is None:
            return None, None
        return sum(g, last - 1), -sum(g, last - 2)


def cdist(x1: Tensor, x2: Tensor, p: float = 2.0,
          compute_mode: str = "use_mm_for_euclid_dist_if_necessary") -> Tensor:
    """Pairwise p-norm distances between the rows of ``x1`` and of ``x2``; CdistBackward0.

    >>> import npgrad
    >>> npgrad.cdist(npgrad.tensor([[0., 0.]]), npgrad.tensor([[3., 4.], [0., 1.]]))
    tensor([[5., 1.]])
    """
    from ._core import record
    from ._shape_util import broadcast_shapes

    a, b = x1._data, x2._data
    if a.ndim < 2:
        raise RuntimeError(f"cdist only supports at least 2D tensors, X1 got: {a.ndim}D")
    if b.ndim < 2:
        raise RuntimeError(f"cdist only supports at least 2D tensors, X2 got: {b.ndim}D")
    if a.shape[-1] != b.shape[-1]:
        raise RuntimeError(f"X1 and X2 must have the same number of columns. X1: {a.shape[-1]} "
                           f"X2: {b.shape[-1]}")
    for name, d in (("X1", a.dtype), ("X2", b.dtype)):
        if d.kind not in "fV":
            raise RuntimeError(f"cdist only supports floating-point dtypes, {name} got: "
                               f"{_dtype.from_np(d).scalar_name}")
    if p < 0:
        raise RuntimeError("cdist only supports non-negative p values")
    broadcast_shapes(a.shape[:-2], b.shape[:-2])
    if a.dtype == np.float16:
        raise NotImplementedError("\"cdist\" not implemented for 'Half'")
    if a.dtype != b.dtype:
        raise RuntimeError(f"expected scalar type {_dtype.from_np(a.dtype).scalar_name} but found "
                           f"{_dtype.from_np(b.dtype).scalar_name}")
    diff = _acc(a[..., :, None, :] - b[..., None, :, :])
    out = _np_vector_norm(diff, float(p), (diff.ndim - 1,))
    res, node = record(CdistBackward0, (x1, x2), _finish(out, a.dtype, out.shape))
    if node is not None:
        node.x1, node.x2, node.p = SavedTensor(x1), SavedTensor(x2), float(p)
        node.result = SavedTensor(res, True)
    return res


# -- cosine_similarity / normalize / pairwise_distance (torch composes them) --------------------

@signature("cosine_similarity(Tensor x1, Tensor x2, int64_t dim=1, double eps=1e-08)")
def cosine_similarity(x1: Tensor, x2: Tensor, dim: int = 1, eps: float = 1e-8) -> Tensor:
    """``sum(x1 / |x1| * x2 / |x2|, dim)``, each norm at least ``eps``: torch's composition
    (grad_fn SumBackward1).

    >>> import npgrad
    >>> npgrad.nn.functional.cosine_similarity(npgrad.tensor([[1., 0.]]), npgrad.tensor([[1., 1.]]))
    tensor([0.7071])
    """
    from .pointwise import clamp_min

    n1 = clamp_min(vector_norm(x1, 2, dim, True), eps)
    n2 = clamp_min(vector_norm(x2, 2, dim, True), eps)
    return sum((x1 / n1) * (x2 / n2), dim)


def normalize(input: Tensor, p: float = 2.0, dim: int = 1, eps: float = 1e-12,
              out: Any = None) -> Tensor:
    """``input / max(norm(input, p, dim), eps)``, torch's composition (grad_fn DivBackward0).

    >>> import npgrad
    >>> npgrad.nn.functional.normalize(npgrad.tensor([[3., 4.]]))
    tensor([[0.6000, 0.8000]])
    """
    from .pointwise import clamp_min

    denom = clamp_min(vector_norm(input, p, dim, True), eps)
    return input / _expand(denom, input._data.shape)


@signature("pairwise_distance(Tensor x1, Tensor x2, double p=2, double eps=1e-06, "
           "bool keepdim=False)")
def pairwise_distance(x1: Tensor, x2: Tensor, p: float = 2.0, eps: float = 1e-6,
                      keepdim: bool = False) -> Tensor:
    """``norm(x1 - x2 + eps, p, -1)`` as torch computes it (grad_fn NormBackward1).

    >>> import npgrad
    >>> npgrad.nn.functional.pairwise_distance(npgrad.tensor([[3., 0.]]), npgrad.tensor([[0., 4.]]), eps=0.)
    tensor([5.])
    """
    diff = x1 - x2 + eps
    dim = -1 if diff._data.ndim else 0
    return _vector_norm(NormBackward1, diff, p, dim, keepdim, None)


# -- var_mean / std_mean / aminmax: one node, two outputs -------------------------------------

def _record_outputs(cls: Any, input: Tensor, outs: list) -> tuple:
    """Record ONE node of ``cls`` over ``input`` with several outputs (``output_nr`` 0, 1...).

    The multi-output form of Note [The per-op path]: the node is built when recording
    or when ``input`` carries a tangent (the forward rule then fills every output's).
    """
    from .._forward import FORWARD_EDGE, FW, PendingJvp, flush, has_tangent, tangent_of
    from .._mode import INFERENCE
    from .._tensor import edge_of, wrap_result

    mode = _tls.mode
    recorded = mode == RECORDING and input._requires_grad
    tangent = None
    if FW.active and not mode & INFERENCE and outs[0].dtype.kind == "f" and has_tangent(input):
        tangent = tangent_of(input)
        if tangent._data.dtype != input._data.dtype:
            tangent = tangent.to(input.dtype)
        flush()
    if not recorded and tangent is None:
        return [wrap(o, mode) for o in outs], None
    node = cls.__new__(cls)
    edge = edge_of(input) if recorded else (FORWARD_EDGE, 0)
    node._init_node((edge,), tuple((o.shape, o.dtype) for o in outs))
    res = [wrap_result(o, node, i) if recorded else wrap(o, mode) for i, o in enumerate(outs)]
    if tangent is not None:
        PendingJvp(node, [tangent], res, mode, recorded)
    return res, node


class VarMeanBackward0(_ReductionNode):
    """Outputs (var, mean): the input's gradient is the sum of both rules."""

    __slots__ = ("correction", "full")
    saves_self = True

    def backward(self, grad_var: Any, grad_mean: Any = None) -> tuple:
        saved(self, "self_")  # freed after a backward even when only the mean is used
        total = None
        if grad_var is not None:
            total = self._first(_restore(grad_var, self.keep_shape))
        if grad_mean is not None:
            g = _expand(_restore(grad_mean, self.keep_shape) / _count(self.self_sizes, self.dim),
                        self.self_sizes)
            total = g if total is None else total + g
        return total,

    def _first(self, g: Tensor) -> Tensor:
        return _var_backward(self, g)


class StdMeanBackward0(VarMeanBackward0):
    """Outputs (std, mean); the std's rule reads the std (output 0), recomputed here."""

    __slots__ = ()

    def _first(self, g: Tensor) -> Tensor:
        x = saved(self, "self_")
        if not self.dim:  # a 0-dim input: the var rule below gives zero anyway
            return _var_backward(self, g)
        r = std(x, self.dim, keepdim=True, correction=self.correction)
        g = where(r == 0, 0.0, g / (r * 2))
        return _var_backward(self, g)


def _var_mean(op: str, cls: Any, input: Tensor, dim: Any, unbiased: Any, keepdim: bool,
              correction: Any) -> tuple:
    data = input._data
    if data.dtype.kind != "f":
        raise RuntimeError(f"{op} only support floating point and complex dtypes")
    axes, corr = _var_args(op, data, dim, unbiased, correction)
    v = _var_forward(op, data, axes, corr, keepdim)
    if cls is StdMeanBackward0:
        v = np.sqrt(v)
    with np.errstate(invalid="ignore", divide="ignore"):
        m = np.sum(_acc(data), axis=axes) / np.asarray(_count(data.shape, axes), _acc(data).dtype)
    m = _finish(m, data.dtype, v.shape)
    (rv, rm), node = _record_outputs(cls, input, [v, m])
    if node is not None:
        node.self_ = SavedTensor(input)
        node.self_sizes = data.shape
        node.keep_shape = _keep_shape(data.shape, axes)
        node.dim = axes
        node.correction = corr
        node.full = data.ndim == 0
    return rv, rm


@signature("var_mean(Tensor input, IntArrayRef[1]? dim, bool unbiased=True, bool keepdim=False)",
           "var_mean(Tensor input, IntArrayRef[1]? dim=None, *, Scalar? correction=None, "
           "bool keepdim=False)",
           "var_mean(Tensor input, bool unbiased=True)")
def var_mean(input: Tensor, dim: Any = None, unbiased: Any = None, keepdim: bool = False, *,
             correction: Any = None) -> tuple:
    """``(var(input, dim), mean(input, dim))`` from one node, VarMeanBackward0.

    >>> import npgrad
    >>> npgrad.var_mean(npgrad.tensor([1., 2., 3.]))
    (tensor(1.), tensor(2.))
    """
    return _var_mean("var_mean", VarMeanBackward0, input, dim, unbiased, keepdim, correction)


@signature("std_mean(Tensor input, IntArrayRef[1]? dim, bool unbiased=True, bool keepdim=False)",
           "std_mean(Tensor input, IntArrayRef[1]? dim=None, *, Scalar? correction=None, "
           "bool keepdim=False)",
           "std_mean(Tensor input, bool unbiased=True)")
def std_mean(input: Tensor, dim: Any = None, unbiased: Any = None, keepdim: bool = False, *,
             correction: Any = None) -> tuple:
    """``(std(input, dim), mean(input, dim))`` from one node, StdMeanBackward0.

    >>> import npgrad
    >>> npgrad.std_mean(npgrad.tensor([1., 2., 3.]))
    (tensor(1.), tensor(2.))
    """
    return _var_mean("std_mean", StdMeanBackward0, input, dim, unbiased, keepdim, correction)


class _MinMax(tuple):
    """``torch.return_types.aminmax``: a (min, max) pair."""

    __slots__ = ()
    n_fields = n_sequence_fields = 2
    n_unnamed_fields = 0

    def __new__(cls, min: Any, max: Any = None) -> Any:  # noqa: A002
        if max is None:
            min, max = min
        return tuple.__new__(cls, (min, max))

    @property
    def min(self) -> Tensor:
        return self[0]

    @property
    def max(self) -> Tensor:
        return self[1]

    def __repr__(self) -> str:
        return f"{_dtype.repr_prefix()}return_types.aminmax(\nmin={self[0]!r},\nmax={self[1]!r})"

    def __reduce__(self) -> tuple:
        return (type(self), (self[0], self[1]))


return_type_aminmax = type("aminmax", (_MinMax,), {"__slots__": ()})
return_type_aminmax.__module__ = "npgrad.return_types"


class AminmaxBackward0(_ReductionNode):
    """Outputs (min, max): each one's gradient is shared evenly among the elements equal to it."""

    __slots__ = ()
    saves_self = True

    def backward(self, grad_min: Any, grad_max: Any = None) -> tuple:
        x = saved(self, "self_")._data
        total = None
        for g, fn in ((grad_min, np.amin), (grad_max, np.amax)):
            if g is None:
                continue
            extreme = fn(x, axis=self.dim, keepdims=True) if self.dim else x
            mask = x == extreme
            count = mask.sum(axis=self.dim, keepdims=True) if self.dim else 1
            scale = _constant((mask / count).astype(x.dtype, copy=False))
            part = _restore(g, self.keep_shape) * scale
            total = part if total is None else total + part
        return total,


@signature("aminmax(Tensor input, *, int64_t? dim=None, bool keepdim=False, "
           "TensorList[2] out=None)")
def aminmax(input: Tensor, *, dim: Any = None, keepdim: bool = False) -> Any:
    """``(amin, amax)`` over ``dim`` (one int, or all elements) from one node, AminmaxBackward0.

    >>> import npgrad
    >>> npgrad.aminmax(npgrad.tensor([3., 1., 2.])).max
    tensor(3.)
    """
    data = input._data
    if dim is not None and (_is_dim_sequence(dim) or isinstance(dim, bool)
                            or not isinstance(dim, int)):
        raise TypeError(f"aminmax(): argument 'dim' must be int, not {type(dim).__name__}")
    if dim is None:
        if data.size == 0:
            raise RuntimeError("aminmax(): cannot compute aminmax over an empty dimension as the "
                               "operation has no identity.")
        axes = tuple(range(data.ndim))
    else:
        d = wrap_dim(dim, data.ndim)
        axes = (d,) if data.ndim else ()
        if data.ndim and data.shape[d] == 0:
            raise IndexError(f"aminmax: Expected reduction dim {d} to have non-zero size.")
    shape = _out_shape(data.shape, axes, keepdim)
    lo = _finish(np.amin(data, axis=axes) if axes else data.copy(), data.dtype, shape)
    hi = _finish(np.amax(data, axis=axes) if axes else data.copy(), data.dtype, shape)
    (rlo, rhi), node = _record_outputs(AminmaxBackward0, input, [lo, hi])
    if node is not None:
        node.self_ = SavedTensor(input)
        node.self_sizes = data.shape
        node.keep_shape = _keep_shape(data.shape, axes)
        node.dim = axes
    return return_type_aminmax(rlo, rhi)
