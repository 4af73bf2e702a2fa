"""The forward (Jacobian-vector product) rule derived from an op's backward rule.

Note [Forward rules from backward rules]
An op's backward rule maps an output gradient ``g`` to input gradients
``J_i^T g``; its forward rule maps input tangents ``t_i`` to ``sum_i J_i t_i``.
Both are the same Jacobians, so npgrad writes each derivative once, in the
backward rule, and gets the forward rule from it.  A pointwise entry's Jacobian
is diagonal, its own transpose, so the entry applies its rule to the tangent
directly (Note [An op is an entry] in npgrad._ops.registry).  For any other op,
``transposed_backward_jvp`` does it: with ``g`` a free variable,
``s(g) = sum_i <J_i^T g, t_i> = <g, sum_i J_i t_i>``, so the tangent is the
gradient of ``s`` with respect to ``g``.  With complex numbers the backward
rule gives ``J^H g`` and the pairing is the real one, ``Re(sum(conj(a) * b))``:
its gradient in a complex ``g`` (Note [Gradients of complex inputs] in
npgrad._ops.complex) is again ``J t``.  The backward rule is linear in ``g``
and written in npgrad's own ops, so one reverse pass through it (the same
machinery as double backward) gives the exact product, for every op, at the
price of recording the rule once; the decompositions of npgrad._ops.linalg
use it as their tangent rule.

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
