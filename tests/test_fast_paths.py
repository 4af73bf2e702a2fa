"""The fast paths of issue 16 compute exactly what the general paths (and torch) compute:
values bit for bit, dtypes, signs of zero, grad_fn names and error texts."""
from __future__ import annotations

import gc
import weakref

import numpy as np
import pytest

import npgrad
from npgrad._sampling_math import fma32
from npgrad._ops import _erf_kernels
from npgrad.autograd.graph import AccumulateGrad
from npgrad.optim.optimizer import _fma_


def _bits(a: np.ndarray) -> np.ndarray:
    a = np.ascontiguousarray(a)
    return a.view({2: np.uint16, 4: np.uint32, 8: np.uint64}[a.dtype.itemsize])


# -- the in-place float32 fused multiply-add of the optimizers -------------------------------

def _fma_cases():
    rng = np.random.default_rng(7)
    for trial in range(12):
        shape = (64, 100) if trial % 2 else (5000,)
        c = rng.standard_normal(shape).astype(np.float32)
        if trial % 3 == 0:
            c[::7] = 0.0
        if trial % 4 == 0:
            c[::5] = np.float32(1e-39)  # subnormal addends and results
        b = (rng.standard_normal(shape) * 10.0 ** rng.uniform(-8, 2)).astype(np.float32)
        a = np.float32(-(10.0 ** rng.uniform(-5, 0)))
        yield c, a, b


@pytest.mark.parametrize("case", list(_fma_cases()))
def test_inplace_fma_matches_fma32_bit_for_bit(case):
    c, a, b = case
    for x, y in ((b, a), (a, b)):  # array * scalar and scalar * array
        expected = fma32(x, y, c)
        got = c.copy()
        _fma_(got, x, y)
        assert got.dtype == np.float32
        np.testing.assert_array_equal(_bits(got), _bits(expected))


def test_inplace_fma_rounds_midpoints_once():
    # 1 + 2**-24 (1 + 2**-23) sits just above a float32 midpoint; rounding the float64 sum
    # first would land on the midpoint and round to even (down): the fused result rounds up
    n = 8192
    c = np.ones(n, np.float32)
    b = np.full(n, np.float32(2.0 ** -24), np.float32)
    a = np.float32(1 + 2.0 ** -23)
    got = c.copy()
    _fma_(got, b, a)
    assert np.all(got == np.float32(1 + 2.0 ** -23))
    np.testing.assert_array_equal(_bits(got), _bits(fma32(b, a, c)))


def test_sgd_step_on_a_large_weight_matches_torch_bit_for_bit():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(3)
    w0 = rng.standard_normal((96, 80)).astype(np.float32)
    grads = [rng.standard_normal((96, 80)).astype(np.float32) for _ in range(3)]
    out = []
    for lib in (npgrad, torch):
        w = lib.tensor(w0.copy(), requires_grad=True)
        opt = lib.optim.SGD([w], lr=0.03)
        for g in grads:
            w.grad = lib.tensor(g.copy())
            opt.step()
        out.append(w.detach().numpy().copy())
    np.testing.assert_array_equal(_bits(out[0]), _bits(out[1]))


# -- ReLU's backward by bit masks -------------------------------------------------------------

@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_relu_backward_matches_torch_with_signed_zeros_and_nans(dtype):
    torch = pytest.importorskip("torch")
    xs = [-1.0, 0.0, -0.0, 2.0, float("nan"), 3.0, -float("inf"), float("inf")]
    gs = [-0.0, -1.0, 5.0, -0.0, 7.0, float("nan"), float("nan"), -2.0]
    grads = []
    for lib in (npgrad, torch):
        x = lib.tensor(xs, dtype=getattr(lib, dtype), requires_grad=True)
        y = lib.relu(x)
        assert type(y.grad_fn).__name__ == "ReluBackward0"
        y.backward(lib.tensor(gs, dtype=getattr(lib, dtype)))
        assert str(x.grad.dtype).split(".")[1] == dtype
        grads.append(x.grad.numpy())
    np.testing.assert_array_equal(_bits(grads[0]), _bits(grads[1]))


