"""The backward engine: the only code that walks graphs.

Note [How the engine runs]
1. Collect the nodes reachable from the roots with an explicit stack (never
   recursion: a 1,000,000-node chain must work) and count, for each node, the
   edges that lead into it from nodes that will run.
2. When only some inputs are wanted (``autograd.grad``, ``backward(inputs=)``),
   keep just the nodes from which a wanted input can be reached.
3. Run nodes from a ready queue ordered by creation (newest first, as torch's
   CPU queue does).  A node is ready once every edge into it has delivered;
   its incoming gradients have been summed into one buffer slot per output.
4. Each gradient a node returns is checked against the metadata of the tensor
   it belongs to: summed back to that tensor's shape if it was broadcast, and
   cast to its dtype.  ``None`` is a zero gradient and is never materialised.
5. Saved values are released as each node finishes, unless ``retain_graph``.
Grad mode is set to ``create_graph`` while the engine runs, so backward rules
(written in npgrad ops) build a graph only when asked to.
"""
from __future__ import annotations

import heapq
import warnings
from typing import Any

import numpy as np

from .. import _mode
from .._forward import FW, flush as flush_tangents
from .._mode import _tls
from . import anomaly_mode
from .graph import AccumulateGrad, Node

_GRAD_ONLY = _mode.GRAD


def _reachable(roots: list) -> tuple:
    """All nodes reachable from ``roots`` and, per node, how many edges point at it."""
    dependencies: dict = {}
    seen = set(roots)
    stack = list(roots)
    while stack:
        node = stack.pop()
        for child, _ in node.next_functions:
            if child is None:
                continue
            dependencies[child] = dependencies.get(child, 0) + 1
            if child not in seen:
                seen.add(child)
                stack.append(child)
    return seen, dependencies


def _needed(nodes: set, roots: list, targets: set) -> set:
    """Nodes from which some target node can be reached (iterative post-order)."""
    needed: set = set()
    done: set = set()
    for root in roots:
        if root in done:
            continue
        stack = [(root, iter(root.next_functions))]
        while stack:
            node, children = stack[-1]
            advanced = False
            for child, _ in children:
                if child is not None and child not in done:
                    stack.append((child, iter(child.next_functions)))
                    advanced = True
                    break
            if advanced:
                continue
            stack.pop()
            done.add(node)
            if node in targets or any(c in needed for c, _ in node.next_functions
                                      if c is not None):
                needed.add(node)
    return needed


def _fit_to_meta(grad: Any, meta: tuple) -> Any:
    """Reduce a broadcast gradient to its tensor's shape and cast it to its dtype."""
    shape, dtype = meta
    data = grad._data
    if data.shape != shape:
        from .._ops.broadcast import sum_to_size

        grad = sum_to_size(grad, shape)
    if grad._data.dtype != dtype:
        from .._ops.shape import to
        from .. import _dtype

        grad = to(grad, _dtype.from_np(dtype))
    return grad


