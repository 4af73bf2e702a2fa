"""Pointwise ops: each one an entry of the op registry (its grad_fn class built from it).

Backward rules are written in npgrad's own ops, so they are differentiable when
the engine runs them with ``create_graph=True`` (Note [The per-op path]).
Broadcasting is undone by the engine, not here: a rule may return a gradient of
the broadcast shape and the engine sums it down to the input's shape.
"""
from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, Callable

import numpy as np

from .. import _dtype
from .._mode import _tls
if TYPE_CHECKING:
    from .._tensor import Tensor
else:  # Note [Tensor base and Tensor] in npgrad._tensor_base
    from .._tensor_base import TensorBase as Tensor
from .._tensor_base import wrap
from ._core import (as_array, binary_arrays, binary_compute, check_int_scalar, is_tensor,
                    record_not_implemented, zero_where)
from ._shape_util import broadcast_shapes
from .checks import C_NAMES, check_scalar_fits, not_implemented_for, overflow_error
from .registry import General, Pointwise, PointwiseBinary, conjugate_of
from .signature import signature

_float_np = _dtype.float_result_np
ndarray = np.ndarray


# -- add / sub / rsub: entries of the op registry (Note [An op is an entry]) -----------------
#
# The arithmetic entries say ``ufunc``: called with their parameters' defaults (alpha=1)
# they run on the arithmetic fast path, ``_core.binary_op``, and the Tensor operators
# record the very node classes these entries build (Note [Operators with their own fast
# path]); ``AddBackward0`` and the other names below are those classes, for the modules
# that record them by hand (sparse tensors).

def _is_floating(x: Any) -> bool:
    if isinstance(x, Tensor):
        return x._data.dtype.kind in "fVc"  # "V": bfloat16
    return isinstance(x, (float, complex))


def _check_alpha(a: Any, b: Any, alpha: Any) -> None:
    # Either operand may be the Python scalar (add(1.5, t, alpha=...)); a float one makes the
    # result floating, so a float alpha is fine.
    if isinstance(alpha, float) and not _is_floating(a) and not _is_floating(b):
        raise RuntimeError("For integral input tensors, argument alpha must not be a floating "
                           "point number.")


def _scaled(b: Any, alpha: Any, like: Any) -> Any:
    """``alpha * b`` in the operands' result dtype (``like`` is the other operand), alpha
    taken in that dtype as torch takes it: wrapped for integers, ``True`` for bools."""
    if alpha == 1:
        return b
    if type(b) is not ndarray:  # a Python number: the product wraps into the tensor's dtype
        product = np.array(b * alpha)
        return product.astype(like.dtype) if type(like) is ndarray else product
    if b.dtype.kind == "b":
        return np.logical_and(b, bool(alpha))
    scaled = b * alpha
    if type(like) is ndarray and scaled.dtype != like.dtype:
        scaled = scaled.astype(np.result_type(like, scaled), copy=False)
    return scaled


def _alpha_rule(sign: int) -> Callable:
    """The gradient of ``other`` in ``self + sign * alpha * other``: ``grad * sign * alpha``
    (conjugated, Note [Complex gradients by conjugation])."""
    def rule(grad: Tensor, alpha: Any) -> Tensor:
        if alpha == 1:
            return grad if sign > 0 else -grad
        return grad * conjugate_of(alpha * sign)
    return rule


def _add_forward(a: Any, b: Any, alpha: Any) -> np.ndarray:
    return np.add(a, _scaled(b, alpha, a))


def _sub_forward(a: Any, b: Any, alpha: Any) -> np.ndarray:
    return np.subtract(a, _scaled(b, alpha, a))


ADD = PointwiseBinary(
    "add(Tensor input, Tensor other, *, Scalar alpha=1, Tensor out=None)",
    grad_fn="AddBackward0", forward=_add_forward,
    ufunc=np.add, scalar_other=True, params=("alpha",), defaults=(1,), warns=False, saves=(),
    derivatives=(lambda grad, alpha: grad, _alpha_rule(1)))
AddBackward0 = ADD.node


@signature("add(Tensor input, Tensor other, *, Scalar alpha=1, Tensor out=None)",
           "add(Tensor input, Scalar alpha, Tensor other, *, Tensor out=None)|deprecated")
def add(input: Any, other: Any, *, alpha: Any = 1) -> Tensor:
    """``input + alpha * other`` (grad_fn ``AddBackward0``).

    >>> import npgrad
    >>> npgrad.add(npgrad.tensor([1., 2.]), 1)
    tensor([2., 3.])
    """
    if alpha == 1:
        return ADD(input, other)
    _check_alpha(input, other, alpha)
    return ADD(input, other, alpha)


def _add_scalar_forward(d: np.ndarray, other: Any, alpha: Any) -> np.ndarray:
    ad, bd = binary_arrays(d, other)
    return binary_compute(np.add, ad, _scaled(bd, alpha, ad))


# torch's ``add.Scalar`` overload: what ATen's own compositions record when they add a
# C++ number (``pairwise_distance``'s ``+ eps``); a Python ``x + 1.0`` is ``add.Tensor``
# with a wrapped number, AddBackward0.  Its node keeps nothing.
ADD_SCALAR = Pointwise(
    "add(Tensor input, Scalar other, Scalar alpha=1)", grad_fn="AddBackward1",
    forward=_add_scalar_forward, params=("other", "alpha"), keeps=(),
    floating=False, own_bfloat16=True, warns=False, saves="",
    derivative=lambda grad: grad,
    also=("add(Tensor input, Tensor other, *, Scalar alpha=1, Tensor out=None)",))


SUB = PointwiseBinary(
    "sub(Tensor input, Tensor other, *, Scalar alpha=1, Tensor out=None)",
    grad_fn="SubBackward0", forward=_sub_forward,
    ufunc=np.subtract, scalar_other=True, params=("alpha",), defaults=(1,), warns=False,
    saves=(), derivatives=(lambda grad, alpha: grad, _alpha_rule(-1)))
SubBackward0 = SUB.node


@signature("sub(Tensor input, Tensor other, *, Scalar alpha=1, Tensor out=None)",
           "sub(Tensor input, Scalar alpha, Tensor other, *, Tensor out=None)|deprecated")
def sub(input: Any, other: Any, *, alpha: Any = 1) -> Tensor:
    """``input - alpha * other`` (grad_fn ``SubBackward0``)."""
    _check_bool_sub(input, other)
    if alpha == 1:
        return SUB(input, other)
    _check_alpha(input, other, alpha)
    return SUB(input, other, alpha)


@signature("subtract(Tensor input, Tensor other, *, Scalar alpha=1, Tensor out=None)",
           "subtract(Tensor input, Scalar other, Scalar alpha=1)")
def subtract(input: Any, other: Any, alpha: Any = 1) -> Tensor:
    """torch's other name for ``sub`` (its own name in torch's errors)."""
    return sub.__wrapped__(input, other, alpha=alpha)


def _is_bool(x: Any) -> bool:
    """A bool tensor, or a Python / NumPy bool (torch wraps it as a bool tensor)."""
    if isinstance(x, Tensor):
        return x._data.dtype.kind == "b"
    return isinstance(x, (bool, np.bool_))


def _check_bool_sub(a: Any, b: Any) -> None:
    """torch refuses any bool operand of a subtraction, with one text for two of them."""
    a_bool, b_bool = _is_bool(a), _is_bool(b)
    if a_bool and b_bool:
        raise RuntimeError("Subtraction, the `-` operator, with two bool tensors is not "
                           "supported. Use the `^` or `logical_xor()` operator instead.")
    if a_bool or b_bool:
        raise RuntimeError("Subtraction, the `-` operator, with a bool tensor is not supported. "
                           "If you are trying to invert a mask, use the `~` or `logical_not()` "
                           "operator instead.")


def _rsub_forward(a: Any, b: Any, alpha: Any) -> np.ndarray:
    """``b - alpha * a`` on operands of the result dtype."""
    return binary_compute(np.subtract, b, a if alpha == 1 else np.asarray(a * alpha, a.dtype))


RSUB = PointwiseBinary(
    "rsub(Tensor input, Tensor other, *, Scalar alpha=1)", grad_fn="RsubBackward0",
    forward=_rsub_forward, params=("alpha",), defaults=(1,), warns=False, saves=(),
    derivatives=(_alpha_rule(-1), lambda grad, alpha: grad),
    also=("rsub(Tensor input, Scalar other, Scalar alpha=1)",))


def _rsub_scalar_forward(d: np.ndarray, other: Any, alpha: Any) -> np.ndarray:
    ad, bd = binary_arrays(d, other)
    return binary_compute(np.subtract, bd, ad * alpha if alpha != 1 else ad)


