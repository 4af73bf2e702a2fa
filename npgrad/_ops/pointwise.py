"""Pointwise ops: each node class is one op's grad_fn, its forward and backward side by side.

Backward rules are written in npgrad's own ops, so they are differentiable when
the engine runs them with ``create_graph=True`` (Note [The per-op path]).
Broadcasting is undone by the engine, not here: a rule may return a gradient of
the broadcast shape and the engine sums it down to the input's shape.
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from .. import _bfloat16, _dtype
from .._mode import _tls
from .._forward import FW, tangent_of
from .._tensor import Tensor, wrap
from ..autograd.forward_rules import elementwise_jvp
from ._core import (BinaryNode, Node, NotImplementedBackward, SavedTensor, UnaryNode, as_array,
                    binary, binary_arrays,
                    binary_op, save_value,
                    binary_compute, check_int_scalar, check_not_freed, float_arrays, is_tensor,
                    node_of, record, requires_grad, saved, unary)

_float_np = _dtype.float_result_np


class PointwiseNode(UnaryNode):
    """A one-input elementwise op: its Jacobian is diagonal (see ``elementwise_jvp``)."""

    __slots__ = ()
    jvp = elementwise_jvp


class PointwiseBinaryNode(BinaryNode):
    """A two-input elementwise op (broadcasting): both Jacobians are diagonal."""

    __slots__ = ()
    jvp = elementwise_jvp


def _float_data(x: Tensor) -> np.ndarray:
    """Input of a floating-only op (exp, sqrt, ...): ints become the default float dtype."""
    d = x._data
    return d if d.dtype.kind in "fV" else d.astype(_dtype.get_default_dtype().np_dtype)


def _unary_float(cls: Any, ufunc: Any, x: Tensor) -> Tensor:
    with np.errstate(all="ignore"):
        if x._data.dtype.kind == "V":  # bfloat16: computed in float32, rounded once
            return unary(cls, x, _bfloat16.in_float32(ufunc, x._data))
        return unary(cls, x, ufunc(_float_data(x)))


# -- add / sub / rsub ------------------------------------------------------------

class AddBackward0(PointwiseBinaryNode):
    __slots__ = ("alpha",)

    def save(self, a: Any, b: Any, result: Tensor) -> None:
        self.alpha = 1

    def backward(self, grad: Tensor) -> tuple:
        alpha = self.alpha
        return grad, (grad if alpha == 1 else grad * alpha)


class SubBackward0(AddBackward0):
    __slots__ = ()

    def backward(self, grad: Tensor) -> tuple:
        alpha = self.alpha
        return grad, (-grad if alpha == 1 else grad * -alpha)


def _is_floating(x: Any) -> bool:
    dt = getattr(x, "dtype", None)
    return dt.kind in "fV" if dt is not None else isinstance(x, float)  # "V": bfloat16


def _check_alpha(a: Any, b: Any, alpha: Any) -> None:
    # Either operand may be the Python scalar (add(1.5, t, alpha=...)); a float one makes the
    # result floating, so a float alpha is fine.
    if isinstance(alpha, float) and not _is_floating(a) and not _is_floating(b):
        raise RuntimeError("For integral input tensors, argument alpha must not be a floating "
                           "point number.")


def _add_like(cls: Any, ufunc: Any, input: Any, other: Any, alpha: Any) -> Tensor:
    ad, bd = binary_arrays(input, other)
    if alpha != 1:
        _check_alpha(ad, bd, alpha)
        bd = bd * alpha if isinstance(bd, np.ndarray) else np.asarray(bd * alpha, ad.dtype)
        if isinstance(bd, np.ndarray) and isinstance(ad, np.ndarray) and bd.dtype != ad.dtype:
            bd = bd.astype(np.result_type(ad, bd), copy=False)
    res = binary(cls, input, other, binary_compute(ufunc, ad, bd))
    node = node_of(res)
    if alpha != 1 and node is not None:
        node.alpha = alpha
    return res


def add(input: Any, other: Any, *, alpha: Any = 1) -> Tensor:
    """``input + alpha * other`` (grad_fn ``AddBackward0``).

    >>> import npgrad
    >>> npgrad.add(npgrad.tensor([1., 2.]), 1)
    tensor([2., 3.])
    """
    if alpha == 1:
        if type(input) is not Tensor and not isinstance(input, Tensor):
            input, other = other, input  # a + b == b + a; alpha scales `other` only, so no swap below
        return binary_op(AddBackward0, np.add, input, other)
    return _add_like(AddBackward0, np.add, input, other, alpha)


def sub(input: Any, other: Any, *, alpha: Any = 1) -> Tensor:
    """``input - alpha * other`` (grad_fn ``SubBackward0``)."""
    _check_bool_sub(input, other)
    if alpha == 1:
        return binary_op(SubBackward0, np.subtract, input, other)
    return _add_like(SubBackward0, np.subtract, input, other, alpha)


subtract = sub


def _check_bool_sub(a: Any, b: Any) -> None:
    if is_tensor(a) and is_tensor(b) and a._data.dtype.kind == "b" and b._data.dtype.kind == "b":
        raise RuntimeError("Subtraction, the `-` operator, with two bool tensors is not "
                           "supported. Use the `^` or `logical_xor()` operator instead.")


class RsubBackward1(PointwiseNode):
    __slots__ = ("alpha",)

    def backward(self, grad: Tensor) -> tuple:
        return (-grad if self.alpha == 1 else grad * -self.alpha),


class RsubBackward0(PointwiseBinaryNode):
    """``other - alpha * self`` with two tensors."""

    __slots__ = ("alpha",)

    def save(self, a: Any, b: Any, result: Tensor) -> None:
        self.alpha = 1

    def backward(self, grad: Tensor) -> tuple:
        alpha = self.alpha
        return (-grad if alpha == 1 else grad * -alpha), grad


def rsub(input: Tensor, other: Any, *, alpha: Any = 1) -> Tensor:
    """``other - alpha * input``: RsubBackward0 for a tensor ``other``, RsubBackward1 for a scalar."""
    if is_tensor(other):
        _check_bool_sub(other, input)
        ad, bd = binary_arrays(input, other)
        if alpha != 1:
            _check_alpha(ad, bd, alpha)
            ad = np.asarray(ad * alpha, dtype=ad.dtype)
        res = binary(RsubBackward0, input, other, binary_compute(np.subtract, bd, ad))
        node = node_of(res)
        if alpha != 1 and node is not None:
            node.alpha = alpha
        return res
    ad, bd = binary_arrays(input, other)
    res = unary(RsubBackward1, input, binary_compute(np.subtract, bd,
                                                     ad * alpha if alpha != 1 else ad))
    node = node_of(res)
    if node is not None:
        node.alpha = alpha
    return res


# -- mul / div -------------------------------------------------------------------

class MulBackward0(PointwiseBinaryNode):
    __slots__ = ()

    def save(self, a: Any, b: Any, result: Tensor) -> None:
        if self.next_functions[0][0] is not None:
            self.other = save_value(b)
        if self.next_functions[1][0] is not None:
            self.self_ = SavedTensor(a)

    def backward(self, grad: Tensor) -> tuple:
        ga = grad * saved(self, "other") if self.next_functions[0][0] is not None else None
        gb = grad * saved(self, "self_") if self.next_functions[1][0] is not None else None
        return ga, gb


def mul(input: Any, other: Any) -> Tensor:
    """Elementwise product (grad_fn ``MulBackward0``).

    >>> import npgrad
    >>> x = npgrad.tensor([1.], requires_grad=True)
    >>> x * 2
    tensor([2.], grad_fn=<MulBackward0>)
    """
    if type(input) is not Tensor and not isinstance(input, Tensor):
        input, other = other, input
    return binary_op(MulBackward0, np.multiply, input, other)


multiply = mul


class DivBackward0(PointwiseBinaryNode):
    __slots__ = ()

    def save(self, a: Any, b: Any, result: Tensor) -> None:
        self.other = save_value(b)
        if self.next_functions[1][0] is not None:
            self.self_ = SavedTensor(a)

    def backward(self, grad: Tensor) -> tuple:
        other = saved(self, "other")
        ga = grad / other if self.next_functions[0][0] is not None else None
        gb = None
        if self.next_functions[1][0] is not None:
            gb = -grad * saved(self, "self_") / (other * other)
        return ga, gb


class DivBackward2(PointwiseBinaryNode):
    """Division with a rounding mode: piecewise constant, so the gradient is zero."""

    __slots__ = ()

    def backward(self, grad: Tensor) -> tuple:
        check_not_freed(self)  # torch saves the divisor (Note [Saved values kept outside SavedTensor])
        return (zeros_like_grad(grad) if self.next_functions[0][0] is not None else None,
                zeros_like_grad(grad) if self.next_functions[1][0] is not None else None)


def zeros_like_grad(grad: Tensor) -> Tensor:
    """A zero gradient shaped like ``grad``, without history (``zeros_like_grad(grad)`` would keep NaNs)."""
    return wrap(np.zeros_like(grad._data), _tls.mode)


def div(input: Any, other: Any, *, rounding_mode: str | None = None) -> Tensor:
    """True division (int / int gives the default float dtype); grad_fn ``DivBackward0``."""
    if rounding_mode is not None:
        ad, bd = binary_arrays(input, other)
        return _rounding_div(input, other, ad, bd, rounding_mode)
    ad_f, bd_f = float_arrays(input, other)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = binary_compute(np.true_divide, ad_f, bd_f)
    if not is_tensor(input):  # scalar / tensor: torch computes other.reciprocal() * input
        return mul(reciprocal(other), input) if requires_grad(other) else binary(
            DivBackward0, input, other, out)
    return binary(DivBackward0, input, other, out)


def _rounding_div(input: Any, other: Any, ad: Any, bd: Any, mode: str) -> Tensor:
    if mode not in ("floor", "trunc"):
        raise ValueError("div expected rounding_mode to be one of None, 'trunc', or 'floor' "
                         f"but found '{mode}'")
    _check_int_zero_division(bd, ad)
    with np.errstate(divide="ignore", invalid="ignore"):
        if mode == "floor":
            out = binary_compute(np.floor_divide, ad, bd)
        elif np.asarray(ad).dtype.kind in "iu" and np.asarray(bd).dtype.kind in "iu":
            out = _int_trunc_divide(ad, bd)
        else:
            out = np.trunc(binary_compute(np.true_divide, ad, bd))
    return binary(DivBackward2, input, other, out)


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


def true_divide(input: Any, other: Any) -> Tensor:
    return div(input, other)


divide = div


def floor_divide(input: Any, other: Any) -> Tensor:
    """Floor division; not differentiable in torch (its grad_fn raises in backward)."""
    ad, bd = binary_arrays(input, other)
    _check_int_zero_division(bd, ad)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = binary_compute(np.floor_divide, ad, bd)
    res, node = record(NotImplementedBackward, (input, other), out)
    if node is not None:
        node.op = "floor_divide"
        if FW.active:
            tangent_of(res)  # torch refuses a tangent input at once: run the rule now
    return res


class RemainderBackward0(PointwiseNode):
    __slots__ = ()

    def backward(self, grad: Tensor) -> tuple:
        return grad,


class RemainderBackward1(PointwiseBinaryNode):
    __slots__ = ()

    def save(self, a: Any, b: Any, result: Tensor) -> None:
        if self.next_functions[1][0] is not None:
            self.self_ = SavedTensor(a)
            self.other = SavedTensor(b)

    # d/d other of (self - other * q) with q = floor(self / other) piecewise constant
    rounding = "floor"

    def backward(self, grad: Tensor) -> tuple:
        gb = None
        if self.next_functions[1][0] is not None:
            quotient = div(saved(self, "self_"), saved(self, "other"),
                           rounding_mode=self.rounding)
            gb = -grad * quotient
        return grad if self.next_functions[0][0] is not None else None, gb


def remainder(input: Any, other: Any) -> Tensor:
    """Python-style modulus (sign of the divisor); grad_fn ``RemainderBackward0/1``.

    With a scalar dividend torch records no derivative (its grad_fn raises).
    """
    ad, bd = binary_arrays(input, other)
    _check_int_zero_division(bd, ad)
    with np.errstate(divide="ignore", invalid="ignore"):
        if np.asarray(ad).dtype.kind == "f":
            out = _float_remainder(ad, bd)
        else:
            out = binary_compute(np.remainder, ad, bd)
    if not is_tensor(input):
        res, node = record(NotImplementedBackward, (other,), out)
        if node is not None:
            node.op = "remainder"
            if FW.active:
                tangent_of(res)  # raises at once, as torch's
        return res
    if is_tensor(other):
        return binary(RemainderBackward1, input, other, out)
    return unary(RemainderBackward0, input, out)


class FmodBackward0(RemainderBackward0):
    __slots__ = ()


class FmodBackward1(RemainderBackward1):
    __slots__ = ()
    rounding = "trunc"


def fmod(input: Tensor, other: Any) -> Tensor:
    """C-style modulus (sign of the dividend); FmodBackward0 (scalar) or 1 (tensor divisor)."""
    ad, bd = binary_arrays(input, other)
    _check_int_zero_division(bd, ad)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = binary_compute(np.fmod, ad, bd)
    if is_tensor(other):
        return binary(FmodBackward1, input, other, out)
    return unary(FmodBackward0, input, out)


# -- pow -----------------------------------------------------------------------------

class PowBackward0(PointwiseNode):
    """``self ** exponent`` with a scalar exponent."""

    __slots__ = ("exponent",)
    saves_self = True

    def backward(self, grad: Tensor) -> tuple:
        e = self.exponent
        if e == 0:
            saved(self, "self_")  # unused, but freed after a backward as torch's
            return zeros_like_grad(grad),
        x = saved(self, "self_")
        return grad * e * x ** (e - 1),


class PowBackward1(PointwiseBinaryNode):
    """``self ** exponent`` with both tensors."""

    __slots__ = ("result",)
    _saved_fields = ("self_", "other", "result")

    def save(self, a: Any, b: Any, result: Tensor) -> None:
        self.self_ = SavedTensor(a)
        self.other = SavedTensor(b)
        if self.next_functions[1][0] is not None:
            self.result = SavedTensor(result, True)

    def backward(self, grad: Tensor) -> tuple:
        x, e = saved(self, "self_"), saved(self, "other")
        ga = gb = None
        if self.next_functions[0][0] is not None:
            ga = where(e == 0, 0.0, grad * e * x ** (e - 1))
        if self.next_functions[1][0] is not None:
            r = saved(self, "result")
            gb = where((x == 0) & (e >= 0), 0.0, grad * r * log(x))
        return ga, gb


class PowBackward2(PointwiseNode):
    """``scalar ** exponent``: d/de = result * log(base)."""

    __slots__ = ("base",)
    saves_result = True

    def backward(self, grad: Tensor) -> tuple:
        b = self.base
        r = saved(self, "result")
        if b == 0:
            # torch's rule: 0 where the exponent is >= 0 (there the result, 0 ** e, is 0 or
            # 1), else result * log(0): -inf for e < 0 (result inf), NaN for a NaN exponent
            return where((r == 0) | (r == 1), 0.0, grad * r * -math.inf),
        return grad * r * float(np.log(b)),


def pow(input: Any, exponent: Any) -> Tensor:
    """``input ** exponent``; PowBackward0 (scalar exponent), 1 (tensors), 2 (scalar base).

    >>> import npgrad
    >>> npgrad.tensor([1., 2.]) ** 2
    tensor([1., 4.])
    """
    if type(exponent) is int and is_tensor(input) and input._data.dtype.kind not in "fV":
        _check_int_exponent(input._data.dtype, exponent)
    ad, bd = binary_arrays(input, exponent)
    with np.errstate(all="ignore"):
        if np.asarray(ad).dtype.kind in "iu" and np.asarray(bd).dtype.kind in "iu":
            out = _int_power(ad, bd)
        elif type(bd) is float and bd == 0.5 and ad.dtype.kind == "f":
            out = np.sqrt(ad)  # torch's sqrt path: (-0.) ** 0.5 is -0. (np.power's varies by NumPy)
        elif type(bd) is float and bd == -0.5 and ad.dtype.kind == "f":
            out = np.reciprocal(np.sqrt(ad))  # torch's rsqrt: (-0.) ** -0.5 is -inf, not inf
        else:
            out = binary_compute(np.power, ad, bd)
    if not is_tensor(input):
        res = unary(PowBackward2, exponent, out)
        node = node_of(res)
        if node is not None:
            node.base = input
        return res
    if not is_tensor(exponent):
        res = unary(PowBackward0, input, out)
        node = node_of(res)
        if node is not None:
            node.exponent = exponent
        return res
    return binary(PowBackward1, input, exponent, out)


# torch's C names of the integer types, as its overflow message prints them
_C_INT_NAMES = {"uint8": "uint8_t", "int8": "int8_t", "int16": "int16_t", "int32": "int",
                "int64": "int64_t"}


def _check_int_exponent(dt: np.dtype, e: int) -> None:
    """An integer tensor to a Python int power: torch checks the exponent itself, unwrapped
    (Note [Python ints as scalars] in _core)."""
    check_int_scalar(e)
    if e > np.iinfo(np.int64).max:
        raise RuntimeError("value cannot be converted to type int64_t without overflow")
    if e < 0:
        raise RuntimeError("Integers to negative integer powers are not allowed.")
    if dt.kind != "b" and e > np.iinfo(dt).max:
        raise RuntimeError(f"value cannot be converted to type {_C_INT_NAMES[dt.name]} "
                           "without overflow")


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


def square(input: Tensor) -> Tensor:
    return pow(input, 2)


# -- one-input ops -----------------------------------------------------------------------

class NegBackward0(PointwiseNode):
    __slots__ = ()

    def backward(self, grad: Tensor) -> tuple:
        return -grad,


def neg(input: Tensor) -> Tensor:
    if input._data.dtype.kind == "b":
        raise RuntimeError("Negation, the `-` operator, on a bool tensor is not supported. If "
                           "you are trying to invert a mask, use the `~` or `logical_not()` "
                           "operator instead.")
    return unary(NegBackward0, input, np.negative(input._data))


negative = neg


class ReciprocalBackward0(PointwiseNode):
    __slots__ = ()
    saves_result = True

    def backward(self, grad: Tensor) -> tuple:
        r = saved(self, "result")
        return -grad * r * r,


def reciprocal(input: Tensor) -> Tensor:
    return _unary_float(ReciprocalBackward0, np.reciprocal, input)


class AbsBackward0(PointwiseNode):
    __slots__ = ()
    saves_self = True

    def backward(self, grad: Tensor) -> tuple:
        return grad * sign(saved(self, "self_")),


def abs(input: Tensor) -> Tensor:  # noqa: A001
    return unary(AbsBackward0, input, np.abs(input._data))


absolute = abs


class SignBackward0(PointwiseNode):
    __slots__ = ()

    def backward(self, grad: Tensor) -> tuple:
        return zeros_like_grad(grad),


def sign(input: Tensor) -> Tensor:
    d = input._data
    out = np.sign(d)
    if d.dtype.kind == "f":  # torch: sign(nan) is 0 (and so abs' gradient there)
        out = np.where(np.isnan(d), d.dtype.type(0), out)
    return unary(SignBackward0, input, out)


class ExpBackward0(PointwiseNode):
    __slots__ = ()
    saves_result = True

    def backward(self, grad: Tensor) -> tuple:
        return grad * saved(self, "result"),


def exp(input: Tensor) -> Tensor:
    return _unary_float(ExpBackward0, np.exp, input)


class LogBackward0(PointwiseNode):
    __slots__ = ()
    saves_self = True

    def backward(self, grad: Tensor) -> tuple:
        return grad / saved(self, "self_"),


def log(input: Tensor) -> Tensor:
    return _unary_float(LogBackward0, np.log, input)


class Log2Backward0(PointwiseNode):
    __slots__ = ()
    saves_self = True

    def backward(self, grad: Tensor) -> tuple:
        return grad / (saved(self, "self_") * float(np.log(2.0))),


def log2(input: Tensor) -> Tensor:
    return _unary_float(Log2Backward0, np.log2, input)


class Log10Backward0(PointwiseNode):
    __slots__ = ()
    saves_self = True

    def backward(self, grad: Tensor) -> tuple:
        return grad / (saved(self, "self_") * float(np.log(10.0))),


def log10(input: Tensor) -> Tensor:
    return _unary_float(Log10Backward0, np.log10, input)


class Log1PBackward0(PointwiseNode):
    __slots__ = ()
    saves_self = True

    def backward(self, grad: Tensor) -> tuple:
        return grad / (saved(self, "self_") + 1),


def log1p(input: Tensor) -> Tensor:
    return _unary_float(Log1PBackward0, np.log1p, input)


class Expm1Backward0(PointwiseNode):
    __slots__ = ()
    saves_result = True

    def backward(self, grad: Tensor) -> tuple:
        return grad * (saved(self, "result") + 1),


def expm1(input: Tensor) -> Tensor:
    return _unary_float(Expm1Backward0, np.expm1, input)


class SqrtBackward0(PointwiseNode):
    __slots__ = ()
    saves_result = True

    def backward(self, grad: Tensor) -> tuple:
        return grad / (saved(self, "result") * 2),


def sqrt(input: Tensor) -> Tensor:
    return _unary_float(SqrtBackward0, np.sqrt, input)


class RsqrtBackward0(PointwiseNode):
    __slots__ = ()
    saves_result = True

    def backward(self, grad: Tensor) -> tuple:
        r = saved(self, "result")
        return grad * (r * r * r) * -0.5,


def _np_rsqrt(x: np.ndarray) -> np.ndarray:
    return np.reciprocal(np.sqrt(x))


def rsqrt(input: Tensor) -> Tensor:
    return _unary_float(RsqrtBackward0, _np_rsqrt, input)


class SinBackward0(PointwiseNode):
    __slots__ = ()
    saves_self = True

    def backward(self, grad: Tensor) -> tuple:
        return grad * cos(saved(self, "self_")),


def sin(input: Tensor) -> Tensor:
    return _unary_float(SinBackward0, np.sin, input)


class CosBackward0(PointwiseNode):
    __slots__ = ()
    saves_self = True

    def backward(self, grad: Tensor) -> tuple:
        return grad * -sin(saved(self, "self_")),


def cos(input: Tensor) -> Tensor:
    return _unary_float(CosBackward0, np.cos, input)


class TanBackward0(PointwiseNode):
    __slots__ = ()
    saves_result = True

    def backward(self, grad: Tensor) -> tuple:
        r = saved(self, "result")
        return grad * (r * r + 1),


def tan(input: Tensor) -> Tensor:
    return _unary_float(TanBackward0, np.tan, input)


class TanhBackward0(PointwiseNode):
    __slots__ = ()
    saves_result = True

    def backward(self, grad: Tensor) -> tuple:
        r = saved(self, "result")
        return grad * (1 - r * r),


def tanh(input: Tensor) -> Tensor:
    return _unary_float(TanhBackward0, np.tanh, input)


class SigmoidBackward0(PointwiseNode):
    __slots__ = ()
    saves_result = True

    def backward(self, grad: Tensor) -> tuple:
        r = saved(self, "result")
        return grad * r * (1 - r),


def _np_sigmoid(x: np.ndarray) -> np.ndarray:
    # exp of a negative argument only, so large |x| neither overflows nor warns.
    e = np.exp(-np.abs(x))
    return np.where(x >= 0, 1 / (1 + e), e / (1 + e)).astype(x.dtype, copy=False)


def sigmoid(input: Tensor) -> Tensor:
    return _unary_float(SigmoidBackward0, _np_sigmoid, input)


class ReluBackward0(PointwiseNode):
    __slots__ = ()
    saves_result = True

    def backward(self, grad: Tensor) -> tuple:
        # where, not a product: torch's gradient is +0. where the mask is off, never -0.
        # torch zeroes it where ``result <= 0``: a NaN result passes the gradient through.
        return where(logical_not(saved(self, "result") <= 0), grad, 0.0),


def relu(input: Tensor) -> Tensor:
    d = input._data
    # torch's ``x < 0 ? 0 : x``: relu(-0.) is -0. and relu(nan) is nan.  NumPy's float32 /
    # float64 maximum returns its second operand on a tie (and propagates NaN), so zero goes
    # first; float16's loop does not, and takes the (slower) where.
    zero = d.dtype.type(0)
    out = np.where(d < 0, zero, d) if d.dtype == np.float16 else np.maximum(zero, d)
    return unary(ReluBackward0, input, out)


class _ZeroGradUnary(PointwiseNode):
    """Piecewise-constant ops (floor, ceil, round, trunc): zero gradient, as in torch."""

    __slots__ = ()

    def backward(self, grad: Tensor) -> tuple:
        return zeros_like_grad(grad),


class FloorBackward0(_ZeroGradUnary):
    __slots__ = ()


class CeilBackward0(_ZeroGradUnary):
    __slots__ = ()


class RoundBackward0(_ZeroGradUnary):
    __slots__ = ()


class RoundBackward1(_ZeroGradUnary):
    __slots__ = ()


class TruncBackward0(_ZeroGradUnary):
    __slots__ = ()


def _integral_noop(input: Tensor, np_fn: Any, cls: Any) -> Tensor:
    d = input._data
    if d.dtype.kind != "f":
        return wrap(d.copy(), _tls.mode)
    return unary(cls, input, np_fn(d))


def floor(input: Tensor) -> Tensor:
    return _integral_noop(input, np.floor, FloorBackward0)


def ceil(input: Tensor) -> Tensor:
    return _integral_noop(input, np.ceil, CeilBackward0)


def trunc(input: Tensor) -> Tensor:
    return _integral_noop(input, np.trunc, TruncBackward0)


def round(input: Tensor, *, decimals: int = 0) -> Tensor:  # noqa: A001
    if decimals:
        return unary(RoundBackward1, input, np.round(input._data, decimals))
    return _integral_noop(input, np.rint, RoundBackward0)


class FracBackward0(PointwiseNode):
    __slots__ = ()

    def backward(self, grad: Tensor) -> tuple:
        return grad,


def frac(input: Tensor) -> Tensor:
    d = input._data
    return unary(FracBackward0, input, d - np.trunc(d))


# -- clamp -------------------------------------------------------------------------------

class ClampBackward1(PointwiseNode):
    """clamp with scalar bounds: gradient passes where min <= x <= max."""

    __slots__ = ("min", "max")
    saves_self = True

    def backward(self, grad: Tensor) -> tuple:
        x = saved(self, "self_")
        mask = None
        if self.min is not None:
            mask = x >= self.min
        if self.max is not None:
            upper = x <= self.max
            mask = upper if mask is None else mask & upper
        return where(mask, grad, 0.0),


class ClampMinBackward0(ClampBackward1):
    __slots__ = ()


class ClampMaxBackward0(ClampBackward1):
    __slots__ = ()


class ClampBackward0(Node):
    """clamp with tensor bounds: inputs (self, min, max)."""

    __slots__ = ("self_", "min", "max")
    jvp = elementwise_jvp
    _saved_fields = ("self_", "min", "max")

    def backward(self, grad: Tensor) -> tuple:
        x = saved(self, "self_")
        lo = saved(self, "min") if self.min is not None else None
        hi = saved(self, "max") if self.max is not None else None
        in_range = None
        if lo is not None:
            in_range = x >= lo
        if hi is not None:
            below = x <= hi
            in_range = below if in_range is None else in_range & below
        zero = zeros_like_grad(grad)
        gx = where(in_range, grad, zero) if self.next_functions[0][0] is not None else None
        # When min > max the result is max everywhere, so max takes all the gradient.
        gmin = gmax = None
        if lo is not None and self.next_functions[1][0] is not None:
            below = x < lo
            gmin = where(below & (lo < hi) if hi is not None else below, grad, zero)
        if hi is not None and self.next_functions[2][0] is not None:
            above = x > hi
            gmax = where(above | (hi < lo) if lo is not None else above, grad, zero)
        return gx, gmin, gmax


class ClampMinBackward1(PointwiseBinaryNode):
    """clamp_min with a tensor bound: gradient to self where x >= min, else to min."""

    __slots__ = ()

    def save(self, a: Any, b: Any, result: Tensor) -> None:
        self.self_ = SavedTensor(a)
        self.other = SavedTensor(b)

    def _keep_self(self) -> Tensor:
        return saved(self, "self_") >= saved(self, "other")

    def backward(self, grad: Tensor) -> tuple:
        keep = self._keep_self()
        zero = zeros_like_grad(grad)
        return (where(keep, grad, zero) if self.next_functions[0][0] is not None else None,
                where(keep, zero, grad) if self.next_functions[1][0] is not None else None)


class ClampMaxBackward1(ClampMinBackward1):
    __slots__ = ()

    def _keep_self(self) -> Tensor:
        return saved(self, "self_") <= saved(self, "other")


def _keep_ties(ufunc: Any, x: np.ndarray, bound: Any) -> np.ndarray:
    """``ufunc(x, bound)`` (NaN from either side propagates) that keeps ``x`` where it equals
    the bound: torch's clamp of -0. to min=0. is -0., where NumPy's maximum gives 0."""
    out = ufunc(x, bound)
    if out.dtype.kind == "f":
        tie = x == bound
        if tie.any():
            out = np.where(tie, x, out)
    return out


def _clamp_scalar(cls: Any, input: Tensor, lo: Any, hi: Any) -> Tensor:
    d = input._data
    out_dt = _dtype.result_type_np(tuple(v for v in (d, lo, hi) if v is not None))
    out = d.astype(out_dt, copy=False)
    if lo is not None:
        out = _keep_ties(np.maximum, out, np.asarray(lo, out_dt))
    if hi is not None:
        out = _keep_ties(np.minimum, out, np.asarray(hi, out_dt))
    if out is d:
        out = d.copy()
    res = unary(cls, input, out)
    node = node_of(res)
    if node is not None:
        node.min, node.max = lo, hi
    return res


def clamp(input: Tensor, min: Any = None, max: Any = None) -> Tensor:  # noqa: A002
    """Clamp into [min, max]; ``ClampBackward1`` for scalar bounds, ``ClampBackward0`` for tensors."""
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    if not is_tensor(min) and not is_tensor(max):
        return _clamp_scalar(ClampBackward1, input, min, max)
    d = input._data
    lo = as_array(min) if min is not None else None
    hi = as_array(max) if max is not None else None
    out = d
    if lo is not None:
        out = np.maximum(out, lo)
    if hi is not None:
        out = np.minimum(out, hi)
    out = out.astype(_dtype.result_type_np(tuple(v for v in (d, lo, hi) if v is not None)),
                     copy=False)
    res, node = record(ClampBackward0, (input, min, max), out)
    if node is not None:
        node.self_ = SavedTensor(input)
        node.min = SavedTensor(min) if min is not None else None
        node.max = SavedTensor(max) if max is not None else None
    return res


clip = clamp


def clamp_min(input: Tensor, min: Any) -> Tensor:  # noqa: A002
    if is_tensor(min):
        ad, bd = binary_arrays(input, min)
        return binary(ClampMinBackward1, input, min, binary_compute(np.maximum, ad, bd))
    return _clamp_scalar(ClampMinBackward0, input, min, None)


def clamp_max(input: Tensor, max: Any) -> Tensor:  # noqa: A002
    if is_tensor(max):
        ad, bd = binary_arrays(input, max)
        return binary(ClampMaxBackward1, input, max, binary_compute(np.minimum, ad, bd))
    return _clamp_scalar(ClampMaxBackward0, input, None, max)


# -- maximum / minimum / where / masked_fill / lerp ----------------------------------------

class MaximumBackward0(PointwiseBinaryNode):
    """Ties split the gradient evenly between the two inputs, as in torch."""

    __slots__ = ()

    def save(self, a: Any, b: Any, result: Tensor) -> None:
        self.self_ = SavedTensor(a)
        self.other = SavedTensor(b)

    def _losers(self, a: Tensor, b: Tensor) -> tuple:
        """Where each input loses (gets +0); a NaN on either side loses nowhere."""
        return a < b, a > b

    def backward(self, grad: Tensor) -> tuple:
        a, b = saved(self, "self_"), saved(self, "other")
        # torch: half the gradient to each side of a tie, +0. (never -0.) to the loser, and
        # the whole gradient to both sides where a NaN makes both comparisons false
        g = where(a == b, grad / 2, grad)
        a_loses, b_loses = self._losers(a, b)
        ga = where(a_loses, 0.0, g) if self.next_functions[0][0] is not None else None
        gb = where(b_loses, 0.0, g) if self.next_functions[1][0] is not None else None
        return ga, gb


class MinimumBackward0(MaximumBackward0):
    __slots__ = ()

    def _losers(self, a: Tensor, b: Tensor) -> tuple:
        return a > b, a < b


def maximum(input: Tensor, other: Tensor) -> Tensor:
    ad, bd = binary_arrays(input, other)
    return binary(MaximumBackward0, input, other, binary_compute(np.maximum, ad, bd))


def minimum(input: Tensor, other: Tensor) -> Tensor:
    ad, bd = binary_arrays(input, other)
    return binary(MinimumBackward0, input, other, binary_compute(np.minimum, ad, bd))


class WhereBackward0(Node):
    __slots__ = ("condition",)
    _saved_fields = ("condition",)

    def backward(self, grad: Tensor) -> tuple:
        cond = saved(self, "condition")
        zero = zeros_like_grad(grad)
        ga = where(cond, grad, zero) if self.next_functions[0][0] is not None else None
        gb = where(cond, zero, grad) if self.next_functions[1][0] is not None else None
        return ga, gb


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
    try:
        out = np.where(cond, ad, bd)
    except ValueError:
        from ._shape_util import broadcast_shapes

        broadcast_shapes(broadcast_shapes(cond.shape, np.shape(ad)), np.shape(bd))
        raise
    res, node = record(WhereBackward0, (input, other), out)
    if node is not None:
        node.condition = SavedTensor(condition)
    return res


class MaskedFillBackward0(PointwiseNode):
    __slots__ = ("mask",)
    _saved_fields = ("mask",)

    def backward(self, grad: Tensor) -> tuple:
        return where(saved(self, "mask"), zeros_like_grad(grad), grad),


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
    out = np.where(m, np.asarray(v).astype(d.dtype), d)
    if out.shape != d.shape:
        from ._shape_util import broadcast_shapes

        broadcast_shapes(d.shape, m.shape)
    if is_tensor(value):
        res, node = record(MaskedFillBackward1, (input, value), out)
    else:
        res = unary(MaskedFillBackward0, input, out)
        node = node_of(res)
    if node is not None:
        node.mask = SavedTensor(mask)
    return res


class MaskedFillBackward1(Node):
    """masked_fill with a 0-dim tensor value: the value gets the masked positions' gradient."""

    __slots__ = ("mask",)
    _saved_fields = ("mask",)

    def backward(self, grad: Tensor) -> tuple:
        mask = saved(self, "mask")
        zero = zeros_like_grad(grad)
        return (where(mask, zero, grad) if self.next_functions[0][0] is not None else None,
                where(mask, grad, zero).sum() if self.next_functions[1][0] is not None else None)


