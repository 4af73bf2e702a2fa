"""Custom differentiable functions: ``Function``, its ``ctx`` and ``once_differentiable``.

Note [A Function's ctx is its node]
As in torch, the object passed as ``ctx`` to ``forward``/``setup_context`` and
``backward`` *is* the graph node that becomes the outputs' ``grad_fn``: an
instance of ``<ClassName>Backward``, a class generated once per ``Function``
subclass.  Arbitrary attributes set on ctx are therefore visible on
``y.grad_fn``.  The node keeps one edge per *tensor* argument of ``forward``
(non-tensor arguments have no edge), while ``backward`` returns one gradient per
argument; the node maps one onto the other.

Note [What apply does, in order]
1. ``needs_input_grad`` (one bool per argument) and the edges are computed;
   the node is recorded only if grad mode is on (outside inference mode) and
   some tensor argument requires grad.
2. ``forward`` runs with grad mode off (``enable_grad()`` inside still works).
   In the ``setup_context`` style, ``forward(*args)`` runs first, then
   ``setup_context(ctx, inputs, output)``, also with grad off.
3. Every tensor given to ``mark_dirty`` gets its version bumped; then each
   tensor output is wired: a dirty input becomes a non-leaf with this node as
   ``grad_fn`` (the same object is returned); an undirtied input is returned
   as a fresh alias (a view sharing storage and version counter), since one
   tensor object cannot have two histories; other outputs simply take the
   node as ``grad_fn``.  Outputs passed to ``mark_non_differentiable`` and
   non-float outputs get no history.  Nothing is recorded when step 1 said no.
4. Tensors given to ``save_for_backward`` are saved as ``SavedTensor``: an
   output is saved without holding the tensor object (no cycle output -> node
   -> output), with the version it has once step 3 is done.  Saved tensor
   hooks (``autograd.graph.saved_tensors_hooks``) see each one here.
The tensors held by ``to_save``/``dirty_tensors``/``non_differentiable`` are
dropped after step 4 so the node never keeps its outputs alive.
"""
from __future__ import annotations

import functools
import inspect
import warnings
from typing import Any, Callable

import numpy as np

from .. import _mode
from .._mode import _tls
from .._tensor import Tensor
from .._tensor_base import INFERENCE_COUNTER, _make, bump_version, version_counter
from .graph import edge_of
from .._forward import FW, check_tangent_size, has_tangent, set_tangent, tangent_of
from .graph import SECOND_BACKWARD_MSG, Node, SavedTensor

__all__ = ["Function", "FunctionCtx", "BackwardCFunction", "once_differentiable"]

LEAF_DIRTY_MSG = "a leaf Variable that requires grad has been used in an in-place operation."
DIRTY_NOT_RETURNED_MSG = (
    "Some elements marked as dirty during the forward method were not returned as output. "
    "The inputs that are modified inplace must all be outputs of the Function."
)
DIRTY_NOT_INPUT_MSG = (
    "ctx.mark_dirty() received a tensor that was not an input. Only input Tensors that have "
    "been mutated should be passed to ctx.mark_dirty()."
)
LEGACY_CALL_MSG = (
    "Legacy autograd function with non-static forward method is deprecated. Please use "
    "new-style autograd function with static forward method. (Example: "
    "https://pytorch.org/docs/stable/autograd.html#torch.autograd.Function)"
)
ONCE_DIFFERENTIABLE_MSG = (
    "trying to differentiate twice a function that was marked with @once_differentiable"
)
JVP_MISSING_MSG = ("You must implement the jvp function for custom autograd.Function to use it "
                   "with forward mode AD.")


def _is_tensor(x: Any) -> bool:
    return type(x) is Tensor or isinstance(x, Tensor)


def _is_differentiable(t: Tensor) -> bool:
    return t._data.dtype.kind in "fc"