RSUB_SCALAR = Pointwise(
    "rsub(Tensor input, Scalar other, Scalar alpha=1)", grad_fn="RsubBackward1",
    forward=_rsub_scalar_forward, params=("other", "alpha"), keeps=("alpha",),
    floating=False, own_bfloat16=True, warns=False, saves="",
    derivative=_alpha_rule(-1), also=("rsub(Tensor input, Tensor other, *, Scalar alpha=1)",))


@signature("rsub(Tensor input, Tensor other, *, Scalar alpha=1)",
           "rsub(Tensor input, Scalar other, Scalar alpha=1)")
def rsub(input: Tensor, other: Any, *, alpha: Any = 1) -> Tensor:
    """``other - alpha * input``: RsubBackward0 for a tensor ``other``, RsubBackward1 for a scalar."""
    _check_bool_sub(other, input)
    if alpha != 1:
        _check_alpha(input, other, alpha)
    if is_tensor(other):
        return RSUB(input, other, alpha)
    return RSUB_SCALAR(input, other, alpha)


# -- mul / div -------------------------------------------------------------------

MUL = PointwiseBinary(
    "mul(Tensor input, Tensor other, *, Tensor out=None)", grad_fn="MulBackward0",
    forward=np.multiply, ufunc=np.multiply, scalar_other=True, warns=False,
    saves=("self", "other"), reads=(("other",), ("self",)),
    derivatives=(lambda grad, x, y: grad * conjugate_of(y),
                 lambda grad, x, y: grad * conjugate_of(x)),
    also=("mul(Tensor input, Scalar other, *, Tensor out=None)",))
MulBackward0 = MUL.node


# torch binds only mul.Tensor in Python (its Tensor parameter takes numbers too), so a wrong
# argument gets that one overload's own error, not the "invalid combination" listing
@signature("mul(Tensor input, Tensor other, *, Tensor out=None)")
def mul(input: Any, other: Any) -> Tensor:
    """Elementwise product (grad_fn ``MulBackward0``).

    >>> import npgrad
    >>> x = npgrad.tensor([1.], requires_grad=True)
    >>> x * 2
    tensor([2.], grad_fn=<MulBackward0>)
    """
    return MUL(input, other)


@signature("multiply(Tensor input, Tensor other, *, Tensor out=None)",
           "multiply(Tensor input, Scalar other)")
def multiply(input: Any, other: Any) -> Tensor:
    """torch's other name for ``mul``."""
    return mul.__wrapped__(input, other)


def _div_other_rule(grad: Tensor, x: Tensor, y: Any) -> Tensor:
    """d(x / y)/dy = -x / y**2 (conjugated for complex)."""
    return -grad * conjugate_of(x) / conjugate_of(y * y)


DIV = PointwiseBinary(
    "div(Tensor input, Tensor other, *, Tensor out=None)", grad_fn="DivBackward0",
    forward=np.true_divide, floating=True, scalar_other=True,
    saves=("self", "other"), reads=(("other",), ("self", "other")),
    derivatives=(lambda grad, x, y: grad / conjugate_of(y), _div_other_rule),
    also=("div(Tensor input, Tensor other, *, c10::string_view? rounding_mode, "
          "Tensor out=None)", "div(Tensor input, Scalar other, *, c10::string_view? "
          "rounding_mode)"))
DivBackward0 = DIV.node


# Note [Scalar nodes in backward formulas]
# torch's derivative formulas multiply and divide by C++ numbers (``grad / numel`` in
# mean's, ``2 / dof * grad`` in var's, ``sum / count`` in a probability-target
# cross_entropy), which records ``mul(Tensor, Scalar)`` and ``div(Tensor, Scalar)``:
# MulBackward1 and DivBackward1, not the MulBackward0 / DivBackward0 of ``x * 2`` written
# in Python (whose number torch wraps as a tensor).  ``scalar_mul`` and ``scalar_div``
# record those; bfloat16 and integral tensors keep the tensor path (Note [bfloat16
# storage]), as the formulas that use them never see such gradients otherwise.

def _scalar_mul_derivative(grad: Tensor, other: Any) -> Tensor:
    return scalar_mul(grad, other)


MUL_SCALAR = Pointwise(
    "mul(Tensor input, Scalar other)", grad_fn="MulBackward1",
    forward=lambda d, other: np.multiply(d, other), saves="", params=("other",),
    floating=False, derivative=_scalar_mul_derivative)
MulBackward1 = MUL_SCALAR.node


def _scalar_div_derivative(grad: Tensor, other: Any) -> Tensor:
    return scalar_div(grad, other)


DIV_SCALAR = Pointwise(
    "div(Tensor input, Scalar other)", grad_fn="DivBackward1",
    forward=lambda d, other: np.divide(d, other), saves="", params=("other",),
    floating=False, derivative=_scalar_div_derivative)
DivBackward1 = DIV_SCALAR.node


def scalar_mul(x: Tensor, other: Any) -> Tensor:
    """``x * other`` for a Python number, recorded as torch's formulas record it
    (MulBackward1, Note [Scalar nodes in backward formulas])."""
    if x._data.dtype.kind not in "fc":
        return x * other
    return MUL_SCALAR(x, other)


def scalar_div(x: Tensor, other: Any) -> Tensor:
    """``x / other`` for a Python number (DivBackward1, Note [Scalar nodes in backward
    formulas])."""
    if x._data.dtype.kind not in "fc":
        return x / other
    return DIV_SCALAR(x, other)


def zeros_like_grad(grad: Tensor) -> Tensor:
    """A zero gradient shaped like ``grad``, without history (``grad * 0`` would keep NaNs)."""
    return wrap(np.zeros_like(grad._data), _tls.mode)


def _rounding_forward(a: Any, b: Any, mode: str | None) -> np.ndarray:
    if mode is None:  # ``rounding_mode=None`` given: true division (integers give floats)
        out = binary_compute(np.true_divide, a, b)
        if np.result_type(a, b).kind in "biu":
            out = out.astype(_dtype.get_default_dtype().np_dtype)
        return out  # type: ignore[no-any-return]
    not_implemented_for(f"div_{mode}_cpu", np.result_type(a, b), "c")  # no complex kernel
    _check_int_zero_division(b, a)
    if mode == "floor":
        return binary_compute(np.floor_divide, a, b)
    if np.asarray(a).dtype.kind in "iu" and np.asarray(b).dtype.kind in "iu":
        return _int_trunc_divide(a, b)
    return np.trunc(binary_compute(np.true_divide, a, b))


# torch's ``div.Tensor_mode`` overload (DivBackward2) is the one any given ``rounding_mode``
# selects, None included.  Division rounded toward zero or down is piecewise constant:
# torch's gradient is zero, and its node still saves the operands (``other``, and ``self``
# when the divisor needs a gradient, as DivBackward0 does); with ``rounding_mode=None`` it
# is true division, with DivBackward0's gradients.
# ``div``'s rounding_mode when not passed: torch's ``div.Tensor`` overload (DivBackward0)
ROUNDING_MODE_NOT_GIVEN: Any = object()


def _div_rounding_self_rule(grad: Tensor, x: Tensor, y: Any, mode: str | None) -> Tensor:
    return grad / conjugate_of(y) if mode is None else zeros_like_grad(grad)


def _div_rounding_other_rule(grad: Tensor, x: Tensor, y: Any, mode: str | None) -> Tensor:
    return _div_other_rule(grad, x, y) if mode is None else zeros_like_grad(grad)


DIV_ROUNDING = PointwiseBinary(
    "div(Tensor input, Tensor other, *, c10::string_view? rounding_mode, Tensor out=None)",
    grad_fn="DivBackward2", forward=_rounding_forward, scalar_other=True,
    params=("rounding_mode",), defaults=(None,), saves=("self", "other"),
    reads=(("other",), ("self", "other")),
    derivatives=(_div_rounding_self_rule, _div_rounding_other_rule),
    also=("div(Tensor input, Tensor other, *, Tensor out=None)",
          "div(Tensor input, Scalar other, *, c10::string_view? rounding_mode)"))


@signature("div(Tensor input, Tensor other, *, Tensor out=None)",
           "div(Tensor input, Tensor other, *, c10::string_view? rounding_mode, Tensor out=None)",
           "div(Tensor input, Scalar other, *, c10::string_view? rounding_mode)")
def div(input: Any, other: Any, *,
        rounding_mode: str | None = ROUNDING_MODE_NOT_GIVEN) -> Tensor:
    """True division (int / int gives the default float dtype); grad_fn ``DivBackward0``,
    or ``DivBackward2`` when ``rounding_mode`` is given (None included, as in torch)."""
    if rounding_mode is not ROUNDING_MODE_NOT_GIVEN:
        if rounding_mode is not None and rounding_mode not in ("floor", "trunc"):
            raise ValueError("div expected rounding_mode to be one of None, 'trunc', or "
                             f"'floor' but found '{rounding_mode}'")
        return DIV_ROUNDING(input, other, rounding_mode)
    return DIV(input, other)  # (``number / tensor`` is ``rdiv``, which torch records otherwise)


