"""npgrad.nn.functional: activations and losses as functions, torch's names and signatures."""
from __future__ import annotations

from typing import Any

from .._ops.loss import cross_entropy, mse_loss, nll_loss  # noqa: F401
from .._ops.pointwise import relu as _relu, sigmoid, tanh  # noqa: F401
from .._ops.reduction import log_softmax as _log_softmax, softmax as _softmax
from .._ops.inplace import relu_
from .._tensor import Tensor


def relu(input: Tensor, inplace: bool = False) -> Tensor:
    """max(input, 0) (grad_fn ``ReluBackward0``)."""
    return relu_(input) if inplace else _relu(input)


def softmax(input: Tensor, dim: int | None = None, _stacklevel: int = 3,
            dtype: Any = None) -> Tensor:
    return _softmax(input, _legacy_dim(input, dim), dtype)


def log_softmax(input: Tensor, dim: int | None = None, _stacklevel: int = 3,
                dtype: Any = None) -> Tensor:
    return _log_softmax(input, _legacy_dim(input, dim), dtype)


def _legacy_dim(input: Tensor, dim: int | None) -> int:
    if dim is not None:
        return dim
    import warnings

    warnings.warn("Implicit dimension choice for softmax has been deprecated. Change the call "
                  "to include dim=X as an argument.", UserWarning, stacklevel=3)
    return 0 if input.dim() in (0, 1, 3) else 1
