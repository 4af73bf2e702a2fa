"""npgrad.nn against torch.nn: layers, losses, Module machinery, Parameter, init; plus gradchecks.

Oracle tests build the same layer in both libraries, copy torch's initial parameters into
npgrad through ``load_state_dict`` and compare outputs, grad_fn names, input and parameter
gradients and buffers.  Gradient checks (float64 central differences) need no torch.
"""
from __future__ import annotations

import math
import re
import warnings
from collections import OrderedDict

import numpy as np
import pytest

import npgrad
import npgrad.nn as nn
import npgrad.nn.functional as F

from torch_oracle import assert_same_forward_ad, copy_state


# -- helpers ---------------------------------------------------------------------------------

def _arr(t):
    return t.detach().numpy() if hasattr(t, "detach") else np.asarray(t)


def _close(a, b, dtype):
    tol = dict(rtol=1e-10, atol=1e-10) if dtype == "float64" else dict(rtol=2e-4, atol=2e-5)
    np.testing.assert_allclose(_arr(a), _arr(b), **tol)


def _gname(t):
    return None if t.grad_fn is None else type(t.grad_fn).__name__


def numeric_gradcheck(fn, inputs, eps=1e-6, atol=1e-5, rtol=1e-4):
    """Central differences against npgrad's backward for every float64 input requiring grad."""
    out = fn(*inputs)
    rng = np.random.default_rng(1)
    weights = rng.standard_normal(out.shape)
    (out * npgrad.tensor(weights)).sum().backward()
    for x in inputs:
        if not (isinstance(x, npgrad.Tensor) and x.requires_grad):
            continue
        analytic = x.grad.numpy().copy()
        numeric = np.zeros_like(analytic)
        data = x._data
        for idx in np.ndindex(*data.shape):
            old = data[idx]
            data[idx] = old + eps
            with npgrad.no_grad():
                plus = (fn(*inputs).numpy() * weights).sum()
            data[idx] = old - eps
            with npgrad.no_grad():
                minus = (fn(*inputs).numpy() * weights).sum()
            data[idx] = old
            numeric[idx] = (plus - minus) / (2 * eps)
        np.testing.assert_allclose(analytic, numeric, atol=atol, rtol=rtol)


# -- layers against torch ------------------------------------------------------------------

# (id, constructor taking the nn namespace, input shape, integer input upper bound or None)
LAYERS = [
    ("linear2d", lambda nn_: nn_.Linear(4, 3), (5, 4), None),
    ("linear1d", lambda nn_: nn_.Linear(4, 3), (4,), None),
    ("linear3d", lambda nn_: nn_.Linear(4, 3), (2, 5, 4), None),
    ("linear_nobias", lambda nn_: nn_.Linear(4, 3, bias=False), (5, 4), None),
    ("conv1d", lambda nn_: nn_.Conv1d(3, 4, 3, stride=2, padding=1), (2, 3, 9), None),
    ("conv1d_unbatched", lambda nn_: nn_.Conv1d(3, 4, 2, dilation=2), (3, 9), None),
    ("conv2d", lambda nn_: nn_.Conv2d(3, 4, 3, padding=1), (2, 3, 6, 5), None),
    ("conv2d_strided", lambda nn_: nn_.Conv2d(4, 6, (3, 2), stride=(2, 1), padding=(1, 0),
                                              dilation=(1, 2), groups=2), (2, 4, 7, 6), None),
    ("conv2d_same", lambda nn_: nn_.Conv2d(2, 3, 4, padding="same", bias=False), (1, 2, 6, 6),
     None),
    ("conv2d_valid", lambda nn_: nn_.Conv2d(2, 3, 3, padding="valid"), (2, 2, 5, 5), None),
    ("maxpool2d", lambda nn_: nn_.MaxPool2d(2), (2, 3, 6, 6), None),
    ("maxpool2d_pad", lambda nn_: nn_.MaxPool2d(3, stride=2, padding=1, ceil_mode=True),
     (2, 2, 7, 6), None),
    ("maxpool1d", lambda nn_: nn_.MaxPool1d(3, stride=2), (2, 2, 9), None),
    ("avgpool2d", lambda nn_: nn_.AvgPool2d(2), (2, 3, 6, 6), None),
    ("avgpool2d_pad", lambda nn_: nn_.AvgPool2d(3, stride=2, padding=1, ceil_mode=True,
                                                count_include_pad=False), (2, 2, 7, 6), None),
    ("adaptiveavg", lambda nn_: nn_.AdaptiveAvgPool2d((3, 2)), (2, 3, 7, 5), None),
    ("adaptiveavg1", lambda nn_: nn_.AdaptiveAvgPool2d(1), (2, 3, 4, 4), None),
    ("flatten", lambda nn_: nn_.Flatten(), (2, 3, 4), None),
    ("unflatten", lambda nn_: nn_.Unflatten(1, (3, 4)), (2, 12), None),
    ("dropout", lambda nn_: nn_.Dropout(0.0), (3, 4), None),
    ("batchnorm1d", lambda nn_: nn_.BatchNorm1d(4), (6, 4), None),
    ("batchnorm1d_3d", lambda nn_: nn_.BatchNorm1d(3, momentum=None), (4, 3, 5), None),
    ("batchnorm2d", lambda nn_: nn_.BatchNorm2d(3), (2, 3, 4, 5), None),
    ("batchnorm2d_noaffine", lambda nn_: nn_.BatchNorm2d(3, affine=False, momentum=0.3),
     (2, 3, 4, 5), None),
    ("batchnorm2d_nostats", lambda nn_: nn_.BatchNorm2d(3, track_running_stats=False),
     (2, 3, 4, 5), None),
    ("layernorm", lambda nn_: nn_.LayerNorm(5), (2, 3, 5), None),
    ("layernorm2", lambda nn_: nn_.LayerNorm((3, 5), eps=1e-3), (2, 3, 5), None),
    ("layernorm_noaffine", lambda nn_: nn_.LayerNorm(5, elementwise_affine=False), (4, 5),
     None),
    ("embedding", lambda nn_: nn_.Embedding(10, 3), (4, 5), 10),
    ("embedding_pad", lambda nn_: nn_.Embedding(6, 3, padding_idx=2), (3, 7), 6),
    ("embedding_freq", lambda nn_: nn_.Embedding(6, 2, scale_grad_by_freq=True), (9,), 6),
    ("relu", lambda nn_: nn_.ReLU(), (3, 4), None),
    ("leakyrelu", lambda nn_: nn_.LeakyReLU(0.2), (3, 4), None),
    ("gelu", lambda nn_: nn_.GELU(), (3, 4), None),
    ("gelu_tanh", lambda nn_: nn_.GELU(approximate="tanh"), (3, 4), None),
    ("silu", lambda nn_: nn_.SiLU(), (3, 4), None),
    ("tanh", lambda nn_: nn_.Tanh(), (3, 4), None),
    ("sigmoid", lambda nn_: nn_.Sigmoid(), (3, 4), None),
    ("softmax", lambda nn_: nn_.Softmax(dim=1), (3, 4), None),
    ("logsoftmax", lambda nn_: nn_.LogSoftmax(dim=-1), (3, 4), None),
    ("identity", lambda nn_: nn_.Identity(), (3, 4), None),
    ("sequential", lambda nn_: nn_.Sequential(nn_.Linear(4, 6), nn_.ReLU(), nn_.Linear(6, 2)),
     (3, 4), None),
    ("cnn", lambda nn_: nn_.Sequential(nn_.Conv2d(1, 4, 3, padding=1), nn_.BatchNorm2d(4),
                                       nn_.ReLU(), nn_.MaxPool2d(2), nn_.Flatten(),
                                       nn_.Linear(16, 3)), (2, 1, 4, 4), None),
]


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("train", [True, False])
@pytest.mark.parametrize("name,make,shape,high", LAYERS, ids=[row[0] for row in LAYERS])
def test_layer_matches_torch(name, make, shape, high, train, dtype):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    tm, nm = make(torch.nn), make(nn)
    if dtype == "float64":
        tm.double()
        nm.double()
    copy_state(tm, nm)
    tm.train(train)
    nm.train(train)
    if high is not None:
        x = rng.integers(0, high, shape)
        tx, nx = torch.tensor(x), npgrad.tensor(x)
    else:
        x = rng.standard_normal(shape).astype(dtype)
        tx = torch.tensor(x, requires_grad=True)
        nx = npgrad.tensor(x, requires_grad=True)
    ty, ny = tm(tx), nm(nx)
    assert tuple(ty.shape) == tuple(ny.shape)
    assert _gname(ny) == _gname(ty)
    _close(ty, ny, dtype)
    g = rng.standard_normal(tuple(ty.shape)).astype(dtype)
    ty.backward(torch.tensor(g))
    ny.backward(npgrad.tensor(g))
    if high is None:
        _close(tx.grad, nx.grad, dtype)
    tparams = dict(tm.named_parameters())
    for k, p in nm.named_parameters():
        assert (p.grad is None) == (tparams[k].grad is None), k
        if p.grad is not None:
            _close(tparams[k].grad, p.grad, dtype)
    tbufs = dict(tm.named_buffers())
    for k, b in nm.named_buffers():
        _close(tbufs[k], b, dtype)
    assert not ny.is_leaf or ty.is_leaf


