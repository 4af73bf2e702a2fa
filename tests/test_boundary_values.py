"""Issue 12, the values at the op boundary: arguments of the right types that torch still refuses
(a rank, a size, a dtype, a dim out of range) must raise torch's exception and text, checked in
torch's order before NumPy runs, and edge values must give torch's results.

Each row gives a call and torch 2.13's outcome written out by hand: the exception type and text,
or the result's dtype and shape (and values where they matter).  ``test_npgrad_gives_expected``
checks npgrad against the row without torch; ``test_expected_is_torch`` checks the row against
real torch (skipped without it), so the written expectations cannot drift from torch.
"""
from __future__ import annotations

import warnings
from typing import Any, Callable

import numpy as np
import pytest

import npgrad


def O(m: Any, *shape: int, dtype: str = "float32") -> Any:  # noqa: E743 - a short table helper
    """``ones(shape)`` in ``m`` (npgrad or torch) of the named dtype."""
    return m.ones(shape, dtype=getattr(m, dtype))


def _F(m: Any) -> Any:
    return m.nn.functional


def _setitem(x: Any, index: Any, value: Any) -> Any:
    x = x.clone()
    x[index] = value
    return x


Call = Callable[[Any], Any]

# (id, call, expected): expected is (exception type name, message) or ("ok", dtype, shape[, values])
ERR = "err"
ROWS: list[tuple[str, Call, tuple]] = [
    # -- baddbmm: input expanded first (sizes read with size()), then its dtype, then the batches
    ("baddbmm_0d_batch1", lambda m: m.baddbmm(O(m, 2, 3, 5), m.tensor(1.), O(m, 2, 4, 5)),
     ("IndexError", "Dimension specified as 0 but tensor has no dimensions")),
    ("baddbmm_2d_batch2", lambda m: m.baddbmm(O(m, 2, 3, 5), O(m, 2, 3, 4), O(m, 4, 5)),
     ("IndexError", "Dimension out of range (expected to be in range of [-2, 1], but got 2)")),
    ("baddbmm_2d_batch1", lambda m: m.baddbmm(O(m, 2, 3, 5), O(m, 3, 4), O(m, 2, 4, 5)),
     ("RuntimeError", "The expanded size of the tensor (4) must match the existing size (3) at "
      "non-singleton dimension 1.  Target sizes: [3, 4, 5].  Tensor sizes: [2, 3, 5]")),
    ("baddbmm_2d_batch1_broadcast_input", lambda m: m.baddbmm(O(m, 5), O(m, 3, 4), O(m, 2, 4, 5)),
     ("RuntimeError", "batch1 must be a 3D tensor")),
    ("baddbmm_input_long", lambda m: m.baddbmm(O(m, 2, 3, 5, dtype="int64"), O(m, 2, 3, 4),
                                                O(m, 2, 4, 5)),
     ("RuntimeError", "Input dtypes must be the same, got: input long int, batch1: float, "
      "batch2: float")),
    ("baddbmm_batch1_half", lambda m: m.baddbmm(O(m, 2, 3, 5), O(m, 2, 3, 4, dtype="float16"),
                                                 O(m, 2, 4, 5)),
     ("RuntimeError", "Input dtypes must be the same, got: input float, batch1: c10::Half, "
      "batch2: float")),
    ("baddbmm_batch2_double", lambda m: m.baddbmm(O(m, 2, 3, 5), O(m, 2, 3, 4),
                                                   O(m, 2, 4, 5, dtype="float64")),
     ("RuntimeError", "expected scalar type Float but found Double")),
    ("baddbmm_bool", lambda m: m.baddbmm(O(m, 2, 3, 5, dtype="bool"), O(m, 2, 3, 4, dtype="bool"),
                                          O(m, 2, 4, 5, dtype="bool")),
     ("NotImplementedError", "\"baddbmm\" not implemented for 'Bool'")),
    ("baddbmm_long", lambda m: m.baddbmm(O(m, 2, 3, 5, dtype="int64"), O(m, 2, 3, 4, dtype="int64"),
                                          O(m, 2, 4, 5, dtype="int64")),
     ("ok", "int64", (2, 3, 5), np.full((2, 3, 5), 5))),
    # -- addbmm
    ("addbmm_0d_batch1", lambda m: m.addbmm(O(m, 3, 5), m.tensor(1.), O(m, 2, 4, 5)),
     ("IndexError", "Dimension specified as 1 but tensor has no dimensions")),
    ("addbmm_0d_batch1_recorded", lambda m: m.addbmm(O(m, 3, 5).requires_grad_(), m.tensor(1.),
                                                      O(m, 2, 4, 5)),
     ("IndexError", "Dimension specified as 0 but tensor has no dimensions")),
    ("addbmm_4d_batch2", lambda m: m.addbmm(O(m, 3, 5), O(m, 2, 3, 4), O(m, 2, 4, 5, 1)),
     ("RuntimeError", "batch2 must be a 3D tensor")),
    ("addbmm_batches", lambda m: m.addbmm(O(m, 3, 5), O(m, 0, 3, 4), O(m, 2, 4, 5)),
     ("RuntimeError", "batch1 and batch2 must have same number of batches, got 0 and 2")),
    ("addbmm_sizes", lambda m: m.addbmm(O(m, 3, 5), O(m, 2, 3, 5), O(m, 2, 4, 5)),
     ("RuntimeError", "Incompatible matrix sizes for bmm (3x5 and 4x5)")),
    ("addbmm_input_3d", lambda m: m.addbmm(O(m, 1, 3, 5), O(m, 2, 3, 4), O(m, 2, 4, 5)),
     ("RuntimeError", "expand(torch.FloatTensor{[1, 3, 5]}, size=[3, 5]): the number of sizes "
      "provided (2) must be greater or equal to the number of dimensions in the tensor (3)")),
    ("addbmm_input_long", lambda m: m.addbmm(O(m, 3, 5, dtype="int64"), O(m, 2, 3, 4),
                                              O(m, 2, 4, 5)),
     ("RuntimeError", "self and mat2 must have the same dtype, but got Long and Float")),
    ("addbmm_batch1_long", lambda m: m.addbmm(O(m, 3, 5), O(m, 2, 3, 4, dtype="int64"),
                                               O(m, 2, 4, 5)),
     ("RuntimeError", "mat1 and mat2 must have the same dtype, but got Long and Float")),
    ("addbmm_bool", lambda m: m.addbmm(O(m, 3, 5, dtype="bool"), O(m, 2, 3, 4, dtype="bool"),
                                        O(m, 2, 4, 5, dtype="bool")),
     ("NotImplementedError", "\"addmm_impl_cpu_\" not implemented for 'Bool'")),
    ("addbmm_no_batches", lambda m: m.addbmm(O(m, 3, 5), O(m, 0, 3, 4), O(m, 0, 4, 5)),
     ("ok", "float32", (3, 5), np.ones((3, 5)))),
    # -- addmm: dtypes before ranks
    ("addmm_mat2_long_and_1d_mat1", lambda m: m.addmm(O(m, 2, 2), O(m, 3),
                                                       O(m, 3, 2, dtype="int64")),
     ("RuntimeError", "self and mat2 must have the same dtype, but got Float and Long")),
    ("addmm_mat1_long", lambda m: m.addmm(O(m, 2, 2), O(m, 2, 3, dtype="int64"), O(m, 3, 2)),
     ("RuntimeError", "mat1 and mat2 must have the same dtype, but got Long and Float")),
    # -- addmv: ranks, sizes, dtypes, kernel
    ("addmv_0d_mat", lambda m: m.addmv(O(m, 2), m.tensor(1.), O(m, 3)),
     ("RuntimeError", "vector + matrix @ vector expected, got 1, 0, 1")),
    ("addmv_2d_input", lambda m: m.addmv(O(m, 2, 2), O(m, 2, 3), O(m, 3)),
     ("RuntimeError", "vector + matrix @ vector expected, got 2, 2, 1")),
    ("addmv_input_size", lambda m: m.addmv(O(m, 3), O(m, 2, 3), O(m, 3)),
     ("RuntimeError", "size mismatch, got input (3), mat (2x3), vec (3)")),
    ("addmv_vec_long", lambda m: m.addmv(O(m, 2), O(m, 2, 3), O(m, 3, dtype="int64")),
     ("RuntimeError", "addmv input tensors must have the same dtype, but got Float, Float, and "
      "Long")),
    ("addmv_input_bool", lambda m: m.addmv(O(m, 2, dtype="bool"), O(m, 2, 3), O(m, 3)),
     ("RuntimeError", "addmv input tensors must have the same dtype, but got Bool, Float, and "
      "Float")),
    ("addmv_bool", lambda m: m.addmv(O(m, 2, dtype="bool"), O(m, 2, 3, dtype="bool"),
                                      O(m, 3, dtype="bool")),
     ("NotImplementedError", "\"addmv_impl_cpu\" not implemented for 'Bool'")),
    # -- bilinear: all dtypes first, then ranks and sizes
    ("bilinear_input1_long", lambda m: _F(m).bilinear(O(m, 3, 4, dtype="int64"), O(m, 3),
                                                       O(m, 6, 4, 5), O(m, 6)),
     ("RuntimeError", "All tensors must have the same dtype, got input1: long int, input2: float, "
      "weight: float, bias: float")),
    ("bilinear_no_bias_long", lambda m: _F(m).bilinear(O(m, 3, 4, dtype="int64"), O(m, 3, 5),
                                                        O(m, 6, 4, 5)),
     ("RuntimeError", "All tensors must have the same dtype, got input1: long int, input2: float, "
      "weight: float")),
    ("bilinear_weight_2d", lambda m: _F(m).bilinear(O(m, 3, 4), O(m, 3, 5), O(m, 6, 4), O(m, 6)),
     ("IndexError", "Dimension out of range (expected to be in range of [-2, 1], but got 2)")),
    ("bilinear_weight_4d", lambda m: _F(m).bilinear(O(m, 3, 4), O(m, 3, 5), O(m, 6, 4, 5, 1),
                                                     O(m, 6)),
     ("RuntimeError", "number of dimensions must match")),
    ("bilinear_bias_0d", lambda m: _F(m).bilinear(O(m, 3, 4), O(m, 3, 5), O(m, 6, 4, 5),
                                                   m.tensor(1.)),
     ("IndexError", "Dimension specified as 0 but tensor has no dimensions")),
    ("bilinear_bias_size", lambda m: _F(m).bilinear(O(m, 3, 4), O(m, 3, 5), O(m, 6, 4, 5),
                                                     O(m, 2, 6)),
     ("RuntimeError", "bilinear(): bias size does not match weight size: got 2 but expected 6")),
    ("bilinear_0d_inputs", lambda m: _F(m).bilinear(m.tensor(1.), m.tensor(1.), O(m, 6, 4, 5),
                                                     O(m, 6)),
     ("IndexError", "Dimension specified as -1 but tensor has no dimensions")),
    ("bilinear_bool", lambda m: _F(m).bilinear(O(m, 3, 4, dtype="bool"), O(m, 3, 5, dtype="bool"),
                                                O(m, 6, 4, 5, dtype="bool")),
     ("NotImplementedError", "\"bmm\" not implemented for 'Bool'")),
    ("bilinear_long", lambda m: _F(m).bilinear(O(m, 3, 4, dtype="int64"),
                                                O(m, 3, 5, dtype="int64"),
                                                O(m, 6, 4, 5, dtype="int64")),
     ("ok", "int64", (3, 6), np.full((3, 6), 20))),
    # -- quantile's texts serve nanquantile too; NaN is out of range
    ("nanquantile_long", lambda m: m.nanquantile(O(m, 6, dtype="int64"), 0.5),
     ("RuntimeError", "quantile() input tensor must be either float or double dtype")),
    ("nanquantile_q_nan", lambda m: m.nanquantile(O(m, 6), float("nan")),
     ("RuntimeError", "quantile() q must be in the range [0, 1] but got nan")),
    ("quantile_q_tensor_nan", lambda m: m.quantile(O(m, 6), m.tensor([float("nan")])),
     ("RuntimeError", "quantile() q values must be in the range [0, 1]")),
    # -- narrow_copy checks a large dim and a negative length its own way
    ("narrow_copy_dim_too_big", lambda m: m.narrow_copy(O(m, 2, 3), 2, 0, 1),
     ("RuntimeError", "Expected dim < static_cast<int64_t>(self_sizes.size()) to be true, but "
      "got false.  (Could this error message be improved?  If so, please report an enhancement "
      "request to PyTorch.)")),
    ("narrow_copy_dim_too_small", lambda m: m.narrow_copy(O(m, 2, 3), -3, 0, 1),
     ("IndexError", "Dimension out of range (expected to be in range of [-2, 1], but got -3)")),
    ("narrow_copy_negative_length", lambda m: m.narrow_copy(O(m, 2, 3), 1, 0, -2),
     ("RuntimeError", "start (0) + length (-2) exceeds dimension size (3).")),
    ("narrow_negative_length", lambda m: m.narrow(O(m, 2, 3), 1, 0, -2),
     ("RuntimeError", "narrow(): length must be non-negative.")),
    # -- scatter family: dim, dtypes, (unless the index is empty) ranks and sizes, then values
    ("scatter_add_src_0d", lambda m: m.scatter_add(O(m, 3, 4), 0, m.zeros(2, 4, dtype=m.long),
                                                    m.tensor(1.)),
     ("RuntimeError", "Index tensor must have the same number of dimensions as src tensor")),
    ("scatter_add_src_1d", lambda m: m.scatter_add(O(m, 3, 4), 0, m.zeros(2, 4, dtype=m.long),
                                                    O(m, 4)),
     ("IndexError", "Dimension out of range (expected to be in range of [-1, 0], but got 1)")),
    ("scatter_add_src_1d_too_small", lambda m: m.scatter_add(O(m, 3, 4), 0,
                                                              m.zeros(2, 4, dtype=m.long), O(m, 1)),
     ("RuntimeError", "Index tensor must have the same number of dimensions as src tensor")),
    ("scatter_add_src_small", lambda m: m.scatter_add(O(m, 3, 4), 1, m.zeros(2, 4, dtype=m.long),
                                                       O(m, 2, 3)),
     ("RuntimeError", "Expected index [2, 4] to be no larger than self [3, 4] apart from "
      "dimension 1 and to be no larger size than src [2, 3]")),
    ("scatter_add_dim_first", lambda m: m.scatter_add(O(m, 3, 4), 5, m.zeros(2, 4, dtype=m.long),
                                                       O(m, 2, 4, dtype="float64")),
     ("IndexError", "Dimension out of range (expected to be in range of [-2, 1], but got 5)")),
    ("scatter_add_0d_index_2d_self", lambda m: m.scatter_add(O(m, 2, 3), 0, m.tensor(0),
                                                              O(m, 2, 3)),
     ("RuntimeError", "Index tensor must have the same number of dimensions as self tensor")),
    ("scatter_add_0d_index_empty_src", lambda m: m.scatter_add(O(m, 3), 0, m.tensor(0), O(m, 0)),
     ("RuntimeError", "Expected index [] to be no larger than self [3] apart from dimension 0 "
      "and to be no larger size than src [0]")),
    ("scatter_add_empty_index_any_rank", lambda m: m.scatter_add(
        O(m, 3, 4), 0, m.zeros(0, 4, 4, dtype=m.long), O(m, 2, 4)),
     ("ok", "float32", (3, 4), np.ones((3, 4)))),
    ("scatter_reduce_rank_before_reduce", lambda m: m.scatter_reduce(
        O(m, 3, 4), 0, m.zeros(2, 4, dtype=m.long), O(m, 1, 2, 4), "bad"),
     ("RuntimeError", "Index tensor must have the same number of dimensions as src tensor")),
    ("scatter_reduce_reduce_before_bounds", lambda m: m.scatter_reduce(
        O(m, 3, 4), 0, m.full((2, 4), 9, dtype=m.long), O(m, 2, 4), "bad"),
     ("RuntimeError", "reduce argument must be either sum, prod, mean, amax or amin, got bad")),
    ("scatter_reduce_mean_bool", lambda m: m.scatter_reduce(
        O(m, 3, 4, dtype="bool"), 0, m.zeros(2, 4, dtype=m.long), O(m, 2, 4, dtype="bool"),
        "mean"),
     ("NotImplementedError",
      "\"scatter_gather_tensor_cpu_reduce_mean\" not implemented for 'Bool'")),
    # -- linalg.cross / cross: the first input's dtype; no bool kernel
    ("cross_other_long", lambda m: m.linalg.cross(O(m, 2, 3), O(m, 2, 3, dtype="int64")),
     ("RuntimeError", "expected scalar type Float but found Long")),
    ("cross_bool_first", lambda m: m.cross(O(m, 2, 3, dtype="bool"), O(m, 2, 3), dim=1),
     ("NotImplementedError", "\"cross\" not implemented for 'Bool'")),
    ("cross_broadcast_before_dtype", lambda m: m.linalg.cross(O(m, 5, 3, dtype="int64"),
                                                               O(m, 2, 3)),
     ("RuntimeError", "The size of tensor a (5) must match the size of tensor b (2) at "
      "non-singleton dimension 0")),
    # -- convolutions (Note [The order of torch's convolution checks])
    ("conv1d_bias_dtype_first", lambda m: _F(m).conv1d(O(m, 2, 2, 5, dtype="int64"),
                                                        O(m, 3, 2, 2, 1), O(m, 3)),
     ("RuntimeError", "Input type (long int) and bias type (float) should be the same")),
    ("conv1d_weight_rank", lambda m: _F(m).conv1d(O(m, 2, 2, 5), O(m, 3, 2, 2, 1), O(m, 3)),
     ("RuntimeError", "Expected 4-dimensional input for 4-dimensional weight [3, 2, 2, 1], but "
      "got 3-dimensional input of size [2, 2, 5] instead")),
    ("conv2d_weight_rank_stride", lambda m: _F(m).conv2d(O(m, 1, 2, 4, 4), O(m, 3, 2, 2),
                                                          O(m, 3)),
     ("RuntimeError", "expected stride to be a single integer value or a list of 1 values to "
      "match the convolution dimensions, but got stride=[1, 1]")),
    ("conv2d_padding_length", lambda m: _F(m).conv2d(O(m, 1, 2, 4, 4), O(m, 3, 2, 2, 2),
                                                      padding=(1, 1, 1)),
     ("RuntimeError", "expected padding to be a single integer value or a list of 2 values to "
      "match the convolution dimensions, but got padding=[1, 1, 1]")),
    ("conv2d_empty_weight", lambda m: _F(m).conv2d(O(m, 1, 5, 4, 4), O(m, 0, 2, 2, 2)),
     ("RuntimeError", "Given groups=1, expected weight to be at least 1 at dimension 0, but got "
      "weight of size [0, 2, 2, 2] instead")),
    ("conv1d_groups_divisible", lambda m: _F(m).conv1d(O(m, 2, 2, 5), O(m, 3, 2, 2), groups=2),
     ("RuntimeError", "Given groups=2, expected weight to be divisible by 2 at dimension 0, but "
      "got weight of size [[3, 2, 2]] instead")),
    ("conv1d_weight_long_mkldnn", lambda m: _F(m).conv1d(O(m, 2, 2, 5), O(m, 3, 2, 2,
                                                                          dtype="int64")),
     ("RuntimeError", "Input type (torch.FloatTensor) and weight type (torch.LongTensor) should "
      "be the same or input should be a MKLDNN tensor and weight is a dense tensor")),
    ("conv1d_weight_bool_mkldnn", lambda m: _F(m).conv1d(O(m, 2, 2, 5), O(m, 3, 2, 2,
                                                                          dtype="bool")),
     ("RuntimeError", "Input type (torch.FloatTensor) and weight type (CPUBoolType) should be "
      "the same or input should be a MKLDNN tensor and weight is a dense tensor")),
    ("conv2d_weight_double_native", lambda m: _F(m).conv2d(O(m, 1, 2, 4, 4),
                                                            O(m, 3, 2, 2, 2, dtype="float64")),
     ("RuntimeError", "expected scalar type Float but found Double")),
    ("conv1d_input_long", lambda m: _F(m).conv1d(O(m, 2, 2, 5, dtype="int64"), O(m, 3, 2, 2)),
     ("RuntimeError", "expected scalar type Long but found Float")),
    ("conv2d_bool_dilated", lambda m: _F(m).conv2d(O(m, 1, 2, 4, 4, dtype="bool"),
                                                    O(m, 3, 2, 2, 2, dtype="bool"), dilation=2),
     ("NotImplementedError", "\"slow_conv_dilated<>\" not implemented for 'Bool'")),
    ("conv_transpose1d_bool_input", lambda m: _F(m).conv_transpose1d(
        O(m, 2, 2, 5, dtype="bool"), O(m, 2, 3, 2), O(m, 3)),
     ("NotImplementedError", "\"slow_conv_transpose2d_out_cpu\" not implemented for 'Bool'")),
    ("conv_transpose1d_bias_half_mkldnn", lambda m: _F(m).conv_transpose1d(
        O(m, 2, 2, 5), O(m, 2, 3, 2), O(m, 3, dtype="float16")),
     ("RuntimeError", "Input type (torch.FloatTensor) and bias type (torch.HalfTensor) should be "
      "the same or input should be a MKLDNN tensor and bias is a dense tensor")),
    ("conv_transpose2d_bias_long_native", lambda m: _F(m).conv_transpose2d(
        O(m, 1, 2, 4, 4), O(m, 2, 3, 2, 2), O(m, 3, dtype="int64")),
     ("ok", "float32", (1, 3, 5, 5))),
    ("conv_transpose1d_long", lambda m: _F(m).conv_transpose1d(
        O(m, 2, 2, 5, dtype="int64"), O(m, 2, 3, 2, dtype="int64"), O(m, 3, dtype="int64")),
     ("ok", "int64", (2, 3, 6))),
    # -- batch_norm
    ("batch_norm_0d_training", lambda m: _F(m).batch_norm(m.tensor(1.), O(m, 3), O(m, 3),
                                                           training=True),
     ("IndexError", "tuple index out of range")),
    ("batch_norm_1d_eval", lambda m: _F(m).batch_norm(O(m, 3), O(m, 3), O(m, 3)),
     ("RuntimeError", "running_mean should contain 0 elements not 3")),
    ("batch_norm_1d_no_tensors", lambda m: _F(m).batch_norm(O(m, 3), None, None, training=True),
     ("IndexError", "Dimension out of range (expected to be in range of [-1, 0], but got 1)")),
    ("batch_norm_eval_needs_stats", lambda m: _F(m).batch_norm(O(m, 4, 3), None, None),
     ("RuntimeError", "running_mean must be defined in evaluation mode")),
    ("batch_norm_one_stat", lambda m: _F(m).batch_norm(O(m, 4, 3), O(m, 3), None, training=True),
     ("ValueError", "running_mean and running_var must either both be None or neither be None")),
    ("batch_norm_long", lambda m: _F(m).batch_norm(O(m, 4, 3, dtype="int64"), O(m, 3), O(m, 3)),
     ("NotImplementedError", "\"batch_norm\" not implemented for 'Long'")),
    ("batch_norm_double_input", lambda m: _F(m).batch_norm(O(m, 4, 3, dtype="float64"), O(m, 3),
                                                            O(m, 3)),
     ("RuntimeError", "mixed dtype (CPU): all inputs must share same datatype.")),
    ("batch_norm_weight_long", lambda m: _F(m).batch_norm(O(m, 4, 3), O(m, 3), O(m, 3),
                                                           O(m, 3, dtype="int64")),
     ("RuntimeError", "mixed dtype (CPU): expect parameter to have scalar type of Float")),
    ("batch_norm_stats_double", lambda m: _F(m).batch_norm(O(m, 4, 3), O(m, 3, dtype="float64"),
                                                            O(m, 3, dtype="float64"), O(m, 3)),
     ("RuntimeError", "expected scalar type Float but found Double")),
    ("batch_norm_half_float_params", lambda m: _F(m).batch_norm(
        O(m, 4, 3, dtype="float16"), O(m, 3), O(m, 3), O(m, 3), O(m, 3)),
     ("ok", "float16", (4, 3))),
    # -- x[index] = value with an index tensor: the shapes, then the dtypes
    ("setitem_list_value_long", lambda m: _setitem(O(m, 3, 4), [0, 2], O(m, 2, 4, dtype="int64")),
     ("RuntimeError", "Index put requires the source and destination dtypes match, got Float for "
      "the destination and Long for the source.")),
    ("setitem_mask_value_double", lambda m: _setitem(O(m, 3, 4), m.tensor([True, False, True]),
                                                     O(m, 4, dtype="float64")),
     ("RuntimeError", "Index put requires the source and destination dtypes match, got Float for "
      "the destination and Double for the source.")),
    ("setitem_list_shape_first", lambda m: _setitem(O(m, 3, 4), [0, 2], O(m, 3, 4, dtype="int64")),
     ("RuntimeError", "shape mismatch: value tensor of shape [3, 4] cannot be broadcast to "
      "indexing result of shape [2, 4]")),
    ("setitem_slice_value_long", lambda m: _setitem(O(m, 3, 4), slice(0, 2),
                                                    O(m, 4, dtype="int64")),
     ("ok", "float32", (3, 4))),
    # -- binary cross-entropy
    ("bce_input_long", lambda m: _F(m).binary_cross_entropy(O(m, 2, 3, dtype="int64"), O(m, 2, 3)),
     ("RuntimeError", "Found dtype Float but expected Long")),
    ("bce_target_double_before_range", lambda m: _F(m).binary_cross_entropy(
        O(m, 2, 3) + 5, O(m, 2, 3, dtype="float64")),
     ("RuntimeError", "Found dtype Double but expected Float")),
    ("bce_long", lambda m: _F(m).binary_cross_entropy(O(m, 2, 3, dtype="int64"),
                                                       O(m, 2, 3, dtype="int64")),
     ("NotImplementedError", "\"binary_cross_entropy\" not implemented for 'Long'")),
    ("bce_weight_broadcast", lambda m: _F(m).binary_cross_entropy(O(m, 2, 3) * 0.5, O(m, 2, 3),
                                                                   weight=O(m, 4)),
     ("RuntimeError", "Attempting to broadcast a dimension of length 4 at -1! Mismatching "
      "argument at index 1 had torch.Size([4]); but expected shape should be broadcastable to "
      "[2, 3]")),
    ("bce_logits_input_long", lambda m: _F(m).binary_cross_entropy_with_logits(
        O(m, 2, 3, dtype="int64"), O(m, 2, 3)),
     ("NotImplementedError", "\"log_sigmoid_cpu\" not implemented for 'Long'")),
    ("bce_logits_target_long", lambda m: _F(m).binary_cross_entropy_with_logits(
        O(m, 2, 3), O(m, 2, 3, dtype="int64")),
     ("RuntimeError", "result type Float can't be cast to the desired output type Long")),
    ("bce_logits_target_bool", lambda m: _F(m).binary_cross_entropy_with_logits(
        O(m, 2, 3), O(m, 2, 3, dtype="bool")),
     ("RuntimeError", "Subtraction, the `-` operator, with two bool tensors is not supported. "
      "Use the `^` or `logical_xor()` operator instead.")),
    ("bce_logits_target_dtype_wins", lambda m: _F(m).binary_cross_entropy_with_logits(
        O(m, 2, 3, dtype="float64"), O(m, 2, 3)),
     ("ok", "float32", ())),
    ("bce_logits_pos_weight_size", lambda m: _F(m).binary_cross_entropy_with_logits(
        O(m, 2, 3), O(m, 2, 3), pos_weight=O(m, 4)),
     ("RuntimeError", "The size of tensor a (4) must match the size of tensor b (3) at "
      "non-singleton dimension 1")),
    # -- SVD-based ops at non-finite inputs: NaN refused (naming the batch element), inf -> NaN
    ("svdvals_nan", lambda m: m.linalg.svdvals(m.tensor([[1., float("nan")], [0., 1.]])),
     ("_LinAlgError", "linalg.svd: The algorithm failed to converge because the input matrix "
      "contained non-finite values.")),
    ("pinv_nan_batch", lambda m: m.linalg.pinv(m.stack([m.eye(2), m.full((2, 2), float("nan"))])),
     ("_LinAlgError", "linalg.svd: (Batch element 1): The algorithm failed to converge because "
      "the input matrix contained non-finite values.")),
    ("matrix_norm_2_nan", lambda m: m.linalg.matrix_norm(m.full((3, 3), float("nan")), 2),
     ("_LinAlgError", "linalg.svd: The algorithm failed to converge because the input matrix "
      "contained non-finite values.")),
    ("svdvals_inf", lambda m: m.linalg.svdvals(m.tensor([[float("inf"), 0.], [0., 1.]])),
     ("ok", "float32", (2,), np.full(2, np.nan))),
    ("svdvals_inf_batch", lambda m: m.linalg.svdvals(m.stack([m.eye(2) * 2, m.tensor(
        [[float("inf"), 0.], [0., 1.]])])),
     ("ok", "float32", (2, 2), np.array([[2., 2.], [np.nan, np.nan]]))),
    # -- log_softmax where a slice's max is +inf: NaN throughout, as torch
    ("log_softmax_inf", lambda m: m.log_softmax(m.tensor([float("inf"), 1.]), 0),
     ("ok", "float32", (2,), np.full(2, np.nan))),
    ("log_softmax_inf_neginf", lambda m: m.log_softmax(m.tensor([float("inf"), float("-inf")]), 0),
     ("ok", "float32", (2,), np.full(2, np.nan))),
    ("log_softmax_neginf_entry", lambda m: m.log_softmax(m.tensor([float("-inf"), 0.]), 0),
     ("ok", "float32", (2,), np.array([-np.inf, 0.]))),
    # -- tensor(data, dtype=...) converts each element: None is a TypeError, never NaN
    ("tensor_none_float", lambda m: m.tensor([1, None], dtype=m.float32),
     ("TypeError", "must be real number, not NoneType")),
    ("tensor_none_long", lambda m: m.tensor([[1], [None]], dtype=m.int64),
     ("TypeError", "'NoneType' object cannot be interpreted as an integer")),
    ("tensor_none_infer", lambda m: m.tensor([1, None]),
     ("RuntimeError", "Could not infer dtype of NoneType")),
]


