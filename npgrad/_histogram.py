"""``torch.histogram``: counts (or weights) of a tensor's values in bins, with torch's bin edges.

Note [Histogram bins as torch computes them]
With ``bins`` an int, torch's edges are ``linspace(min, max, bins + 1)`` in the
input's dtype (``min``/``max`` from ``range`` or the data, widened by 0.5 each
way when equal), computed as torch's linspace kernel computes them: the first
half of the points as ``start + i * step``, the second half as ``end - (n - 1 - i)
* step``, in the input's float type.  A value falls in bin ``i`` when
``edges[i] <= v < edges[i + 1]``; the last bin also holds ``v == edges[-1]``;
values outside ``[edges[0], edges[-1]]`` are not counted.  torch finds the bin
by interpolation corrected by a search among the neighbouring edges, which is
this same rule, so a search over the edges gives torch's bins.  With
``density=True`` the counts are divided by their sum and then by each bin's
width, in that order, in the input's dtype.  The sum is formed exactly and
rounded once; torch adds float32 weights in its vectorised order, so with
non-integer float32 weights a density can differ from torch's in the last bit.
"""
from __future__ import annotations

import builtins
from fractions import Fraction
from typing import Any

import numpy as np

from . import _dtype
from ._ops._core import record_not_implemented
from ._tensor import Tensor


class histogram_return(tuple):
    """``torch.return_types.histogram``: ``(hist, bin_edges)`` with those names."""

    __slots__ = ()
    n_fields = 2
    n_sequence_fields = 2

    def __new__(cls, hist: Tensor, bin_edges: Tensor) -> histogram_return:
        return tuple.__new__(cls, (hist, bin_edges))

    @property
    def hist(self) -> Tensor:
        return self[0]

    @property
    def bin_edges(self) -> Tensor:
        return self[1]

    def __repr__(self) -> str:
        return (f"{_dtype.repr_prefix()}return_types.histogram(\nhist={self[0]!r},\n"
                f"bin_edges={self[1]!r})")


histogram_return.__name__ = histogram_return.__qualname__ = "histogram"


def _cpp_number(v: float) -> str:
    """A double as C++'s ostream prints it (6 significant digits, ``inf``, ``nan``)."""
    if np.isnan(v):
        return "nan"
    if np.isinf(v):
        return "inf" if v > 0 else "-inf"
    return f"{v:g}"


def torch_linspace(start: Any, end: Any, steps: int, dt: np.dtype) -> np.ndarray:
    """torch's CPU linspace in float dtype ``dt`` (Note [Histogram bins as torch computes them]).

    torch's compiled kernel fuses each ``start + step * i`` into one multiply-add
    (a single rounding), so the products are formed exactly here: in float64 for
    float32 data (a float32 times an index is exact there), with fractions for
    float64 data.
    """
    start, end = dt.type(start), dt.type(end)
    if steps == 1:
        return np.array([start], dtype=dt)
    with np.errstate(all="ignore"):
        step = (end - start) / dt.type(steps - 1)
    halfway = steps // 2
    if dt.itemsize < 8:
        idx = np.arange(steps, dtype=np.float64)
        wide = np.empty(steps, dtype=np.float64)
        wide[:halfway] = np.float64(start) + np.float64(step) * idx[:halfway]
        wide[halfway:] = np.float64(end) - np.float64(step) * (steps - 1 - idx[halfway:])
        return wide.astype(dt)
    fs, fe, fstep = Fraction(float(start)), Fraction(float(end)), Fraction(float(step))
    return np.array([float(fs + fstep * i) if i < halfway else float(fe - fstep * (steps - 1 - i))
                     for i in builtins.range(steps)], dtype=dt)


