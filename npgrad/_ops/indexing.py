"""Python indexing: ``x[idx]``, ``x[idx] = v`` and ``nonzero``, with torch's rules and errors.

Note [How an index is applied]
As torch does, an index is taken apart left to right into *basic* steps, each
one a view op of its own (an int is ``select``, a slice ``slice``, None
``unsqueeze``, Ellipsis skips dims), followed by at most one *advanced* step
(integer or bool tensors and lists) that copies: ``index`` (grad_fn
``IndexBackward0``).  So ``x[0, 1:]`` is a select and then a slice and reports
``SliceBackward0``; ``x[0, [1, 2]]`` reports ``IndexBackward0`` over a
``SelectBackward0``.  Inside a tuple a slice that keeps a whole dim is
skipped, and an index that applied no view at all returns ``alias(x)``
(``AliasBackward0``); a lone slice (``x[:]``) is always applied.

Assignment applies the same basic steps (as recorded views) and then writes
into the last view in place: ``index_put_`` if there is an advanced step,
else ``copy_`` (``fill_`` for a Python number written into the whole tensor).
A write into a view of a tensor in a graph becomes the base's ``CopySlices``
(``_ops.views``); all of torch's in-place checks come from ``_ops.inplace``.
"""
from __future__ import annotations

import warnings
from typing import TYPE_CHECKING, Any

import numpy as np

from .signature import signature
from .. import _dtype
from .._mode import _tls, RECORDING
if TYPE_CHECKING:
    from .._tensor import Tensor
else:  # Note [Tensor base and Tensor] in npgrad._tensor_base
    from .._tensor_base import TensorBase as Tensor
from .._tensor_base import wrap
from . import checks, shape as _shape
from ..autograd.graph import SavedTensor
from ._core import (NotImplementedBackward, check_not_freed, is_tensor, node_of, record, save_value,
                    unary, view_of_view_message, view_result)
from ._shape_util import broadcast_shapes, wrap_dim
from .shape import IndexBackward0, Region, ShapeNode, _take, _shape_str

_SEQUENCE_WARNING = (
    "Using a non-tuple sequence for multidimensional indexing is deprecated and will be changed "
    "in pytorch 2.9; use x[tuple(seq)] instead of x[seq]. In pytorch 2.9 this will be "
    "interpreted as tensor index, x[torch.tensor(seq)], which will result either in an error or "
    "a different result"
)
_UINT8_WARNING = ("indexing with dtype torch.uint8 is now deprecated, please use a dtype "
                  "torch.bool instead.")
_OVERLAP_MSG = ("unsupported operation: more than one element of the written-to tensor refers to "
                "a single memory location. Please clone() the tensor before performing the "
                "operation.")
_MULTI_OUTPUT_VIEW = (
    "Output {nr} of {name} is a view and is being modified inplace. This view is the output of a "
    "function that returns multiple views. Such functions do not allow the output views to be "
    "modified inplace. You should replace the inplace operation by an out-of-place one."
)


class AliasBackward0(ShapeNode):
    __slots__ = ()

    def backward(self, grad: Tensor) -> tuple:
        return grad,


def alias(input: Tensor) -> Tensor:
    """A new view of all of ``input`` (grad_fn ``AliasBackward0``)."""
    return view_result(AliasBackward0, input, input._data.view())[0]


class Identity(AliasBackward0):
    """The grad_fn of the primal ``forward_ad.unpack_dual`` returns (torch's name for it)."""

    __slots__ = ()


def primal_view(input: Tensor) -> Tensor:
    """A view of all of ``input`` that does not carry its tangent (``unpack_dual``'s primal)."""
    from .._forward import FW

    active, FW.active = FW.active, False
    try:
        return view_result(Identity, input, input._data.view())[0]
    finally:
        FW.active = active


# -- taking an index apart (Note [How an index is applied]) ---------------------------

def _items(index: Any) -> tuple:
    """The index as a tuple of items, and whether it came as a tuple."""
    if isinstance(index, tuple):
        return index, True
    if isinstance(index, list) and _sequence_is_tuple(index):
        warnings.warn(_SEQUENCE_WARNING, UserWarning, stacklevel=4)
        return tuple(index), True
    return (index,), False


def _sequence_is_tuple(seq: list) -> bool:
    """torch's rule for a list index: it means a tuple if it holds any non-number."""
    if len(seq) >= 32:
        return False
    return any(is_tensor(x) or isinstance(x, (list, tuple, np.ndarray, slice)) or x is None
               or x is Ellipsis for x in seq)


def _as_index_array(item: Any) -> np.ndarray:
    """An integer or bool index array from a tensor, array or list (torch's dtype check)."""
    arr = item._data if is_tensor(item) else np.asarray(item)
    if isinstance(item, (list, tuple)) and arr.size == 0:
        arr = arr.astype(np.int64)
    kind = arr.dtype
    if kind == np.uint8:
        warnings.warn(_UINT8_WARNING, UserWarning, stacklevel=5)
        return arr.astype(bool)
    if kind == np.bool_ or kind == np.int64 or kind == np.int32:
        return arr
    if isinstance(item, (list, tuple)) and arr.dtype.kind == "i":
        return arr.astype(np.int64)
    raise IndexError("tensors used as indices must be long, int, byte or bool tensors")


def _is_int(item: Any) -> bool:
    if isinstance(item, (bool, np.bool_)):
        return False
    if isinstance(item, (int, np.integer)):
        return True
    return is_tensor(item) and item._data.ndim == 0 and item._data.dtype.kind in "iu" \
        and item._data.dtype != np.uint8


def _dims_used(item: Any) -> int:
    if item is None or item is Ellipsis or isinstance(item, (bool, np.bool_)):
        return 0
    if is_tensor(item) or isinstance(item, np.ndarray):
        data = item._data if is_tensor(item) else item
        if data.dtype == np.bool_ or data.dtype == np.uint8:
            return data.ndim
        return 1
    return 1


def _bad_item(item: Any) -> Exception:
    if isinstance(item, float):
        return IndexError("only integers, slices (`:`), ellipsis (`...`), None and long or byte "
                          "Variables are valid indices (got float)")
    return TypeError(f"new(): invalid data type '{type(item).__name__}'")


