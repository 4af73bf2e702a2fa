"""Factory functions: tensors from Python data, NumPy arrays, shapes and random draws.

Factories honour ``requires_grad=True`` in every grad mode (the result is a
leaf); under inference mode they make inference tensors.
"""
from __future__ import annotations

import math
import warnings
from typing import TYPE_CHECKING, Any

import numpy as np

from ._ops.signature import signature
from . import _dtype, _sampling
from ._mode import _tls, INFERENCE, RECORDING
from ._random import (Generator, default_generator, get_generator, get_rng_state,  # noqa: F401
                      initial_seed, manual_seed, seed, set_rng_state)
from ._ops._core import record_not_implemented
from ._ops._shape_util import parse_shape
from ._ops.allocation import (allocate, check_new_sizes, check_nonnegative, check_numel,
                               sizes_str, wrap_int64)
from ._ops._core import check_int_scalar
from ._ops.checks import C_NAMES, check_scalar_fits, overflow_error
if TYPE_CHECKING:
    from ._tensor import Tensor
else:  # Note [Tensor base and Tensor] in npgrad._tensor_base
    from ._tensor_base import TensorBase as Tensor
from ._tensor_base import INFERENCE_COUNTER, _make, make_tensor
from ._forward import FW, has_tangent
from ._ops import inplace
from ._ops.pointwise import zeros_like_grad
from ._ops.registry import General
from ._device import check_device

FACTORY_GRAD_MSG = "Only Tensors of floating point and complex dtype can require gradients"


def _leaf(data: np.ndarray, requires_grad: bool = False) -> Tensor:
    if requires_grad and data.dtype.kind not in "fVc":  # "V": bfloat16
        raise RuntimeError(FACTORY_GRAD_MSG)
    vc = INFERENCE_COUNTER if _tls.mode & INFERENCE else None
    return make_tensor(data, None, bool(requires_grad), vc)


def _np_dtype(dtype: Any) -> np.dtype | None:
    if dtype is None:
        return None
    if isinstance(dtype, _dtype.dtype):
        return dtype.np_dtype
    if dtype is float:
        return _dtype.float64.np_dtype
    if dtype is int:
        return _dtype.int64.np_dtype
    if dtype is bool:
        return _dtype.bool_.np_dtype
    return _dtype.from_np(np.dtype(dtype)).np_dtype


def _infer_np_dtype(data: Any) -> np.dtype:
    """torch's dtype for nested Python data: bool < int64 < default float < default complex."""
    kind = 0  # 0 bool, 1 int, 2 float, 3 complex
    stack = [data]
    seen_any = False
    while stack:
        x = stack.pop()
        if isinstance(x, (list, tuple)):
            stack.extend(x)
        elif isinstance(x, Tensor):
            seen_any = True
            k = x._data.dtype.kind
            kind = max(kind, 3 if k == "c" else 2 if k == "f" else 1 if k in "iu" else 0)
        else:
            seen_any = True
            if isinstance(x, (bool, np.bool_)):
                continue
            if isinstance(x, (int, np.integer)):
                kind = max(kind, 1)
            elif x is None:  # NumPy would make it NaN
                raise RuntimeError("Could not infer dtype of NoneType")
            elif isinstance(x, (complex, np.complexfloating)):
                kind = 3
            else:
                kind = max(kind, 2)
    if not seen_any:
        return _dtype.get_default_dtype().np_dtype
    return (_dtype.bool_, _dtype.int64, _dtype.get_default_dtype(),
            _dtype.get_default_complex_dtype())[kind].np_dtype


def _check_none(data: Any, np_dt: np.dtype) -> None:
    """With an explicit dtype torch converts each element, so a None is a TypeError (NumPy
    would make it NaN, or refuse it with its own text)."""
    stack = [data]
    while stack:
        x = stack.pop()
        if isinstance(x, (list, tuple)):
            stack.extend(x)
        elif x is None:
            if np_dt.kind in "biu":
                raise TypeError("'NoneType' object cannot be interpreted as an integer")
            raise TypeError("must be real number, not NoneType")
        elif isinstance(x, complex) and np_dt.kind != "c":  # NumPy would drop the imaginary part
            if np_dt.kind in "biu":
                raise TypeError("'complex' object cannot be interpreted as an integer")
            raise TypeError("must be real number, not complex")


def _check_strings(data: Any, np_dt: np.dtype | None) -> None:
    """torch's refusals of text (NumPy would parse it as a number, or fail with its own
    text): a str or bytes datum; a str down the first elements, which torch's size
    inference takes for a sequence without end; any other one, met by its dtype inference
    (or, with a dtype given, by the conversion of the element)."""
    if isinstance(data, (str, bytes)):
        raise TypeError(f"new(): invalid data type '{type(data).__name__}'")
    first = data
    while isinstance(first, (list, tuple)) and first:
        first = first[0]
        if isinstance(first, str):
            raise ValueError("too many dimensions 'str'")
    stack = [data]
    while stack:
        x = stack.pop()
        if isinstance(x, (list, tuple)):
            stack.extend(x)
        elif isinstance(x, (str, bytes)):
            if np_dt is None:
                raise TypeError(f"new(): invalid data type '{type(x).__name__}'")
            if np_dt.kind in "fc":
                raise TypeError(f"must be real number, not {type(x).__name__}")


def _check_ragged(data: Any, dim: int = 0) -> None:
    if not isinstance(data, (list, tuple)) or not data:
        return
    first = data[0]
    if isinstance(first, (list, tuple)):
        n = len(first)
        for item in data:
            if not isinstance(item, (list, tuple)) or len(item) != n:
                got = len(item) if isinstance(item, (list, tuple)) else type(item).__name__
                raise ValueError(f"expected sequence of length {n} at dim {dim + 1} (got {got})")
        for item in data:
            _check_ragged(item, dim + 1)


def tensor(data: Any, *, dtype: Any = None, device: Any = None, requires_grad: bool = False,
           pin_memory: bool = False) -> Tensor:
    """A new leaf tensor holding a copy of ``data``.

    >>> import npgrad
    >>> npgrad.tensor([1., 2.], requires_grad=True)
    tensor([1., 2.], requires_grad=True)
    """
    check_device(device)
    np_dt = _np_dtype(dtype)
    if isinstance(data, Tensor):
        warnings.warn(
            "To copy construct from a tensor, it is recommended to use sourceTensor.detach()."
            "clone() or sourceTensor.detach().clone().requires_grad_(True), rather than "
            "torch.tensor(sourceTensor).", UserWarning, stacklevel=2)
        arr = np.array(data._data, dtype=np_dt, copy=True)
    elif isinstance(data, np.ndarray):
        arr = np.array(data, dtype=np_dt, copy=True)
        if np_dt is None:
            arr = arr.astype(_dtype.from_np(arr.dtype).np_dtype, copy=False)
    elif isinstance(data, np.generic):
        arr = np.array(data, dtype=np_dt if np_dt is not None else data.dtype)
    else:
        _check_strings(data, np_dt)
        _check_ragged(data)
        if isinstance(data, (list, tuple)) and any(isinstance(x, Tensor) for x in data):
            data = [x.tolist() if isinstance(x, Tensor) else x for x in data]
        if np_dt is not None:
            _check_none(data, np_dt)
        arr = np.array(data, dtype=np_dt if np_dt is not None else _infer_np_dtype(data))
    return _leaf(arr, requires_grad)


def as_tensor(data: Any, *, dtype: Any = None, device: Any = None) -> Tensor:
    """Share memory with ``data`` where possible (tensors and NumPy arrays of the same dtype)."""
    check_device(device)
    np_dt = _np_dtype(dtype)
    if isinstance(data, Tensor):
        if np_dt is None or data._data.dtype == np_dt:
            return data
        from ._ops.shape import to

        return to(data, dtype)
    if isinstance(data, np.ndarray) and (np_dt is None or data.dtype == np_dt):
        return from_numpy(data)
    return tensor(data, dtype=dtype)


def from_numpy(*args: Any, **kwargs: Any) -> Tensor:
    """A tensor sharing memory with ``ndarray`` (writes show through both ways)."""
    # torch's C function takes one positional argument and no keywords, in its words
    if kwargs:
        raise TypeError("torch._VariableFunctionsClass.from_numpy() takes no keyword arguments")
    if len(args) != 1:
        raise TypeError("torch._VariableFunctionsClass.from_numpy() takes exactly one argument "
                        f"({len(args)} given)")
    ndarray = args[0]
    if not isinstance(ndarray, np.ndarray):
        raise TypeError(f"expected np.ndarray (got {type(ndarray).__name__})")
    _dtype.from_np(ndarray.dtype)
    return _leaf(ndarray)


def _filled(shape: tuple, value: Any, dtype: Any, requires_grad: bool) -> Tensor:
    np_dt = _np_dtype(dtype)
    if np_dt is None:
        np_dt = _dtype.scalar_np_dtype(value)
    check_scalar_fits(value, np_dt)
    return _leaf(allocate(np.full, shape, np_dt, value), requires_grad)