def histogram(input: Tensor, bins: Any = 100, *, range: Any = None,  # noqa: A002
              weight: Tensor | None = None, density: bool = False, out: Any = None) -> Any:
    """Histogram of ``input``'s values: ``(hist, bin_edges)``, as torch's.

    >>> import npgrad
    >>> npgrad.histogram(npgrad.tensor([1., 2., 1.]), bins=4, range=(0., 3.))
    npgrad.return_types.histogram(
    hist=tensor([0., 2., 1., 0.]),
    bin_edges=tensor([0.0000, 0.7500, 1.5000, 2.2500, 3.0000]))
    """
    data = input._data
    dt = data.dtype
    if dt.kind != "f":
        raise NotImplementedError(
            f"\"histogramdd\" not implemented for '{_dtype.from_np(dt).scalar_name}'")
    values = data.reshape(-1)
    if weight is not None and weight._data.shape != data.shape:
        raise RuntimeError(
            "torch.histogramdd: if weight tensor is provided it should have the same shape as "
            "the input tensor excluding its innermost dimension, but got input with shape "
            f"[{', '.join(str(s) for s in values.shape + (1,))}] and weight with shape "
            f"[{', '.join(str(s) for s in weight._data.shape)}]")
    if isinstance(bins, Tensor):
        edges = bins._data
        if edges.ndim != 1:
            raise RuntimeError(
                "torch.histogramdd: bins tensor should have one dimension, but got "
                f"{edges.ndim} dimensions in the bins tensor for dimension 0")
        if edges.size - 1 <= 0:
            raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {edges.size - 1} "
                               f"for dimension 0")
        if edges.dtype != dt:
            raise RuntimeError(
                "torch.histogramdd: input tensor and bins tensors should have the same dtype, "
                f"but got input with dtype {_dtype.from_np(dt).cpp_name} and bins for dimension "
                f"0 with dtype {_dtype.from_np(edges.dtype).cpp_name}")
        edges = edges.copy()
    else:
        n_bins = int(bins)
        if n_bins <= 0:
            raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {n_bins} for "
                               f"dimension 0")
        edges = torch_linspace(*_outer_edges(values, range, dt), n_bins + 1, dt)
    lo, hi = edges[0], edges[-1]
    inside = (values >= lo) & (values <= hi)
    picked = values[inside]
    pos = np.searchsorted(edges, picked, side="right") - 1
    pos[pos == edges.size - 1] -= 1  # the last bin is closed on the right
    hist = np.zeros(edges.size - 1, dtype=dt)
    if weight is None:
        np.add.at(hist, pos, dt.type(1))
    else:
        np.add.at(hist, pos, weight._data.reshape(-1)[inside].astype(dt, copy=False))
    if density:
        with np.errstate(all="ignore"):
            hist = hist / dt.type(hist.sum(dtype=np.float64))
            hist = hist / np.diff(edges)
    hist = hist.astype(dt, copy=False)
    # torch records histogram without a derivative: one NotImplemented node (whose backward
    # raises) for both outputs
    inputs = tuple(t for t in (input, bins, weight) if isinstance(t, Tensor))
    hist_t, edges_t = record_not_implemented("histogram", inputs, (hist, edges))
    return histogram_return(hist_t, edges_t)


def _outer_edges(values: np.ndarray, range: Any, dt: np.dtype) -> tuple:  # noqa: A002
    """The first and last edge for an int ``bins``: from ``range`` or the data, then widened."""
    if range is not None:
        lo, hi = float(range[0]), float(range[1])
        if lo > hi:
            raise RuntimeError(f"torch.histogramdd: min should not exceed max, but got min "
                               f"{_cpp_number(lo)} max {_cpp_number(hi)} for dimension 0")
        lo, hi = dt.type(lo), dt.type(hi)
    elif values.size:
        lo, hi = values.min(), values.max()
    else:
        lo, hi = dt.type(0), dt.type(1)
    if not (np.isfinite(lo) and np.isfinite(hi)):
        raise RuntimeError(f"torch.histogramdd: dimension 0's range [{_cpp_number(float(lo))}, "
                           f"{_cpp_number(float(hi))}] is not finite")
    if lo == hi:
        lo, hi = lo - dt.type(0.5), hi + dt.type(0.5)
    return lo, hi