def _parse(input: Tensor, index: Any) -> tuple:
    """``(steps, advanced)``: the basic view steps in order, then (dim, array) advanced entries."""
    shape = list(input._data.shape)
    items, as_tuple = _items(index)
    if not shape and not as_tuple:
        if _is_int(index):
            raise IndexError("invalid index of a 0-dim tensor. Use `tensor.item()` in Python or "
                             "`tensor.item<T>()` in C++ to convert a 0-dim tensor to a number")
        if isinstance(index, slice):
            raise IndexError("slice() cannot be applied to a 0-dim tensor.")
    specified = 0
    for item in items:
        if isinstance(item, float):
            raise _bad_item(item)
        specified += _dims_used(item)
    if specified > len(shape):
        raise IndexError(f"too many indices for tensor of dimension {input._data.ndim}")
    steps: list = []
    advanced: list = []
    dim = 0
    seen_ellipsis = False
    for position, item in enumerate(items):
        if _is_int(item):
            i = int(item)
            n = shape[dim]
            if i < -n or i >= n:  # torch names the item's position in the index
                raise IndexError(f"index {i} is out of bounds for dimension {position} with "
                                 f"size {n}")
            steps.append(("select", dim, i))  # as given: torch keeps -1 as -1
            del shape[dim]
        elif isinstance(item, slice):
            start, stop, step = (None if v is None else int(v)
                                 for v in (item.start, item.stop, item.step))
            if step == 0:
                raise ValueError("slice step cannot be zero")
            if step is not None and step < 0:
                raise ValueError("step must be greater than zero")
            n = shape[dim]
            trivial = (start in (None, 0) and (stop is None or stop >= n) and step in (None, 1))
            if not (as_tuple and trivial):
                # the bounds as given (torch keeps them so); open ones as slice_dim keeps them
                steps.append(("slice", dim, start, stop, 1 if step is None else step))
                shape[dim] = len(range(*slice(start, stop, step).indices(n)))
            dim += 1
        elif item is None:
            steps.append(("unsqueeze", dim))
            shape.insert(dim, 1)
            dim += 1
        elif item is Ellipsis:
            if not seen_ellipsis:
                dim += len(input._data.shape) - specified
                seen_ellipsis = True
        elif isinstance(item, (bool, np.bool_)) or (is_tensor(item) and item._data.ndim == 0
                                                    and item._data.dtype == np.bool_):
            steps.append(("unsqueeze", dim))
            shape.insert(dim, 1)
            advanced.append((dim, np.arange(1 if bool(item) else 0)))
            dim += 1
        elif is_tensor(item) or isinstance(item, (list, tuple, np.ndarray)):
            arr = _as_index_array(item)
            advanced.append((dim, arr))
            dim += arr.ndim if arr.dtype == np.bool_ else 1
        else:
            raise _bad_item(item)
    # The advanced step runs after every basic one, so it is checked last.
    return steps, _check_advanced(shape, advanced)


def _check_advanced(shape: list, entries: list) -> list:
    """Masks become one integer array per dim; bounds are checked (torch's texts)."""
    advanced = []
    for dim, arr in entries:
        if arr.dtype != np.bool_:
            advanced.append((dim, arr))
            continue
        for j, s in enumerate(arr.shape):
            if s != shape[dim + j]:
                raise IndexError(
                    f"The shape of the mask {_shape_str(arr.shape)} at index {j} does not "
                    f"match the shape of the indexed tensor {_shape_str(shape)} at index "
                    f"{dim + j}")
        for j, nz in enumerate(np.nonzero(arr)):
            advanced.append((dim + j, nz))
    # torch names an out-of-range index by its position among the advanced indices
    for k, (d, arr) in enumerate(advanced):
        n = shape[d]
        if arr.size and (arr.min() < -n or arr.max() >= n):
            bad = int(arr[(arr < -n) | (arr >= n)].flat[0])
            raise IndexError(f"index {bad} is out of bounds for dimension {k} with size {n}")
    return advanced


def _apply_steps(input: Tensor, steps: list) -> Tensor:
    out = input
    for step in steps:
        kind = step[0]
        if kind == "select":
            out = _shape.select(out, step[1], step[2])
        elif kind == "slice":
            out = _shape.slice_dim(out, step[1], step[2], step[3], step[4])
        else:
            out = _shape.unsqueeze(out, step[1])
    return out


def _advanced_key(ndim: int, advanced: list) -> tuple:
    key: list = [slice(None)] * ndim
    for d, arr in advanced:
        key[d] = arr
    return tuple(key)


def getitem(input: Tensor, index: Any) -> Tensor:
    """``input[index]``: views for ints, slices, None and ``...``; a copy for tensor indices.

    >>> import npgrad
    >>> x = npgrad.arange(6.).view(2, 3).requires_grad_()
    >>> x[0, 1:]
    tensor([1., 2.], grad_fn=<SliceBackward0>)
    """
    steps, advanced = _parse(input, index)
    out = _apply_steps(input, steps)
    if advanced:
        key = _advanced_key(out._data.ndim, advanced)
        return _take(out, Region(key, accumulate=True), IndexBackward0)
    if out is input:
        return alias(input)
    return out


# -- assignment ------------------------------------------------------------------------

class IndexPutBackward0(ShapeNode):
    """``index_put_``: no gradient to ``self`` where values were overwritten (none are when
    accumulating: ``mask`` is then all ones)."""

    __slots__ = ("region", "mask", "accumulate")

    def backward(self, grad: Tensor) -> tuple:
        check_not_freed(self)  # Note [Saved values kept outside SavedTensor]
        from .pointwise import where

        g_self = None
        if self.next_functions[0][0] is not None:
            g_self = where(wrap(self.mask != 0, 0), grad, 0.0)  # +0. where overwritten
        g_values = None
        if self.next_functions[1][0] is not None:
            g_values = _take(grad, self.region, IndexBackward0)
        return g_self, g_values

    def jvp(self, tangents: list) -> list:
        """A write is linear in what it writes: the tangent is the same write of the tangents.

        Not derived from ``backward``: with a position written twice the last write
        wins, which torch's gradient (every write gets it) does not reflect.
        """
        t_self, t_values = tangents
        shape, dtype = self._out_meta[0]
        if t_self is None:
            t_self = wrap(np.zeros(shape, dtype=dtype), 0)
        if t_values is None:
            from .pointwise import where

            return [where(wrap(self.mask != 0, 0), t_self, 0.0)]
        return [_index_put(t_self, self.region.key, t_values, self.accumulate)]


def _index_put(input: Tensor, key: tuple, values: Tensor, accumulate: bool = False,
               check_dtype: bool = False) -> Tensor:
    """Out-of-place ``index_put``: a copy of ``input`` with ``values`` written (or added) at
    ``key``; ``check_dtype``: refuse, after the shape check as torch's ``x[idx] = v`` does, a
    tensor ``values`` of another dtype."""
    data = input._data
    out = data.copy()
    target_shape = data[key].shape
    vals = values._data
    try:
        np.broadcast_shapes(vals.shape, target_shape)
        if len(vals.shape) > len(target_shape):
            raise ValueError
    except ValueError:
        raise RuntimeError(f"shape mismatch: value tensor of shape {_shape_str(vals.shape)} "
                           "cannot be broadcast to indexing result of shape "
                           f"{_shape_str(target_shape)}") from None
    if check_dtype and vals.dtype != data.dtype:
        raise RuntimeError("Index put requires the source and destination dtypes match, got "
                           f"{_dtype_name(data)} for the destination and {_dtype_name(vals)} "
                           "for the source.")
    if accumulate:
        np.add.at(out, key, vals.astype(data.dtype, copy=False))
    else:
        out[key] = vals.astype(data.dtype, copy=False)
    res, node = record(IndexPutBackward0, (input, values), out)
    if node is not None:
        mask = np.ones(data.shape, dtype=data.dtype)
        if not accumulate:
            mask[key] = 0
        node.mask = mask
        node.region = Region(key, accumulate=True)
        node.accumulate = accumulate
    return res


@signature("index_put(Tensor input, c10::List<::std::optional<Tensor>> indices, Tensor values, "
           "bool accumulate=False, *, Tensor out=None)")
