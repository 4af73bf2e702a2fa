"""The thread-local stack of active vmap levels, and the checks ops make against it.

This module sits at the bottom of the import graph (it imports nothing from npgrad) so that
the sampling entry point (``Generator._words``), in-place ops and ``Tensor.item`` can ask
"is a vmap running?" with one attribute read: ``VMAP.depth`` is 0 outside every vmap.
The transform itself lives in ``npgrad.func._vmap``; see Note [vmap by slices] there.
"""
from __future__ import annotations

import threading
from typing import Any

ITEM_MSG = (
    "vmap: It looks like you're calling .item() on a Tensor. We don't support vmap over "
    "calling .item() on a Tensor, please try to rewrite what you're doing with other "
    "operations. If error is occurring somewhere inside PyTorch internals, please file a bug "
    "report."
)
CONTROL_FLOW_MSG = (
    "vmap: It looks like you're attempting to use a Tensor in some data-dependent control "
    "flow. We don't support that yet, please file an issue at "
    "https://github.com/pytorch/pytorch/issues ."
)
RANDOM_ERROR_MSG = (
    "vmap: called random operation while in randomness error mode. Please either use the "
    "'same' or 'different' randomness flags on vmap or perform the randomness operation out "
    "of vmap"
)
# In-place refusals: torch's text names the op three ways (Note [In-place refusals]).
_INPLACE_TEMPLATE = (
    "vmap: {name}(self, *extra_args) is not possible because there exists a Tensor `other` in "
    "extra_args that has more elements than `self`. This happened due to `other` being "
    "vmapped over but `self` not being vmapped over {where}. Please try to use out-of-place "
    "operators instead of {name}. If said operator is being called inside the PyTorch "
    "framework, please file a bug report instead."
)
# Note [In-place refusals]
# torch's binary arithmetic (mul_, div_, copy_, and setitem, a copy_) says "inplace
# arithmetic ... in a vmap"; ops with their own batching rule say their name "... in a
# vmap"; ops on torch's slow fallback say "aten::<name> ... at level <n>".  add_ broadcasts
# first and fails on the shapes.
_ARITHMETIC = frozenset(("", "mul_", "div_", "sub_", "copy_", "multiply", "divide",
                         "true_divide", "subtract", "mul", "div", "sub"))
_OWN_RULE = frozenset(("index_add_", "scatter_add_", "scatter_reduce_", "index_put_",
                       "index_fill_", "fill_"))
# npgrad's helper -> the torch op it is
_TORCH_NAMES = {"_index_put_": "index_put_", "_fill_value_": "fill_"}


def inplace_message(op_name: str, level: int) -> str:
    op_name = _TORCH_NAMES.get(op_name, op_name)
    if op_name in _ARITHMETIC:
        return _INPLACE_TEMPLATE.format(name="inplace arithmetic", where="in a vmap")
    if op_name in _OWN_RULE:
        return _INPLACE_TEMPLATE.format(name=op_name, where="in a vmap")
    return _INPLACE_TEMPLATE.format(name=f"aten::{op_name}", where=f"at level {level}")


# What the batched-value dispatcher (npgrad.func._batched) answers for a call none of whose
# arguments is batched: the op runs as usual.
NOT_BATCHED = object()


class VmapFallback(BaseException):
    """Raised where a vmapped function meets what batched values cannot do (npgrad code that
    reads a BatchedTensor's data, a random draw that must be per sample): vmap then runs the
    function once per sample (Note [Batched values] in npgrad.func._batched).  A
    BaseException, so that a user's ``except Exception`` inside the function lets it pass."""


class Level:
    """One running vmap: its batch size, randomness mode and the slices it handed out."""

    __slots__ = ("batch_size", "randomness", "slices", "roots", "captured", "rng_snapshots",
                 "depth", "batched", "drawing", "looping")

    def __init__(self, batch_size: int, randomness: str, batched: bool = False) -> None:
        self.batch_size = batch_size
        self.randomness = randomness
        self.depth = 0  # torch's level number (1 for the outermost vmap), set by push
        self.batched = batched  # runs the function once, on BatchedTensors
        self.drawing = 0  # > 0 while a batched rule draws random numbers
        self.looping = 0  # > 0 while an op without a rule runs once per sample
        self.rng_snapshots: dict[int, tuple] = {}
        self.slices: dict[int, Any] = {}  # id -> tensor (kept alive, so ids stay unique)
        # id -> the storage-owning tensor of a sliced input: views of a slice (expand,
        # reshape, ...) name it as their ``_base``, as torch's views name their root
        self.roots: dict[int, Any] = {}
        # id -> tensor the function reaches from outside (Note [Captured tensors])
        self.captured: dict[int, Any] = {}

    def add_slice(self, s: Any) -> None:
        self.slices[id(s)] = s
        root = getattr(s, "_base", None)
        if root is not None:
            self.roots[id(root)] = root
        # randomness='same': generator -> its state when this level first drew from it
        self.rng_snapshots = {}


