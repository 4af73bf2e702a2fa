"""Reductions and matrix products: the special cases that do not fit the op table.

The differentiable overloads (sum, mean, prod, amax/amin, max/min, var/std, logsumexp, norm,
cumsum, softmax/log_softmax, dot/mv/mm/bmm/outer/addmm/matmul) are rows of
``tests/op_table.py``, checked by ``tests/test_op_table.py`` (gradcheck, gradgradcheck, torch
values/dtypes/grad_fn/gradients, second-order gradients).  This file keeps the values and
dtypes of the non-differentiable reductions, the error texts, and what is (not) recorded.
"""
from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest

import npgrad

from torch_oracle import assert_same_error


# -- values and dtypes of the non-differentiable reductions ------------------------------------

VALUE_CASES = [
    ("argmax", lambda m, x: x.argmax()),
    ("argmax_dim", lambda m, x: m.argmax(x, 1)),
    ("argmax_keep", lambda m, x: x.argmax(1, keepdim=True)),
    ("argmax_none_keep", lambda m, x: x.argmax(None, True)),
    ("argmin_dim", lambda m, x: x.argmin(0)),
    ("all", lambda m, x: (x > 0).all()),
    ("all_dim", lambda m, x: m.all(x > 0, 1)),
    ("any_tuple", lambda m, x: (x > 2).any((0, 1))),
    ("all_empty_tuple", lambda m, x: (x > 0).all(())),
    ("any_keep", lambda m, x: x.any(0, keepdim=True)),
    ("sum_int", lambda m, x: x.long().sum()),
    ("sum_int32_dim", lambda m, x: x.int().sum(1)),
    ("sum_bool", lambda m, x: (x > 1).sum()),
    ("sum_int_to_float", lambda m, x: x.long().sum(dtype=m.float32)),
    ("prod_int", lambda m, x: x.long().prod(1)),
    ("cumsum_bool", lambda m, x: (x > 1).cumsum(1)),
    ("max_int", lambda m, x: x.long().max()),
    ("amax_int", lambda m, x: x.int().amax(0)),
    ("logsumexp_int", lambda m, x: x.long().logsumexp(1)),
    ("mean_int_dtype", lambda m, x: x.long().mean(dtype=m.float64)),
    ("mm_int", lambda m, x: m.mm(x.long(), x.long().t())),
    ("matmul_int_batch", lambda m, x: m.matmul(x.long().reshape(2, 1, 3), x.long().t())),
    ("outer_mixed", lambda m, x: m.outer(x.long()[0], x[1])),
    ("addmm_int_alpha", lambda m, x: m.addmm(x.long()[0, :2], x.long()[:, :2], x.long()[:, :2],
                                             alpha=1.5, beta=0.5)),
    ("sum_f16", lambda m, x: x.half().sum(1)),
    ("var_f16", lambda m, x: x.half().var()),
    ("norm_empty", lambda m, x: x[:0].norm()),
    ("prod_empty", lambda m, x: x[:0].prod(0)),
    ("logsumexp_empty", lambda m, x: x[:0].logsumexp((0, 1))),
    ("amax_empty_other_dim", lambda m, x: x[:0].amax(1)),
    ("argmax_empty_other_dim", lambda m, x: x[:0].argmax(1)),
    ("all_empty", lambda m, x: x[:0].all()),
    ("any_uint8", lambda m, x: x.byte().any(1)),
    ("argmax_nan", lambda m, x: m.where(x > 1, float("nan"), x).argmax(1)),
    ("max_nan", lambda m, x: m.where(x > 1, float("nan"), x).max()),
]


@pytest.mark.parametrize("case", VALUE_CASES, ids=lambda c: c[0])
def test_values_and_dtypes_match_torch(case: tuple) -> None:
    torch = pytest.importorskip("torch")
    data = np.array([[0.5, 3.0, 3.0], [2.0, -1.0, 2.0]])
    mine = case[1](npgrad, npgrad.tensor(data))
    theirs = case[1](torch, torch.tensor(data))
    assert str(mine.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1]
    assert mine._data.shape == tuple(theirs.shape)
    np.testing.assert_allclose(mine._data.astype(np.float64),
                               theirs.numpy().astype(np.float64), rtol=1e-3, equal_nan=True)


