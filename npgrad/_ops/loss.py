"""Loss ops, each built the way torch builds it: fused nodes where torch has one, else composed.

Fused (one node, backward in npgrad ops): MseLossBackward0, SmoothL1LossBackward0,
HuberLossBackward0, NllLossBackward0 / NllLoss2DBackward0, BinaryCrossEntropyBackward0,
BinaryCrossEntropyWithLogitsBackward0.  Composed of ordinary ops, as in torch: l1_loss,
weighted regression losses, cross_entropy (log_softmax + nll_loss, or the probability-target
and label-smoothing formulas), so the top grad_fn is the one torch shows.
"""
from __future__ import annotations

import warnings
from typing import TYPE_CHECKING, Any

import numpy as np

from .. import _dtype
from . import checks
from .._mode import _tls
if TYPE_CHECKING:
    from .._tensor import Tensor
else:  # Note [Tensor base and Tensor] in npgrad._tensor_base
    from .._tensor_base import TensorBase as Tensor
from .._tensor_base import wrap
from ._shape_util import broadcast_shapes
from .pointwise import masked_fill, scalar_div
from .registry import General
from .signature import batchable, checker
from .reduction import sum as sum_
from .softmax import log_softmax
from .shape import reshape, view

_REDUCTIONS = ("none", "mean", "sum")


def _reduction_check(reduction: str) -> None:
    _enum(reduction)


def _enum(reduction: Any) -> int:
    """torch's ``_Reduction.get_enum``: 0 none, 1 mean, 2 sum ("elementwise_mean" is a
    deprecated spelling of "mean"), else its ValueError."""
    if reduction == "none":
        return 0
    if reduction == "mean":
        return 1
    if reduction == "elementwise_mean":
        warnings.warn("reduction='elementwise_mean' is deprecated. Please use reduction='mean' "
                      "instead.", UserWarning, stacklevel=4)
        return 1
    if reduction == "sum":
        return 2
    raise ValueError(f"{reduction} is not a valid value for reduction")


def _enum_of(size_average: Any, reduce: Any, reduction: Any) -> int:
    """The reduction enum torch's Python passes its C op (``legacy_get_enum`` or
    ``get_enum``)."""
    return _enum(_legacy_reduction(size_average, reduce, reduction))


_ENUM_NAMES = ("none", "mean", "sum")


# Note [Losses as torch's Python writes them]
# Most of torch's losses are Python functions in torch.nn.functional that touch their arguments
# (``target.size()``), broadcast them, and call a C op.  Each npgrad loss runs the same steps in
# the same order -- ``_sizes`` for the ``.size()`` calls, ``broadcast_tensors``' errors, then a
# ``checker`` with the C op's signature and the arguments torch passes it -- so a bad argument
# gets torch's error (CPython's AttributeError, or the C parser's TypeError naming the C op and
# its parameter) before NumPy sees it.  The C ops' strings are torch's Python bindings'.
_MSE = checker("mse_loss(Tensor input, Tensor target, int64_t reduction=at::Reduction::Mean)")
_L1 = checker("l1_loss(Tensor input, Tensor target, int64_t reduction=at::Reduction::Mean)")
_SMOOTH_L1 = checker("smooth_l1_loss(Tensor input, Tensor target, "
                     "int64_t reduction=at::Reduction::Mean, double beta=1.0)")
_HUBER = checker("huber_loss(Tensor input, Tensor target, int64_t reduction=at::Reduction::Mean, "
                 "double delta=1.0)")
_SOFT_MARGIN = checker("soft_margin_loss(Tensor input, Tensor target, "
                       "int64_t reduction=at::Reduction::Mean)")
_BCE = checker("binary_cross_entropy(Tensor input, Tensor target, Tensor? weight=None, "
               "int64_t reduction=at::Reduction::Mean)")
_BCE_LOGITS = checker("binary_cross_entropy_with_logits(Tensor input, Tensor target, "
                      "Tensor? weight=None, Tensor? pos_weight=None, "
                      "int64_t reduction=at::Reduction::Mean)")
_NLL = checker("nll_loss_nd(Tensor input, Tensor target, Tensor? weight=None, "
               "int64_t reduction=at::Reduction::Mean, SymInt ignore_index=-100)")
_CROSS_ENTROPY = checker("cross_entropy_loss(Tensor input, Tensor target, Tensor? weight=None, "
                         "int64_t reduction=at::Reduction::Mean, SymInt ignore_index=-100, "
                         "double label_smoothing=0.0)")
_KL_DIV = checker("kl_div(Tensor input, Tensor target, int64_t reduction=at::Reduction::Mean, *, "
                  "bool log_target=False)")
_MARGIN_RANKING = checker("margin_ranking_loss(Tensor input1, Tensor input2, Tensor target, "
                          "double margin=0.0, int64_t reduction=at::Reduction::Mean)")
_HINGE = checker("hinge_embedding_loss(Tensor input, Tensor target, double margin=1.0, "
                 "int64_t reduction=at::Reduction::Mean)")
_COSINE = checker("cosine_embedding_loss(Tensor input1, Tensor input2, Tensor target, "
                  "double margin=0.0, int64_t reduction=at::Reduction::Mean)")
_TRIPLET = checker("triplet_margin_loss(Tensor anchor, Tensor positive, Tensor negative, "
                   "double margin=1.0, double p=2, double eps=1e-06, bool swap=False, "
                   "int64_t reduction=at::Reduction::Mean)")
_POISSON = checker("poisson_nll_loss(Tensor input, Tensor target, bool log_input, bool full, "
                   "double eps, int64_t reduction)")


def _sizes(input: Any, target: Any) -> None:
    """torch's ``if target.size() != input.size(): warn``: the attribute errors of a non-Tensor
    (target's first), then the size warning."""
    checks.python_method(target, "size", Tensor)
    checks.python_method(input, "size", Tensor)
    _size_warning(input, target)


def _legacy_reduction(size_average: Any, reduce: Any, reduction: str) -> str:
    """torch's mapping of the deprecated ``size_average``/``reduce`` flags."""
    if size_average is None and reduce is None:
        return reduction
    warnings.warn("size_average and reduce args will be deprecated, please use "
                  f"reduction='{_legacy_name(size_average, reduce)}' instead.", UserWarning,
                  stacklevel=3)
    return _legacy_name(size_average, reduce)


def _legacy_name(size_average: Any, reduce: Any) -> str:
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    if size_average and reduce:
        return "mean"
    return "sum" if reduce else "none"


def _size_warning(input: Tensor, target: Tensor) -> None:
    if input._data.shape != target._data.shape:
        warnings.warn(
            f"Using a target size ({target.shape}) that is different to the input size "
            f"({input.shape}). This will likely lead to incorrect results due to broadcasting. "
            "Please ensure they have the same size.", UserWarning, stacklevel=3)


def _broadcast_pair(input: Tensor, target: Tensor) -> tuple:
    """torch.broadcast_tensors for two operands (expand only the ones that need it)."""
    from .shape import expand

    a, b = input._data.shape, target._data.shape
    if a == b:
        return input, target
    shape = broadcast_shapes(a, b)
    return (input if a == shape else expand(input, shape),
            target if b == shape else expand(target, shape))


