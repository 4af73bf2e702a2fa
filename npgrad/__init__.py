"""npgrad: PyTorch's autograd and grad modes, in pure Python on NumPy.

>>> import npgrad as torch
>>> x = torch.tensor([1.], requires_grad=True)
>>> with torch.no_grad():
...     y = x * 2
>>> y.requires_grad
False
"""
from __future__ import annotations

import builtins  # `bool`, `int` and `float` here are npgrad's dtypes
import importlib
import math
from typing import TYPE_CHECKING, Any

from . import _dtype
from ._dtype import (bool_ as bool, double, float, float16, float32, float64,  # noqa: A001
                     get_default_dtype, half, int, int8, int16, int32, int64, long, short,
                     set_default_dtype, uint8, complex32, complex64, complex128, cfloat,
                     cdouble, chalf)
from ._dtype import dtype  # noqa: F401
from ._device import device  # noqa: F401
from ._size import Size  # noqa: F401
from ._mode import is_grad_enabled, is_inference_mode_enabled  # noqa: F401
from ._tensor import Tensor  # noqa: F401
from . import _sparse_tensor  # noqa: F401  (binds SparseTensor into the sparse ops)
from ._ops.signature import signature, unchecked
from ._tensor_str import set_printoptions, get_printoptions, printoptions  # noqa: F401
from ._creation import (  # noqa: F401
    Generator, arange, as_tensor, default_generator, empty, empty_like, eye, from_numpy, full,
    full_like, initial_seed, is_tensor, linspace, manual_seed, numel, ones, ones_like, rand,
    rand_like, randint, randn, randn_like, randperm, seed, tensor, zeros, zeros_like,
)
from ._random import get_rng_state, set_rng_state  # noqa: F401
from ._ops.complex import (  # noqa: F401
    angle, complex, conj, conj_physical, imag, is_conj, polar, real, resolve_conj, sgn,
    view_as_complex, view_as_real,
)
from ._ops.pointwise import (  # noqa: F401
    abs, absolute, add, allclose, bitwise_and, bitwise_not, bitwise_or, bitwise_xor, ceil,
    clamp, clamp_max, clamp_min, clip, cos, div, divide, eq, equal, exp, expm1, floor,
    floor_divide, fmod, frac, ge, greater, greater_equal, gt, isclose, isfinite, isinf, isnan,
    le, lerp, less, less_equal, log, log1p, log2, log10, logical_and, logical_not, logical_or,
    logical_xor, lt, masked_fill, maximum, minimum, mul, multiply, ne, neg, negative,
    not_equal, pow, reciprocal, relu, remainder, round, rsqrt, rsub, sigmoid, sign, sin, sqrt,
    square, sub, subtract, tan, tanh, true_divide, trunc, where,
)
from ._ops.reduction import (  # noqa: F401
    all, amax, amin, any, argmax, argmin, cumsum, logsumexp, max, mean, min,
    norm, prod, std, sum, var,
)
from ._ops.softmax import log_softmax, softmax  # noqa: F401
from ._ops.matmul import addmm, bmm, dot, matmul, mm, mv, outer  # noqa: F401
from ._ops.shape import (  # noqa: F401
    cat, chunk, clone, detach, diagonal, expand, flatten, flip, narrow,
    permute, repeat, reshape, select, split, squeeze, stack, t, transpose, unbind, unflatten,
    unsqueeze,
)
from ._ops.indexing import gather, index_select, nonzero  # noqa: F401
from ._ops.as_strided import as_strided  # noqa: F401
# torch-level functions: special functions and activations [special]
from ._ops.special import (  # noqa: F401
    acos, acos_, acosh, acosh_, addcdiv, addcmul, arccos, arccosh, arcsin, arcsinh, arctan,
    arctan2, arctanh, asin, asin_, asinh, asinh_, atan, atan_, atan2, atanh, atanh_, cosh,
    cosh_, erf, erf_, erfc, erfc_, exp2, exp2_, hypot, logaddexp, nan_to_num, nan_to_num_,
    sinh, sinh_, xlogy, xlogy_,
)
from ._ops.activation import celu_, selu_, threshold, threshold_  # noqa: F401
from ._ops.activation import torch_celu as celu, torch_selu as selu  # noqa: F401
# torch-level functions: shape, indexing and creation [shape]
from ._ops.arrange import (  # noqa: E402,F401
    argwhere, atleast_1d, atleast_2d, atleast_3d, block_diag, broadcast_tensors, broadcast_to,
    cartesian_prod, column_stack, combinations, diag, diag_embed, diagflat, diagonal_scatter,
    dsplit, dstack, fliplr, flipud, hsplit, hstack, kron, meshgrid, moveaxis, movedim,
    narrow_copy, ravel, repeat_interleave, roll, rot90, row_stack, select_scatter, slice_scatter,
    tensor_split, tile, trace, tril, triu, vsplit, vstack,
)
from ._ops.indexing import (  # noqa: E402,F401
    index_add, index_copy, index_fill, index_put, masked_scatter, masked_select, scatter,
    scatter_add, scatter_reduce, take, take_along_dim,
)
from ._creation import tril_indices, triu_indices  # noqa: E402,F401
# torch-level functions: sorting, scans, reductions and products [sorting]
from ._ops.sorting import (  # noqa: F401
    argsort, kthvalue, median, mode, msort, nanmedian, sort, topk,
)
from ._ops.reduction import cummax, cummin, cumprod, logcumsumexp  # noqa: F401
from ._ops.reduction import count_nonzero, nanmean, nansum  # noqa: F401
from ._ops.distance import cdist, cosine_similarity, dist, pairwise_distance  # noqa: F401
from ._ops.matmul import addbmm, addmv, addr, baddbmm, cross  # noqa: F401
from ._ops.sorting import bincount, histc, unique  # noqa: F401
from ._creation import logspace  # noqa: F401
from ._ops.reduction import std_mean, var_mean  # noqa: F401
from ._ops.reduction import aminmax  # noqa: F401
from ._ops.sorting import nanquantile, quantile  # noqa: F401
from ._ops.einsum import einsum  # noqa: F401
# torch-level functions: devices, sampling, testing and torch.special [device]
from ._creation import (  # noqa: E402,F401
    bernoulli, empty_strided, multinomial, normal, poisson, randint_like,
)
from ._ops.special import logit, sinc  # noqa: E402,F401
from .backends._runtime import (  # noqa: E402,F401
    are_deterministic_algorithms_enabled, get_num_threads,
    is_deterministic_algorithms_warn_only_enabled, set_num_threads, use_deterministic_algorithms,
)
# torch-level functions: linear algebra [linalg]
# (torch.inverse, det, ... live in _ops.linalg, loaded on first use: see __getattr__)
from . import autograd  # noqa: E402,F401
from .autograd.grad_mode import (  # noqa: E402,F401
    enable_grad, inference_mode, no_grad, set_grad_enabled,
)
from .autograd.anomaly_mode import (  # noqa: E402,F401
    is_anomaly_check_nan_enabled, is_anomaly_enabled, set_anomaly_enabled,
)

