"""Arranging ops: triangles, rolls, rotations, diagonals, tiling, stacking, splits and grids.

Note [Composed arrangements]
Where torch builds an op out of other ops (``tile`` is ``repeat``, ``hstack``
is ``cat``, ``movedim`` is ``permute``, ``atleast_2d`` is ``unsqueeze`` ...),
npgrad composes the same ops in the same order, so that ``grad_fn`` names,
view-ness and identity (``atleast_1d(v) is v``) come out as torch's without a
node of their own.  Only the ops torch differentiates directly (``tril``,
``roll``, ``rot90``, ``trace``, ``diag_embed``, ``diag`` of a matrix, the
``*_scatter`` ops, ``narrow_copy``, ``block_diag``) have a node class here.
"""
from __future__ import annotations

import warnings
from typing import TYPE_CHECKING, Any

import numpy as np

from .signature import batchable, checker, renamed, signature, unchecked
from .. import _dtype
from .._mode import _tls
if TYPE_CHECKING:
    from .._tensor import Tensor
else:  # Note [Tensor base and Tensor] in npgrad._tensor_base
    from .._tensor_base import TensorBase as Tensor
from .._tensor_base import wrap
from . import checks
from ._core import is_tensor
from .allocation import alloc_error
from ._shape_util import broadcast_shapes, parse_shape, wrap_dim
from .registry import General
from .shape import (_INT64_MAX, DIAGONAL, DIAGONAL_BACKWARD, SELECT, SLICE, SLICE_BACKWARD,
                    _diagonal_of, _diagonal_placed, _selected, _sliced, cat, contiguous,
                    expand, flatten, flip, permute, repeat, reshape, slice_dim, unsafe_view,
                    unsqueeze, view)
from .indexing import index_select


def _int_tuple(x: Any) -> tuple:
    if isinstance(x, (list, tuple)):
        return tuple(int(i) for i in x)
    return (int(x),)


# -- tril / triu -------------------------------------------------------------------------

# Each op here is an entry (Note [An op is an entry] in _ops/registry.py) whose rules are
# the op itself or its inverse: linear ops, so the tangent rule is the op on the tangent.
TRIL = General(
    "tril(Tensor input, SymInt diagonal=0, *, Tensor out=None)", grad_fn="TrilBackward0",
    forward=np.tril, params=("diagonal",), keeps=("diagonal",),
    derivatives={"self": lambda grad, diagonal: tril(grad, diagonal)},
    tangent=lambda self_t, diagonal: tril(self_t, diagonal))
TRIU = General(
    "triu(Tensor input, SymInt diagonal=0, *, Tensor out=None)", grad_fn="TriuBackward0",
    forward=np.triu, params=("diagonal",), keeps=("diagonal",),
    derivatives={"self": lambda grad, diagonal: triu(grad, diagonal)},
    tangent=lambda self_t, diagonal: triu(self_t, diagonal))


def _triangle(entry: General, name: str, input: Tensor, diagonal: int) -> Tensor:
    if input._data.ndim < 2:
        raise RuntimeError(f"{name}: input tensor must have at least 2 dimensions")
    return entry((input,), (int(diagonal),))  # type: ignore[no-any-return]


@signature("tril(Tensor input, SymInt diagonal=0, *, Tensor out=None)")
def tril(input: Tensor, diagonal: int = 0) -> Tensor:
    """The lower triangle of the last two dims, zeros above ``diagonal`` (``TrilBackward0``).

    >>> import npgrad
    >>> npgrad.ones(2, 2).tril()
    tensor([[1., 0.],
            [1., 1.]])
    """
    return _triangle(TRIL, "tril", input, diagonal)


@signature("triu(Tensor input, SymInt diagonal=0, *, Tensor out=None)")
def triu(input: Tensor, diagonal: int = 0) -> Tensor:
    """The upper triangle of the last two dims, zeros below ``diagonal`` (``TriuBackward0``).

    >>> import npgrad
    >>> npgrad.ones(2, 2).triu(1)
    tensor([[0., 1.],
            [0., 0.]])
    """
    return _triangle(TRIU, "triu", input, diagonal)


def tril_(input: Tensor, diagonal: int = 0) -> Tensor:
    from .inplace import apply_inplace

    return apply_inplace(input, tril, diagonal)


def triu_(input: Tensor, diagonal: int = 0) -> Tensor:
    from .inplace import apply_inplace

    return apply_inplace(input, triu, diagonal)


# -- roll / rot90 ------------------------------------------------------------------------

ROLL = General(
    "roll(Tensor input, SymIntArrayRef[1] shifts, IntArrayRef[1] dims=None, *, "
    "Tensor out=None)", grad_fn="RollBackward0", forward=None, params=("shifts", "dims"),
    keeps=("shifts", "dims"),
    derivatives={"self": lambda grad, shifts, dims:
                 roll(grad, tuple(-s for s in shifts), dims or None)},
    tangent=lambda self_t, shifts, dims: roll(self_t, shifts, dims or None))


@signature("roll(Tensor input, SymIntArrayRef[1] shifts, IntArrayRef[1] dims=None, *, "
           "Tensor out=None)")
def roll(input: Tensor, shifts: Any, dims: Any = None) -> Tensor:
    """Shift elements cyclically along ``dims`` (the flattened tensor when None): ``RollBackward0``.

    >>> import npgrad
    >>> npgrad.arange(4).roll(1)
    tensor([3, 0, 1, 2])
    """
    shifts = _int_tuple(shifts)
    dims = () if dims is None else _int_tuple(dims)
    data = input._data
    if len(shifts) != len(dims) and not (not dims and len(shifts) == 1):
        raise RuntimeError(f"shifts and dimensions must align. shifts: {len(shifts)}, "
                           f"dims:{len(dims)}")
    if dims:
        if data.ndim == 0:
            raise IndexError(f"Dimension specified as {dims[0]} but tensor has no dimensions")
        out = np.roll(data, shifts, tuple(wrap_dim(d, data.ndim) for d in dims))
    else:
        out = np.roll(data, shifts[0])
    return ROLL.record((input,), out, (shifts, dims))  # type: ignore[no-any-return]


