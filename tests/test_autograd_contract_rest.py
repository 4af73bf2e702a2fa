"""The rest of torch's autograd contract (issue 14, part 1), each behaviour compared with torch:
``as_strided`` / ``as_strided_``, storage objects, nested checkpoints, ``ctx.mark_dirty()`` on a
view, and the graphs that mean / sum / var / std backward record with ``create_graph``."""
from __future__ import annotations

import importlib
import warnings
from typing import Any, Callable

import numpy as np
import pytest

import npgrad
from npgrad.autograd import gradcheck, gradgradcheck


@pytest.fixture
def torch() -> Any:
    return pytest.importorskip("torch")


def _libs(torch: Any) -> list:
    return [npgrad, torch]


def _same(run: Callable[[Any], Any], torch: Any) -> Any:
    """``run(lib)`` gives the same (printable) answer in npgrad and in torch."""
    mine, theirs = (run(lib) for lib in _libs(torch))
    assert mine == theirs, (mine, theirs)
    return mine


def _outcome(f: Callable[[], Any]) -> Any:
    try:
        return ("ok", f())
    except Exception as e:  # noqa: BLE001 - the error is the outcome compared
        return (type(e).__name__, str(e))


def _arr(t: Any) -> list:
    return np.round(t.detach().numpy().astype(np.float64), 10).tolist()


def graph_names(fn: Any) -> list:
    """Class names of every node reachable from ``fn``, depth first, each once."""
    out, seen, stack = [], set(), [fn]
    while stack:
        f = stack.pop()
        if f is None or id(f) in seen:
            continue
        seen.add(id(f))
        out.append(type(f).__name__)
        stack.extend(n for n, _ in reversed(f.next_functions))
    return out


# -- as_strided / as_strided_ -------------------------------------------------------------

def _strided_run(lib: Any) -> list:
    out = []
    a = lib.arange(6., dtype=lib.float64).requires_grad_()
    b = a.clone()
    v = b.as_strided((2, 2), (1, 2), 1)
    out += [_arr(v), type(v.grad_fn).__name__, v._base is b, v.stride(), v.storage_offset()]
    b2 = a.clone()
    r = b2.as_strided_((2, 2), (1, 2), 1)
    out += [r is b2, type(b2.grad_fn).__name__, b2._base is None, b2._version, _arr(b2)]
    b2.sum().backward()
    out.append(_arr(a.grad))
    a.grad = None
    d = a.clone()
    vv = d[1:]
    vv.as_strided_((2,), (2,), 0)
    out += [type(vv.grad_fn).__name__, vv._base is d, vv.storage_offset(), _arr(vv)]
    vv.sum().backward()
    out.append(_arr(a.grad))
    # overlapping output: each storage element's gradient is summed
    g, = lib.autograd.grad(a.as_strided((3, 3), (1, 1)).sum(), a)
    out.append(_arr(g))
    # an aliasing input (an expand): its storage gradient is shared out among the aliases
    z = lib.tensor([1., 2., 3.], dtype=lib.float64, requires_grad=True)
    w = z.unsqueeze(1).expand(3, 4).as_strided((3,), (1,), 0)
    out.append(_arr(lib.autograd.grad((w * w).sum(), z)[0]))
    # writes through an as_strided view reach the base
    x = lib.zeros(4)
    y = x.as_strided((2,), (2,))
    y.add_(1)
    out += [_arr(x), x._version, lib.as_strided(x, (2,), (1,), 2).tolist()]
    with lib.no_grad():
        q = a.as_strided((2,), (1,))
    out += [q.requires_grad, q.grad_fn]
    av = lib.ones(2, 2, dtype=lib.float64, requires_grad=True)
    gg, = lib.autograd.grad(a.as_strided((2, 2), (1, 2), 1), a, av, create_graph=True)
    out.append(type(gg.grad_fn).__name__)
    return out


def test_as_strided_matches_torch(torch: Any) -> None:
    _same(_strided_run, torch)


