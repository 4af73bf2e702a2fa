"""npgrad.nn.functional: layers, activations and losses as functions, torch's names and signatures.

Note [Where the nn ops live]
Every op with a grad_fn of its own lives in the op layer, node next to function:
convolution and pooling in ``npgrad._ops.conv``, losses in ``npgrad._ops.loss``,
activations in ``_ops.activation``, batch and layer norm in ``_ops.normalization``,
embedding in ``_ops.embedding``.  This module only gives them torch's functional
names and signatures (and composes the few that need no node of their own).
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from .._ops.signature import batchable, checker, signature
from .. import _dtype
from .._ops import checks
from .._ops.conv import (adaptive_avg_pool2d as _adaptive_avg_pool2d, avg_pool2d,  # noqa: F401
                         conv_nd, max_pool2d as _max_pool2d)
from .._ops.inplace import relu_
from .._ops.loss import (binary_cross_entropy, binary_cross_entropy_with_logits,  # noqa: F401
                         cross_entropy, huber_loss, l1_loss, mse_loss, nll_loss, smooth_l1_loss)
from .._ops.pointwise import relu as _relu
from .._ops.softmax import log_softmax as _log_softmax, softmax as _softmax
from .._tensor import Tensor
from .._tensor_base import wrap
from .._ops.activation import gelu, leaky_relu, silu  # noqa: F401
from .._ops.normalization import batch_norm as _batch_norm, layer_norm as _layer_norm
from .._ops.embedding import embedding as _embedding
# functional names: special functions and activations [special]
from .._ops.activation import (  # noqa: F401
    celu, celu_, elu, elu_, hardsigmoid, hardswish, hardtanh, hardtanh_, logsigmoid, mish,
    relu6, selu, selu_, softmin, softplus, softsign, threshold_,
)
from .._ops.activation import _threshold as threshold  # noqa: F401 - torch's Python name
# functional names: shape, indexing and creation [shape]
from .._ops.indexing import one_hot  # noqa: F401,E402
# functional names: sorting, scans, reductions and products [sorting]
from .._ops.reduction import normalize  # noqa: F401,E402
from .._ops.distance import cosine_similarity, pairwise_distance  # noqa: F401,E402
from .._ops.loss import (  # noqa: F401,E402
    cosine_embedding_loss, gaussian_nll_loss, hinge_embedding_loss, kl_div, margin_ranking_loss,
    poisson_nll_loss, soft_margin_loss, triplet_margin_loss,
)
# functional names: layers [nn]
# functional names: vision layers [vision]
from .._ops.conv import adaptive_max_pool2d as _adaptive_max_pool2d  # noqa: E402
from .._ops.resample import (fold as _fold, interpolate, pixel_shuffle,  # noqa: F401,E402
                             pixel_unshuffle, unfold as _unfold)
from .._ops.normalization import (group_norm as _group_norm,  # noqa: E402
                                  instance_norm as _instance_norm)
from .._ops.activation import glu as _glu  # noqa: E402


# -- torch's Python-level argument handling -------------------------------------------------
#
# Note [Functions torch writes in Python]
# Many of torch.nn.functional's functions are Python: they touch their arguments (``input.dim()``,
# ``input.size()``), normalise a few (``_pair``, ``stride=None`` -> ``[]``), raise a few errors of
# their own, then call a C op whose parser checks the rest.  The wrappers below run the same
# steps in the same order before the op layer's function (which checks values and computes), so a
# bad argument gets torch's error -- CPython's AttributeError, the Python-level ValueError or the
# C parser's TypeError naming the C op -- before NumPy sees it.  The C ops' signature strings are
# torch's Python bindings' (Note [Checking a C op called mid-function] in signature.py).

_MAX_POOL = {n: checker(f"max_pool{n}d(Tensor input, IntArrayRef[{n}] kernel_size, "
                        f"IntArrayRef[{n}] stride=[], IntArrayRef[{n}] padding=0, "
                        f"IntArrayRef[{n}] dilation=1, bool ceil_mode=False)") for n in (1, 2)}
_MAX_POOL_INDICES = {n: checker(f"max_pool{n}d_with_indices(Tensor input, IntArrayRef[{n}] "
                                f"kernel_size, IntArrayRef[{n}] stride=[], IntArrayRef[{n}] "
                                f"padding=0, IntArrayRef[{n}] dilation=1, bool ceil_mode=False)")
                     for n in (1, 2)}
_ADAPTIVE_MAX_POOL = {1: checker("adaptive_max_pool1d(Tensor input, IntArrayRef[1] output_size)"),
                      2: checker("adaptive_max_pool2d(Tensor input, IntArrayRef[2] output_size)")}
_ADAPTIVE_AVG_POOL2D = checker("adaptive_avg_pool2d(Tensor input, SymIntArrayRef[2] output_size)")
_COL2IM = checker("col2im(Tensor input, SymIntArrayRef[2] output_size, IntArrayRef[2] kernel_size, "
                  "IntArrayRef[2] dilation, IntArrayRef[2] padding, IntArrayRef[2] stride)")
_IM2COL = checker("im2col(Tensor input, IntArrayRef[2] kernel_size, IntArrayRef[2] dilation, "
                  "IntArrayRef[2] padding, IntArrayRef[2] stride)")
_BATCH_NORM = checker("batch_norm(Tensor input, Tensor? weight, Tensor? bias, "
                      "Tensor? running_mean, Tensor? running_var, bool training, "
                      "double momentum, double eps, bool cudnn_enabled)")
_INSTANCE_NORM = checker("instance_norm(Tensor input, Tensor? weight, Tensor? bias, "
                         "Tensor? running_mean, Tensor? running_var, bool use_input_stats, "
                         "double momentum, double eps, bool cudnn_enabled)")
_LAYER_NORM = checker("layer_norm(Tensor input, SymIntArrayRef normalized_shape, "
                      "Tensor? weight=None, Tensor? bias=None, double eps=1e-05, "
                      "bool cudnn_enable=True)")
_GROUP_NORM = checker("group_norm(Tensor input, int64_t num_groups, Tensor? weight=None, "
                      "Tensor? bias=None, double eps=1e-05, bool cudnn_enabled=True)")
_EMBEDDING = checker("embedding(Tensor weight, Tensor indices, SymInt padding_idx=-1, "
                     "bool scale_grad_by_freq=False, bool sparse=False)")
_EMBEDDING_RENORM = checker("embedding_renorm_(Tensor input, Tensor indices, double max_norm, "
                            "double norm_type)")
_GLU = checker("glu(Tensor input, int64_t dim=-1)")
_PAD = checker('pad(Tensor input, SymIntArrayRef pad, c10::string_view mode="constant", '
               "double? value=None)")
_DROPOUT = {name + tail: checker(f"{name}{tail}(Tensor input, double p, bool train)")
            for name in ("dropout", "feature_dropout", "alpha_dropout", "feature_alpha_dropout")
            for tail in ("", "_")}


def _pair(x: Any) -> Any:
    """torch's ``_pair``: an iterable as a tuple, anything else repeated twice."""
    import collections.abc

    if isinstance(x, collections.abc.Iterable):
        return tuple(x)
    return (x, x)


def _list_with_default(out_size: Any, defaults: Any) -> Any:
    """torch's ``_list_with_default``: ``None`` entries of an output size taken from the
    input's trailing sizes."""
    if isinstance(out_size, int):
        return out_size
    if len(defaults) <= len(out_size):
        raise ValueError(f"Input dimension should be at least {len(out_size) + 1}")
    return [v if v is not None else d for v, d in zip(out_size, defaults[-len(out_size):])]


def _verify_batch_size(size: Any) -> None:
    prod = size[0]
    for i in range(len(size) - 2):
        prod *= size[i + 2]
    if prod == 1:
        raise ValueError(f"Expected more than 1 value per channel when training, got input size "
                         f"{size}")


def _verify_spatial_size(size: Any) -> None:
    prod = 1
    for i in range(2, len(size)):
        prod *= size[i]
    if prod == 1:
        raise ValueError("Expected more than 1 spatial element when training, got input size "
                         f"{size}")


