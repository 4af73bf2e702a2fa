"""npgrad.func (torch.func) against real torch: every transform's values, shapes, dtypes and
errors, composed transforms, vmap's semantics, and the autograd entry points built on vmap."""
from __future__ import annotations

import numpy as np
import pytest

import npgrad
from npgrad import func as nf
from npgrad.func._pytree import tree_flatten

torch = pytest.importorskip("torch")
import torch.func as tf  # noqa: E402


# -- helpers --------------------------------------------------------------------------------

def _np(x):
    if isinstance(x, (npgrad.Tensor, torch.Tensor)):
        return x.detach().numpy()
    return x


def assert_tree_close(mine, theirs, rtol=1e-6, atol=1e-7):
    """Same structure; every tensor leaf: same shape, dtype and values."""
    m_leaves, m_spec = tree_flatten(mine)
    t_leaves, t_spec = tree_flatten(theirs)
    assert str(m_spec) == str(t_spec)
    for a, b in zip(m_leaves, t_leaves):
        if isinstance(b, torch.Tensor):
            assert isinstance(a, npgrad.Tensor)
            assert tuple(a.shape) == tuple(b.shape)
            assert str(a.dtype).split(".")[1] == str(b.dtype).split(".")[1]
            np.testing.assert_allclose(_np(a), _np(b), rtol=rtol, atol=atol)
        else:
            assert a == b


def both(*arrays):
    """The same data as npgrad and torch tensors."""
    return ([npgrad.tensor(a) for a in arrays], [torch.tensor(a) for a in arrays])


def raises_same(fn_np, fn_torch):
    """Both raise: torch's exception type (or a subclass) and the same message text."""
    with pytest.raises(Exception) as theirs:
        fn_torch()
    with pytest.raises(Exception) as mine:
        fn_np()
    assert isinstance(mine.value, type(theirs.value)), (mine.value, theirs.value)
    assert str(mine.value) == str(theirs.value)


RNG = np.random.default_rng(0)
X = RNG.standard_normal((4, 3))
Y = RNG.standard_normal((4, 3))
V = RNG.standard_normal(3)


def _mods():
    return ((npgrad, nf), (torch, tf))


# -- grad / grad_and_value ------------------------------------------------------------------

@pytest.mark.parametrize("argnums", [0, 1, (0, 1), (1, 0), -1])
def test_grad_argnums(argnums):
    outs = []
    for m, F in _mods():
        x, y = m.tensor(X), m.tensor(Y)
        outs.append(F.grad(lambda a, b: (a.sin() * b ** 2).sum(), argnums=argnums)(x, y))
    assert_tree_close(*outs)


def test_grad_and_value_has_aux_and_pytree_inputs():
    outs = []
    for m, F in _mods():
        d = {"w": m.tensor(X), "b": [m.tensor(V)]}

        def f(p):
            out = (p["w"] @ p["b"][0]).tanh().sum()
            return out, {"out": out * 2, "n": p["w"].norm()}
        outs.append(F.grad_and_value(f, has_aux=True)(d))
    assert_tree_close(*outs)


def test_grad_results_are_detached_unless_tracked():
    x = npgrad.tensor(V)
    g = nf.grad(lambda a: (a ** 3).sum())(x)
    assert g.grad_fn is None and not g.requires_grad
    xt = npgrad.tensor(V, requires_grad=True)
    g = nf.grad(lambda a: (a ** 3).sum())(xt)
    assert g.requires_grad  # user autograd composes with the transform, as torch
    g.sum().backward()
    np.testing.assert_allclose(_np(xt.grad), 6 * V)
    w = npgrad.tensor(V, requires_grad=True)  # a captured parameter keeps the graph
    g = nf.grad(lambda a: (a * w).sum() * (a * w).sum())(npgrad.tensor(V))
    assert g.requires_grad
    with npgrad.no_grad():  # grad still differentiates under no_grad, returns plain tensors
        g = nf.grad(lambda a: (a ** 3).sum())(xt)
    assert not g.requires_grad
    np.testing.assert_allclose(_np(g), 3 * V ** 2)


def test_grad_unused_input_and_constant_output_give_zeros():
    outs = []
    for m, F in _mods():
        x, y = m.tensor(X), m.tensor(Y)
        outs.append((F.grad(lambda a, b: a.sum(), argnums=1)(x, y),
                     F.grad(lambda a: m.tensor(1.0, dtype=m.float64))(x)))
    assert_tree_close(*outs)


GRAD_ERRORS = [
    ("nonscalar", lambda m, F: F.grad(lambda a: a)(m.tensor(X))),
    ("nontensor", lambda m, F: F.grad(lambda a: 3.0)(m.tensor(X))),
    ("int_input", lambda m, F: F.grad(lambda a: a.sum())(m.tensor([1, 2]))),
    ("aux_not_tuple", lambda m, F: F.grad(lambda a: a.sum(), has_aux=True)(m.tensor(X))),
    ("aux_short", lambda m, F: F.grad(lambda a: (a.sum(),), has_aux=True)(m.tensor(X))),
    ("aux_nontensor", lambda m, F: F.grad(lambda a: (a.sum(), 3), has_aux=True)(m.tensor(X))),
    ("argnum_range", lambda m, F: F.grad(lambda a: a.sum(), argnums=1)(m.tensor(X))),
    ("argnum_float", lambda m, F: F.grad(lambda a: a.sum(), argnums=1.0)(m.tensor(X))),
    ("argnum_empty", lambda m, F: F.grad(lambda a: a.sum(), argnums=())(m.tensor(X))),
    ("argnum_dup", lambda m, F: F.grad(lambda a, b: a.sum(), argnums=(0, 0))(m.tensor(X),
                                                                            m.tensor(X))),
    ("float_arg", lambda m, F: F.grad(lambda a: a.sum())(3.0)),
    ("no_args", lambda m, F: F.grad(lambda: m.tensor(1.0))()),
]


