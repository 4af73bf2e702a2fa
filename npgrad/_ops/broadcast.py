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
    if not isinstance(data, np.ndarray):  # a sparse gradient: torch sums it to a 0-dim
        return _sparse_sum_to_size(grad, shape)  # tensor and refuses every other shape
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


def _sparse_sum_to_size(grad: Any, shape: tuple) -> Any:
    """torch's ``sum_to`` of a sparse gradient: ``sum()`` for a 0-dim input (a dense
    result), else the ``view`` that a sparse tensor lacks."""
    from .sparse import unsupported

    if not shape:
        return grad.sum()
    raise unsupported("view")
