"""NumPy kernels for erf, erfc and erfinv: pure functions from an ndarray to an ndarray.

Note [Vectorised erf]
``np.vectorize(math.erf)`` calls the C library once per element from Python (about
300 ns each); these kernels run the same algorithm as whole-array NumPy passes.

- The algorithm is Sun's fdlibm ``s_erf.c`` (the one glibc, musl and CPython's
  ``math.erf`` run): a rational approximation on ``|x| < 0.84375``, one about 1 on
  ``[0.84375, 1.25)``, and ``exp(-x*x - 0.5625 + R(1/x^2)/S(1/x^2)) / x`` in the tails,
  with ``x*x`` split exactly through ``x`` truncated to 21 mantissa bits.  The
  polynomials are evaluated in the split order glibc uses, so the result usually
  agrees bit for bit with ``math.erf`` and never differs by more than one ulp
  (tests/test_erf_kernels.py measures it over millions of points).
- The array is walked in blocks of ``_BLOCK`` elements.  The bulk formula
  (|x| < 0.84375, most elements in practice) runs on the whole block in reused
  scratch buffers (Note [No temporaries in the block loop]); the other regions are
  gathered, computed on their own elements and scattered back.
- float32 and float16 are computed in float64 and rounded once, which is exact to
  their rounding (torch's float kernels are not more exact than that); float32 GELU
  and its derivative have a kernel of their own (Note [GELU in float32]).
- ``erfinv`` starts from a closed-form approximation (relative error ~2e-3) and
  takes Halley steps on ``erf(x) = y`` (``erfc(x) = 1 - |y|`` for ``|y| > 0.5``, where
  ``1 - |y|`` is exact and erfc keeps the tail's relative precision).  Halley's
  step converges cubically: two steps leave the float64 rounding error, a third
  removes what the first two left near the switch points.
"""
from __future__ import annotations

import math
import threading

import numpy as np

__all__ = ["erf", "erfc", "erfinv", "gelu", "gelu_backward"]

_BLOCK = 65536


def _from_bits(high_word: int) -> float:
    """The double whose high 32 bits are ``high_word`` and whose low 32 bits are 0."""
    return float(np.array(high_word << 32, dtype=np.uint64).view(np.float64))


# fdlibm's coefficients (facts of the algorithm, as printed in s_erf.c).
_ERX = 8.45062911510467529297e-01
_EFX = 1.28379167095512586316e-01
_PP = (1.28379167095512558561e-01, -3.25042107247001499370e-01, -2.84817495755985104766e-02,
       -5.77027029648944159157e-03, -2.37630166566501626084e-05)
_QQ = (None, 3.97917223959155352819e-01, 6.50222499887672944485e-02,
       5.08130628187576562776e-03, 1.32494738004321644526e-04, -3.96022827877536812320e-06)
_PA = (-2.36211856075265944077e-03, 4.14856118683748331666e-01, -3.72207876035701323847e-01,
       3.18346619901161753674e-01, -1.10894694282396677476e-01, 3.54783043256182359371e-02,
       -2.16637559486879084300e-03)
_QA = (None, 1.06420880400844228286e-01, 5.40397917702171048937e-01,
       7.18286544141962662868e-02, 1.26171219808761642112e-01, 1.36370839120290507362e-02,
       1.19844998467991074170e-02)
_RA = (-9.86494403484714822705e-03, -6.93858572707181764372e-01, -1.05586262253232909814e+01,
       -6.23753324503260060396e+01, -1.62396669462573470355e+02, -1.84605092906711035994e+02,
       -8.12874355063065934246e+01, -9.81432934416914548592e+00)
_SA = (None, 1.96512716674392571292e+01, 1.37657754143519042600e+02,
       4.34565877475229228821e+02, 6.45387271733267880336e+02, 4.29008140027567833386e+02,
       1.08635005541779435134e+02, 6.57024977031928170135e+00, -6.04244152148580987438e-02)
_RB = (-9.86494292470009928597e-03, -7.99283237680523006574e-01, -1.77579549177547519889e+01,
       -1.60636384855821916062e+02, -6.37566443368389627722e+02, -1.02509513161107724954e+03,
       -4.83519191608651397019e+02)
_SB = (None, 3.03380607434824582924e+01, 3.25792512996573918826e+02,
       1.53672958608443695994e+03, 3.19985821950859553908e+03, 2.55305040643316442583e+03,
       4.74528541206955367215e+02, -2.24409524465858183362e+01)