ROT90 = General(
    "rot90(Tensor input, int64_t k=1, IntArrayRef dims={0,1}, *, Tensor out=None)",
    grad_fn="Rot90Backward0", forward=lambda data, k, dims: np.rot90(data, k, dims).copy(),
    params=("k", "dims"), keeps=("k", "dims"),
    derivatives={"self": lambda grad, k, dims: rot90(grad, -k, dims)},
    tangent=lambda self_t, k, dims: rot90(self_t, k, dims))


@signature("rot90(Tensor input, int64_t k=1, IntArrayRef dims={0,1}, *, Tensor out=None)")
def rot90(input: Tensor, k: int = 1, dims: Any = (0, 1)) -> Tensor:
    """Rotate by 90 degrees ``k`` times from the first towards the second of ``dims`` (a copy).

    >>> import npgrad
    >>> npgrad.tensor([[1, 2], [3, 4]]).rot90()
    tensor([[2, 4],
            [1, 3]])
    """
    dims = _int_tuple(dims)
    data = input._data
    if len(dims) != 2:
        raise RuntimeError(f"expected total rotation dims == 2, but got dims = {len(dims)}")
    if data.ndim < 2:
        raise RuntimeError(f"expected total dims >= 2, but got total dims = {data.ndim}")
    if wrap_dim(dims[0], data.ndim) == wrap_dim(dims[1], data.ndim):
        raise RuntimeError(f"expected rotation dims to be different, but got dim0 = {dims[0]} "
                           f"and dim1 = {dims[1]}")
    return ROT90((input,), (int(k), dims))  # type: ignore[no-any-return]


# -- diagonals and trace -----------------------------------------------------------------

# diag_embed writes the input onto a diagonal of zeros (as ``diagonal_backward`` writes a
# gradient) and reads that diagonal back in backward, as a view
DIAG_EMBED = General(
    "diag_embed(Tensor input, int64_t offset=0, int64_t dim1=-2, int64_t dim2=-1, *, "
    "Tensor out=None)", grad_fn="DiagEmbedBackward0", forward=_diagonal_placed,
    params=("shape", "offset", "dim1", "dim2"), keeps=("offset", "dim1", "dim2"),
    derivatives={"self": lambda grad, offset, dim1, dim2: DIAGONAL(grad, offset, dim1, dim2)},
    tangent=lambda self_t, offset, dim1, dim2: diag_embed(self_t, offset, dim1, dim2))

# ``diag`` of a matrix: torch's ``diagonal_copy``, the diagonal as a copy, not a view
DIAGONAL_COPY = General(
    "diagonal_copy(Tensor input, int64_t offset=0, int64_t dim1=0, int64_t dim2=1)",
    grad_fn="DiagonalBackward0_copy",
    forward=lambda data, offset, dim1, dim2: _diagonal_of(data, offset, dim1, dim2).copy(),
    params=("offset", "dim1", "dim2"), keeps=("offset", "dim1", "dim2", "self_sym_sizes"),
    derivatives={"self": lambda grad, self_sym_sizes, offset, dim1, dim2: DIAGONAL_BACKWARD(
        (grad,), (self_sym_sizes, offset, dim1, dim2))},
    tangent=lambda self_t, offset, dim1, dim2: DIAGONAL_COPY((self_t,), (offset, dim1, dim2)))


@signature("diag_embed(Tensor input, int64_t offset=0, int64_t dim1=-2, int64_t dim2=-1, *, "
           "Tensor out=None)")
def diag_embed(input: Tensor, offset: int = 0, dim1: int = -2, dim2: int = -1) -> Tensor:
    """Zeros with the last dim of ``input`` on a diagonal of dims ``dim1``/``dim2``.

    >>> import npgrad
    >>> npgrad.diag_embed(npgrad.tensor([1, 2]))
    tensor([[1, 0],
            [0, 2]])
    """
    data = input._data
    nd = data.ndim + 1
    d1, d2 = wrap_dim(dim1, nd), wrap_dim(dim2, nd)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    offset = int(offset)
    n = data.shape[-1] + abs(offset)
    batch = list(data.shape[:-1])
    shape = []
    for i in range(nd):
        shape.append(n if i in (d1, d2) else batch.pop(0))
    return DIAG_EMBED((input,), (tuple(shape), offset, dim1, dim2))  # type: ignore[no-any-return]


@signature("diag(Tensor input, int64_t diagonal=0, *, Tensor out=None)")
def diag(input: Tensor, diagonal: int = 0) -> Tensor:
    """A vector onto a diagonal of a square matrix, or a matrix's diagonal as a vector.

    >>> import npgrad
    >>> npgrad.diag(npgrad.tensor([[1, 2], [3, 4]]))
    tensor([1, 4])
    """
    nd = input._data.ndim
    if nd == 1:  # diag_embed with its default dims, as torch's
        return diag_embed(input, diagonal)
    if nd != 2:
        raise RuntimeError(f"diag(): Supports 1D or 2D tensors. Got {nd}D")
    return DIAGONAL_COPY((input,), (int(diagonal), 0, 1))  # type: ignore[no-any-return]


def _trace_back(grad: Tensor, self_sym_sizes: tuple) -> Tensor:
    """The gradient on the main diagonal of zeros (``diagonal_backward`` of it expanded)."""
    n = min(self_sym_sizes)
    return DIAGONAL_BACKWARD((expand(grad, (n,)),),  # type: ignore[no-any-return]
                             (self_sym_sizes, 0, 0, 1))


