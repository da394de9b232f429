"""The SQLite result store: one row per finished episode, no duplicates, resume and retry semantics."""

from __future__ import annotations

import os
import sqlite3
from contextlib import closing
from pathlib import Path

import pytest

from cubebench.agents.records import EpisodeRecord
from cubebench.runner.protocols.episodes.plan import plan_episodes
from cubebench.runner.store import RunStore, StoreError, decode_record, encode_record, open_run
from cubebench.runner.protocols.episodes.suite import suite_from_dict

SUITE = suite_from_dict({"name": "t", "tiers": ["symbolic"], "depths": [1, 2], "instances": 2,
                         "rewards": ["none"], "tool_settings": ["basic"]})


def _record(status: str) -> EpisodeRecord:
    return EpisodeRecord(agent="x", config={"k": 1}, start_facelets="U" * 54, status=status,
                         solved=status == "solved", n_steps=2, n_moves=3, input_tokens=5, output_tokens=7)


META = {"suite": SUITE.to_dict(), "config": {"agent": {"spec": "random"}}}


def _store(tmp_path: Path) -> RunStore:
    return RunStore.create(tmp_path / "run.sqlite", META, plan_episodes(SUITE, "scramble"))


def test_records_round_trip_compressed() -> None:
    rec = _record("failed")
    assert decode_record(encode_record(rec)) == rec


def test_the_store_uses_wal_and_keeps_plan_order(tmp_path: Path) -> None:
    with _store(tmp_path) as store:
        assert store.db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        plan = store.plan()
        store.add_episode(plan[2], _record("solved"))
        store.add_episode(plan[0], _record("failed"))
        assert [r.key for r in store.rows()] == [plan[0].key, plan[2].key]
        assert [ep.key for ep in store.pending()] == [plan[1].key, plan[3].key]
        assert store.record(plan[2].key).solved


def test_a_finished_episode_cannot_be_stored_twice(tmp_path: Path) -> None:
    with _store(tmp_path) as store:
        ep = store.plan()[0]
        store.add_episode(ep, _record("solved"))
        with pytest.raises(StoreError, match="already stored"):
            store.add_episode(ep, _record("failed"))
        assert len(store.rows()) == 1 and store.rows()[0].status == "solved"


def test_a_plan_is_written_once(tmp_path: Path) -> None:
    with _store(tmp_path) as store, pytest.raises(StoreError, match="resume"):
        store.write_plan(store.plan())


def test_retire_errors_keeps_the_old_records_and_reopens_the_keys(tmp_path: Path) -> None:
    with _store(tmp_path) as store:
        plan = store.plan()
        store.add_episode(plan[0], _record("error"))
        store.add_episode(plan[1], _record("solved"))
        assert store.retire_errors() == 1
        assert store.retired_count() == 1
        assert [ep.key for ep in store.pending()] == [plan[0].key, plan[2].key, plan[3].key]
        store.add_episode(plan[0], _record("failed"))
        assert store.record(plan[0].key).status == "failed"


def test_reopening_checks_what_the_file_is(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="no run database"):
        open_run(tmp_path / "missing.sqlite")
    other = tmp_path / "other.sqlite"
    with closing(sqlite3.connect(other)) as con:
        con.execute("CREATE TABLE x (a)")
        con.commit()
    with pytest.raises(StoreError, match="not a CubeBench run"):
        open_run(other)
    _store(tmp_path).close()
    with open_run(tmp_path / "run.sqlite") as store:
        assert store.get_meta("suite")["name"] == "t" and len(store.plan()) == 4


def test_sessions_record_each_invocation(tmp_path: Path) -> None:
    with _store(tmp_path) as store:
        store.begin_session(["cubebench", "run"])
        store.end_session("complete")
        store.begin_session(["cubebench", "run", "--resume"])
        sessions = store.sessions()
    assert [s["outcome"] for s in sessions] == ["complete", None]


def test_creation_is_all_or_nothing(tmp_path: Path) -> None:
    path = tmp_path / "run.sqlite"
    plan = plan_episodes(SUITE, "scramble")
    with pytest.raises(StoreError, match="configuration is missing"):
        RunStore.create(path, {"suite": SUITE.to_dict()}, plan)
    with pytest.raises(StoreError, match="plans no episodes"):
        RunStore.create(path, META, [])
    with pytest.raises(sqlite3.IntegrityError):  # a plan that cannot be written: no run, no leftovers
        RunStore.create(path, META, plan + plan[:1])
    assert not list(tmp_path.iterdir())
    with pytest.raises(StoreError, match="already holds a plan"), RunStore.create(path, META, plan) as store:
        store.write_plan(plan)
    with pytest.raises(StoreError, match="exists: resume it"):
        RunStore.create(path, META, plan)
    other = tmp_path / "other.sqlite"
    for name in ("other", "third"):  # what creators killed mid-way left (no such pid), of this run and another
        stale = tmp_path / f".{name}.sqlite.creating-999999999"
        stale.write_bytes(b"partial")
        Path(f"{stale}-wal").write_bytes(b"partial")
    alive = tmp_path / f".fourth.sqlite.creating-{os.getpid()}"  # a creator still at work: left alone
    alive.write_bytes(b"partial")
    RunStore.create(other, META, plan).close()
    assert alive.exists()
    alive.unlink()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["other.sqlite", "run.sqlite"]
    with open_run(other) as store:
        assert [ep.key for ep in store.pending()] == [ep.key for ep in plan]
