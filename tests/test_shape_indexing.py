"""Shape ops and indexing: the special cases that do not fit the op table.

Every differentiable shape, view, getitem and setitem overload is a row of ``tests/op_table.py``,
checked by ``tests/test_op_table.py`` (gradcheck, gradgradcheck, torch values/dtypes/grad_fn/
view-ness/gradients).  This file keeps storage and version sharing of views, multi-output nodes,
setitem semantics, error texts and backward-of-backward node names.
"""
from __future__ import annotations

import numpy as np
import pytest

import npgrad


def _inputs(shapes, seed=0, dtype=np.float64):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(s).astype(dtype) for s in shapes]


VIEW_CASES = [
    ("view", lambda m, x: x.view(6, 4)),
    ("reshape", lambda m, x: x.reshape(4, 6)),
    ("transpose", lambda m, x: x.transpose(0, 2)),
    ("permute", lambda m, x: x.permute(1, 2, 0)),
    ("squeeze", lambda m, x: x.unsqueeze(0).squeeze(0)),
    ("expand", lambda m, x: x[:, :1].expand(2, 5, 4)),
    ("narrow", lambda m, x: x.narrow(2, 1, 2)),
    ("select", lambda m, x: x.select(1, 2)),
    ("diagonal", lambda m, x: x.diagonal(0, 1, 2)),
    ("slice_of_view", lambda m, x: x[1][:, 1:]),
    ("split0", lambda m, x: x.split(1, 1)[0]),
    ("unbind1", lambda m, x: x.unbind(2)[1]),
    ("alias", lambda m, x: x[...]),
    ("detach", lambda m, x: x.detach()),
]


@pytest.mark.parametrize("name,fn", VIEW_CASES, ids=[c[0] for c in VIEW_CASES])
def test_views_share_storage_and_version(name, fn):
    torch = pytest.importorskip("torch")
    arr = _inputs([(2, 3, 4)], dtype=np.float32)[0]
    facts = {}
    for m in (npgrad, torch):
        x = m.tensor(arr, requires_grad=True)
        y = fn(m, x)
        base_ok = (y._base is x) if y._is_view() else (y._base is None)
        if m is npgrad:
            shares = np.shares_memory(x._data, y._data)
        else:
            shares = y.untyped_storage().data_ptr() == x.untyped_storage().data_ptr()
        with m.no_grad():
            x.add_(1)
        facts[m.__name__] = (y._is_view(), base_ok, shares, y._version == x._version,
                             y._version, y.requires_grad)
        np.testing.assert_allclose(y.detach().numpy(), fn(m, x).detach().numpy())
    assert facts["npgrad"] == facts["torch"]


def test_detach_is_not_a_view_but_shares_the_counter():
    x = npgrad.ones(3, requires_grad=True)
    d = x.detach()
    assert not d.requires_grad and d.is_leaf and d.grad_fn is None and not d._is_view()
    d.add_(1)
    assert x._version == 1 and x._data[0] == 2


def test_detach_in_place():
    torch = pytest.importorskip("torch")
    for m in (npgrad, torch):
        leaf = m.ones(3, requires_grad=True)
        y = leaf * 2
        assert y.detach_() is y
        assert y.grad_fn is None and not y.requires_grad and y.is_leaf
    msgs = []
    for m in (npgrad, torch):
        with pytest.raises(RuntimeError) as e:
            m.ones(3, requires_grad=True)[:2].detach_()
        msgs.append(str(e.value))
    assert msgs[0] == msgs[1]


def test_multi_output_node_is_shared():
    x = npgrad.ones(4, 3, requires_grad=True)
    a, b = x.split(2)
    assert a.grad_fn is b.grad_fn
    assert (a._output_nr, b._output_nr) == (0, 1)
    assert [meta[0] for meta in a.grad_fn._out_meta] == [(2, 3), (2, 3)]


