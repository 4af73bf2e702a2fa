"""Op-table rows: linear algebra (see tests/op_table.py for what a row is and which checks it gets).

Decompositions with a sign gauge (eigh, svd) are compared through outputs that do not depend on
it (Note [Gauge of eigenvectors and singular vectors] in npgrad/_ops/linalg.py).
Symmetric positive-definite inputs are built inside the row from a random matrix.
"""
from __future__ import annotations

from typing import Any, Callable

from op_table import OpRow


def R(name: str, fn: Callable, inputs: tuple, grad_fn: str | None = None, **kw: Any) -> OpRow:
    return OpRow(name, fn, inputs, "linalg", grad_fn=grad_fn, **kw)


def _spd(m: Any, a: Any) -> Any:
    """A well-conditioned symmetric positive-definite matrix (batch) from ``a``."""
    return a @ a.mT + 3 * m.eye(a.shape[-1], dtype=a.dtype)


def _wc(m: Any, a: Any) -> Any:
    """A well-conditioned (diagonally dominant) square matrix from ``a``."""
    return a + 4 * m.eye(a.shape[-1], dtype=a.dtype)


def _svd_recon(m: Any, a: Any) -> Any:
    u, s, vh = m.linalg.svd(a, full_matrices=False)
    return (u * s.unsqueeze(-2)) @ vh


def _eigh_recon(m: Any, a: Any) -> Any:
    lam, v = m.linalg.eigh(_spd(m, a))
    return (v * lam.unsqueeze(-2)) @ v.mT


def _sep(m: Any, a: Any) -> Any:
    """Singular values / eigenvalues well apart: distinct diagonal entries plus a small random
    part."""
    r, c = a.shape[-2:]
    return m.eye(r, c, dtype=a.dtype) * (m.arange(1, c + 1, dtype=a.dtype) * 2) + 0.3 * a


