"""Special functions and activations beyond the op table: error texts, integer inputs, module
reprs and the in-place forms the table cannot hold, against torch; and values by hand."""
from __future__ import annotations

import math
import warnings
from typing import Any, Callable

import numpy as np
import pytest

import npgrad

F = npgrad.nn.functional


def _outcome(mod: Any, call: Callable) -> Any:
    """What ``call(mod)`` does: its exception (MRO names, text) or its result's facts."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out = call(mod)
    except Exception as error:  # noqa: BLE001 - the exception is the outcome
        names = [c.__name__ for c in type(error).__mro__ if c.__module__ == "builtins"]
        return "error", names, str(error).replace("torch.", "npgrad.")
    if isinstance(out, mod.Tensor):
        return "tensor", str(out.dtype).split(".")[-1], out.detach().numpy().tolist()
    return "value", repr(out)


def _same_as_torch(call: Callable) -> None:
    torch = pytest.importorskip("torch")
    ours, theirs = _outcome(npgrad, call), _outcome(torch, call)
    if ours[0] == "tensor" and theirs[0] == "tensor":
        assert ours[1] == theirs[1]
        np.testing.assert_allclose(np.array(ours[2], dtype=float), np.array(theirs[2], dtype=float),
                                   rtol=1e-6, atol=1e-6, equal_nan=True)
    else:
        assert ours == theirs


def _i(m: Any) -> Any:
    return m.tensor([1, 2, 3])


def _b(m: Any) -> Any:
    return m.tensor([True, False])


def _f(m: Any, *shape: int) -> Any:
    return m.ones(*shape)


ERRORS = {
    "glu_odd": lambda m: m.nn.functional.glu(_f(m, 2, 3), 1),
    "glu_odd_negative_dim": lambda m: m.nn.functional.glu(_f(m, 2, 3)),
    "glu_0d": lambda m: m.nn.functional.glu(m.tensor(1.0), 0),
    "glu_dim_out_of_range": lambda m: m.nn.functional.glu(_f(m, 2, 4), 2),
    "glu_int": lambda m: m.nn.functional.glu(m.ones(2, 4, dtype=m.int64)),
    "glu_bool": lambda m: m.nn.functional.glu(m.ones(2, 4, dtype=m.bool)),
    "softmin_dim_out_of_range": lambda m: m.nn.functional.softmin(_f(m, 2, 4), 2),
    "softmin_int": lambda m: m.nn.functional.softmin(_i(m), 0),
    "hardtanh_min_above_max": lambda m: m.nn.functional.hardtanh(_f(m, 2), 2.0, 1.0),
    "hardtanh_bool": lambda m: m.nn.functional.hardtanh(_b(m)),
    "relu6_bool": lambda m: m.nn.functional.relu6(_b(m)),
    "celu_alpha_0": lambda m: m.nn.functional.celu(_f(m, 2), 0.0),
    "elu_int": lambda m: m.nn.functional.elu(_i(m)),
    "selu_int": lambda m: m.nn.functional.selu(_i(m)),
    "celu_bool": lambda m: m.nn.functional.celu(_b(m)),
    "softplus_int": lambda m: m.nn.functional.softplus(_i(m)),
    "hardsigmoid_int": lambda m: m.nn.functional.hardsigmoid(_i(m)),
    "hardswish_int": lambda m: m.nn.functional.hardswish(_i(m)),
    "mish_int": lambda m: m.nn.functional.mish(_i(m)),
    "logsigmoid_int": lambda m: m.nn.functional.logsigmoid(_i(m)),
    "softsign_bool": lambda m: m.nn.functional.softsign(_b(m)),
    "hypot_int": lambda m: m.hypot(_i(m), _i(m)),
    "logaddexp_int": lambda m: m.logaddexp(_i(m), _i(m)),
    "atan2_scalar_other": lambda m: m.atan2(_f(m, 2), 2.0),
    "hypot_scalar_other": lambda m: m.hypot(_f(m, 2), 2),
    "logaddexp_scalar_other": lambda m: m.logaddexp(_f(m, 2), 2.0),
    "hypot_broadcast": lambda m: m.hypot(_f(m, 2), _f(m, 3)),
    "addcdiv_int": lambda m: m.addcdiv(_i(m), _i(m), _i(m)),
    "addcdiv_int_tensors_float_input": lambda m: m.addcdiv(_i(m).float(), _i(m), _i(m)),
    "addcmul_scalar_tensor2": lambda m: m.addcmul(_f(m, 2), _f(m, 2), 2.0),
    "addcmul_broadcast": lambda m: m.addcmul(_f(m, 3), _f(m, 2), _f(m, 3)),
    "xlogy_two_scalars": lambda m: m.xlogy(2.0, 3.0),
    "asin_inplace_int": lambda m: _i(m).asin_(),
    "hardtanh_module_bounds": lambda m: m.nn.Hardtanh(2.0, 1.0),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors_match_torch(name: str) -> None:
    call = ERRORS[name]
    assert _outcome(npgrad, call)[0] == "error"
    _same_as_torch(call)


def _backward_of(op: Callable) -> Callable:
    def call(m: Any) -> Any:
        x = m.tensor([0.5, -0.25], requires_grad=True)
        op(m, x * 1).sum().backward()
        return x.grad
    return call


def _forward_ad_of(op: Callable) -> Callable:
    def call(m: Any) -> Any:
        fwad = m.autograd.forward_ad
        with fwad.dual_level():
            x = fwad.make_dual(m.tensor([0.5, -0.25]), m.ones(2))
            return fwad.unpack_dual(op(m, x * 1)).tangent
    return call


BACKWARD_ERRORS = {
    # torch checks the sign of alpha only when the in-place node runs backward
    "elu_inplace_negative_alpha": _backward_of(
        lambda m, x: m.nn.functional.elu(x, -1.0, inplace=True)),
    "celu_inplace_negative_alpha": _backward_of(
        lambda m, x: m.nn.functional.celu(x, -1.0, inplace=True)),
    # torch records asinh_, acosh_ and atanh_ without a derivative
    "asinh_inplace_backward": _backward_of(lambda m, x: x.asinh_()),
    "acosh_inplace_backward": _backward_of(lambda m, x: (x + 2).acosh_()),
    "atanh_inplace_backward": _backward_of(lambda m, x: x.arctanh_()),
    "atanh_inplace_forward_ad": _forward_ad_of(lambda m, x: x.atanh_()),
    "asinh_inplace_forward_ad": _forward_ad_of(lambda m, x: x.asinh_()),
}


@pytest.mark.parametrize("name", sorted(BACKWARD_ERRORS))
def test_derivative_errors_match_torch(name: str) -> None:
    call = BACKWARD_ERRORS[name]
    assert _outcome(npgrad, call)[0] == "error"
    _same_as_torch(call)


def test_inplace_without_derivative_has_torch_grad_fn() -> None:
    x = npgrad.tensor([0.5], requires_grad=True)
    assert type((x * 1).asinh_().grad_fn).__name__ == "AsinhBackward1"
    assert type((x + 1).acosh_().grad_fn).__name__ == "AcoshBackward1"
    assert type((x * 1).atanh_().grad_fn).__name__ == "AtanhBackward1"
    y = npgrad.tensor([0.5]).atanh_()  # nothing recorded: no error, just the value
    np.testing.assert_allclose(y.numpy(), [math.atanh(0.5)], rtol=1e-6)


VALUES = {
    **{f"{op}_int": (lambda op: lambda m: getattr(m, op)(_i(m)))(op)
       for op in ("asin", "acos", "atan", "sinh", "cosh", "asinh", "acosh", "atanh", "erf",
                  "erfc", "exp2", "nan_to_num", "arcsin", "arctanh")},
    **{f"{op}_bool": (lambda op: lambda m: getattr(m, op)(_b(m)))(op)
       for op in ("asin", "cosh", "erf", "exp2", "nan_to_num")},
    "atan2_int": lambda m: m.atan2(_i(m), _i(m)),
    "atan2_int_float64": lambda m: m.atan2(_i(m), _i(m).double()),
    "xlogy_int": lambda m: m.xlogy(_i(m), _i(m)),
    "xlogy_scalar_self_int": lambda m: m.xlogy(2, _i(m)),
    "xlogy_int_scalar_other": lambda m: m.xlogy(_i(m), 3),
    "xlogy_zeros_and_nan": lambda m: m.xlogy(m.tensor([0.0, 0.0, 1.0]),
                                             m.tensor([float("nan"), 0.0, 0.0])),
    "addcmul_int_float_value": lambda m: m.addcmul(_i(m), _i(m), _i(m), value=2.5),
    "addcmul_mixed": lambda m: m.addcmul(_i(m), _i(m).float(), _i(m)),
    "addcmul_broadcast": lambda m: m.addcmul(_f(m, 3), _f(m, 2, 1), _f(m, 1, 3), value=3),
    "nan_to_num_float32": lambda m: m.nan_to_num(m.tensor([float("nan"), float("inf"),
                                                           -float("inf"), 1.0])),
    "nan_to_num_float64": lambda m: m.tensor([float("nan"), float("inf"), -float("inf")],
                                             dtype=m.float64).nan_to_num(),
    "nan_to_num_kwargs": lambda m: m.nan_to_num(m.tensor([float("nan"), float("inf")]),
                                                nan=1.0, neginf=-3.0),
    "relu6_int": lambda m: m.nn.functional.relu6(m.tensor([-2, 3, 9])),
    "hardtanh_int_fractional_bounds": lambda m: m.nn.functional.hardtanh(
        m.tensor([-3, 0, 3]), -1.5, 2.5),
    "softsign_int": lambda m: m.nn.functional.softsign(_i(m)),
    "softplus_threshold": lambda m: m.nn.functional.softplus(m.tensor([1.0, 30.0]), beta=2,
                                                             threshold=10),
    "softplus_large": lambda m: m.nn.functional.softplus(m.tensor([-100.0, 100.0])),
    "logsigmoid_large": lambda m: m.nn.functional.logsigmoid(m.tensor([-200.0, 200.0])),
    "mish_large": lambda m: m.nn.functional.mish(m.tensor([-200.0, 200.0])),
    "elu_large": lambda m: m.nn.functional.elu(m.tensor([-200.0, 200.0])),
    "hardswish_bounds": lambda m: m.nn.functional.hardswish(m.tensor([-3.0, 3.0, 4.0])),
    "softmin_default_dim": lambda m: m.nn.functional.softmin(m.tensor([[1.0, 2.0]])),
    "glu_default_dim": lambda m: m.nn.functional.glu(m.tensor([[1.0, 2.0, 0.0, -1.0]])),
    "selu_torch_inplace": lambda m: m.selu_(m.tensor([-1.0, 1.0])),
    "celu_torch": lambda m: m.celu(m.tensor([-1.0, 1.0]), 2.0),
}


@pytest.mark.parametrize("name", sorted(VALUES))
def test_values_and_dtypes_match_torch(name: str) -> None:
    _same_as_torch(VALUES[name])


SIGNED_ZEROS_AND_NAN = {
    "relu6": lambda m, x: m.nn.functional.relu6(x),
    "hardtanh": lambda m, x: m.nn.functional.hardtanh(x),
    "elu": lambda m, x: m.nn.functional.elu(x),
    "selu": lambda m, x: m.nn.functional.selu(x),
    "celu": lambda m, x: m.nn.functional.celu(x, 0.5),
    "hardswish": lambda m, x: m.nn.functional.hardswish(x),
    "hardsigmoid": lambda m, x: m.nn.functional.hardsigmoid(x),
    "mish": lambda m, x: m.nn.functional.mish(x),
    "softplus": lambda m, x: m.nn.functional.softplus(x),
    "logsigmoid": lambda m, x: m.nn.functional.logsigmoid(x),
    "asinh": lambda m, x: m.asinh(x),
    "atan2": lambda m, x: m.atan2(x, m.tensor([-0.0, 0.0, 1.0, -5.0])),
}


@pytest.mark.parametrize("name", sorted(SIGNED_ZEROS_AND_NAN))
def test_signed_zeros_and_nan_match_torch(name: str) -> None:
    """-0. and NaN print as torch's (values alone cannot tell -0. from 0.)."""
    torch = pytest.importorskip("torch")
    op = SIGNED_ZEROS_AND_NAN[name]
    ours = repr(op(npgrad, npgrad.tensor([-0.0, float("nan"), 0.0, -5.0])))
    theirs = repr(op(torch, torch.tensor([-0.0, float("nan"), 0.0, -5.0])))
    assert ours.replace("npgrad", "torch") == theirs


