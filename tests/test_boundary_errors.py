"""Calls torch refuses, refused by npgrad with torch's exception type and text (issue 12): one
parametrized table per class of case, each call run in both libraries and compared.

Each row is an expression over ``torch`` (the library under test), ``F`` (its
``nn.functional``) and a few ready tensors; it runs once with torch 2.13 as the oracle and once
with npgrad.  Both must raise the same exception type with the same text, or both succeed with
the same shape and dtype.
"""
from __future__ import annotations

import warnings

import pytest

import npgrad

torch = pytest.importorskip("torch")


def _outcome(mod, expr):
    env = {"torch": mod, "F": mod.nn.functional, "t": mod.ones(2, 3), "s": mod.eye(2) * 2}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            result = eval(expr, env)  # noqa: S307 - the table's own expressions
        except Exception as exc:  # noqa: BLE001 - the exception is the outcome
            return type(exc).__name__, str(exc)
    if isinstance(result, (torch.Tensor, npgrad.Tensor)):
        return "ok", (tuple(result.shape), str(result.dtype).split(".")[-1])
    return "ok", type(result).__name__


def _same(expr):
    assert _outcome(npgrad, expr) == _outcome(torch, expr)


# Note [An alias has its own name in the errors]: a method's or function's other spellings
ALIASES = [
    "t.absolute(1)", "t.arccos(bogus=1)", "t.arcsinh_(1)", "t.ndimension(1)", "t.nelement(1)",
    "t.negative(1)", "t.abs(1)", "t.clip('x')", "t.arctan2()", "t.arctan2_(t, 1)",
    "t.arctan2(bogus=1)", "t.multiply()", "t.multiply(t, 'x')", "t.multiply(3)",
    "t.subtract()", "t.subtract(t, 'x')", "t.subtract(2, 3)", "t.subtract(t, alpha=2)",
    "torch.special.erf()", "torch.special.erf(t, 1)", "torch.special.erf(t, bogus=1)",
    "torch.special.softmax(t)", "torch.special.softmax(t, 0, 'x')",
    "torch.special.softmax(t, 0, torch.float64)", "torch.special.log_softmax(t, 0, 1)",
    "torch.special.log_softmax(t, 0, dtype=torch.float64)", "torch.special.logsumexp(t)",
    "torch.special.logsumexp(t, 0, 1, 2)", "torch.special.logsumexp(t, 'x')",
    "torch.linalg.matmul(t)", "torch.linalg.matmul(t, 'x')", "torch.linalg.matmul(t, t.T)",
    "torch.row_stack()", "torch.row_stack([t], 1)", "torch.row_stack([t, t])",
]


@pytest.mark.parametrize("expr", ALIASES)
def test_alias_names_its_own_spelling(expr):
    _same(expr)


# Note [Deprecated overloads]: one visible signature, but not the only one
DEPRECATED = [
    "t.add()", "torch.add(t)", "t.add_()", "t.sub()", "t.sub_()", "torch.sub(t)",
    "t.addcmul(t)", "t.addcmul_(t)", "t.addcdiv(t)", "t.addcdiv_(t)", "torch.addcmul(t, t)",
    "torch.addcdiv(t, t)", "torch.addmv(t, t)", "torch.addr(t, t)", "torch.addbmm(t, t)",
    "t.addmv(t)", "t.addr(t)", "t.addbmm(t)", "t.baddbmm(t)", "t.copy_()", "t.copy_(None)",
    "t.copy_([1.])", "t.copy_(t, 'x')", "t.copy_(t, bogus=1)", "t.copy_(1.5)",
    "t.copy_(other=t)", "t.copy_(t, non_blocking=True)", "t.add(t, alpha=2)",
]


@pytest.mark.parametrize("expr", DEPRECATED)
def test_deprecated_overloads_shape_the_error(expr):
    _same(expr)


