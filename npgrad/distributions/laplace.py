"""``Laplace(loc, scale)``: the double exponential, reparameterisable."""
from __future__ import annotations

from typing import Any

from .._size import Size
from .._tensor import Tensor
from . import constraints
from .distribution import _LocScale
from .utils import _finfo, uniform

__all__ = ["Laplace"]


class Laplace(_LocScale):
    """Density ``exp(-|x - loc| / scale) / (2 * scale)``.

    >>> import npgrad as torch
    >>> d = torch.distributions.Laplace(0.0, 1.0)
    >>> d.log_prob(torch.tensor(0.0)), d.variance
    (tensor(-0.6931), tensor(2.))
    """

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    @property
    def variance(self) -> Tensor:
        return 2 * self.scale.pow(2)

    @property
    def stddev(self) -> Tensor:
        return (2 ** 0.5) * self.scale

    def rsample(self, sample_shape: Any = Size()) -> Tensor:
        # u in (-1, 1): the open lower end keeps log1p(-|u|) finite
        eps = float(_finfo(self.loc.dtype).eps)
        u = uniform(self._extended_shape(sample_shape), self.loc, eps - 1, 1)
        return self.loc - self.scale * u.sign() * (-u.abs()).log1p()

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return -(2 * self.scale).log() - (value - self.loc).abs() / self.scale

    def cdf(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return 0.5 - 0.5 * (value - self.loc).sign() \
            * (-(value - self.loc).abs() / self.scale).expm1()

    def entropy(self) -> Tensor:
        return 1 + (2 * self.scale).log()
