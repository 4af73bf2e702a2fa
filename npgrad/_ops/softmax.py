"""softmax and log_softmax over one dim, each a registry entry that saves its result.

Both normalise along ``dim`` with the reductions' helpers (npgrad._ops.reduction): the
input dim is wrapped as a scan's is (a 0-dim input has none, and its softmax is 1), half
types compute in float32 (Note [Reductions in float16] there), and the node keeps ``dim``
as it was given, as torch's ``grad_fn._saved_dim`` shows it.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from .signature import signature
if TYPE_CHECKING:
    from .._tensor import Tensor
else:  # Note [Tensor base and Tensor] in npgrad._tensor_base
    from .._tensor_base import TensorBase as Tensor
from .pointwise import exp, zeros_like_grad
from .reduction import _acc, _finish, _np_dtype_arg, _scalar_name, _scan_dim, _single_dim, sum
from .registry import General


def _softmax_input(op: str, input: Tensor, dim: Any, dtype: Any) -> tuple:
    data = input._data
    d = _single_dim(op, data.ndim, dim)
    dt = _np_dtype_arg(dtype)
    if dt is not None:
        data = data.astype(dt, copy=False)
    if data.dtype.kind not in "fV" and data.size:
        last = d is None or d == data.ndim - 1
        kernel = f"{op}_lastdim_kernel_impl" if last else f"{op}_kernel_impl"
        raise NotImplementedError(f"\"{kernel}\" not implemented for "
                                  f"'{_scalar_name(data.dtype)}'")
    return data, d


def _softmax_backward(grad: Tensor, result: Tensor, dim: int) -> Tensor:
    d = _scan_dim(dim, result._data.ndim)
    if d is None:
        return zeros_like_grad(grad)
    return result * (grad - sum(grad * result, d, True))


def _softmax_tangent(t: Tensor, result: Tensor, d: int | None) -> Tensor:
    if d is None:
        return t * 0.0
    return result * (t - sum(t * result, d, True))


SOFTMAX = General(
    "softmax(Tensor input, int64_t dim, ScalarType? dtype=None, *, Tensor out=None)",
    grad_fn="SoftmaxBackward0", forward=None, params=("d", "dim"), keeps=("dim",),
    saves=("result",),
    derivatives={"self": lambda grad, result, dim: _softmax_backward(grad, result, dim)},
    tangent=lambda self_t, result, d: _softmax_tangent(self_t, result, d))
SoftmaxBackward0 = SOFTMAX.node


@signature("softmax(Tensor input, int64_t dim, ScalarType? dtype=None, *, Tensor out=None)")
def softmax(input: Tensor, dim: int, dtype: Any = None) -> Tensor:
    """``exp(x) / sum(exp(x), dim)``, computed stably; SoftmaxBackward0 (saves the result).

    >>> import npgrad
    >>> npgrad.tensor([0., 0.]).softmax(0)
    tensor([0.5000, 0.5000])
    """
    data, d = _softmax_input("softmax", input, dim, dtype)
    acc = _acc(data)
    if d is None:
        out = np.ones_like(acc)
    else:
        with np.errstate(invalid="ignore", under="ignore"):
            e = np.exp(acc - np.amax(acc, axis=d, keepdims=True)) if acc.size else acc.copy()
            out = e / np.sum(e, axis=d, keepdims=True)
    return SOFTMAX.record((input,), _finish(out, data.dtype, data.shape), (d, dim))


def _log_softmax_backward(grad: Tensor, result: Tensor, dim: int) -> Tensor:
    d = _scan_dim(dim, result._data.ndim)
    if d is None:
        return zeros_like_grad(grad)
    return grad - exp(result) * sum(grad, d, True)


def _log_softmax_tangent(t: Tensor, result: Tensor, d: int | None) -> Tensor:
    if d is None:
        return t * 0.0
    return t - sum(exp(result) * t, d, True)


LOG_SOFTMAX = General(
    "log_softmax(Tensor input, int64_t dim, ScalarType? dtype=None, *, Tensor out=None)",
    grad_fn="LogSoftmaxBackward0", forward=None, params=("d", "dim"), keeps=("dim",),
    saves=("result",),
    derivatives={"self": lambda grad, result, dim: _log_softmax_backward(grad, result, dim)},
    tangent=lambda self_t, result, d: _log_softmax_tangent(self_t, result, d))
LogSoftmaxBackward0 = LOG_SOFTMAX.node


def _np_log_softmax(x: np.ndarray, dim: int) -> np.ndarray:
    """(x - max) - log(sum(exp(x - max))): shifting first keeps float32 exact near large x."""
    shift = np.max(x, axis=dim, keepdims=True)
    # a slice whose max is +inf is NaN throughout, as torch's (inf - inf poisons its sum); an
    # all -inf slice is shifted by 0 so that it is NaN too rather than raising
    shift = np.where(np.isneginf(shift), 0, shift)
    shifted = x - shift
    with np.errstate(divide="ignore"):
        return shifted - np.log(np.sum(np.exp(shifted), axis=dim, keepdims=True))


@signature("log_softmax(Tensor input, int64_t dim, ScalarType? dtype=None, *, Tensor out=None)")
def log_softmax(input: Tensor, dim: int, dtype: Any = None) -> Tensor:
    """``x - logsumexp(x, dim)``; LogSoftmaxBackward0 (saves the result)."""
    data, d = _softmax_input("log_softmax", input, dim, dtype)
    acc = _acc(data)
    if d is None:
        out = np.zeros_like(acc)
    else:
        out = _np_log_softmax(acc, d) if acc.size else acc.copy()
    return LOG_SOFTMAX.record((input,), _finish(out, data.dtype, data.shape), (d, dim))