# the first argument of a function-level in-place op, or of a torch-level linalg function,
# checked by torch's parser
PARSED_FIRST_ARGUMENT = [
    "F.elu(1.5, inplace=True)", "F.selu('x', inplace=True)", "F.celu([1.], inplace=True)",
    "F.hardtanh(1, inplace=True)", "F.relu6(1, inplace=True)",
    "F.hardsigmoid(None, inplace=True)", "F.leaky_relu(1, 0.2, inplace=True)",
    "F.elu(t * 1, inplace=True)", "torch.slogdet(1.5)", "torch.slogdet(s, 1)",
    "torch.slogdet()", "torch.logdet([1])", "torch.cholesky(1)", "torch.cholesky(s, bogus=1)",
    "torch.qr(1)", "torch.qr(s, bogus=1)", "torch.svd('x')", "torch.svd(s, 1, 2, 3)",
    "torch.pinverse(1)", "torch.pinverse(s, bogus=1)", "torch.cholesky_solve(1.5, s)",
    "torch.cholesky_solve(s, None)", "torch.cholesky_solve(s)", "torch.cholesky_solve(s, s)",
    "torch.logdet(s)",
]


@pytest.mark.parametrize("expr", PARSED_FIRST_ARGUMENT)
def test_first_argument_parsed(expr):
    _same(expr)


_IMG = "torch.ones(1, 2, 6, 6)"
# checks.pooling_output_size and torch's pooling order: divisor, size(-3), output size, shape,
# dtype
POOLING = [
    "F.avg_pool1d(torch.ones(1, 2, 6), 2, 0)", f"F.avg_pool2d({_IMG}, 2, 0)",
    f"F.avg_pool2d({_IMG}, 2, (1, 0))", "F.lp_pool1d(torch.ones(1, 2, 6), 2., 2, 0)",
    f"F.lp_pool2d({_IMG}, 2., 2, 0)", "F.avg_pool2d(torch.tensor(1.), 2)",
    "F.lp_pool2d(torch.tensor(1.), 2., 2)", "F.avg_pool2d(torch.ones(6, 6), 2)",
    "F.avg_pool1d(torch.ones(0, 1, 3), 2)", "F.lp_pool1d(torch.ones(0, 1, 3), 2., 2)",
    "F.avg_pool1d(torch.ones(1, 2, 6, dtype=torch.bool), 2)",
    "F.avg_pool2d(torch.ones(1, 2, 6, 6, dtype=torch.bool), 2)",
    "F.avg_pool2d(torch.ones(1, 2, 6, 6, dtype=torch.int64), 2)",
    f"F.avg_pool2d({_IMG}, 2, 0, divisor_override=0)",
    "F.avg_pool2d(torch.tensor(1.), 2, divisor_override=0)",
    "F.avg_pool2d(torch.ones(1, 6, 6), 2, 1, -1)", "F.avg_pool2d(torch.ones(1, 6, 6), -2, 1)",
    "F.avg_pool2d(torch.ones(1, 6, 6), 2, 1, 5)", "F.avg_pool2d(torch.ones(1, 6, 6), 2, -1)",
    f"F.avg_pool2d({_IMG}, 3, 2, 1, True)", "F.avg_pool2d(torch.ones(1, 2, 7, 6), 3, 2, 1, True)",
    "F.max_pool1d(torch.ones(1, 2, 6, dtype=torch.int64), 2)",
    "F.max_pool1d(torch.ones(1, 2, 6, dtype=torch.uint8), 2)",
    "F.max_pool1d(torch.ones(1, 2, 6, dtype=torch.bool), 2)",
    "F.max_pool1d(torch.ones(1, 2, 6, dtype=torch.int64), 2, return_indices=True)",
    "F.max_pool1d(torch.ones(1, 2, 6, dtype=torch.float16), 2)",
    f"F.lp_pool2d({_IMG}, 2., torch.tensor(2))", f"F.lp_pool2d({_IMG}, 2., (2, 3))",
]


@pytest.mark.parametrize("expr", POOLING)
def test_pooling_checks(expr):
    _same(expr)


