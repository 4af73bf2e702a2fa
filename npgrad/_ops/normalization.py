"""Batch and layer normalization: forward in NumPy, one registry entry each."""
from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np

from .._forward import has_tangent
from .._mode import RECORDING, _tls
if TYPE_CHECKING:
    from .._tensor import Tensor
else:  # Note [Tensor base and Tensor] in npgrad._tensor_base
    from .._tensor_base import TensorBase as Tensor
from .._tensor_base import bump_version, wrap
from . import checks
from .registry import General


# -- normalization -------------------------------------------------------------------------

# Note [Normalization as entries]
# ``native_batch_norm`` and ``native_layer_norm`` are General entries whose one rule gives
# the three gradients (input, weight, bias: Note [One rule for several inputs] in
# registry.py), written in npgrad ops so that it is differentiable again.  Their nodes
# keep and save what torch's do (the input, the weight, layer norm's bias, the batch
# statistics ``result1`` / ``result2`` -- mean and 1/std, empty in batch norm's eval mode --
# the running statistics, ``eps``, ``training``, ``normalized_shape``); hidden, what the
# rules read besides: the reduced dims ``axes``, the shape ``param_shape`` that views the
# weight against the input, and in eval mode the fixed ``stats`` (mean, 1/std) in the
# input's dtype.  In training (and in layer norm) the rule recomputes mean and variance
# from the saved input, so that second derivatives flow through them.  The tangent of the
# normalised input, from the tangent ``dx`` of the input, is ``invstd * (dx - mean(dx) -
# xhat * mean(xhat * dx))`` (fixed statistics: ``invstd * dx``), then the affine part's.

def _normalized(x: Tensor, axes: tuple, eps: float, stats: Any) -> tuple:
    """``(x - mean) * invstd`` and ``invstd``, in npgrad ops (``stats``: fixed arrays)."""
    from .pointwise import rsqrt
    from .reduction import mean

    if stats is None:
        xc = x - mean(x, axes, keepdim=True)
        invstd = rsqrt(mean(xc * xc, axes, keepdim=True) + eps)
    else:
        mu_np, invstd_np = stats
        xc = x - wrap(mu_np, 0)
        invstd = wrap(invstd_np, 0)
    return xc * invstd, invstd


def _param_axes(param_shape: tuple) -> tuple:
    return tuple(i for i, n in enumerate(param_shape) if n == 1)


def _norm_backward(grad: Tensor, input: Tensor, weight: Tensor | None, axes: tuple,
                   param_shape: tuple, wshape: tuple, eps: float, stats: Any,
                   grad_input_mask: tuple, moments: Any = None) -> tuple:
    """The gradients of input, weight and bias (Note [Normalization as entries])."""
    from .reduction import mean, sum as sum_
    from .shape import reshape

    x, w = input, weight
    need_x, need_w, need_b = grad_input_mask
    if (moments is not None
            and not (_tls.mode == RECORDING and (grad._requires_grad or x._requires_grad
                                                 or (w is not None and w._requires_grad)))
            and x._data.dtype.kind == "f" and grad._data.dtype == x._data.dtype
            and grad._data.shape == x._data.shape):
        return _layer_norm_backward_np(grad._data, x._data, moments,
                                       None if w is None else w._data, axes, param_shape,
                                       wshape, grad_input_mask)
    xhat, invstd = _normalized(x, axes, eps, stats)
    gx = gw = gb = None
    param_axes = _param_axes(param_shape)
    if need_w:
        gw = reshape(sum_(grad * xhat, param_axes), wshape)
    if need_b:
        gb = reshape(sum_(grad, param_axes), wshape)
    if need_x:
        gxhat = grad if w is None else grad * reshape(w, param_shape)
        if stats is None:
            gx = (gxhat - mean(gxhat, axes, keepdim=True)
                  - xhat * mean(gxhat * xhat, axes, keepdim=True)) * invstd
        else:
            gx = gxhat * invstd
    return gx, gw, gb


