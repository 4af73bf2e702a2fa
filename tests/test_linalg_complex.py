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
