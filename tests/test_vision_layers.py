"""Vision layers against torch.nn (transposed convolution, upsampling, pooling, dropout, pixel
shuffle, fold/unfold, padding, bilinear), plus hand-derived checks that need no torch.

Oracle tests build the same layer in both libraries, copy torch's parameters into npgrad
(``copy_state``) and compare, in float64: outputs, grad_fn names, input and parameter
gradients, reprs, state_dict keys, error texts and forward-mode tangents.
"""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import npgrad
from npgrad import nn
from npgrad.nn import functional as F
from torch_oracle import assert_same_error, assert_same_forward_ad, copy_state


def _tensor(m, a, requires_grad=False):
    return m.tensor(np.asarray(a, dtype=np.float64), requires_grad=requires_grad)


# -- hand-derived values (no torch) ---------------------------------------------------------

def test_nearest_upsample_by_two():
    y = F.interpolate(npgrad.tensor([[[1.0, 2.0]]]), scale_factor=2)
    assert y.tolist() == [[[1.0, 1.0, 2.0, 2.0]]]
    y2 = nn.UpsamplingNearest2d(scale_factor=2)(npgrad.tensor([[[[1.0, 2.0]]]]))
    assert y2.tolist() == [[[[1.0, 1.0, 2.0, 2.0], [1.0, 1.0, 2.0, 2.0]]]]


def test_nearest_upsample_gradient_sums_copies():
    x = npgrad.tensor([[[1.0, 2.0]]], requires_grad=True)
    F.interpolate(x, scale_factor=3).sum().backward()
    assert x.grad.tolist() == [[[3.0, 3.0]]]
    assert F.interpolate(x, scale_factor=3).grad_fn.name() == "UpsampleNearest1DBackward0"


def test_linear_align_corners_is_exact_interpolation():
    y = F.interpolate(npgrad.tensor([[[0.0, 4.0]]]), size=5, mode="linear", align_corners=True)
    assert y.tolist() == [[[0.0, 1.0, 2.0, 3.0, 4.0]]]


def test_conv_transpose_one_hot_kernel_places_input():
    # a kernel with a single 1 at (1, 0): each input pixel lands at (2i + 1, 2j) of the output
    x = npgrad.tensor([[[[1.0, 2.0], [3.0, 4.0]]]], requires_grad=True)
    w = npgrad.zeros(1, 1, 2, 2)
    w[0, 0, 1, 0] = 1.0
    y = F.conv_transpose2d(x, w, stride=2)
    assert y.shape == (1, 1, 4, 4)
    expect = np.zeros((4, 4))
    expect[1::2, 0::2] = [[1.0, 2.0], [3.0, 4.0]]
    np.testing.assert_array_equal(y.detach().numpy()[0, 0], expect)
    assert y.grad_fn.name() == "ConvolutionBackward0"
    (y * npgrad.arange(16.0).view(1, 1, 4, 4)).sum().backward()
    assert x.grad.tolist() == [[[[4.0, 6.0], [12.0, 14.0]]]]


def test_conv_transpose_is_adjoint_of_conv():
    rng = np.random.default_rng(1)
    x = npgrad.tensor(rng.standard_normal((2, 4, 5, 5)))
    w = npgrad.tensor(rng.standard_normal((4, 3, 3, 2)))
    y = npgrad.tensor(rng.standard_normal((2, 3, 9, 8)))
    kw = dict(stride=2, padding=1, dilation=1, groups=1)
    lhs = (F.conv_transpose2d(x, w, **kw) * y).sum()
    rhs = (x * F.conv2d(y, w, **kw)).sum()
    assert abs(lhs.item() - rhs.item()) < 1e-9


def test_pixel_shuffle_roundtrip_and_order():
    x = npgrad.arange(8.0).view(1, 8, 1, 1)
    y = F.pixel_shuffle(x, 2)
    assert y.tolist() == [[[[0.0, 1.0], [2.0, 3.0]], [[4.0, 5.0], [6.0, 7.0]]]]
    assert F.pixel_unshuffle(y, 2).tolist() == x.tolist()


def test_fold_of_unfold_counts_overlaps():
    x = npgrad.ones(1, 1, 3, 3)
    cols = F.unfold(x, 2)
    assert cols.shape == (1, 4, 4)
    counts = F.fold(cols, (3, 3), 2)
    assert counts.tolist() == [[[[1.0, 2.0, 1.0], [2.0, 4.0, 2.0], [1.0, 2.0, 1.0]]]]


