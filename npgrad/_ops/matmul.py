"""Products of vectors and matrices: dot, mv, mm, bmm, the add-products (addmm, addmv, addr,
baddbmm, addbmm), outer, cross and matmul, each an entry with torch's checks and grad_fn.

The decompositions and matrix functions of ``torch.linalg`` (inv, det, solve, svd ...) are
in npgrad/_ops/linalg.py, loaded on first use; the products are here because every model
needs them at import time (``nn.Linear`` is ``addmm``, ``x @ w`` is ``mm``).  ``cross`` is a
product too (bilinear in its operands), whichever namespace torch spells it in.

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

Note [A product's entry]
Each product is a General entry (Note [The general entry kind] in registry.py) named and
shaped as derivatives.yaml's: its inputs by torch's names (``mm``'s ``self`` and ``mat2``,
``mv``'s ``vec``), one rule per input that reads only the *other* operand (so an operand
is saved only when the other one needs a gradient, as torch saves them), the add-products'
``alpha`` and ``beta`` kept as given (``grad_fn._saved_alpha``), and a bilinear tangent
rule, ``d(a b) = da b + a db``.  For complex operands each gradient multiplies by the
other operand's conjugate (Note [Complex gradients by conjugation] in registry.py), and
by the conjugate of ``alpha`` / ``beta``.
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
from ._core import binary_arrays
from ._shape_util import broadcast_shapes, wrap_dim
from .pointwise import mul
from .registry import General, _elem_strides, conjugate_of
from .shape import (contiguous, expand, reshape, squeeze, squeeze_fresh_, t, unsafe_view,
                    unsqueeze)

__all__ = ["addbmm", "addmm", "addmv", "addr", "baddbmm", "bmm", "cross", "dot", "ger",
           "linalg_cross", "matmul", "mm", "mv", "outer"]


def _cpp(d: np.dtype) -> str:
    name: str = _dtype.from_np(d).cpp_name
    return name


def _scalar(d: np.dtype) -> str:
    name: str = _dtype.from_np(d).scalar_name
    return name


def _prod(shape: Any) -> int:
    n = 1
    for s in shape:
        n *= s
    return n


def _not_implemented_for_bool(kernel: str, d: np.dtype) -> None:
    if d.kind == "b":
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{_scalar(d)}'")


def _times(grad: Tensor, scalar: Any) -> Tensor:
    """``grad * conj(scalar)``, or ``grad`` itself for a scalar of 1 (torch's
    ``maybe_multiply(grad, scalar.conj())``)."""
    return grad if scalar == 1 else grad * conjugate_of(scalar)


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
    # torch dispatches the kernel on batch1's dtype before comparing it with batch2's
    _not_implemented_for_bool(kernel, d1)
    if d1 != d2:
        raise RuntimeError(f"expected scalar type {_scalar(d1)} but found {_scalar(d2)}")


def _matmul_np(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``np.matmul``; bfloat16 operands are multiplied and summed in float32 and rounded once,
    as torch's CPU kernels accumulate them (Note [bfloat16 storage] in npgrad._bfloat16)."""
    if a.dtype.kind == "V":
        out: np.ndarray = _bfloat16.in_float32(np.matmul, a, b)
        return out
    if a.ndim > 2 and a.shape[-1] == 1 and b.ndim > 1 and a.dtype == b.dtype:
        # a stack of outer products (per-sample weight gradients under vmap): NumPy's
        # stacked matmul takes a slow loop for an inner size of 1; each element is one
        # product either way, so the broadcast product is the same numbers
        return np.multiply(a, b)
    return np.matmul(a, b)


# -- dot / mv / mm / bmm -------------------------------------------------------------------