@signature("zeros(SymIntArrayRef size, *, Tensor out=None, ScalarType? dtype=None, "
           "Layout? layout=None, Device? device=None, bool? pin_memory=False, "
           "bool? requires_grad=False)")
def zeros(*size: Any, dtype: Any = None, device: Any = None, requires_grad: bool = False,
          out: Any = None) -> Tensor:
    check_device(device)
    np_dt = _np_dtype(dtype) or _dtype.get_default_dtype().np_dtype
    shape = parse_shape(size)
    if any(s < 0 for s in shape):  # torch.zeros' own check, before the allocator's
        raise RuntimeError("zeros: Dimension size must be non-negative.")
    return _leaf(allocate(np.zeros, shape, np_dt), requires_grad)


@signature("ones(SymIntArrayRef size, *, Tensor out=None, ScalarType? dtype=None, "
           "Layout? layout=None, Device? device=None, bool? pin_memory=False, "
           "bool? requires_grad=False)")
def ones(*size: Any, dtype: Any = None, device: Any = None, requires_grad: bool = False,
         out: Any = None) -> Tensor:
    check_device(device)
    np_dt = _np_dtype(dtype) or _dtype.get_default_dtype().np_dtype
    return _leaf(allocate(np.ones, parse_shape(size), np_dt), requires_grad)


@signature("empty(SymIntArrayRef size, *, MemoryFormat? memory_format=None, Tensor out=None, "
           "ScalarType? dtype=None, Layout? layout=None, Device? device=None, "
           "bool? pin_memory=False, bool? requires_grad=False)")
def empty(*size: Any, dtype: Any = None, device: Any = None, requires_grad: bool = False,
          out: Any = None) -> Tensor:
    check_device(device)
    check_nonnegative(parse_shape(size))  # empty's message, not zeros'
    return zeros(*size, dtype=dtype, requires_grad=requires_grad)


@signature("full(SymIntArrayRef size, Scalar fill_value, *, Tensor out=None, "
           "ScalarType? dtype=None, Layout? layout=None, Device? device=None, "
           "bool? pin_memory=False, bool? requires_grad=False)")
def full(size: Any, fill_value: Any, *, dtype: Any = None, device: Any = None,
         requires_grad: bool = False) -> Tensor:
    check_device(device)
    if isinstance(fill_value, Tensor):
        fill_value = fill_value.item()
    return _filled(parse_shape((size,)), fill_value, dtype, requires_grad)


def _like_dtype(input: Tensor, dtype: Any) -> Any:
    return dtype if dtype is not None else _dtype.from_np(input._data.dtype)


@signature("zeros_like(Tensor input, *, MemoryFormat? memory_format=None, "
           "ScalarType? dtype=None, Layout? layout=None, Device? device=None, "
           "bool? pin_memory=False, bool? requires_grad=False)")
def zeros_like(input: Tensor, *, dtype: Any = None, device: Any = None,
               requires_grad: bool = False, memory_format: Any = None) -> Tensor:
    check_device(device)
    return zeros(input._data.shape, dtype=_like_dtype(input, dtype), requires_grad=requires_grad)


@signature("ones_like(Tensor input, *, MemoryFormat? memory_format=None, ScalarType? dtype=None, "
           "Layout? layout=None, Device? device=None, bool? pin_memory=False, "
           "bool? requires_grad=False)")
def ones_like(input: Tensor, *, dtype: Any = None, device: Any = None,
              requires_grad: bool = False, memory_format: Any = None) -> Tensor:
    check_device(device)
    return ones(input._data.shape, dtype=_like_dtype(input, dtype), requires_grad=requires_grad)


@signature("empty_like(Tensor input, *, MemoryFormat? memory_format=None, "
           "ScalarType? dtype=None, Layout? layout=None, Device? device=None, "
           "bool? pin_memory=False, bool? requires_grad=False)")
def empty_like(input: Tensor, *, dtype: Any = None, device: Any = None,
               requires_grad: bool = False, memory_format: Any = None) -> Tensor:
    check_device(device)
    return zeros_like(input, dtype=dtype, requires_grad=requires_grad)


@signature("full_like(Tensor input, Scalar fill_value, *, MemoryFormat? memory_format=None, "
           "ScalarType? dtype=None, Layout? layout=None, Device? device=None, "
           "bool? pin_memory=False, bool? requires_grad=False)")
def full_like(input: Tensor, fill_value: Any, *, dtype: Any = None, device: Any = None,
              requires_grad: bool = False, memory_format: Any = None) -> Tensor:
    check_device(device)
    return full(input._data.shape, fill_value, dtype=_like_dtype(input, dtype),
                requires_grad=requires_grad)


def scalar_tensor_like(value: Any, like: Tensor) -> Tensor:
    """A 0-dim tensor for a Python scalar operand (used by reflected operators)."""
    if type(value) is int and not -2 ** 63 <= value < 2 ** 63:
        check_int_scalar(value)  # Note [Python ints as scalars] in _ops/_core.py
        value = wrap_int64(value)
    return _leaf(np.asarray(value, dtype=_dtype.scalar_np_dtype(value)))


@signature("arange(Scalar end, *, Tensor out=None, ScalarType? dtype=None, Layout? layout=None, "
           "Device? device=None, bool? pin_memory=False, bool? requires_grad=False)",
           "arange(Scalar start, Scalar end, *, ScalarType? dtype=None, Layout? layout=None, "
           "Device? device=None, bool? pin_memory=False, bool? requires_grad=False)",
           "arange(Scalar start, Scalar end, Scalar step=1, *, Tensor out=None, "
           "ScalarType? dtype=None, Layout? layout=None, Device? device=None, "
           "bool? pin_memory=False, bool? requires_grad=False)")
def arange(start: Any, end: Any = None, step: Any = 1, *, dtype: Any = None,
           device: Any = None, requires_grad: bool = False) -> Tensor:
    """Values from ``start`` to ``end`` (exclusive): int64 for ints, else the default float."""
    check_device(device)
    if end is None:
        start, end = 0, start
    # 0-dim tensors are Scalars to torch; bools count as integers (arange(True, 3) is int64)
    start, end, step = _scalar_of(start), _scalar_of(end), _scalar_of(step)
    np_dt = _np_dtype(dtype)
    if np_dt is None:
        is_int = all(isinstance(v, (int, np.integer, np.bool_)) for v in (start, end, step))
        np_dt = _dtype.int64.np_dtype if is_int else _dtype.get_default_dtype().np_dtype
    if np_dt.kind in "cb":  # torch's kernel has no complex or bool instantiation
        raise NotImplementedError(
            f"\"arange_cpu\" not implemented for '{_dtype.from_np(np_dt).scalar_name}'")
    if step == 0:
        raise RuntimeError("step must be nonzero")
    if (step > 0 and end < start) or (step < 0 and end > start):
        raise RuntimeError("upper bound and lower bound inconsistent with step sign")
    size = np.ceil((float(end) - float(start)) / float(step))
    if not 0 <= size <= 2.0 ** 63 - 1:  # torch's check, before its storage-size check
        raise RuntimeError("invalid size, possible overflow?")
    n = max(int(size), 0)
    check_new_sizes((n,), np_dt)
    data = (start + step * np.arange(n, dtype=np.float64)).astype(np_dt) if np_dt.kind == "f" \
        else np.arange(start, end, step, dtype=np_dt)
    return _leaf(data, requires_grad)


@signature("linspace(Tensor start, Tensor end, int64_t steps, *, Tensor out=None, "
           "ScalarType? dtype=None, Layout? layout=None, Device? device=None, "
           "bool? pin_memory=False, bool? requires_grad=False)",
           "linspace(Scalar start, Tensor end, int64_t steps, *, Tensor out=None, "
           "ScalarType? dtype=None, Layout? layout=None, Device? device=None, "
           "bool? pin_memory=False, bool? requires_grad=False)",
           "linspace(Tensor start, Scalar end, int64_t steps, *, Tensor out=None, "
           "ScalarType? dtype=None, Layout? layout=None, Device? device=None, "
           "bool? pin_memory=False, bool? requires_grad=False)",
           "linspace(Scalar start, Scalar end, int64_t steps, *, Tensor out=None, "
           "ScalarType? dtype=None, Layout? layout=None, Device? device=None, "
           "bool? pin_memory=False, bool? requires_grad=False)")
def linspace(start: float, end: float, steps: int, *, dtype: Any = None, device: Any = None,
             requires_grad: bool = False) -> Tensor:
    check_device(device)
    np_dt = _np_dtype(dtype) or _dtype.get_default_dtype().np_dtype
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    _no_bool_kernel("linspace_cpu", steps, np_dt)
    check_new_sizes((steps,), np_dt)
    return _leaf(_spaced(start, end, steps, np_dt).astype(np_dt), requires_grad)


def _no_bool_kernel(kernel: str, steps: int, np_dt: np.dtype) -> None:
    """torch fills 0 or 1 steps without its kernel, which has no bool instantiation."""
    if steps > 1 and np_dt.kind == "b":
        raise NotImplementedError(f"\"{kernel}\" not implemented for 'Bool'")