# Note [Adaptive pools' output sizes]
# torch checks an adaptive pool's output size before allocating the output: the average pool
# refuses a negative size with its own text and an element count past int64 with numel's
# ("numel: integer multiplication overflow"); the max pool, whose first step is allocating its
# outputs, gives the allocator's texts (negative dimension, storage size overflow).  A size
# that passes and still cannot be allocated is the CPU allocator's error, as in torch.  The
# sizes are those of the 2-d op (the 1-d pools run it on a height-1 image).
def _check_adaptive_output(kind: str, lead: tuple, size: tuple, dtype: Any) -> None:
    from .._ops.allocation import check_new_sizes, check_numel

    if not all(isinstance(s, (int, np.integer)) for s in size):
        return  # the op's own check reports it
    sizes = tuple(int(s) for s in lead) + tuple(int(s) for s in size)
    if kind == "avg":
        if any(s < 0 for s in size):
            raise RuntimeError("adaptive_avg_pool2d: elements of output_size must be greater "
                               f"than or equal to 0 but received {{{', '.join(map(str, size))}}}")
        check_numel(sizes)
    else:
        check_new_sizes(sizes, np.dtype(dtype))


def _allocating(call: Any, sizes: tuple, dtype: Any) -> Any:
    """``call()``, with NumPy's failure to allocate an output of ``sizes`` raised as torch's."""
    from .._ops.allocation import alloc_error

    try:
        return call()
    except MemoryError:
        nbytes = int(np.prod(sizes, dtype=object)) * np.dtype(dtype).itemsize
        raise alloc_error(nbytes) from None


def _adaptive_pool(kind: str, call: Any, input: Tensor, size: tuple, lead: tuple) -> Any:
    """Run the 2-d adaptive pool ``call`` after Note [Adaptive pools' output sizes]."""
    dtype = input._data.dtype
    well_shaped = input._data.ndim in (3, 4) and all(n for n in input._data.shape[-2:])
    if kind == "max" or well_shaped or any(int(s) < 0 for s in size
                                           if isinstance(s, (int, np.integer))):
        # (the average pool checks the input's dims between its two size checks)
        _check_adaptive_output(kind, lead, size, dtype)
    # a 1x1 average is a mean, whose own dtype check speaks
    if well_shaped and not (kind == "avg" and tuple(size) == (1, 1)):
        checks.not_implemented_for(f"adaptive_{kind}_pool2d", dtype, "biu")
    if not all(isinstance(s, (int, np.integer)) for s in size):
        return call()
    return _allocating(call, tuple(lead) + tuple(int(s) for s in size), dtype)


# Note [The private names in torch's TypeErrors]
# torch's F.max_pool2d, F.max_pool1d and the adaptive max pools are dispatchers (on
# ``return_indices``) that forward ``*args, **kwargs`` to Python functions named
# ``_max_pool2d``... , so a wrong call shape gets Python's TypeError naming those
# ("_max_pool2d() got an unexpected keyword argument 'bogus'").  Python names a function
# by its ``__qualname__`` in such errors: the wrappers below keep their public ``__name__``
# and take torch's private name as their qualified name.
def _python_name(private: str) -> Any:
    def rename(fn: Any) -> Any:
        fn.__qualname__ = private
        return fn
    return rename


@batchable  # Note [Batched values] in npgrad.func._batched
@_python_name("_max_pool2d")
def max_pool2d(input: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0,
               dilation: Any = 1, ceil_mode: bool = False, return_indices: bool = False) -> Any:
    """2-d max pooling over ``(N, C, H, W)`` or ``(C, H, W)`` (grad_fn
    ``MaxPool2DWithIndicesBackward0``); with ``return_indices`` the flat argmax positions too."""
    table = _MAX_POOL_INDICES if return_indices else _MAX_POOL
    table[2](input, kernel_size, [] if stride is None else stride, padding, dilation, ceil_mode)
    return _max_pool2d(input, kernel_size, stride, padding, dilation, ceil_mode, return_indices)


@batchable
@_python_name("_adaptive_max_pool2d")
def adaptive_max_pool2d(input: Tensor, output_size: Any, return_indices: bool = False) -> Any:
    """Max over ``output_size`` adaptive bins of the last two dims (indices too if asked)."""
    checks.python_method(input, "size", Tensor)
    output_size = _list_with_default(output_size, input.size())
    _ADAPTIVE_MAX_POOL[2](input, output_size)
    size = _pair(output_size)
    return _adaptive_pool("max", lambda: _adaptive_max_pool2d(input, output_size, return_indices),
                          input, size, input.shape[:-2])


@batchable
def adaptive_avg_pool2d(input: Tensor, output_size: Any) -> Tensor:
    """Average over ``output_size`` adaptive bins of the last two dims."""
    checks.python_method(input, "size", Tensor)
    output_size = _list_with_default(output_size, input.size())
    _ADAPTIVE_AVG_POOL2D(input, output_size)
    size = _pair(output_size)
    return _adaptive_pool(  # type: ignore[no-any-return]
        "avg", lambda: _adaptive_avg_pool2d(input, output_size), input, size, input.shape[:-2])


def fold(input: Tensor, output_size: Any, kernel_size: Any, dilation: Any = 1, padding: Any = 0,
         stride: Any = 1) -> Tensor:
    """Sum sliding local blocks back into a ``(N, C, *output_size)`` image (``col2im``)."""
    args = (_pair(output_size), _pair(kernel_size), _pair(dilation), _pair(padding),
            _pair(stride))
    _COL2IM(input, *args)
    _sliding_block_checks("col2im", input._data, *args)
    return _fold(input, *args)


def unfold(input: Tensor, kernel_size: Any, dilation: Any = 1, padding: Any = 0,
           stride: Any = 1) -> Tensor:
    """Sliding local blocks of a ``(N, C, H, W)`` image as columns (``im2col``)."""
    args = (_pair(kernel_size), _pair(dilation), _pair(padding), _pair(stride))
    _IM2COL(input, *args)
    _sliding_block_checks("im2col", input._data, None, *args)
    return _unfold(input, *args)


def _sliding_block_checks(kernel: str, x: np.ndarray, output_size: tuple | None,
                          kernel_size: tuple, dilation: tuple, padding: tuple,
                          stride: tuple) -> None:
    """The checks of torch's ``col2im`` / ``im2col`` kernels before they compute, in their
    order: two of each size, the sizes' signs (in each kernel's own order), the rank and no
    empty dim but the batch (im2col reads dims 1 and 2 first, an IndexError for fewer), then
    the dtype (integer loops neither has)."""
    sizes = {"output_size": output_size, "kernel_size": kernel_size, "dilation": dilation,
             "padding": padding, "stride": stride}
    for name, value in sizes.items():
        if value is not None and len(value) != 2:
            raise RuntimeError(f"It is expected {name} equals to 2, but got size {len(value)}")
    (kh, kw), (dh, dw), (ph, pw), (sh, sw) = kernel_size, dilation, padding, stride
    bad = {"kernel": kh <= 0 or kw <= 0, "dilation": dh <= 0 or dw <= 0,
           "padding": ph < 0 or pw < 0, "stride": sh <= 0 or sw <= 0}
    texts = {"kernel": f"kernel size should be greater than zero, but got kernel_height: {kh} "
                       f"kernel_width: {kw}",
             "dilation": f"dilation should be greater than zero, but got dilation_height: {dh} "
                         f"dilation_width: {dw}",
             "padding": f"padding should be non-negative, but got pad_height: {ph} "
                        f"pad_width: {pw}",
             "stride": f"stride should be greater than zero, but got stride_height: {sh} "
                       f"stride_width: {sw}"}
    order = (("kernel", "stride", "dilation", "padding") if kernel == "col2im"
             else ("kernel", "dilation", "padding", "stride"))
    for name in order:
        if bad[name]:
            raise RuntimeError(texts[name])
    dims, ndim = x.shape, x.ndim
    if kernel == "col2im":
        ok = (ndim == 2 and dims[0] != 0 and dims[1] != 0) or (
            ndim == 3 and dims[1] != 0 and dims[2] != 0)
    else:
        inner = checks.size_at(dims, 1) != 0 and checks.size_at(dims, 2) != 0
        ok = (ndim == 3 and dims[0] != 0 and inner) or (ndim == 4 and inner and dims[3] != 0)
    if not ok:
        shape = ", ".join(map(str, dims))
        if kernel == "col2im":
            raise RuntimeError("Expected 2D or 3D (batch mode) tensor for input with possibly 0 "
                               "batch size and non-zero dimensions for input, but got: "
                               f"[{shape}]")
        raise RuntimeError("Expected 3D or 4D (batch mode) tensor with possibly 0 batch size and "
                           f"other non-zero dimensions for input, but got: [{shape}]")
    checks.not_implemented_for(f"{kernel}_out_cpu", x.dtype, "iu")