def test_padding_modes_by_hand():
    x = npgrad.tensor([[[1.0, 2.0, 3.0]]])
    assert F.pad(x, (2, 1), mode="reflect").tolist() == [[[3.0, 2.0, 1.0, 2.0, 3.0, 2.0]]]
    assert F.pad(x, (2, 1), mode="replicate").tolist() == [[[1.0, 1.0, 1.0, 2.0, 3.0, 3.0]]]
    assert F.pad(x, (2, 1), mode="circular").tolist() == [[[2.0, 3.0, 1.0, 2.0, 3.0, 1.0]]]
    assert F.pad(x, (1, -1), value=9.0).tolist() == [[[9.0, 1.0, 2.0]]]


def test_adaptive_max_pool_indices():
    x = npgrad.tensor([[[1.0, 5.0, 2.0, 0.0, 7.0, 3.0]]])
    y, idx = F.adaptive_max_pool1d(x, 2, return_indices=True)
    assert y.tolist() == [[[5.0, 7.0]]] and idx.tolist() == [[[1, 4]]]


# -- dropout: channel-wise masks, statistics, eval ------------------------------------------

@pytest.mark.parametrize("cls,shape", [(nn.Dropout1d, (40, 50, 6)), (nn.Dropout2d, (40, 50, 3, 2))])
def test_channel_dropout_statistics(cls, shape):
    npgrad.manual_seed(0)
    layer = cls(p=0.3)
    x = npgrad.ones(*shape)
    y = layer(x).detach().numpy()
    per_channel = y.reshape(shape[0], shape[1], -1)
    # a channel is all zeros or all 1/(1-p)
    assert np.all(np.ptp(per_channel, axis=-1) == 0)
    kept = per_channel[..., 0] != 0
    assert abs(kept.mean() - 0.7) < 0.05
    np.testing.assert_allclose(per_channel[..., 0][kept], 1 / 0.7)
    assert abs(y.mean() - 1.0) < 0.08
    layer.eval()
    assert layer(x) is x


def test_channel_dropout_grad_and_inplace():
    npgrad.manual_seed(1)
    x = npgrad.ones(2, 8, 5, requires_grad=True)
    y = F.dropout1d(x, 0.5)
    assert y.grad_fn.name() == "MulBackward0"
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), y.detach().numpy())
    z = npgrad.ones(8, 5)
    out = F.dropout1d(z, 0.5, inplace=True)
    assert out.shape == (8, 5)


def test_alpha_dropout_keeps_moments():
    npgrad.manual_seed(0)
    x = npgrad.randn(200000)
    y = nn.AlphaDropout(0.2).train()(x)
    assert abs(y.mean().item()) < 0.02 and abs(y.std().item() - 1.0) < 0.02
    assert nn.AlphaDropout(0.2).eval()(x) is x


def test_dropout2d_warns_like_torch():
    with pytest.warns(UserWarning, match="Received a 3D input to dropout2d"):
        F.dropout2d(npgrad.ones(2, 3, 4))


# -- layers against torch --------------------------------------------------------------------