@pytest.mark.parametrize("name,call", GRAD_ERRORS, ids=[e[0] for e in GRAD_ERRORS])
def test_grad_errors(name, call):
    raises_same(lambda: call(npgrad, nf), lambda: call(torch, tf))


# -- vjp / jvp / linearize ------------------------------------------------------------------

def test_vjp_pytrees_and_aux():
    outs = []
    for m, F in _mods():
        x, y = m.tensor(X), m.tensor(Y)

        def f(a, b):
            return (a * b, [a.exp().sum(0)]), b.sum()
        out, vjp_fn, aux = F.vjp(f, x, y, has_aux=True)
        ct = (m.ones(4, 3, dtype=m.float64), [m.tensor(V)])
        outs.append((out, vjp_fn(ct), aux))
    assert_tree_close(*outs)


def test_vjp_fn_reusable_and_outputs_without_grad():
    outs = []
    for m, F in _mods():
        x = m.tensor(X)
        out, fn = F.vjp(lambda a: (a ** 2, m.zeros(2, dtype=m.float64)), x)
        c = (m.ones(4, 3, dtype=m.float64), m.ones(2, dtype=m.float64))
        outs.append((fn(c), fn(c)))
    assert_tree_close(*outs)


VJP_ERRORS = [
    ("nontensor_out", lambda m, F: F.vjp(lambda a: 3, m.tensor(X))),
    ("aux", lambda m, F: F.vjp(lambda a: a, m.tensor(X), has_aux=True)),
    ("primal_float", lambda m, F: F.vjp(lambda a: a, 3.0)),
    ("ct_shape", lambda m, F: F.vjp(lambda a: a, m.tensor(X))[1](m.ones(2, dtype=m.float64))),
    ("ct_structure", lambda m, F: F.vjp(lambda a: a, m.tensor(X))[1](
        (m.tensor(X), m.tensor(X)))),
    ("ct_nested", lambda m, F: F.vjp(lambda a: (a, [a, {"k": a}]), m.tensor(X))[1](
        (m.tensor(X),))),
]


@pytest.mark.parametrize("name,call", VJP_ERRORS, ids=[e[0] for e in VJP_ERRORS])
def test_vjp_errors(name, call):
    raises_same(lambda: call(npgrad, nf), lambda: call(torch, tf))


def test_jvp_and_linearize():
    outs = []
    for m, F in _mods():
        x, y = m.tensor(X), m.tensor(Y)
        f = lambda a, b: ((a * b).sin(), {"s": (a ** 2).sum(1)})  # noqa: E731
        p, t = F.jvp(f, (x, y), (m.tensor(Y), m.tensor(X)))
        out, aux_t, aux = F.jvp(lambda a: (a.exp(), a.sum()), (x,), (y,), has_aux=True)
        lin_out, jvp_fn = F.linearize(lambda a: a.sin() * a, x)
        outs.append((p, t, out, aux_t, aux, lin_out, jvp_fn(y), jvp_fn(x)))
    assert_tree_close(*outs)


JVP_ERRORS = [
    ("not_tuple", lambda m, F: F.jvp(lambda a: a, m.tensor(X), (m.tensor(X),))),
    ("structure", lambda m, F: F.jvp(lambda a: a, (m.tensor(X),), m.tensor(X))),
    ("length", lambda m, F: F.jvp(lambda a: a, (m.tensor(X),), (m.tensor(X), m.tensor(X)))),
    ("empty", lambda m, F: F.jvp(lambda: m.tensor(X), (), ())),
    ("shape", lambda m, F: F.jvp(lambda a: a, (m.tensor(X),), (m.ones(2, dtype=m.float64),))),
    ("nontensor_out", lambda m, F: F.jvp(lambda a: 3, (m.tensor(X),), (m.tensor(X),))),
    ("int_primal", lambda m, F: F.jvp(lambda a: a, (m.tensor([1, 2]),), (m.tensor([1, 2]),))),
    ("float_primal", lambda m, F: F.jvp(lambda a: a, (3.0,), (3.0,))),
    ("float_tangent", lambda m, F: F.jvp(lambda a: a, (m.tensor(X),), (3.0,))),
    ("aux", lambda m, F: F.jvp(lambda a: a, (m.tensor(X),), (m.tensor(X),), has_aux=True)),
]


@pytest.mark.parametrize("name,call", JVP_ERRORS, ids=[e[0] for e in JVP_ERRORS])
def test_jvp_errors(name, call):
    raises_same(lambda: call(npgrad, nf), lambda: call(torch, tf))


# -- Jacobians and Hessians -----------------------------------------------------------------

def _f_multi(m):
    return lambda a, b: {"p": (a * b).tanh(), "q": [a.sum() * b[0]]}


@pytest.mark.parametrize("which", ["jacrev", "jacfwd"])
@pytest.mark.parametrize("argnums", [0, 1, (0, 1)])
def test_jacobians_pytrees(which, argnums):
    outs = []
    for m, F in _mods():
        x, y = m.tensor(X[:2]), m.tensor(Y[:2])
        outs.append(getattr(F, which)(_f_multi(m), argnums=argnums)(x, y))
    assert_tree_close(*outs)