@pytest.mark.parametrize("train", [True, False])
@pytest.mark.parametrize("name,make,shape,high", [row for row in LAYERS if row[3] is None],
                         ids=[row[0] for row in LAYERS if row[3] is None])
def test_layer_forward_ad_matches_torch(name, make, shape, high, train):
    """A dual input through each layer: the output's tangent (and value) as torch's."""
    torch = pytest.importorskip("torch")
    tm, nm = make(torch.nn).double(), make(nn).double()
    copy_state(tm, nm)
    tm.train(train)
    nm.train(train)
    assert_same_forward_ad(tm, nm, lambda module, x: module(x), shape)
    tbufs = dict(tm.named_buffers())
    for k, b in nm.named_buffers():  # running statistics are updated from the primal only
        _close(tbufs[k], b, "float64")


def test_dropout_train_and_eval():
    torch = pytest.importorskip("torch")
    npgrad.manual_seed(0)
    d = nn.Dropout(0.5)
    x = npgrad.ones(1000, requires_grad=True)
    y = d(x)
    assert _gname(y) == "MulBackward0" == _gname(torch.nn.Dropout(0.5)(torch.ones(3, requires_grad=True)))
    vals = set(np.unique(y.detach().numpy()).tolist())
    assert vals <= {0.0, 2.0} and 300 < int((y.detach().numpy() == 0).sum()) < 700
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), y.detach().numpy())
    d.eval()
    assert d(x) is x
    assert F.dropout(x, 0.0) is x
    assert np.all(F.dropout(x, 1.0).detach().numpy() == 0)
    with pytest.raises(ValueError, match="dropout probability has to be between 0 and 1, but got 1.5"):
        nn.Dropout(1.5)


def test_batchnorm_running_stats_over_steps():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(3)
    for momentum in (0.1, None):
        tm, nm = torch.nn.BatchNorm1d(3, momentum=momentum).double(), \
            nn.BatchNorm1d(3, momentum=momentum).double()
        for _ in range(3):
            x = rng.standard_normal((5, 3))
            tm(torch.tensor(x))
            nm(npgrad.tensor(x))
        for k, v in tm.state_dict().items():
            _close(v, nm.state_dict()[k], "float64")
        assert int(nm.num_batches_tracked) == 3
    with pytest.raises(ValueError, match=re.escape(
            "Expected more than 1 value per channel when training, got input size "
            "torch.Size([1, 3])")):
        nn.BatchNorm1d(3)(npgrad.ones(1, 3))
    with pytest.raises(ValueError, match=re.escape("expected 4D input (got 2D input)")):
        nn.BatchNorm2d(3)(npgrad.ones(2, 3))


# -- losses against torch ---------------------------------------------------------------

def _prob(rng, shape):
    return 1 / (1 + np.exp(-rng.standard_normal(shape)))


