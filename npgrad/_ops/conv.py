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
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from .signature import signature
from .checks import not_implemented_for, pooling_output_size, size_at
from .registry import General
from .. import _dtype
from .._forward import has_tangent
if TYPE_CHECKING:
    from .._tensor import Tensor
else:  # Note [Tensor base and Tensor] in npgrad._tensor_base
    from .._tensor_base import TensorBase as Tensor
from .._tensor_base import wrap

_new = object.__new__


def _size_str(shape: Any) -> str:
    return "[" + ", ".join(str(s) for s in shape) + "]"


# -- convolution -------------------------------------------------------------------------

class ConvParams:
    """The geometry of one convolution: per spatial dim stride, padding (before, after), dilation."""

    __slots__ = ("stride", "pad_lo", "pad_hi", "dilation", "groups", "output_padding")

    def __init__(self, stride: tuple, pad_lo: tuple, pad_hi: tuple, dilation: tuple,
                 groups: int, output_padding: tuple | None = None) -> None:
        self.stride, self.pad_lo, self.pad_hi = stride, pad_lo, pad_hi
        self.dilation, self.groups = dilation, groups
        # a transposed convolution's extra output at the high end (torch keeps it)
        self.output_padding = (0,) * len(stride) if output_padding is None else output_padding

    def torch_args(self, transposed: bool) -> tuple:
        """``(stride, padding, dilation, transposed, output_padding, groups)`` as torch's
        nodes keep them (``padding``: the padding before each dim)."""
        return (self.stride, self.pad_lo, self.dilation, transposed, self.output_padding,
                self.groups)

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


# Note [Convolution as two entries]
# ``convolution`` (grad_fn ``ConvolutionBackward0``) and ``convolution_backward``
# (``ConvolutionBackwardBackward0``, three outputs) are General entries, each with one rule
# for all its inputs (Note [One rule for several inputs] in registry.py), as torch records
# one node for the three gradients.  They keep torch's arguments (``_saved_stride``,
# ``_saved_padding``, ``_saved_transposed`` ...) and, hidden, the ConvParams ``geometry``
# the NumPy kernels read (which also holds a ``padding='same'`` convolution's uneven
# padding).  A convolution without bias gets a bias of no elements in its place, as torch's
# node has an empty edge there and keeps ``bias_sym_sizes_opt`` ``(0,)``.  The tangents
# are computed at once: a convolution is bilinear in (input, weight) plus the bias, and
# ``convolution_backward`` is bilinear in (grad_output, input or weight), so each tangent is
# a sum of the op applied with one tangent in place of its primal, skipping the inputs
# that have none (and an output with no term has no tangent, as torch's).

_CONV_ARGS = ("stride", "padding", "dilation", "transposed", "output_padding", "groups")


def _no_bias(dtype: np.dtype) -> Tensor:
    """The stand-in for a missing bias (Note [Convolution as two entries])."""
    return wrap(np.zeros(0, dtype), 0)


def _convolution_derivative(grad: Tensor, input: Tensor, weight: Tensor, geometry: ConvParams,
                            transposed: bool, grad_input_mask: tuple) -> tuple:
    return convolution_backward(grad, input, weight, geometry, grad_input_mask, transposed)


def _convolution_tangent(input_t: Tensor, weight_t: Tensor, bias_t: Tensor, input: Tensor,
                         weight: Tensor, bias: Tensor, result: Tensor, geometry: ConvParams,
                         transposed: bool) -> Tensor | None:
    """The sum of the convolution with each tangent in place of its primal."""
    def conv(x: Tensor, w: Tensor, b: Tensor | None) -> Tensor:
        if transposed:
            return convolution_transposed(x, w, b, geometry, result._data.shape[2:])
        return convolution(x, w, b, geometry)

    total = None
    if has_tangent(input):
        total = conv(input_t, weight, None)
    if has_tangent(weight):
        part = conv(input, weight_t, None)
        total = part if total is None else total + part
    if bias._data.size and has_tangent(bias):
        from .shape import reshape

        part = reshape(bias_t, (1, -1) + (1,) * (result._data.ndim - 2))
        total = part.expand(result._data.shape) if total is None else total + part
    return total


