"""``npgrad.save`` / ``npgrad.load``: torch's file formats (zip and legacy) and safetensors.

Note [Which format]
``save`` writes what ``torch.save`` writes by default -- the zip format of
Note [The zip layout torch writes], its pickle naming torch's globals (Note
[Pickling with torch's names]) -- so real ``torch.load`` reads npgrad's files
with its default ``weights_only=True``; ``_use_new_zipfile_serialization=False``
writes torch's legacy single-pickle format.  A path ending in ``.safetensors``,
or ``format="safetensors"`` (npgrad's one addition to torch's signature), writes
a safetensors file instead (Note [safetensors files]).  ``load`` goes by the
bytes, not the name: a zip is torch's format, a JSON header after 8 bytes is
safetensors, a pickle is the legacy format; a ``.safetensors`` path is read as
safetensors, as ``torch.load`` does.

Note [Loading safely]
``weights_only=True`` (the default when no ``pickle_module`` is given, as in
torch >= 2.6) unpickles with npgrad's allowlist interpreter (Note
[Weights-only loading]): nothing named in the file runs unless it is a tensor
or container rebuild or the user allowed it with ``add_safe_globals``.
``weights_only=False`` is Python's unpickler -- the user's explicit choice, as
in torch -- with torch's names mapped to npgrad's (``torch.nn.modules.linear.Linear``
to ``npgrad.nn.modules.linear.Linear``) so whole pickled Modules load.

Note [Atomic saves]
Saving to a path writes a temporary file in the same directory and renames it
over the target (``os.replace``) only once it is complete and synced, so a
failed or interrupted save leaves any old file as it was and no temporary file
behind; the whole object is pickled before the file is opened.  Loading
checks the container (zip directory, CRC of each record read, safetensors
offsets, storage sizes) and raises ``RuntimeError`` naming the file before
anything is returned.
"""
from __future__ import annotations

import io
import os
import pickle
import re
import struct
import sys
import tempfile
import warnings
import zipfile
import zlib
from collections.abc import Callable
from typing import Any

import numpy as np

from .._device import device as _device
from . import _rebuild, _safetensors_format, _torch_pickler, _weights_only, _zip_format
from ._rebuild import Storage, StorageType
from ._safetensors_format import TENSOR_KEY
from ._weights_only import (
    add_safe_globals,
    clear_safe_globals,
    get_safe_globals,
    safe_globals,
)

__all__ = [
    "DEFAULT_PROTOCOL",
    "TENSOR_KEY",
    "add_safe_globals",
    "clear_safe_globals",
    "get_safe_globals",
    "load",
    "safe_globals",
    "save",
]

DEFAULT_PROTOCOL = 2
MAGIC_NUMBER = 0x1950a86a20f9469cfc6c
PROTOCOL_VERSION = 1001
_FORMATS = ("torch", "safetensors")


# -- saving -------------------------------------------------------------------------------

def _zip_records(obj: Any, protocol: int, disable_byteorder: bool) -> list[tuple[str, Any]]:
    data, storages = _torch_pickler.dumps(obj, protocol)
    records: list[tuple[str, Any]] = [("data.pkl", data), (".format_version", b"1"),
                                      (".storage_alignment", str(_zip_format.ALIGNMENT).encode())]
    if not disable_byteorder:
        records.append(("byteorder", sys.byteorder.encode("ascii")))
    records += [(f"data/{ref.key}", ref.data) for ref in storages]
    return records


