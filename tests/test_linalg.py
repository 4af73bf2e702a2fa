"""torch.linalg: what the op table (tests/op_rows_linalg.py) does not cover.

Error texts and types, named-tuple results and their reprs, non-differentiable results
(matrix_rank, the sign of slogdet), and hand-derived values and gradients that need no torch.
"""
from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest

import npgrad

from torch_oracle import assert_same_error

LA = npgrad.linalg


def _t(rows: Any, **kw: Any) -> Any:
    return npgrad.tensor(rows, dtype=npgrad.float64, **kw)


# -- values and gradients derived by hand ------------------------------------------------------

def test_det_diagonal_and_its_gradient() -> None:
    a = _t([[2.0, 0.0], [0.0, 3.0]], requires_grad=True)
    d = LA.det(a)
    assert d.item() == 6.0
    d.backward()
    # d det(A) / dA = det(A) A^-T
    np.testing.assert_allclose(a.grad.numpy(), 6.0 * np.array([[0.5, 0.0], [0.0, 1 / 3]]))


def test_inv_solve_and_logdet_by_hand() -> None:
    a = _t([[4.0, 0.0], [0.0, 2.0]])
    np.testing.assert_allclose(LA.inv(a).numpy(), [[0.25, 0.0], [0.0, 0.5]])
    np.testing.assert_allclose(LA.solve(a, _t([4.0, 4.0])).numpy(), [1.0, 2.0])
    np.testing.assert_allclose(LA.solve(a, _t([[4.0, 4.0]]), left=False).numpy(), [[1.0, 2.0]])
    np.testing.assert_allclose(npgrad.logdet(a).item(), np.log(8.0))
    assert npgrad.logdet(_t([[-1.0, 0.0], [0.0, 1.0]])).isnan().item()


def test_inv_gradient_is_minus_inverse_transpose_products() -> None:
    a = _t([[2.0, 1.0], [0.0, 1.0]], requires_grad=True)
    LA.inv(a).sum().backward()
    ai = np.linalg.inv(a.detach().numpy())
    np.testing.assert_allclose(a.grad.numpy(), -ai.T @ np.ones((2, 2)) @ ai.T)


def test_slogdet_sign_and_gradient() -> None:
    a = _t([[-2.0, 0.0], [0.0, 3.0]], requires_grad=True)
    sign, logabsdet = LA.slogdet(a)
    assert sign.item() == -1.0
    np.testing.assert_allclose(logabsdet.item(), np.log(6.0))
    logabsdet.backward()
    np.testing.assert_allclose(a.grad.numpy(), [[-0.5, 0.0], [0.0, 1 / 3]])


def test_cholesky_eigh_svd_reconstruct() -> None:
    rng = np.random.default_rng(0)
    m = rng.standard_normal((2, 3, 3))
    spd = m @ np.swapaxes(m, -1, -2) + 3 * np.eye(3)
    low = LA.cholesky(_t(spd)).numpy()
    np.testing.assert_allclose(low @ np.swapaxes(low, -1, -2), spd)
    assert np.allclose(np.triu(low[0], 1), 0)
    up = LA.cholesky(_t(spd), upper=True).numpy()
    np.testing.assert_allclose(up, np.swapaxes(low, -1, -2))
    lam, v = LA.eigh(_t(spd))
    np.testing.assert_allclose((v.numpy() * lam.numpy()[..., None, :]) @ np.swapaxes(
        v.numpy(), -1, -2), spd)
    np.testing.assert_allclose(LA.eigvalsh(_t(spd)).numpy(), lam.numpy())
    u, s, vh = LA.svd(_t(m[0, :, :2]), full_matrices=False)
    np.testing.assert_allclose((u.numpy() * s.numpy()) @ vh.numpy(), m[0, :, :2])
    assert LA.svd(_t(m[0, :, :2])).U.shape == (3, 3)
    np.testing.assert_allclose(LA.svdvals(_t(m)).numpy(), np.linalg.svd(m, compute_uv=False))


def test_qr_modes() -> None:
    a = _t(np.arange(12.0).reshape(4, 3) ** 1.5)
    q, r = LA.qr(a)
    assert q.shape == (4, 3) and r.shape == (3, 3)
    np.testing.assert_allclose((q @ r).numpy(), a.numpy(), atol=1e-12)
    q, r = LA.qr(a, mode="complete")
    assert q.shape == (4, 4) and r.shape == (4, 3)
    q, r = LA.qr(a, mode="r")
    assert q.shape == (0,) and r.shape == (3, 3)


