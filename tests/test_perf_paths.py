"""The fast paths of issue 16's profile, against torch: the float32 exact-GELU kernel
(Note [GELU in float32]), layer norm's NumPy backward (Note [Layer norm's backward in
NumPy]), the NumPy reduction of broadcast gradients, and the node edges (Note [Edges in the
node])."""
from __future__ import annotations

import math

import numpy as np
import pytest

import npgrad
from npgrad._ops import _erf_kernels as K

torch = pytest.importorskip("torch")


def _points32() -> np.ndarray:
    rng = np.random.default_rng(40)
    return np.concatenate([rng.standard_normal(20_000) * 3, np.linspace(-14, 14, 20_001),
                           [0.0, -0.0, 1e-30, -1e-30, 5.5, -5.5, -0.7517915, 30.0, -30.0]]
                          ).astype(np.float32)


# -- GELU in float32 ------------------------------------------------------------------------

def test_gelu_float32_values_against_torch_float64():
    x = _points32()
    ours = npgrad.nn.functional.gelu(npgrad.from_numpy(x)).numpy()
    assert ours.dtype == np.float32
    want = torch.nn.functional.gelu(torch.from_numpy(x).double()).numpy()
    # torch's float64 GELU cancels too as x falls (1 + erf): the reference is erfc's form,
    # which agrees with torch's where that cancellation is small
    exact = np.array([0.5 * v * math.erfc(-v / math.sqrt(2)) for v in x.astype(np.float64)])
    assert np.allclose(want[x > -3], exact[x > -3], rtol=1e-11, atol=1e-300)
    err = np.abs(ours.astype(np.float64) - exact)
    assert np.all(err <= 4 * 2.0**-23 * np.abs(exact) + 1e-41)
    # torch's own float32 values agree where its 1 + erf does not cancel
    theirs32 = torch.nn.functional.gelu(torch.from_numpy(x)).numpy()
    keep = x > -2
    np.testing.assert_allclose(ours[keep], theirs32[keep], rtol=1e-6, atol=2e-7)


def test_gelu_float32_rational_fits_mills_ratio():
    """Note [GELU in float32]: Q(t) = Phi(-t) exp(t*t/2) to 4e-8 relative on [0, 16] (the
    fit's 7e-9 and the rounding of its coefficients to float32)."""
    t = np.linspace(0.0, 16.0, 4001)
    want = np.array([0.5 * math.erfc(v / math.sqrt(2)) * math.exp(v * v / 2) for v in t])
    num = np.polynomial.polynomial.polyval(t, K._Q_NUM)
    den = np.polynomial.polynomial.polyval(t, K._Q_DEN)
    assert np.max(np.abs(num / den / want - 1)) < 4e-8
    assert all(float(np.float32(c)) == c for c in K._Q_NUM + K._Q_DEN)   # exact in float32


def test_gelu_float32_special_values():
    x = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, -20.0, 20.0, 1e-40, -1e-40], np.float32)
    got = npgrad.nn.functional.gelu(npgrad.from_numpy(x)).numpy()
    assert got[0] == 0 and not np.signbit(got[0])
    assert got[1] == 0 and np.signbit(got[1])
    # a dense tensor of 2+ elements takes torch's vector kernel, whose erf makes gelu(inf) NaN;
    # one element or a strided tensor its scalar loop, which gives inf
    # (Note [torch's vectorised float32 GELU at the edges])
    assert np.isnan(got[2])
    assert npgrad.nn.functional.gelu(npgrad.from_numpy(x[2:3])).numpy()[0] == np.inf
    assert npgrad.nn.functional.gelu(npgrad.from_numpy(x)[2::2]).numpy()[0] == np.inf
    assert np.isnan(got[3]) and np.isnan(got[4])     # -inf * 0, as torch's -inf/2 * (1 - 1)
    assert got[5] == 0 and np.signbit(got[5])        # torch: -0.0
    assert got[6] == 20.0
    assert got[7] == np.float32(5e-41) and got[8] == np.float32(-5e-41)
    g = K.gelu_backward(np.ones(9, np.float32), x)
    assert g.dtype == np.float32
    assert g[0] == 0.5 and g[1] == 0.5 and np.isnan(g[2:5]).all()
    assert g[6] == 1.0 and g[5] == 0


