"""Sorting, scans, counting and the other ops of the [sorting] family: what the op table cannot check.

The differentiable overloads are rows of ``tests/op_rows_sorting.py``.  This file checks
indices and other integer results (tie-breaking included), ``unique``/``bincount``/``histc``/
``logspace``, the named-tuple return types and their reprs, the loss modules' reprs, and the
error texts, against torch where it is installed and against hand-derived values where not.
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

import npgrad

from torch_oracle import assert_same_error

NAN = float("nan")


# -- hand-derived values (no torch needed) -------------------------------------------------------

def test_sort_is_stable_and_nan_is_largest() -> None:
    x = npgrad.tensor([3.0, 1.0, 2.0, 1.0, NAN, 3.0])
    values, indices = x.sort()
    assert indices.tolist() == [1, 3, 2, 0, 5, 4]
    assert values[:5].tolist() == [1.0, 1.0, 2.0, 3.0, 3.0] and math.isnan(values[5].item())
    assert x.sort(descending=True).indices.tolist() == [4, 0, 5, 2, 1, 3]
    assert npgrad.argsort(x, descending=True).tolist() == [4, 0, 5, 2, 1, 3]
    assert x.argsort(stable=True).tolist() == [1, 3, 2, 0, 5, 4]


def test_selection_values() -> None:
    x = npgrad.tensor([[4.0, 1.0, 3.0, 2.0], [0.0, -1.0, 5.0, 7.0]])
    assert x.topk(2).values.tolist() == [[4.0, 3.0], [7.0, 5.0]]
    assert x.topk(2).indices.tolist() == [[0, 2], [3, 2]]
    assert x.topk(1, largest=False).indices.tolist() == [[1], [1]]
    assert x.kthvalue(2).values.tolist() == [2.0, 0.0]
    assert x.median().item() == 2.0  # the lower of the two middle elements
    assert x.median(1).indices.tolist() == [3, 0]
    assert npgrad.nanmedian(npgrad.tensor([NAN, 1.0, 5.0, 2.0])).item() == 2.0
    assert math.isnan(npgrad.median(npgrad.tensor([NAN, 1.0, 5.0])).item())
    mode = npgrad.tensor([2.0, 1.0, 2.0, 1.0, 3.0]).mode()
    assert (mode.values.item(), mode.indices.item()) == (1.0, 3)


def test_scans_values() -> None:
    x = npgrad.tensor([1.0, 3.0, 3.0, 2.0, NAN, 7.0])
    values, indices = x.cummax(0)
    assert indices.tolist() == [0, 1, 2, 2, 4, 4]
    assert values[:4].tolist() == [1.0, 3.0, 3.0, 3.0]
    assert npgrad.tensor([2, 2, 1, 1]).cummin(0).indices.tolist() == [0, 1, 2, 3]
    assert npgrad.tensor([1, 2, 3]).cumprod(0).tolist() == [1, 2, 6]
    assert npgrad.tensor([1, 2, 3]).cumprod(0).dtype == npgrad.int64
    np.testing.assert_allclose(npgrad.tensor([0.0, 0.0]).logcumsumexp(0).numpy(),
                               [0.0, math.log(2.0)])


def test_cumprod_gradient_with_zeros_by_hand() -> None:
    x = npgrad.tensor([2.0, 0.0, 3.0], requires_grad=True)
    x.cumprod(0).sum().backward()
    # out = (x0, x0 x1, x0 x1 x2): d/dx1 = x0 + x0 x2 = 2 + 6
    assert x.grad.tolist() == [1.0, 8.0, 0.0]


def test_unique_bincount_histc_logspace() -> None:
    x = npgrad.tensor([3, 1, 2, 1, 3, 3])
    values, inverse, counts = npgrad.unique(x, return_inverse=True, return_counts=True)
    assert values.tolist() == [1, 2, 3] and inverse.tolist() == [2, 0, 1, 0, 2, 2]
    assert counts.tolist() == [2, 1, 3]
    rows = npgrad.unique(npgrad.tensor([[1, 2], [1, 2], [0, 5]]), dim=0)
    assert rows.tolist() == [[0, 5], [1, 2]]
    assert npgrad.bincount(x, minlength=5).tolist() == [0, 2, 1, 3, 0]
    assert npgrad.bincount(x, weights=npgrad.ones(6) * 0.5).tolist() == [0.0, 1.0, 0.5, 1.5]
    hist = npgrad.histc(npgrad.tensor([0.0, 0.5, 1.0, 2.0, -1.0]), bins=2, min=0, max=1)
    assert hist.tolist() == [1.0, 2.0]
    assert npgrad.logspace(0, 2, 3).tolist() == [1.0, 10.0, 100.0]
    assert npgrad.logspace(0, 2, 3, base=2, dtype=npgrad.int64).tolist() == [1, 2, 4]


def test_var_mean_and_aminmax_share_one_node() -> None:
    x = npgrad.tensor([[1.0, 2.0], [3.0, 6.0]], requires_grad=True)
    v, m = npgrad.var_mean(x, 1)
    assert v.grad_fn is m.grad_fn and v.tolist() == [0.5, 4.5] and m.tolist() == [1.5, 4.5]
    pair = x.aminmax()
    assert pair.min.item() == 1.0 and pair.max.item() == 6.0
    assert pair.min.grad_fn is pair.max.grad_fn


def test_einsum_values() -> None:
    a = npgrad.tensor([[1.0, 2.0], [3.0, 4.0]])
    assert npgrad.einsum("ii", a).item() == 5.0
    assert npgrad.einsum("ij->j", a).tolist() == [4.0, 6.0]
    assert npgrad.einsum("ij,ij->", a, a).item() == 30.0


def test_unique_is_recorded_but_not_differentiable() -> None:
    x = npgrad.tensor([2.0, 1.0], requires_grad=True)
    u = npgrad.unique(x)
    assert u.grad_fn.name() == "Unique2Backward0"
    with pytest.raises(NotImplementedError, match="the derivative for '_unique2' is not"):
        u.sum().backward()


def test_nothing_recorded_without_grad() -> None:
    x = npgrad.tensor([[3.0, 1.0], [2.0, 5.0]], requires_grad=True)
    with npgrad.no_grad():
        for out in (x.sort().values, x.topk(1).values, x.median(), x.cumprod(1),
                    x.cummax(0).values, npgrad.var_mean(x)[0], npgrad.quantile(x, 0.5),
                    npgrad.einsum("ij,jk", x, x), x.nansum()):
            assert out.grad_fn is None and not out.requires_grad


# -- against torch ------------------------------------------------------------------------------

DATA = np.array([[0.5, 3.0, -1.0, 3.0, 2.0], [2.0, NAN, 2.0, 0.0, 7.0], [1.0, 1.0, 1.0, 4.0, 4.0]])

INT_CASES = [
    ("sort_indices", lambda m, x: x.sort(1).indices),
    ("sort_desc_indices", lambda m, x: x.sort(1, descending=True).indices),
    ("sort_dim0_indices", lambda m, x: m.sort(x, dim=0, stable=True).indices),
    ("argsort", lambda m, x: x.argsort(1)),
    ("argsort_desc", lambda m, x: m.argsort(x, 0, descending=True)),
    ("topk_no_ties", lambda m, x: x[:, :3].topk(2).indices),
    ("kthvalue_no_ties", lambda m, x: x[:1, :3].kthvalue(2, 1).indices),
    ("median_dim_nan", lambda m, x: x[:2, :3].nanmedian(1).indices),
    ("mode", lambda m, x: x[[0, 2]].mode(1).indices),  # (torch's mode is erratic with NaN)
    ("mode_values", lambda m, x: x[[0, 2]].mode(1).values),
    ("mode_dim0", lambda m, x: m.mode(x[[0, 2]], 0).indices),
    ("cummax", lambda m, x: x.cummax(1).indices),
    ("cummin_dim0", lambda m, x: x.cummin(0).indices),
    ("count_nonzero", lambda m, x: m.count_nonzero(x - 1, 1)),
    ("count_nonzero_all", lambda m, x: (x - 1).count_nonzero()),
    ("unique", lambda m, x: m.unique(x[2])),
    ("unique_inverse", lambda m, x: m.unique(x[2].long(), return_inverse=True)[1]),
    ("unique_counts", lambda m, x: x[2].unique(return_counts=True)[1]),
    ("unique_dim", lambda m, x: m.unique(x.long()[:, :2], dim=1)),
    ("bincount", lambda m, x: m.bincount(x[2].long())),
    ("bincount_weights", lambda m, x: m.bincount(x[2].long(), x[0])),
    ("bincount_int_weights", lambda m, x: m.bincount(x[2].long(), x[2].int())),
    ("histc", lambda m, x: m.histc(x[0], bins=4, min=-1, max=3)),
    ("histc_auto", lambda m, x: x[2].histc(3)),
    ("logspace", lambda m, x: m.logspace(-1, 1, 4)),
    ("logspace_f64_base", lambda m, x: m.logspace(0, 3, 4, base=2.0, dtype=m.float64)),
    ("nansum_int", lambda m, x: m.nansum(x[2].int())),
    ("nansum_nan", lambda m, x: x.nansum(1)),
    ("nanmean_nan", lambda m, x: x.nanmean(0)),
    ("median_nan", lambda m, x: x.median(1).values),
    ("nanmedian_nan", lambda m, x: x.nanmedian()),
    ("quantile_nan", lambda m, x: m.quantile(x, 0.5, dim=1)),
    ("nanquantile_nan", lambda m, x: m.nanquantile(x, 0.5, dim=1)),
    ("cumprod_int", lambda m, x: x[2].long().cumprod(0)),
    ("cumprod_bool", lambda m, x: (x[2] > 0).cumprod(0)),
    ("cummax_bool", lambda m, x: (x[0] > 1).cummax(0).values),
]


def _compare(mine: Any, theirs: Any) -> None:
    assert str(mine.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1]
    assert tuple(mine.shape) == tuple(theirs.shape)
    np.testing.assert_allclose(mine.numpy().astype(np.float64),
                               theirs.numpy().astype(np.float64), rtol=1e-6, equal_nan=True)


@pytest.mark.parametrize("case", INT_CASES, ids=lambda c: c[0])
def test_values_match_torch(case: tuple) -> None:
    torch = pytest.importorskip("torch")
    _compare(case[1](npgrad, npgrad.tensor(DATA)), case[1](torch, torch.tensor(DATA)))


@pytest.mark.parametrize("name,call", [
    ("sort", lambda m, x: x.sort(1)), ("topk", lambda m, x: x.topk(2)),
    ("kthvalue", lambda m, x: x.kthvalue(2, 0)), ("median", lambda m, x: x.median(1)),
    ("nanmedian", lambda m, x: m.nanmedian(x, 0, True)), ("mode", lambda m, x: x.mode(1)),
    ("cummax", lambda m, x: x.cummax(1)), ("cummin", lambda m, x: m.cummin(x, 0)),
    ("aminmax", lambda m, x: m.aminmax(x, dim=1)),
])
def test_return_types_match_torch(name: str, call: Any) -> None:
    torch = pytest.importorskip("torch")
    data = np.array([[0.5, 3.0, -1.0], [2.0, 0.0, 7.0]])
    mine = call(npgrad, npgrad.tensor(data, requires_grad=True))
    theirs = call(torch, torch.tensor(data, requires_grad=True))
    assert type(mine).__name__ == type(theirs).__name__ == name
    assert repr(mine) == repr(theirs).replace("torch.", "npgrad.")
    assert isinstance(mine, tuple) and len(mine) == 2 and mine[0] is tuple(mine)[0]
    fields = ("min", "max") if name == "aminmax" else ("values", "indices")
    assert getattr(mine, fields[0]) is mine[0] and getattr(mine, fields[1]) is mine[1]


def test_plain_tuples_match_torch() -> None:
    torch = pytest.importorskip("torch")
    for m in (npgrad, torch):
        x = m.tensor([[1.0, 2.0], [4.0, 8.0]])
        assert type(m.var_mean(x)) is tuple and type(m.std_mean(x, 0)) is tuple
        assert type(m.unique(x, return_counts=True)) is tuple


@pytest.mark.parametrize("make", [
    lambda m: m.nn.KLDivLoss(), lambda m: m.nn.KLDivLoss(reduction="batchmean", log_target=True),
    lambda m: m.nn.MarginRankingLoss(0.5), lambda m: m.nn.HingeEmbeddingLoss(),
    lambda m: m.nn.SoftMarginLoss(), lambda m: m.nn.CosineEmbeddingLoss(),
    lambda m: m.nn.TripletMarginLoss(swap=True), lambda m: m.nn.PoissonNLLLoss(full=True),
    lambda m: m.nn.GaussianNLLLoss(eps=0.1),
])
def test_loss_modules_match_torch(make: Any) -> None:
    torch = pytest.importorskip("torch")
    mine, theirs = make(npgrad), make(torch)
    assert repr(mine) == repr(theirs)
    for attr in ("reduction", "margin", "p", "eps", "swap", "log_input", "full", "log_target"):
        assert getattr(mine, attr, None) == getattr(theirs, attr, None)


def test_kl_div_mean_warns_like_torch() -> None:
    with pytest.warns(UserWarning, match="reduction: 'mean' divides the total loss"):
        npgrad.nn.functional.kl_div(npgrad.zeros(2), npgrad.ones(2))


def test_cross_without_dim_warns() -> None:
    with pytest.warns(UserWarning, match="Using torch.cross without specifying the dim"):
        out = npgrad.cross(npgrad.eye(3), npgrad.ones(3, 3))
    assert tuple(out.shape) == (3, 3)


# -- errors -------------------------------------------------------------------------------------

ERRORS = [
    "x.sort(2)", "x.topk(4)", "x.topk(-1)", "x.kthvalue(0)",
    "x.kthvalue(4)", "m.median(e, 0)", "x.mode(3)", "x.cumprod(2)", "i.logcumsumexp(0)",
    "m.nanmean(i)", "m.aminmax(e)", "m.aminmax(e, dim=0)", "m.aminmax(x, dim=(0, 1))",
    "m.var_mean(i)", "m.quantile(x, 1.5)", "m.quantile(i, 0.5)", "m.quantile(x, q2)",
    "m.quantile(x, 0.5, interpolation='foo')", "m.quantile(e, 0.5)", "m.quantile(x, qd)",
    "m.bincount(m.tensor([-1]))", "m.bincount(i)", "m.bincount(x[0])", "m.histc(i)",
    "m.histc(x, -1)", "m.histc(x, 3, min=2, max=1)",
    "m.dist(x, v2)", "m.dist(x, 1.0)", "m.cdist(v3, x)", "m.cdist(x, x.t())",
    "m.linalg.cross(x, x.t())", "m.cross(x3, x3, dim=0)", "m.linalg.cross(x3, v3)",
    "m.addmv(v2, x, v2)", "m.addr(x, x, v3)", "m.baddbmm(x3, x3, m.zeros(2, 4, 3))", "m.std_mean(i, 0)",
    "m.einsum('ij,jk->ik', x)", "m.einsum('ij->ik', x)", "m.einsum('ij,jk->ik', x, x)",
    "m.einsum('ijk->ij', x)", "m.einsum('ii->i', x)", "m.einsum('i', x, x)",
    "m.einsum('ij->ii', x)", "m.einsum('i1', x)", "m.einsum('...ijk', v3)",
    "F.kl_div(x, x, reduction='bad')", "F.triplet_margin_loss(x, x, x, margin=0)",
    "F.triplet_margin_loss(x, x, v3)", "F.cosine_embedding_loss(x, x, x)",
    "F.cosine_embedding_loss(x, x3, v2)", "F.margin_ranking_loss(v3, v3, x)",
    "F.gaussian_nll_loss(x, x, -1.)", "F.gaussian_nll_loss(x, x, v2)",
    "F.hinge_embedding_loss(x, x, reduction='bad')", "F.soft_margin_loss(x, xg)",
    "F.poisson_nll_loss(x, x, reduction='bad')", "m.nn.TripletMarginLoss(margin=0)",
]


def _error_env(m: Any) -> dict:
    rng = np.random.default_rng(0)

    def t(shape: tuple, dtype: Any = np.float32, rg: bool = False) -> Any:
        return m.tensor(rng.standard_normal(shape).astype(dtype), requires_grad=rg)

    return {
        "m": m, "F": m.nn.functional,
        "x": t((2, 3)), "xg": t((2, 3), rg=True), "x3": t((2, 3, 3)), "v2": t((2,)),
        "v3": t((3,)), "e": m.zeros(0, 3), "i": m.tensor([[1, 2], [3, 4]]),
        "q2": m.tensor([[0.5]]), "qd": m.tensor([0.5], dtype=m.float64),
    }


@pytest.mark.parametrize("expr", ERRORS)
def test_errors_match_torch(expr: str) -> None:
    assert_same_error(expr, _error_env)
