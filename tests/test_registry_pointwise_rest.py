"""The last hand-written elementwise, special, activation and complex nodes as registry entries,
against torch: grad_fn names, torch's ``_saved_*`` attributes (names and values, None where
torch saves nothing), ``next_functions``, gradients and second gradients in float64, and
forward-mode tangents computed at once.  Views stay views of their input's storage."""
from __future__ import annotations

import numpy as np
import pytest

import npgrad
from torch_oracle import assert_same_error

torch = pytest.importorskip("torch")

_X = [[0.3, -1.2, 0.0], [2.0, -0.4, 0.9]]
_Y = [[0.5, 1.5, 2.5], [0.2, 0.7, 3.0]]
_LO = [[0.0, -0.5, 0.5], [2.5, -1.0, 0.0]]
_HI = [[0.5, 0.0, 1.0], [1.0, 1.0, 0.5]]  # hi < lo at [1][0]: max wins there
_W = [[0.1, 0.6, 0.9], [0.4, 1.2, -0.3]]
_MASK = [[True, False, True], [False, False, True]]
_NONFINITE = [[float("nan"), 1.5, -float("inf")], [float("inf"), -0.5, 2.0]]


def _leaves(m):
    """float64 leaves (each requires grad) and constants, for library ``m``."""
    f64 = m.float64
    leaves = {name: m.tensor(v, dtype=f64, requires_grad=True) for name, v in (
        ("x", _X), ("y", _Y), ("lo", _LO), ("hi", _HI), ("w", _W),
        ("nf", _NONFINITE), ("g", [[0.2, -0.3, 1.1, 0.4], [-0.7, 0.5, 0.8, -1.4]]))}
    leaves["v"] = m.tensor(1.75, dtype=f64, requires_grad=True)
    leaves["z"] = m.tensor([[1 + 2j, -0.5 + 0.25j], [3 - 1j, 0.75j]], dtype=m.complex128,
                           requires_grad=True)
    leaves["pairs"] = m.tensor([[0.5, -1.0], [2.0, 0.25], [-0.75, 1.5]], dtype=f64,
                               requires_grad=True)
    return leaves, {"mask": m.tensor(_MASK)}


# (name, op(m, leaves, consts)); each result's grad_fn is the entry's node
CASES = [
    ("clamp_tensor", lambda m, t, c: m.clamp(t["x"], t["lo"], t["hi"])),
    ("clamp_tensor_min", lambda m, t, c: t["x"].clamp(min=t["lo"])),
    ("clamp_tensor_max", lambda m, t, c: m.clamp(t["x"], None, t["hi"])),
    ("clamp_tensor_constant_min", lambda m, t, c: m.clamp(t["x"], t["lo"].detach(), t["hi"])),
    ("clamp_tensor_broadcast", lambda m, t, c: m.clamp(t["x"], t["lo"][0], t["hi"][1])),
    ("where", lambda m, t, c: m.where(c["mask"], t["x"], t["y"])),
    ("where_scalar_self", lambda m, t, c: m.where(c["mask"], 1.5, t["y"])),
    ("where_scalar_other", lambda m, t, c: m.where(c["mask"], t["x"], -2.0)),
    ("where_constant_other", lambda m, t, c: m.where(c["mask"], t["x"], t["y"].detach())),
    ("where_broadcast", lambda m, t, c: m.where(c["mask"][0], t["x"], t["y"][1])),
    ("masked_fill", lambda m, t, c: t["x"].masked_fill(c["mask"], 0.5)),
    ("masked_fill_tensor", lambda m, t, c: t["x"].masked_fill(c["mask"], t["v"])),
    ("masked_fill_tensor_only_value",
     lambda m, t, c: t["x"].detach().masked_fill(c["mask"], t["v"])),
    ("lerp_tensor", lambda m, t, c: m.lerp(t["x"], t["y"], t["w"])),
    ("lerp_tensor_constant_weight", lambda m, t, c: m.lerp(t["x"], t["y"], t["w"].detach())),
    ("lerp_tensor_only_weight",
     lambda m, t, c: m.lerp(t["x"].detach(), t["y"].detach(), t["w"])),
    ("xlogy", lambda m, t, c: m.xlogy(t["x"], t["y"])),
    ("xlogy_constant_other", lambda m, t, c: m.xlogy(t["x"], t["y"].detach())),
    ("xlogy_scalar_self", lambda m, t, c: m.xlogy(2.5, t["y"])),
    ("xlogy_scalar_other", lambda m, t, c: t["x"].xlogy(3.0)),
    ("xlogy_scalar_other_negative", lambda m, t, c: m.xlogy(t["x"], -1.0)),
    ("nan_to_num", lambda m, t, c: m.nan_to_num(t["nf"])),
    ("nan_to_num_values", lambda m, t, c: t["nf"].nan_to_num(0.5, 2.0, -2.0)),
    ("addcmul", lambda m, t, c: m.addcmul(t["x"], t["y"], t["w"], value=2)),
    ("addcmul_constant_tensor1", lambda m, t, c: m.addcmul(t["x"], t["y"].detach(), t["w"],
                                                           value=0.5)),
    ("addcmul_only_self", lambda m, t, c: t["x"].addcmul(t["y"].detach(), t["w"].detach())),
    ("addcdiv", lambda m, t, c: m.addcdiv(t["x"], t["w"], t["y"], value=2)),
    ("addcdiv_constant_tensor2", lambda m, t, c: m.addcdiv(t["x"], t["w"], t["y"].detach(),
                                                           value=-1.5)),
    ("addcdiv_only_self", lambda m, t, c: t["x"].addcdiv(t["w"].detach(), t["y"].detach())),
    ("glu", lambda m, t, c: m.nn.functional.glu(t["g"])),
    ("glu_dim0", lambda m, t, c: m.nn.functional.glu(t["g"], 0)),
    ("glu_dim_negative", lambda m, t, c: m.nn.functional.glu(t["g"].t(), -2)),
    ("conj", lambda m, t, c: t["z"].conj()),
    ("conj_physical", lambda m, t, c: m.conj_physical(t["z"])),
    ("view_as_real", lambda m, t, c: m.view_as_real(t["z"])),
    ("view_as_complex", lambda m, t, c: m.view_as_complex(t["pairs"])),
    ("complex", lambda m, t, c: m.complex(t["x"], t["y"])),
    ("complex_constant_real", lambda m, t, c: m.complex(t["x"].detach(), t["y"])),
    ("polar", lambda m, t, c: m.polar(t["y"], t["x"])),
    ("polar_broadcast", lambda m, t, c: m.polar(t["y"][0], t["x"])),
]
_IDS = [c[0] for c in CASES]