def _norm_tangent(input_t: Tensor, weight_t: Tensor | None, bias_t: Tensor | None,
                  input: Tensor, weight: Tensor | None, bias: Tensor | None, axes: tuple,
                  param_shape: tuple, eps: float, stats: Any) -> Tensor | None:
    """The output's tangent (Note [Normalization as entries])."""
    from .reduction import mean
    from .shape import reshape

    xhat, invstd = _normalized(input, axes, eps, stats)
    total = None
    if has_tangent(input):
        dx = input_t
        if stats is None:
            dx = dx - mean(dx, axes, keepdim=True)
            dx = (dx - xhat * mean(xhat * dx, axes, keepdim=True)) * invstd
        else:
            dx = dx * invstd
        total = dx if weight is None else dx * reshape(weight, param_shape)
    if weight is not None and has_tangent(weight):
        part = xhat * reshape(weight_t, param_shape)
        total = part if total is None else total + part
    if bias is not None and has_tangent(bias):
        part = reshape(bias_t, param_shape)
        total = part.expand(input._data.shape) if total is None else total + part
    return total


# Note [Layer norm's backward in NumPy]
# The backward above is written in npgrad ops so that it can be differentiated again
# (double backward), ~20 recorded-or-not ops with their Python cost each: 14% of a
# small GPT's training step.  When no graph of the gradient is wanted (the usual
# ``backward()``), layer norm's gradients are computed here in NumPy instead, with
# the same formulas in the input's dtype, from the mean and 1/std the forward saved
# (``result1``, ``result2``, in the input's dtype, as torch keeps them: one number per
# normalised row).  Batch norm keeps the op form (its eval-mode statistics, its
# reductions over the batch).

def _layer_norm_backward_np(g: np.ndarray, x: np.ndarray, moments: tuple,
                            w: np.ndarray | None, axes: tuple, param_shape: tuple,
                            wshape: tuple, grad_input_mask: tuple) -> tuple:
    need_x, need_w, need_b = grad_input_mask
    mu, invstd = moments
    xhat = x - mu
    xhat *= invstd
    mode = _tls.mode
    param_axes = _param_axes(param_shape)
    gx = gw = gb = None
    if need_w:
        gw = wrap(np.multiply(g, xhat).sum(axis=param_axes).reshape(wshape), mode)
    if need_b:
        gb = wrap(g.sum(axis=param_axes).reshape(wshape), mode)
    if need_x:
        gxhat = g if w is None else g * w.reshape(param_shape)
        out = gxhat - gxhat.mean(axis=axes, keepdims=True)
        out -= xhat * np.multiply(gxhat, xhat).mean(axis=axes, keepdims=True)
        out *= invstd
        gx = wrap(out, mode)
    return gx, gw, gb


# the output, ``result1`` (the batch mean) and ``result2`` (1/std) are computed by batch_norm
NATIVE_BATCH_NORM = General(
    "native_batch_norm(Tensor input, Tensor? weight, Tensor? bias, Tensor? running_mean, "
    "Tensor? running_var, bool training, float momentum, float eps, *, Tensor out=None)",
    grad_fn="NativeBatchNormBackward0", forward=None, inputs=("input", "weight", "bias"),
    params=("running_mean", "running_var", "training", "eps", "axes", "param_shape",
            "wshape", "stats"),
    keeps=("training", "eps", "axes", "param_shape", "wshape", "stats"),
    hidden=("axes", "param_shape", "wshape", "stats"),
    saves=("input", "weight", "result1", "result2", "running_mean", "running_var"),
    extra=("result1", "result2"),
    derivatives={("input", "weight", "bias"): lambda grad, input, weight, axes, param_shape,
                 wshape, eps, stats, grad_input_mask: _norm_backward(
                     grad, input, weight, axes, param_shape, wshape, eps, stats,
                     grad_input_mask)},
    tangent=_norm_tangent)

