"""Graph nodes, saved tensors and hook handles: what a recorded op leaves behind.

Note [What a node holds]
A node is created by an op only when recording (see ``npgrad._mode``).  It holds
``next_functions`` (one ``(node_or_None, output_nr)`` edge per differentiable
input, torch's order), the shape and dtype of each of its forward outputs
(``_out_meta``, which the engine uses to reduce broadcast gradients and cast
them back: gradients have the dtype of the tensor they belong to), a creation
sequence number (the engine runs newer nodes first, as torch's CPU queue does)
and the values its backward formula reads.  Nodes never point at their own
output tensors, and a leaf points at its ``AccumulateGrad`` only weakly, so a
graph is freed by reference counting alone.

Note [Saved tensors]
``SavedTensor`` remembers the version of a tensor when it is saved.  Unpacking
checks it against the tensor's version now (shared by all views of one
storage) and raises torch's in-place error if they differ.  An op's *output*
is saved as its array plus the version counter, never as the tensor object,
which would make a cycle output -> node -> output; on unpack it is rebuilt
with the node as its ``grad_fn`` so that higher-order graphs see it.  After a
backward without ``retain_graph`` the engine releases every saved value; a
later unpack raises torch's "backward through the graph a second time" error.
"""
from __future__ import annotations

import itertools
import os
import weakref
from typing import Any, Callable

from . import anomaly_mode
# npgrad._tensor imports this module while it is itself being imported; the
# package attribute below resolves at call time, never at import time.
from .. import _tensor as _tensor_module  # noqa: E402

_next_sequence_nr = itertools.count().__next__

SECOND_BACKWARD_MSG = (
    "Trying to backward through the graph a second time (or directly access saved tensors "
    "after they have already been freed). Saved intermediate values of the graph are freed "
    "when you call .backward() or autograd.grad(). Specify retain_graph=True if you need to "
    "backward through the graph a second time or if you need to access saved tensors after "
    "calling backward."
)


_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep


def _forward_trace() -> str:
    """The user's stack at node creation (npgrad's own frames cut), kept only in anomaly mode."""
    import traceback

    frames = traceback.extract_stack()
    while frames and frames[-1].filename.startswith(_PACKAGE_DIR):
        frames.pop()
    return "".join(traceback.format_list(frames))


class RemovableHandle:
    """Returned by ``register_*hook``; ``remove()`` unregisters the hook."""

    __slots__ = ("_hooks_ref", "id")
    _ids = itertools.count()

    def __init__(self, hooks_dict: dict) -> None:
        self._hooks_ref = weakref.ref(hooks_dict)
        self.id = next(RemovableHandle._ids)

    def remove(self) -> None:
        hooks = self._hooks_ref()
        if hooks is not None:
            hooks.pop(self.id, None)

    def __enter__(self) -> RemovableHandle:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.remove()


class _HookDict(dict):
    """A dict that can be weakly referenced by handles (plain dicts cannot)."""

    __slots__ = ("__weakref__",)


def _add_hook(hooks: _HookDict, fn: Callable) -> RemovableHandle:
    handle = RemovableHandle(hooks)
    hooks[handle.id] = fn
    return handle


class NodeHooks:
    """Hooks attached to one node; absent (None) on nearly every node."""

    __slots__ = ("pre_hooks", "post_hooks", "tensor_pre_hooks", "retains_grad")

    def __init__(self) -> None:
        self.pre_hooks: _HookDict = _HookDict()
        self.post_hooks: _HookDict = _HookDict()
        # output_nr -> hooks registered with Tensor.register_hook on that output
        self.tensor_pre_hooks: dict[int, _HookDict] = {}
        # output_nr -> weakref to the tensor whose .grad is retained
        self.retains_grad: dict[int, Any] = {}


