"""npgrad.nn.functional: layers, activations and losses as functions, torch's names and signatures.

Note [Where the nn ops live]
Convolution and pooling are op nodes in ``npgrad._ops.conv`` and the losses in
``npgrad._ops.loss``.  The few remaining nn ops with a fused grad_fn of their
own (activations, batch and layer norm, embedding) are defined here, each node
next to its function; every backward is written in npgrad ops, so it is
recorded under ``create_graph=True`` and higher-order gradients work.
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from .._ops._core import Node, SavedTensor, record, saved
from .._ops.conv import (adaptive_avg_pool2d, avg_pool2d, conv_nd, max_pool2d,  # noqa: F401
                         _LinearWindowNode)
from .._ops.inplace import apply_inplace, relu_
from .._ops.loss import (binary_cross_entropy, binary_cross_entropy_with_logits,  # noqa: F401
                         cross_entropy, huber_loss, l1_loss, mse_loss, nll_loss, smooth_l1_loss)
from .._ops.pointwise import relu as _relu, sigmoid, tanh  # noqa: F401
from .._ops.reduction import log_softmax as _log_softmax, softmax as _softmax
from .._tensor import Tensor, bump_version, wrap


def relu(input: Tensor, inplace: bool = False) -> Tensor:
    """max(input, 0) (grad_fn ``ReluBackward0``)."""
    return relu_(input) if inplace else _relu(input)


def softmax(input: Tensor, dim: int | None = None, _stacklevel: int = 3,
            dtype: Any = None) -> Tensor:
    return _softmax(input, _legacy_dim(input, dim), dtype)


def log_softmax(input: Tensor, dim: int | None = None, _stacklevel: int = 3,
                dtype: Any = None) -> Tensor:
    return _log_softmax(input, _legacy_dim(input, dim), dtype)


def _legacy_dim(input: Tensor, dim: int | None) -> int:
    if dim is not None:
        return dim
    import warnings

    warnings.warn("Implicit dimension choice for softmax has been deprecated. Change the call "
                  "to include dim=X as an argument.", UserWarning, stacklevel=3)
    return 0 if input.dim() in (0, 1, 3) else 1


# -- linear and convolution ---------------------------------------------------------------

def linear(input: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """``input @ weight.T + bias`` with torch's graph: AddmmBackward0 for a matrix input.

    >>> import npgrad as torch
    >>> torch.nn.functional.linear(torch.ones(1, 2), torch.ones(3, 2), torch.zeros(3))
    tensor([[2., 2., 2.]])
    """
    from .._ops.linalg import addmm, matmul
    from .._ops.shape import t, view

    x = input._data
    if bias is None:
        return matmul(input, t(weight))
    if x.ndim == 2:
        return addmm(bias, input, t(weight))
    if x.ndim == 1 or (x.ndim > 2 and input.is_contiguous()):
        flat = view(input, (-1, x.shape[-1]))
        out = addmm(bias, flat, t(weight))
        return view(out, x.shape[:-1] + (weight._data.shape[0],))
    return matmul(input, t(weight)) + bias


def conv1d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride: Any = 1,
           padding: Any = 0, dilation: Any = 1, groups: int = 1) -> Tensor:
    """1-d convolution over ``(N, C, L)`` or ``(C, L)`` (grad_fn ``ConvolutionBackward0``)."""
    return conv_nd(input, weight, bias, stride, padding, dilation, groups, 1)


def conv2d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride: Any = 1,
           padding: Any = 0, dilation: Any = 1, groups: int = 1) -> Tensor:
    """2-d convolution over ``(N, C, H, W)`` or ``(C, H, W)`` (grad_fn ``ConvolutionBackward0``)."""
    return conv_nd(input, weight, bias, stride, padding, dilation, groups, 2)


def max_pool1d(input: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0,
               dilation: Any = 1, ceil_mode: bool = False, return_indices: bool = False) -> Any:
    from .._ops.shape import squeeze, unsqueeze

    def one(v: Any) -> Any:
        v = v[0] if isinstance(v, (list, tuple)) else v
        return (1, v)

    out = max_pool2d(unsqueeze(input, -2), one(kernel_size),
                     None if stride is None else one(stride), (0, one(padding)[1]),
                     one(dilation), ceil_mode, return_indices)
    if return_indices:
        return squeeze(out[0], -2), squeeze(out[1], -2)
    return squeeze(out, -2)


# -- dropout ---------------------------------------------------------------------------

def dropout(input: Tensor, p: float = 0.5, training: bool = True,
            inplace: bool = False) -> Tensor:
    """Zero each element with probability ``p`` (npgrad's default generator), scale by 1/(1-p)."""
    from .._creation import _rng
    from .._ops.inplace import mul_
    from .._ops.pointwise import mul

    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if not training or p == 0.0 or input._data.size == 0:
        return input
    x = input._data
    keep = _rng(None).random(x.shape) >= p
    if p == 1.0:
        mask = np.zeros(x.shape, dtype=x.dtype)
    else:
        mask = (keep / (1.0 - p)).astype(x.dtype)
    mask_t = wrap(mask, 0)
    return mul_(input, mask_t) if inplace else mul(input, mask_t)


# -- activations -------------------------------------------------------------------------

class LeakyReluBackward0(Node):
    __slots__ = ("self_", "negative_slope")
    _saved_fields = ("self_",)

    def backward(self, grad: Tensor) -> tuple:
        from .._ops.pointwise import where

        x = saved(self, "self_")
        return where(x > 0, grad, grad * self.negative_slope),


def _leaky_relu(input: Tensor, negative_slope: float) -> Tensor:
    x = input._data
    out = np.where(x > 0, x, x * negative_slope).astype(x.dtype, copy=False)
    res, node = record(LeakyReluBackward0, (input,), out)
    if node is not None:
        node.self_ = SavedTensor(input)
        node.negative_slope = negative_slope
    return res


class LeakyReluBackward1(Node):
    """The in-place form: the input is overwritten, so the (same-signed) result is saved."""

    __slots__ = ("result", "negative_slope")
    _saved_fields = ("result",)

    def backward(self, grad: Tensor) -> tuple:
        from .._ops.pointwise import where

        r = saved(self, "result")
        return where(r > 0, grad, grad * self.negative_slope),


def _leaky_relu_result_saved(input: Tensor, negative_slope: float) -> Tensor:
    x = input._data
    out = np.where(x > 0, x, x * negative_slope).astype(x.dtype, copy=False)
    res, node = record(LeakyReluBackward1, (input,), out)
    if node is not None:
        if negative_slope < 0:
            raise RuntimeError(
                "In-place leakyReLu backward calculation is triggered with a negative slope "
                "which is not supported. This is caused by calling in-place forward function "
                "with a negative slope, please call out-of-place version instead. File an issue "
                "at https://github.com/pytorch/pytorch if you do require supporting in-place "
                "leakRelu backward calculation with negative slope")
        node.result = SavedTensor(res, True)
        node.negative_slope = negative_slope
    return res


def leaky_relu(input: Tensor, negative_slope: float = 0.01, inplace: bool = False) -> Tensor:
    """``x if x > 0 else negative_slope * x`` (grad_fn ``LeakyReluBackward0``; in place ``1``)."""
    if inplace:
        return apply_inplace(input, _leaky_relu_result_saved, negative_slope)
    return _leaky_relu(input, negative_slope)


_erf_np = np.vectorize(math.erf, otypes=[np.float64])


class ErfBackward0(Node):
    __slots__ = ("self_",)
    _saved_fields = ("self_",)

    def backward(self, grad: Tensor) -> tuple:
        from .._ops.pointwise import exp

        x = saved(self, "self_")
        return grad * (exp(-(x * x)) * (2.0 / math.sqrt(math.pi))),


def _erf(input: Tensor) -> Tensor:
    x = input._data
    res, node = record(ErfBackward0, (input,), _erf_np(x).astype(x.dtype, copy=False))
    if node is not None:
        node.self_ = SavedTensor(input)
    return res


_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)
_GELU_C = 0.044715


