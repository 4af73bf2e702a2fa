"""Issue 12: the exception *type* torch raises, and calls torch accepts that npgrad refused.

The differential fuzzer's ``wrong_exception_type`` and ``rejected_where_torch_accepts`` cases,
one row per fixed class: a call (an expression over ``torch``/``F``; ``O(*shape, dtype=...)``
for ones, ``L(*values)`` for a 1-d tensor and ``S(x, index, value)`` for ``x[index] = value``
returning ``x``) and torch 2.13's outcome written out -- the exception type and text, or the
result's dtype and shape.  ``test_npgrad_gives_expected`` checks npgrad against the rows without
torch; ``test_expected_is_torch`` checks the written rows against torch itself (skipped without
it); ``test_values_match_torch`` compares the values of the rows that succeed.

Classes covered: torch's kernels refusing bool before comparing dtypes (``bmm``) or at all
(``arange``/``linspace``/``logspace``); functions torch writes in Python touching a non-Tensor
(CPython's AttributeError: softmax, softmin, softsign, normalize, norm, the circular pads'
rank check); ``nn.Unflatten`` leaving ``dim`` to forward; ``adaptive_avg_pool2d``'s 1x1 path
taken before its rank check; writes into empty tensors and into non-C-contiguous bases; the
index ops' IndexError/RuntimeError split and check order (index_select, index_fill,
index_copy, index_add, index_put, ``x[idx] = v``, kthvalue, repeat_interleave, mv); a
normal std of integers or bools; the legacy ``cholesky``'s own checks; matrix norms of empty
matrices and their order checked before their dims; bool convolutions; ``~`` on floats;
``max_pool1d``'s rank check; ``randint``'s sizes before its range; pixel_shuffle's overflow;
0-D ``mT``/``mH``; and the nn layers' own ``__init__`` (the name Python gives a bad keyword).
"""
from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest

import npgrad


def _setitem(x: Any, index: Any, value: Any) -> Any:
    x[index] = value
    return x


def _env(m: Any) -> dict:
    return {"torch": m, "F": m.nn.functional,
            "O": lambda *s, dtype="float32": m.ones(s, dtype=getattr(m, dtype)),
            "L": lambda *v: m.tensor(list(v)), "S": _setitem}


def _outcome(m: Any, expr: str) -> tuple:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            r = eval(expr, _env(m))
        except Exception as ex:  # noqa: BLE001 - the outcome under test
            return (type(ex).__name__, str(ex)), None
    if isinstance(r, tuple) and all(isinstance(t, m.Tensor) for t in r):
        return ("ok", "tuple", tuple(tuple(t.shape) for t in r)), r
    if isinstance(r, m.Tensor):
        return ("ok", str(r.dtype).split(".")[-1], tuple(r.shape)), r
    return ("ok", "value", repr(r).replace(f"{m.__name__}.", "")), r


