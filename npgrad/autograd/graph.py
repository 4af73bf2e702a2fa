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

import contextlib
import functools
import itertools
import os
import threading
import weakref
from typing import TYPE_CHECKING, Any, Callable, Iterator, NamedTuple

from . import anomaly_mode
import numpy as np

from .. import _dtype
from .._forward import FW, install as install_tangent
from .._mode import _tls, GRAD, RECORDING
if TYPE_CHECKING:
    from .._tensor import Tensor
from .._tensor_base import (INFERENCE_COUNTER, TensorBase, TensorExtra, VersionCounter,
                            bump_version, make_tensor, wrap, wrap_result)

_new = object.__new__
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


# Note [Thread safety of accumulation]
# torch promises that backward runs in several threads into shared leaves add up
# exactly.  Every write of a ``.grad`` by the engine (AccumulateGrad, retain_grad)
# holds ``GRAD_LOCK`` for the read-modify-write only: one global lock, taken once
# per leaf per backward, costs tens of nanoseconds uncontended, and a global one
# (not one per AccumulateGrad) also covers two threads that each made their own
# AccumulateGrad for one leaf.  Hooks run outside it: a hook may itself call
# backward, possibly on another thread (Note [Reentrant backward] in engine.py).
GRAD_LOCK = threading.Lock()


def fit_to_meta(grad: Any, meta: tuple) -> Any:
    """Reduce a broadcast gradient to its tensor's shape and cast it to its dtype."""
    shape, dtype = meta
    if grad._data.shape != shape:
        from .._ops.broadcast import sum_to_size  # the op layer sits above the graph layer

        grad = sum_to_size(grad, shape)
    if grad._data.dtype != dtype:
        if grad._data.dtype.kind == "c" and dtype.kind != "c":
            # a real input takes the real part (Note [Gradients of complex inputs] in
            # npgrad._ops.complex): torch's handle_r_to_c
            from .._ops.complex import real

            grad = real(grad)
            if grad._data.dtype == dtype:
                return grad
        from .._ops.shape import to
        from .. import _dtype

        grad = to(grad, _dtype.from_np(dtype))
    return grad


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


# Note [Saved values as node attributes]
# torch exposes what a node saved as ``grad_fn._saved_<name>`` (the unpacked value)
# and, for tensors, ``grad_fn._raw_saved_<name>`` (a handle taking pack/unpack
# hooks).  Rather than one hand-written property per op, every node class gets
# them when it is defined: one per slot and per name in ``_saved_fields``,
# named as torch names the argument (``self_`` is ``self``; the few ops whose
# slot names differ from torch's are in ``_TORCH_SAVED_NAMES``).  Properties
# are class attributes, so nothing is added to recording or to backward.
_TORCH_SAVED_NAMES: dict[str, dict[str, str]] = {}
_NODE_BASE_SLOTS = frozenset(("_n_edges", "_fn0", "_nr0", "_fn1", "_nr1", "_edges", "_out_meta",
                              "_seq", "_hooks", "_anomaly_trace", "_released", "_view_version",
                              "__weakref__"))


def _add_saved_attributes(cls: type) -> None:
    fields: dict = {}  # an ordered set: slots and saved fields in definition order
    tensor_fields: set = set()
    for klass in reversed(cls.__mro__):
        if klass is Node or klass is object:  # their slots are none of them
            continue
        namespace = klass.__dict__
        slots = namespace.get("__slots__", ())
        for f in ((slots,) if isinstance(slots, str) else slots):
            if f not in _NODE_BASE_SLOTS and not f.startswith("__"):
                fields[f] = None
        saved = namespace.get("_saved_fields", ())
        tensor_fields.update(saved)
        fields.update(dict.fromkeys(saved))
    names = {name: f for f in fields if (name := f.rstrip("_"))}
    names.update({n[:-5] + "sym_sizes": f for n, f in names.items()
                  if n.endswith("_sizes") and not n.endswith("_sym_sizes")})
    names.update(_TORCH_SAVED_NAMES.get(cls.__name__, {}))
    # Pointwise nodes declare which of ``self_`` / ``result`` they save; the other one
    # is not an attribute of theirs (as in torch).
    absent = [name for flag, name in (("saves_self", "self"), ("saves_result", "result"))
              if getattr(cls, flag, None) is False]
    for name in absent:
        if names.get(name, name + "_") not in ("self_", "result"):
            continue  # a kept parameter of that name (PowBackward2's ``self``, the base)
        names.pop(name, None)
        for prefix in ("_saved_", "_raw_saved_"):
            if hasattr(cls, prefix + name):
                setattr(cls, prefix + name, _absent_property(prefix + name))
    for torch_name, field in names.items():
        is_tensor = field in tensor_fields
        if f"_saved_{torch_name}" not in cls.__dict__:
            setattr(cls, f"_saved_{torch_name}", _saved_property(field, is_tensor))
        if is_tensor and f"_raw_saved_{torch_name}" not in cls.__dict__:
            setattr(cls, f"_raw_saved_{torch_name}",
                    property(lambda node, field=field: RawSavedTensor(node, field)))


