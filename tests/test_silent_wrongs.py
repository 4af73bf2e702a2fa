"""Issue 12's silent wrong results, each against torch 2.13: integer tensors with out-of-range
Python scalars, a second backward through ops that keep saved values outside SavedTensor, an
in-place op on a view given requires_grad, integer results that must not record, reductions'
``dtype=``, losses whose targets are all ignored, strict ``load_state_dict`` and 1-D embedding
weights."""
from __future__ import annotations

import itertools
import warnings
from typing import Any, Callable

import numpy as np
import pytest

import npgrad

from op_table import ROWS
from torch_oracle import assert_same_error

torch = pytest.importorskip("torch")


def _outcome(fn: Callable[[], Any]) -> tuple:
    """What ``fn()`` gives: ("ok", dtype, shape, requires_grad, grad_fn name, values) or
    ("err", exception type name, message)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            r = fn()
        except Exception as e:  # noqa: BLE001 - the exception is the outcome
            return ("err", type(e).__name__, str(e))
    name = None if r.grad_fn is None else type(r.grad_fn).__name__
    return ("ok", str(r.dtype).split(".")[-1], tuple(r.shape), r.requires_grad, name,
            r.detach().numpy().copy())


def assert_same_outcome(make: Callable[[Any], Any]) -> None:
    """``make(lib)`` gives the same outcome in npgrad as in torch: equal values (NaNs and the
    sign of zeros included), dtype, shape, requires_grad and grad_fn; or the same error."""
    mine, theirs = _outcome(lambda: make(npgrad)), _outcome(lambda: make(torch))
    assert mine[:-1] == theirs[:-1], (mine, theirs)
    if mine[0] == "err":
        assert mine[-1] == theirs[-1]
        return
    a, b = mine[-1], theirs[-1]
    np.testing.assert_array_equal(np.isnan(a.astype(np.float64)), np.isnan(b.astype(np.float64)))
    if a.dtype.kind == "f":
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=0)
        np.testing.assert_array_equal(np.signbit(a), np.signbit(b))
    else:
        np.testing.assert_array_equal(a, b)


# -- 1. integer tensors with out-of-range Python scalars ----------------------------------

INT_VALUES = {"uint8": [0, 1, 128, 255], "int8": [-128, -1, 0, 100],
              "int16": [-300, 0, 7, 32767], "int32": [-7, 0, 9, 2 ** 31 - 1],
              "int64": [-5, 0, 3, 2 ** 62]}
SCALARS = [256, -1, -129, 200, 2 ** 40, 2 ** 63, -2 ** 63, 2 ** 64, -2 ** 63 - 1, 300.0, -1.5,
           1e20, 2 ** 31, 3]
SCALAR_OPS: dict[str, Callable[[Any, Any], Any]] = {
    "div": lambda t, s: t / s, "rdiv": lambda t, s: s / t,
    "floordiv": lambda t, s: t // s, "mod": lambda t, s: t % s,
    "rfloordiv": lambda t, s: s // t, "rmod": lambda t, s: s % t,
    "add": lambda t, s: t + s, "radd": lambda t, s: s + t, "sub": lambda t, s: t - s,
    "rsub": lambda t, s: s - t, "mul": lambda t, s: t * s,
    "pow": lambda t, s: t ** s, "rpow": lambda t, s: s ** t,
    "lt": lambda t, s: t < s, "le": lambda t, s: t <= s, "gt": lambda t, s: t > s,
    "ge": lambda t, s: t >= s, "eq": lambda t, s: t == s, "ne": lambda t, s: t != s,
    "div_floor": lambda t, s: t.div(s, rounding_mode="floor"),
    "div_trunc": lambda t, s: t.div(s, rounding_mode="trunc"),
    "fmod": lambda t, s: t.fmod(s), "remainder": lambda t, s: t.remainder(s),
    "add_": lambda t, s: t.add_(s), "sub_": lambda t, s: t.sub_(s),
    "mul_": lambda t, s: t.mul_(s), "div_": lambda t, s: t.div_(s),
    "floor_divide_": lambda t, s: t.floor_divide_(s), "remainder_": lambda t, s: t.remainder_(s),
    "fmod_": lambda t, s: t.fmod_(s), "pow_": lambda t, s: t.pow_(s),
    "ifloordiv": lambda t, s: t.__ifloordiv__(s), "imod": lambda t, s: t.__imod__(s),
}


@pytest.mark.parametrize("dtype,op", list(itertools.product(INT_VALUES, SCALAR_OPS)))
def test_integer_tensor_with_python_scalar(dtype: str, op: str) -> None:
    for s in SCALARS:
        assert_same_outcome(
            lambda m: SCALAR_OPS[op](m.tensor(INT_VALUES[dtype], dtype=getattr(m, dtype)), s))


@pytest.mark.parametrize("dtype", ["float32", "float64", "bool"])
@pytest.mark.parametrize("op", ["div", "rdiv", "add", "mul", "pow", "lt", "add_", "div_"])
def test_other_dtypes_with_python_scalar(dtype: str, op: str) -> None:
    values = [True, False, True] if dtype == "bool" else [-2.5, 0.0, 3.0]
    for s in SCALARS:
        assert_same_outcome(
            lambda m: SCALAR_OPS[op](m.tensor(values, dtype=getattr(m, dtype)), s))


def test_the_issue_examples() -> None:
    assert_same_outcome(lambda m: m.tensor([128, 255], dtype=m.uint8) / 256)
    assert_same_outcome(lambda m: m.tensor([-128, -1, 0, 100], dtype=m.int8) / 200)
    assert_same_outcome(lambda m: m.tensor([3, 2 ** 31 - 1], dtype=m.int32) / 2 ** 40)
    r = npgrad.tensor([128, 255], dtype=npgrad.uint8) / 256
    np.testing.assert_array_equal(r.numpy(), np.array([0.5, 255 / 256], dtype=np.float32))


def test_integer_powers_with_negative_tensor_exponents() -> None:
    assert_same_outcome(lambda m: m.tensor([2, 3, -1, 1, 0, -1]) ** m.tensor([-1, 2, -3, -5, -1, -2]))
    assert_same_outcome(lambda m: m.pow(-1, m.tensor([-1, -2, 3])))
    assert_same_outcome(lambda m: m.pow(3, m.tensor([-1, 0, 4], dtype=m.int16)))
    assert_same_outcome(lambda m: m.tensor([3], dtype=m.int8) ** m.tensor(-1))


def test_in_place_floor_divide_and_modulo_write_in_place() -> None:
    for m in (npgrad, torch):
        t = m.tensor([5, 7, -3])
        alias = t
        t //= 2
        assert t is alias
        t %= 3
        assert t is alias
        assert t.tolist() == [2, 0, 1]


# -- 2. a second backward -----------------------------------------------------------------

def _backward_twice(mod: Any, row: Any) -> tuple:
    """Backward twice without retain_graph: ("refused" or "ran again", the leaves' gradients)."""
    tensors = [mod.tensor(a, requires_grad=r) for a, r in zip(row.arrays(), row.rg)]
    outs = row.fn(mod, *tensors)
    outs = tuple(outs) if isinstance(outs, (tuple, list)) else (outs,)
    diff = [o for o in outs if o.requires_grad]
    if not diff:
        return "nothing to differentiate", []
    leaves = [t for t in tensors if t.requires_grad]
    grads = [mod.ones_like(o) for o in diff]
    mod.autograd.backward(diff, grads, inputs=leaves)
    outcome = "ran again"
    try:
        mod.autograd.backward(diff, grads, inputs=leaves)
    except RuntimeError as e:
        if not str(e).startswith("Trying to backward through the graph a second time"):
            raise
        assert str(e) == npgrad.autograd.graph.SECOND_BACKWARD_MSG
        outcome = "refused"
    return outcome, [None if t.grad is None else t.grad.numpy().copy() for t in leaves]


@pytest.mark.parametrize("row", [r for r in ROWS if r.torch_backward], ids=lambda r: r.name)
def test_second_backward_refused_where_torch_refuses(row: Any) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        (mine, my_grads), (theirs, their_grads) = _backward_twice(npgrad, row), _backward_twice(
            torch, row)
    assert mine == theirs
    # what the refused backward had accumulated before it stopped (torch's order) stays
    for g, tg in zip(my_grads, their_grads):
        assert (g is None) == (tg is None)
        if g is not None:
            np.testing.assert_allclose(g, tg, rtol=1e-9, atol=1e-12)


SECOND_BACKWARD_CASES = {
    "embedding": lambda m, w: m.nn.functional.embedding(m.tensor([0, 2, 0]), w),
    "gather": lambda m, w: w.gather(1, m.tensor([[0], [1], [0]])),
    "advanced_index": lambda m, w: w[m.tensor([0, 2])],
    "avg_pool2d": lambda m, w: m.nn.functional.avg_pool2d(w.reshape(1, 1, 3, 2), (1, 2)),
    "max_pool2d": lambda m, w: m.nn.functional.max_pool2d(w.reshape(1, 1, 3, 2), (1, 2)),
    "slice": lambda m, w: w[1:],
    "expand": lambda m, w: w.expand(4, 3, 2),
    "upsample_nearest": lambda m, w: m.nn.functional.interpolate(w.reshape(1, 1, 3, 2),
                                                                 scale_factor=2),
}


@pytest.mark.parametrize("case", list(SECOND_BACKWARD_CASES))
def test_second_backward_of_the_issue(case: str) -> None:
    outcomes = []
    for m in (npgrad, torch):
        w = m.tensor(np.arange(6.0).reshape(3, 2), requires_grad=True)
        loss = SECOND_BACKWARD_CASES[case](m, w).sum()
        loss.backward()
        try:
            loss.backward()
            outcomes.append(("ran", w.grad.numpy().tolist()))
        except RuntimeError as e:
            outcomes.append((str(e), w.grad.numpy().tolist()))
    assert outcomes[0] == outcomes[1]


def test_retain_graph_allows_a_second_backward_through_saved_indices() -> None:
    w = npgrad.tensor([[1., 2.], [3., 4.]], requires_grad=True)
    loss = npgrad.nn.functional.embedding(npgrad.tensor([1, 1]), w).sum()
    loss.backward(retain_graph=True)
    loss.backward()
    assert w.grad.tolist() == [[0., 0.], [4., 4.]]


# -- 3. in-place ops on a view given requires_grad ----------------------------------------

LEAF_VIEW_CASES = {
    "view_given_requires_grad": "base = m.zeros(2, 3); x = base.t(); x.requires_grad_(); x.add_(1)",
    "view_of_that_view": "base = m.zeros(2, 3); x = base.t(); x.requires_grad_(); x[0].add_(1)",
    "detached_given_requires_grad":
        "leaf = m.zeros(2, requires_grad=True); d = leaf.detach(); d.requires_grad_(); d.add_(1)",
    "view_of_a_leaf": "leaf = m.zeros(2, 3, requires_grad=True); leaf[0].mul_(2)",
}


@pytest.mark.parametrize("case", list(LEAF_VIEW_CASES))
def test_in_place_on_a_view_of_a_leaf(case: str) -> None:
    code = LEAF_VIEW_CASES[case]
    assert_same_error(f"exec({code!r})", lambda m: {"m": m})


def test_in_place_on_views_that_torch_allows() -> None:
    for m in (npgrad, torch):
        base = m.zeros(2, 3)
        v = base[0]
        v.copy_(m.ones(3, requires_grad=True))
        v.add_(1)  # the base now has history: not a leaf any more
        assert base.grad_fn.name() == "torch::autograd::CopySlices"
        base = m.zeros(2, 3)
        x = base.t()
        x.requires_grad_()
        with m.no_grad():
            x.add_(1)
        assert x.requires_grad and x.grad_fn is None


# -- 4. integer results, tensor(None), reductions' dtype, all-ignored targets -----------------

def test_copy_into_an_integer_tensor_records_nothing() -> None:
    def make(m: Any) -> Any:
        i = m.zeros(3, dtype=m.int8)
        return i.copy_(m.tensor([1.7, -2.2, 3.9], requires_grad=True))
    assert_same_outcome(make)

    def make_view(m: Any) -> Any:
        i = m.zeros(2, 3, dtype=m.int32)
        i[0].copy_(m.tensor([1.7, -2.2, 3.9], requires_grad=True))
        return i
    assert_same_outcome(make_view)


@pytest.mark.parametrize("dim", [0, 1])
def test_softmax_with_an_integer_dtype(dim: int) -> None:
    x = np.array([[1., 2., 3.], [0., -1., 4.]])
    for fn in ("softmax", "log_softmax"):
        assert_same_outcome(lambda m: getattr(m.nn.functional, fn)(
            m.tensor(x, requires_grad=True), dim, dtype=m.int64))


def test_tensor_of_none() -> None:
    assert_same_error("m.tensor(None)", lambda m: {"m": m})


REDUCTIONS = {
    "sum_int32": lambda m, x: x.sum(dtype=m.int32),
    "sum_dim_int8": lambda m, x: x.sum(0, dtype=m.int8),
    "sum_float64": lambda m, x: x.sum(dtype=m.float64),
    "nansum_int16": lambda m, x: m.nansum(x, dtype=m.int16),
    "prod_int32": lambda m, x: x.prod(dtype=m.int32),
    "prod_dim_int16": lambda m, x: x.prod(1, dtype=m.int16),
    "cumsum_int32": lambda m, x: x.cumsum(0, dtype=m.int32),
    "cumprod_int16": lambda m, x: x.cumprod(1, dtype=m.int16),
    "mean_float64": lambda m, x: x.mean(dtype=m.float64),
    "mean_int64": lambda m, x: x.mean(dtype=m.int64),
}


@pytest.mark.parametrize("name", list(REDUCTIONS))
@pytest.mark.parametrize("source", ["float32", "int64", "uint8"])
def test_reduction_dtype_argument(name: str, source: str) -> None:
    data = [[1.5, 2.7, -3.2], [4.9, 5.1, 100.0]]
    assert_same_outcome(lambda m: REDUCTIONS[name](m, m.tensor(data).to(getattr(m, source))))


@pytest.mark.parametrize("name", ["sum_int32", "prod_int32", "cumsum_int32", "mean_int64"])
def test_reduction_to_an_integer_dtype_with_grad(name: str) -> None:
    data = [[1.5, 2.7, -3.2], [4.9, 5.1, 100.0]]
    assert_same_outcome(lambda m: REDUCTIONS[name](m, m.tensor(data, requires_grad=True)))


def _loss_and_grad(m: Any, loss: str, reduction: str, weighted: bool) -> Any:
    x = m.tensor(np.linspace(-1.0, 1.0, 12).reshape(3, 4), requires_grad=True)
    weight = m.tensor([1.0, 2.0, 0.5, 3.0], dtype=m.float64) if weighted else None
    if loss == "cross_entropy":
        out = m.nn.functional.cross_entropy(x, m.tensor([-100, -100, -100]), weight=weight,
                                            reduction=reduction)
    elif loss == "nll_loss":
        out = m.nn.functional.nll_loss(x, m.tensor([1, 1, 1]), weight=weight, ignore_index=1,
                                       reduction=reduction)
    else:
        out = m.nn.CrossEntropyLoss(weight=weight, ignore_index=2, reduction=reduction)(
            x, m.tensor([2, 2, 2]))
    out.sum().backward()
    return out, x.grad


@pytest.mark.parametrize("loss", ["cross_entropy", "nll_loss", "CrossEntropyLoss"])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("weighted", [False, True])
def test_every_target_ignored(loss: str, reduction: str, weighted: bool) -> None:
    assert_same_outcome(lambda m: _loss_and_grad(m, loss, reduction, weighted)[0])
    assert_same_outcome(lambda m: _loss_and_grad(m, loss, reduction, weighted)[1])


# -- 7. accepted where torch refuses ------------------------------------------------------------

def test_strict_load_state_dict_with_a_key_below_a_parameter() -> None:
    def env(m: Any) -> dict:
        model = m.nn.Sequential(m.nn.Linear(2, 2))
        sd = model.state_dict()
        sd["0.weight.extra"] = m.zeros(1)
        return {"model": model, "sd": sd}
    assert_same_error("model.load_state_dict(sd)", env)


def test_non_strict_load_state_dict_reports_a_key_below_a_parameter() -> None:
    results = []
    for m in (npgrad, torch):
        model = m.nn.Sequential(m.nn.Linear(2, 2))
        sd = model.state_dict()
        sd["0.weight.extra"] = m.zeros(1)
        r = model.load_state_dict(sd, strict=False)
        results.append((list(r.missing_keys), list(r.unexpected_keys)))
    assert results[0] == results[1]


@pytest.mark.parametrize("shape", [(3,), (), (2, 3, 4)])
def test_embedding_weight_must_be_2d(shape: tuple) -> None:
    def env(m: Any) -> dict:
        return {"F": m.nn.functional, "i": m.tensor([0, 1]), "w": m.ones(shape)}
    if len(shape) == 3:  # torch takes higher ranks
        assert_same_outcome(lambda m: m.nn.functional.embedding(m.tensor([0, 1]), m.ones(shape)))
    else:
        assert_same_error("F.embedding(i, w)", env)


# -- add(scalar, tensor, alpha=): alpha scales `other`, never the scalar ---------------------

@pytest.mark.parametrize("scalar, values, alpha", [
    (1.5, [1.0, 2.0], 2), (3, [1, 2], 2), (1.5, [1, 2], 2), (-2.0, [0.5, -4.0], -0.5),
])
def test_add_with_a_scalar_input_scales_other(scalar, values, alpha) -> None:
    torch = pytest.importorskip("torch")
    outs = []
    for m in (npgrad, torch):
        y = m.tensor(values)
        r = m.add(scalar, y, alpha=alpha)
        outs.append((r.tolist(), str(r.dtype).split(".")[-1]))
    assert outs[0] == outs[1]
    # and by hand: scalar + alpha * other
    assert outs[0][0] == [scalar + alpha * v for v in values]


@pytest.mark.parametrize("op", ["add", "sub"])
@pytest.mark.parametrize("make", [
    lambda m: (3, m.tensor([1, 2])), lambda m: (m.tensor([1, 2]), 3),
    lambda m: (m.tensor([1, 2]), m.tensor([1, 2])), lambda m: (1.5, m.tensor([1, 2])),
    lambda m: (m.tensor([1, 2]), 1.5), lambda m: (m.tensor([1.0, 2.0]), 1),
], ids=["int-scalar_int", "int_int-scalar", "int_int", "float-scalar_int", "int_float-scalar",
        "float_int-scalar"])
def test_float_alpha_with_integral_operands(op, make) -> None:
    pytest.importorskip("torch")
    assert_same_outcome(lambda m: getattr(m, op)(*make(m), alpha=0.5))


# -- wrong results the differential fuzzer found (tests/fuzz/SURVEY.md) ---------------------

INF, NAN = float("inf"), float("nan")


@pytest.mark.parametrize("start, end", [(NAN, 1.0), (INF, 1.0), (0.0, INF), (-INF, INF),
                                        (2.5, -3.0), (-3.0, 7.5), (0.1, 0.3), (1e30, -3.0)])
@pytest.mark.parametrize("steps", [1, 2, 5, 7, 100])
@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "int32"])
def test_linspace_fills_from_both_ends(start, end, steps, dtype) -> None:
    """Note [linspace's two halves]: torch's NaN/inf pattern and its last-bit rounding (which
    truncation to an integer dtype makes a whole unit: linspace(-3, 7.5, 7, int64)[3] is 1)."""
    if dtype.startswith("int") and not (np.isfinite(start) and np.isfinite(end)
                                        and abs(start) < 1e9):
        pytest.skip("torch refuses non-finite or huge ends for integer dtypes")
    assert_same_outcome(lambda m: m.linspace(start, end, steps, dtype=getattr(m, dtype)))