ROWS += [
    # -- kl_div refuses integral tensors before any shape check
    ("kl_div_long_first", lambda m: _F(m).kl_div(O(m, 2, 3, dtype="int64"), O(m, 2, 4),
                                                  reduction="sum"),
     ("RuntimeError", "kl_div: Integral inputs not supported.")),
    ("kl_div_target_bool", lambda m: _F(m).kl_div(O(m, 2, 3), O(m, 2, 3, dtype="bool"),
                                                   reduction="batchmean"),
     ("RuntimeError", "kl_div: Integral inputs not supported.")),
    # -- cdist: ranks, columns, floating dtypes, p, batch broadcast, the Half kernel, dtypes
    ("cdist_columns_before_dtype", lambda m: m.cdist(O(m, 2, 3, dtype="int64"), O(m, 4, 5)),
     ("RuntimeError", "X1 and X2 must have the same number of columns. X1: 3 X2: 5")),
    ("cdist_x2_bool", lambda m: m.cdist(O(m, 2, 3), O(m, 4, 3, dtype="bool")),
     ("RuntimeError", "cdist only supports floating-point dtypes, X2 got: Bool")),
    ("cdist_half", lambda m: m.cdist(O(m, 2, 3, dtype="float16"), O(m, 4, 3)),
     ("NotImplementedError", "\"cdist\" not implemented for 'Half'")),
    ("cdist_double_float", lambda m: m.cdist(O(m, 2, 3, dtype="float64"), O(m, 4, 3)),
     ("RuntimeError", "expected scalar type Double but found Float")),
    # -- nll_loss: batch sizes, then the target's dtype, then the input's kernel
    ("nll_loss_target_bool", lambda m: _F(m).nll_loss(O(m, 3, 4), O(m, 3, dtype="bool")),
     ("RuntimeError", "expected target dtype to be Long or Byte, but got Bool")),
    ("nll_loss_target_int32", lambda m: _F(m).nll_loss(O(m, 3, 4), O(m, 3, dtype="int32")),
     ("RuntimeError", "expected target dtype to be Long or Byte, but got Int")),
    ("nll_loss_batch_before_dtype", lambda m: _F(m).nll_loss(O(m, 3, 4), O(m, 2)),
     ("ValueError", "Expected input batch_size (3) to match target batch_size (2).")),
    ("nll_loss_input_long", lambda m: _F(m).nll_loss(O(m, 3, 4, dtype="int64"),
                                                      O(m, 3, dtype="int64")),
     ("NotImplementedError", "\"nll_loss_out_frame\" not implemented for 'Long'")),
    ("nll_loss_spatial_bool", lambda m: _F(m).nll_loss(O(m, 2, 3, 2, dtype="bool"),
                                                        O(m, 2, 2, dtype="int64")),
     ("NotImplementedError", "\"nll_loss2d_forward_out_frame\" not implemented for 'Bool'")),
    ("nll_loss_target_byte", lambda m: _F(m).nll_loss(-O(m, 3, 4), O(m, 3, dtype="uint8")),
     ("ok", "float32", (), np.array(1.))),
]