def index_put(input: Tensor, indices: Any, values: Tensor, accumulate: bool = False) -> Tensor:
    """A copy of ``input`` with ``values`` at ``input[indices]`` (added when ``accumulate``).

    ``indices`` is a tuple of index tensors, one per leading dim (bool masks
    cover as many dims as they have), as in ``input[indices] = values``.

    >>> import npgrad
    >>> npgrad.zeros(3).index_put((npgrad.tensor([0, 0]),), npgrad.tensor(1.), accumulate=True)
    tensor([2., 0., 0.])
    """
    data = input._data
    if values._data.dtype != data.dtype:
        raise RuntimeError("Index put requires the source and destination dtypes match, got "
                           f"{_dtype_name(data)} for the destination and "
                           f"{_dtype_name(values._data)} for the source.")
    entries, dim = [], 0
    for i, item in enumerate(indices):
        if not is_tensor(item):
            raise TypeError(f"expected Tensor as element {i} in argument 1, but got "
                            f"{type(item).__name__}")
        arr = _as_index_array(item)
        entries.append((dim, arr))
        dim += arr.ndim if arr.dtype == np.bool_ else 1
    if dim > data.ndim:
        raise IndexError(f"too many indices for tensor of dimension {data.ndim}")
    key = _advanced_key(data.ndim, _check_advanced(list(data.shape), entries))
    return _index_put(input, key, values, accumulate)


def index_put_(input: Tensor, indices: Any, values: Tensor, accumulate: bool = False) -> Tensor:
    from .inplace import apply_inplace

    return apply_inplace(input, index_put, indices, values, accumulate)


def _value_tensor(input: Tensor, value: Any) -> tuple:
    """The value as a tensor, and whether it was a Python number."""
    if is_tensor(value):
        return value, False
    if isinstance(value, (bool, int, float, np.generic)):
        return wrap(np.asarray(value).astype(input._data.dtype), 0), True
    name = type(value).__name__
    module = type(value).__module__
    if module not in ("builtins", None):
        name = f"{module}.{name}"
    legacy = "torch." + _dtype.from_np(input._data.dtype).legacy_type
    raise TypeError(f"can't assign a {name} to a {legacy}")


def _strip_leading_ones(value: Tensor) -> Tensor:
    shape = value._data.shape
    k = 0
    while k < len(shape) and shape[k] == 1:
        k += 1
    return _shape.view(value, shape[k:]) if k else value


def _check_view_of_view(input: Tensor, last: Tensor, value: Tensor) -> None:
    """torch's errors for writing through a new view of a no_grad or multi-output view."""
    if _tls.mode != RECORDING or not (input._requires_grad or value._requires_grad):
        return
    extra = input._extra
    info = extra.view_info if extra is not None else None
    if info is None or input._base is None:
        return
    fn = last._grad_fn
    name = fn.name() if fn is not None else "Alias"
    name = name[:name.rfind("Backward")] if "Backward" in name else name
    if info.created_in_no_grad:
        raise RuntimeError(view_of_view_message(last._output_nr, name, info.created_in_inference))
    if info.multi_output:
        if input._grad_fn is None:  # one of several views of a tensor without grad
            from .inplace import _check_multi_output_view_without_history

            _check_multi_output_view_without_history(input)
        raise RuntimeError(_MULTI_OUTPUT_VIEW.format(nr=last._output_nr, name=name))


def _check_no_overlap(data: np.ndarray) -> None:
    for size, stride in zip(data.shape, data.strides):
        if stride == 0 and size > 1:
            raise RuntimeError(_OVERLAP_MSG)


def setitem(input: Tensor, index: Any, value: Any) -> None:
    """``input[index] = value``: an in-place write, recorded as torch records it.

    >>> import npgrad
    >>> x = npgrad.zeros(3)
    >>> x[1:] = 2.
    >>> x
    tensor([0., 2., 2.])
    """
    from .inplace import copy_, fill_

    value, is_number = _value_tensor(input, value)
    steps, advanced = _parse(input, index)
    target = _apply_steps(input, steps)
    if steps:
        _check_view_of_view(input, target, value)
    _check_no_overlap(target._data)
    if value._data.ndim and value._data.shape[0] == 1:
        value = _strip_leading_ones(value)
    if advanced:
        from .inplace import apply_inplace

        key = _advanced_key(target._data.ndim, advanced)
        apply_inplace(target, _index_put, key, value, check_dtype=not is_number)
        return
    if is_number and target is input:
        fill_(input, value)
        return
    if value._data.shape != target._data.shape:
        value = _shape.expand(value, target._data.shape)
    copy_(target, value)


# -- nonzero -------------------------------------------------------------------------------

@signature("nonzero(Tensor input, *, bool as_tuple=False, Tensor out=None)")
def nonzero(input: Tensor, *, as_tuple: bool = False) -> Any:
    """Indices of the non-zero elements: an (n, ndim) int64 tensor, or one tensor per dim.

    >>> import npgrad
    >>> npgrad.nonzero(npgrad.tensor([0., 3., 5.]))
    tensor([[1],
            [2]])
    """
    data = input._data
    if as_tuple:  # torch unbinds the (n, ndim) result: the tensors are views of it
        flat = data.reshape(1) if data.ndim == 0 else data
        return _shape.unbind(wrap(np.argwhere(flat).astype(np.int64), _tls.mode), 1)
    return wrap(np.argwhere(data).astype(np.int64), _tls.mode)


# -- index-driven ops: masked_select, scatter, index_add/copy/fill, take, unfold ---------------
#
# Each reads or writes a Region (Note [Views and regions] in _ops.shape): the positions an
# index names.  Their backward rules are other ops of this family (scatter's gradient is a
# scatter of zeros and a gather, index_copy's an index_fill and an index_select ...), so
# gradients of any order follow.

def _dtype_name(arr: np.ndarray) -> str:
    return _dtype.from_np(arr.dtype).scalar_name


def _index_tensor(index: Any) -> Tensor:
    return index if is_tensor(index) else wrap(np.asarray(index), 0)


def _scatter_checks(data: np.ndarray, dim: int, index: Any, src: Any) -> None:
    """torch's scatter-family checks, in its order (Note [Checks before NumPy] in checks.py):
    the dim, the dtypes, then, unless the index is empty, ranks and sizes (a 0-dim tensor
    counts as one dimension of size 1); out-of-range index values come later."""
    nd = data.ndim
    wrap_dim(dim, nd)
    idx = _index_tensor(index)._data
    if idx.dtype != np.int64 and idx.dtype != np.int32:
        raise RuntimeError("scatter(): Expected dtype int32/int64 for index")
    src_data = src._data if is_tensor(src) else None
    if src_data is not None and src_data.dtype != data.dtype:
        raise RuntimeError("scatter(): Expected self.dtype to be equal to src.dtype")
    if idx.size == 0:
        return
    if max(idx.ndim, 1) != max(nd, 1):
        raise RuntimeError("Index tensor must have the same number of dimensions as self tensor")
    # torch compares the sizes with self's, then with src's (reading ``src.size(k)``, which
    # can raise), and only then checks src's rank before reporting a size that was too big
    d = dim + max(nd, 1) if dim < 0 else dim
    idx_shape = idx.shape or (1,)
    self_shape = data.shape or (1,)
    wrong = any(k != d and idx_shape[k] > self_shape[k] for k in range(len(idx_shape)))
    if not wrong and src_data is not None:
        for k in range(len(idx_shape)):
            if idx_shape[k] > (checks.size_at(src_data.shape, k) if src_data.ndim else 1):
                wrong = True
                break
    if src_data is not None and max(src_data.ndim, 1) != max(idx.ndim, 1):
        raise RuntimeError("Index tensor must have the same number of dimensions as src tensor")
    if wrong:
        src_part = "" if src_data is None else (
            f" and to be no larger size than src {_shape_str(src_data.shape)}")
        raise RuntimeError(f"Expected index {_shape_str(idx.shape)} to be no larger than self "
                           f"{_shape_str(data.shape)} apart from dimension {d}{src_part}")


