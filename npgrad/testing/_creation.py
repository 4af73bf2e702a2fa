"""make_tensor: torch.testing's random test tensors of a given shape and dtype, with its checks."""
from __future__ import annotations

import collections.abc
import math
import warnings
from typing import Any

import numpy as np

from .. import _dtype
from .. import _sampling
from .._creation import _leaf
from .._random import default_generator
from .._tensor import Tensor


def _bounds(low: Any, high: Any, dtype: _dtype.dtype, lowest: float, highest: float,
            default_low: float, default_high: float) -> tuple:
    """torch's ``low``/``high`` handling: defaults, NaN and order checks, clamping to the dtype."""
    is_float = dtype.np_dtype.kind == "f"
    low = default_low if low is None else low
    high = default_high if high is None else high
    if any(isinstance(v, float) and math.isnan(v) for v in (low, high)):
        raise ValueError(f"`low` and `high` cannot be NaN, but got {low=} and {high=}")
    if low == high and is_float:
        warnings.warn("Passing `low==high` to `torch.testing.make_tensor` for floating or complex "
                      "types is deprecated since 2.1 and will be removed in 2.3. Use "
                      "`torch.full(...)` instead.", FutureWarning, stacklevel=3)
    elif low >= high:
        raise ValueError(f"`low` must be less than `high`, but got {low} >= {high}")
    elif high < lowest or low >= highest:
        raise ValueError(f"The value interval specified by `low` and `high` is [{low}, {high}), "
                         f"but {dtype} only supports [{lowest}, {highest})")
    low, high = min(max(low, lowest), highest), min(max(high, lowest), highest)
    if not is_float:
        # ceil both: values stay >= low, and randint's high is exclusive
        return math.ceil(low), math.ceil(high)
    return low, high


def make_tensor(*shape: Any, dtype: _dtype.dtype, device: Any, low: float | None = None,
                high: float | None = None, requires_grad: bool = False,
                noncontiguous: bool = False, exclude_zero: bool = False,
                memory_format: Any = None) -> Tensor:
    """A random tensor for tests: floats uniform in [-9, 9), integers in [-9, 10) unless
    ``low``/``high`` say otherwise; bools either value.

    >>> import npgrad
    >>> t = npgrad.testing.make_tensor(2, 3, dtype=npgrad.float32, device="cpu", low=0, high=1)
    >>> t.shape, bool(((t >= 0) & (t < 1)).all())
    (torch.Size([2, 3]), True)
    """
    if len(shape) == 1 and isinstance(shape[0], collections.abc.Sequence):
        shape = tuple(shape[0])
    shape = tuple(int(s) for s in shape)
    if noncontiguous and memory_format is not None:
        raise ValueError("The parameters `noncontiguous` and `memory_format` are mutually "
                         f"exclusive, but got {noncontiguous=} and {memory_format=}")
    np_dt = dtype.np_dtype
    kind = np_dt.kind
    if requires_grad and kind != "f":
        raise ValueError("`requires_grad=True` is not supported for boolean and integral dtypes, "
                         f"but got {dtype=}")
    noncontiguous = noncontiguous and math.prod(shape) > 1
    if noncontiguous:  # twice as wide, then every other column from the second: a strided view
        shape = (*shape[:-1], 2 * shape[-1])
    # torch's draws: randint for bools and integers, uniform_ for floats (halved, then
    # doubled, when the range exceeds the dtype's largest value)
    n = math.prod(shape)
    if kind == "b":
        lo, hi = _bounds(low, high, dtype, 0, 2, 0, 2)
        flat = _sampling.random_from_to(default_generator, n, np_dt, int(lo), int(hi))
    elif kind in "iu":
        info = np.iinfo(np_dt)
        top = int(info.max) + (1 if np_dt != np.int64 else 0)
        lo, hi = _bounds(low, high, dtype, int(info.min), top, -9, 10)
        flat = _sampling.random_from_to(default_generator, n, np_dt, int(lo), int(hi))
    else:
        info = np.finfo(np_dt)
        lo, hi = _bounds(low, high, dtype, float(info.min), float(info.max), -9, 9)
        if hi - lo >= float(info.max):
            flat = _sampling.uniform(default_generator, n, np_dt, lo / 2, hi / 2) * np_dt.type(2)
        else:
            flat = _sampling.uniform(default_generator, n, np_dt, lo, hi)
    data = flat.reshape(shape)
    if noncontiguous:
        data = data[..., 1::2]
    if exclude_zero:
        data[data == 0] = 1 if kind in "biu" else np.finfo(np_dt).tiny
    return _leaf(data, requires_grad and kind == "f")
