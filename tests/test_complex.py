"""Complex dtypes and complex autograd against torch: dtypes and promotion, creation, reprs,
the complex ops (parts, conjugation, angle, sgn, polar), torch's conjugate-Wirtinger gradients,
complex gradcheck / gradgradcheck and the op table's rows run on complex inputs."""
from __future__ import annotations

import pickle
import sys
import warnings
from typing import Any

import numpy as np
import pytest

import npgrad
from npgrad.autograd import gradcheck, gradgradcheck
from npgrad.autograd.gradcheck import GradcheckError

from torch_oracle import assert_same_error

torch = pytest.importorskip("torch")

DTYPE_NAMES = ("bool", "uint8", "int8", "int16", "int32", "int64", "float16", "float32",
               "float64", "bfloat16", "complex64", "complex128")


def _name(d: Any) -> str:
    return str(d).split(".")[-1]


def _np(t: Any) -> np.ndarray:
    return t.detach().resolve_conj().numpy()


@pytest.fixture
def float64_default():
    npgrad.set_default_dtype(npgrad.float64)
    torch.set_default_dtype(torch.float64)
    try:
        yield
    finally:
        npgrad.set_default_dtype(npgrad.float32)
        torch.set_default_dtype(torch.float32)


# -- dtypes ----------------------------------------------------------------------------------

def test_complex_dtypes_have_torch_attributes() -> None:
    for name in ("complex64", "complex128", "complex32"):
        mine, theirs = getattr(npgrad, name), getattr(torch, name)
        assert (mine.is_complex, mine.is_floating_point, mine.is_signed, mine.itemsize) == \
            (theirs.is_complex, theirs.is_floating_point, theirs.is_signed, theirs.itemsize)
        assert _name(mine.to_real()) == _name(theirs.to_real())
        assert mine.to_complex() is mine
    assert npgrad.cfloat is npgrad.complex64 and npgrad.cdouble is npgrad.complex128
    assert npgrad.chalf is npgrad.complex32
    assert not npgrad.float32.is_complex
    for name in ("float16", "float32", "float64", "bfloat16", "int32", "bool"):
        assert _name(getattr(npgrad, name).to_real()) == _name(getattr(torch, name).to_real())
    for name in ("float16", "float32", "float64", "bfloat16"):
        assert _name(getattr(npgrad, name).to_complex()) == \
            _name(getattr(torch, name).to_complex())
    assert_same_error("m.int64.to_complex()", lambda m: {"m": m})
    assert_same_error("m.uint8.to_complex()", lambda m: {"m": m})


def test_complex_dtypes_pickle_and_name_legacy_types() -> None:
    assert pickle.loads(pickle.dumps(npgrad.complex128)) is npgrad.complex128
    assert npgrad.tensor([1j]).type() == torch.tensor([1j]).type() == "torch.ComplexFloatTensor"
    assert npgrad.tensor([1j], dtype=npgrad.cdouble).type() == "torch.ComplexDoubleTensor"


def test_complex32_is_named_but_not_stored() -> None:
    with pytest.raises(TypeError, match="complex32"):
        npgrad.zeros(2, dtype=npgrad.complex32)


@pytest.mark.parametrize("a", DTYPE_NAMES)
def test_promote_types_with_complex(a: str) -> None:
    if a == "bfloat16":
        pytest.importorskip("ml_dtypes")  # bfloat16 is the [bf16] extra
    for b in ("complex32", "complex64", "complex128"):
        expected = _name(torch.promote_types(getattr(torch, a), getattr(torch, b)))
        assert _name(npgrad.promote_types(getattr(npgrad, a), getattr(npgrad, b))) == expected
        assert _name(npgrad.promote_types(getattr(npgrad, b), getattr(npgrad, a))) == expected


def _operand(m: Any, spec: Any) -> Any:
    if isinstance(spec, tuple):  # (dtype name, 0-dim?)
        name, zero_dim = spec
        shape = () if zero_dim else (2,)
        return m.ones(shape, dtype=getattr(m, name))
    return spec


RESULT_TYPE_CASES = [
    (("float32", False), 1j), (("float64", False), 1j), (("int32", False), 1j),
    (("bool", False), 2j), (("bfloat16", False), 1j), (("float32", True), 1j),
    (("float32", False), ("complex128", True)), (("int32", False), ("complex128", True)),
    (("complex64", False), ("float64", True)), (("complex64", False), 1.5),
    (("complex64", False), ("complex128", False)), (("float64", False), ("complex64", False)),
    (("int64", True), ("complex128", True)), (("complex64", True), 3),
]


@pytest.mark.parametrize("a,b", RESULT_TYPE_CASES)
def test_result_type_and_arithmetic_with_complex(a: Any, b: Any) -> None:
    if "bfloat16" in (a[0], b[0] if isinstance(b, tuple) else None):
        pytest.importorskip("ml_dtypes")  # bfloat16 is the [bf16] extra
    expected = torch.result_type(_operand(torch, a), _operand(torch, b))
    assert _name(npgrad.result_type(_operand(npgrad, a), _operand(npgrad, b))) == _name(expected)
    mine = _operand(npgrad, a) + _operand(npgrad, b)
    theirs = _operand(torch, a) + _operand(torch, b)
    assert _name(mine.dtype) == _name(theirs.dtype)
    np.testing.assert_array_equal(mine.numpy(), theirs.numpy())


def test_default_complex_dtype_follows_the_default_float(float64_default: None) -> None:
    for expr in ("m.tensor(1j)", "m.tensor([1, 2j])", "m.ones(2) * 1j", "m.full((2,), 1j)",
                 "m.arange(3) + 0.5j"):
        mine, theirs = eval(expr, {"m": npgrad}), eval(expr, {"m": torch})
        assert _name(mine.dtype) == _name(theirs.dtype) == "complex128"
        assert repr(mine) == repr(theirs)
    assert repr(npgrad.tensor([1j], dtype=npgrad.cfloat)) == \
        "tensor([0.+1.j], dtype=npgrad.complex64)"


