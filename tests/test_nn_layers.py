"""npgrad.nn's composite layers against torch.nn: recurrent, attention, transformer, group and
instance norm, parameter containers.

Each oracle row builds the layer in both libraries, copies torch's parameters into npgrad
through ``load_state_dict`` and compares, in float64: every output's value (NaN where torch
has NaN), the input and parameter gradients, ``state_dict`` keys and shapes and the repr.
These layers are composites of npgrad ops (Note [Recurrent layers as composites] in
npgrad.nn.modules.rnn, Note [Attention as a composite] in npgrad.nn.functional), so the
outputs' grad_fn names are not compared: torch runs fused kernels
(``MkldnnRnnLayerBackward0``, ``NativeGroupNormBackward0``...) whose nodes npgrad does not have.
Tests at the end need no torch: hand-derived values, init bounds.
"""
from __future__ import annotations

import math
import re
import warnings

import numpy as np
import pytest

import npgrad
import npgrad.nn as nn
import npgrad.nn.functional as F

from torch_oracle import assert_same_forward_ad, copy_state


# -- helpers ---------------------------------------------------------------------------------

def _arr(t):
    return t.detach().numpy() if hasattr(t, "detach") else np.asarray(t)


def _close(a, b, rtol=1e-9, atol=1e-11):
    np.testing.assert_allclose(_arr(b), _arr(a), rtol=rtol, atol=atol, equal_nan=True)


def _flat(out):
    """The tensors of a layer's output, in order (tuples nested as LSTM's)."""
    if isinstance(out, (tuple, list)):
        return [t for item in out for t in _flat(item)]
    return [] if out is None else [out]


def _lib_dtype(lib, name):
    return getattr(lib, name)


# -- layers against torch --------------------------------------------------------------------
#
# (id, constructor taking the library, input shapes, call(module, inputs, lib) or None).
# Inputs marked by the same shape index are the *same* tensor (self-attention), see ``SAME``.

SAME = "same"


def _mha_call(**kwargs):
    def call(m, xs, lib):
        kw = {k: (v(lib) if callable(v) else v) for k, v in kwargs.items()}
        return m(*xs, **kw)
    return call


def _mask(values, dtype=None):
    def make(lib):
        t = lib.tensor(np.asarray(values))
        return t if dtype is None else t.to(getattr(lib, dtype))
    return make


_KPM = [[False, False, True, True], [False, True, False, False]]
_KPM_DEAD = [[True, True, True, True], [False, True, False, False]]
_CAUSAL3 = np.triu(np.full((3, 3), -np.inf), 1)
_CAUSAL4 = np.triu(np.full((4, 4), -np.inf), 1)

