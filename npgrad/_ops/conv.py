"""Windowed ops of nn layers: convolution (plain and transposed, 1-d and 2-d) and 2-d pooling.

Each is one op node (Note [Transposed convolution] for the transposed form).

Note [Convolution as im2col]
``sliding_window_view`` gives, without copying, every kernel-sized window of
the padded input; stepping it by the stride and the dilation leaves the
windows the kernel visits.  Gathered into columns ``(groups, N*P, C/g*K)``
(P output positions, K kernel elements) one batched matmul with the weight
``(groups, O/g, C/g*K)`` gives the output.  The backward is the same columns
again: ``grad_weight = grad^T @ columns`` and ``grad_input`` is the transpose,
``grad @ weight`` scattered back over the windows (one strided add per kernel
element).

Note [Higher-order gradients of windowed ops]
These ops compute their gradients in NumPy, so each backward is itself a
recorded op whenever it runs with ``create_graph=True``:
``convolution_backward`` (grad_fn ``ConvolutionBackwardBackward0``) is
bilinear, and its own backward is made of ``convolution`` and
``convolution_backward`` again; the pooling ops are linear in their input (max
pooling once its indices are fixed), so each backward is the adjoint linear
map and the adjoint of that is the forward map.  Gradients of any order work.
"""
from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, Callable

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from .signature import signature
from .. import _dtype
from .._forward import PendingJvp, FW, flush, has_tangent, tangent_of
from .._mode import _tls, INFERENCE, RECORDING
if TYPE_CHECKING:
    from .._tensor import Tensor
else:  # Note [Tensor base and Tensor] in npgrad._tensor_base
    from .._tensor_base import TensorBase as Tensor
from .._tensor_base import wrap, wrap_result
from ..autograd.graph import edge_of
from ._core import Node, check_not_freed, record

_new = object.__new__


def _size_str(shape: Any) -> str:
    return "[" + ", ".join(str(s) for s in shape) + "]"


# -- convolution -------------------------------------------------------------------------

class ConvParams:
    """The geometry of one convolution: per spatial dim stride, padding (before, after), dilation."""

    __slots__ = ("stride", "pad_lo", "pad_hi", "dilation", "groups")

    def __init__(self, stride: tuple, pad_lo: tuple, pad_hi: tuple, dilation: tuple,
                 groups: int) -> None:
        self.stride, self.pad_lo, self.pad_hi = stride, pad_lo, pad_hi
        self.dilation, self.groups = dilation, groups

    def out_size(self, in_size: tuple, kernel: tuple) -> tuple:
        return tuple((i + lo + hi - d * (k - 1) - 1) // s + 1
                     for i, lo, hi, d, k, s in zip(in_size, self.pad_lo, self.pad_hi,
                                                   self.dilation, kernel, self.stride))


def _pad(x: np.ndarray, lo: tuple, hi: tuple, value: float = 0.0) -> np.ndarray:
    if not any(lo) and not any(hi):
        return x
    widths = [(0, 0)] * (x.ndim - len(lo)) + list(zip(lo, hi))
    return np.pad(x, widths, constant_values=value)


def _windows(xp: np.ndarray, kernel: tuple, stride: tuple, dilation: tuple,
             out: tuple) -> np.ndarray:
    """View ``(..., *out, *kernel)`` of the windows of ``xp`` (spatial dims last)."""
    n = len(kernel)
    span = tuple(d * (k - 1) + 1 for d, k in zip(dilation, kernel))
    axes = tuple(range(xp.ndim - n, xp.ndim))
    win = sliding_window_view(xp, span, axis=axes)
    lead = (slice(None),) * (xp.ndim - n)
    steps = tuple(slice(0, s * (o - 1) + 1, s) for s, o in zip(stride, out))
    dil = tuple(slice(None, None, d) for d in dilation)
    return win[lead + steps + dil]