# _sliding_block_checks: torch's col2im / im2col checks, in each kernel's order
SLIDING_BLOCKS = [
    "F.unfold(torch.tensor(1.), 2)", "F.unfold(torch.ones(3), 2)", "F.unfold(torch.ones(0, 3), 2)",
    "F.unfold(torch.ones(3, 3), 2)", "F.unfold(torch.ones(1, 1, 1, 3, 3), 2)",
    "F.unfold(torch.ones(1, 0, 1, 3, 3), 2)", "F.unfold(torch.ones(1, 1, 3, 3), 1, 0, -1, 0)",
    "F.unfold(torch.ones(1, 1, 3, 3), 1, 1, -1, 0)", "F.unfold(torch.ones(1, 1, 3, 3), (1, 1, 1))",
    "F.unfold(torch.ones(1, 1, 3, 3), 2, (1, 1, 1))", "F.unfold(torch.ones(1, 1, 3, 3), 0)",
    "F.unfold(torch.ones(1, 1, 3, 3, dtype=torch.int64), 2)",
    "F.unfold(torch.ones(1, 1, 3, 3, dtype=torch.bool), 2)", "F.unfold(torch.ones(0, 3, 3), 2)",
    "F.unfold(torch.ones(0, 1, 3, 3), 2)", "F.unfold(torch.ones(1, 0, 3, 3), 2)",
    "F.unfold(torch.ones(1, 3, 3), 2)", "F.unfold(torch.ones(1, 1, 3, 3), 4)",
    "F.fold(torch.tensor(1.), (3, 3), 2)", "F.fold(torch.ones(1, 1, 4, 4), (3, 3), 2)",
    "F.fold(torch.ones(0, 4, 4), (3, 3), 2)", "F.fold(torch.ones(1, 4, 4), (3, 3), 1, 0, -1, 0)",
    "F.fold(torch.ones(1, 4, 4), (3, 3), 1, 1, -1, 0)",
    "F.fold(torch.ones(1, 4, 4), (3, 3), 1, 0, 0, 1)",
    "F.fold(torch.ones(1, 4, 4), (3, 3), (1, 1, 1))", "F.fold(torch.ones(1, 4, 4), (), 2)",
    "F.fold(torch.ones(1, 4, 4), (3, 3, 3), 2)", "F.fold(torch.ones(1, 4, 4), (3, 3), 0)",
    "F.fold(torch.ones(1, 4, 4, dtype=torch.int64), (3, 3), 2)",
    "F.fold(torch.ones(0, 4), (3, 3), 2)", "F.fold(torch.ones(3, 0, 4), (3, 3), 2)",
    "F.fold(torch.ones(4, 4), (3, 3), 2)", "F.fold(torch.ones(1, 5, 4), (3, 3), 2)",
    "F.fold(torch.ones(4), (3, 3), 2)",
]


@pytest.mark.parametrize("expr", SLIDING_BLOCKS)
def test_sliding_block_checks(expr):
    _same(expr)


# dropout of an integer or bool tensor: torch divides its drawn noise in place by 1 - p;
# feature dropout needs the channel dims
DROPOUT = [
    "F.dropout(torch.ones(2, 3, dtype=torch.bool))",
    "F.dropout(torch.ones(2, 3, dtype=torch.int64))",
    "F.dropout2d(torch.ones(2, 3, dtype=torch.int64))",
    "F.dropout1d(torch.ones(2, 3, dtype=torch.bool))",
    "F.dropout3d(torch.ones(2, 3, dtype=torch.bool))", "F.dropout2d(torch.tensor(1.))",
    "F.dropout2d(torch.ones(3))", "F.dropout3d(torch.tensor(1.))",
    "F.dropout3d(torch.tensor(1.), inplace=True)",
    "F.dropout(torch.ones(2, 3, dtype=torch.int64), training=False)",
    "F.dropout(torch.ones(2, 3, dtype=torch.int64), p=1.)",
    "F.dropout2d(torch.ones(2, 3, dtype=torch.int64), p=1.)",
    "F.dropout(torch.ones(2, 3, dtype=torch.float16))",
]


@pytest.mark.parametrize("expr", DROPOUT)
def test_dropout_dtype_and_rank(expr):
    _same(expr)


def test_refused_dropout_still_draws_its_noise():
    # torch draws the noise before the division refuses it: the stream moves on as in torch
    draws = []
    for mod in (torch, npgrad):
        mod.manual_seed(0)
        with pytest.raises(RuntimeError):
            mod.nn.functional.dropout(mod.ones(4, dtype=mod.int64))
        draws.append(mod.rand(3).tolist())
    assert draws[0] == draws[1]