TRACE = General("trace(Tensor input, *, Tensor out=None)", grad_fn="TraceBackward0",
                forward=None, keeps=("self_sym_sizes",), derivatives={"self": _trace_back},
                tangent=lambda self_t: trace(self_t))


@signature("trace(Tensor input, *, Tensor out=None)")
def trace(input: Tensor) -> Tensor:
    """The sum of a matrix's diagonal (integers sum to int64; grad_fn ``TraceBackward0``).

    >>> import npgrad
    >>> npgrad.tensor([[1., 2.], [3., 4.]]).trace()
    tensor(5.)
    """
    data = input._data
    if data.ndim != 2:
        raise RuntimeError(f"trace: expected a matrix, but got tensor with dim {data.ndim}")
    if data.dtype == np.bool_:
        raise NotImplementedError('"trace" not implemented for \'Bool\'')
    dt = data.dtype if data.dtype.kind in "fc" else np.dtype(np.int64)
    out = np.asarray(np.trace(data, dtype=dt))
    if dt.kind not in "fc":
        return wrap(out, _tls.mode)
    return TRACE.record((input,), out)  # type: ignore[no-any-return]


# -- tile / movedim / broadcasting ---------------------------------------------------------

@signature("tile(Tensor input, SymIntArrayRef dims)")
def tile(input: Tensor, *dims: Any) -> Tensor:
    """``repeat`` with ``dims`` padded by leading ones to the input's rank (``RepeatBackward0``).

    >>> import npgrad
    >>> npgrad.tensor([1, 2]).tile(2)
    tensor([1, 2, 1, 2])
    """
    reps = parse_shape(dims)
    reps = (1,) * (input._data.ndim - len(reps)) + reps
    return repeat(input, reps)


@signature("movedim(Tensor input, int64_t source, int64_t destination)",
           "movedim(Tensor input, IntArrayRef source, IntArrayRef destination)")
def movedim(input: Tensor, source: Any, destination: Any) -> Tensor:
    """Move dims ``source`` to positions ``destination``, the rest keeping their order (a permute).

    >>> import npgrad
    >>> npgrad.zeros(2, 3, 4).movedim(0, -1).shape
    torch.Size([3, 4, 2])
    """
    src, dst = _int_tuple(source), _int_tuple(destination)
    nd = input._data.ndim
    if nd == 0:  # torch checks the dims, then returns an alias (no permute of nothing)
        from .indexing import alias

        for d in src + dst:
            wrap_dim(d, 0)
        return alias(input)
    if len(src) != len(dst):
        raise RuntimeError(
            f"movedim: Invalid source or destination dims: source ({list(src)} dims) should "
            f"contain the same number of dims as destination ({list(dst)} dims)")
    src_w = [wrap_dim(d, nd) for d in src]
    dst_w = [wrap_dim(d, nd) for d in dst]
    for name, ws, raw in (("source", src_w, src), ("destination", dst_w, dst)):
        if len(set(ws)) != len(ws):
            raise RuntimeError(f"movedim: repeated dim in `{name}` ({list(raw)})")
    order = [-1] * max(nd, 1)
    for s, d in zip(src_w, dst_w):
        order[d] = s
    rest = iter(i for i in range(max(nd, 1)) if i not in src_w)
    order = [o if o != -1 else next(rest) for o in order]
    return permute(input, tuple(order[:nd]))


moveaxis = signature("moveaxis(Tensor input, int64_t source, int64_t destination)",
                     "moveaxis(Tensor input, IntArrayRef source, IntArrayRef destination)")(
    unchecked(movedim))  # the alias, checked under its own name


@signature("broadcast_to(Tensor input, SymIntArrayRef size)")
def broadcast_to(input: Tensor, size: Any) -> Tensor:
    """``expand`` to ``size`` (a view; grad_fn ``ExpandBackward0``)."""
    return expand(input, size)


# The C ops that torch.functional's plain-Python wrappers call with their ``*tensors``
# (Note [Checking a C op called mid-function] in signature.py)
_BROADCAST_TENSORS = checker("broadcast_tensors(TensorList tensors)")
_BLOCK_DIAG = checker("block_diag(TensorList tensors)")
_CARTESIAN_PROD = checker("cartesian_prod(TensorList tensors)")
_MESHGRID = checker("meshgrid(TensorList tensors)",
                    "meshgrid(TensorList tensors, *, c10::string_view indexing)")
_ATLEAST = {n: checker(f"atleast_{n}d(Tensor input)", f"atleast_{n}d(TensorList tensors)")
            for n in (1, 2, 3)}


@batchable  # Note [Batched values] in npgrad.func._batched
def broadcast_tensors(*tensors: Any) -> tuple:
    """Each tensor expanded to the common broadcast shape (already shaped ones come back as is).

    >>> import npgrad
    >>> a, b = npgrad.broadcast_tensors(npgrad.zeros(2, 1), npgrad.ones(3))
    >>> b.shape
    torch.Size([2, 3])
    """
    _BROADCAST_TENSORS(tensors)  # torch passes the arguments as one TensorList: no unpacking
    shape: tuple = ()
    for i, t in enumerate(tensors):
        shape = t._data.shape if i == 0 else broadcast_shapes(shape, t._data.shape)
    return tuple(t if t._data.shape == shape else expand(t, shape) for t in tensors)


# -- atleast_nd / stacking -------------------------------------------------------------

def _each(tensors: tuple, one: Any, n: int) -> Any:
    arg = tensors[0] if len(tensors) == 1 else tensors
    _ATLEAST[n](arg)
    if isinstance(arg, Tensor):
        return one(arg)
    return tuple(one(t) for t in arg)


def _atleast_1d(t: Tensor) -> Tensor:
    return reshape(t, (1,)) if t._data.ndim == 0 else t


def _atleast_2d(t: Tensor) -> Tensor:
    nd = t._data.ndim
    if nd == 0:
        return reshape(t, (1, 1))
    return unsqueeze(t, 0) if nd == 1 else t


