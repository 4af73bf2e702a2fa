"""bfloat16 against torch's CPU build: casts bit for bit (rounding, overflow, NaN), per-op results
computed as torch's kernels compute them, promotion, printing, and bf16 weights through a model."""
from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

import npgrad

torch = pytest.importorskip("torch")
pytest.importorskip("ml_dtypes", reason="needs the bf16 extra: pip install -e '.[bf16]'")

RNG = np.random.default_rng(0)


def t_bits(t) -> np.ndarray:
    return t.detach().view(torch.int16).numpy().view(np.uint16)


def n_bits(t) -> np.ndarray:
    return t.detach()._data.view(np.uint16)


def pair(data: np.ndarray):
    """The same bf16 tensor in both libraries (made by torch's cast)."""
    theirs = torch.from_numpy(data.copy()).to(torch.bfloat16)
    mine = npgrad.from_numpy(t_bits(theirs).copy().view(npgrad.bfloat16.np_dtype))
    return mine, theirs


def same_values(mine, theirs) -> tuple:
    a = mine.detach().float().numpy()
    b = theirs.detach().float().numpy()
    both_nan = np.isnan(a) & np.isnan(b)
    return np.array_equal(a[~both_nan], b[~both_nan]), np.array_equal(np.isnan(a), np.isnan(b))


# -- casts -------------------------------------------------------------------------------------

def test_cast_from_float32_every_bit_pattern_class():
    words = RNG.integers(0, 2 ** 32, 50000, dtype=np.uint64).astype(np.uint32)
    special = np.array([0x7F800001, 0x7FC00000, 0xFFC00000, 0x7FA00000, 0xFF800001, 0x7F800000,
                        0x7F7FFFFF, 0x3F808000, 0x3F818000, 0x3F808001, 0x00000001, 0x80000001,
                        0x00000000, 0x80000000, 0x7F7F8000, 0x007FFFFF], dtype=np.uint32)
    for w in (words, special, np.resize(special, 37)):
        f = w.view(np.float32)
        mine = npgrad.from_numpy(f.copy()).to(npgrad.bfloat16)
        theirs = torch.from_numpy(f.copy()).to(torch.bfloat16)
        np.testing.assert_array_equal(n_bits(mine), t_bits(theirs))  # NaN bits included


def test_cast_from_float64_float16_and_integers():
    d = RNG.standard_normal(20000) * 10.0 ** RNG.integers(-45, 45, 20000)
    d[:4] = [np.nan, -np.nan, np.inf, 1 + 2 ** -8 + 2 ** -40]  # a tie only after float32 rounding
    h = (RNG.standard_normal(3000) * 100).astype(np.float16)
    ints = RNG.integers(-2 ** 40, 2 ** 40, 3000)
    small = RNG.integers(-128, 127, 300).astype(np.int8)
    for data in (d, h, ints, small, np.array([True, False])):
        mine = npgrad.from_numpy(data.copy()).to(npgrad.bfloat16)
        theirs = torch.from_numpy(data.copy()).to(torch.bfloat16)
        nan = np.isnan(theirs.float().numpy())
        np.testing.assert_array_equal(nan, np.isnan(mine.float().numpy()))
        # from float64, torch writes one NaN pattern in its vector loop and another in the
        # scalar tail; only NaN-ness is compared there
        np.testing.assert_array_equal(n_bits(mine)[~nan], t_bits(theirs)[~nan])


def test_cast_back_is_exact():
    mine, theirs = pair((RNG.standard_normal(1000) * 5).astype(np.float32))
    for to in ("float", "double", "half", "long", "int", "bool"):
        a = getattr(mine, to)().numpy()
        b = getattr(theirs, to)().numpy()
        np.testing.assert_array_equal(a, b)
        assert a.dtype == b.dtype


