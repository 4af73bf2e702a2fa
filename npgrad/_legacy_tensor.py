"""torch's legacy typed tensor classes (``LongTensor``, ``FloatTensor``, ...) and ``Tensor.type``.

Note [Legacy tensor types]
In torch, ``torch.LongTensor`` is a class whose instances are never made: calling
it builds a plain ``torch.Tensor`` of dtype int64 (from data, or uninitialised
from a size), and ``isinstance(t, torch.LongTensor)`` asks whether ``t`` is a
CPU tensor of that dtype.  Here each name is an instance of ``_LegacyTensorMeta``
doing the same with ``__call__`` and ``__instancecheck__``; ``torch.FloatTensor``
is not a subclass of ``torch.Tensor`` (as in torch).  ``Tensor.type(t)`` accepts
a dtype, one of these classes or its name string (``'torch.LongTensor'``).
Uninitialised storage is zero-filled here, as ``empty`` is.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from . import _dtype
from ._size import Size
from ._tensor import Tensor
from ._tensor_base import _make


def _new_error(got: str) -> TypeError:
    return TypeError(f"new() received an invalid combination of arguments - got ({got}), but "
                     f"expected one of:\n * (*, torch.device device = None)\n * (torch.Storage "
                     f"storage)\n * (Tensor other)\n * (tuple of ints size, *, torch.device "
                     f"device = None)\n * (object data, *, torch.device device = None)\n")


class _LegacyTensorMeta(type):
    """The metaclass of ``LongTensor`` & co (Note [Legacy tensor types])."""

    dtype: _dtype.dtype

    def __call__(cls, *args: Any, device: Any = None) -> Tensor:  # type: ignore[override]
        from ._device import check_device

        check_device(device)
        np_dt = cls.dtype.np_dtype
        if not args:
            return _make(Tensor, np.zeros((0,), dtype=np_dt), None, False, None)
        if all(isinstance(a, (int, np.integer)) and not isinstance(a, bool) for a in args) \
                or (len(args) == 1 and isinstance(args[0], Size)):
            shape = tuple(args[0]) if isinstance(args[0], Size) else tuple(int(a) for a in args)
            if any(s < 0 for s in shape):
                raise RuntimeError(f"Trying to create tensor with negative dimension {min(shape)}: "
                                   f"[{', '.join(str(s) for s in shape)}]")
            return _make(Tensor, np.zeros(shape, dtype=np_dt), None, False, None)
        if len(args) != 1:
            raise _new_error(", ".join(type(a).__name__ for a in args))
        data = args[0]
        if isinstance(data, Tensor):
            if data.dtype is not cls.dtype:
                raise TypeError(_options_mismatch(cls.dtype, data.dtype))
            return data.detach()
        if isinstance(data, (float, bool, complex)) or not hasattr(data, "__len__") \
                and not isinstance(data, np.ndarray):
            raise TypeError(f"new(): data must be a sequence (got {type(data).__name__})")
        from ._creation import tensor

        return tensor(data, dtype=cls.dtype)

    def __instancecheck__(cls, obj: Any) -> bool:
        return isinstance(obj, Tensor) and obj.dtype is cls.dtype

    def __repr__(cls) -> str:
        return f"<class 'torch.{cls.__name__}'>"

    @property
    def is_cuda(cls) -> bool:
        return False


def _options_mismatch(want: _dtype.dtype, got: _dtype.dtype) -> str:
    def opts(d: _dtype.dtype) -> str:
        return (f"TensorOptions(dtype={d.cpp_name}, device=cpu, layout=Strided, requires_grad="
                f"false (default), pinned_memory=false (default), memory_format=(nullopt))")
    return f"expected {opts(want)} (got {opts(got)})"


def _legacy_class(d: _dtype.dtype) -> _LegacyTensorMeta:
    cls = _LegacyTensorMeta(d.legacy_type, (), {"__module__": "torch", "__slots__": ()})
    cls.dtype = d
    return cls


LEGACY_CLASSES: dict[str, _LegacyTensorMeta] = {
    d.legacy_type: _legacy_class(d) for d in _dtype.ALL_DTYPES + (_dtype.bfloat16,)}
BY_NAME: dict[str, _dtype.dtype] = {
    "torch." + name: cls.dtype for name, cls in LEGACY_CLASSES.items()}

FloatTensor = LEGACY_CLASSES["FloatTensor"]
DoubleTensor = LEGACY_CLASSES["DoubleTensor"]
HalfTensor = LEGACY_CLASSES["HalfTensor"]
LongTensor = LEGACY_CLASSES["LongTensor"]
IntTensor = LEGACY_CLASSES["IntTensor"]
ShortTensor = LEGACY_CLASSES["ShortTensor"]
CharTensor = LEGACY_CLASSES["CharTensor"]
ByteTensor = LEGACY_CLASSES["ByteTensor"]
BoolTensor = LEGACY_CLASSES["BoolTensor"]
BFloat16Tensor = LEGACY_CLASSES["BFloat16Tensor"]


def resolve_type(dtype: Any) -> _dtype.dtype:
    """The dtype named by ``Tensor.type``'s argument: a dtype, a legacy class or its name."""
    if isinstance(dtype, _dtype.dtype):
        return dtype
    if isinstance(dtype, _LegacyTensorMeta):
        return dtype.dtype
    if isinstance(dtype, str):
        found = BY_NAME.get(dtype)
        if found is not None:
            return found
        if dtype.startswith("torch.cuda.") and "torch." + dtype[len("torch.cuda."):] in BY_NAME:
            raise RuntimeError(
                "Cannot initialize CUDA without ATen_cuda library. PyTorch splits its backend "
                "into two shared libraries: a CPU library and a CUDA library; this error has "
                "occurred because you are trying to use some CUDA functionality, but the CUDA "
                "library has not been loaded by the dynamic linker for some reason.  The CUDA "
                "library MUST be loaded, EVEN IF you don't directly use any symbols from the "
                "CUDA library! One common culprit is a lack of -Wl,--no-as-needed in your link "
                "arguments; many dynamic linkers will delete dynamic library dependencies if you "
                "don't depend on any of their symbols.  You can check if this has occurred by "
                "using ldd on your binary to see if there is a dependency on *_cuda.so library.")
        raise ValueError(f"invalid type: '{dtype}'")
    name = getattr(dtype, "__name__", type(dtype).__name__)
    raise ValueError(f"invalid type: '{name}'")


def tensor_type(t: Tensor, dtype: Any = None, non_blocking: bool = False, **kwargs: Any) -> Any:
    """``Tensor.type()``: the legacy type name, or a copy converted to ``dtype``."""
    if dtype is None:
        return "torch." + t.dtype.legacy_type
    return t.to(resolve_type(dtype))
