"""The result store: one SQLite database per run (stdlib ``sqlite3``, WAL mode).

It holds the suite, the run's configuration, the library versions, the
planned episodes, and each finished episode's full record, written in one
transaction as the episode finishes.  The episode key is the primary key, so
a finished episode can never be stored twice; a run killed at any moment
(Ctrl-C, ``kill -9``, power loss) leaves every committed episode intact and
nothing half-written (``synchronous=FULL``: a commit is on disk when it
returns).  Resuming plays exactly the planned keys that have no row yet.

One driver plays a run at a time: :meth:`RunStore.claim` (called by ``cubebench run`` before it plays
anything, and by a resume before it retires or plans anything) takes an exclusive lock that the
kernel releases however the process ends (``kill -9`` included), so a resume of a run whose driver is
still alive (a ``kill`` that hit a wrapper such as ``timeout`` or a shell, a second terminal, a Ray job
whose client was stopped but not the driver) is refused in one line instead of playing the same
episodes twice.  The lock is ``.<name>.lock`` beside the run (``flock``; ``msvcrt.locking`` on Windows),
removed when the driver closes the run; a killed driver leaves it, unlocked, for the next one.

A run is created atomically (:meth:`RunStore.create`): its file is written,
suite, configuration and plan included, under a temporary name beside it and
linked into place only when complete, so the run's path never names a run
without its plan.

Opening a run checks it (:class:`StoreDamaged` otherwise): the SQLite
``integrity_check``, the tables and schema version, the suite, configuration
and plan, and (unless ``check_records=False``) every stored episode, whose
summary row and record must read back and agree.  A damaged episode is never
counted as finished by a resume: ``retire_damaged()`` moves it to ``retired``
(status ``damaged``) and the resume plays it again.

``error`` episodes (the agent or its model kept failing, e.g. an API outage)
are finished records and are kept by a plain resume; ``retire_errors()``
(``cubebench run --resume RUN --retry-errors``) moves them to the
``retired`` table, so they are played again and the old records survive.

A run of any protocol uses the same tables: its plan rows are its protocol's row type (read back as such because
of ``meta["protocol"]``: :func:`~.planning.row_type`; every check above applies unchanged), and each played row is an
``episodes`` row with its record, an :class:`~cubebench.agents.records.EpisodeRecord` (a question item: one step per
question asked; a game: one step per seat turn).  The summary columns hold one concept each in every protocol
(:mod:`.rows`).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import sqlite3
import sys
import time
import zlib
from pathlib import Path
from typing import Any, Iterator, Sequence

import numpy as np
from cubebench import __version__
from cubebench.agents.records import EpisodeRecord, NewerForm, RecordError, safe_strings, safe_text

from .planning import PlannedSpec, row_protocols, row_type
from .rows import SCHEMA_1_NAMES, STORED_COLUMNS, StoredRow
from .store_errors import StoreDamaged, StoreError, StoreFull, StoreNewer, damaged_message, is_writable, sqlite_failure
from .store_reading import connect_reader

SCHEMA_VERSION = 2
"""The store schema this version writes (2: the summary columns named for every protocol, :mod:`.rows`); it reads 1
too."""
UNNAMED_PROTOCOL = "episodes"
"""What a run stored without ``meta["protocol"]`` plays (every run from before question runs existed)."""

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS plan (key TEXT PRIMARY KEY, position INTEGER NOT NULL, spec TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS episodes (
    key TEXT PRIMARY KEY REFERENCES plan(key),
    part TEXT NOT NULL, depth INTEGER NOT NULL, instance INTEGER NOT NULL, variant TEXT NOT NULL,
    setting TEXT NOT NULL, horizon TEXT NOT NULL, status TEXT NOT NULL, solved INTEGER NOT NULL,
    n_steps INTEGER NOT NULL, n_moves INTEGER NOT NULL, input_tokens INTEGER NOT NULL,
    output_tokens INTEGER NOT NULL, cost_usd REAL NOT NULL, wall_s REAL NOT NULL,
    distance_start INTEGER, distance_end INTEGER, session INTEGER NOT NULL, finished_at REAL NOT NULL,
    record BLOB NOT NULL
);
CREATE TABLE IF NOT EXISTS retired (
    id INTEGER PRIMARY KEY AUTOINCREMENT, key TEXT NOT NULL, status TEXT NOT NULL,
    retired_at REAL NOT NULL, record BLOB NOT NULL
);
CREATE TABLE IF NOT EXISTS sessions (
    id INTEGER PRIMARY KEY AUTOINCREMENT, started_at REAL NOT NULL, ended_at REAL,
    argv TEXT NOT NULL, outcome TEXT
);
"""



