"""Trigonometric, hyperbolic and special pointwise ops (torch.special's logit, sinc, entr too):
each one an entry of the op registry (Note [An op is an entry]), next to its function.

asin ... atanh, atan2, hypot, erfc, exp2, logaddexp, xlogy, nan_to_num, addcmul and
addcdiv.  Backward rules are torch's formulas (tools/autograd/derivatives.yaml) written
in npgrad ops, so they are differentiable again (Note [The per-op path] in ``_core``).
"""
from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np

from .. import _bfloat16, _dtype
from .._mode import _tls, RECORDING
if TYPE_CHECKING:
    from .._tensor import Tensor
else:  # Note [Tensor base and Tensor] in npgrad._tensor_base
    from .._tensor_base import TensorBase as Tensor
from .._tensor_base import wrap
from . import _erf_kernels
from ._core import binary_arrays, is_tensor
from ._shape_util import broadcast_shapes
from .checks import not_implemented_for
from .inplace import apply_inplace
from .pointwise import (EXPM1, LOG1P, SIGMOID, cos, exp, isfinite, log, logical_or,
                        masked_fill, rsqrt, sin, where)
from .registry import General, Pointwise, PointwiseBinary, conjugate_of
from .signature import signature

_LN2 = math.log(2.0)
_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)


# -- inverse trigonometric: entries of the op registry (Note [An op is an entry]) ----------

ASIN = Pointwise("asin(Tensor input, *, Tensor out=None)", grad_fn="AsinBackward0",
                 forward=np.arcsin, saves="self",
                 derivative=lambda grad, x: grad * rsqrt(1 - x * x))


@ASIN.public
def asin(input: Tensor) -> Tensor:
    """Arcsine, elementwise; integers give the default float dtype (grad_fn ``AsinBackward0``).

    >>> import npgrad
    >>> npgrad.asin(npgrad.tensor([0., 1.]))
    tensor([0.0000, 1.5708])
    """
    return ASIN(input)


ACOS = Pointwise("acos(Tensor input, *, Tensor out=None)", grad_fn="AcosBackward0",
                 forward=np.arccos, saves="self",
                 derivative=lambda grad, x: grad * -rsqrt(1 - x * x))


@ACOS.public
def acos(input: Tensor) -> Tensor:
    """Arccosine, elementwise (grad_fn ``AcosBackward0``).

    >>> import npgrad
    >>> npgrad.acos(npgrad.tensor([1.]))
    tensor([0.])
    """
    return ACOS(input)


ATAN = Pointwise("atan(Tensor input, *, Tensor out=None)", grad_fn="AtanBackward0",
                 forward=np.arctan, saves="self",
                 derivative=lambda grad, x: grad / (x * x + 1))


@ATAN.public
def atan(input: Tensor) -> Tensor:
    """Arctangent, elementwise (grad_fn ``AtanBackward0``).

    >>> import npgrad
    >>> npgrad.atan(npgrad.tensor([1.]))
    tensor([0.7854])
    """
    return ATAN(input)


_ARCSIN, _ARCCOS, _ARCTAN = ASIN.alias("arcsin"), ACOS.alias("arccos"), ATAN.alias("arctan")


@_ARCSIN.public
def arcsin(input: Tensor) -> Tensor:
    return _ARCSIN(input)


@_ARCCOS.public
def arccos(input: Tensor) -> Tensor:
    return _ARCCOS(input)


@_ARCTAN.public
def arctan(input: Tensor) -> Tensor:
    return _ARCTAN(input)


# -- hyperbolic ---------------------------------------------------------------------------

SINH = Pointwise("sinh(Tensor input, *, Tensor out=None)", grad_fn="SinhBackward0",
                 forward=np.sinh, saves="self", derivative=lambda grad, x: grad * cosh(x))


@SINH.public
def sinh(input: Tensor) -> Tensor:
    """Hyperbolic sine (grad_fn ``SinhBackward0``).

    >>> import npgrad
    >>> npgrad.sinh(npgrad.tensor([0.]))
    tensor([0.])
    """
    return SINH(input)


COSH = Pointwise("cosh(Tensor input, *, Tensor out=None)", grad_fn="CoshBackward0",
                 forward=np.cosh, saves="self", derivative=lambda grad, x: grad * sinh(x))


@COSH.public
def cosh(input: Tensor) -> Tensor:
    """Hyperbolic cosine (grad_fn ``CoshBackward0``).

    >>> import npgrad
    >>> npgrad.cosh(npgrad.tensor([0.]))
    tensor([1.])
    """
    return COSH(input)