def test_gelu_float32_grad_against_torch_and_finite_differences():
    x0 = _points32()
    grads = []
    for lib in (npgrad, torch):
        x = lib.tensor(x0.copy(), requires_grad=True)
        y = lib.nn.functional.gelu(x)
        assert type(y.grad_fn).__name__ == "GeluBackward0"
        (y * lib.tensor(np.linspace(-1, 1, x0.size, dtype=np.float32))).sum().backward()
        grads.append(x.grad.numpy())
    keep = x0 > -3     # torch's float32 derivative cancels below, as its forward does
    np.testing.assert_allclose(grads[0][keep], grads[1][keep], rtol=1e-5, atol=1e-6)
    # against the float64 kernel everywhere (the float32 one is within 3 eps of the terms)
    g64 = K.gelu_backward(np.linspace(-1, 1, x0.size), x0.astype(np.float64))
    assert np.allclose(grads[0], g64, rtol=3e-7, atol=1e-7)
    # float64: gradcheck through the node (exact kernel) and the double backward
    x = npgrad.tensor(np.random.default_rng(41).standard_normal(10) * 2, requires_grad=True)
    assert npgrad.autograd.gradcheck(npgrad.nn.functional.gelu, (x,))
    assert npgrad.autograd.gradgradcheck(npgrad.nn.functional.gelu, (x,))


def test_gelu_float32_blocks_and_shapes():
    """Several blocks, a partial last one, non-contiguous and 0-d input."""
    rng = np.random.default_rng(42)
    x = (rng.standard_normal((3, K._BLOCK + 77)) * 2).astype(np.float32)
    want = K.gelu(x.astype(np.float64))
    for arr in (x, x.T, x[:, ::3]):
        got = K.gelu(arr)
        assert got.shape == arr.shape and got.dtype == np.float32
        ref = want if arr is x else (want.T if arr.base is x and arr.shape == x.T.shape
                                     else want[:, ::3])
        assert np.all(np.abs(got - ref) <= 4 * 2.0**-23 * np.abs(ref) + 1e-41)
    zero_d = K.gelu(np.array(1.0, np.float32))
    # gelu(1) lies 0.035 ulp from a float32 midpoint: the kernel's 4-eps bound, not rounding
    exact = 0.5 * math.erfc(-1 / math.sqrt(2))
    assert zero_d.shape == () and zero_d == K.gelu(np.array([1.0], np.float32))[0]
    assert abs(float(zero_d) - exact) <= 4 * 2.0**-23 * exact
    assert K.gelu(np.zeros(0, np.float32)).shape == (0,)


# -- layer norm's NumPy backward --------------------------------------------------------------

@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape,normalized,affine", [
    ((8, 32, 64), (64,), True), ((4, 6, 5), (6, 5), True), ((7, 10), (10,), False)])
def test_layer_norm_backward_against_torch(dtype, shape, normalized, affine):
    rng = np.random.default_rng(43)
    x0 = (rng.standard_normal(shape) * 3 + 1).astype(dtype)
    w0 = (rng.standard_normal(normalized) + 1).astype(dtype)
    b0 = rng.standard_normal(normalized).astype(dtype)
    g0 = rng.standard_normal(shape).astype(dtype)
    results = []
    for lib in (npgrad, torch):
        x = lib.tensor(x0, requires_grad=True)
        w = lib.tensor(w0, requires_grad=True) if affine else None
        b = lib.tensor(b0, requires_grad=True) if affine else None
        y = lib.nn.functional.layer_norm(x, normalized, w, b, eps=1e-5)
        assert type(y.grad_fn).__name__ == "NativeLayerNormBackward0"
        y.backward(lib.tensor(g0))
        results.append([y.detach().numpy(), x.grad.numpy()]
                       + ([w.grad.numpy(), b.grad.numpy()] if affine else []))
        assert x.grad.dtype == lib.float32 if dtype == np.float32 else lib.float64
    tol = dict(rtol=2e-5, atol=2e-5) if dtype == np.float32 else dict(rtol=1e-12, atol=1e-12)
    for ours, theirs in zip(*results):
        assert ours.dtype == theirs.dtype and ours.shape == theirs.shape
        np.testing.assert_allclose(ours, theirs, **tol)


def test_layer_norm_double_backward_still_records():
    """create_graph=True takes the op form: second derivatives match torch."""
    rng = np.random.default_rng(44)
    x0, w0 = rng.standard_normal((3, 5)), rng.standard_normal(5) + 1
    out = []
    for lib in (npgrad, torch):
        x, w = lib.tensor(x0, requires_grad=True), lib.tensor(w0, requires_grad=True)
        y = lib.nn.functional.layer_norm(x, (5,), w, None)
        (gx,) = lib.autograd.grad((y * y * y).sum(), x, create_graph=True)
        assert gx.requires_grad
        gx.sum().backward()
        out.append((gx.detach().numpy(), x.grad.numpy(), w.grad.numpy()))
    for a, b in zip(*out):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)
    x = npgrad.tensor(x0, requires_grad=True)
    assert npgrad.autograd.gradgradcheck(lambda t: npgrad.nn.functional.layer_norm(t, (5,)), (x,))


