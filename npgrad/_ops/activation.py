"""Activation ops of nn.functional (leaky_relu, gelu, silu, elu, softplus, hardtanh, glu ...)
and erf: node classes next to their functions."""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from .signature import signature
from .._mode import RECORDING, _tls
from .._tensor import Tensor, wrap
from ..autograd.forward_rules import elementwise_jvp
from . import _erf_kernels
from ._core import Node, SavedTensor, node_of, record, saved, unary
from .inplace import apply_inplace
from .pointwise import PointwiseNode, _float_data, sigmoid


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


_erf_np = _erf_kernels.erf   # Note [Vectorised erf]


class ErfBackward0(Node):
    __slots__ = ("self_",)
    jvp = elementwise_jvp
    _saved_fields = ("self_",)

    def backward(self, grad: Tensor) -> tuple:
        from .pointwise import exp

        x = saved(self, "self_")
        return grad * (exp(-(x * x)) * (2.0 / math.sqrt(math.pi))),


def _erf(input: Tensor) -> Tensor:
    x = _float_data(input)
    res, node = record(ErfBackward0, (input,), _erf_np(x).astype(x.dtype, copy=False))
    if node is not None:
        node.self_ = SavedTensor(input)
    return res


@signature("erf(Tensor input, *, Tensor out=None)")
def erf(input: Tensor) -> Tensor:
    """Error function; integers give the default float dtype (grad_fn ``ErfBackward0``).

    >>> import npgrad
    >>> npgrad.erf(npgrad.tensor([0., 1.]))
    tensor([0.0000, 0.8427])
    """
    return _erf(input)


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
        xd, gd = x._data, grad._data
        if (not (_tls.mode == RECORDING and (grad._requires_grad or x._requires_grad))
                and xd.dtype.kind == "f" and gd.dtype == xd.dtype and gd.shape == xd.shape):
            # Note [Exact GELU's backward in one kernel]: no graph of the gradient is
            # wanted, so it is computed in one float64 pass per block and rounded once,
            # as the forward is (~10 NumPy passes and temporaries less than the ops).
            return wrap(_erf_kernels.gelu_backward(gd, xd), _tls.mode),
        cdf = (_erf(x * math.sqrt(0.5)) + 1) * 0.5
        pdf = exp(x * x * -0.5) * (1.0 / math.sqrt(2.0 * math.pi))
        return grad * (cdf + x * pdf),


@signature('gelu(Tensor input, *, c10::string_view approximate="none", Tensor out=None)')
def gelu(input: Tensor, approximate: str = "none") -> Tensor:
    """Gaussian error linear unit, exact (erf) or ``approximate='tanh'`` (grad_fn ``GeluBackward0``)."""
    if approximate not in ("none", "tanh"):
        raise RuntimeError("approximate argument must be either none or tanh.")
    x = input._data
    if approximate == "tanh":
        out = 0.5 * x * (1 + np.tanh(_SQRT_2_OVER_PI * (x + _GELU_C * x * x * x)))
    else:
        out = _erf_kernels.gelu(x)
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


def _float_only(kernel: str, input: Tensor) -> np.ndarray:
    """The data of a floating-only activation, or torch's error for an integral or bool input."""
    from .. import _dtype

    d = input._data
    if d.dtype.kind != "f":
        raise NotImplementedError(f"\"{kernel}\" not implemented for "
                                  f"'{_dtype.from_np(d.dtype).scalar_name}'")
    return d


def _in_float64(fn: Any, x: np.ndarray) -> np.ndarray:
    """``fn`` in float64, rounded once to ``x``'s dtype (float32 results stay within an ulp)."""
    with np.errstate(all="ignore"):
        return np.asarray(fn(x.astype(np.float64, copy=False))).astype(x.dtype, copy=False)


# -- softplus -------------------------------------------------------------------------------

class SoftplusBackward0(PointwiseNode):
    __slots__ = ("beta", "threshold")
    saves_self = True

    def backward(self, grad: Tensor) -> tuple:
        from .pointwise import where

        z = saved(self, "self_") * self.beta
        return where(z > self.threshold, grad, grad * sigmoid(z)),


@signature("softplus(Tensor input, Scalar beta=1, Scalar threshold=20, *, Tensor out=None)")
def softplus(input: Tensor, beta: float = 1.0, threshold: float = 20.0) -> Tensor:
    """``log(1 + exp(beta * x)) / beta``, linear where ``beta * x > threshold``.

    >>> import npgrad
    >>> npgrad.nn.functional.softplus(npgrad.tensor([0.]))
    tensor([0.6931])
    """
    x = _float_only("softplus_cpu", input)
    # the branch is chosen in the input's precision, as torch's kernel does
    linear = x * x.dtype.type(beta) > x.dtype.type(threshold)
    out = np.where(linear, x, _in_float64(lambda v: np.logaddexp(0.0, v * beta) / beta, x))
    res = unary(SoftplusBackward0, input, out)
    node = node_of(res)
    if node is not None:
        node.beta, node.threshold = beta, threshold
    return res