# aliases: the same op, checked under its own name (torch's messages name the alias)
concat = signature("concat(TensorList tensors, int64_t dim=0, *, Tensor out=None)")(unchecked(cat))
concatenate = signature("concatenate(TensorList tensors, int64_t dim=0, *, "
                        "Tensor out=None)")(unchecked(cat))
swapaxes = signature("swapaxes(Tensor input, int64_t axis0, int64_t axis1)")(unchecked(transpose))
swapdims = signature("swapdims(Tensor input, int64_t dim0, int64_t dim1)")(unchecked(transpose))
# scripts written for torch: constants and bfloat16 here; legacy tensor classes, running as
# torch, mixed precision and histogram load on first use (see _LAZY_NAMES) [torch-compat]
from ._dtype import bfloat16  # noqa: E402,F401
inf = math.inf
nan = math.nan
pi = math.pi
e = math.e
newaxis = None
from ._ops.sparse import (  # noqa: E402,F401
    SPARSE_COO as sparse_coo, STRIDED as strided, layout, sparse_coo_tensor,
)
from . import sparse  # noqa: E402,F401
__version__ = "0.1.0"


@signature("is_inference(Tensor input)")
def is_inference(input: Tensor) -> builtins.bool:  # noqa: A002
    return input.is_inference()


