"""The matrix functions and decompositions of torch.linalg: inv, det, slogdet, solve,
solve_triangular, cholesky, cholesky_solve, qr, eigh, svd, pinv, lstsq, and the norms, powers
and products built on them (the plain products -- mm, matmul, cross -- are in _ops/matmul.py).

This module is what ``torch.linalg`` names beyond the products, and it is large and rarely
needed, so ``import npgrad`` does not load it: ``npgrad.linalg`` and the torch-level names
(``torch.det``, ``Tensor.inverse`` ...) import it on first use.

Note [Decomposition nodes]
Each differentiable decomposition is ONE General entry named as torch's node
(``LinalgInvExBackward0``, ``LinalgSvdBackward0``...), computed with NumPy's LAPACK wrappers
over the leading batch dims, saving what torch's saves under torch's names (``_saved_A``,
``_saved_inverse``, ``_saved_U``...; torch's ``LU`` and ``pivots`` are not kept: npgrad has
no LU factorisation and its rules do not read one).  Each backward is written in npgrad ops
(matmul, ``.mH``, ``inv``, ``diag_embed``...) on the saved inputs and outputs, so gradients
of gradients come for free.  Multi-output decompositions (slogdet, qr, eigh, svd) record one
node with several outputs (``output_nr`` 0, 1, ...); a backward receives None for an unused
output.  ``svdvals`` and ``eigvalsh`` record the full decomposition's node, as torch does,
when a gradient or tangent may be asked for, and return its values output.

Note [Complex decompositions]
Complex inputs take torch's conjugate Wirtinger convention (Note [Complex gradients by
conjugation] in registry.py): every transpose of a real rule is the conjugate transpose
(``.mH``), ``det``'s gradient is ``grad * conj(det) * A^-H``, slogdet's sign (complex there)
contributes ``-i Im(conj(g_sign) sign)``, the diagonal of QR's ``copyltu`` is real, and the
SVD and eigh rules refuse, with torch's error, a loss that depends on the phase of a singular
vector or eigenvector (Note [Gauge of eigenvectors and singular vectors]).  Values that torch
returns real (eigenvalues, singular values, ``logabsdet``, lstsq's residuals) are real.

Note [Tangents of the decompositions]
Tangents are computed at once with the outputs (Note [Tangents computed at once] in
registry.py).  inv, det, slogdet, solve, solve_triangular, cholesky_solve, cholesky and eigh
have torch's forward formulas.  qr, svd, pinv and lstsq read the whole matrix, so their
Jacobian-vector product is exactly the transpose of their backward rule: it is found by one
reverse pass through a node of the entry holding the primal values
(``_tangent_from_backward``, the rule of autograd/forward_rules.py), built for the tangent
only and never part of a graph, its values held plainly (no saved-tensor hooks run for it).

Note [Gauge of eigenvectors and singular vectors]
Eigenvectors and singular vectors are defined up to sign (up to a phase ``e^{i phi}`` when
complex; NumPy's LAPACK calls and torch's may pick different ones).  The backward rules use
the antisymmetric (skew-Hermitian) part of ``V^H gV`` exactly like torch's, so a loss that
does not depend on the gauge gets the same gradient in both.  Eigenvalues that coincide make
the eigenvector gradient infinite, as in torch.

Note [Where npgrad's linalg differs from torch]
* The gradient of ``det`` at an exactly singular matrix is the adjugate (what torch gives
  under ``create_graph=True``); torch's plain backward there gives zeros from its LU solve.
* ``det`` of an exactly singular matrix is ``0.`` where torch's LU may give ``-0.``, and the
  infinite gradient of ``slogdet`` there may have other signs than torch's.
* ``cond`` with p 'fro', +-1 or +-inf is differentiable here; torch's backward raises (it fills
  the inverse its backward reads in place).
* LAPACK drivers: values agree to rounding; for a rank-deficient or wide input, ``lstsq``'s
  'gels' driver (which assumes full rank) returns NumPy's minimum-norm solution.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, TypeVar

import numpy as np

from .signature import signature
from .. import _dtype
from .._forward import FORWARD_EDGE
from .._mode import _tls, RECORDING
if TYPE_CHECKING:
    from .._tensor import Tensor
else:  # Note [Tensor base and Tensor] in npgrad._tensor_base
    from .._tensor_base import TensorBase as Tensor
from .._tensor_base import wrap
from ..autograd.forward_rules import transposed_backward_jvp
from ..autograd.graph import edge_of
from .checks import forward_ad_missing
from .matmul import matmul
from .registry import General, conjugate_of


class _LinAlgError(RuntimeError):
    """torch's ``torch.linalg.LinAlgError``: a singular or not positive-definite input."""


_LinAlgError.__module__ = "npgrad._C"
LinAlgError = _LinAlgError


def _scalar(d: np.dtype) -> str:
    name: str = _dtype.from_np(d).scalar_name
    return name


def _real_dtype(d: np.dtype) -> np.dtype:
    """The real dtype of a complex one (complex128 -> float64), else ``d``."""
    return np.empty(0, d).real.dtype if d.kind == "c" else d


# -- torch's argument checks -------------------------------------------------------------------

def _check_float(fn: str, data: np.ndarray) -> None:
    if data.dtype.kind not in "fc":
        raise RuntimeError(f"{fn}: Expected a floating point or complex tensor as input. "
                           f"Got {_scalar(data.dtype)}")


def _check_low_precision(fn: str, data: np.ndarray, kernel: str | None = None) -> None:
    """torch's LAPACK-backed ops refuse half precision: by name (``kernel``) or in words."""
    if data.dtype == np.float16:
        if kernel is not None:
            raise NotImplementedError(f"\"{kernel}\" not implemented for '{_scalar(data.dtype)}'")
        raise RuntimeError(f"{fn}: Low precision dtypes not supported. Got {_scalar(data.dtype)}")


def _check_matrix(fn: str, data: np.ndarray, name: str = "A") -> None:
    if data.ndim < 2:
        raise RuntimeError(f"{fn}: The input tensor {name} must have at least 2 dimensions.")


def _check_square(fn: str, data: np.ndarray) -> None:
    _check_matrix(fn, data)
    if data.shape[-1] != data.shape[-2]:
        raise RuntimeError(f"{fn}: A must be batches of square matrices, but they are "
                           f"{data.shape[-2]} by {data.shape[-1]} matrices")


def _batch_prefix(data: np.ndarray, index: int) -> str:
    return f"(Batch element {index}): " if data.ndim > 2 else ""


def _first_failing(data: np.ndarray, test: Any) -> tuple:
    """The first batch element (flat index) whose matrix fails ``test``, and what it returns."""
    flat = data.reshape((-1,) + data.shape[-2:])
    for i, mat in enumerate(flat):
        found = test(mat)
        if found:
            return i, found
    return 0, 0


def _zero_pivot(mat: np.ndarray) -> int:
    """1-based index of the first zero pivot of LU with partial pivoting (LAPACK's getrf), or 0."""
    u = np.array(mat, dtype=np.complex128 if mat.dtype.kind == "c" else np.float64)
    n = u.shape[0]
    for k in range(n):
        p = k + int(np.argmax(np.abs(u[k:, k])))
        if u[p, k] == 0:
            return k + 1
        if p != k:
            u[[k, p]] = u[[p, k]]
        u[k + 1:, k:] -= np.outer(u[k + 1:, k] / u[k, k], u[k, k:])
    return 0


def _not_pd_order(mat: np.ndarray) -> int:
    """Order of the first leading minor that is not positive-definite, or 0."""
    n = mat.shape[0]
    for k in range(1, n + 1):
        try:
            np.linalg.cholesky(mat[:k, :k])
        except np.linalg.LinAlgError:
            return k
    return 0


def _inv_array(fn: str, data: np.ndarray) -> np.ndarray:
    try:
        inverse: np.ndarray = np.linalg.inv(data)
        return inverse
    except np.linalg.LinAlgError:
        i, k = _first_failing(data, _zero_pivot)
        raise _LinAlgError(f"{fn}: {_batch_prefix(data, i)}The diagonal element {k} is zero, "
                           "the inversion could not be completed because the input matrix is "
                           "singular.") from None


def _eye_like(x: Tensor) -> Tensor:
    from .._creation import eye

    identity: Tensor = eye(x._data.shape[-1], dtype=x.dtype)
    return identity


def _diag(x: Tensor) -> Tensor:
    from .shape import diagonal

    return diagonal(x, 0, -2, -1)


def _diag_embed(x: Tensor) -> Tensor:
    from .arrange import diag_embed

    return diag_embed(x)


def _unsq(x: Tensor, *dims: int) -> Tensor:
    from .shape import unsqueeze

    for d in dims:
        x = unsqueeze(x, d)
    return x


def _tril(x: Tensor, diagonal: int = 0) -> Tensor:
    from .arrange import tril

    return tril(x, diagonal)


def _is_complex(x: Tensor) -> bool:
    return bool(x._data.dtype.kind == "c")


def _real_part(x: Tensor) -> Tensor:
    """The real part of a complex tensor (differentiable), ``x`` itself for a real one."""
    return x.real if _is_complex(x) else x


class _LinalgResult(tuple):
    """Base of torch.linalg's named-tuple results (``torch.return_types.linalg_qr``...)."""

    __slots__ = ()
    _fields: tuple = ()

    def __new__(cls, *values: Any) -> Any:
        if len(values) == 1 and len(cls._fields) != 1:  # built from one sequence, as torch allows
            values = tuple(values[0])
        return tuple.__new__(cls, values)

    def __repr__(self) -> str:
        body = ",\n".join(f"{f}={v!r}" for f, v in zip(self._fields, self))
        return f"{_dtype.repr_prefix()}return_types.{type(self).__name__}(\n{body})"


def _result_type(name: str, fields: tuple) -> type:
    ns: dict = {"__slots__": (), "_fields": fields, "n_fields": len(fields),
                "n_sequence_fields": len(fields), "n_unnamed_fields": 0}
    for i, f in enumerate(fields):
        ns[f] = property(lambda self, i=i: self[i])
    cls = type(name, (_LinalgResult,), ns)
    cls.__module__ = "npgrad.return_types"
    cls.__qualname__ = name
    return cls


linalg_slogdet = _result_type("linalg_slogdet", ("sign", "logabsdet"))
slogdet_type = _result_type("slogdet", ("sign", "logabsdet"))
linalg_qr = _result_type("linalg_qr", ("Q", "R"))
linalg_eigh = _result_type("linalg_eigh", ("eigenvalues", "eigenvectors"))
linalg_svd = _result_type("linalg_svd", ("U", "S", "Vh"))


def _c(a: np.ndarray) -> np.ndarray:
    """An output array as the entries record it: C-contiguous (a 0-d array stays 0-d)."""
    return np.asarray(a, order="C")


