"""npgrad.nn.utils against torch.nn.utils: clipping and parameter vectors."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import npgrad


def _model_with_grads(lib, scale=1.0):
    lib.manual_seed(0)
    w = lib.tensor([[3.0, -4.0], [1.0, 2.0]], requires_grad=True)
    b = lib.tensor([0.5, -0.5], requires_grad=True)
    unused = lib.tensor([1.0], requires_grad=True)
    x = lib.tensor([[1.0, 2.0], [-1.0, 0.5]])
    ((x @ w + b) ** 2).sum().mul(scale).backward()
    return [w, b, unused]


@pytest.mark.parametrize("max_norm,norm_type", [(1.0, 2.0), (100.0, 2.0), (2.0, 1), (0.5, "inf"),
                                                (3.0, float("inf"))])
def test_clip_grad_norm_matches_torch(max_norm, norm_type) -> None:
    torch = pytest.importorskip("torch")
    results = []
    for lib in (npgrad, torch):
        params = _model_with_grads(lib)
        total = lib.nn.utils.clip_grad_norm_(params, max_norm, norm_type=norm_type)
        results.append((float(total), [None if p.grad is None else p.grad.numpy().copy()
                                       for p in params], str(total.dtype).split(".")[-1]))
    (n_total, n_grads, n_dt), (t_total, t_grads, t_dt) = results
    assert n_dt == t_dt
    np.testing.assert_allclose(n_total, t_total, rtol=1e-6)
    for a, b in zip(n_grads, t_grads):
        assert (a is None) == (b is None)
        if a is not None:
            np.testing.assert_allclose(a, b, rtol=1e-6)


def test_clip_grad_norm_by_hand() -> None:
    """Hand-derived: gradients (3, 4) have norm 5; clipped to 1 they become (0.6, 0.8)."""
    w = npgrad.tensor([1.0, 1.0], requires_grad=True)
    (w * npgrad.tensor([3.0, 4.0])).sum().backward()
    total = npgrad.nn.utils.clip_grad_norm_(w, 1.0)
    assert float(total) == 5.0
    np.testing.assert_allclose(w.grad.numpy(), [3 / (5 + 1e-6), 4 / (5 + 1e-6)], rtol=1e-6)
    assert w.is_leaf and w.grad.grad_fn is None


def test_clip_grad_value_matches_torch() -> None:
    torch = pytest.importorskip("torch")
    grads = []
    for lib in (npgrad, torch):
        params = _model_with_grads(lib)
        assert lib.nn.utils.clip_grad_value_(params, 2.5) is None
        grads.append([None if p.grad is None else p.grad.numpy().copy() for p in params])
    for a, b in zip(*grads):
        assert (a is None) == (b is None)
        if a is not None:
            np.testing.assert_array_equal(a, b)


def _outcome(call):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            value = call()
            result = ("ok", None if value is None else float(value))
        except Exception as exc:  # noqa: BLE001 - the error is the result
            result = (type(exc).__name__, str(exc))
    return result, [(w.category.__name__, str(w.message)) for w in caught]


@pytest.mark.parametrize("case", range(5))
def test_edge_cases_match_torch(case: int) -> None:
    torch = pytest.importorskip("torch")

    def calls(lib):
        nan_param = lib.tensor([1.0], requires_grad=True)
        nan_param.grad = lib.tensor([float("nan")])
        return [
            lambda: lib.nn.utils.clip_grad_norm_((p for p in []), 1.0),
            lambda: lib.nn.utils.clip_grad_norm_([lib.ones(2, requires_grad=True)], 1.0),
            lambda: lib.nn.utils.clip_grad_norm_([nan_param], 1.0, error_if_nonfinite=True),
            lambda: lib.nn.utils.clip_grad_norm(_model_with_grads(lib), 1.0),
            lambda: lib.nn.utils.vector_to_parameters([1.0], []),
        ]

    assert _outcome(calls(npgrad)[case]) == _outcome(calls(torch)[case])


def test_parameters_to_vector_and_back() -> None:
    a = npgrad.arange(6.0).reshape(2, 3).requires_grad_()
    b = npgrad.tensor([7.0], requires_grad=True)
    vec = npgrad.nn.utils.parameters_to_vector([a, b])
    assert vec.tolist() == [0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 7.0]
    assert type(vec.grad_fn).__name__ == "CatBackward0"
    npgrad.nn.utils.vector_to_parameters(vec * 2, [a, b])
    assert a.tolist() == [[0.0, 2.0, 4.0], [6.0, 8.0, 10.0]] and b.tolist() == [14.0]
    assert a.is_leaf and a.requires_grad