def _reduce(loss: Tensor, reduction: str) -> Tensor:
    from .reduction import mean, sum as sum_

    if reduction == "none":
        return loss
    return mean(loss) if reduction == "mean" else sum_(loss)


def _reduce_np(loss: np.ndarray, reduction: str) -> np.ndarray:
    if reduction == "none":
        return loss
    return np.asarray(loss.mean() if reduction == "mean" else loss.sum(), dtype=loss.dtype)


def _weighted(loss: Tensor, weight: Tensor, reduction: str) -> Tensor:
    """``loss * weight`` reduced torch's way: the mean divides by the sum of the weights."""
    from .reduction import sum as sum_

    weighted = loss * weight
    if reduction == "none":
        return weighted
    if reduction == "sum":
        return sum_(weighted)
    if reduction == "mean":
        return sum_(weighted) / sum_(weight)
    raise ValueError(f"Invalid reduction mode: {reduction}. Expected one of 'none', 'mean', "
                     "'sum'.")


def _check_weight_size(input: Tensor, weight: Tensor) -> None:
    checks.python_method(weight, "size", Tensor)
    if weight._data.shape != input._data.shape:
        raise ValueError("Weights and input must have the same size.")


# Note [Fused losses are entries]
# torch's fused losses (mse_loss, smooth_l1_loss, huber_loss, binary_cross_entropy(_with_logits),
# soft_margin_loss, nll_loss) are C ops whose nodes keep ``reduction`` as the enum the Python
# function passed (``grad_fn._saved_reduction`` is 1 for 'mean'), and their other arguments
# under their C names.  Each one is a General entry here; the public function runs torch's
# Python checks and the NumPy forward, then ``record``s.  A rule is ``grad * d(loss)/d(x)``,
# divided by the element count for 'mean' (``_scaled``); the target's rule is the input's with
# the roles swapped, not its negation, as torch writes it: at a zero residual the target's
# gradient is then +0. where -g would be -0.  The tangent is the same derivative times the
# tangents, reduced as the loss is (``_reduced_tangent``).  A target that is no input of the
# node (nll's, soft_margin's) is a saved tensor parameter; an optional weight is kept as given.
_MEAN = 1


def _scaled(grad: Tensor, elementwise: Tensor, reduction: int) -> Tensor:
    """``grad * elementwise``, divided by the element count for ``reduction`` 'mean'."""
    g = grad * elementwise
    if reduction == _MEAN and elementwise._data.size:
        g = g * (1.0 / elementwise._data.size)
    return g


def _reduced_tangent(t: Tensor, reduction: int) -> Tensor:
    """An elementwise tangent reduced as ``reduction`` (0 none, 1 mean, 2 sum) says."""
    from .reduction import mean

    if reduction == 0:
        return t
    return mean(t) if reduction == _MEAN else sum_(t)


def _pair_signature(name: str, extra: str = "") -> str:
    return (f"{name}(Tensor input, Tensor target, int64_t reduction=at::Reduction::Mean"
            f"{extra})")


# -- regression losses -------------------------------------------------------------------

def _mse_d(x: Tensor, y: Tensor) -> Tensor:
    return (x - y) * 2.0


MSE_LOSS = General(
    _pair_signature("mse_loss"), grad_fn="MseLossBackward0", forward=None,
    inputs=("self", "target"), params=("reduction",), keeps=("reduction",),
    saves=("self", "target"),
    derivatives={"self": lambda grad, self, target, reduction:
                 _scaled(grad, _mse_d(self, target), reduction),
                 "target": lambda grad, self, target, reduction:
                 _scaled(grad, _mse_d(target, self), reduction)},
    tangent=lambda self_t, target_t, self, target, reduction:
    _reduced_tangent(_mse_d(self, target) * (self_t - target_t), reduction))
MseLossBackward0 = MSE_LOSS.node


@batchable  # Note [Batched values] in npgrad.func._batched
def mse_loss(input: Tensor, target: Tensor, size_average: Any = None, reduce: Any = None,
             reduction: str = "mean", weight: Any = None) -> Tensor:
    """Mean squared error (grad_fn ``MseLossBackward0``)."""
    _sizes(input, target)
    reduction = _legacy_reduction(size_average, reduce, reduction)
    x, y = _broadcast_pair(input, target)
    if weight is not None:
        _check_weight_size(input, weight)
        return _weighted((x - y) ** 2, weight, reduction)
    enum = _enum(reduction)
    _MSE(x, y, enum)
    a, b = x._data, y._data
    dt = _dtype.result_type_np((a, b))
    checks.not_implemented_for("mse_cpu", dt, "c")  # no complex kernel in torch
    sq = np.square(a.astype(dt, copy=False) - b.astype(dt, copy=False))
    return MSE_LOSS.record((x, y), _reduce_np(sq, _ENUM_NAMES[enum]), (enum,))


@batchable  # Note [Batched values] in npgrad.func._batched
def l1_loss(input: Tensor, target: Tensor, size_average: Any = None, reduce: Any = None,
            reduction: str = "mean", weight: Any = None) -> Tensor:
    """Mean absolute error: ``abs(input - target)`` reduced (grad_fn MeanBackward0 / ...)."""
    from .pointwise import abs as abs_

    _sizes(input, target)
    reduction = _legacy_reduction(size_average, reduce, reduction)
    x, y = _broadcast_pair(input, target)
    if weight is not None:
        _check_weight_size(input, weight)
        return _weighted(abs_(x - y), weight, reduction)
    enum = _enum(reduction)
    _L1(x, y, enum)
    reduction = _ENUM_NAMES[enum]
    return _reduce(abs_(x - y), reduction)


def _smooth_l1_d(x: Tensor, y: Tensor, beta: float) -> Tensor:
    from .pointwise import where

    d = x - y  # torch's branches: a NaN residual falls through to the quadratic part
    return where(d < -beta, -1.0, where(d > beta, 1.0, d / beta))


SMOOTH_L1_LOSS = General(
    _pair_signature("smooth_l1_loss", ", double beta=1.0"), grad_fn="SmoothL1LossBackward0",
    forward=None, inputs=("self", "target"), params=("reduction", "beta"),
    keeps=("reduction", "beta"), saves=("self", "target"),
    derivatives={"self": lambda grad, self, target, reduction, beta:
                 _scaled(grad, _smooth_l1_d(self, target, beta), reduction),
                 "target": lambda grad, self, target, reduction, beta:
                 _scaled(grad, _smooth_l1_d(target, self, beta), reduction)},
    tangent=lambda self_t, target_t, self, target, reduction, beta:
    _reduced_tangent(_smooth_l1_d(self, target, beta) * (self_t - target_t), reduction))
SmoothL1LossBackward0 = SMOOTH_L1_LOSS.node