def _tangent_from_backward(entry: General, inputs: tuple, tangents: tuple, outputs: tuple,
                           values: dict) -> Any:
    """The outputs' tangents as the transpose of ``entry``'s backward rule, applied to the
    inputs' ``tangents`` (Note [Tangents of the decompositions]).  ``values``: what the
    node saves and keeps, by torch's names."""
    mode = _tls.mode
    node: Any = object.__new__(entry.node)
    # a primal recorded with history keeps it in the tangent (forward over reverse)
    node._init_node(tuple(edge_of(x) if mode == RECORDING and x._requires_grad
                          else (FORWARD_EDGE, 0) for x in inputs),
                    tuple((o._data.shape, o._data.dtype) for o in outputs))
    for name, slot in entry.slots.items():
        setattr(node, slot, values[name])
    found = transposed_backward_jvp(node, list(tangents))
    return found[0] if len(found) == 1 else tuple(found)


# -- inv ---------------------------------------------------------------------------------------

# d(A^-1) = -A^-1 dA A^-1: the gradient is -A^-H g A^-H (torch's, from the result alone)
INV_EX = General(
    "linalg_inv(Tensor A, *, Tensor out=None)", grad_fn="LinalgInvExBackward0", forward=None,
    inputs=("A",), results=("inverse",), saves=("inverse",),
    derivatives={"A": lambda grad, inverse: -matmul(inverse.mH, matmul(grad, inverse.mH))},
    tangent=lambda A_t, inverse: -matmul(matmul(inverse, A_t), inverse))
LinalgInvExBackward0 = INV_EX.node


@signature("linalg_inv(Tensor A, *, Tensor out=None)")
def inv(A: Tensor) -> Tensor:
    """Inverse of each square matrix of ``A`` (grad_fn ``LinalgInvExBackward0``).

    >>> import npgrad
    >>> npgrad.linalg.inv(npgrad.tensor([[2., 0.], [0., 4.]]))
    tensor([[0.5000, 0.0000],
            [0.0000, 0.2500]])
    """
    data = A._data
    _check_square("linalg.inv", data)
    _check_float("linalg.inv", data)
    _check_low_precision("linalg.inv", data)
    res: Tensor = INV_EX.record((A,), _c(_inv_array("linalg.inv", data).astype(data.dtype)))
    return res


# -- det / slogdet / logdet ---------------------------------------------------------------------

def _conj_adjugate_t(a: Tensor) -> Tensor:
    """``conj(adj(A)^T) = conj(det(U) det(Vh)) U diag(p) Vh``, ``p_i`` the product of the other
    singular values: what ``det``'s gradient multiplies by, defined for singular matrices too
    (``adj(A)^T`` itself for a real ``A``)."""
    from .reduction import prod

    u, s, vh = svd(a, full_matrices=False)
    eye = _eye_like(s)  # real, as the singular values
    others = prod(_unsq(s, -2) * (1 - eye) + eye, -1)
    signs = np.linalg.det(u._data) * np.linalg.det(vh._data)
    scale = wrap(np.asarray(np.conjugate(signs), dtype=a._data.dtype)[..., None, None],
                 _tls.mode)
    return matmul(u * _unsq(others, -2), vh) * scale


def _det_grad(grad: Tensor, A: Tensor, result: Tensor) -> Tensor:
    """``d det(A) = tr(adj(A) dA)``: the gradient is ``g conj(adj(A)^T)``, which is
    ``g conj(det) A^-H`` for an invertible A, and comes from the SVD when some matrix is
    singular (Note [Where npgrad's linalg differs from torch])."""
    if np.all(result._data != 0):
        return _unsq(grad * conjugate_of(result), -1, -1) * inv(A).mH
    return _unsq(grad, -1, -1) * _conj_adjugate_t(A)


def _trace(x: Tensor) -> Tensor:
    return _diag(x).sum(-1)


def _det_tangent(A_t: Tensor, A: Tensor, result: Tensor) -> Tensor:
    """``det(A) tr(A^-1 dA)``, or ``tr(adj(A) dA)`` when some matrix is singular."""
    if np.all(result._data != 0):
        return result * _trace(solve(A, A_t))
    return (conjugate_of(_conj_adjugate_t(A)) * A_t).sum((-2, -1))


DET = General(
    "linalg_det(Tensor A, *, Tensor out=None)", grad_fn="LinalgDetBackward0", forward=None,
    inputs=("A",), saves=("A", "result"),
    derivatives={"A": lambda grad, A, result: _det_grad(grad, A, result)},
    tangent=lambda A_t, A, result: _det_tangent(A_t, A, result))
LinalgDetBackward0 = DET.node


@signature("linalg_det(Tensor A, *, Tensor out=None)")
def det(A: Tensor) -> Tensor:
    """Determinant of each square matrix of ``A`` (grad_fn ``LinalgDetBackward0``).

    >>> import npgrad
    >>> npgrad.linalg.det(npgrad.tensor([[2., 0.], [0., 3.]]))
    tensor(6.)
    """
    data = A._data
    _check_square("linalg.det", data)
    _check_float("linalg.det", data)
    _check_low_precision("linalg.det", data, "lu_cpu")
    res: Tensor = DET.record((A,), np.asarray(np.linalg.det(data), dtype=data.dtype))
    return res


def _slogdet_weight(grads: tuple, sign: Tensor) -> Any:
    """What multiplies ``A^-H`` in slogdet's gradient: ``g_logabsdet`` for a real A (its sign
    is piecewise constant), and ``g_logabsdet - i Im(conj(g_sign) sign)`` for a complex one,
    whose sign ``det / |det|`` moves with A (Note [Complex decompositions])."""
    g_sign, g_logabsdet = grads
    if not _is_complex(sign) or g_sign is None:
        return g_logabsdet
    phase = (conjugate_of(g_sign) * sign).imag * -1j
    return phase if g_logabsdet is None else g_logabsdet + phase


def _slogdet_grad(grads: tuple, A: Tensor, sign: Tensor) -> Any:
    weight = _slogdet_weight(grads, sign)
    if weight is None:
        return None
    if np.all(sign._data != 0):
        return _unsq(weight, -1, -1) * inv(A).mH
    # a singular matrix: conj(adj(A)^T / det(A)), infinite as torch's (Note [Where npgrad's
    # linalg differs from torch]: the signs of those infinities may differ)
    with np.errstate(divide="ignore", invalid="ignore"):
        return _unsq(weight, -1, -1) * _conj_adjugate_t(A) / _unsq(conjugate_of(det(A)), -1, -1)


def _slogdet_tangent(A_t: Tensor, A: Tensor, sign: Tensor) -> tuple:
    """``t = tr(A^-1 dA)``: ``d logabsdet = Re t``; ``d sign = i Im(t) sign`` (zero when real)."""
    if np.all(sign._data != 0):
        t = _trace(solve(A, A_t))
    else:
        with np.errstate(divide="ignore", invalid="ignore"):
            t = (conjugate_of(_conj_adjugate_t(A)) * A_t).sum((-2, -1)) / det(A)
    if not _is_complex(sign):
        return sign * 0, t
    return sign * (t.imag * 1j), t.real


SLOGDET = General(
    "linalg_slogdet(Tensor A, *, TensorList[2] out=None)", grad_fn="LinalgSlogdetBackward0",
    forward=None, inputs=("A",), outputs=2, results=("sign", "logabsdet"), saves=("A", "sign"),
    derivatives={"A": lambda grads, A, sign: _slogdet_grad(grads, A, sign)},
    tangent=lambda A_t, A, sign: _slogdet_tangent(A_t, A, sign))
LinalgSlogdetBackward0 = SLOGDET.node


def _slogdet(fn: str, A: Tensor, rtype: type) -> Any:
    data = A._data
    _check_square(fn, data)
    _check_float(fn, data)
    _check_low_precision(fn, data)
    with np.errstate(all="ignore"):  # NaN input: torch is silent
        sign, logabs = np.linalg.slogdet(data)
    # torch's sign is the product of its LU diagonal's signs, and a NaN's sign is 0 there
    sign = np.where(np.isnan(logabs), 0, sign)
    s, la = SLOGDET.record((A,), (np.asarray(sign, data.dtype),
                                  np.asarray(logabs, _real_dtype(data.dtype))))
    return rtype(s, la)


@signature("linalg_slogdet(Tensor A, *, TensorList[2] out=None)")
def slogdet(A: Tensor) -> Any:
    """``(sign, logabsdet)`` of each square matrix (grad_fn ``LinalgSlogdetBackward0``).

    >>> import npgrad
    >>> npgrad.linalg.slogdet(npgrad.tensor([[-2., 0.], [0., 1.]])).sign
    tensor(-1.)
    """
    return _slogdet("linalg.slogdet", A, linalg_slogdet)



_F = TypeVar("_F", bound=Callable[..., Any])


def _torch_name(name: str) -> Callable[[_F], _F]:
    """Name the torch-level twin of a linalg function (``torch_slogdet``) as torch does, so
    that vmap finds its batching rule by that name (Note [Batched values] in
    npgrad.func._batched)."""
    def rename(fn: _F) -> _F:
        fn.__name__ = name
        return fn
    return rename


@signature("slogdet(Tensor input, *, TensorList[2] out=None)")
@_torch_name("slogdet")
def torch_slogdet(input: Tensor) -> Any:
    """``torch.slogdet``: as ``linalg.slogdet``, returned as ``torch.return_types.slogdet``."""
    return _slogdet("linalg.slogdet", input, slogdet_type)


@signature("logdet(Tensor input)")
def logdet(input: Tensor) -> Tensor:
    """``log(det(input))``: NaN for a negative determinant (grad_fn ``WhereBackward0``); for a
    complex input ``log(sign) + logabsdet`` (``AddBackward0``).

    >>> import npgrad
    >>> npgrad.logdet(npgrad.tensor([[1., 0.], [0., 1.]]))
    tensor(0.)
    """
    from .pointwise import where

    _check_float("logdet", input._data)
    _check_low_precision("logdet", input._data)
    sign, logabs = _slogdet("linalg.slogdet", input, linalg_slogdet)
    if _is_complex(input):  # log(det) = log(sign) + logabsdet, as torch's composite
        from .pointwise import log

        complex_result: Tensor = log(sign) + logabs
        return complex_result
    result: Tensor = where(sign == -1, float("nan"), logabs)
    return result


# -- solve -------------------------------------------------------------------------------------

def _is_vector_rhs(A: Tensor, X: Tensor) -> bool:
    """torch's test for a right-hand side that is a (batch of) vector(s), read on the solution,
    which has the shape of the broadcast right-hand side."""
    a, x = A._data.shape, X._data.shape
    return len(x) == 1 or (len(x) == len(a) - 1 and x == a[:-1])


def _solve_grad(grad: Tensor, A: Tensor, result: Tensor, left: bool, of_A: bool) -> Tensor:
    """``X = A^-1 B``: ``gB = A^-H g`` and ``gA = -gB X^H`` (``X A = B``: ``gA = -X^H gB``)."""
    x = result
    vector = _is_vector_rhs(A, x)
    if vector:
        grad, x = _unsq(grad, -1), _unsq(x, -1)
    g_b = solve(A.mH, grad, left=left)
    if of_A:
        return -matmul(g_b, x.mH) if left else -matmul(x.mH, g_b)
    return g_b.squeeze(-1) if vector else g_b


