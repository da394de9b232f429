"""What can go wrong with a run's file, and how each is told: only real damage is called damage.

SQLite reports every failure as an ``sqlite3.Error``; a user reading "damaged ... ``sqlite3 RUN .recover``" about
an intact run on a full disk or a read-only mount would try to recover a good run.  :func:`sqlite_failure` turns a
failure into the store's error that says what happened:

* :class:`StoreFull` (``SQLITE_FULL``, or an I/O error while the run's folder has no room): the run is intact
  (every commit is whole or absent) and resumes once there is room;
* :class:`StoreDamaged` (``SQLITE_CORRUPT``, ``SQLITE_NOTADB``, and the store's own checks): real damage;
* :class:`StoreError` for the rest (read-only media, a file that cannot be opened, a lock held elsewhere), with
  SQLite's reason;
* :class:`StoreNewer` is raised by the store for a file written by a newer cubebench: a protocol, field or
  status this version does not know.  Such a file is never altered.
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

__all__ = ["StoreError", "StoreDamaged", "StoreFull", "StoreNewer", "sqlite_failure", "is_disk_full", "is_writable",
           "NO_ROOM_BYTES"]


class StoreError(RuntimeError):
    """The file is not a CubeBench run, or a write would break the store's guarantees."""


class StoreDamaged(StoreError):
    """The run's file is damaged: SQLite finds it corrupt, or its tables, plan or records do not read back."""


class StoreFull(StoreError):
    """The disk holding the run is full: nothing was half-written, and the run resumes once there is room."""


class StoreNewer(StoreError):
    """The run was written by a newer cubebench: it holds a protocol, field or status this version does not know.
    Nothing in it is changed."""


NO_ROOM_BYTES = 1 << 20
"""Free bytes below which a folder counts as full: an I/O error there is taken for a full disk (SQLite reports a
file it cannot grow as ``SQLITE_IOERR`` as often as ``SQLITE_FULL``)."""

_BY_MESSAGE = {
    "database or disk is full": "SQLITE_FULL",
    "disk I/O error": "SQLITE_IOERR",
    "attempt to write a readonly database": "SQLITE_READONLY",
    "unable to open database file": "SQLITE_CANTOPEN",
    "database disk image is malformed": "SQLITE_CORRUPT",
    "file is not a database": "SQLITE_NOTADB",
    "database is locked": "SQLITE_BUSY",
}
"""SQLite's messages of the failures told apart, for a Python without ``sqlite3.Error.sqlite_errorname`` (3.10)."""
DAMAGE = frozenset({"SQLITE_CORRUPT", "SQLITE_NOTADB"})


def error_name(err: sqlite3.Error) -> str:
    """SQLite's primary result code of ``err`` by name (``SQLITE_FULL``...), or ``""`` when it gives none."""
    name = getattr(err, "sqlite_errorname", None)
    if isinstance(name, str) and name:
        parts = name.split("_")
        return "_".join(parts[:2])  # SQLITE_IOERR_WRITE -> SQLITE_IOERR
    return next((code for text, code in _BY_MESSAGE.items() if text in str(err)), "")


def is_disk_full(path: Path) -> bool:
    """Whether the file system holding ``path`` (or its folder) has less than :data:`NO_ROOM_BYTES` free."""
    folder = path if path.is_dir() else (path.parent if str(path.parent) else Path("."))
    try:
        stat = os.statvfs(folder)
    except (OSError, AttributeError):  # no statvfs (Windows), or a folder that is gone
        return False
    return stat.f_bavail * stat.f_frsize < NO_ROOM_BYTES


def is_writable(path: Path) -> bool:
    """Whether this process may write ``path``'s folder (and ``path``, where it exists): not on a read-only mount."""
    folder = path.parent if str(path.parent) else Path(".")
    return os.access(folder, os.W_OK) and (not path.exists() or os.access(path, os.W_OK))


def sqlite_failure(err: sqlite3.Error, path: Path, doing: str = "read or write", *, unit: str = "episode") -> StoreError:
    """The store's error for an SQLite failure while ``doing`` something with the run at ``path``."""
    name, reason = error_name(err), str(err)[:200]
    if name == "SQLITE_FULL" or (name in ("SQLITE_IOERR", "SQLITE_CANTOPEN") and is_disk_full(path)):
        return StoreFull(f"disk full: cannot {doing} {path} ({reason}); the run is intact (every finished {unit} "
                         f"is stored whole): free some space, then resume with `cubebench run --resume {path}`")
    if name in DAMAGE:
        return StoreDamaged(damaged_message(path, reason))
    if name == "SQLITE_READONLY" or (name == "SQLITE_CANTOPEN" and not is_writable(path)):
        return StoreError(f"cannot {doing} {path}: it is read-only here ({reason}); reports, exports and views "
                          "read it as it is; to play it, copy it to a folder you can write")
    if name == "SQLITE_BUSY":
        return StoreError(f"cannot {doing} {path}: another process holds it ({reason}); try again when it is done")
    return StoreError(f"cannot {doing} {path}: {reason}")


def damaged_message(path: Path, what: str) -> str:
    """The one line that calls a run damaged, with what is wrong and what may save its episodes."""
    return (f"{path} is damaged ({what[:300]}): it cannot be read or resumed; "
            f"`sqlite3 {path} .recover` may save its intact episodes")
