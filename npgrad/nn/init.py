"""npgrad.nn.init: in-place parameter initialisers with torch's formulas and random streams.

Every initialiser writes under ``no_grad``, so it works on leaves that require grad
and records nothing.
"""
from __future__ import annotations

import math
import warnings
from typing import Any

from .._tensor import Tensor
from ..autograd.grad_mode import no_grad

__all__ = ["calculate_gain", "uniform_", "normal_", "trunc_normal_", "constant_", "ones_",
           "zeros_", "eye_", "xavier_uniform_", "xavier_normal_", "kaiming_uniform_",
           "kaiming_normal_"]


def calculate_gain(nonlinearity: str, param: Any = None) -> float:
    """The recommended scale of weights for ``nonlinearity`` (e.g. ``relu`` -> sqrt(2)).

    >>> calculate_gain("tanh")
    1.6666666666666667
    """
    linear_fns = ("linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d",
                  "conv_transpose2d", "conv_transpose3d")
    if nonlinearity in linear_fns or nonlinearity == "sigmoid":
        return 1
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        if param is None:
            slope = 0.01
        elif not isinstance(param, bool) and isinstance(param, (int, float)):
            slope = param
        else:
            raise ValueError(f"negative_slope {param} not a valid number")
        return math.sqrt(2.0 / (1 + slope ** 2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError(f"Unsupported nonlinearity {nonlinearity}")


def _calculate_fan_in_and_fan_out(tensor: Tensor) -> tuple:
    if tensor.dim() < 2:
        raise ValueError("Fan in and fan out can not be computed for tensor with fewer than 2 "
                         "dimensions")
    receptive = 1
    for s in tensor.shape[2:]:
        receptive *= s
    return tensor.shape[1] * receptive, tensor.shape[0] * receptive


def _calculate_correct_fan(tensor: Tensor, mode: str) -> int:
    mode = mode.lower()
    valid_modes = ["fan_in", "fan_out"]
    if mode not in valid_modes:
        raise ValueError(f"Mode {mode} not supported, please use one of {valid_modes}")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return fan_in if mode == "fan_in" else fan_out


def uniform_(tensor: Tensor, a: float = 0.0, b: float = 1.0, generator: Any = None) -> Tensor:
    with no_grad():
        return tensor.uniform_(a, b, generator=generator)


def normal_(tensor: Tensor, mean: float = 0.0, std: float = 1.0, generator: Any = None) -> Tensor:
    with no_grad():
        return tensor.normal_(mean, std, generator=generator)


def _norm_cdf(x: float) -> float:
    return (1.0 + math.erf(x / math.sqrt(2.0))) / 2.0


# Note [trunc_normal_ by rejection]
# torch 2.13 truncates by rejection, drawing from its generator in this order: when the
# interval holds more than 30% of the mass, ``normal_`` into the tensor, then a whole fresh
# ``normal_`` tensor per round for the values still outside ``[a, b]``; otherwise uniform
# candidates in ``[a, b]``, each accepted when ``log(u) <= log_pdf - log_peak`` for a second
# uniform ``u``, with whole fresh tensors of both per round.  Following the same steps draws
# the same words, so the values are torch's.

def trunc_normal_(tensor: Tensor, mean: float = 0.0, std: float = 1.0, a: float = -2.0,
                  b: float = 2.0, generator: Any = None) -> Tensor:
    """Normal values truncated to ``[a, b]``, drawn as torch draws them (see Note
    [trunc_normal_ by rejection])."""
    import numpy as np

    from .. import _sampling
    from .._random import get_generator
    from .._tensor_base import bump_version

    if (mean < a - 2 * std) or (mean > b + 2 * std):
        warnings.warn("mean is more than 2 std from [a, b] in nn.init.trunc_normal_. "
                      "The distribution of values may be incorrect.", stacklevel=2)
    gen = get_generator(generator)
    data = tensor._data
    dt = data.dtype
    n = data.size
    with no_grad():
        p = _norm_cdf((b - mean) / std) - _norm_cdf((a - mean) / std)
        if p > 0.3:
            lo, hi = float(dt.type(a)), float(dt.type(b))
            tensor.normal_(mean, std, generator=generator)
            result = _sampling.to_fill_order(data, data)
            while True:
                outside = (result < lo) | (result > hi)
                if not outside.any():
                    break
                fresh = _sampling.normal(gen, n, dt, float(mean), float(std))
                result = np.where(outside, fresh, result)
        else:
            mode = max(a, min(mean, b))
            log_peak = -0.5 * ((mode - mean) / std) ** 2
            cast = dt.type

            def log_pdf(c: Any) -> Any:  # torch's in-place chain, each scalar in the dtype
                z = (c - cast(mean)) / cast(std)
                return (z * z) * cast(-0.5) - cast(log_peak)

            def rejected(c: Any) -> Any:
                with np.errstate(divide="ignore"):
                    return np.log(_sampling.uniform(gen, n, dt, 0.0, 1.0)) > log_pdf(c)

            result = _sampling.uniform(gen, n, dt, float(a), float(b))
            pending = rejected(result)
            while pending.any():
                candidates = _sampling.uniform(gen, n, dt, float(a), float(b))
                result = np.where(pending, candidates, result)
                pending = np.where(pending, rejected(candidates), pending)
        np.copyto(data, _sampling.from_fill_order(result.astype(dt), data))
        bump_version(tensor)
    return tensor


def constant_(tensor: Tensor, val: float) -> Tensor:
    with no_grad():
        return tensor.fill_(val)


def ones_(tensor: Tensor) -> Tensor:
    with no_grad():
        return tensor.fill_(1.0)


def zeros_(tensor: Tensor) -> Tensor:
    with no_grad():
        return tensor.zero_()


def eye_(tensor: Tensor) -> Tensor:
    import numpy as np

    from .._tensor_base import bump_version

    if tensor.dim() != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    with no_grad():
        np.copyto(tensor._data, np.eye(*tensor.shape), casting="unsafe")
        bump_version(tensor)
    return tensor


def xavier_uniform_(tensor: Tensor, gain: float = 1.0, generator: Any = None) -> Tensor:
    """Uniform in ``±gain * sqrt(6 / (fan_in + fan_out))`` (Glorot)."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    bound = math.sqrt(3.0) * std  # torch's order of operations, so the float bound is its own
    return uniform_(tensor, -bound, bound, generator)


def xavier_normal_(tensor: Tensor, gain: float = 1.0, generator: Any = None) -> Tensor:
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    return normal_(tensor, 0.0, std, generator)


def _kaiming_std(tensor: Tensor, a: float, mode: str, nonlinearity: str) -> float:
    fan = _calculate_correct_fan(tensor, mode)
    return calculate_gain(nonlinearity, a) / math.sqrt(fan)


def kaiming_uniform_(tensor: Tensor, a: float = 0, mode: str = "fan_in",
                     nonlinearity: str = "leaky_relu", generator: Any = None) -> Tensor:
    """Uniform in ``±gain * sqrt(3 / fan)`` (He); nn.Linear uses ``a=sqrt(5)``."""
    if 0 in tensor.shape:
        warnings.warn("Initializing zero-element tensors is a no-op")
        return tensor
    bound = math.sqrt(3.0) * _kaiming_std(tensor, a, mode, nonlinearity)
    return uniform_(tensor, -bound, bound, generator)


def kaiming_normal_(tensor: Tensor, a: float = 0, mode: str = "fan_in",
                    nonlinearity: str = "leaky_relu", generator: Any = None) -> Tensor:
    if 0 in tensor.shape:
        warnings.warn("Initializing zero-element tensors is a no-op")
        return tensor
    return normal_(tensor, 0.0, _kaiming_std(tensor, a, mode, nonlinearity), generator)
