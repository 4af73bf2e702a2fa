"""``npgrad.save`` / ``npgrad.load``: tensors and state dicts as safetensors files.

Note [Why safetensors, never pickle]
torch.save writes a pickle (a zip of pickles since torch 1.6); loading a
pickle can run any code the file's author chose.  npgrad writes and reads only
the safetensors format: an 8-byte little-endian header length, a JSON header
(dtype, shape and byte range of each tensor, plus string metadata), then the
raw bytes.  A pickle file is refused with an explanation, whatever the caller
asks; it is never unpickled.

What can be saved:
* a dict (any mapping) of str -> Tensor, e.g. ``model.state_dict()``: stored
  as is, so ``safetensors.torch.load_file`` reads it in PyTorch;
* nested dicts of tensors: stored flat with '.'-joined keys (no key may then
  contain '.'), and rebuilt as nested dicts by ``npgrad.load``;
* a single Tensor: stored under the key ``"tensor"`` (``TENSOR_KEY``);
* anything else built of dicts (str, int, float, bool or None keys), lists,
  tuples, tensors, numbers, strings and None -- an optimizer's
  ``state_dict()``, a checkpoint ``{"model": ..., "optimizer": ..., "epoch":
  3}``: see Note [Structured files].
The metadata holds ``{"format": "pt"}``, as the files that
``safetensors.torch.save_file`` writes, and ``"npgrad.kind"``
(``"tensor"``, ``"dict"``, ``"nested"`` or ``"structured"``) so ``load``
returns what was saved.  A file without ``npgrad.kind`` (one written by
PyTorch) loads as a flat dict.

Note [Structured files]
A value that is not a tree of str-keyed dicts of tensors is stored as its
tensors, under the keys ``"0"``, ``"1"``, ..., plus a JSON description of the
structure in the metadata entry ``"npgrad.structure"``, where each tensor is
``{"tensor": key}``, a dict is ``{"dict": [[key, value], ...]}`` (its keys keep
their types and order), a list ``{"list": [...]}`` and a tuple ``{"tuple":
[...]}``; numbers, strings, booleans and None are themselves.  A tensor that
appears twice is stored once and loads as one tensor, as ``torch.load`` gives
back shared tensors.  Nothing but these types is accepted: the file stays data,
never code.

Saving to a path is atomic: the bytes go to a temporary file in the same
directory, which then replaces the target (``os.replace``), so a failed save
leaves any old file as it was.  A truncated or corrupt file raises a
``RuntimeError`` naming the file, and nothing is returned.
"""
from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Mapping
from typing import Any

import numpy as np

from ._tensor import Tensor

__all__ = ["save", "load", "TENSOR_KEY"]

TENSOR_KEY = "tensor"
_KIND = "npgrad.kind"
_STRUCTURE = "npgrad.structure"
_LEAF_TYPES = (bool, int, float, str, type(None))
_INSTALL_HINT = "pip install 'npgrad[io]'"
# safetensors dtype codes that npgrad has a dtype for
_LOADABLE = {"BOOL", "U8", "I8", "I16", "I32", "I64", "F16", "F32", "F64"}


def _safetensors() -> Any:
    """The ``safetensors.numpy`` module; a clear ImportError when the extra is missing."""
    try:
        import safetensors.numpy as st
    except ImportError as exc:
        raise ImportError("npgrad.save and npgrad.load need the safetensors package, an "
                          f"optional extra of npgrad: {_INSTALL_HINT}") from exc
    return st


# -- saving -------------------------------------------------------------------------------

def _array(value: Any, key: str) -> np.ndarray:
    if not isinstance(value, Tensor):
        raise TypeError(f"npgrad.save stores tensors only (safetensors format), but the value "
                        f"at key {key!r} is {type(value).__name__}")
    arr = value._data
    # (np.ascontiguousarray would turn a 0-dim tensor into shape (1,))
    return arr if arr.flags.c_contiguous else arr.copy(order="C")


def _flatten(obj: Mapping, prefix: str, out: dict[str, np.ndarray]) -> None:
    if not obj:
        raise ValueError(f"npgrad.save cannot store the empty dict at key {prefix[:-1]!r}: a "
                         "flattened file would lose it")
    for key, value in obj.items():
        if not isinstance(key, str):
            raise TypeError(f"npgrad.save needs str keys, got {type(key).__name__} {key!r}")
        if "." in key:
            raise ValueError(f"npgrad.save cannot store nested dicts whose keys contain '.' "
                             f"(key {prefix + key!r}): the nesting is saved as '.'-joined keys")
        if isinstance(value, Mapping):
            _flatten(value, f"{prefix}{key}.", out)
        else:
            out[prefix + key] = _array(value, prefix + key)