@pytest.mark.parametrize("start, end", [(NAN, 1.0), (INF, 1.0), (0.0, INF), (0.0, 2.0),
                                        (-3.0, 7.5), (7.5, 0.3)])
@pytest.mark.parametrize("steps", [1, 5, 7])
@pytest.mark.parametrize("dtype", ["float32", "float64", "int64"])
def test_logspace_exponents_as_torch(start, end, steps, dtype) -> None:
    """Integer logspace truncates (logspace(0, 2, 5, int64)[3] is 31, not 32); one step is
    ``base ** start`` with ``start`` uncast."""
    if dtype == "int64" and not (np.isfinite(start) and np.isfinite(end)):
        pytest.skip("torch refuses non-finite ends for integer dtypes")
    mine, theirs = (m.logspace(start, end, steps, dtype=getattr(m, dtype)).numpy()
                    for m in (npgrad, torch))
    np.testing.assert_allclose(mine, theirs, rtol=2e-6, atol=0)
    np.testing.assert_array_equal(np.isnan(mine), np.isnan(theirs))


@pytest.mark.parametrize("make", [
    lambda m: m.arange(True, 3), lambda m: m.arange(0, 3, True),
    lambda m: m.arange(m.tensor(2), 5), lambda m: m.arange(m.tensor(True), 3),
    lambda m: m.arange(m.tensor(2.0), 5), lambda m: m.arange(m.tensor(4)),
], ids=["bool-start", "bool-step", "int-0dim", "bool-0dim", "float-0dim", "int-0dim-end"])
def test_arange_dtype_of_bools_and_0dim_tensors(make) -> None:
    """Bools count as integers and 0-dim tensors as their Python numbers (int64 results)."""
    assert_same_outcome(make)