def test_norms_by_hand() -> None:
    a = _t([[1.0, -2.0], [3.0, 4.0]])
    assert LA.matrix_norm(a, 1).item() == 6.0
    assert LA.matrix_norm(a, -1).item() == 4.0
    assert LA.matrix_norm(a, float("inf")).item() == 7.0
    assert LA.matrix_norm(a, float("-inf")).item() == 3.0
    np.testing.assert_allclose(LA.matrix_norm(a).item(), np.sqrt(30.0))
    s = np.linalg.svd(a.numpy(), compute_uv=False)
    np.testing.assert_allclose(LA.matrix_norm(a, "nuc").item(), s.sum())
    np.testing.assert_allclose(LA.matrix_norm(a, 2).item(), s[0])
    np.testing.assert_allclose(LA.matrix_norm(a, -2).item(), s[1])
    assert LA.matrix_norm(a, keepdim=True).shape == (1, 1)
    assert LA.norm(_t([3.0, -4.0])).item() == 5.0
    assert LA.norm(_t([3.0, -4.0]), float("inf")).item() == 4.0
    assert LA.norm(a, 1).item() == 6.0


def test_matrix_power_rank_pinv_multi_dot_vecdot() -> None:
    a = _t([[1.0, 1.0], [0.0, 1.0]])
    np.testing.assert_allclose(LA.matrix_power(a, 5).numpy(), [[1.0, 5.0], [0.0, 1.0]])
    np.testing.assert_allclose(LA.matrix_power(a, -3).numpy(), [[1.0, -3.0], [0.0, 1.0]])
    np.testing.assert_allclose(LA.matrix_power(a, 0).numpy(), np.eye(2))
    rank = LA.matrix_rank(_t([[1.0, 2.0], [2.0, 4.0]]))
    assert rank.item() == 1 and rank.dtype == npgrad.int64
    assert LA.matrix_rank(_t(np.eye(3)[None].repeat(2, 0))).tolist() == [3, 3]
    np.testing.assert_allclose(LA.pinv(_t([[2.0, 0.0], [0.0, 0.0]])).numpy(),
                               [[0.5, 0.0], [0.0, 0.0]])
    vec = LA.multi_dot([_t([1.0, 2.0]), _t(np.eye(2)), _t([3.0, 4.0])])
    assert vec.shape == () and vec.item() == 11.0
    assert LA.vecdot(_t([[1.0, 2.0]]), _t([3.0, 4.0])).tolist() == [11.0]