def _absent_property(name: str) -> property:
    def get(node: Node) -> Any:
        raise AttributeError(f"'{type(node).__name__}' object has no attribute '{name}'")

    return property(get)


def _saved_property(field: str, is_tensor: bool) -> property:
    def get(node: Node) -> Any:
        try:
            value = getattr(node, field)
        except AttributeError:
            if is_tensor:  # not saved (its input needs no gradient): torch's None
                return None
            raise AttributeError(f"'{type(node).__name__}' object has no attribute "
                                 f"'_saved_{field.rstrip('_')}'") from None
        if isinstance(value, SavedTensor):
            return value.unpack(node)
        if value is RELEASED:
            raise RuntimeError(SECOND_BACKWARD_MSG)
        if is_tensor and isinstance(value, (bool, int, float)):
            return _wrapped_number(value)
        return value

    return property(get)


# Note [Edges in the node]
# A node's edges are what a deep graph is made of, and the cyclic GC rescans every live
# container object at each collection: edges held as torch's ``next_functions`` tuple
# (one tuple per edge inside one tuple per node) made three tracked objects per node,
# and the GC took ~40 % of a long chain's forward.  So the first two edges live in the
# node's own slots (``_fn0``/``_nr0``, ``_fn1``/``_nr1``; unused ones are ``None``/0)
# and ``_n_edges`` says how many there are; a node of more inputs keeps all its edges
# in ``_edges``, torch's tuple.  ``next_functions`` is built from them when read (by
# hooks, user code, the few backward rules that test an input); the engine and the
# recording fast paths read the slots.  A node is then one tracked object.

