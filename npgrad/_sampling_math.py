"""The floating-point steps torch's CPU samplers are built from, reproduced bit for bit.

Note [Bit-exact sampler arithmetic]
torch's sampling kernels are compiled with FMA enabled and GCC fuses ``a * b + c`` into
one fused multiply-add (one rounding), so ``mean + z * std`` and the polynomial steps of
its vectorised float normal kernel round once where NumPy's ``a * b + c`` rounds twice.
``fma32`` / ``fma64`` compute correctly rounded fused multiply-adds with NumPy: in float64
a float32 product is exact, and summing with round-to-odd before the final rounding to
float32 avoids double rounding; for float64 the product is split exactly (Dekker) and the
sum rounded to odd before the last step (Boldo and Melquiond's emulated FMA).

The scalar kernels call glibc's ``log``, ``log1p``, ``sin``, ``cos``, ``tan`` and ``exp``;
NumPy's vectorised versions differ from glibc's in the last bit now and then, so
``libm`` maps Python's ``math`` functions (which are glibc's) over the values.

torch's float32 normal kernel for 16 or more contiguous elements computes logarithms,
sines and cosines with the Cephes polynomials of ``avx_mathfun.h`` (eight lanes at a
time); ``log_avx`` and ``sincos_avx`` are those steps in float32 NumPy, with the same
fusions GCC makes.
"""
from __future__ import annotations

import math
from typing import Callable, Union

import numpy as np

_F32 = np.float32
_F64 = np.float64
Operand = Union[np.ndarray, float, np.floating]  # an array or a scalar of any float type
_SPLIT = 134217729.0  # 2**27 + 1