# Tensor methods torch binds through its parser (memory_format keywords, no-argument methods,
# the ``+`` / ``~`` / ``abs()`` operators as their methods)
METHODS = [
    "t.new_tensor(1, layout=torch.strided)", "t.new_tensor(1, dtype='x')", "t.new_tensor(1, 2, 3)",
    "t.new_tensor()", "t.new_tensor([1, 2], dtype=torch.int64)",
    "t.new_tensor([1., 2.], requires_grad=True)", "t.float(memory_format=1)", "t.float(1)",
    "t.float(bogus=1)", "t.bool(1)", "t.half()", "t.long('x')", "t.is_contiguous(memory_format=1)",
    "t.is_contiguous(1)", "t.is_contiguous()", "t.to_dense(masked_grad=1)", "t.to_dense('x')",
    "t.to_dense()", "t.requires_grad_(1)", "t.requires_grad_(True, 1)",
    "t.requires_grad_(bogus=1)", "t.requires_grad_()", "t.cpu('x')", "t.cpu(bogus=1)", "t.cpu()",
    "+t.bool()", "+t", "t.__pos__(1)", "t.__invert__(b=1)", "t.__invert__(1)", "~t.bool()",
    "abs(t)", "t.__abs__(b=1)", "t.__abs__(1)", "t.nonzero('x')", "t.nonzero(bogus=1)",
    "t.nonzero()", "t.nonzero(as_tuple=True)", "t.dense_dim(1)", "t.sparse_dim(1)",
    "t.element_size(1)", "t.element_size()", "t.tolist(1)", "t.tolist(b=1)",
    "t.size('x')", "t.stride('x')", "t.size(1.5)", "t.size(None)", "t.size(-1)",
    "t.size(torch.tensor(1))", "t.size(True)", "t.size(5)", "t.stride(None)", "t.stride(1)",
    "t.unflatten(None, (3,))", "t.unflatten(True, (3,))", "t.unflatten('x', (3,))",
    "t.unflatten(1, (3.,))", "t.unflatten(1, ('x',))", "t.unflatten(1, (None,))",
    "t.unflatten(1, ((3,),))", "t.unflatten(1, torch.tensor([1, 3]))",
    "t.unflatten(1, torch.tensor([3]))", "t.unflatten(1, (1, 3))", "t.unflatten(1, [1, -1])",
    "t.unflatten(1, (3,), 1)", "t.unflatten(1, ())", "t.unflatten(1)", "t.unflatten(1, (2,))",
]


@pytest.mark.parametrize("expr", METHODS)
def test_method_arguments_parsed(expr):
    _same(expr)


# the parser's binding: no positional argument left over after a list at position 0, and an
# int parameter handed to the op as a Python int (Signature.parsed)
PARSER = [
    "t.permute((0, 1), 'x')", "t.permute(0, 'x')", "t.permute(1, 0)", "t.permute((1, 0))",
    "t.reshape((3, 2), 'x')", "t.reshape(3, 2)", "t.reshape(-1)", "t.view((3, 2), 'x')",
    "t.view(3, 2)", "t.view(torch.tensor(6))", "t.broadcast_to((2, 3), 'x')",
    "t.broadcast_to((2, 3))", "t.new_empty(torch.tensor(2)).shape", "t.new_ones(torch.tensor(2))",
    "t.new_zeros(torch.tensor(2))", "t.new_ones(torch.tensor(2), 3)",
    "t.new_ones([torch.tensor(2), 3])", "t.tile(torch.tensor(2))",
    "torch.linalg.matrix_power(s, torch.tensor(2))", "s.matrix_power(torch.tensor(2))",
    "t.sum(torch.tensor(0))", "t.sum(dim=torch.tensor(0))", "t.expand(torch.tensor(2), 3)",
    "t.flatten(torch.tensor(0))", "t.transpose(torch.tensor(0), 1)",
    "t.squeeze(torch.tensor(0))",
]


@pytest.mark.parametrize("expr", PARSER)
def test_parser_binding(expr):
    _same(expr)