# -- elu / selu / celu: one formula, alpha * scale * (exp(x * input_scale) - 1) below 0 --------

_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946
_INPLACE_ELU_MSG = ("In-place elu backward calculation is triggered with a negative slope which "
                    "is not supported. This is caused by calling in-place forward function with "
                    "a negative slope, please call out-of-place version instead.")


class EluBackward0(PointwiseNode):
    __slots__ = ("alpha", "scale", "input_scale")
    saves_self = True

    def backward(self, grad: Tensor) -> tuple:
        from .pointwise import clamp, exp, where

        x = saved(self, "self_")
        # exp of min(x, 0): the unused branch must not overflow, or its zero gradient
        # times inf gives NaN in double backward
        neg = grad * (exp(clamp(x, max=0.0) * self.input_scale)
                      * (self.input_scale * self.alpha * self.scale))
        return where(x <= 0, neg, grad * self.scale),  # torch's test: NaN takes the x > 0 side


class EluBackward1(PointwiseNode):
    """The in-place form: the input is overwritten, so the (same-signed) result is saved."""

    __slots__ = ("alpha", "scale", "input_scale")
    saves_result = True

    def backward(self, grad: Tensor) -> tuple:
        from .pointwise import where

        if self.alpha < 0:
            raise RuntimeError(_INPLACE_ELU_MSG)
        r = saved(self, "result")
        neg = grad * ((r + self.alpha * self.scale) * self.input_scale)
        return where(r <= 0, neg, grad * self.scale),


class CeluBackward0(EluBackward0):
    __slots__ = ()


class CeluBackward1(EluBackward1):
    __slots__ = ()


def _elu(input: Tensor, alpha: float, scale: float, input_scale: float, cls: Any) -> Tensor:
    x = _float_only("elu_cpu", input)
    out = _in_float64(lambda v: np.where(v > 0, v * scale,
                                         np.expm1(v * input_scale)
                                         * (alpha * scale)), x)
    res = unary(cls, input, out)
    node = node_of(res)
    if node is not None:
        node.alpha, node.scale, node.input_scale = alpha, scale, input_scale
    return res


def _elu_family(input: Tensor, alpha: float, scale: float, input_scale: float,
                inplace: bool, classes: tuple) -> Tensor:
    if inplace:
        return apply_inplace(input, _elu, alpha, scale, input_scale, classes[1])
    return _elu(input, alpha, scale, input_scale, classes[0])


def elu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    """``x`` above 0, ``alpha * (exp(x) - 1)`` below (grad_fn ``EluBackward0``; in place ``1``).

    >>> import npgrad
    >>> npgrad.nn.functional.elu(npgrad.tensor([1., 0.]))
    tensor([1., 0.])
    """
    return _elu_family(input, alpha, 1.0, 1.0, inplace, (EluBackward0, EluBackward1))


@signature("elu_(Tensor input, Scalar alpha=1, Scalar scale=1, Scalar input_scale=1)")
def elu_(input: Tensor, alpha: float = 1.0) -> Tensor:
    return elu(input, alpha, True)


def selu(input: Tensor, inplace: bool = False) -> Tensor:
    """Scaled ELU with the self-normalising constants (grad_fn ``EluBackward0``, as torch's).

    >>> import npgrad
    >>> npgrad.nn.functional.selu(npgrad.tensor([0.]))
    tensor([0.])
    """
    return _elu_family(input, _SELU_ALPHA, _SELU_SCALE, 1.0, inplace,
                       (EluBackward0, EluBackward1))


@signature("selu_(Tensor input)")
def selu_(input: Tensor) -> Tensor:
    return selu(input, True)


def celu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    """``max(0, x) + min(0, alpha * (exp(x / alpha) - 1))`` (grad_fn ``CeluBackward0``).

    >>> import npgrad
    >>> npgrad.nn.functional.celu(npgrad.tensor([2.]), alpha=2.)
    tensor([2.])
    """
    if alpha == 0:
        raise RuntimeError("ZeroDivisionError: alpha cannot be 0 for CELU")
    return _elu_family(input, alpha, 1.0, 1.0 / alpha, inplace, (CeluBackward0, CeluBackward1))


@signature("celu_(Tensor input, Scalar alpha=1.0)")
def celu_(input: Tensor, alpha: float = 1.0) -> Tensor:
    return celu(input, alpha, True)


# -- hardtanh / relu6 / hardsigmoid / hardswish ------------------------------------------------

