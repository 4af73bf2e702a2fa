"""Op-table rows: nn ops that had none (gelu, silu, leaky_relu, batch_norm, layer_norm, embedding,
max_pool2d) (see tests/op_table.py for what a row is and which checks it gets)."""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from op_table import OpRow, P, _F


def N(name: str, fn: Callable, inputs: tuple, grad_fn: str | None = None, **kw: Any) -> OpRow:
    """An nn op that is not elementwise: no pointwise property test."""
    return OpRow(name, fn, inputs, "nn", grad_fn=grad_fn, **kw)


_S = (2, 3)
# distinct values: max pooling is differentiable away from ties
_DISTINCT = np.random.default_rng(11).permutation(32).reshape(2, 1, 4, 4) / 5.0


def _batch_norm_eval(m: Any, x: Any, w: Any, b: Any) -> Any:
    mean = m.tensor([0.5, -0.25, 1.0], dtype=x.dtype)
    var = m.tensor([1.5, 0.75, 2.0], dtype=x.dtype)
    return _F(m).batch_norm(x, mean, var, w, b, training=False, eps=1e-3)


def _batch_norm_train(m: Any, x: Any, w: Any, b: Any) -> Any:
    # running statistics are updated in place (not differentiated); the output uses the batch's
    mean, var = m.zeros(3, dtype=x.dtype), m.ones(3, dtype=x.dtype)
    return _F(m).batch_norm(x, mean, var, w, b, training=True, momentum=0.2)


ROWS: list[OpRow] = [
    # activations (npgrad/_ops/activation.py)
    P("gelu", lambda m, x: _F(m).gelu(x), (_S,), "GeluBackward0"),
    P("gelu_tanh", lambda m, x: _F(m).gelu(x, approximate="tanh"), (_S,), "GeluBackward0"),
    P("silu", lambda m, x: _F(m).silu(x), (_S,), "SiluBackward0"),
    P("leaky_relu", lambda m, x: _F(m).leaky_relu(x, 0.1), (_S,), "LeakyReluBackward0",
      domain="nonzero"),
    P("leaky_relu_inplace", lambda m, x: _F(m).leaky_relu(x * 1, 0.2, inplace=True), (_S,),
      "LeakyReluBackward1", domain="nonzero"),
    # normalization (npgrad/_ops/normalization.py)
    N("batch_norm_train", _batch_norm_train, ((4, 3), (3,), (3,)), "NativeBatchNormBackward0"),
    N("batch_norm_train_no_stats", lambda m, x: _F(m).batch_norm(x, None, None, training=True),
      ((3, 2, 4),), "NativeBatchNormBackward0"),
    N("batch_norm_eval", _batch_norm_eval, ((4, 3), (3,), (3,)), "NativeBatchNormBackward0"),
    N("layer_norm", lambda m, x: _F(m).layer_norm(x, (3,)), ((4, 3),), "NativeLayerNormBackward0"),
    N("layer_norm_affine", lambda m, x, w, b: _F(m).layer_norm(x, (2, 3), w, b, eps=1e-3),
      ((2, 2, 3), (2, 3), (2, 3)), "NativeLayerNormBackward0"),
    # embedding (npgrad/_ops/embedding.py): the index repeats, so gradients accumulate
    N("embedding", lambda m, w: _F(m).embedding(m.tensor([[0, 2], [2, 1]]), w), ((3, 4),),
      "EmbeddingBackward0"),
    # max pooling (npgrad/_ops/conv.py)
    N("max_pool2d", lambda m, x: _F(m).max_pool2d(x, 2, 1), (_DISTINCT,),
      "MaxPool2DWithIndicesBackward0"),
    N("max_pool2d_stride_padding", lambda m, x: _F(m).max_pool2d(x, 3, 2, padding=1),
      (_DISTINCT,), "MaxPool2DWithIndicesBackward0"),
]