def test_parsed_int_reaches_the_op_as_int():
    import numpy as np

    from npgrad._ops.signature import Overloads

    sig = Overloads.parse(["view(SymIntArrayRef size)"]).signatures[0]
    args, _ = sig.parsed((npgrad.tensor(2), np.int64(3)), {})
    assert args == (2, 3) and all(type(a) is int for a in args)
    text = "sum(Tensor input, IntArrayRef[1] dim, bool keepdim=False)"
    sig = Overloads.parse([text]).signatures[0]
    x = npgrad.ones(2)
    args, kwargs = sig.parsed((x,), {"dim": [npgrad.tensor(0)], "keepdims": True})
    assert args[0] is x and kwargs == {"dim": (0,), "keepdim": True}


# a Python int outside what torch's parser converts: a Scalar takes [-2**63, 2**64), an int
# parameter int64 (Signature._check_int_ranges)
INT_RANGES = [
    "t.new_full((2,), 2 ** 70)", "t.new_full((2,), -2 ** 64)", "t.new_full((2,), 2 ** 63)",
    "t.new_full((2,), 2 ** 63 - 1)", "t.clamp(2 ** 70)", "t.clamp(-2 ** 70)",
    "torch.threshold(t, 2 ** 70, 1.)", "torch.full((2,), 2 ** 70)", "t.sum(2 ** 70)",
    "t.sum(-2 ** 70)", "torch.sum(t, 2 ** 70)", "t.mean(2 ** 70)", "t.sum(dim=2 ** 70)",
    "t.transpose(2 ** 63, 0)", "t.cumsum(2 ** 64)", "torch.special.softmax(t, 2 ** 64)",
    "t.sum(1)", "t.clamp(2)",
]


@pytest.mark.parametrize("expr", INT_RANGES)
def test_parser_int_ranges(expr):
    _same(expr)


# dtype and argument checks of single kernels, in the kernel's order
KERNELS = [
    "torch.dist(t, t.bool())", "torch.dist(t.bool(), t)", "torch.dist(t.bool(), t.bool())",
    "t.dist(t.bool())", "torch.dist(t, t)", "t.sub_(t.bool())", "t.sub_(True)", "t.sub_(t)",
    "t.__isub__(t.bool())", "t.sub_(1.)",
    "torch.threshold(t, 1e300, 2.)", "torch.threshold(t, 0.5, 1e300)",
    "torch.threshold(t, float('inf'), 1.)", "torch.threshold(t.double(), 1e300, 1.)",
    "torch.threshold_(t * 1, 1e300, 2.)", "F.threshold(t, 1e300, 2.)",
    "F.threshold(t, 0.5, 1e300, inplace=True)", "torch.threshold(t.long(), 1e300, 2)",
    "torch.threshold(t.int(), 2 ** 40, 2)", "torch.threshold(t.to(torch.uint8), -1, 2)",
    "t.bool().topk(10)", "t.bool().topk(1, 5)", "t.bool().topk(1)", "t.bool().kthvalue(10)",
    "t.bool().kthvalue(1)", "t.bool().median()", "t.bool().median(5)", "t.bool().median(0)",
    "t.bool().nanmedian()", "t.bool().nanmedian(0)", "torch.ones(0, dtype=torch.bool).median()",
    "torch.ones(2, 0, dtype=torch.bool).median(1)", "torch.tensor(True).topk(1)",
    "torch.tensor(True).median(0)",
    "torch.linalg.solve(s, torch.tensor(1.))", "torch.linalg.solve(torch.ones(3, 2, 2), "
    "torch.tensor(1.))", "torch.linalg.solve(s, torch.ones(3))",
    "torch.linalg.solve(s, torch.tensor(1.), left=False)", "torch.linalg.solve(s, s)",
    "torch.slice_scatter(torch.tensor(1.), torch.tensor(1.))",
    "torch.slice_scatter(torch.tensor(1.), torch.tensor(1.), 0, 0, 1)",
    "torch.slice_scatter(t, t[:1], 0, 0, 1)",
    "torch.index_add(t, 1, torch.tensor([0]), torch.ones(2))",
    "torch.index_add(t, 1, torch.tensor([0]), torch.tensor(1.))",
    "torch.index_add(t, 0, torch.tensor([0]), torch.tensor(1.))",
    "torch.index_add(t, 0, torch.tensor([0]), torch.ones(3))",
    "torch.index_add(t, 0, torch.tensor([0]), torch.ones(1, 3))",
    "torch.index_add(torch.tensor(1.), 0, torch.tensor([0]), torch.tensor(1.))",
]