LAYERS = [
    # recurrent
    ("rnn", lambda L: L.nn.RNN(3, 4), [(5, 2, 3)], None),
    ("rnn_relu_2layer", lambda L: L.nn.RNN(3, 4, 2, nonlinearity="relu"), [(5, 2, 3)], None),
    ("rnn_bidir_batch_first", lambda L: L.nn.RNN(3, 4, bidirectional=True, batch_first=True),
     [(2, 5, 3)], None),
    ("rnn_h0", lambda L: L.nn.RNN(3, 4, 2, bias=False), [(5, 2, 3), (2, 2, 4)], None),
    ("rnn_unbatched", lambda L: L.nn.RNN(3, 4, 2, bidirectional=True), [(5, 3), (4, 4)], None),
    ("lstm", lambda L: L.nn.LSTM(3, 4), [(5, 2, 3)], None),
    ("lstm_deep_bidir", lambda L: L.nn.LSTM(3, 4, 3, bidirectional=True), [(5, 2, 3)], None),
    ("lstm_h0c0_batch_first", lambda L: L.nn.LSTM(3, 4, 2, batch_first=True),
     [(2, 5, 3), (2, 2, 4), (2, 2, 4)], lambda m, xs, lib: m(xs[0], (xs[1], xs[2]))),
    ("lstm_proj", lambda L: L.nn.LSTM(3, 5, 2, proj_size=2, bidirectional=True), [(4, 2, 3)],
     None),
    ("lstm_unbatched_h0", lambda L: L.nn.LSTM(3, 4, bias=False), [(5, 3), (1, 4), (1, 4)],
     lambda m, xs, lib: m(xs[0], (xs[1], xs[2]))),
    ("gru", lambda L: L.nn.GRU(3, 4), [(5, 2, 3)], None),
    ("gru_deep_bidir_h0", lambda L: L.nn.GRU(3, 4, 2, bidirectional=True, batch_first=True),
     [(2, 5, 3), (4, 2, 4)], None),
    ("gru_nobias_unbatched", lambda L: L.nn.GRU(3, 4, bias=False), [(5, 3)], None),
    ("rnn_dropout_all", lambda L: L.nn.LSTM(3, 4, 2, dropout=1.0), [(5, 2, 3)], None),
    ("rnncell", lambda L: L.nn.RNNCell(3, 4), [(2, 3), (2, 4)], None),
    ("rnncell_relu_unbatched", lambda L: L.nn.RNNCell(3, 4, nonlinearity="relu"), [(3,)], None),
    ("lstmcell", lambda L: L.nn.LSTMCell(3, 4), [(2, 3), (2, 4), (2, 4)],
     lambda m, xs, lib: m(xs[0], (xs[1], xs[2]))),
    ("lstmcell_nobias", lambda L: L.nn.LSTMCell(3, 4, bias=False), [(2, 3)], None),
    ("grucell", lambda L: L.nn.GRUCell(3, 4), [(2, 3), (2, 4)], None),
    ("grucell_unbatched", lambda L: L.nn.GRUCell(3, 4, bias=False), [(3,), (4,)], None),
    # attention
    ("mha_self", lambda L: L.nn.MultiheadAttention(8, 2), [(3, 2, 8), SAME, SAME], None),
    ("mha_cross", lambda L: L.nn.MultiheadAttention(8, 4), [(3, 2, 8), (4, 2, 8), (4, 2, 8)],
     _mha_call(average_attn_weights=False)),
    ("mha_kv_same", lambda L: L.nn.MultiheadAttention(8, 2, batch_first=True),
     [(2, 3, 8), (2, 4, 8), SAME], None),
    ("mha_kdim_vdim", lambda L: L.nn.MultiheadAttention(8, 2, kdim=3, vdim=5),
     [(3, 2, 8), (4, 2, 3), (4, 2, 5)], None),
    ("mha_nobias_no_weights", lambda L: L.nn.MultiheadAttention(8, 2, bias=False),
     [(3, 2, 8), (4, 2, 8), (4, 2, 8)], _mha_call(need_weights=False)),
    ("mha_bool_attn_mask", lambda L: L.nn.MultiheadAttention(8, 2),
     [(3, 2, 8), (4, 2, 8), (4, 2, 8)],
     _mha_call(attn_mask=_mask(np.triu(np.ones((3, 4), bool), 1)))),
    ("mha_float_attn_mask_3d", lambda L: L.nn.MultiheadAttention(8, 2),
     [(3, 2, 8), (4, 2, 8), (4, 2, 8)],
     _mha_call(attn_mask=_mask(np.random.default_rng(5).standard_normal((4, 3, 4))))),
    ("mha_key_padding", lambda L: L.nn.MultiheadAttention(8, 2),
     [(3, 2, 8), (4, 2, 8), (4, 2, 8)], _mha_call(key_padding_mask=_mask(_KPM))),
    ("mha_key_padding_sdpa", lambda L: L.nn.MultiheadAttention(8, 2),
     [(3, 2, 8), (4, 2, 8), (4, 2, 8)],
     _mha_call(key_padding_mask=_mask(_KPM), need_weights=False)),
    ("mha_fully_masked_nan", lambda L: L.nn.MultiheadAttention(8, 2),
     [(3, 2, 8), (4, 2, 8), (4, 2, 8)], _mha_call(key_padding_mask=_mask(_KPM_DEAD))),
    ("mha_fully_masked_sdpa", lambda L: L.nn.MultiheadAttention(8, 2),
     [(3, 2, 8), (4, 2, 8), (4, 2, 8)],
     _mha_call(key_padding_mask=_mask(_KPM_DEAD), need_weights=False)),
    ("mha_causal", lambda L: L.nn.MultiheadAttention(8, 2), [(3, 2, 8), SAME, SAME],
     _mha_call(attn_mask=_mask(_CAUSAL3), is_causal=True, need_weights=False)),
    ("mha_causal_weights", lambda L: L.nn.MultiheadAttention(8, 2), [(3, 2, 8), SAME, SAME],
     _mha_call(attn_mask=_mask(_CAUSAL3), is_causal=True)),
    ("mha_unbatched", lambda L: L.nn.MultiheadAttention(8, 2), [(3, 8), (4, 8), (4, 8)],
     _mha_call(key_padding_mask=_mask([False, False, True, False]))),
    ("mha_bias_kv_zero_attn", lambda L: L.nn.MultiheadAttention(8, 2, add_bias_kv=True,
                                                               add_zero_attn=True),
     [(3, 2, 8), (4, 2, 8), (4, 2, 8)], _mha_call(key_padding_mask=_mask(_KPM))),
    # transformer
    ("encoder_layer", lambda L: L.nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0),
     [(4, 2, 8)], None),
    ("encoder_layer_gelu_norm_first", lambda L: L.nn.TransformerEncoderLayer(
        8, 2, 16, dropout=0.0, activation="gelu", norm_first=True, batch_first=True),
     [(2, 4, 8)], None),
    ("encoder_layer_callable_nobias", lambda L: L.nn.TransformerEncoderLayer(
        8, 2, 16, dropout=0.0, activation=L.tanh, bias=False, layer_norm_eps=1e-3),
     [(4, 2, 8)], None),
    ("encoder_layer_masks", lambda L: L.nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0),
     [(4, 2, 8)], lambda m, xs, lib: m(xs[0], src_mask=lib.tensor(_CAUSAL4),
                                       src_key_padding_mask=lib.tensor(np.array(_KPM)).to(
                                           lib.float64))),
    ("encoder_unbatched", lambda L: L.nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0),
     [(4, 8)], None),
    ("encoder", lambda L: L.nn.TransformerEncoder(
        L.nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0), 2, norm=L.nn.LayerNorm(8),
        enable_nested_tensor=False), [(4, 2, 8)],
     lambda m, xs, lib: m(xs[0], mask=lib.tensor(_CAUSAL4))),
    ("encoder_padding", lambda L: L.nn.TransformerEncoder(
        L.nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, batch_first=True), 2),
     [(2, 4, 8)], lambda m, xs, lib: m(xs[0], src_key_padding_mask=lib.tensor(np.array(_KPM)))),
    ("decoder", lambda L: L.nn.TransformerDecoder(
        L.nn.TransformerDecoderLayer(8, 2, 16, dropout=0.0), 2, norm=L.nn.LayerNorm(8)),
     [(4, 2, 8), (3, 2, 8)], lambda m, xs, lib: m(xs[0], xs[1], tgt_mask=lib.tensor(_CAUSAL4))),
    ("decoder_layer_norm_first", lambda L: L.nn.TransformerDecoderLayer(
        8, 2, 16, dropout=0.0, norm_first=True, batch_first=True), [(2, 4, 8), (2, 3, 8)],
     lambda m, xs, lib: m(xs[0], xs[1],
                          memory_key_padding_mask=lib.tensor(np.array([[0, 0, 1], [0, 1, 0]],
                                                                      dtype=bool)))),
    ("transformer", lambda L: L.nn.Transformer(8, 2, 1, 2, 16, dropout=0.0),
     [(3, 2, 8), (4, 2, 8)],
     lambda m, xs, lib: m(xs[0], xs[1],
                          tgt_mask=lib.nn.Transformer.generate_square_subsequent_mask(
                              4, dtype=lib.float64))),
    # normalization
    ("groupnorm", lambda L: L.nn.GroupNorm(3, 6), [(2, 6, 5)], None),
    ("groupnorm_4d_noaffine", lambda L: L.nn.GroupNorm(2, 4, eps=1e-3, affine=False),
     [(2, 4, 3, 3)], None),
    ("groupnorm_nobias_2d", lambda L: L.nn.GroupNorm(1, 4, bias=False), [(3, 4)], None),
    ("instancenorm1d", lambda L: L.nn.InstanceNorm1d(3), [(2, 3, 6)], None),
    ("instancenorm1d_affine_unbatched", lambda L: L.nn.InstanceNorm1d(3, affine=True),
     [(3, 6)], None),
    ("instancenorm2d_stats", lambda L: L.nn.InstanceNorm2d(3, affine=True,
                                                           track_running_stats=True),
     [(2, 3, 4, 5)], None),
]


