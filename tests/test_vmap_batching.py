"""vmap on batched values (Note [Batched values] in npgrad.func._batched): each batching rule
against the loop over samples and against torch.func.vmap (values, dtype, shape), with no
fallback taken; the per-op fallback and its warning; torch's refusals (.item(), control flow,
in-place writes into unbatched tensors); nested vmaps and vmap over the transforms."""
from __future__ import annotations

import warnings
from typing import Any, Callable

import numpy as np
import pytest

import npgrad
from npgrad.func import _vmap as vmap_module
from npgrad.func._pytree import tree_flatten

B = 3
RNG = np.random.default_rng(7)
A34 = RNG.standard_normal((B, 3, 4))
A4 = RNG.standard_normal((B, 4))
P34 = RNG.standard_normal((3, 4))
P4 = RNG.standard_normal(4)
M45 = RNG.standard_normal((B, 4, 5))
P45 = RNG.standard_normal((4, 5))
LOGITS = RNG.standard_normal((B, 2, 5))
LABELS = RNG.integers(0, 5, (B, 2))
SPD = RNG.standard_normal((B, 3, 3))
SPD = SPD @ SPD.transpose(0, 2, 1) + 3 * np.eye(3)  # symmetric positive definite samples
IDX = RNG.integers(0, 4, (B, 3, 4))
IMG = RNG.standard_normal((B, 2, 3, 5, 5))  # per sample (N, C, H, W)
W2 = RNG.standard_normal((4, 3, 3, 3))
WB = RNG.standard_normal((B, 4, 3, 3, 3))  # one conv weight per sample
P5 = RNG.standard_normal(5)


def _case(name: str, fn: Callable, arrays: tuple, in_dims: Any = 0, out_dims: Any = 0) -> Any:
    return pytest.param(fn, arrays, in_dims, out_dims, id=name)


def F(m: Any) -> Any:
    return m.nn.functional


