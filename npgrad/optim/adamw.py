"""AdamW: Adam with decoupled weight decay (torch's AdamW is this subclass of Adam)."""
from __future__ import annotations

from typing import Any

from .adam import Adam

__all__ = ["AdamW"]


class AdamW(Adam):
    """Adam whose weight decay shrinks the parameter directly: ``p *= 1 - lr * weight_decay``.

    >>> import npgrad as torch
    >>> w = torch.tensor([1.], requires_grad=True)
    >>> opt = torch.optim.AdamW([w], lr=0.1, weight_decay=0.5)
    >>> w.sum().backward()
    >>> opt.step()
    >>> w
    tensor([0.8500], requires_grad=True)
    """

    def __init__(self, params: Any, lr: Any = 1e-3, betas: tuple = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 1e-2, amsgrad: bool = False, *,
                 maximize: bool = False, foreach: bool | None = None, capturable: bool = False,
                 differentiable: bool = False, fused: bool | None = None) -> None:
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, foreach=foreach,
                         maximize=maximize, capturable=capturable,
                         differentiable=differentiable, fused=fused,
                         decoupled_weight_decay=True)

    def __setstate__(self, state: dict[str, Any]) -> None:
        super().__setstate__(state)
        for group in self.param_groups:
            group["decoupled_weight_decay"] = True
