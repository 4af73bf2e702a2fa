"""dtype objects and PyTorch's type-promotion rules: the only place result dtypes are decided.

Note [Promotion in three tiers]
PyTorch promotes in three tiers: tensors with at least one dimension, 0-dim
tensors, and Python scalars ("wrapped numbers").  Each tier is promoted on its
own; a lower tier can change the result only when it belongs to a higher
category (bool < integer < floating).  So ``int32 + 1 -> int32``,
``float16 + 1.0 -> float16``, ``float32 + float64_0dim -> float32`` but
``int64 + 1.5 -> float32`` (the default dtype).  NumPy's rules differ in all of
these, so every op asks this module for the result dtype and casts its operands.

Note [Complex promotion]
Complex is a fourth category above floating.  Within a tier a complex dtype and a
floating one meet at the complex dtype of the wider real part (``complex64 +
float64 -> complex128``, ``complex64 + float16 -> complex64``); integers and bools
never widen a complex dtype.  Across tiers a lower complex tier lifts a floating
higher tier to *its own* complex dtype, keeping the higher tier's precision
(``float32`` tensor ``+ 1j -> complex64``, ``float32`` tensor ``+`` a 0-dim
``complex128`` ``-> complex64``), while an integral higher tier takes the lower
complex dtype as it is.  A Python complex scalar is the default complex dtype: the
complex dtype of the default float (``complex64`` under ``float32``).
"""
from __future__ import annotations

from functools import lru_cache
import builtins
from typing import Any

import numpy as np

from . import _bfloat16

BOOL, INTEGRAL, FLOATING, COMPLEX = 0, 1, 2, 3

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

    __slots__ = ("name", "np_dtype", "category", "is_floating_point", "is_complex", "is_signed",
                 "itemsize", "legacy_type", "scalar_name", "cpp_name")

    def __init__(self, name: str, np_dtype: Any, category: int, legacy_type: str,
                 scalar_name: str, cpp_name: str) -> None:
        self.name = name
        self.np_dtype = np.dtype(np_dtype)
        self.category = category
        self.is_floating_point = category == FLOATING
        self.is_complex = category == COMPLEX
        self.is_signed = self.np_dtype.kind in "fic"
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
        """The real dtype of a complex one's parts (``complex64 -> float32``); others as they are."""
        return _TO_REAL.get(self.name, self)

    def to_complex(self) -> dtype:
        """The complex dtype whose parts are this float dtype (``float32 -> complex64``)."""
        if self.category == COMPLEX:
            return self
        try:
            return _TO_COMPLEX[self.name]
        except KeyError:
            raise RuntimeError(f"Unknown Complex ScalarType for {self.scalar_name}") from None


float32 = dtype("float32", np.float32, FLOATING, "FloatTensor", "Float", "float")
float64 = dtype("float64", np.float64, FLOATING, "DoubleTensor", "Double", "double")
float16 = dtype("float16", np.float16, FLOATING, "HalfTensor", "Half", "c10::Half")
int64 = dtype("int64", np.int64, INTEGRAL, "LongTensor", "Long", "long int")
int32 = dtype("int32", np.int32, INTEGRAL, "IntTensor", "Int", "int")
int16 = dtype("int16", np.int16, INTEGRAL, "ShortTensor", "Short", "short int")
int8 = dtype("int8", np.int8, INTEGRAL, "CharTensor", "Char", "signed char")
uint8 = dtype("uint8", np.uint8, INTEGRAL, "ByteTensor", "Byte", "unsigned char")
bool_ = dtype("bool", np.bool_, BOOL, "BoolTensor", "Bool", "bool")
complex64 = dtype("complex64", np.complex64, COMPLEX, "ComplexFloatTensor", "ComplexFloat",
                  "c10::complex<float>")
complex128 = dtype("complex128", np.complex128, COMPLEX, "ComplexDoubleTensor", "ComplexDouble",
                   "c10::complex<double>")

ALL_DTYPES = (float32, float64, float16, int64, int32, int16, int8, uint8, bool_, complex64,
              complex128)
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