def _int_trunc_divide(a: Any, b: Any) -> np.ndarray:
    """Integer division rounded toward zero, exact (a float quotient loses int64's low bits)."""
    q = binary_compute(np.floor_divide, a, b)
    inexact = binary_compute(np.remainder, a, b) != 0
    q = np.asarray(q)
    return np.where(inexact & ((np.asarray(a) < 0) != (np.asarray(b) < 0)), q + 1, q).astype(
        q.dtype)


def _float_remainder(a: Any, b: Any) -> np.ndarray:
    """torch's floating remainder: ``fmod``, moved by ``b`` where its sign differs from ``b``'s.
    An exact multiple gives fmod's zero (the dividend's sign), where NumPy gives the divisor's."""
    r = np.asarray(binary_compute(np.fmod, a, b))
    shift = (r != 0) & ((r < 0) != (np.asarray(b) < 0))
    return np.where(shift, r + b, r).astype(r.dtype)


def _check_int_zero_division(bd: Any, ad: Any) -> None:
    kind = getattr(ad, "dtype", np.dtype("f")).kind
    if kind in "iu" and np.any(np.asarray(bd) == 0):
        raise RuntimeError("ZeroDivisionError")


def rdiv(input: Tensor, other: Any) -> Tensor:
    """``other / input`` for a Python scalar ``other``: torch computes (and records) it as
    ``input.reciprocal() * other``, two roundings, with or without grad."""
    return mul(reciprocal(input), other)


@signature("true_divide(Tensor input, Tensor other, *, Tensor out=None)",
           "true_divide(Tensor input, Scalar other)")
def true_divide(input: Any, other: Any) -> Tensor:
    return div(input, other)


@signature("divide(Tensor input, Tensor other, *, Tensor out=None)",
           "divide(Tensor input, Tensor other, *, c10::string_view? rounding_mode, Tensor out=None)",
           "divide(Tensor input, Scalar other)",
           "divide(Tensor input, Scalar other, *, c10::string_view? rounding_mode)")
def divide(input: Any, other: Any, *,
           rounding_mode: str | None = ROUNDING_MODE_NOT_GIVEN) -> Tensor:
    """torch's other name for ``div``."""
    return div.__wrapped__(input, other, rounding_mode=rounding_mode)


@signature("floor_divide(Tensor input, Tensor other, *, Tensor out=None)",
           "floor_divide(Tensor input, Scalar other)")
def floor_divide(input: Any, other: Any) -> Tensor:
    """Floor division; not differentiable in torch (its grad_fn raises in backward)."""
    ad, bd = binary_arrays(input, other)
    not_implemented_for("div_floor_cpu", np.result_type(ad, bd), "c")  # no complex kernel
    _check_int_zero_division(bd, ad)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = binary_compute(np.floor_divide, ad, bd)
    return record_not_implemented("floor_divide", (input, other), np.asarray(out))


# -- remainder / fmod ----------------------------------------------------------------------

def _remainder_arrays(a: Any, b: Any) -> np.ndarray:
    """Python-style modulus (the divisor's sign) of operands of the result dtype."""
    _check_int_zero_division(b, a)
    if np.asarray(a).dtype.kind == "f":
        return _float_remainder(a, b)
    return binary_compute(np.remainder, a, b)


def _fmod_arrays(a: Any, b: Any) -> np.ndarray:
    """C-style modulus (the dividend's sign) of operands of the result dtype."""
    _check_int_zero_division(b, a)
    return binary_compute(np.fmod, a, b)


def _quotient_rule(rounding: str) -> Callable:
    """d(self - other * q)/d other with the quotient ``q`` piecewise constant: ``-grad * q``."""
    def rule(grad: Tensor, x: Tensor, y: Tensor) -> Tensor:
        return -grad * div(x, y, rounding_mode=rounding)
    return rule


# with a tensor divisor: the divisor's gradient reads both operands, self's none
REMAINDER = PointwiseBinary(
    "remainder(Tensor input, Tensor other, *, Tensor out=None)", grad_fn="RemainderBackward1",
    forward=_remainder_arrays, saves=("self", "other"), reads=((), ("self", "other")),
    derivatives=(lambda grad, x, y: grad, _quotient_rule("floor")),
    also=("remainder(Scalar self, Tensor other)",
          "remainder(Tensor input, Scalar other, *, Tensor out=None)"))

REMAINDER_SCALAR = Pointwise(
    "remainder(Tensor input, Scalar other, *, Tensor out=None)", grad_fn="RemainderBackward0",
    forward=lambda d, other: _remainder_arrays(*binary_arrays(d, other)), params=("other",),
    keeps=(), floating=False, own_bfloat16=True, saves="", derivative=lambda grad: grad,
    also=("remainder(Tensor input, Tensor other, *, Tensor out=None)",
          "remainder(Scalar self, Tensor other)"))


@signature("remainder(Tensor input, Tensor other, *, Tensor out=None)",
           "remainder(Scalar self, Tensor other)",
           "remainder(Tensor input, Scalar other, *, Tensor out=None)")
def remainder(input: Any, other: Any) -> Tensor:
    """Python-style modulus (sign of the divisor); grad_fn ``RemainderBackward0/1``.

    With a scalar dividend torch records no derivative (its grad_fn raises).
    """
    if not is_tensor(input):
        ad, bd = binary_arrays(input, other)
        not_implemented_for("remainder_cpu", np.result_type(ad, bd), "c")  # no complex kernel
        with np.errstate(divide="ignore", invalid="ignore"):
            out = _remainder_arrays(ad, bd)
        return record_not_implemented("remainder", (other,), np.asarray(out))
    if is_tensor(other):
        return REMAINDER(input, other)
    return REMAINDER_SCALAR(input, other)


FMOD = PointwiseBinary(
    "fmod(Tensor input, Tensor other, *, Tensor out=None)", grad_fn="FmodBackward1",
    forward=_fmod_arrays, saves=("self", "other"), reads=((), ("self", "other")),
    derivatives=(lambda grad, x, y: grad, _quotient_rule("trunc")),
    also=("fmod(Tensor input, Scalar other, *, Tensor out=None)",))

FMOD_SCALAR = Pointwise(
    "fmod(Tensor input, Scalar other, *, Tensor out=None)", grad_fn="FmodBackward0",
    forward=lambda d, other: _fmod_arrays(*binary_arrays(d, other)), params=("other",),
    keeps=(), floating=False, own_bfloat16=True, saves="", derivative=lambda grad: grad,
    also=("fmod(Tensor input, Tensor other, *, Tensor out=None)",))


@signature("fmod(Tensor input, Tensor other, *, Tensor out=None)",
           "fmod(Tensor input, Scalar other, *, Tensor out=None)")
def fmod(input: Tensor, other: Any) -> Tensor:
    """C-style modulus (sign of the dividend); FmodBackward0 (scalar) or 1 (tensor divisor)."""
    if is_tensor(other):
        return FMOD(input, other)
    return FMOD_SCALAR(input, other)


# -- pow -----------------------------------------------------------------------------

def _power(ad: Any, bd: Any) -> np.ndarray:
    """torch's pow of operands already of the result dtype (``binary_arrays``)."""
    if np.asarray(ad).dtype.kind in "iu" and np.asarray(bd).dtype.kind in "iu":
        return _int_power(ad, bd)
    if type(bd) is float and bd == 0.5 and ad.dtype.kind == "f":
        return np.sqrt(ad)  # torch's sqrt path: (-0.) ** 0.5 is -0. (np.power's varies by NumPy)
    if type(bd) is float and bd == -0.5 and ad.dtype.kind == "f":
        return np.reciprocal(np.sqrt(ad))  # torch's rsqrt: (-0.) ** -0.5 is -inf, not inf
    return binary_compute(np.power, ad, bd)  # bfloat16: the exponent rounded as torch's


def _pow_scalar_forward(d: np.ndarray, exponent: Any) -> np.ndarray:
    if type(exponent) is float and d.dtype == np.float32 and exponent != 0 \
            and np.float32(exponent) == 0:
        # an exponent float32 flushes to 0 is still nonzero to torch: 0 ** 1e-300 is 0 (not
        # 1), 0 ** -1e-300 inf, as in double, where the float32 exponent would give 1
        with np.errstate(all="ignore"):
            return np.power(d.astype(np.float64), exponent).astype(np.float32)
    return _power(*binary_arrays(d, exponent))


