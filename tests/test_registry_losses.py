"""The fused losses, the scalar nodes and the small ops as registry entries, against torch:
grad_fn names, torch's ``_saved_*`` attributes (names and values), gradients and tangents."""
from __future__ import annotations

import numpy as np
import pytest

import npgrad

torch = pytest.importorskip("torch")

_X = [[0.2, 0.7, 0.4], [0.5, 0.1, 0.9]]
_Y = [[0.3, 0.2, 0.5], [0.5, 0.4, 0.1]]
_W = [1.0, 2.0, 3.0]


def _inputs(m):
    x = m.tensor(_X, dtype=m.float64, requires_grad=True)
    y = m.tensor(_Y, dtype=m.float64, requires_grad=True)
    return x, y, m.tensor(_W, dtype=m.float64), m.tensor([0, 2])


# (name, op(module, x, y, w, t)); each op's grad_fn is the node under test
CASES = [
    ("mse", lambda m, x, y, w, t: m.nn.functional.mse_loss(x, y)),
    ("mse_sum", lambda m, x, y, w, t: m.nn.functional.mse_loss(x, y, reduction="sum")),
    ("mse_none", lambda m, x, y, w, t: m.nn.functional.mse_loss(x, y, reduction="none")),
    ("smooth_l1", lambda m, x, y, w, t: m.nn.functional.smooth_l1_loss(x, y, beta=0.15)),
    ("huber", lambda m, x, y, w, t: m.nn.functional.huber_loss(x, y, delta=0.15)),
    ("bce", lambda m, x, y, w, t: m.nn.functional.binary_cross_entropy(x, y)),
    ("bce_weight", lambda m, x, y, w, t: m.nn.functional.binary_cross_entropy(
        x, y, weight=w, reduction="sum")),
    ("bce_logits", lambda m, x, y, w, t: m.nn.functional.binary_cross_entropy_with_logits(x, y)),
    ("bce_logits_weights", lambda m, x, y, w, t:
     m.nn.functional.binary_cross_entropy_with_logits(x, y, weight=w, pos_weight=w * 2)),
    ("nll", lambda m, x, y, w, t: m.nn.functional.nll_loss(x, t)),
    ("nll_weight", lambda m, x, y, w, t: m.nn.functional.nll_loss(
        x, t, weight=w, ignore_index=2, reduction="sum")),
    ("nll_none", lambda m, x, y, w, t: m.nn.functional.nll_loss(x, t, reduction="none")),
    ("nll_2d", lambda m, x, y, w, t: m.nn.functional.nll_loss(
        x.reshape(2, 3, 1, 1), t.reshape(2, 1, 1), weight=w)),
    ("soft_margin", lambda m, x, y, w, t: m.nn.functional.soft_margin_loss(x, y.detach())),
    ("cross_entropy_probs", lambda m, x, y, w, t: m.nn.functional.cross_entropy(x, y.detach())),
    ("logsigmoid", lambda m, x, y, w, t: m.nn.functional.logsigmoid(x)),
    ("threshold", lambda m, x, y, w, t: m.threshold(x, 0.4, -2.0)),
    ("threshold_functional", lambda m, x, y, w, t: m.nn.functional.threshold(x, 0.4, 9.0)),
    ("threshold_inplace", lambda m, x, y, w, t: m.threshold_(x * 1.0, 0.4, 9.0)),
    ("threshold_functional_inplace", lambda m, x, y, w, t:
     m.nn.functional.threshold(x * 1.0, 0.4, 9.0, inplace=True)),
    ("pow_scalar_base", lambda m, x, y, w, t: m.pow(2.0, x)),
    ("div_rounding_none", lambda m, x, y, w, t: m.div(x, y, rounding_mode=None)),
    ("div_method_rounding_none", lambda m, x, y, w, t: x.div(3, rounding_mode=None)),
    ("divide_rounding_none", lambda m, x, y, w, t: m.divide(x, y, rounding_mode=None)),
    ("div_plain", lambda m, x, y, w, t: m.div(x, y)),
    ("var_none", lambda m, x, y, w, t: x.var(None)),
    ("var_all", lambda m, x, y, w, t: x.var()),
    ("std_none", lambda m, x, y, w, t: x.std(None)),
]


def _saved(node) -> dict:
    out = {}
    for name in dir(node):
        if not name.startswith("_saved_") or name == "_saved_fields":
            continue
        value = getattr(node, name)
        if hasattr(value, "detach"):
            value = ("tensor", tuple(value.shape), value.detach().numpy().tolist())
        out[name] = value
    return out


def _run(m, op):
    x, y, w, t = _inputs(m)
    out = op(m, x, y, w, t)
    return out, (x, y)


@pytest.mark.parametrize("name, op", CASES, ids=[c[0] for c in CASES])
def test_node_and_saved_values_match_torch(name, op):
    ours, (ox, oy) = _run(npgrad, op)
    theirs, (tx, ty) = _run(torch, op)
    assert type(ours.grad_fn).__name__ == type(theirs.grad_fn).__name__
    assert _saved(ours.grad_fn).keys() == _saved(theirs.grad_fn).keys()
    for key, value in _saved(theirs.grad_fn).items():
        got = _saved(ours.grad_fn)[key]
        if isinstance(value, tuple) and value and value[0] == "tensor":
            assert got[:2] == value[:2], key
            np.testing.assert_allclose(got[2], value[2], rtol=1e-12, err_msg=key)
        else:
            assert got == value, key
    assert len(ours.grad_fn.next_functions) == len(theirs.grad_fn.next_functions)
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=1e-12)
    assert ours.dtype == npgrad.float64 and theirs.dtype == torch.float64
    ours.sum().backward()
    theirs.sum().backward()
    for a, b in ((ox, tx), (oy, ty)):
        assert (a.grad is None) == (b.grad is None)
        if b.grad is not None:
            np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-10, atol=1e-14)