# Region bounds, as fdlibm compares the high word of |x|.
_TINY = _from_bits(0x3e300000)            # 2**-28
_DENORMAL_ISH = _from_bits(0x00800000)    # where x * efx could underflow
_ERFC_TINY = _from_bits(0x3c700000)       # 2**-56
_SMALL = _from_bits(0x3feb0000)           # 0.84375
_MID = _from_bits(0x3ff40000)             # 1.25
_ERF_TAIL_SPLIT = _from_bits(0x4006DB6E)  # ~1/0.35
_ERFC_TAIL_SPLIT = _from_bits(0x4006DB6D)
_ERF_ONE = _from_bits(0x40180000)         # 6: erf rounds to +-1 from here
_ERFC_ZERO = _from_bits(0x403c0000)       # 28: erfc underflows to 0 from here
_HIGH_MASK = np.uint64(0xFFFFFFFF00000000)


class _Scratch:
    """Buffers for one block, made once per call and reused block after block.

    Note [No temporaries in the block loop]
    A fresh 512 KiB temporary per NumPy operation is served by mmap or by a heap
    that glibc trims back to the OS when it is freed, so each one page-faults again:
    on a virtual machine that made the dozen operations of ``_small_ratio`` cost
    6x their arithmetic.  The bulk formula therefore writes into these buffers.
    """

    __slots__ = ("x", "out", "arg", "a", "z", "z2", "z4", "r", "s", "t", "g", "p", "mask")
    x: np.ndarray
    g: np.ndarray  # a second operand's block (``gelu_backward``'s incoming gradient)
    p: np.ndarray
    out: np.ndarray
    arg: np.ndarray
    a: np.ndarray
    z: np.ndarray
    z2: np.ndarray
    z4: np.ndarray
    r: np.ndarray
    s: np.ndarray
    t: np.ndarray
    mask: np.ndarray

    def __init__(self, size: int) -> None:
        for name in self.__slots__[:-1]:
            setattr(self, name, np.empty(size))
        self.mask = np.empty(size, dtype=bool)

    def view(self, n: int) -> "_Scratch":
        if n == self.x.size:
            return self
        part = _Scratch.__new__(_Scratch)
        for name in self.__slots__:
            setattr(part, name, getattr(self, name)[:n])
        return part


_local = threading.local()


def _scratch(size: int) -> _Scratch:
    """This thread's scratch buffers, kept between calls: fresh ones would page-fault on
    first touch, the very cost they avoid (NumPy releases the GIL inside ufuncs, so
    threads must not share them).  A nested call (erfinv's refinement runs erf inside
    erfinv's block loop) gets buffers of its own: see ``_blockwise``."""
    cached = getattr(_local, "scratch", None)
    if cached is None or cached.x.size < size:
        cached = _local.scratch = _Scratch(max(size, min(_BLOCK, 4096)))
    return cached.view(size)


def _small_ratio(x: np.ndarray, sc: _Scratch | None = None) -> np.ndarray:
    """fdlibm's ``y = R(x^2)/S(x^2)`` for ``|x| < 0.84375``: erf(x) = x + x*y.

    With ``sc``, y is left in ``sc.r`` and only ``sc``'s buffers are written.  The
    operations are those of glibc's split evaluation, one IEEE operation each.
    """
    if sc is None:
        sc = _Scratch(x.size)
    z = np.multiply(x, x, out=sc.z)
    z2 = np.multiply(z, z, out=sc.z2)
    z4 = np.multiply(z2, z2, out=sc.z4)
    t = sc.t
    r = np.multiply(z, _PP[1], out=sc.r)           # r = (pp0 + z*pp1) + z2*(pp2 + z*pp3) + z4*pp4
    r += _PP[0]
    np.multiply(z, _PP[3], out=t)
    t += _PP[2]
    t *= z2
    r += t
    np.multiply(z4, _PP[4], out=t)
    r += t
    # q = (1 + z*qq1) + z2*(qq2 + z*qq3) + z4*(qq4 + z*qq5)
    q = np.multiply(z, _QQ[1], out=sc.s)
    q += 1.0
    np.multiply(z, _QQ[3], out=t)
    t += _QQ[2]
    t *= z2
    q += t
    np.multiply(z, _QQ[5], out=t)
    t += _QQ[4]
    t *= z4
    q += t
    return np.divide(r, q, out=r)


