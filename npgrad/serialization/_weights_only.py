"""The weights-only unpickler: an allowlist of globals and opcodes, so nothing from a file runs.

Note [Weights-only loading]
``torch.load(weights_only=True)`` -- torch's default since 2.6 and npgrad's --
reads a pickle with an interpreter of its own that knows a fixed set of
opcodes (those protocol 2 writes for containers, numbers, strings and
globals) and resolves a GLOBAL only from an allowlist: tensor and storage
rebuilds, OrderedDict, Counter, set, bytearray, complex, dtypes, ``torch.Size``,
``torch.device``, ``Parameter``, plus what the user allowed with
``add_safe_globals`` / ``safe_globals``.  A global from ``os``, ``sys``,
``posix`` or ``nt`` is refused outright; any other name off the list raises
``pickle.UnpicklingError`` before anything is called.  REDUCE calls only
allowed callables, NEWOBJ and BUILD touch only allowed classes, and any other
opcode is "Unsupported operand".  The messages are torch's, word for word
(scripts and tests match on them), and ``load`` wraps them in torch's
"Weights only load failed" text.  This interpreter is written for npgrad; the
opcode set and the messages are torch's compatibility facts.
"""
from __future__ import annotations

import pickle
import re
import struct
import warnings
from _compat_pickle import (  # Python 2 names, as pickle maps them
    IMPORT_MAPPING,
    NAME_MAPPING,
)
from codecs import encode
from collections import Counter, OrderedDict
from collections.abc import Callable
from typing import Any

from . import _rebuild

__all__ = [
    "UNSAFE_MESSAGE",
    "Unpickler",
    "add_safe_globals",
    "clear_safe_globals",
    "get_safe_globals",
    "safe_globals",
    "weights_only_message",
]

UnpicklingError = pickle.UnpicklingError

UNSAFE_MESSAGE = (
    "In PyTorch 2.6, we changed the default value of the `weights_only` argument in `torch.load` "
    "from `False` to `True`. Re-running `torch.load` with `weights_only` set to `False` will "
    "likely succeed, but it can result in arbitrary code execution. Do it only if you got the "
    "file from a trusted source.")
_DOCS_MESSAGE = (
    "\n\nCheck the documentation of torch.load to learn more about types accepted by default "
    "with weights_only https://pytorch.org/docs/stable/generated/torch.load.html.")
_BLOCKED_MODULES = ("sys", "os", "posix", "nt")

# -- the user's allowlist (torch.serialization.add_safe_globals and friends) ----------------

_user_globals: set = set()


def add_safe_globals(safe_globals: list) -> None:
    """Allow these classes/functions (or ``(obj, "module.name")`` pairs) in weights-only loads."""
    global _user_globals
    _user_globals = _user_globals | set(safe_globals)


def get_safe_globals() -> list:
    """The globals the user has allowed for weights-only loads."""
    return list(_user_globals)


def clear_safe_globals() -> None:
    """Forget every global added with ``add_safe_globals``."""
    global _user_globals
    _user_globals = set()


class safe_globals:
    """Allow ``safe_globals`` for weights-only loads inside a ``with`` block."""

    def __init__(self, safe_globals: list) -> None:
        self.safe_globals = safe_globals

    def __enter__(self) -> None:
        add_safe_globals(self.safe_globals)

    def __exit__(self, *exc: object) -> None:
        global _user_globals
        _user_globals = _user_globals - set(self.safe_globals)


def _user_allowed() -> dict[str, Any]:
    table: dict[str, Any] = {}
    for entry in _user_globals:
        if isinstance(entry, tuple):
            if len(entry) != 2:
                raise ValueError("Expected tuple of length 2 (global, str of callable full "
                                 f"path), but got tuple of length: {len(entry)}")
            if type(entry[1]) is not str:
                raise TypeError("Expected second item in tuple to be str of callable full "
                                f"path, but got: {type(entry[1])}")
            table[entry[1]] = entry[0]
            continue
        path = f"{entry.__module__}.{entry.__qualname__}"
        table[path] = entry
        if path.startswith("npgrad."):  # torch's files name it torch.<same path>
            table.setdefault("torch." + path[len("npgrad."):], entry)
    return table


