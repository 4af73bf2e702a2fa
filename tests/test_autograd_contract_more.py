"""More of torch's autograd contract (issue 14), each behaviour compared with real torch:
once_differentiable's Error node edges, reduction double-backward graphs, views of
inference tensors, anomaly reports under an error filter, batched gradcheck of 0-dim
outputs and ``set_checkpoint_early_stop``."""
from __future__ import annotations

import importlib
import warnings
from typing import Any

import numpy as np
import pytest

import npgrad

torch = pytest.importorskip("torch")

LIBS = [npgrad, torch]


def graph_desc(fn: Any) -> str:
    """A node and everything below it, by class name (None for a missing edge)."""
    if fn is None:
        return "None"
    inner = ", ".join(graph_desc(child) for child, _ in fn.next_functions)
    return f"{type(fn).__name__}({inner})"


def _both(build: Any) -> tuple:
    """``build(lib)`` for npgrad and torch."""
    return tuple(build(lib) for lib in LIBS)


# -- 1. once_differentiable: one Error edge per returned gradient -------------------------

def _once_fn(lib: Any) -> Any:
    once_differentiable = importlib.import_module(
        lib.__name__ + ".autograd.function").once_differentiable

    class ScaleAdd(lib.autograd.Function):
        @staticmethod
        def forward(ctx: Any, a: Any, k: int, b: Any) -> Any:
            ctx.k = k
            ctx.save_for_backward(a, b)
            return a * k + a * b

        @staticmethod
        @once_differentiable
        def backward(ctx: Any, g: Any) -> tuple:
            a, b = ctx.saved_tensors
            return g * ctx.k + g * b, None, g * a

    return ScaleAdd


def _once_run(lib: Any) -> dict:
    fn = _once_fn(lib)
    rng = np.random.default_rng(3)
    x = lib.tensor(rng.standard_normal((2, 3)), requires_grad=True)
    y = lib.tensor(rng.standard_normal((2, 3)), requires_grad=True)
    out = fn.apply(x, 3, y)
    go = lib.ones((2, 3), dtype=lib.float64, requires_grad=True)
    gx, gy = lib.autograd.grad(out, (x, y), go, create_graph=True)
    node = gx.grad_fn
    edges = [(None if n is None else type(n).__name__, nr) for n, nr in node.next_functions]
    with pytest.raises(RuntimeError) as info:
        gy.sum().backward()
    return {"desc": graph_desc(node), "edges": edges, "same_node": gy.grad_fn is node,
            "nr": (gx.output_nr, gy.output_nr), "gx": gx.detach().numpy().copy(),
            "gy": gy.detach().numpy().copy(), "err": str(info.value)}


def test_once_differentiable_error_node_has_none_edge_for_none_gradient() -> None:
    mine, theirs = _both(_once_run)
    assert mine["desc"] == theirs["desc"] == "Error(AccumulateGrad(), None, AccumulateGrad())"
    assert mine["edges"] == theirs["edges"] == [("AccumulateGrad", 0), (None, 0),
                                                ("AccumulateGrad", 0)]
    assert mine["same_node"] and theirs["same_node"]
    assert mine["nr"] == theirs["nr"] == (0, 2)  # positions among all returned values
    np.testing.assert_allclose(mine["gx"], theirs["gx"], rtol=1e-12)
    np.testing.assert_allclose(mine["gy"], theirs["gy"], rtol=1e-12)
    assert mine["err"] == theirs["err"]