# -- creation, conversion ------------------------------------------------------------------

CREATION = ["m.tensor([1+2j, 3])", "m.tensor([1, 2j])", "m.tensor([[1.5+2j], [-3j]])",
            "m.tensor(1j)", "m.tensor([True, 1j])", "m.zeros(2, 3, dtype=m.cfloat)",
            "m.ones(2, dtype=m.cdouble)", "m.full((2,), 1j)", "m.full((2,), 1., dtype=m.cfloat)",
            "m.zeros_like(m.tensor([1j]))", "m.ones_like(m.tensor([1.]), dtype=m.cdouble)",
            "m.linspace(0, 1, 3, dtype=m.cfloat)", "m.tensor([1., 2.]).to(m.cfloat)",
            "m.tensor([1+2j], dtype=m.cdouble).to(m.complex64)", "m.tensor(np.array([1+1j]))",
            "m.from_numpy(np.array([1+1j, 2]))", "m.eye(2, dtype=m.cfloat)"]


@pytest.mark.parametrize("expr", CREATION)
def test_creation_matches_torch(expr: str) -> None:
    env = {"np": np}
    mine = eval(expr, {**env, "m": npgrad})
    theirs = eval(expr, {**env, "m": torch})
    assert _name(mine.dtype) == _name(theirs.dtype)
    assert mine.shape == theirs.shape
    np.testing.assert_array_equal(mine.numpy(), theirs.numpy())


def test_empty_has_complex_dtype_and_requires_grad_is_allowed() -> None:
    t = npgrad.empty(3, dtype=npgrad.cdouble, requires_grad=True)
    assert t.dtype is npgrad.complex128 and t.requires_grad and t.is_complex()
    z = npgrad.tensor([1j])
    z.requires_grad_()
    assert z.requires_grad and npgrad.is_complex(z) and not z.is_floating_point()


@pytest.mark.parametrize("dtype", ["cfloat", "cdouble"])
@pytest.mark.parametrize("n", [1, 3, 8, 15, 16, 17, 40])
def test_randn_complex_draws_torchs_stream(dtype: str, n: int) -> None:
    mine = npgrad.randn(n, dtype=getattr(npgrad, dtype),
                        generator=npgrad.Generator().manual_seed(n))
    theirs = torch.randn(n, dtype=getattr(torch, dtype), generator=torch.Generator().manual_seed(n))
    np.testing.assert_array_equal(mine.numpy(), theirs.numpy())


def test_randn_complex_with_the_global_generator_and_like() -> None:
    npgrad.manual_seed(11)
    torch.manual_seed(11)
    a, b = npgrad.randn(4, 5, dtype=npgrad.cfloat), torch.randn(4, 5, dtype=torch.cfloat)
    np.testing.assert_array_equal(a.numpy(), b.numpy())
    np.testing.assert_array_equal(npgrad.randn_like(a).numpy(), torch.randn_like(b).numpy())
    np.testing.assert_array_equal(npgrad.randn(3).numpy(), torch.randn(3).numpy())  # in step


def test_item_tolist_numpy_and_complex() -> None:
    for m in (npgrad, torch):
        z = m.tensor([[1 + 2j, -3j]], dtype=m.cdouble)
        assert z[0, 1].item() == -3j and isinstance(z[0, 0].item(), complex)
        assert z.tolist() == [[1 + 2j, -3j]]
        assert complex(z[0, 0]) == 1 + 2j
        assert z.numpy().dtype == np.complex128
    assert npgrad.tensor([1j]).numpy().dtype == np.complex64


def test_casting_complex_to_real_warns_as_torch_and_keeps_the_real_part() -> None:
    for m in (npgrad, torch):
        with pytest.warns(UserWarning, match="Casting complex values to real discards the "
                                             "imaginary part"):
            out = m.tensor([1 + 2j, -3 + 1j]).float()
        np.testing.assert_array_equal(out.numpy(), np.array([1, -3], np.float32))


# -- reprs ---------------------------------------------------------------------------------

REPRS = [
    "m.tensor([1+2j])", "m.tensor([1+2j, 3])", "m.tensor(1j)", "m.tensor(-2.5-1j)",
    "m.tensor([[1.5+2j, -3.25-1e-3j]])", "m.tensor([1e10+1j])", "m.tensor([123456789+1j])",
    "m.tensor([1+0j, float('nan')+1j, float('inf')*1j, -float('inf')+0j])",
    "m.tensor([-0.0-0.0j, 0j])", "m.tensor([complex(1e-5, 3), 2])",
    "m.tensor([[1+1j] * 40])", "m.tensor([1+2j], dtype=m.cdouble)",
    "m.tensor([], dtype=m.cfloat)", "m.tensor([], dtype=m.cdouble)",
    "m.zeros(2, 0, dtype=m.cfloat)",
    "m.tensor(np.arange(2000) * (1 + 0.5j))", "m.tensor(np.arange(12.).reshape(2, 3, 2) * 1j)",
    "m.tensor([1+2j], requires_grad=True)", "m.tensor([1+2j], requires_grad=True) * 2",
    "m.tensor([1+2j]).conj()", "m.tensor([0.1+0.2j, 0.33333+0.5j], dtype=m.cdouble)",
]


@pytest.mark.parametrize("expr", REPRS)
def test_repr_matches_torch(expr: str) -> None:
    mine = repr(eval(expr, {"m": npgrad, "np": np}))
    theirs = repr(eval(expr, {"m": torch, "np": np}))
    assert mine.replace("npgrad.", "torch.") == theirs


