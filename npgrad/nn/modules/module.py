"""Module: the base of every layer; owns parameter/buffer/submodule registration, hooks and state.

Note [Module attribute registration]
A Module keeps its state in three ordered dicts held in ``__dict__``:
``_parameters``, ``_buffers`` and ``_modules``.  ``__setattr__`` routes a value
by its type (Parameter, Module, a tensor made by ``Buffer`` or assigned to an
existing buffer name) into one of them, and ``__getattr__`` (called only when
normal lookup fails) reads them back.  Every traversal (``named_parameters``,
``state_dict``, ``repr``...) follows the insertion order of these dicts, so the
order in which ``__init__`` assigns attributes is the order users see, as in
torch.

Note [Full backward hooks]
``register_full_backward_hook`` needs the gradients with respect to the
module's inputs and outputs.  ``__call__`` routes the tensor arguments, and
then the tensor results, through an identity node
(``BackwardHookFunctionBackward``, torch's name).  A pre-hook on the output
node captures ``grad_output``; a post-hook on the input node sees
``grad_input`` once all of it is known, calls the user hooks with both and lets
them replace ``grad_input``.  When no input requires grad the user hooks run
from the output node with ``grad_input`` all None.
"""
from __future__ import annotations

import functools
import itertools
from collections import OrderedDict, namedtuple
from typing import Any, Callable, Iterator

import numpy as np

from ..._device import check_cuda_device, check_device, device
from ..._mode import _tls, RECORDING
from ..._tensor import Tensor
from ..._tensor_base import wrap_result
from ...autograd.graph import edge_of
from ...autograd.graph import Node, RemovableHandle, _HookDict
from ...autograd.grad_mode import no_grad
from ..parameter import Parameter, buffer_persistence, unmark_buffer

__all__ = ["Module"]


def _typename(obj: Any) -> str:
    """torch.typename: a tensor's legacy type name, else the qualified class name."""
    if isinstance(obj, Tensor):
        return obj.type()
    cls = obj if isinstance(obj, type) else type(obj)
    module = getattr(cls, "__module__", "") or ""
    name = getattr(cls, "__qualname__", cls.__name__)
    if module in ("", "builtins"):
        return name
    return module + "." + name


def _addindent(text: str, spaces: int) -> str:
    """Indent every line but the first by ``spaces`` (nested module reprs)."""
    lines = text.split("\n")
    if len(lines) == 1:
        return text
    pad = " " * spaces
    return "\n".join([lines[0]] + [pad + line for line in lines[1:]])


class _IncompatibleKeys(namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])):
    __slots__ = ()

    def __repr__(self) -> str:
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return super().__repr__()

    __str__ = __repr__


def _register_hook(hooks: _HookDict, fn: Callable, prepend: bool, extra: dict | None = None,
                   extra_value: Any = None) -> RemovableHandle:
    handle = RemovableHandle(hooks)
    hooks[handle.id] = fn
    if prepend:
        hooks.move_to_end(handle.id, last=False)
    if extra is not None:
        extra[handle.id] = extra_value
    return handle


class _OrderedHookDict(OrderedDict):
    """An ordered hook dict that handles can reference weakly."""

    pass


# -- the identity node behind full backward hooks -------------------------------------

class BackwardHookFunctionBackward(Node):
    """Identity on any number of tensors: a place to hang the full backward hooks."""

    __slots__ = ()

    def backward(self, *grads: Any) -> tuple:
        return grads


def _identity_hook_node(tensors: list) -> list:
    """Route ``tensors`` through one BackwardHookFunctionBackward node; returns the outputs."""
    if _tls.mode != RECORDING or not any(t._requires_grad for t in tensors):
        return list(tensors)
    node = object.__new__(BackwardHookFunctionBackward)
    node._init_node(tuple(edge_of(t) for t in tensors),
                    tuple((t._data.shape, t._data.dtype) for t in tensors))
    outs = []
    for i, t in enumerate(tensors):
        if t._requires_grad:
            outs.append(wrap_result(t._data, node, i))
        else:
            outs.append(t)
    return outs