class HardtanhBackward0(PointwiseNode):
    """Gradient only strictly inside (min_val, max_val): 0 at the bounds, as torch's."""

    __slots__ = ("min_val", "max_val")
    saves_self = True

    def backward(self, grad: Tensor) -> tuple:
        from .pointwise import where

        x = saved(self, "self_")
        return where((x > self.min_val) & (x < self.max_val), grad, 0.0),


def _hardtanh(input: Tensor, min_val: float, max_val: float) -> Tensor:
    x = input._data
    if x.dtype.kind == "b":
        raise RuntimeError("Bool inputs not supported for hardtanh")
    convert = int if x.dtype.kind in "iu" else float  # integral inputs truncate the bounds
    lo, hi = x.dtype.type(convert(min_val)), x.dtype.type(convert(max_val))
    # Explicit comparisons, not np.clip: a value equal to a bound (-0. against 0.) and NaN pass
    # through unchanged, as torch's clamp keeps them; np.clip's choice there varies by NumPy.
    out = np.where(x < lo, lo, np.where(x > hi, hi, x))
    res = unary(HardtanhBackward0, input, out)
    node = node_of(res)
    if node is not None:
        node.min_val, node.max_val = min_val, max_val
    return res


def hardtanh(input: Tensor, min_val: float = -1.0, max_val: float = 1.0,
             inplace: bool = False) -> Tensor:
    """Clamp to [min_val, max_val] (grad_fn ``HardtanhBackward0``).

    >>> import npgrad
    >>> npgrad.nn.functional.hardtanh(npgrad.tensor([-2., 0.5, 2.]))
    tensor([-1.0000,  0.5000,  1.0000])
    """
    if min_val > max_val:
        raise ValueError("min_val cannot be greater than max_val")
    if inplace:
        return apply_inplace(input, _hardtanh, min_val, max_val)
    return _hardtanh(input, min_val, max_val)


@signature("hardtanh_(Tensor input, Scalar min_val=-1, Scalar max_val=1)")
def hardtanh_(input: Tensor, min_val: float = -1.0, max_val: float = 1.0) -> Tensor:
    return hardtanh(input, min_val, max_val, True)


def relu6(input: Tensor, inplace: bool = False) -> Tensor:
    """``min(max(x, 0), 6)``: hardtanh(0, 6), whose grad_fn torch reports (``HardtanhBackward0``).

    >>> import npgrad
    >>> npgrad.nn.functional.relu6(npgrad.tensor([-1., 7.]))
    tensor([0., 6.])
    """
    return hardtanh(input, 0.0, 6.0, inplace)


_ONE_SIXTH_F32 = float(np.float32(1.0 / 6.0))


class HardsigmoidBackward0(PointwiseNode):
    __slots__ = ()
    saves_self = True

    def backward(self, grad: Tensor) -> tuple:
        from .pointwise import where

        x = saved(self, "self_")
        # torch's kernel multiplies by 1/6 rounded to float32, in every dtype
        return where((x > -3.0) & (x < 3.0), grad * _ONE_SIXTH_F32, 0.0),


def _hardsigmoid(input: Tensor) -> Tensor:
    x = _float_only("hardsigmoid_cpu", input)
    return unary(HardsigmoidBackward0, input, _in_float64(
        lambda v: np.minimum(np.maximum(v + 3.0, 0.0), 6.0) / 6.0, x))


def hardsigmoid(input: Tensor, inplace: bool = False) -> Tensor:
    """``relu6(x + 3) / 6`` (grad_fn ``HardsigmoidBackward0``).

    >>> import npgrad
    >>> npgrad.nn.functional.hardsigmoid(npgrad.tensor([0.]))
    tensor([0.5000])
    """
    return apply_inplace(input, _hardsigmoid) if inplace else _hardsigmoid(input)


class HardswishBackward0(PointwiseNode):
    __slots__ = ()
    saves_self = True

    def backward(self, grad: Tensor) -> tuple:
        from .pointwise import where

        x = saved(self, "self_")
        inner = where(x < 3.0, grad * (x / 3 + 0.5), grad)
        return where(x <= -3.0, 0.0, inner),


def _hardswish(input: Tensor) -> Tensor:
    x = _float_only("hardswish_cpu", input)
    return unary(HardswishBackward0, input, _in_float64(
        lambda v: v * np.minimum(np.maximum(v + 3.0, 0.0), 6.0) / 6.0, x))


def hardswish(input: Tensor, inplace: bool = False) -> Tensor:
    """``x * relu6(x + 3) / 6`` (grad_fn ``HardswishBackward0``).

    >>> import npgrad
    >>> npgrad.nn.functional.hardswish(npgrad.tensor([3.]))
    tensor([3.])
    """
    return apply_inplace(input, _hardswish) if inplace else _hardswish(input)