# Note [linspace's two halves]
# torch fills linspace from both ends: with ``step = (end - start) / (steps - 1)``, the first
# ``steps // 2`` values are ``start + step * i`` and the rest ``end - step * (steps - 1 - i)``,
# each a fused multiply-add (one rounding), in the result dtype (in double for integer dtypes,
# after casting start and end to the integer dtype; the values then truncate).  np.linspace
# differs where it matters: with an infinite or NaN end point torch's ``inf - inf * k`` and
# ``inf * 0`` make NaNs at known places (linspace(inf, 1, 5) is [nan, nan, inf, inf, nan]),
# NumPy's last value is always ``end``, and its rounding differs in the last bit (which
# truncation to an integer dtype turns into a whole unit).  The fused step is emulated one
# precision up (float32 in float64, float64 in long double: a product of ``step`` and an
# index below 2**11 is exact there).  Complex values take the real formula per component.
def _spaced(start: Any, end: Any, steps: int, np_dt: np.dtype) -> np.ndarray:
    """The linspace values (before the cast to ``np_dt``), as torch's kernel computes them."""
    start, end = _scalar_of(start), _scalar_of(end)
    if np_dt.kind == "c":
        real_dt = np.dtype(np.float32 if np_dt == np.complex64 else np.float64)
        re = _spaced(complex(start).real, complex(end).real, steps, real_dt)
        im = _spaced(complex(start).imag, complex(end).imag, steps, real_dt)
        return (re + 1j * im).astype(np_dt)
    if np_dt.kind in "iub":
        work: np.dtype = np.dtype(np.float64)
        check_scalar_fits(start, np_dt)
        check_scalar_fits(end, np_dt)
        with np.errstate(all="ignore"):  # torch casts the ends first (truncating, wrapping)
            start, end = np.asarray(start).astype(np_dt), np.asarray(end).astype(np_dt)
    else:
        work = np_dt
    with np.errstate(all="ignore"):
        first, last = np.asarray(start).astype(work), np.asarray(end).astype(work)
        if steps == 1:
            return np.full(1, first, work)
        wide = np.dtype(np.longdouble if work == np.float64 else np.float64)
        step = ((last - first) / work.type(max(steps - 1, 1))).astype(wide)
        idx = np.arange(steps)
        head = first.astype(wide) + step * idx.astype(wide)
        tail = last.astype(wide) - step * (steps - 1 - idx).astype(wide)
        return np.where(idx < steps // 2, head, tail).astype(work)


def _log_exponents(start: Any, end: Any, steps: int, np_dt: np.dtype) -> np.ndarray:
    """logspace's exponents as torch's (unfused, scalar) loop computes them: the ends cast to
    the result dtype, their difference taken there, then the step and the two halves in
    double; one step is ``start`` itself, uncast (logspace(7.5, 0, 1, dtype=int64) is
    ``int(10 ** 7.5)``).  Complex results use the complex linspace."""
    start, end = _scalar_of(start), _scalar_of(end)
    if np_dt.kind == "c":
        return _spaced(start, end, steps, np_dt)
    if steps == 1:
        return np.array([float(start)])
    if np_dt.kind in "iub":
        check_scalar_fits(start, np_dt)
        check_scalar_fits(end, np_dt)
    with np.errstate(all="ignore"):
        first, last = np.asarray(start).astype(np_dt), np.asarray(end).astype(np_dt)
        step = np.float64(last - first) / np.float64(max(steps - 1, 1))
        idx = np.arange(steps, dtype=np.float64)
        head = np.float64(first) + step * idx
        tail = np.float64(last) - step * (steps - 1 - idx)
    return np.where(idx < steps // 2, head, tail)


def _scalar_of(value: Any) -> Any:
    """A Python number from a number or a one-element tensor (linspace's Tensor overloads)."""
    return value.item() if isinstance(value, Tensor) else value


@signature("logspace(Tensor start, Tensor end, int64_t steps, double base=10.0, *, "
           "Tensor out=None, ScalarType? dtype=None, Layout? layout=None, Device? device=None, "
           "bool? pin_memory=False, bool? requires_grad=False)",
           "logspace(Scalar start, Tensor end, int64_t steps, double base=10.0, *, "
           "Tensor out=None, ScalarType? dtype=None, Layout? layout=None, Device? device=None, "
           "bool? pin_memory=False, bool? requires_grad=False)",
           "logspace(Tensor start, Scalar end, int64_t steps, double base=10.0, *, "
           "Tensor out=None, ScalarType? dtype=None, Layout? layout=None, Device? device=None, "
           "bool? pin_memory=False, bool? requires_grad=False)",
           "logspace(Scalar start, Scalar end, int64_t steps, double base=10.0, *, "
           "Tensor out=None, ScalarType? dtype=None, Layout? layout=None, Device? device=None, "
           "bool? pin_memory=False, bool? requires_grad=False)")
def logspace(start: float, end: float, steps: int, base: float = 10.0, *, dtype: Any = None,
             device: Any = None, requires_grad: bool = False, **kwargs: Any) -> Tensor:
    """``base ** linspace(start, end, steps)`` (float32 by default).

    >>> import npgrad
    >>> npgrad.logspace(0, 2, 3)
    tensor([  1.,  10., 100.])
    """
    dt = _dtype.get_default_dtype() if dtype is None else dtype
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    _no_bool_kernel("logspace_cpu", steps, dt.np_dtype)
    check_new_sizes((steps,), dt.np_dtype)  # torch's allocator speaks before any work
    # torch raises ``base`` (a double) to linspace's exponents (Note [linspace's two halves])
    # and casts: integer results truncate (logspace(0, 2, 5, dtype=int64)[3] is 31).
    exps = _log_exponents(start, end, steps, dt.np_dtype)
    with np.errstate(all="ignore"):
        out = np.power(np.float64(base), exps.astype(np.float64)
                       if exps.dtype.kind == "f" else exps)
    return tensor(out.astype(dt.np_dtype), dtype=dt, requires_grad=requires_grad)


@signature("eye(SymInt n, *, Tensor out=None, ScalarType? dtype=None, Layout? layout=None, "
           "Device? device=None, bool? pin_memory=False, bool? requires_grad=False)",
           "eye(SymInt n, SymInt m, *, Tensor out=None, ScalarType? dtype=None, "
           "Layout? layout=None, Device? device=None, bool? pin_memory=False, "
           "bool? requires_grad=False)")
def eye(n: int, m: int | None = None, *, dtype: Any = None, device: Any = None,
        requires_grad: bool = False) -> Tensor:
    check_device(device)
    np_dt = _np_dtype(dtype) or _dtype.get_default_dtype().np_dtype
    check_numel((n, n if m is None else m))
    return _leaf(allocate(lambda shape, dtype: np.eye(*shape, dtype=dtype),
                          (n, n if m is None else m), np_dt), requires_grad)


# -- random numbers ---------------------------------------------------------------------
#
# The generator, its seeding and state live in ``_random``; the transforms from its words
# to values in ``_sampling`` (torch's CPU streams, bit for bit).

def _is_float(np_dt: np.dtype) -> bool:
    return _dtype.from_np(np_dt).is_floating_point  # bfloat16 is no NumPy "f" kind


def _float_sample_dtype(np_dt: np.dtype, kernel: str) -> np.dtype:
    if not _is_float(np_dt):
        raise NotImplementedError(
            f"\"{kernel}\" not implemented for '{_dtype.from_np(np_dt).scalar_name}'")
    return np_dt


@signature("rand(SymIntArrayRef size, *, Generator? generator, Tensor out=None, "
           "ScalarType? dtype=None, Layout? layout=None, Device? device=None, "
           "bool? pin_memory=False, bool? requires_grad=False)",
           "rand(SymIntArrayRef size, *, Tensor out=None, ScalarType? dtype=None, "
           "Layout? layout=None, Device? device=None, bool? pin_memory=False, "
           "bool? requires_grad=False)")
def rand(*size: Any, generator: Generator | None = None, dtype: Any = None, device: Any = None,
         requires_grad: bool = False) -> Tensor:
    """Uniform samples in [0, 1), torch's stream: ``manual_seed(0); rand(2)`` is torch's.

    >>> import npgrad
    >>> _ = npgrad.manual_seed(0)
    >>> npgrad.rand(2)
    tensor([0.4963, 0.7682])
    """
    check_device(device)
    np_dt = _np_dtype(dtype) or _dtype.get_default_dtype().np_dtype
    shape = tuple(parse_shape(size))
    check_new_sizes(shape, np_dt)
    _float_sample_dtype(np_dt, "check_uniform_bounds")
    values = _sampling.uniform(get_generator(generator), math.prod(shape), np_dt, 0.0, 1.0)
    return _leaf(values.reshape(shape), requires_grad)


@signature("randn(SymIntArrayRef size, *, Generator? generator, Tensor out=None, "
           "ScalarType? dtype=None, Layout? layout=None, Device? device=None, "
           "bool? pin_memory=False, bool? requires_grad=False)",
           "randn(SymIntArrayRef size, *, Tensor out=None, ScalarType? dtype=None, "
           "Layout? layout=None, Device? device=None, bool? pin_memory=False, "
           "bool? requires_grad=False)")
def randn(*size: Any, generator: Generator | None = None, dtype: Any = None, device: Any = None,
          requires_grad: bool = False) -> Tensor:
    """Standard normal samples, torch's stream (its kernel for >= 16 elements and below)."""
    check_device(device)
    np_dt = _np_dtype(dtype) or _dtype.get_default_dtype().np_dtype
    shape = tuple(parse_shape(size))
    check_new_sizes(shape, np_dt)
    if np_dt.kind == "c":
        return _leaf(_complex_normal(get_generator(generator), shape, np_dt), requires_grad)
    _float_sample_dtype(np_dt, "normal_kernel_cpu")
    values = _sampling.normal(get_generator(generator), math.prod(shape), np_dt, 0.0, 1.0)
    return _leaf(values.reshape(shape), requires_grad)


def _complex_normal(gen: Any, shape: tuple, np_dt: np.dtype) -> np.ndarray:
    """torch's complex ``randn``: the real and imaginary parts, interleaved, are one draw of
    twice as many real normals with standard deviation 1/sqrt(2) (variance 1/2 each, 1 in
    all), in the parts' dtype."""
    real_dt = np.dtype(np_dt.char.lower())
    values = _sampling.normal(gen, 2 * math.prod(shape), real_dt, 0.0, 1 / math.sqrt(2))
    return values.view(np_dt).reshape(shape)


@signature("randint(SymInt high, SymIntArrayRef size, *, Generator? generator, Tensor out=None, "
           "ScalarType? dtype=None, Layout? layout=None, Device? device=None, "
           "bool? pin_memory=False, bool? requires_grad=False)",
           "randint(SymInt high, SymIntArrayRef size, *, Tensor out=None, "
           "ScalarType? dtype=None, Layout? layout=None, Device? device=None, "
           "bool? pin_memory=False, bool? requires_grad=False)",
           "randint(SymInt low, SymInt high, SymIntArrayRef size, *, Generator? generator, "
           "Tensor out=None, ScalarType? dtype=None, Layout? layout=None, Device? device=None, "
           "bool? pin_memory=False, bool? requires_grad=False)",
           "randint(SymInt low, SymInt high, SymIntArrayRef size, *, Tensor out=None, "
           "ScalarType? dtype=None, Layout? layout=None, Device? device=None, "
           "bool? pin_memory=False, bool? requires_grad=False)")
def randint(low: int, high: Any = None, size: Any = None, *, generator: Generator | None = None,
            dtype: Any = None, device: Any = None, requires_grad: bool = False) -> Tensor:
    """Integers in ``[low, high)`` (int64 unless ``dtype``), torch's stream."""
    check_device(device)
    if size is None:
        low, high, size = 0, low, high
    np_dt = _np_dtype(dtype) or _dtype.int64.np_dtype
    shape = tuple(parse_shape((size,)))
    check_new_sizes(shape, np_dt)  # torch allocates before it checks the range
    low, high = int(low), int(high)
    _check_random_range(low, high)
    values = _sampling.random_from_to(get_generator(generator), math.prod(shape), np_dt,
                                      low, high)
    return _leaf(values.reshape(shape), requires_grad)


@signature("randperm(SymInt n, *, Generator? generator, Tensor out=None, ScalarType? dtype=None, "
           "Layout? layout=None, Device? device=None, bool? pin_memory=False, "
           "bool? requires_grad=False)",
           "randperm(SymInt n, *, Tensor out=None, ScalarType? dtype=None, Layout? layout=None, "
           "Device? device=None, bool? pin_memory=False, bool? requires_grad=False)")
def randperm(n: int, *, generator: Generator | None = None, dtype: Any = None,
             device: Any = None, requires_grad: bool = False) -> Tensor:
    """A random permutation of ``0 .. n-1`` (int64 unless ``dtype``), torch's algorithm."""
    check_device(device)
    np_dt = _np_dtype(dtype) or _dtype.int64.np_dtype
    n = int(n)
    if n < 0:
        raise RuntimeError(f"Trying to create tensor with negative dimension {n}: [{n}]")
    if np_dt == np.bool_:
        raise NotImplementedError("\"randperm\" not implemented for 'Bool'")
    # torch allocates the result first: its size checks and allocation failure come before
    # the range checks (np.empty only reserves the memory)
    allocate(np.empty, (n,), np_dt)
    if np_dt.kind in "iu" and n > 0 and n - 1 > np.iinfo(np_dt).max:
        raise overflow_error(C_NAMES[np_dt.name])
    limit = {"float16": (2049, "2049", "Half"), "float32": (2 ** 24 + 1, "2^24+1", "Float"),
             "float64": (2 ** 53 + 1, "2^53+1", "Double")}.get(np_dt.name)
    if limit is not None and n > limit[0]:
        raise RuntimeError(f"n cannot be greater than {limit[1]} for {limit[2]} type.")
    values = _sampling.randperm(get_generator(generator), n)
    return _leaf(values.astype(np_dt), requires_grad)


@signature("rand_like(Tensor input, *, Generator? generator, MemoryFormat? memory_format=None, "
           "ScalarType? dtype=None, Layout? layout=None, Device? device=None, "
           "bool? pin_memory=False, bool? requires_grad=False)",
           "rand_like(Tensor input, *, MemoryFormat? memory_format=None, ScalarType? dtype=None, "
           "Layout? layout=None, Device? device=None, bool? pin_memory=False, "
           "bool? requires_grad=False)")
def rand_like(input: Tensor, *, dtype: Any = None, device: Any = None,  # noqa: A002
              requires_grad: bool = False, memory_format: Any = None,
              generator: Generator | None = None) -> Tensor:
    return rand(input._data.shape, dtype=_like_dtype(input, dtype), device=device,
                requires_grad=requires_grad, generator=generator)


@signature("randn_like(Tensor input, *, Generator? generator, MemoryFormat? memory_format=None, "
           "ScalarType? dtype=None, Layout? layout=None, Device? device=None, "
           "bool? pin_memory=False, bool? requires_grad=False)",
           "randn_like(Tensor input, *, MemoryFormat? memory_format=None, "
           "ScalarType? dtype=None, Layout? layout=None, Device? device=None, "
           "bool? pin_memory=False, bool? requires_grad=False)")
def randn_like(input: Tensor, *, dtype: Any = None, device: Any = None,  # noqa: A002
               requires_grad: bool = False, memory_format: Any = None,
               generator: Generator | None = None) -> Tensor:
    return randn(input._data.shape, dtype=_like_dtype(input, dtype), device=device,
                 requires_grad=requires_grad, generator=generator)


def is_tensor(obj: Any) -> bool:
    return isinstance(obj, Tensor)


@signature("numel(Tensor input)")
def numel(input: Tensor) -> int:
    return input._data.size


# -- Tensor.new_*: factories whose dtype defaults to an existing tensor's ---------------------

def _self_dtype(self: Tensor, dtype: Any) -> Any:
    return dtype if dtype is not None else _dtype.from_np(self._data.dtype)


def new_zeros(self: Tensor, *size: Any, dtype: Any = None, device: Any = None,
              requires_grad: bool = False, layout: Any = None, pin_memory: bool = False) -> Tensor:
    """Zeros of ``size`` with ``self``'s dtype unless ``dtype`` is given.

    >>> import npgrad
    >>> npgrad.ones(1, dtype=npgrad.float64).new_zeros(2)
    tensor([0., 0.], dtype=npgrad.float64)
    """
    check_device(device)
    check_nonnegative(parse_shape(size))  # the allocator's message, not zeros'
    return zeros(*size, dtype=_self_dtype(self, dtype), requires_grad=requires_grad)


def new_ones(self: Tensor, *size: Any, dtype: Any = None, device: Any = None,
             requires_grad: bool = False, layout: Any = None, pin_memory: bool = False) -> Tensor:
    """Ones of ``size`` with ``self``'s dtype unless ``dtype`` is given."""
    check_device(device)
    return ones(*size, dtype=_self_dtype(self, dtype), requires_grad=requires_grad)


def new_empty(self: Tensor, *size: Any, dtype: Any = None, device: Any = None,
              requires_grad: bool = False, layout: Any = None, pin_memory: bool = False) -> Tensor:
    """An uninitialised tensor of ``size`` (npgrad fills it with zeros) with ``self``'s dtype."""
    check_device(device)
    check_nonnegative(parse_shape(size))  # the allocator's message, not zeros'
    return zeros(*size, dtype=_self_dtype(self, dtype), requires_grad=requires_grad)


def new_full(self: Tensor, size: Any, fill_value: Any, *, dtype: Any = None, device: Any = None,
             requires_grad: bool = False, layout: Any = None, pin_memory: bool = False) -> Tensor:
    """``fill_value`` everywhere, cast to ``self``'s dtype unless ``dtype`` is given.

    >>> import npgrad
    >>> npgrad.arange(3).new_full((2,), 2.5)
    tensor([2, 2])
    """
    check_device(device)
    np_dt = _np_dtype(_self_dtype(self, dtype))
    if isinstance(fill_value, Tensor):
        fill_value = fill_value.item()
    shape = parse_shape((size,))
    check_new_sizes(shape, np_dt)
    with np.errstate(all="ignore"):
        data = np.full(shape, fill_value).astype(np_dt)
    return _leaf(data, requires_grad)


def new_tensor(self: Tensor, data: Any, *, dtype: Any = None, device: Any = None,
               requires_grad: bool = False, layout: Any = None, pin_memory: bool = False) -> Tensor:
    """A new leaf holding a copy of ``data``, with ``self``'s dtype unless ``dtype`` is given."""
    check_device(device)
    if isinstance(data, Tensor):
        warnings.warn(
            "To copy construct from a tensor, it is recommended to use sourceTensor.detach()."
            "clone() or sourceTensor.detach().clone().requires_grad_(True), rather than "
            "tensor.new_tensor(sourceTensor).", UserWarning, stacklevel=2)
        arr = np.array(data._data, dtype=_np_dtype(_self_dtype(self, dtype)), copy=True)
        return _leaf(arr, requires_grad)
    return tensor(data, dtype=_self_dtype(self, dtype), requires_grad=requires_grad)


def _tril_size(row: int, col: int, offset: int) -> int:
    """torch's element count of the lower triangle, in int64 arithmetic (so a huge ``row``
    wraps to the negative size torch then refuses)."""
    if row == 0 or col == 0:
        return 0
    first = min(col, 1 + offset) if offset > 0 else int(row + offset > 0)
    last = max(0, min(col, wrap_int64(row + offset)))
    rows_all = max(0, min(row, wrap_int64(row + offset)))
    trapezoid = wrap_int64(last - first + 1)
    size = wrap_int64((first + last) * trapezoid) >> 1
    diff = wrap_int64(rows_all - trapezoid)
    if diff > 0:
        size = wrap_int64(size + diff * col)
    return size


def _triangle_indices(name: str, row: int, col: int, offset: int, dtype: Any,
                      upper: bool) -> Tensor:
    if row < 0:
        raise RuntimeError(f"row must be non-negative, got{row}")
    if col < 0:
        raise RuntimeError(f"col must be non-negative, got{col}")
    row, col, offset = int(row), int(col), int(offset)
    size = (wrap_int64(row * col - _tril_size(row, col, offset - 1)) if upper
            else _tril_size(row, col, offset))
    check_nonnegative((2, size))
    np_dt = _np_dtype(dtype) or np.dtype(np.int64)
    out = allocate(np.empty, (2, size), np_dt)  # torch's size and allocation errors first
    if np_dt != np.int64 and np_dt != np.int32:
        raise NotImplementedError(f"\"{name}\" not implemented for "
                                  f"'{_dtype.from_np(np_dt).scalar_name}'")
    if size:
        out[0], out[1] = _triangle_coords(row, col, offset, upper)
    return _leaf(out)


def _triangle_coords(row: int, col: int, offset: int, upper: bool) -> tuple:
    """The coordinates row by row, built from the rows that have entries only (their count
    is at most the number of entries, so a huge ``row`` with few entries stays cheap)."""
    if upper:
        rows = np.arange(0, max(0, min(row, col - offset)), dtype=np.int64)
        start = np.maximum(rows + offset, 0)
        count = col - start
    else:
        rows = np.arange(min(row, max(0, -offset)), row, dtype=np.int64)
        start = np.zeros_like(rows)
        count = np.minimum(rows + offset + 1, col)
    first = np.cumsum(count) - count
    cols = np.arange(int(count.sum()), dtype=np.int64) - np.repeat(first - start, count)
    return np.repeat(rows, count), cols


# torch's own signature has ScalarType? dtype=long; an explicit None also means long
_TRIANGLE = ("(int64_t row, int64_t col, int64_t offset=0, *, ScalarType? dtype=None, "
             "Layout? layout=None, Device? device=None, bool? pin_memory=None)")


@signature("tril_indices" + _TRIANGLE)
def tril_indices(row: int, col: int, offset: int = 0, *, dtype: Any = None, device: Any = None,
                 layout: Any = None, pin_memory: Any = None) -> Tensor:
    """The (row, col) coordinates of the lower triangle of a ``row`` x ``col`` matrix, as 2 x N.

    >>> import npgrad
    >>> npgrad.tril_indices(2, 2)
    tensor([[0, 1, 1],
            [0, 0, 1]])
    """
    check_device(device)
    return _triangle_indices("tril_indices", row, col, offset, dtype, False)


@signature("triu_indices" + _TRIANGLE)
def triu_indices(row: int, col: int, offset: int = 0, *, dtype: Any = None, device: Any = None,
                 layout: Any = None, pin_memory: Any = None) -> Tensor:
    """The (row, col) coordinates of the upper triangle of a ``row`` x ``col`` matrix, as 2 x N."""
    check_device(device)
    return _triangle_indices("triu_indices", row, col, offset, dtype, True)


# -- sampling from distributions ----------------------------------------------------------
#
# Note [Sampling and autograd]
# Samples are not differentiable, but torch still records most samplers when an input
# requires grad, each under its own grad_fn name, and passes back zero gradients: each
# sampler is a ``General`` entry of the op registry (Note [An op is an entry]) whose rules
# give zeros, shaped as torch's give them: ``normal(mean, std)`` keeps the sizes of
# ``mean`` and ``std`` (``grad_fn._saved_mean_sym_sizes``) and returns zeros of those;
# ``bernoulli_(p)`` zeros of ``p``'s size and dtype, which torch keeps without a getter;
# the others zeros like the gradient.  Their tangent is zero (torch's ``self_t.zero_()``).
# An entry only records: the draws are made before, by the op's function, so recording
# never touches a random stream.  ``bernoulli(input, p)`` with a float ``p`` records
# torch's ``NotImplemented`` node, whose backward raises; ``multinomial`` gives int64
# indices and records nothing.

def _zero_grad(grad: Tensor) -> Tensor:
    return zeros_like_grad(grad)


def _zeros_sized(grad: Tensor, sizes: tuple, dtype: Any = None) -> Tensor:
    """Zeros of ``sizes`` in ``dtype`` (the gradient's by default), without history."""
    return _make(type(grad), np.zeros(sizes, grad._data.dtype if dtype is None else dtype),
                 None, False, INFERENCE_COUNTER if _tls.mode & INFERENCE else None)


def _zero_tangent(result: Tensor) -> Tensor:
    return _leaf(np.zeros_like(result._data))


def _sampler(signature: str, grad_fn: str) -> General:
    """The entry of a sampler of one tensor input whose gradient is zero."""
    return General(signature, grad_fn=grad_fn, forward=None,
                   derivatives={"self": _zero_grad}, tangent=_zero_tangent)


BERNOULLI = _sampler("bernoulli(Tensor input, *, Generator? generator=None, Tensor out=None)",
                     "BernoulliBackward0")
BERNOULLI_TENSOR_ = General(
    "bernoulli_(Tensor input, Tensor p, *, Generator? generator=None)",
    grad_fn="BernoulliBackward1", forward=None, inputs=("self", "p"), params=("p_dtype",),
    keeps=("p_sym_sizes", "p_dtype"), hidden=("p_sym_sizes", "p_dtype"),
    derivatives={"self": _zero_grad,
                 "p": lambda grad, p_sym_sizes, p_dtype: _zeros_sized(grad, p_sym_sizes, p_dtype)},
    tangent=_zero_tangent)
BERNOULLI_FLOAT_ = _sampler("bernoulli_(Tensor input, double p=0.5, *, Generator? generator=None)",
                            "BernoulliBackward2")
NORMAL_TENSOR_FLOAT = General(
    "normal(Tensor mean, double std=1, *, Generator? generator=None, Tensor out=None)",
    grad_fn="NormalBackward1", forward=None, inputs=("mean",), keeps=("mean_sym_sizes",),
    derivatives={"mean": lambda grad, mean_sym_sizes: _zeros_sized(grad, mean_sym_sizes)},
    tangent=_zero_tangent)
NORMAL_FLOAT_TENSOR = General(
    "normal(double mean, Tensor std, *, Generator? generator=None, Tensor out=None)",
    grad_fn="NormalBackward2", forward=None, inputs=("std",), keeps=("std_sym_sizes",),
    derivatives={"std": lambda grad, std_sym_sizes: _zeros_sized(grad, std_sym_sizes)},
    tangent=_zero_tangent)
NORMAL_TENSOR_TENSOR = General(
    "normal(Tensor mean, Tensor std, *, Generator? generator=None, Tensor out=None)",
    grad_fn="NormalBackward3", forward=None, inputs=("mean", "std"),
    keeps=("mean_sym_sizes", "std_sym_sizes"),
    derivatives={"mean": lambda grad, mean_sym_sizes: _zeros_sized(grad, mean_sym_sizes),
                 "std": lambda grad, std_sym_sizes: _zeros_sized(grad, std_sym_sizes)},
    tangent=_zero_tangent)
POISSON = _sampler("poisson(Tensor input, Generator? generator=None, *, Tensor out=None)",
                   "PoissonBackward0")
EXPONENTIAL_ = _sampler("exponential_(Tensor input, double lambd=1, *, "
                        "Generator? generator=None)", "ExponentialBackward0")
GEOMETRIC_ = _sampler("geometric_(Tensor input, double p, *, Generator? generator=None)",
                      "GeometricBackward0")
LOG_NORMAL_ = _sampler("log_normal_(Tensor input, double mean=1, double std=2, *, "
                       "Generator? generator=None)", "LogNormalBackward0")
CAUCHY_ = _sampler("cauchy_(Tensor input, double median=0, double sigma=1, *, "
                   "Generator? generator=None)", "CauchyBackward0")
RANDOM_FROM_ = _sampler("random_(Tensor input, int64_t from, int64_t? to, *, "
                        "Generator? generator=None)", "RandomBackward0")
RANDOM_TO_ = _sampler("random_(Tensor input, int64_t to, *, Generator? generator=None)",
                      "RandomBackward1")
RANDOM_ = _sampler("random_(Tensor input, *, Generator? generator=None)", "RandomBackward2")
UNIFORM_ = _sampler("uniform_(Tensor input, double from=0, double to=1, *, "
                    "Generator? generator=None)", "UniformBackward0")
NORMAL_ = _sampler("normal_(Tensor input, double mean=0, double std=1, *, "
                   "Generator? generator=None)", "NormalBackward0")


def _cpp_float(x: float) -> str:
    """A float as torch's C++ messages print it (``-1``, ``1.5``)."""
    return f"{float(x):g}"


def _not_implemented_for(kernel: str, data: np.ndarray) -> None:
    name = _dtype.from_np(data.dtype).scalar_name
    raise NotImplementedError(f'"{kernel}" not implemented for \'{name}\'')


def _num_samples(value: Any, position: int) -> int:
    if isinstance(value, Tensor) and value._data.ndim == 0 and value._data.dtype.kind in "iu":
        return int(value._data)
    if isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_)):
        return int(value)
    raise TypeError(f"multinomial(): argument 'num_samples' (position {position}) must be int, "
                    f"not {type(value).__name__}")