LAYERS = [
    ("conv_transpose1d", lambda n: n.ConvTranspose1d(4, 6, 3, stride=2, padding=1,
                                                     output_padding=1, groups=2, dilation=2),
     (2, 4, 5)),
    ("conv_transpose1d_unbatched", lambda n: n.ConvTranspose1d(2, 3, 2), (2, 4)),
    ("conv_transpose2d", lambda n: n.ConvTranspose2d(3, 2, (3, 2), stride=(2, 1),
                                                     padding=(1, 0)), (2, 3, 4, 3)),
    ("conv_transpose2d_nobias", lambda n: n.ConvTranspose2d(2, 4, 2, stride=2, bias=False),
     (1, 2, 3, 3)),
    ("conv1d_reflect", lambda n: n.Conv1d(2, 3, 3, padding=2, padding_mode="reflect"),
     (2, 2, 5)),
    ("conv2d_circular_same", lambda n: n.Conv2d(2, 2, (3, 2), padding="same",
                                                padding_mode="circular"), (1, 2, 4, 4)),
    ("conv2d_replicate", lambda n: n.Conv2d(2, 3, 3, stride=2, padding=(1, 2),
                                            padding_mode="replicate"), (1, 2, 5, 4)),
    ("upsample_nearest", lambda n: n.Upsample(scale_factor=2), (1, 2, 3, 2)),
    ("upsample_nearest_exact", lambda n: n.Upsample(size=(5, 3), mode="nearest-exact"),
     (1, 2, 3, 2)),
    ("upsample_linear", lambda n: n.Upsample(scale_factor=1.5, mode="linear"), (2, 2, 4)),
    ("upsample_bilinear", lambda n: n.Upsample(scale_factor=(2, 0.5), mode="bilinear"),
     (1, 2, 3, 4)),
    ("upsample_bicubic", lambda n: n.Upsample(size=5, mode="bicubic", align_corners=True),
     (1, 1, 3, 4)),
    ("upsampling_nearest2d", lambda n: n.UpsamplingNearest2d(size=(4, 5)), (1, 2, 2, 3)),
    ("upsampling_bilinear2d", lambda n: n.UpsamplingBilinear2d(scale_factor=2), (1, 2, 2, 3)),
    ("avg_pool1d", lambda n: n.AvgPool1d(3, 2, padding=1), (2, 3, 7)),
    ("adaptive_avg_pool1d", lambda n: n.AdaptiveAvgPool1d(3), (2, 3, 7)),
    ("adaptive_max_pool1d", lambda n: n.AdaptiveMaxPool1d(3), (2, 3, 7)),
    ("adaptive_max_pool2d", lambda n: n.AdaptiveMaxPool2d((2, 3)), (2, 3, 5, 7)),
    ("adaptive_max_pool2d_none", lambda n: n.AdaptiveMaxPool2d((None, 2)), (3, 5, 4)),
    ("lp_pool2d", lambda n: n.LPPool2d(2, 2), (1, 2, 4, 4)),
    ("lp_pool1d", lambda n: n.LPPool1d(3, 2), (1, 2, 6)),
    ("pixel_shuffle", lambda n: n.PixelShuffle(2), (1, 8, 2, 3)),
    ("pixel_unshuffle", lambda n: n.PixelUnshuffle(2), (1, 2, 4, 6)),
    ("unfold", lambda n: n.Unfold((2, 3), padding=1, stride=2), (2, 3, 4, 5)),
    ("fold", lambda n: n.Fold((4, 5), 2, stride=(2, 1)), (2, 8, 8)),
    ("zero_pad1d", lambda n: n.ZeroPad1d((1, 2)), (2, 3, 4)),
    ("zero_pad2d", lambda n: n.ZeroPad2d((1, 0, 2, 1)), (1, 2, 3, 4)),
    ("constant_pad1d", lambda n: n.ConstantPad1d(2, 3.5), (2, 3, 4)),
    ("constant_pad2d", lambda n: n.ConstantPad2d((1, -1, 0, 2), -1.0), (2, 3, 4)),
    ("reflection_pad1d", lambda n: n.ReflectionPad1d((3, 1)), (2, 3, 4)),
    ("reflection_pad2d", lambda n: n.ReflectionPad2d(1), (1, 2, 3, 4)),
    ("replication_pad1d", lambda n: n.ReplicationPad1d(2), (3, 4)),
    ("replication_pad2d", lambda n: n.ReplicationPad2d((2, 0, 1, 3)), (1, 2, 3, 4)),
    ("zero_pad3d", lambda n: n.ZeroPad3d((1, 0, 2, 1, 0, 1)), (1, 2, 2, 3, 2)),
    ("constant_pad3d", lambda n: n.ConstantPad3d(1, 0.5), (2, 2, 3, 2)),
    ("reflection_pad3d", lambda n: n.ReflectionPad3d((1, 0, 2, 1, 1, 1)), (1, 2, 2, 3, 4)),
    ("replication_pad3d", lambda n: n.ReplicationPad3d(1), (2, 2, 3, 2)),
    ("circular_pad1d", lambda n: n.CircularPad1d((2, 1)), (2, 3, 4)),
    ("circular_pad2d", lambda n: n.CircularPad2d((1, 0, 2, 1)), (1, 2, 3, 4)),
    ("circular_pad3d", lambda n: n.CircularPad3d(1), (1, 2, 2, 3, 2)),
]