@batchable
def batch_norm(input: Tensor, running_mean: Tensor | None, running_var: Tensor | None,
               weight: Tensor | None = None, bias: Tensor | None = None, training: bool = False,
               momentum: float = 0.1, eps: float = 1e-05) -> Tensor:
    """Batch normalization over dim 1 (grad_fn ``NativeBatchNormBackward0``)."""
    if training:
        checks.python_method(input, "size", Tensor)
        _verify_batch_size(input.size())
    if training and eps <= 0.0:
        raise ValueError(f"batch_norm eps must be positive during training, but got {eps}")
    elif eps < 0.0:
        raise ValueError(f"batch_norm eps must be non-negative, but got {eps}")
    _BATCH_NORM(input, weight, bias, running_mean, running_var, training, momentum, eps, False)
    return _batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps)


def instance_norm(input: Tensor, running_mean: Tensor | None = None,
                  running_var: Tensor | None = None, weight: Tensor | None = None,
                  bias: Tensor | None = None, use_input_stats: bool = True,
                  momentum: float = 0.1, eps: float = 1e-05) -> Tensor:
    """Normalize each channel of each sample over its spatial positions."""
    if use_input_stats:
        checks.python_method(input, "size", Tensor)
        _verify_spatial_size(input.size())
    _INSTANCE_NORM(input, weight, bias, running_mean, running_var, use_input_stats, momentum,
                   eps, False)
    return _instance_norm(input, running_mean, running_var, weight, bias, use_input_stats,
                          momentum, eps)


@batchable
def layer_norm(input: Tensor, normalized_shape: Any, weight: Tensor | None = None,
               bias: Tensor | None = None, eps: float = 1e-05) -> Tensor:
    """Normalize over the trailing ``normalized_shape`` dims (``NativeLayerNormBackward0``)."""
    _LAYER_NORM(input, normalized_shape, weight, bias, eps, False)
    # torch's CPU kernel: its mixed-type rule, its dtypes, then the parameters read as the
    # input's dtype
    d = input._data.dtype
    params = [t._data.dtype for t in (weight, bias) if t is not None]
    if not checks.check_mixed_dtypes(d, params):
        checks.not_implemented_for("LayerNormKernelImpl", d, "biu")
        checks.check_parameter_dtypes(d, params)
    return _layer_norm(input, normalized_shape, weight, bias, eps)


@batchable
def group_norm(input: Tensor, num_groups: int, weight: Tensor | None = None,
               bias: Tensor | None = None, eps: float = 1e-05) -> Tensor:
    """Normalize each sample over groups of ``C // num_groups`` channels."""
    checks.python_method(input, "dim", Tensor)
    if input.dim() < 2:
        raise RuntimeError("Expected at least 2 dimensions for input tensor but received "
                           f"{input.dim()}")
    _verify_batch_size([input.size(0) * input.size(1) // num_groups, num_groups]
                       + list(input.size()[2:]))
    _GROUP_NORM(input, num_groups, weight, bias, eps, False)
    return _group_norm(input, num_groups, weight, bias, eps)


@batchable
def embedding(input: Tensor, weight: Tensor, padding_idx: int | None = None,
              max_norm: float | None = None, norm_type: float = 2.0,
              scale_grad_by_freq: bool = False, sparse: bool = False) -> Tensor:
    """Rows of ``weight`` picked by the indices in ``input`` (grad_fn ``EmbeddingBackward0``)."""
    if padding_idx is not None:
        if padding_idx > 0:
            checks.python_method(weight, "size", Tensor, 0)
            assert padding_idx < weight.size(0), "Padding_idx must be within num_embeddings"
        elif padding_idx < 0:
            checks.python_method(weight, "size", Tensor, 0)
            assert padding_idx >= -weight.size(0), "Padding_idx must be within num_embeddings"
            padding_idx = weight.size(0) + padding_idx
    if max_norm is not None:
        checks.python_method(input, "contiguous", Tensor)
        checks.python_method(weight, "detach", Tensor)
        _EMBEDDING_RENORM(weight, input, max_norm, norm_type)
    _EMBEDDING(weight, input, -1 if padding_idx is None else padding_idx, scale_grad_by_freq,
               sparse)
    return _embedding(input, weight, padding_idx, max_norm, norm_type, scale_grad_by_freq,
                      sparse)


@batchable
def glu(input: Tensor, dim: int = -1) -> Tensor:
    """Gated linear unit: the first half of ``dim`` times sigmoid of the second half."""
    checks.python_method(input, "dim", Tensor)
    if input.dim() == 0:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    _GLU(input, dim)
    return _glu(input, dim)


def sigmoid(input: Tensor) -> Tensor:
    """torch's Python ``F.sigmoid``: the method (Note [torch's Python touching a non-Tensor]).

    >>> import npgrad
    >>> npgrad.nn.functional.sigmoid(npgrad.tensor([0.]))
    tensor([0.5000])
    """
    return input.sigmoid()


def tanh(input: Tensor) -> Tensor:
    """torch's Python ``F.tanh``: the method.

    >>> import npgrad
    >>> npgrad.nn.functional.tanh(npgrad.tensor([0.]))
    tensor([0.])
    """
    return input.tanh()


def relu(input: Tensor, inplace: bool = False) -> Tensor:
    """max(input, 0) (grad_fn ``ReluBackward0``)."""
    return relu_(input) if inplace else _relu(input)


def softmax(input: Tensor, dim: int | None = None, _stacklevel: int = 3,
            dtype: Any = None) -> Tensor:
    dim = _legacy_dim(input, dim)
    checks.python_method(input, "softmax", Tensor, dim)  # torch calls input.softmax(dim)
    return _softmax(input, dim, dtype)


def log_softmax(input: Tensor, dim: int | None = None, _stacklevel: int = 3,
                dtype: Any = None) -> Tensor:
    dim = _legacy_dim(input, dim)
    checks.python_method(input, "log_softmax", Tensor, dim)  # torch: input.log_softmax(dim)
    return _log_softmax(input, dim, dtype)


def _legacy_dim(input: Tensor, dim: int | None) -> int:
    if dim is not None:
        return dim
    ndim = input.dim()  # torch reads it before warning
    import warnings

    warnings.warn("Implicit dimension choice for softmax has been deprecated. Change the call "
                  "to include dim=X as an argument.", UserWarning, stacklevel=3)
    return 0 if ndim in (0, 1, 3) else 1


# -- linear and convolution ---------------------------------------------------------------

@signature("linear(Tensor input, Tensor weight, Tensor? bias=None, *, Tensor out=None)")
def linear(input: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """``input @ weight.T + bias`` with torch's graph: AddmmBackward0 for a matrix input.

    >>> import npgrad as torch
    >>> torch.nn.functional.linear(torch.ones(1, 2), torch.ones(3, 2), torch.zeros(3))
    tensor([[2., 2., 2.]])
    """
    from .._ops.matmul import addmm, matmul
    from .._ops.shape import t, view

    x = input._data
    if bias is None:
        return matmul(input, t(weight))
    if x.ndim == 2:
        return addmm(bias, input, t(weight))
    if x.ndim == 1 or (x.ndim > 2 and input.is_contiguous()):
        flat = view(input, (-1, x.shape[-1]))
        out = addmm(bias, flat, t(weight))
        return view(out, x.shape[:-1] + (weight._data.shape[0],))
    return matmul(input, t(weight)) + bias


@signature("conv1d(Tensor input, Tensor weight, Tensor? bias=None, SymIntArrayRef[1] stride=1, "
           "SymIntArrayRef[1] padding=0, SymIntArrayRef[1] dilation=1, SymInt groups=1)",
           "conv1d(Tensor input, Tensor weight, Tensor? bias=None, SymIntArrayRef[1] stride=1, "
           'c10::string_view padding="valid", SymIntArrayRef[1] dilation=1, SymInt groups=1)')
def conv1d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride: Any = 1,
           padding: Any = 0, dilation: Any = 1, groups: int = 1) -> Tensor:
    """1-d convolution over ``(N, C, L)`` or ``(C, L)`` (grad_fn ``ConvolutionBackward0``)."""
    return conv_nd(input, weight, bias, stride, padding, dilation, groups, 1)


@signature("conv2d(Tensor input, Tensor weight, Tensor? bias=None, SymIntArrayRef[2] stride=1, "
           "SymIntArrayRef[2] padding=0, SymIntArrayRef[2] dilation=1, SymInt groups=1)",
           "conv2d(Tensor input, Tensor weight, Tensor? bias=None, SymIntArrayRef[2] stride=1, "
           'c10::string_view padding="valid", SymIntArrayRef[2] dilation=1, SymInt groups=1)')
def conv2d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride: Any = 1,
           padding: Any = 0, dilation: Any = 1, groups: int = 1) -> Tensor:
    """2-d convolution over ``(N, C, H, W)`` or ``(C, H, W)`` (grad_fn ``ConvolutionBackward0``)."""
    return conv_nd(input, weight, bias, stride, padding, dilation, groups, 2)