class GeluBackward0(Node):
    __slots__ = ("self_", "approximate")
    _saved_fields = ("self_",)

    def backward(self, grad: Tensor) -> tuple:
        from .._ops.pointwise import exp, tanh as tanh_

        x = saved(self, "self_")
        if self.approximate == "tanh":
            inner = (x + x * x * x * _GELU_C) * _SQRT_2_OVER_PI
            th = tanh_(inner)
            d_inner = (x * x * (3 * _GELU_C) + 1) * _SQRT_2_OVER_PI
            return grad * ((th + 1) * 0.5 + x * 0.5 * (1 - th * th) * d_inner),
        cdf = (_erf(x * math.sqrt(0.5)) + 1) * 0.5
        pdf = exp(x * x * -0.5) * (1.0 / math.sqrt(2.0 * math.pi))
        return grad * (cdf + x * pdf),


def gelu(input: Tensor, approximate: str = "none") -> Tensor:
    """Gaussian error linear unit, exact (erf) or ``approximate='tanh'`` (grad_fn ``GeluBackward0``)."""
    if approximate not in ("none", "tanh"):
        raise RuntimeError("approximate argument must be either none or tanh.")
    x = input._data
    if approximate == "tanh":
        out = 0.5 * x * (1 + np.tanh(_SQRT_2_OVER_PI * (x + _GELU_C * x * x * x)))
    else:
        out = 0.5 * x * (1 + _erf_np(x * math.sqrt(0.5)))
    res, node = record(GeluBackward0, (input,), np.asarray(out).astype(x.dtype, copy=False))
    if node is not None:
        node.self_ = SavedTensor(input)
        node.approximate = approximate
    return res