@signature("is_floating_point(Tensor input)")
def is_floating_point(input: Tensor) -> builtins.bool:  # noqa: A002
    return input.is_floating_point()


@signature("is_complex(Tensor input)")
def is_complex(input: Tensor) -> builtins.bool:  # noqa: A002
    return input.is_complex()


@signature("result_type(Tensor tensor, Tensor other)", "result_type(Scalar scalar, Tensor tensor)",
           "result_type(Tensor tensor, Scalar other)",
           "result_type(Scalar scalar1, Scalar scalar2)")
def result_type(tensor1: Any, tensor2: Any) -> _dtype.dtype:
    from ._ops._core import as_array

    return _dtype.from_np(_dtype.result_type_np((as_array(tensor1), as_array(tensor2))))


def promote_types(type1: _dtype.dtype, type2: _dtype.dtype) -> _dtype.dtype:
    return _dtype.promote_types(type1, type2)


_LAZY_SUBMODULES = ("nn", "optim", "utils", "demo", "cuda", "backends", "testing", "special",
                    "distributions", "linalg", "onnx", "distributed", "amp", "random",
                    "cpu", "func")
# torch-level names from modules loaded on first use: name -> (module, attribute)
_LAZY_NAMES = {"autocast": ("amp.autocast_mode", "autocast"),
               "vmap": ("func", "vmap"),
               "is_autocast_enabled": ("amp.autocast_mode", "is_autocast_enabled"),
               "histogram": ("_histogram", "histogram"),
               "install_as_torch": ("_torch_alias", "install_as_torch"),
               "uninstall_as_torch": ("_torch_alias", "uninstall_as_torch")}
# torch's legacy typed tensor classes (Note [Legacy tensor types] in npgrad._legacy_tensor)
_LAZY_NAMES.update({name: ("_legacy_tensor", name) for name in (
    "BFloat16Tensor", "BoolTensor", "ByteTensor", "CharTensor", "DoubleTensor", "FloatTensor",
    "HalfTensor", "IntTensor", "LongTensor", "ShortTensor")})
# torch-level linear-algebra names -> their functions in _ops.linalg (a large module few
# programs need, so it is imported on first use)
_LAZY_LINALG = {"cholesky_solve": "cholesky_solve", "det": "det", "inverse": "inv",
                "logdet": "logdet", "matrix_power": "matrix_power", "pinverse": "pinverse",
                "cholesky": "torch_cholesky", "qr": "torch_qr", "slogdet": "torch_slogdet",
                "svd": "torch_svd"}


def __getattr__(name: str) -> Any:
    # nn, optim and utils load on first use so that `import npgrad` stays fast.
    if name in _LAZY_SUBMODULES:
        return importlib.import_module(f"{__name__}.{name}")
    if name in _LAZY_NAMES:
        module, attr = _LAZY_NAMES[name]
        return getattr(importlib.import_module(f"{__name__}.{module}"), attr)
    if name in _LAZY_LINALG:
        linalg_ops = importlib.import_module(f"{__name__}._ops.linalg")
        return getattr(linalg_ops, _LAZY_LINALG[name])
    if name in ("save", "load", "serialization"):
        # torch's file formats and safetensors: imported on first use (npgrad.serialization)
        serialization = importlib.import_module(f"{__name__}.serialization")
        return serialization if name == "serialization" else getattr(serialization, name)
    if name == "from_dlpack":
        return importlib.import_module(f"{__name__}.utils.dlpack").from_dlpack
    raise AttributeError(f"module 'npgrad' has no attribute '{name}'")