def _value(v):
    if hasattr(v, "detach"):
        return ("tensor", tuple(v.shape), v.detach().resolve_conj().numpy().tolist())
    return v


def _saved(node) -> dict:
    return {name: _value(getattr(node, name)) for name in dir(node)
            if name.startswith("_saved_") and name != "_saved_fields"}


def _edges(node) -> list:
    return [(None if fn is None else type(fn).__name__, nr) for fn, nr in node.next_functions]


def _loss(m, out):
    """A real, non-linear function of ``out`` (second derivatives are not all zero)."""
    if out.is_complex():
        return (out * out.conj()).real.sum() + (out * out).imag.sum()
    return (out * out).sum()


def _assert_close(ours, theirs, rtol=1e-10, atol=1e-12):
    assert (ours is None) == (theirs is None)
    if theirs is not None:
        np.testing.assert_allclose(ours.detach().resolve_conj().numpy(),
                                   theirs.detach().resolve_conj().numpy(), rtol=rtol, atol=atol)


@pytest.mark.parametrize("name, op", CASES, ids=_IDS)
def test_node_saved_values_and_edges_match_torch(name, op):
    (ours_in, ours_c), (theirs_in, theirs_c) = _leaves(npgrad), _leaves(torch)
    ours, theirs = op(npgrad, ours_in, ours_c), op(torch, theirs_in, theirs_c)
    assert type(ours.grad_fn).__name__ == type(theirs.grad_fn).__name__
    assert ours.grad_fn.name() == theirs.grad_fn.name()
    mine, torch_saved = _saved(ours.grad_fn), _saved(theirs.grad_fn)
    assert mine.keys() == torch_saved.keys()
    for key, value in torch_saved.items():
        got = mine[key]
        if isinstance(value, tuple) and value and value[0] == "tensor":
            assert isinstance(got, tuple) and got[:2] == value[:2], key
            np.testing.assert_allclose(got[2], value[2], rtol=1e-12, err_msg=key)
        else:
            assert got == value, key
    assert _edges(ours.grad_fn) == _edges(theirs.grad_fn)
    assert ours.dtype.is_complex == theirs.dtype.is_complex
    _assert_close(ours, theirs)