class SiluBackward0(Node):
    __slots__ = ("self_",)
    _saved_fields = ("self_",)

    def backward(self, grad: Tensor) -> tuple:
        x = saved(self, "self_")
        s = sigmoid(x)
        return grad * (s * (x * (1 - s) + 1)),


def _silu(input: Tensor) -> Tensor:
    from .._ops.pointwise import _np_sigmoid

    x = input._data
    res, node = record(SiluBackward0, (input,), (x * _np_sigmoid(x)).astype(x.dtype, copy=False))
    if node is not None:
        node.self_ = SavedTensor(input)
    return res


def _silu_of_copy(input: Tensor) -> Tensor:
    # the in-place form saves a copy of the input: the write-back overwrites the original
    from .._ops.shape import clone

    return _silu(clone(input))


def silu(input: Tensor, inplace: bool = False) -> Tensor:
    """``x * sigmoid(x)`` (grad_fn ``SiluBackward0``)."""
    return apply_inplace(input, _silu_of_copy) if inplace else _silu(input)


# -- normalization -------------------------------------------------------------------------

class _NormNode(Node):
    """Shared backward of batch and layer norm, in npgrad ops (differentiable again).

    ``axes`` are the reduced dims; ``param_shape`` views weight/bias against the
    input.  In training (``stats is None``) mean and variance are recomputed from
    the saved input so that second derivatives flow through them; in batch norm's
    eval mode ``stats`` holds the fixed ``(mean, invstd)`` arrays.
    """

    __slots__ = ("input", "weight", "axes", "param_shape", "wshape", "eps", "stats")
    _saved_fields = ("input", "weight")

    def backward(self, grad: Tensor) -> tuple:
        from .._ops.reduction import mean, sum as sum_
        from .._ops.pointwise import rsqrt
        from .._ops.shape import reshape

        x = saved(self, "input")
        w = saved(self, "weight") if self.weight is not None else None
        axes = self.axes
        need_x, need_w, need_b = (self.next_functions[i][0] is not None for i in range(3))
        if self.stats is None:
            mu = mean(x, axes, keepdim=True)
            xc = x - mu
            invstd = rsqrt(mean(xc * xc, axes, keepdim=True) + self.eps)
        else:
            mu_np, invstd_np = self.stats
            xc = x - wrap(mu_np, 0)
            invstd = wrap(invstd_np, 0)
        xhat = xc * invstd
        gx = gw = gb = None
        param_axes = self._param_axes(x._data.ndim)
        if need_w:
            gw = reshape(sum_(grad * xhat, param_axes), self.wshape)
        if need_b:
            gb = reshape(sum_(grad, param_axes), self.wshape)
        if need_x:
            gxhat = grad if w is None else grad * reshape(w, self.param_shape)
            if self.stats is None:
                gx = (gxhat - mean(gxhat, axes, keepdim=True)
                      - xhat * mean(gxhat * xhat, axes, keepdim=True)) * invstd
            else:
                gx = gxhat * invstd
        return gx, gw, gb

    def _param_axes(self, ndim: int) -> tuple:
        return tuple(i for i in range(ndim) if self.param_shape[i] == 1)


class NativeBatchNormBackward0(_NormNode):
    __slots__ = ()


class NativeLayerNormBackward0(_NormNode):
    __slots__ = ()


def _norm_record(cls: type, input: Tensor, weight: Any, bias: Any, out: np.ndarray, axes: tuple,
                 param_shape: tuple, wshape: tuple, eps: float, stats: Any) -> Tensor:
    res, node = record(cls, (input, weight, bias), out)
    if node is not None:
        node.input = SavedTensor(input)
        node.weight = SavedTensor(weight) if weight is not None else None
        node.axes, node.param_shape, node.eps, node.stats = axes, param_shape, eps, stats
        node.wshape = wshape
    return res