def _check_multinomial(data: np.ndarray, n: int, replacement: bool) -> None:
    if data.ndim not in (1, 2):
        raise RuntimeError("prob_dist must be 1 or 2 dim")
    if not _is_float(data.dtype):
        name = _dtype.from_np(data.dtype).scalar_name
        raise RuntimeError("multinomial only supports floating-point dtypes for input, got: "
                           f"{name}")
    if n <= 0:
        raise RuntimeError("cannot sample n_sample <= 0 samples")
    if not replacement and n > data.shape[-1]:
        raise RuntimeError("cannot sample n_sample > prob_dist.size(-1) samples without "
                           "replacement")
    if data.shape[-1] > 2 ** 24:
        raise RuntimeError("number of categories cannot exceed 2^24")


def _check_race_probs(probs: np.ndarray) -> None:
    """torch's checks before its exponential-race sampler (no replacement, or one sample)."""
    if probs.size == 0:
        raise RuntimeError("aminmax(): cannot compute aminmax over an empty dimension as the "
                           "operation has no identity.")
    if not (probs.max() < np.inf and probs.min() >= 0):  # NaN fails both comparisons
        raise RuntimeError("probability tensor contains either `inf`, `nan` or element < 0")
    if (probs.sum(axis=-1) == 0).any():
        raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")


