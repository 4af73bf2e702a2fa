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

import math
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
from .checks import check_scalar_fits
from ._core import is_tensor, record_not_implemented, view_of_view_message
from ._shape_util import broadcast_shapes, wrap_dim
from .registry import General, View
from .shape import _shape_str

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


ALIAS = View("alias(Tensor input)", grad_fn="AliasBackward0", forward=np.ndarray.view,
             derivative=lambda grad: grad)
AliasBackward0 = ALIAS.node


def alias(input: Tensor) -> Tensor:
    """A new view of all of ``input`` (grad_fn ``AliasBackward0``)."""
    return ALIAS(input)  # type: ignore[no-any-return]


# torch gives the primal ``forward_ad.unpack_dual`` returns a node of its own, ``Identity``
# (a C++ node, which Python shows as ``CppFunction``): a view of all of the dual tensor that
# does not carry its tangent.  ``primal_view`` runs the entry with no dual level active, so no
# tangent is given to the view.
# The class is named as Python sees it (the registry's key), ``name()`` as torch's C++ does.
PRIMAL = View("_unpack_dual(Tensor dual)", grad_fn="CppFunction", forward=np.ndarray.view,
              derivative=lambda grad: grad)
Identity = PRIMAL.node
Identity.name = lambda self: "torch::autograd::Identity"  # type: ignore[method-assign]


def primal_view(input: Tensor) -> Tensor:
    """A view of all of ``input`` that does not carry its tangent (``unpack_dual``'s primal)."""
    from .._forward import FW

    active, FW.active = FW.active, False
    try:
        return PRIMAL(input)  # type: ignore[no-any-return]
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


def _parse(input: Tensor, index: Any, bounds: bool = True) -> tuple:
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
    return steps, advanced, _check_advanced(shape, advanced, bounds)


def _check_advanced(shape: list, entries: list, bounds: bool = True) -> list:
    """Masks become one integer array per dim; bounds are checked (torch's texts) unless a
    write checks them after the values' shape, as torch's does (``bounds=False``)."""
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
    if bounds:
        _check_advanced_bounds(shape, advanced)
    return advanced


def _check_advanced_bounds(shape: Any, advanced: list) -> None:
    # torch names an out-of-range index by its position among the advanced indices
    for k, (d, arr) in enumerate(advanced):
        n = shape[d]
        if arr.size and (arr.min() < -n or arr.max() >= n):
            if n == 0:  # torch's text for a dim of size 0 names neither index nor dim
                raise IndexError("index is out of bounds for dimension with size 0")
            bad = int(arr[(arr < -n) | (arr >= n)].flat[0])
            raise IndexError(f"index {bad} is out of bounds for dimension {k} with size {n}")


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


def _torch_indices(entries: list) -> tuple:
    """torch's ``indices`` of an advanced index, as its nodes save them: a tensor or None
    per indexed dim, a mask standing for as many dims as it has (``_saved_indices``)."""
    indices: list = []
    dim = 0
    for d, arr in entries:
        while dim < d:
            indices.append(None)
            dim += 1
        indices.append(wrap(arr, 0))
        dim += arr.ndim if arr.dtype == np.bool_ else 1
    return tuple(indices)


# Note [Advanced indexing as entries]
# ``x[idx]`` is torch's ``index`` (IndexBackward0), ``x[idx] = v`` its ``index_put_``
# (IndexPutBackward0), and the gradient of ``index`` an ``_index_put_impl_`` that
# accumulates into zeros (IndexPutImplBackward0): three ``General`` entries, each saving
# torch's ``indices`` (Note [A saved list of tensors] in _ops/registry.py) and keeping,
# hidden, the NumPy key computed from them once, in the forward.  Their rules are each
# other, as derivatives.yaml writes them: index's gradient puts into zeros, a put's
# gradient of ``values`` is an index of the gradient, and of ``self`` (unless it
# accumulates) the gradient with zeros put where ``values`` were written.  The tangent of
# a put is the same put of the tangents (a position written twice takes the last write,
# which its gradient, reaching every write, does not show).


def _index(input: Tensor, indices: tuple, key: tuple) -> Tensor:
    """torch's ``index``: ``input`` read at ``key``, the NumPy key of ``indices``."""
    return INDEX.record((input,), input._data[key], (indices, key))  # type: ignore[no-any-return]


def _put_into_zeros(grad: Tensor, indices: tuple, key: tuple, sizes: tuple) -> Tensor:
    """torch's index_backward: ``grad`` added at ``key`` into zeros of ``sizes``."""
    zeros = wrap(np.zeros(sizes, dtype=grad._data.dtype), 0)
    return _index_put(zeros, indices, key, grad, True, entry=INDEX_PUT_IMPL)


def _put_zeros(grad: Tensor, indices: tuple, key: tuple) -> Tensor:
    """``grad`` with zeros where a put (not accumulating) wrote: its gradient of ``self``."""
    zero = wrap(np.zeros((), dtype=grad._data.dtype), 0)
    return _index_put(grad, indices, key, zero, False)


INDEX = General(
    "index(Tensor input, c10::List<::std::optional<Tensor>> indices)", grad_fn="IndexBackward0",
    forward=None, params=("indices", "key"), keeps=("self_sym_sizes", "key"), hidden=("key",),
    saves=("indices",),
    derivatives={"self": lambda grad, indices, key, self_sym_sizes:
                 _put_into_zeros(grad, indices, key, self_sym_sizes)},
    tangent=lambda self_t, indices, key: _index(self_t, indices, key))


