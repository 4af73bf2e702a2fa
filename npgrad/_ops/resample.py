"""Resampling ops of vision layers: interpolation, padding, pixel shuffle and unfold/fold.

Note [Resampling as per-axis linear maps]
Every op here is linear in its input.  Interpolation and reflect/replicate
padding act on each spatial axis separately: an axis is, for nearest
interpolation and padding, an index array (a gather), or, for the
interpolating modes, its taps: an ``(out, k)`` array of source indices and one
of weights (torch's source-index rules), each output the weighted sum of the
``k`` inputs it reads.  Taps, not a dense ``(out, in)`` matrix, because a NaN
or inf must reach only the outputs that read it, as in torch: a dense product
multiplies every input, and ``0 * nan`` spreads a NaN over the whole row (an
input read with weight 0 still gives NaN for inf, as torch's ``0 * inf``
does).  The adjoint is the transposed matrix the taps describe.  Both maps
are computed again from the op's arguments and the input's sizes (what
torch's nodes keep), so a node keeps no NumPy arrays of its own.

Note [A linear op and its backward as two entries]
torch records the backward of each of these ops as an op of its own
(``upsample_bilinear2d_backward``, ``reflection_pad2d_backward``, ``col2im``),
with its own node (``UpsampleBilinear2DBackwardBackward0``,
``Col2ImBackward0``): so each op here is a pair of General entries (Note [The
general entry kind] in registry.py), the op and its adjoint, whose backward
rules call each other, and gradients of any order are recorded as torch
records them.  A linear op's tangent is the op applied to the input's
tangent.  The backward of a pad takes the input as torch's does (so its node
has the input's edge, which gets no gradient) and reads only its sizes.

Constant padding is affine, not linear: its node (``ConstantPadNdBackward0``)
crops in backward (a constant pad with the negated widths), and that crop's
backward pads with zeros.  Circular padding is built as torch builds it, from
slice copies into an empty tensor, so its grad_fn is ``CopySlices`` as in
torch.
"""
from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np

from .signature import batchable, checker, signature
if TYPE_CHECKING:
    from .._tensor import Tensor
else:  # Note [Tensor base and Tensor] in npgrad._tensor_base
    from .._tensor_base import TensorBase as Tensor
from .._forward import has_tangent
from .allocation import check_new_sizes, guarded, wrap_int64
from .checks import not_implemented_for
from .conv import _pad, _size_str, _windows
from .registry import General


# -- per-axis maps (Note [Resampling as per-axis linear maps]) --------------------------------

def _apply_axes(x: np.ndarray, axes: list) -> np.ndarray:
    """Apply per-axis maps ``axes`` (one per trailing dim: an index array or taps)."""
    n = len(axes)
    for i, a in enumerate(axes):
        ax = x.ndim - n + i
        if isinstance(a, np.ndarray):
            x = np.take(x, a, axis=ax)
            continue
        idx, w = a
        shape = [1] * x.ndim
        shape[ax] = idx.shape[0]
        w = w.astype(x.dtype)
        with np.errstate(invalid="ignore", over="ignore"):  # 0 * inf is NaN, silently
            out = np.take(x, idx[:, 0], axis=ax) * w[:, 0].reshape(shape)
            for k in range(1, idx.shape[1]):
                out += np.take(x, idx[:, k], axis=ax) * w[:, k].reshape(shape)
        x = out
    return np.ascontiguousarray(x)


def _matrix(a: Any, n_in: int) -> np.ndarray:
    """The dense ``(out, in)`` matrix of an axis map: a gather's one-hot rows, or the taps'."""
    idx, w = (a[:, None], np.ones((a.size, 1))) if isinstance(a, np.ndarray) else a
    m = np.zeros((idx.shape[0], n_in))
    rows = np.broadcast_to(np.arange(idx.shape[0])[:, None], idx.shape)
    np.add.at(m, (rows, idx), w)
    return m


def _apply_adjoint(g: np.ndarray, axes: list, in_sizes: tuple) -> np.ndarray:
    """The adjoint of ``_apply_axes(., axes)`` on an input of trailing sizes ``in_sizes``."""
    n = len(axes)
    for i, (a, n_in) in enumerate(zip(axes, in_sizes)):
        m = _matrix(a, n_in)
        ax = g.ndim - n + i
        g = np.moveaxis(np.matmul(m.T.astype(g.dtype), np.moveaxis(g, ax, -2)), -2, ax)
    return np.ascontiguousarray(g)


def _source_scale(n_in: int, n_out: int, align_corners: bool, scale: float | None) -> float:
    """torch's ``area_pixel_compute_scale``."""
    if align_corners:
        return (n_in - 1) / (n_out - 1) if n_out > 1 else 0.0
    return 1.0 / scale if scale is not None and scale > 0 else n_in / n_out


def _nearest_index(n_in: int, n_out: int, scale: float | None, exact: bool) -> np.ndarray:
    """torch's nearest source indices, computed as torch does in float32 whatever the dtype
    (``floorf(dst * scale)``), so the same boundary cases round the same way."""
    f32 = np.float32
    s = f32(1.0 / scale) if scale is not None and scale > 0 else f32(n_in) / f32(n_out)
    dst = np.arange(n_out, dtype=f32)
    src = np.floor((dst + f32(0.5)) * s) if exact else np.floor(dst * s)
    return np.minimum(src.astype(np.int64), n_in - 1)


def _linear_taps(n_in: int, n_out: int, align_corners: bool, scale: float | None) -> tuple:
    if n_in == n_out:  # torch copies an axis of unchanged size, whatever the scale given,
        i = np.arange(n_in)  # reading each input twice (weights 1 and 0: inf gives NaN)
        return np.stack([i, i], axis=1), np.stack([np.ones(n_in), np.zeros(n_in)], axis=1)
    s = _source_scale(n_in, n_out, align_corners, scale)
    dst = np.arange(n_out, dtype=np.float64)
    src = dst * s if align_corners else np.maximum(s * (dst + 0.5) - 0.5, 0.0)
    i0 = np.minimum(np.floor(src).astype(np.int64), n_in - 1)
    i1 = np.minimum(i0 + 1, n_in - 1)
    lam = np.clip(src - i0, 0.0, 1.0)
    return np.stack([i0, i1], axis=1), np.stack([1.0 - lam, lam], axis=1)