CONVOLUTION = General(
    "convolution(Tensor input, Tensor weight, Tensor? bias, SymIntArrayRef stride, "
    "SymIntArrayRef padding, SymIntArrayRef dilation, bool transposed, SymIntArrayRef "
    "output_padding, SymInt groups)", grad_fn="ConvolutionBackward0", forward=None,
    inputs=("input", "weight", "bias"), params=("geometry", *_CONV_ARGS, "bias_sym_sizes_opt"),
    keeps=("geometry", *_CONV_ARGS, "bias_sym_sizes_opt"), hidden=("geometry",),
    saves=("input", "weight"),
    derivatives={("input", "weight", "bias"): _convolution_derivative},
    tangent=_convolution_tangent)


def _convolution_double_backward(grads: tuple, grad_output: Tensor, input: Tensor,
                                 weight: Tensor, geometry: ConvParams, transposed: bool,
                                 grad_input_mask: tuple) -> tuple:
    """The gradients of ``convolution_backward``'s three outputs (gradients of input, weight
    and bias) for grad_output, input and weight (Note [Higher-order gradients of windowed
    ops])."""
    from .pointwise import add
    from .shape import expand, reshape

    ggx, ggw, ggb = grads
    g, x, w, p = grad_output, input, weight, geometry
    need_g, need_x, need_w = grad_input_mask
    spatial = g._data.shape[2:]

    def conv(a: Tensor, b: Tensor, bias: Any) -> Tensor:
        # for a transposed convolution the outputs were conv(g, w), grad_weight(x, g) and
        # sum(g): the adjoints are transposed convolutions
        return (convolution_transposed(a, b, bias, p, spatial) if transposed
                else convolution(a, b, bias, p))

    gg = gx = gw = None
    if need_g:
        parts = []
        if ggx is not None:
            parts.append(conv(ggx, w, ggb))
        elif ggb is not None:
            parts.append(expand(reshape(ggb, (1, -1) + (1,) * len(spatial)), g._data.shape))
        if ggw is not None:
            parts.append(conv(x, ggw, None))
        for part in parts:
            gg = part if gg is None else add(gg, part)
    if transposed:
        if need_x and ggw is not None:
            gx = convolution(g, ggw, None, p)
        if need_w and ggx is not None:
            gw = convolution_backward(ggx, g, w, p, (False, True, False))[1]
        return gg, gx, gw
    if need_x and ggw is not None:
        gx = convolution_backward(g, x, ggw, p, (True, False, False))[0]
    if need_w and ggx is not None:
        gw = convolution_backward(g, ggx, w, p, (False, True, False))[1]
    return gg, gx, gw


def _convolution_backward_tangent(grad_output_t: Tensor, input_t: Tensor, weight_t: Tensor,
                                  grad_output: Tensor, input: Tensor, weight: Tensor,
                                  geometry: ConvParams, transposed: bool,
                                  output_mask: tuple) -> tuple:
    """Each output's tangent: the op with one tangent in place of its primal, summed (grad
    input reads grad_output and weight, grad weight grad_output and input, grad bias
    grad_output alone)."""
    p, mask = geometry, output_mask
    terms = []
    if has_tangent(grad_output):
        terms.append(convolution_backward(grad_output_t, input, weight, p, mask, transposed))
    if has_tangent(input) and mask[1]:
        terms.append(convolution_backward(grad_output, input_t, weight, p,
                                          (False, True, False), transposed))
    if has_tangent(weight) and mask[0]:
        terms.append(convolution_backward(grad_output, input, weight_t, p,
                                          (True, False, False), transposed))
    found: list = [None, None, None]
    for term in terms:
        for i, t in enumerate(term):
            if t is not None:
                found[i] = t if found[i] is None else found[i] + t
    return tuple(found)


CONVOLUTION_BACKWARD = General(
    "convolution_backward(Tensor grad_output, Tensor input, Tensor weight, SymIntArrayRef? "
    "bias_sizes, SymIntArrayRef stride, SymIntArrayRef padding, SymIntArrayRef dilation, "
    "bool transposed, SymIntArrayRef output_padding, SymInt groups, bool[3] output_mask)",
    grad_fn="ConvolutionBackwardBackward0", forward=None,
    inputs=("grad_output", "input", "weight"), outputs=3,
    params=("geometry", *_CONV_ARGS, "output_mask"), keeps=("geometry", *_CONV_ARGS),
    hidden=("geometry",), saves=("grad_output", "input", "weight"),
    derivatives={("grad_output", "input", "weight"): _convolution_double_backward},
    tangent=_convolution_backward_tangent)


