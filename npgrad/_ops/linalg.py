"""Matrix products: dot, mv, mm, bmm, addmm, outer and matmul, with torch's checks and grad_fns.

Note [How matmul is recorded]
torch's ``matmul`` is a composite: depending on the operands' ranks, on which
of them requires grad and on their strides it calls ``dot``, ``mv``, ``mm`` or
``bmm`` on reshaped, transposed, expanded or squeezed views of the inputs, and
the graph it leaves is that chain of nodes (``(x3d @ w).grad_fn`` is
``UnsafeViewBackward0`` over ``MmBackward0`` over ``ViewBackward0``).  When the
result is recorded (or carries a tangent), npgrad runs the same composite with
its own ops (``_matmul_ops``), so the chain, each node's name and the gradient
of every step are torch's; there is no matmul node of its own.  When nothing is
recorded, the chain would be thrown away, so the product is one ``np.matmul``.
``_plan`` replays torch's choice of path first, which also decides the error
text a bad call gets (for example an ``mm`` message for a folded batch).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from .signature import signature
from .. import _bfloat16, _dtype
from .._forward import FW
from .._mode import _tls, RECORDING
if TYPE_CHECKING:
    from .._tensor import Tensor
else:  # Note [Tensor base and Tensor] in npgrad._tensor_base
    from .._tensor_base import TensorBase as Tensor
from .._tensor_base import wrap
from . import checks
from ._core import BinaryNode, Node, SavedTensor, binary, node_of, record, saved
from .registry import conjugate_of
from ._shape_util import broadcast_shapes
from .shape import (contiguous, expand, reshape, squeeze, squeeze_fresh_, t, unsafe_view,
                    unsqueeze)


def _cpp(d: np.dtype) -> str:
    name = _dtype.from_np(d).cpp_name
    return name


def _scalar(d: np.dtype) -> str:
    return _dtype.from_np(d).scalar_name


def _prod(shape: Any) -> int:
    n = 1
    for s in shape:
        n *= s
    return n


def _not_implemented_for_bool(kernel: str, d: np.dtype) -> None:
    if d.kind == "b":
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{_scalar(d)}'")


# -- torch's argument checks, one per kernel ---------------------------------------------------

def _check_mm(s1: tuple, s2: tuple, d1: np.dtype, d2: np.dtype) -> None:
    if len(s1) != 2:
        raise RuntimeError("self must be a matrix")
    if len(s2) != 2:
        raise RuntimeError("mat2 must be a matrix")
    if s1[1] != s2[0]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({s1[0]}x{s1[1]} and "
                           f"{s2[0]}x{s2[1]})")
    if d1 != d2:
        raise RuntimeError("expected m1 and m2 to have the same dtype, but got: "
                           f"{_cpp(d1)} != {_cpp(d2)}")
    _not_implemented_for_bool("addmm_impl_cpu_", d1)


def _check_mv(sm: tuple, sv: tuple, dm: np.dtype, dv: np.dtype) -> None:
    if len(sm) != 2 or len(sv) != 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got 1, {len(sm)}, {len(sv)}")
    if sm[1] != sv[0]:
        raise RuntimeError(f"size mismatch, got input ({sm[0]}), mat ({sm[0]}x{sm[1]}), "
                           f"vec ({sv[0]})")
    if dm != dv:
        raise RuntimeError("addmv input tensors must have the same dtype, but got "
                           f"{_scalar(dv)}, {_scalar(dm)}, and {_scalar(dv)}")
    _not_implemented_for_bool("addmv_impl_cpu", dm)


def _check_dot(s1: tuple, s2: tuple, d1: np.dtype, d2: np.dtype) -> None:
    if len(s1) != 1 or len(s2) != 1:
        raise RuntimeError(f"1D tensors expected, but got {len(s1)}D and {len(s2)}D tensors")
    if d1 != d2:
        raise RuntimeError("dot : expected both vectors to have same dtype, but found "
                           f"{_scalar(d1)} and {_scalar(d2)}")
    if s1[0] != s2[0]:
        raise RuntimeError(f"inconsistent tensor size, expected tensor [{s1[0]}] and src "
                           f"[{s2[0]}] to have the same number of elements, but got {s1[0]} "
                           f"and {s2[0]} elements respectively")
    _not_implemented_for_bool("dot", d1)


def _check_bmm(s1: tuple, s2: tuple, d1: np.dtype, d2: np.dtype, kernel: str = "bmm") -> None:
    if len(s1) != 3:
        raise RuntimeError("batch1 must be a 3D tensor")
    if len(s2) != 3:
        raise RuntimeError("batch2 must be a 3D tensor")
    if s2[0] != s1[0] or s2[1] != s1[2]:
        raise RuntimeError("Expected size for first two dimensions of batch2 tensor to be: "
                           f"[{s1[0]}, {s1[2]}] but got: [{s2[0]}, {s2[1]}].")
    if d1 != d2:
        raise RuntimeError(f"expected scalar type {_scalar(d1)} but found {_scalar(d2)}")
    _not_implemented_for_bool(kernel, d1)


# -- dot / mv / mm / bmm -------------------------------------------------------------------

class _ProductNode(BinaryNode):
    """A product's node: each input's gradient reads only the *other* input."""

    __slots__ = ()

    def save(self, a: Any, b: Any, result: Tensor) -> None:
        if self.next_functions[0][0] is not None:
            self.other = SavedTensor(b)
        if self.next_functions[1][0] is not None:
            self.self_ = SavedTensor(a)

    def product(self, a: Tensor, b: Tensor) -> Tensor:  # pragma: no cover - overridden
        raise NotImplementedError

    def jvp(self, tangents: list) -> list:
        """A product is bilinear: d(a b) = da b + a db."""
        ta, tb = tangents
        total = None if ta is None else self.product(ta, saved(self, "other"))
        if tb is not None:
            part = self.product(saved(self, "self_"), tb)
            total = part if total is None else total + part
        return [total]


class DotBackward0(_ProductNode):
    __slots__ = ()

    def product(self, a: Tensor, b: Tensor) -> Tensor:
        return dot(a, b)

    def backward(self, grad: Tensor) -> tuple:
        # complex operands: each gradient takes the other's conjugate (conjugate_of, Note
        # [Complex gradients by conjugation] in registry.py); so do all the products below
        ga = (grad * conjugate_of(saved(self, "other"))
              if self.next_functions[0][0] is not None else None)
        gb = (grad * conjugate_of(saved(self, "self_"))
              if self.next_functions[1][0] is not None else None)
        return ga, gb


def _matmul_np(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``np.matmul``; bfloat16 operands are multiplied and summed in float32 and rounded once,
    as torch's CPU kernels accumulate them (Note [bfloat16 storage] in npgrad._bfloat16)."""
    if a.dtype.kind == "V":
        return _bfloat16.in_float32(np.matmul, a, b)
    if a.ndim > 2 and a.shape[-1] == 1 and b.ndim > 1 and a.dtype == b.dtype:
        # a stack of outer products (per-sample weight gradients under vmap): NumPy's
        # stacked matmul takes a slow loop for an inner size of 1; each element is one
        # product either way, so the broadcast product is the same numbers
        return np.multiply(a, b)
    return np.matmul(a, b)