@batchable  # Note [Batched values] in npgrad.func._batched
def smooth_l1_loss(input: Tensor, target: Tensor, size_average: Any = None, reduce: Any = None,
                   reduction: str = "mean", beta: float = 1.0) -> Tensor:
    """Quadratic below ``beta``, linear above (grad_fn ``SmoothL1LossBackward0``)."""
    _sizes(input, target)
    reduction = _legacy_reduction(size_average, reduce, reduction)
    x, y = _broadcast_pair(input, target)
    if beta == 0.0:
        return l1_loss(x, y, reduction=reduction)
    enum = _enum(reduction)
    _SMOOTH_L1(x, y, enum, beta)
    beta = float(beta)
    if beta < 0:
        raise RuntimeError("smooth_l1_loss does not support negative values for beta.")
    a, b = x._data, y._data
    dt = _dtype.result_type_np((a, b))
    checks.not_implemented_for("smooth_l1_cpu", dt, "c")  # no complex kernel in torch
    d = np.abs(a.astype(dt, copy=False) - b.astype(dt, copy=False))
    loss = np.where(d < beta, 0.5 * d * d / beta, d - 0.5 * beta).astype(d.dtype, copy=False)
    return SMOOTH_L1_LOSS.record((x, y), _reduce_np(loss, _ENUM_NAMES[enum]), (enum, beta))


def _huber_d(x: Tensor, y: Tensor, delta: float) -> Tensor:
    from .pointwise import where

    d = x - y  # torch's branches: a NaN residual falls through to the quadratic part
    return where(d < -delta, -delta, where(d > delta, delta, d))


HUBER_LOSS = General(
    _pair_signature("huber_loss", ", double delta=1.0"), grad_fn="HuberLossBackward0",
    forward=None, inputs=("self", "target"), params=("reduction", "delta"),
    keeps=("reduction", "delta"), saves=("self", "target"),
    derivatives={"self": lambda grad, self, target, reduction, delta:
                 _scaled(grad, _huber_d(self, target, delta), reduction),
                 "target": lambda grad, self, target, reduction, delta:
                 _scaled(grad, _huber_d(target, self, delta), reduction)},
    tangent=lambda self_t, target_t, self, target, reduction, delta:
    _reduced_tangent(_huber_d(self, target, delta) * (self_t - target_t), reduction))
HuberLossBackward0 = HUBER_LOSS.node


@batchable  # Note [Batched values] in npgrad.func._batched
def huber_loss(input: Tensor, target: Tensor, reduction: str = "mean", delta: float = 1.0,
               weight: Any = None) -> Tensor:
    """Quadratic below ``delta``, ``delta``-scaled linear above (grad_fn ``HuberLossBackward0``)."""
    _sizes(input, target)
    x, y = _broadcast_pair(input, target)
    if weight is not None:
        _check_weight_size(input, weight)
        weighted = huber_loss(x, y, "none", delta) * weight
        if reduction not in _REDUCTIONS:
            raise ValueError(f"Invalid reduction mode: {reduction}. Expected one of 'none', "
                             "'mean', 'sum'.")
        return _reduce(weighted, reduction)
    enum = _enum(reduction)
    _HUBER(x, y, enum, delta)
    delta = float(delta)
    if delta <= 0:
        raise RuntimeError("huber_loss does not support non-positive values for delta.")
    a, b = x._data, y._data
    # torch's kernel writes into a tensor like ``input``: computed in the promoted dtype, the
    # result is cast to input's, which an integral or bool input cannot hold
    dt = _dtype.result_type_np((a, b))
    checks.check_castable(dt, a.dtype)
    checks.not_implemented_for("huber_cpu", dt, "c")  # no complex kernel in torch
    d = np.abs(a.astype(dt, copy=False) - b.astype(dt, copy=False))
    loss = np.where(d < delta, 0.5 * d * d, delta * (d - 0.5 * delta)).astype(a.dtype,
                                                                             copy=False)
    return HUBER_LOSS.record((x, y), _reduce_np(loss, _ENUM_NAMES[enum]), (enum, delta))


# -- binary cross-entropy ------------------------------------------------------------------

_BCE_EPS = 1e-12


def _bce_d_input(x: Tensor, y: Tensor, weight: Tensor | None) -> Tensor:
    from .pointwise import clamp_min

    d = (x - y) / clamp_min((1 - x) * x, _BCE_EPS)
    return d if weight is None else d * weight


def _bce_d_target(x: Tensor, weight: Tensor | None) -> Tensor:
    from .pointwise import clamp_min, log, log1p

    d = clamp_min(log1p(-x), -100) - clamp_min(log(x), -100)
    return d if weight is None else d * weight


BINARY_CROSS_ENTROPY = General(
    "binary_cross_entropy(Tensor input, Tensor target, Tensor? weight=None, "
    "int64_t reduction=at::Reduction::Mean)", grad_fn="BinaryCrossEntropyBackward0",
    forward=None, inputs=("self", "target"), params=("weight", "reduction"),
    keeps=("weight", "reduction"), saves=("self", "target"),
    derivatives={"self": lambda grad, self, target, weight, reduction:
                 _scaled(grad, _bce_d_input(self, target, weight), reduction),
                 "target": lambda grad, self, weight, reduction:
                 _scaled(grad, _bce_d_target(self, weight), reduction)},
    tangent=lambda self_t, target_t, self, target, weight, reduction: _reduced_tangent(
        _bce_d_input(self, target, weight) * self_t + _bce_d_target(self, weight) * target_t,
        reduction))
BinaryCrossEntropyBackward0 = BINARY_CROSS_ENTROPY.node


@batchable  # Note [Batched values] in npgrad.func._batched
def binary_cross_entropy(input: Tensor, target: Tensor, weight: Tensor | None = None,
                         size_average: Any = None, reduce: Any = None,
                         reduction: str = "mean") -> Tensor:
    """``-w (t log x + (1 - t) log(1 - x))``, logs clamped at -100 (grad_fn ``BinaryCrossEntropyBackward0``)."""
    enum = _enum_of(size_average, reduce, reduction)
    reduction = _ENUM_NAMES[enum]
    checks.python_method(target, "size", Tensor)
    checks.python_method(input, "size", Tensor)
    if target._data.shape != input._data.shape:
        raise ValueError(f"Using a target size ({target.shape}) that is different to the input "
                         f"size ({input.shape}) is deprecated. Please ensure they have the same "
                         "size.")
    if weight is not None:
        checks.python_method(weight, "size", Tensor)
    _BCE(input, target, weight, enum)
    if weight is not None and weight._requires_grad:
        raise RuntimeError("The function 'binary_cross_entropy' is not differentiable with "
                           "respect to argument 'weight'. This input cannot have requires_grad "
                           "True.")
    x, t = input._data, target._data
    # torch's order (Note [Checks before NumPy] in checks.py): the weight's broadcast, the
    # dtypes, the kernel's dtype, then the values
    if weight is not None:
        ws, lead = weight._data.shape, len(t.shape) - len(weight._data.shape)
        for i in range(len(ws) - 1, -1, -1):
            if lead < 0 or (ws[i] != 1 and ws[i] != t.shape[lead + i]):
                raise RuntimeError(f"Attempting to broadcast a dimension of length {ws[i]} at "
                                   f"{i - len(ws)}! Mismatching argument at index 1 had "
                                   f"{weight.shape}; but expected shape should be broadcastable "
                                   f"to [{', '.join(map(str, t.shape))}]")
    if t.dtype != x.dtype:
        raise RuntimeError(f"Found dtype {checks.scalar_name(t.dtype)} but expected "
                           f"{checks.scalar_name(x.dtype)}")
    checks.not_implemented_for("binary_cross_entropy", x.dtype, "biu")
    if np.any((x < 0) | (x > 1)):
        raise RuntimeError("all elements of input should be between 0 and 1")
    if np.any((t < 0) | (t > 1)):
        raise RuntimeError("all elements of target should be between 0 and 1")
    with np.errstate(divide="ignore", invalid="ignore"):
        log_x = np.maximum(np.log(x), -100)
        log_1mx = np.maximum(np.log1p(-x), -100)
    loss = -(t * log_x + (1 - t) * log_1mx)
    if weight is not None:
        # torch's Python expands the weight to the target's shape before the C op
        weight = weight if weight._data.shape == t.shape else weight.expand(t.shape)
        loss = loss * weight._data
    loss = loss.astype(x.dtype, copy=False)
    return BINARY_CROSS_ENTROPY.record((input, target), _reduce_np(loss, reduction),
                                       (weight, enum))