@pytest.mark.parametrize("which", ["jacrev", "jacfwd"])
def test_jacobian_has_aux_and_float32(which):
    outs = []
    for m, F in _mods():
        x = m.tensor(X.astype(np.float32))
        outs.append(getattr(F, which)(lambda a: (a.sin() * 3, a.cos().sum()), has_aux=True)(x))
    assert_tree_close(*outs, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("outer,inner", [("jacrev", "jacrev"), ("jacfwd", "jacrev"),
                                         ("jacrev", "jacfwd"), ("jacfwd", "jacfwd")])
def test_second_order_compositions(outer, inner):
    outs = []
    for m, F in _mods():
        x = m.tensor(V)
        f = lambda a: (a.sin() * a.sum()).exp()  # noqa: E731
        j = getattr(F, outer)(getattr(F, inner)(f))(x)
        assert not j.requires_grad
        outs.append(j)
    assert_tree_close(*outs)


def test_hessian_argnums_and_against_finite_differences():
    outs = []
    for m, F in _mods():
        x, y = m.tensor(V), m.tensor(V[::-1].copy())
        f = lambda a, b: (a.sin() * b ** 2).sum() + (a * b).sum() ** 2  # noqa: E731
        outs.append((F.hessian(f)(x, y), F.hessian(f, argnums=(0, 1))(x, y)))
    assert_tree_close(*outs)
    h = _np(outs[0][0])
    f_np = lambda a: (np.sin(a) * V[::-1] ** 2).sum() + (a * V[::-1]).sum() ** 2  # noqa: E731
    eps, fd = 1e-4, np.zeros((3, 3))
    for i in range(3):
        for j in range(3):
            e_i, e_j = np.eye(3)[i] * eps, np.eye(3)[j] * eps
            fd[i, j] = (f_np(V + e_i + e_j) - f_np(V + e_i - e_j) - f_np(V - e_i + e_j)
                        + f_np(V - e_i - e_j)) / (4 * eps * eps)
    np.testing.assert_allclose(h, fd, rtol=1e-5, atol=1e-6)


def test_grad_of_grad_and_jacrev_errors():
    outs = []
    for m, F in _mods():
        x = m.tensor(V)
        outs.append(F.grad(lambda a: F.grad(lambda b: (b ** 3).sum())(a).sum())(x))
    assert_tree_close(*outs)
    for call in (lambda m, F: F.jacrev(lambda a: 3)(m.tensor(X)),
                 lambda m, F: F.jacfwd(lambda a: 3)(m.tensor(X)),
                 lambda m, F: F.hessian(lambda a: 3)(m.tensor(X)),
                 lambda m, F: F.jacrev(lambda a: a, has_aux=True)(m.tensor(X)),
                 lambda m, F: F.jacfwd(lambda a: a * m.rand(3))(m.tensor(X))):
        raises_same(lambda: call(npgrad, nf), lambda: call(torch, tf))


# -- vmap -----------------------------------------------------------------------------------

def test_vmap_in_dims_out_dims_pytrees():
    outs = []
    for m, F in _mods():
        x, y = m.tensor(X), m.tensor(Y)
        f = lambda d, s: ({"a": d["x"] * s, "b": d["y"].sum()}, d["x"][0])  # noqa: E731
        outs.append(F.vmap(f, in_dims=({"x": 1, "y": 0}, None), out_dims=({"a": 1, "b": 0}, -1))(
            {"x": x, "y": y.T.contiguous()}, m.tensor(V[0])))
        outs.append(F.vmap(lambda a, b=None: a + b)(x, b=m.tensor(V)))
        outs.append(F.vmap(lambda a: (a, 3), out_dims=(0, None))(x))
        outs.append(F.vmap(lambda a: m.ones(2, dtype=m.float64))(x))
        outs.append(F.vmap(lambda a: m.ones(2), out_dims=None)(x))
        outs.append(F.vmap(lambda a: a * 2)(m.tensor(np.arange(6).reshape(3, 2))))
        outs.append(F.vmap(lambda a: a.sum(), in_dims=-1)(x))
        outs.append(F.vmap(lambda a: a * 2)(m.zeros(0, 2)))
        outs.append(F.vmap(lambda a: a.cumsum(0), chunk_size=3)(x))
    assert_tree_close(outs[:9], outs[9:])


def test_vmap_nested_and_composed():
    outs = []
    for m, F in _mods():
        x, y = m.tensor(X), m.tensor(Y)
        outs.append(F.vmap(F.vmap(lambda a, b: a * b + a.sum()))(x, y))
        outs.append(F.vmap(F.vmap(lambda a, b: a * b, in_dims=(None, 0)), in_dims=(0, None))(
            x, y))
        outs.append(F.vmap(F.grad(lambda a: (a.sin() * a).sum()))(x))
        outs.append(F.vmap(F.jacrev(lambda a: a.exp() * a.sum()))(x))
        outs.append(F.vmap(F.jacfwd(lambda a: a.exp() * a.sum()))(x))
        outs.append(F.vmap(F.hessian(lambda a: (a ** 3).sum()))(x))
        outs.append(F.grad(lambda a: F.vmap(lambda r: (r ** 2).sum())(a).sum())(x))
        outs.append(F.jacrev(F.vmap(lambda r: r.sin()))(x[:2]))
    assert_tree_close(outs[:8], outs[8:])


def test_vmap_of_ops_with_batching_rules():
    outs = []
    for m, F in _mods():
        x, y = m.tensor(X), m.tensor(Y)
        outs.append(F.vmap(m.sin)(x))
        outs.append(F.vmap(m.add, in_dims=(1, None))(x, m.tensor(V[:1].copy())))
        outs.append(F.vmap(m.mul, in_dims=(0, 1))(x[:3, :3], y[:3]))
        outs.append(F.vmap(m.maximum, in_dims=(0, None), out_dims=1)(x, m.tensor(V)))
        outs.append(F.vmap(m.div, chunk_size=3)(x, y))
        outs.append(F.vmap(m.add)(x.float(), m.tensor(V[:4 - 1].copy()).double()[:1].expand(4)))
        outs.append(F.vmap(m.mul)(m.tensor(np.arange(4)), m.tensor(V[:1].copy()).expand(4)))
    assert_tree_close(outs[:7], outs[7:])
    from npgrad.func._batched import RULES

    assert "sin" in RULES and "add" in RULES


def test_vmap_gradients_flow_through():
    grads = []
    for m, F in _mods():
        x = m.tensor(X, requires_grad=True)
        (F.vmap(lambda r: (r ** 2).sum() * r)(x) ** 2).sum().backward()
        grads.append(x.grad)
    assert_tree_close(*grads)


VMAP_ERRORS = [
    ("item", lambda m, F: F.vmap(lambda t: t.item())(m.tensor(V))),
    ("control_flow", lambda m, F: F.vmap(lambda t: t if t else -t)(m.tensor(V))),
    ("inplace_copy", lambda m, F: F.vmap(lambda t: CAPTURED[m].copy_(t))(m.tensor(X))),
    ("inplace_mul", lambda m, F: F.vmap(lambda t: CAPTURED[m].mul_(t))(m.tensor(X[:, :2]))),
    ("inplace_add", lambda m, F: F.vmap(lambda t: CAPTURED[m].add_(t))(m.tensor(X[:, :2]))),
    ("inplace_sub", lambda m, F: F.vmap(lambda t: CAPTURED[m].sub_(t))(m.tensor(X[:, :2]))),
    ("inplace_fill", lambda m, F: F.vmap(lambda t: CAPTURED[m].fill_(t[0]))(m.tensor(X))),
    ("inplace_pow", lambda m, F: F.vmap(lambda t: CAPTURED[m].pow_(t))(m.tensor(X[:, :2]))),
    ("inplace_index_add", lambda m, F: F.vmap(lambda t: CAPTURED[m].index_add_(
        0, m.tensor([0, 1]), t))(m.tensor(X[:, :2]))),
    ("setitem_advanced", lambda m, F: F.vmap(lambda t: CAPTURED[m].__setitem__(
        [0, 1], t))(m.tensor(X[:, :2]))),
    ("inplace_nested_level", lambda m, F: F.vmap(F.vmap(lambda t: CAPTURED[m].pow_(t)))(
        m.tensor(X[:, :2]).unsqueeze(0))),
    ("random", lambda m, F: F.vmap(lambda t: t + m.rand(3, dtype=m.float64))(m.tensor(X))),
    ("randn_like", lambda m, F: F.vmap(lambda t: m.randn_like(t))(m.tensor(X))),
    ("dropout", lambda m, F: F.vmap(lambda t: m.nn.functional.dropout(t))(m.tensor(X))),
    ("randomness_value", lambda m, F: F.vmap(lambda t: t, randomness="foo")),
    ("in_dims_len", lambda m, F: F.vmap(lambda a, b: a + b, in_dims=(0,))(m.tensor(X),
                                                                          m.tensor(X))),
    ("in_dims_type", lambda m, F: F.vmap(lambda a: a, in_dims="a")(m.tensor(X))),
    ("in_dims_list", lambda m, F: F.vmap(lambda a: a, in_dims=[0])(m.tensor(X))),
    ("in_dims_none", lambda m, F: F.vmap(lambda a: a, in_dims=None)(m.tensor(X))),
    ("in_dims_float", lambda m, F: F.vmap(lambda a: a, in_dims=(0.5,))(m.tensor(X))),
    ("in_dims_range", lambda m, F: F.vmap(lambda a: a, in_dims=2)(m.tensor(X))),
    ("in_dims_nested", lambda m, F: F.vmap(lambda a: a, in_dims=((0,),))(m.tensor(X))),
    ("in_dims_nontensor", lambda m, F: F.vmap(lambda a, b: a, in_dims=(0, 0))(m.tensor(X), 3)),
    ("scalar_input", lambda m, F: F.vmap(lambda a: a)(m.tensor(1.0))),
    ("no_mapped", lambda m, F: F.vmap(lambda a: a, in_dims=(None,))(m.tensor(X))),
    ("no_inputs", lambda m, F: F.vmap(lambda: m.ones(2))()),
    ("sizes", lambda m, F: F.vmap(lambda a, b, c: a)(m.tensor(X), m.ones(5, 3), m.tensor(X))),
    ("nontensor_out", lambda m, F: F.vmap(lambda a: 3)(m.tensor(X))),
    ("nontensor_in_tuple", lambda m, F: F.vmap(lambda a: (a, 3))(m.tensor(X))),
    ("out_dims_range", lambda m, F: F.vmap(lambda a: a, out_dims=2)(m.tensor(X))),
    ("out_dims_structure", lambda m, F: F.vmap(lambda a: a, out_dims=(0, 1))(m.tensor(X))),
    ("out_dims_type", lambda m, F: F.vmap(lambda a: a, out_dims="a")(m.tensor(X))),
    ("out_dims_none_batched", lambda m, F: F.vmap(lambda a: a, out_dims=None)(m.tensor(X))),
    ("chunk_zero", lambda m, F: F.vmap(lambda a: a, chunk_size=0)),
    ("chunk_negative", lambda m, F: F.vmap(lambda a: a, chunk_size=-1)),
    ("chunk_float", lambda m, F: F.vmap(lambda a: a, chunk_size=1.5)(m.tensor(X))),
    ("jacrev_chunk", lambda m, F: F.jacrev(m.sin, chunk_size=0)),
    ("named_function", lambda m, F: F.vmap(m.sum, in_dims=(0, 0))(m.tensor(X), 3)),
]
CAPTURED: dict = {}


@pytest.mark.parametrize("name,call", VMAP_ERRORS, ids=[e[0] for e in VMAP_ERRORS])
def test_vmap_errors(name, call):
    CAPTURED[npgrad] = npgrad.zeros(3, dtype=npgrad.float64) if name == "inplace_copy" \
        else npgrad.zeros(2, dtype=npgrad.float64)
    CAPTURED[torch] = torch.zeros(3, dtype=torch.float64) if name == "inplace_copy" \
        else torch.zeros(2, dtype=torch.float64)
    raises_same(lambda: call(npgrad, nf), lambda: call(torch, tf))


def test_vmap_inplace_on_batched_and_unbatched_arguments_allowed():
    outs = []
    for m, F in _mods():
        c = m.tensor(V[:2].copy())
        outs.append(F.vmap(lambda t: t.add_(c))(m.tensor(X[:, :2].copy())))
        outs.append(F.vmap(lambda t: t.mul_(2.0))(m.tensor(X.copy())))
        outs.append(F.vmap(lambda t: t + m.tensor(2.0).item())(m.tensor(X)))
    assert_tree_close(outs[:3], outs[3:])


def test_vmap_randomness_same_matches_torch():
    outs = []
    for m, F in _mods():
        m.manual_seed(0)
        r = F.vmap(lambda t: t * 0 + m.rand(3, dtype=m.float64), randomness="same")(
            m.tensor(X))
        after = m.rand(2)
        outs.append((r, after))
    assert_tree_close(*outs)
    r = _np(outs[0][0])
    assert (r == r[0]).all()


def test_vmap_randomness_different_gives_each_slice_its_own_draws():
    npgrad.manual_seed(0)
    r = nf.vmap(lambda t: t * 0 + npgrad.randn(3), randomness="different")(
        npgrad.zeros(4, 1))
    npgrad.manual_seed(0)
    loop = npgrad.stack([npgrad.randn(3) for _ in range(4)])
    np.testing.assert_array_equal(_np(r), _np(loop))
    assert len({tuple(row) for row in _np(r)}) == 4


def test_vmap_randomness_same_with_dropout_is_one_mask():
    npgrad.manual_seed(1)
    out = nf.vmap(lambda t: npgrad.nn.functional.dropout(t, 0.5), randomness="same")(
        npgrad.ones(5, 40))
    assert (_np(out) == _np(out)[0]).all()
    torch.manual_seed(1)
    theirs = tf.vmap(lambda t: torch.nn.functional.dropout(t, 0.5), randomness="same")(
        torch.ones(5, 40))
    np.testing.assert_array_equal(_np(out), _np(theirs))


def test_vmap_state_is_clean_after_an_error():
    from npgrad._vmap_mode import VMAP

    with pytest.raises(RuntimeError):
        nf.vmap(lambda t: npgrad.rand(2))(npgrad.zeros(3))
    assert VMAP.depth == 0 and VMAP.levels == []
    assert isinstance(npgrad.rand(2), npgrad.Tensor)


# -- functional_call and stack_module_state --------------------------------------------------

class _Tied:
    @staticmethod
    def make(m):
        m.manual_seed(0)

        class Tied(m.nn.Module):
            def __init__(self):
                super().__init__()
                self.a = m.nn.Linear(2, 2)
                self.b = m.nn.Linear(2, 2)
                self.b.weight = self.a.weight
                self.register_buffer("scale", m.tensor([2.0, 3.0]))

            def forward(self, x):
                return self.b(self.a(x)) * self.scale
        return Tied()


def test_functional_call_tied_weights_buffers_and_dict_tuple():
    outs = []
    for m, F in _mods():
        mod = _Tied.make(m)
        x = m.tensor(X[:, :2].astype(np.float32))
        w = m.tensor(np.array([[1.0, 2.0], [3.0, 4.0]], dtype=np.float32), requires_grad=True)
        b = m.tensor(np.array([0.5, -0.5], dtype=np.float32))
        out = F.functional_call(mod, ({"a.weight": w, "a.bias": b}, {"scale": m.ones(2)}), (x,))
        out.sum().backward()
        untied = F.functional_call(mod, {"a.weight": w}, x, tie_weights=False)
        outs.append((out, w.grad, untied.detach(), mod.a.weight.grad))
        assert mod.b.weight is mod.a.weight  # the module's own state is back
    assert_tree_close(*outs, rtol=1e-5, atol=1e-6)


FC_ERRORS = [
    ("strict_unexpected", lambda m, F: F.functional_call(
        m.nn.Linear(2, 2), {"zz": m.ones(2), "aa": m.ones(1), "weight": m.ones(2, 2)},
        (m.ones(2),), strict=True)),
    ("strict_missing", lambda m, F: F.functional_call(
        _Tied.make(m), {"a.weight": m.ones(2, 2)}, (m.ones(2),), strict=True)),
    ("strict_missing_untied", lambda m, F: F.functional_call(
        _Tied.make(m), {"a.weight": m.ones(2, 2)}, (m.ones(2),), strict=True,
        tie_weights=False)),
    ("tied_conflict", lambda m, F: F.functional_call(
        _Tied.make(m), {"a.weight": m.ones(2, 2), "b.weight": m.zeros(2, 2)}, (m.ones(2),))),
    ("duplicate", lambda m, F: F.functional_call(
        m.nn.Linear(2, 2), ({"weight": m.ones(2, 2)}, {"weight": m.ones(2, 2)}), (m.ones(2),))),
    ("bad_dicts", lambda m, F: F.functional_call(m.nn.Linear(2, 2), 3, (m.ones(2),))),
    ("stack_empty", lambda m, F: F.stack_module_state([])),
    ("stack_class", lambda m, F: F.stack_module_state([m.nn.Linear(2, 2), m.nn.Conv1d(2, 2, 1)])),
    ("stack_mode", lambda m, F: F.stack_module_state([m.nn.Linear(2, 2),
                                                      m.nn.Linear(2, 2).eval()])),
    ("stack_shapes", lambda m, F: F.stack_module_state([m.nn.Linear(2, 2), m.nn.Linear(2, 3)])),
]


@pytest.mark.parametrize("name,call", FC_ERRORS, ids=[e[0] for e in FC_ERRORS])
def test_functional_call_errors(name, call):
    raises_same(lambda: call(npgrad, nf), lambda: call(torch, tf))


def test_functional_call_unexpected_key_non_strict_is_ignored_after_the_call():
    lin = npgrad.nn.Linear(2, 2)
    nf.functional_call(lin, {"foo": npgrad.ones(2)}, (npgrad.ones(2),))
    assert not hasattr(lin, "foo")


def test_stack_module_state():
    mods = [npgrad.nn.BatchNorm1d(2) for _ in range(3)]
    params, buffers = nf.stack_module_state(mods)
    assert list(params) == ["weight", "bias"] and list(buffers) == [
        "running_mean", "running_var", "num_batches_tracked"]
    for p in params.values():
        assert p.shape == (3, 2) and p.is_leaf and p.requires_grad
    assert buffers["num_batches_tracked"].dtype == npgrad.int64
    assert not buffers["running_var"].requires_grad


# -- README examples (each against torch) -----------------------------------------------------

def _mlp(m, seed):
    m.manual_seed(seed)
    return m.nn.Sequential(m.nn.Linear(5, 8), m.nn.Tanh(), m.nn.Linear(8, 3))


XS = np.random.default_rng(5).standard_normal((6, 5)).astype(np.float32)


def test_readme_per_sample_gradients():
    outs = []
    for m, F in _mods():
        model = _mlp(m, 0)
        params = {k: v.detach() for k, v in model.named_parameters()}
        x = m.tensor(XS)
        y = m.tensor([0, 1, 2, 0, 1, 2])

        def loss(p, xi, yi):
            logits = F.functional_call(model, p, (xi.unsqueeze(0),))
            return m.nn.functional.cross_entropy(logits, yi.unsqueeze(0))
        outs.append(F.vmap(F.grad(loss), in_dims=(None, 0, 0))(params, x, y))
    assert_tree_close(*outs, rtol=1e-5, atol=1e-6)


def test_readme_ensemble():
    outs = []
    for m, F in _mods():
        models = [_mlp(m, s) for s in range(4)]
        params, buffers = F.stack_module_state(models)
        base = _mlp(m, 9)
        x = m.tensor(np.linspace(-1, 1, 10, dtype=np.float32).reshape(2, 5))

        def call(p, b, xx):
            return F.functional_call(base, (p, b), (xx,))
        outs.append(F.vmap(call, in_dims=(0, 0, None))(params, buffers, x))
    assert_tree_close(*outs, rtol=1e-5, atol=1e-6)


def test_readme_hessian_of_a_loss():
    outs = []
    for m, F in _mods():
        w = m.tensor(V)
        xs = m.tensor(X)
        ys = m.tensor(Y[:, 0].copy())
        outs.append(F.hessian(lambda ww: ((xs @ ww - ys) ** 2).mean() + ww.sin().sum())(w))
    assert_tree_close(*outs)


# -- the autograd entry points built on vmap -------------------------------------------------

def test_is_grads_batched():
    outs = []
    for m, _ in _mods():
        a = m.tensor(V, requires_grad=True)
        b = m.tensor(V[:2].copy(), requires_grad=True)
        r1 = m.autograd.grad([a ** 2, b * 3], [a, b], [m.tensor(X), m.tensor(Y[:, :2].copy())],
                             is_grads_batched=True)
        r2 = m.autograd.grad([a * 2], [a, b], [m.tensor(X)], is_grads_batched=True,
                             allow_unused=True)
        r3 = m.autograd.grad([a * 2], [a, b], [m.tensor(X)], is_grads_batched=True,
                             allow_unused=True, materialize_grads=True)
        g, = m.autograd.grad(a ** 3, a, m.eye(3, dtype=m.float64), is_grads_batched=True,
                             create_graph=True)
        g2, = m.autograd.grad(g.sum(), a)
        outs.append((r1, r2, r3, g.detach(), g2))
    assert_tree_close(*outs)


IS_BATCHED_ERRORS = [
    ("shape", lambda m: m.autograd.grad(
        IB[m] * 2, IB[m], m.ones(4, 3, 1, dtype=m.float64), is_grads_batched=True)),
    ("shape2", lambda m: m.autograd.grad(
        IB[m] * 2, IB[m], m.ones(2, 2, dtype=m.float64), is_grads_batched=True)),
    ("zero_dim_given", lambda m: m.autograd.grad(
        IB[m].sum(), IB[m], m.tensor(1.0, dtype=m.float64), is_grads_batched=True)),
    ("zero_dim_default", lambda m: m.autograd.grad(IB[m].sum(), IB[m], None,
                                                   is_grads_batched=True)),
]
IB: dict = {}


@pytest.mark.parametrize("name,call", IS_BATCHED_ERRORS, ids=[e[0] for e in IS_BATCHED_ERRORS])
def test_is_grads_batched_errors(name, call):
    IB[npgrad] = npgrad.tensor(V, requires_grad=True)
    IB[torch] = torch.tensor(V, requires_grad=True)
    raises_same(lambda: call(npgrad), lambda: call(torch))


@pytest.mark.parametrize("create_graph", [False, True])
def test_jacobian_and_hessian_vectorize(create_graph):
    outs = []
    for m, _ in _mods():
        fn = m.autograd.functional
        x, y = m.tensor(V, requires_grad=True), m.tensor(V[::-1].copy())
        f = lambda a, b: ((a ** 2) * b, a.sum() * b.exp(), m.zeros(2, dtype=m.float64))  # noqa
        j = fn.jacobian(f, (x, y), create_graph=create_graph, vectorize=True)
        h = fn.hessian(lambda a, b: (a.sin() * b).sum() * a.sum(), (x, y),
                       create_graph=create_graph, vectorize=True)
        outs.append((j, h))
        assert all(t.requires_grad == create_graph for t in tree_flatten(outs[-1])[0][:2])
    assert_tree_close(*[[tree_flatten(o)[0][k].detach() for k in range(len(tree_flatten(o)[0]))]
                        for o in outs])
    raises_same(lambda: npgrad.autograd.functional.jacobian(lambda a: a, npgrad.tensor(V),
                                                            strict=True, vectorize=True),
                lambda: torch.autograd.functional.jacobian(lambda a: a, torch.tensor(V),
                                                           strict=True, vectorize=True))


def test_gradcheck_batched_grad():
    x = npgrad.tensor(X, requires_grad=True)
    assert npgrad.autograd.gradcheck(lambda a: (a.sin() * a).sum(1), (x,),
                                     check_batched_grad=True)
    assert npgrad.autograd.gradgradcheck(lambda a: a.exp() * a, (x,), check_batched_grad=True)

    class Nonlinear(npgrad.autograd.Function):  # backward not linear in grad_output
        @staticmethod
        def forward(ctx, a):
            return a * 2

        @staticmethod
        def backward(ctx, g):
            return g * g.abs() * 0 + 2 * g + 1e-3 * g ** 2

    with pytest.raises(RuntimeError, match="failed while testing batched gradient"):
        npgrad.autograd.gradcheck(Nonlinear.apply, (x,), check_batched_grad=True, atol=1e-2)


def test_readme_func_section_prints_what_torch_prints():
    import contextlib
    import io
    from pathlib import Path

    readme = (Path(__file__).resolve().parent.parent / "README.md").read_text()
    section = readme.split("## torch.func:", 1)[1]
    block = section.split("```python\n", 1)[1].split("```", 1)[0]
    printed = []
    for source in (block, block.replace("import npgrad as torch", "import torch")
                   .replace("from npgrad.func import", "from torch.func import")):
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            exec(source, {"__name__": "readme"})
        printed.append(out.getvalue())
    assert printed[0] == printed[1]
    assert printed[0].count("True") == 2


def _docs_examples(m, F):
    """torch.func's documentation examples (and autograd.functional's vectorized ones)."""
    m.manual_seed(0)
    x, y = m.randn(2, 5), m.randn(2, 5)
    out, lin = F.linearize(m.sin, x[0])
    return [
        F.vmap(m.dot)(x, y),
        F.vmap(m.mv, in_dims=(0, None))(m.randn(2, 5, 5), m.randn(5)),
        F.vmap(lambda a: m.sum(a, 0), in_dims=1)(x),
        F.jacrev(m.sin)(x[0]),
        F.jacrev(lambda a, b: a * b.sin(), argnums=(0, 1))(x[0], y[0]),
        F.jacfwd(m.sin)(x[0]),
        F.hessian(m.sin)(m.tensor(1.5)),
        F.hessian(lambda a: a.sin().sum())(x[0]),
        F.jvp(m.sin, (x[0],), (m.ones(5),)),
        F.vjp(m.sin, x[0])[1](m.ones(5)),
        (out, lin(m.ones(5))),
        F.vmap(F.jacrev(m.sin))(x),
        F.grad(F.grad(m.sin))(m.tensor(1.0)),
        F.vmap(F.grad(m.sin))(m.randn(4)),
        m.autograd.functional.hessian(lambda a: a.sin().sum(), x[0], vectorize=True,
                                      outer_jacobian_strategy="forward-mode"),
        m.autograd.functional.jacobian(lambda a: a.exp(), x[0], vectorize=True,
                                       strategy="forward-mode"),
        m.autograd.functional.jacobian(lambda a, b: (a.exp() * b, a.sum()), (x[0], y[0]),
                                       vectorize=True),
    ]


def test_torch_documentation_examples():
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch's linearize warns from torch.fx
        theirs = _docs_examples(torch, tf)
    mine = _docs_examples(npgrad, nf)
    for a, b in zip(mine, theirs):
        assert_tree_close(list(a) if isinstance(a, tuple) else a,
                          list(b) if isinstance(b, tuple) else b, rtol=1e-5, atol=1e-6)


def _per_sample_grads_tutorial(m, F):
    """torch.func's per-sample-gradients tutorial: a small CNN (conv, relu, max_pool2d,
    linear, log_softmax, nll_loss), ``vmap(grad(loss), in_dims=(None, None, 0, 0))`` over
    ``functional_call(model, (params, buffers), ...)``."""
    nnf = m.nn.functional

    class SimpleCNN(m.nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = m.nn.Conv2d(1, 4, 3, 1)
            self.conv2 = m.nn.Conv2d(4, 6, 3, 1)
            self.fc1 = m.nn.Linear(6, 8)
            self.fc2 = m.nn.Linear(8, 10)

        def forward(self, x):
            x = nnf.max_pool2d(nnf.relu(self.conv2(nnf.relu(self.conv1(x)))), 2)
            x = nnf.relu(self.fc1(m.flatten(x, 1)))
            return nnf.log_softmax(self.fc2(x), dim=1)

    m.manual_seed(0)
    model = SimpleCNN()
    data = m.tensor(np.random.default_rng(1).standard_normal((8, 1, 6, 6)).astype(np.float32))
    targets = m.tensor(np.arange(8) % 10)
    params = {k: v.detach() for k, v in model.named_parameters()}
    buffers = {k: v.detach() for k, v in model.named_buffers()}

    def compute_loss(params, buffers, sample, target):
        predictions = F.functional_call(model, (params, buffers), (sample.unsqueeze(0),))
        return nnf.nll_loss(predictions, target.unsqueeze(0))

    per_sample = F.vmap(F.grad(compute_loss), in_dims=(None, None, 0, 0))(params, buffers, data,
                                                                          targets)
    looped = {k: m.stack([F.grad(compute_loss)(params, buffers, data[i], targets[i])[k]
                          for i in range(8)]) for k in params}
    return per_sample, looped


def test_per_sample_grads_tutorial():
    import warnings

    from npgrad.func import _vmap

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # every op of the CNN has a batching rule, as in torch
        original, _vmap._by_slices = _vmap._by_slices, None  # and none runs by slices
        try:
            mine, mine_loop = _per_sample_grads_tutorial(npgrad, nf)
        finally:
            _vmap._by_slices = original
    theirs, _ = _per_sample_grads_tutorial(torch, tf)
    for key in mine:
        np.testing.assert_allclose(_np(mine[key]), _np(mine_loop[key]), rtol=1e-5, atol=1e-6)
    assert_tree_close(mine, theirs, rtol=1e-4, atol=1e-6)


def _jacobians_tutorial(m, F):
    """torch.func's Jacobians-and-Hessians tutorial: ``predict(weight, bias, x)``."""
    m.manual_seed(0)
    d = 6
    weight, bias = m.randn(d, d), m.randn(d)
    x, xs = m.randn(d), m.randn(4, d)

    def predict(weight, bias, x):
        return m.nn.functional.linear(x, weight, bias).tanh()

    return [
        F.jacrev(predict, argnums=2)(weight, bias, x),
        F.jacfwd(predict, argnums=2)(weight, bias, x),
        F.jacrev(predict, argnums=(0, 1))(weight, bias, x),
        F.vmap(F.jacrev(predict, argnums=2), in_dims=(None, None, 0))(weight, bias, xs),
        F.vmap(F.jacfwd(predict, argnums=2), in_dims=(None, None, 0))(weight, bias, xs),
        F.jacrev(F.jacrev(predict, argnums=2), argnums=2)(weight, bias, x),
        F.jacfwd(F.jacrev(predict, argnums=2), argnums=2)(weight, bias, x),
        F.hessian(predict, argnums=2)(weight, bias, x),
        F.vmap(F.hessian(predict, argnums=2), in_dims=(None, None, 0))(weight, bias, xs),
    ]


def test_jacobians_hessians_tutorial():
    assert_tree_close(_jacobians_tutorial(npgrad, nf), _jacobians_tutorial(torch, tf),
                      rtol=1e-5, atol=1e-6)


def test_transforms_are_differentiable_gradcheck():
    """float64 gradcheck / gradgradcheck through vmap, grad, jacrev, jacfwd and functional_call."""
    gc = npgrad.autograd.gradcheck
    ggc = npgrad.autograd.gradgradcheck
    x = npgrad.tensor(X, requires_grad=True)
    v = npgrad.tensor(V, requires_grad=True)
    f = lambda a: (a.sin() * a.sum()).exp()  # noqa: E731
    assert gc(nf.vmap(f), (x,))
    assert ggc(nf.vmap(f, in_dims=1, out_dims=1), (x,))
    assert gc(nf.grad(lambda a: f(a).sum()), (v,))
    assert ggc(nf.grad(lambda a: f(a).sum()), (v,))
    assert gc(nf.jacrev(f), (v,))
    assert gc(nf.jacfwd(f), (v,))
    assert gc(lambda a, b: nf.vmap(nf.grad(lambda r, s: (r * s).sin().sum()),
                                   in_dims=(0, None))(a, b), (x, v))
    lin = npgrad.nn.Linear(3, 2).double()
    w = npgrad.tensor(RNG.standard_normal((2, 3)), requires_grad=True)
    assert gc(lambda ww: nf.functional_call(lin, {"weight": ww}, (x,)), (w,))


def test_results_track_outer_autograd_as_torch():
    flags = []
    for m, F in _mods():
        p = m.nn.Parameter(m.tensor(V))
        w = m.tensor(V, requires_grad=True)
        g = F.grad(lambda a: (a ** 3).sum())(p)
        o, fn = F.vjp(lambda a: a ** 3, p)
        row = [g.requires_grad, type(g.grad_fn).__name__, o.requires_grad,
               fn(m.ones(3, dtype=m.float64))[0].requires_grad,
               F.jacrev(lambda a: a ** 3)(p).requires_grad,
               [t.requires_grad for t in F.jvp(lambda a: a ** 3, (p,),
                                                (m.ones(3, dtype=m.float64),))],
               F.grad(lambda a: (a * w).sum())(m.tensor(V)).requires_grad,
               F.grad(lambda a: (a ** 3).sum())(m.tensor(V)).requires_grad,
               F.vmap(lambda a: a * 2)(m.tensor(X)).requires_grad]
        with m.no_grad():
            row.append(F.grad(lambda a: (a ** 3).sum())(p).requires_grad)
        flags.append(row)
    assert flags[0] == flags[1]
