"""Shape ops: views (view, reshape, squeeze, transpose, slicing, ...) and the copies beside them.

Note [Views and regions]
A view op returns a NumPy *view* of its input through ``view_result``, so it
shares storage and the version counter, and ``_base`` names the root tensor.
The backward of every op that reads a part of its input (select, narrow,
slicing, diagonal, gather, index_select, indexing) is the same move in the
other direction: put the gradient into a zero tensor of the input's shape at
the place it was read from.  ``Region`` describes that place once; the two
node families below use it in both directions, and each is the other's
backward, so gradients of any order work:

    take   (SelectBackward0, SliceBackward0, IndexBackward0, ...)  reads a region
    place  (SelectBackwardBackward0, ..., IndexPutImplBackward0)   writes a region into zeros

Regions read by advanced indices may repeat positions; their place accumulates
(``np.add.at``), so a duplicated index receives the sum of its gradients.
"""
from __future__ import annotations

import builtins
import math
from typing import Any, Callable

import numpy as np

from .signature import signature
from .. import _bfloat16, _dtype
from .._device import check_device, device as _device_cls
from .._forward import FW, give_view_tangent, has_tangent
from .._mode import _tls, INFERENCE, RECORDING
from .._tensor import (INFERENCE_COUNTER, Tensor, TensorExtra, _make, edge_of, version_counter,
                       wrap)
from ..autograd.graph import Node, _next_sequence_nr
from .allocation import check_numel, guarded, wrap_int64
from ._core import ViewInfo, check_not_freed, is_tensor, node_of, record, unary, view_result
from ._shape_util import parse_shape, wrap_dim, wrap_dims

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


class ShapeNode(Node):
    """Base of this module's nodes: they save metadata only, never tensors."""

    __slots__ = ()
    saves_self = False  # read by ``unary`` (Note [The per-op path])
    saves_result = False
    holds_saved = False  # Note [Saved values kept outside SavedTensor] in _core


# -- regions: where a take reads and a place writes (Note [Views and regions]) ----------

class Region:
    """A part of an array: a NumPy index ``key`` or a function returning a writable view."""

    __slots__ = ("key", "fn", "accumulate")

    def __init__(self, key: Any = None, fn: Callable | None = None,
                 accumulate: bool = False) -> None:
        self.key = key
        self.fn = fn
        self.accumulate = accumulate

    def get(self, arr: np.ndarray) -> np.ndarray:
        return self.fn(arr) if self.fn is not None else arr[self.key]

    def put(self, out: np.ndarray, values: np.ndarray) -> None:
        if self.accumulate:
            np.add.at(out, self.key, values)
        elif self.fn is not None:
            self.fn(out)[...] = values
        else:
            out[self.key] = values


class _RegionNode(ShapeNode):
    __slots__ = ("region", "shape")
    inverse: Any = None  # the node class of this node's backward

    def _setup(self, region: Region, shape: tuple) -> None:
        self.region = region
        self.shape = shape


class _TakeNode(_RegionNode):
    """Backward of reading ``region`` of a tensor of ``shape``: place the gradient there."""

    __slots__ = ()

    def backward(self, grad: Tensor) -> tuple:
        if self.holds_saved:
            check_not_freed(self)
        return _place(grad, self.shape, self.region, self.inverse),


class _PlaceNode(_RegionNode):
    """Backward of writing into ``region`` of zeros: read the gradient back from there."""

    __slots__ = ()

    def backward(self, grad: Tensor) -> tuple:
        if self.holds_saved:
            check_not_freed(self)
        return _take(grad, self.region, self.inverse),


def _take(grad: Tensor, region: Region, cls: type) -> Tensor:
    """A copy of ``region`` of ``grad`` (recorded as ``cls`` when grad mode is on)."""
    res = unary(cls, grad, np.array(region.get(grad._data), copy=True))
    node = node_of(res)
    if node is not None:
        node._setup(region, grad._data.shape)
    return res