def test_layer_norm_backward_sees_in_place_changes():
    x = npgrad.tensor(np.arange(6.0).reshape(2, 3), requires_grad=True)
    h = x * 1
    y = npgrad.nn.functional.layer_norm(h, (3,))
    h.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()


# -- broadcast gradients reduced in NumPy --------------------------------------------------

@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_broadcast_gradients_against_torch(dtype):
    rng = np.random.default_rng(45)
    a0 = rng.standard_normal((4, 3, 5)).astype(dtype)
    shapes = [(5,), (3, 1), (1, 3, 5), (4, 1, 1), ()]
    for shape in shapes:
        b0 = rng.standard_normal(shape).astype(dtype)
        grads = []
        for lib in (npgrad, torch):
            a, b = lib.tensor(a0, requires_grad=True), lib.tensor(b0, requires_grad=True)
            ((a * b) * lib.tensor(a0)).sum().backward()
            grads.append((a.grad.numpy(), b.grad.numpy()))
        for ours, theirs in zip(*grads):
            assert ours.shape == theirs.shape and ours.dtype == theirs.dtype
            np.testing.assert_allclose(ours, theirs, rtol=1e-6 if dtype == np.float32 else 1e-13)


def test_broadcast_gradient_keeps_its_graph_under_create_graph():
    a = npgrad.tensor(np.arange(6.0).reshape(2, 3), requires_grad=True)
    b = npgrad.tensor([1.0, 2.0, 3.0], requires_grad=True)
    (gb,) = npgrad.autograd.grad((a * b * b).sum(), b, create_graph=True)
    assert gb.requires_grad
    np.testing.assert_array_equal(gb.detach().numpy(), [2 * 3 * 1.0, 2 * 5 * 2.0, 2 * 7 * 3.0])
    (gg,) = npgrad.autograd.grad(gb.sum(), b)
    np.testing.assert_array_equal(gg.numpy(), [6.0, 10.0, 14.0])


# -- the engine's order with the next node kept in hand ---------------------------------------

def _execution_order(lib, build):
    """The names of the grad_fns in the order the engine runs them (pre-hooks record it)."""
    order = []
    out, leaves = build(lib)
    seen, stack = set(), [out.grad_fn]
    while stack:
        node = stack.pop()
        if node is None or node in seen:
            continue
        seen.add(node)
        node.register_prehook(lambda grads, node=node: order.append(node.name()))
        stack.extend(child for child, _ in node.next_functions)
    out.sum().backward()
    return order, [leaf.grad.numpy().copy() for leaf in leaves]


@pytest.mark.parametrize("name", ["chain", "diamond", "branches", "shared_leaf", "late_sibling"])
def test_engine_runs_nodes_in_torchs_order(name):
    def build(lib):
        a = lib.tensor([1.5, -2.0], dtype=lib.float64, requires_grad=True)
        b = lib.tensor([0.5, 3.0], dtype=lib.float64, requires_grad=True)
        if name == "chain":
            return (a * 2).exp().sin() * 3, [a]
        if name == "diamond":
            h = a * b
            return h.exp() + h.sin() * h, [a, b]
        if name == "branches":
            u = (a * 2).tanh()
            v = (b + 1).exp()
            w = (a - b).abs()
            return u * v + w.sqrt(), [a, b]
        if name == "shared_leaf":
            return a * a + (a * 3).cos() + b, [a, b]
        # a sibling made long before the rest: the newest ready node must still go first
        early = b.exp()
        h = a
        for _ in range(4):
            h = h.sin() + 1
        return h * early + early.cos(), [a, b]

    ours, their = _execution_order(npgrad, build), _execution_order(torch, build)
    # torch's CPU engine order, node for node (AccumulateGrad names differ by prefix only)
    assert [n.split("::")[-1] for n in ours[0]] == [n.split("::")[-1] for n in their[0]]
    for g_ours, g_theirs in zip(ours[1], their[1]):
        np.testing.assert_allclose(g_ours, g_theirs, rtol=1e-13)


def test_engine_reached_set_answers_will_execute():
    from npgrad.autograd.engine import will_engine_execute_node

    x = npgrad.tensor([1.0, 2.0], requires_grad=True)
    y = npgrad.tensor([3.0], requires_grad=True)
    h = x * 2
    out = h.sum()
    unrelated = (y * 3).sum()
    answers = []

    def hook(grad):
        answers.append((will_engine_execute_node(out.grad_fn), will_engine_execute_node(h.grad_fn),
                        will_engine_execute_node(h.grad_fn.next_functions[0][0]),
                        will_engine_execute_node(unrelated.grad_fn)))
        return grad

    h.register_hook(hook)
    out.backward()
    assert answers == [(True, True, True, False)]
    np.testing.assert_array_equal(x.grad.numpy(), [2.0, 2.0])