def _scatter_operands(input: Tensor, index: Any, src: Any) -> tuple:
    """Index and src arrays as scatter reads them: a 0-dim one is one element of every dim."""
    index = _index_tensor(index)
    nd = input._data.ndim
    if index._data.size == 0 and index._data.ndim != max(nd, 1):  # torch skips its rank checks
        index = wrap(np.zeros((0,) * max(nd, 1), dtype=index._data.dtype), 0)
    if nd and index._data.ndim == 0:
        index = wrap(index._data.reshape((1,) * nd), 0)
    src_data = src._data if is_tensor(src) else None
    if nd and src_data is not None and src_data.ndim == 0:
        src_data = src_data.reshape((1,) * nd)
    return index, src_data


def _scatter_key(data: np.ndarray, dim: int, index: Any, src_shape: Any, name: str,
                 shown_src: Any = None) -> tuple:
    """The NumPy key of the positions a scatter/gather index names, with torch's checks.

    ``shown_src`` is the shape the error names (a 0-dim src is checked as ones).
    """
    idx = index._data
    nd = data.ndim
    if idx.dtype != np.int64 and idx.dtype != np.int32:
        raise RuntimeError(f"{name}(): Expected dtype int32/int64 for index")
    if idx.ndim != nd and not (max(idx.ndim, 1) == max(nd, 1)):
        raise RuntimeError("Index tensor must have the same number of dimensions as self tensor")
    d = wrap_dim(dim, nd)
    if nd == 0:
        idx = idx.reshape(())
    for k in range(nd):
        too_big = (k != d and idx.shape[k] > data.shape[k]) or (
            src_shape is not None and idx.shape[k] > src_shape[k])
        if too_big:
            src_part = "" if src_shape is None else (
                " and to be no larger size than src "
                f"{_shape_str(src_shape if shown_src is None else shown_src)}")
            raise RuntimeError(f"Expected index {_shape_str(idx.shape)} to be no larger than self "
                               f"{_shape_str(data.shape)} apart from dimension {d}{src_part}")
    n = data.shape[d] if nd else 1
    if idx.size and (idx.min() < 0 or idx.max() >= n):
        bad = int(idx[(idx < 0) | (idx >= n)].flat[0])
        raise RuntimeError(f"index {bad} is out of bounds for dimension {d} with size {n}")
    if nd == 0:
        return d, ()
    return d, tuple(idx if k == d else
                    np.arange(idx.shape[k]).reshape((-1,) + (1,) * (nd - k - 1))
                    for k in range(nd))


def _src_block(src: np.ndarray, index: Tensor) -> np.ndarray:
    """The leading block of ``src`` that the index covers (torch reads no more of it)."""
    if index._data.size == 0:  # nothing is read, whatever src's rank
        return np.empty(index._data.shape, dtype=src.dtype)
    return src[tuple(slice(0, s) for s in index._data.shape)] if src.ndim else src


class _ScatterNode(ShapeNode):
    __slots__ = ("dim", "index", "src_sizes")


class ScatterBackward0(_ScatterNode):
    """scatter(self, dim, index, src): overwritten positions pass no gradient to ``self``."""

    __slots__ = ()

    def backward(self, grad: Tensor) -> tuple:
        check_not_freed(self)  # Note [Saved values kept outside SavedTensor]
        g_self = g_src = None
        if self.next_functions[0][0] is not None:
            g_self = scatter(grad, self.dim, self.index, 0.0)
        if self.next_functions[1][0] is not None:
            g_src = _shape.fit_input_grad(self, 1, _shape.gather(grad, self.dim, self.index),
                                          self.src_sizes)
        return g_self, g_src

    def jvp(self, tangents: list) -> list:
        """torch's forward rule, ``self_t.scatter(dim, index, src_t)``: it reads only the
        leading block of a ``src`` larger than the index, which the backward rule refuses."""
        t_self, t_src = tangents
        shape, dtype = self._out_meta[0]
        if t_self is None:
            t_self = wrap(np.zeros(shape, dtype=dtype), 0)
        return [scatter(t_self, self.dim, self.index, 0.0 if t_src is None else t_src)]


class ScatterBackward1(_ScatterNode):
    __slots__ = ()

    def backward(self, grad: Tensor) -> tuple:
        check_not_freed(self)  # Note [Saved values kept outside SavedTensor]
        return scatter(grad, self.dim, self.index, 0.0),


@signature("scatter(Tensor input, int64_t dim, Tensor index, Tensor src, *, Tensor out=None)",
           "scatter(Tensor input, int64_t dim, Tensor index, Tensor src, *, "
           "c10::string_view reduce, Tensor out=None)",
           "scatter(Tensor input, int64_t dim, Tensor index, Scalar value, *, Tensor out=None)",
           "scatter(Tensor input, int64_t dim, Tensor index, Scalar value, *, "
           "c10::string_view reduce, Tensor out=None)")
def scatter(input: Tensor, dim: int, index: Tensor, src: Any = None, *, value: Any = None,
            reduce: Any = None) -> Tensor:
    """A copy of ``input`` with ``src`` (or a number) written where ``index`` points along ``dim``.

    >>> import npgrad
    >>> npgrad.zeros(3).scatter(0, npgrad.tensor([2]), 5.)
    tensor([0., 0., 5.])
    """
    if src is None:
        src = value
    data = input._data
    _scatter_checks(data, dim, index, src)
    index, src_data = _scatter_operands(input, index, src)
    if reduce is not None:
        return _scatter_reduce_legacy(input, dim, index, src, reduce)
    if is_tensor(src):
        if src_data.dtype != data.dtype:
            raise RuntimeError("scatter(): Expected self.dtype to be equal to src.dtype")
        d, key = _scatter_key(data, dim, index, src_data.shape, "scatter",
                              src._data.shape)
        out = data.copy()
        out[key] = _src_block(src_data, index)
        res, node = record(ScatterBackward0, (input, src), out)
        if node is not None:
            node.src_sizes = src._data.shape
    else:
        d, key = _scatter_key(data, dim, index, None, "scatter")
        out = data.copy()
        with np.errstate(all="ignore"):
            out[key] = np.asarray(src).astype(data.dtype)
        res, node = record(ScatterBackward1, (input,), out)
    if node is not None:
        node.dim, node.index = d, index
    return res


_SCATTER_REDUCE_WARNING = (
    "The reduce argument of torch.scatter with Tensor src is deprecated and will be removed in a "
    "future PyTorch release. Use torch.scatter_reduce instead for more reduction options.")