ROWS: list[OpRow] = [
    R("linalg_inv", lambda m, a: m.linalg.inv(_wc(m, a)), ((3, 3),), "LinalgInvExBackward0"),
    R("linalg_inv_batch", lambda m, a: m.linalg.inv(_wc(m, a)), ((2, 3, 3),),
      "LinalgInvExBackward0"),
    R("inverse", lambda m, a: m.inverse(_wc(m, a)), ((3, 3),), "LinalgInvExBackward0"),
    R("tensor_inverse", lambda m, a: _wc(m, a).inverse(), ((2, 2),), "LinalgInvExBackward0"),
    R("linalg_det", lambda m, a: m.linalg.det(a), ((3, 3),), "LinalgDetBackward0"),
    R("linalg_det_batch", lambda m, a: m.linalg.det(a), ((2, 3, 3),), "LinalgDetBackward0"),
    R("det", lambda m, a: m.det(a), ((2, 2),), "LinalgDetBackward0"),
    R("tensor_det", lambda m, a: a.det(), ((3, 3),), "LinalgDetBackward0"),
    # both outputs enter (torch's tangent of the sign is a ZeroTensor numpy cannot read)
    R("linalg_slogdet", lambda m, a: m.linalg.slogdet(a).sign * m.linalg.slogdet(a).logabsdet,
      ((3, 3),), "MulBackward0"),
    R("linalg_slogdet_logabsdet", lambda m, a: m.linalg.slogdet(a).logabsdet, ((2, 3, 3),),
      "LinalgSlogdetBackward0"),
    R("slogdet", lambda m, a: m.slogdet(a)[1], ((3, 3),), "LinalgSlogdetBackward0"),
    R("logdet", lambda m, a: m.logdet(_spd(m, a)), ((3, 3),), "WhereBackward0"),
    R("tensor_logdet", lambda m, a: _spd(m, a).logdet(), ((2, 3, 3),), "WhereBackward0"),
    R("linalg_solve", lambda m, a, b: m.linalg.solve(_wc(m, a), b), ((3, 3), (3, 2)),
      "LinalgSolveExBackward0"),
    R("linalg_solve_vector", lambda m, a, b: m.linalg.solve(_wc(m, a), b), ((3, 3), (3,)),
      "LinalgSolveExBackward0"),
    R("linalg_solve_batch_vector", lambda m, a, b: m.linalg.solve(_wc(m, a), b),
      ((2, 3, 3), (2, 3)), "LinalgSolveExBackward0"),
    R("linalg_solve_broadcast", lambda m, a, b: m.linalg.solve(_wc(m, a), b),
      ((3, 3), (2, 3, 2)), "LinalgSolveExBackward0"),
    R("linalg_solve_right", lambda m, a, b: m.linalg.solve(_wc(m, a), b, left=False),
      ((3, 3), (2, 3)), "LinalgSolveExBackward0"),
    R("linalg_solve_b_only", lambda m, a, b: m.linalg.solve(_wc(m, a), b), ((3, 3), (3, 2)),
      "LinalgSolveExBackward0", requires_grad=(False, True)),
    R("linalg_cholesky", lambda m, a: m.linalg.cholesky(_spd(m, a)), ((3, 3),),
      "LinalgCholeskyExBackward0"),
    R("linalg_cholesky_upper_batch", lambda m, a: m.linalg.cholesky(_spd(m, a), upper=True),
      ((2, 3, 3),), "LinalgCholeskyExBackward0"),
    R("linalg_qr", lambda m, a: m.linalg.qr(a), ((4, 3),), "LinalgQrBackward0"),
    R("linalg_qr_square_batch", lambda m, a: m.linalg.qr(a), ((2, 3, 3),), "LinalgQrBackward0"),
    R("linalg_qr_r_of_reduced", lambda m, a: m.linalg.qr(a).R, ((3, 2),), "LinalgQrBackward0"),
    R("linalg_qr_complete_square", lambda m, a: m.linalg.qr(a, mode="complete"), ((3, 3),),
      "LinalgQrBackward0"),
    # Note [float32 eigensolvers]: LAPACK builds (OpenBLAS kernels differ per processor) give
    # float32 eigenvalues a few ulps apart (1.2e-6 on values near 10 was seen), so the eigh rows
    # allow four times the usual tolerances (float64: 4e-10, still far above its noise).
    R("linalg_eigvalsh", lambda m, a: m.linalg.eigvalsh(_spd(m, a)), ((3, 3),),
      "LinalgEighBackward0", tol=4),
    R("linalg_eigvalsh_upper_batch", lambda m, a: m.linalg.eigvalsh(_spd(m, a), UPLO="U"),
      ((2, 3, 3),), "LinalgEighBackward0", tol=4),
    R("linalg_eigh_values", lambda m, a: m.linalg.eigh(_spd(m, a)).eigenvalues, ((3, 3),),
      "LinalgEighBackward0", tol=4),
    R("linalg_eigh_abs_vectors", lambda m, a: m.linalg.eigh(_sep(m, a) + _sep(m, a).mT)
      .eigenvectors.abs(), ((3, 3),), "AbsBackward0", tol=4),
    R("linalg_eigh_reconstruct", _eigh_recon, ((3, 3),), tol=4),
    R("linalg_svdvals", lambda m, a: m.linalg.svdvals(_sep(m, a)), ((3, 3),),
      "LinalgSvdBackward0"),
    R("linalg_svdvals_wide_batch", lambda m, a: m.linalg.svdvals(a), ((2, 2, 4),),
      "LinalgSvdBackward0"),
    R("linalg_svd_values", lambda m, a: m.linalg.svd(a).S, ((4, 3),), "LinalgSvdBackward0"),
    R("linalg_svd_reconstruct_tall", lambda m, a: _svd_recon(m, _sep(m, a)), ((4, 3),)),
    R("linalg_svd_reconstruct_wide", lambda m, a: _svd_recon(m, _sep(m, a)), ((3, 4),), tol=10),
    R("linalg_svd_abs_vectors", lambda m, a: m.linalg.svd(_sep(m, a), full_matrices=False)
      .U.abs(), ((4, 3),), "AbsBackward0"),
    R("linalg_svd_abs_vh_wide", lambda m, a: m.linalg.svd(_sep(m, a), full_matrices=False)
      .Vh.abs(), ((2, 4),), "AbsBackward0"),
    R("linalg_pinv", lambda m, a: m.linalg.pinv(a), ((4, 3),), "LinalgPinvBackward0"),
    R("linalg_pinv_wide_batch", lambda m, a: m.linalg.pinv(a), ((2, 2, 3),),
      "LinalgPinvBackward0"),
    R("pinverse", lambda m, a: m.pinverse(a), ((3, 3),), "LinalgPinvBackward0"),
    R("linalg_matrix_norm_fro", lambda m, a: m.linalg.matrix_norm(a), ((2, 3, 4),),
      "LinalgVectorNormBackward0"),
    R("linalg_matrix_norm_nuc", lambda m, a: m.linalg.matrix_norm(_sep(m, a), "nuc"), ((3, 4),),
      "SumBackward1"),
    R("linalg_matrix_norm_2", lambda m, a: m.linalg.matrix_norm(_sep(m, a), 2), ((3, 3),),
      "AmaxBackward0"),
    R("linalg_matrix_norm_m2_keepdim", lambda m, a: m.linalg.matrix_norm(
        _sep(m, a), -2, keepdim=True), ((3, 3),)),
    R("linalg_matrix_norm_1", lambda m, a: m.linalg.matrix_norm(a, 1), ((2, 3, 4),),
      "AmaxBackward0"),
    R("linalg_matrix_norm_m1", lambda m, a: m.linalg.matrix_norm(a, -1), ((3, 4),),
      "AminBackward0"),
    R("linalg_matrix_norm_inf_dim", lambda m, a: m.linalg.matrix_norm(a, float("inf"), dim=(0, 2)),
      ((3, 2, 4),), "AmaxBackward0"),
    R("linalg_matrix_norm_minf_keepdim", lambda m, a: m.linalg.matrix_norm(
        a, float("-inf"), keepdim=True), ((3, 4),), "AminBackward0"),
    R("linalg_norm", lambda m, a: m.linalg.norm(a), ((2, 3, 4),), "LinalgVectorNormBackward0"),
    R("linalg_norm_vector_ord", lambda m, a: m.linalg.norm(a, 3), ((4,),),
      "LinalgVectorNormBackward0"),
    R("linalg_norm_matrix_ord", lambda m, a: m.linalg.norm(a, 1), ((3, 4),), "AmaxBackward0"),
    R("linalg_norm_dim", lambda m, a: m.linalg.norm(a, dim=1), ((3, 4),),
      "LinalgVectorNormBackward0"),
    R("linalg_norm_dims_nuc", lambda m, a: m.linalg.norm(_sep(m, a), "nuc", dim=(0, 1)),
      ((3, 3),), "SumBackward1"),
    R("linalg_matrix_power_3", lambda m, a: m.linalg.matrix_power(a, 3), ((3, 3),),
      "MmBackward0"),
    R("linalg_matrix_power_1", lambda m, a: m.linalg.matrix_power(a, 1), ((3, 3),),
      "CloneBackward0"),
    R("linalg_matrix_power_neg", lambda m, a: m.linalg.matrix_power(_wc(m, a), -2), ((3, 3),),
      "MmBackward0"),
    R("linalg_matrix_power_batch", lambda m, a: m.linalg.matrix_power(a, 2), ((2, 3, 3),)),
    R("linalg_multi_dot", lambda m, a, b, c: m.linalg.multi_dot([a, b, c]),
      ((2, 3), (3, 4), (4, 2)), "ViewBackward0"),
    R("linalg_multi_dot_vectors", lambda m, a, b, c: m.linalg.multi_dot([a, b, c]),
      ((3,), (3, 4), (4,)), "ViewBackward0"),
    R("linalg_vecdot", lambda m, x, y: m.linalg.vecdot(x, y), ((2, 3), (3,)), "SumBackward1"),
    R("linalg_vecdot_dim", lambda m, x, y: m.linalg.vecdot(x, y, dim=0), ((3, 2), (3, 2)),
      "SumBackward1"),
]


