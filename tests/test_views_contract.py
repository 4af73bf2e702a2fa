"""Issue 14's view contract against torch 2.13: in-place view ops, storages, and the
view / detach_ / numpy() cases where npgrad used to accept what torch refuses (or refuse
what torch accepts).

Each scenario runs the same code with npgrad and with torch and compares what a user
can see: values, shapes, strides, ``_version``, grad_fn names and their next functions,
gradients and exception texts.  Gradients of the in-place view ops are also checked
with a float64 gradcheck, which needs no torch.
"""
from __future__ import annotations

import warnings
from typing import Any, Callable

import numpy as np
import pytest

import npgrad
from npgrad.autograd import gradcheck
from torch_oracle import assert_same_error

# name, in-place view op; each is applied to a (2, 1, 3) tensor
INPLACE_VIEWS: list[tuple[str, Callable[[Any], Any]]] = [
    ("t_", lambda x: x.squeeze_(1).t_()),
    ("transpose_", lambda x: x.transpose_(0, 2)),
    ("transpose_neg", lambda x: x.transpose_(-1, 0)),
    ("swapdims_", lambda x: x.swapdims_(1, 2)),
    ("swapaxes_", lambda x: x.swapaxes_(0, 1)),
    ("squeeze_all", lambda x: x.squeeze_()),
    ("squeeze_dim", lambda x: x.squeeze_(1)),
    ("squeeze_dim_noop", lambda x: x.squeeze_(0)),
    ("squeeze_kwarg", lambda x: x.squeeze_(dim=-2)),
    ("squeeze_tuple", lambda x: x.squeeze_((0, 1))),
    ("unsqueeze_", lambda x: x.unsqueeze_(1)),
    ("unsqueeze_neg", lambda x: x.unsqueeze_(-1)),
]

BASE = np.arange(6.0).reshape(2, 1, 3) - 2.5


def _fn_chain(fn: Any) -> list:
    out = []
    while fn is not None:
        out.append(fn.name())
        nxt = [f for f, _ in fn.next_functions if f is not None]
        fn = nxt[0] if nxt else None
    return out


def _observe(m: Any, op: Callable[[Any], Any], through_view: bool) -> dict:
    """Apply ``op`` in place to a non-leaf (or a view of one), then backprop through it."""
    leaf = m.tensor(BASE.tolist(), dtype=m.float64, requires_grad=True)
    base = leaf * 1.5
    x = base[0:2] if through_view else base
    v0 = x._version
    r = op(x)
    w = m.arange(float(x.numel()), dtype=m.float64).reshape(x.shape)
    (x * w).sum().backward()
    return {
        "same": r is x, "shape": tuple(x.shape), "stride": x.stride(),
        "bump": x._version - v0, "values": x.detach().numpy().tolist(),
        "grad_fn": _fn_chain(x.grad_fn), "is_view": x._is_view(), "leaf": x.is_leaf,
        "grad": leaf.grad.numpy().tolist(),
    }


@pytest.mark.parametrize("through_view", [False, True], ids=["base", "view"])
@pytest.mark.parametrize("name,op", INPLACE_VIEWS, ids=[n for n, _ in INPLACE_VIEWS])
def test_inplace_view_op_matches_torch(name: str, op: Callable, through_view: bool) -> None:
    torch = pytest.importorskip("torch")
    assert _observe(npgrad, op, through_view) == _observe(torch, op, through_view)


@pytest.mark.parametrize("name,op", INPLACE_VIEWS, ids=[n for n, _ in INPLACE_VIEWS])
def test_inplace_view_op_without_grad(name: str, op: Callable) -> None:
    torch = pytest.importorskip("torch")

    def run(m: Any) -> tuple:
        x = m.tensor(BASE.tolist())
        with m.no_grad():
            y = m.tensor(BASE.tolist(), requires_grad=True) * 1
            op(y)
        op(x)
        return (tuple(x.shape), x.stride(), x._version, x.grad_fn, x.numpy().tolist(),
                tuple(y.shape), y._version, y.grad_fn, y.requires_grad)

    assert run(npgrad) == run(torch)