# (fn(m, *tensors), inputs, in_dims, out_dims): each must run on batched values by its rule
RULE_CASES = [
    _case("sin", lambda m, x: m.sin(x), (A34,)),
    _case("method_exp", lambda m, x: x.exp(), (A34,)),
    _case("arith_ops", lambda m, x: x * 2 + 1 - x / 3, (A34,)),
    _case("add_plain", lambda m, x, p: x + p, (A34, P4), (0, None)),
    _case("reflected_sub", lambda m, x, p: p - x, (A4, P34), (0, None)),
    _case("reflected_pow_scalar", lambda m, x: 2 ** x, (A4,)),
    _case("mul_both_in_dim1", lambda m, x, y: x * y, (A34, A34.transpose(1, 0, 2)), (0, 1)),
    _case("compare", lambda m, x: x > 0, (A34,)),
    _case("where", lambda m, x, p: m.where(x > 0, x, p), (A34, P4), (0, None)),
    _case("clamp", lambda m, x: x.clamp(-0.5, 0.5), (A34,)),
    _case("relu_gelu_tanh", lambda m, x: F(m).gelu(F(m).relu(x)).tanh(), (A34,)),
    _case("sigmoid_inplace_clone", lambda m, x: x.clone().sigmoid_(), (A34,)),
    _case("masked_fill", lambda m, x: x.masked_fill(x < 0, 0.5), (A34,)),
    _case("masked_fill_batched_value", lambda m, v: m.tensor(P4).masked_fill(
        m.tensor(P4) > 0, v), (A34[:, 0, 0],)),
    _case("promote_0dim_sample", lambda m, x, p: x * p, (A4[:, 0], P4.astype(np.float32)),
          (0, None)),
    _case("sum_all", lambda m, x: x.sum(), (A34,)),
    _case("sum_dim", lambda m, x: x.sum(0), (A34,)),
    _case("sum_keepdim", lambda m, x: m.sum(x, -1, keepdim=True), (A34,)),
    _case("sum_dim_none", lambda m, x: x.sum(dim=None), (A34,)),
    _case("mean_tuple", lambda m, x: x.mean(dim=(0, 1)), (A34,)),
    _case("mean_0dim", lambda m, x: x.mean(), (A4[:, 0],)),
    _case("amax", lambda m, x: x.amax(1), (A34,)),
    _case("max_dim", lambda m, x: x.max(1), (A34,)),
    _case("max_all", lambda m, x: x.max(), (A34,)),
    _case("argmax_all", lambda m, x: x.argmax(), (A34,)),
    _case("var_std", lambda m, x: (x.var(1), x.std()), (A34,)),
    _case("logsumexp", lambda m, x: m.logsumexp(x, 1), (A34,)),
    _case("cumsum", lambda m, x: x.cumsum(0), (A34,)),
    _case("softmax", lambda m, x: F(m).softmax(x, -1), (A34,)),
    _case("log_softmax", lambda m, x: F(m).log_softmax(x, dim=1), (A34,)),
    _case("sort", lambda m, x: x.sort(0), (A34,)),
    _case("view", lambda m, x: x.view(-1), (A34,)),
    _case("reshape", lambda m, x: x.reshape(2, -1), (A34,)),
    _case("unsqueeze_squeeze", lambda m, x: x.unsqueeze(0).unsqueeze(-1).squeeze(), (A34,)),
    _case("transpose", lambda m, x: x.transpose(0, 1), (A34,)),
    _case("t_and_T", lambda m, x: (x.t(), x.T), (A34,)),
    _case("permute", lambda m, x: x.permute(1, 0), (A34,)),
    _case("flatten", lambda m, x: x.flatten(), (A34,)),
    _case("getitem_int", lambda m, x: x[0], (A34,)),
    _case("getitem_slices", lambda m, x: x[:, 1:], (A34,)),
    _case("getitem_none_ellipsis", lambda m, x: x[..., None, 1], (A34,)),
    _case("getitem_index_tensor", lambda m, x: x[m.tensor([2, 0])], (A34,)),
    _case("expand", lambda m, x: x.expand(2, 4), (A4,)),
    _case("unbind", lambda m, x: x.unbind(1), (A34,)),
    _case("split", lambda m, x: x.split(2, dim=1), (A34,)),
    _case("cat", lambda m, x, p: m.cat([x, p], 1), (A34, P34), (0, None)),
    _case("stack", lambda m, x, y: m.stack([x, y]), (A34, A34 * 2)),
    _case("setitem_batched_self", lambda m, x: _setitem(x.clone(), 0, 1.5), (A34,)),
    _case("mm_both", lambda m, x, y: x.mm(y), (A34, M45)),
    _case("matmul_plain_right", lambda m, x, p: m.matmul(x, p), (A34, P45), (0, None)),
    _case("matmul_plain_left", lambda m, p, x: p @ x, (P34, M45), (None, 0)),
    _case("matmul_vec", lambda m, x, y: x @ y, (A4, M45)),
    _case("mv", lambda m, x, v: m.mv(x, v), (A34, A4)),
    _case("dot", lambda m, x, y: m.dot(x, y), (A4, A4 * 2)),
    _case("bmm", lambda m, x, y: m.bmm(x, y), (A34[:, None], M45[:, None])),
    _case("linear_plain_weight", lambda m, x, w, b: F(m).linear(x, w, b), (A4, P34, P34[:, 0]),
          (0, None, None)),
    _case("linear_batched_weight", lambda m, x, w, b: F(m).linear(x, w, b),
          (A4, A34, A34[:, :, 0])),
    _case("linear_2d_input", lambda m, x, w: F(m).linear(x, w), (A34, A34)),
    _case("einsum_explicit", lambda m, x, p: m.einsum("ij,jk->ik", x, p), (A34, P45),
          (0, None)),
    _case("einsum_implicit_both", lambda m, x, y: m.einsum("ij,jk", x, y), (A34, M45)),
    _case("einsum_ellipsis_list", lambda m, x, p: m.einsum("...j,jk->...k", [x, p]),
          (A34, P45), (0, None)),
    _case("einsum_trace", lambda m, x: m.einsum("ii->", x), (A34[:, :, :3],)),
    _case("elu_entry", lambda m, x: F(m).elu(x, 0.5), (A34,)),
    _case("hardtanh_entry", lambda m, x: F(m).hardtanh(x, -0.5, 0.5), (A34,)),
    _case("cross_entropy", lambda m, x, t: F(m).cross_entropy(x, t), (LOGITS, LABELS)),
    _case("cross_entropy_sum_weight", lambda m, x, t, w: F(m).cross_entropy(
        x, t, w, reduction="sum"), (LOGITS, LABELS, np.abs(P45[0])), (0, 0, None)),
    _case("cross_entropy_none_1d", lambda m, x, t: F(m).cross_entropy(x, t, reduction="none"),
          (LOGITS[:, 0], LABELS[:, 0])),
    _case("nll_loss_ignore", lambda m, x, t: F(m).nll_loss(x, t, ignore_index=1),
          (LOGITS, LABELS)),
    _case("mse_loss", lambda m, x, y: F(m).mse_loss(x, y), (A34, A34 * 0.5)),
    _case("mse_loss_plain_target", lambda m, x, y: F(m).mse_loss(x, y, reduction="sum"),
          (A34, P34), (0, None)),
    *[_case(name, fn, arrays, dims) for name, fn, arrays, dims in (
        # linear algebra (Note [Matrix ops batch over leading dims])
        ("inv", lambda m, x: m.linalg.inv(x), (SPD,), 0),
        ("det_slogdet", lambda m, x: (m.linalg.det(x), *m.linalg.slogdet(x)), (SPD,), 0),
        ("cholesky_qr", lambda m, x: (m.linalg.cholesky(x), *m.linalg.qr(x)), (SPD,), 0),
        ("eigvalsh_svdvals", lambda m, x: (m.linalg.eigvalsh(x), m.linalg.svdvals(x)), (SPD,),
         0),
        ("pinv_matrix_power", lambda m, x: (m.linalg.pinv(x), m.linalg.matrix_power(x, 3)),
         (SPD,), 0),
        ("matrix_norm", lambda m, x: m.linalg.matrix_norm(x, "nuc"), (SPD,), 0),
        ("solve_vector", lambda m, a, b: m.linalg.solve(a, b), (SPD, SPD[:, 0]), 0),
        ("solve_plain_rhs", lambda m, a, b: m.linalg.solve(a, b), (SPD, SPD[0, :, :2]),
         (0, None)),
        ("solve_triangular", lambda m, a, b: m.linalg.solve_triangular(a, b, upper=False),
         (np.tril(SPD), SPD), 0),
        ("linalg_cross", lambda m, x, y: m.linalg.cross(x, y), (SPD, SPD[0]), (0, None)),
        # norms and distances
        ("vector_norm", lambda m, x: m.linalg.vector_norm(x, 1, dim=-1), (SPD,), 0),
        ("tensor_norm", lambda m, x: (x.norm(), m.norm(x, 3, dim=0)), (SPD,), 0),
        ("linalg_norm", lambda m, x: (m.linalg.norm(x), m.linalg.norm(x, "fro")), (SPD,), 0),
        ("dist", lambda m, x, y: m.dist(x, y, 3), (SPD, SPD[0]), (0, None)),
        ("cdist", lambda m, x, y: m.cdist(x, y), (SPD, SPD[0, :2]), (0, None)),
        ("pairwise_distance", lambda m, x, y: F(m).pairwise_distance(x, y), (SPD, SPD[0]),
         (0, None)),
        ("cosine_similarity", lambda m, x, y: F(m).cosine_similarity(x, y, dim=-1),
         (SPD, SPD), 0),
        # gather / scatter / index ops (Note [Index ops under vmap])
        ("gather", lambda m, x, i: x.gather(1, i), (A34, IDX), 0),
        ("gather_plain_index", lambda m, x, i: m.gather(x, 1, i), (A34, IDX[0]), (0, None)),
        ("take_along_dim", lambda m, x, i: m.take_along_dim(x, i, 1), (A34, IDX), 0),
        ("scatter_add", lambda m, x, i, s: x.scatter_add(1, i, s), (A34, IDX, A34 * 2), 0),
        ("scatter_value", lambda m, x, i: x.scatter(1, i, 2.0), (A34, IDX), 0),
        ("scatter_reduce_amax", lambda m, x, i, s: x.scatter_reduce(1, i, s, "amax"),
         (A34, IDX, A34 * 2), 0),
        ("scatter_add_inplace", lambda m, x, i, s: x.clone().scatter_add_(0, i, s),
         (A34, IDX % 3, A34 * 2), 0),
        ("index_select", lambda m, x: x.index_select(1, m.tensor([0, 2])), (A34,), 0),
        ("index_add", lambda m, x, s: x.index_add(1, m.tensor([0, 2]), s, alpha=2),
         (A34, A34[:, :, :2]), 0),
        ("index_fill", lambda m, x: x.index_fill(1, m.tensor([0, 2]), -1.0), (A34,), 0),
        ("index_copy", lambda m, x, s: x.index_copy(0, m.tensor([2, 0]), s),
         (A34, A34[:, :2]), 0),
        ("select_scatter", lambda m, x, s: m.select_scatter(x, s, 0, 1), (A34, A4), 0),
        ("slice_scatter", lambda m, x, s: m.slice_scatter(x, s, 1, 0, 2), (A34, A34[:, :, :2]),
         0),
        ("diagonal_scatter", lambda m, x, s: m.diagonal_scatter(x, s), (A34, A34[:, :, 0]), 0),
        # convolutions and pools (Note [Ops with a batch dim of their own])
        ("conv2d", lambda m, x, w: F(m).conv2d(x, w, padding=1), (IMG, W2), (0, None)),
        ("conv2d_unbatched_form", lambda m, x, w: F(m).conv2d(x, w), (IMG[:, 0], W2),
         (0, None)),
        ("conv1d_in_dim_1", lambda m, x, w: F(m).conv1d(x, w), (IMG[:, :, :, 0].swapaxes(0, 1),
                                                              W2[:, :, 0]), (1, None)),
        ("conv_transpose2d", lambda m, x, w: F(m).conv_transpose2d(x, w, stride=2),
         (IMG, W2.swapaxes(0, 1)), (0, None)),
        ("max_pool2d", lambda m, x: F(m).max_pool2d(x, 2), (IMG,), 0),
        ("max_pool2d_indices", lambda m, x: F(m).max_pool2d(x, 2, return_indices=True),
         (IMG[:, 0],), 0),
        ("avg_pool2d", lambda m, x: F(m).avg_pool2d(x, 2, stride=1), (IMG,), 0),
        ("adaptive_avg_pool2d", lambda m, x: F(m).adaptive_avg_pool2d(x, (2, 1)), (IMG,), 0),
        ("adaptive_max_pool2d", lambda m, x: F(m).adaptive_max_pool2d(x, 2), (IMG,), 0),
        ("pixel_shuffle", lambda m, x: F(m).pixel_shuffle(x, 2), (WB[:, :, 0],), 0),
        # batched convolution weights (Note [Batched convolution weights])
        ("conv2d_batched_weight", lambda m, x, w, b: F(m).conv2d(x, w, b),
         (IMG, WB, WB[:, :, 0, 0, 0]), 0),
        ("conv2d_batched_weight_plain_input", lambda m, x, w: F(m).conv2d(x, w, padding=1),
         (IMG[0], WB), (None, 0)),
        ("conv2d_batched_weight_groups", lambda m, x, w, b: F(m).conv2d(x, w, b, groups=3),
         (IMG, WB[:, :3, :1], W2[:3, 0, 0, 0]), (0, 0, None)),
        ("conv2d_batched_weight_unbatched_form", lambda m, x, w: F(m).conv2d(x, w, stride=2),
         (IMG[:, 0], WB), 0),
        ("conv1d_batched_weight", lambda m, x, w: F(m).conv1d(x, w),
         (IMG[:, :, :, 0], WB[:, :, :, 0]), 0),
        ("conv_transpose2d_batched_weight",
         lambda m, x, w: F(m).conv_transpose2d(x, w, stride=2, padding=1),
         (IMG, WB.swapaxes(1, 2)), 0),
        # normalization, padding, resampling (Note [Normalization under vmap])
        ("layer_norm", lambda m, x, w, b: F(m).layer_norm(x, (5,), w, b), (IMG, P5, P5 * 2),
         (0, None, None)),
        ("layer_norm_batched_weight", lambda m, x, w: F(m).layer_norm(x, (5, 5), w),
         (IMG, IMG[:, 0, 0]), 0),
        ("group_norm", lambda m, x, w: F(m).group_norm(x, 1, w), (IMG, P5[:3]), (0, None)),
        ("group_norm_batched_weight", lambda m, x, w, b: F(m).group_norm(x, 3, w, b),
         (IMG, A34[:, :, 0], A34[:, :, 1]), 0),
        ("batch_norm_train", lambda m, x, w: F(m).batch_norm(x, None, None, w, training=True),
         (IMG, P5[:3]), (0, None)),
        ("batch_norm_train_batched_weight",
         lambda m, x, w, b: F(m).batch_norm(x, None, None, w, b, True), (IMG, A34[:, :, 0],
                                                                          A34[:, :, 1]), 0),
        ("batch_norm_eval", lambda m, x, w: F(m).batch_norm(
            x, m.tensor(P5[:3]), m.tensor(np.abs(P5[:3])) + 1, w), (IMG, A34[:, :, 0]), 0),
        ("batch_norm_train_stats_batched_weight", lambda m, x, w: F(m).batch_norm(
            x, m.zeros(3, dtype=x.dtype), m.ones(3, dtype=x.dtype), w, training=True),
         (IMG[0], A34[:, :, 0]), (None, 0)),
        ("layer_norm_plain_input", lambda m, x, w: F(m).layer_norm(x, (5,), w),
         (IMG[0], IMG[:, 0, 0, 0]), (None, 0)),
        ("pad_constant", lambda m, x: F(m).pad(x, (1, 2, 0, 1), value=0.5), (IMG,), 0),
        ("pad_reflect", lambda m, x: F(m).pad(x, (1, 1, 2, 0), mode="reflect"), (IMG,), 0),
        ("pad_replicate_unbatched_form", lambda m, x: F(m).pad(x, (1, 2), mode="replicate"),
         (IMG[:, 0],), 0),
        ("pad_circular", lambda m, x: F(m).pad(x, (1, 1, 2, 1), mode="circular"), (IMG,), 0),
        ("interpolate_nearest", lambda m, x: F(m).interpolate(x, scale_factor=2), (IMG,), 0),
        ("interpolate_bilinear", lambda m, x: F(m).interpolate(x, size=(7, 3), mode="bilinear"),
         (IMG.swapaxes(0, 2),), 2),
        ("reductions_of_0dim_samples", lambda m, v: (
            v.sum(0), v.sum(-1, keepdim=True), v.max(0), v.cumsum(0), v.softmax(0),
            m.logsumexp(v, 0), v.sort(0), v.topk(1, 0), v.mean(dim=(0,)), v.argmax(0)),
         (A4[:, 0],), 0),
        # shape ops by their logical dims (Note [Shape ops by their logical dims])
        ("flip_family", lambda m, x: (x.flip(-1), m.fliplr(x), m.flipud(x)), (A34,), 0),
        ("repeat_tile", lambda m, x: (x.repeat(2, 1, 2), m.tile(x, (2,))), (A34,), 0),
        ("broadcast_to_ravel", lambda m, x: (m.broadcast_to(x, (2, 4)), m.ravel(x.t())), (A4,),
         0),
        ("narrow_copy_msort", lambda m, x: (x.narrow_copy(1, 1, 2), m.msort(x)), (A34,), 0),
        ("diag_both_ways", lambda m, x: (m.diag(x, 1), m.diag(x[0], -1)), (A34,), 0),
        ("hstack_vstack", lambda m, x, p: (m.hstack([x, p]), m.vstack([x, p]),
                                           m.hstack([x[0], p[0]])), (A34, P34), (0, None)),
        ("hsplit_vsplit", lambda m, x: (m.hsplit(x, 2), m.vsplit(x[:2], [1])), (A34,), 0),
        ("topk_kthvalue_last_dim", lambda m, x: (x.topk(2), x.kthvalue(2)), (A34,), 0),
        ("split_fn_broadcast_tensors", lambda m, x, p: (m.split(x, 2, 1),
                                                        m.broadcast_tensors(x[:, :1], p[0])),
         (A34, P34), (0, None)),
        ("atleast_nd", lambda m, x, p: (m.atleast_1d(x[0, 0]), m.atleast_2d(x[0], p),
                                        m.atleast_3d([x[0], x])), (A34, P4), (0, None)),
        ("multi_dot", lambda m, v, a, b: (m.linalg.multi_dot([v, a, b]),
                                          m.linalg.multi_dot([a.t(), a])), (A34[:, 0, :3], A34,
                                                                             P45), (0, 0, None)),
        ("rot90_kron", lambda m, x, p: (m.rot90(x, 1, (1, 0)), m.kron(x, p), m.kron(p[0], x)),
         (A34, P34), (0, None)),
        # activations and embeddings without a signature check of their own
        ("silu_glu_normalize", lambda m, x: (F(m).silu(x), F(m).glu(x), F(m).normalize(x, dim=0)),
         (A34,), 0),
        ("embedding_batched_indices", lambda m, i, w: F(m).embedding(i, w), (IDX[:, 0], P45),
         (0, None)),
        ("embedding_batched_table", lambda m, i, w: F(m).embedding(i, w), (IDX[0], M45), (None, 0)),
        ("embedding_both_batched", lambda m, i, w: F(m).embedding(i, w, padding_idx=0),
         (IDX[:, 0], M45), 0),
        # products with an added term
        ("addmm", lambda m, i, a, b: m.addmm(i, a, b, beta=0.5, alpha=2), (SPD, SPD, SPD), 0),
        ("addmm_plain_operands", lambda m, i, a, b: m.addmm(i, a, b), (SPD[0], SPD, SPD[0]),
         (None, 0, None)),
        ("addmv", lambda m, i, a, b: m.addmv(i, a, b), (SPD[:, 0], SPD, SPD[:, 1]), 0),
        ("addr", lambda m, i, a, b: m.addr(i, a, b, beta=0), (SPD, SPD[:, 0], SPD[:, 1]), 0),
        ("baddbmm", lambda m, i, a, b: m.baddbmm(i, a, b), (SPD[:, None], SPD[:, None],
                                                           SPD[:, None]), 0),
        ("addbmm", lambda m, i, a, b: m.addbmm(i, a, b), (SPD, SPD[:, None], SPD[:, None]), 0),
        ("outer_trace", lambda m, a, b: (m.outer(a, b), m.trace(m.outer(a, b))),
         (SPD[:, 0], SPD[:, 1]), 0),
        # losses (Note [Elementwise losses])
        ("binary_cross_entropy", lambda m, x, t: F(m).binary_cross_entropy(x, t),
         (1 / (1 + np.exp(-SPD)), (SPD > 0) * 1.0), 0),
        ("bce_with_logits_weights", lambda m, x, t, w: F(m).binary_cross_entropy_with_logits(
            x, t, pos_weight=w, reduction="sum"), (SPD, (SPD > 0) * 1.0, SPD[0, 0] ** 2),
         (0, 0, None)),
        ("kl_div_batchmean", lambda m, x, t: F(m).kl_div(x, t, reduction="batchmean"),
         (SPD, np.abs(SPD)), 0),
        ("smooth_l1_huber_l1", lambda m, x, t: (F(m).smooth_l1_loss(x, t, beta=0.5),
                                                 F(m).huber_loss(x, t, delta=0.5),
                                                 F(m).l1_loss(x, t, reduction="none")),
         (SPD, SPD * 0.3), 0),
        ("soft_margin_hinge", lambda m, x, t: (F(m).soft_margin_loss(x, t),
                                               F(m).hinge_embedding_loss(x, t, 0.5)),
         (SPD, np.sign(SPD)), 0),
        ("margin_ranking", lambda m, x, y, t: F(m).margin_ranking_loss(x, y, t, 0.1),
         (SPD, SPD * 0.5, np.sign(SPD)), 0),
    )],
    _case("in_dim_1_out_dim_1", lambda m, x: x.sum(0), (A34.transpose(1, 0, 2),), 1, 1),
    _case("out_dims_tuple", lambda m, x: (x, x.sum()), (A34,), 0, (1, 0)),
    _case("unbatched_output", lambda m, x, p: p * 2, (A34, P4), (0, None)),
]