def _cubic_taps(n_in: int, n_out: int, align_corners: bool, scale: float | None) -> tuple:
    a = -0.75
    s = _source_scale(n_in, n_out, align_corners, scale)
    dst = np.arange(n_out, dtype=np.float64)
    src = dst * s if align_corners else s * (dst + 0.5) - 0.5
    i = np.floor(src).astype(np.int64)
    t = src - i

    def near(x: np.ndarray) -> np.ndarray:  # |x| <= 1
        return ((a + 2) * x - (a + 3)) * x * x + 1

    def far(x: np.ndarray) -> np.ndarray:  # 1 < |x| < 2
        return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a

    idx = np.stack([np.clip(i - 1 + k, 0, n_in - 1) for k in range(4)], axis=1)
    return idx, np.stack((far(t + 1), near(t), near(1 - t), far(2 - t)), axis=1)


def _upsample_axes(mode: str, in_sizes: tuple, output_size: tuple, align_corners: Any,
                   scales: tuple) -> list:
    """The per-axis maps of an upsampling of the trailing sizes ``in_sizes``."""
    axes = []
    for n_in, n_out, s in zip(in_sizes, output_size, scales):
        if mode in ("nearest", "nearest-exact"):
            axes.append(_nearest_index(n_in, n_out, s, mode == "nearest-exact"))
        elif mode == "bicubic":
            axes.append(_cubic_taps(n_in, n_out, bool(align_corners), s))
        else:
            axes.append(_linear_taps(n_in, n_out, bool(align_corners), s))
    return axes


def _upsample_entries(op: str, name: str, mode: str, dims: int) -> tuple:
    """The entries of upsampling op ``op`` (grad_fn ``<name>Backward0``) and of its backward
    ``<op>_backward`` (``<name>BackwardBackward0``), Note [A linear op and its backward as two
    entries].  Their parameters are torch's: ``output_size``, ``align_corners`` (interpolating
    modes), then ``scales`` (1-d) or ``scales_h, scales_w`` (2-d); the backward also takes the
    input's sizes.  The rules' parameter names are what the nodes keep, so each of the four
    kinds of signature has its own rules."""
    corners = mode not in ("nearest", "nearest-exact")
    sizes = f"SymIntArrayRef[{dims}] output_size"
    scale_args = ("double? scales=None" if dims == 1
                  else "double? scales_h=None, double? scales_w=None")
    corner_arg = "bool align_corners, " if corners else ""
    scale_names: tuple = ("scales",) if dims == 1 else ("scales_h", "scales_w")
    params = ("output_size",) + (("align_corners",) if corners else ()) + scale_names

    def forward(x: np.ndarray, output_size: tuple, *rest: Any) -> np.ndarray:
        align, scales = (rest[0], rest[1:]) if corners else (None, rest)
        return _apply_axes(x, _upsample_axes(mode, x.shape[-dims:], output_size, align, scales))

    def backward(g: np.ndarray, output_size: tuple, input_size: tuple, *rest: Any) -> np.ndarray:
        align, scales = (rest[0], rest[1:]) if corners else (None, rest)
        in_sizes = tuple(input_size[-dims:])
        return _apply_adjoint(g, _upsample_axes(mode, in_sizes, output_size, align, scales),
                              in_sizes)

    # (grad_fn of the op, of its backward): derivative and tangent of each, per signature
    if not corners and dims == 1:
        rules: tuple = (
            lambda grad, output_size, scales, self_sym_sizes:
            up_back((grad,), (output_size, self_sym_sizes, scales)),
            lambda self_t, output_size, scales: up((self_t,), (output_size, scales)),
            lambda grad, output_size, scales: up((grad,), (output_size, scales)),
            lambda grad_output_t, output_size, input_size, scales:
            up_back((grad_output_t,), (output_size, input_size, scales)))
    elif not corners:
        rules = (
            lambda grad, output_size, scales_h, scales_w, self_sym_sizes:
            up_back((grad,), (output_size, self_sym_sizes, scales_h, scales_w)),
            lambda self_t, output_size, scales_h, scales_w:
            up((self_t,), (output_size, scales_h, scales_w)),
            lambda grad, output_size, scales_h, scales_w:
            up((grad,), (output_size, scales_h, scales_w)),
            lambda grad_output_t, output_size, input_size, scales_h, scales_w:
            up_back((grad_output_t,), (output_size, input_size, scales_h, scales_w)))
    elif dims == 1:
        rules = (
            lambda grad, output_size, align_corners, scales, self_sym_sizes:
            up_back((grad,), (output_size, self_sym_sizes, align_corners, scales)),
            lambda self_t, output_size, align_corners, scales:
            up((self_t,), (output_size, align_corners, scales)),
            lambda grad, output_size, align_corners, scales:
            up((grad,), (output_size, align_corners, scales)),
            lambda grad_output_t, output_size, input_size, align_corners, scales:
            up_back((grad_output_t,), (output_size, input_size, align_corners, scales)))
    else:
        rules = (
            lambda grad, output_size, align_corners, scales_h, scales_w, self_sym_sizes:
            up_back((grad,), (output_size, self_sym_sizes, align_corners, scales_h, scales_w)),
            lambda self_t, output_size, align_corners, scales_h, scales_w:
            up((self_t,), (output_size, align_corners, scales_h, scales_w)),
            lambda grad, output_size, align_corners, scales_h, scales_w:
            up((grad,), (output_size, align_corners, scales_h, scales_w)),
            lambda grad_output_t, output_size, input_size, align_corners, scales_h, scales_w:
            up_back((grad_output_t,),
                    (output_size, input_size, align_corners, scales_h, scales_w)))
    derivative, tangent, back_derivative, back_tangent = rules
    up = General(
        f"{op}(Tensor input, {sizes}, {corner_arg}{scale_args}, *, Tensor out=None)",
        grad_fn=f"{name}Backward0", forward=forward, params=params,
        keeps=params + ("self_sym_sizes",), derivatives={"self": derivative}, tangent=tangent)
    up_back = General(
        f"{op}_backward(Tensor grad_output, {sizes}, SymIntArrayRef[{dims + 2}] input_size, "
        f"{corner_arg}{scale_args}, *, Tensor grad_input=None)",
        grad_fn=f"{name}BackwardBackward0", forward=backward, inputs=("grad_output",),
        params=(params[0], "input_size") + params[1:], keeps=params,
        derivatives={"grad_output": back_derivative}, tangent=back_tangent)
    return up, up_back


