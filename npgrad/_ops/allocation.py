"""What torch checks before it allocates a tensor from user sizes, with torch's error texts.

Note [Sizes checked before allocating]
An op that allocates from sizes a user gave (``zeros(2, -1)``, ``x.repeat(2**62, 2)``,
``F.pad(x, (2**31, 2**31))``) must fail as torch fails, before NumPy is called: NumPy raises
its own ``ValueError``/``MemoryError`` texts, takes seconds to fail, or (a size product that
wraps) crashes the interpreter.  torch computes sizes in int64, so:
  * a size that wrapped past -2**62 cannot be a SymInt (``check_sym_ints``);
  * a negative size is refused with the sizes printed (``check_nonnegative``);
  * the size product times the item size must fit in int64 — computed without regard to a
    zero among the sizes, as torch's own product is (``check_storage``);
  * the allocation itself may fail: NumPy's MemoryError becomes torch's allocator error,
    naming the bytes asked for (``allocate``).
Views never allocate (``expand`` checks only the element count, ``check_numel``).
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

INT64_MAX = 2 ** 63 - 1
_U64 = 2 ** 64
_SYM_INT_MIN = -2 ** 62  # the most negative size a SymInt can hold


def wrap_int64(value: int) -> int:
    """``value`` as a C int64 holds it (two's complement wraparound)."""
    value %= _U64
    return value - _U64 if value > INT64_MAX else value


def sizes_str(sizes: Any) -> str:
    return "[" + ", ".join(str(int(s)) for s in sizes) + "]"


def check_sym_ints(sizes: tuple) -> None:
    for s in sizes:
        if s < _SYM_INT_MIN:
            raise RuntimeError(
                f"IntArrayRef contains an int that cannot be represented as a SymInt: {s}")


def check_nonnegative(sizes: tuple) -> None:
    for s in sizes:
        if s < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {s}: "
                               f"{sizes_str(sizes)}")


def _product_overflows(sizes: tuple, itemsize: int = 1) -> bool:
    """torch's unsigned size product: overflows once any partial product passes 2**64, even if
    a later size is zero; the total must also fit in int64."""
    total, overflow = 1, False
    for s in sizes:
        total *= s % _U64
        if total >= _U64:
            overflow = True
            total %= _U64
    total *= itemsize
    return overflow or total > INT64_MAX


def check_storage(sizes: tuple, itemsize: int) -> None:
    if _product_overflows(sizes, itemsize):
        raise RuntimeError(f"Storage size calculation overflowed with sizes={sizes_str(sizes)}")


def check_numel(sizes: tuple) -> None:
    """The element count of a view (``expand``): an int64 product, negatives read as unsigned."""
    if _product_overflows(sizes):
        raise RuntimeError("numel: integer multiplication overflow")


def check_new_sizes(sizes: tuple, dtype: Any) -> None:
    """All of torch's checks on the sizes of a tensor about to be allocated."""
    check_sym_ints(sizes)
    check_nonnegative(sizes)
    check_storage(sizes, np.dtype(dtype).itemsize)


def alloc_error(nbytes: int) -> RuntimeError:
    return RuntimeError(
        "[enforce fail at alloc_cpu.cpp:127] err == 0. DefaultCPUAllocator: can't allocate "
        f"memory: you tried to allocate {nbytes} bytes. Error code 12 (Cannot allocate memory)")


def allocate(make: Callable[..., np.ndarray], sizes: tuple, dtype: Any, *args: Any) -> np.ndarray:
    """``make(sizes, *args, dtype=dtype)`` (``np.zeros``, ``np.empty``, ...) after torch's size
    checks, with a failed allocation raised as torch raises it."""
    check_new_sizes(sizes, dtype)
    try:
        return make(sizes, *args, dtype=dtype)
    except MemoryError:
        raise alloc_error(int(np.prod(sizes, dtype=object)) * np.dtype(dtype).itemsize) from None


def guarded(sizes: tuple, dtype: Any, compute: Callable[[], np.ndarray]) -> np.ndarray:
    """Run ``compute`` (which allocates an array of ``sizes``) after torch's size checks."""
    check_new_sizes(sizes, dtype)
    try:
        return compute()
    except MemoryError:
        raise alloc_error(int(np.prod(sizes, dtype=object)) * np.dtype(dtype).itemsize) from None