def _setitem(x: Any, index: Any, value: Any) -> Any:
    x[index] = value
    return x


def _tensors(m: Any, arrays: tuple) -> list:
    return [m.tensor(a) for a in arrays]


def _run(m: Any, fn: Callable, arrays: tuple, in_dims: Any, out_dims: Any) -> Any:
    return m.func.vmap(lambda *xs: fn(m, *xs), in_dims=in_dims, out_dims=out_dims)(
        *_tensors(m, arrays))


def _leaves(x: Any) -> list:
    if isinstance(x, tuple):
        return [t for item in x for t in _leaves(item)]
    return list(tree_flatten(x)[0])


def _same(mine: Any, theirs: Any, tol: float = 1e-12) -> None:
    a, b = _leaves(mine), _leaves(theirs)
    assert len(a) == len(b)
    for x, y in zip(a, b):
        assert tuple(x.shape) == tuple(y.shape)
        assert str(x.dtype).split(".")[-1] == str(y.dtype).split(".")[-1]
        np.testing.assert_allclose(np.asarray(x.detach().numpy(), dtype=float),
                                   np.asarray(y.detach().numpy(), dtype=float),
                                   rtol=tol, atol=tol)


def _loop(fn: Callable, arrays: tuple, in_dims: Any, out_dims: Any) -> Any:
    dims = in_dims if isinstance(in_dims, tuple) else (in_dims,) * len(arrays)
    outs = []
    for b in range(B):
        xs = [npgrad.tensor(np.take(a, b, axis=d) if d is not None else a)
              for a, d in zip(arrays, dims)]
        outs.append(_leaves(fn(npgrad, *xs)))
    n = len(outs[0])
    od = out_dims if isinstance(out_dims, tuple) else (out_dims,) * n
    return [npgrad.stack([o[i] for o in outs], od[i]) for i in range(n)]