ROWS: list[tuple[str, tuple]] = [
    ("torch.bmm(O(2, 3, 3, dtype='bool'), O(2, 3, 3))",
     ('NotImplementedError', '"bmm" not implemented for \'Bool\'')),
    ("torch.bmm(O(2, 3, 3), O(2, 3, 3, dtype='bool'))",
     ('RuntimeError', 'expected scalar type Float but found Bool')),
    ("torch.matmul(O(2, 2, 3, dtype='bool'), O(2, 3, 3))",
     ('NotImplementedError', '"bmm" not implemented for \'Bool\'')),
    ("torch.baddbmm(O(2, 3, 3, dtype='bool'), O(2, 3, 3, dtype='bool'), O(2, 3, 3, dtype='bool'))",
     ('NotImplementedError', '"baddbmm" not implemented for \'Bool\'')),
    ('torch.arange(1, 4, dtype=torch.bool)',
     ('NotImplementedError', '"arange_cpu" not implemented for \'Bool\'')),
    ('torch.arange(0, 2, dtype=torch.bool)',
     ('NotImplementedError', '"arange_cpu" not implemented for \'Bool\'')),
    ('torch.arange(0, 1, 0, dtype=torch.bool)',
     ('NotImplementedError', '"arange_cpu" not implemented for \'Bool\'')),
    ('torch.linspace(0, 1, 3, dtype=torch.bool)',
     ('NotImplementedError', '"linspace_cpu" not implemented for \'Bool\'')),
    ('torch.linspace(0, 1, 1, dtype=torch.bool)',
     ('ok', 'bool', (1,))),
    ('torch.linspace(0, 1, 0, dtype=torch.bool)',
     ('ok', 'bool', (0,))),
    ('torch.logspace(0, 1, 3, dtype=torch.bool)',
     ('NotImplementedError', '"logspace_cpu" not implemented for \'Bool\'')),
    ('torch.logspace(0, 1, 1, dtype=torch.bool)',
     ('ok', 'bool', (1,))),
    ("F.softmax('x', 0)",
     ('AttributeError', "'str' object has no attribute 'softmax'")),
    ('F.softmax(None, 0)',
     ('AttributeError', "'NoneType' object has no attribute 'softmax'")),
    ('F.log_softmax(1.5, 0)',
     ('AttributeError', "'float' object has no attribute 'log_softmax'")),
    ('F.log_softmax([1.0], 0)',
     ('AttributeError', "'list' object has no attribute 'log_softmax'")),
    ('F.softmin(3, 0)',
     ('AttributeError', "'int' object has no attribute 'softmax'")),
    ("F.softmin('x', 0)",
     ('TypeError', "bad operand type for unary -: 'str'")),
    ('F.softmin(None, 0)',
     ('TypeError', "bad operand type for unary -: 'NoneType'")),
    ('F.softsign(None)',
     ('AttributeError', "'NoneType' object has no attribute 'abs'")),
    ('F.softsign(2)',
     ('AttributeError', "'int' object has no attribute 'abs'")),
    ('F.normalize([1.0])',
     ('AttributeError', "'list' object has no attribute 'norm'")),
    ("F.normalize('x')",
     ('AttributeError', "'str' object has no attribute 'norm'")),
    ('torch.norm(2)',
     ('AttributeError', "'int' object has no attribute 'layout'")),
    ("torch.norm('x', dim=0)",
     ('AttributeError', "'str' object has no attribute 'layout'")),
    ("torch.nn.Softmax(1)('x')",
     ('AttributeError', "'str' object has no attribute 'softmax'")),
    ('torch.nn.LogSoftmax(1)(1.5)',
     ('AttributeError', "'float' object has no attribute 'log_softmax'")),
    ('torch.nn.Softmin(0)(1.5)',
     ('AttributeError', "'float' object has no attribute 'softmax'")),
    ('torch.nn.Softsign()(None)',
     ('AttributeError', "'NoneType' object has no attribute 'abs'")),
    ('F.softmax(O(2, 3), 1)',
     ('ok', 'float32', (2, 3))),
    ('F.softsign(O(2))',
     ('ok', 'float32', (2,))),
    ('torch.nn.CircularPad1d(1)(O(1, 1, 1, 3))',
     ('ValueError', 'expected 2D or 3D input (got 4D input)')),
    ('torch.nn.CircularPad1d(1)(O())',
     ('ValueError', 'expected 2D or 3D input (got 0D input)')),
    ('torch.nn.CircularPad2d(1)(O(3, 3))',
     ('ValueError', 'expected 3D or 4D input (got 2D input)')),
    ('torch.nn.CircularPad3d(1)(O(3, 3, 3))',
     ('ValueError', 'expected 4D or 5D input (got 3D input)')),
    ("torch.nn.CircularPad1d(1)('x')",
     ('AttributeError', "'str' object has no attribute 'dim'")),
    ('torch.nn.CircularPad1d(1)(O(2, 3))',
     ('ok', 'float32', (2, 5))),
    ('torch.nn.CircularPad2d(1)(O(1, 2, 3, 3))',
     ('ok', 'float32', (1, 2, 5, 5))),
    ("torch.nn.Unflatten('a', (2, 2))",
     ('ok', 'value', 'Unflatten(dim=a, unflattened_size=(2, 2))')),
    ('torch.nn.Unflatten(1.5, (2, 2))(O(2, 4))',
     ('TypeError', "unflatten(): argument 'dim' (position 1) must be int, not float")),
    ('torch.nn.Unflatten(None, (2, 2))(O(2, 4))',
     ('TypeError', "unflatten(): argument 'dim' (position 1) must be int, not NoneType")),
    ("torch.nn.Unflatten(1, 'ab')",
     ('TypeError', 'unflattened_size must be a tuple of ints, but found type str')),
    ('torch.nn.Unflatten(1, (2, 2.0))',
     ('TypeError', 'unflattened_size must be tuple of ints, but found element of type '
      'float at pos 1')),
    ('torch.nn.Unflatten(1, [2, 2])(O(2, 4))',
     ('ok', 'float32', (2, 2, 2))),
    ('F.adaptive_avg_pool2d(O(2, 3), 1)',
     ('ok', 'float32', (1, 1))),
    ('F.adaptive_avg_pool2d(O(0, 3), 1)',
     ('ok', 'float32', (1, 1))),
    ('F.adaptive_avg_pool2d(O(1, 2, 2, 2, 3), 1)',
     ('ok', 'float32', (1, 2, 2, 1, 1))),
    ('F.adaptive_avg_pool2d(O(3), 1)',
     ('IndexError', 'Dimension out of range (expected to be in range of [-1, 0], but got -2)')),
    ('F.adaptive_avg_pool2d(O(), 1)',
     ('IndexError', 'Dimension out of range (expected to be in range of [-1, 0], but got -2)')),
    ('F.adaptive_avg_pool2d(O(2, 3), 2)',
     ('RuntimeError', 'adaptive_avg_pool2d(): Expected 3D or 4D tensor, but got [2, 3]')),
    ('F.adaptive_avg_pool2d(O(2, 3), (1, 1))',
     ('ValueError', 'Input dimension should be at least 3')),
    ("F.adaptive_avg_pool2d(O(2, 2, 3, dtype='int64'), 1)",
     ('RuntimeError', 'mean(): could not infer output dtype. Input dtype must be either a '
      'floating point or complex dtype. Got: Long')),
    ("F.adaptive_avg_pool2d(O(2, 2, 3, dtype='int64'), 2)",
     ('NotImplementedError', '"adaptive_avg_pool2d" not implemented for \'Long\'')),
    ('torch.nn.AdaptiveAvgPool2d(1)(O(2, 3))',
     ('ok', 'float32', (1, 1))),
    ('S(O(0, 4), slice(1, None), O(4))',
     ('ok', 'float32', (0, 4))),
    ('S(O(0, 4), ..., 2.0)',
     ('ok', 'float32', (0, 4))),
    ('S(O(0, 4) * 1, (Ellipsis,), O(4))',
     ('ok', 'float32', (0, 4))),
    ('torch.mv(O(), O(3))',
     ('IndexError', 'Dimension specified as 0 but tensor has no dimensions')),
    ('torch.mv(O(3, 3), O())',
     ('RuntimeError', 'vector + matrix @ vector expected, got 1, 2, 0')),
    ('O(3, 2).index_select(0, L(3))',
     ('IndexError', 'index out of range in self')),
    ('O(3).index_select(0, L(-1))',
     ('IndexError', 'index out of range in self')),
    ('O(3, 2).index_select(1, L(2))',
     ('RuntimeError', 'INDICES element is out of DATA bounds, id=2 axis_dim=2')),
    ('O(0, 4).index_select(0, L(0))',
     ('RuntimeError', 'index_select(): self indexing axis dim should be positive')),
    ('O(4, 0).index_select(1, L(0))',
     ('RuntimeError', 'index_select(): self indexing axis dim should be positive')),
    ('O(3, 4).index_fill(0, torch.tensor([[1], [1]]), 0.5)',
     ('RuntimeError', 'Index has to be a vector/scalar')),
    ('O(3, 4).index_fill(0, torch.tensor([[1.0]]), 0.5)',
     ('IndexError', 'index_fill_(): Expected dtype int64 for index.')),
    ('O(3, 4).index_fill(0, torch.tensor([[1]]), O(2))',
     ('RuntimeError', 'index_fill_ only supports a 0-dimensional value tensor, but got tensor '
      'with 1 dimension(s).')),
    ('O(3, 4).index_copy(0, torch.tensor([[1, 1]]), O(2, 4))',
     ('IndexError', 'index_copy_(): Index should have dimension 1 or 0 (got 2)')),
    ('O(3, 4).index_add(0, torch.tensor([[1, 1]]), O(2, 4))',
     ('IndexError', 'index_add_(): Index is supposed to be a vector, but got dim: 2 with '
      'type: Long and size: [1, 2]')),
    ('O(0, 4).index_add(0, L(2, 0, 2), O(3, 4))',
     ('ok', 'float32', (0, 4))),
    ('O(0, 4).index_add_(0, L(1), O(1, 4))',
     ('ok', 'float32', (0, 4))),
    ('O(3, 4).index_add(0, L(2, 0, 2), O())',
     ('IndexError', 'Dimension specified as 0 but tensor has no dimensions')),
    ('torch.repeat_interleave(O(), L(1, 2, 3), 0)',
     ('IndexError', 'Dimension specified as 0 but tensor has no dimensions')),
    ('O(0, 4).kthvalue(1, 0)',
     ('IndexError', 'kthvalue(): Expected reduction dim 0 to have non-zero size.')),
    ('O(0, 4).kthvalue(0, 0)',
     ('IndexError', 'kthvalue(): Expected reduction dim 0 to have non-zero size.')),
    ('O(4, 0).kthvalue(1, 0)',
     ('ok', 'tuple', ((0,), (0,)))),
    ('O(4, 0).kthvalue(5, 0)',
     ('RuntimeError', 'kthvalue(): selected number k out of range for dimension 0')),
    ('O(2, 3, 4).index_put((L(0, 2), L(1, 1)), O(2))',
     ('RuntimeError', 'shape mismatch: value tensor of shape [2] cannot be broadcast to '
      'indexing result of shape [2, 4]')),
    ('O(3, 4).index_put((L(0, 3), L(1, 1)), O(2))',
     ('IndexError', 'index 3 is out of bounds for dimension 0 with size 3')),
    ('O(3, 4).index_put((L(0, 2), L(1, 1)), O(3))',
     ('RuntimeError', 'shape mismatch: value tensor of shape [3] cannot be broadcast to '
      'indexing result of shape [2]')),
    ('O(3, 4).index_put((L(0, -3), L(1, -1)), O(2), True)',
     ('ok', 'float32', (3, 4))),
    ('O(0, 4).index_put((L(0),), O(4))',
     ('IndexError', 'index is out of bounds for dimension with size 0')),
    ('S(O(2, 3, 4), [0, 2], O(2, 4))',
     ('RuntimeError', 'shape mismatch: value tensor of shape [2, 4] cannot be broadcast to '
      'indexing result of shape [2, 3, 4]')),
    ('S(O(2, 3, 4), (1, [0, 3]), O(2))',
     ('RuntimeError', 'shape mismatch: value tensor of shape [2] cannot be broadcast to '
      'indexing result of shape [2, 4]')),
    ('S(O(2, 3, 4), (slice(None), [0, 3]), O(3, 2))',
     ('RuntimeError', 'shape mismatch: value tensor of shape [3, 2] cannot be broadcast to '
      'indexing result of shape [2, 2, 4]')),
    ('S(O(3, 4), (slice(None), [0, 5]), O(3, 2))',
     ('IndexError', 'index 5 is out of bounds for dimension 0 with size 4')),
    ('S(O(0, 4), ([0, 1],), O(3, 4))',
     ('IndexError', 'index is out of bounds for dimension with size 0')),
    ('S(O(3, 0), (slice(None), [0]), O(5))',
     ('IndexError', 'index is out of bounds for dimension with size 0')),
    ('O(0, 4)[[0]]',
     ('IndexError', 'index is out of bounds for dimension with size 0')),
    ('O(2, 0)[[0, 1], [0, 0]]',
     ('IndexError', 'index is out of bounds for dimension with size 0')),
    ('torch.normal(O(2, 3), torch.zeros(2, 3, dtype=torch.long))',
     ('ok', 'float32', (2, 3))),
    ('torch.normal(O(2, 3), torch.zeros(2, 3, dtype=torch.bool))',
     ('ok', 'float32', (2, 3))),
    ("torch.normal(O(2, 3, dtype='int64'), O(2, 3))",
     ('NotImplementedError', '"normal_kernel_cpu" not implemented for \'Long\'')),
    ("torch.normal(O(2, 3), -O(2, 3, dtype='int64'))",
     ('RuntimeError', 'normal expects all elements of std >= 0.0')),
    ("torch.normal(0.5, O(2, 3, dtype='complex64'))",
     ('RuntimeError', 'normal expects standard deviation to be non-complex')),
    ("torch.normal(O(2, dtype='int64'), O(2, dtype='complex64'))",
     ('RuntimeError', 'normal expects standard deviation to be non-complex')),
    ('O(0, 3).cholesky()',
     ('ok', 'float32', (0, 3))),
    ("O(0, 3, dtype='int64').cholesky()",
     ('ok', 'int64', (0, 3))),
    ("O(3, 3, dtype='int64').cholesky()",
     ('NotImplementedError', '"cholesky_cpu" not implemented for \'Long\'')),
    ("O(3, 3, dtype='bool').cholesky()",
     ('NotImplementedError', '"cholesky_cpu" not implemented for \'Bool\'')),
    ("O(3, 3, dtype='float16').cholesky()",
     ('NotImplementedError', '"cholesky_cpu" not implemented for \'Half\'')),
    ('O(2, 3).cholesky()',
     ('RuntimeError', 'cholesky: A must be batches of square matrices, but they are 2 by 3 '
      'matrices')),
    ('O(3).cholesky()',
     ('RuntimeError', 'cholesky: The input tensor A must have at least 2 dimensions.')),
    ('torch.tensor([[1.0, 2.0], [2.0, 1.0]]).cholesky()',
     ('_LinAlgError', 'cholesky: The factorization could not be completed because the input '
      'is not positive-definite (the leading minor of order 2 is not '
      'positive-definite).')),
    ('torch.linalg.matrix_norm(O(0, 3), 2)',
     ('ok', 'float32', ())),
    ('torch.linalg.matrix_norm(O(3, 0), 2)',
     ('ok', 'float32', ())),
    ('torch.linalg.matrix_norm(O(0, 3), -2)',
     ('IndexError', 'amin(): Expected reduction dim -1 to have non-zero size.')),
    ("torch.linalg.matrix_norm(O(0, 3), float('inf'))",
     ('ok', 'float32', ())),
    ("torch.linalg.matrix_norm(O(2, 0, 3), float('inf'), dim=(0, 1))",
     ('ok', 'float32', (3,))),
    ('torch.linalg.matrix_norm(O(2, 0, 3), 2, dim=(0, 1), keepdim=True)',
     ('ok', 'float32', (1, 1, 3))),
    ("torch.linalg.matrix_norm(O(0, 3, dtype='float64'), 2, keepdim=True)",
     ('ok', 'float64', (1, 1))),
    ("F.conv1d(O(1, 2, 5, dtype='bool'), O(3, 2, 2))",
     ('NotImplementedError', '"slow_conv2d_cpu" not implemented for \'Bool\'')),
    ("F.conv2d(O(1, 2, 5, 5, dtype='bool'), O(3, 2, 2, 2))",
     ('NotImplementedError', '"slow_conv2d_cpu" not implemented for \'Bool\'')),
    ("F.conv2d(O(1, 2, 5, 5, dtype='bool'), O(3, 2, 2, 2), dilation=2)",
     ('NotImplementedError', '"slow_conv_dilated<>" not implemented for \'Bool\'')),
    ("F.conv2d(O(1, 2, 5, 5), O(3, 2, 2, 2, dtype='bool'))",
     ('RuntimeError', 'expected scalar type Float but found Bool')),
    ('~O(3)',
     ('TypeError', '~ (operator.invert) is only implemented on integer and Boolean-type tensors')),
    ("~O(3, dtype='float16')",
     ('TypeError', '~ (operator.invert) is only implemented on integer and Boolean-type tensors')),
    ("~O(3, dtype='complex64')",
     ('TypeError', '~ (operator.invert) is only implemented on integer and Boolean-type tensors')),
    ("~O(3, dtype='uint8')",
     ('ok', 'uint8', (3,))),
    ('F.max_pool1d(O(), 2)',
     ('RuntimeError', 'max_pool1d: Expected 2D or 3D (batch mode) tensor with optional 0 dim '
      'batch size for input, but got:[]')),
    ('F.max_pool1d(O(3), 2)',
     ('RuntimeError', 'max_pool1d: Expected 2D or 3D (batch mode) tensor with optional 0 dim '
      'batch size for input, but got:[3]')),
    ("F.max_pool1d(O(3, dtype='int64'), 2)",
     ('RuntimeError', 'max_pool1d: Expected 2D or 3D (batch mode) tensor with optional 0 dim '
      'batch size for input, but got:[3]')),
    ('F.max_pool1d(O(1, 1, 1, 3), 2)',
     ('RuntimeError', 'max_pool1d: Expected 2D or 3D (batch mode) tensor with optional 0 dim '
      'batch size for input, but got:[1, 1, 1, 3]')),
    ('F.max_pool1d(O(3), 2, return_indices=True)',
     ('RuntimeError', 'Expected 2 to 3 dimensions, but got 1-dimensional tensor for argument '
      "#1 'self' (while checking arguments for max_pool1d)")),
    ('F.max_pool1d(O(1, 0, 3), 2)',
     ('RuntimeError', 'max_pool1d: Expected 2D or 3D (batch mode) tensor with optional 0 dim '
      'batch size for input, but got:[1, 0, 3]')),
    ('F.max_pool1d(O(0, 2, 3), 2)',
     ('ok', 'float32', (0, 2, 1))),
    ('torch.nn.MaxPool1d(2)(O())',
     ('RuntimeError', 'max_pool1d: Expected 2D or 3D (batch mode) tensor with optional 0 dim '
      'batch size for input, but got:[]')),
    ('O().index_select(0, L(2, 0, 2))',
     ('RuntimeError', 'index_select(): Index to scalar can have only 1 value, got 3 value(s)')),
    ('O().index_select(0, torch.tensor([], dtype=torch.long))',
     ('RuntimeError', 'index_select(): Index to scalar can have only 1 value, got 0 value(s)')),
    ('O().index_select(0, L(0))',
     ('ok', 'float32', ())),
    ('O().index_select(0, L(1))',
     ('IndexError', 'index out of range in self')),
    ('F.cross_entropy(O(), torch.tensor(1))',
     ('RuntimeError', 'Expected floating point type for target with class probabilities, got '
      'Long')),
    ('F.cross_entropy(O(), torch.tensor(1.0))',
     ('IndexError', 'Dimension specified as 1 but tensor has no dimensions')),
    ('F.cross_entropy(O(), torch.tensor([1]))',
     ('IndexError', 'Dimension out of range (expected to be in range of [-1, 0], but got 1)')),
    ('torch.randint(0, 5, (2 ** 62, 4))',
     ('RuntimeError', 'Storage size calculation overflowed with sizes=[4611686018427387904, 4]')),
    ('torch.randint(5, 0, (-1, 3))',
     ('RuntimeError', 'Trying to create tensor with negative dimension -1: [-1, 3]')),
    ('torch.randint(5, 0, (2 ** 31, 2 ** 31, 2 ** 31))',
     ('RuntimeError', 'Storage size calculation overflowed with sizes=[2147483648, '
      '2147483648, 2147483648]')),
    ('F.pixel_shuffle(O(1, 4, 2, 2), 2 ** 62)',
     ('ValueError', 'upscale factor is too large, (upscale_factor)^2 overflowed: '
      'upscale_factor=4611686018427387904')),
    ('F.pixel_shuffle(O(1, 4, 2, 2), 3037000500)',
     ('ValueError', 'upscale factor is too large, (upscale_factor)^2 overflowed: '
      'upscale_factor=3037000500')),
    ('F.pixel_shuffle(O(1, 4, 2, 2), 3037000499)',
     ('RuntimeError', "pixel_shuffle expects its input's 'channel' dimension to be divisible "
      'by the square of upscale_factor, but input.size(-3)=4 is not divisible '
      'by 9223372030926249001')),
    ('O().mT',
     ('ok', 'float32', ())),
    ('torch.tensor(2.0 + 1.0j).mH',
     ('ok', 'complex64', ())),
    ('O(3).mT',
     ('RuntimeError', 'tensor.mT is only supported on matrices or batches of matrices. Got '
      '1-D tensor.')),
    ('torch.nn.Conv1d(2, 4, 3, bogus=1)',
     ('TypeError', "Conv1d.__init__() got an unexpected keyword argument 'bogus'")),
    ('torch.nn.Conv2d(2, 4, 3, bogus=1)',
     ('TypeError', "Conv2d.__init__() got an unexpected keyword argument 'bogus'")),
    ('torch.nn.ConvTranspose1d(2, 4, 3, bogus=1)',
     ('TypeError', "ConvTranspose1d.__init__() got an unexpected keyword argument 'bogus'")),
    ('torch.nn.ConvTranspose2d(2, 4, 3, bogus=1)',
     ('TypeError', "ConvTranspose2d.__init__() got an unexpected keyword argument 'bogus'")),
    ("torch.nn.Conv2d(2, 4, 3, 2, 1, 1, 2, False, 'reflect')",
     ('ok', 'value', 'Conv2d(2, 4, kernel_size=(3, 3), stride=(2, 2), padding=(1, 1), '
      'groups=2, bias=False, padding_mode=reflect)')),
    ('torch.nn.ConvTranspose2d(2, 4, 3, 2, 1, 1, 2, False, 2)',
     ('ok', 'value', 'ConvTranspose2d(2, 4, kernel_size=(3, 3), stride=(2, 2), padding=(1, '
      '1), dilation=(2, 2), output_padding=(1, 1), groups=2, bias=False)')),
    ('torch.nn.AdaptiveAvgPool1d(2, bogus=1)',
     ('TypeError', "_AdaptiveAvgPoolNd.__init__() got an unexpected keyword argument 'bogus'")),
    ('torch.nn.AdaptiveAvgPool2d(2, bogus=1)',
     ('TypeError', "_AdaptiveAvgPoolNd.__init__() got an unexpected keyword argument 'bogus'")),
    ('torch.nn.BatchNorm1d(3, bogus=1)',
     ('TypeError', "_BatchNorm.__init__() got an unexpected keyword argument 'bogus'")),
    ('torch.nn.BatchNorm2d(3, 1e-3, 0.2, False, False)',
     ('ok', 'value', 'BatchNorm2d(3, eps=0.001, momentum=0.2, affine=False, bias=False, '
      'track_running_stats=False)')),
    ('torch.nn.ReflectionPad1d(1, bogus=1)',
     ('TypeError', "ReflectionPad1d.__init__() got an unexpected keyword argument 'bogus'")),
    ('torch.nn.ReplicationPad2d(1, bogus=1)',
     ('TypeError', "ReplicationPad2d.__init__() got an unexpected keyword argument 'bogus'")),
    ('torch.nn.CircularPad3d(1, bogus=1)',
     ('TypeError', "CircularPad3d.__init__() got an unexpected keyword argument 'bogus'")),
    ('torch.nn.ConstantPad1d(1, 0.5, bogus=1)',
     ('TypeError', "ConstantPad1d.__init__() got an unexpected keyword argument 'bogus'")),
    ('torch.nn.ZeroPad2d(1, bogus=1)',
     ('TypeError', "ZeroPad2d.__init__() got an unexpected keyword argument 'bogus'")),
    ('torch.nn.ZeroPad2d((1, 1, 2, 0))',
     ('ok', 'value', 'ZeroPad2d((1, 1, 2, 0))')),
    ("torch.linalg.matrix_norm(O(2, 3), 'x', dim=[1])",
     ('RuntimeError', 'linalg.matrix_norm: Order x not supported.')),
    ('torch.linalg.matrix_norm(O(2, 3), 3, dim=[1])',
     ('RuntimeError', 'linalg.matrix_norm: Order 3 not supported.')),
    ("O(2, 3).norm('x', 1)",
     ('RuntimeError', 'linalg.matrix_norm: Order x not supported.')),
    ("F.normalize(O(2, 3), 'x')",
     ('RuntimeError', 'linalg.matrix_norm: Order x not supported.')),
    ("F.normalize(O(2, 3), 'fro')",
     ('ok', 'float32', (2, 3))),

]


