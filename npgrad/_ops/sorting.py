"""Sorting and order statistics: sort, argsort, msort, topk, kthvalue, median, nanmedian, mode.

Note [Index-selecting ops]
Every op here picks elements of its input along one dim and returns them with
their indices.  Each is a ``General`` entry (Note [The general entry kind] in
_ops/registry.py) whose node saves the indices (not the input), keeps ``dim``
(as given), the input's shape and, for the ops that drop the dim, ``keepdim``,
exactly like torch's.  The gradient of such a pick is the incoming gradient
put back at the picked positions, zeros elsewhere (torch's
``value_selecting_reduction_backward``: a scatter into zeros, ScatterBackward0
over no ``self`` edge), so the rule is itself differentiable and the second
derivative is a gather of the gradient's gradient.  The tangent is the
tangent gathered at the indices.

Note [Ties]
``sort`` is stable in torch on the CPU whatever ``stable`` says, and so is
npgrad's: equal elements keep their order (descending too), NaN counts as
the largest value.  ``topk``, ``kthvalue`` and ``median(dim)`` in torch use a
partial selection whose choice among equal elements is not specified; npgrad
takes the first one in stable sorted order, so on ties the *values* agree with
torch and the *indices* may not.  ``mode`` follows torch: the smallest of the
most frequent values, at the last position where it occurs.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from .signature import checker, signature
from .._mode import _tls
if TYPE_CHECKING:
    from .._tensor import Tensor
else:  # Note [Tensor base and Tensor] in npgrad._tensor_base
    from .._tensor_base import TensorBase as Tensor
from .._tensor_base import wrap
from ._shape_util import wrap_dim
from .checks import forward_ad_missing, not_implemented_for
from .indexing import gather, scatter
from .registry import General, refuse_complex
from .reduction import _ones_as, _return_type, _single_dim, evenly_distribute
from .shape import squeeze_fresh_, unsqueeze

return_type_sort = _return_type("sort")
return_type_topk = _return_type("topk")
return_type_kthvalue = _return_type("kthvalue")
return_type_median = _return_type("median")
return_type_nanmedian = _return_type("nanmedian")
return_type_mode = _return_type("mode")


# -- helpers ----------------------------------------------------------------------------------

def _stable_order(data: np.ndarray, d: int, descending: bool) -> np.ndarray:
    """Stable argsort along ``d``, NaN largest (Note [Ties])."""
    if not descending:
        return np.argsort(data, axis=d, kind="stable")
    # Ascending-stable on the reversed axis, reversed again: values descend while
    # equal elements keep their original order (and NaN, sorted last, comes first).
    n = data.shape[d]
    rev = np.argsort(np.flip(data, d), axis=d, kind="stable")
    return np.flip(n - 1 - rev, d)


def _put_back(grad: Tensor, dim: int, indices: Tensor, self_sym_sizes: tuple,
              keepdim: bool = True) -> Tensor:
    """torch's value_selecting_reduction_backward (Note [Index-selecting ops])."""
    if not self_sym_sizes:  # a 0-dim input picks itself
        return grad
    if not keepdim:
        grad, indices = unsqueeze(grad, dim), unsqueeze(indices, dim)
    zeros = wrap(np.zeros(self_sym_sizes, dtype=grad._data.dtype), 0)
    return scatter(zeros, dim, indices, grad)


def _picked_tangent(self_t: Tensor, dim: int, indices: Tensor, keepdim: bool = True) -> Tensor:
    """The tangent at the picked positions (torch's gather_with_keepdimed_indices)."""
    if not self_t._data.ndim:
        return self_t
    if keepdim:
        return gather(self_t, dim, indices)
    return gather(self_t, dim, unsqueeze(indices, dim)).squeeze(dim)


def _pick_entry(signature: str, grad_fn: str, keepdim: bool) -> General:
    """The entry of an index-selecting op: the values' node saves the indices (an extra
    output); ``keepdim``: whether the op has that parameter (kthvalue, median, mode)."""
    if not keepdim:  # sort and topk keep the dim they pick along
        return General(
            signature, grad_fn=grad_fn, forward=None, params=("dim",),
            keeps=("dim", "self_sym_sizes"), saves=("indices",), extra=("indices",),
            derivatives={"self": lambda grad, dim, indices, self_sym_sizes:
                         _put_back(grad, dim, indices, self_sym_sizes)},
            tangent=lambda self_t, dim, indices: _picked_tangent(self_t, dim, indices))
    return General(
        signature, grad_fn=grad_fn, forward=None, params=("dim", "keepdim"),
        keeps=("dim", "keepdim", "self_sym_sizes"), saves=("indices",), extra=("indices",),
        derivatives={"self": lambda grad, dim, keepdim, indices, self_sym_sizes:
                     _put_back(grad, dim, indices, self_sym_sizes, keepdim)},
        tangent=lambda self_t, dim, keepdim, indices: _picked_tangent(self_t, dim, indices,
                                                                      keepdim))