def test_softmin_implicit_dim_warns_like_torch() -> None:
    torch = pytest.importorskip("torch")
    texts = []
    for m in (npgrad, torch):
        with pytest.warns(UserWarning) as record:
            m.nn.functional.softmin(m.ones(2, 3))
        texts.append([str(w.message) for w in record])
    assert texts[0] == texts[1]


# -- in-place forms whose node saves the old input (not op-table rows: see op_rows_special) --

INPLACE = {
    "asin_": lambda m, x, y: x.asin_(),
    "acos_": lambda m, x, y: x.arccos_(),
    "atan_": lambda m, x, y: x.atan_(),
    "sinh_": lambda m, x, y: x.sinh_(),
    "cosh_": lambda m, x, y: x.cosh_(),
    "erf_": lambda m, x, y: x.erf_(),
    "erfc_": lambda m, x, y: x.erfc_(),
    "atan2_": lambda m, x, y: x.atan2_(y),
    "hypot_": lambda m, x, y: x.hypot_(y),
    "xlogy_": lambda m, x, y: x.xlogy_(y),
    "xlogy_scalar_": lambda m, x, y: x.xlogy_(2.0),
    "hardswish_": lambda m, x, y: m.nn.functional.hardswish(x, inplace=True),
    "mish_": lambda m, x, y: m.nn.functional.mish(x, True),
    "hardtanh_": lambda m, x, y: m.nn.functional.hardtanh_(x, -0.3, 0.3),
}


