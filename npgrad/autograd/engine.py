"""The backward engine: the only code that walks graphs.

Note [How the engine runs]
One backward run is a ``GraphTask``, planned once and then executed:
1. Plan (``_plan``).  Collect the nodes reachable from the roots with an
   explicit stack (never recursion: a 1,000,000-node chain must work) and
   count, per node, the edges that lead into it.  When only some edges are
   wanted (``autograd.grad``, ``backward(inputs=)``) keep just the nodes from
   which a wanted edge can be reached, and decide which of them run: for
   ``autograd.grad`` a wanted node runs only if it also leads on to another
   wanted node (Note [Capture-only nodes]); for ``backward(inputs=)`` every
   kept node runs, a non-leaf input having retained its grad, as torch's.
2. Loop (``_execute``).  Pop the ready node created last (newest first, as
   torch's CPU queue does; AccumulateGrad before anything else), run it, and
   deliver each gradient it returns into its child's buffer, fitted to the
   child's input metadata (summed back over broadcast dimensions, cast to its
   dtype).  A child is ready once every edge into it has delivered.
3. One node (``_run_node``): tensor pre-hooks (a leaf's own hooks for an
   AccumulateGrad), retained grads, captures, the node's pre-hooks, its
   backward, its post-hooks; its saved values are released unless
   ``retain_graph``.
4. Callbacks queued with ``queue_callback`` run when the loop is done.
``None`` is a zero gradient and is never materialised.  Grad mode is set to
``create_graph`` for the whole run, so backward rules (written in npgrad ops)
build a graph only when asked to.

Note [Nodes reached without a gradient]
As in torch, a node runs once every edge into it has delivered, even if every
gradient delivered was None (a custom Function returned None for an input
that requires grad, a sibling output of ``unbind`` was used alone).  Its
hooks see None; a built-in node's backward is not called, its gradients being
None too; a custom Function's is (with zeros, unless it asked for None).

Note [Threads]
Each thread's backward runs have their own task stack (``_state``), so hooks
and ``queue_callback`` see the run of their own thread.  Writes into shared
``.grad`` fields are atomic (Note [Thread safety of accumulation] in
graph.py); nothing else here is shared between runs.

Note [Reentrant backward]
A custom Function's backward may itself call backward.  Each such nested run
costs a few Python frames, so a deep chain of them would exhaust the
interpreter's recursion limit.  As torch's engine hands nested work to a
fresh thread once it is deep, a run nested ``_REENTRANT_DEPTH`` deep in one
thread is executed on a new thread (with a generous stack), which starts
with an empty Python stack; the caller waits for it.  The worker adopts the
caller's grad mode and saved-tensor hooks, and its errors are re-raised in
the caller.
"""
from __future__ import annotations

import heapq
import threading
from typing import Any, Callable

import numpy as np

from .. import _mode
from .._mode import _tls
from . import anomaly_mode, graph
from .graph import GRAD_LOCK, AccumulateGrad, Node, fit_to_meta
from .hooks import check_hook_result

_GRAD_ONLY = _mode.GRAD
_REENTRANT_DEPTH = 16
_WORKER_STACK_BYTES = 64 * 1024 * 1024


class GraphTask:
    """One backward run: its plan, its state, and what hooks may ask about it."""

    __slots__ = ("id", "executes", "needed", "accumulates_all", "captures", "captured",
                 "dependencies", "buffers", "ready", "retain_graph", "mode", "callbacks")
    _ids = iter(range(1 << 62))

    def __init__(self) -> None:
        self.id = next(GraphTask._ids)
        self.executes: set = set()       # nodes that run (``_will_engine_execute_node``)
        self.needed: set | None = None   # nodes gradients flow to; None: all reachable
        self.accumulates_all = True      # a plain backward (reentrant checkpoint needs one)
        self.captures: dict | None = None  # node -> [(index in captured, output_nr)]
        self.captured: list | None = None
        self.dependencies: dict = {}
        self.buffers: dict = {}          # node -> one incoming-gradient slot per output
        self.ready: list = []            # heap of (-sequence_nr, id, node)
        self.retain_graph = False
        self.mode = 0                    # the grad mode nodes run under
        self.callbacks: list = []