@pytest.mark.parametrize("value", [0.5, 3.5, -1, 0, True])
def test_constant_pad_of_a_bool_tensor(value) -> None:
    """Any nonzero fill value pads a bool tensor with True (int(0.5) would give False)."""
    assert_same_outcome(lambda m: m.nn.functional.pad(
        m.tensor([[[True, False], [False, True]]]), (2, 1), value=value))
    assert_same_outcome(lambda m: m.nn.ConstantPad1d(1, value)(m.tensor([[[True, False]]])))


@pytest.mark.parametrize("op", ["__rfloordiv__", "__rmod__"])
@pytest.mark.parametrize("other", ["f64", "int", "float", "np_float64"])
def test_reflected_floordiv_and_mod_keep_the_other_dtype(op, other) -> None:
    """``other // t`` is ``floor_divide(other, t)``: a float64 tensor stays float64."""
    def make(m: Any) -> Any:
        t = m.tensor([[1.5, 2.0, -3.0]])
        value = {"f64": lambda: m.tensor([2.0, 3.0, 4.0], dtype=m.float64), "int": lambda: 7,
                 "float": lambda: 7.5, "np_float64": lambda: np.float64(2.5)}[other]()
        return getattr(t, op)(value)
    assert_same_outcome(make)


@pytest.mark.parametrize("op", ["__rfloordiv__", "__rmod__"])
def test_reflected_floordiv_and_mod_refuse_other_types(op) -> None:
    """None, lists and NumPy arrays give NotImplemented (Python then answers), as in torch."""
    for m in (npgrad, torch):
        t = m.tensor([1.0, 2.0, 3.0])
        for value in (None, [1, 2, 3], np.array([1.0, 2.0, 3.0]), "x"):
            assert getattr(t, op)(value) is NotImplemented
        with pytest.raises(TypeError):
            None // t  # noqa: B018 - the TypeError is the point