def _atleast_3d(t: Tensor) -> Tensor:
    nd = t._data.ndim
    if nd == 0:
        return reshape(t, (1, 1, 1))
    if nd == 1:
        return unsqueeze(unsqueeze(t, 0), -1)
    return unsqueeze(t, -1) if nd == 2 else t


@batchable  # Note [Batched values] in npgrad.func._batched
def atleast_1d(*tensors: Any) -> Any:
    """0-dim tensors as shape (1,), the others unchanged; a tuple for several tensors.

    >>> import npgrad
    >>> npgrad.atleast_1d(npgrad.tensor(3.))
    tensor([3.])
    """
    return _each(tensors, _atleast_1d, 1)


@batchable  # Note [Batched values] in npgrad.func._batched
def atleast_2d(*tensors: Any) -> Any:
    """Tensors with fewer than 2 dims get leading size-1 dims (views)."""
    return _each(tensors, _atleast_2d, 2)


@batchable  # Note [Batched values] in npgrad.func._batched
def atleast_3d(*tensors: Any) -> Any:
    """Tensors with fewer than 3 dims get size-1 dims as NumPy's ``atleast_3d`` adds them."""
    return _each(tensors, _atleast_3d, 3)


def _stack_list(tensors: Any, name: str) -> list:
    from .shape import _tensor_list

    tensors = _tensor_list(tensors, name)
    if not tensors:
        raise RuntimeError(f"{name} expects a non-empty TensorList")
    return tensors


@signature("hstack(TensorList tensors, *, Tensor out=None)")
def hstack(tensors: Any) -> Tensor:
    """Concatenate along dim 1 (dim 0 for vectors); grad_fn ``CatBackward0``.

    >>> import npgrad
    >>> npgrad.hstack([npgrad.tensor([1, 2]), npgrad.tensor([3])])
    tensor([1, 2, 3])
    """
    parts = [_atleast_1d(t) for t in _stack_list(tensors, "hstack")]
    return cat(parts, 0 if parts[0]._data.ndim == 1 else 1)


@signature("vstack(TensorList tensors, *, Tensor out=None)")
def vstack(tensors: Any) -> Tensor:
    """Concatenate along dim 0 after ``atleast_2d`` (vectors become rows)."""
    return cat([_atleast_2d(t) for t in _stack_list(tensors, "vstack")], 0)


row_stack = renamed(vstack, "row_stack")  # Note [An alias has its own name in the errors]


@signature("dstack(TensorList tensors, *, Tensor out=None)")
def dstack(tensors: Any) -> Tensor:
    """Concatenate along dim 2 after ``atleast_3d``."""
    return cat([_atleast_3d(t) for t in _stack_list(tensors, "dstack")], 2)


@signature("column_stack(TensorList tensors, *, Tensor out=None)")
def column_stack(tensors: Any) -> Tensor:
    """Vectors (and scalars) as columns, matrices as they are, side by side along dim 1."""
    parts = [reshape(t, (t._data.size, 1)) if t._data.ndim <= 1 else t
             for t in _stack_list(tensors, "column_stack")]
    return cat(parts, 1)


# -- repeat_interleave / meshgrid / kron ---------------------------------------------------

@signature("repeat_interleave(Tensor input, Tensor repeats, int64_t? dim=None, *, "
           "SymInt? output_size=None)",
           "repeat_interleave(Tensor repeats, *, SymInt? output_size=None)",
           "repeat_interleave(Tensor input, SymInt repeats, int64_t? dim=None, *, "
           "SymInt? output_size=None)")
def repeat_interleave(input: Tensor, repeats: Any = None, dim: Any = None, *,
                      output_size: Any = None) -> Tensor:
    """Repeat each element (or slice along ``dim``) ``repeats`` times, in place of NumPy's repeat.

    An int ``repeats`` expands a new dim and flattens it (``ViewBackward0``);
    a tensor of counts selects indices (``IndexSelectBackward0``), as torch.

    >>> import npgrad
    >>> npgrad.tensor([1, 2]).repeat_interleave(2)
    tensor([1, 1, 2, 2])
    """
    if repeats is None:  # repeat_interleave(counts): the indices each count repeats
        counts = input._data
        if counts.ndim != 1:
            raise RuntimeError("repeat_interleave only accept 1D vector as repeat")
        if counts.size and counts.min() < 0:
            raise RuntimeError("repeats can not be negative")
        return wrap(np.repeat(np.arange(counts.size, dtype=counts.dtype), counts), _tls.mode)
    x = input if dim is not None else flatten(input)
    d = wrap_dim(dim if dim is not None else 0, x._data.ndim)
    if not is_tensor(repeats):
        r = int(repeats)
        if r < 0:
            raise RuntimeError("Repeats must be non-negative")
        shape = x._data.shape
        grown = expand(unsqueeze(x, d + 1), shape[:d + 1] + (r,) + shape[d + 1:])
        from .shape import clone

        try:
            return flatten(clone(grown), d, d + 1)
        except MemoryError:  # Note [Sizes checked before allocating]
            raise alloc_error(grown._data.size * grown._data.itemsize) from None
    counts = repeats._data
    if counts.ndim > 1:
        raise RuntimeError("repeats must be 0-dim or 1-dim tensor")
    if counts.dtype.kind not in "iu":
        raise NotImplementedError(f'"repeat_interleave_cpu" not implemented for '
                                  f"'{_dtype.from_np(counts.dtype).scalar_name}'")
    n = x._data.shape[d] if x._data.ndim else 1
    counts = counts.reshape(-1)
    if counts.size == 1:
        counts = np.repeat(counts, n)
    if counts.size != n:
        checks.size_at(x._data.shape, d)  # torch's message reads input.size(dim): a 0-dim raises
        raise RuntimeError(f"repeats must have the same size as input along dim, but got "
                           f"repeats.size(0) = {counts.size} and input.size({d}) = {n}")
    if counts.size and counts.min() < 0:
        raise RuntimeError("repeats can not be negative")
    idx = wrap(np.repeat(np.arange(n, dtype=np.int64), counts), 0)
    return index_select(x, d, idx)


