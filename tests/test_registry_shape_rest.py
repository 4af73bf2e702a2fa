"""The last shape, view and in-place nodes as registry entries: ``fill_`` / ``zero_`` / ``copy_``
(FillBackward2/3, ZeroBackward0, CopyBackwards), ``as_strided`` / ``as_strided_`` and the views
rebuilt after an in-place write (AsStridedBackward0/1), ``unpack_dual``'s primal (torch's
``Identity``) and the NotImplemented node of ``scatter(reduce=)``.

Each case runs the same code on npgrad and on torch and compares what it returns: grad_fn names,
the ``_saved_*`` attributes torch shows and their values, ``next_functions`` walked as names,
versions, float64 gradients, forward-mode tangents and error texts.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np
import pytest

import npgrad
from npgrad._ops.registry import REGISTRY, General, View

torch = pytest.importorskip("torch")


def _plain(x: Any) -> Any:
    """A value of either library as plain Python data (tensors as rounded nested lists)."""
    if isinstance(x, (npgrad.Tensor, torch.Tensor)):
        return ("tensor", str(x.dtype).split(".")[-1],
                np.round(x.detach().numpy().astype(np.float64), 10).tolist())
    if isinstance(x, (tuple, list)):
        return tuple(_plain(v) for v in x)
    return x


def _graph(fn: Any, depth: int = 4) -> Any:
    """A node and the nodes below it, as nested (name, children) down to ``depth``."""
    if fn is None:
        return None
    if depth == 0:
        return type(fn).__name__
    return (type(fn).__name__, tuple(_graph(f, depth - 1) for f, _ in fn.next_functions))


def _saved(fn: Any) -> dict:
    """The ``_saved_*`` attributes a node shows, with their values."""
    return {name: _plain(getattr(fn, name)) for name in dir(fn) if name.startswith("_saved_")}


def _same(case: Callable) -> None:
    assert case(npgrad) == case(torch)


def _leaf(T: Any, values: Any) -> Any:
    return T.tensor(values, dtype=T.float64, requires_grad=True)


# -- fill_ / zero_ / copy_ ------------------------------------------------------------------

def _fill_scalar(T: Any) -> Any:
    x = _leaf(T, [1.0, -2.0, 3.0])
    y = x * 2
    before = y._version
    y.fill_(5.0)
    out = (type(y.grad_fn).__name__, _saved(y.grad_fn), _graph(y.grad_fn), y._version - before)
    (y * T.tensor([1.0, 2.0, 3.0], dtype=T.float64)).sum().backward()
    return out + (_plain(y), _plain(x.grad))


def _fill_tensor(T: Any) -> Any:
    x = _leaf(T, [1.0, -2.0, 3.0])
    v = _leaf(T, 4.0)
    y = x * 2
    y.fill_(v)
    out = (type(y.grad_fn).__name__, _saved(y.grad_fn), _graph(y.grad_fn), y._version)
    (y * T.tensor([1.0, 2.0, 3.0], dtype=T.float64)).sum().backward()
    return out + (_plain(y), _plain(x.grad), _plain(v.grad))


def _zero(T: Any) -> Any:
    x = _leaf(T, [[1.0, 2.0], [3.0, 4.0]])
    y = x.sin()  # (sin saves its input, which the write leaves alone)
    y.zero_()
    out = (type(y.grad_fn).__name__, _saved(y.grad_fn), _graph(y.grad_fn), y._version)
    (y + x).sum().backward()
    return out + (_plain(y), _plain(x.grad))


def _copy_broadcast_and_cast(T: Any) -> Any:
    x = _leaf(T, [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]).float()
    src = _leaf(T, [0.5, -1.5, 2.5])  # float64 into float32, broadcast over the rows
    x.copy_(src)
    fn = x.grad_fn
    out = (type(fn).__name__, fn.name(), _saved(fn), _graph(fn), x._version)
    (x * x).sum().backward()
    return out + (_plain(x), _plain(src.grad))


def _fill_on_a_view(T: Any) -> Any:
    x = _leaf(T, [1.0, 2.0, 3.0, 4.0])
    y = x * 1
    y[1:3].fill_(7.0)
    out = (_graph(y.grad_fn), y._version)
    (y * y).sum().backward()
    return out + (_plain(x.grad),)


@pytest.mark.parametrize("case", [_fill_scalar, _fill_tensor, _zero, _copy_broadcast_and_cast,
                                  _fill_on_a_view], ids=lambda c: c.__name__)
def test_overwriting_ops_match_torch(case: Callable) -> None:
    _same(case)


def test_overwriting_ops_are_entries() -> None:
    from npgrad._ops import inplace

    for entry, name in ((inplace.FILL, "FillBackward2"), (inplace.FILL_TENSOR, "FillBackward3"),
                        (inplace.ZERO, "ZeroBackward0"), (inplace.COPY, "CopyBackwards")):
        assert isinstance(entry, General) and REGISTRY[name] is entry
        assert entry.node.__name__ == name


def _leaf_write_errors(T: Any) -> Any:
    x = _leaf(T, [1.0, 2.0])
    texts = []
    for write in (lambda: x.fill_(1.0), lambda: x.zero_(), lambda: x.copy_(x.detach() + 1),
                  lambda: x[0].fill_(2.0)):
        try:
            write()
        except RuntimeError as e:
            texts.append(str(e))
    return texts, x._version


def test_overwriting_a_leaf_raises_torchs_errors() -> None:
    _same(_leaf_write_errors)


def _fill_twice_backward(T: Any) -> Any:
    x = _leaf(T, [1.0, 2.0])
    v = _leaf(T, 3.0)
    y = x * 1
    y.fill_(v)
    y.sum().backward()
    try:
        y.sum().backward()
    except RuntimeError as e:
        return str(e).split(".")[0], _plain(v.grad)
    return None, _plain(v.grad)


def test_fill_with_a_tensor_backprops_twice_as_torch() -> None:
    # FillBackward3 saves nothing, so a second backward through it runs (torch's does)
    _same(_fill_twice_backward)


def _overwrite_tangents(T: Any) -> Any:
    fw = T.autograd.forward_ad
    out = []
    with fw.dual_level():
        x = fw.make_dual(T.tensor([1.0, 2.0, 3.0], dtype=T.float64),
                         T.tensor([1.0, 1.0, 1.0], dtype=T.float64))
        v = fw.make_dual(T.tensor(2.0, dtype=T.float64), T.tensor(5.0, dtype=T.float64))
        s = fw.make_dual(T.tensor([4.0, 5.0, 6.0], dtype=T.float64),
                         T.tensor([0.5, 0.25, 0.125], dtype=T.float64))
        for write in (lambda y: y.fill_(3.0), lambda y: y.fill_(v), lambda y: y.zero_(),
                      lambda y: y.copy_(s), lambda y: y[1:].copy_(s[:2]),
                      lambda y: y.copy_(s.float())):
            y = x * 1
            write(y)
            out.append((_plain(fw.unpack_dual(y).primal), _plain(fw.unpack_dual(y).tangent)))
        # a plain tensor written with a dual value takes its tangent
        z = T.zeros(3, dtype=T.float64)
        z.copy_(s)
        out.append(_plain(fw.unpack_dual(z).tangent))
    return out


def test_overwriting_tangents_match_torch() -> None:
    _same(_overwrite_tangents)


def test_overwriting_gradgradcheck() -> None:
    x = npgrad.tensor([0.3, -0.7, 1.1], dtype=npgrad.float64, requires_grad=True)
    v = npgrad.tensor(0.9, dtype=npgrad.float64, requires_grad=True)
    s = npgrad.tensor([0.2, 0.4, -0.6], dtype=npgrad.float64, requires_grad=True)

    def written(a: Any, b: Any, c: Any) -> Any:
        y = a * a
        y[:2].copy_(c[1:] * c[1:])
        z = a * 1
        z.fill_(b * b)
        return y * z

    assert npgrad.autograd.gradcheck(written, (x, v, s), check_forward_ad=True)
    assert npgrad.autograd.gradgradcheck(written, (x, v, s))


# -- as_strided -----------------------------------------------------------------------------

_STRIDED_CASES = {
    "plain": ((6,), ((2, 2), (1, 2), 1)),
    "default_offset": ((2, 3), ((3, 2), (2, 1))),
    "output_overlaps": ((5,), ((3, 3), (1, 1), 0)),
    "expanded_output": ((4,), ((2, 3), (1, 0), 1)),
    "size_one_dims": ((6,), ((1, 3, 1), (5, 2, 7), 0)),
    "empty_output": ((4,), ((0, 2), (1, 1), 0)),
}


def _strided(T: Any, shape: tuple, args: tuple) -> Any:
    x = T.arange(1.0, 1.0 + int(np.prod(shape)), dtype=T.float64).reshape(shape)
    x.requires_grad_()
    y = x.as_strided(*args)
    fn = y.grad_fn
    out = (type(fn).__name__, _saved(fn), _graph(fn), y._is_view(), y._base is x)
    weights = T.arange(1.0, 1.0 + y.numel(), dtype=T.float64).reshape(y.shape)
    (y * weights).sum().backward()
    return out + (_plain(y), _plain(x.grad))


@pytest.mark.parametrize("case", sorted(_STRIDED_CASES))
def test_as_strided_matches_torch(case: str) -> None:
    shape, args = _STRIDED_CASES[case]
    assert _strided(npgrad, shape, args) == _strided(torch, shape, args)


def _strided_of_expanded(T: Any) -> Any:
    # the input reads its storage more than once: each element's gradient is shared out
    x = _leaf(T, [1.0, 2.0, 3.0])
    e = x.expand(2, 3)
    y = e.as_strided((2, 2), (1, 1), 0)
    (y * T.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=T.float64)).sum().backward()
    return _graph(y.grad_fn), _plain(x.grad)


def test_as_strided_of_an_overlapping_input_matches_torch() -> None:
    _same(_strided_of_expanded)


def _strided_double_backward(T: Any) -> Any:
    x = _leaf(T, [1.0, 2.0, 3.0, 4.0, 5.0, 6.0])
    y = x.as_strided((2, 2), (1, 2), 1)
    g = T.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=T.float64, requires_grad=True)
    gx, = T.autograd.grad(y, x, g, create_graph=True)
    fn = gx.grad_fn
    out = (_graph(fn, 5), _saved(fn), _plain(gx))
    ggx, = T.autograd.grad(gx, g, T.arange(6.0, dtype=T.float64))
    overlapping = x.as_strided((3, 3), (1, 1), 0)
    h = T.ones(3, 3, dtype=T.float64, requires_grad=True)
    hx, = T.autograd.grad(overlapping, x, h, create_graph=True)
    return out + (_plain(ggx), _graph(hx.grad_fn, 5), _plain(hx))


def test_as_strided_double_backward_records_torchs_graph() -> None:
    _same(_strided_double_backward)


def test_as_strided_gradgradcheck() -> None:
    x = npgrad.tensor([0.3, -0.7, 1.1, 0.5, 2.0], dtype=npgrad.float64, requires_grad=True)
    for args in (((2, 2), (1, 2), 1), ((3, 3), (1, 1), 0), ((2, 3), (0, 1), 1)):
        def strided(a: Any, args: tuple = args) -> Any:
            return (a * a).as_strided(*args)

        assert npgrad.autograd.gradcheck(strided, (x,), check_forward_ad=True)
        assert npgrad.autograd.gradgradcheck(strided, (x,))


def _strided_tangent(T: Any) -> Any:
    fw = T.autograd.forward_ad
    with fw.dual_level():
        x = fw.make_dual(T.arange(6.0, dtype=T.float64),
                         T.arange(10.0, 16.0, dtype=T.float64))
        y = x.as_strided((2, 2), (1, 2), 1)
        z = (x * 2).as_strided((3,), (2,))
        return (_plain(fw.unpack_dual(y).tangent), _plain(fw.unpack_dual(z).tangent))


def test_as_strided_tangents_match_torch() -> None:
    _same(_strided_tangent)


def _strided_inplace(T: Any) -> Any:
    x = _leaf(T, [1.0, 2.0, 3.0, 4.0, 5.0, 6.0])
    y = x * 1
    before = y._version
    y.as_strided_((2, 2), (1, 2), 1)
    fn = y.grad_fn
    out = (type(fn).__name__, _saved(fn), _graph(fn), y._version - before, tuple(y.shape))
    (y * y).sum().backward()
    return out + (_plain(x.grad),)


def test_as_strided_inplace_matches_torch() -> None:
    _same(_strided_inplace)


def test_as_strided_is_a_view_entry() -> None:
    from npgrad._ops import as_strided

    assert isinstance(as_strided.AS_STRIDED, View)
    assert REGISTRY["AsStridedBackward0"] is as_strided.AS_STRIDED
    assert issubclass(as_strided.AsStridedBackward1, as_strided.AsStridedBackward0)
    # torch keeps the input's geometry for its backward, with no getter
    assert "_saved_self_geometry" not in dir(npgrad.ones(2, requires_grad=True).as_strided(
        (2,), (1,)).grad_fn)


# -- views rebuilt after an in-place write ----------------------------------------------------

def _rebuilt_view(T: Any) -> Any:
    x = _leaf(T, [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    y = x * 1
    v = y[:, 1:]
    w = y[1]
    y.mul_(2)  # both views' histories are rebuilt over y's new one
    out = [(_graph(t.grad_fn), _saved(t.grad_fn)) for t in (v, w)]
    b = x * 1
    u = b[0, ::2]
    u.add_(1)  # the view written in place: CopySlices on the base, AsStrided on the view
    out.append((_graph(u.grad_fn), _saved(u.grad_fn), _graph(b.grad_fn)))
    ((v * v).sum() + (w * 3).sum() + (u * b[0, :2].sum()).sum()).backward()
    out.append(_plain(x.grad))
    return out


def test_views_rebuilt_after_a_write_match_torch() -> None:
    _same(_rebuilt_view)


def _rebuilt_real_view(T: Any) -> Any:
    z = T.tensor([1 + 2j, -3 + 0.5j], dtype=T.complex128, requires_grad=True)
    y = z * 1
    r = y.real
    y.mul_(2)
    out = (_graph(r.grad_fn),)
    (r * T.tensor([1.0, 2.0], dtype=T.float64)).sum().backward()
    return out + (_plain(T.view_as_real(z.grad)),)


def test_a_real_view_rebuilt_after_a_write_matches_torch() -> None:
    # torch cuts a view of another dtype from the base's real view: AsStrided over ViewAsReal
    _same(_rebuilt_real_view)


def _rebuilt_view_double_backward(T: Any) -> Any:
    x = _leaf(T, [1.0, 2.0, 3.0, 4.0])
    y = x * 1
    v = y[1:3]
    y.mul_(3)
    g = T.tensor([1.0, -1.0], dtype=T.float64, requires_grad=True)
    gx, = T.autograd.grad(v, x, g, create_graph=True)
    ggx, = T.autograd.grad(gx.sum(), g)
    return _graph(gx.grad_fn, 6), _plain(gx), _plain(ggx)


def test_a_rebuilt_view_double_backward_matches_torch() -> None:
    _same(_rebuilt_view_double_backward)


# -- unpack_dual's primal: torch's Identity -----------------------------------------------------

def _primal(T: Any) -> Any:
    fw = T.autograd.forward_ad
    x = _leaf(T, [1.0, 2.0, 3.0])
    with fw.dual_level():
        d = fw.make_dual(x, T.ones(3, dtype=T.float64))
        p = fw.unpack_dual(d).primal
        fn = p.grad_fn
        out = (type(fn).__name__, fn.name(), _saved(fn), _graph(fn), repr(p).split("grad_fn=")[1],
               p._is_view(), p._base is x, fw.unpack_dual(p).tangent is None)
        (p * T.tensor([1.0, 2.0, 3.0], dtype=T.float64)).sum().backward()
        g = T.tensor([4.0, 5.0, 6.0], dtype=T.float64, requires_grad=True)
        direct = fn(g)
    return out + (_plain(x.grad), _plain(direct), direct.requires_grad)


def test_unpack_dual_primal_matches_torch() -> None:
    _same(_primal)


# -- scatter(reduce=): recorded as NotImplemented -------------------------------------------

def _scatter_reduce_legacy(T: Any) -> Any:
    x = _leaf(T, [1.0, 2.0, 3.0])
    y = x.scatter(0, T.tensor([0, 2]), 2.0, reduce="multiply")
    out = [type(y.grad_fn).__name__, y.grad_fn.name(), _graph(y.grad_fn), _plain(y)]
    try:
        y.sum().backward()
    except RuntimeError as e:
        out.append(str(e))
    fw = T.autograd.forward_ad
    with fw.dual_level():
        d = fw.make_dual(T.zeros(3, dtype=T.float64), T.ones(3, dtype=T.float64))
        try:
            d.scatter(0, T.tensor([0, 1]), 2.0, reduce="add")
        except NotImplementedError as e:
            out.append(str(e))
    with T.no_grad():
        out.append(x.scatter(0, T.tensor([1]), 5.0, reduce="add").grad_fn)
    return out


def test_scatter_reduce_records_torchs_not_implemented_node() -> None:
    _same(_scatter_reduce_legacy)
