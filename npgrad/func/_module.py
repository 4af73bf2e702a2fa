"""Modules as functions of their state: ``functional_call`` and ``stack_module_state``.

Note [Swapping a module's state]
``functional_call`` puts the given tensors into the modules' ``_parameters`` / ``_buffers``
dicts for the duration of one call and puts the originals back afterwards (also when the
call raises).  The attribute lookup of ``Module`` reads those dicts, so the forward sees the
given tensors (plain tensors may stand in for Parameters: nothing re-wraps them), and the
graph the call records leads to them, not to the module's own Parameters.  Names that are no
parameter or buffer (allowed unless ``strict``) are set as plain attributes for the call.
Tied weights: with ``tie_weights=True`` a tensor given for one name of a tied group (one
Parameter reachable under several names) is used for all of them.
"""
from __future__ import annotations

from typing import Any

_MISSING = object()


def _modules_with_prefixes(module: Any) -> list:
    """(prefix, module) for ``module`` and every submodule, repeats kept, in the order of
    ``named_modules(remove_duplicate=False)`` (read from ``_modules`` directly: this runs on
    every ``functional_call``)."""
    out = []
    todo = [("", module)]
    while todo:
        prefix, m = todo.pop()
        out.append((prefix, m))
        children = [(prefix + ("." if prefix else "") + name, child)
                    for name, child in m._modules.items() if child is not None]
        todo.extend(reversed(children))
    return out


def _state_groups(module: Any) -> tuple[dict, list]:
    """Every parameter and buffer name -> its tensor, and the groups of names of one tensor."""
    names: dict[str, Any] = {}
    by_tensor: dict[int, list[str]] = {}
    modules = _modules_with_prefixes(module)
    for store in ("_parameters", "_buffers"):
        for prefix, m in modules:
            for name, t in getattr(m, store).items():
                if t is None:
                    continue
                full = prefix + "." + name if prefix else name
                names[full] = t
                by_tensor.setdefault(id(t), []).append(full)
    return names, [g for g in by_tensor.values() if len(g) > 1]


def _merge_dicts(dicts: Any) -> dict:
    if isinstance(dicts, dict):
        return dict(dicts)
    if isinstance(dicts, (list, tuple)) and all(isinstance(d, dict) for d in dicts):
        merged: dict = {}
        repeated = []
        for d in dicts:
            for k, v in d.items():
                if k in merged and k not in repeated:
                    repeated.append(k)
                merged[k] = v
        if repeated:
            raise ValueError(f"{repeated} appeared in multiple dictionaries; behavior of "
                             "functional call is ambiguous")
        return merged
    raise ValueError("Expected parameter_and_buffer_dicts to be a dict, or a list/tuple of "
                     f"dicts, but got {type(dicts)}")


def _owner(module: Any, name: str) -> tuple[Any, str]:
    *path, attr = name.split(".")
    for part in path:
        module = getattr(module, part)
    return module, attr


def functional_call(module: Any, parameter_and_buffer_dicts: Any, args: Any = None,
                    kwargs: dict | None = None, *, tie_weights: bool = True,
                    strict: bool = False) -> Any:
    """Call ``module`` with its parameters and buffers replaced by the given tensors.

    >>> import npgrad
    >>> from npgrad.func import functional_call
    >>> lin = npgrad.nn.Linear(2, 1)
    >>> functional_call(lin, {"weight": npgrad.ones(1, 2), "bias": npgrad.zeros(1)},
    ...                 (npgrad.tensor([1., 2.]),))
    tensor([3.])
    """
    given = _merge_dicts(parameter_and_buffer_dicts)
    names, groups = _state_groups(module)
    if tie_weights:
        for group in groups:
            keys = [k for k in group if k in given]
            if len({id(given[k]) for k in keys}) > 1:
                raise ValueError(f"functional_call got multiple values for keys {keys}, which "
                                 "are tied. Consider using tie_weights=False")
            if keys:
                for k in group:
                    given.setdefault(k, given[keys[0]])
    if strict:
        unexpected = sorted(k for k in given if k not in names)
        missing = sorted(k for k in names if k not in given)
        if unexpected or missing:
            lines = [f"Error(s) in reparametrizing for {type(module).__name__}:"]
            if unexpected:
                lines.append("Unexpected key(s): " + ", ".join(repr(k) for k in unexpected)
                             + ".")
            if missing:
                lines.append("Missing key(s): " + ", ".join(repr(k) for k in missing) + ".")
            raise RuntimeError("\n\t".join(lines))
    if args is None:
        args = ()
    elif not isinstance(args, tuple):
        args = (args,)
    restore: list = []
    try:
        for name, value in given.items():
            owner, attr = _owner(module, name)
            for store in (owner._parameters, owner._buffers):
                if attr in store:
                    restore.append((store, attr, store[attr]))
                    store[attr] = value
                    break
            else:
                restore.append((owner, attr, owner.__dict__.get(attr, _MISSING)))
                object.__setattr__(owner, attr, value)
        return module(*args, **(kwargs or {}))
    finally:
        for store, attr, old in reversed(restore):
            if isinstance(store, dict):
                store[attr] = old
            elif old is _MISSING:
                object.__delattr__(store, attr)
            else:
                object.__setattr__(store, attr, old)


def stack_module_state(models: Any) -> tuple[dict, dict]:
    """The parameters and buffers of same-class ``models``, each stacked along a new dim 0.

    The stacked parameters are new leaves (requiring grad as the originals do), ready for
    ``vmap(functional_call)`` over an ensemble.

    >>> import npgrad
    >>> from npgrad.func import stack_module_state
    >>> params, buffers = stack_module_state([npgrad.nn.Linear(3, 2) for _ in range(4)])
    >>> params["weight"].shape
    torch.Size([4, 2, 3])
    """
    from .._ops.shape import stack

    models = list(models)
    if not models:
        raise RuntimeError("stack_module_state: Expected at least one model, got 0.")
    if not (all(m.training for m in models) or all(not m.training for m in models)):
        raise RuntimeError("stack_module_state: Expected all models to have the same "
                           "training/eval mode.")
    if any(type(m) is not type(models[0]) for m in models):
        raise RuntimeError("stack_module_state: Expected all models to be of the same class.")
    params = {}
    for name, p in models[0].named_parameters():
        stacked = stack([dict(m.named_parameters())[name] for m in models]).detach()
        params[name] = stacked.requires_grad_(p.requires_grad)
    buffers = {}
    for name, _ in models[0].named_buffers():
        buffers[name] = stack([dict(m.named_buffers())[name] for m in models]).detach()
    return params, buffers

