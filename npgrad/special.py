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

from ._ops import reduction as _reduction, softmax as _softmax, special as _special
from ._ops.signature import renamed as _renamed
from ._ops.special import entr  # noqa: F401
from ._ops.special import special_xlogy as xlogy  # noqa: F401
from ._ops.special import special_erfc as erfc, special_exp2 as exp2  # noqa: F401
from ._ops.special import special_expit as expit, special_expm1 as expm1  # noqa: F401
from ._ops.special import special_log1p as log1p, special_logit as logit  # noqa: F401
from ._ops.special import special_sinc as sinc  # noqa: F401

# torch binds these under their own names (Note [An alias has its own name in the errors])
erf = _renamed(_special.erf, "special_erf")
logsumexp = _renamed(_reduction.logsumexp, "special_logsumexp")
softmax = _renamed(_softmax.softmax, "special_softmax",
                   "special_softmax(Tensor input, int64_t dim, ScalarType? dtype=None)")
log_softmax = _renamed(_softmax.log_softmax, "special_log_softmax",
                       "special_log_softmax(Tensor input, int64_t dim, *, ScalarType? dtype=None)")

__all__ = ["entr", "erf", "erfc", "exp2", "expit", "expm1", "log1p", "log_softmax", "logit",
           "logsumexp", "sinc", "softmax", "xlogy"]
