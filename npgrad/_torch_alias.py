"""``import torch`` answered by npgrad: the import hook of ``install_as_torch`` / ``npgrad run``.

Note [torch as an alias of npgrad]
Unmodified scripts (and libraries they import) say ``import torch``,
``import torch.nn.functional as F``, ``from torch.utils.data import DataLoader``.
``install_as_torch`` puts one finder at the front of ``sys.meta_path`` that
answers every name ``torch`` or ``torch.<sub>`` with the *same module object*
as ``npgrad`` or ``npgrad.<sub>``: one module, two names, so
``torch.nn is npgrad.nn`` and state (the default dtype, the grad mode, print
options, registered safe globals) cannot split in two.  A finder, rather than
filling ``sys.modules`` up front, keeps submodules loading on first use (as
``import npgrad`` does) and makes a name npgrad lacks fail as it would in
torch: ``ModuleNotFoundError: No module named 'torch.foo'``.  npgrad's modules
are laid out as torch's (``npgrad/cuda/amp.py`` for ``torch.cuda.amp``): Python
looks for ``torch.cuda.amp`` only if ``torch.cuda`` is a package, so the
layout, not just the finder, must follow torch's.

A real torch that is already imported is left alone (``install_as_torch``
refuses rather than mix the two); modules that are imported already under
``npgrad.*`` are entered under their ``torch.*`` names at once, so
``sys.modules`` answers the same either way.

Reprs: in this mode dtypes print as ``torch.float32`` (Note [How dtypes print]
in npgrad._dtype).
"""
from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import sys
from types import ModuleType
from typing import Any

from . import _dtype

# torch module names whose npgrad module has another name (none at present: npgrad's
# modules are laid out as torch's)
_RENAMED: dict[str, str] = {}


def npgrad_name(torch_name: str) -> str:
    """``'torch.nn.functional'`` -> ``'npgrad.nn.functional'``."""
    renamed = _RENAMED.get(torch_name)
    if renamed is not None:
        return renamed
    return "npgrad" + torch_name[len("torch"):]


class _AliasLoader(importlib.abc.Loader):
    """Hands back the npgrad module itself; there is nothing to execute."""

    def __init__(self, module: ModuleType) -> None:
        self._module = module

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        return self._module

    def exec_module(self, module: ModuleType) -> None:
        return None


class TorchAliasFinder(importlib.abc.MetaPathFinder):
    """Finds ``torch`` and ``torch.*`` as the npgrad modules of the same names."""

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> Any:
        if fullname != "torch" and not fullname.startswith("torch."):
            return None
        try:
            module = importlib.import_module(npgrad_name(fullname))
        except ModuleNotFoundError as e:
            if e.name is not None and (e.name == npgrad_name(fullname)
                                       or npgrad_name(fullname).startswith(e.name + ".")):
                return None  # torch would not have it either: "No module named 'torch.x'"
            raise
        spec = importlib.machinery.ModuleSpec(fullname, _AliasLoader(module),
                                              is_package=hasattr(module, "__path__"))
        return spec


_FINDER = TorchAliasFinder()


def is_installed() -> bool:
    return _FINDER in sys.meta_path


def install_as_torch() -> None:
    """Make ``import torch`` (and every ``torch.*`` submodule) import npgrad.

    Idempotent.  Raises RuntimeError when the real torch is already imported in
    this process (two libraries under one name would mix their tensors).
    See Note [torch as an alias of npgrad].

    Example (in a fresh process, before torch is imported)::

        import npgrad
        npgrad.install_as_torch()
        import torch.nn.functional as F     # npgrad.nn.functional
        print(repr(torch.float32))          # torch.float32
    """
    existing = sys.modules.get("torch")
    if existing is not None and not _is_alias(existing):
        raise RuntimeError("install_as_torch(): the real torch is already imported in this "
                           "process; call it before anything imports torch")
    if _FINDER not in sys.meta_path:
        sys.meta_path.insert(0, _FINDER)
    for name, module in list(sys.modules.items()):
        if module is not None and (name == "npgrad" or name.startswith("npgrad.")):
            sys.modules.setdefault("torch" + name[len("npgrad"):], module)
    for torch_name, ours in _RENAMED.items():
        if ours in sys.modules:
            sys.modules.setdefault(torch_name, sys.modules[ours])
    _dtype.set_repr_prefix("torch.")


def uninstall_as_torch() -> None:
    """Undo ``install_as_torch``: ``torch`` names leave ``sys.modules``; npgrad's reprs return."""
    while _FINDER in sys.meta_path:
        sys.meta_path.remove(_FINDER)
    for name, module in list(sys.modules.items()):
        if (name == "torch" or name.startswith("torch.")) and _is_alias(module):
            del sys.modules[name]
    _dtype.set_repr_prefix("npgrad.")


def _is_alias(module: Any) -> bool:
    name = getattr(module, "__name__", "")
    return name == "npgrad" or name.startswith("npgrad.")