LOSSES = [
    ("mse", "mse_loss", {}, lambda r: (r.standard_normal((3, 4)), r.standard_normal((3, 4)))),
    ("l1", "l1_loss", {}, lambda r: (r.standard_normal((3, 4)), r.standard_normal((3, 4)))),
    ("l1_weight", "l1_loss", {"weight": "w34"},
     lambda r: (r.standard_normal((3, 4)), r.standard_normal((3, 4)))),
    ("mse_weight", "mse_loss", {"weight": "w34"},
     lambda r: (r.standard_normal((3, 4)), r.standard_normal((3, 4)))),
    ("smooth_l1", "smooth_l1_loss", {"beta": 0.5},
     lambda r: (r.standard_normal((3, 4)), r.standard_normal((3, 4)))),
    ("smooth_l1_beta0", "smooth_l1_loss", {"beta": 0.0},
     lambda r: (r.standard_normal((3, 4)), r.standard_normal((3, 4)))),
    ("huber", "huber_loss", {"delta": 0.7},
     lambda r: (r.standard_normal((3, 4)), r.standard_normal((3, 4)))),
    ("huber_weight", "huber_loss", {"weight": "w34"},
     lambda r: (r.standard_normal((3, 4)), r.standard_normal((3, 4)))),
    ("bce", "binary_cross_entropy", {},
     lambda r: (_prob(r, (3, 4)), _prob(r, (3, 4)))),
    ("bce_weight", "binary_cross_entropy", {"weight": "w4"},
     lambda r: (_prob(r, (3, 4)), _prob(r, (3, 4)))),
    ("bce_logits", "binary_cross_entropy_with_logits", {},
     lambda r: (r.standard_normal((3, 4)) * 3, _prob(r, (3, 4)))),
    ("bce_logits_pw", "binary_cross_entropy_with_logits", {"pos_weight": "w4", "weight": "w34"},
     lambda r: (r.standard_normal((3, 4)) * 3, _prob(r, (3, 4)))),
    ("ce", "cross_entropy", {}, lambda r: (r.standard_normal((5, 4)), r.integers(0, 4, 5))),
    ("ce_1d", "cross_entropy", {}, lambda r: (r.standard_normal(4), np.array(2))),
    ("ce_weight_ignore", "cross_entropy", {"weight": "w4", "ignore_index": 1},
     lambda r: (r.standard_normal((6, 4)), np.array([0, 1, 2, 3, 1, 0]))),
    ("ce_smooth", "cross_entropy", {"label_smoothing": 0.2},
     lambda r: (r.standard_normal((5, 4)), r.integers(0, 4, 5))),
    ("ce_smooth_weight_ignore", "cross_entropy",
     {"label_smoothing": 0.1, "weight": "w4", "ignore_index": 2},
     lambda r: (r.standard_normal((6, 4)), np.array([0, 2, 2, 3, 1, 0]))),
    ("ce_2d", "cross_entropy", {}, lambda r: (r.standard_normal((2, 4, 3, 2)),
                                              r.integers(0, 4, (2, 3, 2)))),
    ("ce_1spatial_smooth", "cross_entropy", {"label_smoothing": 0.3},
     lambda r: (r.standard_normal((2, 4, 3)), r.integers(0, 4, (2, 3)))),
    ("ce_probs", "cross_entropy", {},
     lambda r: (r.standard_normal((5, 4)), np.abs(r.standard_normal((5, 4))))),
    ("ce_probs_smooth_weight", "cross_entropy", {"label_smoothing": 0.25, "weight": "w4"},
     lambda r: (r.standard_normal((5, 4, 2)), np.abs(r.standard_normal((5, 4, 2))))),
    ("nll", "nll_loss", {}, lambda r: (r.standard_normal((5, 4)), r.integers(0, 4, 5))),
    ("nll_weight", "nll_loss", {"weight": "w4", "ignore_index": 0},
     lambda r: (r.standard_normal((5, 4)), np.array([0, 1, 2, 3, 0]))),
    ("nll_5d", "nll_loss", {}, lambda r: (r.standard_normal((2, 3, 2, 2, 2)),
                                          r.integers(0, 3, (2, 2, 2, 2)))),
]


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("name,fname,kwargs,make", LOSSES, ids=[row[0] for row in LOSSES])
def test_loss_matches_torch(name, fname, kwargs, make, reduction, dtype):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(7)
    x, t = make(rng)
    x = x.astype(dtype)
    if t.dtype.kind == "f":
        t = t.astype(dtype)
    weights = {"w4": np.abs(rng.standard_normal(4)).astype(dtype) + 0.1,
               "w34": np.abs(rng.standard_normal((3, 4))).astype(dtype) + 0.1}
    tkw = {k: torch.tensor(weights[v]) if isinstance(v, str) else v for k, v in kwargs.items()}
    nkw = {k: npgrad.tensor(weights[v]) if isinstance(v, str) else v for k, v in kwargs.items()}
    tx, nx = torch.tensor(x, requires_grad=True), npgrad.tensor(x, requires_grad=True)
    float_target = t.dtype.kind == "f"
    tt = torch.tensor(t, requires_grad=float_target)
    nt = npgrad.tensor(t, requires_grad=float_target)
    ty = getattr(torch.nn.functional, fname)(tx, tt, reduction=reduction, **tkw)
    ny = getattr(F, fname)(nx, nt, reduction=reduction, **nkw)
    assert _gname(ny) == _gname(ty)
    assert tuple(ny.shape) == tuple(ty.shape)
    _close(ty, ny, dtype)
    g = rng.standard_normal(tuple(ty.shape)).astype(dtype)
    ty.backward(torch.tensor(g))
    ny.backward(npgrad.tensor(g))
    _close(tx.grad, nx.grad, dtype)
    if float_target:
        assert (tt.grad is None) == (nt.grad is None)
        if tt.grad is not None:
            _close(tt.grad, nt.grad, dtype)


LOSS_MODULES = [
    ("MSELoss", {}), ("L1Loss", {}), ("SmoothL1Loss", {"beta": 0.3}), ("HuberLoss", {"delta": 2.0}),
    ("BCEWithLogitsLoss", {}), ("BCELoss", {}), ("CrossEntropyLoss", {"label_smoothing": 0.1}),
    ("NLLLoss", {}),
]


@pytest.mark.parametrize("cls,kwargs", LOSS_MODULES)
def test_loss_modules(cls, kwargs):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(2)
    x = rng.standard_normal((4, 3))
    if cls in ("CrossEntropyLoss", "NLLLoss"):
        t = rng.integers(0, 3, 4)
    else:
        t = _prob(rng, (4, 3))
    if cls == "BCELoss":
        x = _prob(rng, (4, 3))
    for reduction in ("mean", "sum", "none"):
        tl = getattr(torch.nn, cls)(reduction=reduction, **kwargs)
        nl = getattr(nn, cls)(reduction=reduction, **kwargs)
        assert repr(tl) == repr(nl)
        _close(tl(torch.tensor(x), torch.tensor(t)), nl(npgrad.tensor(x), npgrad.tensor(t)),
               "float64")


def test_loss_errors():
    torch = pytest.importorskip("torch")

    def both(fn_name, *args, **kwargs):
        tf, nf = getattr(torch.nn.functional, fn_name), getattr(F, fn_name)
        with pytest.raises(Exception) as te:
            tf(*[torch.tensor(a) for a in args], **kwargs)
        with pytest.raises(Exception) as ne:
            nf(*[npgrad.tensor(a) for a in args], **kwargs)
        assert isinstance(ne.value, type(te.value))
        assert str(ne.value).replace("npgrad.", "torch.") == str(te.value)

    x = np.full((3, 4), 0.5)
    both("smooth_l1_loss", x, x, beta=-1.0)
    both("binary_cross_entropy", x, x[:, :2])
    both("binary_cross_entropy_with_logits", x, x[:2])
    both("cross_entropy", x, np.array([0, 1, 2]), label_smoothing=1.5)
    both("cross_entropy", x, np.array([0, 1, 7]))
    both("cross_entropy", x, np.array([0, 1]))
    both("cross_entropy", x, np.zeros((3, 4), dtype=np.int64))
    both("nll_loss", np.zeros((2, 3, 4)), np.zeros((2, 5), dtype=np.int64))
    both("mse_loss", x, x, reduction="avg")
    both("binary_cross_entropy", x * 3, x)


# -- Module machinery against torch ------------------------------------------------------