_TANGENT_CASES = [c for c in CASES if "inplace" not in c[0]]


@pytest.mark.parametrize("name, op", _TANGENT_CASES, ids=[c[0] for c in _TANGENT_CASES])
def test_tangents_match_torch(name, op):
    """Forward mode: each entry's tangent rule, computed at once, against torch's."""
    results = []
    for m in (npgrad, torch):
        fw = m.autograd.forward_ad
        x, y, w, t = _inputs(m)
        with fw.dual_level():
            dx = fw.make_dual(x.detach(), m.tensor(_Y, dtype=m.float64) - 0.25)
            dy = fw.make_dual(y.detach(), m.tensor(_X, dtype=m.float64) * 0.5)
            out = op(m, dx, dy, w, t)
            results.append(fw.unpack_dual(out).tangent.numpy())
    np.testing.assert_allclose(results[0], results[1], rtol=1e-10, atol=1e-14)


_LOSS_CASES = CASES[:16]


@pytest.mark.parametrize("name, op", _LOSS_CASES, ids=[c[0] for c in _LOSS_CASES])
def test_losses_gradcheck(name, op):
    """float64 finite differences (and second order) through each entry's rules."""
    x, y, w, t = _inputs(npgrad)
    if name in ("soft_margin", "cross_entropy_probs"):
        def fn(a):
            return op(npgrad, a, y, w, t)
        args: tuple = (x,)
    elif name.startswith("nll") or name == "logsigmoid":
        def fn(a):
            return op(npgrad, a, y, w, t)
        args = (x,)
    else:
        def fn(a, b):
            return op(npgrad, a, b, w, t)
        args = (x, y)
    assert npgrad.autograd.gradcheck(fn, args)
    assert npgrad.autograd.gradgradcheck(fn, args)


def test_bce_weight_requiring_grad_is_refused_as_torch():
    for m in (npgrad, torch):
        x, y, w, t = _inputs(m)
        with pytest.raises(RuntimeError) as info:
            m.nn.functional.binary_cross_entropy(x, y, weight=w.requires_grad_())
        assert str(info.value) == ("The function 'binary_cross_entropy' is not differentiable "
                                   "with respect to argument 'weight'. This input cannot have "
                                   "requires_grad True.")


@pytest.mark.parametrize("call, kind", [
    (lambda m: m.threshold(m.tensor([1 + 1j]), 0., 1.), NotImplementedError),
    (lambda m: m.threshold(m.tensor([True]), 0, 1), NotImplementedError),
    (lambda m: m.threshold(m.tensor([1.]), "a", 1.), TypeError),
    (lambda m: m.threshold(m.tensor([1.]), 1.), TypeError),
    (lambda m: m.nn.functional.threshold(m.tensor([1.]), 1.), TypeError),
])
def test_threshold_errors_match_torch(call, kind):
    texts = []
    for m in (npgrad, torch):
        with pytest.raises(kind) as info:
            call(m)
        texts.append(str(info.value))
    assert texts[0] == texts[1]


@pytest.mark.parametrize("data, dtype", [([1, 2, 3], "int64"), ([1., 2.], "bfloat16"),
                                         ([1., float("nan")], "float32")])
def test_threshold_values_and_dtypes_match_torch(data, dtype):
    if dtype == "bfloat16":
        pytest.importorskip("ml_dtypes", reason="needs the bf16 extra: pip install -e '.[bf16]'")
    ours = npgrad.threshold(npgrad.tensor(data, dtype=getattr(npgrad, dtype)), 1.5, 0.3)
    theirs = torch.threshold(torch.tensor(data, dtype=getattr(torch, dtype)), 1.5, 0.3)
    assert str(ours.dtype).split(".")[1] == str(theirs.dtype).split(".")[1]
    np.testing.assert_array_equal(ours.float().numpy(), theirs.float().numpy())


def _graph(node, depth=0) -> list:
    """The graph under ``node`` as (depth, name, kept number) rows, in torch's order."""
    if node is None:
        return []
    other = getattr(node, "_saved_other", None)
    rows = [(depth, type(node).__name__, other if isinstance(other, (int, float)) else None)]
    for child, _ in node.next_functions:
        rows += _graph(child, depth + 1)
    return rows


@pytest.mark.parametrize("reduce", ["mean", "var"])
def test_scalar_nodes_in_backward_formulas_match_torch(reduce):
    """``mean``'s backward records DivBackward1 and var's MulBackward1, keeping the number
    (Note [Scalar nodes in backward formulas])."""
    graphs = []
    for m in (npgrad, torch):
        x = m.tensor([1., 2., 4.], requires_grad=True)
        v = m.tensor(1., requires_grad=True)
        (g,) = m.autograd.grad(getattr(x, reduce)(), x, v, create_graph=True)
        graphs.append(_graph(g.grad_fn))
    assert graphs[0] == graphs[1]
