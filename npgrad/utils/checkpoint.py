"""Activation checkpointing: trade compute for memory by recomputing a forward in backward.

Note [Two ways to checkpoint]
``use_reentrant=False`` (recommended): the function runs normally, inside
``saved_tensors_hooks`` whose pack hook keeps only a small handle, so no
activation is stored.  The first time backward unpacks a handle, the function
is run again (same inputs, same RNG state, grad on) under a second pair of
hooks that collects, in order, every tensor the recomputation saves; handle
``i`` then unpacks to the ``i``-th of them.  Ops are deterministic, so the
recomputation saves the same tensors in the same order as the original run.
``use_reentrant=True`` (torch 2.13's default when ``use_reentrant`` is not
given): a custom Function runs the function under no_grad and, in its
backward, reruns it with grad on and calls ``backward`` on that fresh graph
(the engine is entered again from inside itself).  It only works with
``.backward()`` without ``inputs`` (not ``autograd.grad``).
"""
from __future__ import annotations

import collections
import contextlib
import itertools
import warnings
import weakref
from typing import Any, Callable, Iterable, Iterator

from .. import _creation
from ..autograd import engine
from ..autograd.function import Function
from ..autograd.graph import SavedTensor, saved_tensors_hooks
from ..autograd.grad_mode import enable_grad, is_grad_enabled, no_grad

__all__ = ["checkpoint", "checkpoint_sequential", "CheckpointError", "noop_context_fn",
           "detach_variable", "set_checkpoint_early_stop"]

# Set by ``set_checkpoint_early_stop``; None leaves each call's ``early_stop`` in charge.
_early_stop_override: bool | None = None


class _StopRecomputation(Exception):
    """Raised from the recomputation's pack hook once every needed tensor is back."""


class CheckpointError(RuntimeError):
    """The recomputation did not save what the original forward saved."""


def noop_context_fn() -> tuple:
    return contextlib.nullcontext(), contextlib.nullcontext()


def _is_tensor(x: Any) -> bool:
    from .._tensor import Tensor

    return isinstance(x, Tensor)


def detach_variable(inputs: tuple) -> tuple:
    """Detached copies of the tensors in ``inputs``, keeping each one's ``requires_grad``."""
    if not isinstance(inputs, tuple):
        raise RuntimeError("Only tuple of tensors is supported. Got Unsupported input type: ",
                           type(inputs).__name__)
    out = []
    for inp in inputs:
        if not _is_tensor(inp):
            out.append(inp)
            continue
        x = inp.detach()
        x.requires_grad = inp.requires_grad
        out.append(x)
    return tuple(out)


@contextlib.contextmanager
def _rng_as_in_forward(state: Any, enabled: bool) -> Any:
    """Run the block with the default generator at ``state``; restore the current state after."""
    if not enabled:
        yield
        return
    gen = _creation.default_generator
    current = gen.get_state()
    gen.set_state(state)
    try:
        yield
    finally:
        gen.set_state(current)


# -- use_reentrant=True ------------------------------------------------------------------

class CheckpointFunction(Function):
    """The reentrant variant: forward without a graph, backward reruns it with one."""

    @staticmethod
    def forward(ctx: Any, run_function: Callable, preserve_rng_state: bool, *args: Any) -> Any:
        if not any(_is_tensor(a) and a.requires_grad for a in args):
            warnings.warn("None of the inputs have requires_grad=True. Gradients will be None",
                          stacklevel=4)
        ctx.run_function = run_function
        ctx.preserve_rng_state = preserve_rng_state
        if preserve_rng_state:
            ctx.fwd_rng_state = _creation.default_generator.get_state()
        ctx.inputs = [None if _is_tensor(a) else a for a in args]
        ctx.tensor_indices = [i for i, a in enumerate(args) if _is_tensor(a)]
        ctx.save_for_backward(*(a for a in args if _is_tensor(a)))
        with no_grad():
            return run_function(*args)

    @staticmethod
    def backward(ctx: Any, *grads: Any) -> tuple:
        task = engine.current_task()
        if task is None or not task.accumulates_all:
            raise RuntimeError(
                "When use_reentrant=True, torch.utils.checkpoint is incompatible with .grad() or "
                "passing an `inputs` parameter to .backward(). To resolve this error, you can "
                "either set use_reentrant=False, or call .backward() without passing the "
                "`inputs` argument.")
        from ..autograd import backward

        inputs = list(ctx.inputs)
        for i, t in zip(ctx.tensor_indices, ctx.saved_tensors):
            inputs[i] = t
        with _rng_as_in_forward(getattr(ctx, "fwd_rng_state", None), ctx.preserve_rng_state):
            detached = detach_variable(tuple(inputs))
            with enable_grad():
                outputs = ctx.run_function(*detached)
        if _is_tensor(outputs):
            outputs = (outputs,)
        with_grad = [(o, g) for o, g in zip(outputs, grads) if _is_tensor(o) and o.requires_grad]
        if not with_grad:
            raise RuntimeError("none of output has requires_grad=True, this checkpoint() is not "
                               "necessary")
        backward([o for o, _ in with_grad], [g for _, g in with_grad])
        return (None, None) + tuple(x.grad if _is_tensor(x) else None for x in detached)


