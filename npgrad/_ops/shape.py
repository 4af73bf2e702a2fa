"""Shape ops: views (view, reshape, squeeze, transpose, slicing, ...) and the copies beside them.

Note [Views and regions]
Every view op (view, reshape when the strides allow, expand, squeeze, unsqueeze,
transpose, t, permute, select, slice, narrow, diagonal, split, chunk, unbind)
is a ``View`` entry (Note [A view is an entry] in _ops/registry.py): the entry
returns a NumPy *view* of its input, shares the version counter and names the
root tensor as ``_base``; the op's function here checks the arguments (torch's
errors) and calls the entry.
The backward of every op that reads a part of its input (select, narrow,
slicing, diagonal, gather, index_select, indexing) is the same move in the
other direction: put the gradient into a zero tensor of the input's shape at
the place it was read from.  ``Region`` describes that place once; the node
families below use it in both directions, and each is the other's backward,
so gradients of any order work:

    take   (IndexBackward0, GatherBackward0, ...; the view entries)   reads a region
    place  (IndexPutImplBackward0, ..., SelectBackwardBackward0)      writes a region into zeros

The place nodes of the view entries (``_ViewPlaceNode``) read the gradient back
as the same view (``Region.view``), as torch's double backward does.  Regions
read by advanced indices may repeat positions; their place accumulates
(``np.add.at``), so a duplicated index receives the sum of its gradients.
"""
from __future__ import annotations

import builtins
import math
import warnings
from typing import TYPE_CHECKING, Any, Callable

import numpy as np

from .signature import checker, signature
from .. import _bfloat16, _dtype
from .._device import check_device, device as _device_cls
from .._mode import _tls
if TYPE_CHECKING:
    from .._tensor import Tensor
else:  # Note [Tensor base and Tensor] in npgrad._tensor_base
    from .._tensor_base import TensorBase as Tensor
from .._tensor_base import INFERENCE_COUNTER, TensorExtra, make_tensor, version_counter, wrap
from ..autograd.graph import Node, _next_sequence_nr
from .allocation import check_numel, guarded, wrap_int64
from ._core import check_not_freed, is_tensor, node_of, record, unary
from ._shape_util import parse_shape, wrap_dim, wrap_dims
from .registry import View

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
    """A part of an array: a NumPy index ``key`` or a function returning a writable view.

    ``view``: for the region a view op reads (select, slice, diagonal), that op's entry
    and its arguments, which read the region of a tensor as a view of it."""

    __slots__ = ("key", "fn", "accumulate", "view")

    def __init__(self, key: Any = None, fn: Callable | None = None,
                 accumulate: bool = False, view: tuple | None = None) -> None:
        self.key = key
        self.fn = fn
        self.accumulate = accumulate
        self.view = view

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


class _ViewPlaceNode(_PlaceNode):
    """The backward of a view op's backward (select's, slice's, diagonal's): the gradient
    read back from the region as the same view (``region.view``), as torch's is."""

    __slots__ = ()

    def backward(self, grad: Tensor) -> tuple:
        entry, args = self.region.view
        return entry(grad, *args),


class SelectBackwardBackward0(_ViewPlaceNode):
    __slots__ = ()


class SliceBackwardBackward0(_ViewPlaceNode):
    __slots__ = ()


class DiagonalBackwardBackward0(_ViewPlaceNode):
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


for _take_cls, _place_cls in ((GatherBackward0, ScatterAddBackward0),
                              (IndexSelectBackward0, IndexAddBackward0),
                              (IndexBackward0, IndexPutImplBackward0)):
    _take_cls.inverse = _place_cls
    _place_cls.inverse = _take_cls


def _region_view(cls: type, input: Tensor, region: Region) -> Tensor:
    """The view of ``input`` at the region a view op reads (select, slice, diagonal): that
    op's entry run again (its node is ``cls``)."""
    entry, args = region.view
    return entry(input, *args)


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


@signature("transpose(Tensor input, int64_t dim0, int64_t dim1)")
def transpose(input: Tensor, dim0: int, dim1: int) -> Tensor:
    """Swap two dims (a view; grad_fn ``TransposeBackward0``)."""
    nd = input._data.ndim
    wrap_dim(dim0, nd)
    wrap_dim(dim1, nd)
    return TRANSPOSE(input, dim0, dim1)


swapaxes = swapdims = transpose


@signature("t(Tensor input)")
def t(input: Tensor) -> Tensor:
    """Transpose a matrix; 0-D and 1-D tensors come back as views of themselves."""
    nd = input._data.ndim
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
    if dt.kind not in "fc":
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
    if dt.kind not in "fc":
        return wrap(out, _tls.mode)
    res, node = record(StackBackward0, tuple(tensors), out)
    if node is not None:
        node.dim = d
    return res


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