def _index_put_entry(name: str, grad_fn: str) -> General:
    return General(
        f"{name}(Tensor input, c10::List<::std::optional<Tensor>> indices, Tensor values, "
        "bool accumulate=False)", grad_fn=grad_fn, forward=None, inputs=("self", "values"),
        params=("indices", "key", "accumulate"), keeps=("accumulate", "key"), hidden=("key",),
        saves=("indices",),
        derivatives={"self": lambda grad, indices, key, accumulate:
                     grad if accumulate else _put_zeros(grad, indices, key),
                     "values": lambda grad, indices, key: _index(grad, indices, key)},
        tangent=lambda self_t, values_t, indices, key, accumulate: _index_put(
            self_t, indices, key, values_t, accumulate))


INDEX_PUT = _index_put_entry("index_put", "IndexPutBackward0")
INDEX_PUT_IMPL = _index_put_entry("_index_put_impl", "IndexPutImplBackward0")
IndexBackward0 = INDEX.node
IndexPutBackward0 = INDEX_PUT.node
IndexPutImplBackward0 = INDEX_PUT_IMPL.node


def getitem(input: Tensor, index: Any) -> Tensor:
    """``input[index]``: views for ints, slices, None and ``...``; a copy for tensor indices.

    >>> import npgrad
    >>> x = npgrad.arange(6.).view(2, 3).requires_grad_()
    >>> x[0, 1:]
    tensor([1., 2.], grad_fn=<SliceBackward0>)
    """
    steps, entries, advanced = _parse(input, index)
    out = _apply_steps(input, steps)
    if advanced:
        return _index(out, _torch_indices(entries), _advanced_key(out._data.ndim, advanced))
    if out is input:
        return alias(input)
    return out


# -- assignment ------------------------------------------------------------------------

def _index_put(input: Tensor, indices: tuple, key: tuple, values: Tensor,
               accumulate: bool = False, check_dtype: bool = False,
               entry: General | None = None, check_bounds: bool = False) -> Tensor:
    """Out-of-place ``index_put``: a copy of ``input`` with ``values`` written (or added) at
    ``key``, the NumPy key of torch's ``indices``; ``check_dtype``: refuse, after the shape
    check as torch's ``x[idx] = v`` does, a tensor ``values`` of another dtype; ``entry``:
    INDEX_PUT_IMPL for the backward of ``index`` (Note [Advanced indexing as entries]);
    ``check_bounds``: check the indices' bounds here, after the shape (torch's order)."""
    data = input._data
    if check_bounds:
        arrays = [(d, a) for d, a in enumerate(key) if isinstance(a, np.ndarray)]
        # the indexed shape without reading the indices: in-range stand-ins, no data
        shape_key = tuple(np.zeros(a.shape, np.intp) if isinstance(a, np.ndarray) else a
                          for a in key)
        try:
            target_shape = np.broadcast_to(np.zeros((), np.int8), data.shape)[shape_key].shape
        except IndexError:  # a dim of size 0 takes no stand-in: any index is out of range
            _check_advanced_bounds(data.shape, arrays)
            raise
    else:
        target_shape = data[key].shape
    vals = values._data
    try:  # the values must broadcast *to* the indexed shape, not merely with it
        if np.broadcast_shapes(vals.shape, target_shape) != target_shape \
                or len(vals.shape) > len(target_shape):
            raise ValueError
    except ValueError:
        raise RuntimeError(f"shape mismatch: value tensor of shape {_shape_str(vals.shape)} "
                           "cannot be broadcast to indexing result of shape "
                           f"{_shape_str(target_shape)}") from None
    if check_dtype and vals.dtype != data.dtype:
        raise RuntimeError("Index put requires the source and destination dtypes match, got "
                           f"{_dtype_name(data)} for the destination and {_dtype_name(vals)} "
                           "for the source.")
    if check_bounds:
        _check_advanced_bounds(data.shape, arrays)
    out = data.copy()
    if accumulate:
        np.add.at(out, key, vals.astype(data.dtype, copy=False))
    else:
        out[key] = vals.astype(data.dtype, copy=False)
    return (INDEX_PUT if entry is None else entry).record(  # type: ignore[no-any-return]
        (input, values), out, (indices, key, accumulate))


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
    key = _advanced_key(data.ndim, _check_advanced(list(data.shape), entries, False))
    return _index_put(input, _torch_indices(entries), key, values, accumulate,
                      check_bounds=True)


def index_put_(input: Tensor, indices: Any, values: Tensor, accumulate: bool = False) -> Tensor:
    from .inplace import apply_inplace

    return apply_inplace(input, index_put, indices, values, accumulate)


def _value_tensor(input: Tensor, value: Any) -> tuple:
    """The value as a tensor, and whether it was a Python number."""
    if is_tensor(value):
        return value, False
    if isinstance(value, np.integer):  # torch reads NumPy integers through __index__
        value = int(value)
    if isinstance(value, (int, float, complex)):  # np.float64 / np.complex128 are these
        dt = input._data.dtype
        number = np.asarray(_number_for(value, dt))
        if dt.char == "e" or dt.kind == "V":  # half and bfloat16 take a too-large number as inf
            with np.errstate(over="ignore"):
                return wrap(number.astype(dt), 0), True
        return wrap(number.astype(dt), 0), True
    name = type(value).__name__
    module = type(value).__module__
    if module not in ("builtins", None):
        name = f"{module}.{name}"
    legacy = "torch." + _dtype.from_np(input._data.dtype).legacy_type
    raise TypeError(f"can't assign a {name} to a {legacy}")