def test_repr_print_options_and_float64_default(float64_default: None) -> None:
    for expr in ("m.tensor([1+2j])", "m.tensor([1+2j], dtype=m.cfloat)", "m.tensor([1/3+1j])"):
        assert repr(eval(expr, {"m": npgrad})).replace("npgrad.", "torch.") == \
            repr(eval(expr, {"m": torch}))
    data = np.linspace(0, 1, 7) * (1 + 1j)
    with npgrad.printoptions(precision=2), torch._tensor_str.printoptions(precision=2):
        assert repr(npgrad.tensor(data)) == repr(torch.tensor(data))


# -- the complex ops ---------------------------------------------------------------------

VALUES = ["m.abs(z)", "m.angle(z)", "z.angle()", "m.sgn(z)", "z.sgn()", "z.real", "z.imag",
          "m.real(z)", "m.imag(z)", "m.conj(z)", "z.conj_physical()", "m.view_as_real(z)",
          "m.view_as_complex(x2)", "m.complex(x, x * 2)", "m.polar(x.abs(), x)",
          "m.angle(x)", "m.angle(m.tensor([-1, 0, 2]))", "m.angle(m.tensor([-0.0, float('nan')]))",
          "m.sgn(x)", "m.sgn(m.tensor([-2, 0, 3]))", "m.sgn(m.tensor([0j, 3 + 4j]))",
          "m.real(x)", "m.conj(x)", "z.exp()", "z.log()", "z.sqrt()", "z.sigmoid()", "z.tanh()",
          "z * w", "z / w", "z ** 2", "z ** 0.5", "z @ w", "m.view_as_real(z.resolve_conj())",
          "z.sum()", "z.mean()", "z.prod()", "z.cumsum(0)", "z == w", "z != z", "z.isnan()",
          "m.cat([z, w])", "m.stack([z, w]).t()", "z.flip(0)", "z[1:]", "z.reshape(3, 1) * w",
          "m.logaddexp(z, w)", "m.logaddexp(z, x)", "m.logaddexp(z.to(m.cfloat), w)",
          "m.logcumsumexp(z, 0)", "m.logcumsumexp(m.stack([z, w]), 1)", "m.dist(z, w)",
          "m.dist(z, w, 1)", "m.dist(z, w, 3)", "m.dist(z, w, float('inf'))", "m.dist(z, w, 0)",
          "m.dist(z.to(m.cfloat), w.to(m.cfloat))", "m.nan_to_num(z)",
          "m.nan_to_num(z * float('inf'), 1.0, 2.0, -2.0)", "z.clone().nan_to_num_()"]


def _env(m: Any, requires_grad: bool = False) -> dict:
    rg = {"requires_grad": requires_grad}
    return {"m": m, "z": m.tensor([0.5 + 0.3j, -1.2 + 0.7j, 0.9 - 1.1j], dtype=m.cdouble, **rg),
            "w": m.tensor([1.1 - 0.4j, 0.2 + 0.9j, -0.6 - 0.5j], dtype=m.cdouble, **rg),
            "x": m.tensor([0.4, -0.8, 1.3], dtype=m.double, **rg),
            "x2": m.tensor([[0.4, -0.8], [1.3, 2.0]], dtype=m.double, **rg)}


@pytest.mark.parametrize("expr", VALUES)
def test_complex_op_values_match_torch(expr: str) -> None:
    mine, theirs = eval(expr, _env(npgrad)), eval(expr, _env(torch))
    assert _name(mine.dtype) == _name(theirs.dtype)
    assert mine.shape == theirs.shape
    assert mine.is_conj() == theirs.is_conj()
    np.testing.assert_allclose(_np(mine), _np(theirs), rtol=1e-12, atol=1e-15)


def test_real_and_imag_are_views_that_write_through() -> None:
    for m in (npgrad, torch):
        z = m.tensor([1 + 2j, 3 - 4j])
        r, i = z.real, z.imag
        assert r._base is z and i._base is z and r._is_view()
        r[0] = 10.0
        i.mul_(2)
        assert z.tolist() == [10 + 4j, 3 - 8j]
        z.real = m.tensor([0.5, 0.25])
        z.imag = m.tensor([1.0, -1.0])
        assert z.tolist() == [0.5 + 1j, 0.25 - 1j]
        assert m.tensor([1.0]).real.tolist() == [1.0]


def test_view_as_real_and_view_as_complex_share_storage() -> None:
    for m in (npgrad, torch):
        z = m.tensor([1 + 2j, 3 - 4j])
        pairs = m.view_as_real(z)
        assert pairs.shape == (2, 2) and pairs._base is z
        pairs[1, 1] = 7.0
        assert z.tolist() == [1 + 2j, 3 + 7j]
        x = m.tensor([[1.0, 2.0], [3.0, 4.0]])
        c = m.view_as_complex(x)
        c.mul_(1j)
        assert x.tolist() == [[-2.0, 1.0], [-4.0, 3.0]]
        assert m.view_as_complex(x[1]).shape == ()


def test_conj_bit_behaves_as_torchs() -> None:
    for m in (npgrad, torch):
        z = m.tensor([1 + 2j])
        c = z.conj()
        assert c.is_conj() and not z.is_conj() and c.conj().is_conj() is False
        assert not c.resolve_conj().is_conj() and c.resolve_conj().tolist() == [1 - 2j]
        assert z.resolve_conj() is z and not z.conj_physical().is_conj()
        assert not (c * 1).is_conj() and not c.clone().is_conj()
        x = m.tensor([1.0])
        assert x.conj() is x and not x.conj().is_conj() and x.resolve_conj() is x
        assert x.conj_physical() is x
        np.testing.assert_array_equal(c.resolve_conj().numpy(), np.array([1 - 2j], np.complex64))
    assert_same_error("m.tensor([1j]).conj().numpy()", lambda m: {"m": m})
    assert_same_error("m.view_as_real(m.tensor([1j]).conj())", lambda m: {"m": m})