def _tri(m: Any, a: Any, upper: bool) -> Any:
    """A well-conditioned triangular matrix: a dominant diagonal, one random half.

    (Masked here, so that cholesky_solve's gradient, which like torch's treats its factor as
    a full matrix, is the derivative; solve_triangular itself reads only the triangle.)
    """
    full = a + 4 * m.eye(a.shape[-1], dtype=a.dtype)
    return full.triu() if upper else full.tril()


ROWS += [
    R("linalg_solve_triangular_upper", lambda m, a, b: m.linalg.solve_triangular(
        a + 4 * m.eye(3, dtype=a.dtype), b, upper=True), ((3, 3), (3, 2)),
      "LinalgSolveTriangularBackward0"),
    R("linalg_solve_triangular_lower_right", lambda m, a, b: m.linalg.solve_triangular(
        _tri(m, a, False), b, upper=False, left=False), ((3, 3), (2, 3)),
      "LinalgSolveTriangularBackward0"),
    R("linalg_solve_triangular_unit_batch", lambda m, a, b: m.linalg.solve_triangular(
        a, b, upper=False, unitriangular=True), ((2, 3, 3), (3, 1)),
      "LinalgSolveTriangularBackward0"),
    R("cholesky_solve", lambda m, b, a: m.cholesky_solve(b, m.linalg.cholesky(_spd(m, a))),
      ((3, 2), (3, 3)), "CholeskySolveBackward0"),
    R("cholesky_solve_upper_batch", lambda m, b, a: m.cholesky_solve(
        b, m.linalg.cholesky(_spd(m, a), upper=True), upper=True), ((2, 3, 1), (3, 3)),
      "CholeskySolveBackward0"),
    R("cholesky_solve_raw_factor", lambda m, b, a: m.cholesky_solve(b, _tri(m, a, False)),
      ((3, 2), (3, 3)), "CholeskySolveBackward0"),
    R("tensor_cholesky_solve", lambda m, b, a: b.cholesky_solve(_tri(m, a, True), upper=True),
      ((3, 2), (3, 3)), "CholeskySolveBackward0"),
]

