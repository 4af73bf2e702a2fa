"""Issue 14's remaining autograd-contract behaviours, each run in npgrad and in torch: the
values or the exact error (type and text) must be the same.  The other behaviours the issue
lists are tested where their subject lives (test_engine_contract.py, test_autograd_contract_*,
test_complex.py, test_linalg_complex.py, test_sparse*.py)."""
from __future__ import annotations

from typing import Any, Callable

import pytest

import npgrad


def _own_grad(m: Any) -> Any:
    x = m.ones(2, requires_grad=True)
    x.grad = x


def _post_accumulate_hook_returning(value: Callable) -> Callable:
    def run(m: Any) -> Any:
        x = m.ones(2, requires_grad=True)
        x.register_post_accumulate_grad_hook(lambda t: value(t))
        (x * 2).sum().backward()
        return x.grad.tolist()
    return run


def _post_accumulate_hook_returning_none(m: Any) -> Any:
    x = m.ones(2, requires_grad=True)
    seen: list = []
    x.register_post_accumulate_grad_hook(lambda t: seen.append(t.grad.tolist()))
    (x * 3).sum().backward()
    return seen, x.grad.tolist()


def _saved_after_detach_(m: Any) -> Any:
    a = m.ones(2, requires_grad=True)
    b = a * 1
    c = b * b
    b.detach_()
    c.sum().backward()


def _numpy_under_no_grad(m: Any) -> Any:
    x = m.ones(2, requires_grad=True)
    with m.no_grad():
        return x.numpy().tolist()


def _output_nr(m: Any) -> Any:
    x = m.ones(3, requires_grad=True)
    parts = x.unbind()
    q, r = m.linalg.qr(m.eye(2, requires_grad=True) * 2)
    return [t.output_nr for t in parts], x.output_nr, q.output_nr, r.output_nr


def _transpose_(m: Any) -> Any:
    x = m.ones(2, 3, requires_grad=True) * 1
    y = x.transpose_(0, 1)
    return tuple(y.shape), type(y.grad_fn).__name__, y is x


CASES: dict[str, Callable[[Any], Any]] = {
    "x.grad = x": _own_grad,
    "post-accumulate hook returns a tensor": _post_accumulate_hook_returning(lambda t: t * 2),
    "post-accumulate hook returns a number": _post_accumulate_hook_returning(lambda t: 5),
    "post-accumulate hook returns None": _post_accumulate_hook_returning_none,
    "saved tensor after detach_": _saved_after_detach_,
    "numpy() under no_grad": _numpy_under_no_grad,
    "numpy() of a tensor requiring grad": lambda m: m.ones(2, requires_grad=True).numpy(),
    "output_nr": _output_nr,
    "transpose_": _transpose_,
}


def _outcome(run: Callable[[Any], Any], m: Any) -> Any:
    try:
        return run(m)
    except Exception as e:  # noqa: BLE001 - the error is the outcome compared
        return f"{type(e).__name__}: {e}".replace("npgrad.", "torch.")


@pytest.mark.parametrize("name", list(CASES))
def test_behaviour_matches_torch(name: str) -> None:
    torch = pytest.importorskip("torch")
    assert _outcome(CASES[name], npgrad) == _outcome(CASES[name], torch)


def test_post_accumulate_hook_refusals_by_hand() -> None:
    with pytest.raises(RuntimeError, match=r"^Tensor post accumulate grad hooks should return "
                                           r"None\.$"):
        _post_accumulate_hook_returning(lambda t: t * 2)(npgrad)
    with pytest.raises(TypeError, match=r"^expected Variable, but hook returned 'int'$"):
        _post_accumulate_hook_returning(lambda t: 5)(npgrad)
    assert _post_accumulate_hook_returning_none(npgrad) == ([[3.0, 3.0]], [3.0, 3.0])