def _size(shape: tuple) -> str:
    return "torch.Size([" + ", ".join(str(s) for s in shape) + "])"


def batch_norm(input: Tensor, running_mean: Tensor | None, running_var: Tensor | None,
               weight: Tensor | None = None, bias: Tensor | None = None, training: bool = False,
               momentum: float = 0.1, eps: float = 1e-05) -> Tensor:
    """Normalize over every dim but the channel dim 1 (grad_fn ``NativeBatchNormBackward0``).

    In training the batch statistics are used and the running ones (when given)
    updated in place: ``running = (1 - momentum) * running + momentum * batch``,
    with the unbiased variance.
    """
    x = input._data
    if x.ndim < 2:
        raise ValueError(f"expected 2D or 3D input (got {x.ndim}D input)")
    if training:
        size = x.shape[0] * math.prod(x.shape[2:])
        if size == 1:
            raise ValueError("Expected more than 1 value per channel when training, got input "
                             f"size {_size(x.shape)}")
    c = x.shape[1]
    for name, t in (("running_mean", running_mean), ("running_var", running_var),
                    ("weight", weight), ("bias", bias)):
        if t is not None and t._data.size != c:
            raise RuntimeError(f"{name} should contain {c} elements not {t._data.size}")
    axes = (0,) + tuple(range(2, x.ndim))
    param_shape = (1, c) + (1,) * (x.ndim - 2)
    acc = np.float64
    if training or running_mean is None:
        mu = x.mean(axis=axes, dtype=acc, keepdims=True)
        var = np.square(x - mu).mean(axis=axes, keepdims=True)
        stats = None
        if training and running_mean is not None:
            n = x.size // c
            with np.errstate(divide="ignore", invalid="ignore"):
                unbiased = var.reshape(c) * (n / (n - 1)) if n > 1 else var.reshape(c) * np.inf
            rm, rv = running_mean._data, running_var._data
            np.copyto(rm, (1 - momentum) * rm + momentum * mu.reshape(c), casting="unsafe")
            np.copyto(rv, (1 - momentum) * rv + momentum * unbiased, casting="unsafe")
            bump_version(running_mean)
            bump_version(running_var)
    else:
        mu = running_mean._data.astype(acc).reshape(param_shape)
        var = running_var._data.astype(acc).reshape(param_shape)
    invstd = 1.0 / np.sqrt(var + eps)
    out = (x - mu) * invstd
    if weight is not None:
        out = out * weight._data.reshape(param_shape)
    if bias is not None:
        out = out + bias._data.reshape(param_shape)
    out = np.ascontiguousarray(out, dtype=x.dtype)
    if not training and running_mean is not None:
        stats = (mu.astype(x.dtype), invstd.astype(x.dtype))
    return _norm_record(NativeBatchNormBackward0, input, weight, bias, out, axes, param_shape,
                        (c,), eps, stats)


def layer_norm(input: Tensor, normalized_shape: Any, weight: Tensor | None = None,
               bias: Tensor | None = None, eps: float = 1e-05) -> Tensor:
    """Normalize over the trailing ``normalized_shape`` dims (grad_fn ``NativeLayerNormBackward0``)."""
    x = input._data
    shape = (int(normalized_shape),) if isinstance(normalized_shape, int) else \
        tuple(int(s) for s in normalized_shape)
    k = len(shape)
    if k == 0 or x.ndim < k or x.shape[x.ndim - k:] != shape:
        raise RuntimeError(
            f"Given normalized_shape=[{', '.join(map(str, shape))}], expected input with shape "
            f"[*, {', '.join(map(str, shape))}], but got input of size"
            f"[{', '.join(map(str, x.shape))}]")
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and t._data.shape != shape:
            raise RuntimeError(f"Expected {name} to be of same shape as normalized_shape, but "
                               f"got {name} of shape [{', '.join(map(str, t._data.shape))}] and "
                               f"normalized_shape = [{', '.join(map(str, shape))}]")
    axes = tuple(range(x.ndim - k, x.ndim))
    param_shape = (1,) * (x.ndim - k) + shape
    mu = x.mean(axis=axes, dtype=np.float64, keepdims=True)
    var = np.square(x - mu).mean(axis=axes, keepdims=True)
    out = (x - mu) / np.sqrt(var + eps)
    if weight is not None:
        out = out * weight._data
    if bias is not None:
        out = out + bias._data
    out = np.ascontiguousarray(out, dtype=x.dtype)
    return _norm_record(NativeLayerNormBackward0, input, weight, bias, out, axes, param_shape,
                        shape, eps, None)


