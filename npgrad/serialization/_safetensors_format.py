"""The safetensors format: a JSON header of dtypes, shapes and byte ranges, then raw bytes.

Note [safetensors files]
A safetensors file is an 8-byte little-endian header length, a JSON header
``{key: {"dtype": "F32", "shape": [...], "data_offsets": [begin, end]}, ...,
"__metadata__": {str: str}}`` (padded with spaces to a multiple of 8), then
the tensors' bytes, C order, little-endian, with no holes and no overlaps.
npgrad reads and writes it itself -- the format is small and fixed, and this
keeps key order, every dtype ``npgrad._dtype`` has (bfloat16 as ``BF16``) and
the checks on a corrupt file in one place, with no dependency; the
``safetensors`` package (the ``io`` extra) is needed only to talk to
``safetensors.torch`` in tests.

What npgrad stores: every tensor under its dotted path -- ``model.state_dict()``
keys as they are (``0.weight``), nested dicts joined with '.', list and tuple
items by index (``optimizer.state.0.exp_avg``) -- so ``safetensors.torch.load_file``
sees the names torch would use.  A tensor that appears twice is stored once.
Two different tensors that would get one key (``{"a": {"b": x}, "a.b": y}``)
are refused: a flat file cannot hold both.  The metadata holds
``{"format": "pt"}``, as ``safetensors.torch.save_file`` writes, and
``npgrad.structure``: JSON that rebuilds what was saved, in its key order
(``{"tensor": key}``, ``{"dict": [[k, v], ...]}``, ``{"odict": ..., "metadata":
...}`` for an OrderedDict and its ``_metadata``, ``{"list": [...]}``,
``{"tuple": [...]}``; numbers, strings, booleans and None as themselves).
A file without it (one written by ``safetensors.torch``) loads as a flat dict
in the order of its data, which is the order ``torch.load`` gives it.
"""
from __future__ import annotations

import json
from collections import OrderedDict
from collections.abc import Mapping
from typing import Any

import numpy as np

from .. import _dtype
from .._tensor import Tensor
from .._tensor_base import _make
from ._torch_names import known_dtypes

__all__ = ["TENSOR_KEY", "dumps", "loads", "looks_like_safetensors"]

TENSOR_KEY = "tensor"
_STRUCTURE = "npgrad.structure"
_LEAF_TYPES = (bool, int, float, str, type(None))
_CODES = {"float32": "F32", "float64": "F64", "float16": "F16", "bfloat16": "BF16",
          "int64": "I64", "int32": "I32", "int16": "I16", "int8": "I8", "uint8": "U8",
          "bool": "BOOL", "uint16": "U16", "uint32": "U32", "uint64": "U64",
          "complex64": "C64", "float8_e4m3fn": "F8_E4M3", "float8_e5m2": "F8_E5M2"}


def _code(d: _dtype.dtype) -> str:
    return _CODES[d.name]


def _dtype_of_code(code: str) -> _dtype.dtype | None:
    for d in known_dtypes():
        if _CODES.get(d.name) == code:
            return d
    return None


# -- saving -------------------------------------------------------------------------------

class _Collector:
    """Walks the saved value: its JSON structure, and each tensor under its dotted key."""

    def __init__(self) -> None:
        self.tensors: dict[str, Tensor] = {}
        self.key_of: dict[int, str] = {}

    def add(self, t: Tensor, key: str) -> str:
        known = self.key_of.get(id(t))
        if known is not None:
            return known
        if key in self.tensors:
            raise ValueError(f"npgrad.save cannot store two different tensors under the "
                             f"safetensors key {key!r} (their paths join to the same "
                             "dotted name); rename one, or save in torch's format")
        self.tensors[key] = t
        self.key_of[id(t)] = key
        return key

    def describe(self, obj: Any, path: str) -> Any:
        if isinstance(obj, Tensor):
            return {"tensor": self.add(obj, path or TENSOR_KEY)}
        if isinstance(obj, _LEAF_TYPES):
            return obj
        if isinstance(obj, Mapping):
            items = []
            for key, value in obj.items():
                if not isinstance(key, _LEAF_TYPES):
                    raise TypeError(f"npgrad.save needs dict keys that are str, int, float, "
                                    f"bool or None, got {type(key).__name__} at "
                                    f"{path or '<root>'}")
                items.append([key, self.describe(value, f"{path}.{key}" if path else str(key))])
            if isinstance(obj, OrderedDict):
                node: dict[str, Any] = {"odict": items}
                metadata = getattr(obj, "_metadata", None)
                if metadata is not None:
                    node["metadata"] = self.describe(metadata, f"{path}._metadata")
                return node
            return {"dict": items}
        if isinstance(obj, (list, tuple)):
            kind = "list" if isinstance(obj, list) else "tuple"
            return {kind: [self.describe(v, f"{path}.{i}" if path else str(i))
                           for i, v in enumerate(obj)]}
        raise TypeError(f"npgrad.save stores tensors, numbers, strings, None and dicts, lists "
                        f"and tuples of them in the safetensors format, but the value at "
                        f"{path or '<root>'} is {type(obj).__name__}")


def _contiguous_bytes(t: Tensor) -> np.ndarray:
    arr = t._data
    if not arr.flags.c_contiguous:
        arr = arr.copy(order="C")
    if arr.dtype.byteorder == ">":
        arr = arr.astype(arr.dtype.newbyteorder("<"))
    return arr.reshape(-1).view(np.uint8)