def _bce_logits_d_input(x: Tensor, y: Tensor, weight: Tensor | None,
                        pos_weight: Tensor | None) -> Tensor:
    from .pointwise import sigmoid

    if pos_weight is None:
        d = sigmoid(x) - y
    else:
        d = (1 - y) - ((pos_weight - 1) * y + 1) * (1 - sigmoid(x))
    return d if weight is None else d * weight


def _bce_logits_d_target(x: Tensor, weight: Tensor | None, pos_weight: Tensor | None) -> Tensor:
    from .pointwise import abs as abs_, exp, log1p, relu

    if pos_weight is None:
        d = -x
    else:
        d = (pos_weight - 1) * (log1p(exp(-abs_(x))) + relu(-x)) - x
    return d if weight is None else d * weight


BINARY_CROSS_ENTROPY_WITH_LOGITS = General(
    "binary_cross_entropy_with_logits(Tensor input, Tensor target, Tensor? weight=None, "
    "Tensor? pos_weight=None, int64_t reduction=at::Reduction::Mean)",
    grad_fn="BinaryCrossEntropyWithLogitsBackward0", forward=None, inputs=("self", "target"),
    params=("weight", "pos_weight", "reduction"), keeps=("weight", "pos_weight", "reduction"),
    saves=("self", "target"),
    derivatives={"self": lambda grad, self, target, weight, pos_weight, reduction: _scaled(
        grad, _bce_logits_d_input(self, target, weight, pos_weight), reduction),
                 "target": lambda grad, self, weight, pos_weight, reduction: _scaled(
        grad, _bce_logits_d_target(self, weight, pos_weight), reduction)},
    tangent=lambda self_t, target_t, self, target, weight, pos_weight, reduction:
    _reduced_tangent(_bce_logits_d_input(self, target, weight, pos_weight) * self_t
                     + _bce_logits_d_target(self, weight, pos_weight) * target_t, reduction))
BinaryCrossEntropyWithLogitsBackward0 = BINARY_CROSS_ENTROPY_WITH_LOGITS.node


@batchable  # Note [Batched values] in npgrad.func._batched
def binary_cross_entropy_with_logits(input: Tensor, target: Tensor,
                                     weight: Tensor | None = None, size_average: Any = None,
                                     reduce: Any = None, reduction: str = "mean",
                                     pos_weight: Tensor | None = None) -> Tensor:
    """Sigmoid and binary cross-entropy in one stable op (grad_fn ``BinaryCrossEntropyWithLogitsBackward0``)."""
    enum = _enum_of(size_average, reduce, reduction)
    reduction = _ENUM_NAMES[enum]
    checks.python_method(target, "size", Tensor)
    checks.python_method(input, "size", Tensor)
    if target._data.shape != input._data.shape:
        raise ValueError(f"Target size ({target.shape}) must be the same as input size "
                         f"({input.shape})")
    _BCE_LOGITS(input, target, weight, pos_weight, enum)
    x, t = input._data, target._data
    # torch's checks (Note [Checks before NumPy] in checks.py): the input's kernel, then the
    # arithmetic on ``target`` (``1 - target``, a result in target's dtype), then the shapes
    checks.not_implemented_for("log_sigmoid_cpu", x.dtype, "biu")
    if t.dtype.kind == "b":
        raise RuntimeError("Subtraction, the `-` operator, with two bool tensors is not "
                           "supported. Use the `^` or `logical_xor()` operator instead.")
    if t.dtype.kind in "iu":
        raise RuntimeError(f"result type {checks.scalar_name(x.dtype)} can't be cast to the "
                           f"desired output type {checks.scalar_name(t.dtype)}")
    if pos_weight is not None:
        broadcast_shapes(pos_weight._data.shape, t.shape)
    if weight is not None:
        broadcast_shapes(x.shape, weight._data.shape)
    softplus_neg = np.log1p(np.exp(-np.abs(x))) + np.maximum(-x, 0)
    if pos_weight is not None:
        lw = (pos_weight._data - 1) * t + 1
        loss = (1 - t) * x + lw * softplus_neg
    else:
        loss = (1 - t) * x + softplus_neg
    if weight is not None:
        loss = loss * weight._data
    loss = np.asarray(loss).astype(t.dtype, copy=False)  # torch's result has target's dtype
    return BINARY_CROSS_ENTROPY_WITH_LOGITS.record(
        (input, target), _reduce_np(loss, reduction), (weight, pos_weight, enum))


# -- negative log-likelihood and cross-entropy -------------------------------------------------

def _nll_coefficients(in_shape: tuple, target: Tensor, weight: Tensor | None, reduction: int,
                      ignore_index: int, total_weight: Tensor, dt: np.dtype) -> np.ndarray:
    """The loss's coefficient of every input element, ``-w[t]`` (over the total weight for
    'mean') where the element is its sample's target class, else 0: the loss is linear in
    the input, so this scatter is its gradient and, times a tangent, its tangent."""
    flat_target = target._data.reshape(-1)
    classes = in_shape[1] if len(in_shape) > 1 else in_shape[0]
    if weight is None and len(in_shape) <= 2 and _all_plain_classes(
            flat_target, classes, ignore_index):  # Note [Class-index NLL without weights]
        coeff = -np.ones(1, dtype=dt)
        if reduction == _MEAN:
            with np.errstate(invalid="ignore", divide="ignore"):
                coeff = coeff / total_weight._data
        one_hot = np.zeros((flat_target.size, classes), dtype=dt)
        one_hot[np.arange(flat_target.size), flat_target] = coeff.astype(dt)
        return one_hot.reshape(in_shape)
    w = weight._data.astype(dt) if weight is not None else np.ones(classes, dtype=dt)
    valid = flat_target != ignore_index
    safe = np.where(valid, flat_target, 0)
    coeff = -w[safe]
    if reduction == _MEAN:
        with np.errstate(invalid="ignore", divide="ignore"):
            coeff = coeff / total_weight._data
    # ignored targets get +0 even when every target is ignored (total weight 0), as torch's
    coeff = np.where(valid, coeff, np.zeros((), dtype=coeff.dtype))
    one_hot = np.zeros((flat_target.size, classes), dtype=dt)
    one_hot[np.arange(flat_target.size), safe] = coeff.astype(dt)
    scatter = np.moveaxis(one_hot.reshape(_class_last_shape(in_shape)), -1,
                          1 if len(in_shape) > 1 else 0)
    return np.ascontiguousarray(scatter)