def _place(grad: Tensor, shape: tuple, region: Region, cls: type) -> Tensor:
    """Zeros of ``shape`` holding ``grad`` at ``region`` (recorded as ``cls``)."""
    out = np.zeros(shape, dtype=grad._data.dtype)
    region.put(out, grad._data)
    res = unary(cls, grad, out)
    node = node_of(res)
    if node is not None:
        node._setup(region, shape)
    return res


class SelectBackward0(_TakeNode):
    __slots__ = ()


class SelectBackwardBackward0(_PlaceNode):
    __slots__ = ()


class SliceBackward0(_TakeNode):
    __slots__ = ()


class SliceBackwardBackward0(_PlaceNode):
    __slots__ = ()


class DiagonalBackward0(_TakeNode):
    __slots__ = ()


class DiagonalBackwardBackward0(_PlaceNode):
    __slots__ = ()


class GatherBackward0(_TakeNode):
    __slots__ = ()
    holds_saved = True  # the index


class _AddIntoNode(_PlaceNode):
    """A place that is also an op of its own, adding ``src`` at the region into ``self``.

    As the backward of gather / index_select it has one edge (the zeros it
    writes into have no history).  As ``scatter_add(self, dim, index, src)`` or
    ``index_add(self, dim, index, src, alpha=)`` it has two: ``self`` gets the
    gradient unchanged, ``src`` the gradient read back from the region.
    """

    __slots__ = ("alpha", "src_sizes")

    def backward(self, grad: Tensor) -> tuple:
        check_not_freed(self)  # gather's, index_select's and scatter_add's index
        if len(self.next_functions) == 1:
            return _take(grad, self.region, self.inverse),
        g_src = None
        if self.next_functions[1][0] is not None:
            g_src = fit_input_grad(self, 1, _take(grad, self.region, self.inverse),
                                   self.src_sizes)
            if self.alpha != 1:
                g_src = g_src * self.alpha
        return (grad if self.next_functions[0][0] is not None else None), g_src

    def jvp(self, tangents: list) -> list:
        """``self``'s tangent plus ``src``'s added at the region: written directly, since the
        backward rule refuses a ``src`` larger than the index (as torch's does) while torch's
        forward rule reads just its leading block."""
        if len(self.next_functions) == 1:
            return super().jvp(tangents)
        t_self, t_src = tangents
        shape, dtype = self._out_meta[0]
        out = t_self if t_self is not None else _zeros(shape, dtype)
        if t_src is None:
            return [out]
        block = self.region.get(np.empty(shape, dtype=dtype)).shape
        if t_src._data.ndim == 0 and block:  # a 0-dim src is one element of every dim
            t_src = reshape(t_src, (1,) * len(block))
        for d, size in enumerate(block):
            if t_src._data.shape[d] != size:
                t_src = slice_dim(t_src, d, 0, size)
        if self.alpha != 1:
            t_src = t_src * self.alpha
        return [out + _place(t_src, shape, self.region, self.inverse)]


def fit_input_grad(node: Node, i: int, grad: Tensor, shape: tuple) -> Tensor:
    """torch's check of a gradient against its input's shape, which must broadcast to it.

    scatter-like ops read only the leading block of a ``src`` larger than the
    index, yet torch's backward returns a gradient of the index's shape, which
    torch's engine then rejects with this error; npgrad's engine sums a
    broadcast gradient down but does not check built-in nodes, so they check here.
    """
    got = grad._data.shape
    fits = len(shape) <= len(got) and all(
        s == g or s == 1 for s, g in zip(reversed(shape), reversed(got)))
    if not fits:
        raise RuntimeError(f"Function {node.name()} returned an invalid gradient at index {i} - "
                           f"got {_shape_str(got)} but expected shape compatible with "
                           f"{_shape_str(shape)}")
    return grad


class ScatterAddBackward0(_AddIntoNode):
    __slots__ = ()


class IndexSelectBackward0(_TakeNode):
    __slots__ = ()
    holds_saved = True  # the index


class IndexAddBackward0(_AddIntoNode):
    __slots__ = ()


class IndexBackward0(_TakeNode):
    __slots__ = ()
    holds_saved = True  # the index


class IndexPutImplBackward0(_PlaceNode):
    __slots__ = ()
    holds_saved = True  # the index