def _scatter_reduce_legacy(input: Tensor, dim: int, index: Tensor, src: Any, reduce: str) -> Tensor:
    """``scatter(..., reduce="add"|"multiply")``: torch gives it no derivative (backward raises)."""
    if reduce not in ("add", "multiply"):
        raise RuntimeError("reduce argument must be either add or multiply.")
    data = input._data
    ufunc = np.add if reduce == "add" else np.multiply
    out = data.copy()
    if is_tensor(src):
        warnings.warn(_SCATTER_REDUCE_WARNING, UserWarning, stacklevel=3)
        _, src_data = _scatter_operands(input, index, src)
        if src_data.dtype != data.dtype:
            raise RuntimeError("scatter(): Expected self.dtype to be equal to src.dtype")
        _, key = _scatter_key(data, dim, index, src_data.shape, "scatter",
                              src._data.shape)
        ufunc.at(out, key, _src_block(src_data, index))
        # torch's NotImplemented node has edges only to the inputs that require grad
        inputs: tuple = tuple(t for t in (input, src) if t._requires_grad) or (input,)
    else:
        _, key = _scatter_key(data, dim, index, None, "scatter")
        with np.errstate(all="ignore"):
            ufunc.at(out, key, np.asarray(src).astype(data.dtype))
        inputs = (input,)
    res, node = record(NotImplementedBackward, inputs, out)
    if node is not None:
        node.op = "scatter"
    return res


def scatter_(input: Tensor, dim: int, index: Tensor, src: Any = None, *, value: Any = None,
             reduce: Any = None) -> Tensor:
    from .inplace import apply_inplace

    return apply_inplace(input, scatter, dim, index, src, value=value, reduce=reduce)


def _record_add_into(cls: type, input: Tensor, src: Tensor, key: tuple, alpha: Any,
                     values: np.ndarray) -> Tensor:
    """``input`` plus ``values`` accumulated at ``key``, recorded as a two-input place node."""
    out = input._data.copy()
    np.add.at(out, key, values)
    res, node = record(cls, (input, src), out)
    if node is not None:
        node._setup(Region(key, accumulate=True), out.shape)
        node.alpha = alpha
        node.src_sizes = src._data.shape
    return res


@signature("scatter_add(Tensor input, int64_t dim, Tensor index, Tensor src, *, Tensor out=None)")
def scatter_add(input: Tensor, dim: int, index: Tensor, src: Tensor) -> Tensor:
    """A copy of ``input`` with ``src`` added where ``index`` points (repeats add up).

    >>> import npgrad
    >>> npgrad.zeros(3).scatter_add(0, npgrad.tensor([1, 1]), npgrad.ones(2))
    tensor([0., 2., 0.])
    """
    data = input._data
    _scatter_checks(data, dim, index, src)
    index, src_data = _scatter_operands(input, index, src)
    _, key = _scatter_key(data, dim, index, src_data.shape, "scatter_add",
                          src._data.shape)
    return _record_add_into(_shape.ScatterAddBackward0, input, src, key, 1,
                            _src_block(src_data, index))


def scatter_add_(input: Tensor, dim: int, index: Tensor, src: Tensor) -> Tensor:
    from .inplace import apply_inplace

    return apply_inplace(input, scatter_add, dim, index, src)


def _vector_index(index: Any, name: str, data: np.ndarray, dim: int) -> tuple:
    """``(dim, indices)`` of an index_* op: a vector of in-range int64/int32 positions."""
    idx = _index_tensor(index)._data
    d = wrap_dim(dim, data.ndim)
    if idx.ndim > 1:
        raise IndexError(f"{name}(): Index is supposed to be a vector, but got dim: {idx.ndim} "
                         f"with type: {_dtype.from_np(idx.dtype).legacy_type[:-6]} and size: "
                         f"{_shape_str(idx.shape)}")
    return d, idx.reshape(-1)


def _check_bounds(idx: np.ndarray, n: int, d: int, prefix: str = "", wrap_negative: bool = False,
                  error: type = RuntimeError) -> np.ndarray:
    low = -n if wrap_negative else 0
    if idx.size and (idx.min() < low or idx.max() >= n):
        bad = int(idx[(idx < low) | (idx >= n)][0])
        raise error(f"{prefix}index {bad} is out of bounds for dimension {d} with size {n}")
    return np.where(idx < 0, idx + n, idx) if wrap_negative else idx


def _dim_key(data: np.ndarray, d: int, idx: np.ndarray) -> tuple:
    return (slice(None),) * d + (idx,) if data.ndim else ()


@signature("index_add(Tensor input, int64_t dim, Tensor index, Tensor source, *, Scalar alpha=1, "
           "Tensor out=None)")
def index_add(input: Tensor, dim: int, index: Tensor, source: Tensor, *, alpha: Any = 1) -> Tensor:
    """A copy of ``input`` with ``alpha * source`` slices added at ``index`` along ``dim``.

    >>> import npgrad
    >>> npgrad.zeros(3, 1).index_add(0, npgrad.tensor([0, 0]), npgrad.ones(2, 1)).flatten()
    tensor([2., 0., 0.])
    """
    data, src = input._data, source._data
    d, idx = _vector_index(index, "index_add_", data, dim)
    if idx.dtype != np.int64 and idx.dtype != np.int32:
        raise RuntimeError("index_add_(): Expected dtype int32/int64 for index but got: "
                           f"{_dtype_name(idx)}")
    if src.dtype != data.dtype:
        raise RuntimeError(f"index_add_(): self ({_dtype_name(data)}) and source "
                           f"({_dtype_name(src)}) must have the same scalar type")
    n_src = src.shape[d] if src.ndim else 1
    if idx.size != n_src:
        raise RuntimeError(f"index_add_(): Number of indices ({idx.size}) should be equal to "
                           f"source.size(dim): ({n_src}), for dim: {d}")
    if src.ndim and (src.ndim != data.ndim or any(
            a != b for k, (a, b) in enumerate(zip(src.shape, data.shape)) if k != d)):
        raise RuntimeError("source tensor shape must match self tensor shape, excluding the "
                           f"specified dimension. Got self.shape = {_shape_str(data.shape)} "
                           f"source.shape = {_shape_str(src.shape)}")
    if src.ndim == 0 and data.ndim:
        raise RuntimeError("source tensor shape must match self tensor shape, excluding the "
                           f"specified dimension. Got self.shape = {_shape_str(data.shape)} "
                           "source.shape = []")
    _check_bounds(idx, data.shape[d] if data.ndim else 1, d)
    if data.dtype.kind in "iub":  # torch casts alpha to an integer self's dtype first
        alpha = int(alpha)
    values = src * alpha if alpha != 1 else src
    return _record_add_into(_shape.IndexAddBackward0, input, source, _dim_key(data, d, idx),
                            alpha, values.astype(data.dtype, copy=False))


def index_add_(input: Tensor, dim: int, index: Tensor, source: Tensor, *,
               alpha: Any = 1) -> Tensor:
    from .inplace import apply_inplace

    return apply_inplace(input, index_add, dim, index, source, alpha=alpha)


class _IndexDimNode(ShapeNode):
    __slots__ = ("dim", "index")


class IndexCopyBackward0(_IndexDimNode):
    __slots__ = ()

    def backward(self, grad: Tensor) -> tuple:
        check_not_freed(self)  # Note [Saved values kept outside SavedTensor]
        g_self = g_src = None
        if self.next_functions[0][0] is not None:
            g_self = index_fill(grad, self.dim, self.index, 0.0)
        if self.next_functions[1][0] is not None:
            g_src = _shape.index_select(grad, self.dim, self.index)
        return g_self, g_src


