"""Complex linear algebra (issue 14): torch's values and conjugate-Wirtinger gradients for the
decompositions (Note [Complex decompositions] in npgrad/_ops/linalg.py)."""
from __future__ import annotations

from typing import Any, Callable

import numpy as np
import pytest

import npgrad

_RNG = np.random.default_rng(14)
_A = _RNG.standard_normal((3, 3)) + 1j * _RNG.standard_normal((3, 3)) + 3 * np.eye(3)
_B = _RNG.standard_normal((3, 2)) + 1j * _RNG.standard_normal((3, 2))
_W = _RNG.standard_normal((3, 3)) + 1j * _RNG.standard_normal((3, 3))


def _hpd(m: Any, a: Any) -> Any:
    return a @ a.mH + m.eye(3, dtype=a.dtype)


# each case: the op, reduced to a real loss that does not depend on a singular vector's phase
CASES: dict[str, Callable[[Any, Any, Any], Any]] = {
    "inv": lambda m, a, w: (m.linalg.inv(a) * w).sum().abs(),
    "det": lambda m, a, w: (m.linalg.det(a) * w[0, 0]).real,
    "slogdet": lambda m, a, w: m.linalg.slogdet(a).logabsdet + (m.linalg.slogdet(a).sign
                                                                * w[0, 1]).real,
    "solve": lambda m, a, w: (m.linalg.solve(a, w[:, :2]) * w[:, 1:].conj()).sum().real,
    "cholesky": lambda m, a, w: (m.linalg.cholesky(_hpd(m, a)) * w).sum().real,
    "svdvals": lambda m, a, w: (m.linalg.svdvals(a) * w[0].real).sum(),
    "svd_S": lambda m, a, w: (m.linalg.svd(a).S * w[1].real).sum(),
    "eigh": lambda m, a, w: (m.linalg.eigh(_hpd(m, a)).eigenvalues * w[0].real).sum(),
    "qr": lambda m, a, w: (m.linalg.qr(a).R * w).sum().real + (m.linalg.qr(a).Q * w).sum().imag,
    "pinv": lambda m, a, w: (m.linalg.pinv(a) * w).sum().real,
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_complex_gradcheck(name: str) -> None:
    a = npgrad.tensor(_A, requires_grad=True)
    w = npgrad.tensor(_W)
    assert npgrad.autograd.gradcheck(lambda x: CASES[name](npgrad, x, w), (a,))


@pytest.mark.parametrize("name", sorted(CASES))
def test_complex_gradient_matches_torch(name: str) -> None:
    torch = pytest.importorskip("torch")
    grads = []
    for m in (npgrad, torch):
        a = m.tensor(_A, requires_grad=True)
        loss = CASES[name](m, a, m.tensor(_W))
        loss.backward()
        grads.append((loss.detach().numpy(), a.grad.numpy()))
    (v_np, g_np), (v_t, g_t) = grads
    np.testing.assert_allclose(v_np, v_t, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(g_np, g_t, rtol=1e-8, atol=1e-10)


def test_complex_values_and_dtypes_match_torch() -> None:
    torch = pytest.importorskip("torch")
    for m_name in ("slogdet", "svd", "eigh"):
        outs = []
        for m in (npgrad, torch):
            a = m.tensor(_A)
            arg = _hpd(m, a) if m_name == "eigh" else a
            outs.append(getattr(m.linalg, m_name)(arg))
        for mine, theirs in zip(*outs):
            assert str(mine.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1]
    np.testing.assert_allclose(npgrad.linalg.solve(npgrad.tensor(_A), npgrad.tensor(_B)).numpy(),
                               torch.linalg.solve(torch.tensor(_A), torch.tensor(_B)).numpy())


def test_complex_phase_dependent_loss_is_refused_as_torch() -> None:
    a = npgrad.tensor(_A, requires_grad=True)
    with pytest.raises(RuntimeError, match=r"^svd_backward: The singular vectors in the complex "
                       r"case are specified up to multiplication by e\^\{i phi\}"):
        npgrad.linalg.svd(a)[0].sum().abs().backward()
    with pytest.raises(RuntimeError, match=r"^linalg_eigh_backward: The eigenvectors"):
        npgrad.linalg.eigh(_hpd(npgrad, a)).eigenvectors.sum().abs().backward()


@pytest.mark.parametrize("name", ["inv", "det", "solve", "cholesky", "svdvals", "qr", "pinv"])
def test_complex_forward_mode_matches_reverse(name: str) -> None:
    """The tangent of the real loss along a direction is the real inner product of the
    gradient with that direction (conjugate Wirtinger convention)."""
    import npgrad.autograd.forward_ad as fwAD

    w = npgrad.tensor(_W)
    direction = _RNG.standard_normal((3, 3)) + 1j * _RNG.standard_normal((3, 3))
    a = npgrad.tensor(_A, requires_grad=True)
    CASES[name](npgrad, a, w).backward()
    expected = float(np.real(np.vdot(a.grad.numpy(), direction)))
    with fwAD.dual_level():
        dual = fwAD.make_dual(npgrad.tensor(_A), npgrad.tensor(direction))
        tangent = fwAD.unpack_dual(CASES[name](npgrad, dual, w)).tangent
    np.testing.assert_allclose(float(tangent.real if tangent.is_complex() else tangent),
                               expected, rtol=1e-8, atol=1e-10)


# -- wide QR (m < n) and complex matrix_rank ---------------------------------------------------

def _wide(shape: tuple, complex_: bool, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    a = rng.standard_normal(shape)
    return a + 1j * rng.standard_normal(shape) if complex_ else a


@pytest.mark.parametrize("complex_", [False, True], ids=["real", "complex"])
@pytest.mark.parametrize("mode", ["reduced", "complete"])
@pytest.mark.parametrize("shape", [(2, 3), (2, 5), (3, 2, 4)])
def test_wide_qr_gradient_matches_torch(shape: tuple, mode: str, complex_: bool) -> None:
    """A = [X | Y] with X square: torch differentiates the wide QR as X's QR plus
    ``Y = Q V``; both outputs' upstream gradients, then R's alone."""
    torch = pytest.importorskip("torch")
    a = _wide(shape, complex_, 1)
    g_q, g_r = _wide(shape[:-1] + (shape[-2],), complex_, 2), _wide(shape, complex_, 3)
    results = []
    for m in (npgrad, torch):
        x = m.tensor(a, requires_grad=True)
        q, r = m.linalg.qr(x, mode=mode)
        both, = m.autograd.grad([q, r], [x], [m.tensor(g_q), m.tensor(g_r)], retain_graph=True)
        r_only, = m.autograd.grad([r], [x], [m.tensor(g_r)])
        results.append((both.numpy(), r_only.numpy(), type(q.grad_fn).__name__))
    (b1, r1, n1), (b2, r2, n2) = results
    assert n1 == n2 == "LinalgQrBackward0"
    np.testing.assert_allclose(b1, b2, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(r1, r2, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("complex_", [False, True], ids=["real", "complex"])
def test_wide_qr_gradcheck_and_gradgradcheck(complex_: bool) -> None:
    a = npgrad.tensor(_wide((2, 4), complex_, 4), requires_grad=True)
    assert npgrad.autograd.gradcheck(npgrad.linalg.qr, (a,))
    assert npgrad.autograd.gradgradcheck(npgrad.linalg.qr, (a,))


def test_wide_qr_complete_of_a_tall_matrix_is_still_refused() -> None:
    a = npgrad.tensor(_wide((3, 2), True, 5), requires_grad=True)
    with pytest.raises(RuntimeError, match=r"^The QR decomposition is not differentiable when "
                                           r"mode='complete' and nrows > ncols\.$"):
        npgrad.linalg.qr(a, mode="complete").Q.sum().abs().backward()


@pytest.mark.parametrize("kw", [{}, {"hermitian": True}, {"atol": 1.0}, {"rtol": 0.5},
                                {"atol": 0.1, "rtol": 0.2}])
def test_complex_matrix_rank_matches_torch(kw: dict) -> None:
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(6)
    low = rng.standard_normal((2, 4, 2)) + 1j * rng.standard_normal((2, 4, 2))
    a = low @ np.conj(np.swapaxes(low, -1, -2)) + np.diag([0, 0, 1e-3, 5.0])  # Hermitian, rank 3-4
    for dtype in ("cfloat", "cdouble"):
        mine = npgrad.linalg.matrix_rank(npgrad.tensor(a, dtype=getattr(npgrad, dtype)), **kw)
        theirs = torch.linalg.matrix_rank(torch.tensor(a, dtype=getattr(torch, dtype)), **kw)
        assert mine.dtype is npgrad.int64 and mine.tolist() == theirs.tolist()