def test_tensor_from_python_data():
    data = [1.5, 3.3, -1e-3, 1e4, 3.0e38, float("inf"), 100000.0]
    np.testing.assert_array_equal(n_bits(npgrad.tensor(data, dtype=npgrad.bfloat16)),
                                  t_bits(torch.tensor(data, dtype=torch.bfloat16)))
    assert npgrad.tensor(3.3, dtype=npgrad.bfloat16).item() == \
        torch.tensor(3.3, dtype=torch.bfloat16).item() == 3.296875
    assert npgrad.tensor([1.5], dtype=npgrad.bfloat16).tolist() == [1.5]


# -- per-op results ------------------------------------------------------------------------------

X = (RNG.standard_normal(1000) * 3).astype(np.float32)
Y = (RNG.standard_normal(1000) * 3).astype(np.float32)

EXACT_OPS = {
    "add": lambda a, b: a + b, "sub": lambda a, b: a - b, "mul": lambda a, b: a * b,
    "div": lambda a, b: a / b, "neg": lambda a, b: -a,
    "mul_scalar": lambda a, b: a * 0.1, "div_scalar": lambda a, b: a / 3,
    "add_scalar": lambda a, b: a + 0.3, "sub_scalar": lambda a, b: a - 1.7,
    "rsub_scalar": lambda a, b: 0.3 - a, "rdiv_scalar": lambda a, b: 2.5 / a,
    "pow_scalar": lambda a, b: a.abs() ** 1.7, "square": lambda a, b: a ** 2,
    "gt_scalar": lambda a, b: a > 1.7, "eq": lambda a, b: a == b,
    "sqrt": lambda a, b: a.abs().sqrt(), "tanh": lambda a, b: a.tanh(),
    "sigmoid": lambda a, b: a.sigmoid(), "relu": lambda a, b: a.relu(),
    "abs": lambda a, b: a.abs(), "maximum": lambda a, b: a.maximum(b),
    "sum": lambda a, b: a.sum(), "mean": lambda a, b: a.mean(), "max": lambda a, b: a.max(),
    "sum_dim": lambda a, b: a.reshape(10, 100).sum(0),
    "mean_dim": lambda a, b: a.reshape(10, 100).mean(1),
    "softmax": lambda a, b: a.reshape(10, 100).softmax(-1),
    "matmul": lambda a, b: a.reshape(10, 100) @ b.reshape(100, 10),
    "mm_small": lambda a, b: a.reshape(40, 25)[:, :5] @ b.reshape(200, 5)[:5],
    "bmm": lambda a, b: a.reshape(4, 10, 25) @ b.reshape(4, 25, 10),
    "mv": lambda a, b: a.reshape(10, 100) @ b[:100],
    "reshape_index": lambda a, b: a.reshape(10, 100)[2:5, ::3].t().contiguous(),
    "expand_mul": lambda a, b: a[:3].unsqueeze(0).expand(2, 3) * b[:2].unsqueeze(1),
}


@pytest.mark.parametrize("name", sorted(EXACT_OPS))
def test_op_bit_for_bit(name):
    op = EXACT_OPS[name]
    (xm, xt), (ym, yt) = pair(X), pair(Y)
    with np.errstate(all="ignore"):
        mine, theirs = op(xm, ym), op(xt, yt)
    assert repr(mine.dtype).split(".")[1] == repr(theirs.dtype).split(".")[1]
    assert tuple(mine.shape) == tuple(theirs.shape)
    if mine.dtype is npgrad.bool:
        np.testing.assert_array_equal(mine.numpy(), theirs.numpy())
    else:
        assert same_values(mine, theirs) == (True, True)


