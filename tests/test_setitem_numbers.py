"""``t[i] = number`` converts the number as torch's setitem does (Note [A number written into
a tensor] in npgrad/_ops/indexing.py): no silent wrap of 300 into an int8, torch's errors for
numbers a dtype cannot hold, and the NumPy scalar types torch takes or refuses."""
from __future__ import annotations

import numpy as np
import pytest

import npgrad

DTYPES = ["float32", "float64", "float16", "int8", "int32", "int64", "uint8", "bool",
          "complex64", "complex128"]
NUMBERS = [1e300, 300, -1, float("inf"), float("nan"), 2 ** 70, 2 ** 63, -2 ** 63, 2 - 4j,
           complex(2, 0), complex(300, 0), complex(1, 1e300), True, 2.5, np.int8(3),
           np.int64(300), np.uint64(2 ** 64 - 1), np.bool_(True), np.float16(2.5),
           np.float32(2.5), np.float64(1e300), np.complex128(2 + 1j), np.complex64(1j)]


def _write(m, dtype, number, index):
    t = m.zeros(3, dtype=getattr(m, dtype))
    try:
        t[index] = number
    except Exception as e:  # noqa: BLE001 - the outcome under test
        return type(e).__name__, str(e)
    return "ok", [str(x) for x in t.tolist()]


@pytest.mark.parametrize("index", [1, slice(1, None)])
@pytest.mark.parametrize("dtype", DTYPES)
def test_numbers_written_as_torch_writes_them(dtype, index):
    torch = pytest.importorskip("torch")
    for number in NUMBERS:
        assert _write(npgrad, dtype, number, index) == _write(torch, dtype, number, index), \
            (dtype, number)


def test_a_number_outside_an_integer_dtype_is_refused_not_wrapped():
    t = npgrad.zeros(3, dtype=npgrad.int8)
    with pytest.raises(RuntimeError) as info:
        t[1] = 300
    assert str(info.value) == "value cannot be converted to type int8_t without overflow"
    assert t.tolist() == [0, 0, 0]
    with pytest.raises(ValueError, match="^Overflow when unpacking long long$"):
        t[1] = 2 ** 70
    t[1] = -1.5  # a float in range truncates toward zero
    assert t.tolist() == [0, -1, 0]


def test_a_complex_number_fits_a_real_tensor_only_without_an_imaginary_part():
    t = npgrad.zeros(2, dtype=npgrad.float16)
    t[0] = complex(2, 0)
    assert t.tolist() == [2.0, 0.0]
    with pytest.raises(RuntimeError, match="^value cannot be converted to type double without"):
        t[1] = 2 - 4j
    c = npgrad.zeros(2, dtype=npgrad.complex128)
    c[1] = 2 - 4j
    assert c.tolist() == [0j, 2 - 4j]


FILL_NUMBERS = [-255, -256, -255.0, -0.5, -0.0, 255.5, 255.0, 127.5, -128.5, -129, 9.3e18,
                -9.3e18, 2.0 ** 63, 2 ** 63 - 1, -2 ** 63, 2 ** 31, float("inf"), float("nan"),
                -65535, -65536]


@pytest.mark.parametrize("dtype", ["uint8", "int8", "int16", "int32", "int64"])
def test_fill_takes_the_numbers_torch_takes(dtype):
    """An unsigned type takes a negative int down to minus its largest value, no negative
    float; a float must lie in the range compared in double (Note [A number written...])."""
    torch = pytest.importorskip("torch")
    for number in FILL_NUMBERS:
        outcomes = []
        for m in (npgrad, torch):
            t = m.zeros(2, dtype=getattr(m, dtype))
            try:
                outcomes.append(t.fill_(number).tolist())
            except RuntimeError as e:
                outcomes.append(str(e))
        assert outcomes[0] == outcomes[1], (dtype, number)


def test_unsigned_fill_wraps_small_negative_ints_and_refuses_negative_floats():
    t = npgrad.zeros(2, dtype=npgrad.uint8)
    assert t.fill_(-255).tolist() == [1, 1]
    for number in (-256, -0.5):
        with pytest.raises(RuntimeError, match="^value cannot be converted to type uint8_t"):
            t.fill_(number)