# the output and ``result1`` / ``result2`` (mean and 1/std per row) are computed by
# layer_norm; ``eps`` is kept (hidden) for the rule's recomputed statistics
NATIVE_LAYER_NORM = General(
    "native_layer_norm(Tensor input, SymIntArrayRef normalized_shape, Tensor? weight, "
    "Tensor? bias, float eps)", grad_fn="NativeLayerNormBackward0", forward=None,
    inputs=("input", "weight", "bias"), params=("normalized_shape", "eps", "axes",
                                                "param_shape"),
    keeps=("normalized_shape", "eps", "axes", "param_shape"),
    hidden=("eps", "axes", "param_shape"),  # (weights have the normalized shape)
    saves=("input", "weight", "bias", "result1", "result2"), extra=("result1", "result2"),
    derivatives={("input", "weight", "bias"): lambda grad, input, weight, result1, result2,
                 normalized_shape, axes, param_shape, eps, grad_input_mask: _norm_backward(
                     grad, input, weight, axes, param_shape, normalized_shape, eps, None,
                     grad_input_mask,
                     (result1._data, result2._data) if input._data.dtype.char in "fd"
                     else None)},
    tangent=lambda input_t, weight_t, bias_t, input, weight, bias, axes, param_shape, eps:
    _norm_tangent(input_t, weight_t, bias_t, input, weight, bias, axes, param_shape, eps,
                  None))


def _size(shape: tuple) -> str:
    return "torch.Size([" + ", ".join(str(s) for s in shape) + "])"


def _batch_norm_checks(x: np.ndarray, running_mean: Tensor | None, running_var: Tensor | None,
                       weight: Tensor | None, bias: Tensor | None, training: bool) -> None:
    """torch's checks of ``batch_norm``, in its order (Note [Checks before NumPy] in checks.py).

    The dtype rules are those of torch's CPU kernel: an int/bool input has no kernel; a
    half/bfloat16 input may take float32 parameters ("mixed type", decided by the first
    parameter given); otherwise every tensor must have the input's dtype."""
    if training:
        if x.ndim == 0:
            raise IndexError("tuple index out of range")
        if x.shape[0] * math.prod(x.shape[2:]) == 1:
            raise ValueError("Expected more than 1 value per channel when training, got input "
                             f"size {_size(x.shape)}")
    if (running_mean is None) != (running_var is None) and training:
        raise ValueError("running_mean and running_var must either both be None or neither be "
                         "None")
    if not training:
        for name, t in (("running_mean", running_mean), ("running_var", running_var)):
            if t is None:
                raise RuntimeError(f"{name} must be defined in evaluation mode")
    c = x.shape[1] if x.ndim > 1 else 0
    for name, t in (("running_mean", running_mean), ("running_var", running_var),
                    ("weight", weight), ("bias", bias)):
        if t is not None and t._data.size != c:
            raise RuntimeError(f"{name} should contain {c} elements not {t._data.size}")
    checks.size_at(x.shape, 1)
    checks.not_implemented_for("batch_norm", x.dtype, "biu")
    params = [t._data.dtype for t in (weight, bias, running_mean, running_var) if t is not None]
    if params and params[0] != x.dtype:  # torch's "mixed type": a reduced-float input
        if any(d != np.float32 for d in params):
            raise RuntimeError("mixed dtype (CPU): expect parameter to have scalar type of Float")
        if x.dtype != np.float16 and x.dtype.kind != "V":
            raise RuntimeError("mixed dtype (CPU): all inputs must share same datatype.")
        return
    for d in params:
        if d != x.dtype:
            raise RuntimeError(f"expected scalar type {checks.scalar_name(x.dtype)} but found "
                               f"{checks.scalar_name(d)}")


