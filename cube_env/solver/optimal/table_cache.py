"""On-disk cache for solver tables: versioned, checksummed, atomically written.

Each table is one ``.npy`` file plus a ``.json`` sidecar naming the format
version, dtype, shape, byte size and a 64-bit checksum of the data.  A table is
trusted only when the sidecar exists, matches what the caller expects and the
checksum of the data on disk agrees; anything else (a missing, partial,
truncated or corrupted file, an older version) is rebuilt.  Files are written
to a temporary name, flushed to disk and renamed, so a crash mid-write never
leaves a file that looks complete.  Verified tables are opened with
``np.load(mmap_mode="r")``: the operating system pages them in on demand and
shares them between processes.

Location: ``$CUBEBENCH_CACHE_DIR`` when set, else
``platformdirs.user_cache_dir("cubebench")``, in a ``solver-optimal``
subdirectory.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from pathlib import Path
from typing import IO, Any, Callable

import numba as nb
import numpy as np
import platformdirs

FORMAT_VERSION = 1
"""Bump when any table's layout or meaning changes: old files are then rebuilt."""

ENV_VAR = "CUBEBENCH_CACHE_DIR"

_VERIFIED: dict[Path, np.ndarray] = {}


def cache_dir() -> Path:
    """Directory holding the solver's tables (created on demand)."""
    root = os.environ.get(ENV_VAR) or platformdirs.user_cache_dir("cubebench")
    return Path(root) / "solver-optimal"


@nb.njit(cache=True, nogil=True)
def _checksum_words(words):
    """A 64-bit checksum mixing every word and its position (not cryptographic)."""
    h = np.uint64(0x9E3779B97F4A7C15)
    a = np.uint64(0)
    for i in range(words.shape[0]):
        a += words[i] ^ (np.uint64(i) * np.uint64(0xBF58476D1CE4E5B9))
        h ^= a
        h *= np.uint64(0x100000001B3)
    return h ^ a


def checksum(arr: np.ndarray) -> str:
    """Hex checksum of an array's bytes; its length is part of the hash."""
    raw = np.ascontiguousarray(arr).reshape(-1).view(np.uint8)
    n = raw.size
    k = n - n % 8
    h = int(_checksum_words(raw[:k].view(np.uint64)))
    digest = hashlib.sha256(h.to_bytes(8, "little") + raw[k:].tobytes() + n.to_bytes(8, "little"))
    return digest.hexdigest()[:16]


def paths(name: str) -> tuple[Path, Path]:
    """(data file, sidecar) of table ``name`` in the current cache directory."""
    base = cache_dir() / f"{name}-v{FORMAT_VERSION}"
    return base.with_suffix(".npy"), base.with_suffix(".json")


def _atomic_write(path: Path, write: Callable[[IO[Any]], object], mode: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name + ".", suffix=".tmp")
    try:
        with os.fdopen(fd, mode) as fh:
            write(fh)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def save(name: str, arr: np.ndarray, meta: dict | None = None) -> None:
    """Write table ``name`` atomically with its sidecar (data first, sidecar last)."""
    data_path, meta_path = paths(name)
    info = {
        "name": name,
        "format_version": FORMAT_VERSION,
        "dtype": str(arr.dtype),
        "shape": list(arr.shape),
        "nbytes": int(arr.nbytes),
        "checksum": checksum(arr),
        **(meta or {}),
    }
    if meta_path.exists():
        meta_path.unlink()  # the old sidecar must never vouch for the new data
    _atomic_write(data_path, lambda fh: np.save(fh, arr, allow_pickle=False), "wb")
    _atomic_write(meta_path, lambda fh: fh.write(json.dumps(info, indent=1)), "w")


def read_meta(name: str) -> dict | None:
    """The sidecar of table ``name``, or None when missing or unreadable."""
    _, meta_path = paths(name)
    try:
        return json.loads(meta_path.read_text())
    except (OSError, ValueError):
        return None


def load(name: str, dtype: np.dtype, shape: tuple[int, ...]) -> np.ndarray | None:
    """Memory-map table ``name`` if it is present, complete and uncorrupted, else None."""
    data_path, _ = paths(name)
    key = data_path.resolve() if data_path.exists() else data_path
    if key in _VERIFIED:
        return _VERIFIED[key]
    meta = read_meta(name)
    if meta is None or meta.get("format_version") != FORMAT_VERSION:
        return None
    if meta.get("dtype") != str(np.dtype(dtype)) or tuple(meta.get("shape", ())) != tuple(shape):
        return None
    try:
        arr = np.load(data_path, mmap_mode="r", allow_pickle=False)
    except (OSError, ValueError):
        return None  # truncated header or data: np.load refuses a short file
    if arr.dtype != np.dtype(dtype) or arr.shape != tuple(shape):
        return None
    if checksum(arr) != meta.get("checksum"):
        return None
    _VERIFIED[key] = arr
    return arr


def forget() -> None:
    """Drop the in-process record of verified tables (tests use it after editing files)."""
    _VERIFIED.clear()


def get_or_build(
    name: str, dtype: np.dtype, shape: tuple[int, ...], build: Callable[[], np.ndarray],
    meta: dict | None = None,
) -> np.ndarray:
    """Load table ``name`` from the cache, building and saving it first if needed."""
    arr = load(name, dtype, shape)
    if arr is not None:
        return arr
    built = build()
    if built.dtype != np.dtype(dtype) or built.shape != tuple(shape):
        raise AssertionError(f"table {name} built with {built.dtype}{built.shape}, expected {dtype}{shape}")
    save(name, built, meta)
    del built
    arr = load(name, dtype, shape)
    if arr is None:
        raise OSError(f"table {name} could not be read back from {paths(name)[0]}")
    return arr
