"""Undoing broadcasting in backward: the one place a gradient is summed back to an input's shape."""
from __future__ import annotations

from typing import Any

from ._shape_util import sum_to_axes


def sum_to_size(grad: Any, shape: tuple) -> Any:
    """Sum ``grad`` over the dimensions that broadcasting added or stretched to reach ``shape``.

    Written with npgrad ops (sum, reshape) so that it is differentiable under
    ``create_graph=True``.
    """
    from .reduction import sum as sum_
    from .shape import reshape

    axes = sum_to_axes(grad._data.shape, shape)
    if axes:
        grad = sum_(grad, axes, keepdim=True)
    if grad._data.shape != shape:
        grad = reshape(grad, shape)
    return grad
