"""Whether a training run's files on disk are whole, checked before any of them is used: one line naming the file.

A run writes a record of every file it will need again (:func:`file_record`: its size and SHA-256) beside the
files: the checkpoint's ``state.json`` lists the checkpoint's other files, a data folder's ``manifest.json`` its
JSONL files.  :func:`check_recorded` compares the files with that record.  Files written before records were kept
are checked by their form: JSON that parses (:func:`read_json`), a safetensors file as long as its header says
(:func:`check_safetensors`), a torch checkpoint whose zip directory is there (:func:`check_torch_zip`).  A file
cut short by a kill, a full disk or a copy that stopped half way is caught either way.
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import struct
import zipfile
from pathlib import Path
from typing import Any

__all__ = ["DamagedFile", "DiskFull", "file_record", "check_recorded", "read_json", "check_safetensors",
           "check_torch_zip", "replace_text", "disk_full"]


class DamagedFile(ValueError):
    """A file a run needs is missing, cut or changed; the message names it and says how."""

    def __init__(self, path: Path, why: str) -> None:
        super().__init__(f"{path} is {why}")
        self.path = path


class DiskFull(Exception):
    """A write failed for want of space; the message names the file."""


def disk_full(err: BaseException) -> bool:
    """Whether ``err`` is a write that failed because the disk (or the user's quota) is full."""
    return isinstance(err, DiskFull) or isinstance(err, OSError) and err.errno in (errno.ENOSPC, errno.EDQUOT)


def file_record(path: Path) -> dict[str, Any]:
    """``{"bytes", "sha256"}`` of ``path``, to check it against later."""
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return {"bytes": path.stat().st_size, "sha256": digest.hexdigest()}


def check_recorded(folder: Path, records: dict[str, Any]) -> None:
    """Each file named in ``records`` is in ``folder`` with the size and hash recorded, else :class:`DamagedFile`."""
    if not isinstance(records, dict):
        raise DamagedFile(folder, "damaged (its file record is not a table)")
    for name, record in records.items():
        path = folder / name
        if not path.is_file():
            raise DamagedFile(path, "missing")
        size = path.stat().st_size
        want = record.get("bytes") if isinstance(record, dict) else None
        if size != want:
            raise DamagedFile(path, f"cut short ({size:,} of {want:,} bytes)" if isinstance(want, int) and size < want
                              else f"damaged ({size:,} bytes, {want} were written)")
        if file_record(path)["sha256"] != record.get("sha256"):
            raise DamagedFile(path, "damaged (its contents differ from what was written)")


def read_json(path: Path) -> Any:
    """The JSON in ``path``, or :class:`DamagedFile` (missing, or not whole JSON)."""
    if not path.is_file():
        raise DamagedFile(path, "missing")
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as err:
        raise DamagedFile(path, f"damaged (not whole JSON: {str(err).splitlines()[0][:80]})") from None


def check_safetensors(path: Path) -> None:
    """A safetensors file whose size is what its header says, else :class:`DamagedFile`."""
    if not path.is_file():
        raise DamagedFile(path, "missing")
    size = path.stat().st_size
    with path.open("rb") as f:
        head = f.read(8)
        if len(head) < 8:
            raise DamagedFile(path, f"cut short ({size} bytes, no header)")
        (length,) = struct.unpack("<Q", head)
        if length > size - 8:
            raise DamagedFile(path, f"cut short ({size:,} bytes, its header alone is {length + 8:,})")
        try:
            header = json.loads(f.read(length))
        except (UnicodeDecodeError, json.JSONDecodeError, RecursionError):
            raise DamagedFile(path, "damaged (its header is not JSON)") from None
    ends = [v["data_offsets"][1] for k, v in header.items() if k != "__metadata__" and isinstance(v, dict)
            and isinstance(v.get("data_offsets"), list) and len(v["data_offsets"]) == 2]
    want = 8 + length + max(ends, default=0)
    if size < want:
        raise DamagedFile(path, f"cut short ({size:,} of {want:,} bytes)")


def check_torch_zip(path: Path) -> None:
    """A ``torch.save`` file (a zip archive) whose directory at the end is there, else :class:`DamagedFile`."""
    if not path.is_file():
        raise DamagedFile(path, "missing")
    try:
        with zipfile.ZipFile(path) as archive:
            archive.infolist()
    except (zipfile.BadZipFile, OSError, EOFError) as err:
        raise DamagedFile(path, f"damaged or cut short ({path.stat().st_size:,} bytes: {err})") from None


def replace_text(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` whole or not at all (beside, then renamed over it); a full disk is
    :class:`DiskFull` naming the file."""
    tmp = path.with_name(path.name + ".tmp")
    try:
        with tmp.open("w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        tmp.replace(path)
    except OSError as err:
        tmp.unlink(missing_ok=True)
        if disk_full(err):
            raise DiskFull(f"the disk is full: writing {path} failed") from err
        raise
