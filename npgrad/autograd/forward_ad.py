"""Forward-mode AD: dual tensors (a primal plus a tangent) and the level they live in.

Inside ``dual_level()``, ``make_dual(p, t)`` gives a tensor with value ``p``
whose tangent ``t`` every op carries forward as a Jacobian-vector product;
``unpack_dual(y)`` reads ``y``'s primal and tangent.  One level at a time;
leaving it drops every tangent.  ``no_grad`` does not stop tangents, inference
mode drops them.  How the op layer does it: Note [Tangents] in npgrad._forward.

>>> import npgrad
>>> import npgrad.autograd.forward_ad as fwAD
>>> with fwAD.dual_level():
...     x = fwAD.make_dual(npgrad.tensor([1., 2.]), npgrad.tensor([1., 0.]))
...     fwAD.unpack_dual(x * x).tangent
tensor([2., 0.])
"""
from __future__ import annotations

from collections import namedtuple
from typing import Any

from .._forward import (FW, NO_LEVEL_MSG, check_tangent_size, drop_all_tangents, has_tangent,
                        set_tangent, tangent_of)
from .._mode import _tls, INFERENCE
from ..utils._contextlib import _DecoratorContextManager

__all__ = ["UnpackedDualTensor", "enter_dual_level", "exit_dual_level", "make_dual", "unpack_dual",
           "dual_level"]

UnpackedDualTensor = namedtuple("UnpackedDualTensor", ["primal", "tangent"])
UnpackedDualTensor.__doc__ = "What ``unpack_dual`` returns: the primal and its tangent (or None)."


def enter_dual_level() -> int:
    """Open the forward-AD level (only one may be open) and return its number, 0."""
    if FW.active:
        raise RuntimeError("Nested forward mode AD is not supported at the moment")
    FW.active = True
    FW.level = 0
    return 0


def exit_dual_level(*, level: int | None = None) -> None:
    """Close the open level; every tangent made in it is dropped."""
    if level is None:
        level = FW.level
    if level != FW.level:
        raise RuntimeError("Trying to exit a forward AD level that was not the last one that "
                           "was created. This is not supported.")
    if level < 0:
        raise RuntimeError("Dual level must be a positive number.")
    drop_all_tangents()
    FW.active = False
    FW.level = -1


def _check_level(level: int | None, op: str) -> None:
    if level is not None and level != FW.level:
        raise RuntimeError(f"Invalid level given to {op}")


def make_dual(tensor: Any, tangent: Any, *, level: int | None = None) -> Any:
    """A view of ``tensor`` that carries ``tangent`` as its forward gradient.

    >>> import npgrad
    >>> import npgrad.autograd.forward_ad as fwAD
    >>> with fwAD.dual_level():
    ...     fwAD.make_dual(npgrad.tensor([1.]), npgrad.tensor([3.]))
    tensor([1.], tangent=tensor([3.]))
    """
    if (FW.level if level is None else level) < 0:
        raise RuntimeError(NO_LEVEL_MSG)
    for role, t in (("primal", tensor), ("tangent", tangent)):
        if not (t.is_floating_point() or t.is_complex()):
            raise ValueError(f"Expected {role} to be floating point or complex, but got: "
                             f"torch.{t.dtype.name}")
    _check_level(level, "_make_dual")
    check_tangent_size(tensor, tangent)
    if has_tangent(tensor) and not _tls.mode & INFERENCE:
        raise RuntimeError("Making a dual Tensor based on a Tensor that already has a forward "
                           f"gradient at the same level {FW.level} is not supported.")
    dual = tensor.view(tensor.shape)
    if not _tls.mode & INFERENCE:
        set_tangent(dual, tangent)
    return dual


def unpack_dual(tensor: Any, *, level: int | None = None) -> UnpackedDualTensor:
    """``(primal, tangent)`` of ``tensor``: a view without the tangent, and the tangent or None.

    >>> import npgrad
    >>> import npgrad.autograd.forward_ad as fwAD
    >>> with fwAD.dual_level():
    ...     fwAD.unpack_dual(npgrad.tensor([1.]))
    UnpackedDualTensor(primal=tensor([1.]), tangent=None)
    """
    from .._ops.indexing import primal_view
    from .._tensor import Tensor

    if (FW.level if level is None else level) < 0:
        return UnpackedDualTensor(tensor, None)
    if not isinstance(tensor, Tensor):
        raise TypeError("_unpack_dual(): argument 'dual' (position 1) must be Tensor, not "
                        f"{type(tensor).__name__}")
    _check_level(level, "_fw_primal")
    tangent = None if _tls.mode & INFERENCE else tangent_of(tensor)
    return UnpackedDualTensor(primal_view(tensor), tangent)


class dual_level(_DecoratorContextManager):
    """Context manager (and decorator) around one forward-AD level.

    >>> import npgrad.autograd.forward_ad as fwAD
    >>> with fwAD.dual_level() as level:
    ...     level
    0
    """

    def __enter__(self) -> int:
        return enter_dual_level()

    def __exit__(self, exc_type: Any, exc_value: Any, traceback: Any) -> None:
        exit_dual_level()


def __getattr__(name: str) -> Any:
    # torch keeps the open level in the module global ``_current_level`` (-1: none);
    # here it lives in ``FW.level``, read when asked for.
    if name == "_current_level":
        return FW.level
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