def test_relu_backward_of_a_0dim_tensor():
    for value, expected in ((2.0, 3.0), (-2.0, 0.0), (0.0, 0.0)):
        x = npgrad.tensor(value, requires_grad=True)
        npgrad.relu(x).backward(npgrad.tensor(3.0))
        assert x.grad.shape == () and x.grad.item() == expected
        assert not np.signbit(x.grad.numpy())


def test_relu_double_backward_still_builds_a_graph():
    x = npgrad.tensor([-1.0, 2.0, 3.0], dtype=npgrad.float64, requires_grad=True)
    (g,) = npgrad.autograd.grad(npgrad.relu(x).pow(2).sum(), x, create_graph=True)
    assert g.grad_fn is not None
    (gg,) = npgrad.autograd.grad(g.sum(), x)
    np.testing.assert_array_equal(gg.numpy(), [0.0, 2.0, 2.0])


# -- matrix gradients in the layout of their input -------------------------------------------

def test_linear_weight_gradient_is_row_major_and_matches_torch():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    x0 = rng.standard_normal((16, 12)).astype(np.float32)
    w0 = rng.standard_normal((7, 12)).astype(np.float32)
    b0 = rng.standard_normal(7).astype(np.float32)
    g0 = rng.standard_normal((16, 7)).astype(np.float32)
    results = []
    for lib in (npgrad, torch):
        x, w, b = (lib.tensor(a.copy(), requires_grad=True) for a in (x0, w0, b0))
        y = lib.nn.functional.linear(x, w, b)
        assert type(y.grad_fn).__name__ == "AddmmBackward0"
        strides = (y.grad_fn._saved_mat1_sym_strides, y.grad_fn._saved_mat2_sym_strides)
        y.backward(lib.tensor(g0))
        assert w.grad.is_contiguous() and x.grad.is_contiguous()
        results.append((strides, x.grad.numpy(), w.grad.numpy(), b.grad.numpy()))
    (s_np, *ours), (s_t, *theirs) = results
    assert s_np == tuple(tuple(s) for s in s_t) == ((12, 1), (1, 12))
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("transposed", [(False, False), (True, False), (False, True), (True, True)])
def test_mm_gradients_for_every_layout_equal_the_plain_formula(transposed):
    rng = np.random.default_rng(1)
    a0 = rng.standard_normal((5, 4))
    b0 = rng.standard_normal((4, 3))
    g0 = rng.standard_normal((5, 3))
    a_leaf = npgrad.tensor(a0.T.copy() if transposed[0] else a0, requires_grad=True)
    b_leaf = npgrad.tensor(b0.T.copy() if transposed[1] else b0, requires_grad=True)
    a = a_leaf.t() if transposed[0] else a_leaf
    b = b_leaf.t() if transposed[1] else b_leaf
    out = npgrad.mm(a, b)
    assert type(out.grad_fn).__name__ == "MmBackward0"
    out.backward(npgrad.tensor(g0))
    ga, gb = g0 @ b0.T, a0.T @ g0
    np.testing.assert_allclose(a_leaf.grad.numpy(), ga.T if transposed[0] else ga, rtol=1e-12)
    np.testing.assert_allclose(b_leaf.grad.numpy(), gb.T if transposed[1] else gb, rtol=1e-12)
    assert a_leaf.grad.is_contiguous() and b_leaf.grad.is_contiguous()


def test_addmm_gradients_pass_gradcheck_with_a_transposed_weight():
    rng = np.random.default_rng(2)
    x = npgrad.tensor(rng.standard_normal((3, 4)), requires_grad=True)
    w = npgrad.tensor(rng.standard_normal((5, 4)), requires_grad=True)
    b = npgrad.tensor(rng.standard_normal(5), requires_grad=True)
    f = npgrad.nn.functional.linear
    assert npgrad.autograd.gradcheck(f, (x, w, b))
    assert npgrad.autograd.gradgradcheck(f, (x, w, b))