class LerpBackward0(Node):
    """lerp with a scalar weight: out = self + weight * (end - self)."""

    __slots__ = ("weight",)
    jvp = elementwise_jvp

    def backward(self, grad: Tensor) -> tuple:
        w = self.weight
        return (grad * (1 - w) if self.next_functions[0][0] is not None else None,
                grad * w if self.next_functions[1][0] is not None else None)


class LerpBackward1(Node):
    """lerp with a tensor weight: inputs (self, end, weight)."""

    __slots__ = ("self_", "end", "weight")
    jvp = elementwise_jvp
    _saved_fields = ("self_", "end", "weight")

    def backward(self, grad: Tensor) -> tuple:
        w = saved(self, "weight")
        needs = [edge[0] is not None for edge in self.next_functions]
        gw = grad * (saved(self, "end") - saved(self, "self_")) if needs[2] else None
        return (grad * (1 - w) if needs[0] else None, grad * w if needs[1] else None, gw)


def lerp(input: Tensor, end: Tensor, weight: Any) -> Tensor:
    """``input + weight * (end - input)``; LerpBackward0 (scalar weight) or 1 (tensor weight)."""
    ad, bd = binary_arrays(input, end)
    if is_tensor(weight):
        wd = weight._data.astype(ad.dtype, copy=False)
        with np.errstate(invalid="ignore"):
            out = np.where(np.abs(wd) < 0.5, ad + wd * (bd - ad), bd - (bd - ad) * (1 - wd))
        res, node = record(LerpBackward1, (input, end, weight), out)
        if node is not None:
            node.self_ = SavedTensor(input) if node.next_functions[2][0] is not None else None
            node.end = SavedTensor(end) if node.next_functions[2][0] is not None else None
            node.weight = SavedTensor(weight)
        return res
    w = float(weight)
    # torch's two-sided formula: from ``end`` back for weights >= 0.5 (exact at 1, and
    # finite where a forward sum of infinities would give NaN)
    with np.errstate(invalid="ignore"):
        out = ad + w * (bd - ad) if -0.5 < w < 0.5 else bd - (bd - ad) * (1 - w)
    res, node = record(LerpBackward0, (input, end), np.asarray(out, dtype=np.result_type(ad, bd)))
    if node is not None:
        node.weight = weight
    return res