def _run(lib, module, row, arrays):
    _, _, shapes, call = row
    inputs = []
    for shape, x in zip(shapes, arrays):
        inputs.append(inputs[-1] if shape == SAME else lib.tensor(x, requires_grad=True))
    out = call(module, inputs, lib) if call is not None else module(*inputs)
    return inputs, _flat(out)


def _arrays(shapes, rng):
    return [None if s == SAME else rng.standard_normal(s) for s in shapes]


@pytest.mark.parametrize("train", [True, False])
@pytest.mark.parametrize("row", LAYERS, ids=[row[0] for row in LAYERS])
def test_layer_matches_torch(row, train):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tm, nm = row[1](torch).double(), row[1](npgrad).double()
    copy_state(tm, nm)
    tm.train(train)
    nm.train(train)
    assert repr(nm) == repr(tm)
    assert [(k, tuple(v.shape)) for k, v in nm.state_dict().items()] == \
        [(k, tuple(v.shape)) for k, v in tm.state_dict().items()]
    arrays = _arrays(row[2], rng)
    tin, tout = _run(torch, tm, row, arrays)
    nin, nout = _run(npgrad, nm, row, arrays)
    assert len(tout) == len(nout)
    for t, n in zip(tout, nout):
        assert tuple(t.shape) == tuple(n.shape)
        assert n.dtype == npgrad.float64
        _close(t, n)
    # one scalar over all outputs (NaN entries, where torch has them, weighted by 0)
    weights = [rng.standard_normal(tuple(t.shape)) for t in tout]
    tl = sum((torch.nan_to_num(t, nan=0.0) * torch.tensor(w)).sum()
             for t, w in zip(tout, weights))
    nl = sum((npgrad.where(npgrad.isnan(n), npgrad.tensor(0.0, dtype=npgrad.float64), n)
              * npgrad.tensor(w)).sum() for n, w in zip(nout, weights))
    tl.backward()
    nl.backward()
    for t, n in zip(tin, nin):
        _close(t.grad, n.grad)
    tparams = dict(tm.named_parameters())
    for k, p in nm.named_parameters():
        assert (p.grad is None) == (tparams[k].grad is None), k
        if p.grad is not None:
            _close(tparams[k].grad, p.grad)
    tbufs = dict(tm.named_buffers())
    for k, b in nm.named_buffers():
        _close(tbufs[k], b)


