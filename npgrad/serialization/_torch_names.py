"""The names torch's pickles use for dtypes, storage types and rebuild functions, both ways.

Note [Torch's names in npgrad's pickles]
A file that real ``torch.load`` reads must name torch's globals
(``torch._utils._rebuild_tensor_v2``, ``torch.FloatStorage``, ``torch.float32``,
``torch.Size``), so npgrad's pickler writes a ``TorchGlobal`` -- a name, never
an import of torch -- wherever torch would write one; npgrad's unpicklers map
the same names back to npgrad's objects.  Storage type names come from each
dtype's legacy tensor name (``FloatTensor`` -> ``FloatStorage``), so a dtype
added to ``npgrad._dtype`` (bfloat16's ``BFloat16Tensor``) is known here with
no edit.  Dtypes without a legacy storage class (torch's uint16/32/64) travel
as ``torch.storage.UntypedStorage`` plus the dtype, as ``_rebuild_tensor_v3``
does.
"""
from __future__ import annotations

from typing import Any

from .. import _dtype

__all__ = [
    "LEGACY_STORAGE_NAMES",
    "TorchGlobal",
    "dtype_by_name",
    "dtype_by_storage_name",
    "dtype_global",
    "storage_global",
]

# The storage classes torch has (torch._storage_classes): these names may appear in files.
LEGACY_STORAGE_NAMES = ("DoubleStorage", "FloatStorage", "HalfStorage", "LongStorage",
                        "IntStorage", "ShortStorage", "CharStorage", "ByteStorage",
                        "BoolStorage", "BFloat16Storage", "ComplexDoubleStorage",
                        "ComplexFloatStorage", "QUInt8Storage", "QInt8Storage",
                        "QInt32Storage", "QUInt4x2Storage", "QUInt2x4Storage")


class TorchGlobal:
    """A global of torch's, written into a pickle by name (``module.name``)."""

    __slots__ = ("module", "name")

    def __init__(self, module: str, name: str) -> None:
        self.module = module
        self.name = name

    @property
    def path(self) -> str:
        return f"{self.module}.{self.name}"

    def __repr__(self) -> str:
        return f"<torch global {self.path}>"

    def __call__(self, *args: Any) -> Any:  # pickle's save_reduce wants a callable
        raise TypeError(f"{self.path} is a name written into a pickle, not a function")


_GLOBALS: dict[str, TorchGlobal] = {}


def torch_global(module: str, name: str) -> TorchGlobal:
    """One TorchGlobal per name, so the pickler's memo writes each name once."""
    key = f"{module}.{name}"
    g = _GLOBALS.get(key)
    if g is None:
        g = _GLOBALS[key] = TorchGlobal(module, name)
    return g


REBUILD_TENSOR_V2 = torch_global("torch._utils", "_rebuild_tensor_v2")
REBUILD_TENSOR_V3 = torch_global("torch._utils", "_rebuild_tensor_v3")
REBUILD_PARAMETER = torch_global("torch._utils", "_rebuild_parameter")
SIZE = torch_global("torch", "Size")
DEVICE = torch_global("torch", "device")
UNTYPED_STORAGE = torch_global("torch.storage", "UntypedStorage")


def known_dtypes() -> tuple:
    """Every npgrad dtype, those kept out of ``ALL_DTYPES`` (bfloat16) included."""
    extra = tuple(d for d in (getattr(_dtype, "bfloat16", None),)
                  if isinstance(d, _dtype.dtype) and d not in _dtype.ALL_DTYPES)
    return _dtype.ALL_DTYPES + extra


def storage_name(d: _dtype.dtype) -> str | None:
    """``FloatStorage`` for float32; None for a dtype torch has no legacy storage class for."""
    name = d.legacy_type.replace("Tensor", "Storage")
    return name if name in LEGACY_STORAGE_NAMES else None


def storage_global(d: _dtype.dtype) -> TorchGlobal:
    name = storage_name(d)
    return UNTYPED_STORAGE if name is None else torch_global("torch", name)


def dtype_global(d: _dtype.dtype) -> TorchGlobal:
    return torch_global("torch", d.name)


def dtype_by_storage_name(name: str) -> _dtype.dtype | None:
    """The npgrad dtype behind torch's ``<name>`` storage class, or None if npgrad lacks it."""
    for d in known_dtypes():
        if storage_name(d) == name:
            return d
    return None


def dtype_by_name(name: str) -> _dtype.dtype | None:
    """The npgrad dtype called ``name`` by torch (``float32``, ``bool``), or None."""
    for d in known_dtypes():
        if d.name == name:
            return d
    return None


def all_dtype_names() -> list[str]:
    """Every dtype name torch may pickle (``torch.<name>``), npgrad's or not."""
    names = ["float32", "float64", "float16", "bfloat16", "complex32", "complex64",
             "complex128", "int64", "int32", "int16", "int8", "uint8", "bool",
             "uint16", "uint32", "uint64", "qint8", "quint8", "qint32", "quint4x2",
             "quint2x4", "float8_e5m2", "float8_e4m3fn", "float8_e5m2fnuz",
             "float8_e4m3fnuz", "float8_e8m0fnu", "float4_e2m1fn_x2", "bits8", "bits16",
             "bits1x8", "bits2x4", "bits4x2"]
    names += [f"uint{i}" for i in range(1, 8)] + [f"int{i}" for i in range(1, 8)]
    names += [d.name for d in known_dtypes() if d.name not in names]
    return names


def describe(obj: Any) -> str:
    return obj.path if isinstance(obj, TorchGlobal) else repr(obj)