def _diagonal_fn(offset: int, d1: int, d2: int) -> Callable:
    """A function returning the (writable) diagonal view of any array of the input's shape."""
    return lambda arr: _diagonal_view(arr, offset, d1, d2)


def _diagonal_of(a: np.ndarray, offset: int, dim1: int, dim2: int) -> np.ndarray:
    return _diagonal_view(a, offset, dim1 % a.ndim, dim2 % a.ndim)


# The backward of each of these three views places the gradient into zeros at the region
# the view read (SelectBackwardBackward0, ...), whose own backward is the view again.
def _select_back(grad: Tensor, self_sym_sizes: tuple, dim: int, index: int) -> Tensor:
    return _place(grad, self_sym_sizes, select_view_region(len(self_sym_sizes), dim, index),
                  SelectBackwardBackward0)


def _slice_back(grad: Tensor, self_sym_sizes: tuple, dim: int, start: int, end: int,
                step: int) -> Tensor:
    return _place(grad, self_sym_sizes, slice_view_region(len(self_sym_sizes), dim, start, end,
                                                          step), SliceBackwardBackward0)


def _diagonal_back(grad: Tensor, self_sym_sizes: tuple, offset: int, dim1: int,
                   dim2: int) -> Tensor:
    nd = len(self_sym_sizes)
    return _place(grad, self_sym_sizes, diagonal_view_region(offset, dim1 % nd, dim2 % nd),
                  DiagonalBackwardBackward0)


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


def slice_view_region(nd: int, dim: int, start: Any, end: Any, step: int) -> Region:
    """Where ``slice(dim, start, end, step)`` reads in a tensor of ``nd`` dims, and the view."""
    start = 0 if start is None else start
    end = _INT64_MAX if end is None else end
    return Region(_dim_key(nd, dim, slice(start, end, step)), view=(SLICE, (dim, start, end, step)))


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


def narrow_region(input: Tensor, dim: int, start: Any, length: int, copy: bool = False) -> Region:
    """Where ``narrow`` reads, with its checks (shared with ``narrow_copy``, ``copy=True``,
    whose kernel checks a too-large ``dim`` and a negative ``length`` its own way)."""
    begin = _narrow_start(input, dim, start, length, copy)
    return Region(_dim_key(input._data.ndim, dim, slice(begin, begin + length, 1)),
                  view=(SLICE, (dim, begin, begin + length, 1)))


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


def select_view_region(nd: int, dim: int, index: int) -> Region:
    """Where ``select(dim, index)`` reads in a tensor of ``nd`` dims, and the view itself."""
    return Region(_dim_key(nd, dim, index), view=(SELECT, (dim, index)))


def select_region(input: Tensor, dim: int, index: int) -> Region:
    """Where ``select`` reads, with its checks (shared with ``select_scatter``)."""
    index = int(index)
    _check_select(input, dim, index)
    return select_view_region(input._data.ndim, dim, index)


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


def diagonal_view_region(offset: int, d1: int, d2: int) -> Region:
    """Where ``diagonal(offset, d1, d2)`` (dims wrapped) reads, and the view itself."""
    return Region(fn=_diagonal_fn(offset, d1, d2), view=(DIAGONAL, (offset, d1, d2)))


def diagonal_region(input: Tensor, offset: int, dim1: int, dim2: int) -> Region:
    """Where ``diagonal`` reads, with its checks (shared with ``diagonal_scatter``)."""
    d1, d2 = _check_diagonal(input, dim1, dim2)
    return diagonal_view_region(int(offset), d1, d2)


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

# Not a ``General`` entry (yet): on the hot path of ``contiguous`` and ``reshape``, and
# ``General.record`` costs about a microsecond more per call than ``unary`` today.
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
        extra.tangent = extra.fw_pending = None
    return input


class ToCopyBackward0(ShapeNode):
    __slots__ = ("self_dtype",)

    def backward(self, grad: Tensor) -> tuple:
        if grad._data.dtype.kind == "c" and not self.self_dtype.is_complex:
            grad = grad.real  # a real input's gradient: the real part, silently (handle_r_to_c)
        return to(grad, self.self_dtype),


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
    src = input._data.dtype
    target = src if dtype is None else dtype.np_dtype
    if target == src and not copy:
        return input
    data = input._data
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
    res = unary(ToCopyBackward0, input, out)
    node = node_of(res)
    if node is not None:
        node.self_dtype = _dtype.from_np(src)
    return res