@pytest.mark.parametrize("expr", KERNELS)
def test_kernel_checks(expr):
    _same(expr)


# torch's Python functionals call the C op (or the method), whose checks decide the error
PYTHON_FUNCTIONALS = [
    "torch.celu()", "torch.celu(t, 'x')", "torch.celu(t, 1., True)", "torch.celu(t, 2.)",
    "torch.celu(t, 0.)", "torch.selu()", "torch.selu(t, 1)", "torch.selu(t)", "F.celu(t, 'x')",
    "F.celu(t, 1., 'x')", "F.celu(t, 0.)", "F.celu(t * 1, 2., True)", "F.celu('x')",
    "F.celu(t * 1, 'x', True)", "F.selu(t)", "torch.nn.CELU(2.)(t)", "F.sigmoid()", "F.tanh()",
    "F.sigmoid(1.5)", "F.tanh('x')", "F.sigmoid(t)", "F.tanh(t)", "torch.nn.Tanh()(1.5)",
    "torch.nn.Sigmoid()('x')", "torch.nn.Sigmoid()(t)",
]


@pytest.mark.parametrize("expr", PYTHON_FUNCTIONALS)
def test_python_functionals(expr):
    _same(expr)


# checks.check_mixed_dtypes: torch's CPU mixed-type rule of layer norm, then its dtypes
LAYER_NORM_DTYPES = [
    "F.layer_norm(t, (3,), torch.ones(3), torch.ones(3))",
    "F.layer_norm(t.long(), (3,), torch.ones(3), torch.ones(3))",
    "F.layer_norm(t.bool(), (3,), torch.ones(3), torch.ones(3))",
    "F.layer_norm(t.double(), (3,), torch.ones(3), torch.ones(3))",
    "F.layer_norm(t.half(), (3,), torch.ones(3), torch.ones(3))",
    "F.layer_norm(t, (3,), torch.ones(3).double(), torch.ones(3))",
    "F.layer_norm(t, (3,), torch.ones(3).long(), torch.ones(3))",
    "F.layer_norm(t, (3,), torch.ones(3).half(), torch.ones(3))",
    "F.layer_norm(t, (3,), torch.ones(3), torch.ones(3).double())",
    "F.layer_norm(t, (3,), torch.ones(3), torch.ones(3).long())",
    "F.layer_norm(t, (3,), None, torch.ones(3).double())", "F.layer_norm(t.long(), (3,))",
    "F.layer_norm(t.bool(), (3,))", "F.layer_norm(t.half(), (3,))",
    "F.layer_norm(t.long(), (3,), torch.ones(3).long())",
    "F.layer_norm(t.double(), (3,), torch.ones(3).double(), torch.ones(3).double())",
    "torch.nn.LayerNorm(3)(t.long())", "torch.nn.LayerNorm(3)(t.double())",
    "torch.nn.LayerNorm(3)(t)",
]


@pytest.mark.parametrize("expr", LAYER_NORM_DTYPES)
def test_layer_norm_dtypes(expr):
    _same(expr)


