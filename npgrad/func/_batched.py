"""BatchedTensor: a value vmap carries through the function, and the dispatcher its ops go to.

Note [Batched values]
Inside a vmapped function every value that depends on a mapped input is a ``BatchedTensor``:
a thin wrapper over one ordinary tensor, its *physical* value, holding every sample at once.
The physical value keeps one leading dimension per vmap level the value is batched at,
outermost level first (``_levels``), then the value's per-sample ("logical") dimensions, so
``shape``, ``dim()`` and ``size()`` report the logical shape the function sees.  Keeping the
batch dims in front makes every rule a small transformation: shift the op's ``dim``
arguments past them, line up the arguments' batch dims (a size-1 dim where an argument is
not batched at a level), run the op once on the physical values, and wrap the output with
the levels it carries.

Autograd runs on the physical values: a rule calls ordinary npgrad ops on ordinary tensors,
so the graph, the backward and every gradient rule are the ones of the unbatched ops, and
``vmap(grad(f))``, ``grad(vmap(f))`` and nested vmaps compose without batching rules for the
backward ops (``grad`` under vmap differentiates with respect to inputs expanded to the
batch, Note [grad under a batched vmap] in ``_transforms``).

Calls reach the dispatcher three ways, none of them on the path of an unbatched op:
* every Tensor method and operator: ``BatchedTensor`` overrides them all (and Python calls
  the reflected operator of a subclass first, so ``plain * batched`` comes here too);
* every function checked by a signature (``npgrad._ops.signature``): its wrapper asks the
  dispatcher only while a batched vmap runs somewhere (one global read otherwise);
* the registry's one-input entries, whose ``type(input) is not Tensor`` test they make anyway.

The dispatcher runs an op's rule (``_batching_rules``) or, for an op without one, torch's
fallback: the op once per sample of the innermost level, results stacked, with torch's
performance warning.  Any other npgrad code that meets a BatchedTensor (it reads ``_data``,
which a BatchedTensor does not have) raises ``VmapFallback``, and vmap runs the whole
function once per sample instead (Note [vmap by slices] in ``_vmap``).

What differs from torch:
* which ops have rules: npgrad's per-op fallback (and its warning) still runs for some ops
  torch has rules for (``index_put``, ``lstsq``, ``unfold``, ``repeat_interleave``,
  ``aminmax``, spatial ``cross_entropy``, ...), and the whole-function fallback runs, without
  a warning, where an op has no dispatch at all (``Tensor.__setitem__`` with an index tensor,
  the in-place forms of the activations, ``meshgrid``, ``block_diag``, a few losses), where
  the samples of an op's output differ in shape (a boolean mask), and for random factories
  under nested vmaps; values are the loop's either way.
* the physical layout: batch dims are always in front.  A vmap's input prints as torch's
  (its ``bdim`` the ``in_dims`` it was given, its value the tensor as given: Note [Printed
  batch dims]); an op's output prints ``bdim=0``, which is torch's for most ops but not all.
* ``type(t)``: a BatchedTensor is a subclass of Tensor, named as Tensor (so ``type(t)``
  prints as a plain tensor's type, as torch's does); ``type(t) is Tensor`` is False, where
  torch's batched tensors are plain ``torch.Tensor`` objects.
* an unbatched output is returned expanded to the batch, as torch's, but the expansion is
  of the output, not a view sharing memory with a captured input.
"""
from __future__ import annotations

import sys
import threading
import warnings
from typing import Any, Callable

from .. import _vmap_mode
from .._ops import signature as _signature
from .._size import Size
from .._tensor import Tensor
from .._vmap_mode import NOT_BATCHED, VMAP, Level, VmapFallback

PERF_MSG = ("There is a performance drop because we have not yet implemented the batching rule "
            "for aten::{name}. Please file us an issue on GitHub so that we can prioritize its "
            "implementation. (Triggered internally at /__w/pytorch/pytorch/aten/src/ATen/"
            "functorch/BatchedFallback.cpp:82.)")
NO_STORAGE_MSG = "Cannot access data pointer of Tensor that doesn't have storage"

# name -> rule(hooked, levels, args, kwargs) -> result or NotImplemented (filled by
# ``_batching_rules``); ``hooked`` is the op as the user called it (it dispatches again)
RULES: dict[str, Callable] = {}