class Node:
    """A backward function of the graph (torch's ``torch.autograd.graph.Node``)."""

    __slots__ = ("next_functions", "_out_meta", "_seq", "_hooks", "_anomaly_trace",
                 "_released", "_view_version", "__weakref__")

    # Names of slots holding SavedTensor objects; released after backward.
    _saved_fields: tuple[str, ...] = ()

    def name(self) -> str:
        return type(self).__name__

    def __repr__(self) -> str:
        return f"<{type(self).__name__} object at {id(self):#x}>"

    __str__ = __repr__

    def _init_node(self, next_functions: tuple, out_meta: tuple) -> None:
        self.next_functions = next_functions
        self._out_meta = out_meta
        self._seq = _next_sequence_nr()
        self._hooks = None
        self._released = False
        self._anomaly_trace = _forward_trace() if anomaly_mode._anomaly_enabled else None

    def backward(self, *grads: Any) -> tuple:  # pragma: no cover - overridden
        raise NotImplementedError

    def needs_input_grad(self, i: int) -> bool:
        return self.next_functions[i][0] is not None

    def _release_saved(self) -> None:
        self._released = True
        for field in self._saved_fields:
            saved = getattr(self, field, None)
            if type(saved) is SavedTensor:
                saved.release()

    # -- hooks -------------------------------------------------------------
    def _get_hooks(self) -> NodeHooks:
        if self._hooks is None:
            self._hooks = NodeHooks()
        return self._hooks

    def register_hook(self, fn: Callable) -> RemovableHandle:
        """``fn(grad_inputs, grad_outputs)`` runs after this node; may return new grad_inputs."""
        return _add_hook(self._get_hooks().post_hooks, fn)

    def register_prehook(self, fn: Callable) -> RemovableHandle:
        """``fn(grad_outputs)`` runs before this node; may return new grad_outputs."""
        return _add_hook(self._get_hooks().pre_hooks, fn)

    @property
    def metadata(self) -> dict:
        return {}


class AccumulateGrad(Node):
    """The sink of a leaf that requires grad: adds incoming gradients into ``leaf.grad``."""

    __slots__ = ("variable",)

    def __init__(self, variable: Any) -> None:
        data = variable._data
        self._init_node((), ((data.shape, data.dtype),))
        self.variable = variable

    def name(self) -> str:
        return "torch::autograd::AccumulateGrad"

    def backward(self, grad: Any) -> tuple:
        _tensor_module.accumulate_into_grad(self.variable, grad)
        return ()


class SavedTensor:
    """A value saved for backward, with the version check of Note [Saved tensors]."""

    __slots__ = ("_tensor", "_data", "_vc", "_version", "_is_output", "_requires_grad",
                 "_packed", "_unpack_hook", "_released")

    def __init__(self, tensor: Any, is_output: bool = False) -> None:
        self._released = False
        self._unpack_hook = None
        self._is_output = is_output
        self._vc, self._version = _tensor_module.save_check(tensor)
        if is_output:
            self._tensor = None
            self._data = tensor._data
            self._requires_grad = tensor.requires_grad
        else:
            self._tensor = tensor
            self._data = None
        if _saved_tensor_hooks_stack and self._vc is not None:
            self._pack(tensor)

    def _pack(self, tensor: Any) -> None:
        from .grad_mode import no_grad

        pack, unpack = _saved_tensor_hooks_stack[-1]
        with no_grad():
            self._packed = pack(tensor)
        self._unpack_hook = unpack
        self._tensor = None
        self._data = None

    def release(self) -> None:
        self._released = True
        self._tensor = None
        self._data = None
        self._packed = None

    def unpack(self, node: Node) -> Any:
        if self._released:
            raise RuntimeError(SECOND_BACKWARD_MSG)
        if self._unpack_hook is not None:
            return self._unpack_hook(self._packed)
        if self._is_output:
            return _tensor_module.rebuild_output(self, node)
        _tensor_module.check_saved_version(self, self._tensor, node)
        return self._tensor


# Stack of (pack, unpack) pairs installed by autograd.graph.saved_tensors_hooks.
_saved_tensor_hooks_stack: list = []