def batch_norm(input: Tensor, running_mean: Tensor | None, running_var: Tensor | None,
               weight: Tensor | None = None, bias: Tensor | None = None, training: bool = False,
               momentum: float = 0.1, eps: float = 1e-05) -> Tensor:
    """Normalize over every dim but the channel dim 1 (grad_fn ``NativeBatchNormBackward0``).

    In training the batch statistics are used and the running ones (when given)
    updated in place: ``running = (1 - momentum) * running + momentum * batch``,
    with the unbiased variance.
    """
    x = input._data
    _batch_norm_checks(x, running_mean, running_var, weight, bias, training)
    c = x.shape[1]
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
            # torch's kernel updates them without a version bump: the node saves them (and
            # checks their version in backward), and two training steps before one backward
            # stay legal
            np.copyto(rm, (1 - momentum) * rm + momentum * mu.reshape(c), casting="unsafe")
            np.copyto(rv, (1 - momentum) * rv + momentum * unbiased, casting="unsafe")
    else:
        mu = running_mean._data.astype(acc).reshape(param_shape)
        var = running_var._data.astype(acc).reshape(param_shape)
    invstd = 1.0 / np.sqrt(var + eps)
    if (training or running_mean is None) and x.dtype.itemsize == 2 and all(
            t is None or t._data.dtype == x.dtype for t in (weight, bias)):
        # a half-precision input without float32 parameters: torch's kernel keeps the batch
        # mean and 1/std in the input's dtype and normalises with those rounded values
        mu = mu.astype(x.dtype).astype(acc)
        invstd = invstd.astype(x.dtype).astype(acc)
    # torch's kernel folds the statistics into the affine, ``x * alpha + beta`` with
    # ``alpha = invstd * weight`` and ``beta = bias - mean * alpha``: the same values, but an
    # inf or NaN weight or bias gives torch's NaNs (inf - inf), not ``(x - mean) * inf``
    alpha = invstd if weight is None else invstd * weight._data.reshape(param_shape)
    with np.errstate(invalid="ignore", over="ignore"):
        beta = -mu * alpha
        if bias is not None:
            beta = beta + bias._data.reshape(param_shape)
        out = np.ascontiguousarray(x * alpha + beta, dtype=x.dtype)
    if training:  # torch's result1 / result2: the batch's mean and 1/std, none in eval mode
        batch_stats = (mu.reshape(c).astype(x.dtype), invstd.reshape(c).astype(x.dtype))
    else:
        stats = (mu.astype(x.dtype), invstd.astype(x.dtype))
        batch_stats = (np.zeros(0, x.dtype), np.zeros(0, x.dtype))
    return NATIVE_BATCH_NORM.record(  # type: ignore[no-any-return]
        (input, weight, bias), (out, *batch_stats),
        (running_mean, running_var, bool(training), eps, axes, param_shape, (c,), stats))[0]


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
    xc = x - mu
    var = np.square(xc).mean(axis=axes, keepdims=True)
    std = np.sqrt(var + eps)
    out = xc / std
    if weight is not None:
        out = out * weight._data
    if bias is not None:
        out = out + bias._data
    out = np.ascontiguousarray(out, dtype=x.dtype)
    # torch's result1 / result2, the mean and 1/std of each row (Note [Layer norm's backward
    # in NumPy] reads them)
    moments = (mu.astype(x.dtype), (1.0 / std).astype(x.dtype))
    return NATIVE_LAYER_NORM.record(  # type: ignore[no-any-return]
        (input, weight, bias), (out, *moments), (shape, eps, axes, param_shape))[0]


# -- group and instance norm: composites over layer_norm and batch_norm --------------------
#
# Note [Group and instance norm as composites]
# Both normalise each sample over a block of its elements: group norm over the
# channels of one group and all spatial positions, instance norm over the spatial
# positions of one channel.  Group norm views the input as ``(N, groups, block_size)``,
# a layer norm over the last dim, so it reuses NativeLayerNormBackward0 (values,
# gradients, double backward and tangents included) and adds the per-channel
# affine with ordinary ops (in float32 for a half-precision input, rounded once to
# the input's dtype, as torch's kernel).  Its
# grad_fn is therefore not torch's NativeGroupNormBackward0 but an
# AddBackward0/MulBackward0/ViewBackward0.  Instance norm is what torch computes: a
# training-mode batch norm of the ``(1, N*C, ...)`` view with the parameters repeated
# ``N`` times, viewed back (ViewBackward0), so it has batch norm's dtype rules and its
# rounding of half-precision statistics.

def _channel_affine(out: Tensor, weight: Tensor | None, bias: Tensor | None) -> Tensor:
    from .shape import reshape

    shape = (1, -1) + (1,) * (out._data.ndim - 2)
    if weight is not None:
        out = out * reshape(weight, shape)
    if bias is not None:
        out = out + reshape(bias, shape)
    return out


