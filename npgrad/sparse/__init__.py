"""``torch.sparse``: products and sums of sparse COO tensors (Note [Sparse COO tensors])."""
from __future__ import annotations

from typing import Any

from .._ops import sparse as _ops
from .._tensor import Tensor

__all__ = ["check_sparse_tensor_invariants", "mm", "sum"]


def mm(mat1: Tensor, mat2: Tensor) -> Tensor:
    """Sparse x dense matrix product; the sparse matrix's gradient is sparse (its pattern).

    >>> import npgrad
    >>> s = npgrad.tensor([[0., 2.], [1., 0.]]).to_sparse()
    >>> npgrad.sparse.mm(s, npgrad.ones(2, 1))
    tensor([[2.],
            [1.]])
    """
    if type(mat1) is not _ops.SparseTensor:
        raise _ops.dense_unsupported("_sparse_addmm")
    return _ops.sparse_mm(mat1, mat2)


def sum(input: Tensor, dim: Any = None, dtype: Any = None) -> Tensor:  # noqa: A001
    """Sum of a sparse tensor: all of it (dense 0-dim) or over ``dim``.

    >>> import npgrad
    >>> s = npgrad.tensor([[0., 2.], [1., 0.]]).to_sparse()
    >>> npgrad.sparse.sum(s)
    tensor(3.)
    """
    return _ops.sparse_sum(input, dim, dtype=dtype)


class check_sparse_tensor_invariants:
    """Check sparse tensors' indices when they are built (also as a decorator).

    ``enable()`` / ``disable()`` set the default; ``is_enabled()`` reads it.
    """

    @staticmethod
    def is_enabled() -> bool:
        return bool(_ops.invariant_checks[0])

    @staticmethod
    def enable() -> None:
        _ops.invariant_checks[0] = True

    @staticmethod
    def disable() -> None:
        _ops.invariant_checks[0] = False

    def __init__(self, enable: bool = True) -> None:
        self.state = enable
        self.saved: Any = None

    def __enter__(self) -> None:
        self.saved = _ops.invariant_checks[0]
        _ops.invariant_checks[0] = self.state

    def __exit__(self, *exc: Any) -> None:
        _ops.invariant_checks[0] = self.saved

    def __call__(self, func: Any) -> Any:
        import functools

        @functools.wraps(func)
        def run(*args: Any, **kwargs: Any) -> Any:
            with check_sparse_tensor_invariants(self.state):
                return func(*args, **kwargs)
        return run
