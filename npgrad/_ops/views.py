"""In-place writes through views of tensors in a graph: torch's CopySlices and AsStrided nodes.

Note [In-place on a view]
Writing into a view changes its base, so the base's history must change too.
As torch does, the base gets a ``CopySlices`` node wrapping the in-place op's
own node ``fn``.  In backward, CopySlices takes the base's gradient, cuts out
the view's region (by its strides and offset in the base's storage: every
NumPy view of the base can be described that way), runs ``fn`` on that region,
puts ``fn``'s gradient for the old view value back into the region, and passes
the rest of the base's gradient through unchanged.  The view itself gets an
``AsStridedBackward0`` node over the base's new history (the ``as_strided`` entry's,
npgrad/_ops/as_strided.py), as does a view whose base was written since it was made.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable

import numpy as np

from .._forward import FW, has_tangent, new_tangent, share_tangent, write_tangent
if TYPE_CHECKING:
    from .._tensor import Tensor
else:  # Note [Tensor base and Tensor] in npgrad._tensor_base
    from .._tensor_base import TensorBase as Tensor
from .._tensor_base import make_tensor
from ..autograd.graph import edge_of
from .._mode import _tls, RECORDING
from .._storage import locate
from ._core import Node, check_not_freed, new_node
from .as_strided import strided_view
from .inplace import adopt_result, keep_old_value, write_inplace


class Geometry:
    """Where a view lies in its base's storage: shape, strides and offset in elements.

    ``parts``: the view reads a complex base as its real parts' dtype (``real``, ``imag``,
    ``view_as_real``: "f") or a real base as complex numbers (``view_as_complex``: "c"), so
    its elements are of the other size; "" for a view of the base's own dtype.
    """

    __slots__ = ("shape", "strides", "offset", "parts")

    def __init__(self, shape: tuple, strides: tuple, offset: int, parts: str = "") -> None:
        self.shape, self.strides, self.offset = shape, strides, offset
        self.parts = parts

    @classmethod
    def of(cls, view: np.ndarray, base: np.ndarray) -> Geometry:
        if not base.flags.c_contiguous and base_strides(base) is None:
            raise RuntimeError("npgrad: an in-place write through a view of a tensor in a graph "
                               "needs a C-contiguous base; call .contiguous() on the base first")
        item = view.itemsize
        start = view.__array_interface__["data"][0] - base.__array_interface__["data"][0]
        parts = view.dtype.kind if (view.dtype.kind == "c") != (base.dtype.kind == "c") else ""
        return cls(view.shape, tuple(s // item for s in view.strides), start // item, parts)


# Note [Views of a strided base]
# A base need not be C-contiguous (``x.t() * 1`` keeps the transposed layout, as torch's
# does).  Offsets and strides of a Geometry are in the base's storage either way; what the
# layout changes is the base's gradient, which CopySlices lays out as the base is laid out
# (torch's ``new_empty_strided(base.sizes(), base.strides())``) before cutting the region.
# Bases with overlapping or negative strides keep the refusal.
def base_strides(base: np.ndarray) -> tuple | None:
    """The element strides of a non-overlapping base laid out with positive strides (a
    permutation or slice of a dense block), or None for any other."""
    item = base.itemsize
    if base.size == 0 or any(s <= 0 and n > 1 for n, s in zip(base.shape, base.strides)) \
            or any(s % item for s in base.strides):
        return None
    dims = sorted((s // item, n) for n, s in zip(base.shape, base.strides) if n > 1)
    reach = 1
    for stride, n in dims:  # each dim must step over all the smaller ones
        if stride < reach:
            return None
        reach = stride * n
    return tuple(s // item for s in base.strides)


def refresh_view_grad_fn(view: Tensor) -> Any:
    """The view's grad_fn, rebuilt over its base's history if that changed since it was set.

    Note [Stale view history]
    A view's grad_fn describes how it was cut from its base *when it was made*.
    After an in-place write to the base or to another view of it (recorded or
    not: the shared version counter moved), torch rebuilds the view's grad_fn as
    an ``AsStridedBackward0`` over the base's current history.  The node of a
    view op remembers the version it saw (``_view_version``); a mismatch means
    stale.  Views made without recording keep their (absent) history.
    """
    fn = view._grad_fn
    extra = view._extra
    if extra is not None and extra.view_info is not None:
        _refuse_stale_special_view(view, extra.view_info, fn)
    if fn is None:
        return None
    seen = getattr(fn, "_view_version", None)
    vc = view._vc
    if seen is None or vc is None or seen == vc.version:
        return fn
    base = view._base
    if not base._data.flags.c_contiguous and base_strides(base._data) is None:
        return fn
    return _rebuild_history(view, base, Geometry.of(view._data, base._data))


def _rebuild_history(view: Tensor, base: Tensor, geometry: Geometry) -> Any:
    """Give ``view`` torch's history of a view of ``base``'s current history: the as_strided
    view of ``base`` at ``geometry`` (of its real or complex view first, for a view of the
    other dtype), recorded whatever the grad mode, as torch rebuilds it."""
    previous, _tls.mode = _tls.mode, RECORDING
    active, FW.active = FW.active, False
    try:
        node = as_strided(base, geometry)._grad_fn
    finally:
        _tls.mode, FW.active = previous, active
    node._view_version = view._vc.version
    view._grad_fn = node
    view._output_nr = 0
    return node


NO_GRAD_VIEW_MODIFIED_MSG = (
    "A view was created in no_grad mode and its base or another view of its base has been "
    "modified inplace with grad mode enabled. Given that this use case is ambiguous and "
    "error-prone, it is forbidden. You can clarify your code by moving both the view and the "
    "inplace either both inside the no_grad block (if you don't want the inplace to be "
    "tracked) or both outside (if you want the inplace to be tracked)."
)


def _refuse_stale_special_view(view: Tensor, info: Any, fn: Any) -> None:
    """A view made under no_grad, or one of several views, whose storage was written since.

    torch cannot say what such a view's history should be, so asking for it
    (grad_fn, is_leaf, using the view in a recorded op) raises.
    """
    vc = view._vc
    if info.version is None or vc is None or vc.version == info.version:
        return
    if info.created_in_no_grad:
        raise RuntimeError(NO_GRAD_VIEW_MODIFIED_MSG)
    if info.multi_output and fn is not None:
        name = fn.name()
        cut = name.rfind("Backward")
        raise RuntimeError(
            f"Output {view._output_nr} of {name[:cut] if cut > 0 else name} is a view and its "
            "base or another view of its base has been modified inplace. This view is the "
            "output of a function that returns multiple views. Such functions do not allow the "
            "output views to be modified inplace. You should replace the inplace operation by "
            "an out-of-place one.")


def as_strided(input: Tensor, geometry: Geometry) -> Tensor:
    """The region ``geometry`` of a C-contiguous ``input`` shaped like the base, as torch cuts
    it: ``input.as_strided(...)`` (AsStridedBackward0), of ``view_as_real(input)`` (or
    ``view_as_complex``) first when the region reads the other dtype."""
    from .complex import view_as_complex, view_as_real

    if geometry.parts == "f" and input._data.dtype.kind == "c":
        input = view_as_real(input)
    elif geometry.parts == "c" and input._data.dtype.kind != "c":
        input = view_as_complex(input.reshape(-1, 2))
    start = locate(input._data).offset
    return strided_view(input, geometry.shape, geometry.strides, start + geometry.offset)


class CopySlices(Node):
    """The base's grad_fn after an in-place op wrote into one of its views."""

    __slots__ = ("fn", "geometry", "view_meta", "base_layout")

    def name(self) -> str:
        return "torch::autograd::CopySlices"

    def _release_saved(self) -> None:
        # As torch's: freeing the graph frees the wrapped op's saved values and the wrapped
        # op itself is gone, so a second backward through a CopySlices always raises.
        self.fn._release_saved()
        super()._release_saved()

    def backward(self, grad: Tensor) -> tuple:
        from .broadcast import sum_to_size
        from .shape import clone

        check_not_freed(self)
        if self.base_layout is None:
            grad_base = clone(grad.contiguous())
        else:  # Note [Views of a strided base]
            from .._creation import empty_strided

            grad_base = empty_strided(grad.shape, self.base_layout, dtype=grad.dtype)
            grad_base.copy_(grad)
        region = as_strided(grad_base, self.geometry)
        fn_grads = self.fn.backward(clone(region))
        old_view_grad = fn_grads[0]
        if self.next_functions[0][0] is not None:
            if old_view_grad is None:
                region.zero_()
            else:
                if old_view_grad._data.shape != self.view_meta:
                    old_view_grad = sum_to_size(old_view_grad, self.view_meta)
                region.copy_(old_view_grad)
        return (grad_base,) + tuple(fn_grads[1:])


