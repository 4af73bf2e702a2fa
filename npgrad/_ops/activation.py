"""Activation ops of nn.functional (leaky_relu, gelu, silu, elu, softplus, hardtanh, glu ...):
each elementwise one is an entry of the op registry (Note [An op is an entry])."""
from __future__ import annotations

import math
import warnings
from typing import TYPE_CHECKING, Any

import numpy as np

from .signature import batchable, checker, signature
from .._mode import RECORDING, _tls
if TYPE_CHECKING:
    from .._tensor import Tensor
else:  # Note [Tensor base and Tensor] in npgrad._tensor_base
    from .._tensor_base import TensorBase as Tensor
from .._tensor_base import wrap
from . import _erf_kernels
from ._shape_util import wrap_dim
from .checks import check_scalar_fits, not_implemented_for, python_method
from .inplace import apply_inplace, refuse_non_tensor
from .pointwise import _np_sigmoid, abs as abs_, clamp, exp, neg, sigmoid, tanh, where
from .registry import General, Pointwise
from .shape import cat, chunk, clone
from .special import erf

# Note [Activations as entries]
# Each elementwise activation is one ``Pointwise`` entry: torch's native signature (the one
# its parser checks, so ``F.elu("x")`` gets torch's TypeError), the grad_fn name, the NumPy
# forward, what the node saves and the derivative, which reads the node's kept parameters
# under torch's names (``grad_fn._saved_negative_slope``).  An op whose in-place form saves
# its result instead of its input (leaky_relu_, elu_, celu_: the input is overwritten) is a
# second entry with its own grad_fn (``...Backward1``), as in torch.  The ``nn.functional``
# spellings stay plain functions: in torch they are Python, which checks nothing itself.
#
# Kernels that compute in float64 and round once (``_in_float64``) say ``own_bfloat16``: they
# take half precision themselves, so float16 is rounded once, not via float32.  Those torch
# runs on bfloat16 too but npgrad does not yet refuse it with torch's kernel text ("V" in
# ``refuses``), as before they were entries.


def _in_float64(fn: Any, x: np.ndarray) -> np.ndarray:
    """``fn`` in float64, rounded once to ``x``'s dtype (float32 results stay within an ulp)."""
    with np.errstate(all="ignore"):
        return np.asarray(fn(x.astype(np.float64, copy=False))).astype(x.dtype, copy=False)


# -- leaky_relu ----------------------------------------------------------------------------

def _leaky_relu_forward(x: np.ndarray, negative_slope: Any) -> np.ndarray:
    return np.where(x > 0, x, x * negative_slope).astype(x.dtype, copy=False)


LEAKY_RELU = Pointwise(
    "leaky_relu(Tensor input, Scalar negative_slope=0.01)", grad_fn="LeakyReluBackward0",
    forward=_leaky_relu_forward, params=("negative_slope",), floating=False, refuses="biuc",
    kernel="leaky_relu_cpu", warns=False, saves="self",
    derivative=lambda grad, x, slope: where(x > 0, grad, grad * slope))

# the in-place form: the input is overwritten, so the (same-signed) result is saved
LEAKY_RELU_INPLACE = Pointwise(
    "leaky_relu_(Tensor input, Scalar negative_slope=0.01)", grad_fn="LeakyReluBackward1",
    forward=_leaky_relu_forward, params=("negative_slope",), floating=False, refuses="biuc",
    kernel="leaky_relu_cpu", warns=False, saves="result",
    derivative=lambda grad, r, slope: where(r > 0, grad, grad * slope))

_INPLACE_LEAKY_MSG = (
    "In-place leakyReLu backward calculation is triggered with a negative slope which is not "
    "supported. This is caused by calling in-place forward function with a negative slope, "
    "please call out-of-place version instead. File an issue at "
    "https://github.com/pytorch/pytorch if you do require supporting in-place leakRelu "
    "backward calculation with negative slope")