@pytest.mark.parametrize("name, op", CASES, ids=_IDS)
def test_gradients_and_second_gradients_match_torch(name, op):
    results = []
    for m in (npgrad, torch):
        leaves, consts = _leaves(m)
        out = op(m, leaves, consts)
        inputs = [t for t in leaves.values()]
        grads = m.autograd.grad(_loss(m, out), inputs, create_graph=True, allow_unused=True)
        used = [(x, g) for x, g in zip(inputs, grads) if g is not None]
        total = sum(_loss(m, g) for _, g in used)
        second = m.autograd.grad(total, [x for x, _ in used], allow_unused=True)
        results.append((grads, second))
    (our_grads, our_second), (their_grads, their_second) = results
    for a, b in zip(our_grads, their_grads):
        _assert_close(a, b)
    assert len(our_second) == len(their_second)
    for a, b in zip(our_second, their_second):
        _assert_close(a, b, rtol=1e-9, atol=1e-11)


def _tangent_of(m, t):
    """A fixed tangent for leaf ``t``: ``0.5 t + 0.25`` (complex: plus ``0.125j``)."""
    tangent = t.detach() * 0.5 + 0.25
    return tangent + 0.125j if t.is_complex() else tangent


@pytest.mark.parametrize("name, op", CASES, ids=_IDS)
def test_tangents_match_torch(name, op):
    """Forward mode: each entry's tangent rule, computed at once, against torch's."""
    results = []
    for m in (npgrad, torch):
        fw = m.autograd.forward_ad
        leaves, consts = _leaves(m)
        with fw.dual_level():
            duals = {k: fw.make_dual(t.detach(), _tangent_of(m, t)) for k, t in leaves.items()}
            primal, tangent = fw.unpack_dual(op(m, duals, consts))
            results.append((primal.clone(), tangent.clone()))
    (our_primal, our_tangent), (their_primal, their_tangent) = results
    _assert_close(our_primal, their_primal)
    _assert_close(our_tangent, their_tangent)


def test_an_input_that_needs_no_gradient_gets_none_and_its_rule_is_not_run():
    x = npgrad.tensor(_X, dtype=npgrad.float64, requires_grad=True)
    y = npgrad.tensor(_Y, dtype=npgrad.float64)
    out = npgrad.lerp(x, y, npgrad.tensor(_W, dtype=npgrad.float64))
    grads = out.grad_fn(npgrad.ones(2, 3, dtype=npgrad.float64))
    assert grads[1] is None and grads[2] is None
    np.testing.assert_allclose(grads[0].numpy(), 1 - np.array(_W))


def test_the_saved_values_are_freed_after_backward():
    def env(m):
        x = m.tensor(_X, dtype=m.float64, requires_grad=True)
        lo = m.tensor(_LO, dtype=m.float64, requires_grad=True)
        return {"out": m.clamp(x, lo, None).sum() + m.addcdiv(x, lo, x + 5).sum()}

    assert_same_error("(out.backward(retain_graph=False), out.backward())", env)


# -- asinh_, acosh_, atanh_: recorded, with no derivative (Note [In-place ops without a derivative])

_INPLACE = ["asinh_", "acosh_", "atanh_"]


def _inplace_env(m, name):
    x = m.tensor([1.5, 2.0, 3.0] if name == "acosh_" else [0.25, -0.5, 0.75], dtype=m.float64,
                 requires_grad=True)
    fw = m.autograd.forward_ad

    def with_tangent():
        with fw.dual_level():
            getattr(fw.make_dual(x.detach() * 1, m.ones(3, dtype=m.float64)), name)()

    return {"x": x, "op": name, "with_tangent": with_tangent}


@pytest.mark.parametrize("name", _INPLACE)
def test_inplace_ops_without_a_derivative_record_torch_s_node(name):
    outs = []
    for m in (npgrad, torch):
        env = _inplace_env(m, name)
        y = env["x"] * 1
        getattr(y, name)()
        outs.append(y)
        assert _saved(y.grad_fn) == {}
    ours, theirs = outs
    assert type(ours.grad_fn).__name__ == type(theirs.grad_fn).__name__ == (
        name[:-1].capitalize() + "Backward1")
    assert _edges(ours.grad_fn) == _edges(theirs.grad_fn)
    _assert_close(ours, theirs)


@pytest.mark.parametrize("name", _INPLACE)
def test_inplace_ops_without_a_derivative_refuse_backward_and_tangents(name):
    assert_same_error("getattr(x * 1, op)().sum().backward()", lambda m: _inplace_env(m, name))
    assert_same_error("with_tangent()", lambda m: _inplace_env(m, name))