def _round_to_odd_sum(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``a + b`` (float64) rounded to odd: exact, or the neighbour with an odd last bit."""
    s = a + b
    bb = s - a
    err = (a - (s - bb)) + (b - bb)
    inexact = (err != 0) & ((s.view(np.uint64) & np.uint64(1)) == 0)
    if inexact.any():
        s = np.where(inexact, np.nextafter(s, np.where(err > 0, np.inf, -np.inf)), s)
    return s


_LOW29 = np.uint64((1 << 29) - 1)
_HALF29 = np.uint64(1 << 28)
_EXP64 = np.uint64(0x7FF << 52)
_F32_NORMAL = np.uint64((1023 - 126) << 52)  # float64 exponent field of 2**-126


def fma32(a: Operand, b: Operand, c: Operand) -> np.ndarray:
    """float32 ``a * b + c`` with one rounding.

    In float64 the product of two float32 values is exact and the sum rounds once; rounding
    that to float32 can only go wrong where the float64 sum sits exactly halfway between two
    float32 values (or in float32's subnormal range), so only those few values take the
    exact round-to-odd path.
    """
    s = np.multiply(a, b, dtype=_F64)
    s += np.asarray(c, _F64)
    out = s.astype(_F32)
    bits = s.view(np.uint64)
    suspect = ((bits & _LOW29) == _HALF29) | ((bits & _EXP64) < _F32_NORMAL)
    if suspect.any():
        idx = np.nonzero(suspect)
        p = (np.broadcast_to(np.asarray(a, _F64), s.shape)[idx]
             * np.broadcast_to(np.asarray(b, _F64), s.shape)[idx])
        cc = np.broadcast_to(np.asarray(c, _F64), s.shape)[idx]
        out[idx] = _round_to_odd_sum(p, cc).astype(_F32)
    return out


def _two_product(a: np.ndarray, b: np.ndarray) -> tuple:
    p = a * b
    t = a * _SPLIT
    ah = t - (t - a)
    al = a - ah
    t = b * _SPLIT
    bh = t - (t - b)
    bl = b - bh
    e = ((ah * bh - p) + ah * bl + al * bh) + al * bl
    return p, e


def _two_sum(a: np.ndarray, b: np.ndarray) -> tuple:
    s = a + b
    bb = s - a
    return s, (a - (s - bb)) + (b - bb)


def fma64(a: Operand, b: Operand, c: Operand) -> np.ndarray:
    """float64 ``a * b + c`` with one rounding."""
    a = np.asarray(a, _F64)
    if np.ndim(b) == 0 and np.ndim(c) == 0:
        if c == 0.0 and math.copysign(1.0, c) > 0:
            return a * b + 0.0  # one rounding; + 0.0 turns -0.0 into +0.0 as the fma does
        if b == 1.0:
            return a + c
    a, bs, cs = np.broadcast_arrays(a, np.asarray(b, _F64), np.asarray(c, _F64))
    uh, ul = _two_product(a, bs)
    th, tl = _two_sum(cs, uh)
    with np.errstate(invalid="ignore", over="ignore"):
        v = _round_to_odd_sum(tl, ul)
        out = th + v
        bad = ~np.isfinite(out) | ~np.isfinite(uh)
        if bad.any():  # infinities and NaNs: the plain expression gives the IEEE answer
            out = np.where(bad, a * bs + cs, out)
    return out


def libm(fn: Callable[[float], float], x: np.ndarray) -> np.ndarray:
    """``fn`` (a ``math`` function, i.e. glibc's) applied to each value of ``x``."""
    flat = np.asarray(x, _F64).ravel()
    return np.fromiter(map(fn, flat.tolist()), _F64, count=flat.size).reshape(np.shape(x))


def _fdot(ys: np.ndarray, x: np.ndarray, c: float) -> np.ndarray:
    return fma32(ys, x, _F32(c))


_LOG_P = (7.0376836292E-2, -1.1514610310E-1, 1.1676998740E-1, -1.2420140846E-1,
          1.4249322787E-1, -1.6668057665E-1, 2.0000714765E-1, -2.4999993993E-1,
          3.3333331174E-1)
_MIN_NORM = np.array([0x00800000], np.int32).view(_F32)[0]


def log_avx(x: np.ndarray) -> np.ndarray:
    """float32 natural log as ``log256_ps`` computes it (NaN for x <= 0)."""
    x = np.asarray(x, _F32)
    invalid = ~(x > 0)
    x = np.maximum(x, _MIN_NORM)
    bits = x.view(np.int32)
    exponent = (bits.view(np.uint32) >> np.uint32(23)).astype(np.int32) - 0x7F
    x = ((bits & np.int32(~0x7F800000)) | np.int32(0x3F000000)).view(_F32)
    e = exponent.astype(_F32) + _F32(1)
    small = x < _F32(0.707106781186547524)
    tmp = np.where(small, x, _F32(0))
    x = x - _F32(1)
    e = e - small.astype(_F32)
    x = x + tmp
    z = x * x
    y = np.full(x.shape, _F32(_LOG_P[0]))
    for p in _LOG_P[1:]:
        y = _fdot(y, x, p)
    y = y * x
    y = fma32(y, z, e * _F32(-2.12194440e-4))
    y = y - z * _F32(0.5)
    x = x + y
    x = fma32(e, _F32(0.693359375), x)
    return np.where(invalid, _F32(np.nan), x)


def sincos_avx(x: np.ndarray) -> tuple:
    """float32 ``(sin, cos)`` as ``sincos256_ps`` computes them."""
    x = np.asarray(x, _F32)
    sign_sin = np.signbit(x)
    x = np.abs(x)
    j = (x * _F32(1.27323954473516)).astype(np.int32)
    j = (j + 1) & ~1
    y = j.astype(_F32)
    sign_sin = sign_sin ^ ((j & 4) != 0)
    sign_cos = (~(j - 2) & 4) != 0
    use_sin_poly = (j & 2) == 0
    x = fma32(y, _F32(-0.78515625), x)
    x = fma32(y, _F32(-2.4187564849853515625e-4), x)
    x = fma32(y, _F32(-3.77489497744594108e-8), x)
    z = x * x
    c = np.full(x.shape, _F32(2.443315711809948E-005))
    c = _fdot(c, z, -1.388731625493765E-003)
    c = _fdot(c, z, 4.166664568298827E-002)
    c = c * z
    c = fma32(c, z, -(z * _F32(0.5)))
    c = c + _F32(1)
    s = np.full(x.shape, _F32(-1.9515295891E-4))
    s = _fdot(s, z, 8.3321608736E-3)
    s = _fdot(s, z, -1.6666654611E-1)
    s = s * z
    s = fma32(s, x, x)
    sin = np.where(use_sin_poly, s, c)
    cos = np.where(use_sin_poly, c, s)
    return np.where(sign_sin, -sin, sin), np.where(sign_cos, -cos, cos)
