"""The result store: one SQLite database per run (stdlib ``sqlite3``, WAL mode).

It holds the suite, the run's configuration, the library versions, the
planned episodes, and each finished episode's full record, written in one
transaction as the episode finishes.  The episode key is the primary key, so
a finished episode can never be stored twice; a run killed at any moment
(Ctrl-C, ``kill -9``, power loss) leaves every committed episode intact and
nothing half-written (``synchronous=FULL``: a commit is on disk when it
returns).  Resuming plays exactly the planned keys that have no row yet.

``error`` episodes (the agent or its model kept failing, e.g. an API outage)
are finished records and are kept by a plain resume; ``retire_errors()``
(``cubebench run --resume RUN --retry-errors``) moves them to the
``retired`` table, so they are played again and the old records survive.
"""

from __future__ import annotations

import json
import sqlite3
import time
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator, Sequence

import numpy as np

from cubebench.agents.records import EpisodeRecord

from .plan import EpisodeSpec

SCHEMA_VERSION = 1

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS plan (key TEXT PRIMARY KEY, position INTEGER NOT NULL, spec TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS episodes (
    key TEXT PRIMARY KEY REFERENCES plan(key),
    tier TEXT NOT NULL, depth INTEGER NOT NULL, instance INTEGER NOT NULL, reward TEXT NOT NULL,
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

SUMMARY_COLUMNS = ("key", "tier", "depth", "instance", "reward", "setting", "horizon", "status", "solved",
                   "n_steps", "n_moves", "input_tokens", "output_tokens", "cost_usd", "wall_s",
                   "distance_start", "distance_end")


class StoreError(RuntimeError):
    """The file is not a CubeBench run, or a write would break the store's guarantees."""


@dataclass(frozen=True)
class EpisodeRow:
    """An episode's summary columns (the full record is loaded on demand)."""

    key: str
    tier: str
    depth: int
    instance: int
    reward: str
    setting: str
    horizon: str
    status: str
    solved: bool
    n_steps: int
    n_moves: int
    input_tokens: int
    output_tokens: int
    cost_usd: float
    wall_s: float
    distance_start: int | None
    distance_end: int | None


def _episode_row(values: Sequence[Any]) -> EpisodeRow:
    """The row of one episode from its ``SUMMARY_COLUMNS`` values (SQLite keeps ``solved`` as 0 or 1)."""
    row = dict(zip(SUMMARY_COLUMNS, values))
    row["solved"] = bool(row["solved"])
    return EpisodeRow(**row)


def _jsonable(value: Any) -> Any:
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    raise TypeError(f"cannot store {type(value).__name__} in a record")


def encode_record(record: EpisodeRecord) -> bytes:
    """A record as zlib-compressed JSON."""
    return zlib.compress(json.dumps(record.to_dict(), default=_jsonable).encode(), 6)


def decode_record(blob: bytes) -> EpisodeRecord:
    return EpisodeRecord.from_dict(json.loads(zlib.decompress(blob)))


class RunStore:
    """One run's database; use as a context manager or call :meth:`close`."""

    def __init__(self, path: str | Path, *, create: bool = False) -> None:
        self.path = Path(path)
        if not create and not self.path.is_file():
            raise StoreError(f"no run database at {self.path}")
        self.db = sqlite3.connect(str(self.path), timeout=30.0, isolation_level=None)
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("PRAGMA synchronous=FULL")
        self.db.execute("PRAGMA foreign_keys=ON")
        if create:
            self.db.executescript(_SCHEMA)
        self._check_schema(create)
        self.session: int | None = None

    # --- lifecycle --------------------------------------------------------------
    def __enter__(self) -> "RunStore":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self.db.close()

    def _check_schema(self, create: bool) -> None:
        try:
            tables = {r[0] for r in self.db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        except sqlite3.DatabaseError as err:
            raise StoreError(f"{self.path} is not an SQLite database: {err}") from None
        if not {"meta", "plan", "episodes"} <= tables:
            raise StoreError(f"{self.path} is not a CubeBench run database")
        version = self.get_meta("schema_version")
        if version is None and create:
            self.set_meta("schema_version", SCHEMA_VERSION)
        elif version != SCHEMA_VERSION:
            raise StoreError(f"{self.path}: store schema {version}, this cubebench reads {SCHEMA_VERSION}")

    # --- metadata and plan ----------------------------------------------------------
    def set_meta(self, key: str, value: Any) -> None:
        with self._transaction():
            self.db.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (key, json.dumps(value)))

    def get_meta(self, key: str, default: Any = None) -> Any:
        row = self.db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return json.loads(row[0]) if row else default

    def write_plan(self, plan: list[EpisodeSpec]) -> None:
        """Store the planned episodes (once, when the run is created)."""
        if self.db.execute("SELECT COUNT(*) FROM plan").fetchone()[0]:
            raise StoreError(f"{self.path} already holds a plan; resume it instead of starting over")
        with self._transaction():
            self.db.executemany("INSERT INTO plan VALUES (?, ?, ?)",
                                [(ep.key, i, json.dumps(ep.to_dict())) for i, ep in enumerate(plan)])

    def plan(self) -> list[EpisodeSpec]:
        rows = self.db.execute("SELECT spec FROM plan ORDER BY position")
        return [EpisodeSpec(**json.loads(r[0])) for r in rows]

    def finished_keys(self) -> set[str]:
        return {r[0] for r in self.db.execute("SELECT key FROM episodes")}

    def pending(self) -> list[EpisodeSpec]:
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
                            (time.time(), outcome, self.session))

    def sessions(self) -> list[dict[str, Any]]:
        rows = self.db.execute("SELECT id, started_at, ended_at, argv, outcome FROM sessions ORDER BY id")
        return [{"id": r[0], "started_at": r[1], "ended_at": r[2], "argv": json.loads(r[3]), "outcome": r[4]}
                for r in rows]

    # --- episodes ---------------------------------------------------------------------------
    def add_episode(self, spec: EpisodeSpec, record: EpisodeRecord) -> None:
        """Store one finished episode in one transaction; a second record for a key is refused."""
        values = (spec.key, spec.tier, spec.depth, spec.instance, spec.reward, spec.setting, spec.horizon,
                  record.status, int(record.solved), record.n_steps, record.n_moves, record.input_tokens,
                  record.output_tokens, float(record.cost_usd), float(record.wall_s), record.distance_start,
                  record.distance_end, self.session or 0, time.time(), encode_record(record))
        try:
            with self._transaction():
                self.db.execute(f"INSERT INTO episodes VALUES ({', '.join('?' * len(values))})", values)
        except sqlite3.IntegrityError as err:
            raise StoreError(f"episode {spec.key} is already stored or not planned ({err})") from None

    def retire_errors(self) -> int:
        """Move ``error`` episodes to ``retired`` so a resume plays them again; returns how many."""
        now = time.time()
        with self._transaction():
            self.db.execute("INSERT INTO retired (key, status, retired_at, record) "
                            "SELECT key, status, ?, record FROM episodes WHERE status = 'error'", (now,))
            cur = self.db.execute("DELETE FROM episodes WHERE status = 'error'")
        return cur.rowcount

    def rows(self) -> list[EpisodeRow]:
        """Summary rows of every stored episode, in plan order."""
        cols = ", ".join(f"e.{c}" for c in SUMMARY_COLUMNS)
        query = f"SELECT {cols} FROM episodes e JOIN plan p ON p.key = e.key ORDER BY p.position"
        return [_episode_row(r) for r in self.db.execute(query)]

    def record(self, key: str) -> EpisodeRecord:
        row = self.db.execute("SELECT record FROM episodes WHERE key = ?", (key,)).fetchone()
        if row is None:
            raise KeyError(key)
        return decode_record(row[0])

    def records(self) -> Iterator[tuple[str, EpisodeRecord]]:
        """(key, full record) of every stored episode, in plan order."""
        query = "SELECT e.key, e.record FROM episodes e JOIN plan p ON p.key = e.key ORDER BY p.position"
        for key, blob in self.db.execute(query):  # lazily: a large run's records need not fit in memory
            yield key, decode_record(blob)

    def retired_count(self) -> int:
        return int(self.db.execute("SELECT COUNT(*) FROM retired").fetchone()[0])

    # --- helpers -------------------------------------------------------------------------------
    def _transaction(self) -> "_Tx":
        return _Tx(self.db)


class _Tx:
    """``BEGIN IMMEDIATE`` ... ``COMMIT`` (or ``ROLLBACK`` on an exception)."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self.db = db

    def __enter__(self) -> sqlite3.Connection:
        self.db.execute("BEGIN IMMEDIATE")
        return self.db

    def __exit__(self, exc_type: Any, *rest: Any) -> None:
        self.db.execute("ROLLBACK" if exc_type else "COMMIT")


def open_run(path: str | Path) -> RunStore:
    """Open an existing run database for reading or resuming."""
    return RunStore(path, create=False)


__all__ = ["RunStore", "StoreError", "EpisodeRow", "open_run", "encode_record", "decode_record"]
