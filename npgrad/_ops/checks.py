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
    floats; an unsigned type takes a negative int down to minus its largest value (wrapping
    it, as C does) but no negative float."""
    if type(value) is bool or not isinstance(value, (int, float)):
        return
    if dt.kind in "iu":
        info = np.iinfo(dt)
        if isinstance(value, int):
            low = -int(info.max) if dt.kind == "u" else int(info.min)
            fits = low <= value <= info.max
        else:  # torch compares in double: 2**63 as a double fits int64 and wraps
            fits = math.isfinite(value) and float(info.min) <= value <= float(info.max)
        if not fits:
            raise overflow_error(C_NAMES[dt.name])
    elif dt.char in "ef" and math.isfinite(value) and \
            math.fabs(value) > float(np.finfo(dt).max):  # "ef": half, float (``dt.name`` is slow)
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


def _c_div(a: int, b: int) -> int:
    """C's integer division, truncating toward zero (Python's ``//`` floors)."""
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


def pooling_output_size(size: int, kernel: int, pad: int, stride: int, dilation: int,
                        ceil_mode: bool) -> int:
    """torch's ``pooling_output_shape`` for one dim, with its checks in its order: a zero
    stride, a negative pad, a pad above half the effective kernel (C division, so a negative
    kernel fails here first); the output rounds down, or up with ``ceil_mode`` unless the
    last window would start in the right padding."""
    if stride == 0:
        raise RuntimeError("stride should not be zero")
    if pad < 0:
        raise RuntimeError(f"pad must be non-negative, but got pad: {pad}")
    if pad > _c_div((kernel - 1) * dilation + 1, 2):
        raise RuntimeError(f"pad should be at most half of effective kernel size, but got "
                           f"pad={pad}, kernel_size={kernel} and dilation={dilation}")
    num = size + 2 * pad - dilation * (kernel - 1) - 1 + (stride - 1 if ceil_mode else 0)
    out = num // stride + 1
    if ceil_mode and (out - 1) * stride >= size + pad:
        out -= 1
    return out


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


def forward_ad_missing(op: str) -> NotImplementedError:
    """torch's error for a tangent reaching aten op ``op``, whose derivatives.yaml entry has no
    forward-mode formula (``grid_sampler_2d``, ``_embedding_bag`` ...): two lines."""
    return NotImplementedError(
        f"Trying to use forward AD with {op} that does not support it because it has not been "
        "implemented yet.\nPlease file an issue to PyTorch at "
        "https://github.com/pytorch/pytorch/issues/new?template=feature-request.yml so that we "
        "can prioritize its implementation or submit a PR adding the implementation to "
        "derivatives.yaml")


def check_mixed_dtypes(d: np.dtype, params: list) -> bool:
    """torch's CPU rule for a normalization's input dtype ``d`` and the dtypes of its defined
    parameters (weight first): parameters of another dtype than the input ("mixed type") must
    all be float32, with a half or bfloat16 input.  Returns whether the call is mixed; an
    unmixed call's other parameters are checked by ``check_parameter_dtypes`` after the
    kernel's own dtype check."""
    if not params or params[0] == d:
        return False
    if any(p != np.float32 for p in params):
        raise RuntimeError("mixed dtype (CPU): expect parameter to have scalar type of Float")
    if d != np.float16 and d.kind != "V":  # "V": bfloat16 as ml_dtypes stores it
        raise RuntimeError("mixed dtype (CPU): all inputs must share same datatype.")
    return True


def check_parameter_dtypes(d: np.dtype, params: list) -> None:
    """The kernel's read of each parameter as the input's dtype (an unmixed call)."""
    for p in params:
        if p != d:
            raise RuntimeError(f"expected scalar type {scalar_name(d)} but found "
                               f"{scalar_name(p)}")


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