# -- cross-entropy without weights ---------------------------------------------------------

@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("shape", [(6, 5), (5,)])
def test_cross_entropy_plain_classes_match_the_general_path_and_torch(reduction, shape):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(4)
    x0 = rng.standard_normal(shape).astype(np.float32)
    t0 = rng.integers(0, shape[-1], shape[:-1] if len(shape) > 1 else ()).astype(np.int64)
    g0 = rng.standard_normal(shape[:1] if reduction == "none" and len(shape) > 1 else ())
    g0 = g0.astype(np.float32)
    runs = []
    # weights of one take the general formula: the same factors, written out
    for lib, weighted in ((npgrad, False), (npgrad, True), (torch, False)):
        x = lib.tensor(x0.copy(), requires_grad=True)
        weight = lib.ones(shape[-1]) if weighted else None
        loss = lib.nn.functional.cross_entropy(x, lib.tensor(t0), weight, reduction=reduction)
        assert type(loss.grad_fn).__name__ == "NllLossBackward0"
        assert type(loss.grad_fn.next_functions[0][0]).__name__ == "LogSoftmaxBackward0"
        loss.backward(lib.tensor(g0))
        runs.append((loss.detach().numpy(), x.grad.numpy()))
    (l_fast, g_fast), (l_gen, g_gen), (l_t, g_t) = runs
    np.testing.assert_array_equal(_bits(l_fast), _bits(l_gen))
    np.testing.assert_array_equal(_bits(g_fast), _bits(g_gen))
    np.testing.assert_allclose(l_fast, l_t, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(g_fast, g_t, rtol=1e-6, atol=1e-7)


def test_cross_entropy_gradients_pass_gradcheck():
    rng = np.random.default_rng(8)
    x = npgrad.tensor(rng.standard_normal((4, 3)), requires_grad=True)
    t = npgrad.tensor([2, 0, 1, 2])
    f = npgrad.nn.functional.cross_entropy
    assert npgrad.autograd.gradcheck(lambda v: f(v, t), (x,))
    assert npgrad.autograd.gradgradcheck(lambda v: f(v, t), (x,))


def test_cross_entropy_with_an_ignored_target_matches_torch():
    torch = pytest.importorskip("torch")
    x0 = np.random.default_rng(9).standard_normal((5, 4)).astype(np.float32)
    t0 = np.array([1, 3, 2, 1, 0])
    runs = []
    for lib in (npgrad, torch):
        x = lib.tensor(x0.copy(), requires_grad=True)
        loss = lib.nn.functional.cross_entropy(x, lib.tensor(t0), ignore_index=1)
        loss.backward()
        runs.append((loss.item(), x.grad.numpy()))
    assert runs[0][0] == pytest.approx(runs[1][0], rel=1e-6)
    np.testing.assert_allclose(runs[0][1], runs[1][1], rtol=1e-6, atol=1e-7)
    assert np.all(runs[0][1][[0, 3]] == 0)


def test_cross_entropy_still_checks_targets():
    x = npgrad.zeros(2, 3)
    with pytest.raises(IndexError, match="Target 3 is out of bounds."):
        npgrad.nn.functional.cross_entropy(x, npgrad.tensor([0, 3]))
    with pytest.raises(IndexError, match="Target -1 is out of bounds."):
        npgrad.nn.functional.cross_entropy(x, npgrad.tensor([-1, 0]))


# -- exact GELU's backward in one kernel ---------------------------------------------------

def test_gelu_backward_kernel_is_the_correctly_rounded_derivative():
    import math

    rng = np.random.default_rng(5)
    x = np.concatenate([rng.standard_normal(3000) * 3, [0.0, -0.0, 1.25, -6.2, 30.0, -30.0]])
    g = rng.standard_normal(x.size)
    x64 = x.astype(np.float32).astype(np.float64)
    g64 = g.astype(np.float32).astype(np.float64)
    d = np.array([0.5 * math.erfc(-v / math.sqrt(2)) + v * math.exp(-v * v / 2)
                  / math.sqrt(2 * math.pi) for v in x64])
    # d = Phi(x) + x phi(x) cancels near x = -0.75, so the errors are bounded by the
    # terms' size: a few eps of it in float64, and in float32 (Note [GELU in float32])
    terms = np.abs(d) + np.abs(x64) * np.exp(-x64 * x64 / 2) / math.sqrt(2 * math.pi)
    got64 = _erf_kernels.gelu_backward(g64, x64)
    assert np.all(np.abs(got64 - g64 * d) <= 4 * 2.0**-52 * np.abs(g64) * terms)
    got = _erf_kernels.gelu_backward(g.astype(np.float32), x.astype(np.float32))
    assert got.dtype == np.float32
    assert np.all(np.abs(got - g64 * d) <= 3 * 2.0**-23 * np.abs(g64) * terms + 1e-41)


def test_gelu_gradients_match_torch_and_gradcheck():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(6)
    x0 = (rng.standard_normal(200) * 2).astype(np.float32)
    grads = []
    for lib in (npgrad, torch):
        x = lib.tensor(x0.copy(), requires_grad=True)
        y = lib.nn.functional.gelu(x)
        assert type(y.grad_fn).__name__ == "GeluBackward0"
        y.sum().backward()
        grads.append(x.grad.numpy())
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-5, atol=1e-6)
    x = npgrad.tensor(rng.standard_normal(12), requires_grad=True)
    assert npgrad.autograd.gradcheck(npgrad.nn.functional.gelu, (x,))
    assert npgrad.autograd.gradgradcheck(npgrad.nn.functional.gelu, (x,))


