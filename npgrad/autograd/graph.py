"""Graph nodes, saved tensors and hook handles: what a recorded op leaves behind.

Note [What a node holds]
A node is created by an op only when recording (see ``npgrad._mode``), or
inside a forward-AD level for an op with tangent inputs, whose tangent its
``jvp`` computes (see ``npgrad._forward``).  It holds
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

import functools
import itertools
import os
import weakref
from typing import Any, Callable

from . import anomaly_mode
# npgrad._tensor imports this module while it is itself being imported; the
# package attribute below resolves at call time, never at import time.
from .. import _tensor as _tensor_module  # noqa: E402

_next_sequence_nr = itertools.count().__next__
_ACCUMULATE_GRAD_SEQ = 2 ** 63 - 1

PACK_HOOK_INPLACE_MSG = (
    "A saved tensor pack hook is modifying its input in place. Tensors provided as input to "
    "pack hook cannot be modified by in-place operations as this can lead to unexpected "
    "side-effects. Please open an issue if you need to perform in-place operations on the "
    "input to a pack hook."
)
_OUT_META: dict = {}  # interned output metadata, see Node._init_node

RELEASED = object()  # what a bare saved number becomes once the graph is freed

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

    __slots__ = ("pre_hooks", "post_hooks", "tensor_pre_hooks", "retains_grad", "metadata")

    def __init__(self) -> None:
        self.metadata: dict | None = None  # Node.metadata, made on first access
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
        # One shared tuple per distinct (shape, dtype): a deep graph then keeps no
        # per-node metadata objects for the cyclic GC to scan over and over.
        meta = _OUT_META.get(out_meta)
        if meta is None:
            if len(_OUT_META) > 4096:  # many distinct shapes: start over, stay bounded
                _OUT_META.clear()
            meta = _OUT_META[out_meta] = out_meta
        self._out_meta = meta
        self._seq = _next_sequence_nr()
        self._hooks = None
        self._released = False
        self._anomaly_trace = _forward_trace() if anomaly_mode._anomaly_enabled else None

    def backward(self, *grads: Any) -> tuple:  # pragma: no cover - overridden
        raise NotImplementedError

    def jvp(self, tangents: list) -> list:
        """Forward rule: output tangents from one tangent (or None) per input edge.

        Derived from ``backward`` (Note [Forward rules from backward rules] in
        ``forward_rules.py``); pointwise ops use the cheaper ``elementwise_jvp``.
        """
        from .forward_rules import transposed_backward_jvp

        return transposed_backward_jvp(self, tangents)

    def needs_input_grad(self, i: int) -> bool:
        return self.next_functions[i][0] is not None

    def _release_saved(self) -> None:
        self._released = True
        for field in self._saved_fields:
            saved = getattr(self, field, None)
            if isinstance(saved, SavedTensor):
                saved.release()
            elif isinstance(saved, (int, float)):  # a number saved bare (see save_value)
                setattr(self, field, RELEASED)

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
        """A dict of the user's own, kept with the node (torch's ``Node.metadata``)."""
        hooks = self._get_hooks()
        if hooks.metadata is None:
            hooks.metadata = {}
        return hooks.metadata


class AccumulateGrad(Node):
    """The sink of a leaf that requires grad: adds incoming gradients into ``leaf.grad``."""

    __slots__ = ("variable",)

    def __init__(self, variable: Any) -> None:
        data = variable._data
        self._init_node((), ((data.shape, data.dtype),))
        # As torch's: an AccumulateGrad runs as soon as it is ready, before any other
        # ready node (its sequence number is the largest there is).
        self._seq = _ACCUMULATE_GRAD_SEQ
        self.variable = variable

    def name(self) -> str:
        return "torch::autograd::AccumulateGrad"

    def backward(self, grad: Any) -> tuple:
        _tensor_module.accumulate_into_grad(self.variable, grad)
        return ()


class SavedTensor:
    """A value saved for backward, with the version check of Note [Saved tensors]."""

    __slots__ = ("_tensor", "_data", "_vc", "_version", "_is_output", "_requires_grad",
                 "_packed", "_unpack_hook", "_released", "_fw_extra", "_output_nr")

    def __init__(self, tensor: Any, is_output: bool = False) -> None:
        # An input keeps its tensor, whose version is read again at unpack time (its
        # counter may be made later, by a view or a write).  An output keeps only its
        # array and counter: holding the tensor would make a cycle through the node.
        self._released = False
        self._unpack_hook = None
        self._is_output = is_output
        self._fw_extra = None
        self._output_nr = 0
        if is_output:
            self._vc, self._version = _tensor_module.save_check(tensor)
            self._tensor = None
            self._data = tensor._data
            self._requires_grad = tensor._requires_grad
            self._output_nr = tensor._output_nr  # which output of the node it comes back as
            extra = tensor._extra
            if extra is not None and (extra.tangent is not None or extra.fw_pending is not None):
                # The rebuilt output carries the tangent too (forward-over-reverse reads it);
                # its extra, not the tensor, is kept, so still no cycle through the node.
                self._fw_extra = extra
        else:
            self._vc = None
            self._version = _tensor_module.input_version_for_save(tensor)
            self._tensor = tensor
            self._data = None
        if _saved_tensor_hooks_stack and (is_output or self._version >= 0):
            self._pack(tensor)

    def _pack(self, tensor: Any) -> None:
        from .grad_mode import no_grad

        pack, unpack = _saved_tensor_hooks_stack[-1]
        version = tensor._version
        with no_grad():
            self._packed = pack(tensor)
        if tensor._version != version:
            raise RuntimeError(PACK_HOOK_INPLACE_MSG)
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
            result = self._unpack_hook(self._packed)
            if not isinstance(result, _tensor_module.Tensor):
                raise TypeError("Output of saved tensor unpack_hook expected to be a Tensor but "
                                f"got result of type {type(result).__name__}")
            return result
        if self._is_output:
            return _tensor_module.rebuild_output(self, node)
        _tensor_module.check_saved_version(self, self._tensor, node)
        return self._tensor


# Stack of (pack, unpack) pairs installed by autograd.graph.saved_tensors_hooks.
_saved_tensor_hooks_stack: list = []


# -- saved tensor hooks and multi-grad hooks ---------------------------------------------
#
# Note [Saved tensor hooks]
# While a ``saved_tensors_hooks(pack, unpack)`` block is active, every tensor a
# *recorded* op saves for backward is handed to ``pack`` (once, at forward time,
# with grad off) and only what ``pack`` returns is kept; ``unpack`` turns it
# back into the tensor backward uses.  Ops that are not recorded save nothing,
# so they call neither hook.  ``SavedTensor._pack`` applies the innermost pair.
# ``disable_saved_tensors_hooks(msg)`` makes installing hooks an error (``msg``).

_hooks_disabled_message: list = []  # innermost message last; empty when hooks are allowed


class saved_tensors_hooks:
    """Context manager: pack and unpack every tensor saved for backward inside it.

    >>> import npgrad
    >>> from npgrad.autograd.graph import saved_tensors_hooks
    >>> packed = []
    >>> x = npgrad.tensor([1., 2.], requires_grad=True)
    >>> with saved_tensors_hooks(lambda t: packed.append(t) or t, lambda t: t):
    ...     y = x * x
    >>> len(packed)
    2
    """

    def __init__(self, pack_hook: Callable[[Any], Any],
                 unpack_hook: Callable[[Any], Any]) -> None:
        self.pack_hook = pack_hook
        self.unpack_hook = unpack_hook

    def __enter__(self) -> None:
        if _hooks_disabled_message and _hooks_disabled_message[-1] is not None:
            raise RuntimeError(_hooks_disabled_message[-1])
        _saved_tensor_hooks_stack.append((self.pack_hook, self.unpack_hook))

    def __exit__(self, *args: object) -> None:
        _saved_tensor_hooks_stack.pop()


class _DisableSavedTensorsHooks:
    def __init__(self, error_message: str) -> None:
        self.error_message = error_message

    def __enter__(self) -> None:
        _hooks_disabled_message.append(self.error_message)
        if _saved_tensor_hooks_stack:
            # torch refuses to disable hooks while some are installed.
            _hooks_disabled_message.pop()
            raise RuntimeError(self.error_message)

    def __exit__(self, *args: object) -> None:
        _hooks_disabled_message.pop()


def disable_saved_tensors_hooks(error_message: str) -> _DisableSavedTensorsHooks:
    """Context manager under which installing saved tensor hooks raises ``error_message``.

    >>> import npgrad
    >>> from npgrad.autograd.graph import disable_saved_tensors_hooks, saved_tensors_hooks
    >>> with disable_saved_tensors_hooks("not here"):
    ...     try:
    ...         with saved_tensors_hooks(lambda t: t, lambda t: t):
    ...             pass
    ...     except RuntimeError as e:
    ...         print(e)
    not here
    """
    return _DisableSavedTensorsHooks(error_message)


class save_on_cpu(saved_tensors_hooks):
    """Saved tensors are kept on the CPU (npgrad is CPU only: they stay as they are).

    >>> import npgrad
    >>> from npgrad.autograd.graph import save_on_cpu
    >>> x = npgrad.tensor([1., 2.], requires_grad=True)
    >>> with save_on_cpu():
    ...     y = (x * x).sum()
    >>> y.backward(); x.grad
    tensor([2., 4.])
    """

    def __init__(self, pin_memory: bool = False, device_type: str = "cuda") -> None:
        def pack_to_cpu(tensor: Any) -> tuple:
            return (tensor.device, tensor.cpu())

        def unpack_from_cpu(packed: tuple) -> Any:
            device, tensor = packed
            return tensor.to(device)

        super().__init__(pack_to_cpu, unpack_from_cpu)


def _grad_fn_or_accumulator(t: Any) -> Any:
    return _tensor_module.edge_of(t)[0]


class _MultiHandle:
    """Removes every per-tensor hook of one ``register_multi_grad_hook`` call."""

    __slots__ = ("handles",)

    def __init__(self, handles: tuple) -> None:
        self.handles = handles

    def remove(self) -> None:
        for h in self.handles:
            h.remove()

    def __enter__(self) -> _MultiHandle:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.remove()


def register_multi_grad_hook(tensors: Any, fn: Callable, *, mode: str = "all") -> Any:
    """Call ``fn`` once per backward run, after the gradients of ``tensors`` are computed.

    ``mode="all"``: ``fn(grads)`` with one entry per tensor (None for tensors the
    run does not reach), once every reached tensor has its gradient.
    ``mode="any"``: ``fn(grad)`` with the first gradient computed among them.

    >>> import npgrad
    >>> from npgrad.autograd.graph import register_multi_grad_hook
    >>> a = npgrad.tensor([1.], requires_grad=True)
    >>> b = npgrad.tensor([2.], requires_grad=True)
    >>> h = register_multi_grad_hook((a, b), lambda g: print([x is not None for x in g]))
    >>> (a * 3).sum().backward()
    [True, False]
    """
    from . import engine

    supported = ("all", "any")
    if mode not in supported:
        raise ValueError(f"Expects mode to be one of {supported} but got {mode}")
    tensors = tuple(tensors)
    if mode == "all":
        nodes = [_grad_fn_or_accumulator(t) for t in tensors]
        # per backward run (graph task id): [calls so far, calls expected, grads]
        pending: dict = {}

        def make_hook(index: int) -> Callable:
            def hook(grad: Any) -> None:
                task = engine.current_graph_task_id()
                if task == -1:
                    raise AssertionError("expected this hook to be called inside a backward call")
                state = pending.get(task)
                if state is None:
                    expected = sum(engine.will_engine_execute_node(n) for n in nodes)
                    state = pending[task] = [0, expected, [None] * len(tensors)]
                state[2][index] = grad
                state[0] += 1
                if state[0] == state[1]:
                    del pending[task]
                    fn(state[2])
            return hook

        handles = tuple(t.register_hook(make_hook(i)) for i, t in enumerate(tensors))
    else:
        fired: set = set()

        @functools.wraps(fn)
        def first_only(grad: Any) -> None:
            task = engine.current_graph_task_id()
            if task == -1:
                raise AssertionError("expected this hook to be called inside a backward call")
            if task in fired:
                return
            fired.add(task)
            fn(grad)

        handles = tuple(t.register_hook(first_only) for t in tensors)
    return _MultiHandle(handles)