def _pow_scalar_derivative(grad: Tensor, x: Tensor, exponent: Any) -> Tensor:
    if exponent == 0:
        return zeros_like_grad(grad)
    return grad * exponent * x ** (exponent - 1)


POW_SCALAR = Pointwise(
    "pow(Tensor input, Scalar exponent, *, Tensor out=None)", grad_fn="PowBackward0",
    forward=_pow_scalar_forward, params=("exponent",), floating=False, own_bfloat16=True,
    saves="self", derivative=_pow_scalar_derivative,
    also=("pow(Tensor input, Tensor exponent, *, Tensor out=None)",
          "pow(Scalar self, Tensor exponent, *, Tensor out=None)"))


def _pow_exponent_rule(grad: Tensor, x: Tensor, e: Tensor, r: Tensor) -> Tensor:
    """d(x ** e)/de = x ** e * log(x); 0 where x is 0 and e >= 0 (its real part), as torch's;
    conjugated for complex (Note [Complex gradients by conjugation])."""
    return where((x == 0) & (e.real >= 0), 0.0, grad * conjugate_of(r * log(x)))


POW = PointwiseBinary(
    "pow(Tensor input, Tensor exponent, *, Tensor out=None)", grad_fn="PowBackward1",
    forward=_power, other_name="exponent", saves=("self", "other", "result"),
    derivatives=(lambda grad, x, e, r: where(e == 0, 0.0,
                                             grad * conjugate_of(e * x ** (e - 1))),
                 _pow_exponent_rule),
    also=("pow(Tensor input, Scalar exponent, *, Tensor out=None)",
          "pow(Scalar self, Tensor exponent, *, Tensor out=None)"))


def _pow_base_derivative(grad: Tensor, r: Tensor, base: Any) -> Tensor:
    """d(base ** e)/de = result * log(base)."""
    if base == 0:
        # torch's rule: 0 where the exponent is >= 0 (there the result, 0 ** e, is 0 or
        # 1), else result * log(0): -inf for e < 0 (result inf), NaN for a NaN exponent
        return where((r == 0) | (r == 1), 0.0, grad * r * -math.inf)
    return grad * r * float(np.log(base))


# ``scalar ** tensor``: the one tensor input is the exponent; torch keeps the base as
# ``_saved_self`` (a number) and saves the exponent and the result.  The rule reads the
# result alone; for a complex result it is the conjugate (Note [Complex gradients by
# conjugation]), the tangent the derivative itself.
def _pow_scalar_base_forward(d: np.ndarray, base: Any) -> np.ndarray:
    with np.errstate(all="ignore"):
        out = _power(*binary_arrays(base, d))
    return out if type(out) is ndarray else np.asarray(out)


POW_SCALAR_BASE = General(
    "pow(Scalar self, Tensor exponent, *, Tensor out=None)", grad_fn="PowBackward2",
    forward=_pow_scalar_base_forward, inputs=("exponent",), params=("self",),
    keeps=("self",), saves=("exponent", "result"), scalars=("self",),
    derivatives={"exponent": lambda grad, result, self:
                 _pow_base_derivative(grad, conjugate_of(result), self)},
    tangent=lambda exponent_t, result, self: _pow_base_derivative(exponent_t, result, self),
    also=("pow(Tensor input, Tensor exponent, *, Tensor out=None)",
          "pow(Tensor input, Scalar exponent, *, Tensor out=None)"))


@POW_SCALAR.public
def pow(input: Any, exponent: Any) -> Tensor:
    """``input ** exponent``; PowBackward0 (scalar exponent), 1 (tensors), 2 (scalar base).

    >>> import npgrad
    >>> npgrad.tensor([1., 2.]) ** 2
    tensor([1., 4.])
    """
    if type(exponent) is int and is_tensor(input) and input._data.dtype.kind not in "fVc":
        _check_int_exponent(input._data.dtype, exponent)
    if not is_tensor(exponent):
        return POW_SCALAR(input, exponent)
    if not is_tensor(input):
        return POW_SCALAR_BASE((exponent,), (input,))  # type: ignore[no-any-return]
    return POW(input, exponent)


def _check_int_exponent(dt: np.dtype, e: int) -> None:
    """An integer tensor to a Python int power: torch checks the exponent itself, unwrapped
    (Note [Python ints as scalars] in _core)."""
    check_int_scalar(e)
    if e > np.iinfo(np.int64).max:
        raise overflow_error("int64_t")
    if e < 0:
        raise RuntimeError("Integers to negative integer powers are not allowed.")
    if dt.kind != "b" and e > np.iinfo(dt).max:
        raise overflow_error(C_NAMES[dt.name])


def _int_power(base: Any, exponent: Any) -> np.ndarray:
    """Integer powers as torch computes them: a negative exponent (from a tensor) gives
    1 for a base of 1, +-1 for -1 and 0 otherwise, where NumPy would raise."""
    rt = np.result_type(base, exponent)  # a (wrapped) Python int takes the tensor's dtype
    b, e = np.asarray(base, dtype=rt), np.asarray(exponent, dtype=rt)
    negative = e < 0
    if not negative.any():
        return np.power(base, exponent)
    out = np.power(b, np.where(negative, 0, e).astype(e.dtype))
    odd = (e % 2) != 0
    at_negative = np.where(b == 1, 1, np.where(b == -1, np.where(odd, -1, 1), 0))
    return np.where(negative, at_negative, out).astype(out.dtype)


@signature("square(Tensor input, *, Tensor out=None)")
def square(input: Tensor) -> Tensor:
    return pow(input, 2)


# -- one-input ops: entries of the op registry (Note [An op is an entry]) -------------------
#
# Each op is its entry: torch's signature, the grad_fn name, the NumPy forward, what the node
# saves and the derivative in npgrad ops, ``derivative(grad, saved)``.  The function below an
# entry is its public spelling.


def _neg_forward(d: np.ndarray) -> np.ndarray:
    if d.dtype.kind == "b":
        raise RuntimeError("Negation, the `-` operator, on a bool tensor is not supported. If "
                           "you are trying to invert a mask, use the `~` or `logical_not()` "
                           "operator instead.")
    return np.negative(d)


NEG = Pointwise("neg(Tensor input, *, Tensor out=None)", grad_fn="NegBackward0",
                forward=_neg_forward, floating=False,
                warns=False, saves="", derivative=lambda grad: -grad)


@NEG.public
def neg(input: Tensor) -> Tensor:
    return NEG(input)


_NEGATIVE = NEG.alias("negative")


@_NEGATIVE.public
def negative(input: Tensor) -> Tensor:
    return _NEGATIVE(input)

RECIPROCAL = Pointwise("reciprocal(Tensor input, *, Tensor out=None)",
                       grad_fn="ReciprocalBackward0", forward=np.reciprocal,
                       saves="result", derivative=lambda grad, r: -grad * r * r)


@RECIPROCAL.public
def reciprocal(input: Tensor) -> Tensor:
    return RECIPROCAL(input)


ABS = Pointwise("abs(Tensor input, *, Tensor out=None)", grad_fn="AbsBackward0",
                forward=np.abs, floating=False, refuses="b", kernel="abs_cpu",
                warns=False, saves="self", derivative=lambda grad, x: grad * x.sgn(),
                tangent=lambda t, x: (t * x.sgn().conj()).real if x.is_complex() else t * sign(x),
                holomorphic=False)


@ABS.public
def abs(input: Tensor) -> Tensor:  # noqa: A001
    return ABS(input)


_ABSOLUTE = ABS.alias("absolute")


@_ABSOLUTE.public
def absolute(input: Tensor) -> Tensor:
    return _ABSOLUTE(input)


def _sign_forward(d: np.ndarray) -> np.ndarray:
    if d.dtype.kind == "b":  # the sign of a bool is itself
        return d.copy()
    out = np.sign(d)
    if d.dtype.kind == "f":  # torch: sign(nan) is 0 (and so abs' gradient there)
        out = np.where(np.isnan(d), d.dtype.type(0), out)
    return out


SIGN = Pointwise("sign(Tensor input, *, Tensor out=None)", grad_fn="SignBackward0",
                 forward=_sign_forward, floating=False,
                 warns=False, saves="", derivative=lambda grad: zeros_like_grad(grad))


@SIGN.public
def sign(input: Tensor) -> Tensor:
    return SIGN(input)


EXP = Pointwise("exp(Tensor input, *, Tensor out=None)", grad_fn="ExpBackward0",
                forward=np.exp, saves="result", derivative=lambda grad, r: grad * r)


@EXP.public
def exp(input: Tensor) -> Tensor:
    return EXP(input)


LOG = Pointwise("log(Tensor input, *, Tensor out=None)", grad_fn="LogBackward0",
                forward=np.log, saves="self", derivative=lambda grad, x: grad / x)