@_python_name("_max_pool1d")
def max_pool1d(input: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0,
               dilation: Any = 1, ceil_mode: bool = False, return_indices: bool = False) -> Any:
    """1-d max pooling over ``(N, C, L)`` or ``(C, L)``: ``max_pool2d`` of a height-1 image."""
    from .._ops.shape import squeeze, unsqueeze

    table = _MAX_POOL_INDICES if return_indices else _MAX_POOL
    table[1](input, kernel_size, [] if stride is None else stride, padding, dilation, ceil_mode)
    shape = input._data.shape
    ndim = len(shape)
    if ndim not in (2, 3) and return_indices:  # torch's rank check, before any other
        raise RuntimeError(f"Expected 2 to 3 dimensions, but got {ndim}-dimensional tensor "
                           "for argument #1 'self' (while checking arguments for max_pool1d)")
    if not return_indices and (ndim not in (2, 3) or 0 in shape[-2:]):
        raise RuntimeError("max_pool1d: Expected 2D or 3D (batch mode) tensor with optional 0 "
                           "dim batch size for input, but got:["
                           + ", ".join(map(str, input._data.shape)) + "]")
    if not return_indices and not input.requires_grad:
        # torch runs its own 1-d kernel here (its other paths are max_pool2d's), which has
        # no integer or bool loops
        checks.not_implemented_for("max_pool1d_impl", input._data.dtype, "biu")

    def one(v: Any) -> Any:
        v = v[0] if isinstance(v, (list, tuple)) else v
        return (1, v)

    out = _max_pool2d(unsqueeze(input, -2), one(kernel_size),
                     None if stride is None else one(stride), (0, one(padding)[1]),
                     one(dilation), ceil_mode, return_indices)
    if return_indices:
        return squeeze(out[0], -2), squeeze(out[1], -2)
    return squeeze(out, -2)


# -- dropout ---------------------------------------------------------------------------

def _check_dropout_p(p: float) -> None:
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")


def _dropout_noise(shape: tuple, p: float, dtype: np.dtype) -> np.ndarray:
    """torch's dropout noise: ``empty(shape, dtype).bernoulli_(1 - p)`` from the default
    generator (one double uniform per element, kept where it is below ``1 - p``)."""
    from .. import _sampling
    from .._random import default_generator

    keep = _sampling.bernoulli_scalar(default_generator, math.prod(shape), 1.0 - p)
    return keep.reshape(shape).astype(dtype)


def dropout(input: Tensor, p: float = 0.5, training: bool = True,
            inplace: bool = False) -> Tensor:
    """Zero each element with probability ``p``, scale the rest by 1/(1-p); the mask is
    torch's (``bernoulli_(1 - p)`` on the default generator, see ``_dropout_noise``)."""
    from .._ops.inplace import mul_
    from .._ops.pointwise import mul

    _check_dropout_p(p)
    _DROPOUT["dropout_" if inplace else "dropout"](input, p, training)
    if not training or p == 0.0 or input._data.size == 0:
        return input
    x = input._data
    if p == 1.0:
        mask = np.zeros((), dtype=x.dtype)
    else:
        noise = _dropout_noise(x.shape, p, x.dtype)
        _check_noise_divisible(x.dtype)
        mask = noise / np.asarray(1.0 - p, dtype=x.dtype)
    mask_t = wrap(mask, 0)
    return mul_(input, mask_t) if inplace else mul(input, mask_t)


def _check_noise_divisible(d: np.dtype) -> None:
    """torch divides the drawn noise (of the input's dtype) in place by ``1 - p``: a float
    result that an integer or bool noise tensor cannot hold."""
    if not checks.is_floating(d) and d.kind != "c":
        checks.check_castable(_dtype.get_default_dtype().np_dtype, d)





# -- misc --------------------------------------------------------------------------------

@batchable
def pad(input: Tensor, pad: Any, mode: str = "constant", value: float | None = None) -> Tensor:
    """Pad the last dims (``pad`` = (left, right, top, bottom, ...)): 'constant', 'reflect',
    'replicate' or 'circular' (npgrad/_ops/resample.py)."""
    _PAD(input, pad, mode, value)
    if mode in ("reflect", "replicate"):  # [vision]
        from .._ops.resample import pad_nonconstant

        return pad_nonconstant(input, pad, mode)
    if mode == "constant":  # [vision]
        from .._ops.resample import constant_pad_nd

        return constant_pad_nd(input, pad, 0.0 if value is None else value)
    if mode == "circular":  # [vision]
        from .._ops.resample import pad_circular

        return pad_circular(input, pad)
    raise NotImplementedError(f"Unrecognised padding mode {mode}")


# -- attention (the layers' group [nn]) ------------------------------------------------------
#
# Note [Attention as a composite]
# scaled_dot_product_attention and multi_head_attention_forward are written with
# matmul, softmax, masked additions and views, following torch's reference
# ("math") implementation step by step, so values and gradients are torch's and
# tangents come from the op layer.  Two details of torch are kept:
# * SDPA uses a *safe* softmax: a query row whose keys are all masked out gives
#   zeros (and zero gradients), not NaN.  npgrad replaces such rows by zeros
#   before the softmax and zeroes them after it.
# * multi_head_attention_forward with ``need_weights=True`` uses the plain
#   softmax (as torch's does), so there a fully masked row gives NaN.
# The outputs' grad_fn names are those of the composing ops, not torch's fused
# kernels'.

def _attn_float_bias(mask: Tensor, dtype: Any) -> Tensor:
    """A bool mask (True = masked out) as an additive bias of 0 and -inf."""
    bias = np.where(mask._data, -np.inf, 0.0).astype(dtype.np_dtype)
    return wrap(bias, 0)


def _safe_softmax(scores: Tensor) -> Tensor:
    from .._ops.pointwise import where
    from .._ops.softmax import softmax as _sm

    dead = np.all(np.isneginf(scores._data), axis=-1, keepdims=True)
    if not dead.any():
        return _sm(scores, -1)
    dead_t = wrap(dead, 0)
    zero = wrap(np.zeros((), dtype=scores._data.dtype), 0)
    return where(dead_t, zero, _sm(where(dead_t, zero, scores), -1))


@signature("scaled_dot_product_attention(Tensor query, Tensor key, Tensor value, "
           "Tensor? attn_mask=None, double dropout_p=0.0, bool is_causal=False, *, "
           "double? scale=None, bool enable_gqa=False)")
