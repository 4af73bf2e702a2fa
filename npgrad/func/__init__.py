"""npgrad.func: torch.func's composable function transforms (vmap, grad, vjp, jvp, jacobians,
functional_call) on npgrad's autograd.

>>> import npgrad
>>> from npgrad.func import grad, vmap
>>> vmap(grad(lambda x: (x ** 2).sum()))(npgrad.tensor([[1., 2.], [3., 4.]]))
tensor([[2., 4.],
        [6., 8.]])
"""
from __future__ import annotations

from . import _batching_rules  # noqa: F401 - registers the rules vmap uses
from ._module import functional_call, stack_module_state
from ._transforms import (grad, grad_and_value, hessian, jacfwd, jacrev, jvp, linearize,
                          vjp)
from ._vmap import register_batching_rule, vmap

__all__ = ["functional_call", "grad", "grad_and_value", "hessian", "jacfwd", "jacrev", "jvp",
           "linearize", "register_batching_rule", "stack_module_state", "vjp", "vmap"]
