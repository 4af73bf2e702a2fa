"""Dimension and shape argument handling shared by all ops (torch's checks and messages)."""
from __future__ import annotations

from typing import Any


class _NoDim:
    """The default of ``dim`` in sum/mean: torch tells ``x.sum()`` (SumBackward0) from an
    explicit ``x.sum(dim=None)`` (SumBackward1), so None cannot be the default."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "None"


NO_DIM = _NoDim()


def wrap_dim(dim: Any, ndim: int) -> int:
    """Turn a possibly negative ``dim`` into an index, with torch's IndexError."""
    if not isinstance(dim, int):
        dim = dim.__index__()
    rank = ndim if ndim > 0 else 1
    if dim < -rank or dim >= rank:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-rank}, "
                         f"{rank - 1}], but got {dim})")
    return dim + rank if dim < 0 else dim


def wrap_dims(dims: Any, ndim: int) -> tuple:
    """Normalise ``dim`` (int, tuple or list) to a sorted tuple; duplicates are errors."""
    if isinstance(dims, int) or hasattr(dims, "__index__"):
        dims = (dims,)
    out = tuple(wrap_dim(d, ndim) for d in dims)
    if len(set(out)) != len(out):
        dup = next(d for d in out if out.count(d) > 1)
        raise RuntimeError(f"dim {dup} appears multiple times in the list of dims")
    return out


def parse_shape(args: tuple) -> tuple:
    """``f(2, 3)``, ``f((2, 3))`` and ``f([2, 3])`` all mean the shape (2, 3)."""
    if len(args) == 1 and not isinstance(args[0], int):
        args = args[0]
        if hasattr(args, "_data"):
            args = args.tolist()
    return tuple(int(a) for a in args)


def broadcast_shapes(a: tuple, b: tuple) -> tuple:
    """Broadcast two shapes with torch's error text."""
    if a == b:
        return a
    n = max(len(a), len(b))
    a1 = (1,) * (n - len(a)) + tuple(a)
    b1 = (1,) * (n - len(b)) + tuple(b)
    out = []
    for i, (x, y) in enumerate(zip(a1, b1)):
        if x == y or y == 1:
            out.append(x)
        elif x == 1:
            out.append(y)
        else:
            raise RuntimeError(f"The size of tensor a ({x}) must match the size of tensor b "
                               f"({y}) at non-singleton dimension {i}")
    return tuple(out)


def sum_to_axes(shape: tuple, target: tuple) -> tuple:
    """Axes of ``shape`` to sum so that the result can be reshaped to ``target``."""
    lead = len(shape) - len(target)
    axes = list(range(lead))
    for i, t in enumerate(target):
        if t == 1 and shape[lead + i] != 1:
            axes.append(lead + i)
    return tuple(axes)
