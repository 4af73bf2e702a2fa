"""The View entries of the op registry (Note [A view is an entry] in npgrad/_ops/registry.py).

Each view op (view, reshape, expand, squeeze, unsqueeze, transpose, t, permute, split, chunk,
unbind, their in-place forms) is one entry: its node class is built from the entry and
defined nowhere else; against torch, the same values and gradients, grad_fn names,
``_saved_*`` values (a negative dim read as torch reads it), ``next_functions``, ``_base``,
``_is_view()``, shared version counters and forward-mode tangents; gradcheck in float64.
"""
from __future__ import annotations

import pathlib
import re
from typing import Any, Callable

import numpy as np
import pytest

import npgrad
from npgrad._ops import shape, view_inplace
from npgrad._ops.registry import REGISTRY, View, ViewEntryNode

from torch_oracle import assert_same_error

torch = pytest.importorskip("torch")

SHAPE = (2, 1, 3, 4)
VALUES = np.arange(24, dtype=np.float64).reshape(SHAPE) / 7.0 - 1.5

# name -> (op on a tensor of SHAPE in either library, the entry it runs)
CASES: dict[str, tuple[Callable[[Any], Any], View]] = {
    "view": (lambda x: x.view(6, 4), shape.VIEW),
    "view_infer": (lambda x: x.view(-1, 3), shape.VIEW),
    "reshape": (lambda x: x.reshape(3, -1), shape.VIEW),
    "reshape_alias": (lambda x: x[:, :, :2].reshape(2, 2, 4), shape.RESHAPE_ALIAS),
    "flatten": (lambda x: x.flatten(1), shape.VIEW),
    "unflatten": (lambda x: x.unflatten(3, (2, 2)), shape.VIEW),
    "view_as": (lambda x: x.view_as(x.new_zeros(4, 6)), shape.VIEW),
    "expand": (lambda x: x.expand(2, 2, 5, 3, 4), shape.EXPAND),
    "expand_keep": (lambda x: x.expand(-1, 3, -1, -1), shape.EXPAND),
    "expand_as": (lambda x: x.expand_as(x.new_zeros(3, 2, 2, 3, 4)), shape.EXPAND),
    "squeeze_all": (lambda x: x.squeeze(), shape.SQUEEZE),
    "squeeze_dim": (lambda x: x.squeeze(1), shape.SQUEEZE_DIM),
    "squeeze_negative": (lambda x: x.squeeze(-3), shape.SQUEEZE_DIM),
    "squeeze_kept": (lambda x: x.squeeze(0), shape.SQUEEZE_DIM),
    "squeeze_dims": (lambda x: x.squeeze((1, -1, 0)), shape.SQUEEZE_DIMS),
    "unsqueeze": (lambda x: x.unsqueeze(2), shape.UNSQUEEZE),
    "unsqueeze_negative": (lambda x: x.unsqueeze(-1), shape.UNSQUEEZE),
    "transpose": (lambda x: x.transpose(0, -1), shape.TRANSPOSE),
    "swapaxes": (lambda x: x.swapaxes(1, 2), shape.TRANSPOSE),
    "mT": (lambda x: x.mT, shape.TRANSPOSE),
    "t": (lambda x: x[0, 0].t(), shape.T),
    "permute": (lambda x: x.permute(3, 0, -2, 1), shape.PERMUTE),
    "movedim": (lambda x: x.movedim(-1, 0), shape.PERMUTE),
    "T": (lambda x: x[0, 0].T, shape.PERMUTE),
    "split": (lambda x: x.split(3, -1)[0], shape.SPLIT),
    "split_last": (lambda x: x.split(3, -1)[1], shape.SPLIT),
    "split_sizes": (lambda x: x.split([1, 2], 2)[1], shape.SPLIT_WITH_SIZES),
    "chunk": (lambda x: x.chunk(2, 3)[1], shape.SPLIT),
    "unbind": (lambda x: x.unbind(-2)[2], shape.UNBIND),
    "select": (lambda x: x.select(2, 1), shape.SELECT),
    "select_negative": (lambda x: x.select(-1, -2), shape.SELECT),
    "index_int": (lambda x: x[1], shape.SELECT),
    "index_negative": (lambda x: x[..., -1], shape.SELECT),
    "narrow": (lambda x: x.narrow(3, 1, 2), shape.SLICE),
    "narrow_negative": (lambda x: x.narrow(-1, -3, 2), shape.SLICE),
    "index_slice": (lambda x: x[:, :, 1:], shape.SLICE),
    "index_slice_negative": (lambda x: x[..., -3:-1], shape.SLICE),
    "index_slice_step": (lambda x: x[:, :, ::2], shape.SLICE),
    "index_slice_past_end": (lambda x: x[:, :, 1:100], shape.SLICE),
    "diagonal": (lambda x: x.diagonal(), shape.DIAGONAL),
    "diagonal_offset": (lambda x: x.diagonal(1, 2, 3), shape.DIAGONAL),
    "diagonal_negative": (lambda x: x.diagonal(-1, -1, 2), shape.DIAGONAL),
}
MANY = {shape.SPLIT, shape.SPLIT_WITH_SIZES, shape.UNBIND}