class Node:
    """A backward function of the graph (torch's ``torch.autograd.graph.Node``)."""

    __slots__ = ("_n_edges", "_fn0", "_nr0", "_fn1", "_nr1", "_edges", "_out_meta", "_seq",
                 "_hooks", "_anomaly_trace", "_released", "_view_version", "__weakref__")

    # Names of slots holding SavedTensor objects; released after backward.
    _saved_fields: tuple[str, ...] = ()
    # Whether the engine calls ``backward`` when every incoming gradient is None
    # (custom Functions, which torch calls with zeros); built-in nodes are not
    # called then, their gradients being None too (Note [Nodes reached without a
    # gradient] in engine.py).
    _called_without_grad: bool = False

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        _add_saved_attributes(cls)

    def name(self) -> str:
        return type(self).__name__

    def __dir__(self) -> list:
        # torch's nodes list their ``_saved_<name>`` getters, not the fields behind them
        return [name for name in super().__dir__() if name != "_saved_fields"]

    def __call__(self, *grads: Any) -> Any:
        """Run this node's backward on ``grads`` (one per forward output), as torch's nodes do.

        Returns one gradient per input edge (a tuple, or the gradient itself for a
        node of one input).  As torch's, no hooks run and nothing is fitted to the
        inputs' shapes: summing a broadcast gradient back is the engine's job.

        >>> import npgrad
        >>> x = npgrad.tensor([1., 2.], requires_grad=True)
        >>> (x * 3).grad_fn(npgrad.ones(2))
        (tensor([3., 3.]), None)
        """
        outputs = self.backward(*grads)
        outputs = tuple(None if child is None else g
                        for (child, _), g in zip(self.next_functions, outputs))
        return outputs[0] if len(outputs) == 1 else outputs

    def __repr__(self) -> str:
        return f"<{type(self).__name__} object at {id(self):#x}>"

    __str__ = __repr__

    @property
    def next_functions(self) -> tuple:
        """One ``(node or None, output_nr)`` edge per input, in torch's order.

        Built from the node's slots when read (Note [Edges in the node]).
        """
        n = self._n_edges
        if n == 2:
            return ((self._fn0, self._nr0), (self._fn1, self._nr1))
        if n == 1:
            return ((self._fn0, self._nr0),)
        return () if n == 0 else self._edges

    @next_functions.setter
    def next_functions(self, edges: tuple) -> None:
        self._set_edges(edges)

    def _set_edges(self, edges: tuple) -> None:
        n = self._n_edges = len(edges)
        if n == 1:
            self._fn0, self._nr0 = edges[0]
            self._fn1 = None
            self._nr1 = 0
            self._edges = None
        elif n == 2:
            (self._fn0, self._nr0), (self._fn1, self._nr1) = edges
            self._edges = None
        else:
            self._fn0, self._nr0 = edges[0] if n else (None, 0)
            self._fn1, self._nr1 = edges[1] if n else (None, 0)
            self._edges = tuple(edges) if n else None

    def _init_node(self, next_functions: tuple, out_meta: tuple) -> None:
        """Set a freshly allocated node's edges (torch's ``next_functions``) and output metadata."""
        self._set_edges(next_functions)
        self._init_meta(out_meta)

    def _init_binary(self, a: Any, b: Any, out: Any) -> None:
        """``_init_node`` for a one-output op of two operands (a non-tensor gets no edge).

        The recording fast paths' version: the edges go into the slots with no tuple
        made; an operand without grad has no edge, and one with history outside a
        view (nearly every other operand) is read inline.
        """
        self._n_edges = 2
        self._edges = None
        if isinstance(a, TensorBase) and a._requires_grad:
            fn = a._grad_fn
            if fn is None or a._base is not None:
                self._fn0, self._nr0 = edge_of(a)
            else:
                self._fn0 = fn
                self._nr0 = a._output_nr
        else:
            self._fn0 = None
            self._nr0 = 0
        if isinstance(b, TensorBase) and b._requires_grad:
            fn = b._grad_fn
            if fn is None or b._base is not None:
                self._fn1, self._nr1 = edge_of(b)
            else:
                self._fn1 = fn
                self._nr1 = b._output_nr
        else:
            self._fn1 = None
            self._nr1 = 0
        self._init_meta(((out.shape, out.dtype),))

    def _init_unary(self, x: Any, out: Any) -> None:
        """``_init_node`` for a one-output op of one tensor that requires grad."""
        self._n_edges = 1
        self._edges = None
        fn = x._grad_fn
        if fn is None or x._base is not None:
            self._fn0, self._nr0 = edge_of(x)
        else:
            self._fn0 = fn
            self._nr0 = x._output_nr
        self._fn1 = None
        self._nr1 = 0
        self._init_meta(((out.shape, out.dtype),))

    def _init_meta(self, out_meta: tuple) -> None:
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

    def needs_input_grad(self, i: int) -> bool:
        if i == 0 and self._n_edges:
            return self._fn0 is not None
        if i == 1 and self._n_edges == 2:
            return self._fn1 is not None
        return self.next_functions[i][0] is not None

    def _release_saved(self) -> None:
        self._released = True
        for field in self._saved_fields:
            saved = getattr(self, field, None)
            if saved is None or saved is RELEASED:
                continue
            kind = type(saved)
            if kind is SavedTensor:
                saved._released = True          # SavedTensor.release, inline
                saved._tensor = saved._data = saved._packed = None
            elif kind is float or kind is int or isinstance(saved, (int, float, complex)):
                setattr(self, field, RELEASED)  # a number saved bare (see save_value)
            elif isinstance(saved, SavedTensor):
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
        """A dict of the user's own, kept with the node (torch's ``Node.metadata``)."""
        hooks = self._get_hooks()
        if hooks.metadata is None:
            hooks.metadata = {}
        return hooks.metadata


