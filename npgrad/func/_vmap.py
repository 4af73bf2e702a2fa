"""``vmap``: map a function over a dimension of its inputs, with torch's semantics and errors.

Note [vmap by slices]
vmap has two ways to run a function.  The first, tried first, is torch's: the function runs
once, on BatchedTensors, and every op it calls runs once over the whole batch by its batching
rule, or by torch's per-op fallback with torch's performance warning (Note [Batched values]
in ``npgrad.func._batched``).  When the function does something batched values cannot do in
npgrad -- npgrad code that has no dispatch reads a BatchedTensor's data, a forward-mode
transform runs inside, a random draw the batched rules do not cover -- the batched run stops
(``VmapFallback``) and the second way runs: once per batch slice, the per-slice outputs
stacked at ``out_dims``.  A batched run that stops has run part of the function: a Python
side effect before the stop (a print, an append) happens once more on the slices.

The slices are exact for values, dtypes, shapes and gradients (the slices are views of the
inputs and ``stack`` is differentiable, so ``vmap(grad(f))``, ``grad(vmap(f))`` and nested
vmaps compose), and ``chunk_size`` cannot change a result.  What they differ in from torch:
* which tensors are batched: the slices vmap hands to the function and views of them
  (``Level.slices``); torch's refusals of ``.item()`` and of data-dependent control flow are
  raised for those, not for values computed from them.
* in-place writes: a write of a slice into a captured tensor (Note [Captured tensors] in
  ``npgrad._vmap_mode``) is refused with torch's text (Note [In-place refusals]); a write
  into a tensor made inside the function is done per slice, as the loop would.
* ``out_dims=None`` for an output: an output equal in every slice counts as unbatched.
* randomness: 'error' raises torch's error on the first draw; 'same' restores, before each
  slice, the generator states of the first slice; 'different' lets the slices draw one after
  the other (torch's numbers wherever one draw of ``(B, *shape)`` gives the numbers of B
  draws of ``shape``, which torch's vectorized normal sampler does not).
* a batch of size 0 runs the function once on zero-filled slices to learn the output shapes
  (the batched run needs no sample, but the per-op fallback does, so size 0 goes by slices).
* speed is a loop's.
"""
from __future__ import annotations

import functools
from typing import Any, Callable

from .. import _vmap_mode
from .._tensor import Tensor
from .._vmap_mode import Level, VmapFallback
from . import _batched
from ._batched import BatchedTensor
from ._pytree import broadcast_prefix, tree_flatten, tree_unflatten

RANDOMNESS = ("error", "different", "same")


def register_batching_rule(*names: str) -> Callable:
    """Register ``rule(hooked, levels, args, kwargs)`` as the batching rule of the ops
    ``names`` (see ``npgrad.func._batching_rules``)."""
    def register(fn: Callable) -> Callable:
        for name in names:
            _batched.RULES[name] = fn
        return fn
    return register


def func_name(func: Any) -> str:
    name = getattr(func, "__name__", None)
    if name is None and isinstance(func, functools.partial):
        return f"functools.partial({func_name(func.func)}, ...)"
    return name if name is not None else repr(func)


def check_randomness(randomness: Any) -> None:
    if randomness not in RANDOMNESS:
        raise RuntimeError("Only allowed values for randomness are 'error', 'different', or "
                           f"'same'. Got {randomness}")


def vmap(func: Callable, in_dims: Any = 0, out_dims: Any = 0, randomness: str = "error", *,
         chunk_size: int | None = None) -> Callable:
    """Vectorize ``func`` over dimension ``in_dims`` of its inputs (see Note [vmap by slices]).

    >>> import npgrad
    >>> from npgrad.func import vmap
    >>> vmap(lambda row: row.sum())(npgrad.tensor([[1., 2.], [3., 4.]]))
    tensor([3., 7.])
    """
    check_randomness(randomness)
    if isinstance(chunk_size, int) and chunk_size <= 0:
        raise ValueError(f"vmap: chunk_size should be None or greater than 0. (got "
                         f"{chunk_size})")

    @functools.wraps(func)
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        return vmap_call(func, in_dims, out_dims, randomness, chunk_size, args, kwargs)

    return wrapped