class _VmapState(threading.local):
    def __init__(self) -> None:
        self.depth = 0
        self.levels: list[Level] = []


VMAP = _VmapState()


def push(level: Level) -> None:
    VMAP.levels.append(level)
    level.depth = len(VMAP.levels)
    VMAP.depth = len(VMAP.levels)


def pop() -> None:
    VMAP.levels.pop()
    VMAP.depth = len(VMAP.levels)


def batched_level(t: Any) -> Level | None:
    """The innermost level that ``t`` (or the tensor it is a view of) is a slice of."""
    base = getattr(t, "_base", None)
    for level in reversed(VMAP.levels):
        if level.slices.get(id(t)) is t:
            return level
        if base is not None and (level.slices.get(id(base)) is base
                                 or level.roots.get(id(base)) is base):
            return level
    return None


def check_item(t: Any) -> None:
    if batched_level(t) is not None:
        raise RuntimeError(ITEM_MSG)


def check_control_flow(t: Any) -> None:
    if batched_level(t) is not None:
        raise RuntimeError(CONTROL_FLOW_MSG)


# Note [Captured tensors]
# torch refuses an in-place write into an unbatched tensor when an argument is batched.  In
# the per-slice fallback only the tensors the function reaches from outside are known to be
# unbatched: the inputs with in_dim None, and the tensors its closure cells and the globals
# it names hold (a tensor created inside the function is unknown, since npgrad's own ops
# write into fresh buffers too, so writes into those are allowed: they compute what the loop
# computes).  A write into a captured tensor (or a view of one) with a batched argument is
# refused with torch's text.

def _captured_at(t: Any, level: Level) -> bool:
    if level.captured.get(id(t)) is t:
        return True
    base = getattr(t, "_base", None)
    return base is not None and level.captured.get(id(base)) is base


def check_inplace(self: Any, others: tuple, op_name: str = "") -> None:
    """In-place on a captured tensor, with a batched argument: torch's refusal."""
    levels = VMAP.levels
    for depth in range(len(levels) - 1, -1, -1):  # innermost first, as torch checks
        level = levels[depth]
        if not _captured_at(self, level):
            continue
        for other in others:
            inner = batched_level(other)
            if inner is None or levels.index(inner) < depth:
                continue
            if op_name in ("add_", "add"):
                # torch's add_ batching rule broadcasts first and reports the shapes
                shape = _broadcast((inner.batch_size,) + tuple(other.shape), tuple(self.shape))
                raise RuntimeError(f"output with shape {list(self.shape)} doesn't match the "
                                   f"broadcast shape {list(shape)}")
            raise RuntimeError(inplace_message(op_name, depth + 1))


def check_batched_write(self: Any, value: Any, op_name: str, index: Any = None) -> None:
    """A value batched at a level written into a tensor that is not (Note [Batched values] in
    npgrad.func._batched): torch's refusal, before any element is written.  ``self[index] =
    value`` is torch's ``copy_``, or its ``index_put_`` for an index with tensors or lists."""
    levels = getattr(value, "_levels", None)  # a BatchedTensor's levels; plain tensors have none
    if not levels:
        return
    if index is not None:
        items = index if type(index) is tuple else (index,)
        if any(isinstance(i, list) or hasattr(i, "_levels") or hasattr(i, "_data")
               for i in items):
            op_name = "index_put_"
    own = getattr(self, "_levels", ())
    for level in reversed(levels):  # innermost first, as torch checks
        if level not in own:
            raise RuntimeError(inplace_message(op_name, level.depth))


def _broadcast(a: tuple, b: tuple) -> tuple:
    n = max(len(a), len(b))
    a = (1,) * (n - len(a)) + a
    b = (1,) * (n - len(b)) + b
    return tuple(x if y == 1 else y for x, y in zip(a, b))


def on_random_draw(gen: Any) -> None:
    """Called by ``Generator._words`` while a vmap runs: apply each level's randomness mode."""
    for level in VMAP.levels:
        if level.randomness == "error":
            raise RuntimeError(RANDOM_ERROR_MSG)
    for level in VMAP.levels:
        if level.batched and (not level.drawing or level.looping):
            # a draw no batched rule made (Note [Random draws on batched values] in
            # npgrad.func._batched): the function runs by slices
            raise VmapFallback("random")
    for level in VMAP.levels:
        if level.randomness == "same" and id(gen) not in level.rng_snapshots:
            level.rng_snapshots[id(gen)] = (gen, (gen._engine().state, gen._fresh,
                                                  gen._normal_double, gen._normal_float))


def restore_same_randomness(level: Level) -> None:
    """Start a slice of a randomness='same' level from the states its first slice drew from."""
    for gen, (engine_state, fresh, normal_double, normal_float) in level.rng_snapshots.values():
        gen._engine().state = engine_state
        gen._fresh = fresh
        gen._normal_double = normal_double
        gen._normal_float = normal_float