ASINH = Pointwise("asinh(Tensor input, *, Tensor out=None)", grad_fn="AsinhBackward0",
                  forward=np.arcsinh, saves="self",
                  derivative=lambda grad, x: grad * rsqrt(x * x + 1))


@ASINH.public
def asinh(input: Tensor) -> Tensor:
    """Inverse hyperbolic sine (grad_fn ``AsinhBackward0``).

    >>> import npgrad
    >>> npgrad.asinh(npgrad.tensor([0.]))
    tensor([0.])
    """
    return ASINH(input)


ACOSH = Pointwise("acosh(Tensor input, *, Tensor out=None)", grad_fn="AcoshBackward0",
                  forward=np.arccosh, saves="self",
                  derivative=lambda grad, x: grad * rsqrt(x * x - 1))


@ACOSH.public
def acosh(input: Tensor) -> Tensor:
    """Inverse hyperbolic cosine, defined for ``x >= 1`` (grad_fn ``AcoshBackward0``).

    >>> import npgrad
    >>> npgrad.acosh(npgrad.tensor([1.]))
    tensor([0.])
    """
    return ACOSH(input)


ATANH = Pointwise("atanh(Tensor input, *, Tensor out=None)", grad_fn="AtanhBackward0",
                  forward=np.arctanh, saves="self",
                  derivative=lambda grad, x: grad / (1 - x * x))


@ATANH.public
def atanh(input: Tensor) -> Tensor:
    """Inverse hyperbolic tangent, defined on (-1, 1) (grad_fn ``AtanhBackward0``).

    >>> import npgrad
    >>> npgrad.atanh(npgrad.tensor([0.]))
    tensor([0.])
    """
    return ATANH(input)


_ARCSINH, _ARCCOSH = ASINH.alias("arcsinh"), ACOSH.alias("arccosh")
_ARCTANH = ATANH.alias("arctanh")


@_ARCSINH.public
def arcsinh(input: Tensor) -> Tensor:
    return _ARCSINH(input)


@_ARCCOSH.public
def arccosh(input: Tensor) -> Tensor:
    return _ARCCOSH(input)


@_ARCTANH.public
def arctanh(input: Tensor) -> Tensor:
    return _ARCTANH(input)


# -- erfc / exp2 ----------------------------------------------------------------------------

# -- the error functions ------------------------------------------------------------------

ERF = Pointwise(
    "erf(Tensor input, *, Tensor out=None)", grad_fn="ErfBackward0",
    forward=_erf_kernels.erf,  # Note [Vectorised erf]: float64 work, rounded once
    refuses="c", kernel="erf_vml_cpu", own_bfloat16=True, warns=False, saves="self",
    derivative=lambda grad, x: grad * (exp(-(x * x)) * _TWO_OVER_SQRT_PI))


@ERF.public
def erf(input: Tensor) -> Tensor:
    """Error function; integers give the default float dtype (grad_fn ``ErfBackward0``).

    >>> import npgrad
    >>> npgrad.erf(npgrad.tensor([0., 1.]))
    tensor([0.0000, 0.8427])
    """
    return ERF(input)


_erfc_np = _erf_kernels.erfc   # Note [Vectorised erf]


def _np_erfc(x: np.ndarray) -> np.ndarray:
    # float64 throughout, then rounded once: erfc's tail is where float32 loses most
    return _erfc_np(x).astype(x.dtype, copy=False)


ERFC = Pointwise("erfc(Tensor input, *, Tensor out=None)", grad_fn="ErfcBackward0",
                 forward=_np_erfc, saves="self",
                 derivative=lambda grad, x: grad * (exp(-(x * x)) * -_TWO_OVER_SQRT_PI))


@ERFC.public
def erfc(input: Tensor) -> Tensor:
    """Complementary error function ``1 - erf(x)`` (grad_fn ``ErfcBackward0``).

    >>> import npgrad
    >>> npgrad.erfc(npgrad.tensor([0.]))
    tensor([1.])
    """
    return ERFC(input)


EXP2 = Pointwise("exp2(Tensor input, *, Tensor out=None)", grad_fn="Exp2Backward0",
                 forward=np.exp2, saves="result", derivative=lambda grad, r: grad * r * _LN2)


@EXP2.public
def exp2(input: Tensor) -> Tensor:
    """``2 ** x`` (grad_fn ``Exp2Backward0``).

    >>> import npgrad
    >>> npgrad.exp2(npgrad.tensor([3.]))
    tensor([8.])
    """
    return EXP2(input)


# -- two-input ops ----------------------------------------------------------------------------

