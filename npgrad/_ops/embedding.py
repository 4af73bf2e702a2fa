"""Embedding lookup and its gradient (a scatter-add into the weight rows)."""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from .. import _dtype
if TYPE_CHECKING:
    from .._tensor import Tensor
else:  # Note [Tensor base and Tensor] in npgrad._tensor_base
    from .._tensor_base import TensorBase as Tensor
from .._tensor_base import bump_version
from ._core import record
from .conv import _LinearWindowNode


# -- embedding ----------------------------------------------------------------------------

class EmbeddingBackward0(_LinearWindowNode):
    __slots__ = ()
    holds_saved = True  # the indices


class EmbeddingDenseBackwardBackward0(_LinearWindowNode):
    __slots__ = ()
    holds_saved = True  # the indices


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
    dim = weight._data.shape[1:]
    flat = idx.reshape(-1)
    keep = (flat != padding_idx).astype(weight._data.dtype)
    freq = None
    if scale_grad_by_freq:
        counts = np.bincount(flat, minlength=num)
        freq = counts[flat].astype(weight._data.dtype)

    def take(w: np.ndarray) -> np.ndarray:
        return w[flat].reshape(idx.shape + dim)

    def scatter(g: np.ndarray) -> np.ndarray:
        rows = g.reshape((-1,) + dim) * keep.reshape((-1,) + (1,) * len(dim))
        if freq is not None:
            rows = rows / freq.reshape((-1,) + (1,) * len(dim))
        out = np.zeros((num,) + dim, dtype=g.dtype)
        np.add.at(out, flat, rows)
        return out

    def take_masked(w: np.ndarray) -> np.ndarray:  # adjoint of scatter
        rows = w[flat] * keep.reshape((-1,) + (1,) * len(dim))
        if freq is not None:
            rows = rows / freq.reshape((-1,) + (1,) * len(dim))
        return rows.reshape(idx.shape + dim)

    res, node = record(EmbeddingBackward0, (weight,), np.ascontiguousarray(take(weight._data)))
    if node is not None:
        node.fwd, node.adj = take_masked, scatter
        node.fwd_cls, node.adj_cls = EmbeddingBackward0, EmbeddingDenseBackwardBackward0
    return res
