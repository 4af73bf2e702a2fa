"""Sizes checked before allocating (Note [Sizes checked before allocating] in
npgrad/_ops/allocation.py): negative, wrapped, overflowing and unallocatable sizes fail as in
torch 2.13, with its exception type and text, before NumPy is called.

Every size here is refused by torch on any machine: the allocation failures ask for at least
2**46 bytes, more than a 64-bit process can map."""
from __future__ import annotations

from typing import Any

import pytest

import npgrad
from npgrad._ops import allocation

from torch_oracle import assert_same_error

pytest.importorskip("torch")


def _env(m: Any) -> dict:
    return {"m": m, "F": m.nn.functional, "x": m.ones(2, 3)}


CASES = {
    # repeat / tile: int64 sizes, the SymInt range, negatives, the storage size, the allocator
    "repeat_wraps_past_symint": "x.repeat(2**62, 2**62)",
    "repeat_wraps_negative": "x.repeat(3, 2**62)",
    "repeat_storage_overflow": "x.repeat(2**40, 2**20)",
    "repeat_storage_overflow_2": "x.repeat(2**32, 2**32)",
    "repeat_negative": "x.repeat(-1, 2)",
    "repeat_unallocatable": "x.repeat(2**44, 1)",
    "tile_wraps_past_symint": "m.tile(x, (2**62, 2**62))",
    "tile_storage_overflow": "m.tile(x, (2**33, 2**31))",
    # tensor_split
    "tensor_split_float": "m.tensor_split(x, 1e308)",
    "tensor_split_float_method": "x.tensor_split(2.0)",
    "tensor_split_too_many": "m.tensor_split(x, 2**60)",
    "tensor_split_too_many_2": "m.tensor_split(x, 2**62)",
    # constant padding
    "pad_unallocatable": "F.pad(x, (2**44, 2**44), value=1.0)",
    "pad_unallocatable_tensor_value": "F.pad(x, (2**44, 2**44), value=m.tensor(1.))",
    "pad_wraps_negative": "F.pad(x, (2**62, 2**62))",
    "pad_wraps_negative_leading_dim": "F.pad(x, (1, 1, 2**62, 2**62))",
    "pad_wraps_negative_max": "F.pad(x, (2**63 - 1, 1))",
    "pad_storage_overflow": "F.pad(x, (2**62, 0))",
    "pad_storage_overflow_2d": "F.pad(x, (1, 2**40, 2, 2**30))",
    # views and repeat_interleave
    "expand_numel_overflow": "m.ones(1, 1).expand(2**62, 2**62)",
    "expand_numel_overflow_2": "m.ones(1).expand(2**40, 2**30)",
    "expand_negative": "m.ones(1, 1).expand(-2, 3)",
    "repeat_interleave_numel_overflow": "x.repeat_interleave(2**62)",
    "repeat_interleave_unallocatable": "x.repeat_interleave(2**44)",
    # factories
    "empty_negative": "m.empty((2, -1))",
    "empty_negative_args": "m.empty(2, -1)",
    "zeros_negative": "m.zeros(2, -1)",
    "zeros_negative_1d": "m.zeros(-1)",
    "ones_negative": "m.ones(3, -2)",
    "full_negative": "m.full((2, -1), 1.)",
    "rand_negative": "m.rand(2, -1)",
    "randn_negative": "m.randn(-1)",
    "new_zeros_negative": "x.new_zeros(2, -1)",
    "new_empty_negative": "x.new_empty(-3)",
    "new_full_negative": "x.new_full((2, -1), 1.)",
    "new_ones_negative": "x.new_ones(-3)",
    "zeros_storage_overflow": "m.zeros(2**40, 2**30)",
    "zeros_storage_overflow_int8": "m.zeros(2**61, 4, dtype=m.int8)",
    "zeros_storage_overflow_zero_later": "m.zeros(2**62, 2**62, 0)",
    "full_storage_overflow": "m.full((2**40, 2**30), 1.)",
    "rand_storage_overflow": "m.rand(2**62, 4)",
    "randn_storage_overflow": "m.randn(2**40, 2**30)",
    "new_empty_storage_overflow": "x.new_empty((2**40, 2**30))",
    "new_full_storage_overflow": "x.new_full((2**40, 2**30), 2.)",
    "zeros_unallocatable": "m.zeros(2**45)",
    "ones_unallocatable": "m.ones(2**45)",
    "empty_unallocatable": "m.empty(2**45)",
    "full_unallocatable": "m.full((2**45,), 3.)",
    "linspace_storage_overflow": "m.linspace(0, 1, 2**62)",
    "linspace_negative": "m.linspace(0, 1, -1)",
    "eye_numel_overflow": "m.eye(2**40)",
    "arange_storage_overflow": "m.arange(0, 2**62)",
    "arange_invalid_size": "m.arange(0, 1e300, 1e-300)",
    # reshapes that cannot fit (never allocated)
    "view_too_big": "x.view(2**62, 2**62)",
    "reshape_too_big": "x.reshape(2**62, -1)",
    "unfold_too_big": "x.unfold(1, 2**62, 1)",
}


@pytest.mark.parametrize("case", list(CASES))
def test_fails_as_torch_fails(case: str) -> None:
    assert_same_error(CASES[case], _env)


def test_sizes_that_fit_still_work() -> None:
    x = npgrad.ones(2, 3)
    assert x.repeat(2, 1, 2).shape == (2, 2, 6)
    assert npgrad.tile(x, (0, 2)).shape == (0, 6)
    assert npgrad.zeros(0, 5).shape == (0, 5)
    assert npgrad.nn.functional.pad(x, (1, 2)).shape == (2, 6)
    assert npgrad.nn.functional.pad(x, (-1, 0)).shape == (2, 2)
    assert [t.shape[0] for t in npgrad.tensor_split(npgrad.arange(5), 7)] == [1] * 5 + [0] * 2
    assert npgrad.ones(1, 1).expand(2 ** 20, 2 ** 20).shape == (2 ** 20, 2 ** 20)


def test_repeat_keeps_its_gradient() -> None:
    x = npgrad.tensor([[1., 2.]], dtype=npgrad.float64, requires_grad=True)
    assert npgrad.autograd.gradcheck(lambda t: t.repeat(2, 3), (x,))
    assert npgrad.autograd.gradcheck(lambda t: npgrad.nn.functional.pad(t, (1, 2), value=3.),
                                     (x,))


def test_the_storage_product_as_torch_computes_it() -> None:
    # overflowing partial products count even when a later size is zero
    assert allocation._product_overflows((2 ** 62, 2 ** 62, 0))
    assert not allocation._product_overflows((0, 2 ** 62))
    assert allocation._product_overflows((2 ** 61, 4))  # 2**63 does not fit in int64
    assert not allocation._product_overflows((2 ** 61, 3))
    assert allocation._product_overflows((2 ** 61, 1), itemsize=4)
    assert allocation.wrap_int64(2 ** 63) == -2 ** 63
    assert allocation.wrap_int64(3 * 2 ** 62) == -2 ** 62
    assert allocation.wrap_int64(-5) == -5


def test_no_numpy_error_escapes() -> None:
    # the NumPy call is never reached: its own exceptions would be ValueError / MemoryError
    for expr in ("x.repeat(2**62, 2**62)", "m.empty((2, -1))", "m.zeros(2**45)",
                 "F.pad(x, (2**44, 2**44))"):
        with pytest.raises(RuntimeError):
            eval(expr, {}, _env(npgrad))
