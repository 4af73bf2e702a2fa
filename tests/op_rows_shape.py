"""Op-table rows: shape, indexing and creation (see tests/op_table.py for what a row is and which checks it gets)."""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from op_table import OpRow, S, _idx


def _inplace(method: str, *args: Any, **kwargs: Any) -> Callable:
    """A row function: ``y = x * 1; y.<method>(*args); return y`` (args may use ``m``)."""
    def fn(m: Any, x: Any, *rest: Any) -> Any:
        y = x * 1
        built = [a(m) if callable(a) else a for a in args]
        getattr(y, method)(*built, *rest, **kwargs)
        return y
    return fn


def SA(name: str, fn: Callable, inputs: list, **kw: Any) -> OpRow:
    """A shape-family row whose inputs may be fixed arrays as well as shapes."""
    return OpRow(name, fn, tuple(x if isinstance(x, np.ndarray) else tuple(x) for x in inputs),
                 "shape", **kw)


_IDX = [[0, 1, 2, 0], [2, 0, 1, 1]]  # no position written twice: the gradient is the derivative


def _scatter_index(m: Any) -> Any:
    return m.tensor(_IDX)


ROWS: list[OpRow] = [
    # tril / triu
    S("tril", lambda m, x: x.tril(), [(3, 4)], grad_fn="TrilBackward0"),
    S("tril_diag", lambda m, x: m.tril(x, -1), [(2, 3, 4)], grad_fn="TrilBackward0"),
    S("triu", lambda m, x: x.triu(1), [(3, 4)], grad_fn="TriuBackward0"),
    S("triu_fn_neg", lambda m, x: m.triu(x, diagonal=-1), [(4, 3)], grad_fn="TriuBackward0"),
    S("tril_inplace", _inplace("tril_"), [(3, 3)], grad_fn="TrilBackward0"),
    S("triu_inplace", _inplace("triu_", 1), [(3, 3)], grad_fn="TriuBackward0"),
    # roll / rot90
    S("roll_dim", lambda m, x: x.roll(1, 0), [(3, 4)], grad_fn="RollBackward0"),
    S("roll_flat", lambda m, x: m.roll(x, -2), [(3, 4)], grad_fn="RollBackward0"),
    S("roll_dims", lambda m, x: x.roll((1, -3), (0, -1)), [(2, 3, 4)], grad_fn="RollBackward0"),
    S("rot90", lambda m, x: x.rot90(), [(3, 4)], grad_fn="Rot90Backward0"),
    S("rot90_k2", lambda m, x: m.rot90(x, 2, (1, 2)), [(2, 3, 4)], grad_fn="Rot90Backward0"),
    S("rot90_neg", lambda m, x: m.rot90(x, -1), [(3, 4)], grad_fn="Rot90Backward0"),
    S("rot90_k0", lambda m, x: x.rot90(0), [(3, 4)], grad_fn="Rot90Backward0"),
    # diagonals and trace
    S("diag_vector", lambda m, x: m.diag(x), [(3,)], grad_fn="DiagEmbedBackward0"),
    S("diag_vector_offset", lambda m, x: x.diag(-1), [(3,)], grad_fn="DiagEmbedBackward0"),
    S("diag_matrix", lambda m, x: m.diag(x), [(3, 4)], grad_fn="DiagonalBackward0_copy"),
    S("diag_matrix_offset", lambda m, x: x.diag(1), [(3, 4)], grad_fn="DiagonalBackward0_copy"),
    S("diag_embed", lambda m, x: m.diag_embed(x), [(2, 3)], grad_fn="DiagEmbedBackward0"),
    S("diag_embed_dims", lambda m, x: x.diag_embed(1, 0, 2), [(2, 3)],
      grad_fn="DiagEmbedBackward0"),
    S("trace", lambda m, x: x.trace(), [(3, 4)], grad_fn="TraceBackward0"),
    S("trace_fn", lambda m, x: m.trace(x), [(3, 3)], grad_fn="TraceBackward0"),
    # composed: tile, movedim, broadcasting
    S("tile", lambda m, x: x.tile(2), [(3, 2)], grad_fn="RepeatBackward0"),
    S("tile_more_dims", lambda m, x: m.tile(x, (2, 1, 3)), [(3, 2)], grad_fn="RepeatBackward0"),
    S("movedim", lambda m, x: x.movedim(0, -1), [(2, 3, 4)], grad_fn="PermuteBackward0"),
    S("movedim_tuple", lambda m, x: m.movedim(x, (0, 1), (2, 0)), [(2, 3, 4)],
      grad_fn="PermuteBackward0"),
    S("moveaxis", lambda m, x: m.moveaxis(x, 1, 0), [(2, 3)], grad_fn="PermuteBackward0"),
    S("movedim_0d", lambda m, x: x.movedim(0, -1), [()], grad_fn="AliasBackward0"),
    S("swapdims_method", lambda m, x: x.swapdims(0, 2), [(2, 3, 4)],
      grad_fn="TransposeBackward0"),
    S("broadcast_to_fn", lambda m, x: m.broadcast_to(x, (2, 3, 4)), [(3, 1)],
      grad_fn="ExpandBackward0"),
    S("broadcast_tensors", lambda m, a, b: m.broadcast_tensors(a, b), [(3, 1), (4,)]),
    S("broadcast_tensors_same", lambda m, a, b: m.broadcast_tensors(a, b), [(2, 3), (2, 3)]),
    # atleast_nd and stacking
    S("atleast_1d_0d", lambda m, x: m.atleast_1d(x), [()], grad_fn="ViewBackward0"),
    S("atleast_1d_keep", lambda m, x: m.atleast_1d(x), [(3,)]),
    S("atleast_1d_many", lambda m, a, b: m.atleast_1d(a, b), [(), (3,)]),
    S("atleast_2d_1d", lambda m, x: m.atleast_2d(x), [(3,)], grad_fn="UnsqueezeBackward0"),
    S("atleast_2d_0d", lambda m, x: m.atleast_2d(x), [()], grad_fn="ViewBackward0"),
    S("atleast_3d_1d", lambda m, x: m.atleast_3d(x), [(3,)], grad_fn="UnsqueezeBackward0"),
    S("atleast_3d_2d", lambda m, x: m.atleast_3d(x), [(2, 3)], grad_fn="UnsqueezeBackward0"),
    S("atleast_3d_list", lambda m, a, b: m.atleast_3d([a, b]), [(), (2, 3, 4)]),
    S("hstack", lambda m, a, b: m.hstack([a, b]), [(2, 3), (2, 1)], grad_fn="CatBackward0"),
    S("hstack_1d", lambda m, a, b: m.hstack((a, b)), [(3,), (2,)], grad_fn="CatBackward0"),
    S("vstack", lambda m, a, b: m.vstack([a, b]), [(3,), (2, 3)], grad_fn="CatBackward0"),
    S("dstack", lambda m, a, b: m.dstack([a, b]), [(3,), (1, 3)], grad_fn="CatBackward0"),
    S("column_stack", lambda m, a, b: m.column_stack([a, b]), [(3,), (3, 2)],
      grad_fn="CatBackward0"),
    # repeat_interleave / meshgrid / kron
    S("repeat_interleave", lambda m, x: x.repeat_interleave(2), [(2, 3)],
      grad_fn="ViewBackward0"),
    S("repeat_interleave_dim", lambda m, x: m.repeat_interleave(x, 3, dim=1), [(2, 3)],
      grad_fn="ViewBackward0"),
    S("repeat_interleave_1d", lambda m, x: x.repeat_interleave(2), [(3,)],
      grad_fn="ViewBackward0"),
    S("repeat_interleave_tensor", lambda m, x: x.repeat_interleave(_idx(m, [1, 0, 3]), dim=0),
      [(3, 2)], grad_fn="IndexSelectBackward0"),
    S("repeat_interleave_tensor_flat", lambda m, x: m.repeat_interleave(x, _idx(m, [2, 1, 0, 1])),
      [(2, 2)], grad_fn="IndexSelectBackward0"),
    S("meshgrid_ij", lambda m, a, b: m.meshgrid(a, b, indexing="ij"), [(3,), (2,)],
      grad_fn="ExpandBackward0"),
    S("meshgrid_xy", lambda m, a, b, c: m.meshgrid([a, b, c], indexing="xy"), [(3,), (2,), (4,)],
      grad_fn="ExpandBackward0"),
    S("kron", lambda m, a, b: m.kron(a, b), [(2, 3), (2, 2)], grad_fn="UnsafeViewBackward0"),
    S("kron_ranks", lambda m, a, b: a.kron(b), [(3,), (2, 2)], grad_fn="UnsafeViewBackward0"),
    # masked_select / take / take_along_dim
    S("masked_select", lambda m, x: x.masked_select(_idx(m, [[True, False, True, True],
                                                             [False, False, True, False]])),
      [(2, 4)], grad_fn="MaskedSelectBackward0"),
    S("masked_select_broadcast_mask", lambda m, x: m.masked_select(
        x, _idx(m, [True, False, True])), [(2, 3)], grad_fn="MaskedSelectBackward0"),
    S("masked_select_broadcast_input", lambda m, x: m.masked_select(
        x, _idx(m, [[True, False, True], [False, True, True]])), [(3,)],
      grad_fn="MaskedSelectBackward0"),
    S("masked_select_0d", lambda m, x: x.masked_select(_idx(m, True)), [()],
      grad_fn="MaskedSelectBackward0"),
    S("take_0d", lambda m, x: x.take(_idx(m, [0, -1])), [()], grad_fn="TakeBackward0"),
    S("take", lambda m, x: x.take(_idx(m, [0, 5, -1, 5])), [(3, 4)], grad_fn="TakeBackward0"),
    S("take_2d_index", lambda m, x: m.take(x, _idx(m, [[1, 2], [0, 0]])), [(2, 3)],
      grad_fn="TakeBackward0"),
    S("take_along_dim", lambda m, x: m.take_along_dim(x, _scatter_index(m), 0), [(3, 4)],
      grad_fn="GatherBackward0"),
    S("take_along_dim_broadcast", lambda m, x: x.take_along_dim(_idx(m, [[1], [2], [0]]), 1),
      [(3, 4)], grad_fn="GatherBackward0"),
    S("take_along_dim_flat", lambda m, x: m.take_along_dim(x, _idx(m, [1, 2, 1])), [(3, 4)],
      grad_fn="GatherBackward0"),
    # scatter family
    S("scatter_src", lambda m, x, s: x.scatter(0, _scatter_index(m), s), [(3, 4), (2, 4)],
      grad_fn="ScatterBackward0"),
    S("scatter_src_only", lambda m, x, s: m.scatter(x, 1, _idx(m, [[2, 0], [1, 3]]), s),
      [(2, 4), (2, 2)], grad_fn="ScatterBackward0", requires_grad=(False, True)),
    S("scatter_value", lambda m, x: x.scatter(0, _scatter_index(m), 2.5), [(3, 4)],
      grad_fn="ScatterBackward1"),
    S("scatter_value_kw", lambda m, x: m.scatter(x, 1, _idx(m, [[3], [0]]), value=-1.0),
      [(2, 4)], grad_fn="ScatterBackward1"),
    S("scatter_inplace", _inplace("scatter_", 0, _scatter_index), [(3, 4), (2, 4)],
      grad_fn="ScatterBackward0"),
    S("scatter_add", lambda m, x, s: x.scatter_add(0, _idx(m, [[0, 0, 2, 0], [0, 1, 1, 0]]), s),
      [(3, 4), (2, 4)], grad_fn="ScatterAddBackward0"),
    S("scatter_add_fn", lambda m, x, s: m.scatter_add(x, 1, _idx(m, [[1, 1], [0, 2]]), s),
      [(2, 3), (2, 2)], grad_fn="ScatterAddBackward0"),
    S("scatter_add_0d_index_src", lambda m, x, s: x.scatter_add(0, _idx(m, 1), s), [(3,), ()],
      grad_fn="ScatterAddBackward0"),
    S("scatter_0d_index_src", lambda m, x, s: m.scatter(x, 0, _idx(m, 2), s), [(3,), ()],
      grad_fn="ScatterBackward0"),
    S("scatter_add_inplace", _inplace("scatter_add_", 0, _scatter_index), [(3, 4), (2, 4)],
      grad_fn="ScatterAddBackward0"),
    # scatter_reduce: every reduction but prod (see tests/test_ops_shape.py), with and without
    # self
    *[S(f"scatter_reduce_{reduce}{'' if include_self else '_exclude_self'}",
        (lambda r, inc: lambda m, x, s: x.scatter_reduce(
            0, _idx(m, [[0, 0, 1], [1, 0, 1]]), s, r, include_self=inc))(reduce, include_self),
        [(2, 3), (2, 3)], grad_fn="ScatterReduceBackward0")
      for reduce in ("sum", "mean", "amax", "amin") for include_self in (True, False)],
    S("scatter_reduce_dim1", lambda m, x, s: m.scatter_reduce(
        x, 1, _idx(m, [[2, 2], [0, 1]]), s, "mean"), [(2, 3), (2, 2)],
      grad_fn="ScatterReduceBackward0"),
    SA("scatter_reduce_amax_ties", lambda m, x, s: x.scatter_reduce(
        0, _idx(m, [[0, 0, 1], [1, 0, 1]]), s, "amax"),
      [np.array([[1.0, 5.0, 0.0], [2.0, 0.0, 3.0]]), np.array([[1.0, 5.0, 3.0], [2.0, 5.0, 3.0]])],
      grad_fn="ScatterReduceBackward0",
      no_gradcheck="amax is not differentiable at ties (torch shares the gradient evenly)",
      no_gradgradcheck="not differentiable at ties"),
    S("scatter_reduce_inplace", _inplace("scatter_reduce_", 0, lambda m: _idx(m, [[1, 0, 1]]),
                                         reduce="amin", include_self=False),
      [(2, 3), (1, 3)], grad_fn="ScatterReduceBackward0"),
    # index_add / index_copy / index_fill
    S("index_add", lambda m, x, s: x.index_add(0, _idx(m, [2, 0, 2]), s), [(3, 4), (3, 4)],
      grad_fn="IndexAddBackward0"),
    S("index_add_alpha", lambda m, x, s: m.index_add(x, 1, _idx(m, [1, 1]), s, alpha=-2),
      [(3, 4), (3, 2)], grad_fn="IndexAddBackward0"),
    S("index_add_inplace", _inplace("index_add_", 0, lambda m: _idx(m, [1])), [(3, 4), (1, 4)],
      grad_fn="IndexAddBackward0"),
    S("index_copy", lambda m, x, s: x.index_copy(0, _idx(m, [2, 0]), s), [(3, 4), (2, 4)],
      grad_fn="IndexCopyBackward0"),
    S("index_copy_fn", lambda m, x, s: m.index_copy(x, 1, _idx(m, [3]), s), [(2, 4), (2, 1)],
      grad_fn="IndexCopyBackward0"),
    S("index_copy_inplace", _inplace("index_copy_", 1, lambda m: _idx(m, [0, 2])),
      [(3, 4), (3, 2)], grad_fn="IndexCopyBackward0"),
    S("index_fill", lambda m, x: x.index_fill(1, _idx(m, [0, -1]), 1.5), [(3, 4)],
      grad_fn="IndexFillBackward0"),
    S("index_fill_tensor", lambda m, x, v: m.index_fill(x, 0, _idx(m, [1, 1, 2]), v),
      [(3, 4), ()], grad_fn="IndexFillBackward1"),
    S("index_fill_inplace", _inplace("index_fill_", 0, lambda m: _idx(m, [2]), 0.5), [(3, 4)],
      grad_fn="IndexFillBackward0"),
    # index_put / masked_scatter
    S("index_put", lambda m, x, v: x.index_put((_idx(m, [0, 2]), _idx(m, [1, 1])), v),
      [(3, 4), (2,)], grad_fn="IndexPutBackward0"),
    S("index_put_broadcast", lambda m, x, v: m.index_put(x, (_idx(m, [True, False, True]),), v),
      [(3, 4), (4,)], grad_fn="IndexPutBackward0"),
    S("index_put_accumulate", lambda m, x, v: x.index_put((_idx(m, [0, 0, 2]),), v,
                                                          accumulate=True),
      [(3, 4), (3, 4)], grad_fn="IndexPutBackward0"),
    S("index_put_inplace", _inplace("index_put_", lambda m: (_idx(m, [1]), _idx(m, [3]))),
      [(3, 4), ()], grad_fn="IndexPutBackward0"),
    S("index_put_inplace_accumulate", _inplace("index_put_", lambda m: (_idx(m, [1, 1]),),
                                               accumulate=True),
      [(3, 4), (4,)], grad_fn="IndexPutBackward0"),
    S("masked_scatter", lambda m, x, s: x.masked_scatter(
        _idx(m, [[True, False, True], [False, False, True]]), s), [(2, 3), (4,)],
      grad_fn="MaskedScatterBackward0"),
    S("masked_scatter_broadcast_mask", lambda m, x, s: m.masked_scatter(
        x, _idx(m, [False, True, True]), s), [(2, 3), (2, 2)], grad_fn="MaskedScatterBackward0"),
    S("masked_scatter_inplace", _inplace("masked_scatter_", lambda m: _idx(m, [True, False])),
      [(3, 2), (5,)], grad_fn="MaskedScatterBackward0"),
    # flips, ravel and splits made of other ops
    S("fliplr", lambda m, x: x.fliplr(), [(2, 3)], grad_fn="FlipBackward0"),
    S("flipud", lambda m, x: m.flipud(x), [(2, 3)], grad_fn="FlipBackward0"),
    S("ravel", lambda m, x: x.ravel(), [(2, 3)], grad_fn="ViewBackward0"),
    S("ravel_noncontig", lambda m, x: m.ravel(x.t()), [(2, 3)], grad_fn="ViewBackward0"),
    S("tensor_split", lambda m, x: x.tensor_split(3, dim=1), [(2, 4)], grad_fn="SliceBackward0"),
    S("tensor_split_indices", lambda m, x: m.tensor_split(x, [1, 3]), [(4, 2)],
      grad_fn="SliceBackward0"),
    S("tensor_split_empty_piece", lambda m, x: m.tensor_split(x, [3, 1]), [(4, 2)],
      grad_fn="SliceBackward0"),
    S("tensor_split_one_used", lambda m, x: x.tensor_split(2)[1] * 2, [(3, 2)]),
    S("hsplit", lambda m, x: x.hsplit(2), [(2, 4)], grad_fn="SliceBackward0"),
    S("vsplit", lambda m, x: m.vsplit(x, [1]), [(3, 2)], grad_fn="SliceBackward0"),
    S("dsplit", lambda m, x: x.dsplit([1]), [(1, 2, 3)], grad_fn="SliceBackward0"),
    # select/slice/diagonal_scatter, narrow_copy
    S("select_scatter", lambda m, x, s: m.select_scatter(x, s, 0, 1), [(3, 4), (4,)],
      grad_fn="SelectScatterBackward0"),
    S("select_scatter_neg", lambda m, x, s: x.select_scatter(s, -1, -1), [(3, 4), (3,)],
      grad_fn="SelectScatterBackward0"),
    S("slice_scatter", lambda m, x, s: m.slice_scatter(x, s, 1, 0, 4, 2), [(3, 4), (3, 2)],
      grad_fn="SliceScatterBackward0"),
    S("slice_scatter_start", lambda m, x, s: x.slice_scatter(s, 0, -2), [(3, 4), (2, 4)],
      grad_fn="SliceScatterBackward0"),
    S("diagonal_scatter", lambda m, x, s: m.diagonal_scatter(x, s, 1), [(3, 4), (3,)],
      grad_fn="DiagonalScatterBackward0"),
    S("diagonal_scatter_dims", lambda m, x, s: x.diagonal_scatter(s, -1, 1, 0), [(3, 4), (3,)],
      grad_fn="DiagonalScatterBackward0"),
    S("diagonal_scatter_src_only", lambda m, x, s: m.diagonal_scatter(x, s), [(2, 2), (2,)],
      grad_fn="DiagonalScatterBackward0", requires_grad=(False, True)),
    S("narrow_copy", lambda m, x: x.narrow_copy(1, 1, 2), [(3, 4)],
      grad_fn="NarrowCopyBackward0"),
    S("narrow_copy_fn", lambda m, x: m.narrow_copy(x, 0, -2, 1), [(3, 4)],
      grad_fn="NarrowCopyBackward0"),
    # block_diag / diagflat / cartesian_prod / combinations
    S("block_diag", lambda m, a, b, c: m.block_diag(a, b, c), [(2, 3), (), (2,)],
      grad_fn="BlockDiagBackward0"),
    S("block_diag_some_grad", lambda m, a, b: m.block_diag(a, b), [(2, 2), (1, 3)],
      grad_fn="BlockDiagBackward0", requires_grad=(False, True)),
    S("diagflat", lambda m, x: m.diagflat(x), [(2, 2)], grad_fn="DiagEmbedBackward0"),
    S("diagflat_offset", lambda m, x: x.diagflat(-1), [(3,)], grad_fn="DiagEmbedBackward0"),
    S("diagflat_noncontig", lambda m, x: x.t().diagflat(), [(2, 3)],
      grad_fn="DiagEmbedBackward0"),
    S("cartesian_prod", lambda m, a, b: m.cartesian_prod(a, b), [(3,), (2,)],
      grad_fn="StackBackward0"),
    S("cartesian_prod_three", lambda m, a, b, c: m.cartesian_prod(a, b, c), [(2,), (2,), (3,)],
      grad_fn="StackBackward0"),
    S("cartesian_prod_one", lambda m, a: m.cartesian_prod(a), [(3,)]),
    S("combinations", lambda m, a: m.combinations(a), [(4,)], grad_fn="StackBackward0"),
    S("combinations_replacement", lambda m, a: m.combinations(a, 3, with_replacement=True),
      [(3,)], grad_fn="StackBackward0"),
    # unfold (a view)
    S("unfold", lambda m, x: x.unfold(1, 2, 1), [(3, 4)], grad_fn="UnfoldBackward0"),
    S("unfold_step", lambda m, x: x.unfold(0, 2, 2), [(5, 3)], grad_fn="UnfoldBackward0"),
    S("unfold_of_view", lambda m, x: x.t().unfold(-1, 3, 1), [(4, 2)], grad_fn="UnfoldBackward0"),
]