def _flat_in_dims(func: Callable, in_dims: Any, args: tuple) -> tuple[list, list, Any]:
    name = func_name(func)
    if not isinstance(in_dims, (int, tuple)) or isinstance(in_dims, bool):
        raise ValueError(f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): expected `in_dims` "
                         "to be int or a (potentially nested) tuple matching the structure of "
                         f"inputs, got: {type(in_dims)}.")
    if len(args) == 0:
        raise ValueError(f"vmap({name})(<inputs>): got no inputs. Maybe you forgot to add "
                         "inputs, or you are trying to vmap over a function with no inputs. "
                         "The latter is unsupported.")
    flat_args, spec = tree_flatten(args)
    flat_dims = broadcast_prefix(in_dims, spec)
    if flat_dims is None:
        raise ValueError(
            f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): in_dims is not compatible with "
            f"the structure of `inputs`. in_dims has structure {tree_flatten(in_dims)[1]} but "
            f"inputs has structure {spec}.")
    for arg, d in zip(flat_args, flat_dims):
        if d is None:
            continue
        if not isinstance(d, int) or isinstance(d, bool):
            raise ValueError(f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): Got in_dim={d} "
                             "for an input but in_dim must be either an integer dimension or "
                             "None.")
        if not isinstance(arg, Tensor):
            raise ValueError(
                f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): Got in_dim={d} for an input "
                f"but the input is of type {type(arg)}. We cannot vmap over non-Tensor "
                "arguments, please use None as the respective in_dim")
        n = arg.dim()
        if not -n <= d < n:
            raise ValueError(
                f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): Got in_dim={d} for some "
                f"input, but that input is a Tensor of dimensionality {n} so expected in_dim "
                f"to satisfy -{n} <= in_dim < {n}.")
    dims = [None if d is None else d % a.dim() for a, d in zip(flat_args, flat_dims)]
    return flat_args, dims, spec


def _batch_size(flat_args: list, flat_dims: list) -> int:
    sizes = [a.shape[d] for a, d in zip(flat_args, flat_dims) if d is not None]
    if not sizes:
        raise ValueError("vmap: Expected at least one Tensor to vmap over")
    if any(s != sizes[0] for s in sizes):
        raise ValueError("vmap: Expected all tensors to have the same size in the mapped "
                         f"dimension, got sizes {sizes} for the mapped dimension")
    return sizes[0]


def _check_out_dims(func: Callable, out_dims: Any) -> None:
    leaves, _ = tree_flatten(out_dims)
    if any(not (d is None or (isinstance(d, int) and not isinstance(d, bool)))
           for d in leaves):
        raise ValueError(
            f"vmap({func_name(func)}, ..., out_dims={out_dims}): `out_dims` must be an int, "
            "None or a python collection of ints representing where in the outputs the "
            "vmapped dimension should appear.")


def vmap_call(func: Callable, in_dims: Any, out_dims: Any, randomness: str,
              chunk_size: int | None, args: tuple, kwargs: dict) -> Any:
    if chunk_size is not None and not isinstance(chunk_size, int):  # torch's chunking fails
        raise TypeError(f"can't multiply sequence by non-int of type "
                        f"'{type(chunk_size).__name__}'")
    _check_out_dims(func, out_dims)
    flat_args, flat_dims, spec = _flat_in_dims(func, in_dims, args)
    batch = _batch_size(flat_args, flat_dims)
    if batch and not _slices_only(func):
        try:
            if chunk_size is None or chunk_size >= batch:
                return _batched_run(func, out_dims, randomness, batch, flat_args, flat_dims,
                                    spec, kwargs)
            return _chunked(func, out_dims, randomness, batch, flat_args, flat_dims, spec,
                            kwargs, chunk_size)
        except VmapFallback as stop:
            if any(level.batched for level in _vmap_mode.VMAP.levels):
                raise stop  # an outer level runs batched too: it starts over by slices
    return _by_slices(func, out_dims, randomness, batch, flat_args, flat_dims, spec, kwargs)


def _slices_only(func: Callable) -> bool:
    """Functions known to need per-sample runs (forward-mode transforms, Note [Batched
    values]): they go by slices at once."""
    return getattr(func, "_vmap_by_slices", False)