def _solve_tangent(A_t: Tensor, B_t: Tensor, A: Tensor, result: Tensor, left: bool) -> Tensor:
    """``dX = A^-1 (dB - dA X)`` (``(dB - X dA) A^-1`` for ``X A = B``)."""
    x = result
    vector = _is_vector_rhs(A, x)
    if vector:
        B_t, x = _unsq(B_t, -1), _unsq(x, -1)
    rhs = B_t - (matmul(A_t, x) if left else matmul(x, A_t))
    dx = solve(A, rhs, left=left)
    return dx.squeeze(-1) if vector else dx


SOLVE_EX = General(
    "linalg_solve(Tensor A, Tensor B, *, bool left=True, Tensor out=None)",
    grad_fn="LinalgSolveExBackward0", forward=None, inputs=("A", "B"), params=("left",),
    keeps=("left",), saves=("A", "result"),
    derivatives={"A": lambda grad, A, result, left: _solve_grad(grad, A, result, left, True),
                 "B": lambda grad, A, result, left: _solve_grad(grad, A, result, left, False)},
    tangent=lambda A_t, B_t, A, result, left: _solve_tangent(A_t, B_t, A, result, left))
LinalgSolveExBackward0 = SOLVE_EX.node


@signature("linalg_solve(Tensor A, Tensor B, *, bool left=True, Tensor out=None)")
def solve(A: Tensor, B: Tensor, *, left: bool = True) -> Tensor:
    """The solution ``X`` of ``A X = B`` (``X A = B`` with ``left=False``), batched and
    broadcast (grad_fn ``LinalgSolveExBackward0``).

    >>> import npgrad
    >>> npgrad.linalg.solve(npgrad.tensor([[2., 0.], [0., 4.]]), npgrad.tensor([2., 2.]))
    tensor([1.0000, 0.5000])
    """
    from ._shape_util import broadcast_shapes

    a, b = A._data, B._data
    _check_square("linalg.solve", a)
    _check_float("linalg.solve", a)
    _check_low_precision("linalg.solve", a, "lu_cpu")
    if a.dtype != b.dtype:
        raise RuntimeError("linalg.solve: Expected A and B to have the same dtype, but found A "
                           f"of type {_scalar(a.dtype)} and B of type {_scalar(b.dtype)} instead")
    vector = b.ndim == 1 or (b.ndim == a.ndim - 1 and b.shape == a.shape[:-1])
    bm = b[..., None] if vector else b
    _check_matrix("linalg.solve", bm, "B")  # a 0-dim B is no vector either
    n = a.shape[-1]
    k = bm.shape[-2] if left else bm.shape[-1]
    if k != n:
        eq = "AX = B" if left else "XA = B"
        raise RuntimeError(f"linalg.solve: Incompatible shapes of A and B for the equation {eq} "
                           f"({a.shape[-2]}x{n} and {bm.shape[-2]}x{bm.shape[-1]})")
    batch = broadcast_shapes(bm.shape[:-2], a.shape[:-2])
    a_b = np.broadcast_to(a, batch + a.shape[-2:])
    b_b = np.broadcast_to(bm, batch + bm.shape[-2:])
    try:
        if left:
            x = np.linalg.solve(a_b, b_b)
        else:
            x = np.swapaxes(np.linalg.solve(np.swapaxes(a_b, -1, -2), np.swapaxes(b_b, -1, -2)),
                            -1, -2)
    except np.linalg.LinAlgError:
        i, _ = _first_failing(np.ascontiguousarray(a_b), _zero_pivot)
        raise _LinAlgError(f"torch.linalg.solve: {_batch_prefix(a_b, i)}The solver failed "
                           "because the input matrix is singular.") from None
    if vector:
        x = x[..., 0]
    res: Tensor = SOLVE_EX.record((A, B), np.ascontiguousarray(x, dtype=a.dtype), (left,))
    return res


# -- solve_triangular / cholesky_solve --------------------------------------------------------

def _triangle(a: Any, upper: bool, unitriangular: bool) -> Any:
    """The triangle of ``a`` a triangular solve reads (its diagonal taken as ones if unit)."""
    if isinstance(a, Tensor):
        from .arrange import triu

        offset = (1 if upper else -1) if unitriangular else 0
        return (triu if upper else _tril)(a, offset)
    part = np.triu(a, 1 if unitriangular else 0) if upper else np.tril(a, -1 if unitriangular
                                                                      else 0)
    if unitriangular:
        part = part + np.eye(a.shape[-1], dtype=a.dtype)
    return part


def _solve_triangular_grad(grad: Tensor, A: Tensor, result: Tensor, upper: bool, left: bool,
                           unitriangular: bool, of_A: bool) -> Tensor:
    """``X = T^-1 B`` for the triangle T of A: ``gB = T^-H g``, ``gA = triangle(-gB X^H)``."""
    g_b = solve_triangular(A.mH, grad, upper=not upper, left=left, unitriangular=unitriangular)
    if not of_A:
        return g_b
    g_a = -matmul(g_b, result.mH) if left else -matmul(result.mH, g_b)
    return _triangle(g_a, upper, unitriangular)  # type: ignore[no-any-return]


def _solve_triangular_tangent(A_t: Tensor, B_t: Tensor, A: Tensor, result: Tensor,
                              upper: bool, left: bool, unitriangular: bool) -> Tensor:
    """``dX = T^-1 (dB - dT X)`` (``(dB - X dT) T^-1`` on the right), dT the triangle of dA."""
    t_t = _triangle(A_t, upper, unitriangular)
    rhs = B_t - (matmul(t_t, result) if left else matmul(result, t_t))
    return solve_triangular(A, rhs, upper=upper, left=left, unitriangular=unitriangular)


SOLVE_TRIANGULAR = General(
    "linalg_solve_triangular(Tensor input, Tensor B, *, bool upper, bool left=True, "
    "bool unitriangular=False, Tensor out=None)", grad_fn="LinalgSolveTriangularBackward0",
    forward=None, inputs=("self", "B"), params=("upper", "left", "unitriangular"),
    keeps=("upper", "left", "unitriangular"), saves=("self", "result"),
    derivatives={"self": lambda grad, self, result, upper, left, unitriangular:
                 _solve_triangular_grad(grad, self, result, upper, left, unitriangular, True),
                 "B": lambda grad, self, result, upper, left, unitriangular:
                 _solve_triangular_grad(grad, self, result, upper, left, unitriangular, False)},
    tangent=lambda self_t, B_t, self, result, upper, left, unitriangular:
    _solve_triangular_tangent(self_t, B_t, self, result, upper, left, unitriangular))
LinalgSolveTriangularBackward0 = SOLVE_TRIANGULAR.node


@signature("linalg_solve_triangular(Tensor input, Tensor B, *, bool upper, bool left=True, "
           "bool unitriangular=False, Tensor out=None)")
def solve_triangular(A: Tensor, B: Tensor, *, upper: bool, left: bool = True,
                     unitriangular: bool = False) -> Tensor:
    """Solve ``A X = B`` (``X A = B`` with ``left=False``) reading only the upper or lower
    triangle of ``A`` (grad_fn ``LinalgSolveTriangularBackward0``).

    >>> import npgrad
    >>> A = npgrad.tensor([[2., 1.], [5., 4.]])
    >>> npgrad.linalg.solve_triangular(A, npgrad.tensor([[3.], [4.]]), upper=True)
    tensor([[1.],
            [1.]])
    """
    from ._shape_util import broadcast_shapes

    a, b = A._data, B._data
    _check_matrix("linalg.solve_triangular", a)
    _check_matrix("linalg.solve_triangular", b, "B")
    _check_square("linalg.solve_triangular", a)
    n = a.shape[-1]
    if (b.shape[-2] if left else b.shape[-1]) != n:
        eq = "AX = B" if left else "XA = B"
        raise RuntimeError("linalg.solve_triangular: Incompatible shapes of A and B for the "
                           f"equation {eq} ({n}x{n} and {b.shape[-2]}x{b.shape[-1]})")
    # the result has A's dtype, B cast to it (torch's kernel is chosen by A's dtype alone)
    rt = a.dtype
    if rt.kind not in "fc" or rt.itemsize == 2:
        raise NotImplementedError(f"\"triangular_solve_cpu\" not implemented for "
                                  f"'{_scalar(rt)}'")
    if b.dtype.kind == "c" and rt.kind != "c":
        import warnings

        from .shape import COMPLEX_TO_REAL_WARNING
        warnings.warn(COMPLEX_TO_REAL_WARNING, UserWarning, stacklevel=3)
        b = b.real
    batch = broadcast_shapes(a.shape[:-2], b.shape[:-2])
    t = np.broadcast_to(_triangle(a, upper, unitriangular), batch + a.shape[-2:])
    bb = np.broadcast_to(b.astype(rt), batch + b.shape[-2:])
    with np.errstate(all="ignore"):
        try:
            if not (np.isfinite(t).all() and np.isfinite(bb).all()):
                # a NaN or inf reaches only the rows substitution carries it to, as in
                # LAPACK's trtrs; a general solve's LU would spread it over all of X
                x = _substitute(t, bb, upper, left)
            elif left:
                x = np.linalg.solve(t, bb)
            else:
                x = np.swapaxes(np.linalg.solve(np.swapaxes(t, -1, -2), np.swapaxes(bb, -1, -2)),
                                -1, -2)
        except np.linalg.LinAlgError:  # a zero on the diagonal: LAPACK's trtrs divides by it
            x = _substitute(t, bb, upper, left)
    res: Tensor = SOLVE_TRIANGULAR.record((A, B), np.ascontiguousarray(x, dtype=rt),
                                          (upper, left, unitriangular))
    return res


def _substitute(t: np.ndarray, b: np.ndarray, upper: bool, left: bool) -> np.ndarray:
    """Back/forward substitution that divides by zero pivots (inf/nan), as LAPACK's trtrs."""
    if not left:  # X T = B  <=>  T^T X^T = B^T
        return np.swapaxes(_substitute(np.swapaxes(t, -1, -2), np.swapaxes(b, -1, -2),
                                       not upper, True), -1, -2)
    n = t.shape[-1]
    x = np.zeros(b.shape, dtype=b.dtype)
    order = range(n - 1, -1, -1) if upper else range(n)
    for i in order:
        done = slice(i + 1, n) if upper else slice(0, i)  # the unknowns already solved
        acc = b[..., i, :] - np.einsum("...j,...jk->...k", t[..., i, done], x[..., done, :])
        x[..., i, :] = acc / t[..., i, i][..., None]
    return x


def _cholesky_solve_factor_grad(grad: Tensor, input2: Tensor, result: Tensor,
                                upper: bool) -> Tensor:
    """``X = (L L^H)^-1 B``: ``gL = -(C + C^H) L`` with ``C = gB X^H`` (``-U (C + C^H)`` for an
    upper factor), as torch's."""
    common = matmul(cholesky_solve(grad, input2, upper), result.mH)
    common = common + common.mH
    return -matmul(input2, common) if upper else -matmul(common, input2)