class _EngineThreadState(threading.local):
    def __init__(self) -> None:
        self.tasks: list = []  # this thread's runs in progress, innermost last


_state = _EngineThreadState()


def run_backward(roots: list, root_grads: list, retain_graph: bool, create_graph: bool,
                 capture: list | None = None, accumulate: bool = True) -> list | None:
    """Propagate ``root_grads`` from the ``(node, output_nr)`` edges in ``roots``.

    With ``capture`` (a list of edges) and ``accumulate=False`` (``autograd.grad``),
    return the gradient arriving at each captured edge and accumulate nothing.
    With ``capture`` and ``accumulate=True`` (``backward(inputs=)``), run only what
    leads to those edges, accumulating into them; nothing is returned.
    """
    task = _plan(roots, root_grads, capture, accumulate)
    task.retain_graph = retain_graph
    task.mode = (_tls.mode & _mode.INFERENCE) | (_GRAD_ONLY if create_graph else 0)
    if len(_state.tasks) >= _REENTRANT_DEPTH:
        _execute_on_worker(task)
    else:
        _execute(task)
    return task.captured


# -- planning ---------------------------------------------------------------------------

def _plan(roots: list, root_grads: list, capture: list | None, accumulate: bool) -> GraphTask:
    """Which nodes run, how many edges each waits for, and the roots' gradients."""
    task = GraphTask()
    root_nodes = list(dict.fromkeys(node for node, _ in roots))
    nodes, dependencies = _reachable(root_nodes)
    task.executes = nodes
    if capture is not None:
        targets = {node for node, _ in capture}
        needed = _needed(root_nodes, targets)
        task.needed = needed
        task.accumulates_all = False
        dependencies = {}
        for node in needed:
            for child, _ in node.next_functions:
                if child is not None and child in needed:
                    dependencies[child] = dependencies.get(child, 0) + 1
        if accumulate:
            task.executes = needed
        else:
            task.executes = {n for n in needed if n not in targets or _leads_on(n, needed)}
            task.captures = {}
            for i, (node, nr) in enumerate(capture):
                task.captures.setdefault(node, []).append((i, nr))
            task.captured = [None] * len(capture)
    task.dependencies = dependencies
    needed = task.needed
    buffers = task.buffers
    for (node, nr), grad in zip(roots, root_grads):
        if needed is not None and node not in needed:
            continue
        buf = buffers.get(node)
        if buf is None:
            buf = buffers[node] = [None] * len(node._out_meta)
        buf[nr] = grad if buf[nr] is None else buf[nr] + grad
    task.ready = [(-node._seq, id(node), node) for node in buffers
                  if dependencies.get(node, 0) == 0]
    heapq.heapify(task.ready)
    return task


class _Reached:
    """The nodes of a run: those some edge points at (``dependencies``' keys) and the roots."""

    __slots__ = ("dependencies", "roots")

    def __init__(self, dependencies: dict, roots: set) -> None:
        self.dependencies = dependencies
        self.roots = roots

    def __contains__(self, node: Any) -> bool:
        return node in self.dependencies or node in self.roots


def _reachable(roots: list) -> tuple:
    """All nodes reachable from ``roots`` and, per node, how many edges point at it.

    A node is pushed when its first edge is counted, so ``dependencies`` doubles as the
    set of nodes seen (one dict operation per edge; a root is pushed only as a root).
    """
    dependencies: dict = {}
    count_of = dependencies.get
    root_set = set(roots)
    stack = list(roots)
    pop, push = stack.pop, stack.append
    while stack:
        node = pop()
        # Note [Edges in the node] in graph.py: two edges in slots, more in ``_edges``
        children = (node._fn0, node._fn1) if node._n_edges <= 2 else \
            [fn for fn, _ in node._edges]
        for child in children:
            if child is None:
                continue
            count = count_of(child)
            if count is None:
                dependencies[child] = 1
                if child not in root_set:
                    push(child)
            else:
                dependencies[child] = count + 1
    return _Reached(dependencies, root_set), dependencies


