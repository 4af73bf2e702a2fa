"""The forward (Jacobian-vector product) rules that nodes share, derived from their backward rules.

Note [Forward rules from backward rules]
An op's backward rule maps an output gradient ``g`` to input gradients
``J_i^T g``; its forward rule maps input tangents ``t_i`` to ``sum_i J_i t_i``.
Both are the same Jacobians, so npgrad writes each derivative once, in the
backward rule, and gets the forward rule from it:

* ``elementwise_jvp``: for a pointwise op every ``J_i`` is diagonal, so it is
  its own transpose and ``J_i t_i`` is the backward rule applied to ``t_i``
  (broadcast to the output's shape).  One rule call per tangent input; the
  tangent is recorded like any other computation, so it is differentiable
  when its inputs require grad.
* ``transposed_backward_jvp`` (every other op): with ``g`` a free variable,
  ``s(g) = sum_i <J_i^T g, t_i> = <g, sum_i J_i t_i>``, so the tangent is the
  gradient of ``s`` with respect to ``g``.  With complex numbers the backward
  rule gives ``J^H g`` and the pairing is the real one, ``Re(sum(conj(a) * b))``:
  its gradient in a complex ``g`` (Note [Gradients of complex inputs] in
  npgrad._ops.complex) is again ``J t``.  The backward rule is linear in
  ``g`` and written in npgrad's own ops, so one reverse pass through it (the
  same machinery as double backward) gives the exact product, for every op,
  at the price of recording the rule once.

Rules receive one tangent per edge of the node (``None`` for an input with no
tangent) and return one tangent per output.  Custom ``Function``s bring their
own ``jvp`` instead (see ``function.py``).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from .._forward import FORWARD_EDGE
from .._mode import _tls, RECORDING


def _zeros(shape: tuple, dtype: Any) -> Any:
    from .._tensor_base import wrap

    return wrap(np.zeros(shape, dtype=dtype), 0)


def elementwise_jvp(node: Any, tangents: list) -> list:
    """Forward rule of a pointwise op (see Note [Forward rules from backward rules])."""
    shape, dtype = node._out_meta[0]
    total = None
    for i, tangent in enumerate(tangents):
        if tangent is None:
            continue
        if tuple(tangent._data.shape) != tuple(shape):
            tangent = tangent.expand(shape)
        if dtype.kind == "c":
            # backward multiplies by the conjugated derivative (Note [Gradients of complex
            # inputs] in npgrad._ops.complex): conjugating around it gives J t
            part = node.backward(tangent.conj())[i]
            part = None if part is None else part.conj()
        else:
            part = node.backward(tangent)[i]
        if part is None:
            continue
        total = part if total is None else total + part
    return [total if total is not None else _zeros(shape, dtype)]


def transposed_backward_jvp(node: Any, tangents: list) -> list:
    """Forward rule of any op, by one reverse pass through its backward rule."""
    from .._tensor import Tensor
    from .._tensor_base import _make
    from .._ops.broadcast import sum_to_size
    from . import grad as autograd_grad

    mode = _tls.mode
    keeps_graph = mode == RECORDING and (
        any(t is not None and t._requires_grad for t in tangents)
        or any(fn is not None and fn is not FORWARD_EDGE for fn, _ in node.next_functions))
    free = [_make(Tensor, np.zeros(shape, dtype=dtype), None, True, None)
            for shape, dtype in node._out_meta]
    _tls.mode = RECORDING
    try:
        grads = node.backward(*free)
        total = None
        for g, tangent in zip(grads, tangents):
            if g is None or tangent is None:
                continue
            if g._data.shape != tangent._data.shape:
                g = sum_to_size(g, tangent._data.shape)
            if g._data.dtype.kind == "c" or tangent._data.dtype.kind == "c":
                # complex: the real inner product Re(sum(conj(J^H g) * t)) = Re(<g, J t>),
                # whose gradient in g (torch's convention) is J t itself
                term = (g.conj() * tangent).sum().real
            else:
                term = (g * tangent).sum()
            total = term if total is None else total + term
        if total is None or not total._requires_grad:  # the rule ignores g: a zero derivative
            return [_zeros(shape, dtype) for shape, dtype in node._out_meta]
        found = autograd_grad(total, free, create_graph=keeps_graph, allow_unused=True,
                              materialize_grads=True)
    finally:
        _tls.mode = mode
    if not keeps_graph:
        found = [t.detach() for t in found]
    return list(found)