def _inplace_run(m: Any, op: Callable) -> tuple:
    x = m.tensor([[0.5, -0.25, 0.75], [0.1, -0.6, 0.3]], dtype=m.float64, requires_grad=True)
    y = m.tensor([0.5, 1.5, 2.0], dtype=m.float64, requires_grad=True)
    z = x * 1
    out = op(m, z, y)
    assert out is z
    w = m.tensor([[1.0, -2.0, 0.5], [0.25, 1.5, -1.0]], dtype=m.float64)
    out.backward(w)
    return (type(out.grad_fn).__name__, out._version, out.detach().numpy().copy(),
            x.grad.numpy().copy(), None if y.grad is None else y.grad.numpy().copy())


@pytest.mark.parametrize("name", sorted(INPLACE))
def test_inplace_forms_match_torch(name: str) -> None:
    torch = pytest.importorskip("torch")
    ours, theirs = _inplace_run(npgrad, INPLACE[name]), _inplace_run(torch, INPLACE[name])
    assert ours[:2] == theirs[:2]
    for a, b in zip(ours[2:], theirs[2:]):
        assert (a is None) == (b is None)
        if a is not None:
            np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


def _inplace_forward_modes(m: Any, op: Callable) -> tuple:
    """The output's tangent, and the tangent of the input gradient (forward over reverse)."""
    fwad = m.autograd.forward_ad
    p = m.tensor([[0.5, -0.25, 0.75], [0.1, -0.6, 0.3]], dtype=m.float64, requires_grad=True)
    y = m.tensor([0.5, 1.5, 2.0], dtype=m.float64)
    w = m.tensor([[1.0, -2.0, 0.5], [0.25, 1.5, -1.0]], dtype=m.float64)
    with fwad.dual_level():
        x = fwad.make_dual(p, m.tensor([[1.0, 0.5, -1.0], [2.0, 0.0, 0.25]], dtype=m.float64))
        out = op(m, x * 1, y)
        g, = m.autograd.grad((out * w).sum(), p, create_graph=True)
        tangents = (fwad.unpack_dual(out).tangent, fwad.unpack_dual(g).tangent)
        # no tangent (torch, for a gradient that does not depend on the input) is a zero one
        return tuple(np.zeros((2, 3)) if t is None else t.detach().numpy().copy()
                     for t in tangents)