# the upsampling kernels' dtypes (resample._UPSAMPLE_KERNELS), after the size checks
_I4 = "torch.ones(1, 1, 4, 4, dtype=torch.{})"
INTERPOLATE_DTYPES = [
    f"F.interpolate({_I4.format('int64')}, scale_factor=2, mode='area')",
    "F.interpolate(torch.ones(1, 1, 4, dtype=torch.bool), scale_factor=2, mode='area')",
    "F.interpolate(torch.ones(1, 1, 4, dtype=torch.int64), scale_factor=2)",
    f"F.interpolate({_I4.format('int64')}, scale_factor=2)",
    f"F.interpolate({_I4.format('uint8')}, scale_factor=2)",
    f"F.interpolate({_I4.format('bool')}, scale_factor=2, mode='nearest-exact')",
    "F.interpolate(torch.ones(1, 1, 4, dtype=torch.uint8), scale_factor=2, mode='linear')",
    f"F.interpolate({_I4.format('int32')}, scale_factor=2, mode='bilinear')",
    f"F.interpolate({_I4.format('uint8')}, scale_factor=2, mode='bilinear')",
    f"F.interpolate({_I4.format('int64')}, scale_factor=2, mode='bicubic')",
    f"F.interpolate({_I4.format('float16')}, scale_factor=2, mode='bilinear')",
    f"torch.nn.Upsample(scale_factor=2)({_I4.format('int64')})",
    f"F.upsample_bilinear({_I4.format('int64')}, scale_factor=2)",
]


@pytest.mark.parametrize("expr", INTERPOLATE_DTYPES)
def test_interpolate_dtypes(expr):
    _same(expr)


# reflection / replication padding: torch's check_valid_input, then the kernels' dtypes
PAD_CHECKS = [
    "F.pad(torch.ones(1, 4, dtype=torch.bool), (1, 1), mode='reflect')",
    "F.pad(torch.ones(1, 4, 4, dtype=torch.bool), (1, 1, 1, 1), mode='reflect')",
    "F.pad(torch.ones(1, 1, 4, 4, 4, dtype=torch.bool), (1, 1, 1, 1, 1, 1), mode='reflect')",
    "F.pad(torch.ones(1, 4, dtype=torch.bool), (1, 1), mode='replicate')",
    "F.pad(torch.ones(1, 4, 4, dtype=torch.bool), (1, 1, 1, 1), mode='replicate')",
    "F.pad(torch.ones(0, 4), (1, 1), mode='replicate')",
    "F.pad(torch.ones(0, 4), (1, 1), mode='reflect')",
    "F.pad(torch.ones(0, 1, 4), (1, 1), mode='reflect')",
    "F.pad(torch.ones(1, 0, 4), (1, 1), mode='reflect')",
    "F.pad(torch.ones(0, 2, 3, 2), (1, 1, 1, 1, 1, 1), mode='replicate')",
    "F.pad(torch.ones(2, 3, 0), (1, 1, 1, 1, 1, 1), mode='replicate')",
    "F.pad(torch.ones(1, 4, dtype=torch.int64), (1, 1), mode='reflect')",
    "F.pad(torch.ones(1, 4), (4, 4), mode='reflect')",
    "F.pad(torch.ones(1, 4, dtype=torch.bool), (4, 4), mode='reflect')",
    "torch.nn.ReflectionPad1d(1)(torch.ones(1, 4, dtype=torch.bool))",
]


@pytest.mark.parametrize("expr", PAD_CHECKS)
def test_pad_checks(expr):
    _same(expr)


# index_fill's value converted to the input's dtype by torch's kernel
INDEX_FILL_VALUES = [
    "t.index_fill(1, torch.tensor([0]), 1e300)", "t.index_fill_(1, torch.tensor([0]), 1e300)",
    "t.long().index_fill(1, torch.tensor([0]), 1e300)",
    "t.int().index_fill(1, torch.tensor([0]), 2 ** 40)",
    "t.index_fill(1, torch.tensor([0]), float('inf'))", "t.index_fill(1, torch.tensor([0]), 2.5)",
    "t.index_fill(1, torch.tensor([0]), torch.tensor(1e300, dtype=torch.float64))",
    "t.index_fill(1, torch.tensor([0]), torch.tensor(2.5, requires_grad=True))",
    "t.to(torch.uint8).index_fill(1, torch.tensor([0]), -1)",
    "t.index_fill(1, torch.tensor([0]), torch.tensor(1 + 2j))",
    "t.index_fill(1, torch.tensor([0]), 1 + 2j)",
    "t.to(torch.complex64).index_fill(1, torch.tensor([0]), 1 + 2j)",
]


@pytest.mark.parametrize("expr", INDEX_FILL_VALUES)
def test_index_fill_values(expr):
    _same(expr)