# Note [complex32 is named, not stored]
# NumPy has no complex dtype of two float16 halves, and torch's own CPU support of
# ``complex32`` is experimental (it warns on every allocation and most ops refuse it),
# so npgrad knows the dtype (its name, promotion, ``to_real``) but refuses to store it:
# asking for its NumPy dtype raises, as any tensor of it would need one.
class _Complex32(dtype):
    """``complex32`` / ``chalf``: named, not held (Note [complex32 is named, not stored])."""

    __slots__ = ()

    def __init__(self) -> None:
        self.name = "complex32"
        self.category = COMPLEX
        self.is_floating_point = False
        self.is_complex = True
        self.is_signed = True
        self.itemsize = 4
        self.legacy_type = "ComplexHalfTensor"
        self.scalar_name = "ComplexHalf"
        self.cpp_name = "c10::complex<c10::Half>"

    @property  # type: ignore[override]
    def np_dtype(self) -> np.dtype:
        raise TypeError("npgrad does not support complex32 (torch.chalf) tensors: NumPy has "
                        "no complex type of two float16 parts")


complex32 = _Complex32()
_TO_REAL = {"complex64": float32, "complex128": float64, "complex32": float16}
_TO_COMPLEX = {"float32": complex64, "float64": complex128, "float16": complex32,
               "bfloat16": complex64}
_COMPLEX_NP = {np.dtype(np.float32): np.dtype(np.complex64),
               np.dtype(np.float64): np.dtype(np.complex128)}

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


def get_default_complex_dtype() -> dtype:
    """The dtype of tensors made from Python complex numbers (Note [Complex promotion])."""
    return complex128 if _default_float is float64 else complex64


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
    if kind in "fV":
        return FLOATING
    return COMPLEX if kind == "c" else BOOL if kind == "b" else INTEGRAL


def scalar_np_dtype(value: Any) -> np.dtype:
    """The dtype PyTorch gives a Python scalar on its own (``tensor(1.5)``)."""
    if isinstance(value, bool):
        return bool_.np_dtype
    if isinstance(value, (builtins.int, np.integer)):
        return int64.np_dtype
    if isinstance(value, (builtins.complex, np.complexfloating)):
        return get_default_complex_dtype().np_dtype
    return _default_float.np_dtype


def _complex_of(d: np.dtype) -> np.dtype:
    """The complex NumPy dtype whose parts are of the floating dtype ``d`` (at least float32's)."""
    return _COMPLEX_NP.get(d, _COMPLEX_NP[np.dtype(np.float32)])


def _promote_pair(a: np.dtype | None, b: np.dtype | None) -> np.dtype | None:
    """Promote two tensor dtypes of the same tier (torch's promoteTypes)."""
    if a is None:
        return b
    if b is None or a == b:
        return a
    ca, cb = category_of_np(a), category_of_np(b)
    if ca == COMPLEX or cb == COMPLEX:  # Note [Complex promotion]
        if ca == COMPLEX and cb == COMPLEX:
            return a if a.itemsize >= b.itemsize else b
        c, other = (a, b) if ca == COMPLEX else (b, a)
        if category_of_np(other) != FLOATING:
            return c
        return _complex_of(_promote_pair(np.dtype(c.char.lower()), other))
    if ca == FLOATING and cb != FLOATING:
        return a
    if cb == FLOATING and ca != FLOATING:
        return b
    if a.kind == "V" or b.kind == "V":
        # bfloat16 with float16 or float32 -> float32, with float64 -> float64 (as torch)
        other = b if a.kind == "V" else a
        return other if other.itemsize > 4 else np.dtype(np.float32)
    return np.promote_types(a, b)


def promote_types(a: dtype, b: dtype) -> dtype:
    """torch's ``promote_types`` on dtype objects (``complex32``, unstorable, included)."""
    if a is complex32 or b is complex32:
        other = b if a is complex32 else a
        if other.category == COMPLEX:
            return other
        if other.category == FLOATING and other is not float16:
            return other.to_complex()
        return complex32
    return from_np(_promote_pair(a.np_dtype, b.np_dtype))


def _combine(higher: np.dtype | None, lower: np.dtype | None) -> np.dtype | None:
    """Let a lower tier change the result only if it is of a higher category."""
    if higher is None:
        return lower
    if lower is None:
        return higher
    ch, cl = category_of_np(higher), category_of_np(lower)
    if ch == COMPLEX:
        return higher
    if cl == COMPLEX:  # Note [Complex promotion]
        return _complex_of(higher) if ch == FLOATING else lower
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
    return d if d.kind in "fVc" else _default_float.np_dtype


# PyTorch's aliases for the same objects.
float = float32  # noqa: A001 - torch.float is float32
double = float64
half = float16
long = int64
int = int32  # noqa: A001
short = int16
cfloat = complex64
cdouble = complex128
chalf = complex32