def _leaky_relu_result_saved(input: Tensor, negative_slope: float) -> Tensor:
    if negative_slope < 0 and _tls.mode == RECORDING and input._requires_grad:
        raise RuntimeError(_INPLACE_LEAKY_MSG)  # torch refuses to record it
    return LEAKY_RELU_INPLACE(input, negative_slope)


def leaky_relu(input: Tensor, negative_slope: float = 0.01, inplace: bool = False) -> Tensor:
    """``x if x > 0 else negative_slope * x`` (grad_fn ``LeakyReluBackward0``; in place ``1``).

    >>> import npgrad
    >>> npgrad.nn.functional.leaky_relu(npgrad.tensor([-1., 2.]), 0.5)
    tensor([-0.5000,  2.0000])
    """
    # torch's Python calls torch._C._nn.leaky_relu(_): its parser checks come first
    (_LEAKY_RELU_INPLACE_ARGS if inplace else _LEAKY_RELU_ARGS)(input, negative_slope)
    if inplace:
        if not isinstance(input, Tensor):
            refuse_non_tensor("leaky_relu_", input)
        return apply_inplace(input, _leaky_relu_result_saved, negative_slope)
    return LEAKY_RELU(input, negative_slope)


_LEAKY_RELU_ARGS = checker("leaky_relu(Tensor input, Scalar negative_slope=0.01, *, "
                           "Tensor out=None)")
_LEAKY_RELU_INPLACE_ARGS = checker("leaky_relu_(Tensor input, Scalar negative_slope=0.01)")


# -- gelu (erf is in special.py, with erfc) ------------------------------------------------

_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)
_GELU_C = 0.044715


def _gelu_forward(x: np.ndarray, approximate: str) -> np.ndarray:
    if approximate == "tanh":
        # the half types in float32, rounded once (Note [Half precision computes in float32])
        v = x.astype(np.float32) if x.dtype.itemsize == 2 else x
        out = 0.5 * v * (1 + np.tanh(_SQRT_2_OVER_PI * (v + _GELU_C * v * v * v)))
    else:
        out = _erf_kernels.gelu(x)
    return np.asarray(out).astype(x.dtype, copy=False)


def _gelu_derivative(grad: Tensor, x: Tensor, approximate: str) -> Tensor:
    if approximate == "tanh":
        inner = (x + x * x * x * _GELU_C) * _SQRT_2_OVER_PI
        th = tanh(inner)
        d_inner = (x * x * (3 * _GELU_C) + 1) * _SQRT_2_OVER_PI
        return grad * ((th + 1) * 0.5 + x * 0.5 * (1 - th * th) * d_inner)
    xd, gd = x._data, grad._data
    if (not (_tls.mode == RECORDING and (grad._requires_grad or x._requires_grad))
            and xd.dtype.kind == "f" and gd.dtype == xd.dtype and gd.shape == xd.shape):
        # Note [Exact GELU's backward in one kernel]: no graph of the gradient is
        # wanted, so it is computed in one float64 pass per block and rounded once,
        # as the forward is (~10 NumPy passes and temporaries less than the ops).
        return wrap(_erf_kernels.gelu_backward(gd, xd), _tls.mode)
    cdf = (erf(x * math.sqrt(0.5)) + 1) * 0.5
    pdf = exp(x * x * -0.5) * (1.0 / math.sqrt(2.0 * math.pi))
    return grad * (cdf + x * pdf)


GELU = Pointwise(
    'gelu(Tensor input, *, c10::string_view approximate="none", Tensor out=None)',
    grad_fn="GeluBackward0", forward=_gelu_forward, params=("approximate",), floating=False,
    refuses="biuc", kernel="GeluKernelImpl", own_bfloat16=True, warns=False, saves="self",
    derivative=_gelu_derivative)