SQLITE_HEADER = b"SQLite format 3\x00"
DAMAGED = "damaged"
"""The status in ``retired`` of a damaged episode row moved aside by :meth:`RunStore.retire_damaged`."""
LOCK_SUFFIX = ".lock"
"""A driver playing a run holds an exclusive lock on ``.<name>.lock`` beside it (:meth:`RunStore.claim`)."""
CREATING = ".creating-"
"""A run being created is written to ``.<name>.creating-<pid>`` beside its path, then linked into place."""

_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")
"""A surrogate's JSON escape: a record's JSON holds lone surrogates only through these."""
_COLUMN_TYPES: dict[str, tuple[type, ...]] = {
    **dict.fromkeys(("key", "part", "variant", "setting", "horizon", "status"), (str,)),
    **dict.fromkeys(("depth", "instance", "solved", "n_steps", "n_moves", "input_tokens", "output_tokens"), (int,)),
    **dict.fromkeys(("cost_usd", "wall_s"), (int, float)),
    **dict.fromkeys(("distance_start", "distance_end"), (int, type(None))),
}
"""The Python types SQLite must give back for each summary column (it stores any type in any column)."""
_FROM_RECORD = ("status", "n_steps", "n_moves", "input_tokens", "output_tokens", "cost_usd", "wall_s",
                "distance_start", "distance_end")
"""Summary columns copied from the record when the episode is stored: row and record must agree."""
_CELL_COLUMNS = STORED_COLUMNS[1:7]
"""The summary columns a row's plan gives (part, depth, instance, variant, setting, horizon): row and plan must agree."""


def _stored_row(values: Sequence[Any], kind: type[StoredRow]) -> StoredRow:
    """The ``kind`` row of one played row from its ``STORED_COLUMNS`` values (SQLite keeps ``solved`` as 0 or 1)."""
    row = dict(zip(STORED_COLUMNS, values))
    row["solved"] = bool(row["solved"])
    return kind(**row)


def _jsonable(value: Any) -> Any:
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    raise TypeError(f"cannot store {type(value).__name__} in a record")


def record_json(data: dict[str, Any]) -> str:
    """A record's :meth:`~EpisodeRecord.to_dict` form (or a dict holding one) as the JSON text the store keeps:
    numpy values as numbers and lists, ``TypeError`` for anything else JSON cannot hold.  Exports use it."""
    return json.dumps(data, default=_jsonable)


def encode_record(record: EpisodeRecord) -> bytes:
    """A record as zlib-compressed JSON (its :meth:`~EpisodeRecord.to_dict` form: text is UTF-8-safe)."""
    return zlib.compress(record_json(record.to_dict()).encode(), 6)


def decode_record(blob: Any) -> EpisodeRecord:
    """The record of an :func:`encode_record` blob; :class:`RecordError` says why one does not read back."""
    if not isinstance(blob, bytes):
        raise RecordError(f"the record is {type(blob).__name__}, not compressed JSON")
    try:
        text = zlib.decompress(blob)
    except zlib.error as err:
        raise RecordError(f"the record does not decompress ({err})") from None
    try:
        data = json.loads(text)
    except (ValueError, RecursionError) as err:  # JSONDecodeError and UnicodeDecodeError are ValueErrors
        raise RecordError(f"the record is not JSON ({type(err).__name__}: {str(err)[:100]})") from None
    if _SURROGATE_ESCAPE.search(text):  # a record stored before text was made safe: make it so now
        data = safe_strings(data)
    return EpisodeRecord.from_dict(data)


def _row_problem(values: Sequence[Any], blob: Any, planned: tuple[Any, ...] | None) -> str | None:
    """What is wrong with one ``episodes`` row (its ``STORED_COLUMNS`` values and record), or ``None``.
    ``planned`` is the cell its plan row gives (:meth:`~.planning.PlannedSpec.cell`): the row's cell columns are
    written from it, so a row that names another cell (another tier, test or game, another protocol's part) was
    edited or damaged, and every reader would file it in the wrong place, or fail on a part its protocol lacks."""
    row = dict(zip(STORED_COLUMNS, values))
    for name, kinds in _COLUMN_TYPES.items():
        if not isinstance(row[name], kinds):
            return f"column {name} holds {type(row[name]).__name__} {safe_text(str(row[name]))[:40]!r}"
    if row["solved"] not in (0, 1):
        return f"column solved holds {row['solved']!r}"
    if planned is not None:
        differ = [f"{name} {safe_text(str(row[name]))[:40]!r} (planned {safe_text(str(want))[:40]!r})"
                  for name, want in zip(_CELL_COLUMNS, planned) if row[name] != want]
        if differ:
            return f"the summary row and its plan disagree: {', '.join(differ)}"
    try:
        record = decode_record(blob)
    except NewerForm:
        raise
    except RecordError as err:
        return str(err)
    differ = [name for name in _FROM_RECORD if not _same(row[name], getattr(record, name))]
    if bool(row["solved"]) != record.solved:
        differ.insert(0, "solved")
    if differ:
        return f"the summary row and the record disagree on {', '.join(differ)}"
    return None


