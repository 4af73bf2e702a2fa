"""Loss ops with torch's fused grad_fns: MseLossBackward0 and NllLossBackward0."""
from __future__ import annotations

from typing import Any

import numpy as np

from .. import _dtype
from .._tensor import Tensor
from ._core import Node, SavedTensor, binary_arrays, record, saved

_REDUCTIONS = ("none", "mean", "sum")


def _reduction_check(reduction: str) -> None:
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{reduction} is not a valid value for reduction")


class MseLossBackward0(Node):
    __slots__ = ("self_", "target", "reduction")
    _saved_fields = ("self_", "target")

    def backward(self, grad: Tensor) -> tuple:
        x, y = saved(self, "self_"), saved(self, "target")
        diff = x - y
        scale = 2.0 / diff._data.size if self.reduction == "mean" else 2.0
        g = grad * diff * scale
        return (g if self.next_functions[0][0] is not None else None,
                -g if self.next_functions[1][0] is not None else None)


def mse_loss(input: Tensor, target: Tensor, size_average: Any = None, reduce: Any = None,
             reduction: str = "mean", weight: Any = None) -> Tensor:
    """Mean squared error (grad_fn ``MseLossBackward0``)."""
    _reduction_check(reduction)
    if input._data.shape != target._data.shape:
        import warnings

        warnings.warn(
            f"Using a target size ({target.shape}) that is different to the input size "
            f"({input.shape}). This will likely lead to incorrect results due to broadcasting. "
            "Please ensure they have the same size.", UserWarning, stacklevel=2)
    a, b = binary_arrays(input, target)
    sq = np.square(a - b)
    out = sq if reduction == "none" else (sq.mean() if reduction == "mean" else sq.sum())
    res, node = record(MseLossBackward0, (input, target), np.asarray(out, dtype=sq.dtype))
    if node is not None:
        node.self_ = SavedTensor(input)
        node.target = SavedTensor(target)
        node.reduction = reduction
    return res


class NllLossBackward0(Node):
    __slots__ = ("target", "weight", "reduction", "ignore_index", "total_weight", "in_shape")
    _saved_fields = ("target",)

    def backward(self, grad: Tensor) -> tuple:
        from .._tensor import wrap
        from .._mode import _tls

        target = saved(self, "target")._data
        classes = self.in_shape[1] if len(self.in_shape) > 1 else self.in_shape[0]
        w = self.weight if self.weight is not None else np.ones(classes, dtype=grad._data.dtype)
        flat_target = target.reshape(-1)
        valid = flat_target != self.ignore_index
        safe = np.where(valid, flat_target, 0)
        coeff = -w[safe] * valid
        if self.reduction == "mean":
            coeff = coeff / self.total_weight
        coeff = coeff.astype(grad._data.dtype)
        # d loss / d input[n, target_n] = coeff_n * upstream
        one_hot = np.zeros((flat_target.size, classes), dtype=grad._data.dtype)
        one_hot[np.arange(flat_target.size), safe] = coeff
        layout = _class_last_shape(self.in_shape)
        scatter = np.moveaxis(one_hot.reshape(layout), -1, 1 if len(self.in_shape) > 1 else 0)
        scatter_t = wrap(np.ascontiguousarray(scatter), _tls.mode)
        if self.reduction == "none":
            g = grad.unsqueeze(1) if len(self.in_shape) > 1 else grad
            return g * scatter_t,
        return grad * scatter_t,


def _class_last_shape(in_shape: tuple) -> tuple:
    if len(in_shape) == 1:
        return in_shape
    return (in_shape[0],) + tuple(in_shape[2:]) + (in_shape[1],)


def nll_loss(input: Tensor, target: Tensor, weight: Tensor | None = None, size_average: Any = None,
             ignore_index: int = -100, reduce: Any = None, reduction: str = "mean") -> Tensor:
    """Negative log-likelihood of class indices (grad_fn ``NllLossBackward0``)."""
    _reduction_check(reduction)
    x = input._data
    t = target._data
    if t.dtype.kind not in "iu":
        raise RuntimeError("expected scalar type Long but found "
                           + _dtype.from_np(t.dtype).scalar_name)
    if x.ndim == 1:
        if t.ndim != 0:
            raise ValueError(f"Expected input batch_size ({1}) to match target batch_size "
                             f"({t.shape[0]}).")
        classes_last = x.reshape(1, -1)
        flat_t = t.reshape(1)
    else:
        if t.ndim == 0 or x.shape[0] != t.shape[0]:
            raise ValueError(f"Expected input batch_size ({x.shape[0]}) to match target "
                             f"batch_size ({t.shape[0] if t.ndim else 0}).")
        classes_last = np.moveaxis(x, 1, -1).reshape(-1, x.shape[1])
        flat_t = t.reshape(-1)
    classes = classes_last.shape[1]
    valid = flat_t != ignore_index
    if np.any((flat_t[valid] < 0) | (flat_t[valid] >= classes)):
        bad = int(flat_t[valid][(flat_t[valid] < 0) | (flat_t[valid] >= classes)][0])
        raise IndexError(f"Target {bad} is out of bounds.")
    safe = np.where(valid, flat_t, 0)
    w = weight._data.astype(x.dtype) if weight is not None else np.ones(classes, dtype=x.dtype)
    wt = w[safe] * valid
    picked = -classes_last[np.arange(flat_t.size), safe] * wt
    total_weight = wt.sum()
    if reduction == "none":
        out = picked.reshape(t.shape)
    elif reduction == "sum":
        out = picked.sum()
    else:
        out = picked.sum() / total_weight
    res, node = record(NllLossBackward0, (input,), np.asarray(out, dtype=x.dtype))
    if node is not None:
        node.target = SavedTensor(target)
        node.weight = w if weight is not None else None
        node.reduction = reduction
        node.ignore_index = ignore_index
        node.total_weight = total_weight
        node.in_shape = x.shape
    return res


def cross_entropy(input: Tensor, target: Tensor, weight: Tensor | None = None,
                  size_average: Any = None, ignore_index: int = -100, reduce: Any = None,
                  reduction: str = "mean", label_smoothing: float = 0.0) -> Tensor:
    """log_softmax over the class dimension followed by nll_loss (class-index targets)."""
    from .reduction import log_softmax

    class_dim = 0 if input._data.ndim == 1 else 1
    return nll_loss(log_softmax(input, class_dim), target, weight, ignore_index=ignore_index,
                    reduction=reduction)
