"""Issue 12: no raw NumPy or internal error at the boundary of the functions torch writes in
Python -- ``nn.functional``'s losses, pooling, normalization, dropout, padding, embedding and
interpolation wrappers, ``torch.functional``'s ``einsum``, ``meshgrid``, ``block_diag``,
``broadcast_tensors``, ``cartesian_prod``, ``atleast_*d``, ``split``, ``unique``, ``cdist`` -- and
of factories and predicates without a signature of their own (``tril_indices``, ``triu_indices``,
``empty_strided``, ``numel``, ``nonzero``, ``result_type``, ``is_*``).

Each row is a call (an expression over ``torch``/``F``, ``O(*shape, dtype=...)`` for ones and
``L(*values)`` for a 1-d tensor) and torch 2.13's outcome written out: the exception type and
text (CPython's AttributeError when torch's Python touches a non-Tensor, the Python-level
ValueError, or the C parser's TypeError naming the C op torch's Python calls), or the result's
dtype and shape.  ``test_npgrad_gives_expected`` checks npgrad against the rows without torch;
``test_expected_is_torch`` checks the rows against real torch (skipped without it), so the
written expectations cannot drift from torch; ``test_values_match_torch`` compares the values of
the rows that succeed.
"""
from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest

import npgrad


def _env(m: Any) -> dict:
    return {"torch": m, "F": m.nn.functional,
            "O": lambda *s, dtype="float32": m.ones(s, dtype=getattr(m, dtype)),
            "L": lambda *v: m.tensor(list(v))}


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
    ("F.mse_loss('x', O(3))",
     ('AttributeError', "'str' object has no attribute 'size'")),
    ('F.mse_loss(O(3), None)',
     ('AttributeError', "'NoneType' object has no attribute 'size'")),
    ('F.mse_loss(O(3), O(3), weight=3)',
     ('AttributeError', "'int' object has no attribute 'size'")),
    ('F.mse_loss(O(3), O(3), reduction=5)',
     ('ValueError', '5 is not a valid value for reduction')),
    ("F.mse_loss(O(3), O(3), reduction='x', weight=O(3))",
     ('ValueError', "Invalid reduction mode: x. Expected one of 'none', 'mean', 'sum'.")),
    ("F.mse_loss(O(3), O(3), reduction='elementwise_mean')",
     ('ok', 'float32', ())),
    ('F.l1_loss(O(3), O(4))',
     ('RuntimeError', 'The size of tensor a (3) must match the size of tensor b (4) at '
                      'non-singleton dimension 0')),
    ('F.l1_loss([1.0], O(3))',
     ('AttributeError', "'list' object has no attribute 'size'")),
    ("F.smooth_l1_loss(O(3), O(3), beta='x')",
     ('TypeError', "smooth_l1_loss(): argument 'beta' (position 4) must be float, not str")),
    ('F.smooth_l1_loss(O(3), O(3), beta=-1.0)',
     ('RuntimeError', 'smooth_l1_loss does not support negative values for beta.')),
    ("F.smooth_l1_loss(O(3, dtype='int64'), O(3) * 0.5, beta=0.5)",
     ('ok', 'float32', ())),
    ("F.huber_loss(O(3), O(3), delta='x')",
     ('TypeError', "huber_loss(): argument 'delta' (position 4) must be float, not str")),
    ('F.huber_loss(O(3), O(3), delta=0.0)',
     ('RuntimeError', 'huber_loss does not support non-positive values for delta.')),
    ("F.huber_loss(O(3), O(3), reduction='x')",
     ('ValueError', 'x is not a valid value for reduction')),
    ("F.huber_loss(O(3), O(3), reduction='x', weight=O(3))",
     ('ValueError', "Invalid reduction mode: x. Expected one of 'none', 'mean', 'sum'.")),
    ("F.huber_loss(O(3, dtype='int64'), O(3) * 0.5)",
     ('RuntimeError', "result type Float can't be cast to the desired output type Long")),
    ("F.huber_loss(O(3, dtype='bool'), O(3) * 0.5)",
     ('RuntimeError', "result type Float can't be cast to the desired output type Bool")),
    ("F.huber_loss(O(3, dtype='float16'), O(3) * 0.25)",
     ('ok', 'float16', ())),
    ("F.huber_loss(O(3), O(3, dtype='float64') * 0.25)",
     ('ok', 'float32', ())),
    ("F.soft_margin_loss(O(3), 'x')",
     ('TypeError', "soft_margin_loss(): argument 'target' (position 2) must be Tensor, not "
                   'str')),
    ('F.soft_margin_loss(1.0, O(3))',
     ('TypeError', "soft_margin_loss(): argument 'input' (position 1) must be Tensor, not "
                   'float')),
    ("F.soft_margin_loss(O(2, dtype='bool'), O(2))",
     ('RuntimeError', 'Negation, the `-` operator, on a bool tensor is not supported. If '
                      'you are trying to invert a mask, use the `~` or `logical_not()` '
                      'operator instead.')),
    ('F.soft_margin_loss(O(), O(2))',
     ('RuntimeError', "output with shape [] doesn't match the broadcast shape [2]")),
    ('F.soft_margin_loss(O(3), O(2))',
     ('RuntimeError', 'The size of tensor a (3) must match the size of tensor b (2) at '
                      'non-singleton dimension 0')),
    ("F.soft_margin_loss(O(2, dtype='int64'), O(2))",
     ('RuntimeError', "result type Float can't be cast to the desired output type Long")),
    ("F.soft_margin_loss(O(2, dtype='int64'), O(2, dtype='int64'))",
     ('RuntimeError', "result type Float can't be cast to the desired output type Long")),
    ("F.soft_margin_loss(O(2), O(2, dtype='int64'))",
     ('ok', 'float32', ())),
    ("F.binary_cross_entropy(O(3) * 0.5, 'x')",
     ('AttributeError', "'str' object has no attribute 'size'")),
    ("F.binary_cross_entropy(O(3) * 0.5, O(3), 'x')",
     ('AttributeError', "'str' object has no attribute 'size'")),
    ("F.binary_cross_entropy('x', O(3))",
     ('AttributeError', "'str' object has no attribute 'size'")),
    ("F.binary_cross_entropy_with_logits(O(3), O(3), 'x')",
     ('TypeError', "binary_cross_entropy_with_logits(): argument 'weight' (position 3) "
                   'must be Tensor, not str')),
    ('F.binary_cross_entropy_with_logits(O(3), O(3), pos_weight=1)',
     ('TypeError', "binary_cross_entropy_with_logits(): argument 'pos_weight' (position 4) "
                   'must be Tensor, not int')),
    ('F.binary_cross_entropy_with_logits(None, O(3))',
     ('AttributeError', "'NoneType' object has no attribute 'size'")),
    ("F.nll_loss('x', L(0, 1))",
     ('TypeError', "nll_loss_nd(): argument 'input' (position 1) must be Tensor, not str")),
    ("F.nll_loss(O(2, 3), 'x')",
     ('TypeError', "nll_loss_nd(): argument 'target' (position 2) must be Tensor, not str")),
    ("F.nll_loss(O(2, 3), L(0, 1), 'x')",
     ('TypeError', "nll_loss_nd(): argument 'weight' (position 3) must be Tensor, not str")),
    ("F.nll_loss(O(2, 3), L(0, 1), ignore_index='x')",
     ('TypeError', "nll_loss_nd(): argument 'ignore_index' (position 5) must be int, not "
                   'str')),
    ("F.nll_loss(O(2, 3), L(0, 1), reduction='x')",
     ('ValueError', 'x is not a valid value for reduction')),
    ("F.cross_entropy(O(2, 3), L(0, 1), 'x')",
     ('TypeError', "cross_entropy_loss(): argument 'weight' (position 3) must be Tensor, "
                   'not str')),
    ("F.cross_entropy(O(2, 3), L(0, 1), label_smoothing='x')",
     ('TypeError', "cross_entropy_loss(): argument 'label_smoothing' (position 6) must be "
                   'float, not str')),
    ('F.cross_entropy(O(), L(0, 1))',
     ('IndexError', 'Dimension out of range (expected to be in range of [-1, 0], but got 1)')),
    ('F.cross_entropy(1.5, L(0, 1))',
     ('TypeError', "cross_entropy_loss(): argument 'input' (position 1) must be Tensor, "
                   'not float')),
    ('F.kl_div(O(3), 1.0)',
     ('TypeError', "kl_div(): argument 'target' (position 2) must be Tensor, not float")),
    ('F.kl_div(1.0, O(3))',
     ('TypeError', "kl_div(): argument 'input' (position 1) must be Tensor, not float")),
    ('F.kl_div(O(3), O(3), log_target=1)',
     ('TypeError', "kl_div(): argument 'log_target' must be bool, not int")),
    ("F.kl_div(O(3), O(3), reduction='x')",
     ('ValueError', 'x is not a valid value for reduction')),
    ("F.margin_ranking_loss('a', O(3), O(3))",
     ('AttributeError', "'str' object has no attribute 'dim'")),
    ('F.margin_ranking_loss(O(3), None, O(3))',
     ('AttributeError', "'NoneType' object has no attribute 'dim'")),
    ('F.margin_ranking_loss(O(3), O(3), None)',
     ('AttributeError', "'NoneType' object has no attribute 'dim'")),
    ("F.margin_ranking_loss(O(3), O(3), O(3), 'x')",
     ('TypeError', "margin_ranking_loss(): argument 'margin' (position 4) must be float, "
                   'not str')),
    ('F.margin_ranking_loss(O(3), O(2, 3), O(3))',
     ('RuntimeError', 'margin_ranking_loss : All input tensors should have same dimension '
                      'but got sizes: input1: torch.Size([3]), input2: torch.Size([2, 3]), '
                      'target: torch.Size([3]) ')),
    ("F.hinge_embedding_loss(O(3), O(3), 'x')",
     ('TypeError', "hinge_embedding_loss(): argument 'margin' (position 3) must be float, "
                   'not str')),
    ('F.hinge_embedding_loss(O(3), 1.0)',
     ('TypeError', "hinge_embedding_loss(): argument 'target' (position 2) must be Tensor, "
                   'not float')),
    ("F.hinge_embedding_loss('x', O(3))",
     ('TypeError', "hinge_embedding_loss(): argument 'input' (position 1) must be Tensor, "
                   'not str')),
    ("F.cosine_embedding_loss(O(2, 3), O(2, 3), O(2), 'x')",
     ('TypeError', "cosine_embedding_loss(): argument 'margin' (position 4) must be float, "
                   'not str')),
    ("F.cosine_embedding_loss(O(2, 3), 'x', O(2))",
     ('TypeError', "cosine_embedding_loss(): argument 'input2' (position 2) must be "
                   'Tensor, not str')),
    ("F.triplet_margin_loss(O(2, 3), O(2, 3), O(2, 3), 'x')",
     ('TypeError', "'<=' not supported between instances of 'str' and 'int'")),
    ("F.triplet_margin_loss(O(2, 3), O(2, 3), O(2, 3), 2, 'x')",
     ('TypeError', "triplet_margin_loss(): argument 'p' (position 5) must be float, not str")),
    ('F.triplet_margin_loss(O(2, 3), O(2, 3), None)',
     ('TypeError', "triplet_margin_loss(): argument 'negative' (position 3) must be "
                   'Tensor, not NoneType')),
    ('F.triplet_margin_loss(O(2, 3), O(2, 3), O(2, 3), 0.0)',
     ('ValueError', 'margin must be greater than 0, got 0.0')),
    ("F.poisson_nll_loss(O(3), 'x')",
     ('TypeError', "poisson_nll_loss(): argument 'target' (position 2) must be Tensor, not "
                   'str')),
    ('F.poisson_nll_loss(O(3), 1.0)',
     ('TypeError', "poisson_nll_loss(): argument 'target' (position 2) must be Tensor, not "
                   'float')),
    ("F.poisson_nll_loss(O(3), O(3), 'x')",
     ('TypeError', "poisson_nll_loss(): argument 'log_input' (position 3) must be bool, "
                   'not str')),
    ('F.poisson_nll_loss(O(3), O(3), reduction=5)',
     ('TypeError', "unsupported operand type(s) for +: 'int' and 'str'")),
    ("F.poisson_nll_loss(O(3), O(3), reduction='x')",
     ('ValueError', 'x is not a valid value for reduction')),
    ("F.gaussian_nll_loss(O(3), O(3), 'x')",
     ('TypeError', "'<' not supported between instances of 'str' and 'int'")),
    ('F.gaussian_nll_loss(O(3), O(3), None)',
     ('TypeError', "'<' not supported between instances of 'NoneType' and 'int'")),
    ('F.gaussian_nll_loss(O(3), O(3), 1)',
     ('TypeError', 'any() received an invalid combination of arguments - got (bool), but '
                   'expected one of:\n * (Tensor input, *, Tensor out = None)\n * (Tensor '
                   'input, tuple of ints dim = None, bool keepdim = False, *, Tensor out = '
                   'None)\n * (Tensor input, int dim, bool keepdim = False, *, Tensor out '
                   '= None)\n')),
    ("F.gaussian_nll_loss(O(3), O(3), O(3, dtype='int64'))",
     ('RuntimeError', "result type Float can't be cast to the desired output type long int")),
    ("F.gaussian_nll_loss(O(3), O(3), O(3, dtype='bool'))",
     ('RuntimeError', "result type Float can't be cast to the desired output type bool")),
    ("F.gaussian_nll_loss('x', O(3), O(3))",
     ('AttributeError', "'str' object has no attribute 'size'")),
    ("F.gaussian_nll_loss('x', O(3), 1.0)",
     ('TypeError', "ones_like(): argument 'input' (position 1) must be Tensor, not str")),
    ("torch.einsum('ij,jk', O(2, 3), 'x')",
     ('TypeError', 'expected Tensor as element 1 in argument 1, but got str')),
    ('torch.einsum(None, O(2, 3))',
     ('TypeError', "einsum(): argument 'equation' (position 1) must be str, not NoneType")),
    ('torch.einsum(3, O(2, 3))',
     ('TypeError', "einsum(): argument 'equation' (position 1) must be str, not int")),
    ("torch.einsum('i', [1])",
     ('TypeError', 'expected Tensor as element 0 in argument 1, but got int')),
    ("torch.einsum('i')",
     ('ValueError', 'einsum(): must specify the equation string and at least one operand, '
                    'or at least one operand and its subscripts list')),
    ("torch.einsum('ij,jk,kl', O(2, 3), O(3, 4), 'x')",
     ('TypeError', 'expected Tensor as element 2 in argument 1, but got str')),
    ('torch.einsum(O(2, 3), [0, 1], O(3, 4), [1, 2], [0, 2])',
     ('ok', 'float32', (2, 4))),
    ('torch.einsum(O(2, 3), [0, 1], O(3, 4), [1, 2])',
     ('ok', 'float32', (2, 4))),
    ('torch.einsum(O(2, 3), [0, 60])',
     ('ValueError', 'einsum(): subscript in subscript list is not within the valid range '
                    '[0, 52)')),
    ("torch.einsum('ij,jk', [O(2, 3), O(3, 4)])",
     ('ok', 'float32', (2, 4))),
    ('torch.broadcast_tensors([O(2)])',
     ('TypeError', 'expected Tensor as element 0 in argument 0, but got list')),
    ("torch.broadcast_tensors(O(2), 'x')",
     ('TypeError', 'expected Tensor as element 1 in argument 0, but got str')),
    ('torch.broadcast_tensors(O(2), O(3))',
     ('RuntimeError', 'The size of tensor a (2) must match the size of tensor b (3) at '
                      'non-singleton dimension 0')),
    ('torch.broadcast_tensors()',
     ('ok', 'tuple', ())),
    ('torch.block_diag([O(2)])',
     ('TypeError', 'expected Tensor as element 0 in argument 0, but got list')),
    ('torch.block_diag(O(2), None)',
     ('TypeError', 'expected Tensor as element 1 in argument 0, but got NoneType')),
    ('torch.block_diag()',
     ('ok', 'float32', (1, 0))),
    ('torch.cartesian_prod(O(2), 3)',
     ('TypeError', 'expected Tensor as element 1 in argument 0, but got int')),
    ('torch.cartesian_prod()',
     ('RuntimeError', 'meshgrid expects a non-empty TensorList')),
    ('torch.atleast_1d([O(2)])',
     ('ok', 'tuple', ((2,),))),
    ('torch.atleast_1d(1.0)',
     ('TypeError', 'atleast_1d() received an invalid combination of arguments - got '
                   "(float), but expected one of:\n * (Tensor input)\n      didn't match "
                   'because some of the arguments have invalid types: (!float!)\n * (tuple '
                   "of Tensors tensors)\n      didn't match because some of the arguments "
                   'have invalid types: (!float!)\n')),
    ('torch.atleast_1d()',
     ('ok', 'tuple', ())),
    ("torch.atleast_2d(O(2), 'x')",
     ('TypeError', 'expected Tensor as element 1 in argument 0, but got str')),
    ('torch.atleast_3d([O(2), O(3)])',
     ('ok', 'tuple', ((1, 2, 1), (1, 3, 1)))),
    ('torch.meshgrid()',
     ('RuntimeError', 'meshgrid expects a non-empty TensorList')),
    ('torch.meshgrid(O(2), indexing=3)',
     ('TypeError', "meshgrid(): argument 'indexing' must be str, not int")),
    ("torch.meshgrid(O(2), 'x', indexing='ij')",
     ('TypeError', 'expected Tensor as element 1 in argument 0, but got str')),
    ("torch.meshgrid([O(2), O(3)], indexing='xy')",
     ('ok', 'tuple', ((3, 2), (3, 2)))),
    ("torch.meshgrid(O(2), indexing='q')",
     ('RuntimeError', 'torch.meshgrid: indexing must be one of "xy" or "ij", but received: '
                      'q')),
    ('torch.tril_indices(3.0, 3)',
     ('TypeError', "tril_indices(): argument 'row' (position 1) must be int, not float")),
    ('torch.tril_indices(True, 3)',
     ('TypeError', "tril_indices(): argument 'row' (position 1) must be int, not bool")),
    ("torch.tril_indices('x', 3)",
     ('TypeError', "tril_indices(): argument 'row' (position 1) must be int, not str")),
    ('torch.tril_indices(2 ** 62, 3)',
     ('RuntimeError', 'Trying to create tensor with negative dimension '
                      '-4611686018427387907: [2, -4611686018427387907]')),
    ('torch.triu_indices(2 ** 62, 3)',
     ('ok', 'int64', (2, 6))),
    ('torch.tril_indices(3, 2 ** 62)',
     ('ok', 'int64', (2, 6))),
    ('torch.tril_indices(-2, 3)',
     ('RuntimeError', 'row must be non-negative, got-2')),
    ('torch.triu_indices(3, -1)',
     ('RuntimeError', 'col must be non-negative, got-1')),
    ('torch.tril_indices(2, 3, dtype=torch.float32)',
     ('NotImplementedError', '"tril_indices" not implemented for \'Float\'')),
    ('torch.triu_indices(2, 3, dtype=torch.int16)',
     ('NotImplementedError', '"triu_indices" not implemented for \'Short\'')),
    ('torch.tril_indices(2, 3, dtype=torch.int32)',
     ('ok', 'int32', (2, 3))),
    ('torch.tril_indices(0, 3)',
     ('ok', 'int64', (2, 0))),
    ('torch.empty_strided((2, 3), (1,))',
     ('RuntimeError', 'dimensionality of sizes (2) must match dimensionality of strides (1)')),
    ('torch.empty_strided((0, 3), (3, -2))',
     ('ok', 'float32', (0, 3))),
    ('torch.empty_strided((2, -3), (3, -2))',
     ('RuntimeError', 'Trying to create tensor with negative dimension -3: [2, -3]')),
    ('torch.empty_strided((2, 3), (2 ** 62, 4))',
     ('RuntimeError', 'Storage size calculation overflowed with sizes=[2, 3] and '
                      'strides=[4611686018427387904, 4]')),
    ('torch.empty_strided((2 ** 62, 4), (3, 1))',
     ('RuntimeError', 'Storage size calculation overflowed with '
                      'sizes=[4611686018427387904, 4] and strides=[3, 1]')),
    ('torch.empty_strided((2, 3), (3, -2))',
     ('RuntimeError', 'Storage size calculation overflowed with sizes=[2, 3] and '
                      'strides=[3, -2]')),
    ('torch.empty_strided(2, 1)',
     ('TypeError', "empty_strided(): argument 'size' (position 1) must be tuple of ints, "
                   'not int')),
    ("torch.empty_strided((2, 'x'), (1, 1))",
     ('TypeError', "empty_strided(): argument 'size' failed to unpack the object at pos 2 "
                   'with error "type must be tuple of ints,but got str"')),
    ("torch.empty_strided(('x', 3), (1, 1))",
     ('TypeError', "empty_strided(): argument 'size' (position 1) must be tuple of ints, "
                   'but found element of type str at pos 0')),
    ('torch.empty_strided((2, 3))',
     ('TypeError', 'empty_strided() missing 1 required positional arguments: "stride"')),
    ("torch.cdist('x', O(2, 3))",
     ('TypeError', "cdist(): argument 'x1' (position 1) must be Tensor, not str")),
    ("torch.cdist(O(2, 3), O(2, 3), 'x')",
     ('TypeError', "cdist(): argument 'p' (position 3) must be float, not str")),
    ("torch.cdist(O(2, 3), O(2, 3), compute_mode='q')",
     ('ValueError', 'q is not a valid value for compute_mode')),
    ("torch.cdist(O(2, 3), O(2, 3), compute_mode=['q'])",
     ('ValueError', "['q'] is not a valid value for compute_mode")),
    ("torch.linalg.cross('x', O(3))",
     ('TypeError', "linalg_cross(): argument 'input' (position 1) must be Tensor, not str")),
    ("torch.linalg.cross(O(3), O(3), dim='x')",
     ('TypeError', "linalg_cross(): argument 'dim' must be int, not str")),
    ('torch.linalg.cross(O(3))',
     ('TypeError', 'linalg_cross() missing 1 required positional arguments: "other"')),
    ("torch.split('x', 2)",
     ('TypeError', 'must be str or None, not int')),
    ('torch.split(None, 2)',
     ('AttributeError', "'NoneType' object has no attribute 'split'")),
    ('torch.split(O(4, 3), 2.0)',
     ('TypeError', "split_with_sizes(): argument 'split_sizes' (position 2) must be tuple "
                   'of ints, not float')),
    ('torch.split(O(4, 3), True)',
     ('TypeError', 'split() received an invalid combination of arguments - got (Tensor, '
                   'bool, int), but expected one of:\n * (Tensor input, int split_size, '
                   "int dim = 0)\n      didn't match because some of the arguments have "
                   'invalid types: (Tensor, !bool!, !int!)\n * (Tensor input, tuple of '
                   "ints split_size, int dim = 0)\n      didn't match because some of the "
                   'arguments have invalid types: (Tensor, !bool!, !int!)\n')),
    ('torch.split(O(4, 3), None)',
     ('TypeError', "split_with_sizes(): argument 'split_sizes' (position 2) must be tuple "
                   'of ints, not NoneType')),
    ("torch.split(O(4, 3), 2, 'x')",
     ('TypeError', 'split() received an invalid combination of arguments - got (Tensor, '
                   'int, str), but expected one of:\n * (Tensor input, int split_size, int '
                   "dim = 0)\n      didn't match because some of the arguments have "
                   'invalid types: (Tensor, int, !str!)\n * (Tensor input, tuple of ints '
                   "split_size, int dim = 0)\n      didn't match because some of the "
                   'arguments have invalid types: (Tensor, !int!, !str!)\n')),
    ('torch.split(O(4, 3), L(2, 2))',
     ('TypeError', "split_with_sizes(): argument 'split_sizes' (position 2) must be tuple "
                   'of ints, not Tensor')),
    ("torch.unique('x')",
     ('TypeError', "_unique2(): argument 'input' (position 1) must be Tensor, not str")),
    ("torch.unique(O(3), 'x')",
     ('TypeError', "_unique2(): argument 'sorted' must be bool, not str")),
    ('torch.unique(O(3), return_counts=1)',
     ('TypeError', "_unique2(): argument 'return_counts' must be bool, not int")),
    ("torch.unique(O(3, 2), dim='x')",
     ('TypeError', "unique_dim(): argument 'dim' (position 2) must be int, not str")),
    ("torch.result_type('x', O(2))",
     ('TypeError', 'result_type() received an invalid combination of arguments - got (str, '
                   'Tensor), but expected one of:\n * (Tensor tensor, Tensor other)\n      '
                   "didn't match because some of the arguments have invalid types: (!str!, "
                   "Tensor)\n * (Number scalar, Tensor tensor)\n      didn't match because "
                   'some of the arguments have invalid types: (!str!, Tensor)\n * (Tensor '
                   "tensor, Number other)\n      didn't match because some of the "
                   'arguments have invalid types: (!str!, !Tensor!)\n * (Number scalar1, '
                   "Number scalar2)\n      didn't match because some of the arguments have "
                   'invalid types: (!str!, !Tensor!)\n')),
    ("torch.result_type(O(2), O(2), 'x')",
     ('TypeError', 'result_type() received an invalid combination of arguments - got '
                   '(Tensor, Tensor, str), but expected one of:\n * (Tensor tensor, Tensor '
                   'other)\n * (Number scalar, Tensor tensor)\n * (Tensor tensor, Number '
                   'other)\n * (Number scalar1, Number scalar2)\n')),
    ('torch.result_type(O(2))',
     ('TypeError', 'result_type() received an invalid combination of arguments - got '
                   '(Tensor), but expected one of:\n * (Tensor tensor, Tensor other)\n * '
                   '(Number scalar, Tensor tensor)\n * (Tensor tensor, Number other)\n * '
                   '(Number scalar1, Number scalar2)\n')),
    ("torch.numel('x')",
     ('TypeError', "numel(): argument 'input' (position 1) must be Tensor, not str")),
    ("torch.nonzero('x')",
     ('TypeError', "nonzero(): argument 'input' (position 1) must be Tensor, not str")),
    ("torch.is_floating_point('x')",
     ('TypeError', "is_floating_point(): argument 'input' (position 1) must be Tensor, not "
                   'str')),
    ('torch.is_inference(None)',
     ('TypeError', "is_inference(): argument 'input' (position 1) must be Tensor, not "
                   'NoneType')),
    ('torch.is_complex(1)',
     ('TypeError', "is_complex(): argument 'input' (position 1) must be Tensor, not int")),
    ("F.dropout('x')",
     ('TypeError', "dropout(): argument 'input' (position 1) must be Tensor, not str")),
    ("F.dropout(O(3), 'x')",
     ('TypeError', "'<' not supported between instances of 'str' and 'float'")),
    ("F.dropout(O(3), 0.5, 'x')",
     ('TypeError', "dropout(): argument 'train' (position 3) must be bool, not str")),
    ('F.dropout(O(3), 2)',
     ('ValueError', 'dropout probability has to be between 0 and 1, but got 2')),
    ("F.dropout1d('x')",
     ('AttributeError', "'str' object has no attribute 'dim'")),
    ('F.dropout2d(O(2, 3, 4), 0.5, 1)',
     ('TypeError', "feature_dropout(): argument 'train' (position 3) must be bool, not int")),
    ('F.alpha_dropout(O(3), 0.5, 1)',
     ('TypeError', "alpha_dropout(): argument 'train' (position 3) must be bool, not int")),
    ('F.feature_alpha_dropout(O(3, 3), 0.5, 1, True)',
     ('TypeError', "feature_alpha_dropout_(): argument 'train' (position 3) must be bool, "
                   'not int')),
    ("F.pad('x', (1, 1))",
     ('TypeError', "pad(): argument 'input' (position 1) must be Tensor, not str")),
    ('F.pad(O(3), 1)',
     ('TypeError', "pad(): argument 'pad' (position 2) must be tuple of ints, not int")),
    ("F.pad(O(3), (1, 'x'))",
     ('TypeError', "pad(): argument 'pad' failed to unpack the object at pos 2 with error "
                   '"type must be tuple of ints,but got str"')),
    ('F.pad(O(3), (1, 1), 3)',
     ('TypeError', "pad(): argument 'mode' (position 3) must be str, not int")),
    ("F.pad(O(3), (1, 1), value='x')",
     ('TypeError', "pad(): argument 'value' (position 4) must be float, not str")),
    ("F.glu(O(4), 'x')",
     ('TypeError', "glu(): argument 'dim' (position 2) must be int, not str")),
    ("F.glu('x')",
     ('AttributeError', "'str' object has no attribute 'dim'")),
    ('F.glu(O(4), True)',
     ('TypeError', "glu(): argument 'dim' (position 2) must be int, not bool")),
    ('F.glu(O())',
     ('RuntimeError', 'glu does not support scalars because halving size must be even')),
    ("F.embedding(L(0), 'x')",
     ('TypeError', "embedding(): argument 'weight' (position 1) must be Tensor, not str")),
    ("F.embedding('x', O(2, 3))",
     ('TypeError', "embedding(): argument 'indices' (position 2) must be Tensor, not str")),
    ("F.embedding(L(0), 'x', padding_idx=1)",
     ('AttributeError', "'str' object has no attribute 'size'")),
    ('F.embedding(L(0), O(2, 3), padding_idx=1.5)',
     ('TypeError', "embedding(): argument 'padding_idx' (position 3) must be int, not float")),
    ('F.embedding(L(0), O(2, 3), scale_grad_by_freq=1)',
     ('TypeError', "embedding(): argument 'scale_grad_by_freq' (position 4) must be bool, "
                   'not int')),
    ("F.embedding(L(0), O(2, 3), max_norm='x')",
     ('TypeError', "embedding_renorm_(): argument 'max_norm' (position 3) must be float, "
                   'not str')),
    ('F.embedding(L(0), torch.empty(0, 3))',
     ('RuntimeError', 'index_select(): self indexing axis dim should be positive')),
    ('F.embedding(L(True), O(2, 3))',
     ('RuntimeError', "Expected tensor for argument #1 'indices' to have one of the "
                      'following scalar types: Long, Int; but got CPUBoolType instead '
                      '(while checking arguments for embedding)')),
    ('F.embedding(L(0.5), O(2, 3))',
     ('RuntimeError', "Expected tensor for argument #1 'indices' to have one of the "
                      'following scalar types: Long, Int; but got torch.FloatTensor '
                      'instead (while checking arguments for embedding)')),
    ("F.max_pool2d('x', 2)",
     ('TypeError', "max_pool2d(): argument 'input' (position 1) must be Tensor, not str")),
    ("F.max_pool2d(O(1, 4, 4), 'x')",
     ('TypeError', "max_pool2d(): argument 'kernel_size' (position 2) must be tuple of "
                   'ints, not str')),
    ('F.max_pool2d(O(1, 4, 4), 2.0)',
     ('TypeError', "max_pool2d(): argument 'kernel_size' (position 2) must be tuple of "
                   'ints, not float')),
    ("F.max_pool2d(O(1, 4, 4), 2, 'x', return_indices=True)",
     ('TypeError', "max_pool2d_with_indices(): argument 'stride' (position 3) must be "
                   'tuple of ints, not str')),
    ("F.max_pool1d(O(1, 4, 4), 'x')",
     ('TypeError', "max_pool1d(): argument 'kernel_size' (position 2) must be tuple of "
                   'ints, not str')),
    ("F.adaptive_max_pool2d('x', 2)",
     ('AttributeError', "'str' object has no attribute 'size'")),
    ('F.adaptive_max_pool2d(O(1, 4, 4), 2.0)',
     ('TypeError', "object of type 'float' has no len()")),
    ('F.adaptive_max_pool2d(O(1, 4, 4), None)',
     ('TypeError', "object of type 'NoneType' has no len()")),
    ("F.adaptive_max_pool2d(O(1, 4, 4), 'x')",
     ('TypeError', "adaptive_max_pool2d(): argument 'output_size' (position 2) must be "
                   'tuple of ints, but found element of type str at pos 0')),
    ('F.adaptive_avg_pool2d(O(4), (2, 2))',
     ('ValueError', 'Input dimension should be at least 3')),
    ("F.adaptive_max_pool1d(O(1, 4), 'x')",
     ('TypeError', "adaptive_max_pool1d(): argument 'output_size' (position 2) must be "
                   'tuple of ints, not str')),
    ("F.fold(O(1, 4, 4), 'x', 2)",
     ('TypeError', "col2im(): argument 'output_size' (position 2) must be tuple of ints, "
                   'but found element of type str at pos 0')),
    ('F.unfold(O(1, 1, 4, 4), 2.0)',
     ('TypeError', "im2col(): argument 'kernel_size' (position 2) must be tuple of ints, "
                   'but found element of type float at pos 0')),
    ("F.batch_norm('x', None, None)",
     ('TypeError', "batch_norm(): argument 'input' (position 1) must be Tensor, not str")),
    ("F.batch_norm(O(2, 3), 'x', None)",
     ('TypeError', "batch_norm(): argument 'running_mean' (position 4) must be Tensor, not "
                   'str')),
    ('F.batch_norm(O(2, 3), None, None, training=True, eps=0)',
     ('ValueError', 'batch_norm eps must be positive during training, but got 0')),
    ('F.batch_norm(O(2, 3), None, None, eps=-1.0)',
     ('ValueError', 'batch_norm eps must be non-negative, but got -1.0')),
    ('F.batch_norm(O(), None, None, training=True)',
     ('IndexError', 'tuple index out of range')),
    ("F.layer_norm(O(2, 3), 'x')",
     ('TypeError', "layer_norm(): argument 'normalized_shape' (position 2) must be tuple "
                   'of ints, not str')),
    ("F.layer_norm(O(2, 3), (3,), eps='x')",
     ('TypeError', "layer_norm(): argument 'eps' (position 5) must be float, not str")),
    ("F.layer_norm('x', (3,))",
     ('TypeError', "layer_norm(): argument 'input' (position 1) must be Tensor, not str")),
    ('F.group_norm(O(2, 4), 0)',
     ('ZeroDivisionError', 'integer division or modulo by zero')),
    ("F.group_norm(O(2, 4), 'x')",
     ('TypeError', "unsupported operand type(s) for //: 'int' and 'str'")),
    ('F.group_norm(O(4), 2)',
     ('RuntimeError', 'Expected at least 2 dimensions for input tensor but received 1')),
    ("F.group_norm('x', 2)",
     ('AttributeError', "'str' object has no attribute 'dim'")),
    ('F.group_norm(O(1, 2), 2)',
     ('ValueError', 'Expected more than 1 value per channel when training, got input size '
                    '[1, 2]')),
    ("F.instance_norm(O(2, 3, 4), 'x')",
     ('TypeError', "instance_norm(): argument 'running_mean' (position 4) must be Tensor, "
                   'not str')),
    ("F.instance_norm('x')",
     ('AttributeError', "'str' object has no attribute 'size'")),
    ("F.interpolate('x', size=2)",
     ('AttributeError', "'str' object has no attribute 'dim'")),
    ('F.interpolate(O(1, 2, 6, 6), size=2.0)',
     ('TypeError', 'upsample_nearest2d() received an invalid combination of arguments - '
                   'got (Tensor, list, NoneType), but expected one of:\n * (Tensor input, '
                   'tuple of ints output_size, tuple of floats scale_factors)\n      '
                   "didn't match because some of the arguments have invalid types: "
                   '(Tensor, !list of [float, float]!, !NoneType!)\n * (Tensor input, '
                   'tuple of ints output_size, float scales_h = None, float scales_w = '
                   'None, *, Tensor out = None)\n')),
    ("F.interpolate(O(1, 2, 6, 6), size='x', mode='bilinear')",
     ('TypeError', 'upsample_bilinear2d() received an invalid combination of arguments - '
                   'got (Tensor, list, bool, NoneType), but expected one of:\n * (Tensor '
                   'input, tuple of ints output_size, bool align_corners, tuple of floats '
                   "scale_factors)\n      didn't match because some of the arguments have "
                   'invalid types: (Tensor, !list of [str, str]!, bool, !NoneType!)\n * '
                   '(Tensor input, tuple of ints output_size, bool align_corners, float '
                   'scales_h = None, float scales_w = None, *, Tensor out = None)\n')),
    ("F.interpolate(O(1, 2, 6, 6), size=2.0, mode='area')",
     ('TypeError', "adaptive_avg_pool2d(): argument 'output_size' (position 2) must be "
                   'tuple of ints, but found element of type float at pos 0')),
    ("F.interpolate(O(1, 2, 6, 6), size=2.0, mode='nearest-exact')",
     ('TypeError', '_upsample_nearest_exact2d() received an invalid combination of '
                   'arguments - got (Tensor, list, NoneType), but expected one of:\n * '
                   '(Tensor input, tuple of ints output_size, tuple of floats '
                   "scale_factors)\n      didn't match because some of the arguments have "
                   'invalid types: (Tensor, !list of [float, float]!, !NoneType!)\n * '
                   '(Tensor input, tuple of ints output_size, float scales_h = None, float '
                   'scales_w = None, *, Tensor out = None)\n')),
    ("F.interpolate(O(1, 2, 6), size=2.0, mode='linear')",
     ('TypeError', 'upsample_linear1d() received an invalid combination of arguments - got '
                   '(Tensor, list, bool, NoneType), but expected one of:\n * (Tensor '
                   'input, tuple of ints output_size, bool align_corners, tuple of floats '
                   "scale_factors)\n      didn't match because some of the arguments have "
                   'invalid types: (Tensor, !list of [float]!, bool, !NoneType!)\n * '
                   '(Tensor input, tuple of ints output_size, bool align_corners, float '
                   'scales = None, *, Tensor out = None)\n')),
    ("F.interpolate(O(1, 2, 6), size=2.0, mode='area')",
     ('TypeError', "adaptive_avg_pool1d(): argument 'output_size' (position 2) must be "
                   'tuple of ints, but found element of type float at pos 0')),
    ("F.interpolate(O(1, 2, 6, 6), scale_factor='x')",
     ('TypeError', 'upsample_nearest2d() received an invalid combination of arguments - '
                   'got (Tensor, NoneType, list), but expected one of:\n * (Tensor input, '
                   'tuple of ints output_size, tuple of floats scale_factors)\n      '
                   "didn't match because some of the arguments have invalid types: "
                   '(Tensor, !NoneType!, !list of [str, str]!)\n * (Tensor input, tuple of '
                   'ints output_size, float scales_h = None, float scales_w = None, *, '
                   'Tensor out = None)\n')),
    ('F.interpolate(O(1, 2, 6, 6), size=L(3))',
     ('ok', 'float32', (1, 2, 3, 3))),
    ('torch.zeros([L(2), 2])',
     ('ok', 'float32', (2, 2))),
    ('torch.zeros([L(2.0), 2])',
     ('TypeError', "zeros(): argument 'size' (position 1) must be tuple of ints, but found "
                   'element of type Tensor at pos 0')),

    # -- max_pool2d's value checks, in torch's order
    ('F.max_pool2d(O(), 2)',
     ('RuntimeError', 'non-empty 3D or 4D (batch mode) tensor expected for input')),
    ('F.max_pool2d(O(0, 2, 6, 6), 2)',
     ('ok', 'float32', (0, 2, 3, 3))),
    ('F.max_pool2d(O(0, 2, 6, 6), 2, return_indices=True)',
     ('ok', 'tuple', ((0, 2, 3, 3), (0, 2, 3, 3)))),
    ("F.max_pool2d(O(1, 6, 6, dtype='bool'), 2)",
     ('NotImplementedError', '"max_pool2d" not implemented for \'Bool\'')),
    ('F.max_pool2d(O(1, 6, 6), 0)',
     ('RuntimeError', 'stride should not be zero')),
    ('F.max_pool2d(O(1, 6, 6), 2, 0)',
     ('RuntimeError', 'stride should not be zero')),
    ('F.max_pool2d(O(1, 6, 6), -7)',
     ('RuntimeError', 'pad should be at most half of effective kernel size, but got pad=0, '
                      'kernel_size=-7 and dilation=1')),
    ('F.max_pool2d(O(6), 2)',
     ('RuntimeError', 'non-empty 3D or 4D (batch mode) tensor expected for input')),
    ("F.max_pool2d(O(1, 6, 6, dtype='bool'), 0)",
     ('RuntimeError', 'stride should not be zero')),
    ('F.max_pool2d(O(0, 6, 6), 2)',
     ('RuntimeError', 'Expected 3D or 4D (batch mode) tensor with optional 0 dim batch '
                      'size for input, but got:[0, 6, 6]')),
    ('F.max_pool2d(O(1, 0, 6), 2)',
     ('RuntimeError', 'Expected 3D or 4D (batch mode) tensor with optional 0 dim batch '
                      'size for input, but got:[1, 0, 6]')),
    ('F.max_pool2d(O(1, 6, 6), 2, padding=2)',
     ('RuntimeError', 'pad should be at most half of effective kernel size, but got pad=2, '
                      'kernel_size=2 and dilation=1')),
    ('F.max_pool2d(O(1, 6, 6), 3, padding=(0, 3))',
     ('RuntimeError', 'pad should be at most half of effective kernel size, but got pad=3, '
                      'kernel_size=3 and dilation=1')),
    ('F.max_pool2d(O(1, 6, 6), 0, 1)',
     ('RuntimeError', 'kernel size should be greater than zero, but got kH: 0 kW: 0')),
    ('F.max_pool2d(O(1, 6, 6), (2, -1), 1)',
     ('RuntimeError', 'kernel size should be greater than zero, but got kH: 2 kW: -1')),
    ('F.max_pool2d(O(1, 6, 6), 3, padding=1, dilation=2)',
     ('ok', 'float32', (1, 2, 2))),

]