@signature("outer(Tensor input, Tensor vec2, *, Tensor out=None)")
def outer(input: Tensor, vec2: Tensor) -> Tensor:
    """Outer product of two 1-D tensors: ``input[:, None] * vec2`` (grad_fn ``MulBackward0``,
    as torch's composite).

    >>> import npgrad
    >>> npgrad.outer(npgrad.tensor([1., 2.]), npgrad.tensor([1., 10.]))
    tensor([[ 1., 10.],
            [ 2., 20.]])
    """
    if input._data.ndim != 1:
        raise RuntimeError(f"outer: Expected 1-D argument self, but got {input._data.ndim}-D")
    if vec2._data.ndim != 1:
        raise RuntimeError(f"outer: Expected 1-D argument vec2, but got {vec2._data.ndim}-D")
    product: Tensor = mul(reshape(input, (-1, 1)), vec2)
    return product


ger = outer


@signature("dot(Tensor input, Tensor tensor, *, Tensor out=None)")
def dot(input: Tensor, tensor: Tensor) -> Tensor:
    """Inner product of two 1-D tensors of one dtype (grad_fn ``DotBackward0``).

    >>> import npgrad
    >>> npgrad.dot(npgrad.tensor([1., 2.]), npgrad.tensor([3., 4.]))
    tensor(11.)
    """
    a, b = input._data, tensor._data
    _check_dot(a.shape, b.shape, a.dtype, b.dtype)
    out: Tensor = DOT.record((input, tensor), np.asarray(_dot_np(a, b), dtype=a.dtype))
    return out


# Note [A two-element dot product]
# NumPy hands a 1-D ``dot`` to its BLAS, whose kernel depends on the CPU: on AVX-512
# machines OpenBLAS's ddot fuses a multiply into the add, so ``dot`` of two float64
# 2-vectors differs from torch's in the last bit about a quarter of the time.  torch's
# result for two elements is the plain ``a0*b0 + a1*b1`` (measured on an AVX-512 machine,
# float32 and float64; on the AVX2 machines where the LBFGS tests were written, NumPy's
# ddot gave the same numbers).  Two-element dots are what 2-parameter optimizers (the
# LBFGS direction on Rosenbrock) take every step, so they are computed that way here;
# longer ones stay with the BLAS, whose order torch's own BLAS does not share either.
def _dot_np(a: np.ndarray, b: np.ndarray) -> Any:
    if a.shape[0] == 2 and a.dtype.char in "fd":
        return a[0] * b[0] + a[1] * b[1]
    return np.dot(a, b)


DOT = General(
    "dot(Tensor input, Tensor tensor, *, Tensor out=None)", grad_fn="DotBackward0",
    forward=None, inputs=("self", "tensor"), saves=("self", "tensor"),
    derivatives={"self": lambda grad, tensor: grad * conjugate_of(tensor),
                 "tensor": lambda grad, self: grad * conjugate_of(self)},
    tangent=lambda self_t, tensor_t, self, tensor: dot(self_t, tensor) + dot(self, tensor_t))
DotBackward0 = DOT.node


@signature("mv(Tensor input, Tensor vec, *, Tensor out=None)")
def mv(input: Tensor, vec: Tensor) -> Tensor:
    """Matrix times vector (grad_fn ``MvBackward0``).

    >>> import npgrad
    >>> npgrad.mv(npgrad.ones(2, 3), npgrad.tensor([1., 2., 3.]))
    tensor([6., 6.])
    """
    a, b = input._data, vec._data
    checks.size_at(a.shape, 0)  # torch sizes its result by the matrix's rows first
    _check_mv(a.shape, b.shape, a.dtype, b.dtype)
    out: Tensor = MV.record((input, vec), _matmul_np(a, b))
    return out


MV = General(
    "mv(Tensor input, Tensor vec, *, Tensor out=None)", grad_fn="MvBackward0",
    forward=None, inputs=("self", "vec"), saves=("self", "vec"),
    derivatives={"self": lambda grad, vec: outer(grad, conjugate_of(vec)),
                 "vec": lambda grad, self: mv(conjugate_of(self).mT, grad)},
    tangent=lambda self_t, vec_t, self, vec: mv(self_t, vec) + mv(self, vec_t))
MvBackward0 = MV.node


