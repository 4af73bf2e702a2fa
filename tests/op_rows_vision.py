"""Op-table rows: vision layers (transposed convolution, resampling, pooling) (see tests/op_table.py for what a row is and which checks it gets)."""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from op_table import OpRow, _F


def V(name: str, fn: Callable, inputs: tuple, grad_fn: str | None = None, **kw: Any) -> OpRow:
    return OpRow(name, fn, inputs, "vision", grad_fn=grad_fn, **kw)


_IMG = (2, 2, 3, 4)
_SEQ = (2, 2, 5)
# distinct values: max pooling is differentiable away from ties
_DISTINCT = np.random.default_rng(7).permutation(40).reshape(2, 2, 2, 5) / 7.0


def _interp(mode: str, **kw: Any) -> Callable:
    return lambda m, x: _F(m).interpolate(x, mode=mode, **kw)


ROWS: list[OpRow] = [
    # convolution (npgrad/_ops/conv.py)
    V("conv1d_stride_groups", lambda m, x, w, b: _F(m).conv1d(x, w, b, stride=2, padding=1,
                                                              groups=2),
      ((2, 4, 5), (2, 2, 3), (2,)), "ConvolutionBackward0"),
    V("conv2d_dilation", lambda m, x, w: _F(m).conv2d(x, w, padding=(1, 0), dilation=(1, 2)),
      ((1, 2, 4, 5), (3, 2, 2, 2)), "ConvolutionBackward0"),
    # transposed convolution (torch: ConvolutionBackward0 with transposed=True)
    V("conv_transpose1d", lambda m, x, w, b: _F(m).conv_transpose1d(x, w, b, stride=2),
      ((2, 2, 3), (2, 3, 2), (3,)), "ConvolutionBackward0"),
    V("conv_transpose1d_groups", lambda m, x, w: _F(m).conv_transpose1d(
        x, w, stride=2, padding=1, output_padding=1, groups=2, dilation=2),
      ((1, 4, 3), (4, 1, 3)), "ConvolutionBackward0"),
    V("conv_transpose2d", lambda m, x, w, b: _F(m).conv_transpose2d(x, w, b, stride=(2, 1),
                                                                    padding=1),
      ((1, 2, 3, 3), (2, 2, 3, 2), (2,)), "ConvolutionBackward0"),
    V("conv_transpose2d_output_padding", lambda m, x, w: _F(m).conv_transpose2d(
        x, w, stride=2, output_padding=1, dilation=1),
      ((1, 2, 2, 2), (2, 1, 2, 2)), "ConvolutionBackward0"),
    V("conv_transpose2d_unbatched_input_only", lambda m, x, w: _F(m).conv_transpose2d(x, w),
      ((2, 2, 2), (2, 1, 2, 2)), "SqueezeBackward1", requires_grad=(True, False)),
    # interpolation
    V("interpolate_nearest1d", _interp("nearest", scale_factor=2), (_SEQ,),
      "UpsampleNearest1DBackward0"),
    V("interpolate_nearest2d_size", _interp("nearest", size=(4, 7)), (_IMG,),
      "UpsampleNearest2DBackward0"),
    V("interpolate_nearest2d_down", _interp("nearest", scale_factor=0.6), ((1, 1, 5, 5),),
      "UpsampleNearest2DBackward0"),
    V("interpolate_nearest_exact1d", _interp("nearest-exact", size=7), (_SEQ,),
      "UpsampleNearestExact1DBackward0"),
    V("interpolate_nearest_exact2d", _interp("nearest-exact", scale_factor=(1.5, 0.75)),
      (_IMG,), "UpsampleNearestExact2DBackward0"),
    V("interpolate_linear", _interp("linear", scale_factor=1.7), (_SEQ,),
      "UpsampleLinear1DBackward0"),
    V("interpolate_linear_align", _interp("linear", size=8, align_corners=True), (_SEQ,),
      "UpsampleLinear1DBackward0"),
    V("interpolate_bilinear", _interp("bilinear", scale_factor=2), (_IMG,),
      "UpsampleBilinear2DBackward0"),
    V("interpolate_bilinear_align_size", _interp("bilinear", size=(2, 6), align_corners=True),
      (_IMG,), "UpsampleBilinear2DBackward0"),
    V("interpolate_bilinear_recompute", _interp("bilinear", scale_factor=(1.3, 0.7),
                                                 recompute_scale_factor=True),
      (_IMG,), "UpsampleBilinear2DBackward0"),
    V("interpolate_bicubic", _interp("bicubic", scale_factor=1.5), (_IMG,),
      "UpsampleBicubic2DBackward0"),
    V("interpolate_bicubic_align", _interp("bicubic", size=(5, 3), align_corners=True),
      (_IMG,), "UpsampleBicubic2DBackward0"),
    V("interpolate_area2d", _interp("area", size=(2, 3)), (_IMG,), "AdaptiveAvgPool2DBackward0"),
    V("interpolate_area1d", _interp("area", scale_factor=0.6), (_SEQ,), "SqueezeBackward1"),
    # pooling
    V("avg_pool1d", lambda m, x: _F(m).avg_pool1d(x, 2), (_SEQ,), "SqueezeBackward1"),
    V("avg_pool1d_pad_ceil", lambda m, x: _F(m).avg_pool1d(
        x, 3, 2, padding=1, ceil_mode=True, count_include_pad=False), (_SEQ,),
      "SqueezeBackward1"),
    V("adaptive_avg_pool1d", lambda m, x: _F(m).adaptive_avg_pool1d(x, 3), (_SEQ,),
      "SqueezeBackward1"),
    V("adaptive_max_pool1d", lambda m, x: _F(m).adaptive_max_pool1d(x, 3),
      (_DISTINCT.reshape(2, 2, 10),), "SqueezeBackward1"),
    V("adaptive_max_pool2d", lambda m, x: _F(m).adaptive_max_pool2d(x, (2, 3)), (_DISTINCT,),
      "AdaptiveMaxPool2DBackward0"),
    V("adaptive_max_pool2d_indices", lambda m, x: _F(m).adaptive_max_pool2d(x, 2, True)[0],
      (_DISTINCT,), "AdaptiveMaxPool2DBackward0"),
    V("lp_pool2d", lambda m, x: _F(m).lp_pool2d(x, 2, 2), (_IMG,), "PowBackward0",
      domain="positive"),
    V("lp_pool1d", lambda m, x: _F(m).lp_pool1d(x, 3, 2, stride=1), (_SEQ,), "PowBackward0",
      domain="positive"),
    # rearranging pixels
    V("pixel_shuffle", lambda m, x: _F(m).pixel_shuffle(x, 2), ((1, 8, 2, 3),),
      "PixelShuffleBackward0"),
    V("pixel_unshuffle", lambda m, x: _F(m).pixel_unshuffle(x, 2), ((2, 4, 6),),
      "PixelUnshuffleBackward0"),
    V("im2col_unfold", lambda m, x: _F(m).unfold(x, (2, 3), dilation=(1, 2), padding=1,
                                          stride=(2, 1)), ((1, 2, 4, 5),), "Im2ColBackward0"),
    V("im2col_unfold_unbatched", lambda m, x: _F(m).unfold(x, 2), ((2, 3, 3),),
      "Im2ColBackward0"),
    V("col2im_fold_unbatched", lambda m, x: _F(m).fold(x, 3, 2), ((8, 4),), "Col2ImBackward0"),
    V("col2im_fold", lambda m, x: _F(m).fold(x, (3, 4), 2), ((1, 8, 6),), "Col2ImBackward0"),
    V("col2im_fold_stride_pad", lambda m, x: _F(m).fold(x, (4, 5), (2, 2), padding=1, stride=2),
      ((2, 4, 9),), "Col2ImBackward0"),
    # padding
    V("pad_reflect1d", lambda m, x: _F(m).pad(x, (2, 1), mode="reflect"), (_SEQ,),
      "ReflectionPad1DBackward0"),
    V("pad_reflect2d", lambda m, x: _F(m).pad(x, (1, 3, 2, 0), mode="reflect"), (_IMG,),
      "ReflectionPad2DBackward0"),
    V("pad_replicate1d", lambda m, x: _F(m).pad(x, (0, 3), mode="replicate"), ((3, 4),),
      "ReplicationPad1DBackward0"),
    V("pad_replicate2d", lambda m, x: _F(m).pad(x, (2, 1, 1, 3), mode="replicate"), (_IMG,),
      "ReplicationPad2DBackward0"),
    V("pad_reflect3d", lambda m, x: _F(m).pad(x, (1, 0, 1, 1, 0, 1), mode="reflect"),
      ((1, 2, 2, 3, 2),), "ReflectionPad3DBackward0"),
    V("pad_replicate3d", lambda m, x: _F(m).pad(x, (0, 2, 1, 0, 1, 1), mode="replicate"),
      ((2, 2, 3, 2),), "ReplicationPad3DBackward0"),
    V("pad_constant", lambda m, x: _F(m).pad(x, (1, 2, 0, 1), value=1.5), (_IMG,),
      "ConstantPadNdBackward0"),
    V("pad_constant_crop", lambda m, x: _F(m).pad(x, (-1, 2, 1, -1)), (_IMG,),
      "ConstantPadNdBackward0"),
    # grad_fn CopySlices (name() "torch::autograd::CopySlices"): checked against torch's
    V("pad_circular1d", lambda m, x: _F(m).pad(x, (2, 1), mode="circular"), (_SEQ,)),
    V("pad_circular2d", lambda m, x: _F(m).pad(x, (1, 3, 2, 0), mode="circular"), (_IMG,)),
    # bilinear
    V("bilinear", lambda m, x1, x2, w, b: _F(m).bilinear(x1, x2, w, b),
      ((3, 2), (3, 4), (5, 2, 4), (5,)), "AddBackward0"),
    V("bilinear_batched_nobias", lambda m, x1, x2, w: _F(m).bilinear(x1, x2, w),
      ((2, 3, 2), (2, 3, 3), (2, 2, 3)), "ViewBackward0"),
]