# -- use_reentrant=False -----------------------------------------------------------------

# Note [Nested checkpoints]
# Checkpoints nest as torch's do, by two rules: a saved tensor belongs to the innermost
# checkpoint active when it was saved (its pack hook is on top of the hook stack), and a
# checkpoint's *inputs* are saved tensors of the checkpoint around it (``_Frame`` saves
# them as SavedTensor while the outer pack hook is active).  So recomputing an inner
# checkpoint first unpacks its inputs, which recomputes the outer one: to rebuild a saved
# tensor every checkpoint that was active when it was saved runs again, innermost last,
# and a recomputation meets the nested checkpoints inside it and respects them.
# Recomputation happens at most once per backward run (keyed by the engine's graph task
# id), and each recomputed value is handed out once and then dropped, even with
# retain_graph=True; a second backward recomputes again.  Early stop (Note [Early
# stop]) ends a recomputation as soon as it has rebuilt every tensor its forward saved.

_DEBUG_TIP = """
Tip: To see a more detailed error message, either pass `debug=True` to
`torch.utils.checkpoint.checkpoint(...)` or wrap the code block
with `with torch.utils.checkpoint.set_checkpoint_debug_enabled(True):` to
enable checkpoint\u2011debug mode globally.

If this error occurs under torch.compile with automatic_dynamic_shapes enabled,
it may be because the recomputation selected a different compiled graph than the
forward pass (e.g., a dynamic graph instead of the original static graph).
To fix this, either:
  - Use torch._dynamo.mark_dynamic() to explicitly mark varying dimensions as
    dynamic upfront, avoiding the static-to-dynamic transition.
  - Call torch._C._dynamo.eval_frame._set_lru_cache(False) to disable LRU cache
    reordering, which can change which graph is checked first between forward
    and recompute.
See https://github.com/pytorch/pytorch/issues/166926 for more details and
workaround examples.
"""
_fresh_ids = itertools.count(-2, -1)  # unpacks outside any backward get ids of their own


class _Holder:
    """What a checkpointed forward saves in place of a tensor: per backward run, a handle."""

    __slots__ = ("handles", "__weakref__")

    def __init__(self) -> None:
        self.handles: dict = {}


class _Handle:
    """Key of one recomputed tensor for one backward run (dropped once handed out)."""

    __slots__ = ("__weakref__",)


def _metadata(t: Any) -> dict:
    return {"shape": t.shape, "dtype": t.dtype, "device": t.device}


