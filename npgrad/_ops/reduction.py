"""Reductions (sum, mean, max, var, norm...) and scans, each op a registry entry.

softmax lives in softmax.py, the distances (dist, cdist, pairwise_distance,
cosine_similarity) in distance.py; both build on the helpers here.

Every differentiable op here is one ``General`` entry per overload (Note [The general
entry kind] in registry.py): ``SUM`` (SumBackward0) and ``SUM_DIM`` (SumBackward1), ...
Its public function checks the arguments with torch's texts, computes the NumPy forward
and hands the arrays to the entry's ``record``, which builds the node with what torch's
node keeps and gives the tangents at once.

Note [Reduced dimensions]
Every reduction turns its ``dim`` argument into a sorted tuple of axes with
``_reduce_axes`` (torch's wrapping and error texts, from ``_shape_util``).  Its
node keeps what torch's keeps: ``dim`` as the op was called (``_saved_dim``),
``keepdim`` and the input's sizes, or the saved input itself; a backward rule
works the axes out again from those (``_reduced``), and with them the "kept"
shape, the input's with every reduced axis set to 1.  Rules first give the
incoming gradient the kept shape (a reshape, which is a no-op when
``keepdim=True``), then let broadcasting or ``expand`` carry it back over the
reduced axes.  A 0-dim input accepts ``dim`` 0 or -1, as torch does, and
reduces nothing.

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
from typing import TYPE_CHECKING, Any

import numpy as np

from .signature import batchable, signature
from .. import _dtype
from .._mode import _tls, RECORDING
if TYPE_CHECKING:
    from .._tensor import Tensor
else:  # Note [Tensor base and Tensor] in npgrad._tensor_base
    from .._tensor_base import TensorBase as Tensor
from .._tensor_base import wrap
from ._core import is_tensor
from .checks import python_method
from ._shape_util import NO_DIM, wrap_dim, wrap_dims
from .pointwise import scalar_div, scalar_mul
from .registry import General, refuse_complex
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
    if dt.kind not in "fc" and _tls.mode == RECORDING and input._requires_grad:
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


def _reduced(dim: Any, sizes: tuple) -> tuple:
    """The sorted axes a kept ``dim`` (as the op was called) reduced over an input of
    ``sizes``: what a backward rule reads (Note [Reduced dimensions])."""
    return _reduce_axes("", len(sizes), dim)


def _grad_to_input(grad: Tensor, sizes: tuple, axes: tuple) -> Tensor:
    """A reduction's gradient with the reduced axes restored and expanded to ``sizes``."""
    return _expand(_restore(grad, _keep_shape(sizes, axes)), sizes)


def _same_sum(t: Tensor, axes: tuple, keepdim: bool) -> Tensor:
    """``t`` summed over a reduction's ``axes`` to its output's shape (a 0-dim input
    reduces nothing)."""
    if not axes:
        return t
    if len(axes) == t._data.ndim and not keepdim:
        return sum(t)
    return sum(t, axes, keepdim=keepdim)


def _ones_as(r: Tensor, like: Tensor | None = None) -> Tensor:
    """A constant gradient of ones shaped as ``r`` (in ``like``'s dtype when given)."""
    dt = (r if like is None else like)._data.dtype
    return _constant(np.ones(r._data.shape, dtype=dt))


# Note [A reduction's tangent from its gradient]
# Each output of a reduction reads its own slice of the input, so its Jacobian has one
# row per output and ``J t = sum over the reduced axes of (t * J^T 1)``: the backward
# rule applied to a gradient of ones, times the tangent, summed like the forward.  The
# rule is written in npgrad ops, so the tangent stays differentiable (forward over
# reverse), and the two modes cannot disagree.  Linear ones (sum, mean) state theirs.

def _reduction_tangent(t: Tensor, rule_of_ones: Any, axes: tuple, keepdim: bool) -> Tensor:
    """Note [A reduction's tangent from its gradient]; ``rule_of_ones`` is ``J^T 1``
    (None: the rule gives no gradient, so the tangent is zero)."""
    if rule_of_ones is None:
        return _same_sum(t * 0.0, axes, keepdim)
    return _same_sum(t * rule_of_ones, axes, keepdim)


# -- sum / mean / nansum / prod -----------------------------------------------------------

def _sum_dtype(d: np.dtype) -> np.dtype:
    return np.dtype(np.int64) if d.kind in "biu" else d


def _sum_array(data: np.ndarray, axes: tuple, out_dt: np.dtype, shape: tuple) -> np.ndarray:
    """The NumPy forward of sum: floats accumulate in float32 at least (Note [Reductions
    in float16]), integers and bools in ``out_dt`` (int64 unless a dtype is given)."""
    if out_dt.kind in "fV":
        out = np.sum(_acc(data), axis=axes)
    else:
        out = np.sum(data, axis=axes, dtype=out_dt)
    return _finish(out, out_dt, shape)


SUM = General(
    "sum(Tensor input, *, ScalarType? dtype=None)", grad_fn="SumBackward0",
    forward=_sum_array, params=("axes", "out_dtype", "shape"), keeps=("self_sym_sizes",),
    # ``x.sum()``: torch expands the 0-dim gradient straight back
    derivatives={"self": lambda grad, self_sym_sizes: _expand(grad, self_sym_sizes)},
    tangent=lambda self_t: sum(self_t))

SUM_DIM = General(
    "sum(Tensor input, IntArrayRef[1]? dim, bool keepdim=False, *, ScalarType? dtype=None, "
    "Tensor out=None)", grad_fn="SumBackward1",
    forward=lambda data, axes, out_dt, shape, dim, keepdim: _sum_array(data, axes, out_dt, shape),
    params=("axes", "out_dtype", "shape", "dim", "keepdim"),
    keeps=("dim", "keepdim", "self_sym_sizes"),
    derivatives={"self": lambda grad, dim, self_sym_sizes:
                 _grad_to_input(grad, self_sym_sizes, _reduced(dim, self_sym_sizes))},
    tangent=lambda self_t, axes, keepdim: _same_sum(self_t, axes, keepdim))

SumBackward0 = SUM.node
SumBackward1 = SUM_DIM.node
_FAST_SUM = frozenset("fd")  # float32 / float64: x.sum() without a dtype, the hot case


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
    if dim is NO_DIM and dtype is None and not keepdim and data.dtype.char in _FAST_SUM:
        return SUM.record((input,), np.asarray(np.sum(data)))  # the hot path: no checks needed
    dt = _np_dtype_arg(dtype)
    if dt is not None:
        _check_autograd_dtype(input, dt)
        data = data.astype(dt, copy=False)
    out_dt = _sum_dtype(data.dtype) if dt is None else dt  # an explicit dtype is the result's
    explicit = dim is not NO_DIM
    axes = _reduce_axes("sum", data.ndim, dim if explicit else None)
    shape = _out_shape(data.shape, axes, keepdim)
    out = _sum_array(data, axes, out_dt, shape)
    if not explicit and not keepdim:
        return SUM.record((input,), out, (axes, out_dt, shape))
    return SUM_DIM.record((input,), out, (axes, out_dt, shape, _kept_dims(dim), keepdim))


def _kept_dims(dim: Any) -> Any:
    """A ``dim`` list argument as torch keeps it: a tuple, None when not given."""
    if dim is None or dim is NO_DIM:
        return None
    return tuple(dim) if _is_dim_sequence(dim) else (dim,)