# Note [Matrix gradients in their input's layout]
# As torch's mm backward, a gradient for a column-major input (``weight.t()``, the
# ``mat2`` of every ``nn.Linear``) is computed as the transpose of a row-major
# product, ``(grad^T @ mat1)^T`` instead of ``mat1^T @ grad``: the same sums, and the
# gradient arrives at the weight (through TBackward0) row-major, as the weight is, so
# AccumulateGrad's private copy of it is a plain contiguous copy, not a transposing
# one (which cost ~10x more for a 784x256 weight).  The nodes keep the inputs'
# strides, in elements, as torch's do (``_saved_mat2_sym_strides``).

def _column_major(strides: tuple, rows: int) -> bool:
    """torch's test for a column-major matrix: unit row stride, columns ``rows`` apart."""
    return len(strides) == 2 and strides[0] == 1 and strides[1] == rows


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

        sparse_product: Tensor = sparse.mm(input, mat2)
        return sparse_product
    _check_mm(a.shape, b.shape, a.dtype, b.dtype)
    out: Tensor = MM.record((input, mat2), _matmul_np(a, b))
    return out


MM = General(
    "mm(Tensor input, Tensor mat2, *, Tensor out=None)", grad_fn="MmBackward0",
    forward=None, inputs=("self", "mat2"), saves=("self", "mat2"),
    keeps=("self_sym_sizes", "self_sym_strides", "mat2_sym_sizes", "mat2_sym_strides"),
    derivatives={"self": lambda grad, mat2, self_sym_strides:
                 _mat1_grad(grad, mat2, self_sym_strides),
                 "mat2": lambda grad, self, mat2_sym_strides:
                 _mat2_grad(grad, self, mat2_sym_strides)},
    tangent=lambda self_t, mat2_t, self, mat2: mm(self_t, mat2) + mm(self, mat2_t),
    also=("mm(Tensor input, Tensor mat2, ScalarType out_dtype, *, Tensor out=None)",))
MmBackward0 = MM.node


@signature("bmm(Tensor input, Tensor mat2, *, Tensor out=None)",
           "bmm(Tensor input, Tensor mat2, ScalarType out_dtype, *, Tensor out=None)")
def bmm(input: Tensor, mat2: Tensor) -> Tensor:
    """Batched matrix product of two 3-D tensors (grad_fn ``BmmBackward0``).

    >>> import npgrad
    >>> tuple(npgrad.bmm(npgrad.ones(4, 2, 3), npgrad.ones(4, 3, 5)).shape)
    (4, 2, 5)
    """
    a, b = input._data, mat2._data
    _check_bmm(a.shape, b.shape, a.dtype, b.dtype)
    out: Tensor = BMM.record((input, mat2), _matmul_np(a, b))
    return out


BMM = General(
    "bmm(Tensor input, Tensor mat2, *, Tensor out=None)", grad_fn="BmmBackward0",
    forward=None, inputs=("self", "mat2"), saves=("self", "mat2"),
    derivatives={"self": lambda grad, mat2: bmm(grad, conjugate_of(mat2).mT),
                 "mat2": lambda grad, self: bmm(conjugate_of(self).mT, grad)},
    tangent=lambda self_t, mat2_t, self, mat2: bmm(self_t, mat2) + bmm(self, mat2_t),
    also=("bmm(Tensor input, Tensor mat2, ScalarType out_dtype, *, Tensor out=None)",))
BmmBackward0 = BMM.node


# -- the add-products: beta * input + alpha * product --------------------------------------------

def _add_product_tangent(self_t: Tensor, product_t: Tensor, beta: Any, alpha: Any) -> Tensor:
    """``beta * self_t + alpha * product_t``: linear in ``self``, bilinear in the operands
    (with beta 0, ``self`` is not read, its tangent's NaNs included)."""
    out = product_t if alpha == 1 else product_t * alpha
    if beta == 0:
        return out
    return out + (self_t if beta == 1 else self_t * beta)


