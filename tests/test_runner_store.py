"""The SQLite result store: one row per finished episode, no duplicates, resume and retry semantics."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from cubebench.agents.records import EpisodeRecord
from cubebench.runner.plan import plan_episodes
from cubebench.runner.store import RunStore, StoreError, decode_record, encode_record, open_run
from cubebench.runner.suites import suite_from_dict

SUITE = suite_from_dict({"name": "t", "tiers": ["symbolic"], "depths": [1, 2], "instances": 2,
                         "rewards": ["none"], "tool_settings": ["basic"]})


def _record(status: str) -> EpisodeRecord:
    return EpisodeRecord(agent="x", config={"k": 1}, start_facelets="U" * 54, status=status,
                         solved=status == "solved", n_steps=2, n_moves=3, input_tokens=5, output_tokens=7)


def _store(tmp_path: Path) -> RunStore:
    store = RunStore(tmp_path / "run.sqlite", create=True)
    store.set_meta("suite", SUITE.to_dict())
    store.write_plan(plan_episodes(SUITE, "scramble"))
    return store


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
    sqlite3.connect(other).execute("CREATE TABLE x (a)").connection.commit()
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
