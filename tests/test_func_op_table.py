"""vmap over every op-table row: each tensor argument in turn gets a batch dim (last axis,
``in_dims=-1``), and the vmapped op must equal the loop over the batch (values, dtype, shape)
and real torch's ``torch.func.vmap`` of the same row.

Rows that differ from torch's vmap are listed in TORCH_DIFFERS with the reason (strict xfails:
fixing the cause makes them XPASS and fail until the entry is removed)."""
from __future__ import annotations

import sys
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).parent))

import npgrad  # noqa: E402
from npgrad.func import vmap  # noqa: E402
from npgrad.func._pytree import tree_flatten  # noqa: E402
from op_table import ROWS, OpRow  # noqa: E402

B = 3
# test id -> why npgrad's vmap (Note [vmap by slices]) and torch's differ for it
_NO_RULE = "torch has no batching rule for this op and refuses; npgrad computes the loop's values"
_TORCH_BUG = ("torch's batching rule raises (or answers) what its own loop over the same slices "
              "does not; npgrad gives the loop's values")
TORCH_DIFFERS: dict[str, str] = {
    "getitem_value_mask-arg0": "torch refuses boolean-mask indexing of a batched tensor "
                               "(dynamic shapes); npgrad indexes each slice",
    "moveaxis-arg0": _NO_RULE,
    "column_stack-arg0": _NO_RULE,
    "column_stack-arg1": _NO_RULE,
    "index_fill_tensor-arg1": _TORCH_BUG + " (torch fills every slice with the last value)",
    "slice_scatter_start-arg0": _TORCH_BUG,
    "slice_scatter_start-arg1": _TORCH_BUG,
    "linalg_solve_broadcast-arg1": _TORCH_BUG,
    "linalg_lstsq_wide_batch-arg0": _TORCH_BUG,
    "gaussian_nll_loss-arg2": "torch refuses the loss's `if torch.any(var < 0)` as data-dependent "
                              "control flow; npgrad does not track values computed from a slice "
                              "(Note [vmap by slices])",
    "gaussian_nll_loss_homoscedastic-arg2": "as gaussian_nll_loss-arg2",
}
# as_strided addresses storage elements, so the three ways of running it see three storages:
# torch's batching rule offsets each example by the batch stride of the batched storage, the
# per-slice fallback hands it a slice of that storage (the offset it is given is absolute, so
# every slice gets the same elements: needs an as_strided batching rule), the loop copies
_AS_STRIDED = ("as_strided addresses storage elements: each way of running it sees another "
               "storage (the comment above)")
for _name in ("as_strided", "as_strided_overlapping", "as_strided_of_transpose",
              "as_strided_inplace"):
    TORCH_DIFFERS[f"{_name}-arg0"] = _AS_STRIDED
LOOP_DIFFERS = {f"{name}-arg0": _AS_STRIDED for name in (
    "as_strided", "as_strided_overlapping", "as_strided_of_transpose")}
# a batch dim last in memory leaves the (real, imag) pairs strided: torch's view refuses
# ("Tensor must have a last dimension with stride 1"), and so does npgrad's; the loop's
# slices are contiguous copies
for _name in ("view_as_complex_conj_imag", "view_as_complex_real"):
    LOOP_DIFFERS[f"{_name}-arg0"] = ("view_as_complex of a batch dim last in memory: torch "
                                      "refuses, as npgrad does; the loop's slices are copies")


def _cases() -> list:
    out = []
    for row in ROWS:
        for k in range(len(row.inputs)):
            case = f"{row.name}-arg{k}"
            marks = ()
            if case in LOOP_DIFFERS:
                marks = (pytest.mark.xfail(reason=LOOP_DIFFERS[case], strict=True),)
            out.append(pytest.param(row, k, id=case, marks=marks))
    return out


def _batched(arrays: list, k: int) -> list:
    a = arrays[k]
    scale = np.array([1.0, 0.9, 0.8]).astype(a.dtype)
    arrays = list(arrays)
    arrays[k] = np.stack([a * s for s in scale], axis=-1)
    return arrays


