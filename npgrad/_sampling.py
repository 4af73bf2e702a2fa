"""torch's CPU sampling transforms: a generator's 32/64-bit words -> values, as NumPy arrays.

Each function draws exactly the words torch's CPU kernel draws, in its order, and applies
its transform with its roundings (see Note [One engine, torch's words] in ``_random`` and
Note [Bit-exact sampler arithmetic] in ``_sampling_math``).  Results are flat arrays in
the order torch fills a tensor; ``fill_order`` / ``from_fill_order`` map them onto a
(possibly non-contiguous) destination the way torch's TensorIterator walks it.

Note [Which words each sampler takes]
(torch 2.13's CPU kernels as measured against torch on an AVX512 machine, which runs the
AVX2 normal kernel; a few facts differ from older sources and are marked "measured".)
- uniform: one word per float32 / float16 / bfloat16 value (its low 24 bits; the two
  half precisions sample in float and round), one ``random64`` per float64 value (low 53
  bits); a value that rounds up to ``to`` becomes ``from`` (measured).
- normal: float32 (and float16 / bfloat16, computed in float32) with >= 16 contiguous
  elements: all uniforms first (the half precisions: only those of whole blocks,
  measured), Box-Muller on each block of 16 (the first 8 give radii, the last 8 angles)
  in AVX arithmetic, and if the size is not a multiple of 16 the last 16 positions are
  drawn again and redone.  float64 with >= 16 contiguous elements: the same blocks in
  double precision with glibc's functions.  Otherwise a scalar double Box-Muller: pairs
  of ``random64`` uniforms, cos first, the sine cached on the generator for the next
  normal draw.
- random_ / randint: one word per value if the range is below 2**28 (measured), else a
  ``random64``; ``random_()`` without bounds: torch's per-dtype transform.
- bernoulli, exponential (``-log1p(-u) / lambda``, measured), geometric, cauchy,
  log-normal: one double uniform per value (bernoulli with a float32 probability tensor:
  one float uniform); a double result goes to a half precision through float32, as C++'s
  ``static_cast<Half>`` does.
- randperm: for n < 2**32 / 20 a Fisher-Yates pass with ``random() % (n - i)``; above, the
  "inside-out" variant with ``random64() % (i + 1)``.
- multinomial without replacement (or one sample): exponential keys (an exponential
  race); with replacement: one double uniform per sample, row by row, searched in the
  row's CDF.
- poisson: torch's sequential sampler (Knuth below rate 10, Hoermann's transformed
  rejection above), one value after another.
"""
from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np

from ._random import Generator
from ._sampling_math import fma32, fma64, libm, log_avx, sincos_avx

_F32 = np.float32
_F64 = np.float64
_MASK24 = np.uint64((1 << 24) - 1)
_MASK53 = np.uint64((1 << 53) - 1)
_TWO_PI_F32 = _F32(2.0 * math.pi)
_RANDPERM_SMALL = (2 ** 32 - 1) // 20


# -- where the values go ------------------------------------------------------------------

def fill_order(arr: np.ndarray) -> tuple:
    """The permutation of ``arr``'s dims that walks its memory in order (outermost first)."""
    if arr.flags.c_contiguous or arr.ndim < 2:
        return tuple(range(arr.ndim))
    return tuple(sorted(range(arr.ndim), key=lambda d: (-abs(arr.strides[d]), d)))


def from_fill_order(values: np.ndarray, arr: np.ndarray) -> np.ndarray:
    """Flat ``values`` in ``arr``'s memory order, reshaped to ``arr``'s shape."""
    order = fill_order(arr)
    if order == tuple(range(arr.ndim)):
        return values.reshape(arr.shape)
    permuted = values.reshape([arr.shape[d] for d in order])
    return permuted.transpose(np.argsort(order))


def to_fill_order(values: np.ndarray, arr: np.ndarray) -> np.ndarray:
    """``values`` (shaped like ``arr``) flattened in ``arr``'s memory order."""
    order = fill_order(arr)
    return np.ascontiguousarray(np.transpose(values, order)).reshape(-1)


# -- uniform ------------------------------------------------------------------------------

def unit_float(gen: Generator, n: int) -> np.ndarray:
    """``n`` float32 uniforms in [0, 1): a word's low 24 bits / 2**24."""
    return (gen._words(n) & _MASK24).astype(_F32) * _F32(2.0 ** -24)


def unit_double(gen: Generator, n: int) -> np.ndarray:
    """``n`` float64 uniforms in [0, 1): a ``random64``'s low 53 bits / 2**53."""
    return (gen._words64(n) & _MASK53).astype(_F64) * 2.0 ** -53