def _record_convolution(input: Tensor, weight: Tensor, bias: Tensor | None, params: ConvParams,
                        out: np.ndarray, transposed: bool) -> Tensor:
    """The output of a (transposed) convolution, with its ``ConvolutionBackward0`` node."""
    if bias is None:
        bias = _no_bias(input._data.dtype)
    return CONVOLUTION.record(  # type: ignore[no-any-return]
        (input, weight, bias), out, (params, *params.torch_args(transposed),
                                     bias._data.shape))


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
    if x.dtype.kind == "b":  # the kernel dispatches on the input's dtype before comparing
        kernel = "slow_conv_dilated<>" if dilated else "slow_conv2d_cpu"
        raise NotImplementedError(f"\"{kernel}\" not implemented for 'Bool'")
    if x.dtype != w.dtype:
        raise RuntimeError(f"expected scalar type {_dtype.from_np(x.dtype).scalar_name} but "
                           f"found {_dtype.from_np(w.dtype).scalar_name}")


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
    return convolution_transposed(input, weight, bias, ConvParams(s, p, p, d, groups, op), out)


def convolution_backward(grad: Tensor, input: Tensor, weight: Tensor, params: ConvParams,
                         mask: tuple, transposed: bool = False) -> tuple:
    """(grad_input, grad_weight, grad_bias) of a convolution, each None unless asked for.

    ``transposed``: of a transposed convolution (Note [Transposed convolution]): its
    grad_input is the plain convolution of ``grad``, its grad_weight the plain one's
    with ``grad`` and ``input`` swapped.
    """
    g, x, w = grad._data, input._data, weight._data
    c_out = w.shape[1] * params.groups if transposed else w.shape[0]
    # an output not asked for is zeros (allocated lazily), and read as None
    outs = [np.zeros(x.shape, g.dtype), np.zeros(w.shape, g.dtype), np.zeros((c_out,), g.dtype)]
    if mask[0]:
        outs[0] = np.asarray(_conv_forward(g, w, None, params) if transposed else
                             _conv_grad_input(g, w, x.shape, params))
    if mask[1]:
        outs[1] = (_conv_grad_weight(x, g, w.shape, params) if transposed else
                   _conv_grad_weight(g, x, w.shape, params))
    if mask[2]:
        outs[2] = np.asarray(g.sum(axis=(0,) + tuple(range(2, g.ndim))))
    res = CONVOLUTION_BACKWARD.record((grad, input, weight), tuple(outs),
                                      (params, *params.torch_args(transposed), tuple(mask)))
    return tuple(r if wanted else None for r, wanted in zip(res, mask))


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


# -- pooling (Note [Pooling ops and their backwards as entries]) ----------------------------------

# Note [Pooling ops and their backwards as entries]
# As the resampling ops (Note [A linear op and its backward as two entries] in resample.py),
# each pooling op is a General entry and so is its backward, torch's
# ``max_pool2d_with_indices_backward`` / ``avg_pool2d_backward`` /
# ``adaptive_avg_pool2d_backward`` / ``adaptive_max_pool2d_backward``, with the nodes, the
# kept arguments and the saved tensors torch's have: the pool's node saves its input (and a
# max pool its indices, ``_saved_result1``), the backward's takes the input for its sizes.
# Average pooling is linear, so its backward's backward is the pool again; a max pool is
# linear once its indices are fixed, and its backward's backward is torch's
# ``max_pool_double_backward``, the gradient gathered at the indices (flatten, gather,
# view, in npgrad ops).  Tangents: the pool of the tangent, or its gather at the indices.


def _as_kept(v: Any) -> tuple:
    """An ``IntArrayRef[2]`` argument as torch's node keeps it: a number as a pair, a list
    as given, no stride (None, which F passes as ``[]``) as empty."""
    if v is None:
        return ()
    if isinstance(v, (list, tuple)):
        return tuple(int(i) for i in v)
    return (int(v), int(v))