@pytest.mark.parametrize("args", [((2, 2), (1, 1), 5), ((2, 2), (1,)), ((2, -2), (1, 1)),
                                  ((2, 2), (1, -1)), ((2,), (1,), -1), ((2,), (1,), True),
                                  ((0, 3), (1, 1), 100), ((2,), (0,), 5)])
def test_as_strided_errors_match_torch(args: tuple, torch: Any) -> None:
    def run(lib: Any) -> Any:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return (_outcome(lambda: lib.zeros(6).as_strided(*args).tolist()),
                    _outcome(lambda: lib.zeros(6).as_strided_(*args).shape))
    _same(run, torch)


def test_as_strided_in_place_on_leaf_refused(torch: Any) -> None:
    _same(lambda lib: _outcome(lambda: lib.zeros(3, requires_grad=True).as_strided_((2,), (1,))),
          torch)


def test_as_strided_gradcheck() -> None:
    base = npgrad.tensor(np.random.default_rng(0).standard_normal(12), dtype=npgrad.float64,
                         requires_grad=True)
    assert gradcheck(lambda t: t.as_strided((2, 3), (1, 2), 1), (base,))
    assert gradcheck(lambda t: t.as_strided((3, 3), (1, 1), 2), (base,))  # overlapping
    assert gradgradcheck(lambda t: t.as_strided((2, 2), (1, 3), 1) ** 2, (base,))
    m = npgrad.tensor(np.random.default_rng(1).standard_normal((3, 4)), requires_grad=True)
    assert gradcheck(lambda t: t.t().as_strided((2, 3), (1, 2), 1), (m,))
    assert gradcheck(lambda t: t.clone().as_strided_((2, 2), (2, 1), 3) * 1.0, (base,))


# -- storages ------------------------------------------------------------------------------

def _storage_run(lib: Any) -> list:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a = lib.zeros(3)
        s = a.untyped_storage()
        out = [s._cdata == a[1:].untyped_storage()._cdata, s is a[1:].untyped_storage(),
               s is a.detach().untyped_storage(), s == a.untyped_storage(),
               s != a.untyped_storage(), s == lib.zeros(3).untyped_storage(),
               repr(lib.tensor([1., 2.]).untyped_storage()),
               repr(lib.tensor([1, 2], dtype=lib.int32).storage()).replace("npgrad.", "torch."),
               repr(lib.zeros(0).untyped_storage()), str(s.device),
               s.data_ptr() == a.data_ptr(), s.element_size(), s.nbytes(), len(s), s.size(),
               a.storage() is a.storage(), a.storage().untyped() is a.untyped_storage(),
               a.storage()._cdata == s._cdata]
        st = lib.tensor([1.5, 2.]).storage()
        out += [str(st.dtype).replace("npgrad.", "torch."), st.size(), len(st), st.nbytes(),
                str(st.device), st.element_size(), st[0], st[-1], st.tolist(),
                st.untyped().tolist(), st.untyped()[-1],
                _outcome(lambda: st[5]), _outcome(lambda: st.untyped()[50]),
                _outcome(lambda: lib.from_numpy(np.zeros(2)).untyped_storage().resize_(5))]
        x = lib.randn(4, 4).t()[1:]
        out += [x.untyped_storage().nbytes(), x.storage_offset(),
                x.untyped_storage() is x.contiguous().untyped_storage()]
    return out


def test_storage_objects_match_torch(torch: Any) -> None:
    _same(_storage_run, torch)


def test_storage_identity_lives_with_the_storage() -> None:
    a = npgrad.zeros(4)
    first = a.untyped_storage()
    cdata = first._cdata
    assert a[2:].untyped_storage() is first
    del first
    again = a.untyped_storage()  # a new object once none is alive, over the same bytes
    assert again._cdata == cdata and again.data_ptr() == a.data_ptr()
    with pytest.raises(RuntimeError, match="^Trying to resize storage that is not resizable$"):
        again.resize_(0)


