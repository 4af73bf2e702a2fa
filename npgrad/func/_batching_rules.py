"""Batching rules: ops that vmap runs once over the whole batch (Note [vmap by slices]).

A rule takes ``(batch_size, args, in_dims)`` (flat positional arguments, each in_dim an int
or None) and returns the op's output with the batch dimension at 0, or None to decline
(the per-slice fallback then runs).  Pointwise ops need only their batch dims lined up:
each batched argument's batch dim moves to the front, and the argument is padded with
size-1 dims up to the rank of the widest argument, so NumPy-style broadcasting of the
per-sample shapes happens behind the batch dim exactly as it would per slice.
"""
from __future__ import annotations

from typing import Any, Callable

import npgrad

from .. import _ops
from .._tensor import Tensor
from ._vmap import register_batching_rule


def _pointwise(op: Callable) -> Callable:
    def rule(batch: int, args: tuple, in_dims: tuple) -> Any:
        logical = [a.dim() - (d is not None) for a, d in zip(args, in_dims)
                   if isinstance(a, Tensor)]
        rank = max(logical) if logical else 0
        dtypes = {a.dtype for a in args if isinstance(a, Tensor)}
        if len(dtypes) > 1 and any(isinstance(a, Tensor) and d is not None and a.dim() == 1
                                   for a, d in zip(args, in_dims)):
            # a 0-dim slice promotes as a dimensionless tensor, its batch as a dimensioned one
            return None
        lined_up = []
        for a, d in zip(args, in_dims):
            if d is None or not isinstance(a, Tensor):
                lined_up.append(a)
                continue
            moved = a.movedim(d, 0)
            pad = rank - (a.dim() - 1)
            if pad:
                moved = moved.reshape((batch,) + (1,) * pad + tuple(moved.shape[1:]))
            lined_up.append(moved)
        out = op(*lined_up)
        return out if isinstance(out, Tensor) else None
    return rule


def _register_pointwise() -> None:
    pw = _ops.pointwise
    unary = ("abs", "neg", "exp", "log", "sin", "cos", "tanh", "sigmoid", "sqrt", "relu")
    binary = ("add", "sub", "mul", "div", "maximum", "minimum")
    for name in unary + binary:
        op = getattr(pw, name, None)
        if op is None:
            continue
        register_batching_rule(op)(_pointwise(op))
        public = getattr(npgrad, name)  # the public spelling, if it is another function
        if public is not op:
            register_batching_rule(public)(_pointwise(public))


_register_pointwise()
