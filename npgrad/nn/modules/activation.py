"""Activation layers: ReLU, LeakyReLU, GELU, SiLU, Tanh, Sigmoid, Softmax, LogSoftmax, ELU,
SELU, CELU, Hardtanh, ReLU6, Hardsigmoid, Hardswish, Mish, Softplus, LogSigmoid, Softsign,
Softmin, GLU."""
from __future__ import annotations

import warnings

from ..._ops.pointwise import sigmoid as _sigmoid, tanh as _tanh
from ..._tensor import Tensor
from .. import functional as F
from .module import Module

__all__ = ["ReLU", "LeakyReLU", "GELU", "SiLU", "Tanh", "Sigmoid", "Softmax", "LogSoftmax", "ELU",
           "SELU", "CELU", "Hardtanh", "ReLU6", "Hardsigmoid", "Hardswish", "Mish", "Softplus",
           "LogSigmoid", "Softsign", "Softmin", "GLU"]


class ReLU(Module):
    """``max(x, 0)``.

    >>> import npgrad as torch
    >>> torch.nn.ReLU()
    ReLU()
    """

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        return F.relu(input, inplace=self.inplace)

    def extra_repr(self) -> str:
        return "inplace=True" if self.inplace else ""


class LeakyReLU(Module):
    def __init__(self, negative_slope: float = 1e-2, inplace: bool = False) -> None:
        super().__init__()
        self.negative_slope = negative_slope
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        return F.leaky_relu(input, self.negative_slope, self.inplace)

    def extra_repr(self) -> str:
        inplace = ", inplace=True" if self.inplace else ""
        return f"negative_slope={self.negative_slope}{inplace}"


class GELU(Module):
    def __init__(self, approximate: str = "none") -> None:
        super().__init__()
        self.approximate = approximate

    def forward(self, input: Tensor) -> Tensor:
        return F.gelu(input, approximate=self.approximate)

    def extra_repr(self) -> str:
        return f"approximate={repr(self.approximate)}"


class SiLU(Module):
    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        return F.silu(input, inplace=self.inplace)

    def extra_repr(self) -> str:
        return "inplace=True" if self.inplace else ""


class Tanh(Module):
    def forward(self, input: Tensor) -> Tensor:
        return _tanh(input)  # torch.tanh, as torch's module calls it


class Sigmoid(Module):
    def forward(self, input: Tensor) -> Tensor:
        return _sigmoid(input)  # torch.sigmoid


class Softmax(Module):
    def __init__(self, dim: int | None = None) -> None:
        super().__init__()
        self.dim = dim

    def forward(self, input: Tensor) -> Tensor:
        return F.softmax(input, self.dim, _stacklevel=5)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class LogSoftmax(Module):
    def __init__(self, dim: int | None = None) -> None:
        super().__init__()
        self.dim = dim

    def forward(self, input: Tensor) -> Tensor:
        return F.log_softmax(input, self.dim, _stacklevel=5)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"




def _inplace_repr(inplace: bool, lead: str = "") -> str:
    return lead + "inplace=True" if inplace else ""


class ELU(Module):
    """``x`` above 0, ``alpha * (exp(x) - 1)`` below.

    >>> import npgrad as torch
    >>> torch.nn.ELU(0.5)
    ELU(alpha=0.5)
    """

    def __init__(self, alpha: float = 1.0, inplace: bool = False) -> None:
        super().__init__()
        self.alpha = alpha
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        return F.elu(input, self.alpha, self.inplace)

    def extra_repr(self) -> str:
        return f"alpha={self.alpha}" + _inplace_repr(self.inplace, ", ")


class SELU(Module):
    """Scaled ELU with the self-normalising constants.

    >>> import npgrad as torch
    >>> torch.nn.SELU(inplace=True)
    SELU(inplace=True)
    """

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        return F.selu(input, self.inplace)

    def extra_repr(self) -> str:
        return _inplace_repr(self.inplace)


class CELU(Module):
    """``max(0, x) + min(0, alpha * (exp(x / alpha) - 1))``.

    >>> import npgrad as torch
    >>> torch.nn.CELU()
    CELU(alpha=1.0)
    """

    def __init__(self, alpha: float = 1.0, inplace: bool = False) -> None:
        super().__init__()
        self.alpha = alpha
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        return F.celu(input, self.alpha, self.inplace)

    def extra_repr(self) -> str:
        return f"alpha={self.alpha}" + _inplace_repr(self.inplace, ", ")


