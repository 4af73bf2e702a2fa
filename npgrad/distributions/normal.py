"""``Normal(loc, scale)``: the Gaussian, reparameterisable."""
from __future__ import annotations

import math
from numbers import Real
from typing import Any

from .._size import Size
from .._tensor import Tensor
from . import constraints
from .distribution import _LocScale
from .utils import standard_normal

__all__ = ["Normal"]


class Normal(_LocScale):
    """The normal distribution with mean ``loc`` and standard deviation ``scale``.

    >>> import npgrad as torch
    >>> d = torch.distributions.Normal(0.0, 1.0)
    >>> d
    Normal(loc: 0.0, scale: 1.0)
    >>> d.log_prob(torch.tensor(0.0))
    tensor(-0.9189)
    """

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    @property
    def stddev(self) -> Tensor:
        return self.scale

    @property
    def variance(self) -> Tensor:
        return self.stddev.pow(2)

    def rsample(self, sample_shape: Any = Size()) -> Tensor:
        eps = standard_normal(self._extended_shape(sample_shape), self.loc)
        return self.loc + eps * self.scale

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        var = self.scale ** 2
        log_scale = math.log(self.scale) if isinstance(self.scale, Real) else self.scale.log()
        return -((value - self.loc) ** 2) / (2 * var) - log_scale \
            - math.log(math.sqrt(2 * math.pi))

    def cdf(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return 0.5 * (1 + ((value - self.loc) * self.scale.reciprocal()
                           / math.sqrt(2)).erf())

    def entropy(self) -> Tensor:
        return 0.5 + 0.5 * math.log(2 * math.pi) + self.scale.log()
