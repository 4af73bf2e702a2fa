"""SGD: stochastic gradient descent with momentum, dampening, Nesterov and weight decay."""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from ..autograd.grad_mode import no_grad
from .optimizer import (Optimizer, _check_differentiable, _fma_, _grad_of, _inplace, _to_scalar,
                        fused_multiply_add)

__all__ = ["SGD"]


class SGD(Optimizer):
    """Stochastic gradient descent (optionally with momentum), torch's update rule.

    With momentum ``m`` and dampening ``d`` the buffer is ``b = m * b + (1 - d) * g``
    (``b = g`` on the first step); Nesterov uses ``g + m * b`` instead of ``b``.

    >>> import npgrad as torch
    >>> w = torch.tensor([1., 2.], requires_grad=True)
    >>> opt = torch.optim.SGD([w], lr=0.1, momentum=0.9)
    >>> (w * w).sum().backward()
    >>> opt.step()
    >>> w
    tensor([0.8000, 1.6000], requires_grad=True)
    """

    def __init__(self, params: Any, lr: Any = 1e-3, momentum: float = 0, dampening: float = 0,
                 weight_decay: Any = 0, nesterov: bool = False, *, maximize: bool = False,
                 foreach: bool | None = None, differentiable: bool = False,
                 fused: bool | None = None) -> None:
        if hasattr(lr, "numel") and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if lr < 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if momentum < 0.0:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if weight_decay < 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        defaults = {"lr": lr, "momentum": momentum, "dampening": dampening,
                    "weight_decay": weight_decay, "nesterov": nesterov, "maximize": maximize,
                    "foreach": foreach, "differentiable": differentiable, "fused": fused}
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        _check_differentiable(differentiable)
        super().__init__(params, defaults)
        if fused:
            if differentiable:
                raise RuntimeError("`fused` does not support `differentiable`")
            if foreach:
                raise RuntimeError("`fused` and `foreach` cannot be `True` together.")

    _group_defaults_for_old_state = {"nesterov": False, "maximize": False, "foreach": None,
                                     "differentiable": False, "fused": False}

    @no_grad()
    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """One update of every parameter that has a gradient; returns ``closure()``'s loss."""
        loss = self._closure_loss(closure)
        for group in self.param_groups:
            lr = _to_scalar(group["lr"])
            wd = _to_scalar(group["weight_decay"])
            momentum = group["momentum"]
            dampening = group["dampening"]
            params = [p for p in group["params"] if p._grad is not None]
            # As torch, every parameter's momentum buffer is looked up before any update and
            # stored after all: a parameter listed twice gets two fresh buffers on the first
            # step (two plain SGD steps) and shares the stored one afterwards.
            buffers = [self.state[p].get("momentum_buffer") if momentum != 0 else None
                       for p in params]
            for i, p in enumerate(params):
                dt = p._data.dtype.type
                g = _grad_of(p, group["maximize"])
                if wd != 0:
                    g = fused_multiply_add(p._data, dt(wd), g)
                if momentum != 0:
                    buf_t = buffers[i]
                    if buf_t is None:
                        buf_t = buffers[i] = _new_buffer(p, g)
                    else:
                        buf = _inplace(buf_t)
                        buf *= dt(momentum)
                        _inplace(buf_t)
                        _fma_(buf, g, dt(1 - dampening))
                    if group["nesterov"]:
                        g = fused_multiply_add(buf_t._data, dt(momentum), g)
                    else:
                        g = buf_t._data
                param = _inplace(p)
                _fma_(param, g, dt(-lr))
            if momentum != 0:
                for p, buf_t in zip(params, buffers):
                    self.state[p]["momentum_buffer"] = buf_t
        return loss


def _new_buffer(p: Any, g: np.ndarray) -> Any:
    """The first momentum buffer: a copy of the (decayed) gradient, like torch's clone."""
    from .._creation import _leaf

    return _leaf(np.array(g, dtype=p._data.dtype, copy=True))