def test_once_differentiable_create_graph_backward_graph_desc() -> None:
    def run(lib: Any) -> tuple:
        fn = _once_fn(lib)
        x = lib.randn(5, 5, requires_grad=True)
        y = lib.randn(5, 5, requires_grad=True)
        go = lib.ones((), requires_grad=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fn.apply(x, 2, y).sum().backward(go, create_graph=True)
        return graph_desc(x.grad.grad_fn), graph_desc(y.grad.grad_fn)

    mine, theirs = _both(run)
    assert mine == theirs
    assert mine[0] == "CopyBackwards(None, Error(AccumulateGrad(), None, AccumulateGrad()))"


def test_custom_function_next_functions_skip_non_tensor_args() -> None:
    def run(lib: Any) -> list:
        class Fn(lib.autograd.Function):
            @staticmethod
            def forward(ctx: Any, a: Any, k: int, b: Any) -> Any:
                return a * k + b

            @staticmethod
            def backward(ctx: Any, g: Any) -> tuple:
                return g * 3, None, g

        x = lib.randn(2, requires_grad=True)
        y = lib.randn(2, requires_grad=True)
        z = lib.randn(2)
        descs = [graph_desc(Fn.apply(x, 3, y).grad_fn), graph_desc(Fn.apply(x, 3, z).grad_fn)]
        Fn.apply(x, 3, y).sum().backward()
        return descs + [x.grad.tolist(), y.grad.tolist()]

    mine, theirs = _both(run)
    assert mine == theirs
    assert mine[:2] == ["FnBackward(AccumulateGrad(), AccumulateGrad())",
                        "FnBackward(AccumulateGrad(), None)"]


# -- 2. reduction backward: no ViewBackward0 between ExpandBackward0 and the leaf --------

REDUCTIONS = {
    "sum": lambda x: x.sum(),
    "sum_dim1": lambda x: x.sum(1),
    "sum_dim0": lambda x: x.sum(0),
    "sum_all_dims": lambda x: x.sum((0, 1)),
    "sum_keepdim": lambda x: x.sum(1, keepdim=True),
    "mean": lambda x: x.mean(),
    "mean_dim1": lambda x: x.mean(1),
}


@pytest.mark.parametrize("name", sorted(REDUCTIONS))
def test_reduction_double_backward_graph_matches_torch(name: str) -> None:
    f = REDUCTIONS[name]
    data = np.random.default_rng(1).standard_normal((2, 3))

    def run(lib: Any) -> tuple:
        x = lib.tensor(data, requires_grad=True)
        y = f(x)
        go = lib.ones(tuple(y.shape), dtype=lib.float64, requires_grad=True)
        g, = lib.autograd.grad(y, x, go, create_graph=True)
        # the first link below the gradient's node is what torch records
        below = g.grad_fn.next_functions[0][0]
        if type(g.grad_fn).__name__.startswith("Div"):
            below = below.next_functions[0][0]  # mean: DivBackward over ExpandBackward0
        gg, = lib.autograd.grad(g.sum(), go)
        return graph_desc(below), g.detach().numpy().copy(), gg.detach().numpy().copy()

    mine, theirs = _both(run)
    assert mine[0] == theirs[0]
    assert "ViewBackward0" not in mine[0]
    np.testing.assert_allclose(mine[1], theirs[1], rtol=1e-12)
    np.testing.assert_allclose(mine[2], theirs[2], rtol=1e-12)


@pytest.mark.parametrize("shape", [(2,), (1, 2)])
def test_expand_of_leaf_links_straight_to_accumulate_grad(shape: tuple) -> None:
    def run(lib: Any) -> str:
        return graph_desc(lib.randn(*shape, requires_grad=True).expand(3, 2).grad_fn)

    assert _both(run) == ("ExpandBackward0(AccumulateGrad())",) * 2


def test_reduction_gradients_still_pass_gradcheck() -> None:
    x = npgrad.tensor(np.random.default_rng(2).standard_normal((2, 3)), requires_grad=True)
    for f in REDUCTIONS.values():
        assert npgrad.autograd.gradcheck(f, (x,))
        assert npgrad.autograd.gradgradcheck(f, (x,))


# -- 3. views of inference tensors --------------------------------------------------------

def test_view_of_inference_tensor_outside_inference_mode_is_untracked() -> None:
    def run(lib: Any) -> list:
        with lib.inference_mode():
            a = lib.ones(3, requires_grad=True)
        rows = []
        for v in (a.view(3), a[:2], a.unsqueeze(0)):
            rows.append((v.requires_grad, v.grad_fn is None, v._is_view(), v.is_inference(),
                         v._base is None))
        with lib.no_grad():
            w = a.view(3)
        rows.append((w.requires_grad, w._is_view()))
        with lib.inference_mode():
            u = a.view(3)
        rows.append((u.requires_grad, u._is_view()))
        return rows

    mine, theirs = _both(run)
    assert mine == theirs
    assert mine[0] == (False, True, False, True, True)


def test_inplace_on_view_of_inference_tensor_outside_inference_mode_error() -> None:
    def run(lib: Any) -> str:
        with lib.inference_mode():
            a = lib.ones(3, requires_grad=True)
        v = a.view(3)
        with pytest.raises(RuntimeError) as info:
            v.mul_(2)
        return str(info.value)

    mine, theirs = _both(run)
    assert mine == theirs
    assert mine.startswith("Inplace update to inference tensor outside InferenceMode")


@pytest.mark.parametrize("kind", ["view", "slice", "view_of_view"])
def test_view_made_in_inference_mode_inplace_message(kind: str) -> None:
    def run(lib: Any) -> tuple:
        base = lib.randn(3, requires_grad=True).clone()
        with lib.inference_mode():
            if kind == "view":
                v = base.view(3)
            elif kind == "slice":
                v = base[:2]
            else:
                v = base.view(3).view(3)
        with pytest.raises(RuntimeError) as info:
            v.mul_(2)
        return v.requires_grad, str(info.value)

    mine, theirs = _both(run)
    assert mine == theirs
    assert mine[1].startswith("A view was created in inference mode and is being modified "
                              "inplace in normal mode.")


# -- 4. anomaly mode under warnings.simplefilter("error") ---------------------------------

def _failing_fn(lib: Any, kind: str) -> Any:
    class Failing(lib.autograd.Function):
        @staticmethod
        def forward(ctx: Any, x: Any) -> Any:
            return x.clone()

        @staticmethod
        def backward(ctx: Any, g: Any) -> Any:
            if kind == "raise":
                raise ValueError("boom in backward")
            return g * float("nan")

    return Failing


@pytest.mark.parametrize("kind", ["raise", "nan"])
def test_anomaly_report_under_error_filter_keeps_original_error(kind: str, capfd: Any) -> None:
    outcomes = []
    for lib in LIBS:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            anomaly = lib.autograd.detect_anomaly()
        with anomaly, warnings.catch_warnings():
            warnings.simplefilter("error")
            x = lib.randn(3, requires_grad=True)
            y = _failing_fn(lib, kind).apply(x).sum()
            with pytest.raises(Exception) as info:
                y.backward()
        err = capfd.readouterr().err
        outcomes.append((type(info.value).__name__, str(info.value),
                         info.value.__context__ is None,
                         "UserWarning: Error detected in FailingBackward. Traceback of forward "
                         "call that caused the error:" in err))
    mine, theirs = outcomes
    assert mine == theirs
    assert mine[0] == ("ValueError" if kind == "raise" else "RuntimeError")
    assert mine[2] and mine[3]


def test_anomaly_report_is_still_a_warning_by_default() -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with npgrad.autograd.detect_anomaly():
            x = npgrad.randn(3, requires_grad=True)
            y = _failing_fn(npgrad, "raise").apply(x).sum()
            with pytest.raises(ValueError, match="boom in backward"):
                y.backward()
    texts = [str(w.message) for w in caught]
    assert any(t.startswith("Error detected in FailingBackward. Traceback of forward call")
               for t in texts)


# -- 5. gradcheck(check_batched_grad=True) on 0-dim outputs --------------------------------

ZERO_DIM_CASES = {
    "scalar_mul": (lambda x: x * 2, ()),
    "scalar_sin": (lambda x: x.sin(), ()),
    "sum_of_vector": (lambda x: x.sum(), (3,)),
    "square_of_sum": (lambda x: x.sum() ** 2, (3,)),
}


@pytest.mark.parametrize("name", sorted(ZERO_DIM_CASES))
def test_batched_gradcheck_accepts_zero_dim_outputs(name: str) -> None:
    f, shape = ZERO_DIM_CASES[name]
    data = np.random.default_rng(4).standard_normal(shape)
    for lib in LIBS:
        x = lib.tensor(data, requires_grad=True)
        assert lib.autograd.gradcheck(f, (x,), check_batched_grad=True)
        assert lib.autograd.gradgradcheck(f, (x,), check_batched_grad=True)


def test_batched_gradcheck_zero_dim_still_catches_a_nonlinear_backward() -> None:
    class Bad(npgrad.autograd.Function):
        @staticmethod
        def forward(ctx: Any, x: Any) -> Any:
            return x * 2

        @staticmethod
        def backward(ctx: Any, g: Any) -> Any:
            return g * g * 2  # right at g == 1 only: not linear in the grad_output

    x = npgrad.tensor(1.5, dtype=npgrad.float64, requires_grad=True)
    from npgrad.autograd.gradcheck import GradcheckError

    with pytest.raises(GradcheckError, match="batched gradient computation"):
        npgrad.autograd.gradcheck(Bad.apply, (x,), check_batched_grad=True)


# -- 6. set_checkpoint_early_stop ----------------------------------------------------------

def _checkpoint_log(lib: Any, outer: Any, capture_outside: bool = False, **kw: Any) -> list:
    cp = importlib.import_module(lib.__name__ + ".utils.checkpoint")
    log: list = []

    def fn(x: Any) -> Any:
        y = x.sin()  # saves x
        log.append("a")
        z = y.exp()  # saves its result
        log.append("b")
        w = z * 2  # saves nothing
        log.append("c")
        return w

    x = lib.tensor([0.5, -1.0, 2.0], requires_grad=True)
    if outer is None:
        out = cp.checkpoint(fn, x, use_reentrant=False, **kw)
    else:
        with cp.set_checkpoint_early_stop(outer):
            out = cp.checkpoint(fn, x, use_reentrant=False, **kw)
            if not capture_outside:
                out.sum().backward()
    if outer is None or capture_outside:
        out.sum().backward()
    return log + [x.grad.tolist()]


@pytest.mark.parametrize("outer,kw,capture_outside", [
    (None, {}, False),
    (None, {"early_stop": False}, False),
    (False, {}, False),
    (False, {"early_stop": True}, False),
    (True, {"early_stop": False}, False),
    (False, {}, True),
])
def test_set_checkpoint_early_stop_matches_torch(outer: Any, kw: dict,
                                                 capture_outside: bool) -> None:
    mine, theirs = _both(lambda lib: _checkpoint_log(lib, outer, capture_outside, **kw))
    assert mine[:-1] == theirs[:-1]
    np.testing.assert_allclose(mine[-1], theirs[-1], rtol=1e-6)
    x = np.array([0.5, -1.0, 2.0])
    np.testing.assert_allclose(mine[-1], 2 * np.exp(np.sin(x)) * np.cos(x), rtol=1e-6)


def test_set_checkpoint_early_stop_restores_on_error() -> None:
    from npgrad.utils import checkpoint as cp

    with pytest.raises(KeyError):
        with cp.set_checkpoint_early_stop(False):
            raise KeyError("x")
    assert cp._early_stop_override is None
    assert _checkpoint_log(npgrad, None)[:-1] == ["a", "b", "c", "a"]


def _mode_chain(lib: Any, first: str, second: str, op: str) -> str:
    """A view made under ``first`` then a view of it under ``second``, written in place."""
    contexts = {"no_grad": lib.no_grad, "inference": lib.inference_mode,
                "normal": lib.enable_grad}
    c = lib.randn(3, 2, requires_grad=True).clone()
    with contexts[first]():
        v1 = c.view(3, 2)
    with contexts[second]():
        v2 = v1.view(3, 2)
    with pytest.raises(RuntimeError) as info:
        if op == "mul_":
            v2.mul_(2)
        else:
            v2[0] = 1.0
    return str(info.value)


@pytest.mark.parametrize("first,second", [("no_grad", "inference"), ("inference", "no_grad"),
                                          ("inference", "normal"), ("no_grad", "normal")])
@pytest.mark.parametrize("op", ["mul_", "setitem"])
def test_view_of_view_mode_messages_match_torch(first: str, second: str, op: str) -> None:
    mine, theirs = _both(lambda lib: _mode_chain(lib, first, second, op))
    assert mine == theirs
    wanted = "no_grad mode" if (first, second) == ("no_grad", "normal") else "inference mode"
    assert wanted in mine