def meshgrid(*tensors: Any, indexing: str | None = None) -> tuple:
    """Coordinate grids: output ``i`` varies along dim ``i`` (``"ij"``) or swaps the first two.

    Each grid is a view of its input, expanded (``ExpandBackward0``).

    >>> import npgrad
    >>> xs, ys = npgrad.meshgrid(npgrad.arange(2), npgrad.arange(3), indexing="ij")
    >>> xs.shape
    torch.Size([2, 3])
    """
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    if indexing is None:
        _MESHGRID(tensors)
    else:
        _MESHGRID(tensors, indexing=indexing)
    if not tensors:
        raise RuntimeError("meshgrid expects a non-empty TensorList")
    if indexing is None:
        warnings.warn("torch.meshgrid: in an upcoming release, it will be required to pass the "
                      "indexing argument.", UserWarning, stacklevel=2)
        indexing = "ij"
    if indexing not in ("xy", "ij"):
        raise RuntimeError('torch.meshgrid: indexing must be one of "xy" or "ij", but received: '
                           f"{indexing}")
    if any(t._data.dtype != tensors[0]._data.dtype for t in tensors):
        raise RuntimeError("meshgrid expects all tensors to have the same dtype")
    for t in tensors:
        if t._data.ndim > 1:
            raise RuntimeError("torch.meshgrid: Expected 0D or 1D tensor in the tensor list but "
                               f"got: {t._data.ndim}D")
    order = list(range(len(tensors)))
    if indexing == "xy" and len(tensors) >= 2:
        order[0], order[1] = 1, 0
    sizes = tuple(tensors[i]._data.size for i in order)
    grids = []
    for position, i in enumerate(order):
        shape = [1] * len(sizes)
        shape[position] = -1
        grids.append((i, expand(view(tensors[i], tuple(shape)), sizes)))
    return tuple(g for _, g in sorted(grids, key=lambda p: p[0]))


def _unsafe_view(input: Tensor, shape: tuple) -> Tensor:
    """A reshaped copy recorded as ``_unsafe_view`` (torch's not-a-view reshape)."""
    return unsafe_view(input, shape, copy=True)


@signature("kron(Tensor input, Tensor other, *, Tensor out=None)")
def kron(input: Tensor, other: Tensor) -> Tensor:
    """The Kronecker product: blocks ``input[i, j] * other`` (grad_fn ``UnsafeViewBackward0``).

    >>> import npgrad
    >>> npgrad.kron(npgrad.tensor([1, 2]), npgrad.tensor([1, 10]))
    tensor([ 1, 10,  2, 20])
    """
    from .pointwise import mul

    a, b = input._data.shape, other._data.shape
    nd = max(len(a), len(b))
    a = (1,) * (nd - len(a)) + a
    b = (1,) * (nd - len(b)) + b
    a_shape, b_shape = [], []
    for i in range(nd):
        a_shape += [a[i], 1]
        b_shape += [1, b[i]]
    result_shape = tuple(a[i] * b[i] for i in range(nd))
    prod = mul(_unsafe_view(input, tuple(a_shape)), _unsafe_view(other, tuple(b_shape)))
    return _unsafe_view(prod, result_shape)



# -- flips, ravel and splits made of other ops (Note [Composed arrangements]) -------------------

@signature("fliplr(Tensor input)")
def fliplr(input: Tensor) -> Tensor:
    """Reverse dim 1 (``flip(input, 1)``; needs at least 2 dims).

    >>> import npgrad
    >>> npgrad.tensor([[1, 2]]).fliplr()
    tensor([[2, 1]])
    """
    if input._data.ndim < 2:
        raise RuntimeError("Input must be >= 2-d.")
    return flip(input, (1,))


@signature("flipud(Tensor input)")
def flipud(input: Tensor) -> Tensor:
    """Reverse dim 0 (``flip(input, 0)``; needs at least 1 dim)."""
    if input._data.ndim < 1:
        raise RuntimeError("Input must be >= 1-d.")
    return flip(input, (0,))


@signature("ravel(Tensor input)")
def ravel(input: Tensor) -> Tensor:
    """The elements as a vector: a view of ``input``, or of a contiguous copy of it.

    >>> import npgrad
    >>> npgrad.tensor([[1, 2], [3, 4]]).t().ravel()
    tensor([1, 3, 2, 4])
    """
    return view(contiguous(input), (-1,))


_MAX_TENSOR_VECTOR = 2 ** 60 - 1  # std::vector<at::Tensor>::max_size() on 64-bit


def _tensor_split_type_error(input: Tensor, sections: Any, method: bool) -> TypeError:
    """torch's "invalid combination of arguments" for sections that are not an int."""
    first, lead = ("", "") if method else ("Tensor, ", "Tensor input, ")
    return TypeError(
        f"tensor_split() received an invalid combination of arguments - got ({first}"
        f"{type(sections).__name__}), but expected one of:\n"
        f" * ({lead}tuple of ints indices, int dim = 0)\n"
        f" * ({lead}Tensor tensor_indices_or_sections, int dim = 0)\n"
        f" * ({lead}int sections, int dim = 0)\n")


@signature("tensor_split(Tensor input, SymIntArrayRef indices, int64_t dim=0)",
           "tensor_split(Tensor input, Tensor tensor_indices_or_sections, int64_t dim=0)",
           "tensor_split(Tensor input, SymInt sections, int64_t dim=0)")