# -- the operators' own fast path --------------------------------------------------------------

def test_operators_give_the_op_functions_results():
    a = npgrad.tensor([1.5, -2.0], requires_grad=True)
    b = npgrad.tensor([0.25, 4.0], requires_grad=True)
    for expr, name in (("a * b", "MulBackward0"), ("a + b", "AddBackward0"),
                       ("a - b", "SubBackward0"), ("a * 2.5", "MulBackward0"),
                       ("2.5 * a", "MulBackward0"), ("a + 1.0", "AddBackward0"),
                       ("a - 1.0", "SubBackward0"), ("a * 2", "MulBackward0")):
        y = eval(expr)
        assert type(y.grad_fn).__name__ == name, expr
        np.testing.assert_array_equal(y.detach().numpy(),
                                      eval(expr.replace("a", "a0").replace("b", "b0"),
                                           {"a0": a.detach().numpy(), "b0": b.detach().numpy()}))
    with npgrad.no_grad():
        y = a * b
        assert y.grad_fn is None and not y.requires_grad and y.is_leaf
    with npgrad.inference_mode():
        y = a * b
        assert y.is_inference() and not y.requires_grad


def test_operator_errors_match_torch():
    torch = pytest.importorskip("torch")
    for expr in ("m.ones(2) * m.ones(3)", "m.tensor([True]) - m.tensor([False])",
                 "m.ones(2) + m.ones(2, 3)"):
        errors = []
        for m in (npgrad, torch):
            with pytest.raises(RuntimeError) as info:
                eval(expr, {"m": m})
            errors.append(str(info.value))
        assert errors[0] == errors[1], expr


def test_mixed_dtypes_take_the_promoting_path():
    a = npgrad.ones(2, dtype=npgrad.float32)
    b = npgrad.ones(2, dtype=npgrad.float64)
    assert (a * b).dtype == npgrad.float64
    assert (a + npgrad.ones(2, dtype=npgrad.int64)).dtype == npgrad.float32
    assert (npgrad.ones(2, dtype=npgrad.int32) * 1.5).dtype == npgrad.float32


