"""Backward from several threads: torch's thread-safety promises, checked exactly.

Every test switches threads as often as the interpreter allows and starts the
threads together at a barrier, so that racing accumulations overlap; the
expected gradients are exact sums (small integers in float64), so any lost or
doubled contribution fails the assertion.
"""
from __future__ import annotations

import sys
import threading

import pytest

import npgrad
from npgrad.autograd.graph import saved_tensors_hooks

THREADS = 8
ROUNDS = 500


@pytest.fixture(autouse=True)
def fast_switching():
    previous = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    yield
    sys.setswitchinterval(previous)


def _run_threads(work) -> None:
    errors: list = []

    def guarded(k: int) -> None:
        try:
            work(k)
        except BaseException as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=guarded, args=(k,)) for k in range(THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]


@pytest.mark.parametrize("start", ["none", "zeroed"])
@pytest.mark.parametrize("size", [3, 100_000])
def test_separate_graphs_into_one_shared_leaf(start, size):
    # Thread k backpropagates (w * (k + 1)).sum(): w.grad must be 1 + 2 + ... + 8 = 36
    # in every element, every round.  Small leaves race on the first ``.grad``; large
    # ones also in NumPy's in-place add, which releases the GIL.
    expected = float(sum(range(1, THREADS + 1)))
    lost = []
    for r in range(ROUNDS):
        w = npgrad.ones(size, dtype=npgrad.float64, requires_grad=True)
        if start == "zeroed":
            w.grad = npgrad.zeros(size, dtype=npgrad.float64)
        barrier = threading.Barrier(THREADS)

        def work(k: int) -> None:
            y = (w * float(k + 1)).sum()
            barrier.wait()
            y.backward()

        _run_threads(work)
        if not bool((w.grad == expected).all()):
            lost.append((r, w.grad[:3].tolist()))
    assert lost == []


def test_concurrent_retained_backwards_of_one_graph():
    expected_rounds = 50
    for _ in range(expected_rounds):
        x = npgrad.tensor([1., 2., 3.], dtype=npgrad.float64, requires_grad=True)
        y = x * x
        h = (y * 2.0 + y).sum()  # dh/dx = 6x, summed over 8 backwards: 48x (exact)
        barrier = threading.Barrier(THREADS)

        def work(k: int) -> None:
            barrier.wait()
            h.backward(retain_graph=True)

        _run_threads(work)
        assert x.grad.tolist() == [48., 96., 144.]


def test_concurrent_autograd_grad_of_one_graph_leaves_grad_alone():
    x = npgrad.tensor([1., 2.], dtype=npgrad.float64, requires_grad=True)
    out = (x * x * x).sum()
    results: list = [None] * THREADS
    barrier = threading.Barrier(THREADS)

    def work(k: int) -> None:
        barrier.wait()
        for _ in range(20):
            results[k] = npgrad.autograd.grad(out, x, retain_graph=True)[0].tolist()

    _run_threads(work)
    assert results == [[3., 12.]] * THREADS
    assert x.grad is None


def test_saved_tensor_hooks_are_thread_local():
    # Thread A holds a saved_tensors_hooks block open while thread B records ops:
    # B's saved tensors must not be packed by A's hooks, and A's must be.
    packed_by_a: list = []
    a_entered, b_done = threading.Event(), threading.Event()
    b_saved: list = []

    def thread_a() -> None:
        with saved_tensors_hooks(lambda t: packed_by_a.append(t) or t, lambda t: t):
            a_entered.set()
            b_done.wait(30)
            x = npgrad.ones(2, requires_grad=True)
            (x * x).sum().backward()

    def thread_b() -> None:
        a_entered.wait(30)
        try:
            x = npgrad.ones(2, requires_grad=True)
            y = x * x
            y.sum().backward()
            b_saved.append(x.grad.tolist())
        finally:
            b_done.set()

    ta, tb = threading.Thread(target=thread_a), threading.Thread(target=thread_b)
    ta.start()
    tb.start()
    ta.join()
    tb.join()
    assert len(packed_by_a) == 2  # A's own x * x saves x twice
    assert b_saved == [[2., 2.]]


def test_hooks_stack_of_a_new_thread_starts_empty():
    seen: list = []
    with saved_tensors_hooks(lambda t: seen.append("packed") or t, lambda t: t):
        def work() -> None:
            x = npgrad.ones(2, requires_grad=True)
            (x * x).sum().backward()
        t = threading.Thread(target=work)
        t.start()
        t.join()
    assert seen == []


def test_graph_task_ids_are_per_thread():
    from npgrad.autograd import engine

    ids: dict = {}
    barrier = threading.Barrier(2)

    def work(k: int) -> None:
        x = npgrad.ones(1, requires_grad=True)
        y = x * 2

        def hook(g):
            barrier.wait()  # both runs are in progress now
            ids[k] = engine.current_graph_task_id()
        y.register_hook(hook)
        y.sum().backward()
        ids[f"after{k}"] = engine.current_graph_task_id()

    threads = [threading.Thread(target=work, args=(k,)) for k in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert ids[0] != ids[1] and ids[0] >= 0 and ids[1] >= 0
    assert ids["after0"] == ids["after1"] == -1
