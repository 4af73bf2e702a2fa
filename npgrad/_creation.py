"""Factory functions: tensors from Python data, NumPy arrays, shapes and random draws.

Factories honour ``requires_grad=True`` in every grad mode (the result is a
leaf); under inference mode they make inference tensors.
"""
from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from . import _dtype
from ._mode import _tls, INFERENCE
from ._ops._shape_util import parse_shape
from ._tensor import INFERENCE_COUNTER, Tensor, _make

FACTORY_GRAD_MSG = "Only Tensors of floating point and complex dtype can require gradients"


def _leaf(data: np.ndarray, requires_grad: bool = False) -> Tensor:
    if requires_grad and data.dtype.kind != "f":
        raise RuntimeError(FACTORY_GRAD_MSG)
    vc = INFERENCE_COUNTER if _tls.mode & INFERENCE else None
    return _make(Tensor, data, None, bool(requires_grad), vc)


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
    """torch's dtype for nested Python data: bool < int64 < default float."""
    kind = 0  # 0 bool, 1 int, 2 float
    stack = [data]
    seen_any = False
    while stack:
        x = stack.pop()
        if isinstance(x, (list, tuple)):
            stack.extend(x)
        elif isinstance(x, Tensor):
            seen_any = True
            k = x._data.dtype.kind
            kind = max(kind, 2 if k == "f" else 1 if k in "iu" else 0)
        else:
            seen_any = True
            if isinstance(x, (bool, np.bool_)):
                continue
            if isinstance(x, (int, np.integer)):
                kind = max(kind, 1)
            else:
                kind = 2
    if not seen_any:
        return _dtype.get_default_dtype().np_dtype
    return (_dtype.bool_, _dtype.int64, _dtype.get_default_dtype())[kind].np_dtype


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
        _check_ragged(data)
        if isinstance(data, (list, tuple)) and any(isinstance(x, Tensor) for x in data):
            data = [x.tolist() if isinstance(x, Tensor) else x for x in data]
        arr = np.array(data, dtype=np_dt if np_dt is not None else _infer_np_dtype(data))
    return _leaf(arr, requires_grad)


def as_tensor(data: Any, dtype: Any = None, device: Any = None) -> Tensor:
    """Share memory with ``data`` where possible (tensors and NumPy arrays of the same dtype)."""
    np_dt = _np_dtype(dtype)
    if isinstance(data, Tensor):
        if np_dt is None or data._data.dtype == np_dt:
            return data
        from ._ops.shape import to

        return to(data, dtype)
    if isinstance(data, np.ndarray) and (np_dt is None or data.dtype == np_dt):
        return from_numpy(data)
    return tensor(data, dtype=dtype)


def from_numpy(ndarray: np.ndarray) -> Tensor:
    """A tensor sharing memory with ``ndarray`` (writes show through both ways)."""
    if not isinstance(ndarray, np.ndarray):
        raise TypeError(f"expected np.ndarray (got {type(ndarray).__name__})")
    _dtype.from_np(ndarray.dtype)
    return _leaf(ndarray)


def _filled(shape: tuple, value: Any, dtype: Any, requires_grad: bool) -> Tensor:
    np_dt = _np_dtype(dtype)
    if np_dt is None:
        np_dt = _dtype.scalar_np_dtype(value)
    return _leaf(np.full(shape, value, dtype=np_dt), requires_grad)


def zeros(*size: Any, dtype: Any = None, device: Any = None, requires_grad: bool = False,
          out: Any = None) -> Tensor:
    np_dt = _np_dtype(dtype) or _dtype.get_default_dtype().np_dtype
    return _leaf(np.zeros(parse_shape(size), dtype=np_dt), requires_grad)


def ones(*size: Any, dtype: Any = None, device: Any = None, requires_grad: bool = False,
         out: Any = None) -> Tensor:
    np_dt = _np_dtype(dtype) or _dtype.get_default_dtype().np_dtype
    return _leaf(np.ones(parse_shape(size), dtype=np_dt), requires_grad)


def empty(*size: Any, dtype: Any = None, device: Any = None, requires_grad: bool = False,
          out: Any = None) -> Tensor:
    return zeros(*size, dtype=dtype, requires_grad=requires_grad)


def full(size: Any, fill_value: Any, *, dtype: Any = None, device: Any = None,
         requires_grad: bool = False) -> Tensor:
    if isinstance(fill_value, Tensor):
        fill_value = fill_value.item()
    return _filled(parse_shape((size,)), fill_value, dtype, requires_grad)


def _like_dtype(input: Tensor, dtype: Any) -> Any:
    return dtype if dtype is not None else _dtype.from_np(input._data.dtype)


def zeros_like(input: Tensor, *, dtype: Any = None, device: Any = None,
               requires_grad: bool = False, memory_format: Any = None) -> Tensor:
    return zeros(input._data.shape, dtype=_like_dtype(input, dtype), requires_grad=requires_grad)


