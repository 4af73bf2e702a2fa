"""``vmap``: map a function over a dimension of its inputs, with torch's semantics and errors.

Note [vmap by slices]
torch runs a vmapped function once, on BatchedTensors, and every op applies its batching
rule.  npgrad's ops have no dispatch layer yet where such rules could sit (issue 11 builds the
op registry they will live in), so vmap here has two paths:

* **Batching rules** (``register_batching_rule``): when the function given to vmap *is* an op
  with a rule (``vmap(torch.sin)``, ``vmap(torch.add, in_dims=(0, None))``), the rule runs the
  op once over the whole batch.  The table is keyed by the op function; when the registry
  lands, its dispatcher consults the same table for ops called *inside* a vmapped function.
* **The fallback**: every other function runs once per batch slice, and the per-slice outputs
  are stacked at ``out_dims``.  This is exact for values, dtypes, shapes and gradients (the
  slices are views of the inputs and ``stack`` is differentiable, so ``vmap(grad(f))``,
  ``grad(vmap(f))`` and nested vmaps compose), and ``chunk_size`` cannot change a result.

What differs from torch in the fallback:
* which tensors are batched: the slices vmap hands to the function and views of them
  (``Level.slices``; ``grad`` inside vmap keeps its fresh inputs there too).  torch's
  refusals of ``.item()`` and of data-dependent control flow (``if t:``) are raised, with
  torch's text, for those; a value *computed* from a slice is an ordinary tensor here, so
  ``t.sum().item()`` returns each slice's number where torch refuses.
* in-place writes: torch refuses writing a batched value into an unbatched tensor.  The
  unbatched tensors known here are the captured ones (Note [Captured tensors] in
  ``npgrad._vmap_mode``: inputs with in_dim None, tensors in the function's closure and the
  globals it names); a write into one of those with a slice (or a view of one) is refused
  with torch's text (three wordings, Note [In-place refusals]); a write into a tensor made
  inside the function is done per slice, as the loop would.
* ``out_dims=None`` for an output: torch refuses a batched output; here an output that is
  equal in every slice counts as unbatched (its first slice's value is returned), any other
  raises torch's error.
* randomness: 'error' raises torch's error on the first draw from any generator (every
  sampler draws through ``Generator._words``); 'same' restores, before each slice, the state
  each generator had when the first slice first drew from it, so every slice draws the very
  numbers torch's single unbatched draw gives; 'different' lets the slices draw one after the
  other, so each slice gets its own numbers, but not the numbers torch's one batched draw of
  shape ``(B, *shape)`` gives.
* a batch of size 0 runs the function once on zero-filled slices to learn the output shapes.
* torch returns an unbatched output broadcast to the batch as an expanded view; here it is a
  stacked copy (same values).
* speed is a loop's: per-sample gradients (``vmap(grad(loss))``) of a 32-64-10 MLP over 64
  samples take about 110x one batched backward here, torch.func's about 16x
  (``benchmarks/vmap_per_sample_grad.py``).  Issue 15's target (2x) needs the batching rules
  to run for the ops *inside* the function, which is what the registry's dispatcher will do.
"""
from __future__ import annotations

import functools
from typing import Any, Callable

from .. import _vmap_mode
from .._tensor import Tensor
from .._vmap_mode import Level
from ._pytree import broadcast_prefix, tree_flatten, tree_unflatten

RANDOMNESS = ("error", "different", "same")

# op function -> rule(batch_size, args, in_dims) -> output with the batch dim at 0, or None
# when the rule declines (the fallback then runs).  See Note [vmap by slices].
BATCHING_RULES: dict[Any, Callable] = {}


def register_batching_rule(*ops: Any) -> Callable:
    """Register ``rule(batch_size, args, in_dims)`` as the batching rule of ``ops``."""
    def register(rule: Callable) -> Callable:
        for op in ops:
            BATCHING_RULES[op] = rule
        return rule
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
    try:
        rule = BATCHING_RULES.get(func) if not kwargs else None
    except TypeError:  # an unhashable callable
        rule = None
    if rule is not None:
        out = _with_rule(rule, batch, args, flat_args, flat_dims, spec, chunk_size)
        if out is not None:
            return _place_batched(func, out, out_dims)
    return _by_slices(func, out_dims, randomness, batch, flat_args, flat_dims, spec, kwargs)


def _with_rule(rule: Callable, batch: int, args: tuple, flat_args: list, flat_dims: list,
               spec: Any, chunk_size: int | None) -> Any:
    if spec.children and any(not c.is_leaf() for c in spec.children):
        return None  # rules take flat positional arguments
    if chunk_size is None or chunk_size >= batch:
        return rule(batch, tuple(flat_args), tuple(flat_dims))
    from .._ops.shape import cat

    pieces = []
    for start in range(0, batch, chunk_size):
        n = min(chunk_size, batch - start)
        chunk = tuple(a if d is None else a.narrow(d, start, n)
                      for a, d in zip(flat_args, flat_dims))
        out = rule(n, chunk, tuple(flat_dims))
        if out is None:
            return None
        pieces.append(out)
    return cat(pieces, 0)


def _place_batched(func: Callable, out: Any, out_dims: Any) -> Any:
    """Move a rule's batch dim (at 0 of each output) to ``out_dims``."""
    flat_out, out_spec = tree_flatten(out)
    flat_out_dims = _flat_out_dims(func, out_dims, out_spec)
    placed = []
    for o, d in zip(flat_out, flat_out_dims):
        if d is None:
            raise ValueError(f"vmap({func_name(func)}, ...): `{func_name(func)}` can not "
                             "return a BatchedTensor when out_dim is None")
        placed.append(o.movedim(0, d))
    return tree_unflatten(placed, out_spec)


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