# Note [What type checkers see of the lazy names]
# The names loaded on first use (``__getattr__`` above) are imported here for mypy and pyright
# only (``TYPE_CHECKING`` is False at run time), so that ``torch.nn.Linear``, ``torch.det`` or
# ``torch.save`` are typed in user code instead of ``Any``, without an import at run time.
if TYPE_CHECKING:
    from . import (amp as amp, backends as backends, cpu as cpu, cuda as cuda,
                   distributed as distributed,
                   distributions as distributions, linalg as linalg, nn as nn, onnx as onnx,
                   optim as optim, random as random, serialization as serialization,
                   special as special, testing as testing, utils as utils)
    from . import func as func
    from ._histogram import histogram as histogram
    from .func import vmap as vmap
    from ._legacy_tensor import (BFloat16Tensor as BFloat16Tensor, BoolTensor as BoolTensor,
                                 ByteTensor as ByteTensor, CharTensor as CharTensor,
                                 DoubleTensor as DoubleTensor, FloatTensor as FloatTensor,
                                 HalfTensor as HalfTensor, IntTensor as IntTensor,
                                 LongTensor as LongTensor, ShortTensor as ShortTensor)
    from ._torch_alias import (install_as_torch as install_as_torch,
                               uninstall_as_torch as uninstall_as_torch)
    from ._ops.linalg import (cholesky_solve as cholesky_solve, det as det,
                              inv as inverse, logdet as logdet,
                              matrix_power as matrix_power, pinverse as pinverse,
                              torch_cholesky as cholesky, torch_qr as qr,
                              torch_slogdet as slogdet, torch_svd as svd)
    from .amp.autocast_mode import autocast as autocast, is_autocast_enabled as is_autocast_enabled
    from .serialization import load as load, save as save
    from .utils.dlpack import from_dlpack as from_dlpack