def _mid_ratio(a: np.ndarray) -> np.ndarray:
    """fdlibm's ``P(s)/Q(s)``, ``s = |x| - 1``, for ``0.84375 <= |x| < 1.25``: erf = erx + P/Q."""
    s = a - 1.0
    s2 = s * s
    s4 = s2 * s2
    s6 = s4 * s2
    p = (_PA[0] + s * _PA[1]) + s2 * (_PA[2] + s * _PA[3]) + s4 * (_PA[4] + s * _PA[5]) \
        + s6 * _PA[6]
    q = (1.0 + s * _QA[1]) + s2 * (_QA[2] + s * _QA[3]) + s4 * (_QA[4] + s * _QA[5]) \
        + s6 * _QA[6]
    return p / q


def _tail(a: np.ndarray, split: float) -> np.ndarray:
    """erfc(a) for ``1.25 <= a < 28`` (a > 0): ``exp(-a*a - 0.5625 + R/S) / a``."""
    s = 1.0 / (a * a)
    s2 = s * s
    s4 = s2 * s2
    s6 = s4 * s2
    near = a < split
    ratio = np.empty_like(a)
    everywhere = near.all()                # the usual case (GELU's tail): no gathers
    if everywhere or near.any():
        t, t2, t4, t6 = (s, s2, s4, s6) if everywhere else (s[near], s2[near], s4[near],
                                                             s6[near])
        r = (_RA[0] + t * _RA[1]) + t2 * (_RA[2] + t * _RA[3]) + t4 * (_RA[4] + t * _RA[5]) \
            + t6 * (_RA[6] + t * _RA[7])
        q = (1.0 + t * _SA[1]) + t2 * (_SA[2] + t * _SA[3]) + t4 * (_SA[4] + t * _SA[5]) \
            + t6 * (_SA[6] + t * _SA[7]) + (t4 * t4) * _SA[8]
        if everywhere:
            ratio = r / q
        else:
            ratio[near] = r / q
    far = ~near
    if not everywhere and far.any():
        t, t2, t4, t6 = s[far], s2[far], s4[far], s6[far]
        r = (_RB[0] + t * _RB[1]) + t2 * (_RB[2] + t * _RB[3]) + t4 * (_RB[4] + t * _RB[5]) \
            + t6 * _RB[6]
        q = (1.0 + t * _SB[1]) + t2 * (_SB[2] + t * _SB[3]) + t4 * (_SB[4] + t * _SB[5]) \
            + t6 * (_SB[6] + t * _SB[7])
        ratio[far] = r / q
    # -a*a split exactly: z keeps a's high 21 mantissa bits, so z*z is exact.
    z = (a.view(np.uint64) & _HIGH_MASK).view(np.float64)
    return _exp(-z * z - 0.5625) * _exp((z - a) * (z + a) + ratio) / a


# -- a correctly rounded (in all but rare cases) exp --------------------------------------
#
# Note [Why erf has its own exp]
# fdlibm's tail is exp(A) * exp(B) / x with the C library's exp, which glibc rounds
# correctly in all but rare cases.  NumPy's SIMD exp (AVX-512 builds) is off by one
# ulp on ~4% of arguments, and erfc's tail multiplies two of them: up to 4 ulp from
# math.erfc.  So the tail uses this exp: k = round(x * 32/ln2), the remainder
# r = x - k*ln2/32 carried as two doubles (the high product is exact), exp(r) by a
# degree-7 Taylor polynomial (|r| < 0.0109: truncation below 1e-20), times
# 2**(k/32) from a table kept as two doubles, rounded once at the end.

def _exp_constants() -> tuple:
    """2**(j/32), j = 0..31, as (high, low) doubles, and ln2/32 as a short high part (whose
    multiples by k are exact) plus a low part, from 40-digit decimal arithmetic."""
    from decimal import Decimal, localcontext

    high, low = [], []
    with localcontext() as ctx:
        ctx.prec = 40
        ln2 = Decimal(2).ln()
        for j in range(32):
            exact = (ln2 * j / 32).exp()
            h = float(exact)
            high.append(h)
            low.append(float(exact - Decimal(h)))
        step = ln2 / 32
        bits = np.array(float(step)).view(np.uint64) & np.uint64(0xFFFFFFFFFF000000)
        step_high = float(bits.view(np.float64))   # 29 significant bits
        step_low = float(step - Decimal(step_high))
    return np.array(high), np.array(low), step_high, step_low


_T_HIGH, _T_LOW, _LN2_32_HIGH, _LN2_32_LOW = _exp_constants()
_INV_LN2_32 = 32.0 / math.log(2.0)