def _no_data(self: Any) -> Any:
    caller = sys._getframe(1).f_code.co_name
    raise VmapFallback(caller)


class BatchedTensor(Tensor):
    """A value batched at one or more vmap levels (Note [Batched values])."""

    __slots__ = ("_value", "_levels", "_bdims")
    _value: Tensor
    _levels: tuple
    _bdims: tuple  # set on a vmap's inputs only: Note [Printed batch dims]

    # npgrad's internals read these slots; a BatchedTensor has none of them
    _data = property(_no_data)  # type: ignore[assignment]
    _grad_fn = property(_no_data)  # type: ignore[assignment]
    _requires_grad = property(_no_data)  # type: ignore[assignment]
    _vc = property(_no_data)  # type: ignore[assignment]
    _base = property(_no_data)  # type: ignore[assignment]
    _grad = property(_no_data)  # type: ignore[assignment]
    _extra = property(_no_data)  # type: ignore[assignment]
    _output_nr = property(_no_data)  # type: ignore[assignment]

    def __new__(cls, *args: Any, **kwargs: Any) -> BatchedTensor:
        raise TypeError("BatchedTensor is made by vmap only")

    # -- logical metadata -------------------------------------------------------------------
    @property
    def shape(self) -> Size:
        return Size(self._value.shape[len(self._levels):])

    def size(self, dim: Any = None) -> Any:
        if dim is None:
            return self.shape
        from .._ops._shape_util import wrap_dim

        logical = self.shape
        return logical[wrap_dim(dim, len(logical))]

    def dim(self) -> int:
        return self._value.dim() - len(self._levels)

    ndimension = dim

    @property
    def ndim(self) -> int:
        return self.dim()

    def numel(self) -> int:
        n = 1
        for s in self.shape:
            n *= s
        return n

    nelement = numel

    @property
    def dtype(self) -> Any:
        return self._value.dtype

    @property
    def device(self) -> Any:
        return self._value.device

    @property
    def is_cuda(self) -> bool:
        return False

    @property
    def layout(self) -> Any:
        return self._value.layout

    @property
    def requires_grad(self) -> bool:
        return self._value.requires_grad

    @requires_grad.setter
    def requires_grad(self, value: bool) -> None:
        self._value.requires_grad = value

    @property
    def grad_fn(self) -> Any:
        return self._value.grad_fn

    @property
    def is_leaf(self) -> bool:
        return self._value.is_leaf

    @property  # type: ignore[misc]  # read-only: a sample's grad is never kept
    def grad(self) -> Any:
        return None

    def is_floating_point(self) -> bool:
        return self._value.is_floating_point()

    def is_complex(self) -> bool:
        return self._value.is_complex()

    def element_size(self) -> int:
        return self._value.element_size()

    def get_device(self) -> int:
        return -1

    def __len__(self) -> int:
        shape = self.shape
        if not shape:
            raise TypeError("len() of a 0-d tensor")
        return shape[0]

    def __iter__(self) -> Any:
        if self.dim() == 0:
            raise TypeError("iteration over a 0-d tensor")
        return iter(self.unbind(0))

    def __hash__(self) -> int:
        return id(self)

    def __repr__(self, *, tensor_contents: Any = None) -> str:  # type: ignore[override]
        # torch prints the wrapper of the innermost level around the next one
        value, bdims = self._torch_layout()
        text = repr(value)
        for level, bdim in zip(self._levels, bdims):
            inner = "\n".join("    " + line if line else line for line in text.split("\n"))
            text = f"BatchedTensor(lvl={level.depth}, bdim={bdim}, value=\n{inner}\n)"
        return text

    def __str__(self, *, tensor_contents: Any = None) -> str:  # type: ignore[override]
        return self.__repr__()  # print(t) inside vmap: torch prints the wrapper too

    def _torch_layout(self) -> tuple:
        """Note [Printed batch dims]: the physical value as torch holds it, and the bdims."""
        k = len(self._levels)
        bdims = getattr(self, "_bdims", None)
        if bdims is None or len(bdims) != k:
            return self._value, (0,) * k
        order = list(range(k, self._value.dim()))
        for j in range(k - 1, -1, -1):  # innermost level first: its dim is in the next one
            if not 0 <= bdims[j] <= len(order):
                return self._value, (0,) * k
            order.insert(bdims[j], j)
        return self._value.permute(order), bdims

    # -- what vmap refuses -------------------------------------------------------------------
    def item(self) -> Any:
        raise RuntimeError(_vmap_mode.ITEM_MSG)

    def __float__(self) -> float:
        raise RuntimeError(_vmap_mode.ITEM_MSG)

    def __int__(self) -> int:
        raise RuntimeError(_vmap_mode.ITEM_MSG)

    def __bool__(self) -> bool:
        raise RuntimeError(_vmap_mode.CONTROL_FLOW_MSG)

    def tolist(self) -> Any:
        raise RuntimeError(NO_STORAGE_MSG)

    def numpy(self, *, force: bool = False) -> Any:
        raise RuntimeError(NO_STORAGE_MSG)

    def __array__(self, dtype: Any = None, copy: Any = None) -> Any:
        raise RuntimeError(NO_STORAGE_MSG)

    def data_ptr(self) -> int:
        raise RuntimeError(NO_STORAGE_MSG)

    def untyped_storage(self) -> Any:
        raise RuntimeError(NO_STORAGE_MSG)

    def __reduce_ex__(self, protocol: Any) -> Any:
        raise RuntimeError(NO_STORAGE_MSG)


