"""Run files where users keep them: on read-only media, on a full disk, written by a newer cubebench.

Only real damage is called damage (tests/runner/test_runner_damage.py has that): a complete run on a
read-only mount is read (``report``, ``export``, ``view``, ``compare``); a full disk says "disk full" and
that the run resumes once there is room, and it does; a run file holding a protocol, field or status this
version does not know says so in one line, names the version that made it, and is never altered (a resume
retires nothing).  The mounts are made in a private mount namespace (``unshare -m``, as root); where that
is not possible the test says why it skips.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from cubebench import __version__
from cubebench.runner.cli import main
from cubebench.runner.store import StoreFull, StoreNewer, open_run
from helpers import edit_record, run_sql

SUITE = {"name": "files", "tiers": ["symbolic"], "depths": [1], "instances": 2, "rewards": ["none"],
         "tool_settings": ["basic", "standard", "ideal"]}
PLANNED = 6
KEY = "symbolic/d1/i01/none/ideal"


@pytest.fixture(scope="module")
def reference(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("files")
    (root / "suite.json").write_text(json.dumps(SUITE))
    db = root / "run.sqlite"
    assert main(["run", "--suite", str(root / "suite.json"), "--agent", "random", "--out", str(db),
                 "--no-progress", "--quiet"]) == 0
    return db


@pytest.fixture(scope="module")
def partial(tmp_path_factory) -> Path:
    """A run of 12 symbolic episodes, 1 played: what a resume continues."""
    root = tmp_path_factory.mktemp("partial")
    db = root / "run.sqlite"
    assert main(["run", "--suite", "smoke", "--tiers", "symbolic", "--depths", "1,3", "--agent", "solver",
                 "--out", str(db), "--limit", "1", "--no-progress", "--quiet"]) == 0
    return db


def _copy(db: Path, folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(db, folder / db.name)
    return folder / db.name


def _digest(db: Path) -> str:
    return hashlib.sha256(db.read_bytes()).hexdigest()


# --- read-only media and full disks, on mounts of their own -------------------------------------------------
def _private_mounts(script: str, cwd: Path) -> subprocess.CompletedProcess:
    """Run the shell ``script`` in a mount namespace of its own (its mounts vanish with it)."""
    if sys.platform != "linux" or shutil.which("unshare") is None or os.geteuid() != 0:
        pytest.skip("needs root on Linux with unshare(1) to mount a read-only or a small file system privately")
    probe = subprocess.run(["unshare", "-m", "--propagation", "private", "sh", "-c",
                            f"mkdir -p {cwd}/probe && mount -t tmpfs -o size=64k tmpfs {cwd}/probe"],
                           capture_output=True, text=True)
    if probe.returncode != 0:
        pytest.skip(f"cannot mount a private tmpfs here (a container without CAP_SYS_ADMIN?): {probe.stderr.strip()}")
    return subprocess.run(["unshare", "-m", "--propagation", "private", "sh", "-ec", script], cwd=cwd,
                          capture_output=True, text=True, timeout=300)


DRIVER = textwrap.dedent("""
    import contextlib, io, json, os, sys
    from cubebench.runner.cli import main
    results = []
    for argv in json.loads(sys.argv[1]):
        if argv[0] == "remove":  # make room
            os.remove(argv[1])
            continue
        if argv[0] == "list":
            results.append({"argv": argv, "files": sorted(os.listdir(argv[1]))})
            continue
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            rc = main(argv)
        results.append({"argv": argv, "rc": rc, "out": out.getvalue(), "err": err.getvalue()})
    print(json.dumps(results))
""")
"""Runs ``cubebench`` command lines (a JSON list of argvs; ``["remove", FILE]`` removes a
file, ``["list", FOLDER]`` lists one) in one process;
prints each command's rc, stdout and stderr."""


