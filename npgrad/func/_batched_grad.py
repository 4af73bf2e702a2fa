"""``autograd.grad(..., is_grads_batched=True)``: one backward per row of the grad_outputs.

torch vmaps its vjp over the first dim of every grad_output; npgrad runs the same backward
once per row (Note [vmap by slices] in ``npgrad.func._vmap``) and stacks the gradients.
"""
from __future__ import annotations

from typing import Any, Callable

from .._size import Size
from .._tensor import Tensor


def _batch_check(outputs: tuple, grads: list, given: tuple) -> int:
    sizes = []
    for i, (o, g) in enumerate(zip(outputs, grads)):
        if g.dim() == 0 and given[i] is not None:
            raise IndexError("invalid index of a 0-dim tensor. Use `tensor.item()` in Python or "
                             "`tensor.item<T>()` in C++ to convert a 0-dim tensor to a number")
        if g.dim() == 0:
            raise ValueError("vmap(vjp, in_dims=0, ...)(<inputs>): Got in_dim=0 for some input, "
                             "but that input is a Tensor of dimensionality 0 so expected in_dim "
                             "to satisfy 0 <= in_dim < 0.")
        if tuple(g.shape[1:]) != tuple(o.shape):
            # torch's message prints the grad_output's shape from its third dim on
            raise RuntimeError(
                "If `is_grads_batched=True`, we interpret the first dimension of each "
                "grad_output as the batch dimension. The sizes of the remaining dimensions are "
                "expected to match the shape of corresponding output, but a mismatch was "
                f"detected: grad_output[{i}] has a shape of {Size(tuple(g.shape[2:]))} and "
                f"output[{i}] has a shape of {o.shape}. If you only want some tensors in "
                "`grad_output` to be considered batched, consider using vmap.")
        sizes.append(g.shape[0])
    if any(s != sizes[0] for s in sizes):
        raise ValueError("vmap: Expected all tensors to have the same size in the mapped "
                         f"dimension, got sizes {sizes} for the mapped dimension")
    return sizes[0]


def batched_grad(grad: Callable, outputs: tuple, inputs: tuple, grads: tuple,
                 retain_graph: bool | None, create_graph: bool, allow_unused: bool | None,
                 materialize_grads: bool) -> tuple:
    from .._creation import ones_like, zeros_like
    from .._ops.shape import stack

    full = [ones_like(o) if g is None else g for o, g in zip(outputs, grads)]
    for g in full:
        if not isinstance(g, Tensor):
            raise TypeError(f"expected Tensor as element of grad_outputs, got {type(g)}")
    batch = _batch_check(outputs, full, grads)
    if retain_graph is None:
        retain_graph = create_graph
    rows: list = []
    for b in range(batch):
        last = b == batch - 1
        rows.append(grad(outputs, inputs, tuple(g[b] for g in full),
                         retain_graph=retain_graph if last else True,
                         create_graph=create_graph, allow_unused=True))
    result: list[Any] = []
    for k, t in enumerate(inputs):
        column = [row[k] for row in rows]
        if batch == 0 or column[0] is None:
            if batch and not (allow_unused or materialize_grads):
                raise RuntimeError(
                    f"The differentiated Tensor at index {k} appears to not have been used in "
                    "the graph. Set allow_unused=True if this is the desired behavior.")
            if batch == 0:
                result.append(zeros_like(t).unsqueeze(0)[:0])
            else:
                result.append(zeros_like(t) if materialize_grads else None)
            continue
        result.append(stack(column, 0))
    return tuple(result)