_ADD_PRODUCT_KEEPS = ("alpha", "beta")


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
    checks.check_expandable(s.shape, target, s.dtype)
    out_dt = b.dtype
    int_alpha, int_beta = (int(alpha), int(beta)) if a.dtype.kind in "iu" else (alpha, beta)
    if out_dt.kind == "V":  # bfloat16: beta * input + alpha * (a @ b) in float32, rounded once
        s, a, b = s.astype(np.float32), a.astype(np.float32), b.astype(np.float32)
    prod = np.matmul(a, b)
    if int_alpha != 1:
        prod = prod * int_alpha
    if int_beta == 0:  # torch ignores `input` entirely then: NaNs in it do not propagate
        out = np.broadcast_to(prod, target)
    else:
        out = prod + (s if int_beta == 1 else s * int_beta)
    out = np.asarray(out, order="C").astype(out_dt, copy=False)
    res: Tensor = ADDMM.record((input, mat1, mat2), out, (beta, alpha))
    return res


ADDMM = General(
    "addmm(Tensor input, Tensor mat1, Tensor mat2, *, Scalar beta=1, Scalar alpha=1, "
    "Tensor out=None)", grad_fn="AddmmBackward0", forward=None,
    inputs=("self", "mat1", "mat2"), params=("beta", "alpha"), saves=("mat1", "mat2"),
    keeps=("alpha", "beta", "mat1_sym_sizes", "mat1_sym_strides", "mat2_sym_sizes",
           "mat2_sym_strides"), scalars=_ADD_PRODUCT_KEEPS,
    derivatives={"self": lambda grad, beta: _times(grad, beta),
                 "mat1": lambda grad, mat2, mat1_sym_strides, alpha:
                 _times(_mat1_grad(grad, mat2, mat1_sym_strides), alpha),
                 "mat2": lambda grad, mat1, mat2_sym_strides, alpha:
                 _times(_mat2_grad(grad, mat1, mat2_sym_strides), alpha)},
    tangent=lambda self_t, mat1_t, mat2_t, mat1, mat2, beta, alpha: _add_product_tangent(
        self_t, mm(mat1_t, mat2) + mm(mat1, mat2_t), beta, alpha),
    also=("addmm(Tensor input, Tensor mat1, Tensor mat2, ScalarType out_dtype, *, "
          "Scalar beta=1, Scalar alpha=1, Tensor out=None)",))
AddmmBackward0 = ADDMM.node


def _add_product(entry: General, input: Tensor, a: Tensor, b: Tensor, prod: np.ndarray,
                 beta: Any, alpha: Any, params: tuple = ()) -> Tensor:
    """Finish ``beta * input + alpha * prod`` and record ``entry`` over (input, a, b)."""
    s = input._data
    checks.check_expandable(s.shape, prod.shape, s.dtype)
    int_alpha, int_beta = (int(alpha), int(beta)) if prod.dtype.kind in "iu" else (alpha, beta)
    if int_alpha != 1:
        prod = prod * int_alpha
    if int_beta == 0:  # as addmm: ``input`` is ignored, its NaNs included
        out = np.broadcast_to(prod, prod.shape)
    else:
        out = prod + (s if int_beta == 1 else s * int_beta)
    out = np.asarray(out, order="C").astype(prod.dtype, copy=False)
    res: Tensor = entry.record((input, a, b), out, (beta, alpha, *params))
    return res


@signature("addmv(Tensor input, Tensor mat, Tensor vec, *, Scalar beta=1, Scalar alpha=1, "
           "Tensor out=None)",
           "addmv(Scalar beta, Tensor input, Tensor mat, Tensor vec, *, "
           "Tensor out=None)|deprecated")  # Note [Deprecated overloads]
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
    if m.size == 0 and beta != 0:  # torch returns ``beta * input``, input-shaped, unbroadcast
        return _add_product(ADDMV, input, mat, vec, np.zeros(s.shape, m.dtype), beta, alpha)
    return _add_product(ADDMV, input, mat, vec, np.matmul(m, v), beta, alpha)