def _nll_backward(grad: Tensor, x: Tensor, target: Tensor, weight: Tensor | None,
                  reduction: int, ignore_index: int, total_weight: Tensor) -> Tensor:
    """A scatter of the upstream gradient (the loss is linear in the input)."""
    in_shape = x._data.shape
    scatter = wrap(_nll_coefficients(in_shape, target, weight, reduction, ignore_index,
                                     total_weight, grad._data.dtype), _tls.mode)
    if reduction == 0 and len(in_shape) > 1:
        return grad.unsqueeze(1) * scatter
    return grad * scatter


def _nll_tangent(t: Tensor, target: Tensor, weight: Tensor | None, reduction: int,
                 ignore_index: int, total_weight: Tensor) -> Tensor:
    in_shape = t._data.shape
    scatter = wrap(_nll_coefficients(in_shape, target, weight, reduction, ignore_index,
                                     total_weight, t._data.dtype), 0)
    if reduction == 0 and len(in_shape) > 1:
        return sum_(t * scatter, 1)
    return reshape(sum_(t * scatter), target._data.shape if reduction == 0 else ())


def _nll_entry(grad_fn: str) -> General:
    """nll_loss's node: NllLossBackward0 for inputs of 1 or 2 dims, NllLoss2DBackward0 for
    spatial ones; torch's C op returns the total weight as a second output, which it saves."""
    return General(
        "nll_loss_nd(Tensor input, Tensor target, Tensor? weight=None, "
        "int64_t reduction=at::Reduction::Mean, SymInt ignore_index=-100)", grad_fn=grad_fn,
        forward=None, params=("target", "weight", "reduction", "ignore_index"),
        keeps=("weight", "reduction", "ignore_index"),
        saves=("self", "target", "total_weight"), extra=("total_weight",),
        derivatives={"self": lambda grad, self, target, weight, reduction, ignore_index,
                     total_weight: _nll_backward(grad, self, target, weight, reduction,
                                                 ignore_index, total_weight)},
        tangent=lambda self_t, target, weight, reduction, ignore_index, total_weight:
        _nll_tangent(self_t, target, weight, reduction, ignore_index, total_weight))


NLL_LOSS = _nll_entry("NllLossBackward0")
NLL_LOSS_2D = _nll_entry("NllLoss2DBackward0")
NllLossBackward0 = NLL_LOSS.node
NllLoss2DBackward0 = NLL_LOSS_2D.node


def _class_last_shape(in_shape: tuple) -> tuple:
    if len(in_shape) == 1:
        return in_shape
    return (in_shape[0],) + tuple(in_shape[2:]) + (in_shape[1],)


def _shape_list(shape: tuple) -> str:
    return "[" + ", ".join(str(s) for s in shape) + "]"


def _nll_checks(x: np.ndarray, t: np.ndarray) -> None:
    """torch's order (Note [Checks before NumPy] in checks.py): the ranks and batch sizes,
    then the target's dtype, then the input's kernel."""
    _nll_shape_checks(x, t)
    if t.dtype != np.int64 and t.dtype != np.uint8:
        raise RuntimeError("expected target dtype to be Long or Byte, but got "
                           + _dtype.from_np(t.dtype).scalar_name)
    checks.not_implemented_for("nll_loss_out_frame" if x.ndim <= 2 else
                               "nll_loss2d_forward_out_frame", x.dtype, "biu")


def _nll_shape_checks(x: np.ndarray, t: np.ndarray) -> None:
    if x.ndim < 1:
        raise ValueError(f"Expected 1 or more dimensions (got {x.ndim})")
    if x.ndim == 1 and t.ndim == 1:
        if t.shape[0] != 1:
            raise ValueError("For 1D input, 1D target must have size 1, but got target size: "
                             f"{t.shape[0]}")
    elif x.ndim != 1 and x.shape[0] != (t.shape[0] if t.ndim else 0):
        raise ValueError(f"Expected input batch_size ({x.shape[0]}) to match target "
                         f"batch_size ({t.shape[0] if t.ndim else 0}).")
    if x.ndim <= 2:
        if t.ndim > 1:
            raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    elif x.ndim == 4:  # the 2-d kernel's own checks
        if t.ndim != 3:
            raise RuntimeError("only batches of spatial targets supported (3D tensors) but got "
                               f"targets of dimension: {t.ndim}")
        if t.shape != (x.shape[0],) + x.shape[2:]:
            raise RuntimeError(f"size mismatch (got input: {_shape_list(x.shape)} , target: "
                               f"{_shape_list(t.shape)}")
    elif t.shape[1:] != x.shape[2:]:
        raise RuntimeError(f"Expected target size {_shape_list((x.shape[0],) + x.shape[2:])}, "
                           f"got {_shape_list(t.shape)}")


def _nll(entry: General, input: Tensor, target: Tensor, weight: Tensor | None,
         ignore_index: int, reduction: int) -> Tensor:
    x, t = input._data, target._data
    if x.ndim == 1:
        classes_last = x.reshape(1, -1)
    elif x.ndim == 2:
        classes_last = x
    else:
        classes_last = np.moveaxis(x, 1, -1).reshape(-1, x.shape[1])
    flat_t = t.reshape(-1)
    classes = classes_last.shape[1]
    if weight is None and x.ndim <= 2 and _all_plain_classes(flat_t, classes, ignore_index):
        return _nll_unweighted(entry, input, target, classes_last, flat_t, ignore_index,
                               reduction)
    valid = flat_t != ignore_index
    bad = valid & ((flat_t < 0) | (flat_t >= classes))
    if np.any(bad):
        raise IndexError(f"Target {int(flat_t[bad][0])} is out of bounds.")
    if weight is not None and weight._data.shape != (classes,):
        raise RuntimeError(f"weight tensor should be defined either for all {classes} classes "
                           f"or no classes but got weight tensor of shape: "
                           f"{_shape_list(weight._data.shape)}")
    safe = np.where(valid, flat_t, 0)
    w = weight._data.astype(x.dtype) if weight is not None else np.ones(classes, dtype=x.dtype)
    wt = w[safe] * valid
    # An ignored target contributes +0 (torch skips it), never -x * 0 (which may be -0.)
    picked = np.where(valid, -classes_last[np.arange(flat_t.size), safe] * w[safe],
                      np.zeros((), dtype=x.dtype))
    total_weight = np.asarray(wt.sum())
    return _nll_record(entry, input, target, weight, ignore_index, reduction, picked,
                       total_weight)