def scaled_dot_product_attention(query: Tensor, key: Tensor, value: Tensor,
                                 attn_mask: Tensor | None = None, dropout_p: float = 0.0,
                                 is_causal: bool = False, scale: float | None = None,
                                 enable_gqa: bool = False) -> Tensor:
    """``softmax(q k^T * scale + mask) v`` over the last two dims (Note [Attention as a composite]).

    A bool ``attn_mask`` marks the positions that *may* attend (True = keep); a
    float one is added to the scores.  ``is_causal`` keeps the lower triangle.

    >>> import npgrad as torch
    >>> q = torch.ones(1, 2, 4)
    >>> torch.nn.functional.scaled_dot_product_attention(q, q, q).shape
    torch.Size([1, 2, 4])
    """
    import math

    from .._ops.matmul import matmul
    from .._ops.indexing import index_select
    from .._ops.shape import transpose

    q_, k_, v_ = query._data, key._data, value._data
    if q_.ndim < 2 or k_.ndim < 2 or v_.ndim < 2:
        raise RuntimeError("Expected query, key, and value to all be  at least 2 dimensional, but "
                           f"got query.dim: {q_.ndim} key.dim: {k_.ndim} and value.dim: "
                           f"{v_.ndim} instead.")
    if not (query.dtype == key.dtype == value.dtype):
        raise RuntimeError("Expected query, key, and value to have the same dtype, but got "
                           f"query.dtype: {query.dtype.cpp_name} key.dtype: {key.dtype.cpp_name} "
                           f"and value.dtype: {value.dtype.cpp_name} instead.")
    if attn_mask is not None and not (attn_mask.dtype == query.dtype
                                      or attn_mask.dtype.name == "bool"
                                      or attn_mask.dtype.is_floating_point):
        raise RuntimeError("Expected attn_mask dtype to be bool or float or to match query dtype, "
                           f"but got attn_mask.dtype: {attn_mask.dtype.cpp_name} and  query.dtype: "
                           f"{query.dtype.cpp_name} instead.")
    if is_causal and attn_mask is not None:
        raise RuntimeError("_scaled_dot_product_attention: Explicit attn_mask should not be set "
                           "when is_causal=True")
    if dropout_p < 0.0 or dropout_p > 1.0:
        raise RuntimeError(f"dropout probability has to be between 0 and 1, but got {dropout_p}")
    if enable_gqa and q_.ndim >= 3 and k_.shape[-3] != q_.shape[-3]:
        # grouped-query attention: each key/value head serves a group of query heads
        groups = q_.shape[-3] // k_.shape[-3]
        idx = wrap(np.repeat(np.arange(k_.shape[-3]), groups), 0)
        key = index_select(key, -3, idx)
        value = index_select(value, -3, idx)
        k_, v_ = key._data, value._data
    batch = int(np.prod(q_.shape[:-2], dtype=np.int64))
    if k_.shape[-1] != q_.shape[-1]:
        raise RuntimeError("Expected size for first two dimensions of batch2 tensor to be: "
                           f"[{batch}, {q_.shape[-1]}] but got: [{batch}, {k_.shape[-1]}].")
    if v_.shape[-2] != k_.shape[-2]:
        raise RuntimeError("Expected size for first two dimensions of batch2 tensor to be: "
                           f"[{batch}, {k_.shape[-2]}] but got: [{batch}, {v_.shape[-2]}].")
    L, S = q_.shape[-2], k_.shape[-2]
    scale_factor = 1.0 / math.sqrt(q_.shape[-1]) if scale is None else scale
    scores = matmul(query, transpose(key, -2, -1)) * scale_factor
    if is_causal:
        keep = np.tril(np.ones((L, S), dtype=bool))
        scores = scores + wrap(np.where(keep, 0.0, -np.inf).astype(q_.dtype), 0)
    if attn_mask is not None:
        if attn_mask.dtype.name == "bool":
            keep = attn_mask._data
            scores = scores + wrap(np.where(keep, 0.0, -np.inf).astype(q_.dtype), 0)
        else:
            scores = scores + attn_mask
    weights = _safe_softmax(scores)
    if dropout_p > 0.0:
        weights = dropout(weights, dropout_p, True)
    return matmul(weights, value)


def _none_or_dtype(input: Tensor | None) -> Any:
    if input is None:
        return None
    if isinstance(input, Tensor):
        return input.dtype
    raise RuntimeError("input to _none_or_dtype() must be None or torch.Tensor")


def _canonical_mask(mask: Tensor | None, mask_name: str, other_type: Any, other_name: str,
                    target_type: Any, check_other: bool = True) -> Tensor | None:
    """A bool mask (True = masked out) becomes a float mask of 0 and -inf; floats pass through."""
    import warnings

    if mask is None:
        return None
    is_float = mask.dtype.is_floating_point
    if mask.dtype.name != "bool" and not is_float:
        raise AssertionError(f"only bool and floating types of {mask_name} are supported")
    if check_other and other_type is not None and mask.dtype != other_type:
        warnings.warn(f"Support for mismatched {mask_name} and {other_name} is deprecated. Use "
                      "same type for both instead.", stacklevel=2)
    if not is_float:
        mask = _attn_float_bias(mask, target_type)
    return mask


def _mha_shape_check(query: Tensor, key: Tensor, value: Tensor, key_padding_mask: Any,
                     attn_mask: Any, num_heads: int) -> bool:
    if query.dim() == 3:
        if key.dim() != 3 or value.dim() != 3:
            raise AssertionError("For batched (3-D) `query`, expected `key` and `value` to be 3-D "
                                 f"but found {key.dim()}-D and {value.dim()}-D tensors "
                                 "respectively")
        if key_padding_mask is not None and key_padding_mask.dim() != 2:
            raise AssertionError("For batched (3-D) `query`, expected `key_padding_mask` to be "
                                 f"`None` or 2-D but found {key_padding_mask.dim()}-D tensor "
                                 "instead")
        if attn_mask is not None and attn_mask.dim() not in (2, 3):
            raise AssertionError("For batched (3-D) `query`, expected `attn_mask` to be `None`, "
                                 f"2-D or 3-D but found {attn_mask.dim()}-D tensor instead")
        return True
    if query.dim() == 2:
        if key.dim() != 2 or value.dim() != 2:
            raise AssertionError("For unbatched (2-D) `query`, expected `key` and `value` to be "
                                 f"2-D but found {key.dim()}-D and {value.dim()}-D tensors "
                                 "respectively")
        if key_padding_mask is not None and key_padding_mask.dim() != 1:
            raise AssertionError("For unbatched (2-D) `query`, expected `key_padding_mask` to be "
                                 f"`None` or 1-D but found {key_padding_mask.dim()}-D tensor "
                                 "instead")
        if attn_mask is not None:
            if attn_mask.dim() not in (2, 3):
                raise AssertionError("For unbatched (2-D) `query`, expected `attn_mask` to be "
                                     f"`None`, 2-D or 3-D but found {attn_mask.dim()}-D tensor "
                                     "instead")
            if attn_mask.dim() == 3:
                expected_shape = (num_heads, query.shape[0], key.shape[0])
                if attn_mask.shape != expected_shape:
                    raise AssertionError(f"Expected `attn_mask` shape to be {expected_shape} but "
                                         f"got {attn_mask.shape}")
        return False
    raise AssertionError("query should be unbatched 2D or batched 3D tensor but received "
                         f"{query.dim()}-D query tensor")


def _in_projection_packed(q: Tensor, k: Tensor, v: Tensor, w: Tensor,
                          b: Tensor | None = None) -> list:
    """q, k, v projected by the stacked ``(3E, E)`` weight (one linear for self-attention)."""
    from .._ops.shape import chunk, split

    E = q.size(-1)
    if k is v:
        if q is k:
            return list(chunk(linear(q, w, b), 3, -1))
        w_q, w_kv = split(w, [E, E * 2])
        b_q, b_kv = (None, None) if b is None else split(b, [E, E * 2])
        return [linear(q, w_q, b_q)] + list(chunk(linear(k, w_kv, b_kv), 2, -1))
    w_q, w_k, w_v = chunk(w, 3)
    b_q, b_k, b_v = (None, None, None) if b is None else chunk(b, 3)
    return [linear(q, w_q, b_q), linear(k, w_k, b_k), linear(v, w_v, b_v)]


def _in_projection(q: Tensor, k: Tensor, v: Tensor, w_q: Tensor, w_k: Tensor, w_v: Tensor,
                   b_q: Tensor | None = None, b_k: Tensor | None = None,
                   b_v: Tensor | None = None) -> tuple:
    Eq, Ek, Ev = q.size(-1), k.size(-1), v.size(-1)
    for name, w, shape in (("query", w_q, (Eq, Eq)), ("key", w_k, (Eq, Ek)),
                           ("value", w_v, (Eq, Ev))):
        if w.shape != shape:
            raise AssertionError(f"expecting {name} weights shape of {shape}, but got {w.shape}")
    for name, b_ in (("query", b_q), ("key", b_k), ("value", b_v)):
        if b_ is not None and b_.shape != (Eq,):
            raise AssertionError(f"expecting {name} bias shape of {(Eq,)}, but got {b_.shape}")
    return linear(q, w_q, b_q), linear(k, w_k, b_k), linear(v, w_v, b_v)


def _heads_into_batch(x: Tensor, static: Tensor | None, static_name: str, batch_heads: int,
                      head_dim: int) -> Tensor:
    """Keys or values ``(S, N, E)`` as ``(N * H, S, head_dim)``; a ``static_k``/``static_v``
    given by the caller is already in that layout and only checked."""
    from .._ops.shape import reshape, transpose

    if static is None:
        return transpose(reshape(x, (x.shape[0], batch_heads, head_dim)), 0, 1)
    if static.size(0) != batch_heads:
        raise AssertionError(f"expecting {static_name}.size(0) of {batch_heads}, but got "
                             f"{static.size(0)}")
    if static.size(2) != head_dim:
        raise AssertionError(f"expecting {static_name}.size(2) of {head_dim}, but got "
                             f"{static.size(2)}")
    return static