def inplace_on_view(view: Tensor, op: Callable, args: tuple, kwargs: dict,
                    write_where: Any = None) -> Tensor:
    """A recorded in-place op on ``view``: see Note [In-place on a view]."""
    old = make_tensor(view._data, view._grad_fn, True, None)
    old._output_nr = view._output_nr
    if FW.active and has_tangent(view):
        share_tangent(old, view)
    res = op(old, *args, **kwargs)
    tangent = new_tangent(view, res)  # also settles res's node's edges before they are copied
    keep_old_value(old, res)
    write_inplace(view, res._data, write_where)
    write_tangent(view, tangent)
    fn = res._grad_fn
    adopt_result(view, old, res)
    rebase_on_copy_slices(view, fn)
    return view


def rebase_on_copy_slices(view: Tensor, fn: Any) -> None:
    """After ``fn`` wrote into ``view`` in place: the base's history becomes a CopySlices
    over ``fn`` (the write into the region the view covers) and the view's an
    AsStridedBackward0 over that (Note [In-place on a view]); also what a custom
    Function's ``ctx.mark_dirty()`` on a view does."""
    base = view._base
    geometry = Geometry.of(view._data, base._data)
    copy_slices = new_node(CopySlices, (edge_of(base),) + fn.next_functions[1:], base._data)
    copy_slices.fn = fn
    copy_slices.geometry = geometry
    copy_slices.view_meta = view._data.shape
    copy_slices.base_layout = None if base._data.flags.c_contiguous else base_strides(base._data)
    base._grad_fn = copy_slices
    base._output_nr = 0
    base._requires_grad = True
    _rebuild_history(view, base, geometry)
    view._requires_grad = True