def uniform(gen: Generator, n: int, dtype: np.dtype, low: float, high: float) -> np.ndarray:
    """``uniform_(low, high)``: ``n`` values of ``dtype``."""
    if dtype == _F64:
        x = unit_double(gen, n)
        out = fma64(x, high - low, low)
        return np.where(out == high, low, out)
    x = unit_float(gen, n)
    if dtype == _F32:
        lo, hi = _F32(low), _F32(high)
        out = fma32(x, hi - lo, lo)
        return np.where(out == hi, lo, out)
    lo, hi = _F32(low), _F32(high)  # float16 / bfloat16 sample in float, then round
    out = fma32(x, hi - lo, lo).astype(dtype)
    return np.where(out.astype(_F32) == hi, np.asarray(lo).astype(dtype), out)


# -- normal -------------------------------------------------------------------------------

def _box_muller_double(gen: Generator, n: int) -> np.ndarray:
    """``n`` standard normals from torch's scalar sampler (uses and refills the cache)."""
    out = np.empty(n, _F64)
    start = 0
    if n and gen._normal_double is not None:
        out[0] = gen._normal_double
        gen._normal_double = None
        start = 1
    m = n - start
    if m <= 0:
        return out
    pairs = (m + 1) // 2
    u = unit_double(gen, 2 * pairs)
    u1, u2 = u[0::2], u[1::2]
    r = np.sqrt(-2.0 * libm(math.log1p, -u2))
    theta = (2.0 * math.pi) * u1
    both = np.empty(2 * pairs, _F64)
    both[0::2] = r * libm(math.cos, theta)
    both[1::2] = r * libm(math.sin, theta)
    out[start:] = both[:m]
    if m % 2:
        gen._normal_double = float(both[-1])
    return out


def _blocks16_avx(u: np.ndarray, mean: Any, std: Any) -> np.ndarray:
    """torch's AVX Box-Muller on float32 uniforms in blocks of 16."""
    b = u.reshape(-1, 2, 8)
    radius = np.sqrt(_F32(-2.0) * log_avx(_F32(1.0) - b[:, 0]))
    sin, cos = sincos_avx(_TWO_PI_F32 * b[:, 1])
    out = np.empty_like(b)
    out[:, 0] = fma32(radius * cos, std, mean)
    out[:, 1] = fma32(radius * sin, std, mean)
    return out.reshape(-1)


def _blocks16_double(u: np.ndarray, mean: Any, std: Any) -> np.ndarray:
    """torch's scalar Box-Muller on float64 uniforms in blocks of 16 (glibc functions)."""
    b = u.reshape(-1, 2, 8)
    radius = np.sqrt(-2.0 * libm(math.log, 1.0 - b[:, 0]))
    theta = (2.0 * math.pi) * b[:, 1]
    out = np.empty_like(b)
    out[:, 0] = fma64(radius * libm(math.cos, theta), std, mean)
    out[:, 1] = fma64(radius * libm(math.sin, theta), std, mean)
    return out.reshape(-1)


def normal(gen: Generator, n: int, dtype: np.dtype, mean: float, std: float,
           contiguous: bool = True) -> np.ndarray:
    """``normal_(mean, std)`` on ``n`` elements of ``dtype`` (``contiguous``: the
    destination's layout, which picks torch's kernel)."""
    if n >= 16 and contiguous:
        blocks: Callable[[np.ndarray, Any, Any], np.ndarray]
        m: Any
        s: Any
        if dtype == _F64:
            unit, blocks, m, s = unit_double, _blocks16_double, float(mean), float(std)
        else:  # float32, and float16 / bfloat16 computed in float32 then rounded
            unit, blocks, m, s = unit_float, _blocks16_avx, _F32(mean), _F32(std)
        full = n - n % 16
        # float32 and float64 draw all n uniforms first; half precision only whole blocks
        u = unit(gen, n if dtype in (_F32, _F64) else full)
        out = np.empty(n, _F64 if dtype == _F64 else _F32)
        out[:full] = blocks(u[:full], m, s)
        if n % 16:
            out[n - 16:] = blocks(unit(gen, 16), m, s)
        return out.astype(dtype, copy=False)
    z = _box_muller_double(gen, n)
    return to_dtype(fma64(z, float(std), float(mean)), dtype)


# -- integers -----------------------------------------------------------------------------

# torch 2.13 draws a random64 once the range reaches 2**28 (measured: older releases
# switched at 2**32, and only for some dtypes); every dtype that holds such a range does
_WIDE_RANGE = 1 << 28