def test_second_order_det() -> None:
    # d/dA of tr(grad det) for 2x2: det(A) = ad - bc is quadratic, its Hessian constant
    a = _t([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    (g,) = npgrad.autograd.grad(LA.det(a), a, create_graph=True)
    np.testing.assert_allclose(g.detach().numpy(), [[4.0, -3.0], [-2.0, 1.0]])
    (h,) = npgrad.autograd.grad(g[0, 0], a)
    np.testing.assert_allclose(h.numpy(), [[0.0, 0.0], [0.0, 1.0]], atol=1e-12)


def test_no_grad_records_nothing() -> None:
    a = _t([[2.0, 1.0], [1.0, 2.0]], requires_grad=True)
    with npgrad.no_grad():
        for out in (LA.inv(a), LA.det(a), *LA.slogdet(a), *LA.eigh(a), *LA.svd(a), *LA.qr(a)):
            assert out.grad_fn is None and not out.requires_grad


def test_named_tuples() -> None:
    a = _t([[2.0, 1.0], [1.0, 2.0]])
    res = LA.slogdet(a)
    assert type(res).__name__ == "linalg_slogdet" and res.sign is res[0]
    assert type(npgrad.slogdet(a)).__name__ == "slogdet"
    assert repr(res) == (f"npgrad.return_types.linalg_slogdet(\nsign={res.sign!r},\n"
                         f"logabsdet={res.logabsdet!r})")
    assert LA.qr(a)._fields == ("Q", "R")
    lam, v = res2 = LA.eigh(a)
    assert res2.eigenvalues is lam and res2.eigenvectors is v
    u, s, vh = res3 = LA.svd(a)
    assert (res3.U, res3.S, res3.Vh) == (u, s, vh)
    assert type(LA.qr(a)).__module__ == "npgrad.return_types"


def test_linalg_error_is_a_runtime_error() -> None:
    assert issubclass(LA.LinAlgError, RuntimeError)
    with pytest.raises(LA.LinAlgError, match="input matrix is singular"):
        LA.inv(_t([[1.0, 2.0], [2.0, 4.0]]))
    with pytest.raises(RuntimeError, match="leading minor of order 2"):
        LA.cholesky(_t([[1.0, 2.0], [2.0, 1.0]]))


def test_methods_and_torch_level_functions() -> None:
    a = _t([[2.0, 1.0], [1.0, 3.0]], requires_grad=True)
    assert a.inverse().grad_fn.name() == "LinalgInvExBackward0"
    assert npgrad.inverse(a).grad_fn.name() == "LinalgInvExBackward0"
    assert a.det().item() == pytest.approx(5.0)
    assert npgrad.det(a).item() == pytest.approx(5.0)
    assert a.logdet().item() == pytest.approx(np.log(5.0))
    assert a.slogdet().logabsdet.item() == pytest.approx(np.log(5.0))
    assert a.pinverse().grad_fn.name() == "LinalgPinvBackward0"
    assert a.matrix_power(2).grad_fn.name() == "MmBackward0"
    assert npgrad.matrix_power(a, 2).grad_fn.name() == "MmBackward0"


# -- against torch -------------------------------------------------------------------------

def _env(m: Any) -> dict:
    f = m.float32
    return {
        "L": m.linalg, "m": m,
        "sing": m.tensor([[1.0, 2.0], [2.0, 4.0]]),
        "sing3": m.tensor([[1.0, 0, 0], [0, 1, 0], [0, 0, 0.0]]),
        "npd": m.tensor([[1.0, 2.0], [2.0, 1.0]]),
        "eye": m.eye(2, dtype=f), "ones23": m.ones(2, 3), "ones3": m.ones(3),
        "ints": m.ones(2, 2, dtype=m.int64), "half": m.eye(2, dtype=m.float16),
    }


LINALG_ERRORS = [
    "L.inv(ones23)", "L.inv(ones3)", "L.inv(ints)", "L.inv(half)",
    "L.det(ones23)", "L.det(ints)", "L.det(ones3)", "m.det(ones23)", "L.det(half)",
    "L.slogdet(ones23)", "L.slogdet(ints)", "m.logdet(ints)", "m.logdet(half)",
    "L.solve(eye.expand(3, 2, 2), m.ones(2, 2, 2))", "L.solve(eye, m.ones(3))",
    "L.solve(eye, m.ones(3, 1))", "L.solve(eye, m.ones(2, dtype=m.float64))",
    "L.solve(ints, ints[0])", "L.solve(ones23, m.ones(2))",
    "L.solve(eye, m.ones(2, 3), left=False)",
    "L.cholesky(ones23)", "L.cholesky(ints)", "L.cholesky(half)",
    "L.qr(eye, mode='foo')", "L.qr(ones3)", "L.qr(ints)", "L.qr(half)",
    "L.eigh(eye, UPLO='X')", "L.eigh(ones23)", "L.eigh(ints)", "L.eigvalsh(ones23)",
    "L.eigvalsh(half)", "L.svd(ones3)", "L.svd(ints)", "L.svdvals(ints)", "L.svd(half)",
    "L.pinv(ints)", "L.pinv(ones3)", "L.pinv(half)",
    "L.matrix_norm(eye, 3)", "L.matrix_norm(eye, 'foo')", "L.matrix_norm(ones3)",
    "L.matrix_norm(ints)", "L.matrix_norm(ints, 'nuc')", "L.matrix_norm(half, 'nuc')",
    "L.matrix_norm(eye, dim=(0, 0))", "L.matrix_norm(eye, dim=(0, 1, 2))",
    "L.norm(ones3, 'fro')", "L.norm(m.ones(2, 2, 2), 2)", "L.norm(ints[0])",
    "L.matrix_power(ones23, 2)", "L.matrix_power(ones3, 2)", "L.matrix_power(ints, -1)",
    "L.matrix_rank(ints)", "L.matrix_rank(ones3)",
    "L.multi_dot([eye])", "L.multi_dot([])", "L.multi_dot([eye, m.ones(2, 2, 2)])",
    "L.multi_dot([m.ones(2, 2, 2), eye])", "L.multi_dot([ones23, eye])",
    "L.multi_dot([eye, m.ones(2, dtype=m.float64)])", "L.multi_dot([ones3, eye])",
    "L.multi_dot([eye, ones3, eye])",
    "L.vecdot(ones3, m.ones(3, dtype=m.float64))", "L.vecdot(ones3, m.ones(2))",
    "L.vecdot(ints, ints)", "L.vecdot(m.ones(2, 2), m.ones(2, 3))",
]


@pytest.mark.parametrize("expr", LINALG_ERRORS)
def test_errors_match_torch(expr: str) -> None:
    assert_same_error(expr, _env)


SINGULAR = [
    "L.inv(sing)", "L.inv(sing3)", "L.inv(m.stack([eye, sing]))", "m.inverse(sing)",
    "L.matrix_power(sing, -1)", "L.solve(sing, m.ones(2))",
    "L.solve(m.stack([eye, sing]), m.ones(2, 2))", "L.cholesky(npd)",
    "L.cholesky(m.stack([eye, npd]))", "L.cholesky(npd, upper=True)",
]


@pytest.mark.parametrize("expr", SINGULAR)
def test_linalg_errors_match_torch(expr: str) -> None:
    """torch raises ``torch._C._LinAlgError`` (a RuntimeError): same name, base and text."""
    torch = pytest.importorskip("torch")
    caught = []
    for m in (npgrad, torch):
        with pytest.raises(RuntimeError) as info:
            eval(expr, {}, _env(m))
        caught.append(info.value)
    mine, theirs = caught
    assert type(mine).__name__ == type(theirs).__name__ == "_LinAlgError"
    assert isinstance(mine, npgrad.linalg.LinAlgError)
    assert str(mine) == str(theirs)


VALUES = [
    ("rank", lambda m, a: m.linalg.matrix_rank(a)),
    ("rank_batch", lambda m, a: m.linalg.matrix_rank(m.stack([a, a * 0, a[:, :1] * a[:1]]))),
    ("rank_hermitian", lambda m, a: m.linalg.matrix_rank(a @ a.mT, hermitian=True)),
    ("rank_atol", lambda m, a: m.linalg.matrix_rank(a, atol=1.0)),
    ("rank_rtol", lambda m, a: m.linalg.matrix_rank(a, rtol=0.5)),
    ("pinv_atol", lambda m, a: m.linalg.pinv(a, atol=1.0)),
    ("pinv_singular", lambda m, a: m.linalg.pinv(a[:, :1] * a[:1])),
    ("slogdet_sign", lambda m, a: m.linalg.slogdet(a).sign),
    ("slogdet_batch", lambda m, a: m.linalg.slogdet(m.stack([a, -a, a.mT]))[1]),
    ("logdet_negative", lambda m, a: m.logdet(m.diag(m.tensor([-1.0, 2.0, 3.0],
                                                                dtype=a.dtype)))),
    ("det_empty", lambda m, a: m.linalg.det(a[:0, :0])),
    ("inv_batch", lambda m, a: m.linalg.inv(m.stack([a, a.mT]) + 5 * m.eye(3, dtype=a.dtype))),
    ("svd_full_shapes", lambda m, a: m.linalg.svd(a[:, :2]).S),
    ("qr_r", lambda m, a: m.linalg.qr(a, mode="r").R.abs()),
    ("qr_wide_r", lambda m, a: m.linalg.qr(a[:2]).R.abs()),
    ("norm_dtype", lambda m, a: m.linalg.norm(a, dtype=m.float64)),
    ("matrix_norm_dtype", lambda m, a: m.linalg.matrix_norm(a, 1, dtype=m.float64)),
    ("matrix_power_0", lambda m, a: m.linalg.matrix_power(a, 0)),
    ("matrix_power_int", lambda m, a: m.linalg.matrix_power(m.ones(2, 2, dtype=m.int64), 3)),
    ("matrix_norm_half", lambda m, a: m.linalg.matrix_norm(a.half(), 1)),
]


@pytest.mark.parametrize("name,fn", VALUES, ids=[v[0] for v in VALUES])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_values_match_torch(name: str, fn: Any, dtype: str) -> None:
    torch = pytest.importorskip("torch")
    a = np.random.default_rng(3).standard_normal((3, 3))
    outs = []
    for m in (npgrad, torch):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            r = fn(m, m.tensor(a, dtype=getattr(m, dtype)))
        outs.append(r)
    mine, theirs = outs
    assert str(mine.dtype).split(".")[1] == str(theirs.dtype).split(".")[1]
    assert tuple(mine.shape) == tuple(theirs.shape)
    tol = 1e-4 if dtype == "float32" or mine.dtype == npgrad.float16 else 1e-10
    np.testing.assert_allclose(mine.numpy().astype(np.float64),
                               theirs.numpy().astype(np.float64), rtol=tol, atol=tol)


@pytest.mark.parametrize("expr", [
    "L.matrix_power(a, 0).grad_fn.name()", "L.matrix_power(a, 1).grad_fn.name()",
    "type(L.qr(a)).__name__", "type(L.eigh(a)).__name__", "type(L.svd(a)).__name__",
    "type(m.slogdet(a)).__name__", "L.eigh(a)._fields if hasattr(L.eigh(a), '_fields') else 0",
    "[t.grad_fn.name() for t in L.svd(a)]", "[t.grad_fn.name() for t in L.slogdet(a)]",
    "L.matrix_norm(a, -2, keepdim=True).grad_fn.name()", "L.multi_dot([a, a]).grad_fn.name()",
])
def test_metadata_matches_torch(expr: str) -> None:
    torch = pytest.importorskip("torch")
    got = []
    for m in (npgrad, torch):
        a = m.tensor([[2.0, 1.0], [1.0, 3.0]], requires_grad=True)
        got.append(eval(expr, {}, {"L": m.linalg, "m": m, "a": a}))
    if "_fields" in expr:  # torch's structseq has no _fields; npgrad's names match its fields
        got[1] = got[0]
    assert got[0] == got[1]


def test_qr_mode_r_backward_error() -> None:
    torch = pytest.importorskip("torch")
    msgs = []
    for m in (npgrad, torch):
        a = m.ones(3, 2, dtype=m.float64, requires_grad=True)
        with pytest.raises(RuntimeError) as info:
            m.linalg.qr(a, mode="r").R.sum().backward()
        msgs.append(str(info.value))
    assert msgs[0] == msgs[1]


# -- solve_triangular, cholesky_solve, lstsq ---------------------------------------------------

def _env2(m: Any) -> dict:
    env = _env(m)
    env.update(A=m.tensor([[2.0, 1.0, 0.0], [0.0, 3.0, 1.0], [1.0, 0.0, 4.0]]),
               B=m.ones(3, 2))
    return env


MORE_ERRORS = [
    "L.solve_triangular(A, m.ones(3), upper=True)", "L.solve_triangular(ones3, B, upper=True)",
    "L.solve_triangular(A, m.ones(2, 2), upper=True)",
    "L.solve_triangular(A, m.ones(2, 2), upper=True, left=False)",
    "L.solve_triangular(A.long(), B.long(), upper=True)",
    "L.solve_triangular(ones23, B, upper=True)",
    "m.cholesky_solve(ones3, A)", "m.cholesky_solve(m.ones(2, 2), A)",
    "m.cholesky_solve(B.long(), A.long())", "m.cholesky_solve(B.double(), A)",
    "m.cholesky_solve(B, m.ones(3, 2))",
    "L.lstsq(A, B, driver='foo')", "L.lstsq(A.long(), B.long())", "L.lstsq(A, m.ones(2, 2))",
    "L.lstsq(A, B.double())", "L.lstsq(ones3, B)",
]


@pytest.mark.parametrize("expr", MORE_ERRORS)
def test_more_errors_match_torch(expr: str) -> None:
    assert_same_error(expr, _env2)


LSTSQ = [
    "L.lstsq(m.tensor([[1., 0], [0, 1], [1, 1]], dtype=m.float64), "
    "m.tensor([1., 2, 4], dtype=m.float64), driver=d)",
    "L.lstsq(m.ones(3, 2, dtype=m.float64), m.ones(3, 2, dtype=m.float64), driver=d)",
    "L.lstsq(m.arange(24.).reshape(2, 4, 3).sin() + m.eye(4, 3), "
    "m.arange(16.).reshape(2, 4, 2).cos(), driver=d)",
    "L.lstsq(m.arange(6.).reshape(2, 3).exp(), m.ones(2, 1), driver=d)",
]


@pytest.mark.parametrize("expr", LSTSQ)
@pytest.mark.parametrize("driver", [None, "gels", "gelsy", "gelsd", "gelss"])
def test_lstsq_outputs_match_torch(expr: str, driver: Any) -> None:
    torch = pytest.importorskip("torch")
    if driver == "gels" and ("ones(3, 2" in expr or "reshape(2, 3)" in expr):
        pytest.skip("gels assumes a full-rank tall input: otherwise its result is LAPACK's")
    got = []
    for m in (npgrad, torch):
        got.append(eval(expr, {}, {"L": m.linalg, "m": m, "d": driver}))
    mine, theirs = got
    assert type(mine).__name__ == type(theirs).__name__ == "linalg_lstsq"
    for a, b in zip(mine, theirs):
        assert tuple(a.shape) == tuple(b.shape)
        assert str(a.dtype).split(".")[1] == str(b.dtype).split(".")[1]
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-5, atol=1e-5)


def test_lstsq_residuals_by_hand() -> None:
    a = _t([[1.0, 0.0], [0.0, 1.0], [0.0, 0.0]])
    res = LA.lstsq(a, _t([[1.0], [2.0], [3.0]]), driver="gelsd")
    assert res.solution.tolist() == [[1.0], [2.0]]
    assert res.residuals.tolist() == [9.0] and res.rank.item() == 2


def test_solve_triangular_reads_one_triangle() -> None:
    a = _t([[2.0, 1.0], [99.0, 4.0]])
    x = LA.solve_triangular(a, _t([[3.0], [4.0]]), upper=True)
    assert x.tolist() == [[1.0], [1.0]]
    x = LA.solve_triangular(a, _t([[3.0], [4.0]]), upper=True, unitriangular=True)
    assert x.tolist() == [[-1.0], [4.0]]


def test_cholesky_solve_factor_gradient_matches_torch() -> None:
    """torch differentiates the factor as a full matrix (entries it never reads get gradient)."""
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(1)
    f = np.tril(rng.standard_normal((3, 3))) + 3 * np.eye(3) + np.triu(np.ones((3, 3)), 1)
    b = rng.standard_normal((3, 2))
    grads = []
    for m in (npgrad, torch):
        ft = m.tensor(f, requires_grad=True)
        m.cholesky_solve(m.tensor(b), ft).sum().backward()
        grads.append(ft.grad.numpy())
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-10, atol=1e-10)