# -- nested checkpoints --------------------------------------------------------------------

def _nested_checkpoint_run(lib: Any) -> list:
    ck = importlib.import_module(lib.__name__ + ".utils.checkpoint")
    cnt = {"f": 0, "g": 0, "h": 0}

    def f(x: Any) -> Any:
        cnt["f"] += 1
        return x.sin()

    def g(x: Any) -> Any:
        cnt["g"] += 1
        return x.cos()

    def h(x: Any) -> Any:
        cnt["h"] += 1
        return x.exp()

    def c(fn: Callable) -> Callable:
        return lambda *a, **k: ck.checkpoint(fn, *a, use_reentrant=False, **k)

    variants = [
        lambda x: c(c(f))(x),
        lambda x: c(lambda t: c(f)(t) * c(g)(t))(x),
        lambda x: c(lambda t: h(c(f)(t)))(x),
        lambda x: c(lambda t: c(lambda u: c(f)(u) * g(u))(t) * h(t))(x),
        lambda x: c(lambda t: c(lambda u: f(u) * g(u))(t) + c(lambda u: g(u) * h(u))(t))(x),
    ]
    out = []
    for early in (True, False):
        for fn in variants:
            for k in cnt:
                cnt[k] = 0
            x = lib.tensor([0.3, 0.7, 1.1], dtype=lib.float64, requires_grad=True)
            with ck.set_checkpoint_early_stop(early):
                y = fn(x)
                forward = dict(cnt)
                y.sum().backward()
            out += [forward, dict(cnt), _arr(x.grad)]
            for k in cnt:
                cnt[k] = 0
            x = lib.tensor([0.3, 0.7, 1.1], dtype=lib.float64, requires_grad=True)
            with ck.set_checkpoint_early_stop(early):
                gr, = lib.autograd.grad(fn(x).sum(), x, create_graph=True)
                gg, = lib.autograd.grad(gr.sum(), x)
            out += [dict(cnt), _arr(gg)]
    return out


def test_nested_checkpoint_matches_torch(torch: Any) -> None:
    """Values, first and second order, and how often each function is recomputed."""
    _same(_nested_checkpoint_run, torch)


def _mixed_checkpoint_run(lib: Any) -> list:
    ck = importlib.import_module(lib.__name__ + ".utils.checkpoint")
    calls = [0]

    def f(x: Any) -> Any:
        calls[0] += 1
        return x.sin() * x.cos()

    out = []
    for outer in (True, False):
        for inner in (True, False):
            for use_grad in (False, True):
                calls[0] = 0
                x = lib.tensor([0.5, 1.0, 2.0], dtype=lib.float64, requires_grad=True)

                def body(t: Any, inner: bool = inner) -> Any:
                    return ck.checkpoint(f, t.exp(), use_reentrant=inner) * 2

                def run(outer: bool = outer, use_grad: bool = use_grad, x: Any = x,
                        body: Any = body) -> Any:
                    y = ck.checkpoint(body, x, use_reentrant=outer)
                    if use_grad:
                        return _arr(lib.autograd.grad(y.sum(), x)[0])
                    y.sum().backward()
                    return _arr(x.grad)
                out += [_outcome(run), calls[0]]
    # non-tensor inputs and outputs, keyword arguments through two levels
    x = lib.tensor([0.3, 0.7, 1.1], dtype=lib.float64, requires_grad=True)

    def ft(t: Any, scale: float, *, shift: float = 0.0) -> tuple:
        return (t * scale + shift).sin(), "tag", 3

    res = ck.checkpoint(lambda t, s, shift: ck.checkpoint(ft, t, s, shift=shift,
                                                          use_reentrant=False),
                        x, 2.0, shift=1.0, use_reentrant=False)
    res[0][0].sum().backward()
    out += [res[1:], _arr(x.grad)]
    return out


def test_checkpoint_inside_checkpoint_reentrant_and_not(torch: Any) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _same(_mixed_checkpoint_run, torch)