# -- mish / logsigmoid / softsign ------------------------------------------------------------

class MishBackward0(PointwiseNode):
    __slots__ = ()
    saves_self = True

    def backward(self, grad: Tensor) -> tuple:
        from .pointwise import tanh

        x = saved(self, "self_")
        t = tanh(softplus(x))
        return grad * (t + x * sigmoid(x) * (1 - t * t)),


def _mish(input: Tensor) -> Tensor:
    x = _float_only("mish_cpu", input)
    return unary(MishBackward0, input, _in_float64(
        lambda v: v * np.tanh(np.logaddexp(0.0, v)), x))


def mish(input: Tensor, inplace: bool = False) -> Tensor:
    """``x * tanh(softplus(x))`` (grad_fn ``MishBackward0``).

    >>> import npgrad
    >>> npgrad.nn.functional.mish(npgrad.tensor([0.]))
    tensor([0.])
    """
    return apply_inplace(input, _mish) if inplace else _mish(input)


class LogSigmoidBackward0(PointwiseNode):
    __slots__ = ()
    saves_self = True

    def backward(self, grad: Tensor) -> tuple:
        return grad * sigmoid(-saved(self, "self_")),


@signature("log_sigmoid(Tensor input, *, Tensor out=None)")
def logsigmoid(input: Tensor) -> Tensor:
    """``log(sigmoid(x))``, computed without overflow (grad_fn ``LogSigmoidBackward0``).

    >>> import npgrad
    >>> npgrad.nn.functional.logsigmoid(npgrad.tensor([0.]))
    tensor([-0.6931])
    """
    x = _float_only("log_sigmoid_cpu", input)
    return unary(LogSigmoidBackward0, input, _in_float64(
        lambda v: np.minimum(v, 0.0) - np.log1p(np.exp(-np.abs(v))), x))


def softsign(input: Tensor) -> Tensor:
    """``x / (1 + |x|)``; composed as torch composes it (grad_fn ``DivBackward0``).

    >>> import npgrad
    >>> npgrad.nn.functional.softsign(npgrad.tensor([1.]))
    tensor([0.5000])
    """
    from .pointwise import abs as abs_

    if input._data.dtype.kind == "b":
        raise NotImplementedError("\"abs_cpu\" not implemented for 'Bool'")
    return input / (abs_(input) + 1)


# -- softmin / glu ----------------------------------------------------------------------------

def _softmax_dim(name: str, ndim: int, stacklevel: int) -> int:
    import warnings

    warnings.warn(f"Implicit dimension choice for {name} has been deprecated. Change the call "
                  "to include dim=X as an argument.", stacklevel=stacklevel)
    return 0 if ndim in (0, 1, 3) else 1


def softmin(input: Tensor, dim: int | None = None, _stacklevel: int = 3,
            dtype: Any = None) -> Tensor:
    """``softmax(-x, dim)``, as torch composes it (grad_fn ``SoftmaxBackward0``).

    >>> import npgrad
    >>> npgrad.nn.functional.softmin(npgrad.tensor([0., 0.]), dim=0)
    tensor([0.5000, 0.5000])
    """
    from .pointwise import neg
    from .reduction import softmax

    if dim is None:
        dim = _softmax_dim("softmin", input.dim(), _stacklevel)
    return softmax(neg(input), dim, dtype)


class GluBackward0(Node):
    """``a * sigmoid(b)`` for the halves ``a, b`` of ``self`` along ``dim``."""

    __slots__ = ("self_", "dim")
    _saved_fields = ("self_",)

    def backward(self, grad: Tensor) -> tuple:
        from .shape import cat, chunk

        a, b = chunk(saved(self, "self_"), 2, self.dim)
        s = sigmoid(b)
        return cat([grad * s, grad * a * s * (1 - s)], self.dim),


def glu(input: Tensor, dim: int = -1) -> Tensor:
    """Gated linear unit: the first half of ``dim`` times sigmoid of the second half.

    >>> import npgrad
    >>> npgrad.nn.functional.glu(npgrad.tensor([2., 0.]))
    tensor([1.])
    """
    from ._shape_util import wrap_dim
    from .pointwise import _np_sigmoid

    x = input._data
    if x.ndim == 0:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    d = wrap_dim(dim, x.ndim)
    if x.shape[d] % 2:
        raise RuntimeError(f"Halving dimension must be even, but dimension {d} is size "
                           f"{x.shape[d]}")
    _float_only("glu_cpu", input)
    a, b = np.split(x, 2, axis=d)
    res, node = record(GluBackward0, (input,), a * _np_sigmoid(b))
    if node is not None:
        node.self_ = SavedTensor(input)
        node.dim = d
    return res