def _finish_pair(entry: General, rtype: type, input: Tensor, values: np.ndarray,
                 idx: np.ndarray, params: tuple) -> Any:
    res, indices = entry.record((input,), (np.asarray(values, order="C"),
                                           np.asarray(idx, dtype=np.int64, order="C")), params)
    return rtype(res, indices)


# -- sort / argsort / msort -------------------------------------------------------------------

_SORT_SIGNATURE = ("sort(Tensor input, int64_t dim=-1, bool descending=False, *, "
                   "TensorList[2] out=None)")
_SORT_STABLE_SIGNATURE = ("sort(Tensor input, *, bool? stable, int64_t dim=-1, "
                          "bool descending=False, TensorList[2] out=None)")
SORT = _pick_entry(_SORT_SIGNATURE, "SortBackward0", keepdim=False)
SORT_STABLE = _pick_entry(_SORT_STABLE_SIGNATURE, "SortBackward1", keepdim=False)
SortBackward0 = SORT.node
SortBackward1 = SORT_STABLE.node

_NOT_GIVEN = object()  # torch's ``sort.stable`` overload (SortBackward1) is chosen by passing it


@signature(_SORT_STABLE_SIGNATURE, _SORT_SIGNATURE)
def sort(input: Tensor, dim: int = -1, descending: bool = False, *,
         stable: Any = _NOT_GIVEN) -> Any:
    """Values and indices sorted along ``dim`` (stable; NaN sorts as the largest);
    SortBackward0, or SortBackward1 when ``stable`` is given.

    >>> import npgrad
    >>> npgrad.tensor([3., 1., 2.]).sort().indices
    tensor([1, 2, 0])
    """
    data = input._data
    if data.dtype.kind == "c":  # no complex kernel in torch
        refuse_complex((RuntimeError, ' Sort does not support complex dtypes on CPU'), data.dtype)
    d = _single_dim("sort", data.ndim, dim)
    entry = SORT if stable is _NOT_GIVEN else SORT_STABLE
    if d is None:
        return _finish_pair(entry, return_type_sort, input, data.copy(),
                            np.zeros((), np.int64), (dim,))
    idx = _stable_order(data, d, descending)
    return _finish_pair(entry, return_type_sort, input,
                        np.take_along_axis(data, idx, axis=d), idx, (dim,))


@signature("argsort(Tensor input, *, bool stable, int64_t dim=-1, bool descending=False, "
           "Tensor out=None)",
           "argsort(Tensor input, int64_t dim=-1, bool descending=False)")
def argsort(input: Tensor, dim: int = -1, descending: bool = False, *,
            stable: bool = False) -> Tensor:
    """The indices of :func:`sort` (int64, no gradient).

    >>> import npgrad
    >>> npgrad.argsort(npgrad.tensor([3., 1., 2.]), descending=True)
    tensor([0, 2, 1])
    """
    data = input._data
    d = _single_dim("argsort", data.ndim, dim)
    if d is None:
        return wrap(np.zeros((), np.int64), _tls.mode)
    return wrap(np.asarray(_stable_order(data, d, descending), order="C"), _tls.mode)


@signature("msort(Tensor input, *, Tensor out=None)")
def msort(input: Tensor) -> Tensor:
    """``sort(input, dim=0).values`` (grad_fn SortBackward0).

    >>> import npgrad
    >>> npgrad.msort(npgrad.tensor([[2., 1.], [0., 3.]]))
    tensor([[0., 1.],
            [2., 3.]])
    """
    return sort(input, 0)[0]


# -- topk / kthvalue ---------------------------------------------------------------------------

TOPK = _pick_entry("topk(Tensor input, SymInt k, int64_t dim=-1, bool largest=True, "
                   "bool sorted=True, *, TensorList[2] out=None)", "TopkBackward0",
                   keepdim=False)
TopkBackward0 = TOPK.node


@signature("topk(Tensor input, SymInt k, int64_t dim=-1, bool largest=True, bool sorted=True, *, "
           "TensorList[2] out=None)")