ERRORS = [
    "m.tensor([1.]).imag", "m.view_as_real(m.tensor([1.]))",
    "m.view_as_complex(m.tensor([[1, 2]]))", "m.view_as_complex(m.tensor([[1., 2., 3.]]))",
    "m.view_as_complex(m.tensor(1.))", "m.view_as_complex(m.ones(2, 2)[:, :1].expand(2, 2))",
    "m.view_as_complex(m.ones(4)[1:3])", "m.view_as_complex(m.ones(2, 3)[:, :2])",
    "m.complex(m.tensor([1.]), m.tensor([2.], dtype=m.double))",
    "m.complex(m.tensor([1]), m.tensor([2]))", "m.polar(m.tensor([1]), m.tensor([2]))",
    "m.polar(m.tensor([1.]), m.tensor([2.], dtype=m.double))",
    "m.tensor([1j]).sign()", "m.tensor([1j]) < 1", "m.tensor([1j]) >= m.tensor([1j])",
    "m.gt(m.tensor([1j]), 0)", "m.le(m.tensor([1.]), 1j)", "m.tensor([1j]).floor()",
    "m.tensor([1j]).ceil()", "m.tensor([1j]).trunc()", "m.tensor([1j]).round()",
    "m.round(m.tensor([1j]), decimals=1)", "m.tensor([1j]).frac()", "m.tensor([1j]).relu()",
    "m.tensor([1j]).clamp(0, 1)", "m.tensor([1j]).clamp(min=0)", "m.tensor([1j]).clamp_max(1)",
    "m.tensor([1j]).clamp_min(m.tensor([1j]))", "m.maximum(m.tensor([1j]), m.tensor([1j]))",
    "m.minimum(m.tensor([1j]), m.tensor([2.]))", "m.erfc(m.tensor([1j]))",
    "m.logit(m.tensor([1j]))", "m.atan2(m.tensor([1j]), m.tensor([1j]))",
    "m.hypot(m.tensor([1j]), m.tensor([1j]))", "m.fmod(m.tensor([1j]), m.tensor([1j]))",
    "m.nn.functional.gelu(m.tensor([1j]))", "m.nn.functional.elu(m.tensor([1j]))",
    "m.nn.functional.leaky_relu(m.tensor([1j]))", "m.nn.functional.hardtanh(m.tensor([1j]))",
    "m.nn.functional.softplus(m.tensor([1j]))", "m.erf(m.tensor([1j]))",
    "m.tensor([1+2j], requires_grad=True).sum().backward()", "m.arange(3, dtype=m.cfloat)",
    "m.nan_to_num(m.tensor([1j], requires_grad=True))",
    "m.nan_to_num(m.tensor([1j], requires_grad=True) * 2)",
    "m.nn.functional.mse_loss(m.tensor([1j]), m.tensor([1.]))",
    "m.nn.functional.mse_loss(m.tensor([1.]), m.tensor([1j], dtype=m.cdouble))",
    "m.nn.functional.mse_loss(m.tensor([1j]), m.tensor([1j]), reduction='bad')",
    "m.nn.functional.smooth_l1_loss(m.tensor([1j]), m.tensor([1j]))",
    "m.nn.functional.huber_loss(m.tensor([1j]), m.tensor([1j]))",
    "m.nn.functional.huber_loss(m.tensor([1.]), m.tensor([1j]))",
    "m.nn.functional.cosine_similarity(m.tensor([1j]), m.tensor([1j]), 0)",
    "m.xlogy(m.tensor([1j]), m.tensor([1.]))", "m.xlogy(m.tensor([1.]), 1j)",
    "m.xlogy(2, m.tensor([1j]))", "m.logcumsumexp(m.tensor([1, 2]), 0)",
]


@pytest.mark.parametrize("expr", ERRORS)
def test_errors_match_torch(expr: str) -> None:
    npgrad._dtype.set_repr_prefix("torch.")  # the backward error names the dtype
    try:
        assert_same_error(expr, lambda m: {"m": m})
    finally:
        npgrad._dtype.set_repr_prefix("npgrad.")


# -- gradients ----------------------------------------------------------------------------

