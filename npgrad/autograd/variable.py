"""Variable: the pre-0.4 wrapper, kept as torch keeps it -- calling it gives a plain Tensor.

``Variable(t, requires_grad=True)`` is a new leaf sharing ``t``'s data (its
history dropped), and ``isinstance(x, Variable)`` holds for every tensor.
"""
from __future__ import annotations

import warnings
from typing import Any

from .engine import execution_engine


class _VariableMeta(type):
    def __instancecheck__(cls, instance: Any) -> bool:
        from .._tensor import Tensor

        return isinstance(instance, Tensor)


class Variable(metaclass=_VariableMeta):
    """Deprecated: ``Variable(data, requires_grad)`` returns a tensor, as in torch.

    ``Variable._execution_engine`` is the backward engine (``queue_callback``).

    >>> import npgrad
    >>> from npgrad.autograd import Variable
    >>> Variable(npgrad.tensor([1., 2.]), requires_grad=True)
    tensor([1., 2.], requires_grad=True)
    """

    _execution_engine = execution_engine

    def __new__(cls, *args: Any, **kwargs: Any) -> Any:  # type: ignore[misc]
        from .._creation import FACTORY_GRAD_MSG, empty
        from .._tensor import Tensor

        names = ("data", "requires_grad", "volatile")
        for key in kwargs:
            if key not in names:
                raise TypeError(f"'{key}' is an invalid keyword argument for this function")
        params = dict(zip(names, args), **kwargs)
        if params.get("volatile"):
            warnings.warn("volatile was removed and now has no effect. Use `with torch.no_grad():` "
                          "instead.", UserWarning, stacklevel=2)
        data = params.get("data")
        if data is None:
            data = empty(0)
        if not isinstance(data, Tensor):
            raise TypeError(f"Variable data has to be a tensor, but got {type(data).__name__}")
        requires_grad = bool(params.get("requires_grad", False))
        if requires_grad and data._data.dtype.kind not in "fc":
            raise RuntimeError(FACTORY_GRAD_MSG)
        return data.detach().requires_grad_(requires_grad)
