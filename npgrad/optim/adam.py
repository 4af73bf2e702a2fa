"""Adam (with AMSGrad, L2 or decoupled weight decay, maximize): torch's for-loop update."""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from .._tensor import Tensor
from ..autograd.grad_mode import no_grad
from .optimizer import (Optimizer, _check_differentiable, _fma_, _grad_of, _inplace, _lerp_,
                        _step_tensor, _to_scalar, _zeros_like, fused_multiply_add)

__all__ = ["Adam"]


class Adam(Optimizer):
    """Adam: bias-corrected running averages of the gradient and of its square.

    State per parameter: ``step`` (a 0-dim float tensor, as torch keeps it),
    ``exp_avg``, ``exp_avg_sq`` and, with ``amsgrad``, ``max_exp_avg_sq``.

    >>> import npgrad as torch
    >>> w = torch.tensor([1., -1.], requires_grad=True)
    >>> opt = torch.optim.Adam([w], lr=0.1)
    >>> (w * w).sum().backward()
    >>> opt.step()
    >>> w
    tensor([ 0.9000, -0.9000], requires_grad=True)
    """

    def __init__(self, params: Any, lr: Any = 1e-3, betas: tuple = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 0, amsgrad: bool = False, *,
                 foreach: bool | None = None, maximize: bool = False, capturable: bool = False,
                 differentiable: bool = False, fused: bool | None = None,
                 decoupled_weight_decay: bool = False) -> None:
        if isinstance(lr, Tensor):
            if foreach and not capturable:
                raise ValueError("lr as a Tensor is not supported for capturable=False and "
                                 "foreach=True")
            if lr.numel() != 1:
                raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= betas[0] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
        if not 0.0 <= betas[1] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        both_floats = isinstance(betas[0], float) and isinstance(betas[1], float)
        both_tensors = isinstance(betas[0], Tensor) and isinstance(betas[1], Tensor)
        if not (both_floats or both_tensors):
            raise ValueError("betas must be either both floats or both Tensors")
        for i in (0, 1):
            if isinstance(betas[i], Tensor):
                if not capturable and foreach:
                    raise ValueError(f"betas[{i}] as a Tensor is not supported for "
                                     "capturable=False and foreach=True")
                if betas[i].numel() != 1:
                    raise ValueError(f"Tensor betas[{i}] must be 1-element")
        betas = tuple(b.squeeze() if isinstance(b, Tensor) and b.dim() != 0 else b
                      for b in betas)
        defaults = {"lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay,
                    "amsgrad": amsgrad, "maximize": maximize, "foreach": foreach,
                    "capturable": capturable, "differentiable": differentiable,
                    "fused": fused, "decoupled_weight_decay": decoupled_weight_decay}
        _check_differentiable(differentiable)
        super().__init__(params, defaults)
        if fused:
            if differentiable:
                raise RuntimeError("`fused` does not support `differentiable`")
            if foreach:
                raise RuntimeError("`fused` and `foreach` cannot be `True` together.")

    _group_defaults_for_old_state = {"amsgrad": False, "maximize": False, "foreach": None, "capturable": False,
                                     "differentiable": False, "decoupled_weight_decay": False,
                                     "fused": None}

    @no_grad()
    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """One Adam update of every parameter that has a gradient."""
        loss = self._closure_loss(closure)
        for group in self.param_groups:
            lr = _to_scalar(group["lr"])
            beta1, beta2 = (_to_scalar(b) for b in group["betas"])
            wd = group["weight_decay"]
            eps = group["eps"]
            amsgrad = group["amsgrad"]
            for p in group["params"]:
                if p._grad is None:
                    continue
                state = self.state[p]
                if len(state) == 0:
                    state["step"] = _step_tensor(0.0)
                    state["exp_avg"] = _zeros_like(p)
                    state["exp_avg_sq"] = _zeros_like(p)
                    if amsgrad:
                        state["max_exp_avg_sq"] = _zeros_like(p)
                dt = p._data.dtype.type
                g = _grad_of(p, group["maximize"])
                step_arr = _inplace(state["step"])
                step_arr += 1
                if wd != 0:
                    if group["decoupled_weight_decay"]:
                        param = _inplace(p)
                        param *= dt(1 - lr * wd)
                    else:
                        g = fused_multiply_add(p._data, dt(wd), g)
                exp_avg = _inplace(state["exp_avg"])
                _lerp_(exp_avg, g, 1 - beta1)
                exp_avg_sq = _inplace(state["exp_avg_sq"])
                exp_avg_sq *= dt(beta2)
                _inplace(state["exp_avg_sq"])
                _fma_(exp_avg_sq, dt(1 - beta2) * g, g)
                step = float(step_arr)
                bias_correction1 = 1 - beta1 ** step
                bias_correction2 = 1 - beta2 ** step
                step_size = lr / bias_correction1
                bias_correction2_sqrt = bias_correction2 ** 0.5
                if amsgrad:
                    max_sq = _inplace(state["max_exp_avg_sq"])
                    np.maximum(max_sq, exp_avg_sq, out=max_sq)
                    denom = np.sqrt(max_sq)
                else:
                    denom = np.sqrt(exp_avg_sq)
                # torch's roundings, in two temporaries instead of four
                denom /= dt(bias_correction2_sqrt)
                denom += dt(eps)
                update = np.multiply(exp_avg, dt(-step_size))
                update /= denom
                param = _inplace(p)
                param += update
        return loss

