"""Optimizer steps round as torch's CPU kernels do (Note [Optimizer arithmetic rounds as torch's
kernels do] in npgrad/optim/optimizer.py): fed the same gradients, SGD's trajectory and every
optimizer's running averages are bit-identical to torch 2.13's."""
from __future__ import annotations

import numpy as np
import pytest

import npgrad

SIZES = (5, 37, 1000)  # a partial vector, a vector and a tail, many vectors

SGD_CONFIGS = [
    dict(lr=0.1),
    dict(lr=0.1, momentum=0.9),
    dict(lr=0.05, momentum=0.9, dampening=0.3),
    dict(lr=0.05, momentum=0.9, nesterov=True),
    dict(lr=0.1, momentum=0.5, weight_decay=0.01),
]

# (optimizer, its arguments, the state entries that do not depend on the parameter's value)
ACCUMULATORS = [
    ("Adam", dict(lr=0.1), ("exp_avg", "exp_avg_sq")),
    ("Adam", dict(lr=0.1, betas=(0.6, 0.95)), ("exp_avg", "exp_avg_sq")),
    ("AdamW", dict(lr=0.1), ("exp_avg", "exp_avg_sq")),
    ("RMSprop", dict(lr=0.01), ("square_avg",)),
    ("RMSprop", dict(lr=0.01, centered=True), ("square_avg", "grad_avg")),
    ("Adagrad", dict(lr=0.1), ("sum",)),
]


def _run(lib, name, kwargs, w0, grads, dtype):
    p = lib.nn.Parameter(lib.tensor(w0.copy(), dtype=dtype))
    opt = getattr(lib.optim, name)([p], **kwargs)
    for g in grads:
        p.grad = lib.tensor(g.copy(), dtype=dtype)
        opt.step()
    state = opt.state_dict()["state"].get(0, {})
    return p.detach().numpy().copy(), {k: v.numpy().copy() for k, v in state.items()
                                       if hasattr(v, "numpy") and v.dim() > 0}


def _data(n, dtype):
    rng = np.random.default_rng(n)
    return (rng.standard_normal(n).astype(dtype),
            [rng.standard_normal(n).astype(dtype) for _ in range(4)])


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("kwargs", SGD_CONFIGS,
                         ids=lambda k: ",".join(f"{a}={b}" for a, b in k.items()))
def test_sgd_trajectory_is_bit_identical(kwargs, n, dtype) -> None:
    torch = pytest.importorskip("torch")
    w0, grads = _data(n, dtype)
    ours, our_state = _run(npgrad, "SGD", kwargs, w0, grads, getattr(npgrad, dtype))
    theirs, their_state = _run(torch, "SGD", kwargs, w0, grads, getattr(torch, dtype))
    np.testing.assert_array_equal(ours, theirs)
    for k in their_state:
        np.testing.assert_array_equal(our_state[k], their_state[k])


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("name, kwargs, keys", ACCUMULATORS,
                         ids=[f"{a[0]}-{i}" for i, a in enumerate(ACCUMULATORS)])
def test_running_averages_are_bit_identical(name, kwargs, keys, n, dtype) -> None:
    torch = pytest.importorskip("torch")
    w0, grads = _data(n, dtype)
    ours, our_state = _run(npgrad, name, kwargs, w0, grads, getattr(npgrad, dtype))
    theirs, their_state = _run(torch, name, kwargs, w0, grads, getattr(torch, dtype))
    for k in keys:
        np.testing.assert_array_equal(our_state[k], their_state[k], err_msg=k)
    # The parameter goes through sqrt, whose float32 rounding in torch's vectorised kernel
    # depends on the processor (AVX-512 builds are not correctly rounded); a few ulps apart.
    if dtype == "float32":
        np.testing.assert_allclose(ours, theirs, rtol=1e-5, atol=1e-7)
    else:
        np.testing.assert_allclose(ours, theirs, rtol=1e-13, atol=1e-15)


def test_fused_multiply_add_rounds_once() -> None:
    from npgrad.optim.optimizer import fused_multiply_add

    # 1 + 2**-24 is not a float32; (1 + 2**-12)**2 - 1 rounded once keeps the 2**-24 term.
    a = np.float32(1 + 2.0 ** -12)
    c = np.array([-1.0], np.float32)
    assert fused_multiply_add(a, a, c)[0] == np.float32(2.0 ** -11 + 2.0 ** -24)
    assert (a * a + c)[0] == np.float32(2.0 ** -11)  # rounded twice: the low term is lost