@GELU.public
def gelu(input: Tensor, approximate: str = "none") -> Tensor:
    """Gaussian error linear unit, exact (erf) or ``approximate='tanh'`` (grad_fn ``GeluBackward0``).

    >>> import npgrad
    >>> npgrad.nn.functional.gelu(npgrad.tensor([0., 1.]))
    tensor([0.0000, 0.8413])
    """
    if approximate not in ("none", "tanh"):
        raise RuntimeError("approximate argument must be either none or tanh.")
    return GELU(input, approximate)


# -- silu ------------------------------------------------------------------------------------

def _silu_derivative(grad: Tensor, x: Tensor) -> Tensor:
    s = sigmoid(x)
    return grad * (s * (x * (1 - s) + 1))


SILU = Pointwise(
    "silu(Tensor input)", grad_fn="SiluBackward0",
    forward=lambda x: (x * _np_sigmoid(x)).astype(x.dtype, copy=False), floating=False,
    refuses="biu", kernel="silu_cpu", warns=False, saves="self", derivative=_silu_derivative)


def _silu(input: Tensor) -> Tensor:
    if (isinstance(input, Tensor) and input._data.dtype.kind == "c" and _tls.mode == RECORDING
            and input._requires_grad):  # torch computes it, but records no complex gradient
        raise RuntimeError("silu does not support automatic differentiation for outputs with "
                           "complex dtype.")
    return SILU(input)


def _silu_of_copy(input: Tensor) -> Tensor:
    # the in-place form saves a copy of the input: the write-back overwrites the original
    return _silu(clone(input))


@batchable  # Note [Batched values] in npgrad.func._batched
def silu(input: Tensor, inplace: bool = False) -> Tensor:
    """``x * sigmoid(x)`` (grad_fn ``SiluBackward0``).

    >>> import npgrad
    >>> npgrad.nn.functional.silu(npgrad.tensor([0.]))
    tensor([0.])
    """
    return apply_inplace(input, _silu_of_copy) if inplace else _silu(input)


# -- softplus -------------------------------------------------------------------------------

def _softplus_forward(x: np.ndarray, beta: Any, threshold: Any) -> np.ndarray:
    # the branch is chosen in the input's precision, as torch's kernel does
    linear = x * x.dtype.type(beta) > x.dtype.type(threshold)
    return np.where(linear, x, _in_float64(lambda v: np.logaddexp(0.0, v * beta) / beta, x))


def _softplus_derivative(grad: Tensor, x: Tensor, beta: Any, threshold: Any) -> Tensor:
    z = x * beta
    return where(z > threshold, grad, grad * sigmoid(z))


SOFTPLUS = Pointwise(
    "softplus(Tensor input, Scalar beta=1, Scalar threshold=20, *, Tensor out=None)",
    grad_fn="SoftplusBackward0", forward=_softplus_forward, params=("beta", "threshold"),
    floating=False, refuses="biuVc", kernel="softplus_cpu", own_bfloat16=True, warns=False,
    saves="self", derivative=_softplus_derivative)


@SOFTPLUS.public
def softplus(input: Tensor, beta: float = 1.0, threshold: float = 20.0) -> Tensor:
    """``log(1 + exp(beta * x)) / beta``, linear where ``beta * x > threshold``.

    >>> import npgrad
    >>> npgrad.nn.functional.softplus(npgrad.tensor([0.]))
    tensor([0.6931])
    """
    return SOFTPLUS(input, beta, threshold)


# -- elu / selu / celu: one formula, alpha * scale * (exp(x * input_scale) - 1) below 0 --------

_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946
_INPLACE_ELU_MSG = ("In-place elu backward calculation is triggered with a negative slope which "
                    "is not supported. This is caused by calling in-place forward function with "
                    "a negative slope, please call out-of-place version instead.")


def _elu_forward(x: np.ndarray, alpha: Any, scale: Any, input_scale: Any) -> np.ndarray:
    return _in_float64(lambda v: np.where(v > 0, v * scale,
                                          np.expm1(v * input_scale) * (alpha * scale)), x)


