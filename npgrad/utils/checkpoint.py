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

import contextlib
import warnings
from typing import Any, Callable, Iterable, Iterator

from .. import _creation
from ..autograd import engine
from ..autograd.function import Function
from ..autograd.graph import saved_tensors_hooks
from ..autograd.grad_mode import enable_grad, no_grad

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

class _Frame:
    """One checkpointed call: what is needed to recompute it, and the recomputed tensors."""

    def __init__(self, function: Callable, args: tuple, kwargs: dict, rng_state: Any,
                 preserve_rng_state: bool, recompute_context: Any, determinism_check: str,
                 early_stop: bool):
        self.function = function
        self.early_stop = early_stop
        self.args = args
        self.kwargs = kwargs
        self.rng_state = rng_state
        self.preserve_rng_state = preserve_rng_state
        self.recompute_context = recompute_context
        self.determinism_check = determinism_check
        self.metadata: list = []  # (shape, dtype) of each tensor saved by the forward
        self.recomputed: list | None = None
        self.unpacked: set = set()

    def pack(self, tensor: Any) -> int:
        self.metadata.append((tuple(tensor.shape), tensor.dtype))
        return len(self.metadata) - 1

    def unpack(self, handle: int) -> Any:
        if self.recomputed is None:
            self.recomputed = self._recompute()
            self.unpacked = set()
        value = self.recomputed[handle]
        self.unpacked.add(handle)
        if len(self.unpacked) == len(self.recomputed):
            self.recomputed = None  # every value was used: let them go
        return value

    def _recompute(self) -> list:
        saved: list = []

        # Note [Early stop]: with early_stop the recomputation ends as soon as it has
        # saved as many tensors as the forward did; the rest of the function (often
        # most of it for the last saved tensor) never runs again, as in torch.
        needed = len(self.metadata) if self.early_stop else -1

        def collect(t: Any) -> None:
            saved.append(t.detach() if t.requires_grad else t)
            if len(saved) == needed:
                raise _StopRecomputation

        args = detach_variable(tuple(self.args))
        try:
            with _rng_as_in_forward(self.rng_state, self.preserve_rng_state), enable_grad(), \
                    saved_tensors_hooks(collect, _never_unpacked), self.recompute_context:
                self.function(*args, **self.kwargs)
        except _StopRecomputation:
            pass
        self._check(saved)
        return saved

    def _check(self, saved: list) -> None:
        if len(saved) != len(self.metadata):
            raise CheckpointError(
                "torch.utils.checkpoint: A different number of tensors was saved during the "
                "original forward and recomputation.\n"
                f"Number of tensors saved during forward: {len(self.metadata)}\n"
                f"Number of tensors saved during recomputation: {len(saved)}.")
        if self.determinism_check != "default":
            return
        bad = []
        for i, (t, (shape, dtype)) in enumerate(zip(saved, self.metadata)):
            now = (tuple(t.shape), t.dtype)
            if now != (shape, dtype):
                bad.append(f"tensor at position {i}:\n"
                           f"saved metadata: {{'shape': {shape}, 'dtype': {dtype}}}\n"
                           f"recomputed metadata: {{'shape': {now[0]}, 'dtype': {now[1]}}}\n")
        if bad:
            raise CheckpointError(
                "torch.utils.checkpoint: Recomputed values for the following tensors have "
                "different metadata than during the forward pass.\n" + "".join(bad))


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
    if _early_stop_override is not None:  # captured now: backward may run outside the block
        early_stop = _early_stop_override
    frame = _Frame(function, args, kwargs, rng_state, preserve_rng_state, recompute_context,
                   determinism_check, early_stop)
    with saved_tensors_hooks(frame.pack, frame.unpack), forward_context:
        return function(*args, **kwargs)


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
