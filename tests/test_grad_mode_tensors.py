"""What the grad modes do to tensors: every ordered nesting pair, decorators, threads.

The state-only behaviour of the managers is in test_grad_mode_state.py; here
each block computes with tensors and the results are checked against the rule
(an op records iff grad mode is on and inference mode is off; its output is an
inference tensor iff inference mode is on; factories honour requires_grad=True
everywhere) and, where installed, against torch.
"""
from __future__ import annotations

import itertools
import threading

import pytest

import npgrad

MANAGERS = {
    "no_grad": lambda T: T.no_grad(),
    "enable_grad": lambda T: T.enable_grad(),
    "set_grad_enabled_True": lambda T: T.set_grad_enabled(True),
    "set_grad_enabled_False": lambda T: T.set_grad_enabled(False),
    "inference_mode": lambda T: T.inference_mode(),
    "inference_mode_False": lambda T: T.inference_mode(False),
}
# (grad on, inference on) inside each manager, given the state outside it.
EFFECT = {
    "no_grad": lambda g, i: (False, i),
    "enable_grad": lambda g, i: (True, i),
    "set_grad_enabled_True": lambda g, i: (True, i),
    "set_grad_enabled_False": lambda g, i: (False, i),
    "inference_mode": lambda g, i: (False, True),
    "inference_mode_False": lambda g, i: (True, False),
}


def observe(T, x) -> tuple:
    """What an op and a factory give in the current mode."""
    y = x * 2
    f = T.ones(2, requires_grad=True)
    return (T.is_grad_enabled(), T.is_inference_mode_enabled(), y.requires_grad,
            y.grad_fn is not None, y.is_leaf, y.is_inference(), f.requires_grad, f.is_leaf,
            f.is_inference())


def expected(grad: bool, inference: bool) -> tuple:
    records = grad and not inference
    return (grad, inference, records, records, not records, inference, True, True, inference)


def nest(T, outer: str, inner: str) -> list:
    x = T.tensor([1., 2.], requires_grad=True)
    seen = [observe(T, x)]
    with MANAGERS[outer](T):
        seen.append(observe(T, x))
        with MANAGERS[inner](T):
            seen.append(observe(T, x))
        seen.append(observe(T, x))
    seen.append(observe(T, x))
    return seen


PAIRS = list(itertools.product(MANAGERS, MANAGERS))


@pytest.mark.parametrize("outer,inner", PAIRS, ids=[f"{i}__in__{o}" for o, i in PAIRS])
def test_nesting_pair_follows_the_rule(outer: str, inner: str) -> None:
    g_out, i_out = EFFECT[outer](True, False)
    g_in, i_in = EFFECT[inner](g_out, i_out)
    assert nest(npgrad, outer, inner) == [
        expected(True, False), expected(g_out, i_out), expected(g_in, i_in),
        expected(g_out, i_out), expected(True, False)]


@pytest.mark.parametrize("outer,inner", PAIRS, ids=[f"{i}__in__{o}" for o, i in PAIRS])
def test_nesting_pair_matches_torch(outer: str, inner: str) -> None:
    torch = pytest.importorskip("torch")
    assert nest(npgrad, outer, inner) == nest(torch, outer, inner)


def test_exception_inside_block_restores_and_propagates() -> None:
    x = npgrad.tensor([1.], requires_grad=True)
    with pytest.raises(ZeroDivisionError):
        with npgrad.no_grad():
            assert not (x * 2).requires_grad
            1 / 0
    assert (x * 2).requires_grad


def test_decorated_function_and_generator_compute_in_their_mode() -> None:
    x = npgrad.tensor([1.], requires_grad=True)

    @npgrad.no_grad()
    def doubled(t):
        return t * 2

    @npgrad.no_grad
    def stream(t):
        for k in range(3):
            yield t * k

    assert not doubled(x).requires_grad
    outside = []
    for item in stream(x):
        assert not item.requires_grad
        outside.append((x * 1).requires_grad)  # the caller keeps its own mode between items
    assert outside == [True, True, True]


def test_new_thread_records_even_inside_no_grad() -> None:
    x = npgrad.tensor([1.], requires_grad=True)
    seen = {}

    def work():
        seen["thread"] = (x * 2).requires_grad

    with npgrad.no_grad():
        t = threading.Thread(target=work)
        t.start()
        t.join()
        seen["main"] = (x * 2).requires_grad
    assert seen == {"thread": True, "main": False}


def test_inference_tensor_rules() -> None:
    with npgrad.inference_mode():
        a = npgrad.ones(2)
    assert a.is_inference()
    with pytest.raises(RuntimeError, match="Inference tensors do not track version counter."):
        a._version
    with pytest.raises(RuntimeError) as info:
        a.add_(1)
    assert str(info.value) == (
        "Inplace update to inference tensor outside InferenceMode is not allowed.You can make a "
        "clone to get a normal tensor before doing inplace update.See "
        "https://github.com/pytorch/rfcs/pull/17 for more details.")
    x = npgrad.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match="^Inference tensors cannot be saved for backward."):
        x * a
    assert (x + a).grad_fn is not None  # add saves nothing, so it accepts inference tensors
    assert not a.clone().is_inference()


def test_set_grad_enabled_plain_call_persists_and_leaks_into_caller() -> None:
    x = npgrad.tensor([1.], requires_grad=True)

    def switch_off():
        npgrad.set_grad_enabled(False)

    try:
        switch_off()
        assert not (x * 2).requires_grad
    finally:
        npgrad.set_grad_enabled(True)
    assert (x * 2).requires_grad