def _elu_derivative(grad: Tensor, x: Tensor, alpha: Any, scale: Any, input_scale: Any) -> Tensor:
    # exp of min(x, 0): the unused branch must not overflow, or its zero gradient
    # times inf gives NaN in double backward
    below = grad * (exp(clamp(x, max=0.0) * input_scale) * (input_scale * alpha * scale))
    return where(x <= 0, below, grad * scale)  # torch's test: NaN takes the x > 0 side


def _elu_result_derivative(grad: Tensor, r: Tensor, alpha: Any, scale: Any,
                           input_scale: Any) -> Tensor:
    """The in-place form's rule, from the result: ``exp(x * s) * a * c == r + a * c`` below 0."""
    if alpha < 0:
        raise RuntimeError(_INPLACE_ELU_MSG)
    below = grad * ((r + alpha * scale) * input_scale)
    return where(r <= 0, below, grad * scale)


_ELU_PARAMS = ("alpha", "scale", "input_scale")

ELU = Pointwise(
    "elu(Tensor input, Scalar alpha=1, Scalar scale=1, Scalar input_scale=1, *, "
    "Tensor out=None)", grad_fn="EluBackward0", forward=_elu_forward, params=_ELU_PARAMS,
    floating=False, refuses="biuVc", kernel="elu_cpu", own_bfloat16=True, warns=False,
    saves="self", derivative=_elu_derivative)

ELU_INPLACE = Pointwise(
    "elu_(Tensor input, Scalar alpha=1, Scalar scale=1, Scalar input_scale=1)",
    grad_fn="EluBackward1", forward=_elu_forward, params=_ELU_PARAMS, floating=False,
    refuses="biuVc", kernel="elu_cpu", own_bfloat16=True, warns=False, saves="result",
    derivative=_elu_result_derivative)

# celu is elu with input_scale = 1 / alpha; torch's node keeps alpha alone
CELU = Pointwise(
    "celu(Tensor input, Scalar alpha=1.0)", grad_fn="CeluBackward0",
    forward=lambda x, alpha: _elu_forward(x, alpha, 1, 1.0 / alpha), params=("alpha",),
    floating=False, refuses="biuVc", kernel="elu_cpu", own_bfloat16=True, warns=False,
    saves="self", derivative=lambda grad, x, alpha: _elu_derivative(grad, x, alpha, 1,
                                                                      1.0 / alpha))

CELU_INPLACE = Pointwise(
    "celu_(Tensor input, Scalar alpha=1.0)", grad_fn="CeluBackward1",
    forward=lambda x, alpha: _elu_forward(x, alpha, 1, 1.0 / alpha), params=("alpha",),
    floating=False, refuses="biuVc", kernel="elu_cpu", own_bfloat16=True, warns=False,
    saves="result", derivative=lambda grad, r, alpha: _elu_result_derivative(
        grad, r, alpha, 1, 1.0 / alpha))


def elu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    """``x`` above 0, ``alpha * (exp(x) - 1)`` below (grad_fn ``EluBackward0``; in place ``1``).

    >>> import npgrad
    >>> npgrad.nn.functional.elu(npgrad.tensor([1., 0.]))
    tensor([1., 0.])
    """
    # torch's Python calls torch._C._nn.elu(_): its parser checks come first
    (_ELU_INPLACE_ARGS if inplace else _ELU_ARGS)(input, alpha)
    if inplace:
        return apply_inplace(input, ELU_INPLACE, alpha, 1, 1)
    return ELU(input, alpha, 1, 1)


_ELU_ARGS = checker("elu(Tensor input, Scalar alpha=1, Scalar scale=1, Scalar input_scale=1, *, "
                    "Tensor out=None)")
_ELU_INPLACE_ARGS = checker("elu_(Tensor input, Scalar alpha=1, Scalar scale=1, "
                            "Scalar input_scale=1)")