class _BackwardHook:
    """One forward call's full backward hooks (see Note [Full backward hooks])."""

    def __init__(self, module: Module, user_hooks: list, user_pre_hooks: list) -> None:
        self.module = module
        self.user_hooks = user_hooks
        self.user_pre_hooks = user_pre_hooks
        self.grad_outputs: tuple | None = None
        self.n_outputs = -1
        self.output_index: list | None = None
        self.n_inputs = -1
        self.input_index: list | None = None
        self.input_node: Node | None = None

    @staticmethod
    def _pack(indices: list, values: Any, size: int) -> tuple:
        out: list = [None] * size
        for i, v in zip(indices, values):
            out[i] = v
        return tuple(out)

    def _apply(self, args: Any, is_output: bool) -> Any:
        single = not isinstance(args, tuple)
        items = (args,) if single else args
        index = [i for i, a in enumerate(items) if isinstance(a, Tensor)]
        if is_output:
            self.n_outputs, self.output_index = len(items), index
        else:
            self.n_inputs, self.input_index = len(items), index
        tensors = [items[i] for i in index]
        new = _identity_hook_node(tensors)
        node = None
        for t in new:
            if t._grad_fn is not None and type(t._grad_fn) is BackwardHookFunctionBackward:
                node = t._grad_fn
                break
        if node is None:
            return args
        if is_output:
            node.register_prehook(self._output_prehook)
        else:
            self.input_node = node
            node.register_hook(self._input_posthook)
        replaced = list(items)
        for i, t in zip(index, new):
            replaced[i] = t
        return replaced[0] if single else tuple(replaced)

    def _output_prehook(self, grad_outputs: tuple) -> Any:
        self.grad_outputs = self._pack(self.output_index, grad_outputs, self.n_outputs)
        result = None
        for hook in self.user_pre_hooks:
            res = hook(self.module, self.grad_outputs)
            if res is None:
                continue
            if len(res) != len(self.grad_outputs):
                raise RuntimeError("Backward pre hook returned an invalid number of grad_output, "
                                   f"got {len(res)}, but expected {len(self.grad_outputs)}")
            self.grad_outputs = tuple(res)
            result = [self.grad_outputs[i] for i in self.output_index]
        if self.input_node is None:
            # no input requires grad: the hooks run now, with grad_input all None
            import warnings

            warnings.warn(
                "Full backward hook is firing when gradients are computed with respect to module "
                "outputs since no inputs require gradients. See https://docs.pytorch.org/docs/"
                "main/generated/torch.nn.Module.html#torch.nn.Module.register_full_backward_hook"
                " for more details.", UserWarning, stacklevel=2)
            grad_inputs = self._pack([], [], max(self.n_inputs, 0))
            for hook in self.user_hooks:
                res = hook(self.module, grad_inputs, self.grad_outputs)
                if res is not None and not all(r is None for r in res):
                    raise RuntimeError("Backward hook for Modules where no input requires "
                                       "gradient should always return None or None for all "
                                       "gradients.")
            self.grad_outputs = None
        return result

    def _input_posthook(self, grad_inputs: tuple, _grad_outputs: tuple) -> Any:
        packed = self._pack(self.input_index, grad_inputs, self.n_inputs)
        changed = False
        for hook in self.user_hooks:
            res = hook(self.module, packed, self.grad_outputs)
            if res is None:
                continue
            res = tuple(res)
            if len(res) != len(packed):
                raise RuntimeError("Backward hook returned an invalid number of grad_input, "
                                   f"got {len(res)}, but expected {len(packed)}")
            packed, changed = res, True
        self.grad_outputs = None
        if not changed:
            return None
        return tuple(packed[i] for i in self.input_index)


# -- Module ---------------------------------------------------------------------------------