@pytest.mark.parametrize("expr,expected", ROWS, ids=[r[0] for r in ROWS])
def test_npgrad_gives_expected(expr: str, expected: tuple) -> None:
    assert _outcome(npgrad, expr)[0] == expected


@pytest.mark.parametrize("expr,expected", ROWS, ids=[r[0] for r in ROWS])
def test_expected_is_torch(expr: str, expected: tuple) -> None:
    torch = pytest.importorskip("torch")
    assert _outcome(torch, expr)[0] == expected


_OK_ROWS = [r for r in ROWS if r[1][0] == "ok"]


@pytest.mark.parametrize("expr,expected", _OK_ROWS, ids=[r[0] for r in _OK_ROWS])
def test_values_match_torch(expr: str, expected: tuple) -> None:
    torch = pytest.importorskip("torch")
    _, mine = _outcome(npgrad, expr)
    _, theirs = _outcome(torch, expr)
    mine = mine if isinstance(mine, tuple) else (mine,)
    theirs = theirs if isinstance(theirs, tuple) else (theirs,)
    for a, b in zip(mine, theirs, strict=True):
        if expr.startswith("torch.empty_strided"):
            continue  # uninitialised memory in torch
        np.testing.assert_allclose(a.detach().numpy().astype(np.float64),
                                   b.detach().numpy().astype(np.float64), rtol=1e-3)