_default_allowed: dict[str, Any] | None = None


def _allowed() -> dict[str, Any]:
    global _default_allowed
    if _default_allowed is None:
        table = dict(_rebuild.torch_globals())
        table.update({"collections.Counter": Counter, "_codecs.encode": encode,
                      "builtins.bytearray": bytearray, "builtins.set": set,
                      "builtins.complex": complex})
        _default_allowed = table
    return _default_allowed


def _unsupported_global(full_path: str) -> UnpicklingError:
    if full_path.startswith("builtins"):
        rest = full_path[len("builtins"):]
        full_path = rest[1:] if rest.startswith(".") else "builtins" + rest
    return UnpicklingError(
        f"Unsupported global: GLOBAL {full_path} was not an allowed global by default. "
        f"Please use `torch.serialization.add_safe_globals([{full_path}])` or the "
        f"`torch.serialization.safe_globals([{full_path}])` context manager to allowlist this "
        "global if you trust this class/function.")


def weights_only_message(message: str) -> str:
    """torch.load's wrapping of a weights-only UnpicklingError's text."""
    if re.search(r"GLOBAL (\S+) was not an allowed global by default.", message):
        return ("Weights only load failed. This file can still be loaded, to do so you have two "
                "options, \033[1mdo those steps only if you trust the source of the "
                f"checkpoint\033[0m. \n\t(1) {UNSAFE_MESSAGE}\n\t(2) Alternatively, to load "
                "with `weights_only=True` please check the recommended steps in the following "
                "error message.\n\tWeightsUnpickler error: " + message + _DOCS_MESSAGE)
    if re.search(r"(\S+) must be (\S+) to load", message):
        return f"Weights only load failed. {message}\n {UNSAFE_MESSAGE}\n"
    text = f"Weights only load failed. {UNSAFE_MESSAGE}\n"
    if not re.search(r"whose module (\S+) is blocked", message):
        text += ("Please file an issue with the following so that we can make "
                 "`weights_only=True` compatible with your use case: WeightsUnpickler error: ")
    return text + "\n\n" + message + _DOCS_MESSAGE