def leaf(lib: Any) -> Any:
    return lib.tensor(VALUES.copy(), dtype=lib.float64, requires_grad=True)


def saved_attributes(node: Any) -> dict:
    # ``_saved_fields`` is npgrad's class attribute listing tensor slots, not a saved value
    return {a: getattr(node, a) for a in dir(node)
            if a.startswith("_saved_") and a != "_saved_fields"}


def chain(node: Any, depth: int = 5) -> Any:
    """The graph below ``node`` as nested (name, children) up to ``depth`` levels."""
    if node is None or depth == 0:
        return None
    return (node.name(), [chain(n, depth - 1) for n, _ in node.next_functions])


@pytest.mark.parametrize("case", CASES)
def test_the_op_runs_its_entry_as_torch_runs_the_op(case: str) -> None:
    op, entry = CASES[case]
    x, tx = leaf(npgrad), leaf(torch)
    y, ty = op(x), op(tx)
    assert REGISTRY[entry.node.__name__] is entry
    assert type(y.grad_fn) is entry.node
    assert y.grad_fn.name() == ty.grad_fn.name()
    assert saved_attributes(y.grad_fn) == saved_attributes(ty.grad_fn)
    assert chain(y.grad_fn) == chain(ty.grad_fn)
    np.testing.assert_array_equal(y.detach().numpy(), ty.detach().numpy())
    assert y.shape == ty.shape and y.stride() == ty.stride()
    assert y._is_view() and ty._is_view()
    assert y._base is x and ty._base is tx
    assert y.requires_grad and y.is_leaf is False
    weights = np.linspace(-1.0, 2.0, y.numel()).reshape(tuple(y.shape))
    (y * npgrad.tensor(weights)).sum().backward()
    (ty * torch.tensor(weights)).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-14, atol=1e-15)


@pytest.mark.parametrize("case", CASES)
def test_gradcheck_and_gradgradcheck(case: str) -> None:
    op, _ = CASES[case]
    x = leaf(npgrad)

    def fn(t: Any) -> Any:
        return op(t) * 1.5

    assert npgrad.autograd.gradcheck(fn, (x,))
    assert npgrad.autograd.gradgradcheck(fn, (x,))


@pytest.mark.parametrize("case", CASES)
def test_a_views_tangent_is_the_same_view_of_its_inputs_tangent(case: str) -> None:
    op, _ = CASES[case]
    tangent = np.linspace(0.5, 3.0, VALUES.size).reshape(SHAPE)
    outs = []
    for lib in (npgrad, torch):
        fwad = lib.autograd.forward_ad
        with fwad.dual_level():
            t = lib.tensor(tangent.copy())
            dual = fwad.make_dual(lib.tensor(VALUES.copy()), t)
            primal, tan = fwad.unpack_dual(op(dual))
            outs.append((primal.numpy().copy(), tan.numpy().copy(), tan, t))
    (p, tan, view_tangent, t), (tp, ttan, _, _) = outs
    np.testing.assert_array_equal(p, tp)
    np.testing.assert_array_equal(tan, ttan)
    assert np.shares_memory(view_tangent.numpy(), t.numpy())  # a view of it, as in torch


