"""Tensor-level hooks: register_hook, retain_grad and post-accumulate hooks."""
from __future__ import annotations

import weakref
from typing import Any, Callable

from .. import _dtype
from .graph import RemovableHandle, _HookDict, _add_hook

# torch's names for a CPU tensor type in hook errors: the legacy ``torch.<X>Tensor``
# where one exists, else the dispatch name.
_TYPE_NAMES = {"bool": "CPUBoolType", "bfloat16": "CPUBFloat16Type",
               "complex64": "CPUComplexFloatType", "complex128": "CPUComplexDoubleType"}


def _type_name(tensor: Any) -> str:
    dt = _dtype.from_np(tensor._data.dtype)
    name = _TYPE_NAMES.get(dt.name) if hasattr(dt, "name") else None
    return name or f"torch.{dt.legacy_type}"


def check_hook_result(hook: Any, old: Any, new: Any) -> Any:
    """What a tensor hook returned, checked as torch checks it: a tensor of the same type and size."""
    from .._tensor import Tensor  # the tensor layer imports this module

    if not isinstance(new, Tensor):
        raise TypeError(f"expected Variable, but hook returned '{type(new).__name__}'")
    if old is None:
        raise RuntimeError("can't replace a None gradient with a non-None value")
    name = getattr(hook, "__name__", "<unknown>")
    if new._data.dtype != old._data.dtype:
        raise RuntimeError(f"hook '{name}' has changed the type of value (was {_type_name(old)} "
                           f"got {_type_name(new)})")
    if new._data.shape != old._data.shape:
        raise RuntimeError(f"hook '{name}' has changed the size of value")
    return new


def _extra(tensor: Any) -> Any:
    from .._tensor_base import TensorExtra

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