def _commands(script: str, commands: list[list[str]], cwd: Path) -> list[dict]:
    (cwd / "driver.py").write_text(DRIVER)
    done = _private_mounts(f"{script}\n{sys.executable} driver.py '{json.dumps(commands)}'", cwd)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_a_run_on_read_only_media_is_read(reference: Path, tmp_path: Path) -> None:
    _copy(reference, tmp_path / "plain")
    # a run whose driver was killed: its last commit is still in its -wal, with no -shm beside it
    source, killed = _copy(reference, tmp_path / "source"), tmp_path / "killed" / "run.sqlite"
    con = sqlite3.connect(source, isolation_level=None)
    con.execute("PRAGMA wal_autocheckpoint=0")
    con.execute("DELETE FROM episodes WHERE key = ?", (KEY,))
    killed.parent.mkdir()
    shutil.copyfile(source, killed)
    shutil.copyfile(f"{source}-wal", f"{killed}-wal")
    con.close()
    before = {name: sorted(p.name for p in (tmp_path / name).iterdir()) for name in ("plain", "killed")}
    commands = []
    for name in ("plain", "killed"):
        run = f"{name}/run.sqlite"
        commands += [["report", run], ["export", run, "--format", "csv"], ["export", run, "--format", "jsonl"],
                     ["view", run, "--out", f"out/{name}.html"], ["compare", run], ["view", run],
                     ["run", "--resume", run, "--no-progress"],
                     ["run", "--suite", "smoke", "--agent", "solver", "--out", f"{name}/new.sqlite"]]
    results = _commands("mkdir -p out\nfor d in plain killed; do mount --bind $d $d && mount -o remount,bind,ro $d; done",
                        commands, tmp_path)
    for name, report, csv, jsonl, view, compare, view_beside, resume, new in (
            [name, *results[i * 8:(i + 1) * 8]] for i, name in enumerate(("plain", "killed"))):
        finished = PLANNED - (name == "killed")
        assert report["rc"] == 0 and f"episodes: {finished} of {PLANNED} finished" in report["out"], report
        assert csv["rc"] == 0 and len(csv["out"].strip().splitlines()) == finished + 1, csv
        assert jsonl["rc"] == 0 and len(jsonl["out"].strip().splitlines()) == finished, jsonl
        assert view["rc"] == 0 and (tmp_path / "out" / f"{name}.html").exists(), view
        assert compare["rc"] == 2 and "which no paper's published table covers" in compare["err"], compare
        assert view_beside["rc"] == 2 and view_beside["err"].count("\n") == 1, view_beside
        assert "give --out FILE" in view_beside["err"] and "Read-only file system" in view_beside["err"]
        assert resume["rc"] == 2 and resume["err"].count("\n") == 1, resume  # one line: it is read-only here
        assert "it is read-only here" in resume["err"] and "copy it to a folder you can write" in resume["err"]
        assert new["rc"] == 2 and new["err"] == (f"cubebench: error: --out {name}/new.sqlite: cannot write in {name}: "
                                                 "it is read-only here\n"), new
        for result in (report, csv, jsonl, view, compare, view_beside, resume, new):
            assert "damaged" not in result["err"] and "Traceback" not in result["err"], result
        assert sorted(p.name for p in (tmp_path / name).iterdir()) == before[name]  # nothing written beside it


def test_a_full_disk_says_so_and_the_run_resumes_once_there_is_room(partial: Path, tmp_path: Path) -> None:
    run = ["run", "--resume", "disk/run.sqlite", "--no-progress", "--quiet"]
    script = ("mkdir -p disk && mount -t tmpfs -o size=1m tmpfs disk && cp run.sqlite disk/\n"
              # leave about 150 KB: room to open the run, not to store 11 more episodes with their WAL
              "dd if=/dev/zero of=disk/filler bs=1k count=874 2>/dev/null || true")
    _copy(partial, tmp_path)
    new = ["run", "--suite", "smoke", "--tiers", "visual", "--agent", "solver", "--out", "disk/new.sqlite", "--quiet"]
    full, report_full, created, listed, resumed, report = _commands(
        script, [run, ["report", "disk/run.sqlite"], new, ["list", "disk"], ["remove", "disk/filler"], run,
                 ["report", "disk/run.sqlite"]], tmp_path)
    lines = full["err"].strip().splitlines()
    assert full["rc"] == 1 and len(lines) == 1, full
    assert lines[0].startswith("cubebench: error: disk full:") and "damaged" not in lines[0]
    assert "the run is intact" in lines[0] and "cubebench run --resume disk/run.sqlite" in lines[0]
    assert report_full["rc"] == 0 and "episodes:" in report_full["out"], report_full  # a reader reads it on a full disk
    assert created["rc"] == 1, created
    assert created["err"].strip().splitlines()[-1] == ("cubebench: error: disk full: cannot create disk/new.sqlite: "
                                                       "nothing was written; free some space and start the run again")
    assert [name for name in listed["files"] if "new" in name] == []  # no half-made run, no leftovers
    # room is made (the filler removed): the run resumes to the end, every record intact
    assert resumed["rc"] == 0 and "complete" in resumed["err"], resumed
    assert report["rc"] == 0 and "episodes: 12 of 12 finished" in report["out"] and "pass rate: 1.00" in report["out"]


