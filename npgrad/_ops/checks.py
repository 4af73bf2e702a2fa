"""torch's value checks at an op's boundary: sizes, ranks, dtypes, with torch's exact texts.

Note [Checks before NumPy]
An op whose arguments have the right types can still be refused by torch: a dim out of range,
a size that does not broadcast, a rank or a dtype the kernel does not take.  NumPy would either
raise its own error or, worse, compute something torch refuses.  So each op runs these checks
first, *in the order torch's kernel runs its own*: when two things are wrong, the first check
torch runs decides the text, and tests written against torch match on that text.  The helpers
here only look at shapes and dtypes (never at data), so they cost nothing on the hot path
beyond a few comparisons.
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from .. import _dtype


def scalar_name(d: np.dtype) -> str:
    """torch's ScalarType name of a NumPy dtype ("Float", "Long", "Bool", ...)."""
    return _dtype.from_np(d).scalar_name


def cpp_name(d: np.dtype) -> str:
    """torch's C++ type name of a NumPy dtype ("float", "long int", "c10::Half", ...)."""
    return _dtype.from_np(d).cpp_name


# torch's C names of the types a Python number is converted to, as its overflow error prints
# them (``cpp_name`` is the longer name other errors print: "long int" for int64)
C_NAMES = {"uint8": "uint8_t", "int8": "int8_t", "int16": "int16_t", "int32": "int",
           "int64": "int64_t", "float16": "c10::Half", "float32": "float", "float64": "double"}


def overflow_error(c_name: str) -> RuntimeError:
    """torch's error for a number that does not fit the C type it is converted to."""
    return RuntimeError(f"value cannot be converted to type {c_name} without overflow")


def check_scalar_fits(value: Any, dt: np.dtype) -> None:
    """torch's overflow check of a Python number converted to ``dt`` (a fill value, a lerp
    weight): a finite number beyond the dtype's range is refused, inf and NaN pass for
    floats, and a negative number wraps into an unsigned type."""
    if type(value) is bool or not isinstance(value, (int, float)):
        return
    if dt.kind in "iu":
        info = np.iinfo(dt)
        if not math.isfinite(value) or value > info.max or (dt.kind == "i" and value < info.min):
            raise overflow_error(C_NAMES[dt.name])
    elif dt.name in ("float16", "float32") and math.isfinite(value) and \
            math.fabs(value) > float(np.finfo(dt).max):
        raise overflow_error(C_NAMES[dt.name])


def size_at(shape: tuple, dim: int) -> int:
    """``tensor.size(dim)`` with torch's IndexError for a 0-dim tensor or a dim out of range."""
    ndim = len(shape)
    if ndim == 0:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    if dim < -ndim or dim >= ndim:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-ndim}, "
                         f"{ndim - 1}], but got {dim})")
    return shape[dim]


def check_expandable(shape: tuple, target: tuple, d: np.dtype) -> None:
    """torch's ``expand`` errors when a tensor of ``shape`` cannot broadcast to ``target``."""
    if len(shape) > len(target):
        sizes = ", ".join(map(str, shape))
        raise RuntimeError(f"expand(torch.{_dtype.from_np(d).legacy_type}{{[{sizes}]}}, "
                           f"size=[{', '.join(map(str, target))}]): the number of sizes provided "
                           f"({len(target)}) must be greater or equal to the number of dimensions "
                           f"in the tensor ({len(shape)})")
    lead = len(target) - len(shape)
    for i in range(len(shape) - 1, -1, -1):  # torch compares from the last dimension
        s = shape[i]
        if s != 1 and s != target[lead + i]:
            raise RuntimeError(f"The expanded size of the tensor ({target[lead + i]}) must match "
                               f"the existing size ({s}) at non-singleton dimension {lead + i}.  "
                               f"Target sizes: [{', '.join(map(str, target))}].  Tensor sizes: "
                               f"[{', '.join(map(str, shape))}]")


def not_implemented_for(kernel: str, d: np.dtype, kinds: str) -> None:
    """torch's NotImplementedError of a CPU kernel that has no loop for ``d``'s kind.

    ``kinds`` lists the NumPy kinds the kernel refuses: "b" bool, "iu" integers, "f" only
    matters for half ("e" is checked by the caller through ``d.char``)."""
    if d.kind in kinds:
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{scalar_name(d)}'")


def same_dtype_message(names: tuple, dtypes: tuple) -> str:
    """The list ``"input float, batch1: long int, batch2: float"`` of torch's dtype checks."""
    parts = [f"{names[0]} {cpp_name(dtypes[0])}"]
    parts += [f"{n}: {cpp_name(d)}" for n, d in zip(names[1:], dtypes[1:])]
    return ", ".join(parts)


def is_floating(d: Any) -> bool:
    """Whether a NumPy dtype is one torch calls floating (half, float, double, bfloat16)."""
    return d.kind == "f" or d.kind == "V"


# Note [torch's Python touching a non-Tensor]
# Where torch's function is plain Python, its first use of an argument decides the error for a
# non-Tensor: ``target.size()`` in ``F.mse_loss`` gives CPython's "'str' object has no attribute
# 'size'".  ``python_method`` replays that use on the object itself, so the text (and, for an
# object that has such an attribute, what calling it raises) is CPython's own.

def python_method(obj: Any, name: str, tensor_cls: type, *args: Any) -> None:
    """Raise what ``obj.<name>(*args)`` raises when ``obj`` is no Tensor (Note [torch's Python
    touching a non-Tensor]); a call that works is left to the checks after it."""
    if not isinstance(obj, tensor_cls):
        getattr(obj, name)(*args)


def check_castable(result: np.dtype, out: np.dtype) -> None:
    """torch's refusal to write a result of dtype ``result`` into an output of dtype ``out`` of
    a lower category (float into an integer tensor, an integer into a bool one)."""
    have: int = _dtype.category_of_np(result)
    if have > _dtype.category_of_np(out):
        raise RuntimeError(f"result type {scalar_name(result)} can't be cast to the desired "
                           f"output type {scalar_name(out)}")


def check_output_shape(broadcast: tuple, out: tuple) -> None:
    """torch's refusal to write a result of the broadcast shape into an output of another."""
    if broadcast != out:
        raise RuntimeError(f"output with shape [{', '.join(map(str, out))}] doesn't match the "
                           f"broadcast shape [{', '.join(map(str, broadcast))}]")