@pytest.mark.parametrize("expr,expected", ROWS, ids=[r[0] for r in ROWS])
def test_npgrad_gives_expected(expr: str, expected: tuple) -> None:
    assert _outcome(npgrad, expr)[0] == expected


@pytest.mark.parametrize("expr,expected", ROWS, ids=[r[0] for r in ROWS])
def test_expected_is_torch(expr: str, expected: tuple) -> None:
    torch = pytest.importorskip("torch")
    assert _outcome(torch, expr)[0] == expected


_OK = [r for r in ROWS if r[1][0] == "ok" and r[1][1] != "value"]


@pytest.mark.parametrize("expr,expected", _OK, ids=[r[0] for r in _OK])
def test_values_match_torch(expr: str, expected: tuple) -> None:
    torch = pytest.importorskip("torch")
    mine, theirs = _outcome(npgrad, expr)[1], _outcome(torch, expr)[1]
    pairs = zip(mine, theirs) if isinstance(mine, tuple) else [(mine, theirs)]
    for a, b in pairs:
        np.testing.assert_array_equal(a.detach().resolve_conj().numpy(),
                                      b.detach().resolve_conj().numpy())


# -- writes through a view of a base laid out other than C-contiguously ---------------------

def _strided_write(m: Any, index: Any, by_tensor: bool) -> tuple:
    """``y = x * 1`` for a transposed leaf ``x`` keeps the transposed layout (in torch and in
    npgrad); ``y[index] = 2 * v`` (or ``= 2.``) then goes through CopySlices over that base."""
    base = m.tensor(np.arange(12, dtype=np.float32).reshape(4, 3))
    x = base.t().detach().requires_grad_()
    w = m.tensor(np.arange(1, 13, dtype=np.float32).reshape(3, 4))
    y = x * 1
    v = None
    if by_tensor:
        v = m.ones(tuple(y[index].shape)).requires_grad_()
        y[index] = 2 * v
    else:
        y[index] = 2.0
    (y * w).sum().backward()
    return (y.detach().numpy(), x.grad.numpy(), None if v is None else v.grad.numpy(),
            y.stride())