@pytest.fixture
def no_slices(monkeypatch: Any) -> list:
    """Fail a test whose vmap runs the function by slices; collect the warnings."""
    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("vmap ran the function by slices")

    monkeypatch.setattr(vmap_module, "_by_slices", refuse)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        yield caught


def _perf(caught: list) -> list:
    """The performance warnings of the per-op fallback among ``caught``."""
    return [str(w.message) for w in caught if "performance drop" in str(w.message)]


@pytest.mark.parametrize("fn,arrays,in_dims,out_dims", RULE_CASES)
def test_rule_equals_loop(fn: Callable, arrays: tuple, in_dims: Any, out_dims: Any,
                          no_slices: list) -> None:
    mine = _run(npgrad, fn, arrays, in_dims, out_dims)
    assert not _perf(no_slices), _perf(no_slices)
    _same(mine, _loop(fn, arrays, in_dims, out_dims))


@pytest.mark.parametrize("fn,arrays,in_dims,out_dims", RULE_CASES)
def test_rule_equals_torch(fn: Callable, arrays: tuple, in_dims: Any, out_dims: Any) -> None:
    torch = pytest.importorskip("torch")
    _same(_run(npgrad, fn, arrays, in_dims, out_dims), _run(torch, fn, arrays, in_dims, out_dims),
          1e-10)