def _exp(x: np.ndarray) -> np.ndarray:
    """exp of finite float64 ``x`` in [-800, 1]; below ~-745 the result underflows to 0."""
    k = np.rint(x * _INV_LN2_32)
    r_high = x - k * _LN2_32_HIGH              # exact: k * high has < 53 bits, Sterbenz
    r_low = k * -_LN2_32_LOW
    r = r_high + r_low
    back = r - r_high                          # two-sum: the rounding error of r
    err = (r_high - (r - back)) + (r_low - back)
    em1 = r * (1.0 + r * (0.5 + r * (1.0 / 6 + r * (1.0 / 24 + r * (
        1.0 / 120 + r * (1.0 / 720 + r * (1.0 / 5040)))))))
    em1 += err * (1.0 + em1)
    ki = k.astype(np.int64)
    j = ki & 31
    high = _T_HIGH[j]
    mantissa = high + (_T_LOW[j] + high * em1)
    return np.ldexp(mantissa, (ki - j) >> 5)


def _erf_block(x: np.ndarray, out: np.ndarray, sc: _Scratch) -> None:
    # The small-|x| formula runs on the whole block (most elements in practice, and no
    # gather); the other regions are gathered and written over it.  nan stays nan.
    a = np.abs(x, out=sc.a)
    np.multiply(x, _small_ratio(x, sc), out=out)
    out += x
    if not a.min() >= _TINY:              # (a NaN in the block makes min() NaN)
        _fix_tiny(x, a, out, erfc=False)
    idx = np.flatnonzero(np.greater_equal(a, _SMALL, out=sc.mask))
    if not idx.size:
        return
    xs, as_ = x[idx], a[idx]
    res = np.empty_like(xs)
    mid = as_ < _MID
    if mid.any():
        res[mid] = _ERX + _mid_ratio(as_[mid])
    tail = ~mid & (as_ < _ERF_ONE)
    if tail.any():
        res[tail] = 1.0 - _tail(as_[tail], _ERF_TAIL_SPLIT)
    res[as_ >= _ERF_ONE] = 1.0                    # erf is 1 - tiny from 6 on (and at inf)
    out[idx] = np.copysign(res, xs)


def _fix_tiny(x: np.ndarray, a: np.ndarray, out: np.ndarray, erfc: bool) -> None:
    """fdlibm's tiny-argument branches, where x*R/S would lose the last bit (or underflow)."""
    if erfc:
        tiny = a < _ERFC_TINY
        out[tiny] = 1.0 - x[tiny]
        return
    tiny = a < _TINY
    t = x[tiny]
    out[tiny] = np.where(np.abs(t) < _DENORMAL_ISH,
                         0.0625 * (16.0 * t + (16.0 * _EFX) * t), t + _EFX * t)


def _erfc_block(x: np.ndarray, out: np.ndarray, sc: _Scratch) -> None:
    xy = np.multiply(x, _small_ratio(x, sc), out=sc.s)
    # x < 1/4 (negative x included): 1 - (x + x*y); else 0.5 - (x*y + (x - 0.5))
    lower = np.add(x, xy, out=sc.z)
    np.subtract(1.0, lower, out=lower)
    upper = np.subtract(x, 0.5, out=sc.z2)
    upper += xy
    np.subtract(0.5, upper, out=upper)
    _select(np.greater_equal(x, 0.25, out=sc.mask), upper, lower, out,
            sc.z4.view(np.uint64), sc.r.view(np.uint64))
    a = np.abs(x, out=sc.a)
    if not a.min() >= _ERFC_TINY:
        _fix_tiny(x, a, out, erfc=True)
    idx = np.flatnonzero(np.greater_equal(a, _SMALL, out=sc.mask))
    if not idx.size:
        return
    xs, as_ = x[idx], a[idx]
    negative = xs < 0
    res = np.empty_like(xs)
    mid = as_ < _MID
    if mid.any():
        pq = _mid_ratio(as_[mid])
        res[mid] = np.where(negative[mid], 1.0 + (_ERX + pq), (1.0 - _ERX) - pq)
    tail = ~mid & (as_ < _ERFC_ZERO) & ~(negative & (as_ >= _ERF_ONE))
    if tail.any():
        r = _tail(as_[tail], _ERFC_TAIL_SPLIT)
        res[tail] = np.where(negative[tail], 2.0 - r, r)
    rest = ~mid & ~tail                           # erfc(x <= -6) = 2 - tiny; erfc(x >= 28) = 0
    res[rest] = np.where(negative[rest], 2.0, 0.0)
    res[np.isnan(xs)] = np.nan
    out[idx] = res