def _cumprod_grad(m: Any, values: list, create_graph: bool) -> Any:
    x = m.tensor(values, requires_grad=True)
    y = (x.cumprod(0) * m.arange(1., len(values) + 1)).sum()
    (g,) = m.autograd.grad(y, x, create_graph=create_graph)
    return g.detach()


_nan, _inf = float("nan"), float("inf")
# torch's two formulas (Note [Cumprod's gradient without create_graph]): weights 1, 2, 3 on
# the outputs, so each finite gradient can be worked out by hand
ROWS += [
    ("cumprod_grad_zero", lambda m: _cumprod_grad(m, [2., 0., 3.], False),
     ("ok", "float32", (3,), np.array([1., 2 * 2 + 3 * 2 * 3., 0.]))),
    ("cumprod_grad_nan_before_zero", lambda m: _cumprod_grad(m, [2., _nan, 0.], False),
     ("ok", "float32", (3,), np.full(3, np.nan))),
    ("cumprod_grad_nan_after_zero", lambda m: _cumprod_grad(m, [2., 0., _nan], False),
     ("ok", "float32", (3,), np.array([1., np.nan, 0.]))),
    ("cumprod_grad_zero_then_nan", lambda m: _cumprod_grad(m, [0., _nan, 3.], False),
     ("ok", "float32", (3,), np.array([np.nan, 0., 0.]))),
    ("cumprod_grad_inf_no_zero", lambda m: _cumprod_grad(m, [_inf, 2., 3.], False),
     ("ok", "float32", (3,), np.array([np.nan, np.inf, np.inf]))),
    ("cumprod_grad_create_graph_nan", lambda m: _cumprod_grad(m, [2., _nan, 0.], True),
     ("ok", "float32", (3,), np.array([np.nan, 2 * 2., np.nan]))),
    ("cumprod_grad_create_graph_inf", lambda m: _cumprod_grad(m, [_inf, 2., 3.], True),
     ("ok", "float32", (3,), np.array([np.nan, np.inf, np.inf]))),
]