def multi_head_attention_forward(
        query: Tensor, key: Tensor, value: Tensor, embed_dim_to_check: int, num_heads: int,
        in_proj_weight: Tensor | None, in_proj_bias: Tensor | None, bias_k: Tensor | None,
        bias_v: Tensor | None, add_zero_attn: bool, dropout_p: float, out_proj_weight: Tensor,
        out_proj_bias: Tensor | None, training: bool = True,
        key_padding_mask: Tensor | None = None, need_weights: bool = True,
        attn_mask: Tensor | None = None, use_separate_proj_weight: bool = False,
        q_proj_weight: Tensor | None = None, k_proj_weight: Tensor | None = None,
        v_proj_weight: Tensor | None = None, static_k: Tensor | None = None,
        static_v: Tensor | None = None, average_attn_weights: bool = True,
        is_causal: bool = False) -> tuple:
    """Multi-head attention over ``(L, N, E)`` (or unbatched ``(L, E)``) inputs, torch's steps.

    Returns ``(attn_output, attn_weights)``; the weights are None unless
    ``need_weights`` (then averaged over heads when ``average_attn_weights``).
    Bool masks mark positions that may *not* be attended (True = masked out).
    """
    import math

    from .._ops.matmul import matmul
    from .._ops.shape import cat, chunk, permute, repeat, reshape, squeeze, transpose, \
        unsqueeze, view
    from .._creation import zeros

    is_batched = _mha_shape_check(query, key, value, key_padding_mask, attn_mask, num_heads)
    if not is_batched:
        query, key, value = unsqueeze(query, 1), unsqueeze(key, 1), unsqueeze(value, 1)
        if key_padding_mask is not None:
            key_padding_mask = unsqueeze(key_padding_mask, 0)
    tgt_len, bsz, embed_dim = query.shape
    src_len = key.shape[0]
    key_padding_mask = _canonical_mask(key_padding_mask, "key_padding_mask",
                                       _none_or_dtype(attn_mask), "attn_mask", query.dtype)
    if is_causal and attn_mask is None:
        raise RuntimeError("Need attn_mask if specifying the is_causal hint. You may use the "
                           "Transformer module method `generate_square_subsequent_mask` to "
                           "create this mask.")
    if is_causal and key_padding_mask is None and not need_weights:
        attn_mask = None  # SDPA builds the causal mask itself
    else:
        attn_mask = _canonical_mask(attn_mask, "attn_mask", None, "", query.dtype,
                                    check_other=False)
        if key_padding_mask is not None:
            is_causal = False
    if embed_dim != embed_dim_to_check:
        raise AssertionError(f"was expecting embedding dimension of {embed_dim_to_check}, but "
                             f"got {embed_dim}")
    head_dim = embed_dim // num_heads
    if head_dim * num_heads != embed_dim:
        raise AssertionError(f"embed_dim {embed_dim} not divisible by num_heads {num_heads}")
    if use_separate_proj_weight:
        if key.shape[:2] != value.shape[:2]:
            raise AssertionError(f"key's sequence and batch dims {key.shape[:2]} do not match "
                                 f"value's {value.shape[:2]}")
    elif key.shape != value.shape:
        raise AssertionError(f"key shape {key.shape} does not match value shape {value.shape}")

    if not use_separate_proj_weight:
        if in_proj_weight is None:
            raise AssertionError("use_separate_proj_weight is False but in_proj_weight is None")
        q, k, v = _in_projection_packed(query, key, value, in_proj_weight, in_proj_bias)
    else:
        for name, w in (("q", q_proj_weight), ("k", k_proj_weight), ("v", v_proj_weight)):
            if w is None:
                raise AssertionError(f"use_separate_proj_weight is True but {name}_proj_weight "
                                     "is None")
        b_q, b_k, b_v = (None, None, None) if in_proj_bias is None else chunk(in_proj_bias, 3)
        q, k, v = _in_projection(query, key, value, q_proj_weight, k_proj_weight,
                                 v_proj_weight, b_q, b_k, b_v)

    if attn_mask is not None:
        if attn_mask.dim() == 2:
            correct_2d_size = (tgt_len, src_len)
            if attn_mask.shape != correct_2d_size:
                raise RuntimeError(f"The shape of the 2D attn_mask is {attn_mask.shape}, but "
                                   f"should be {correct_2d_size}.")
            attn_mask = unsqueeze(attn_mask, 0)
        elif attn_mask.dim() == 3:
            correct_3d_size = (bsz * num_heads, tgt_len, src_len)
            if attn_mask.shape != correct_3d_size:
                raise RuntimeError(f"The shape of the 3D attn_mask is {attn_mask.shape}, but "
                                   f"should be {correct_3d_size}.")
        else:
            raise RuntimeError(f"attn_mask's dimension {attn_mask.dim()} is not supported")

    if bias_k is not None and bias_v is not None:
        if static_k is not None:
            raise AssertionError("bias cannot be added to static key.")
        if static_v is not None:
            raise AssertionError("bias cannot be added to static value.")
        k = cat([k, repeat(bias_k, 1, bsz, 1)])
        v = cat([v, repeat(bias_v, 1, bsz, 1)])
        if attn_mask is not None:
            attn_mask = pad(attn_mask, (0, 1))
        if key_padding_mask is not None:
            key_padding_mask = pad(key_padding_mask, (0, 1))
    elif bias_k is not None:
        raise AssertionError("bias_k is set but bias_v is None")
    elif bias_v is not None:
        raise AssertionError("bias_v is set but bias_k is None")

    # heads into the batch dim: (L, N, E) -> (N * H, L, head_dim)
    q = transpose(reshape(q, (tgt_len, bsz * num_heads, head_dim)), 0, 1)
    k = _heads_into_batch(k, static_k, "static_k", bsz * num_heads, head_dim)
    v = _heads_into_batch(v, static_v, "static_v", bsz * num_heads, head_dim)
    if add_zero_attn:
        zero_attn_shape = (bsz * num_heads, 1, head_dim)
        k = cat([k, zeros(zero_attn_shape, dtype=k.dtype)], 1)
        v = cat([v, zeros(zero_attn_shape, dtype=v.dtype)], 1)
        if attn_mask is not None:
            attn_mask = pad(attn_mask, (0, 1))
        if key_padding_mask is not None:
            key_padding_mask = pad(key_padding_mask, (0, 1))
    src_len = k.size(1)
    if key_padding_mask is not None:
        if key_padding_mask.shape[0] != bsz:
            raise AssertionError(f"Expected key_padded_mask.shape[0] to be {bsz}, but got "
                                 f"{key_padding_mask.shape[0]}")
        if key_padding_mask.shape[1] != src_len:
            raise AssertionError(f"Expected key_padded_mask.shape[1] to be {src_len}, but got "
                                 f"{key_padding_mask.shape[1]}")
        key_padding_mask = reshape(view(key_padding_mask, (bsz, 1, 1, src_len))
                                   .expand(-1, num_heads, -1, -1), (bsz * num_heads, 1, src_len))
        attn_mask = key_padding_mask if attn_mask is None else attn_mask + key_padding_mask
    if not training:
        dropout_p = 0.0

    if need_weights:
        E = q.shape[-1]
        q_scaled = q * math.sqrt(1.0 / float(E))
        if is_causal and attn_mask is None:
            raise AssertionError("FIXME: is_causal not implemented for need_weights")
        scores = matmul(q_scaled, transpose(k, -2, -1))
        if attn_mask is not None:
            scores = attn_mask + scores
        weights = softmax(scores, dim=-1)
        if dropout_p > 0.0:
            weights = dropout(weights, p=dropout_p)
        attn_output = matmul(weights, v)
        attn_output = reshape(transpose(attn_output, 0, 1), (tgt_len * bsz, embed_dim))
        attn_output = linear(attn_output, out_proj_weight, out_proj_bias)
        attn_output = view(attn_output, (tgt_len, bsz, attn_output.size(1)))
        weights = view(weights, (bsz, num_heads, tgt_len, src_len))
        if average_attn_weights:
            weights = weights.mean(dim=1)
        if not is_batched:
            attn_output = squeeze(attn_output, 1)
            weights = squeeze(weights, 0)
        return attn_output, weights
    if attn_mask is not None:
        if attn_mask.size(0) == 1 and attn_mask.dim() == 3:
            attn_mask = unsqueeze(attn_mask, 0)
        else:
            attn_mask = view(attn_mask, (bsz, num_heads, -1, src_len))
    q = view(q, (bsz, num_heads, tgt_len, head_dim))
    k = view(k, (bsz, num_heads, src_len, head_dim))
    v = view(v, (bsz, num_heads, src_len, head_dim))
    attn_output = scaled_dot_product_attention(q, k, v, attn_mask, dropout_p, is_causal)
    attn_output = reshape(permute(attn_output, (2, 0, 1, 3)), (bsz * tgt_len, embed_dim))
    attn_output = linear(attn_output, out_proj_weight, out_proj_bias)
    attn_output = view(attn_output, (tgt_len, bsz, attn_output.size(1)))
    if not is_batched:
        attn_output = squeeze(attn_output, 1)
    return attn_output, None