# Note [A number written into a tensor]
# ``t[i] = number`` converts the number the way torch's setitem does, before anything is
# written: a Python int must fit a C long long first (ValueError otherwise, whatever the
# dtype); a bool tensor takes any number's truth; a complex number with an imaginary part
# fits only a complex tensor, and one without is its real part; then an integer tensor
# refuses a number outside its range, inf and NaN, and float32 / complex64 a finite number
# beyond their range (half and bfloat16 go through double and round it to inf).  NumPy's
# cast would wrap 300 into an int8 as 44 without a word.
_LONG_LONG = 2 ** 63
_F32_MAX = float(np.finfo(np.float32).max)


def _number_for(value: Any, dt: np.dtype) -> Any:
    """``value`` as torch's setitem converts it for a tensor of ``dt``, or torch's error."""
    if type(value) is not bool and isinstance(value, int) and \
            not -_LONG_LONG <= value < _LONG_LONG:
        raise ValueError("Overflow when unpacking long long")
    if dt.kind == "b":
        return bool(value)
    if dt.kind == "c":
        parts = (value.real, value.imag) if isinstance(value, complex) else (value,)
        if dt == np.complex64 and any(math.isfinite(p) and abs(p) > _F32_MAX for p in parts):
            raise checks.overflow_error("c10::complex<float>")
        return value
    if isinstance(value, complex):
        if value.imag != 0:  # (``dt.name`` is slow: read it only on the way to an error)
            raise checks.overflow_error(checks.C_NAMES.get(dt.name, "double")
                                        if dt.char != "e" else "double")
        value = value.real
    if dt.kind in "iu" or dt.char == "f":
        checks.check_scalar_fits(value, dt)
    return value


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
    if data.size == 0:  # no element to share a location (NumPy may give an empty dim stride 0)
        return
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
    steps, entries, advanced = _parse(input, index, bounds=False)
    target = _apply_steps(input, steps)
    if steps:
        _check_view_of_view(input, target, value)
    _check_no_overlap(target._data)
    if value._data.ndim and value._data.shape[0] == 1:
        value = _strip_leading_ones(value)
    if advanced:
        from .inplace import apply_inplace

        key = _advanced_key(target._data.ndim, advanced)
        apply_inplace(target, _index_put, _torch_indices(entries), key, value,
                      check_dtype=not is_number, check_bounds=True)
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


# Note [Index ops as entries]
# gather, scatter (both overloads), scatter_add, index_select and index_add are ``General``
# entries (Note [The general entry kind] in _ops/registry.py).  The index is a tensor
# argument with no edge: the entry saves it as torch does (``grad_fn._saved_index``, a
# saved tensor, version-checked and freed after backward), so a second backward through
# any of them raises torch's error.  Each rule is another op of the family, as in torch's
# derivatives.yaml: gather's gradient is a scatter_add into zeros (ScatterAddBackward0 over
# no ``self`` edge, as torch's graph shows), index_select's an index_add, scatter's a
# scatter of zeros and a gather; so gradients of any order follow, and each forward rule
# is the op itself applied to the tangents.
#
# A scatter-like op reads only the leading block of a ``src`` larger than its index, yet
# torch's backward returns a gradient of the index's shape, which its engine then rejects
# (``fit_input_grad``).  The rule needs ``src``'s shape for that check, which torch's node
# does not expose: the entry keeps it ``hidden`` (Note [Kept values read as torch's]).


def _zeros(shape: tuple, dtype: np.dtype) -> Tensor:
    return wrap(np.zeros(shape, dtype=dtype), 0)


def fit_input_grad(grad_fn: str, i: int, grad: Tensor, shape: tuple) -> Tensor:
    """torch's check of a gradient against its input's shape, which must broadcast to it
    (Note [Index ops as entries])."""
    got = grad._data.shape
    fits = len(shape) <= len(got) and all(
        s == g or s == 1 for s, g in zip(reversed(shape), reversed(got)))
    if not fits:
        raise RuntimeError(f"Function {grad_fn} returned an invalid gradient at index {i} - "
                           f"got {_shape_str(got)} but expected shape compatible with "
                           f"{_shape_str(shape)}")
    return grad


def _gather_backward(grad: Tensor, self: Tensor, dim: int, index: Tensor) -> Tensor:
    """torch's gather_backward: the gradient added into zeros where ``index`` read."""
    return scatter_add(_zeros(self._data.shape, grad._data.dtype), dim, index, grad)


GATHER = General(
    "gather(Tensor input, int64_t dim, Tensor index, *, bool sparse_grad=False, "
    "Tensor out=None)", grad_fn="GatherBackward0", forward=None,
    params=("dim", "index", "sparse_grad"), keeps=("dim", "sparse_grad"),
    saves=("self", "index"),
    derivatives={"self": lambda grad, self, dim, index: _gather_backward(grad, self, dim, index)},
    tangent=lambda self_t, dim, index: gather(self_t, dim, index))

SCATTER_ADD = General(
    "scatter_add(Tensor input, int64_t dim, Tensor index, Tensor src, *, Tensor out=None)",
    grad_fn="ScatterAddBackward0", forward=None, inputs=("self", "src"),
    params=("dim", "index"), keeps=("dim", "src_sym_sizes"), hidden=("src_sym_sizes",),
    saves=("index",),
    derivatives={"self": lambda grad: grad,
                 "src": lambda grad, dim, index, src_sym_sizes: fit_input_grad(
                     "ScatterAddBackward0", 1, gather(grad, dim, index), src_sym_sizes)},
    tangent=lambda self_t, src_t, dim, index: scatter_add(self_t, dim, index, src_t))

SCATTER = General(
    "scatter(Tensor input, int64_t dim, Tensor index, Tensor src, *, Tensor out=None)",
    grad_fn="ScatterBackward0", forward=None, inputs=("self", "src"),
    params=("dim", "index"), keeps=("dim", "src_sym_sizes"), hidden=("src_sym_sizes",),
    saves=("index",),
    derivatives={"self": lambda grad, dim, index: scatter(grad, dim, index, 0.0),
                 "src": lambda grad, dim, index, src_sym_sizes: fit_input_grad(
                     "ScatterBackward0", 1, gather(grad, dim, index), src_sym_sizes)},
    tangent=lambda self_t, src_t, dim, index: scatter(self_t, dim, index, src_t))

