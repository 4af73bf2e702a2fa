"""npgrad.nn.functional: layers, activations and losses as functions, torch's names and signatures.

Note [Where the nn ops live]
Every op with a grad_fn of its own lives in the op layer, node next to function:
convolution and pooling in ``npgrad._ops.conv``, losses in ``npgrad._ops.loss``,
activations in ``_ops.activation``, batch and layer norm in ``_ops.normalization``,
embedding in ``_ops.embedding``.  This module only gives them torch's functional
names and signatures (and composes the few that need no node of their own).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from .._ops.conv import adaptive_avg_pool2d, avg_pool2d, conv_nd, max_pool2d  # noqa: F401
from .._ops.inplace import relu_
from .._ops.loss import (binary_cross_entropy, binary_cross_entropy_with_logits,  # noqa: F401
                         cross_entropy, huber_loss, l1_loss, mse_loss, nll_loss, smooth_l1_loss)
from .._ops.pointwise import relu as _relu, sigmoid, tanh  # noqa: F401
from .._ops.reduction import log_softmax as _log_softmax, softmax as _softmax
from .._tensor import Tensor, wrap
from .._ops.activation import gelu, leaky_relu, silu  # noqa: F401
from .._ops.normalization import batch_norm, layer_norm  # noqa: F401
from .._ops.embedding import embedding  # noqa: F401
# functional names: special functions and activations [special]
# functional names: shape, indexing and creation [shape]
# functional names: sorting, scans, reductions and products [sorting]
# functional names: layers [nn]


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


# -- linear and convolution ---------------------------------------------------------------

def linear(input: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """``input @ weight.T + bias`` with torch's graph: AddmmBackward0 for a matrix input.

    >>> import npgrad as torch
    >>> torch.nn.functional.linear(torch.ones(1, 2), torch.ones(3, 2), torch.zeros(3))
    tensor([[2., 2., 2.]])
    """
    from .._ops.linalg import addmm, matmul
    from .._ops.shape import t, view

    x = input._data
    if bias is None:
        return matmul(input, t(weight))
    if x.ndim == 2:
        return addmm(bias, input, t(weight))
    if x.ndim == 1 or (x.ndim > 2 and input.is_contiguous()):
        flat = view(input, (-1, x.shape[-1]))
        out = addmm(bias, flat, t(weight))
        return view(out, x.shape[:-1] + (weight._data.shape[0],))
    return matmul(input, t(weight)) + bias


def conv1d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride: Any = 1,
           padding: Any = 0, dilation: Any = 1, groups: int = 1) -> Tensor:
    """1-d convolution over ``(N, C, L)`` or ``(C, L)`` (grad_fn ``ConvolutionBackward0``)."""
    return conv_nd(input, weight, bias, stride, padding, dilation, groups, 1)


def conv2d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride: Any = 1,
           padding: Any = 0, dilation: Any = 1, groups: int = 1) -> Tensor:
    """2-d convolution over ``(N, C, H, W)`` or ``(C, H, W)`` (grad_fn ``ConvolutionBackward0``)."""
    return conv_nd(input, weight, bias, stride, padding, dilation, groups, 2)


def max_pool1d(input: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0,
               dilation: Any = 1, ceil_mode: bool = False, return_indices: bool = False) -> Any:
    from .._ops.shape import squeeze, unsqueeze

    def one(v: Any) -> Any:
        v = v[0] if isinstance(v, (list, tuple)) else v
        return (1, v)

    out = max_pool2d(unsqueeze(input, -2), one(kernel_size),
                     None if stride is None else one(stride), (0, one(padding)[1]),
                     one(dilation), ceil_mode, return_indices)
    if return_indices:
        return squeeze(out[0], -2), squeeze(out[1], -2)
    return squeeze(out, -2)


# -- dropout ---------------------------------------------------------------------------

def dropout(input: Tensor, p: float = 0.5, training: bool = True,
            inplace: bool = False) -> Tensor:
    """Zero each element with probability ``p`` (npgrad's default generator), scale by 1/(1-p)."""
    from .._creation import _rng
    from .._ops.inplace import mul_
    from .._ops.pointwise import mul

    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if not training or p == 0.0 or input._data.size == 0:
        return input
    x = input._data
    keep = _rng(None).random(x.shape) >= p
    if p == 1.0:
        mask = np.zeros(x.shape, dtype=x.dtype)
    else:
        mask = (keep / (1.0 - p)).astype(x.dtype)
    mask_t = wrap(mask, 0)
    return mul_(input, mask_t) if inplace else mul(input, mask_t)





# -- misc --------------------------------------------------------------------------------

def pad(input: Tensor, pad: Any, mode: str = "constant", value: float | None = None) -> Tensor:
    """Constant padding of the last dims (``pad`` = (left, right, top, bottom, ...))."""
    from .._ops.shape import cat
    from .._creation import full

    if mode != "constant":
        raise NotImplementedError(f"npgrad pad supports mode='constant' only, got '{mode}'")
    out = input
    fill = 0.0 if value is None else value
    for i in range(len(pad) // 2):
        dim = out._data.ndim - 1 - i
        lo, hi = pad[2 * i], pad[2 * i + 1]
        parts = []
        shape = list(out._data.shape)
        if lo > 0:
            shape[dim] = lo
            parts.append(full(tuple(shape), fill, dtype=out.dtype))
        core = out
        if lo < 0 or hi < 0:
            n = out._data.shape[dim]
            core = out.narrow(dim, max(-lo, 0), n - max(-lo, 0) - max(-hi, 0))
        parts.append(core)
        if hi > 0:
            shape[dim] = hi
            parts.append(full(tuple(shape), fill, dtype=out.dtype))
        out = cat(parts, dim) if len(parts) > 1 else core
    return out
