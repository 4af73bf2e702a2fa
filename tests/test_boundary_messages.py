"""Exact error types and texts, checked against torch, for wrong arguments to indexing, masking
and arithmetic ops (fuzz survey: wrong_message / wrong_exception_type)."""
from __future__ import annotations

import pytest

import npgrad

torch = pytest.importorskip("torch")


CASES = {
    "mul_str_input": lambda m: m.mul("a", m.ones(2)),
    "mul_none_input": lambda m: m.mul(None, m.ones(2)),
    "mul_list_other": lambda m: m.mul(m.ones(2), [1]),
    "mul_str_other": lambda m: m.mul(m.ones(2), "a"),
    "mul_missing": lambda m: m.mul(m.ones(2)),
    "mul_extra_positional": lambda m: m.mul(m.ones(2), m.ones(2), "a"),
    "mul_extra_keyword": lambda m: m.mul(m.ones(2), m.ones(2), bogus=1),
    "div_str_other": lambda m: m.div(m.ones(2), "a"),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_error_matches_torch(name):
    call = CASES[name]
    with pytest.raises(Exception) as expected:
        call(torch)
    with pytest.raises(Exception) as got:
        call(npgrad)
    assert isinstance(got.value, type(expected.value))
    assert str(got.value) == str(expected.value)


def test_mul_still_takes_numbers():
    assert npgrad.mul(npgrad.ones(2), 3).tolist() == [3.0, 3.0]
    assert npgrad.mul(npgrad.ones(2), npgrad.ones(2)).tolist() == [1.0, 1.0]