# Note [Printed batch dims]
# torch keeps a vmap's input where it was (the batch dim at the ``in_dims`` it was given, a
# level's dim counted in the tensor one level out) and prints it so; npgrad moves every
# batch dim to the front (Note [Batched values]).  A vmap's input remembers its ``in_dims``
# (``_bdims``, one per level, set by ``_vmap._enter``) so that ``repr`` undoes the move; an
# op's output has none and prints ``bdim=0``, where most of torch's rules put it too.
# The class is named as Tensor: ``type(t)`` inside vmap prints as torch's does.

BatchedTensor.__name__ = BatchedTensor.__qualname__ = Tensor.__name__
BatchedTensor.__module__ = Tensor.__module__


def make(value: Tensor, levels: tuple) -> Any:
    """``value`` (batch dims in front, one per level) as the function sees it."""
    if not levels:
        return value
    out = object.__new__(BatchedTensor)
    out._value = value
    out._levels = levels
    return out


# -- dispatch -------------------------------------------------------------------------------

def _levels_of(x: Any, found: dict) -> None:
    if type(x) is BatchedTensor:
        for level in x._levels:
            found[id(level)] = level
    elif type(x) is list or type(x) is tuple:
        for item in x:
            if type(item) is BatchedTensor:
                for level in item._levels:
                    found[id(level)] = level


def _merged_levels(args: tuple, kwargs: dict) -> tuple:
    found: dict = {}
    for a in args:
        _levels_of(a, found)
    if kwargs:
        for a in kwargs.values():
            _levels_of(a, found)
    return tuple(sorted(found.values(), key=lambda level: level.depth))


def batch_levels(args: tuple, kwargs: dict) -> tuple:
    """The levels of the batched arguments, outermost first (empty: nothing is batched).

    Every op called while a batched vmap runs asks this (the backward's ops too), so the
    usual cases stay one pass without allocations: no batched argument, or batched
    arguments that all carry the same levels (the tuples ``make`` passes on)."""
    levels: Any = None
    for a in args:
        kind = type(a)
        if kind is BatchedTensor:
            own = a._levels
            if levels is None:
                levels = own
            elif own is not levels and own != levels:
                return _merged_levels(args, kwargs)
        elif (kind is list or kind is tuple) and a:
            for item in a:
                if type(item) is BatchedTensor:
                    own = item._levels
                    if levels is None:
                        levels = own
                    elif own is not levels and own != levels:
                        return _merged_levels(args, kwargs)
    if kwargs:
        for a in kwargs.values():
            kind = type(a)
            if kind is BatchedTensor or ((kind is list or kind is tuple) and a):
                return _merged_levels(args, kwargs)
    return () if levels is None else levels