@LOG.public
def log(input: Tensor) -> Tensor:
    return LOG(input)


_LOG_2, _LOG_10 = float(np.log(2.0)), float(np.log(10.0))

LOG2 = Pointwise("log2(Tensor input, *, Tensor out=None)", grad_fn="Log2Backward0",
                 forward=np.log2, saves="self", derivative=lambda grad, x: grad / (x * _LOG_2))


@LOG2.public
def log2(input: Tensor) -> Tensor:
    return LOG2(input)


LOG10 = Pointwise("log10(Tensor input, *, Tensor out=None)", grad_fn="Log10Backward0",
                  forward=np.log10, saves="self",
                  derivative=lambda grad, x: grad / (x * _LOG_10))


@LOG10.public
def log10(input: Tensor) -> Tensor:
    return LOG10(input)


LOG1P = Pointwise("log1p(Tensor input, *, Tensor out=None)", grad_fn="Log1PBackward0",
                  forward=np.log1p, saves="self", derivative=lambda grad, x: grad / (x + 1))


@LOG1P.public
def log1p(input: Tensor) -> Tensor:
    return LOG1P(input)


EXPM1 = Pointwise("expm1(Tensor input, *, Tensor out=None)", grad_fn="Expm1Backward0",
                  forward=np.expm1, saves="result", derivative=lambda grad, r: grad * (r + 1))


@EXPM1.public
def expm1(input: Tensor) -> Tensor:
    return EXPM1(input)


SQRT = Pointwise("sqrt(Tensor input, *, Tensor out=None)", grad_fn="SqrtBackward0",
                 forward=np.sqrt, saves="result", derivative=lambda grad, r: grad / (r * 2))


@SQRT.public
def sqrt(input: Tensor) -> Tensor:
    return SQRT(input)


def _np_rsqrt(x: np.ndarray) -> np.ndarray:
    return np.reciprocal(np.sqrt(x))


RSQRT = Pointwise("rsqrt(Tensor input, *, Tensor out=None)", grad_fn="RsqrtBackward0",
                  forward=_np_rsqrt, saves="result",
                  derivative=lambda grad, r: grad * (r * r * r) * -0.5)


@RSQRT.public
def rsqrt(input: Tensor) -> Tensor:
    return RSQRT(input)


SIN = Pointwise("sin(Tensor input, *, Tensor out=None)", grad_fn="SinBackward0",
                forward=np.sin, saves="self", derivative=lambda grad, x: grad * cos(x))


@SIN.public
def sin(input: Tensor) -> Tensor:
    return SIN(input)


COS = Pointwise("cos(Tensor input, *, Tensor out=None)", grad_fn="CosBackward0",
                forward=np.cos, saves="self", derivative=lambda grad, x: grad * -sin(x))


@COS.public
def cos(input: Tensor) -> Tensor:
    return COS(input)


TAN = Pointwise("tan(Tensor input, *, Tensor out=None)", grad_fn="TanBackward0",
                forward=np.tan, saves="result", derivative=lambda grad, r: grad * (r * r + 1))


@TAN.public
def tan(input: Tensor) -> Tensor:
    return TAN(input)


TANH = Pointwise("tanh(Tensor input, *, Tensor out=None)", grad_fn="TanhBackward0",
                 forward=np.tanh, saves="result", derivative=lambda grad, r: grad * (1 - r * r))


@TANH.public
def tanh(input: Tensor) -> Tensor:
    return TANH(input)


def _np_sigmoid(x: np.ndarray) -> np.ndarray:
    if x.dtype.kind == "c":  # no sign to branch on: the plain formula (runs under errstate)
        return 1 / (1 + np.exp(-x))
    # exp of a negative argument only, so large |x| neither overflows nor warns.
    e = np.exp(-np.abs(x))
    return np.where(x >= 0, 1 / (1 + e), e / (1 + e)).astype(x.dtype, copy=False)


SIGMOID = Pointwise("sigmoid(Tensor input, *, Tensor out=None)", grad_fn="SigmoidBackward0",
                    forward=_np_sigmoid, saves="result",
                    derivative=lambda grad, r: grad * r * (1 - r))


@SIGMOID.public
def sigmoid(input: Tensor) -> Tensor:
    return SIGMOID(input)


def _relu_forward(d: np.ndarray) -> np.ndarray:
    if d.dtype.kind == "b":
        raise RuntimeError("Boolean inputs not supported for relu")
    # torch's ``x < 0 ? 0 : x``: relu(-0.) is -0. and relu(nan) is nan.  NumPy's float32 /
    # float64 maximum returns its second operand on a tie (and propagates NaN), so zero goes
    # first; float16's loop does not, and takes the (slower) where.
    zero = d.dtype.type(0)
    return np.where(d < 0, zero, d) if d.dtype == np.float16 else np.maximum(zero, d)


def _relu_derivative(grad: Tensor, result: Tensor) -> Tensor:
    # where, not a product: torch's gradient is +0. where the mask is off, never -0.
    # torch zeroes it where ``result <= 0``: a NaN result passes the gradient through.
    fast = zero_where(grad, result._data <= 0)  # Note [Masked gradients by bits]
    if fast is not None:
        return fast
    return where(logical_not(result <= 0), grad, 0.0)


RELU = Pointwise("relu(Tensor input)", grad_fn="ReluBackward0", forward=_relu_forward,
                 floating=False, warns=False, saves="result", derivative=_relu_derivative)


@RELU.public
def relu(input: Tensor) -> Tensor:
    return RELU(input)


# Piecewise-constant ops have a zero gradient, as in torch; on integers they are a copy.
def _integral(np_fn: Any) -> Callable:
    def forward(d: np.ndarray) -> np.ndarray:
        return np_fn(d) if d.dtype.kind == "f" else d.copy()
    return forward


FLOOR = Pointwise("floor(Tensor input, *, Tensor out=None)", grad_fn="FloorBackward0",
                  forward=_integral(np.floor), floating=False, refuses="b",
                  kernel="floor_vml_cpu",
                  warns=False, saves="", derivative=lambda grad: zeros_like_grad(grad))


@FLOOR.public
def floor(input: Tensor) -> Tensor:
    return FLOOR(input)


CEIL = Pointwise("ceil(Tensor input, *, Tensor out=None)", grad_fn="CeilBackward0",
                 forward=_integral(np.ceil), floating=False, refuses="b",
                 kernel="ceil_vml_cpu",
                 warns=False, saves="", derivative=lambda grad: zeros_like_grad(grad))


@CEIL.public
def ceil(input: Tensor) -> Tensor:
    return CEIL(input)


TRUNC = Pointwise("trunc(Tensor input, *, Tensor out=None)", grad_fn="TruncBackward0",
                  forward=_integral(np.trunc), floating=False, refuses="b",
                  kernel="trunc_vml_cpu",
                  warns=False, saves="", derivative=lambda grad: zeros_like_grad(grad))


@TRUNC.public
def trunc(input: Tensor) -> Tensor:
    return TRUNC(input)


ROUND = Pointwise("round(Tensor input, *, Tensor out=None)", grad_fn="RoundBackward0",
                  forward=_integral(np.rint), floating=False, refuses="b",
                  kernel="round_vml_cpu",
                  warns=False, saves="", derivative=lambda grad: zeros_like_grad(grad))


ROUND_DECIMALS = Pointwise(
    "round(Tensor input, *, int64_t decimals, Tensor out=None)", grad_fn="RoundBackward1",
    forward=lambda d, decimals: np.round(d, decimals), floating=False, params=("decimals",),
    refuses="biu", kernel="round_cpu",
    keeps=(), saves="", derivative=lambda grad: zeros_like_grad(grad))


@signature("round(Tensor input, *, Tensor out=None)",
           "round(Tensor input, *, int64_t decimals, Tensor out=None)")
def round(input: Tensor, *, decimals: int = 0) -> Tensor:  # noqa: A001
    return ROUND_DECIMALS(input, decimals) if decimals else ROUND(input)


FRAC = Pointwise("frac(Tensor input, *, Tensor out=None)", grad_fn="FracBackward0",
                 forward=lambda d: d - np.trunc(d), floating=False, refuses="biu",
                 kernel="frac_cpu",
                 saves="", derivative=lambda grad: grad)


@FRAC.public
def frac(input: Tensor) -> Tensor:
    return FRAC(input)


# -- clamp -------------------------------------------------------------------------------

def _clamp_forward(d: np.ndarray, lo: Any, hi: Any) -> np.ndarray:
    out_dt = _dtype.result_type_np(tuple(v for v in (d, lo, hi) if v is not None))
    out = d.astype(out_dt, copy=False)
    if lo is not None:
        out = _keep_ties(np.maximum, out, np.asarray(lo, out_dt))
    if hi is not None:
        out = _keep_ties(np.minimum, out, np.asarray(hi, out_dt))
    return d.copy() if out is d else out


