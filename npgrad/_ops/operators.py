"""The Tensor operators' contract with Python: an operand the op does not take gives
NotImplemented, so Python answers as it does for torch's tensors.

Note [Operators give NotImplemented]
torch's Tensor operators turn the TypeError of an operand their op refuses into
``NotImplemented``, and so a direct call with a wrong argument count or a keyword
(``t.__add__()``, ``t.__add__(a, b)``, ``t.__add__(a, bogus=1)``) gives NotImplemented too
(a missing operand defaults to None, which no operator takes).
Python then tries the other operand's reflected method and, failing
that, raises its own error or answers for itself: ``t == None`` is ``False`` and ``t != None``
``True`` (identity), ``t / "x"`` raises "unsupported operand type(s) for /: 'Tensor' and
'str'", and ``t < None`` "'<' not supported between instances of 'Tensor' and 'NoneType'".
npgrad's op functions raise torch's TypeError for such an operand (their signature check),
and the operators built here check the operand's type first instead of catching: one
``isinstance`` on the path of every call, no exception machinery.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable

import numpy as np

if TYPE_CHECKING:
    from .._tensor import Tensor
else:  # Note [Tensor base and Tensor] in npgrad._tensor_base
    from .._tensor_base import TensorBase as Tensor
from ._core import OPERAND_TYPES  # tensors, Python and NumPy numbers, NumPy arrays (as tensors)

TENSOR_TYPES = (Tensor, np.ndarray)  # for ops whose signature takes tensors only (matmul)


def _as_operand(other: Any) -> Any:
    """A NumPy array operand enters as a tensor of its dtype, as in torch."""
    if isinstance(other, np.ndarray):
        from .._creation import tensor  # the creation layer sits above the op layer

        return tensor(other)
    return other


def operator(op: Callable[[Any, Any], Any], name: str,
             operands: tuple = OPERAND_TYPES) -> Callable[[Any, Any], Any]:
    """The Tensor method ``name`` (``"__truediv__"``) running ``op(self, other)``."""
    def dunder(self: Any, other: Any = None, *rest: Any, **bogus: Any) -> Any:
        if rest or bogus:
            return NotImplemented
        if isinstance(other, Tensor) or (isinstance(other, operands)
                                     and not isinstance(other, np.ndarray)):
            return op(self, other)
        if isinstance(other, operands):
            return op(self, _as_operand(other))
        return NotImplemented

    dunder.__name__ = dunder.__qualname__ = name
    dunder.__doc__ = (f"``self {name} other``: {op.__name__}, or NotImplemented for an operand "
                      "it does not take (Note [Operators give NotImplemented]).")
    return dunder


def reflected_operator(op: Callable[[Any, Any], Any], name: str,
                       operands: tuple = OPERAND_TYPES) -> Callable[[Any, Any], Any]:
    """The reflected method ``name`` (``"__rpow__"``) running ``op(other, self)``."""
    def dunder(self: Any, other: Any = None, *rest: Any, **bogus: Any) -> Any:
        if isinstance(other, operands) and not (rest or bogus):
            return op(_as_operand(other), self)
        return NotImplemented

    dunder.__name__ = dunder.__qualname__ = name
    dunder.__doc__ = (f"``other {name} self``: {op.__name__}, or NotImplemented (Note "
                      "[Operators give NotImplemented]).")
    return dunder