SCATTER_VALUE = General(
    "scatter(Tensor input, int64_t dim, Tensor index, Scalar value, *, Tensor out=None)",
    grad_fn="ScatterBackward1", forward=None, params=("dim", "index"), keeps=("dim",),
    saves=("index",),
    derivatives={"self": lambda grad, dim, index: scatter(grad, dim, index, 0.0)},
    tangent=lambda self_t, dim, index: scatter(self_t, dim, index, 0.0))

INDEX_SELECT = General(
    "index_select(Tensor input, int64_t dim, Tensor index, *, Tensor out=None)",
    grad_fn="IndexSelectBackward0", forward=None, params=("dim", "index"),
    keeps=("dim", "self_sym_sizes"), saves=("index",),
    derivatives={"self": lambda grad, dim, index, self_sym_sizes: index_add(
        _zeros(self_sym_sizes, grad._data.dtype), dim, index, grad)},
    tangent=lambda self_t, dim, index: index_select(self_t, dim, index))


def _index_add_source_grad(grad: Tensor, dim: int, index: Tensor, source: Tensor,
                           alpha: Any) -> Tensor:
    """torch's rule for index_add's ``source``: the gradient read back at ``index``."""
    g = index_select(grad, dim, index)
    if g._data.shape != source._data.shape:  # a 0-dim source of a 0-dim self
        g = _shape.reshape(g, source._data.shape)
    return g * alpha if alpha != 1 else g


def _index_add_tangent(self_t: Tensor, source_t: Tensor, dim: int, index: Tensor,
                       alpha: Any) -> Tensor:
    return index_add(self_t, dim, index, source_t, alpha=alpha)


INDEX_ADD = General(
    "index_add(Tensor input, int64_t dim, Tensor index, Tensor source, *, Scalar alpha=1, "
    "Tensor out=None)", grad_fn="IndexAddBackward0", forward=None, inputs=("self", "source"),
    params=("dim", "index", "alpha", "source_dim"), keeps=("dim", "alpha", "source_dim"),
    saves=("index", "source"),
    derivatives={"self": lambda grad: grad,
                 "source": lambda grad, dim, index, source, alpha: _index_add_source_grad(
                     grad, dim, index, source, alpha)},
    tangent=lambda self_t, source_t, dim, index, alpha: _index_add_tangent(
        self_t, source_t, dim, index, alpha))


@signature("gather(Tensor input, int64_t dim, Tensor index, *, bool sparse_grad=False, "
           "Tensor out=None)")
def gather(input: Tensor, dim: int, index: Tensor, *, sparse_grad: bool = False) -> Tensor:
    """``out[i][j][k] = input[i][index[i][j][k]][k]`` for dim 1 (grad_fn ``GatherBackward0``).

    >>> import npgrad
    >>> npgrad.gather(npgrad.tensor([[1., 2.], [3., 4.]]), 1, npgrad.tensor([[1], [0]]))
    tensor([[2.],
            [3.]])
    """
    data = input._data
    idx = index._data
    nd = data.ndim
    d = wrap_dim(dim, nd)
    if idx.dtype != np.int64 and idx.dtype != np.int32:
        raise RuntimeError("gather(): Expected dtype int32/int64 for index")
    if idx.ndim != nd and not (max(idx.ndim, 1) == max(nd, 1)):
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
        out = data.copy()
    elif nd == 1:
        out = data[idx]
    else:
        out = np.take_along_axis(data[tuple(slice(0, s) if k != d else slice(None)
                                            for k, s in enumerate(idx.shape))], idx, axis=d)
    return GATHER.record((input,), out, (dim, index, sparse_grad))  # type: ignore[no-any-return]


@signature("index_select(Tensor input, int64_t dim, Tensor index, *, Tensor out=None)")
def index_select(input: Tensor, dim: int, index: Tensor) -> Tensor:
    """The slices of dim ``dim`` listed in ``index`` (a copy; ``IndexSelectBackward0``).

    >>> import npgrad
    >>> npgrad.index_select(npgrad.tensor([5., 6., 7.]), 0, npgrad.tensor([2, 0]))
    tensor([7., 5.])
    """
    data = input._data
    idx = index._data
    if idx.ndim > 1:
        raise IndexError("index_select(): Index is supposed to be a vector")
    if idx.dtype not in (np.int64, np.int32):
        raise RuntimeError("index_select(): Expected dtype int32 or int64 for index")
    d = wrap_dim(dim, data.ndim)
    n = data.shape[d] if data.ndim else 1
    flat = idx.reshape(-1)
    if data.ndim == 0 and flat.size != 1:
        raise RuntimeError("index_select(): Index to scalar can have only 1 value, got "
                           f"{flat.size} value(s)")
    if flat.size and (flat.min() < 0 or flat.max() >= n):
        if n == 0 and data.ndim > 1:
            raise RuntimeError("index_select(): self indexing axis dim should be positive")
        if d == 0:  # torch's CPU kernel for dim 0 checks with a text of its own
            raise IndexError("index out of range in self")
        bad = int(flat[(flat < 0) | (flat >= n)][0])
        raise RuntimeError(f"INDICES element is out of DATA bounds, id={bad} axis_dim={n}")
    out = np.take(data, flat, axis=d) if data.ndim else data.copy()
    return INDEX_SELECT.record((input,), out, (dim, index))  # type: ignore[no-any-return]


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
        _, key = _scatter_key(data, dim, index, src_data.shape, "scatter",
                              src._data.shape)
        out = data.copy()
        out[key] = _src_block(src_data, index)
        return SCATTER.record((input, src), out, (dim, index))  # type: ignore[no-any-return]
    _, key = _scatter_key(data, dim, index, None, "scatter")
    out = data.copy()
    with np.errstate(all="ignore"):
        out[key] = np.asarray(src).astype(data.dtype)
    return SCATTER_VALUE.record((input,), out, (dim, index))  # type: ignore[no-any-return]


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
    return record_not_implemented("scatter", inputs, out)