def tensor_split(input: Tensor, indices_or_sections: Any, dim: int = 0, *,
                 method: bool = False) -> tuple:
    """Views along ``dim``: ``n`` near-equal sections, or the pieces between split indices.

    Each piece is a separate slice (``SliceBackward0``), unlike ``split``'s one node.

    >>> import npgrad
    >>> [t.tolist() for t in npgrad.arange(5).tensor_split(2)]
    [[0, 1, 2], [3, 4]]
    """
    data = input._data
    if data.ndim == 0:
        raise RuntimeError("tensor_split expected at least a 1-dimensional tensor, but got a "
                           "tensor with 0 dims")
    if is_tensor(indices_or_sections):
        t = indices_or_sections._data
        if t.ndim > 1:
            raise RuntimeError("tensor_split expected tensor_indices_or_sections to be a "
                               "zero-dimensional or one-dimensional tensor, but got a tensor "
                               f"with {t.ndim} dims")
        if t.dtype != np.int64:
            raise RuntimeError("tensor_split expected tensor_indices_or_sections to have dtype "
                               f"of long, but got {_dtype.from_np(t.dtype).scalar_name}")
        indices_or_sections = int(t) if t.ndim == 0 else [int(i) for i in t]
    d = wrap_dim(dim, data.ndim)
    n = data.shape[d]
    if isinstance(indices_or_sections, (list, tuple)):
        bounds = [0] + [int(i) for i in indices_or_sections] + [n]
    else:
        if not isinstance(indices_or_sections, (int, np.integer)) or isinstance(
                indices_or_sections, bool):
            raise _tensor_split_type_error(input, indices_or_sections, method)
        sections = int(indices_or_sections)
        if sections <= 0:
            raise RuntimeError(f"number of sections must be larger than 0, got {sections}")
        if sections > _MAX_TENSOR_VECTOR:  # torch builds a std::vector of that many tensors
            raise RuntimeError("cannot create std::vector larger than max_size()")
        small, extra = divmod(n, sections)
        bounds = [0]
        for i in range(sections):
            bounds.append(bounds[-1] + small + (1 if i < extra else 0))
    return tuple(slice_dim(input, d, start, stop) for start, stop in zip(bounds, bounds[1:]))


def _split_along(name: str, input: Tensor, indices_or_sections: Any, dim: int,
                 min_dims: int) -> tuple:
    nd = input._data.ndim
    if nd < min_dims:
        raise RuntimeError(f"torch.{name} requires a tensor with at least {min_dims} dimension, "
                           f"but got a tensor with {nd} dimensions!")
    if not isinstance(indices_or_sections, (list, tuple)):
        size = input._data.shape[dim]
        sections = int(indices_or_sections)
        if sections == 0 or size % sections:
            raise RuntimeError(f"torch.{name} attempted to split along dimension {dim}, but the "
                               f"size of the dimension {size} is not divisible by the "
                               f"split_size {sections}!")
    return tensor_split(input, indices_or_sections, dim)


@signature("hsplit(Tensor input, int64_t sections)",
           "hsplit(Tensor input, IntArrayRef indices)")
def hsplit(input: Tensor, indices_or_sections: Any) -> tuple:
    """``tensor_split`` along dim 1 (dim 0 for vectors); sections must divide the size evenly."""
    return _split_along("hsplit", input, indices_or_sections,
                        0 if input._data.ndim == 1 else 1, 1)


@signature("vsplit(Tensor input, int64_t sections)",
           "vsplit(Tensor input, IntArrayRef indices)")
def vsplit(input: Tensor, indices_or_sections: Any) -> tuple:
    """``tensor_split`` along dim 0 of a tensor with at least 2 dims."""
    return _split_along("vsplit", input, indices_or_sections, 0, 2)


@signature("dsplit(Tensor input, int64_t sections)",
           "dsplit(Tensor input, IntArrayRef indices)")
def dsplit(input: Tensor, indices_or_sections: Any) -> tuple:
    """``tensor_split`` along dim 2 of a tensor with at least 3 dims."""
    return _split_along("dsplit", input, indices_or_sections, 2, 3)


# -- select/slice/diagonal_scatter and narrow_copy: a region written into, or read from, a copy ----

# Note [Scatters into a view]
# ``select_scatter(self, src, dim, index)`` is a copy of ``self`` with ``src`` written where
# ``select(dim, index)`` reads (and so for slice and diagonal).  Each is an entry of two
# inputs: ``self``'s gradient is the gradient with zeros scattered over that region (the
# op again), ``src``'s is the region of the gradient, read by the view op's own entry.
# The node keeps the view's arguments as they were given, as torch's does (an open
# slice's bounds stay None); the rules read them through the same view forward.

def _open_slice(start: Any, end: Any) -> tuple:
    """A slice's bounds as the view op keeps them (0 and INT64_MAX for open ones)."""
    return 0 if start is None else start, _INT64_MAX if end is None else end


def _scattered(view_of: Any, data: np.ndarray, src: np.ndarray, *args: Any) -> np.ndarray:
    """A copy of ``data`` with ``src`` (cast to its dtype) written into ``view_of(copy, *args)``."""
    out = data.copy()
    view_of(out, *args)[...] = src.astype(data.dtype, copy=False)
    return out


SELECT_SCATTER = General(
    "select_scatter(Tensor input, Tensor src, int64_t dim, SymInt index, *, Tensor out=None)",
    grad_fn="SelectScatterBackward0", inputs=("self", "src"),
    forward=lambda data, src, dim, index: _scattered(_selected, data, src, dim, index),
    params=("dim", "index"), keeps=("dim", "index"),
    derivatives={"self": lambda grad, dim, index: select_scatter(
                     grad, _zeros_of(SELECT(grad, dim, index)), dim, index),
                 "src": lambda grad, dim, index: SELECT(grad, dim, index)},
    tangent=lambda self_t, src_t, dim, index: select_scatter(self_t, src_t, dim, index))