def _nll_record(entry: General, input: Tensor, target: Tensor, weight: Tensor | None,
                ignore_index: int, reduction: int, picked: np.ndarray,
                total_weight: np.ndarray) -> Tensor:
    out = _nll_reduced(picked, total_weight, target._data.shape, _ENUM_NAMES[reduction],
                       input._data.dtype)
    if reduction == 0:  # torch's kernel leaves the total weight at 0 when it does not reduce
        total_weight = np.zeros((), dtype=total_weight.dtype)
    loss, _ = entry.record((input,), (out, total_weight),
                           (target, weight, reduction, ignore_index))
    return loss  # type: ignore[no-any-return]


def _nll_reduced(picked: np.ndarray, total_weight: Any, shape: tuple, reduction: str,
                 dtype: np.dtype) -> np.ndarray:
    """The per-target losses reduced as ``reduction`` says (the mean divides by the total
    weight, 0/0 giving NaN as in torch)."""
    if reduction == "none":
        out = picked.reshape(shape)
    elif reduction == "sum":
        out = picked.sum()
    else:
        with np.errstate(invalid="ignore", divide="ignore"):
            out = picked.sum() / total_weight
    return np.asarray(out, dtype=dtype)


# Note [Class-index NLL without weights]
# The common case -- no class weights, a 1-D or 2-D input (classes already last), every
# target a class in range and none equal to ``ignore_index`` -- skips the general
# formula's masks and gathers: its factors are all one, so ``-x[n, t[n]] * 1`` is
# ``-x[n, t[n]]``, the total weight is the count, and the backward's coefficients are
# one value, bit for bit the general path's results.

def _all_plain_classes(flat_t: np.ndarray, classes: int, ignore_index: int) -> bool:
    if not flat_t.size:
        return False
    lo, hi = flat_t.min(), flat_t.max()
    return 0 <= lo and hi < classes and not lo <= ignore_index <= hi


def _nll_unweighted(entry: General, input: Tensor, target: Tensor, classes_last: np.ndarray,
                    flat_t: np.ndarray, ignore_index: int, reduction: int) -> Tensor:
    picked = -classes_last[np.arange(flat_t.size), flat_t]
    total_weight = np.asarray(np.ones(flat_t.size, dtype=input._data.dtype).sum())
    return _nll_record(entry, input, target, None, ignore_index, reduction, picked,
                       total_weight)


@batchable  # Note [Batched values] in npgrad.func._batched
def nll_loss(input: Tensor, target: Tensor, weight: Tensor | None = None, size_average: Any = None,
             ignore_index: int = -100, reduce: Any = None, reduction: str = "mean") -> Tensor:
    """Negative log-likelihood of class indices (grad_fn ``NllLossBackward0``, or
    ``NllLoss2DBackward0`` for inputs with spatial dims)."""
    enum = _enum(_legacy_reduction(size_average, reduce, reduction))
    _NLL(input, target, weight, enum, ignore_index)
    x, t = input._data, target._data
    _nll_checks(x, t)
    if x.ndim <= 2:
        return _nll(NLL_LOSS, input, target, weight, ignore_index, enum)
    if x.ndim == 4:
        return _nll(NLL_LOSS_2D, input, target, weight, ignore_index, enum)
    n, c = x.shape[:2]
    x4 = view(input, (n, c, 1, -1)) if x.size else view(input, (n, c, 1, int(np.prod(x.shape[2:]))))
    t3 = target.reshape(n, 1, -1) if t.size else target.reshape(n, 1, int(np.prod(t.shape[1:])))
    out = _nll(NLL_LOSS_2D, x4, t3, weight, ignore_index, enum)
    return view(out, t.shape) if enum == 0 else out


@batchable  # Note [Batched values] in npgrad.func._batched
def cross_entropy(input: Tensor, target: Tensor, weight: Tensor | None = None,
                  size_average: Any = None, ignore_index: int = -100, reduce: Any = None,
                  reduction: str = "mean", label_smoothing: float = 0.0) -> Tensor:
    """log_softmax over the class dim, then the NLL of class indices or of class probabilities.

    >>> import npgrad as torch
    >>> torch.nn.functional.cross_entropy(torch.zeros(1, 2), torch.tensor([0]))
    tensor(0.6931)
    """
    reduction = _legacy_reduction(size_average, reduce, reduction)
    enum = _enum(reduction)
    _CROSS_ENTROPY(input, target, weight, enum, ignore_index, label_smoothing)
    reduction = _ENUM_NAMES[enum]
    label_smoothing = float(label_smoothing)
    if not 0.0 <= label_smoothing <= 1.0:
        raise RuntimeError(f"label_smoothing must be between 0.0 and 1.0. Got: {label_smoothing}")
    x = input._data
    class_dim = 0 if x.ndim == 1 else 1
    if x.ndim == 0:
        if target._data.ndim == 0:  # torch's class-probability path: the dtype, then size(1)
            if target._data.dtype.kind != "f":
                raise RuntimeError("Expected floating point type for target with class "
                                   "probabilities, got "
                                   f"{_dtype.from_np(target._data.dtype).scalar_name}")
            raise IndexError("Dimension specified as 1 but tensor has no dimensions")
        # torch wraps dim 1 as for a 1-d tensor
        raise IndexError("Dimension out of range (expected to be in range of [-1, 0], but got 1)")
    classes = x.shape[class_dim]
    logp = log_softmax(input, class_dim)
    w_view = None
    if weight is not None:
        w_view = reshape(weight, (classes,) + (1,) * (x.ndim - 1 - class_dim))

    if target._data.shape == x.shape:  # class probabilities
        if target._data.dtype.kind != "f":
            raise RuntimeError("Expected floating point type for target with class "
                               f"probabilities, got {_dtype.from_np(target._data.dtype).scalar_name}")
        tgt = target
        if label_smoothing > 0:
            tgt = tgt * (1 - label_smoothing) + label_smoothing / classes
        prod = logp * tgt
        if w_view is not None:
            prod = prod * w_view
        if reduction == "none":
            return -sum_(prod, class_dim)
        if reduction == "sum":
            return -sum_(prod)
        count = x.size // classes if classes else 0
        return scalar_div(-sum_(prod), count)

    nll = nll_loss(logp, target, weight, ignore_index=ignore_index, reduction=reduction)
    if label_smoothing <= 0:
        return nll
    ignore = target._data == ignore_index
    smooth = -sum_(logp * w_view if w_view is not None else logp, class_dim)
    smooth = masked_fill(smooth, wrap(ignore, 0), 0.0)
    if reduction == "mean":
        if weight is not None:
            kept = target._data[~ignore].reshape(-1)
            denom = wrap(np.asarray(weight._data[kept].sum(), dtype=x.dtype), 0)
        else:
            denom = wrap(np.asarray((~ignore).sum(), dtype=np.int64), 0)
        smooth_red = sum_(smooth) / denom
    elif reduction == "sum":
        smooth_red = sum_(smooth)
    else:
        smooth_red = smooth
    return nll * (1 - label_smoothing) + smooth_red * (label_smoothing / classes)


