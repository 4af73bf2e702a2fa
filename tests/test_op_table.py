"""Every row of tests/op_table.py through every check: finite differences, torch, no_grad.

The checks, per row (see the op table's docstring for what a row is):
  * ``test_gradcheck`` / ``test_gradgradcheck``: ``npgrad.autograd.gradcheck`` and
    ``gradgradcheck`` in float64;
  * ``test_matches_torch``: values, dtype, shape, grad_fn, view-ness and the input gradients of a
    random upstream gradient, in float32 and float64;
  * ``test_second_order_matches_torch``: gradients of (squared) gradients, in float64;
  * ``test_pointwise_property``: pointwise rows on random broadcast shapes and values (hypothesis);
  * ``test_no_grad``: nothing is recorded under ``no_grad``;
  * ``test_forward_ad_matches_reverse_jacobian`` / ``test_forward_ad_gradcheck`` /
    ``test_forward_ad_matches_torch``: forward-mode tangents equal the reverse-mode Jacobian times
    the tangents, pass gradcheck's forward check (finite differences), and equal torch's.
The end of the file checks gradcheck itself: it fails, with torch's message, on a wrong backward.
"""
from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, Phase, given, settings, strategies as st
from hypothesis.extra import numpy as hnp

import npgrad
from npgrad.autograd.gradcheck import GradcheckError

from op_table import (DOMAINS, FORWARD, FORWARD_TORCH, GRADCHECK, GRADGRADCHECK, NO_GRAD, PROPERTY,
                      ROWS, SECOND_ORDER, TORCH_F32, TORCH_F64, OpRow)

# Tolerances of the finite-difference checks (tighter than gradcheck's defaults: the inputs are
# float64 and small, so central differences are accurate to about 1e-9).
GC_TOL = dict(atol=1e-6, rtol=1e-5)


def _params(check: str, rows: list = ROWS, extra: tuple = ()) -> list:
    """One pytest param per row; Note [Known bugs] rows are strict xfails for their checks."""
    out = []
    for row in rows:
        marks = ()
        if check in row.bug_in:
            marks = (pytest.mark.xfail(reason=row.known_bug, strict=True),)
        out.append(pytest.param(row, *extra, id=row.name + "".join(f"-{e}" for e in extra),
                                marks=marks))
    return out


def _as_tuple(out: Any) -> tuple:
    return tuple(out) if isinstance(out, (tuple, list)) else (out,)


def _dtype_name(t: Any) -> str:
    return str(t.dtype).split(".")[-1]


def _grad_fn_name(t: Any) -> Any:
    return None if t.grad_fn is None else (type(t.grad_fn).__name__, t.grad_fn.name())


def _tensors(mod: Any, row: OpRow, arrays: list) -> list:
    return [mod.tensor(a, requires_grad=r) for a, r in zip(arrays, row.rg)]


def _func(row: OpRow) -> Any:
    return lambda *xs: row.fn(npgrad, *xs)


# -- (a) and (b): finite differences ------------------------------------------------------------

@pytest.mark.parametrize("row", _params(GRADCHECK))
def test_gradcheck(row: OpRow) -> None:
    if row.no_gradcheck:
        pytest.skip(row.no_gradcheck)
    inputs = _tensors(npgrad, row, row.arrays(np.float64))
    assert npgrad.autograd.gradcheck(_func(row), inputs, **GC_TOL)


@pytest.mark.parametrize("row", _params(GRADGRADCHECK))
def test_gradgradcheck(row: OpRow) -> None:
    if row.no_gradgradcheck:
        pytest.skip(row.no_gradgradcheck)
    npgrad.manual_seed(0)
    inputs = _tensors(npgrad, row, row.arrays(np.float64))
    assert npgrad.autograd.gradgradcheck(_func(row), inputs, **GC_TOL)