def _cholesky_solve_tangent(self_t: Tensor, input2_t: Tensor, input2: Tensor, result: Tensor,
                            upper: bool) -> Tensor:
    """``dX = A^-1 (dB - dA X)`` with ``dA = dL L^H + L dL^H`` (``dU^H U + U^H dU``)."""
    if upper:
        d_a = matmul(input2_t.mH, input2) + matmul(input2.mH, input2_t)
    else:
        d_a = matmul(input2_t, input2.mH) + matmul(input2, input2_t.mH)
    return cholesky_solve(self_t - matmul(d_a, result), input2, upper)


CHOLESKY_SOLVE = General(
    "cholesky_solve(Tensor input, Tensor input2, bool upper=False, *, Tensor out=None)",
    grad_fn="CholeskySolveBackward0", forward=None, inputs=("self", "input2"),
    params=("upper",), keeps=("upper",), saves=("self", "input2", "result"),
    # both rules read everything saved (torch's joint formula saves all three for either)
    derivatives={"self": lambda grad, self, input2, result, upper:
                 cholesky_solve(grad, input2, upper),
                 "input2": lambda grad, self, input2, result, upper:
                 _cholesky_solve_factor_grad(grad, input2, result, upper)},
    tangent=lambda self_t, input2_t, input2, result, upper:
    _cholesky_solve_tangent(self_t, input2_t, input2, result, upper))
CholeskySolveBackward0 = CHOLESKY_SOLVE.node


@signature("cholesky_solve(Tensor input, Tensor input2, bool upper=False, *, Tensor out=None)")
def cholesky_solve(input: Tensor, input2: Tensor, upper: bool = False) -> Tensor:
    """Solve ``A X = input`` given the Cholesky factor ``input2`` of ``A`` (lower, or upper
    with ``upper=True``) (grad_fn ``CholeskySolveBackward0``).

    >>> import npgrad
    >>> npgrad.cholesky_solve(npgrad.tensor([[8.], [4.]]), npgrad.tensor([[2., 0.], [0., 1.]]))
    tensor([[2.],
            [4.]])
    """
    from ._shape_util import broadcast_shapes

    b, f = input._data, input2._data
    if b.ndim < 2:
        raise RuntimeError(f"b should have at least 2 dimensions, but has {b.ndim} dimensions "
                           "instead")
    if f.ndim < 2:
        raise RuntimeError(f"u should have at least 2 dimensions, but has {f.ndim} dimensions "
                           "instead")
    if b.dtype != f.dtype:
        raise RuntimeError(f"Expected b and A to have the same dtype, but found b of type "
                           f"{_scalar(b.dtype)} and A of type {_scalar(f.dtype)} instead.")
    if f.shape[-1] != f.shape[-2]:
        raise RuntimeError(f"A must be batches of square matrices, but they are {f.shape[-2]} "
                           f"by {f.shape[-1]} matrices")
    if f.shape[-1] != b.shape[-2]:
        raise RuntimeError(f"Incompatible matrix sizes for cholesky_solve: each A matrix is "
                           f"{f.shape[-1]} by {f.shape[-1]} but each b matrix is {b.shape[-2]} "
                           f"by {b.shape[-1]}")
    if f.dtype.kind not in "fc" or f.dtype == np.float16:
        raise NotImplementedError(f"\"cholesky_solve_cpu\" not implemented for "
                                  f"'{_scalar(f.dtype)}'")
    low = np.swapaxes(np.triu(f), -1, -2).conj() if upper else np.tril(f)
    batch = broadcast_shapes(b.shape[:-2], f.shape[:-2])
    low = np.broadcast_to(low, batch + f.shape[-2:])
    bb = np.broadcast_to(b, batch + b.shape[-2:])
    with np.errstate(all="ignore"):
        y = np.linalg.solve(low, bb)
        x = np.linalg.solve(np.swapaxes(low, -1, -2).conj(), y)
    res: Tensor = CHOLESKY_SOLVE.record((input, input2), np.ascontiguousarray(x, dtype=f.dtype),
                                        (upper,))
    return res


# -- cholesky ----------------------------------------------------------------------------------

def _cholesky_grad(grad: Tensor, L: Tensor, upper: bool) -> Tensor:
    """``A = L L^H``: ``gA = sym(L^-H Phi(L^H gL) L^-1)``, Phi taking the lower triangle with a
    halved diagonal (torch's ``cholesky_backward``)."""
    if upper:
        L, grad = L.mH, grad.mH
    phi = _tril(matmul(L.mH, grad))
    phi = phi - _diag_embed(_diag(phi)) * 0.5
    l_inv = inv(L)
    g_a = matmul(matmul(l_inv.mH, phi), l_inv)
    return (g_a + g_a.mH) * 0.5


def _cholesky_tangent(self_t: Tensor, L: Tensor, upper: bool) -> Tensor:
    """``dL = L Phi(L^-1 dA L^-H)`` (torch's ``cholesky_jvp``; ``dU = dL^H`` for upper)."""
    low = L.mH if upper else L
    d_a = self_t.mH if upper else self_t
    inner = solve_triangular(low, d_a, upper=False)
    inner = solve_triangular(low.mH, inner, upper=True, left=False)
    inner = _tril(inner) - _diag_embed(_diag(inner)) * 0.5
    d_l = matmul(low, inner)
    return d_l.mH if upper else d_l


CHOLESKY_EX = General(
    "linalg_cholesky(Tensor input, *, bool upper=False, Tensor out=None)",
    grad_fn="LinalgCholeskyExBackward0", forward=None, params=("upper",), keeps=("upper",),
    results=("L",), saves=("L",),
    derivatives={"self": lambda grad, L, upper: _cholesky_grad(grad, L, upper)},
    tangent=lambda self_t, L, upper: _cholesky_tangent(self_t, L, upper))
LinalgCholeskyExBackward0 = CHOLESKY_EX.node


def _cholesky_array(fn: str, data: np.ndarray) -> np.ndarray:
    try:
        factor: np.ndarray = np.linalg.cholesky(data)
        return factor
    except np.linalg.LinAlgError:
        i, k = _first_failing(data, _not_pd_order)
        raise _LinAlgError(f"{fn}: {_batch_prefix(data, i)}The factorization could not be "
                           "completed because the input is not positive-definite (the leading "
                           f"minor of order {k} is not positive-definite).") from None


@signature("linalg_cholesky(Tensor input, *, bool upper=False, Tensor out=None)")
def cholesky(A: Tensor, *, upper: bool = False) -> Tensor:
    """Cholesky factor ``L`` (``A = L L^H``), or ``U = L^H`` with ``upper=True``; reads the lower
    triangle (grad_fn ``LinalgCholeskyExBackward0``).

    >>> import npgrad
    >>> npgrad.linalg.cholesky(npgrad.tensor([[4., 2.], [2., 2.]]))
    tensor([[2., 0.],
            [1., 1.]])
    """
    data = A._data
    _check_square("linalg.cholesky", data)
    _check_float("linalg.cholesky", data)
    _check_low_precision("linalg.cholesky", data, "cholesky_cpu")
    return _cholesky(CHOLESKY_EX, A, upper)


def _cholesky(entry: General, A: Tensor, upper: bool, fn: str = "linalg.cholesky") -> Tensor:
    data = A._data
    low = _cholesky_array(fn, data)
    out_arr = np.swapaxes(low, -1, -2).conj() if upper else low
    res: Tensor = entry.record((A,), np.ascontiguousarray(out_arr, dtype=data.dtype), (upper,))
    return res


def _no_cholesky_tangent(self_t: Tensor) -> Tensor:
    raise forward_ad_missing("cholesky")


# The deprecated ``torch.cholesky``'s node: the same rule, and (as torch's) no forward mode
CHOLESKY = General(
    "cholesky(Tensor input, bool upper=False, *, Tensor out=None)", grad_fn="CholeskyBackward0",
    forward=None, params=("upper",), keeps=("upper",), saves=("result",),
    derivatives={"self": lambda grad, result, upper: _cholesky_grad(grad, result, upper)},
    tangent=lambda self_t: _no_cholesky_tangent(self_t))
CholeskyBackward0 = CHOLESKY.node


_CHOLESKY_DEPRECATED = (
    "torch.cholesky is deprecated in favor of torch.linalg.cholesky and will be removed in a "
    "future PyTorch release.\nL = torch.cholesky(A)\nshould be replaced with\n"
    "L = torch.linalg.cholesky(A)\nand\nU = torch.cholesky(A, upper=True)\nshould be replaced "
    "with\nU = torch.linalg.cholesky(A).mH\nThis transform will produce equivalent results for "
    "all valid (symmetric positive definite) inputs.")


@signature("cholesky(Tensor input, bool upper=False, *, Tensor out=None)")
@_torch_name("cholesky")
def torch_cholesky(input: Tensor, upper: bool = False) -> Tensor:
    """The deprecated ``torch.cholesky`` (warns as torch does; grad_fn ``CholeskyBackward0``)."""
    import warnings

    warnings.warn(_CHOLESKY_DEPRECATED, UserWarning, stacklevel=3)  # past the signature check
    data = input._data
    # torch's legacy kernel returns an empty input's empty result before any check, then
    # names itself "cholesky" and dispatches on the dtype (no half, no integers)
    if data.size == 0:
        return CHOLESKY.record((input,), np.zeros(data.shape, data.dtype),  # type: ignore[no-any-return]
                               (upper,))
    _check_square("cholesky", data)
    if data.dtype.kind not in "fc" or data.dtype == np.float16:
        raise NotImplementedError(f"\"cholesky_cpu\" not implemented for '{_scalar(data.dtype)}'")
    return _cholesky(CHOLESKY, input, upper, "cholesky")


# -- qr ----------------------------------------------------------------------------------------

_QR_R_MSG = ("The derivative of linalg.qr depends on Q, which is not computed when mode='r'. "
             "Please use linalg.qr(A, mode='reduced') if you are going to differentiate through "
             "linalg.qr.")
_QR_WIDE_MSG = ("The QR decomposition is not differentiable when mode='complete' and "
                "nrows > ncols.")


def _qr_grad(grads: tuple, Q: Tensor, R: Tensor, mode: str) -> Tensor:
    """Outputs (Q, R).  For m >= n, ``M = R gR^H - gQ^H Q``, ``gA = (gQ + Q copyltu(M)) R^-H``,
    where ``copyltu(M)`` mirrors M's strict lower triangle and keeps the real part of its
    diagonal (Note [Complex decompositions]).  A wide A (m < n) splits as ``[X | Y]`` with
    ``R = [U | V]``: ``X = Q U`` is a square QR, and ``Y = Q V`` only moves ``V = Q^H Y``, so
    ``gY = Q gV`` and X's rule sees ``gQ + Y gV^H``."""
    grad_q, grad_r = grads
    if mode == "r":
        raise RuntimeError(_QR_R_MSG)
    m, n = Q._data.shape[-2], R._data.shape[-1]
    if mode == "complete" and m > n:
        raise RuntimeError(_QR_WIDE_MSG)
    if m >= n:
        return _qr_square_grad(grad_q, grad_r, Q, R)
    from .shape import cat

    U, V = R[..., :m], R[..., m:]
    grad_u = grad_v = None
    if grad_r is not None:
        grad_u, grad_v = grad_r[..., :m], grad_r[..., m:]
        y_part = matmul(matmul(Q, V), grad_v.mH)  # Y gV^H, with Y = Q V
        grad_q = y_part if grad_q is None else grad_q + y_part
    grad_x = _qr_square_grad(grad_q, grad_u, Q, U)
    grad_y = matmul(Q, grad_v) if grad_v is not None else Q.new_zeros(V.shape)
    return cat([grad_x, grad_y], -1)