def test_max_with_dim_repr_and_fields() -> None:
    torch = pytest.importorskip("torch")
    data = np.array([[0.5, 3.0, 1.0], [2.0, -1.0, 2.5]])
    x = npgrad.tensor(data, requires_grad=True)
    tx = torch.tensor(data, requires_grad=True)
    for name in ("max", "min"):
        mine = getattr(x, name)(1)
        theirs = getattr(tx, name)(1)
        assert repr(mine) == repr(theirs).replace("torch.", "npgrad.")
        values, indices = mine
        assert values is mine.values and indices is mine.indices and mine[1] is indices
        assert isinstance(mine, tuple) and len(mine) == 2
        assert type(mine).__name__ == name


# -- errors -------------------------------------------------------------------------------------

ERRORS = [
    "x.sum(2)", "x.sum((0, 0))", "x.mean(-3)", "z.sum(1)",
    "i.mean()", "i.mean(0)", "b.mean()", "x.mean(dtype=m.int64)",
    "xg.sum(dtype=m.int64)", "xg.cumsum(0, dtype=m.int64)", "xg.prod(dtype=m.int64)",
    "e.amax()", "e.amax(0)", "e.amin()", "e.max()", "e.min(0)", "e.max(0)",
    "e.argmax()", "e.argmin(0)", "b.argmax()", "b.argmin(0)", "x.argmax(2)",
    "i.var()", "i.std(0)", "x.logsumexp(())",
    "i.norm()", "x.norm(dtype=m.int64)", "xd.norm(dtype=m.float32)",
    "x.norm('fro', (0, 1, 0))", "x.norm('abc')",
    "e.norm(float('inf'))", "e.norm(float('inf'), 0)", "e.norm(-float('inf'))",
    "i.softmax(0)", "i.softmax(1)", "b.softmax(0)", "i.log_softmax(1)", "i.log_softmax(0)",
    "x.softmax(2)", "x.cumsum(2)", "x.max(2)", "x.amax((1, 1))",
    "m.prod(x, (0, 1))", "m.max(x, (0, 1))", "m.cumsum(x, (0,))",
    # products
    "m.mm(x, x)", "m.mm(x, v3)", "m.mm(v3, x.t())", "m.mm(x, xd.t())", "m.mm(xd, x.t())",
    "m.mm(i, x)", "m.mm(b2, b2.t())",
    "m.bmm(x, x)", "m.bmm(x3, x3)", "m.bmm(x3, x3.transpose(1, 2)[:1])",
    "m.bmm(x3, xd3.transpose(1, 2))", "m.bmm(x3, x3.transpose(1, 2).unsqueeze(0))",
    "m.mv(x, v2)", "m.mv(x, x)", "m.mv(v3, v3)", "m.mv(x, vd3)",
    "m.dot(v3, v2)", "m.dot(v3, x)", "m.dot(x, v3)", "m.dot(v3, vd3)", "m.dot(b1, b1)",
    "m.outer(x, v2)", "m.outer(v3, z)",
    "m.addmm(v2, x, v3)", "m.addmm(v2, v3, x)", "m.addmm(v3, x, x.t())",
    "m.addmm(v2, xd, x.t())", "m.addmm(vd2, x, x.t())", "m.addmm(v2, x, x)",
    "m.addmm(x3, x, x.t())",
    "m.matmul(v3, v2)", "m.matmul(x, v2)", "m.matmul(v2, x.t())", "m.matmul(x, x)",
    "m.matmul(z, v3)", "m.matmul(v3, z)", "m.matmul(x, xd.t())", "m.matmul(v3, vd3)",
    "m.matmul(x, vd3)", "m.matmul(v3, xd.t())", "m.matmul(x3, xd3.transpose(1, 2))",
    "m.matmul(x3, xd.t())", "m.matmul(x3, x3)", "m.matmul(xg3, v2)",
    "m.matmul(xg3, x)", "m.matmul(x3, x4)", "m.matmul(xg, x3big)", "m.matmul(x, x3big)",
    "m.matmul(vg3, x3big)", "m.matmul(v3, x3big)", "m.matmul(xg, xd3big)",
    "m.matmul(xg3, xg3[:1])",
]