@pytest.mark.parametrize("name", sorted(INPLACE))
def test_inplace_forms_forward_modes_match_torch(name: str) -> None:
    """An in-place op that saves its old input keeps that input's old tangent for backward."""
    torch = pytest.importorskip("torch")
    try:
        theirs = _inplace_forward_modes(torch, INPLACE[name])
    except (NotImplementedError, RuntimeError) as error:  # torch lacks a rule for this one
        pytest.skip(f"torch: {error}")
    ours = _inplace_forward_modes(npgrad, INPLACE[name])
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


# -- modules ------------------------------------------------------------------------------------

MODULES = {
    "ReLU6()": lambda m: m.nn.ReLU6(),
    "ReLU6(True)": lambda m: m.nn.ReLU6(True),
    "ELU()": lambda m: m.nn.ELU(),
    "ELU(0.5, True)": lambda m: m.nn.ELU(0.5, True),
    "SELU()": lambda m: m.nn.SELU(),
    "SELU(inplace=True)": lambda m: m.nn.SELU(inplace=True),
    "CELU(2.0)": lambda m: m.nn.CELU(2.0),
    "CELU(inplace=True)": lambda m: m.nn.CELU(inplace=True),
    "Mish()": lambda m: m.nn.Mish(),
    "Mish(True)": lambda m: m.nn.Mish(True),
    "Softplus()": lambda m: m.nn.Softplus(),
    "Softplus(2, 10)": lambda m: m.nn.Softplus(2, 10),
    "Hardtanh()": lambda m: m.nn.Hardtanh(),
    "Hardtanh(-2, 3, True)": lambda m: m.nn.Hardtanh(-2, 3, True),
    "Hardtanh(min_value=-0.5)": lambda m: m.nn.Hardtanh(min_value=-0.5),
    "Hardsigmoid()": lambda m: m.nn.Hardsigmoid(),
    "Hardsigmoid(True)": lambda m: m.nn.Hardsigmoid(True),
    "Hardswish(inplace=True)": lambda m: m.nn.Hardswish(inplace=True),
    "LogSigmoid()": lambda m: m.nn.LogSigmoid(),
    "Softsign()": lambda m: m.nn.Softsign(),
    "Softmin()": lambda m: m.nn.Softmin(),
    "Softmin(1)": lambda m: m.nn.Softmin(1),
    "GLU()": lambda m: m.nn.GLU(),
    "GLU(0)": lambda m: m.nn.GLU(0),
    "Sequential": lambda m: m.nn.Sequential(m.nn.ELU(), m.nn.GLU(1), m.nn.Hardtanh(-2.0, 2.0)),
}