def _nan_at(m: Any, n: int, i: int = 0) -> Any:
    """A dense symmetric n x n float32 matrix with a NaN at (i, i) (LAPACK's codes below are
    those of such dense matrices; a NaN in a more regular one may not even fail)."""
    a = (np.arange(n * n).reshape(n, n) * 0.37) % 1
    a = (a + a.T).astype(np.float32)
    a[i, i] = np.nan
    return m.tensor(a)


_EIGH_TEXT = ("linalg.eigh: {}The algorithm failed to converge because the input matrix is "
              "ill-conditioned or has too many repeated eigenvalues (error code: {}).")
# the fuzzer's raw NumPy errors (tests/fuzz): each now torch's exception and text
ROWS += [
    # clamp with tensor bounds: the broadcast of (input, min, max), in that order
    ("clamp_tensor_empty_input", lambda m: m.clamp(O(m, 0, 3), O(m, 2, 3), O(m, 2, 3)),
     ("RuntimeError", "The size of tensor a (0) must match the size of tensor b (2) at "
      "non-singleton dimension 0")),
    ("clamp_tensor_max_mismatch", lambda m: m.clamp(O(m, 2, 3), O(m, 2, 3), O(m, 4)),
     ("RuntimeError", "The size of tensor a (3) must match the size of tensor b (4) at "
      "non-singleton dimension 1")),
    ("clip_tensor_min_mismatch", lambda m: O(m, 2, 3).clip(O(m, 2, 4)),
     ("RuntimeError", "The size of tensor a (3) must match the size of tensor b (4) at "
      "non-singleton dimension 1")),
    ("clamp__tensor_output_shape", lambda m: O(m, 4).clamp_(O(m, 2, 4)),
     ("RuntimeError", "output with shape [4] doesn't match the broadcast shape [2, 4]")),
    ("clamp_tensor_broadcasts", lambda m: m.clamp(O(m, 2, 3), O(m, 2, 1, 3), O(m, 2, 1, 1, 1)),
     ("ok", "float32", (2, 2, 2, 3))),
    # linalg.cond of half precision: the inverse's refusal, or the SVD's for 'nuc'
    ("cond_fro_half", lambda m: m.linalg.cond(O(m, 3, 3, dtype="float16"), "fro"),
     ("RuntimeError", "linalg.inv: Low precision dtypes not supported. Got Half")),
    ("cond_1_half", lambda m: m.linalg.cond(O(m, 2, 3, 3, dtype="float16"), 1),
     ("RuntimeError", "linalg.inv: Low precision dtypes not supported. Got Half")),
    ("cond_nuc_half", lambda m: m.linalg.cond(O(m, 3, 3, dtype="float16"), "nuc"),
     ("NotImplementedError", "\"linalg_svd_cpu\" not implemented for 'Half'")),
    # the activations' scalar arguments, checked by torch's parser
    ("elu_str_alpha", lambda m: _F(m).elu(O(m, 3), "x"),
     ("TypeError", "elu(): argument 'alpha' (position 2) must be Number, not str")),
    ("elu_none_alpha", lambda m: _F(m).elu(O(m, 3), None),
     ("TypeError", "elu(): argument 'alpha' (position 2) must be Number, not NoneType")),
    ("leaky_relu_str_slope", lambda m: _F(m).leaky_relu(O(m, 3), "x"),
     ("TypeError", "leaky_relu(): argument 'negative_slope' (position 2) must be Number, "
      "not str")),
    ("leaky_relu_inplace_str_slope", lambda m: _F(m).leaky_relu(O(m, 3), "x", True),
     ("TypeError", "leaky_relu_(): argument 'negative_slope' (position 2) must be Number, "
      "not str")),
    ("LeakyReLU_str_slope", lambda m: m.nn.LeakyReLU("x")(O(m, 3)),
     ("TypeError", "leaky_relu(): argument 'negative_slope' (position 2) must be Number, "
      "not str")),
    ("elu_inplace_str_input", lambda m: _F(m).elu("x", inplace=True),
     ("TypeError", "elu_(): argument 'input' (position 1) must be Tensor, not str")),
    # text as tensor data
    ("tensor_of_str", lambda m: m.tensor("x"), ("TypeError", "new(): invalid data type 'str'")),
    ("tensor_of_bytes", lambda m: m.tensor(b"x"),
     ("TypeError", "new(): invalid data type 'bytes'")),
    ("tensor_str_first", lambda m: m.tensor(["x"]), ("ValueError", "too many dimensions 'str'")),
    ("tensor_str_later", lambda m: m.tensor([[1, 2], [3, "x"]]),
     ("TypeError", "new(): invalid data type 'str'")),
    ("tensor_str_with_dtype", lambda m: m.tensor([1, "x"], dtype=m.float32),
     ("TypeError", "must be real number, not str")),
    ("as_tensor_str", lambda m: m.as_tensor("x"),
     ("TypeError", "new(): invalid data type 'str'")),
    ("new_tensor_str", lambda m: O(m, 2).new_tensor("x"),
     ("TypeError", "new(): invalid data type 'str'")),
    ("as_tensor_positional_dtype", lambda m: m.as_tensor([1], m.float64),
     ("TypeError", "as_tensor() takes 1 positional argument but 2 were given")),
    # eigh of a NaN input: torch's LinAlgError with LAPACK's code (n - 1; n - 2 values only)
    ("eigh_nan", lambda m: m.linalg.eigh(_nan_at(m, 3)),
     ("_LinAlgError", _EIGH_TEXT.format("", 2))),
    ("eigh_nan_batch", lambda m: m.linalg.eigh(m.stack([_nan_at(m, 4, 1).nan_to_num(),
                                                        _nan_at(m, 4, 1)])),
     ("_LinAlgError", _EIGH_TEXT.format("(Batch element 1): ", 3))),
    ("eigvalsh_nan", lambda m: m.linalg.eigvalsh(_nan_at(m, 5)),
     ("_LinAlgError", _EIGH_TEXT.format("", 3))),
    ("eigh_nan_2x2_succeeds", lambda m: m.linalg.eigh(_nan_at(m, 2)).eigenvalues,
     ("ok", "float32", (2,))),
    # normalization dtypes: group norm's kernel and mixed types, instance norm as batch norm
    ("group_norm_long", lambda m: _F(m).group_norm(O(m, 2, 4, 3, dtype="int64"), 2),
     ("NotImplementedError", "\"GroupNormKernelImpl\" not implemented for 'Long'")),
    ("group_norm_half_weight_float_input",
     lambda m: _F(m).group_norm(O(m, 2, 4, 3), 2, O(m, 4, dtype="float16")),
     ("RuntimeError", "mixed dtype (CPU): expect parameter to have scalar type of Float")),
    ("group_norm_double_input_float_weight",
     lambda m: _F(m).group_norm(O(m, 2, 4, 3, dtype="float64"), 2, O(m, 4)),
     ("RuntimeError", "mixed dtype (CPU): all inputs must share same datatype.")),
    ("group_norm_half_input_float_weight",
     lambda m: _F(m).group_norm(O(m, 2, 4, 3, dtype="float16"), 2, O(m, 4), O(m, 4)),
     ("ok", "float16", (2, 4, 3))),
    ("instance_norm_long", lambda m: _F(m).instance_norm(O(m, 2, 3, 4, dtype="int64")),
     ("NotImplementedError", "\"batch_norm\" not implemented for 'Long'")),
    ("instance_norm_bool", lambda m: _F(m).instance_norm(O(m, 2, 3, 4, dtype="bool")),
     ("NotImplementedError", "\"batch_norm\" not implemented for 'Bool'")),
    ("instance_norm_half_input_float_weight",
     lambda m: _F(m).instance_norm(O(m, 2, 3, 4, dtype="float16"), weight=O(m, 3)),
     ("ok", "float16", (2, 3, 4))),
    # solve_triangular: the kernel is chosen by A's dtype, B is cast to it
    ("solve_triangular_half_A", lambda m: m.linalg.solve_triangular(
        O(m, 3, 3, dtype="float16"), O(m, 3, 2), upper=True),
     ("NotImplementedError", "\"triangular_solve_cpu\" not implemented for 'Half'")),
    ("solve_triangular_long_A", lambda m: m.linalg.solve_triangular(
        O(m, 3, 3, dtype="int64"), O(m, 3, 2), upper=True),
     ("NotImplementedError", "\"triangular_solve_cpu\" not implemented for 'Long'")),
    ("solve_triangular_double_B", lambda m: m.linalg.solve_triangular(
        O(m, 3, 3), O(m, 3, 2, dtype="float64"), upper=True),
     ("ok", "float32", (3, 2))),
    ("solve_triangular_long_B", lambda m: m.linalg.solve_triangular(
        O(m, 3, 3, dtype="float64"), O(m, 2, 3, dtype="int64"), upper=False, left=False),
     ("ok", "float64", (2, 3))),
    # empty inputs torch accepts
    ("adaptive_max_pool2d_empty_batch", lambda m: _F(m).adaptive_max_pool2d(
        O(m, 0, 2, 4, 5), (2, 3), True)[1], ("ok", "int64", (0, 2, 2, 3))),
    ("adaptive_max_pool1d_empty_batch", lambda m: _F(m).adaptive_max_pool1d(O(m, 0, 5), 1),
     ("ok", "float32", (0, 1))),
    ("flip_0dim", lambda m: m.flip(m.tensor(1.5), [0]), ("ok", "float32", (), np.array(1.5))),
    ("flip_0dim_out_of_range", lambda m: m.flip(m.tensor(1.5), [1]),
     ("IndexError", "Dimension out of range (expected to be in range of [-1, 0], but got 1)")),
    ("cond_empty_batch_square_check_for_strings", lambda m: m.linalg.cond(O(m, 0, 3, 4), "nuc"),
     ("RuntimeError", "linalg.cond(ord=nuc): A must be batches of square matrices, but they "
      "are 3 by 4 matrices")),
    ("cond_empty_batch_numeric_norm", lambda m: m.linalg.cond(O(m, 0, 3, 4), 1),
     ("ok", "float32", (0,))),
    ("cond_0x0_matrices", lambda m: m.linalg.cond(O(m, 2, 0, 0)),
     ("ok", "float32", (2,), np.zeros(2))),
    # copy_ into a destination the source broadcasts beyond, with and without a graph
    ("copy_into_0dim", lambda m: m.zeros(()).copy_(O(m, 2, 3)),
     ("RuntimeError", "output with shape [] doesn't match the broadcast shape [2, 3]")),
    ("copy_more_dims_requiring_grad", lambda m: m.zeros(2, 3).copy_(
        O(m, 2, 2, 3).requires_grad_()),
     ("RuntimeError", "output with shape [2, 3] doesn't match the broadcast shape [2, 2, 3]")),
    ("copy_not_broadcastable", lambda m: m.zeros(2, 3).copy_(O(m, 4)),
     ("RuntimeError", "The size of tensor a (3) must match the size of tensor b (4) at "
      "non-singleton dimension 1")),
    # index_put_: the values must broadcast to the indexed shape
    ("index_put__values_too_long", lambda m: O(m, 3, 4).index_put_(
        (m.tensor([1]), m.tensor([3])), O(m, 2)),
     ("RuntimeError", "shape mismatch: value tensor of shape [2] cannot be broadcast to "
      "indexing result of shape [1]")),
    ("index_put__values_empty", lambda m: O(m, 3, 4).index_put_(
        (m.tensor([1]), m.tensor([3])), O(m, 0)),
     ("RuntimeError", "shape mismatch: value tensor of shape [0] cannot be broadcast to "
      "indexing result of shape [1]")),
    ("setitem_values_too_long", lambda m: _setitem(O(m, 3, 4), m.tensor([0, 2]), O(m, 3)),
     ("RuntimeError", "shape mismatch: value tensor of shape [3] cannot be broadcast to "
      "indexing result of shape [2, 4]")),
    # the gradient argument of backward, and from_numpy's call shape
    ("backward_str_gradient", lambda m: (O(m, 2).requires_grad_() * 2).sum().backward("x"),
     ("TypeError", "gradients can be either Tensors or None, but got str")),
    ("backward_list_of_floats", lambda m: (O(m, 2).requires_grad_() * 2).sum().backward([1.]),
     ("TypeError", "gradients can be either Tensors or None, but got float")),
    ("from_numpy_two_arguments", lambda m: m.from_numpy(np.ones(2), "x"),
     ("TypeError", "torch._VariableFunctionsClass.from_numpy() takes exactly one argument "
      "(2 given)")),
    ("from_numpy_keyword", lambda m: m.from_numpy(ndarray=np.ones(2)),
     ("TypeError", "torch._VariableFunctionsClass.from_numpy() takes no keyword arguments")),
    ("numpy_positional", lambda m: O(m, 2).numpy(True),
     ("TypeError", "numpy() takes 0 positional arguments but 1 was given")),
    ("numpy_unknown_keyword", lambda m: O(m, 2).numpy(force=True, bogus=1),
     ("TypeError", "numpy() got an unexpected keyword argument 'bogus'")),
    # interpolate's output sizes, checked before anything is allocated
    ("interpolate_huge_size", lambda m: _F(m).interpolate(O(m, 1, 2, 3, 3), size=2 ** 62),
     ("RuntimeError", "Storage size calculation overflowed with sizes=[1, 2, "
      "4611686018427387904, 4611686018427387904]")),
    ("interpolate_huge_scale", lambda m: _F(m).interpolate(O(m, 1, 2, 3, 3),
                                                           scale_factor=2 ** 62),
     ("RuntimeError", "value cannot be converted to type int64_t without overflow")),
    ("interpolate_inf_scale", lambda m: _F(m).interpolate(O(m, 1, 2, 3), scale_factor=_inf,
                                                          mode="linear"),
     ("RuntimeError", "value cannot be converted to type int64_t without overflow")),
    ("unfold_huge_step", lambda m: O(m, 2, 3).unfold(1, 2, 2 ** 62),
     ("ok", "float32", (2, 1, 2))),
    # randperm and logspace: torch's allocator checks the sizes before any other check
    ("randperm_huge", lambda m: m.randperm(2 ** 62),
     ("RuntimeError", "Storage size calculation overflowed with sizes=[4611686018427387904]")),
    ("randperm_huge_float_before_its_limit", lambda m: m.randperm(2 ** 61, dtype=m.float32),
     ("RuntimeError", "Storage size calculation overflowed with sizes=[2305843009213693952]")),
    ("randperm_float_limit", lambda m: m.randperm(2 ** 25, dtype=m.float32),
     ("RuntimeError", "n cannot be greater than 2^24+1 for Float type.")),
    ("logspace_huge_steps", lambda m: m.logspace(0, 1, 2 ** 62),
     ("RuntimeError", "Storage size calculation overflowed with sizes=[4611686018427387904]")),
]