def test_batched_value_seen_inside() -> None:
    torch = pytest.importorskip("torch")
    seen = {}
    for m in (npgrad, torch):
        def f(t: Any) -> Any:
            seen[m.__name__] = (repr(t), tuple(t.shape), t.dim(), t.size(-1), len(t),
                                t.numel(), t.requires_grad)
            return t
        m.func.vmap(f)(m.arange(6.).reshape(2, 3))
    assert seen["npgrad"] == seen["torch"]


def test_nested_batched_repr_matches_torch() -> None:
    torch = pytest.importorskip("torch")
    seen = []
    for m in (npgrad, torch):
        found: list = []
        m.func.vmap(m.func.vmap(lambda t: found.append(repr(t)) or t))(
            m.arange(12.).reshape(2, 3, 2))
        seen.append(found[0])
    assert seen[0] == seen[1]


def test_fallback_warns_as_torch() -> None:
    torch = pytest.importorskip("torch")
    outs, texts = [], []
    for m in (npgrad, torch):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            outs.append(m.func.vmap(lambda t: m.histc(t, bins=4))(m.tensor(A34[:, 0])))
        texts.append([str(x.message) for x in w if "performance drop" in str(x.message)])
    assert texts[0] == texts[1] and len(texts[0]) == 1
    assert "aten::histc" in texts[0][0]
    _same(outs[0], outs[1])


def test_fallback_inside_batched_function(no_slices: list) -> None:
    # histc has no rule: it runs per sample, the ops around it stay batched
    x = npgrad.tensor(A34)
    out = npgrad.func.vmap(lambda t: npgrad.histc(t.exp() * 2, bins=3).sum() + t.sum())(x)
    expected = npgrad.stack([npgrad.histc(s.exp() * 2, bins=3).sum() + s.sum() for s in x])
    _same(out, expected)
    assert len(_perf(no_slices)) == 1 and "aten::histc" in _perf(no_slices)[0]


REFUSALS = [
    pytest.param(lambda m, t: t.sum().item(), id="item_of_computed"),
    pytest.param(lambda m, t: float(t[0]), id="float"),
    pytest.param(lambda m, t: int(t[0] > 0), id="int"),
    pytest.param(lambda m, t: t * 2 if t.sum() > 0 else t, id="control_flow"),
    pytest.param(lambda m, t: t.tolist(), id="tolist"),
    pytest.param(lambda m, t: t.exp().numpy(), id="numpy"),
    pytest.param(lambda m, t: m.zeros(4).mul_(t), id="mul_into_fresh"),
    pytest.param(lambda m, t: m.zeros(4).add_(t), id="add_into_fresh"),
    pytest.param(lambda m, t: m.zeros(4).copy_(t), id="copy_into_fresh"),
    pytest.param(lambda m, t: _setitem(m.zeros(2, 4), 0, t), id="setitem_into_fresh"),
    pytest.param(lambda m, t: _setitem(m.zeros(2, 4), [0], t.unsqueeze(0)),
                 id="index_put_into_fresh"),
]


@pytest.mark.parametrize("fn", REFUSALS)
def test_refusals_match_torch(fn: Callable) -> None:
    torch = pytest.importorskip("torch")
    errors = []
    for m in (torch, npgrad):
        with pytest.raises(Exception) as info:
            m.func.vmap(lambda t: fn(m, t))(m.tensor(A34[:, 0]))
        errors.append(info.value)
    assert isinstance(errors[1], type(errors[0]))
    assert str(errors[1]) == str(errors[0])


def test_inplace_into_batched_writes_every_sample(no_slices: list) -> None:
    x = npgrad.tensor(A34)
    out = npgrad.func.vmap(lambda t: t.clone().mul_(2).add_(1).t_())(x)
    _same(out, (x * 2 + 1).transpose(1, 2))


def test_nested_vmap_matches_torch() -> None:
    torch = pytest.importorskip("torch")
    outs = []
    for m in (npgrad, torch):
        vm = m.func.vmap
        x, y = m.tensor(A34), m.tensor(M45)
        outs.append(vm(vm(lambda a, b: (a @ b).sum(), in_dims=(0, None)))(x, y))
        outs.append(vm(vm(lambda a, b: a * b, in_dims=(None, 0)), in_dims=(0, None))(
            m.tensor(A4), m.tensor(P34)))
        outs.append(vm(vm(lambda a: a.sum(0), in_dims=1), in_dims=2, out_dims=1)(x))
    _same(outs[:3], outs[3:], 1e-10)