# -- comparisons and logic (never differentiable) ---------------------------------------------

def _compare(ufunc: Any, input: Any, other: Any) -> Tensor:
    ad, bd = binary_arrays(input, other)
    return wrap(np.asarray(binary_compute(ufunc, ad, bd)), _tls.mode)


def eq(input: Any, other: Any) -> Tensor:
    return _compare(np.equal, input, other)


def ne(input: Any, other: Any) -> Tensor:
    return _compare(np.not_equal, input, other)


def lt(input: Any, other: Any) -> Tensor:
    return _compare(np.less, input, other)


def le(input: Any, other: Any) -> Tensor:
    return _compare(np.less_equal, input, other)


def gt(input: Any, other: Any) -> Tensor:
    return _compare(np.greater, input, other)


def ge(input: Any, other: Any) -> Tensor:
    return _compare(np.greater_equal, input, other)


greater, greater_equal, less, less_equal, not_equal = gt, ge, lt, le, ne


def logical_and(input: Tensor, other: Tensor) -> Tensor:
    return _compare(np.logical_and, input, other)


def logical_or(input: Tensor, other: Tensor) -> Tensor:
    return _compare(np.logical_or, input, other)


def logical_xor(input: Tensor, other: Tensor) -> Tensor:
    return _compare(np.logical_xor, input, other)