def _select(mask: np.ndarray, if_true: np.ndarray, if_false: np.ndarray, out: np.ndarray,
            bits: np.ndarray, spare: np.ndarray) -> None:
    """``out = where(mask, if_true, if_false)`` by bit masks, in scratch (4x a masked copy's
    speed, and no allocation); ``bits`` and ``spare`` are uint64 views of scratch buffers."""
    np.copyto(bits, mask, casting="unsafe")
    np.negative(bits, out=bits)                        # all ones where mask, else 0
    np.bitwise_and(if_true.view(np.uint64), bits, out=spare)
    np.invert(bits, out=bits)
    np.bitwise_and(if_false.view(np.uint64), bits, out=bits)
    np.bitwise_or(bits, spare, out=out.view(np.uint64))


def _blockwise(kernel, x: np.ndarray, other: np.ndarray | None = None) -> np.ndarray:
    """Apply ``kernel(block, out_block, scratch)`` over ``x`` in float64 blocks; return an
    array of ``x``'s float dtype (integers give float64).

    Each block is copied (and widened) into ``scratch.x`` and computed into
    ``scratch.out`` (Note [No temporaries in the block loop]), then rounded once into
    the result.  NaN compares false everywhere, so it takes the first region's
    formula and stays NaN; the formulas overflow harmlessly on elements another
    region overwrites.  ``other`` (of ``x``'s shape), if given, is copied block by block
    into ``scratch.g`` for the kernel to read.
    """
    x = np.asarray(x)
    dtype = x.dtype if x.dtype.kind == "f" else np.dtype(np.float64)
    flat = x.reshape(-1)               # a copy only when x is not contiguous
    other_flat = None if other is None else np.asarray(other).reshape(-1)
    result = np.empty(flat.size, dtype=dtype)
    size = min(_BLOCK, flat.size)
    nested = getattr(_local, "busy", False)
    scratch = _Scratch(size) if nested else _scratch(size)
    _local.busy = True
    try:
        with np.errstate(all="ignore"):
            for start in range(0, flat.size, _BLOCK):
                stop = min(start + _BLOCK, flat.size)
                sc = scratch.view(stop - start)
                np.copyto(sc.x, flat[start:stop], casting="unsafe")
                if other_flat is not None:
                    np.copyto(sc.g, other_flat[start:stop], casting="unsafe")
                kernel(sc.x, sc.out, sc)
                np.copyto(result[start:stop], sc.out, casting="unsafe")
    finally:
        _local.busy = nested
    return result.reshape(x.shape)


def erf(x: np.ndarray) -> np.ndarray:
    """The error function of each element (float64 work, rounded once to ``x``'s float dtype).

    >>> erf(np.array([0.0, 0.5, -3.0]))
    array([ 0.        ,  0.52049988, -0.99997791])
    """
    return _blockwise(_erf_block, x)


def erfc(x: np.ndarray) -> np.ndarray:
    """``1 - erf(x)`` of each element, accurate in the tail (``erfc(10) = 2.088e-45``).

    >>> erfc(np.array([0.0, 10.0]))
    array([1.00000000e+00, 2.08848758e-45])
    """
    return _blockwise(_erfc_block, x)


_SQRT_HALF = math.sqrt(0.5)


def _gelu_block(x: np.ndarray, out: np.ndarray, sc: _Scratch) -> None:
    # 1 + erf(t) == erfc(-t), without the cancellation of 1 + erf(t) for t << 0
    _erfc_block(np.multiply(x, -_SQRT_HALF, out=sc.arg), out, sc)
    out *= x
    out *= 0.5


def gelu(x: np.ndarray) -> np.ndarray:
    """Exact GELU ``x/2 * (1 + erf(x/sqrt(2)))``, in float64 block by block, rounded once.

    It is computed as ``x/2 * erfc(-x/sqrt(2))``: the same value, but accurate to the
    last bit for negative x too, where ``1 + erf`` would cancel (gelu(-8) = -5e-15).
    float32 input takes the float32 kernel (Note [GELU in float32]).

    >>> gelu(np.array([-1.0, 0.0, 1.0]))
    array([-0.15865525,  0.        ,  0.84134475])
    """
    x = np.asarray(x)
    if x.dtype == np.float32:
        out = _blockwise32(_gelu32_block, x)
        if x.size > 1 and x.flags.c_contiguous:
            _gelu32_vector_edges(x, out)
        return out
    return _blockwise(_gelu_block, x)