def test_a_store_that_cannot_grow_raises_store_full_and_keeps_every_commit(partial: Path, tmp_path: Path) -> None:
    """SQLite's own 'database or disk is full' (a page limit stands in for the disk): the store's error says so."""
    db = _copy(partial, tmp_path)
    with open_run(db) as store:
        spec = store.pending()[0]
        key, record = next(store.records())
        pages = store.db.execute("PRAGMA page_count").fetchone()[0]
        store.db.execute(f"PRAGMA max_page_count = {pages}")
        with pytest.raises(StoreFull, match=r"disk full: cannot write .*the run is intact.*--resume"):
            for _ in range(50):  # each record adds pages: one of them cannot be stored
                store.add_episode(spec, record)
                spec = store.pending()[0]
    with open_run(db) as store:
        assert store.db.execute("PRAGMA integrity_check").fetchone()[0] == "ok" and not store.damaged()


# --- a run written by a newer cubebench ---------------------------------------------------------------------
NEWER = {
    "protocol": (lambda db: run_sql(db, ("INSERT OR REPLACE INTO meta VALUES ('protocol', '\"tournaments\"')",)),
                 "a run of protocol 'tournaments'"),
    "plan-field": (lambda db: run_sql(db, ("UPDATE plan SET spec = json_set(spec, '$.budget_profile', 'strict') "
                                        "WHERE key = ?", (KEY,))), "budget_profile"),
    "record-field": (lambda db: edit_record(db, KEY, lambda d: d.update(thinking_tokens=12)), "thinking_tokens"),
    "step-field": (lambda db: edit_record(db, KEY, lambda d: d["steps"][0].update(thought="t")), "thought"),
    "status": (lambda db: edit_record(db, KEY, lambda d: d.update(status="timeout"), status="timeout"), "'timeout'"),
    "store-schema": (lambda db: run_sql(db, ("UPDATE meta SET value = '3' WHERE key = 'schema_version'",)),
                     "store schema 3 (this version reads 1 to 2)"),
}


@pytest.mark.parametrize("case", list(NEWER))
def test_a_run_from_a_newer_version_says_so_and_is_never_altered(reference: Path, tmp_path: Path, capsys,
                                                                 case: str) -> None:
    db = _copy(reference, tmp_path)
    change, what = NEWER[case]
    change(db)
    run_sql(db, ("UPDATE meta SET value = json_set(value, '$.cubebench', '9.9.9') WHERE key = 'versions'",))
    digest = _digest(db)
    capsys.readouterr()
    for argv in (["report", str(db)], ["export", str(db), "--format", "csv"], ["view", str(db), "--out",
                 str(tmp_path / "v.html")], ["run", "--resume", str(db), "--no-progress", "--quiet"],
                 ["run", "--resume", str(db), "--retry-errors", "--no-progress", "--quiet"]):
        assert main(argv) == 2, argv
        out, err = capsys.readouterr()
        lines = err.strip().splitlines()
        assert len(lines) == 1 and out == "", (argv, err)
        assert what in lines[0] and f"this cubebench ({__version__}) does not know" in lines[0], lines[0]
        assert "made by cubebench 9.9.9" in lines[0] and "damaged" not in lines[0], lines[0]
        assert _digest(db) == digest and not list(tmp_path.glob("run.sqlite-*")), argv  # never altered
    with pytest.raises(StoreNewer):  # the Python API too
        open_run(db)


def test_a_configuration_from_a_newer_version_is_read_but_not_resumed(reference: Path, tmp_path: Path,
                                                                       capsys) -> None:
    db = _copy(reference, tmp_path)
    run_sql(db, ("UPDATE meta SET value = json_set(value, '$.agent.reasoning_effort', 'high') WHERE key = 'config'",),
         ("DELETE FROM episodes WHERE key = ?", (KEY,)),
         ("UPDATE meta SET value = json_set(value, '$.cubebench', '9.9.9') WHERE key = 'versions'",))
    digest = _digest(db)
    assert main(["report", str(db)]) == 0  # a reader needs no more of the configuration than it knows
    capsys.readouterr()
    assert main(["run", "--resume", str(db), "--no-progress", "--quiet"]) == 2
    line = capsys.readouterr().err.strip()
    assert "\n" not in line and "configuration field(s) agent.reasoning_effort" in line and "damaged" not in line
    assert _digest(db) == digest