@signature("index_copy(Tensor input, int64_t dim, Tensor index, Tensor source, *, "
           "Tensor out=None)")
def index_copy(input: Tensor, dim: int, index: Tensor, source: Tensor) -> Tensor:
    """A copy of ``input`` whose slices at ``index`` along ``dim`` are ``source``'s.

    >>> import npgrad
    >>> npgrad.zeros(3).index_copy(0, npgrad.tensor([2]), npgrad.ones(1))
    tensor([0., 0., 1.])
    """
    data, src = input._data, source._data
    d, idx = _vector_index(index, "index_copy_", data, dim)
    if idx.dtype != np.int64:
        raise RuntimeError(f"index_copy_(): Expected a long tensor for index, but got "
                           f"{_dtype_name(idx)}")
    if src.dtype != data.dtype:
        raise RuntimeError("index_copy_(): self and source expected to have the same dtype, "
                           f"but got (self) {_dtype_name(data)} and (source) {_dtype_name(src)}")
    if src.ndim and data.ndim and src.ndim != data.ndim:
        raise IndexError("index_copy_(): When source and destination are not scalars, their "
                         f"dimensionality must match. Source dimensionality ({src.ndim}), "
                         f"destination dimensionality ({data.ndim})")
    n_src = src.shape[d] if src.ndim else 1
    if idx.size != n_src:
        raise IndexError(f"index_copy_(): Number of indices ({idx.size}) should be equal to "
                         f"source.size(dim) ({n_src})")
    if src.ndim:
        dst_slice = data.shape[:d] + data.shape[d + 1:]
        src_slice = src.shape[:d] + src.shape[d + 1:]
        for k, (a, b) in enumerate(zip(dst_slice, src_slice)):
            if a != b:
                raise RuntimeError(
                    f"index_copy_(): Source/destination tensor must have same slice shapes. "
                    f"Destination slice shape: {a} at dimension {k} and source slice shape: "
                    f"{b} at dimension {k}.")
    _check_bounds(idx, data.shape[d] if data.ndim else 1, d, "index_copy_(): ", error=IndexError)
    out = data.copy()
    out[_dim_key(data, d, idx)] = src.astype(data.dtype, copy=False)
    res, node = record(IndexCopyBackward0, (input, source), out)
    if node is not None:
        node.dim, node.index = d, wrap(idx, 0)
    return res


def index_copy_(input: Tensor, dim: int, index: Tensor, source: Tensor) -> Tensor:
    from .inplace import apply_inplace

    return apply_inplace(input, index_copy, dim, index, source)


class IndexFillBackward0(_IndexDimNode):
    __slots__ = ()

    def backward(self, grad: Tensor) -> tuple:
        check_not_freed(self)  # Note [Saved values kept outside SavedTensor]
        return index_fill(grad, self.dim, self.index, 0.0),


class IndexFillBackward1(_IndexDimNode):
    """index_fill with a 0-dim tensor value: each filled position once (torch uses unique)."""

    __slots__ = ()

    def backward(self, grad: Tensor) -> tuple:
        check_not_freed(self)  # Note [Saved values kept outside SavedTensor]
        g_self = g_value = None
        if self.next_functions[0][0] is not None:
            g_self = index_fill(grad, self.dim, self.index, 0.0)
        if self.next_functions[1][0] is not None:
            unique = wrap(np.unique(self.index._data), 0)
            g_value = _shape.index_select(grad, self.dim, unique).sum()
        return g_self, g_value


@signature("index_fill(Tensor input, int64_t dim, Tensor index, Tensor value)",
           "index_fill(Tensor input, int64_t dim, Tensor index, Scalar value)")
def index_fill(input: Tensor, dim: int, index: Tensor, value: Any) -> Tensor:
    """A copy of ``input`` with the slices at ``index`` along ``dim`` set to ``value``.

    >>> import npgrad
    >>> npgrad.zeros(3).index_fill(0, npgrad.tensor([-1]), 2.)
    tensor([0., 0., 2.])
    """
    data = input._data
    d, idx = _vector_index(index, "index_fill_", data, dim)
    if idx.dtype != np.int64:
        raise IndexError("index_fill_(): Expected dtype int64 for index.")
    if is_tensor(value) and value._data.ndim != 0:
        raise RuntimeError("index_fill_ only supports a 0-dimensional value tensor, but got "
                           f"tensor with {value._data.ndim} dimension(s).")
    raw = idx
    idx = _check_bounds(idx, data.shape[d] if data.ndim else 1, d, wrap_negative=True,
                        error=IndexError)
    out = data.copy()
    fill = value._data if is_tensor(value) else np.asarray(value)
    with np.errstate(all="ignore"):
        out[_dim_key(data, d, idx)] = fill.astype(data.dtype)
    if is_tensor(value):
        res, node = record(IndexFillBackward1, (input, value), out)
    else:
        res, node = record(IndexFillBackward0, (input,), out)
    if node is not None:
        # torch keeps the index as given: its gradient of ``value`` then refuses a negative
        # index (index_select's error), and npgrad's does too
        node.dim, node.index = d, wrap(raw, 0)
    return res


def index_fill_(input: Tensor, dim: int, index: Tensor, value: Any) -> Tensor:
    from .inplace import overwrite_inplace

    return overwrite_inplace(input, index_fill, dim, index, value)


class MaskedSelectBackward0(_shape._TakeNode):
    """The gradient goes back to the selected positions of the broadcast input, then is summed
    down to the input's own shape."""

    __slots__ = ("self_sizes",)

    def backward(self, grad: Tensor) -> tuple:
        check_not_freed(self)  # Note [Saved values kept outside SavedTensor]
        placed = _shape._place(grad, self.shape, self.region, self.inverse)
        return _shape._sum_to(placed, self.self_sizes),


@signature("masked_select(Tensor input, Tensor mask, *, Tensor out=None)")
def masked_select(input: Tensor, mask: Tensor) -> Tensor:
    """The elements where ``mask`` (broadcast with ``input``) is True, as a new 1-D tensor.

    >>> import npgrad
    >>> x = npgrad.tensor([1., 2., 3.])
    >>> x.masked_select(x > 1)
    tensor([2., 3.])
    """
    m = mask._data
    if m.dtype != np.bool_:
        raise RuntimeError("masked_select: expected BoolTensor for mask")
    data = input._data
    shape = broadcast_shapes(m.shape, data.shape) or (1,)  # a 0-dim pair selects from one
    key = np.nonzero(np.broadcast_to(m, shape))
    region = Region(key, accumulate=True)
    res = unary(MaskedSelectBackward0, input, np.broadcast_to(data, shape)[key].copy())
    node = node_of(res)
    if node is not None:
        node._setup(region, shape)
        node.self_sizes = data.shape
    return res


class TakeBackward0(_shape._TakeNode):
    __slots__ = ()
    holds_saved = True  # the index


MaskedSelectBackward0.inverse = TakeBackward0.inverse = _shape.IndexPutImplBackward0