def run_backward(roots: list, root_grads: list, retain_graph: bool, create_graph: bool,
                 capture: list | None = None, accumulate: bool = True) -> list | None:
    """Propagate ``root_grads`` from the ``(node, output_nr)`` edges in ``roots``.

    With ``capture`` (a list of edges), return the gradient arriving at each
    captured edge instead of (``accumulate=False``) or as well as accumulating
    into leaves.
    """
    if FW.pending:  # Note [When a tangent is computed]: placeholder edges go first
        flush_tangents()
    root_nodes = []
    for node, _ in roots:
        if node not in root_nodes:
            root_nodes.append(node)
    nodes, dependencies = _reachable(root_nodes)

    captured: list | None = None
    capture_at: dict = {}
    if capture is not None:
        captured = [None] * len(capture)
        for i, (node, nr) in enumerate(capture):
            capture_at.setdefault(node, []).append((i, nr))
        needed = _needed(nodes, root_nodes, set(capture_at))
        if not accumulate:
            needed = {n for n in needed if type(n) is not AccumulateGrad or n in capture_at}
        dependencies = {}
        for node in needed:
            for child, _ in node.next_functions:
                if child is not None and child in needed:
                    dependencies[child] = dependencies.get(child, 0) + 1
    else:
        needed = None

    buffers: dict = {}
    for (node, nr), grad in zip(roots, root_grads):
        if needed is not None and node not in needed:
            continue
        buf = buffers.get(node)
        if buf is None:
            buf = buffers[node] = [None] * len(node._out_meta)
        buf[nr] = grad if buf[nr] is None else buf[nr] + grad

    ready: list = []
    for node in buffers:
        if dependencies.get(node, 0) == 0:
            heapq.heappush(ready, (-node._seq, id(node), node))

    previous_mode = _tls.mode
    _tls.mode = (previous_mode & _mode.INFERENCE) | (_GRAD_ONLY if create_graph else 0)
    _tasks.append(_GraphTask(nodes if needed is None else needed, capture is None))
    try:
        while ready:
            node = heapq.heappop(ready)[2]
            grads = buffers.pop(node)
            if node in capture_at and not _executes(node, needed, accumulate):
                # Note [Capture-only nodes]: as torch, a node reached only to read its
                # incoming gradient runs its tensor hooks, is captured, and is not run.
                grads = _run_tensor_pre_hooks(node, grads)
                for i, nr in capture_at[node]:
                    captured[i] = grads[nr]
                continue
            if type(node) is AccumulateGrad:
                grads = _run_leaf_hooks(node, grads)
            if node._hooks is not None:
                grads = _run_pre_hooks(node, grads)
            if node in capture_at:
                for i, nr in capture_at[node]:
                    captured[i] = grads[nr]
                if type(node) is AccumulateGrad and not accumulate:
                    continue
            outputs = _call_node(node, grads)
            if not retain_graph:
                node._release_saved()
            for (child, nr), grad in zip(node.next_functions, outputs):
                if child is None or (needed is not None and child not in needed):
                    continue
                if grad is not None:
                    grad = _fit_to_meta(grad, child._out_meta[nr])
                    buf = buffers.get(child)
                    if buf is None:
                        buf = buffers[child] = [None] * len(child._out_meta)
                    prev = buf[nr]
                    buf[nr] = grad if prev is None else prev + grad
                remaining = dependencies[child] - 1
                dependencies[child] = remaining
                if remaining == 0:
                    if child in buffers:
                        heapq.heappush(ready, (-child._seq, id(child), child))
                    else:
                        _skip_without_grad(child, dependencies, buffers, ready, needed)
    finally:
        _tls.mode = previous_mode
        _tasks.pop()
    return captured


class _GraphTask:
    """What hooks may ask about the backward run they are called from."""

    __slots__ = ("id", "executes", "accumulates_all")
    _ids = iter(range(1 << 62))

    def __init__(self, executes: set, accumulates_all: bool) -> None:
        self.id = next(_GraphTask._ids)
        self.executes = executes
        self.accumulates_all = accumulates_all


# Backward runs in progress in this process, innermost last (backward may nest:
# a reentrant checkpoint calls backward from inside a node).
_tasks: list = []


def current_graph_task_id() -> int:
    """Id of the innermost backward run in progress, or -1 outside backward."""
    return _tasks[-1].id if _tasks else -1


def will_engine_execute_node(node: Node) -> bool:
    """Whether the current backward run reaches ``node`` (torch's ``_will_engine_execute_node``)."""
    if not _tasks:
        raise RuntimeError("_will_engine_execute_node should only be called during the backward "
                           "pass")
    return node in _tasks[-1].executes


def _executes(node: Node, needed: set | None, accumulate: bool) -> bool:
    """Whether a node on the way to a captured gradient must itself run."""
    if needed is None:
        return True
    if type(node) is AccumulateGrad:
        return accumulate
    return any(child in needed for child, _ in node.next_functions if child is not None)