class Hardtanh(Module):
    """Clamp to ``[min_val, max_val]`` (``min_value``/``max_value`` are torch's deprecated names).

    >>> import npgrad as torch
    >>> torch.nn.Hardtanh(-2, 2)
    Hardtanh(min_val=-2, max_val=2)
    """

    def __init__(self, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False,
                 min_value: float | None = None, max_value: float | None = None) -> None:
        super().__init__()
        if min_value is not None:
            warnings.warn("keyword argument `min_value` is deprecated and renamed to `min_val`",
                          FutureWarning, stacklevel=2)
            min_val = min_value
        if max_value is not None:
            warnings.warn("keyword argument `max_value` is deprecated and renamed to `max_val`",
                          FutureWarning, stacklevel=2)
            max_val = max_value
        self.min_val = min_val
        self.max_val = max_val
        self.inplace = inplace
        if self.max_val <= self.min_val:
            raise AssertionError(f"max_val ({self.max_val}) must be greater than min_val "
                                 f"({self.min_val})")

    def forward(self, input: Tensor) -> Tensor:
        return F.hardtanh(input, self.min_val, self.max_val, self.inplace)

    def extra_repr(self) -> str:
        return f"min_val={self.min_val}, max_val={self.max_val}" + _inplace_repr(self.inplace, ", ")


class ReLU6(Hardtanh):
    """``min(max(x, 0), 6)``: a Hardtanh on [0, 6], as in torch.

    >>> import npgrad as torch
    >>> torch.nn.ReLU6()
    ReLU6()
    """

    def __init__(self, inplace: bool = False) -> None:
        super().__init__(0.0, 6.0, inplace)

    def extra_repr(self) -> str:
        return _inplace_repr(self.inplace)


class Hardsigmoid(Module):
    """``relu6(x + 3) / 6``; torch's repr shows no ``inplace``.

    >>> import npgrad as torch
    >>> torch.nn.Hardsigmoid()
    Hardsigmoid()
    """

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        return F.hardsigmoid(input, self.inplace)


class Hardswish(Module):
    """``x * relu6(x + 3) / 6``; torch's repr shows no ``inplace``.

    >>> import npgrad as torch
    >>> torch.nn.Hardswish()
    Hardswish()
    """

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        return F.hardswish(input, self.inplace)


class Mish(Module):
    """``x * tanh(softplus(x))``.

    >>> import npgrad as torch
    >>> torch.nn.Mish()
    Mish()
    """

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        return F.mish(input, self.inplace)

    def extra_repr(self) -> str:
        return _inplace_repr(self.inplace)


class Softplus(Module):
    """``log(1 + exp(beta * x)) / beta``, linear above ``threshold``.

    >>> import npgrad as torch
    >>> torch.nn.Softplus()
    Softplus(beta=1.0, threshold=20.0)
    """

    def __init__(self, beta: float = 1.0, threshold: float = 20.0) -> None:
        super().__init__()
        self.beta = beta
        self.threshold = threshold

    def forward(self, input: Tensor) -> Tensor:
        return F.softplus(input, self.beta, self.threshold)

    def extra_repr(self) -> str:
        return f"beta={self.beta}, threshold={self.threshold}"


class LogSigmoid(Module):
    """``log(sigmoid(x))``.

    >>> import npgrad as torch
    >>> torch.nn.LogSigmoid()
    LogSigmoid()
    """

    def forward(self, input: Tensor) -> Tensor:
        return F.logsigmoid(input)


class Softsign(Module):
    """``x / (1 + |x|)``.

    >>> import npgrad as torch
    >>> torch.nn.Softsign()
    Softsign()
    """

    def forward(self, input: Tensor) -> Tensor:
        return F.softsign(input)


class Softmin(Module):
    """``softmax(-x, dim)``.

    >>> import npgrad as torch
    >>> torch.nn.Softmin(1)
    Softmin(dim=1)
    """

    def __init__(self, dim: int | None = None) -> None:
        super().__init__()
        self.dim = dim

    def forward(self, input: Tensor) -> Tensor:
        return F.softmin(input, self.dim, _stacklevel=5)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class GLU(Module):
    """Gated linear unit over ``dim``: first half times sigmoid of the second half.

    >>> import npgrad as torch
    >>> torch.nn.GLU()
    GLU(dim=-1)
    """

    def __init__(self, dim: int = -1) -> None:
        super().__init__()
        self.dim = dim

    def forward(self, input: Tensor) -> Tensor:
        return F.glu(input, self.dim)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"