def _call(mod: Any, row: OpRow, arrays: list, k: int, vm: Any, **kw: Any) -> Any:
    tensors = [mod.tensor(x) for x in arrays]
    in_dims = tuple(-1 if i == k else None for i in range(len(arrays)))
    return vm(lambda *xs: row.fn(mod, *xs), in_dims=in_dims, **kw)(*tensors)


def _loop(row: OpRow, arrays: list, k: int, seeded: bool) -> Any:
    outs = []
    for b in range(B):
        if seeded and b == 0:
            npgrad.manual_seed(0)
        xs = [npgrad.tensor(x[..., b] if i == k else x) for i, x in enumerate(arrays)]
        outs.append(row.fn(npgrad, *xs))
    flat = [tree_flatten(o)[0] for o in outs]
    return [npgrad.stack([f[i] for f in flat]) for i in range(len(flat[0]))]


def _leaves(x: Any) -> list:
    if isinstance(x, tuple):  # torch's return types (structseqs) too
        return [t for item in x for t in _leaves(item)]
    return [t for t in tree_flatten(x)[0]]


def _refusal(error: Exception) -> bool:
    """One of torch's vmap refusals, reproduced (Note [In-place refusals] in _vmap_mode)."""
    text = str(error)
    return isinstance(error, RuntimeError) and (
        "(self, *extra_args) is not possible" in text
        or "doesn't match the broadcast shape" in text
        or text.startswith("Batch norm got a batched tensor as input while the running_mean"))


def _assert_same(mine: list, theirs: list, tol: float) -> None:
    assert len(mine) == len(theirs)
    for a, b in zip(mine, theirs):
        assert tuple(a.shape) == tuple(b.shape)
        assert str(a.dtype).split(".")[-1] == str(b.dtype).split(".")[-1]
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=tol,
                                   atol=tol, equal_nan=True)


@pytest.mark.parametrize("row,k", _cases())
def test_vmap_equals_loop(row: OpRow, k: int) -> None:
    arrays = _batched(row.arrays(np.float64), k)
    sampling = row.family == "sampling"
    if sampling:
        npgrad.manual_seed(0)
    try:
        mine = _call(npgrad, row, arrays, k, vmap,
                     randomness="different" if sampling else "error")
    except RuntimeError as error:
        # in-place on an unbatched tensor with a batched value (batch_norm's running stats
        # too): torch refuses, and so does npgrad (test_vmap_against_torch checks the text);
        # there is no loop to equal
        assert _refusal(error), error
        return
    _assert_same(_leaves(mine), _loop(row, arrays, k, sampling), 1e-12)


def _torch_cases() -> list:
    out = []
    for p in _cases():
        row, k = p.values
        marks: tuple = ()
        if p.id in TORCH_DIFFERS:
            marks = (pytest.mark.xfail(reason=TORCH_DIFFERS[p.id], strict=True),)
        if row.family != "sampling":  # torch's random streams under vmap differ by design
            out.append(pytest.param(row, k, id=p.id, marks=marks))
    return out


@pytest.mark.parametrize("row,k", _torch_cases())
def test_vmap_against_torch(row: OpRow, k: int) -> None:
    torch = pytest.importorskip("torch")
    pytest.importorskip("torch.func")

    arrays = _batched(row.arrays(np.float64), k)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # torch's "performance drop" fallback warnings
            theirs = _call(torch, row, arrays, k, torch.func.vmap)
    except Exception as error:  # torch refuses: so must npgrad, with the same text
        with pytest.raises(type(error)) as mine_error:
            _call(npgrad, row, arrays, k, vmap)
        assert str(mine_error.value) == str(error)
        return
    mine = _call(npgrad, row, arrays, k, vmap)
    _assert_same(_leaves(mine), _leaves(theirs), 1e-9 * max(row.tol, 1.0))