def _mlp_per_sample(m: Any, batch: int = 8) -> dict:
    m.manual_seed(0)
    model = m.nn.Sequential(m.nn.Linear(6, 5), m.nn.ReLU(), m.nn.Linear(5, 3))
    model.double()
    x = m.tensor(RNG_FIXED.standard_normal((batch, 6)))
    y = m.tensor(np.arange(batch) % 3)
    params = {k: v.detach() for k, v in model.named_parameters()}

    def loss(p: dict, xi: Any, yi: Any) -> Any:
        out = m.func.functional_call(model, p, (xi.unsqueeze(0),))
        return F(m).cross_entropy(out, yi.unsqueeze(0))

    return m.func.vmap(m.func.grad(loss), in_dims=(None, 0, 0))(params, x, y)


RNG_FIXED = np.random.default_rng(11)


def test_per_sample_gradients_batched(no_slices: list) -> None:
    grads = _mlp_per_sample(npgrad)
    assert not _perf(no_slices), _perf(no_slices)
    assert grads["0.weight"].shape == (8, 5, 6)


def test_per_sample_gradients_match_torch() -> None:
    torch = pytest.importorskip("torch")
    global RNG_FIXED
    RNG_FIXED = np.random.default_rng(11)
    mine = _mlp_per_sample(npgrad)
    RNG_FIXED = np.random.default_rng(11)
    theirs = _mlp_per_sample(torch)
    for key in mine:
        _same(mine[key], theirs[key], 1e-10)


TRANSFORMS = [
    pytest.param(lambda m: m.func.vmap(m.func.grad(lambda x, w: (x * w).sin().sum()),
                                       in_dims=(0, None))(m.tensor(A34), m.tensor(P34)),
                 id="vmap_grad"),
    pytest.param(lambda m: m.func.vmap(m.func.grad(lambda x, w: (x @ w).tanh().sum(), argnums=1),
                                       in_dims=(0, None))(m.tensor(A34), m.tensor(P45)),
                 id="vmap_grad_of_unbatched_argument"),
    pytest.param(lambda m: m.func.grad(lambda x: m.func.vmap(lambda r: (r ** 2).sum())(x).sum())(
        m.tensor(A34)), id="grad_vmap"),
    pytest.param(lambda m: m.func.vmap(m.func.jacrev(lambda x: x.sin() * x.sum()))(m.tensor(A4)),
                 id="vmap_jacrev"),
    pytest.param(lambda m: m.func.vmap(m.func.grad(m.func.grad(lambda x: x.sin() * x)))(
        m.tensor(A4[:, 0])), id="vmap_grad_grad"),
    pytest.param(lambda m: m.func.vmap(m.func.hessian(lambda x: (x ** 3).sum()))(m.tensor(A4)),
                 id="vmap_hessian"),
    pytest.param(lambda m: m.func.vmap(lambda x: m.func.vjp(lambda y: y.exp(), x)[1](x)[0])(
        m.tensor(A4)), id="vmap_vjp"),
    pytest.param(lambda m: m.func.vmap(m.func.jacrev(lambda x: x.sin() * x.sum()), chunk_size=2)(
        m.tensor(A4)), id="vmap_jacrev_chunked"),
]


@pytest.mark.parametrize("fn", TRANSFORMS)
def test_transforms_under_vmap_match_torch(fn: Callable) -> None:
    torch = pytest.importorskip("torch")
    _same(fn(npgrad), fn(torch), 1e-10)


def test_grad_through_batched_vmap_matches_loop() -> None:
    x = npgrad.tensor(A34, requires_grad=True)
    npgrad.func.vmap(lambda r: (r.exp() * r).sum(1))(x).pow(2).sum().backward()
    y = npgrad.tensor(A34, requires_grad=True)
    npgrad.stack([(r.exp() * r).sum(1) for r in y]).pow(2).sum().backward()
    _same(x.grad, y.grad)


def test_dispatch_is_off_outside_vmap() -> None:
    from npgrad._ops import signature

    assert signature._vmap_dispatch is None
    with pytest.raises(ZeroDivisionError):
        npgrad.func.vmap(lambda t: (t * 2, 1 / 0))(npgrad.tensor(A4))
    assert signature._vmap_dispatch is None
    npgrad.func.vmap(lambda t: t.sum())(npgrad.tensor(A4))
    assert signature._vmap_dispatch is None


def test_randomness_error_and_same_by_slices() -> None:
    npgrad.manual_seed(0)
    out = npgrad.func.vmap(lambda t: t + npgrad.rand(()), randomness="same")(npgrad.zeros(3))
    assert np.unique(out.numpy()).size == 1
    with pytest.raises(RuntimeError, match="randomness error mode"):
        npgrad.func.vmap(lambda t: t + npgrad.rand(()))(npgrad.zeros(3))


RANDOM_CASES = [
    pytest.param(lambda m, t: t + m.rand(4), (B, 4), 0.0, "different", id="rand"),
    pytest.param(lambda m, t: t + m.randn(20), (B, 20), 0.0, "different", id="randn_vectorized"),
    pytest.param(lambda m, t: t + m.randn((2, 2)).sum(), (B,), 0.0, "different",
                 id="randn_size_tuple"),
    pytest.param(lambda m, t: t + m.randint(0, 10, (4,)), (B, 4), 0.0, "different",
                 id="randint"),
    pytest.param(lambda m, t: t + m.normal(0.0, 2.0, (4,)), (B, 4), 0.0, "different",
                 id="normal"),
    pytest.param(lambda m, t: m.rand_like(t), (B, 4), 0.0, "different", id="rand_like"),
    pytest.param(lambda m, t: m.randn_like(t), (B, 10), 0.0, "different", id="randn_like"),
    pytest.param(lambda m, t: F(m).dropout(t, 0.5), (B, 4), 1.0, "different", id="dropout"),
    pytest.param(lambda m, t: t.clone().normal_(), (B, 4), 0.0, "different", id="normal_"),
    pytest.param(lambda m, t: m.bernoulli(t), (B, 4), 0.5, "different", id="bernoulli"),
    pytest.param(lambda m, t: t + m.rand(4), (B, 4), 0.0, "same", id="same_rand"),
    pytest.param(lambda m, t: F(m).dropout(t, 0.5), (B, 4), 1.0, "same", id="same_dropout"),
    pytest.param(lambda m, t: m.randn_like(t), (B, 20), 0.0, "same", id="same_randn_like"),
]


@pytest.mark.parametrize("fn,shape,fill,randomness", RANDOM_CASES)
def test_randomness_draws_what_torch_draws(fn: Callable, shape: tuple, fill: float,
                                           randomness: str) -> None:
    torch = pytest.importorskip("torch")
    outs = []
    for m in (npgrad, torch):
        m.manual_seed(0)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            outs.append(m.func.vmap(lambda t: fn(m, t), randomness=randomness)(
                m.full(shape, fill)))
    _same(outs[0], outs[1], 1e-6)