@pytest.mark.parametrize("name", ["exp", "log_softmax", "log", "sin"])
def test_transcendental_within_one_ulp(name):
    ops = {"exp": lambda a: a.exp(), "log_softmax": lambda a: a.reshape(10, 100).log_softmax(-1),
           "log": lambda a: a.abs().log(), "sin": lambda a: a.sin()}
    xm, xt = pair(X)
    mine, theirs = ops[name](xm), ops[name](xt)
    assert mine.dtype is npgrad.bfloat16
    a, b = mine.float().numpy(), theirs.float().numpy()
    ulp = np.abs(b) * 2.0 ** -7 + 1e-30
    assert np.all(np.abs(a - b) <= ulp)
    assert np.mean(a == b) > 0.9


def test_linear_and_layer_norm_with_bf16_weights():
    import torch.nn.functional as TF

    import npgrad.nn.functional as NF

    W = (RNG.standard_normal((10, 100)) * 0.1).astype(np.float32)
    b = (RNG.standard_normal(10) * 0.1).astype(np.float32)
    g = RNG.standard_normal(100).astype(np.float32)
    (xm, xt), (wm, wt), (bm, bt), (gm, gt) = pair(X), pair(W), pair(b), pair(g)
    cases = [
        (NF.linear(xm.reshape(10, 100), wm, bm), TF.linear(xt.reshape(10, 100), wt, bt)),
        (NF.linear(xm.reshape(2, 5, 100), wm, bm), TF.linear(xt.reshape(2, 5, 100), wt, bt)),
        (NF.linear(xm.reshape(10, 100), wm), TF.linear(xt.reshape(10, 100), wt)),
        (NF.layer_norm(xm.reshape(10, 100), (100,)), TF.layer_norm(xt.reshape(10, 100), (100,))),
        (NF.layer_norm(xm.reshape(10, 100), (100,), gm, gm),
         TF.layer_norm(xt.reshape(10, 100), (100,), gt, gt)),
        (NF.softmax(NF.linear(xm.reshape(10, 100), wm, bm), -1),
         TF.softmax(TF.linear(xt.reshape(10, 100), wt, bt), -1)),
    ]
    for mine, theirs in cases:
        assert mine.dtype is npgrad.bfloat16 and theirs.dtype is torch.bfloat16
        assert same_values(mine, theirs) == (True, True)


def test_bf16_model_state_dict_runs():
    tmodel = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 4))
    tmodel = tmodel.to(torch.bfloat16)
    nmodel = npgrad.nn.Sequential(npgrad.nn.Linear(8, 16), npgrad.nn.ReLU(),
                                  npgrad.nn.Linear(16, 4)).bfloat16()
    state = {k: npgrad.from_numpy(t_bits(v).copy().view(npgrad.bfloat16.np_dtype))
             for k, v in tmodel.state_dict().items()}
    nmodel.load_state_dict(state)
    assert all(p.dtype is npgrad.bfloat16 for p in nmodel.parameters())
    xm, xt = pair((RNG.standard_normal((5, 8))).astype(np.float32))
    mine, theirs = nmodel(xm), tmodel(xt)
    assert same_values(mine, theirs) == (True, True)
    assert mine.dtype is npgrad.bfloat16 and mine.grad_fn is not None
    # a training step's gradients come back in bf16, close to torch's
    mine.float().sum().backward()
    theirs.float().sum().backward()
    for (name, p), q in zip(nmodel.named_parameters(), tmodel.parameters()):
        assert p.grad.dtype is npgrad.bfloat16, name
        np.testing.assert_allclose(p.grad.float().numpy(), q.grad.float().numpy(), rtol=2e-2,
                                   atol=2e-2)


# -- promotion ----------------------------------------------------------------------------------

@pytest.mark.parametrize("other", ["float16", "float32", "float64", "int64", "int32", "uint8",
                                   "bool"])