class AccumulateGrad(Node):
    """The sink of a leaf that requires grad: adds incoming gradients into ``leaf.grad``."""

    __slots__ = ("variable",)

    # Note [A cheap AccumulateGrad]
    # A leaf's AccumulateGrad lives only as long as some graph uses it (the leaf holds
    # it weakly, Note [What a node holds]), so a loop that builds and drops a graph
    # over the same leaves makes a fresh one per iteration, as torch's engine does:
    # it must cost little.  What is the same for every AccumulateGrad is a class
    # attribute shadowing Node's slot (no edges; the largest sequence number, so that
    # it runs as soon as it is ready, before any other ready node, as torch's); its
    # one output's metadata is read from the leaf itself when the engine asks.
    # Building one is then four slot writes (``new_accumulator``).
    next_functions = ()  # type: ignore[assignment]
    _n_edges = 0
    _fn0 = _fn1 = None
    _nr0 = _nr1 = 0
    _edges = None
    _seq = _ACCUMULATE_GRAD_SEQ

    def __init__(self, variable: Any) -> None:
        self.variable = variable
        self._hooks = None
        self._released = False
        self._anomaly_trace = _forward_trace() if anomaly_mode._anomaly_enabled else None

    @property
    def _out_meta(self) -> tuple:  # type: ignore[override]
        data = self.variable._data
        return ((data.shape, data.dtype),)

    def name(self) -> str:
        return "torch::autograd::AccumulateGrad"

    def backward(self, grad: Any) -> tuple:
        variable = self.variable
        if grad is not None:
            with GRAD_LOCK:  # Note [Thread safety of accumulation]
                accumulate_into_grad(variable, grad)
        extra = variable._extra
        if extra is not None and extra.post_accumulate_hooks:
            # torch runs them even when no gradient arrived (.grad then unchanged).
            for hook in list(extra.post_accumulate_hooks.values()):
                result = hook(variable)
                if isinstance(result, TensorBase):  # torch's two refusals, by the value's type
                    raise RuntimeError("Tensor post accumulate grad hooks should return None.")
                if result is not None:
                    raise TypeError(f"expected Variable, but hook returned "
                                    f"'{type(result).__name__}'")
        return ()


def new_accumulator(variable: Any) -> AccumulateGrad:
    """``AccumulateGrad(variable)`` without calling ``__init__`` (Note [A cheap AccumulateGrad])."""
    acc = _new(AccumulateGrad)
    acc.variable = variable
    acc._hooks = None
    acc._released = False
    acc._anomaly_trace = _forward_trace() if anomaly_mode._anomaly_enabled else None
    return acc


class SavedTensor:
    """A value saved for backward, with the version check of Note [Saved tensors]."""

    __slots__ = ("_tensor", "_data", "_vc", "_version", "_is_output", "_requires_grad",
                 "_packed", "_unpack_hook", "_released", "_fw_extra", "_output_nr", "_edge")

    # Note [A cheap SavedTensor]
    # Saving an input is the commonest thing a recorded op does, so it sets only the
    # slots every reader of an input's SavedTensor reads (``_tensor``, ``_version``,
    # ``_is_output``, ``_unpack_hook``, ``_released``) and reads the version inline;
    # ``_data``, ``_vc``, ``_output_nr`` and ``_fw_extra`` belong to saved outputs and
    # are read only when ``_is_output`` is true (``_requires_grad``, ``_packed`` and
    # ``_edge`` only once pack hooks ran).
    def __init__(self, tensor: Any, is_output: bool = False) -> None:
        # An input keeps its tensor, whose version is read again at unpack time (its
        # counter may be made later, by a view or a write).  An output keeps only its
        # array and counter: holding the tensor would make a cycle through the node.
        self._released = False
        self._unpack_hook = None
        if is_output:
            self._is_output = True
            self._fw_extra = None
            self._vc, self._version = save_check(tensor)
            self._tensor = None
            self._data = tensor._data
            self._requires_grad = tensor._requires_grad
            self._output_nr = tensor._output_nr  # which output of the node it comes back as
            extra = tensor._extra
            if extra is not None and extra.tangent is not None:
                # The rebuilt output carries the tangent too (forward-over-reverse reads it);
                # its extra, not the tensor, is kept, so still no cycle through the node.
                self._fw_extra = extra
        else:
            self._is_output = False
            if isinstance(tensor, TensorBase):
                vc = tensor._vc
                version = 0 if vc is None else vc.version
                if version < 0:  # the inference counter
                    raise RuntimeError(INFERENCE_SAVE_MSG)
            else:
                version = input_version_for_save(tensor)
            self._version = version
            self._tensor = tensor
        if _hooks_installed[0] and _hooks_tls.stack and (is_output or self._version >= 0):
            self._pack(tensor, *_hooks_tls.stack[-1])

    def _pack(self, tensor: Any, pack: Callable, unpack: Callable) -> None:
        from .grad_mode import no_grad  # grad_mode imports the tensor layer

        version = tensor._version
        with no_grad():
            self._packed = pack(tensor)
        if tensor._version != version:
            raise RuntimeError(PACK_HOOK_INPLACE_MSG)
        self._unpack_hook = unpack
        if not self._is_output:  # an output's flag and edge are known already
            self._requires_grad = tensor._requires_grad
            if tensor._requires_grad:  # Note [Unpacked tensors keep history]
                self._edge = edge_of(tensor)
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
            if not isinstance(result, TensorBase):
                raise TypeError("Output of saved tensor unpack_hook expected to be a Tensor but "
                                f"got result of type {type(result).__name__}")
            return self._with_history(result, node) if self._requires_grad else result
        if self._is_output:
            return rebuild_output(self, node)
        check_saved_version(self, self._tensor, node)
        return self._tensor


    # Note [Unpacked tensors keep history]
    # What an unpack hook returns is only data: as torch's, the tensor backward sees
    # is a new one holding it, with the saved tensor's place in the graph (its
    # grad_fn and output_nr, or for a leaf its AccumulateGrad), so gradients of
    # gradients flow through values that went through saved-tensor hooks.
    def _with_history(self, data: Any, node: Node) -> Any:
        fn, nr = (node, self._output_nr) if self._is_output else self._edge
        if type(fn) is AccumulateGrad:
            t = make_tensor(data._data, None, True, data._vc)
            t._extra = TensorExtra()
            t._extra.accumulator = weakref.ref(fn)
            return t
        t = wrap_result(data._data, fn, nr)
        t._vc = data._vc
        return t