def _float_operands(ad: Any, bd: Any) -> tuple:
    """Operands of a floating-only binary op: integral ones become the default float dtype."""
    if isinstance(ad, np.ndarray) and ad.dtype.kind != "f":
        ad = ad.astype(_dtype.get_default_dtype().np_dtype)
    if isinstance(bd, np.ndarray) and bd.dtype.kind != "f":
        bd = bd.astype(ad.dtype if isinstance(ad, np.ndarray) else
                       _dtype.get_default_dtype().np_dtype)
    return ad, bd


def _atan2_reciprocal(x: Tensor, y: Tensor) -> Tensor:
    denominator = x * x + y * y
    # torch's rule is 0 (of the right sign) at the origin, not 0 * inf
    return where(denominator == 0, 0.0, denominator.reciprocal())


ATAN2 = PointwiseBinary(
    "atan2(Tensor input, Tensor other, *, Tensor out=None)", grad_fn="Atan2Backward0",
    forward=np.arctan2, floating=True, warns=False, saves=("self", "other"),
    derivatives=(lambda grad, x, y: grad * y * _atan2_reciprocal(x, y),
                 lambda grad, x, y: grad * -x * _atan2_reciprocal(x, y)))


@ATAN2.public
def atan2(input: Tensor, other: Tensor) -> Tensor:
    """The angle of the point ``(other, input)``, in (-pi, pi] (grad_fn ``Atan2Backward0``).

    >>> import npgrad
    >>> npgrad.atan2(npgrad.tensor([1.]), npgrad.tensor([-1.]))
    tensor([2.3562])
    """
    return ATAN2(input, other)


_ARCTAN2 = ATAN2.alias("arctan2")


@_ARCTAN2.public
def arctan2(input: Tensor, other: Tensor) -> Tensor:
    return _ARCTAN2(input, other)

HYPOT = PointwiseBinary(
    "hypot(Tensor input, Tensor other, *, Tensor out=None)", grad_fn="HypotBackward0",
    forward=np.hypot, float_kernel="hypot_cpu", saves=("self", "other", "result"),
    derivatives=(lambda grad, x, y, r: grad * x / r,
                 lambda grad, x, y, r: grad * y / r))


@HYPOT.public
def hypot(input: Tensor, other: Tensor) -> Tensor:
    """``sqrt(input**2 + other**2)`` without overflow (grad_fn ``HypotBackward0``).

    >>> import npgrad
    >>> npgrad.hypot(npgrad.tensor([3.]), npgrad.tensor([4.]))
    tensor([5.])
    """
    return HYPOT(input, other)