def _outcome(call: Call, m: Any) -> tuple:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            r = call(m)
        except Exception as e:  # noqa: BLE001 - the exception is the outcome
            return ERR, type(e), str(e)
    return "ok", r


def _check(expected: tuple, outcome: tuple, m: Any) -> None:
    if expected[0] == "ok":
        assert outcome[0] == "ok", outcome
        r = outcome[1]
        assert r.dtype == getattr(m, expected[1])
        assert tuple(r.shape) == expected[2]
        if len(expected) > 3:
            np.testing.assert_allclose(r.detach().double().numpy(), expected[3], rtol=1e-6)
        return
    assert outcome[0] == ERR, f"accepted: {outcome}"
    names = {k.__name__ for k in outcome[1].__mro__}
    assert expected[0] in names, (outcome[1], outcome[2])
    assert outcome[2] == expected[1]


@pytest.mark.parametrize("call,expected", [r[1:] for r in ROWS], ids=[r[0] for r in ROWS])
def test_npgrad_gives_expected(call: Call, expected: tuple) -> None:
    _check(expected, _outcome(call, npgrad), npgrad)


@pytest.mark.parametrize("call,expected", [r[1:] for r in ROWS], ids=[r[0] for r in ROWS])
def test_expected_is_torch(call: Call, expected: tuple) -> None:
    torch = pytest.importorskip("torch")
    outcome = _outcome(call, torch)
    if outcome[0] == ERR:  # torch's own type, not one of its bases
        assert outcome[1].__name__ == expected[0] or expected[0] == "ok", outcome
    _check(expected, outcome, torch)


