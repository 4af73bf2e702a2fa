"""npgrad.distributions: torch's probability distributions, differentiable in npgrad ops.

``log_prob``, ``entropy``, ``rsample`` and ``kl_divergence`` are built from
npgrad ops, so gradients reach the parameters (REINFORCE with ``log_prob``,
the reparameterisation trick with ``rsample``).  Samples come from npgrad's
global generator: see Note [Sampling through npgrad's generator] in ``utils``.
"""
from __future__ import annotations

from . import constraints
from .bernoulli import Bernoulli
from .categorical import Categorical
from .distribution import Distribution
from .exponential import Exponential
from .independent import Independent
from .kl import kl_divergence, register_kl
from .laplace import Laplace
from .multivariate_normal import MultivariateNormal
from .normal import Normal
from .one_hot_categorical import OneHotCategorical
from .uniform import Uniform

__all__ = ["Bernoulli", "Categorical", "Distribution", "Exponential", "Independent",
           "Laplace", "MultivariateNormal", "Normal", "OneHotCategorical", "Uniform", "constraints",
           "kl_divergence", "register_kl"]