UPSAMPLE_NEAREST1D, UPSAMPLE_NEAREST1D_BACKWARD = _upsample_entries(
    "upsample_nearest1d", "UpsampleNearest1D", "nearest", 1)
UPSAMPLE_NEAREST2D, UPSAMPLE_NEAREST2D_BACKWARD = _upsample_entries(
    "upsample_nearest2d", "UpsampleNearest2D", "nearest", 2)
UPSAMPLE_NEAREST_EXACT1D, UPSAMPLE_NEAREST_EXACT1D_BACKWARD = _upsample_entries(
    "_upsample_nearest_exact1d", "UpsampleNearestExact1D", "nearest-exact", 1)
UPSAMPLE_NEAREST_EXACT2D, UPSAMPLE_NEAREST_EXACT2D_BACKWARD = _upsample_entries(
    "_upsample_nearest_exact2d", "UpsampleNearestExact2D", "nearest-exact", 2)
UPSAMPLE_LINEAR1D, UPSAMPLE_LINEAR1D_BACKWARD = _upsample_entries(
    "upsample_linear1d", "UpsampleLinear1D", "linear", 1)
UPSAMPLE_BILINEAR2D, UPSAMPLE_BILINEAR2D_BACKWARD = _upsample_entries(
    "upsample_bilinear2d", "UpsampleBilinear2D", "bilinear", 2)
UPSAMPLE_BICUBIC2D, UPSAMPLE_BICUBIC2D_BACKWARD = _upsample_entries(
    "upsample_bicubic2d", "UpsampleBicubic2D", "bicubic", 2)

_UPSAMPLE = {("nearest", 1): UPSAMPLE_NEAREST1D, ("nearest", 2): UPSAMPLE_NEAREST2D,
             ("nearest-exact", 1): UPSAMPLE_NEAREST_EXACT1D,
             ("nearest-exact", 2): UPSAMPLE_NEAREST_EXACT2D,
             ("linear", 1): UPSAMPLE_LINEAR1D, ("bilinear", 2): UPSAMPLE_BILINEAR2D,
             ("bicubic", 2): UPSAMPLE_BICUBIC2D}


_AREA_CHECK = {1: checker("adaptive_avg_pool1d(Tensor input, IntArrayRef[1] output_size)"),
               2: checker("adaptive_avg_pool2d(Tensor input, SymIntArrayRef[2] output_size)")}
_SCALES = {1: "double? scales=None", 2: "double? scales_h=None, double? scales_w=None"}


def _upsample_checker(mode: str, dim: int) -> Any:
    """The C op torch's ``F.interpolate`` calls for ``mode`` on ``dim`` spatial dims, as a
    signature check of ``(input, output_size, [align_corners,] scale_factors)``."""
    key = (mode, dim)
    check = _UPSAMPLE_CHECKS.get(key)
    if check is None:
        op = {"nearest": f"upsample_nearest{dim}d", "nearest-exact":
              f"_upsample_nearest_exact{dim}d"}.get(mode, f"upsample_{mode}{dim}d")
        corners = "" if mode in ("nearest", "nearest-exact") else "bool align_corners, "
        check = checker(f"{op}(Tensor input, SymIntArrayRef? output_size, {corners}"
                        "ArrayRef<double>? scale_factors)",
                        f"{op}(Tensor input, SymIntArrayRef[{dim}] output_size, {corners}"
                        f"{_SCALES[dim]}, *, Tensor out=None)")
        _UPSAMPLE_CHECKS[key] = check
    return check


_UPSAMPLE_CHECKS: dict = {}


def _is_integer(v: Any) -> bool:
    return isinstance(v, int) or (isinstance(v, Tensor) and v._data.ndim == 0
                                  and v._data.dtype.kind in "iu")


# torch's CPU upsampling kernel of each mode and spatial rank whose dtype dispatch refuses an
# input first, and the NumPy kinds it has no loop for (uint8 passes the nearest, bilinear
# and bicubic ones)
_UPSAMPLE_KERNELS = {
    ("nearest", 1): ("compute_indices_weights_nearest", "bi"),
    ("nearest", 2): ("upsample_nearest2d_channels_last", "bi"),
    ("nearest", 3): ("compute_indices_weights_nearest", "bi"),
    ("nearest-exact", 1): ("compute_indices_weights_nearest", "bi"),
    ("nearest-exact", 2): ("upsample_nearest2d_channels_last", "bi"),
    ("nearest-exact", 3): ("compute_indices_weights_nearest", "bi"),
    ("linear", 1): ("compute_indices_weights_linear", "biu"),
    ("bilinear", 2): ("upsample_bilinear2d_channels_last", "bi"),
    ("bicubic", 2): ("compute_indices_weights_cubic", "bi"),
    ("trilinear", 3): ("compute_indices_weights_linear", "biu"),
}