def _is_tensor_tree(obj: Any) -> bool:
    """A non-empty dict of str keys whose leaves are all tensors (the PyTorch-readable kinds)."""
    if not isinstance(obj, Mapping) or not obj:
        return False
    for key, value in obj.items():
        if not isinstance(key, str) or "." in key:
            return False
        if not (isinstance(value, Tensor) or _is_tensor_tree(value)):
            return False
    return True


def _to_tensors(obj: Any) -> tuple[dict[str, np.ndarray], str, dict[str, str]]:
    """The arrays to write, the kind of object they came from and extra metadata."""
    if isinstance(obj, Tensor):
        return {TENSOR_KEY: _array(obj, TENSOR_KEY)}, "tensor", {}
    if _is_tensor_tree(obj):
        if any(isinstance(v, Mapping) for v in obj.values()):
            arrays: dict[str, np.ndarray] = {}
            _flatten(obj, "", arrays)
            return arrays, "nested", {}
        return {key: _array(value, key) for key, value in obj.items()}, "dict", {}
    arrays = {}
    structure = _describe(obj, arrays, {}, "")
    return arrays, "structured", {_STRUCTURE: json.dumps(structure)}


def _describe(obj: Any, arrays: dict, seen: dict, where: str) -> Any:
    """The JSON form of ``obj`` (Note [Structured files]), its tensors added to ``arrays``."""
    if isinstance(obj, Tensor):
        key = seen.get(id(obj))
        if key is None:
            key = seen[id(obj)] = str(len(seen))
            arrays[key] = _array(obj, where or "<root>")
        return {"tensor": key}
    if isinstance(obj, _LEAF_TYPES):
        return obj
    if isinstance(obj, Mapping):
        items = []
        for key, value in obj.items():
            if not isinstance(key, _LEAF_TYPES):
                raise TypeError(f"npgrad.save needs dict keys that are str, int, float, bool or "
                                f"None, got {type(key).__name__} at {where or '<root>'}")
            items.append([key, _describe(value, arrays, seen, f"{where}[{key!r}]")])
        return {"dict": items}
    if isinstance(obj, (list, tuple)):
        kind = "list" if isinstance(obj, list) else "tuple"
        return {kind: [_describe(v, arrays, seen, f"{where}[{i}]") for i, v in enumerate(obj)]}
    raise TypeError(f"npgrad.save stores tensors, numbers, strings, None and dicts, lists and "
                    f"tuples of them (safetensors format, never pickle), but the value at "
                    f"{where or '<root>'} is {type(obj).__name__}")


def _rebuild(node: Any, tensors: dict[str, Tensor]) -> Any:
    if not isinstance(node, dict):
        return node
    if "tensor" in node:
        return tensors[node["tensor"]]
    if "dict" in node:
        return {key: _rebuild(value, tensors) for key, value in node["dict"]}
    if "list" in node:
        return [_rebuild(v, tensors) for v in node["list"]]
    return tuple(_rebuild(v, tensors) for v in node["tuple"])


def save(obj: Any, f: Any, pickle_module: Any = None, pickle_protocol: Any = None,
         _use_new_zipfile_serialization: bool = True) -> None:
    """Write a tensor, a state dict or a checkpoint of them to ``f`` in safetensors format.

    ``f`` is a path (written atomically) or a binary file object.  The pickle
    arguments of ``torch.save`` are accepted and ignored.

    >>> import os, tempfile, npgrad as torch
    >>> path = os.path.join(tempfile.mkdtemp(), "w.safetensors")
    >>> torch.save({"w": torch.ones(2)}, path)
    >>> torch.load(path)
    {'w': tensor([1., 1.])}
    """
    st = _safetensors()
    arrays, kind, extra = _to_tensors(obj)
    data = st.save(arrays, metadata={"format": "pt", _KIND: kind, **extra})
    if hasattr(f, "write"):
        f.write(data)
        return
    _atomic_write(os.fspath(f), data)