def group_norm(input: Tensor, num_groups: int, weight: Tensor | None = None,
               bias: Tensor | None = None, eps: float = 1e-05) -> Tensor:
    """Normalize each sample over groups of ``C // num_groups`` channels (see the Note above)."""
    from .shape import reshape

    x = input._data
    if x.ndim < 2:
        raise RuntimeError("Expected at least 2 dimensions for input tensor but received "
                           f"{x.ndim}")
    n, c = x.shape[0], x.shape[1]
    if c % num_groups != 0:
        raise RuntimeError("Expected number of channels in input to be divisible by num_groups, "
                           f"but got input of shape [{', '.join(map(str, x.shape))}] and "
                           f"num_groups={num_groups}")
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and (t._data.ndim != 1 or t._data.size != c):
            # torch's bias message prints the weight's shape ([0] without a weight)
            shown = t._data.shape if name == "weight" else \
                (weight._data.shape if weight is not None else (0,))
            raise RuntimeError(f"Expected {name} to be a vector of size equal to the number of "
                               f"channels in input, but got {name} of shape "
                               f"[{', '.join(map(str, shown))}] and input of shape "
                               f"[{', '.join(map(str, x.shape))}]")
    params = [t._data.dtype for t in (weight, bias) if t is not None]
    mixed = bool(params) and params[0] != x.dtype
    if mixed:  # torch's mixed-type rule (as batch norm's): float32 parameters, half input
        if any(d != np.float32 for d in params):
            raise RuntimeError("mixed dtype (CPU): expect parameter to have scalar type of Float")
        if x.dtype.itemsize != 2 or x.dtype.kind not in "fV":
            raise RuntimeError("mixed dtype (CPU): all inputs must share same datatype.")
    checks.not_implemented_for("GroupNormKernelImpl", x.dtype, "biu")
    block = (c // num_groups) * math.prod(x.shape[2:])
    flat = reshape(input, (n, num_groups, block))
    if x.dtype.itemsize == 2:  # half precision: float32 work, rounded once, as torch's kernel
        out = reshape(layer_norm(flat.float(), (block,), None, None, eps), x.shape)
        return _channel_affine(out, weight, bias).to(input.dtype)
    out = reshape(layer_norm(flat, (block,), None, None, eps), x.shape)
    return _channel_affine(out, weight, bias)


def _repeated(param: Tensor | None, n: int) -> Tensor | None:
    return None if param is None else param.repeat(n)


def instance_norm(input: Tensor, running_mean: Tensor | None = None,
                  running_var: Tensor | None = None, weight: Tensor | None = None,
                  bias: Tensor | None = None, use_input_stats: bool = True,
                  momentum: float = 0.1, eps: float = 1e-05) -> Tensor:
    """Normalize each channel of each sample over its spatial positions.

    With ``use_input_stats`` the running statistics (when given) are updated as
    torch does: the batch mean of the per-instance means and unbiased variances.
    Without it the running statistics normalize, as batch norm's eval mode.
    """
    from .shape import reshape

    x = input._data
    n, c = x.shape[0], x.shape[1]
    if use_input_stats:
        spatial = math.prod(x.shape[2:])
        if spatial == 1:
            raise ValueError("Expected more than 1 spatial element when training, got input "
                             f"size {_size(x.shape)}")
        # torch's: a batch norm in training of the (1, N*C, ...) view, the affine parameters
        # repeated per sample (its dtype checks, half-precision rounding and mixed types)
        flat = reshape(input, (1, n * c) + x.shape[2:])
        out = reshape(batch_norm(flat, None, None, _repeated(weight, n), _repeated(bias, n),
                                 True, momentum, eps), x.shape)
        if running_mean is not None:
            xs = x.reshape(n, c, spatial).astype(np.float64)
            mu = xs.mean(axis=2).mean(axis=0)
            with np.errstate(divide="ignore", invalid="ignore"):
                var = xs.var(axis=2, ddof=1).mean(axis=0)
            rm, rv = running_mean._data, running_var._data
            np.copyto(rm, (1 - momentum) * rm + momentum * mu, casting="unsafe")
            np.copyto(rv, (1 - momentum) * rv + momentum * var, casting="unsafe")
            bump_version(running_mean)
            bump_version(running_var)
        return out
    return batch_norm(input, running_mean, running_var, weight, bias, False, momentum, eps)