@pytest.mark.parametrize("name,make,shape", LAYERS, ids=[row[0] for row in LAYERS])
def test_layer_matches_torch(name, make, shape):
    torch = pytest.importorskip("torch")
    torch.manual_seed(0)
    tm, nm = make(torch.nn).double(), make(nn).double()
    assert repr(nm) == repr(tm)
    assert list(nm.state_dict()) == list(tm.state_dict())
    copy_state(tm, nm)
    rng = np.random.default_rng(0)
    data = rng.permutation(int(np.prod(shape))).reshape(shape) / 3.0 + 0.5  # no ties
    tx, nx = _tensor(torch, data, True), _tensor(npgrad, data, True)
    ty, ny = tm(tx), nm(nx)
    assert type(ny.grad_fn).__name__ == type(ty.grad_fn).__name__
    np.testing.assert_allclose(ny.detach().numpy(), ty.detach().numpy(), rtol=1e-12, atol=1e-12)
    w = rng.standard_normal(tuple(ty.shape))
    (ty * _tensor(torch, w)).sum().backward()
    (ny * _tensor(npgrad, w)).sum().backward()
    np.testing.assert_allclose(nx.grad.numpy(), tx.grad.numpy(), rtol=1e-12, atol=1e-12)
    for (k, tp), (_, np_) in zip(tm.named_parameters(), nm.named_parameters()):
        np.testing.assert_allclose(np_.grad.numpy(), tp.grad.numpy(), rtol=1e-12, atol=1e-12,
                                   err_msg=k)


@pytest.mark.parametrize("name,make,shape", LAYERS, ids=[row[0] for row in LAYERS])
def test_layer_forward_ad_matches_torch(name, make, shape):
    torch = pytest.importorskip("torch")
    torch.manual_seed(0)
    tm, nm = make(torch.nn).double(), make(nn).double()
    copy_state(tm, nm)
    assert_same_forward_ad(tm, nm, lambda mod, x: mod(x), shape)


def test_conv_transpose_init_matches_torch_distribution():
    torch = pytest.importorskip("torch")
    torch.manual_seed(0)
    t = torch.nn.ConvTranspose2d(4, 6, 3, groups=2)
    n = nn.ConvTranspose2d(4, 6, 3, groups=2)
    assert n.weight.shape == t.weight.shape == (4, 3, 3, 3)
    bound = 1 / np.sqrt(3 * 9)  # fan_in is weight.size(1) * kernel
    assert np.abs(n.weight.detach().numpy()).max() <= bound
    assert np.abs(n.bias.detach().numpy()).max() <= bound


def test_conv_transpose_output_size():
    torch = pytest.importorskip("torch")
    torch.manual_seed(0)
    tm = torch.nn.ConvTranspose2d(2, 3, 3, stride=2).double()
    nm = nn.ConvTranspose2d(2, 3, 3, stride=2).double()
    copy_state(tm, nm)
    data = np.random.default_rng(0).standard_normal((1, 2, 4, 4))
    for size in ([10, 10], [1, 3, 9, 10], (10, 9)):
        ty = tm(_tensor(torch, data), output_size=size)
        ny = nm(_tensor(npgrad, data), output_size=size)
        assert tuple(ny.shape) == tuple(ty.shape)
        np.testing.assert_allclose(ny.detach().numpy(), ty.detach().numpy(), rtol=1e-12)


def test_bilinear_matches_torch():
    torch = pytest.importorskip("torch")
    torch.manual_seed(0)
    tm, nm = torch.nn.Bilinear(3, 4, 5).double(), nn.Bilinear(3, 4, 5).double()
    assert repr(nm) == repr(tm) and list(nm.state_dict()) == list(tm.state_dict())
    copy_state(tm, nm)
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((2, 6, 3)), rng.standard_normal((2, 6, 4))
    outs = []
    for lib, mod in ((torch, tm), (npgrad, nm)):
        x1, x2 = _tensor(lib, a, True), _tensor(lib, b, True)
        y = mod(x1, x2)
        y.pow(2).sum().backward()
        outs.append([y.detach().numpy(), x1.grad.numpy(), x2.grad.numpy(),
                     mod.weight.grad.numpy(), mod.bias.grad.numpy(), type(y.grad_fn).__name__])
    for mine, theirs in zip(outs[1], outs[0]):
        if isinstance(mine, str):
            assert mine == theirs
        else:
            np.testing.assert_allclose(mine, theirs, rtol=1e-12, atol=1e-12)


