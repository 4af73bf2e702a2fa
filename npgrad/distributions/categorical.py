"""``Categorical(probs=... | logits=...)``: one of ``K`` categories per batch element."""
from __future__ import annotations

from typing import Any

from .._size import Size
from .._tensor import Tensor
from . import constraints
from .distribution import Distribution
from .utils import categorical_indices, lazy_property, logits_to_probs, probs_to_logits

__all__ = ["Categorical"]


class Categorical(Distribution):
    """Category ``i`` with probability ``probs[..., i]`` (normalised over the last dim).

    ``logits`` are normalised log-probabilities (``logits - logsumexp``); samples
    are int64 indices.

    >>> import npgrad as torch
    >>> d = torch.distributions.Categorical(probs=torch.tensor([1.0, 3.0]))
    >>> d.probs
    tensor([0.2500, 0.7500])
    >>> d.log_prob(torch.tensor(1)).exp()
    tensor(0.7500)
    """

    arg_constraints = {"probs": constraints.simplex,
                       "logits": constraints.independent(constraints.real, 1)}
    has_enumerate_support = True

    def __init__(self, probs: Tensor | None = None, logits: Tensor | None = None,
                 validate_args: bool | None = None) -> None:
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        if probs is not None:
            if probs.dim() < 1:
                raise ValueError("`probs` parameter must be at least one-dimensional.")
            self.probs = probs / probs.sum(-1, keepdim=True)
        else:
            if logits.dim() < 1:  # type: ignore[union-attr]
                raise ValueError("`logits` parameter must be at least one-dimensional.")
            self.logits = logits - logits.logsumexp(dim=-1, keepdim=True)  # type: ignore
        self._param = self.probs if probs is not None else self.logits
        self._num_events = self._param.size()[-1]
        batch_shape = self._param.size()[:-1] if self._param.dim() > 1 else Size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Categorical:
        shape = Size(batch_shape)
        param_shape = shape + Size((self._num_events,))
        params: dict[str, Any] = {"_num_events": self._num_events}
        if "probs" in self.__dict__:
            params["probs"] = params["_param"] = self.probs.expand(param_shape)
        if "logits" in self.__dict__:
            params["logits"] = self.logits.expand(param_shape)
            params.setdefault("_param", params["logits"])
        return self._expanded(shape, params)

    @property
    def support(self) -> constraints.Constraint:  # type: ignore[override]
        return constraints.integer_interval(0, self._num_events - 1)

    @lazy_property
    def logits(self) -> Tensor:
        return probs_to_logits(self.probs)

    @lazy_property
    def probs(self) -> Tensor:
        return logits_to_probs(self.logits)

    @property
    def param_shape(self) -> Size:
        return self._param.size()

    @property
    def mean(self) -> Tensor:
        from .. import full
        return full(self._extended_shape(), float("nan"), dtype=self.probs.dtype)

    @property
    def mode(self) -> Tensor:
        return self.probs.argmax(dim=-1)

    @property
    def variance(self) -> Tensor:
        from .. import full
        return full(self._extended_shape(), float("nan"), dtype=self.probs.dtype)

    def sample(self, sample_shape: Any = Size()) -> Tensor:
        if not isinstance(sample_shape, Size):
            sample_shape = Size(sample_shape)
        return categorical_indices(self.probs, sample_shape)

    def log_prob(self, value: Tensor) -> Tensor:
        from .. import broadcast_tensors
        if self._validate_args:
            self._validate_sample(value)
        value = value.long().unsqueeze(-1)
        value, log_pmf = broadcast_tensors(value, self.logits)
        value = value[..., :1]
        return log_pmf.gather(-1, value).squeeze(-1)

    def entropy(self) -> Tensor:
        from .utils import _finfo
        min_real = float(_finfo(self.logits.dtype).min)
        logits = self.logits.clamp(min=min_real)  # -inf logits: 0 * -inf would be nan
        p_log_p = logits * self.probs
        return -p_log_p.sum(-1)

    def enumerate_support(self, expand: bool = True) -> Tensor:
        """Every category index, shaped ``(K,) + batch_shape`` (or ``(K, 1, ...)``)."""
        from .. import arange
        values = arange(self._num_events).view((-1,) + (1,) * len(self._batch_shape))
        if expand:
            values = values.expand((-1,) + tuple(self._batch_shape))
        return values