@signature("elu_(Tensor input, Scalar alpha=1, Scalar scale=1, Scalar input_scale=1)")
def elu_(input: Tensor, alpha: float = 1.0) -> Tensor:
    return elu(input, alpha, True)


def selu(input: Tensor, inplace: bool = False) -> Tensor:
    """Scaled ELU with the self-normalising constants (grad_fn ``EluBackward0``, as torch's).

    >>> import npgrad
    >>> npgrad.nn.functional.selu(npgrad.tensor([0.]))
    tensor([0.])
    """
    if inplace:
        if not isinstance(input, Tensor):
            refuse_non_tensor("selu_", input)
        return apply_inplace(input, ELU_INPLACE, _SELU_ALPHA, _SELU_SCALE, 1)
    return _SELU(input, _SELU_ALPHA, _SELU_SCALE, 1)


_SELU = ELU.alias("selu")  # torch's parser names selu in its errors


@signature("selu_(Tensor input)")
def selu_(input: Tensor) -> Tensor:
    return selu(input, True)


def celu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    """``max(0, x) + min(0, alpha * (exp(x / alpha) - 1))`` (grad_fn ``CeluBackward0``).

    >>> import npgrad
    >>> npgrad.nn.functional.celu(npgrad.tensor([2.]), alpha=2.)
    tensor([2.])
    """
    # torch's Python calls torch.celu / torch.celu_: their parser checks come first
    (_CELU_INPLACE_ARGS if inplace else _CELU_ARGS)(input, alpha)
    if alpha == 0:
        raise RuntimeError("ZeroDivisionError: alpha cannot be 0 for CELU")
    if inplace:
        return apply_inplace(input, CELU_INPLACE, alpha)
    return CELU(input, alpha)


_CELU_ARGS = checker("celu(Tensor input, Scalar alpha=1.0)")
_CELU_INPLACE_ARGS = checker("celu_(Tensor input, Scalar alpha=1.0)")


def _torch_celu(input: Tensor, alpha: float = 1.0) -> Tensor:
    return celu(input, alpha)


def _torch_selu(input: Tensor) -> Tensor:
    return selu(input)


# torch.celu / torch.selu are the C ops, without F's ``inplace`` (named as the ops, for vmap)
_torch_celu.__name__, _torch_selu.__name__ = "celu", "selu"
torch_celu = signature("celu(Tensor input, Scalar alpha=1.0)")(_torch_celu)
torch_selu = signature("selu(Tensor input)")(_torch_selu)


@signature("celu_(Tensor input, Scalar alpha=1.0)")
def celu_(input: Tensor, alpha: float = 1.0) -> Tensor:
    return celu(input, alpha, True)


# -- hardtanh / relu6 / hardsigmoid / hardswish ------------------------------------------------

def _hardtanh_forward(x: np.ndarray, min_val: Any, max_val: Any) -> np.ndarray:
    if x.dtype.kind == "b":
        raise RuntimeError("Bool inputs not supported for hardtanh")
    if x.dtype.kind == "c":
        raise NotImplementedError("clamp is not supported for complex types")
    convert = int if x.dtype.kind in "iu" else float  # integral inputs truncate the bounds
    lo, hi = x.dtype.type(convert(min_val)), x.dtype.type(convert(max_val))
    # Explicit comparisons, not np.clip: a value equal to a bound (-0. against 0.) and NaN pass
    # through unchanged, as torch's clamp keeps them; np.clip's choice there varies by NumPy.
    return np.where(x < lo, lo, np.where(x > hi, hi, x))


HARDTANH = Pointwise(
    "hardtanh(Tensor input, Scalar min_val=-1, Scalar max_val=1, *, Tensor out=None)",
    grad_fn="HardtanhBackward0", forward=_hardtanh_forward, params=("min_val", "max_val"),
    floating=False, warns=False, saves="self",
    # the gradient passes strictly inside (min_val, max_val): 0 at the bounds, as torch's
    derivative=lambda grad, x, lo, hi: where((x > lo) & (x < hi), grad, 0.0))