def test_bce_with_logits_gradients_follow_each_input_dtype() -> None:
    """The loss takes target's dtype; each gradient keeps its input's dtype, as in torch."""
    x = npgrad.full((2, 3), 0.5, dtype=npgrad.float64, requires_grad=True)
    t = npgrad.full((2, 3), 0.5, requires_grad=True)
    loss = npgrad.nn.functional.binary_cross_entropy_with_logits(x, t)
    assert loss.dtype == npgrad.float32
    loss.backward()
    assert x.grad.dtype == npgrad.float64 and t.grad.dtype == npgrad.float32
    # d/dx mean((1 - t) x + softplus(-x)) = (sigmoid(x) - t) / n ; d/dt = -x / n
    expected_x = (1 / (1 + np.exp(-0.5)) - 0.5) / 6
    np.testing.assert_allclose(x.grad.numpy(), np.full((2, 3), expected_x), rtol=1e-6)
    np.testing.assert_allclose(t.grad.numpy(), np.full((2, 3), -0.5 / 6), rtol=1e-6)


def test_scatter_with_empty_index_of_any_rank_is_a_copy_with_gradient() -> None:
    x = npgrad.arange(12.).reshape(3, 4).requires_grad_()
    out = x.scatter_add(0, npgrad.zeros(0, 5, 5, dtype=npgrad.long), npgrad.ones(2, 4))
    np.testing.assert_array_equal(out.detach().numpy(), np.arange(12.).reshape(3, 4))
    out.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.ones((3, 4)))