def random_from_to(gen: Generator, n: int, dtype: np.dtype, low: int, high: int) -> np.ndarray:
    """``random_(low, high)`` / ``randint``: ``(word % (high - low)) + low``."""
    span = high - low
    words = gen._words64(n) if span >= _WIDE_RANGE else gen._words(n)
    vals = (words % np.uint64(span)).astype(np.int64) + np.int64(low)
    return vals.astype(dtype)


def random_full(gen: Generator, n: int, dtype: np.dtype) -> np.ndarray:
    """``random_()``: every integer the dtype holds exactly, from 0."""
    if dtype == np.bool_:
        return (gen._words(n) & np.uint64(1)).astype(np.bool_)
    if dtype.kind == "f" or is_low_float(dtype):
        digits = {"float16": 11, "bfloat16": 8, "float32": 24, "float64": 53}[dtype.name]
        words = gen._words64(n) if dtype == _F64 else gen._words(n)
        return (words % np.uint64((1 << digits) + 1)).astype(dtype)
    top = int(np.iinfo(dtype).max) + 1
    words = gen._words64(n) if dtype == np.int64 else gen._words(n)
    return (words % np.uint64(top)).astype(dtype)


def random_int64_full_range(gen: Generator, n: int, dtype: np.dtype) -> np.ndarray:
    """``random_(-2**63, None)``: a ``random64`` reinterpreted as int64."""
    return gen._words64(n).view(np.int64).astype(dtype)


def randperm(gen: Generator, n: int) -> np.ndarray:
    """torch's CPU ``randperm(n)`` (int64)."""
    if n < _RANDPERM_SMALL:
        out = list(range(n))
        if n > 1:
            moduli = np.arange(n, 1, -1, dtype=np.uint64)
            targets = ((gen._words(n - 1) % moduli) + np.arange(n - 1, dtype=np.uint64)).tolist()
            for i, j in enumerate(targets):  # Fisher-Yates: each swap depends on the last
                out[i], out[j] = out[j], out[i]
        return np.array(out, dtype=np.int64)
    # "inside-out" Fisher-Yates with random64, torch's algorithm for huge n
    out_arr = np.empty(n, dtype=np.int64)
    picks = gen._words64(n) % np.arange(1, n + 1, dtype=np.uint64)
    for i, z in enumerate(picks.tolist()):
        out_arr[i] = out_arr[z]
        out_arr[z] = i
    return out_arr


# -- discrete and continuous distributions on double uniforms -------------------------------

def bernoulli_scalar(gen: Generator, n: int, p: float) -> np.ndarray:
    """``bernoulli_(p)`` with a float ``p``: ``u < p`` on double uniforms (bool)."""
    return unit_double(gen, n) < p


def bernoulli_tensor(gen: Generator, probs: np.ndarray) -> np.ndarray:
    """``bernoulli_(p_tensor)``: flat ``probs`` in fill order; double uniforms for float64
    probabilities, float uniforms otherwise (bool)."""
    if probs.dtype == _F64:
        return unit_double(gen, probs.size) < probs
    return unit_float(gen, probs.size) < probs.astype(_F32)


def exponential(gen: Generator, n: int, lambd: float) -> np.ndarray:
    """``exponential_(lambd)``: ``-1/lambd * log1p(-u)`` (float64; torch 2.13 measured)."""
    u = unit_double(gen, n)
    return (-1.0 / lambd) * libm(math.log1p, -u)


def is_low_float(dtype: np.dtype) -> bool:
    """float16 or bfloat16: sampled in float32 by torch, then rounded."""
    return dtype.name in ("float16", "bfloat16")