def _gather_planes(a: np.ndarray, indices: np.ndarray) -> np.ndarray:
    """Input-shaped ``a`` -> output-shaped: each output the element of its plane (H*W) that
    ``indices`` names."""
    lead = indices.shape[:-2]  # (sizes spelled out: a lead may be empty, where -1 is not)
    flat = a.reshape(a.shape[:-2] + (a.shape[-2] * a.shape[-1],))
    return np.take_along_axis(flat, indices.reshape(lead + (indices.shape[-2] * indices.shape[-1],)),
                              axis=-1).reshape(indices.shape)


def _scatter_planes(g: np.ndarray, indices: np.ndarray, in_shape: tuple) -> np.ndarray:
    """The adjoint of ``_gather_planes``: output-shaped ``g`` summed into ``in_shape``."""
    plane = in_shape[-2] * in_shape[-1]
    n_out = indices.shape[-2] * indices.shape[-1]
    res = np.zeros((math.prod(in_shape[:-2]), plane), dtype=g.dtype)
    np.add.at(res, (np.arange(res.shape[0])[:, None], indices.reshape(-1, n_out)),
              g.reshape(-1, n_out))
    return res.reshape(in_shape)


def _gather_by_indices(grad: Tensor, indices: Tensor) -> Tensor:
    """torch's ``max_pool_double_backward``: ``grad`` at the indices, in npgrad ops."""
    return grad.flatten(-2).gather(-1, indices.flatten(-2)).view(tuple(indices.shape))


_MAX_POOL_PARAMS = ("kernel_size", "stride", "padding", "dilation", "ceil_mode")

# the values and the indices are computed by ``max_pool2d`` (its NaN and tie rules)
MAX_POOL2D = General(
    "max_pool2d_with_indices(Tensor input, IntArrayRef[2] kernel_size, IntArrayRef[2] "
    "stride=[], IntArrayRef[2] padding=0, IntArrayRef[2] dilation=1, bool ceil_mode=False, *, "
    "Tensor out=None)", grad_fn="MaxPool2DWithIndicesBackward0", forward=None,
    params=_MAX_POOL_PARAMS, keeps=_MAX_POOL_PARAMS, saves=("self", "result1"),
    extra=("result1",),
    derivatives={"self": lambda grad, self, result1, kernel_size, stride, padding, dilation,
                 ceil_mode: MAX_POOL2D_BACKWARD((grad, self), (kernel_size, stride, padding,
                                                              dilation, ceil_mode, result1))},
    tangent=lambda self_t, result1: _gather_by_indices(self_t, result1))

MAX_POOL2D_BACKWARD = General(
    "max_pool2d_with_indices_backward(Tensor grad_output, Tensor input, IntArrayRef[2] "
    "kernel_size, IntArrayRef[2] stride, IntArrayRef[2] padding, IntArrayRef[2] dilation, "
    "bool ceil_mode, Tensor indices, *, Tensor grad_input=None)",
    grad_fn="MaxPool2DWithIndicesBackwardBackward0",
    forward=lambda g, x, kernel_size, stride, padding, dilation, ceil_mode, indices:
    _scatter_planes(g, indices._data, x.shape),
    inputs=("grad_output", "self"), params=(*_MAX_POOL_PARAMS, "indices"), saves=("indices",),
    derivatives={"grad_output": lambda grad, indices: _gather_by_indices(grad, indices)},
    tangent=lambda grad_output_t, self, kernel_size, stride, padding, dilation, ceil_mode,
    indices: MAX_POOL2D_BACKWARD((grad_output_t, self), (kernel_size, stride, padding,
                                                        dilation, ceil_mode, indices)))


_AVG_POOL_PARAMS = ("kernel_size", "stride", "padding", "ceil_mode", "count_include_pad",
                    "divisor_override")


def _avg_geometry(shape: tuple, kernel_size: tuple, stride: tuple, padding: tuple,
                  ceil_mode: bool, count_include_pad: bool, divisor_override: Any) -> tuple:
    """``(k, s, p, out, hi, divisor)`` of an average pooling of an input of ``shape``: the
    pairs, the output size, the padding after each dim that the last windows need, and the
    divisor of each output (float64)."""
    k, s, p, _ = _pool_args(kernel_size, stride, padding)
    h, w = shape[-2:]
    out = tuple(_pool_out(n, ki, si, pi, 1, ceil_mode)
                for n, ki, si, pi in zip((h, w), k, s, p))
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
    return k, s, p, out, hi, div


