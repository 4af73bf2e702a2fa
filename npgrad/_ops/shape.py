"""Shape ops: views (view, reshape, squeeze, transpose, slicing, ...) and the copies beside them.

Note [Views and regions]
Every view op (view, reshape when the strides allow, expand, squeeze, unsqueeze,
transpose, t, permute, select, slice, narrow, diagonal, split, chunk, unbind)
is a ``View`` entry (Note [A view is an entry] in _ops/registry.py): the entry
returns a NumPy *view* of its input, shares the version counter and names the
root tensor as ``_base``; the op's function here checks the arguments (torch's
errors) and calls the entry.
The backward of a view that reads a part of its input (select, slice, narrow,
diagonal) is an op of its own, torch's ``select_backward`` ... (Note [A view's
backward is an op]): zeros of the input's shape holding the gradient where the
view read, whose own backward is the view again, so gradients of any order work.
"""
from __future__ import annotations

import builtins
import math
import warnings
from typing import TYPE_CHECKING, Any

import numpy as np

from .signature import batchable, checker, signature
from .. import _bfloat16, _dtype
from .._device import check_device, device as _device_cls
from .._mode import _tls
if TYPE_CHECKING:
    from .._tensor import Tensor
else:  # Note [Tensor base and Tensor] in npgrad._tensor_base
    from .._tensor_base import TensorBase as Tensor
from .._tensor_base import INFERENCE_COUNTER, TensorExtra, make_tensor, version_counter, wrap
from ..autograd.graph import _next_sequence_nr
from .allocation import check_numel, guarded, wrap_int64
from ._core import is_tensor
from ._shape_util import parse_shape, wrap_dim, wrap_dims
from .registry import General, View

_new = object.__new__

VIEW_STRIDE_MSG = ("view size is not compatible with input tensor's size and stride (at least one "
                   "dimension spans across two contiguous subspaces). Use .reshape(...) instead.")
DETACH_VIEW_MSG = (
    "Can't detach views in-place. Use detach() instead. If you are using DistributedDataParallel "
    "(DDP) for training, and gradient_as_bucket_view is set as True, gradients are views of DDP "
    "buckets, and hence detach_() cannot be called on these gradients. To fix this error, please "
    "refer to the Optimizer.zero_grad() function in torch/optim/optimizer.py as the solution."
)


def _shape_str(shape: Any) -> str:
    return "[" + ", ".join(str(s) for s in shape) + "]"


def _zeros(shape: tuple, dtype: np.dtype) -> Tensor:
    return wrap(np.zeros(shape, dtype=dtype), 0)


def _sum_to(grad: Tensor, shape: tuple) -> Tensor:
    """Sum a broadcast gradient down to ``shape`` (the backward of expand)."""
    from .reduction import sum as _sum

    gshape = grad._data.shape
    if gshape == tuple(shape):
        return grad
    lead = len(gshape) - len(shape)
    dims = tuple(range(lead)) + tuple(lead + i for i, s in enumerate(shape)
                                      if s == 1 and gshape[lead + i] != 1)
    g = _sum(grad, dims, True) if dims else grad
    return view(g, tuple(shape)) if g._data.shape != tuple(shape) else g


# -- view / reshape / flatten --------------------------------------------------------