_RELU6 = HARDTANH.alias("relu6")  # torch's relu6 is hardtanh(0, 6), named relu6 in errors


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
        return apply_inplace(input, HARDTANH, min_val, max_val)
    return HARDTANH(input, min_val, max_val)


@signature("hardtanh_(Tensor input, Scalar min_val=-1, Scalar max_val=1)")
def hardtanh_(input: Tensor, min_val: float = -1.0, max_val: float = 1.0) -> Tensor:
    return hardtanh(input, min_val, max_val, True)


def relu6(input: Tensor, inplace: bool = False) -> Tensor:
    """``min(max(x, 0), 6)``: hardtanh(0, 6), whose grad_fn torch reports (``HardtanhBackward0``).

    >>> import npgrad
    >>> npgrad.nn.functional.relu6(npgrad.tensor([-1., 7.]))
    tensor([0., 6.])
    """
    if inplace:
        return apply_inplace(input, _RELU6, 0, 6)
    return _RELU6(input, 0, 6)


_ONE_SIXTH_F32 = float(np.float32(1.0 / 6.0))

HARDSIGMOID = Pointwise(
    "hardsigmoid(Tensor input, *, Tensor out=None)", grad_fn="HardsigmoidBackward0",
    forward=lambda x: _in_float64(lambda v: np.minimum(np.maximum(v + 3.0, 0.0), 6.0) / 6.0, x),
    floating=False, refuses="biuVc", kernel="hardsigmoid_cpu", own_bfloat16=True, warns=False,
    saves="self",
    # torch's kernel multiplies by 1/6 rounded to float32, in every dtype
    derivative=lambda grad, x: where((x > -3.0) & (x < 3.0), grad * _ONE_SIXTH_F32, 0.0))


def hardsigmoid(input: Tensor, inplace: bool = False) -> Tensor:
    """``relu6(x + 3) / 6`` (grad_fn ``HardsigmoidBackward0``).

    >>> import npgrad
    >>> npgrad.nn.functional.hardsigmoid(npgrad.tensor([0.]))
    tensor([0.5000])
    """
    return apply_inplace(input, HARDSIGMOID) if inplace else HARDSIGMOID(input)


def _hardswish_derivative(grad: Tensor, x: Tensor) -> Tensor:
    inner = where(x < 3.0, grad * (x / 3 + 0.5), grad)
    return where(x <= -3.0, 0.0, inner)


HARDSWISH = Pointwise(
    "hardswish(Tensor input)", grad_fn="HardswishBackward0",
    forward=lambda x: _in_float64(lambda v: v * np.minimum(np.maximum(v + 3.0, 0.0), 6.0) / 6.0,
                                  x),
    floating=False, refuses="biuVc", kernel="hardswish_cpu", own_bfloat16=True, warns=False,
    saves="self", derivative=_hardswish_derivative)


def hardswish(input: Tensor, inplace: bool = False) -> Tensor:
    """``x * relu6(x + 3) / 6`` (grad_fn ``HardswishBackward0``).

    >>> import npgrad
    >>> npgrad.nn.functional.hardswish(npgrad.tensor([3.]))
    tensor([3.])
    """
    return apply_inplace(input, HARDSWISH) if inplace else HARDSWISH(input)


# -- mish / logsigmoid / softsign ------------------------------------------------------------

def _mish_derivative(grad: Tensor, x: Tensor) -> Tensor:
    t = tanh(softplus(x))
    return grad * (t + x * sigmoid(x) * (1 - t * t))


MISH = Pointwise(
    "mish(Tensor input)", grad_fn="MishBackward0",
    forward=lambda x: _in_float64(lambda v: v * np.tanh(np.logaddexp(0.0, v)), x),
    floating=False, refuses="biuVc", kernel="mish_cpu", own_bfloat16=True, warns=False,
    saves="self", derivative=_mish_derivative)