@batchable  # Note [Batched values] in npgrad.func._batched
def interpolate(input: Tensor, size: Any = None, scale_factor: Any = None, mode: str = "nearest",
                align_corners: bool | None = None, recompute_scale_factor: bool | None = None,
                antialias: bool = False) -> Tensor:
    """torch's ``F.interpolate`` for 3-d and 4-d inputs (nearest, nearest-exact, (bi)linear,
    bicubic, area).

    >>> import npgrad as torch
    >>> torch.nn.functional.interpolate(torch.tensor([[[1., 2.]]]), scale_factor=2)
    tensor([[[1., 1., 2., 2.]]])
    """
    if mode in ("nearest", "area", "nearest-exact"):
        if align_corners is not None:
            raise ValueError("align_corners option can only be set with the interpolating "
                             "modes: linear | bilinear | bicubic | trilinear")
    elif align_corners is None:
        align_corners = False
    if not isinstance(input, Tensor):
        input.dim()  # torch's first use of the input: CPython's AttributeError
    ndim = input._data.ndim
    dim = ndim - 2
    spatial = list(input._data.shape[2:])
    if size is not None and scale_factor is not None:
        raise ValueError("only one of size or scale_factor should be defined")
    if size is not None:
        scales = None
        if isinstance(size, (list, tuple)):
            if len(size) != dim:
                raise ValueError(
                    "Input and output must have the same number of spatial dimensions, but got "
                    f"input with spatial dimensions of {spatial} and output size of {size}. "
                    "Please provide input tensor in (N, C, d1, d2, ...,dK) format and "
                    "output size in (o1, o2, ...,oK) format.")
            if not all(_is_integer(v) for v in size):
                raise TypeError(
                    "expected size to be one of int or Tuple[int] or Tuple[int, int] or "
                    f"Tuple[int, int, int], but got size with types {[type(v) for v in size]}")
            out_size: list | None = list(size)
        else:
            out_size = [size] * dim  # torch's list, checked by the C op below
    elif scale_factor is not None:
        out_size = None
        if isinstance(scale_factor, (list, tuple)):
            if len(scale_factor) != dim:
                raise ValueError(
                    "Input and scale_factor must have the same number of spatial dimensions, "
                    f"but got input with spatial dimensions of {spatial} and scale_factor of "
                    f"shape {scale_factor}. Please provide input tensor in (N, C, d1, d2, ...,dK) "
                    "format and scale_factor in (s1, s2, ...,sK) format.")
            scales = list(scale_factor)
        else:
            scales = [scale_factor] * dim  # checked by the C op below
    else:
        raise ValueError("either size or scale_factor should be defined")
    if recompute_scale_factor and size is not None:
        raise ValueError("recompute_scale_factor is not meaningful with an explicit size.")
    if recompute_scale_factor:
        out_size = [int(n * s) for n, s in zip(spatial, scales)]
        scales = None
    if antialias and not (mode in ("bilinear", "bicubic", "lanczos") and ndim == 4):
        raise ValueError("Anti-alias option is restricted to bilinear, bicubic, and lanczos "
                         "modes and requires a 4-D tensor as input")
    if antialias:
        raise NotImplementedError("npgrad interpolate does not support antialias=True")
    if mode == "area" and out_size is None:  # torch recomputes the size for 'area'
        out_size = [int(n * s) for n, s in zip(spatial, scales)]
    if mode == "area" and ndim in (3, 4):
        if ndim == 4:
            _AREA_CHECK[2](input, out_size)
        else:
            _AREA_CHECK[1](input, out_size)
        not_implemented_for("adaptive_avg_pool2d", input._data.dtype, "biu")
        from .conv import adaptive_avg_pool2d
        from .shape import squeeze, unsqueeze

        if ndim == 4:
            return adaptive_avg_pool2d(input, tuple(out_size))
        return squeeze(adaptive_avg_pool2d(unsqueeze(input, -2), (1, out_size[0])), -2)
    entry = _UPSAMPLE.get((mode, dim))
    if entry is None:
        wants = {"linear": 3, "bilinear": 4, "trilinear": 5}
        if mode in wants and ndim in (3, 4, 5):
            raise NotImplementedError(f"Got {ndim}D input, but {mode} mode needs {wants[mode]}D "
                                      "input")
        if mode in ("nearest", "nearest-exact", "bicubic", "area", "trilinear") and ndim == 5:
            raise NotImplementedError(f"npgrad interpolate does not support mode '{mode}' for "
                                      f"{ndim}D input")
        raise NotImplementedError(
            "Input Error: Only 3D, 4D and 5D input Tensors supported"
            f" (got {ndim}D) for the modes: nearest | linear | bilinear | bicubic | trilinear "
            f"| lanczos | area | nearest-exact (got {mode})")
    corners = () if mode in ("nearest", "nearest-exact") else (align_corners,)
    _upsample_checker(mode, dim)(input, out_size, *corners, scales)
    out_size = None if out_size is None else [int(v) for v in out_size]
    scales = None if scales is None else [float(v) for v in scales]
    if out_size is None:
        products = [n * s for n, s in zip(spatial, scales)]
        if any(not math.isfinite(p) or p >= 2 ** 63 for p in products):
            # torch's cast of the floored size (an infinite or NaN scale too)
            raise RuntimeError("value cannot be converted to type int64_t without overflow")
        out_size = [int(math.floor(p)) for p in products]
    if any(o <= 0 for o in out_size) or any(n <= 0 for n in spatial):
        raise RuntimeError(f"Input and output sizes should be greater than 0, but got input "
                           f"({', '.join(map(str, spatial))}) and output "
                           f"({', '.join(map(str, out_size))})")
    kernel, refused = _UPSAMPLE_KERNELS[mode, dim]
    not_implemented_for(kernel, input._data.dtype, refused)
    # the output's sizes, checked as torch's allocator does (a huge size is its RuntimeError)
    check_new_sizes(tuple(input._data.shape[:2]) + tuple(out_size), input._data.dtype)
    scale_args = tuple(scales) if scales is not None else (None,) * dim
    return entry((input,), (tuple(out_size), *(bool(c) for c in corners), *scale_args))  # type: ignore[no-any-return]


# -- constant padding ------------------------------------------------------------------------

def _pad_crop(a: np.ndarray, pad: tuple, value: float) -> np.ndarray:
    """Pad (positive widths, with ``value``) or crop (negative widths) the last dims."""
    n = len(pad) // 2
    crop = [slice(None)] * a.ndim
    widths = [(0, 0)] * a.ndim
    for i in range(n):
        dim = a.ndim - 1 - i
        lo, hi = pad[2 * i], pad[2 * i + 1]
        crop[dim] = slice(max(-lo, 0), a.shape[dim] - max(-hi, 0))
        widths[dim] = (max(lo, 0), max(hi, 0))
    a = a[tuple(crop)]
    if any(w != (0, 0) for w in widths):
        a = np.pad(a, widths, constant_values=value)
    return np.ascontiguousarray(a)