def dumps(obj: Any) -> list:
    """The pieces of the safetensors file of ``obj`` (header, then each tensor's bytes)."""
    collector = _Collector()
    structure = collector.describe(obj, "")
    header: dict[str, Any] = {}
    order = sorted(collector.tensors.items(), key=lambda kv: -kv[1]._data.itemsize)
    pieces: list = []
    offset = 0
    for key, t in order:
        data = _contiguous_bytes(t)
        header[key] = {"dtype": _code(t.dtype), "shape": list(t._data.shape),
                       "data_offsets": [offset, offset + data.nbytes]}
        offset += data.nbytes
        pieces.append(data)
    header = {key: header[key] for key in collector.tensors}  # the header lists them in order
    header["__metadata__"] = {"format": "pt", _STRUCTURE: json.dumps(structure)}
    text = json.dumps(header, separators=(",", ":")).encode("utf-8")
    text += b" " * (-len(text) % 8)
    return [len(text).to_bytes(8, "little"), text] + pieces


# -- loading ------------------------------------------------------------------------------

def looks_like_safetensors(head: bytes) -> bool:
    return len(head) >= 9 and head[8:9] == b"{"


def _corrupt(name: str, why: str) -> RuntimeError:
    return RuntimeError(f"npgrad.load: {name} is not a valid safetensors file ({why}); it may "
                        "be truncated or corrupt. Nothing was loaded.")


def _header(data: memoryview, name: str) -> tuple[dict[str, Any], int]:
    if len(data) < 8:
        raise _corrupt(name, f"{len(data)} bytes, shorter than the 8-byte header length")
    size = int.from_bytes(data[:8], "little")
    if 8 + size > len(data):
        raise _corrupt(name, f"header of {size} bytes but the file has {len(data)} bytes")
    try:
        header = json.loads(bytes(data[8:8 + size]))
    except (UnicodeDecodeError, ValueError) as exc:
        raise _corrupt(name, f"unreadable header: {exc}") from None
    if not isinstance(header, dict):
        raise _corrupt(name, "the header is not a JSON object")
    return header, 8 + size


def _tensors(header: dict[str, Any], buffer: np.ndarray, name: str) -> dict[str, Tensor]:
    spans = []
    out: dict[str, Tensor] = {}
    for key, info in header.items():
        if key == "__metadata__":
            continue
        try:
            code, shape, (begin, end) = info["dtype"], info["shape"], info["data_offsets"]
            shape = tuple(int(n) for n in shape)
            begin, end = int(begin), int(end)
        except (KeyError, TypeError, ValueError):
            raise _corrupt(name, f"bad entry for tensor {key!r}: {info!r}") from None
        d = _dtype_of_code(code)
        if d is None:
            raise RuntimeError(f"npgrad.load: tensor {key!r} in {name} has dtype {code}, which "
                               "npgrad does not support; convert it (e.g. to float32) before "
                               "saving")
        count = int(np.prod(shape, dtype=np.int64))
        if any(n < 0 for n in shape) or end - begin != count * d.itemsize or begin < 0 \
                or end > buffer.nbytes:
            raise _corrupt(name, f"invalid offsets [{begin}, {end}] for tensor {key!r} of "
                                 f"shape {list(shape)} and dtype {code}")
        spans.append((begin, end))
        arr = buffer[begin:end].view(d.np_dtype).reshape(shape)
        out[key] = _make(Tensor, arr, None, False, None)
    position = 0
    for begin, end in sorted(spans):
        if begin != position:
            raise _corrupt(name, "invalid offsets: the tensors' byte ranges overlap or leave "
                                 "holes")
        position = end
    if position != buffer.nbytes:
        raise _corrupt(name, f"invalid offsets: the tensors cover {position} of the "
                             f"{buffer.nbytes} data bytes")
    return out


def _rebuild(node: Any, tensors: dict[str, Tensor]) -> Any:
    if not isinstance(node, dict):
        return node
    if "tensor" in node:
        return tensors[node["tensor"]]
    if "dict" in node:
        return {key: _rebuild(value, tensors) for key, value in node["dict"]}
    if "odict" in node:
        out = OrderedDict((key, _rebuild(value, tensors)) for key, value in node["odict"])
        if "metadata" in node:
            out._metadata = _rebuild(node["metadata"], tensors)  # type: ignore[attr-defined]
        return out
    if "list" in node:
        return [_rebuild(v, tensors) for v in node["list"]]
    return tuple(_rebuild(v, tensors) for v in node["tuple"])


def loads(data: Any, name: str) -> Any:
    """What ``dumps`` wrote, or a flat dict (sorted keys) for a foreign safetensors file.

    ``data`` is a writable flat uint8 array (or memory-mapped one) holding the file.
    """
    view = memoryview(data).cast("B")
    header, start = _header(view, name)
    tensors = _tensors(header, data[start:], name)
    metadata = header.get("__metadata__") or {}
    structure = metadata.get(_STRUCTURE) if isinstance(metadata, dict) else None
    if structure is None:
        kind = metadata.get("npgrad.kind") if isinstance(metadata, dict) else None
        if kind == "tensor" and set(tensors) == {TENSOR_KEY}:  # npgrad 0.1's single tensor
            return tensors[TENSOR_KEY]
        if kind == "nested":  # npgrad 0.1's nested dicts, whose keys had no '.'
            root: dict[str, Any] = {}
            for key in sorted(tensors):
                *parents, leaf = key.split(".")
                node = root
                for part in parents:
                    node = node.setdefault(part, {})
                node[leaf] = tensors[key]
            return root
        begins = {key: info["data_offsets"][0] for key, info in header.items()
                  if key != "__metadata__"}
        return {key: tensors[key] for key in sorted(tensors, key=lambda k: (begins[k], k))}
    try:
        return _rebuild(json.loads(structure), tensors)
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise _corrupt(name, f"unreadable structure: {exc!r}") from None