def dispatch(hooked: Callable, name: str, args: tuple, kwargs: dict) -> Any:
    """Run op ``name`` (callable as ``hooked(*args, **kwargs)``) on its arguments: its
    batching rule or the fallback when an argument is batched, else ``NOT_BATCHED``."""
    levels = batch_levels(args, kwargs)
    if not levels:
        if name in RANDOM_FACTORIES:
            return random_factory(hooked, name, args, kwargs)
        return NOT_BATCHED
    if is_inplace(name):
        if name in RANDOM_OPS:  # torch refuses 'same' randomness first
            _check_same(name, levels, args, kwargs)
        _check_inplace(name, levels, args)
    rule = RULES.get(name)
    if rule is not None:
        out = rule(hooked, levels, args, kwargs)
        if out is not NotImplemented:
            return out
    return fallback(hooked, name, levels, args, kwargs)


_INPLACE_DUNDERS = frozenset(("__iadd__", "__isub__", "__imul__", "__itruediv__", "__ipow__",
                              "__ifloordiv__", "__imod__", "__iand__", "__ior__", "__ixor__",
                              "__ilshift__", "__irshift__", "__setitem__"))


def is_inplace(name: str) -> bool:
    return (name.endswith("_") and not name.startswith("__")) or name in _INPLACE_DUNDERS


def _check_inplace(name: str, levels: tuple, args: tuple) -> None:
    """torch refuses writing a value batched at a level into a tensor that is not."""
    if not args or not isinstance(args[0], Tensor):
        return
    own = args[0]._levels if type(args[0]) is BatchedTensor else ()
    for level in reversed(levels):  # innermost first, as torch checks
        if level in own:
            continue
        if name in ("add_", "__iadd__"):
            shape = _broadcast_shapes([tuple(a.shape) for a in args if isinstance(a, Tensor)],
                                      level.batch_size)
            raise RuntimeError(f"output with shape {list(args[0].shape)} doesn't match the "
                               f"broadcast shape {list(shape)}")
        op = {"__imul__": "mul_", "__isub__": "sub_", "__itruediv__": "div_",
              "__setitem__": "copy_"}.get(name, name)
        raise RuntimeError(_vmap_mode.inplace_message(op, level.depth))


def _broadcast_shapes(shapes: list, batch: int) -> tuple:
    shapes = [(batch,) + s for s in shapes[1:]] + [shapes[0]]
    n = max(len(s) for s in shapes)
    out = [1] * n
    for s in shapes:
        for i, size in enumerate((1,) * (n - len(s)) + s):
            if size != 1:
                out[i] = size
    return tuple(out)


# -- randomness -----------------------------------------------------------------------------

# Note [Random draws on batched values]
# torch draws a random op under vmap once, on the physical value: randomness='different'
# gives ``torch.rand(B, *shape)`` for ``torch.rand(shape)`` (the samples' numbers one after
# the other), and for ``rand_like(x)``, ``dropout(x)``, ``x.normal_()`` ... the numbers of
# the op on the physical tensor, in its memory order; 'same' draws once, unbatched.
# npgrad's generators are torch's streams, so the same single draws give torch's numbers:
# a factory (no batched argument) draws with the batch size in front ('different') or runs
# as it is ('same'); an op on batched values runs on the physical value ('different': at
# every running level, permuted to its memory order first, so that an input given with
# ``in_dims=1`` is filled as torch fills it) or on one sample's worth ('same': the ``_like``
# ops and the in-place samplers).  torch refuses 'same' where a distribution's parameters
# are batched (``bernoulli(t)``, ``normal(t, 1.)``), and so does npgrad, with its text.
# What this does not cover runs the function by slices (``VmapFallback`` from the draw hook
# in ``npgrad._vmap_mode``): factories under nested levels, levels of mixed modes, values
# not batched at every running level, and ops of other signatures.  One difference remains:
# npgrad's ops return C-contiguous results where torch's keep their input's strides
# (``t.clone()`` of an ``in_dims=1`` input), and a later ``normal_()`` on such a result fills
# it in another order than torch's.

RANDOM_FACTORIES = frozenset(("rand", "randn", "randint", "normal"))
RANDOM_OPS = frozenset(("rand_like", "randn_like", "randint_like", "bernoulli", "bernoulli_",
                        "normal_", "uniform_", "exponential_", "geometric_", "cauchy_",
                        "log_normal_", "random_", "poisson", "multinomial"))