# -- kl_div and the margin / embedding losses (composed, as torch composes them) ---------------

@batchable  # Note [Batched values] in npgrad.func._batched
def kl_div(input: Tensor, target: Tensor, size_average: Any = None, reduce: Any = None,
           reduction: str = "mean", log_target: bool = False) -> Tensor:
    """KL divergence of ``target`` from ``exp(input)``: ``xlogy(t, t) - t * input`` (or
    ``exp(t) * (t - input)`` with ``log_target``), reduced; ``'batchmean'`` divides the sum
    by the batch size.

    >>> import npgrad
    >>> npgrad.nn.functional.kl_div(npgrad.tensor([0.]), npgrad.tensor([1.]), reduction='sum')
    tensor(0.)
    """
    from .pointwise import exp

    if size_average is not None or reduce is not None:
        reduction = _legacy_reduction(size_average, reduce, reduction)
    elif reduction == "mean":
        warnings.warn("reduction: 'mean' divides the total loss by both the batch size and the "
                      "support size.'batchmean' divides only by the batch size, and aligns with "
                      "the KL div math definition.'mean' will be changed to behave the same as "
                      "'batchmean' in the next major release.", UserWarning, stacklevel=2)
    inner = "sum" if reduction == "batchmean" else reduction
    enum = _enum(inner)
    _KL_DIV(input, target, enum, log_target=log_target)
    inner = _ENUM_NAMES[enum]
    if input._data.dtype.kind in "biu" or target._data.dtype.kind in "biu":
        raise RuntimeError("kl_div: Integral inputs not supported.")
    if log_target:
        loss = exp(target) * (target - input)
    else:
        from .special import xlogy

        loss = xlogy(target, target) - target * input
    reduced = _reduce(loss, inner)
    if reduction == "batchmean" and input._data.ndim != 0:
        reduced = reduced / input._data.shape[0]
    return reduced


@batchable  # Note [Batched values] in npgrad.func._batched
def margin_ranking_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0,
                        size_average: Any = None, reduce: Any = None,
                        reduction: str = "mean") -> Tensor:
    """``max(0, -target * (input1 - input2) + margin)``, reduced.

    >>> import npgrad
    >>> F = npgrad.nn.functional
    >>> F.margin_ranking_loss(npgrad.tensor([1.]), npgrad.tensor([2.]), npgrad.tensor([1.]))
    tensor(1.)
    """
    from .pointwise import clamp_min

    enum = _enum_of(size_average, reduce, reduction)
    reduction = _ENUM_NAMES[enum]
    checks.python_method(input1, "dim", Tensor)
    checks.python_method(input2, "dim", Tensor)
    n1, n2 = input1._data.ndim, input2._data.ndim
    if n1 == n2:
        checks.python_method(target, "dim", Tensor)
    if n1 != n2 or n1 != target._data.ndim:
        raise RuntimeError("margin_ranking_loss : All input tensors should have same dimension "
                           f"but got sizes: input1: {input1.size()}, input2: {input2.size()}, "
                           f"target: {target.size()} ")
    _MARGIN_RANKING(input1, input2, target, margin, enum)
    return _reduce(clamp_min(-target * (input1 - input2) + margin, 0), reduction)


@batchable  # Note [Batched values] in npgrad.func._batched
def hinge_embedding_loss(input: Tensor, target: Tensor, margin: float = 1.0,
                         size_average: Any = None, reduce: Any = None,
                         reduction: str = "mean") -> Tensor:
    """``input`` where ``target`` is 1, ``max(0, margin - input)`` where it is -1, reduced.

    >>> import npgrad
    >>> F = npgrad.nn.functional
    >>> F.hinge_embedding_loss(npgrad.tensor([0.3, 2.]), npgrad.tensor([-1., 1.]))
    tensor(1.3500)
    """
    from .pointwise import clamp_min, where

    enum = _enum_of(size_average, reduce, reduction)
    _HINGE(input, target, margin, enum)
    reduction = _ENUM_NAMES[enum]
    zeros = wrap(np.zeros_like(input._data), 0)
    # torch's ``margin - input`` is a fill of the input's dtype, then a subtraction: an
    # integer input keeps its dtype, the margin truncated (a half one rounds it)
    filled = wrap(np.full_like(input._data, margin), 0)
    output_margin = where(target != 1, clamp_min(filled - input, 0), zeros)
    output_self = where(target != -1, input, zeros)
    return _reduce(output_margin + output_self, reduction)


def _soft_margin_d(x: Tensor, y: Tensor) -> Tensor:
    """d/dx log(1 + exp(-y x)) = -y * sigmoid(-y x)."""
    from .pointwise import sigmoid

    return -y * sigmoid(-y * x)


# torch's node has one edge, the input's: the target is not differentiable (the op refuses a
# target that requires grad), and the node keeps it
SOFT_MARGIN_LOSS = General(
    _pair_signature("soft_margin_loss"), grad_fn="SoftMarginLossBackward0", forward=None,
    params=("target", "reduction"), keeps=("reduction",), saves=("self", "target"),
    derivatives={"self": lambda grad, self, target, reduction:
                 _scaled(grad, _soft_margin_d(self, target), reduction)},
    tangent=lambda self_t, self, target, reduction:
    _reduced_tangent(_soft_margin_d(self, target) * self_t, reduction))
SoftMarginLossBackward0 = SOFT_MARGIN_LOSS.node


def _soft_margin_kernel_checks(x: np.ndarray, t: np.ndarray) -> None:
    """torch's kernel is ``neg(input).mul_(target).exp_().log1p_()``: the negation refuses a
    bool input, the in-place product a target that does not broadcast into input's shape, and
    the in-place steps a floating result in an integral input."""
    if x.dtype.kind == "b":
        raise RuntimeError("Negation, the `-` operator, on a bool tensor is not supported. If "
                           "you are trying to invert a mask, use the `~` or `logical_not()` "
                           "operator instead.")
    checks.check_output_shape(broadcast_shapes(x.shape, t.shape), x.shape)
    promoted = _dtype.result_type_np((x, t))
    checks.check_castable(promoted, x.dtype)
    if x.dtype.kind in "iu":  # exp_ of the integral product
        checks.check_castable(_dtype.float_result_np(x.dtype), x.dtype)


@batchable  # Note [Batched values] in npgrad.func._batched
def soft_margin_loss(input: Tensor, target: Tensor, size_average: Any = None,
                     reduce: Any = None, reduction: str = "mean") -> Tensor:
    """``log(1 + exp(-target * input))``, reduced; SoftMarginLossBackward0.

    >>> import npgrad
    >>> F = npgrad.nn.functional
    >>> F.soft_margin_loss(npgrad.tensor([0.]), npgrad.tensor([1.]))
    tensor(0.6931)
    """
    enum = _enum_of(size_average, reduce, reduction)
    _SOFT_MARGIN(input, target, enum)
    _soft_margin_kernel_checks(input._data, target._data)
    if target._requires_grad:
        raise RuntimeError("The function 'soft_margin_loss' is not differentiable with respect "
                           "to argument 'target'. This input cannot have requires_grad True.")
    x, y = np.broadcast_arrays(input._data, target._data)
    z = -(x * y)
    with np.errstate(over="ignore"):
        loss = np.logaddexp(0, z).astype(input._data.dtype, copy=False)
    return SOFT_MARGIN_LOSS.record((input,), _reduce_np(loss, _ENUM_NAMES[enum]), (target, enum))