def test_nonzero_matches_torch():
    torch = pytest.importorskip("torch")
    data = [[0.0, 1.0], [2.0, 0.0]]
    for args in ([data], [3.0], [0.0], [[True, False]]):
        ours = npgrad.nonzero(npgrad.tensor(*args))
        theirs = torch.tensor(*args).nonzero()
        assert ours.tolist() == theirs.tolist() and tuple(ours.shape) == tuple(theirs.shape)
        assert str(ours.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1]
        ours_t = npgrad.nonzero(npgrad.tensor(*args), as_tuple=True)
        theirs_t = torch.nonzero(torch.tensor(*args), as_tuple=True)
        assert [t.tolist() for t in ours_t] == [t.tolist() for t in theirs_t]


def test_cat_dtype_promotion():
    torch = pytest.importorskip("torch")
    for dts in (("int64", "float32"), ("int64", "bool"), ("float32", "float64"),
                ("int32", "int64")):
        outs = []
        for m in (npgrad, torch):
            ts = [m.ones(2, dtype=getattr(m, d)) for d in dts]
            outs.append((str(m.cat(ts).dtype).split(".")[-1],
                         str(m.stack(ts).dtype).split(".")[-1]))
        assert outs[0] == outs[1]


def test_to_conversions():
    torch = pytest.importorskip("torch")
    for m in (npgrad, torch):
        x = m.tensor([1.5, -2.0], requires_grad=True)
        assert x.to(m.float32) is x and x.to("cpu") is x and x.to(m.device("cpu")) is x
        assert x.to(x) is x
        i = x.to(m.int64)
        assert i.tolist() == [1, -2] and i.grad_fn is None and not i.requires_grad
        d = x.to(dtype=m.float64)
        assert d.grad_fn.name() == "ToCopyBackward0"
        d.sum().backward()
        assert x.grad.dtype == m.float32


# -- setitem semantics ------------------------------------------------------------------------

def test_setitem_versions_and_no_grad():
    torch = pytest.importorskip("torch")
    facts = []
    for m in (npgrad, torch):
        leaf = m.zeros(3, requires_grad=True)
        with m.no_grad():
            leaf[0] = 1.0
        y = leaf * 1
        v0 = y._version
        y[1] = 5.0
        plain = m.zeros(2, 3)
        view = plain[1]
        plain[0, [0, 2]] = 7.0
        facts.append((leaf.tolist(), leaf._version, leaf.is_leaf, y._version - v0,
                      plain.tolist(), view._version, plain._version))
    assert facts[0] == facts[1]


def test_setitem_into_plain_tensor_from_grad_value():
    torch = pytest.importorskip("torch")
    facts = []
    for m in (npgrad, torch):
        plain = m.zeros(2, 3)
        v = m.ones(3, requires_grad=True)
        plain[0] = v
        (plain * m.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])).sum().backward()
        facts.append((plain.requires_grad, plain.is_leaf, v.grad.tolist(),
                      plain.grad_fn.next_functions[0][0] is None))
    assert facts[0] == facts[1]


def test_setitem_int_tensor_truncates():
    torch = pytest.importorskip("torch")
    outs = []
    for m in (npgrad, torch):
        z = m.zeros(2, 3, dtype=m.int64)
        z[0] = m.tensor([1.5, 2.0, -3.7])
        z[1, 1] = 9.9
        outs.append(z.tolist())
    assert outs[0] == outs[1]


# -- errors: type and exact text ---------------------------------------------------------------

def _x(m):
    return m.arange(24.0).reshape(2, 3, 4).requires_grad_()


def _leaf(m):
    return m.zeros(2, 3, requires_grad=True)


def _set(t, index, value):
    t[index] = value


def _no_grad_view(m):
    leaf = _leaf(m)
    with m.no_grad():
        v = leaf[0]
    return v