def _columns(x: np.ndarray, kernel: tuple, p: ConvParams, out: tuple) -> np.ndarray:
    """im2col: ``(groups, N*P, C/g*K)`` (Note [Convolution as im2col])."""
    n_batch, c = x.shape[:2]
    g = p.groups
    win = _windows(_pad(x, p.pad_lo, p.pad_hi), kernel, p.stride, p.dilation, out)
    nd = len(kernel)
    # (N, C, *out, *K) -> (g, N, *out, C/g, *K)
    win = win.reshape((n_batch, g, c // g) + win.shape[2:])
    order = (1, 0) + tuple(range(3, 3 + nd)) + (2,) + tuple(range(3 + nd, 3 + 2 * nd))
    cols = win.transpose(order)
    return cols.reshape(g, n_batch * math.prod(out), (c // g) * math.prod(kernel))


def _conv_forward(x: np.ndarray, w: np.ndarray, b: np.ndarray | None, p: ConvParams) -> np.ndarray:
    kernel = w.shape[2:]
    out = p.out_size(x.shape[2:], kernel)
    g = p.groups
    cols = _columns(x, kernel, p, out)
    wm = w.reshape(g, w.shape[0] // g, -1)
    res = np.matmul(cols, wm.transpose(0, 2, 1))  # (g, N*P, O/g)
    res = res.reshape((g, x.shape[0]) + out + (w.shape[0] // g,))
    nd = len(out)
    res = res.transpose((1, 0, 2 + nd) + tuple(range(2, 2 + nd)))
    res = res.reshape((x.shape[0], w.shape[0]) + out)
    if b is not None:
        res = res + b.reshape((-1,) + (1,) * nd)
    return np.ascontiguousarray(res, dtype=x.dtype)


def _grad_columns(g_out: np.ndarray, groups: int) -> np.ndarray:
    """grad_output as ``(groups, N*P, O/g)``."""
    n_batch, o = g_out.shape[:2]
    nd = g_out.ndim - 2
    gm = g_out.reshape((n_batch, groups, o // groups) + g_out.shape[2:])
    gm = gm.transpose((1, 0) + tuple(range(3, 3 + nd)) + (2,))
    return gm.reshape(groups, -1, o // groups)


def _conv_grad_input(g_out: np.ndarray, w: np.ndarray, in_shape: tuple,
                     p: ConvParams) -> np.ndarray:
    kernel = w.shape[2:]
    nd = len(kernel)
    g = p.groups
    n_batch, c = in_shape[:2]
    out = g_out.shape[2:]
    gm = _grad_columns(g_out, g)
    wm = w.reshape(g, w.shape[0] // g, -1)
    cols = np.matmul(gm, wm)  # (g, N*P, C/g*K)
    cols = cols.reshape((g, n_batch) + tuple(out) + (c // g,) + tuple(kernel))
    # -> (N, g, C/g, *out, *K) -> (N, C, *out, *K)
    order = (1, 0, 2 + nd) + tuple(range(2, 2 + nd)) + tuple(range(3 + nd, 3 + 2 * nd))
    cols = cols.transpose(order).reshape((n_batch, c) + tuple(out) + tuple(kernel))
    padded = tuple(i + lo + hi for i, lo, hi in zip(in_shape[2:], p.pad_lo, p.pad_hi))
    gx = np.zeros((n_batch, c) + padded, dtype=g_out.dtype)
    for k in np.ndindex(*kernel):
        where = tuple(slice(ki * d, ki * d + s * (o - 1) + 1, s)
                      for ki, d, s, o in zip(k, p.dilation, p.stride, out))
        gx[(slice(None), slice(None)) + where] += cols[(Ellipsis,) + k]
    crop = tuple(slice(lo, lo + i) for lo, i in zip(p.pad_lo, in_shape[2:]))
    return np.ascontiguousarray(gx[(slice(None), slice(None)) + crop])


def _conv_grad_weight(g_out: np.ndarray, x: np.ndarray, w_shape: tuple,
                      p: ConvParams) -> np.ndarray:
    kernel = w_shape[2:]
    cols = _columns(x, kernel, p, g_out.shape[2:])
    gm = _grad_columns(g_out, p.groups)
    gw = np.matmul(gm.transpose(0, 2, 1), cols)  # (g, O/g, C/g*K)
    return gw.reshape(w_shape).astype(g_out.dtype, copy=False)


class ConvolutionBackward0(Node):
    """``convolution(input, weight, bias)``; its backward is ``convolution_backward``.

    With ``transposed`` set (Note [Transposed convolution]) the backward is made of
    ``convolution`` and ``convolution_backward`` with the roles of the tensors swapped.
    """

    __slots__ = ("input", "weight", "params", "has_bias", "transposed")
    _saved_fields = ("input", "weight")

    def backward(self, grad: Tensor) -> tuple:
        from ._core import saved

        x, w = saved(self, "input"), saved(self, "weight")
        mask = (self.next_functions[0][0] is not None, self.next_functions[1][0] is not None,
                self.has_bias and self.next_functions[2][0] is not None)
        gx, gw, gb = convolution_backward(grad, x, w, self.params, mask, self.transposed)
        return (gx, gw, gb) if self.has_bias else (gx, gw)


class ConvolutionBackwardBackward0(Node):
    """The recorded ``convolution_backward(grad_output, input, weight)`` (three outputs)."""

    __slots__ = ("grad_output", "input", "weight", "params", "mask", "transposed")
    _saved_fields = ("grad_output", "input", "weight")

    def backward(self, ggx: Any, ggw: Any, ggb: Any) -> tuple:
        from ._core import saved
        from .pointwise import add

        g, x, w = saved(self, "grad_output"), saved(self, "input"), saved(self, "weight")
        p = self.params
        need_g, need_x, need_w = (self.next_functions[i][0] is not None for i in range(3))
        if self.transposed:
            return self._backward_transposed(g, x, w, ggx, ggw, ggb, (need_g, need_x, need_w))
        gg = gx = gw = None
        if need_g:
            parts = []
            if ggx is not None:
                parts.append(convolution(ggx, w, ggb, p))
            elif ggb is not None:
                from .shape import expand, reshape

                nd = g._data.ndim - 2
                parts.append(expand(reshape(ggb, (1, -1) + (1,) * nd), g._data.shape))
            if ggw is not None:
                parts.append(convolution(x, ggw, None, p))
            for part in parts:
                gg = part if gg is None else add(gg, part)
        if need_x and ggw is not None:
            gx = convolution_backward(g, x, ggw, p, (True, False, False))[0]
        if need_w and ggx is not None:
            gw = convolution_backward(g, ggx, w, p, (False, True, False))[1]
        return gg, gx, gw

    def _backward_transposed(self, g: Tensor, x: Tensor, w: Tensor, ggx: Any, ggw: Any,
                             ggb: Any, need: tuple) -> tuple:
        """Its outputs were ``conv(g, w)``, ``grad_weight(x, g)`` and ``sum(g)``: the
        adjoints are transposed convolutions, a convolution and a grad_weight."""
        from .pointwise import add
        from .shape import expand, reshape

        p = self.params
        spatial = g._data.shape[2:]
        gg = gx = gw = None
        if need[0]:
            parts = []
            if ggx is not None:
                parts.append(convolution_transposed(ggx, w, ggb, p, spatial))
            elif ggb is not None:
                parts.append(expand(reshape(ggb, (1, -1) + (1,) * len(spatial)),
                                    g._data.shape))
            if ggw is not None:
                parts.append(convolution_transposed(x, ggw, None, p, spatial))
            for part in parts:
                gg = part if gg is None else add(gg, part)
        if need[1] and ggw is not None:
            gx = convolution(g, ggw, None, p)
        if need[2] and ggx is not None:
            gw = convolution_backward(ggx, g, w, p, (False, True, False))[1]
        return gg, gx, gw


def _record_convolution(input: Tensor, weight: Tensor, bias: Tensor | None, params: ConvParams,
                        out: np.ndarray, transposed: bool) -> Tensor:
    """The output of a (transposed) convolution, with its ``ConvolutionBackward0`` node."""
    inputs = (input, weight) if bias is None else (input, weight, bias)
    res, node = record(ConvolutionBackward0, inputs, out)
    if node is not None:
        from ._core import SavedTensor

        node.input = SavedTensor(input)
        node.weight = SavedTensor(weight)
        node.params = params
        node.has_bias = bias is not None
        node.transposed = transposed
    return res


def convolution(input: Tensor, weight: Tensor, bias: Tensor | None, params: ConvParams) -> Tensor:
    """N-d convolution of a batched input (grad_fn ``ConvolutionBackward0``)."""
    x, w = input._data, weight._data
    b = None if bias is None else bias._data
    out = _conv_forward(x, w, b, params)
    return _record_convolution(input, weight, bias, params, out, transposed=False)


# Note [Transposed convolution]
# A transposed convolution is the adjoint, in its input, of the convolution with
# the same weight and geometry: its forward is that convolution's grad_input
# (``_conv_grad_input``, weight ``(C_in, C_out/g, *K)`` read as a convolution
# weight ``(O, C/g, *K)``), onto an output ``output_padding`` larger at the high
# end.  So its gradients are the convolution itself (input) and the
# convolution's grad_weight with grad_output and input swapped (weight).  torch
# names its node ``ConvolutionBackward0`` as well, and the gradients' node
# ``ConvolutionBackwardBackward0``: npgrad's is ``convolution_backward`` with
# ``transposed`` set, whose own backward is built of transposed convolutions,
# convolutions and grad_weights, so higher orders work.

def convolution_transposed(input: Tensor, weight: Tensor, bias: Tensor | None,
                           params: ConvParams, out_spatial: tuple) -> Tensor:
    """Batched N-d transposed convolution (grad_fn ``ConvolutionBackward0``)."""
    x, w = input._data, weight._data
    g = params.groups
    in_shape = (x.shape[0], w.shape[1] * g) + tuple(out_spatial)
    out = _conv_grad_input(x, w, in_shape, params)
    if bias is not None:
        out = out + bias._data.reshape((-1,) + (1,) * len(out_spatial))
    out = np.ascontiguousarray(out, dtype=x.dtype)
    return _record_convolution(input, weight, bias, params, out, transposed=True)


# Note [The order of torch's convolution checks]
# torch checks a convolution's arguments in layers, and when several are wrong the first layer
# decides the text (Note [Checks before NumPy] in checks.py): the input's rank (the Python
# function), then the weight's rank and the length of each of stride / padding / dilation /
# output_padding against it, then (plain convolution only) the bias dtype, then the shapes
# (``check_shape_forward``), and last the kernel's own dtype checks.  Which kernel runs decides
# that last text: for a float32 input torch's CPU heuristic picks oneDNN (mkldnn), whose check
# names legacy tensor types, and otherwise the native slow kernel, which says "expected scalar
# type".  ``_uses_mkldnn`` replays that heuristic (as on a multi-threaded build).

def _conv_param_lengths(w: np.ndarray, params: tuple, nd: int) -> None:
    """The weight's rank and each geometry list's length, as torch checks them."""
    if w.ndim < 3:
        raise RuntimeError("weight should have at least three dimensions")
    want = w.ndim - 2
    for name, v in params:
        seen = list(v) if isinstance(v, (list, tuple)) else [v] * nd
        if len(seen) != 1 and len(seen) != want:
            raise RuntimeError(f"expected {name} to be a single integer value or a list of {want} "
                               f"values to match the convolution dimensions, but got "
                               f"{name}=[{', '.join(map(str, seen))}]")


def _uses_mkldnn(x: np.ndarray, w: np.ndarray, groups: int) -> bool:
    """torch's CPU choice of the oneDNN kernel (1-d convolutions run as 2-d ones)."""
    if x.dtype != np.float32 or w.ndim != x.ndim:
        return False
    n = x.shape[0]
    k = w.shape[2:] if w.ndim > 3 else (1,) + w.shape[2:]
    spatial = x.shape[2:] if x.ndim > 3 else (1,) + x.shape[2:]
    numel = n * x.shape[1] * int(np.prod(spatial))
    return groups > 1 or (k[-1] > 3 and k[-2] > 3) or n > 1 or numel > 20480


def _legacy_name(d: np.dtype) -> str:
    return "CPUBoolType" if d.kind == "b" else f"torch.{_dtype.from_np(d).legacy_type}"


def _conv_kernel_dtypes(x: np.ndarray, w: np.ndarray, bias: Tensor | None, groups: int,
                        transposed: bool, dilated: bool) -> None:
    """The dtype checks of the kernel torch runs (Note [The order of torch's convolution
    checks])."""
    if _uses_mkldnn(x, w, groups):
        if w.dtype != x.dtype:
            raise RuntimeError(f"Input type ({_legacy_name(x.dtype)}) and weight type "
                               f"({_legacy_name(w.dtype)}) should be the same or input should be "
                               "a MKLDNN tensor and weight is a dense tensor")
        if transposed and bias is not None and bias._data.dtype != x.dtype:
            raise RuntimeError(f"Input type ({_legacy_name(x.dtype)}) and bias type "
                               f"({_legacy_name(bias._data.dtype)}) should be the same or input "
                               "should be a MKLDNN tensor and bias is a dense tensor")
    if transposed and x.dtype.kind == "b":  # its dispatch comes before its dtype check
        raise NotImplementedError("\"slow_conv_transpose2d_out_cpu\" not implemented for 'Bool'")
    if x.dtype != w.dtype:
        raise RuntimeError(f"expected scalar type {_dtype.from_np(x.dtype).scalar_name} but "
                           f"found {_dtype.from_np(w.dtype).scalar_name}")
    if x.dtype.kind == "b":
        kernel = "slow_conv_dilated<>" if dilated else "slow_conv2d_cpu"
        raise NotImplementedError(f"\"{kernel}\" not implemented for 'Bool'")


def _conv_weight_shape(x: np.ndarray, w: np.ndarray, groups: int) -> None:
    """The first shape checks of ``check_shape_forward``: the weight's rank and its dim 0."""
    if w.ndim != x.ndim:
        raise RuntimeError(f"Expected {w.ndim}-dimensional input for {w.ndim}-dimensional weight "
                           f"{_size_str(w.shape)}, but got {x.ndim}-dimensional input of size "
                           f"{_size_str(x.shape)} instead")
    if w.shape[0] < groups:
        raise RuntimeError(f"Given groups={groups}, expected weight to be at least {groups} at "
                           f"dimension 0, but got weight of size {_size_str(w.shape)} instead")
    if w.shape[0] % groups:
        raise RuntimeError(f"Given groups={groups}, expected weight to be divisible by {groups} "
                           f"at dimension 0, but got weight of size [{_size_str(w.shape)}] "
                           "instead")


def conv_transpose_nd(input: Tensor, weight: Tensor, bias: Tensor | None, stride: Any,
                      padding: Any, output_padding: Any, groups: int, dilation: Any,
                      nd: int) -> Tensor:
    """torch's ``conv_transpose1d`` / ``conv_transpose2d``: checks, unbatched inputs."""
    from .shape import squeeze, unsqueeze

    def tup(v: Any) -> tuple:
        if isinstance(v, (list, tuple)):
            return tuple(int(i) for i in v) * (nd if len(v) == 1 else 1)
        return (int(v),) * nd

    x, w = input._data, weight._data
    if x.ndim not in (nd + 1, nd + 2):
        raise RuntimeError(f"Expected {nd + 1}D (unbatched) or {nd + 2}D (batched) input to "
                           f"conv_transpose{nd}d, but got input of size: {_size_str(x.shape)}")
    if x.ndim == nd + 1:
        return squeeze(conv_transpose_nd(unsqueeze(input, 0), weight, bias, stride, padding,
                                         output_padding, groups, dilation, nd), 0)
    # Note [The order of torch's convolution checks]
    _conv_param_lengths(w, (("stride", stride), ("padding", padding),
                            ("dilation", dilation), ("output_padding", output_padding)), nd)
    _conv_weight_shape(x, w, groups)
    s, p, op, d = tup(stride), tup(padding), tup(output_padding), tup(dilation)
    if x.shape[1] != w.shape[0]:
        raise RuntimeError(f"Given transposed=1, weight of size {_size_str(w.shape)}, expected "
                           f"input{_size_str(x.shape)} to have {w.shape[0]} channels, but got "
                           f"{x.shape[1]} channels instead")
    c_out = w.shape[1] * groups
    if bias is not None and bias._data.shape != (c_out,):
        raise RuntimeError(f"Given transposed=1, weight of size {_size_str(w.shape)}, expected "
                           f"bias to be 1-dimensional with {c_out} elements, but got bias of "
                           f"size {_size_str(bias._data.shape)} instead")
    if any(o >= si and o >= di for o, si, di in zip(op, s, d)):
        names = ("height", "width") if nd == 2 else ("width",) if nd == 1 else ()
        parts = [f"output_padding_{n}: {v}" for n, v in zip(names, op)]
        parts += [f"stride_{n}: {v}" for n, v in zip(names, s)]
        parts += [f"dilation_{n}: {v}" for n, v in zip(names, d)]
        raise RuntimeError("output padding must be smaller than either stride or dilation, but "
                           "got " + " ".join(parts))
    _conv_kernel_dtypes(x, w, bias, groups, True, any(di != 1 for di in d))
    if bias is not None and bias._data.dtype != x.dtype:  # the native kernel adds it as x's
        bias = bias.to(input.dtype)
    kernel = w.shape[2:]
    out = tuple((i - 1) * si - 2 * pi + di * (k - 1) + oi + 1
                for i, si, pi, di, k, oi in zip(x.shape[2:], s, p, d, kernel, op))
    if any(o < 1 for o in out):
        raise RuntimeError(f"Given input size per channel: ({' x '.join(map(str, x.shape[2:]))})"
                           f". Calculated output size per channel: "
                           f"({' x '.join(map(str, out))}). Output size is too small")
    return convolution_transposed(input, weight, bias, ConvParams(s, p, p, d, groups), out)


def convolution_backward(grad: Tensor, input: Tensor, weight: Tensor, params: ConvParams,
                         mask: tuple, transposed: bool = False) -> tuple:
    """(grad_input, grad_weight, grad_bias) of a convolution, each None unless asked for.

    ``transposed``: of a transposed convolution (Note [Transposed convolution]): its
    grad_input is the plain convolution of ``grad``, its grad_weight the plain one's
    with ``grad`` and ``input`` swapped.
    """
    g, x, w = grad._data, input._data, weight._data
    outs: list = [None, None, None]
    if mask[0]:
        outs[0] = (_conv_forward(g, w, None, params) if transposed else
                   _conv_grad_input(g, w, x.shape, params))
    if mask[1]:
        outs[1] = (_conv_grad_weight(x, g, w.shape, params) if transposed else
                   _conv_grad_weight(g, x, w.shape, params))
    if mask[2]:
        outs[2] = g.sum(axis=(0,) + tuple(range(2, g.ndim)))
    mode = _tls.mode
    tensors = (grad, input, weight)
    c_out = w.shape[1] * params.groups if transposed else w.shape[0]
    meta = ((x.shape, g.dtype), (w.shape, g.dtype), ((c_out,), g.dtype))
    if FW.active and not mode & INFERENCE and any(has_tangent(t) for t in tensors):
        return _convolution_backward_dual(tensors, outs, meta, params, mask, mode, transposed)
    if mode == RECORDING and any(t._requires_grad for t in tensors):
        node = _new(ConvolutionBackwardBackward0)
        node._init_node(tuple(edge_of(t) for t in tensors), meta)
        from ._core import SavedTensor

        node.grad_output, node.input, node.weight = (SavedTensor(t) for t in tensors)
        node.params, node.mask, node.transposed = params, mask, transposed
        return tuple(None if o is None else wrap_result(np.asarray(o), node, i)
                     for i, o in enumerate(outs))
    return tuple(None if o is None else wrap(np.asarray(o), mode) for o in outs)


def _convolution_backward_dual(tensors: tuple, outs: list, meta: tuple, params: ConvParams,
                               mask: tuple, mode: int, transposed: bool) -> tuple:
    """``convolution_backward`` whose inputs carry tangents (forward-over-reverse).

    As ``record_with_tangents`` for a three-output op: the node is built (recorded or
    forward-only) and its outputs' tangents come later from its transposed backward.
    An output not asked for gets a throwaway tensor, so each output has its place.
    """
    from ._core import SavedTensor, tangent_edges

    tangents = [tangent_of(t) if has_tangent(t) else None for t in tensors]
    flush()
    recorded = mode == RECORDING and any(t._requires_grad for t in tensors)
    node = _new(ConvolutionBackwardBackward0)
    node._init_node(tangent_edges(tensors, tangents, recorded), meta)
    node.grad_output, node.input, node.weight = (SavedTensor(t) for t in tensors)
    node.params, node.mask, node.transposed = params, mask, transposed
    results = []
    for i, (o, (shape, dtype)) in enumerate(zip(outs, meta)):
        arr = np.zeros(shape, dtype) if o is None else np.asarray(o)
        results.append(wrap_result(arr, node, i) if recorded else wrap(arr, mode))
    PendingJvp(node, tangents, results, mode, recorded)
    return tuple(None if o is None else r for o, r in zip(outs, results))


def conv_nd(input: Tensor, weight: Tensor, bias: Tensor | None, stride: Any, padding: Any,
            dilation: Any, groups: int, nd: int) -> Tensor:
    """torch's ``conv1d`` / ``conv2d``: argument checks, padding modes, unbatched inputs."""
    from .shape import squeeze, unsqueeze

    def tup(v: Any, name: str) -> tuple:
        if isinstance(v, (list, tuple)):
            if len(v) == 1:
                return tuple(v) * nd
            return tuple(int(i) for i in v)
        return (int(v),) * nd

    x, w = input._data, weight._data
    if x.ndim not in (nd + 1, nd + 2):
        raise RuntimeError(f"Expected {nd + 1}D (unbatched) or {nd + 2}D (batched) input to "
                           f"conv{nd}d, but got input of size: {_size_str(x.shape)}")
    if x.ndim == nd + 1:
        return squeeze(conv_nd(unsqueeze(input, 0), weight, bias, stride, padding, dilation,
                               groups, nd), 0)
    # Note [The order of torch's convolution checks]
    if bias is not None and bias._data.dtype != x.dtype:
        raise RuntimeError(f"Input type ({_dtype.from_np(x.dtype).cpp_name}) and bias type "
                           f"({_dtype.from_np(bias._data.dtype).cpp_name}) should be the same")
    _conv_param_lengths(w, (("stride", stride),) + (() if isinstance(padding, str) else (
        ("padding", padding),)) + (("dilation", dilation),), nd)
    _conv_weight_shape(x, w, groups)
    stride_t, dilation_t = tup(stride, "stride"), tup(dilation, "dilation")
    kernel = w.shape[2:]
    if isinstance(padding, str):
        if padding == "valid":
            lo = hi = (0,) * nd
        elif padding == "same":
            if any(s != 1 for s in stride_t):
                raise RuntimeError("padding='same' is not supported for strided convolutions")
            total = tuple(d * (k - 1) for d, k in zip(dilation_t, kernel))
            lo = tuple(t // 2 for t in total)
            hi = tuple(t - t // 2 for t in total)
        else:
            raise RuntimeError(f"Invalid padding string: '{padding}'")
    else:
        lo = hi = tup(padding, "padding")
    if x.shape[1] != w.shape[1] * groups:
        raise RuntimeError(f"Given groups={groups}, weight of size {_size_str(w.shape)}, "
                           f"expected input{_size_str(x.shape)} to have {w.shape[1] * groups} "
                           f"channels, but got {x.shape[1]} channels instead")
    if bias is not None and bias._data.shape != (w.shape[0],):
        raise RuntimeError(f"Given weight of size {_size_str(w.shape)}, expected bias to be "
                           f"1-dimensional with {w.shape[0]} elements, but got bias of size "
                           f"{_size_str(bias._data.shape)} instead")
    padded = tuple(i + a + b for i, a, b in zip(x.shape[2:], lo, hi))
    eff = tuple(d * (k - 1) + 1 for d, k in zip(dilation_t, kernel))
    if any(p < e for p, e in zip(padded, eff)):
        raise RuntimeError(
            f"Calculated padded input size per channel: ({' x '.join(map(str, padded))}). "
            f"Kernel size: ({' x '.join(map(str, eff))}). Kernel size can't be greater than "
            "actual input size")
    _conv_kernel_dtypes(x, w, bias, groups, False, any(d != 1 for d in dilation_t))
    return convolution(input, weight, bias, ConvParams(stride_t, lo, hi, dilation_t, groups))


# -- linear window ops: pooling (Note [Higher-order gradients of windowed ops]) -----------------

class _LinearWindowNode(Node):
    """A node of a map linear in its one input; backward applies the adjoint map, recorded."""

    __slots__ = ("fwd", "adj", "adj_cls", "fwd_cls")
    holds_saved = False  # True where torch saves a tensor (Note [Saved values kept outside SavedTensor])

    def backward(self, grad: Tensor) -> tuple:
        if self.holds_saved:
            check_not_freed(self)
        return (_linear_op(self.adj_cls, self.fwd_cls, grad, self.adj, self.fwd),)


def _linear_op(cls: type, adj_cls: type, x: Tensor, fwd: Callable, adj: Callable) -> Tensor:
    """Apply NumPy map ``fwd`` to ``x`` as op ``cls``; its backward applies ``adj`` as ``adj_cls``."""
    res, node = record(cls, (x,), np.ascontiguousarray(fwd(x._data)))
    if node is not None:
        node.fwd, node.adj, node.adj_cls, node.fwd_cls = fwd, adj, adj_cls, cls
    return res


class MaxPool2DWithIndicesBackward0(_LinearWindowNode):
    __slots__ = ()
    holds_saved = True


class MaxPool2DWithIndicesBackwardBackward0(_LinearWindowNode):
    __slots__ = ()
    holds_saved = True


class AvgPool2DBackward0(_LinearWindowNode):
    __slots__ = ()
    holds_saved = True


class AvgPool2DBackwardBackward0(_LinearWindowNode):
    __slots__ = ()


class AdaptiveAvgPool2DBackward0(_LinearWindowNode):
    __slots__ = ()
    holds_saved = True


class AdaptiveAvgPool2DBackwardBackward0(_LinearWindowNode):
    __slots__ = ()


def _pool_out(size: int, k: int, s: int, p: int, d: int, ceil_mode: bool) -> int:
    num = size + 2 * p - d * (k - 1) - 1
    out = (-(-num // s) if ceil_mode else num // s) + 1
    if ceil_mode and (out - 1) * s >= size + p:
        out -= 1
    return out


def _pool_args(kernel_size: Any, stride: Any, padding: Any, dilation: Any = 1) -> tuple:
    def pair(v: Any) -> tuple:
        if isinstance(v, (list, tuple)):
            return (int(v[0]), int(v[0])) if len(v) == 1 else (int(v[0]), int(v[1]))
        return (int(v), int(v))

    k = pair(kernel_size)
    s = k if stride is None or (isinstance(stride, (list, tuple)) and not stride) else pair(stride)
    return k, s, pair(padding), pair(dilation)


def _pool_checks(name: str, x: np.ndarray, k: tuple, s: tuple, p: tuple, d: tuple,
                 out: tuple) -> None:
    if x.ndim not in (3, 4):
        raise RuntimeError("non-empty 3D or 4D (batch mode) tensor expected for input")
    if any(v <= 0 for v in k):
        raise RuntimeError(f"kernel size should be greater than zero, but got kH: {k[0]} "
                           f"kW: {k[1]}")
    if any(v <= 0 for v in s):
        raise RuntimeError(f"stride should be greater than zero, but got dH: {s[0]} dW: {s[1]}")
    if any(pi > ki // 2 for pi, ki in zip(p, k)):
        raise RuntimeError(f"pad should be at most half of effective kernel size, but got "
                           f"pad={p[0] if p[0] > k[0] // 2 else p[1]}, kernel_size="
                           f"{k[0] if p[0] > k[0] // 2 else k[1]} and dilation="
                           f"{d[0] if p[0] > k[0] // 2 else d[1]}" if name == "max_pool2d" else
                           "pad should be at most half of effective kernel size, but got "
                           f"pad={p[0] if p[0] > k[0] // 2 else p[1]}, kernel_size="
                           f"{k[0] if p[0] > k[0] // 2 else k[1]} and dilation=1")
    if any(o < 1 for o in out):
        c, h, w = x.shape[-3:]
        raise RuntimeError(f"Given input size: ({c}x{h}x{w}). Calculated output size: "
                           f"({c}x{out[0]}x{out[1]}). Output size is too small")


def _max_pool2d_shape_checks(x: np.ndarray, k: tuple, s: tuple, p: tuple, d: tuple) -> None:
    """torch's first checks of max_pool2d, in its order: the rank, then per dim (H, W) the
    output-shape computation's zero stride and its pad bound (C division, so a negative kernel
    fails the bound), then the empty non-batch dims."""
    if x.ndim not in (3, 4):
        raise RuntimeError("non-empty 3D or 4D (batch mode) tensor expected for input")
    for ki, si, pi, di in zip(k, s, p, d):
        if si == 0:
            raise RuntimeError("stride should not be zero")
        effective = (ki - 1) * di + 1
        if pi > int(effective / 2):
            raise RuntimeError("pad should be at most half of effective kernel size, but got "
                               f"pad={pi}, kernel_size={ki} and dilation={di}")
    if 0 in x.shape[-3:]:
        raise RuntimeError("Expected 3D or 4D (batch mode) tensor with optional 0 dim batch size "
                           f"for input, but got:[{', '.join(map(str, x.shape))}]")


def max_pool2d(input: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0,
               dilation: Any = 1, ceil_mode: bool = False, return_indices: bool = False) -> Any:
    """2-d max pooling (grad_fn ``MaxPool2DWithIndicesBackward0``); indices index H*W."""
    x = input._data
    k, s, p, d = _pool_args(kernel_size, stride, padding, dilation)
    _max_pool2d_shape_checks(x, k, s, p, d)
    h, w = x.shape[-2:]
    out = tuple(_pool_out(n, ki, si, pi, di, ceil_mode)
                for n, ki, si, pi, di in zip((h, w), k, s, p, d))
    _pool_checks("max_pool2d", x, k, s, p, d, out)
    if x.dtype.kind == "b":
        raise NotImplementedError("\"max_pool2d\" not implemented for 'Bool'")
    if x.size == 0:  # an empty batch: an empty result of the output's shape
        empty = np.zeros(x.shape[:-2] + out, dtype=x.dtype)
        res, _ = record(MaxPool2DWithIndicesBackward0, (input,), empty)
        if return_indices:
            return res, wrap(np.zeros(empty.shape, dtype=np.int64), _tls.mode)
        return res
    need = tuple((o - 1) * si + di * (ki - 1) + 1 for o, si, di, ki in zip(out, s, d, k))
    hi = tuple(max(0, nd_ - n - pi) for nd_, n, pi in zip(need, (h, w), p))
    fill = -np.inf if x.dtype.kind == "f" else np.iinfo(x.dtype).min
    xp = _pad(x, p, hi, fill)
    win = _windows(xp, k, s, d, out)  # (..., oh, ow, kh, kw)
    flat = win.reshape(win.shape[:-2] + (-1,))
    # NaN wins, as in torch: argmax of (isnan, value) ordering
    nan = np.isnan(flat) if x.dtype.kind == "f" else None
    arg = np.argmax(flat, axis=-1) if nan is None or not nan.any() else \
        np.where(nan.any(-1), np.argmax(nan, axis=-1), np.argmax(np.where(nan, -np.inf, flat),
                                                                 axis=-1))
    values = np.take_along_axis(flat, arg[..., None], axis=-1)[..., 0]
    ki, kj = np.divmod(arg, k[1])
    oi = np.arange(out[0]).reshape(-1, 1)
    oj = np.arange(out[1]).reshape(1, -1)
    row = oi * s[0] + ki * d[0] - p[0]
    col = oj * s[1] + kj * d[1] - p[1]
    indices = (row * w + col).astype(np.int64)
    lead = x.shape[:-2]
    plane = h * w

    def gather(a: np.ndarray) -> np.ndarray:  # input-shaped -> output-shaped
        flat_a = a.reshape(lead + (plane,))
        return np.take_along_axis(flat_a, indices.reshape(lead + (-1,)), axis=-1).reshape(
            lead + out)

    def scatter(g: np.ndarray) -> np.ndarray:  # output-shaped -> input-shaped
        res = np.zeros(lead + (plane,), dtype=g.dtype)
        rows = res.reshape(-1, plane)
        idx = indices.reshape(-1, out[0] * out[1])
        gflat = g.reshape(-1, out[0] * out[1])
        np.add.at(rows, (np.arange(rows.shape[0])[:, None], idx), gflat)
        return res.reshape(lead + (h, w))

    res, node = record(MaxPool2DWithIndicesBackward0, (input,),
                       np.ascontiguousarray(values, dtype=x.dtype))
    if node is not None:
        node.fwd, node.adj = gather, scatter
        node.fwd_cls, node.adj_cls = (MaxPool2DWithIndicesBackward0,
                                      MaxPool2DWithIndicesBackwardBackward0)
    if return_indices:
        return res, wrap(np.ascontiguousarray(indices), _tls.mode)
    return res


@signature("avg_pool2d(Tensor input, IntArrayRef[2] kernel_size, IntArrayRef[2] stride=None, "
           "IntArrayRef[2] padding=0, bool ceil_mode=False, bool count_include_pad=True, "
           "int64_t? divisor_override=None, *, Tensor out=None)")
def avg_pool2d(input: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0,
               ceil_mode: bool = False, count_include_pad: bool = True,
               divisor_override: int | None = None) -> Tensor:
    """2-d average pooling (grad_fn ``AvgPool2DBackward0``)."""
    x = input._data
    k, s, p, _ = _pool_args(kernel_size, stride, padding)
    h, w = x.shape[-2:]
    out = tuple(_pool_out(n, ki, si, pi, 1, ceil_mode)
                for n, ki, si, pi in zip((h, w), k, s, p))
    _pool_checks("avg_pool2d", x, k, s, p, (1, 1), out)
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError("divisor must be not zero")
    need = tuple((o - 1) * si + ki for o, si, ki in zip(out, s, k))
    hi = tuple(max(0, nd_ - n - pi) for nd_, n, pi in zip(need, (h, w), p))

    def divisor_along(n: int, o: int, ki: int, si: int, pi: int) -> tuple:
        start = np.arange(o) * si - pi
        end = np.minimum(start + ki, n + pi)
        with_pad = end - start
        return with_pad, np.minimum(end, n) - np.maximum(start, 0)

    if divisor_override is not None:
        div = np.full(out, float(divisor_override))
    else:
        (ph, rh), (pw, rw) = (divisor_along(n, o, ki, si, pi)
                              for n, o, ki, si, pi in zip((h, w), out, k, s, p))
        div = np.outer(ph, pw) if count_include_pad else np.outer(rh, rw)
    div = div.astype(x.dtype)
    lead = x.shape[:-2]

    def pool(a: np.ndarray) -> np.ndarray:
        win = _windows(_pad(a, p, hi), k, s, (1, 1), out)
        return (win.sum(axis=(-2, -1)) / div).astype(a.dtype, copy=False)

    def unpool(g: np.ndarray) -> np.ndarray:
        scaled = g / div
        res = np.zeros(lead + (h + p[0] + hi[0], w + p[1] + hi[1]), dtype=g.dtype)
        for i in range(k[0]):
            for j in range(k[1]):
                res[..., i:i + s[0] * (out[0] - 1) + 1:s[0],
                    j:j + s[1] * (out[1] - 1) + 1:s[1]] += scaled
        return res[..., p[0]:p[0] + h, p[1]:p[1] + w].astype(g.dtype, copy=False)

    return _linear_op(AvgPool2DBackward0, AvgPool2DBackwardBackward0, input, pool, unpool)


def adaptive_avg_pool2d(input: Tensor, output_size: Any) -> Tensor:
    """Average over adaptive bins (grad_fn ``AdaptiveAvgPool2DBackward0``; 1x1 is a mean)."""
    from .reduction import mean

    x = input._data
    if x.ndim not in (3, 4) or any(n == 0 for n in x.shape[-2:]):
        raise RuntimeError("adaptive_avg_pool2d(): Expected 3D or 4D tensor, but got "
                           f"{_size_str(x.shape)}")
    if isinstance(output_size, (list, tuple)):
        size = tuple(x.shape[-2 + i] if o is None else int(o) for i, o in enumerate(output_size))
    else:
        size = (int(output_size), int(output_size))
    if size == (1, 1):
        return mean(input, (-1, -2), keepdim=True)

    def bins(n: int, o: int) -> np.ndarray:
        m = np.zeros((o, n), dtype=x.dtype)
        for i in range(o):
            start, end = (i * n) // o, -(-((i + 1) * n) // o)
            m[i, start:end] = 1.0 / (end - start)
        return m

    mh, mw = bins(x.shape[-2], size[0]), bins(x.shape[-1], size[1])

    def pool(a: np.ndarray) -> np.ndarray:
        return np.matmul(np.matmul(mh, a), mw.T).astype(a.dtype, copy=False)

    def unpool(g: np.ndarray) -> np.ndarray:
        return np.matmul(np.matmul(mh.T, g), mw).astype(g.dtype, copy=False)

    return _linear_op(AdaptiveAvgPool2DBackward0, AdaptiveAvgPool2DBackwardBackward0, input,
                      pool, unpool)


class AdaptiveMaxPool2DBackward0(_LinearWindowNode):
    __slots__ = ()
    holds_saved = True


class AdaptiveMaxPool2DBackwardBackward0(_LinearWindowNode):
    __slots__ = ()
    holds_saved = True


def _gather_scatter(lead: tuple, size: tuple, out: tuple, indices: np.ndarray) -> tuple:
    """The maps of a max pooling with fixed ``indices`` into each ``size`` plane (flat)."""
    plane = math.prod(size)
    n_out = math.prod(out)

    def gather(a: np.ndarray) -> np.ndarray:  # input-shaped -> output-shaped
        flat_a = a.reshape(lead + (plane,))
        return np.take_along_axis(flat_a, indices.reshape(lead + (n_out,)), axis=-1).reshape(
            lead + out)

    def scatter(g: np.ndarray) -> np.ndarray:  # output-shaped -> input-shaped
        res = np.zeros((math.prod(lead), plane), dtype=g.dtype)
        idx = indices.reshape(-1, n_out)
        np.add.at(res, (np.arange(res.shape[0])[:, None], idx), g.reshape(-1, n_out))
        return res.reshape(lead + size)

    return gather, scatter


def adaptive_max_pool2d(input: Tensor, output_size: Any, return_indices: bool = False) -> Any:
    """Max over adaptive bins (grad_fn ``AdaptiveMaxPool2DBackward0``); indices index H*W."""
    x = input._data
    if isinstance(output_size, (list, tuple)):
        if len(output_size) != 2:
            raise RuntimeError("adaptive_max_pool2d(): internal error: output_size.size() must "
                               "be 2")
        size = tuple(x.shape[-2 + i] if o is None else int(o) for i, o in enumerate(output_size))
    else:
        size = (int(output_size), int(output_size))
    if x.ndim not in (3, 4) or any(n == 0 for n in x.shape[-2:]):
        raise RuntimeError("adaptive_max_pool2d(): Expected 3D or 4D tensor, but got: "
                           f"{_size_str(x.shape)}")
    h, w = x.shape[-2:]
    lead = x.shape[:-2]
    indices = np.zeros(lead + size, dtype=np.int64)
    for i in range(size[0]):
        r0, r1 = (i * h) // size[0], -(-((i + 1) * h) // size[0])
        for j in range(size[1]):
            c0, c1 = (j * w) // size[1], -(-((j + 1) * w) // size[1])
            win = x[..., r0:r1, c0:c1].reshape(lead + (-1,))
            nan = np.isnan(win) if x.dtype.kind == "f" else np.zeros(win.shape, bool)
            arg = np.where(nan.any(-1), np.argmax(nan, axis=-1),
                           np.argmax(np.where(nan, -np.inf, win) if nan.any() else win, axis=-1))
            rr, cc = np.divmod(arg, c1 - c0)
            indices[..., i, j] = (r0 + rr) * w + (c0 + cc)
    gather, scatter = _gather_scatter(lead, (h, w), size, indices)
    res = _linear_op(AdaptiveMaxPool2DBackward0, AdaptiveMaxPool2DBackwardBackward0, input,
                     gather, scatter)
    if return_indices:
        return res, wrap(indices, _tls.mode)
    return res