for _take_cls, _place_cls in ((SelectBackward0, SelectBackwardBackward0),
                              (SliceBackward0, SliceBackwardBackward0),
                              (DiagonalBackward0, DiagonalBackwardBackward0),
                              (GatherBackward0, ScatterAddBackward0),
                              (IndexSelectBackward0, IndexAddBackward0),
                              (IndexBackward0, IndexPutImplBackward0)):
    _take_cls.inverse = _place_cls
    _place_cls.inverse = _take_cls


def _region_view(cls: type, input: Tensor, region: Region) -> Tensor:
    """A view of ``input`` at a basic-index ``region`` (select, slice, diagonal)."""
    data = input._data
    res, node = view_result(cls, input, region.get(data))
    if node is not None:
        node._setup(region, data.shape)
    return res


# -- view / reshape / flatten --------------------------------------------------------

class ViewBackward0(ShapeNode):
    __slots__ = ("self_sizes",)

    def backward(self, grad: Tensor) -> tuple:
        return reshape(grad, self.self_sizes),


class UnsafeViewBackward0(ViewBackward0):
    __slots__ = ()


class ReshapeAliasBackward0(ViewBackward0):
    __slots__ = ()


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


def _view_as(cls: type, input: Tensor, out: np.ndarray) -> Tensor:
    res, node = view_result(cls, input, out)
    if node is not None:
        node.self_sizes = input._data.shape
    return res


def view(input: Tensor, *shape: Any) -> Tensor:
    """The same storage seen with another shape (grad_fn ``ViewBackward0``).

    >>> import npgrad
    >>> npgrad.arange(6).view(2, -1).shape
    torch.Size([2, 3])
    """
    data = input._data
    shape = _infer_size(parse_shape(shape), data.size)
    out = _nocopy_reshape(data, shape)
    if out is None:
        raise RuntimeError(VIEW_STRIDE_MSG)
    return _view_as(ViewBackward0, input, out)


@signature("reshape(Tensor input, SymIntArrayRef shape)")
def reshape(input: Tensor, *shape: Any) -> Tensor:
    """``view`` when the strides allow it, else a copy (``UnsafeViewBackward0`` over a clone)."""
    data = input._data
    shape = _infer_size(parse_shape(shape), data.size)
    out = _nocopy_reshape(data, shape)
    if out is not None:
        cls = ViewBackward0 if data.flags.c_contiguous else ReshapeAliasBackward0
        return _view_as(cls, input, out)
    copied = clone(input)
    res = unary(UnsafeViewBackward0, copied, copied._data.reshape(shape))
    node = node_of(res)
    if node is not None:
        node.self_sizes = data.shape
    return res


def unsafe_view(input: Tensor, shape: tuple) -> Tensor:
    """torch's ``_unsafe_view``: ``input`` (an op's fresh, contiguous result) reshaped, recorded
    as a new tensor rather than a view (grad_fn ``UnsafeViewBackward0``)."""
    res = unary(UnsafeViewBackward0, input, input._data.reshape(shape))
    node = node_of(res)
    if node is not None:
        node.self_sizes = input._data.shape
    return res


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

class _SqueezeNode(ShapeNode):
    __slots__ = ("dims", "self_sizes")

    def backward(self, grad: Tensor) -> tuple:
        if grad._data.shape == self.self_sizes:
            return grad,
        for d in self.dims:  # ascending: each unsqueeze restores one squeezed dim
            grad = unsqueeze(grad, d)
        return grad,


class SqueezeBackward0(_SqueezeNode):
    __slots__ = ()


class SqueezeBackward1(_SqueezeNode):
    __slots__ = ()


class SqueezeBackward2(_SqueezeNode):
    __slots__ = ()


@signature("squeeze(Tensor input)",
           "squeeze(Tensor input, int64_t dim)",
           "squeeze(Tensor input, IntArrayRef dim)")
