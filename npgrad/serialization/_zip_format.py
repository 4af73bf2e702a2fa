"""torch.save's zip container: records under one folder, stored uncompressed, 64-byte aligned.

Note [The zip layout torch writes]
``torch.save`` (PyTorchStreamWriter) writes a zip archive whose every record
sits in one folder -- the file name without its extension, or ``archive`` for
a file object -- in this order: ``data.pkl``, ``.format_version`` (``1``),
``.storage_alignment`` (``64``), ``byteorder`` (``little``), ``data/0``,
``data/1``, ... (the raw bytes of each storage), ``version`` (``3\\n``) and
``.data/serialization_id`` (40 decimal digits).  Nothing is compressed, and
each record's bytes start at a multiple of 64 in the file: the local header
carries an extra field ``FB`` padded with ``Z``s to get there, which is what
lets ``mmap=True`` map storages in place.  The reader takes the folder name
from the first record, as torch's does, so files written under any name load.
"""
from __future__ import annotations

import os
import secrets
import struct
import zipfile
import zlib
from collections.abc import Iterable
from typing import Any

import numpy as np

__all__ = ["ALIGNMENT", "ZipReader", "archive_name", "is_zip", "write_archive"]

ALIGNMENT = 64
FORMAT_VERSION = b"1"
FILE_VERSION = b"3\n"
_LOCAL_HEADER = 30


def archive_name(path: str | None) -> str:
    """The folder torch puts records in: the file's base name without its last extension."""
    if path is None:
        return "archive"
    base = os.path.basename(path)
    stem = base[:base.rfind(".")] if "." in base else base
    return stem if stem else "archive"


def is_zip(head: bytes) -> bool:
    return head[:4] == b"PK\x03\x04"


def _padding(position: int, name: str, zip64: bool) -> bytes:
    start = position + _LOCAL_HEADER + len(name.encode("utf-8")) + 4 + (20 if zip64 else 0)
    pad = -start % ALIGNMENT
    return b"FB" + struct.pack("<H", pad) + b"Z" * pad


def write_archive(fileobj: Any, folder: str, records: Iterable[tuple[str, Any]]) -> None:
    """Write ``records`` (name, bytes-like) as torch's zip to the binary ``fileobj``."""
    crcs = []
    with zipfile.ZipFile(fileobj, "w", compression=zipfile.ZIP_STORED, allowZip64=True) as zf:
        def add(name: str, data: Any) -> None:
            view = memoryview(data).cast("B") if not isinstance(data, bytes) else data
            full = f"{folder}/{name}"
            info = zipfile.ZipInfo(full, date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_STORED
            info.file_size = len(view)
            zip64 = len(view) * 1.05 > zipfile.ZIP64_LIMIT
            info.extra = _padding(fileobj.tell(), full, zip64)
            with zf.open(info, "w", force_zip64=zip64) as out:
                out.write(view)
            crcs.append(zlib.crc32(view))

        for name, data in records:
            add(name, data)
        add("version", FILE_VERSION)
        combined = 0
        for crc in crcs:
            combined = (combined * 1000003 ^ crc) % (1 << 64)
        add(".data/serialization_id",
            f"{combined:020d}{secrets.randbits(64):020d}".encode("ascii"))


class ZipReader:
    """The records of a torch zip archive, read (or mapped) from a path or binary file."""

    def __init__(self, fileobj: Any) -> None:
        self.fileobj = fileobj
        self.zf = zipfile.ZipFile(fileobj)
        infos = self.zf.infolist()
        if not infos:
            raise zipfile.BadZipFile("archive does not contain any files")
        first = infos[0].filename
        if "/" not in first:
            raise zipfile.BadZipFile(f"file in archive is not in a subdirectory: {first}")
        self.prefix = first[:first.index("/") + 1]
        self.infos = {i.filename: i for i in infos}

    def has(self, name: str) -> bool:
        return self.prefix + name in self.infos

    def names(self) -> list[str]:
        n = len(self.prefix)
        return [k[n:] for k in self.infos if k.startswith(self.prefix)]

    def read(self, name: str) -> bytes:
        info = self.infos.get(self.prefix + name)
        if info is None:
            raise KeyError(f"file not found: {self.prefix}{name}")
        return self.zf.read(info)

    def data_offset(self, name: str) -> int:
        """Where record ``name``'s bytes start in the file (for mmap)."""
        info = self.infos[self.prefix + name]
        if info.compress_type != zipfile.ZIP_STORED:
            raise zipfile.BadZipFile(f"record {name} is compressed and cannot be mapped")
        self.fileobj.seek(info.header_offset)
        header = self.fileobj.read(_LOCAL_HEADER)
        if len(header) != _LOCAL_HEADER or header[:4] != b"PK\x03\x04":
            raise zipfile.BadZipFile(f"bad local header for record {name}")
        name_len, extra_len = struct.unpack("<HH", header[26:30])
        return info.header_offset + _LOCAL_HEADER + name_len + extra_len

    def size(self, name: str) -> int:
        return self.infos[self.prefix + name].file_size

    def storage(self, name: str, mapped: np.ndarray | None) -> np.ndarray:
        """Record ``name`` as a flat writable uint8 array: a slice of ``mapped``, or a copy."""
        if mapped is not None:
            start = self.data_offset(name)
            size = self.size(name)
            if start + size > mapped.nbytes:
                raise zipfile.BadZipFile(f"record {name} runs past the end of the file")
            return mapped[start:start + size]
        return np.frombuffer(bytearray(self.read(name)), dtype=np.uint8)