ROWS += [
    R("linalg_lstsq", lambda m, a, b: m.linalg.lstsq(a, b).solution, ((4, 3), (4, 2)),
      "LinalgLstsqBackward0"),
    R("linalg_lstsq_gelsd_residuals", lambda m, a, b: m.linalg.lstsq(a, b, driver="gelsd")[:2],
      ((5, 3), (5, 2)), "LinalgLstsqBackward0"),
    R("linalg_lstsq_wide_batch", lambda m, a, b: m.linalg.lstsq(a, b).solution,
      ((2, 2, 3), (2, 1)), "LinalgLstsqBackward0"),
    R("linalg_lstsq_square_a_only", lambda m, a, b: m.linalg.lstsq(_wc(m, a), b).solution,
      ((3, 3), (3, 2)), "LinalgLstsqBackward0", requires_grad=(True, False)),
]

# The older torch-level spellings (torch.qr warns that it is deprecated).
ROWS += [
    R("svd_torch_reconstruct", lambda m, a: (lambda u, s, v: (u * s.unsqueeze(-2)) @ v.mT)(
        *m.svd(_sep(m, a))), ((4, 3),)),
    R("svd_torch_values_batch", lambda m, a: a.svd(some=False).S, ((2, 3, 4),),
      "LinalgSvdBackward0"),
    R("svd_torch_abs_v", lambda m, a: m.svd(_sep(m, a)).V.abs(), ((3, 3),), "AbsBackward0"),
    R("svd_torch_no_uv", lambda m, a: m.svd(_sep(m, a), compute_uv=False)[1], ((3, 2),),
      "LinalgSvdBackward0"),
    R("qr_torch", lambda m, a: m.qr(a), ((4, 3),), "LinalgQrBackward0"),
    R("qr_torch_method_square", lambda m, a: a.qr(some=False), ((3, 3),), "LinalgQrBackward0"),
]
# torch.cholesky (CholeskyBackward0) has no forward-mode rule in torch, as in npgrad: it is
# tested in tests/test_linalg.py, since every row here gets the forward-mode checks.

# torch cannot differentiate cond for 'fro' and +-1/+-inf (it writes in place into the inverse
# its backward needs): those rows check npgrad's first-order gradients by finite differences
# only; the 'nuc' row, the same composition, checks the second order against torch.
_COND_NO_TORCH = "torch's cond(p='fro', +-1, +-inf) has no working backward to compare with"
ROWS += [
    R("linalg_cond", lambda m, a: m.linalg.cond(_sep(m, a)), ((3, 3),), "SqueezeBackward1"),
    R("linalg_cond_m2_wide_batch", lambda m, a: m.linalg.cond(_sep(m, a), -2), ((2, 2, 3),),
      "SqueezeBackward1"),
    R("linalg_cond_fro", lambda m, a: m.linalg.cond(_wc(m, a), "fro"), ((3, 3),),
      "NanToNumBackward0", torch_backward=False, no_gradgradcheck=_COND_NO_TORCH),
    R("linalg_cond_nuc", lambda m, a: m.linalg.cond(_sep(m, a), "nuc"), ((3, 3),),
      "MulBackward0"),
    R("linalg_cond_1_batch", lambda m, a: m.linalg.cond(_wc(m, a), 1), ((2, 3, 3),),
      "NanToNumBackward0", torch_backward=False, no_gradgradcheck=_COND_NO_TORCH),
    R("linalg_cond_minf", lambda m, a: m.linalg.cond(_wc(m, a), float("-inf")), ((3, 3),),
      "NanToNumBackward0", torch_backward=False, no_gradgradcheck=_COND_NO_TORCH),
]
