"""In-place view ops (``t_``, ``transpose_``, ``squeeze_``, ``unsqueeze_``): new shape, same data.

Note [In-place view ops]
``x.t_()`` changes ``x``'s shape and strides, never its values.  As in torch it
is still an in-place op: the same leaf check, one version bump, and ``x``
takes the node of the matching view op as its ``grad_fn``, under torch's name
for the in-place overload (``TBackward1``, ``TransposeBackward1``,
``SqueezeBackward3/4/5``, ``UnsqueezeBackward1``).  The out-of-place view op's
entry computes the array and the node; the node is then retyped to its in-place
twin (``View.twin``), a subclass with the same kept values and backward, so no
formula is repeated.
``x`` keeps its own base: a view stays a view of the same base, and its node
is marked as seen at the new version so it is not rebuilt as stale.  A
forward-mode tangent is restrided with it (the view op's tangent is shared).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable

from .._forward import FW, has_tangent, share_tangent
from .._mode import _tls
if TYPE_CHECKING:
    from .._tensor import Tensor
else:  # Note [Tensor base and Tensor] in npgrad._tensor_base
    from .._tensor_base import TensorBase as Tensor
from .._tensor_base import bump_version
from .inplace import check_inplace, refuses_inference_write, INFERENCE_INPLACE_MSG
from .shape import (SQUEEZE, SQUEEZE_DIMS, T, TRANSPOSE, UNSQUEEZE, SqueezeBackward4, squeeze, t,
                    transpose, unsqueeze)

TBackward1 = T.twin("TBackward1")
TransposeBackward1 = TRANSPOSE.twin("TransposeBackward1")
SqueezeBackward3 = SQUEEZE.twin("SqueezeBackward3")
SqueezeBackward5 = SQUEEZE_DIMS.twin("SqueezeBackward5")
UnsqueezeBackward1 = UNSQUEEZE.twin("UnsqueezeBackward1")


def _restride_(self: Tensor, twin: Any, view_op: Callable, *args: Any) -> Tensor:
    """Make ``self`` the view ``view_op(self, *args)`` in place (Note [In-place view ops])."""
    mode = _tls.mode
    if refuses_inference_write(self, mode):
        raise RuntimeError(INFERENCE_INPLACE_MSG)
    check_inplace(self, mode, False)
    res = view_op(self, *args)
    _adopt(self, res, twin)
    return self


def _adopt(self: Tensor, res: Tensor, twin: Any) -> None:
    self._data = res._data
    bump_version(self)
    if FW.active and has_tangent(res):  # the tangent takes the same new geometry
        share_tangent(self, res)
    node = res._grad_fn
    if node is None:
        return
    node.__class__ = twin
    vc = self._vc
    if vc is not None:
        node._view_version = vc.version
    self._grad_fn = node
    self._output_nr = 0
    self._requires_grad = True


def t_(self: Tensor) -> Tensor:
    nd = self._data.ndim
    if nd > 2:
        raise RuntimeError(f"t_() expects a tensor with <= 2 dimensions, but self is {nd}D")
    return _restride_(self, TBackward1, t)


def transpose_(self: Tensor, dim0: int, dim1: int) -> Tensor:
    return _restride_(self, TransposeBackward1, transpose, dim0, dim1)


swapaxes_ = swapdims_ = transpose_


def unsqueeze_(self: Tensor, dim: int) -> Tensor:
    return _restride_(self, UnsqueezeBackward1, unsqueeze, dim)


def squeeze_(self: Tensor, dim: Any = None) -> Tensor:
    if dim is None:
        return _restride_(self, SqueezeBackward3, squeeze)
    if isinstance(dim, (tuple, list)):
        return _restride_(self, SqueezeBackward5, squeeze, dim)
    return _restride_(self, SqueezeBackward4, squeeze, dim)