def squeeze(input: Tensor, dim: Any = None) -> Tensor:
    """Drop size-1 dims (all, one, or a tuple): ``SqueezeBackward0/1/2``."""
    shape = input._data.shape
    if dim is None:
        cls, dims = SqueezeBackward0, tuple(i for i, s in enumerate(shape) if s == 1)
    elif isinstance(dim, (tuple, list)):
        cls = SqueezeBackward2
        dims = tuple(sorted(d for d in wrap_dims(dim, len(shape)) if shape and shape[d] == 1))
    else:
        cls = SqueezeBackward1
        d = wrap_dim(dim, len(shape))
        dims = (d,) if shape and shape[d] == 1 else ()
    out = np.squeeze(input._data, axis=dims) if dims else input._data.view()
    res, node = view_result(cls, input, out)
    if node is not None:
        node.dims = dims
        node.self_sizes = shape
    return res


class SqueezeBackward4(ShapeNode):
    """torch's in-place ``squeeze_(dim)``, applied to an op's fresh result (see ``squeeze_fresh_``)."""

    __slots__ = ("self_sizes",)

    def backward(self, grad: Tensor) -> tuple:
        return reshape(grad, self.self_sizes),


def squeeze_fresh_(result: Tensor, shape: tuple) -> Tensor:
    """An op's fresh result with size-1 dims dropped to ``shape`` (grad_fn ``SqueezeBackward4``).

    torch ends matmul(1-D, 2-D) and quantile with an in-place ``squeeze_`` on a result
    no one else holds; returning a new tensor over the same data is the same thing then.
    """
    res = unary(SqueezeBackward4, result, np.asarray(result._data.reshape(shape), order="C"))
    node = node_of(res)
    if node is not None:
        node.self_sizes = result._data.shape
    return res


class UnsqueezeBackward0(ShapeNode):
    __slots__ = ("dim",)

    def backward(self, grad: Tensor) -> tuple:
        return squeeze(grad, self.dim),


@signature("unsqueeze(Tensor input, int64_t dim)")
def unsqueeze(input: Tensor, dim: int) -> Tensor:
    """Insert a size-1 dim at ``dim`` (grad_fn ``UnsqueezeBackward0``)."""
    d = wrap_dim(dim, input._data.ndim + 1)
    res, node = view_result(UnsqueezeBackward0, input, np.expand_dims(input._data, d))
    if node is not None:
        node.dim = d
    return res


class TransposeBackward0(ShapeNode):
    __slots__ = ("dim0", "dim1")

    def backward(self, grad: Tensor) -> tuple:
        return transpose(grad, self.dim0, self.dim1),


@signature("transpose(Tensor input, int64_t dim0, int64_t dim1)")
def transpose(input: Tensor, dim0: int, dim1: int) -> Tensor:
    """Swap two dims (a view; grad_fn ``TransposeBackward0``)."""
    nd = input._data.ndim
    d0, d1 = wrap_dim(dim0, nd), wrap_dim(dim1, nd)
    out = np.swapaxes(input._data, d0, d1) if nd else input._data.view()
    res, node = view_result(TransposeBackward0, input, out)
    if node is not None:
        node.dim0, node.dim1 = d0, d1
    return res


swapaxes = swapdims = transpose


class TBackward0(ShapeNode):
    __slots__ = ()

    def backward(self, grad: Tensor) -> tuple:
        return t(grad),


@signature("t(Tensor input)")
def t(input: Tensor) -> Tensor:
    """Transpose a matrix; 0-D and 1-D tensors come back as views of themselves."""
    nd = input._data.ndim
    if nd > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {nd}D")
    return view_result(TBackward0, input, input._data.T)[0]


class PermuteBackward0(ShapeNode):
    __slots__ = ("dims",)

    def backward(self, grad: Tensor) -> tuple:
        return permute(grad, tuple(np.argsort(self.dims).tolist())),


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
    res, node = view_result(PermuteBackward0, input, np.transpose(input._data, wrapped))
    if node is not None:
        node.dims = wrapped
    return res


# -- expand / repeat -------------------------------------------------------------------

class ExpandBackward0(ShapeNode):
    __slots__ = ("self_sizes",)

    def backward(self, grad: Tensor) -> tuple:
        return _sum_to(grad, self.self_sizes),


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
    check_numel(tuple(out_shape))
    out = np.lib.stride_tricks.as_strided(data, tuple(out_shape), tuple(strides),
                                          writeable=data.flags.writeable)
    return _view_as(ExpandBackward0, input, out)