def ones_like(input: Tensor, *, dtype: Any = None, device: Any = None,
              requires_grad: bool = False, memory_format: Any = None) -> Tensor:
    return ones(input._data.shape, dtype=_like_dtype(input, dtype), requires_grad=requires_grad)


def empty_like(input: Tensor, *, dtype: Any = None, device: Any = None,
               requires_grad: bool = False, memory_format: Any = None) -> Tensor:
    return zeros_like(input, dtype=dtype, requires_grad=requires_grad)


def full_like(input: Tensor, fill_value: Any, *, dtype: Any = None, device: Any = None,
              requires_grad: bool = False, memory_format: Any = None) -> Tensor:
    return full(input._data.shape, fill_value, dtype=_like_dtype(input, dtype),
                requires_grad=requires_grad)


def scalar_tensor_like(value: Any, like: Tensor) -> Tensor:
    """A 0-dim tensor for a Python scalar operand (used by reflected operators)."""
    return _leaf(np.asarray(value, dtype=_dtype.scalar_np_dtype(value)))


def arange(start: Any, end: Any = None, step: Any = 1, *, dtype: Any = None,
           device: Any = None, requires_grad: bool = False) -> Tensor:
    """Values from ``start`` to ``end`` (exclusive): int64 for ints, else the default float."""
    if end is None:
        start, end = 0, start
    np_dt = _np_dtype(dtype)
    if np_dt is None:
        is_int = all(isinstance(v, (int, np.integer)) and not isinstance(v, bool)
                     for v in (start, end, step))
        np_dt = _dtype.int64.np_dtype if is_int else _dtype.get_default_dtype().np_dtype
    if step == 0:
        raise RuntimeError("step must be nonzero")
    n = max(int(np.ceil((float(end) - float(start)) / float(step))), 0)
    data = (start + step * np.arange(n, dtype=np.float64)).astype(np_dt) if np_dt.kind == "f" \
        else np.arange(start, end, step, dtype=np_dt)
    return _leaf(data, requires_grad)


def linspace(start: float, end: float, steps: int, *, dtype: Any = None, device: Any = None,
             requires_grad: bool = False) -> Tensor:
    np_dt = _np_dtype(dtype) or _dtype.get_default_dtype().np_dtype
    return _leaf(np.linspace(start, end, steps).astype(np_dt), requires_grad)


def eye(n: int, m: int | None = None, *, dtype: Any = None, device: Any = None,
        requires_grad: bool = False) -> Tensor:
    np_dt = _np_dtype(dtype) or _dtype.get_default_dtype().np_dtype
    return _leaf(np.eye(n, m, dtype=np_dt), requires_grad)


# -- random numbers ---------------------------------------------------------------------

class Generator:
    """A random-number generator (NumPy's PCG64); values differ from torch's.

    The NumPy generator is made on first use: importing ``numpy.random`` costs
    about a tenth of ``import npgrad``, and many programs never draw a number.
    """

    def __init__(self, device: Any = "cpu") -> None:
        self._numpy_rng = None
        self._seed: int | None = None

    @property
    def _rng(self) -> Any:
        if self._numpy_rng is None:
            self._numpy_rng = np.random.default_rng(self._seed)
        return self._numpy_rng

    def manual_seed(self, seed: int) -> Generator:
        self._seed = int(seed)
        self._numpy_rng = None
        return self

    def initial_seed(self) -> int:
        return self._seed if self._seed is not None else 0

    def get_state(self) -> Any:
        return self._rng.bit_generator.state

    def set_state(self, state: Any) -> None:
        self._rng.bit_generator.state = state


default_generator = Generator().manual_seed(0)


def manual_seed(seed: int) -> Generator:
    """Seed the default generator (npgrad's values need not equal torch's)."""
    return default_generator.manual_seed(seed)


def seed() -> int:
    s = int(np.random.SeedSequence().entropy % (2 ** 63))
    default_generator.manual_seed(s)
    return s


def initial_seed() -> int:
    return default_generator.initial_seed()


def _rng(generator: Generator | None) -> np.random.Generator:
    return (generator or default_generator)._rng


def rand(*size: Any, generator: Generator | None = None, dtype: Any = None, device: Any = None,
         requires_grad: bool = False) -> Tensor:
    np_dt = _np_dtype(dtype) or _dtype.get_default_dtype().np_dtype
    return _leaf(_rng(generator).random(parse_shape(size)).astype(np_dt), requires_grad)


def randn(*size: Any, generator: Generator | None = None, dtype: Any = None, device: Any = None,
          requires_grad: bool = False) -> Tensor:
    np_dt = _np_dtype(dtype) or _dtype.get_default_dtype().np_dtype
    return _leaf(_rng(generator).standard_normal(parse_shape(size)).astype(np_dt),
                 requires_grad)


