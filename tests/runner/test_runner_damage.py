"""A damaged run file: every command says so in one line (no traceback, exit 2), and a damaged episode
record is played again by ``--resume`` (never counted as finished).

One small run is played once; each case damages a copy of it (the file itself, a page, the plan, the
configuration, a record's blob, JSON, fields or summary row) and runs ``report``, ``view``, ``export``
(JSONL and CSV) and ``run --resume`` on it through ``cubebench.runner.cli.main``.
"""

from __future__ import annotations

import json
import random
import shutil
import sqlite3
import zlib
from pathlib import Path
from typing import Callable

import pytest

from cubebench.runner.cli import main
from cubebench.runner.store import StoreError, open_run
from helpers import edit_record, run_sql

SUITE = {"name": "damage", "tiers": ["symbolic", "face"], "depths": [1], "instances": 2,
         "rewards": ["none"], "tool_settings": ["basic", "standard", "ideal"]}
PLANNED = 12
KEY = "face/d1/i01/none/ideal"
"""The episode whose record the record-level cases damage (a partial tier's ideal episode: the failure
attribution reads its record)."""


@pytest.fixture(scope="module")
def reference(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("damage")
    (root / "suite.json").write_text(json.dumps(SUITE))
    db = root / "run.sqlite"
    assert main(["run", "--distance-budget", "0", "--suite", str(root / "suite.json"), "--agent", "random",
                 "--out", str(db), "--no-progress", "--quiet"]) == 0
    assert not list(root.glob("run.sqlite-*"))  # closed cleanly: everything is in the one file
    return db


def _copy(reference: Path, tmp_path: Path) -> Path:
    db = tmp_path / "run.sqlite"
    shutil.copyfile(reference, db)
    return db


def _set_record(db: Path, change: Callable[[dict], None]) -> None:
    edit_record(db, KEY, change)


def _records(db: Path) -> dict[str, tuple]:
    with open_run(db) as store:
        return {key: (rec.status, [s.action for s in rec.steps], rec.start_facelets, rec.end_facelets)
                for key, rec in store.records()}


# --- damage to the file: nothing can be trusted, every command stops -------------------------------------
def _truncate(db: Path) -> None:
    size = db.stat().st_size
    with open(db, "r+b") as f:
        f.truncate(size // 2)


def _overwrite_middle(db: Path) -> None:
    """4 KiB of random bytes over a whole page in the middle of the file."""
    page = 4096
    pages = db.stat().st_size // page
    with open(db, "r+b") as f:
        f.seek((pages // 2) * page)
        f.write(random.Random(13).randbytes(page))


def _not_sqlite(db: Path) -> None:
    db.write_text("key,status\nsymbolic/d1/i00/none/basic,solved\n")


def _header(db: Path) -> None:
    with open(db, "r+b") as f:
        f.write(b"\0" * 16)


def _btree_header(db: Path) -> None:
    """The first page's b-tree header (sqlite_master's) overwritten: the schema cannot be read."""
    with open(db, "r+b") as f:
        f.seek(100)
        f.write(b"\xff" * 12)


def _plan_garbage(db: Path) -> None:
    run_sql(db, ("UPDATE plan SET spec = '{not json' WHERE key = ?", (KEY,)))


def _plan_wrong_types(db: Path) -> None:
    run_sql(db, ("UPDATE plan SET spec = json_set(spec, '$.depth', 'one') WHERE key = ?", (KEY,)))


def _config_garbage(db: Path) -> None:
    run_sql(db, ("UPDATE meta SET value = 'nope' WHERE key = 'config'",))


def _no_plan(db: Path) -> None:
    """What a run killed between creation and plan writing left before creation was atomic."""
    run_sql(db, ("DELETE FROM episodes",), ("DELETE FROM plan",))


FILE_DAMAGE = {
    "truncated": (_truncate, "is damaged"),
    "page-overwritten": (_overwrite_middle, "damaged"),
    "not-sqlite": (_not_sqlite, "not an SQLite file"),
    "header-zeroed": (_header, "not an SQLite file"),
    "schema-page": (_btree_header, "is damaged"),
    "plan-not-json": (_plan_garbage, "planned episode"),
    "plan-wrong-types": (_plan_wrong_types, "planned episode"),
    "config-not-json": (_config_garbage, "'config' entry is not JSON"),
    "no-plan": (_no_plan, "holds no planned episodes"),
}


def _one_line_error(capsys, rc: int, expected: str) -> None:
    err = capsys.readouterr().err
    lines = err.strip().splitlines()
    assert rc == 2 and len(lines) == 1 and lines[0].startswith("cubebench: error: "), err
    assert expected in lines[0] and "Traceback" not in err


def _commands(db: Path, tmp_path: Path) -> list[list[str]]:
    return [["report", str(db)], ["view", str(db), "--out", str(tmp_path / "v.html")],
            ["export", str(db), "--format", "jsonl", "--out", str(tmp_path / "e.jsonl")],
            ["export", str(db), "--format", "csv", "--out", str(tmp_path / "e.csv")]]


@pytest.mark.parametrize("case", list(FILE_DAMAGE))
def test_a_damaged_file_gives_one_clear_line_from_every_command(reference: Path, tmp_path: Path, capsys,
                                                                 case: str) -> None:
    db = _copy(reference, tmp_path)
    damage, expected = FILE_DAMAGE[case]
    damage(db)
    capsys.readouterr()
    for argv in _commands(db, tmp_path):
        rc = main(argv)
        if case == "page-overwritten" and rc == 0:  # the page held no structure, only a record's bytes:
            pytest.fail(f"{argv[0]} did not notice a page of random bytes")
        _one_line_error(capsys, rc, expected)
    rc = main(["run", "--resume", str(db), "--no-progress", "--quiet"])
    if case == "page-overwritten" and rc == 0:  # it hit a record's bytes only: that record was replayed
        capsys.readouterr()
        with open_run(db) as store:
            assert store.damaged_count() >= 1 and len(store.rows()) == PLANNED
        return
    _one_line_error(capsys, rc, expected)
    with pytest.raises(StoreError, match="damaged|not an SQLite|no planned"):
        open_run(db)


# --- damage to one episode: reported by readers, replayed by resume -------------------------------------
RECORD_DAMAGE = {
    "blob-not-zlib": lambda db: run_sql(db, ("UPDATE episodes SET record = X'00112233' WHERE key = ?", (KEY,))),
    "blob-not-json": lambda db: run_sql(db, ("UPDATE episodes SET record = ? WHERE key = ?",
                                          (zlib.compress(b'{"agent": "random", "steps": ['), KEY))),
    "record-is-text": lambda db: run_sql(db, ("UPDATE episodes SET record = 'hello' WHERE key = ?", (KEY,))),
    "field-wrong-type": lambda db: _set_record(db, lambda d: d.update(n_steps="five")),
    "step-wrong-type": lambda db: _set_record(db, lambda d: d["steps"][0].update(tool_calls={"name": 1})),
    "field-missing": lambda db: _set_record(db, lambda d: d.pop("start_facelets")),
    "record-not-object": lambda db: run_sql(db, ("UPDATE episodes SET record = ? WHERE key = ?",
                                              (zlib.compress(b"[1, 2, 3]"), KEY))),
    "column-wrong-type": lambda db: run_sql(db, ("UPDATE episodes SET solved = 'yes' WHERE key = ?", (KEY,))),
    "row-disagrees": lambda db: run_sql(db, ("UPDATE episodes SET n_moves = n_moves + 7 WHERE key = ?", (KEY,))),
}


@pytest.mark.parametrize("case", list(RECORD_DAMAGE))
def test_a_damaged_record_is_reported_and_replayed_by_resume(reference: Path, tmp_path: Path, capsys,
                                                              case: str) -> None:
    db = _copy(reference, tmp_path)
    RECORD_DAMAGE[case](db)
    capsys.readouterr()
    for argv in _commands(db, tmp_path):
        _one_line_error(capsys, main(argv), f"1 damaged episode record(s), e.g. {KEY}")
    with pytest.raises(StoreError, match="--resume"):
        open_run(db)

    assert main(["run", "--resume", str(db), "--no-progress", "--quiet"]) == 0
    err = capsys.readouterr().err
    assert f"1 damaged episode record(s) will be played again ({KEY};" in err
    assert "cubebench: complete: 1 episode(s) played" in err
    assert _records(db) == _records(reference)  # the replayed episode is the one never damaged
    with open_run(db) as store:
        assert store.damaged_count() == 1 and store.retired_count() == 0 and not store.damaged()
    for argv in _commands(db, tmp_path):
        assert main(argv) == 0
    capsys.readouterr()
    assert main(["report", str(db)]) == 0
    assert "damaged records: 1 damaged record(s) replayed; kept in the store" in capsys.readouterr().out


def test_a_damaged_record_is_not_finished_for_the_python_api(reference: Path, tmp_path: Path) -> None:
    db = _copy(reference, tmp_path)
    _set_record(db, lambda d: d.update(steps="none"))
    with open_run(db, check_records=False) as store:
        assert [key for key, _ in store.damaged()] == [KEY]
        with pytest.raises(StoreError, match=f"episode {KEY}: damaged record"):
            store.record(KEY)
        assert store.retire_damaged() == [(KEY, "record.steps: expected a list, got str")]
        assert not store.damaged() and [ep.key for ep in store.pending()] == [KEY]


def test_damage_found_only_while_reading_is_one_line_too(reference: Path, tmp_path: Path, capsys, monkeypatch) -> None:
    """What the checks at opening cannot see (a page that goes bad while the command reads) is one line too."""
    from cubebench.runner import cli

    def failing(store):
        raise sqlite3.DatabaseError("database disk image is malformed")

    monkeypatch.setattr(cli, "build_report", failing)
    db = _copy(reference, tmp_path)
    capsys.readouterr()
    _one_line_error(capsys, main(["report", str(db)]), f"the run database {db} is damaged or unreadable")


def test_a_summary_column_that_is_not_utf8_is_a_damaged_row(reference: Path, tmp_path: Path, capsys) -> None:
    db = _copy(reference, tmp_path)
    run_sql(db, ("UPDATE episodes SET status = CAST(X'66ff696c6564' AS TEXT) WHERE key = ?", (KEY,)))
    capsys.readouterr()
    _one_line_error(capsys, main(["report", str(db)]), f"1 damaged episode record(s), e.g. {KEY}")
    assert main(["run", "--resume", str(db), "--no-progress", "--quiet"]) == 0
    assert _records(db) == _records(reference)