def _mean_backward(grad: Tensor, sizes: tuple, axes: tuple | None) -> Tensor:
    """``grad`` expanded back, then divided by the count (DivBackward1 over
    ExpandBackward0, as torch records it); ``axes`` None: the mean of every element,
    whose 0-dim gradient torch expands straight back."""
    if axes is None:
        return scalar_div(_expand(grad, sizes), _count(sizes, tuple(range(len(sizes)))))
    return scalar_div(_grad_to_input(grad, sizes, axes), _count(sizes, axes))


def _mean_array(data: np.ndarray, axes: tuple, shape: tuple) -> np.ndarray:
    n = _count(data.shape, axes)
    acc = _acc(data)
    with np.errstate(invalid="ignore", divide="ignore"):
        out = np.sum(acc, axis=axes) / np.asarray(n, dtype=acc.dtype)
    return _finish(out, data.dtype, shape)


MEAN = General(
    "mean(Tensor input, *, ScalarType? dtype=None, Tensor out=None)", grad_fn="MeanBackward0",
    forward=_mean_array, params=("axes", "shape"), keeps=("self_sym_sizes", "self_sym_numel"),
    derivatives={"self": lambda grad, self_sym_sizes: _mean_backward(grad, self_sym_sizes,
                                                                      None)},
    tangent=lambda self_t: mean(self_t))

MEAN_DIM = General(
    "mean(Tensor input, IntArrayRef[1]? dim, bool keepdim=False, *, ScalarType? dtype=None, "
    "Tensor out=None)", grad_fn="MeanBackward1",
    forward=lambda data, axes, shape, dim, keepdim: _mean_array(data, axes, shape),
    params=("axes", "shape", "dim", "keepdim"),
    keeps=("dim", "keepdim", "self_sym_numel", "self_sym_sizes"),
    derivatives={"self": lambda grad, dim, self_sym_sizes:
                 _mean_backward(grad, self_sym_sizes, _reduced(dim, self_sym_sizes))},
    tangent=lambda self_t, axes, keepdim: _same_sum(self_t, axes, keepdim)
    / _count(self_t._data.shape, axes))

MeanBackward0 = MEAN.node
MeanBackward1 = MEAN_DIM.node


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
    if dt is None and data.dtype.kind not in "fVc":
        raise RuntimeError("mean(): could not infer output dtype. Input dtype must be either a "
                           f"floating point or complex dtype. Got: {_scalar_name(data.dtype)}")
    if dt is not None:
        if dt.kind not in "fVc":
            raise RuntimeError("mean(): could not infer output dtype. Optional dtype must be "
                               "either a floating point or complex dtype. Got: "
                               f"{_scalar_name(dt)}")
        data = data.astype(dt, copy=False)
    explicit = dim is not NO_DIM
    axes = _reduce_axes("mean", data.ndim, dim if explicit else None)
    shape = _out_shape(data.shape, axes, keepdim)
    out = _mean_array(data, axes, shape)
    if not explicit and not keepdim:
        return MEAN.record((input,), out, (axes, shape))
    return MEAN_DIM.record((input,), out, (axes, shape, _kept_dims(dim), keepdim))


def _nansum_backward(grad: Tensor, x: Tensor, dim: Any) -> Tensor:
    """Sum skipping NaNs: the NaN positions get a zero gradient."""
    sizes = x._data.shape
    keep = _constant(~np.isnan(x._data)) if x._data.dtype.kind == "f" else 1
    return _grad_to_input(grad, sizes, _reduced(dim, sizes)) * keep


NANSUM = General(
    "nansum(Tensor input, IntArrayRef[1]? dim=None, bool keepdim=False, *, "
    "ScalarType? dtype=None, Tensor out=None)", grad_fn="NansumBackward0",
    forward=None, params=("axes", "dim", "keepdim"), keeps=("dim", "keepdim"), saves=("self",),
    derivatives={"self": lambda grad, self, dim: _nansum_backward(grad, self, dim)},
    tangent=lambda self_t, self, axes, keepdim: _same_sum(
        where(_constant(np.isnan(self._data)), 0.0, self_t), axes, keepdim))
NansumBackward0 = NANSUM.node


@signature("nansum(Tensor input, IntArrayRef[1]? dim=None, bool keepdim=False, *, "
           "ScalarType? dtype=None, Tensor out=None)")
def nansum(input: Tensor, dim: Any = None, keepdim: bool = False, *, dtype: Any = None) -> Tensor:
    """:func:`sum` treating NaN as zero; NansumBackward0.

    >>> import npgrad
    >>> npgrad.tensor([1., float('nan'), 2.]).nansum()
    tensor(3.)
    """
    data = input._data
    if data.dtype.kind == "c":  # no complex kernel in torch
        refuse_complex((RuntimeError, 'nansum on CPU does not support complex inputs'), data.dtype)
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
    out = _finish(out, out_dt, _out_shape(data.shape, axes, keepdim))
    return NANSUM.record((input,), out, (axes, _kept_dims(dim), keepdim))


def _conjugated(rule: Any, grad: Tensor, *args: Any) -> Tensor:
    """A rule written as ``grad`` times the derivative, for a holomorphic op: conjugated
    around it for a complex gradient (Note [Holomorphic rules serve complex inputs] in
    registry.py); its tangent uses the rule as it is."""
    if grad._data.dtype.kind == "c":
        return rule(grad.conj(), *args).conj_physical()
    return rule(grad, *args)


def _prod_backward(grad: Tensor, x: Tensor, result: Tensor, axes: tuple,
                   whole: bool) -> Tensor:
    """Product: each element's gradient is the product of the others (zeros handled);
    complex: conjugated (Note [Holomorphic rules serve complex inputs] in registry.py)."""
    if grad._data.dtype.kind == "c":
        return _prod_others(grad.conj(), x, result, axes, whole).conj_physical()
    return _prod_others(grad, x, result, axes, whole)


def _prod_others(grad: Tensor, x: Tensor, result: Tensor, axes: tuple, whole: bool) -> Tensor:
    """``grad`` times the product of the other elements, per element."""
    keep_shape = _keep_shape(x._data.shape, axes)
    g = _restore(grad, keep_shape)
    zero = x._data == 0
    if not zero.any():
        return g * (_restore(result, keep_shape) / x)
    if whole and np.count_nonzero(zero) > 1:
        # torch's rule for the product of all elements: zeros once two of them are zero
        # (so NaNs elsewhere do not leak in, and no second derivative flows through)
        return _constant(np.zeros(x._data.shape, dtype=x._data.dtype))
    # With zeros, "result / x" is useless.  The product of the others is split
    # into its nonzero part and its zero part, each written so that it stays
    # differentiable (second derivatives through the zeros are right):
    #   x_j != 0: (prod of nonzeros / x_j) * (prod of the zero elements)
    #   x_j == 0: prod of nonzeros * (1 if j is the only zero; the other zero's value
    #             if there are two; 0 with three or more, whose derivatives vanish too)
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
    return g * where(is_zero, at_zero, elsewhere)


def _all_axes(x: Tensor) -> tuple:
    return tuple(range(x._data.ndim))