def test_triangle_indices_match_torch_on_a_grid() -> None:
    torch = pytest.importorskip("torch")
    for row in range(6):
        for col in range(6):
            for offset in range(-7, 8):
                for name in ("tril_indices", "triu_indices"):
                    mine = getattr(npgrad, name)(row, col, offset).tolist()
                    assert mine == getattr(torch, name)(row, col, offset).tolist(), \
                        (name, row, col, offset)


def test_triangle_indices_by_hand() -> None:
    assert npgrad.tril_indices(3, 3).tolist() == [[0, 1, 1, 2, 2, 2], [0, 0, 1, 0, 1, 2]]
    assert npgrad.triu_indices(3, 3, 1).tolist() == [[0, 0, 1], [1, 2, 2]]
    # a huge row count with few entries is computed from the rows that have entries
    assert npgrad.triu_indices(2 ** 62, 3).tolist() == [[0, 0, 0, 1, 1, 2], [0, 1, 2, 1, 2, 2]]
    assert npgrad.tril_indices(2, 3, dtype=npgrad.int32).dtype == npgrad.int32


def test_einsum_sublist_format_is_the_equation_format() -> None:
    a = npgrad.arange(6.).reshape(2, 3)
    b = npgrad.arange(12.).reshape(3, 4)
    want = npgrad.einsum("ij,jk->ik", a, b)
    np.testing.assert_array_equal(npgrad.einsum(a, [0, 1], b, [1, 2], [0, 2]).numpy(),
                                  want.numpy())
    np.testing.assert_array_equal(npgrad.einsum(a, [0, 1], b, [1, 2]).numpy(), want.numpy())
    np.testing.assert_array_equal(npgrad.einsum(a, [Ellipsis, 1], b, [1, 2]).numpy(),
                                  want.numpy())
    np.testing.assert_array_equal(npgrad.einsum("ij,jk", [a, b]).numpy(), want.numpy())