def _check_cdf_probs(probs: np.ndarray) -> None:
    """torch's checks in its with-replacement sampler: row by row, entry by entry."""
    for row in probs:
        for p in row:
            if not p >= 0:
                raise RuntimeError("invalid multinomial distribution (encountering probability "
                                   "entry < 0)")
            if not np.isfinite(p):
                raise RuntimeError("invalid multinomial distribution (encountering probability "
                                   "entry = infinity or NaN)")
        if not row.sum() > 0:
            raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")


@signature("multinomial(Tensor input, SymInt num_samples, bool replacement=False, *, "
           "Generator? generator=None, Tensor out=None)")
def multinomial(input: Tensor, num_samples: int, replacement: bool = False, *,  # noqa: A002
                generator: Generator | None = None, out: Any = None) -> Tensor:
    """``num_samples`` category indices per row of ``input`` (non-negative weights), as int64.

    Without replacement each row's categories are drawn by an exponential race
    (weight / Exp(1), largest first), as torch does; with replacement, by
    inverting each row's cumulative distribution.

    >>> import npgrad
    >>> npgrad.multinomial(npgrad.tensor([0., 1., 0.]), 1)
    tensor([1])
    """
    return _multinomial(input, _num_samples(num_samples, 2), replacement, generator)


def tensor_multinomial(self: Tensor, num_samples: int, replacement: bool = False, *,
                       generator: Generator | None = None) -> Tensor:
    """``Tensor.multinomial``: as ``multinomial(self, ...)`` (errors count ``self`` out).

    >>> import npgrad
    >>> npgrad.tensor([[1., 0.], [0., 1.]]).multinomial(1)
    tensor([[0],
            [1]])
    """
    return _multinomial(self, _num_samples(num_samples, 1), replacement, generator)