def _ensemble(m: Any) -> Any:
    import copy

    m.manual_seed(0)
    models = [m.nn.Sequential(m.nn.Linear(8, 16), m.nn.ReLU(), m.nn.Linear(16, 4))
              for _ in range(5)]
    params, buffers = m.func.stack_module_state(models)
    base = copy.deepcopy(models[0])
    if m.__name__ == "torch":
        base = base.to("meta")

    def fmodel(p: Any, b: Any, x: Any) -> Any:
        return m.func.functional_call(base, (p, b), (x,))

    x = m.tensor(np.random.default_rng(0).standard_normal((32, 8)).astype(np.float32))
    return (m.func.vmap(fmodel, in_dims=(0, 0, None))(params, buffers, x),
            m.func.vmap(fmodel)(params, buffers, x.expand(5, 32, 8)))


def test_model_ensemble_runs_batched(no_slices: list) -> None:
    same_batch, own_batches = _ensemble(npgrad)
    assert not _perf(no_slices), _perf(no_slices)
    _same(same_batch, own_batches)


def test_model_ensemble_matches_torch() -> None:
    torch = pytest.importorskip("torch")
    _same(_ensemble(npgrad), _ensemble(torch), 1e-6)


def _printed_inside(m: Any, fn: Callable, *args: Any, **kwargs: Any) -> list:
    seen: list = []

    def show(t: Any) -> Any:
        seen.extend((str(type(t)).replace(m.__name__ + ".", "").replace("_tensor.", ""),
                     isinstance(t, m.Tensor), repr(t), str(t), repr(t * 2), repr(t.sum(0))))
        return t
    fn(m, show)(*args, **kwargs)
    return seen


PRINTED = [
    pytest.param(lambda m, f: m.func.vmap(f, in_dims=1), lambda m: (m.arange(6.).reshape(2, 3),),
                 id="in_dims_1"),
    pytest.param(lambda m, f: m.func.vmap(lambda a, b: f(b), in_dims=(None, -1)),
                 lambda m: (m.ones(2), m.arange(12.).reshape(3, 2, 2)), id="in_dims_last"),
    pytest.param(lambda m, f: m.func.vmap(m.func.vmap(f, in_dims=1), in_dims=2),
                 lambda m: (m.arange(24.).reshape(2, 3, 4),), id="nested_in_dims"),
    pytest.param(lambda m, f: m.func.vmap(m.func.vmap(f), in_dims=1),
                 lambda m: (m.arange(24.).reshape(2, 3, 4),), id="nested_inner_0"),
]


@pytest.mark.parametrize("vmapped,inputs", PRINTED)
def test_printed_batched_tensor_matches_torch(vmapped: Callable, inputs: Callable) -> None:
    # Note [Printed batch dims]: bdim and value as torch prints them; type(t) prints as a
    # tensor's type (npgrad's is a subclass: `type(t) is Tensor` stays False)
    torch = pytest.importorskip("torch")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # printing runs no per-sample fallback
        mine = _printed_inside(npgrad, vmapped, *inputs(npgrad))
    assert mine == _printed_inside(torch, vmapped, *inputs(torch))


def test_printed_batched_tensor_no_torch() -> None:
    seen = _printed_inside(npgrad, lambda m, f: m.func.vmap(f, in_dims=1),
                           npgrad.arange(6.).reshape(2, 3))
    assert seen[0] == "<class 'npgrad.Tensor'>" or seen[0].endswith("Tensor'>")
    assert seen[2] == ("BatchedTensor(lvl=1, bdim=1, value=\n    tensor([[0., 1., 2.],\n"
                       "            [3., 4., 5.]])\n)")
    assert seen[3] == seen[2]
    assert seen[5] == "BatchedTensor(lvl=1, bdim=0, value=\n    tensor([3., 5., 7.])\n)"


RANDOM_DIMS = [
    pytest.param(lambda m, t: m.rand_like(t), 1, 0, "different", id="rand_like_in_dim_1"),
    pytest.param(lambda m, t: m.randn_like(t) * 2, -1, 0, "different", id="randn_like_in_dim_last"),
    pytest.param(lambda m, t: t + m.rand(4), 1, 0, "different", id="rand_in_dim_1"),
    pytest.param(lambda m, t: t + m.randn(4), 1, 1, "different", id="randn_out_dim_1"),
    pytest.param(lambda m, t: F(m).dropout(t + 1, 0.5), 1, 0, "different", id="dropout_in_dim_1"),
    pytest.param(lambda m, t: m.bernoulli(t + 0.5), 1, 0, "different", id="bernoulli_in_dim_1"),
    pytest.param(lambda m, t: m.normal(t, 1.0), 1, 0, "different", id="normal_tensor_mean"),
    pytest.param(lambda m, t: m.poisson(t + 2), 0, 0, "different", id="poisson"),
    pytest.param(lambda m, t: m.rand_like(t), 1, 0, "same", id="same_rand_like_in_dim_1"),
    pytest.param(lambda m, t: t + m.rand(4), 1, 1, "same", id="same_rand_out_dim_1"),
    pytest.param(lambda m, t: t.clone().normal_(), 1, 0, "same", id="same_normal_in_dim_1"),
    pytest.param(lambda m, t: F(m).dropout(t + 1, 0.5), 1, 0, "same", id="same_dropout_in_dim_1"),
]


@pytest.mark.parametrize("fn,in_dim,out_dim,randomness", RANDOM_DIMS)
def test_randomness_with_in_dims_matches_torch(fn: Callable, in_dim: int, out_dim: int,
                                               randomness: str) -> None:
    torch = pytest.importorskip("torch")
    outs = []
    for m in (npgrad, torch):
        m.manual_seed(0)
        outs.append(m.func.vmap(lambda t: fn(m, t), in_dims=in_dim, out_dims=out_dim,
                                randomness=randomness)(m.zeros(4, 3)))
    _same(outs[0], outs[1], 1e-6)