SLICE_SCATTER = General(
    "slice_scatter(Tensor input, Tensor src, int64_t dim=0, SymInt? start=None, "
    "SymInt? end=None, SymInt step=1, *, Tensor out=None)", grad_fn="SliceScatterBackward0",
    inputs=("self", "src"),
    forward=lambda data, src, dim, start, end, step: _scattered(
        _sliced, data, src, dim, *_open_slice(start, end), step),
    params=("dim", "start", "end", "step"), keeps=("dim", "start", "end", "step"),
    derivatives={"self": lambda grad, dim, start, end, step: slice_scatter(
                     grad, _zeros_of(SLICE(grad, dim, *_open_slice(start, end), step)), dim,
                     start, end, step),
                 "src": lambda grad, dim, start, end, step:
                     SLICE(grad, dim, *_open_slice(start, end), step)},
    tangent=lambda self_t, src_t, dim, start, end, step: slice_scatter(
        self_t, src_t, dim, start, end, step))
DIAGONAL_SCATTER = General(
    "diagonal_scatter(Tensor input, Tensor src, int64_t offset=0, int64_t dim1=0, "
    "int64_t dim2=1, *, Tensor out=None)", grad_fn="DiagonalScatterBackward0",
    inputs=("self", "src"),
    forward=lambda data, src, offset, dim1, dim2: _scattered(
        _diagonal_of, data, src, offset, dim1, dim2),
    params=("offset", "dim1", "dim2"), keeps=("offset", "dim1", "dim2"),
    derivatives={"self": lambda grad, offset, dim1, dim2: diagonal_scatter(
                     grad, _zeros_of(DIAGONAL(grad, offset, dim1, dim2)), offset, dim1, dim2),
                 "src": lambda grad, offset, dim1, dim2: DIAGONAL(grad, offset, dim1, dim2)},
    tangent=lambda self_t, src_t, offset, dim1, dim2: diagonal_scatter(
        self_t, src_t, offset, dim1, dim2))


def _zeros_of(region: Tensor) -> Tensor:
    return wrap(np.zeros_like(region._data), 0)


def _check_scatter_src(src: Tensor, region: np.ndarray) -> None:
    """torch's error for a ``src`` whose shape is not the region's."""
    from .shape import _shape_str

    if src._data.shape != region.shape:
        raise RuntimeError("expected src to have a size equal to the slice of self. src size = "
                           f"{_shape_str(src._data.shape)}, slice size = "
                           f"{_shape_str(region.shape)}")


@signature("select_scatter(Tensor input, Tensor src, int64_t dim, SymInt index, *, "
           "Tensor out=None)")
def select_scatter(input: Tensor, src: Tensor, dim: int, index: int) -> Tensor:
    """A copy of ``input`` with ``src`` as its slice ``index`` of dim ``dim``.

    >>> import npgrad
    >>> npgrad.select_scatter(npgrad.zeros(2, 2), npgrad.ones(2), 0, 1)
    tensor([[0., 0.],
            [1., 1.]])
    """
    from .shape import _check_select

    index = int(index)
    _check_select(input, dim, index)
    _check_scatter_src(src, _selected(input._data, dim, index))
    return SELECT_SCATTER((input, src), (dim, index))  # type: ignore[no-any-return]


@signature("slice_scatter(Tensor input, Tensor src, int64_t dim=0, SymInt? start=None, "
           "SymInt? end=None, SymInt step=1, *, Tensor out=None)")
def slice_scatter(input: Tensor, src: Tensor, dim: int = 0, start: Any = None, end: Any = None,
                  step: int = 1) -> Tensor:
    """A copy of ``input`` with ``src`` at ``[start:end:step]`` of dim ``dim``."""
    if input._data.ndim == 0:
        raise IndexError("slice() cannot be applied to a 0-dim tensor.")
    wrap_dim(dim, input._data.ndim)
    _check_scatter_src(src, _sliced(input._data, dim, *_open_slice(start, end), step))
    return SLICE_SCATTER((input, src), (dim, start, end, step))  # type: ignore[no-any-return]


@signature("diagonal_scatter(Tensor input, Tensor src, int64_t offset=0, int64_t dim1=0, "
           "int64_t dim2=1, *, Tensor out=None)")
def diagonal_scatter(input: Tensor, src: Tensor, offset: int = 0, dim1: int = 0,
                     dim2: int = 1) -> Tensor:
    """A copy of ``input`` with ``src`` on the diagonal ``diagonal(offset, dim1, dim2)`` reads."""
    from .shape import _check_diagonal

    _check_diagonal(input, dim1, dim2)
    offset = int(offset)
    _check_scatter_src(src, _diagonal_of(input._data, offset, dim1, dim2))
    return DIAGONAL_SCATTER((input, src), (offset, dim1, dim2))  # type: ignore[no-any-return]


def _narrow_copy_back(grad: Tensor, self_sym_sizes: tuple, dim: int, start: int,
                      length: int) -> Tensor:
    """The gradient placed where the copy was read (``slice_backward``, as torch's, which
    keeps ``start`` and ``start + length`` as computed from the arguments given)."""
    if start < 0 <= start + length:  # a negative start whose end reaches 0 or past it:
        # those bounds would slice nothing (torch's own backward fails there), so the
        # region is given by the wrapped start
        start += self_sym_sizes[dim % len(self_sym_sizes)]
    return SLICE_BACKWARD((grad,), (self_sym_sizes, dim, start, start + length, 1))  # type: ignore[no-any-return]


NARROW_COPY = General(
    "narrow_copy(Tensor input, int64_t dim, SymInt start, SymInt length, *, Tensor out=None)",
    grad_fn="NarrowCopyBackward0",
    forward=lambda data, dim, start, length, begin: _sliced(
        data, dim, begin, begin + length, 1).copy(),
    params=("dim", "start", "length", "begin"),
    keeps=("dim", "start", "length", "self_sym_sizes"),
    derivatives={"self": _narrow_copy_back},
    tangent=lambda self_t, dim, start, length: narrow_copy(self_t, dim, start, length))