def _needed(roots: list, targets: set) -> set:
    """Nodes from which some target node can be reached (iterative post-order)."""
    needed: set = set()
    done: set = set()
    for root in roots:
        if root in done:
            continue
        stack = [(root, iter(root.next_functions))]
        while stack:
            node, children = stack[-1]
            for child, _ in children:
                if child is not None and child not in done:
                    stack.append((child, iter(child.next_functions)))
                    break
            else:
                stack.pop()
                done.add(node)
                if node in targets or _leads_on(node, needed):
                    needed.add(node)
    return needed


def _leads_on(node: Node, needed: set) -> bool:
    return type(node) is not AccumulateGrad and any(
        child in needed for child, _ in node.next_functions if child is not None)


# -- execution --------------------------------------------------------------------------

def _execute(task: GraphTask) -> None:
    """The ready-queue loop of Note [How the engine runs], then the queued callbacks."""
    buffers, dependencies, ready, needed = task.buffers, task.dependencies, task.ready, task.needed
    tasks = _state.tasks
    previous_mode = _tls.mode
    _tls.mode = task.mode
    tasks.append(task)
    plain = task.captures is None  # Note [The engine's plain path]
    retain = task.retain_graph
    heappush, heappop = heapq.heappush, heapq.heappop
    nxt: Any = None        # Note [The next node without the queue]
    nxt_grads: Any = None
    try:
        while True:
            if nxt is not None:
                if ready and ready[0][0] < -nxt._seq:  # a newer node is ready: it goes first
                    if nxt_grads is not None:
                        buffers[nxt] = nxt_grads
                    heappush(ready, (-nxt._seq, id(nxt), nxt))
                    node = heappop(ready)[2]
                    grads = buffers.pop(node, None)
                else:
                    node, grads = nxt, nxt_grads
                nxt = nxt_grads = None
            elif ready:
                node = heappop(ready)[2]
                grads = buffers.pop(node, None)
            else:
                break
            if (plain and grads is not None and node._hooks is None
                    and type(node) is not AccumulateGrad and not anomaly_mode._anomaly_enabled):
                outputs = node.backward(*grads)
                if not retain:
                    node._release_saved()
            else:
                outputs = _run_node(task, node, grads)
            # the node's edges (Note [Edges in the node] in graph.py); a one-edge node's
            # unused second slot meets no output
            edges = ((node._fn0, node._nr0), (node._fn1, node._nr1)) \
                if node._n_edges <= 2 else node._edges
            for (child, nr), grad in zip(edges, outputs):
                if child is None or (needed is not None and child not in needed):
                    continue
                remaining = dependencies[child] - 1
                dependencies[child] = remaining
                buf = buffers.pop(child, None) if remaining == 0 else buffers.get(child)
                if grad is not None:
                    meta = child._out_meta[nr]
                    data = grad._data
                    if data.shape != meta[0] or data.dtype != meta[1]:
                        grad = fit_to_meta(grad, meta)
                    if buf is None:
                        buf = [None] * len(child._out_meta)
                        if remaining:
                            buffers[child] = buf
                        buf[nr] = grad
                    else:
                        prev = buf[nr]
                        buf[nr] = grad if prev is None else prev + grad
                if remaining == 0:
                    if nxt is None:
                        nxt, nxt_grads = child, buf
                    else:
                        if child._seq > nxt._seq:  # keep the newer one in hand
                            nxt, nxt_grads, child, buf = child, buf, nxt, nxt_grads
                        if buf is not None:
                            buffers[child] = buf
                        heappush(ready, (-child._seq, id(child), child))
        callbacks = task.callbacks
        i = 0
        while i < len(callbacks):  # a callback may queue more
            callbacks[i]()
            i += 1
    finally:
        _tls.mode = previous_mode
        tasks.pop()