def _meta_problem(suite: Any, config: Any) -> str | None:
    """What is wrong with a run's suite and configuration, as far as every reader relies on them."""
    if not isinstance(suite, dict) or not isinstance(suite.get("name"), str):
        return "its suite is missing or malformed"
    if not (isinstance(config, dict) and isinstance(config.get("agent"), dict)
            and isinstance(config["agent"].get("spec"), str)):
        return "its configuration is missing or malformed"
    return None


def _lenient_text(data: bytes) -> str:
    """A TEXT value as ``str`` whatever its bytes (undecodable ones as lone surrogates: they differ from
    every key and status, so the row reads as damaged)."""
    return data.decode("utf-8", "surrogateescape")


def _same(a: Any, b: Any) -> bool:
    """Equal, NaN included (a summary column holds what the record held, NaN as well)."""
    return a == b or (isinstance(a, float) and isinstance(b, float) and a != a and b != b)


_ABSENT = object()
"""The default of a meta entry that must be told apart from one that holds JSON ``null``."""


def _json_shown(value: Any, limit: int = 40) -> str:
    """A value read from a run's JSON as the file holds it, with its JSON type: ``null``, ``"2" (a string)``,
    ``["episodes"] (an array)``; cut at ``limit`` characters."""
    if value is None:
        return "null"
    text = safe_text(json.dumps(value, default=str))
    text = text if len(text) <= limit else text[:limit] + "..."
    kinds = {bool: "a boolean", str: "a string", list: "an array", dict: "an object", float: "a number"}
    kind = next((name for t, name in kinds.items() if isinstance(value, t)), "")
    return f"{text} ({kind})" if kind else text


def _shown_schema(version: Any) -> str:
    """How a run's schema entry that this version does not read is named in the one line that refuses it."""
    if version is _ABSENT:
        return "no store schema (its 'schema_version' entry is missing)"
    return f"store schema {_json_shown(version)}"


def _release(version: str) -> tuple[int, ...] | None:
    """The release numbers a version string starts with (``0.1.0+local`` -> ``(0, 1, 0)``), or ``None``."""
    match = re.match(r"\d+(?:\.\d+)*", version)
    return tuple(int(part) for part in match.group().split(".")) if match else None


def _may_be_newer(made: str, this: str) -> bool:
    """Whether the cubebench ``made`` may be newer than ``this`` one: not when it is the same version or an older
    release; a version that is not a release number (or the same release with another suffix) may be."""
    if made == this:
        return False
    a, b = _release(made), _release(this)
    if a is None or b is None:
        return True
    pad = max(len(a), len(b))
    a, b = a + (0,) * (pad - len(a)), b + (0,) * (pad - len(b))
    return a >= b


def _sqlite_header(path: Path) -> bytes:
    try:
        with open(path, "rb") as f:
            return f.read(len(SQLITE_HEADER))
    except OSError as err:
        raise StoreError(f"cannot read {path}: {err.strerror or err}") from None