def test_the_node_classes_are_the_entries_and_are_defined_nowhere_else() -> None:
    entries = {e for _, e in CASES.values()} | {shape.UNSAFE_VIEW}
    names = {e.node.__name__ for e in entries}
    assert names == {"ViewBackward0", "ReshapeAliasBackward0", "UnsafeViewBackward0",
                     "ExpandBackward0", "SqueezeBackward0", "SqueezeBackward1",
                     "SqueezeBackward2", "UnsqueezeBackward0", "TransposeBackward0",
                     "TBackward0", "PermuteBackward0", "SplitBackward0",
                     "SplitWithSizesBackward0", "UnbindBackward0", "SelectBackward0",
                     "SliceBackward0", "DiagonalBackward0"}
    twins = {"TBackward1", "TransposeBackward1", "SqueezeBackward3", "SqueezeBackward4",
             "SqueezeBackward5", "UnsqueezeBackward1"}
    root = pathlib.Path(npgrad.__file__).parent
    defined = re.compile(r"^\s*class (\w+Backward\d+)\b", re.M)
    classes = [m for p in root.rglob("*.py") for m in defined.findall(p.read_text())]
    assert not (names | twins | set(REGISTRY)) & set(classes)
    assert len(classes) == len(set(classes))  # and every grad_fn name is one class
    for e in entries:
        assert e.node.entry is e and e.signature.startswith(e.name + "(")


# -- the in-place forms: twins of the entries' nodes ------------------------------------

INPLACE = {
    "t_": (lambda x: x[0, 0].clone().t_(), view_inplace.TBackward1),
    "transpose_": (lambda x: x.clone().transpose_(1, -1), view_inplace.TransposeBackward1),
    "squeeze_": (lambda x: x.clone().squeeze_(), view_inplace.SqueezeBackward3),
    "squeeze_dim_": (lambda x: x.clone().squeeze_(-3), shape.SqueezeBackward4),
    "squeeze_dims_": (lambda x: x.clone().squeeze_((1, 2)), view_inplace.SqueezeBackward5),
    "unsqueeze_": (lambda x: x.clone().unsqueeze_(-2), view_inplace.UnsqueezeBackward1),
    "view_squeeze_": (lambda x: (x * 1).view(2, 1, 12).squeeze_(1), shape.SqueezeBackward4),
}


@pytest.mark.parametrize("case", INPLACE)
def test_the_inplace_forms_record_the_twin_of_the_entrys_node(case: str) -> None:
    op, twin = INPLACE[case]
    x, tx = leaf(npgrad), leaf(torch)
    y, ty = op(x), op(tx)
    assert type(y.grad_fn) is twin and issubclass(twin, ViewEntryNode)
    assert y.grad_fn.name() == ty.grad_fn.name()
    assert saved_attributes(y.grad_fn) == saved_attributes(ty.grad_fn)
    assert chain(y.grad_fn) == chain(ty.grad_fn)
    assert y._is_view() == ty._is_view() and y._version == ty._version
    np.testing.assert_array_equal(y.detach().numpy(), ty.detach().numpy())
    (y * 2).sum().backward()
    (ty * 2).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), tx.grad.numpy())


# -- what the kind does once for every view ---------------------------------------------

@pytest.mark.parametrize("case", ["view", "expand", "squeeze_dims", "permute", "split", "unbind"])
def test_views_share_the_version_counter_and_are_tracked_under_every_mode(case: str) -> None:
    op, _ = CASES[case]
    for lib in (npgrad, torch):
        x = leaf(lib)
        y = op(x)
        with lib.no_grad():
            x.add_(1)
        assert y._version == x._version == 1
        with lib.no_grad():
            z = op(x)
        assert z.requires_grad and z.grad_fn is None and z._is_view() and z._base is x
        with lib.inference_mode():
            w = op(x)
        assert w._is_view() and w._base is x and w.requires_grad
        with lib.inference_mode():
            inf = lib.ones(SHAPE)
            assert not op(inf)._is_view()
        assert not op(inf)._is_view() and op(inf)._base is None


