"""Cholesky factors and lower-triangular solves, written in npgrad ops (so differentiable).

Note [Triangular algebra in plain ops]
``MultivariateNormal`` needs a Cholesky factor and a triangular solve.  They are
built here from indexing, products and sums, one row or column per step (a
loop of ``n`` steps for an ``n``-dim event): slow for large ``n`` but every step
is an ordinary npgrad op, so gradients (and higher-order ones) come for free.
"""
from __future__ import annotations

from .._tensor import Tensor

__all__ = ["cholesky", "solve_lower"]


def cholesky(a: Tensor) -> Tensor:
    """Lower ``L`` with ``L @ L.mT == a`` for symmetric positive-definite ``a`` (batched).

    >>> import npgrad as torch
    >>> from npgrad.distributions._triangular import cholesky
    >>> cholesky(torch.tensor([[4.0, 2.0], [2.0, 5.0]]))
    tensor([[2., 0.],
            [1., 2.]])
    """
    from .. import arange, stack
    # torch reads the lower triangle but returns a symmetric gradient: reading the
    # symmetrised input does both (and changes no value of a symmetric input)
    a = (a + a.mT) / 2
    n = a.shape[-1]
    rows = arange(n)
    cols: list[Tensor] = []
    for j in range(n):
        s = a[..., :, j]
        if cols:
            done = stack(cols, -1)  # (..., n, j): the columns found so far
            s = s - (done * done[..., j:j + 1, :]).sum(-1)
        d = s[..., j:j + 1].sqrt()
        # rows above the diagonal are zero; multiplying (not indexing) keeps one graph
        cols.append(s / d * (rows >= j).to(a.dtype))
    return stack(cols, -1)


def solve_lower(lower: Tensor, b: Tensor) -> Tensor:
    """``x`` with ``lower @ x == b`` by forward substitution; ``b`` is ``(..., n, k)``.

    >>> import npgrad as torch
    >>> from npgrad.distributions._triangular import solve_lower
    >>> solve_lower(torch.tensor([[2.0, 0.0], [1.0, 4.0]]), torch.tensor([[2.0], [9.0]]))
    tensor([[1.],
            [2.]])
    """
    from .. import stack
    n = lower.shape[-1]
    xs: list[Tensor] = []
    for i in range(n):
        r = b[..., i, :]
        if xs:
            done = stack(xs, -2)  # (..., i, k)
            r = r - (lower[..., i, :i].unsqueeze(-1) * done).sum(-2)
        xs.append(r / lower[..., i, i:i + 1])
    return stack(xs, -2)