def test_an_entry_s_forward_ad_refusal_leaves_no_dual_level_behind():
    fw = npgrad.autograd.forward_ad
    with fw.dual_level():
        x = fw.make_dual(npgrad.tensor([0.5]), npgrad.tensor([1.0]))
        with pytest.raises(NotImplementedError):
            x.clone().asinh_()
        y = fw.make_dual(npgrad.tensor([0.5]), npgrad.tensor([2.0])).exp()
        np.testing.assert_allclose(fw.unpack_dual(y).tangent.numpy(), 2 * np.exp([0.5]))


# -- the complex views share their input's storage --------------------------------------------

@pytest.mark.parametrize("lib", ["npgrad", "torch"])
def test_view_as_real_and_view_as_complex_are_views_of_their_input(lib):
    m = npgrad if lib == "npgrad" else torch
    z = m.tensor([1 + 2j, -3 + 0.5j], dtype=m.complex128, requires_grad=True)
    r = m.view_as_real(z)
    assert r._base is z and r._is_view()
    back = m.view_as_complex(r)
    assert back._base is z
    with m.no_grad():
        r[0, 1] = 7.0
    assert z[0].item() == 1 + 7j and back[0].item() == 1 + 7j
    assert z._version == r._version == back._version == 1
    pairs = m.zeros(3, 2, dtype=m.float64)
    c = m.view_as_complex(pairs)
    c.add_(2 - 4j)
    assert pairs.tolist() == [[2.0, -4.0]] * 3 and c._base is pairs


def test_the_tangent_of_a_complex_view_is_the_same_view_of_the_input_s_tangent():
    results = []
    for m in (npgrad, torch):
        fw = m.autograd.forward_ad
        with fw.dual_level():
            tangent = m.tensor([0.5 - 1j, 2j], dtype=m.complex128)
            z = fw.make_dual(m.tensor([1 + 2j, -3 + 0.5j], dtype=m.complex128), tangent)
            r = m.view_as_real(z)
            t = fw.unpack_dual(r).tangent
            tangent.mul_(2)  # the view's tangent sees a write into the input's tangent
            results.append(t.clone())
    np.testing.assert_array_equal(results[0].numpy(), results[1].numpy())


def test_the_conjugate_keeps_its_bit_through_the_entry():
    z = npgrad.tensor([1 + 2j], requires_grad=True)
    c = z.conj()
    assert c.is_conj() and not npgrad.conj_physical(z).is_conj()
    assert type(c.grad_fn).__name__ == "ConjBackward0"
    tz = torch.tensor([1 + 2j], requires_grad=True)
    assert z.conj().conj().is_conj() == tz.conj().conj().is_conj()
    assert _edges(z.conj().conj().grad_fn) == _edges(tz.conj().conj().grad_fn)


# -- floor_divide and a number's remainder record torch's NotImplemented node -------------------

@pytest.mark.parametrize("expr", ["m.floor_divide(x, 0.75)", "m.remainder(2.5, x)"])
def test_ops_without_a_derivative_record_not_implemented(expr):
    def env(m):
        x = m.tensor([0.5, 1.5], dtype=m.float64, requires_grad=True)
        fw = m.autograd.forward_ad

        def with_tangent():
            with fw.dual_level():
                eval(expr, {}, {"m": m, "x": fw.make_dual(x.detach(), x.detach())})

        return {"m": m, "x": x, "with_tangent": with_tangent}

    ours, theirs = eval(expr, {}, env(npgrad)), eval(expr, {}, env(torch))
    assert ours.grad_fn.name() == theirs.grad_fn.name()
    assert _edges(ours.grad_fn) == _edges(theirs.grad_fn)
    assert_same_error(expr + ".sum().backward()", env)
    assert_same_error("with_tangent()", env)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_nan_to_num_replaces_infinities_by_the_half_type_s_own_largest_values(dtype):
    if dtype == "bfloat16":
        pytest.importorskip("ml_dtypes")
    results = []
    for m in (npgrad, torch):
        x = m.tensor(_NONFINITE[0] + [3e4], dtype=getattr(m, dtype), requires_grad=True)
        out = m.nan_to_num(x)
        out.sum().backward()
        assert type(out.grad_fn).__name__ == "NanToNumBackward0"
        results.append((out.detach().float().numpy(), x.grad.float().numpy()))
    np.testing.assert_array_equal(results[0][0], results[1][0])
    np.testing.assert_array_equal(results[0][1], results[1][1])