def _clamp_in_range(x: Tensor, lo: Any, hi: Any) -> Tensor:
    """Where ``min <= x <= max`` (numbers or tensors; one bound at least is given)."""
    mask = None
    if lo is not None:
        mask = x >= lo
    if hi is not None:
        upper = x <= hi
        mask = upper if mask is None else mask & upper
    return mask  # type: ignore[return-value]


def _clamp_derivative(grad: Tensor, x: Tensor, lo: Any, hi: Any) -> Tensor:
    """The gradient passes where ``min <= x <= max``."""
    return where(_clamp_in_range(x, lo, hi), grad, 0.0)


CLAMP_SCALAR = Pointwise(
    "clamp(Tensor input, Scalar? min=None, Scalar? max=None, *, Tensor out=None)",
    grad_fn="ClampBackward1", forward=_clamp_forward, params=("min", "max"), floating=False,
    warns=False, saves="self", derivative=_clamp_derivative,
    also=("clamp(Tensor input, Tensor? min=None, Tensor? max=None, *, Tensor out=None)",))

CLAMP_MIN_SCALAR = Pointwise(
    "clamp_min(Tensor input, Scalar min, *, Tensor out=None)", grad_fn="ClampMinBackward0",
    forward=lambda d, lo: _clamp_forward(d, lo, None), params=("min",), floating=False,
    warns=False, saves="self", derivative=lambda grad, x, lo: _clamp_derivative(grad, x, lo, None),
    also=("clamp_min(Tensor input, Tensor min, *, Tensor out=None)",))

CLAMP_MAX_SCALAR = Pointwise(
    "clamp_max(Tensor input, Scalar max, *, Tensor out=None)", grad_fn="ClampMaxBackward0",
    forward=lambda d, hi: _clamp_forward(d, None, hi), params=("max",), floating=False,
    warns=False, saves="self", derivative=lambda grad, x, hi: _clamp_derivative(grad, x, None, hi),
    also=("clamp_max(Tensor input, Tensor max, *, Tensor out=None)",))


# clamp with tensor bounds (either may be None): torch's ``clamp.Tensor``, three inputs.
# When min > max the result is max everywhere, so max takes all the gradient there.


def _clamp_self_grad(grad: Tensor, self: Tensor, min: Tensor | None,
                     max: Tensor | None) -> Tensor:
    return where(_clamp_in_range(self, min, max), grad, zeros_like_grad(grad))


def _clamp_min_grad(grad: Tensor, self: Tensor, min: Tensor,
                    max: Tensor | None) -> Tensor:
    below = self < min
    return where(below & (min < max) if max is not None else below, grad, zeros_like_grad(grad))


def _clamp_max_grad(grad: Tensor, self: Tensor, min: Tensor | None,
                    max: Tensor) -> Tensor:
    above = self > max
    return where(above | (max < min) if min is not None else above, grad, zeros_like_grad(grad))


def _clamp_tangent(self_t: Tensor, min_t: Tensor | None, max_t: Tensor | None, self: Tensor,
                   min: Tensor | None, max: Tensor | None) -> Tensor:
    """The tangent of ``minimum(maximum(self, min), max)``, as torch's: it differs from the
    backward rules where ``self < min == max`` (the tangent follows min there, while the
    gradient reaches no input)."""
    tangent, kept = self_t, self
    if min is not None:
        above = self >= min
        tangent = where(above, tangent, min_t)
        kept = where(above, self, min)
    if max is not None:
        tangent = where(kept <= max, tangent, max_t)
    return tangent


CLAMP_TENSOR = General(
    "clamp(Tensor input, Tensor? min=None, Tensor? max=None, *, Tensor out=None)",
    grad_fn="ClampBackward0", forward=None, inputs=("self", "min", "max"),
    saves=("self", "min", "max"),
    derivatives={"self": _clamp_self_grad, "min": _clamp_min_grad, "max": _clamp_max_grad},
    tangent=_clamp_tangent)


# with a tensor bound: the gradient goes to self where it is kept, else to the bound
CLAMP_MIN_TENSOR = PointwiseBinary(
    "clamp_min(Tensor input, Tensor min, *, Tensor out=None)", grad_fn="ClampMinBackward1",
    forward=np.maximum, other_name="min", warns=False, saves=("self", "other"),
    derivatives=(lambda grad, x, lo: where(x >= lo, grad, zeros_like_grad(grad)),
                 lambda grad, x, lo: where(x >= lo, zeros_like_grad(grad), grad)))

CLAMP_MAX_TENSOR = PointwiseBinary(
    "clamp_max(Tensor input, Tensor max, *, Tensor out=None)", grad_fn="ClampMaxBackward1",
    forward=np.minimum, other_name="max", warns=False, saves=("self", "other"),
    derivatives=(lambda grad, x, hi: where(x <= hi, grad, zeros_like_grad(grad)),
                 lambda grad, x, hi: where(x <= hi, zeros_like_grad(grad), grad)))


def _keep_ties(ufunc: Any, x: np.ndarray, bound: Any) -> np.ndarray:
    """``ufunc(x, bound)`` (NaN from either side propagates) that keeps ``x`` where it equals
    the bound: torch's clamp of -0. to min=0. is -0., where NumPy's maximum gives 0."""
    out = ufunc(x, bound)
    if out.dtype.kind == "f":
        tie = x == bound
        if tie.any():
            out = np.where(tie, x, out)
    return out


@CLAMP_SCALAR.public
def clamp(input: Tensor, min: Any = None, max: Any = None) -> Tensor:  # noqa: A002
    """Clamp into [min, max]; ``ClampBackward1`` for scalar bounds, ``ClampBackward0`` for tensors."""
    return _clamp(CLAMP_SCALAR, input, min, max)


_CLIP_SCALAR = CLAMP_SCALAR.alias("clip")


@_CLIP_SCALAR.public
def clip(input: Tensor, min: Any = None, max: Any = None) -> Tensor:  # noqa: A002
    return _clamp(_CLIP_SCALAR, input, min, max)


def _clamp(entry: Pointwise, input: Tensor, min: Any, max: Any) -> Tensor:  # noqa: A002
    # (the public spellings' signatures have refused what torch's parser refuses)
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    if not is_tensor(min) and not is_tensor(max):
        return entry(input, min, max)
    d = input._data
    lo = as_array(min) if min is not None else None
    hi = as_array(max) if max is not None else None
    shape = d.shape  # torch's broadcast of (input, min, max), with its error text
    for bound in (lo, hi):
        if bound is not None and np.shape(bound) != shape:  # (equal shapes: nothing to check)
            shape = broadcast_shapes(shape, np.shape(bound))
    out = d
    if lo is not None:
        out = np.maximum(out, lo)
    if hi is not None:
        out = np.minimum(out, hi)
    out = out.astype(_dtype.result_type_np(tuple(v for v in (d, lo, hi) if v is not None)),
                     copy=False)
    return CLAMP_TENSOR.record((input, min, max), out)  # type: ignore[no-any-return]


@CLAMP_MIN_SCALAR.public
def clamp_min(input: Tensor, min: Any) -> Tensor:  # noqa: A002
    if is_tensor(min):
        return CLAMP_MIN_TENSOR(input, min)
    return CLAMP_MIN_SCALAR(input, min)


@CLAMP_MAX_SCALAR.public
def clamp_max(input: Tensor, max: Any) -> Tensor:  # noqa: A002
    if is_tensor(max):
        return CLAMP_MAX_TENSOR(input, max)
    return CLAMP_MAX_SCALAR(input, max)


# -- maximum / minimum / where / masked_fill / lerp ----------------------------------------

# Note [maximum's gradient]
# torch gives half the gradient to each side of a tie, +0. (never -0.) to the loser, and the
# whole gradient to both sides where a NaN makes both comparisons false.

def _extremum_derivative(loses: Callable) -> Callable:
    def rule(grad: Tensor, a: Tensor, b: Tensor) -> Tensor:
        return where(loses(a, b), 0.0, where(a == b, grad / 2, grad))
    return rule


MAXIMUM = PointwiseBinary(
    "maximum(Tensor input, Tensor other, *, Tensor out=None)", grad_fn="MaximumBackward0",
    forward=np.maximum, warns=False, saves=("self", "other"),
    derivatives=(_extremum_derivative(lambda a, b: a < b),
                 _extremum_derivative(lambda a, b: a > b)))


@MAXIMUM.public
def maximum(input: Tensor, other: Tensor) -> Tensor:
    return MAXIMUM(input, other)


