"""Helpers shared by the distributions: broadcasting parameters, probs <-> logits, draws.

Note [Sampling through npgrad's generator]
Draws come from the default generator through the samplers torch's distributions call
(``empty(shape).normal_()``, ``rand``, ``uniform_``, ``exponential_``, ``multinomial``),
so after ``manual_seed`` a distribution draws torch's values bit for bit.
Reparameterised samples (``rsample``) build the draw from parameter-free noise
with npgrad ops, so gradients flow to the parameters.
"""
from __future__ import annotations

import math
import numbers
from functools import update_wrapper
from typing import Any, Callable

import numpy as np

from .. import _random, _sampling
from .._creation import multinomial, tensor
from .._tensor import Tensor
from .._size import Size

__all__ = ["broadcast_all", "clamp_probs", "lazy_property", "logits_to_probs",
           "probs_to_logits"]


def broadcast_all(*values: Any) -> tuple[Tensor, ...]:
    """Numbers become tensors (of the first tensor's dtype, else the default); all broadcast.

    >>> import npgrad as torch
    >>> from npgrad.distributions.utils import broadcast_all
    >>> a, b = broadcast_all(torch.zeros(2), 1.0)
    >>> b
    tensor([1., 1.])
    """
    if not all(isinstance(v, (Tensor, numbers.Number)) for v in values):
        raise ValueError("Input arguments must all be instances of Number, torch.Tensor or "
                         "objects implementing __torch_function__.")
    dtype = next((v.dtype for v in values if isinstance(v, Tensor)), None)
    if dtype is None:
        from .. import get_default_dtype
        dtype = get_default_dtype()
    tensors = [v if isinstance(v, Tensor) else tensor(v, dtype=dtype) for v in values]
    from .. import broadcast_tensors
    return tuple(broadcast_tensors(*tensors))


def _finfo(dtype: Any) -> np.finfo:
    return np.finfo(dtype.np_dtype)


def clamp_probs(probs: Tensor) -> Tensor:
    """Keep probabilities ``eps`` away from 0 and 1 (so their logs stay finite).

    >>> import npgrad as torch
    >>> from npgrad.distributions.utils import clamp_probs
    >>> clamp_probs(torch.tensor([0.0, 0.5])).log()
    tensor([-15.9424,  -0.6931])
    """
    eps = float(_finfo(probs.dtype).eps)
    return probs.clamp(min=eps, max=1 - eps)


def probs_to_logits(probs: Tensor, is_binary: bool = False) -> Tensor:
    """Log-odds (binary) or log-probabilities (categorical) of ``probs``.

    >>> import npgrad as torch
    >>> from npgrad.distributions.utils import probs_to_logits
    >>> probs_to_logits(torch.tensor([0.5, 0.8]), is_binary=True)
    tensor([0.0000, 1.3863])
    """
    ps = clamp_probs(probs)
    if is_binary:
        return ps.log() - (-ps).log1p()
    return ps.log()


def logits_to_probs(logits: Tensor, is_binary: bool = False) -> Tensor:
    """Sigmoid (binary) or softmax over the last dim (categorical) of ``logits``.

    >>> import npgrad as torch
    >>> from npgrad.distributions.utils import logits_to_probs
    >>> logits_to_probs(torch.zeros(4))
    tensor([0.2500, 0.2500, 0.2500, 0.2500])
    """
    if is_binary:
        return logits.sigmoid()
    return logits.softmax(-1)


class lazy_property:  # noqa: N801 - torch's name
    """A property computed on first access and then stored on the instance.

    ``probs``/``logits`` use it, so whichever was not given is derived only when read.
    """

    def __init__(self, wrapped: Callable[[Any], Any]) -> None:
        self.wrapped = wrapped
        update_wrapper(self, wrapped)  # type: ignore[arg-type]

    def __get__(self, instance: Any, obj_type: Any = None) -> Any:
        if instance is None:
            return self
        value = self.wrapped(instance)
        instance.__dict__[self.wrapped.__name__] = value
        return value


def sum_rightmost(value: Tensor, dim: int) -> Tensor:
    """Sum out the last ``dim`` dims of ``value``.

    >>> import npgrad as torch
    >>> from npgrad.distributions.utils import sum_rightmost
    >>> sum_rightmost(torch.ones(2, 3, 4), 2)
    tensor([12., 12.])
    """
    if dim == 0:
        return value
    return value.reshape(*value.shape[:value.dim() - dim], -1).sum(-1)


def _noise(values: np.ndarray, shape: Size) -> Tensor:
    return tensor(values.reshape(tuple(shape)))


def standard_normal(shape: Size, like: Tensor) -> Tensor:
    """N(0, 1) noise of ``shape`` in ``like``'s dtype (no gradient): torch's
    ``empty(shape).normal_()``."""
    dt = like._data.dtype
    n = math.prod(tuple(shape))
    return _noise(_sampling.normal(_random.default_generator, n, dt, 0.0, 1.0), shape)


def uniform(shape: Size, like: Tensor, low: float = 0.0, high: float = 1.0) -> Tensor:
    """U[low, high) noise of ``shape`` in ``like``'s dtype (no gradient): torch's ``rand`` /
    ``uniform_(low, high)``."""
    dt = like._data.dtype
    n = math.prod(tuple(shape))
    return _noise(_sampling.uniform(_random.default_generator, n, dt, low, high), shape)


def standard_exponential(shape: Size, like: Tensor) -> Tensor:
    """Exp(1) noise of ``shape`` in ``like``'s dtype (no gradient): torch's
    ``exponential_()``."""
    dt = like._data.dtype
    n = math.prod(tuple(shape))
    drawn = _sampling.exponential(_random.default_generator, n, 1.0)
    return _noise(_sampling.to_dtype(drawn, dt), shape)


def categorical_indices(probs: Tensor, sample_shape: Size) -> Tensor:
    """int64 draws of category indices, ``sample_shape + probs.shape[:-1]``: torch's
    ``multinomial(probs.reshape(-1, K), sample_shape.numel(), True).T``."""
    k = probs.shape[-1]
    n = math.prod(tuple(sample_shape))
    rows = probs.detach().reshape(-1, k)
    drawn = multinomial(rows, n, True)._data.T
    shape = tuple(sample_shape) + tuple(probs.shape[:-1])
    return tensor(np.ascontiguousarray(drawn).reshape(shape))