ADDMV = General(
    "addmv(Tensor input, Tensor mat, Tensor vec, *, Scalar beta=1, Scalar alpha=1, "
    "Tensor out=None)", grad_fn="AddmvBackward0", forward=None,
    inputs=("self", "mat", "vec"), params=("beta", "alpha"), saves=("mat", "vec"),
    keeps=_ADD_PRODUCT_KEEPS, scalars=_ADD_PRODUCT_KEEPS,
    derivatives={"self": lambda grad, beta: _times(grad, beta),
                 "mat": lambda grad, vec, alpha: _times(outer(grad, conjugate_of(vec)), alpha),
                 "vec": lambda grad, mat, alpha: _times(mv(conjugate_of(mat).mT, grad), alpha)},
    tangent=lambda self_t, mat_t, vec_t, mat, vec, beta, alpha: _add_product_tangent(
        self_t, mv(mat_t, vec) + mv(mat, vec_t), beta, alpha))
AddmvBackward0 = ADDMV.node


@signature("addr(Tensor input, Tensor vec1, Tensor vec2, *, Scalar beta=1, Scalar alpha=1, "
           "Tensor out=None)",
           "addr(Scalar beta, Tensor input, Tensor vec1, Tensor vec2, *, "
           "Tensor out=None)|deprecated")  # Note [Deprecated overloads]
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
    # the result has the three tensors' promoted dtype, torch's (a 0-dim input counts as
    # much as the vectors), not NumPy's (int64 with float32 is float64 there)
    dt = _dtype.from_np(input._data.dtype)
    for v in (vec1, vec2):
        dt = _dtype.promote_types(dt, _dtype.from_np(v._data.dtype))
    prod = np.outer(vec1._data.astype(dt.np_dtype, copy=False),
                    vec2._data.astype(dt.np_dtype, copy=False))
    return _add_product(ADDR, input, vec1, vec2, prod, beta, alpha)


ADDR = General(
    "addr(Tensor input, Tensor vec1, Tensor vec2, *, Scalar beta=1, Scalar alpha=1, "
    "Tensor out=None)", grad_fn="AddrBackward0", forward=None,
    inputs=("self", "vec1", "vec2"), params=("beta", "alpha"), saves=("vec1", "vec2"),
    keeps=_ADD_PRODUCT_KEEPS, scalars=_ADD_PRODUCT_KEEPS,
    derivatives={"self": lambda grad, beta: _times(grad, beta),
                 "vec1": lambda grad, vec2, alpha: _times(mv(grad, conjugate_of(vec2)), alpha),
                 "vec2": lambda grad, vec1, alpha: _times(mv(grad.mT, conjugate_of(vec1)),
                                                          alpha)},
    tangent=lambda self_t, vec1_t, vec2_t, vec1, vec2, beta, alpha: _add_product_tangent(
        self_t, outer(vec1_t, vec2) + outer(vec1, vec2_t), beta, alpha))
AddrBackward0 = ADDR.node


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
    return _add_product(BADDBMM, input, batch1, batch2, np.matmul(a, b), beta, alpha)


BADDBMM = General(
    "baddbmm(Tensor input, Tensor batch1, Tensor batch2, *, Scalar beta=1, Scalar alpha=1, "
    "Tensor out=None)", grad_fn="BaddbmmBackward0", forward=None,
    inputs=("self", "batch1", "batch2"), params=("beta", "alpha"), saves=("batch1", "batch2"),
    keeps=_ADD_PRODUCT_KEEPS, scalars=_ADD_PRODUCT_KEEPS,
    derivatives={"self": lambda grad, beta: _times(grad, beta),
                 "batch1": lambda grad, batch2, alpha:
                 _times(bmm(grad, conjugate_of(batch2).mT), alpha),
                 "batch2": lambda grad, batch1, alpha:
                 _times(bmm(conjugate_of(batch1).mT, grad), alpha)},
    tangent=lambda self_t, batch1_t, batch2_t, batch1, batch2, beta, alpha:
    _add_product_tangent(self_t, bmm(batch1_t, batch2) + bmm(batch1, batch2_t), beta, alpha),
    also=("baddbmm(Tensor input, Tensor batch1, Tensor batch2, ScalarType out_dtype, *, "
          "Scalar beta=1, Scalar alpha=1, Tensor out=None)",))
BaddbmmBackward0 = BADDBMM.node


def _batch_sum(products: Tensor) -> Tensor:
    """The sum of a stack of products over its batch, as addbmm adds them."""
    return products.sum(0)