# -- vision layers (the layers' group [vision]) ------------------------------------------

@signature("conv_transpose1d(Tensor input, Tensor weight, Tensor? bias=None, "
           "SymIntArrayRef[1] stride=1, SymIntArrayRef[1] padding=0, "
           "SymIntArrayRef[1] output_padding=0, SymInt groups=1, SymIntArrayRef[1] dilation=1)")
def conv_transpose1d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride: Any = 1,
                     padding: Any = 0, output_padding: Any = 0, groups: int = 1,
                     dilation: Any = 1) -> Tensor:
    """1-d transposed convolution, weight ``(C_in, C_out/groups, k)`` (``ConvolutionBackward0``)."""
    from .._ops.conv import conv_transpose_nd

    return conv_transpose_nd(input, weight, bias, stride, padding, output_padding, groups,
                             dilation, 1)


@signature("conv_transpose2d(Tensor input, Tensor weight, Tensor? bias=None, "
           "SymIntArrayRef[2] stride=1, SymIntArrayRef[2] padding=0, "
           "SymIntArrayRef[2] output_padding=0, SymInt groups=1, SymIntArrayRef[2] dilation=1)")
def conv_transpose2d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride: Any = 1,
                     padding: Any = 0, output_padding: Any = 0, groups: int = 1,
                     dilation: Any = 1) -> Tensor:
    """2-d transposed convolution, weight ``(C_in, C_out/groups, kh, kw)``.

    >>> import npgrad as torch
    >>> x = torch.ones(1, 1, 2, 2)
    >>> torch.nn.functional.conv_transpose2d(x, torch.ones(1, 1, 2, 2), stride=2).shape
    torch.Size([1, 1, 4, 4])
    """
    from .._ops.conv import conv_transpose_nd

    return conv_transpose_nd(input, weight, bias, stride, padding, output_padding, groups,
                             dilation, 2)


def _check_1d(input: Tensor, name: str) -> None:
    nd = input._data.ndim
    if nd not in (2, 3):
        raise RuntimeError(f"Expected 2 to 3 dimensions, but got {nd}-dimensional tensor for "
                           f"argument #1 'self' (while checking arguments for {name})")


def _first(v: Any) -> Any:
    return v[0] if isinstance(v, (list, tuple)) else v


@signature("avg_pool1d(Tensor input, IntArrayRef[1] kernel_size, IntArrayRef[1] stride=None, "
           "IntArrayRef[1] padding=0, bool ceil_mode=False, bool count_include_pad=True, *, "
           "Tensor out=None)")
def avg_pool1d(input: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0,
               ceil_mode: bool = False, count_include_pad: bool = True) -> Tensor:
    """1-d average pooling over ``(N, C, L)``: ``avg_pool2d`` of a height-1 image, as torch."""
    from .._ops.shape import squeeze, unsqueeze

    _check_1d(input, "avg_pool1d")
    st = None if stride is None or (isinstance(stride, (list, tuple)) and not stride) else \
        (1, _first(stride))
    out = avg_pool2d(unsqueeze(input, -2), (1, _first(kernel_size)), st, (0, _first(padding)),
                     ceil_mode, count_include_pad)
    return squeeze(out, -2)


@signature("adaptive_avg_pool1d(Tensor input, IntArrayRef[1] output_size, *, Tensor out=None)")
def adaptive_avg_pool1d(input: Tensor, output_size: Any) -> Tensor:
    """Average over ``output_size`` adaptive bins of ``(N, C, L)``."""
    from .._ops.shape import squeeze, unsqueeze

    _check_1d(input, "adaptive_avg_pool1d")
    image, size = unsqueeze(input, -2), (1, _first(output_size))
    return squeeze(_adaptive_pool("avg", lambda: _adaptive_avg_pool2d(image, size), image, size,
                                  image.shape[:-2]), -2)


@_python_name("_adaptive_max_pool1d")
def adaptive_max_pool1d(input: Tensor, output_size: Any, return_indices: bool = False) -> Any:
    """Max over ``output_size`` adaptive bins of ``(N, C, L)`` (indices with it if asked)."""
    from .._ops.shape import squeeze, unsqueeze

    _ADAPTIVE_MAX_POOL[1](input, output_size)
    _check_1d(input, "adaptive_max_pool1d")
    image, size = unsqueeze(input, -2), (1, _first(output_size))
    out, idx = _adaptive_pool("max", lambda: _adaptive_max_pool2d(image, size, True), image,
                              size, image.shape[:-2])
    if return_indices:
        return squeeze(out, -2), squeeze(idx, -2)
    return squeeze(out, -2)


def lp_pool2d(input: Tensor, norm_type: float, kernel_size: Any, stride: Any = None,
              ceil_mode: bool = False) -> Tensor:
    """Power-average pooling: ``(sum over window of x**p) ** (1/p)``, torch's composite."""
    from .._ops.pointwise import abs as abs_, sign

    kw, kh = _pair(kernel_size)
    if norm_type == float("inf"):
        return _max_pool2d(abs_(input), kernel_size, stride, 0, 1, ceil_mode)
    if norm_type == -float("inf"):
        return -_max_pool2d(-abs_(input), kernel_size, stride, 0, 1, ceil_mode)
    out = avg_pool2d(input.pow(norm_type), kernel_size, stride, 0, ceil_mode)
    return (sign(out) * _relu(abs_(out))).mul(kw * kh).pow(1.0 / norm_type)


def lp_pool1d(input: Tensor, norm_type: float, kernel_size: int, stride: Any = None,
              ceil_mode: bool = False) -> Tensor:
    """Power-average pooling over ``(N, C, L)``, torch's composite."""
    from .._ops.pointwise import abs as abs_, sign

    if norm_type == float("inf"):
        return max_pool1d(abs_(input), kernel_size, stride, 0, 1, ceil_mode)
    if norm_type == -float("inf"):
        return -max_pool1d(-abs_(input), kernel_size, stride, 0, 1, ceil_mode)
    out = avg_pool1d(input.pow(norm_type), kernel_size, stride, 0, ceil_mode)
    return (sign(out) * _relu(abs_(out))).mul(kernel_size).pow(1.0 / norm_type)


def _feature_dropout(input: Tensor, p: float, training: bool, inplace: bool,
                     batched: bool = True) -> Tensor:
    """Zero whole channels (dims 0 and 1 pick a channel; dim 0 unless ``batched``) with
    probability ``p``, scale the rest."""
    from .._ops.inplace import mul_
    from .._ops.pointwise import mul

    if not training or p == 0.0 or input._data.size == 0:
        return input
    x = input._data
    lead = 2 if batched else 1
    if p == 1.0:
        mask = np.zeros((), dtype=x.dtype)
    else:
        if x.ndim < lead:  # torch's feature noise needs the channel dims
            raise RuntimeError("Feature dropout requires at least 2 dimensions in the input")
        shape = x.shape[:lead] + (1,) * (x.ndim - lead)
        noise = _dropout_noise(shape, p, x.dtype)
        _check_noise_divisible(x.dtype)
        mask = noise / np.asarray(1.0 - p, dtype=x.dtype)
    mask_t = wrap(mask, 0)
    return mul_(input, mask_t) if inplace else mul(input, mask_t)


def dropout1d(input: Tensor, p: float = 0.5, training: bool = True,
              inplace: bool = False) -> Tensor:
    """Channel-wise dropout of ``(N, C, L)`` or ``(C, L)`` inputs."""
    from .._ops.shape import squeeze, unsqueeze

    _check_dropout_p(p)
    checks.python_method(input, "dim", Tensor)
    _DROPOUT["feature_dropout_" if inplace else "feature_dropout"](input, p, training)
    nd = input._data.ndim
    if nd not in (2, 3):
        raise RuntimeError(
            f"dropout1d: Expected 2D or 3D input, but received a {nd}D input. Note that "
            "dropout1d exists to provide channel-wise dropout on inputs with 1 spatial "
            "dimension, a channel dimension, and an optional batch dimension (i.e. 2D or 3D "
            "inputs).")
    if nd == 2:
        if inplace:
            return _feature_dropout(input, p, training, True, batched=False)
        return squeeze(_feature_dropout(unsqueeze(input, 0), p, training, False), 0)
    return _feature_dropout(input, p, training, inplace)