def test_det_gradient_of_a_singular_matrix_is_the_adjugate() -> None:
    """torch gives the adjugate under create_graph (and zeros, from its LU solve, without)."""
    a = _t([[1.0, 2.0], [2.0, 4.0]], requires_grad=True)
    (g,) = npgrad.autograd.grad(LA.det(a), a, create_graph=True)
    np.testing.assert_allclose(g.detach().numpy(), [[4.0, -2.0], [-2.0, 1.0]], atol=1e-12)
    rank2 = [[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [0.0, 1.0, 1.0]]
    b = _t(np.stack([rank2, np.diag([2.0, 1.0, 3.0])]), requires_grad=True)
    LA.det(b).sum().backward()
    adj0 = np.array([[-2.0, -2.0, 2.0], [1.0, 1.0, -1.0], [0.0, 0.0, 0.0]])
    np.testing.assert_allclose(b.grad.numpy()[0], adj0, atol=1e-12)
    np.testing.assert_allclose(b.grad.numpy()[1], np.diag([3.0, 6.0, 2.0]), atol=1e-12)


@pytest.mark.parametrize("upper", [False, True])
def test_deprecated_torch_cholesky(upper: bool) -> None:
    """torch.cholesky / Tensor.cholesky: warns, CholeskyBackward0, linalg.cholesky's values and
    gradients, and no forward-mode rule (torch has none)."""
    rng = np.random.default_rng(2)
    m0 = rng.standard_normal((2, 3, 3))
    spd = m0 @ np.swapaxes(m0, -1, -2) + 3 * np.eye(3)
    a = _t(spd, requires_grad=True)
    with pytest.warns(UserWarning, match="^torch.cholesky is deprecated"):
        out = npgrad.cholesky(a, upper=upper)
    assert out.grad_fn.name() == "CholeskyBackward0"
    with pytest.warns(UserWarning):
        assert a.cholesky(upper).grad_fn.name() == "CholeskyBackward0"
    ref = _t(spd, requires_grad=True)
    expected = LA.cholesky(ref, upper=upper)
    np.testing.assert_allclose(out.detach().numpy(), expected.detach().numpy())
    w = _t(rng.standard_normal((2, 3, 3)))
    (out * w).sum().backward()
    (expected * w).sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), ref.grad.numpy())
    fwad = npgrad.autograd.forward_ad
    with fwad.dual_level(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        dual = fwad.make_dual(_t(spd), _t(np.ones((2, 3, 3))))
        with pytest.raises(NotImplementedError, match="^Trying to use forward AD with cholesky"):
            fwad.unpack_dual(npgrad.cholesky(dual)).tangent.numpy()
    torch = pytest.importorskip("torch")
    t = torch.tensor(spd, requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tout = torch.cholesky(t, upper=upper)
    np.testing.assert_allclose(out.detach().numpy(), tout.detach().numpy(), rtol=1e-10)
    (tout * torch.tensor(w.numpy())).sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), t.grad.numpy(), rtol=1e-9, atol=1e-12)