# Note [The next node without the queue]
# In a chain (and in most of any graph) the node that becomes ready last is the one to
# run next: it is the newest ready node.  So a node made ready is kept in hand (``nxt``,
# with its gradients) rather than pushed on the heap and popped again, and its buffer
# never enters ``buffers``; before it runs it is compared with the heap's newest node,
# and goes to the heap if that one is newer, which keeps torch's order exactly.  Of two
# children made ready by one node the newer is kept in hand.

# Note [The engine's plain path]
# Most nodes of most runs have no hooks, are not captured, got a gradient and run
# outside anomaly mode: for them ``_run_node`` does nothing but call ``backward`` and
# release the saved values, so the loop does that itself (one frame and a dozen tests
# less per node).  Likewise a gradient already of its input's shape and dtype (nearly
# all of them) skips ``fit_to_meta``'s call.

def _run_node(task: GraphTask, node: Node, grads: list | None) -> tuple:
    """Run one node with its hooks; return one gradient per edge (``()`` if it did not run)."""
    no_grad_arrived = grads is None
    if no_grad_arrived:  # Note [Nodes reached without a gradient]
        grads = [None] * len(node._out_meta)
    hooks = node._hooks
    captures = task.captures
    if captures is not None and node in captures:
        if node not in task.executes:
            # Note [Capture-only nodes]: as torch, a node reached only to read its
            # incoming gradient runs its tensor hooks, is captured, and is not run.
            grads = _tensor_pre_hooks(node, grads)
            _capture(task, node, grads)
            return ()
        _capture(task, node, grads)  # torch captures what arrives, before any hook
    if type(node) is AccumulateGrad or hooks is not None:
        grads = _tensor_pre_hooks(node, grads)
        if hooks is not None and hooks.pre_hooks:
            for hook in list(hooks.pre_hooks.values()):
                new = hook(tuple(grads))
                if new is not None:
                    grads = list(new)
    if no_grad_arrived and not node._called_without_grad and type(node) is not AccumulateGrad:
        outputs: tuple = (None,) * len(node.next_functions)
    elif anomaly_mode._anomaly_enabled:
        outputs = _call_backward_anomaly(node, grads)
    else:
        outputs = node.backward(*grads)
    if hooks is not None and hooks.post_hooks:
        outputs = _post_hooks(task, node, outputs, grads)
    if not task.retain_graph:
        node._release_saved()
    return outputs


def _capture(task: GraphTask, node: Node, grads: list) -> None:
    captured = task.captured
    for i, nr in task.captures[node]:
        captured[i] = grads[nr]


def _tensor_pre_hooks(node: Node, grads: list) -> list:
    """Hooks registered on the node's output tensors (a leaf's own hooks for an
    AccumulateGrad), then retained grads, which see what those hooks returned."""
    if type(node) is AccumulateGrad:
        extra = node.variable._extra
        if extra is not None and extra.hooks:
            grads[0] = _call_tensor_hooks(extra.hooks, grads[0])
    hooks = node._hooks
    if hooks is None:
        return grads
    for nr, tensor_hooks in hooks.tensor_pre_hooks.items():
        grads[nr] = _call_tensor_hooks(tensor_hooks, grads[nr])
    for nr, ref in hooks.retains_grad.items():
        tensor = ref()
        g = grads[nr]
        if tensor is not None and g is not None:
            with GRAD_LOCK:  # Note [Thread safety of accumulation] in graph.py
                if tensor._grad is None:
                    tensor._grad = g.detach().clone() if not (_tls.mode & _GRAD_ONLY) else g
                else:
                    tensor._grad = tensor._grad + g
    return grads


def _call_tensor_hooks(hooks: dict, grad: Any) -> Any:
    for hook in list(hooks.values()):
        new = hook(grad)
        if new is not None:
            grad = check_hook_result(hook, grad, new)
    return grad