def test_checkpoint_unpacked_twice_is_refused() -> None:
    from npgrad.utils.checkpoint import CheckpointError, checkpoint

    class Twice(npgrad.autograd.Function):
        @staticmethod
        def forward(ctx: Any, x: Any) -> Any:
            ctx.save_for_backward(x)
            return x * 2

        @staticmethod
        def backward(ctx: Any, g: Any) -> Any:
            x, = ctx.saved_tensors
            x2, = ctx.saved_tensors  # the second unpack of one checkpointed tensor
            return g * 2 + 0 * (x + x2)

    x = npgrad.ones(2, requires_grad=True)
    y = checkpoint(lambda t: Twice.apply(t.sin()), x, use_reentrant=False)
    with pytest.raises(CheckpointError, match="already unpacked once"):
        y.sum().backward()


# -- ctx.mark_dirty() on a view ------------------------------------------------------------

def _dirty_fns(lib: Any) -> tuple:
    class Double(lib.autograd.Function):
        @staticmethod
        def forward(ctx: Any, x: Any) -> Any:
            x.mul_(2)
            ctx.mark_dirty(x)
            return x

        @staticmethod
        def backward(ctx: Any, g: Any) -> Any:
            return g * 2

    class AddInto(lib.autograd.Function):  # the view is the second argument
        @staticmethod
        def forward(ctx: Any, y: Any, t: Any) -> Any:
            t.add_(y)
            ctx.mark_dirty(t)
            return t

        @staticmethod
        def backward(ctx: Any, g: Any) -> tuple:
            return g * 3, g

    return Double, AddInto


def _dirty_run(lib: Any) -> list:
    Double, AddInto = _dirty_fns(lib)
    out = []
    a = lib.tensor([1., 2., 3., 4.], requires_grad=True)
    b = a.clone()
    v = b[1:3]
    res = Double.apply(v)
    out += [res is v, type(res.grad_fn).__name__, v._base is b, type(b.grad_fn).__name__,
            b._version, v._version, _arr(b), graph_names(res.grad_fn)]
    (b * lib.tensor([1., 10., 100., 1000.])).sum().backward()
    out.append(_arr(a.grad))
    a.grad = None
    b = a.clone()
    vv = b[1:][:2]
    o = Double.apply(vv)
    out += [type(o.grad_fn).__name__, type(b.grad_fn).__name__, type(b[1:].grad_fn).__name__]
    (o.sum() + b.sum()).backward()
    out.append(_arr(a.grad))
    # a view of a tensor that needs no grad: the base joins the graph
    c = lib.zeros(4)
    w = c[1:3]
    y = lib.tensor([1., 1.], requires_grad=True)
    r = AddInto.apply(y, w)
    out += [r is w, type(c.grad_fn).__name__, c.requires_grad, _arr(c)]
    r.sum().backward()
    out.append(None if y.grad is None else _arr(y.grad))  # as torch's CopySlices: arg 0's grad
    out.append(_outcome(lambda: Double.apply(lib.tensor([1., 2.], requires_grad=True)[:1])))
    b = a.clone()
    u1, _ = b.unbind()[0:2]
    out.append(_outcome(lambda: Double.apply(u1)))
    b = a.clone()
    with lib.no_grad():
        nv = b[1:3]
    out.append(_outcome(lambda: Double.apply(nv)))
    return out


def test_mark_dirty_on_a_view_matches_torch(torch: Any) -> None:
    _same(_dirty_run, torch)


def test_mark_dirty_on_a_view_gradcheck() -> None:
    Double, _ = _dirty_fns(npgrad)
    x = npgrad.tensor(np.random.default_rng(2).standard_normal(5), requires_grad=True)

    def f(t: Any) -> Any:
        u = t.clone()
        Double.apply(u[::2])
        return u

    assert gradcheck(f, (x,))
    assert gradgradcheck(lambda t: f(t) ** 2, (x,))


# -- reduction graphs under create_graph ---------------------------------------------------