def _batched_run(func: Callable, out_dims: Any, randomness: str, batch: int, flat_args: list,
                 flat_dims: list, spec: Any, kwargs: dict) -> Any:
    """Note [Batched values]: the function runs once, on BatchedTensors of a new level."""
    level = Level(batch, randomness, batched=True)
    _vmap_mode.push(level)
    _batched.enable()
    try:
        entered = [a if d is None else _enter(a, d, level) for a, d in zip(flat_args, flat_dims)]
        out = func(*tree_unflatten(entered, spec), **kwargs)
        flat_out, out_spec = tree_flatten(out)
        flat_out_dims = _flat_out_dims(func, out_dims, out_spec)
        results = [_exit(func, o, level, d) for o, d in zip(flat_out, flat_out_dims)]
    finally:
        _batched.disable()
        _vmap_mode.pop()
    return tree_unflatten(results, out_spec)


def _enter(a: Tensor, d: int, level: Level) -> Tensor:
    """Input ``a``, mapped over its (logical) dim ``d``, as a value batched at ``level``."""
    if type(a) is BatchedTensor:
        k = len(a._levels)
        out = _batched.make(a._value.movedim(k + d, k), a._levels + (level,))
        out._bdims = getattr(a, "_bdims", (0,) * k) + (d,)  # Note [Printed batch dims]
        return out
    out = _batched.make(a.movedim(d, 0) if d else a, (level,))
    out._bdims = (d,)
    return out


def _exit(func: Callable, o: Any, level: Level, d: Any) -> Any:
    """Output ``o`` of the function with ``level``'s batch dim at (logical) dim ``d``."""
    batched = type(o) is BatchedTensor and level in o._levels
    if batched and d == 0 and o._levels[-1] is level:  # the usual case: nothing to move
        return _batched.make(o._value, o._levels[:-1])
    name = func_name(func)
    if d is None:
        if batched:
            raise ValueError(f"vmap({name}, ...): `{name}` can not return a BatchedTensor when "
                             "out_dim is None")
        return o
    if not isinstance(o, Tensor):
        raise ValueError(f"vmap({name}, ...): `{name}` must only return Tensors, got type "
                         f"{type(o)}. Did you mean to set out_dims= to None for output?")
    if not batched:  # the same for every sample: torch returns it expanded to the batch
        o = _batched.make(_batched.full_physical(o, (level,)) if type(o) is not BatchedTensor
                          else _batched.full_physical(o, o._levels + (level,)),
                          (o._levels if type(o) is BatchedTensor else ()) + (level,))
    rest = o._levels[:-1]
    k = len(rest)
    rank = o.dim() + 1
    if not -rank <= d < rank:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-rank}, "
                         f"{rank - 1}], but got {d})")
    value = o._value if d % rank == 0 else o._value.movedim(k, k + d % rank)
    return _batched.make(value, rest)


def _chunked(func: Callable, out_dims: Any, randomness: str, batch: int, flat_args: list,
             flat_dims: list, spec: Any, kwargs: dict, chunk_size: int) -> Any:
    from .._ops.shape import cat

    pieces = []
    for start in range(0, batch, chunk_size):
        n = min(chunk_size, batch - start)
        chunk = [a if d is None else a.narrow(d, start, n) for a, d in zip(flat_args, flat_dims)]
        pieces.append(tree_flatten(_batched_run(func, out_dims, randomness, n, chunk, flat_dims,
                                                spec, kwargs)))
    out_spec = pieces[0][1]
    flat_out_dims = _flat_out_dims(func, out_dims, out_spec)
    joined = []
    for i, d in enumerate(flat_out_dims):
        values = [p[0][i] for p in pieces]
        joined.append(values[0] if d is None else cat(values, d))
    return tree_unflatten(joined, out_spec)


def _flat_out_dims(func: Callable, out_dims: Any, out_spec: Any) -> list:
    flat = broadcast_prefix(out_dims, out_spec)
    if flat is None:
        raise ValueError(
            f"vmap({func_name(func)}, ..., out_dims={out_dims})(<inputs>): out_dims is not "
            "compatible with the structure of `outputs`. out_dims has structure "
            f"{tree_flatten(out_dims)[1]} but outputs has structure {out_spec}.")
    return flat