class RepeatBackward0(ShapeNode):
    __slots__ = ("repeats", "self_sizes")

    def backward(self, grad: Tensor) -> tuple:
        from .reduction import sum as _sum

        reps = self.repeats
        padded = (1,) * (len(reps) - len(self.self_sizes)) + tuple(self.self_sizes)
        split = []
        for r, s in zip(reps, padded):
            split += [r, s]
        g = _sum(reshape(grad, tuple(split)), tuple(range(0, 2 * len(reps), 2)), False)
        return reshape(g, self.self_sizes),


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
    res = unary(RepeatBackward0, input, out)
    node = node_of(res)
    if node is not None:
        node.repeats = reps
        node.self_sizes = data.shape
    return res


# -- cat / stack -----------------------------------------------------------------------

class CatBackward0(ShapeNode):
    __slots__ = ("dim", "sizes", "shapes")

    def backward(self, grad: Tensor) -> tuple:
        grads = []
        start = 0
        for (fn, _), size, shape in zip(self.next_functions, self.sizes, self.shapes):
            if size is None:  # a skipped legacy empty tensor
                grads.append(None if fn is None else _zeros(shape, grad._data.dtype))
                continue
            grads.append(None if fn is None else narrow(grad, self.dim, start, size))
            start += size
        return tuple(grads)


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
    if dt.kind != "f":
        return wrap(out, _tls.mode)
    res, node = record(CatBackward0, tuple(tensors), out)
    if node is not None:
        node.dim = d
        node.sizes = [a.shape[d] if i in used else None for i, a in enumerate(arrays)]
        node.shapes = [a.shape for a in arrays]
    return res


concat = concatenate = cat


class StackBackward0(ShapeNode):
    __slots__ = ("dim",)

    def backward(self, grad: Tensor) -> tuple:
        return tuple(None if fn is None else select(grad, self.dim, i)
                     for i, (fn, _) in enumerate(self.next_functions))


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
    if dt.kind != "f":
        return wrap(out, _tls.mode)
    res, node = record(StackBackward0, tuple(tensors), out)
    if node is not None:
        node.dim = d
    return res


# -- split / chunk / unbind: one node, many outputs --------------------------------------

def _multi_view(cls: type, input: Tensor, pieces: list) -> tuple:
    """Views of ``input`` sharing ONE node whose output ``i`` is ``pieces[i]``."""
    vc = input._vc
    if vc is not INFERENCE_COUNTER:
        vc = version_counter(input)
    node = None
    if _tls.mode == RECORDING and input._requires_grad:
        node = _new(cls)
        node._init_node((edge_of(input),), tuple((p.shape, p.dtype) for p in pieces))
    # Inside inference mode, views of inference tensors are not tracked as views.
    untracked = vc is INFERENCE_COUNTER and _tls.mode & INFERENCE
    root = None if untracked else (input if input._base is None else input._base)
    outs = []
    for i, p in enumerate(pieces):
        if node is not None:
            res = _make(Tensor, p, node, True, vc)
            res._output_nr = i
        else:
            res = _make(Tensor, p, None, input._requires_grad and vc is not INFERENCE_COUNTER, vc)
        res._base = root
        if root is not None:
            extra = res._extra = TensorExtra()
            extra.view_info = ViewInfo(node is None and input._requires_grad, True,
                                       None if vc is INFERENCE_COUNTER else vc.version)
        if FW.active and not _tls.mode & INFERENCE and has_tangent(input):
            give_view_tangent(res, input)
        outs.append(res)
    return tuple(outs), node


class _SplitNode(ShapeNode):
    __slots__ = ("dim",)

    def backward(self, *grads: Any) -> tuple:
        parts = [g if g is not None else _zeros(shape, dtype)
                 for g, (shape, dtype) in zip(grads, self._out_meta)]
        return cat(parts, self.dim),


class SplitBackward0(_SplitNode):
    __slots__ = ()


class SplitWithSizesBackward0(_SplitNode):
    __slots__ = ()