def _atomic_write(path: str | bytes, data: bytes) -> None:
    path = os.fsdecode(path)
    directory = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=f".{os.path.basename(path)}.", suffix=".tmp",
                               dir=directory)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        try:
            mode = os.stat(path).st_mode & 0o777
        except FileNotFoundError:
            mode = 0o644  # mkstemp's 0o600 would hide the file from other users
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise


# -- loading ------------------------------------------------------------------------------

def _corrupt(name: str, why: str) -> RuntimeError:
    return RuntimeError(f"npgrad.load: {name} is not a valid safetensors file ({why}); it may "
                        "be truncated or corrupt. Nothing was loaded.")


def _is_pickle(data: bytes) -> bool:
    # torch.save: a zip archive (PK..) since torch 1.6, a bare pickle (protocol 2+: 0x80) before
    return data[:4] == b"PK\x03\x04" or data[:1] == b"\x80"


def _read_header(data: bytes, name: str) -> dict[str, Any]:
    looks_safetensors = len(data) >= 9 and data[8:9] == b"{"
    if not looks_safetensors and _is_pickle(data):
        raise RuntimeError(
            f"npgrad.load: {name} is a pickle file (the format of torch.save), and npgrad never "
            "unpickles: loading a pickle can run arbitrary code. Re-save the tensors from "
            "PyTorch with safetensors.torch.save_file(state_dict, path) and load that file.")
    if len(data) < 8:
        raise _corrupt(name, f"{len(data)} bytes, shorter than the 8-byte header length")
    size = int.from_bytes(data[:8], "little")
    if 8 + size > len(data):
        raise _corrupt(name, f"header of {size} bytes but the file has {len(data)} bytes")
    try:
        header = json.loads(data[8:8 + size])
    except (UnicodeDecodeError, ValueError) as exc:
        raise _corrupt(name, f"unreadable header: {exc}") from None
    if not isinstance(header, dict):
        raise _corrupt(name, "the header is not a JSON object")
    return header


def _unflatten(flat: dict[str, Tensor]) -> dict[str, Any]:
    root: dict[str, Any] = {}
    for key, value in flat.items():
        *parents, leaf = key.split(".")
        node = root
        for part in parents:
            node = node.setdefault(part, {})
        node[leaf] = value
    return root


def load(f: Any, map_location: Any = None, pickle_module: Any = None, *,
         weights_only: Any = None, mmap: Any = None, **pickle_load_args: Any) -> Any:
    """Read what ``save`` wrote (or any safetensors file) from a path or binary file object.

    Returns a Tensor, a dict of tensors, or nested dicts, as saved; a file
    written by ``safetensors.torch.save_file`` gives a flat dict.  torch.load's
    other arguments are accepted and ignored (everything is on the CPU).
    """
    st = _safetensors()
    if hasattr(f, "read"):
        name = repr(getattr(f, "name", "<file object>"))
        data = f.read()
    else:
        name = repr(os.fsdecode(os.fspath(f)))
        with open(f, "rb") as fh:
            data = fh.read()
    if isinstance(data, str):
        raise TypeError("npgrad.load needs a binary file object (open the file with 'rb')")
    header = _read_header(bytes(data), name)
    metadata = header.get("__metadata__") or {}
    for key, info in header.items():
        if key == "__metadata__":
            continue
        dtype = info.get("dtype") if isinstance(info, dict) else None
        if dtype is not None and dtype not in _LOADABLE:
            raise RuntimeError(f"npgrad.load: tensor {key!r} in {name} has dtype {dtype}, which "
                               "npgrad (NumPy) does not support; convert it (e.g. to float32) "
                               "before saving")
    try:
        arrays = st.load(bytes(data))
    except Exception as exc:  # safetensors' own checks: offsets, sizes, coverage
        raise _corrupt(name, str(exc)) from None
    from ._creation import from_numpy

    tensors = {key: from_numpy(arr) for key, arr in arrays.items()}
    kind = metadata.get(_KIND, "dict") if isinstance(metadata, dict) else "dict"
    if kind == "tensor" and set(tensors) == {TENSOR_KEY}:
        return tensors[TENSOR_KEY]
    if kind == "nested":
        return _unflatten(tensors)
    if kind == "structured":
        try:
            return _rebuild(json.loads(metadata[_STRUCTURE]), tensors)
        except (KeyError, TypeError, ValueError) as exc:
            raise _corrupt(name, f"unreadable structure: {exc!r}") from None
    return tensors