# -- edges in the node (Note [Edges in the node]) ----------------------------------------------

def _edge_names(lib, fn):
    return [None if child is None else (child.name().split("::")[-1], nr)
            for child, nr in fn.next_functions]


@pytest.mark.parametrize("case", ["mul_scalar", "mul_leaf", "add_both", "unary", "view",
                                  "three_inputs", "cat_four", "second_output"])
def test_next_functions_match_torch(case):
    def build(lib):
        a = lib.tensor([[1.5, -2.0], [0.5, 3.0]], dtype=lib.float64, requires_grad=True)
        b = lib.tensor([[0.5, 3.0], [2.0, -1.0]], dtype=lib.float64, requires_grad=True)
        c = lib.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=lib.float64)
        if case == "mul_scalar":
            return (a * 2) * 3.0
        if case == "mul_leaf":
            return a * c
        if case == "add_both":
            return a.exp() + b.sin()
        if case == "unary":
            return (a * b).tanh()
        if case == "view":
            return a[0] * b[1]
        if case == "three_inputs":
            return lib.addcmul(a.exp(), b, c, value=0.5)
        if case == "cat_four":
            return lib.cat([a, c, b.exp(), a * 2])
        return lib.max(a * b, dim=1)[1].float() + lib.max(a * b, dim=1)[0]

    ours, theirs = build(npgrad).grad_fn, build(torch).grad_fn
    assert _edge_names(npgrad, ours) == _edge_names(torch, theirs)
    inner_ours = [child for child, _ in ours.next_functions if child is not None]
    inner_theirs = [child for child, _ in theirs.next_functions if child is not None]
    for o, t in zip(inner_ours, inner_theirs):
        assert _edge_names(npgrad, o) == _edge_names(torch, t)


def test_a_node_is_the_only_tracked_object_of_a_binary_op():
    import gc

    x = npgrad.ones(1, requires_grad=True)
    y = x * 2.0
    z = y * 3.0
    node = z.grad_fn
    # the node holds its child node directly: no edge tuples for the cyclic GC to scan
    # (its output metadata is one tuple shared by every node of that shape and dtype)
    referents = gc.get_referents(node)
    assert y.grad_fn in referents
    assert [r for r in referents if isinstance(r, tuple)] == [node._out_meta]
    assert (y * 4.0).grad_fn._out_meta is node._out_meta
    assert node.next_functions == ((y.grad_fn, 0), (None, 0))
    assert node.next_functions[0][0].next_functions[0][0].name() == \
        "torch::autograd::AccumulateGrad"
    z.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [6.0])


def test_next_functions_assigned_and_read_back():
    from npgrad.autograd.graph import Node

    class ThreeEdges(Node):
        __slots__ = ()

    a = npgrad.ones(2, requires_grad=True)
    b = (a * 2).grad_fn
    node = object.__new__(ThreeEdges)
    for edges in [(), ((b, 0),), ((None, 0), (b, 0)), ((b, 0), (None, 0), (b, 1))]:
        node._init_node(edges, ())
        assert node.next_functions == edges
        assert [node.needs_input_grad(i) for i in range(len(edges))] == \
            [fn is not None for fn, _ in edges]
    node.next_functions = ((b, 0),)
    assert node.next_functions == ((b, 0),)


def test_backward_through_nodes_of_many_inputs():
    xs = [npgrad.tensor([float(i + 1)], dtype=npgrad.float64, requires_grad=True)
          for i in range(5)]
    ts = [torch.tensor([float(i + 1)], dtype=torch.float64, requires_grad=True) for i in range(5)]
    (npgrad.cat([x * 2 for x in xs]) ** 2).sum().backward()
    (torch.cat([t * 2 for t in ts]) ** 2).sum().backward()
    assert [x.grad.tolist() for x in xs] == [t.grad.tolist() for t in ts]


# -- the in-place float32 fused multiply-add of the optimizers --------------------------------