def _only_level() -> Level | None:
    levels = VMAP.levels
    if len(levels) != 1 or not levels[0].batched:
        return None
    return levels[0]


def random_factory(hooked: Callable, name: str, args: tuple, kwargs: dict) -> Any:
    level = _only_level()
    if level is None or "out" in kwargs or level.drawing or level.looping:
        return NOT_BATCHED  # the draw hook decides (by slices); or this rule's own call
    if level.randomness != "different":
        with allowed_draws(level):
            return hooked(*args, **kwargs)
    size_pos = {"rand": 0, "randn": 0, "randint": 2 if len(args) >= 3 else 1, "normal": 2}[name]
    if "size" in kwargs:
        size = kwargs["size"]
        new_args, new_kwargs = args, dict(kwargs, size=(level.batch_size, *size))
    elif name in ("rand", "randn"):
        size = args[0] if len(args) == 1 and isinstance(args[0], (tuple, list)) else args
        new_args, new_kwargs = ((level.batch_size, *size),), kwargs
    elif len(args) > size_pos and isinstance(args[size_pos], (tuple, list)):
        size = args[size_pos]
        new_args = args[:size_pos] + ((level.batch_size, *size),) + args[size_pos + 1:]
        new_kwargs = kwargs
    else:
        return NOT_BATCHED
    if not all(isinstance(s, int) for s in size):
        return NOT_BATCHED
    with allowed_draws(level):
        return make(hooked(*new_args, **new_kwargs), (level,))


SAME_BATCHED_MSG = ("Vmap does not currently support same randomness with a batched tensor "
                    "input. Please file an issue with functorch")
# the random ops whose first argument's values (not only its shape) shape the draw
_DRAWS_FROM_VALUES = frozenset(("bernoulli", "poisson", "multinomial", "normal"))


def _check_same(name: str, levels: tuple, args: tuple, kwargs: dict) -> None:
    """randomness='same' draws one sample for every sample: torch refuses it when the
    distribution's parameters are batched (in-place: an argument other than ``self``)."""
    if not any(level.randomness == "same" for level in levels):
        return
    params = args[1:] if is_inplace(name) else args
    if name.endswith("_like") and not is_inplace(name):
        params = args[1:]
    for a in (*params, *kwargs.values()):
        if type(a) is BatchedTensor and any(level.randomness == "same" for level in a._levels):
            raise RuntimeError(SAME_BATCHED_MSG)


def _memory_order(value: Tensor) -> tuple | None:
    """The permutation that lists ``value``'s dims outermost in memory first (None when it is
    C-contiguous already): torch's samplers fill a tensor in its memory order."""
    strides = value.stride()
    order = tuple(sorted(range(len(strides)), key=lambda i: -strides[i]))
    if order == tuple(range(len(strides))) or not value.permute(order).is_contiguous():
        return None
    return order


def random_op(hooked: Callable, levels: tuple, args: tuple, kwargs: dict) -> Any:
    """A random op on batched values: once on the physical value ('different'), filled in
    the physical value's memory order as torch fills its own (Note [Random draws ...])."""
    name = getattr(hooked, "__name__", "")
    if any(level.randomness == "error" for level in VMAP.levels):
        raise RuntimeError(_vmap_mode.RANDOM_ERROR_MSG)
    _check_same(name, levels, args, kwargs)
    running = tuple(VMAP.levels)
    if levels != running or not all(level.batched for level in running) or \
            any(level.randomness != running[0].randomness for level in running):
        # a value not batched at every running level, or levels of mixed modes: the
        # function runs by slices (no per-op fallback, so no warning: torch gives none)
        raise VmapFallback(name)
    if any(type(a) is BatchedTensor for a in args[1:]) or \
            any(type(v) is BatchedTensor for v in kwargs.values()):
        raise VmapFallback(name)
    self = args[0]
    if type(self) is not BatchedTensor:
        raise VmapFallback(name)
    value = self._value
    first = (0,) * len(levels)
    if running[0].randomness == "same":  # one draw, of one sample's shape, for every sample
        if not (name.endswith("_like") or is_inplace(name)):
            raise VmapFallback(name)
        with allowed_draws(*levels):
            if not is_inplace(name):
                return hooked(value[first], *args[1:], **kwargs)
            sample = value[first].clone()
            hooked(sample, *args[1:], **kwargs)
        value.copy_(sample.expand(value.shape))
        return self
    plain = not any(isinstance(a, Tensor) for a in (*args[1:], *kwargs.values()))
    order = _memory_order(value) if plain and (name.endswith("_like") or is_inplace(name)) \
        else None
    if order is not None:
        value = value.permute(order)
    with allowed_draws(*levels):
        out = hooked(value, *args[1:], **kwargs)
    if is_inplace(name):
        return self
    if order is not None:
        inverse = [0] * len(order)
        for i, d in enumerate(order):
            inverse[d] = i
        out = out.permute(inverse)
    return wrap_out(out, levels)


