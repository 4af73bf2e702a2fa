"""Embedding lookup and its gradient (a scatter-add into the weight rows)."""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from .. import _dtype
if TYPE_CHECKING:
    from .._tensor import Tensor
else:  # Note [Tensor base and Tensor] in npgrad._tensor_base
    from .._tensor_base import TensorBase as Tensor
from .._tensor_base import bump_version, wrap
from .registry import General

# Note [Embedding as entries]
# ``embedding`` reads rows of ``weight``; its gradient is torch's embedding_dense_backward,
# the rows of the gradient added at the indices into zeros of the weight's shape (none to
# ``padding_idx``; each divided by its index's count with ``scale_grad_by_freq``).  Both are
# ``General`` entries saving the indices as torch does, so a second backward raises its
# error.  The second one's own gradient is torch's embedding_dense_double_backward: the
# gradient's rows read back at the indices, zero at ``padding_idx`` and, exactly as in
# torch, *not* divided by the counts (torch leaves the scaling to the first backward).
# torch keeps ``padding_idx`` as an int64, -1 for none (read unsigned, as any kept value).


def _rows(weight: np.ndarray, indices: Tensor) -> np.ndarray:
    idx = indices._data
    return np.ascontiguousarray(weight[idx.reshape(-1)].reshape(idx.shape + weight.shape[1:]))


def _embedding_forward(weight: np.ndarray, indices: Tensor, padding_idx: int,
                       scale_grad_by_freq: bool, sparse: bool,
                       weight_sym_argsize_0: int) -> np.ndarray:
    return _rows(weight, indices)


def _dense_backward(grad: np.ndarray, indices: Tensor, num_weights: int, padding_idx: int,
                    scale_grad_by_freq: bool) -> np.ndarray:
    """torch's embedding_dense_backward on arrays."""
    flat = indices._data.reshape(-1)
    row = grad.shape[indices._data.ndim:]
    rows = grad.reshape((-1,) + row)
    if padding_idx >= 0 or scale_grad_by_freq:
        scale = (flat != padding_idx).astype(grad.dtype)
        if scale_grad_by_freq:
            scale = scale / np.bincount(flat, minlength=num_weights)[flat].astype(grad.dtype)
        rows = rows * scale.reshape((-1,) + (1,) * len(row))
    out = np.zeros((num_weights,) + row, dtype=grad.dtype)
    np.add.at(out, flat, rows)
    return out


def _double_backward(grad: Tensor, indices: Tensor, padding_idx: int) -> Tensor:
    """torch's embedding_dense_double_backward (Note [Embedding as entries])."""
    out = EMBEDDING((grad,), (indices, padding_idx, False, False, grad._data.shape[0]))
    if padding_idx >= 0:
        keep = (indices._data != padding_idx).astype(grad._data.dtype)
        out = out * wrap(keep.reshape(keep.shape + (1,) * (grad._data.ndim - 1)), 0)
    return out


EMBEDDING: General = General(
    "embedding(Tensor weight, Tensor indices, SymInt padding_idx=-1, "
    "bool scale_grad_by_freq=False, bool sparse=False)", grad_fn="EmbeddingBackward0",
    forward=_embedding_forward, inputs=("weight",),
    params=("indices", "padding_idx", "scale_grad_by_freq", "sparse", "weight_sym_argsize_0"),
    keeps=("padding_idx", "scale_grad_by_freq", "sparse", "weight_sym_argsize_0"),
    saves=("indices",),
    derivatives={"weight": lambda grad, indices, padding_idx, scale_grad_by_freq,
                 weight_sym_argsize_0: EMBEDDING_DENSE_BACKWARD(
                     (grad,), (indices, weight_sym_argsize_0, padding_idx, scale_grad_by_freq))},
    tangent=lambda weight_t, indices: EMBEDDING((weight_t,), (indices, -1, False, False,
                                                              weight_t._data.shape[0])))

EMBEDDING_DENSE_BACKWARD: General = General(
    "embedding_dense_backward(Tensor grad_output, Tensor indices, SymInt num_weights, "
    "SymInt padding_idx, bool scale_grad_by_freq)", grad_fn="EmbeddingDenseBackwardBackward0",
    forward=_dense_backward, inputs=("grad_output",),
    params=("indices", "num_weights", "padding_idx", "scale_grad_by_freq"),
    keeps=("padding_idx",), saves=("indices",),
    derivatives={"grad_output": lambda grad, indices, padding_idx:
                 _double_backward(grad, indices, padding_idx)},
    tangent=lambda grad_output_t, indices, num_weights, padding_idx, scale_grad_by_freq:
    EMBEDDING_DENSE_BACKWARD((grad_output_t,), (indices, num_weights, padding_idx,
                                                scale_grad_by_freq)))
EmbeddingBackward0 = EMBEDDING.node
EmbeddingDenseBackwardBackward0 = EMBEDDING_DENSE_BACKWARD.node


def embedding(input: Tensor, weight: Tensor, padding_idx: int | None = None,
              max_norm: float | None = None, norm_type: float = 2.0,
              scale_grad_by_freq: bool = False, sparse: bool = False) -> Tensor:
    """Rows of ``weight`` picked by the indices in ``input`` (grad_fn ``EmbeddingBackward0``).

    The row ``padding_idx`` gets no gradient.
    """
    if weight._data.ndim != 2:
        raise RuntimeError("'weight' must be 2-D")
    idx = input._data
    num = weight._data.shape[0]
    if padding_idx is not None:
        if padding_idx > 0:
            assert padding_idx < num, "Padding_idx must be within num_embeddings"
        elif padding_idx < 0:
            assert padding_idx >= -num, "Padding_idx must be within num_embeddings"
            padding_idx = num + padding_idx
    else:
        padding_idx = -1
    if idx.dtype not in (np.int64, np.int32):
        # torch prints the legacy type name, or CPU<Name>Type for dtypes that have none
        kind = _dtype.from_np(idx.dtype)
        name = input.type() if idx.dtype.kind in "fiu" else f"CPU{kind.scalar_name}Type"
        raise RuntimeError("Expected tensor for argument #1 'indices' to have one of the "
                           "following scalar types: Long, Int; but got "
                           f"{name} instead (while checking arguments for embedding)")
    if idx.size and num == 0:
        raise RuntimeError("index_select(): self indexing axis dim should be positive")
    if idx.size and (idx.min() < 0 or idx.max() >= num):
        raise IndexError("index out of range in self")
    if max_norm is not None:
        rows = np.unique(idx)
        w = weight._data
        norms = np.linalg.norm(w[rows], ord=norm_type, axis=1) if norm_type != 2 else \
            np.sqrt(np.square(w[rows]).sum(axis=1))
        scale = np.where(norms > max_norm, max_norm / (norms + 1e-7), 1.0)
        w[rows] = (w[rows] * scale[:, None]).astype(w.dtype)
        bump_version(weight)
    params = (input, padding_idx, scale_grad_by_freq, sparse, num)
    return EMBEDDING((weight,), params)  # type: ignore[no-any-return]