def _negated(pad: tuple) -> tuple:
    return tuple(-v for v in pad)


# its backward is the crop by the negated widths, itself a constant pad, whose backward pads
CONSTANT_PAD_ND = General(
    "constant_pad_nd(Tensor input, SymIntArrayRef pad, Scalar value=0)",
    grad_fn="ConstantPadNdBackward0", forward=_pad_crop, params=("pad", "value"), keeps=("pad",),
    derivatives={"self": lambda grad, pad: CONSTANT_PAD_ND((grad,), (_negated(pad), 0))},
    tangent=lambda self_t, pad: CONSTANT_PAD_ND((self_t,), (pad, 0)))


def constant_pad_nd(input: Tensor, pad: Any, value: float = 0.0) -> Tensor:
    """``F.pad(mode='constant')``: widths (left, right, top, bottom, ...) from the last dim;
    negative widths crop (grad_fn ``ConstantPadNdBackward0``)."""
    x = input._data
    pad = tuple(int(v) for v in pad)
    if len(pad) % 2:
        raise RuntimeError("Padding length must be divisible by 2")
    if len(pad) > 2 * x.ndim:
        raise RuntimeError(f"Padding length should be less than or equal to two times the input "
                           f"dimension but got padding length {len(pad)} and input of dimension "
                           f"{x.ndim}")
    for i in range(len(pad) // 2):
        if x.shape[x.ndim - 1 - i] + min(pad[2 * i], 0) + min(pad[2 * i + 1], 0) < 0:
            raise RuntimeError("narrow(): length must be non-negative.")
    out_shape = list(x.shape)
    for i in reversed(range(len(pad) // 2)):  # leading padded dim first, as torch checks
        dim = x.ndim - 1 - i
        out_shape[dim] = wrap_int64(x.shape[dim] + pad[2 * i] + pad[2 * i + 1])
        if out_shape[dim] < 0:  # only a wrapped int64 sum gets here
            raise RuntimeError(f"The input size {x.shape[dim]}, plus negative padding "
                               f"{pad[2 * i]} and {pad[2 * i + 1]} resulted in a negative output "
                               f"size, which is invalid. Check dimension {dim} of your input.")
    if x.dtype == np.bool_:
        value = bool(value)  # torch: any nonzero fill is True (0.5 too, which int() drops)
    elif value != 0 and x.dtype.kind not in "fc" and not float(value).is_integer():
        value = int(value)
    out = guarded(tuple(out_shape), x.dtype, lambda: _pad_crop(x, pad, value))
    return CONSTANT_PAD_ND.record((input,), out, (pad, value))  # type: ignore[no-any-return]


# -- reflect / replicate padding -------------------------------------------------------------

def _pad_axes(mode: str, shape: tuple, padding: tuple) -> list:
    """The gathers of a reflect / replicate pad (torch's ``padding``: the last dim's widths
    first) of an input of ``shape``, one per padded dim, leading dim first."""
    nd = len(padding) // 2
    axes = []
    for i in range(nd):
        lo, hi = padding[2 * (nd - 1 - i)], padding[2 * (nd - 1 - i) + 1]
        n = shape[len(shape) - nd + i]
        j = np.arange(-lo, n + hi)
        if mode == "reflect":
            j = np.abs(j)
            j = np.where(j >= n, 2 * (n - 1) - j, j)
        else:
            j = np.clip(j, 0, n - 1)
        axes.append(j)
    return axes


def _pad_entries(op: str, name: str, mode: str, dims: int) -> tuple:
    """The entries of ``op`` (``reflection_pad2d``: grad_fn ``<name>Backward0``) and of its
    backward ``<op>_backward`` (``<name>BackwardBackward0``), Note [A linear op and its backward
    as two entries]: torch's pad saves its input, its backward takes it (for its sizes)."""
    widths = f"SymIntArrayRef[{2 * dims}] padding"

    def backward(g: np.ndarray, x: np.ndarray, padding: tuple) -> np.ndarray:
        return _apply_adjoint(g, _pad_axes(mode, x.shape, padding), x.shape[-dims:])

    pad = General(
        f"{op}(Tensor input, {widths}, *, Tensor out=None)", grad_fn=f"{name}Backward0",
        forward=lambda x, padding: _apply_axes(x, _pad_axes(mode, x.shape, padding)),
        params=("padding",), keeps=("padding",), saves=("self",),
        derivatives={"self": lambda grad, self, padding: pad_back((grad, self), (padding,))},
        tangent=lambda self_t, padding: pad((self_t,), (padding,)))
    pad_back = General(
        f"{op}_backward(Tensor grad_output, Tensor input, {widths}, *, "
        "Tensor grad_input=None)", grad_fn=f"{name}BackwardBackward0", forward=backward,
        inputs=("grad_output", "self"), params=("padding",), keeps=("padding",),
        derivatives={"grad_output": lambda grad, padding: pad((grad,), (padding,))},
        # linear in the gradient alone: no tangent unless it has one (torch's: none)
        tangent=lambda grad_output_t, grad_output, self, padding: pad_back(
            (grad_output_t, self), (padding,)) if has_tangent(grad_output) else None)
    return pad, pad_back


REFLECTION_PAD1D, REFLECTION_PAD1D_BACKWARD = _pad_entries(
    "reflection_pad1d", "ReflectionPad1D", "reflect", 1)
REFLECTION_PAD2D, REFLECTION_PAD2D_BACKWARD = _pad_entries(
    "reflection_pad2d", "ReflectionPad2D", "reflect", 2)
REFLECTION_PAD3D, REFLECTION_PAD3D_BACKWARD = _pad_entries(
    "reflection_pad3d", "ReflectionPad3D", "reflect", 3)
REPLICATION_PAD1D, REPLICATION_PAD1D_BACKWARD = _pad_entries(
    "replication_pad1d", "ReplicationPad1D", "replicate", 1)
REPLICATION_PAD2D, REPLICATION_PAD2D_BACKWARD = _pad_entries(
    "replication_pad2d", "ReplicationPad2D", "replicate", 2)
REPLICATION_PAD3D, REPLICATION_PAD3D_BACKWARD = _pad_entries(
    "replication_pad3d", "ReplicationPad3D", "replicate", 3)

_PADS = {("reflect", 1): REFLECTION_PAD1D, ("reflect", 2): REFLECTION_PAD2D,
         ("reflect", 3): REFLECTION_PAD3D, ("replicate", 1): REPLICATION_PAD1D,
         ("replicate", 2): REPLICATION_PAD2D, ("replicate", 3): REPLICATION_PAD3D}


def pad_nonconstant(input: Tensor, pad: Any, mode: str) -> Tensor:
    """``F.pad`` with mode 'reflect' or 'replicate' over the last one, two or three dims."""
    x = input._data
    npad = len(pad)
    _check_nonconstant(x, npad, mode)
    nd = npad // 2
    # torch's check_valid_input: no empty dim but the batch
    batched = x.ndim == nd + 2
    if 0 in (x.shape[1:] if batched else x.shape):
        raise RuntimeError(f"Expected {nd + 1}D or {nd + 2}D (batch mode) tensor with possibly 0 "
                           "batch size and other non-zero dimensions for input, but got: "
                           f"[{', '.join(map(str, x.shape))}]")
    for i in range(nd):
        lo, hi = int(pad[2 * (nd - 1 - i)]), int(pad[2 * (nd - 1 - i) + 1])
        n = x.shape[x.ndim - nd + i]
        if mode == "reflect" and (lo >= n or hi >= n):
            raise RuntimeError(f"Argument #4: Padding size should be less than the "
                               f"corresponding input dimension, but got: padding ({lo}, {hi}) "
                               f"at dimension {x.ndim - nd + i} of input {_size_str(x.shape)}")
    kernel = "reflection" if mode == "reflect" else "replication"
    not_implemented_for(f"{kernel}_pad{nd}d", x.dtype, "b")
    padding = tuple(int(v) for v in pad)
    return _PADS[mode, nd]((input,), (padding,))  # type: ignore[no-any-return]


def _check_nonconstant(x: np.ndarray, npad: int, mode: str) -> None:
    if npad % 2:
        raise RuntimeError("Padding length must be divisible by 2")
    if (npad, x.ndim) not in ((2, 2), (2, 3), (4, 3), (4, 4), (6, 4), (6, 5)):
        raise NotImplementedError(
            f"Padding size {npad} is not supported for {x.ndim}D input tensor.\n"
            "Supported combinations for non-constant padding:\n"
            "  - 2D or 3D input: padding size = 2 (pads last dimension)\n"
            "  - 3D or 4D input: padding size = 4 (pads last 2 dimensions)\n"
            "  - 4D or 5D input: padding size = 6 (pads last 3 dimensions)")


def pad_circular(input: Tensor, pad: Any) -> Tensor:
    """``F.pad(mode='circular')``, built as torch builds it: the input copied into an empty
    tensor, then the wrapped borders copied from it, so the grad_fn is ``CopySlices``."""
    from .._creation import empty

    x = input._data
    pad = tuple(int(v) for v in pad)
    _check_nonconstant(x, len(pad), "circular")
    nd = len(pad) // 2
    dims = [x.ndim - 1 - i for i in range(nd)]  # dims[i] is padded by pad[2i], pad[2i+1]
    out_shape = list(x.shape)
    for i, dim in enumerate(dims):
        lo, hi = pad[2 * i], pad[2 * i + 1]
        if lo > x.shape[dim] or hi > x.shape[dim]:
            raise RuntimeError("Padding value causes wrapping around more than once.")
        out_shape[dim] = x.shape[dim] + lo + hi
        if out_shape[dim] < 0:
            raise RuntimeError("Negative padding value is resulting in an empty dimension.")
    for i, dim in enumerate(dims):  # a negative width can make a border copy overlap itself
        lo, hi = pad[2 * i], pad[2 * i + 1]
        size = out_shape[dim]
        if (lo > 0 and size - lo - max(hi, 0) < lo) or (hi > 0 and max(lo, 0) + hi > size - hi):
            raise RuntimeError("unsupported operation: some elements of the input tensor and "
                               "the written-to tensor refer to a single memory location. Please "
                               "clone() the tensor before performing the operation.")
    out = empty(tuple(out_shape), dtype=input.dtype)
    src, dst = input, out
    for i, dim in enumerate(dims):
        lo, hi = pad[2 * i], pad[2 * i + 1]
        keep = x.shape[dim] - max(-lo, 0) - max(-hi, 0)
        src = src.narrow(dim, max(-lo, 0), keep)
        dst = dst.narrow(dim, max(lo, 0), keep)
    dst.copy_(src)
    for i, dim in enumerate(dims):
        lo, hi = pad[2 * i], pad[2 * i + 1]
        size = out_shape[dim]
        if lo > 0:
            out.narrow(dim, 0, lo).copy_(out.narrow(dim, size - lo - max(hi, 0), lo))
        if hi > 0:
            out.narrow(dim, size - hi, hi).copy_(out.narrow(dim, max(lo, 0), hi))
    return out


# -- pixel shuffle ----------------------------------------------------------------------------

def _shuffle(x: np.ndarray, r: int) -> np.ndarray:
    *lead, c, h, w = x.shape
    y = x.reshape(tuple(lead) + (c // (r * r), r, r, h, w))
    k = len(lead)
    y = y.transpose(tuple(range(k)) + (k, k + 3, k + 1, k + 4, k + 2))
    return y.reshape(tuple(lead) + (c // (r * r), h * r, w * r))


def _unshuffle(x: np.ndarray, r: int) -> np.ndarray:
    if x.size == 0:  # torch returns an empty input's copy, its shape unchanged
        return x.copy()
    *lead, c, h, w = x.shape
    y = x.reshape(tuple(lead) + (c, h // r, r, w // r, r))
    k = len(lead)
    y = y.transpose(tuple(range(k)) + (k, k + 2, k + 4, k + 1, k + 3))
    return y.reshape(tuple(lead) + (c * r * r, h // r, w // r))


# each other's backward, as in torch
PIXEL_SHUFFLE = General(
    "pixel_shuffle(Tensor input, int64_t upscale_factor, *, Tensor out=None)",
    grad_fn="PixelShuffleBackward0",
    forward=lambda x, upscale_factor: np.ascontiguousarray(_shuffle(x, upscale_factor)),
    params=("upscale_factor",), keeps=("upscale_factor",),
    derivatives={"self": lambda grad, upscale_factor: PIXEL_UNSHUFFLE((grad,), (upscale_factor,))},
    tangent=lambda self_t, upscale_factor: PIXEL_SHUFFLE((self_t,), (upscale_factor,)))

PIXEL_UNSHUFFLE = General(
    "pixel_unshuffle(Tensor input, int64_t downscale_factor, *, Tensor out=None)",
    grad_fn="PixelUnshuffleBackward0",
    forward=lambda x, downscale_factor: np.ascontiguousarray(_unshuffle(x, downscale_factor)),
    params=("downscale_factor",), keeps=("downscale_factor",),
    derivatives={"self": lambda grad, downscale_factor: PIXEL_SHUFFLE((grad,),
                                                                       (downscale_factor,))},
    tangent=lambda self_t, downscale_factor: PIXEL_UNSHUFFLE((self_t,), (downscale_factor,)))


@signature("pixel_shuffle(Tensor input, int64_t upscale_factor, *, Tensor out=None)")
def pixel_shuffle(input: Tensor, upscale_factor: int) -> Tensor:
    """``(*, C*r*r, H, W) -> (*, C, H*r, W*r)`` (grad_fn ``PixelShuffleBackward0``)."""
    x, r = input._data, int(upscale_factor)
    if x.ndim < 3:
        raise RuntimeError(f"pixel_shuffle expects input to have at least 3 dimensions, but got "
                           f"input with {x.ndim} dimension(s)")
    if r <= 0:
        raise RuntimeError(f"pixel_shuffle expects a positive upscale_factor, but got {r}")
    if r * r > 2 ** 63 - 1:  # torch squares it in int64, checking for overflow
        raise ValueError("upscale factor is too large, (upscale_factor)^2 overflowed: "
                         f"upscale_factor={r}")
    if x.shape[-3] % (r * r):
        raise RuntimeError("pixel_shuffle expects its input's 'channel' dimension to be "
                           "divisible by the square of upscale_factor, but input.size(-3)="
                           f"{x.shape[-3]} is not divisible by {r * r}")
    return PIXEL_SHUFFLE((input,), (r,))  # type: ignore[no-any-return]


@signature("pixel_unshuffle(Tensor input, int64_t downscale_factor, *, Tensor out=None)")
def pixel_unshuffle(input: Tensor, downscale_factor: int) -> Tensor:
    """``(*, C, H*r, W*r) -> (*, C*r*r, H, W)`` (grad_fn ``PixelUnshuffleBackward0``)."""
    x, r = input._data, int(downscale_factor)
    if x.ndim < 3:
        raise RuntimeError(f"pixel_unshuffle expects input to have at least 3 dimensions, but "
                           f"got input with {x.ndim} dimension(s)")
    if r <= 0:
        raise RuntimeError(f"pixel_unshuffle expects a positive downscale_factor, but got {r}")
    for name, n in (("height", x.shape[-2]), ("width", x.shape[-1])):
        if n % r:
            axis = -2 if name == "height" else -1
            raise RuntimeError(f"pixel_unshuffle expects {name} to be divisible by "
                               f"downscale_factor, but input.size({axis})={n} is not divisible "
                               f"by {r}")
    return PIXEL_UNSHUFFLE((input,), (r,))  # type: ignore[no-any-return]


# -- unfold / fold (im2col / col2im) ----------------------------------------------------------

def _pair(v: Any) -> tuple:
    if isinstance(v, (list, tuple)):
        return (int(v[0]), int(v[0])) if len(v) == 1 else (int(v[0]), int(v[1]))
    return (int(v), int(v))


def _im2col(x: np.ndarray, k: tuple, d: tuple, p: tuple, s: tuple, out: tuple) -> np.ndarray:
    """``(N, C, H, W) -> (N, C*kh*kw, L)``."""
    win = _windows(_pad(x, p, p), k, s, d, out)  # (N, C, oh, ow, kh, kw)
    n, c = x.shape[:2]
    return np.ascontiguousarray(win.transpose(0, 1, 4, 5, 2, 3)).reshape(
        n, c * k[0] * k[1], out[0] * out[1])


def _col2im(cols: np.ndarray, size: tuple, k: tuple, d: tuple, p: tuple, s: tuple,
            out: tuple) -> np.ndarray:
    """``(N, C*kh*kw, L) -> (N, C, H, W)``, summing overlaps (the adjoint of ``_im2col``)."""
    n = cols.shape[0]
    c = cols.shape[1] // (k[0] * k[1])
    blocks = cols.reshape(n, c, k[0], k[1], out[0], out[1])
    res = np.zeros((n, c, size[0] + 2 * p[0], size[1] + 2 * p[1]), dtype=cols.dtype)
    for i in range(k[0]):
        for j in range(k[1]):
            res[:, :, i * d[0]:i * d[0] + s[0] * (out[0] - 1) + 1:s[0],
                j * d[1]:j * d[1] + s[1] * (out[1] - 1) + 1:s[1]] += blocks[:, :, i, j]
    return np.ascontiguousarray(res[:, :, p[0]:p[0] + size[0], p[1]:p[1] + size[1]])


def _blocks(size: tuple, k: tuple, d: tuple, p: tuple, s: tuple) -> tuple:
    return tuple((n + 2 * pi - di * (ki - 1) - 1) // si + 1
                 for n, ki, di, pi, si in zip(size, k, d, p, s))


def _im2col_any(x: np.ndarray, k: tuple, d: tuple, p: tuple, s: tuple) -> np.ndarray:
    """``_im2col`` of a batch, or of one sample without its batch dim (as torch takes it)."""
    out = _blocks(x.shape[-2:], k, d, p, s)
    if x.ndim == 3:
        return _im2col(x[None], k, d, p, s, out)[0]
    return _im2col(x, k, d, p, s, out)


def _col2im_any(cols: np.ndarray, size: tuple, k: tuple, d: tuple, p: tuple,
                s: tuple) -> np.ndarray:
    """``_col2im`` of a batch, or of one sample without its batch dim."""
    out = _blocks(size, k, d, p, s)
    if cols.ndim == 2:
        return _col2im(cols[None], size, k, d, p, s, out)[0]
    return _col2im(cols, size, k, d, p, s, out)


# each other's backward, as in torch; im2col keeps its input's spatial sizes as torch names them
IM2COL = General(
    "im2col(Tensor input, IntArrayRef[2] kernel_size, IntArrayRef[2] dilation, "
    "IntArrayRef[2] padding, IntArrayRef[2] stride, *, Tensor out=None)",
    grad_fn="Im2ColBackward0",
    forward=lambda x, kernel_size, dilation, padding, stride, height, width: _im2col_any(
        x, kernel_size, dilation, padding, stride),
    params=("kernel_size", "dilation", "padding", "stride", "self_sym_argsize_minus_2",
            "self_sym_argsize_minus_1"),
    keeps=("kernel_size", "dilation", "padding", "stride", "self_sym_argsize_minus_2",
           "self_sym_argsize_minus_1"),
    derivatives={"self": lambda grad, kernel_size, dilation, padding, stride,
                 self_sym_argsize_minus_2, self_sym_argsize_minus_1: COL2IM(
                     (grad,), ((self_sym_argsize_minus_2, self_sym_argsize_minus_1),
                               kernel_size, dilation, padding, stride))},
    tangent=lambda self_t, kernel_size, dilation, padding, stride, self_sym_argsize_minus_2,
    self_sym_argsize_minus_1: IM2COL((self_t,), (kernel_size, dilation, padding, stride,
                                                 self_sym_argsize_minus_2,
                                                 self_sym_argsize_minus_1)))

COL2IM = General(
    "col2im(Tensor input, SymIntArrayRef[2] output_size, IntArrayRef[2] kernel_size, "
    "IntArrayRef[2] dilation, IntArrayRef[2] padding, IntArrayRef[2] stride, *, "
    "Tensor out=None)", grad_fn="Col2ImBackward0", forward=_col2im_any,
    params=("output_size", "kernel_size", "dilation", "padding", "stride"),
    keeps=("kernel_size", "dilation", "padding", "stride"),
    derivatives={"self": lambda grad, kernel_size, dilation, padding, stride: IM2COL(
        (grad,), (kernel_size, dilation, padding, stride, grad.shape[-2], grad.shape[-1]))},
    tangent=lambda self_t, output_size, kernel_size, dilation, padding, stride: COL2IM(
        (self_t,), (output_size, kernel_size, dilation, padding, stride)))


def unfold(input: Tensor, kernel_size: Any, dilation: Any = 1, padding: Any = 0,
           stride: Any = 1) -> Tensor:
    """Sliding blocks as columns, ``(N, C, H, W) -> (N, C*kh*kw, L)`` (``Im2ColBackward0``)."""
    k, d, p, s = _pair(kernel_size), _pair(dilation), _pair(padding), _pair(stride)
    x = input._data
    if x.ndim not in (3, 4):
        raise NotImplementedError(f"Input Error: Only 3D or 4D input Tensors are supported "
                                  f"(got {x.ndim}D)")
    out = _blocks(x.shape[-2:], k, d, p, s)
    if any(o < 1 for o in out):
        raise RuntimeError(
            f"Given input with spatial size ({x.shape[-2]}, {x.shape[-1]}), "
            f"kernel_size=({k[0]}, {k[1]}), dilation=({d[0]}, {d[1]}), padding=({p[0]}, "
            f"{p[1]}), calculated shape of the array of sliding blocks as ({out[0]}, {out[1]}), "
            "but its components must be at least one.")

    return IM2COL((input,), (k, d, p, s, x.shape[-2], x.shape[-1]))  # type: ignore[no-any-return]


def fold(input: Tensor, output_size: Any, kernel_size: Any, dilation: Any = 1, padding: Any = 0,
         stride: Any = 1) -> Tensor:
    """Columns back to an image, summing overlaps (grad_fn ``Col2ImBackward0``)."""
    size = _pair(output_size)
    k, d, p, s = _pair(kernel_size), _pair(dilation), _pair(padding), _pair(stride)
    x = input._data
    if x.ndim not in (2, 3):
        raise NotImplementedError(f"Input Error: Only unbatched (2D) or batched (3D) input "
                                  f"Tensors are supported (got {x.ndim}D)")
    out = _blocks(size, k, d, p, s)
    if x.shape[-2] % (k[0] * k[1]):
        raise RuntimeError(
            f"Expected size of input's dimension {x.ndim - 2} to be divisible by the product of "
            f"kernel_size, but got input.size({x.ndim - 2})={x.shape[-2]} and "
            f"kernel_size=({k[0]}, {k[1]}).")
    if x.shape[-1] != out[0] * out[1]:
        raise RuntimeError(
            f"Given output_size=({size[0]}, {size[1]}), kernel_size=({k[0]}, {k[1]}), "
            f"dilation=({d[0]}, {d[1]}), padding=({p[0]}, {p[1]}), stride=({s[0]}, {s[1]}), "
            f"expected size of input's dimension 2 to match the calculated number of sliding "
            f"blocks {out[0]} * {out[1]} = {out[0] * out[1]}, but got input.size(2)="
            f"{x.shape[-1]}.")

    return COL2IM((input,), (size, k, d, p, s))  # type: ignore[no-any-return]


__all__ = ["constant_pad_nd", "interpolate", "pad_circular", "pad_nonconstant", "pixel_shuffle",
           "pixel_unshuffle", "unfold", "fold"]