def _avg_pool(a: np.ndarray, *params: Any) -> np.ndarray:
    k, s, p, out, hi, div = _avg_geometry(a.shape, *params)
    win = _windows(_pad(a, p, hi), k, s, (1, 1), out)
    return np.ascontiguousarray((win.sum(axis=(-2, -1)) / div.astype(a.dtype)).astype(
        a.dtype, copy=False))


def _avg_unpool(g: np.ndarray, in_shape: tuple, *params: Any) -> np.ndarray:
    """The adjoint of ``_avg_pool`` onto an input of ``in_shape``."""
    k, s, p, out, hi, div = _avg_geometry(in_shape, *params)
    h, w = in_shape[-2:]
    scaled = g / div.astype(g.dtype)
    res = np.zeros(in_shape[:-2] + (h + p[0] + hi[0], w + p[1] + hi[1]), dtype=g.dtype)
    for i in range(k[0]):
        for j in range(k[1]):
            res[..., i:i + s[0] * (out[0] - 1) + 1:s[0],
                j:j + s[1] * (out[1] - 1) + 1:s[1]] += scaled
    return np.ascontiguousarray(res[..., p[0]:p[0] + h, p[1]:p[1] + w].astype(g.dtype, copy=False))


AVG_POOL2D = General(
    "avg_pool2d(Tensor input, IntArrayRef[2] kernel_size, IntArrayRef[2] stride=None, "
    "IntArrayRef[2] padding=0, bool ceil_mode=False, bool count_include_pad=True, "
    "int64_t? divisor_override=None, *, Tensor out=None)", grad_fn="AvgPool2DBackward0",
    forward=_avg_pool, params=_AVG_POOL_PARAMS, keeps=_AVG_POOL_PARAMS, saves=("self",),
    derivatives={"self": lambda grad, self, kernel_size, stride, padding, ceil_mode,
                 count_include_pad, divisor_override: AVG_POOL2D_BACKWARD(
                     (grad, self), (kernel_size, stride, padding, ceil_mode, count_include_pad,
                                    divisor_override))},
    tangent=lambda self_t, kernel_size, stride, padding, ceil_mode, count_include_pad,
    divisor_override: AVG_POOL2D((self_t,), (kernel_size, stride, padding, ceil_mode,
                                             count_include_pad, divisor_override)))

AVG_POOL2D_BACKWARD = General(
    "avg_pool2d_backward(Tensor grad_output, Tensor input, IntArrayRef[2] kernel_size, "
    "IntArrayRef[2] stride, IntArrayRef[2] padding, bool ceil_mode, bool count_include_pad, "
    "int64_t? divisor_override, *, Tensor grad_input=None)",
    grad_fn="AvgPool2DBackwardBackward0",
    forward=lambda g, x, *params: _avg_unpool(g, x.shape, *params),
    inputs=("grad_output", "self"), params=_AVG_POOL_PARAMS, keeps=_AVG_POOL_PARAMS,
    derivatives={"grad_output": lambda grad, kernel_size, stride, padding, ceil_mode,
                 count_include_pad, divisor_override: AVG_POOL2D(
                     (grad,), (kernel_size, stride, padding, ceil_mode, count_include_pad,
                               divisor_override))},
    # linear in the gradient alone: no tangent unless it has one (torch's: none)
    tangent=lambda grad_output_t, grad_output, self, kernel_size, stride, padding, ceil_mode,
    count_include_pad, divisor_override: AVG_POOL2D_BACKWARD(
        (grad_output_t, self), (kernel_size, stride, padding, ceil_mode, count_include_pad,
                                divisor_override)) if has_tangent(grad_output) else None)


def _adaptive_bins(n: int, o: int, dtype: np.dtype) -> np.ndarray:
    """The ``(o, n)`` matrix averaging each of ``o`` adaptive bins of ``n`` elements."""
    m = np.zeros((o, n), dtype=dtype)
    for i in range(o):
        start, end = (i * n) // o, -(-((i + 1) * n) // o)
        m[i, start:end] = 1.0 / (end - start)
    return m


