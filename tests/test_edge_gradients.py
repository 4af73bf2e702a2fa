"""Values and gradients at edge points (NaN, +-inf, +-0.) as torch 2.13 gives them: NaN
positions and the sign of every zero included, for the common pointwise ops, reductions, norms
and losses.  One table of ops, a few tables of points; each case runs forward and backward
(upstream gradient of ones) in float64 in both libraries."""
from __future__ import annotations

import warnings
from typing import Any, Callable

import numpy as np
import pytest

import npgrad

torch = pytest.importorskip("torch")

nan, inf = float("nan"), float("inf")

# Points for one-input ops: NaN and infinities; zeros of both signs; plain numbers.
POINTS = {
    "special": [nan, 0.0, -0.0, inf, -inf, 1.0, -1.0, 2.0],
    "zeros": [0.0, -0.0, 1.0, -2.0, 0.5, 3.0, -0.25, 0.0],
    "one_zero": [0.0, -0.0, 1.0, -2.0, 0.5, 3.0, -0.25, 1.5],
    "infinite": [inf, -inf, inf, 1.0, 0.0, -0.0, 2.0, -inf],
}
# Pairs for two-input ops: every combination of zeros' signs, NaN on either side, infinities.
PAIRS = {
    "zeros_and_nan": ([0.0, -0.0, 0.0, nan, 0.0, inf, 1.0, -inf],
                      [0.0, 0.0, -0.0, 1.0, nan, inf, -1.0, 0.0]),
    "ties_and_inf": ([0.0, inf, 1.0, -inf, 2.0, -0.0, nan, 1.0],
                     [nan, inf, -1.0, 0.0, 2.0, -0.0, nan, inf]),
}


def _F(m: Any) -> Any:
    return m.nn.functional


UNARY: dict[str, Callable[[Any, Any], Any]] = {
    "sign": lambda m, x: m.sign(x), "abs": lambda m, x: m.abs(x), "neg": lambda m, x: -x,
    "relu": lambda m, x: m.relu(x), "relu_fn": lambda m, x: _F(m).relu(x),
    "sqrt": lambda m, x: m.sqrt(x), "rsqrt": lambda m, x: m.rsqrt(x),
    "log": lambda m, x: m.log(x), "log2": lambda m, x: m.log2(x), "log1p": lambda m, x: m.log1p(x),
    "exp": lambda m, x: m.exp(x), "reciprocal": lambda m, x: m.reciprocal(x),
    "sigmoid": lambda m, x: m.sigmoid(x), "tanh": lambda m, x: m.tanh(x),
    "sin": lambda m, x: m.sin(x), "atan": lambda m, x: m.atan(x), "asin": lambda m, x: m.asin(x),
    "square": lambda m, x: m.square(x),
    "pow2": lambda m, x: x ** 2, "pow3": lambda m, x: x ** 3, "pow0": lambda m, x: x ** 0,
    "pow_half": lambda m, x: x ** 0.5, "pow_neg_half": lambda m, x: x ** -0.5,
    "pow_neg1": lambda m, x: x ** -1, "pow_neg2": lambda m, x: x ** -2,
    "pow_1.5": lambda m, x: x ** 1.5,
    "rpow2": lambda m, x: 2 ** x, "rpow0": lambda m, x: 0 ** x, "rpow1": lambda m, x: 1 ** x,
    "mul_zero": lambda m, x: x * 0.0, "mul_neg_zero": lambda m, x: x * -0.0,
    "mul_neg": lambda m, x: x * -1.0, "add_zero": lambda m, x: x + 0.0,
    "sub_self": lambda m, x: x - x, "rdiv": lambda m, x: 1 / x,
    "clamp": lambda m, x: m.clamp(x, -1.0, 1.0), "clamp_min0": lambda m, x: m.clamp(x, min=0.0),
    "clamp_max0": lambda m, x: m.clamp(x, max=0.0),
    "clamp_zeros": lambda m, x: m.clamp(x, -0.0, 0.0),
    "clamp_nan_bound": lambda m, x: m.clamp(x, min=nan),
    "max": lambda m, x: x.max(), "min": lambda m, x: x.min(), "amax": lambda m, x: m.amax(x, 0),
    "max_dim": lambda m, x: x.reshape(4, 2).max(1)[0],
    "sum": lambda m, x: x.sum(), "mean": lambda m, x: x.mean(), "prod": lambda m, x: x.prod(),
    "var": lambda m, x: x.var(), "std": lambda m, x: x.std(),
    "norm2": lambda m, x: m.linalg.vector_norm(x), "norm1": lambda m, x: m.linalg.vector_norm(x, 1),
    "norm_half": lambda m, x: m.linalg.vector_norm(x, 0.5),
    "norm_0": lambda m, x: m.linalg.vector_norm(x, 0),
    "norm_1.5": lambda m, x: m.linalg.vector_norm(x, 1.5),
    "norm_3": lambda m, x: m.linalg.vector_norm(x, 3),
    "norm_neg1": lambda m, x: m.linalg.vector_norm(x, -1),
    "norm_inf": lambda m, x: m.linalg.vector_norm(x, inf),
    "norm_neg_inf": lambda m, x: m.linalg.vector_norm(x, -inf),
    "norm_half_dim": lambda m, x: m.linalg.vector_norm(x.reshape(4, 2), 0.5, dim=1),
    "tensor_norm_half": lambda m, x: x.norm(0.5), "tensor_norm": lambda m, x: x.norm(),
    "leaky_relu": lambda m, x: _F(m).leaky_relu(x, 0.1), "elu": lambda m, x: _F(m).elu(x),
    "selu": lambda m, x: _F(m).selu(x), "celu": lambda m, x: _F(m).celu(x),
    "softplus": lambda m, x: _F(m).softplus(x), "silu": lambda m, x: _F(m).silu(x),
    "hardtanh": lambda m, x: _F(m).hardtanh(x), "relu6": lambda m, x: _F(m).relu6(x),
    "softsign": lambda m, x: _F(m).softsign(x), "logsigmoid": lambda m, x: _F(m).logsigmoid(x),
    "softmax": lambda m, x: m.softmax(x, 0), "logsumexp": lambda m, x: m.logsumexp(x, 0),
    "floor": lambda m, x: m.floor(x), "round": lambda m, x: m.round(x),
    "nan_to_num": lambda m, x: m.nan_to_num(x), "xlogy_self": lambda m, x: m.xlogy(x, x),
    "cumsum": lambda m, x: m.cumsum(x, 0), "normalize": lambda m, x: _F(m).normalize(
        x.reshape(4, 2), dim=1),
}