ERRORS = [
    ("view_size", lambda m: _x(m).view(5)),
    ("view_two_infer", lambda m: _x(m).view(-1, -1)),
    ("view_negative", lambda m: _x(m).view(-2, 12)),
    ("view_stride", lambda m: _x(m).transpose(0, 1).view(-1)),
    ("view_zero_numel", lambda m: m.zeros(0, 3).view(-1, 0)),
    ("reshape_size", lambda m: _x(m).reshape(5)),
    ("flatten_order", lambda m: _x(m).flatten(2, 1)),
    ("unflatten_sizes", lambda m: _x(m).unflatten(1, (2, 2))),
    ("unflatten_empty", lambda m: _x(m).unflatten(1, ())),
    ("squeeze_dim", lambda m: _x(m).squeeze(5)),
    ("unsqueeze_dim", lambda m: _x(m).unsqueeze(4)),
    ("t_3d", lambda m: _x(m).t()),
    ("permute_len", lambda m: _x(m).permute(2, 0)),
    ("permute_dup", lambda m: _x(m).permute(2, 0, 0)),
    ("permute_range", lambda m: _x(m).permute(2, 0, 5)),
    ("expand_mismatch", lambda m: _x(m).expand(3, 3, 4)),
    ("expand_few", lambda m: _x(m).expand(3, 4)),
    ("expand_leading_neg", lambda m: _x(m).expand(-1, 2, 3, 4)),
    ("repeat_few", lambda m: _x(m).repeat(2, 1)),
    ("cat_empty", lambda m: m.cat([])),
    ("cat_ndim", lambda m: m.cat([_x(m), _x(m)[0]])),
    ("cat_sizes", lambda m: m.cat([_x(m), _x(m)[:, :2]], 0)),
    ("cat_0d", lambda m: m.cat([m.ones(2), m.tensor(1.0)])),
    ("cat_dim", lambda m: m.cat([_x(m), _x(m)], 3)),
    ("cat_tensor", lambda m: m.cat(_x(m))),
    ("stack_empty", lambda m: m.stack([])),
    ("stack_sizes", lambda m: m.stack([_x(m), _x(m)[:, :2]])),
    ("split_sizes", lambda m: _x(m).split([1, 2], 2)),
    ("split_negative", lambda m: _x(m).split(-1)),
    ("split_zero", lambda m: _x(m).split(0)),
    ("chunk_zero", lambda m: _x(m).chunk(0)),
    ("unbind_dim", lambda m: _x(m).unbind(3)),
    ("narrow_length", lambda m: _x(m).narrow(2, 3, 2)),
    ("narrow_start", lambda m: _x(m).narrow(2, 5, 0)),
    ("narrow_negative", lambda m: _x(m).narrow(2, 0, -1)),
    ("select_range", lambda m: _x(m).select(2, 5)),
    ("select_0d", lambda m: m.tensor(1.0).select(0, 0)),
    ("diagonal_same", lambda m: _x(m).diagonal(0, 1, -2)),
    ("flip_dup", lambda m: _x(m).flip(0, 0)),
    ("gather_ndim", lambda m: _x(m).gather(1, m.tensor([[0]]))),
    ("gather_size", lambda m: _x(m).gather(1, m.zeros(3, 1, 1, dtype=m.int64))),
    ("gather_dtype", lambda m: _x(m).gather(1, m.zeros(1, 1, 1))),
    ("gather_bounds", lambda m: _x(m).gather(1, m.tensor([[[0, 1, 0, 3]]]))),
    ("index_select_bounds", lambda m: _x(m).index_select(1, m.tensor([0, 2, 3]))),
    ("index_select_dtype", lambda m: _x(m).index_select(1, m.tensor([0.0, 2.0]))),
    ("index_select_2d", lambda m: _x(m).index_select(1, m.zeros(1, 1, dtype=m.int64))),
    ("to_cuda", lambda m: _x(m).to("cuda")),
    ("to_int_device", lambda m: _x(m).to(5)),
    # indexing
    ("index_bounds", lambda m: _x(m)[5]),
    ("index_neg_bounds", lambda m: _x(m)[-3]),
    ("index_later_dim", lambda m: _x(m)[0, 5]),
    ("index_after_none", lambda m: _x(m)[None, 0, 5]),
    ("index_after_ellipsis", lambda m: _x(m)[..., 7]),
    ("index_split_adv_bounds", lambda m: _x(m)[[0, 1], :, [1, 5]]),
    ("index_mask_then_int", lambda m: _x(m)[m.tensor([[True, False, True]]), 7]),
    ("index_too_many", lambda m: _x(m)[0, 0, 0, 0]),
    ("index_list_bounds", lambda m: _x(m)[[0, 5]]),
    ("index_tensor_bounds", lambda m: _x(m)[:, m.tensor([0, 5])]),
    ("index_after_select", lambda m: _x(m)[0, [0, 5]]),
    ("index_mask_shape", lambda m: _x(m)[m.tensor([True, False, True])]),
    ("index_neg_step", lambda m: _x(m)[::-1]),
    ("index_zero_step", lambda m: _x(m)[:, ::0]),
    ("index_float", lambda m: _x(m)[1.5]),
    ("index_float_tensor", lambda m: _x(m)[m.tensor([1.0])]),
    ("index_0d_int", lambda m: m.tensor(3.0)[0]),
    ("index_0d_slice", lambda m: m.tensor(3.0)[:]),
    ("index_1d_too_many", lambda m: m.tensor([3.0])[0, 0]),
    # setitem and the in-place checks
    ("set_leaf_view", lambda m: _set(_leaf(m), 0, 1.0)),
    ("set_leaf_list", lambda m: _set(_leaf(m), [0], 1.0)),
    ("set_leaf_ellipsis", lambda m: _set(_leaf(m), Ellipsis, 1.0)),
    ("set_leaf_trivial", lambda m: _set(_leaf(m), (slice(None), slice(None)), 1.0)),
    ("set_leaf_view_list", lambda m: _set(_leaf(m), (0, [0]), 1.0)),
    ("set_no_grad_view_of_view", lambda m: _set(_no_grad_view(m), 0, 1.0)),
    ("set_multi_output", lambda m: _set((_leaf(m) * 1).split(1)[0], 0, 1.0)),
    ("set_bounds", lambda m: _set(m.zeros(3), 5, 1.0)),
    ("set_shape", lambda m: _set(m.zeros(3), 0, m.ones(2))),
    ("set_shape_2d", lambda m: _set(m.zeros(2, 3), 0, m.ones(2, 3))),
    ("set_index_put_shape", lambda m: _set(m.zeros(2, 3), [0, 1], m.ones(2))),
    ("set_list_value", lambda m: _set(m.zeros(2, 3), 0, [1.0, 2.0, 3.0])),
    ("set_expanded", lambda m: _set(m.zeros(3).expand(2, 3), (slice(None), 0), 1.0)),
]