@signature("dot(Tensor input, Tensor tensor, *, Tensor out=None)")
def dot(input: Tensor, other: Tensor) -> Tensor:
    """Inner product of two 1-D tensors of one dtype (grad_fn ``DotBackward0``).

    >>> import npgrad
    >>> npgrad.dot(npgrad.tensor([1., 2.]), npgrad.tensor([3., 4.]))
    tensor(11.)
    """
    a, b = input._data, other._data
    _check_dot(a.shape, b.shape, a.dtype, b.dtype)
    return binary(DotBackward0, input, other, np.asarray(np.dot(a, b), dtype=a.dtype))


class MvBackward0(_ProductNode):
    __slots__ = ()

    def product(self, a: Tensor, b: Tensor) -> Tensor:
        return mv(a, b)

    def backward(self, grad: Tensor) -> tuple:
        ga = gb = None
        if self.next_functions[0][0] is not None:
            ga = outer(grad, conjugate_of(saved(self, "other")))
        if self.next_functions[1][0] is not None:
            gb = mv(conjugate_of(saved(self, "self_")).mT, grad)
        return ga, gb


@signature("mv(Tensor input, Tensor vec, *, Tensor out=None)")
def mv(input: Tensor, vec: Tensor) -> Tensor:
    """Matrix times vector (grad_fn ``MvBackward0``)."""
    a, b = input._data, vec._data
    _check_mv(a.shape, b.shape, a.dtype, b.dtype)
    return binary(MvBackward0, input, vec, _matmul_np(a, b))


# Note [Matrix gradients in their input's layout]
# As torch's mm backward, a gradient for a column-major input (``weight.t()``, the
# ``mat2`` of every ``nn.Linear``) is computed as the transpose of a row-major
# product, ``(grad^T @ mat1)^T`` instead of ``mat1^T @ grad``: the same sums, and the
# gradient arrives at the weight (through TBackward0) row-major, as the weight is, so
# AccumulateGrad's private copy of it is a plain contiguous copy, not a transposing
# one (which cost ~10x more for a 784x256 weight).  The nodes keep the inputs'
# strides, in elements, as torch's do (``_saved_mat2_sym_strides``).