@pytest.mark.parametrize("name,op", INPLACE_VIEWS, ids=[n for n, _ in INPLACE_VIEWS])
def test_inplace_view_op_gradcheck(name: str, op: Callable) -> None:
    def f(a: Any) -> Any:
        x = a * 1.0
        return op(x) * 2.0

    a = npgrad.tensor(BASE.tolist(), dtype=npgrad.float64, requires_grad=True)
    assert gradcheck(f, (a,))


@pytest.mark.parametrize("name,op", INPLACE_VIEWS, ids=[n for n, _ in INPLACE_VIEWS])
def test_inplace_view_op_on_leaf_errors(name: str, op: Callable) -> None:
    assert_same_error("op(m.ones(2, 1, 3, requires_grad=True))",
                      lambda m: {"m": m, "op": op})


@pytest.mark.parametrize("expr", [
    "m.ones(2, 3, 4).t_()",
    "m.ones(2, 3).transpose_(0, 5)",
    "m.ones(2, 3).swapdims_(-3, 0)",
    "m.ones(2, 3).unsqueeze_(3)",
    "m.ones(2, 3).squeeze_(2)",
    "m.ones(2, 3).squeeze_((0, 4))",
])
def test_inplace_view_op_bad_dims(expr: str) -> None:
    assert_same_error(expr, lambda m: {"m": m})


def test_t_of_1d_is_a_no_op_with_a_version_bump() -> None:
    torch = pytest.importorskip("torch")

    def run(m: Any) -> tuple:
        x = m.arange(3.0)
        x.t_()
        return tuple(x.shape), x._version

    assert run(npgrad) == run(torch) == ((3,), 1)


def test_inplace_view_op_on_no_grad_view_errors() -> None:
    def env(m: Any) -> dict:
        b = m.ones(2, 3, requires_grad=True) * 1
        with m.no_grad():
            v = b[0:1]
        return {"v": v}

    assert_same_error("v.t_()", env)


def test_inplace_view_op_on_inference_tensor_errors() -> None:
    def env(m: Any) -> dict:
        with m.inference_mode():
            x = m.ones(2, 3)
        return {"x": x}

    assert_same_error("x.transpose_(0, 1)", env)


def test_inplace_view_op_then_view_of_it_keeps_history() -> None:
    """A view taken of the base after ``t_`` on a view, and a write through that view."""
    torch = pytest.importorskip("torch")

    def run(m: Any) -> tuple:
        a = m.tensor(np.arange(6.0).reshape(2, 3).tolist(), dtype=m.float64,
                     requires_grad=True)
        b = a * 2
        v = b[:, 0:2]
        v.t_()
        v.mul_(3)
        (b * m.arange(6.0, dtype=m.float64).reshape(2, 3)).sum().backward()
        return (v.grad_fn.name(), b.grad_fn.name(), v.detach().numpy().tolist(),
                b.detach().numpy().tolist(), a.grad.numpy().tolist(), v.stride())

    assert run(npgrad) == run(torch)


# -- storages -------------------------------------------------------------------------

def _storage_facts(m: Any) -> dict:
    x = m.arange(12.0).reshape(3, 4)
    views = {"slice": x[1:, 1:], "row": x[2], "t": x.t(), "col": x[:, 3], "flat": x.view(-1)}
    s = x.untyped_storage()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ts = x.storage()
        tv = views["slice"].storage()
    facts = {
        "nbytes": s.nbytes(), "size": s.size(), "len": len(s), "ptr": s.data_ptr() == x.data_ptr(),
        "typed": (ts.size(), len(ts), ts.element_size(), ts.nbytes(), str(ts.dtype).split(".")[-1],
                  ts.data_ptr() == x.data_ptr(), tv.size()),
        "untyped_of_typed": ts.untyped().nbytes(),
        "d": m.zeros(5, dtype=m.float64).untyped_storage().nbytes(),
        "i8": m.zeros(5, dtype=m.int8).untyped_storage().size(),
    }
    for k, v in views.items():
        facts[k] = (v.storage_offset(), v.untyped_storage().data_ptr() == s.data_ptr(),
                    v.untyped_storage().nbytes())
    facts["clone"] = x.clone().untyped_storage().data_ptr() == s.data_ptr()
    facts["detach"] = x.detach().untyped_storage().data_ptr() == s.data_ptr()
    facts["offset0"] = x.storage_offset()
    return facts