def _error_of(fn, m):
    try:
        fn(m)
    except Exception as e:  # noqa: BLE001 - we compare whatever was raised
        return type(e).__name__, str(e)
    return None


@pytest.mark.parametrize("name,fn", ERRORS, ids=[e[0] for e in ERRORS])
def test_errors_match_torch(name, fn):
    torch = pytest.importorskip("torch")
    theirs = _error_of(fn, torch)
    assert theirs is not None, f"torch raised nothing for {name}"
    ours = _error_of(fn, npgrad)
    assert ours is not None, f"npgrad raised nothing for {name}; torch raised {theirs}"
    their_msg = theirs[1].split(" (Triggered internally at")[0]
    assert (ours[0], ours[1]) == (theirs[0], their_msg)


def test_error_texts_without_torch():
    with pytest.raises(RuntimeError, match=r"^shape '\[5\]' is invalid for input of size 4$"):
        npgrad.ones(4).view(5)
    with pytest.raises(IndexError, match="^index 5 is out of bounds for dimension 0 with size 3$"):
        npgrad.ones(3)[5]
    with pytest.raises(IndexError, match="^too many indices for tensor of dimension 1$"):
        npgrad.ones(3)[0, 0]
    with pytest.raises(RuntimeError, match=r"^Can't detach views in-place\. Use detach\(\)"):
        npgrad.ones(3)[1:].detach_()