def _elem_strides(a: np.ndarray) -> tuple:
    size = a.itemsize
    return tuple(s // size for s in a.strides)


def _column_major(strides: tuple, rows: int) -> bool:
    """torch's test for a column-major matrix: unit row stride, columns ``rows`` apart."""
    return strides[0] == 1 and strides[1] == rows


def _mat1_grad(grad: Tensor, mat2: Tensor, mat1_strides: tuple) -> Tensor:
    mat2 = conjugate_of(mat2)
    if _column_major(mat1_strides, grad._data.shape[0]):
        return mm(mat2, grad.mT).mT
    return mm(grad, mat2.mT)


def _mat2_grad(grad: Tensor, mat1: Tensor, mat2_strides: tuple) -> Tensor:
    mat1 = conjugate_of(mat1)
    if _column_major(mat2_strides, mat1._data.shape[1]):
        return mm(grad.mT, mat1).mT
    return mm(mat1.mT, grad)


class MmBackward0(_ProductNode):
    __slots__ = ("self_sym_strides", "mat2_sym_strides")

    def save(self, a: Any, b: Any, result: Tensor) -> None:
        _ProductNode.save(self, a, b, result)
        self.self_sym_strides = _elem_strides(a._data)
        self.mat2_sym_strides = _elem_strides(b._data)

    def product(self, a: Tensor, b: Tensor) -> Tensor:
        return mm(a, b)

    def backward(self, grad: Tensor) -> tuple:
        ga = gb = None
        if self.next_functions[0][0] is not None:
            ga = _mat1_grad(grad, saved(self, "other"), self.self_sym_strides)
        if self.next_functions[1][0] is not None:
            gb = _mat2_grad(grad, saved(self, "self_"), self.mat2_sym_strides)
        return ga, gb


@signature("mm(Tensor input, Tensor mat2, *, Tensor out=None)",
           "mm(Tensor input, Tensor mat2, ScalarType out_dtype, *, Tensor out=None)")
def mm(input: Tensor, mat2: Tensor) -> Tensor:
    """Matrix product of two 2-D tensors of one dtype (grad_fn ``MmBackward0``).

    >>> import npgrad
    >>> npgrad.mm(npgrad.ones(2, 3), npgrad.ones(3, 1))
    tensor([[3.],
            [3.]])
    """
    a, b = input._data, mat2._data
    if type(a) is not np.ndarray:  # a sparse matrix (Note [Sparse COO tensors])
        from . import sparse

        return sparse.mm(input, mat2)
    _check_mm(a.shape, b.shape, a.dtype, b.dtype)
    return binary(MmBackward0, input, mat2, _matmul_np(a, b))


class BmmBackward0(_ProductNode):
    __slots__ = ()

    def product(self, a: Tensor, b: Tensor) -> Tensor:
        return bmm(a, b)

    def backward(self, grad: Tensor) -> tuple:
        ga = gb = None
        if self.next_functions[0][0] is not None:
            ga = bmm(grad, conjugate_of(saved(self, "other")).mT)
        if self.next_functions[1][0] is not None:
            gb = bmm(conjugate_of(saved(self, "self_")).mT, grad)
        return ga, gb


@signature("bmm(Tensor input, Tensor mat2, *, Tensor out=None)",
           "bmm(Tensor input, Tensor mat2, ScalarType out_dtype, *, Tensor out=None)")
def bmm(input: Tensor, mat2: Tensor) -> Tensor:
    """Batched matrix product of two 3-D tensors (grad_fn ``BmmBackward0``)."""
    a, b = input._data, mat2._data
    _check_bmm(a.shape, b.shape, a.dtype, b.dtype)
    return binary(BmmBackward0, input, mat2, _matmul_np(a, b))


# -- addmm / outer ----------------------------------------------------------------------------

class AddmmBackward0(Node):
    """``beta * self + alpha * (mat1 @ mat2)``; inputs (self, mat1, mat2)."""

    __slots__ = ("mat1", "mat2", "alpha", "beta", "mat1_sym_strides", "mat2_sym_strides")
    _saved_fields = ("mat1", "mat2")

    def backward(self, grad: Tensor) -> tuple:
        alpha, beta = self.alpha, self.beta
        gs = g1 = g2 = None
        if self.next_functions[0][0] is not None:
            gs = grad if beta == 1 else grad * beta
        if self.next_functions[1][0] is not None:  # Note [Matrix gradients in their input's layout]
            g1 = _mat1_grad(grad, saved(self, "mat2"), self.mat1_sym_strides)
            g1 = g1 if alpha == 1 else g1 * alpha
        if self.next_functions[2][0] is not None:
            g2 = _mat2_grad(grad, saved(self, "mat1"), self.mat2_sym_strides)
            g2 = g2 if alpha == 1 else g2 * alpha
        return gs, g1, g2

    def jvp(self, tangents: list) -> list:
        """Linear in self, bilinear in (mat1, mat2)."""
        t_self, t1, t2 = tangents
        alpha, beta = self.alpha, self.beta
        product = None if t1 is None else mm(t1, saved(self, "mat2"))
        if t2 is not None:
            part = mm(saved(self, "mat1"), t2)
            product = part if product is None else product + part
        if product is not None and alpha != 1:
            product = product * alpha
        if t_self is not None and beta != 0:
            scaled = t_self if beta == 1 else t_self * beta
            product = scaled.expand(self._out_meta[0][0]) if product is None else product + scaled
        return [product]


def _expand_error(self_shape: tuple, target: tuple, d: np.dtype) -> None:
    """torch's message when ``self`` of addmm cannot broadcast to the product's shape."""
    checks.check_expandable(self_shape, target, d)


@signature("addmm(Tensor input, Tensor mat1, Tensor mat2, *, Scalar beta=1, Scalar alpha=1, "
           "Tensor out=None)",
           "addmm(Tensor input, Tensor mat1, Tensor mat2, ScalarType out_dtype, *, "
           "Scalar beta=1, Scalar alpha=1, Tensor out=None)")
def addmm(input: Tensor, mat1: Tensor, mat2: Tensor, *, beta: Any = 1,
          alpha: Any = 1) -> Tensor:
    """``beta * input + alpha * (mat1 @ mat2)`` (grad_fn ``AddmmBackward0``); nn.Linear's op.

    >>> import npgrad
    >>> npgrad.addmm(npgrad.zeros(2), npgrad.ones(1, 3), npgrad.ones(3, 2))
    tensor([[3., 3.]])
    """
    s, a, b = input._data, mat1._data, mat2._data
    # torch's order (Note [Checks before NumPy]): the dtypes, then the ranks, then the sizes
    if s.dtype != b.dtype:
        raise RuntimeError("self and mat2 must have the same dtype, but got "
                           f"{_scalar(s.dtype)} and {_scalar(b.dtype)}")
    if a.dtype != b.dtype:
        raise RuntimeError("mat1 and mat2 must have the same dtype, but got "
                           f"{_scalar(a.dtype)} and {_scalar(b.dtype)}")
    if a.ndim != 2:
        raise RuntimeError(f"mat1 must be a matrix, got {a.ndim}-D tensor")
    if b.ndim != 2:
        raise RuntimeError(f"mat2 must be a matrix, got {b.ndim}-D tensor")
    if a.shape[1] != b.shape[0]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({a.shape[0]}x"
                           f"{a.shape[1]} and {b.shape[0]}x{b.shape[1]})")
    _not_implemented_for_bool("addmm_impl_cpu_", a.dtype)
    target = (a.shape[0], b.shape[1])
    _expand_error(s.shape, target, s.dtype)
    if a.dtype.kind in "iu":  # torch converts the scalars to the integer dtype
        alpha, beta = int(alpha), int(beta)
    out_dt = b.dtype
    if out_dt.kind == "V":  # bfloat16: beta * input + alpha * (a @ b) in float32, rounded once
        s, a, b = s.astype(np.float32), a.astype(np.float32), b.astype(np.float32)
    prod = np.matmul(a, b)
    if alpha != 1:
        prod = prod * alpha
    if beta == 0:  # torch ignores `input` entirely then: NaNs in it do not propagate
        out = np.broadcast_to(prod, target)
    else:
        out = prod + (s if beta == 1 else s * beta)
    out = np.asarray(out, order="C").astype(out_dt, copy=False)
    res, node = record(AddmmBackward0, (input, mat1, mat2), out)
    if node is not None:
        node.alpha, node.beta = alpha, beta
        node.mat1 = SavedTensor(mat1) if node.next_functions[2][0] is not None else None
        node.mat2 = SavedTensor(mat2) if node.next_functions[1][0] is not None else None
        node.mat1_sym_strides = _elem_strides(mat1._data)
        node.mat2_sym_strides = _elem_strides(mat2._data)
    return res


@signature("outer(Tensor input, Tensor vec2, *, Tensor out=None)")
def outer(input: Tensor, vec2: Tensor) -> Tensor:
    """Outer product of two 1-D tensors: ``input[:, None] * vec2`` (grad_fn ``MulBackward0``)."""
    from .pointwise import mul
    from .shape import reshape

    if input._data.ndim != 1:
        raise RuntimeError(f"outer: Expected 1-D argument self, but got {input._data.ndim}-D")
    if vec2._data.ndim != 1:
        raise RuntimeError(f"outer: Expected 1-D argument vec2, but got {vec2._data.ndim}-D")
    return mul(reshape(input, (-1, 1)), vec2)


ger = outer


# -- matmul -----------------------------------------------------------------------------------

class _Operand:
    """What torch's path choice looks at: shape, strides (elements), requires_grad, dtype."""

    __slots__ = ("shape", "strides", "requires_grad", "dtype")

    def __init__(self, shape: tuple, strides: tuple, requires_grad: bool,
                 dtype: np.dtype) -> None:
        self.shape, self.strides = shape, strides
        self.requires_grad, self.dtype = requires_grad, dtype

    @classmethod
    def of(cls, t: Tensor) -> _Operand:
        d = t._data
        item = d.itemsize
        return cls(d.shape, tuple(s // item for s in d.strides), t._requires_grad, d.dtype)

    def squeeze0(self) -> _Operand:
        return _Operand(self.shape[1:], self.strides[1:], self.requires_grad, self.dtype)


def _should_fold(t1: _Operand, t2: _Operand) -> bool:
    """torch's test for computing a batched matmul as one mm/mv on a flattened batch."""
    first_larger = len(t1.shape) >= len(t2.shape)
    if first_larger:
        big_shape, big_strides, small = t1.shape, t1.strides, t2
    else:
        big_shape = t2.shape[:-2] + (t2.shape[-1], t2.shape[-2])
        big_strides = t2.strides[:-2] + (t2.strides[-1], t2.strides[-2])
        small = t1
    if not (len(big_shape) >= 3 and len(small.shape) in (1, 2)):
        return False
    if small.requires_grad:
        return True
    if len(t1.shape) == 2:
        return False
    if _prod(big_shape) == 0:
        return True
    # Foldable without a copy when the batch and row dims collapse into one.
    # (torch's test, on strides: NumPy's strides of size-1 dims can differ from
    # torch's, which can only change which error text a bad call gets.)
    for i in range(len(big_shape) - 2):
        if big_strides[i] != big_strides[i + 1] * big_shape[i + 1]:
            return False
    return True


def _plan(t1: _Operand, t2: _Operand) -> str:
    """The kernel torch's matmul path ends in, raising the error that path would raise."""
    n1, n2 = len(t1.shape), len(t2.shape)
    if n1 == 0 or n2 == 0:
        raise RuntimeError("both arguments to matmul need to be at least 1D, but they are "
                           f"{n1}D and {n2}D")
    if n1 == 1 and n2 == 1:
        _check_dot(t1.shape, t2.shape, t1.dtype, t2.dtype)
        return "dot"
    if n1 == 2 and n2 == 1:
        _check_mv(t1.shape, t2.shape, t1.dtype, t2.dtype)
        return "mv"
    if n1 == 1 and n2 == 2:
        _check_mm((1,) + t1.shape, t2.shape, t1.dtype, t2.dtype)
        return "vm"
    if n1 == 2 and n2 == 2:
        _check_mm(t1.shape, t2.shape, t1.dtype, t2.dtype)
        return "mm"
    if _should_fold(t1, t2):
        if n1 >= n2:
            mat = (_prod(t1.shape[:-1]), t1.shape[-1])
            if n2 == 1:
                _check_mv(mat, t2.shape, t1.dtype, t2.dtype)
            else:
                _check_mm(mat, t2.shape, t1.dtype, t2.dtype)
            return "fold"
        # Computed as (other^T @ input^T)^T with other^T folded into a matrix.
        mat = (_prod(t2.shape[:-2]) * t2.shape[-1], t2.shape[-2])
        if n1 == 1:
            _check_mv(mat, t1.shape, t2.dtype, t1.dtype)
            return "fold"
        _check_mm(mat, (t1.shape[1], t1.shape[0]), t2.dtype, t1.dtype)
        return "fold"
    if n1 == 3 and n2 == 3 and t1.shape[0] != t2.shape[0]:
        # A batch of one that requires grad is squeezed, so that its gradient
        # is not materialised at the full batch size.
        if t1.shape[0] == 1 and t1.requires_grad:
            return _plan(t1.squeeze0(), t2)
        if t2.shape[0] == 1 and t2.requires_grad:
            return _plan(t1, t2.squeeze0())
    rows = t1.shape[-2] if n1 > 1 else 1
    inner1 = t1.shape[-1]
    inner2 = t2.shape[-2] if n2 > 1 else t2.shape[0]
    cols = t2.shape[-1] if n2 > 1 else 1
    batch = broadcast_shapes(t1.shape[:-2], t2.shape[:-2])
    size = _prod(batch)
    _check_bmm((size, rows, inner1), (size, inner2, cols), t1.dtype, t2.dtype)
    return "bmm"


@signature("matmul(Tensor input, Tensor other, *, Tensor out=None)")
def matmul(input: Tensor, other: Tensor) -> Tensor:
    """Matrix product with NumPy's rank rules; grad_fn as torch's (Note [How matmul is recorded]).

    >>> import npgrad
    >>> tuple((npgrad.ones(4, 2, 3) @ npgrad.ones(3)).shape)
    (4, 2)
    """
    path = _plan(_Operand.of(input), _Operand.of(other))
    if path == "dot":
        return dot(input, other)
    if path == "mv":
        return mv(input, other)
    if path == "mm":
        return mm(input, other)
    mode = _tls.mode
    if FW.active or (mode == RECORDING and (input._requires_grad or other._requires_grad)):
        return _matmul_ops(input, other)
    return wrap(np.asarray(_matmul_np(input._data, other._data), order="C"), mode)


def _matmul_ops(t1: Tensor, t2: Tensor) -> Tensor:
    """torch's composite matmul, op by op, so that the graph holds torch's chain of nodes.

    Called once ``_plan`` has accepted the operands, so none of these ops raises.
    """
    n1, n2 = t1._data.ndim, t2._data.ndim
    if n1 == 1 and n2 == 1:
        return dot(t1, t2)
    if n1 == 2 and n2 == 1:
        return mv(t1, t2)
    if n1 == 1 and n2 == 2:
        return squeeze_fresh_(mm(unsqueeze(t1, 0), t2), 0)
    if n1 == 2 and n2 == 2:
        return mm(t1, t2)
    if _should_fold(_Operand.of(t1), _Operand.of(t2)):
        # The larger operand becomes one matrix (its batch folded into the rows); with the
        # larger one on the right, the product is computed transposed: (t2^T t1^T)^T.
        flip = n2 > n1
        big = t2.mT if flip else t1
        small = (t(t1) if n1 == 2 else t1) if flip else t2
        rows_shape = big._data.shape[:-1]
        folded = reshape(big, (_prod(rows_shape), big._data.shape[-1]))
        if small._data.ndim == 1:
            return unsafe_view(mv(folded, small), rows_shape)
        out = unsafe_view(mm(folded, small), rows_shape + (small._data.shape[1],))
        return contiguous(out.mT) if flip else out
    s1, s2 = t1._data.shape, t2._data.shape
    if n1 == 3 and n2 == 3 and s1[0] != s2[0]:
        # A batch of one that requires grad is squeezed, so that its gradient is not
        # materialised at the full batch size.
        if s1[0] == 1 and t1._requires_grad:
            return _matmul_ops(squeeze(t1, 0), t2)
        if s2[0] == 1 and t2._requires_grad:
            return _matmul_ops(t1, squeeze(t2, 0))
    rows = s1[-2] if n1 > 1 else 1
    inner2, cols = (s2[-2], s2[-1]) if n2 > 1 else (s2[0], 1)
    batch = broadcast_shapes(s1[:-2], s2[:-2])
    size = _prod(batch)
    a = reshape(expand(t1, batch + (rows, s1[-1])), (size, rows, s1[-1]))
    if n2 == 1:
        b = unsqueeze(reshape(expand(t2, batch + (inner2,)), (size, inner2)), 2)
    else:
        b = reshape(expand(t2, batch + (inner2, cols)), (size, inner2, cols))
    out_shape = batch + ((rows,) if n1 > 1 else ()) + ((cols,) if n2 > 1 else ())
    product = bmm(a, b)
    return unsafe_view(squeeze(product, -1) if n2 == 1 else product, out_shape)


# -- cross ---------------------------------------------------------------------------------------

def _np_cross(a: np.ndarray, b: np.ndarray, d: int) -> np.ndarray:
    return np.cross(a, b, axis=d)


class LinalgCrossBackward0(BinaryNode):
    """``a x b``: d/da = b x g, d/db = g x a (the cross product is bilinear)."""

    __slots__ = ("dim",)

    def save(self, a: Any, b: Any, result: Tensor) -> None:
        self.self_, self.other = SavedTensor(a), SavedTensor(b)

    def backward(self, grad: Tensor) -> tuple:
        a, b = saved(self, "self_"), saved(self, "other")
        ga = (linalg_cross(conjugate_of(b), grad, dim=self.dim)
              if self.needs_input_grad(0) else None)
        gb = (linalg_cross(grad, conjugate_of(a), dim=self.dim)
              if self.needs_input_grad(1) else None)
        return ga, gb


@signature("linalg_cross(Tensor input, Tensor other, *, int64_t dim=-1, Tensor out=None)")
def linalg_cross(input: Tensor, other: Tensor, *, dim: int = -1) -> Tensor:
    """torch.linalg.cross: the 3-vector cross product along ``dim`` (LinalgCrossBackward0).

    >>> import npgrad
    >>> npgrad.linalg.cross(npgrad.tensor([1., 0., 0.]), npgrad.tensor([0., 1., 0.]))
    tensor([0., 0., 1.])
    """
    from ._core import binary_arrays
    from ._shape_util import wrap_dim

    a, b = binary_arrays(input, other)
    if a.ndim != b.ndim:
        raise RuntimeError("linalg.cross: inputs must have the same number of dimensions.")
    d = wrap_dim(dim, a.ndim)
    if a.shape[d] != 3 or b.shape[d] != 3:
        raise RuntimeError(f"linalg.cross: inputs dimension {dim} must have length 3. Got "
                           f"{a.shape[d]} and {b.shape[d]}")
    shape = broadcast_shapes(a.shape, b.shape)
    da, db = input._data.dtype, other._data.dtype
    _not_implemented_for_bool("cross", da)
    if da != db:  # torch computes in the first input's dtype and refuses others
        raise RuntimeError(f"expected scalar type {_scalar(da)} but found {_scalar(db)}")
    a, b = np.broadcast_to(a, shape), np.broadcast_to(b, shape)
    out = _np_cross(a, b, d)
    res = binary(LinalgCrossBackward0, input, other, np.asarray(out, order="C"))
    node = node_of(res)
    if node is not None:
        node.dim = d
    return res


@signature("cross(Tensor input, Tensor other, int64_t? dim=None, *, Tensor out=None)")
def cross(input: Tensor, other: Tensor, dim: Any = None) -> Tensor:
    """torch.cross: :func:`linalg_cross`; without ``dim``, the first dimension of size 3
    (deprecated in torch, which warns).

    >>> import npgrad
    >>> npgrad.cross(npgrad.tensor([[0., 1., 0.]]), npgrad.tensor([[0., 0., 1.]]), dim=1)
    tensor([[1., 0., 0.]])
    """
    if dim is None:
        import warnings

        warnings.warn("Using torch.cross without specifying the dim arg is deprecated.\n"
                      "Please either pass the dim explicitly or simply use torch.linalg.cross.\n"
                      "The default value of dim will change to agree with that of linalg.cross "
                      "in a future release.", UserWarning, stacklevel=2)
        shape = broadcast_shapes(input._data.shape, other._data.shape)
        dim = next((i for i, s in enumerate(shape) if s == 3), -1)
    return linalg_cross(input, other, dim=dim)


# -- addmv / addr / baddbmm / addbmm: beta * self + alpha * product ------------------------------

class _AddProductNode(Node):
    """``beta * self + alpha * product(a, b)``; inputs (self, a, b).

    Subclasses give the product and its two partial gradients (``grad_a``, ``grad_b``),
    all in npgrad ops so that double backward works.
    """

    __slots__ = ("a", "b", "alpha", "beta", "self_shape")
    _saved_fields = ("a", "b")

    def backward(self, grad: Tensor) -> tuple:
        from .shape import _sum_to

        alpha, beta = self.alpha, self.beta
        gs = ga = gb = None
        if self.needs_input_grad(0) and beta != 0:
            gs = _sum_to(grad if beta == 1 else grad * beta, self.self_shape)
        if self.needs_input_grad(1):
            ga = self.grad_a(grad, conjugate_of(saved(self, "b")))
            ga = ga if alpha == 1 else ga * alpha
        if self.needs_input_grad(2):
            gb = self.grad_b(grad, conjugate_of(saved(self, "a")))
            gb = gb if alpha == 1 else gb * alpha
        return gs, ga, gb


class AddmvBackward0(_AddProductNode):
    __slots__ = ()

    def grad_a(self, grad: Tensor, vec: Tensor) -> Tensor:
        return outer(grad, vec)

    def grad_b(self, grad: Tensor, mat: Tensor) -> Tensor:
        return mv(mat.mT, grad)


class AddrBackward0(_AddProductNode):
    __slots__ = ()

    def grad_a(self, grad: Tensor, vec2: Tensor) -> Tensor:
        return mv(grad, vec2)

    def grad_b(self, grad: Tensor, vec1: Tensor) -> Tensor:
        return mv(grad.mT, vec1)


class BaddbmmBackward0(_AddProductNode):
    __slots__ = ()

    def grad_a(self, grad: Tensor, b2: Tensor) -> Tensor:
        return bmm(grad, b2.mT)

    def grad_b(self, grad: Tensor, b1: Tensor) -> Tensor:
        return bmm(b1.mT, grad)


class AddbmmBackward0(_AddProductNode):
    __slots__ = ()

    def grad_a(self, grad: Tensor, b2: Tensor) -> Tensor:
        from .shape import expand, unsqueeze

        g = expand(unsqueeze(grad, 0), (b2._data.shape[0],) + grad._data.shape)
        return bmm(g, b2.mT)

    def grad_b(self, grad: Tensor, b1: Tensor) -> Tensor:
        from .shape import expand, unsqueeze

        g = expand(unsqueeze(grad, 0), (b1._data.shape[0],) + grad._data.shape)
        return bmm(b1.mT, g)


def _add_product(cls: type, input: Tensor, a: Tensor, b: Tensor, prod: np.ndarray, beta: Any,
                 alpha: Any) -> Tensor:
    s = input._data
    _expand_error(s.shape, prod.shape, s.dtype)
    if prod.dtype.kind in "iu":
        alpha, beta = int(alpha), int(beta)
    if alpha != 1:
        prod = prod * alpha
    if beta == 0:  # as addmm: ``input`` is ignored, its NaNs included
        out = np.broadcast_to(prod, prod.shape)
    else:
        out = prod + (s if beta == 1 else s * beta)
    out = np.asarray(out, order="C").astype(prod.dtype, copy=False)
    res, node = record(cls, (input, a, b), out)
    if node is not None:
        node.alpha, node.beta, node.self_shape = alpha, beta, s.shape
        node.a = SavedTensor(a) if node.needs_input_grad(2) else None
        node.b = SavedTensor(b) if node.needs_input_grad(1) else None
    return res


@signature("addmv(Tensor input, Tensor mat, Tensor vec, *, Scalar beta=1, Scalar alpha=1, "
           "Tensor out=None)")
def addmv(input: Tensor, mat: Tensor, vec: Tensor, *, beta: Any = 1, alpha: Any = 1) -> Tensor:
    """``beta * input + alpha * (mat @ vec)``; AddmvBackward0.

    >>> import npgrad
    >>> npgrad.addmv(npgrad.ones(2), npgrad.ones(2, 3), npgrad.ones(3))
    tensor([4., 4.])
    """
    s, m, v = input._data, mat._data, vec._data
    # torch's order (Note [Checks before NumPy]): the ranks, the sizes, the dtypes, the kernel
    if m.ndim != 2 or v.ndim != 1 or s.ndim > 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got {s.ndim}, {m.ndim}, {v.ndim}")
    if m.shape[1] != v.shape[0] or (s.ndim == 1 and s.shape[0] not in (1, m.shape[0])):
        raise RuntimeError(f"size mismatch, got input ({', '.join(map(str, s.shape))}), "
                           f"mat ({'x'.join(map(str, m.shape))}), vec ({v.shape[0]})")
    if not s.dtype == m.dtype == v.dtype:
        raise RuntimeError("addmv input tensors must have the same dtype, but got "
                           f"{_scalar(s.dtype)}, {_scalar(m.dtype)}, and {_scalar(v.dtype)}")
    _not_implemented_for_bool("addmv_impl_cpu", m.dtype)
    return _add_product(AddmvBackward0, input, mat, vec, np.matmul(m, v), beta, alpha)


@signature("addr(Tensor input, Tensor vec1, Tensor vec2, *, Scalar beta=1, Scalar alpha=1, "
           "Tensor out=None)")
def addr(input: Tensor, vec1: Tensor, vec2: Tensor, *, beta: Any = 1, alpha: Any = 1) -> Tensor:
    """``beta * input + alpha * outer(vec1, vec2)``; AddrBackward0.

    >>> import npgrad
    >>> npgrad.addr(npgrad.zeros(2, 2), npgrad.tensor([1., 2.]), npgrad.tensor([1., 1.]))
    tensor([[1., 1.],
            [2., 2.]])
    """
    for name, v in (("vec1", vec1), ("vec2", vec2)):
        if v._data.ndim != 1:
            raise RuntimeError(f"addr: Expected 1-D argument {name}, but got {v._data.ndim}-D")
    return _add_product(AddrBackward0, input, vec1, vec2, np.outer(vec1._data, vec2._data),
                        beta, alpha)


@signature("baddbmm(Tensor input, Tensor batch1, Tensor batch2, *, Scalar beta=1, "
           "Scalar alpha=1, Tensor out=None)",
           "baddbmm(Tensor input, Tensor batch1, Tensor batch2, ScalarType out_dtype, *, "
           "Scalar beta=1, Scalar alpha=1, Tensor out=None)")
def baddbmm(input: Tensor, batch1: Tensor, batch2: Tensor, *, beta: Any = 1,
            alpha: Any = 1) -> Tensor:
    """``beta * input + alpha * bmm(batch1, batch2)``; BaddbmmBackward0.

    >>> import npgrad
    >>> npgrad.baddbmm(npgrad.zeros(1, 1, 1), npgrad.ones(1, 1, 2), npgrad.ones(1, 2, 1))
    tensor([[[2.]]])
    """
    s, a, b = input._data, batch1._data, batch2._data
    # torch's order (Note [Checks before NumPy]): ``input`` is expanded to the product's shape
    # (read with ``size``) and its dtype compared before the batches are checked
    target = (checks.size_at(a.shape, 0), checks.size_at(a.shape, 1), checks.size_at(b.shape, 2))
    checks.check_expandable(s.shape, target, s.dtype)
    if s.dtype != a.dtype:
        raise RuntimeError("Input dtypes must be the same, got: " + checks.same_dtype_message(
            ("input", "batch1", "batch2"), (s.dtype, a.dtype, b.dtype)))
    _check_bmm(a.shape, b.shape, a.dtype, b.dtype, "baddbmm")
    return _add_product(BaddbmmBackward0, input, batch1, batch2, np.matmul(a, b), beta, alpha)


@signature("addbmm(Tensor input, Tensor batch1, Tensor batch2, *, Scalar beta=1, Scalar alpha=1, "
           "Tensor out=None)")
def addbmm(input: Tensor, batch1: Tensor, batch2: Tensor, *, beta: Any = 1,
           alpha: Any = 1) -> Tensor:
    """``beta * input + alpha * sum(bmm(batch1, batch2), 0)``; AddbmmBackward0.

    >>> import npgrad
    >>> npgrad.addbmm(npgrad.zeros(1, 1), npgrad.ones(2, 1, 2), npgrad.ones(2, 2, 1))
    tensor([[4.]])
    """
    s, a, b = input._data, batch1._data, batch2._data
    # torch's order (Note [Checks before NumPy]): ``input`` is expanded to the product's shape
    # first, then the batches are checked, then each batch's ``addmm`` checks the dtypes; when
    # it records, torch's autograd reads ``batch1.size(0)`` (kept for the backward) before all
    if _tls.mode == RECORDING and (input._requires_grad or batch1._requires_grad
                                   or batch2._requires_grad):
        checks.size_at(a.shape, 0)
    checks.check_expandable(s.shape, (checks.size_at(a.shape, 1), checks.size_at(b.shape, 2)),
                            s.dtype)
    if a.ndim != 3:
        raise RuntimeError("batch1 must be a 3D tensor")
    if b.ndim != 3:
        raise RuntimeError("batch2 must be a 3D tensor")
    if a.shape[0] != b.shape[0]:
        raise RuntimeError("batch1 and batch2 must have same number of batches, got "
                           f"{a.shape[0]} and {b.shape[0]}")
    if a.shape[2] != b.shape[1]:
        raise RuntimeError(f"Incompatible matrix sizes for bmm ({a.shape[1]}x{a.shape[2]} and "
                           f"{b.shape[1]}x{b.shape[2]})")
    if a.shape[0] > 0:
        if s.dtype != b.dtype:
            raise RuntimeError("self and mat2 must have the same dtype, but got "
                               f"{_scalar(s.dtype)} and {_scalar(b.dtype)}")
        if a.dtype != b.dtype:
            raise RuntimeError("mat1 and mat2 must have the same dtype, but got "
                               f"{_scalar(a.dtype)} and {_scalar(b.dtype)}")
        _not_implemented_for_bool("addmm_impl_cpu_", a.dtype)
    return _add_product(AddbmmBackward0, input, batch1, batch2, np.matmul(a, b).sum(0), beta,
                        alpha)