class RunStore:
    """One run's database; use as a context manager or call :meth:`close`.

    ``RunStore(path)`` opens an existing run and checks it (see the module's docstring); a damaged
    one raises :class:`StoreDamaged`, one written by a newer cubebench :class:`StoreNewer`, a file that
    is no run :class:`StoreError`.  With ``check_records=False`` the episodes are not read back at
    opening (a resume retires the damaged ones instead).  ``readonly=True`` only reads, on any media
    (:mod:`.store_reading`: a read-only mount, a folder one may not write, a full disk).
    ``create=True`` makes an empty database at ``path`` (no plan, not atomic: :meth:`create` makes a run).
    """

    def __init__(self, path: str | Path, *, create: bool = False, check_records: bool = True,
                 readonly: bool = False) -> None:
        self.path = Path(path)
        self.session: int | None = None
        self._lock: _RunLock | None = None
        self._plan: list[PlannedSpec] | None = None
        self._copy: Path | None = None
        self._columns: tuple[str, ...] = STORED_COLUMNS
        """The summary columns' names in this file (schema 1 named two of them otherwise)."""
        """The temporary folder of a private copy a reader reads instead of the file (:mod:`.store_reading`)."""
        if not create:
            if not self.path.is_file():
                raise StoreError(f"no run database at {self.path}")
            if _sqlite_header(self.path) != SQLITE_HEADER:
                raise StoreError(f"{self.path} is not a CubeBench run database (not an SQLite file, "
                                 "or its header is damaged)")
        try:
            if readonly and not create:
                self.db, self._copy = connect_reader(self.path)
            else:
                self.db = sqlite3.connect(str(self.path), timeout=30.0, isolation_level=None)
        except sqlite3.Error as err:
            raise sqlite_failure(err, self.path, "open") from None
        try:
            if create:
                self._pragmas()
                self.db.executescript(_SCHEMA)
                self.set_meta("schema_version", SCHEMA_VERSION)
            else:
                self._check(check_records)  # before any write: a damaged file, or a newer one, is not touched
                if not readonly:
                    self._pragmas()
        except sqlite3.Error as err:
            self._close_db()
            raise sqlite_failure(err, self.path, "open") from None
        except BaseException:
            self._close_db()
            raise

    @classmethod
    def create(cls, path: str | Path, meta: dict[str, Any], plan: list[PlannedSpec]) -> "RunStore":
        """Create the run at ``path`` atomically, with ``meta`` and ``plan``, and open it.

        The database is written under ``.<name>.creating-<pid>`` beside ``path`` and linked to
        ``path`` only when complete (``os.link``: an existing file is never replaced), so a kill at
        any moment leaves either no run at ``path`` or the whole of it.  The temporary files that killed
        creators of any run in the folder left (their pid no longer alive) are removed first.
        """
        path = Path(path)
        if path.exists() or path.is_symlink():
            raise StoreError(f"{path} exists: resume it with `cubebench run --resume {path}` or choose another --out")
        problem = _meta_problem(meta.get("suite"), meta.get("config"))
        protocol = meta.get("protocol", UNNAMED_PROTOCOL)
        if not isinstance(protocol, str) or row_type(protocol) is None:
            problem = f"it plays protocol {protocol!r}, none of {', '.join(row_protocols())}"
        if problem or not plan:
            raise StoreError(f"cannot create {path}: {problem or 'it plans no episodes'}")
        _remove_stale_partials(path)
        tmp = path.with_name(f".{path.name}{CREATING}{os.getpid()}")
        _remove_db_files(tmp)
        try:
            try:
                with cls(tmp, create=True) as store:
                    for key, value in meta.items():
                        store.set_meta(key, value)
                    store.write_plan(plan)
                    store.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            except (sqlite3.OperationalError, StoreError) as err:  # a full disk, say (a bad plan's IntegrityError stays)
                raise _creation_failure(err, path) from None
            _fsync(tmp)
            try:
                os.link(tmp, path)
            except FileExistsError:
                raise StoreError(f"{path} exists: resume it with `cubebench run --resume {path}` "
                                 "or choose another --out") from None
            except OSError:  # a file system without hard links: rename, after checking again
                if path.exists():
                    raise StoreError(f"{path} exists: resume it or choose another --out") from None
                os.replace(tmp, path)
            _fsync(path.parent)
        finally:
            _remove_db_files(tmp)
        return cls(path)

    # --- lifecycle --------------------------------------------------------------
    def __enter__(self) -> "RunStore":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._close_db()
        if self._lock is not None:
            self._lock.release()
            self._lock = None

    def _close_db(self) -> None:
        self.db.close()
        if self._copy is not None:
            shutil.rmtree(self._copy, ignore_errors=True)
            self._copy = None

    def claim(self) -> None:
        """Hold the run for this process until :meth:`close`: the one driver that may play it.

        Raises :class:`StoreError` when another live process holds it (it names that driver's
        session); a lock left by a driver that died is free again (the kernel drops it).
        """
        if self._lock is not None:
            return
        lock = _RunLock.acquire(self.path.with_name(f".{self.path.name}{LOCK_SUFFIX}"))
        if lock is None:
            raise StoreError(f"{self.path} is being played by another cubebench process{self._open_session()}: "
                             "wait for it to end (or stop it), then resume")
        self._lock = lock

    def _open_session(self) -> str:
        """`` (session N, started ... : argv)`` of the latest session without an end, or ``""``."""
        row = self.db.execute("SELECT id, started_at, argv FROM sessions WHERE ended_at IS NULL "
                              "ORDER BY id DESC LIMIT 1").fetchone()
        if row is None:
            return ""
        try:
            argv = " ".join(str(a) for a in json.loads(row[2]))
        except (TypeError, ValueError, RecursionError):
            argv = "?"
        started = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(row[1]))
        return f" (session {row[0]}, started {started}: {safe_text(argv)[:160]})"

    def _pragmas(self) -> None:
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("PRAGMA synchronous=FULL")
        self.db.execute("PRAGMA foreign_keys=ON")

    def _damaged_message(self, what: str) -> str:
        return damaged_message(self.path, what)

    def newer(self, what: str) -> StoreError:
        """The error for a run that holds ``what`` this version does not know: :class:`StoreNewer` (a newer cubebench
        wrote it), or :class:`StoreDamaged` where the run names the cubebench that made it and that one is not newer
        than this (the file was edited or damaged since: no cubebench wrote what it holds)."""
        made = self._made_by()
        if made is not None and not _may_be_newer(made, __version__):
            return StoreDamaged(f"{self.path} holds {what}, which this cubebench ({__version__}) does not know, yet the "
                                f"run was made by cubebench {made}, which is not newer: the file was edited or damaged")
        by = f"made by cubebench {made}" if made else "made by a newer cubebench"
        return StoreNewer(f"{self.path} holds {what}, which this cubebench ({__version__}) does not know; the run was "
                          f"{by}: read or resume it with that version or a newer one (nothing in it was changed)")

    def _made_by(self) -> str | None:
        """The cubebench version the run says made it (its ``versions`` entry), shown safely; ``None`` if it names none."""
        try:
            versions = self.get_meta("versions", {})
        except StoreError:
            versions = {}
        made = versions.get("cubebench") if isinstance(versions, dict) else None
        return safe_text(str(made))[:40] if made else None

    def _check(self, check_records: bool) -> None:
        """Everything a reader relies on: SQLite's integrity check, tables, schema, meta, plan, episodes."""
        problems = [str(r[0]) for r in self.db.execute("PRAGMA integrity_check(3)")]
        if problems != ["ok"]:
            raise StoreDamaged(self._damaged_message("; ".join(problems)))
        tables = {r[0] for r in self.db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        if not {"meta", "plan", "episodes", "retired", "sessions"} <= tables:
            raise StoreError(f"{self.path} is not a CubeBench run database")
        version = self.get_meta("schema_version", _ABSENT)
        whole = isinstance(version, int) and not isinstance(version, bool)
        if whole and version > SCHEMA_VERSION:
            raise self.newer(f"store schema {version} (this version reads 1 to {SCHEMA_VERSION})")
        if not whole or version not in (1, SCHEMA_VERSION):
            raise StoreError(f"{self.path}: {_shown_schema(version)}, this cubebench reads 1 to {SCHEMA_VERSION}")
        self._columns = tuple(SCHEMA_1_NAMES.get(c, c) for c in STORED_COLUMNS) if version == 1 else STORED_COLUMNS
        protocol = self.get_meta("protocol", UNNAMED_PROTOCOL)
        if not isinstance(protocol, str):  # no version writes anything but a name: an edit, or damage
            raise StoreDamaged(self._damaged_message(f"its 'protocol' entry is {_json_shown(protocol)}, "
                                                     "not the name of a protocol"))
        if row_type(protocol) is None:
            raise self.newer(f"a run of protocol {safe_text(protocol)[:40]!r} (this version plays "
                             f"{', '.join(row_protocols())})")
        problem = _meta_problem(self.get_meta("suite"), self.get_meta("config"))
        if problem:
            raise StoreDamaged(self._damaged_message(problem))
        self._plan = self._read_plan()
        if not self._plan:
            raise StoreDamaged(f"{self.path} holds no planned episodes: its creation was interrupted "
                               "(by a cubebench older than atomic creation); delete it and start the run again")
        if check_records:
            damaged = self.damaged()  # a record of a newer version raises StoreNewer here
            if damaged:
                key, why = damaged[0]
                raise StoreDamaged(f"{self.path}: {len(damaged)} damaged episode record(s), e.g. {key}: {why}; "
                                   f"`cubebench run --resume {self.path}` plays them again")

    @property
    def protocol(self) -> str:
        """``episodes``, ``questions`` or ``multi``: what the run plays."""
        return str(self.get_meta("protocol", UNNAMED_PROTOCOL))

    def _read_plan(self) -> list[PlannedSpec]:
        plan: list[PlannedSpec] = []
        kind = row_type(self.protocol)
        assert kind is not None  # checked when the store opened
        for key, text in self.db.execute("SELECT key, spec FROM plan ORDER BY position"):
            try:
                data = json.loads(text)
                spec = kind.from_row(data, f"plan[{key!r}]")
            except NewerForm as err:
                raise self.newer(f"a plan row ({str(err)[:150]})") from None
            except (ValueError, TypeError, RecursionError) as err:  # RecordError is a ValueError
                raise StoreDamaged(self._damaged_message(f"planned episode {key!r}: {str(err)[:150]}")) from None
            if data["key"] != key:
                raise StoreDamaged(self._damaged_message(f"planned episode {key!r} names {data['key']!r}"))
            plan.append(spec)
        return plan

    # --- metadata and plan ----------------------------------------------------------
    def set_meta(self, key: str, value: Any) -> None:
        with self._transaction():
            self.db.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (key, json.dumps(value)))

    def get_meta(self, key: str, default: Any = None) -> Any:
        row = self.db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        if row is None:
            return default
        try:
            return json.loads(row[0])
        except (TypeError, ValueError, RecursionError):
            raise StoreDamaged(self._damaged_message(f"its {key!r} entry is not JSON")) from None

    def write_plan(self, plan: list[PlannedSpec]) -> None:
        """Store the planned episodes (once, when the run is created)."""
        if self.db.execute("SELECT COUNT(*) FROM plan").fetchone()[0]:
            raise StoreError(f"{self.path} already holds a plan; resume it instead of starting over")
        with self._transaction():
            self.db.executemany("INSERT INTO plan VALUES (?, ?, ?)",
                                [(ep.key, i, json.dumps(ep.to_dict())) for i, ep in enumerate(plan)])
        self._plan = None

    def extend_plan(self, specs: Sequence[PlannedSpec]) -> None:
        """Append newly planned items after the plan (a ladder's next round), in one transaction."""
        if not specs:
            return
        start = self.db.execute("SELECT COALESCE(MAX(position) + 1, 0) FROM plan").fetchone()[0]
        try:
            with self._transaction():
                self.db.executemany("INSERT INTO plan VALUES (?, ?, ?)",
                                    [(s.key, start + i, json.dumps(s.to_dict())) for i, s in enumerate(specs)])
        except sqlite3.IntegrityError as err:
            raise StoreError(f"{self.path}: a newly planned item is planned already ({err})") from None
        if self._plan is not None:  # appended as written: no re-reading the whole plan after every ladder wave
            self._plan.extend(specs)

    def plan(self) -> list[PlannedSpec]:
        if self._plan is None:
            self._plan = self._read_plan()
        return list(self._plan)

    def finished_keys(self) -> set[str]:
        return {r[0] for r in self.db.execute("SELECT key FROM episodes")}

    def pending(self) -> list[PlannedSpec]:
        """Planned episodes with no stored record, in plan order."""
        done = self.finished_keys()
        return [ep for ep in self.plan() if ep.key not in done]

    # --- sessions -------------------------------------------------------------------------
    def begin_session(self, argv: list[str]) -> int:
        with self._transaction():
            cur = self.db.execute("INSERT INTO sessions (started_at, argv) VALUES (?, ?)",
                                  (time.time(), json.dumps(argv)))
        if cur.lastrowid is None:  # sqlite3 sets it after every INSERT that adds a row
            raise StoreError("the session row was not stored")
        self.session = int(cur.lastrowid)
        return self.session

    def end_session(self, outcome: str) -> None:
        if self.session is None:
            return
        with self._transaction():
            self.db.execute("UPDATE sessions SET ended_at = ?, outcome = ? WHERE id = ?",
                            (time.time(), safe_text(outcome), self.session))

    def sessions(self) -> list[dict[str, Any]]:
        rows = self.db.execute("SELECT id, started_at, ended_at, argv, outcome FROM sessions ORDER BY id")
        return [{"id": r[0], "started_at": r[1], "ended_at": r[2], "argv": json.loads(r[3]), "outcome": r[4]}
                for r in rows]

    def wall_seconds(self) -> float | None:
        """The wall time of every session together, start to end; a session that never ended (killed) to its last
        stored record.  ``None`` when no session played anything (the run was only planned)."""
        rows = self.db.execute("SELECT s.started_at, s.ended_at, MAX(e.finished_at) FROM sessions s "
                               "LEFT JOIN episodes e ON e.session = s.id GROUP BY s.id").fetchall()
        spans = [(end if end is not None else last) - start for start, end, last in rows
                 if end is not None or last is not None]
        return sum(spans) if spans else None

    # --- episodes ---------------------------------------------------------------------------
    def add_episode(self, spec: PlannedSpec, record: EpisodeRecord) -> None:
        """Store one finished episode in one transaction; a second record for a key is refused.

        The record is read back before it is written: one that would not (a field of the wrong type
        from a custom agent) is refused with :class:`StoreError`, so the store never holds a record
        it would call damaged.
        """
        blob = encode_record(record)
        try:
            decode_record(blob)
        except RecordError as err:
            raise StoreError(f"episode {spec.key}: the agent's record cannot be stored: {err}") from None
        values = (spec.key, *spec.cell(), record.status, int(record.solved), record.n_steps, record.n_moves,
                  record.input_tokens, record.output_tokens, float(record.cost_usd), float(record.wall_s),
                  record.distance_start, record.distance_end, self.session or 0, time.time(), blob)
        try:
            with self._transaction():
                self.db.execute(f"INSERT INTO episodes VALUES ({', '.join('?' * len(values))})", values)
        except sqlite3.IntegrityError as err:
            raise StoreError(f"episode {spec.key} is already stored or not planned ({err})") from None

    def damaged(self) -> list[tuple[str, str]]:
        """``(key, what is wrong)`` of every stored episode whose summary row or record does not read back
        (the blob does not decompress, is not JSON, lacks a field or holds one of the wrong type) or
        whose row and record disagree; in storage order."""
        return [(key, why) for _, key, why in self._damaged_rows()]

    def _damaged_rows(self) -> list[tuple[int, str, str]]:
        found = []
        query = f"SELECT rowid, {', '.join(self._columns)}, record FROM episodes ORDER BY rowid"
        cells = {spec.key: spec.cell() for spec in self.plan()}
        text_factory = self.db.text_factory
        self.db.text_factory = _lenient_text  # a column of bytes that are not UTF-8 is a damaged row, not an error
        try:
            for rowid, *values, blob in self.db.execute(query):
                try:
                    why = _row_problem(values, blob, cells.get(values[0]))
                except NewerForm as err:  # before anything is retired: a newer run is never altered
                    unknown = self.newer(f"a record ({str(err)[:150]})")
                    if isinstance(unknown, StoreNewer):
                        raise unknown from None
                    why = f"{str(err)[:150]}, which no cubebench up to the one that made the run writes"
                if why is not None:
                    found.append((rowid, safe_text(str(values[0])), why))
        finally:
            self.db.text_factory = text_factory
        return found

    def retire_damaged(self) -> list[tuple[str, str]]:
        """Move damaged episodes (:meth:`damaged`) to ``retired`` (status ``damaged``), so a resume plays
        them again; returns their ``(key, what is wrong)``."""
        found = self._damaged_rows()
        if found:
            now = time.time()
            with self._transaction():
                for rowid, key, _ in found:
                    self.db.execute("INSERT INTO retired (key, status, retired_at, record) "
                                    "SELECT ?, ?, ?, COALESCE(record, X'') FROM episodes WHERE rowid = ?",
                                    (key, DAMAGED, now, rowid))
                    self.db.execute("DELETE FROM episodes WHERE rowid = ?", (rowid,))
        return [(key, why) for _, key, why in found]

    def retire_errors(self) -> int:
        """Move ``error`` episodes to ``retired`` so a resume plays them again; returns how many."""
        now = time.time()
        with self._transaction():
            self.db.execute("INSERT INTO retired (key, status, retired_at, record) "
                            "SELECT key, status, ?, record FROM episodes WHERE status = 'error'", (now,))
            cur = self.db.execute("DELETE FROM episodes WHERE status = 'error'")
        return cur.rowcount

    def rows(self) -> list[StoredRow]:
        """Summary rows of every stored episode, item or game, in plan order, as the run's protocol names them
        (its row type's ``stored_as``)."""
        cols = ", ".join(f"e.{c}" for c in self._columns)
        query = f"SELECT {cols} FROM episodes e JOIN plan p ON p.key = e.key ORDER BY p.position"
        kind = row_type(self.protocol)
        stored_as = kind.stored_as if kind is not None else StoredRow
        return [_stored_row(r, stored_as) for r in self.db.execute(query)]

    def record(self, key: str) -> EpisodeRecord:
        row = self.db.execute("SELECT record FROM episodes WHERE key = ?", (key,)).fetchone()
        if row is None:
            raise KeyError(key)
        return self._decode(key, row[0])

    def records(self) -> Iterator[tuple[str, EpisodeRecord]]:
        """(key, full record) of every stored episode, in plan order."""
        query = "SELECT e.key, e.record FROM episodes e JOIN plan p ON p.key = e.key ORDER BY p.position"
        for key, blob in self.db.execute(query):  # lazily: a large run's records need not fit in memory
            yield key, self._decode(key, blob)

    def _decode(self, key: str, blob: Any) -> EpisodeRecord:
        try:
            return decode_record(blob)
        except NewerForm as err:
            raise self.newer(f"a record ({str(err)[:150]})") from None
        except RecordError as err:
            raise StoreDamaged(f"{self.path}: episode {key}: damaged record ({err}); "
                               f"`cubebench run --resume {self.path}` plays it again") from None

    def retired_count(self) -> int:
        """Error episodes replayed by ``--retry-errors`` (their old records are kept in ``retired``)."""
        return int(self.db.execute("SELECT COUNT(*) FROM retired WHERE status = 'error'").fetchone()[0])

    def damaged_count(self) -> int:
        """Damaged episode rows a resume moved to ``retired`` (and played again)."""
        return int(self.db.execute("SELECT COUNT(*) FROM retired WHERE status = ?", (DAMAGED,)).fetchone()[0])

    # --- helpers -------------------------------------------------------------------------------
    def _transaction(self) -> "_Tx":
        return _Tx(self.db, self.path)


