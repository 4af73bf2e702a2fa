"""torch.norm with a string order other than 'fro' is linalg.matrix_norm over the given (or
all) dims, as in torch 2.13."""
import numpy as np
import pytest

import npgrad

torch = pytest.importorskip("torch")

CASES = [
    ("nuc", None, False),
    ("nuc", (0, 1), True),
    ("nuc", (1, 2), False),
    ("fro", (1, 2), False),
]


@pytest.mark.parametrize("p,dim,keepdim", CASES)
def test_norm_string_order_matches_torch(p, dim, keepdim):
    shape = (3, 4) if dim in (None, (0, 1)) else (2, 3, 4)
    data = np.random.default_rng(0).standard_normal(shape)
    a = npgrad.tensor(data, requires_grad=True)
    b = torch.tensor(data, requires_grad=True)
    ra = npgrad.norm(a, p, dim, keepdim)
    rb = torch.norm(b, p, dim, keepdim)
    np.testing.assert_allclose(ra.detach().numpy(), rb.detach().numpy(), rtol=1e-12)
    assert tuple(ra.shape) == tuple(rb.shape)
    assert str(ra.dtype).split(".")[1] == str(rb.dtype).split(".")[1]
    ra.sum().backward()
    rb.sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-10, atol=1e-12)


def test_nuclear_norm_of_a_vector_is_refused_as_torch_does():
    with pytest.raises(RuntimeError) as ours:
        npgrad.norm(npgrad.ones(3), "nuc")
    with pytest.raises(RuntimeError) as theirs:
        torch.norm(torch.ones(3), "nuc")
    assert str(ours.value) == str(theirs.value)