def test_elementwise_mean_is_mean_with_a_warning() -> None:
    x, y = npgrad.tensor([1., 2., 4.]), npgrad.tensor([0., 0., 0.])
    F = npgrad.nn.functional
    with pytest.warns(UserWarning, match="elementwise_mean"):
        got = F.mse_loss(x, y, reduction="elementwise_mean")
    assert got.item() == pytest.approx(7.0)


def test_huber_loss_keeps_the_input_dtype() -> None:
    F = npgrad.nn.functional
    x = npgrad.tensor([0.5, 3.0], dtype=npgrad.float16)
    t = npgrad.tensor([0.0, 0.0])
    out = F.huber_loss(x, t, reduction="none")
    assert out.dtype == npgrad.float16
    # 0.5 * 0.5**2 below delta, 1 * (3 - 0.5) above
    np.testing.assert_allclose(out.numpy().astype(np.float64), [0.125, 2.5])
    out = F.smooth_l1_loss(npgrad.tensor([0, 3]), npgrad.tensor([0.5, 0.0]), reduction="none")
    assert out.dtype == npgrad.float32
    np.testing.assert_allclose(out.numpy(), [0.125, 2.5])


def test_losses_gradcheck_after_the_boundary_checks() -> None:
    F = npgrad.nn.functional
    gen = np.random.default_rng(0)
    x = npgrad.tensor(gen.normal(size=(2, 3)) * 2, requires_grad=True)
    t = npgrad.tensor(gen.normal(size=(2, 3)))
    for fn in (lambda a: F.huber_loss(a, t, delta=0.7), lambda a: F.smooth_l1_loss(a, t, beta=0.5),
               lambda a: F.soft_margin_loss(a, t.sign()), lambda a: F.mse_loss(a, t)):
        assert npgrad.autograd.gradcheck(fn, (x,))