def test_storage_matches_torch() -> None:
    torch = pytest.importorskip("torch")
    assert _storage_facts(npgrad) == _storage_facts(torch)


def test_storage_facts_by_hand() -> None:
    x = npgrad.arange(12.0).reshape(3, 4)
    y = x[1:, 1:]
    assert y.storage_offset() == 5
    assert x.untyped_storage().nbytes() == 48
    assert y.untyped_storage().data_ptr() == x.untyped_storage().data_ptr()
    assert x.clone().untyped_storage().data_ptr() != x.untyped_storage().data_ptr()


def test_typed_storage_warns_as_torch() -> None:
    torch = pytest.importorskip("torch")
    import npgrad._storage as st

    st._warned[0] = False
    with warnings.catch_warnings(record=True) as mine:
        warnings.simplefilter("always")
        npgrad.zeros(2).storage()
        npgrad.zeros(2).storage()
    torch.storage._always_warn_typed_storage_removal = True  # torch warns once per process
    try:
        with warnings.catch_warnings(record=True) as theirs:
            warnings.simplefilter("always")
            torch.zeros(2).storage()
    finally:
        torch.storage._always_warn_typed_storage_removal = False
    assert len(mine) == 1 and mine[0].category is UserWarning
    assert str(mine[0].message) == str(theirs[0].message)


# -- what torch refuses (or allows) ------------------------------------------------------

def test_inplace_on_view_of_no_grad_view() -> None:
    def env(m: Any) -> dict:
        b = m.ones(4, requires_grad=True) * 1
        with m.no_grad():
            v = b[1:]
        w = v[1:]
        return {"w": w}

    assert_same_error("w.mul_(2)", env)


def test_inplace_on_no_grad_view_of_view() -> None:
    def env(m: Any) -> dict:
        b = m.ones(4, requires_grad=True) * 1
        v = b[1:]
        with m.no_grad():
            w = v[1:]
        return {"w": w}

    assert_same_error("w.mul_(2)", env)


def test_inplace_on_view_of_view_both_no_grad() -> None:
    def env(m: Any) -> dict:
        b = m.ones(4, requires_grad=True) * 1
        with m.no_grad():
            w = b[1:][1:]
        return {"w": w}

    assert_same_error("w.add_(1)", env)


def test_saved_tensor_detached_in_place_errors_at_backward() -> None:
    def env(m: Any) -> dict:
        x = m.ones(3, requires_grad=True)
        y = x * 2
        z = y * y
        y.detach_()  # allowed; the saved y is refused when backward unpacks it
        return {"z": z}

    assert_same_error("z.sum().backward()", env)


def test_detach_then_save_is_fine() -> None:
    torch = pytest.importorskip("torch")

    def run(m: Any) -> tuple:
        x = m.tensor([1.0, 2.0, 3.0], requires_grad=True)
        y = x * 2
        y.detach_()
        z = (y * x).sum()
        z.backward()
        return x.grad.numpy().tolist(), y.requires_grad, y.grad_fn

    assert run(npgrad) == run(torch) == ([2.0, 4.0, 6.0], False, None)


def test_detached_output_saved_by_its_own_node_is_fine() -> None:
    """``exp`` saves its result (an output): detaching that tensor does not break backward."""
    torch = pytest.importorskip("torch")

    def run(m: Any) -> list:
        x = m.tensor([0.0, 1.0], dtype=m.float64, requires_grad=True)
        y = x.exp()
        z = y * 1.0
        y.detach_()
        z.sum().backward()
        return np.round(x.grad.numpy(), 12).tolist()

    assert run(npgrad) == run(torch)


def test_numpy_of_requires_grad_tensor() -> None:
    torch = pytest.importorskip("torch")

    def run(m: Any) -> list:
        a = m.ones(2, requires_grad=True)
        with m.no_grad():
            arr = a.numpy()
            via_array = np.asarray(a)
        return arr.tolist() + via_array.tolist()

    assert run(npgrad) == run(torch) == [1.0, 1.0, 1.0, 1.0]
    assert_same_error("m.ones(2, requires_grad=True).numpy()", lambda m: {"m": m})
    assert_same_error("np.asarray(m.ones(2, requires_grad=True))", lambda m: {"m": m, "np": np})