def test_cumprod_gradients_with_zeros_check_numerically() -> None:
    cases = (([[2., 0., 3.], [0., 5., 0.]], 1), ([[2., 0.], [0., 5.], [3., 4.]], 0))
    for shape_values, dim in cases:
        x = npgrad.tensor(shape_values, dtype=npgrad.float64, requires_grad=True)
        assert npgrad.autograd.gradcheck(lambda t: t.cumprod(dim), (x,))
        assert npgrad.autograd.gradgradcheck(lambda t: t.cumprod(dim), (x,))


@pytest.mark.parametrize("convert", [int, float, complex])
@pytest.mark.parametrize("shape", [(2,), (0,), (2, 3)])
def test_python_conversions_of_many_elements_raise_value_error(convert, shape) -> None:
    """torch's ``float(t)`` / ``int(t)`` / ``complex(t)`` on a tensor of other than one element
    raise ValueError (``item()`` raises RuntimeError); one element of any shape converts."""
    with pytest.raises(ValueError) as info:
        convert(npgrad.ones(shape))
    assert str(info.value) == "only one element tensors can be converted to Python scalars"
    assert convert(npgrad.full((1, 1), 3.0)) == convert(3.0)
    with pytest.raises(RuntimeError, match="a Tensor with 2 elements cannot be converted"):
        npgrad.ones(2).item()