@signature("narrow_copy(Tensor input, int64_t dim, SymInt start, SymInt length, *, "
           "Tensor out=None)")
def narrow_copy(input: Tensor, dim: int, start: int, length: int) -> Tensor:
    """``narrow`` as a copy (grad_fn ``NarrowCopyBackward0``)."""
    from .shape import _narrow_start

    begin = _narrow_start(input, dim, start, length, True)
    return NARROW_COPY((input,), (dim, start, length, begin))  # type: ignore[no-any-return]


# -- block_diag / diagflat / cartesian_prod / combinations / argwhere ------------------------------

def _block_diag_back(grad: Tensor, shapes: tuple) -> tuple:
    """Each tensor's block of the gradient, in the tensor's shape."""
    grads = []
    row = col = 0
    for shape in shapes:
        rows, cols = (1, 1) if len(shape) == 0 else (1, shape[0]) if len(shape) == 1 else shape
        block = slice_dim(slice_dim(grad, 0, row, row + rows), 1, col, col + cols)
        grads.append(reshape(block, shape))
        row, col = row + rows, col + cols
    return tuple(grads)


# torch's node keeps the tensors' sizes (and dtypes) with no getter (Note [A TensorList input])
BLOCK_DIAG = General(
    "block_diag(TensorList tensors)", grad_fn="BlockDiagBackward0", forward=None,
    inputs=("tensors",), tensor_list=True, params=("shapes",), keeps=("shapes",),
    hidden=("shapes",), derivatives={"tensors": _block_diag_back},
    tangent=lambda tensors_t: block_diag(*tensors_t))


def block_diag(*tensors: Tensor) -> Tensor:
    """The tensors (scalars, vectors as rows, matrices) as blocks on a diagonal of zeros.

    >>> import npgrad
    >>> npgrad.block_diag(npgrad.tensor([[1, 2]]), npgrad.tensor(3))
    tensor([[1, 2, 0],
            [0, 0, 3]])
    """
    _BLOCK_DIAG(tensors)
    blocks = []
    for i, t in enumerate(tensors):
        a = t._data
        if a.ndim > 2:
            raise RuntimeError("torch.block_diag: Input tensors must have 2 or fewer dimensions. "
                               f"Input {i} has {a.ndim} dimensions")
        blocks.append(a.reshape((1, 1) if a.ndim == 0 else (1, -1) if a.ndim == 1 else a.shape))
    dt = (_dtype.result_type_np(tuple(t._data for t in tensors)) if tensors
          else _dtype.get_default_dtype().np_dtype)
    out = np.zeros((sum(b.shape[0] for b in blocks) if blocks else 1,
                    sum(b.shape[1] for b in blocks)), dtype=dt)
    row = col = 0
    for b in blocks:
        out[row:row + b.shape[0], col:col + b.shape[1]] = b
        row, col = row + b.shape[0], col + b.shape[1]
    if dt.kind != "f":
        return wrap(out, _tls.mode)
    return BLOCK_DIAG.record(  # type: ignore[no-any-return]
        tuple(tensors), out, (tuple(t._data.shape for t in tensors),))


@signature("diagflat(Tensor input, int64_t offset=0)")
def diagflat(input: Tensor, offset: int = 0) -> Tensor:
    """The flattened input on diagonal ``offset`` of a square matrix (``DiagEmbedBackward0``)."""
    return diag_embed(ravel(input), offset)  # diag_embed's default dims, as torch's


def _vector(input: Tensor) -> None:
    if input._data.ndim != 1:
        from .shape import _shape_str

        raise RuntimeError(f"Expect a 1D vector, but got shape {_shape_str(input._data.shape)}")


def cartesian_prod(*tensors: Tensor) -> Tensor:
    """Every combination of one element from each vector, as rows (one vector: itself).

    >>> import npgrad
    >>> npgrad.cartesian_prod(npgrad.tensor([1, 2]), npgrad.tensor([3])).tolist()
    [[1, 3], [2, 3]]
    """
    _CARTESIAN_PROD(tensors)
    for t in tensors:
        _vector(t)
    if len(tensors) == 1:
        return tensors[0]
    from .shape import stack

    grids = meshgrid(*tensors, indexing="ij")
    return stack([flatten(g) for g in grids], 1)


@signature("combinations(Tensor input, int64_t r=2, bool with_replacement=False)")
def combinations(input: Tensor, r: int = 2, with_replacement: bool = False) -> Tensor:
    """All length-``r`` combinations of a vector's elements, in order, as rows.

    >>> import npgrad
    >>> npgrad.combinations(npgrad.tensor([1, 2, 3])).tolist()
    [[1, 2], [1, 3], [2, 3]]
    """
    from .indexing import masked_select
    from .shape import stack

    _vector(input)
    if r < 0:
        raise RuntimeError(f"Expect a non-negative number, but got {r}")
    if r == 0:
        return wrap(np.zeros((0,), dtype=input._data.dtype), _tls.mode)
    n = input._data.shape[0]
    grids = meshgrid(*([input] * r), indexing="ij")
    positions = np.meshgrid(*([np.arange(n)] * r), indexing="ij")
    mask = np.ones(positions[0].shape, dtype=bool)
    for a, b in zip(positions, positions[1:]):
        mask &= (a <= b) if with_replacement else (a < b)
    keep = wrap(mask, 0)
    return stack([masked_select(g, keep) for g in grids], 1)


@signature("argwhere(Tensor input)")
def argwhere(input: Tensor) -> Tensor:
    """The indices of the non-zero elements, one row each (``nonzero``)."""
    from .indexing import nonzero

    return nonzero(input)