BINARY: dict[str, Callable[[Any, Any, Any], Any]] = {
    "atan2": lambda m, a, b: m.atan2(a, b), "maximum": lambda m, a, b: m.maximum(a, b),
    "minimum": lambda m, a, b: m.minimum(a, b), "max": lambda m, a, b: m.max(a, b),
    "min": lambda m, a, b: m.min(a, b), "pow": lambda m, a, b: a ** b,
    "mul": lambda m, a, b: a * b, "div": lambda m, a, b: a / b, "sub": lambda m, a, b: a - b,
    "hypot": lambda m, a, b: m.hypot(a, b), "xlogy": lambda m, a, b: m.xlogy(a, b),
    "clamp_min_tensor": lambda m, a, b: m.clamp(a, min=b),
    "remainder": lambda m, a, b: m.remainder(a, b), "fmod": lambda m, a, b: m.fmod(a, b),
    "where": lambda m, a, b: m.where(a > b, a, b), "lerp": lambda m, a, b: m.lerp(a, b, 0.5),
    "lerp_0.7": lambda m, a, b: m.lerp(a, b, 0.7),
    "lerp_tensor_weight": lambda m, a, b: m.lerp(a, b, m.full_like(a, 0.7)),
    "dist": lambda m, a, b: m.dist(a, b), "dist_half": lambda m, a, b: m.dist(a, b, 0.5),
    "mse": lambda m, a, b: _F(m).mse_loss(a, b),
    "mse_none": lambda m, a, b: _F(m).mse_loss(a, b, reduction="none"),
    "l1": lambda m, a, b: _F(m).l1_loss(a, b),
    "l1_none": lambda m, a, b: _F(m).l1_loss(a, b, reduction="none"),
    "smooth_l1": lambda m, a, b: _F(m).smooth_l1_loss(a, b),
    "smooth_l1_none": lambda m, a, b: _F(m).smooth_l1_loss(a, b, reduction="none"),
    "smooth_l1_beta0": lambda m, a, b: _F(m).smooth_l1_loss(a, b, beta=0.0, reduction="none"),
    "huber": lambda m, a, b: _F(m).huber_loss(a, b),
    "huber_none": lambda m, a, b: _F(m).huber_loss(a, b, reduction="none", delta=0.5),
    "bce_logits": lambda m, a, b: _F(m).binary_cross_entropy_with_logits(
        a, m.ones_like(b) * 0.5, reduction="none"),
    "kl_div": lambda m, a, b: _F(m).kl_div(a, b.abs(), reduction="none"),
}

# Known differences: (op, points) -> reason.  Strict xfails: fixing one makes it fail.
KNOWN: dict[tuple, str] = {}


def _run(m: Any, fn: Callable, arrays: list) -> tuple:
    tensors = [m.tensor(a, dtype=m.float64, requires_grad=True) for a in arrays]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            out = fn(m, *tensors)
        except Exception as e:  # noqa: BLE001 - the error is the outcome
            return ("error", type(e).__name__, str(e))
        value = out.detach().numpy().copy()
        out.backward(m.ones_like(out))
    return ("ok", value, [None if t.grad is None else t.grad.numpy().copy() for t in tensors])