def to_dtype(values: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """Double samples in ``dtype`` as torch casts them: half precisions through float32."""
    if is_low_float(dtype):
        return values.astype(_F32).astype(dtype)
    return values.astype(dtype)


def _log_or_ninf(x: float) -> float:
    return math.log(x) if x > 0 else -math.inf


def geometric(gen: Generator, n: int, p: float) -> np.ndarray:
    """``geometric_(p)``: ``ceil(log(u) / log(1 - p))`` (float64)."""
    u = unit_double(gen, n)
    return np.ceil(libm(_log_or_ninf, u) / math.log(1.0 - p))


def cauchy(gen: Generator, n: int, median: float, sigma: float) -> np.ndarray:
    """``cauchy_(median, sigma)``: ``median + sigma * tan(pi * (u - 0.5))`` (float64)."""
    u = unit_double(gen, n)
    return fma64(libm(math.tan, math.pi * (u - 0.5)), sigma, median)


def log_normal(gen: Generator, n: int, mean: float, std: float) -> np.ndarray:
    """``log_normal_(mean, std)``: ``exp`` of torch's scalar normal (float64)."""
    z = fma64(_box_muller_double(gen, n), std, mean)
    return libm(_exp, z)


def _exp(x: float) -> float:
    try:
        return math.exp(x)
    except OverflowError:
        return math.inf


# -- poisson (sequential) ---------------------------------------------------------------------

def poisson(gen: Generator, rates: np.ndarray) -> np.ndarray:
    """torch's ``poisson`` on flat float64 ``rates`` (validated, non-negative): counts as
    float64, one rate after another (each rejection loop depends on the draws before)."""
    out = np.empty(rates.size, _F64)
    draws = _Uniforms(gen, rates.size)
    try:
        for i, lam in enumerate(rates.tolist()):
            out[i] = _poisson_one(draws, lam)
    finally:
        draws.close()
    return out


class _Uniforms:
    """Double uniforms drawn ahead in chunks; ``close`` gives back the ones not used."""

    __slots__ = ("gen", "snapshot", "buf", "i", "used", "chunk")

    def __init__(self, gen: Generator, expected: int) -> None:
        self.gen = gen
        self.snapshot = gen._snapshot()
        self.buf: list = []
        self.i = 0
        self.used = 0
        self.chunk = max(64, 3 * expected)

    def next(self) -> float:
        if self.i == len(self.buf):
            self.buf = unit_double(self.gen, self.chunk).tolist()
            self.i = 0
        self.i += 1
        self.used += 1
        return self.buf[self.i - 1]

    def close(self) -> None:
        self.gen._rewind(self.snapshot, 2 * self.used)


_INT64_MIN = -float(2 ** 63)


def _as_int64(k: float) -> float:
    """``static_cast<int64_t>(k)`` on x86: out of range or NaN gives int64's minimum."""
    if k != k or not -2.0 ** 63 <= k < 2.0 ** 63:
        return _INT64_MIN
    return float(int(k))


def _poisson_one(draws: _Uniforms, lam: float) -> float:
    if lam == 0:
        return 0.0
    if lam >= 10:
        return _as_int64(_poisson_rejection(draws, lam))
    enlam = math.exp(-lam)
    x, prod = 0, 1.0
    while True:
        prod *= draws.next()
        if prod > enlam:
            x += 1
        else:
            return float(x)


def _floor(x: float) -> float:
    return float(math.floor(x)) if math.isfinite(x) else x


def _poisson_rejection(draws: _Uniforms, lam: float) -> float:
    """Hoermann's transformed rejection (PTRS), in torch's operation order."""
    slam = math.sqrt(lam)
    loglam = math.log(lam)
    b = 0.931 + 2.53 * slam
    a = -0.059 + 0.02483 * b
    invalpha = 1.1239 + 1.1328 / (b - 3.4)
    vr = 0.9277 - 3.6224 / (b - 2)
    while True:
        u = draws.next() - 0.5
        v = draws.next()
        us = 0.5 - abs(u)
        k = _floor((2 * a / us + b) * u + lam + 0.43)
        if us >= 0.07 and v <= vr:
            return k
        if k < 0 or (us < 0.013 and v > us):
            continue
        if (_log_or_ninf(v) + math.log(invalpha) - math.log(a / (us * us) + b)
                <= -lam + k * loglam - math.lgamma(k + 1.0)):
            return k


# -- multinomial ---------------------------------------------------------------------------------

def multinomial_race(gen: Generator, probs: np.ndarray, n: int) -> np.ndarray:
    """Without replacement (or one sample): the ``n`` largest ``p / Exp(1)`` per row.

    ``probs`` is 2-D; the exponentials are drawn in its dtype, row after row."""
    q = to_dtype(exponential(gen, probs.size, 1.0), probs.dtype).reshape(probs.shape)
    with np.errstate(divide="ignore", invalid="ignore"):
        keys = probs / q
    if n == 1:
        return np.argmax(keys, axis=-1)[:, None]
    return np.argsort(-keys, axis=-1, kind="stable")[:, :n]


def multinomial_cdf(gen: Generator, probs: np.ndarray, n: int) -> np.ndarray:
    """With replacement: per row its normalised running sum (in the row's dtype, last entry
    set to 1), and for each of ``n`` double uniforms the first entry >= it."""
    cdf = np.cumsum(probs, axis=-1, dtype=probs.dtype)
    cdf = cdf / cdf[:, -1:]
    cdf[:, -1] = 1
    u = unit_double(gen, probs.shape[0] * n).reshape(probs.shape[0], n)
    cdf64 = cdf.astype(_F64)
    return np.stack([np.searchsorted(c, r, side="left") for c, r in zip(cdf64, u)])