class FunctionCtx:
    """The ``ctx`` API used inside ``forward``/``setup_context`` (see Note [A Function's ctx is its node])."""

    def save_for_backward(self, *tensors: Any) -> None:
        """Save tensors (or None) for ``backward``; read them back with ``ctx.saved_tensors``."""
        self.to_save = tensors

    def save_for_forward(self, *tensors: Any) -> None:
        """Save tensors for ``jvp``, where ``ctx.saved_tensors`` returns them."""
        self.saved_for_forward = tensors

    def mark_dirty(self, *args: Any) -> None:
        """Declare the input tensors ``forward`` modified in place (they must be returned)."""
        self.dirty_tensors = args

    def mark_shared_storage(self, *pairs: Any) -> None:
        warnings.warn("mark_shared_storage is deprecated. Tensors with shared storages are "
                      "automatically tracked. Note that calls to `set_()` are not tracked",
                      DeprecationWarning, stacklevel=2)

    def mark_non_differentiable(self, *args: Any) -> None:
        """Declare outputs that get no gradient (backward still receives a zero for them)."""
        self.non_differentiable = args

    def set_materialize_grads(self, value: bool) -> None:
        """With False, ``backward`` receives None (not zeros) for outputs without a gradient."""
        self.materialize_grads = value


class BackwardCFunction(Node, FunctionCtx):
    """Base of the generated ``<ClassName>Backward`` nodes; also the ctx object."""

    _forward_cls: type = None  # type: ignore[assignment]
    _called_without_grad = True  # with zeros, as torch (Note [Nodes reached without a gradient])

    def __repr__(self) -> str:
        cls = type(self)
        return f"<{cls.__module__}.{cls.__qualname__} object at {id(self):#x}>"

    __str__ = __repr__

    # -- saved tensors -------------------------------------------------------------
    @property
    def saved_tensors(self) -> tuple:
        if self.__dict__.get("_in_jvp"):
            return tuple(self.__dict__.get("saved_for_forward") or ())
        if self._released:
            raise RuntimeError(SECOND_BACKWARD_MSG)
        saved = self.__dict__.get("_saved")
        if saved is None:  # forward has not finished: nothing is saved yet
            return ()
        return tuple(None if s is None else s.unpack(self) for s in saved)

    saved_variables = saved_tensors

    def _release_saved(self) -> None:
        self._released = True
        saved = self.__dict__.get("_saved")
        if saved:
            for s in saved:
                if s is not None:
                    s.release()

    # -- the engine's entry point ----------------------------------------------
    def backward(self, *grads: Any) -> tuple:  # type: ignore[override]
        cls = self._forward_cls
        if self.materialize_grads:
            grads = tuple(_zeros(meta) if g is None and meta is not None else g
                          for g, meta in zip(grads, self._out_meta))
        user_fn = _user_backward(cls)
        result = user_fn(self, *grads)
        return self._check_gradients(result)

    def _check_gradients(self, result: Any) -> tuple:
        """Map the per-argument gradients of ``backward`` onto this node's edges."""
        name = self.name()
        if type(result) is not tuple:
            result = (result,)
        n_args = len(self._arg_is_tensor)
        if len(result) > n_args and all(g is None for g in result[n_args:]):
            result = result[:n_args]
        if len(result) != n_args:
            raise RuntimeError(f"function {name} returned an incorrect number of gradients "
                               f"(expected {n_args}, got {len(result)})")
        grads = []
        for i, (g, is_tensor) in enumerate(zip(result, self._arg_is_tensor)):
            if not is_tensor:
                if g is not None:
                    raise RuntimeError(
                        f"function {name} returned a gradient different than None at position "
                        f"{i + 1}, but the corresponding forward input was not a Variable")
                continue
            if g is not None and not _is_tensor(g):
                raise RuntimeError(f"expected Variable or None (got {type(g).__name__})")
            grads.append(g)
        for j, (g, (child, _), shape) in enumerate(zip(grads, self.next_functions,
                                                       self._input_shapes)):
            if g is None or child is None:
                continue
            if not _expandable_to(shape, g._data.shape):
                raise RuntimeError(
                    f"Function {name} returned an invalid gradient at index {j} - got "
                    f"[{', '.join(map(str, g._data.shape))}] but expected shape compatible "
                    f"with [{', '.join(map(str, shape))}]")
        return tuple(grads)