def mish(input: Tensor, inplace: bool = False) -> Tensor:
    """``x * tanh(softplus(x))`` (grad_fn ``MishBackward0``).

    >>> import npgrad
    >>> npgrad.nn.functional.mish(npgrad.tensor([0.]))
    tensor([0.])
    """
    return apply_inplace(input, MISH) if inplace else MISH(input)


# torch's ``log_sigmoid_forward`` returns a second output, ``buffer`` (``exp(-|x|)`` on the
# CPU), which its node saves with the input (``grad_fn._saved_buffer``); the gradient is
# ``grad * sigmoid(-x)``, written from the input alone.
def _log_sigmoid_arrays(x: np.ndarray) -> tuple:
    not_implemented_for("log_sigmoid_cpu", x.dtype, "biuVc")
    out = _in_float64(lambda v: np.minimum(v, 0.0) - np.log1p(np.exp(-np.abs(v))), x)
    return out, _in_float64(lambda v: np.exp(-np.abs(v)), x)


LOG_SIGMOID = General(
    "log_sigmoid(Tensor input, *, Tensor out=None)", grad_fn="LogSigmoidBackward0",
    forward=None, saves=("self", "buffer"), extra=("buffer",),
    derivatives={"self": lambda grad, self: grad * sigmoid(-self)},
    tangent=lambda self_t, self: self_t * sigmoid(-self))
LogSigmoidBackward0 = LOG_SIGMOID.node


@LOG_SIGMOID.public
def logsigmoid(input: Tensor) -> Tensor:
    """``log(sigmoid(x))``, computed without overflow (grad_fn ``LogSigmoidBackward0``).

    >>> import npgrad
    >>> npgrad.nn.functional.logsigmoid(npgrad.tensor([0.]))
    tensor([-0.6931])
    """
    out, _ = LOG_SIGMOID.record((input,), _log_sigmoid_arrays(input._data))
    return out  # type: ignore[no-any-return]


# -- threshold -----------------------------------------------------------------------------

def _threshold_forward(x: np.ndarray, threshold: Any, value: Any) -> np.ndarray:
    # torch's kernel converts both numbers to the input's dtype first, refusing an overflow
    check_scalar_fits(threshold, x.dtype)
    check_scalar_fits(value, x.dtype)
    # torch's ``x <= threshold ? value : x``: a NaN input stays NaN
    return np.where(x <= threshold, np.asarray(value).astype(x.dtype), x)


def _threshold_derivative(grad: Tensor, x: Tensor, threshold: Any, value: Any) -> Tensor:
    return where(x <= threshold, 0.0, grad)


THRESHOLD = Pointwise(
    "threshold(Tensor input, Scalar threshold, Scalar value, *, Tensor out=None)",
    grad_fn="ThresholdBackward0", forward=_threshold_forward, params=("threshold", "value"),
    keeps=("threshold",), floating=False, refuses="bc", kernel="threshold_cpu", warns=False,
    saves="self", derivative=lambda grad, x, threshold: _threshold_derivative(
        grad, x, threshold, None))

# the in-place form keeps the input as it was before the write (as torch's saves it)
THRESHOLD_INPLACE = Pointwise(
    "threshold_(Tensor input, Scalar threshold, Scalar value)", grad_fn="ThresholdBackward1",
    forward=_threshold_forward, params=("threshold", "value"), keeps=("threshold",),
    floating=False, refuses="bc", kernel="threshold_cpu", warns=False, saves="self",
    derivative=lambda grad, x, threshold: _threshold_derivative(grad, x, threshold, None))


@THRESHOLD.public
def threshold(input: Tensor, threshold: float, value: float) -> Tensor:
    """``value`` where ``input <= threshold``, else ``input`` (grad_fn ``ThresholdBackward0``).

    >>> import npgrad
    >>> npgrad.threshold(npgrad.tensor([0., 2.]), 1., -1.)
    tensor([-1.,  2.])
    """
    return THRESHOLD(input, threshold, value)


