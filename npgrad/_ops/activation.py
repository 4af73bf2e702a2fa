"""Activation ops of nn.functional (leaky_relu, gelu, silu): node classes and functions."""
from __future__ import annotations

import math

import numpy as np

from .._tensor import Tensor
from ..autograd.forward_rules import elementwise_jvp
from ._core import Node, SavedTensor, record, saved
from .inplace import apply_inplace
from .pointwise import sigmoid


# -- activations -------------------------------------------------------------------------

class LeakyReluBackward0(Node):
    __slots__ = ("self_", "negative_slope")
    jvp = elementwise_jvp
    _saved_fields = ("self_",)

    def backward(self, grad: Tensor) -> tuple:
        from .pointwise import where

        x = saved(self, "self_")
        return where(x > 0, grad, grad * self.negative_slope),


def _leaky_relu(input: Tensor, negative_slope: float) -> Tensor:
    x = input._data
    out = np.where(x > 0, x, x * negative_slope).astype(x.dtype, copy=False)
    res, node = record(LeakyReluBackward0, (input,), out)
    if node is not None:
        node.self_ = SavedTensor(input)
        node.negative_slope = negative_slope
    return res


class LeakyReluBackward1(Node):
    """The in-place form: the input is overwritten, so the (same-signed) result is saved."""

    __slots__ = ("result", "negative_slope")
    jvp = elementwise_jvp
    _saved_fields = ("result",)

    def backward(self, grad: Tensor) -> tuple:
        from .pointwise import where

        r = saved(self, "result")
        return where(r > 0, grad, grad * self.negative_slope),


def _leaky_relu_result_saved(input: Tensor, negative_slope: float) -> Tensor:
    x = input._data
    out = np.where(x > 0, x, x * negative_slope).astype(x.dtype, copy=False)
    res, node = record(LeakyReluBackward1, (input,), out)
    if node is not None:
        if negative_slope < 0:
            raise RuntimeError(
                "In-place leakyReLu backward calculation is triggered with a negative slope "
                "which is not supported. This is caused by calling in-place forward function "
                "with a negative slope, please call out-of-place version instead. File an issue "
                "at https://github.com/pytorch/pytorch if you do require supporting in-place "
                "leakRelu backward calculation with negative slope")
        node.result = SavedTensor(res, True)
        node.negative_slope = negative_slope
    return res


def leaky_relu(input: Tensor, negative_slope: float = 0.01, inplace: bool = False) -> Tensor:
    """``x if x > 0 else negative_slope * x`` (grad_fn ``LeakyReluBackward0``; in place ``1``)."""
    if inplace:
        return apply_inplace(input, _leaky_relu_result_saved, negative_slope)
    return _leaky_relu(input, negative_slope)


_erf_np = np.vectorize(math.erf, otypes=[np.float64])


class ErfBackward0(Node):
    __slots__ = ("self_",)
    jvp = elementwise_jvp
    _saved_fields = ("self_",)

    def backward(self, grad: Tensor) -> tuple:
        from .pointwise import exp

        x = saved(self, "self_")
        return grad * (exp(-(x * x)) * (2.0 / math.sqrt(math.pi))),


def _erf(input: Tensor) -> Tensor:
    x = input._data
    res, node = record(ErfBackward0, (input,), _erf_np(x).astype(x.dtype, copy=False))
    if node is not None:
        node.self_ = SavedTensor(input)
    return res


_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)
_GELU_C = 0.044715


class GeluBackward0(Node):
    __slots__ = ("self_", "approximate")
    jvp = elementwise_jvp
    _saved_fields = ("self_",)

    def backward(self, grad: Tensor) -> tuple:
        from .pointwise import exp, tanh as tanh_

        x = saved(self, "self_")
        if self.approximate == "tanh":
            inner = (x + x * x * x * _GELU_C) * _SQRT_2_OVER_PI
            th = tanh_(inner)
            d_inner = (x * x * (3 * _GELU_C) + 1) * _SQRT_2_OVER_PI
            return grad * ((th + 1) * 0.5 + x * 0.5 * (1 - th * th) * d_inner),
        cdf = (_erf(x * math.sqrt(0.5)) + 1) * 0.5
        pdf = exp(x * x * -0.5) * (1.0 / math.sqrt(2.0 * math.pi))
        return grad * (cdf + x * pdf),


def gelu(input: Tensor, approximate: str = "none") -> Tensor:
    """Gaussian error linear unit, exact (erf) or ``approximate='tanh'`` (grad_fn ``GeluBackward0``)."""
    if approximate not in ("none", "tanh"):
        raise RuntimeError("approximate argument must be either none or tanh.")
    x = input._data
    if approximate == "tanh":
        out = 0.5 * x * (1 + np.tanh(_SQRT_2_OVER_PI * (x + _GELU_C * x * x * x)))
    else:
        out = 0.5 * x * (1 + _erf_np(x * math.sqrt(0.5)))
    res, node = record(GeluBackward0, (input,), np.asarray(out).astype(x.dtype, copy=False))
    if node is not None:
        node.self_ = SavedTensor(input)
        node.approximate = approximate
    return res


class SiluBackward0(Node):
    __slots__ = ("self_",)
    jvp = elementwise_jvp
    _saved_fields = ("self_",)

    def backward(self, grad: Tensor) -> tuple:
        x = saved(self, "self_")
        s = sigmoid(x)
        return grad * (s * (x * (1 - s) + 1)),


def _silu(input: Tensor) -> Tensor:
    from .pointwise import _np_sigmoid

    x = input._data
    res, node = record(SiluBackward0, (input,), (x * _np_sigmoid(x)).astype(x.dtype, copy=False))
    if node is not None:
        node.self_ = SavedTensor(input)
    return res


def _silu_of_copy(input: Tensor) -> Tensor:
    # the in-place form saves a copy of the input: the write-back overwrites the original
    from .shape import clone

    return _silu(clone(input))


def silu(input: Tensor, inplace: bool = False) -> Tensor:
    """``x * sigmoid(x)`` (grad_fn ``SiluBackward0``)."""
    return apply_inplace(input, _silu_of_copy) if inplace else _silu(input)