def complex_logaddexp(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """torch's complex ``log(exp(x) + exp(y))``: ``max + log1p(exp(min - max))`` with the
    operands ordered by real part (``y`` first on a tie); two equal infinite real parts give
    ``min`` (-inf) or ``log(exp(min) + exp(max))`` (+inf), and a NaN in ``min`` NaN."""
    x, y = np.broadcast_arrays(np.asarray(x), np.asarray(y))
    first = x.real < y.real
    lo, hi = np.where(first, x, y), np.where(first, y, x)
    with np.errstate(all="ignore"):
        out = np.log1p(np.exp(lo - hi)) + hi
        infinite = ~np.isfinite(lo.real) & (lo.real == hi.real)
        if infinite.any():
            out = np.where(infinite, np.where(lo.real < 0, lo, np.log(np.exp(lo) + np.exp(hi))),
                           out)
    nan = np.isnan(lo.real) | np.isnan(lo.imag)
    return np.where(nan, np.asarray(complex(np.nan, np.nan), out.dtype), out)


def _logaddexp_forward(x: Any, y: Any) -> np.ndarray:
    if np.result_type(x, y).kind == "c":  # NumPy has no complex loop
        return complex_logaddexp(x, y)
    return np.logaddexp(x, y)


LOGADDEXP = PointwiseBinary(
    "logaddexp(Tensor input, Tensor other, *, Tensor out=None)",
    grad_fn="LogaddexpBackward0", forward=_logaddexp_forward, float_kernel="logaddexp_cpu",
    saves=("self", "other"),
    derivatives=(lambda grad, x, y: grad / conjugate_of(exp(y - x) + 1),
                 lambda grad, x, y: grad / conjugate_of(exp(x - y) + 1)))


@LOGADDEXP.public
def logaddexp(input: Tensor, other: Tensor) -> Tensor:
    """``log(exp(input) + exp(other))``, computed stably (grad_fn ``LogaddexpBackward0``).

    >>> import npgrad
    >>> npgrad.logaddexp(npgrad.tensor([0.]), npgrad.tensor([0.]))
    tensor([0.6931])
    """
    return LOGADDEXP(input, other)


# -- xlogy: three overloads, three entries -----------------------------------------------------

def _np_xlogy(x: Any, y: Any) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.where(x == 0, np.where(np.isnan(y), np.nan, 0.0), x * np.log(y))
    return out


def _xlogy_self_grad(grad: Tensor, x: Tensor, y: Any) -> Tensor:
    """torch's rule for self: ``xlogy(grad, other)`` with 0 where ``self == 0 and other <= 0``:
    at ``self == 0`` it is log(other), not the 0 that the forward's own convention suggests."""
    return masked_fill(xlogy(grad, y), (x == 0) & (y <= 0), 0.0)


XLOGY = PointwiseBinary(
    "xlogy(Tensor input, Tensor other, *, Tensor out=None)", grad_fn="XlogyBackward0",
    forward=lambda a, b: _np_xlogy(a, b).astype(np.result_type(a, b), copy=False),
    floating=True, saves=("self", "other"),
    derivatives=(_xlogy_self_grad, lambda grad, x, y: grad * x / y),
    also=("xlogy(Scalar self, Tensor other, *, Tensor out=None)",
          "xlogy(Tensor input, Scalar other, *, Tensor out=None)"))


def _xlogy_scalar_other_grad(grad: Tensor, x: Tensor, other: Any) -> Tensor:
    """The rule of XlogyBackward0 for self, with a constant other."""
    g = xlogy(grad, other)
    return masked_fill(g, x == 0, 0.0) if other <= 0 else g


XLOGY_SCALAR_OTHER = Pointwise(
    "xlogy(Tensor input, Scalar other, *, Tensor out=None)", grad_fn="XlogyBackward2",
    forward=lambda d, other: _np_xlogy(d, np.asarray(other, d.dtype)).astype(d.dtype,
                                                                              copy=False),
    params=("other",), saves="self", derivative=_xlogy_scalar_other_grad,
    also=("xlogy(Tensor input, Tensor other, *, Tensor out=None)",
          "xlogy(Scalar self, Tensor other, *, Tensor out=None)"))

# a number ``self``: only ``other`` is differentiable; torch keeps the number as
# ``_saved_self``, as it was given
XLOGY_SCALAR_SELF = General(
    "xlogy(Scalar self, Tensor other, *, Tensor out=None)", grad_fn="XlogyBackward1",
    forward=None, inputs=("other",), params=("self",), keeps=("self",), scalars=("self",),
    saves=("other",),
    derivatives={"other": lambda grad, other, self: grad * self / other},
    tangent=lambda other_t, other, self: other_t * self / other,
    also=("xlogy(Tensor input, Tensor other, *, Tensor out=None)",
          "xlogy(Tensor input, Scalar other, *, Tensor out=None)"))


@signature("xlogy(Tensor input, Tensor other, *, Tensor out=None)",
           "xlogy(Scalar self, Tensor other, *, Tensor out=None)",
           "xlogy(Tensor input, Scalar other, *, Tensor out=None)")
def xlogy(input: Any, other: Any) -> Tensor:
    """``input * log(other)``, and 0 where ``input == 0`` (unless ``other`` is NaN).

    XlogyBackward0 for two tensors, 1 for a scalar ``input``, 2 for a scalar ``other``.

    >>> import npgrad
    >>> npgrad.xlogy(npgrad.tensor([0., 2.]), npgrad.tensor([0., 1.]))
    tensor([0., 0.])
    """
    input_tensor, other_tensor = is_tensor(input), is_tensor(other)
    if not input_tensor and not other_tensor:
        raise TypeError(
            f"xlogy() received an invalid combination of arguments - got "
            f"({type(input).__name__}, {type(other).__name__}), but expected one of:\n"
            " * (Tensor input, Tensor other, *, Tensor out = None)\n"
            " * (Number self, Tensor other, *, Tensor out = None)\n"
            " * (Tensor input, Number other, *, Tensor out = None)\n")
    if input_tensor and other_tensor:
        return XLOGY(input, other)
    if type(input) is complex or type(other) is complex:  # a complex result: no kernel
        not_implemented_for("xlogy_cpu", np.result_type(*binary_arrays(input, other)), "c")
    if input_tensor:
        return XLOGY_SCALAR_OTHER(input, other)
    bd = other._data
    not_implemented_for("xlogy_cpu", bd.dtype, "c")
    _, bd = _float_operands(None, bd)  # a scalar self takes the tensor's float dtype
    out = _np_xlogy(np.asarray(input, dtype=bd.dtype), bd).astype(bd.dtype, copy=False)
    return XLOGY_SCALAR_SELF.record((other,), out, (input,))  # type: ignore[no-any-return]


# -- nan_to_num ----------------------------------------------------------------------------------

_BF16_MAX = 3.3895313892515355e38  # bfloat16's largest finite value (NumPy has no finfo of it)


def _nan_to_num_forward(d: np.ndarray, nan: Any, posinf: Any, neginf: Any) -> np.ndarray:
    nan = 0.0 if nan is None else nan
    if d.dtype.kind == "V":  # bfloat16: in float32, with bfloat16's own largest values
        posinf = _BF16_MAX if posinf is None else posinf
        neginf = -_BF16_MAX if neginf is None else neginf
        return np.asarray(_bfloat16.in_float32(
            lambda f: np.nan_to_num(f, nan=nan, posinf=posinf, neginf=neginf), d))
    return np.nan_to_num(d, nan=nan, posinf=posinf, neginf=neginf)


# the replacements are constants: the gradient passes where the input is finite.  torch keeps
# only the input; the half types compute themselves (``own_bfloat16``), their default
# replacements of the infinities being their own largest finite values
NAN_TO_NUM = Pointwise(
    "nan_to_num(Tensor input, double? nan=None, double? posinf=None, double? neginf=None, *, "
    "Tensor out=None)", grad_fn="NanToNumBackward0", forward=_nan_to_num_forward,
    params=("nan", "posinf", "neginf"), keeps=(), floating=False, own_bfloat16=True,
    saves="self", derivative=lambda grad, x: grad * isfinite(x))


@signature("nan_to_num(Tensor input, double? nan=None, double? posinf=None, double? neginf=None, "
           "*, Tensor out=None)")
def nan_to_num(input: Tensor, nan: float = 0.0, posinf: float | None = None,
               neginf: float | None = None) -> Tensor:
    """NaN to ``nan``, +-inf to ``posinf``/``neginf`` (default: the dtype's largest finite values).

    >>> import npgrad
    >>> npgrad.nan_to_num(npgrad.tensor([float('nan'), 1.]))
    tensor([0., 1.])
    """
    d = input._data
    if d.dtype.kind == "c" and input._requires_grad and _tls.mode == RECORDING:
        raise RuntimeError("nan_to_num does not support automatic differentiation for outputs "
                           "with complex dtype.")
    return _nan_to_num(input, nan, posinf, neginf)


def _nan_to_num(input: Tensor, nan: Any, posinf: Any, neginf: Any) -> Tensor:
    """``nan_to_num`` without torch's out-of-place refusal of complex autograd, which its
    in-place form does not make: ``nan_to_num_`` records NanToNumBackward0 for a complex
    tensor too."""
    d = input._data
    if d.dtype.kind not in "fcV":  # integers have no NaN or inf: a plain copy, as torch's
        return wrap(d.copy(), _tls.mode)
    return NAN_TO_NUM(input, nan, posinf, neginf)


# -- addcmul / addcdiv ------------------------------------------------------------------------

def _three_operands(op: str, input: Tensor, tensor1: Any, tensor2: Any) -> tuple:
    for pos, (name, t) in enumerate((("tensor1", tensor1), ("tensor2", tensor2)), start=2):
        if not is_tensor(t):
            raise TypeError(f"{op}(): argument '{name}' (position {pos}) must be Tensor, not "
                            f"{type(t).__name__}")
    arrays = (input._data, tensor1._data, tensor2._data)
    rt = _dtype.result_type_np(arrays)
    return tuple(a.astype(rt, copy=False) for a in arrays)


def _broadcast_error(arrays: tuple) -> None:
    shape: tuple = ()
    for a in arrays:
        shape = broadcast_shapes(shape, a.shape)


# addcmul / addcdiv: three inputs and torch's Scalar ``value`` (kept as it was given).  A
# tensor is saved only when an input whose rule reads it needs a gradient (addcdiv's
# ``tensor2`` is read by two rules: torch keeps it always).  Complex: the conjugated
# derivatives (Note [Complex gradients by conjugation]).
ADDCMUL = General(
    "addcmul(Tensor input, Tensor tensor1, Tensor tensor2, *, Scalar value=1, Tensor out=None)",
    grad_fn="AddcmulBackward0", forward=None, inputs=("self", "tensor1", "tensor2"),
    params=("value",), keeps=("value",), scalars=("value",), saves=("tensor1", "tensor2"),
    derivatives={"self": lambda grad: grad,
                 "tensor1": lambda grad, tensor2, value:
                 grad * conjugate_of(tensor2) * conjugate_of(value),
                 "tensor2": lambda grad, tensor1, value:
                 grad * conjugate_of(tensor1) * conjugate_of(value)},
    tangent=lambda self_t, tensor1_t, tensor2_t, tensor1, tensor2, value:
    self_t + (tensor1_t * tensor2 + tensor1 * tensor2_t) * value)


@signature("addcmul(Tensor input, Tensor tensor1, Tensor tensor2, *, Scalar value=1, "
           "Tensor out=None)",
           "addcmul(Tensor input, Scalar value, Tensor tensor1, Tensor tensor2, *, "
           "Tensor out=None)|deprecated")  # Note [Deprecated overloads]
def addcmul(input: Tensor, tensor1: Tensor, tensor2: Tensor, *, value: Any = 1) -> Tensor:
    """``input + value * tensor1 * tensor2`` (grad_fn ``AddcmulBackward0``).

    >>> import npgrad
    >>> npgrad.addcmul(npgrad.ones(2), npgrad.tensor([1., 2.]), npgrad.tensor([3., 4.]), value=2)
    tensor([ 7., 17.])
    """
    a, b, c = _three_operands("addcmul", input, tensor1, tensor2)
    if a.dtype.kind in "iu" and isinstance(value, float):
        value = int(value)  # torch converts the value to the integral result type
    try:
        out = (a + value * b * c).astype(a.dtype, copy=False)
    except ValueError:
        _broadcast_error((a, b, c))
        raise
    return ADDCMUL.record((input, tensor1, tensor2), out, (value,))  # type: ignore[no-any-return]


_ADDCDIV_INT_MSG = (
    "Integer division with addcdiv is no longer supported, and in a future  release addcdiv "
    "will perform a true division of tensor1 and tensor2. The historic addcdiv behavior can be "
    "implemented as (input + value * torch.trunc(tensor1 / tensor2)).to(input.dtype) for "
    "integer inputs and as (input + value * tensor1 / tensor2) for float inputs. The future "
    "addcdiv behavior is just the latter implementation: (input + value * tensor1 / tensor2), "
    "for all dtypes.")


ADDCDIV = General(
    "addcdiv(Tensor input, Tensor tensor1, Tensor tensor2, *, Scalar value=1, Tensor out=None)",
    grad_fn="AddcdivBackward0", forward=None, inputs=("self", "tensor1", "tensor2"),
    params=("value",), keeps=("value",), scalars=("value",), saves=("tensor1", "tensor2"),
    derivatives={"self": lambda grad: grad,
                 "tensor1": lambda grad, tensor2, value: grad * conjugate_of(value / tensor2),
                 "tensor2": lambda grad, tensor1, tensor2, value:
                 -grad * conjugate_of(tensor1 * value / (tensor2 * tensor2))},
    tangent=lambda self_t, tensor1_t, tensor2_t, tensor1, tensor2, value:
    self_t + (tensor1_t / tensor2 - tensor1 * tensor2_t / (tensor2 * tensor2)) * value)


@signature("addcdiv(Tensor input, Tensor tensor1, Tensor tensor2, *, Scalar value=1, "
           "Tensor out=None)",
           "addcdiv(Tensor input, Scalar value, Tensor tensor1, Tensor tensor2, *, "
           "Tensor out=None)|deprecated")  # Note [Deprecated overloads]
def addcdiv(input: Tensor, tensor1: Tensor, tensor2: Tensor, *, value: Any = 1) -> Tensor:
    """``input + value * tensor1 / tensor2`` (grad_fn ``AddcdivBackward0``).

    >>> import npgrad
    >>> npgrad.addcdiv(npgrad.ones(2), npgrad.tensor([1., 2.]), npgrad.tensor([4., 4.]), value=2)
    tensor([1.5000, 2.0000])
    """
    if (is_tensor(tensor1) and is_tensor(tensor2) and tensor1._data.dtype.kind in "iub"
            and tensor2._data.dtype.kind in "iub"):
        raise RuntimeError(_ADDCDIV_INT_MSG)
    a, b, c = _three_operands("addcdiv", input, tensor1, tensor2)
    try:
        with np.errstate(divide="ignore", invalid="ignore"):
            out = (a + value * b / c).astype(a.dtype, copy=False)
    except ValueError:
        _broadcast_error((a, b, c))
        raise
    return ADDCDIV.record((input, tensor1, tensor2), out, (value,))  # type: ignore[no-any-return]


# -- in-place forms --------------------------------------------------------------------------------

@signature("asin_(Tensor input)")
def asin_(input: Tensor) -> Tensor:
    return apply_inplace(input, asin)


@signature("acos_(Tensor input)")
def acos_(input: Tensor) -> Tensor:
    return apply_inplace(input, acos)


@signature("atan_(Tensor input)")
def atan_(input: Tensor) -> Tensor:
    return apply_inplace(input, atan)


@signature("sinh_(Tensor input)")
def sinh_(input: Tensor) -> Tensor:
    return apply_inplace(input, sinh)


@signature("cosh_(Tensor input)")
def cosh_(input: Tensor) -> Tensor:
    return apply_inplace(input, cosh)


# Note [In-place ops without a derivative]
# torch records asinh_, acosh_ and atanh_ with a node of their own (``AsinhBackward1`` ...)
# that has no derivative: backward through it raises, and so does an input's tangent, at
# once.  Each is an entry whose rules raise torch's errors.
def _no_derivative(op: str) -> dict:
    def derivative(grad: Tensor) -> Tensor:
        raise NotImplementedError(f"the derivative for 'inplace version of {op}' is not "
                                  "implemented.")

    def tangent(tangent: Tensor) -> Tensor:
        raise NotImplementedError(
            f"Trying to use forward AD with {op}_ that does not support it because it has "
            "not been implemented yet.\nPlease file an issue to PyTorch at "
            "https://github.com/pytorch/pytorch/issues/new?template=feature-request.yml so that "
            "we can prioritize its implementation.")

    return {"saves": "", "derivative": derivative, "tangent": tangent}


ASINH_INPLACE = Pointwise("asinh_(Tensor input)", grad_fn="AsinhBackward1", forward=np.arcsinh,
                          **_no_derivative("asinh"))
ACOSH_INPLACE = Pointwise("acosh_(Tensor input)", grad_fn="AcoshBackward1", forward=np.arccosh,
                          **_no_derivative("acosh"))
ATANH_INPLACE = Pointwise("atanh_(Tensor input)", grad_fn="AtanhBackward1", forward=np.arctanh,
                          **_no_derivative("atanh"))


@signature("asinh_(Tensor input)")
def asinh_(input: Tensor) -> Tensor:
    return apply_inplace(input, ASINH_INPLACE)


@signature("acosh_(Tensor input)")
def acosh_(input: Tensor) -> Tensor:
    return apply_inplace(input, ACOSH_INPLACE)


@signature("atanh_(Tensor input)")
def atanh_(input: Tensor) -> Tensor:
    return apply_inplace(input, ATANH_INPLACE)


@signature("erf_(Tensor input)")
def erf_(self: Tensor) -> Tensor:
    return apply_inplace(self, erf)


@signature("erfc_(Tensor input)")
def erfc_(input: Tensor) -> Tensor:
    return apply_inplace(input, erfc)


@signature("exp2_(Tensor input)")
def exp2_(input: Tensor) -> Tensor:
    return apply_inplace(input, exp2)


def atan2_(self: Tensor, other: Tensor) -> Tensor:
    return apply_inplace(self, atan2, other)


def hypot_(self: Tensor, other: Tensor) -> Tensor:
    return apply_inplace(self, hypot, other)


@signature("xlogy_(Tensor input, Tensor other)",
           "xlogy_(Tensor input, Scalar other)")
def xlogy_(self: Tensor, other: Any) -> Tensor:
    return apply_inplace(self, xlogy, other)


@signature("nan_to_num_(Tensor input, double? nan=None, double? posinf=None, double? neginf=None)")
def nan_to_num_(self: Tensor, nan: float = 0.0, posinf: float | None = None,
                neginf: float | None = None) -> Tensor:
    return apply_inplace(self, _nan_to_num, nan, posinf, neginf)


def addcmul_(self: Tensor, tensor1: Tensor, tensor2: Tensor, *, value: Any = 1) -> Tensor:
    return apply_inplace(self, addcmul, tensor1, tensor2, value=value)


def addcdiv_(self: Tensor, tensor1: Tensor, tensor2: Tensor, *, value: Any = 1) -> Tensor:
    return apply_inplace(self, addcdiv, tensor1, tensor2, value=value)


# -- logit ------------------------------------------------------------------------------------
#
# Note [logit's eps]
# Without ``eps`` (or with a negative one) logit is ``log(x / (1 - x))``, NaN
# outside [0, 1], and so is its gradient.  With ``eps >= 0`` the input is first
# clamped to ``[eps, 1 - eps]`` -- torch tests ``x < eps`` before ``x > 1 - eps``,
# so for ``eps > 0.5`` everything below ``eps`` becomes ``eps`` -- and the
# gradient is zero wherever the clamp acted.

def _np_logit(x: np.ndarray, eps: float | None) -> np.ndarray:
    if eps is not None and eps >= 0:
        lo, hi = x.dtype.type(eps), x.dtype.type(1 - eps)
        x = np.where(x < lo, lo, np.where(x > hi, hi, x))
    return np.log(x / (1 - x))


def _logit_derivative(grad: Tensor, x: Tensor, eps: float | None) -> Tensor:
    g = grad / (x * (1 - x))
    if eps is None or eps < 0:
        return where(logical_or(x < 0, x > 1), math.nan, g)
    return where(logical_or(x < eps, x > 1 - eps), 0.0, g)


LOGIT = Pointwise("logit(Tensor input, double? eps=None, *, Tensor out=None)",
                  grad_fn="LogitBackward0", forward=_np_logit, params=("eps",),
                  saves="self", derivative=_logit_derivative)


@LOGIT.public
def logit(input: Tensor, eps: float | None = None) -> Tensor:  # noqa: A002
    """``log(x / (1 - x))``, after clamping ``x`` to ``[eps, 1 - eps]`` when ``eps`` is given.

    >>> import npgrad
    >>> npgrad.logit(npgrad.tensor([0.5, 0.0]), eps=0.25)
    tensor([ 0.0000, -1.0986])
    """
    return LOGIT(input, eps)


# -- sinc ---------------------------------------------------------------------------------

def _sinc_derivative(grad: Tensor, x: Tensor) -> Tensor:
    px = x * math.pi
    d = (px * cos(px) - sin(px)) / (px * x)
    return masked_fill(grad * d, x == 0, 0.0)


SINC = Pointwise("sinc(Tensor input, *, Tensor out=None)", grad_fn="SincBackward0",
                 forward=np.sinc, saves="self", derivative=_sinc_derivative)


@SINC.public
def sinc(input: Tensor) -> Tensor:  # noqa: A002
    """The normalised sinc ``sin(pi x) / (pi x)``, 1 at 0 (grad_fn ``SincBackward0``).

    >>> import npgrad
    >>> npgrad.sinc(npgrad.tensor([0., 0.5]))
    tensor([1.0000, 0.6366])
    """
    return SINC(input)


# -- entr ---------------------------------------------------------------------------------

def _np_entr(x: np.ndarray) -> np.ndarray:
    return np.where(x > 0, -x * np.log(np.where(x > 0, x, 1)),
                    np.where(x == 0, x.dtype.type(0), np.where(x < 0, -np.inf, x)))


ENTR = Pointwise("special_entr(Tensor input, *, Tensor out=None)",
                 grad_fn="SpecialEntrBackward0", forward=_np_entr, saves="self",
                 derivative=lambda grad, x: grad * -(log(x) + 1))


@ENTR.public
def entr(input: Tensor) -> Tensor:  # noqa: A002
    """Elementwise entropy ``-x log x`` (0 at 0, -inf below; grad_fn ``SpecialEntrBackward0``).

    >>> import npgrad
    >>> npgrad.special.entr(npgrad.tensor([0., 1., -1.]))
    tensor([0., -0., -inf])
    """
    return ENTR(input)


# -- torch.special's spellings: the same entries, named as torch.special's parser names them --

_SPECIAL_ERFC, _SPECIAL_EXP2 = ERFC.alias("special_erfc"), EXP2.alias("special_exp2")
_SPECIAL_SINC = SINC.alias("special_sinc")
_SPECIAL_LOGIT = LOGIT.alias("special_logit")
_SPECIAL_EXPM1, _SPECIAL_LOG1P = EXPM1.alias("special_expm1"), LOG1P.alias("special_log1p")
_SPECIAL_EXPIT = SIGMOID.alias("special_expit")


@_SPECIAL_ERFC.public
def special_erfc(input: Tensor) -> Tensor:
    return _SPECIAL_ERFC(input)


@_SPECIAL_EXP2.public
def special_exp2(input: Tensor) -> Tensor:
    return _SPECIAL_EXP2(input)


@_SPECIAL_SINC.public
def special_sinc(input: Tensor) -> Tensor:
    return _SPECIAL_SINC(input)


@_SPECIAL_LOGIT.public
def special_logit(input: Tensor, eps: float | None = None) -> Tensor:
    return _SPECIAL_LOGIT(input, eps)


@_SPECIAL_EXPM1.public
def special_expm1(input: Tensor) -> Tensor:
    return _SPECIAL_EXPM1(input)


@_SPECIAL_LOG1P.public
def special_log1p(input: Tensor) -> Tensor:
    return _SPECIAL_LOG1P(input)


@_SPECIAL_EXPIT.public
def special_expit(input: Tensor) -> Tensor:
    return _SPECIAL_EXPIT(input)


@signature("special_xlogy(Tensor input, Tensor other, *, Tensor out=None)",
           "special_xlogy(Scalar self, Tensor other, *, Tensor out=None)",
           "special_xlogy(Tensor input, Scalar other, *, Tensor out=None)")
def special_xlogy(input: Any, other: Any) -> Tensor:
    return xlogy.__wrapped__(input, other)
