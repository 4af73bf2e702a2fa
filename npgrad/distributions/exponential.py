"""``Exponential(rate)``: waiting times, reparameterisable."""
from __future__ import annotations

from numbers import Number
from typing import Any

from .._size import Size
from .._tensor import Tensor
from . import constraints
from .distribution import Distribution
from .utils import broadcast_all, standard_exponential

__all__ = ["Exponential"]


class Exponential(Distribution):
    """Density ``rate * exp(-rate * x)`` on ``x >= 0``.

    >>> import npgrad as torch
    >>> d = torch.distributions.Exponential(torch.tensor([2.0]))
    >>> d.mean, d.log_prob(torch.tensor([0.0]))
    (tensor([0.5000]), tensor([0.6931]))
    """

    arg_constraints = {"rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True

    def __init__(self, rate: Any, validate_args: bool | None = None) -> None:
        (self.rate,) = broadcast_all(rate)
        batch_shape = Size() if isinstance(rate, Number) else self.rate.size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Exponential:
        shape = Size(batch_shape)
        return self._expanded(shape, {"rate": self.rate.expand(shape)})

    @property
    def mean(self) -> Tensor:
        return self.rate.reciprocal()

    @property
    def mode(self) -> Tensor:
        return self.rate * 0

    @property
    def stddev(self) -> Tensor:
        return self.rate.reciprocal()

    @property
    def variance(self) -> Tensor:
        return self.rate.pow(-2)

    def rsample(self, sample_shape: Any = Size()) -> Tensor:
        noise = standard_exponential(self._extended_shape(sample_shape), self.rate)
        return noise / self.rate

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return self.rate.log() - self.rate * value

    def cdf(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return 1 - (-self.rate * value).exp()

    def entropy(self) -> Tensor:
        return 1.0 - self.rate.log()
