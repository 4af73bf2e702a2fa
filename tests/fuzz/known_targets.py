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
    # e.g. torch.add[1]/call:missing_last
    #   npgrad raises TypeError: add() missing 1 required positional arguments: "other" torch: Type
    ('error_text', 'call', 'a wrong call shape',
     "these functions are plain Python in torch, or have deprecated overloads npgrad's "
     "signatures do not model: torch's error comes from inside the function (an "
     "AttributeError on the argument, another op's parser), npgrad's from its own "
     'signature or from Python',
     """F.celu F.elu F.leaky_relu F.log_softmax F.normalize F.sigmoid F.softmax
     F.softmin F.tanh Tensor.__abs__ Tensor.__add__ Tensor.__and__ Tensor.__bool__
     Tensor.__eq__ Tensor.__float__ Tensor.__floordiv__ Tensor.__ge__ Tensor.__getitem__
     Tensor.__gt__ Tensor.__iadd__ Tensor.__imul__ Tensor.__index__ Tensor.__int__
     Tensor.__invert__ Tensor.__ipow__ Tensor.__isub__ Tensor.__itruediv__ Tensor.__le__
     Tensor.__lt__ Tensor.__matmul__ Tensor.__mod__ Tensor.__mul__ Tensor.__ne__
     Tensor.__neg__ Tensor.__or__ Tensor.__pos__ Tensor.__pow__ Tensor.__radd__
     Tensor.__rand__ Tensor.__rfloordiv__ Tensor.__rmatmul__ Tensor.__rmod__
     Tensor.__rmul__ Tensor.__ror__ Tensor.__rpow__ Tensor.__rsub__ Tensor.__rtruediv__
     Tensor.__rxor__ Tensor.__setitem__ Tensor.__sub__ Tensor.__truediv__ Tensor.__xor__
     Tensor.abs Tensor.absolute Tensor.acos Tensor.acos_ Tensor.acosh Tensor.acosh_
     Tensor.add Tensor.add_ Tensor.addbmm Tensor.addcdiv Tensor.addcdiv_ Tensor.addcmul
     Tensor.addcmul_ Tensor.addmv Tensor.addr Tensor.adjoint Tensor.angle Tensor.arccos
     Tensor.arccos_ Tensor.arccosh Tensor.arccosh_ Tensor.arcsin Tensor.arcsin_
     Tensor.arcsinh Tensor.arcsinh_ Tensor.arctan Tensor.arctan2 Tensor.arctan2_
     Tensor.arctan_ Tensor.arctanh Tensor.arctanh_ Tensor.argwhere Tensor.asin
     Tensor.asin_ Tensor.asinh Tensor.asinh_ Tensor.atan Tensor.atan_ Tensor.atanh
     Tensor.atanh_ Tensor.backward Tensor.baddbmm Tensor.bool Tensor.broadcast_to
     Tensor.byte Tensor.ceil Tensor.char Tensor.clip Tensor.conj Tensor.conj_physical
     Tensor.copy_ Tensor.cos Tensor.cosh Tensor.cosh_ Tensor.cpu Tensor.dense_dim
     Tensor.det Tensor.detach Tensor.detach_ Tensor.dim Tensor.divide Tensor.double
     Tensor.element_size Tensor.erf Tensor.erf_ Tensor.erfc Tensor.erfc_ Tensor.exp
     Tensor.exp2 Tensor.exp2_ Tensor.exp_ Tensor.expm1 Tensor.fliplr Tensor.flipud
     Tensor.float Tensor.floor Tensor.frac Tensor.get_device Tensor.half Tensor.int
     Tensor.inverse Tensor.is_complex Tensor.is_conj Tensor.is_contiguous
     Tensor.is_floating_point Tensor.is_inference Tensor.is_neg Tensor.is_pinned
     Tensor.isfinite Tensor.isinf Tensor.isnan Tensor.item Tensor.log Tensor.log10
     Tensor.log1p Tensor.log2 Tensor.logdet Tensor.logical_not Tensor.long Tensor.msort
     Tensor.multiply Tensor.ndimension Tensor.neg Tensor.neg_ Tensor.negative
     Tensor.nelement Tensor.new_tensor Tensor.nonzero Tensor.numel Tensor.numpy
     Tensor.permute Tensor.ravel Tensor.reciprocal Tensor.relu Tensor.relu_
     Tensor.requires_grad_ Tensor.reshape Tensor.resolve_conj Tensor.resolve_neg
     Tensor.retain_grad Tensor.rsqrt Tensor.sgn Tensor.short Tensor.sigmoid
     Tensor.sigmoid_ Tensor.sign Tensor.sin Tensor.sinc Tensor.sinh Tensor.sinh_
     Tensor.size Tensor.slogdet Tensor.sparse_dim Tensor.sqrt Tensor.sqrt_ Tensor.square
     Tensor.storage_offset Tensor.stride Tensor.sub Tensor.sub_ Tensor.subtract Tensor.t
     Tensor.t_ Tensor.tan Tensor.tanh Tensor.tanh_ Tensor.to Tensor.to_dense
     Tensor.tolist Tensor.trace Tensor.true_divide Tensor.trunc Tensor.view Tensor.zero_
     linalg.cond linalg.matmul special.erf special.log_softmax special.logsumexp
     special.softmax torch.add torch.addbmm torch.addcdiv torch.addcmul torch.addmv
     torch.addr torch.as_tensor torch.celu torch.from_numpy torch.mul
     torch.promote_types torch.repeat_interleave torch.row_stack torch.selu torch.sub
     torch.tensor torch.unique"""),
    # e.g. nn.Conv1d/ctor:kw:bogus_keyword
    #   npgrad raises TypeError: _ConvNd.__init__() got an unexpected keyword argument 'bogus' torc
    ('error_text', 'ctor', 'bad layer constructor arguments',
     "layer constructors pass bad sizes and probabilities on without torch's checks "
     "('Trying to create tensor with negative dimension', 'dropout probability has to "
     "be between 0 and 1')",
     """nn.AdaptiveAvgPool1d nn.AdaptiveAvgPool2d nn.BatchNorm1d nn.BatchNorm2d
     nn.CircularPad1d nn.ConstantPad1d nn.Conv1d nn.Conv2d nn.ConvTranspose1d
     nn.ConvTranspose2d nn.ReflectionPad1d nn.ReplicationPad2d nn.Unflatten nn.ZeroPad2d"""),
    # e.g. row:bmm/arg0:bool
    #   npgrad raises RuntimeError: expected scalar type Bool but found Float torch: NotImplemented
    ('error_text', 'dtype', 'an int/bool/half/other-float tensor',
     'dtypes are not checked as torch checks them: integer/bool/half or '
     "mixed-precision tensors are computed with NumPy's promotion where torch raises "
     "('not implemented for 'Long'', 'expected scalar type Float but found Double'), "
     'or fail with other text',
     """F.adaptive_avg_pool1d F.adaptive_avg_pool2d F.avg_pool1d F.avg_pool2d F.conv1d
     F.conv2d F.dropout F.dropout1d F.dropout2d F.dropout3d F.fold F.group_norm
     F.hinge_embedding_loss F.instance_norm F.interpolate F.layer_norm F.max_pool1d
     F.unfold F.upsample F.upsample_bilinear F.upsample_nearest Tensor.__invert__
     Tensor.__isub__ Tensor.__pos__ Tensor.bincount Tensor.bmm Tensor.cholesky
     Tensor.dist Tensor.geometric_ Tensor.histc Tensor.histogram Tensor.kthvalue
     Tensor.masked_fill Tensor.masked_fill_ Tensor.median Tensor.nanmedian Tensor.sub_
     Tensor.take_along_dim Tensor.topk linalg.lstsq linalg.solve linalg.solve_triangular
     nn.AvgPool1d nn.AvgPool2d nn.Dropout nn.Fold nn.GRU nn.GroupNorm
     nn.HingeEmbeddingLoss nn.InstanceNorm1d nn.InstanceNorm2d nn.LSTM nn.LayerNorm
     nn.MaxPool1d nn.RNN nn.ReflectionPad1d nn.ReplicationPad2d nn.Unfold nn.Upsample
     row:avg_pool1d row:avg_pool1d_pad_ceil row:bmm row:col2im_fold
     row:col2im_fold_stride_pad row:col2im_fold_unbatched row:conv2d_dilation
     row:diagonal_scatter row:diagonal_scatter_dims row:diagonal_scatter_src_only
     row:dist row:dist_inf row:dist_p1 row:dist_p3_broadcast row:einsum_bmm_implicit
     row:einsum_diagonal_pair row:einsum_dot row:einsum_ellipsis
     row:einsum_ellipsis_broadcast row:einsum_list row:einsum_mm row:einsum_rowdot
     row:einsum_three row:einsum_transposed_out row:hinge_embedding_loss
     row:hinge_embedding_loss_none row:im2col_unfold row:im2col_unfold_unbatched
     row:index_fill_tensor row:interpolate_area1d row:interpolate_area2d
     row:interpolate_bicubic row:interpolate_bicubic_align row:interpolate_bilinear
     row:interpolate_bilinear_align_size row:interpolate_bilinear_recompute
     row:interpolate_linear row:interpolate_linear_align row:interpolate_nearest1d
     row:interpolate_nearest2d_down row:interpolate_nearest2d_size
     row:interpolate_nearest_exact1d row:interpolate_nearest_exact2d row:kthvalue
     row:kthvalue_dim0_keep row:layer_norm row:layer_norm_affine row:linalg_cond
     row:linalg_cond_1_batch row:linalg_cond_fro row:linalg_cond_m2_wide_batch
     row:linalg_cond_minf row:linalg_cond_nuc row:linalg_eigh_abs_vectors
     row:linalg_lstsq row:linalg_lstsq_gelsd_residuals row:linalg_lstsq_square_a_only
     row:linalg_lstsq_wide_batch row:linalg_matrix_norm_2
     row:linalg_matrix_norm_m2_keepdim row:linalg_matrix_norm_nuc
     row:linalg_norm_dims_nuc row:linalg_solve row:linalg_solve_b_only
     row:linalg_solve_batch_vector row:linalg_solve_broadcast row:linalg_solve_right
     row:linalg_solve_triangular_lower_right row:linalg_solve_triangular_unit_batch
     row:linalg_solve_triangular_upper row:linalg_solve_vector
     row:linalg_svd_abs_vectors row:linalg_svd_abs_vh_wide
     row:linalg_svd_reconstruct_tall row:linalg_svd_reconstruct_wide row:linalg_svdvals
     row:matmul_1_3 row:matmul_1_3_only_a row:matmul_2_3 row:matmul_2_3_only_b
     row:matmul_2_3_transpose row:matmul_3_3 row:matmul_4_3 row:matmul_batch1_squeeze
     row:matmul_broadcast row:median row:median_dim row:median_dim_keep row:nanmedian
     row:nanmedian_dim row:pad_reflect1d row:pad_reflect2d row:pad_reflect3d
     row:pad_replicate1d row:pad_replicate2d row:pad_replicate3d row:select_scatter
     row:select_scatter_neg row:slice_scatter row:slice_scatter_start
     row:svd_torch_abs_v row:svd_torch_no_uv row:svd_torch_reconstruct row:topk
     row:topk_all row:topk_smallest_dim0 torch.bincount torch.bmm torch.dist
     torch.einsum torch.histc torch.kthvalue torch.masked_fill torch.median
     torch.nanmedian torch.take_along_dim torch.topk"""),
    # e.g. row:linalg_cholesky/arg0:nan_inf
    #   npgrad returns ('tensor', (3, 3), 'float32', True, array([[nan, 0., 0.], [nan, nan, 0.], [n
    ('error_text', 'nan_inf', 'NaN/inf inputs',
     "NaN/inf values make the op fail differently from torch (e.g. NumPy's cast of NaN "
     'to an index)',
     """Tensor.cholesky Tensor.histc linalg.cholesky linalg.eigh linalg.eigvalsh
     linalg.lstsq row:cholesky_solve row:cholesky_solve_upper_batch row:linalg_cholesky
     row:linalg_cholesky_upper_batch row:linalg_eigh_abs_vectors
     row:linalg_eigh_reconstruct row:linalg_eigh_values row:linalg_eigvalsh
     row:linalg_eigvalsh_upper_batch row:linalg_lstsq row:linalg_lstsq_gelsd_residuals
     row:linalg_lstsq_square_a_only row:linalg_lstsq_wide_batch
     row:normal_tensor_mean_std row:normal_tensor_std torch.histc"""),
    # e.g. row:mul_broadcast/arg0:str
    #   npgrad raises TypeError: mul() received an invalid combination of arguments - got (str, Ten
    ('error_text', 'non_tensor', 'a non-Tensor argument',
     "no signature check yet: torch's function is plain Python (F.*_loss, meshgrid, "
     'block_diag, einsum, broadcast_tensors ...) whose error comes from the first op '
     "it calls on the argument, or a factory without a signature; npgrad's body "
     'reaches `._data` first',
     """F.normalize F.sigmoid F.softsign F.tanh Tensor.arctan2 Tensor.arctan2_
     Tensor.clip Tensor.copy_ Tensor.divide Tensor.multiply Tensor.new_tensor
     Tensor.subtract Tensor.true_divide linalg.matmul nn.CircularPad1d nn.LogSoftmax
     nn.Softmax nn.Softmin nn.Softsign row:celu_inplace row:cholesky_solve
     row:cholesky_solve_raw_factor row:cholesky_solve_upper_batch row:det
     row:elu_inplace row:hardsigmoid_inplace row:hardtanh_inplace row:leaky_relu_inplace
     row:log_softmax_functional row:mul_broadcast row:norm_dim row:norm_neginf
     row:normalize row:normalize_p1_dim0 row:pinverse row:qr_torch row:relu6_inplace
     row:selu_inplace row:slogdet row:softmax_functional row:softmin
     row:softmin_dim0_dtype row:softsign special.erf special.log_softmax
     special.logsumexp special.softmax torch.as_tensor torch.mul torch.norm torch.tensor"""),
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
     """F.avg_pool1d F.avg_pool2d F.fold F.group_norm F.interpolate F.layer_norm
     F.lp_pool1d F.lp_pool2d F.max_pool1d F.unfold F.upsample F.upsample_bilinear
     F.upsample_nearest Tensor.matrix_power Tensor.new_empty Tensor.new_ones
     Tensor.new_zeros Tensor.tile Tensor.unflatten linalg.matrix_power
     special.log_softmax special.logsumexp special.softmax torch.arange torch.eye
     torch.randint torch.row_stack torch.unflatten"""),
    # e.g. row:clamp_tensor/arg0:empty
    #   npgrad raises ValueError: operands could not be broadcast together with shapes (0,3) (2,3)
    ('error_text', 'shape', 'a mismatched, empty or 0-dim shape',
     "shapes reach NumPy unchecked ('operands could not be broadcast together', "
     "unpacking errors) or are reported with other text than torch's size messages",
     """F.adaptive_avg_pool2d F.adaptive_max_pool1d F.adaptive_max_pool2d F.avg_pool1d
     F.avg_pool2d F.dropout2d F.dropout3d F.fold F.linear F.lp_pool1d F.lp_pool2d
     F.max_pool1d F.scaled_dot_product_attention F.unfold Tensor.__getitem__
     Tensor.cholesky Tensor.clamp Tensor.clamp_ Tensor.clip Tensor.copy_ Tensor.cross
     Tensor.cummax Tensor.cummin Tensor.index_add Tensor.index_add_ Tensor.index_copy
     Tensor.index_copy_ Tensor.index_fill Tensor.index_fill_ Tensor.index_put
     Tensor.index_put_ Tensor.logdet Tensor.masked_fill_ Tensor.masked_scatter
     Tensor.masked_scatter_ Tensor.mv Tensor.slice_scatter Tensor.svd Tensor.take
     linalg.lstsq linalg.solve nn.AdaptiveMaxPool1d nn.AdaptiveMaxPool2d nn.AvgPool2d
     nn.CircularPad1d nn.Flatten nn.Fold nn.GRU nn.LPPool2d nn.LSTM nn.Linear
     nn.MaxPool1d nn.RNN nn.ReflectionPad1d nn.ReplicationPad2d nn.Unfold
     row:adaptive_max_pool1d row:adaptive_max_pool2d row:adaptive_max_pool2d_indices
     row:cholesky_solve row:cholesky_solve_upper_batch row:clamp_tensor
     row:clamp_tensor_broadcast row:clamp_tensor_max row:clamp_tensor_min
     row:clamp_tensor_ordered row:col2im_fold row:col2im_fold_stride_pad
     row:col2im_fold_unbatched row:cross_entropy_1d row:cross_entropy_weight_ignore
     row:cummax row:einsum_ellipsis row:embedding row:expand_keep row:flatten_fn
     row:flatten_noop row:flatten_part row:getitem_0d_tensor row:getitem_2d_index
     row:getitem_list row:getitem_neg_int row:getitem_split_adv row:getitem_tensor
     row:getitem_two_lists row:im2col_unfold row:im2col_unfold_unbatched row:index_add
     row:index_add_alpha row:index_copy row:index_copy_fn row:index_copy_inplace
     row:index_fill_inplace row:index_fill_tensor row:index_put row:index_put_accumulate
     row:index_put_broadcast row:index_put_inplace row:index_put_inplace_accumulate
     row:index_select row:interpolate_bicubic row:interpolate_nearest2d_down
     row:kthvalue_dim0_keep row:linalg_cholesky row:linalg_cholesky_upper_batch
     row:linalg_eigh_abs_vectors row:linalg_eigh_reconstruct row:linalg_eigh_values
     row:linalg_eigvalsh row:linalg_eigvalsh_upper_batch row:linalg_lstsq
     row:linalg_lstsq_gelsd_residuals row:linalg_lstsq_square_a_only
     row:linalg_lstsq_wide_batch row:linalg_solve row:linalg_solve_b_only
     row:linalg_solve_batch_vector row:linalg_solve_broadcast row:linalg_solve_right
     row:linalg_solve_vector row:logdet row:lp_pool2d row:masked_scatter
     row:masked_scatter_broadcast_mask row:masked_scatter_inplace row:meshgrid_ij
     row:meshgrid_xy row:mv row:pad_circular1d row:pad_circular2d row:pad_reflect1d
     row:pad_reflect2d row:pad_reflect3d row:pad_replicate1d row:pad_replicate2d
     row:pad_replicate3d row:repeat_interleave_tensor row:setitem_dup_list
     row:setitem_list row:setitem_trivial_then_list row:setitem_view_then_list
     row:slice_scatter row:slice_scatter_start row:svd_torch_values_batch row:take
     row:take_0d row:take_2d_index row:take_along_dim row:tensor_logdet row:unbind
     torch.clamp torch.clip torch.cross torch.cummax torch.cummin torch.flip
     torch.index_add torch.index_copy torch.index_fill torch.index_put
     torch.masked_scatter torch.meshgrid torch.mv torch.slice_scatter torch.take"""),
    # e.g. F.adaptive_avg_pool2d[2]
    #   npgrad raises RuntimeError: adaptive_avg_pool2d(): Expected 3D or 4D tensor, but got [2, 3]
    ('rejected_where_torch_accepts', 'base', 'the valid base call itself',
     'npgrad requires more dims than torch (adaptive_avg_pool2d takes a 2-D input as '
     '(C, H, W) in torch), so every variant of that base call differs too',
     """F.adaptive_avg_pool2d"""),
    # e.g. nn.Unflatten/ctor:arg0:float
    #   npgrad raises TypeError: invalid argument type for dim parameter torch: returns ('list', ()
    ('rejected_where_torch_accepts', 'ctor', 'bad layer constructor arguments',
     'constructor arguments torch accepts are refused',
     """nn.Unflatten"""),
    # e.g. row:normal_tensor_mean_std/arg1:int64
    #   npgrad raises NotImplementedError: "normal_kernel_cpu" not implemented for 'Long' torch: re
    ('rejected_where_torch_accepts', 'dtype', 'an int/bool/half/other-float tensor',
     'integer or half inputs torch promotes are refused (adaptive_avg_pool2d of a 2-D '
     "input, normal's tensor mean/std, view_as_complex)",
     """F.adaptive_avg_pool2d row:normal_tensor_mean_std row:view_as_complex_conj_imag
     row:view_as_complex_real"""),
    # e.g. F.adaptive_avg_pool2d[2]/arg0:nan_inf
    #   npgrad raises RuntimeError: adaptive_avg_pool2d(): Expected 3D or 4D tensor, but got [2, 3]
    ('rejected_where_torch_accepts', 'nan_inf', 'NaN/inf inputs',
     'the base call already differs (see its rule)',
     """F.adaptive_avg_pool2d"""),
    # e.g. row:setitem_int/arg0:noncontig
    #   npgrad raises RuntimeError: npgrad: an in-place write through a view of a tensor in a graph
    ('rejected_where_torch_accepts', 'noncontig', 'non-contiguous inputs',
     'an in-place write through a view of a non-contiguous base is refused (npgrad: '
     "'needs a C-contiguous base'); torch writes through any strides",
     """F.adaptive_avg_pool2d row:setitem_broadcast row:setitem_int
     row:setitem_leading_ones row:setitem_scalar row:setitem_step
     row:setitem_view_then_list"""),
    # e.g. F.adaptive_avg_pool2d[2]/arg0:requires_grad
    #   npgrad raises RuntimeError: adaptive_avg_pool2d(): Expected 3D or 4D tensor, but got [2, 3]
    ('rejected_where_torch_accepts', 'requires_grad', 'inputs requiring grad',
     'the base call already differs',
     """F.adaptive_avg_pool2d"""),
    # e.g. torch.eye[13]/arg0:tensor_0d
    #   npgrad raises OverflowError: int too big to convert torch: returns ('tensor', (2, 3), 'floa
    ('rejected_where_torch_accepts', 'scalar', 'a bad scalar argument',
     "0-dim tensors as sizes or counts (eye, linspace), tensors as fold's output_size, "
     'and non-int Unflatten dims torch only checks on forward, are refused',
     """torch.eye torch.linspace"""),
    # e.g. row:mT/arg0:zero_dim
    #   npgrad raises RuntimeError: tensor.mT is only supported on matrices or batches of matrices.
    ('rejected_where_torch_accepts', 'shape', 'a mismatched, empty or 0-dim shape',
     'edge shapes torch handles are refused: mT of a 0-dim tensor, writes into empty '
     "tensors ('more than one element ... refers to a single memory location'), "
     'index_add into empty inputs',
     """F.adaptive_avg_pool2d F.interpolate F.scaled_dot_product_attention F.upsample
     F.upsample_nearest Tensor.cholesky linalg.cond nn.Upsample
     row:bernoulli_inplace_tensor_p row:index_add row:index_add_inplace row:linalg_cond
     row:linalg_matrix_norm_2 row:linalg_matrix_norm_inf_dim row:mT
     row:setitem_broadcast row:setitem_scalar_whole row:setitem_tensor_whole"""),
    # e.g. row:addr/arg0:other_float
    #   result: dtype float32 where torch gives float64
    ('wrong_result', 'dtype', 'an int/bool/half/other-float tensor',
     'result dtypes of mixed or integer inputs differ: addr and solve_triangular '
     "promote where torch keeps the first input's dtype or refuses to (float64 where "
     'torch gives float32), hinge_embedding_loss makes an int64 input float32, '
     'GroupNorm computes a float16 input in float32, instance_norm of float16 rounds '
     "differently; kthvalue picks another index among equal values (torch's "
     'quickselect order, unspecified)',
     """F.instance_norm Tensor.addr Tensor.kthvalue linalg.solve_triangular nn.GroupNorm
     row:addr row:addr_scaled row:hinge_embedding_loss_none
     row:linalg_solve_triangular_lower_right row:linalg_solve_triangular_unit_batch
     row:linalg_solve_triangular_upper torch.addr torch.kthvalue"""),
    # e.g. F.lp_pool1d[32]/arg1:huge_float
    #   result: values array([[1.], [1.]], dtype=float32) where torch gives array([[0.], [0.]], dty
    ('wrong_result', 'huge', 'huge sizes',
     "lp_pool with a huge norm_type: npgrad's pow with a Python-float exponent rounds "
     'the exponent to float32 (1/1e308 becomes 0, so 0 ** 0 = 1); torch keeps it in '
     'double',
     """F.lp_pool1d F.lp_pool2d"""),
    # e.g. row:mode/arg0:nan_inf
    #   result: values array([ -inf, -1.6373434 , -0.97118986], dtype=float32) where torch gives ar
    ('wrong_result', 'nan_inf', 'NaN/inf inputs',
     'NaN/inf propagate differently: interpolation and adaptive average pooling spread '
     'a NaN to neighbouring outputs (they multiply by weight matrices, 0 * nan = nan), '
     "batch norm and var_mean/std_mean of inf (torch's Welford gives nan), mode with "
     'NaN, QR/solve_triangular/multi_dot/slogdet of non-finite matrices (LAPACK paths '
     "differ), gelu(inf) (torch's vectorised erf gives nan)",
     """F.gelu F.upsample_bilinear Tensor.mode Tensor.slogdet linalg.slogdet
     linalg.solve_triangular nn.AdaptiveAvgPool1d nn.AdaptiveAvgPool2d nn.GELU
     row:adaptive_avg_pool1d row:batch_norm_eval row:batch_norm_train row:gelu
     row:interpolate_area1d row:interpolate_area2d row:interpolate_bicubic
     row:interpolate_bicubic_align row:interpolate_bilinear
     row:interpolate_bilinear_align_size row:interpolate_bilinear_recompute
     row:interpolate_linear row:interpolate_linear_align row:linalg_multi_dot
     row:linalg_qr row:linalg_qr_complete_square row:linalg_qr_square_batch
     row:linalg_solve_triangular_lower_right row:linalg_solve_triangular_upper row:mode
     row:qr_torch row:qr_torch_method_square row:std_mean_dim row:var_mean_only_mean
     torch.mode"""),
    # e.g. linalg.matrix_power[39]/arg1:dim_too_small
    #   result: values array([[[[ 4.18665531e+05, 2.52296188e+05, -2.76394500e+05, 7.50778250e+05,
    ('wrong_result', 'scalar', 'a bad scalar argument',
     'matrix_power with a negative exponent of an ill-conditioned float32 matrix: the '
     'inverse raised to the 7th power amplifies float32 rounding of the two LAPACK '
     'paths beyond float32 tolerance',
     """Tensor.matrix_power linalg.matrix_power"""),
    # e.g. row:addmv_scaled/arg1:empty
    #   result: shape (0,) where torch gives (1,)
    ('wrong_result', 'shape', 'a mismatched, empty or 0-dim shape',
     "edge shapes: pixel_unshuffle of an empty input keeps the input's shape in torch "
     '(its early exit); torch.tensor of an empty NumPy array reports all-zero strides; '
     'addmv with an empty matrix broadcasts the input differently; linalg.cond of an '
     'empty batch requires grad; lstsq of a rank-deficient wide batch rounds beyond '
     'float32 tolerance',
     """F.pixel_unshuffle Tensor.stride nn.PixelUnshuffle row:addmv_scaled
     row:linalg_cond_1_batch row:linalg_cond_m2_wide_batch row:linalg_lstsq_wide_batch
     row:pixel_unshuffle"""),
]