def _expandable_to(shape: tuple, target: tuple) -> bool:
    """Whether a tensor of ``shape`` broadcasts to exactly ``target``."""
    if len(shape) > len(target):
        return False
    for s, t in zip(reversed(shape), reversed(target)):
        if s != t and s != 1:
            return False
    return True


def _zeros(meta: tuple) -> Tensor:
    shape, dtype = meta
    return _make(Tensor, np.zeros(shape, dtype=dtype), None, False, None)


def _user_backward(cls: type) -> Callable:
    """The user's ``backward`` (or ``vjp``: torch lets a Function define either, not both)."""
    backward = cls.backward
    vjp = getattr(cls, "vjp", None)
    if vjp is not None:
        if backward is not Function.backward:
            raise RuntimeError("Implementing both 'backward' and 'vjp' for a custom Function is "
                               "not allowed. You should only implement one of them.")
        return vjp
    return backward


class Function(FunctionCtx):
    """Base class of custom differentiable operations; use it through ``apply``.

    >>> import npgrad
    >>> class Exp(npgrad.autograd.Function):
    ...     @staticmethod
    ...     def forward(ctx, x):
    ...         result = x.exp()
    ...         ctx.save_for_backward(result)
    ...         return result
    ...     @staticmethod
    ...     def backward(ctx, grad):
    ...         result, = ctx.saved_tensors
    ...         return grad * result
    >>> x = npgrad.tensor([0., 1.], requires_grad=True)
    >>> Exp.apply(x).sum().backward()
    >>> x.grad
    tensor([1.0000, 2.7183])
    """

    _backward_cls: type = BackwardCFunction

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        # One node class per Function subclass: its name is the grad_fn name.
        cls._backward_cls = type(f"{cls.__name__}Backward", (BackwardCFunction,),
                                 {"_forward_cls": cls, "__module__": __name__,
                                  "__qualname__": f"{cls.__name__}Backward"})

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        warnings.warn(
            f"{self.__class__} should not be instantiated. Methods on autograd functions are all "
            "static, so you should invoke them on the class itself. Instantiating an autograd "
            "function will raise an error in a future version of PyTorch.",
            DeprecationWarning, stacklevel=2)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError(LEGACY_CALL_MSG)

    @staticmethod
    def forward(*args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError("You must implement the forward function for custom "
                                  "autograd.Function.")

    @staticmethod
    def setup_context(ctx: Any, inputs: tuple, output: Any) -> Any:
        raise NotImplementedError("setup_context is not implemented.")

    @staticmethod
    def backward(ctx: Any, *grad_outputs: Any) -> Any:
        raise NotImplementedError("You must implement either the backward or vjp method for "
                                  "your custom autograd.Function to use it with backward mode "
                                  "AD.")

    @staticmethod
    def jvp(ctx: Any, *grad_inputs: Any) -> Any:
        raise NotImplementedError(JVP_MISSING_MSG)

    @classmethod
    def apply(cls, *args: Any, **kwargs: Any) -> Any:
        """Run ``forward`` on ``args`` and record the node (Note [What apply does, in order])."""
        setup_style = cls.setup_context is not Function.setup_context
        if setup_style:
            bound = inspect.signature(cls.forward).bind(*args, **kwargs)
            bound.apply_defaults()
            args, kwargs = tuple(bound.args), {}
        return _apply(cls, args, kwargs, setup_style)


def _apply(cls: type, args: tuple, kwargs: dict, setup_style: bool) -> Any:
    mode = _tls.mode
    arg_is_tensor = tuple(_is_tensor(a) for a in args)
    needs_input_grad = tuple(t and a._requires_grad for a, t in zip(args, arg_is_tensor))
    recording = mode == _mode.RECORDING and any(needs_input_grad)

    ctx = object.__new__(cls._backward_cls)
    ctx.needs_input_grad = needs_input_grad
    ctx.to_save = None
    ctx.dirty_tensors = None
    ctx.non_differentiable = None
    ctx.materialize_grads = True
    ctx._arg_is_tensor = arg_is_tensor
    tensor_args = [a for a, t in zip(args, arg_is_tensor) if t]
    ctx._input_shapes = tuple(a._data.shape for a in tensor_args)
    # The node takes its sequence number before forward runs, as torch's does.
    edges = tuple(edge_of(a) if a._requires_grad else (None, 0) for a in tensor_args)
    ctx._init_node(edges if recording else (), ())

    tangents = _input_tangents(args, arg_is_tensor, mode)
    _tls.mode = mode & _mode.INFERENCE
    fw_active = FW.active
    FW.active = False  # forward computes primals only; jvp gives the tangents
    try:
        if setup_style:
            raw = cls.forward(*args)
            cls.setup_context(ctx, args, raw)
        else:
            raw = cls.forward(ctx, *args, **kwargs)
    finally:
        _tls.mode = mode
        FW.active = fw_active

    is_tuple = type(raw) is tuple
    raw_outputs = raw if is_tuple else (raw,)
    outputs = _wire_outputs(ctx, tensor_args, raw_outputs, recording)
    if recording:
        ctx._out_meta = tuple((o._data.shape, o._data.dtype) if _is_tensor(o) else None
                              for o in outputs)
        _save_tensors(ctx, raw_outputs, outputs)
    if tangents is not None:
        _give_tangents(cls, ctx, tangents, args, raw_outputs, outputs)
    ctx.to_save = None
    ctx.dirty_tensors = None
    ctx.non_differentiable = None
    return tuple(outputs) if is_tuple else outputs[0]


def _input_tangents(args: tuple, arg_is_tensor: tuple, mode: int) -> list | None:
    """One tangent (or None) per argument when some input is a dual tensor, else None.

    Note [Custom Functions and forward-mode AD]
    ``forward`` runs on primals only (no tangents flow through its ops); when an
    input carries a tangent, ``jvp(ctx, *tangents)`` gives the outputs theirs,
    one tangent argument per ``forward`` argument (None for non-tensors and
    inputs without one), and ``ctx.saved_tensors`` there returns what
    ``ctx.save_for_forward`` kept.  A Function without ``jvp`` raises torch's
    NotImplementedError.
    """
    if not FW.active or mode & _mode.INFERENCE:
        return None
    if not any(t and has_tangent(a) for a, t in zip(args, arg_is_tensor)):
        return None
    return [tangent_of(a) if t else None for a, t in zip(args, arg_is_tensor)]


def _give_tangents(cls: type, ctx: Any, tangents: list, args: tuple, raw_outputs: tuple,
                   outputs: list) -> None:
    """Run ``jvp`` and give each output its tangent, with torch's checks on what it returns."""
    if ctx.materialize_grads:  # tensor inputs without a tangent get zeros, as torch's
        tangents = [_zeros((a._data.shape, a._data.dtype)) if t is None and _is_tensor(a) else t
                    for a, t in zip(args, tangents)]
    ctx._in_jvp = True
    FW.active = False
    try:
        found = cls.jvp(ctx, *tangents)
    finally:
        FW.active = True
        ctx._in_jvp = False
    found = found if type(found) is tuple else (found,)
    if len(found) != len(outputs):
        raise RuntimeError("Function's jvp returned an invalid number of forward gradients "
                           f"(expected {len(outputs)} but got {len(found)})")
    dirty_ids = {id(t) for t in (ctx.dirty_tensors or ())}
    input_ids = {id(a) for a in args if _is_tensor(a)} - dirty_ids
    for raw, out, tangent in zip(raw_outputs, outputs, found):
        if not (_is_tensor(out) and tangent is not None and _is_differentiable(out)):
            continue
        check_tangent_size(out, tangent)
        if id(raw) in input_ids and tangent._base is None:
            raise RuntimeError("A custom Function's forward is returning a view (or an input "
                               "as-is) but the jvp is not returning a view.")
        set_tangent(out, tangent)


def _wire_outputs(ctx: BackwardCFunction, tensor_args: list, raw_outputs: tuple,
                  recording: bool) -> list:
    """Step 3 of Note [What apply does, in order]."""
    input_ids = {id(a) for a in tensor_args}
    dirty = ctx.dirty_tensors or ()
    dirty_ids = {id(t) for t in dirty}
    non_diff_ids = {id(t) for t in (ctx.non_differentiable or ())}
    for t in dirty:
        bump_version(t)
    returned_ids = {id(o) for o in raw_outputs if _is_tensor(o)}
    if not dirty_ids <= returned_ids:
        raise RuntimeError(DIRTY_NOT_RETURNED_MSG)

    outputs = []
    for nr, out in enumerate(raw_outputs):
        if not _is_tensor(out):
            outputs.append(out)
            continue
        is_input = id(out) in input_ids
        is_modified = id(out) in dirty_ids
        differentiable = (recording and id(out) not in non_diff_ids
                          and _is_differentiable(out))
        if not differentiable:
            if not out._requires_grad:
                if is_input and not is_modified:
                    out = _alias(out, None, 0)
            elif is_input:
                out = out.detach()
            elif out._base is None:
                out.detach_()
        elif is_modified:
            if out._grad_fn is None and out._requires_grad:
                raise RuntimeError(LEAF_DIRTY_MSG)
            if not is_input:
                warnings.warn(DIRTY_NOT_INPUT_MSG, UserWarning, stacklevel=4)
            if out._base is not None:
                outputs.append(_rebase_dirty_view(ctx, out, raw_outputs))
                continue
            out._grad_fn = ctx
            out._output_nr = nr
            out._requires_grad = True
        elif is_input:
            out = _alias(out, ctx, nr)
        else:
            out._grad_fn = ctx
            out._output_nr = nr
            out._requires_grad = True
        outputs.append(out)
    return outputs


def _rebase_dirty_view(ctx: BackwardCFunction, view: Tensor, raw_outputs: tuple) -> Tensor:
    """A view the Function wrote in place: torch's history for an in-place op on a view.

    Note [mark_dirty on a view]
    As for a built-in in-place op on a view (Note [In-place on a view] in
    ``_ops.views``): the view's base takes a ``CopySlices`` wrapping this node,
    and the view an ``AsStridedBackward0`` over it, after torch's checks (a view
    of a leaf, views made under no_grad, outputs of multi-output views).
    CopySlices hands its op one gradient, so the view must be the Function's
    only differentiable output.  As torch's CopySlices, it takes the op's first
    input to be the view: the base's gradient region gets the gradient of
    argument 0 and the other edges those of arguments 1.. (so with the view at
    another position the gradients land as torch's land, shifted).
    """
    from .._ops.inplace import check_inplace  # the op layer imports autograd
    from .._ops.views import rebase_on_copy_slices

    check_inplace(view, _mode.RECORDING, False)
    differentiable = [o for o in raw_outputs if _is_tensor(o) and _is_differentiable(o)]
    if len(differentiable) != 1:
        raise NotImplementedError(
            "npgrad: ctx.mark_dirty() on a view is supported when the view is the Function's "
            "only differentiable output")
    rebase_on_copy_slices(view, ctx)
    return view


def _alias(t: Tensor, node: Any, output_nr: int) -> Tensor:
    """A view of ``t`` covering all of it: same storage and version counter, new history."""
    vc = t._vc if t._vc is INFERENCE_COUNTER else version_counter(t)
    alias = _make(Tensor, t._data.view(), node, node is not None, vc)
    alias._output_nr = output_nr
    alias._base = t if t._base is None else t._base
    return alias


def _check_saveable(to_save: Any) -> None:
    if to_save:
        for i, t in enumerate(to_save):
            if t is not None and not _is_tensor(t):
                raise TypeError(f"save_for_backward can only save variables, but argument {i} "
                                f"is of type {type(t).__name__}")


class _SavedOutput(SavedTensor):
    """A saved output of a custom Function: rebuilt with its own ``output_nr``."""

    __slots__ = ("_output_nr",)

    def unpack(self, node: Node) -> Any:
        t = SavedTensor.unpack(self, node)
        if self._unpack_hook is None and self._requires_grad:
            # torch hands back a saved output with its grad_fn even when not recording.
            t._grad_fn = node
            t._requires_grad = True
            t._output_nr = self._output_nr
        return t


def _save_tensors(ctx: BackwardCFunction, raw_outputs: tuple, outputs: list) -> None:
    """Step 4 of Note [What apply does, in order]."""
    to_save = ctx.to_save
    if not to_save:
        ctx._saved = ()
        return
    _check_saveable(to_save)
    output_nr = {}
    for nr, (raw, out) in enumerate(zip(raw_outputs, outputs)):
        if _is_tensor(out) and out._grad_fn is ctx:
            output_nr[id(raw)] = (nr, out)
            output_nr[id(out)] = (nr, out)
    saved = []
    for t in to_save:
        if t is None:
            saved.append(None)
            continue
        hit = output_nr.get(id(t))
        if hit is None:
            saved.append(SavedTensor(t))
        else:
            nr, out = hit
            s = object.__new__(_SavedOutput)
            s._output_nr = nr
            SavedTensor.__init__(s, out, True)
            saved.append(s)
    ctx._saved = tuple(saved)


# -- once_differentiable -------------------------------------------------------------

class Error(Node):
    """The grad_fn of results of a ``@once_differentiable`` backward run with create_graph."""

    __slots__ = ("msg",)

    def name(self) -> str:
        return "torch::autograd::Error"

    def backward(self, *grads: Any) -> tuple:
        raise RuntimeError(self.msg)


def once_differentiable(fn: Callable) -> Callable:
    """Decorate a ``backward``: it runs without grad, and differentiating its results raises.

    >>> import npgrad
    >>> from npgrad.autograd.function import once_differentiable
    >>> class Square(npgrad.autograd.Function):
    ...     @staticmethod
    ...     def forward(ctx, x):
    ...         ctx.save_for_backward(x)
    ...         return x * x
    ...     @staticmethod
    ...     @once_differentiable
    ...     def backward(ctx, grad):
    ...         x, = ctx.saved_tensors
    ...         return 2 * x * grad
    >>> x = npgrad.tensor([3.], requires_grad=True)
    >>> npgrad.autograd.grad(Square.apply(x), x)
    (tensor([6.]),)
    """

    @functools.wraps(fn)
    def wrapper(ctx: Any, *args: Any) -> Any:
        mode = _tls.mode
        _tls.mode = mode & _mode.INFERENCE
        try:
            outputs = fn(ctx, *args)
        finally:
            _tls.mode = mode
        if mode != _mode.RECORDING:
            return outputs
        if not any(_is_tensor(a) and a._requires_grad for a in args):
            return outputs
        is_tuple = type(outputs) is tuple
        seq = outputs if is_tuple else (outputs,)
        # Results that "require grad" through a node that raises when reached: double
        # backward through this function fails loudly instead of silently giving zeros.
        # Note [Error node edges]: as torch's DelayedError, the node has one edge and one
        # output slot per returned value, a None gradient included: its edge is
        # (None, 0) and a tensor's output_nr is its position among all returned values.
        edges = []
        metas = []
        for o in seq:
            if _is_tensor(o):
                edges.append(edge_of(_make(Tensor, o._data, None, True, None)))
                metas.append((o._data.shape, o._data.dtype))
            else:
                edges.append((None, 0))
                metas.append(None)
        node = object.__new__(Error)
        node._init_node(tuple(edges), tuple(metas))
        node.msg = ONCE_DIFFERENTIABLE_MSG
        wrapped = []
        for nr, o in enumerate(seq):
            if _is_tensor(o):
                w = _make(Tensor, o._data, node, True, None)
                w._output_nr = nr
                wrapped.append(w)
            else:
                wrapped.append(o)
        return tuple(wrapped) if is_tuple else wrapped[0]

    return wrapper