GRADS = {
    "exp": "m.exp(z)", "log": "m.log(z)", "sin": "m.sin(z)", "cos": "z.cos()", "tan": "z.tan()",
    "tanh": "m.tanh(z)", "sinh": "z.sinh()", "asin": "m.asin(z)", "atanh": "m.atanh(z)",
    "sqrt": "m.sqrt(z)", "rsqrt": "m.rsqrt(z)", "reciprocal": "z.reciprocal()",
    "sigmoid": "m.sigmoid(z)", "neg": "-z", "exp2": "m.exp2(z)", "log1p": "m.log1p(z)",
    "log10": "z.log10()", "expm1": "z.expm1()", "sinc": "m.sinc(z)", "square": "m.square(z)",
    "pow_int": "z ** 3", "pow_frac": "z ** 2.5", "pow_complex": "z ** (1 + 1j)",
    "pow_tensor": "z ** w", "rpow": "2 ** z", "abs": "m.abs(z)", "angle": "m.angle(z)",
    "sgn": "m.sgn(z)", "real": "z.real", "imag": "z.imag", "conj": "z.conj()",
    "conj_physical": "m.conj_physical(z)", "resolve_conj": "z.conj().resolve_conj()",
    "view_as_real": "m.view_as_real(z)", "view_as_complex": "m.view_as_complex(x2)",
    "complex": "m.complex(x, x * x)", "polar": "m.polar(x.abs() + 0.5, x)",
    "mul": "z * w", "div": "z / w", "add_alpha": "m.add(z, w, alpha=2)", "sub": "z - w",
    "mul_real": "z * x", "real_div_complex": "x / z", "real_times_1j": "x * 1j",
    "real_plus_complex_scalar": "x + (1 - 2j)", "complex_scalars": "z * (2 - 1j) + 1j",
    "rsub": "1 - z", "rdiv": "2 / z", "z_conj_z": "z * z.conj()", "abs_squared": "z.abs() ** 2",
    "sum": "(z * w).sum()", "sum_dim": "(z.reshape(3, 1) * w).sum(0)", "mean": "(z * w).mean()",
    "prod": "z.prod()", "cumsum": "z.cumsum(0)", "mm": "z.reshape(3, 1) @ w.reshape(1, 3)",
    "matmul_vec": "z.reshape(1, 3) @ w", "dot": "m.dot(z, w)", "mv": "m.mv(z.reshape(3, 1) * w, w)",
    "outer": "m.outer(z, w)", "bmm": "m.bmm(z.reshape(1, 3, 1), w.reshape(1, 1, 3))",
    "addmm": "m.addmm(z.reshape(3, 1) * w, z.reshape(3, 1), w.reshape(1, 3))",
    "matmul_mixed": "z.reshape(1, 3) @ (w.reshape(3, 1) * x.reshape(3, 1))",
    "to_complex": "x.to(m.cdouble) * w", "cat": "m.cat([z, w])", "stack": "m.stack([z, w])",
    "index": "z[1:] * w[:2]", "expand": "z.expand(2, 3)", "flip": "z.flip(0)",
    "transpose": "(z.reshape(3, 1) * w).t()", "clone": "z.clone()",
    "addcmul": "m.addcmul(z, w, z)", "addcdiv": "m.addcdiv(z, w, z)",
    "lerp": "m.lerp(z, w, 0.3)", "lerp_tensor": "m.lerp(z, w, z)",
    "where_real_mask": "m.where(x > 0, z, w)", "trace": "m.trace(z.reshape(3, 1) * w)",
    "logaddexp": "m.logaddexp(z, w)", "logaddexp_scaled": "m.logaddexp(z * 2, w.conj())",
    "logcumsumexp": "m.logcumsumexp(z, 0)",
    "logcumsumexp_2d": "m.logcumsumexp(z.reshape(3, 1) * w, 1)", "dist": "m.dist(z, w)",
    "dist_p1": "m.dist(z, w, 1)", "dist_p1.5": "m.dist(z, w, 1.5)", "dist_p3": "m.dist(z, w, 3)",
    "dist_inf": "m.dist(z, w, float('inf'))", "nan_to_num_inplace": "(z * 1).nan_to_num_()",
}


def _grads(m: Any, expr: str) -> tuple:
    env = _env(m, requires_grad=True)
    out = eval(expr, env)
    rng = np.random.default_rng(3)
    shape = tuple(out.shape)
    go = rng.standard_normal(shape) + (1j * rng.standard_normal(shape) if out.is_complex() else 0)
    leaves = [env[k] for k in ("z", "w", "x", "x2")]
    grads = m.autograd.grad(out, leaves, m.tensor(go, dtype=out.dtype), allow_unused=True)
    return out, grads


@pytest.mark.parametrize("expr", list(GRADS.values()), ids=list(GRADS))
def test_gradients_match_torch(expr: str) -> None:
    mine, mine_grads = _grads(npgrad, expr)
    theirs, their_grads = _grads(torch, expr)
    assert _name(mine.dtype) == _name(theirs.dtype)
    assert type(mine.grad_fn).__name__ == type(theirs.grad_fn).__name__
    np.testing.assert_allclose(_np(mine), _np(theirs), rtol=1e-12, atol=1e-14)
    for a, b in zip(mine_grads, their_grads):
        assert (a is None) == (b is None)
        if a is not None:
            assert _name(a.dtype) == _name(b.dtype)
            assert a.is_conj() == b.is_conj()
            np.testing.assert_allclose(_np(a), _np(b), rtol=1e-11, atol=1e-13)


def test_the_conjugation_convention() -> None:
    # d/dz of |z|^2 = z conj(z), torch's convention: the gradient is 2z (dL/dx + i dL/dy)
    z = npgrad.tensor([1 + 2j, -0.5 + 0.25j], dtype=npgrad.cdouble, requires_grad=True)
    (z * z.conj()).real.sum().backward()
    np.testing.assert_allclose(z.grad.numpy(), 2 * z.detach().numpy())
    assert z.grad.dtype is npgrad.complex128
    # a holomorphic op: grad_input = grad * conj(f'(z)); here f = exp, grad = 1
    w = npgrad.tensor([0.3 - 0.7j], dtype=npgrad.cdouble, requires_grad=True)
    npgrad.exp(w).backward(npgrad.tensor([1 + 0j], dtype=npgrad.cdouble))
    np.testing.assert_allclose(w.grad.numpy(), np.conj(np.exp(w.detach().numpy())))
    # a real input of a complex computation gets a real gradient: the real part
    x = npgrad.tensor([2.0, -1.0], requires_grad=True)
    (x * (3 + 4j)).abs().sum().backward()
    assert x.grad.dtype is npgrad.float32
    np.testing.assert_allclose(x.grad.numpy(), [5.0, -5.0])
    y = npgrad.tensor([1.5], requires_grad=True)
    (y * 1j).backward(npgrad.tensor([2 - 3j]))
    np.testing.assert_allclose(y.grad.numpy(), [-3.0])  # Re(conj(1j) * (2 - 3j))


def test_grad_accumulates_in_complex() -> None:
    for m in (npgrad, torch):
        z = m.tensor([1 + 1j], requires_grad=True)
        (z * (2 - 1j)).real.sum().backward()
        (z.conj() * 3).imag.sum().backward()
        assert z.grad.tolist() == [(2 + 1j) + (0 - 3j)]