def test_interpolate_float32_matches_torch():
    torch = pytest.importorskip("torch")
    data = np.random.default_rng(3).standard_normal((2, 3, 5, 6)).astype(np.float32)
    for kw in (dict(mode="bilinear", scale_factor=1.7), dict(mode="bicubic", size=(4, 9)),
               dict(mode="nearest", scale_factor=0.5), dict(mode="bilinear", size=(3, 3),
                                                            align_corners=True)):
        ty = torch.nn.functional.interpolate(torch.tensor(data), **kw)
        ny = F.interpolate(npgrad.tensor(data), **kw)
        assert ny.dtype == npgrad.float32 and tuple(ny.shape) == tuple(ty.shape)
        np.testing.assert_allclose(ny.numpy(), ty.numpy(), rtol=1e-5, atol=1e-5)


ERRORS = [
    "F.conv_transpose2d(x4, m.randn(3, 3, 3, 3))",
    "F.conv_transpose2d(x4, m.randn(2, 3, 3, 3), stride=2, output_padding=2)",
    "F.conv_transpose2d(x4, m.randn(2, 3, 3, 3), m.randn(2))",
    "F.conv_transpose2d(m.randn(2, 2, 4, 4, 4), m.randn(2, 3, 3, 3))",
    "F.conv_transpose1d(x4, m.randn(2, 3, 3))",
    "m.nn.ConvTranspose2d(2, 3, 3, stride=2)(x4, output_size=[12, 12])",
    "m.nn.ConvTranspose2d(2, 3, 3, stride=2)(x4, output_size=[1])",
    "m.nn.ConvTranspose2d(2, 3, 3, padding_mode='reflect')",
    "F.interpolate(x4, size=3, mode='linear')",
    "F.interpolate(x4, mode='bilinear')",
    "F.interpolate(x4, size=3, scale_factor=2)",
    "F.interpolate(x4, scale_factor=2, align_corners=True)",
    "F.interpolate(x4, size=(2, 3, 4))",
    "F.interpolate(x4, scale_factor=(2, 3, 4))",
    "F.interpolate(x4, size=4, recompute_scale_factor=True)",
    "F.interpolate(x4, size=(2.5, 3))",
    "F.pad(x4, (1, 1), mode='reflect')",
    "F.pad(x4, (4, 0, 0, 0), mode='reflect')",
    "F.pad(x4, (1, 1), mode='foo')",
    "F.pad(x4, (1,))",
    "F.pad(x4[0, 0], (1, 1, 1, 1, 1, 1))",
    "F.pad(x4, (5, 0), mode='circular')",
    "F.pixel_shuffle(x4, 2)",
    "F.pixel_unshuffle(x4, 3)",
    "F.fold(m.randn(1, 6, 9), (4, 4), 2)",
    "F.fold(m.randn(1, 8, 8), (4, 4), 2)",
    "F.unfold(x4, 5)",
    "F.avg_pool1d(x4, 2)",
    "F.adaptive_max_pool1d(x4, 2)",
    "F.adaptive_max_pool2d(x4, (2,))",
    "F.dropout1d(x4)",
    "F.dropout2d(x4, 1.5)",
    "F.bilinear(m.randn(3, 2), m.randn(2, 4), m.randn(5, 2, 4))",
    "F.bilinear(m.randn(3, 2), m.randn(3, 4), m.randn(5, 3, 4))",
    "F.bilinear(m.randn(3, 2), m.randn(3, 4), m.randn(5, 2, 3))",
    "m.nn.Bilinear(0, 2, 3)",
    "F.interpolate(x4[0], scale_factor=2, mode='linear', antialias=True)",
    "F.interpolate(x4[0, 0], scale_factor=2)",
]


@pytest.mark.parametrize("expr", ERRORS)
def test_errors_match_torch(expr):
    def env(m):
        return {"m": m, "F": m.nn.functional, "x4": m.randn(1, 2, 4, 4)}

    assert_same_error(expr, env)


def test_upsample_float_scale_repr_and_warning_free():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        y = nn.Upsample(scale_factor=2, mode="bilinear")(npgrad.ones(1, 1, 2, 2))
    assert y.shape == (1, 1, 4, 4)
    expect = "Upsample(scale_factor=(2.0, 3.0), mode='nearest')"
    assert repr(nn.Upsample(scale_factor=(2, 3))) == expect


@pytest.mark.parametrize("name", ["upsample", "upsample_nearest", "upsample_bilinear"])
def test_deprecated_upsample_warns(name):
    x = npgrad.arange(4.0).view(1, 1, 2, 2)
    with pytest.warns(UserWarning, match=f"`nn.functional.{name}` is deprecated"):
        y = getattr(F, name)(x, scale_factor=2)
    assert y.shape == (1, 1, 4, 4)