class Unpickler:
    """Reads one pickle with the allowlist of Note [Weights-only loading]."""

    def __init__(self, file: Any, *, encoding: str = "ASCII",
                 persistent_load: Callable[[Any], Any] | None = None) -> None:
        self.read = file.read
        self.readline = file.readline
        self.encoding = encoding
        self.persistent_load = persistent_load
        self.memo: dict[int, Any] = {}
        self.metastack: list[list] = []
        self.stack: list[Any] = []
        # the allowlist as it stands when loading starts
        self.allowed = _allowed()
        self.user = _user_allowed()
        self.allowed_ids = {id(v) for v in self.allowed.values()} | \
            {id(v) for v in self.user.values()}

    # -- the pieces the opcodes share ------------------------------------------------------
    def _pop_mark(self) -> list:
        items = self.stack
        self.stack = self.metastack.pop()
        return items

    def _exact(self, n: int) -> bytes:
        data = self.read(n)
        if len(data) != n:
            raise EOFError
        return data

    def _global(self) -> Any:
        module = self.readline()[:-1].decode("utf-8")
        name = self.readline()[:-1].decode("utf-8")
        if (module, name) in NAME_MAPPING:
            module, name = NAME_MAPPING[(module, name)]
        elif module in IMPORT_MAPPING:
            module = IMPORT_MAPPING[module]
        full_path = f"{module}.{name}"
        if module in _BLOCKED_MODULES:
            raise UnpicklingError(f"Trying to load unsupported GLOBAL {full_path} whose module "
                                  f"{module} is blocked.")
        if full_path in self.allowed:
            return self.allowed[full_path]
        if full_path in self.user:
            return self.user[full_path]
        if full_path in ("torch.nested._internal.nested_tensor.NestedTensor",
                         "torch.nested._internal.nested_tensor._rebuild_njt",
                         "torch._dynamo.decorators._DimRange"):
            raise UnpicklingError("``torch.nested`` and ``torch._dynamo`` must be imported to "
                                  "load nested jagged tensors (NJTs)")
        if full_path.startswith(("torch.distributed.device_mesh.DeviceMesh",
                                 "torch.distributed.tensor.")) and full_path.rsplit(".", 1)[-1] \
                in ("DeviceMesh", "DTensorSpec", "TensorMeta", "DTensor", "Partial",
                    "Replicate", "Shard"):
            raise UnpicklingError("``torch.distributed.tensor`` must be imported to load "
                                  "DTensors")
        raise _unsupported_global(full_path)

    def _is_allowed(self, obj: Any) -> bool:
        return id(obj) in self.allowed_ids

    def _build(self, inst: Any, state: Any) -> None:
        from .._tensor import Tensor
        from ..nn.parameter import Parameter  # on first use: npgrad.nn is large

        if type(inst) is Tensor or type(inst) is Parameter:
            if state:
                raise UnpicklingError(f"npgrad cannot set the state {state!r} of a tensor")
        elif type(inst) is OrderedDict:
            inst.__dict__.update(state)
        elif self._is_allowed(type(inst)):
            if hasattr(inst, "__setstate__"):
                inst.__setstate__(state)
            else:
                slotstate = None
                if isinstance(state, tuple) and len(state) == 2:
                    state, slotstate = state
                if state:
                    inst.__dict__.update(state)
                if slotstate:
                    for k, v in slotstate.items():
                        setattr(inst, k, v)
        else:
            raise UnpicklingError("Can only build Tensor, Parameter, OrderedDict or types "
                                  f"allowlisted via `add_safe_globals`, but got {type(inst)}")

    def _set_item_target(self, opcode: str) -> dict:
        target = self.stack[-1]
        if type(target) not in (dict, OrderedDict, Counter):
            raise UnpicklingError(f"Can only {opcode} for dict, collections.OrderedDict, "
                                  f"collections.Counter, but got {type(target)}")
        return target

    # -- the interpreter -----------------------------------------------------------------
    def load(self) -> Any:
        self.metastack = []
        self.stack = []
        read = self.read
        while True:
            key = read(1)
            if not key:
                raise EOFError
            op = key[0]
            stack = self.stack
            if op == pickle.GLOBAL[0]:
                stack.append(self._global())
            elif op == pickle.NEWOBJ[0]:
                args = stack.pop()
                cls = stack.pop()
                from ..nn.parameter import Parameter  # on first use: npgrad.nn is large

                if cls is Parameter:
                    stack.append(Parameter(*args))
                elif self._is_allowed(cls):
                    stack.append(cls.__new__(cls, *args))
                else:
                    raise UnpicklingError("Can only create new object for nn.Parameter or "
                                          f"classes allowlisted via `add_safe_globals` but got "
                                          f"{cls}")
            elif op == pickle.REDUCE[0]:
                args = stack.pop()
                func = stack[-1]
                if not self._is_allowed(func):
                    message = f"Trying to call reduce for unrecognized function {func}"
                    if hasattr(func, "__self__"):
                        message += f" which belongs to {func.__self__}"
                    raise UnpicklingError(message)
                stack[-1] = func(*args)
            elif op == pickle.BUILD[0]:
                state = stack.pop()
                self._build(stack[-1], state)
            elif op == pickle.APPEND[0]:
                item = stack.pop()
                if type(stack[-1]) is not list:
                    raise UnpicklingError(f"Can only append to lists, but got {type(stack[-1])}")
                stack[-1].append(item)
            elif op == pickle.APPENDS[0]:
                items = self._pop_mark()
                if type(self.stack[-1]) is not list:
                    raise UnpicklingError(f"Can only extend lists, but got {type(self.stack[-1])}")
                self.stack[-1].extend(items)
            elif op == pickle.SETITEM[0]:
                value = stack.pop()
                k = stack.pop()
                self._set_item_target("SETITEM")[k] = value
            elif op == pickle.SETITEMS[0]:
                items = self._pop_mark()
                target = self._set_item_target("SETITEMS")
                for i in range(0, len(items), 2):
                    target[items[i]] = items[i + 1]
            elif op == pickle.MARK[0]:
                self.metastack.append(stack)
                self.stack = []
            elif op == pickle.TUPLE[0]:
                items = self._pop_mark()
                self.stack.append(tuple(items))
            elif op == pickle.TUPLE1[0]:
                stack[-1] = (stack[-1],)
            elif op == pickle.TUPLE2[0]:
                stack[-2:] = [(stack[-2], stack[-1])]
            elif op == pickle.TUPLE3[0]:
                stack[-3:] = [(stack[-3], stack[-2], stack[-1])]
            elif op == pickle.NONE[0]:
                stack.append(None)
            elif op == pickle.NEWFALSE[0]:
                stack.append(False)
            elif op == pickle.NEWTRUE[0]:
                stack.append(True)
            elif op == pickle.EMPTY_TUPLE[0]:
                stack.append(())
            elif op == pickle.EMPTY_LIST[0]:
                stack.append([])
            elif op == pickle.EMPTY_DICT[0]:
                stack.append({})
            elif op == pickle.EMPTY_SET[0]:
                stack.append(set())
            elif op == pickle.BININT[0]:
                stack.append(struct.unpack("<i", self._exact(4))[0])
            elif op == pickle.BININT1[0]:
                stack.append(self._exact(1)[0])
            elif op == pickle.BININT2[0]:
                stack.append(struct.unpack("<H", self._exact(2))[0])
            elif op == pickle.BINFLOAT[0]:
                stack.append(struct.unpack(">d", self._exact(8))[0])
            elif op == pickle.BINUNICODE[0]:
                n = struct.unpack("<I", self._exact(4))[0]
                stack.append(str(self._exact(n), "utf-8", "surrogatepass"))
            elif op == pickle.SHORT_BINSTRING[0]:
                data = self._exact(self._exact(1)[0])
                stack.append(data if self.encoding == "bytes" else
                             data.decode(self.encoding, "strict"))
            elif op == pickle.BINPERSID[0]:
                pid = stack.pop()
                if type(pid) is not tuple and type(pid) is not int:
                    raise UnpicklingError("persistent_load id must be tuple or int, but got "
                                          f"{type(pid)}")
                if type(pid) is tuple and len(pid) > 0 and _ascii(pid[0]) != "storage":
                    raise UnpicklingError("Only persistent_load of storage is allowed, but got "
                                          f"{type(pid[0])}")
                if self.persistent_load is None:
                    raise UnpicklingError("unsupported persistent id encountered")
                self.stack.append(self.persistent_load(pid))
            elif op == pickle.BINGET[0] or op == pickle.LONG_BINGET[0]:
                idx = self._exact(1)[0] if op == pickle.BINGET[0] else \
                    struct.unpack("<I", self._exact(4))[0]
                stack.append(self.memo[idx])
            elif op == pickle.BINPUT[0] or op == pickle.LONG_BINPUT[0]:
                idx = self._exact(1)[0] if op == pickle.BINPUT[0] else \
                    struct.unpack("<I", self._exact(4))[0]
                self.memo[idx] = stack[-1]
            elif op == pickle.LONG1[0]:
                stack.append(pickle.decode_long(self._exact(self._exact(1)[0])))
            elif op == pickle.PROTO[0]:
                proto = self._exact(1)[0]
                if proto != 2:
                    warnings.warn(
                        f"Detected pickle protocol {proto} in the checkpoint, which was not the "
                        "default pickle protocol used by `torch.load` (2). The weights_only "
                        "Unpickler might not support all instructions implemented by this "
                        "protocol, please file an issue for adding support if you encounter "
                        "this.", stacklevel=4)
            elif op == pickle.STOP[0]:
                return self.stack.pop()
            else:
                raise UnpicklingError(f"Unsupported operand {op}")


def _ascii(value: Any) -> Any:
    return value.decode("ascii") if isinstance(value, bytes) else value