# Note [torch's vectorised float32 GELU at the edges]
# torch's CPU computes a dense float32 tensor of two or more elements with its vector
# kernel, ``x * (1 + erf(x / sqrt 2))`` then halved: past float32's max / 2 that product
# overflows to inf, and its vector erf makes gelu(+inf) NaN.  A single element and a
# strided tensor take its scalar loop, which gives x there, as this module does.
_F32_HALF_MAX = np.float32(np.finfo(np.float32).max / 2)


def _gelu32_vector_edges(x: np.ndarray, out: np.ndarray) -> None:
    big = x > _F32_HALF_MAX
    if big.any():
        out[big] = np.where(x[big] == np.inf, np.float32(np.nan), np.float32(np.inf))


_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)


def _gelu_backward_block(x: np.ndarray, out: np.ndarray, sc: _Scratch) -> None:
    # grad * (erfc(-x/sqrt 2)/2 + x * exp(-x^2/2)/sqrt(2 pi)): GELU's derivative
    _erfc_block(np.multiply(x, -_SQRT_HALF, out=sc.arg), out, sc)
    out *= 0.5
    p = np.multiply(x, x, out=sc.p)
    p *= -0.5
    np.exp(p, out=p)
    p *= _INV_SQRT_2PI
    p *= x
    out += p
    out *= sc.g


def gelu_backward(grad: np.ndarray, x: np.ndarray) -> np.ndarray:
    """``grad * gelu'(x)`` for the exact GELU, in float64 block by block, rounded once.

    The derivative is ``Phi(x) + x * phi(x)`` (normal CDF and density), the CDF taken
    as ``erfc(-x/sqrt 2)/2`` as in ``gelu``; ``grad`` has ``x``'s shape.

    >>> gelu_backward(np.array([1.0, 1.0]), np.array([0.0, 1.0]))
    array([0.5       , 1.08331547])
    """
    x, grad = np.asarray(x), np.asarray(grad)
    if x.dtype == np.float32 and grad.dtype == np.float32:
        return _blockwise32(_gelu32_backward_block, x, grad)
    return _blockwise(_gelu_backward_block, x, grad)


# -- GELU in float32 ---------------------------------------------------------------------
#
# Note [GELU in float32]
# The float64 kernels above cost ~30 ns an element (fdlibm's regions, gathers, a
# two-double exp): 35x torch's float32 GELU, and a third of a small GPT's training
# step.  float32 only needs ~1e-8 relative accuracy, so its GELU is one formula for
# every element, ~15 NumPy passes, no gathers:
#
#     Phi(-t) = exp(-t*t/2) * Q(t),   t = |x|,
#     gelu(x) = x * (Phi(-t) if x < 0 else 1 - Phi(-t)),
#     gelu'(x) = D if x < 0 else 1 - D,   D = exp(-t*t/2) * (Q(t) - t/sqrt(2 pi)),
#
# where Q(t) = Phi(-t) exp(t*t/2) (Mills' ratio over sqrt(2 pi)) is smooth, from 1/2 at
# 0 down like 1/(t sqrt(2 pi)), and a rational function of degree 4/5 fits it to
# 7e-9 relative on [0, 16] (a fit of this project's, below; past 16 the result is x or
# 0 in float32, so t is clamped there).  t*t is exact in float64 (24-bit operands) and
# the exp runs in float64: its argument is not rounded, which would cost |t*t/2| ulps
# in the tail.  The rational runs in float32 (3x the speed of float64 passes; Note [The
# rational as one matrix product]), which leaves up to ~3 ulp; torch's own float32 GELU,
# ``x/2 * (1 + erf)``, cancels below x = -3 (gelu(-5) is 17% off there, and 0 from
# -5.6), where this one stays accurate.
#
# The coefficients come from a Lawson-reweighted linearised least-squares fit of
# P(t) - Q(t) R(t) against ``0.5 * math.erfc(t / sqrt 2) * exp(t*t/2)`` on 40,001
# points of [0, 16], rounded to float32 (which leaves 4e-8 relative, 0.3 ulp).

_Q_NUM = (0.5, 0.4410991668701172, 0.18532203137874603, 0.04133925214409828,
          0.004221754614263773)
_Q_DEN = (1.0, 1.6800833940505981, 1.211151123046875, 0.4749816954135895,
          0.10362768173217773, 0.010582271963357925)
_Q_CLAMP = 16.0