class _Frame:
    """One checkpointed call: its saved inputs, a holder per saved tensor, the recomputations."""

    def __init__(self, recompute: Callable, early_stop: bool, determinism_check: str) -> None:
        self.recompute = recompute
        self.early_stop = early_stop
        self.check_metadata = determinism_check == "default"
        self.saved_args: list = []
        self.weak_holders: list = []
        self.metadata: list = []
        self.recomputed: dict = collections.defaultdict(weakref.WeakKeyDictionary)
        self.recomp_counter: dict = collections.defaultdict(int)
        self.is_recomputed: dict = collections.defaultdict(bool)
        self.forward_completed = False
        self.ignore_saved_mismatch = False

    def save_inputs(self, args: tuple) -> None:
        # saved while the enclosing checkpoint's pack hook is active (Note [Nested checkpoints])
        self.saved_args = [SavedTensor(a) if _is_tensor(a) else a for a in args]

    def get_inputs(self) -> list:
        return [a.unpack(None) if isinstance(a, SavedTensor) else a for a in self.saved_args]

    # -- the forward's hooks ---------------------------------------------------------
    def pack(self, tensor: Any) -> _Holder:
        holder = _Holder()
        self.weak_holders.append(weakref.ref(holder))
        self.metadata.append(_metadata(tensor) if self.check_metadata else None)
        return holder

    def unpack(self, holder: _Holder) -> Any:
        gid = engine.current_graph_task_id()
        if gid == -1:
            gid = next(_fresh_ids)
        if not self.is_recomputed[gid]:
            args = self.get_inputs()
            try:
                with _RecomputationHooks(self, gid), enable_grad():
                    self.recompute(*args)
            except _StopRecomputation:
                pass
            self.is_recomputed[gid] = True
            self._check(gid)
        handle = holder.handles.get(gid)
        if handle is None:
            raise CheckpointError(
                "torch.utils.checkpoint: Unpack is being triggered for a tensor that was "
                "already unpacked once. If you are calling ctx.saved_tensors in backward, make "
                "sure to do so only once. Otherwise please open an issue with details on your "
                "use case.")
        value = self.recomputed[gid][handle]
        holder.handles[gid] = None
        return value

    # -- the recomputation's pack hook -------------------------------------------------
    def collect(self, tensor: Any, gid: int) -> Any:
        x = tensor.detach() if tensor.requires_grad else tensor
        index = self.recomp_counter[gid]
        self.recomp_counter[gid] += 1
        if index >= len(self.weak_holders):
            if not self.forward_completed:  # a backward inside the forward, without early stop
                self.ignore_saved_mismatch = True
                return x
            raise CheckpointError("torch.utils.checkpoint: trying to save more tensors during "
                                  "recomputation than during the original forward pass.\n"
                                  + _DEBUG_TIP)
        holder = self.weak_holders[index]()
        if holder is not None:  # else a backward inside the forward already used it
            handle = holder.handles[gid] = _Handle()
            self.recomputed[gid][handle] = x
        if self.early_stop and self.recomp_counter[gid] == len(self.weak_holders):
            raise _StopRecomputation
        return x

    def _check(self, gid: int) -> None:
        if self.ignore_saved_mismatch:
            return
        if len(self.weak_holders) != self.recomp_counter[gid]:
            raise CheckpointError(
                "torch.utils.checkpoint: A different number of tensors was saved during the "
                "original forward and recomputation.\n"
                f"Number of tensors saved during forward: {len(self.weak_holders)}\n"
                f"Number of tensors saved during recomputation: {self.recomp_counter[gid]}.\n"
                + _DEBUG_TIP)
        if not self.check_metadata:
            return
        bad = []
        for i, ref in enumerate(self.weak_holders):
            holder = ref()
            if holder is None:
                continue
            now = _metadata(self.recomputed[gid][holder.handles[gid]])
            if now != self.metadata[i]:
                bad.append(f"tensor at position {i}:\n"
                           f"saved metadata: {self.metadata[i]}\n"
                           f"recomputed metadata: {now}\n")
        if bad:
            raise CheckpointError(
                "torch.utils.checkpoint: Recomputed values for the following tensors have "
                "different metadata than during the forward pass.\n" + "".join(bad) + ".\n"
                + _DEBUG_TIP)


class _RecomputationHooks(saved_tensors_hooks):
    """The hooks a recomputation runs under: every saved tensor goes to the frame's table."""

    def __init__(self, frame: _Frame, gid: int) -> None:
        super().__init__(lambda t: frame.collect(t, gid), _never_unpacked)


def _never_unpacked(packed: Any) -> Any:
    return packed


def _checkpoint_without_reentrant(function: Callable, preserve_rng_state: bool,
                                  context_fn: Callable, determinism_check: str, early_stop: bool,
                                  args: tuple, kwargs: dict) -> Any:
    if determinism_check not in ("default", "none"):
        raise ValueError("determinism_check should be one of ['default', 'none'], but got "
                         f"{determinism_check}")
    forward_context, recompute_context = context_fn()
    rng_state = _creation.default_generator.get_state() if preserve_rng_state else None

    def recompute(*inputs: Any) -> None:
        with _rng_as_in_forward(rng_state, preserve_rng_state), recompute_context:
            function(*inputs, **kwargs)

    if _early_stop_override is not None:  # captured now: backward may run outside the block
        early_stop = _early_stop_override
    if not is_grad_enabled():  # nothing will be saved: torch runs the function plainly
        return function(*args, **kwargs)
    frame = _Frame(recompute, early_stop, determinism_check)
    frame.save_inputs(args)
    with saved_tensors_hooks(frame.pack, frame.unpack), forward_context:
        out = function(*args, **kwargs)
    frame.forward_completed = True
    return out


