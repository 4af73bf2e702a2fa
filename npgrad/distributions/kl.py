"""``kl_divergence(p, q)`` and ``register_kl``: closed-form KL(p || q) per pair of types.

The rule for a pair is looked up by type, most specific match first (as in
torch): a rule registered for ``(Normal, Normal)`` serves subclasses too.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from .._tensor import Tensor
from .bernoulli import Bernoulli
from .categorical import Categorical
from .distribution import Distribution
from .exponential import Exponential
from .independent import Independent
from .multivariate_normal import MultivariateNormal, _batch_mahalanobis
from .normal import Normal
from .one_hot_categorical import OneHotCategorical
from ._triangular import solve_lower
from .utils import sum_rightmost

__all__ = ["kl_divergence", "register_kl"]

_KL_REGISTRY: dict[tuple[type, type], Callable[[Any, Any], Tensor]] = {}


def register_kl(type_p: type, type_q: type) -> Callable[[Callable], Callable]:
    """Decorator: register ``fn(p, q)`` as KL(p || q) for ``type_p`` and ``type_q``.

    >>> import npgrad as torch
    >>> from npgrad.distributions import Normal, kl_divergence, register_kl
    >>> class Wide(Normal):
    ...     pass
    >>> @register_kl(Wide, Normal)
    ... def _kl_wide_normal(p, q):
    ...     return torch.zeros(p.batch_shape)
    >>> kl_divergence(Wide(0.0, 2.0), Normal(0.0, 1.0))
    tensor(0.)
    """
    if not isinstance(type_p, type) or not issubclass(type_p, Distribution):
        raise TypeError(f"Expected type_p to be a Distribution subclass but got {type_p}")
    if not isinstance(type_q, type) or not issubclass(type_q, Distribution):
        raise TypeError(f"Expected type_q to be a Distribution subclass but got {type_q}")

    def decorator(fun: Callable) -> Callable:
        _KL_REGISTRY[type_p, type_q] = fun
        return fun

    return decorator


def _dispatch_kl(type_p: type, type_q: type) -> Callable | None:
    matches = [(super_p, super_q) for super_p, super_q in _KL_REGISTRY
               if issubclass(type_p, super_p) and issubclass(type_q, super_q)]
    if not matches:
        return None
    # the closest registered pair: fewest steps up each type's MRO
    def distance(pair: tuple[type, type]) -> tuple[int, int]:
        return type_p.__mro__.index(pair[0]), type_q.__mro__.index(pair[1])
    return _KL_REGISTRY[min(matches, key=distance)]


def kl_divergence(p: Distribution, q: Distribution) -> Tensor:
    """KL(p || q), batched over the distributions' batch shape.

    >>> import npgrad as torch
    >>> from npgrad.distributions import Normal, kl_divergence
    >>> kl_divergence(Normal(0.0, 1.0), Normal(1.0, 1.0))
    tensor(0.5000)
    """
    fun = _dispatch_kl(type(p), type(q))
    if fun is None:
        raise NotImplementedError(f"No KL(p || q) is implemented for p type "
                                  f"{type(p).__name__} and q type {type(q).__name__}")
    return fun(p, q)


def _where(cond: Tensor, value: float, other: Tensor) -> Tensor:
    from .. import where
    return where(cond, value, other)


@register_kl(Normal, Normal)
def _kl_normal_normal(p: Normal, q: Normal) -> Tensor:
    var_ratio = (p.scale / q.scale).pow(2)
    t1 = ((p.loc - q.loc) / q.scale).pow(2)
    return 0.5 * (var_ratio + t1 - 1 - var_ratio.log())


@register_kl(Bernoulli, Bernoulli)
def _kl_bernoulli_bernoulli(p: Bernoulli, q: Bernoulli) -> Tensor:
    from ..nn.functional import softplus
    t1 = p.probs * (softplus(-q.logits) - softplus(-p.logits))
    t1 = _where(p.probs == 0, 0.0, _where(q.probs == 0, float("inf"), t1))
    t2 = (1 - p.probs) * (softplus(q.logits) - softplus(p.logits))
    t2 = _where(p.probs == 1, 0.0, _where(q.probs == 1, float("inf"), t2))
    return t1 + t2


@register_kl(Categorical, Categorical)
def _kl_categorical_categorical(p: Categorical, q: Categorical) -> Tensor:
    t = p.probs * (p.logits - q.logits)
    # a category p can take but q cannot makes KL infinite; one p never takes adds 0
    t = _where((q.probs == 0).expand_as(t), float("inf"), t)
    t = _where((p.probs == 0).expand_as(t), 0.0, t)
    return t.sum(-1)


@register_kl(OneHotCategorical, OneHotCategorical)
def _kl_onehotcategorical_onehotcategorical(p: OneHotCategorical,
                                             q: OneHotCategorical) -> Tensor:
    return _kl_categorical_categorical(p._categorical, q._categorical)


@register_kl(Exponential, Exponential)
def _kl_exponential_exponential(p: Exponential, q: Exponential) -> Tensor:
    rate_ratio = q.rate / p.rate
    return rate_ratio - 1 - rate_ratio.log()


@register_kl(Independent, Independent)
def _kl_independent_independent(p: Independent, q: Independent) -> Tensor:
    if p.reinterpreted_batch_ndims != q.reinterpreted_batch_ndims:
        raise NotImplementedError
    result = kl_divergence(p.base_dist, q.base_dist)
    return sum_rightmost(result, p.reinterpreted_batch_ndims)


@register_kl(MultivariateNormal, MultivariateNormal)
def _kl_multivariatenormal_multivariatenormal(p: MultivariateNormal,
                                               q: MultivariateNormal) -> Tensor:
    if p.event_shape != q.event_shape:
        # torch's text carries the indentation of a backslash-continued string literal
        raise ValueError("KL-divergence between two Multivariate Normals with" + " " * 26
                         + "different event shapes cannot be computed")
    p_lower, q_lower = p._unbroadcasted_scale_tril, q._unbroadcasted_scale_tril
    half_term1 = q._half_log_det() - p._half_log_det()
    n = p.event_shape[0]
    batch = tuple(np.broadcast_shapes(tuple(q_lower.shape[:-2]), tuple(p_lower.shape[:-2])))
    # trace(Sq^-1 Sp) = |Lq^-1 Lp|_F^2
    term2 = solve_lower(q_lower.expand(*batch, n, n), p_lower.expand(*batch, n, n)) \
        .pow(2).sum((-2, -1))
    term3 = _batch_mahalanobis(q_lower, q.loc - p.loc)
    return half_term1 + 0.5 * (term2 + term3 - n)