def dropout2d(input: Tensor, p: float = 0.5, training: bool = True,
              inplace: bool = False) -> Tensor:
    """Channel-wise dropout of ``(N, C, H, W)`` inputs (torch's warnings for other ranks)."""
    import warnings

    _check_dropout_p(p)
    checks.python_method(input, "dim", Tensor)
    _DROPOUT["feature_dropout_" if inplace else "feature_dropout"](input, p, training)
    nd = input._data.ndim
    if nd not in (3, 4):
        warnings.warn(
            f"dropout2d: Received a {nd}-D input to dropout2d, which is deprecated and will "
            "result in an error in a future release. To retain the behavior and silence this "
            "warning, please use dropout instead. Note that dropout2d exists to provide "
            "channel-wise dropout on inputs with 2 spatial dimensions, a channel dimension, and "
            "an optional batch dimension (i.e. 3D or 4D inputs).", stacklevel=2)
    if nd == 3:
        warnings.warn(
            "dropout2d: Received a 3D input to dropout2d and assuming that channel-wise 1D "
            "dropout behavior is desired - input is interpreted as shape (N, C, L), where C is "
            "the channel dim. This behavior will change in a future release to interpret the "
            "input as one without a batch dimension, i.e. shape (C, H, W). To maintain the 1D "
            "channel-wise dropout behavior, please switch to using dropout1d instead.",
            stacklevel=2)
    return _feature_dropout(input, p, training, inplace)


def _alpha_dropout(input: Tensor, p: float, training: bool, inplace: bool,
                   feature: bool) -> Tensor:
    """torch's alpha dropout: a kept mask scaled by ``a`` plus an offset ``b`` that sends
    dropped values to SELU's saturation; per element, or per channel when ``feature``."""
    from .._ops.inplace import add_, mul_
    from .._ops.pointwise import mul

    _check_dropout_p(p)
    name = "feature_alpha_dropout" if feature else "alpha_dropout"
    _DROPOUT[name + "_" if inplace else name](input, p, training)
    if not training or p == 0.0 or input._data.size == 0:
        return input
    x = input._data
    if p == 1.0:
        zero = wrap(np.zeros((), dtype=x.dtype), 0)
        return mul_(input, zero) if inplace else mul(input, zero)
    if feature and x.ndim < 2:
        raise RuntimeError("Feature dropout requires at least 2 dimensions in the input")
    shape = x.shape[:2] + (1,) * (x.ndim - 2) if feature else x.shape
    alpha = 1.7580993408473766
    a = 1.0 / math.sqrt((alpha * alpha * p + 1) * (1 - p))
    keep = _dropout_noise(shape, p, x.dtype)
    dt = x.dtype.type  # torch's arithmetic: in the input's dtype, each scalar cast to it
    b = wrap((keep - dt(1)) * dt(alpha * a) + dt(alpha * a * p), 0)
    noise = wrap(keep * dt(a), 0)
    out = mul_(input, noise) if inplace else mul(input, noise)
    return add_(out, b)


def alpha_dropout(input: Tensor, p: float = 0.5, training: bool = False,
                  inplace: bool = False) -> Tensor:
    """Dropout that keeps SELU's zero mean and unit variance (dropped values go to -alpha')."""
    return _alpha_dropout(input, p, training, inplace, feature=False)


def feature_alpha_dropout(input: Tensor, p: float = 0.5, training: bool = False,
                          inplace: bool = False) -> Tensor:
    """Alpha dropout of whole channels (dims 0 and 1 pick a channel)."""
    return _alpha_dropout(input, p, training, inplace, feature=True)


def dropout3d(input: Tensor, p: float = 0.5, training: bool = True,
              inplace: bool = False) -> Tensor:
    """Channel-wise dropout of ``(N, C, D, H, W)`` or ``(C, D, H, W)`` inputs."""
    import warnings

    from .._ops.shape import squeeze, unsqueeze

    _check_dropout_p(p)
    checks.python_method(input, "dim", Tensor)
    _DROPOUT["feature_dropout_" if inplace else "feature_dropout"](input, p, training)
    nd = input._data.ndim
    if nd not in (4, 5):
        warnings.warn(
            f"dropout3d: Received a {nd}-D input to dropout3d, which is deprecated and will "
            "result in an error in a future release. To retain the behavior and silence this "
            "warning, please use dropout instead. Note that dropout3d exists to provide "
            "channel-wise dropout on inputs with 3 spatial dimensions, a channel dimension, and "
            "an optional batch dimension (i.e. 4D or 5D inputs).", stacklevel=2)
    if nd != 5:
        if inplace:
            return _feature_dropout(input, p, training, True, batched=False)
        return squeeze(_feature_dropout(unsqueeze(input, 0), p, training, False), 0)
    return _feature_dropout(input, p, training, inplace)


@signature("bilinear(Tensor input1, Tensor input2, Tensor weight, Tensor? bias=None)")
def bilinear(input1: Tensor, input2: Tensor, weight: Tensor,
             bias: Tensor | None = None) -> Tensor:
    """``y[..., o] = x1 W[o] x2 + b[o]`` for weight ``(out, in1, in2)``."""
    from .._ops.einsum import einsum
    from .._ops.shape import reshape

    x1, x2, w = input1._data, input2._data, weight._data
    # torch's order (Note [Checks before NumPy] in _ops/checks.py): dtypes, ranks, sizes
    tensors = (input1, input2, weight) + (() if bias is None else (bias,))
    if any(t._data.dtype != x1.dtype for t in tensors):
        raise RuntimeError("All tensors must have the same dtype, got " + ", ".join(
            f"{n}: {checks.cpp_name(t._data.dtype)}"
            for n, t in zip(("input1", "input2", "weight", "bias"), tensors)))
    if x1.ndim != x2.ndim:
        raise RuntimeError(f"bilinear(): input dimensions do not match: got {x1.ndim} and "
                           f"{x2.ndim}")
    if x1.shape[:-1] != x2.shape[:-1]:
        for i in range(x1.ndim - 1):
            if x1.shape[i] != x2.shape[i]:
                raise RuntimeError(f"bilinear(): input batch dimensions do not match at dim "
                                   f"{i}: got {x1.shape[i]} and {x2.shape[i]}")
    if checks.size_at(x1.shape, -1) != checks.size_at(w.shape, 1):
        raise RuntimeError(f"bilinear(): input1 size does not match weight size: got "
                           f"{x1.shape[-1]} but expected {w.shape[1]}")
    if checks.size_at(x2.shape, -1) != checks.size_at(w.shape, 2):
        raise RuntimeError(f"bilinear(): input2 size does not match weight size: got "
                           f"{x2.shape[-1]} but expected {w.shape[2]}")
    if bias is not None and checks.size_at(bias._data.shape, 0) != w.shape[0]:
        raise RuntimeError(f"bilinear(): bias size does not match weight size: got "
                           f"{bias._data.shape[0]} but expected {w.shape[0]}")
    if w.ndim != 3:
        raise RuntimeError("number of dimensions must match")
    checks.not_implemented_for("bmm", x1.dtype, "b")
    lead = x1.shape[:-1]
    a = reshape(input1, (-1, x1.shape[-1]))
    c = reshape(input2, (-1, x2.shape[-1]))
    out = reshape(einsum("bi,oij,bj->bo", a, weight, c), lead + (w.shape[0],))
    return out if bias is None else out + bias



def _upsample_deprecated(name: str) -> None:
    import warnings

    warnings.warn(f"`nn.functional.{name}` is deprecated. Use `nn.functional.interpolate` "
                  "instead.", stacklevel=3)


def upsample(input: Tensor, size: Any = None, scale_factor: Any = None, mode: str = "nearest",
             align_corners: bool | None = None) -> Tensor:
    """Deprecated spelling of ``interpolate`` (warns, as torch does)."""
    _upsample_deprecated("upsample")
    return interpolate(input, size, scale_factor, mode, align_corners)


def upsample_nearest(input: Tensor, size: Any = None, scale_factor: Any = None) -> Tensor:
    """Deprecated spelling of ``interpolate(mode='nearest')`` (warns, as torch does)."""
    _upsample_deprecated("upsample_nearest")
    return interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(input: Tensor, size: Any = None, scale_factor: Any = None) -> Tensor:
    """Deprecated spelling of ``interpolate(mode='bilinear', align_corners=True)``."""
    _upsample_deprecated("upsample_bilinear")
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)