def test_second_derivatives_match_torch() -> None:
    results = []
    for m in (npgrad, torch):
        z = m.tensor([0.5 + 0.3j, -1.2 + 0.7j], dtype=m.cdouble, requires_grad=True)
        y = (m.exp(z) * z.conj()).abs().sum()
        g, = m.autograd.grad(y, z, create_graph=True)
        h, = m.autograd.grad((g * g.conj()).real.sum(), z)
        results.append((_np(g), _np(h)))
    np.testing.assert_allclose(results[0][0], results[1][0], rtol=1e-12)
    np.testing.assert_allclose(results[0][1], results[1][1], rtol=1e-10)


def test_forward_ad_with_complex_tangents_matches_torch() -> None:
    outs = []
    for m in (npgrad, torch):
        fwad = m.autograd.forward_ad
        z = m.tensor([0.5 + 0.3j, -1.2 + 0.7j], dtype=m.cdouble)
        t = m.tensor([1 - 2j, 0.5j], dtype=m.cdouble)
        x = m.tensor([0.7, -0.2], dtype=m.double)
        with fwad.dual_level():
            dz = fwad.make_dual(z, t)
            dx = fwad.make_dual(x, m.tensor([1.0, 2.0], dtype=m.double))
            ys = [m.exp(dz) * dz.conj(), dz.abs(), m.angle(dz), m.sgn(dz), dz.real, dz.imag,
                  m.view_as_real(dz), dx * 1j, m.polar(dx.abs(), dx), (dz * dx).sum()]
            outs.append([_np(fwad.unpack_dual(y).tangent) for y in ys])
    for a, b in zip(*outs):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14)


# -- gradcheck ----------------------------------------------------------------------------

GRADCHECK = {
    "exp": (npgrad.exp, "z"), "abs": (npgrad.abs, "z"), "angle": (npgrad.angle, "z"),
    "sgn": (npgrad.sgn, "z"), "conj": (npgrad.conj, "z"), "real": (npgrad.real, "z"),
    "imag": (npgrad.imag, "z"), "view_as_real": (npgrad.view_as_real, "z"),
    "view_as_complex": (npgrad.view_as_complex, "x2"), "polar": (npgrad.polar, "rx"),
    "complex": (npgrad.complex, "xx"), "mul": (lambda a, b: a * b, "zw"),
    "div": (lambda a, b: a / b, "zw"), "mul_real": (lambda a, b: a * b, "zx"),
    "mm": (lambda a, b: a.reshape(3, 1) @ b.reshape(1, 3), "zw"),
    "sum_sq": (lambda a: (a * a).sum(), "z"), "prod": (npgrad.prod, "z"),
    "log": (npgrad.log, "z"), "sqrt": (npgrad.sqrt, "z"), "sigmoid": (npgrad.sigmoid, "z"),
    "pow": (lambda a: a ** 2.5, "z"), "pow_tensor": (lambda a, b: a ** b, "zw"),
    "real_times_1j": (lambda a: a * 1j, "x"), "mean": (npgrad.mean, "z"),
    "abs_of_mul": (lambda a, b: (a * b).abs(), "zx"),
    "logaddexp": (npgrad.logaddexp, "zw"),
    "logcumsumexp": (lambda a, b: npgrad.logcumsumexp(a.reshape(3, 1) * b, 1), "zw"),
    "dist": (npgrad.dist, "zw"), "dist_p3": (lambda a, b: npgrad.dist(a, b, 3), "zw"),
    "dist_p1": (lambda a, b: npgrad.dist(a, b, 1), "zw"),
}


def _gc_inputs(spec: str) -> tuple:
    """The float64 / complex128 leaves of a gradcheck row: one letter (or pair) per input."""
    def leaf(data: list, dtype: Any) -> Any:
        return npgrad.tensor(data, dtype=dtype, requires_grad=True)

    cd, d = npgrad.cdouble, npgrad.double
    table = {"z": lambda: leaf([0.5 + 0.3j, -1.2 + 0.7j, 0.9 - 1.1j], cd),
             "w": lambda: leaf([1.1 - 0.4j, 0.2 + 0.9j, -0.6 - 0.5j], cd),
             "x": lambda: leaf([0.4, -0.8, 1.3], d), "y": lambda: leaf([0.3, 0.1, -2.0], d),
             "r": lambda: leaf([0.7, 1.5, 2.0], d)}
    if spec == "x2":
        return (leaf([[0.4, -0.8], [1.3, 2.0]], d),)
    if spec == "xx":
        spec = "xy"
    return tuple(table[c]() for c in spec)


@pytest.mark.parametrize("name", list(GRADCHECK))
def test_complex_gradcheck_and_gradgradcheck(name: str) -> None:
    fn, spec = GRADCHECK[name]
    inputs = _gc_inputs(spec)
    assert gradcheck(fn, inputs)
    assert gradcheck(fn, inputs, check_forward_ad=True, check_backward_ad=False)
    assert gradgradcheck(fn, inputs)


class _WrongConj(npgrad.autograd.Function):
    """exp, with the conjugation forgotten in backward."""

    @staticmethod
    def forward(ctx: Any, z: Any) -> Any:
        out = z.exp()
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx: Any, grad: Any) -> Any:
        out, = ctx.saved_tensors
        return grad * out


class _TorchWrongConj(torch.autograd.Function):
    forward = staticmethod(_WrongConj.forward)
    backward = staticmethod(_WrongConj.backward)


def test_gradcheck_catches_a_missing_conjugate_with_torchs_message() -> None:
    messages = []
    for m, fn in ((npgrad, _WrongConj.apply), (torch, _TorchWrongConj.apply)):
        z = m.tensor([0.5 + 0.3j], dtype=m.cdouble, requires_grad=True)
        with pytest.raises(Exception) as info:
            m.autograd.gradcheck(fn, (z,))
        messages.append(str(info.value).split(",\n")[0])
    assert messages[0] == messages[1] == ("While considering the imaginary part of complex "
                                          "outputs only, Jacobian mismatch for output 0 with "
                                          "respect to input 0")