def _qr_square_grad(grad_q: Any, grad_r: Any, Q: Tensor, R: Tensor) -> Tensor:
    """The m >= n rule of ``_qr_grad``."""
    msym: Any = None
    if grad_r is not None:
        msym = matmul(R, grad_r.mH)
    if grad_q is not None:
        part = -matmul(grad_q.mH, Q)
        msym = part if msym is None else msym + part
    low = _tril(msym, -1)
    copyltu = low + low.mH + _diag_embed(_real_part(_diag(msym)))
    b = matmul(Q, copyltu)
    if grad_q is not None:
        b = grad_q + b
    return matmul(b, inv(R).mH)


QR = General(
    'linalg_qr(Tensor A, c10::string_view mode="reduced", *, TensorList[2] out=None)',
    grad_fn="LinalgQrBackward0", forward=None, inputs=("A",), params=("mode",), keeps=("mode",),
    outputs=2, results=("Q", "R"), saves=("Q", "R"),
    derivatives={"A": lambda grads, Q, R, mode: _qr_grad(grads, Q, R, mode)},
    tangent=lambda A_t, A, Q, R, mode: _tangent_from_backward(
        QR, (A,), (A_t,), (Q, R), {"Q": Q, "R": R, "mode": mode}))
LinalgQrBackward0 = QR.node


@signature('linalg_qr(Tensor A, c10::string_view mode="reduced", *, TensorList[2] out=None)')
def qr(A: Tensor, mode: str = "reduced") -> Any:
    """``(Q, R)`` with ``A = Q R`` (grad_fn ``LinalgQrBackward0``); ``mode`` is 'reduced',
    'complete' or 'r' (Q is then empty).

    >>> import npgrad
    >>> npgrad.linalg.qr(npgrad.eye(2)).R
    tensor([[1., 0.],
            [0., 1.]])
    """
    data = A._data
    if mode not in ("reduced", "complete", "r"):
        raise RuntimeError(f"qr received unrecognized mode '{mode}' but expected one of "
                           "'reduced' (default), 'r', or 'complete'")
    _check_matrix("linalg.qr", data)
    _check_float("linalg.qr", data)
    _check_low_precision("linalg.qr", data, "geqrf_cpu")
    q, r = np.linalg.qr(data, mode="complete" if mode == "complete" else "reduced")
    if mode == "r":
        q = np.zeros((0,), data.dtype)
    tq, tr = QR.record((A,), (_c(q.astype(data.dtype)), _c(r.astype(data.dtype))), (mode,))
    return linalg_qr(tq, tr)


# -- eigh / eigvalsh ---------------------------------------------------------------------------

_EIGH_GAUGE_MSG = ("linalg_eigh_backward: The eigenvectors in the complex case are specified up "
                   "to multiplication by e^{i phi}. The specified loss function depends on this "
                   "quantity, so it is ill-defined.")


def _eigh_grad(grads: tuple, eigenvalues: Tensor, eigenvectors: Tensor) -> Tensor:
    """Outputs (L, V): ``gA = V (diag(gL) + skew(V^H gV) / 2 / E) V^H``, ``E_ij = L_j - L_i``."""
    grad_l, grad_v = grads
    v = eigenvectors
    if grad_v is None:
        return matmul(v * _unsq(grad_l, -2), v.mH)
    vhgv = matmul(v.mH, grad_v)
    if _is_complex(vhgv) and not np.allclose(_diag(vhgv)._data.imag, 0, rtol=1e-2, atol=1e-2):
        raise RuntimeError(_EIGH_GAUGE_MSG)  # Note [Gauge of eigenvectors and singular vectors]
    eye = _eye_like(eigenvalues)
    e = _unsq(eigenvalues, -2) - _unsq(eigenvalues, -1) + eye
    inner = (vhgv - vhgv.mH) * 0.5 / e * (1 - eye)
    if grad_l is not None:
        inner = inner + _diag_embed(grad_l)
    return matmul(matmul(v, inner), v.mH)


def _eigh_tangent(A_t: Tensor, eigenvalues: Tensor, eigenvectors: Tensor) -> tuple:
    """``dP = V^H dA V``: ``dL = Re diag(dP)``, ``dV = V (dP / E)`` off the diagonal."""
    v = eigenvectors
    d_p = matmul(matmul(v.mH, A_t), v)
    eye = _eye_like(eigenvalues)
    e = _unsq(eigenvalues, -2) - _unsq(eigenvalues, -1) + eye
    return _real_part(_diag(d_p)), matmul(v, d_p / e * (1 - eye))


EIGH = General(
    'linalg_eigh(Tensor input, c10::string_view UPLO="L", *, TensorList[2] out=None)',
    grad_fn="LinalgEighBackward0", forward=None, inputs=("A",), outputs=2,
    results=("eigenvalues", "eigenvectors"), saves=("eigenvalues", "eigenvectors"),
    derivatives={"A": lambda grads, eigenvalues, eigenvectors:
                 _eigh_grad(grads, eigenvalues, eigenvectors)},
    tangent=lambda A_t, eigenvalues, eigenvectors: _eigh_tangent(A_t, eigenvalues,
                                                                 eigenvectors))
LinalgEighBackward0 = EIGH.node


def _check_uplo(uplo: str) -> None:
    if uplo not in ("L", "U", "l", "u"):
        raise RuntimeError(f"Expected UPLO argument to be 'L' or 'U', but got {uplo}")


def _eigh(A: Tensor, UPLO: str, vectors: bool = True) -> tuple:
    data = A._data
    _check_uplo(UPLO)
    _check_square("linalg.eigh", data)
    if data.dtype.kind not in "fc" or data.dtype == np.float16:
        raise NotImplementedError(f"\"linalg_eigh_cpu\" not implemented for "
                                  f"'{_scalar(data.dtype)}'")
    try:
        lam, v = np.linalg.eigh(data, UPLO=UPLO.upper())
    except np.linalg.LinAlgError:  # (a NaN or inf input) torch's error, not NumPy's
        i = _first_failing(data, lambda m: not np.isfinite(m).all())[0]
        # LAPACK's info, as torch reports it for a NaN input of n x n: n - 1 computing
        # the vectors, n - 2 for the values alone (smaller matrices do not fail)
        code = data.shape[-1] - (1 if vectors else 2)
        raise _LinAlgError(
            f"linalg.eigh: {_batch_prefix(data, i)}The algorithm failed to converge because "
            "the input matrix is ill-conditioned or has too many repeated eigenvalues "
            f"(error code: {code}).") from None
    outs: tuple = EIGH.record((A,), (_c(lam.astype(_real_dtype(data.dtype))),
                                     _c(v.astype(data.dtype))))
    return outs


@signature('linalg_eigh(Tensor input, c10::string_view UPLO="L", *, TensorList[2] out=None)')
def eigh(A: Tensor, UPLO: str = "L") -> Any:
    """Eigenvalues (ascending) and eigenvectors of symmetric matrices, read from the ``UPLO``
    triangle (grad_fn ``LinalgEighBackward0``); Note [Gauge of eigenvectors and singular vectors].

    >>> import npgrad
    >>> npgrad.linalg.eigh(npgrad.tensor([[2., 0.], [0., 1.]])).eigenvalues
    tensor([1., 2.])
    """
    return linalg_eigh(*_eigh(A, UPLO))


@signature('linalg_eigvalsh(Tensor input, c10::string_view UPLO="L", *, Tensor out=None)')
def eigvalsh(A: Tensor, UPLO: str = "L") -> Tensor:
    """Eigenvalues (ascending) of symmetric matrices (grad_fn ``LinalgEighBackward0``).

    >>> import npgrad
    >>> npgrad.linalg.eigvalsh(npgrad.tensor([[2., 1.], [1., 2.]]))
    tensor([1., 3.])
    """
    values: Tensor = _eigh(A, UPLO, vectors=False)[0]
    return values


# -- svd / svdvals -----------------------------------------------------------------------------

_SVD_GAUGE_MSG = ("svd_backward: The singular vectors in the complex case are specified up to "
                  "multiplication by e^{i phi}. The specified loss function depends on this "
                  "phase term, making it ill-defined.")


def _svd_grad(grads: tuple, U: Tensor, S: Tensor, Vh: Tensor, full_matrices: bool) -> Any:
    """Outputs (U, S, Vh): torch's ``svd_backward`` (Note [Complex decompositions])."""
    g_u, g_s, g_vh = grads
    u, s, vh = U, S, Vh
    k = s._data.shape[-1]
    if full_matrices:  # only the first k singular vectors enter A
        u, vh = u[..., :k], vh[..., :k, :]
        g_u = None if g_u is None else g_u[..., :k]
        g_vh = None if g_vh is None else g_vh[..., :k, :]
    if g_u is None and g_vh is None:
        return matmul(u * _unsq(g_s, -2), vh)
    m, n = u._data.shape[-2], vh._data.shape[-1]
    eye = _eye_like(s)
    uhgu = None if g_u is None else matmul(u.mH, g_u)
    vhgv = None if g_vh is None else matmul(vh, g_vh.mH)
    if _is_complex(u):  # the loss must not depend on the phases of the singular vectors
        im_u = 0 if uhgu is None else _diag(uhgu)._data.imag
        im_v = 0 if vhgv is None else _diag(vhgv)._data.imag
        if not np.allclose(im_u, -np.asarray(im_v), rtol=1e-2, atol=1e-2):
            raise RuntimeError(_SVD_GAUGE_MSG)
    s2 = s * s
    e = _unsq(s2, -2) - _unsq(s2, -1) + eye
    core: Any = None
    if uhgu is not None:
        core = (uhgu - uhgu.mH) * _unsq(s, -2)
    if vhgv is not None:
        part = _unsq(s, -1) * (vhgv - vhgv.mH)
        core = part if core is None else core + part
    core = core / e * (1 - eye)
    if g_s is not None:
        core = core + _diag_embed(g_s)
    if uhgu is not None and _is_complex(uhgu):  # the phase term, i Im(diag(U^H gU)) / S
        core = core + _diag_embed(_diag(uhgu).imag / s * 1j)
    ga = matmul(matmul(u, core), vh)
    if m > k and g_u is not None:
        proj = g_u - matmul(u, uhgu)
        ga = ga + matmul(proj / _unsq(s, -2), vh)
    if n > k and g_vh is not None:
        proj = g_vh - matmul(matmul(g_vh, vh.mH), vh)
        ga = ga + matmul(u, proj / _unsq(s, -1))
    return ga