def scatter_(input: Tensor, dim: int, index: Tensor, src: Any = None, *, value: Any = None,
             reduce: Any = None) -> Tensor:
    from .inplace import apply_inplace

    return apply_inplace(input, scatter, dim, index, src, value=value, reduce=reduce)


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
    out = data.copy()
    np.add.at(out, key, _src_block(src_data, index))
    return SCATTER_ADD.record((input, src), out, (dim, index))  # type: ignore[no-any-return]


def scatter_add_(input: Tensor, dim: int, index: Tensor, src: Tensor) -> Tensor:
    from .inplace import apply_inplace

    return apply_inplace(input, scatter_add, dim, index, src)


def _vector_index(index: Any, name: str, data: np.ndarray, dim: int,
                  vector: bool = True) -> tuple:
    """``(dim, indices)`` of an index_* op: a vector of in-range int64/int32 positions
    (``vector=False``: the index as given, its rank checked by the caller)."""
    idx = _index_tensor(index)._data
    d = wrap_dim(dim, data.ndim)
    if not vector:
        return d, idx
    if idx.ndim > 1 and name == "index_copy_":
        raise IndexError(f"index_copy_(): Index should have dimension 1 or 0 (got {idx.ndim})")
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
    if src.ndim and d >= src.ndim or not src.ndim and d > 0:
        raise RuntimeError(f"index_add_(): Indexing dim {d} is out of bounds of the source "
                           f"tensor with dim {src.ndim}")
    n_src = src.shape[d] if src.ndim else 1
    if idx.size != n_src:
        checks.size_at(src.shape, d)  # torch's message reads source.size(dim): a 0-dim raises
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
    if data.size == 0:  # torch's kernel has nothing to write, and reads no index
        return INDEX_ADD.record((input, source), data.copy(),  # type: ignore[no-any-return]
                                (dim, _index_tensor(index), alpha, src.ndim))
    _check_bounds(idx, data.shape[d] if data.ndim else 1, d)
    if data.dtype.kind in "iub":  # torch casts alpha to an integer self's dtype first
        alpha = int(alpha)
    values = src * alpha if alpha != 1 else src
    out = data.copy()
    np.add.at(out, _dim_key(data, d, idx), values.astype(data.dtype, copy=False))
    return INDEX_ADD.record((input, source), out,  # type: ignore[no-any-return]
                            (dim, _index_tensor(index), alpha, src.ndim))


def index_add_(input: Tensor, dim: int, index: Tensor, source: Tensor, *,
               alpha: Any = 1) -> Tensor:
    from .inplace import apply_inplace

    return apply_inplace(input, index_add, dim, index, source, alpha=alpha)


INDEX_COPY = General(
    "index_copy(Tensor input, int64_t dim, Tensor index, Tensor source, *, Tensor out=None)",
    grad_fn="IndexCopyBackward0", forward=None, inputs=("self", "source"),
    params=("dim", "index", "source_dim"), keeps=("dim", "source_dim"),
    saves=("index", "source"),
    derivatives={"self": lambda grad, dim, index: index_fill(grad, dim, index, 0.0),
                 "source": lambda grad, dim, index, source: _index_add_source_grad(
                     grad, dim, index, source, 1)},
    tangent=lambda self_t, source_t, dim, index: index_copy(self_t, dim, index, source_t))


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
    return INDEX_COPY.record((input, source), out,  # type: ignore[no-any-return]
                             (dim, _index_tensor(index), src.ndim))


def index_copy_(input: Tensor, dim: int, index: Tensor, source: Tensor) -> Tensor:
    from .inplace import apply_inplace

    return apply_inplace(input, index_copy, dim, index, source)


def _index_fill_value_grad(grad: Tensor, dim: int, index: Tensor) -> Tensor:
    """The gradient of index_fill's 0-dim ``value``: each filled slice counted once (torch
    reads the index through ``_unique``; a negative index then fails as index_select's)."""
    unique = wrap(np.unique(index._data), 0)
    return index_select(grad, dim, unique).sum()


INDEX_FILL = General(
    "index_fill(Tensor input, int64_t dim, Tensor index, Scalar value)",
    grad_fn="IndexFillBackward0", forward=None, params=("dim", "index"), keeps=("dim",),
    saves=("index",),
    derivatives={"self": lambda grad, dim, index: index_fill(grad, dim, index, 0.0)},
    tangent=lambda self_t, dim, index: index_fill(self_t, dim, index, 0.0))

INDEX_FILL_TENSOR = General(
    "index_fill(Tensor input, int64_t dim, Tensor index, Tensor value)",
    grad_fn="IndexFillBackward1", forward=None, inputs=("self", "value"),
    params=("dim", "index"), keeps=("dim",), saves=("index",),
    derivatives={"self": lambda grad, dim, index: index_fill(grad, dim, index, 0.0),
                 "value": lambda grad, dim, index: _index_fill_value_grad(grad, dim, index)},
    tangent=lambda self_t, value_t, dim, index: index_fill(self_t, dim, index, value_t))