@signature("take(Tensor input, Tensor index, *, Tensor out=None)")
def take(input: Tensor, index: Tensor) -> Tensor:
    """Elements of the flattened ``input`` at ``index`` (negative counts from the end).

    >>> import npgrad
    >>> npgrad.tensor([[1, 2], [3, 4]]).take(npgrad.tensor([0, -1]))
    tensor([1, 4])
    """
    data = input._data
    idx = _index_tensor(index)._data
    if idx.dtype != np.int64:
        raise RuntimeError(f"take(): Expected a long tensor for index, but got {_dtype_name(idx)}")
    n = data.size
    if idx.size and (idx.min() < -n or idx.max() >= n):
        bad = int(idx[(idx < -n) | (idx >= n)].flat[0])
        raise IndexError(f"out of range: tried to access index {bad} on a tensor of {n} "
                         "elements.")
    flat = np.where(idx < 0, idx + n, idx)
    key = np.unravel_index(flat, data.shape) if data.ndim else (np.zeros_like(flat),)
    if not data.ndim:
        input = _shape.reshape(input, (1,))
    return _shape._take_forward(TakeBackward0, input, Region(key, accumulate=True))


@signature("take_along_dim(Tensor input, Tensor indices, int64_t? dim=None, *, Tensor out=None)")
def take_along_dim(input: Tensor, indices: Tensor, dim: Any = None) -> Tensor:
    """``gather`` with ``input`` and ``indices`` broadcast against each other (but for ``dim``).

    >>> import npgrad
    >>> x = npgrad.tensor([[10., 30.], [40., 20.]])
    >>> npgrad.take_along_dim(x, x.argmax(1, keepdim=True), 1)
    tensor([[30.],
            [40.]])
    """
    idx = indices._data
    if idx.dtype.kind == "f":  # torch lets these through to gather's check
        raise RuntimeError("gather(): Expected dtype int32/int64 for index")
    if idx.dtype != np.int64:
        raise RuntimeError(f"torch.take_along_dim(): dtype of indices should be Long but got "
                           f"{_dtype_name(idx)}")
    if dim is None:
        return _shape.gather(_shape.view(input, -1), 0, _shape.view(indices, -1))
    data = input._data
    if data.ndim != idx.ndim:
        raise RuntimeError(f"torch.take_along_dim(): input and indices should have the same "
                           f"number of dimensions, but got {data.ndim} dimensions for input, and "
                           f"{idx.ndim} dimensions for indices")
    if data.ndim == 0:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    d = wrap_dim(dim, data.ndim)
    sizes = list(data.shape)
    if sizes:
        sizes[d] = idx.shape[d]
    shape = list(broadcast_shapes(tuple(sizes), idx.shape))
    idx_b = _shape.expand(indices, tuple(shape))
    if shape:
        shape[d] = data.shape[d]
    return _shape.gather(_shape.expand(input, tuple(shape)), d, idx_b)


class UnfoldBackward0(ShapeNode):
    __slots__ = ("self_sizes", "dim", "size", "step")

    def backward(self, grad: Tensor) -> tuple:
        return _unfold_backward(grad, self.self_sizes, self.dim, self.size, self.step),


class UnfoldBackwardBackward0(ShapeNode):
    __slots__ = ("dim", "size", "step")

    def backward(self, grad: Tensor) -> tuple:
        return _shape.clone(unfold(grad, self.dim, self.size, self.step)),


def _unfold_backward(grad: Tensor, sizes: tuple, dim: int, size: int, step: int) -> Tensor:
    """Each window's gradient added back at the positions it covers (windows may overlap)."""
    g = grad._data
    out = np.zeros(sizes, dtype=g.dtype)
    if out.ndim:
        moved = np.moveaxis(out, dim, -1)  # a view: windows along the last dim
        gm = np.moveaxis(g, dim, -2)
        for i in range(gm.shape[-2]):
            moved[..., i * step:i * step + size] += gm[..., i, :]
    else:
        out[()] = g.sum()
    res = unary(UnfoldBackwardBackward0, grad, out)
    node = node_of(res)
    if node is not None:
        node.dim, node.size, node.step = dim, size, step
    return res


def unfold(input: Tensor, dimension: int, size: int, step: int) -> Tensor:
    """All windows of ``size`` along ``dimension``, ``step`` apart, as a new last dim (a view).

    >>> import npgrad
    >>> npgrad.arange(5).unfold(0, 2, 2)
    tensor([[0, 1],
            [2, 3]])
    """
    data = input._data
    d = wrap_dim(dimension, data.ndim)
    n = data.shape[d] if data.ndim else 1
    if size < 0:
        raise RuntimeError(f"size is {size} but must be >= 0")
    if size > n:
        raise RuntimeError(f"maximum size for tensor at dimension {d} is {n} but size is {size}")
    if step <= 0:
        raise RuntimeError(f"step is {step} but must be > 0")
    count = (n - size) // step + 1
    if data.ndim:
        shape = data.shape[:d] + (count,) + data.shape[d + 1:] + (size,)
        strides = (data.strides[:d] + (data.strides[d] * step,) + data.strides[d + 1:]
                   + (data.strides[d],))
    else:
        shape, strides = (size,), (0,)
    out = np.lib.stride_tricks.as_strided(data, shape, strides, writeable=data.flags.writeable)
    res, node = view_result(UnfoldBackward0, input, out)
    if node is not None:
        node.self_sizes, node.dim, node.size, node.step = data.shape, d, size, step
    return res


@signature("one_hot(Tensor input, int64_t num_classes=-1)")
def one_hot(tensor: Tensor, num_classes: int = -1) -> Tensor:
    """int64 classes to int64 one-hot rows along a new last dim (``num_classes=-1``: max + 1).

    >>> import npgrad
    >>> npgrad.nn.functional.one_hot(npgrad.tensor([0, 2]))
    tensor([[1, 0, 0],
            [0, 0, 1]])
    """
    data = tensor._data
    if data.dtype != np.int64:
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    if data.size == 0:
        if num_classes <= 0:
            raise RuntimeError("Can not infer total number of classes from empty tensor.")
        return wrap(np.zeros(data.shape + (num_classes,), dtype=np.int64), _tls.mode)
    if data.min() < 0:
        raise RuntimeError("Class values must be non-negative.")
    if num_classes == -1:
        num_classes = int(data.max()) + 1
    elif data.max() >= num_classes:
        raise RuntimeError("Class values must be smaller than num_classes.")
    return wrap((data[..., None] == np.arange(num_classes)).astype(np.int64), _tls.mode)


class MaskedScatterBackward0(ShapeNode):
    __slots__ = ("mask", "self_sizes", "source_sizes")

    def backward(self, grad: Tensor) -> tuple:
        check_not_freed(self)  # Note [Saved values kept outside SavedTensor]
        from .pointwise import masked_fill

        mask = wrap(self.mask, 0)
        g_self = g_source = None
        if self.next_functions[0][0] is not None:
            g_self = _shape._sum_to(masked_fill(grad, mask, 0.0), self.self_sizes)
        if self.next_functions[1][0] is not None:
            taken = masked_select(grad, mask)
            rest = int(np.prod(self.source_sizes)) - taken._data.size
            if rest:  # source elements past the mask's count were never read
                taken = _shape.cat([taken, wrap(np.zeros(rest, dtype=grad._data.dtype), 0)])
            g_source = _shape.reshape(taken, self.source_sizes)
        return g_self, g_source