SVD = General(
    "linalg_svd(Tensor A, bool full_matrices=True, *, c10::string_view? driver=None, "
    "TensorList[3] out=None)", grad_fn="LinalgSvdBackward0", forward=None, inputs=("A",),
    params=("full_matrices", "S_sym_argsize_minus_1"),
    keeps=("full_matrices", "S_sym_argsize_minus_1"), outputs=3, results=("U", "S", "Vh"),
    saves=("U", "S", "Vh"),
    derivatives={"A": lambda grads, U, S, Vh, full_matrices:
                 _svd_grad(grads, U, S, Vh, full_matrices)},
    tangent=lambda A_t, A, U, S, Vh, full_matrices, S_sym_argsize_minus_1:
    _tangent_from_backward(SVD, (A,), (A_t,), (U, S, Vh), {
        "U": U, "S": S, "Vh": Vh, "full_matrices": full_matrices,
        "S_sym_argsize_minus_1": S_sym_argsize_minus_1}))
LinalgSvdBackward0 = SVD.node


def _np_svd(data: np.ndarray, full_matrices: bool = False, compute_uv: bool = True) -> Any:
    """``np.linalg.svd`` with torch's outcome at non-finite inputs: a NaN is refused (LAPACK's
    gesdd reports it), naming the batch element when batched; a matrix holding an infinity
    gives NaNs (LAPACK may never return on it, so it is not called)."""
    nan = np.isnan(data)
    if nan.any():
        where = ""
        if data.ndim > 2:
            first = int(np.argmax(nan.reshape(-1, data.shape[-2] * data.shape[-1]).any(axis=1)))
            where = f"(Batch element {first}): "
        raise _LinAlgError(f"linalg.svd: {where}The algorithm failed to converge because the "
                           "input matrix contained non-finite values.")
    finite = np.isfinite(data).all(axis=(-2, -1))
    if finite.all():
        return np.linalg.svd(data, full_matrices=full_matrices, compute_uv=compute_uv)
    clean = np.where(finite[..., None, None], data, 0)
    out = np.linalg.svd(clean, full_matrices=full_matrices, compute_uv=compute_uv)
    parts = out if compute_uv else (out,)
    parts = tuple(np.where(finite.reshape(finite.shape + (1,) * (p.ndim - finite.ndim)), p,
                           np.nan).astype(p.dtype) for p in parts)
    return parts if compute_uv else parts[0]


def _check_svd(fn: str, data: np.ndarray) -> None:
    _check_matrix(fn, data)
    _check_float(fn, data)
    _check_low_precision(fn, data, "linalg_svd_cpu")


def _svd(A: Tensor, full_matrices: bool) -> tuple:
    data = A._data
    u, s, vh = _np_svd(data, full_matrices=full_matrices)
    arrays = (_c(u.astype(data.dtype)), _c(s.astype(_real_dtype(data.dtype))),
              _c(vh.astype(data.dtype)))
    outs: tuple = SVD.record((A,), arrays, (full_matrices, s.shape[-1]))
    return outs


@signature("linalg_svd(Tensor A, bool full_matrices=True, *, c10::string_view? driver=None, "
           "TensorList[3] out=None)")
def svd(A: Tensor, full_matrices: bool = True, *, driver: Any = None) -> Any:
    """``(U, S, Vh)`` with ``A = U diag(S) Vh`` (grad_fn ``LinalgSvdBackward0``);
    Note [Gauge of eigenvectors and singular vectors].

    >>> import npgrad
    >>> npgrad.linalg.svd(npgrad.tensor([[3., 0.], [0., -4.]])).S
    tensor([4., 3.])
    """
    _check_svd("linalg.svd", A._data)
    return linalg_svd(*_svd(A, full_matrices))


@signature("linalg_svdvals(Tensor A, *, c10::string_view? driver=None, Tensor out=None)")
def svdvals(A: Tensor, *, driver: Any = None) -> Tensor:
    """Singular values, descending (grad_fn ``LinalgSvdBackward0``, whose output 1 they are,
    as torch computes the singular vectors too when a gradient may be asked for).

    >>> import npgrad
    >>> npgrad.linalg.svdvals(npgrad.tensor([[3., 0.], [0., -4.]]))
    tensor([4., 3.])
    """
    from .._forward import FW

    data = A._data
    _check_svd("linalg.svd", data)
    if (_tls.mode == RECORDING and A._requires_grad) or FW.active:
        values: Tensor = _svd(A, False)[1]
        return values
    s = _np_svd(data, compute_uv=False)
    return wrap(_c(s.astype(_real_dtype(data.dtype))), _tls.mode)


svd_type = _result_type("svd", ("U", "S", "V"))
qr_type = _result_type("qr", ("Q", "R"))

_QR_DEPRECATED = (
    "torch.qr is deprecated in favor of torch.linalg.qr and will be removed in a future PyTorch "
    "release.\nThe boolean parameter 'some' has been replaced with a string parameter 'mode'.\n"
    "Q, R = torch.qr(A, some)\nshould be replaced with\n"
    "Q, R = torch.linalg.qr(A, 'reduced' if some else 'complete')")


@signature("svd(Tensor input, bool some=True, bool compute_uv=True, *, "
           "TensorList[3] out=None)")
@_torch_name("svd")
def torch_svd(input: Tensor, some: bool = True, compute_uv: bool = True) -> Any:
    """The older ``torch.svd``: ``(U, S, V)`` with ``V = Vh^H``; without ``compute_uv``, U and
    V are zeros of shape (m, m) and (n, n).

    >>> import npgrad
    >>> npgrad.svd(npgrad.tensor([[3., 0.], [0., -4.]])).S
    tensor([4., 3.])
    """
    if not compute_uv:
        data = input._data
        s = svdvals(input)
        m, n = data.shape[-2:]
        mode = _tls.mode
        return svd_type(wrap(np.zeros(data.shape[:-2] + (m, m), data.dtype), mode), s,
                        wrap(np.zeros(data.shape[:-2] + (n, n), data.dtype), mode))
    u, s, vh = svd(input, full_matrices=not some)
    return svd_type(u, s, vh.mH)


@signature("qr(Tensor input, bool some=True, *, TensorList[2] out=None)")
@_torch_name("qr")
def torch_qr(input: Tensor, some: bool = True) -> Any:
    """The deprecated ``torch.qr`` (warns as torch does): ``linalg.qr`` in mode 'reduced' or
    'complete'."""
    import warnings

    warnings.warn(_QR_DEPRECATED, UserWarning, stacklevel=3)  # past the signature check
    return qr_type(*qr(input, "reduced" if some else "complete"))


# -- pinv --------------------------------------------------------------------------------------

def _pinv_grad(a: Tensor, p: Tensor, grad: Tensor) -> Tensor:
    """Gradient of ``P = pinv(A)`` (constant rank): ``-P^H g P^H + (I - A P) g^H P P^H
    + P^H P g^H (I - P A)``."""
    ph, gh = p.mH, grad.mH
    ga = -matmul(matmul(ph, grad), ph)
    ga = ga + matmul(matmul(_eye_like(p) - matmul(a, p), gh), matmul(p, ph))
    return ga + matmul(matmul(ph, p), matmul(gh, _eye_like(a) - matmul(p, a)))


PINV = General(
    "linalg_pinv(Tensor input, *, Tensor? atol=None, Tensor? rtol=None, bool hermitian=False, "
    "Tensor out=None)", grad_fn="LinalgPinvBackward0", forward=None, saves=("self", "result"),
    derivatives={"self": lambda grad, self, result: _pinv_grad(self, result, grad)},
    tangent=lambda self_t, self, result: _tangent_from_backward(
        PINV, (self,), (self_t,), (result,), {"self": self, "result": result}))
LinalgPinvBackward0 = PINV.node


def _tolerance(s: np.ndarray, shape: tuple, atol: Any, rtol: Any) -> np.ndarray:
    """torch's cut-off for singular values: ``max(atol, rtol * s_max)``."""
    eps = np.finfo(s.dtype).eps
    a = 0.0 if atol is None else (atol._data if isinstance(atol, Tensor) else atol)
    if rtol is None:
        r = eps * max(shape[-2:]) if (atol is None or np.all(np.asarray(a) <= 0)) else 0.0
    else:
        r = rtol._data if isinstance(rtol, Tensor) else rtol
    smax = s[..., :1] if s.shape[-1] else np.zeros(s.shape[:-1] + (1,), s.dtype)
    return np.maximum(np.asarray(a)[..., None] if np.ndim(a) else a,
                      (np.asarray(r)[..., None] if np.ndim(r) else r) * smax)


@signature("linalg_pinv(Tensor input, *, Tensor? atol=None, Tensor? rtol=None, "
           "bool hermitian=False, Tensor out=None)",
           "linalg_pinv(Tensor input, *, double? atol=None, double? rtol=None, "
           "bool hermitian=False, Tensor out=None)",
           "linalg_pinv(Tensor input, Tensor rcond, bool hermitian=False, *, Tensor out=None)",
           "linalg_pinv(Tensor input, double rcond, bool hermitian=False, *, Tensor out=None)")
def pinv(A: Tensor, *, atol: Any = None, rtol: Any = None, hermitian: bool = False) -> Tensor:
    """Moore-Penrose pseudo-inverse, from the SVD (grad_fn ``LinalgPinvBackward0``).

    >>> import npgrad
    >>> npgrad.linalg.pinv(npgrad.tensor([[2., 0.], [0., 0.]]))
    tensor([[0.5000, 0.0000],
            [0.0000, 0.0000]])
    """
    data = A._data
    if data.ndim < 2 or data.dtype.kind not in "fc" or data.dtype == np.float16:
        sizes = ", ".join(map(str, data.shape))
        raise RuntimeError(f"linalg.pinv({_scalar(data.dtype)}"
                           f"{{[{sizes}]}}): expected a tensor with 2 or more dimensions of "
                           "float, double, cfloat or cdouble types")
    u, s, vh = _np_svd(data, full_matrices=False)
    tol = _tolerance(s, data.shape, atol, rtol)
    with np.errstate(divide="ignore"):
        s_inv = np.where(s > tol, 1.0 / np.where(s > tol, s, 1), 0.0)
    p = np.matmul(np.swapaxes(vh, -1, -2).conj() * s_inv[..., None, :],
                  np.swapaxes(u, -1, -2).conj())
    res: Tensor = PINV.record((A,), np.ascontiguousarray(p, dtype=data.dtype))
    return res


@signature("pinverse(Tensor input, double rcond=1e-15)")
def pinverse(input: Tensor, rcond: float = 1e-15) -> Tensor:
    """``torch.pinverse``: ``linalg.pinv`` with ``rtol=rcond``."""
    return pinv(input, rtol=rcond)


# -- lstsq -------------------------------------------------------------------------------------

linalg_lstsq = _result_type("linalg_lstsq", ("solution", "residuals", "rank", "singular_values"))
_LSTSQ_DRIVERS = ("gels", "gelsy", "gelsd", "gelss")