@signature("index_fill(Tensor input, int64_t dim, Tensor index, Tensor value)",
           "index_fill(Tensor input, int64_t dim, Tensor index, Scalar value)")
def index_fill(input: Tensor, dim: int, index: Tensor, value: Any) -> Tensor:
    """A copy of ``input`` with the slices at ``index`` along ``dim`` set to ``value``.

    >>> import npgrad
    >>> npgrad.zeros(3).index_fill(0, npgrad.tensor([-1]), 2.)
    tensor([0., 0., 2.])
    """
    data = input._data
    d, idx = _vector_index(index, "index_fill_", data, dim, vector=False)
    if idx.dtype != np.int64:
        raise IndexError("index_fill_(): Expected dtype int64 for index.")
    if is_tensor(value) and value._data.ndim != 0:
        raise RuntimeError("index_fill_ only supports a 0-dimensional value tensor, but got "
                           f"tensor with {value._data.ndim} dimension(s).")
    if idx.ndim > 1:  # torch checks the index's rank after the value's
        raise RuntimeError("Index has to be a vector/scalar")
    idx = idx.reshape(-1)
    idx = _check_bounds(idx, data.shape[d] if data.ndim else 1, d, wrap_negative=True,
                        error=IndexError)
    # torch's kernel converts the number (a 0-dim tensor's too) to the input's dtype
    number = value._data.item() if is_tensor(value) else value
    if isinstance(number, complex) and data.dtype.kind != "c":
        raise RuntimeError("index_fill_(): Converting complex Scalar to non-complex type is not "
                           "supported")
    check_scalar_fits(number, data.dtype)
    out = data.copy()
    fill = value._data if is_tensor(value) else np.asarray(value)
    with np.errstate(all="ignore"):
        out[_dim_key(data, d, idx)] = fill.astype(data.dtype)
    # torch keeps the index as given: its gradient of ``value`` then refuses a negative
    # index (index_select's error), and npgrad's does too
    params = (dim, _index_tensor(index))
    if is_tensor(value):
        return INDEX_FILL_TENSOR.record((input, value), out, params)  # type: ignore[no-any-return]
    return INDEX_FILL.record((input,), out, params)  # type: ignore[no-any-return]


def index_fill_(input: Tensor, dim: int, index: Tensor, value: Any) -> Tensor:
    from .inplace import overwrite_inplace

    return overwrite_inplace(input, index_fill, dim, index, value)


# Note [Masked ops as entries]
# masked_select and masked_scatter are each other's gradient, as in torch: the gradient of
# ``masked_select`` is scattered into zeros of the broadcast shape (MaskedScatterBackward0
# over no ``self`` edge) and summed down to the input's shape; the gradient of
# masked_scatter's ``source`` is the selected gradient, padded with zeros for the source
# elements the mask never reached.  Both save the mask (broadcast) as torch does.


def _masked_select_backward(grad: Tensor, self: Tensor, mask: Tensor) -> Tensor:
    shape = broadcast_shapes(mask._data.shape, self._data.shape) or (1,)
    zeros = wrap(np.zeros(shape, dtype=grad._data.dtype), 0)
    return _shape._sum_to(masked_scatter(zeros, mask, grad), self._data.shape)


def _masked_scatter_source_grad(grad: Tensor, mask: Tensor, source_sym_sizes: tuple) -> Tensor:
    taken = masked_select(grad, mask)
    rest = int(np.prod(source_sym_sizes)) - taken._data.size
    if rest:  # source elements past the mask's count were never read
        taken = _shape.cat([taken, wrap(np.zeros(rest, dtype=grad._data.dtype), 0)])
    return _shape.reshape(taken, source_sym_sizes)


def _masked_scatter_self_grad(grad: Tensor, mask: Tensor, self_sym_sizes: tuple) -> Tensor:
    from .pointwise import masked_fill

    return _shape._sum_to(masked_fill(grad, mask, 0.0), self_sym_sizes)


MASKED_SELECT = General(
    "masked_select(Tensor input, Tensor mask, *, Tensor out=None)",
    grad_fn="MaskedSelectBackward0", forward=None, params=("mask",), saves=("self", "mask"),
    derivatives={"self": lambda grad, self, mask: _masked_select_backward(grad, self, mask)},
    tangent=lambda self_t, mask: masked_select(self_t, mask))

MASKED_SCATTER = General(
    "masked_scatter(Tensor input, Tensor mask, Tensor source, *, Tensor out=None)",
    grad_fn="MaskedScatterBackward0", forward=None, inputs=("self", "source"),
    params=("mask",), keeps=("self_sym_sizes", "source_sym_sizes"), hidden=("self_sym_sizes",),
    saves=("mask",),
    derivatives={"self": lambda grad, mask, self_sym_sizes:
                 _masked_scatter_self_grad(grad, mask, self_sym_sizes),
                 "source": lambda grad, mask, source_sym_sizes:
                 _masked_scatter_source_grad(grad, mask, source_sym_sizes)},
    tangent=lambda self_t, source_t, mask: masked_scatter(self_t, mask, source_t))


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
    out = np.broadcast_to(data, shape)[np.broadcast_to(m, shape)]
    return MASKED_SELECT.record((input,), out, (mask,))  # type: ignore[no-any-return]


def _take_backward(grad: Tensor, self: Tensor, index: Tensor) -> Tensor:
    """The gradient added at the flat positions ``index`` read, into zeros of self's shape
    (torch puts it with ``put_``; npgrad, which has no ``put``, with ``_index_put_impl``)."""
    shape = self._data.shape
    idx = index._data
    n = self._data.size
    flat = np.where(idx < 0, idx + n, idx)
    key = np.unravel_index(flat, shape) if shape else ()
    indices = tuple(wrap(np.asarray(k), 0) for k in key)
    zeros = wrap(np.zeros(shape, dtype=grad._data.dtype), 0)
    if not shape:  # a 0-dim input: every position is its one element
        return _index_put(zeros, (), (), grad.sum(), True, entry=INDEX_PUT_IMPL)
    return _index_put(zeros, indices, key, grad, True, entry=INDEX_PUT_IMPL)