# -- higher order and in-place through views ---------------------------------------------------

DOUBLE_BACKWARD = [
    ("select", lambda m, x: x[0], "SelectBackwardBackward0"),
    ("slice", lambda m, x: x[:, 1:], "SliceBackwardBackward0"),
    ("diagonal", lambda m, x: x.diagonal(), "DiagonalBackwardBackward0"),
    ("index", lambda m, x: x[[0, 0, 1]], "IndexPutImplBackward0"),
    ("gather", lambda m, x: x.gather(1, m.tensor([[0, 0], [1, 0], [2, 1]])), "ScatterAddBackward0"),
    ("index_select", lambda m, x: x.index_select(1, m.tensor([2, 2])), "IndexAddBackward0"),
    ("unbind", lambda m, x: x.unbind(0)[1], "StackBackward0"),
    ("split", lambda m, x: x.split(1, 1)[0], "CatBackward0"),
    ("view", lambda m, x: x.view(-1), "ViewBackward0"),
    ("permute", lambda m, x: x.permute(1, 0), "PermuteBackward0"),
    ("flip", lambda m, x: x.flip(0), "FlipBackward0"),
]


@pytest.mark.parametrize("name,fn,expected", DOUBLE_BACKWARD, ids=[c[0] for c in DOUBLE_BACKWARD])
def test_backward_of_backward(name, fn, expected):
    """The gradient graph is made of npgrad ops: named as torch's and differentiable again."""
    x = npgrad.tensor(_inputs([(3, 3)])[0], requires_grad=True)
    y = fn(npgrad, x)
    g = npgrad.tensor(_inputs([tuple(y.shape)], seed=3)[0], requires_grad=True)
    (gx,) = npgrad.autograd.grad(y, x, g, create_graph=True)
    assert gx.grad_fn.name() == expected
    w = npgrad.tensor(_inputs([(3, 3)], seed=4)[0])
    (gg,) = npgrad.autograd.grad((gx * w).sum(), g)
    # d/dg <J^T g, w> = J w: the op applied to w
    with npgrad.no_grad():
        expect = fn(npgrad, w)
    np.testing.assert_allclose(gg._data, expect._data)


def test_setitem_through_a_view_matches_torch():
    torch = pytest.importorskip("torch")
    arrays = _inputs([(3, 4), (4,)], dtype=np.float32)
    facts = []
    for m in (npgrad, torch):
        x = m.tensor(arrays[0], requires_grad=True)
        v = m.tensor(arrays[1], requires_grad=True)
        y = x * 2
        row = y[1:]
        row[0] = v
        (y * m.arange(12.0).reshape(3, 4)).sum().backward()
        facts.append((y.detach().numpy().tolist(), x.grad.numpy().tolist(),
                      v.grad.numpy().tolist(), row._version, y._version))
    assert facts[0] == facts[1]


def test_views_made_under_no_grad_and_inference():
    torch = pytest.importorskip("torch")
    facts = []
    for m in (npgrad, torch):
        x = m.ones(2, 3, requires_grad=True)
        with m.no_grad():
            v = x[0]
            s = x.split(1)[0]
        with m.inference_mode():
            w = x.view(6)
            i = m.ones(3)
            iv = i[1:]
        facts.append((v.requires_grad, v.is_leaf, v.grad_fn is None, s.requires_grad,
                      w.is_inference(), iv.is_inference(), i.detach().is_inference()))
    assert facts[0] == facts[1]