def _split_pieces(data: np.ndarray, d: int, sizes: list) -> list:
    pieces, start = [], 0
    lead = (slice(None),) * d
    for s in sizes:
        pieces.append(data[lead + (slice(start, start + s), Ellipsis)])
        start += s
    return pieces


def split(input: Tensor, split_size_or_sections: Any, dim: int = 0) -> tuple:
    """Views of consecutive pieces along ``dim``.

    grad_fn ``SplitBackward0`` for an int size, ``SplitWithSizesBackward0`` for a list.
    """
    data = input._data
    if data.ndim == 0:
        raise RuntimeError("split expects at least a 1-dimensional tensor")
    d = wrap_dim(dim, data.ndim)
    n = data.shape[d]
    if isinstance(split_size_or_sections, (list, tuple)):
        sizes = [int(s) for s in split_size_or_sections]
        if builtins.sum(sizes) != n or builtins.any(s < 0 for s in sizes):
            raise RuntimeError(f"split_with_sizes expects split_sizes to sum exactly to {n} "
                               f"(input tensor's size at dimension {d}), but got "
                               f"split_sizes={_shape_str(sizes)}")
        cls = SplitWithSizesBackward0
    else:
        size = int(split_size_or_sections)
        if size < 0:
            raise RuntimeError(f"split expects split_size be non-negative, but got "
                               f"split_size={size}")
        if size == 0 and n != 0:
            raise RuntimeError("split_size can only be 0 if dimension size is 0, but got "
                               f"dimension size of {n}")
        count = builtins.max(1, -(-n // size)) if size else 1
        sizes = [size] * (count - 1) + [n - size * (count - 1)]
        cls = SplitBackward0
    outs, node = _multi_view(cls, input, _split_pieces(data, d, sizes))
    if node is not None:
        node.dim = d
    return outs


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


class UnbindBackward0(ShapeNode):
    __slots__ = ("dim",)

    def backward(self, *grads: Any) -> tuple:
        parts = [g if g is not None else _zeros(shape, dtype)
                 for g, (shape, dtype) in zip(grads, self._out_meta)]
        return stack(parts, self.dim),


@signature("unbind(Tensor input, int64_t dim=0)")
def unbind(input: Tensor, dim: int = 0) -> tuple:
    """Views of each slice along ``dim`` (grad_fn ``UnbindBackward0``)."""
    data = input._data
    if data.ndim == 0:
        raise IndexError("Dimension specified as 0 but tensor has no dimensions")
    d = wrap_dim(dim, data.ndim)
    lead = (slice(None),) * d
    outs, node = _multi_view(UnbindBackward0, input,
                             [data[lead + (i, Ellipsis)] for i in range(data.shape[d])])
    if node is not None:
        node.dim = d
    return outs


# -- narrow / select / slicing / diagonal -----------------------------------------------

def slice_dim(input: Tensor, dim: int, start: Any, stop: Any, step: int = 1) -> Tensor:
    """``input[..., start:stop:step, ...]`` on dim ``dim`` (a view; ``SliceBackward0``)."""
    key = (slice(None),) * dim + (slice(start, stop, step), Ellipsis)
    return _region_view(SliceBackward0, input, Region(key))


@signature("narrow(Tensor input, int64_t dim, Tensor start, SymInt length)",
           "narrow(Tensor input, int64_t dim, SymInt start, SymInt length)")
def narrow(input: Tensor, dim: int, start: Any, length: int) -> Tensor:
    """``length`` elements of dim ``dim`` from ``start`` (a view; grad_fn ``SliceBackward0``)."""
    return _region_view(SliceBackward0, input, narrow_region(input, dim, start, length))


def narrow_region(input: Tensor, dim: int, start: Any, length: int, copy: bool = False) -> Region:
    """Where ``narrow`` reads, with its checks (shared with ``narrow_copy``, ``copy=True``,
    whose kernel checks a too-large ``dim`` and a negative ``length`` its own way)."""
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
    return Region((slice(None),) * d + (slice(start, start + length, 1), Ellipsis))


@signature("select(Tensor input, int64_t dim, SymInt index)")
def select(input: Tensor, dim: int, index: int) -> Tensor:
    """The slice at ``index`` of dim ``dim``, which disappears (a view; ``SelectBackward0``)."""
    return _region_view(SelectBackward0, input, select_region(input, dim, index))


def select_region(input: Tensor, dim: int, index: int) -> Region:
    """Where ``select`` reads, with its checks (shared with ``select_scatter``)."""
    data = input._data
    if data.ndim == 0:
        raise IndexError("select() cannot be applied to a 0-dim tensor.")
    d = wrap_dim(dim, data.ndim)
    n = data.shape[d]
    index = int(index)
    if index < -n or index >= n:
        raise IndexError(f"select(): index {index} out of range for tensor of size "
                         f"{_shape_str(data.shape)} at dimension {d}")
    if index < 0:
        index += n
    return Region((slice(None),) * d + (index, Ellipsis))


def _diagonal_fn(offset: int, d1: int, d2: int) -> Callable:
    """A function returning the (writable) diagonal view of any array of the input's shape."""
    def fn(arr: np.ndarray) -> np.ndarray:
        s1, s2 = arr.shape[d1], arr.shape[d2]
        if offset >= 0:
            length = builtins.max(0, builtins.min(s1, s2 - offset))
            start = arr[(slice(None),) * d2 + (slice(builtins.min(offset, s2), None),)]
        else:
            length = builtins.max(0, builtins.min(s1 + offset, s2))
            start = arr[(slice(None),) * d1 + (slice(builtins.min(-offset, s1), None),)]
        keep = [i for i in range(arr.ndim) if i not in (d1, d2)]
        shape = tuple(arr.shape[i] for i in keep) + (length,)
        strides = tuple(arr.strides[i] for i in keep) + (arr.strides[d1] + arr.strides[d2],)
        return np.lib.stride_tricks.as_strided(start, shape, strides,
                                              writeable=arr.flags.writeable)
    return fn


@signature("diagonal(Tensor input, int64_t offset=0, int64_t dim1=0, int64_t dim2=1)")
def diagonal(input: Tensor, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Tensor:
    """The diagonal of dims ``dim1``/``dim2`` as a last dim (a view; ``DiagonalBackward0``)."""
    return _region_view(DiagonalBackward0, input, diagonal_region(input, offset, dim1, dim2))


def diagonal_region(input: Tensor, offset: int, dim1: int, dim2: int) -> Region:
    """Where ``diagonal`` reads, with its checks (shared with ``diagonal_scatter``)."""
    nd = input._data.ndim
    d1, d2 = wrap_dim(dim1, nd), wrap_dim(dim2, nd)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    return Region(fn=_diagonal_fn(int(offset), d1, d2))


# -- flip / gather / index_select --------------------------------------------------------

class FlipBackward0(ShapeNode):
    __slots__ = ("dims",)

    def backward(self, grad: Tensor) -> tuple:
        return flip(grad, self.dims),


@signature("flip(Tensor input, IntArrayRef dims, *, Tensor out=None)")
def flip(input: Tensor, *dims: Any) -> Tensor:
    """Reverse the order along ``dims`` (a copy; grad_fn ``FlipBackward0``)."""
    dims = wrap_dims(_dims_arg(dims), input._data.ndim)
    out = np.flip(input._data, dims).copy() if dims else input._data.copy()
    res = unary(FlipBackward0, input, out)
    node = node_of(res)
    if node is not None:
        node.dims = dims
    return res


def _index_array(index: Any) -> np.ndarray:
    return index._data if is_tensor(index) else np.asarray(index)


@signature("gather(Tensor input, int64_t dim, Tensor index, *, bool sparse_grad=False, "
           "Tensor out=None)")
def gather(input: Tensor, dim: int, index: Tensor, *, sparse_grad: bool = False) -> Tensor:
    """``out[i][j][k] = input[i][index[i][j][k]][k]`` for dim 1 (grad_fn ``GatherBackward0``)."""
    data = input._data
    idx = _index_array(index)
    nd = data.ndim
    d = wrap_dim(dim, nd)
    if idx.dtype != np.int64 and idx.dtype != np.int32:
        raise RuntimeError("gather(): Expected dtype int32/int64 for index")
    if idx.ndim != nd and not (builtins.max(idx.ndim, 1) == builtins.max(nd, 1)):
        raise RuntimeError("Index tensor must have the same number of dimensions as input tensor")
    if nd == 0:
        idx = idx.reshape(())
    for k in range(nd):
        if k != d and idx.shape[k] > data.shape[k]:
            raise RuntimeError(f"Size does not match at dimension {k} expected index "
                               f"{_shape_str(idx.shape)} to be no larger than self "
                               f"{_shape_str(data.shape)} apart from dimension {d}")
    n = data.shape[d] if nd else 1
    if idx.size and (idx.min() < 0 or idx.max() >= n):  # no wrapping of negative indices
        bad = int(idx[(idx < 0) | (idx >= n)].flat[0])
        raise RuntimeError(f"index {bad} is out of bounds for dimension {d} with size {n}")
    if nd == 0:
        key: Any = ()
    else:
        key = tuple(idx if k == d else
                    np.arange(idx.shape[k]).reshape((-1,) + (1,) * (nd - k - 1))
                    for k in range(nd))
    return _take_forward(GatherBackward0, input, Region(key, accumulate=True))


def _take_forward(cls: type, input: Tensor, region: Region) -> Tensor:
    res = unary(cls, input, np.array(region.get(input._data), copy=True))
    node = node_of(res)
    if node is not None:
        node._setup(region, input._data.shape)
    return res


@signature("index_select(Tensor input, int64_t dim, Tensor index, *, Tensor out=None)")
def index_select(input: Tensor, dim: int, index: Tensor) -> Tensor:
    """The slices of dim ``dim`` listed in ``index`` (a copy; ``IndexSelectBackward0``)."""
    data = input._data
    idx = _index_array(index)
    if idx.ndim > 1:
        raise IndexError("index_select(): Index is supposed to be a vector")
    if idx.dtype not in (np.int64, np.int32):
        raise RuntimeError("index_select(): Expected dtype int32 or int64 for index")
    d = wrap_dim(dim, data.ndim)
    n = data.shape[d] if data.ndim else 1
    idx = idx.reshape(-1)
    if idx.size and (idx.min() < 0 or idx.max() >= n):
        bad = int(idx[(idx < 0) | (idx >= n)][0])
        raise RuntimeError(f"INDICES element is out of DATA bounds, id={bad} axis_dim={n}")
    key = (slice(None),) * d + (idx,) if data.ndim else ()
    return _take_forward(IndexSelectBackward0, input, Region(key, accumulate=True))


# -- clone / contiguous / detach / to ---------------------------------------------------

class CloneBackward0(ShapeNode):
    __slots__ = ()

    def backward(self, grad: Tensor) -> tuple:
        return grad,


@signature("clone(Tensor input, *, MemoryFormat? memory_format=None, Tensor out=None)")
def clone(input: Tensor, *, memory_format: Any = None) -> Tensor:
    """A copy in new memory (grad_fn ``CloneBackward0``)."""
    return unary(CloneBackward0, input, np.array(input._data, copy=True, order="C"))


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
    return _make(Tensor, input._data.view(), None, False, vc)


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
        extra.tangent = extra.fw_pending = None
    return input


class ToCopyBackward0(ShapeNode):
    __slots__ = ("self_dtype",)

    def backward(self, grad: Tensor) -> tuple:
        return to(grad, self.self_dtype),


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
    src = input._data.dtype
    target = src if dtype is None else dtype.np_dtype
    if target == src and not copy:
        return input
    with np.errstate(all="ignore"):
        if target.kind == "V":  # bfloat16: torch's rounding and NaN bits (npgrad._bfloat16)
            out = _bfloat16.round_from(input._data)
        else:
            out = input._data.astype(target, copy=True)
    if target.kind not in "fV":
        return wrap(out, _tls.mode)
    res = unary(ToCopyBackward0, input, out)
    node = node_of(res)
    if node is not None:
        node.self_dtype = _dtype.from_np(src)
    return res