def _view_after_base_write(m: Any, x: Any) -> Any:
    """A view whose base is then written in place: its grad_fn becomes AsStridedBackward0."""
    y = x * 1
    v = y[1:, ::2]
    y.mul_(2)
    return v


# Views regenerated after an in-place write into their base (npgrad/_ops/views.py)
ROWS += [
    S("view_after_base_write", _view_after_base_write, [(3, 4)], grad_fn="AsStridedBackward0"),
]

# In-place view ops (npgrad/_ops/view_inplace.py): torch's in-place overload names
ROWS += [
    S("t_inplace", _inplace("t_"), [(3, 4)], grad_fn="TBackward1"),
    S("transpose_inplace", _inplace("transpose_", 0, 2), [(2, 3, 4)],
      grad_fn="TransposeBackward1"),
    S("swapdims_inplace", _inplace("swapdims_", -1, 0), [(2, 3)], grad_fn="TransposeBackward1"),
    S("squeeze_inplace", _inplace("squeeze_"), [(2, 1, 3)], grad_fn="SqueezeBackward3"),
    S("squeeze_inplace_dim", _inplace("squeeze_", 1), [(2, 1, 3)], grad_fn="SqueezeBackward4"),
    S("squeeze_inplace_dims", _inplace("squeeze_", (0, 1)), [(2, 1, 3)],
      grad_fn="SqueezeBackward5"),
    S("unsqueeze_inplace", _inplace("unsqueeze_", 1), [(2, 3)], grad_fn="UnsqueezeBackward1"),
]