def test_bfloat16_times_a_float_stays_bfloat16():
    pytest.importorskip("ml_dtypes", reason="needs the bf16 extra: pip install -e '.[bf16]'")
    assert (npgrad.ones(2, dtype=npgrad.bfloat16) * 1.5).dtype == npgrad.bfloat16


# -- a cheap AccumulateGrad and SavedTensor -------------------------------------------------

def test_accumulate_grad_node_looks_as_torch():
    x = npgrad.ones(2, 3, requires_grad=True)
    y = x * 2.0
    acc = y.grad_fn.next_functions[0][0]
    assert type(acc) is AccumulateGrad
    assert acc.name() == "torch::autograd::AccumulateGrad"
    assert acc.next_functions == ()
    assert acc.variable is x
    assert acc._out_meta == (((2, 3), np.dtype(np.float32)),)
    assert (x * 3.0).grad_fn.next_functions[0][0] is acc  # the leaf's one accumulator
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.full((2, 3), 2.0, np.float32))


def test_accumulate_grad_dies_with_the_graph():
    x = npgrad.ones(2, requires_grad=True)
    y = x * x
    ref = weakref.ref(y.grad_fn.next_functions[0][0])
    del y
    gc.collect()
    assert ref() is None
    assert (x * 2.0).grad_fn.next_functions[0][0] is not None


def test_saved_inputs_check_versions_and_inference():
    x = npgrad.ones(3, requires_grad=True)
    c = npgrad.ones(3)
    y = x * c
    c.add_(1)
    with pytest.raises(RuntimeError, match="is at version 1; expected version 0 instead"):
        y.sum().backward()
    with npgrad.inference_mode():
        inf = npgrad.ones(3)
    with pytest.raises(RuntimeError, match="Inference tensors cannot be saved for backward"):
        x * inf
    z = x * npgrad.ones(3)
    assert z.grad_fn._saved_self is None  # not saved: its input needs no gradient
    z.sum().backward()
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
        z.grad_fn._saved_other  # noqa: B018 - reading the attribute is what raises


# -- what the import builds cheaply ---------------------------------------------------------

def test_rule_names_read_from_code_equal_the_signatures():
    import functools
    import inspect

    from npgrad._ops import registry

    def plain(grad, self, *, dim, keepdim=False):
        return grad

    def variadic(grad, *rest, **options):
        return grad

    @functools.wraps(plain)
    def wrapped(*args, **kwargs):
        return plain(*args, **kwargs)

    rules = [plain, variadic, wrapped, functools.partial(plain, dim=0),
             lambda grad, result: grad * result]
    for rule in rules:
        assert registry._rule_names(rule) == tuple(inspect.signature(rule).parameters)
    assert registry._rule_names(plain) == ("grad", "self", "dim", "keepdim")
    assert registry._rule_names(wrapped) == ("grad", "self", "dim", "keepdim")  # __wrapped__'s
    assert registry._rule_names(variadic) == ("grad", "rest", "options")


def test_saved_attributes_come_from_every_class_of_the_node():
    from npgrad.autograd.graph import Node

    class Base(Node):
        __slots__ = ("dim", "self_sizes")
        _saved_fields = ("self_",)

    class Mixin:
        __slots__ = ()

    class Child(Base, Mixin):
        __slots__ = ("other_", "alpha")
        _saved_fields = ("other_",)

    node = Child.__new__(Child)
    node.dim, node.alpha = 1, 2.0
    assert node._saved_dim == 1 and node._saved_alpha == 2.0
    assert node._saved_self is None and node._saved_other is None  # tensors never saved
    for name in ("_saved_self_sizes", "_saved_self_sym_sizes", "_raw_saved_self",
                 "_raw_saved_other"):
        assert hasattr(Child, name)
    assert not hasattr(Child, "_raw_saved_dim")       # only saved tensors have a raw handle
    with pytest.raises(AttributeError, match="'Child' object has no attribute '_saved_self_sizes'"):
        node._saved_self_sizes  # noqa: B018 - reading the attribute is what raises