def _infer_size(shape: tuple, numel: int) -> tuple:
    """Replace a -1 in ``shape`` by the size that makes it hold ``numel`` elements."""
    infer = None
    known = 1
    for i, s in enumerate(shape):
        if s == -1:
            if infer is not None:
                raise RuntimeError("only one dimension can be inferred")
            infer = i
        elif s < 0:
            raise RuntimeError(f"invalid shape dimension {s} at index {i} of shape "
                               f"{_shape_str(shape)}")
        else:
            known *= s
    if infer is None:
        if known != numel:
            raise RuntimeError(f"shape '{_shape_str(shape)}' is invalid for input of size {numel}")
        return shape
    if known == 0:
        if numel == 0:
            raise RuntimeError(
                f"cannot reshape tensor of 0 elements into shape {_shape_str(shape)} because the "
                "unspecified dimension size -1 can be any value and is ambiguous")
        raise RuntimeError(f"shape '{_shape_str(shape)}' is invalid for input of size {numel}")
    if numel % known:
        raise RuntimeError(f"shape '{_shape_str(shape)}' is invalid for input of size {numel}")
    return shape[:infer] + (numel // known,) + shape[infer + 1:]


def _nocopy_reshape(data: np.ndarray, shape: tuple) -> np.ndarray | None:
    try:
        return np.reshape(data, shape, copy=False)  # NumPy >= 2.1: raises instead of copying
    except ValueError:
        return None


def _viewed(data: np.ndarray, size: tuple) -> np.ndarray:
    try:
        return np.reshape(data, size, copy=False)
    except ValueError:
        raise RuntimeError(VIEW_STRIDE_MSG) from None


def _reshaped_back(grad: Tensor, self_sym_sizes: tuple) -> Tensor:
    return reshape(grad, self_sym_sizes)


VIEW = View("view(Tensor input, SymIntArrayRef size)", grad_fn="ViewBackward0",
            forward=_viewed, params=("size",), keeps=("self_sym_sizes",),
            derivative=_reshaped_back)
# torch's reshape of a tensor whose strides allow a view that is not contiguous
RESHAPE_ALIAS = View("_reshape_alias(Tensor input, SymIntArrayRef size)",
                     grad_fn="ReshapeAliasBackward0", forward=_viewed, params=("size",),
                     keeps=("self_sym_sizes",), derivative=_reshaped_back)
# torch's ``_unsafe_view``: an op's fresh result reshaped, recorded as a new tensor (not a
# view), run through ``View.on_fresh``; ``copy`` makes its own memory when the input is not
# fresh
UNSAFE_VIEW = View("_unsafe_view(Tensor input, SymIntArrayRef size)",
                   grad_fn="UnsafeViewBackward0",
                   forward=lambda a, size, copy: (np.array(a.reshape(size), copy=True) if copy
                                                  else a.reshape(size)),
                   params=("size", "copy"), keeps=("self_sym_sizes",), derivative=_reshaped_back)


def view(input: Tensor, *shape: Any) -> Tensor:
    """The same storage seen with another shape (grad_fn ``ViewBackward0``).

    >>> import npgrad
    >>> npgrad.arange(6).view(2, -1).shape
    torch.Size([2, 3])
    """
    return VIEW(input, _infer_size(parse_shape(shape), input._data.size))


@signature("reshape(Tensor input, SymIntArrayRef shape)")
def reshape(input: Tensor, *shape: Any) -> Tensor:
    """``view`` when the strides allow it, else a copy (``UnsafeViewBackward0`` over a clone)."""
    data = input._data
    shape = _infer_size(parse_shape(shape), data.size)
    if data.flags.c_contiguous:
        return VIEW(input, shape)
    if _nocopy_reshape(data, shape) is not None:
        return RESHAPE_ALIAS(input, shape)
    return UNSAFE_VIEW.on_fresh(UNSAFE_VIEW.node, clone(input), shape, False)


def unsafe_view(input: Tensor, shape: tuple, copy: bool = False) -> Tensor:
    """torch's ``_unsafe_view``: ``input`` (an op's fresh, contiguous result) reshaped, recorded
    as a new tensor rather than a view (grad_fn ``UnsafeViewBackward0``); ``copy`` for an
    input that is not fresh."""
    return UNSAFE_VIEW.on_fresh(UNSAFE_VIEW.node, input, tuple(shape), copy)


@signature("flatten(Tensor input, int64_t start_dim=0, int64_t end_dim=-1)")
def flatten(input: Tensor, start_dim: int = 0, end_dim: int = -1) -> Tensor:
    """Merge dims ``start_dim..end_dim`` into one; returns ``input`` itself when nothing changes."""
    shape = input._data.shape
    if len(shape) == 0:
        return reshape(input, (1,))
    start = wrap_dim(start_dim, len(shape))
    end = wrap_dim(end_dim, len(shape))
    if start > end:
        raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    if start == end:
        return input
    merged = math.prod(shape[start:end + 1])
    return reshape(input, shape[:start] + (merged,) + shape[end + 1:])


@signature("unflatten(Tensor input, int64_t dim, SymIntArrayRef sizes)")
def unflatten(input: Tensor, dim: int, sizes: Any) -> Tensor:
    """Split dim ``dim`` into ``sizes`` (one entry may be -1)."""
    shape = input._data.shape
    d = wrap_dim(dim, len(shape))
    sizes = tuple(int(s) for s in sizes)
    if not sizes:
        raise RuntimeError("unflatten: sizes must be non-empty")
    n = shape[d] if shape else 1
    if -1 in sizes:
        try:
            sizes = _infer_size(sizes, n)
        except RuntimeError:
            pass
    if math.prod(sizes) != n:
        raise RuntimeError(f"unflatten: Provided sizes {_shape_str(sizes)} don't multiply up to "
                           f"the size of dim {dim} ({n}) in the input tensor")
    return view(input, shape[:d] + sizes + shape[d + 1:])


# -- squeeze / unsqueeze / transpose / t / permute -------------------------------------

def _squeezed_all(a: np.ndarray) -> np.ndarray:
    return np.squeeze(a)


def _squeezed_dim(a: np.ndarray, dim: int) -> np.ndarray:
    return np.squeeze(a, axis=dim) if a.ndim and a.shape[dim] == 1 else a.view()


def _squeezed_dims(a: np.ndarray, dim: tuple) -> np.ndarray:
    nd = a.ndim
    axes = tuple(d % nd for d in dim if a.shape[d] == 1) if nd else ()
    return np.squeeze(a, axis=axes) if axes else a.view()


def _unsqueezed_at(grad: Tensor, dims: Any) -> Tensor:
    for d in dims:  # ascending: each unsqueeze restores one squeezed dim
        grad = unsqueeze(grad, d)
    return grad


def _unsqueeze_all(grad: Tensor, self_sym_sizes: tuple) -> Tensor:
    if grad._data.shape == self_sym_sizes:
        return grad
    return _unsqueezed_at(grad, [d for d, s in enumerate(self_sym_sizes) if s == 1])


def _unsqueeze_dim(grad: Tensor, self_sym_sizes: tuple, dim: int) -> Tensor:
    nd = len(self_sym_sizes)
    return unsqueeze(grad, dim % nd) if nd and self_sym_sizes[dim] == 1 else grad


def _unsqueeze_dims(grad: Tensor, self_sym_sizes: tuple, dim: tuple) -> Tensor:
    nd = len(self_sym_sizes)
    if not nd:
        return grad
    return _unsqueezed_at(grad, sorted({d % nd for d in dim if self_sym_sizes[d] == 1}))


SQUEEZE = View("squeeze(Tensor input)", grad_fn="SqueezeBackward0", forward=_squeezed_all,
               keeps=("self_sym_sizes",), derivative=_unsqueeze_all)
SQUEEZE_DIM = View("squeeze(Tensor input, int64_t dim)", grad_fn="SqueezeBackward1",
                   forward=_squeezed_dim, params=("dim",), keeps=("self_sym_sizes", "dim"),
                   derivative=_unsqueeze_dim)
SQUEEZE_DIMS = View("squeeze(Tensor input, IntArrayRef dim)", grad_fn="SqueezeBackward2",
                    forward=_squeezed_dims, params=("dim",), keeps=("self_sym_sizes", "dim"),
                    derivative=_unsqueeze_dims)
UNSQUEEZE = View("unsqueeze(Tensor input, int64_t dim)", grad_fn="UnsqueezeBackward0",
                 forward=lambda a, dim: np.expand_dims(a, dim), params=("dim",), keeps=("dim",),
                 derivative=lambda grad, dim: squeeze(grad, dim))
TRANSPOSE = View("transpose(Tensor input, int64_t dim0, int64_t dim1)",
                 grad_fn="TransposeBackward0",
                 forward=lambda a, dim0, dim1: np.swapaxes(a, dim0, dim1) if a.ndim else a.view(),
                 params=("dim0", "dim1"), keeps=("dim0", "dim1"),
                 derivative=lambda grad, dim0, dim1: transpose(grad, dim0, dim1))
T = View("t(Tensor input)", grad_fn="TBackward0", forward=lambda a: a.T,
         derivative=lambda grad: t(grad))
PERMUTE = View("permute(Tensor input, IntArrayRef dims)", grad_fn="PermuteBackward0",
               forward=lambda a, dims: np.transpose(a, dims), params=("dims",), keeps=("dims",),
               derivative=lambda grad, dims: permute(grad, _inverse_permutation(dims)))


def _inverse_permutation(dims: tuple) -> tuple:
    nd = len(dims)
    return tuple(np.argsort([d % nd for d in dims]).tolist())


@signature("squeeze(Tensor input)",
           "squeeze(Tensor input, int64_t dim)",
           "squeeze(Tensor input, IntArrayRef dim)")
def squeeze(input: Tensor, dim: Any = None) -> Tensor:
    """Drop size-1 dims (all, one, or a tuple): ``SqueezeBackward0/1/2``."""
    if dim is None:
        return SQUEEZE(input)
    nd = input._data.ndim
    if isinstance(dim, (tuple, list)):
        wrap_dims(dim, nd)  # torch's checks (range, repeats)
        return SQUEEZE_DIMS(input, tuple(dim))
    wrap_dim(dim, nd)
    return SQUEEZE_DIM(input, dim)


# torch's in-place ``squeeze_(dim)``: SQUEEZE_DIM's twin (Note [In-place view ops])
SqueezeBackward4 = SQUEEZE_DIM.twin("SqueezeBackward4")


def squeeze_fresh_(result: Tensor, dim: int) -> Tensor:
    """An op's fresh result with its size-1 dim ``dim`` dropped (grad_fn ``SqueezeBackward4``).

    torch ends matmul(1-D, 2-D) and quantile with an in-place ``squeeze_`` on a result
    no one else holds; returning a new tensor over the same data is the same thing then.
    """
    return SQUEEZE_DIM.on_fresh(SqueezeBackward4, result, dim)


@signature("unsqueeze(Tensor input, int64_t dim)")
def unsqueeze(input: Tensor, dim: int) -> Tensor:
    """Insert a size-1 dim at ``dim`` (grad_fn ``UnsqueezeBackward0``)."""
    wrap_dim(dim, input._data.ndim + 1)
    return UNSQUEEZE(input, dim)


# Note [The sparse layout, bound late]
# A sparse tensor's transposes and dtype conversions are npgrad._ops.sparse's; that
# module sits above this one (it records this module's nodes) and binds itself here on
# import.  The functions below test the class of the array they read anyway, so a dense
# tensor pays one isinstance test (Note [Sparse COO tensors] in npgrad._ops.sparse).
SPARSE_OPS: Any = None


def bind_sparse_ops(module: Any) -> None:
    global SPARSE_OPS
    SPARSE_OPS = module


@signature("transpose(Tensor input, int64_t dim0, int64_t dim1)")
def transpose(input: Tensor, dim0: int, dim1: int) -> Tensor:
    """Swap two dims (a view; grad_fn ``TransposeBackward0``)."""
    data = input._data
    nd = data.ndim
    d0 = wrap_dim(dim0, nd)
    d1 = wrap_dim(dim1, nd)
    if not isinstance(data, np.ndarray):
        return SPARSE_OPS.transpose(input, dim0, dim1, d0, d1)
    return TRANSPOSE(input, dim0, dim1)


swapaxes = swapdims = transpose


@signature("t(Tensor input)")
def t(input: Tensor) -> Tensor:
    """Transpose a matrix; 0-D and 1-D tensors come back as views of themselves."""
    data = input._data
    if not isinstance(data, np.ndarray):
        return SPARSE_OPS.t(input)
    nd = data.ndim
    if nd > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {nd}D")
    return T(input)


def _dims_arg(dims: tuple) -> tuple:
    if len(dims) == 1 and isinstance(dims[0], (tuple, list)):
        return tuple(dims[0])
    return dims


@signature("permute(Tensor input, IntArrayRef dims)")
def permute(input: Tensor, *dims: Any) -> Tensor:
    """Reorder the dims (a view; grad_fn ``PermuteBackward0``)."""
    if not dims:
        raise TypeError('permute() missing 1 required positional arguments: "dims"')
    dims = _dims_arg(dims)
    nd = input._data.ndim
    if len(dims) != nd:
        raise RuntimeError(
            "permute(sparse_coo): number of dimensions in the tensor input does not match the "
            "length of the desired ordering of dimensions i.e. input.dim() = "
            f"{nd} is not equal to len(dims) = {len(dims)}")
    wrapped = tuple(wrap_dim(d, nd) for d in dims)
    if len(set(wrapped)) != len(wrapped):
        raise RuntimeError("permute(): duplicate dims are not allowed.")
    if not isinstance(input._data, np.ndarray):
        return SPARSE_OPS.permute(input, wrapped, dims)
    return PERMUTE(input, dims)


# -- expand / repeat -------------------------------------------------------------------

def _expanded(a: np.ndarray, size: tuple, strides: tuple) -> np.ndarray:
    """``a`` seen with shape ``size``; ``strides`` (in bytes, 0 on a broadcast dim) are
    worked out by ``expand`` with its checks."""
    return np.lib.stride_tricks.as_strided(a, size, strides, writeable=a.flags.writeable)


EXPAND = View("expand(Tensor input, SymIntArrayRef size, *, bool implicit=False)",
              grad_fn="ExpandBackward0", forward=_expanded, params=("size", "strides"),
              keeps=("self_sym_sizes",), derivative=lambda grad, sizes: _sum_to(grad, sizes))


def _legacy_name(x: Tensor) -> str:
    return "torch." + _dtype.from_np(x._data.dtype).legacy_type


def expand(input: Tensor, *sizes: Any) -> Tensor:
    """Broadcast to ``sizes`` without copying (-1 keeps a size; grad_fn ``ExpandBackward0``)."""
    data = input._data
    sizes = parse_shape(sizes)
    shape = data.shape
    if len(sizes) < len(shape):
        raise RuntimeError(
            f"expand({_legacy_name(input)}{{{_shape_str(shape)}}}, size={_shape_str(sizes)}): the "
            f"number of sizes provided ({len(sizes)}) must be greater or equal to the number of "
            f"dimensions in the tensor ({len(shape)})")
    lead = len(sizes) - len(shape)
    out_shape, strides = [], []
    for i, s in enumerate(sizes):
        if i < lead:
            if s < 0:
                raise RuntimeError(f"The expanded size of the tensor ({s}) isn't allowed in a "
                                   f"leading, non-existing dimension {i}")
            out_shape.append(s)
            strides.append(0)
            continue
        have = shape[i - lead]
        if s == -1:
            s = have
        if have != s:
            if have != 1:
                raise RuntimeError(
                    f"The expanded size of the tensor ({s}) must match the existing size ({have})"
                    f" at non-singleton dimension {i}.  Target sizes: {_shape_str(sizes)}.  "
                    f"Tensor sizes: {_shape_str(shape)}")
            strides.append(0)
        else:
            strides.append(data.strides[i - lead])
        out_shape.append(s)
    size = tuple(out_shape)
    check_numel(size)
    return EXPAND(input, size, tuple(strides))


def _repeat_back(grad: Tensor, repeats: tuple, self_sym_sizes: tuple) -> Tensor:
    """Each copy's gradient summed back: the repeats split into dims of their own."""
    from .reduction import sum as _sum

    padded = (1,) * (len(repeats) - len(self_sym_sizes)) + tuple(self_sym_sizes)
    split: list = []
    for r, s in zip(repeats, padded):
        split += [r, s]
    g = _sum(reshape(grad, tuple(split)), tuple(range(0, 2 * len(repeats), 2)), False)
    return reshape(g, self_sym_sizes)


REPEAT = General(
    "repeat(Tensor input, SymIntArrayRef repeats)", grad_fn="RepeatBackward0", forward=None,
    params=("repeats",), keeps=("repeats", "self_sym_sizes"),
    derivatives={"self": _repeat_back},
    tangent=lambda self_t, repeats: repeat(self_t, repeats))


def repeat(input: Tensor, *sizes: Any) -> Tensor:
    """Tile ``input`` ``sizes`` times along each dim (a copy; grad_fn ``RepeatBackward0``)."""
    reps = parse_shape(sizes)
    data = input._data
    if len(reps) < data.ndim:
        raise RuntimeError("Number of dimensions of repeat dims can not be smaller than number "
                           "of dimensions of tensor")
    padded = (1,) * (len(reps) - data.ndim) + data.shape
    # int64 sizes, as torch computes them (Note [Sizes checked before allocating])
    target = tuple(wrap_int64(r * s) for r, s in zip(reps, padded))
    out = guarded(target, data.dtype, lambda: np.tile(data.reshape(padded), reps)
                  if reps else data.copy())
    return REPEAT.record((input,), out, (reps,))  # type: ignore[no-any-return]


# -- cat / stack -----------------------------------------------------------------------

def _cat_back(grad: Tensor, dim: int, sizes: tuple) -> tuple:
    """Each tensor's part of the gradient, along ``dim``; a skipped legacy empty tensor
    (size None) gets zeros of its shape ``(0,)``."""
    grads = []
    start = 0
    for size in sizes:
        if size is None:
            grads.append(_zeros((0,), grad._data.dtype))
            continue
        grads.append(narrow(grad, dim, start, size))
        start += size
    return tuple(grads)


# Note [A TensorList input] in _ops/registry.py; torch keeps ``dim`` as given and the
# sizes without a getter
CAT = General(
    "cat(TensorList tensors, int64_t dim=0, *, Tensor out=None)", grad_fn="CatBackward0",
    forward=None, inputs=("tensors",), tensor_list=True, params=("dim", "sizes"),
    keeps=("dim", "sizes"), hidden=("sizes",), derivatives={"tensors": _cat_back},
    tangent=lambda tensors_t, dim: cat(tensors_t, dim))


def _tensor_list(tensors: Any, fname: str) -> list:
    if is_tensor(tensors) or not isinstance(tensors, (list, tuple)):
        raise TypeError(f"{fname}(): argument 'tensors' (position 1) must be tuple of Tensors, "
                        f"not {type(tensors).__name__}")
    return list(tensors)


@signature("cat(TensorList tensors, int64_t dim=0, *, Tensor out=None)")
def cat(tensors: Any, dim: int = 0) -> Tensor:
    """Join tensors along an existing dim, promoting dtypes (grad_fn ``CatBackward0``).

    >>> import npgrad
    >>> npgrad.cat([npgrad.ones(2), npgrad.zeros(1)])
    tensor([1., 1., 0.])
    """
    tensors = _tensor_list(tensors, "cat")
    if not tensors:
        raise ValueError("torch.cat(): expected a non-empty list of Tensors")
    arrays = [x._data for x in tensors]
    for i, a in enumerate(arrays):
        if a.ndim == 0:
            raise RuntimeError(f"zero-dimensional tensor (at position {i}) cannot be "
                               "concatenated")
    # torch still skips 1-D empty tensors whatever the other shapes are (legacy behaviour)
    used = [i for i, a in enumerate(arrays) if not (a.ndim == 1 and a.shape[0] == 0)]
    dt = _dtype.result_type_np(tuple(arrays))
    if not used:
        out = np.zeros((0,), dtype=dt)
        d = wrap_dim(dim, 1)
    else:
        ref = arrays[used[0]]
        d = wrap_dim(dim, ref.ndim)
        for i in used[1:]:
            a = arrays[i]
            if a.ndim != ref.ndim:
                raise RuntimeError(f"Tensors must have same number of dimensions: got {ref.ndim} "
                                   f"and {a.ndim}")
            for k in range(ref.ndim):
                if k != d and a.shape[k] != ref.shape[k]:
                    raise RuntimeError(
                        f"Sizes of tensors must match except in dimension {d}. Expected size "
                        f"{ref.shape[k]} but got size {a.shape[k]} for tensor number {i} in the "
                        "list.")
        out = np.concatenate([arrays[i].astype(dt, copy=False) for i in used], axis=d)
    if dt.kind not in "fc":
        return wrap(out, _tls.mode)
    # each tensor's size along ``d``; None for a skipped legacy empty one
    sizes = tuple(None if a.ndim == 1 and a.shape[0] == 0 else a.shape[d] for a in arrays)
    return CAT.record(tuple(tensors), out, (dim, sizes))  # type: ignore[no-any-return]


concat = concatenate = cat


STACK = General(
    "stack(TensorList tensors, int64_t dim=0, *, Tensor out=None)", grad_fn="StackBackward0",
    forward=None, inputs=("tensors",), tensor_list=True, params=("dim", "count"),
    keeps=("dim", "count"), hidden=("count",),
    derivatives={"tensors": lambda grad, dim, count:
                 tuple(select(grad, dim, i) for i in range(count))},
    tangent=lambda tensors_t, dim: stack(tensors_t, dim))


@signature("stack(TensorList tensors, int64_t dim=0, *, Tensor out=None)")
def stack(tensors: Any, dim: int = 0) -> Tensor:
    """Join equally shaped tensors along a new dim (grad_fn ``StackBackward0``)."""
    tensors = _tensor_list(tensors, "stack")
    if not tensors:
        raise RuntimeError("stack expects a non-empty TensorList")
    arrays = [x._data for x in tensors]
    d = wrap_dim(dim, arrays[0].ndim + 1)
    for i, a in enumerate(arrays[1:], 1):
        if a.shape != arrays[0].shape:
            raise RuntimeError(f"stack expects each tensor to be equal size, but got "
                               f"{_shape_str(arrays[0].shape)} at entry 0 and "
                               f"{_shape_str(a.shape)} at entry {i}")
    dt = _dtype.result_type_np(tuple(arrays))
    out = np.stack([a.astype(dt, copy=False) for a in arrays], axis=d)
    if dt.kind not in "fc":
        return wrap(out, _tls.mode)
    return STACK.record(tuple(tensors), out, (dim, len(tensors)))  # type: ignore[no-any-return]


# -- split / chunk / unbind: one node, many outputs --------------------------------------

def _split_pieces(data: np.ndarray, d: int, sizes: Any) -> list:
    pieces, start = [], 0
    lead = (slice(None),) * d
    for s in sizes:
        pieces.append(data[lead + (slice(start, start + s), Ellipsis)])
        start += s
    return pieces


def _split_even(a: np.ndarray, split_size: int, dim: int) -> list:
    d = dim % a.ndim
    n = a.shape[d]
    count = builtins.max(1, -(-n // split_size)) if split_size else 1
    return _split_pieces(a, d, [split_size] * (count - 1) + [n - split_size * (count - 1)])


def _split_back(grads: list, self_sym_sizes: tuple, split_size: Any, dim: int) -> Tensor:
    return cat(grads, dim)


SPLIT = View("split(Tensor input, SymInt split_size, int64_t dim=0)", grad_fn="SplitBackward0",
             forward=_split_even, params=("split_size", "dim"),
             keeps=("self_sym_sizes", "split_size", "dim"), derivative=_split_back, many=True)
SPLIT_WITH_SIZES = View(
    "split_with_sizes(Tensor input, SymIntArrayRef split_sizes, int64_t dim=0)",
    grad_fn="SplitWithSizesBackward0",
    forward=lambda a, split_sizes, dim: _split_pieces(a, dim % a.ndim, split_sizes),
    params=("split_sizes", "dim"), keeps=("self_sym_sizes", "split_sizes", "dim"),
    derivative=_split_back, many=True)


def _unbound(a: np.ndarray, dim: int) -> list:
    lead = (slice(None),) * (dim % a.ndim)
    return [a[lead + (i, Ellipsis)] for i in range(a.shape[dim])]


UNBIND = View("unbind(Tensor input, int64_t dim=0)", grad_fn="UnbindBackward0",
              forward=_unbound, params=("dim",), keeps=("dim",),
              derivative=lambda grads, dim: stack(grads, dim), many=True)


_SPLIT_CHECK = checker("split(Tensor input, SymInt split_size, int64_t dim=0)",
                       "split(Tensor input, SymIntArrayRef split_size, int64_t dim=0)")
_SPLIT_WITH_SIZES_CHECK = checker("split_with_sizes(Tensor input, SymIntArrayRef split_sizes, "
                                  "int64_t dim=0)")


@batchable  # Note [Batched values] in npgrad.func._batched
def split(input: Tensor, split_size_or_sections: Any, dim: int = 0) -> tuple:
    """Views of consecutive pieces along ``dim``.

    grad_fn ``SplitBackward0`` for an int size, ``SplitWithSizesBackward0`` for a list.
    """
    # torch.split is Python: ``tensor.split(size, dim)`` (whatever the object's own split
    # does), then Tensor.split picks the C op by the size's type
    if not isinstance(input, Tensor):
        return input.split(split_size_or_sections, dim)
    if isinstance(split_size_or_sections, Tensor) and split_size_or_sections._data.size == 1:
        split_size_or_sections = int(split_size_or_sections)  # torch's int() of the tensor
    if isinstance(split_size_or_sections, int):
        _SPLIT_CHECK(input, split_size_or_sections, dim)
    else:
        _SPLIT_WITH_SIZES_CHECK(input, split_size_or_sections, dim)
    data = input._data
    if data.ndim == 0:
        raise RuntimeError("split expects at least a 1-dimensional tensor")
    d = wrap_dim(dim, data.ndim)
    n = data.shape[d]
    if isinstance(split_size_or_sections, (list, tuple)):
        sizes = tuple(int(s) for s in split_size_or_sections)
        if builtins.sum(sizes) != n or builtins.any(s < 0 for s in sizes):
            raise RuntimeError(f"split_with_sizes expects split_sizes to sum exactly to {n} "
                               f"(input tensor's size at dimension {d}), but got "
                               f"split_sizes={_shape_str(sizes)}")
        return SPLIT_WITH_SIZES(input, sizes, dim)
    size = int(split_size_or_sections)
    if size < 0:
        raise RuntimeError(f"split expects split_size be non-negative, but got "
                           f"split_size={size}")
    if size == 0 and n != 0:
        raise RuntimeError("split_size can only be 0 if dimension size is 0, but got "
                           f"dimension size of {n}")
    return SPLIT(input, size, dim)


@signature("chunk(Tensor input, int64_t chunks, int64_t dim=0)")
def chunk(input: Tensor, chunks: int, dim: int = 0) -> tuple:
    """``split`` into at most ``chunks`` pieces of ceil(size / chunks)."""
    if chunks <= 0:
        raise RuntimeError(f"chunk expects `chunks` to be greater than 0, got: {chunks}")
    data = input._data
    if data.ndim == 0:
        raise RuntimeError("chunk expects at least a 1-dimensional tensor")
    n = data.shape[wrap_dim(dim, data.ndim)]
    if n == 0:  # every chunk of an empty dim is empty
        return split(input, [0] * chunks, dim)
    return split(input, -(-n // chunks), dim)


@signature("unbind(Tensor input, int64_t dim=0)")
def unbind(input: Tensor, dim: int = 0) -> tuple:
    """Views of each slice along ``dim`` (grad_fn ``UnbindBackward0``)."""
    data = input._data
    if data.ndim == 0:
        raise IndexError("Dimension specified as 0 but tensor has no dimensions")
    wrap_dim(dim, data.ndim)
    return UNBIND(input, dim)


# -- narrow / select / slicing / diagonal -----------------------------------------------

_INT64_MAX = (1 << 63) - 1  # torch's end of an open slice (``x[1:]`` keeps end=INT64_MAX)


def _dim_key(nd: int, dim: int, item: Any) -> tuple:
    return (slice(None),) * (dim % nd) + (item, Ellipsis)


def _selected(a: np.ndarray, dim: int, index: int) -> np.ndarray:
    return a[_dim_key(a.ndim, dim, index)]


def _sliced(a: np.ndarray, dim: int, start: int, end: int, step: int) -> np.ndarray:
    return a[_dim_key(a.ndim, dim, slice(start, end, step))]


def _diagonal_view(arr: np.ndarray, offset: int, d1: int, d2: int) -> np.ndarray:
    """The (writable) diagonal of dims ``d1``/``d2`` (wrapped) of ``arr``, as its last dim."""
    s1, s2 = arr.shape[d1], arr.shape[d2]
    if offset >= 0:
        length = builtins.max(0, builtins.min(s1, s2 - offset))
        start = arr[(slice(None),) * d2 + (slice(builtins.min(offset, s2), None),)]
    else:
        length = builtins.max(0, builtins.min(s1 + offset, s2))
        start = arr[(slice(None),) * d1 + (slice(builtins.min(-offset, s1), None),)]
    keep = [i for i in range(arr.ndim) if i != d1 and i != d2]
    shape = tuple(arr.shape[i] for i in keep) + (length,)
    strides = tuple(arr.strides[i] for i in keep) + (arr.strides[d1] + arr.strides[d2],)
    return np.lib.stride_tricks.as_strided(start, shape, strides, writeable=arr.flags.writeable)


def _diagonal_of(a: np.ndarray, offset: int, dim1: int, dim2: int) -> np.ndarray:
    return _diagonal_view(a, offset, dim1 % a.ndim, dim2 % a.ndim)


# Note [A view's backward is an op]
# The backward of select, slice and diagonal is torch's ``select_backward`` (and
# ``slice_backward``, ``diagonal_backward``): zeros of the input's shape holding the
# gradient where the view read.  Each is an op with an entry of its own, recorded as torch
# records it (``SelectBackwardBackward0`` ...) when the backward builds a graph, keeping
# the view's arguments as torch does; its own backward is the view again, so gradients of
# any order are views and placements of each other.

def _placed(grad: np.ndarray, input_sizes: tuple, key: Any) -> np.ndarray:
    out = np.zeros(input_sizes, dtype=grad.dtype)
    out[key] = grad
    return out


def _select_placed(grad: np.ndarray, input_sizes: tuple, dim: int, index: int) -> np.ndarray:
    return _placed(grad, input_sizes, _dim_key(len(input_sizes), dim, index))


def _slice_placed(grad: np.ndarray, input_sizes: tuple, dim: int, start: int, end: int,
                  step: int) -> np.ndarray:
    return _placed(grad, input_sizes, _dim_key(len(input_sizes), dim, slice(start, end, step)))


def _diagonal_placed(grad: np.ndarray, input_sizes: tuple, offset: int, dim1: int,
                     dim2: int) -> np.ndarray:
    out = np.zeros(input_sizes, dtype=grad.dtype)
    nd = len(input_sizes)
    _diagonal_view(out, offset, dim1 % nd, dim2 % nd)[...] = grad
    return out


SELECT_BACKWARD = General(
    "select_backward(Tensor grad_output, SymIntArrayRef input_sizes, int64_t dim, SymInt index)",
    grad_fn="SelectBackwardBackward0", inputs=("grad_output",), forward=_select_placed,
    params=("input_sizes", "dim", "index"), keeps=("dim", "index"),
    derivatives={"grad_output": lambda grad, dim, index: SELECT(grad, dim, index)},
    tangent=lambda grad_output_t, input_sizes, dim, index: SELECT_BACKWARD(
        (grad_output_t,), (input_sizes, dim, index)))
SLICE_BACKWARD = General(
    "slice_backward(Tensor grad_output, SymIntArrayRef input_sizes, int64_t dim, SymInt start, "
    "SymInt end, SymInt step)", grad_fn="SliceBackwardBackward0", inputs=("grad_output",),
    forward=_slice_placed, params=("input_sizes", "dim", "start", "end", "step"),
    keeps=("dim", "start", "end", "step"),
    derivatives={"grad_output": lambda grad, dim, start, end, step:
                 SLICE(grad, dim, start, end, step)},
    tangent=lambda grad_output_t, input_sizes, dim, start, end, step: SLICE_BACKWARD(
        (grad_output_t,), (input_sizes, dim, start, end, step)))
DIAGONAL_BACKWARD = General(
    "diagonal_backward(Tensor grad_output, SymIntArrayRef input_sizes, int64_t offset, "
    "int64_t dim1, int64_t dim2)", grad_fn="DiagonalBackwardBackward0",
    inputs=("grad_output",), forward=_diagonal_placed,
    params=("input_sizes", "offset", "dim1", "dim2"), keeps=("offset", "dim1", "dim2"),
    derivatives={"grad_output": lambda grad, offset, dim1, dim2:
                 DIAGONAL(grad, offset, dim1, dim2)},
    tangent=lambda grad_output_t, input_sizes, offset, dim1, dim2: DIAGONAL_BACKWARD(
        (grad_output_t,), (input_sizes, offset, dim1, dim2)))


def _select_back(grad: Tensor, self_sym_sizes: tuple, dim: int, index: int) -> Tensor:
    return SELECT_BACKWARD((grad,), (self_sym_sizes, dim, index))


def _slice_back(grad: Tensor, self_sym_sizes: tuple, dim: int, start: int, end: int,
                step: int) -> Tensor:
    return SLICE_BACKWARD((grad,), (self_sym_sizes, dim, start, end, step))


def _diagonal_back(grad: Tensor, self_sym_sizes: tuple, offset: int, dim1: int,
                   dim2: int) -> Tensor:
    return DIAGONAL_BACKWARD((grad,), (self_sym_sizes, offset, dim1, dim2))


SELECT = View("select(Tensor input, int64_t dim, SymInt index)", grad_fn="SelectBackward0",
              forward=_selected, params=("dim", "index"),
              keeps=("self_sym_sizes", "dim", "index"), derivative=_select_back)
SLICE = View("slice(Tensor input, int64_t dim=0, SymInt? start=None, SymInt? end=None, "
             "SymInt step=1)", grad_fn="SliceBackward0", forward=_sliced,
             params=("dim", "start", "end", "step"),
             keeps=("self_sym_sizes", "dim", "start", "end", "step"), derivative=_slice_back)
DIAGONAL = View("diagonal(Tensor input, int64_t offset=0, int64_t dim1=0, int64_t dim2=1)",
                grad_fn="DiagonalBackward0", forward=_diagonal_of,
                params=("offset", "dim1", "dim2"),
                keeps=("self_sym_sizes", "offset", "dim1", "dim2"), derivative=_diagonal_back)


def slice_dim(input: Tensor, dim: int, start: Any, stop: Any, step: int = 1) -> Tensor:
    """``input[..., start:stop:step, ...]`` on dim ``dim`` (a view; ``SliceBackward0``); the
    node keeps the bounds as given, an open one as torch keeps it (0, INT64_MAX)."""
    return SLICE(input, dim, 0 if start is None else start,
                 _INT64_MAX if stop is None else stop, step)


@signature("narrow(Tensor input, int64_t dim, Tensor start, SymInt length)",
           "narrow(Tensor input, int64_t dim, SymInt start, SymInt length)")
def narrow(input: Tensor, dim: int, start: Any, length: int) -> Tensor:
    """``length`` elements of dim ``dim`` from ``start`` (a view; grad_fn ``SliceBackward0``)."""
    begin = _narrow_start(input, dim, start, length, False)
    return SLICE(input, dim, begin, begin + length, 1)


def _narrow_start(input: Tensor, dim: int, start: Any, length: int, copy: bool) -> int:
    """``narrow``'s checks; the start, wrapped (as torch keeps it)."""
    data = input._data
    if data.ndim == 0:
        raise RuntimeError("narrow() cannot be applied to a 0-dim tensor.")
    if copy and dim >= data.ndim:
        raise RuntimeError("Expected dim < static_cast<int64_t>(self_sizes.size()) to be true, "
                           "but got false.  (Could this error message be improved?  If so, "
                           "please report an enhancement request to PyTorch.)")
    d = wrap_dim(dim, data.ndim)
    n = data.shape[d]
    start = int(start)
    if length < 0 and not copy:
        raise RuntimeError("narrow(): length must be non-negative.")
    if start < -n or start > n:
        raise IndexError(f"start out of range (expected to be in range of [{-n}, {n}], but got "
                         f"{start})")
    if start < 0:
        start += n
    if start + length > n or length < 0:
        raise RuntimeError(f"start ({start}) + length ({length}) exceeds dimension size ({n}).")
    return start


@signature("select(Tensor input, int64_t dim, SymInt index)")
def select(input: Tensor, dim: int, index: int) -> Tensor:
    """The slice at ``index`` of dim ``dim``, which disappears (a view; ``SelectBackward0``)."""
    index = int(index)
    _check_select(input, dim, index)
    return SELECT(input, dim, index)


def _check_select(input: Tensor, dim: int, index: int) -> None:
    data = input._data
    if data.ndim == 0:
        raise IndexError("select() cannot be applied to a 0-dim tensor.")
    d = wrap_dim(dim, data.ndim)
    n = data.shape[d]
    if index < -n or index >= n:
        raise IndexError(f"select(): index {index} out of range for tensor of size "
                         f"{_shape_str(data.shape)} at dimension {d}")


@signature("diagonal(Tensor input, int64_t offset=0, int64_t dim1=0, int64_t dim2=1)")
def diagonal(input: Tensor, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Tensor:
    """The diagonal of dims ``dim1``/``dim2`` as a last dim (a view; ``DiagonalBackward0``)."""
    _check_diagonal(input, dim1, dim2)
    return DIAGONAL(input, int(offset), dim1, dim2)


def _check_diagonal(input: Tensor, dim1: int, dim2: int) -> tuple:
    nd = input._data.ndim
    d1, d2 = wrap_dim(dim1, nd), wrap_dim(dim2, nd)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    return d1, d2


# -- flip / gather / index_select --------------------------------------------------------

def _flipped(data: np.ndarray, axes: tuple, dims: tuple) -> np.ndarray:
    # a 0-dim tensor's dim 0 (or -1) is itself: nothing to reverse (NumPy has no axis 0)
    return np.flip(data, axes).copy() if axes and data.ndim else data.copy()


# the node keeps ``dims`` as given (``flip(-1)`` reads 18446744073709551615, as torch's);
# the forward reads them wrapped (``axes``)
FLIP = General(
    "flip(Tensor input, IntArrayRef dims, *, Tensor out=None)", grad_fn="FlipBackward0",
    forward=_flipped, params=("axes", "dims"), keeps=("dims",),
    derivatives={"self": lambda grad, dims: flip(grad, dims)},
    tangent=lambda self_t, dims: flip(self_t, dims))


@signature("flip(Tensor input, IntArrayRef dims, *, Tensor out=None)")
def flip(input: Tensor, *dims: Any) -> Tensor:
    """Reverse the order along ``dims`` (a copy; grad_fn ``FlipBackward0``)."""
    given = _dims_arg(dims)
    return FLIP((input,), (wrap_dims(given, input._data.ndim), given))  # type: ignore[no-any-return]


# -- clone / contiguous / detach / to ---------------------------------------------------

# On the hot path of ``contiguous`` and ``reshape``: one input, one output, nothing kept
# (Note [The lean record path] in _ops/registry.py).
CLONE = General(
    "clone(Tensor input, *, MemoryFormat? memory_format=None, Tensor out=None)",
    grad_fn="CloneBackward0", forward=lambda data: np.array(data, copy=True, order="C"),
    derivatives={"self": lambda grad: grad}, tangent=lambda self_t: clone(self_t))


@signature("clone(Tensor input, *, MemoryFormat? memory_format=None, Tensor out=None)")
def clone(input: Tensor, *, memory_format: Any = None) -> Tensor:
    """A copy in new memory (grad_fn ``CloneBackward0``)."""
    return CLONE((input,))  # type: ignore[no-any-return]


def contiguous(input: Tensor, memory_format: Any = None) -> Tensor:
    """``input`` itself when C-contiguous, else a contiguous copy (``CloneBackward0``)."""
    if input._data.flags.c_contiguous:
        return input
    return clone(input)


@signature("detach(Tensor input)")
def detach(input: Tensor) -> Tensor:
    """Same storage and version counter, no history, ``requires_grad=False`` (not a view)."""
    vc = input._vc
    if vc is not INFERENCE_COUNTER:
        vc = version_counter(input)
    return make_tensor(input._data.view(), None, False, vc)


def detach_(input: Tensor) -> Tensor:
    """Make ``input`` a leaf that does not require grad, in place."""
    if input._base is not None:
        raise RuntimeError(DETACH_VIEW_MSG)
    if input._grad_fn is not None:  # nodes made before now saved a non-leaf: see
        extra = input._extra        # Note [Saved tensors detached in place] in _tensor.py
        if extra is None:
            extra = input._extra = TensorExtra()
        extra.detached_seq = _next_sequence_nr()
    input._grad_fn = None
    input._requires_grad = False
    input._output_nr = 0
    extra = input._extra
    if extra is not None:  # detaching drops forward-mode tangents too, as torch's
        extra.tangent = None
    return input


def _to_copy_back(grad: Tensor, self_dtype: Any) -> Tensor:
    if grad._data.dtype.kind == "c" and not self_dtype.is_complex:
        grad = grad.real  # a real input's gradient: the real part, silently (handle_r_to_c)
    return to(grad, self_dtype)


def _to_copy_tangent(self_t: Tensor, dtype: Any) -> Tensor:
    if self_t._data.dtype.kind == "c" and not dtype.is_complex:
        self_t = self_t.real  # the primal's cast warned already
    return to(self_t, dtype)


# torch's ``_to_copy``: the node keeps the input's dtype (its options) with no getter
TO_COPY = General(
    "_to_copy(Tensor input, *, ScalarType? dtype=None)", grad_fn="ToCopyBackward0",
    forward=None, params=("self_dtype", "dtype"), keeps=("self_dtype",),
    hidden=("self_dtype",), derivatives={"self": _to_copy_back}, tangent=_to_copy_tangent)


# torch's warning for a cast that drops imaginary parts (a C++ warning, with its origin)
COMPLEX_TO_REAL_WARNING = (
    "Casting complex values to real discards the imaginary part (Triggered internally at "
    "/__w/pytorch/pytorch/aten/src/ATen/native/Copy.cpp:307.)")


def _check_device(dev: Any) -> None:
    if isinstance(dev, (_device_cls, str, int)):
        check_device(dev)  # Note [Devices: construct anything, use only the CPU]
        return
    raise TypeError(f"to() received an invalid combination of arguments - got "
                    f"({type(dev).__name__})")


def to(input: Tensor, *args: Any, **kwargs: Any) -> Tensor:
    """Convert dtype (and accept a CPU device); ``input`` itself when nothing changes.

    >>> import npgrad
    >>> npgrad.ones(2).to(npgrad.float64).dtype
    npgrad.float64
    """
    dtype = kwargs.pop("dtype", None)
    copy = kwargs.pop("copy", False)
    dev = kwargs.pop("device", None)
    kwargs.pop("non_blocking", None)
    kwargs.pop("memory_format", None)
    if kwargs:
        raise TypeError(f"to() got an unexpected keyword argument '{next(iter(kwargs))}'")
    rest = list(args)
    if rest:
        first = rest.pop(0)
        if isinstance(first, _dtype.dtype):
            dtype = first
        elif is_tensor(first):
            dtype = first.dtype
        else:
            dev = first
            if rest and isinstance(rest[0], _dtype.dtype):
                dtype = rest.pop(0)
        if rest:  # non_blocking, copy
            rest.pop(0)
        if rest:
            copy = rest.pop(0)
    if dev is not None:
        _check_device(dev)
    if dtype is not None and not isinstance(dtype, _dtype.dtype):
        raise TypeError(f"to() received an invalid combination of arguments - got "
                        f"(dtype={type(dtype).__name__})")
    data = input._data
    if not isinstance(data, np.ndarray):
        return SPARSE_OPS.to_dtype(input, dtype, copy)
    src = data.dtype
    target = src if dtype is None else dtype.np_dtype
    if target == src and not copy:
        return input
    if src.kind == "c" and target.kind != "c":
        warnings.warn(COMPLEX_TO_REAL_WARNING, UserWarning, stacklevel=2)
        data = data.real
    with np.errstate(all="ignore"):
        if target.kind == "V":  # bfloat16: torch's rounding and NaN bits (npgrad._bfloat16)
            out = _bfloat16.round_from(data)
        else:
            out = data.astype(target, copy=True)
    if target.kind not in "fVc":
        return wrap(out, _tls.mode)
    return TO_COPY.record(  # type: ignore[no-any-return]
        (input,), out, (_dtype.from_np(src), _dtype.from_np(target)))