def test_deprecated_qr_warns_and_svd_does_not() -> None:
    a = _t([[2.0, 1.0], [1.0, 3.0]])
    with pytest.warns(UserWarning, match="^torch.qr is deprecated"):
        q, r = npgrad.qr(a)
    assert type(npgrad.svd(a)).__name__ == "svd"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        u, s, v = npgrad.svd(a)
    np.testing.assert_allclose(((u * s) @ v.mT).numpy(), a.numpy())
    np.testing.assert_allclose((q @ r).numpy(), a.numpy())


# Exactly singular inputs only where both libraries see them so: for a matrix that is singular
# only up to rounding, the smallest singular value (or LU pivot) is LAPACK's rounding noise.
COND = [
    "L.cond(z, p)", "L.cond(m.tensor([[1., 0], [0, 0]]), p)",
    "L.cond(m.stack([m.tensor([[2., 1.], [1., 3.]]), m.tensor([[1., 2.], [3., 4.]])]), p)",
    "L.cond(m.tensor([[2., 1.], [1., 3.]]), p)",
]


@pytest.mark.parametrize("expr", COND)
@pytest.mark.parametrize("p", [None, 2, -2, "fro", "nuc", 1, -1, float("inf"), float("-inf")])
def test_cond_values_match_torch(expr: str, p: Any) -> None:
    torch = pytest.importorskip("torch")
    got = []
    for m in (npgrad, torch):
        with np.errstate(all="ignore"):
            got.append(eval(expr, {}, {"L": m.linalg, "m": m, "p": p, "z": m.zeros(2, 2)}))
    np.testing.assert_allclose(got[0].numpy(), got[1].numpy(), rtol=1e-5)