class _Tx:
    """``BEGIN IMMEDIATE`` ... ``COMMIT`` (or ``ROLLBACK`` on an exception).  An SQLite failure that is no
    constraint's (a full disk, read-only media, damage) becomes the store's error that says which
    (:func:`~.store_errors.sqlite_failure`); whatever it was, the transaction left nothing half-written."""

    def __init__(self, db: sqlite3.Connection, path: Path) -> None:
        self.db, self.path = db, path

    def __enter__(self) -> sqlite3.Connection:
        try:
            self.db.execute("BEGIN IMMEDIATE")
        except sqlite3.OperationalError as err:
            raise sqlite_failure(err, self.path, "write") from None
        return self.db

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        if exc_type is None:
            try:
                self.db.execute("COMMIT")
                return
            except sqlite3.Error as err:
                exc = err
        try:
            self.db.execute("ROLLBACK")
        except sqlite3.Error:
            pass  # SQLite rolled back already (a failed COMMIT may do so)
        if isinstance(exc, sqlite3.Error) and not isinstance(exc, sqlite3.IntegrityError):
            raise sqlite_failure(exc, self.path, "write") from None
        if exc_type is None:
            raise exc


class _RunLock:
    """An exclusive, non-blocking lock on a file beside the run, released by the kernel when the holder dies.

    The file is removed on release; :meth:`acquire` checks that the file it locked is still the one at
    the path (a releaser may have removed it meanwhile), so two processes never both hold the lock.
    """

    def __init__(self, path: Path, fd: int) -> None:
        self.path, self.fd = path, fd

    @classmethod
    def acquire(cls, path: Path) -> "_RunLock | None":
        """The lock, or ``None`` when another live process holds it."""
        for _ in range(100):
            try:
                fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
            except OSError as err:  # a read-only folder, say: the run could not be written either
                raise StoreError(f"cannot play the run: cannot create its lock file {path} ({err.strerror or err}); "
                                 "to resume a run on read-only media, copy it to a folder you can write") from None
            if not _try_lock(fd):
                os.close(fd)
                return None
            try:
                same = os.path.samestat(os.fstat(fd), os.stat(path))
            except FileNotFoundError:
                same = False
            if same:
                return cls(path, fd)
            os.close(fd)  # removed (or replaced) by its last holder between our open and our lock: again
        raise StoreError(f"cannot lock {path}: it keeps being removed")

    def release(self) -> None:
        try:
            os.unlink(self.path)  # while still locked: a waiter that opened it sees it gone and opens anew
        except OSError:
            pass
        os.close(self.fd)