NESTED_RANDOM = [
    pytest.param(lambda vm, m: vm(vm(lambda t: t + m.rand(()), randomness="different"),
                                  randomness="different"), id="different_different"),
    pytest.param(lambda vm, m: vm(vm(lambda t: m.rand_like(t), randomness="different"),
                                  randomness="different"), id="different_rand_like"),
    pytest.param(lambda vm, m: vm(vm(lambda t: m.rand_like(t), randomness="different"),
                                  in_dims=1, randomness="different"),
                 id="different_rand_like_in_dim_1"),
    pytest.param(lambda vm, m: vm(vm(lambda t: (t * 2).normal_(), randomness="different"),
                                  randomness="different"), id="different_normal_"),
    pytest.param(lambda vm, m: vm(vm(lambda t: t + m.rand(()), randomness="same"),
                                  randomness="different"), id="inner_same"),
    pytest.param(lambda vm, m: vm(vm(lambda t: t + m.rand(()), randomness="same"),
                                  randomness="same"), id="same_same"),
    pytest.param(lambda vm, m: vm(vm(lambda t: m.rand_like(t), randomness="same"),
                                  in_dims=1, randomness="same"), id="same_same_in_dim_1"),
]


@pytest.mark.parametrize("make", NESTED_RANDOM)
def test_nested_randomness_matches_torch(make: Callable) -> None:
    torch = pytest.importorskip("torch")
    outs = []
    for m in (npgrad, torch):
        m.manual_seed(0)
        outs.append(make(m.func.vmap, m)(m.zeros(4, 3)))
    _same(outs[0], outs[1], 1e-6)


RANDOM_REFUSALS = [
    pytest.param(lambda vm, m: vm(lambda t: m.bernoulli(t), randomness="same"), id="bernoulli"),
    pytest.param(lambda vm, m: vm(lambda t: m.poisson(t), randomness="same"), id="poisson"),
    pytest.param(lambda vm, m: vm(lambda t: m.normal(t, 1.0), randomness="same"), id="normal"),
    pytest.param(lambda vm, m: vm(lambda t: m.multinomial(t, 2), randomness="same"),
                 id="multinomial"),
    pytest.param(lambda vm, m: vm(lambda t: m.ones(3).bernoulli_(t), randomness="same"),
                 id="bernoulli_p_batched"),
    pytest.param(lambda vm, m: vm(lambda t: m.bernoulli(t), in_dims=1, randomness="same"),
                 id="bernoulli_in_dim_1"),
    pytest.param(lambda vm, m: vm(vm(lambda t: m.bernoulli(t), randomness="same"),
                                  randomness="same"), id="nested_bernoulli"),
    pytest.param(lambda vm, m: vm(vm(lambda t: m.rand_like(t), randomness="error"),
                                  randomness="different"), id="inner_error"),
    pytest.param(lambda vm, m: vm(vm(lambda t: m.rand_like(t), randomness="same")),
                 id="outer_error"),
    pytest.param(lambda vm, m: vm(lambda t: m.rand_like(t), in_dims=1), id="error_in_dim_1"),
    pytest.param(lambda vm, m: vm(lambda t: t, randomness="bogus"), id="bad_mode"),
]


@pytest.mark.parametrize("make", RANDOM_REFUSALS)
def test_randomness_refusals_match_torch(make: Callable) -> None:
    torch = pytest.importorskip("torch")
    errors = []
    for m in (torch, npgrad):
        with pytest.raises(Exception) as info:
            make(m.func.vmap, m)(m.full((3, 3), 0.5))
        errors.append(info.value)
    assert type(errors[1]) is type(errors[0]) and str(errors[1]) == str(errors[0])


def test_batch_norm_refusal_matches_torch() -> None:
    # running statistics that are not batched would be updated by every sample
    torch = pytest.importorskip("torch")
    errors = []
    for m in (torch, npgrad):
        with pytest.raises(RuntimeError) as info:
            m.func.vmap(lambda t: F(m).batch_norm(t, m.zeros(3), m.ones(3), training=True))(
                m.tensor(IMG))
        errors.append(str(info.value))
    assert errors[0] == errors[1]


def _conv_ensemble(m: Any) -> Any:
    import copy

    m.manual_seed(0)
    models = [m.nn.Sequential(m.nn.Conv2d(3, 4, 3, padding=1), m.nn.GroupNorm(2, 4),
                              m.nn.ReLU(), m.nn.MaxPool2d(2), m.nn.Flatten(),
                              m.nn.Linear(16, 2)) for _ in range(3)]
    params, buffers = m.func.stack_module_state(models)
    base = copy.deepcopy(models[0])
    x = m.tensor(IMG[0, :, :, :4, :4].astype(np.float32))
    return m.func.vmap(lambda p, b, x: m.func.functional_call(base, (p, b), (x,)),
                       in_dims=(0, 0, None))(params, buffers, x)


def test_conv_ensemble_runs_batched(no_slices: list) -> None:
    out = _conv_ensemble(npgrad)
    assert not _perf(no_slices), _perf(no_slices)
    assert out.shape == (3, 2, 2)


def test_conv_ensemble_matches_torch() -> None:
    torch = pytest.importorskip("torch")
    _same(_conv_ensemble(npgrad), _conv_ensemble(torch), 1e-5)


def test_per_sample_grad_of_cnn_runs_batched(no_slices: list) -> None:
    # vmap(grad) hands every layer its weights expanded to the batch: conv, layer_norm and
    # the pools take their batched-weight paths
    npgrad.manual_seed(0)
    model = npgrad.nn.Sequential(npgrad.nn.Conv2d(3, 4, 3), npgrad.nn.LayerNorm(3),
                                 npgrad.nn.ReLU(), npgrad.nn.AdaptiveAvgPool2d(1),
                                 npgrad.nn.Flatten(), npgrad.nn.Linear(4, 2)).double()
    params = {k: v.detach() for k, v in model.named_parameters()}
    x, y = npgrad.tensor(IMG[:, 0]), npgrad.tensor([0, 1, 1])

    def loss(p: dict, xi: Any, yi: Any) -> Any:
        out = npgrad.func.functional_call(model, p, (xi.unsqueeze(0),))
        return F(npgrad).cross_entropy(out, yi.unsqueeze(0))

    grads = npgrad.func.vmap(npgrad.func.grad(loss), in_dims=(None, 0, 0))(params, x, y)
    assert not _perf(no_slices), _perf(no_slices)
    for b in range(B):
        expected = npgrad.func.grad(loss)(params, x[b], y[b])
        for key in params:
            _same(grads[key][b], expected[key])


def test_ragged_samples_run_by_slices() -> None:
    # a boolean mask selects other counts per sample: no batched value holds them, so the
    # function runs by slices (torch refuses the dynamic shape) and gives the loop's values
    x = npgrad.tensor(A34[:, 0])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = npgrad.func.vmap(lambda r: r[r > 0].sum() + r.mean())(x)
    _same(out, npgrad.stack([r[r > 0].sum() + r.mean() for r in x]))