_STRIDED = [((slice(None), 1), True), ((slice(None), 1), False), (0, True),
            ((slice(None, None, 2), 1), True), ((1, [0, 3]), True), ([0, 2], True),
            ((Ellipsis,), False)]


@pytest.mark.parametrize("index,by_tensor", _STRIDED, ids=[str(s) for s in _STRIDED])
def test_write_into_strided_base_by_hand(index: Any, by_tensor: bool) -> None:
    y, gx, gv, stride = _strided_write(npgrad, index, by_tensor)
    x = np.arange(12, dtype=np.float32).reshape(4, 3).T
    w = np.arange(1, 13, dtype=np.float32).reshape(3, 4)
    want = x.copy()
    want[index] = 2.0
    mask = np.ones_like(x)
    mask[index] = 0.0  # the overwritten positions pass no gradient to x
    np.testing.assert_array_equal(y, want)
    np.testing.assert_array_equal(gx, w * mask)
    if by_tensor:
        np.testing.assert_array_equal(gv, 2 * w[index])
    assert stride == (1, 3)


@pytest.mark.parametrize("index,by_tensor", _STRIDED, ids=[str(s) for s in _STRIDED])
def test_write_into_strided_base_matches_torch(index: Any, by_tensor: bool) -> None:
    torch = pytest.importorskip("torch")
    for a, b in zip(_strided_write(npgrad, index, by_tensor), _strided_write(torch, index,
                                                                             by_tensor)):
        if a is None or isinstance(a, tuple):
            assert a == b
        else:
            np.testing.assert_array_equal(a, b)


def test_strided_base_double_backward_matches_torch() -> None:
    torch = pytest.importorskip("torch")

    def run(m: Any) -> tuple:
        base = m.tensor(np.arange(12, dtype=np.float32).reshape(4, 3) / 7)
        x = base.t().detach().requires_grad_()
        y = x * 1
        y[:, 1].mul_(x[:, 2])
        y[0].pow_(2)
        (g,) = m.autograd.grad((y * y).sum(), x, create_graph=True)
        g.sum().backward()
        return g.detach().numpy(), x.grad.numpy()

    for a, b in zip(run(npgrad), run(torch)):
        np.testing.assert_allclose(a, b, rtol=1e-6)