def _lstsq_grad(grads: tuple, A: Tensor, b: Tensor, solution: Tensor, of_A: bool) -> Any:
    """Outputs (solution, residuals).  ``X = pinv(A) B``: ``gB = pinv(A)^H g`` and ``gA`` the
    pinv gradient of ``g B^H``; the residuals ``|A X - B|^2`` are stationary in X, so their
    gradient is ``2 (A X - B) gr X^H`` for A and ``-2 (A X - B) gr`` for B."""
    grad_x, grad_res = grads
    found: Any = None
    if grad_x is not None:
        p = pinv(A)
        found = _pinv_grad(A, p, matmul(grad_x, b.mH)) if of_A else matmul(p.mH, grad_x)
    if grad_res is not None and grad_res._data.size:
        r = (matmul(A, solution) - b) * _unsq(grad_res, -2) * 2
        part = matmul(r, solution.mH) if of_A else -r
        found = part if found is None else found + part
    return found


LSTSQ = General(
    "linalg_lstsq(Tensor input, Tensor b, double? rcond=None, *, c10::string_view? driver=None, "
    "TensorList[4] out=None)", grad_fn="LinalgLstsqBackward0", forward=None,
    inputs=("self", "b"), outputs=2, results=("solution", "residuals"),
    extra=("rank", "singular_values"), saves=("self", "b", "solution"),
    derivatives={"self": lambda grads, self, b, solution: _lstsq_grad(grads, self, b, solution,
                                                                      True),
                 "b": lambda grads, self, b, solution: _lstsq_grad(grads, self, b, solution,
                                                                   False)},
    tangent=lambda self_t, b_t, self, b, solution, residuals: _tangent_from_backward(
        LSTSQ, (self, b), (self_t, b_t), (solution, residuals),
        {"self": self, "b": b, "solution": solution}))
LinalgLstsqBackward0 = LSTSQ.node


@signature("linalg_lstsq(Tensor input, Tensor b, double? rcond=None, *, "
           "c10::string_view? driver=None, TensorList[4] out=None)")
def lstsq(A: Tensor, B: Tensor, rcond: Any = None, *, driver: Any = None) -> Any:
    """Least-squares solution of ``A X = B`` with torch's four outputs per driver
    (grad_fn ``LinalgLstsqBackward0`` on solution and residuals).

    >>> import npgrad
    >>> A = npgrad.tensor([[1., 0.], [0., 1.], [0., 0.]])
    >>> npgrad.linalg.lstsq(A, npgrad.tensor([[1.], [2.], [3.]]), driver="gelsd").residuals
    tensor([9.])
    """
    a, b = A._data, B._data
    if driver is None:
        driver = "gelsy"
    if driver not in _LSTSQ_DRIVERS:
        raise RuntimeError("torch.linalg.lstsq: parameter `driver` should be one of "
                           "(gels, gelsy, gelsd, gelss)")
    if a.dtype.kind not in "fc" or a.dtype == np.float16:
        raise RuntimeError("This function doesn't handle types other than float and double")
    if a.dtype != b.dtype:
        raise RuntimeError("torch.linalg.lstsq: Expected input and other to have the same dtype, "
                           f"but got input's dtype {_scalar(a.dtype)} and other's dtype "
                           f"{_scalar(b.dtype)}")
    if a.ndim < 2:
        raise RuntimeError("torch.linalg.lstsq: input must have at least 2 dimensions.")
    vector = b.ndim == 1 or (b.ndim == a.ndim - 1 and b.shape == a.shape[:-1])
    bm = b[..., None] if vector else b
    if bm.ndim < 2 or bm.shape[-2] != a.shape[-2]:
        raise RuntimeError("torch.linalg.lstsq: input.size(-2) should match other.size(-2)")
    m, n = a.shape[-2:]
    real = _real_dtype(a.dtype)
    batch = np.broadcast_shapes(a.shape[:-2], bm.shape[:-2])
    af = np.broadcast_to(a, batch + a.shape[-2:]).reshape((-1, m, n))
    bf = np.broadcast_to(bm, batch + bm.shape[-2:]).reshape((-1,) + bm.shape[-2:])
    cut = np.finfo(real).eps * max(m, n) if rcond is None else rcond
    sols, ranks, svals = [], [], []
    for am, bmat in zip(af, bf):
        x, _, rank, sv = np.linalg.lstsq(am, bmat, rcond=cut)
        sols.append(x)
        ranks.append(rank)
        svals.append(sv)
    k = bm.shape[-1]
    x = np.asarray(sols, dtype=a.dtype).reshape(batch + (n, k))
    rank_arr = np.asarray(ranks, dtype=np.int64).reshape(batch)
    full_rank = bool(np.all(rank_arr == n))
    if driver != "gelsy" and m > n and full_rank:
        resid = np.sum(np.abs(np.matmul(af, x.reshape((-1, n, k))) - bf) ** 2, axis=-2)
        resid = resid.reshape(batch + (k,)).astype(real)
    else:
        resid = np.zeros((0,), real)
    if vector:  # the residuals keep their column axis, as torch's
        x = x[..., 0]
    rank = np.zeros((0,), np.int64) if driver == "gels" else rank_arr
    sv = (np.asarray(svals, real).reshape(batch + (min(m, n),))
          if driver in ("gelsd", "gelss") else np.zeros((0,), real))
    outs = LSTSQ.record((A, B), (_c(x), _c(resid), _c(rank), _c(sv)))
    return linalg_lstsq(*outs)


# -- norms -------------------------------------------------------------------------------------

def _norm_amax(x: Tensor, dim: int, keepdim: bool = False) -> Tensor:
    """``amax`` of non-negative values; over an empty dim torch's matrix norms give zeros (a
    new tensor, outside the graph) where amax itself refuses."""
    from .reduction import amax

    shape = x._data.shape
    if shape[dim] != 0:
        return amax(x, dim, keepdim=keepdim)  # type: ignore[no-any-return]
    d = dim % len(shape)
    out = shape[:d] + ((1,) if keepdim else ()) + shape[d + 1:]
    return wrap(np.zeros(out, x._data.dtype), 0)


@signature("linalg_matrix_norm(Tensor input, Scalar ord, IntArrayRef dim={-2,-1}, "
           "bool keepdim=False, *, ScalarType? dtype=None, Tensor out=None)",
           'linalg_matrix_norm(Tensor input, c10::string_view ord="fro", '
           "IntArrayRef dim={-2,-1}, bool keepdim=False, *, ScalarType? dtype=None, "
           "Tensor out=None)")
def matrix_norm(A: Tensor, ord: Any = "fro", dim: Any = (-2, -1), keepdim: bool = False, *,
                dtype: Any = None) -> Tensor:
    """Matrix norm over ``dim``: 'fro', 'nuc', inf, -inf, 1, -1, 2, -2, built like torch's
    (grad_fn ``LinalgVectorNormBackward0``, ``SumBackward1``, ``AmaxBackward0``/``AminBackward0``).

    >>> import npgrad
    >>> npgrad.linalg.matrix_norm(npgrad.tensor([[3., 0.], [0., -4.]]), 2)
    tensor(4.)
    """
    from .arrange import movedim
    from .pointwise import abs as abs_
    from .reduction import amin, sum as sum_, vector_norm
    from ._shape_util import wrap_dim

    data = A._data
    _check_matrix("linalg.matrix_norm", data)
    if dtype is not None:
        A = A.to(dtype)
        data = A._data
    _check_float("linalg.matrix_norm", data)
    if ord not in ("fro", "nuc") if isinstance(ord, str) else \
            ord not in (1, -1, 2, -2, float("inf"), float("-inf")):  # torch checks it first
        raise RuntimeError(f"linalg.matrix_norm: Order {ord} not supported.")
    dim = tuple(dim)
    if len(dim) != 2:
        raise RuntimeError(f"linalg.matrix_norm: dim must be a 2-tuple. Got "
                           f"{' '.join(map(str, dim))}")
    d0, d1 = (wrap_dim(int(d), data.ndim) for d in dim)
    if d0 == d1:
        raise RuntimeError(f"linalg.matrix_norm: dims must be different. Got ({d0}, {d1})")
    if ord == "fro":
        return vector_norm(A, 2, (d0, d1), keepdim)
    if ord in ("nuc", 2, -2):
        _check_low_precision("linalg.matrix_norm", data)
        moved = movedim(A, (d0, d1), (-2, -1))
        s = svdvals(moved)
        reduce = sum_ if ord == "nuc" else (_norm_amax if ord == 2 else amin)
        res = reduce(s, -1, keepdim=keepdim)
        if keepdim:  # torch puts the two kept dims back where they were
            res = movedim(_unsq(res, -1), (-2, -1), (d0, d1))
        return res
    pick = _norm_amax if ord > 0 else amin
    summed, other = (d0, d1) if abs(ord) == 1 else (d1, d0)
    if not keepdim and other > summed:
        other -= 1
    return pick(sum_(abs_(A), summed, keepdim=keepdim), other, keepdim=keepdim)


@signature("linalg_cond(Tensor input, Scalar? p=None, *, Tensor out=None)",
           "linalg_cond(Tensor input, c10::string_view p, *, Tensor out=None)")
def cond(A: Tensor, p: Any = None) -> Tensor:
    """Condition number: ``s_max / s_min`` for p None or +-2 (``SqueezeBackward1``), else
    ``norm(A, p) * norm(inv(A), p)`` (infinite for a singular matrix), composed as torch's.

    >>> import npgrad
    >>> npgrad.linalg.cond(npgrad.tensor([[4., 0.], [0., 2.]]))
    tensor(2.)
    """
    from .pointwise import div, where
    from .shape import narrow
    from .special import nan_to_num

    data = A._data
    if data.ndim < 2:
        raise RuntimeError("linalg.cond: The input tensor must have at least 2 dimensions.")
    norm_types = ("fro", "nuc", 1, -1, 2, -2, float("inf"), float("-inf"))
    if p is not None and (p not in norm_types or isinstance(p, bool)):
        raise RuntimeError(f"linalg.cond got an invalid norm type: {p}")
    if data.size == 0 and not isinstance(p, str):
        # torch's zeros for empty input (0 for a 0x0 matrix), no graph; its string norms
        # check squareness first and keep the input's dtype (below)
        return wrap(np.zeros(data.shape[:-2], data.real.dtype), _tls.mode)
    if p is None or (not isinstance(p, str) and abs(p) == 2):
        sv = svdvals(A)
        s_max, s_min = narrow(sv, -1, 0, 1), narrow(sv, -1, sv._data.shape[-1] - 1, 1)
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = div(s_min, s_max) if p == -2 else div(s_max, s_min)
        return ratio.squeeze(-1)
    if data.shape[-1] != data.shape[-2]:
        name = p if isinstance(p, str) else ("inf" if abs(p) == float("inf") and p > 0 else
                                             "-inf" if abs(p) == float("inf") else int(p))
        raise RuntimeError(f"linalg.cond(ord={name}): A must be batches of square matrices, but "
                           f"they are {data.shape[-2]} by {data.shape[-1]} matrices")
    if data.size == 0:
        return wrap(np.zeros(data.shape[:-2], data.dtype), _tls.mode)
    _check_float("linalg.inv", data)
    # torch's nuclear norm of A (an SVD) comes before the inverse and speaks first
    _check_low_precision("linalg.inv", data, "linalg_svd_cpu" if p == "nuc" else None)
    try:  # the common case, no singular matrix, found at LAPACK's speed
        np.linalg.inv(data)
        singular = np.zeros(data.shape[:-2], bool)
    except np.linalg.LinAlgError:
        flat = data.reshape((-1,) + data.shape[-2:])
        singular = np.array([_zero_pivot(mat) > 0 for mat in flat]).reshape(data.shape[:-2])
    if singular.any():  # those get an infinite norm of the inverse (torch fills it with inf)
        mask = wrap(singular[..., None, None], _tls.mode)
        safe = where(mask, _eye_like(A), A)
        inv_norm = where(wrap(singular, _tls.mode), float("inf"),
                         matrix_norm(inv(safe), p))
    else:
        inv_norm = matrix_norm(inv(A), p)
    with np.errstate(invalid="ignore"):
        product = matrix_norm(A, p) * inv_norm
    if p == "nuc":
        return product
    return nan_to_num(product, float("inf"), float("inf"))