def test_promotion(other):
    nb, tb = npgrad.bfloat16, torch.bfloat16
    no, to = getattr(npgrad, other if other != "bool" else "bool"), getattr(torch, other)

    def name(d):
        return repr(d).split(".")[1]

    assert name(npgrad.promote_types(nb, no)) == name(torch.promote_types(tb, to))
    assert name((npgrad.ones(2, dtype=nb) + npgrad.ones(2, dtype=no)).dtype) == \
        name((torch.ones(2, dtype=tb) + torch.ones(2, dtype=to)).dtype)
    # a 0-dim bf16 tensor changes a tensor's dtype only across categories
    assert name((npgrad.ones(2, dtype=no) + npgrad.tensor(1, dtype=nb)).dtype) == \
        name((torch.ones(2, dtype=to) + torch.tensor(1, dtype=tb)).dtype)
    for scalar in (2, 2.5, True):
        assert name((npgrad.ones(2, dtype=nb) * scalar).dtype) == \
            name((torch.ones(2, dtype=tb) * scalar).dtype)


# -- dtype object, printing, conversions ---------------------------------------------------------

def test_dtype_attributes_and_legacy_type():
    d = npgrad.bfloat16
    assert (d.is_floating_point, d.is_signed, d.itemsize) == (
        torch.bfloat16.is_floating_point, torch.bfloat16.is_signed, torch.bfloat16.itemsize)
    x = npgrad.ones(3, dtype=d)
    assert x.type() == torch.ones(3, dtype=torch.bfloat16).type() == "torch.BFloat16Tensor"
    assert x.is_floating_point() and x.element_size() == 2
    assert npgrad.BFloat16Tensor([1.5, 2.0]).dtype is d
    assert npgrad.tensor([1.5]).type("torch.BFloat16Tensor").dtype is d
    assert isinstance(x, npgrad.BFloat16Tensor) and not isinstance(x, npgrad.FloatTensor)


@pytest.mark.parametrize("data", [
    [1.5, 2.25, -3.0078125], [1e-8, 3e38, float("inf"), float("nan")], [100000.0],
    [1e-3, 1e4], [[0.1, 0.2], [0.3, 0.4]], list(np.linspace(-5, 5, 40)),
])
def test_repr(data):
    mine = npgrad.tensor(data, dtype=npgrad.bfloat16)
    theirs = torch.tensor(data, dtype=torch.bfloat16)
    assert repr(mine).replace("npgrad.", "torch.") == repr(theirs)
    assert repr(mine.requires_grad_()).replace("npgrad.", "torch.") == \
        repr(theirs.requires_grad_())


def test_to_and_back_is_differentiable():
    x = npgrad.tensor([1.5, -2.0], requires_grad=True)
    y = x.to(npgrad.bfloat16)
    assert type(y.grad_fn).__name__ == "ToCopyBackward0"
    (y * y).float().sum().backward()
    xt = torch.tensor([1.5, -2.0], requires_grad=True)
    (xt.to(torch.bfloat16) ** 2).float().sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), xt.grad.numpy())
    assert x.grad.dtype is npgrad.float32


def test_module_to_bfloat16():
    m = npgrad.nn.Linear(3, 2).to(npgrad.bfloat16)
    assert m.weight.dtype is npgrad.bfloat16 and m.weight.is_leaf and m.weight.requires_grad
    assert m.float().weight.dtype is npgrad.float32
    assert m.bfloat16().bias.dtype is npgrad.bfloat16


def test_without_ml_dtypes_the_error_says_what_to_install():
    code = ("import sys; sys.modules['ml_dtypes'] = None\n"
            "import npgrad\n"
            "print(repr(npgrad.bfloat16))\n"
            "try:\n"
            "    npgrad.zeros(2, dtype=npgrad.bfloat16)\n"
            "except RuntimeError as e:\n"
            "    print(e)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.splitlines()
    assert out[0] == "npgrad.bfloat16"
    assert out[1] == "bfloat16 tensors need the optional package ml_dtypes " \
                     "(pip install 'npgrad[bf16]' or pip install ml_dtypes)"


def test_import_npgrad_does_not_load_ml_dtypes():
    code = "import sys, npgrad; print('ml_dtypes' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