def _by_slices(func: Callable, out_dims: Any, randomness: str, batch: int, flat_args: list,
               flat_dims: list, spec: Any, kwargs: dict) -> Any:
    """The fallback of Note [vmap by slices]: one call per slice, outputs stacked."""
    level = Level(batch, randomness)
    _capture(level, func, flat_args, flat_dims)
    per_slice: list = []
    out_spec = tree_flatten(None)[1]
    _vmap_mode.push(level)
    try:
        for b in range(max(batch, 1)):
            if b and randomness == "same":
                _vmap_mode.restore_same_randomness(level)
            sliced = []
            for a, d in zip(flat_args, flat_dims):
                if d is None:
                    sliced.append(a)
                    continue
                s = a.select(d, b) if batch else _zero_slice(a, d)
                level.add_slice(s)
                sliced.append(s)
            out = func(*tree_unflatten(sliced, spec), **kwargs)
            flat_out, out_spec = tree_flatten(out)
            per_slice.append(flat_out)
            level.slices.clear()
            level.roots.clear()
    finally:
        _vmap_mode.pop()
    flat_out_dims = _flat_out_dims(func, out_dims, out_spec)
    name = func_name(func)
    results = []
    for i, d in enumerate(flat_out_dims):
        values = [flat[i] for flat in per_slice]
        first = values[0]
        if d is None:
            if isinstance(first, Tensor) and any(not _same(first, v) for v in values[1:]):
                raise ValueError(f"vmap({name}, ...): `{name}` can not return a BatchedTensor "
                                 "when out_dim is None")
            results.append(first)
            continue
        if not isinstance(first, Tensor):
            raise ValueError(f"vmap({name}, ...): `{name}` must only return Tensors, got type "
                             f"{type(first)}. Did you mean to set out_dims= to None for output?")
        results.append(_stack(values, d, batch))
    return tree_unflatten(results, out_spec)


def _capture(level: Level, func: Any, flat_args: list, flat_dims: list) -> None:
    """Note [Captured tensors] in npgrad._vmap_mode: what ``func`` reaches from outside."""
    for a, d in zip(flat_args, flat_dims):
        if d is None and isinstance(a, Tensor):
            level.captured[id(a)] = a
    seen: set = set()
    todo = [(func, 0)]
    while todo:
        f, depth = todo.pop()
        if id(f) in seen:
            continue
        seen.add(id(f))
        if isinstance(f, functools.partial):
            todo.append((f.func, depth))
            values = list(f.args) + list(f.keywords.values())
        else:
            f = getattr(f, "__func__", f)  # bound methods
            code = getattr(f, "__code__", None)
            if code is None:
                continue
            values = [c.cell_contents for c in (getattr(f, "__closure__", None) or ())
                      if _has_contents(c)]
            names = getattr(f, "__globals__", {})
            values += [names[n] for n in code.co_names if n in names]
        for v in values:
            if isinstance(v, Tensor):
                level.captured[id(v)] = v
            elif isinstance(v, dict) and len(v) < 64:  # a dict of tensors in a closure
                level.captured.update((id(x), x) for x in v.values() if isinstance(x, Tensor))
            elif depth < 2 and getattr(v, "__code__", None) is not None \
                    and not (getattr(v, "__module__", None) or "").startswith("npgrad"):
                todo.append((v, depth + 1))  # the user's helpers the function calls


def _has_contents(cell: Any) -> bool:
    try:
        return cell.cell_contents is not _EMPTY
    except ValueError:  # an empty cell
        return False


_EMPTY = object()


def _zero_slice(a: Tensor, d: int) -> Tensor:
    from .._creation import zeros

    shape = tuple(a.shape[:d]) + tuple(a.shape[d + 1:])
    return zeros(shape, dtype=a.dtype)


def _same(a: Tensor, b: Any) -> bool:
    if a is b:
        return True
    import numpy as np

    return (isinstance(b, Tensor) and a.shape == b.shape and a.dtype == b.dtype
            and bool(np.array_equal(a._data, b._data, equal_nan=True)))


def _stack(values: list, d: int, batch: int) -> Tensor:
    from .._ops.shape import stack

    out = stack(values, d)
    if batch == 0:
        return out.narrow(d % out.dim(), 0, 0)
    return out