@THRESHOLD_INPLACE.public
def threshold_(input: Tensor, threshold: float, value: float) -> Tensor:
    """In-place :func:`threshold` (grad_fn ``ThresholdBackward1``)."""
    return apply_inplace(input, THRESHOLD_INPLACE, threshold, value)


_threshold_op = threshold  # (the functional form's argument takes the name)


def _threshold(input: Tensor, threshold: float, value: float, inplace: bool = False) -> Tensor:
    """``torch.nn.functional.threshold`` (torch's Python ``_threshold``): :func:`threshold`,
    or :func:`threshold_` with ``inplace``.

    >>> import npgrad
    >>> npgrad.nn.functional.threshold(npgrad.tensor([0., 2.]), 1., -1.)
    tensor([-1.,  2.])
    """
    if inplace:
        return threshold_(input, threshold, value)
    return _threshold_op(input, threshold, value)


def softsign(input: Tensor) -> Tensor:
    """``x / (1 + |x|)``; composed as torch composes it (grad_fn ``DivBackward0``).

    >>> import npgrad
    >>> npgrad.nn.functional.softsign(npgrad.tensor([1.]))
    tensor([0.5000])
    """
    python_method(input, "abs", Tensor)  # Note [torch's Python touching a non-Tensor]
    return input / (abs_(input) + 1)


# -- softmin / glu ----------------------------------------------------------------------------

def _softmax_dim(name: str, ndim: int, stacklevel: int) -> int:
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
    from .softmax import softmax  # softmax sits above the activations

    if dim is None:
        dim = _softmax_dim("softmin", input.dim(), _stacklevel)
    if not isinstance(input, Tensor):  # Note [torch's Python touching a non-Tensor]
        python_method(-input, "softmax", Tensor, dim)
    return softmax(neg(input), dim, dtype)


# glu: ``a * sigmoid(b)`` for the halves ``a, b`` of ``self`` along ``dim``.  Not elementwise
# (an output reads two inputs), so a General entry; torch keeps ``dim`` as it was given
# (``glu(x).grad_fn._saved_dim`` reads -1 as torch's unsigned getter shows it).
def _glu_backward(grad: Tensor, self: Tensor, dim: int) -> Tensor:
    a, b = chunk(self, 2, dim)
    s = sigmoid(b)
    return cat([grad * s, grad * a * s * (1 - s)], dim)


def _glu_tangent(self_t: Tensor, self: Tensor, dim: int) -> Tensor:
    a, b = chunk(self, 2, dim)
    a_t, b_t = chunk(self_t, 2, dim)
    s = sigmoid(b)
    return a_t * s + a * s * (1 - s) * b_t


GLU = General(
    "glu(Tensor input, int64_t dim=-1)", grad_fn="GluBackward0",
    forward=None, params=("dim",), keeps=("dim",), saves=("self",),
    derivatives={"self": _glu_backward}, tangent=_glu_tangent)


def glu(input: Tensor, dim: int = -1) -> Tensor:
    """Gated linear unit: the first half of ``dim`` times sigmoid of the second half.

    >>> import npgrad
    >>> npgrad.nn.functional.glu(npgrad.tensor([2., 0.]))
    tensor([1.])
    """
    x = input._data
    if x.ndim == 0:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    d = wrap_dim(dim, x.ndim)
    if x.shape[d] % 2:
        raise RuntimeError(f"Halving dimension must be even, but dimension {d} is size "
                           f"{x.shape[d]}")
    not_implemented_for("glu_cpu", x.dtype, "biuVc")
    a, b = np.split(x, 2, axis=d)
    return GLU.record((input,), a * _np_sigmoid(b), (dim,))  # type: ignore[no-any-return]
