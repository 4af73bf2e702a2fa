"""Distances: dist, cdist (registry entries), pairwise_distance and cosine_similarity.

``dist`` and ``cdist`` are entries of their own (DistBackward0, CdistBackward0), whose
rules reuse the norms' gradient (``norm_grad`` in npgrad._ops.reduction).
``pairwise_distance`` and ``cosine_similarity`` are compositions in torch (ATen's C++),
so they record the chain of nodes torch's composition records: ``norm(x1 - x2 + eps)``
is NormBackward1 over AddBackward1 (``add.Scalar``) over SubBackward0, and the cosine a
SumBackward1 over the products of the clamped norms.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from .signature import batchable, checker, signature
from .. import _dtype
if TYPE_CHECKING:
    from .._tensor import Tensor
else:  # Note [Tensor base and Tensor] in npgrad._tensor_base
    from .._tensor_base import TensorBase as Tensor
from ..autograd.grad_mode import no_grad
from ._core import binary_arrays, is_tensor
from ._shape_util import broadcast_shapes
from .arrange import broadcast_tensors
from .pointwise import ADD_SCALAR, _check_bool_sub
from .reduction import (NORM_DIM, _acc, _finish, _np_vector_norm, _ones_as, _reduction_tangent,
                        _restore, _vector_norm, norm_grad, sum, vector_norm)
from .registry import General
from .shape import clone, unsqueeze


def _dist_grad(grad: Tensor, x: Tensor, y: Tensor, result: Tensor, p: Any) -> Any:
    """``norm(self - other, p)``'s gradient for ``self`` (``other``'s is its negative); the
    inputs broadcast together, and the engine sums each gradient back to its input."""
    diff = x - y
    axes = tuple(range(diff._data.ndim))
    keep = (1,) * len(axes)
    return norm_grad(float(p), diff, _restore(grad, keep), _restore(result, keep), axes)


def _negated(g: Any) -> Any:
    return None if g is None else -g


def _dist_tangent(tx: Tensor, ty: Tensor, x: Tensor, y: Tensor, result: Tensor,
                  p: Any) -> Tensor:
    diff_t = tx - ty
    axes = tuple(range(diff_t._data.ndim))
    g = _dist_grad(_ones_as(result), x, y, result, p)
    if diff_t._data.dtype.kind == "c" and g is not None:
        # a real norm of a complex difference: Re(t * conj(g)), g the conjugate Wirtinger
        # gradient of the norm
        return _reduction_tangent(diff_t, g.conj(), axes, False).real
    return _reduction_tangent(diff_t, g, axes, False)


DIST = General(
    "dist(Tensor input, Tensor other, Scalar p=2, *, Tensor out=None)", grad_fn="DistBackward0",
    forward=None, inputs=("self", "other"), params=("p",), keeps=("p",),
    saves=("self", "other", "result"),
    derivatives={"self": lambda grad, self, other, result, p:
                 _dist_grad(grad, self, other, result, p),
                 "other": lambda grad, self, other, result, p:
                 _negated(_dist_grad(grad, self, other, result, p))},
    tangent=lambda self_t, other_t, self, other, result, p:
    _dist_tangent(self_t, other_t, self, other, result, p))
DistBackward0 = DIST.node


@signature("dist(Tensor input, Tensor other, Scalar p=2, *, Tensor out=None)")
def dist(input: Tensor, other: Tensor, p: float = 2) -> Tensor:
    """The p-norm of ``input - other``; DistBackward0.

    >>> import npgrad
    >>> npgrad.dist(npgrad.tensor([3., 0.]), npgrad.tensor([0., 4.]))
    tensor(5.)
    """
    if not is_tensor(other):
        raise TypeError(f"dist(): argument 'other' (position 2) must be Tensor, not "
                        f"{type(other).__name__}")
    _check_bool_sub(input, other)  # torch's dist is a norm of ``input - other``
    a, b = binary_arrays(input, other)
    broadcast_shapes(a.shape, b.shape)
    out = _np_vector_norm(_acc(a - b), float(p), tuple(range(np.broadcast(a, b).ndim)))
    if out.dtype.kind == "c":  # the norm of a complex difference is real
        out = out.real
    return DIST.record((input, other), _finish(out, out.dtype if a.dtype.kind == "c" else a.dtype,
                                               ()), (p,))


def _cdist_parts(x1: Tensor, x2: Tensor, result: Tensor, grad: Tensor, p: Any) -> Any:
    """Distances between rows, ``out[..., i, j] = norm(x1[..., i, :] - x2[..., j, :], p)``:
    the gradient of every row difference (None for p = 0)."""
    diff = unsqueeze(x1, -2) - unsqueeze(x2, -3)
    last = diff._data.ndim - 1
    return norm_grad(float(p), diff, unsqueeze(grad, -1), unsqueeze(result, -1), (last,)), last


def _cdist_grad(grad: Tensor, x1: Tensor, x2: Tensor, result: Tensor, p: Any,
                first: bool) -> Any:
    g, last = _cdist_parts(x1, x2, result, grad, p)
    if g is None:
        return None
    return sum(g, last - 1) if first else -sum(g, last - 2)


def _cdist_tangent(t1: Tensor, t2: Tensor, x1: Tensor, x2: Tensor, result: Tensor,
                   p: Any) -> Tensor:
    g, last = _cdist_parts(x1, x2, result, _ones_as(result), p)
    diff_t = unsqueeze(t1, -2) - unsqueeze(t2, -3)
    return _reduction_tangent(diff_t, g, (last,), False)


CDIST = General(
    "cdist(Tensor x1, Tensor x2, double p=2, str? compute_mode=None)", grad_fn="CdistBackward0",
    forward=None, inputs=("x1", "x2"), params=("p",), keeps=("p",),
    saves=("x1", "x2", "result"),
    derivatives={"x1": lambda grad, x1, x2, result, p: _cdist_grad(grad, x1, x2, result, p, True),
                 "x2": lambda grad, x1, x2, result, p: _cdist_grad(grad, x1, x2, result, p, False)},
    tangent=lambda x1_t, x2_t, x1, x2, result, p: _cdist_tangent(x1_t, x2_t, x1, x2, result, p))
CdistBackward0 = CDIST.node


_CDIST = checker("cdist(Tensor x1, Tensor x2, double p=2, int64_t? compute_mode=None)")
_CDIST_MODES = (("use_mm_for_euclid_dist_if_necessary", None), ("use_mm_for_euclid_dist", 1),
                ("donot_use_mm_for_euclid_dist", 2))


def _cdist_mode(compute_mode: Any) -> int | None:
    """torch.functional.cdist (Python) maps the mode's name to the C op's number."""
    for name, number in _CDIST_MODES:
        if compute_mode == name:
            return number
    raise ValueError(f"{compute_mode} is not a valid value for compute_mode")


@batchable  # Note [Batched values] in npgrad.func._batched
def cdist(x1: Tensor, x2: Tensor, p: float = 2.0,
          compute_mode: str = "use_mm_for_euclid_dist_if_necessary") -> Tensor:
    """Pairwise p-norm distances between the rows of ``x1`` and of ``x2``; CdistBackward0.

    >>> import npgrad
    >>> npgrad.cdist(npgrad.tensor([[0., 0.]]), npgrad.tensor([[3., 4.], [0., 1.]]))
    tensor([[5., 1.]])
    """
    _CDIST(x1, x2, p, _cdist_mode(compute_mode))
    a, b = x1._data, x2._data
    if a.ndim < 2:
        raise RuntimeError(f"cdist only supports at least 2D tensors, X1 got: {a.ndim}D")
    if b.ndim < 2:
        raise RuntimeError(f"cdist only supports at least 2D tensors, X2 got: {b.ndim}D")
    if a.shape[-1] != b.shape[-1]:
        raise RuntimeError(f"X1 and X2 must have the same number of columns. X1: {a.shape[-1]} "
                           f"X2: {b.shape[-1]}")
    for name, d in (("X1", a.dtype), ("X2", b.dtype)):
        if d.kind not in "fV":
            raise RuntimeError(f"cdist only supports floating-point dtypes, {name} got: "
                               f"{_dtype.from_np(d).scalar_name}")
    if p < 0:
        raise RuntimeError("cdist only supports non-negative p values")
    broadcast_shapes(a.shape[:-2], b.shape[:-2])
    if a.dtype == np.float16:
        raise NotImplementedError("\"cdist\" not implemented for 'Half'")
    if a.dtype != b.dtype:
        raise RuntimeError(f"expected scalar type {_dtype.from_np(a.dtype).scalar_name} but found "
                           f"{_dtype.from_np(b.dtype).scalar_name}")
    diff = _acc(a[..., :, None, :] - b[..., None, :, :])
    out = _np_vector_norm(diff, float(p), (diff.ndim - 1,))
    return CDIST.record((x1, x2), _finish(out, a.dtype, out.shape), (float(p),))


# -- cosine_similarity / pairwise_distance (torch composes them) ---------------------------------

@signature("cosine_similarity(Tensor x1, Tensor x2, int64_t dim=1, double eps=1e-08)")
def cosine_similarity(x1: Tensor, x2: Tensor, dim: int = 1, eps: float = 1e-8) -> Tensor:
    """``sum(x1 / |x1| * x2 / |x2|, dim)``, each norm at least ``eps``: torch's composition
    (grad_fn SumBackward1).

    >>> import npgrad
    >>> npgrad.cosine_similarity(npgrad.tensor([[1., 0.]]), npgrad.tensor([[1., 1.]]))
    tensor([0.7071])
    """
    common = _dtype.result_type_np((x1._data, x2._data))
    if common.kind != "f":
        raise RuntimeError("expected common dtype to be floating point, yet common dtype is "
                           f"{_dtype.from_np(common).scalar_name}")
    if not eps >= 0:
        raise RuntimeError(f"eps must be non-negative, got: {_cpp_double(eps)}")
    # As torch: integer (and bool) inputs take the common dtype, then both broadcast before
    # the norms; the norms are clamped in place without recording, so a gradient reaches a
    # norm below eps as if it were not clamped.
    x1, x2 = (x.to(_dtype.from_np(common)) if x._data.dtype.kind in "iub" else x
              for x in (x1, x2))
    x1, x2 = broadcast_tensors(x1, x2)
    n1, n2 = clone(vector_norm(x1, 2, dim, True)), clone(vector_norm(x2, 2, dim, True))
    with no_grad():
        n1.clamp_(min=eps)
        n2.clamp_(min=eps)
    return sum((x1 / n1) * (x2 / n2), dim)


def _cpp_double(value: float) -> str:
    """A double as torch's C++ message prints it (-1, 0.5, 1e-08)."""
    return f"{value:g}"


@signature("pairwise_distance(Tensor x1, Tensor x2, double p=2, double eps=1e-06, "
           "bool keepdim=False)")
def pairwise_distance(x1: Tensor, x2: Tensor, p: float = 2.0, eps: float = 1e-6,
                      keepdim: bool = False) -> Tensor:
    """``norm(x1 - x2 + eps, p, -1)`` as torch computes it (grad_fn NormBackward1).

    >>> import npgrad
    >>> npgrad.pairwise_distance(npgrad.tensor([[3., 0.]]), npgrad.tensor([[0., 4.]]), eps=0.)
    tensor([5.])
    """
    diff = ADD_SCALAR(x1 - x2, eps, 1)  # ATen adds a double: add.Scalar, AddBackward1
    dim = diff._data.ndim - 1 if diff._data.ndim else 0  # torch keeps it wrapped
    return _vector_norm(NORM_DIM, diff, p, dim, keepdim, None)