def _post_hooks(task: GraphTask, node: Node, outputs: tuple, grads: list) -> tuple:
    needed = task.needed
    if needed is not None:  # torch computes no gradient for an edge it does not need
        outputs = tuple(None if child is None or child not in needed else g
                        for (child, _), g in zip(node.next_functions, outputs))
    for hook in list(node._hooks.post_hooks.values()):
        new = hook(tuple(outputs), tuple(grads))
        if new is not None:
            outputs = tuple(new)
    return outputs


def _call_backward_anomaly(node: Node, grads: list) -> tuple:
    try:
        outputs = node.backward(*grads)
        if anomaly_mode._anomaly_check_nan:
            _check_nan(node, outputs)
    except Exception:
        trace = node._anomaly_trace
        if trace is None:
            msg = (f"Error detected in {node.name()}. No forward pass information available. "
                   "Enable detect anomaly during forward pass for more information.")
        else:
            msg = (f"Error detected in {node.name()}. Traceback of forward call that caused "
                   f"the error:\n{trace}")
        anomaly_mode.warn_backward_error(msg)
        raise
    return outputs


def _check_nan(node: Node, outputs: tuple) -> None:
    for i, g in enumerate(outputs):
        if g is not None and np.isnan(getattr(g, "_sp_values", g._data)).any():  # sparse: values
            raise RuntimeError(f"Function '{node.name()}' returned nan values in its {i}th "
                               "output.")


def _execute_on_worker(task: GraphTask) -> None:
    """Note [Reentrant backward]: run a deeply nested task on a fresh thread and wait."""
    hooks_state = graph.saved_hooks_state()
    outcome: list = []

    def work() -> None:
        graph.set_saved_hooks_state(hooks_state)
        try:
            _execute(task)
        except BaseException as error:  # re-raised in the waiting thread
            outcome.append(error)
        finally:
            graph.clear_saved_hooks_state()

    previous = threading.stack_size(_WORKER_STACK_BYTES)
    try:
        worker = threading.Thread(target=work, name="npgrad-reentrant-backward", daemon=True)
        worker.start()
    finally:
        threading.stack_size(previous)
    worker.join()
    if outcome:
        raise outcome[0]


# -- what hooks and callbacks may ask ----------------------------------------------------

def current_task() -> GraphTask | None:
    """This thread's innermost backward run in progress, or None outside backward."""
    tasks = _state.tasks
    return tasks[-1] if tasks else None


def current_graph_task_id() -> int:
    """Id of the innermost backward run in progress, or -1 outside backward."""
    tasks = _state.tasks
    return tasks[-1].id if tasks else -1


def will_engine_execute_node(node: Node) -> bool:
    """Whether the current backward run reaches ``node`` (torch's ``_will_engine_execute_node``)."""
    tasks = _state.tasks
    if not tasks:
        raise RuntimeError("_will_engine_execute_node should only be called during the backward "
                           "pass")
    return node in tasks[-1].executes


def queue_callback(callback: Callable[[], Any]) -> None:
    """Run ``callback()`` when the current backward run has finished all its nodes."""
    tasks = _state.tasks
    if not tasks:
        raise RuntimeError("Final callbacks can only be installed during backward pass.")
    tasks[-1].callbacks.append(callback)


class ExecutionEngine:
    """``Variable._execution_engine``: the engine as torch's Python code reaches it."""

    __slots__ = ()

    @staticmethod
    def queue_callback(callback: Callable[[], Any]) -> None:
        """Run ``callback()`` at the end of the current backward run.

        >>> import npgrad
        >>> from npgrad.autograd import Variable
        >>> x = npgrad.tensor([1.], requires_grad=True)
        >>> y = x * 2
        >>> _ = y.register_hook(lambda g: Variable._execution_engine.queue_callback(
        ...     lambda: print("done", x.grad)))
        >>> y.sum().backward()
        done tensor([2.])
        """
        queue_callback(callback)

    @staticmethod
    def is_checkpoint_valid() -> bool:
        """False inside a backward run that is not a plain ``backward()`` of everything."""
        task = current_task()
        return task is None or task.accumulates_all


execution_engine = ExecutionEngine()
