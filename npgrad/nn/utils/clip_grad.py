"""Gradient clipping: rescale (or clamp) the ``.grad`` of parameters in place, as torch does.

The norm is taken over the per-parameter gradient norms, as if every gradient
were one long vector; the gradients are then multiplied by
``min(max_norm / (total_norm + 1e-6), 1)``, never enlarged.  Everything runs
under ``no_grad``: clipping is an update of ``.grad``, not part of any graph.
"""
from __future__ import annotations

import types
import warnings
from typing import Any

from ... import _creation
from ..._ops.reduction import vector_norm
from ..._ops.shape import stack
from ..._tensor import Tensor
from ...autograd.grad_mode import no_grad

EMPTY_GENERATOR_MSG = "`parameters` is an empty generator, no gradient clipping will occur."


def _as_list(parameters: Any, warn_if_empty_generator: bool = False) -> list:
    if isinstance(parameters, Tensor):
        return [parameters]
    is_generator = isinstance(parameters, types.GeneratorType)
    parameters = list(parameters)  # a generator may be walked only once
    if warn_if_empty_generator and is_generator and not parameters:
        warnings.warn(EMPTY_GENERATOR_MSG, stacklevel=3)
    return parameters


@no_grad()
def get_total_norm(tensors: Any, norm_type: float = 2.0, error_if_nonfinite: bool = False,
                   foreach: bool | None = None) -> Tensor:
    """The ``norm_type``-norm of all ``tensors`` together (of their per-tensor norms).

    >>> import npgrad
    >>> from npgrad.nn.utils import get_total_norm
    >>> get_total_norm([npgrad.tensor([3.]), npgrad.tensor([4.])])
    tensor(5.)
    """
    tensors = _as_list(tensors)
    norm_type = float(norm_type)
    if not tensors:
        return _creation.tensor(0.0)
    norms = [vector_norm(t, norm_type) for t in tensors]
    total = vector_norm(stack(norms), norm_type)
    value = float(total)
    if error_if_nonfinite and (value != value or value in (float("inf"), float("-inf"))):
        raise RuntimeError(
            f"The total norm of order {norm_type} for gradients from `parameters` is "
            "non-finite, so it cannot be clipped. To disable this error and scale the gradients "
            "by the non-finite norm anyway, set `error_if_nonfinite=False`")
    return total


@no_grad()
def clip_grads_with_norm_(parameters: Any, max_norm: float, total_norm: Tensor,
                          foreach: bool | None = None) -> None:
    """Scale the parameters' gradients by ``min(max_norm / (total_norm + 1e-6), 1)``, in place."""
    grads = [p.grad for p in _as_list(parameters) if p.grad is not None]
    if not grads:
        return
    scale = (float(max_norm) / (total_norm + 1e-6)).clamp(max=1.0)
    for g in grads:
        g.mul_(scale.to(g.dtype))


def clip_grad_norm_(parameters: Any, max_norm: float, norm_type: float = 2.0,
                    error_if_nonfinite: bool = False, foreach: bool | None = None) -> Tensor:
    """Rescale the gradients so that their total norm is at most ``max_norm``; return that norm.

    >>> import npgrad
    >>> w = npgrad.tensor([1., 1.], requires_grad=True)
    >>> (w * npgrad.tensor([3., 4.])).sum().backward()
    >>> npgrad.nn.utils.clip_grad_norm_([w], 1.0)
    tensor(5.)
    >>> w.grad
    tensor([0.6000, 0.8000])
    """
    parameters = _as_list(parameters, warn_if_empty_generator=True)
    grads = [p.grad for p in parameters if p.grad is not None]
    total_norm = get_total_norm(grads, norm_type, error_if_nonfinite, foreach)
    clip_grads_with_norm_(parameters, max_norm, total_norm, foreach)
    return total_norm


def clip_grad_norm(parameters: Any, max_norm: float, norm_type: float = 2.0,
                   error_if_nonfinite: bool = False, foreach: bool | None = None) -> Tensor:
    """Deprecated spelling of ``clip_grad_norm_`` (torch warns, then does the same)."""
    warnings.warn("`torch.nn.utils.clip_grad_norm` is now deprecated in favor of "
                  "`torch.nn.utils.clip_grad_norm_`.", FutureWarning, stacklevel=2)
    return clip_grad_norm_(parameters, max_norm, norm_type, error_if_nonfinite, foreach)


@no_grad()
def clip_grad_value_(parameters: Any, clip_value: float, foreach: bool | None = None) -> None:
    """Clamp every gradient into ``[-clip_value, clip_value]``, in place.

    >>> import npgrad
    >>> w = npgrad.tensor([1., 1.], requires_grad=True)
    >>> (w * npgrad.tensor([-3., 0.5])).sum().backward()
    >>> npgrad.nn.utils.clip_grad_value_([w], 1.0)
    >>> w.grad
    tensor([-1.0000,  0.5000])
    """
    clip_value = float(clip_value)
    for p in _as_list(parameters):
        if p.grad is not None:
            p.grad.clamp_(-clip_value, clip_value)