MINIMUM = PointwiseBinary(
    "minimum(Tensor input, Tensor other, *, Tensor out=None)", grad_fn="MinimumBackward0",
    forward=np.minimum, warns=False, saves=("self", "other"),
    derivatives=(_extremum_derivative(lambda a, b: a > b),
                 _extremum_derivative(lambda a, b: a < b)))


@MINIMUM.public
def minimum(input: Tensor, other: Tensor) -> Tensor:
    return MINIMUM(input, other)


def _where_tangent(self_t: Tensor | None, other_t: Tensor | None, condition: Tensor) -> Tensor:
    # a Python number operand has no tangent (its input is None)
    return where(condition, 0.0 if self_t is None else self_t,
                 0.0 if other_t is None else other_t)


# where: the condition is a tensor argument without an edge, saved as torch saves it; a
# Python number operand (``where(c, 1.0, y)``) is an input given as None: no edge, as the
# number torch wraps into a tensor has none
WHERE = General(
    "where(Tensor condition, Tensor input, Tensor other, *, Tensor out=None)",
    grad_fn="WhereBackward0", forward=None, inputs=("self", "other"), params=("condition",),
    saves=("condition",),
    derivatives={"self": lambda grad, condition: where(condition, grad, zeros_like_grad(grad)),
                 "other": lambda grad, condition: where(condition, zeros_like_grad(grad), grad)},
    tangent=_where_tangent)


@signature("where(Tensor condition)",
           "where(Tensor condition, Tensor input, Tensor other, *, Tensor out=None)",
           "where(Tensor condition, Scalar self, Tensor other)",
           "where(Tensor condition, Tensor input, Scalar other)",
           "where(Tensor condition, Scalar self, Scalar other)")
def where(condition: Tensor, input: Any = None, other: Any = None) -> Any:
    """Pick ``input`` where ``condition`` holds, else ``other`` (grad_fn ``WhereBackward0``)."""
    if input is None and other is None:
        from .indexing import nonzero

        return nonzero(condition, as_tuple=True)
    cond = condition._data
    if cond.dtype.kind != "b":
        raise RuntimeError(f"where expected condition to be a boolean tensor, but got a tensor "
                           f"with dtype {_dtype.from_np(cond.dtype).scalar_name}")
    ad, bd = binary_arrays(input, other)
    for scalar in (input, other):
        if type(scalar) is float:  # taken as the (float) result type, as torch's where does
            rt = np.result_type(ad, bd)
            if rt == np.float32:
                check_scalar_fits(scalar, rt)
    try:
        out = np.where(cond, ad, bd)
    except ValueError:
        from ._shape_util import broadcast_shapes

        broadcast_shapes(broadcast_shapes(cond.shape, np.shape(ad)), np.shape(bd))
        raise
    return WHERE.record((input if is_tensor(input) else None,  # type: ignore[no-any-return]
                         other if is_tensor(other) else None), out, (condition,))


# masked_fill: the mask is a tensor argument without an edge, saved; a 0-dim tensor value is
# an input of its own (MaskedFillBackward1), which gets the masked positions' gradient
MASKED_FILL = General(
    "masked_fill(Tensor input, Tensor mask, Scalar value)", grad_fn="MaskedFillBackward0",
    forward=None, params=("mask",), saves=("mask",),
    derivatives={"self": lambda grad, mask: where(mask, zeros_like_grad(grad), grad)},
    tangent=lambda self_t, mask: masked_fill(self_t, mask, 0.0),
    also=("masked_fill(Tensor input, Tensor mask, Tensor value)",))

MASKED_FILL_TENSOR = General(
    "masked_fill(Tensor input, Tensor mask, Tensor value)", grad_fn="MaskedFillBackward1",
    forward=None, inputs=("self", "value"), params=("mask",), saves=("mask",),
    derivatives={"self": lambda grad, mask: where(mask, zeros_like_grad(grad), grad),
                 "value": lambda grad, mask: where(mask, grad, zeros_like_grad(grad)).sum()},
    tangent=lambda self_t, value_t, mask: masked_fill(self_t, mask, value_t),
    also=("masked_fill(Tensor input, Tensor mask, Scalar value)",))


@signature("masked_fill(Tensor input, Tensor mask, Tensor value)",
           "masked_fill(Tensor input, Tensor mask, Scalar value)")
def masked_fill(input: Tensor, mask: Tensor, value: Any) -> Tensor:
    m = mask._data
    if m.dtype.kind != "b":
        raise RuntimeError("masked_fill_ only supports boolean masks, but got mask with dtype "
                           + _dtype.from_np(m.dtype).cpp_name.replace("long int", "long"))
    d = input._data
    v = as_array(value)
    if isinstance(v, np.ndarray) and v.ndim > 0:
        raise RuntimeError("masked_fill_ only supports a 0-dimensional value tensor, but got "
                           f"tensor with {v.ndim} dimension(s).")
    if m.shape != d.shape:
        broadcast_shapes(m.shape, d.shape)  # torch's order: the mask is tensor a
    check_scalar_fits(value, d.dtype)
    if is_tensor(value) and value._requires_grad and d.dtype.kind not in "fV":
        raise RuntimeError(f"Autograd not support dtype: {_dtype.from_np(d.dtype).scalar_name}")
    out = np.where(m, np.asarray(v).astype(d.dtype), d)
    if is_tensor(value):
        return MASKED_FILL_TENSOR.record((input, value), out,  # type: ignore[no-any-return]
                                         (mask,))
    return MASKED_FILL.record((input,), out, (mask,))  # type: ignore[no-any-return]


def _lerp_scalar_forward(a: np.ndarray, b: np.ndarray, weight: Any) -> np.ndarray:
    w = float(weight)
    # torch's two-sided formula: from ``end`` back for weights >= 0.5 (exact at 1, and
    # finite where a forward sum of infinities would give NaN)
    out = a + w * (b - a) if -0.5 < w < 0.5 else b - (b - a) * (1 - w)
    return np.asarray(out, dtype=np.result_type(a, b))


# lerp with a scalar weight: out = self + weight * (end - self)
LERP_SCALAR = PointwiseBinary(
    "lerp(Tensor input, Tensor end, Scalar weight, *, Tensor out=None)", grad_fn="LerpBackward0",
    forward=_lerp_scalar_forward, params=("weight",), defaults=(0.5,), saves=(),
    derivatives=(lambda grad, w: grad * (1 - w), lambda grad, w: grad * w),
    also=("lerp(Tensor input, Tensor end, Tensor weight, *, Tensor out=None)",))


# lerp with a tensor weight: three inputs.  torch keeps ``self`` and ``end`` only for
# weight's gradient, and ``weight`` always (two rules read it).  Complex: the conjugated
# derivatives (Note [Complex gradients by conjugation]).
LERP_TENSOR = General(
    "lerp(Tensor input, Tensor end, Tensor weight, *, Tensor out=None)", grad_fn="LerpBackward1",
    forward=None, inputs=("self", "end", "weight"), saves=("self", "end", "weight"),
    derivatives={"self": lambda grad, weight: grad * (1 - conjugate_of(weight)),
                 "end": lambda grad, weight: grad * conjugate_of(weight),
                 "weight": lambda grad, self, end: grad * conjugate_of(end - self)},
    tangent=lambda self_t, end_t, weight_t, self, end, weight:
    self_t * (1 - weight) + end_t * weight + weight_t * (end - self),
    also=("lerp(Tensor input, Tensor end, Scalar weight, *, Tensor out=None)",))


@signature("lerp(Tensor input, Tensor end, Tensor weight, *, Tensor out=None)",
           "lerp(Tensor input, Tensor end, Scalar weight, *, Tensor out=None)")
def lerp(input: Tensor, end: Tensor, weight: Any) -> Tensor:
    """``input + weight * (end - input)``; LerpBackward0 (scalar weight) or 1 (tensor weight)."""
    _check_lerp(input, end, weight)
    if is_tensor(weight):
        ad, bd = binary_arrays(input, end)
        wd = weight._data.astype(ad.dtype, copy=False)
        with np.errstate(invalid="ignore"):
            out = np.where(np.abs(wd) < 0.5, ad + wd * (bd - ad), bd - (bd - ad) * (1 - wd))
        return LERP_TENSOR.record((input, end, weight), out)  # type: ignore[no-any-return]
    return LERP_SCALAR(input, end, weight)