def _legacy_pieces(obj: Any, protocol: int) -> list:
    data, storages = _torch_pickler.dumps(obj, protocol, legacy=True)
    head = io.BytesIO()
    for value in (MAGIC_NUMBER, PROTOCOL_VERSION,
                  {"protocol_version": PROTOCOL_VERSION, "little_endian": sys.byteorder == "little",
                   "type_sizes": {"short": 2, "int": 4, "long": 4}}):
        pickle.dump(value, head, protocol=protocol)
    pieces: list = [head.getvalue(), data, pickle.dumps([ref.key for ref in storages],
                                                         protocol=protocol)]
    for ref in storages:
        item = 1 if ref.persistent_id()[1] is _torch_pickler.names.UNTYPED_STORAGE \
            else ref.dtype.itemsize
        pieces += [struct.pack("<q", ref.data.nbytes // item), ref.data]
    return pieces


def _write_pieces(fh: Any, pieces: list) -> None:
    for piece in pieces:
        fh.write(piece if isinstance(piece, bytes) else memoryview(piece).cast("B"))


def save(obj: Any, f: Any, pickle_module: Any = pickle, pickle_protocol: int = DEFAULT_PROTOCOL,
         _use_new_zipfile_serialization: bool = True, _disable_byteorder_record: bool = False,
         *, format: str | None = None) -> None:
    """Save ``obj`` to a path or binary file object in torch's format (or safetensors).

    See Note [Which format].  Paths are written atomically (Note [Atomic saves]).
    ``pickle_module`` is accepted and not used: npgrad pickles with Python's own pickler,
    writing torch's names (Note [Pickling with torch's names]).

    >>> import io, npgrad as torch
    >>> buffer = io.BytesIO()
    >>> torch.save({"w": torch.ones(2)}, buffer)
    >>> _ = buffer.seek(0)
    >>> torch.load(buffer)
    {'w': tensor([1., 1.])}
    """
    if not isinstance(f, (str, os.PathLike)) and not hasattr(f, "write"):
        raise AttributeError("expected 'f' to be string, path, or a file-like object with a "
                             "'write' attribute")
    path = None if hasattr(f, "write") else os.fsdecode(os.fspath(f))
    if format is None:
        format = "safetensors" if path is not None and path.endswith(".safetensors") else "torch"
    if format not in _FORMATS:
        raise ValueError(f"npgrad.save: format must be 'torch' or 'safetensors', got {format!r}")
    if format == "safetensors":
        pieces = _safetensors_format.dumps(obj)
        writer: Callable[[Any], None] = lambda fh: _write_pieces(fh, pieces)
    elif _use_new_zipfile_serialization:
        records = _zip_records(obj, pickle_protocol, _disable_byteorder_record)
        folder = _zip_format.archive_name(path)

        def writer(fh: Any) -> None:
            _zip_format.write_archive(fh, folder, records)
    else:
        pieces = _legacy_pieces(obj, pickle_protocol)
        writer = lambda fh: _write_pieces(fh, pieces)
    if path is None:
        buffer = io.BytesIO()
        writer(buffer)
        f.write(buffer.getvalue())
        return
    _atomic_write(path, writer)


def _atomic_write(path: str, writer: Callable[[Any], None]) -> None:
    parent = os.path.dirname(path)
    if parent and not os.path.isdir(parent):
        raise RuntimeError(f"Parent directory {parent} does not exist.")
    directory = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=f".{os.path.basename(path)}.", suffix=".tmp",
                               dir=directory)
    try:
        with os.fdopen(fd, "w+b") as fh:
            writer(fh)
            fh.flush()
            os.fsync(fh.fileno())
        try:
            mode = os.stat(path).st_mode & 0o777
        except FileNotFoundError:
            mode = 0o666 & ~_umask()  # what open() would have given a new file
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


# -- loading ------------------------------------------------------------------------------

def _corrupt(name: str, why: str) -> RuntimeError:
    return RuntimeError(f"npgrad.load: {name} is not a valid PyTorch file ({why}); it may be "
                        "truncated or corrupt. Nothing was loaded.")


def _cuda_error() -> RuntimeError:
    return RuntimeError(
        "Attempting to deserialize object on a CUDA device but torch.cuda.is_available() is "
        "False. If you are running on a CPU-only machine, please use torch.load with "
        "map_location=torch.device('cpu') to map your storages to the CPU.")


def _default_restore(storage: Storage, location: str) -> Storage:
    if location == "cpu":
        return storage
    if re.match(r"cuda(:|[0-9]+|$)", location):  # torch's test for a CUDA tag
        raise _cuda_error()
    raise RuntimeError("don't know how to restore data location of torch.storage.UntypedStorage"
                       f" (tagged with {location})")


def _restore_location(map_location: Any) -> Callable[[Storage, str], Storage]:
    if map_location is None:
        return _default_restore
    if isinstance(map_location, dict):
        return lambda storage, location: _default_restore(
            storage, str(map_location.get(location, location)))
    if isinstance(map_location, (str, bytes)):
        target = map_location.decode() if isinstance(map_location, bytes) else map_location
        return lambda storage, location: _default_restore(storage, target)
    if isinstance(map_location, _device):
        return lambda storage, location: _default_restore(storage, str(map_location))
    if type(map_location).__name__ == "device" and hasattr(map_location, "type"):  # torch's own
        return lambda storage, location: _default_restore(storage, str(map_location))

    def call(storage: Storage, location: str) -> Storage:
        result = map_location(storage, location)
        if result is None:
            return _default_restore(storage, location)
        if not isinstance(result, Storage):
            raise TypeError(f"npgrad.load: map_location returned {type(result).__name__}; on "
                            "npgrad it can only return the storage it was given, or None")
        return result

    return call


def _storage_dtype(storage_type: Any) -> Any:
    if not isinstance(storage_type, StorageType):
        raise pickle.UnpicklingError(f"expected a storage type, got {storage_type!r}")
    if storage_type.name == "UntypedStorage":
        from .. import _dtype

        return _dtype.uint8, 1
    if storage_type.dtype is None:
        raise RuntimeError(f"npgrad cannot load a torch.{storage_type.name}: npgrad has no "
                           "such dtype")
    return storage_type.dtype, storage_type.dtype.itemsize


class _FullUnpickler(pickle.Unpickler):
    """Python's unpickler with torch's names mapped to npgrad's (weights_only=False)."""

    def find_class(self, module: str, name: str) -> Any:
        table = _rebuild.torch_globals()
        full = f"{module}.{name}"
        if full in table:
            return table[full]
        if module == "torch.tensor":
            module = "torch._tensor"
        if module == "torch" or module.startswith("torch."):
            import importlib

            target = "npgrad" + module[len("torch"):]
            try:
                return getattr(importlib.import_module(target), name)
            except (ImportError, AttributeError):
                raise AttributeError(f"npgrad.load: the file needs {full}, and npgrad has no "
                                     f"{target}.{name}") from None
        return super().find_class(module, name)


def _unpickle(data: Any, weights_only: bool, persistent_load: Callable[[Any], Any],
              encoding: str, pickle_load_args: dict) -> Any:
    if weights_only:
        try:
            return _weights_only.Unpickler(data, encoding=encoding,
                                           persistent_load=persistent_load).load()
        except pickle.UnpicklingError as exc:
            raise pickle.UnpicklingError(_weights_only.weights_only_message(str(exc))) from None
    unpickler = _FullUnpickler(data, **pickle_load_args)
    unpickler.persistent_load = persistent_load  # type: ignore[method-assign]
    return unpickler.load()


_CORRUPTION = (EOFError, IndexError, struct.error, zipfile.BadZipFile, zlib.error, ValueError,
               KeyError)


def _load_zip(fileobj: Any, name: str, path: str | None, restore: Callable, mmap: bool,
              weights_only: bool, encoding: str, pickle_load_args: dict) -> Any:
    try:
        reader = _zip_format.ZipReader(fileobj)
        if reader.has("constants.pkl"):
            raise RuntimeError(f"npgrad.load: {name} is a TorchScript archive "
                               "(torch.jit.save), which npgrad cannot load")
        reader.read("version")
        byteorder = reader.read("byteorder") if reader.has("byteorder") else b"little"
        if byteorder not in (b"little", b"big"):
            raise ValueError("Unknown endianness type: " + byteorder.decode())
        mapped = np.memmap(path, dtype=np.uint8, mode="c") if mmap and path else None
        pickled = reader.read("data.pkl")
    except RuntimeError:
        raise
    except _CORRUPTION as exc:
        raise _corrupt(name, f"{type(exc).__name__}: {exc}") from None
    loaded: dict[str, Storage] = {}

    def persistent_load(pid: Any) -> Storage:
        if not isinstance(pid, tuple) or len(pid) != 5:
            raise ValueError(f"a storage reference should be a 5-tuple, got {pid!r}")
        kind, storage_type, key, location, numel = pid
        if _ascii(kind) != "storage":
            raise RuntimeError(f"Unknown typename for persistent_load, expected 'storage' but "
                               f"got '{kind}'")
        if key in loaded:
            return loaded[key]
        d, item = _storage_dtype(storage_type)
        data = reader.storage(f"data/{key}", mapped)
        if data.nbytes != numel * item:
            raise ValueError(f"storage {key} has {data.nbytes} bytes, the file says "
                             f"{numel * item}")
        if byteorder.decode() != sys.byteorder and item > 1:
            data.view(d.np_dtype).byteswap(inplace=True)
        storage = restore(Storage(data, d), _ascii(location))
        loaded[key] = storage
        return storage

    try:
        return _unpickle(io.BytesIO(pickled), weights_only, persistent_load, encoding,
                         pickle_load_args)
    except _CORRUPTION as exc:
        raise _corrupt(name, f"{type(exc).__name__}: {exc}") from None


def _load_legacy(fileobj: Any, name: str, restore: Callable, weights_only: bool,
                 encoding: str, pickle_load_args: dict) -> Any:
    def header() -> Any:
        return _unpickle(fileobj, weights_only, _no_persistent, encoding, pickle_load_args)

    storages: dict[str, Storage] = {}

    def persistent_load(pid: Any) -> Any:
        if not isinstance(pid, tuple):  # torch's check and text
            raise AssertionError(f"saved_id must be a tuple, got {type(pid).__name__}")  # noqa: TRY004
        kind = _ascii(pid[0])
        if kind == "module":
            return pid[1]
        if kind != "storage":
            raise RuntimeError(f"Unknown saved id type: {pid[0]}")
        storage_type, root_key, location, numel, view = pid[1:]
        d, item = _storage_dtype(storage_type)
        if root_key not in storages:
            storages[root_key] = restore(Storage(np.zeros(numel * item, np.uint8), d),
                                         _ascii(location))
        root = storages[root_key]
        if view is None:
            return root
        view_key, offset, size = view
        if view_key not in storages:
            storages[view_key] = Storage(root.data[offset * item:(offset + size) * item], d)
        return storages[view_key]

    try:
        if header() != MAGIC_NUMBER:
            raise RuntimeError("Invalid magic number; corrupt file?")
        version = header()
        if version != PROTOCOL_VERSION:
            raise RuntimeError(f"Invalid protocol version: {version}")
        header()  # sys info
        result = _unpickle(fileobj, weights_only, persistent_load, encoding, pickle_load_args)
        keys = header()
        for key in keys:
            storage = storages[key]
            item = storage.dtype.itemsize if storage.dtype is not None else 1
            (count,) = struct.unpack("<q", _read_exact(fileobj, 8))
            if count * item != storage.data.nbytes:
                raise ValueError(f"storage {key} has {count * item} bytes, the file says "
                                 f"{storage.data.nbytes}")
            storage.data[:] = np.frombuffer(_read_exact(fileobj, count * item), np.uint8)
        return result
    except _CORRUPTION as exc:
        raise _corrupt(name, f"{type(exc).__name__}: {exc}") from None


def _no_persistent(pid: Any) -> Any:
    raise pickle.UnpicklingError("unsupported persistent id encountered")


def _read_exact(fileobj: Any, n: int) -> bytes:
    data = fileobj.read(n)
    if len(data) != n:
        raise EOFError(f"needed {n} bytes, got {len(data)}")
    return data


def _ascii(value: Any) -> Any:
    return value.decode("ascii") if isinstance(value, bytes) else value


def _weights_only_default(weights_only: Any, pickle_module: Any) -> bool:
    not_set = weights_only is None
    if not_set:
        weights_only = pickle_module is None
    truthy = ("1", "y", "yes", "true")
    force = os.getenv("TORCH_FORCE_WEIGHTS_ONLY_LOAD", "0").lower() in truthy
    force_not = os.getenv("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD", "0").lower() in truthy
    if force and force_not:
        raise RuntimeError("Only one of `TORCH_FORCE_WEIGHTS_ONLY_LOAD` or "
                           "`TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD` should be set, but both were set.")
    if force:
        return True
    if force_not and not_set:
        warnings.warn("Environment variable TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD detected, since "
                      "the`weights_only` argument was not explicitly passed to `torch.load`, "
                      "forcing weights_only=False.", UserWarning, stacklevel=3)
        return False
    return bool(weights_only)


def load(f: Any, map_location: Any = None, pickle_module: Any = None, *,
         weights_only: bool | None = None, mmap: bool | None = None,
         **pickle_load_args: Any) -> Any:
    """Load what ``torch.save`` or ``npgrad.save`` wrote (a path or a binary file object).

    See Note [Which format] and Note [Loading safely].  ``map_location`` may be
    ``"cpu"``, a ``device``, a dict of location tags or a callable
    ``(storage, location) -> storage or None``; tensors saved on CUDA need it
    (npgrad runs on the CPU only).  ``mmap=True`` maps a path's storages
    instead of reading them (copy-on-write, like torch's default).
    """
    weights_only = _weights_only_default(weights_only, pickle_module)
    if weights_only and pickle_module is not None:
        raise RuntimeError("Can not safely load weights when explicit pickle_module is "
                           "specified")
    if pickle_load_args and weights_only:
        warnings.warn("pickle_load_args only works if `weights_only=False`.", stacklevel=2)
    encoding = pickle_load_args.pop("encoding", "utf-8")
    if not weights_only:
        pickle_load_args["encoding"] = encoding
    is_path = isinstance(f, (str, os.PathLike))
    path = os.fsdecode(os.fspath(f)) if is_path else None
    name = repr(path) if path is not None else repr(getattr(f, "name", "<file object>"))
    restore = _restore_location(map_location)
    if path is not None and path.endswith(".safetensors"):
        if isinstance(map_location, dict):
            raise RuntimeError("Loading safetensors file with dict map_location is not "
                               "supported. Use a device string or torch.device instead.")
        if map_location is not None and callable(map_location) and \
                not isinstance(map_location, _device):
            raise RuntimeError("Loading safetensors file with callable map_location is not "
                               "supported. Use a device string or torch.device instead.")
        return _load_safetensors_path(path, name, restore, bool(mmap))
    with (open(path, "rb") if path is not None else _borrowed(f)) as fileobj:
        start = fileobj.tell()
        head = fileobj.read(16)
        if isinstance(head, str):
            raise TypeError("npgrad.load needs a binary file object (open the file with 'rb')")
        fileobj.seek(start)
        if _zip_format.is_zip(head):
            if mmap and path is None:
                raise ValueError("f must be a file path in order to use the mmap argument")
            return _load_zip(fileobj, name, path, restore, bool(mmap), weights_only, encoding,
                             pickle_load_args)
        if _safetensors_format.looks_like_safetensors(head):
            return _load_safetensors_bytes(np.frombuffer(bytearray(fileobj.read()), np.uint8),
                                           name, restore)
        if mmap:
            f_name = f"{f}, " if isinstance(f, str) else ""
            raise RuntimeError("mmap can only be used with files saved with "
                               f"`torch.save({f_name}_use_new_zipfile_serialization=True), "
                               "please torch.save your checkpoint with this option in order to "
                               "use mmap.")
        if head[:1] != pickle.PROTO:
            why = "empty" if not head else f"starts with {bytes(head[:8])!r}"
            raise _corrupt(name, f"neither a zip archive, a pickle nor safetensors: {why}")
        return _load_legacy(fileobj, name, restore, weights_only, encoding, pickle_load_args)


class _borrowed:
    """A caller's file object in a ``with`` block that leaves it open."""

    def __init__(self, f: Any) -> None:
        if not hasattr(f, "read"):
            raise TypeError(f"npgrad.load expects a path or a binary file object, got "
                            f"{type(f).__name__}")
        self.f = f

    def __enter__(self) -> Any:
        return self.f

    def __exit__(self, *exc: object) -> None:
        pass


def _load_safetensors_path(path: str, name: str, restore: Callable, mmap: bool) -> Any:
    if mmap:
        data = np.memmap(path, dtype=np.uint8, mode="c") if os.path.getsize(path) else \
            np.zeros(0, np.uint8)
    else:
        with open(path, "rb") as fh:
            data = np.frombuffer(bytearray(fh.read()), np.uint8)
    return _load_safetensors_bytes(data, name, restore)


def _load_safetensors_bytes(data: np.ndarray, name: str, restore: Callable) -> Any:
    restore(Storage(data[:0], None), "cpu")  # a CUDA map_location fails here, as in torch
    return _safetensors_format.loads(data, name)
