"""The pointwise ops' checks before NumPy runs: dtypes, shapes, scalar ranges and dtypes torch
has no kernel for give torch's exceptions and texts (lerp, isclose, allclose, masked_fill,
where), and the values torch accepts give its values."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import npgrad

CALLS = [
    "m.lerp(m.ones(2,3).long(), m.ones(2,3), 0.5)",
    "m.lerp(m.ones(2,3), m.ones(2,3).long(), 0.5)",
    "m.lerp(m.ones(2,3), m.ones(2,3), m.ones(2,3).double())",
    "m.lerp(m.ones(2,3).bool(), m.ones(2,3), 0.5)",
    "m.lerp(m.ones(2,3).half(), m.ones(2,3), 0.5)",
    "m.lerp(m.ones(0,3), m.ones(2,3), 0.5)",
    "m.lerp(m.ones(2,3), m.ones(3), m.ones(4))",
    "m.lerp(m.ones(4), m.ones(2,3), m.ones(3))",
    "m.lerp(m.ones(3), m.ones(2,3), 0.5)",
    "m.lerp(m.ones(2,3).long(), m.ones(2,3).long(), 1)",
    "m.lerp(m.ones(2,3).long(), m.ones(2,3).long(), m.ones(2,3).long())",
    "m.lerp(m.ones(2,3), m.ones(2,3), 1e308)",
    "m.lerp(m.ones(2,3).double(), m.ones(2,3).double(), 1e308)",
    "m.lerp(m.ones(2,3), m.ones(2,3), float('inf'))",
    "m.lerp(m.ones(2,3), m.ones(2,3), m.tensor(0.5))",
    "m.lerp(m.ones(2,3), m.ones(2,3), m.tensor(0.5).double())",
    "m.lerp(m.ones(2,3), m.tensor(1.).double(), 0.5)",
    "m.isclose(m.ones(2,3).long(), m.ones(2,3))",
    "m.isclose(m.ones(0,3), m.ones(2,3))",
    "m.isclose(m.ones(2,3), m.ones(4))",
    "m.allclose(m.ones(2,3).bool(), m.ones(2,3))",
    "m.isclose(m.ones(2,3), m.ones(2,3).double())",
    "m.isclose(m.ones(2), m.ones(2), rtol=-1.)",
    "m.isclose(m.ones(2), m.ones(2), atol=-1e-9)",
    "m.isclose(m.ones(2), m.ones(2), atol=-2.25, rtol=-0.5)",
    "m.isclose(m.ones(2).long(), m.ones(2).long(), atol=-1.)",
    "m.masked_fill(m.ones(3), m.ones(2,4).bool(), 0.)",
    "m.masked_fill(m.ones(2,4), m.ones(3).bool(), 0.)",
    "m.masked_fill(m.ones(4), m.ones(2,4).bool(), 0.)",
    "m.masked_fill(m.ones(2,3).long(), m.ones(2,3).bool(), m.tensor(1., requires_grad=True))",
    "m.masked_fill(m.ones(2,3), m.ones(3).bool(), 1e308)",
    "m.masked_fill(m.ones(2,3).half(), m.ones(3).bool(), 1e10)",
    "m.masked_fill(m.ones(2,3).long(), m.ones(3).bool(), 1e308)",
    "m.masked_fill(m.ones(2,3).int(), m.ones(3).bool(), 3e9)",
    "m.masked_fill(m.ones(2,3).byte(), m.ones(3).bool(), 300)",
    "m.masked_fill(m.ones(2,3).byte(), m.ones(3).bool(), -1)",
    "m.masked_fill(m.ones(2,3), m.ones(3).bool(), float('inf'))",
    "m.masked_fill(m.ones(2,3).long(), m.ones(3).bool(), 1.5)",
    "m.where(m.ones(2,3).bool(), m.ones(2,3), 1e308)",
    "m.where(m.ones(2,3).bool(), m.ones(2,3), 3.5e38)",
    "m.where(m.ones(2,3).bool(), 1e308, m.ones(2,3))",
    "m.where(m.ones(2,3).bool(), m.ones(2,3).long(), 1e308)",
    "m.where(m.ones(2,3).bool(), m.ones(2,3), float('nan'))",
    "m.where(m.ones(2,3).bool(), m.ones(4), 0.)",
    # subtraction refuses any bool operand, a Python bool included
    "m.sub(m.ones(2).bool(), m.ones(2).bool())", "m.sub(m.ones(2).bool(), m.ones(2))",
    "m.sub(m.ones(2), m.ones(2).bool())", "m.sub(m.ones(2).bool(), 1)", "m.sub(m.ones(2), True)",
    "m.rsub(m.ones(2).bool(), 1.5)", "m.rsub(m.ones(2), m.ones(2).bool())",
    "m.rsub(m.ones(2).bool(), True)", "m.subtract(m.ones(2).bool(), m.ones(2))",
    "m.ones(2).bool() - m.ones(2).bool()", "m.ones(2).bool() - 1", "1 - m.ones(2).bool()",
    "True - m.ones(2)", "m.ones(2) - m.ones(2).bool()", "m.ones(2).long() - 1",
    # bitwise kernels name the result dtype they lack
    "m.bitwise_and(m.ones(2).long(), 1.5)", "m.bitwise_and(m.ones(2).half(), m.ones(2).half())",
    "m.bitwise_or(m.ones(2).long(), m.ones(2))", "m.bitwise_not(m.ones(2).double())",
    "m.bitwise_xor(m.ones(2).bool(), True)", "m.bitwise_and(m.ones(2).long(), m.ones(2).bool())",
]


def _outcome(m: object, call: str) -> tuple:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            r = eval(call, {"m": m})
        except Exception as e:  # noqa: BLE001 - the outcome is what is compared
            return (type(e).__name__, str(e))
    return ("ok", str(r.dtype).split(".")[-1], repr(np.asarray(r.tolist())))  # NaN == NaN


@pytest.mark.parametrize("call", CALLS)
def test_same_outcome_as_torch(call: str) -> None:
    torch = pytest.importorskip("torch")
    assert _outcome(npgrad, call) == _outcome(torch, call)


# torch 2.13's answers, for machines without torch
EXPECTED = {
    "m.lerp(m.ones(2,3).long(), m.ones(2,3), 0.5)":
        ("RuntimeError", "expected dtype long int for `end` but got dtype float"),
    "m.lerp(m.ones(2,3), m.ones(2,3), m.ones(2,3).double())":
        ("RuntimeError", "expected dtype float for `weight` but got dtype double"),
    "m.lerp(m.ones(2,3).long(), m.ones(2,3).long(), 1)":
        ("NotImplementedError", "\"lerp_kernel_scalar\" not implemented for 'Long'"),
    "m.lerp(m.ones(2,3), m.ones(2,3), 1e308)":
        ("RuntimeError", "value cannot be converted to type float without overflow"),
    "m.isclose(m.ones(2,3).long(), m.ones(2,3))": ("RuntimeError", "Long did not match Float"),
    "m.isclose(m.ones(2), m.ones(2), atol=-1e-9)":
        ("RuntimeError", "atol must be greater than or equal to zero, but got -1e-09"),
    "m.masked_fill(m.ones(3), m.ones(2,4).bool(), 0.)":
        ("RuntimeError", "The size of tensor a (4) must match the size of tensor b (3) at "
                         "non-singleton dimension 1"),
    "m.masked_fill(m.ones(2,3).half(), m.ones(3).bool(), 1e10)":
        ("RuntimeError", "value cannot be converted to type c10::Half without overflow"),
    "m.masked_fill(m.ones(2,3).byte(), m.ones(3).bool(), 300)":
        ("RuntimeError", "value cannot be converted to type uint8_t without overflow"),
}


@pytest.mark.parametrize("call", sorted(EXPECTED))
def test_torch_answers_without_torch(call: str) -> None:
    assert _outcome(npgrad, call) == EXPECTED[call]