TAKE = General(
    "take(Tensor input, Tensor index, *, Tensor out=None)", grad_fn="TakeBackward0",
    forward=None, params=("index",), saves=("self", "index"),
    derivatives={"self": lambda grad, self, index: _take_backward(grad, self, index)},
    tangent=lambda self_t, index: take(self_t, index))


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
    out = data.reshape(-1)[flat]
    return TAKE.record((input,), out, (_index_tensor(index),))  # type: ignore[no-any-return]


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
        return gather(_shape.view(input, -1), 0, _shape.view(indices, -1))
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
    return gather(_shape.expand(input, tuple(shape)), d, idx_b)


# Note [unfold as a view entry]
# ``unfold`` is a ``View`` entry (Note [A view is an entry] in _ops/registry.py): its
# windows are a strided NumPy view of the input, and its node keeps torch's
# ``dimension``, ``size``, ``step`` (as given) and the input's shape.  Its gradient is
# torch's ``unfold_backward``, a ``General`` entry adding each window's gradient back at
# the positions it covers (windows may overlap); that one's own gradient is ``unfold``
# again, so gradients of any order follow.


def _windows(data: np.ndarray, dimension: int, size: int, step: int) -> np.ndarray:
    d = wrap_dim(dimension, data.ndim)
    n = data.shape[d] if data.ndim else 1
    count = (n - size) // step + 1
    if data.ndim:
        shape = data.shape[:d] + (count,) + data.shape[d + 1:] + (size,)
        # one window reads no second one: a huge step's byte stride would overflow NumPy's
        along = data.strides[d] * step if count > 1 else data.strides[d]
        strides = data.strides[:d] + (along,) + data.strides[d + 1:] + (data.strides[d],)
    else:
        shape, strides = (size,), (0,)
    return np.lib.stride_tricks.as_strided(data, shape, strides,
                                           writeable=data.flags.writeable)


def _windows_added(grad: np.ndarray, input_sizes: tuple, dim: int, size: int,
                   step: int) -> np.ndarray:
    """torch's unfold_backward on arrays: each window's gradient added where it read."""
    out = np.zeros(input_sizes, dtype=grad.dtype)
    if out.ndim:
        moved = np.moveaxis(out, wrap_dim(dim, out.ndim), -1)  # a view: windows along -1
        gm = np.moveaxis(grad, wrap_dim(dim, out.ndim), -2)
        for i in range(gm.shape[-2]):
            moved[..., i * step:i * step + size] += gm[..., i, :]
    else:
        out[()] = grad.sum()
    return out


UNFOLD_BACKWARD = General(
    "unfold_backward(Tensor grad_in, SymIntArrayRef input_sizes, int64_t dim, int64_t size, "
    "int64_t step)", grad_fn="UnfoldBackwardBackward0", forward=_windows_added,
    inputs=("grad_in",), params=("input_sizes", "dim", "size", "step"),
    keeps=("dim", "size", "step"),
    derivatives={"grad_in": lambda grad, dim, size, step: unfold(grad, dim, size, step)},
    tangent=lambda grad_in_t, input_sizes, dim, size, step: UNFOLD_BACKWARD(
        (grad_in_t,), (input_sizes, dim, size, step)))

UNFOLD = View(
    "unfold(Tensor input, int64_t dimension, int64_t size, int64_t step)",
    grad_fn="UnfoldBackward0", forward=_windows, params=("dimension", "size", "step"),
    keeps=("dimension", "self_sym_sizes", "size", "step"),
    derivative=lambda grad, dimension, self_sym_sizes, size, step: UNFOLD_BACKWARD(
        (grad,), (self_sym_sizes, dimension, size, step)))
UnfoldBackward0 = UNFOLD.node
UnfoldBackwardBackward0 = UNFOLD_BACKWARD.node


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
    return UNFOLD(input, dimension, size, step)


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
    saved_mask = mask if m.shape == shape else wrap(np.array(m_b), 0)
    return MASKED_SCATTER.record((input, source), out,  # type: ignore[no-any-return]
                                 (saved_mask,))


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


# Note [scatter_reduce's rules]
# torch's scatter_reduce_backward, one rule per input: ties share amax/amin's gradient
# evenly, prod divides out each factor (with zeros handled apart), mean divides by the
# count of values reduced into each position.  Positions that forgot ``self``
# (``include_self=False``) pass it no gradient.  The tangent is torch's: sum and mean
# reduce the tangents the same way, amax/amin share them among the extreme values.  torch
# gives prod no tangent; npgrad gives the exact one (tests/test_ops_shape.py checks it).


def _as_self_rank(src: Tensor, x: Tensor) -> Tensor:
    """A 0-dim ``src`` read as one element of every dim of ``x`` (as the forward reads it)."""
    if src._data.ndim or not x._data.ndim:
        return src
    return _shape.reshape(src, (1,) * x._data.ndim)


def _reduce_counts(x: Tensor, dim: int, index: Tensor, include_self: bool,
                   dtype: np.dtype) -> Tensor:
    """How many values mean reduced into each position (1 where none)."""
    count = np.full(x._data.shape, 1 if include_self else 0, dtype=dtype)
    np.add.at(count, _scatter_key(x._data, dim, index, None, "scatter_reduce")[1], 1)
    count[count == 0] = 1
    return wrap(count, 0)


