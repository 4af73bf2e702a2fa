"""dtype objects and PyTorch's type-promotion rules: the only place result dtypes are decided.

Note [Promotion in three tiers]
PyTorch promotes in three tiers: tensors with at least one dimension, 0-dim
tensors, and Python scalars ("wrapped numbers").  Each tier is promoted on its
own; a lower tier can change the result only when it belongs to a higher
category (bool < integer < floating).  So ``int32 + 1 -> int32``,
``float16 + 1.0 -> float16``, ``float32 + float64_0dim -> float32`` but
``int64 + 1.5 -> float32`` (the default dtype).  NumPy's rules differ in all of
these, so every op asks this module for the result dtype and casts its operands.
"""
from __future__ import annotations

from functools import lru_cache
import builtins
from typing import Any

import numpy as np

from . import _bfloat16

BOOL, INTEGRAL, FLOATING = 0, 1, 2

# Note [How dtypes print]
# A dtype prints as ``npgrad.float32`` by default, and as torch's ``torch.float32``
# once ``install_as_torch`` (or ``python -m npgrad run``) has made npgrad *be* torch
# for the process, so an unmodified script prints what it prints under torch.  The
# default stays ``npgrad.`` because an npgrad program that imports both libraries
# side by side (the test suite, comparisons with torch) must be able to tell the two
# apart in reprs and error texts; one constant flips it.  Tensor reprs
# (``dtype=npgrad.float64``) and error texts read the same prefix.
_repr_prefix = "npgrad."


def set_repr_prefix(prefix: str) -> None:
    """``'npgrad.'`` or ``'torch.'``: how dtypes print (Note [How dtypes print])."""
    global _repr_prefix
    _repr_prefix = prefix


def repr_prefix() -> str:
    return _repr_prefix


class dtype:
    """A tensor element type, printed like ``npgrad.float32``."""

    __slots__ = ("name", "np_dtype", "category", "is_floating_point", "is_signed",
                 "itemsize", "legacy_type", "scalar_name", "cpp_name")

    is_complex = False

    def __init__(self, name: str, np_dtype: Any, category: int, legacy_type: str,
                 scalar_name: str, cpp_name: str) -> None:
        self.name = name
        self.np_dtype = np.dtype(np_dtype)
        self.category = category
        self.is_floating_point = category == FLOATING
        self.is_signed = self.np_dtype.kind in "fi"
        self.itemsize = self.np_dtype.itemsize
        self.legacy_type = legacy_type
        self.scalar_name = scalar_name
        self.cpp_name = cpp_name

    def __repr__(self) -> str:
        return _repr_prefix + self.name

    def __reduce__(self) -> str:
        # pickle stores the module attribute's name; `bool` is `bool_` here (not the builtin)
        return "bool_" if self.name == "bool" else self.name

    def to_real(self) -> dtype:
        return self

    def to_complex(self) -> dtype:
        raise RuntimeError("complex dtypes are not supported by npgrad")


float32 = dtype("float32", np.float32, FLOATING, "FloatTensor", "Float", "float")
float64 = dtype("float64", np.float64, FLOATING, "DoubleTensor", "Double", "double")
float16 = dtype("float16", np.float16, FLOATING, "HalfTensor", "Half", "c10::Half")
int64 = dtype("int64", np.int64, INTEGRAL, "LongTensor", "Long", "long int")
int32 = dtype("int32", np.int32, INTEGRAL, "IntTensor", "Int", "int")
int16 = dtype("int16", np.int16, INTEGRAL, "ShortTensor", "Short", "short int")
int8 = dtype("int8", np.int8, INTEGRAL, "CharTensor", "Char", "signed char")
uint8 = dtype("uint8", np.uint8, INTEGRAL, "ByteTensor", "Byte", "unsigned char")
bool_ = dtype("bool", np.bool_, BOOL, "BoolTensor", "Bool", "bool")

ALL_DTYPES = (float32, float64, float16, int64, int32, int16, int8, uint8, bool_)
FROM_NUMPY: dict[np.dtype, dtype] = {d.np_dtype: d for d in ALL_DTYPES}


class _BFloat16(dtype):
    """``bfloat16``: its NumPy dtype (ml_dtypes') loads on first use (Note [bfloat16 storage])."""

    __slots__ = ()

    def __init__(self) -> None:
        self.name = "bfloat16"
        self.category = FLOATING
        self.is_floating_point = True
        self.is_signed = True
        self.itemsize = 2
        self.legacy_type = "BFloat16Tensor"
        self.scalar_name = "BFloat16"
        self.cpp_name = "c10::BFloat16"

    @property  # type: ignore[override]
    def np_dtype(self) -> np.dtype:
        np_bf16 = _bfloat16.numpy_dtype()
        FROM_NUMPY[np_bf16] = self
        return np_bf16


