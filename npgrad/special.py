"""npgrad.special: torch.special's functions, each the same op as its torch-level twin.

``expit`` is ``sigmoid`` (grad_fn ``SigmoidBackward0``, as in torch); ``logit``,
``sinc`` and ``entr`` have their own nodes in ``_ops.special``.

>>> import npgrad
>>> npgrad.special.expit(npgrad.tensor([0.]))
tensor([0.5000])
>>> npgrad.special.logit(npgrad.tensor([0.5]))
tensor([0.])
"""
from __future__ import annotations

from ._ops.special import entr, logit, sinc  # noqa: F401
from ._ops.pointwise import expm1, log1p, sigmoid as expit  # noqa: F401
from ._ops.reduction import log_softmax, logsumexp, softmax  # noqa: F401
from ._ops.special import erf, erfc, exp2, xlogy  # noqa: F401

__all__ = ["entr", "erf", "erfc", "exp2", "expit", "expm1", "log1p", "log_softmax", "logit",
           "logsumexp", "sinc", "softmax", "xlogy"]