class RawSavedTensor:
    """A node's saved value as torch's ``grad_fn._raw_saved_<name>``: hooks can be set on it."""

    __slots__ = ("_node", "_field")

    def __init__(self, node: Node, field: str) -> None:
        self._node = node
        self._field = field

    def _saved(self) -> SavedTensor | None:
        value = getattr(self._node, self._field, None)
        if value is None or isinstance(value, SavedTensor):
            return value
        if value is RELEASED:
            raise RuntimeError(SECOND_BACKWARD_MSG)
        # A number kept bare (Note [Saved tensors]) becomes the tensor torch saves.
        saved = SavedTensor(_wrapped_number(value))
        setattr(self._node, self._field, saved)
        return saved

    def register_hooks(self, pack_hook: Callable, unpack_hook: Callable) -> None:
        """Pack this saved value now with ``pack_hook``; backward reads ``unpack_hook(packed)``."""
        if not callable(pack_hook) or not callable(unpack_hook):
            raise TypeError("register_hooks(): incompatible function arguments. The following "
                            "argument types are supported:\n    1. (self: torch._C._autograd."
                            "SavedTensor, arg0: collections.abc.Callable, arg1: collections.abc."
                            "Callable) -> None")
        saved = self._saved()
        if saved is not None and saved._unpack_hook is not None:
            raise RuntimeError("Calling register_hooks on a saved tensor whose hooks have "
                               "already been set. Hint: only one pair of hooks is allowed at a "
                               "time.")
        if saved is None:
            raise RuntimeError("Calling register_hooks on a saved tensor with value None is "
                               "forbidden")
        if saved._released:
            raise RuntimeError(SAVED_FREED_HOOKS_MSG)
        saved._pack(saved.unpack(self._node), pack_hook, unpack_hook)

    def unpack(self) -> Any:
        saved = self._saved()
        return None if saved is None else saved.unpack(self._node)


SAVED_FREED_HOOKS_MSG = (
    "Calling register_hooks on a saved tensor after it has been freed. Saved intermediate "
    "values of the graph are freed when you call .backward() or autograd.grad(). Specify "
    "retain_graph=True if you need to backward through the graph a second time or if you need "
    "to access saved values after calling backward."
)


def _wrapped_number(value: Any) -> Any:
    """A Python number as torch wraps it into a 0-dim tensor (bool, int64 or float64)."""
    dtype = np.bool_ if isinstance(value, bool) else np.int64 if isinstance(value, int) \
        else np.float64
    return make_tensor(np.asarray(value, dtype=dtype), None,
                                False, None)


# The saved-tensor hooks of this thread (torch keeps them thread-local): the
# (pack, unpack) pairs installed by saved_tensors_hooks, innermost last, and the
# messages of disable_saved_tensors_hooks.  Tuples, replaced on every change, so
# the class defaults are never shared mutable state.
class _SavedHooksState(threading.local):
    stack: tuple = ()
    disabled: tuple = ()


_hooks_tls = _SavedHooksState()
# How many saved_tensors_hooks blocks are open in all threads: a tensor saved while
# none is open (nearly always) pays one list read, not a thread-local lookup.
_hooks_installed = [0]
_hooks_count_lock = threading.Lock()


def saved_hooks_state() -> tuple:
    """This thread's saved-tensor hooks state, for a worker thread to adopt (engine.py)."""
    return _hooks_tls.stack, _hooks_tls.disabled