def test_soft_margin_loss_matches_torch_with_mixed_dtypes() -> None:
    torch = pytest.importorskip("torch")
    x = [[0.3, -1.2], [2.0, 0.1]]
    for m_dtype, t_dtype in (("float32", "int64"), ("float64", "float32"), ("float16", "float64")):
        outs = []
        for m in (npgrad, torch):
            out = m.nn.functional.soft_margin_loss(
                m.tensor(x, dtype=getattr(m, m_dtype)),
                m.tensor([[1, -1], [1, 1]], dtype=getattr(m, t_dtype)), reduction="none")
            outs.append((str(out.dtype).split(".")[-1], out.numpy().astype(np.float64)))
        assert outs[0][0] == outs[1][0]
        np.testing.assert_allclose(outs[0][1], outs[1][1], rtol=1e-3)


# -- adaptive pools' output sizes and the private names of torch's dispatchers ---------------

@pytest.mark.parametrize("expr", [
    "F.adaptive_avg_pool2d(x4, (3, -7))", "F.adaptive_avg_pool2d(x4, (2 ** 62, 1))",
    "F.adaptive_avg_pool2d(x4, (2 ** 31, 2 ** 31))", "F.adaptive_avg_pool1d(x2, -7)",
    "F.adaptive_avg_pool1d(x2, 2 ** 62)", "F.adaptive_max_pool2d(x4, (3, -7))",
    "F.adaptive_max_pool2d(x4, (2 ** 62, 2 ** 62))", "F.adaptive_max_pool1d(x2, -2)",
    "F.adaptive_max_pool1d(x2, 2 ** 62)", "F.adaptive_avg_pool1d(x2, 2 ** 40)",
    "F.adaptive_max_pool2d(i4, 2)", "F.adaptive_avg_pool2d(b4, 2)", "F.adaptive_max_pool1d(i2, 2)",
    "F.max_pool2d(x4, 2, bogus=1)", "F.max_pool2d(x4)", "F.max_pool1d(x2, bogus=1)",
    "F.max_pool1d(x2)", "F.adaptive_max_pool2d(x4)", "F.adaptive_max_pool1d(x2, 2, bogus=1)",
])
def test_adaptive_pool_sizes_and_call_shapes(expr) -> None:
    """Note [Adaptive pools' output sizes] and Note [The private names in torch's TypeErrors]
    in npgrad/nn/functional.py: torch's errors, raised before NumPy allocates."""
    pytest.importorskip("torch")

    from torch_oracle import assert_same_error

    def env(m: Any) -> dict:
        return {"F": m.nn.functional, "x4": m.ones(1, 2, 6, 6), "x2": m.ones(2, 3),
                "i4": m.ones(1, 2, 6, 6, dtype=m.int64), "b4": m.ones(1, 2, 6, 6, dtype=m.bool),
                "i2": m.ones(2, 3, dtype=m.int64)}
    assert_same_error(expr, env)


def test_pool_wrappers_keep_their_public_names() -> None:
    F = npgrad.nn.functional
    for name in ("max_pool1d", "max_pool2d", "adaptive_max_pool1d", "adaptive_max_pool2d"):
        assert getattr(F, name).__name__ == name