def _multinomial(input: Tensor, n: int, replacement: bool,  # noqa: A002
                 generator: Generator | None) -> Tensor:
    data = input._data
    _check_multinomial(data, n, replacement)
    probs = data.astype(np.float64).reshape(data.shape if data.ndim == 2 else (1, -1))
    out_shape = (n,) if data.ndim == 1 else (data.shape[0], n)
    if probs.shape[0] == 0:
        return _leaf(np.zeros(out_shape, dtype=np.int64))
    gen = get_generator(generator)
    # torch samples in the input's own precision (float64 checks above are only checks)
    probs_own = np.ascontiguousarray(data).reshape(probs.shape)
    if not replacement or n == 1:
        _check_race_probs(probs)
        idx = _sampling.multinomial_race(gen, probs_own, n)
    else:
        _check_cdf_probs(probs)
        idx = _sampling.multinomial_cdf(gen, probs_own, n)
    return _leaf(idx.reshape(out_shape).astype(np.int64))


def _check_bernoulli_p(p: float) -> None:
    if not 0 <= p <= 1:
        raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={_cpp_float(p)}")


def _bernoulli_probs(p: Tensor) -> np.ndarray:
    """A probability tensor's values, with torch's dtype and range checks."""
    data = p._data
    if not _is_float(data.dtype):
        _not_implemented_for("bernoulli_tensor_cpu_p_", data)
    if not ((data >= 0) & (data <= 1)).all():
        raise RuntimeError("Expected p_in >= 0 && p_in <= 1 to be true, but got false.  (Could "
                           "this error message be improved?  If so, please report an "
                           "enhancement request to PyTorch.)")
    return data


@signature("bernoulli(Tensor input, *, Generator? generator=None, Tensor out=None)",
           "bernoulli(Tensor input, double p, *, Generator? generator=None)")
def bernoulli(input: Tensor, p: float | None = None, *,  # noqa: A002
              generator: Generator | None = None, out: Any = None) -> Tensor:
    """1 with probability ``input`` (or ``p`` when given), else 0; ``input``'s dtype.

    >>> import npgrad
    >>> npgrad.bernoulli(npgrad.tensor([0., 1.]))
    tensor([0., 1.])
    """
    if not isinstance(input, Tensor):
        raise TypeError("bernoulli(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")
    gen = get_generator(generator)
    if p is None:
        probs = _bernoulli_probs(input)
        drawn = _sampling.bernoulli_tensor(gen, np.ascontiguousarray(probs).reshape(-1))
        out_data = drawn.reshape(probs.shape).astype(probs.dtype)
        return BERNOULLI.record((input,), out_data)  # type: ignore[no-any-return]
    _check_bernoulli_p(p)
    data = input._data
    out_data = _sampling.bernoulli_scalar(gen, data.size, p).reshape(data.shape).astype(data.dtype)
    return record_not_implemented("bernoulli", (input,), out_data)


def bernoulli_(self: Tensor, p: Any = 0.5, *, generator: Generator | None = None) -> Tensor:
    """Fill ``self`` in place with 1 with probability ``p`` (a float or a tensor), else 0.

    >>> import npgrad
    >>> npgrad.zeros(2).bernoulli_(1.0)
    tensor([1., 1.])
    """
    gen = get_generator(generator)
    dest = self._data
    if isinstance(p, Tensor):
        from ._ops.shape import expand

        probs = _bernoulli_probs(expand(p, dest.shape))
        drawn = _sampling.bernoulli_tensor(gen, _sampling.to_fill_order(probs, dest))
        return sample_inplace(self, _sampling.from_fill_order(drawn, dest), BERNOULLI_TENSOR_,
                               p, (p._data.dtype,))
    _check_bernoulli_p(p)
    drawn = _sampling.bernoulli_scalar(gen, dest.size, p)
    return sample_inplace(self, _sampling.from_fill_order(drawn, dest), BERNOULLI_FLOAT_)