def assert_same_floats(mine: np.ndarray, theirs: np.ndarray, what: str) -> None:
    mine, theirs = np.asarray(mine, np.float64), np.asarray(theirs, np.float64)
    assert mine.shape == theirs.shape, what
    np.testing.assert_array_equal(np.isnan(mine), np.isnan(theirs), err_msg=f"{what}: NaNs")
    keep = ~np.isnan(mine)
    np.testing.assert_allclose(mine[keep], theirs[keep], rtol=1e-9, atol=0, err_msg=what)
    np.testing.assert_array_equal(np.signbit(mine[keep]), np.signbit(theirs[keep]),
                                  err_msg=f"{what}: signs of zeros")


def assert_same_edge_behaviour(fn: Callable, arrays: list) -> None:
    mine, theirs = _run(npgrad, fn, arrays), _run(torch, fn, arrays)
    assert mine[0] == theirs[0], (mine, theirs)
    if mine[0] == "error":
        assert mine[1:] == theirs[1:]
        return
    assert_same_floats(mine[1], theirs[1], "value")
    for i, (g, tg) in enumerate(zip(mine[2], theirs[2])):
        assert (g is None) == (tg is None), f"gradient {i}"
        if g is not None:
            assert_same_floats(g, tg, f"gradient {i}")


def _params(table: dict, points: dict) -> list:
    out = []
    for op in table:
        for p in points:
            marks = ()
            if (op, p) in KNOWN:
                marks = (pytest.mark.xfail(reason=KNOWN[(op, p)], strict=True),)
            out.append(pytest.param(op, p, id=f"{op}-{p}", marks=marks))
    return out


@pytest.mark.parametrize("op,points", _params(UNARY, POINTS))
def test_unary_edge_points(op: str, points: str) -> None:
    assert_same_edge_behaviour(UNARY[op], [np.array(POINTS[points])])


@pytest.mark.parametrize("op,points", _params(BINARY, PAIRS))
def test_binary_edge_points(op: str, points: str) -> None:
    a, b = PAIRS[points]
    assert_same_edge_behaviour(BINARY[op], [np.array(a), np.array(b)])


def test_the_issue_examples_by_hand() -> None:
    """The cases issue 12 names, with torch's values written out."""
    x = npgrad.tensor([nan, 0.0, -0.0], dtype=npgrad.float64, requires_grad=True)
    assert npgrad.sign(x).tolist()[0] == 0.0
    npgrad.abs(x).sum().backward()
    assert x.grad.tolist() == [0.0, 0.0, 0.0]
    for dtype in (npgrad.float16, npgrad.float32, npgrad.float64):
        z = npgrad.tensor([-0.0, 0.0, nan, -1.0] * 9, dtype=dtype)[1:]  # a strided tail too
        for y in (npgrad.relu(z), npgrad.relu(z[::2]), npgrad.nn.functional.relu(z)):
            t = torch.relu(torch.from_numpy(z.numpy().copy()))
            ref = t.numpy() if y.shape == t.shape else t.numpy()[::2]
            np.testing.assert_array_equal(np.signbit(y.numpy()), np.signbit(ref))
            np.testing.assert_array_equal(np.isnan(y.numpy()), np.isnan(ref))
    a = npgrad.tensor([0.0], requires_grad=True)
    b = npgrad.tensor([0.0], requires_grad=True)
    npgrad.atan2(a, b).backward(npgrad.ones(1))
    assert a.grad.tolist() == [0.0] and b.grad.tolist() == [0.0] and np.signbit(b.grad.numpy()[0])
    e = npgrad.tensor([-1.0, 0.0, 2.0], requires_grad=True)
    (0 ** e).sum().backward()
    assert e.grad.tolist() == [-inf, 0.0, 0.0]
    m = npgrad.maximum(npgrad.tensor([nan, 1.0], requires_grad=True), npgrad.tensor([1.0, nan]))
    assert np.isnan(m.detach().numpy()).all()


def test_edge_fixes_keep_the_gradients_right() -> None:
    """The rules changed for edge points still pass gradcheck at ordinary points."""
    def x() -> Any:
        return npgrad.tensor([0.3, -1.2, 2.5, 0.7], dtype=npgrad.float64, requires_grad=True)

    gc = npgrad.autograd.gradcheck
    gg = npgrad.autograd.gradgradcheck
    for fn in (npgrad.relu, lambda t: npgrad.clamp(t, -1.0, 1.0), lambda t: t.abs() ** -0.5,
               lambda t: npgrad.linalg.vector_norm(t, 0.5),
               lambda t: npgrad.linalg.vector_norm(t, 1.5),
               lambda t: npgrad.nn.functional.elu(t), lambda t: npgrad.lerp(t, t * 3, 0.7),
               lambda t: 0.5 ** t):
        assert gc(fn, (x(),)) and gg(fn, (x(),))
    y = npgrad.tensor([1.1, 0.4, -2.0, 0.6], dtype=npgrad.float64, requires_grad=True)
    for fn in (npgrad.maximum, npgrad.minimum, npgrad.atan2,
               lambda a, b: npgrad.nn.functional.mse_loss(a, b),
               lambda a, b: npgrad.nn.functional.smooth_l1_loss(a, b),
               lambda a, b: npgrad.nn.functional.huber_loss(a, b, delta=0.5)):
        assert gc(fn, (x(), y)) and gg(fn, (x(), y))