def topk(input: Tensor, k: int, dim: int = -1, largest: bool = True, sorted: bool = True) -> Any:
    """The ``k`` largest (or smallest) elements along ``dim`` and their indices; TopkBackward0.

    >>> import npgrad
    >>> npgrad.tensor([1., 5., 3.]).topk(2)
    npgrad.return_types.topk(
    values=tensor([5., 3.]),
    indices=tensor([1, 2]))
    """
    data = input._data
    if data.dtype.kind == "c":  # no complex kernel in torch
        refuse_complex((RuntimeError, ' topk does not support complex dtypes on CPU'), data.dtype)
    d = _single_dim("topk", data.ndim, dim)
    n = 1 if d is None else data.shape[d]
    if not 0 <= k <= n:
        raise RuntimeError("selected index k out of range")
    if data.dtype.kind == "b":  # after the argument checks, as torch's kernel
        raise RuntimeError("topk does not support bool dtypes on CPU")
    if d is None:
        return _finish_pair(TOPK, return_type_topk, input, data.copy(),
                            np.zeros((), np.int64), (dim,))
    idx = np.take(_stable_order(data, d, largest), np.arange(k), axis=d)
    return _finish_pair(TOPK, return_type_topk, input,
                        np.take_along_axis(data, idx, axis=d), idx, (dim,))


def _pick_rank(op: str, entry: General, rtype: type, input: Tensor, rank: Any, dim: int,
               keepdim: bool, data: np.ndarray | None = None, ties: Any = None) -> Any:
    """The element of sorted position ``rank`` (an int or, per slice, an array) along ``dim``
    (``ties(data, d, idx)``: which of equal elements' indices to give, when not the first)."""
    data = input._data if data is None else data
    d = _single_dim(op, data.ndim, dim)
    if d is None:
        return _finish_pair(entry, rtype, input, input._data.copy(), np.zeros((), np.int64),
                            (dim, keepdim))
    order = _stable_order(data, d, False)
    pos = np.expand_dims(np.asarray(rank), d) if np.ndim(rank) else np.full(
        order.shape[:d] + (1,) + order.shape[d + 1:], rank)
    idx = np.take_along_axis(order, pos.astype(np.int64), axis=d)
    if ties is not None:
        idx = ties(data, d, idx)
    values = np.take_along_axis(input._data, idx, axis=d)
    if not keepdim:
        idx, values = np.squeeze(idx, d), np.squeeze(values, d)
    return _finish_pair(entry, rtype, input, values, idx, (dim, keepdim))


KTHVALUE = _pick_entry("kthvalue(Tensor input, SymInt k, int64_t dim=-1, bool keepdim=False, *, "
                       "TensorList[2] out=None)", "KthvalueBackward0", keepdim=True)
KthvalueBackward0 = KTHVALUE.node


@signature("kthvalue(Tensor input, SymInt k, int64_t dim=-1, bool keepdim=False, *, "
           "TensorList[2] out=None)")
def kthvalue(input: Tensor, k: int, dim: int = -1, keepdim: bool = False) -> Any:
    """The ``k``-th smallest element (1-based) along ``dim`` and its index; KthvalueBackward0.

    >>> import npgrad
    >>> npgrad.tensor([4., 1., 3.]).kthvalue(2).values
    tensor(3.)
    """
    data = input._data
    if data.dtype.kind == "c":  # no complex kernel in torch
        refuse_complex((NotImplementedError, '"kthvalue_cpu" not implemented for \'{dtype}\''),
                       data.dtype)
    d = wrap_dim(dim, data.ndim)
    n = data.shape[d] if data.ndim else 1
    if n == 0:  # torch's reduction check comes before its check of k
        raise IndexError(f"kthvalue(): Expected reduction dim {d} to have non-zero size.")
    if not 1 <= k <= n:
        raise RuntimeError(f"kthvalue(): selected number k out of range for dimension {d}")
    not_implemented_for("kthvalue_cpu", data.dtype, "b")
    return _pick_rank("kthvalue", KTHVALUE, return_type_kthvalue, input, k - 1, dim,
                      keepdim, ties=lambda a, ax, idx: _quick_select_ties(a, ax, idx, k - 1))


# Note [kthvalue's index among equal values]
# torch's CPU kthvalue runs a quickselect (median-of-three pivot, Hoare partition, NaN
# above every number) on each slice, and gives the index of the element that lands at
# position k - 1: among equal values, not the first.  The value is the sorted one either
# way, so only slices where it repeats replay torch's steps (``_quick_select``).
def _gt_or_nan(x: Any, y: Any) -> bool:
    return bool((x != x and y == y) or x > y)


