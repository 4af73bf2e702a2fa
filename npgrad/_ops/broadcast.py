"""Undoing broadcasting in backward: the one place a gradient is summed back to an input's shape."""
from __future__ import annotations

from typing import Any

import numpy as np

from .._mode import _tls
from .._tensor_base import wrap
from ._shape_util import sum_to_axes


def sum_to_size(grad: Any, shape: tuple) -> Any:
    """Sum ``grad`` over the dimensions that broadcasting added or stretched to reach ``shape``.

    Written with npgrad ops (sum, reshape) so that it is differentiable under
    ``create_graph=True``.
    """
    data = grad._data
    axes = sum_to_axes(data.shape, shape)
    if not grad._requires_grad and data.dtype.char in "fd":
        # no graph of it can be recorded: the same float32/float64 sum in NumPy, without
        # two ops' signature checks and nodes (a Linear bias's gradient, every step)
        out = np.asarray(np.sum(data, axis=axes)) if axes else data
        return wrap(out.reshape(shape), _tls.mode)
    from .reduction import sum as sum_
    from .shape import reshape

    if axes:
        grad = sum_(grad, axes, keepdim=True)
    if grad._data.shape != shape:
        grad = reshape(grad, shape)
    return grad