def _check_lerp(input: Tensor, end: Tensor, weight: Any) -> None:
    """torch's checks, in its order: dtypes alike, shapes broadcast, a floating kernel, and a
    scalar weight that fits the computing type (float for half and float)."""
    dt = input._data.dtype
    weight_tensor = is_tensor(weight)
    for name, t in (("end", end), ("weight", weight)):
        # a 0-dim weight of any dtype is taken as a number, as torch takes it
        if is_tensor(t) and t._data.dtype != dt and (name == "end" or t._data.ndim > 0):
            raise RuntimeError(f"expected dtype {_dtype.from_np(dt).cpp_name} for `{name}` but "
                               f"got dtype {_dtype.from_np(t._data.dtype).cpp_name}")
    shape = broadcast_shapes(input._data.shape, end._data.shape)
    if weight_tensor:
        broadcast_shapes(shape, weight._data.shape)
    kernel = "lerp_kernel_tensor" if weight_tensor else "lerp_kernel_scalar"
    not_implemented_for(kernel, dt, "biu")
    if not weight_tensor:
        check_scalar_fits(weight, np.dtype(np.float32) if dt.itemsize <= 4 else dt)


# -- comparisons and logic (never differentiable) ---------------------------------------------

def _compare(ufunc: Any, input: Any, other: Any, kernel: str = "") -> Tensor:
    """``kernel``: an ordering, which torch has no complex kernel for (its name in the error)."""
    ad, bd = binary_arrays(input, other)
    if kernel and type(ad) is np.ndarray:
        not_implemented_for(kernel, ad.dtype, "c")
    return wrap(np.asarray(binary_compute(ufunc, ad, bd)), _tls.mode)


@signature("eq(Tensor input, Tensor other, *, Tensor out=None)",
           "eq(Tensor input, Scalar other, *, Tensor out=None)")
def eq(input: Any, other: Any) -> Tensor:
    return _compare(np.equal, input, other)


@signature("ne(Tensor input, Tensor other, *, Tensor out=None)",
           "ne(Tensor input, Scalar other, *, Tensor out=None)")
def ne(input: Any, other: Any) -> Tensor:
    return _compare(np.not_equal, input, other)


@signature("lt(Tensor input, Tensor other, *, Tensor out=None)",
           "lt(Tensor input, Scalar other, *, Tensor out=None)")
def lt(input: Any, other: Any) -> Tensor:
    return _compare(np.less, input, other, "lt_cpu")


@signature("le(Tensor input, Tensor other, *, Tensor out=None)",
           "le(Tensor input, Scalar other, *, Tensor out=None)")
def le(input: Any, other: Any) -> Tensor:
    return _compare(np.less_equal, input, other, "le_cpu")


@signature("gt(Tensor input, Tensor other, *, Tensor out=None)",
           "gt(Tensor input, Scalar other, *, Tensor out=None)")
def gt(input: Any, other: Any) -> Tensor:
    return _compare(np.greater, input, other, "gt_cpu")


@signature("ge(Tensor input, Tensor other, *, Tensor out=None)",
           "ge(Tensor input, Scalar other, *, Tensor out=None)")
def ge(input: Any, other: Any) -> Tensor:
    return _compare(np.greater_equal, input, other, "ge_cpu")


# torch's other names of the comparisons, each its own name in torch's errors

@signature("greater(Tensor input, Tensor other, *, Tensor out=None)",
           "greater(Tensor input, Scalar other, *, Tensor out=None)")
def greater(input: Any, other: Any) -> Tensor:
    return gt.__wrapped__(input, other)


@signature("greater_equal(Tensor input, Tensor other, *, Tensor out=None)",
           "greater_equal(Tensor input, Scalar other, *, Tensor out=None)")
def greater_equal(input: Any, other: Any) -> Tensor:
    return ge.__wrapped__(input, other)


@signature("less(Tensor input, Tensor other, *, Tensor out=None)",
           "less(Tensor input, Scalar other, *, Tensor out=None)")
def less(input: Any, other: Any) -> Tensor:
    return lt.__wrapped__(input, other)


@signature("less_equal(Tensor input, Tensor other, *, Tensor out=None)",
           "less_equal(Tensor input, Scalar other, *, Tensor out=None)")
def less_equal(input: Any, other: Any) -> Tensor:
    return le.__wrapped__(input, other)


@signature("not_equal(Tensor input, Tensor other, *, Tensor out=None)",
           "not_equal(Tensor input, Scalar other, *, Tensor out=None)")
def not_equal(input: Any, other: Any) -> Tensor:
    return ne.__wrapped__(input, other)


@signature("logical_and(Tensor input, Tensor other, *, Tensor out=None)")
def logical_and(input: Tensor, other: Tensor) -> Tensor:
    return _compare(np.logical_and, input, other)


@signature("logical_or(Tensor input, Tensor other, *, Tensor out=None)")
def logical_or(input: Tensor, other: Tensor) -> Tensor:
    return _compare(np.logical_or, input, other)


@signature("logical_xor(Tensor input, Tensor other, *, Tensor out=None)")
def logical_xor(input: Tensor, other: Tensor) -> Tensor:
    return _compare(np.logical_xor, input, other)


@signature("logical_not(Tensor input, *, Tensor out=None)")
def logical_not(input: Tensor) -> Tensor:
    return wrap(np.logical_not(input._data), _tls.mode)


def _bitwise(ufunc: Any, input: Any, other: Any) -> Tensor:
    ad, bd = binary_arrays(input, other)
    # torch names the result dtype (a float scalar makes it the default float)
    not_implemented_for(f"{ufunc.__name__}_cpu", np.result_type(ad, bd), "fV")
    return wrap(np.asarray(binary_compute(ufunc, ad, bd)), _tls.mode)


@signature("bitwise_and(Tensor input, Tensor other, *, Tensor out=None)",
           "bitwise_and(Scalar self, Tensor other)",
           "bitwise_and(Tensor input, Scalar other, *, Tensor out=None)")
def bitwise_and(input: Any, other: Any) -> Tensor:
    return _bitwise(np.bitwise_and, input, other)


@signature("bitwise_or(Tensor input, Tensor other, *, Tensor out=None)",
           "bitwise_or(Scalar self, Tensor other)",
           "bitwise_or(Tensor input, Scalar other, *, Tensor out=None)")
def bitwise_or(input: Any, other: Any) -> Tensor:
    return _bitwise(np.bitwise_or, input, other)


@signature("bitwise_xor(Tensor input, Tensor other, *, Tensor out=None)",
           "bitwise_xor(Scalar self, Tensor other)",
           "bitwise_xor(Tensor input, Scalar other, *, Tensor out=None)")
def bitwise_xor(input: Any, other: Any) -> Tensor:
    return _bitwise(np.bitwise_xor, input, other)


@signature("bitwise_not(Tensor input, *, Tensor out=None)")
def bitwise_not(input: Tensor) -> Tensor:
    d = input._data
    not_implemented_for("bitwise_not_cpu", d.dtype, "fV")
    return wrap(np.invert(d), _tls.mode)


@signature("isnan(Tensor input, *, Tensor out=None)")
def isnan(input: Tensor) -> Tensor:
    return wrap(np.isnan(input._data), _tls.mode)


@signature("isinf(Tensor input, *, Tensor out=None)")
def isinf(input: Tensor) -> Tensor:
    return wrap(np.isinf(input._data), _tls.mode)


@signature("isfinite(Tensor input)")
def isfinite(input: Tensor) -> Tensor:
    return wrap(np.isfinite(input._data), _tls.mode)


@signature("equal(Tensor input, Tensor other)")
def equal(input: Tensor, other: Tensor) -> bool:
    return input._data.shape == other._data.shape and bool(np.array_equal(input._data,
                                                                          other._data))


@signature("isclose(Tensor input, Tensor other, double rtol=1e-05, double atol=1e-08, "
           "bool equal_nan=False)")
def isclose(input: Tensor, other: Tensor, rtol: float = 1e-05, atol: float = 1e-08,
            equal_nan: bool = False) -> Tensor:
    _check_close(input, other, rtol, atol)
    return wrap(np.isclose(input._data, other._data, rtol, atol, equal_nan), _tls.mode)


def _check_close(input: Tensor, other: Tensor, rtol: float, atol: float) -> None:
    a, b = input._data.dtype, other._data.dtype
    if a != b:
        raise RuntimeError(f"{_dtype.from_np(a).scalar_name} did not match "
                           f"{_dtype.from_np(b).scalar_name}")
    for name, value in (("rtol", rtol), ("atol", atol)):
        if value < 0:  # printed as C++ prints a double
            raise RuntimeError(f"{name} must be greater than or equal to zero, but got {value:g}")
    broadcast_shapes(input._data.shape, other._data.shape)


@signature("allclose(Tensor input, Tensor other, double rtol=1e-05, double atol=1e-08, "
           "bool equal_nan=False)")
def allclose(input: Tensor, other: Tensor, rtol: float = 1e-05, atol: float = 1e-08,
             equal_nan: bool = False) -> bool:
    _check_close(input, other, rtol, atol)
    return bool(np.allclose(input._data, other._data, rtol, atol, equal_nan))