def _module_run(m: Any, make: Callable) -> tuple:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        module = make(m)
        x = m.tensor([[0.5, -1.5, 2.5, -0.2], [3.5, -4.0, 0.1, 1.0]], dtype=m.float64,
                     requires_grad=True)
        inp = x * 1
        out = module(inp)
    out.backward(m.ones_like(out))
    return repr(module), out is inp, out.detach().numpy().copy(), x.grad.numpy().copy()


@pytest.mark.parametrize("name", sorted(MODULES))
def test_modules_match_torch(name: str) -> None:
    torch = pytest.importorskip("torch")
    ours, theirs = _module_run(npgrad, MODULES[name]), _module_run(torch, MODULES[name])
    assert ours[:2] == theirs[:2]  # repr, and in place exactly when torch's is
    np.testing.assert_allclose(ours[2], theirs[2], rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(ours[3], theirs[3], rtol=1e-10, atol=1e-12)


def test_hardtanh_deprecated_keywords_warn() -> None:
    with pytest.warns(FutureWarning, match="^keyword argument `max_value` is deprecated and "
                                           "renamed to `max_val`$"):
        layer = npgrad.nn.Hardtanh(max_value=2.0)
    assert (layer.min_val, layer.max_val) == (-1.0, 2.0)


# -- by hand, without torch --------------------------------------------------------------------

def _grad(fn: Callable, *values: float) -> tuple:
    xs = [npgrad.tensor(v, dtype=npgrad.float64, requires_grad=True) for v in values]
    out = fn(*xs)
    out.backward()
    return out.item(), tuple(x.grad.item() for x in xs)


def test_values_and_gradients_by_hand() -> None:
    pi = math.pi
    cases = [
        (npgrad.asin, (0.5,), pi / 6, (1 / math.sqrt(0.75),)),
        (npgrad.acos, (0.5,), pi / 3, (-1 / math.sqrt(0.75),)),
        (npgrad.atan, (1.0,), pi / 4, (0.5,)),
        (npgrad.sinh, (1.0,), math.sinh(1.0), (math.cosh(1.0),)),
        (npgrad.cosh, (1.0,), math.cosh(1.0), (math.sinh(1.0),)),
        (npgrad.asinh, (0.75,), math.log(0.75 + 1.25), (1 / 1.25,)),
        (npgrad.acosh, (1.25,), math.log(1.25 + 0.75), (1 / 0.75,)),
        (npgrad.atanh, (0.5,), 0.5 * math.log(3.0), (1 / 0.75,)),
        (npgrad.atan2, (1.0, -1.0), 3 * pi / 4, (-0.5, -0.5)),
        (npgrad.hypot, (3.0, 4.0), 5.0, (0.6, 0.8)),
        (npgrad.erf, (0.0,), 0.0, (2 / math.sqrt(pi),)),
        (npgrad.erfc, (0.0,), 1.0, (-2 / math.sqrt(pi),)),
        (npgrad.exp2, (3.0,), 8.0, (8 * math.log(2),)),
        (npgrad.logaddexp, (0.0, 0.0), math.log(2), (0.5, 0.5)),
        (npgrad.xlogy, (2.0, math.e), 2.0, (1.0, 2 / math.e)),
        (lambda x: npgrad.xlogy(x, 0.5), (0.0,), 0.0, (math.log(0.5),)),
        (lambda x, a, b: npgrad.addcmul(x, a, b, value=2), (1.0, 3.0, 4.0), 25.0,
         (1.0, 8.0, 6.0)),
        (lambda x, a, b: npgrad.addcdiv(x, a, b, value=2), (1.0, 3.0, 4.0), 2.5,
         (1.0, 0.5, -6 / 16)),
        (F.softplus, (0.0,), math.log(2), (0.5,)),
        (F.elu, (-1.0,), math.exp(-1) - 1, (math.exp(-1),)),
        (lambda x: F.celu(x, 2.0), (-2.0,), 2 * (math.exp(-1) - 1), (math.exp(-1),)),
        (F.selu, (1.0,), 1.0507009873554805, (1.0507009873554805,)),
        (F.hardtanh, (1.0,), 1.0, (0.0,)),  # the bound itself gets no gradient
        (F.relu6, (3.0,), 3.0, (1.0,)),
        (F.hardsigmoid, (1.5,), 0.75, (float(np.float32(1 / 6)),)),
        (F.hardswish, (1.0,), 2 / 3, (1 / 3 + 0.5,)),
        (F.hardswish, (-3.0,), 0.0, (0.0,)),
        (F.mish, (0.0,), 0.0, (math.tanh(math.log(2)),)),
        (F.logsigmoid, (0.0,), -math.log(2), (0.5,)),
        (F.softsign, (1.0,), 0.5, (0.25,)),
    ]
    for fn, args, value, grads in cases:
        got_value, got_grads = _grad(fn, *args)
        assert got_value == pytest.approx(value, rel=1e-12, abs=1e-15), fn
        assert got_grads == pytest.approx(grads, rel=1e-12, abs=1e-15), fn


def test_glu_and_softmin_by_hand() -> None:
    x = npgrad.tensor([[2.0, 4.0, 0.0, math.log(3.0)]], dtype=npgrad.float64, requires_grad=True)
    out = F.glu(x)
    np.testing.assert_allclose(out.detach().numpy(), [[1.0, 3.0]], rtol=1e-12)
    out.sum().backward()
    # d/da = sigmoid(b), d/db = a * sigmoid(b) * (1 - sigmoid(b))
    np.testing.assert_allclose(x.grad.numpy(), [[0.5, 0.75, 0.5, 0.75]], rtol=1e-12)
    assert type(out.grad_fn).__name__ == "GluBackward0"
    s = F.softmin(npgrad.tensor([0.0, math.log(3.0)], dtype=npgrad.float64), dim=0)
    np.testing.assert_allclose(s.numpy(), [0.75, 0.25], rtol=1e-12)


def test_errors_by_hand() -> None:
    with pytest.raises(RuntimeError, match="^Halving dimension must be even, but dimension 1 "
                                           "is size 3$"):
        F.glu(npgrad.ones(2, 3), -1)
    with pytest.raises(IndexError, match=r"^Dimension out of range \(expected to be in range "
                                         r"of \[-2, 1\], but got 2\)$"):
        F.softmin(npgrad.ones(2, 3), 2)
    with pytest.raises(NotImplementedError, match="^\"elu_cpu\" not implemented for 'Long'$"):
        F.elu(npgrad.tensor([1, 2]))
    with pytest.raises(ValueError, match="^min_val cannot be greater than max_val$"):
        F.hardtanh(npgrad.ones(1), 1.0, 0.0)


def test_module_reprs_by_hand() -> None:
    assert repr(npgrad.nn.ELU(0.5, True)) == "ELU(alpha=0.5, inplace=True)"
    assert repr(npgrad.nn.ReLU6()) == "ReLU6()"
    assert repr(npgrad.nn.Hardtanh(-2, 3)) == "Hardtanh(min_val=-2, max_val=3)"
    assert repr(npgrad.nn.Softplus()) == "Softplus(beta=1.0, threshold=20.0)"
    assert repr(npgrad.nn.Hardswish(True)) == "Hardswish()"
    assert repr(npgrad.nn.GLU()) == "GLU(dim=-1)"
    assert repr(npgrad.nn.Softmin()) == "Softmin(dim=None)"