# The public names: torch's names that npgrad has (submodules are reached as attributes, as in
# torch, whose __all__ lists no submodule either), and npgrad's own install_as_torch /
# uninstall_as_torch.  tests/test_typing.py checks this list against the module and torch.
__all__ = [
    'abs', 'absolute', 'acos', 'acos_', 'acosh', 'acosh_', 'add', 'addbmm', 'addcdiv',
    'addcmul', 'addmm', 'addmv', 'addr', 'all', 'allclose', 'amax', 'amin', 'aminmax', 'any',
    'arange', 'arccos', 'arccosh', 'arcsin', 'arcsinh', 'arctan', 'arctan2', 'arctanh',
    'are_deterministic_algorithms_enabled', 'argmax', 'argmin', 'argsort', 'argwhere',
    'as_strided', 'as_tensor', 'asin', 'asin_', 'asinh', 'asinh_', 'atan', 'atan2', 'atan_',
    'atanh',
    'atanh_', 'atleast_1d', 'atleast_2d', 'atleast_3d', 'autocast', 'baddbmm', 'bernoulli',
    'bfloat16', 'BFloat16Tensor', 'bincount', 'bitwise_and', 'bitwise_not', 'bitwise_or',
    'bitwise_xor', 'block_diag', 'bmm', 'bool', 'BoolTensor', 'broadcast_tensors',
    'broadcast_to', 'ByteTensor', 'cartesian_prod', 'cat', 'cdist', 'ceil', 'celu', 'celu_',
    'cdouble', 'cfloat', 'chalf', 'complex32', 'complex64', 'complex128', 'angle', 'complex',
    'conj', 'conj_physical', 'imag', 'is_complex', 'is_conj', 'polar', 'real', 'resolve_conj',
    'sgn', 'view_as_complex', 'view_as_real',
    'threshold', 'threshold_',
    'CharTensor', 'cholesky', 'cholesky_solve', 'chunk', 'clamp', 'clamp_max', 'clamp_min',
    'clip', 'clone', 'column_stack', 'combinations', 'concat', 'concatenate', 'cos', 'cosh',
    'cosh_', 'cosine_similarity', 'count_nonzero', 'cross', 'cummax', 'cummin', 'cumprod', 'cumsum',
    'default_generator', 'det', 'detach', 'device', 'diag', 'diag_embed', 'diagflat',
    'diagonal', 'diagonal_scatter', 'dist', 'div', 'divide', 'dot', 'double', 'DoubleTensor',
    'dsplit', 'dstack', 'dtype', 'e', 'einsum', 'empty', 'empty_like', 'empty_strided',
    'enable_grad', 'eq', 'equal', 'erf', 'erf_', 'erfc', 'erfc_', 'exp', 'exp2', 'exp2_',
    'expm1', 'eye', 'flatten', 'flip', 'fliplr', 'flipud', 'float', 'float16', 'float32',
    'float64', 'FloatTensor', 'floor', 'floor_divide', 'fmod', 'frac', 'from_dlpack',
    'from_numpy', 'full', 'full_like', 'gather', 'ge', 'Generator', 'get_default_dtype',
    'get_num_threads', 'get_rng_state', 'greater', 'greater_equal', 'gt', 'half', 'HalfTensor',
    'histc', 'histogram', 'hsplit', 'hstack', 'hypot', 'index_add', 'index_copy', 'index_fill',
    'index_put', 'index_select', 'inf', 'inference_mode', 'initial_seed', 'int', 'int16',
    'int32', 'int64', 'int8', 'IntTensor', 'inverse', 'is_anomaly_check_nan_enabled',
    'is_anomaly_enabled', 'is_autocast_enabled',
    'is_deterministic_algorithms_warn_only_enabled', 'is_floating_point', 'is_grad_enabled',
    'is_inference', 'is_inference_mode_enabled', 'is_tensor', 'isclose', 'isfinite', 'isinf',
    'isnan', 'kron', 'kthvalue', 'layout', 'le', 'lerp', 'less', 'less_equal', 'linspace', 'load',
    'log',
    'log10', 'log1p', 'log2', 'log_softmax', 'logaddexp', 'logcumsumexp', 'logdet',
    'logical_and', 'logical_not', 'logical_or', 'logical_xor', 'logit', 'logspace', 'logsumexp',
    'long', 'LongTensor', 'lt', 'manual_seed', 'masked_fill', 'masked_scatter', 'masked_select',
    'matmul', 'matrix_power', 'max', 'maximum', 'mean', 'median', 'meshgrid', 'min', 'minimum',
    'mm', 'mode', 'moveaxis', 'movedim', 'msort', 'mul', 'multinomial', 'multiply', 'mv', 'nan',
    'nan_to_num', 'nan_to_num_', 'nanmean', 'nanmedian', 'nanquantile', 'nansum', 'narrow',
    'narrow_copy', 'ne', 'neg', 'negative', 'newaxis', 'no_grad', 'nonzero', 'norm', 'normal',
    'not_equal', 'numel', 'ones', 'ones_like', 'outer', 'pairwise_distance', 'permute', 'pi',
    'pinverse', 'poisson',
    'pow', 'prod', 'promote_types', 'qr', 'quantile', 'rand', 'rand_like', 'randint',
    'randint_like', 'randn', 'randn_like', 'randperm', 'ravel', 'reciprocal', 'relu',
    'remainder', 'repeat_interleave', 'reshape', 'result_type', 'roll', 'rot90', 'round',
    'row_stack', 'rsqrt', 'rsub', 'save', 'scatter', 'scatter_add', 'scatter_reduce', 'seed',
    'select', 'select_scatter', 'selu', 'selu_', 'set_anomaly_enabled', 'set_default_dtype',
    'set_grad_enabled', 'set_num_threads', 'set_printoptions', 'set_rng_state', 'short',
    'ShortTensor', 'sigmoid', 'sign', 'sin', 'sinc', 'sinh', 'sinh_', 'Size', 'slice_scatter',
    'slogdet', 'softmax', 'sort', 'sparse_coo', 'sparse_coo_tensor', 'split', 'sqrt', 'square',
    'squeeze', 'stack', 'std',
    'std_mean', 'strided', 'sub', 'subtract', 'sum', 'svd', 'swapaxes', 'swapdims', 't', 'take',
    'take_along_dim', 'tan', 'tanh', 'Tensor', 'tensor', 'tensor_split', 'tile', 'topk',
    'trace', 'transpose', 'tril', 'tril_indices', 'triu', 'triu_indices', 'true_divide',
    'trunc', 'uint8', 'unbind', 'unflatten', 'unique', 'unsqueeze',
    'use_deterministic_algorithms', 'var', 'var_mean', 'vmap', 'vsplit', 'vstack', 'where',
    'xlogy', 'xlogy_', 'zeros', 'zeros_like',
    'install_as_torch', 'uninstall_as_torch',
]