_COSINE_EPS = 1e-12


def cosine_embedding_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0,
                          size_average: Any = None, reduce: Any = None,
                          reduction: str = "mean") -> Tensor:
    """``1 - cos(x1, x2)`` where ``target`` is 1, ``max(0, cos - margin)`` where it is -1.

    >>> import npgrad
    >>> F = npgrad.nn.functional
    >>> F.cosine_embedding_loss(npgrad.tensor([[1., 0.]]), npgrad.tensor([[0., 1.]]),
    ...                         npgrad.tensor([1.]))
    tensor(1.)
    """
    from .pointwise import clamp_min, sqrt, where
    from .reduction import sum as sum_

    enum = _enum_of(size_average, reduce, reduction)
    _COSINE(input1, input2, target, margin, enum)
    reduction = _ENUM_NAMES[enum]
    d = target._data.ndim
    if d not in (0, 1):
        raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    want = 2 if d == 1 else 1
    if input1._data.ndim != want or input2._data.ndim != want:
        raise RuntimeError(f"{d}D target tensor expects {want}D input tensors, but found inputs "
                           f"with sizes {_shape_list(input1._data.shape)} and "
                           f"{_shape_list(input2._data.shape)}.")
    prod_sum = sum_(input1 * input2, d)
    mag1 = sum_(input1 * input1, d) + _COSINE_EPS
    mag2 = sum_(input2 * input2, d) + _COSINE_EPS
    cos = prod_sum / sqrt(mag1 * mag2)
    zeros = wrap(np.zeros_like(cos._data), 0)
    output_pos = where(target == 1, 1 - cos, zeros)
    output_neg = where(target == -1, clamp_min(cos - margin, 0), zeros)
    return _reduce(output_pos + output_neg, reduction)


def triplet_margin_loss(anchor: Tensor, positive: Tensor, negative: Tensor, margin: float = 1.0,
                        p: float = 2, eps: float = 1e-6, swap: bool = False,
                        size_average: Any = None, reduce: Any = None,
                        reduction: str = "mean") -> Tensor:
    """``max(0, margin + d(a, p) - d(a, n))`` with pairwise distances, reduced.

    >>> import npgrad
    >>> F = npgrad.nn.functional
    >>> F.triplet_margin_loss(npgrad.tensor([[0.]]), npgrad.tensor([[1.]]), npgrad.tensor([[3.]]),
    ...                       eps=0.)
    tensor(0.)
    """
    from .pointwise import clamp_min, minimum
    from .distance import pairwise_distance

    enum = _enum_of(size_average, reduce, reduction)
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    _TRIPLET(anchor, positive, negative, margin, p, eps, swap, enum)
    reduction = _ENUM_NAMES[enum]
    a, pos, neg = anchor._data.ndim, positive._data.ndim, negative._data.ndim
    if not a == pos == neg:
        raise RuntimeError("The anchor, positive, and negative tensors are expected to have the "
                           f"same number of dimensions, but got: anchor {a}D, positive {pos}D, "
                           f"and negative {neg}D inputs")
    dist_pos = pairwise_distance(anchor, positive, p, eps)
    dist_neg = pairwise_distance(anchor, negative, p, eps)
    if swap:
        dist_neg = minimum(dist_neg, pairwise_distance(positive, negative, p, eps))
    return _reduce(clamp_min(margin + dist_pos - dist_neg, 0), reduction)


def poisson_nll_loss(input: Tensor, target: Tensor, log_input: bool = True, full: bool = False,
                     size_average: Any = None, eps: float = 1e-8, reduce: Any = None,
                     reduction: str = "mean") -> Tensor:
    """Poisson negative log likelihood: ``exp(input) - target * input`` (``log_input``) or
    ``input - target * log(input + eps)``; ``full`` adds Stirling's term where target > 1.

    >>> import npgrad
    >>> F = npgrad.nn.functional
    >>> F.poisson_nll_loss(npgrad.tensor([0.]), npgrad.tensor([1.]))
    tensor(1.)
    """
    import math

    from .pointwise import exp, log, masked_fill

    reduction = _legacy_reduction(size_average, reduce, reduction)
    if reduction != "none" and reduction != "mean" and reduction != "sum":
        raise ValueError(reduction + " is not a valid value for reduction")
    _POISSON(input, target, log_input, full, eps, _enum(reduction))
    if log_input:
        loss = exp(input) - target * input
    else:
        loss = input - target * log(input + eps)
    if full:
        stirling = target * log(target) - target + 0.5 * log(2 * math.pi * target)
        loss = loss + masked_fill(stirling, target <= 1, 0)
    return _reduce(loss, reduction)


def gaussian_nll_loss(input: Tensor, target: Tensor, var: Any, full: bool = False,
                      eps: float = 1e-6, reduction: str = "mean") -> Tensor:
    """Gaussian negative log likelihood ``0.5 * (log(var) + (input - target)**2 / var)``,
    ``var`` clamped to ``eps`` without affecting its gradient (as torch).

    >>> import npgrad
    >>> F = npgrad.nn.functional
    >>> F.gaussian_nll_loss(npgrad.tensor([1.]), npgrad.tensor([0.]), npgrad.tensor([1.]))
    tensor(0.5000)
    """
    import math

    from .pointwise import log
    from .reduction import any as any_
    from .shape import clone, unsqueeze

    if isinstance(var, float):
        if var < 0:
            raise ValueError("var has negative entry/entries")
        from .._creation import ones_like

        var = var * ones_like(input)
    elif not isinstance(var, Tensor):
        any_(var < 0)  # what torch.any(var < 0) raises for a non-Tensor
    elif (var._data < 0).any():
        raise ValueError("var has negative entry/entries")
    checks.python_method(var, "size", Tensor)
    checks.python_method(input, "size", Tensor)
    in_shape, v_shape = input._data.shape, var._data.shape
    if v_shape != in_shape:
        if in_shape[:-1] == v_shape:
            var = unsqueeze(var, -1)
        elif not (len(in_shape) == len(v_shape) and sum(
                y for x, y in zip(in_shape, v_shape) if x != y) == 1):
            raise ValueError("var is of incorrect size")
    if reduction not in _REDUCTIONS:
        raise ValueError(reduction + " is not valid")
    var = clone(var)
    # torch clamps under no_grad: the clamp changes the values, not the gradient path
    if var._data.dtype.kind in "biu":
        raise RuntimeError("result type Float can't be cast to the desired output type "
                           f"{checks.cpp_name(var._data.dtype)}")
    np.maximum(var._data, eps, out=var._data)
    loss = 0.5 * (log(var) + (input - target) ** 2 / var)
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    return _reduce(loss, reduction)