def set_saved_hooks_state(state: tuple) -> None:
    stack, disabled = state
    if stack:
        with _hooks_count_lock:
            _hooks_installed[0] += len(stack)
    _hooks_tls.stack, _hooks_tls.disabled = stack, disabled


def clear_saved_hooks_state() -> None:
    """Undo ``set_saved_hooks_state`` when a worker thread is done."""
    n = len(_hooks_tls.stack)
    if n:
        with _hooks_count_lock:
            _hooks_installed[0] -= n
    _hooks_tls.stack, _hooks_tls.disabled = (), ()


# -- saved tensor hooks and multi-grad hooks ---------------------------------------------
#
# Note [Saved tensor hooks]
# While a ``saved_tensors_hooks(pack, unpack)`` block is active, every tensor a
# *recorded* op saves for backward is handed to ``pack`` (once, at forward time,
# with grad off) and only what ``pack`` returns is kept; ``unpack`` turns it
# back into the tensor backward uses.  Ops that are not recorded save nothing,
# so they call neither hook.  ``SavedTensor._pack`` applies the innermost pair.
# ``disable_saved_tensors_hooks(msg)`` makes installing hooks an error (``msg``).


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
        disabled = _hooks_tls.disabled
        if disabled and disabled[-1] is not None:
            raise RuntimeError(disabled[-1])
        _hooks_tls.stack = _hooks_tls.stack + ((self.pack_hook, self.unpack_hook),)
        with _hooks_count_lock:
            _hooks_installed[0] += 1

    def __exit__(self, *args: object) -> None:
        _hooks_tls.stack = _hooks_tls.stack[:-1]
        with _hooks_count_lock:
            _hooks_installed[0] -= 1


class _DisableSavedTensorsHooks:
    def __init__(self, error_message: str) -> None:
        self.error_message = error_message

    def __enter__(self) -> None:
        if _hooks_tls.stack:  # torch refuses to disable hooks while some are installed.
            raise RuntimeError(self.error_message)
        _hooks_tls.disabled = _hooks_tls.disabled + (self.error_message,)

    def __exit__(self, *args: object) -> None:
        _hooks_tls.disabled = _hooks_tls.disabled[:-1]


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


# Note [Mutation of saved tensors]
# Inside ``allow_mutation_on_saved_tensors()`` an in-place write to a tensor saved
# for backward is allowed, and backward sees the value it had when it was saved.
# torch clones a saved tensor lazily, just before the write, from a dispatch mode
# that sees every in-place op.  npgrad's in-place ops have no such interception
# point (their only trace is the version counter), so the pack hook copies each
# saved tensor eagerly, and unpack returns the original while its version is
# unchanged (keeping its history, for double backward) and the copy once it was
# written to.  Same values as torch; the memory of one copy per saved tensor,
# only inside the block.
_mutation_on_saved_allowed = [False]  # process-global, as torch's flag
_OUTSIDE_MUTATION_CONTEXT_MSG = (
    "Trying to backward outside of the 'allow_mutation_on_saved_tensors' context"
    "in which the graph was originally recorded."  # sic: torch's text lacks the space
)


class _AllowMutationOnSavedContext:
    """What one ``allow_mutation_on_saved_tensors`` block saved; emptied when it exits."""

    def __init__(self) -> None:
        self.saved: dict[int, tuple] = {}  # id(handle) -> (tensor, version, copy)

    def clear(self) -> None:
        self.saved.clear()


class _SavedHandle:
    __slots__ = ()


@contextlib.contextmanager
def allow_mutation_on_saved_tensors() -> Iterator[_AllowMutationOnSavedContext]:
    """Context manager under which tensors saved for backward may be modified in place.

    Backward (run inside the same block) sees the values they had when saved.

    >>> import npgrad
    >>> from npgrad.autograd.graph import allow_mutation_on_saved_tensors
    >>> with allow_mutation_on_saved_tensors():
    ...     a = npgrad.ones(2, requires_grad=True)
    ...     b = a.clone()
    ...     out = (b ** 2).sum()
    ...     _ = b.mul_(5)
    ...     out.backward()
    >>> a.grad
    tensor([2., 2.])
    """
    ctx = _AllowMutationOnSavedContext()

    def pack(tensor: Any) -> _SavedHandle:
        handle = _SavedHandle()
        ctx.saved[id(handle)] = (tensor, tensor._version, tensor.clone())
        return handle

    def unpack(handle: _SavedHandle) -> Any:
        entry = ctx.saved.get(id(handle))
        if not _mutation_on_saved_allowed[0] or entry is None:
            raise AssertionError(_OUTSIDE_MUTATION_CONTEXT_MSG)
        tensor, version, copy = entry
        return tensor if tensor._version == version else copy

    with saved_tensors_hooks(pack, unpack):
        try:
            if _mutation_on_saved_allowed[0]:
                raise RuntimeError("allow_mutation_on_saved_tensors contexts cannot be nested")
            _mutation_on_saved_allowed[0] = True
            yield ctx
        finally:
            ctx.clear()
            _mutation_on_saved_allowed[0] = False


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
    return edge_of(t)[0]


