"""Op-table rows: sorting, scans, reductions and products (see tests/op_table.py for what a row is and which checks it gets)."""
from __future__ import annotations

import numpy as np

from op_table import FORWARD_TORCH, SECOND_ORDER, L, OpRow, R  # noqa: F401

# Zeros in a running product: the exact gradient there is what these rows check.
# torch 2.13 has neither a double backward nor a forward rule for cdist (NotImplementedError:
# "the derivative for '_cdist_backward' is not implemented." / "Trying to use forward AD with
# _cdist_forward that does not support it ..."); npgrad has both, so those two torch checks fail.
_CDIST = dict(known_bug="torch lacks cdist's double backward and forward AD; npgrad has them",
              bug_in=frozenset({SECOND_ORDER, FORWARD_TORCH}))
_TIES = np.array([[1.0, 3.0, 3.0], [2.0, 2.0, -1.0], [0.5, 0.5, 0.5]])
_CUMPROD_ZEROS = np.array([[1.5, 0.0, 2.0, -1.0], [0.0, 0.5, 0.0, 3.0]])

ROWS: list[OpRow] = [
    # sort / argsort / msort (random data: no ties, so finite differences apply)
    R("sort", lambda m, x: x.sort().values, ((3, 4),)),
    R("sort_dim0_desc", lambda m, x: m.sort(x, 0, descending=True)[0], ((3, 4),)),
    R("sort_stable_kw", lambda m, x: m.sort(x, dim=1, stable=True).values, ((2, 5),)),
    R("sort_tuple", lambda m, x: tuple(x.sort(1)), ((2, 3),)),
    R("sort_0dim", lambda m, x: x.sort().values, ((),)),
    R("msort", lambda m, x: m.msort(x), ((4, 3),)),
    # topk / kthvalue
    R("topk", lambda m, x: x.topk(2).values, ((3, 4),)),
    R("topk_smallest_dim0", lambda m, x: m.topk(x, 2, 0, largest=False)[0], ((3, 4),)),
    R("topk_all", lambda m, x: x.topk(4, 1).values, ((2, 4),)),
    R("kthvalue", lambda m, x: x.kthvalue(2).values, ((3, 4),)),
    R("kthvalue_dim0_keep", lambda m, x: m.kthvalue(x, 3, 0, True)[0], ((3, 4),)),
    # median / nanmedian / mode
    R("median", lambda m, x: x.median(), ((3, 4),)),
    R("median_dim", lambda m, x: x.median(1).values, ((3, 4),)),
    R("median_dim_keep", lambda m, x: m.median(x, 0, keepdim=True)[0], ((3, 5),)),
    R("nanmedian", lambda m, x: x.nanmedian(), ((3, 5),)),
    R("nanmedian_dim", lambda m, x: m.nanmedian(x, 1).values, ((3, 4),)),
    R("mode", lambda m, x: x.mode(1).values, ((3, 4),)),
    # quantile / nanquantile
    R("quantile", lambda m, x: m.quantile(x, 0.3), ((3, 4),)),
    R("quantile_tensor_q", lambda m, x: x.quantile(m.tensor([0.2, 0.5, 0.9], dtype=x.dtype)),
      ((3, 4),)),
    R("quantile_dim", lambda m, x: m.quantile(x, 0.7, dim=1), ((3, 4),)),
    R("quantile_dim_q_keep", lambda m, x: m.quantile(x, m.tensor([0.1, 0.6], dtype=x.dtype),
                                                     dim=0, keepdim=True), ((3, 4),)),
    R("quantile_lower", lambda m, x: m.quantile(x, 0.4, 1, interpolation="lower"), ((3, 4),)),
    R("quantile_higher", lambda m, x: m.quantile(x, 0.4, 1, interpolation="higher"), ((3, 4),)),
    R("quantile_nearest", lambda m, x: m.quantile(x, 0.4, interpolation="nearest"), ((3, 4),)),
    R("quantile_midpoint", lambda m, x: m.quantile(x, 0.4, -1, True,
                                                   interpolation="midpoint"), ((2, 3, 4),)),
    R("nanquantile", lambda m, x: m.nanquantile(x, 0.3, dim=1), ((3, 4),)),
    # scans
    R("cumprod", lambda m, x: x.cumprod(1), ((3, 4),)),
    R("cumprod_dim0", lambda m, x: m.cumprod(x, 0), ((3, 2),)),
    R("cumprod_zeros", lambda m, x: x.cumprod(1), (_CUMPROD_ZEROS,)),
    R("cumprod_zeros_dim0", lambda m, x: x.cumprod(0), (_CUMPROD_ZEROS,)),
    R("cummax", lambda m, x: x.cummax(1).values, ((3, 4),)),
    R("cummin_dim0", lambda m, x: m.cummin(x, 0)[0], ((4, 3),)),
    R("logcumsumexp", lambda m, x: x.logcumsumexp(1), ((3, 4),)),
    R("logcumsumexp_dim0", lambda m, x: m.logcumsumexp(x, 0), ((4, 2),)),
    # var_mean / std_mean: one node, two outputs
    R("var_mean", lambda m, x: m.var_mean(x), ((3, 4),)),
    R("var_mean_dim", lambda m, x: m.var_mean(x, 1, keepdim=True), ((3, 4),)),
    R("var_mean_only_var", lambda m, x: m.var_mean(x, (0, 2), correction=0)[0], ((2, 3, 2),)),
    R("var_mean_only_mean", lambda m, x: m.var_mean(x, 0)[1], ((3, 4),)),
    R("std_mean", lambda m, x: m.std_mean(x), ((3, 4),)),
    R("std_mean_dim", lambda m, x: m.std_mean(x, dim=0, unbiased=False), ((3, 4),)),
    R("std_mean_only_std", lambda m, x: m.std_mean(x, 1)[0], ((3, 4),)),
    R("aminmax", lambda m, x: tuple(m.aminmax(x)), ((3, 4),)),
    R("aminmax_dim", lambda m, x: tuple(x.aminmax(dim=1)), ((3, 4),)),
    R("aminmax_keep_only_max", lambda m, x: m.aminmax(x, dim=0, keepdim=True).max, ((3, 4),)),
    R("aminmax_ties", lambda m, x: tuple(m.aminmax(x, dim=1)), (_TIES,), fd=False),
    # nan-skipping reductions (the NaNs sit in fixed data; they get zero gradient)
    R("nansum", lambda m, x: x.nansum(), ((3, 4),)),
    R("nansum_dim", lambda m, x: m.nansum(x, 1, keepdim=True), ((3, 4),)),
    R("nansum_nan", lambda m, x: m.nansum(m.where(x > 1, float("nan"), x), 0), ((3, 4),),
      no_gradcheck="where(x > 1) is a kink at 1"),
    R("nanmean", lambda m, x: x.nanmean(), ((3, 4),)),
    R("nanmean_dim", lambda m, x: m.nanmean(x, (0, 1)), ((2, 3, 2),)),
    # distances and norms
    R("dist", lambda m, x, y: m.dist(x, y), ((3, 4), (3, 4))),
    R("dist_p3_broadcast", lambda m, x, y: x.dist(y, 3), ((3, 4), (4,))),
    R("dist_p1", lambda m, x, y: m.dist(x, y, 1), ((2, 3), (2, 3))),
    R("dist_inf", lambda m, x, y: m.dist(x, y, float("inf")), ((2, 3), (2, 3))),
    R("cdist", lambda m, x, y: m.cdist(x, y), ((3, 4), (2, 4)), **_CDIST),
    R("cdist_batch", lambda m, x, y: m.cdist(x, y), ((2, 3, 4), (2, 5, 4)), **_CDIST),
    R("cdist_p1", lambda m, x, y: m.cdist(x, y, p=1), ((3, 2), (4, 2)), **_CDIST),
    R("cdist_p3", lambda m, x, y: m.cdist(x, y, p=3.0), ((3, 2), (4, 2)), **_CDIST),
    R("cosine_similarity", lambda m, x, y: m.nn.functional.cosine_similarity(x, y), ((3, 4), (3, 4))),
    R("cosine_similarity_dim", lambda m, x, y: m.nn.functional.cosine_similarity(x, y, -1),
      ((2, 3, 4), (3, 4))),
    R("normalize", lambda m, x: m.nn.functional.normalize(x), ((3, 4),)),
    R("normalize_p1_dim0", lambda m, x: m.nn.functional.normalize(x, 1.0, 0), ((3, 4),)),
    R("pairwise_distance", lambda m, x, y: m.nn.functional.pairwise_distance(x, y), ((3, 4), (3, 4))),
    R("pairwise_distance_keep", lambda m, x, y: m.nn.functional.pairwise_distance(x, y, 3, keepdim=True),
      ((3, 4), (3, 4))),
    # einsum: the outermost grad_fn follows torch's composition (Note [How einsum is recorded])
    R("einsum_mm", lambda m, a, b: m.einsum("ij,jk->ik", a, b), ((2, 3), (3, 4))),
    R("einsum_bmm_implicit", lambda m, a, b: m.einsum("bij,bjk", a, b), ((2, 3, 4), (2, 4, 5))),
    R("einsum_dot", lambda m, a, b: m.einsum("i,i->", a, b), ((3,), (3,))),
    R("einsum_outer", lambda m, a, b: m.einsum("i,j->ij", a, b), ((2,), (3,))),
    R("einsum_hadamard", lambda m, a, b: m.einsum("ij,ij->ij", a, b), ((2, 3), (2, 3))),
    R("einsum_rowdot", lambda m, a, b: m.einsum("ij,ij->i", a, b), ((2, 3), (2, 3))),
    R("einsum_transposed_out", lambda m, a, b: m.einsum("ij,jk->ki", a, b), ((2, 3), (3, 4))),
    R("einsum_three", lambda m, a, b, c: m.einsum("ij,jk,kl->il", a, b, c),
      ((2, 3), (3, 4), (4, 2))),
    R("einsum_ellipsis", lambda m, a, b: m.einsum("...ij,...jk->...ik", a, b),
      ((5, 2, 3), (5, 3, 4))),
    R("einsum_ellipsis_broadcast", lambda m, a, b: m.einsum("...i,i->...", a, b),
      ((2, 3, 4), (4,))),
    R("einsum_list", lambda m, a, b: m.einsum("ij,j->i", [a, b]), ((2, 3), (3,))),
    R("einsum_diagonal_pair", lambda m, a, b: m.einsum("ijk,ikj->k", a, b),
      ((2, 3, 3), (2, 3, 3))),
    R("einsum_transpose", lambda m, a: m.einsum("ij->ji", a), ((2, 3),)),
    R("einsum_trace", lambda m, a: m.einsum("ii", a), ((3, 3),)),
    R("einsum_diag", lambda m, a: m.einsum("ii->i", a), ((3, 3),)),
    R("einsum_sum", lambda m, a: m.einsum("ijk->j", a), ((2, 3, 4),)),
    # cross and the add-product family
    R("cross", lambda m, x, y: m.cross(x, y, dim=1), ((4, 3), (4, 3))),
    R("cross_method", lambda m, x, y: x.cross(y, 0), ((3, 2), (3, 2))),
    R("linalg_cross", lambda m, x, y: m.linalg.cross(x, y), ((2, 3), (1, 3))),
    R("addmv", lambda m, s, a, v: m.addmv(s, a, v), ((3,), (3, 4), (4,))),
    R("addmv_scaled", lambda m, s, a, v: s.addmv(a, v, beta=0.5, alpha=2), ((1,), (3, 4), (4,))),
    R("addr", lambda m, s, a, b: m.addr(s, a, b), ((3, 4), (3,), (4,))),
    R("addr_scaled", lambda m, s, a, b: s.addr(a, b, beta=2, alpha=-1), ((4,), (3,), (4,))),
    R("baddbmm", lambda m, s, a, b: m.baddbmm(s, a, b), ((2, 3, 5), (2, 3, 4), (2, 4, 5))),
    R("baddbmm_scaled", lambda m, s, a, b: s.baddbmm(a, b, beta=0.5, alpha=3),
      ((3, 5), (2, 3, 4), (2, 4, 5))),
    R("addbmm", lambda m, s, a, b: m.addbmm(s, a, b), ((3, 5), (2, 3, 4), (2, 4, 5))),
    R("addbmm_only_batch", lambda m, s, a, b: s.addbmm(a, b, alpha=2), ((3, 5), (2, 3, 4), (2, 4, 5)),
      rg=(False, True, True)),
    # losses: kl_div and the margin / embedding / likelihood losses
    L("kl_div_batchmean", lambda m, x, t: _F(m).kl_div(x, t, reduction="batchmean"),
      ((3, 4), (3, 4)), domain=("real", "prob"), grad_fn="DivBackward0"),
    L("kl_div_mean", lambda m, x, t: _F(m).kl_div(x, t), ((3, 4), (3, 4)),
      domain=("real", "prob"), grad_fn="MeanBackward0"),
    L("kl_div_sum_input_only", lambda m, x, t: _F(m).kl_div(x, t, reduction="sum"),
      ((3, 4), (3, 4)), domain=("real", "prob"), requires_grad=(True, False),
      grad_fn="SumBackward0"),
    L("kl_div_none", lambda m, x, t: _F(m).kl_div(x, t, reduction="none"), ((3, 4), (3, 4)),
      domain=("real", "prob"), grad_fn="SubBackward0"),
    L("kl_div_log_target", lambda m, x, t: _F(m).kl_div(x, t, reduction="batchmean",
                                                         log_target=True),
      ((3, 4), (3, 4)), grad_fn="DivBackward0"),
    L("kl_div_module", lambda m, x, t: m.nn.KLDivLoss(reduction="sum", log_target=True)(x, t),
      ((2, 3), (2, 3)), grad_fn="SumBackward0"),
    L("margin_ranking_loss", lambda m, a, b: _F(m).margin_ranking_loss(
        a, b, m.tensor([1., -1., 1., -1., 1.]), margin=0.3), ((5,), (5,)), grad_fn="MeanBackward0"),
    L("margin_ranking_loss_none", lambda m, a, b: m.nn.MarginRankingLoss(reduction="none")(
        a, b, m.tensor([1., -1., -1.])), ((3,), (3,)), grad_fn="ClampMinBackward0"),
    L("hinge_embedding_loss", lambda m, x: _F(m).hinge_embedding_loss(
        x, m.tensor([[1., -1., -1.], [-1., 1., -1.]])), ((2, 3),), grad_fn="MeanBackward0"),
    L("hinge_embedding_loss_none", lambda m, x: m.nn.HingeEmbeddingLoss(2.0, reduction="none")(
        x, m.tensor([1., -1., -1., 1.])), ((4,),), grad_fn="AddBackward0"),
    L("soft_margin_loss", lambda m, x: _F(m).soft_margin_loss(
        x, m.tensor([[1., -1., -1.], [-1., 1., 1.]])), ((2, 3),),
      grad_fn="SoftMarginLossBackward0"),
    L("soft_margin_loss_sum", lambda m, x: m.nn.SoftMarginLoss(reduction="sum")(
        x, m.tensor([1., -1., 1.])), ((3,),), grad_fn="SoftMarginLossBackward0"),
    L("soft_margin_loss_none", lambda m, x: _F(m).soft_margin_loss(
        x, m.tensor([1., -1., 1.]), reduction="none"), ((3,),),
      grad_fn="SoftMarginLossBackward0"),
    L("cosine_embedding_loss", lambda m, a, b: _F(m).cosine_embedding_loss(
        a, b, m.tensor([1., -1., -1.]), margin=-0.5), ((3, 4), (3, 4)), grad_fn="MeanBackward0"),
    L("cosine_embedding_loss_1d", lambda m, a, b: m.nn.CosineEmbeddingLoss(reduction="sum")(
        a, b, m.tensor(1.)), ((4,), (4,)), grad_fn="SumBackward0"),
    L("triplet_margin_loss", lambda m, a, p, n: _F(m).triplet_margin_loss(a, p, n, margin=3.0),
      ((3, 4), (3, 4), (3, 4)), grad_fn="MeanBackward0"),
    L("triplet_margin_loss_swap_p1", lambda m, a, p, n: m.nn.TripletMarginLoss(
        margin=3.0, p=1, swap=True, reduction="none")(a, p, n), ((3, 4), (3, 4), (3, 4)),
      grad_fn="ClampMinBackward0"),
    L("poisson_nll_loss", lambda m, x, t: _F(m).poisson_nll_loss(x, t), ((3, 4), (3, 4)),
      domain=("real", "positive"), grad_fn="MeanBackward0"),
    L("poisson_nll_loss_full", lambda m, x, t: m.nn.PoissonNLLLoss(
        log_input=False, full=True, reduction="sum")(x, t), ((3, 4), (3, 4)),
      domain="positive", grad_fn="SumBackward0"),
    L("poisson_nll_loss_none", lambda m, x, t: _F(m).poisson_nll_loss(x, t, reduction="none"),
      ((3,), (3,)), domain=("real", "positive"), grad_fn="SubBackward0"),
    L("gaussian_nll_loss", lambda m, x, t, v: _F(m).gaussian_nll_loss(x, t, v),
      ((3, 4), (3, 4), (3, 4)), domain=("real", "real", "positive"), grad_fn="MeanBackward0"),
    L("gaussian_nll_loss_homoscedastic", lambda m, x, t, v: m.nn.GaussianNLLLoss(
        full=True, reduction="sum")(x, t, v), ((3, 4), (3, 4), (3,)),
      domain=("real", "real", "positive"), grad_fn="SumBackward0"),
    L("gaussian_nll_loss_float_var", lambda m, x, t: _F(m).gaussian_nll_loss(
        x, t, 0.5, reduction="none"), ((3,), (3,)), grad_fn="MulBackward0"),
]


def _F(m: object) -> object:
    return m.nn.functional  # type: ignore[attr-defined]