def sample_inplace(self: Tensor, values: np.ndarray, entry: General, p: Any = None,
                    params: tuple = ()) -> Tensor:
    """Write ``values`` into ``self``: torch's in-place checks, the sampler's ``entry``
    recorded if ``self`` (or the probability tensor ``p`` of ``bernoulli_``) requires grad."""
    # Recorded, or carrying a forward-mode tangent: the sampler's node replaces the history
    # (and zeroes the tangent: random values depend on nothing); otherwise NumPy writes
    # straight into the storage.
    if _tls.mode == RECORDING and (self._requires_grad or (p is not None and p._requires_grad)) \
            or (FW.active and has_tangent(self)):
        if p is None:
            def sampled(x: Tensor) -> Tensor:
                return entry.record((x,), values.astype(x._data.dtype), params)  # type: ignore[no-any-return]

            return inplace.apply_inplace(self, sampled)

        def sampled_from(x: Tensor, p: Tensor) -> Tensor:
            return entry.record((x, p), values.astype(x._data.dtype), params)  # type: ignore[no-any-return]

        return inplace.apply_inplace(self, sampled_from, p)
    return inplace.random_fill(self, values)


_NORMAL_OVERLOADS = (
    " * (Tensor mean, Tensor std, *, torch.Generator generator = None, Tensor out = None)\n"
    " * (Tensor mean, float std = 1, *, torch.Generator generator = None, Tensor out = None)\n"
    " * (float mean, Tensor std, *, torch.Generator generator = None, Tensor out = None)\n"
    " * (float mean, float std, tuple of ints size, *, torch.Generator generator = None, "
    "Tensor out = None, torch.dtype dtype = None, torch.layout layout = None, torch.device "
    "device = None, bool pin_memory = False, bool requires_grad = False)\n")


def _normal_type_error(args: tuple) -> TypeError:
    names = ", ".join("Tensor" if isinstance(a, Tensor) else type(a).__name__ for a in args)
    return TypeError(f"normal() received an invalid combination of arguments - got ({names}), "
                     f"but expected one of:\n{_NORMAL_OVERLOADS}")


def _is_number(v: Any) -> bool:
    return isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, bool)


def _normal_float_data(t: Tensor) -> np.ndarray:
    if not _is_float(t._data.dtype):
        _not_implemented_for("normal_kernel_cpu", t._data)
    return t._data


@signature("normal(Tensor mean, Tensor std, *, Generator? generator=None, Tensor out=None)",
           "normal(Tensor mean, double std=1, *, Generator? generator=None, Tensor out=None)",
           "normal(double mean, Tensor std, *, Generator? generator=None, Tensor out=None)",
           "normal(double mean, double std, SymIntArrayRef size, *, Generator? generator=None, "
           "Tensor out=None, ScalarType? dtype=None, Layout? layout=None, Device? device=None, "
           "bool? pin_memory=False, bool? requires_grad=False)")
def normal(mean: Any, std: Any = 1.0, size: Any = None, *, generator: Generator | None = None,
           out: Any = None, dtype: Any = None, layout: Any = None, device: Any = None,
           pin_memory: bool = False, requires_grad: bool = False) -> Tensor:
    """Normal samples: elementwise from tensor ``mean``/``std`` (broadcast), or of ``size``.

    >>> import npgrad
    >>> npgrad.normal(npgrad.zeros(2), 0.0)
    tensor([0., 0.])
    >>> npgrad.normal(0., 1., (2, 3)).shape
    torch.Size([2, 3])
    """
    gen = get_generator(generator)
    mean_t, std_t = isinstance(mean, Tensor), isinstance(std, Tensor)
    if size is not None:
        if (mean_t or std_t or not (_is_number(mean) and _is_number(std))
                or not isinstance(size, (tuple, list))):
            raise _normal_type_error((mean, std, size))
        if std < 0:
            raise RuntimeError(f"normal expects std >= 0.0, but found std {_cpp_float(std)}")
        np_dt = _np_dtype(dtype) or _dtype.get_default_dtype().np_dtype
        shape = tuple(parse_shape((size,)))
        _float_sample_dtype(np_dt, "normal_kernel_cpu")
        values = _sampling.normal(gen, math.prod(shape), np_dt, float(mean), float(std))
        return _leaf(values.reshape(shape), requires_grad)
    if std_t and std._data.dtype.kind == "c":  # torch's first check of a tensor std
        raise RuntimeError("normal expects standard deviation to be non-complex")
    if mean_t and std_t:
        # the samples take mean's dtype; torch multiplies them by an integer or bool std too
        m = _normal_float_data(mean)
        s = std._data if std._data.dtype.kind in "iub" else _normal_float_data(std)
        if (s < 0).any():
            raise RuntimeError("normal expects all elements of std >= 0.0")
        from ._ops._shape_util import broadcast_shapes

        shape = tuple(broadcast_shapes(m.shape, s.shape))
        # torch: standard normals in mean's dtype, then ``.mul_(std).add_(mean)``
        z = _sampling.normal(gen, math.prod(shape), m.dtype, 0.0, 1.0).reshape(shape)
        values = _inplace_binary(_inplace_binary(z, s, np.multiply), m, np.add)
        return NORMAL_TENSOR_TENSOR.record((mean, std), values)  # type: ignore[no-any-return]
    if mean_t and _is_number(std):
        m = _normal_float_data(mean)
        if std < 0:
            raise RuntimeError(f"normal expects std >= 0.0, but found std {_cpp_float(std)}")
        z = _sampling.normal(gen, m.size, m.dtype, 0.0, float(std)).reshape(m.shape)
        return NORMAL_TENSOR_FLOAT.record((mean,), z + m)  # type: ignore[no-any-return]
    if std_t and _is_number(mean):
        s = _normal_float_data(std)
        if (s < 0).any():
            raise RuntimeError("normal expects all elements of std >= 0.0")
        z = _sampling.normal(gen, s.size, s.dtype, 0.0, 1.0).reshape(s.shape)
        values = _inplace_binary(_inplace_binary(z, s, np.multiply), np.asarray(mean, s.dtype),
                                 np.add)
        return NORMAL_FLOAT_TENSOR.record((std,), values)  # type: ignore[no-any-return]
    raise _normal_type_error((mean, std))


def _inplace_binary(out: np.ndarray, other: np.ndarray, ufunc: Any) -> np.ndarray:
    """``out.op_(other)`` as torch computes it: in the promoted dtype, cast back to ``out``'s."""
    common = np.promote_types(out.dtype, other.dtype)
    return ufunc(out.astype(common), other.astype(common)).astype(out.dtype)


@signature("poisson(Tensor input, Generator? generator=None, *, Tensor out=None)")
def poisson(input: Tensor, generator: Generator | None = None) -> Tensor:  # noqa: A002
    """Poisson counts with rates ``input`` (non-negative floats), in ``input``'s dtype.

    >>> import npgrad
    >>> npgrad.poisson(npgrad.zeros(3))
    tensor([0., 0., 0.])
    """
    data = input._data
    if not _is_float(data.dtype):
        _not_implemented_for("poisson_cpu", data)
    if not (data >= 0).all():  # NaN fails too
        raise RuntimeError("invalid Poisson rate, expected rate to be non-negative")
    rates = np.ascontiguousarray(data).reshape(-1).astype(np.float64)
    counts = _sampling.poisson(get_generator(generator), rates).reshape(data.shape)
    return POISSON.record((input,), _sampling.to_dtype(counts, data.dtype))  # type: ignore[no-any-return]


def _check_random_range(low: int, high: int) -> None:
    if low >= high:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={low} "
                           f">= to={high}")


@signature("randint_like(Tensor input, SymInt low, SymInt high, *, Generator? generator, "
           "MemoryFormat? memory_format=None, ScalarType? dtype=None, Layout? layout=None, "
           "Device? device=None, bool? pin_memory=False, bool? requires_grad=False)",
           "randint_like(Tensor input, SymInt low, SymInt high, *, "
           "MemoryFormat? memory_format=None, ScalarType? dtype=None, Layout? layout=None, "
           "Device? device=None, bool? pin_memory=False, bool? requires_grad=False)",
           "randint_like(Tensor input, Tensor high, *, Generator? generator, "
           "MemoryFormat? memory_format=None, ScalarType? dtype=None, Layout? layout=None, "
           "Device? device=None, bool? pin_memory=False, bool? requires_grad=False)",
           "randint_like(Tensor input, Tensor high, *, MemoryFormat? memory_format=None, "
           "ScalarType? dtype=None, Layout? layout=None, Device? device=None, "
           "bool? pin_memory=False, bool? requires_grad=False)",
           "randint_like(Tensor input, SymInt high, *, Generator? generator, "
           "MemoryFormat? memory_format=None, ScalarType? dtype=None, Layout? layout=None, "
           "Device? device=None, bool? pin_memory=False, bool? requires_grad=False)",
           "randint_like(Tensor input, SymInt high, *, MemoryFormat? memory_format=None, "
           "ScalarType? dtype=None, Layout? layout=None, Device? device=None, "
           "bool? pin_memory=False, bool? requires_grad=False)")