def test_python_conversions_match_torch() -> None:
    torch = pytest.importorskip("torch")
    for convert in (int, float, complex):
        for shape in ((2,), (0,), (1, 1)):
            outcomes = []
            for lib in (npgrad, torch):
                try:
                    outcomes.append(("ok", convert(lib.ones(shape))))
                except Exception as e:  # noqa: BLE001 - the outcome is what is compared
                    outcomes.append((type(e).__name__, str(e)))
            assert outcomes[0] == outcomes[1], (convert, shape)


# fill_/full with a Python number that does not fit the dtype: torch refuses a finite number
# beyond the range (a float beyond float32's max too), wraps a negative into an unsigned type
# and a 0-dim tensor value into any type, and lets inf through for floats.
FILL_CASES = [
    ("int8 fill_(1000)", lambda t: t.ones(2, dtype=t.int8).fill_(1000),
     "value cannot be converted to type int8_t without overflow"),
    ("float32 fill_(1e300)", lambda t: t.ones(2).fill_(1e300),
     "value cannot be converted to type float without overflow"),
    ("float16 fill_(1e6)", lambda t: t.ones(2, dtype=t.float16).fill_(1e6),
     "value cannot be converted to type c10::Half without overflow"),
    ("int64 fill_(2**63)", lambda t: t.ones(2, dtype=t.int64).fill_(2 ** 63),
     "value cannot be converted to type int64_t without overflow"),
    ("full int8 1000", lambda t: t.full((2,), 1000, dtype=t.int8),
     "value cannot be converted to type int8_t without overflow"),
    ("recorded fill_(1e300)", lambda t: t.ones(3, requires_grad=True).clone().fill_(1e300),
     "value cannot be converted to type float without overflow"),
    ("uint8 fill_(-1)", lambda t: t.ones(2, dtype=t.uint8).fill_(-1), [255, 255]),
    ("float32 fill_(inf)", lambda t: t.ones(2).fill_(float("inf")), [float("inf")] * 2),
    ("int8 fill_(tensor(1000))", lambda t: t.ones(2, dtype=t.int8).fill_(t.tensor(1000)),
     [-24, -24]),
    ("int8 fill_(True)", lambda t: t.zeros(2, dtype=t.int8).fill_(True), [1, 1]),
]


@pytest.mark.parametrize("make, expected", [c[1:] for c in FILL_CASES],
                         ids=[c[0] for c in FILL_CASES])
def test_fill_values_that_do_not_fit(make: Callable, expected: Any) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no NumPy overflow warning on the way
        if isinstance(expected, str):
            with pytest.raises(RuntimeError) as info:
                make(npgrad)
            assert str(info.value) == expected
        else:
            assert make(npgrad).tolist() == expected


@pytest.mark.parametrize("make, expected", [c[1:] for c in FILL_CASES],
                         ids=[c[0] for c in FILL_CASES])
def test_fill_values_that_do_not_fit_match_torch(make: Callable, expected: Any) -> None:
    torch = pytest.importorskip("torch")
    if isinstance(expected, str):
        with pytest.raises(RuntimeError) as info:
            make(torch)
        assert str(info.value) == expected
    else:
        assert make(torch).tolist() == expected