# -- public API --------------------------------------------------------------------------

def checkpoint(function: Callable, *args: Any, use_reentrant: bool | None = None,
               context_fn: Callable = noop_context_fn, determinism_check: str = "default",
               debug: bool = False, early_stop: bool = True, **kwargs: Any) -> Any:
    """Run ``function(*args)`` without keeping its activations; recompute them in backward.

    >>> import npgrad
    >>> from npgrad.utils.checkpoint import checkpoint
    >>> x = npgrad.tensor([1., 2.], requires_grad=True)
    >>> y = checkpoint(lambda t: (t * t).sin(), x, use_reentrant=False)
    >>> y.sum().backward()
    >>> x.grad.shape
    torch.Size([2])
    """
    if use_reentrant is None:
        warnings.warn(
            "torch.utils.checkpoint: the use_reentrant parameter should be passed explicitly. "
            "Starting in PyTorch 2.9, calling checkpoint without use_reentrant will raise an "
            "exception. use_reentrant=False is recommended, but if you need to preserve the "
            "current default behavior, you can pass use_reentrant=True. Refer to docs for more "
            "details on the differences between the two variants.", stacklevel=2)
        use_reentrant = True
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs and use_reentrant:
        raise ValueError("Unexpected keyword arguments: " + ",".join(arg for arg in kwargs))
    if use_reentrant:
        if context_fn is not noop_context_fn or debug is not False:
            raise ValueError("Passing `context_fn` or `debug` is only supported when "
                             "use_reentrant=False.")
        return CheckpointFunction.apply(function, preserve, *args)
    return _checkpoint_without_reentrant(function, preserve, context_fn, determinism_check,
                                         early_stop, args, kwargs)


@contextlib.contextmanager
def set_checkpoint_early_stop(enable: bool) -> Iterator[None]:
    """Inside, every non-reentrant ``checkpoint`` uses ``early_stop=enable``, whatever it is passed.

    >>> import npgrad
    >>> from npgrad.utils.checkpoint import checkpoint, set_checkpoint_early_stop
    >>> x = npgrad.tensor([1., 2.], requires_grad=True)
    >>> with set_checkpoint_early_stop(False):
    ...     y = checkpoint(lambda t: t.sin().exp(), x, use_reentrant=False)
    >>> y.sum().backward()
    """
    global _early_stop_override
    prev = _early_stop_override
    _early_stop_override = enable
    try:
        yield
    finally:
        _early_stop_override = prev


def checkpoint_sequential(functions: Any, segments: int, input: Any,  # noqa: A002
                          use_reentrant: bool | None = None, **kwargs: Any) -> Any:
    """Checkpoint a chain of functions in ``segments`` pieces (the last runs normally).

    >>> import npgrad
    >>> from npgrad.utils.checkpoint import checkpoint_sequential
    >>> fs = [lambda t: t * 2, lambda t: t.sin(), lambda t: t + 1]
    >>> x = npgrad.tensor([1.], requires_grad=True)
    >>> checkpoint_sequential(fs, 2, x, use_reentrant=False).shape
    torch.Size([1])
    """
    if use_reentrant is None:
        warnings.warn(
            "torch.utils.checkpoint.checkpoint_sequential: the use_reentrant parameter should "
            "be passed explicitly. In version 2.9 we will raise an exception if use_reentrant "
            "is not passed. use_reentrant=False is recommended, but if you need to preserve the "
            "current default behavior, you can pass use_reentrant=True. Refer to docs for more "
            "details on the differences between the two variants.", stacklevel=2)
        use_reentrant = True
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs:
        raise ValueError("Unexpected keyword arguments: " + ",".join(arg for arg in kwargs))

    def run_segment(start: int, end: int) -> Callable:
        def forward(x: Any) -> Any:
            for j in range(start, end + 1):
                x = functions[j](x)
            return x
        return forward

    functions = _as_list(functions)
    size = len(functions) // segments
    end = -1
    for start in range(0, size * (segments - 1), size):
        end = start + size - 1
        input = checkpoint(run_segment(start, end), input, use_reentrant=use_reentrant,
                           preserve_rng_state=preserve)
    return run_segment(end + 1, len(functions) - 1)(input)


def _as_list(functions: Iterable) -> list:
    try:
        from ..nn import Sequential
    except ImportError:  # pragma: no cover - nn is optional for this module
        Sequential = ()  # type: ignore[assignment]
    if Sequential and isinstance(functions, Sequential):
        return list(functions.children())
    return functions  # type: ignore[return-value]