def randint_like(input: Tensor, low: int = 0, high: int | None = None, *,  # noqa: A002
                 dtype: Any = None, layout: Any = None, device: Any = None,
                 requires_grad: bool = False, memory_format: Any = None,
                 generator: Generator | None = None) -> Tensor:
    """Integers in ``[low, high)`` shaped like ``input``, with its dtype unless ``dtype`` is given.

    >>> import npgrad
    >>> npgrad.randint_like(npgrad.zeros(2), 1)
    tensor([0., 0.])
    """
    check_device(device)
    if high is None:
        low, high = 0, low
    low, high = int(low), int(high)
    _check_random_range(low, high)
    np_dt = _np_dtype(_like_dtype(input, dtype))
    shape = input._data.shape
    data = _sampling.random_from_to(get_generator(generator), math.prod(shape), np_dt, low, high)
    return _leaf(data.reshape(shape), requires_grad)


def _strided_storage_size(shape: tuple, strides: tuple, itemsize: int) -> int:
    """torch's element count of the storage under ``shape``/``strides``, with its unsigned
    64-bit overflow checks (a negative stride reads as a huge unsigned one, as in torch)."""
    if 0 in shape:
        return 0
    u64 = 2 ** 64
    size, overflowed = 1, False
    for n, st in zip(shape, strides):
        step = (st % u64) * ((n - 1) % u64)
        overflowed |= step >= u64
        size += step % u64
        overflowed |= size >= u64
        size %= u64
    nbytes = size * itemsize
    if overflowed or nbytes >= u64 or nbytes > 2 ** 63 - 1:
        raise RuntimeError(f"Storage size calculation overflowed with sizes={sizes_str(shape)} "
                           f"and strides={sizes_str(strides)}")
    return size


@signature("empty_strided(SymIntArrayRef size, SymIntArrayRef stride, *, ScalarType? dtype=None, "
           "Layout? layout=None, Device? device=None, bool? pin_memory=False, "
           "bool? requires_grad=False)")
def empty_strided(size: Any, stride: Any, *, dtype: Any = None, layout: Any = None,
                  device: Any = None, requires_grad: bool = False,
                  pin_memory: bool = False) -> Tensor:
    """A tensor of ``size`` laid out with ``stride`` (in elements); npgrad fills it with zeros.

    >>> import npgrad
    >>> npgrad.empty_strided((2, 3), (1, 2)).stride()
    (1, 2)
    """
    check_device(device)
    shape, strides = tuple(int(s) for s in size), tuple(int(s) for s in stride)
    if len(shape) != len(strides):
        raise RuntimeError(f"dimensionality of sizes ({len(shape)}) must match dimensionality "
                           f"of strides ({len(strides)})")
    check_nonnegative(shape)
    np_dt = _np_dtype(dtype) or _dtype.get_default_dtype().np_dtype
    elements = _strided_storage_size(shape, strides, np_dt.itemsize)
    if elements == 0:
        return _leaf(np.zeros(shape, dtype=np_dt), bool(requires_grad))
    storage = allocate(np.zeros, (elements,), np_dt)
    view = np.lib.stride_tricks.as_strided(
        storage, shape, tuple(s * storage.itemsize for s in strides))
    return _leaf(view, bool(requires_grad))


# -- in-place samplers (Tensor.exponential_ ...) -------------------------------------------

def _fill(self: Tensor, flat: np.ndarray) -> np.ndarray:
    """Flat samples laid onto ``self`` in the order torch's iterator fills it (double samples
    cast to ``self``'s dtype as torch casts them)."""
    if flat.dtype == np.float64 and self._data.dtype != np.float64:
        flat = _sampling.to_dtype(flat, self._data.dtype)
    return _sampling.from_fill_order(flat, self._data)


def _check_continuous(self: Tensor, distribution: str, use_cpp_name: bool = False) -> None:
    dt = _dtype.from_np(self._data.dtype)
    if not dt.is_floating_point:
        name = dt.cpp_name if use_cpp_name else dt.scalar_name
        raise RuntimeError(f"{distribution} distribution is a continuous probability "
                           f"distribution. dtype must be a floating point but you specified {name}")


def exponential_(self: Tensor, lambd: float = 1.0, *,
                 generator: Generator | None = None) -> Tensor:
    """Fill ``self`` with exponential samples of rate ``lambd``.

    >>> import npgrad
    >>> npgrad.zeros(2).exponential_(float("inf"))
    tensor([0., 0.])
    """
    if not lambd > 0:
        raise RuntimeError("exponential_ expects lambda > 0.0, but found "
                           f"lambda={_cpp_float(lambd)}")
    _check_continuous(self, "Exponential")
    values = _fill(self, _sampling.exponential(get_generator(generator), self._data.size, lambd))
    return sample_inplace(self, values, EXPONENTIAL_)


def geometric_(self: Tensor, p: float, *, generator: Generator | None = None) -> Tensor:
    """Fill ``self`` with the number of Bernoulli(``p``) trials up to the first success (>= 1).

    >>> import npgrad
    >>> bool((npgrad.zeros(100).geometric_(0.5) >= 1).all())
    True
    """
    if not 0 < p < 1:
        raise RuntimeError(f"geometric_ expects p to be in (0, 1), but got p={_cpp_float(p)}")
    values = _fill(self, _sampling.geometric(get_generator(generator), self._data.size, p))
    return sample_inplace(self, values, GEOMETRIC_)


def log_normal_(self: Tensor, mean: float = 1.0, std: float = 2.0, *,
                generator: Generator | None = None) -> Tensor:
    """Fill ``self`` with ``exp`` of normal samples of ``mean`` and ``std``.

    >>> import npgrad
    >>> bool((npgrad.zeros(10).log_normal_() > 0).all())
    True
    """
    if not std > 0:
        raise RuntimeError(f"log_normal_ expects std > 0.0, but found std={_cpp_float(std)}")
    if not _is_float(self._data.dtype):
        _not_implemented_for("log_normal_cpu", self._data)
    values = _fill(self, _sampling.log_normal(get_generator(generator), self._data.size,
                                              float(mean), float(std)))
    return sample_inplace(self, values, LOG_NORMAL_)


def cauchy_(self: Tensor, median: float = 0.0, sigma: float = 1.0, *,
            generator: Generator | None = None) -> Tensor:
    """Fill ``self`` with Cauchy samples centred on ``median`` with scale ``sigma``.

    >>> import npgrad
    >>> npgrad.zeros(3).cauchy_().shape
    torch.Size([3])
    """
    if not sigma > 0:
        raise RuntimeError(f"cauchy_ expects sigma > 0.0, but found sigma={_cpp_float(sigma)}")
    _check_continuous(self, "Cauchy", use_cpp_name=True)
    values = _fill(self, _sampling.cauchy(get_generator(generator), self._data.size,
                                          float(median), float(sigma)))
    return sample_inplace(self, values, CAUCHY_)


# The largest integer random_() draws by default: every integer up to it is exact in the dtype.
_RANDOM_DEFAULT_MAX = {"float16": 2 ** 11, "bfloat16": 2 ** 8, "float32": 2 ** 24,
                       "float64": 2 ** 53, "bool": 1}


def random_(self: Tensor, *args: int, to: int | None = None,
            generator: Generator | None = None) -> Tensor:
    """Fill ``self`` with integers: ``random_(from, to)``, ``random_(to)`` from 0, or ``random_()``
    over every integer the dtype holds exactly.

    >>> import npgrad
    >>> npgrad.zeros(3, dtype=npgrad.int64).random_(1, 2)
    tensor([1, 1, 1])
    """
    data = self._data
    if len(args) == 2 and args[1] is None:  # random_(from, None): up to the dtype's top
        top = _RANDOM_DEFAULT_MAX.get(data.dtype.name)
        if top is None:
            top = int(np.iinfo(data.dtype).max)
        (low, high), entry = (args[0], top + 1), RANDOM_FROM_
        if int(low) == -2 ** 63 and data.dtype.name in ("int64", "float32", "float64"):
            values = _sampling.random_int64_full_range(get_generator(generator), data.size,
                                                       data.dtype)
            return sample_inplace(self, _fill(self, values), entry)
    elif len(args) == 2:
        (low, high), entry = args, RANDOM_FROM_
    elif len(args) == 1:
        (low, high), entry = (0, args[0]), RANDOM_TO_
    elif to is not None:
        (low, high), entry = (0, to), RANDOM_TO_
    else:
        dt = data.dtype
        top = _RANDOM_DEFAULT_MAX.get(dt.name)
        if top is None:
            top = int(np.iinfo(dt).max)
        low, high, entry = 0, top + 1, RANDOM_
    low, high = int(low), int(high)
    _check_random_range(low, high)
    if data.dtype.kind == "u" and low < 0:
        raise RuntimeError(f"from is out of bounds for {_dtype.from_np(data.dtype).cpp_name}")
    gen = get_generator(generator)
    if entry is RANDOM_:  # no bounds: torch's own transform per dtype
        values = _sampling.random_full(gen, data.size, data.dtype)
    else:
        values = _sampling.random_from_to(gen, data.size, data.dtype, low, high)
    return sample_inplace(self, _fill(self, values), entry)