def logical_not(input: Tensor) -> Tensor:
    return wrap(np.logical_not(input._data), _tls.mode)


def _bitwise(ufunc: Any, input: Any, other: Any) -> Tensor:
    ad, bd = binary_arrays(input, other)
    if np.asarray(ad).dtype.kind == "f" or np.asarray(bd).dtype.kind == "f":
        raise RuntimeError(f"\"{ufunc.__name__}_cpu\" not implemented for 'Float'")
    return wrap(np.asarray(binary_compute(ufunc, ad, bd)), _tls.mode)


def bitwise_and(input: Any, other: Any) -> Tensor:
    return _bitwise(np.bitwise_and, input, other)


def bitwise_or(input: Any, other: Any) -> Tensor:
    return _bitwise(np.bitwise_or, input, other)


def bitwise_xor(input: Any, other: Any) -> Tensor:
    return _bitwise(np.bitwise_xor, input, other)


def bitwise_not(input: Tensor) -> Tensor:
    d = input._data
    if d.dtype.kind == "f":
        raise RuntimeError("\"bitwise_not_cpu\" not implemented for 'Float'")
    return wrap(np.invert(d), _tls.mode)


def isnan(input: Tensor) -> Tensor:
    return wrap(np.isnan(input._data), _tls.mode)


def isinf(input: Tensor) -> Tensor:
    return wrap(np.isinf(input._data), _tls.mode)


def isfinite(input: Tensor) -> Tensor:
    return wrap(np.isfinite(input._data), _tls.mode)


def equal(input: Tensor, other: Tensor) -> bool:
    return input._data.shape == other._data.shape and bool(np.array_equal(input._data,
                                                                          other._data))


def isclose(input: Tensor, other: Tensor, rtol: float = 1e-05, atol: float = 1e-08,
            equal_nan: bool = False) -> Tensor:
    return wrap(np.isclose(input._data, other._data, rtol, atol, equal_nan), _tls.mode)


def allclose(input: Tensor, other: Tensor, rtol: float = 1e-05, atol: float = 1e-08,
             equal_nan: bool = False) -> bool:
    return bool(np.allclose(input._data, other._data, rtol, atol, equal_nan))