# --- a run written before the store named its columns for every protocol (store schema 1) -------------------
def _as_schema_1(db: Path) -> None:
    """``db`` as a cubebench before store schema 2 wrote it: the same tables, two summary columns named for episodes."""
    run_sql(db, ("ALTER TABLE episodes RENAME COLUMN part TO tier",), ("ALTER TABLE episodes RENAME COLUMN variant TO reward",),
            ("UPDATE meta SET value = '1' WHERE key = 'schema_version'",))


def test_a_run_of_store_schema_1_reports_exports_and_resumes_as_it_is(partial: Path, tmp_path: Path, capsys) -> None:
    old, new = _copy(partial, tmp_path / "old"), _copy(partial, tmp_path / "new")
    _as_schema_1(old)
    capsys.readouterr()
    shown = []
    for db in (old, new):
        assert main(["report", str(db)]) == 0
        assert main(["export", str(db), "--format", "csv"]) == 0
        shown.append(capsys.readouterr().out.replace(str(db), "RUN"))
    assert shown[0] == shown[1] and "key,tier,depth,instance,reward" in shown[0]  # the same report and CSV
    with open_run(old) as store:
        assert [(r.tier, r.reward) for r in store.rows()] == [("symbolic", "none")]
    for db in (old, new):
        assert main(["run", "--resume", str(db), "--no-progress", "--quiet"]) == 0
    with open_run(old) as a, open_run(new) as b:
        assert [r.key for r in a.rows()] == [r.key for r in b.rows()] and len(a.rows()) == 12
        assert [(x.tier, x.depth, x.reward, x.setting, x.solved) for x in a.rows()] == \
            [(x.tier, x.depth, x.reward, x.setting, x.solved) for x in b.rows()]
        assert a.get_meta("schema_version") == 1  # read and resumed as it is, never rewritten
        columns = {row[1] for row in a.db.execute("PRAGMA table_info(episodes)")}
        assert {"tier", "reward"} <= columns and not {"part", "variant"} & columns


def test_a_store_schema_that_is_not_a_whole_number_is_one_line(reference: Path, tmp_path: Path, capsys) -> None:
    db = _copy(reference, tmp_path)
    run_sql(db, ("UPDATE meta SET value = 'true' WHERE key = 'schema_version'",))
    capsys.readouterr()
    assert main(["report", str(db)]) == 2
    line = capsys.readouterr().err.strip()
    assert "\n" not in line and "store schema true (a boolean), this cubebench reads 1 to 2" in line


def _one_line_on(argv_list: list[list[str]], capsys) -> list[str]:
    """Each command's exit status 2 with nothing on stdout and one line on stderr: the lines."""
    lines = []
    for argv in argv_list:
        assert main(argv) == 2, argv
        out, err = capsys.readouterr()
        assert len(err.strip().splitlines()) == 1 and out == "", (argv, err)
        lines.append(err.strip())
    return lines


@pytest.mark.parametrize("value, shown", [("'\"2\"'", 'store schema "2" (a string)'), ("'2.5'", "store schema 2.5 (a number)"),
                                          (None, "no store schema (its 'schema_version' entry is missing)")])
def test_a_store_schema_is_shown_as_the_file_holds_it(reference: Path, tmp_path: Path, capsys, value, shown) -> None:
    db = _copy(reference, tmp_path)
    run_sql(db, (f"UPDATE meta SET value = {value} WHERE key = 'schema_version'",) if value else
            ("DELETE FROM meta WHERE key = 'schema_version'",))
    capsys.readouterr()
    assert main(["report", str(db)]) == 2
    line = capsys.readouterr().err.strip()
    assert "\n" not in line and f"{shown}, this cubebench reads 1 to 2" in line, line