def _skip_without_grad(node: Node, dependencies: dict, buffers: dict, ready: list,
                       needed: set | None) -> None:
    """A node whose every incoming gradient was None: its outputs are None too."""
    stack = [node]
    while stack:
        n = stack.pop()
        for child, _ in n.next_functions:
            if child is None or (needed is not None and child not in needed):
                continue
            remaining = dependencies[child] - 1
            dependencies[child] = remaining
            if remaining == 0:
                if child in buffers:
                    heapq.heappush(ready, (-child._seq, id(child), child))
                else:
                    stack.append(child)


def _call_node(node: Node, grads: list) -> tuple:
    if anomaly_mode._anomaly_enabled:
        return _call_node_anomaly(node, grads)
    outputs = node.backward(*grads)
    if node._hooks is not None:
        outputs = _run_post_hooks(node, outputs, grads)
    return outputs


def _call_node_anomaly(node: Node, grads: list) -> tuple:
    try:
        outputs = node.backward(*grads)
        if node._hooks is not None:
            outputs = _run_post_hooks(node, outputs, grads)
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
        warnings.warn(msg, UserWarning, stacklevel=2)
        raise
    return outputs


def _check_nan(node: Node, outputs: tuple) -> None:
    for i, g in enumerate(outputs):
        if g is not None and np.isnan(g._data).any():
            raise RuntimeError(f"Function '{node.name()}' returned nan values in its {i}th "
                               "output.")


def _run_leaf_hooks(node: AccumulateGrad, grads: list) -> list:
    """A leaf's own ``register_hook`` hooks: torch runs them before anything else of its
    AccumulateGrad (its pre-hooks, the accumulation, post-accumulate hooks)."""
    extra = node.variable._extra
    if extra is not None and extra.hooks and grads[0] is not None:
        from .._tensor import _checked_hook_result

        for hook in list(extra.hooks.values()):
            new = hook(grads[0])
            if new is not None:
                grads[0] = _checked_hook_result(hook, grads[0], new)
    return grads


def _run_tensor_pre_hooks(node: Node, grads: list) -> list:
    """Hooks registered on the node's output tensors (a leaf's own hooks for AccumulateGrad)."""
    if type(node) is AccumulateGrad:
        grads = _run_leaf_hooks(node, grads)
    if node._hooks is None:
        return grads
    for nr, tensor_hooks in node._hooks.tensor_pre_hooks.items():
        for hook in list(tensor_hooks.values()):
            g = grads[nr]
            if g is None:
                continue
            new = hook(g)
            if new is not None:
                from .._tensor import _checked_hook_result

                grads[nr] = _checked_hook_result(hook, g, new)
    return grads


def _run_pre_hooks(node: Node, grads: list) -> list:
    hooks = node._hooks
    for nr, tensor_hooks in hooks.tensor_pre_hooks.items():
        for hook in list(tensor_hooks.values()):
            g = grads[nr]
            if g is None:
                continue
            new = hook(g)
            if new is not None:
                from .._tensor import _checked_hook_result

                grads[nr] = _checked_hook_result(hook, g, new)
    for nr, ref in hooks.retains_grad.items():
        tensor = ref()
        g = grads[nr]
        if tensor is not None and g is not None:
            if tensor._grad is None:
                tensor._grad = g.detach().clone() if not (_tls.mode & _GRAD_ONLY) else g
            else:
                tensor._grad = tensor._grad + g
    for hook in list(hooks.pre_hooks.values()):
        new = hook(tuple(grads))
        if new is not None:
            grads = list(new)
    return grads


def _run_post_hooks(node: Node, outputs: tuple, grads: list) -> tuple:
    for hook in list(node._hooks.post_hooks.values()):
        new = hook(tuple(outputs), tuple(grads))
        if new is not None:
            outputs = tuple(new)
    return outputs