def test_gradcheck_real_output_of_complex_input_has_no_prefix() -> None:
    class WrongAbs(npgrad.autograd.Function):
        @staticmethod
        def forward(ctx: Any, z: Any) -> Any:
            ctx.save_for_backward(z)
            return z.abs()

        @staticmethod
        def backward(ctx: Any, grad: Any) -> Any:
            z, = ctx.saved_tensors
            return grad * z.sgn().conj()

    z = npgrad.tensor([0.5 + 0.3j], dtype=npgrad.cdouble, requires_grad=True)
    with pytest.raises(GradcheckError, match="^Jacobian mismatch for output 0 with respect to "
                                             "input 0,\nnumerical:tensor"):
        gradcheck(WrongAbs.apply, (z,))
    assert not gradcheck(WrongAbs.apply, (z,), raise_exception=False)


# -- the op table on complex inputs -------------------------------------------------------

sys.path.insert(0, __import__("os").path.dirname(__file__))
import op_table  # noqa: E402

# Note [Op-table rows in complex]
# Every row of these families runs on complex inputs (the row's real data plus 0.5j times a
# second draw).  Where torch refuses the op in complex, npgrad must raise the same exception
# type; where torch computes it, values, dtypes, grad_fn and the input gradients of a complex
# upstream gradient must match torch's, and the row passes complex gradcheck.  Rows npgrad does
# not get right yet are strict xfails, with the reason.
COMPLEX_FAMILIES = ("pointwise", "activation", "reduction")
_LINALG_PRODUCTS = ("mm", "bmm", "matmul", "dot", "vdot", "mv", "outer", "addmm", "addmv",
                    "addr", "baddbmm", "addbmm", "einsum", "tensordot", "inner", "kron")
COMPLEX_XFAIL: dict[str, str] = {}  # none left: logaddexp, logcumsumexp, dist, nan_to_num and
# xlogy run in complex as torch runs (or refuses) them


def _complex_rows() -> list:
    rows = []
    for row in op_table.ROWS:
        if row.family in COMPLEX_FAMILIES or (row.family == "linalg"
                                              and row.name.split("_")[0] in _LINALG_PRODUCTS):
            marks = ()
            if row.name in COMPLEX_XFAIL:
                marks = (pytest.mark.xfail(reason=COMPLEX_XFAIL[row.name], strict=True),)
            rows.append(pytest.param(row, id=row.name, marks=marks))
    return rows


def _complex_arrays(row: Any) -> list:
    real, imag = row.arrays(np.float64), row.arrays(np.float64, seed=1)
    return [r + 0.5j * i for r, i in zip(real, imag)]


def _run_row(m: Any, row: Any, arrays: list) -> tuple:
    xs = [m.tensor(a, requires_grad=r) for a, r in zip(arrays, row.rg)]
    out = row.fn(m, *xs)
    outs = [o for o in (out if isinstance(out, (tuple, list)) else (out,)) if o.requires_grad]
    rng = np.random.default_rng(0)
    gos = []
    for o in outs:
        shape = tuple(o.shape)
        go = rng.standard_normal(shape) + (1j * rng.standard_normal(shape) if o.is_complex()
                                           else 0)
        gos.append(m.tensor(go, dtype=o.dtype))
    diff = [x for x in xs if x.requires_grad]
    grads = m.autograd.grad(outs, diff, gos, allow_unused=True) if outs else ()
    return outs, grads


@pytest.mark.parametrize("row", _complex_rows())
def test_op_table_row_in_complex(row: Any) -> None:
    arrays = _complex_arrays(row)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            theirs, their_grads = _run_row(torch, row, arrays)
        except Exception as e:  # torch has no complex kernel: npgrad refuses it alike
            with pytest.raises(type(e)):
                _run_row(npgrad, row, arrays)
            return
        mine, mine_grads = _run_row(npgrad, row, arrays)
    tol = dict(rtol=1e-9 * row.tol, atol=1e-10 * row.tol)
    for a, b in zip(mine, theirs):
        assert _name(a.dtype) == _name(b.dtype)
        assert type(a.grad_fn).__name__ == type(b.grad_fn).__name__
        np.testing.assert_allclose(_np(a), _np(b), **tol)
    for a, b in zip(mine_grads, their_grads):
        assert (a is None) == (b is None)
        if a is not None:
            np.testing.assert_allclose(_np(a), _np(b), **tol)
    if not row.no_gradcheck and mine:
        inputs = [npgrad.tensor(a, requires_grad=r) for a, r in zip(arrays, row.rg)]
        assert gradcheck(lambda *xs: row.fn(npgrad, *xs), inputs, atol=1e-6, rtol=1e-5)
        if not row.no_gradgradcheck:
            assert gradgradcheck(lambda *xs: row.fn(npgrad, *xs), inputs, atol=1e-5, rtol=1e-4)


# -- conversions, adjoints, files ------------------------------------------------------------

MORE_ERRORS = ["m.tensor(1j, dtype=m.float32)", "m.tensor([1j, 2], dtype=m.float64)",
               "m.tensor([1j], dtype=m.int64)", "float(m.tensor(1j))", "int(m.tensor(1+1j))",
               "m.tensor([1j]).mH", "m.tensor([1j]).adjoint()", "m.tensor([1j]).H",
               "m.ones(2, 2, 2, dtype=m.cfloat).H"]


@pytest.mark.parametrize("expr", MORE_ERRORS)
def test_conversion_and_adjoint_errors_match_torch(expr: str) -> None:
    assert_same_error(expr, lambda m: {"m": m})