REDUCTIONS = {
    "mean": lambda t: t.mean(),
    "mean0": lambda t: t.mean(0),
    "mean1k": lambda t: t.mean(1, keepdim=True),
    "mean_dtype": lambda t: t.mean(dtype=t.dtype),
    "sum": lambda t: t.sum(),
    "sum0": lambda t: t.sum(0),
    "var": lambda t: t.var(),
    "var0": lambda t: t.var(0),
    "var1k": lambda t: t.var(1, keepdim=True),
    "var_all_dims": lambda t: t.var((0, 1)),
    "std": lambda t: t.std(),
    "std0": lambda t: t.std(0),
    "std1k": lambda t: t.std(1, keepdim=True, correction=0),
    "var_1d": lambda t: t[0].var(0),
    "std_1d": lambda t: t[0].std(0),
}


@pytest.mark.parametrize("name", sorted(REDUCTIONS))
def test_reduction_double_backward_graph_matches_torch(name: str, torch: Any) -> None:
    """The gradient's grad_fn graph (create_graph=True) has torch's node names."""
    f = REDUCTIONS[name]
    data = np.random.default_rng(4).standard_normal((2, 3))

    def run(lib: Any) -> list:
        x = lib.tensor(data, requires_grad=True)
        y = f(x)
        v = lib.ones_like(y).requires_grad_()
        g, = lib.autograd.grad(y, x, v, create_graph=True)
        g2, = lib.autograd.grad(f(x * x), x, v, create_graph=True)
        return [graph_names(g.grad_fn), graph_names(g2.grad_fn), _arr(g), _arr(g2)]
    _same(run, torch)


@pytest.mark.parametrize("name", sorted(REDUCTIONS))
def test_reduction_gradgradcheck(name: str) -> None:
    x = npgrad.tensor(np.random.default_rng(5).standard_normal((2, 3)), requires_grad=True)
    assert gradgradcheck(REDUCTIONS[name], (x,))


def test_mean_backward_divides_by_a_number() -> None:
    """Hand-derived: d mean / dx = 1/n everywhere; its graph is DivBackward1 over the expand."""
    x = npgrad.ones(2, 2, requires_grad=True)
    v = npgrad.tensor(3., requires_grad=True)
    g, = npgrad.autograd.grad(x.mean(), x, v, create_graph=True)
    assert g.tolist() == [[0.75, 0.75], [0.75, 0.75]]
    assert graph_names(g.grad_fn) == ["DivBackward1", "ExpandBackward0", "AccumulateGrad"]
    gv, = npgrad.autograd.grad(g.sum(), v)
    assert gv.item() == 1.0


def _strided_forward_ad_run(lib: Any) -> list:
    fwad = importlib.import_module(lib.__name__ + ".autograd.forward_ad")
    out = []
    with fwad.dual_level():
        x = fwad.make_dual(lib.arange(6., dtype=lib.float64),
                           lib.arange(6., dtype=lib.float64) * 10)
        out.append(_arr(fwad.unpack_dual(x.as_strided((2, 2), (1, 2), 1)).tangent))
        z = x.clone()
        z.as_strided_((2,), (2,), 1)
        out.append(_arr(fwad.unpack_dual(z).tangent))
        w = x.view(2, 3).t().as_strided((3,), (1,), 2)
        out.append(_arr(fwad.unpack_dual(w).tangent))
    return out


def test_as_strided_forward_ad_matches_torch(torch: Any) -> None:
    _same(_strided_forward_ad_run, torch)


def test_as_strided_refuses_to_run_under_vmap() -> None:
    from npgrad.func import vmap

    with pytest.raises(NotImplementedError, match="as_strided is not supported inside vmap"):
        vmap(lambda t: t.as_strided((2,), (1,), 1))(npgrad.ones(3, 4))
    with pytest.raises(NotImplementedError, match="as_strided is not supported inside vmap"):
        vmap(lambda t: t.clone().as_strided_((2,), (1,), 1))(npgrad.ones(3, 4))
