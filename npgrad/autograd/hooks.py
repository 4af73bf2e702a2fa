"""Tensor-level hooks: register_hook, retain_grad and post-accumulate hooks."""
from __future__ import annotations

import weakref
from typing import Any, Callable

from .graph import RemovableHandle, _HookDict, _add_hook


def _extra(tensor: Any) -> Any:
    from .._tensor import TensorExtra

    if tensor._extra is None:
        tensor._extra = TensorExtra()
    return tensor._extra


def register_tensor_hook(tensor: Any, hook: Callable) -> RemovableHandle:
    """Leaf hooks run in AccumulateGrad; non-leaf hooks run before the tensor's grad_fn."""
    if not tensor._requires_grad:
        raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
    fn = tensor._grad_fn
    if fn is None:
        extra = _extra(tensor)
        if extra.hooks is None:
            extra.hooks = _HookDict()
        return _add_hook(extra.hooks, hook)
    hooks = fn._get_hooks().tensor_pre_hooks
    per_output = hooks.get(tensor._output_nr)
    if per_output is None:
        per_output = hooks[tensor._output_nr] = _HookDict()
    return _add_hook(per_output, hook)


def retain_grad(tensor: Any) -> None:
    if not tensor._requires_grad:
        raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
    fn = tensor._grad_fn
    if fn is None:
        return
    extra = _extra(tensor)
    if extra.retains_grad:
        return
    extra.retains_grad = True
    fn._get_hooks().retains_grad[tensor._output_nr] = weakref.ref(tensor)


def register_post_accumulate_grad_hook(tensor: Any, hook: Callable) -> RemovableHandle:
    if tensor._grad_fn is not None:
        raise RuntimeError("post accumulate grad hooks cannot be registered on non-leaf tensors")
    if not tensor._requires_grad:
        raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
    extra = _extra(tensor)
    if extra.post_accumulate_hooks is None:
        extra.post_accumulate_hooks = _HookDict()
    return _add_hook(extra.post_accumulate_hooks, hook)