class GradientEdge(NamedTuple):
    """Where a tensor's gradient is computed: a node and which of its inputs.

    ``autograd.grad(loss, get_gradient_edge(x))`` equals ``autograd.grad(loss, x)``.
    """

    node: Node
    output_nr: int
    ownership_token: Node | None = None  # torch keeps Python nodes alive with it


def get_gradient_edge(tensor: Any) -> GradientEdge:
    """The gradient edge of ``tensor``: its grad_fn (or AccumulateGrad) and its output_nr.

    >>> import npgrad
    >>> from npgrad.autograd.graph import get_gradient_edge
    >>> x = npgrad.tensor([1., 2.], requires_grad=True)
    >>> y = x * 2
    >>> npgrad.autograd.grad(y.sum(), get_gradient_edge(y))
    (tensor([1., 1.]),)
    """
    if not tensor._requires_grad:
        raise RuntimeError("It is not possible to get the gradient edge for a Tensor that does "
                           "not require gradients")
    node, output_nr = edge_of(tensor)
    return GradientEdge(node, output_nr)


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


# -- saving, versions and accumulation: the graph layer's side of a tensor ----------
# (Note [Tensor base and Tensor] in npgrad._tensor_base)

def edge_of(t: Tensor) -> tuple:
    """The ``(node, output_nr)`` edge through which gradient reaches ``t``."""
    fn = t._grad_fn
    if t._base is not None:
        fn = t._refreshed_grad_fn()  # npgrad._ops.views keeps view history
    if fn is not None:
        return (fn, t._output_nr)
    if t._requires_grad:
        extra = t._extra  # the leaf's live accumulator, read inline (the common case)
        if extra is not None:
            ref = extra.accumulator
            if ref is not None:
                acc = ref()
                if acc is not None:
                    return (acc, 0)
        return (grad_accumulator(t), 0)
    return (None, 0)


def grad_accumulator(t: Tensor) -> AccumulateGrad:
    """The one AccumulateGrad of a leaf that requires grad (kept alive by the graph only)."""
    extra = t._extra
    if extra is None:
        extra = t._extra = TensorExtra()
    ref = extra.accumulator
    acc = ref() if ref is not None else None
    if acc is None:
        acc = new_accumulator(t)
        extra.accumulator = weakref.ref(acc)
    return acc


INFERENCE_SAVE_MSG = (
    "Inference tensors cannot be saved for backward. Please do not use Tensors created in "
    "inference mode in computation tracked by autograd. To work around this, you can make "
    "a clone to get a normal tensor and use it in autograd, or use `torch.no_grad()` "
    "instead of `torch.inference_mode()`."
)


def save_check(t: Any) -> tuple:
    """Version bookkeeping for a tensor being saved for backward."""
    if not isinstance(t, TensorBase):
        return None, 0
    vc = t._vc
    if vc is INFERENCE_COUNTER:
        raise RuntimeError(INFERENCE_SAVE_MSG)
    if vc is None:
        vc = t._vc = VersionCounter()
    return vc, vc.version


def input_version_for_save(t: Any) -> int:
    """The version of an input being saved (-1 for a non-tensor value, which has none)."""
    if not isinstance(t, TensorBase):
        return -1
    vc = t._vc
    if vc is None:
        return 0
    if vc is INFERENCE_COUNTER:
        raise RuntimeError(INFERENCE_SAVE_MSG)
    return vc.version


def _legacy_type_and_size(data: np.ndarray) -> str:
    dt = _dtype.from_np(data.dtype)
    return f"torch.{dt.legacy_type} [{', '.join(str(s) for s in data.shape)}]"