def _error_env(m: Any) -> dict:
    rng = np.random.default_rng(0)

    def t(shape: tuple, dtype: Any = np.float32, rg: bool = False) -> Any:
        return m.tensor(rng.standard_normal(shape).astype(dtype), requires_grad=rg)

    return {
        "m": m,
        "x": t((2, 3)), "xg": t((2, 3), rg=True), "xd": t((2, 3), np.float64),
        "x3": t((2, 2, 3)), "xg3": t((2, 2, 3), rg=True), "xd3": t((2, 2, 3), np.float64),
        "x4": t((3, 3, 3, 4)), "x3big": t((5, 2, 4)), "xd3big": t((5, 3, 4), np.float64),
        "v2": t((2,)), "v3": t((3,)), "vg3": t((3,), rg=True), "vd2": t((2,), np.float64),
        "vd3": t((3,), np.float64), "z": t(()),
        "e": m.zeros(0, 3), "i": m.tensor([[1, 2], [3, 4]]), "b": m.tensor([True, False]),
        "b1": m.tensor([True, False, True]), "b2": m.ones(2, 3, dtype=m.bool),
    }


@pytest.mark.parametrize("expr", ERRORS)
def test_errors_match_torch(expr: str) -> None:
    assert_same_error(expr, _error_env)


# -- recording: nothing when not needed, only what backward reads --------------------------------

def test_nothing_recorded_without_grad() -> None:
    x = npgrad.tensor(np.ones((2, 3)), requires_grad=True)
    with npgrad.no_grad():
        for out in (x.sum(), x.mean(1), x.max(1).values, x.softmax(1), x @ x.t(), x.norm(),
                    npgrad.addmm(x, x, x.t() @ x)):
            assert out.grad_fn is None and not out.requires_grad
    y = npgrad.tensor(np.ones((2, 3)))
    assert y.sum().grad_fn is None and (y @ y.t()).grad_fn is None


def test_mm_saves_only_what_backward_reads() -> None:
    a = npgrad.tensor(np.ones((2, 3)), requires_grad=True)
    b = npgrad.tensor(np.ones((3, 4)))
    node = npgrad.mm(a, b).grad_fn
    assert node._saved_mat2 is not None and node._saved_self is None
    assert node._saved_self_sym_strides == (3, 1) and node._saved_mat2_sym_strides == ()
    node = npgrad.mm(npgrad.tensor(np.ones((2, 3))), a.t()).grad_fn
    assert node._saved_self is not None and node._saved_mat2 is None
    assert node._saved_self_sym_strides == () and node._saved_mat2_sym_strides == (1, 3)
    s = npgrad.sum(a).grad_fn
    assert all(getattr(s, f, None) is None for f in ("self_", "result"))


def test_var_warns_like_torch_when_dof_is_not_positive() -> None:
    x = npgrad.tensor(np.ones((2, 1)))
    with pytest.warns(UserWarning, match="degrees of freedom is <= 0"):
        out = x.var(1)
    assert np.isnan(out._data).all()


def test_sum_to_reduced_then_reused_graph() -> None:
    """A reduction's output feeds a broadcasting op: the engine sums the gradient back."""
    x = npgrad.tensor(np.arange(6.0).reshape(2, 3), requires_grad=True)
    y = (x - x.mean(1, keepdim=True)) / x.std(1, keepdim=True)
    y.sum().backward()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        np.testing.assert_allclose(x.grad._data, np.zeros((2, 3)), atol=1e-12)