def test_an_inplace_write_into_a_view_made_under_no_grad_is_torchs_error() -> None:
    def env(m: Any) -> dict:
        x = leaf(m) * 1
        with m.no_grad():
            v = x.transpose(0, 1)
        return {"v": v}

    assert_same_error("v.mul_(2)", env)


@pytest.mark.parametrize("expr", [
    "x.split(3, -1)[0].mul_(2)",
    "x.unbind(2)[1].add_(1)",
    "x.chunk(2, 3)[0].zero_()",
])
def test_an_inplace_write_into_one_of_several_views_is_torchs_error(expr: str) -> None:
    assert_same_error(expr, lambda m: {"x": leaf(m) * 1})


def test_a_stale_view_gets_its_history_rebuilt_as_torch_does() -> None:
    names = []
    for lib in (npgrad, torch):
        base = leaf(lib) * 1
        y = base.transpose(0, 1)
        base.view(-1)[0].mul_(3)  # a write through another view of the same base
        names.append((y.grad_fn.name(), y._version))
        y.sum().backward()
    assert names[0] == names[1]


def test_split_and_unbind_gradients_count_unused_outputs_as_zeros() -> None:
    grads = []
    for lib in (npgrad, torch):
        x = leaf(lib)
        a, _, c = x.unbind(2)
        p, q = x.split([3, 1], -1)
        (a.sum() * 2 + c.sum() + q.sum() * 5).backward()
        grads.append(x.grad.numpy().copy())
    np.testing.assert_array_equal(*grads)


def test_errors_are_checked_before_the_entry_runs() -> None:
    for expr in ["x.squeeze(4)", "x.squeeze((0, 0))", "x.unsqueeze(5)", "x.transpose(0, 4)",
                 "x.permute(0, 1, 2)", "x.permute(0, 1, 1, 2)", "x.view(5, 5)",
                 "x.transpose(0, 2).view(-1)", "x.expand(3, 3, 4)", "x.expand(2, 1, 3, 5)",
                 "x.split(-1, 0)", "x.split([1, 1], 3)", "x.unbind(4)", "x.t()",
                 "x.chunk(0)"]:
        assert_same_error(expr, lambda m: {"x": leaf(m)})


# -- squeeze_ and _unsafe_view on fresh results (not views), and matmul's chain ----------

def test_fresh_results_are_recorded_as_torch_records_them() -> None:
    rng = np.random.default_rng(0)
    a, b, w = rng.normal(size=(3,)), rng.normal(size=(2, 5, 3)), rng.normal(size=(4, 3))
    got = []
    for lib in (npgrad, torch):
        va, vb, vw = (lib.tensor(v, requires_grad=True) for v in (a, b, w))
        vec = va @ vw.t()  # SqueezeBackward4 over MmBackward0
        rows = vb @ vw.t()  # UnsafeViewBackward0 over MmBackward0 over ViewBackward0
        q = lib.quantile(vb, 0.3, dim=1, keepdim=True)
        qs = lib.quantile(vb, lib.tensor([0.2, 0.9], dtype=lib.float64), dim=-1)
        outs = (vec, rows, q, qs)
        got.append(([o.detach().numpy().copy() for o in outs],
                    [saved_attributes(o.grad_fn) for o in outs[:2]],
                    [o.grad_fn.name() for o in outs], chain(rows.grad_fn, 4),
                    [o._is_view() for o in outs]))
        sum(o.sum() * (i + 1) for i, o in enumerate(outs)).backward()
        got[-1] += ([v.grad.numpy().copy() for v in (va, vb, vw)],)
    (values, saved, names, rows_chain, views, grads), torch_side = got[0], got[1]
    for mine, theirs in zip(values, torch_side[0]):
        np.testing.assert_allclose(mine, theirs, rtol=1e-12, atol=1e-12)
    assert saved == torch_side[1]
    assert names == torch_side[2]
    assert rows_chain == torch_side[3]
    assert views == torch_side[4] == [False] * 4
    for mine, theirs in zip(grads, torch_side[5]):
        np.testing.assert_allclose(mine, theirs, rtol=1e-12, atol=1e-12)