def test_grad_fn_names_of_the_table() -> None:
    """The names rows expect (asserted without torch; the torch comparison checks all rows)."""
    wrong = []
    for row in ROWS:
        if row.grad_fn is None:
            continue
        out = _as_tuple(row.fn(npgrad, *_tensors(npgrad, row, row.arrays(np.float64))))[0]
        if _grad_fn_name(out) != (row.grad_fn, row.grad_fn):
            wrong.append((row.name, row.grad_fn, _grad_fn_name(out)))
    assert not wrong


# -- (c): torch oracle ----------------------------------------------------------------------

def _tolerances(dtype: Any, row: OpRow) -> tuple:
    if np.dtype(dtype) == np.float32:
        return 1e-6 * row.tol, 1e-5 * row.tol  # values, gradients
    return 1e-10 * row.tol, 1e-10 * row.tol


def _run(mod: Any, row: OpRow, arrays: list, backward: bool = True) -> tuple:
    tensors = _tensors(mod, row, arrays)
    outs = _as_tuple(row.fn(mod, *tensors))
    facts = [(tuple(o.shape), _dtype_name(o), _grad_fn_name(o), o.requires_grad, o._is_view(),
              [o is t for t in tensors]) for o in outs]
    values = [o.detach().numpy().copy() for o in outs]
    diff = [o for o in outs if o.requires_grad]
    if diff and backward:
        rng = np.random.default_rng(1)
        ws = [mod.tensor(rng.standard_normal(tuple(o.shape)).astype(o.detach().numpy().dtype))
              for o in diff]
        # inputs= names the leaves: torch's backward over a list of roots is ~50x slower without
        leaves = [t for t in tensors if t.requires_grad]
        mod.autograd.backward(diff, ws, inputs=leaves)
    grads = [None if t.grad is None else t.grad.numpy().copy() for t in tensors]
    grad_dtypes = [None if t.grad is None else _dtype_name(t.grad) for t in tensors]
    return facts, values, grads, grad_dtypes


def _torch_params() -> list:
    out = []
    for dtype, check in (("float32", TORCH_F32), ("float64", TORCH_F64)):
        out += _params(check, extra=(dtype,))
    return out


@pytest.mark.parametrize("row,dtype", _torch_params())
def test_matches_torch(row: OpRow, dtype: str) -> None:
    torch = pytest.importorskip("torch")
    arrays = row.arrays(np.dtype(dtype))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ours = _run(npgrad, row, arrays, row.torch_backward)
        theirs = _run(torch, row, arrays, row.torch_backward)
    vtol, gtol = _tolerances(dtype, row)
    (facts, values, grads, gdt), (t_facts, t_values, t_grads, t_gdt) = ours, theirs
    assert facts == t_facts  # shape, dtype, grad_fn, requires_grad, view-ness, identity
    for v, tv in zip(values, t_values):
        np.testing.assert_allclose(v, tv, rtol=vtol, atol=vtol, equal_nan=True)
    assert [g is None for g in grads] == [g is None for g in t_grads]
    assert gdt == t_gdt
    for g, tg in zip(grads, t_grads):
        if g is not None:
            np.testing.assert_allclose(g, tg, rtol=gtol, atol=gtol, equal_nan=True)


def _second_order(mod: Any, row: OpRow, arrays: list) -> list:
    tensors = _tensors(mod, row, arrays)
    diff_inputs = [t for t in tensors if t.requires_grad]
    outs = [o for o in _as_tuple(row.fn(mod, *tensors)) if o.requires_grad]
    rng = np.random.default_rng(2)
    ws = [mod.tensor(rng.standard_normal(tuple(o.shape)), requires_grad=True) for o in outs]
    firsts = mod.autograd.grad(outs, diff_inputs, ws, create_graph=True, allow_unused=True)
    terms = [(g * g).sum() for g in firsts if g is not None and g.requires_grad]
    wrt = diff_inputs + ws
    if not terms:
        return [np.zeros(tuple(t.shape)) for t in wrt]
    total = terms[0]
    for term in terms[1:]:
        total = total + term
    seconds = mod.autograd.grad(total, wrt, allow_unused=True)
    # force=True: torch hands back ZeroTensors for some zero gradients (abs, norm(1), ...).
    return [np.zeros(tuple(t.shape)) if g is None else g.detach().numpy(force=True).copy()
            for g, t in zip(seconds, wrt)]


