"""Forward-mode AD state: the dual level, and where tangents live.

Note [Tangents]
Inside ``forward_ad.dual_level()`` a tensor may carry a *tangent* (torch's
forward gradient): a tensor of its shape, kept in ``TensorExtra.tangent``.  An
op whose inputs carry tangents gives its output the Jacobian-vector product
of those tangents.  The level is one global flag (``FW.active``), as torch's
dual level is process-wide, not per thread; with no level open the op layer
pays one attribute read per op for all of this.

Tangents are independent of grad mode: ``no_grad`` does not stop them, and
inference mode drops them (its outputs have none).

Note [Tangents computed eagerly]
An op computes its output's tangent at once, with the output, as torch does: the op's
registry entry knows all of its parameters before the output exists (Note [Tangents
computed at once] in npgrad._ops.registry), so no node is built for a tangent alone and
nothing waits to be computed later.  A rule that is the transpose of a backward rule
(npgrad.autograd.forward_rules) runs that rule on a node built for the purpose; an input
that carries a tangent but has no history gets a placeholder edge there
(``FORWARD_EDGE``), so that the rule computes its part, and the node is never seen by
anyone else.

Note [Tangents share the layout of their tensors]
torch's tangent of a view is the same view of its base's tangent: an in-place
op through the view then updates the base's tangent too.  npgrad keeps every
tangent laid out like its tensor's data (same strides, scaled by the
item-size ratio when the tangent has another dtype), so the tangent of a view
is found with the view's own byte offset and strides, for every kind of view,
with no per-op rule.
"""
from __future__ import annotations

import weakref
from typing import Any

import numpy as np

from ._mode import _tls, RECORDING

NO_LEVEL_MSG = ("Trying to create a dual Tensor for forward AD but no level exists, make sure "
                "to enter_dual_level() first.")


class DualState:
    """The process-wide forward-AD level and the tangents that belong to it."""

    __slots__ = ("active", "level", "duals", "prune_at")

    def __init__(self) -> None:
        self.active = False
        self.level = -1
        self.duals: list = []  # weakrefs to every tensor given a tangent at this level
        self.prune_at = 1024  # drop dead weakrefs when ``duals`` grows past this


FW = DualState()


def _remember(t: Any) -> None:
    """Note ``t`` as carrying a tangent, so leaving the level can drop it."""
    FW.duals.append(weakref.ref(t))
    if len(FW.duals) > FW.prune_at:  # a long level (a loop of dual ops) must not grow forever
        FW.duals = [ref for ref in FW.duals if ref() is not None]
        FW.prune_at = max(1024, 2 * len(FW.duals))


class _ForwardEdge:
    """The placeholder edge target of Note [Tangents computed eagerly]; never run."""

    __slots__ = ()
    next_functions: tuple = ()
    # a node's edge slots (Note [Edges in the node] in autograd/graph.py): none
    _n_edges = 0
    _fn0 = _fn1 = _edges = None
    _nr0 = _nr1 = 0

    def name(self) -> str:
        return "ForwardEdge"


FORWARD_EDGE = _ForwardEdge()


# -- where tangents live -------------------------------------------------------------

def tangent_of(t: Any) -> Any:
    """The tangent of tensor ``t`` at the open level, or None."""
    extra = t._extra
    return None if extra is None else extra.tangent


def has_tangent(t: Any) -> bool:
    extra = t._extra
    return extra is not None and extra.tangent is not None


def _dual_extra(t: Any) -> Any:
    """``t``'s TensorExtra, made if needed, with ``t`` remembered as carrying a tangent."""
    from ._tensor_base import TensorExtra

    extra = t._extra
    if extra is None:
        extra = t._extra = TensorExtra()
    if extra.tangent is None:
        _remember(t)
    return extra


def set_tangent(t: Any, tangent: Any) -> None:
    """Give ``t`` the tangent ``tangent`` (laid out like ``t``, see Note [Tangents share ...])."""
    from ._tensor_base import wrap

    extra = _dual_extra(t)
    laid_out = laid_out_like(tangent._data, t._data)
    if laid_out is not tangent._data:
        if tangent._requires_grad and _tls.mode == RECORDING:
            tangent = _recorded_copy_like(tangent, t._data)
        else:
            tangent = wrap(laid_out, 0)
    extra.tangent = tangent


