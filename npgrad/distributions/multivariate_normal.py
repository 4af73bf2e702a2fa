"""``MultivariateNormal``: a Gaussian over vectors, by covariance, precision or scale_tril."""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from .._size import Size
from .._tensor import Tensor
from . import constraints
from ._triangular import cholesky, solve_lower
from .distribution import Distribution
from .utils import lazy_property, standard_normal

__all__ = ["MultivariateNormal"]


def _broadcast_shapes(*shapes: Any) -> Size:
    return Size(np.broadcast_shapes(*(tuple(s) for s in shapes)))


def _eye_like(matrix: Tensor) -> Tensor:
    from .. import eye
    return eye(matrix.shape[-1], dtype=matrix.dtype)


def _precision_to_scale_tril(precision: Tensor) -> Tensor:
    """Lower ``L`` with ``L @ L.mT == inverse(precision)``, computed as torch does.

    The Cholesky factor of the *flipped* precision, flipped back and transposed,
    is the inverse of ``L``: no explicit matrix inverse is needed.
    """
    lf = cholesky(precision.flip((-2, -1)))
    l_inv = lf.flip((-2, -1)).mT
    return solve_lower(l_inv, _eye_like(precision).expand(l_inv.shape))


def _batch_mahalanobis(lower: Tensor, x: Tensor) -> Tensor:
    """``x^T (L L^T)^{-1} x`` over broadcast batches: ``|L^{-1} x|^2``."""
    z = solve_lower(lower, x.unsqueeze(-1))
    return z.squeeze(-1).pow(2).sum(-1)


class MultivariateNormal(Distribution):
    """A Gaussian with mean ``loc`` and one of ``covariance_matrix``,
    ``precision_matrix`` or ``scale_tril`` (the Cholesky factor of the covariance).

    >>> import npgrad as torch
    >>> d = torch.distributions.MultivariateNormal(torch.zeros(2), torch.eye(2))
    >>> d
    MultivariateNormal(loc: torch.Size([2]), covariance_matrix: torch.Size([2, 2]))
    >>> d.log_prob(torch.zeros(2))
    tensor(-1.8379)
    """

    arg_constraints = {"loc": constraints.real_vector,
                       "covariance_matrix": constraints.positive_definite,
                       "precision_matrix": constraints.positive_definite,
                       "scale_tril": constraints.lower_cholesky}
    support = constraints.real_vector
    has_rsample = True

    def __init__(self, loc: Tensor, covariance_matrix: Tensor | None = None,
                 precision_matrix: Tensor | None = None, scale_tril: Tensor | None = None,
                 validate_args: bool | None = None) -> None:
        if loc.dim() < 1:
            raise ValueError("loc must be at least one-dimensional.")
        given = [m is not None for m in (covariance_matrix, scale_tril, precision_matrix)]
        if sum(given) != 1:
            raise ValueError("Exactly one of covariance_matrix or precision_matrix or "
                             "scale_tril may be specified.")
        name, matrix = next((n, m) for n, m in (("scale_tril", scale_tril),
                                                ("covariance_matrix", covariance_matrix),
                                                ("precision_matrix", precision_matrix))
                            if m is not None)
        if matrix.dim() < 2:
            label = "scale_tril matrix" if name == "scale_tril" else name
            raise ValueError(f"{label} must be at least two-dimensional, with optional "
                             "leading batch dimensions")
        batch_shape = _broadcast_shapes(matrix.shape[:-2], loc.shape[:-1])
        setattr(self, name, matrix.expand(*batch_shape, -1, -1))
        self.loc = loc.expand(*batch_shape, -1)
        super().__init__(batch_shape, self.loc.shape[-1:], validate_args=validate_args)
        if scale_tril is not None:
            self._unbroadcasted_scale_tril = scale_tril
        elif covariance_matrix is not None:
            self._unbroadcasted_scale_tril = cholesky(covariance_matrix)
        else:
            self._unbroadcasted_scale_tril = _precision_to_scale_tril(matrix)

    def expand(self, batch_shape: Any, _instance: Any = None) -> MultivariateNormal:
        shape = Size(batch_shape)
        matrix_shape = shape + self.event_shape + self.event_shape
        params: dict[str, Any] = {"loc": self.loc.expand(shape + self.event_shape),
                                  "_unbroadcasted_scale_tril": self._unbroadcasted_scale_tril}
        for name in ("covariance_matrix", "scale_tril", "precision_matrix"):
            if name in self.__dict__:
                params[name] = self.__dict__[name].expand(matrix_shape)
        return self._expanded(shape, params)

    def _matrix_shape(self) -> Size:
        return self._batch_shape + self._event_shape + self._event_shape

    @lazy_property
    def scale_tril(self) -> Tensor:
        return self._unbroadcasted_scale_tril.expand(self._matrix_shape())

    @lazy_property
    def covariance_matrix(self) -> Tensor:
        lower = self._unbroadcasted_scale_tril
        return (lower @ lower.mT).expand(self._matrix_shape())

    @lazy_property
    def precision_matrix(self) -> Tensor:
        lower = self._unbroadcasted_scale_tril
        inverse = solve_lower(lower, _eye_like(lower).expand(lower.shape))
        return (inverse.mT @ inverse).expand(self._matrix_shape())

    @property
    def mean(self) -> Tensor:
        return self.loc

    @property
    def mode(self) -> Tensor:
        return self.loc

    @property
    def variance(self) -> Tensor:
        return self._unbroadcasted_scale_tril.pow(2).sum(-1).expand(
            self._batch_shape + self._event_shape)

    def rsample(self, sample_shape: Any = Size()) -> Tensor:
        eps = standard_normal(self._extended_shape(sample_shape), self.loc)
        return self.loc + (self._unbroadcasted_scale_tril @ eps.unsqueeze(-1)).squeeze(-1)

    def _half_log_det(self) -> Tensor:
        return self._unbroadcasted_scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        m = _batch_mahalanobis(self._unbroadcasted_scale_tril, value - self.loc)
        return -0.5 * (self._event_shape[0] * math.log(2 * math.pi) + m) - self._half_log_det()

    def entropy(self) -> Tensor:
        h = 0.5 * self._event_shape[0] * (1.0 + math.log(2 * math.pi)) + self._half_log_det()
        if len(self._batch_shape) == 0:
            return h
        return h.expand(self._batch_shape)
