"""Data for tests/fuzz/known_differences.py: the targets on which each listed difference was
seen (other error text after a bad dtype, shape or edge value; silent wrong results; refusals
of inputs torch accepts; crashes), per kind of fuzzed argument (a bucket).

Each entry: (mismatch category, or "error_text" for the error-text categories; bucket; title;
reason; whitespace-separated targets).  A bucket is a predicate over the case (``BUCKETS`` in
known_differences.py).  When a fix lands, delete its targets (or the entry); the comment above
an entry is one example of it.  Recorded with torch 2.13 and the working tree of 2 Dec 2026.
"""
from __future__ import annotations

LISTED: list[tuple[str, str, str, str, str]] = [
    # e.g. Tensor.bfloat16[none]
    #   npgrad returns ('tensor', (2, 3), 'bfloat16', False, array([[0.179688, 0.738281, 0.589844],
    ('error_text', 'base', 'the valid base call itself',
     'the valid base call already fails differently from torch',
     """Tensor.bfloat16"""),
    # e.g. torch.as_tensor[0]/call:missing_last
    #   npgrad raises TypeError: as_tensor() missing 1 required positional argument: 'data' torch:
    ('error_text', 'call', 'a wrong call shape',
     "these functions are plain Python in torch, or have deprecated overloads npgrad's "
     "signatures do not model: torch's error comes from inside the function (an "
     "AttributeError on the argument, another op's parser), npgrad's from its own "
     'signature or from Python',
     """F.log_softmax F.normalize F.softmax F.softmin Tensor.__abs__ Tensor.__add__
     Tensor.__and__ Tensor.__bool__ Tensor.__eq__ Tensor.__float__ Tensor.__floordiv__
     Tensor.__ge__ Tensor.__getitem__ Tensor.__gt__ Tensor.__iadd__ Tensor.__imul__
     Tensor.__index__ Tensor.__int__ Tensor.__invert__ Tensor.__ipow__ Tensor.__isub__
     Tensor.__itruediv__ Tensor.__le__ Tensor.__lt__ Tensor.__matmul__ Tensor.__mod__
     Tensor.__mul__ Tensor.__ne__ Tensor.__neg__ Tensor.__or__ Tensor.__pos__
     Tensor.__pow__ Tensor.__radd__ Tensor.__rand__ Tensor.__rfloordiv__
     Tensor.__rmatmul__ Tensor.__rmod__ Tensor.__rmul__ Tensor.__ror__ Tensor.__rpow__
     Tensor.__rsub__ Tensor.__rtruediv__ Tensor.__rxor__ Tensor.__setitem__
     Tensor.__sub__ Tensor.__truediv__ Tensor.__xor__ Tensor.abs Tensor.absolute
     Tensor.acos Tensor.acos_ Tensor.acosh Tensor.acosh_ Tensor.adjoint Tensor.angle
     Tensor.arccos Tensor.arccos_ Tensor.arccosh Tensor.arccosh_ Tensor.arcsin
     Tensor.arcsin_ Tensor.arcsinh Tensor.arcsinh_ Tensor.arctan Tensor.arctan_
     Tensor.arctanh Tensor.arctanh_ Tensor.argwhere Tensor.asin Tensor.asin_
     Tensor.asinh Tensor.asinh_ Tensor.atan Tensor.atan_ Tensor.atanh Tensor.atanh_
     Tensor.ceil Tensor.conj Tensor.conj_physical Tensor.cos Tensor.cosh Tensor.cosh_
     Tensor.dense_dim Tensor.det Tensor.detach Tensor.detach_ Tensor.dim Tensor.divide
     Tensor.element_size Tensor.erf Tensor.erf_ Tensor.erfc Tensor.erfc_ Tensor.exp
     Tensor.exp2 Tensor.exp2_ Tensor.exp_ Tensor.expm1 Tensor.fliplr Tensor.flipud
     Tensor.floor Tensor.frac Tensor.get_device Tensor.inverse Tensor.is_complex
     Tensor.is_conj Tensor.is_floating_point Tensor.is_inference Tensor.is_neg
     Tensor.is_pinned Tensor.isfinite Tensor.isinf Tensor.isnan Tensor.item Tensor.log
     Tensor.log10 Tensor.log1p Tensor.log2 Tensor.logdet Tensor.logical_not Tensor.msort
     Tensor.ndimension Tensor.neg Tensor.neg_ Tensor.negative Tensor.nelement
     Tensor.numel Tensor.ravel Tensor.reciprocal Tensor.relu Tensor.relu_
     Tensor.resolve_conj Tensor.resolve_neg Tensor.retain_grad Tensor.rsqrt Tensor.sgn
     Tensor.sigmoid Tensor.sigmoid_ Tensor.sign Tensor.sin Tensor.sinc Tensor.sinh
     Tensor.sinh_ Tensor.size Tensor.slogdet Tensor.sparse_dim Tensor.sqrt Tensor.sqrt_
     Tensor.square Tensor.storage_offset Tensor.stride Tensor.t Tensor.t_ Tensor.tan
     Tensor.tanh Tensor.tanh_ Tensor.to Tensor.tolist Tensor.trace Tensor.true_divide
     Tensor.trunc Tensor.zero_ linalg.cond torch.as_tensor torch.mul torch.promote_types
     torch.repeat_interleave torch.tensor torch.unique"""),
    # e.g. row:index_fill_tensor/arg0:int64
    #   npgrad returns ('tensor', (3, 4), 'int64', True, array([[ 4, 5, 3, 3], [-1, -1, -1, -1], [-
    ('error_text', 'dtype', 'an int/bool/half/other-float tensor',
     'dtypes are not checked as torch checks them: integer/bool/half or '
     "mixed-precision tensors are computed with NumPy's promotion where torch raises "
     "('not implemented for 'Long'', 'expected scalar type Float but found Double'), "
     'or fail with other text',
     """Tensor.bincount Tensor.geometric_ Tensor.histc Tensor.histogram
     Tensor.masked_fill Tensor.masked_fill_ Tensor.take_along_dim linalg.lstsq
     linalg.solve nn.GRU nn.LSTM nn.RNN row:diagonal_scatter row:diagonal_scatter_dims
     row:diagonal_scatter_src_only row:einsum_transposed_out row:index_fill_tensor
     row:linalg_lstsq row:linalg_lstsq_gelsd_residuals row:linalg_lstsq_square_a_only
     row:linalg_lstsq_wide_batch row:linalg_solve row:linalg_solve_b_only
     row:linalg_solve_batch_vector row:linalg_solve_broadcast row:linalg_solve_right
     row:linalg_solve_vector row:select_scatter row:select_scatter_neg row:slice_scatter
     row:slice_scatter_start torch.bincount torch.histc torch.masked_fill
     torch.take_along_dim"""),
    # e.g. row:linalg_cholesky/arg0:nan_inf
    #   npgrad returns ('tensor', (3, 3), 'float32', True, array([[nan, 0., 0.], [nan, nan, 0.], [n
    ('error_text', 'nan_inf', 'NaN/inf inputs',
     "NaN/inf values make the op fail differently from torch (e.g. NumPy's cast of NaN "
     'to an index)',
     """Tensor.cholesky Tensor.histc linalg.cholesky linalg.lstsq row:cholesky_solve
     row:cholesky_solve_upper_batch row:linalg_cholesky row:linalg_cholesky_upper_batch
     row:linalg_eigvalsh row:linalg_eigvalsh_upper_batch row:linalg_lstsq
     row:linalg_lstsq_gelsd_residuals row:linalg_lstsq_square_a_only
     row:linalg_lstsq_wide_batch row:normal_tensor_mean_std row:normal_tensor_std
     torch.histc"""),
    # e.g. row:mul_broadcast/arg0:str
    #   npgrad raises TypeError: mul() received an invalid combination of arguments - got (str, Ten
    ('error_text', 'non_tensor', 'a non-Tensor argument',
     "no signature check yet: torch's function is plain Python (F.*_loss, meshgrid, "
     'block_diag, einsum, broadcast_tensors ...) whose error comes from the first op '
     "it calls on the argument, or a factory without a signature; npgrad's body "
     'reaches `._data` first',
     """Tensor.divide Tensor.true_divide row:det row:mul_broadcast torch.mul"""),
    # e.g. row:kron/arg0:noncontig
    #   npgrad returns ('tensor', (4, 6), 'float32', True, array([[ 0.19413331, -0.12647875, 0.3797
    ('error_text', 'noncontig', 'non-contiguous inputs',
     'a non-contiguous input makes the op fail differently',
     """Tensor.kron row:kron row:kron_ranks torch.kron"""),
    # e.g. F.batch_norm[94]/arg1:requires_grad
    #   npgrad returns ('tensor', (4, 3), 'float32', False, array([[-0.13724539, -0.32560927, -0.24
    ('error_text', 'requires_grad', 'inputs requiring grad',
     'an input that requires grad makes the op fail differently (or pass where torch '
     'raises)',
     """F.batch_norm"""),
    # e.g. torch.arange[13]/arg0:nan
    #   npgrad raises RuntimeError: invalid size, possible overflow? torch: RuntimeError: unsupport
    ('error_text', 'scalar', 'a bad scalar argument',
     "a wrong value (out-of-range dim, size, mode string) or scalar type where torch's "
     'Python-level function or kernel words the error differently; each needs its own '
     'check in the op',
     """F.group_norm F.interpolate F.layer_norm F.max_pool1d F.upsample
     F.upsample_bilinear F.upsample_nearest Tensor.unflatten torch.arange torch.eye
     torch.unflatten"""),
    # e.g. row:flatten_fn/arg0:zero_dim
    #   npgrad returns ('tensor', (1,), 'float32', True, array([-0.562162], dtype=float32)); torch
    ('error_text', 'shape', 'a mismatched, empty or 0-dim shape',
     "shapes reach NumPy unchecked ('operands could not be broadcast together', "
     "unpacking errors) or are reported with other text than torch's size messages",
     """F.avg_pool1d F.avg_pool2d F.linear F.lp_pool1d F.lp_pool2d
     F.scaled_dot_product_attention Tensor.__getitem__ Tensor.cross Tensor.cummax
     Tensor.cummin Tensor.index_copy Tensor.index_copy_ Tensor.index_fill
     Tensor.index_fill_ Tensor.index_put Tensor.index_put_ Tensor.logdet
     Tensor.masked_fill_ Tensor.masked_scatter Tensor.masked_scatter_ Tensor.svd
     Tensor.take linalg.lstsq nn.AvgPool2d nn.Flatten nn.GRU nn.LPPool2d nn.LSTM
     nn.Linear nn.RNN nn.ReflectionPad1d nn.ReplicationPad2d row:cholesky_solve
     row:cholesky_solve_upper_batch row:cross_entropy_weight_ignore row:cummax
     row:einsum_ellipsis row:embedding row:expand_keep row:flatten_fn row:flatten_noop
     row:flatten_part row:getitem_0d_tensor row:getitem_neg_int row:im2col_unfold
     row:im2col_unfold_unbatched row:index_copy row:index_copy_fn row:index_copy_inplace
     row:index_fill_inplace row:index_fill_tensor row:index_put row:index_put_accumulate
     row:index_put_broadcast row:index_put_inplace row:index_put_inplace_accumulate
     row:interpolate_bicubic row:interpolate_nearest2d_down row:linalg_cholesky
     row:linalg_cholesky_upper_batch row:linalg_eigh_abs_vectors
     row:linalg_eigh_reconstruct row:linalg_eigh_values row:linalg_eigvalsh
     row:linalg_eigvalsh_upper_batch row:linalg_lstsq row:linalg_lstsq_gelsd_residuals
     row:linalg_lstsq_square_a_only row:linalg_lstsq_wide_batch row:logdet row:lp_pool2d
     row:masked_scatter row:masked_scatter_broadcast_mask row:masked_scatter_inplace
     row:meshgrid_ij row:meshgrid_xy row:pad_circular1d row:pad_circular2d
     row:pad_reflect1d row:pad_reflect2d row:pad_reflect3d row:pad_replicate1d
     row:pad_replicate2d row:pad_replicate3d row:svd_torch_values_batch row:take
     row:take_0d row:take_2d_index row:take_along_dim row:tensor_logdet row:unbind
     torch.cross torch.cummax torch.cummin torch.index_copy torch.index_fill
     torch.index_put torch.masked_scatter torch.meshgrid torch.take"""),
    # e.g. row:view_as_complex_conj_imag/arg0:float16
    #   npgrad raises TypeError: npgrad does not support complex32 (torch.chalf) tensors: NumPy has
    ('rejected_where_torch_accepts', 'dtype', 'an int/bool/half/other-float tensor',
     'integer or half inputs torch promotes are refused (adaptive_avg_pool2d of a 2-D '
     "input, normal's tensor mean/std, view_as_complex)",
     """row:view_as_complex_conj_imag row:view_as_complex_real"""),
    # e.g. row:bernoulli_inplace_tensor_p/arg0:empty
    #   npgrad raises RuntimeError: The expanded size of the tensor (0) must match the existing siz
    ('rejected_where_torch_accepts', 'shape', 'a mismatched, empty or 0-dim shape',
     'edge shapes torch handles are refused: mT of a 0-dim tensor, writes into empty '
     "tensors ('more than one element ... refers to a single memory location'), "
     'index_add into empty inputs',
     """F.interpolate F.scaled_dot_product_attention F.upsample F.upsample_nearest
     nn.Upsample row:bernoulli_inplace_tensor_p"""),
    # e.g. row:linalg_qr/arg0:nan_inf
    #   result[1]: values array([[nan, nan, nan], [ 0., nan, nan], [ 0., 0., nan]], dtype=float32)
    ('wrong_result', 'nan_inf', 'NaN/inf inputs',
     "QR of a matrix with NaN/inf: torch's LAPACK (its Householder norm) keeps R's "
     "finite diagonal entries where NumPy's LAPACK gives NaN; a library's NaN "
     'handling, not a formula',
     """row:linalg_qr row:linalg_qr_complete_square row:linalg_qr_square_batch
     row:qr_torch row:qr_torch_method_square"""),
    # e.g. linalg.matrix_power[39]/arg1:dim_too_small
    #   result: values array([[[[ 4.18665531e+05, 2.52296188e+05, -2.76394500e+05, 7.50778250e+05,
    ('wrong_result', 'scalar', 'a bad scalar argument',
     'matrix_power with a negative exponent of an ill-conditioned float32 matrix: the '
     'inverse raised to the 7th power amplifies float32 rounding of the two LAPACK '
     'paths beyond float32 tolerance',
     """Tensor.matrix_power linalg.matrix_power"""),
    # e.g. row:linalg_lstsq_wide_batch/arg0:shape_mismatch
    #   result: values array([[[-6.872735 ], [ 0.7937199 ], [18.123343 ], [ 0.05865012]], [[ 2.4078
    ('wrong_result', 'shape', 'a mismatched, empty or 0-dim shape',
     'torch.tensor of an empty NumPy array reports all-zero strides (npgrad: '
     'contiguous ones); lstsq of a rank-deficient wide batch rounds beyond float32 '
     'tolerance (two LAPACK builds)',
     """Tensor.stride row:linalg_lstsq_wide_batch"""),
]