def _adaptive_avg(a: np.ndarray, output_size: tuple) -> np.ndarray:
    mh = _adaptive_bins(a.shape[-2], output_size[0], a.dtype)
    mw = _adaptive_bins(a.shape[-1], output_size[1], a.dtype)
    finite = np.isfinite(a)
    if finite.all():
        return np.matmul(np.matmul(mh, a), mw.T).astype(a.dtype, copy=False)
    # torch sums each bin alone: a NaN or inf reaches only its bins, where the dense
    # product's 0 * nan would reach every bin of its rows and columns
    out = np.matmul(np.matmul(mh, np.where(finite, a, 0)), mw.T).astype(a.dtype, copy=False)
    bh, bw = (mh > 0).astype(np.float64), (mw > 0).astype(np.float64)

    def reaches(mask: np.ndarray) -> np.ndarray:
        return np.matmul(np.matmul(bh, mask.astype(np.float64)), bw.T) > 0

    pos, neg = reaches(a == np.inf), reaches(a == -np.inf)
    out[pos] = np.inf
    out[neg] = -np.inf
    out[reaches(np.isnan(a)) | (pos & neg)] = np.nan
    return out


def _adaptive_avg_adjoint(g: np.ndarray, in_shape: tuple) -> np.ndarray:
    mh = _adaptive_bins(in_shape[-2], g.shape[-2], g.dtype)
    mw = _adaptive_bins(in_shape[-1], g.shape[-1], g.dtype)
    return np.matmul(np.matmul(mh.T, g), mw).astype(g.dtype, copy=False)


# torch's node keeps no output size: the gradient's sizes are the output's
ADAPTIVE_AVG_POOL2D = General(
    "adaptive_avg_pool2d(Tensor input, SymIntArrayRef[2] output_size, *, Tensor out=None)",
    grad_fn="AdaptiveAvgPool2DBackward0", forward=_adaptive_avg, params=("output_size",),
    saves=("self",),
    derivatives={"self": lambda grad, self: ADAPTIVE_AVG_POOL2D_BACKWARD(
        (grad, self), (grad.shape[-1], grad.shape[-2]))},
    tangent=lambda self_t, output_size: ADAPTIVE_AVG_POOL2D((self_t,), (output_size,)))

ADAPTIVE_AVG_POOL2D_BACKWARD = General(
    "_adaptive_avg_pool2d_backward(Tensor grad_output, Tensor input)",
    grad_fn="AdaptiveAvgPool2DBackwardBackward0",
    forward=lambda g, x, minus_1, minus_2: _adaptive_avg_adjoint(g, x.shape),
    inputs=("grad_output", "self"),
    params=("grad_output_sym_argsize_minus_1", "grad_output_sym_argsize_minus_2"),
    keeps=("grad_output_sym_argsize_minus_1", "grad_output_sym_argsize_minus_2"),
    derivatives={"grad_output": lambda grad, grad_output_sym_argsize_minus_1,
                 grad_output_sym_argsize_minus_2: ADAPTIVE_AVG_POOL2D(
                     (grad,), ((grad_output_sym_argsize_minus_2,
                                grad_output_sym_argsize_minus_1),))},
    tangent=lambda grad_output_t, grad_output, self, grad_output_sym_argsize_minus_1,
    grad_output_sym_argsize_minus_2: ADAPTIVE_AVG_POOL2D_BACKWARD(
        (grad_output_t, self), (grad_output_sym_argsize_minus_1,
                                grad_output_sym_argsize_minus_2))
    if has_tangent(grad_output) else None)  # as avg_pool2d_backward's

# the values and the indices are computed by ``adaptive_max_pool2d``
ADAPTIVE_MAX_POOL2D = General(
    "adaptive_max_pool2d(Tensor input, IntArrayRef[2] output_size, *, Tensor out=None)",
    grad_fn="AdaptiveMaxPool2DBackward0", forward=None, saves=("self", "result1"),
    extra=("result1",),
    derivatives={"self": lambda grad, self, result1: ADAPTIVE_MAX_POOL2D_BACKWARD(
        (grad, self), (result1,))},
    tangent=lambda self_t, result1: _gather_by_indices(self_t, result1))