@signature("linalg_norm(Tensor input, Scalar? ord=None, IntArrayRef[1]? dim=None, "
           "bool keepdim=False, *, ScalarType? dtype=None, Tensor out=None)",
           "linalg_norm(Tensor input, c10::string_view ord, IntArrayRef[1]? dim=None, "
           "bool keepdim=False, *, ScalarType? dtype=None, Tensor out=None)")
def norm(A: Tensor, ord: Any = None, dim: Any = None, keepdim: bool = False, *,
         dtype: Any = None) -> Tensor:
    """torch.linalg.norm: a vector norm for one dim (or a flattened input), a matrix norm for two.

    >>> import npgrad
    >>> npgrad.linalg.norm(npgrad.tensor([3., 4.]))
    tensor(5.)
    """
    from .reduction import vector_norm

    nd = A._data.ndim
    if dim is not None:
        dims = (dim,) if isinstance(dim, int) else tuple(dim)
        if len(dims) == 1:
            return vector_norm(A, 2 if ord is None else ord, dims, keepdim, dtype=dtype)
        return matrix_norm(A, "fro" if ord is None else ord, dims, keepdim, dtype=dtype)
    if ord is None:
        return vector_norm(A, 2, None, keepdim, dtype=dtype)
    if nd == 2:
        return matrix_norm(A, ord, (-2, -1), keepdim, dtype=dtype)
    if nd == 1 and not isinstance(ord, str):
        return vector_norm(A, ord, None, keepdim, dtype=dtype)
    if isinstance(ord, str) and nd == 1:
        return matrix_norm(A, ord)  # raises torch's error
    raise RuntimeError("linalg.norm: If dim is not specified but ord is, the input must be 1D or "
                       f"2D. Got {nd}D.")


# -- matrix_power / matrix_rank / multi_dot / vecdot -------------------------------------------

@signature("linalg_matrix_power(Tensor input, int64_t n, *, Tensor out=None)")
def matrix_power(A: Tensor, n: int) -> Tensor:
    """``A`` times itself ``n`` times (``inv(A)`` for negative ``n``; identity for 0).

    >>> import npgrad
    >>> npgrad.linalg.matrix_power(npgrad.tensor([[1., 1.], [0., 1.]]), 3)
    tensor([[1., 3.],
            [0., 1.]])
    """
    from .shape import clone

    data = A._data
    _check_square("linalg.matrix_power", data)
    if n == 0:
        # torch writes the identity into a clone of A: the result keeps A's history
        eye = np.broadcast_to(np.eye(data.shape[-1], dtype=data.dtype), data.shape)
        return clone(A).copy_(wrap(np.ascontiguousarray(eye), _tls.mode))
    if n < 0:
        A = inv(A)
        n = -n
    if n == 1:
        return clone(A)
    if n == 3:  # torch's own case (its rounding): (A A) A, not A (A A)
        return matmul(matmul(A, A), A)
    # binary powering, as torch: result = product of the squarings of the set bits
    result = None
    z = A
    while True:
        if n & 1:
            result = z if result is None else matmul(result, z)
        n >>= 1
        if not n:
            return result
        z = matmul(z, z)


@signature("linalg_matrix_rank(Tensor input, *, Tensor? atol=None, Tensor? rtol=None, "
           "bool hermitian=False, Tensor out=None)",
           "linalg_matrix_rank(Tensor input, *, double? atol=None, double? rtol=None, "
           "bool hermitian=False, Tensor out=None)",
           "linalg_matrix_rank(Tensor input, Tensor tol, bool hermitian=False, *, "
           "Tensor out=None)",
           "linalg_matrix_rank(Tensor input, double tol, bool hermitian=False, *, "
           "Tensor out=None)")
def matrix_rank(A: Tensor, *, atol: Any = None, rtol: Any = None,
                hermitian: bool = False) -> Tensor:
    """Number of singular values above ``max(atol, rtol * s_max)`` (int64, no gradient).

    >>> import npgrad
    >>> npgrad.linalg.matrix_rank(npgrad.tensor([[1., 2.], [2., 4.]]))
    tensor(1)
    """
    data = A._data
    if data.ndim < 2:
        raise RuntimeError("torch.linalg.matrix_rank: The input tensor input must have at least "
                           "2 dimensions.")
    if data.dtype.kind not in "fc" or data.dtype == np.float16:
        raise RuntimeError("This function doesn't handle types other than float and double")
    if hermitian:
        s = np.sort(np.abs(np.linalg.eigvalsh(data)), axis=-1)[..., ::-1]
    else:
        s = _np_svd(data, compute_uv=False)
    tol = _tolerance(s, data.shape, atol, rtol)
    return wrap(np.asarray(np.sum(s > tol, axis=-1), dtype=np.int64), _tls.mode)


@signature("linalg_multi_dot(TensorList tensors, *, Tensor out=None)")
def multi_dot(tensors: Any) -> Tensor:
    """Product of a chain of matrices; the first and last may be vectors (grad_fn
    ``ViewBackward0``: torch reshapes the chain's product at the end).

    >>> import npgrad
    >>> npgrad.linalg.multi_dot([npgrad.ones(2), npgrad.ones(2, 3), npgrad.ones(3)])
    tensor(6.)
    """
    from .shape import view

    ts = list(tensors)
    n = len(ts)
    if n < 2:
        raise RuntimeError(f"multi_dot(): expected at least 2 tensors but got {n}")
    first, last = ts[0]._data, ts[-1]._data
    if first.ndim not in (1, 2):
        raise RuntimeError(f"multi_dot(): the first tensor must be 1D or 2D but got "
                           f"{first.ndim}D")
    if last.ndim not in (1, 2):
        raise RuntimeError(f"multi_dot(): the last tensor must be 1D or 2D but got {last.ndim}D")
    for i in range(1, n - 1):
        if ts[i]._data.ndim != 2:
            raise RuntimeError(f"multi_dot(): tensor {i} must be 2D but got "
                               f"{ts[i]._data.ndim}D")
    for i in range(1, n):
        if ts[i]._data.dtype != first.dtype:
            raise RuntimeError(f"multi_dot(): all tensors must have be the same dtype but "
                               f"tensor 0 is {_dtype.from_np(first.dtype).cpp_name} and tensor "
                               f"{i} {_dtype.from_np(ts[i]._data.dtype).cpp_name}")
    mats = list(ts)
    if first.ndim == 1:
        mats[0] = _unsq(mats[0], 0)
    if last.ndim == 1:
        mats[-1] = _unsq(mats[-1], -1)
    for i in range(n - 1):
        if mats[i]._data.shape[1] != mats[i + 1]._data.shape[0]:
            s1, s2 = (", ".join(map(str, t._data.shape)) for t in (ts[i], ts[i + 1]))
            raise RuntimeError(f"multi_dot(): tensors {i} and {i + 1} with shapes [{s1}] and "
                               f"[{s2}] cannot be multiplied")
    res = _chain_product(mats)
    shape = ((first.shape[0],) if first.ndim == 2 else ()) + \
        ((last.shape[1],) if last.ndim == 2 else ())
    return view(res, shape)


# Note [multi_dot's order]
# torch multiplies a chain in its cheapest order (which decides where a NaN or inf spreads,
# and the rounding): three matrices (a x b)(b x c)(c x d) as (AB)C unless its cost
# ``a*c*(b+d)`` exceeds A(BC)'s ``b*d*(a+c)``; longer chains by the classic dynamic program
# over split points (the first of equally cheap splits), multiplied recursively.
def _chain_product(mats: list) -> Tensor:
    n = len(mats)
    if n == 2:
        return matmul(mats[0], mats[1])
    if n == 3:
        a, b = mats[0]._data.shape
        c, d = mats[2]._data.shape
        if a * c * (b + d) > b * d * (a + c):
            return matmul(mats[0], matmul(mats[1], mats[2]))
        return matmul(matmul(mats[0], mats[1]), mats[2])
    p = [m._data.shape[0] for m in mats] + [mats[-1]._data.shape[1]]
    cost = [[0] * n for _ in range(n)]
    split = [[0] * n for _ in range(n)]
    for length in range(1, n):
        for i in range(n - length):
            j = i + length
            cost[i][j] = -1
            for k in range(i, j):
                q = cost[i][k] + cost[k + 1][j] + p[i] * p[k + 1] * p[j + 1]
                if cost[i][j] < 0 or q < cost[i][j]:
                    cost[i][j], split[i][j] = q, k

    def product(i: int, j: int) -> Tensor:
        if i == j:
            return mats[i]  # type: ignore[no-any-return]
        return matmul(product(i, split[i][j]), product(split[i][j] + 1, j))

    return product(0, n - 1)


@signature("linalg_vecdot(Tensor x, Tensor y, *, int64_t dim=-1, Tensor out=None)")
def vecdot(x: Tensor, y: Tensor, *, dim: int = -1) -> Tensor:
    """``sum(x * y, dim)`` (grad_fn ``SumBackward1``).

    >>> import npgrad
    >>> npgrad.linalg.vecdot(npgrad.tensor([1., 2.]), npgrad.tensor([3., 4.]))
    tensor(11.)
    """
    from .reduction import sum as sum_

    _check_float("linalg.vecdot", x._data)
    if x._data.dtype != y._data.dtype:
        raise RuntimeError("linalg.vecdot: Expected x and y to have the same dtype, but found x "
                           f"of type {_scalar(x._data.dtype)} and y of type "
                           f"{_scalar(y._data.dtype)} instead")
    nx, ny = x._data.shape, y._data.shape
    if len(nx) == 1 and len(ny) == 1 and nx != ny:  # torch takes the dot path then
        raise RuntimeError(f"inconsistent tensor size, expected tensor [{nx[0]}] and src "
                           f"[{ny[0]}] to have the same number of elements, but got {nx[0]} "
                           f"and {ny[0]} elements respectively")
    return sum_(x * y, dim)