def test_fresh_results_carry_tangents() -> None:
    a, w = np.array([1.0, -2.0, 0.5]), np.arange(12.0).reshape(4, 3) / 5
    outs = []
    for lib in (npgrad, torch):
        fwad = lib.autograd.forward_ad
        with fwad.dual_level():
            da = fwad.make_dual(lib.tensor(a), lib.tensor(a[::-1].copy()))
            out = da @ lib.tensor(w).t()
            outs.append(fwad.unpack_dual(out).tangent.numpy().copy())
    np.testing.assert_allclose(outs[0], outs[1], rtol=1e-12)


@pytest.mark.parametrize("case", ["select_negative", "index_slice_negative", "narrow",
                                  "diagonal_negative"])
def test_the_backward_of_a_region_views_backward_is_the_view_again(case: str) -> None:
    op, entry = CASES[case]
    got = []
    for lib in (npgrad, torch):
        x = leaf(lib)
        out = op(x)
        g = lib.ones_like(out, requires_grad=True)
        (gx,) = lib.autograd.grad(out, x, g, create_graph=True)
        g2 = lib.full_like(gx, 2.0, requires_grad=True)
        (gg,) = lib.autograd.grad(gx, g, g2, create_graph=True)
        got.append((gx.grad_fn.name(), gg.grad_fn.name(), gg._is_view(), gg._base is g2,
                    gx.detach().numpy().copy(), gg.detach().numpy().copy()))
    mine, theirs = got
    assert mine[:4] == theirs[:4]
    assert mine[1] == entry.node.__name__
    np.testing.assert_array_equal(mine[4], theirs[4])
    np.testing.assert_array_equal(mine[5], theirs[5])


@pytest.mark.parametrize("expr", [
    "m.select_scatter(x, s(m, 2, 1, 4), 2, -1)",
    "m.slice_scatter(x, s(m, 2, 1, 3, 2), 3, -2)",
    "m.diagonal_scatter(x, s(m, 2, 4, 1), 0, 1, 2)",
    "m.diag_embed(x[0, 0])",
    "m.diag(x[0, 0])",
    "m.trace(x[0, 0])",
    "m.narrow_copy(x, 2, 1, 2)",
])
def test_ops_that_read_or_write_a_views_region_keep_their_gradients(expr: str) -> None:
    """First and second order (through the gradient's dependence on the output's gradient)."""
    def src(m: Any, *size: int) -> Any:
        return m.linspace(0.5, 2.0, int(np.prod(size)), dtype=m.float64).reshape(size) \
            .requires_grad_()

    got = []
    for lib in (npgrad, torch):
        x = leaf(lib)
        out = eval(expr, {"m": lib, "x": x, "s": src})
        inputs = [x] + [t for t in out.grad_fn.next_functions and
                        [getattr(n, "variable", None) for n, _ in out.grad_fn.next_functions]
                        if t is not None and t is not x]
        w = lib.linspace(-1.0, 1.0, out.numel(), dtype=lib.float64).reshape(out.shape)
        w.requires_grad_()
        grads = lib.autograd.grad(out, inputs, w, create_graph=True)
        total = sum((g * (i + 2)).sum() for i, g in enumerate(grads))
        (gw,) = lib.autograd.grad(total, w)
        got.append([out.detach().numpy().copy(), gw.numpy().copy()]
                   + [g.detach().numpy().copy() for g in grads])
    assert len(got[0]) == len(got[1])
    for mine, theirs in zip(*got):
        np.testing.assert_allclose(mine, theirs, rtol=1e-12, atol=1e-12)



@pytest.mark.parametrize("mode", ["no_grad", "inference_mode"])
@pytest.mark.parametrize("op", ["x.split(3, -1)", "x.unbind(2)", "x.transpose(0, 1),",
                                "x.view(-1).split(4)"])
def test_writing_into_views_made_without_recording_is_torchs_error(mode: str, op: str) -> None:
    def env(m: Any) -> dict:
        x = leaf(m) * 1
        with getattr(m, mode)():
            views = eval(op, {"x": x})
        return {"v": views[0], "x": x}

    assert_same_error("v.mul_(2)", env)