def _try_lock(fd: int) -> bool:
    """Lock ``fd`` exclusively without waiting (``flock``, or ``msvcrt.locking`` on Windows)."""
    if sys.platform == "win32":
        import msvcrt
        try:
            msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
        except OSError:
            return False
        return True
    import fcntl
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True


def _creation_failure(err: BaseException, path: Path) -> StoreError:
    """The error of a run that could not be created at ``path`` (nothing is left there)."""
    failure = sqlite_failure(err, path, "create") if isinstance(err, sqlite3.OperationalError) else err
    if isinstance(failure, StoreFull):
        return StoreFull(f"disk full: cannot create {path}: nothing was written; free some space and start the "
                         "run again")
    if not is_writable(path):
        return StoreError(f"cannot create {path}: its folder is read-only here; give --out a folder you can write")
    return StoreError(f"cannot create {path}: {str(err)[:200]}")


def _fsync(path: Path) -> None:
    """Flush a file or a directory to disk (best effort where the platform cannot open directories)."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _remove_db_files(db: Path) -> None:
    """Remove a database file and its SQLite companions (``-wal``, ``-shm``, ``-journal``), if present."""
    for suffix in ("", "-wal", "-shm", "-journal"):
        try:
            os.unlink(f"{db}{suffix}")
        except FileNotFoundError:
            pass
        except OSError:  # read-only media: whoever can write there removes it
            return


def _remove_stale_partials(path: Path) -> None:
    """Remove what creators of any run in ``path``'s folder left when they were killed mid-creation (their pid
    is gone): a kill -9 cannot clean up after itself, so whoever next creates or opens a run there does."""
    folder = path.parent if str(path.parent) else Path(".")
    try:
        names = os.listdir(folder)
    except OSError:
        return
    for name in names:
        base, _, pid_text = name.rpartition(CREATING)
        if not (base.startswith(".") and len(base) > 1 and pid_text.isdigit()):
            continue  # not a partial run (a companion ``-wal``/``-shm`` file goes with its database)
        try:
            os.kill(int(pid_text), 0)
        except ProcessLookupError:
            _remove_db_files(folder / name)
        except (PermissionError, OverflowError, OSError):
            continue  # alive (another user's), or not a pid: leave it


def open_run(path: str | Path, *, check_records: bool = True, readonly: bool = False) -> RunStore:
    """Open an existing run database for reading or resuming (checked: see :class:`RunStore`); what killed
    creators left beside it is removed first.  ``readonly=True`` for a reader: it reads the run on read-only
    media too, and writes nothing into it."""
    if not readonly:
        _remove_stale_partials(Path(path))
    return RunStore(path, create=False, check_records=check_records, readonly=readonly)


__all__ = ["RunStore", "StoreError", "StoreDamaged", "StoreFull", "StoreNewer", "StoredRow", "open_run",
           "encode_record", "decode_record", "record_json"]