def test_python_numbers_of_real_valued_complex_tensors() -> None:
    for m in (npgrad, torch):
        assert float(m.tensor(1.5 + 0j)) == 1.5 and int(m.tensor(2 + 0j)) == 2
        assert bool(m.tensor(1j)) and not bool(m.tensor(0j))


@pytest.mark.parametrize("expr", ["z.mH", "z.adjoint()", "z.H", "x.mH", "x.H", "z.mT"])
def test_adjoints_match_torch(expr: str) -> None:
    outs = []
    for m in (npgrad, torch):
        z = m.tensor([[1 + 2j, 3j], [0.5, -1 - 1j]], requires_grad=True)
        x = m.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
        y = eval(expr, {"z": z, "x": x})
        g, = m.autograd.grad(y, z if "z" in expr else x, m.ones_like(y) * (1 + 1j if y.is_complex()
                                                                           else 1))
        outs.append((type(y.grad_fn).__name__, y.is_conj(), _np(y), _np(g)))
    (n1, c1, v1, g1), (n2, c2, v2, g2) = outs
    assert (n1, c1) == (n2, c2)
    np.testing.assert_array_equal(v1, v2)
    np.testing.assert_array_equal(g1, g2)


def test_complex_tensors_interchange_with_torch_files(tmp_path: Any) -> None:
    z = npgrad.tensor([1 + 2j, -3j], dtype=npgrad.cdouble)
    npgrad.save({"z": z, "c": npgrad.tensor([0.5j])}, tmp_path / "a.pt")
    loaded = torch.load(tmp_path / "a.pt")
    assert loaded["z"].dtype == torch.complex128 and loaded["z"].tolist() == [1 + 2j, -3j]
    assert loaded["c"].dtype == torch.complex64
    torch.save({"w": torch.tensor([[1j, 2], [3, 4 - 1j]])}, tmp_path / "b.pt")
    w = npgrad.load(tmp_path / "b.pt")["w"]
    assert w.dtype is npgrad.complex64 and w.tolist() == [[1j, 2], [3, 4 - 1j]]


def _write_through_parts(m: Any) -> list:
    out = []
    x0 = m.tensor([[1., 2.], [3., 4.], [5., 6.]], dtype=m.double, requires_grad=True)
    x = x0 * 1
    m.view_as_complex(x)[1:].mul_(m.tensor([1j, 2 - 1j], dtype=m.cdouble))
    (x * m.arange(6.).reshape(3, 2)).sum().backward()
    out.append(x0.grad.numpy())
    z0 = m.tensor([1 + 2j, 3 - 1j, 0.5j], dtype=m.cdouble, requires_grad=True)
    z = z0 * 1
    z.imag[1:].add_(z0.real[:2] * 2)
    zr = z.real  # made before the next write: its history is rebuilt over the base's
    z.real[0].mul_(4)
    m.view_as_real(z)[2, 0] = 7.0
    (z * m.tensor([1j, 2, 1 + 1j], dtype=m.cdouble)).sum().abs().backward()
    out.append(z0.grad.numpy())
    out.append(np.array([type(zr.grad_fn).__name__]))
    out.append(zr.detach().numpy())
    return out


def test_in_place_writes_through_parts_views_match_torch() -> None:
    """CopySlices over a view of the other element size (a complex base's parts, a real
    base's pairs): values, the base's gradient and the rebuilt view history, as torch's."""
    for a, b in zip(_write_through_parts(npgrad), _write_through_parts(torch)):
        if a.dtype.kind in "U":
            assert a.tolist() == b.tolist()
        else:
            np.testing.assert_allclose(a, b, rtol=1e-12)


def test_complex_logaddexp_and_logcumsumexp_edges_match_torch() -> None:
    """Infinite and NaN parts: ordered by real part, two equal infinite real parts, NaN."""
    inf, nan = float("inf"), float("nan")
    a = [0.5 + 0.3j, -inf + 0j, -inf + 1j, inf + 0j, inf + 2j, 1e308 + 0j, 3 + 4j,
         complex(nan, 0), -inf + 0j, 2 + 1j]
    b = [1.1 - 0.4j, -inf + 0j, -inf + 2j, inf + 0j, 1 + 0j, 1e308 + 0j, 3 + 4j, 1 + 0j, 1 + 1j,
         -inf + 0j]
    for dt in ("cdouble", "cfloat"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # 1e308 overflows complex64, as in torch
            mine = npgrad.logaddexp(npgrad.tensor(a, dtype=getattr(npgrad, dt)),
                                    npgrad.tensor(b, dtype=getattr(npgrad, dt)))
        theirs = torch.logaddexp(torch.tensor(a, dtype=getattr(torch, dt)),
                                 torch.tensor(b, dtype=getattr(torch, dt)))
        np.testing.assert_allclose(mine.numpy(), theirs.numpy(), rtol=1e-6 if dt == "cfloat"
                                   else 1e-15)
        assert _name(mine.dtype) == _name(theirs.dtype)
    scan = [-inf + 1j, -inf + 2j, 1j, complex(nan, 1), 2 + 0j]
    np.testing.assert_array_equal(
        npgrad.logcumsumexp(npgrad.tensor(scan, dtype=npgrad.cdouble), 0).numpy(),
        torch.logcumsumexp(torch.tensor(scan, dtype=torch.cdouble), 0).numpy())


def test_complex_logaddexp_by_hand() -> None:
    # log(e^{i pi/2} + e^{-i pi/2}) = log(2 cos(pi/2)) -> log of 0: a real part of -inf
    out = npgrad.logaddexp(npgrad.tensor([0.5j * np.pi, 0j], dtype=npgrad.cdouble),
                           npgrad.tensor([-0.5j * np.pi, 0j], dtype=npgrad.cdouble))
    assert out[1].item() == pytest.approx(np.log(2))
    assert out[0].real.item() < -30