# --- a run file edited by hand (or damaged): one line on every command, never blamed on a newer cubebench -----
def _every_command(db: Path, reference: Path, tmp_path: Path) -> list[list[str]]:
    return [["report", str(db)], ["view", str(db), "--out", str(tmp_path / "v.html")],
            ["export", str(db), "--format", "csv"], ["compare", str(db), str(reference)],
            ["run", "--resume", str(db), "--no-progress", "--quiet"]]


@pytest.mark.parametrize("value, shown", [("null", "null"), ('["episodes"]', '["episodes"] (an array)'),
                                          ('{"name": "episodes"}', '{"name": "episodes"} (an object)'),
                                          ("7", "7")])
def test_a_protocol_entry_that_is_no_name_is_one_line_on_every_command(reference: Path, tmp_path: Path, capsys,
                                                                       value: str, shown: str) -> None:
    db = _copy(reference, tmp_path)
    run_sql(db, ("INSERT OR REPLACE INTO meta VALUES ('protocol', ?)", (value,)))
    digest = _digest(db)
    capsys.readouterr()
    for line in _one_line_on(_every_command(db, reference, tmp_path), capsys):
        assert f"its 'protocol' entry is {shown}, not the name of a protocol" in line, line
        assert "newer" not in line
    assert _digest(db) == digest


@pytest.mark.parametrize("part", ["face-reconstruction", "observer-actor", "vertex"])
def test_a_summary_row_naming_another_part_is_damaged_and_played_again(reference: Path, tmp_path: Path, capsys,
                                                                       part: str) -> None:
    """``face-reconstruction`` is a question test, ``observer-actor`` a game: parts of other protocols; ``vertex`` a
    tier of this protocol the plan row does not name.  Every reader says so in one line; a resume plays it again."""
    db = _copy(reference, tmp_path)
    run_sql(db, ("UPDATE episodes SET part = ? WHERE key = ?", (part, KEY)))
    capsys.readouterr()
    for line in _one_line_on(_every_command(db, reference, tmp_path)[:-1], capsys):
        assert f"{KEY}: the summary row and its plan disagree: part {part!r} (planned 'symbolic')" in line, line
    assert main(["run", "--resume", str(db), "--no-progress", "--quiet"]) == 0
    with open_run(db) as store:
        assert store.damaged_count() == 1 and {r.part for r in store.rows()} == {"symbolic"} and len(store.rows()) == 6
    assert main(["report", str(db)]) == 0


@pytest.mark.parametrize("part", ["face-reconstruction", "observer-actor", "net"])
def test_a_plan_row_naming_another_part_is_one_line_on_every_command(reference: Path, tmp_path: Path, capsys,
                                                                     part: str) -> None:
    """A plan row whose tier is another protocol's part (or no tier) is refused where the plan is read: no
    command plays, reports or exports it, and the file is left as it was."""
    db = _copy(reference, tmp_path)
    run_sql(db, ("UPDATE plan SET spec = json_set(spec, '$.tier', ?) WHERE key = ?", (part, KEY)))
    digest = _digest(db)
    capsys.readouterr()
    for line in _one_line_on(_every_command(db, reference, tmp_path), capsys):
        assert f"planned episode {KEY!r}: tier {part!r} is not an episode tier" in line, line
    assert _digest(db) == digest


EDITED = {k: NEWER[k] for k in ("protocol", "plan-field", "record-field", "status", "store-schema")}


@pytest.mark.parametrize("case", list(EDITED))
def test_an_edited_file_is_not_blamed_on_a_newer_cubebench(reference: Path, tmp_path: Path, capsys, case: str) -> None:
    """The same edits as a newer version's, in a run that says this version made it: no cubebench wrote them."""
    db = _copy(reference, tmp_path)
    change, what = EDITED[case]
    change(db)
    capsys.readouterr()
    assert main(["report", str(db)]) == 2
    out, err = capsys.readouterr()
    lines = err.strip().splitlines()
    assert len(lines) == 1 and out == "", err
    assert what in lines[0] and "newer cubebench" not in lines[0] and "read or resume it with that version" not in lines[0]
    assert f"made by cubebench {__version__}, which is not newer: the file was edited or damaged" in lines[0] or \
        "damaged episode record(s)" in lines[0], lines[0]
    if case in ("record-field", "status"):  # a record no version wrote is damaged: a resume plays it again
        assert main(["run", "--resume", str(db), "--no-progress", "--quiet"]) == 0
        with open_run(db) as store:
            assert store.damaged_count() == 1 and len(store.rows()) == PLANNED
