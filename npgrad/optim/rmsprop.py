"""RMSprop (plain or centered, with momentum and weight decay): torch's for-loop update."""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from .._tensor import Tensor
from ..autograd.grad_mode import no_grad
from .optimizer import (Optimizer, _check_differentiable, _fma_, _grad_of, _inplace, _lerp_,
                        _step_tensor, _to_scalar, _zeros_like, fused_multiply_add)

__all__ = ["RMSprop"]


class RMSprop(Optimizer):
    """Divide the gradient by a running root-mean-square of recent gradients.

    State per parameter: ``step``, ``square_avg``, and ``momentum_buffer``
    (when ``momentum > 0``) and ``grad_avg`` (when ``centered``).

    >>> import npgrad as torch
    >>> w = torch.tensor([1.], requires_grad=True)
    >>> opt = torch.optim.RMSprop([w], lr=0.01, alpha=0.75)
    >>> w.sum().backward()
    >>> opt.step()
    >>> w
    tensor([0.9800], requires_grad=True)
    """

    def __init__(self, params: Any, lr: Any = 1e-2, alpha: float = 0.99, eps: float = 1e-8,
                 weight_decay: float = 0, momentum: float = 0, centered: bool = False,
                 capturable: bool = False, foreach: bool | None = None, maximize: bool = False,
                 differentiable: bool = False) -> None:
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= momentum:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if not 0.0 <= alpha:
            raise ValueError(f"Invalid alpha value: {alpha}")
        defaults = {"lr": lr, "momentum": momentum, "alpha": alpha, "eps": eps,
                    "centered": centered, "weight_decay": weight_decay,
                    "capturable": capturable, "foreach": foreach, "maximize": maximize,
                    "differentiable": differentiable}
        _check_differentiable(differentiable)
        super().__init__(params, defaults)

    _group_defaults_for_old_state = {"momentum": 0, "centered": False, "foreach": None, "maximize": False,
                                     "differentiable": False, "capturable": False}

    @no_grad()
    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """One RMSprop update of every parameter that has a gradient."""
        loss = self._closure_loss(closure)
        for group in self.param_groups:
            lr = _to_scalar(group["lr"])
            alpha = group["alpha"]
            wd = group["weight_decay"]
            momentum = group["momentum"]
            centered = group["centered"]
            eps = group["eps"]
            for p in group["params"]:
                if p._grad is None:
                    continue
                state = self.state[p]
                if len(state) == 0:
                    state["step"] = _step_tensor(0.0)
                    state["square_avg"] = _zeros_like(p)
                    if momentum > 0:
                        state["momentum_buffer"] = _zeros_like(p)
                    if centered:
                        state["grad_avg"] = _zeros_like(p)
                dt = p._data.dtype.type
                g = _grad_of(p, group["maximize"])
                step_arr = _inplace(state["step"])
                step_arr += 1
                if wd != 0:
                    g = fused_multiply_add(p._data, dt(wd), g)
                square_avg = _inplace(state["square_avg"])
                square_avg *= dt(alpha)
                _inplace(state["square_avg"])
                _fma_(square_avg, dt(1 - alpha) * g, g)
                if centered:
                    grad_avg = _inplace(state["grad_avg"])
                    _lerp_(grad_avg, g, 1 - alpha)
                    avg = np.sqrt(fused_multiply_add(-grad_avg, grad_avg, square_avg))
                else:
                    avg = np.sqrt(square_avg)
                avg += dt(eps)
                param = _inplace(p)
                if momentum > 0:
                    buf = _inplace(state["momentum_buffer"])
                    buf *= dt(momentum)
                    _inplace(state["momentum_buffer"])
                    buf += g / avg
                    _fma_(param, buf, dt(-lr))
                else:
                    param += (dt(-lr) * g) / avg
        return loss
