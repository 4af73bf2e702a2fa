"""Adagrad (with learning-rate decay and an initial accumulator): torch's for-loop update."""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from .._creation import _leaf
from .._tensor import Tensor
from ..autograd.grad_mode import no_grad
from .optimizer import (Optimizer, _check_differentiable, _fma_, _grad_of, _inplace, _step_tensor,
                        _to_scalar, fused_multiply_add)

__all__ = ["Adagrad"]


class Adagrad(Optimizer):
    """Scale each coordinate's step by the root of its accumulated squared gradients.

    The state (``step`` and ``sum``) is made when the optimizer is built, as torch does.

    >>> import npgrad as torch
    >>> w = torch.tensor([1.], requires_grad=True)
    >>> opt = torch.optim.Adagrad([w], lr=0.5)
    >>> (3 * w).sum().backward()
    >>> opt.step()
    >>> w
    tensor([0.5000], requires_grad=True)
    """

    def __init__(self, params: Any, lr: Any = 1e-2, lr_decay: float = 0,
                 weight_decay: float = 0, initial_accumulator_value: float = 0,
                 eps: float = 1e-10, foreach: bool | None = None, *, maximize: bool = False,
                 differentiable: bool = False, fused: bool | None = None) -> None:
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= lr_decay:
            raise ValueError(f"Invalid lr_decay value: {lr_decay}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if not 0.0 <= initial_accumulator_value:
            raise ValueError("Invalid initial_accumulator_value value: "
                             f"{initial_accumulator_value}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        defaults = {"lr": lr, "lr_decay": lr_decay, "eps": eps, "weight_decay": weight_decay,
                    "initial_accumulator_value": initial_accumulator_value,
                    "foreach": foreach, "maximize": maximize,
                    "differentiable": differentiable, "fused": fused}
        _check_differentiable(differentiable)
        super().__init__(params, defaults)
        if fused:
            if differentiable:
                raise RuntimeError("`fused` does not support `differentiable`")
            if foreach:
                raise RuntimeError("`fused` and `foreach` cannot be `True` together.")
        for group in self.param_groups:
            for p in group["params"]:
                self._init_state(p, initial_accumulator_value)

    def _init_state(self, p: Tensor, initial_accumulator_value: float) -> None:
        state = self.state[p]
        state["step"] = _step_tensor(0.0)
        state["sum"] = _leaf(np.full_like(p._data, initial_accumulator_value))

    _group_defaults_for_old_state = {"foreach": None, "maximize": False, "differentiable": False,
                                     "fused": None}

    @no_grad()
    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """One Adagrad update of every parameter that has a gradient."""
        loss = self._closure_loss(closure)
        for group in self.param_groups:
            lr = _to_scalar(group["lr"])
            wd = group["weight_decay"]
            lr_decay = group["lr_decay"]
            eps = group["eps"]
            for p in group["params"]:
                if p._grad is None:
                    continue
                state = self.state[p]
                if len(state) == 0:
                    # a parameter added later: torch starts it from the optimizer's default
                    self._init_state(p, self.defaults["initial_accumulator_value"])
                dt = p._data.dtype.type
                step_arr = _inplace(state["step"])
                step_arr += 1
                step = float(step_arr)
                g = _grad_of(p, group["maximize"])
                if wd != 0:
                    g = fused_multiply_add(p._data, dt(wd), g)
                clr = lr / (1 + (step - 1) * lr_decay)
                acc = _inplace(state["sum"])
                _fma_(acc, g, g)
                std = np.sqrt(acc)
                std += dt(eps)
                param = _inplace(p)
                param += (dt(-clr) * g) / std
        return loss