def _prod_dim_axes(dim: int, x: Tensor) -> tuple:
    d = _single_dim("prod", x._data.ndim, dim)
    return () if d is None else (d,)


PROD = General(
    "prod(Tensor input, *, ScalarType? dtype=None)", grad_fn="ProdBackward0", forward=None,
    saves=("self", "result"),
    derivatives={"self": lambda grad, self, result:
                 _prod_backward(grad, self, result, _all_axes(self), True)},
    tangent=lambda self_t, self, result: _reduction_tangent(
        self_t, _prod_others(_ones_as(result), self, result, _all_axes(self), True),
        _all_axes(self), False))

PROD_DIM = General(
    "prod(Tensor input, int64_t dim, bool keepdim=False, *, ScalarType? dtype=None, "
    "Tensor out=None)", grad_fn="ProdBackward1", forward=None, params=("dim", "keepdim"),
    keeps=("dim", "keepdim"), saves=("self", "result"),
    derivatives={"self": lambda grad, self, result, dim:
                 _prod_backward(grad, self, result, _prod_dim_axes(dim, self), False)},
    tangent=lambda self_t, self, result, dim, keepdim: _reduction_tangent(
        self_t, _prod_others(_ones_as(result), self, result, _prod_dim_axes(dim, self),
                               False), _prod_dim_axes(dim, self), keepdim))

ProdBackward0 = PROD.node
ProdBackward1 = PROD_DIM.node


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
    out = _finish(out, out_dt, _out_shape(data.shape, axes, keepdim))
    if dim is None:
        return PROD.record((input,), out)
    return PROD_DIM.record((input,), out, (dim, keepdim))


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