def _round_once(a, b, c) -> np.ndarray:
    """float32 ``a * b + c`` rounded once, from exact rational arithmetic."""
    from fractions import Fraction

    a, b, c = np.broadcast_arrays(np.asarray(a, np.float32), np.asarray(b, np.float32),
                                  np.asarray(c, np.float32))
    out = []
    for x, y, z in zip(a.ravel().tolist(), b.ravel().tolist(), c.ravel().tolist()):
        exact = Fraction(x) * Fraction(y) + Fraction(z)
        lo = np.float32(float(exact))              # within one float32 step of exact
        cands = [np.nextafter(lo, np.float32(-np.inf)), lo, np.nextafter(lo, np.float32(np.inf))]
        best = min(cands, key=lambda v: (abs(Fraction(float(v)) - exact),
                                         int(np.array(v).view(np.uint32)) & 1))
        if exact == 0:
            best = np.float32(x * y + z)           # the sign of an exact zero: IEEE's rule
        out.append(best)
    return np.array(out, np.float32).reshape(a.shape)


def test_inplace_fma_rounds_once_across_blocks():
    from npgrad.optim import optimizer as O

    rng = np.random.default_rng(46)
    n = O._FMA_BLOCK + 1000                 # two blocks, the second partial
    a = rng.standard_normal(n).astype(np.float32)
    c = rng.standard_normal(n).astype(np.float32)
    b = rng.standard_normal(n).astype(np.float32)
    # products landing a sum exactly on a float32 midpoint (double rounding would go wrong)
    k = np.arange(64)
    c[k] = 1.0
    a[k] = np.float32(2.0 ** -12)
    b[k] = np.float32(2.0 ** -12) * (1 + k.astype(np.float32) * np.float32(2.0 ** -20))
    c[n - 64:] = np.float32(3.0)
    a[n - 64:], b[n - 64:] = np.float32(2.0 ** -11), np.float32(2.0 ** -12)
    # ... and sums just off a midpoint that float64 rounds onto it: 1 + 2**-23 + 2**-24 - 2**-70
    c[200:210] = np.float32(1 + 2.0 ** -23)
    a[200:210] = np.float32(2.0 ** -12 * (1 + 2.0 ** -23))
    b[200:210] = np.float32(2.0 ** -12 * (1 - 2.0 ** -23))
    c[100:110], a[100:110] = 0.0, 0.0                    # exact zeros
    c[110:120], a[110:120] = np.float32(1e-39), np.float32(1e-20)   # below float32's normal range
    picks = np.r_[0:130, 200:210, n - 64:n, rng.integers(0, n, 300)]
    want = _round_once(a[picks], b[picks], c[picks])
    assert want[130] == np.float32(1 + 2.0 ** -23)       # not the 1 + 2**-22 of two roundings
    for first, second in ((a, b), (b, a)):
        got = c.copy()
        O._fma32_inplace(got, first, second)
        assert np.array_equal(got[picks].view(np.uint32), want.view(np.uint32))
    # a scalar factor (the learning rate), on either side
    lr = np.float32(-0.0123)
    want = _round_once(a[picks], lr, c[picks])
    for args in ((a, lr), (lr, a)):
        got = c.copy()
        O._fma32_inplace(got, *args)
        assert np.array_equal(got[picks].view(np.uint32), want.view(np.uint32))


def test_sgd_step_matches_torch_bit_for_bit():
    rng = np.random.default_rng(47)
    w0 = rng.standard_normal((300, 70)).astype(np.float32)
    g0 = rng.standard_normal((300, 70)).astype(np.float32)
    out = []
    for lib in (npgrad, torch):
        w = lib.nn.Parameter(lib.tensor(w0.copy()))
        opt = lib.optim.SGD([w], lr=0.0173)
        w.grad = lib.tensor(g0.copy())
        opt.step()
        out.append(w.detach().numpy().copy())
    assert np.array_equal(out[0].view(np.uint32), out[1].view(np.uint32))


def test_inplace_fma_with_a_nan_still_redoes_subnormal_sums():
    from npgrad.optim import optimizer as O
    from npgrad._sampling_math import fma32

    rng = np.random.default_rng(48)
    n = O._FMA_INPLACE_MIN * 2
    a = rng.standard_normal(n).astype(np.float32)
    c = rng.standard_normal(n).astype(np.float32)
    c[3], c[4] = np.nan, np.inf
    # sums below float32's normal range
    c[9:40] = np.float32(3e-39) * np.arange(31, dtype=np.float32)
    a[9:40] = np.float32(1e-12) * rng.standard_normal(31).astype(np.float32)
    lr = np.float32(-0.37)
    got = c.copy()
    O._fma32_inplace(got, a, lr)
    want = fma32(a, lr, c)
    assert np.array_equal(got.view(np.uint32), want.view(np.uint32))
    exact = _round_once(a[9:40], lr, c[9:40])
    assert np.array_equal(got[9:40].view(np.uint32), exact.view(np.uint32))