ADAPTIVE_MAX_POOL2D_BACKWARD = General(
    "adaptive_max_pool2d_backward(Tensor grad_output, Tensor input, Tensor indices, *, "
    "Tensor grad_input=None)", grad_fn="AdaptiveMaxPool2DBackwardBackward0",
    forward=lambda g, x, indices: _scatter_planes(g, indices._data, x.shape),
    inputs=("grad_output", "self"), params=("indices",), saves=("indices",),
    derivatives={"grad_output": lambda grad, indices: _gather_by_indices(grad, indices)},
    tangent=lambda grad_output_t, self, indices: ADAPTIVE_MAX_POOL2D_BACKWARD(
        (grad_output_t, self), (indices,)))


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
    kept = (_as_kept(kernel_size), _as_kept(stride), _as_kept(padding), _as_kept(dilation),
            bool(ceil_mode))
    if x.size == 0:  # an empty batch: an empty result of the output's shape
        empty = np.zeros(x.shape[:-2] + out, dtype=x.dtype)
        res, idx = MAX_POOL2D.record((input,), (empty, np.zeros(empty.shape, dtype=np.int64)),
                                     kept)
        return (res, idx) if return_indices else res
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
    indices = np.ascontiguousarray((row * w + col).astype(np.int64))
    res, idx = MAX_POOL2D.record((input,), (np.ascontiguousarray(values, dtype=x.dtype),
                                            indices), kept)
    return (res, idx) if return_indices else res


@signature("avg_pool2d(Tensor input, IntArrayRef[2] kernel_size, IntArrayRef[2] stride=None, "
           "IntArrayRef[2] padding=0, bool ceil_mode=False, bool count_include_pad=True, "
           "int64_t? divisor_override=None, *, Tensor out=None)")
def avg_pool2d(input: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0,
               ceil_mode: bool = False, count_include_pad: bool = True,
               divisor_override: int | None = None) -> Tensor:
    """2-d average pooling (grad_fn ``AvgPool2DBackward0``)."""
    x = input._data
    k, s, p, _ = _pool_args(kernel_size, stride, padding)
    # torch's order: the divisor, the plane count (size(-3): an IndexError below 3 dims), the
    # output size with its checks (checks.pooling_output_size), the shape, the dtype
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError("divisor must be not zero")
    size_at(x.shape, -3)
    h, w = x.shape[-2:]
    out = tuple(pooling_output_size(n, ki, pi, si, 1, ceil_mode)
                for n, ki, si, pi in zip((h, w), k, s, p))
    _pool_checks("avg_pool2d", x, k, s, p, (1, 1), out)
    not_implemented_for("avg_pool2d", x.dtype, "b")
    kept = (_as_kept(kernel_size), _as_kept(stride), _as_kept(padding), bool(ceil_mode),
            bool(count_include_pad), divisor_override)
    return AVG_POOL2D((input,), kept)  # type: ignore[no-any-return]


def adaptive_avg_pool2d(input: Tensor, output_size: Any) -> Tensor:
    """Average over adaptive bins (grad_fn ``AdaptiveAvgPool2DBackward0``; 1x1 is a mean)."""
    from .reduction import mean

    x = input._data
    if isinstance(output_size, (list, tuple)):
        size = tuple(x.shape[-2 + i] if o is None else int(o) for i, o in enumerate(output_size))
    else:
        size = (int(output_size), int(output_size))
    if size == (1, 1):
        # torch takes this path before its rank check: any input of 2 or more dims (empty
        # ones too) is averaged over its last two
        return mean(input, (-1, -2), keepdim=True)
    if x.ndim not in (3, 4) or any(n == 0 for n in x.shape[-2:]):
        raise RuntimeError("adaptive_avg_pool2d(): Expected 3D or 4D tensor, but got "
                           f"{_size_str(x.shape)}")
    return ADAPTIVE_AVG_POOL2D((input,), (size,))  # type: ignore[no-any-return]


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
            win = x[..., r0:r1, c0:c1].reshape(lead + ((r1 - r0) * (c1 - c0),))  # lead may be empty
            nan = np.isnan(win) if x.dtype.kind == "f" else np.zeros(win.shape, bool)
            arg = np.where(nan.any(-1), np.argmax(nan, axis=-1),
                           np.argmax(np.where(nan, -np.inf, win) if nan.any() else win, axis=-1))
            rr, cc = np.divmod(arg, c1 - c0)
            indices[..., i, j] = (r0 + rr) * w + (c0 + cc)
    res, idx = ADAPTIVE_MAX_POOL2D.record((input,), (_gather_planes(x, indices), indices))
    return (res, idx) if return_indices else res