def _amax_backward(grad: Tensor, x: Tensor, result: Tensor, dim: Any) -> Tensor:
    """The gradient shared evenly among the elements equal to the extremum."""
    xd = x._data
    axes = _reduced(dim, xd.shape)
    keep_shape = _keep_shape(xd.shape, axes)
    mask = xd == result._data.reshape(keep_shape)
    count = mask.sum(axis=axes, keepdims=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        scale = mask / count
    return _restore(grad, keep_shape) * _constant(scale.astype(xd.dtype, copy=False))


def _amax_entry(name: str, grad_fn: str) -> General:
    return General(
        f"{name}(Tensor input, IntArrayRef[1] dim=None, bool keepdim=False, *, "
        "Tensor out=None)", grad_fn=grad_fn, forward=None, params=("axes", "dim", "keepdim"),
        keeps=("dim", "keepdim"), saves=("self", "result"),
        derivatives={"self": lambda grad, self, result, dim:
                     _amax_backward(grad, self, result, dim)},
        tangent=lambda self_t, self, result, axes, dim, keepdim: _reduction_tangent(
            self_t, _amax_backward(_ones_as(result), self, result, dim), axes, keepdim))


AMAX = _amax_entry("amax", "AmaxBackward0")
AMIN = _amax_entry("amin", "AminBackward0")
AmaxBackward0 = AMAX.node
AminBackward0 = AMIN.node


def _amax_like(op: str, entry: General, np_fn: Any, input: Tensor, dim: Any,
               keepdim: bool) -> Tensor:
    data = input._data
    if data.dtype.kind == "c":  # no complex kernel in torch
        kernel = "max_values_cpu" if op == "amax" else "min_values_cpu"
        refuse_complex((NotImplementedError, f"\"{kernel}\" not implemented for '{{dtype}}'"),
                       data.dtype)
    specified = dim is not None and not (_is_dim_sequence(dim) and not dim)
    if specified and data.size == 0:
        bad = _empty_dim_given(dim, data.ndim, data.shape)
        if bad is not None:
            raise IndexError(f"{op}(): Expected reduction dim {bad} to have non-zero size.")
    axes = _reduce_axes(op, data.ndim, dim)
    _check_nonempty(op, data, axes, specified)
    out = np_fn(data, axis=axes) if axes else data.copy()
    out = _finish(out, data.dtype, _out_shape(data.shape, axes, keepdim))
    return entry.record((input,), out, (axes, () if dim is None else _kept_dims(dim), keepdim))


@signature("amax(Tensor input, IntArrayRef[1] dim=None, bool keepdim=False, *, Tensor out=None)")
def amax(input: Tensor, dim: Any = (), keepdim: bool = False) -> Tensor:
    """Largest element over ``dim`` (all by default); ties share the gradient evenly."""
    return _amax_like("amax", AMAX, np.amax, input, dim, keepdim)


@signature("amin(Tensor input, IntArrayRef[1] dim=None, bool keepdim=False, *, Tensor out=None)")
def amin(input: Tensor, dim: Any = (), keepdim: bool = False) -> Tensor:
    """Smallest element over ``dim`` (all by default); ties share the gradient evenly."""
    return _amax_like("amin", AMIN, np.amin, input, dim, keepdim)


def evenly_distribute(grad: Tensor, x: Tensor, result: Tensor) -> Tensor:
    """torch's evenly_distribute rule for a full reduction that picks one value (max(),
    median()...): the gradient is shared between every element equal to the result (NaN
    selects the NaNs)."""
    xd = x._data
    r = result._data
    mask = np.isnan(xd) if np.isnan(r) else xd == r
    scale = (mask / mask.sum()).astype(xd.dtype, copy=False)
    return grad * _constant(scale)


def _max_all_entry(name: str, grad_fn: str) -> General:
    return General(
        f"{name}(Tensor input, *, Tensor out=None)", grad_fn=grad_fn, forward=None,
        saves=("self", "result"),
        derivatives={"self": lambda grad, self, result: evenly_distribute(grad, self, result)},
        tangent=lambda self_t, self, result: sum(
            self_t * evenly_distribute(_ones_as(result), self, result)))


MAX = _max_all_entry("max", "MaxBackward1")
MIN = _max_all_entry("min", "MinBackward1")
MaxBackward1 = MAX.node
MinBackward1 = MIN.node


def _max_dim_backward(grad: Tensor, dim: int, indices: Tensor, sizes: tuple) -> Tensor:
    """``max(dim)``: the gradient goes to the element at the returned index."""
    if not sizes:  # 0-dim input
        return grad
    d = wrap_dim(dim, len(sizes))
    keep_shape = _keep_shape(sizes, (d,))
    positions = np.arange(sizes[d]).reshape((-1,) + (1,) * (len(sizes) - d - 1))
    onehot = positions == indices._data.reshape(keep_shape)
    return _restore(grad, keep_shape) * _constant(onehot)


def _max_dim_entry(name: str, grad_fn: str) -> General:
    return General(
        f"{name}(Tensor input, int64_t dim, bool keepdim=False, *, TensorList[2] out=None)",
        grad_fn=grad_fn, forward=None, params=("axes", "dim", "keepdim"),
        keeps=("dim", "keepdim", "self_sym_sizes"), saves=("indices",), extra=("indices",),
        derivatives={"self": lambda grad, dim, indices, self_sym_sizes:
                     _max_dim_backward(grad, dim, indices, self_sym_sizes)},
        tangent=lambda self_t, axes, dim, keepdim, indices, self_sym_sizes: _reduction_tangent(
            self_t, _max_dim_backward(_ones_as(indices, self_t), dim, indices, self_sym_sizes),
            axes, keepdim))


MAX_DIM = _max_dim_entry("max", "MaxBackward0")
MIN_DIM = _max_dim_entry("min", "MinBackward0")
MaxBackward0 = MAX_DIM.node
MinBackward0 = MIN_DIM.node


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
    if data.dtype.kind == "c":  # no complex kernel in torch
        refuse_complex((RuntimeError, f"{op}(): does not support complex input"), data.dtype)
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
    idx = np.asarray(idx.astype(np.int64, copy=False), order="C")
    entry = MAX_DIM if op == "max" else MIN_DIM
    res, indices = entry.record((input,), (np.asarray(values, order="C"), idx),
                                (axes, dim, keepdim))
    return (return_type_max if op == "max" else return_type_min)(res, indices)


def _max_all(op: str, input: Tensor) -> Tensor:
    data = input._data
    if data.dtype.kind == "c":  # no complex kernel in torch
        refuse_complex((NotImplementedError, f"\"{op}_all\" not implemented for '{{dtype}}'"),
                       data.dtype)
    _check_nonempty(op, data, (), False)
    out = np.amax(data) if op == "max" else np.amin(data)
    return (MAX if op == "max" else MIN).record((input,), _finish(out, data.dtype, ()))


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
    """``(axes, correction, kept)``: the axes reduced, the correction used, and what
    torch keeps as ``_saved_correction``: None when neither a dim (None included: ``var(None)``
    keeps 1, as torch's overload with ``dim`` does), ``unbiased`` nor a correction was given,
    torch's default, which is 1."""
    dim_given = dim is not NO_DIM
    if not dim_given:
        dim = None
    if isinstance(dim, bool):  # var(True): the lone positional is `unbiased`
        dim, unbiased = None, dim
    if unbiased is not None and correction is not None:
        raise TypeError(f"{op}() received an invalid combination of arguments - got both "
                        "'unbiased' and 'correction'")
    if data.dtype.kind not in "fc":
        raise RuntimeError("std and var only support floating point and complex dtypes")
    if correction is None:
        kept = None if unbiased is None and not dim_given else int(unbiased is None or unbiased)
        correction = 1 if unbiased is None or unbiased else 0
    else:
        if is_tensor(correction):
            correction = correction.item()
        kept = correction
    axes = _reduce_axes(op, data.ndim, dim)
    return axes, correction, kept


def _var_forward(op: str, data: np.ndarray, axes: tuple, correction: Any,
                 keepdim: bool) -> np.ndarray:
    acc = _acc(data)
    n = _count(data.shape, axes)
    dof = n - correction
    if dof <= 0:
        warnings.warn(f"{op}(): degrees of freedom is <= 0. Correction should be strictly less "
                      "than the reduction factor (input numel divided by output numel).",
                      UserWarning, stacklevel=4)
    with np.errstate(invalid="ignore", divide="ignore"):
        mu = np.sum(acc, axis=axes, keepdims=True) / np.asarray(n, acc.dtype)
        dev = acc - mu
        if dev.dtype.kind == "c":  # |z - mean|^2: a real variance, as torch's
            dev = np.abs(dev)
        ss = np.sum(dev * dev, axis=axes)
        out = ss / np.asarray(_builtin_max(dof, 0), ss.dtype)
    return _finish(out, data.real.dtype, _out_shape(data.shape, axes, keepdim))


def _var_grad(g: Tensor, x: Tensor, axes: tuple, correction: Any, full: bool) -> Tensor:
    """``2 / dof * grad * (x - mean)``, recorded as torch's var_backward records it.

    ``full``: no ``dim`` given (or a 0-dim input), torch's whole-tensor branch: the
    0-dim gradient broadcasts against ``x - x.mean()``; with ``dim`` the reduced axes
    come back by unsqueeze (only for inputs of 2+ dims: a 1-dim input's 0-dim gradient
    broadcasts) and the mean keeps its dims.
    """
    sizes = x._data.shape
    dof = _count(sizes, axes) - correction
    with np.errstate(divide="ignore"):
        factor = float(np.float64(2.0) / np.float64(dof))
    if full:
        return scalar_mul(g, factor) * (x - mean(x))
    if len(sizes) > 1:
        g = _restore(g, _keep_shape(sizes, axes))
    return scalar_mul(g, factor) * (x - mean(x, axes, True))


def _var_backward(g: Tensor, x: Tensor, dim: Any, correction: Any) -> Tensor:
    """var's rule from what its node keeps (``dim`` None: every dim, torch's full branch)."""
    sizes = x._data.shape
    return _var_grad(g, x, _reduced(dim, sizes), 1 if correction is None else correction,
                     dim is None or not sizes)


def _std_backward(grad: Tensor, x: Tensor, result: Tensor, dim: Any, correction: Any) -> Tensor:
    """torch: ``(grad / (result * 2)).masked_fill_(result == 0, 0)``, then var's rule."""
    g = masked_fill(grad / scalar_mul(result, 2), result == 0, 0)
    return _var_backward(g, x, dim, correction)


VAR = General(
    "var(Tensor input, IntArrayRef[1]? dim=None, *, Scalar? correction=None, "
    "bool keepdim=False, Tensor out=None)", grad_fn="VarBackward0", forward=None,
    params=("axes", "correction", "dim", "keepdim"), keeps=("correction", "dim", "keepdim"),
    saves=("self",),
    derivatives={"self": lambda grad, self, dim, correction:
                 _var_backward(grad, self, dim, correction)},
    tangent=lambda self_t, self, result, axes, dim, correction, keepdim: _reduction_tangent(
        self_t, _var_backward(_ones_as(result), self, dim, correction), axes, keepdim))

STD = General(
    "std(Tensor input, IntArrayRef[1]? dim=None, *, Scalar? correction=None, "
    "bool keepdim=False, Tensor out=None)", grad_fn="StdBackward0", forward=None,
    params=("axes", "correction", "dim", "keepdim"), keeps=("correction", "dim", "keepdim"),
    saves=("self", "result"),
    derivatives={"self": lambda grad, self, result, dim, correction:
                 _std_backward(grad, self, result, dim, correction)},
    tangent=lambda self_t, self, result, axes, dim, correction, keepdim: _reduction_tangent(
        self_t, _std_backward(_ones_as(result), self, result, dim, correction), axes, keepdim))

VarBackward0 = VAR.node
StdBackward0 = STD.node


def _var_dims(dim: Any) -> Any:
    """The ``dim`` torch keeps for var/std: None for none (or a lone ``unbiased`` bool)."""
    return None if isinstance(dim, bool) else _kept_dims(dim)


@signature("var(Tensor input, IntArrayRef[1]? dim, bool unbiased=True, bool keepdim=False, *, "
           "Tensor out=None)",
           "var(Tensor input, IntArrayRef[1]? dim=None, *, Scalar? correction=None, "
           "bool keepdim=False, Tensor out=None)",
           "var(Tensor input, bool unbiased=True)")
def var(input: Tensor, dim: Any = NO_DIM, unbiased: Any = None, keepdim: bool = False,
        *, correction: Any = None) -> Tensor:
    """Variance (Bessel-corrected unless ``unbiased=False`` or ``correction=0``); VarBackward0.

    >>> import npgrad
    >>> npgrad.tensor([1., 2., 3.]).var()
    tensor(1.)
    """
    data = input._data
    axes, corr, kept = _var_args("var", data, dim, unbiased, correction)
    out = _var_forward("var", data, axes, corr, keepdim)
    return VAR.record((input,), out, (axes, kept, _var_dims(dim), keepdim))


@signature("std(Tensor input, IntArrayRef[1]? dim, bool unbiased=True, bool keepdim=False, *, "
           "Tensor out=None)",
           "std(Tensor input, IntArrayRef[1]? dim=None, *, Scalar? correction=None, "
           "bool keepdim=False, Tensor out=None)",
           "std(Tensor input, bool unbiased=True)")
def std(input: Tensor, dim: Any = NO_DIM, unbiased: Any = None, keepdim: bool = False,
        *, correction: Any = None) -> Tensor:
    """Standard deviation: the square root of :func:`var`; StdBackward0."""
    data = input._data
    axes, corr, kept = _var_args("std", data, dim, unbiased, correction)
    out = np.sqrt(_var_forward("std", data, axes, corr, keepdim))
    return STD.record((input,), out, (axes, kept, _var_dims(dim), keepdim))


# -- logsumexp ---------------------------------------------------------------------------

def _logsumexp_backward(grad: Tensor, x: Tensor, result: Tensor, dim: Any) -> Tensor:
    keep_shape = _keep_shape(x._data.shape, _reduced(dim, x._data.shape))
    return _restore(grad, keep_shape) * exp(x - _restore(result, keep_shape))


LOGSUMEXP = General(
    "logsumexp(Tensor input, IntArrayRef[1] dim, bool keepdim=False, *, Tensor out=None)",
    grad_fn="LogsumexpBackward0", forward=None, params=("axes", "dim", "keepdim"),
    keeps=("dim", "keepdim"), saves=("self", "result"),
    derivatives={"self": lambda grad, self, result, dim:
                 _conjugated(_logsumexp_backward, grad, self, result, dim)},
    tangent=lambda self_t, self, result, axes, dim, keepdim: _reduction_tangent(
        self_t, _logsumexp_backward(_ones_as(result), self, result, dim), axes, keepdim))
LogsumexpBackward0 = LOGSUMEXP.node


def _np_logsumexp(data: np.ndarray, axes: tuple) -> np.ndarray:
    if not axes:
        return data.copy()
    # complex: shifted by the largest real part (torch's choice)
    m = np.amax(data.real, axis=axes, keepdims=True) if data.size else np.zeros(
        _keep_shape(data.shape, axes), data.real.dtype)
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
    if data.dtype.kind not in "fc":
        data = data.astype(_dtype.get_default_dtype().np_dtype)
    axes = _reduce_axes("logsumexp", data.ndim, dim)
    if _is_dim_sequence(dim) and not dim and data.ndim and data.size and not keepdim:
        raise RuntimeError("output with shape [] doesn't match the broadcast shape "
                           f"[{', '.join('1' for _ in data.shape)}]")
    out = _np_logsumexp(_acc(data), axes)
    out = _finish(out, data.dtype, _out_shape(data.shape, axes, keepdim))
    return LOGSUMEXP.record((input,), out, (axes, _kept_dims(dim), keepdim))


# -- norm ----------------------------------------------------------------------------------

def _vector_norm_backward(grad: Tensor, x: Tensor, result: Tensor, p: Any, dim: Any) -> Any:
    """Gradients of the vector p-norms (torch's rules, including 0 at a zero norm)."""
    axes = _reduced(dim, x._data.shape)
    keep_shape = _keep_shape(x._data.shape, axes)
    return norm_grad(float(p), x, _restore(grad, keep_shape), _restore(result, keep_shape), axes)


VECTOR_NORM = General(
    "linalg_vector_norm(Tensor input, Scalar ord=2, IntArrayRef[1]? dim=None, "
    "bool keepdim=False, *, ScalarType? dtype=None, Tensor out=None)",
    grad_fn="LinalgVectorNormBackward0", forward=None, params=("axes", "ord", "dim", "keepdim"),
    keeps=("ord", "dim", "keepdim"), saves=("self", "result"),
    derivatives={"self": lambda grad, self, result, ord, dim:
                 _vector_norm_backward(grad, self, result, ord, dim)},
    tangent=lambda self_t, self, result, axes, ord, dim, keepdim: _reduction_tangent(
        self_t, _vector_norm_backward(_ones_as(result), self, result, ord, dim), axes, keepdim))

# ATen's ``norm(p, dim)``, which pairwise_distance records: the same rule, torch's ``p``
NORM_DIM = General(
    "norm(Tensor input, Scalar? p, IntArrayRef[1] dim, bool keepdim=False, *, "
    "Tensor out=None)", grad_fn="NormBackward1", forward=None,
    params=("axes", "p", "dim", "keepdim"), keeps=("p", "dim", "keepdim"),
    saves=("self", "result"),
    derivatives={"self": lambda grad, self, result, p, dim:
                 _vector_norm_backward(grad, self, result, p, dim)},
    tangent=lambda self_t, self, result, axes, p, dim, keepdim: _reduction_tangent(
        self_t, _vector_norm_backward(_ones_as(result), self, result, p, dim), axes, keepdim))

LinalgVectorNormBackward0 = VECTOR_NORM.node
NormBackward1 = NORM_DIM.node


def norm_grad(p: float, x: Tensor, g: Tensor, r: Tensor, axes: tuple) -> Any:
    """Gradient of the p-norm ``r`` of ``x`` over ``axes`` (``g``, ``r`` with kept axes).

    Shared by the norm nodes, ``dist`` and ``cdist``; None for p = 0, as torch.
    """
    if p == 0:  # torch returns an undefined (None) gradient here
        return None
    # sgn(z) = z / |z|: the sign of a complex entry
    sign_of = _complex_sign if x._data.dtype.kind == "c" else sign
    if p == 1:
        return sign_of(x) * g
    if math.isinf(p):
        return _inf_norm_grad(x, g, r, axes, sign_of)
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
        scaled_x = sign_of(x) * pow(abs(x), p - 1)
        if p < 1:
            scaled_x = where(x == 0, 0.0, scaled_x)
        return scaled_x * scaled
    return x * pow(abs(x), p - 2) * scaled


def _complex_sign(x: Tensor) -> Tensor:
    return x.sgn()


def _inf_norm_grad(x: Tensor, g: Tensor, r: Tensor, axes: tuple, sign: Any = sign) -> Tensor:
    """The max-norm's gradient is shared among the entries reaching the max."""
    xd = x._data
    magnitude = np.abs(xd)
    mask = magnitude == r._data
    count = mask.sum(axis=axes, keepdims=True) if axes else mask.astype(int)
    # No entry reaches a NaN norm: then every gradient is 0 (torch's), not 0 / 0.
    scale = np.divide(mask, count, out=np.zeros(mask.shape, dtype=magnitude.dtype),
                      where=count != 0)
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
    return _vector_norm(VECTOR_NORM, input, ord, dim, keepdim, dtype)


def _vector_norm(entry: General, input: Tensor, ord: Any, dim: Any, keepdim: bool,
                 dtype: Any) -> Tensor:
    data = input._data
    if data.dtype.kind == "c" and dtype is None:
        # the norm of the magnitudes, as torch's; abs carries the gradient back to z
        return _vector_norm(entry, input.abs(), ord, dim, keepdim, None)
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
    out = _finish(out, data.dtype, _out_shape(data.shape, axes, keepdim))
    return entry.record((input,), out, (axes, ord, _kept_dims(dim), keepdim))


def norm(input: Tensor, p: Any = "fro", dim: Any = None, keepdim: bool = False,
         dtype: Any = None) -> Tensor:
    """torch.norm: vector norms over ``dim`` (``'fro'`` is the 2-norm of the elements).

    >>> import npgrad
    >>> npgrad.tensor([3., 4.]).norm()
    tensor(5.)
    """
    if not is_tensor(input):
        # torch's Python reads ``input.layout`` first (Note [torch's Python touching a
        # non-Tensor] in npgrad._ops.checks)
        input.layout  # noqa: B018
    if isinstance(dim, int) and not isinstance(dim, bool):
        dims: Any = [dim]
    else:
        dims = dim
    if isinstance(p, str):
        if p == "fro" and (dim is None or isinstance(dim, int) or len(dim) <= 2):
            return vector_norm(input, 2, dims, keepdim, dtype=dtype)
        # the nuclear norm, or an error: torch hands the rest to linalg.matrix_norm, over
        # all the dims when none are given (linalg loads on first use, Note in its module)
        from . import linalg

        if dims is None:
            dims = list(range(input._data.ndim))
        return linalg.matrix_norm(input, p, dims, keepdim, dtype=dtype)
    return vector_norm(input, 2.0 if p is None else p, dims, keepdim, dtype=dtype)


@batchable  # Note [Batched values] in npgrad.func._batched
def normalize(input: Tensor, p: float = 2.0, dim: int = 1, eps: float = 1e-12,
              out: Any = None) -> Tensor:
    """``input / max(norm(input, p, dim), eps)``, torch's composition (grad_fn DivBackward0).

    >>> import npgrad
    >>> npgrad.nn.functional.normalize(npgrad.tensor([[3., 4.]]))
    tensor([[0.6000, 0.8000]])
    """
    from .pointwise import clamp_min

    python_method(input, "norm", Tensor, p, dim)  # Note [torch's Python touching a non-Tensor]
    # torch takes ``input.norm(p, dim, keepdim=True)``: a string p is a matrix norm's order
    size = norm(input, p, dim, True) if isinstance(p, str) else vector_norm(input, p, dim, True)
    denom = clamp_min(size, eps)
    return input / _expand(denom, input._data.shape)


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

def _cumulative(op: str, np_scan: Any, entry: General, input: Tensor, dim: int,
                dtype: Any) -> Tensor:
    """The forward of cumsum and cumprod: ``np_scan`` along ``dim`` in torch's result dtype
    (ints and bools accumulate in int64), recorded by ``entry``."""
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
    return entry.record((input,), _finish(out, out_dt, data.shape), (d, dim))


def _scan_dim(dim: int, ndim: int) -> int | None:
    """A scan's kept ``dim`` (as called) wrapped for a backward rule; None for a 0-dim input."""
    return wrap_dim(dim, ndim) if ndim else None


def _reverse_cumsum(t: Tensor, d: int) -> Tensor:
    """``sum_{j >= i} t_j`` along ``d``, written as total - cumsum + t so that it stays in
    npgrad ops."""
    return sum(t, d, True) - cumsum(t, d) + t


def _cumsum_backward(grad: Tensor, dim: int) -> Tensor:
    """The gradient of a running sum is the reversed running sum of the gradient."""
    d = _scan_dim(dim, grad._data.ndim)
    return grad if d is None else _reverse_cumsum(grad, d)


CUMSUM = General(
    "cumsum(Tensor input, int64_t dim, *, ScalarType? dtype=None, Tensor out=None)",
    grad_fn="CumsumBackward0", forward=None, params=("d", "dim"), keeps=("dim",),
    derivatives={"self": lambda grad, dim: _cumsum_backward(grad, dim)},
    tangent=lambda self_t, d: self_t if d is None else cumsum(self_t, d))
CumsumBackward0 = CUMSUM.node


@signature("cumsum(Tensor input, int64_t dim, *, ScalarType? dtype=None, Tensor out=None)")
def cumsum(input: Tensor, dim: int, *, dtype: Any = None) -> Tensor:
    """Running sum along ``dim`` (ints and bools accumulate in int64); CumsumBackward0."""
    return _cumulative("cumsum", np.cumsum, CUMSUM, input, dim, dtype)


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


def _cumprod_others(x: Tensor, d: int) -> tuple:
    """The pair tensors of Note [Scan gradients as pair sums] for ``cumprod(x, d)``:
    the mask ``j >= i`` and ``others[i, j] = prod_{k <= j, k != i} x_k``, the running
    product with x_i set to 1 (i at axis ``d``, j at ``d + 1``)."""
    from .shape import unsqueeze

    later, same = _pair_masks(x._data.shape[d], d, x._data.ndim)
    return later, cumprod(where(_constant(same), 1.0, unsqueeze(x, d)), d + 1)


def _cumprod_backward(grad: Tensor, x: Tensor, result: Tensor, dim: int) -> Tensor:
    """Running product; zeros in the input get their exact gradient (Note [Scan gradients
    as pair sums])."""
    d = _scan_dim(dim, x._data.ndim)
    if d is None:
        return grad
    if _tls.mode != RECORDING:  # Note [Cumprod's gradient without create_graph]
        return wrap(_cumprod_grad_np(grad._data, x._data, result._data, d), _tls.mode)
    if not (x._data == 0).any():  # torch's flip / cumsum / flip: no inf - inf
        from .shape import flip

        return flip(cumsum(flip(grad * result, (d,)), d), (d,)) / x
    from .shape import unsqueeze

    later, others = _cumprod_others(x, d)
    terms = where(_constant(later), unsqueeze(grad, d) * others, 0.0)
    return _sum_pairs(terms, d)


def _cumprod_tangent(t: Tensor, x: Tensor, d: int | None) -> Tensor:
    """``sum_{i <= j} t_i prod_{k <= j, k != i} x_k``: the pair sum over i."""
    if d is None:
        return t
    from .shape import unsqueeze

    later, others = _cumprod_others(x, d)
    return sum(where(_constant(later), unsqueeze(t, d + 1) * others, 0.0), d)


CUMPROD = General(
    "cumprod(Tensor input, int64_t dim, *, ScalarType? dtype=None, Tensor out=None)",
    grad_fn="CumprodBackward0", forward=None, params=("d", "dim"), keeps=("dim",),
    saves=("self", "result"),
    derivatives={"self": lambda grad, self, result, dim:
                 _conjugated(_cumprod_backward, grad, self, result, dim)},
    tangent=lambda self_t, self, d: _cumprod_tangent(self_t, self, d))
CumprodBackward0 = CUMPROD.node


@signature("cumprod(Tensor input, int64_t dim, *, ScalarType? dtype=None, Tensor out=None)")
def cumprod(input: Tensor, dim: int, *, dtype: Any = None) -> Tensor:
    """Running product along ``dim`` (ints and bools in int64); CumprodBackward0.

    >>> import npgrad
    >>> npgrad.tensor([1., 2., 3.]).cumprod(0)
    tensor([1., 2., 6.])
    """
    return _cumulative("cumprod", np.cumprod, CUMPROD, input, dim, dtype)


def _cummax_backward(grad: Tensor, indices: Tensor, dim: int) -> Tensor:
    """Each output took its value from the input at its index: the gradients add up there."""
    d = _scan_dim(dim, grad._data.ndim)
    if d is None:
        return grad
    from .indexing import scatter_add

    zeros = wrap(np.zeros(indices._data.shape, dtype=grad._data.dtype), 0)
    return scatter_add(zeros, d, indices, grad)


def _cummax_tangent(t: Tensor, indices: Tensor, d: int | None) -> Tensor:
    """The tangent at each output's index."""
    if d is None:
        return t
    from .indexing import gather

    return gather(t, d, indices)


def _cummax_entry(name: str, grad_fn: str) -> General:
    return General(
        f"{name}(Tensor input, int64_t dim, *, TensorList[2] out=None)", grad_fn=grad_fn,
        forward=None, params=("d", "dim"), keeps=("dim",), saves=("self", "indices"),
        extra=("indices",),
        derivatives={"self": lambda grad, indices, dim: _cummax_backward(grad, indices, dim)},
        tangent=lambda self_t, indices, d: _cummax_tangent(self_t, indices, d))


CUMMAX = _cummax_entry("cummax", "CummaxBackward0")
CUMMIN = _cummax_entry("cummin", "CumminBackward0")
CummaxBackward0 = CUMMAX.node
CumminBackward0 = CUMMIN.node


return_type_cummax = _return_type("cummax")
return_type_cummin = _return_type("cummin")


def _cum_extremum(op: str, input: Tensor, dim: int) -> Any:
    data = input._data
    if data.dtype.kind == "c":  # no complex kernel in torch
        refuse_complex((NotImplementedError, f"\"{op}_cpu\" not implemented for '{{dtype}}'"),
                       data.dtype)
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
    entry = CUMMAX if op == "cummax" else CUMMIN
    res, indices = entry.record((input,), (np.asarray(values, order="C"),
                                           np.asarray(idx, order="C")), (d, dim))
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


def _logcumsumexp_gaps(x: Tensor, result: Tensor, d: int) -> Tensor:
    """``x_i - out_j`` over the pairs ``j >= i`` (Note [Scan gradients as pair sums]); the
    other pairs get -inf, not a large exponent: exp's own derivative must stay finite."""
    from .shape import unsqueeze

    later, _ = _pair_masks(x._data.shape[d], d, x._data.ndim)
    return where(_constant(later), unsqueeze(x, d + 1) - unsqueeze(result, d), -math.inf)


def _logcumsumexp_backward(grad: Tensor, x: Tensor, result: Tensor, dim: int) -> Tensor:
    """``d out_j / d x_i = exp(x_i - out_j)`` for ``j >= i``, never above 1."""
    d = _scan_dim(dim, x._data.ndim)
    if d is None:
        return grad
    from .shape import unsqueeze

    if grad._data.dtype.kind == "c":  # conj(sum conj(grad) * exp(gap)): torch's, conj bit and all
        return _sum_pairs(unsqueeze(grad.conj(), d) * exp(_logcumsumexp_gaps(x, result, d)),
                          d).conj()
    return _sum_pairs(unsqueeze(grad, d) * exp(_logcumsumexp_gaps(x, result, d)), d)


def _logcumsumexp_tangent(t: Tensor, x: Tensor, result: Tensor, d: int | None) -> Tensor:
    if d is None:
        return t
    from .shape import unsqueeze

    return sum(unsqueeze(t, d + 1) * exp(_logcumsumexp_gaps(x, result, d)), d)


LOGCUMSUMEXP = General(
    "logcumsumexp(Tensor input, int64_t dim, *, Tensor out=None)",
    grad_fn="LogcumsumexpBackward0", forward=None, params=("d", "dim"), keeps=("dim",),
    saves=("self", "result"),
    derivatives={"self": lambda grad, self, result, dim:
                 _logcumsumexp_backward(grad, self, result, dim)},
    tangent=lambda self_t, self, result, d: _logcumsumexp_tangent(self_t, self, result, d))
LogcumsumexpBackward0 = LOGCUMSUMEXP.node


@signature("logcumsumexp(Tensor input, int64_t dim, *, Tensor out=None)")
def logcumsumexp(input: Tensor, dim: int) -> Tensor:
    """``log(cumsum(exp(input), dim))`` without overflow; LogcumsumexpBackward0.

    >>> import npgrad
    >>> npgrad.tensor([0., 0.]).logcumsumexp(0)
    tensor([0.0000, 0.6931])
    """
    data = input._data
    d = _single_dim("logcumsumexp", data.ndim, dim)
    if data.dtype.kind not in "fc":
        raise NotImplementedError("\"logcumsumexp_out_cpu\" not implemented for "
                                  f"'{_scalar_name(data.dtype)}'")
    acc = _acc(data)
    if d is None:
        out = acc.copy()
    elif acc.dtype.kind == "c":  # NumPy's logaddexp has no complex loop: torch's scan, step
        from .special import complex_logaddexp  # by step from -inf, ``(x_k, running)``

        out = np.moveaxis(acc.copy(), d, 0)
        running = np.full(out.shape[1:], complex(-math.inf, 0.0), out.dtype)
        for k in range(out.shape[0]):
            out[k] = running = complex_logaddexp(out[k], running)
        out = np.moveaxis(out, 0, d)
    else:
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            out = np.logaddexp.accumulate(acc, axis=d) if acc.size else acc.copy()
    return LOGCUMSUMEXP.record((input,), _finish(out, data.dtype, data.shape), (d, dim))


# -- nansum / nanmean / count_nonzero ---------------------------------------------------------

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


# -- var_mean / std_mean / aminmax: one node, two outputs -------------------------------------

def _var_mean_backward(grads: tuple, x: Tensor, dim: Any, correction: Any,
                       std: Tensor | None = None) -> Any:
    """Outputs (var or std, mean): the input's gradient is the sum of both rules.  Unlike
    var alone, the first output's gradient gets the reduced axes back first, and only a
    0-dim input takes the whole-tensor branch (torch's var_mean_backward)."""
    sizes = x._data.shape
    axes = _reduced(dim, sizes)
    keep_shape = _keep_shape(sizes, axes)
    corr = 1 if correction is None else correction
    grad_first, grad_mean = grads
    total = None
    if grad_first is not None:
        g = _restore(grad_first, keep_shape)
        if std is not None and axes:
            r = _restore(std, keep_shape)
            g = where(r == 0, 0.0, g / (r * 2))
        total = _var_grad(g, x, axes, corr, not sizes)
    if grad_mean is not None:
        g = _expand(_restore(grad_mean, keep_shape) / _count(sizes, axes), sizes)
        total = g if total is None else total + g
    return total


def _var_mean_tangent(t: Tensor, x: Tensor, first: Tensor, mean_: Tensor, axes: tuple,
                      dim: Any, correction: Any, keepdim: bool, std: bool) -> tuple:
    ones = _ones_as(first)
    grad_first = _var_mean_backward((ones, None), x, dim, correction, first if std else None)
    count = _count(x._data.shape, axes)
    return (_reduction_tangent(t, grad_first, axes, keepdim), _same_sum(t, axes, keepdim) / count)


VAR_MEAN = General(
    "var_mean(Tensor input, IntArrayRef[1]? dim=None, *, Scalar? correction=None, "
    "bool keepdim=False)", grad_fn="VarMeanBackward0", forward=None, outputs=2,
    params=("axes", "correction", "dim", "keepdim"), keeps=("correction", "dim", "keepdim"),
    saves=("self",),
    derivatives={"self": lambda grads, self, dim, correction:
                 _var_mean_backward(grads, self, dim, correction)},
    tangent=lambda self_t, self, result0, result1, axes, dim, correction, keepdim:
    _var_mean_tangent(self_t, self, result0, result1, axes, dim, correction, keepdim, False))

STD_MEAN = General(
    "std_mean(Tensor input, IntArrayRef[1]? dim=None, *, Scalar? correction=None, "
    "bool keepdim=False)", grad_fn="StdMeanBackward0", forward=None, outputs=2,
    params=("axes", "correction", "dim", "keepdim"), keeps=("correction", "dim", "keepdim"),
    saves=("self", "result0"),
    derivatives={"self": lambda grads, self, result0, dim, correction:
                 _var_mean_backward(grads, self, dim, correction, result0)},
    tangent=lambda self_t, self, result0, result1, axes, dim, correction, keepdim:
    _var_mean_tangent(self_t, self, result0, result1, axes, dim, correction, keepdim, True))

VarMeanBackward0 = VAR_MEAN.node
StdMeanBackward0 = STD_MEAN.node


def _welford_inf(data: np.ndarray, axes: tuple, m: np.ndarray) -> np.ndarray:
    """torch's mean of var_mean is Welford's running mean, ``mean += (x - mean) / n``, over
    the reduced elements in order: after an inf, any further element makes it NaN
    (inf - inf), so only an inf that comes last leaves the mean infinite."""
    inf = np.isinf(data)
    if not inf.any():
        return m
    rest = [a for a in range(data.ndim) if a not in axes]
    flat = inf.transpose(rest + list(axes)).reshape(tuple(data.shape[a] for a in rest) + (-1,))
    count = flat.sum(-1)
    # an empty reduction has no last element (its mean is NaN anyway)
    later = (count > 1) | ((count == 1) & ~flat[..., -1]) if flat.shape[-1] else count > 0
    return np.where(later, np.nan, m)


def _var_mean(op: str, entry: General, input: Tensor, dim: Any, unbiased: Any, keepdim: bool,
              correction: Any) -> tuple:
    data = input._data
    if data.dtype.kind not in "fc":
        raise RuntimeError(f"{op} only support floating point and complex dtypes")
    axes, corr, kept = _var_args(op, data, dim, unbiased, correction)
    v = _var_forward(op, data, axes, corr, keepdim)
    if entry is STD_MEAN:
        v = np.sqrt(v)
    with np.errstate(invalid="ignore", divide="ignore"):
        m = np.sum(_acc(data), axis=axes) / np.asarray(_count(data.shape, axes), _acc(data).dtype)
    if data.dtype.kind == "f":
        m = _welford_inf(data, axes, m)
    m = _finish(m, data.dtype, v.shape)
    rv, rm = entry.record((input,), (v, m), (axes, kept, _var_dims(dim), keepdim))
    return rv, rm


@signature("var_mean(Tensor input, IntArrayRef[1]? dim, bool unbiased=True, bool keepdim=False)",
           "var_mean(Tensor input, IntArrayRef[1]? dim=None, *, Scalar? correction=None, "
           "bool keepdim=False)",
           "var_mean(Tensor input, bool unbiased=True)")
def var_mean(input: Tensor, dim: Any = NO_DIM, unbiased: Any = None, keepdim: bool = False,
             *, correction: Any = None) -> tuple:
    """``(var(input, dim), mean(input, dim))`` from one node, VarMeanBackward0.

    >>> import npgrad
    >>> npgrad.var_mean(npgrad.tensor([1., 2., 3.]))
    (tensor(1.), tensor(2.))
    """
    return _var_mean("var_mean", VAR_MEAN, input, dim, unbiased, keepdim, correction)


@signature("std_mean(Tensor input, IntArrayRef[1]? dim, bool unbiased=True, bool keepdim=False)",
           "std_mean(Tensor input, IntArrayRef[1]? dim=None, *, Scalar? correction=None, "
           "bool keepdim=False)",
           "std_mean(Tensor input, bool unbiased=True)")
def std_mean(input: Tensor, dim: Any = NO_DIM, unbiased: Any = None, keepdim: bool = False,
             *, correction: Any = None) -> tuple:
    """``(std(input, dim), mean(input, dim))`` from one node, StdMeanBackward0.

    >>> import npgrad
    >>> npgrad.std_mean(npgrad.tensor([1., 2., 3.]))
    (tensor(1.), tensor(2.))
    """
    return _var_mean("std_mean", STD_MEAN, input, dim, unbiased, keepdim, correction)


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


def _aminmax_axes(dim: Any, sizes: tuple) -> tuple:
    if dim is None:
        return tuple(range(len(sizes)))
    return (wrap_dim(dim, len(sizes)),) if sizes else ()


def _aminmax_backward(grads: tuple, x: Tensor, lo: Tensor, hi: Tensor, dim: Any) -> Any:
    """Outputs (min, max): each one's gradient is shared evenly among the elements equal
    to it."""
    xd = x._data
    axes = _aminmax_axes(dim, xd.shape)
    keep_shape = _keep_shape(xd.shape, axes)
    total = None
    for g, extreme in zip(grads, (lo, hi)):
        if g is None:
            continue
        mask = xd == extreme._data.reshape(keep_shape)
        count = mask.sum(axis=axes, keepdims=True) if axes else 1
        part = _restore(g, keep_shape) * _constant((mask / count).astype(xd.dtype, copy=False))
        total = part if total is None else total + part
    return total


def _aminmax_tangent(t: Tensor, x: Tensor, lo: Tensor, hi: Tensor, dim: Any,
                     keepdim: bool) -> tuple:
    axes = _aminmax_axes(dim, x._data.shape)
    ones = _ones_as(lo)
    return tuple(_reduction_tangent(t, _aminmax_backward(grads, x, lo, hi, dim), axes, keepdim)
                 for grads in ((ones, None), (None, ones)))


AMINMAX = General(
    "aminmax(Tensor input, *, int64_t? dim=None, bool keepdim=False, TensorList[2] out=None)",
    grad_fn="AminmaxBackward0", forward=None, outputs=2, results=("min", "max"),
    params=("dim", "keepdim"), keeps=("dim", "keepdim"), saves=("self", "min", "max"),
    derivatives={"self": lambda grads, self, min, max, dim:
                 _aminmax_backward(grads, self, min, max, dim)},
    tangent=lambda self_t, self, min, max, dim, keepdim:
    _aminmax_tangent(self_t, self, min, max, dim, keepdim))
AminmaxBackward0 = AMINMAX.node


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
    if data.dtype.kind == "c":  # no complex kernel in torch
        refuse_complex((NotImplementedError, '"aminmax_cpu" not implemented for \'{dtype}\''), data.dtype)
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
    rlo, rhi = AMINMAX.record((input,), (lo, hi), (dim, keepdim))
    return return_type_aminmax(rlo, rhi)