def test_histogram_of_a_tensor_requiring_grad_records_a_non_differentiable_node() -> None:
    for m in (npgrad, torch):
        x = m.tensor([0.1, 0.5, 0.7, 0.2], requires_grad=True)
        h = m.histogram(x, 3)
        assert h.hist.requires_grad and h.bin_edges.requires_grad
        assert type(h.hist.grad_fn).__name__ == "NotImplemented"
        with pytest.raises(RuntimeError, match="derivative for aten::histogram is not "
                                               "implemented"):
            h.hist.sum().backward()
        w = m.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
        assert m.histogram(x.detach(), 3, weight=w).hist.requires_grad
        assert not m.histogram(x.detach(), 3).hist.requires_grad
        with m.no_grad():
            assert not m.histogram(x, 3).hist.requires_grad


@pytest.mark.parametrize("optimizer, kwargs", [("SGD", {"lr": 0.1, "momentum": 0.9}),
                                               ("SGD", {"lr": 0.1}),
                                               ("Adam", {"lr": 0.1})])
def test_optimizer_with_a_parameter_listed_twice(optimizer, kwargs) -> None:
    """torch looks every momentum buffer up before updating: a duplicate parameter gets two
    fresh buffers on the first step, then shares the stored one."""
    results = []
    for m in (npgrad, torch):
        w = m.tensor([1.0, -2.0], requires_grad=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            opt = getattr(m.optim, optimizer)([w, w], **kwargs)
        for _ in range(3):
            opt.zero_grad()
            (w * w).sum().backward()
            opt.step()
        results.append(w.detach().numpy().copy())
    np.testing.assert_allclose(results[0], results[1], rtol=1e-6)


COSINE_CASES = {
    "broadcast_batch": lambda m: (m.tensor(_COS_A), m.tensor(_COS_A[0]), 1),
    "0dim_other": lambda m: (m.tensor(_COS_A[0]), m.tensor(2.0), 0),
    "int_and_float": lambda m: (m.tensor([[1, 2], [3, 4]]), m.tensor([[1.0, 0.0], [0.0, 1.0]]),
                                1),
    "bool_and_float": lambda m: (m.tensor([[True, False]]), m.tensor([[1.0, 0.5]]), 1),
    "both_int": lambda m: (m.tensor([[1, 2]]), m.tensor([[1, 0]]), 1),
    "half_and_float": lambda m: (m.tensor(_COS_A[0], dtype=m.float16), m.tensor(_COS_A[1]), 1),
    "shape_mismatch": lambda m: (m.tensor(_COS_A[0]), m.tensor(_COS_A[0, :, :3]), 1),
    "dim_out_of_range": lambda m: (m.tensor(_COS_A[0]), m.tensor(_COS_A[1]), 2),
}
_COS_A = np.random.default_rng(12).normal(size=(2, 3, 4)).astype(np.float32)


@pytest.mark.parametrize("name", sorted(COSINE_CASES))
def test_cosine_similarity_broadcasts_and_promotes_first(name) -> None:
    """torch broadcasts x1 and x2 before taking the norms (a norm over the un-broadcast dim of
    a smaller input was silently wrong) and casts integer inputs to the common float dtype."""
    assert_same_outcome(lambda m: m.nn.functional.cosine_similarity(*COSINE_CASES[name](m)))


def test_cosine_similarity_refusals() -> None:
    env = lambda m: {"F": m.nn.functional, "x": m.ones(2, 3)}  # noqa: E731
    assert_same_error("F.cosine_similarity(x, x, eps=-1.0)", env)
    assert_same_error("F.cosine_similarity(x, x, eps=-0.5)", env)


def test_cosine_similarity_gradient_below_eps() -> None:
    """The norms are clamped in place without recording: the gradient through a norm below eps
    is the unclamped norm's (torch's 6.4e7 and 7.1e7 here, not a zeroed path)."""
    grads = []
    for m in (npgrad, torch):
        x = m.tensor([[1e-9, 0.0], [3.0, 4.0]], requires_grad=True, dtype=m.float64)
        y = m.tensor([[1.0, 1.0]], requires_grad=True, dtype=m.float64)
        r = m.nn.functional.cosine_similarity(x, y)
        (r * m.tensor([1.0, 2.0], dtype=m.float64)).sum().backward()
        assert type(r.grad_fn).__name__ == "SumBackward1"
        grads.append((x.grad.numpy().copy(), y.grad.numpy().copy()))
    for mine, theirs in zip(*grads):
        np.testing.assert_allclose(mine, theirs, rtol=1e-10)


# -- the fuzzer's wrong results (tests/fuzz): edge values through resampling, normalization,
#    selection, reductions and linear algebra, each against torch ------------------------

def _with_specials(shape: tuple, seed: int) -> np.ndarray:
    """A float32 array of ``shape`` with a NaN, an inf and a -inf at seeded places."""
    rng = np.random.default_rng(seed)
    a = rng.standard_normal(shape).astype(np.float32)
    flat = a.reshape(-1)
    flat[rng.choice(flat.size, 3, replace=False)] = [np.nan, np.inf, -np.inf]
    return a


def _close(make: Callable[[Any], Any], rtol: float = 1e-5) -> None:
    """Same NaN and inf places, dtype and shape, values to ``rtol`` (float32 rounding)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a, b = make(npgrad), make(torch)
    assert str(a.dtype).split(".")[-1] == str(b.dtype).split(".")[-1]
    a, b = a.detach().double().numpy(), b.detach().double().numpy()
    assert a.shape == b.shape
    np.testing.assert_allclose(a, b, rtol=rtol, atol=1e-6, equal_nan=True)


def _F(m: Any) -> Any:
    return m.nn.functional


RESAMPLE_CASES = {
    "linear": lambda m, x: _F(m).interpolate(x[:, :, 0], size=7, mode="linear"),
    "linear_align": lambda m, x: _F(m).interpolate(x[:, :, 0], size=9, mode="linear",
                                                   align_corners=True),
    "linear_down": lambda m, x: _F(m).interpolate(x[:, :, 0], size=3, mode="linear"),
    "linear_same_size": lambda m, x: _F(m).interpolate(x[:, :, 0], size=5, mode="linear"),
    "bilinear": lambda m, x: _F(m).interpolate(x, size=(6, 7), mode="bilinear"),
    "bilinear_same_size": lambda m, x: _F(m).interpolate(x, size=(4, 5), mode="bilinear"),
    "bilinear_one_axis_same": lambda m, x: _F(m).interpolate(x, size=(4, 9), mode="bilinear"),
    "bilinear_scale": lambda m, x: _F(m).interpolate(x, scale_factor=0.5, mode="bilinear"),
    "bicubic": lambda m, x: _F(m).interpolate(x, size=(6, 7), mode="bicubic"),
    "bicubic_same_size": lambda m, x: _F(m).interpolate(x, size=(4, 5), mode="bicubic"),
    "bicubic_align": lambda m, x: _F(m).interpolate(x, size=(3, 3), mode="bicubic",
                                                    align_corners=True),
    "area2d": lambda m, x: _F(m).interpolate(x, size=(3, 3), mode="area"),
    "area1d": lambda m, x: _F(m).interpolate(x[:, :, 0], size=3, mode="area"),
    "adaptive_avg_pool1d": lambda m, x: _F(m).adaptive_avg_pool1d(x[:, :, 0], 3),
    "adaptive_avg_pool2d": lambda m, x: _F(m).adaptive_avg_pool2d(x, (3, 2)),
    "adaptive_avg_pool2d_up": lambda m, x: _F(m).adaptive_avg_pool2d(x, (6, 7)),
}


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("name", sorted(RESAMPLE_CASES))
def test_resampling_keeps_nan_and_inf_where_torch_does(name, seed) -> None:
    # a dense product would spread a NaN over whole rows (0 * nan); torch reads neighbours
    a = _with_specials((1, 2, 4, 5), seed)
    _close(lambda m: RESAMPLE_CASES[name](m, m.tensor(a)))


@pytest.mark.parametrize("mode", ["linear", "bicubic"])
def test_interpolation_of_an_unchanged_size_with_a_scale(mode) -> None:
    # torch copies a linear axis of unchanged size whatever the scale; bicubic interpolates
    x = np.array([[[[1., 5., 2.], [7., 3., 4.]]]], np.float32)
    if mode == "linear":
        _close(lambda m: _F(m).interpolate(m.tensor(x[:, :, 0]), scale_factor=1.1, mode=mode))
    _close(lambda m: _F(m).interpolate(m.tensor(x), scale_factor=1.1, mode="bicubic"))


def test_empty_batches_through_pools_and_pixel_unshuffle() -> None:
    def pools(m: Any) -> Any:
        x = m.zeros(0, 2, 4, 6, requires_grad=True)
        out, idx = _F(m).adaptive_max_pool2d(x, (2, 3), return_indices=True)
        out.sum().backward()
        return (tuple(out.shape), tuple(idx.shape), tuple(x.grad.shape),
                tuple(_F(m).adaptive_max_pool1d(m.zeros(0, 2, 5), 2).shape),
                tuple(_F(m).pixel_unshuffle(x, 2).shape),
                tuple(_F(m).pixel_unshuffle(m.zeros(2, 0, 4, 6), 2).shape))
    assert pools(npgrad) == pools(torch)


@pytest.mark.parametrize("values", [[np.inf] * 4, [np.inf], [3e38, 1.7e38, 1.71e38, -3e38],
                                    [3e38], [-np.inf, np.inf, 1., -1.]])
@pytest.mark.parametrize("layout", ["contiguous", "strided"])
def test_gelu_at_float32_edges(values, layout) -> None:
    # torch's vector kernel (dense, 2+ elements): gelu(inf) is NaN, x > max/2 overflows
    a = np.array(values, np.float32)
    a = np.repeat(a, 2)[::2].copy() if layout == "contiguous" else np.repeat(a, 2)

    def make(m: Any) -> Any:
        x = m.tensor(a)
        return _F(m).gelu(x if layout == "contiguous" else x[::2])
    _close(make)


@pytest.mark.parametrize("training", [True, False])
def test_batch_norm_with_inf_and_nan_parameters(training) -> None:
    # torch's kernel computes x * (invstd * w) + (b - mean * invstd * w): inf - inf is NaN
    x = np.random.default_rng(0).standard_normal((4, 3)).astype(np.float32)

    def make(m: Any) -> Any:
        w = m.tensor([np.nan, np.inf, -np.inf])
        b = m.tensor([0.5, np.inf, 1.])
        mean, var = m.tensor([0.5, -0.25, 1.0]), m.tensor([1.5, 0.75, 2.0])
        return _F(m).batch_norm(m.tensor(x), mean, var, w, b, training=training)
    _close(make)


@pytest.mark.parametrize("params", [None, "float16", "float32"])
@pytest.mark.parametrize("op", ["batch_norm", "instance_norm", "group_norm"])
def test_half_precision_normalization(op, params) -> None:
    # half statistics rounded to half without float32 parameters (batch and instance norm);
    # group norm exact; the result in the input's dtype with float32 parameters
    rng = np.random.default_rng(1)
    x = (rng.standard_normal((6, 4, 5)) * 3 + 1).astype(np.float16)
    w, b = rng.standard_normal(4), rng.standard_normal(4)

    def make(m: Any) -> Any:
        args = (None, None) if params is None else (
            m.tensor(w, dtype=getattr(m, params)), m.tensor(b, dtype=getattr(m, params)))
        t = m.tensor(x)
        if op == "batch_norm":
            return _F(m).batch_norm(t, None, None, *args, training=True)
        if op == "instance_norm":
            return _F(m).instance_norm(t, weight=args[0], bias=args[1])
        return _F(m).group_norm(t, 2, *args)
    _close(make, rtol=0)  # to the last bit of the half result


MODE_ROWS = [[np.nan, np.inf, -np.inf], [np.nan, 1., np.nan], [np.nan, 1., np.nan, 1.],
             [1., 3., 2.], [2., 1., 1., 2.], [np.nan, np.inf, -np.inf, -0.], [0., -0.],
             [3., np.nan, 3., np.nan, np.nan, 1.]]


@pytest.mark.parametrize("row", MODE_ROWS, ids=str)
def test_mode_with_nan_as_torch_sorts(row) -> None:
    def make(m: Any) -> Any:
        r = m.mode(m.tensor(row))
        return m.stack([r.values.double(), r.indices.double()])
    assert_same_outcome(make)


def test_kthvalue_index_among_equal_values() -> None:
    # torch's quickselect leaves one of the equal elements at position k - 1, not the first
    rng = np.random.default_rng(2)
    for trial in range(60):
        shape = tuple(int(v) for v in rng.integers(1, 7, size=2))
        x = rng.choice([0., 1., 2., np.nan] if trial % 2 else [0., 1., 2.], size=shape)
        d = trial % 2
        k = int(rng.integers(1, shape[d] + 1))
        for dtype in ("float32", "int64"):
            a = np.nan_to_num(x) if dtype == "int64" else x

            def make(m: Any) -> Any:
                r = m.kthvalue(m.tensor(a).to(getattr(m, dtype)), k, d)
                return m.stack([r.values.double(), r.indices.double()])
            assert_same_outcome(make)


@pytest.mark.parametrize("op", ["var_mean", "std_mean"])
def test_var_mean_mean_after_an_inf(op) -> None:
    # Welford's running mean: an inf followed by any element makes it NaN
    x = np.array([[1., np.inf, 2., 3.], [np.inf, 1., 2., 3.], [1., 2., 3., np.inf],
                  [1., 2., -np.inf, np.inf], [1., 2., 3., np.nan], [1., 2., 3., -np.inf]],
                 np.float32)
    _close(lambda m: getattr(m, op)(m.tensor(x), 1)[1])  # (a NaN's sign bit aside)
    _close(lambda m: getattr(m, op)(m.tensor(x[:2].T.copy()), (0, 1))[1])
    _close(lambda m: getattr(m, op)(m.tensor(x[2]))[1])


@pytest.mark.parametrize("dtypes", [("float64", "float32", "float32"),
                                    ("float32", "int64", "float32"),
                                    ("float32", "float32", "int64"),
                                    ("int64", "float32", "float32"),
                                    ("int64", "int32", "uint8")])
def test_addr_result_dtype_promotes_all_three(dtypes) -> None:
    a, b, c = dtypes
    assert_same_outcome(lambda m: m.addr(m.ones(2, 3, dtype=getattr(m, a)),
                                         m.arange(2).to(getattr(m, b)),
                                         m.arange(3).to(getattr(m, c))))
    assert_same_outcome(lambda m: m.addr(m.tensor(1., dtype=m.float64), m.ones(2), m.ones(3)))


@pytest.mark.parametrize("shapes", [((1,), (0, 3), (3,)), ((), (2, 0), (0,)),
                                    ((2,), (2, 0), (0,)), ((0,), (0, 3), (3,))])
@pytest.mark.parametrize("beta", [0.5, 0])
def test_addmv_with_an_empty_matrix(shapes, beta) -> None:
    # torch returns beta * input unbroadcast (zeros of the rows with beta 0)
    s, mat, vec = shapes
    assert_same_outcome(lambda m: m.addmv(m.ones(s, requires_grad=True), m.ones(mat),
                                          m.ones(vec), beta=beta, alpha=2))


@pytest.mark.parametrize("dtype", ["int64", "int32", "float16", "float32"])
@pytest.mark.parametrize("margin", [1.0, 1.5, -0.7])
def test_hinge_embedding_loss_fills_the_margin_in_the_input_dtype(dtype, margin) -> None:
    for reduction in ("none", "sum"):
        assert_same_outcome(lambda m: _F(m).hinge_embedding_loss(
            m.tensor([3, -1, 2, -4, 0]).to(getattr(m, dtype)), m.tensor([1., -1., 1., 1., -1.]),
            margin=margin, reduction=reduction))


@pytest.mark.parametrize("upper, left", [(True, True), (False, True), (True, False),
                                         (False, False)])
@pytest.mark.parametrize("where", ["A", "B"])
def test_solve_triangular_keeps_nan_in_the_rows_it_reaches(upper, left, where) -> None:
    rng = np.random.default_rng(3)
    a = (rng.standard_normal((3, 3)) + 3 * np.eye(3)).astype(np.float32)
    b = rng.standard_normal((3, 2) if left else (2, 3)).astype(np.float32)
    if where == "A":
        a[0, 0 if upper else 2] = np.nan
        a[0, 1] = np.inf
    else:
        b[0, 0] = np.nan
    _close(lambda m: m.linalg.solve_triangular(m.tensor(a), m.tensor(b), upper=upper,
                                               left=left))


def test_linear_algebra_edges() -> None:
    nan, inf = np.nan, np.inf
    for mat in ([[nan, 1.], [2., 3.]], [[1., 2.], [3., nan]], [[inf, 1.], [2., 3.]],
                [[-inf, 1.], [2., 3.]]):
        _close(lambda m: m.linalg.slogdet(m.tensor(mat)).sign.abs())
    for shape, p in (((0, 3, 3), None), ((0, 3, 3), 1), ((0, 3, 4), -2), ((2, 0, 0), "fro")):
        assert_same_outcome(lambda m: m.linalg.cond(m.zeros(shape, requires_grad=True), p))
    x = np.random.default_rng(4).standard_normal((4, 4)).astype(np.float32)
    _close(lambda m: m.linalg.matrix_power(m.tensor(x), 3), rtol=1e-6)


@pytest.mark.parametrize("dims", [(2, 3, 4, 2), (3, 1, 4, 2), (1, 3, 2, 4, 1), (2, 2, 2, 2, 2),
                                  (4, 1, 3, 1, 4, 2)])
def test_multi_dot_multiplies_in_torchs_order(dims) -> None:
    # the order decides where an inf meets a zero or a NaN
    rng = np.random.default_rng(5)
    mats = [rng.standard_normal((dims[i], dims[i + 1])) for i in range(len(dims) - 1)]
    mats[-1][0, 0] = np.inf
    mats[len(mats) // 2][-1, -1] = -np.inf
    _close(lambda m: m.linalg.multi_dot([m.tensor(a) for a in mats]))


@pytest.mark.parametrize("exponent", [1e-308, -1e-308, 1e-46, 1e-300])
def test_pow_with_an_exponent_float32_flushes_to_zero(exponent) -> None:
    # torch keeps the exponent nonzero: 0 ** 1e-300 is 0 and 0 ** -1e-300 inf
    x = [0., -0., -2., 2., np.inf, -np.inf, np.nan, 1., -1.]
    assert_same_outcome(lambda m: m.tensor(x) ** exponent)
    assert_same_outcome(lambda m: _F(m).lp_pool1d(m.rand(2, 3), 1e308, 2))