class allowed_draws:
    """Draws made by the batched-randomness rules: the draw hook lets them through."""

    __slots__ = ("levels",)

    def __init__(self, *levels: Level) -> None:
        self.levels = levels

    def __enter__(self) -> None:
        for level in self.levels:
            level.drawing += 1

    def __exit__(self, *exc: Any) -> None:
        for level in self.levels:
            level.drawing -= 1


# -- moving between logical and physical ----------------------------------------------------

def physical(x: Any, levels: tuple, rank: int | None = None) -> Any:
    """``x`` with exactly ``levels`` leading batch dims (size 1 where it is not batched) and,
    given ``rank``, size-1 logical dims in front of its own up to that logical rank."""
    if not isinstance(x, Tensor):
        return x
    if type(x) is BatchedTensor:
        value, own = x._value, x._levels
    else:
        value, own = x, ()
    logical = tuple(value.shape[len(own):])
    pad = 0 if rank is None else rank - len(logical)
    if own == levels and pad <= 0:
        return value
    sizes = tuple(value.shape[own.index(level)] if level in own else 1 for level in levels)
    return value.reshape(sizes + (1,) * max(pad, 0) + logical)


def full_physical(x: Any, levels: tuple) -> Any:
    """``x`` with ``levels`` leading batch dims of their full sizes (an expanded view)."""
    sizes = tuple(level.batch_size for level in levels)
    if type(x) is not BatchedTensor:  # expand puts the new leading dims in itself
        return x.expand(sizes + tuple(x.shape))
    value = physical(x, levels)
    if tuple(value.shape[:len(levels)]) == sizes:
        return value
    return value.expand(sizes + tuple(value.shape[len(levels):]))


def logical_dim(x: Any) -> int:
    return x.dim()


def wrap_out(out: Any, levels: tuple) -> Any:
    """An op's physical output(s), each with ``levels`` leading batch dims, as batched values."""
    if isinstance(out, Tensor):
        return make(out, levels)
    if isinstance(out, (tuple, list)):
        items = [wrap_out(o, levels) for o in out]
        return _rebuild(out, items)
    return out


def _rebuild(like: Any, items: list) -> Any:
    if type(like) is list:
        return items
    if type(like) is tuple:
        return tuple(items)
    make_ = getattr(type(like), "_make", None)
    return make_(items) if make_ is not None else type(like)(items)


# -- the fallback ---------------------------------------------------------------------------

def slice_at(x: Any, level: Level, b: int) -> Any:
    """Sample ``b`` of ``x`` at ``level`` (still batched at its other levels)."""
    if type(x) is BatchedTensor:
        if level not in x._levels:
            return x
        pos = x._levels.index(level)
        rest = x._levels[:pos] + x._levels[pos + 1:]
        return make(x._value.select(pos, b), rest)
    if type(x) is list or type(x) is tuple:
        if any(type(i) is BatchedTensor for i in x):
            return type(x)(slice_at(i, level, b) for i in x)
    return x


def warn_fallback(name: str) -> None:
    warnings.warn(PERF_MSG.format(name=name.strip("_") if name.startswith("__") else name),
                  UserWarning, stacklevel=4)


