"""matmul records torch's chain of nodes (Note [How matmul is recorded] in npgrad/_ops/matmul.py):
the whole graph below ``(a @ b).grad_fn``, for every rank combination and requires_grad pattern,
is torch's, and the unrecorded product has the recorded one's values."""
from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import npgrad

CASES = [((3,), (3, 4)), ((2, 3), (3, 4)), ((5, 2, 3), (3, 4)), ((5, 2, 3), (5, 3, 4)),
         ((3,), (3,)), ((2, 3), (3,)), ((5, 2, 3), (3,)), ((3,), (5, 3, 4)), ((2, 3), (5, 3, 4)),
         ((2, 1, 2, 3), (1, 5, 3, 4)), ((4, 1, 2, 3), (5, 3, 4)), ((1, 2, 3), (3,)),
         ((0, 2, 3), (3, 4)), ((2, 3), (5, 3, 0)), ((3,), (2, 5, 3, 4)), ((2, 2, 3), (1, 3, 4)),
         ((1, 1, 3), (2, 3, 4)), ((1, 2, 3), (5, 3, 4)), ((2, 3), (5, 3, 1)),
         ((4, 5, 2, 3), (3, 4))]
REQUIRES = [(True, True), (True, False), (False, True)]


def chain(fn: Any) -> Any:
    """The graph below ``fn`` as nested (name, children) tuples; leaves' accumulators as 'Acc'."""
    if fn is None:
        return None
    name = fn.name()
    if name.endswith("AccumulateGrad"):
        return "Acc"
    return (name, tuple(chain(f) for f, _ in fn.next_functions))


def _pair(mod: Any, s1: tuple, s2: tuple, r1: bool, r2: bool) -> tuple:
    rng = np.random.default_rng(0)
    a = mod.tensor(rng.standard_normal(s1), requires_grad=r1)
    b = mod.tensor(rng.standard_normal(s2), requires_grad=r2)
    return a, b


@pytest.mark.parametrize("s1,s2", CASES, ids=[f"{a}@{b}" for a, b in CASES])
@pytest.mark.parametrize("r1,r2", REQUIRES, ids=["both", "first", "second"])
def test_matmul_records_torchs_chain(s1: tuple, s2: tuple, r1: bool, r2: bool) -> None:
    torch = pytest.importorskip("torch")
    a, b = _pair(npgrad, s1, s2, r1, r2)
    ta, tb = _pair(torch, s1, s2, r1, r2)
    ours, theirs = a @ b, ta @ tb
    assert chain(ours.grad_fn) == chain(theirs.grad_fn)
    assert ours._is_view() == theirs._is_view()
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=1e-12,
                               atol=1e-12)
    w = np.random.default_rng(1).standard_normal(tuple(ours.shape))
    ours.backward(npgrad.tensor(w))
    theirs.backward(torch.tensor(w))
    for mine, ref in ((a, ta), (b, tb)):
        if ref.grad is None:
            assert mine.grad is None
        else:
            np.testing.assert_allclose(mine.grad.numpy(), ref.grad.numpy(), rtol=1e-12,
                                       atol=1e-12)


def test_the_chain_of_a_batch_times_a_matrix() -> None:
    """The case the issue names, spelled out: (y @ w).grad_fn.next_functions."""
    y = npgrad.randn(5, 2, 3, requires_grad=True)
    w = npgrad.randn(3, 4, requires_grad=True)
    assert chain((y @ w).grad_fn) == (
        "UnsafeViewBackward0", (("MmBackward0", (("ViewBackward0", ("Acc",)), "Acc")),))


@pytest.mark.parametrize("s1,s2", CASES, ids=[f"{a}@{b}" for a, b in CASES])
def test_unrecorded_product_matches_the_recorded_one(s1: tuple, s2: tuple) -> None:
    a, b = _pair(npgrad, s1, s2, True, True)
    recorded = a @ b
    with npgrad.no_grad():
        plain = a @ b
    assert plain.grad_fn is None and not plain.requires_grad
    assert plain.shape == recorded.shape and plain.is_contiguous()
    np.testing.assert_allclose(plain.numpy(), recorded.detach().numpy(), rtol=1e-13, atol=1e-13)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_two_element_dot_is_torchs_to_the_last_bit(dtype):
    """Note [A two-element dot product]: whatever kernel NumPy's BLAS picks on this CPU."""
    torch = pytest.importorskip("torch")
    pairs = np.random.default_rng(7).standard_normal((500, 2, 2)).astype(dtype)
    ours = [npgrad.dot(npgrad.from_numpy(a), npgrad.from_numpy(b)).item() for a, b in pairs]
    theirs = [torch.dot(torch.from_numpy(a), torch.from_numpy(b)).item() for a, b in pairs]
    assert ours == theirs