@pytest.mark.parametrize("row", _params(SECOND_ORDER))
def test_second_order_matches_torch(row: OpRow) -> None:
    """Backward rules are written in npgrad ops, so gradients of gradients match torch's."""
    torch = pytest.importorskip("torch")
    if row.no_gradgradcheck:
        pytest.skip(row.no_gradgradcheck)
    arrays = row.arrays(np.float64)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        mine = _second_order(npgrad, row, arrays)
        theirs = _second_order(torch, row, arrays)
    for a, b in zip(mine, theirs):
        np.testing.assert_allclose(a, b, rtol=1e-7, atol=1e-9)


# -- (e): forward-mode AD ---------------------------------------------------------------------

def _tangents(row: OpRow, arrays: list) -> list:
    """A random tangent for each input that requires grad (None for the others)."""
    rng = np.random.default_rng(3)
    # float32-exact values: a row that passes through float32 then rounds no tangent
    return [rng.standard_normal(a.shape).astype(np.float32).astype(a.dtype) if r else None
            for a, r in zip(arrays, row.rg)]


def _forward(mod: Any, row: OpRow, arrays: list, tangents: list) -> list:
    """The row's output tangents (None for an output without one) from forward-mode AD."""
    fwad = mod.autograd.forward_ad
    with fwad.dual_level():
        inputs = [mod.tensor(a) if t is None else fwad.make_dual(mod.tensor(a), mod.tensor(t))
                  for a, t in zip(arrays, tangents)]
        outs = _as_tuple(row.fn(mod, *inputs))
        found = [fwad.unpack_dual(o).tangent if isinstance(o, mod.Tensor) else None for o in outs]
        return [None if t is None else t.detach().numpy().copy() for t in found]


def _reverse_jacobian_products(row: OpRow, arrays: list, tangents: list) -> list:
    """sum_i J_i t_i for each differentiable output, with J_i found by reverse mode, row by row."""
    tensors = _tensors(npgrad, row, arrays)
    outs = _as_tuple(row.fn(npgrad, *tensors))
    wrt = [t for t in tensors if t.requires_grad]
    wrt_tangents = [t for t in tangents if t is not None]
    products = []
    for out in outs:
        if not (isinstance(out, npgrad.Tensor) and out.requires_grad):
            products.append(None)
            continue
        flat = np.zeros(out.numel())
        for k in range(out.numel()):
            seed = np.zeros(out.numel())
            seed[k] = 1.0
            grads = npgrad.autograd.grad(out, wrt, npgrad.tensor(seed.reshape(tuple(out.shape)),
                                                                 dtype=out.dtype),
                                         retain_graph=True, allow_unused=True)
            flat[k] = sum(float((g.numpy() * t).sum()) for g, t in zip(grads, wrt_tangents)
                          if g is not None)
        products.append(flat.reshape(tuple(out.shape)))
    return products