def fallback(hooked: Callable, name: str, levels: tuple, args: tuple, kwargs: dict) -> Any:
    """torch's slow path for an op without a rule: once per sample of the innermost level."""
    level = levels[-1]
    warn_fallback(name)
    outs = []
    level.looping += 1  # a draw in here is per sample: by slices (Note [Random draws ...])
    try:
        for b in range(level.batch_size):
            a = tuple(slice_at(x, level, b) for x in args)
            k = {key: slice_at(v, level, b) for key, v in kwargs.items()} if kwargs else {}
            outs.append(hooked(*a, **k))
    finally:
        level.looping -= 1
    if is_inplace(name) and args and outs and all(o is slice_at(args[0], level, 0) or
                                                   isinstance(o, Tensor) for o in outs[:1]):
        return args[0]
    if level.batch_size == 0:
        raise VmapFallback(name)  # no sample to learn the output's shape from
    return stack_outputs(outs, level)


def stack_outputs(outs: list, level: Level) -> Any:
    first = outs[0]
    if isinstance(first, Tensor):
        shape = first.shape
        if any(not isinstance(o, Tensor) or o.shape != shape for o in outs[1:]):
            # samples of different shapes (a boolean mask's selection): no batched value
            # holds them, but the function by slices may reduce them to one shape
            raise VmapFallback("outputs of different shapes")
        levels = batch_levels(tuple(outs), {})
        phys = [full_physical(o, levels) for o in outs]
        from .._ops.shape import stack

        return make(stack(phys, len(levels)), levels + (level,))
    if isinstance(first, (tuple, list)) and first and all(isinstance(o, Tensor) for o in first):
        items = [stack_outputs([o[i] for o in outs], level) for i in range(len(first))]
        return _rebuild(first, items)
    if all(o == first for o in outs[1:]):
        return first
    raise VmapFallback("a value that differs between samples")


# -- enabling the hooks ---------------------------------------------------------------------

_ACTIVE = [0]
_LOCK = threading.Lock()


def enable() -> None:
    """A batched vmap starts (in any thread): signature-checked functions ask ``dispatch``."""
    with _LOCK:
        _ACTIVE[0] += 1
        _signature.set_vmap_dispatch(dispatch)


def disable() -> None:
    with _LOCK:
        _ACTIVE[0] -= 1
        if not _ACTIVE[0]:
            _signature.set_vmap_dispatch(None)


def any_batched_level() -> bool:
    return any(level.batched for level in VMAP.levels)


# -- every Tensor method and operator of a BatchedTensor dispatches --------------------------

_KEEP = frozenset(vars(BatchedTensor)) | frozenset((
    "__new__", "__init__", "__init_subclass__", "__getattribute__", "__setattr__",
    "__delattr__", "__class__", "__dir__", "__sizeof__", "__subclasshook__", "__slots__",
    "__weakref__", "__dict__", "__module__", "__doc__", "__format__", "__class_getitem__",
    "__copy__", "__deepcopy__", "__getstate__", "__setstate__", "__reduce__",
    "__array_priority__", "__annotations__", "__qualname__"))


def _method(name: str, fn: Callable) -> Callable:
    def method(*args: Any, **kwargs: Any) -> Any:
        out = dispatch(method, name, args, kwargs)
        if out is NOT_BATCHED:
            return fn(*args, **kwargs)
        return out
    method.__name__ = name
    method.__qualname__ = f"BatchedTensor.{name}"
    method.__doc__ = fn.__doc__
    return method


def _property(name: str, prop: property) -> property:
    def get(self: Any) -> Any:
        out = dispatch(get_dispatch, name, (self,), {})
        return prop.fget(self) if out is NOT_BATCHED else out  # type: ignore[misc]

    def get_dispatch(x: Any) -> Any:
        return getattr(x, name)
    get_dispatch.__name__ = name
    return property(get)


def _install() -> None:
    seen: set = set()
    for klass in Tensor.__mro__:
        if klass is object:
            continue
        for name, attr in vars(klass).items():
            if name in seen or name in _KEEP:
                continue
            seen.add(name)
            if isinstance(attr, property):
                if attr.fget is not None:
                    setattr(BatchedTensor, name, _property(name, attr))
            elif isinstance(attr, (staticmethod, classmethod)):
                continue
            elif callable(attr):
                setattr(BatchedTensor, name, _method(name, attr))


_install()