# not in ALL_DTYPES: iterating over those must not need the optional ml_dtypes
bfloat16 = _BFloat16()

_default_float = float32


def get_default_dtype() -> dtype:
    """The dtype of tensors made from Python floats.

    >>> import npgrad
    >>> npgrad.get_default_dtype()
    npgrad.float32
    """
    return _default_float


def set_default_dtype(d: dtype) -> None:
    """Set the dtype used for Python floats (float32 or float64, as in torch)."""
    global _default_float
    if not isinstance(d, dtype) or d not in (float32, float64, float16):
        raise TypeError("only floating-point types are supported as the default type")
    _default_float = d
    _result_type.cache_clear()


def to_np(d: dtype | None) -> np.dtype | None:
    return None if d is None else d.np_dtype


def from_np(d: np.dtype) -> dtype:
    try:
        return FROM_NUMPY[d]
    except KeyError:
        raise TypeError(f"npgrad does not support NumPy dtype {d}") from None


def category_of_np(d: np.dtype) -> int:
    kind = d.kind
    # "V": bfloat16, the only non-NumPy dtype a tensor can hold (Note [bfloat16 storage])
    return FLOATING if kind in "fV" else BOOL if kind == "b" else INTEGRAL


def scalar_np_dtype(value: Any) -> np.dtype:
    """The dtype PyTorch gives a Python scalar on its own (``tensor(1.5)``)."""
    if isinstance(value, bool):
        return bool_.np_dtype
    if isinstance(value, (builtins.int, np.integer)):
        return int64.np_dtype
    return _default_float.np_dtype


def _promote_pair(a: np.dtype | None, b: np.dtype | None) -> np.dtype | None:
    """Promote two tensor dtypes of the same tier (torch's promoteTypes)."""
    if a is None:
        return b
    if b is None or a == b:
        return a
    ca, cb = category_of_np(a), category_of_np(b)
    if ca == FLOATING and cb != FLOATING:
        return a
    if cb == FLOATING and ca != FLOATING:
        return b
    if a.kind == "V" or b.kind == "V":
        # bfloat16 with float16 or float32 -> float32, with float64 -> float64 (as torch)
        other = b if a.kind == "V" else a
        return other if other.itemsize > 4 else np.dtype(np.float32)
    return np.promote_types(a, b)


def _combine(higher: np.dtype | None, lower: np.dtype | None) -> np.dtype | None:
    """Let a lower tier change the result only if it is of a higher category."""
    if higher is None:
        return lower
    if lower is None:
        return higher
    ch, cl = category_of_np(higher), category_of_np(lower)
    if ch == FLOATING:
        return higher
    if ch == BOOL or cl == FLOATING:
        return _promote_pair(higher, lower)
    return higher


@lru_cache(maxsize=None)
def _result_type(dim_dtypes: tuple, zero_dtypes: tuple, scalar_dtypes: tuple) -> np.dtype:
    tiers = []
    for group in (dim_dtypes, zero_dtypes, scalar_dtypes):
        r = None
        for d in group:
            r = _promote_pair(r, d)
        tiers.append(r)
    return _combine(tiers[0], _combine(tiers[1], tiers[2]))


def result_type_np(operands: tuple) -> np.dtype:
    """Result dtype of an op over tensors and Python scalars (see Note [Promotion in three tiers]).

    Each operand is either an ``np.ndarray`` (a tensor's data) or a Python scalar.
    """
    dims, zeros, scalars = [], [], []
    for x in operands:
        if isinstance(x, np.ndarray):
            (dims if x.ndim else zeros).append(x.dtype)
        elif isinstance(x, np.generic):
            zeros.append(x.dtype)
        else:
            scalars.append(scalar_np_dtype(x))
    return _result_type(tuple(dims), tuple(zeros), tuple(scalars))


def float_result_np(d: np.dtype) -> np.dtype:
    """Dtype of a floating-only op (exp, sqrt, true division) applied to data of dtype ``d``."""
    return d if d.kind in "fV" else _default_float.np_dtype


# PyTorch's aliases for the same objects.
float = float32  # noqa: A001 - torch.float is float32
double = float64
half = float16
long = int64
int = int32  # noqa: A001
short = int16
