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
from typing import Any

import numpy as np

from .. import _dtype
from .._mode import _tls, RECORDING
from .._tensor import Tensor, wrap
from . import shape as _shape
from ._core import is_tensor, record, view_result
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
_NO_GRAD_VIEW_OF_VIEW = (
    "Output {nr} of {name} is a view of a view which was created in no_grad mode and is being "
    "modified inplace with grad mode enabled. Given that this use case is ambiguous and "
    "error-prone, it is forbidden. You can clarify your code by moving both the view and the "
    "inplace either both inside the no_grad block (if you don't want the inplace to be tracked) "
    "or both outside (if you want the inplace to be tracked)."
)
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
            steps.append(("select", dim, i + n if i < 0 else i))
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
                start_, stop_, step_ = slice(start, stop, step).indices(n)
                steps.append(("slice", dim, start_, stop_, step_))
                shape[dim] = len(range(start_, stop_, step_))
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
    """``index_put_`` without accumulation: no gradient where values were overwritten."""

    __slots__ = ("region", "mask")

    def backward(self, grad: Tensor) -> tuple:
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
        return [_index_put(t_self, self.region.key, t_values)]


def _index_put(input: Tensor, key: tuple, values: Tensor) -> Tensor:
    """Out-of-place ``index_put``: a copy of ``input`` with ``values`` written at ``key``."""
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
    out[key] = vals.astype(data.dtype, copy=False)
    res, node = record(IndexPutBackward0, (input, values), out)
    if node is not None:
        mask = np.ones(data.shape, dtype=data.dtype)
        mask[key] = 0
        node.mask = mask
        node.region = Region(key, accumulate=True)
    return res


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
        raise RuntimeError(_NO_GRAD_VIEW_OF_VIEW.format(nr=last._output_nr, name=name))
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
        apply_inplace(target, _index_put, key, value)
        return
    if is_number and target is input:
        fill_(input, value)
        return
    if value._data.shape != target._data.shape:
        value = _shape.expand(value, target._data.shape)
    copy_(target, value)


# -- nonzero -------------------------------------------------------------------------------

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