# -- embedding ----------------------------------------------------------------------------

class EmbeddingBackward0(_LinearWindowNode):
    __slots__ = ()


class EmbeddingDenseBackwardBackward0(_LinearWindowNode):
    __slots__ = ()


def embedding(input: Tensor, weight: Tensor, padding_idx: int | None = None,
              max_norm: float | None = None, norm_type: float = 2.0,
              scale_grad_by_freq: bool = False, sparse: bool = False) -> Tensor:
    """Rows of ``weight`` picked by the indices in ``input`` (grad_fn ``EmbeddingBackward0``).

    The row ``padding_idx`` gets no gradient.
    """
    idx = input._data
    num = weight._data.shape[0]
    if padding_idx is not None:
        if padding_idx > 0:
            assert padding_idx < num, "Padding_idx must be within num_embeddings"
        elif padding_idx < 0:
            assert padding_idx >= -num, "Padding_idx must be within num_embeddings"
            padding_idx = num + padding_idx
    else:
        padding_idx = -1
    if idx.dtype not in (np.int64, np.int32):
        raise RuntimeError("Expected tensor for argument #1 'indices' to have one of the "
                           "following scalar types: Long, Int; but got "
                           f"{input.type()} instead (while checking arguments for embedding)")
    if idx.size and (idx.min() < 0 or idx.max() >= num):
        raise IndexError("index out of range in self")
    if max_norm is not None:
        rows = np.unique(idx)
        w = weight._data
        norms = np.linalg.norm(w[rows], ord=norm_type, axis=1) if norm_type != 2 else \
            np.sqrt(np.square(w[rows]).sum(axis=1))
        scale = np.where(norms > max_norm, max_norm / (norms + 1e-7), 1.0)
        w[rows] = (w[rows] * scale[:, None]).astype(w.dtype)
        bump_version(weight)
    dim = weight._data.shape[1:]
    flat = idx.reshape(-1)
    keep = (flat != padding_idx).astype(weight._data.dtype)
    freq = None
    if scale_grad_by_freq:
        counts = np.bincount(flat, minlength=num)
        freq = counts[flat].astype(weight._data.dtype)

    def take(w: np.ndarray) -> np.ndarray:
        return w[flat].reshape(idx.shape + dim)

    def scatter(g: np.ndarray) -> np.ndarray:
        rows = g.reshape((-1,) + dim) * keep.reshape((-1,) + (1,) * len(dim))
        if freq is not None:
            rows = rows / freq.reshape((-1,) + (1,) * len(dim))
        out = np.zeros((num,) + dim, dtype=g.dtype)
        np.add.at(out, flat, rows)
        return out

    def take_masked(w: np.ndarray) -> np.ndarray:  # adjoint of scatter
        rows = w[flat] * keep.reshape((-1,) + (1,) * len(dim))
        if freq is not None:
            rows = rows / freq.reshape((-1,) + (1,) * len(dim))
        return rows.reshape(idx.shape + dim)

    res, node = record(EmbeddingBackward0, (weight,), np.ascontiguousarray(take(weight._data)))
    if node is not None:
        node.fwd, node.adj = take_masked, scatter
        node.fwd_cls, node.adj_cls = EmbeddingBackward0, EmbeddingDenseBackwardBackward0
    return res


# -- misc --------------------------------------------------------------------------------

def pad(input: Tensor, pad: Any, mode: str = "constant", value: float | None = None) -> Tensor:
    """Constant padding of the last dims (``pad`` = (left, right, top, bottom, ...))."""
    from .._ops.shape import cat
    from .._creation import full

    if mode != "constant":
        raise NotImplementedError(f"npgrad pad supports mode='constant' only, got '{mode}'")
    out = input
    fill = 0.0 if value is None else value
    for i in range(len(pad) // 2):
        dim = out._data.ndim - 1 - i
        lo, hi = pad[2 * i], pad[2 * i + 1]
        parts = []
        shape = list(out._data.shape)
        if lo > 0:
            shape[dim] = lo
            parts.append(full(tuple(shape), fill, dtype=out.dtype))
        core = out
        if lo < 0 or hi < 0:
            n = out._data.shape[dim]
            core = out.narrow(dim, max(-lo, 0), n - max(-lo, 0) - max(-hi, 0))
        parts.append(core)
        if hi > 0:
            shape[dim] = hi
            parts.append(full(tuple(shape), fill, dtype=out.dtype))
        out = cat(parts, dim) if len(parts) > 1 else core
    return out
