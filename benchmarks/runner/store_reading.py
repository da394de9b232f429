"""Opening a run's file for reading on any media: read-only mounts, folders one may not write, full disks.

A run is an SQLite database in WAL mode.  SQLite reads such a file only beside its ``-shm`` index, which a
plain connection creates (and removes when it closes): on a read-only mount, in a folder the reader may not
write, or on a full disk, that fails with "unable to open database file" though the run is intact.  A reader
(``report``, ``export``, ``view``, ``compare``) tries, in turn:

1. a plain connection, when the folder and the file are writable (it leaves nothing behind once closed);
2. SQLite's read-only mode (``mode=ro``), which reads an ``-shm`` that is there without writing the file;
3. the file as immutable (``immutable=1``: no ``-shm`` needed), when no ``-wal`` beside it holds changes;
4. a private copy of the file and its ``-wal`` in a temporary folder, when one does: SQLite folds the copy's
   WAL in there, and the original is never touched.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import tempfile
from pathlib import Path
from urllib.parse import quote

from .store_errors import DAMAGE, error_name

__all__ = ["connect_reader"]

TIMEOUT_S = 30.0


def connect_reader(path: Path) -> tuple[sqlite3.Connection, Path | None]:
    """A connection that reads the run at ``path`` (see the module's docstring), and the temporary folder of
    a private copy to remove after closing it (``None`` when it reads the file itself).  Raises the last
    ``sqlite3.Error`` when no way reads it, at once for a file SQLite calls damaged."""
    failure: sqlite3.Error | None = None
    if _writable(path):
        try:
            return _probed(sqlite3.connect(str(path), timeout=TIMEOUT_S, isolation_level=None)), None
        except sqlite3.Error as err:
            failure = _unless_damage(err)
    uri = "file:" + quote(os.path.abspath(path))
    for query in ("mode=ro", "mode=ro&immutable=1"):
        if query.endswith("immutable=1") and _wal_has_changes(path):
            break  # immutable would not see them: read a private copy instead
        try:
            return _probed(sqlite3.connect(f"{uri}?{query}", uri=True, timeout=TIMEOUT_S, isolation_level=None)), None
        except sqlite3.Error as err:
            failure = _unless_damage(err)
    copy = _private_copy(path)
    if copy is None:
        raise failure or sqlite3.OperationalError("unable to open database file")
    try:
        return _probed(sqlite3.connect(str(copy / path.name), timeout=TIMEOUT_S, isolation_level=None)), copy
    except BaseException:
        shutil.rmtree(copy, ignore_errors=True)
        raise


def _writable(path: Path) -> bool:
    folder = path.parent if str(path.parent) else Path(".")
    return os.access(path, os.R_OK | os.W_OK) and os.access(folder, os.W_OK | os.X_OK)


def _probed(db: sqlite3.Connection) -> sqlite3.Connection:
    """``db`` once it has read the schema (which opens the ``-wal`` and ``-shm``: where they fail)."""
    try:
        db.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()
    except BaseException:
        db.close()
        raise
    return db


def _unless_damage(err: sqlite3.Error) -> sqlite3.Error:
    """``err``, to try the next way, unless SQLite calls the file itself damaged (then no way reads it)."""
    if error_name(err) in DAMAGE:
        raise err
    return err


def _wal_has_changes(path: Path) -> bool:
    try:
        return os.path.getsize(f"{path}-wal") > 0
    except OSError:
        return False


def _private_copy(path: Path) -> Path | None:
    """A temporary folder holding copies of the run and its ``-wal`` (``None`` when they cannot be copied)."""
    folder = Path(tempfile.mkdtemp(prefix="cubebench-read-"))
    try:
        shutil.copyfile(path, folder / path.name)
        if os.path.exists(f"{path}-wal"):
            shutil.copyfile(f"{path}-wal", folder / f"{path.name}-wal")
    except OSError:
        shutil.rmtree(folder, ignore_errors=True)
        return None
    return folder