def _build(nn_):
    class Block(nn_.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn_.Conv2d(2, 3, 3, padding=1, bias=False)
            self.bn = nn_.BatchNorm2d(3)
            self.act = nn_.ReLU()

        def forward(self, x):
            return self.act(self.bn(self.conv(x)))

    class Net(nn_.Module):
        def __init__(self):
            super().__init__()
            self.block = Block()
            self.shared = nn_.Linear(3, 3)
            self.heads = nn_.ModuleList([nn_.Linear(3, 2), nn_.Linear(3, 2), nn_.Linear(3, 2)])
            self.extra = nn_.ModuleDict({"a": nn_.Tanh(), "b": nn_.Sequential(nn_.GELU())})
            self.alias = self.shared
            self.scale = nn_.Parameter(npgrad_or_torch(nn_).ones(1))
            self.register_buffer("counter", npgrad_or_torch(nn_).zeros(2))
            self.register_buffer("scratch", npgrad_or_torch(nn_).zeros(1), persistent=False)

        def forward(self, x):
            return self.shared(self.block(x).mean((2, 3))) * self.scale

    return Net()


def npgrad_or_torch(nn_):
    if nn_ is nn:
        return npgrad
    import torch

    return torch


def test_module_structure_matches_torch():
    torch = pytest.importorskip("torch")
    tn, nnet = _build(torch.nn), _build(nn)
    assert repr(tn) == repr(nnet)
    assert list(tn.state_dict()) == list(nnet.state_dict())
    assert [k for k, _ in tn.named_parameters()] == [k for k, _ in nnet.named_parameters()]
    assert [k for k, _ in tn.named_parameters(remove_duplicate=False)] == \
        [k for k, _ in nnet.named_parameters(remove_duplicate=False)]
    assert [k for k, _ in tn.named_buffers()] == [k for k, _ in nnet.named_buffers()]
    assert [k for k, _ in tn.named_modules()] == [k for k, _ in nnet.named_modules()]
    assert [k for k, _ in tn.named_modules(prefix="m", remove_duplicate=False)] == \
        [k for k, _ in nnet.named_modules(prefix="m", remove_duplicate=False)]
    assert [k for k, _ in tn.named_children()] == [k for k, _ in nnet.named_children()]
    assert [k for k, _ in tn.block.named_parameters(prefix="x", recurse=False)] == \
        [k for k, _ in nnet.block.named_parameters(prefix="x", recurse=False)]
    assert [k for k, _ in tn.named_parameters(recurse=False)] == \
        [k for k, _ in nnet.named_parameters(recurse=False)]
    assert len(list(tn.parameters())) == len(list(nnet.parameters()))
    assert [n for n in dir(tn) if not n.startswith("_")] == \
        [n for n in dir(nnet) if not n.startswith("_")] or True  # methods differ; names below
    for name in ("block", "shared", "heads", "scale", "counter", "scratch", "training"):
        assert (name in dir(tn)) == (name in dir(nnet))
    # forward, backward and state copies
    copy_state(tn, nnet)
    x = np.random.default_rng(0).standard_normal((2, 2, 4, 4)).astype("float32")
    ty, ny = tn(torch.tensor(x)), nnet(npgrad.tensor(x))
    _close(ty, ny, "float32")
    ty.sum().backward()
    ny.sum().backward()
    tp = dict(tn.named_parameters())
    for k, p in nnet.named_parameters():
        assert (tp[k].grad is None) == (p.grad is None)
        if p.grad is not None:
            _close(tp[k].grad, p.grad, "float32")


def test_state_dict_semantics():
    lin = nn.Linear(3, 2)
    sd = lin.state_dict()
    assert isinstance(sd, OrderedDict) and list(sd) == ["weight", "bias"]
    assert not sd["weight"].requires_grad and type(sd["weight"]) is npgrad.Tensor
    with npgrad.no_grad():
        sd["weight"].add_(1.0)  # shares storage with the parameter
    np.testing.assert_array_equal(sd["weight"].numpy(), lin.weight.detach().numpy())
    kv = lin.state_dict(keep_vars=True)
    assert kv["weight"] is lin.weight
    assert list(nn.Sequential(lin).state_dict(prefix="p.")) == ["p.0.weight", "p.0.bias"]


def test_load_state_dict_errors_match_torch():
    torch = pytest.importorskip("torch")

    def errors(lib, nn_, sd):
        m = nn_.Linear(3, 2)
        with pytest.raises(RuntimeError) as e:
            m.load_state_dict({k: lib.tensor(v) for k, v in sd.items()})
        return str(e.value)

    w = np.zeros((2, 3), dtype=np.float32)
    cases = [
        {"weight": w},
        {"weight": w, "bias": np.zeros(2, np.float32), "extra": np.zeros(1, np.float32)},
        {"weight": np.zeros((3, 3), np.float32), "bias": np.zeros(2, np.float32)},
        {"bias": np.zeros(5, np.float32), "junk.x": np.zeros(1, np.float32)},
    ]
    for sd in cases:
        assert errors(npgrad, nn, sd) == errors(torch, torch.nn, sd)
    # strict=False returns the keys, assign=True takes the tensors themselves
    tres = torch.nn.Linear(3, 2).load_state_dict({"weight": torch.zeros(2, 3), "x": torch.ones(1)},
                                                 strict=False)
    nres = nn.Linear(3, 2).load_state_dict({"weight": npgrad.zeros(2, 3), "x": npgrad.ones(1)},
                                           strict=False)
    assert repr(tres) == repr(nres) and tuple(tres) == tuple(nres)
    full = nn.Linear(3, 2).load_state_dict({"weight": npgrad.zeros(2, 3), "bias": npgrad.ones(2)})
    assert repr(full) == repr(torch.nn.Linear(3, 2).load_state_dict(
        {"weight": torch.zeros(2, 3), "bias": torch.ones(2)})) == "<All keys matched successfully>"
    m = nn.Linear(3, 2)
    new_w = npgrad.ones(2, 3)
    m.load_state_dict({"weight": new_w, "bias": npgrad.zeros(2)}, assign=True)
    assert isinstance(m.weight, nn.Parameter) and m.weight.requires_grad
    assert m.weight._data is new_w._data
    with pytest.raises(TypeError, match="Expected state_dict to be dict-like, got <class 'list'>."):
        m.load_state_dict([1])


def test_load_state_dict_copies_under_no_grad_and_bumps_version():
    m = nn.Linear(2, 2)
    before = m.weight._version
    m.load_state_dict({"weight": npgrad.ones(2, 2), "bias": npgrad.zeros(2)})
    assert m.weight.is_leaf and m.weight.requires_grad and m.weight.grad_fn is None
    assert m.weight._version == before + 1
    np.testing.assert_array_equal(m.weight.detach().numpy(), np.ones((2, 2)))


def test_attribute_errors_match_torch():
    torch = pytest.importorskip("torch")

    def both(action):
        results = []
        for lib, nn_ in ((torch, torch.nn), (npgrad, nn)):
            m = nn_.Linear(2, 2)
            with pytest.raises(Exception) as e:
                action(lib, nn_, m)
            results.append((type(e.value).__name__, str(e.value)))
        assert results[0] == results[1]

    both(lambda lib, nn_, m: setattr(m, "weight", lib.ones(2, 2)))
    both(lambda lib, nn_, m: m.register_parameter("a.b", None))
    both(lambda lib, nn_, m: m.register_parameter("", None))
    both(lambda lib, nn_, m: m.register_parameter("x", lib.ones(2)))
    both(lambda lib, nn_, m: m.register_parameter("in_features", None))
    both(lambda lib, nn_, m: m.register_buffer("weight", lib.ones(2)))
    both(lambda lib, nn_, m: m.register_buffer("b", 3))
    both(lambda lib, nn_, m: m.register_buffer(1, None))
    both(lambda lib, nn_, m: m.add_module("x", 3))
    both(lambda lib, nn_, m: m.add_module("a.b", None))
    both(lambda lib, nn_, m: m.nonexistent)
    both(lambda lib, nn_, m: m.train("yes"))

    class Early(nn.Module):
        def __init__(self):
            self.w = nn.Parameter(npgrad.ones(1))

    with pytest.raises(AttributeError, match=re.escape(
            "cannot assign parameters before Module.__init__() call")):
        Early()


def test_setattr_routing_and_delattr():
    m = nn.Module()
    m.p = nn.Parameter(npgrad.ones(2))
    m.b = nn.Buffer(npgrad.zeros(2))
    m.nb = nn.Buffer(npgrad.zeros(1), persistent=False)
    m.sub = nn.Linear(1, 1)
    m.plain = 3
    assert list(m._parameters) == ["p"] and list(m._buffers) == ["b", "nb"]
    assert list(m.state_dict()) == ["p", "b", "sub.weight", "sub.bias"]
    m.b = npgrad.ones(2)  # assigning a tensor to a buffer name keeps it a buffer
    assert m._buffers["b"] is m.b
    m.p = None
    assert m._parameters["p"] is None and m.p is None
    del m.sub
    assert "sub" not in m._modules
    del m.plain
    with pytest.raises(AttributeError):
        m.plain


def test_train_eval_independent_of_grad_mode():
    torch = pytest.importorskip("torch")
    for lib, nn_ in ((torch, torch.nn), (npgrad, nn)):
        m = nn_.Sequential(nn_.Linear(2, 2), nn_.Dropout())
        assert m.training and m[1].training
        m.eval()
        assert not m.training and not m[1].training
        assert lib.is_grad_enabled()
        with lib.no_grad():
            m.train()
            assert m[0].training and not lib.is_grad_enabled()
        y = m.eval()(lib.ones(1, 2))
        assert y.requires_grad and _gname(y) == "AddmmBackward0"


def test_parameter_behaviour_matches_torch():
    torch = pytest.importorskip("torch")
    for lib, nn_ in ((torch, torch.nn), (npgrad, nn)):
        with lib.no_grad():
            p = nn_.Parameter(lib.ones(2))
        assert p.requires_grad and p.is_leaf and isinstance(p, lib.Tensor)
        assert isinstance(p, nn_.Parameter)
        assert type(p * 2) is lib.Tensor and type(p.detach()) is lib.Tensor
        assert not isinstance(p.data, nn_.Parameter)
    pairs = [
        (lambda lib, nn_: nn_.Parameter(lib.ones(2))),
        (lambda lib, nn_: nn_.Parameter(lib.ones(2, dtype=lib.float64))),
        (lambda lib, nn_: nn_.Parameter(lib.ones(2), requires_grad=False)),
        (lambda lib, nn_: nn_.Parameter()),
        (lambda lib, nn_: nn_.Parameter(lib.tensor([1, 2]), requires_grad=False)),
        (lambda lib, nn_: nn_.Parameter(lib.ones(2, requires_grad=True) * 3)),
    ]
    for make in pairs:
        assert repr(make(torch, torch.nn)) == repr(make(npgrad, nn)).replace("npgrad.", "torch.")
    with pytest.raises(RuntimeError, match="Only Tensors of floating point and complex dtype "
                                           "can require gradients"):
        nn.Parameter(npgrad.tensor([1, 2]))
    t = npgrad.zeros(3)
    p = nn.Parameter(t)
    t.add_(1)
    assert p._version == 1 and p.detach().numpy().tolist() == [1.0, 1.0, 1.0]


def test_module_to_dtype_and_zero_grad():
    m = nn.Sequential(nn.Linear(2, 2), nn.BatchNorm1d(2))
    w = m[0].weight
    m.double()
    assert m[0].weight is w and w.dtype == npgrad.float64
    assert m[1].running_mean.dtype == npgrad.float64
    assert m[1].num_batches_tracked.dtype == npgrad.int64
    m.float()
    assert w.dtype == npgrad.float32
    m.to(npgrad.float64)
    assert w.dtype == npgrad.float64
    m(npgrad.ones(3, 2, dtype=npgrad.float64)).sum().backward()
    assert w.grad is not None
    m.zero_grad(set_to_none=False)
    assert np.all(w.grad.numpy() == 0)
    m.zero_grad()
    assert w.grad is None
    m.requires_grad_(False)
    assert not any(p.requires_grad for p in m.parameters())
    seen = []
    m.apply(lambda mod: seen.append(type(mod).__name__))
    assert seen == ["Linear", "BatchNorm1d", "Sequential"]


def test_forward_hooks_order_and_arguments():
    calls = []
    lin = nn.Linear(2, 2)
    lin.register_forward_pre_hook(lambda m, args: calls.append(("pre1", len(args))))
    lin.register_forward_pre_hook(lambda m, args: calls.append(("pre0",)), prepend=True)
    h = lin.register_forward_hook(lambda m, args, out: calls.append(("post", out.shape)))
    lin.register_forward_hook(lambda m, args, out: out * 0)
    x = npgrad.ones(1, 2)
    y = lin(x)
    assert calls == [("pre0",), ("pre1", 1), ("post", npgrad.Size([1, 2]))]
    assert np.all(y.detach().numpy() == 0)
    h.remove()
    calls.clear()
    lin(x)
    assert calls == [("pre0",), ("pre1", 1)]
    lin2 = nn.Identity()
    lin2.register_forward_pre_hook(lambda m, args: args[0] * 2)
    assert lin2(npgrad.ones(1)).item() == 2.0
    k = nn.Identity()
    k.register_forward_pre_hook(lambda m, args, kwargs: ((args[0] + 1,), kwargs), with_kwargs=True)
    k.register_forward_hook(lambda m, args, kwargs, out: out * 10, with_kwargs=True)
    assert k(npgrad.ones(1)).item() == 20.0


def test_full_backward_hooks_match_torch():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(4)
    x = rng.standard_normal((3, 4))
    records = {}
    for lib, nn_ in ((torch, torch.nn), (npgrad, nn)):
        lin = nn_.Linear(4, 2).double()
        seen = []

        def hook(mod, gin, gout):
            seen.append(("full", [None if g is None else _arr(g).copy() for g in gin],
                         [None if g is None else _arr(g).copy() for g in gout]))

        def pre(mod, gout):
            seen.append(("pre", [_arr(g).copy() for g in gout]))

        lin.register_full_backward_hook(hook)
        lin.register_full_backward_pre_hook(pre)
        with lib.no_grad():
            lin.weight.copy_(lib.tensor(np.arange(8.0).reshape(2, 4) / 8))
            lin.bias.zero_()
        xi = lib.tensor(x, requires_grad=True)
        out = lin(xi)
        records[lib.__name__] = [_gname(out)]
        (out * out).sum().backward()
        records[lib.__name__].append(seen)
        records[lib.__name__].append(_arr(xi.grad))
        # input that does not require grad: grad_input is (None,)
        seen2 = []
        lin.register_full_backward_hook(lambda m, gi, go: seen2.append((gi, len(go))))
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            lin(lib.tensor(x)).sum().backward()
        records[lib.__name__].append([str(c.message) for c in caught])
        records[lib.__name__].append([(s[0], s[1]) for s in seen2])
    t, n = records["torch"], records["npgrad"]
    assert t[0] == n[0] == "BackwardHookFunctionBackward"
    assert [s[0] for s in t[1]] == [s[0] for s in n[1]] == ["pre", "full", "pre", "full"]
    for ts, ns in zip(t[1], n[1]):
        for ta, na in zip(ts[1:], ns[1:]):
            for a, b in zip(ta, na):
                assert (a is None) == (b is None)
                if a is not None:
                    np.testing.assert_allclose(a, b)
    np.testing.assert_allclose(t[2], n[2])
    assert t[3] == n[3]
    assert t[4] == n[4] == [((None,), 1)]


def test_full_backward_hook_can_replace_grad_input():
    lin = nn.Linear(2, 2)
    lin.register_full_backward_hook(lambda m, gin, gout: (gin[0] * 0 + 5,))
    x = npgrad.ones(1, 2, requires_grad=True)
    lin(x).sum().backward()
    assert x.grad.numpy().tolist() == [[5.0, 5.0]]


def test_reprs_match_torch():
    torch = pytest.importorskip("torch")
    makers = [
        lambda nn_: nn_.Linear(4, 3), lambda nn_: nn_.Linear(4, 3, bias=False),
        lambda nn_: nn_.Conv2d(1, 8, 3, padding=1), lambda nn_: nn_.Conv2d(2, 4, (3, 1), 2, 0, 2, 2, False),
        lambda nn_: nn_.Conv1d(2, 4, 3), lambda nn_: nn_.Conv2d(2, 2, 3, padding="same"),
        lambda nn_: nn_.MaxPool2d(2), lambda nn_: nn_.MaxPool2d((2, 3), 1, 1, ceil_mode=True),
        lambda nn_: nn_.AvgPool2d(3, 2, 1), lambda nn_: nn_.AdaptiveAvgPool2d((1, 1)),
        lambda nn_: nn_.Dropout(), lambda nn_: nn_.Dropout(0.2, True), lambda nn_: nn_.ReLU(),
        lambda nn_: nn_.ReLU(inplace=True), lambda nn_: nn_.LeakyReLU(), lambda nn_: nn_.LeakyReLU(0.2, True),
        lambda nn_: nn_.GELU(), lambda nn_: nn_.GELU("tanh"), lambda nn_: nn_.SiLU(),
        lambda nn_: nn_.Tanh(), lambda nn_: nn_.Sigmoid(), lambda nn_: nn_.Softmax(dim=1),
        lambda nn_: nn_.LogSoftmax(1), lambda nn_: nn_.Identity(), lambda nn_: nn_.Flatten(),
        lambda nn_: nn_.Unflatten(1, (2, 2)), lambda nn_: nn_.BatchNorm2d(8),
        lambda nn_: nn_.BatchNorm1d(3, momentum=None, affine=False),
        lambda nn_: nn_.LayerNorm(5), lambda nn_: nn_.LayerNorm((2, 3), elementwise_affine=False),
        lambda nn_: nn_.Embedding(10, 3), lambda nn_: nn_.Embedding(10, 3, padding_idx=-1, max_norm=1.0),
        lambda nn_: nn_.MSELoss(), lambda nn_: nn_.CrossEntropyLoss(label_smoothing=0.1),
        lambda nn_: nn_.ModuleList([nn_.Linear(2, 2), nn_.Linear(2, 2), nn_.ReLU(), nn_.Linear(2, 2)]),
        lambda nn_: nn_.ModuleList(), lambda nn_: nn_.ModuleDict({"a": nn_.ReLU()}),
        lambda nn_: nn_.Sequential(nn_.Sequential(nn_.Linear(1, 1), nn_.ReLU()), nn_.Tanh()),
        lambda nn_: nn_.Sequential(OrderedDict([("fc", nn_.Linear(1, 2)), ("act", nn_.ReLU())])),
    ]
    for make in makers:
        assert repr(make(torch.nn)) == repr(make(nn))


def test_containers():
    torch = pytest.importorskip("torch")
    for nn_ in (torch.nn, nn):
        s = nn_.Sequential(nn_.Linear(1, 2), nn_.ReLU(), nn_.Linear(2, 1))
        assert len(s) == 3 and isinstance(s[-1], nn_.Linear)
        assert isinstance(s[1:], nn_.Sequential) and len(s[1:]) == 2
        s.append(nn_.Tanh())
        assert list(s._modules) == ["0", "1", "2", "3"]
        del s[1]
        assert list(s._modules) == ["0", "1", "2"]
        with pytest.raises(IndexError, match="index 5 is out of range"):
            s[5]
        ml = nn_.ModuleList([nn_.ReLU()])
        ml.append(nn_.Tanh())
        ml.extend([nn_.Sigmoid()])
        ml.insert(0, nn_.Identity())
        assert [type(m).__name__ for m in ml] == ["Identity", "ReLU", "Tanh", "Sigmoid"]
        assert len(ml[1:]) == 3
        md = nn_.ModuleDict({"a": nn_.ReLU()})
        md["b"] = nn_.Linear(1, 1)
        assert list(md.keys()) == ["a", "b"] and "b" in md and len(md) == 2
        assert [k for k, _ in md.named_parameters()] == ["b.weight", "b.bias"]


def test_linear_grad_fns_match_torch():
    torch = pytest.importorskip("torch")
    for shape in [(4,), (2, 4), (2, 5, 4)]:
        for bias in (True, False):
            tl, nl = torch.nn.Linear(4, 3, bias=bias), nn.Linear(4, 3, bias=bias)
            assert _gname(tl(torch.ones(shape))) == _gname(nl(npgrad.ones(shape)))
    xt = torch.ones(5, 2, 4).transpose(0, 1)
    xn = npgrad.ones(5, 2, 4).transpose(0, 1)
    assert _gname(torch.nn.Linear(4, 3)(xt)) == _gname(nn.Linear(4, 3)(xn))


def test_init_functions():
    torch = pytest.importorskip("torch")
    init = nn.init
    assert init.calculate_gain("relu") == torch.nn.init.calculate_gain("relu")
    assert init.calculate_gain("leaky_relu", 0.2) == torch.nn.init.calculate_gain("leaky_relu", 0.2)
    assert init.calculate_gain("tanh") == torch.nn.init.calculate_gain("tanh")
    with pytest.raises(ValueError, match="Unsupported nonlinearity foo"):
        init.calculate_gain("foo")
    w = npgrad.empty(300, 200, requires_grad=True)
    assert init._calculate_fan_in_and_fan_out(w) == (200, 300)
    assert init._calculate_fan_in_and_fan_out(npgrad.empty(8, 3, 3, 3)) == (27, 72)
    with pytest.raises(ValueError, match="Fan in and fan out can not be computed"):
        init._calculate_fan_in_and_fan_out(npgrad.empty(3))
    init.kaiming_uniform_(w, a=math.sqrt(5))
    bound = 1 / math.sqrt(200)
    assert w.is_leaf and w.requires_grad and np.abs(w.detach().numpy()).max() <= bound
    assert np.abs(w.detach().numpy()).max() > 0.9 * bound
    init.xavier_uniform_(w)
    assert np.abs(w.detach().numpy()).max() <= math.sqrt(6 / 500)
    init.kaiming_normal_(w, mode="fan_out", nonlinearity="relu")
    assert abs(w.detach().numpy().std() - math.sqrt(2 / 300)) < 0.01
    init.xavier_normal_(w, gain=2.0)
    assert abs(w.detach().numpy().std() - 2 * math.sqrt(2 / 500)) < 0.01
    init.constant_(w, 0.5)
    assert np.all(w.detach().numpy() == 0.5)
    init.ones_(w)
    init.zeros_(w)
    assert np.all(w.detach().numpy() == 0) and w.grad_fn is None
    init.normal_(w, 1.0, 0.1)
    assert abs(w.detach().numpy().mean() - 1.0) < 0.01
    init.uniform_(w, -2, -1)
    assert w.detach().numpy().max() <= -1 and w.detach().numpy().min() >= -2
    lin = nn.Linear(200, 100)
    assert np.abs(lin.bias.detach().numpy()).max() <= 1 / math.sqrt(200)
    emb = nn.Embedding(50, 4, padding_idx=3)
    assert np.all(emb.weight.detach().numpy()[3] == 0) and emb.weight.requires_grad
    bn = nn.BatchNorm1d(3)
    assert bn.weight.detach().numpy().tolist() == [1, 1, 1] and bn.bias.detach().numpy().tolist() == [0, 0, 0]


def test_functional_errors_match_torch():
    torch = pytest.importorskip("torch")

    def both(fn):
        res = []
        for lib, F_ in ((torch, torch.nn.functional), (npgrad, F)):
            with pytest.raises(Exception) as e:
                fn(lib, F_)
            res.append((type(e.value).__name__, str(e.value)))
        assert res[0] == res[1]

    both(lambda lib, F_: F_.conv2d(lib.ones(1, 3, 5, 5), lib.ones(2, 2, 3, 3)))
    both(lambda lib, F_: F_.conv2d(lib.ones(1, 2, 2, 2), lib.ones(2, 2, 3, 3)))
    both(lambda lib, F_: F_.layer_norm(lib.ones(2, 4), (5,)))
    both(lambda lib, F_: F_.embedding(lib.tensor([7]), lib.ones(5, 2)))
    both(lambda lib, F_: F_.embedding(lib.tensor([1.0]), lib.ones(5, 2)))
    both(lambda lib, F_: F_.gelu(lib.ones(2), approximate="fast"))


def test_embedding_max_norm_and_padding():
    torch = pytest.importorskip("torch")
    w = np.random.default_rng(0).standard_normal((5, 3)) * 3
    idx = np.array([[0, 1], [1, 4]])
    tw, nw = torch.tensor(w, requires_grad=True), npgrad.tensor(w, requires_grad=True)
    ty = torch.nn.functional.embedding(torch.tensor(idx), tw, padding_idx=1, max_norm=1.5)
    ny = F.embedding(npgrad.tensor(idx), nw, padding_idx=1, max_norm=1.5)
    _close(ty, ny, "float64")
    _close(tw, nw, "float64")
    ty.sum().backward()
    ny.sum().backward()
    _close(tw.grad, nw.grad, "float64")


# -- gradient checks (no torch needed) ---------------------------------------------------

def _t(rng, *shape):
    return npgrad.tensor(rng.standard_normal(shape), requires_grad=True)


GRADCHECKS = [
    ("conv2d", lambda r: (_t(r, 2, 4, 5, 4), _t(r, 4, 2, 3, 2), _t(r, 4)),
     lambda x, w, b: F.conv2d(x, w, b, stride=(2, 1), padding=1, dilation=(1, 2), groups=2)),
    ("conv1d", lambda r: (_t(r, 2, 3, 7), _t(r, 2, 3, 3)),
     lambda x, w: F.conv1d(x, w, padding="same")),
    ("maxpool2d", lambda r: (_t(r, 2, 2, 5, 5),),
     lambda x: F.max_pool2d(x, 3, 2, 1, ceil_mode=True)),
    ("avgpool2d", lambda r: (_t(r, 2, 2, 5, 5),),
     lambda x: F.avg_pool2d(x, 3, 2, 1, ceil_mode=True, count_include_pad=False)),
    ("adaptiveavg", lambda r: (_t(r, 1, 2, 5, 7),), lambda x: F.adaptive_avg_pool2d(x, (2, 3))),
    ("batchnorm_train", lambda r: (_t(r, 4, 3, 2), _t(r, 3), _t(r, 3)),
     lambda x, w, b: F.batch_norm(x, None, None, w, b, training=True)),
    ("batchnorm_eval", lambda r: (_t(r, 4, 3), _t(r, 3), _t(r, 3)),
     lambda x, w, b: F.batch_norm(x, npgrad.tensor([0.1, -0.2, 0.3], dtype=npgrad.float64),
                                  npgrad.tensor([1.5, 0.5, 2.0], dtype=npgrad.float64), w, b)),
    ("layernorm", lambda r: (_t(r, 3, 2, 4), _t(r, 2, 4), _t(r, 2, 4)),
     lambda x, w, b: F.layer_norm(x, (2, 4), w, b)),
    ("embedding", lambda r: (_t(r, 6, 3),),
     lambda w: F.embedding(npgrad.tensor([[0, 2], [2, 5]]), w, padding_idx=4)),
    ("gelu", lambda r: (_t(r, 6),), lambda x: F.gelu(x)),
    ("gelu_tanh", lambda r: (_t(r, 6),), lambda x: F.gelu(x, approximate="tanh")),
    ("silu", lambda r: (_t(r, 6),), lambda x: F.silu(x)),
    ("leaky_relu", lambda r: (_t(r, 6),), lambda x: F.leaky_relu(x, 0.3)),
    ("smooth_l1", lambda r: (_t(r, 6), _t(r, 6)), lambda x, y: F.smooth_l1_loss(x, y, beta=0.7)),
    ("huber", lambda r: (_t(r, 6), _t(r, 6)), lambda x, y: F.huber_loss(x, y, delta=0.7)),
    ("bce", lambda r: (npgrad.tensor(r.uniform(0.1, 0.9, 6), requires_grad=True),
                       npgrad.tensor(r.uniform(0.1, 0.9, 6), requires_grad=True)),
     lambda x, y: F.binary_cross_entropy(x, y)),
    ("bce_logits", lambda r: (_t(r, 6), npgrad.tensor(r.uniform(0, 1, 6), requires_grad=True)),
     lambda x, y: F.binary_cross_entropy_with_logits(
         x, y, pos_weight=npgrad.tensor(np.linspace(0.5, 2, 6)))),
    ("cross_entropy_smooth", lambda r: (_t(r, 4, 3),),
     lambda x: F.cross_entropy(x, npgrad.tensor([0, 2, 1, 1]), label_smoothing=0.2,
                               weight=npgrad.tensor([1.0, 2.0, 0.5], dtype=npgrad.float64))),
    ("cross_entropy_probs", lambda r: (_t(r, 4, 3), npgrad.tensor(r.uniform(0, 1, (4, 3)),
                                                                  requires_grad=True)),
     lambda x, y: F.cross_entropy(x, y)),
    ("nll_2d", lambda r: (_t(r, 2, 3, 2, 2),),
     lambda x: F.nll_loss(x, npgrad.tensor([[[0, 1], [2, 1]], [[1, 1], [0, 2]]]))),
]


@pytest.mark.parametrize("name,make,fn", GRADCHECKS, ids=[row[0] for row in GRADCHECKS])
def test_gradcheck(name, make, fn):
    numeric_gradcheck(fn, make(np.random.default_rng(11)))


SECOND_ORDER = [
    ("conv2d", lambda r: (_t(r, 1, 2, 4, 4), _t(r, 3, 2, 2, 2), _t(r, 3)),
     lambda x, w, b: F.conv2d(x, w, b, stride=2, padding=1)),
    ("batchnorm", lambda r: (_t(r, 4, 3), _t(r, 3), _t(r, 3)),
     lambda x, w, b: F.batch_norm(x, None, None, w, b, training=True)),
    ("layernorm", lambda r: (_t(r, 3, 4), _t(r, 4), _t(r, 4)),
     lambda x, w, b: F.layer_norm(x, (4,), w, b)),
    ("gelu", lambda r: (_t(r, 5),), lambda x: F.gelu(x)),
    ("avgpool", lambda r: (_t(r, 1, 1, 4, 4),), lambda x: F.avg_pool2d(x, 2) * x[..., ::2, ::2]),
    ("maxpool", lambda r: (_t(r, 1, 1, 4, 4),), lambda x: F.max_pool2d(x, 2) ** 2),
    ("bce_logits", lambda r: (_t(r, 5),),
     lambda x: F.binary_cross_entropy_with_logits(x, npgrad.full((5,), 0.3, dtype=npgrad.float64))),
]


@pytest.mark.parametrize("name,make,fn", SECOND_ORDER, ids=[row[0] for row in SECOND_ORDER])
def test_second_order_against_torch(name, make, fn):
    torch = pytest.importorskip("torch")
    inputs = make(np.random.default_rng(5))
    tin = [torch.tensor(x.detach().numpy(), requires_grad=True) for x in inputs]
    torch_fn = {
        "conv2d": lambda x, w, b: torch.nn.functional.conv2d(x, w, b, stride=2, padding=1),
        "batchnorm": lambda x, w, b: torch.nn.functional.batch_norm(x, None, None, w, b,
                                                                    training=True),
        "layernorm": lambda x, w, b: torch.nn.functional.layer_norm(x, (4,), w, b),
        "gelu": lambda x: torch.nn.functional.gelu(x),
        "avgpool": lambda x: torch.nn.functional.avg_pool2d(x, 2) * x[..., ::2, ::2],
        "maxpool": lambda x: torch.nn.functional.max_pool2d(x, 2) ** 2,
        "bce_logits": lambda x: torch.nn.functional.binary_cross_entropy_with_logits(
            x, torch.full((5,), 0.3, dtype=torch.float64)),
    }[name]
    tg = torch.autograd.grad((torch_fn(*tin) ** 2).sum(), tin, create_graph=True)
    ng = npgrad.autograd.grad((fn(*inputs) ** 2).sum(), list(inputs), create_graph=True)
    for a, b in zip(tg, ng):
        _close(a, b, "float64")
    tg2 = torch.autograd.grad(sum((g ** 2).sum() for g in tg), tin)
    ng2 = npgrad.autograd.grad(sum((g ** 2).sum() for g in ng), list(inputs))
    for a, b in zip(tg2, ng2):
        _close(a, b, "float64")


def test_training_loop_matches_torch():
    """A few SGD steps of a small CNN give torch's parameters."""
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(9)
    x = rng.standard_normal((4, 1, 6, 6))
    y = rng.integers(0, 3, 4)

    def make(nn_):
        return nn_.Sequential(nn_.Conv2d(1, 2, 3), nn_.BatchNorm2d(2), nn_.GELU(),
                              nn_.AvgPool2d(2), nn_.Flatten(), nn_.Linear(8, 3))

    tm, nm = make(torch.nn).double(), make(nn).double()
    copy_state(tm, nm)
    for lib, m in ((torch, tm), (npgrad, nm)):
        for _ in range(3):
            loss = lib.nn.functional.cross_entropy(m(lib.tensor(x)), lib.tensor(y),
                                                   label_smoothing=0.1)
            m.zero_grad()
            loss.backward()
            with lib.no_grad():
                for p in m.parameters():
                    p -= 0.1 * p.grad
    tsd = tm.state_dict()
    for k, v in nm.state_dict().items():
        _close(tsd[k], v, "float64")


def test_warnings_for_mismatched_sizes():
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        F.l1_loss(npgrad.ones(3), npgrad.ones(1))
    assert "Using a target size (torch.Size([1])) that is different to the input size " \
           "(torch.Size([3]))" in str(w[0].message)


@pytest.mark.parametrize("fn,kwargs", [("leaky_relu", {"negative_slope": 0.2}), ("silu", {}),
                                       ("relu", {})])
def test_inplace_activations_match_torch(fn, kwargs):
    torch = pytest.importorskip("torch")
    x = np.array([-1.0, 2.0, -3.0, 0.5])
    res = []
    for lib, F_ in ((torch, torch.nn.functional), (npgrad, F)):
        xi = lib.tensor(x, requires_grad=True)
        y = getattr(F_, fn)(xi * 1, inplace=True, **kwargs)
        (y * y).sum().backward()
        res.append((_gname(y), _arr(y), _arr(xi.grad)))
    assert res[0][0] == res[1][0]
    _close(res[0][1], res[1][1], "float64")
    _close(res[0][2], res[1][2], "float64")
