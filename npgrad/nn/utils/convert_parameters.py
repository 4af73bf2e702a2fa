"""All parameters as one flat vector and back (for optimizers that work on a single vector)."""
from __future__ import annotations

from typing import Any

from ..._ops.shape import cat
from ..._tensor import Tensor


def parameters_to_vector(parameters: Any) -> Tensor:
    """The parameters, flattened and concatenated (differentiable, grad_fn ``CatBackward0``).

    >>> import npgrad
    >>> from npgrad.nn.utils import parameters_to_vector
    >>> parameters_to_vector([npgrad.ones(2, 1), npgrad.zeros(1)])
    tensor([1., 1., 0.])
    """
    return cat([p.view(-1) for p in parameters])


def vector_to_parameters(vec: Tensor, parameters: Any) -> None:
    """Give each parameter, in order, the next ``numel()`` values of ``vec`` (as its ``.data``)."""
    if not isinstance(vec, Tensor):
        raise TypeError(f"expected torch.Tensor, but got: {_typename(vec)}")
    pointer = 0
    for param in parameters:
        n = param.numel()
        param.data = vec[pointer:pointer + n].view_as(param).data
        pointer += n


def _typename(obj: Any) -> str:
    """``torch.typename``: a builtin's bare name, other classes with their module."""
    cls = type(obj)
    module = cls.__module__
    return cls.__qualname__ if module == "builtins" else f"{module}.{cls.__qualname__}"