# Note [The rational as one matrix product]
# Horner's rule evaluates the degree-4/5 rational in 18 NumPy passes, half the kernel's
# time.  Its coefficients are all positive and t >= 0, so the power basis sums positive
# terms (no cancellation, the same few-ulp rounding): the block's powers 1, t, ..., t**5
# are the rows of one matrix, built in 4 passes, and numerator and denominator are one
# (2, 6) x (6, n) float32 matrix product -- one BLAS call that reads the rows once -- and a
# division.  A 65,536-element block's rational took 58 us instead of 114 us; GELU on 1M
# float32 elements, 6.2 ms instead of 6.9 (medians, 1 thread, a loaded 2-core machine).
# As many results are correctly rounded as with Horner (61 %), the worst is 3.3 eps.
_Q_COEF = np.array([_Q_NUM + (0.0,), _Q_DEN], dtype=np.float32)


class _Scratch32:
    """Block buffers for the float32 GELU kernels: float32 ones, one float64 for the exp,
    an int32 mask, the clamp bound as an array (NumPy's min with a scalar is not
    vectorised: 4x the time), the rows of powers 1, min(t, 16), ..., min(t, 16)**5 (row 0
    set once) and the numerator and denominator rows (Note [The rational as one matrix
    product])."""

    __slots__ = ("t", "u", "p", "r", "e", "wide", "mask", "bound", "powers", "nd")
    t: np.ndarray
    u: np.ndarray
    p: np.ndarray
    r: np.ndarray
    e: np.ndarray
    wide: np.ndarray
    mask: np.ndarray
    bound: np.ndarray
    powers: np.ndarray
    nd: np.ndarray

    def __init__(self, size: int) -> None:
        for name in ("t", "u", "p", "r", "e"):
            setattr(self, name, np.empty(size, dtype=np.float32))
        self.wide = np.empty(size)
        self.mask = np.empty(size, dtype=np.int32)
        self.bound = np.full(size, _Q_CLAMP, dtype=np.float32)
        self.powers = np.empty((6, size), dtype=np.float32)
        self.powers[0] = 1.0
        self.nd = np.empty((2, size), dtype=np.float32)

    def view(self, n: int) -> "_Scratch32":
        if n == self.t.size:
            return self
        part = _Scratch32.__new__(_Scratch32)
        for name in self.__slots__:
            setattr(part, name, getattr(self, name)[..., :n])
        return part


def _phi_tail32(x: np.ndarray, sc: _Scratch32) -> np.ndarray:
    """Leave ``t = |x|`` in ``sc.t``, ``exp(-t*t/2)`` in ``sc.e``, and return ``Q(min(t, 16))``
    (in ``sc.p``)."""
    t = np.abs(x, out=sc.t)
    wide = sc.wide
    np.copyto(wide, t)
    np.multiply(wide, wide, out=wide)                       # exact: 24-bit operands
    wide *= -0.5
    np.exp(wide, out=wide)
    np.copyto(sc.e, wide, casting="same_kind")
    powers = sc.powers
    tq = np.minimum(t, sc.bound, out=powers[1])             # NaN stays NaN
    np.multiply(tq, tq, out=powers[2])
    np.multiply(powers[2], tq, out=powers[3])
    np.multiply(powers[2], powers[2], out=powers[4])
    np.multiply(powers[4], tq, out=powers[5])
    nd = np.matmul(_Q_COEF, powers, out=sc.nd)
    return np.divide(nd[0], nd[1], out=sc.p)


def _select_negative(x: np.ndarray, below: np.ndarray, above: np.ndarray,
                     mask: np.ndarray) -> np.ndarray:
    """``where(signbit(x), below, above)`` written into ``above``, by bit operations
    (``np.copyto(where=)`` on a random mask takes 60x their time)."""
    m = np.right_shift(x.view(np.int32), 31, out=mask)    # all ones where x's sign is set
    b, a = below.view(np.int32), above.view(np.int32)
    np.bitwise_xor(b, a, out=b)
    np.bitwise_and(b, m, out=b)
    np.bitwise_xor(a, b, out=a)
    return above


def _gelu32_block(x: np.ndarray, out: np.ndarray, sc: _Scratch32) -> None:
    p = _phi_tail32(x, sc)
    p *= sc.e                                               # Phi(-|x|)
    w = _select_negative(x, p, np.subtract(1.0, p, out=sc.r), sc.mask)
    np.multiply(x, w, out=out)


def _gelu32_backward_block(x: np.ndarray, g: np.ndarray, out: np.ndarray,
                           sc: _Scratch32) -> None:
    d = _phi_tail32(x, sc)
    d -= np.multiply(sc.t, _INV_SQRT_2PI, out=sc.u)
    d *= sc.e
    w = _select_negative(x, d, np.subtract(1.0, d, out=sc.r), sc.mask)
    np.multiply(g, w, out=out)


