"""bfloat16 storage: the NumPy dtype behind ``npgrad.bfloat16`` (ml_dtypes') and torch's rounding.

Note [bfloat16 storage]
NumPy has no bfloat16.  Two ways were weighed:
  * uint16 arrays holding the bit patterns, decoded by every op: the Tensor's
    dtype would no longer follow from its array, and every one of npgrad's ops
    (and NumPy functions such as ``np.sort``, ``np.where``, indexing with
    assignment) would need a bf16 branch to decode and re-encode;
  * ``ml_dtypes.bfloat16`` (the optional extra ``npgrad[bf16]``), a real NumPy
    dtype: arrays of it index, reshape, copy, concatenate, compare and sort as
    any other, and its ufunc loops compute each element in float32 and round the
    result to bfloat16 (round to nearest, ties to even), which is what torch's
    CPU kernels do per op for pointwise arithmetic.
The second is taken: shape, view, indexing and pointwise ops then need no bf16
code at all.  What remains is done here and called where an op must differ:
ops that reduce or accumulate (sum, mean, matmul, softmax, layer_norm) run in
float32 and round once, as torch's CPU kernels accumulate in float32
(``in_float32``), and a Python scalar meets a bf16 tensor in float32, as
torch's "opmath" does.  ml_dtypes is imported on first use (it costs about
70 ms), so ``import npgrad`` stays fast; without it a bf16 tensor cannot be
made and the error says which package to install.

Casts agree with torch bit for bit: float32 -> bf16 rounds to nearest even
and keeps NaN a (quiet) NaN; float64 -> bf16 goes through float32 first, as
torch's ``c10::BFloat16(float)`` conversion from a double does.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

MISSING_MSG = ("bfloat16 tensors need the optional package ml_dtypes "
               "(pip install 'npgrad[bf16]' or pip install ml_dtypes)")

_np_bf16: np.dtype | None = None


def numpy_dtype() -> np.dtype:
    """The NumPy dtype of bf16 data, importing ml_dtypes on first use."""
    global _np_bf16
    if _np_bf16 is None:
        try:
            import ml_dtypes
        except ImportError:
            raise RuntimeError(MISSING_MSG) from None
        _np_bf16 = np.dtype(ml_dtypes.bfloat16)
    return _np_bf16


def is_bf16(d: np.dtype) -> bool:
    """Whether NumPy dtype ``d`` is bfloat16 (no import: only ml_dtypes makes such arrays)."""
    return d.kind == "V" and d is _np_bf16


_TORCH_VECTOR_NAN = 0xFFFF  # what torch's float32 -> bf16 cast writes for every NaN


def round_from(data: np.ndarray) -> np.ndarray:
    """Cast ``data`` to bf16 as ``Tensor.to(torch.bfloat16)`` does, bit for bit.

    Rounding is to nearest, ties to even (ml_dtypes' cast); NaNs from float32 or
    float16 data become the all-ones pattern torch's vectorised cast writes, NaNs
    from float64 the quiet NaN 0x7FC0 (torch's scalar conversion).
    """
    bf = numpy_dtype()
    kind = data.dtype.kind
    with np.errstate(over="ignore", invalid="ignore"):
        if kind != "f":
            return data.astype(bf)
        # torch converts a double to bf16 through float (two roundings); ml_dtypes' direct
        # float64 cast rounds once on NumPy < 2.4, so go through float32 explicitly.
        out = (data.astype(np.float32) if data.dtype == np.float64 else data).astype(bf)
        nan = np.isnan(data)
        if nan.any():
            out.view(np.uint16)[nan] = 0x7FC0 if data.dtype == np.float64 else _TORCH_VECTOR_NAN
    return out


def in_float32(fn: Callable[..., Any], *arrays: Any) -> Any:
    """Run ``fn`` on the float32 upcast of any bf16 arrays; round float32 results back once."""
    ups = [a.astype(np.float32) if isinstance(a, np.ndarray) and is_bf16(a.dtype) else a
           for a in arrays]
    out = fn(*ups)
    if isinstance(out, tuple):
        return tuple(_down(o) for o in out)
    return _down(out)


def _down(out: Any) -> Any:
    if isinstance(out, np.ndarray) and out.dtype == np.float32:
        return out.astype(numpy_dtype())
    return out


def any_bf16(*arrays: Any) -> bool:
    return _np_bf16 is not None and any(
        isinstance(a, np.ndarray) and a.dtype is _np_bf16 for a in arrays)