def randint(low: int, high: Any = None, size: Any = None, *, generator: Generator | None = None,
            dtype: Any = None, device: Any = None, requires_grad: bool = False) -> Tensor:
    if size is None:
        low, high, size = 0, low, high
    np_dt = _np_dtype(dtype) or _dtype.int64.np_dtype
    data = _rng(generator).integers(low, high, size=parse_shape((size,))).astype(np_dt)
    return _leaf(data, requires_grad)


def randperm(n: int, *, generator: Generator | None = None, dtype: Any = None,
             device: Any = None, requires_grad: bool = False) -> Tensor:
    np_dt = _np_dtype(dtype) or _dtype.int64.np_dtype
    return _leaf(_rng(generator).permutation(n).astype(np_dt), requires_grad)


def rand_like(input: Tensor, *, dtype: Any = None, requires_grad: bool = False) -> Tensor:
    return rand(input._data.shape, dtype=_like_dtype(input, dtype), requires_grad=requires_grad)


def randn_like(input: Tensor, *, dtype: Any = None, requires_grad: bool = False) -> Tensor:
    return randn(input._data.shape, dtype=_like_dtype(input, dtype), requires_grad=requires_grad)


def is_tensor(obj: Any) -> bool:
    return isinstance(obj, Tensor)


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
    return zeros(*size, dtype=_self_dtype(self, dtype), requires_grad=requires_grad)


def new_ones(self: Tensor, *size: Any, dtype: Any = None, device: Any = None,
             requires_grad: bool = False, layout: Any = None, pin_memory: bool = False) -> Tensor:
    """Ones of ``size`` with ``self``'s dtype unless ``dtype`` is given."""
    return ones(*size, dtype=_self_dtype(self, dtype), requires_grad=requires_grad)


def new_empty(self: Tensor, *size: Any, dtype: Any = None, device: Any = None,
              requires_grad: bool = False, layout: Any = None, pin_memory: bool = False) -> Tensor:
    """An uninitialised tensor of ``size`` (npgrad fills it with zeros) with ``self``'s dtype."""
    return zeros(*size, dtype=_self_dtype(self, dtype), requires_grad=requires_grad)


def new_full(self: Tensor, size: Any, fill_value: Any, *, dtype: Any = None, device: Any = None,
             requires_grad: bool = False, layout: Any = None, pin_memory: bool = False) -> Tensor:
    """``fill_value`` everywhere, cast to ``self``'s dtype unless ``dtype`` is given.

    >>> import npgrad
    >>> npgrad.arange(3).new_full((2,), 2.5)
    tensor([2, 2])
    """
    np_dt = _np_dtype(_self_dtype(self, dtype))
    if isinstance(fill_value, Tensor):
        fill_value = fill_value.item()
    with np.errstate(all="ignore"):
        data = np.full(parse_shape((size,)), fill_value).astype(np_dt)
    return _leaf(data, requires_grad)


def new_tensor(self: Tensor, data: Any, *, dtype: Any = None, device: Any = None,
               requires_grad: bool = False, layout: Any = None, pin_memory: bool = False) -> Tensor:
    """A new leaf holding a copy of ``data``, with ``self``'s dtype unless ``dtype`` is given."""
    if isinstance(data, Tensor):
        warnings.warn(
            "To copy construct from a tensor, it is recommended to use sourceTensor.detach()."
            "clone() or sourceTensor.detach().clone().requires_grad_(True), rather than "
            "tensor.new_tensor(sourceTensor).", UserWarning, stacklevel=2)
        arr = np.array(data._data, dtype=_np_dtype(_self_dtype(self, dtype)), copy=True)
        return _leaf(arr, requires_grad)
    return tensor(data, dtype=_self_dtype(self, dtype), requires_grad=requires_grad)


def _triangle_indices(npfn: Any, row: int, col: int, offset: int, dtype: Any) -> Tensor:
    if row < 0:
        raise RuntimeError(f"row must be non-negative, got{row}")
    if col < 0:
        raise RuntimeError(f"col must be non-negative, got{col}")
    rows, cols = npfn(row, offset, col)
    np_dt = _np_dtype(dtype) or np.dtype(np.int64)
    return _leaf(np.stack([rows, cols]).astype(np_dt).reshape(2, -1))


def tril_indices(row: int, col: int, offset: int = 0, *, dtype: Any = None, device: Any = None,
                 layout: Any = None) -> Tensor:
    """The (row, col) coordinates of the lower triangle of a ``row`` x ``col`` matrix, as 2 x N.

    >>> import npgrad
    >>> npgrad.tril_indices(2, 2)
    tensor([[0, 1, 1],
            [0, 0, 1]])
    """
    return _triangle_indices(np.tril_indices, row, col, offset, dtype)


def triu_indices(row: int, col: int, offset: int = 0, *, dtype: Any = None, device: Any = None,
                 layout: Any = None) -> Tensor:
    """The (row, col) coordinates of the upper triangle of a ``row`` x ``col`` matrix, as 2 x N."""
    return _triangle_indices(np.triu_indices, row, col, offset, dtype)