def _quick_select(row: list, k: int) -> int:
    """The original index torch's quickselect leaves at position ``k`` of ``row``."""
    arr, ind = list(row), list(range(len(row)))

    def swap(i: int, j: int) -> None:
        arr[i], arr[j] = arr[j], arr[i]
        ind[i], ind[j] = ind[j], ind[i]

    lo, hi = 0, len(arr) - 1
    while hi > lo:
        if hi == lo + 1:
            if _gt_or_nan(arr[lo], arr[hi]):
                swap(lo, hi)
            break
        swap(lo + (hi - lo) // 2, lo + 1)
        if _gt_or_nan(arr[lo + 1], arr[hi]):
            swap(lo + 1, hi)
        if _gt_or_nan(arr[lo], arr[hi]):
            swap(lo, hi)
        if _gt_or_nan(arr[lo + 1], arr[lo]):
            swap(lo + 1, lo)
        i, j, pivot = lo + 1, hi, arr[lo]
        while True:
            i += 1
            while _gt_or_nan(pivot, arr[i]):
                i += 1
            j -= 1
            while _gt_or_nan(arr[j], pivot):
                j -= 1
            if j < i:
                break
            swap(i, j)
        swap(lo, j)
        if j <= k:
            lo = i
        if j >= k:
            hi = j - 1
    return ind[k]


def _quick_select_ties(data: np.ndarray, d: int, idx: np.ndarray, k: int) -> np.ndarray:
    rows = np.moveaxis(data, d, -1)
    n = rows.shape[-1]
    rows = rows.reshape(-1, n)
    flat = np.moveaxis(idx, d, -1).reshape(-1).copy()
    v = rows[np.arange(rows.shape[0]), flat][:, None]
    same = rows == v
    if rows.dtype.kind == "f":
        same |= np.isnan(rows) & np.isnan(v)
    for r in np.flatnonzero(same.sum(-1) > 1):
        flat[r] = _quick_select(rows[r].tolist(), k)
    return np.moveaxis(flat.reshape(np.moveaxis(idx, d, -1).shape), -1, d)


# -- median / nanmedian --------------------------------------------------------------------------

def _median_all_entry(name: str, grad_fn: str) -> General:
    """``median()`` of all elements: the gradient shared by the elements equal to it."""
    return General(
        f"{name}(Tensor input)", grad_fn=grad_fn, forward=None, saves=("self", "result"),
        derivatives={"self": lambda grad, self, result: evenly_distribute(grad, self, result)},
        tangent=lambda self_t, self, result: (
            self_t * evenly_distribute(_ones_as(result), self, result)).sum())


MEDIAN = _median_all_entry("median", "MedianBackward0")
NANMEDIAN = _median_all_entry("nanmedian", "NanmedianBackward0")
MEDIAN_DIM = _pick_entry("median(Tensor input, int64_t dim, bool keepdim=False, *, "
                         "TensorList[2] out=None)", "MedianBackward1", keepdim=True)
NANMEDIAN_DIM = _pick_entry("nanmedian(Tensor input, int64_t dim, bool keepdim=False, *, "
                            "TensorList[2] out=None)", "NanmedianBackward1", keepdim=True)
MedianBackward0, NanmedianBackward0 = MEDIAN.node, NANMEDIAN.node
MedianBackward1, NanmedianBackward1 = MEDIAN_DIM.node, NANMEDIAN_DIM.node


def _check_median_nonempty(op: str, data: np.ndarray, d: int | None) -> None:
    if d is not None and data.shape[d] == 0:
        raise IndexError(f"{op}(): Expected reduction dim {d} to have non-zero size.")


@signature("median(Tensor input)",
           "median(Tensor input, int64_t dim, bool keepdim=False, *, TensorList[2] out=None)")
def median(input: Tensor, dim: Any = None, keepdim: bool = False) -> Any:
    """Lower median: of all elements (MedianBackward0) or (values, indices) along ``dim``
    (MedianBackward1).  NaN, if present, is the median.

    >>> import npgrad
    >>> npgrad.tensor([4., 1., 3., 2.]).median()
    tensor(2.)
    """
    return _median("median", input, dim, keepdim, nan_skip=False)


@signature("nanmedian(Tensor input)",
           "nanmedian(Tensor input, int64_t dim, bool keepdim=False, *, TensorList[2] out=None)")
def nanmedian(input: Tensor, dim: Any = None, keepdim: bool = False) -> Any:
    """:func:`median` ignoring NaNs (NaN only where a slice is all NaN).

    >>> import npgrad
    >>> npgrad.tensor([4., float('nan'), 3.]).nanmedian()
    tensor(3.)
    """
    return _median("nanmedian", input, dim, keepdim, nan_skip=True)


def _median(op: str, input: Tensor, dim: Any, keepdim: bool, nan_skip: bool) -> Any:
    data = input._data
    if data.dtype.kind == "c":  # no complex kernel in torch
        refuse_complex((NotImplementedError, '"median_cpu" not implemented for \'{dtype}\''),
                       data.dtype)
    if dim is None:
        if data.size == 0:
            out = np.asarray(np.nan, dtype=data.dtype)
            return (NANMEDIAN if nan_skip else MEDIAN).record((input,), out)
        not_implemented_for("median_cpu", data.dtype, "b")
        flat = np.sort(data.reshape(-1), kind="stable")  # NaNs last
        n = flat.size
        if nan_skip:
            n -= int(np.isnan(flat).sum()) if flat.dtype.kind == "f" else 0
            n = max(n, 1)
        elif flat.dtype.kind == "f" and np.isnan(flat[-1]):
            n = 1
            flat = flat[-1:]
        out = np.asarray(flat[(n - 1) // 2])
        return (NANMEDIAN if nan_skip else MEDIAN).record((input,), out)
    d = _single_dim(op, data.ndim, dim)
    _check_median_nonempty(op, data, d)
    not_implemented_for("median_out", data.dtype, "b")
    rtype = return_type_nanmedian if nan_skip else return_type_median
    entry = NANMEDIAN_DIM if nan_skip else MEDIAN_DIM
    if d is None:
        return _pick_rank(op, entry, rtype, input, 0, dim, keepdim)
    n = data.shape[d]
    if data.dtype.kind == "f":
        nans = np.isnan(data).sum(axis=d)
        if nan_skip:
            rank = np.maximum(n - nans - 1, 0) // 2
        else:  # a slice with a NaN has the NaN (sorted last, at position n-1) as median
            rank = np.where(nans > 0, n - 1, (n - 1) // 2)
        return _pick_rank(op, entry, rtype, input, rank, dim, keepdim)
    return _pick_rank(op, entry, rtype, input, (n - 1) // 2, dim, keepdim)


# -- mode ------------------------------------------------------------------------------------------

MODE = _pick_entry("mode(Tensor input, int64_t dim=-1, bool keepdim=False, *, "
                   "TensorList[2] out=None)", "ModeBackward0", keepdim=True)
ModeBackward0 = MODE.node


# Note [mode with NaN]
# torch's CPU mode sorts each row with ``std::sort`` on ``a < b`` and takes the longest run
# of ``==`` values.  A NaN compares false both ways, so where it lands depends on the sort's
# steps: for rows of up to 16 elements libstdc++ runs a plain insertion sort, replayed by
# ``_insertion_order`` (``mode([nan, inf, -inf])`` is NaN at index 0, not -inf).  Longer
# rows with NaN keep NumPy's order (NaN last), which may pick another tie than torch.
def _insertion_order(row: np.ndarray) -> np.ndarray:
    order = list(range(row.size))
    for i in range(1, row.size):
        item = order[i]
        v = row[item]
        if v < row[order[0]]:  # libstdc++'s __insertion_sort: a new minimum moves to front
            order[1:i + 1] = order[0:i]
            order[0] = item
            continue
        j = i
        while v < row[order[j - 1]]:  # __unguarded_linear_insert
            order[j] = order[j - 1]
            j -= 1
        order[j] = item
    return np.array(order, dtype=np.int64)


@signature("mode(Tensor input, int64_t dim=-1, bool keepdim=False, *, TensorList[2] out=None)")
def mode(input: Tensor, dim: int = -1, keepdim: bool = False) -> Any:
    """The most frequent value along ``dim`` (the smallest one on ties) and its last index.

    >>> import npgrad
    >>> npgrad.tensor([2., 1., 2., 1., 3.]).mode()
    npgrad.return_types.mode(
    values=tensor(1.),
    indices=tensor(3))
    """
    data = input._data
    if data.dtype.kind == "c":  # no complex kernel in torch
        refuse_complex((NotImplementedError, '"mode_cpu" not implemented for \'{dtype}\''),
                       data.dtype)
    d = _single_dim("mode", data.ndim, dim)
    if d is None:
        return _finish_pair(MODE, return_type_mode, input, data.copy(),
                            np.zeros((), np.int64), (dim, keepdim))
    _check_median_nonempty("mode", data, d)
    moved = np.moveaxis(data, d, -1)
    rows = moved.reshape(-1, moved.shape[-1])
    best_idx = np.empty(rows.shape[0], np.int64)
    nan_rows = np.isnan(rows).any(axis=-1) if rows.dtype.kind == "f" else None
    for r, row in enumerate(rows):
        short_nan = nan_rows is not None and nan_rows[r] and row.size <= 16
        order = _insertion_order(row) if short_nan else np.argsort(row, kind="stable")
        s = row[order]
        # runs of equal values in sorted order (a NaN is a run of its own): the longest,
        # the first (smallest) on ties
        starts = np.flatnonzero(np.r_[True, s[1:] != s[:-1]])
        lengths = np.diff(np.r_[starts, s.size])
        run = int(np.argmax(lengths))
        members = order[starts[run]:starts[run] + lengths[run]]
        best_idx[r] = members[-1] if short_nan else members.max()
    idx = np.moveaxis(best_idx.reshape(moved.shape[:-1] + (1,)), -1, d)
    values = np.take_along_axis(data, idx, axis=d)
    if not keepdim:
        idx, values = np.squeeze(idx, d), np.squeeze(values, d)
    return _finish_pair(MODE, return_type_mode, input, values, idx, (dim, keepdim))


# -- unique / bincount / histc / logspace (no gradient) --------------------------------------------

def _no_derivative(op: str) -> Any:
    """torch's backward of an op recorded without a derivative (unique's ops)."""
    raise NotImplementedError(f"the derivative for '{op}' is not implemented.")


def _no_tangent(op: str) -> Any:
    raise forward_ad_missing(op)


UNIQUE2 = General(
    "_unique2(Tensor input, bool sorted=True, bool return_inverse=False, "
    "bool return_counts=False)", grad_fn="Unique2Backward0", forward=None,
    derivatives={"self": lambda grad: _no_derivative("_unique2")},
    tangent=lambda: _no_tangent("_unique2"))
UNIQUE_DIM = General(
    "unique_dim(Tensor input, int64_t dim, bool sorted=True, bool return_inverse=False, "
    "bool return_counts=False)", grad_fn="UniqueDimBackward0", forward=None,
    derivatives={"self": lambda grad: _no_derivative("unique_dim")},
    tangent=lambda: _no_tangent("unique_dim"))
Unique2Backward0, UniqueDimBackward0 = UNIQUE2.node, UNIQUE_DIM.node


_UNIQUE2 = checker("_unique2(Tensor input, bool sorted=True, bool return_inverse=False, "
                   "bool return_counts=False)")
_UNIQUE_DIM = checker("unique_dim(Tensor input, int64_t dim, bool sorted=True, "
                      "bool return_inverse=False, bool return_counts=False)")


def unique(input: Tensor, sorted: bool = True, return_inverse: bool = False,
           return_counts: bool = False, dim: int | None = None) -> Any:
    """The distinct elements (or slices along ``dim``), sorted, with the inverse map and counts
    when asked for.  Not differentiable (as in torch, the result has a grad_fn that refuses).

    >>> import npgrad
    >>> npgrad.unique(npgrad.tensor([3, 1, 3]), return_counts=True)
    (tensor([1, 3]), tensor([1, 2]))
    """
    # torch.unique is Python: it calls one of these C ops with the flags as keywords
    if dim is not None:
        _UNIQUE_DIM(input, dim, sorted=sorted, return_inverse=return_inverse,
                    return_counts=return_counts)
    else:
        _UNIQUE2(input, sorted=sorted, return_inverse=return_inverse,
                 return_counts=return_counts)
    data = input._data
    if dim is None:
        values, inverse, counts = np.unique(data.reshape(-1), return_inverse=True,
                                            return_counts=True, equal_nan=False)
        inverse = inverse.reshape(data.shape)
        entry = UNIQUE2
    else:
        d = wrap_dim(dim, data.ndim)
        moved = np.moveaxis(data, d, 0)
        flat = moved.reshape(moved.shape[0], -1)
        rows, inverse, counts = np.unique(flat, axis=0, return_inverse=True, return_counts=True)
        values = np.moveaxis(rows.reshape((-1,) + moved.shape[1:]), 0, d)
        inverse = inverse.reshape(-1)
        entry = UNIQUE_DIM
    res = entry.record((input,), np.asarray(values, order="C"))
    mode = _tls.mode
    out: tuple = (res,)
    if return_inverse:
        out += (wrap(np.asarray(inverse, dtype=np.int64, order="C"), mode),)
    if return_counts:
        out += (wrap(np.asarray(counts, dtype=np.int64), mode),)
    return out[0] if len(out) == 1 else out


@signature("bincount(Tensor input, Tensor? weights=None, SymInt minlength=0, *, Tensor out=None)")
def bincount(input: Tensor, weights: Tensor | None = None, minlength: int = 0) -> Tensor:
    """How often each value 0, 1, ... occurs in a 1-D non-negative integer tensor (or the
    sum of ``weights`` at those positions).

    >>> import npgrad
    >>> npgrad.bincount(npgrad.tensor([0, 2, 2]))
    tensor([1, 0, 2])
    """
    from .. import _dtype

    data = input._data
    if data.dtype.kind not in "iub":
        raise NotImplementedError("\"bincount_cpu\" not implemented for "
                                  f"'{_dtype.from_np(data.dtype).scalar_name}'")
    if data.ndim != 1 or (data.size and data.min() < 0):
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    if minlength < 0:
        raise RuntimeError("minlength should be >= 0")
    if weights is None:
        out = np.bincount(data, minlength=minlength).astype(np.int64)
    else:
        w = weights._data
        wt = w.dtype if w.dtype.kind == "f" else np.dtype(np.float64)
        out = np.bincount(data, weights=w.astype(np.float64), minlength=minlength).astype(wt)
    return wrap(out, _tls.mode)


@signature("histc(Tensor input, int64_t bins=100, Scalar min=0, Scalar max=0, *, Tensor out=None)")
def histc(input: Tensor, bins: int = 100, min: float = 0, max: float = 0) -> Tensor:  # noqa: A002
    """Histogram of ``bins`` equal-width bins over [min, max] (the data's range when both are
    0); elements outside are ignored, ``max`` itself falls in the last bin.

    >>> import npgrad
    >>> npgrad.histc(npgrad.tensor([1., 2., 1.]), bins=4, min=0, max=3)
    tensor([0., 2., 1., 0.])
    """
    from .. import _dtype

    data = input._data
    if data.dtype.kind != "f":
        raise NotImplementedError("\"histogram_cpu\" not implemented for "
                                  f"'{_dtype.from_np(data.dtype).scalar_name}'")
    if bins <= 0:
        raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {bins} for dimension 0")
    lo, hi = float(min), float(max)
    if lo == hi and data.size:
        lo, hi = float(data.min()), float(data.max())
    if lo == hi:
        lo, hi = lo - 1, hi + 1
    if lo > hi:
        raise RuntimeError("torch.histc: max must be larger than min")
    x = data.reshape(-1)
    x = x[(x >= lo) & (x <= hi)]
    pos = np.floor((x - lo) * bins / (hi - lo)).astype(np.int64)
    pos = np.minimum(pos, bins - 1)
    out = np.bincount(pos, minlength=bins).astype(data.dtype)
    return wrap(out, _tls.mode)


# -- quantile / nanquantile ----------------------------------------------------------------------

_INTERPOLATIONS = ("linear", "lower", "higher", "midpoint", "nearest")


def _quantile(op: str, input: Tensor, q: Any, dim: Any, keepdim: bool, interpolation: str,
              ignore_nan: bool) -> Tensor:
    from .pointwise import lerp
    from .shape import permute, reshape

    data = input._data
    q_arr = q._data if isinstance(q, Tensor) else np.asarray(q, dtype=np.float64)
    if data.size == 0:
        raise RuntimeError(f"{op}() input tensor must be non-empty")
    if q_arr.ndim > 1:
        raise RuntimeError(f"{op}() q must be a scalar or 1D tensor")
    if data.dtype not in (np.float32, np.float64):
        raise RuntimeError(f"{op}() input tensor must be either float or double dtype")
    if isinstance(q, Tensor) and q._data.dtype != data.dtype:
        raise RuntimeError(f"{op}() q tensor must be same dtype as the input tensor")
    if interpolation not in _INTERPOLATIONS:
        raise RuntimeError(f"{op}() interpolation must be one of linear, lower, higher, midpoint "
                           f"or nearest, but got {interpolation}")
    outside = ~((q_arr >= 0) & (q_arr <= 1))  # NaN is outside too
    if outside.any():
        bad = float(q_arr[outside].flat[0])
        if isinstance(q, Tensor):
            raise RuntimeError(f"{op}() q values must be in the range [0, 1]")
        raise RuntimeError(f"{op}() q must be in the range [0, 1] but got {bad:g}")
    # Bring the reduced elements to the last axis, sort them (NaN last).
    if dim is None:
        rows = reshape(input, (-1,))
        kept: list = [1] * data.ndim if keepdim else []
    else:
        d = wrap_dim(dim, data.ndim)
        if data.ndim == 0:
            rows = reshape(input, (1,))
            kept = []
        else:
            rows = permute(input, [i for i in range(data.ndim) if i != d] + [d])
            kept = [1 if (i == d and keepdim) else s for i, s in enumerate(data.shape)
                    if i != d or keepdim]
    values = sort(rows, -1)[0]
    vd = values._data
    n = vd.shape[-1]
    qs = q_arr.reshape(-1).astype(np.float64)
    if ignore_nan:
        valid = (~np.isnan(vd)).sum(axis=-1, keepdims=True)
        ranks = qs * np.maximum(valid - 1, 0)
        ranks = np.where(valid == 0, n - 1, ranks)
    else:
        has_nan = np.isnan(vd).any(axis=-1, keepdims=True)
        ranks = np.where(has_nan, n - 1, qs * (n - 1) + np.zeros(vd.shape[:-1] + (1,)))
    below = np.floor(ranks).astype(np.int64)
    above = np.ceil(ranks).astype(np.int64)
    if interpolation == "lower":
        out = gather(values, -1, wrap(below, 0))
    elif interpolation == "higher":
        out = gather(values, -1, wrap(above, 0))
    elif interpolation == "nearest":
        out = gather(values, -1, wrap(np.round(ranks).astype(np.int64), 0))
    else:
        lo, hi = gather(values, -1, wrap(below, 0)), gather(values, -1, wrap(above, 0))
        w = np.full(ranks.shape, 0.5) if interpolation == "midpoint" else ranks - below
        out = lerp(lo, hi, wrap(w.astype(vd.dtype), 0))
    if q_arr.ndim == 1:  # the q axis goes first
        nd = out._data.ndim
        out = permute(out, [nd - 1] + list(range(nd - 1)))
        shape = (qs.size,) + tuple(kept)
    else:
        shape = tuple(kept)
    # torch's last step is an in-place squeeze_(-1) of this fresh result (SqueezeBackward4)
    if out._data.shape != shape + (1,):
        out = reshape(out, shape + (1,))
    return squeeze_fresh_(out, -1)


@signature("quantile(Tensor input, Tensor q, int64_t? dim=None, bool keepdim=False, *, "
           'c10::string_view interpolation="linear", Tensor out=None)',
           "quantile(Tensor input, double q, int64_t? dim=None, bool keepdim=False, *, "
           'c10::string_view interpolation="linear", Tensor out=None)')
def quantile(input: Tensor, q: Any, dim: Any = None, keepdim: bool = False, *,
             interpolation: str = "linear") -> Tensor:
    """The ``q``-quantiles over ``dim`` (all elements by default), interpolating between the
    sorted elements as ``interpolation`` says; NaN wherever a slice holds a NaN.

    >>> import npgrad
    >>> npgrad.quantile(npgrad.tensor([1., 2., 3., 4.]), 0.5)
    tensor(2.5000)
    """
    return _quantile("quantile", input, q, dim, keepdim, interpolation, ignore_nan=False)


@signature("nanquantile(Tensor input, Tensor q, int64_t? dim=None, bool keepdim=False, *, "
           'c10::string_view interpolation="linear", Tensor out=None)',
           "nanquantile(Tensor input, double q, int64_t? dim=None, bool keepdim=False, *, "
           'c10::string_view interpolation="linear", Tensor out=None)')
def nanquantile(input: Tensor, q: Any, dim: Any = None, keepdim: bool = False, *,
                interpolation: str = "linear") -> Tensor:
    """:func:`quantile` ignoring NaNs (NaN only for a slice that is all NaN).

    >>> import npgrad
    >>> npgrad.nanquantile(npgrad.tensor([1., float('nan'), 3.]), 0.5)
    tensor(2.)
    """
    # torch shares quantile's checks, messages included ("quantile() ...")
    return _quantile("quantile", input, q, dim, keepdim, interpolation, ignore_nan=True)