def test_float32_recurrent_and_attention_match_torch():
    """The default dtype path (float32 parameters and inputs), looser tolerance."""
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(1)
    for make, shapes in ((lambda L: L.nn.LSTM(3, 4, 2), [(5, 2, 3)]),
                         (lambda L: L.nn.GRU(3, 4, batch_first=True), [(2, 5, 3)]),
                         (lambda L: L.nn.MultiheadAttention(8, 2), [(3, 2, 8), SAME, SAME]),
                         (lambda L: L.nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0),
                          [(3, 2, 8)])):
        tm, nm = make(torch), make(npgrad)
        copy_state(tm, nm)
        arrays = [None if s == SAME else rng.standard_normal(s).astype(np.float32)
                  for s in shapes]
        row = (None, None, shapes, None)
        _, tout = _run(torch, tm, row, arrays)
        _, nout = _run(npgrad, nm, row, arrays)
        for t, n in zip(tout, nout):
            assert n.dtype == npgrad.float32
            _close(t, n, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("name,make,shape,call", [
    ("lstm", lambda L: L.nn.LSTM(3, 4, 2, bidirectional=True), (5, 2, 3), lambda m, x: m(x)[0]),
    ("gru", lambda L: L.nn.GRU(3, 4, batch_first=True), (2, 5, 3), lambda m, x: m(x)[1]),
    ("rnncell", lambda L: L.nn.RNNCell(3, 4), (2, 3), lambda m, x: m(x)),
    ("mha", lambda L: L.nn.MultiheadAttention(8, 2), (3, 2, 8), lambda m, x: m(x, x, x)[0]),
    ("mha_weights", lambda L: L.nn.MultiheadAttention(8, 2), (3, 2, 8),
     lambda m, x: m(x, x, x)[1]),
    ("groupnorm", lambda L: L.nn.GroupNorm(2, 4), (3, 4, 5), lambda m, x: m(x)),
    ("instancenorm", lambda L: L.nn.InstanceNorm1d(4, affine=True), (3, 4, 5),
     lambda m, x: m(x)),
], ids=["lstm", "gru", "rnncell", "mha", "mha_weights", "groupnorm", "instancenorm"])
def test_layer_forward_ad_matches_torch(name, make, shape, call):
    """A dual input: the output's tangent (and value) as torch's."""
    torch = pytest.importorskip("torch")
    tm, nm = make(torch).double(), make(npgrad).double()
    copy_state(tm, nm)
    assert_same_forward_ad(tm, nm, call, shape)


def test_sdpa_forward_ad_against_central_difference():
    """torch has no forward AD for its CPU flash kernel; check the tangent numerically."""
    rng = np.random.default_rng(2)
    q, k, v = (rng.standard_normal((2, 3, 4)) for _ in range(3))
    dq = rng.standard_normal((2, 3, 4))
    mask = np.array([[True, True, False], [True, False, False], [False, False, False]])

    def f(qa):
        return F.scaled_dot_product_attention(npgrad.tensor(qa), npgrad.tensor(k),
                                              npgrad.tensor(v), attn_mask=npgrad.tensor(mask))

    fwad = npgrad.autograd.forward_ad
    with fwad.dual_level():
        y = F.scaled_dot_product_attention(fwad.make_dual(npgrad.tensor(q), npgrad.tensor(dq)),
                                           npgrad.tensor(k), npgrad.tensor(v),
                                           attn_mask=npgrad.tensor(mask))
        tangent = fwad.unpack_dual(y).tangent.numpy().copy()
    eps = 1e-6
    numeric = (f(q + eps * dq).numpy() - f(q - eps * dq).numpy()) / (2 * eps)
    np.testing.assert_allclose(tangent, numeric, rtol=1e-6, atol=1e-8)
    assert np.all(tangent[:, 2] == 0)  # the fully masked query row: zeros, no NaN


# -- functional attention ---------------------------------------------------------------------

@pytest.mark.parametrize("kwargs", [
    {}, {"is_causal": True}, {"scale": 0.3}, {"mask": "bool"}, {"mask": "float"},
    {"mask": "dead_rows"}, {"shape4d": True, "is_causal": True},
], ids=["plain", "causal", "scale", "bool_mask", "float_mask", "dead_rows", "4d_causal"])
def test_sdpa_matches_torch(kwargs):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(3)
    lead = (2, 2) if kwargs.get("shape4d") else (2,)
    q, k, v = (rng.standard_normal(lead + s) for s in ((3, 4), (5, 4), (5, 6)))
    mask = None
    if kwargs.get("mask") == "bool":
        mask = rng.random((3, 5)) > 0.3
        mask[:, 0] = True
    elif kwargs.get("mask") == "float":
        mask = rng.standard_normal((2, 3, 5))
    elif kwargs.get("mask") == "dead_rows":
        mask = np.ones((3, 5), bool)
        mask[1] = False
    res = []
    for lib in (torch, npgrad):
        ins = [lib.tensor(a, requires_grad=True) for a in (q, k, v)]
        out = lib.nn.functional.scaled_dot_product_attention(
            *ins, attn_mask=None if mask is None else lib.tensor(mask),
            is_causal=kwargs.get("is_causal", False), scale=kwargs.get("scale"))
        out.backward(lib.tensor(np.cos(np.arange(out.numel())).reshape(tuple(out.shape))))
        res.append([out] + [t.grad for t in ins])
    for t, n in zip(*res):
        _close(t, n)
    if kwargs.get("mask") == "dead_rows":
        assert np.all(_arr(res[1][0])[:, 1] == 0)


def test_sdpa_errors_match_torch():
    torch = pytest.importorskip("torch")
    q, k, v = np.ones((2, 3, 4)), np.ones((2, 5, 4)), np.ones((2, 5, 6))
    cases = [
        lambda L: L.nn.functional.scaled_dot_product_attention(
            L.tensor(q), L.tensor(k), L.tensor(v), attn_mask=L.tensor(np.ones((3, 5), bool)),
            is_causal=True),
        lambda L: L.nn.functional.scaled_dot_product_attention(
            L.tensor(q), L.tensor(k[..., :3]), L.tensor(v)),
        lambda L: L.nn.functional.scaled_dot_product_attention(
            L.tensor(q), L.tensor(k), L.tensor(v[:, :4])),
        lambda L: L.nn.functional.scaled_dot_product_attention(
            L.tensor(q), L.tensor(k), L.tensor(v).float()),
        lambda L: L.nn.functional.scaled_dot_product_attention(
            L.tensor(q), L.tensor(k), L.tensor(v), attn_mask=L.tensor(np.ones((3, 5), int))),
        lambda L: L.nn.functional.scaled_dot_product_attention(
            L.tensor(q[0, 0]), L.tensor(k[0, 0]), L.tensor(v[0, 0])),
    ]
    for case in cases:
        _same_error(torch, case)


# -- errors, reprs, warnings ------------------------------------------------------------------

def _error_of(fn):
    try:
        fn()
    except Exception as ex:  # noqa: BLE001 - the point is to capture whatever is raised
        return ex
    return None


def _same_error(torch, case):
    """``case(lib)`` raises the same exception type with the same text in both libraries.

    npgrad prints dtypes as ``npgrad.float64`` where torch prints ``torch.float64``.
    """
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        te, ne = _error_of(lambda: case(torch)), _error_of(lambda: case(npgrad))
    assert te is not None, "torch raised nothing"
    assert ne is not None, f"npgrad raised nothing; torch: {te!r}"
    assert type(ne).__name__ == type(te).__name__ or isinstance(ne, type(te)), (te, ne)
    assert str(ne) == re.sub(r"torch\.(float|int|bool)", r"npgrad.\1", str(te))


def _x(L, *shape, dtype="float64"):
    return L.zeros(*shape, dtype=getattr(L, dtype))


ERRORS = [
    ("rnn_input_size", lambda L: L.nn.RNN(3, 4).double()(_x(L, 2, 5, 5))),
    ("rnn_hidden_size", lambda L: L.nn.RNN(3, 4).double()(_x(L, 2, 5, 3), _x(L, 1, 4, 4))),
    ("rnn_unbatched_hx", lambda L: L.nn.RNN(3, 4).double()(_x(L, 5, 3), _x(L, 1, 1, 4))),
    ("rnn_batched_hx", lambda L: L.nn.GRU(3, 4).double()(_x(L, 5, 2, 3), _x(L, 1, 4))),
    ("rnn_dims", lambda L: L.nn.RNN(3, 4)(_x(L, 2, 5, 3, 1, dtype="float32"))),
    ("gru_dims", lambda L: L.nn.GRU(3, 4)(_x(L, 3, dtype="float32"))),
    ("lstm_dims", lambda L: L.nn.LSTM(3, 4)(_x(L, 3, dtype="float32"))),
    ("lstm_cell_size", lambda L: L.nn.LSTM(3, 4).double()(
        _x(L, 2, 5, 3), (_x(L, 1, 5, 4), _x(L, 1, 5, 3)))),
    ("lstm_hidden_dims", lambda L: L.nn.LSTM(3, 4).double()(
        _x(L, 2, 5, 3), (_x(L, 5, 4), _x(L, 1, 5, 4)))),
    ("lstm_proj_hidden", lambda L: L.nn.LSTM(3, 4, proj_size=2).double()(
        _x(L, 2, 5, 3), (_x(L, 1, 5, 4), _x(L, 1, 5, 4)))),
    ("rnn_dtype", lambda L: L.nn.RNN(3, 4)(_x(L, 2, 5, 3))),
    ("rnn_nonlinearity", lambda L: L.nn.RNN(3, 4, nonlinearity="x")),
    ("rnn_dropout", lambda L: L.nn.RNN(3, 4, dropout=2)),
    ("rnn_proj", lambda L: L.nn.GRU(3, 4, proj_size=2)),
    ("lstm_proj_size", lambda L: L.nn.LSTM(3, 4, proj_size=4)),
    ("rnn_hidden_zero", lambda L: L.nn.RNN(3, 0)),
    ("rnn_bias_type", lambda L: L.nn.LSTM(3, 4, bias=1)),
    ("rnncell_input", lambda L: L.nn.RNNCell(3, 4).double()(_x(L, 2, 5))),
    ("rnncell_hidden", lambda L: L.nn.RNNCell(3, 4).double()(_x(L, 2, 3), _x(L, 2, 5))),
    ("rnncell_batch", lambda L: L.nn.RNNCell(3, 4).double()(_x(L, 2, 3), _x(L, 3, 4))),
    ("rnncell_dims", lambda L: L.nn.RNNCell(3, 4)(_x(L, 2, 3, 3))),
    ("rnncell_hx_dims", lambda L: L.nn.GRUCell(3, 4)(_x(L, 2, 3), _x(L, 1, 2, 4))),
    ("rnncell_nonlinearity", lambda L: L.nn.RNNCell(3, 4, nonlinearity="foo").double()(
        _x(L, 2, 3))),
    ("lstmcell_hidden1", lambda L: L.nn.LSTMCell(3, 4).double()(
        _x(L, 2, 3), (_x(L, 2, 4), _x(L, 2, 5)))),
    ("lstmcell_hx_dims", lambda L: L.nn.LSTMCell(3, 4)(_x(L, 2, 3), (_x(L, 1, 2, 4),
                                                                  _x(L, 2, 4)))),
    ("grucell_input", lambda L: L.nn.GRUCell(3, 4).double()(_x(L, 2, 5))),
    ("mha_embed", lambda L: L.nn.MultiheadAttention(4, 2).double()(
        _x(L, 3, 2, 5), _x(L, 3, 2, 5), _x(L, 3, 2, 5))),
    ("mha_key_dims", lambda L: L.nn.MultiheadAttention(4, 2).double()(
        _x(L, 3, 2, 4), _x(L, 3, 2), _x(L, 3, 2, 4))),
    ("mha_mask_2d", lambda L: L.nn.MultiheadAttention(4, 2).double()(
        _x(L, 3, 2, 4), _x(L, 3, 2, 4), _x(L, 3, 2, 4), attn_mask=_x(L, 3, 4))),
    ("mha_mask_3d", lambda L: L.nn.MultiheadAttention(4, 2).double()(
        _x(L, 3, 2, 4), _x(L, 3, 2, 4), _x(L, 3, 2, 4), attn_mask=_x(L, 3, 3, 3))),
    ("mha_mask_int", lambda L: L.nn.MultiheadAttention(4, 2).double()(
        _x(L, 3, 2, 4), _x(L, 3, 2, 4), _x(L, 3, 2, 4), attn_mask=_x(L, 3, 3, dtype="int64"))),
    ("mha_kpm", lambda L: L.nn.MultiheadAttention(4, 2).double()(
        _x(L, 3, 2, 4), _x(L, 3, 2, 4), _x(L, 3, 2, 4), key_padding_mask=_x(L, 2, 4))),
    ("mha_causal_no_mask", lambda L: L.nn.MultiheadAttention(4, 2).double()(
        _x(L, 3, 2, 4), _x(L, 3, 2, 4), _x(L, 3, 2, 4), is_causal=True)),
    ("mha_kv_shape", lambda L: L.nn.MultiheadAttention(4, 2).double()(
        _x(L, 3, 2, 4), _x(L, 4, 2, 4), _x(L, 3, 2, 4))),
    ("mha_query_dims", lambda L: L.nn.MultiheadAttention(4, 2).double()(
        _x(L, 4), _x(L, 4), _x(L, 4))),
    ("mha_divisible", lambda L: L.nn.MultiheadAttention(5, 2)),
    ("mha_positive", lambda L: L.nn.MultiheadAttention(0, 2)),
    ("encoder_activation", lambda L: L.nn.TransformerEncoderLayer(8, 2, activation="tanh")),
    ("transformer_batch", lambda L: L.nn.Transformer(8, 2, 1, 1, 16).double()(
        _x(L, 3, 2, 8), _x(L, 3, 1, 8))),
    ("transformer_features", lambda L: L.nn.Transformer(8, 2, 1, 1, 16).double()(
        _x(L, 3, 2, 8), _x(L, 3, 2, 6))),
    ("groupnorm_divisible", lambda L: L.nn.GroupNorm(3, 4)),
    ("groupnorm_channels", lambda L: L.nn.GroupNorm(2, 4).double()(_x(L, 2, 6, 3))),
    ("groupnorm_dims", lambda L: L.nn.GroupNorm(2, 4).double()(_x(L, 4))),
    ("f_group_norm_groups", lambda L: L.nn.functional.group_norm(_x(L, 2, 6, 3), 4)),
    ("f_group_norm_bias", lambda L: L.nn.functional.group_norm(_x(L, 2, 6, 3), 2, L.ones(6),
                                                               L.ones(4))),
    ("f_group_norm_bias_only", lambda L: L.nn.functional.group_norm(_x(L, 2, 6, 3), 2, None,
                                                                    L.ones(4))),
    ("instancenorm_spatial", lambda L: L.nn.InstanceNorm1d(6)(_x(L, 2, 6, 1))),
    ("instancenorm_dims", lambda L: L.nn.InstanceNorm1d(3)(_x(L, 3))),
    ("instancenorm2d_dims", lambda L: L.nn.InstanceNorm2d(3)(_x(L, 3, 4))),
    ("instancenorm_affine_features", lambda L: L.nn.InstanceNorm1d(3, affine=True).double()(
        _x(L, 2, 4, 5))),
    ("paramlist_call", lambda L: L.nn.ParameterList([L.zeros(1)])(1)),
    ("paramdict_call", lambda L: L.nn.ParameterDict()(1)),
    ("paramlist_extend", lambda L: L.nn.ParameterList().extend(L.zeros(2))),
    ("paramlist_index", lambda L: L.nn.ParameterList([L.zeros(1)])[3]),
    ("paramdict_key", lambda L: L.nn.ParameterDict()[1]),
    ("paramdict_update", lambda L: L.nn.ParameterDict().update(3)),
    ("paramdict_update_len", lambda L: L.nn.ParameterDict().update([(1, 2, 3)])),
]


@pytest.mark.parametrize("name,case", ERRORS, ids=[row[0] for row in ERRORS])
def test_errors_match_torch(name, case):
    torch = pytest.importorskip("torch")
    _same_error(torch, case)


REPRS = [
    lambda L: L.nn.RNN(3, 4, 2, nonlinearity="relu", bias=False, batch_first=True,
                       dropout=0.5, bidirectional=True),
    lambda L: L.nn.LSTM(3, 4, proj_size=2),
    lambda L: L.nn.GRU(3, 4),
    lambda L: L.nn.RNNCell(3, 4, bias=False, nonlinearity="relu"),
    lambda L: L.nn.LSTMCell(3, 4),
    lambda L: L.nn.GRUCell(3, 4, bias=False),
    lambda L: L.nn.MultiheadAttention(8, 2, kdim=3, vdim=5, bias=False),
    lambda L: L.nn.TransformerEncoder(L.nn.TransformerEncoderLayer(8, 2, 16), 3,
                                      norm=L.nn.LayerNorm(8)),
    lambda L: L.nn.Transformer(8, 2, 1, 1, 16),
    lambda L: L.nn.GroupNorm(2, 4, affine=False),
    lambda L: L.nn.InstanceNorm1d(3),
    lambda L: L.nn.InstanceNorm2d(3, affine=True, track_running_stats=True),
    lambda L: L.nn.Sequential(L.nn.LSTM(2, 3), L.nn.ParameterDict({"b": L.zeros(2, 3),
                                                                   "a": L.zeros(4)})),
    lambda L: L.nn.ParameterList([L.zeros(2, 3), L.zeros(4, dtype=L.float64), 1, "x"]),
    lambda L: L.nn.ParameterList([L.zeros(2)]),
    lambda L: L.nn.ParameterList(),
    lambda L: L.nn.ParameterDict(),
]


@pytest.mark.parametrize("make", REPRS, ids=[str(i) for i in range(len(REPRS))])
def test_repr_and_state_dict_keys_match_torch(make):
    torch = pytest.importorskip("torch")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tm, nm = make(torch), make(npgrad)
    # ParameterList prints dtypes, npgrad's as ``npgrad.float32``
    assert repr(nm) == repr(tm).replace("[torch.float", "[npgrad.float")
    assert [(k, tuple(v.shape)) for k, v in nm.state_dict().items()] == \
        [(k, tuple(v.shape)) for k, v in tm.state_dict().items()]
    assert [k for k, _ in nm.named_parameters()] == [k for k, _ in tm.named_parameters()]


def _warnings_of(fn):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fn()
    return [(w.category, str(w.message)) for w in caught]


@pytest.mark.parametrize("case", [
    lambda L: L.nn.RNN(3, 4, dropout=0.5),
    lambda L: L.nn.TransformerEncoder(L.nn.TransformerEncoderLayer(8, 2, 16), 2),
    lambda L: L.nn.TransformerEncoder(L.nn.TransformerEncoderLayer(8, 2, 16, batch_first=True,
                                                                   norm_first=True), 2),
    lambda L: L.nn.TransformerEncoder(L.nn.TransformerEncoderLayer(8, 2, 16, batch_first=True),
                                      2),
    lambda L: L.nn.InstanceNorm1d(3)(L.zeros(2, 4, 5)),
    lambda L: L.nn.MultiheadAttention(4, 2)(L.zeros(3, 2, 4), L.zeros(3, 2, 4),
                                            L.zeros(3, 2, 4),
                                            key_padding_mask=L.zeros(2, 3, dtype=L.bool),
                                            attn_mask=L.zeros(3, 3)),
], ids=["rnn_dropout", "nested_batch_first", "nested_norm_first", "no_warning",
        "instancenorm_features", "mha_mixed_masks"])
def test_warnings_match_torch(case):
    torch = pytest.importorskip("torch")
    assert _warnings_of(lambda: case(npgrad)) == _warnings_of(lambda: case(torch))


# -- behaviour beyond a single call ------------------------------------------------------

def test_instance_norm_running_stats_over_steps():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(4)
    tm = torch.nn.InstanceNorm1d(3, track_running_stats=True, momentum=0.2).double()
    nm = nn.InstanceNorm1d(3, track_running_stats=True, momentum=0.2).double()
    for _ in range(3):
        x = rng.standard_normal((4, 3, 6))
        tm(torch.tensor(x))
        nm(npgrad.tensor(x))
    for k, v in tm.state_dict().items():
        _close(v, nm.state_dict()[k])
    tm.eval()
    nm.eval()
    x = rng.standard_normal((2, 3, 6))
    _close(tm(torch.tensor(x)), nm(npgrad.tensor(x)))


def test_encoder_nested_fast_path_zeroes_padding_like_torch():
    """Note [Nested-tensor fast path of TransformerEncoder]: eval + no_grad pads with zeros."""
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(6)

    def make(L):
        return L.nn.TransformerEncoder(L.nn.TransformerEncoderLayer(8, 2, 16, batch_first=True),
                                       2, norm=L.nn.LayerNorm(8))

    tm, nm = make(torch).double().eval(), make(npgrad).double().eval()
    copy_state(tm, nm)
    x = rng.standard_normal((2, 4, 8))
    for kpm in (_KPM[:1] + [[False] * 3 + [True]], [[True, False, False, False]] * 2):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # torch's prototype nested-tensor warning
            with torch.no_grad():
                ty = tm(torch.tensor(x), src_key_padding_mask=torch.tensor(kpm))
        with npgrad.no_grad():
            ny = nm(npgrad.tensor(x), src_key_padding_mask=npgrad.tensor(kpm))
        _close(ty, ny)
        # with grad recording no fast path: the padded positions are computed
        _close(tm(torch.tensor(x), src_key_padding_mask=torch.tensor(kpm)),
               nm(npgrad.tensor(x), src_key_padding_mask=npgrad.tensor(kpm)))


def test_rnn_dropout_between_layers_only_in_training():
    npgrad.manual_seed(0)
    lstm = nn.LSTM(2, 3, num_layers=2, dropout=1.0).double()
    x = npgrad.tensor(np.random.default_rng(0).standard_normal((4, 1, 2)))
    out_train, _ = lstm(x)
    # the second layer saw zeros: its output is the LSTM of a zero input
    second = nn.LSTM(3, 3).double()
    second.load_state_dict({k.replace("_l1", "_l0"): v for k, v in lstm.state_dict().items()
                            if "_l1" in k})
    _close(out_train, second(npgrad.zeros(4, 1, 3, dtype=npgrad.float64))[0])
    lstm.eval()
    out_eval, _ = lstm(x)
    assert not np.allclose(out_eval.detach().numpy(), out_train.detach().numpy())


def test_parameter_containers_behave_like_torch():
    torch = pytest.importorskip("torch")
    for L in (torch, npgrad):
        pl = L.nn.ParameterList([L.zeros(2), L.nn.Parameter(L.ones(3))])
        pl.append(L.zeros(1))
        pl.extend([L.ones(2)])
        pl += [L.ones(5)]
        assert len(pl) == 5 and isinstance(pl[0], L.nn.Parameter) and pl[0].requires_grad
        assert [tuple(p.shape) for p in pl[1:4]] == [(3,), (1,), (2,)]
        assert isinstance(pl[-2:], L.nn.ParameterList) and len(pl[-2:]) == 2
        pl[0] = L.ones(7)
        assert [k for k, _ in pl.named_parameters()] == ["0", "1", "2", "3", "4"]
        assert tuple(pl[0].shape) == (7,)

        pd = L.nn.ParameterDict({"b": L.zeros(1), "a": L.zeros(2)})
        assert list(pd) == ["a", "b"]  # a plain dict is added in sorted order
        pd2 = L.nn.ParameterDict([("z", L.zeros(1)), ("y", L.zeros(1))])
        assert list(pd2.keys()) == ["z", "y"]
        assert list((pd | pd2).keys()) == ["a", "b", "z", "y"]
        assert pd.setdefault("c", L.ones(3)) is pd["c"] and "c" in pd
        assert tuple(pd.pop("a").shape) == (2,) and "a" not in pd and len(pd) == 2
        assert pd.get("nope", 5) == 5
        k, v = pd.popitem()
        assert k == "c" and list(pd) == ["b"]
        pd["x"] = "a string"
        assert [k for k, _ in pd.named_parameters()] == ["b"] and pd["x"] == "a string"
        pd.clear()
        assert len(pd) == 0 and list(pd.parameters()) == []
        model = L.nn.Module()
        model.params = L.nn.ParameterDict({"w": L.ones(2, 2)})
        assert list(model.state_dict()) == ["params.w"]


def test_cell_grad_fn_names_match_torch():
    """torch's CPU cells are composites too, so their outputs' nodes are the same."""
    torch = pytest.importorskip("torch")
    names = []
    for L in (torch, npgrad):
        x = L.zeros(2, 3, requires_grad=True)
        outs = [L.nn.RNNCell(3, 4)(x), *L.nn.LSTMCell(3, 4)(x), L.nn.GRUCell(3, 4)(x),
                L.nn.GRUCell(3, 4)(x[0])]
        names.append([type(o.grad_fn).__name__ for o in outs])
    assert names[0] == names[1]


def test_training_steps_match_torch():
    """A small sequence model trained with SGD: the same losses step by step."""
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(7)
    x = rng.standard_normal((6, 4, 3))
    target = rng.standard_normal((4, 2))

    class Net:
        def __init__(self, L):
            self.rnn = L.nn.LSTM(3, 5, 2, batch_first=False).double()
            self.attn = L.nn.MultiheadAttention(5, 1).double()
            self.head = L.nn.Linear(5, 2).double()
            self.model = L.nn.ModuleList([self.rnn, self.attn, self.head])

        def __call__(self, inp):
            out, _ = self.rnn(inp)
            out, _ = self.attn(out, out, out)
            return self.head(out[-1])

    nets = {lib: Net(lib) for lib in (torch, npgrad)}
    copy_state(nets[torch].model, nets[npgrad].model)
    losses = {}
    for lib, net in nets.items():
        opt = lib.optim.SGD(net.model.parameters(), lr=0.1)
        losses[lib] = []
        for _ in range(3):
            opt.zero_grad()
            loss = lib.nn.functional.mse_loss(net(lib.tensor(x)), lib.tensor(target))
            loss.backward()
            opt.step()
            losses[lib].append(loss.item())
    np.testing.assert_allclose(losses[npgrad], losses[torch], rtol=1e-10)


# -- no torch needed ---------------------------------------------------------------------

def _set(module, **values):
    with npgrad.no_grad():
        for name, value in values.items():
            getattr(module, name).copy_(npgrad.tensor(np.asarray(value, dtype=np.float64)))


def test_rnn_cell_hand_derived_value():
    cell = nn.RNNCell(2, 2).double()
    _set(cell, weight_ih=[[1.0, 0.0], [0.0, 2.0]], weight_hh=[[0.5, 0.0], [0.0, -1.0]],
         bias_ih=[0.1, 0.0], bias_hh=[0.0, 0.2])
    x = npgrad.tensor([[1.0, 0.5]], dtype=npgrad.float64)
    h = npgrad.tensor([[2.0, 1.0]], dtype=npgrad.float64)
    # h' = tanh(W_ih x + b_ih + W_hh h + b_hh) = tanh([1 + 0.1 + 1, 1 + 0 - 1 + 0.2])
    np.testing.assert_allclose(cell(x, h).detach().numpy(), [[math.tanh(2.1), math.tanh(0.2)]])
    out = cell(x, h)
    out.sum().backward()
    # d/dh of sum(tanh(a)) = W_hh^T (1 - tanh(a)^2)
    d = np.array([1 - math.tanh(2.1) ** 2, 1 - math.tanh(0.2) ** 2])
    np.testing.assert_allclose(cell.weight_hh.grad.numpy(), np.outer(d, [2.0, 1.0]))


def test_gru_and_lstm_cells_hand_derived_values():
    # all-zero weights: GRU gates r = z = 1/2, n = tanh(0) = 0, so h' = n + z (h - n) = h / 2
    gru = nn.GRUCell(3, 2).double()
    for p in gru.parameters():
        nn.init.zeros_(p)
    h = npgrad.tensor([[4.0, -2.0]], dtype=npgrad.float64)
    np.testing.assert_allclose(_arr(gru(npgrad.ones(1, 3, dtype=npgrad.float64), h)),
                               [[2.0, -1.0]])
    # LSTM with only the cell-gate bias set: i = f = o = 1/2, g = tanh(b)
    lstm = nn.LSTMCell(1, 1).double()
    for p in lstm.parameters():
        nn.init.zeros_(p)
    _set(lstm, bias_ih=[0.0, 0.0, 0.5, 0.0])
    h1, c1 = lstm(npgrad.zeros(1, 1, dtype=npgrad.float64),
                  (npgrad.zeros(1, 1, dtype=npgrad.float64),
                   npgrad.full((1, 1), 2.0, dtype=npgrad.float64)))
    c_expected = 0.5 * 2.0 + 0.5 * math.tanh(0.5)
    np.testing.assert_allclose(_arr(c1), [[c_expected]])
    np.testing.assert_allclose(_arr(h1), [[0.5 * math.tanh(c_expected)]])


def test_rnn_layer_is_the_cell_unrolled():
    npgrad.manual_seed(1)
    rnn = nn.GRU(3, 4, batch_first=True).double()
    cell = nn.GRUCell(3, 4).double()
    cell.load_state_dict({k[:-3]: v for k, v in rnn.state_dict().items()})
    x = npgrad.tensor(np.random.default_rng(1).standard_normal((2, 5, 3)))
    out, h_n = rnn(x)
    h = npgrad.zeros(2, 4, dtype=npgrad.float64)
    for t in range(5):
        h = cell(x[:, t], h)
        _close(out[:, t], h)
    _close(h_n[0], h)


def test_sdpa_hand_derived_value():
    # equal keys: uniform attention, the output is the mean of the values
    q = npgrad.tensor(np.random.default_rng(0).standard_normal((1, 2, 3)))
    k = npgrad.ones(1, 4, 3, dtype=npgrad.float64)
    v = npgrad.tensor(np.arange(8.0).reshape(1, 4, 2))
    out = F.scaled_dot_product_attention(q, k, v)
    np.testing.assert_allclose(out.numpy(), [[[3.0, 4.0], [3.0, 4.0]]])
    # causal: the first query sees only the first value
    out = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    np.testing.assert_allclose(out.numpy()[0, 0], [0.0, 1.0])


def test_group_norm_hand_derived_value():
    x = npgrad.tensor([[[1.0], [3.0], [10.0], [14.0]]], dtype=npgrad.float64)
    w = npgrad.tensor([1.0, 2.0, 3.0, 4.0], dtype=npgrad.float64)
    b = npgrad.tensor([0.0, 0.0, 1.0, 1.0], dtype=npgrad.float64)
    # group {1, 3}: mean 2, std 1; group {10, 14}: mean 12, std 2; then per-channel w, b
    out = F.group_norm(x, 2, w, b, eps=0.0)
    np.testing.assert_allclose(out.numpy()[0, :, 0], [-1.0, 2.0, -2.0, 5.0])


def test_init_schemes():
    npgrad.manual_seed(0)
    lstm = nn.LSTM(5, 16, 2)
    bound = 1 / math.sqrt(16)
    for _, p in lstm.named_parameters():
        data = p.detach().numpy()
        assert np.abs(data).max() <= bound and np.abs(data).max() > 0.9 * bound
    mha = nn.MultiheadAttention(16, 4)
    w = mha.in_proj_weight.detach().numpy()
    xavier = math.sqrt(6.0 / (16 + 48))
    assert np.abs(w).max() <= xavier and np.abs(w).max() > 0.9 * xavier
    assert not mha.in_proj_bias.detach().numpy().any()
    assert not mha.out_proj.bias.detach().numpy().any()
    gn = nn.GroupNorm(2, 4)
    assert gn.weight.detach().numpy().tolist() == [1.0] * 4
    layer = nn.TransformerEncoderLayer(8, 2, 16)
    enc = nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)
    # the layers are deep copies: same values, distinct parameters
    a, b = enc.layers[0].linear1.weight, enc.layers[1].linear1.weight
    assert a is not b and np.array_equal(a.detach().numpy(), b.detach().numpy())
    assert isinstance(enc.layers[0].activation, type(F.relu))