def _recorded_copy_like(tangent: Any, primal: np.ndarray) -> Any:
    """A copy of ``tangent`` laid out as ``layout``, recorded: it keeps the tangent's history.

    The copy is written through a view of a fresh buffer (``copy_`` into it is
    recorded), so its gradient flows back to ``tangent`` (reverse over forward).
    """
    from ._ops.views import Geometry, as_strided
    from ._tensor_base import wrap

    if tangent._data.shape != primal.shape:
        tangent = tangent.expand(primal.shape)
    if primal.flags.c_contiguous:
        return tangent.clone().contiguous()
    data, offset = _buffer_for(primal, tangent._data.dtype)
    strides = tuple(s // primal.itemsize for s in primal.strides)
    region = as_strided(wrap(data, 0), Geometry(primal.shape, strides, offset))
    return region.copy_(tangent)


def check_tangent_size(t: Any, tangent: Any) -> None:
    if tangent._data.shape != t._data.shape:
        raise RuntimeError(
            "Trying to set a forward gradient that has a different size than that of the original "
            f"Tensor, this is not supported. Tensor is of size {_size(t)} while the given "
            f"forward gradient is of size {_size(tangent)}.")


def _size(t: Any) -> str:
    return "[" + ", ".join(str(n) for n in t._data.shape) + "]"


def drop_all_tangents() -> None:
    """Leaving the level: every tangent is forgotten."""
    for ref in FW.duals:
        t = ref()
        if t is not None and t._extra is not None:
            t._extra.tangent = None
    FW.duals = []


# -- layouts ---------------------------------------------------------------------------

def _extent(shape: tuple, strides: tuple) -> tuple:
    """Lowest and highest byte offset (from element 0) an array with these strides touches."""
    lo = hi = 0
    for n, s in zip(shape, strides):
        if n == 0:
            return 0, -1
        if s < 0:
            lo += (n - 1) * s
        else:
            hi += (n - 1) * s
    return lo, hi


def _scaled(strides: tuple, ratio_num: int, ratio_den: int) -> tuple:
    return tuple(s * ratio_num // ratio_den for s in strides)


def laid_out_like(values: np.ndarray, primal: np.ndarray) -> np.ndarray:
    """``values`` (of ``primal``'s shape) in an array whose strides mirror ``primal``'s."""
    if values.shape != primal.shape:
        values = np.broadcast_to(values, primal.shape)
    want = _scaled(primal.strides, values.itemsize, primal.itemsize)
    # a read-only array (a broadcast: overlapping memory) cannot hold a tangent written in place
    if values.strides == want and values.flags.writeable:
        return values
    if primal.flags.c_contiguous:
        return np.array(values, order="C", copy=True)
    if primal.flags.f_contiguous:
        return np.array(values, order="F", copy=True)
    buffer, offset = _buffer_for(primal, values.dtype)
    out = _array_at(buffer, offset * values.itemsize, primal.shape, want)
    out[...] = values
    return out


def _buffer_for(primal: np.ndarray, dtype: np.dtype) -> tuple:
    """A zero 1-D buffer of ``dtype`` spanning ``primal``'s memory, and the element offset of
    ``primal``'s first element in it."""
    item = np.dtype(dtype).itemsize
    lo, hi = _extent(primal.shape, _scaled(primal.strides, item, primal.itemsize))
    span = (hi - lo) // item + 1 if hi >= lo else 0
    return np.zeros(span, dtype=dtype), -lo // item


class _Interface:
    """An object NumPy reads an array from: a raw address plus a reference keeping it alive."""

    __slots__ = ("__array_interface__", "owner")

    def __init__(self, interface: dict, owner: Any) -> None:
        self.__array_interface__ = interface
        self.owner = owner


def _array_at(buffer: np.ndarray, byte_offset: int, shape: tuple, strides: tuple,
              dtype: np.dtype | None = None) -> np.ndarray:
    """The array of ``shape``/``strides`` (and ``dtype``, the buffer's by default) starting
    ``byte_offset`` bytes into ``buffer``."""
    address = buffer.__array_interface__["data"][0] + byte_offset
    dt = buffer.dtype if dtype is None else dtype
    interface = {"shape": tuple(shape), "strides": tuple(strides), "typestr": dt.str,
                 "descr": dt.descr, "data": (address, False), "version": 3}
    return np.asarray(_Interface(interface, buffer))


def view_tangent(view_data: np.ndarray, source: Any) -> Any:
    """The part of ``source``'s tangent that a view with data ``view_data`` of it covers.

    ``view_data`` must lie inside the memory of ``source``'s data (true of every
    view of ``source`` itself); returns None when it does not.
    """
    tangent = tangent_of(source)
    if tangent is None:
        return None
    src = source._data
    tan = tangent._data
    num, den = tan.itemsize, src.itemsize
    if tan.strides != _scaled(src.strides, num, den):
        return None
    start = view_data.__array_interface__["data"][0] - src.__array_interface__["data"][0]
    v_lo, v_hi = _extent(view_data.shape, view_data.strides)
    s_lo, s_hi = _extent(src.shape, src.strides)
    if v_hi >= v_lo and not (s_lo <= start + v_lo
                             and start + v_hi + view_data.itemsize <= s_hi + src.itemsize):
        return None
    from ._tensor_base import version_counter, wrap

    # a view of other dtype (a complex tensor's real parts, or its real pairs, and back) reads
    # the same bytes of a tangent of its source's own dtype as of the source
    retyped = view_data.dtype != src.dtype and tan.dtype == src.dtype
    region = _array_at(tan, start * num // den, view_data.shape,
                       _scaled(view_data.strides, num, den),
                       view_data.dtype if retyped else None)
    root = tangent if tangent._base is None else tangent._base
    if (tangent._requires_grad and not retyped and _tls.mode == RECORDING
            and root._data.flags.c_contiguous):
        # A tangent in a graph (reverse over forward): its part is a recorded view of it.
        from ._ops.views import Geometry, as_strided

        return as_strided(root, Geometry.of(region, root._data))
    part = wrap(region, 0)
    part._base = root  # a view, as torch's
    part._vc = version_counter(tangent)
    return part


def give_view_tangent(view: Any, source: Any) -> None:
    """Give ``view`` (made from ``source``) the matching part of ``source``'s tangent."""
    root = view._base
    tangent = None
    if root is not None and root is not source and has_tangent(root):
        tangent = view_tangent(view._data, root)
    if tangent is None:
        tangent = view_tangent(view._data, source)
    if tangent is None:
        raise RuntimeError("npgrad: forward-mode AD cannot find the tangent of this view: its "
                           "memory is not inside the memory of the tensor it was made from.")
    install(view, tangent)


def install(t: Any, tangent: Any) -> None:
    """Give ``t`` ``tangent`` as it is (already laid out like ``t``, or shared with a view)."""
    _dual_extra(t).tangent = tangent


# -- in-place writes -------------------------------------------------------------------

UNCHANGED = object()  # new_tangent's answer when neither side has a tangent


def share_tangent(alias: Any, t: Any) -> None:
    """``alias`` (a second tensor object over ``t``'s storage) sees ``t``'s tangent."""
    install(alias, tangent_of(t))


def new_tangent(target: Any, result: Any) -> Any:
    """The tangent an in-place write of ``result`` into ``target`` leaves on ``target``.

    Computed before the write, which may change what the rule reads.  None means
    zero (a write of values without tangent over a dual tensor), ``UNCHANGED``
    that neither has one.
    """
    if not FW.active:
        return UNCHANGED
    tangent = tangent_of(result)
    if tangent is None and not has_tangent(target):
        return UNCHANGED
    return tangent


def write_tangent(target: Any, tangent: Any) -> None:
    """Store ``tangent`` into ``target``'s tangent in place: views of it and its base see it.

    A target without one first gets zeros, from its base's tangent when it is a
    view (``base[0] = dual`` gives ``base`` a tangent that is zero elsewhere).
    """
    if tangent is UNCHANGED:
        return
    from ._tensor_base import wrap

    current = tangent_of(target)
    if current is None:
        root = target._base
        if root is not None:
            if not has_tangent(root):
                set_tangent(root, wrap(np.zeros_like(root._data), 0))
            give_view_tangent(target, root)
        else:
            set_tangent(target, wrap(np.zeros_like(target._data), 0))
        current = tangent_of(target)
    if tangent is None:
        current._data[...] = 0
    else:
        np.copyto(current._data, np.broadcast_to(tangent._data, current._data.shape),
                  casting="unsafe")
    from ._tensor_base import bump_version

    bump_version(current)  # the tangent was written in place, as torch's