def _summed_batches(grad: Tensor, batches: int) -> Tensor:
    """addbmm's gradient of the sum over batches: the same gradient for every batch."""
    return expand(unsqueeze(grad, 0), (batches,) + grad._data.shape)


@signature("addbmm(Tensor input, Tensor batch1, Tensor batch2, *, Scalar beta=1, Scalar alpha=1, "
           "Tensor out=None)",
           "addbmm(Scalar beta, Tensor input, Tensor batch1, Tensor batch2, *, "
           "Tensor out=None)|deprecated")  # Note [Deprecated overloads]
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
    return _add_product(ADDBMM, input, batch1, batch2, np.matmul(a, b).sum(0), beta, alpha,
                        (a.shape[0], a.shape[1], b.shape[2]))


ADDBMM = General(
    "addbmm(Tensor input, Tensor batch1, Tensor batch2, *, Scalar beta=1, Scalar alpha=1, "
    "Tensor out=None)", grad_fn="AddbmmBackward0", forward=None,
    inputs=("self", "batch1", "batch2"), saves=("batch1", "batch2"),
    params=("beta", "alpha", "batch1_sym_argsize_0", "batch1_sym_argsize_1",
            "batch2_sym_argsize_2"),
    keeps=("alpha", "beta", "batch1_sym_argsize_0", "batch1_sym_argsize_1",
           "batch2_sym_argsize_2"), scalars=_ADD_PRODUCT_KEEPS,
    derivatives={"self": lambda grad, beta: _times(grad, beta),
                 "batch1": lambda grad, batch2, batch1_sym_argsize_0, alpha: _times(
                     bmm(_summed_batches(grad, batch1_sym_argsize_0),
                         conjugate_of(batch2).mT), alpha),
                 "batch2": lambda grad, batch1, batch1_sym_argsize_0, alpha: _times(
                     bmm(conjugate_of(batch1).mT,
                         _summed_batches(grad, batch1_sym_argsize_0)), alpha)},
    tangent=lambda self_t, batch1_t, batch2_t, batch1, batch2, beta, alpha:
    _add_product_tangent(self_t, _batch_sum(bmm(batch1_t, batch2) + bmm(batch1, batch2_t)),
                         beta, alpha))
AddbmmBackward0 = ADDBMM.node


# -- cross ---------------------------------------------------------------------------------------


@signature("linalg_cross(Tensor input, Tensor other, *, int64_t dim=-1, Tensor out=None)")
def linalg_cross(input: Tensor, other: Tensor, *, dim: int = -1) -> Tensor:
    """torch.linalg.cross: the 3-vector cross product along ``dim`` (LinalgCrossBackward0).

    >>> import npgrad
    >>> npgrad.linalg.cross(npgrad.tensor([1., 0., 0.]), npgrad.tensor([0., 1., 0.]))
    tensor([0., 0., 1.])
    """
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
    out = np.cross(np.broadcast_to(a, shape), np.broadcast_to(b, shape), axis=d)
    res: Tensor = LINALG_CROSS.record((input, other), np.asarray(out, order="C"), (dim,))
    return res


LINALG_CROSS = General(
    "linalg_cross(Tensor input, Tensor other, *, int64_t dim=-1, Tensor out=None)",
    grad_fn="LinalgCrossBackward0", forward=None, inputs=("self", "other"),
    params=("dim",), keeps=("dim",), saves=("self", "other"),
    # the cross product is bilinear: d/da = b x g and d/db = g x a, as torch's
    derivatives={"self": lambda grad, other, dim: linalg_cross(conjugate_of(other), grad,
                                                               dim=dim),
                 "other": lambda grad, self, dim: linalg_cross(grad, conjugate_of(self),
                                                               dim=dim)},
    tangent=lambda self_t, other_t, self, other, dim: (linalg_cross(self_t, other, dim=dim)
                                                       + linalg_cross(self, other_t, dim=dim)))
LinalgCrossBackward0 = LINALG_CROSS.node


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
        return cls(d.shape, _elem_strides(d), t._requires_grad, d.dtype)

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