class Module:
    """Base class of all neural-network modules (torch.nn.Module).

    >>> import npgrad as torch
    >>> class Net(torch.nn.Module):
    ...     def __init__(self):
    ...         super().__init__()
    ...         self.fc = torch.nn.Linear(2, 1)
    ...     def forward(self, x):
    ...         return self.fc(x)
    >>> [name for name, _ in Net().named_parameters()]
    ['fc.weight', 'fc.bias']
    """

    _version: int = 1
    training: bool
    call_super_init: bool = False
    dump_patches: bool = False

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        if self.call_super_init is False and bool(kwargs):
            raise TypeError(f"{type(self).__name__}.__init__() got an unexpected keyword "
                            f"argument '{next(iter(kwargs))}'")
        if self.call_super_init is False and bool(args):
            raise TypeError(f"{type(self).__name__}.__init__() takes 1 positional argument "
                            f"but {len(args) + 1} were given")
        setattr_ = object.__setattr__
        setattr_(self, "training", True)
        setattr_(self, "_parameters", {})
        setattr_(self, "_buffers", {})
        setattr_(self, "_non_persistent_buffers_set", set())
        setattr_(self, "_backward_pre_hooks", _OrderedHookDict())
        setattr_(self, "_backward_hooks", _OrderedHookDict())
        setattr_(self, "_is_full_backward_hook", None)
        setattr_(self, "_forward_hooks", _OrderedHookDict())
        setattr_(self, "_forward_hooks_with_kwargs", {})
        setattr_(self, "_forward_hooks_always_called", {})
        setattr_(self, "_forward_pre_hooks", _OrderedHookDict())
        setattr_(self, "_forward_pre_hooks_with_kwargs", {})
        setattr_(self, "_state_dict_hooks", _OrderedHookDict())
        setattr_(self, "_load_state_dict_pre_hooks", _OrderedHookDict())
        setattr_(self, "_load_state_dict_post_hooks", _OrderedHookDict())
        setattr_(self, "_modules", {})

    def forward(self, *input: Any) -> Any:
        raise NotImplementedError(
            f'Module [{type(self).__name__}] is missing the required "forward" function')

    # -- registration --------------------------------------------------------------------
    def register_buffer(self, name: str, tensor: Tensor | None, persistent: bool = True) -> None:
        """Add a tensor that is module state but not a parameter (e.g. BatchNorm's running_mean)."""
        if "_buffers" not in self.__dict__:
            raise AttributeError("cannot assign buffer before Module.__init__() call")
        if not isinstance(name, str):
            raise TypeError(f"buffer name should be a string. Got {_typename(name)}")
        if "." in name:
            raise KeyError('buffer name can\'t contain "."')
        if name == "":
            raise KeyError('buffer name can\'t be empty string ""')
        if hasattr(self, name) and name not in self._buffers:
            raise KeyError(f"attribute '{name}' already exists")
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(f"cannot assign '{_typename(tensor)}' object to buffer '{name}' "
                            "(torch Tensor or None required)")
        unmark_buffer(tensor)
        self._buffers[name] = tensor
        if persistent:
            self._non_persistent_buffers_set.discard(name)
        else:
            self._non_persistent_buffers_set.add(name)

    def register_parameter(self, name: str, param: Parameter | None) -> None:
        """Add a parameter; ``module.name = Parameter(...)`` does the same."""
        if "_parameters" not in self.__dict__:
            raise AttributeError("cannot assign parameter before Module.__init__() call")
        if not isinstance(name, str):
            raise TypeError(f"parameter name should be a string. Got {_typename(name)}")
        if "." in name:
            raise KeyError('parameter name can\'t contain "."')
        if name == "":
            raise KeyError('parameter name can\'t be empty string ""')
        if hasattr(self, name) and name not in self._parameters:
            raise KeyError(f"attribute '{name}' already exists")
        if param is None:
            self._parameters[name] = None
            return
        if not isinstance(param, Parameter):
            raise TypeError(f"cannot assign '{_typename(param)}' object to parameter '{name}' "
                            "(torch.nn.Parameter or None required)")
        if param.grad_fn is not None:
            raise ValueError(
                f"Cannot assign non-leaf Tensor to parameter '{name}'. Model parameters must be "
                f"created explicitly. To express '{name}' as a function of another Tensor, "
                "compute the value in the forward() method.")
        self._parameters[name] = param

    def add_module(self, name: str, module: Module | None) -> None:
        """Add a child module, reachable as the attribute ``name``."""
        if not isinstance(module, Module) and module is not None:
            raise TypeError(f"{_typename(module)} is not a Module subclass")
        if not isinstance(name, str):
            raise TypeError(f"module name should be a string. Got {_typename(name)}")
        if hasattr(self, name) and name not in self._modules:
            raise KeyError(f"attribute '{name}' already exists")
        if "." in name:
            raise KeyError(f'module name can\'t contain ".", got: {name}')
        if name == "":
            raise KeyError('module name can\'t be empty string ""')
        self._modules[name] = module

    def register_module(self, name: str, module: Module | None) -> None:
        self.add_module(name, module)

    def get_submodule(self, target: str) -> Module:
        if target == "":
            return self
        mod: Module = self
        for item in target.split("."):
            if not hasattr(mod, item):
                raise AttributeError(mod._get_name() + " has no attribute `" + item + "`")
            mod = getattr(mod, item)
            if not isinstance(mod, Module):
                raise AttributeError("`" + item + "` is not an nn.Module")
        return mod

    def get_parameter(self, target: str) -> Parameter:
        module_path, _, name = target.rpartition(".")
        mod = self.get_submodule(module_path)
        if not hasattr(mod, name):
            raise AttributeError(mod._get_name() + " has no attribute `" + name + "`")
        param = getattr(mod, name)
        if not isinstance(param, Parameter):
            raise AttributeError("`" + name + "` is not an nn.Parameter")
        return param

    def get_buffer(self, target: str) -> Tensor:
        module_path, _, name = target.rpartition(".")
        mod = self.get_submodule(module_path)
        if not hasattr(mod, name):
            raise AttributeError(mod._get_name() + " has no attribute `" + name + "`")
        if name not in mod._buffers:
            raise AttributeError("`" + name + "` is not a buffer")
        return getattr(mod, name)

    # -- attribute routing (Note [Module attribute registration]) ---------------------------
    def __getattr__(self, name: str) -> Any:
        d = self.__dict__
        for store in ("_parameters", "_buffers", "_modules"):
            if store in d:
                values = d[store]
                if name in values:
                    return values[name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __setattr__(self, name: str, value: Any) -> None:
        def remove_from(*dicts_or_sets: Any) -> None:
            for d in dicts_or_sets:
                if name in d:
                    if isinstance(d, dict):
                        del d[name]
                    else:
                        d.discard(name)

        params = self.__dict__.get("_parameters")
        if isinstance(value, Parameter):
            if params is None:
                raise AttributeError("cannot assign parameters before Module.__init__() call")
            remove_from(self.__dict__, self._buffers, self._modules,
                        self._non_persistent_buffers_set)
            self.register_parameter(name, value)
            return
        if params is not None and name in params:
            if value is not None:
                raise TypeError(f"cannot assign '{_typename(value)}' as parameter '{name}' "
                                "(torch.nn.Parameter or None expected)")
            self.register_parameter(name, value)
            return
        modules = self.__dict__.get("_modules")
        if isinstance(value, Module):
            if modules is None:
                raise AttributeError("cannot assign module before Module.__init__() call")
            remove_from(self.__dict__, self._parameters, self._buffers,
                        self._non_persistent_buffers_set)
            modules[name] = value
            return
        if modules is not None and name in modules:
            if value is not None:
                raise TypeError(f"cannot assign '{_typename(value)}' as child module '{name}' "
                                "(torch.nn.Module or None expected)")
            modules[name] = value
            return
        buffers = self.__dict__.get("_buffers")
        marked = buffer_persistence(value)
        if marked is not None or (buffers is not None and name in buffers):
            if value is not None and not isinstance(value, Tensor):
                raise TypeError(f"cannot assign '{_typename(value)}' as buffer '{name}' "
                                "(torch.nn.Buffer, torch.Tensor or None expected)")
            if marked is not None:
                persistent = marked
            else:
                persistent = name not in self._non_persistent_buffers_set
            remove_from(self.__dict__, self._parameters, self._modules)
            self.register_buffer(name, value, persistent)
            return
        object.__setattr__(self, name, value)

    def __delattr__(self, name: str) -> None:
        if name in self._parameters:
            del self._parameters[name]
        elif name in self._buffers:
            del self._buffers[name]
            self._non_persistent_buffers_set.discard(name)
        elif name in self._modules:
            del self._modules[name]
        else:
            object.__delattr__(self, name)

    def __dir__(self) -> list:
        keys = (dir(type(self)) + list(self.__dict__) + list(self._parameters)
                + list(self._modules) + list(self._buffers))
        return sorted(k for k in keys if not k[0].isdigit())

    # -- traversal ---------------------------------------------------------------------
    def _named_members(self, get_members: Callable, prefix: str = "", recurse: bool = True,
                       remove_duplicate: bool = True) -> Iterator:
        memo: set = set()
        modules = (self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate)
                   if recurse else [(prefix, self)])
        for module_prefix, module in modules:
            for k, v in get_members(module):
                if v is None or v in memo:
                    continue
                if remove_duplicate:
                    memo.add(v)
                yield module_prefix + ("." if module_prefix else "") + k, v

    def parameters(self, recurse: bool = True) -> Iterator[Parameter]:
        for _, param in self.named_parameters(recurse=recurse):
            yield param

    def named_parameters(self, prefix: str = "", recurse: bool = True,
                         remove_duplicate: bool = True) -> Iterator:
        yield from self._named_members(lambda m: m._parameters.items(), prefix=prefix,
                                       recurse=recurse, remove_duplicate=remove_duplicate)

    def buffers(self, recurse: bool = True) -> Iterator[Tensor]:
        for _, buf in self.named_buffers(recurse=recurse):
            yield buf

    def named_buffers(self, prefix: str = "", recurse: bool = True,
                      remove_duplicate: bool = True) -> Iterator:
        yield from self._named_members(lambda m: m._buffers.items(), prefix=prefix,
                                       recurse=recurse, remove_duplicate=remove_duplicate)

    def children(self) -> Iterator[Module]:
        for _, module in self.named_children():
            yield module

    def named_children(self) -> Iterator:
        memo: set = set()
        for name, module in self._modules.items():
            if module is not None and module not in memo:
                memo.add(module)
                yield name, module

    def modules(self) -> Iterator[Module]:
        for _, module in self.named_modules():
            yield module

    def named_modules(self, memo: set | None = None, prefix: str = "",
                      remove_duplicate: bool = True) -> Iterator:
        # iterative pre-order walk (deeply nested models must not hit the recursion limit)
        if memo is None:
            memo = set()
        stack = [(prefix, self)]
        while stack:
            pre, module = stack.pop()
            if module in memo:
                continue
            if remove_duplicate:
                memo.add(module)
            yield pre, module
            kids = [(pre + ("." if pre else "") + name, sub)
                    for name, sub in module._modules.items() if sub is not None]
            stack.extend(reversed(kids))

    # -- modes -------------------------------------------------------------------------
    def train(self, mode: bool = True) -> Module:
        """Set training mode here and in every submodule (grad mode is not touched)."""
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        self.training = mode
        for module in self.children():
            module.train(mode)
        return self

    def eval(self) -> Module:
        return self.train(False)

    def requires_grad_(self, requires_grad: bool = True) -> Module:
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none: bool = True) -> None:
        for p in self.parameters():
            if p.grad is None:
                continue
            if set_to_none:
                p.grad = None
            else:
                if p.grad.grad_fn is not None:
                    p.grad.detach_()
                else:
                    p.grad.requires_grad_(False)
                p.grad.zero_()

    def apply(self, fn: Callable[[Module], None]) -> Module:
        for module in self.children():
            module.apply(fn)
        fn(self)
        return self

    def _apply(self, fn: Callable[[Tensor], Tensor]) -> Module:
        for module in self.children():
            module._apply(fn)
        for key, param in self._parameters.items():
            if param is None:
                continue
            with no_grad():
                new = fn(param)
            if new._data is not param._data:
                param.data = new
            if param._grad is not None:
                with no_grad():
                    g = fn(param._grad)
                if g._data is not param._grad._data:
                    param._grad = g.detach()
        for key, buf in self._buffers.items():
            if buf is not None:
                self._buffers[key] = fn(buf)
        return self

    def to(self, *args: Any, **kwargs: Any) -> Module:
        """Cast floating-point parameters and buffers (``to(dtype)``, ``to(tensor)``, ``to('cpu')``)."""
        from ... import _dtype

        dtype = kwargs.get("dtype")
        dev = kwargs.get("device")
        for a in args:
            if isinstance(a, _dtype.dtype):
                dtype = a
            elif isinstance(a, Tensor):
                dtype = a.dtype
            elif isinstance(a, (str, int, device)):
                dev = a
        if dev is not None:
            # Note [Devices: construct anything, use only the CPU]: a bad string fails at
            # once; a real but absent device only when there is a tensor to move
            if not isinstance(dev, int):
                device(dev)
            if self._has_tensors():
                check_device(dev)
        if dtype is not None and not dtype.is_floating_point:
            raise TypeError("nn.Module.to only accepts floating point or complex dtypes, "
                            f"but got desired dtype={dtype}")
        if dtype is None:
            return self

        def convert(t: Tensor) -> Tensor:
            return t.to(dtype) if t.is_floating_point() else t

        return self._apply(convert)

    def float(self) -> Module:
        return self._apply(lambda t: t.float() if t.is_floating_point() else t)

    def double(self) -> Module:
        return self._apply(lambda t: t.double() if t.is_floating_point() else t)

    def half(self) -> Module:
        return self._apply(lambda t: t.half() if t.is_floating_point() else t)

    def bfloat16(self) -> Module:
        return self._apply(lambda t: t.bfloat16() if t.is_floating_point() else t)

    def type(self, dst_type: Any) -> Module:
        return self._apply(lambda t: t.type(dst_type))

    def cpu(self) -> Module:
        return self

    def cuda(self, device: Any = None) -> Module:
        if self._has_tensors():
            check_cuda_device(device)  # always raises: a CPU build has no CUDA
        return self

    def _has_tensors(self) -> bool:
        return any(True for _ in itertools.chain(self.parameters(), self.buffers()))

    def share_memory(self) -> Module:
        return self

    # -- state_dict ----------------------------------------------------------------------
    def _save_to_state_dict(self, destination: dict, prefix: str, keep_vars: bool) -> None:
        for name, param in self._parameters.items():
            if param is not None:
                destination[prefix + name] = param if keep_vars else param.detach()
        for name, buf in self._buffers.items():
            if buf is not None and name not in self._non_persistent_buffers_set:
                destination[prefix + name] = buf if keep_vars else buf.detach()
        extra_state_key = prefix + "_extra_state"
        if type(self).get_extra_state is not Module.get_extra_state:
            destination[extra_state_key] = self.get_extra_state()

    def state_dict(self, *args: Any, destination: Any = None, prefix: str = "",
                   keep_vars: bool = False) -> dict:
        """Parameters and persistent buffers by dotted name, detached unless ``keep_vars``."""
        if args:  # the deprecated positional form (destination, prefix, keep_vars)
            destination = args[0]
            if len(args) > 1:
                prefix = args[1]
            if len(args) > 2:
                keep_vars = args[2]
        if destination is None:
            destination = OrderedDict()
            destination._metadata = OrderedDict()  # type: ignore[attr-defined]
        local_metadata = dict(version=self._version)
        if hasattr(destination, "_metadata"):
            destination._metadata[prefix[:-1]] = local_metadata
        self._save_to_state_dict(destination, prefix, keep_vars)
        for name, module in self._modules.items():
            if module is not None:
                module.state_dict(destination=destination, prefix=prefix + name + ".",
                                  keep_vars=keep_vars)
        for hook in self._state_dict_hooks.values():
            result = hook(self, destination, prefix, local_metadata)
            if result is not None:
                destination = result
        return destination

    def get_extra_state(self) -> Any:
        raise RuntimeError(
            "Reached a code path in Module.get_extra_state() that should never be called. "
            "Please file an issue at https://github.com/pytorch/pytorch/issues/new?template="
            "bug-report.yml to report this bug.")

    def set_extra_state(self, state: Any) -> None:
        raise RuntimeError(
            "Reached a code path in Module.set_extra_state() that should never be called. "
            "Please file an issue at https://github.com/pytorch/pytorch/issues/new?template="
            "bug-report.yml to report this bug.")

    def _load_from_state_dict(self, state_dict: dict, prefix: str, local_metadata: dict,
                              strict: bool, missing_keys: list, unexpected_keys: list,
                              error_msgs: list) -> None:
        for hook in self._load_state_dict_pre_hooks.values():
            hook(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                 error_msgs)
        persistent = {k: v for k, v in self._buffers.items()
                      if k not in self._non_persistent_buffers_set}
        local_state = {k: v for k, v in itertools.chain(self._parameters.items(),
                                                        persistent.items()) if v is not None}
        assign = local_metadata.get("assign_to_params_buffers", False)
        for name, param in local_state.items():
            key = prefix + name
            if key not in state_dict:
                if strict:
                    missing_keys.append(key)
                continue
            input_param = state_dict[key]
            if not isinstance(input_param, Tensor):
                error_msgs.append(f'While copying the parameter named "{key}", expected '
                                  "torch.Tensor or Tensor-like object from checkpoint but "
                                  f"received {type(input_param)}")
                continue
            if param.dim() == 0 and input_param.dim() == 1:
                input_param = input_param[0]
            if input_param.shape != param.shape:
                error_msgs.append(f"size mismatch for {key}: copying a param with shape "
                                  f"{input_param.shape} from checkpoint, the shape in current "
                                  f"model is {param.shape}.")
                continue
            try:
                with no_grad():
                    if assign:
                        if isinstance(param, Parameter):
                            if not isinstance(input_param, Parameter):
                                input_param = Parameter(input_param,
                                                        requires_grad=param.requires_grad)
                            else:
                                input_param.requires_grad_(param.requires_grad)
                        setattr(self, name, input_param)
                    else:
                        param.copy_(input_param)
            except Exception as ex:
                error_msgs.append(
                    f'While copying the parameter named "{key}", whose dimensions in the model '
                    f"are {param.size()} and whose dimensions in the checkpoint are "
                    f"{input_param.size()}, an exception occurred : {ex.args}.")
        extra_state_key = prefix + "_extra_state"
        has_extra = type(self).set_extra_state is not Module.set_extra_state
        if has_extra:
            if extra_state_key in state_dict:
                self.set_extra_state(state_dict[extra_state_key])
            elif strict:
                missing_keys.append(extra_state_key)
        if strict:
            for key in state_dict:
                if key.startswith(prefix) and not (has_extra and key == extra_state_key):
                    parts = key[len(prefix):].split(".", 1)
                    # a dotted rest must name a submodule ("weight.extra" does not)
                    known = self._modules if len(parts) > 1 else local_state
                    if parts[0] not in known:
                        unexpected_keys.append(key)

    def load_state_dict(self, state_dict: Any, strict: bool = True,
                        assign: bool = False) -> _IncompatibleKeys:
        """Copy parameters and buffers from ``state_dict`` (under no_grad); see torch's rules."""
        from collections.abc import Mapping

        if not isinstance(state_dict, Mapping):
            raise TypeError(f"Expected state_dict to be dict-like, got {type(state_dict)}.")
        missing_keys: list = []
        unexpected_keys: list = []
        error_msgs: list = []
        metadata = getattr(state_dict, "_metadata", None)
        state_dict = OrderedDict(state_dict)
        if metadata is not None:
            state_dict._metadata = metadata  # type: ignore[attr-defined]

        # iterative walk: each module sees only the keys under its own prefix
        stack = [(self, state_dict, "")]
        while stack:
            module, local_sd, prefix = stack.pop()
            local_metadata = {} if metadata is None else dict(metadata.get(prefix[:-1], {}))
            if assign:
                local_metadata["assign_to_params_buffers"] = assign
            module._load_from_state_dict(local_sd, prefix, local_metadata, True, missing_keys,
                                         unexpected_keys, error_msgs)
            kids = []
            for name, child in module._modules.items():
                if child is not None:
                    child_prefix = prefix + name + "."
                    child_sd = {k: v for k, v in local_sd.items() if k.startswith(child_prefix)}
                    kids.append((child, child_sd, child_prefix))
            stack.extend(reversed(kids))
            incompatible = _IncompatibleKeys(missing_keys, unexpected_keys)
            for hook in module._load_state_dict_post_hooks.values():
                hook(module, incompatible)

        if strict:
            if unexpected_keys:
                error_msgs.insert(0, "Unexpected key(s) in state_dict: {}. ".format(
                    ", ".join(f'"{k}"' for k in unexpected_keys)))
            if missing_keys:
                error_msgs.insert(0, "Missing key(s) in state_dict: {}. ".format(
                    ", ".join(f'"{k}"' for k in missing_keys)))
        if error_msgs:
            raise RuntimeError("Error(s) in loading state_dict for {}:\n\t{}".format(
                type(self).__name__, "\n\t".join(error_msgs)))
        return _IncompatibleKeys(missing_keys, unexpected_keys)

    def register_state_dict_post_hook(self, hook: Callable) -> RemovableHandle:
        return _register_hook(self._state_dict_hooks, hook, False)

    def register_load_state_dict_pre_hook(self, hook: Callable) -> RemovableHandle:
        return _register_hook(self._load_state_dict_pre_hooks,
                              functools.partial(hook, self), False)

    def register_load_state_dict_post_hook(self, hook: Callable) -> RemovableHandle:
        return _register_hook(self._load_state_dict_post_hooks, hook, False)

    # -- hooks and calling -----------------------------------------------------------------
    def register_forward_pre_hook(self, hook: Callable, *, prepend: bool = False,
                                  with_kwargs: bool = False) -> RemovableHandle:
        """``hook(module, args)`` before ``forward``; may return new args."""
        return _register_hook(self._forward_pre_hooks, hook, prepend,
                              self._forward_pre_hooks_with_kwargs if with_kwargs else None, True)

    def register_forward_hook(self, hook: Callable, *, prepend: bool = False,
                              with_kwargs: bool = False,
                              always_call: bool = False) -> RemovableHandle:
        """``hook(module, args, output)`` after ``forward``; may return a new output."""
        handle = _register_hook(self._forward_hooks, hook, prepend,
                                self._forward_hooks_with_kwargs if with_kwargs else None, True)
        if always_call:
            self._forward_hooks_always_called[handle.id] = True
        return handle

    def register_full_backward_pre_hook(self, hook: Callable,
                                        prepend: bool = False) -> RemovableHandle:
        """``hook(module, grad_output)`` before the module's input gradients are computed."""
        return _register_hook(self._backward_pre_hooks, hook, prepend)

    def register_full_backward_hook(self, hook: Callable,
                                    prepend: bool = False) -> RemovableHandle:
        """``hook(module, grad_input, grad_output)``; may return a new grad_input."""
        if self._is_full_backward_hook is False:
            raise RuntimeError("Cannot use both regular backward hooks and full backward hooks "
                               "on a single Module. Please use only one of them.")
        object.__setattr__(self, "_is_full_backward_hook", True)
        return _register_hook(self._backward_hooks, hook, prepend)

    def register_backward_hook(self, hook: Callable) -> RemovableHandle:
        raise NotImplementedError("npgrad supports only register_full_backward_hook")

    def _call_impl(self, *args: Any, **kwargs: Any) -> Any:
        forward = self.forward
        if not (self._forward_hooks or self._forward_pre_hooks or self._backward_hooks
                or self._backward_pre_hooks):
            return forward(*args, **kwargs)

        for hook_id, hook in list(self._forward_pre_hooks.items()):
            if hook_id in self._forward_pre_hooks_with_kwargs:
                res = hook(self, args, kwargs)
                if res is not None:
                    if isinstance(res, tuple) and len(res) == 2:
                        args, kwargs = res
                    else:
                        raise RuntimeError("forward pre-hook must return None or a tuple of "
                                           f"(new_args, new_kwargs), but got {res}.")
            else:
                res = hook(self, args)
                if res is not None:
                    args = res if isinstance(res, tuple) else (res,)

        bw_hook = None
        if self._backward_hooks or self._backward_pre_hooks:
            bw_hook = _BackwardHook(self, list(self._backward_hooks.values()),
                                    list(self._backward_pre_hooks.values()))
            args = bw_hook._apply(args, is_output=False)

        result = forward(*args, **kwargs)

        for hook_id, hook in list(self._forward_hooks.items()):
            if hook_id in self._forward_hooks_with_kwargs:
                res = hook(self, args, kwargs, result)
            else:
                res = hook(self, args, result)
            if res is not None:
                result = res

        if bw_hook is not None:
            result = bw_hook._apply(result, is_output=True)
        return result

    __call__ = _call_impl

    # -- repr --------------------------------------------------------------------------
    def _get_name(self) -> str:
        return type(self).__name__

    def extra_repr(self) -> str:
        """The layer's own settings, printed inside its parentheses; override in layers."""
        return ""

    def __repr__(self) -> str:
        extra = self.extra_repr()
        extra_lines = extra.split("\n") if extra else []
        child_lines = [f"({key}): " + _addindent(repr(module), 2)
                       for key, module in self._modules.items()]
        lines = extra_lines + child_lines
        text = self._get_name() + "("
        if lines:
            if len(extra_lines) == 1 and not child_lines:
                text += extra_lines[0]
            else:
                text += "\n  " + "\n  ".join(lines) + "\n"
        return text + ")"


# -- helpers shared by the layer modules ----------------------------------------------

def _ntuple(n: int) -> Callable:
    def parse(x: Any) -> tuple:
        if isinstance(x, (list, tuple)):
            return tuple(x)
        return tuple(itertools.repeat(x, n))

    return parse


_single = _ntuple(1)
_pair = _ntuple(2)


def _float_dtype(dtype: Any) -> np.dtype:
    from ... import _dtype

    if dtype is None:
        return _dtype.get_default_dtype().np_dtype
    return dtype.np_dtype