def check_saved_version(saved: Any, tensor: Any, node: Any) -> None:
    if saved._is_output:
        vc = saved._vc
    elif saved._version < 0:
        return  # a Python number: no version
    else:
        extra = tensor._extra
        if extra is not None and extra.detached_seq is not None:
            _check_not_detached_in_place(tensor, extra.detached_seq, node)
        vc = tensor._vc
    current = 0 if vc is None else vc.version
    if current == saved._version:
        return
    if saved._is_output:
        producer = node
        data = saved._data
    else:
        producer = tensor.grad_fn
        data = tensor._data
    where = ""
    if producer is not None:
        nr = 0 if saved._is_output else tensor._output_nr
        where = f", which is output {nr} of {_strip_backward_suffix(producer.name())},"
    if anomaly_mode.is_anomaly_enabled():
        hint = ("Hint: the backtrace further above shows the operation that failed to compute "
                "its gradient. The variable in question was changed in there or anywhere later. "
                "Good luck!")
    else:
        hint = ("Hint: enable anomaly detection to find the operation that failed to compute "
                "its gradient, with torch.autograd.set_detect_anomaly(True, check_nan=False).")
    raise RuntimeError(
        "one of the variables needed for gradient computation has been modified by an inplace "
        f"operation: [{_legacy_type_and_size(data)}]{where} is at version {current}; "
        f"expected version {saved._version} instead. {hint}"
    )


DETACHED_SAVED_MSG = (
    "Trying to use a saved tensor that has been detached in-place, i.e. with .detach_()."
    "This is not supported, please use out-of-place `.detach()` instead")


def _check_not_detached_in_place(tensor: Tensor, detached_seq: int, node: Any) -> None:
    """Note [Saved tensors detached in place]
    torch refuses to unpack a saved input that had history when it was saved and
    has none now (``detach_()`` ran in between).  npgrad's saved input keeps only
    the tensor, so ``detach_`` stamps the tensor with a fresh sequence number:
    a node with a smaller one was made, and saved the tensor, before the detach.
    """
    if tensor._grad_fn is None and node is not None and node._seq < detached_seq:
        raise RuntimeError(DETACHED_SAVED_MSG)


def _strip_backward_suffix(name: str) -> str:
    """``MulBackward0`` -> ``Mul``; a custom Function's ``MyFnBackward`` -> ``MyFn``."""
    i = name.rfind("Backward")
    if i > 0 and (name[i + 8:].isdigit() or i + 8 == len(name)):
        return name[:i]
    return name


def rebuild_output(saved: Any, node: Any) -> Tensor:
    """Unpack a saved op output: same data, with ``node`` as grad_fn when recording."""
    check_saved_version(saved, None, node)
    data = saved._data
    if _tls.mode == RECORDING and saved._requires_grad:
        t = wrap_result(data, node, saved._output_nr)
    else:
        t = wrap(data, 0)
    t._vc = saved._vc
    if saved._fw_extra is not None and FW.active:
        tangent = saved._fw_extra.tangent
        if tangent is not None:
            install_tangent(t, tangent)
    return t


def accumulate_into_grad(leaf: Tensor, grad: Tensor) -> None:
    """AccumulateGrad's job: add ``grad`` into ``leaf.grad`` the way torch does.

    The leaf's own hooks have run already (the engine runs them first, as torch does);
    its post-accumulate hooks run after, in ``AccumulateGrad.backward``.
    """
    old = leaf._grad
    if type(grad._data) is not np.ndarray or (old is not None and type(old._data) is not
                                              np.ndarray):  # Note [Sparse COO tensors]
        from .._ops import sparse  # the op layer sits above; sparse grads are rare

        leaf._grad = sparse.accumulate(old, grad)
        return
    if _tls.mode & GRAD:  # create_graph: the new .grad is part of a graph
        if old is None:
            # torch copies into a fresh tensor, so the first .grad has CopyBackwards.
            fresh = make_tensor(np.zeros_like(grad._data), None, False, None)
            leaf._grad = fresh.copy_(grad)
        else:
            leaf._grad = old + grad
    elif old is None:
        leaf._grad = _owned_copy(grad)
    elif old._grad_fn is None and old._data.shape == grad._data.shape:
        np.add(old._data, grad._data, out=old._data, casting="unsafe")
        bump_version(old)
    else:
        leaf._grad = wrap(np.asarray(old._data + grad._data), 0)


def _owned_copy(grad: Tensor) -> Tensor:
    """A private copy of a first gradient for ``.grad``.

    The incoming tensor may be shared (a user's ``gradient``, one tensor sent down
    two edges, a tensor a hook kept), so ``.grad``, which later accumulates in
    place, never aliases it.  torch steals provably private gradients instead;
    proving that here would need ownership tracking the engine does not do.
    """
    return wrap(np.array(grad._data, copy=True, order="C"), 0)