@signature("masked_scatter(Tensor input, Tensor mask, Tensor source, *, Tensor out=None)")
def masked_scatter(input: Tensor, mask: Tensor, source: Tensor) -> Tensor:
    """A copy of ``input`` with ``source``'s elements, in order, where ``mask`` is True.

    >>> import npgrad
    >>> npgrad.zeros(3).masked_scatter(npgrad.tensor([True, False, True]), npgrad.tensor([1., 2.]))
    tensor([1., 0., 2.])
    """
    m, data, src = mask._data, input._data, source._data
    if m.dtype != np.bool_:
        raise RuntimeError("masked_scatter_ only supports boolean masks, but got mask with dtype "
                           f"{_dtype_name(m)}")
    if src.dtype != data.dtype:
        raise RuntimeError("masked_scatter: expected self and source to have same dtypes but got"
                           f"{_dtype_name(data)} and {_dtype_name(src)}")
    shape = broadcast_shapes(data.shape, m.shape)
    m_b = np.broadcast_to(m, shape)
    count = int(m_b.sum())
    if src.size < count:
        raise RuntimeError("Number of elements of source < number of ones in mask")
    out = np.array(np.broadcast_to(data, shape))
    out[m_b] = src.reshape(-1)[:count]
    res, node = record(MaskedScatterBackward0, (input, source), out)
    if node is not None:
        node.mask = np.array(m_b)
        node.self_sizes, node.source_sizes = data.shape, src.shape
    return res


def masked_scatter_(input: Tensor, mask: Tensor, source: Tensor) -> Tensor:
    from .inplace import apply_inplace

    return apply_inplace(input, masked_scatter, mask, source)


# -- scatter_reduce ----------------------------------------------------------------------------

_REDUCE_UFUNCS = {"sum": np.add, "mean": np.add, "prod": np.multiply, "amax": np.maximum,
                  "amin": np.minimum}


def _reduce_identity(reduce: str, dt: np.dtype) -> Any:
    """What a position holds before the first value is reduced into it (include_self=False)."""
    if reduce in ("sum", "mean"):
        return 0
    if reduce == "prod":
        return 1
    if dt.kind == "f":
        return -np.inf if reduce == "amax" else np.inf
    info = np.iinfo(dt) if dt.kind in "iu" else None
    if info is None:  # bool
        return reduce == "amin"
    return info.min if reduce == "amax" else info.max


class ScatterReduceBackward0(ShapeNode):
    """Gradients of torch's ``scatter_reduce_backward``: ties share amax/amin's gradient evenly,
    prod divides out each factor (with zeros handled apart)."""

    __slots__ = ("dim", "index", "reduce", "include_self", "self_", "src", "result")
    _saved_fields = ("self_", "src", "result")

    def backward(self, grad: Tensor) -> tuple:
        from ._core import saved
        from .pointwise import bitwise_and, masked_fill, where

        dim, index, reduce = self.dim, self.index, self.reduce
        x, src, result = saved(self, "self_"), saved(self, "src"), saved(self, "result")
        gather = _shape.gather
        src = src if src._data.ndim or not x._data.ndim else _shape.reshape(
            src, (1,) * x._data.ndim)
        if reduce == "sum":
            g_self, g_src = grad, gather(grad, dim, index)
        elif reduce == "mean":
            count = np.full(x._data.shape, 1 if self.include_self else 0, dtype=grad._data.dtype)
            np.add.at(count, _scatter_key(x._data, dim, index, None, "scatter_reduce")[1], 1)
            count[count == 0] = 1
            n = wrap(count, 0)
            g_self = grad / n
            g_src = gather(grad, dim, index) / gather(n, dim, index)
        elif reduce == "prod":
            masked_self = masked_fill(x, x == 0, 1.0)
            masked_self_result = scatter_reduce(masked_self, dim, index, src, reduce,
                                                include_self=self.include_self)
            g_self = grad * masked_self_result / masked_self
            src_zero = src == 0
            zeros = wrap(np.zeros_like(x._data), 0)
            src_num_zeros = gather(scatter_add(zeros, dim, index, src_zero.to(x.dtype)), dim,
                                   index)
            src_single_zero = bitwise_and(src_zero, src_num_zeros == 1)
            masked_src = masked_fill(src, src_single_zero, 1.0)
            masked_src_result = scatter_reduce(x, dim, index, masked_src, reduce,
                                               include_self=self.include_self)
            g_src = where(src_single_zero, gather(grad * masked_src_result, dim, index),
                          gather(grad * result, dim, index) / masked_fill(src, src_zero, 1.0))
        else:  # amax / amin: every position holding the extreme value shares its gradient
            value = gather(result, dim, index)
            self_is_result = x == result
            src_is_result = src == value
            n_to_distribute = scatter_add(self_is_result.to(x.dtype), dim, index,
                                          src_is_result.to(x.dtype))
            distributed = grad / n_to_distribute
            g_self = self_is_result * distributed
            g_src = src_is_result * gather(distributed, dim, index)
        if not self.include_self:
            g_self = scatter(g_self, dim, index, 0.0)
        return (g_self if self.next_functions[0][0] is not None else None,
                g_src if self.next_functions[1][0] is not None else None)


@signature("scatter_reduce(Tensor input, int64_t dim, Tensor index, Tensor src, "
           "c10::string_view reduce, *, bool include_self=True, Tensor out=None)")
def scatter_reduce(input: Tensor, dim: int, index: Tensor, src: Tensor, reduce: str, *,
                   include_self: bool = True) -> Tensor:
    """Reduce ``src`` into a copy of ``input`` where ``index`` points: sum, prod, mean, amax, amin.

    With ``include_self=False`` the positions written to forget ``input``'s values.

    >>> import npgrad
    >>> x = npgrad.tensor([1., 5.])
    >>> x.scatter_reduce(0, npgrad.tensor([0, 0, 1]), npgrad.tensor([4., 2., 3.]), "amax")
    tensor([4., 5.])
    """
    data = input._data
    _scatter_checks(data, dim, index, src)
    if reduce not in _REDUCE_UFUNCS:
        raise RuntimeError("reduce argument must be either sum, prod, mean, amax or amin, got "
                           f"{reduce}")
    if reduce == "mean":
        checks.not_implemented_for("scatter_gather_tensor_cpu_reduce_mean", data.dtype, "b")
    index, src_data = _scatter_operands(input, index, src)
    d, key = _scatter_key(data, dim, index, src_data.shape, "scatter_reduce", src._data.shape)
    values = _src_block(src_data, index)
    out = data.copy()
    if not include_self:
        out[key] = _reduce_identity(reduce, data.dtype)
    _REDUCE_UFUNCS[reduce].at(out, key, values)
    if reduce == "mean":
        count = np.full(data.shape, 1 if include_self else 0, dtype=np.int64)
        np.add.at(count, key, 1)
        count = np.maximum(count, 1)
        if data.dtype.kind == "f":
            out = (out / count).astype(data.dtype)
        else:
            out = np.floor_divide(out, count).astype(data.dtype)
    res, node = record(ScatterReduceBackward0, (input, src), out)
    if node is not None:
        node.dim, node.index, node.reduce, node.include_self = d, index, reduce, include_self
        node.self_, node.src = save_value(input), save_value(src)
        node.result = SavedTensor(res, True)
    return res


def scatter_reduce_(input: Tensor, dim: int, index: Tensor, src: Tensor, reduce: str, *,
                    include_self: bool = True) -> Tensor:
    from .inplace import apply_inplace

    return apply_inplace(input, scatter_reduce, dim, index, src, reduce,
                         include_self=include_self)