def _extreme_shares(x: Tensor, src: Tensor, result: Tensor, dim: int, index: Tensor) -> tuple:
    """amax/amin: where self and src hold the result, and how many share each position."""
    self_is_result = x == result
    src_is_result = src == gather(result, dim, index)
    count = scatter_add(self_is_result.to(x.dtype), dim, index, src_is_result.to(x.dtype))
    return self_is_result, src_is_result, count


def _scatter_reduce_self_grad(grad: Tensor, self: Tensor, src: Tensor, result: Tensor,
                              dim: int, index: Tensor, reduce: str,
                              include_self: bool) -> Tensor:
    from .pointwise import masked_fill

    src = _as_self_rank(src, self)
    if reduce == "sum":
        g = grad
    elif reduce == "mean":
        g = grad / _reduce_counts(self, dim, index, include_self, grad._data.dtype)
    elif reduce == "prod":
        masked_self = masked_fill(self, self == 0, 1.0)
        masked_self_result = scatter_reduce(masked_self, dim, index, src, reduce,
                                            include_self=include_self)
        g = grad * masked_self_result / masked_self
    else:
        self_is_result, _, count = _extreme_shares(self, src, result, dim, index)
        g = self_is_result * (grad / count)
    return scatter(g, dim, index, 0.0) if not include_self else g


def _scatter_reduce_src_grad(grad: Tensor, self: Tensor, src: Tensor, result: Tensor,
                             dim: int, index: Tensor, reduce: str,
                             include_self: bool) -> Tensor:
    from .pointwise import bitwise_and, masked_fill, where

    src = _as_self_rank(src, self)
    if reduce == "sum":
        return gather(grad, dim, index)
    if reduce == "mean":
        counts = _reduce_counts(self, dim, index, include_self, grad._data.dtype)
        return gather(grad, dim, index) / gather(counts, dim, index)
    if reduce == "prod":
        src_zero = src == 0
        zeros = wrap(np.zeros_like(self._data), 0)
        src_num_zeros = gather(scatter_add(zeros, dim, index, src_zero.to(self.dtype)), dim,
                               index)
        src_single_zero = bitwise_and(src_zero, src_num_zeros == 1)
        masked_src = masked_fill(src, src_single_zero, 1.0)
        masked_src_result = scatter_reduce(self, dim, index, masked_src, reduce,
                                           include_self=include_self)
        return where(src_single_zero, gather(grad * masked_src_result, dim, index),
                     gather(grad * result, dim, index) / masked_fill(src, src_zero, 1.0))
    _, src_is_result, count = _extreme_shares(self, src, result, dim, index)
    return src_is_result * gather(grad / count, dim, index)


def _scatter_reduce_tangent(self_t: Tensor, src_t: Tensor, self: Tensor, src: Tensor,
                            result: Tensor, dim: int, index: Tensor, reduce: str,
                            include_self: bool) -> Tensor | None:
    if reduce in ("sum", "mean"):
        return scatter_reduce(self_t, dim, index, src_t, reduce, include_self=include_self)
    if reduce == "prod":
        # each value reaches one output, so the rules at a gradient of ones are the partial
        # derivatives: the tangent is their products with the tangents, summed per output
        ones = wrap(np.ones(result._data.shape, dtype=result._data.dtype), 0)
        d_self = _scatter_reduce_self_grad(ones, self, src, result, dim, index, reduce,
                                           include_self)
        d_src = _scatter_reduce_src_grad(ones, self, src, result, dim, index, reduce,
                                         include_self)
        src_t = _as_self_rank(src_t, self)
        block = src_t[tuple(slice(0, n) for n in index._data.shape)] if src_t._data.ndim \
            else src_t
        return scatter_add(d_self * self_t, dim, index, d_src * block)
    src, src_t = _as_self_rank(src, self), _as_self_rank(src_t, self)
    self_is_result, src_is_result, count = _extreme_shares(self, src, result, dim, index)
    if not include_self:  # the forgotten values of self share nothing
        self_is_result = scatter(self_is_result.to(self.dtype), dim, index, 0.0)
        count = scatter_add(self_is_result, dim, index, src_is_result.to(self.dtype))
    shared = scatter_add(self_t * self_is_result, dim, index, src_t * src_is_result)
    return shared / count


SCATTER_REDUCE = General(
    "scatter_reduce(Tensor input, int64_t dim, Tensor index, Tensor src, "
    "c10::string_view reduce, *, bool include_self=True, Tensor out=None)",
    grad_fn="ScatterReduceBackward0", forward=None, inputs=("self", "src"),
    params=("dim", "index", "reduce", "include_self"), keeps=("dim", "reduce", "include_self"),
    saves=("self", "index", "src", "result"),
    derivatives={"self": lambda grad, self, src, result, dim, index, reduce, include_self:
                 _scatter_reduce_self_grad(grad, self, src, result, dim, index, reduce,
                                           include_self),
                 "src": lambda grad, self, src, result, dim, index, reduce, include_self:
                 _scatter_reduce_src_grad(grad, self, src, result, dim, index, reduce,
                                          include_self)},
    tangent=lambda self_t, src_t, self, src, result, dim, index, reduce, include_self:
    _scatter_reduce_tangent(self_t, src_t, self, src, result, dim, index, reduce,
                            include_self))


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
    return SCATTER_REDUCE.record((input, src), out,  # type: ignore[no-any-return]
                                 (dim, index, reduce, include_self))


def scatter_reduce_(input: Tensor, dim: int, index: Tensor, src: Tensor, reduce: str, *,
                    include_self: bool = True) -> Tensor:
    from .inplace import apply_inplace

    return apply_inplace(input, scatter_reduce, dim, index, src, reduce,
                         include_self=include_self)