@pytest.mark.parametrize("row", _params(FORWARD))
def test_forward_ad_matches_reverse_jacobian(row: OpRow) -> None:
    if row.gradient_not_derivative:
        pytest.skip("reverse mode gives torch's gradient, which is not the derivative here")
    arrays = row.arrays(np.float64)
    tangents = _tangents(row, arrays)
    try:
        reverse = _reverse_jacobian_products(row, arrays, tangents)
    except RuntimeError as error:  # an op torch does not differentiate: no forward rule either
        assert str(error).startswith("derivative for ")
        with pytest.raises(NotImplementedError, match="^Trying to use forward AD with "):
            _forward(npgrad, row, arrays, tangents)
        return
    forward = _forward(npgrad, row, arrays, tangents)
    for f, r in zip(forward, reverse):
        if r is None:  # not differentiable (an index output): no tangent either
            assert f is None
            continue
        assert f is not None
        np.testing.assert_allclose(f, r, rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("row", _params(FORWARD))
def test_forward_ad_gradcheck(row: OpRow) -> None:
    if row.no_gradcheck and not row.gradient_not_derivative:
        pytest.skip(row.no_gradcheck)
    inputs = _tensors(npgrad, row, row.arrays(np.float64))
    assert npgrad.autograd.gradcheck(_func(row), inputs, check_forward_ad=True,
                                     check_backward_ad=False, **GC_TOL)


@pytest.mark.parametrize("row", _params(FORWARD_TORCH))
def test_forward_ad_matches_torch(row: OpRow) -> None:
    torch = pytest.importorskip("torch")
    arrays = row.arrays(np.float64)
    tangents = _tangents(row, arrays)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            theirs = _forward(torch, row, arrays, tangents)
        except NotImplementedError as error:  # torch has no forward rule for this op
            with pytest.raises(NotImplementedError, match=f"^{error}$"):
                _forward(npgrad, row, arrays, tangents)
            return
        mine = _forward(npgrad, row, arrays, tangents)
    assert [m is None for m in mine] == [t is None for t in theirs]
    for m, t in zip(mine, theirs):
        if t is not None:
            np.testing.assert_allclose(m, t, rtol=1e-9, atol=1e-9)


def _forward_over_reverse(mod: Any, row: OpRow, arrays: list, tangents: list) -> list:
    """Tangents of the input gradients: the Hessian-vector products forward-over-reverse gives."""
    fwad = mod.autograd.forward_ad
    rng = np.random.default_rng(4)
    with fwad.dual_level():
        leaves = [mod.tensor(a, requires_grad=r) for a, r in zip(arrays, row.rg)]
        inputs = [x if t is None else fwad.make_dual(x, mod.tensor(t))
                  for x, t in zip(leaves, tangents)]
        outs = [o for o in _as_tuple(row.fn(mod, *inputs))
                if isinstance(o, mod.Tensor) and o.requires_grad]
        ws = [mod.tensor(rng.standard_normal(tuple(o.shape))) for o in outs]
        wrt = [x for x, r in zip(inputs, row.rg) if r]
        grads = mod.autograd.grad(outs, wrt, ws, create_graph=True, allow_unused=True)
        found = [None if g is None else fwad.unpack_dual(g).tangent for g in grads]
        return [None if t is None else t.detach().numpy().copy() for t in found]


def _reverse_over_reverse(row: OpRow, arrays: list, tangents: list) -> list:
    """The same Hessian-vector products by reverse mode twice (the Hessian is symmetric)."""
    rng = np.random.default_rng(4)
    inputs = _tensors(npgrad, row, arrays)
    outs = [o for o in _as_tuple(row.fn(npgrad, *inputs))
            if isinstance(o, npgrad.Tensor) and o.requires_grad]
    ws = [npgrad.tensor(rng.standard_normal(tuple(o.shape))) for o in outs]
    wrt = [x for x in inputs if x.requires_grad]
    grads = npgrad.autograd.grad(outs, wrt, ws, create_graph=True, allow_unused=True)
    terms = [(g * npgrad.tensor(t)).sum() for g, t in zip(grads, [t for t in tangents
                                                               if t is not None])
             if g is not None and g.requires_grad]
    if not terms:
        return [None] * len(wrt)
    total = terms[0]
    for term in terms[1:]:
        total = total + term
    found = npgrad.autograd.grad(total, wrt, allow_unused=True)
    return [None if g is None else g.numpy().copy() for g in found]


def _same_tangents(mine: list, theirs: list, tol: float) -> None:
    """None and zeros both mean a zero tangent."""
    for m, t in zip(mine, theirs):
        if m is None or t is None:
            assert not np.any(m if m is not None else 0) and not np.any(t if t is not None else 0)
            continue
        np.testing.assert_allclose(m, t, rtol=tol, atol=tol)


@pytest.mark.parametrize("row", _params(FORWARD))
def test_forward_over_reverse(row: OpRow) -> None:
    """Forward mode through a backward pass gives Hessian-vector products: checked against
    reverse-over-reverse, and against torch where torch has the forward rules."""
    if row.no_gradgradcheck:
        pytest.skip(row.no_gradgradcheck)
    arrays = row.arrays(np.float64)
    tangents = _tangents(row, arrays)
    mine = _forward_over_reverse(npgrad, row, arrays, tangents)
    _same_tangents(mine, _reverse_over_reverse(row, arrays, tangents), 1e-8)
    try:
        torch = __import__("torch")
    except ImportError:
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            theirs = _forward_over_reverse(torch, row, arrays, tangents)
        except (NotImplementedError, RuntimeError):  # torch lacks a rule (huber_loss_backward)
            return
    _same_tangents(mine, theirs, 1e-8)


# -- (d): hypothesis property over the pointwise rows -------------------------------------------

POINTWISE = [r for r in ROWS if r.family == "pointwise"
             and not any(isinstance(s, np.ndarray) for s in r.inputs)]


def _values(rng: np.random.Generator, shape: tuple, domain: str, pattern: str) -> np.ndarray:
    """Values in ``domain``: uniform, or on a grid of halves (ties, integers, zero, x.5)."""
    lo, hi = DOMAINS[domain]
    if pattern == "grid":
        grid = np.arange(np.ceil(lo * 2) / 2, hi + 1e-9, 0.5)
        if domain == "nonzero":
            grid = np.concatenate([-grid, grid])
        return rng.choice(grid, size=shape)
    values = rng.uniform(lo, hi, size=shape)
    if domain == "nonzero":
        values = values * rng.choice([-1.0, 1.0], size=shape)
    return values


def _shapes(data: Any, row: OpRow) -> list:
    n = len(row.inputs)
    if n == 1:
        return [data.draw(hnp.array_shapes(min_dims=0, max_dims=3, min_side=1, max_side=3))]
    if row.broadcast == "mutual":
        return list(data.draw(hnp.mutually_broadcastable_shapes(
            num_shapes=n, min_dims=0, max_dims=3, min_side=1, max_side=3)).input_shapes)
    base = data.draw(hnp.array_shapes(min_dims=0, max_dims=3, min_side=1, max_side=3))
    if row.broadcast == "scalar_rest":  # the other inputs must be 0-dim (e.g. a fill value)
        return [base] + [()] * (n - 1)
    shapes = [base]
    for _ in range(n - 1):  # broadcast to the first input's shape: a suffix, some sides 1
        keep = data.draw(st.integers(0, len(base)))
        suffix = base[len(base) - keep:]
        shapes.append(tuple(data.draw(st.sampled_from([1, s])) for s in suffix))
    return shapes


@pytest.mark.filterwarnings("ignore:mypy_extensions.TypedDict is deprecated")  # hypothesis' libcst
@pytest.mark.parametrize("row", _params(PROPERTY, POINTWISE))
@settings(max_examples=50, deadline=None, derandomize=True, database=None,
          phases=(Phase.explicit, Phase.generate),  # no shrinking: known-bug rows stay fast
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(data=st.data())
def test_pointwise_property(row: OpRow, data: Any) -> None:
    torch = pytest.importorskip("torch")
    # Hypothesis draws the dtype, the shapes, the kind of values and a seed; NumPy draws the
    # values from the seed (drawing each element through hypothesis costs 10x more time).
    dtype = np.dtype(data.draw(st.sampled_from(["float32", "float64"])))
    shapes = _shapes(data, row)
    pattern = data.draw(st.sampled_from(["uniform", "grid"]))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    arrays = [_values(rng, shape, row.domain_of(i), pattern).astype(dtype)
              for i, shape in enumerate(shapes)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ours = _run(npgrad, row, arrays, row.torch_backward)
        theirs = _run(torch, row, arrays, row.torch_backward)
    vtol, gtol = (1e-5, 1e-4) if dtype == np.float32 else (1e-10, 1e-9)
    (facts, values, grads, _), (t_facts, t_values, t_grads, _) = ours, theirs
    assert [f[:2] for f in facts] == [f[:2] for f in t_facts]  # shape and dtype
    for v, tv in zip(values, t_values):
        np.testing.assert_allclose(v, tv, rtol=vtol, atol=vtol)
    for g, tg in zip(grads, t_grads):
        assert (g is None) == (tg is None)
        if g is not None:
            np.testing.assert_allclose(g, tg, rtol=gtol, atol=gtol)


# -- (e): nothing recorded under no_grad ----------------------------------------------------------

@pytest.mark.parametrize("row", _params(NO_GRAD))
def test_no_grad(row: OpRow) -> None:
    tensors = _tensors(npgrad, row, row.arrays(np.float64))
    with npgrad.no_grad():
        outs = _as_tuple(row.fn(npgrad, *tensors))
    for o in outs:
        assert o.grad_fn is None
        # An input returned as is, or a view of one, keeps requires_grad (as in torch).
        aliased = any(o is t for t in tensors) or (o._is_view() and o._base.requires_grad)
        assert o.requires_grad == aliased
        assert o.is_leaf


# ==============================================================================================
# gradcheck itself
# ==============================================================================================

def _x64(mod: Any) -> Any:
    return mod.tensor([0.5, -1.0, 2.0], dtype=mod.float64, requires_grad=True)


def _torch_function(torch: Any, backward: Any) -> Any:
    """A torch.autograd.Function computing exp with the given (possibly wrong) backward."""
    class Exp(torch.autograd.Function):
        @staticmethod
        def forward(ctx: Any, x: Any) -> Any:
            result = x.exp()
            ctx.save_for_backward(result)
            return result

        @staticmethod
        def backward(ctx: Any, grad: Any) -> Any:
            (result,) = ctx.saved_tensors
            return backward(grad, result)

    return Exp.apply


def _patch_exp_backward(monkeypatch: Any, backward: Any) -> None:
    from npgrad._ops import pointwise
    from npgrad._ops._core import saved

    monkeypatch.setattr(pointwise.EXP.node, "backward",
                        lambda self, grad: (backward(grad, saved(self, "result")),))


def _as_npgrad_text(message: str) -> str:
    return message.replace("torch.", "npgrad.")


def test_gradcheck_passes_and_returns_true() -> None:
    x = _x64(npgrad)
    assert npgrad.autograd.gradcheck(npgrad.exp, (x,)) is True
    assert npgrad.autograd.gradcheck(npgrad.exp, x) is True  # a lone tensor is one input
    assert npgrad.autograd.gradgradcheck(npgrad.exp, (x,)) is True
    assert npgrad.autograd.gradcheck(lambda a: a * 2, (x,), fast_mode=True,
                                     check_batched_grad=True) is True


def test_gradcheck_fails_like_torch_on_a_wrong_backward(monkeypatch: Any) -> None:
    torch = pytest.importorskip("torch")

    def wrong(grad: Any, result: Any) -> Any:
        return grad * result * 2

    _patch_exp_backward(monkeypatch, wrong)
    with pytest.raises(GradcheckError) as ours:
        npgrad.autograd.gradcheck(npgrad.exp, (_x64(npgrad),))
    assert isinstance(ours.value, RuntimeError)
    assert str(ours.value).startswith("Jacobian mismatch for output 0 with respect to input 0,\n"
                                      "numerical:tensor(")
    from torch.autograd.gradcheck import GradcheckError as TorchGradcheckError

    with pytest.raises(TorchGradcheckError) as theirs:
        torch.autograd.gradcheck(_torch_function(torch, wrong), (_x64(torch),))
    assert str(ours.value) == _as_npgrad_text(str(theirs.value))
    assert npgrad.autograd.gradcheck(npgrad.exp, (_x64(npgrad),), raise_exception=False) is False


def test_gradcheck_error_without_torch(monkeypatch: Any) -> None:
    _patch_exp_backward(monkeypatch, lambda grad, result: grad * result * 2)
    x = npgrad.tensor([0.0], dtype=npgrad.float64, requires_grad=True)
    with pytest.raises(GradcheckError) as info:
        npgrad.autograd.gradcheck(npgrad.exp, (x,))
    assert str(info.value) == ("Jacobian mismatch for output 0 with respect to input 0,\n"
                               "numerical:tensor([[1.0000]], dtype=npgrad.float64)\n"
                               "analytical:tensor([[2.]], dtype=npgrad.float64)\n")


def test_gradgradcheck_catches_a_backward_without_graph(monkeypatch: Any) -> None:
    """A backward computed outside npgrad ops is right once, but has no second derivative."""
    from npgrad._ops import pointwise
    from npgrad._ops._core import saved

    def detached(self: Any, grad: Any) -> tuple:
        return (grad * npgrad.tensor(np.cos(saved(self, "self_")._data)),)

    monkeypatch.setattr(pointwise.SIN.node, "backward", detached)
    x = _x64(npgrad)
    assert npgrad.autograd.gradcheck(npgrad.sin, (x,))
    with pytest.raises(GradcheckError, match=r"^Jacobian mismatch for output 0 with respect to "
                                             r"input 0,\nnumerical:"):
        npgrad.autograd.gradgradcheck(npgrad.sin, (x,))


def _error_text(mod: Any, call: Any) -> tuple:
    with pytest.raises(Exception) as info:
        call(mod)
    return [c.__name__ for c in type(info.value).__mro__], _as_npgrad_text(str(info.value))


def test_input_errors_match_torch() -> None:
    torch = pytest.importorskip("torch")
    cases = [
        lambda m: m.autograd.gradcheck(m.exp, (m.tensor([1.0], dtype=m.float64),)),
        lambda m: m.autograd.gradcheck(
            lambda a: a * 1, (m.ones(3, 1, dtype=m.float64, requires_grad=True).expand(3, 2),)),
        lambda m: m.autograd.gradcheck(m.exp, (_x64(m),), check_backward_ad=False),
        lambda m: m.autograd.gradcheck(lambda a: (a * 2).detach() * a.detach(), (_x64(m),)),
    ]
    for call in cases[:2] + cases[3:]:
        assert _error_text(npgrad, call) == _error_text(torch, call)
    with pytest.raises(AssertionError, match="^Expected at least one of check_forward_ad or "
                                             "check_backward_ad to be True$"):
        cases[2](npgrad)


def test_float32_input_warns_like_torch() -> None:
    torch = pytest.importorskip("torch")
    texts = []
    for m in (npgrad, torch):
        x = m.tensor([0.5, 1.0], requires_grad=True)
        with pytest.warns(UserWarning) as record:
            m.autograd.gradcheck(m.exp, (x,), raise_exception=False)
        texts.append([str(w.message) for w in record])
    assert texts[0] == texts[1]
    assert texts[0] == ["Input #0 requires gradient and is not a double precision floating point "
                        "or complex. This check will likely fail if all the inputs are not of "
                        "double precision floating point or complex. "]


def test_backward_not_multiplied_by_grad_output(monkeypatch: Any) -> None:
    torch = pytest.importorskip("torch")

    def ignores_zero(grad: Any, result: Any) -> Any:
        return grad * result if bool((grad != 0).any()) else result * 1

    _patch_exp_backward(monkeypatch, ignores_zero)
    msgs = []
    with pytest.raises(GradcheckError) as ours:
        npgrad.autograd.gradcheck(npgrad.exp, (_x64(npgrad),), check_undefined_grad=False)
    msgs.append(str(ours.value))
    with pytest.raises(RuntimeError) as theirs:
        torch.autograd.gradcheck(_torch_function(torch, ignores_zero), (_x64(torch),),
                                 check_undefined_grad=False)
    msgs.append(str(theirs.value))
    assert msgs == ["backward not multiplied by grad_output"] * 2


def test_nondeterministic_backward(monkeypatch: Any) -> None:
    rng = np.random.default_rng(0)
    _patch_exp_backward(monkeypatch, lambda grad, result: grad * result
                        * float(1 + 1e-9 * rng.standard_normal()))
    with pytest.raises(GradcheckError, match=r"^Backward is not reentrant, i\.e\., running "
                                             r"backward with same input and grad_output "
                                             r"multiple times gives different values, although "
                                             r"analytical gradient matches numerical gradient\."
                                             r"The tolerance for nondeterminism was 0\.0\."):
        npgrad.autograd.gradcheck(npgrad.exp, (_x64(npgrad),))
    assert npgrad.autograd.gradcheck(npgrad.exp, (_x64(npgrad),), nondet_tol=1e-6)


def test_batched_grad_check_catches_a_nonlinear_backward(monkeypatch: Any) -> None:
    _patch_exp_backward(monkeypatch, lambda grad, result: grad * grad.abs() * result
                        if bool((grad.abs().sum() != 1).item()) else grad * result)
    x = _x64(npgrad)
    assert npgrad.autograd.gradcheck(npgrad.exp, (x,), check_undefined_grad=False)
    with pytest.raises(GradcheckError, match="^For output 0 and input 0:"):
        npgrad.autograd.gradcheck(npgrad.exp, (x,), check_batched_grad=True,
                                  check_undefined_grad=False)


def test_undefined_output_grad_must_be_handled(monkeypatch: Any) -> None:
    """A multi-output node must accept None for the gradients of its unused outputs.

    The Jacobian rows already hand a multi-output node None next to a one-hot gradient, so
    the broken backward here only fails when None comes with all-zero gradients, which is
    what the undefined-gradient check feeds it.
    """
    from npgrad._ops import shape

    original = shape.UNBIND.node.backward

    def needs_all(self: Any, *grads: Any) -> Any:
        if any(g is None for g in grads) and all(not g._data.any() for g in grads
                                                 if g is not None):
            raise RuntimeError("undefined gradient")
        return original(self, *grads)

    monkeypatch.setattr(shape.UNBIND.node, "backward", needs_all)
    x = npgrad.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=npgrad.float64, requires_grad=True)
    with pytest.warns(UserWarning, match="^Backwards compatibility: New undefined gradient"):
        with pytest.raises(GradcheckError, match="^Expected backward function to handle "
                                                 "undefined output grads"):
            npgrad.autograd.gradcheck(lambda a: a.unbind(0), (x,))
    assert npgrad.autograd.gradcheck(lambda a: a.unbind(0), (x,), check_undefined_grad=False)


def test_forward_ad_check_catches_a_wrong_forward_rule(monkeypatch: Any) -> None:
    """gradcheck(check_forward_ad=True) compares tangents with finite differences, as torch's."""
    from npgrad._ops import pointwise

    x = _x64(npgrad)
    assert npgrad.autograd.gradcheck(npgrad.exp, (x,), check_forward_ad=True)
    monkeypatch.setattr(pointwise.EXP, "tangent", lambda tangent, result: tangent * 2)
    with pytest.raises(GradcheckError, match="^Jacobian computed with forward mode mismatch for "
                                             "output 0 with respect to input 0,\nnumerical:"):
        npgrad.autograd.gradcheck(npgrad.exp, (x,), check_forward_ad=True)


def test_gradgradcheck_with_given_grad_outputs() -> None:
    x = _x64(npgrad)
    g = npgrad.tensor([1.0, -2.0, 0.5], dtype=npgrad.float64, requires_grad=True)
    assert npgrad.autograd.gradgradcheck(lambda a: a * a * a, (x,), (g,))
    assert npgrad.autograd.gradgradcheck(lambda a: a * a, (x,), gen_non_contig_grad_outputs=True)