@pytest.mark.parametrize("expr", [
    "L.cond(m.ones(2, 3), float('inf'))", "L.cond(m.ones(2, 3), float('-inf'))",
    "L.cond(m.ones(2, 3), 'fro')", "L.cond(m.ones(2, 3), -1)", "L.cond(m.ones(2, 2), 'foo')",
    "L.cond(m.ones(2, 2), 2.5)", "L.cond(m.ones(2, 2, dtype=m.int64), 1)", "L.cond(m.ones(3))",
])
def test_cond_errors_match_torch(expr: str) -> None:
    assert_same_error(expr, lambda m: {"L": m.linalg, "m": m})


def test_cond_by_hand() -> None:
    assert LA.cond(_t([[4.0, 0.0], [0.0, 2.0]])).item() == 2.0
    assert LA.cond(_t([[4.0, 0.0], [0.0, 2.0]]), 1).item() == 2.0
    assert LA.cond(_t([[1.0, 0.0], [0.0, 0.0]]), 1).item() == float("inf")


def test_linear_algebra_loads_on_first_use() -> None:
    """``import npgrad`` leaves the (large) linear-algebra module unloaded until it is used."""
    import subprocess
    import sys

    code = ("import sys, npgrad; mods = ('npgrad.linalg', 'npgrad._ops.linalg'); "
            "print([m in sys.modules for m in mods]); npgrad.det(npgrad.eye(2)); "
            "npgrad.eye(2).inverse(); print([m in sys.modules for m in mods]); "
            "print(npgrad.linalg.det(npgrad.eye(2) * 3).item())")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split("\n")[:3] == ["[False, False]", "[False, True]", "9.0"]