def _blockwise32(kernel, x: np.ndarray, other: np.ndarray | None = None) -> np.ndarray:
    """Apply a float32 kernel over float32 ``x`` (and ``other``) in blocks; the kernel reads
    the blocks in place and writes the result's block.  The buffers are this thread's,
    kept between calls, as ``_scratch``'s are (Note [No temporaries in the block
    loop]); these kernels never nest."""
    flat = x.reshape(-1)
    other_flat = None if other is None else other.reshape(-1)
    result = np.empty(flat.size, dtype=np.float32)
    size = min(_BLOCK, flat.size)
    scratch = getattr(_local, "scratch32", None)
    if scratch is None or scratch.t.size < size:
        scratch = _local.scratch32 = _Scratch32(max(size, min(_BLOCK, 4096)))
    with np.errstate(all="ignore"):
        for start in range(0, flat.size, _BLOCK):
            stop = min(start + _BLOCK, flat.size)
            sc = scratch.view(stop - start)
            if other_flat is None:
                kernel(flat[start:stop], result[start:stop], sc)
            else:
                kernel(flat[start:stop], other_flat[start:stop], result[start:stop], sc)
    return result.reshape(x.shape)


# -- erfinv ------------------------------------------------------------------------------

_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)
_SQRT_PI_OVER_2 = math.sqrt(math.pi) / 2.0
_WINITZKI_A = 0.147
_WINITZKI_B = 2.0 / (math.pi * _WINITZKI_A)


def _erfinv_start(a: np.ndarray) -> np.ndarray:
    """A first guess at erfinv(a) for ``0 <= a < 1`` (relative error below ~2e-3)."""
    with np.errstate(divide="ignore"):
        ln = np.log((1.0 - a) * (1.0 + a))
    half = _WINITZKI_B + 0.5 * ln
    guess = np.sqrt(np.sqrt(half * half - ln / _WINITZKI_A) - half)
    # Near 0 the closed form cancels; the series sqrt(pi)/2 * (a + pi/12 a^3) is exact there.
    near_zero = a < 1e-3
    series = _SQRT_PI_OVER_2 * (a + (math.pi / 12.0) * a * a * a)
    return np.where(near_zero, series, guess)


def _halley(x: np.ndarray, target: np.ndarray, tail: bool, steps: int) -> np.ndarray:
    """Refine ``x`` towards erf(x) = target (``target <= 0.5``) or erfc(x) = target (the tail).

    f' = +-2/sqrt(pi) exp(-x^2) and f'' = -2x f', so Halley's step is u / (1 + x*u)
    with u = f/f' in both forms.
    """
    for _ in range(steps):
        slope = _TWO_OVER_SQRT_PI * np.exp(-x * x)
        if tail:
            u = (target - _blockwise(_erfc_block, x)) / slope
        else:
            # erf(x) - y as (x - y) + x*R(x^2): x - y is exact (y/2 < x < y), so the
            # residual is not rounded to y's ulp, which can be twice x's
            u = ((x - target) + x * _small_ratio(x)) / slope
        step = u / (1.0 + x * u)
        x = x - np.where(np.isfinite(step), step, 0.0)
    return x


def _erfinv_block(y: np.ndarray, out: np.ndarray, sc: _Scratch) -> None:
    a = np.abs(y)
    x = np.where(a == 1.0, np.inf, np.nan)             # |y| > 1 and NaN give NaN
    central = np.flatnonzero(a <= 0.5)
    if central.size:
        ac = a[central]
        x[central] = _halley(_erfinv_start(ac), ac, tail=False, steps=_HALLEY_STEPS)
    tail = np.flatnonzero((a > 0.5) & (a < 1.0))
    if tail.size:
        at = a[tail]
        # 1 - a is exact here (Sterbenz) and erfc keeps the tail's relative precision
        x[tail] = _halley(_erfinv_start(at), 1.0 - at, tail=True, steps=_HALLEY_STEPS)
    np.copysign(x, y, out=out)


_HALLEY_STEPS = 3   # two leave up to 12 ulp next to +-1, where the first guess is worst


def erfinv(y: np.ndarray) -> np.ndarray:
    """The inverse error function: ``erf(erfinv(y)) == y`` on ``(-1, 1)``; ``+-1 -> +-inf``.

    >>> erfinv(np.array([0.0, 0.5, -1.0]))
    array([0.        , 0.47693628,       -inf])
    """
    return _blockwise(_erfinv_block, y)
